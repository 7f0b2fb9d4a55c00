//! The embedded-protocol wire codec (Subscription, Assignment, CooperativeAssignment).
