//! `sightline serve`: one process, three listeners (ingest, web, GitHub app), the
//! event writer, the background checkpointer and the job scheduler (which also compacts);
//! and `sightline dashboard`, the eval service's own listener.
//!
//! Invariants: the server is ready only after `main.db` is migrated and the writer
//! has folded any commits a crash left unapplied; bound addresses (port 0 resolved)
//! are written to `<data_dir>/run/addresses.json` only once all three are bound; on
//! shutdown the listeners stop accepting and drain, then the writer commits what is
//! queued and checkpoints, then the process exits.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;

use super::routes;
use crate::auth::code_throttle::CodeThrottle;
use crate::auth::jwt::SigningKeys;
use crate::auth::throttle::LoginThrottle;
use crate::clock::Clock;
use crate::config::Config;
use crate::db::{self, Checkpointing, Durability};
use crate::events::writer::{EventWriter, WriterConfig};
use crate::github::links::LinkFold;
use crate::http::body_deadline::BodyLimits;
use crate::http::serve::{Limits, Protocol};
use crate::metrics::Metrics;
use crate::model::wire::EventLimits;
use crate::pricing::PriceBook;
use crate::sessions::fold::SessionFold;
use crate::state::AppState;
use crate::transcripts::index::TranscriptIndex;
use crate::transcripts::index::worker::Indexer;

/// The addresses the listeners are bound to, as written to `run/addresses.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct BoundAddresses {
    pub ingest: SocketAddr,
    pub web: SocketAddr,
    pub github: SocketAddr,
    /// OTLP/gRPC's listener, when `listen.otlp_grpc` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otlp_grpc: Option<SocketAddr>,
    /// Whether the HTTP listeners speak TLS (`listen.tls_cert`), for `healthcheck`.
    #[serde(default)]
    pub tls: bool,
    pub pid: u32,
}

pub fn addresses_path(data_dir: &Path) -> std::path::PathBuf {
    data_dir.join("run").join("addresses.json")
}

/// Opens `main.db`, creating and migrating it. Used by `serve` and operator verbs.
/// Creates or migrates main.db; returns the schema version it found (0: a new file).
pub fn prepare_main_db(config: &Config) -> anyhow::Result<i64> {
    crate::backup::restore::ensure_not_half_restored(&config.data_dir)?;
    db::ensure_dir(&config.data_dir)?;
    let path = config.main_db_path();
    let mut conn = db::open(&path, Durability::PowerSafe, Checkpointing::Automatic)?;
    let found = db::migrations::migrate(&mut conn, &path)?;
    if found != db::migrations::latest_version() {
        tracing::info!(from = found, to = db::migrations::latest_version(), "migrated main.db");
    }
    Ok(found)
}

/// Runs the server until `shutdown` resolves, then drains and exits.
pub async fn serve(config: Config, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    serve_with_clock(config, Clock::system(), shutdown).await
}

