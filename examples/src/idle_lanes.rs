//! A per-key ordering router whose lanes reap themselves when idle.
//!
//! [`IdleRouter`] holds a shared map from key to lane handle. A lane is an
//! unbounded tokio channel, a pending counter and one consumer task,
//! spawned the first time its key is routed. The task loops on a
//! `tokio::select!` between the next item and an idle timer of the TTL:
//!
//! - an item: run the consumer on it (on the lane's own task, so one key's
//!   items run one after another, in route order), then count it done;
//! - the channel closed (the router was dropped, and with it every
//!   sender): what was queued has been drained, the lane ends;
//! - the idle timer: the lane tries to reap itself. It upgrades its `Weak`
//!   to the router's map; if the router is gone nothing can route to it
//!   any more, so it is done and ends. Otherwise, under the map's lock, it
//!   removes its own entry if it is still the key's registered lane and
//!   nothing is pending, and ends; else it keeps going.
//!
//! `pending` counts a lane's items from admission until their handling
//! finished (the running one included): `route` reports it as the depth
//! the item found and refuses past a capacity. A consumer panic either
//! unwinds through the lane (the lane dies; its entry is removed so the
//! key gets a fresh lane) or, with [`Config::catch_panics`], is caught and
//! counted and the lane goes on.
//!
//! [`IdleLanes`] adapts it to lanesim's lanes target (`IdleTargets` in the
//! crate root).

use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use lanesim_target::lanes::{
    Item, LaneExit, LaneId, LaneReports, LaneStats, Lanes, LanesCapabilities, LanesFixed,
    LanesSetup, LanesTarget, Mode, ModeKind,
};
use lanesim_target::probe::Sites;
// Ported to lanesim's shim by these lines alone: std's locks and atomics,
// tokio's runtime handle and timers, as they are in production and the
// model checker's under `--cfg shuttle` (`lanesim model`).
use lanesim_target::shim::std_sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use lanesim_target::shim::std_sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use lanesim_target::shim::task::Handle;
use lanesim_target::shim::time::sleep;
use tokio::sync::mpsc;

// ---------------------------------------------------------------------------
// The router
// ---------------------------------------------------------------------------

/// What a consumer returns for one item.
pub type Work = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The consumer every item runs: given the lane's id and the item.
pub type Consumer<T> = Arc<dyn Fn(u64, T) -> Work + Send + Sync>;

/// Why a lane ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneEnd {
    /// Idle for the TTL with nothing pending: it removed itself.
    Reaped,
    /// The router was dropped; the lane finished what it held.
    Closed,
    /// A consumer panicked and the panic unwound through the lane.
    Panicked,
    /// The task was dropped unfinished (its runtime shut down).
    Cancelled,
}

/// Told about lanes coming and going.
pub trait LaneObserver<K>: Send + Sync {
    /// A lane was installed for `key`.
    fn created(&self, key: &K, lane: u64);
    /// The lane for `key` ended; nothing routes to it any more.
    fn closed(&self, key: &K, lane: u64, end: LaneEnd);
}

/// How a router behaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Reap a lane idle this long (`None`: lanes live until the router is
    /// dropped).
    pub idle_ttl: Option<Duration>,
    /// Catch a consumer's panic and keep the lane (otherwise the panic
    /// unwinds through the lane's task).
    pub catch_panics: bool,
    /// Count a warning when an item is admitted to a lane already holding
    /// this many (admitting it anyway).
    pub warn_at: Option<usize>,
}

/// The router's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Lanes created so far.
    pub created: u64,
    /// Lane tasks alive now.
    pub live: u64,
    /// Items refused for capacity.
    pub refused: u64,
    /// Consumer panics caught.
    pub panics: u64,
    /// Items admitted past `warn_at`.
    pub warnings: u64,
}

struct LaneHandle<T> {
    id: u64,
    tx: mpsc::UnboundedSender<T>,
    pending: Arc<AtomicUsize>,
}

