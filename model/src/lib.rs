//! `rebalance-model`: the stateright model of the rebalance protocol, wrapping the core's real
//! coordinator and member state machines as actors.

pub mod scenario;
