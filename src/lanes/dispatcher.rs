//! [`OrderedDispatcher`]: the part a service calls. On top of the router it
//! adds what a service needs and the router deliberately leaves out:
//!
//! - panic isolation: each handler call, *including its synchronous part*
//!   (the code that runs before the first `.await`), is caught, so a
//!   panicking message counts as handled and its lane lives on (L2, L5);
//! - an overflow policy: `Reject` sheds at the per-lane limit (L4), `Warn`
//!   admits everything and warns the first time a lane reaches the limit;
//! - counters for dashboards and for the testbed's accounting.

use std::any::Any;
use std::fmt::Debug;
use std::hash::{BuildHasher, Hash};
use std::panic::AssertUnwindSafe;

use futures_util::future::{BoxFuture, FutureExt};

use super::config::{LaneConfigError, LaneRouterConfig, RandomState};
use super::observer::{LaneExit, LaneId, LaneObserver};
use super::router::LaneRouter;
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::{Arc, AtomicBool, AtomicU64, Ordering};

/// Handles one message. May panic, before or after its first `.await`.
pub type Handler<M> = Arc<dyn Fn(M) -> BoxFuture<'static, ()> + Send + Sync>;

/// What happens when a lane holds `limit` unhandled messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverflowPolicy {
    /// Refuse the message (handed back to the caller) and count it shed.
    Reject,
    /// Admit it anyway; log a warning the first time any lane reaches the limit.
    Warn,
}

/// Dispatcher configuration.
pub struct DispatcherConfig<K, S = RandomState> {
    /// Per-lane limit on unhandled messages. Must be at least 1.
    pub limit: usize,
    /// What to do at the limit.
    pub policy: OverflowPolicy,
    /// The underlying router's configuration. Its observer, if any, still
    /// sees every lane event.
    pub router: LaneRouterConfig<K, S>,
}

/// A snapshot of the dispatcher's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Lanes alive now.
    pub lanes_live: u64,
    /// Lanes ever created.
    pub lanes_created: u64,
    /// Messages refused under [`OverflowPolicy::Reject`].
    pub items_shed: u64,
    /// Handler calls that panicked (each still counts as handled).
    pub handler_panics: u64,
}

#[derive(Default)]
struct Counters {
    lanes_created: AtomicU64,
    lanes_closed: AtomicU64,
    items_shed: AtomicU64,
    handler_panics: AtomicU64,
}

/// Counts lanes, then forwards to the user's observer.
struct CountingObserver<K> {
    counters: Arc<Counters>,
    inner: Option<Arc<dyn LaneObserver<K>>>,
}

impl<K> LaneObserver<K> for CountingObserver<K> {
    fn lane_created(&self, key: &K, lane: LaneId) {
        self.counters.lanes_created.fetch_add(1, Ordering::Relaxed);
        if let Some(inner) = &self.inner {
            inner.lane_created(key, lane);
        }
    }

    fn lane_closed(&self, key: &K, lane: LaneId, exit: LaneExit) {
        self.counters.lanes_closed.fetch_add(1, Ordering::Relaxed);
        if let Some(inner) = &self.inner {
            inner.lane_closed(key, lane, exit);
        }
    }
}

/// Per-key ordered dispatch with panic isolation and an overflow policy.
pub struct OrderedDispatcher<K, M, S = RandomState>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    M: Send + 'static,
    S: BuildHasher + Clone + Send + Sync + 'static,
{
    router: LaneRouter<K, M, S>,
    limit: usize,
    policy: OverflowPolicy,
    counters: Arc<Counters>,
    warned: AtomicBool,
}

