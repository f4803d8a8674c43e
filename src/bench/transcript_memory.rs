//! `sightline bench transcript-memory`: the memory one transcript takes on its way in,
//! measured on the server's own code. A generated transcript of `--mib` MiB (realistic
//! Claude Code lines, or `--shape tiny-lines`, the decompression-amplification case of
//! two-byte lines) is compressed as the shipper does, cut into its 1 MiB chunks, then
//! received through `upload::receive` (digest, decompression, redaction, storage) and
//! indexed through `indexing::drain` with the server indexer's writer (one thread,
//! 50 MB), then read as people read it (`transcripts::pages`): the transcript page's
//! window of 200 messages in the middle, the API's largest window (500) at the end,
//! and `find` over every message; `--whole` also measures parsing the whole file, as
//! reads did before they were paged. All in this process. Peak resident memory is read from the kernel (`VmHWM`,
//! reset through `/proc/self/clear_refs` before each phase), and the resident memory
//! after each phase (`VmRSS`) shows what is given back (the server's indexer releases its
//! writer and returns freed memory after each drain, as this does).

use std::io::Write;
use std::time::Instant;

use clap::{Args, ValueEnum};

use crate::transcripts::index::TranscriptIndex;
use crate::transcripts::indexing;
use crate::transcripts::store::StoredTranscript;
use crate::transcripts::upload::{self, Chunk};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shape {
    /// Claude Code JSONL lines of about 1.5 KB (user prompts, assistant text, tool results).
    Realistic,
    /// Two-byte lines: the most messages per byte, so the most memory per byte parsed.
    TinyLines,
}

#[derive(Debug, Args)]
pub struct TranscriptMemoryArgs {
    /// Size of the transcript, decompressed, in MiB (the accepted maximum is 128; a
    /// transcript also stops at the accepted maximum of lines).
    #[arg(long, default_value_t = 128)]
    pub mib: u64,
    /// What its lines look like.
    #[arg(long, value_enum, default_value = "realistic")]
    pub shape: Shape,
    /// Transcripts received and indexed one after another in this process (different
    /// sessions), to show whether memory accumulates.
    #[arg(long, default_value_t = 1)]
    pub rounds: u32,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also measure reading the whole transcript parsed at once (what every read did
    /// before reads were paged), for comparison.
    #[arg(long)]
    pub whole: bool,
}

/// Resident and peak resident memory of this process, in bytes (`/proc/self/status`).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets the kernel's peak-RSS mark to the current RSS (Linux 4.0+).
fn reset_peak() -> anyhow::Result<()> {
    std::fs::write("/proc/self/clear_refs", "5")
        .map_err(|err| anyhow::anyhow!("cannot reset the peak-memory mark (/proc/self/clear_refs): {err}"))
}

/// The transcript, compressed as it is generated (never whole in memory).
fn generate(mib: u64, shape: Shape) -> anyhow::Result<Vec<u8>> {
    const WORDS: [&str; 16] = [
        "parser",
        "refactor",
        "the",
        "test",
        "fails",
        "because",
        "handler",
        "returns",
        "error",
        "config",
        "migration",
        "index",
        "query",
        "latency",
        "cache",
        "rollback",
    ];
    let target = mib << 20;
    let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), 9)?;
    let (mut written, mut n, mut seed) = (0u64, 0u64, 0x2545_f491_4f6c_dd1du64);
    while written < target {
        let line = match shape {
            Shape::TinyLines => "x\n".to_string(),
            Shape::Realistic => {
                let mut words = String::new();
                for _ in 0..200 {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    words.push_str(WORDS[(seed % 16) as usize]);
                    words.push(' ');
                }
                let kind = ["user", "assistant", "user"][(n % 3) as usize];
                format!(
                    "{{\"type\":\"{kind}\",\"uuid\":\"m-{n}\",\"timestamp\":\"2026-11-20T10:00:00.000Z\",\"message\":{{\"role\":\"{kind}\",\"content\":\"{words}{n}\"}}}}\n"
                )
            }
        };
        // Stay within the size given and the lines an upload accepts.
        if written + line.len() as u64 > target || n >= upload::MAX_TRANSCRIPT_LINES {
            break;
        }
        encoder.write_all(line.as_bytes())?;
        written += line.len() as u64;
        n += 1;
    }
    Ok(encoder.finish()?)
}

