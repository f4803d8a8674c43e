//! The layering test: reads every `crate::…` path under `src/` (in `use` lines and
//! inline, comments skipped) and fails when a top-level module depends on one it may
//! not, or when the top-level modules import each other in a circle.
//!
//! The allowed graph is the table [`ALLOWED`]: one row per top-level module, naming
//! every module it may depend on. A change of design is one visible edit of that
//! table (and of `docs/architecture.md`, which draws the same graph). The named rules
//! of the architecture are checked on top of it, so a failure says which rule broke.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Shared types: the vocabulary every layer speaks. They depend on no storage.
const SHARED: &[&str] =
    &["agents", "charts", "clock", "config", "logging", "memory", "metrics", "model", "pricing", "redact"];
/// Storage: files, pools, the event store. It knows no feature.
const STORAGE: &[&str] = &["db", "events"];
/// Features of the platform (stores with their rules, and the modules with handlers).
const FEATURES: &[&str] =
    &["access", "audit", "auth", "deletion", "github", "ingest", "otlp", "sessions", "transcripts", "web"];
/// What runs only in the server (the hook CLI on a developer's machine never needs it).
const SERVER: &[&str] =
    &["app", "state", "http", "ingest", "otlp", "web", "deletion", "github", "sessions", "access", "auth", "events"];