/// [`serve`] with a given clock (tests move a manual clock to test expiry).
pub async fn serve_with_clock(
    config: Config,
    clock: Clock,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    for name in &config.unknown_variables {
        tracing::warn!(variable = %name, "no setting has this name; `sightline config default` lists every variable");
    }
    prepare_main_db(&config)?;
    db::ensure_dir(&config.run_dir())?;
    let metrics = Arc::new(Metrics::new());
    let server_jobs = crate::jobs::registry::JOBS.iter().filter(|job| crate::jobs::scheduler::runs_in_the_server(job));
    metrics.declare_jobs(server_jobs.map(|job| job.name));
    // The operator's tables in <data_dir>/price-tables/ replace the embedded ones.
    let prices = Arc::new(PriceBook::load(&config.data_dir).context("a price table is unusable")?);
    let writer = EventWriter::start(
        WriterConfig {
            data_dir: config.data_dir.clone(),
            max_group_events: config.storage.max_group_events,
            wal_hard_cap_bytes: config.storage.wal_hard_cap_mb << 20,
            queue_capacity: config.storage.writer_queue,
            clock: clock.clone(),
        },
        vec![
            Arc::new(SessionFold { prices: prices.clone() }),
            Arc::new(LinkFold { host_prefix: crate::github::links::host_prefix(&config.auth.github_url) }),
            Arc::new(crate::analytics::redactions::RedactionFold),
        ],
        metrics.clone(),
    )
    .context("cannot start the event writer")?;
    let readers = db::reader_pool(&config.main_db_path(), config.storage.reader_pool)?;

    let (stop_checkpointer, checkpointer_stop) = std::sync::mpsc::channel();
    let checkpoint_config = crate::events::checkpoint::CheckpointConfig {
        data_dir: config.data_dir.clone(),
        soft_cap_bytes: config.storage.wal_soft_cap_mb << 20,
        interval: Duration::from_secs(config.storage.checkpoint_interval_secs),
        tick: Duration::from_millis(500),
    };
    let checkpoint_metrics = metrics.clone();
    let checkpointer = std::thread::Builder::new()
        .name("checkpointer".into())
        .spawn(move || crate::events::checkpoint::run(checkpoint_config, checkpoint_metrics, checkpointer_stop))?;

    let event_limits = EventLimits {
        max_metadata_bytes: config.ingest.max_metadata_bytes,
        max_future_skew_ms: config.ingest.max_future_skew_secs * 1000,
        max_age_ms: config.ingest.max_event_age_days * 86_400_000,
    };
    let opened = TranscriptIndex::open(&config.data_dir).context("cannot open the transcript index")?;
    let transcripts = Arc::new(opened.index);
    let (indexer, indexer_thread) = Indexer::start(
        transcripts.clone(),
        config.data_dir.clone(),
        readers.clone(),
        writer.clone(),
        clock.clone(),
        opened.fresh,
    )?;
    // Before binding: a certificate that cannot be used stops the start, naming the file.
    let tls = match config.listen.tls_files()? {
        Some((cert, key)) => Some(crate::http::tls::acceptor(&cert, &key, crate::http::tls::RECHECK)?),
        None => None,
    };
    let bind = |name: &'static str, addr: SocketAddr| async move {
        TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr} for {name}"))
    };
    let ingest = bind("ingest (listen.ingest)", config.listen.ingest).await?;
    let web = bind("web (listen.web)", config.listen.web).await?;
    let github = bind("GitHub app (listen.github)", config.listen.github).await?;
    let otlp_grpc = match config.listen.otlp_grpc_addr()? {
        Some(addr) => Some(bind("OTLP/gRPC (listen.otlp_grpc)", addr).await?),
        None => None,
    };
    let web_origin = config.auth.public_origin(web.local_addr()?, tls.is_some());
    let issuer = if config.auth.public_url.is_empty() { "sightline".to_string() } else { web_origin.clone() };
    let keys = SigningKeys::load_or_create(&config.data_dir, &issuer)?;
    // The addresses people signed in from, so the throttle still knows them (L3).
    let login_throttle = LoginThrottle::default();
    {
        let conn = readers.get().context("reading the familiar sign-in addresses")?;
        login_throttle.seed(crate::auth::throttle::familiar_since(&conn, clock.now_ms())?);
    }
    let state = Arc::new(AppState {
        config: config.clone(),
        readers,
        writer,
        prices,
        metrics,
        event_limits,
        transcripts,
        indexer,
        keys,
        clock,
        login_throttle,
        device_throttle: CodeThrottle::default(),
        web_origin,
        webhook_arrivals: Arc::new(tokio::sync::Notify::new()),
        ingest_addr: ingest.local_addr()?,
        slis: Arc::default(),
        unmapped: Arc::default(),
        events: crate::events::store::Store::at(&config.data_dir),
        trace_sessions: Default::default(),
        retention_counted: Default::default(),
        github_resting_until_ms: Arc::default(),
    });

    let bound = BoundAddresses {
        ingest: ingest.local_addr()?,
        web: web.local_addr()?,
        github: github.local_addr()?,
        otlp_grpc: otlp_grpc.as_ref().map(|listener| listener.local_addr()).transpose()?,
        tls: tls.is_some(),
        pid: std::process::id(),
    };
    write_addresses(&config.data_dir, &bound)?;
    tracing::info!(ingest = %bound.ingest, web = %bound.web, github = %bound.github, otlp_grpc = ?bound.otlp_grpc, data_dir = %config.data_dir.display(), "sightline serving");
    warn_of_cleartext(&state, &bound);

    let scheduler = tokio::spawn(crate::jobs::scheduler::run(state.clone()));
    let webhook_worker = tokio::spawn(crate::github::worker::run(state.clone()));
    let sli_flusher = tokio::spawn(super::slis::run(state.clone()));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });
    let routers = [
        (ingest, routes::ingest(state.clone())),
        (web, routes::web(state.clone())),
        (github, routes::github(state.clone())),
    ];
    let mut servers = Vec::new();
    let limits = listener_limits(&config.listen, Protocol::Http1);
    for (listener, router) in routers {
        let mut stop = stop_rx.clone();
        servers.push(tokio::spawn(crate::http::serve::serve(
            listener,
            router,
            limits.clone(),
            tls.clone(),
            async move {
                let _ = stop.wait_for(|stopped| *stopped).await;
            },
        )));
    }
    if let Some(listener) = otlp_grpc {
        // HTTP/2 with prior knowledge, in clear (exporters' `http://` endpoints), with the
        // same connection limits as the other listeners.
        let mut stop = stop_rx.clone();
        let http2 = Protocol::Http2 {
            idle_timeout: Duration::from_secs(config.listen.idle_timeout_secs),
            max_streams: config.listen.max_streams_per_connection,
        };
        let limits = listener_limits(&config.listen, http2);
        let router = routes::otlp_grpc(state.clone());
        servers.push(tokio::spawn(crate::http::serve::serve(listener, router, limits, None, async move {
            let _ = stop.wait_for(|stopped| *stopped).await;
        })));
    }
    let mut stop = stop_rx.clone();
    let _ = stop.wait_for(|stopped| *stopped).await;
    tracing::info!("shutting down: draining in-flight requests");
    let grace = Duration::from_secs(config.server.shutdown_grace_secs);
    let drained = tokio::time::timeout(grace, async {
        for server in servers {
            let _ = server.await;
        }
    })
    .await;
    if drained.is_err() {
        tracing::warn!(grace_secs = grace.as_secs(), "requests still running after the grace period; stopping anyway");
    }
    scheduler.abort();
    webhook_worker.abort();
    sli_flusher.abort();
    // The last minute's counts, so a restart loses none.
    super::slis::flush(&state).await;
    // The indexer records what it indexed through the writer, so it stops first.
    state.indexer.stop();
    let _ = tokio::task::spawn_blocking(move || indexer_thread.join()).await;
    state.writer.shutdown().await;
    let _ = stop_checkpointer.send(());
    let _ = checkpointer.join();
    let _ = std::fs::remove_file(addresses_path(&config.data_dir));
    tracing::info!("stopped");
    Ok(())
}

