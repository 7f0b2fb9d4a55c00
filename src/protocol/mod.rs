//! The rebalance protocol: coordinator, member and leader state machines.