/// Every top-level module and the modules it may depend on.
const ALLOWED: &[(&str, &[&str])] = &[
    // Shared types.
    // The agents' vocabulary: what their records mean, for the hook, OTLP and transcripts.
    ("agents", &["model"]),
    ("charts", &["model"]),
    ("clock", &[]),
    ("config", &[]),
    ("logging", &["config"]),
    ("memory", &[]),
    ("metrics", &[]),
    ("model", &[]),
    ("pricing", &["model"]),
    ("redact", &[]),
    // Storage.
    ("db", &["clock", "metrics", "model"]),
    // Jobs: the registry, schedules and run records, and the scheduler that runs the
    // features' jobs, so it sits above them (below the listeners that trigger it).
    (
        "jobs",
        &[
            "access",
            "alerts",
            "analytics",
            "auth",
            "backup",
            "billing",
            "clock",
            "config",
            "db",
            "deletion",
            "events",
            "github",
            "jira",
            "model",
            "pricing",
            "scoring",
            "sessions",
            "slo",
            "state",
            "transcripts",
        ],
    ),
    ("events", &["clock", "db", "metrics", "model", "redact"]),
    // The aggregates, refreshed from the events.
    ("analytics", &["access", "audit", "auth", "db", "events", "jira", "model", "sessions"]),
    // Stores and services, lowest first.
    ("audit", &["clock", "db", "model"]),
    ("alerts", &["access", "analytics", "audit", "auth", "config", "db", "model", "sessions", "slo"]),
    // Service-level indicators and objectives, over their own daily table.
    ("slo", &["db"]),
    // Jira, read for the business value of pull requests.
    ("jira", &["config", "db", "model"]),
    // Cost reconciliation: the vendors' billing beside the recomputed cost of the events.
    ("billing", &["config", "db", "events", "model", "pricing"]),
    // Projections: predicted savings graded on the organisation's figures.
    ("projections", &["analytics", "audit", "db", "events", "scoring"]),
    ("auth", &["audit", "clock", "config", "db", "model"]),
    ("access", &["audit", "auth", "clock", "db", "model"]),
    ("sessions", &["access", "audit", "auth", "clock", "db", "events", "model", "pricing"]),
    ("transcripts", &["agents", "clock", "config", "db", "events", "memory", "model", "redact", "sessions"]),
    // Backups: a copy of every store's files, so above them all (but the listeners).
    ("backup", &["clock", "config", "db", "events", "transcripts"]),
    // The HTTP plumbing, and the state every handler shares (it sits below them all).
    ("http", &["db", "events", "model"]),
    (
        "state",
        &[
            "access",
            "auth",
            "clock",
            "config",
            "db",
            "events",
            "http",
            "metrics",
            "model",
            "otlp",
            "pricing",
            "sessions",
            "slo",
            "transcripts",
        ],
    ),
    // Scoring: the scorers, the scores table and the runs over the event partitions.
    (
        "scoring",
        &[
            "access",
            "analytics",
            "audit",
            "clock",
            "config",
            "db",
            "events",
            "github",
            "model",
            "redact",
            "sessions",
            "transcripts",
        ],
    ),
    // Modules with handlers.
    // The GitHub App: its receiver, the pull-request store, links and rollups on sessions.
    ("github", &["access", "auth", "clock", "config", "db", "events", "http", "model", "sessions", "state"]),
    (
        "deletion",
        &[
            "access",
            "analytics",
            "audit",
            "auth",
            "clock",
            "db",
            "events",
            "model",
            "scoring",
            "sessions",
            "state",
            "transcripts",
        ],
    ),
    (
        "ingest",
        &[
            "access",
            "auth",
            "clock",
            "config",
            "db",
            "events",
            "http",
            // The fixed label sets it counts under (`metrics::Signal`, `BatchOutcome`).
            "metrics",
            "model",
            "otlp",
            "pricing",
            "redact",
            "sessions",
            "state",
            "transcripts",
        ],
    ),
    // The agents' own OpenTelemetry, mapped into wire events with the agents' tool
    // vocabularies (`agents` names each tool's action).
    ("otlp", &["agents", "http", "model"]),
    // `/org/benchmarks` lists a results.db's runs with the eval service's reader.
    (
        "web",
        &[
            "access",
            "alerts",
            "analytics",
            "audit",
            "auth",
            "backup",
            "billing",
            "charts",
            "clock",
            "config",
            "db",
            "deletion",
            "evals",
            "events",
            "github",
            "hook_binaries",
            "http",
            "jobs",
            "model",
            "pricing",
            "projections",
            "scoring",
            "sessions",
            "slo",
            "state",
            "transcripts",
        ],
    ),
    // The eval-results service: shared HTTP plumbing and vocabulary, nothing of the platform.
    ("evals", &["charts", "http", "model", "redact"]),
    // The developer-machine side.
    ("hook", &["agents", "clock", "config", "db", "model", "redact"]),
    // The hook binaries the server hands out (files in <data_dir>/bin, by platform).
    ("hook_binaries", &["model"]),
    // The shell: serving, benchmarks, the command line.
    (
        "app",
        &[
            "access",
            "analytics",
            "audit",
            "auth",
            "backup",
            "clock",
            "config",
            "db",
            "deletion",
            "evals",
            "events",
            "github",
            "http",
            "ingest",
            "jobs",
            "metrics",
            "model",
            "pricing",
            "sessions",
            "slo",
            "state",
            "transcripts",
            "web",
        ],
    ),
    (
        "bench",
        &[
            "analytics",
            "app",
            "clock",
            "config",
            "db",
            "deletion",
            "events",
            "github",
            "hook",
            "memory",
            "model",
            "pricing",
            "redact",
            "sessions",
            "transcripts",
        ],
    ),
    (
        "demo",
        &[
            "access", "app", "auth", "billing", "clock", "config", "db", "evals", "events", "github", "model",
            "pricing", "scoring", "sessions",
        ],
    ),
    (
        "cli",
        &[
            "access",
            "alerts",
            "app",
            "audit",
            "auth",
            "backup",
            "bench",
            "billing",
            "clock",
            "config",
            "db",
            "deletion",
            "demo",
            "evals",
            "events",
            "github",
            "hook",
            "hook_binaries",
            "jira",
            "jobs",
            "logging",
            "memory",
            "model",
            "pricing",
            "redact",
            "scoring",
            "sessions",
            "transcripts",
        ],
    ),
];

/// One use of another top-level module: where it is and what it names.
#[derive(Clone, Debug)]
struct Use {
    file: PathBuf,
    line: usize,
    text: String,
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file belongs to (`src/events/reads.rs` → `events`), or
/// `None` for the crate roots (`lib.rs`, `main.rs`, and the binaries in `src/bin/`).
fn module_of(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src_dir()).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?.to_string();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib" && name != "main" && name != "bin").then_some(name)
}

