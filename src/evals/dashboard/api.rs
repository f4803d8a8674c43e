//! The dashboard's JSON API (docs/evals-dashboard.md) and exports. Shapes are the spec's; new keys
//! are additive (`planned_cells`, `running`, `last_activity` on run summaries).

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{DashState, params};
use crate::evals::compare;
use crate::evals::db::{self, EvalsError};
use crate::evals::leaderboard;
use crate::evals::report::csv_fields;
use crate::evals::text::safe_file_stem;
use crate::http::errors::AppError;
use crate::http::extract::{Json, Path, Query};

type ApiResult = Result<Json<Value>, AppError>;

pub async fn runs(State(state): State<Arc<DashState>>) -> ApiResult {
    let runs = state.query(db::runs).await?;
    Ok(Json(json!({ "runs": runs })))
}

pub async fn results_page(
    State(state): State<Arc<DashState>>,
    Path(run): Path<String>,
    Query(raw): Query<HashMap<String, String>>,
) -> ApiResult {
    let query = params::results_query(&raw)?;
    let (run_name, q, shared) = (run.clone(), query.clone(), state.clone());
    let (total, results) = state
        .query(move |conn| {
            db::require_run(conn, &run_name)?;
            let total = super::cache::total(&shared.cache, conn, &run_name, &q.filters)?;
            Ok((total, db::page_rows(conn, &run_name, &q.filters, q.sort, q.page, q.per_page)?))
        })
        .await?;
    let total_pages = (total + i64::from(query.per_page) - 1) / i64::from(query.per_page);
    Ok(Json(json!({
        "run_name": run, "page": query.page, "per_page": query.per_page, "total": total,
        "total_pages": total_pages, "count": results.len(), "results": results,
    })))
}

pub async fn leaderboard(State(state): State<Arc<DashState>>, Path(run): Path<String>) -> ApiResult {
    let name = run.clone();
    let boards = state
        .query(move |conn| {
            db::require_run(conn, &name)?;
            leaderboard::compute(conn, &name)
        })
        .await?;
    Ok(Json(json!({"run_name": run, "leaderboards": leaderboard::to_json(&boards)})))
}

pub async fn status(State(state): State<Arc<DashState>>, Path(run): Path<String>) -> ApiResult {
    let name = run.clone();
    let counts = state
        .query(move |conn| {
            db::require_run(conn, &name)?;
            db::state_counts(conn, &name)
        })
        .await?;
    Ok(Json(json!({"run_name": run, "state": counts})))
}

pub async fn errors(State(state): State<Arc<DashState>>, Path(run): Path<String>) -> ApiResult {
    let name = run.clone();
    let failed = state
        .query(move |conn| {
            db::require_run(conn, &name)?;
            db::failed_cells(conn, &name)
        })
        .await?;
    Ok(Json(json!({"run_name": run, "failed_cells": failed})))
}

/// One cell with all its fields, its phases and any reconciliation.
pub async fn cell(
    State(state): State<Arc<DashState>>,
    Path((run, cell_id)): Path<(String, String)>,
) -> Result<Response, AppError> {
    let found = state
        .query(move |conn| {
            let found = crate::evals::detail::cell_detail(conn, &run, &cell_id)?;
            Ok(found.map(|(record, phases, reconciliation)| {
                json!({"cell": record, "phases": phases, "reconciliation": reconciliation})
            }))
        })
        .await?;
    Ok(match found {
        Some(body) => Json(body).into_response(),
        None => AppError::Unknown("unknown cell".into()).into_response(),
    })
}

/// `/api/compare?a=<run>&b=<run>` with optional `a_model`, `a_harness`, `b_model`, `b_harness`.
pub async fn compare(State(state): State<Arc<DashState>>, Query(raw): Query<HashMap<String, String>>) -> ApiResult {
    let selection = compare::Selection::from_query(&raw)?;
    let result = state.query(move |conn| compare::compare(conn, &selection)).await?;
    Ok(Json(serde_json::to_value(result).unwrap_or_default()))
}

/// `/run/{run}/export/{format}`: every row matching the filters, in the chosen
/// order, streamed in chunks from a blocking task so a large run never sits in memory.
///
/// A failure before the first chunk is an ordinary error answer (500, cause logged);
/// a failure after it ends the body with an error, which makes hyper drop the
/// connection without the final chunk, so the client sees an incomplete download
/// rather than a complete-looking file.
pub async fn export(
    State(state): State<Arc<DashState>>,
    Path((run, format)): Path<(String, String)>,
    Query(raw): Query<HashMap<String, String>>,
) -> Result<Response, AppError> {
    if !matches!(format.as_str(), "csv" | "json") {
        return Err(EvalsError::bad("format", format!("{format:?} is not csv or json")).into());
    }
    let filters = params::filters(&raw)?;
    let sort = db::Sort::parse(params::text(&raw, "sort").as_deref(), params::text(&raw, "order").as_deref())?;
    let csv = format == "csv";
    let body = export_body(&state, run.clone(), filters, sort, csv).await?;
    let content_type = if csv { "text/csv; charset=utf-8" } else { "application/json" };
    Ok((
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}_results.{format}\"", safe_file_stem(&run)),
            ),
        ],
        body,
    )
        .into_response())
}

