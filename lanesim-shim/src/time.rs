//! Time, always through `tokio::time`: turmoil virtualises it per simulated
//! host and a paused runtime jumps it, so nothing here may read a wall clock.
//!
//! Under a model checker there is no clock; a timer fires where the checker
//! lets it:
//!
//! - under shuttle, the checker chooses: each time a timeout's future is
//!   polled and not ready, shuttle's scheduler draws (from its own seeded,
//!   replayed choices) whether the deadline has passed now, and if not, the
//!   task yields and asks again at its next turn. A [`sleep`] ends the same
//!   way. So a timer may fire at any point between two steps of other
//!   tasks, as early as its first wait or after they all ran on: a race
//!   against an idle timer is explored on both sides (pinned by
//!   `a_timeout_fires_on_either_side_of_a_racing_send`, tests/shuttle_time.rs);
//! - under loom, which has no choices but thread order, a timeout elapses
//!   exactly when its future is not ready at once: the most eager timer (an
//!   idle lane may reap at every point it waits; a blocked write always hits
//!   its deadline), and a [`sleep`] never ends (loom's models run with
//!   heartbeats off, the only periodic timers there are).

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

    /// Whether the deadline passes at this wait: the checker's choice
    /// under shuttle; under loom, always (the most eager timer).
    fn deadline_passes() -> bool {
        #[cfg(shuttle)]
        {
            use shuttle::rand::Rng;
            shuttle::rand::thread_rng().gen::<bool>()
        }
        #[cfg(not(shuttle))]
        {
            true
        }
    }

    /// Ends where the checker lets it (shuttle); never under loom.
    pub async fn sleep(_after: Duration) {
        #[cfg(shuttle)]
        while !deadline_passes() {
            not_yet().await;
        }
        #[cfg(not(shuttle))]
        std::future::pending::<()>().await;
    }

    /// A timer that has not fired gives the other tasks their turn as a
    /// yield (shuttle's `yield_now`), not merely by waking itself: a
    /// task that is always ready to look at its timer again would
    /// otherwise keep PCT's highest priority and starve the rest (a lane
    /// idling after the router's drop spun to the step bound while its
    /// producer never ran, `an_idle_timer_does_not_starve_a_ready_task`).
    #[cfg(shuttle)]
    async fn not_yet() {
        shuttle::future::yield_now().await;
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

    /// The future did not finish in time.
    #[derive(Debug)]
    pub struct Elapsed;

    /// `future`'s output if it is ready before the deadline passes; the
    /// future is polled first at every wait, as tokio's timeout does, so an
    /// output ready when the deadline passes wins.
    pub async fn timeout<F: Future>(_after: Duration, future: F) -> Result<F::Output, Elapsed> {
        let mut future = pin!(future);
        loop {
            let polled = std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await;
            if let Poll::Ready(output) = polled {
                return Ok(output);
            }
            if deadline_passes() {
                return Err(Elapsed);
            }
            // Not yet: the other tasks' turn, then look again (the future
            // also wakes this task when it can go on).
            #[cfg(shuttle)]
            not_yet().await;
        }
    }
}
