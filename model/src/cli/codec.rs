//! `rebalance codec`: decode embedded-protocol bytes to JSON, encode JSON to hex.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use rebalance::codec::hex::{from_hex, to_hex};
use rebalance::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, CooperativeAssignment,
    EmbeddedMessage,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Failure, read_input, read_text};

/// Arguments of `rebalance codec`.
#[derive(clap::Args)]
pub struct CodecArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Read a message's bytes (stdin or FILE) and print it as JSON.
    Decode {
        /// Which message the bytes hold.
        #[arg(long, value_enum)]
        message: Message,
        /// The input is hex text (whitespace allowed) rather than raw bytes.
        #[arg(long)]
        hex: bool,
        /// Read this file instead of stdin.
        file: Option<PathBuf>,
    },
    /// Read a message as JSON (stdin or FILE) and print its bytes as lowercase hex.
    Encode {
        /// Which message the JSON describes.
        #[arg(long, value_enum)]
        message: Message,
        /// Read this file instead of stdin.
        file: Option<PathBuf>,
    },
}

/// The embedded-protocol messages.
#[derive(Clone, Copy, ValueEnum)]
enum Message {
    /// The consumer protocol's Subscription (v0–3).
    Subscription,
    /// The consumer protocol's Assignment (v0–3).
    Assignment,
    /// The incremental cooperative Assignment (v0–1).
    CooperativeAssignment,
}

/// Runs `rebalance codec`.
pub fn run(args: CodecArgs) -> Result<ExitCode, Failure> {
    let out = match args.action {
        Action::Decode { message, hex, file } => {
            let bytes = if hex {
                let text = read_text(file.as_deref())?;
                from_hex(&text, true)
                    .map_err(|e| Failure::input(format!("input is not hex: {e}")))?
            } else {
                read_input(file.as_deref())?
            };
            match message {
                Message::Subscription => decode::<ConsumerProtocolSubscription>(&bytes)?,
                Message::Assignment => decode::<ConsumerProtocolAssignment>(&bytes)?,
                Message::CooperativeAssignment => decode::<CooperativeAssignment>(&bytes)?,
            }
        }
        Action::Encode { message, file } => {
            let text = read_text(file.as_deref())?;
            match message {
                Message::Subscription => encode::<ConsumerProtocolSubscription>(&text)?,
                Message::Assignment => encode::<ConsumerProtocolAssignment>(&text)?,
                Message::CooperativeAssignment => encode::<CooperativeAssignment>(&text)?,
            }
        }
    };
    println!("{out}");
    Ok(ExitCode::SUCCESS)
}

fn decode<M: EmbeddedMessage + Serialize>(bytes: &[u8]) -> Result<String, Failure> {
    let message =
        M::decode(bytes).map_err(|e| Failure::input(format!("cannot decode {}: {e}", M::NAME)))?;
    serde_json::to_string(&message)
        .map_err(|e| Failure::input(format!("cannot print {} as JSON: {e}", M::NAME)))
}

fn encode<M: EmbeddedMessage + DeserializeOwned>(text: &str) -> Result<String, Failure> {
    let message: M = serde_json::from_str(text)
        .map_err(|e| Failure::input(format!("invalid {} JSON: {e}", M::NAME)))?;
    let bytes = message
        .encode()
        .map_err(|e| Failure::input(format!("cannot encode {}: {e}", M::NAME)))?;
    Ok(to_hex(&bytes))
}
