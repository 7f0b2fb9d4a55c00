//! Rows of different lengths kept in one buffer: a [`Proposal`](super::Proposal)'s
//! subscribers and counts per topic, two allocations for a component instead of two per
//! topic (a full assignment of many small topics spent more on those than on choosing).

use std::ops::{Index, IndexMut};

/// Rows of `T`, row r at `items[start[r]..start[r + 1]]`. Indexing gives a row as a slice;
/// iteration goes over the rows in order.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Ragged<T> {
    /// Every row's items, row after row.
    items: Vec<T>,
    /// Where each row starts in `items`; one more entry, the end (so never empty).
    start: Vec<usize>,
}

impl<T> Default for Ragged<T> {
    fn default() -> Self {
        Ragged::with_capacity(0, 0)
    }
}

impl<T> Ragged<T> {
    /// No rows yet, room for `rows` rows of `items` items in all.
    pub fn with_capacity(rows: usize, items: usize) -> Ragged<T> {
        let mut start = Vec::with_capacity(rows + 1);
        start.push(0);
        Ragged {
            items: Vec::with_capacity(items),
            start,
        }
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }

    /// Appends a row of the items of `row`, in order.
    pub fn push(&mut self, row: impl IntoIterator<Item = T>) {
        self.items.extend(row);
        self.start.push(self.items.len());
    }

    /// The rows, in order.
    pub fn iter(&self) -> Rows<'_, T> {
        Rows { of: self, next: 0 }
    }

    /// Rows of the same lengths as these, every item `value` (filled row by row: a short
    /// fill each costs less than one long one, per item).
    pub fn filled<U: Clone>(&self, value: U) -> Ragged<U> {
        let mut rows = Ragged::with_capacity(self.len(), self.items.len());
        for row in self {
            rows.push_filled(value.clone(), row.len());
        }
        rows
    }
}

impl<T: Clone> Ragged<T> {
    /// Appends a row of `len` copies of `value`.
    pub fn push_filled(&mut self, value: T, len: usize) {
        self.items.resize(self.items.len() + len, value);
        self.start.push(self.items.len());
    }

    /// Appends a row, a copy of `row`.
    pub fn push_slice(&mut self, row: &[T]) {
        self.items.extend_from_slice(row);
        self.start.push(self.items.len());
    }
}

impl<T> Index<usize> for Ragged<T> {
    type Output = [T];

    fn index(&self, row: usize) -> &[T] {
        &self.items[self.start[row]..self.start[row + 1]]
    }
}

impl<T> IndexMut<usize> for Ragged<T> {
    fn index_mut(&mut self, row: usize) -> &mut [T] {
        &mut self.items[self.start[row]..self.start[row + 1]]
    }
}

impl<T> From<Vec<Vec<T>>> for Ragged<T> {
    fn from(rows: Vec<Vec<T>>) -> Ragged<T> {
        let mut ragged = Ragged::with_capacity(rows.len(), rows.iter().map(Vec::len).sum());
        for row in rows {
            ragged.push(row);
        }
        ragged
    }
}

impl<T: PartialEq> PartialEq<Vec<Vec<T>>> for Ragged<T> {
    fn eq(&self, rows: &Vec<Vec<T>>) -> bool {
        self.len() == rows.len() && self.iter().zip(rows).all(|(a, b)| a == &b[..])
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Ragged<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The rows of a [`Ragged`], in order.
pub(crate) struct Rows<'a, T> {
    of: &'a Ragged<T>,
    next: usize,
}

impl<'a, T> Iterator for Rows<'a, T> {
    type Item = &'a [T];

    fn next(&mut self) -> Option<&'a [T]> {
        let &end = self.of.start.get(self.next + 1)?;
        let row = &self.of.items[self.of.start[self.next]..end];
        self.next += 1;
        Some(row)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.of.len() - self.next;
        (left, Some(left))
    }
}

impl<T> ExactSizeIterator for Rows<'_, T> {}

impl<'a, T> IntoIterator for &'a Ragged<T> {
    type Item = &'a [T];
    type IntoIter = Rows<'a, T>;

    fn into_iter(self) -> Rows<'a, T> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_their_lengths_and_order() {
        let mut r: Ragged<u32> = Ragged::default();
        assert_eq!(r.len(), 0);
        r.push([1, 2, 3]);
        r.push_slice(&[]);
        r.push([7, 7]);
        assert_eq!(r.len(), 3);
        assert_eq!(&r[0], &[1, 2, 3]);
        assert!(r[1].is_empty());
        r[2][1] = 8;
        assert_eq!(r, vec![vec![1, 2, 3], vec![], vec![7, 8]]);
        assert_eq!(r.iter().len(), 3);
        assert_eq!(r.filled(0u8), vec![vec![0, 0, 0], vec![], vec![0, 0]]);
        assert_eq!(Ragged::from(vec![vec![1, 2, 3], vec![], vec![7, 8]]), r);
        assert_eq!(format!("{r:?}"), "[[1, 2, 3], [], [7, 8]]");
    }
}
