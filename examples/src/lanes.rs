//! A per-key ordering router: every key gets its own FIFO lane, served by
//! one consumer task, so items of one key are handled one at a time and in
//! route order while distinct keys run concurrently.
//!
//! Design:
//!
//! - The router owns a `Mutex<HashMap<key, LaneEntry>>`. An entry holds the
//!   lane's id, the sending half of an unbounded tokio `mpsc` channel and a
//!   shared pending counter (items admitted and not yet handled, the running
//!   one included).
//! - `route` takes the lock, finds or creates the key's lane, admits the
//!   item against the capacity by bumping the pending counter, and sends it,
//!   all under the lock. So under the lock, "pending == 0" means the channel
//!   is empty and the lane is not running anything.
//! - Each lane task waits for its next item with the idle TTL as a timeout.
//!   When the timeout fires it takes the lock and removes its own entry if
//!   nothing is pending; otherwise (an item was admitted meanwhile) it
//!   declines and goes on. Once removed, no `route` can reach the old
//!   channel, and the next `route` for the key creates a fresh lane. There
//!   is no separate sweeper: each lane knows when it went idle.
//! - Dropping the router drops every sender; each lane drains what is
//!   queued, sees its channel closed and ends.
//! - Panics: in the dispatcher modes (`Reject`, `Warn`) a handler panic is
//!   caught and counted and the lane goes on. In `Router` mode the lane
//!   removes itself from the map (so the key gets a new lane on its next
//!   route), reports itself as panicked, and lets the panic carry on
//!   unwinding through its task. Items still queued behind the panicking
//!   one die with that lane.

use std::any::Any;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use lanesim_target::lanes::{
    BoxFuture, Handler, Item, LaneExit, LaneId, LaneReports, LaneStats, Lanes, LanesCapabilities,
    LanesFixed, LanesSetup, LanesTarget, Mode, ModeKind,
};
use lanesim_target::probe::{self, Role, Sites};
// lanesim's shim: std's locks and atomics, tokio's runtime handle and
// timers in production; the model checker's under `--cfg shuttle`.
use lanesim_target::shim::std_sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use lanesim_target::shim::std_sync::{Arc, Mutex, MutexGuard, PoisonError};
use lanesim_target::shim::time::timeout;
use tokio::sync::mpsc;

/// Marks this router's code makes.
const MARK_LANE_CREATED: &str = "lane_created";
const MARK_LANE_REAPED: &str = "lane_reaped";
const MARK_REAP_DECLINED: &str = "reap_declined";
const MARK_ITEM_REFUSED: &str = "item_refused";
const MARK_LIMIT_WARNED: &str = "limit_warned";
const MARK_PANIC_CAUGHT: &str = "handler_panic_caught";
const MARK_LANE_PANICKED: &str = "lane_panicked";
const MARK_STALE_LANE: &str = "stale_lane_replaced";

/// Preemption points: between a lane's idle timeout and its reap decision.
const POINT_REAP: &str = "reap_window";

const MARKS: &[&str] = &[
    MARK_LANE_CREATED,
    MARK_LANE_REAPED,
    MARK_REAP_DECLINED,
    MARK_ITEM_REFUSED,
    MARK_LIMIT_WARNED,
    MARK_PANIC_CAUGHT,
    MARK_LANE_PANICKED,
    MARK_STALE_LANE,
];
const POINTS: &[&str] = &[POINT_REAP];
/// The races the shipped scenarios are written to reach, as this router
/// shows them.
const ROLES: &[(Role, &str)] = &[
    (Role::LaneCreated, MARK_LANE_CREATED),
    (Role::ReapWon, MARK_LANE_REAPED),
    (Role::ReapDeclined, MARK_REAP_DECLINED),
    (Role::CapacityRefused, MARK_ITEM_REFUSED),
    (Role::HandlerPanicked, MARK_PANIC_CAUGHT),
    (Role::LaneExitPanicked, MARK_LANE_PANICKED),
];

/// Fixed-key hasher, so the map's layout (and the order lanes are closed in
/// on drop) is the same on every run.
type FixedState = BuildHasherDefault<DefaultHasher>;

/// The lanes target of this crate.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExampleLanes;

