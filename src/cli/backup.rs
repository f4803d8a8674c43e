//! `sightline backup` and `sightline restore` (docs/operations.md, "Backup and restore"):
//! the operator's side of `crate::backup`. A backup runs beside a running server; a
//! restore writes only into an empty data directory.

use std::path::PathBuf;

use clap::Args;

use super::operator::open_main;
use super::{ConfigArgs, load_config};
use crate::backup::{self, history, restore};
use crate::config::Overrides;

#[derive(Debug, Args)]
pub struct BackupArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// The directory of backups (default: backup.dir); the backup is a new dated
    /// directory in it.
    #[arg(long)]
    pub to: Option<PathBuf>,
    /// Complete backups to keep there (default: backup.keep).
    #[arg(long)]
    pub keep: Option<usize>,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// A backup, or a directory of backups (its newest complete one).
    #[arg(long)]
    pub from: PathBuf,
    /// Verify the backup (sizes, SHA-256, SQLite's integrity check) and write nothing.
    #[arg(long)]
    pub check: bool,
}

pub fn backup(args: &BackupArgs) -> anyhow::Result<i32> {
    let config = load_config(&args.config, Overrides::default())?;
    crate::logging::init(&config.log);
    let options = backup::Options::configured(&config, args.to.clone(), args.keep)?;
    let conn = open_main(&config)?;
    let taken = backup::take(&config.data_dir, &options, &crate::clock::system_now_ms)?;
    history::record(&conn, &history::Recorded::of(&taken))?;
    println!("backed up {} to {}", config.data_dir.display(), taken.dir.display());
    println!("{}", taken.summary());
    Ok(0)
}

pub fn restore(args: &RestoreArgs) -> anyhow::Result<i32> {
    if args.check {
        let checked = restore::check(&args.from)?;
        println!(
            "{} is whole: {} files, {} bytes, {} databases pass SQLite's integrity check; schema {}, taken {} by Sightline {}",
            checked.dir.display(),
            checked.manifest.files.len(),
            checked.manifest.total_bytes(),
            checked.databases,
            checked.manifest.schema_version,
            crate::model::rfc3339_ms(checked.manifest.started_at_ms),
            checked.manifest.sightline_version
        );
        return Ok(0);
    }
    let config = load_config(&args.config, Overrides::default())?;
    let restored = restore::restore(&args.from, &config.data_dir)?;
    println!(
        "restored {} files ({} bytes) from {} into {}",
        restored.files,
        restored.bytes,
        restored.from.display(),
        config.data_dir.display()
    );
    println!(
        "the backup was taken {}; the index: {}",
        crate::model::rfc3339_ms(restored.manifest.started_at_ms),
        restored.manifest.index
    );
    if let Some(config_file) = restored.manifest.files.iter().find(|e| e.kind == backup::manifest::Kind::Config) {
        println!(
            "the configuration in force then is {}; compare it with yours before you start the server",
            restored.from.join(&config_file.path).display()
        );
    }
    println!("start the server: sightline serve --data-dir {}", config.data_dir.display());
    Ok(0)
}
