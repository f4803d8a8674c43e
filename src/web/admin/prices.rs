//! `/admin/price-tables`: every agent's table in force (embedded or the operator's
//! file), how it differs from the embedded one model by model, an upload form for an
//! operator table, and the reprice report (`reprice-events`: what stored costs would
//! become under the tables on disk).
//!
//! Invariants: an upload is validated exactly as a file in `<data_dir>/price-tables/`
//! is at start-up, staged beside its place and renamed into it in the transaction that
//! writes its `PRICE_TABLE_UPLOADED` audit row (`pricing::stage_operator_table`), so
//! neither lands without the other; the server prices with the tables it
//! started with, so an upload is in force after a restart, and the page says which
//! agents wait for one.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{AdminPage, Field, Flash, Row, Section, done, when};
use crate::audit::{self, Action, Entry};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::{Form, Query};
use crate::jobs::runs;
use crate::model::AgentType;
use crate::pricing::{self, PriceBook, PriceTable};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

pub(super) const PATH: &str = "/admin/price-tables";

fn source(table: &PriceTable) -> String {
    table.source().map_or("embedded".to_string(), |path| path.display().to_string())
}

fn on_disk_table<'a>(files: &'a [PriceTable], embedded: &'a PriceBook, agent: AgentType) -> &'a PriceTable {
    files.iter().find(|t| t.agent() == agent).unwrap_or_else(|| embedded.table(agent))
}

fn diff_rows(table: &PriceTable, base: &PriceTable) -> Vec<Row> {
    pricing::diff_tables(table, base)
        .into_iter()
        .map(|diff| {
            Row::new(vec![
                Cell::text(table.agent().as_str()),
                Cell::text(diff.model),
                Cell::text(diff.change),
                Cell::text(diff.detail),
            ])
        })
        .collect()
}

pub async fn page(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    Query(flash): Query<Flash>,
) -> Result<Response, PageError> {
    render(&state, flash, None).await
}

/// The page, with `preview` (what an uploaded catalogue would change) first when given.
pub(super) async fn render(state: &AppState, flash: Flash, preview: Option<Section>) -> Result<Response, PageError> {
    // Reading and compiling the tables is blocking work.
    let data_dir = state.config.data_dir.clone();
    let (embedded, on_disk) =
        tokio::task::spawn_blocking(move || (PriceBook::embedded(), pricing::operator_tables(&data_dir)))
            .await
            .map_err(|err| AppError::Internal(err.to_string()))?;
    let embedded = embedded.map_err(|err| AppError::Internal(err.to_string()))?;
    let (last, unpriced) = state
        .read(|conn| {
            Ok::<_, crate::db::DbError>((
                runs::history(conn, Some("reprice-events"), 5)?,
                crate::sessions::unpriced::all(conn)?,
            ))
        })
        .await?;
    let [tables, against_embedded, pending] = table_sections(&state.prices, &embedded, &on_disk);
    let mut page = AdminPage::new(
        PATH,
        "Price tables",
        "The prices every event's cost is computed with, in $ per million tokens.",
        flash,
    );
    if let Some(preview) = preview {
        page = page.section(preview);
    }
    Ok(page
        .section(tables)
        .section(against_embedded)
        .section(pending)
        .section(unpriced_section(&unpriced, &state.prices, state.clock.now_ms()))
        .section(super::catalogue::upload_section())
        .section(upload_section(&state.config.data_dir))
        .section(reprice_section(last))
        .respond())
}

