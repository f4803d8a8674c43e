//! `/admin/adapters`: which agents and hook versions are reporting, from which machines
//! and when last, and the silent gaps: people who stopped reporting, and people whose
//! adapter sends events without usage. Read from `sessions::adapters`. Drift, so the
//! next vendor change is visible the day it arrives: the agents' own versions and who
//! runs which, what they send that no mapping uses (`sessions::drift`), the models
//! without a price, and what their agents reported loading (`sessions::capabilities`).
//! And the hook
//! binaries this server hands out per platform (`crate::hook_binaries`), with the
//! platforms a release has that it does not, so the administrator sees what to add.
//!
//! Invariant: read-only; the page links each gap to the install page a person would
//! use to fix it.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;

use super::identities::Identities;
use super::{AdminPage, Flash, Row, Section, when};
use crate::db::DbError;
use crate::http::errors::PageError;
use crate::http::extract::Query;
use crate::sessions::adapters::{self, GapLine};
use crate::sessions::{capabilities, drift};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const PATH: &str = "/admin/adapters";

/// What the drift sections read.
struct Drift {
    agent_versions: Vec<adapters::AgentVersionLine>,
    unmapped: Vec<drift::UnmappedLine>,
    unpriced: Vec<crate::sessions::unpriced::Unpriced>,
    capabilities: Vec<capabilities::CapabilityLine>,
}

impl Drift {
    fn read(conn: &rusqlite::Connection, now_ms: i64) -> Result<Drift, DbError> {
        Ok(Drift {
            agent_versions: adapters::agent_versions(conn, now_ms)?,
            unmapped: drift::recent(conn, now_ms)?,
            unpriced: crate::sessions::unpriced::all(conn)?,
            capabilities: capabilities::across_people(conn, now_ms)?,
        })
    }

    fn sections(&self, now_ms: i64) -> [Section; 3] {
        let mut versions = Section::new("agent-versions", "Agent versions (last 30 days)")
            .intro("The agents' own versions, as their export (service.version) or Codex's rollout says; \"not reported\" is a hook of an agent that does not say (Claude Code's and Gemini CLI's hooks). \"Latest for\" names each person whose most recent session of the agent ran it.")
            .columns(vec!["Agent", "Version", "Sessions", "People", "Latest for", "Last seen"])
            .empty("Nothing has reported in the last 30 days.");
        versions.rows = self
            .agent_versions
            .iter()
            .map(|line| {
                Row::new(vec![
                    Cell::text(line.agent_type.clone()),
                    Cell::text(line.agent_version.clone().unwrap_or_else(|| "not reported".into())),
                    Cell::count(line.sessions),
                    Cell::count(line.people),
                    Cell::text(line.latest_for.join(", ")),
                    when(Some(line.last_seen_ms)),
                ])
            })
            .collect();
        let mut unmapped = Section::new("unmapped", "Received and not mapped (last 30 days)")
            .intro("OTLP event names we skip and attributes of mapped events no mapping reads, per agent version, newest first. \"New\" means no earlier version sent it: what a vendor just changed. docs/otel.md says what each mapping takes.")
            .columns(vec!["Agent", "Version", "Kind", "Event", "Name", "Records", "First seen", "New"])
            .empty("Everything received in the last 30 days was mapped.");
        unmapped.rows = self
            .unmapped
            .iter()
            .map(|line| {
                Row::new(vec![
                    Cell::text(line.agent_type.clone()),
                    Cell::text(line.agent_version.clone()),
                    Cell::text(line.kind.clone()),
                    Cell::text(line.event_name.clone()),
                    Cell::text(line.name.clone()),
                    Cell::count(line.records),
                    Cell::when(line.first_seen_ms, now_ms),
                    Cell::text(match &line.also_in {
                        Some(version) => format!("no: also in {version}"),
                        None => "new".into(),
                    }),
                ])
            })
            .collect();
        let mut loaded = Section::new("capabilities", "What the agents loaded (last 90 days)")
            .intro("MCP servers, plugins, hooks and skills as the agents report them (Claude Code's inventory events), by how many people have each.")
            .columns(vec!["Agent", "Kind", "Name", "People", "Reports", "Last seen"])
            .empty("No agent has reported what it loaded (Claude Code does with its OpenTelemetry export on).");
        loaded.rows = self
            .capabilities
            .iter()
            .map(|line| {
                Row::new(vec![
                    Cell::text(line.agent_type.clone()),
                    Cell::text(line.kind.clone()),
                    Cell::text(line.name.clone()),
                    Cell::count(line.people),
                    Cell::count(line.records),
                    when(Some(line.last_seen_ms)),
                ])
            })
            .collect();
        [versions, unmapped, loaded]
    }
}

fn gap_rows(lines: Vec<GapLine>) -> Vec<Row> {
    lines
        .into_iter()
        .map(|line| {
            Row::new(vec![
                Cell::text(line.email),
                Cell::text(line.agents),
                when(Some(line.last_seen_ms)),
                Cell::count(line.sessions),
            ])
        })
        .collect()
}

