//! The leader role of a member: decode the subscriptions, run the policy, encode assignments.

use std::collections::BTreeMap;

use super::{Member, MemberEvent};
use crate::ids::{Generation, MemberId};
use crate::protocol::embedded::{self, SubscriptionInfo};
use crate::protocol::leader::{self, LeaderInput};

impl Member {
    /// Computes every member's encoded assignment for `generation` and keeps the new leader
    /// memory. A member whose metadata cannot be decoded is treated as subscribing to nothing
    /// (it gets an empty assignment rather than blocking the group).
    ///
    /// # Errors
    /// The assignor's refusal, as text.
    pub(super) fn lead(
        &mut self,
        now_ms: u64,
        generation: Generation,
        metadata: &BTreeMap<MemberId, Vec<u8>>,
    ) -> Result<BTreeMap<MemberId, Vec<u8>>, String> {
        let mut members: BTreeMap<MemberId, SubscriptionInfo> = BTreeMap::new();
        for (id, bytes) in metadata {
            let sub = embedded::decode_subscription(bytes).unwrap_or_else(|e| {
                self.events
                    .push_back(MemberEvent::Malformed(format!("from member {id}: {e}")));
                SubscriptionInfo::default()
            });
            members.insert(id.clone(), sub);
        }
        let input = LeaderInput {
            generation,
            now_ms,
            members: &members,
            topics: &self.topics,
            protocol: self.config.protocol,
            assignor: self.config.assignor.get(),
            memory: self.memory.as_ref(),
            #[cfg(feature = "faults")]
            faults: &self.config.faults,
        };
        let output = leader::lead(&input).map_err(|e| e.to_string())?;
        self.memory = Some(output.memory);
        let format = self.config.protocol.assignment_format();
        let mut encoded = BTreeMap::new();
        for (id, a) in &output.assignments {
            // An assignment the codec cannot write is reported and sent empty.
            let bytes = embedded::encode_assignment(a, format).unwrap_or_else(|e| {
                self.events
                    .push_back(MemberEvent::Malformed(format!("for member {id}: {e}")));
                Vec::new()
            });
            encoded.insert(id.clone(), bytes);
        }
        Ok(encoded)
    }
}