/// Every `crate::<module>` named by each top-level module, keyed by (from, to).
fn dependencies() -> BTreeMap<(String, String), Vec<Use>> {
    let pattern = regex::Regex::new(r"\bcrate::([a-z_][a-z0-9_]*)").unwrap();
    let mut files = Vec::new();
    source_files(&src_dir(), &mut files);
    let mut found: BTreeMap<(String, String), Vec<Use>> = BTreeMap::new();
    for file in files {
        let Some(from) = module_of(&file) else { continue };
        let text = std::fs::read_to_string(&file).unwrap();
        for (index, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            for capture in pattern.captures_iter(line) {
                let to = capture[1].to_string();
                if to != from {
                    found.entry((from.clone(), to)).or_default().push(Use {
                        file: file.clone(),
                        line: index + 1,
                        text: code.to_string(),
                    });
                }
            }
        }
    }
    found
}

fn describe(uses: &[Use]) -> String {
    let first = &uses[0];
    format!(
        "{}:{}: {}{}",
        first.file.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(&first.file).display(),
        first.line,
        first.text,
        if uses.len() > 1 { format!(" (and {} more)", uses.len() - 1) } else { String::new() }
    )
}

/// The named rule an edge breaks, for a message that says why it is wrong.
fn broken_rule(from: &str, to: &str) -> &'static str {
    let is = |set: &[&str], name: &str| set.contains(&name);
    if is(STORAGE, from) && !is(STORAGE, to) && !is(SHARED, to) {
        "storage must not depend on features"
    } else if is(SHARED, from) && (is(STORAGE, to) || is(FEATURES, to)) {
        "shared types must not depend on storage or features"
    } else if from == "hook" && is(SERVER, to) {
        "the hook CLI must not depend on the server"
    } else if to == "app" && !["cli", "bench", "demo"].contains(&from) {
        "features must not depend on app/ (only the command line, benchmarks and the demo start it)"
    } else if from == "evals" && !is(SHARED, to) && to != "http" {
        "the eval service must not depend on the platform"
    } else {
        "not in the allowed graph"
    }
}

#[test]
fn every_dependency_is_in_the_allowed_graph() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> =
        ALLOWED.iter().map(|(module, deps)| (*module, deps.iter().copied().collect())).collect();
    let mut modules = Vec::new();
    source_files(&src_dir(), &mut modules);
    let mut problems = Vec::new();
    for file in &modules {
        if let Some(module) = module_of(file)
            && !allowed.contains_key(module.as_str())
        {
            problems.push(format!("{module}: a top-level module missing from ALLOWED ({})", file.display()));
        }
    }
    for ((from, to), uses) in dependencies() {
        let permitted = allowed.get(from.as_str()).is_some_and(|deps| deps.contains(to.as_str()));
        if !permitted {
            problems.push(format!("{from} -> {to}: {} — {}", broken_rule(&from, &to), describe(&uses)));
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "layering broken:\n{}", problems.join("\n"));
}

/// The module order of `docs/architecture.md`, made from [`ALLOWED`]: each module's
/// level (0 for one that depends on nothing, else one more than its highest
/// dependency), lowest first, then by name, with what it may depend on.
fn allowed_graph_table() -> String {
    let graph: BTreeMap<&str, Vec<&str>> = ALLOWED
        .iter()
        .map(|(module, deps)| {
            let mut deps = deps.to_vec();
            deps.sort_unstable();
            (*module, deps)
        })
        .collect();
    fn level<'a>(
        module: &'a str,
        graph: &BTreeMap<&'a str, Vec<&'a str>>,
        seen: &mut BTreeMap<&'a str, usize>,
    ) -> usize {
        if let Some(level) = seen.get(module) {
            return *level;
        }
        let deps = graph.get(module).cloned().unwrap_or_default();
        let level = deps.iter().map(|dep| level(dep, graph, seen) + 1).max().unwrap_or(0);
        seen.insert(module, level);
        level
    }
    let mut levels = BTreeMap::new();
    let mut modules: Vec<(usize, &str)> =
        graph.keys().map(|module| (level(module, &graph, &mut levels), *module)).collect();
    modules.sort_unstable();
    let mut table = String::from("| level | module | may depend on |\n|---|---|---|\n");
    for (level, module) in modules {
        let deps: Vec<String> = graph[module].iter().map(|dep| format!("`{dep}`")).collect();
        let deps = if deps.is_empty() { "—".to_string() } else { deps.join(", ") };
        table.push_str(&format!("| {level} | `{module}` | {deps} |\n"));
    }
    table
}