impl<K, M, S> OrderedDispatcher<K, M, S>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    M: Send + 'static,
    S: BuildHasher + Clone + Send + Sync + 'static,
{
    /// A dispatcher running `handler` for every message, per key in order.
    ///
    /// # Errors
    /// A `limit` of 0 (it would shed everything), or any router config error.
    pub fn new(
        handler: Handler<M>,
        config: DispatcherConfig<K, S>,
    ) -> Result<Self, LaneConfigError> {
        Self::with_lane_ids(Arc::new(move |_, message| handler(message)), config)
    }

    /// Like [`OrderedDispatcher::new`], with a handler that is told its lane.
    ///
    /// # Errors
    /// As [`OrderedDispatcher::new`].
    pub fn with_lane_ids(
        handler: Arc<dyn Fn(LaneId, M) -> BoxFuture<'static, ()> + Send + Sync>,
        config: DispatcherConfig<K, S>,
    ) -> Result<Self, LaneConfigError> {
        if config.limit == 0 {
            return Err(LaneConfigError::ZeroLimit);
        }
        let counters = Arc::new(Counters::default());
        let mut router_config = config.router;
        router_config.observer = Some(Arc::new(CountingObserver {
            counters: Arc::clone(&counters),
            inner: router_config.observer.take(),
        }));
        let panics = Arc::clone(&counters);
        let consumer = Arc::new(move |lane: LaneId, message: M| -> BoxFuture<'static, ()> {
            let panics = Arc::clone(&panics);
            // The synchronous part runs here, outside any future: catch it too.
            match std::panic::catch_unwind(AssertUnwindSafe(|| handler(lane, message))) {
                Ok(future) => Box::pin(async move {
                    if let Err(payload) = AssertUnwindSafe(future).catch_unwind().await {
                        mark(Mark::HandlerPanicked);
                        record_panic(&panics, lane, payload.as_ref());
                    }
                }),
                Err(payload) => {
                    mark(Mark::HandlerPanickedSync);
                    record_panic(&panics, lane, payload.as_ref());
                    Box::pin(std::future::ready(()))
                }
            }
        });
        Ok(Self {
            router: LaneRouter::with_lane_ids(consumer, router_config)?,
            limit: config.limit,
            policy: config.policy,
            counters,
            warned: AtomicBool::new(false),
        })
    }

    /// Queues `message` on `key`'s lane. Returns the lane depth before it, or
    /// hands the message back when the policy is `Reject` and the lane is at
    /// its limit. Never blocks.
    pub fn dispatch(&self, key: K, message: M) -> Result<usize, M> {
        match self.policy {
            OverflowPolicy::Reject => {
                let routed = self.router.route(key, message, Some(self.limit));
                if routed.is_err() {
                    self.counters.items_shed.fetch_add(1, Ordering::Relaxed);
                }
                routed
            }
            OverflowPolicy::Warn => {
                let routed = self.router.route(key.clone(), message, None);
                if let Ok(depth) = routed {
                    if depth + 1 >= self.limit && !self.warned.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            ?key,
                            depth = depth + 1,
                            limit = self.limit,
                            "ordered lane reached its limit; admitting anyway (policy Warn)"
                        );
                    }
                }
                routed
            }
        }
    }

    /// The counters now.
    #[must_use]
    pub fn stats(&self) -> DispatchStats {
        let created = self.counters.lanes_created.load(Ordering::Relaxed);
        let closed = self.counters.lanes_closed.load(Ordering::Relaxed);
        DispatchStats {
            lanes_live: created.saturating_sub(closed),
            lanes_created: created,
            items_shed: self.counters.items_shed.load(Ordering::Relaxed),
            handler_panics: self.counters.handler_panics.load(Ordering::Relaxed),
        }
    }

    /// Lanes in the map now (equals `stats().lanes_live` once exits settle).
    #[must_use]
    pub fn lane_count(&self) -> usize {
        self.router.lane_count()
    }
}

fn record_panic(counters: &Counters, lane: LaneId, payload: &(dyn Any + Send)) {
    counters.handler_panics.fetch_add(1, Ordering::Relaxed);
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("<non-string panic payload>");
    tracing::error!(%lane, message, "ordered handler panicked; the lane continues");
}
