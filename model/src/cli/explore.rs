//! `rebalance explore`: serves stateright's Explorer (a web UI to walk the model's states) on
//! `127.0.0.1:PORT` until interrupted. Endpoints: `GET /` (the page), `GET /.status`,
//! `GET /.states/FP/FP/...` (the steps after a path of state fingerprints; `/.states` alone gives
//! the initial states). The Explorer does not use symmetry reduction.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::process::ExitCode;

use rebalance_model::ProtocolKind;
use stateright::Model;

use super::Failure;
use super::check::{ConfigArgs, config_for, parse};

/// Arguments of `rebalance explore`.
#[derive(clap::Args)]
pub struct ExploreArgs {
    /// Port on 127.0.0.1.
    #[arg(long, default_value_t = 3000)]
    port: u16,
    #[command(flatten)]
    config: ConfigArgs,
}

/// Runs `rebalance explore` (blocks while serving).
pub fn run(args: ExploreArgs) -> Result<ExitCode, Failure> {
    let protocol: ProtocolKind = if args.config.protocol == "all" {
        ProtocolKind::Cooperative
    } else {
        parse(&args.config.protocol)?
    };
    let model = config_for(&args.config, protocol)?
        .into_model()
        .map_err(Failure::input)?;
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    // Stateright's server panics on a busy port: check first so the user gets one clear line.
    drop(
        TcpListener::bind(address)
            .map_err(|e| Failure::input(format!("cannot listen on {address}: {e}")))?,
    );
    eprintln!("serving the Explorer for the {protocol} model on http://{address}/");
    let _checker = model.checker().serve(address);
    Ok(ExitCode::SUCCESS)
}
