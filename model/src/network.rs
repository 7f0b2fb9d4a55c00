//! The model's network: one channel per (member, direction), FIFO when ordered, a canonical
//! multiset when unordered.
//!
//! Member ids name the far end; the coordinator is the other end of every channel (requests are
//! addressed to an epoch inside the message, and whichever coordinator epoch is current receives
//! them and fences stale ones, as a real broker answers `NotCoordinator`).

use std::collections::BTreeMap;

use rebalance::MemberId;
use rebalance::protocol::messages::{Request, Response};
use serde::{Deserialize, Serialize};

/// Which way a channel carries messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Member to coordinator: requests.
    ToCoordinator,
    /// Coordinator to member: responses.
    ToMember,
}

/// A message in flight.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Payload {
    /// A request from the channel's member.
    Request(Request),
    /// A response to the channel's member.
    Response(Response),
}

impl Payload {
    /// Whether this is heartbeat traffic (a Heartbeat request, or a successful Heartbeat
    /// response): what a quiescent group still exchanges.
    #[must_use]
    pub fn is_heartbeat(&self) -> bool {
        match self {
            Payload::Request(Request::Heartbeat { .. }) => true,
            Payload::Response(Response::Heartbeat { result, .. }) => result.is_ok(),
            _ => false,
        }
    }
}

/// The channel key: the member at the far end and the direction.
pub type ChannelId = (MemberId, Direction);

/// Every message in flight. Empty channels are removed, so equal contents give equal values.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Network {
    channels: BTreeMap<ChannelId, Vec<Payload>>,
    ordered: bool,
}

impl Network {
    /// An empty network; `ordered` picks FIFO channels, else canonical multisets.
    #[must_use]
    pub fn new(ordered: bool) -> Network {
        Network {
            channels: BTreeMap::new(),
            ordered,
        }
    }

    /// Sends a message. On an unordered network it is kept in sorted position, so the channel
    /// is a canonical multiset and delivery order is the model's choice.
    pub fn send(&mut self, channel: ChannelId, payload: Payload) {
        let queue = self.channels.entry(channel).or_default();
        if self.ordered {
            queue.push(payload);
        } else {
            let at = queue.partition_point(|p| p <= &payload);
            queue.insert(at, payload);
        }
    }

    /// The messages deliverable next: `(channel, index)` for the head of every FIFO channel,
    /// or for each distinct message of an unordered one.
    pub fn deliverable(&self) -> impl Iterator<Item = (&ChannelId, usize, &Payload)> {
        let ordered = self.ordered;
        self.channels.iter().flat_map(move |(id, queue)| {
            queue.iter().enumerate().filter_map(move |(i, p)| {
                let first_of_kind = if ordered {
                    i == 0
                } else {
                    i == 0 || queue[i - 1] != *p
                };
                first_of_kind.then_some((id, i, p))
            })
        })
    }

    /// The message at `index` of a channel, if there is one.
    #[must_use]
    pub fn get(&self, channel: &ChannelId, index: usize) -> Option<&Payload> {
        self.channels.get(channel).and_then(|q| q.get(index))
    }

    /// Takes the message at `index` of a channel out of the network.
    pub fn take(&mut self, channel: &ChannelId, index: usize) -> Option<Payload> {
        let queue = self.channels.get_mut(channel)?;
        if index >= queue.len() {
            return None;
        }
        let payload = queue.remove(index);
        if queue.is_empty() {
            self.channels.remove(channel);
        }
        Some(payload)
    }

    /// Drops every message in one channel (a member crashed or was cut off).
    pub fn purge(&mut self, channel: &ChannelId) {
        self.channels.remove(channel);
    }

    /// Whether anything is in flight to or from this member.
    #[must_use]
    pub fn has_traffic(&self, member: &MemberId) -> bool {
        // A handful of channels: a scan beats building the two keys.
        self.channels.keys().any(|(m, _)| m == member)
    }

    /// Every message in flight.
    pub fn iter(&self) -> impl Iterator<Item = (&ChannelId, &Payload)> {
        self.channels
            .iter()
            .flat_map(|(id, q)| q.iter().map(move |p| (id, p)))
    }

    /// Number of messages in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.channels.values().map(Vec::len).sum()
    }

    /// Whether nothing is in flight.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.channels.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rebalance::CoordinatorEpoch;

    fn find(e: u32) -> Payload {
        Payload::Request(Request::FindCoordinator {
            epoch: CoordinatorEpoch(e),
        })
    }

    #[test]
    fn ordered_delivers_heads_only_and_unordered_is_canonical() {
        let ch: ChannelId = (MemberId::from("m0"), Direction::ToCoordinator);
        let mut ordered = Network::new(true);
        ordered.send(ch.clone(), find(2));
        ordered.send(ch.clone(), find(1));
        assert_eq!(ordered.deliverable().count(), 1);
        assert_eq!(ordered.take(&ch, 0), Some(find(2)));

        let mut a = Network::new(false);
        let mut b = Network::new(false);
        a.send(ch.clone(), find(2));
        a.send(ch.clone(), find(1));
        a.send(ch.clone(), find(1));
        b.send(ch.clone(), find(1));
        b.send(ch.clone(), find(2));
        b.send(ch.clone(), find(1));
        assert_eq!(a, b);
        // Two distinct messages are deliverable (the duplicate is not a separate choice).
        assert_eq!(a.deliverable().count(), 2);
        a.take(&ch, 0);
        a.take(&ch, 0);
        a.take(&ch, 0);
        assert!(a.is_empty());
        assert_eq!(a, Network::new(false));
    }
}