impl LanesTarget for ExampleLanes {
    fn capabilities(&self) -> LanesCapabilities {
        LanesCapabilities {
            hazards: &[],
            modes: &[ModeKind::Router, ModeKind::Reject, ModeKind::Warn],
            lifecycle: true,
            stats: true,
            fixed: LanesFixed::default(),
            sites: Sites {
                marks: MARKS,
                points: POINTS,
                roles: ROLES,
            },
        }
    }

    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        Ok(Box::new(LaneRouter::new(setup)))
    }
}

/// One live lane, as the map holds it.
struct LaneEntry {
    id: LaneId,
    tx: mpsc::UnboundedSender<Item>,
    pending: Arc<AtomicUsize>,
}

#[derive(Default)]
struct Counters {
    lanes_created: AtomicU64,
    lanes_live: AtomicU64,
    items_shed: AtomicU64,
    handler_panics: AtomicU64,
}

/// State shared by the router handle and its lane tasks.
struct Shared {
    lanes: Mutex<HashMap<u64, LaneEntry, FixedState>>,
    next_lane: AtomicU64,
    runtime: lanesim_target::shim::task::Handle,
    idle_ttl: Option<Duration>,
    mode: Mode,
    handler: Handler,
    reports: LaneReports,
    counters: Counters,
}

impl Shared {
    /// The lane map. A poisoned lock is taken anyway: no code path leaves
    /// the map inconsistent mid-update.
    fn lanes(&self) -> MutexGuard<'_, HashMap<u64, LaneEntry, FixedState>> {
        self.lanes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Removes `key`'s entry if it is still lane `id`. Call with the lock
    /// held.
    fn remove_if_current(
        map: &mut HashMap<u64, LaneEntry, FixedState>,
        key: u64,
        id: LaneId,
    ) -> bool {
        if map.get(&key).is_some_and(|entry| entry.id == id) {
            map.remove(&key);
            true
        } else {
            false
        }
    }

    /// Creates, registers and spawns a new lane for `key`. Call with the
    /// lock held (`map` is the locked map); the key must have no entry.
    fn open_lane(self: &Arc<Self>, map: &mut HashMap<u64, LaneEntry, FixedState>, key: u64) {
        let id = LaneId(self.next_lane.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = mpsc::unbounded_channel();
        let pending = Arc::new(AtomicUsize::new(0));
        map.insert(
            key,
            LaneEntry {
                id,
                tx,
                pending: Arc::clone(&pending),
            },
        );
        self.counters.lanes_created.fetch_add(1, Ordering::Relaxed);
        self.counters.lanes_live.fetch_add(1, Ordering::Relaxed);
        probe::mark(MARK_LANE_CREATED);
        // Reported before the lane's task exists, so before any item of it
        // can start.
        self.reports.created(key, id);

        let guard = LaneGuard {
            shared: Arc::clone(self),
            key,
            id,
            done: false,
        };
        let lane = Lane { guard, rx, pending };
        drop(self.runtime.spawn(lane.run()));
    }
}

/// Ends a lane's bookkeeping if its task is dropped before it finished on
/// its own (its runtime shut down): removes its entry and reports it
/// cancelled. Disarmed (`done`) by every normal exit.
struct LaneGuard {
    shared: Arc<Shared>,
    key: u64,
    id: LaneId,
    done: bool,
}

impl LaneGuard {
    /// Records the lane's end: called with the lock held, after the entry
    /// is gone from the map (or was never reachable any more).
    fn finish(&mut self, exit: LaneExit) {
        self.done = true;
        self.shared
            .counters
            .lanes_live
            .fetch_sub(1, Ordering::Relaxed);
        self.shared.reports.closed(self.key, self.id, exit);
    }
}

impl Drop for LaneGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let mut map = shared.lanes();
        Shared::remove_if_current(&mut map, self.key, self.id);
        self.finish(LaneExit::Cancelled);
    }
}

/// A lane's consumer task state.
struct Lane {
    // Declared first so it drops before the receiver: the entry leaves the
    // map before the channel closes.
    guard: LaneGuard,
    rx: mpsc::UnboundedReceiver<Item>,
    pending: Arc<AtomicUsize>,
}

