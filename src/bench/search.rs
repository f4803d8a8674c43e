//! `sightline bench search`: transcript search at scale. Generates a corpus (see
//! `bench_search_corpus`) in a scratch data directory, indexes it with the code of
//! `index-transcripts` (timed: messages per second), reports the index's size per
//! message, then runs ten representative queries many times each through the library
//! search (the code behind `GET /api/search`) and reports p50, p95 and p99 per query.
//!
//! Invariant: the figures are what this run observed: wall-clock time per search call,
//! hits and whether the time cap cut a search short; nothing is extrapolated.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::search_corpus::{self as corpus, CORPUS_START_MS, RARE_TAIL_RANK};
use crate::db::{self, Checkpointing, Durability};
use crate::transcripts::index::TranscriptIndex;
use crate::transcripts::search::{self, Scope, SearchRequest};

#[derive(Debug, Clone, Args)]
pub struct SearchBenchArgs {
    /// Normalised messages in the corpus.
    #[arg(long, default_value_t = 1_000_000)]
    pub messages: usize,
    /// Sessions they are spread over.
    #[arg(long, default_value_t = 20_000)]
    pub sessions: usize,
    /// Owners of the sessions. Searches are scoped to the first owner's sessions, so with
    /// 1 (the default) every message is in scope: the heaviest case.
    #[arg(long, default_value_t = 1)]
    pub owners: usize,
    /// Timed runs of each query (after one untimed warm-up).
    #[arg(long, default_value_t = 50)]
    pub runs: usize,
    /// Scratch data directory (default: a new one under the system temp directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Keep the scratch data directory afterwards.
    #[arg(long)]
    pub keep: bool,
}

/// The ten queries: (what it stands for, query text).
fn queries() -> Vec<(&'static str, String)> {
    let day = |offset: i64| crate::model::rfc3339_ms(CORPUS_START_MS + offset * 86_400_000)[..10].to_string();
    vec![
        ("common term", "error".into()),
        ("mid-frequency term", "migration".into()),
        ("rare term", corpus::tail_word(RARE_TAIL_RANK)),
        ("two terms", "login timeout".into()),
        ("phrase", "\"rate limit\"".into()),
        ("phrase of two very common words", "\"of the\"".into()),
        ("term, agent and date range", format!("deploy agent:codex after:{} before:{}", day(30), day(45))),
        ("term and tool", "cargo tool:bash".into()),
        ("term and model prefix", "refactor model:claude-opus".into()),
        ("term minus term", "test -flaky".into()),
    ]
}

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    super::nearest_rank(sorted_ms, p).unwrap_or(0.0)
}

pub fn run(args: &SearchBenchArgs) -> anyhow::Result<i32> {
    anyhow::ensure!(
        args.sessions > 0 && args.messages >= args.sessions,
        "--messages must be at least --sessions (> 0)"
    );
    let data_dir = args
        .dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("sightline-bench-search-{}", std::process::id())));
    anyhow::ensure!(!data_dir.exists(), "{} exists; give a new --dir", data_dir.display());
    let config = crate::config::Config::load(
        None,
        std::iter::empty(),
        &crate::config::Overrides { data_dir: Some(data_dir.clone()), ..Default::default() },
    )?;
    crate::app::serve::prepare_main_db(&config)?;
    let mut conn = db::open(&config.main_db_path(), Durability::PowerSafe, Checkpointing::Automatic)?;
    eprintln!("generating {} messages in {} sessions under {}", args.messages, args.sessions, data_dir.display());
    let started = Instant::now();
    let owners = corpus::write(&data_dir, &mut conn, args.messages, args.sessions, args.owners)?;
    eprintln!("generated in {:.1} s; indexing", started.elapsed().as_secs_f64());

    let indexed = crate::transcripts::offline::index_stored(&conn, &data_dir, false, true)?;
    let messages = indexed.report.messages.max(1);
    println!(
        "indexing: {} sessions, {} messages (documents) in {:.1} s = {:.0} messages/s; index {:.1} MiB = {:.0} bytes/message",
        indexed.report.sessions,
        indexed.report.messages,
        indexed.elapsed.as_secs_f64(),
        indexed.report.messages as f64 / indexed.elapsed.as_secs_f64(),
        indexed.index_bytes as f64 / (1 << 20) as f64,
        indexed.index_bytes as f64 / messages as f64,
    );

    let index = TranscriptIndex::open(&data_dir)?.index;
    let scope = Scope::OwnSessions { user_id: owners[0].clone() };
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::UTF8_FULL_CONDENSED).set_header([
        "query",
        "text",
        "hits",
        "cut short",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "max ms",
    ]);
    let mut everything = Vec::new();
    for (what, text) in queries() {
        let request = SearchRequest::new(text.clone(), scope.clone());
        let first = search::search(&index, &request)?;
        let mut times = Vec::with_capacity(args.runs);
        let mut cut_short = 0;
        for _ in 0..args.runs {
            let started = Instant::now();
            let results = search::search(&index, &request)?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            cut_short += usize::from(results.cut_short);
        }
        times.sort_by(f64::total_cmp);
        everything.extend_from_slice(&times);
        table.add_row([
            what.to_string(),
            text,
            first.total.to_string(),
            format!("{cut_short}/{}", args.runs),
            format!("{:.2}", percentile(&times, 0.50)),
            format!("{:.2}", percentile(&times, 0.95)),
            format!("{:.2}", percentile(&times, 0.99)),
            format!("{:.2}", percentile(&times, 1.0)),
        ]);
    }
    everything.sort_by(f64::total_cmp);
    println!("{table}");
    println!(
        "all queries ({} searches): p50 {:.2} ms, p95 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        everything.len(),
        percentile(&everything, 0.50),
        percentile(&everything, 0.95),
        percentile(&everything, 0.99),
        percentile(&everything, 1.0)
    );
    drop(index);
    if args.keep {
        eprintln!("kept {}", data_dir.display());
    } else {
        std::fs::remove_dir_all(&data_dir)?;
    }
    Ok(0)
}
