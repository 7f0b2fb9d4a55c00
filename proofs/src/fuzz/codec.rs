//! Fuzz targets `codec_decode` and `codec_roundtrip` (being built).
