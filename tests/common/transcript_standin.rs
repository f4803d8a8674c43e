//! A loopback stand-in for the transcript upload endpoint the transcripts issue builds
//! (`GET`/`POST /v1/transcripts/{session}`, protocol in docs/wire-contract.md). It
//! checks every chunk's and the whole upload's SHA-256, answers which chunks it holds,
//! keeps repeated chunks once, and can refuse the next few chunks to simulate a flaky
//! network. Everything else (`/v1/events`, …) is forwarded to a real `sightline serve`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

/// An upload in progress: the announced chunk total and the chunks held by index.
pub type Partial = (usize, BTreeMap<usize, Vec<u8>>);

#[derive(Default)]
pub struct Uploads {
    /// (agent, session, whole sha256) → the upload in progress.
    pub partial: BTreeMap<(String, String, String), Partial>,
    /// (agent, session) → completed uploads, decompressed.
    pub complete: BTreeMap<(String, String), Vec<String>>,
    /// A chunk index to refuse once with 503 (a failure part-way through an upload).
    pub refuse_index_once: Option<usize>,
    pub chunk_posts: usize,
}

#[derive(Clone)]
struct Shared {
    uploads: Arc<Mutex<Uploads>>,
    upstream: String,
}

pub struct StandIn {
    pub url: String,
    pub uploads: Arc<Mutex<Uploads>>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, bytes))
}

async fn state_of(
    State(shared): State<Shared>,
    Path(session): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let agent = query.get("agent_type").cloned().unwrap_or_default();
    let whole = query.get("sha256").cloned().unwrap_or_default();
    let uploads = shared.uploads.lock().unwrap();
    if let Some((_, chunks)) = uploads.partial.get(&(agent.clone(), session.clone(), whole)) {
        return axum::Json(json!({"received": chunks.keys().collect::<Vec<_>>(), "complete": false})).into_response();
    }
    StatusCode::NOT_FOUND.into_response()
}

async fn chunk(
    State(shared): State<Shared>,
    Path(session): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let mut uploads = shared.uploads.lock().unwrap();
    uploads.chunk_posts += 1;
    if uploads.refuse_index_once.is_some() && uploads.refuse_index_once == header("x-chunk-index").parse().ok() {
        uploads.refuse_index_once = None;
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    if sha256_hex(&body) != header("x-chunk-sha256") {
        return (StatusCode::BAD_REQUEST, "chunk digest mismatch").into_response();
    }
    let (Ok(index), Ok(total)) = (header("x-chunk-index").parse::<usize>(), header("x-chunk-total").parse::<usize>())
    else {
        return (StatusCode::BAD_REQUEST, "chunk index and total").into_response();
    };
    let agent = query.get("agent_type").cloned().unwrap_or_default();
    let whole = header("x-transcript-sha256");
    let key = (agent.clone(), session.clone(), whole.clone());
    let entry = uploads.partial.entry(key.clone()).or_insert_with(|| (total, BTreeMap::new()));
    entry.1.insert(index, body.to_vec());
    if entry.1.len() == entry.0 {
        let (_, chunks) = uploads.partial.remove(&key).unwrap();
        let joined: Vec<u8> = chunks.into_values().flatten().collect();
        if sha256_hex(&joined) != whole {
            return (StatusCode::BAD_REQUEST, "whole digest mismatch").into_response();
        }
        let text = String::from_utf8(zstd::decode_all(&joined[..]).unwrap()).unwrap();
        uploads.complete.entry((agent, session)).or_default().push(text);
        return axum::Json(json!({"complete": true})).into_response();
    }
    axum::Json(json!({"complete": false})).into_response()
}

/// Forwards any other request to the real server, headers and body as they came.
async fn forward(State(shared): State<Shared>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 64 << 20).await.unwrap_or_default();
    let url = format!("{}{}", shared.upstream, parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"));
    let method = parts.method.clone();
    let headers = parts.headers.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
        let mut builder = ureq::http::Request::builder().method(method.as_str()).uri(&url);
        for (name, value) in headers.iter() {
            if name != "host" && name != "content-length" {
                builder = builder.header(name.as_str(), value.as_bytes());
            }
        }
        let mut response = agent.run(builder.body(body.to_vec()).unwrap()).unwrap();
        let status = response.status().as_u16();
        (status, response.body_mut().read_to_vec().unwrap_or_default())
    })
    .await
    .unwrap();
    (StatusCode::from_u16(answer.0).unwrap(), answer.1).into_response()
}

impl StandIn {
    pub fn start(upstream: &str) -> StandIn {
        let uploads = Arc::new(Mutex::new(Uploads::default()));
        let shared = Shared { uploads: uploads.clone(), upstream: upstream.to_string() };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().unwrap();
            runtime.block_on(async move {
                let app = Router::new()
                    .route("/v1/transcripts/{session}", get(state_of).post(chunk))
                    .fallback(forward)
                    .with_state(shared);
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        StandIn { url, uploads }
    }

    pub fn completed(&self, agent: &str, session: &str) -> Vec<String> {
        self.uploads
            .lock()
            .unwrap()
            .complete
            .get(&(agent.to_string(), session.to_string()))
            .cloned()
            .unwrap_or_default()
    }
}
