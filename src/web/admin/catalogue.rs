//! `/admin/price-tables/catalogue`: an administrator uploads LiteLLM's price catalogue
//! (`model_prices_and_context_window.json`), sees what it would change in each agent's
//! table (added, changed; nothing is removed), and applies it as new, audited table
//! revisions, the web twin of `sightline prices import --litellm [--apply]`
//! (`pricing::Catalogue::plan`).
//!
//! Invariants: only an administrator's request reaches the body (the extractor runs
//! first), and one upload is at most [`MAX_CATALOGUE_BYTES`]; the file previewed is
//! kept as `<data_dir>/catalogue/pending-<sha256>.json` (one at a time) and applying
//! names it by its SHA-256, checked as 64 hexadecimal digits and against the file's
//! own digest, so no path is ever taken from the request; each table is stored as an
//! upload is (`pricing::stage_operator_table`, its `PRICE_TABLE_UPLOADED` row with source
//! `litellm` in the transaction that places it), and is in force after a restart.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Multipart, State};
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{Field, Flash, Form, Row, Section, done};
use crate::http::errors::{AppError, PageError};
use crate::http::extract::Form as FormBody;
use crate::pricing::{self, Catalogue, PriceBook};
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

/// The largest catalogue taken (LiteLLM's 1.110.2 file is 3.5 MB).
pub const MAX_CATALOGUE_BYTES: usize = 32 << 20;
pub const PATH: &str = "/admin/price-tables/catalogue";
const APPLY_PATH: &str = "/admin/price-tables/catalogue/apply";

/// The upload form on the price-tables page.
pub fn upload_section() -> Section {
    Section::new("catalogue", "Import LiteLLM's price catalogue")
        .intro("Choose model_prices_and_context_window.json (in the litellm Python package as litellm/model_prices_and_context_window_backup.json, or from BerriAI/litellm). You see what it changes in each agent's table before anything is stored; the same as sightline prices import --litellm.")
        .form(Form::new(PATH, "Preview the changes").field(Field::file("catalogue", "Catalogue (JSON)", ".json")))
}

fn pending_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("catalogue")
}

fn pending_path(data_dir: &Path, sha256: &str) -> PathBuf {
    pending_dir(data_dir).join(format!("pending-{sha256}.json"))
}

fn today(state: &AppState) -> String {
    crate::model::rfc3339_ms(state.clock.now_ms())[..10].to_string()
}

/// Reads and plans a catalogue: blocking work (a few megabytes of JSON, every table).
async fn plan(
    bytes: Vec<u8>,
    data_dir: PathBuf,
    today: String,
) -> Result<(Catalogue, Vec<pricing::Planned>, Vec<u8>), AppError> {
    tokio::task::spawn_blocking(move || {
        let catalogue =
            Catalogue::litellm(&bytes, &today).map_err(|err| AppError::bad_request("catalogue", err.to_string()))?;
        let on_disk = PriceBook::load(&data_dir).map_err(|err| AppError::Internal(err.to_string()))?;
        let planned = catalogue.plan(&on_disk, &today).map_err(|why| AppError::bad_request("catalogue", why))?;
        Ok((catalogue, planned, bytes))
    })
    .await
    .map_err(|err| AppError::Internal(err.to_string()))?
}