/// The tables in force, how they differ from the embedded ones, and what an upload on
/// disk would change at the next start.
fn table_sections(
    in_force: &PriceBook,
    embedded: &PriceBook,
    on_disk: &Result<Vec<PriceTable>, pricing::PricingError>,
) -> [Section; 3] {
    // An agent's table on disk: the operator's file laid over the embedded table, as the
    // next start-up loads it (the embedded tables compiled once, not twice).
    let disk_table = |files, agent| on_disk_table(files, embedded, agent);
    let mut tables = Section::new("in-force", "Tables in force")
        .columns(vec!["Agent", "Source", "Revision", "Models", "ETag", "On disk"]);
    let mut against_embedded = Section::new("diff", "Differences from the embedded tables")
        .columns(vec!["Agent", "Model", "Change", "Prices ($ per million tokens)"])
        .empty("Every table in force is the embedded one.");
    let mut pending = Section::new("pending", "Uploaded, in force after a restart")
        .columns(vec!["Agent", "Model", "Change", "Prices ($ per million tokens)"])
        .empty("Nothing waits for a restart.");
    for table in in_force.tables() {
        let agent = table.agent();
        let disk = match &on_disk {
            Ok(files) if disk_table(files, agent).etag() == table.etag() => "the same".to_string(),
            Ok(files) => format!("revision {} waits for a restart", disk_table(files, agent).revision()),
            Err(err) => format!("unusable: {err}"),
        };
        tables.rows.push(Row::new(vec![
            Cell::text(agent.as_str()),
            Cell::text(source(table)),
            Cell::text(table.revision()),
            Cell::count(table.model_ids().count() as i64),
            Cell::text(table.etag().trim_matches('"')),
            Cell::text(disk),
        ]));
        against_embedded.rows.extend(diff_rows(table, embedded.table(agent)));
        if let Ok(files) = &on_disk
            && disk_table(files, agent).etag() != table.etag()
        {
            pending.rows.extend(diff_rows(disk_table(files, agent), table));
        }
    }
    if let Err(err) = &on_disk {
        pending.intro = format!("The server would refuse to start with the files on disk: {err}");
    }
    [tables, against_embedded, pending]
}

/// The models the tables in force do not price, with the tokens counted under them and
/// what their agent said they cost: `/admin/health` and this page show the same section.
pub(super) fn unpriced_section(
    found: &[crate::sessions::unpriced::Unpriced],
    book: &PriceBook,
    now_ms: i64,
) -> Section {
    let mut section = Section::new("unpriced", "Models without a price")
        .intro(
            "Their tokens are counted and cost $0 in every figure until a price arrives: import a catalogue (sightline prices import --litellm) or upload a table, restart, then run reprice-events-apply to price their history.",
        )
        .columns(vec![
            "Agent",
            "Model",
            "Events",
            "Input",
            "Output",
            "Cache reads",
            "Cache writes",
            "Reasoning",
            "Agent-reported cost",
            "Last seen",
        ])
        .empty("Every model seen has a price.");
    for model in still_unpriced(found, book) {
        section.rows.push(Row::new(vec![
            Cell::text(model.agent.as_str()),
            Cell::text(model.model.clone()),
            Cell::count(model.events),
            Cell::count(model.input_tokens),
            Cell::count(model.output_tokens),
            Cell::count(model.cache_read_tokens),
            Cell::count(model.cache_write_tokens),
            Cell::count(model.reasoning_tokens),
            if model.client_cost_nusd > 0 { Cell::usd(model.client_cost_nusd) } else { Cell::text("not reported") },
            Cell::when(model.last_seen_ms, now_ms),
        ]));
    }
    section
}

/// The models of `found` the tables in force still do not price.
pub(crate) fn still_unpriced<'a>(
    found: &'a [crate::sessions::unpriced::Unpriced],
    book: &'a PriceBook,
) -> impl Iterator<Item = &'a crate::sessions::unpriced::Unpriced> {
    let probe = crate::model::Usage { input_tokens: 1, ..Default::default() };
    found.iter().filter(move |model| !book.price(model.agent, Some(&model.model), &probe).known_model)
}

fn upload_section(data_dir: &std::path::Path) -> Section {
    let agents: Vec<&str> = AgentType::ALL.iter().map(|agent| agent.as_str()).collect();
    Section::new("upload", "Upload an operator table")
        .intro(format!(
            "Paste a whole price-table file (the format of `sightline prices show` and of the embedded tables, `\"format\": \"sightline.price-table.v1\"`). It is checked as at start-up and stored in {}; restart the server to price with it.",
            pricing::overrides_dir(data_dir).display()
        ))
        .form(
            super::Form::new(PATH, "Upload")
                .field(Field::select("agent", "Agent", "claude_code", &agents))
                .field(Field::textarea("table", "Table (JSON)", "")),
        )
}

