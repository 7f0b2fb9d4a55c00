//! The subcommands of the `rebalance` tool, one module each.

pub mod assign;
pub mod bench;
pub mod bench_codec;
pub mod check;
pub mod codec;
pub mod explore;
pub mod faults;
pub mod replay;
pub mod simulate;
pub mod verify;

use std::fmt::Display;
use std::io::Read;
use std::path::Path;

/// A failed command: the exit status and the one line printed on stderr.
#[derive(Debug)]
pub struct Failure {
    /// The process exit status (2: bad input or usage, 1: a property does not hold).
    pub code: u8,
    /// One readable line naming what went wrong.
    pub message: String,
}

impl Failure {
    /// Bad input (exit status 2).
    pub fn input(message: impl Display) -> Failure {
        Failure {
            code: 2,
            message: message.to_string(),
        }
    }

    /// A checked property does not hold (exit status 1).
    pub fn violated(message: impl Display) -> Failure {
        Failure {
            code: 1,
            message: message.to_string(),
        }
    }
}

/// Reads a whole input: the named file, or stdin for `-` or no file.
pub fn read_input(path: Option<&Path>) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    match path {
        Some(p) if p != Path::new("-") => {
            bytes = std::fs::read(p)
                .map_err(|e| Failure::input(format!("cannot read {}: {e}", p.display())))?;
        }
        _ => {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|e| Failure::input(format!("cannot read stdin: {e}")))?;
        }
    }
    Ok(bytes)
}

/// Reads a whole input as UTF-8 text (see [`read_input`]).
pub fn read_text(path: Option<&Path>) -> Result<String, Failure> {
    let bytes = read_input(path)?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::input(format!(
            "input is not UTF-8 at byte offset {}",
            e.utf8_error().valid_up_to()
        ))
    })
}