/// `docs/architecture.md` draws the graph this file enforces: its module order is
/// [`allowed_graph_table`], between the page's `allowed-graph` markers, so the two
/// cannot drift (the failure prints the table to paste).
#[test]
fn the_architecture_page_draws_the_allowed_graph() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md")).unwrap();
    let (open, close) =
        ("<!-- allowed-graph: made from tests/architecture.rs's ALLOWED -->\n", "<!-- /allowed-graph -->");
    let drawn = page
        .split_once(open)
        .and_then(|(_, rest)| rest.split_once(close))
        .map(|(table, _)| table)
        .expect("docs/architecture.md has the allowed-graph markers");
    let made = allowed_graph_table();
    assert!(drawn == made, "docs/architecture.md's module order is not ALLOWED's; paste between the markers:\n{made}");
}

#[test]
fn the_allowed_graph_keeps_the_named_rules() {
    // The table itself may not grant what the architecture forbids.
    let mut grants = Vec::new();
    for (from, deps) in ALLOWED {
        for to in *deps {
            let rule = broken_rule(from, to);
            if rule != "not in the allowed graph" {
                grants.push(format!("{from} -> {to}: {rule}"));
            }
        }
    }
    assert!(grants.is_empty(), "ALLOWED grants forbidden edges:\n{}", grants.join("\n"));
}

#[test]
fn top_level_modules_import_no_circle() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let found = dependencies();
    for (from, to) in found.keys() {
        graph.entry(from.clone()).or_default().insert(to.clone());
    }
    // Depth-first search; a back edge closes a circle.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_string(), 1);
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|n| n == next).unwrap();
                    let mut circle = path[start..].to_vec();
                    circle.push(next.clone());
                    return Some(circle);
                }
                0 => {
                    if let Some(circle) = visit(next, graph, state, path) {
                        return Some(circle);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node.as_str()).copied().unwrap_or(0) == 0 {
            let circle = visit(node, &graph, &mut state, &mut Vec::new());
            if let Some(circle) = circle {
                let edges: Vec<String> = circle
                    .windows(2)
                    .map(|pair| {
                        format!("{} -> {}: {}", pair[0], pair[1], describe(&found[&(pair[0].clone(), pair[1].clone())]))
                    })
                    .collect();
                panic!("import circle {}:\n{}", circle.join(" -> "), edges.join("\n"));
            }
        }
    }
}

#[test]
fn only_the_audited_read_opens_a_sessions_events() {
    // `events::reads` takes a `SessionScope`; the proof of the audited read must be its
    // only implementor, or events could be read without the decision.
    let pattern = regex::Regex::new(r"impl\s+[A-Za-z_:]*SessionScope\s+for\s+(\w+)").unwrap();
    let mut files = Vec::new();
    source_files(&src_dir(), &mut files);
    let mut implementors = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for capture in pattern.captures_iter(&text) {
            implementors.push(format!("{} in {}", &capture[1], file.display()));
        }
    }
    assert_eq!(implementors.len(), 1, "{implementors:?}");
    assert!(
        implementors[0].starts_with("SessionRead in ") && implementors[0].ends_with("sessions/read.rs"),
        "{implementors:?}"
    );
}

/// The modules that may hold an event partition's connection or write SQL against a
/// partition or an aggregate table: the event store itself and the aggregates refreshed
/// from it. Everyone else goes through `events::days`, `events::reads` and the
/// functions of `analytics/`, so a second back end (a column store) is one module's
/// work, not every caller's. The benchmarks are left out of the check: they fabricate the
/// SQLite back end's own files to measure it.
const STORE_SEAMS: &[&str] = &["events", "analytics"];
const FABRICATES_FILES: &[&str] = &["bench"];