type Map<K, T> = Mutex<HashMap<K, LaneHandle<T>>>;

#[derive(Default)]
struct Stats {
    created: AtomicU64,
    live: AtomicU64,
    refused: AtomicU64,
    panics: AtomicU64,
    warnings: AtomicU64,
}

/// What the router and every lane share (the map is apart: lanes hold
/// only a `Weak` to it, so dropping the router drops it).
struct Shared<K, T> {
    config: Config,
    consumer: Consumer<T>,
    observer: Option<Arc<dyn LaneObserver<K>>>,
    stats: Stats,
}

impl<K, T> Shared<K, T> {
    fn created(&self, key: &K, lane: u64) {
        if let Some(observer) = &self.observer {
            observer.created(key, lane);
        }
    }

    fn closed(&self, key: &K, lane: u64, end: LaneEnd) {
        if let Some(observer) = &self.observer {
            observer.closed(key, lane, end);
        }
    }
}

fn lock<K, T>(map: &Map<K, T>) -> MutexGuard<'_, HashMap<K, LaneHandle<T>>> {
    map.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A per-key ordering router: items of one key are consumed one at a time,
/// in route order, on that key's lane; keys never wait for each other.
pub struct IdleRouter<K, T> {
    lanes: Arc<Map<K, T>>,
    shared: Arc<Shared<K, T>>,
    runtime: Handle,
    next_id: AtomicU64,
}

impl<K, T> IdleRouter<K, T>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    T: Send + 'static,
{
    /// A router spawning its lanes on `runtime`.
    pub fn new(runtime: Handle, config: Config, consumer: Consumer<T>) -> Self {
        Self::with_observer(runtime, config, consumer, None)
    }

    /// A router reporting its lanes to `observer`.
    pub fn with_observer(
        runtime: Handle,
        config: Config,
        consumer: Consumer<T>,
        observer: Option<Arc<dyn LaneObserver<K>>>,
    ) -> Self {
        Self {
            lanes: Arc::new(Mutex::new(HashMap::new())),
            shared: Arc::new(Shared {
                config,
                consumer,
                observer,
                stats: Stats::default(),
            }),
            runtime,
            next_id: AtomicU64::new(1),
        }
    }

    /// Queues `item` behind `key`'s earlier items. `Ok(depth)`: admitted,
    /// `depth` the lane's unfinished items before it. `Err(item)`: refused,
    /// the lane already holds `capacity`.
    ///
    /// # Errors
    /// The item back when it was refused.
    pub fn route(&self, key: K, item: T, capacity: Option<usize>) -> Result<usize, T> {
        let mut lanes = lock(&self.lanes);
        let lane = lanes
            .entry(key.clone())
            .or_insert_with(|| self.spawn_lane(key));
        let depth = lane.pending.load(Ordering::Acquire);
        if capacity.is_some_and(|capacity| depth >= capacity) {
            self.shared.stats.refused.fetch_add(1, Ordering::Relaxed);
            return Err(item);
        }
        if self.shared.config.warn_at.is_some_and(|at| depth >= at) {
            self.shared.stats.warnings.fetch_add(1, Ordering::Relaxed);
        }
        lane.pending.fetch_add(1, Ordering::AcqRel);
        if let Err(back) = lane.tx.send(item) {
            // The lane's task is gone (it cannot be while registered, but
            // never lose the item silently).
            lane.pending.fetch_sub(1, Ordering::AcqRel);
            return Err(back.0);
        }
        Ok(depth)
    }

    /// Lanes registered now.
    pub fn lane_count(&self) -> usize {
        lock(&self.lanes).len()
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        let stats = &self.shared.stats;
        Counters {
            created: stats.created.load(Ordering::Relaxed),
            live: stats.live.load(Ordering::Relaxed),
            refused: stats.refused.load(Ordering::Relaxed),
            panics: stats.panics.load(Ordering::Relaxed),
            warnings: stats.warnings.load(Ordering::Relaxed),
        }
    }

