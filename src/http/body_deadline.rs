//! How long a request's body may take to arrive. Headers have `listen.header_timeout_secs`
//! (hyper's own timer); a body trickled a byte every few seconds would otherwise hold its
//! connection, and a thousand of them every connection of a listener. So every body is
//! read through [`TimedBody`]: until the request is authenticated the whole body must
//! arrive within `listen.body_timeout_secs` (a sign-in form, a token request, a webhook
//! are small); once a credential is verified ([`BodyDeadline::authenticated`], called by
//! the credential extractors and the OTLP handlers) an upload may take up to
//! `listen.upload_timeout_secs`, provided it averages `listen.upload_min_bytes_per_sec`
//! after its first `body_timeout_secs`.
//!
//! Invariants: a body past its deadline ends in [`BodyTimedOut`], so a handler reading it
//! answers 408 and the connection is closed; the deadline is measured from when the
//! request's headers were read, and only bytes received move it.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

/// The body deadlines of a listener (`[listen]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodyLimits {
    pub unauthenticated: Duration,
    pub upload_min_bytes_per_sec: u64,
    pub upload: Duration,
}

/// The handle a request carries (an extension) to loosen its own body's deadline once
/// its caller is known.
#[derive(Clone, Debug, Default)]
pub struct BodyDeadline(Arc<AtomicBool>);

impl BodyDeadline {
    /// The caller's credential is verified: its body may take an upload's time.
    pub fn authenticated(extensions: &axum::http::Extensions) {
        if let Some(deadline) = extensions.get::<BodyDeadline>() {
            deadline.0.store(true, Ordering::Relaxed);
        }
    }
}

/// The error a body past its deadline ends in.
#[derive(Debug)]
pub struct BodyTimedOut;

/// What [`BodyTimedOut`] says (and how an extractor's rejection text is known to be one).
pub const TIMED_OUT: &str = "the request body did not arrive in time";

impl std::fmt::Display for BodyTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(TIMED_OUT)
    }
}

impl std::error::Error for BodyTimedOut {}

/// Whether `error` (as a body reader reports it, wrapped or not) is a [`BodyTimedOut`].
pub fn is_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.is::<BodyTimedOut>() {
            return true;
        }
        current = error.source();
    }
    false
}

/// A request body read within its deadline.
pub struct TimedBody<B> {
    inner: B,
    limits: BodyLimits,
    authenticated: BodyDeadline,
    started: Instant,
    received: u64,
    timer: Pin<Box<Sleep>>,
    timed_out: bool,
}

impl<B> TimedBody<B> {
    /// `inner` with its deadline counted from now; the handle goes into the request.
    pub fn new(inner: B, limits: BodyLimits) -> (TimedBody<B>, BodyDeadline) {
        let started = Instant::now();
        let deadline = BodyDeadline::default();
        let body = TimedBody {
            inner,
            limits,
            authenticated: deadline.clone(),
            started,
            received: 0,
            timer: Box::pin(tokio::time::sleep_until(started + limits.unauthenticated)),
            timed_out: false,
        };
        (body, deadline)
    }

    /// When the body must have arrived (or advanced), given what came so far.
    fn deadline(&self) -> Instant {
        let grace = self.limits.unauthenticated;
        if !self.authenticated.0.load(Ordering::Relaxed) {
            return self.started + grace;
        }
        // After the grace, `received` bytes buy received / rate seconds.
        let rate = self.limits.upload_min_bytes_per_sec.max(1);
        let earned = Duration::from_secs_f64(self.received as f64 / rate as f64);
        self.started + (grace + earned).min(self.limits.upload)
    }
}

impl<B> Body for TimedBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if self.timed_out {
            return Poll::Ready(Some(Err(Box::new(BodyTimedOut))));
        }
        loop {
            if let Poll::Ready(frame) = Pin::new(&mut self.inner).poll_frame(cx) {
                if let Some(Ok(data)) = frame.as_ref().map(|f| f.as_ref().map(|f| f.data_ref())) {
                    self.received += data.map_or(0, |d| d.len() as u64);
                }
                return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
            }
            let deadline = self.deadline();
            if Instant::now() >= deadline {
                self.timed_out = true;
                return Poll::Ready(Some(Err(Box::new(BodyTimedOut))));
            }
            if self.timer.deadline() != deadline {
                self.timer.as_mut().reset(deadline);
            }
            ready!(self.timer.as_mut().poll(cx));
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    /// A body that yields one byte each `every`, `count` times.
    fn trickle(count: usize, every: Duration) -> impl Body<Data = Bytes, Error = std::convert::Infallible> + Unpin {
        let stream = futures_util::stream::unfold(0, move |sent| async move {
            if sent == count {
                return None;
            }
            tokio::time::sleep(every).await;
            Some((Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from_static(b"x"))), sent + 1))
        });
        http_body_util::StreamBody::new(Box::pin(stream))
    }

    const LIMITS: BodyLimits = BodyLimits {
        unauthenticated: Duration::from_secs(10),
        upload_min_bytes_per_sec: 1,
        upload: Duration::from_secs(60),
    };

    #[tokio::test(start_paused = true)]
    async fn an_unauthenticated_trickle_is_cut_at_the_body_timeout() {
        let (body, _) = TimedBody::new(trickle(100, Duration::from_secs(5)), LIMITS);
        let started = Instant::now();
        let err = body.collect().await.map(|_| ()).unwrap_err();
        assert!(is_timeout(err.as_ref()), "{err}");
        assert_eq!(started.elapsed(), Duration::from_secs(10));
    }

    #[tokio::test(start_paused = true)]
    async fn an_authenticated_upload_may_take_longer_at_the_minimum_rate() {
        // One byte a second meets the rate: 30 bytes arrive in 30 s, past the 10 s grace.
        let (body, deadline) = TimedBody::new(trickle(30, Duration::from_secs(1)), LIMITS);
        deadline.0.store(true, Ordering::Relaxed);
        assert_eq!(body.collect().await.unwrap().to_bytes().len(), 30);
        // One byte every five seconds does not: cut once the grace and its bytes are spent.
        let (body, deadline) = TimedBody::new(trickle(30, Duration::from_secs(5)), LIMITS);
        deadline.0.store(true, Ordering::Relaxed);
        let started = Instant::now();
        assert!(body.collect().await.is_err());
        assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    }

    #[tokio::test(start_paused = true)]
    async fn a_body_that_arrives_in_time_is_untouched() {
        let (body, _) = TimedBody::new(trickle(5, Duration::from_secs(1)), LIMITS);
        assert_eq!(body.collect().await.unwrap().to_bytes(), Bytes::from_static(b"xxxxx"));
    }
}
