//! `sightline hook-binaries add <file>` and `list`: the operator's side of
//! `crate::hook_binaries`, placing a release's hook binary for another platform where
//! `GET /install.sh` hands it out.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{ConfigArgs, load_config};
use crate::config::Overrides;
use crate::hook_binaries;

#[derive(Debug, Subcommand)]
pub enum HookBinariesCommand {
    /// Check a hook binary from a release (its platform read from its header) and register
    /// it in <data_dir>/bin with its SHA-256, replacing that platform's one before.
    Add(AddArgs),
    /// The hook binary for each platform this server hands out, with its SHA-256.
    List(ConfigArgs),
}

#[derive(Debug, Args)]
pub struct AddArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// The binary, e.g. sightline-hook from a release's macos-aarch64 archive.
    pub file: PathBuf,
}

pub fn hook_binaries(command: HookBinariesCommand) -> anyhow::Result<i32> {
    match command {
        HookBinariesCommand::Add(args) => {
            let config = load_config(&args.config, Overrides::default())?;
            let added = hook_binaries::add(&config.data_dir, &args.file)?;
            let binary = &added.binary;
            println!("registered {} for {} (version {})", binary.path.display(), binary.platform, added.version);
            println!("sha256 {}", binary.sha256);
            if let Some(old) = added.replaced {
                println!("replaced the {} binary with sha256 {old}", binary.platform);
            }
            if added.version != env!("CARGO_PKG_VERSION") {
                println!(
                    "note: this server is version {}; the hook speaks the same wire contract across versions, \
                     but a release's hook and server are tested together",
                    env!("CARGO_PKG_VERSION")
                );
            }
            Ok(0)
        }
        HookBinariesCommand::List(args) => {
            let config = load_config(&args, Overrides::default())?;
            for binary in hook_binaries::list(&config.data_dir)? {
                let origin = if binary.registered { "registered" } else { "built in" };
                println!("{:<15} {}  {} ({origin})", binary.platform.to_string(), binary.sha256, binary.path.display());
            }
            Ok(0)
        }
    }
}