    /// Called with the map locked: installs a lane for `key`.
    fn spawn_lane(&self, key: K) -> LaneHandle<T> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let pending = Arc::new(AtomicUsize::new(0));
        self.shared.stats.created.fetch_add(1, Ordering::Relaxed);
        self.shared.stats.live.fetch_add(1, Ordering::Relaxed);
        self.shared.created(&key, id);
        let lane = Lane {
            key,
            id,
            pending: Arc::clone(&pending),
            lanes: Arc::downgrade(&self.lanes),
            shared: Arc::clone(&self.shared),
            ended: false,
        };
        self.runtime.spawn(lane.run(rx));
        LaneHandle { id, tx, pending }
    }
}

// ---------------------------------------------------------------------------
// A lane's task
// ---------------------------------------------------------------------------

/// One lane's task state. Dropped unfinished (its runtime shut down), it
/// unregisters itself and reports `Cancelled`.
struct Lane<K: Hash + Eq, T> {
    key: K,
    id: u64,
    pending: Arc<AtomicUsize>,
    lanes: Weak<Map<K, T>>,
    shared: Arc<Shared<K, T>>,
    ended: bool,
}

enum Reap {
    /// Removed from the map: the lane ends.
    Reaped,
    /// The router is gone: nothing can route here any more.
    RouterGone,
    /// Work arrived, or the lane is not the registered one: keep going.
    Busy,
}

impl<K, T> Lane<K, T>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    T: Send + 'static,
{
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<T>) {
        let ttl = self.shared.config.idle_ttl;
        loop {
            tokio::select! {
                next = rx.recv() => match next {
                    Some(item) => {
                        let work = AssertUnwindSafe(|| (self.shared.consumer)(self.id, item));
                        let outcome = match std::panic::catch_unwind(work) {
                            Ok(work) => CatchUnwind(work).await,
                            Err(panic) => Err(panic),
                        };
                        self.pending.fetch_sub(1, Ordering::AcqRel);
                        if let Err(panic) = outcome {
                            if self.shared.config.catch_panics {
                                self.shared.stats.panics.fetch_add(1, Ordering::Relaxed);
                            } else {
                                self.unregister(LaneEnd::Panicked);
                                drop(rx);
                                std::panic::resume_unwind(panic);
                            }
                        }
                    }
                    None => {
                        self.end(LaneEnd::Closed);
                        return;
                    }
                },
                () = idle(ttl) => match self.try_reap() {
                    Reap::Reaped => return,
                    Reap::RouterGone => {
                        self.end(LaneEnd::Closed);
                        return;
                    }
                    Reap::Busy => {}
                },
            }
        }
    }

    /// The idle timer fired: remove this lane if it is still the key's lane
    /// and holds nothing.
    fn try_reap(&mut self) -> Reap {
        let Some(lanes) = self.lanes.upgrade() else {
            return Reap::RouterGone;
        };
        let mut map = lock(&lanes);
        match map.get(&self.key) {
            Some(lane) if lane.id == self.id && self.pending.load(Ordering::Acquire) == 0 => {
                map.remove(&self.key);
                // Reported under the lock: no new lane for the key can be
                // announced before this one's end.
                self.end(LaneEnd::Reaped);
                Reap::Reaped
            }
            _ => Reap::Busy,
        }
    }

    /// Removes this lane's entry if it is still the registered one, and
    /// reports its end.
    fn unregister(&mut self, end: LaneEnd) {
        if self.ended {
            return;
        }
        match self.lanes.upgrade() {
            Some(lanes) => {
                let mut map = lock(&lanes);
                if map.get(&self.key).is_some_and(|lane| lane.id == self.id) {
                    map.remove(&self.key);
                }
                self.end(end);
            }
            None => self.end(end),
        }
    }

    fn end(&mut self, end: LaneEnd) {
        if !self.ended {
            self.ended = true;
            self.shared.closed(&self.key, self.id, end);
        }
    }
}