/// `POST /admin/price-tables/catalogue`: the uploaded catalogue's changes, shown on the
/// page with a button that applies them.
pub async fn preview(
    State(state): State<Arc<AppState>>,
    _: Administrator,
    mut multipart: Multipart,
) -> Result<Response, PageError> {
    let mut bytes = None;
    while let Some(field) =
        multipart.next_field().await.map_err(|err| AppError::bad_request("catalogue", err.body_text()))?
    {
        if field.name() == Some("catalogue") {
            let body = field.bytes().await.map_err(|err| AppError::bad_request("catalogue", err.body_text()))?;
            bytes = Some(body.to_vec());
        }
    }
    let bytes = bytes.filter(|bytes| !bytes.is_empty()).ok_or_else(|| {
        AppError::bad_request("catalogue", "choose the catalogue file (model_prices_and_context_window.json)")
    })?;
    let data_dir = state.config.data_dir.clone();
    let (catalogue, planned, bytes) = plan(bytes, data_dir.clone(), today(&state)).await?;
    let sha256 = catalogue.sha256.clone();
    if !planned.is_empty() {
        let path = pending_path(&data_dir, &sha256);
        tokio::task::spawn_blocking(move || keep_pending(&path, &bytes))
            .await
            .map_err(|err| AppError::Internal(err.to_string()))?
            .map_err(|err| AppError::Internal(format!("cannot keep the catalogue for applying: {err}")))?;
    }
    let mut section = Section::new("catalogue-preview", "What the catalogue changes")
        .intro(format!(
            "{} chat models of Anthropic, OpenAI and Google read (sha256 {}). Nothing is stored until you apply; nothing is removed (a model the catalogue dropped keeps its price).",
            catalogue.len(),
            sha256
        ))
        .columns(vec!["Agent", "Revision", "Change", "Model", "Prices ($ per million tokens)"])
        .empty("The tables on disk already price every model as the catalogue does: nothing to apply.");
    for table in &planned {
        for change in &table.changes {
            section.rows.push(Row::new(vec![
                Cell::text(table.agent.as_str()),
                Cell::text(table.table.revision()),
                Cell::text(change.change),
                Cell::text(change.model.clone()),
                Cell::text(change.detail.clone()),
            ]));
        }
    }
    if !planned.is_empty() {
        let changes: usize = planned.iter().map(|table| table.changes.len()).sum();
        section = section.form(
            Form::new(APPLY_PATH, format!("Apply {changes} changes to {} tables", planned.len()))
                .field(Field::hidden("sha256", sha256)),
        );
    }
    super::prices::render(&state, Flash::default(), Some(section)).await
}

/// Keeps `bytes` as the one pending catalogue, the others removed.
fn keep_pending(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().expect("a pending file is in its directory");
    std::fs::create_dir_all(dir)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.path() != path {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    std::fs::write(path, bytes)
}

#[derive(Deserialize)]
pub struct Apply {
    sha256: Option<String>,
}

/// `POST /admin/price-tables/catalogue/apply`: the previewed catalogue stored as new
/// table revisions, each audited.
pub async fn apply(
    State(state): State<Arc<AppState>>,
    Administrator(caller): Administrator,
    FormBody(form): FormBody<Apply>,
) -> Result<Redirect, PageError> {
    let sha256 = form.sha256.unwrap_or_default();
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(
            AppError::bad_request("sha256", "is the previewed catalogue's SHA-256: 64 hexadecimal digits").into()
        );
    }
    let data_dir = state.config.data_dir.clone();
    let path = pending_path(&data_dir, &sha256);
    let bytes = tokio::task::spawn_blocking(move || std::fs::read(path))
        .await
        .map_err(|err| AppError::Internal(err.to_string()))?
        .map_err(|_| AppError::bad_request("sha256", "no catalogue with this SHA-256 is waiting: upload it again"))?;
    if crate::model::sha256_hex(&bytes) != sha256 {
        return Err(
            AppError::bad_request("sha256", "the waiting catalogue is not the one previewed: upload it again").into()
        );
    }
    let (catalogue, planned, _) = plan(bytes, data_dir.clone(), today(&state)).await?;
    let mut stored = Vec::new();
    for table in planned {
        let more = serde_json::json!({
            "source": "litellm", "catalogue_sha256": catalogue.sha256, "changes": table.changes.len(),
        });
        super::prices::store_table(&state, &caller.user.id, table.agent, table.json, "catalogue", more).await?;
        let agent = table.agent;
        stored.push(agent.as_str());
    }
    let _ = std::fs::remove_file(pending_path(&data_dir, &sha256));
    let message = if stored.is_empty() {
        "the tables on disk already price every model as the catalogue does".to_string()
    } else {
        format!(
            "the catalogue's tables for {} are stored; restart the server to price with them, then run reprice-events-apply to price the history",
            stored.join(", ")
        )
    };
    Ok(done(super::prices::PATH, &message))
}
