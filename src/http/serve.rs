//! Serving a router on a listener with the limits a server facing the open network needs
//! (axum's own `serve` has none), for HTTP/1.1 and, on the OTLP/gRPC listener, HTTP/2:
//!
//! - at most [`Limits::max_connections`] connections at once (past it, new ones wait in
//!   the kernel's backlog rather than being read), and at most
//!   [`Limits::max_connections_per_address`] of them from one client address (past it,
//!   a new connection from that address is closed at once), so one client cannot take
//!   every slot; a trusted proxy's connections are not counted, as it carries many;
//! - a client has [`Limits::header_timeout`] to send a request's headers, counted from
//!   when the connection opens or falls idle after an answer, and its body is read within
//!   the deadlines of `http::body_deadline`; an HTTP/2 connection carries at most
//!   `max_streams` requests at once and is closed after `idle_timeout` with none;
//! - every request has an id (`http::request_id`), a `request` span that its log lines
//!   carry, and the peer's address (`ConnectInfo<SocketAddr>`) as
//!   `into_make_service_with_connect_info` gave it.
//!
//! With a TLS acceptor (`http::tls`), each connection's handshake runs in its own task,
//! bounded by the header timeout, so a client that never finishes it holds one slot for
//! that long and never the accept loop.
//!
//! Invariant: on `stop`, no new connection is accepted and the open ones finish the
//! request they are in, then close (graceful shutdown); the caller bounds how long.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulConnection;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;
use tower_service::Service;
use tracing::Instrument;

use super::body_deadline::{BodyLimits, TimedBody};
use super::request_id::{self, RequestId};

/// The longest a stop waits for open connections to finish their request (the platform
/// server also bounds its whole drain by `server.shutdown_grace_secs`).
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(30);

/// A request slower than this is logged (with its id and route) for the operator.
const SLOW_REQUEST: Duration = Duration::from_secs(1);

/// How much of the server one listener's clients may hold.
#[derive(Clone, Debug)]
pub struct Limits {
    pub max_connections: usize,
    pub max_connections_per_address: usize,
    pub header_timeout: Duration,
    pub body: BodyLimits,
    /// Peers that carry many clients: their connections are not counted per address, and
    /// their `X-Request-Id` is kept.
    pub trusted_proxies: Arc<[IpAddr]>,
    pub protocol: Protocol,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Http1,
    /// HTTP/2 with prior knowledge (OTLP/gRPC).
    Http2 {
        idle_timeout: Duration,
        max_streams: u32,
    },
}

/// Serves `router` on `listener` until `stop` resolves, then lets open connections
/// finish their request.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    tls: Option<tokio_rustls::TlsAcceptor>,
    stop: impl std::future::Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let capacity = limits.max_connections.max(1);
    let slots = Arc::new(Semaphore::new(capacity));
    let addresses = Arc::new(Addresses::default());
    let (stopping, stopped) = watch::channel(false);
    tokio::pin!(stop);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot,
            () = &mut stop => break,
        };
        let Ok(slot) = slot else { break };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of descriptors or a reset before accept: not fatal to the listener.
                    tracing::warn!(error = %err, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let Some(share) = addresses.take(peer.ip(), &limits) else {
            // Dropping the stream closes it; the slot is free again at once.
            tracing::debug!(%peer, "closed a connection past this address's share of the listener");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let held = (slot, share);
        let (router, limits, stopped) = (router.clone(), limits.clone(), stopped.clone());
        match &tls {
            None => {
                tokio::spawn(async move {
                    connection(stream, peer, router, &limits, stopped).await;
                    drop(held);
                });
            }
            Some(acceptor) => {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    match tokio::time::timeout(limits.header_timeout, acceptor.accept(stream)).await {
                        Ok(Ok(stream)) => connection(stream, peer, router, &limits, stopped).await,
                        Ok(Err(err)) => tracing::debug!(error = %err, %peer, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                    drop(held);
                });
            }
        }
    }
    drop(listener);
    let _ = stopping.send(true);
    // Connections finish the request they are in; one that never does (a client sending
    // a body byte by byte) does not hold the shutdown past SHUTDOWN_LIMIT.
    let _ = tokio::time::timeout(SHUTDOWN_LIMIT, slots.acquire_many(capacity as u32)).await;
    Ok(())
}