impl<K: Hash + Eq, T> Drop for Lane<K, T> {
    fn drop(&mut self) {
        if !self.ended {
            // Dropped unfinished: the runtime is shutting down.
            if let Some(lanes) = self.lanes.upgrade() {
                let mut map = lock(&lanes);
                if map.get(&self.key).is_some_and(|lane| lane.id == self.id) {
                    map.remove(&self.key);
                }
                drop(map);
            }
            self.ended = true;
            self.shared.closed(&self.key, self.id, LaneEnd::Cancelled);
        }
        self.shared.stats.live.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The idle timer: the TTL, or never.
async fn idle(ttl: Option<Duration>) {
    match ttl {
        Some(ttl) => sleep(ttl).await,
        None => std::future::pending().await,
    }
}

/// Polls a future, turning a panic into an error.
struct CatchUnwind(Work);

impl Future for CatchUnwind {
    type Output = Result<(), Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let work = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(())) => Poll::Ready(Ok(())),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

// ---------------------------------------------------------------------------
// lanesim adapter
// ---------------------------------------------------------------------------

/// The lanes target: an [`IdleRouter`] per run.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdleLanes;

struct Reports(LaneReports);

impl LaneObserver<u64> for Reports {
    fn created(&self, key: &u64, lane: u64) {
        self.0.created(*key, LaneId(lane));
    }

    fn closed(&self, key: &u64, lane: u64, end: LaneEnd) {
        let exit = match end {
            LaneEnd::Reaped => LaneExit::Reaped,
            LaneEnd::Closed => LaneExit::Closed,
            LaneEnd::Panicked => LaneExit::Panicked,
            LaneEnd::Cancelled => LaneExit::Cancelled,
        };
        self.0.closed(*key, LaneId(lane), exit);
    }
}

impl LanesTarget for IdleLanes {
    fn capabilities(&self) -> LanesCapabilities {
        LanesCapabilities {
            hazards: &[],
            modes: &[ModeKind::Router, ModeKind::Reject, ModeKind::Warn],
            lifecycle: true,
            stats: true,
            fixed: LanesFixed::default(),
            sites: Sites::default(),
        }
    }

    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        let config = Config {
            idle_ttl: setup.idle_ttl,
            catch_panics: !matches!(setup.mode, Mode::Router),
            warn_at: match setup.mode {
                Mode::Warn { limit } => Some(limit),
                Mode::Router | Mode::Reject { .. } => None,
            },
        };
        let handler = setup.handler;
        let consumer: Consumer<Item> =
            Arc::new(move |lane, item| handler.call_on(LaneId(lane), item));
        let observer: Arc<dyn LaneObserver<u64>> = Arc::new(Reports(setup.reports));
        Ok(Box::new(Adapter(IdleRouter::with_observer(
            setup.runtime,
            config,
            consumer,
            Some(observer),
        ))))
    }
}

struct Adapter(IdleRouter<u64, Item>);

impl Lanes for Adapter {
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        self.0.route(item.key, item, capacity)
    }

    fn stats(&self) -> Option<LaneStats> {
        let counters = self.0.counters();
        Some(LaneStats {
            lanes_created: counters.created,
            lanes_live: counters.live,
            items_shed: counters.refused,
            handler_panics: counters.panics,
        })
    }
}