fn reprice_section(last: Vec<runs::JobRun>) -> Section {
    let mut reprice = Section::new("reprice", "Reprice report")
        .intro("What every stored cost would become under the tables on disk, per agent and model, without changing anything (the reprice-events job). Applying it (reprice-events-apply) runs on the server host.")
        .columns(vec!["Started", "Outcome", "Rows that would change", "Report"])
        .empty("No reprice report has run.")
        .form(super::Form::new("/admin/jobs/reprice-events/run", "Run the reprice report"));
    reprice.rows = last
        .into_iter()
        .map(|run| {
            Row::new(vec![
                when(Some(run.started_at_ms)),
                Cell::text(run.outcome.as_str()),
                run.rows_touched.map_or(Cell::text("—"), Cell::count),
                Cell::text(run.error.or(run.summary).unwrap_or_default()),
            ])
        })
        .collect();
    reprice
}

/// Stores `json` as `agent`'s operator table, as an upload and a catalogue import do:
/// validated as at start-up (an invalid table is a 400 naming `field`), staged beside
/// its place, then its `PRICE_TABLE_UPLOADED` row (with `more` added to the detail) and
/// the rename in one transaction, so neither lands without the other. Answers the
/// stored revision.
pub(super) async fn store_table(
    state: &AppState,
    actor_id: &str,
    agent: AgentType,
    json: String,
    field: &'static str,
    more: serde_json::Value,
) -> Result<String, PageError> {
    let data_dir = state.config.data_dir.clone();
    let staged = tokio::task::spawn_blocking(move || pricing::stage_operator_table(&data_dir, agent, &json))
        .await
        .map_err(|err| AppError::Internal(err.to_string()))?
        .map_err(|err| match err {
            Ok(invalid) => AppError::bad_request(field, invalid.to_string()),
            Err(io) => AppError::Internal(format!("cannot write the price table: {io}")),
        })?;
    let revision = staged.table.revision().to_string();
    let mut detail = serde_json::json!({
        "agent": agent.as_str(),
        "revision": revision,
        "models": staged.table.model_ids().count(),
    });
    if let (Some(detail), serde_json::Value::Object(more)) = (detail.as_object_mut(), more) {
        detail.extend(more);
    }
    let (actor, now_ms) = (actor_id.to_string(), state.clock.now_ms());
    // The audit row first, the rename last, in one transaction: a failed rename rolls the
    // row back, and a failed row leaves the table unplaced.
    state
        .write(move |tx| {
            let entry = Entry {
                actor_id: Some(&actor),
                action: Action::PriceTableUploaded,
                subject_user_id: None,
                target: Some(agent.as_str()),
                detail,
            };
            if let Err(err) = audit::record(tx, &entry, now_ms) {
                staged.discard();
                return Err(err);
            }
            staged
                .commit()
                .map_err(|source| crate::db::DbError::Io { context: "placing the price table".into(), source })
        })
        .await?;
    Ok(revision)
}

#[derive(Deserialize)]
pub struct UploadForm {
    agent: Option<String>,
    table: Option<String>,
}

/// `POST /admin/price-tables`: an operator table, validated and stored.
pub async fn upload(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    Form(form): Form<UploadForm>,
) -> Result<Redirect, PageError> {
    let named = form.agent.unwrap_or_default();
    let agent = AgentType::parse(&named).ok_or_else(|| {
        AppError::bad_request("agent", format!("agent must be one of {}, not {named:?}", AgentType::expected()))
    })?;
    let json = form.table.unwrap_or_default();
    if json.trim().is_empty() {
        return Err(AppError::bad_request("table", "paste the table's JSON").into());
    }
    let revision = store_table(&state, &caller.user.id, agent, json, "table", serde_json::json!({})).await?;
    Ok(done(
        PATH,
        &format!(
            "{}'s table revision {} is stored; restart the server to price with it, and run the reprice report to see what it changes",
            agent.as_str(),
            revision
        ),
    ))
}
