//! Operator verbs that run in-process against the data directory: tokens,
//! compaction, healthcheck (users and teams are in `people.rs`). They work while the server runs (SQLite WAL lets them
//! write beside the server's writer; they wait on its locks, never break them).

use clap::{Args, Subcommand};

use super::{ConfigArgs, HealthcheckArgs, load_config};
use crate::app::serve::{BoundAddresses, addresses_path, prepare_main_db};
use crate::auth::{tokens, users};
use crate::config::{Config, Overrides};
use crate::db;

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token and print it once (only its hash is stored).
    Create {
        #[command(flatten)]
        config: ConfigArgs,
        /// The owner's e-mail address.
        #[arg(long)]
        user: String,
        /// Token kind: hook (365 days, the hook's ingest routes and OTLP) or otlp (365
        /// days, the OTLP routes only: for an agent's OpenTelemetry exporter).
        #[arg(long)]
        kind: String,
        /// A note to recognise the token by (e.g. the machine it is for).
        #[arg(long)]
        label: Option<String>,
        /// Make an OTLP token for a service account (a collector forwarding many
        /// people's exports) with this name: each record then counts as the person its
        /// exported user.email, user.account_uuid or user.id is mapped to in
        /// /admin/adapters; `--user` is the administrator responsible for it.
        #[arg(long, value_name = "NAME")]
        service_account: Option<String>,
        /// Make a hook token for a machine that runs agents for an evaluation harness
        /// (EVAL) or a CI job (CI): every event sent with it is stored under that run
        /// kind, whatever the event says, so its sessions never reach developer figures.
        #[arg(long, value_name = "EVAL|CI")]
        run_kind: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Compact partitions older than this many days (default: storage.compact_after_days).
    #[arg(long)]
    pub older_than_days: Option<i64>,
    /// Compact exactly this day's partition (YYYY-MM-DD), whatever its age.
    #[arg(long)]
    pub day: Option<String>,
}

/// `main.db`, migrated, opened for the side door (`db::side_door`): a command's writes
/// wait behind a running server's writer instead of failing on its lock.
pub fn open_main(config: &Config) -> anyhow::Result<rusqlite::Connection> {
    prepare_main_db(config)?;
    Ok(db::side_door::open(&config.main_db_path())?)
}

pub fn token(command: TokenCommand) -> anyhow::Result<i32> {
    match command {
        TokenCommand::Create { config, user, kind, label, service_account, run_kind } => {
            let kind =
                tokens::TokenKind::parse(&kind).filter(|kind| *kind != tokens::TokenKind::Refresh).ok_or_else(
                    || {
                        anyhow::anyhow!(
                            "token kind {kind:?} cannot be made here; expected: hook, otlp or eval (refresh tokens come from sign-in)"
                        )
                    },
                )?;
            let run_kind = match run_kind.as_deref().map(|text| text.trim().to_ascii_uppercase()) {
                None => None,
                Some(_) if kind != tokens::TokenKind::Hook => {
                    anyhow::bail!("--run-kind fixes a hook token's runs: use it with --kind hook")
                }
                Some(text) => match crate::model::RunKind::parse(&text) {
                    Some(kind @ (crate::model::RunKind::Eval | crate::model::RunKind::Ci)) => Some(kind),
                    _ => anyhow::bail!("--run-kind must be EVAL or CI, not {text:?}"),
                },
            };
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let owner = users::by_email(&conn, &user)?;
            if kind == tokens::TokenKind::Eval && owner.org_role != "EVAL_ENGINEER" {
                anyhow::bail!(
                    "{} is {}, not EVAL_ENGINEER; an eval token reads evaluation runs for an eval engineer",
                    owner.email,
                    owner.org_role
                );
            }
            let now_ms = crate::clock::system_now_ms();
            let token = match &service_account {
                None => db::side_door::write(&conn, |tx| -> anyhow::Result<_> {
                    let token = tokens::create(tx, &owner.id, kind, label.as_deref(), now_ms)?;
                    if let Some(run_kind) = run_kind {
                        tokens::fix_run_kind(tx, &token.id, run_kind)?;
                    }
                    Ok(token)
                })?,
                Some(name) => {
                    if kind != tokens::TokenKind::Otlp {
                        anyhow::bail!("--service-account makes an OTLP token: use it with --kind otlp");
                    }
                    let name = crate::auth::otlp_identities::service_name(name).map_err(|err| anyhow::anyhow!(err))?;
                    if owner.org_role != "ADMIN" {
                        anyhow::bail!(
                            "{} is not an administrator; a service account's token is an administrator's",
                            owner.email
                        );
                    }
                    db::side_door::write(&conn, |tx| -> anyhow::Result<_> {
                        Ok(crate::auth::otlp_identities::create_service_token(tx, &owner.id, &name, now_ms)?)
                    })?
                }
            };
            eprintln!(
                "created {}{}{} token {} for {}, expires {}; it is shown only now:",
                kind.as_str(),
                if service_account.is_some() { " service-account" } else { "" },
                run_kind.map(|kind| format!(" ({} runs only)", kind.as_str())).unwrap_or_default(),
                token.id,
                owner.email,
                crate::model::rfc3339_ms(token.expires_at_ms)
            );
            println!("{}", token.secret);
            Ok(0)
        }
    }
}