#[test]
fn only_the_event_store_and_the_aggregates_read_their_tables() {
    let opens =
        regex::Regex::new(r"\b(open_for_read|open_for_write|open_for_delete|partition_path|events_dir)\s*\(").unwrap();
    let sql = regex::Regex::new(r"\b(FROM|JOIN|INTO|UPDATE)\s+(events|agg_[a-z0-9_]+)\b").unwrap();
    let mut files = Vec::new();
    source_files(&src_dir(), &mut files);
    let mut problems = Vec::new();
    for file in files {
        let Some(module) = module_of(&file) else { continue };
        if STORE_SEAMS.contains(&module.as_str()) || FABRICATES_FILES.contains(&module.as_str()) {
            continue;
        }
        // Tests seed stores as they please: a file of tests, or the tests module that
        // closes a file.
        if file.file_name().is_some_and(|name| name == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (index, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[cfg(test)]") {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            if let Some(found) = opens.find(code).or_else(|| sql.find(code)) {
                problems.push(format!("{}:{}: {} ({code})", file.display(), index + 1, found.as_str()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "a partition or aggregate read outside events/ and analytics/ (use events::days or an analytics function):\n{}",
        problems.join("\n")
    );
}

/// What rewrites the event store, and where each is declared: private to `events/`, so
/// the only way to them is `events::store::Rewrite`, which holds the store's rewrite
/// lock (file, function).
const REWRITES: &[(&str, &str)] = &[
    ("events/days.rs", "edit"),
    ("events/compact.rs", "compact_partition"),
    ("events/compact.rs", "recompact_with_new_dictionary"),
    ("events/compact.rs", "compact_due"),
    ("events/reredact.rs", "reredact_all"),
    ("events/partitions/deletes.rs", "open_for_delete"),
    ("events/partitions/deletes.rs", "remove"),
];

/// No partition is opened for writing outside the event store: appends are the writer
/// thread's, and every rewrite (deletion, retention, repricing, re-redaction,
/// compaction, a dropped day) is reached only through `events::store::Rewrite`, whose
/// lock keeps rewriters apart across processes. The benchmarks' fixtures aside.
#[test]
fn no_partition_is_opened_for_writing_outside_the_event_store() {
    let opens = regex::Regex::new(r"\b(open_for_write|open_for_delete)\s*\(").unwrap();
    let mut problems = Vec::new();
    for (file, module, code) in production_code() {
        if module == "events" {
            continue;
        }
        for found in opens.find_iter(&code) {
            problems.push(format!("{} opens a partition for writing ({})", file.display(), found.as_str()));
        }
    }
    for (file, function) in REWRITES {
        let text = std::fs::read_to_string(src_dir().join(file)).unwrap();
        let declared = regex::Regex::new(&format!(r"(?m)^(pub(?:\([^)]*\))? )?fn {function}\b")).unwrap();
        match declared.captures(&text) {
            None => problems.push(format!("{file} no longer declares {function}: update REWRITES")),
            Some(found) if found.get(1).is_some_and(|vis| vis.as_str() == "pub ") => {
                problems.push(format!("{file}: {function} is public; only events::store::Rewrite may reach it"))
            }
            Some(_) => {}
        }
    }
    assert!(problems.is_empty(), "the event store rewritten outside its owner:\n{}", problems.join("\n"));
}

/// The files that open a write transaction on a database other than `main.db`, or on it
/// as its owner: the writer thread and the event store (`events/`), migrations and the
/// side door itself (`db/`), the developer machine's queue (`hook/`), a harness's
/// `results.db` (`evals/`), and the readiness probe, which takes and drops the lock.
const OWN_TRANSACTIONS: &[&str] = &["events/", "db/", "hook/", "evals/", "app/ops.rs"];

/// `main.db` is written outside the writer thread only through its side door
/// (`db::side_door`: an IMMEDIATE transaction with a long wait for the writer), so no
/// command or job beside a server fails with "database is locked" or upgrades a stale
/// read. The demo is checked too: it writes beside its own server.
#[test]
fn main_db_is_written_outside_the_writer_only_through_its_side_door() {
    let begins = regex::Regex::new(
        r"unchecked_transaction\(|\.transaction\(\)|transaction_with_behavior\(|Transaction::new_unchecked\(|BEGIN IMMEDIATE",
    )
    .unwrap();
    let mut files = Vec::new();
    source_files(&src_dir(), &mut files);
    let mut problems = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src_dir()).unwrap().to_string_lossy().replace('\\', "/");
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if OWN_TRANSACTIONS.iter().any(|own| relative.starts_with(own))
            || name.ends_with("tests.rs")
            || relative.starts_with("bench/")
        {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for found in begins.find_iter(code) {
            problems.push(format!("{relative} begins its own transaction ({})", found.as_str()));
        }
    }
    assert!(
        problems.is_empty(),
        "main.db written around the writer and the side door (use db::side_door::write):\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_module_is_loaded_from_an_odd_path() {
    let mut files = Vec::new();
    source_files(&src_dir(), &mut files);
    let odd: Vec<String> = files
        .iter()
        .filter(|file| {
            std::fs::read_to_string(file).unwrap().lines().any(|line| line.trim_start().starts_with("#[path"))
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(odd.is_empty(), "#[path] modules: {odd:?}");
}

/// The table names a piece of SQL DDL creates.
fn created_tables(ddl: &str) -> BTreeSet<String> {
    let create = regex::Regex::new(r"CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)").unwrap();
    create.captures_iter(ddl).map(|c| c[1].to_string()).collect()
}

/// One row of `docs/architecture.md`'s ownership table: the tables of its first cell,
/// and the modules its owner cell names, the owner first.
struct OwnershipRow {
    tables: Vec<String>,
    modules: Vec<String>,
}

fn ownership_rows() -> Vec<OwnershipRow> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md")).unwrap();
    let section = doc
        .split("## Who owns which table")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("docs/architecture.md has a section \"Who owns which table\"");
    let table_name = regex::Regex::new(r"`([a-z_]+)`").unwrap();
    let module_name = regex::Regex::new(r"`([a-z_]+)(?:/|::|`)").unwrap();
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').collect();
            OwnershipRow {
                tables: table_name.captures_iter(cells[1]).map(|c| c[1].to_string()).collect(),
                modules: module_name.captures_iter(cells[2]).map(|c| c[1].to_string()).collect(),
            }
        })
        .collect()
}

/// Every source file's production code (what precedes its test module) with its
/// top-level module; test files and the benchmarks' and demo's fixtures left out.
fn production_code() -> Vec<(PathBuf, String, String)> {
    let mut files = Vec::new();
    source_files(&src_dir(), &mut files);
    files
        .into_iter()
        .filter_map(|file| {
            let module = module_of(&file)?;
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name.ends_with("tests.rs") || module == "bench" || module == "demo" {
                return None;
            }
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default().to_string();
            Some((file, module, code))
        })
        .collect()
}

/// `docs/architecture.md`'s ownership table names an owner for every table of
/// `schema.sql` and `schema-events.sql`, and names no table that does not exist (a
/// harness's `results.db` tables are the eval service's, from its own DDL).
#[test]
fn every_table_of_the_schema_has_its_owner_in_the_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    let mut tables = created_tables(&read("schema.sql"));
    tables.extend(created_tables(&read("schema-events.sql")));
    tables.extend(created_tables(&read("assets/results-schema.sql")));
    let owned: BTreeSet<String> = ownership_rows().into_iter().flat_map(|row| row.tables).collect();
    let unowned: Vec<&String> = tables.difference(&owned).collect();
    assert!(unowned.is_empty(), "tables with no owner in docs/architecture.md: {unowned:?}");
    let not_tables: Vec<&String> = owned.iter().filter(|name| !tables.contains(*name)).collect();
    assert!(not_tables.is_empty(), "named as tables but created by no schema: {not_tables:?}");
}

/// Only the modules its row of `docs/architecture.md`'s ownership table names write a
/// table (`INSERT`, `UPDATE`, `DELETE`, `REPLACE`); reads are checked by
/// [`sql_reads_follow_the_layering`]. Test code and fixtures may write anything.
#[test]
fn only_a_tables_owners_write_it() {
    let mut writers: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in ownership_rows() {
        for table in row.tables {
            writers.entry(table).or_default().extend(row.modules.iter().cloned());
        }
    }
    let write =
        regex::Regex::new(r"\b(?:INSERT(?: OR (?:REPLACE|IGNORE))? INTO|UPDATE|DELETE FROM|REPLACE INTO)\s+([a-z_]+)")
            .unwrap();
    let mut problems = BTreeSet::new();
    for (file, module, code) in production_code() {
        for found in write.captures_iter(&code) {
            if let Some(owners) = writers.get(&found[1])
                && !owners.contains(&module)
            {
                problems.insert(format!("{} writes {} (owners: {owners:?})", file.display(), &found[1]));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "writes outside a table's owners:\n{}",
        problems.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// Reads that join a table of a module the reader may not depend on (`ALLOWED`): the
/// SQL crossings that remain. The list only shrinks: a new crossing fails the test, and
/// so does one that is gone but still listed. (reader module, table)
const KNOWN_SQL_CROSSINGS: &[(&str, &str)] =
    &[("analytics", "pr_rollups"), ("analytics", "pull_requests"), ("analytics", "repos")];

/// A module's SQL reads (`FROM`, `JOIN`) only tables of modules it may depend on, but
/// for [`KNOWN_SQL_CROSSINGS`]; test code and fixtures aside.
#[test]
fn sql_reads_follow_the_layering() {
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    for row in ownership_rows() {
        let Some(first) = row.modules.first() else { continue };
        for table in row.tables {
            owner.entry(table).or_insert_with(|| first.clone());
        }
    }
    let allowed: BTreeMap<&str, BTreeSet<&str>> =
        ALLOWED.iter().map(|(module, deps)| (*module, deps.iter().copied().collect())).collect();
    let read = regex::Regex::new(r"\b(?:FROM|JOIN)\s+([a-z_]+)").unwrap();
    let mut found: BTreeMap<(String, String), String> = BTreeMap::new();
    for (file, module, code) in production_code() {
        for table in read.captures_iter(&code) {
            let Some(table_owner) = owner.get(&table[1]) else { continue };
            let may = allowed.get(module.as_str()).is_some_and(|deps| deps.contains(table_owner.as_str()));
            if *table_owner != module && !may {
                found.entry((module.clone(), table[1].to_string())).or_insert_with(|| file.display().to_string());
            }
        }
    }
    let known: BTreeSet<(String, String)> =
        KNOWN_SQL_CROSSINGS.iter().map(|(m, t)| (m.to_string(), t.to_string())).collect();
    let new: Vec<String> = found
        .iter()
        .filter(|(pair, _)| !known.contains(*pair))
        .map(|((module, table), file)| format!("{module} reads {table} ({file})"))
        .collect();
    assert!(new.is_empty(), "SQL reads across the layering (move the read to the table's owner):\n{}", new.join("\n"));
    let gone: Vec<&(String, String)> = known.iter().filter(|pair| !found.contains_key(*pair)).collect();
    assert!(gone.is_empty(), "crossings gone; remove them from KNOWN_SQL_CROSSINGS: {gone:?}");
}

/// Every environment read is in `config/`: Sightline's settings in its typed sections,
/// the machine's own variables (`HOME`, `CODEX_HOME`, `COLUMNS`, …) in
/// `config::machine`, so none is read unvalidated or unlisted elsewhere.
#[test]
fn the_environment_is_read_only_in_config() {
    let mut files = Vec::new();
    source_files(&src_dir(), &mut files);
    let config = src_dir().join("config");
    let reads = regex::Regex::new(r"env::vars?(_os)?\(").unwrap();
    let outside: Vec<String> = files
        .iter()
        .filter(|file| !file.starts_with(&config) && *file != &src_dir().join("config.rs"))
        .filter(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            reads.is_match(text.split("#[cfg(test)]").next().unwrap_or_default())
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(
        outside.is_empty(),
        "environment read outside config/ (use config::machine or a Config section): {outside:?}"
    );
}
