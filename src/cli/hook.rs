//! Developer-machine commands: `hook`, `flusher`, `login`, `status`. `hook` always exits
//! 0 — an agent must never be blocked or failed by its telemetry — and logs any error
//! to the local log file instead.

use std::io::Read;
use std::time::Duration;

use clap::Args;

use crate::hook::adapters::{self, Context};
use crate::hook::flusher::{self, FlushConfig};
use crate::hook::local::{self, ClientConfig};
use crate::hook::queue::Queue;
use crate::model::{AgentType, EventType};

/// Hook payloads larger than this are not read (agents send a few KB).
const MAX_PAYLOAD_BYTES: u64 = 16 << 20;

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent's own hook event name, as `install` writes it (e.g. PostToolUse).
    pub event: String,
    /// The agent: claude_code (claude-code is accepted too).
    #[arg(long)]
    pub agent: String,
}

impl HookArgs {
    /// `hook <event> --agent <agent>` (or `--agent=<agent>`, or the flag first), exactly as
    /// `install` writes it; anything else (help, a typo) returns `None` and goes through
    /// the full parser, which explains it.
    pub fn from_argv(argv: impl Iterator<Item = std::ffi::OsString>) -> Option<HookArgs> {
        let argv: Vec<String> = argv.map(|a| a.into_string().ok()).collect::<Option<_>>()?;
        let rest = match argv.split_first() {
            Some((command, rest)) if command == "hook" => rest,
            _ => return None,
        };
        let (mut event, mut agent) = (None, None);
        let mut words = rest.iter();
        while let Some(word) = words.next() {
            if word == "--agent" {
                agent = Some(words.next()?.clone());
            } else if let Some(value) = word.strip_prefix("--agent=") {
                agent = Some(value.to_string());
            } else if word.starts_with('-') || event.is_some() {
                return None;
            } else {
                event = Some(word.clone());
            }
        }
        Some(HookArgs { event: event?, agent: agent? })
    }
}

#[derive(Debug, Args)]
pub struct FlusherArgs {
    /// Ship what is queued now and exit, instead of waiting for a quiet period.
    #[arg(long)]
    pub once: bool,
    /// Events per batch.
    #[arg(long, default_value_t = 50)]
    pub batch: usize,
    /// Ship a partial batch once its oldest event is this many seconds old.
    #[arg(long, default_value_t = 5)]
    pub interval_secs: u64,
    /// Size of the chunks transcripts are uploaded in.
    #[arg(long, default_value_t = crate::hook::shipper::CHUNK_BYTES)]
    pub transcript_chunk_bytes: usize,
}

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Base URL of the server's ingest listener, e.g. https://sightline.example.com:4000.
    #[arg(long)]
    pub server: String,
    /// Store this hook token (from `sightline token create --kind hook`) instead of signing in.
    #[arg(long, env = "SIGHTLINE_HOOK_TOKEN", hide_env_values = true, conflicts_with_all = ["email", "password_stdin"])]
    pub token: Option<String>,
    /// Sign in with a password instead of the browser (needs --password-stdin).
    #[arg(long, requires = "password_stdin")]
    pub email: Option<String>,
    /// Read the password from standard input (first line).
    #[arg(long, requires = "email")]
    pub password_stdin: bool,
    /// Do nothing when this machine already holds a hook token for this server (the
    /// install script runs login this way, so running it again asks for nothing).
    #[arg(long)]
    pub if_needed: bool,
}

pub fn hook(args: &HookArgs) -> i32 {
    if let Err(err) = record(args) {
        local::log(&format!("hook {} --agent {}: {err:#}", args.event, args.agent));
    }
    0
}

fn record(args: &HookArgs) -> anyhow::Result<()> {
    // Read the payload before anything can fail, so the agent never writes into a
    // closed pipe.
    let mut input = Vec::new();
    std::io::stdin().take(MAX_PAYLOAD_BYTES).read_to_end(&mut input)?;
    let agent =
        AgentType::parse_lenient(&args.agent).ok_or_else(|| anyhow::anyhow!("unknown agent {:?}", args.agent))?;
    if crate::hook::pause::paused_until().is_some() {
        return Ok(());
    }
    let payload: serde_json::Value = serde_json::from_slice(&input)?;
    let mut queue = Queue::open_for_hook(&local::queue_path())?;
    let now_ms = crate::clock::system_now_ms();
    let tx = queue.begin()?;
    let mut events = adapters::map(agent, &args.event, &payload, &mut Context { now_ms, state: &tx })?;
    let (run_kind, warning) =
        crate::hook::run_kind::read(crate::config::machine::MachineVariable::SightlineRunKind.text().as_deref());
    if let Some(warning) = warning {
        local::log(&warning);
    }
    use crate::config::machine::MachineVariable;
    let cell = MachineVariable::SightlineEvalCell.text();
    let (eval, warnings) = crate::hook::eval_tag::read(
        cell.as_deref(),
        MachineVariable::SightlineEvalRun.text().as_deref(),
        MachineVariable::SightlineEvalPhase.text().as_deref(),
    );
    warnings.iter().for_each(|warning| local::log(warning));
    // A harness that names a cell runs an evaluation, unless it said what else it runs.
    let named_cell = cell.is_some_and(|cell| !cell.trim().is_empty());
    if let Some(kind) = run_kind.or(named_cell.then_some(crate::model::RunKind::Eval)) {
        crate::hook::run_kind::stamp(&mut events, kind);
    }
    if let Some(eval) = &eval {
        crate::hook::eval_tag::stamp(&mut events, eval);
    }
    // `status` shows the server's view of the session that started last (written once
    // per session, not on every hook).
    if let Some(started) = events.iter().find(|e| e.event_type.as_deref() == Some(EventType::SessionStart.as_str()))
        && let Some(session) = &started.session_id
    {
        tx.set_mark("current_session", &format!("{}/{session}", agent.as_str()), now_ms)?;
    }
    let lines = events.iter().map(serde_json::to_string).collect::<Result<Vec<_>, _>>()?;
    tx.push(&lines, now_ms)?;
    tx.commit()?;
    if !events.is_empty() {
        ensure_flusher();
    }
    Ok(())
}

