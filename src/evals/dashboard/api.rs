//! The dashboard's JSON API (spec §4.4) and exports. Shapes are the spec's; new keys
//! are additive (`planned_cells`, `running`, `last_activity` on run summaries).

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{DashState, params};
use crate::evals::compare;
use crate::evals::db::{self, EvalsError};
use crate::evals::leaderboard;
use crate::evals::report::csv_fields;
use crate::evals::text::safe_file_stem;

/// An API failure: 404 for an unknown run, 422 naming a bad parameter, 500 otherwise.
pub struct ApiError(pub EvalsError);

impl From<EvalsError> for ApiError {
    fn from(err: EvalsError) -> Self {
        ApiError(err)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = match &self.0 {
            EvalsError::UnknownRun(run) => (
                StatusCode::NOT_FOUND,
                json!({"error": {"code": "not_found", "message": format!("unknown run {run:?}")}}),
            ),
            EvalsError::BadParameter { parameter, message } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({"error": {"code": "invalid_parameter", "parameter": parameter, "message": message}}),
            ),
            other => {
                tracing::error!(error = %other, "dashboard query failed");
                (StatusCode::INTERNAL_SERVER_ERROR, json!({"error": {"code": "internal", "message": "internal error"}}))
            }
        };
        (status, Json(body)).into_response()
    }
}

type ApiResult = Result<Json<Value>, ApiError>;

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
    let (run_name, q) = (run.clone(), query.clone());
    let (total, results) = state
        .query(move |conn| {
            db::require_run(conn, &run_name)?;
            db::page(conn, &run_name, &q.filters, q.sort, q.page, q.per_page)
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
) -> Result<Response, ApiError> {
    let found = state
        .query(move |conn| {
            db::require_run(conn, &run)?;
            let Some(record) = db::cell(conn, &run, &cell_id)? else { return Ok(None) };
            let phases = db::phases_for(conn, &run, &[(record.cell_id.as_str(), record.harness_metadata.as_ref())])?
                .remove(&record.cell_id)
                .unwrap_or_default();
            let reconciliation = db::reconciliations(conn, &run, &cell_id)?;
            Ok(Some(json!({"cell": record, "phases": phases, "reconciliation": reconciliation})))
        })
        .await?;
    Ok(match found {
        Some(body) => Json(body).into_response(),
        None => (StatusCode::NOT_FOUND, Json(json!({"error": {"code": "not_found", "message": "unknown cell"}})))
            .into_response(),
    })
}

/// `/api/compare?a=<run>&b=<run>` with optional `a_model`, `a_harness`, `b_model`, `b_harness`.
pub async fn compare(State(state): State<Arc<DashState>>, Query(raw): Query<HashMap<String, String>>) -> ApiResult {
    let selection = compare::Selection::from_query(&raw)?;
    let result = state.query(move |conn| compare::compare(conn, &selection)).await?;
    Ok(Json(serde_json::to_value(result).unwrap_or_default()))
}

/// `/run/{run}/export/{csv|json}`: every row matching the filters, in the chosen order.
pub async fn export(
    State(state): State<Arc<DashState>>,
    Path((run, format)): Path<(String, String)>,
    Query(raw): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    if !matches!(format.as_str(), "csv" | "json") {
        return Err(EvalsError::bad("format", format!("{format:?} is not csv or json")).into());
    }
    let filters = params::filters(&raw)?;
    let sort = db::Sort::parse(params::text(&raw, "sort").as_deref(), params::text(&raw, "order").as_deref())?;
    let name = run.clone();
    let rows = state
        .query(move |conn| {
            db::require_run(conn, &name)?;
            db::all_rows(conn, &name, &filters, sort, true)
        })
        .await?;
    let stem = safe_file_stem(&run);
    let (body, content_type) = if format == "csv" {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let io = |e: csv::Error| ApiError(EvalsError::Io { context: "csv".into(), source: std::io::Error::other(e) });
        writer.write_record(db::COLUMNS).map_err(io)?;
        for row in &rows {
            writer.write_record(csv_fields(row)).map_err(io)?;
        }
        let bytes = writer
            .into_inner()
            .map_err(|e| ApiError(EvalsError::Io { context: "csv".into(), source: e.into_error() }))?;
        (bytes, "text/csv; charset=utf-8")
    } else {
        (serde_json::to_vec_pretty(&rows).unwrap_or_default(), "application/json")
    };
    Ok((
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{stem}_results.{format}\"")),
        ],
        body,
    )
        .into_response())
}
