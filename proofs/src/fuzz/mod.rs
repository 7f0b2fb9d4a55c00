//! The bodies of the cargo-fuzz targets in `fuzz/`.
//!
//! Each target in `fuzz/fuzz_targets/` is a few lines that call one function here, so plain
//! `cargo test` replays the committed corpora and regressions through exactly the same code
//! without cargo-fuzz (see [`replay_dir`]).

pub mod assignor;
pub mod codec;

use std::path::{Path, PathBuf};

/// The `fuzz/` directory of this repository.
#[must_use]
pub fn fuzz_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("fuzz")
}

/// Feeds every committed input of `target` to `run`: the files of `fuzz/corpus/<target>/` and
/// `fuzz/regressions/<target>/`, in sorted path order. Returns how many inputs ran.
///
/// # Panics
/// If a directory exists but cannot be read; `run` itself panics on a violated property, and
/// the panic names the file being replayed.
pub fn replay_dir(target: &str, mut run: impl FnMut(&[u8])) -> usize {
    let mut files = Vec::new();
    for kind in ["corpus", "regressions"] {
        let dir = fuzz_root().join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
                .path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    for path in &files {
        let bytes = std::fs::read(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&bytes)));
        if let Err(panic) = result {
            eprintln!("fuzz replay failed on {}", path.display());
            std::panic::resume_unwind(panic);
        }
    }
    files.len()
}
