//! Laws of the embedded-protocol codec (being built).
