//! Small-scope enumeration (being written).