impl Lane {
    async fn run(mut self) {
        let ttl = self.guard.shared.idle_ttl;
        loop {
            let next = match ttl {
                None => self.rx.recv().await,
                // `recv` is cancel-safe: a timeout loses nothing.
                Some(ttl) => match timeout(ttl, self.rx.recv()).await {
                    Ok(next) => next,
                    Err(_elapsed) => {
                        if self.try_reap().await {
                            return;
                        }
                        continue;
                    }
                },
            };
            let Some(item) = next else {
                // Every sender is gone: the router was dropped and the
                // queue is drained.
                let shared = Arc::clone(&self.guard.shared);
                let mut map = shared.lanes();
                Shared::remove_if_current(&mut map, self.guard.key, self.guard.id);
                self.guard.finish(LaneExit::Closed);
                return;
            };
            self.handle(item).await;
        }
    }

    /// The lane has been idle for its TTL: removes it if nothing was
    /// admitted meanwhile. True when the lane is gone.
    async fn try_reap(&mut self) -> bool {
        probe::preempt_point(POINT_REAP).await;
        let shared = Arc::clone(&self.guard.shared);
        let mut map = shared.lanes();
        let current = map
            .get(&self.guard.key)
            .is_some_and(|entry| entry.id == self.guard.id);
        if !current {
            // The router was dropped; the channel is closing and `recv`
            // will say so once the queue is drained.
            return false;
        }
        if self.pending.load(Ordering::Acquire) != 0 {
            // Admitted under the lock after the timeout fired: handle it.
            probe::mark(MARK_REAP_DECLINED);
            return false;
        }
        map.remove(&self.guard.key);
        // Nothing can be queued: pending is counted up under the lock
        // before every send.
        debug_assert!(self.rx.try_recv().is_err());
        probe::mark(MARK_LANE_REAPED);
        // Reported under the lock, so a new lane for the key cannot be
        // reported before this one's end.
        self.guard.finish(LaneExit::Reaped);
        true
    }

    async fn handle(&mut self, item: Item) {
        let shared = &self.guard.shared;
        let lane = self.guard.id;
        let handler = &shared.handler;
        let outcome = match catch_unwind(AssertUnwindSafe(|| handler.call_on(lane, item))) {
            Ok(fut) => CatchUnwind(fut).await,
            Err(payload) => Err(payload),
        };
        self.pending.fetch_sub(1, Ordering::Release);
        let Err(payload) = outcome else {
            return;
        };
        match shared.mode {
            Mode::Reject { .. } | Mode::Warn { .. } => {
                shared
                    .counters
                    .handler_panics
                    .fetch_add(1, Ordering::Relaxed);
                probe::mark(MARK_PANIC_CAUGHT);
            }
            Mode::Router => {
                // A plain router does not own the handler's panics: the lane
                // dies with it. Take it out of the map first so the key gets
                // a new lane on its next route.
                probe::mark(MARK_LANE_PANICKED);
                let shared = Arc::clone(shared);
                {
                    let mut map = shared.lanes();
                    Shared::remove_if_current(&mut map, self.guard.key, lane);
                    self.guard.finish(LaneExit::Panicked);
                }
                resume_unwind(payload);
            }
        }
    }
}

/// Polls a future inside `catch_unwind`.
struct CatchUnwind(BoxFuture);

impl Future for CatchUnwind {
    type Output = Result<(), Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = &mut self.0;
        match catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Ready(())) => Poll::Ready(Ok(())),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// The router handle the world holds. Dropping it closes every lane once
/// its queued work is done.
struct LaneRouter {
    shared: Arc<Shared>,
}

impl LaneRouter {
    fn new(setup: LanesSetup) -> Self {
        Self {
            shared: Arc::new(Shared {
                lanes: Mutex::new(HashMap::default()),
                next_lane: AtomicU64::new(1),
                runtime: setup.runtime,
                idle_ttl: setup.idle_ttl,
                mode: setup.mode,
                handler: setup.handler,
                reports: setup.reports,
                counters: Counters::default(),
            }),
        }
    }

    /// The limit `route` admits against (`None`: admit everything).
    fn admit_limit(&self, capacity: Option<usize>) -> Option<usize> {
        match self.shared.mode {
            Mode::Router => capacity,
            Mode::Reject { limit } => Some(capacity.map_or(limit, |c| c.min(limit))),
            Mode::Warn { .. } => None,
        }
    }
}

