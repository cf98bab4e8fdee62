//! Time, always through `tokio::time`: turmoil virtualises it per simulated
//! host and a paused runtime jumps it, so nothing here may read a wall clock.
//!
//! Under a model checker (loom, shuttle) there is no time: a timeout "elapses" exactly when its future
//! is not ready at once. That is the most eager timer possible (an idle lane
//! may reap at every point it waits; a blocked write always hits its
//! deadline), so every interleaving a real timer allows is among those loom
//! explores.

pub use std::time::Duration;

#[cfg(not(any(loom, shuttle)))]
pub use tokio::time::{sleep, timeout, Instant};

#[cfg(any(loom, shuttle))]
pub use loom_time::{sleep, timeout, Instant};

/// `future`'s output, or `None` once `after` passes: an un-`biased`
/// `select!` between the two, so when both are ready at one poll either may
/// win (tokio draws the order; lanesim's simulated worlds seed it; in
/// lanesim's router only planted bug #19 waits this way). Under a model
/// checker it is [`timeout`].
#[cfg(not(any(loom, shuttle)))]
pub async fn race_sleep<F: std::future::Future>(after: Duration, future: F) -> Option<F::Output> {
    // Un-`biased` on purpose: lanesim's tokio seeds its order in
    // simulation, so a run still replays.
    tokio::select! {
        output = future => Some(output),
        () = sleep(after) => None,
    }
}

/// `future`'s output, or `None` once `after` passes: an un-`biased`
/// `select!` between the two, so when both are ready at one poll either may
/// win (tokio draws the order; lanesim's simulated worlds seed it; in
/// lanesim's router only planted bug #19 waits this way). Under a model
/// checker it is [`timeout`].
#[cfg(any(loom, shuttle))]
pub async fn race_sleep<F: std::future::Future>(after: Duration, future: F) -> Option<F::Output> {
    timeout(after, future).await.ok()
}

#[cfg(any(loom, shuttle))]
mod loom_time {
    use std::future::Future;
    use std::pin::pin;
    use std::task::Poll;

    use super::Duration;

    /// A timer that never fires on its own: the models run with
    /// heartbeats off, the only periodic timers there are.
    pub async fn sleep(_after: Duration) {
        std::future::pending::<()>().await;
    }

    /// A clock that never moves.
    #[derive(Clone, Copy, Debug)]
    pub struct Instant;

    impl Instant {
        pub fn now() -> Self {
            Self
        }

        pub fn elapsed(&self) -> Duration {
            Duration::ZERO
        }
    }

    /// The future did not finish "in time" (it was not ready).
    #[derive(Debug)]
    pub struct Elapsed;

    pub async fn timeout<F: Future>(_after: Duration, future: F) -> Result<F::Output, Elapsed> {
        let mut future = pin!(future);
        let first = std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
        match first {
            Poll::Ready(output) => Ok(output),
            Poll::Pending => Err(Elapsed),
        }
    }
}