pub fn compact(args: &CompactArgs) -> anyhow::Result<i32> {
    let config = load_config(&args.config, Overrides::default())?;
    let store = crate::events::store::Store::at(&config.data_dir);
    let rewrite = store.rewriting("sightline compact")?;
    let reports = match &args.day {
        Some(text) => {
            let day = crate::events::partitions::Day::parse(text)
                .ok_or_else(|| anyhow::anyhow!("--day {text:?} is not YYYY-MM-DD"))?;
            if !crate::events::days::exists(&config.data_dir, day) {
                anyhow::bail!("no event partition for {day}");
            }
            vec![rewrite.compact(day, crate::clock::system_now_ms())?]
        }
        None => rewrite.compact_due(
            args.older_than_days.unwrap_or(config.storage.compact_after_days),
            crate::clock::system_now_ms(),
        )?,
    };
    for report in &reports {
        println!(
            "{}: {} rows, metadata {} -> {} bytes ({:.2}x), file {} -> {} bytes ({:.2}x)",
            report.day,
            report.rows_compressed,
            report.metadata_bytes_before,
            report.metadata_bytes_after,
            report.metadata_ratio(),
            report.file_bytes_before,
            report.file_bytes_after,
            report.file_ratio()
        );
    }
    if reports.is_empty() {
        println!("nothing to compact");
    }
    Ok(0)
}

/// Exit 0 when `/readyz` answers 200 within 5 seconds, 1 otherwise, with the
/// reason on stderr.
pub fn healthcheck(args: &HealthcheckArgs) -> anyhow::Result<i32> {
    let (url, own_listener) = match &args.url {
        Some(url) => (url.trim_end_matches('/').to_string(), false),
        None => {
            let config = load_config(&args.config, Overrides::default())?;
            let path = addresses_path(&config.data_dir);
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(err) => {
                    eprintln!("unhealthy: cannot read {}: {err} (is the server running?)", path.display());
                    return Ok(1);
                }
            };
            let bound: BoundAddresses = serde_json::from_str(&text)?;
            (format!("{}://{}", if bound.tls { "https" } else { "http" }, bound.ingest), true)
        }
    };
    // Asking its own listener (from addresses.json), the probe sends no credential and
    // reads only /readyz, and the certificate names the public host rather than the
    // address asked: it does not verify it. A --url given is verified as any client would.
    let tls = ureq::tls::TlsConfig::builder().disable_verification(own_listener).build();
    let agent = ureq::Agent::config_builder()
        .timeout_global(Some(std::time::Duration::from_secs(5)))
        .http_status_as_error(false)
        .tls_config(tls)
        .build()
        .new_agent();
    match agent.get(format!("{url}/readyz")).call() {
        Ok(response) if response.status() == 200 => {
            println!("healthy: {url}/readyz");
            Ok(0)
        }
        Ok(response) => {
            eprintln!("unhealthy: {url}/readyz answered {}", response.status());
            Ok(1)
        }
        Err(err) => {
            eprintln!("unhealthy: {url}/readyz: {err}");
            Ok(1)
        }
    }
}