/// The export's streamed body. It waits for the first chunk, so a failure before any
/// byte is a proper error answer; a failure after it cuts the download short (logged).
async fn export_body(
    state: &Arc<DashState>,
    name: String,
    filters: db::Filters,
    sort: db::Sort,
    csv: bool,
) -> Result<axum::body::Body, AppError> {
    // `Ok(None)` marks the end: a producer that stops without it (a panic) is a failure.
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Piece>(8);
    let producer = state.clone();
    tokio::task::spawn_blocking(move || {
        let result = producer
            .pool
            .get()
            .map_err(|e| EvalsError::Io { context: "results.db".into(), source: std::io::Error::other(e) })
            .and_then(|conn| {
                // An unknown run fails before the first chunk, so it is still a 404.
                db::require_run(&conn, &name)?;
                stream_rows(&conn, &name, &filters, sort, csv, &sender)
            });
        if let Err(err) = result {
            let _ = sender.blocking_send(Err(err));
        }
    });
    let stopped =
        || EvalsError::Io { context: "export".into(), source: std::io::Error::other("stopped before its end") };
    let first = match receiver.recv().await {
        Some(Ok(Some(chunk))) => chunk,
        Some(Ok(None)) => Vec::new(),
        Some(Err(err)) => return Err(err.into()),
        None => return Err(stopped().into()),
    };
    let rest = futures_util::stream::unfold(Some(receiver), move |receiver| async move {
        let mut receiver = receiver?;
        let failed = match receiver.recv().await {
            Some(Ok(Some(chunk))) => return Some((Ok(chunk), Some(receiver))),
            Some(Ok(None)) => return None,
            Some(Err(err)) => err,
            None => stopped(),
        };
        tracing::error!(error = %failed, "export failed after it started; the download is cut short");
        Some((Err(std::io::Error::other(failed.to_string())), None))
    });
    Ok(axum::body::Body::from_stream(futures_util::StreamExt::chain(
        futures_util::stream::once(async move { Ok::<_, std::io::Error>(first) }),
        rest,
    )))
}

const CHUNK_BYTES: usize = 256 * 1024;

/// What the export's producer sends: a chunk, the end (`Ok(None)`), or the failure.
type Piece = Result<Option<Vec<u8>>, EvalsError>;

/// Writes the rows as CSV (all 28 columns, spec order) or a JSON array into chunks.
fn stream_rows(
    conn: &rusqlite::Connection,
    run: &str,
    filters: &db::Filters,
    sort: db::Sort,
    csv: bool,
    sender: &tokio::sync::mpsc::Sender<Piece>,
) -> Result<(), EvalsError> {
    let gone = || EvalsError::Io { context: "export".into(), source: std::io::Error::other("the client went away") };
    let failed = |e: String| EvalsError::Io { context: "export".into(), source: std::io::Error::other(e) };
    let send = |chunk: Vec<u8>| sender.blocking_send(Ok(Some(chunk))).map_err(|_| gone());
    let end = || sender.blocking_send(Ok(None)).map_err(|_| gone());
    if csv {
        let mut buffer = Vec::with_capacity(CHUNK_BYTES * 2);
        let write = |buffer: &mut Vec<u8>, fields: &[String]| -> Result<(), EvalsError> {
            let mut writer = csv::WriterBuilder::new().has_headers(false).buffer_capacity(8192).from_writer(buffer);
            writer.write_record(crate::model::csv_cells::record(fields)).map_err(|e| failed(e.to_string()))?;
            writer.flush().map_err(|e| failed(e.to_string()))
        };
        let header: Vec<String> = db::COLUMNS.iter().map(|c| c.to_string()).collect();
        write(&mut buffer, &header)?;
        db::for_each_row(conn, run, filters, sort, true, |row| {
            write(&mut buffer, &csv_fields(&row))?;
            if buffer.len() >= CHUNK_BYTES {
                send(std::mem::take(&mut buffer))?;
            }
            Ok(())
        })?;
        send(buffer)?;
        end()
    } else {
        let mut buffer = b"[".to_vec();
        let mut first = true;
        db::for_each_row(conn, run, filters, sort, true, |row| {
            if !first {
                buffer.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut buffer, &row).map_err(|e| failed(e.to_string()))?;
            if buffer.len() >= CHUNK_BYTES {
                send(std::mem::take(&mut buffer))?;
            }
            Ok(())
        })?;
        buffer.extend_from_slice(b"]\n");
        send(buffer)?;
        end()
    }
}
