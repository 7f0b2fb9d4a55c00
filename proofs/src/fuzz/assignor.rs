//! Fuzz target `assignor` (being built).