/// Serves one connection until it closes, shutting it down gracefully on stop (and, on
/// HTTP/2, once idle).
async fn connection<S>(stream: S, peer: SocketAddr, router: Router, limits: &Limits, stopped: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let service = {
        let (limits, activity) = (limits.clone(), activity.clone());
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            answer(router.clone(), request, peer, limits.clone(), activity.clone())
        })
    };
    let io = TokioIo::new(stream);
    match limits.protocol {
        Protocol::Http1 => {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
            drive(builder.serve_connection(io, service), stopped, None).await;
        }
        Protocol::Http2 { idle_timeout, max_streams } => {
            let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            builder
                .timer(TokioTimer::new())
                .max_concurrent_streams(max_streams)
                .max_header_list_size(64 << 10)
                // A peer that stops answering pings is gone: its connection is closed.
                .keep_alive_interval(Some(Duration::from_secs(30)))
                .keep_alive_timeout(Duration::from_secs(20));
            let idle = Idle { first_request: limits.header_timeout, between: idle_timeout, activity };
            drive(builder.serve_connection(io, service), stopped, Some(idle)).await;
        }
    }
}

/// When an HTTP/2 connection counts as idle.
struct Idle {
    /// A new connection's first request must come within this…
    first_request: Duration,
    /// …and a later one within this of the last answer.
    between: Duration,
    activity: Arc<Activity>,
}