impl Lanes for LaneRouter {
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        let limit = self.admit_limit(capacity);
        let shared = &self.shared;
        let mut map = shared.lanes();
        let mut item = item;
        loop {
            if !map.contains_key(&item.key) {
                shared.open_lane(&mut map, item.key);
            }
            let Some(entry) = map.get(&item.key) else {
                unreachable!("the lane was just opened");
            };
            let admitted =
                entry
                    .pending
                    .fetch_update(Ordering::AcqRel, Ordering::Acquire, |pending| match limit {
                        Some(limit) if pending >= limit => None,
                        _ => Some(pending + 1),
                    });
            let depth = match admitted {
                Ok(depth) => depth,
                Err(_full) => {
                    shared.counters.items_shed.fetch_add(1, Ordering::Relaxed);
                    probe::mark(MARK_ITEM_REFUSED);
                    return Err(item);
                }
            };
            match entry.tx.send(item) {
                Ok(()) => {
                    // Admitted past the limit: warned about, not shed
                    // (`LaneStats::items_shed` counts refusals only).
                    if let Mode::Warn { limit } = shared.mode {
                        if depth >= limit {
                            probe::mark(MARK_LIMIT_WARNED);
                        }
                    }
                    return Ok(depth);
                }
                Err(mpsc::error::SendError(back)) => {
                    // The lane's task is gone without taking its entry
                    // along (its runtime dropped it): replace the lane.
                    probe::mark(MARK_STALE_LANE);
                    map.remove(&back.key);
                    item = back;
                }
            }
        }
    }

    fn stats(&self) -> Option<LaneStats> {
        let counters = &self.shared.counters;
        Some(LaneStats {
            lanes_created: counters.lanes_created.load(Ordering::Relaxed),
            lanes_live: counters.lanes_live.load(Ordering::Relaxed),
            items_shed: counters.items_shed.load(Ordering::Relaxed),
            handler_panics: counters.handler_panics.load(Ordering::Relaxed),
        })
    }
}

