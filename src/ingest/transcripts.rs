//! `GET` and `POST /v1/transcripts/{session_id}?agent_type=…`: the shipper's chunked
//! transcript upload (wire contract, "Transcript upload"). Thin: find the caller's own
//! session, hand the chunk to `transcripts::upload`, and when the upload is whole point
//! the session at the stored file through the writer (the one writer of `main.db`).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::errors::AppError;
use crate::http::extract::{Json, Path, Query};
use crate::model::AgentType;
use crate::sessions::views;
use crate::state::AppState;
use crate::state::caller::HookUser;
use crate::transcripts::store;
use crate::transcripts::upload::{self, Chunk, UploadError};

#[derive(Deserialize)]
pub struct UploadQuery {
    agent_type: Option<String>,
    sha256: Option<String>,
}

impl From<UploadError> for AppError {
    fn from(err: UploadError) -> Self {
        match err {
            UploadError::Invalid { field, message } => AppError::bad_request(field, message),
            UploadError::TooLarge(message) => AppError::TooLarge(message),
            UploadError::Storage(err) => err.into(),
        }
    }
}

/// The caller's own session row id; another person's session is a 404.
async fn own_session(
    state: &Arc<AppState>,
    user: &HookUser,
    session: String,
    query: &UploadQuery,
) -> Result<String, AppError> {
    let name = query
        .agent_type
        .as_deref()
        .ok_or_else(|| AppError::bad_request("agent_type", "query parameter agent_type is required"))?;
    let agent = AgentType::parse_lenient(name).ok_or_else(|| {
        AppError::bad_request(
            "agent_type",
            format!("unknown agent {name:?}; expected one of {}", AgentType::expected()),
        )
    })?;
    let user_id = user.user_id.clone();
    state.read(move |conn| views::own_session_id(conn, &user_id, agent, &session)).await?.ok_or(AppError::NotFound)
}

fn header<T: std::str::FromStr>(headers: &HeaderMap, name: &'static str) -> Result<T, AppError> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| AppError::bad_request(name, format!("header {name} is missing or malformed")))
}

pub async fn state_of(
    State(state): State<Arc<AppState>>,
    user: HookUser,
    Path(session): Path<String>,
    Query(query): Query<UploadQuery>,
) -> Result<Json<Value>, AppError> {
    let whole =
        query.sha256.clone().ok_or_else(|| AppError::bad_request("sha256", "query parameter sha256 is required"))?;
    if !upload::is_sha256(&whole) {
        return Err(AppError::bad_request("sha256", "must be the lowercase hex SHA-256 of the whole upload"));
    }
    let id = own_session(&state, &user, session, &query).await?;
    let (data_dir, owner) = (state.config.data_dir.clone(), user.user_id.clone());
    state
        .read(move |conn| {
            if store::stored_upload(conn, &id)?.as_deref() == Some(whole.as_str()) {
                return Ok(Ok(json!({"complete": true})));
            }
            let received = upload::received(&data_dir, &owner, &id, &whole);
            Ok(if received.is_empty() {
                Err(AppError::NotFound)
            } else {
                Ok(json!({"received": received, "complete": false}))
            })
        })
        .await?
        .map(Json)
}

pub async fn post_chunk(
    State(state): State<Arc<AppState>>,
    user: HookUser,
    Path(session): Path<String>,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Value>, AppError> {
    let chunk = Chunk {
        index: header(&headers, "X-Chunk-Index")?,
        total: header(&headers, "X-Chunk-Total")?,
        sha256: header(&headers, "X-Chunk-Sha256")?,
        whole_sha256: header(&headers, "X-Transcript-Sha256")?,
    };
    let id = own_session(&state, &user, session, &query).await?;
    let bytes = read_chunk(body).await?;
    match receive(&state, user.user_id, id.clone(), chunk, bytes).await? {
        Received::Partial => Ok(Json(json!({"complete": false}))),
        Received::AlreadyStored => Ok(Json(json!({"complete": true}))),
        Received::Whole(stored, whole) => {
            let now_ms = state.clock.now_ms();
            let record = move |tx: &rusqlite::Transaction<'_>| {
                store::record_stored(tx, &id, &stored.relative_path, stored.bytes, &whole, now_ms)
            };
            state.writer.change_main(Box::new(record)).await?;
            state.indexer.notify();
            Ok(Json(json!({"complete": true})))
        }
    }
}

async fn read_chunk(body: Body) -> Result<axum::body::Bytes, AppError> {
    axum::body::to_bytes(body, upload::MAX_CHUNK_BYTES).await.map_err(|err| {
        if err.to_string().contains("length limit") {
            AppError::TooLarge(format!("a chunk may hold at most {} bytes", upload::MAX_CHUNK_BYTES))
        } else {
            AppError::bad_request("body", format!("could not read the chunk: {err}"))
        }
    })
}

/// Stages the chunk (on the blocking pool); a chunk of an upload already stored (a
/// retry after the answer was lost) is done.
async fn receive(
    state: &AppState,
    owner: String,
    session_id: String,
    chunk: Chunk,
    bytes: axum::body::Bytes,
) -> Result<Received, AppError> {
    let data_dir = state.config.data_dir.clone();
    let whole = chunk.whole_sha256.clone();
    Ok(state
        .read(move |conn| {
            if store::stored_upload(conn, &session_id)?.as_deref() == Some(whole.as_str()) {
                return Ok(Ok(Received::AlreadyStored));
            }
            Ok(upload::receive(&data_dir, &owner, &session_id, &chunk, &bytes).map(|stored| match stored {
                Some(stored) => Received::Whole(stored, whole),
                None => Received::Partial,
            }))
        })
        .await??)
}

enum Received {
    Partial,
    AlreadyStored,
    Whole(upload::Stored, String),
}