async fn drive<C: GracefulConnection>(connection: C, mut stopped: watch::Receiver<bool>, idle: Option<Idle>) {
    tokio::pin!(connection);
    let mut closing = false;
    loop {
        let idle_check = async {
            match &idle {
                Some(idle) => tokio::time::sleep_until(idle.activity.idle_deadline(idle)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            // A client that went away or timed out ends its connection; nothing to report.
            _ = connection.as_mut() => return,
            _ = stopped.wait_for(|stopped| *stopped), if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            () = idle_check, if !closing => {
                if idle.as_ref().is_some_and(|idle| Instant::now() >= idle.activity.idle_deadline(idle)) {
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                }
            }
        }
    }
}

/// One request: its id and span, its body deadline and peer address, the router's answer.
async fn answer(
    mut router: Router,
    request: hyper::Request<Incoming>,
    peer: SocketAddr,
    limits: Limits,
    activity: Arc<Activity>,
) -> Result<axum::response::Response, std::convert::Infallible> {
    let id = RequestId::of(request.headers(), peer.ip(), &limits.trusted_proxies);
    // At the error level, so the span (and the id on every line logged inside it) is
    // there whatever level the operator logs at.
    let span = tracing::error_span!(
        "request",
        id = id.as_str(),
        method = %request.method(),
        route = tracing::field::Empty,
        peer = %peer.ip(),
    );
    let (mut parts, body) = request.into_parts();
    let (body, deadline) = TimedBody::new(body, limits.body);
    parts.extensions.insert(ConnectInfo::<SocketAddr>(peer));
    parts.extensions.insert(deadline);
    let request = axum::http::Request::from_parts(parts, axum::body::Body::new(body));
    let started = Instant::now();
    activity.begin();
    let answered = id.clone().scope(router.call(request).instrument(span.clone())).await;
    activity.end();
    let Ok(mut response) = answered;
    let elapsed = started.elapsed();
    // A body cut at its deadline is slow by its sender's choice: not worth a warning
    // each (a flood of them would flood the log).
    if elapsed >= SLOW_REQUEST && response.status() != axum::http::StatusCode::REQUEST_TIMEOUT {
        let status = response.status().as_u16();
        tracing::warn!(parent: &span, elapsed_ms = elapsed.as_millis() as u64, status, "slow request");
    }
    response.headers_mut().insert(request_id::HEADER, id.header_value());
    Ok(response)
}

/// The requests in flight on one connection, and when the last one ended.
struct Activity {
    in_flight: AtomicUsize,
    /// When the connection opened or its last request ended, and whether one came.
    last: Mutex<(Instant, bool)>,
}

impl Activity {
    fn new() -> Activity {
        Activity { in_flight: AtomicUsize::new(0), last: Mutex::new((Instant::now(), false)) }
    }

    fn begin(&self) {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        self.last.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
    }

    fn end(&self) {
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.last.lock().unwrap_or_else(|p| p.into_inner()).0 = Instant::now();
    }

    /// When the connection falls idle if nothing starts meanwhile; far off while a
    /// request is in flight (its end moves it).
    fn idle_deadline(&self, idle: &Idle) -> Instant {
        let (since, served) = *self.last.lock().unwrap_or_else(|p| p.into_inner());
        if self.in_flight.load(Ordering::SeqCst) > 0 {
            return Instant::now() + idle.between;
        }
        since + if served { idle.between } else { idle.first_request }
    }
}

/// Connections per client address on one listener.
#[derive(Default)]
struct Addresses(Mutex<HashMap<IpAddr, usize>>);

/// One connection's place in its address's share; given back when dropped.
struct Share {
    addresses: Arc<Addresses>,
    /// `None` for a trusted proxy's connection, which is not counted.
    address: Option<IpAddr>,
}

impl Addresses {
    /// A place for one more connection from `address`, unless it holds its share.
    fn take(self: &Arc<Self>, address: IpAddr, limits: &Limits) -> Option<Share> {
        let address = canonical(address);
        if limits.trusted_proxies.contains(&address) {
            return Some(Share { addresses: self.clone(), address: None });
        }
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let count = counts.entry(address).or_insert(0);
        if *count >= limits.max_connections_per_address {
            return None;
        }
        *count += 1;
        Some(Share { addresses: self.clone(), address: Some(address) })
    }
}

impl Drop for Share {
    fn drop(&mut self) {
        let Some(address) = self.address else { return };
        let mut counts = self.addresses.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = counts.get_mut(&address) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&address);
            }
        }
    }
}

/// An IPv4 client seen through a dual-stack socket counts as itself.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(share: usize, trusted: &[IpAddr]) -> Limits {
        Limits {
            max_connections: 1024,
            max_connections_per_address: share,
            header_timeout: Duration::from_secs(10),
            body: BodyLimits {
                unauthenticated: Duration::from_secs(10),
                upload_min_bytes_per_sec: 1024,
                upload: Duration::from_secs(900),
            },
            trusted_proxies: trusted.into(),
            protocol: Protocol::Http1,
        }
    }

    #[test]
    fn one_address_holds_at_most_its_share_and_gets_it_back() {
        let addresses = Arc::new(Addresses::default());
        let (one, two): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let limits = limits(2, &[]);
        let first = addresses.take(one, &limits).unwrap();
        let _second = addresses.take(one, &limits).unwrap();
        assert!(addresses.take(one, &limits).is_none(), "a third from one address");
        assert!(addresses.take(two, &limits).is_some(), "another address has its own share");
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert!(addresses.take(mapped, &limits).is_none(), "the same client over IPv6-mapped IPv4");
        drop(first);
        assert!(addresses.take(one, &limits).is_some(), "a closed connection gives its place back");
    }

    #[test]
    fn a_trusted_proxy_is_not_counted() {
        let addresses = Arc::new(Addresses::default());
        let proxy: IpAddr = "127.0.0.1".parse().unwrap();
        let limits = limits(1, &[proxy]);
        let held: Vec<_> = (0..10).map(|_| addresses.take(proxy, &limits).unwrap()).collect();
        assert_eq!(held.len(), 10);
        assert!(addresses.0.lock().unwrap().is_empty());
    }
}
