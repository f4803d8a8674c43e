//! Serving a router on a listener with the limits a server facing the open network needs
//! (axum's own `serve` has none): at most [`Limits::max_connections`] connections at once
//! (past it, new ones wait in the kernel's backlog rather than being read), and a client
//! has [`Limits::header_timeout`] to send a request's headers, counted from when the
//! connection opens or falls idle after an answer, so neither a half-sent request nor an
//! idle kept-alive connection holds a slot for long. Each request carries the peer's
//! address (`ConnectInfo<SocketAddr>`), as `into_make_service_with_connect_info` gave it.
//!
//! With a TLS acceptor (`http::tls`), each connection's handshake runs in its own task,
//! bounded by the header timeout, so a client that never finishes it holds one slot for
//! that long and never the accept loop.
//!
//! Invariant: on `stop`, no new connection is accepted and the open ones finish the
//! request they are in, then close (graceful shutdown); the caller bounds how long.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_service::Service;

/// The longest a stop waits for open connections to finish their request (the platform
/// server also bounds its whole drain by `server.shutdown_grace_secs`).
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(30);

/// How much of the server one listener's clients may hold.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_connections: usize,
    pub header_timeout: Duration,
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
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
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
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            let mut router = router.clone();
            async move { router.call(request).await }
        });
        match &tls {
            None => {
                let connection = graceful.watch(builder.serve_connection(TokioIo::new(stream), service));
                tokio::spawn(async move {
                    // A client that went away or timed out ends its connection; nothing to report.
                    let _ = connection.await;
                    drop(slot);
                });
            }
            Some(acceptor) => {
                let (acceptor, builder, watcher) = (acceptor.clone(), builder.clone(), graceful.watcher());
                tokio::spawn(async move {
                    let handshake = tokio::time::timeout(limits.header_timeout, acceptor.accept(stream)).await;
                    match handshake {
                        Ok(Ok(stream)) => {
                            let _ = watcher.watch(builder.serve_connection(TokioIo::new(stream), service)).await;
                        }
                        Ok(Err(err)) => tracing::debug!(error = %err, %peer, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                    drop(slot);
                });
            }
        }
    }
    drop(listener);
    // Connections finish the request they are in; one that never does (a client sending
    // a body byte by byte) does not hold the shutdown past SHUTDOWN_LIMIT.
    let _ = tokio::time::timeout(SHUTDOWN_LIMIT, graceful.shutdown()).await;
    Ok(())
}