// ---------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    type Log = Arc<Mutex<Vec<(u64, u64, u64)>>>;
    type Events = Arc<Mutex<Vec<(u64, u64, Option<LaneEnd>)>>>;

    struct Recorder(Events);

    impl LaneObserver<u64> for Recorder {
        fn created(&self, key: &u64, lane: u64) {
            self.0.lock().unwrap().push((*key, lane, None));
        }

        fn closed(&self, key: &u64, lane: u64, end: LaneEnd) {
            self.0.lock().unwrap().push((*key, lane, Some(end)));
        }
    }

    /// A router of `(key, seq)` items whose consumer takes `work` per item
    /// and logs `(key, seq, lane)` when done.
    fn router(ttl: Option<Duration>, work: Duration) -> (IdleRouter<u64, (u64, u64)>, Log, Events) {
        let log: Log = Arc::default();
        let events: Events = Arc::default();
        let sink = Arc::clone(&log);
        let consumer: Consumer<(u64, u64)> = Arc::new(move |lane, (key, seq)| {
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                if !work.is_zero() {
                    tokio::time::sleep(work).await;
                }
                sink.lock().unwrap().push((key, seq, lane));
            })
        });
        let config = Config {
            idle_ttl: ttl,
            ..Config::default()
        };
        let observer: Arc<dyn LaneObserver<u64>> = Arc::new(Recorder(Arc::clone(&events)));
        let router = IdleRouter::with_observer(
            tokio::runtime::Handle::current(),
            config,
            consumer,
            Some(observer),
        );
        (router, log, events)
    }

    async fn settle() {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn items_of_a_key_run_in_route_order() {
        let (router, log, _) = router(None, Duration::from_millis(1));
        let mut seq = 0;
        for round in 0..20u64 {
            for key in 0..4u64 {
                let depth = router.route(key, (key, seq), None).unwrap();
                assert_eq!(depth, round as usize, "nothing handled yet");
                seq += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let log = log.lock().unwrap();
        assert_eq!(log.len(), 80);
        for key in 0..4u64 {
            let seqs: Vec<u64> = log
                .iter()
                .filter(|(k, _, _)| *k == key)
                .map(|(_, s, _)| *s)
                .collect();
            assert_eq!(seqs.len(), 20);
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "key {key}: {seqs:?}");
        }
        // The keys ran side by side: 20 items of 1 ms each, all done by 100 ms.
        assert_eq!(router.counters().created, 4);
    }

    #[tokio::test(start_paused = true)]
    async fn capacity_refuses_past_the_limit_and_reports_depth() {
        let (router, log, _) = router(None, Duration::from_millis(10));
        assert_eq!(router.route(1, (1, 0), Some(2)), Ok(0));
        assert_eq!(router.route(1, (1, 1), Some(2)), Ok(1));
        assert_eq!(router.route(1, (1, 2), Some(2)), Err((1, 2)));
        // Another key is not held back by key 1's full lane.
        assert_eq!(router.route(2, (2, 3), Some(2)), Ok(0));
        tokio::time::sleep(Duration::from_millis(15)).await;
        // One of key 1's items done: room for one more.
        assert_eq!(router.route(1, (1, 4), Some(2)), Ok(1));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(log.lock().unwrap().len(), 4);
        assert_eq!(router.counters().refused, 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_lane_reaps_itself_after_the_ttl() {
        let ttl = Duration::from_millis(50);
        let (router, log, events) = router(Some(ttl), Duration::from_millis(5));
        let start = tokio::time::Instant::now();
        router.route(7, (7, 0), None).unwrap();
        settle().await;
        assert_eq!(router.lane_count(), 1);
        // Handled at 5 ms; idle from then: still there at 50 ms.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(router.lane_count(), 1, "reaped before its TTL");
        tokio::time::sleep(Duration::from_millis(10)).await;
        settle().await;
        assert_eq!(router.lane_count(), 0, "not reaped after its TTL");
        assert!(start.elapsed() <= Duration::from_millis(60));
        assert_eq!(log.lock().unwrap().len(), 1);
        assert_eq!(
            *events.lock().unwrap(),
            vec![(7, 1, None), (7, 1, Some(LaneEnd::Reaped))]
        );
        assert_eq!(router.counters().live, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_lane_is_not_reaped() {
        let ttl = Duration::from_millis(20);
        let (router, log, _) = router(Some(ttl), Duration::ZERO);
        // An item every 15 ms, under the TTL: one lane throughout.
        for seq in 0..10 {
            router.route(3, (3, seq), None).unwrap();
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        assert_eq!(router.counters().created, 1);
        assert_eq!(log.lock().unwrap().len(), 10);
    }

    #[tokio::test(start_paused = true)]
    async fn a_reaped_key_gets_a_new_lane() {
        let ttl = Duration::from_millis(10);
        let (router, log, events) = router(Some(ttl), Duration::ZERO);
        router.route(4, (4, 0), None).unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert_eq!(router.lane_count(), 0);
        assert_eq!(router.route(4, (4, 1), None), Ok(0));
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(
            *log.lock().unwrap(),
            vec![(4, 0, 1), (4, 1, 2)],
            "the second item ran on a new lane"
        );
        let events = events.lock().unwrap();
        assert_eq!(
            events[..3],
            [(4, 1, None), (4, 1, Some(LaneEnd::Reaped)), (4, 2, None)]
        );
        assert_eq!(router.counters().created, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_router_drains_every_lane() {
        let ttl = Duration::from_secs(10);
        let (router, log, events) = router(Some(ttl), Duration::from_millis(3));
        for seq in 0..30u64 {
            router.route(seq % 3, (seq % 3, seq), None).unwrap();
        }
        settle().await;
        drop(router);
        let dropped = tokio::time::Instant::now();
        tokio::time::sleep(Duration::from_millis(40)).await;
        assert_eq!(log.lock().unwrap().len(), 30, "queued items lost");
        let ends: Vec<_> = events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|&(_, _, end)| end)
            .collect();
        assert_eq!(ends, vec![LaneEnd::Closed; 3]);
        // They ended on the drop, not on their (10 s) idle timeout.
        assert!(dropped.elapsed() < ttl);
    }

    #[tokio::test(start_paused = true)]
    async fn caught_panics_keep_the_lane() {
        let log: Log = Arc::default();
        let sink = Arc::clone(&log);
        let consumer: Consumer<(u64, u64)> = Arc::new(move |lane, (key, seq)| {
            assert!(seq != 1, "planted panic (sync)");
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                tokio::task::yield_now().await;
                assert!(seq != 2, "planted panic (async)");
                sink.lock().unwrap().push((key, seq, lane));
            })
        });
        let config = Config {
            catch_panics: true,
            ..Config::default()
        };
        let router = IdleRouter::new(tokio::runtime::Handle::current(), config, consumer);
        for seq in 0..4 {
            router.route(1, (1, seq), None).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(*log.lock().unwrap(), vec![(1, 0, 1), (1, 3, 1)]);
        assert_eq!(router.counters().panics, 2);
        assert_eq!(router.lane_count(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_uncaught_panic_ends_the_lane_and_the_key_gets_a_new_one() {
        let events: Events = Arc::default();
        let consumer: Consumer<(u64, u64)> = Arc::new(move |_, (_, seq)| {
            Box::pin(async move {
                assert!(seq != 0, "planted panic");
            })
        });
        let observer: Arc<dyn LaneObserver<u64>> = Arc::new(Recorder(Arc::clone(&events)));
        let router = IdleRouter::with_observer(
            tokio::runtime::Handle::current(),
            Config::default(),
            consumer,
            Some(observer),
        );
        router.route(9, (9, 0), None).unwrap();
        settle().await;
        assert_eq!(router.lane_count(), 0);
        assert_eq!(router.counters().live, 0);
        router.route(9, (9, 1), None).unwrap();
        settle().await;
        assert_eq!(
            *events.lock().unwrap(),
            vec![(9, 1, None), (9, 1, Some(LaneEnd::Panicked)), (9, 2, None)]
        );
    }
}