impl Drop for LaneRouter {
    fn drop(&mut self) {
        // Drop the senders outside the lock: a lane woken by its closed
        // channel takes the lock to finish.
        let entries: Vec<LaneEntry> = {
            let mut map = self.shared.lanes();
            map.drain().map(|(_, entry)| entry).collect()
        };
        drop(entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanesim_target::lanes::LaneEvents;

    #[derive(Default)]
    struct Events(Mutex<Vec<(u64, LaneId, Option<LaneExit>)>>);

    impl LaneEvents for Events {
        fn created(&self, key: u64, lane: LaneId) {
            self.0.lock().unwrap().push((key, lane, None));
        }
        fn closed(&self, key: u64, lane: LaneId, exit: LaneExit) {
            self.0.lock().unwrap().push((key, lane, Some(exit)));
        }
    }

    type Log = Arc<Mutex<Vec<Item>>>;

    fn recording_handler(log: Log, delay: Duration) -> Handler {
        Handler::new(move |_lane, item| {
            let log = Arc::clone(&log);
            Box::pin(async move {
                tokio::time::sleep(delay).await;
                log.lock().unwrap().push(item);
            })
        })
    }

    /// Waits (up to a few seconds) until `cond` holds.
    async fn wait_until(mut cond: impl FnMut() -> bool) {
        for _ in 0..5000 {
            if cond() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        panic!("condition not reached in time");
    }

    fn build(mode: Mode, ttl: Option<Duration>, handler: Handler) -> (Box<dyn Lanes>, Arc<Events>) {
        let events = Arc::new(Events::default());
        let lanes = ExampleLanes
            .build(LanesSetup {
                runtime: tokio::runtime::Handle::current(),
                idle_ttl: ttl,
                mode,
                handler,
                reports: LaneReports::new(Arc::clone(&events) as Arc<dyn LaneEvents>),
            })
            .unwrap();
        (lanes, events)
    }

    #[tokio::test]
    async fn items_of_a_key_run_in_route_order() {
        let log = Log::default();
        let (lanes, _) = build(
            Mode::Router,
            None,
            recording_handler(Arc::clone(&log), Duration::from_millis(1)),
        );
        let mut seq = 0;
        for _ in 0..20 {
            for key in 0..4 {
                lanes.route(Item { key, seq }, None).unwrap();
                seq += 1;
            }
        }
        drop(lanes);
        wait_until(|| log.lock().unwrap().len() == 80).await;
        let log = log.lock().unwrap();
        for key in 0..4 {
            let seqs: Vec<u64> = log.iter().filter(|i| i.key == key).map(|i| i.seq).collect();
            assert_eq!(seqs.len(), 20);
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "key {key}: {seqs:?}");
        }
    }

    #[tokio::test]
    async fn capacity_counts_the_running_item() {
        let log = Log::default();
        let (lanes, _) = build(
            Mode::Router,
            None,
            recording_handler(Arc::clone(&log), Duration::from_millis(50)),
        );
        let item = |seq| Item { key: 7, seq };
        assert_eq!(lanes.route(item(0), Some(2)), Ok(0));
        tokio::task::yield_now().await; // let the first one start
        assert_eq!(lanes.route(item(1), Some(2)), Ok(1));
        assert_eq!(lanes.route(item(2), Some(2)), Err(item(2)));
        // Another key is not affected.
        assert_eq!(lanes.route(Item { key: 8, seq: 3 }, Some(2)), Ok(0));
        wait_until(|| log.lock().unwrap().len() == 3).await;
        assert_eq!(lanes.route(item(4), Some(2)), Ok(0));
    }

    #[tokio::test]
    async fn idle_lanes_are_reaped_and_recreated() {
        let log = Log::default();
        let (lanes, events) = build(
            Mode::Router,
            Some(Duration::from_millis(20)),
            recording_handler(Arc::clone(&log), Duration::ZERO),
        );
        lanes.route(Item { key: 1, seq: 0 }, None).unwrap();
        wait_until(|| lanes.stats().unwrap().lanes_live == 0).await;
        assert_eq!(log.lock().unwrap().len(), 1);
        lanes.route(Item { key: 1, seq: 1 }, None).unwrap();
        drop(lanes);
        wait_until(|| events.0.lock().unwrap().len() == 4).await;
        assert_eq!(log.lock().unwrap().len(), 2);
        let events = events.0.lock().unwrap().clone();
        assert_eq!(
            events,
            vec![
                (1, LaneId(1), None),
                (1, LaneId(1), Some(LaneExit::Reaped)),
                (1, LaneId(2), None),
                (1, LaneId(2), Some(LaneExit::Closed)),
            ]
        );
    }

    #[tokio::test]
    async fn dispatcher_survives_handler_panics() {
        let log = Log::default();
        let inner = recording_handler(Arc::clone(&log), Duration::ZERO);
        let handler = Handler::new(move |lane, item| {
            assert!(item.seq != 1, "injected panic");
            inner.call_on(lane.unwrap(), item)
        });
        let (lanes, _) = build(Mode::Reject { limit: 8 }, None, handler);
        for seq in 0..3 {
            lanes.route(Item { key: 5, seq }, Some(8)).unwrap();
        }
        wait_until(|| log.lock().unwrap().len() == 2).await;
        let seqs: Vec<u64> = log.lock().unwrap().iter().map(|i| i.seq).collect();
        assert_eq!(seqs, vec![0, 2]);
        let stats = lanes.stats().unwrap();
        assert_eq!(stats.handler_panics, 1);
        assert_eq!(stats.lanes_live, 1);
    }

    #[tokio::test]
    async fn router_replaces_a_lane_that_panicked() {
        let log = Log::default();
        let inner = recording_handler(Arc::clone(&log), Duration::ZERO);
        let handler = Handler::new(move |lane, item| {
            assert!(item.seq != 0, "injected panic");
            inner.call_on(lane.unwrap(), item)
        });
        let (lanes, events) = build(Mode::Router, None, handler);
        lanes.route(Item { key: 9, seq: 0 }, None).unwrap();
        wait_until(|| lanes.stats().unwrap().lanes_live == 0).await;
        assert_eq!(lanes.route(Item { key: 9, seq: 1 }, None), Ok(0));
        wait_until(|| log.lock().unwrap().len() == 1).await;
        let events = events.0.lock().unwrap().clone();
        assert_eq!(events[1], (9, LaneId(1), Some(LaneExit::Panicked)));
        assert_eq!(events[2], (9, LaneId(2), None));
    }
}
