//! Independent checkers of the assignor objectives (being built).