/// Starts a flusher in the background unless one holds the lock. The check is a
/// non-blocking lock attempt; a race starts two, and the loser exits at once.
pub(crate) fn ensure_flusher() {
    if crate::config::machine::MachineVariable::NoFlusher.is_set() {
        return;
    }
    match flusher::try_lock() {
        Ok(Some(lock)) => drop(lock),
        _ => return,
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut command = std::process::Command::new(exe);
    command
        .arg("flusher")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Its own process group (Unix) or console-less process group (Windows), so the
    // agent's Ctrl-C or a closed terminal does not stop it mid-batch.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    #[cfg(windows)]
    {
        const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        std::os::windows::process::CommandExt::creation_flags(
            &mut command,
            CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW,
        );
    }
    if let Err(err) = command.spawn() {
        local::log(&format!("cannot start the flusher: {err}"));
    }
}

pub fn flusher(args: &FlusherArgs) -> anyhow::Result<i32> {
    let config = FlushConfig {
        batch: args.batch.clamp(1, 1000),
        interval: Duration::from_secs(args.interval_secs),
        quiet_exit: if args.once { Duration::ZERO } else { FlushConfig::default().quiet_exit },
        chunk_bytes: args.transcript_chunk_bytes.clamp(1024, 64 << 20),
        ..FlushConfig::default()
    };
    if args.once && flusher::try_lock()?.is_none() {
        return wait_for_running_flusher(&config);
    }
    flusher::run(&config)?;
    Ok(0)
}

/// How long `flusher --once` waits for a running flusher to empty the queue.
const ONCE_WAIT: Duration = Duration::from_secs(60);

/// `flusher --once` while another flusher holds the lock: that one ships, so wait until
/// the queue is empty and say so, or say what is still queued (exit 2), instead of
/// exiting at once having shipped nothing.
fn wait_for_running_flusher(config: &FlushConfig) -> anyhow::Result<i32> {
    let queue = Queue::open(&local::queue_path())?;
    let started = std::time::Instant::now();
    let at_start = queue.queued_count()?;
    loop {
        let queued = queue.queued_count()?;
        if queued == 0 {
            println!("a running flusher shipped the {at_start} queued events");
            return Ok(0);
        }
        if flusher::try_lock()?.is_some() {
            // The other flusher stopped with events left: ship them here.
            flusher::run(config)?;
            return Ok(0);
        }
        if started.elapsed() >= ONCE_WAIT {
            eprintln!(
                "shipped nothing: a running flusher holds the lock and {queued} events are still queued after {} s (`sightline status` says why)",
                started.elapsed().as_secs()
            );
            return Ok(2);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn login(args: &LoginArgs) -> anyhow::Result<i32> {
    let server = args.server.trim_end_matches('/').to_string();
    anyhow::ensure!(
        server.starts_with("http://") || server.starts_with("https://"),
        "--server must be an http:// or https:// URL, got {server:?}"
    );
    if args.if_needed
        && let Some(current) = local::load_config()?
        && current.server.trim_end_matches('/') == server
        && current.token.starts_with("slh_hook_")
    {
        println!("already logged in to {server} (credentials in {})", local::config_path().display());
        return Ok(0);
    }
    let path = if let Some(token) = &args.token {
        anyhow::ensure!(token.starts_with("slh_hook_"), "--token is not a hook token (they start with slh_hook_)");
        local::save_config(&ClientConfig { server: server.clone(), token: token.clone() })?
    } else {
        let agent = local::http_agent(std::time::Duration::from_secs(30));
        let tokens = match &args.email {
            Some(email) => {
                let mut password = String::new();
                std::io::BufRead::read_line(&mut std::io::stdin().lock(), &mut password)?;
                let password = password.trim_end_matches(['\n', '\r']);
                anyhow::ensure!(!password.is_empty(), "no password on standard input");
                crate::hook::login::password_sign_in(&agent, &server, email, password)?
            }
            None => crate::hook::login::device_sign_in(&agent, &server)?,
        };
        crate::hook::login::store_hook_token(&agent, &server, &tokens)?
    };
    println!("logged in to {server}; credentials in {} (mode 0600)", path.display());
    Ok(0)
}

pub fn status() -> anyhow::Result<i32> {
    let queue = Queue::open(&local::queue_path())?;
    let config = local::load_config()?;
    let flusher_running = flusher::try_lock()?.is_none();
    let when = |ms: i64| crate::model::rfc3339_ms(ms);
    println!("server:      {}", config.as_ref().map_or("not logged in", |c| c.server.as_str()));
    let platform = crate::model::platform::Platform::current().map(|p| p.to_string()).unwrap_or_default();
    println!("client:      {} {platform}", crate::model::platform::HOOK_BINARY_MARKER.trim_end_matches('/'));
    println!("queued:      {} events", queue.queued_count()?);
    println!("rejected:    {} events (kept aside)", queue.rejected_count()?);
    println!("flusher:     {}", if flusher_running { "running" } else { "not running" });
    match queue.mark("last_flush")? {
        Some((what, at)) => println!("last flush:  {} ({what})", when(at)),
        None => println!("last flush:  never"),
    }
    if let Some((error, at)) = queue.mark("last_error")? {
        println!("last error:  {} {error}", when(at));
    }
    let paused = match crate::hook::pause::paused_until() {
        None => "no".to_string(),
        Some(None) => "yes, until `sightline resume`".to_string(),
        Some(Some(ms)) => format!("yes, until {}", when(ms)),
    };
    println!("paused:      {paused}");
    let (uploads, upload_error) = queue.upload_summary()?;
    println!(
        "transcripts: {uploads} waiting to upload{}",
        upload_error.map(|e| format!(" (last error: {e})")).unwrap_or_default()
    );
    if let Some(config) = &config {
        print_server_view(config, queue.mark("current_session")?.map(|(s, _)| s));
    }
    println!("log:         {}", local::log_path().display());
    Ok(0)
}

/// Whether the server answers, and what it holds for the session hooks saw last.
fn print_server_view(config: &ClientConfig, current: Option<String>) {
    let agent = local::http_agent(Duration::from_secs(3));
    let base = config.server.trim_end_matches('/');
    match agent.get(format!("{base}/health")).call() {
        Ok(response) if response.status() == 200 => println!("reachable:   yes"),
        Ok(response) => println!("reachable:   answered {}", response.status()),
        Err(err) => println!("reachable:   no ({err})"),
    }
    let Some((agent_type, session)) = current.as_deref().and_then(|c| c.split_once('/')) else { return };
    let url = format!("{base}/v1/me/sessions/{agent_type}/{session}");
    let view = agent
        .get(url)
        .header("Authorization", format!("Bearer {}", config.token))
        .call()
        .ok()
        .filter(|r| r.status() == 200)
        .and_then(|mut r| r.body_mut().read_to_string().ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    match view {
        Some(view) => {
            let usage = &view["usage"];
            let tokens: i64 = [
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_5m_tokens",
                "cache_write_1h_tokens",
                "reasoning_tokens",
            ]
            .iter()
            .filter_map(|k| usage[*k].as_i64())
            .sum();
            println!(
                "session:     {agent_type} {session}: {} events, {} prompts, {} tool calls, {tokens} tokens, ${:.4} (server's view)",
                view["event_count"],
                view["prompt_count"],
                view["tool_call_count"],
                view["cost_usd"].as_f64().unwrap_or(0.0)
            );
        }
        None => println!("session:     {agent_type} {session}: not on the server yet"),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::HookArgs;
    use crate::cli::developer::DeveloperCommand;
    use crate::cli::{Cli, Command};

    fn fast(argv: &[&str]) -> Option<(String, String)> {
        HookArgs::from_argv(argv.iter().map(|a| a.into())).map(|a| (a.event, a.agent))
    }

    fn full(argv: &[&str]) -> Option<(String, String)> {
        match Cli::try_parse_from(std::iter::once("sightline").chain(argv.iter().copied())).ok()?.command {
            Command::Developer(DeveloperCommand::Hook(a)) => Some((a.event, a.agent)),
            _ => None,
        }
    }

    #[test]
    fn the_fast_path_reads_what_the_full_parser_reads_or_leaves_it_to_it() {
        for argv in [
            &["hook", "PostToolUse", "--agent", "claude_code"][..],
            &["hook", "--agent", "codex", "Stop"],
            &["hook", "session.created", "--agent=opencode"],
        ] {
            assert_eq!(fast(argv), full(argv), "{argv:?}");
            assert!(fast(argv).is_some(), "{argv:?}");
        }
        for argv in [
            &["hook", "--help"][..],
            &["hook", "PostToolUse"],
            &["hook", "A", "B", "--agent", "x"],
            &["hook", "PostToolUse", "--agent"],
            &["status"],
            &[],
        ] {
            assert_eq!(fast(argv), None, "{argv:?}");
        }
    }
}
