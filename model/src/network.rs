//! The model's network: one channel per (member, direction), FIFO when ordered, a canonical
//! multiset when unordered.
//!
//! Member ids name the far end; the coordinator is the other end of every channel (requests are
//! addressed to an epoch inside the message, and whichever coordinator epoch is current receives
//! them and fences stale ones, as a real broker answers `NotCoordinator`).

use rebalance::MemberId;
use rebalance::protocol::messages::{Request, Response};
use serde::{Deserialize, Serialize};

use crate::shared::Shared;

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

/// One channel's messages, shared between states until a step changes it (a step touches one
/// or two channels, so the others are neither copied nor re-hashed).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Channel {
    id: ChannelId,
    queue: Vec<Payload>,
}

/// Every message in flight. Channels are kept sorted by id and empty ones are removed, so equal
/// contents give equal values (and equal hashes).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Network {
    channels: Vec<Shared<Channel>>,
    ordered: bool,
}

impl Network {
    /// An empty network; `ordered` picks FIFO channels, else canonical multisets.
    #[must_use]
    pub fn new(ordered: bool) -> Network {
        Network {
            channels: Vec::new(),
            ordered,
        }
    }

    /// Where the channel to or from `member` is, or would be inserted.
    fn find(&self, member: &MemberId, direction: Direction) -> Result<usize, usize> {
        self.channels
            .binary_search_by(|c| (&c.id.0, c.id.1).cmp(&(member, direction)))
    }

    /// Sends a message. On an unordered network it is kept in sorted position, so the channel
    /// is a canonical multiset and delivery order is the model's choice.
    pub fn send(&mut self, channel: ChannelId, payload: Payload) {
        let at = match self.find(&channel.0, channel.1) {
            Ok(at) => at,
            Err(at) => {
                self.channels.insert(
                    at,
                    Shared::new(Channel {
                        id: channel,
                        queue: Vec::new(),
                    }),
                );
                at
            }
        };
        let queue = &mut self.channels[at].make_mut().queue;
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
        self.channels.iter().flat_map(move |channel| {
            let queue = &channel.queue;
            queue.iter().enumerate().filter_map(move |(i, p)| {
                let first_of_kind = if ordered {
                    i == 0
                } else {
                    i == 0 || queue[i - 1] != *p
                };
                first_of_kind.then_some((&channel.id, i, p))
            })
        })
    }

    /// The message at `index` of the channel to or from `member`, if there is one.
    #[must_use]
    pub fn get(&self, member: &MemberId, direction: Direction, index: usize) -> Option<&Payload> {
        let at = self.find(member, direction).ok()?;
        self.channels[at].queue.get(index)
    }

    /// Takes the message at `index` of the channel to or from `member` out of the network.
    pub fn take(
        &mut self,
        member: &MemberId,
        direction: Direction,
        index: usize,
    ) -> Option<Payload> {
        let at = self.find(member, direction).ok()?;
        if index >= self.channels[at].queue.len() {
            return None;
        }
        if self.channels[at].queue.len() == 1 {
            // The last message: drop the channel without copying it.
            let mut channel = self.channels.remove(at);
            return Some(match channel.get_mut() {
                Some(c) => c.queue.remove(index),
                None => channel.queue[index].clone(),
            });
        }
        Some(self.channels[at].make_mut().queue.remove(index))
    }

    /// Drops every message in one channel (a member crashed or was cut off).
    pub fn purge(&mut self, channel: &ChannelId) {
        if let Ok(at) = self.find(&channel.0, channel.1) {
            self.channels.remove(at);
        }
    }

    /// Whether anything is in flight to or from this member.
    #[must_use]
    pub fn has_traffic(&self, member: &MemberId) -> bool {
        // A handful of channels: a scan beats two searches.
        self.channels.iter().any(|c| c.id.0 == *member)
    }

    /// Every message in flight.
    pub fn iter(&self) -> impl Iterator<Item = (&ChannelId, &Payload)> {
        self.channels
            .iter()
            .flat_map(|c| c.queue.iter().map(move |p| (&c.id, p)))
    }

    /// Number of messages in flight.
    #[must_use]
    pub fn len(&self) -> usize {
        self.channels.iter().map(|c| c.queue.len()).sum()
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
        assert_eq!(ordered.take(&ch.0, ch.1, 0), Some(find(2)));

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
        a.take(&ch.0, ch.1, 0);
        a.take(&ch.0, ch.1, 0);
        a.take(&ch.0, ch.1, 0);
        assert!(a.is_empty());
        assert_eq!(a, Network::new(false));
    }
}
