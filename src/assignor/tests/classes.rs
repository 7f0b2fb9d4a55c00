//! Partition classes: every partition of a subscribed topic in exactly one class, classes in
//! key order, each class's partitions ascending and sharing the class's previous owner.

use super::super::claims::previous_owners;
use super::super::classes::Classes;
use super::super::problem::Problem;
use super::*;

/// Checks the classes of `problem` against the previous owners they were built from; names
/// the first broken property.
fn check(
    problem: &Problem<'_>,
    owners: &[Vec<(i32, u32)>],
    classes: &Classes,
) -> Result<(), String> {
    let mut previous: Option<(u32, &[u32], Option<u32>)> = None;
    let mut seen: Vec<Vec<bool>> = problem
        .topics
        .iter()
        .map(|t| vec![false; t.partitions as usize])
        .collect();
    for class in &classes.classes {
        let t = class.topic;
        let parts = classes.partitions(class);
        if parts.is_empty() || !parts.is_sorted() {
            return Err(format!("topic {t}: a class is empty or unsorted"));
        }
        let key = (t, class.racks.as_slice(), class.owner);
        if previous.is_some_and(|p| p >= key) {
            return Err(format!("topic {t}: classes out of key order"));
        }
        previous = Some(key);
        for &p in parts {
            let owner = owners[t as usize]
                .binary_search_by_key(&p, |&(q, _)| q)
                .ok()
                .map(|i| owners[t as usize][i].1);
            if owner != class.owner {
                return Err(format!(
                    "topic {t} partition {p}: owner differs from its class's"
                ));
            }
            if std::mem::replace(&mut seen[t as usize][p as usize], true) {
                return Err(format!("topic {t} partition {p}: in two classes"));
            }
        }
    }
    for (t, seen) in seen.iter().enumerate() {
        let subscribed = !problem.subscribers[t].is_empty();
        if let Some(p) = seen.iter().position(|&s| s != subscribed) {
            return Err(format!("topic {t} partition {p}: classed {}", !subscribed));
        }
    }
    Ok(())
}

#[test]
fn classes_cover_every_subscribed_partition_once_in_key_order() {
    let mut rng = Rng(0x636c_6173_7365_7321);
    let mut broken = 0;
    for _ in 0..300 {
        let spec = random_spec(&mut rng, 40);
        let problem = Problem::new(&spec);
        let owners = previous_owners(&problem);
        let mut classes = Classes::new(&problem, spec.rack_aware, &owners);
        assert_eq!(check(&problem, &owners, &classes), Ok(()));
        // The check fails once a class loses its last partition to nobody.
        if let Some(class) = classes.classes.last_mut() {
            class.partitions.end -= 1;
            assert!(check(&problem, &owners, &classes).is_err());
            broken += 1;
        }
    }
    assert!(broken > 100, "too few groups with classes: {broken}");
}