/// The hook binary per platform that `install.sh` downloads, and the platforms without one.
fn hook_binaries_section(data_dir: &std::path::Path) -> Section {
    let mut section = Section::new("hook-binaries", "Hook binaries handed to developer machines")
        .intro("What the one line on /install (curl -fsSL <ingest>/install.sh | sh) downloads, by platform, with the SHA-256 it checks. Add a release's binary for another platform with: sightline hook-binaries add <file> (docs/operations.md).")
        .columns(vec!["Platform", "Served from", "SHA-256", "Size"])
        .empty("No hook binary is available.");
    let listed = crate::hook_binaries::list(data_dir).unwrap_or_default();
    for platform in crate::model::platform::Platform::RELEASED {
        let row = match listed.iter().find(|binary| binary.platform == platform) {
            Some(binary) => {
                let origin = if binary.registered { "registered" } else { "built in: this server's own" };
                let size = std::fs::metadata(&binary.path).map(|m| format!("{:.1} MB", m.len() as f64 / 1e6));
                vec![
                    Cell::text(platform.to_string()),
                    Cell::text(format!("{} ({origin})", binary.path.display())),
                    Cell::text(binary.sha256.clone()),
                    Cell::text(size.unwrap_or_else(|_| "missing".into())),
                ]
            }
            None => vec![
                Cell::text(platform.to_string()),
                Cell::text("none: machines of this platform cannot use the one line"),
                Cell::text(""),
                Cell::text(""),
            ],
        };
        section.rows.push(Row::new(row));
    }
    section
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    render(&state, flash).await
}

/// The page, saying `flash` (what a form just did).
pub async fn render(state: &AppState, flash: Flash) -> Result<Response, PageError> {
    let now_ms = state.clock.now_ms();
    let ((versions, machines, stopped, without_usage, sources), identities, drift) = state
        .read(move |conn| {
            Ok::<_, DbError>((
                (
                    adapters::versions(conn, now_ms)?,
                    adapters::machines(conn, now_ms)?,
                    adapters::stopped_reporting(conn, now_ms)?,
                    adapters::without_usage(conn, now_ms)?,
                    adapters::sources(conn, now_ms)?,
                ),
                Identities::read(conn, now_ms)?,
                Drift::read(conn, now_ms)?,
            ))
        })
        .await?;
    let [agent_versions, unmapped, capabilities] = drift.sections(now_ms);
    let unpriced = super::prices::unpriced_section(&drift.unpriced, &state.prices, now_ms);

    let mut by_version = Section::new("versions", "Agents and hook versions (last 30 days)")
        .columns(vec!["Agent", "Hook or exporter version", "Sessions", "People", "Machines", "Last seen"])
        .empty("Nothing has reported in the last 30 days. Send people to /install.");
    by_version.rows = versions
        .into_iter()
        .map(|line| {
            Row::new(vec![
                Cell::text(line.agent_type),
                Cell::text(line.cli_version),
                Cell::count(line.sessions),
                Cell::count(line.people),
                Cell::count(line.machines),
                when(Some(line.last_seen_ms)),
            ])
        })
        .collect();
    let mut by_source = Section::new("sources", "Hook, OTLP or both, per person and agent (last 30 days)")
        .intro("Sessions by the hook only, by the agent's own OpenTelemetry export only (settings from /install), and by both (each call, request and prompt stored once; docs/otel.md).")
        .columns(vec!["Person", "Agent", "Source", "Hook only", "OTLP only", "Both", "Last seen"])
        .empty("Nothing has reported in the last 30 days.");
    by_source.rows = sources
        .into_iter()
        .map(|line| {
            Row::new(vec![
                Cell::text(line.email.clone()),
                Cell::text(line.agent_type.clone()),
                Cell::text(line.source()),
                Cell::count(line.hook_only),
                Cell::count(line.otlp_only),
                Cell::count(line.both),
                when(Some(line.last_seen_ms)),
            ])
        })
        .collect();
    let [services, unknown, mappings] = identities.sections();
    let binaries = hook_binaries_section(&state.config.data_dir);
    let mut stopped_section = Section::new("stopped", "Stopped reporting")
        .intro("Reported in the 30 days before the last 7, and nothing since: a broken hook, a new machine without it, or a holiday.")
        .columns(vec!["Person", "Agents", "Last seen", "Sessions (37 days)"])
        .empty("Everyone who reported before still does.");
    stopped_section.rows = gap_rows(stopped);
    let mut no_usage = Section::new("without-usage", "Reporting without usage")
        .intro("Events arrived in the last 30 days but not one token: the adapter does not see usage, so their spend is missing from every figure.")
        .columns(vec!["Person", "Agents", "Last seen", "Sessions (30 days)"])
        .empty("Every reporting adapter sends usage.");
    no_usage.rows = gap_rows(without_usage);
    let mut by_machine = Section::new("machines", "Machines (last 90 days, latest first)")
        .columns(vec!["Machine", "Person", "Agent", "Hook version", "OS", "Last seen"])
        .empty("No machine has reported.");
    by_machine.rows = machines
        .into_iter()
        .map(|line| {
            Row::new(vec![
                Cell::text(line.machine_id),
                Cell::text(line.email),
                Cell::text(line.agent_type),
                Cell::text(line.cli_version),
                Cell::text(line.os),
                when(Some(line.last_seen_ms)),
            ])
        })
        .collect();
    Ok(AdminPage::new(
        PATH,
        "Adapters",
        "Whether telemetry is arriving, and from where. Installation instructions: /install.",
        flash,
    )
    .section(agent_versions)
    .section(unmapped)
    .section(unpriced)
    .section(by_version)
    .section(capabilities)
    .section(binaries)
    .section(by_source)
    .section(services)
    .section(unknown)
    .section(mappings)
    .section(stopped_section)
    .section(no_usage)
    .section(by_machine)
    .respond())
}