/// The limits `[listen]` sets, for a listener speaking `protocol`.
fn listener_limits(listen: &crate::config::Listen, protocol: Protocol) -> Limits {
    Limits {
        max_connections: listen.max_connections,
        max_connections_per_address: listen.max_connections_per_address.min(listen.max_connections),
        header_timeout: Duration::from_secs(listen.header_timeout_secs),
        body: BodyLimits {
            unauthenticated: Duration::from_secs(listen.body_timeout_secs),
            upload_min_bytes_per_sec: listen.upload_min_bytes_per_sec,
            upload: Duration::from_secs(listen.upload_timeout_secs),
        },
        trusted_proxies: listen.trusted_proxies.clone().into(),
        protocol,
    }
}

fn write_addresses(data_dir: &Path, bound: &BoundAddresses) -> anyhow::Result<()> {
    let path = addresses_path(data_dir);
    let temp = path.with_extension("json.tmp");
    std::fs::write(&temp, serde_json::to_vec_pretty(bound)?)
        .with_context(|| format!("cannot write {}", temp.display()))?;
    std::fs::rename(&temp, &path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Starts the eval dashboard over `db` and serves until Ctrl-C or SIGTERM.
pub async fn dashboard(
    db: &Path,
    host: &str,
    port: u16,
    token: Option<&str>,
    platform: Option<crate::evals::platform::Platform>,
) -> anyhow::Result<()> {
    use crate::evals::dashboard::DashState;
    let ip: std::net::IpAddr = host.parse().with_context(|| format!("--host {host:?} is not an IP address"))?;
    let token = token.filter(|t| !t.is_empty());
    if let Some(token) = token {
        crate::evals::dashboard::auth::check_token(token).map_err(|why| anyhow::anyhow!("{why}"))?;
    }
    // The dashboard outlives whoever reads its first lines (`| head -1`): a closed
    // stdout or stderr is not a reason to stop serving, so these writes ignore it.
    use std::io::Write;
    if ip.is_unspecified() && token.is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "warning: the dashboard is bound to {ip} without a token: anyone who can reach this machine can read the results. Set SIGHTLINE_DASHBOARD_TOKEN."
        );
    }
    if platform.is_some() && token.is_none() {
        anyhow::bail!(
            "the dashboard shows the platform's agent sessions (transcripts included) to whoever opens it: \
             set SIGHTLINE_DASHBOARD_TOKEN too, and hand it only to eval engineers"
        );
    }
    let mut state = DashState::new(db, token, ip.is_loopback())?;
    let platform_line = platform.as_ref().map(|p| format!("agent sessions: read from the platform at {}", p.url));
    state.platform = platform;
    let state = Arc::new(state);
    let listener =
        TcpListener::bind(SocketAddr::new(ip, port)).await.with_context(|| format!("cannot listen on {ip}:{port}"))?;
    let bound = listener.local_addr()?;
    let shown = if ip.is_unspecified() { format!("127.0.0.1:{}", bound.port()) } else { bound.to_string() };
    let auth = if token.is_some() { "token required" } else { "no authentication" };
    let _ = writeln!(std::io::stdout(), "dashboard: http://{shown}/ ({auth})");
    if let Some(line) = platform_line {
        let _ = writeln!(std::io::stdout(), "{line}");
    }
    // The platform's listener defaults, with fewer connections: a team's dashboard.
    let mut limits = listener_limits(&crate::config::Listen::default(), Protocol::Http1);
    limits.max_connections = 256;
    crate::http::serve::serve(listener, routes::dashboard(state), limits, None, shutdown_signal()).await?;
    Ok(())
}

/// Resolves on SIGTERM or Ctrl-C: how `serve` and `dashboard` are asked to stop.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// Warns when a listener other than this machine's loopback speaks plain HTTP: passwords,
/// sign-in cookies and tokens then cross the network in clear (`docs/operations.md`, TLS).
fn warn_of_cleartext(state: &AppState, bound: &BoundAddresses) {
    if !state.https() && !bound.web.ip().is_loopback() {
        tracing::warn!(
            web = %bound.web,
            origin = %state.web_origin,
            "the web listener serves plain HTTP beyond this machine: passwords and sign-in cookies cross the network in clear; put TLS in front (docs/operations.md, TLS) and set auth.public_url to its https:// address"
        );
    }
    if !bound.tls && !bound.ingest.ip().is_loopback() && !state.config.auth.ingest_public_url.starts_with("https://") {
        tracing::warn!(
            ingest = %bound.ingest,
            "the ingest listener serves plain HTTP beyond this machine: hook and OTLP tokens cross the network in clear; put TLS in front (docs/operations.md, TLS) and set auth.ingest_public_url to its https:// address"
        );
    }
}