pub fn run(args: &TranscriptMemoryArgs) -> anyhow::Result<i32> {
    let data_dir = std::env::temp_dir().join(format!("sightline-bench-memory-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&data_dir)?;
    let result = measure(args, &data_dir);
    let _ = std::fs::remove_dir_all(&data_dir);
    let report = result?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(0);
    }
    let mib = |bytes: &serde_json::Value| bytes.as_u64().unwrap_or(0) as f64 / f64::from(1 << 20);
    println!(
        "transcript: {} MiB decompressed ({:?}), {:.1} MiB compressed in {} chunks, {} rounds",
        args.mib,
        args.shape,
        mib(&report["compressed_bytes"]),
        report["chunks"],
        args.rounds
    );
    println!("resident before: {:.0} MiB (the generated upload is held throughout)", mib(&report["rss_before"]));
    for round in report["rounds"].as_array().into_iter().flatten() {
        for phase in ["upload", "index"] {
            let p = &round[phase];
            println!(
                "round {} {phase:>6}: peak {:.0} MiB ({:+.0} MiB over the start of the phase), {:.0} MiB resident after, {:.1} s",
                round["round"],
                mib(&p["peak_rss"]),
                mib(&p["peak_rss"]) - mib(&p["rss_start"]),
                mib(&p["rss_after"]),
                p["seconds"].as_f64().unwrap_or(0.0)
            );
        }
        println!(
            "round {} resident once the writer is released and merges are done: {:.0} MiB ({} messages indexed)",
            round["round"],
            mib(&round["rss_released"]),
            round["indexed_messages"]
        );
        for read in round["reads"].as_array().into_iter().flatten() {
            println!(
                "round {} read {:<34} peak {:.1} MiB above idle ({:.0} MiB idle), {} messages kept of {}, {:.2} s",
                round["round"],
                read["read"].as_str().unwrap_or(""),
                mib(&read["peak_over_idle"]),
                mib(&read["rss_idle"]),
                read["kept"],
                read["total"],
                read["seconds"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(0)
}

/// One upload through the server's receiving code: (stored path, phase figures).
fn upload_once(
    data_dir: &std::path::Path,
    session: &str,
    compressed: &[u8],
) -> anyhow::Result<(String, serde_json::Value)> {
    let whole = crate::model::sha256_hex(compressed);
    let parts: Vec<&[u8]> = compressed.chunks(1 << 20).collect();
    reset_peak()?;
    let (start, _) = memory();
    let started = Instant::now();
    let mut stored = None;
    for (index, part) in parts.iter().enumerate() {
        let chunk = Chunk {
            index: index as u32,
            total: parts.len() as u32,
            sha256: crate::model::sha256_hex(part),
            whole_sha256: whole.clone(),
        };
        stored = upload::receive(data_dir, "bench", session, &chunk, part)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let stored = stored.ok_or_else(|| anyhow::anyhow!("the upload did not complete"))?;
    let (after, peak) = memory();
    Ok((
        stored.relative_path,
        serde_json::json!({"rss_start": start, "peak_rss": peak, "rss_after": after, "seconds": seconds}),
    ))
}

/// One drain of the server's indexer over one stored transcript, with the writer the
/// server's indexer takes (one thread, 50 MB) and releases afterwards.
fn index_once(
    data_dir: &std::path::Path,
    session: &str,
    relative_path: String,
) -> anyhow::Result<(usize, serde_json::Value, u64)> {
    let index = TranscriptIndex::open(data_dir)?.index;
    let mut writer = index.writer(1, 50 << 20)?;
    reset_peak()?;
    let (start, _) = memory();
    let started = Instant::now();
    let mut pending = vec![StoredTranscript {
        session_id: session.into(),
        upload_sha256: session.into(),
        relative_path,
        owner_id: "bench".into(),
        agent_type: "claude_code".into(),
        started_ms: 0,
        model: None,
    }];
    let mut indexed_messages = 0;
    indexing::drain(
        &index,
        &mut writer,
        data_dir,
        || Ok(std::mem::take(&mut pending)),
        |done| {
            indexed_messages += done.iter().map(|d| d.message_count).sum::<usize>();
            Ok(())
        },
        |_| {},
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let (after, peak) = memory();
    // Segment merges go on after a commit; wait for them so that what is measured next
    // is what stays, not a merge at work. Then release as the server's indexer does.
    writer.wait_merging_threads()?;
    drop(index);
    crate::memory::return_freed_memory();
    let (released, _) = memory();
    Ok((
        indexed_messages,
        serde_json::json!({"rss_start": start, "peak_rss": peak, "rss_after": after, "seconds": seconds}),
        released,
    ))
}

/// One read as people read, measured from idle; `read` answers (messages kept, total).
fn read_once(label: &str, read: impl FnOnce() -> anyhow::Result<(usize, usize)>) -> anyhow::Result<serde_json::Value> {
    crate::memory::return_freed_memory();
    reset_peak()?;
    let (idle, _) = memory();
    let started = Instant::now();
    let (kept, total) = read()?;
    let seconds = started.elapsed().as_secs_f64();
    let (_, peak) = memory();
    Ok(serde_json::json!({
        "read": label, "rss_idle": idle, "peak_over_idle": peak.saturating_sub(idle),
        "kept": kept, "total": total, "seconds": seconds,
    }))
}

/// The reads people make of a stored transcript, each measured on its own.
fn reads(data_dir: &std::path::Path, relative_path: &str, whole: bool) -> anyhow::Result<Vec<serde_json::Value>> {
    use crate::transcripts::pages::{self, Wanted};
    let paged = |wanted: Wanted<'_>| -> anyhow::Result<(usize, usize)> {
        let page = pages::read_file(data_dir, relative_path, "claude_code", wanted)?;
        Ok((page.messages.len(), page.total))
    };
    let total = paged(Wanted::Window { offset: usize::MAX, limit: 1 })?.1;
    let mut figures = vec![
        read_once("page (200 messages, middle)", || paged(Wanted::Window { offset: total / 2, limit: 200 }))?,
        read_once("API (500 messages, last window)", || {
            paged(Wanted::Window { offset: total.saturating_sub(500), limit: pages::MAX_PAGE_MESSAGES })
        })?,
        read_once("find (every message matches)", || paged(Wanted::Containing { needle: "the", limit: 200 }))?,
    ];
    if whole {
        figures.push(read_once("whole file parsed (before paging)", || {
            let text = crate::transcripts::store::read(data_dir, relative_path)?;
            let messages = crate::transcripts::parse::parse("claude_code", &text);
            Ok((messages.len(), messages.len()))
        })?);
    }
    Ok(figures)
}

fn measure(args: &TranscriptMemoryArgs, data_dir: &std::path::Path) -> anyhow::Result<serde_json::Value> {
    let compressed = generate(args.mib, args.shape)?;
    let (rss_before, _) = memory();
    let mut rounds = Vec::new();
    for round in 1..=args.rounds.max(1) {
        let session = format!("bench-session-{round}");
        let (relative_path, upload) = upload_once(data_dir, &session, &compressed)?;
        let (indexed_messages, index, released) = index_once(data_dir, &session, relative_path.clone())?;
        let reads = reads(data_dir, &relative_path, args.whole)?;
        rounds.push(serde_json::json!({
            "round": round, "upload": upload, "index": index,
            "rss_released": released, "indexed_messages": indexed_messages, "reads": reads,
        }));
    }
    Ok(serde_json::json!({
        "mib": args.mib,
        "shape": format!("{:?}", args.shape),
        "compressed_bytes": compressed.len(),
        "chunks": compressed.len().div_ceil(1 << 20),
        "rss_before": rss_before,
        "rounds": rounds,
    }))
}
