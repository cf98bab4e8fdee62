//! A per-key ordering router whose lanes wait with `tokio::select!`.
//!
//! # Model
//!
//! Every key gets a *lane*: one tokio task fed by an unbounded `mpsc`
//! channel. A lane handles its items one at a time, in the order they were
//! routed, so items of one key never overlap and never reorder, while
//! distinct keys run concurrently on their own tasks.
//!
//! The router ([`SelectRouter`]) keeps a `Mutex<HashMap<key, LaneHandle>>`.
//! A handle holds the lane's id, the sending half of its channel and a
//! *pending* counter shared with the lane: the number of items admitted to
//! the lane and not yet finished, the running one included.
//!
//! # Invariants
//!
//! 1. **Admission is atomic under the map lock.** `route` finds or installs
//!    the key's lane, checks and bumps `pending`, and sends the item, all
//!    while holding the lock. Only the lane itself ever decrements
//!    `pending`, and only after an item's handler finished.
//! 2. **A lane leaves the map only under the lock, and only by its own
//!    hand** (reap, panic, cancellation), except when the router is dropped
//!    and empties the map. Every lane reports `closed` in the same critical
//!    section that removes it, and `created` is reported in the one that
//!    installs it, so the reports follow the map: a key never has two lanes
//!    reported live at once.
//! 3. **Reap is decided and done in one critical section.** An idle lane
//!    whose timer fired takes the lock and removes its entry only if
//!    `pending == 0`. By (1), under the lock `pending == 0` means the
//!    channel is empty and nothing is running, and once the entry is gone
//!    no `route` can reach the channel again. So a lane is never reaped
//!    holding work, and no item can be sent to a reaped lane. If `pending`
//!    is not zero (an item was admitted while the timer was firing), the
//!    reap is declined and the lane goes back to receiving: the item is
//!    already in its channel.
//!
//! # Idle loop
//!
//! Between items a lane waits in a `tokio::select!` on two futures: the next
//! item from its channel and `tokio::time::sleep(idle_ttl)`. The sleep is
//! created anew each time the lane goes idle, so the TTL counts from the end
//! of the last handled item. `recv` is cancel safe: when the timer wins, no
//! item is lost, and if both are ready at once whichever branch `select!`
//! picks is fine: a declined reap (invariant 3) goes round the loop and
//! receives the item. Without an idle TTL the lane just awaits `recv`.
//!
//! # Drop
//!
//! Dropping the router empties the map, which drops every lane's sender.
//! A lane then handles what is still queued (an `mpsc` receiver yields the
//! buffered items before reporting the channel closed), sees `None` and
//! ends with [`LaneExit::Closed`]. A lane that is idle when this happens
//! may still see its timer fire first; it finds its entry gone, declines
//! the reap and receives the closure on the next turn.
//!
//! # Handler panics
//!
//! Handlers run on the lane's own task, through [`Handler::call_on`], inside
//! `catch_unwind` (both the synchronous call and every poll of the returned
//! future).
//!
//! - [`Mode::Reject`] and [`Mode::Warn`] are dispatchers: a panic is caught,
//!   counted (`handler_panics`), the item counts as handled and the lane
//!   carries on with its next item.
//! - [`Mode::Router`] lets the panic kill the lane: the lane removes its
//!   own entry and reports [`LaneExit::Panicked`] under the lock, then
//!   resumes the unwind through its task. Items still queued behind the
//!   panicking one die with the lane (they were admitted to it and no other
//!   lane may run them); the key's next `route` opens a fresh lane.
//!
//! A lane whose task is dropped unfinished (its runtime shut down) removes
//! its entry and reports [`LaneExit::Cancelled`] from its `Drop`.
//!
//! # Capacity and depth
//!
//! `route` answers `Ok(depth)` with the lane's `pending` before this item.
//! The limit it admits against depends on the mode: `Router` uses the
//! call's `capacity` (`None`: no limit), `Reject { limit }` the call's
//! `capacity` or else its `limit`, and `Warn { limit }` never refuses but
//! counts every item admitted at or past `limit` ([`SelectRouter::warnings`]).
//! An item is refused when `pending >= limit`; a refused item never opens
//! a lane.

use std::any::Any;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::future::Future;
use std::hash::BuildHasherDefault;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use lanesim_target::lanes::{
    BoxFuture, Handler, Item, LaneExit, LaneId, LaneReports, LaneStats, Lanes, LanesCapabilities,
    LanesFixed, LanesSetup, LanesTarget, Mode, ModeKind,
};
use lanesim_target::probe::Sites;
// lanesim's shim: std's locks and atomics, tokio's runtime handle and
// timers in production; the model checker's under `--cfg shuttle`.
use lanesim_target::shim::std_sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use lanesim_target::shim::std_sync::{Arc, Mutex, MutexGuard, PoisonError};
use lanesim_target::shim::task::Handle;
use lanesim_target::shim::time::sleep;
use tokio::sync::mpsc;

/// SipHash with fixed keys: the map's layout is the same on every run.
type FixedState = BuildHasherDefault<DefaultHasher>;

/// The `select!` router as a lanesim lanes target.
#[derive(Clone, Copy, Debug, Default)]
pub struct SelectLanes;

impl LanesTarget for SelectLanes {
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
        Ok(Box::new(SelectRouter::new(setup)))
    }
}

/// What a lane does when its handler panics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnPanic {
    /// Catch it, count it, and go on with the next item.
    Survive,
    /// Retire the lane and let the panic unwind through its task.
    Die,
}

/// The router's map and what creating a lane needs under the same lock.
struct Table {
    lanes: HashMap<u64, LaneHandle, FixedState>,
    /// The next lane's id: ids only grow, so a key's new lane always has a
    /// larger id than the one it replaces.
    next_id: u64,
}

/// The router's side of a lane.
struct LaneHandle {
    id: LaneId,
    tx: mpsc::UnboundedSender<Item>,
    /// Items admitted and not finished, the running one included. Bumped by
    /// `route` under the map lock, decremented by the lane after each item.
    pending: Arc<AtomicUsize>,
}

/// The dispatcher's counters.
#[derive(Default)]
struct Counters {
    lanes_created: AtomicU64,
    lanes_live: AtomicU64,
    items_shed: AtomicU64,
    handler_panics: AtomicU64,
    warnings: AtomicU64,
}

/// What the router and every lane share.
struct Shared {
    table: Mutex<Table>,
    runtime: Handle,
    idle_ttl: Option<Duration>,
    on_panic: OnPanic,
    handler: Handler,
    reports: LaneReports,
    counters: Counters,
}

impl Shared {
    /// The map lock. Nothing that can panic runs under it except the
    /// lifecycle reports; if one of those did, the table is still
    /// consistent (every mutation is done before reporting), so a poisoned
    /// lock is taken over rather than propagated.
    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A per-key FIFO router: one tokio task per key, reaped when idle.
pub struct SelectRouter {
    shared: Arc<Shared>,
    mode: Mode,
}

impl SelectRouter {
    /// A router spawning its lanes on `setup.runtime`.
    #[must_use]
    pub fn new(setup: LanesSetup) -> Self {
        let on_panic = match setup.mode {
            Mode::Router => OnPanic::Die,
            Mode::Reject { .. } | Mode::Warn { .. } => OnPanic::Survive,
        };
        let shared = Arc::new(Shared {
            table: Mutex::new(Table {
                lanes: HashMap::default(),
                next_id: 1,
            }),
            runtime: setup.runtime,
            idle_ttl: setup.idle_ttl,
            on_panic,
            handler: setup.handler,
            reports: setup.reports,
            counters: Counters::default(),
        });
        Self {
            shared,
            mode: setup.mode,
        }
    }

    /// Items admitted at or past the limit in [`Mode::Warn`].
    #[must_use]
    pub fn warnings(&self) -> u64 {
        self.shared.counters.warnings.load(Ordering::Relaxed)
    }

    /// The limit `route` refuses at, for a call with `capacity`.
    fn admit_limit(&self, capacity: Option<usize>) -> Option<usize> {
        match self.mode {
            Mode::Router => capacity,
            Mode::Reject { limit } => Some(capacity.unwrap_or(limit)),
            Mode::Warn { .. } => None,
        }
    }

    fn refuse(&self, item: Item) -> Result<usize, Item> {
        self.shared
            .counters
            .items_shed
            .fetch_add(1, Ordering::Relaxed);
        Err(item)
    }

    /// Installs a new lane for `key` and reports it. Call with the map lock
    /// held; the caller spawns the returned lane once the lock is released
    /// (spawning onto a runtime that has shut down drops the task at once,
    /// and the lane's `Drop` takes the lock).
    fn open_lane(&self, table: &mut Table, key: u64) -> Lane {
        let id = LaneId(table.next_id);
        table.next_id += 1;
        let (tx, rx) = mpsc::unbounded_channel();
        let pending = Arc::new(AtomicUsize::new(0));
        table.lanes.insert(
            key,
            LaneHandle {
                id,
                tx,
                pending: Arc::clone(&pending),
            },
        );
        let counters = &self.shared.counters;
        counters.lanes_created.fetch_add(1, Ordering::Relaxed);
        counters.lanes_live.fetch_add(1, Ordering::Relaxed);
        // Under the lock: the lane is installed, and no item of it can
        // start before its task is spawned, after this.
        self.shared.reports.created(key, id);
        Lane {
            shared: Arc::clone(&self.shared),
            key,
            id,
            rx,
            pending,
            retired: false,
        }
    }
}

impl Lanes for SelectRouter {
    fn route(&self, mut item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        let limit = self.admit_limit(capacity);
        loop {
            // Declared before the guard so that, on every path out of this
            // turn, the guard drops first: an unspawned lane's `Drop` takes
            // the lock (it retires the lane as cancelled).
            let mut new_lane = None;
            let mut guard = self.shared.table();
            let table = &mut *guard;
            if !table.lanes.contains_key(&item.key) {
                // A refused item does not open a lane.
                if limit == Some(0) {
                    return self.refuse(item);
                }
                new_lane = Some(self.open_lane(table, item.key));
            }
            let handle = table
                .lanes
                .get_mut(&item.key)
                .expect("the key has a lane: found or just opened");

            // Bump first and undo on refusal: the value `fetch_add` returns
            // is the depth at the instant of admission (the lane may finish
            // an item, and decrement, at any time). The transient bump of a
            // refused item is invisible: every other reader of `pending`
            // (routes, the reap check) holds this lock.
            let depth = handle.pending.fetch_add(1, Ordering::AcqRel);
            if limit.is_some_and(|limit| depth >= limit) {
                handle.pending.fetch_sub(1, Ordering::AcqRel);
                return self.refuse(item);
            }
            if let Mode::Warn { limit } = self.mode {
                if depth >= limit {
                    self.shared
                        .counters
                        .warnings
                        .fetch_add(1, Ordering::Relaxed);
                }
            }

            match handle.tx.send(item) {
                Ok(()) => {
                    drop(guard);
                    if let Some(lane) = new_lane {
                        drop(self.shared.runtime.spawn(lane.run()));
                    }
                    return Ok(depth);
                }
                Err(mpsc::error::SendError(back)) => {
                    // The receiver is gone but the entry is still here.
                    // A lane removes its entry before its receiver drops
                    // (invariant 2), so this is not expected; if it ever
                    // happens, drop the stale entry and route again to a
                    // fresh lane rather than lose the item.
                    handle.pending.fetch_sub(1, Ordering::AcqRel);
                    table.lanes.remove(&back.key);
                    item = back;
                    // A lane opened in this turn can't have lost its
                    // receiver: it was never spawned.
                    debug_assert!(new_lane.is_none());
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

impl Drop for SelectRouter {
    /// Empties the map: every lane loses its sender, handles what it was
    /// given and ends with [`LaneExit::Closed`].
    fn drop(&mut self) {
        let handles: Vec<LaneHandle> = {
            let mut table = self.shared.table();
            table.lanes.drain().map(|(_, handle)| handle).collect()
        };
        // Outside the lock: dropping a sender wakes its lane.
        drop(handles);
    }
}

/// What a lane's idle wait ended with.
enum Next {
    Item(Item),
    /// The router was dropped and the channel is drained.
    Closed,
    /// Idle for the TTL with nothing pending: the entry is removed and the
    /// exit reported.
    Reaped,
}

/// A lane: the task side. Owns the receiver; dropping it unfinished
/// retires it as cancelled.
struct Lane {
    shared: Arc<Shared>,
    key: u64,
    id: LaneId,
    rx: mpsc::UnboundedReceiver<Item>,
    pending: Arc<AtomicUsize>,
    /// Its exit was reported (and its entry, if still its own, removed).
    retired: bool,
}

impl Lane {
    async fn run(mut self) {
        loop {
            match self.next().await {
                Next::Item(item) => self.handle(item).await,
                Next::Closed => {
                    self.retire(LaneExit::Closed);
                    return;
                }
                Next::Reaped => return,
            }
        }
    }

    /// Waits for the next item, reaping the lane if it stays idle for the
    /// TTL.
    async fn next(&mut self) -> Next {
        let Some(ttl) = self.shared.idle_ttl else {
            return self.rx.recv().await.map_or(Next::Closed, Next::Item);
        };
        loop {
            tokio::select! {
                next = self.rx.recv() => return next.map_or(Next::Closed, Next::Item),
                () = sleep(ttl) => {
                    if self.try_reap() {
                        return Next::Reaped;
                    }
                    // Declined: an item is in the channel, or the router
                    // was dropped and the channel reports it closed. Either
                    // way the next `recv` answers at once.
                }
            }
        }
    }

    /// Removes the lane's entry if nothing is pending (invariant 3).
    fn try_reap(&mut self) -> bool {
        let shared = Arc::clone(&self.shared);
        let mut table = shared.table();
        let ours = table
            .lanes
            .get(&self.key)
            .is_some_and(|handle| handle.id == self.id);
        if !ours {
            // Only the router's drop removes a lane's entry for it; the
            // channel's closure ends the lane.
            return false;
        }
        if self.pending.load(Ordering::Acquire) != 0 {
            return false;
        }
        self.retire_locked(&mut table, LaneExit::Reaped);
        true
    }

    /// Handles one item on this task and counts it finished.
    async fn handle(&mut self, item: Item) {
        let handler = &self.shared.handler;
        let id = self.id;
        let outcome = match panic::catch_unwind(AssertUnwindSafe(|| handler.call_on(id, item))) {
            Ok(work) => CatchUnwind(work).await,
            Err(payload) => Err(payload),
        };
        self.pending.fetch_sub(1, Ordering::AcqRel);

        let Err(payload) = outcome else { return };
        match self.shared.on_panic {
            OnPanic::Survive => {
                self.shared
                    .counters
                    .handler_panics
                    .fetch_add(1, Ordering::Relaxed);
            }
            OnPanic::Die => {
                // Leave the map first, so the key's next route opens a new
                // lane, then let the panic take the task down.
                self.retire(LaneExit::Panicked);
                panic::resume_unwind(payload);
            }
        }
    }

    fn retire(&mut self, exit: LaneExit) {
        let shared = Arc::clone(&self.shared);
        let mut table = shared.table();
        self.retire_locked(&mut table, exit);
    }

    /// Removes the lane's entry if it is still its own, and reports the
    /// exit, in one critical section (invariant 2). Idempotent.
    fn retire_locked(&mut self, table: &mut Table, exit: LaneExit) {
        if self.retired {
            return;
        }
        self.retired = true;
        if table
            .lanes
            .get(&self.key)
            .is_some_and(|handle| handle.id == self.id)
        {
            table.lanes.remove(&self.key);
        }
        self.shared
            .counters
            .lanes_live
            .fetch_sub(1, Ordering::Relaxed);
        self.shared.reports.closed(self.key, self.id, exit);
    }
}

impl Drop for Lane {
    /// A lane dropped before it retired: its task was cancelled (runtime
    /// shutdown), or a panic escaped somewhere other than the handler. The
    /// entry is removed here, before the receiver (a field) is dropped, so
    /// `route` never finds an entry whose receiver is gone.
    fn drop(&mut self) {
        if !self.retired {
            let exit = if std::thread::panicking() {
                LaneExit::Panicked
            } else {
                LaneExit::Cancelled
            };
            self.retire(exit);
        }
    }
}

/// Polls a handler's future, catching a panic from any poll.
struct CatchUnwind(BoxFuture);

impl Future for CatchUnwind {
    type Output = Result<(), Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Unwind safe: after a panic the future is never polled again (it
        // is dropped with `self`), and the lane's own state is not touched
        // inside the poll.
        match panic::catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(())) => Poll::Ready(Ok(())),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use lanesim_target::lanes::{LaneEvents, LaneReports};

    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Event {
        Created(u64, LaneId),
        Closed(u64, LaneId, LaneExit),
    }

    #[derive(Default)]
    struct Events(Mutex<Vec<Event>>);

    impl LaneEvents for Events {
        fn created(&self, key: u64, lane: LaneId) {
            self.0.lock().unwrap().push(Event::Created(key, lane));
        }
        fn closed(&self, key: u64, lane: LaneId, exit: LaneExit) {
            self.0.lock().unwrap().push(Event::Closed(key, lane, exit));
        }
    }

    impl Events {
        fn all(&self) -> Vec<Event> {
            self.0.lock().unwrap().clone()
        }
        fn closed(&self) -> Vec<(u64, LaneId, LaneExit)> {
            self.all()
                .into_iter()
                .filter_map(|e| match e {
                    Event::Closed(k, l, x) => Some((k, l, x)),
                    Event::Created(..) => None,
                })
                .collect()
        }
    }

    type Log = Arc<Mutex<Vec<(Option<LaneId>, Item)>>>;

    /// Records every item as it finishes, after `delay` (a zero delay only
    /// yields: a zero `sleep` still waits for the timer's next 1 ms tick);
    /// panics on the sequence numbers in `panic_on`.
    fn handler(log: Log, delay: Duration, panic_on: &'static [u64]) -> Handler {
        Handler::new(move |lane, item| {
            assert!(!panic_on.contains(&item.seq), "injected panic");
            let log = Arc::clone(&log);
            Box::pin(async move {
                if delay.is_zero() {
                    tokio::task::yield_now().await;
                } else {
                    tokio::time::sleep(delay).await;
                }
                log.lock().unwrap().push((lane, item));
            })
        })
    }

    fn build(mode: Mode, ttl: Option<Duration>, handler: Handler) -> (SelectRouter, Arc<Events>) {
        let events = Arc::new(Events::default());
        let router = SelectRouter::new(LanesSetup {
            runtime: Handle::current(),
            idle_ttl: ttl,
            mode,
            handler,
            reports: LaneReports::new(Arc::clone(&events) as Arc<dyn LaneEvents>),
        });
        (router, events)
    }

    async fn wait_until(mut done: impl FnMut() -> bool) {
        tokio::time::timeout(Duration::from_secs(5), async {
            while !done() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .expect("condition within 5s");
    }

    fn item(key: u64, seq: u64) -> Item {
        Item { key, seq }
    }

    #[tokio::test]
    async fn items_of_a_key_run_in_route_order_on_one_lane() {
        let log = Log::default();
        let (router, events) = build(
            Mode::Router,
            None,
            handler(Arc::clone(&log), Duration::from_millis(1), &[]),
        );
        for seq in 0..60 {
            router.route(item(seq % 3, seq), None).unwrap();
        }
        wait_until(|| log.lock().unwrap().len() == 60).await;

        let log = log.lock().unwrap().clone();
        for key in 0..3 {
            let seqs: Vec<u64> = log
                .iter()
                .filter(|(_, i)| i.key == key)
                .map(|(_, i)| i.seq)
                .collect();
            let expected: Vec<u64> = (0..60).filter(|s| s % 3 == key).collect();
            assert_eq!(seqs, expected, "key {key} in route order");
            let lanes: Vec<_> = log
                .iter()
                .filter(|(_, i)| i.key == key)
                .map(|(l, _)| *l)
                .collect();
            assert!(lanes.windows(2).all(|w| w[0] == w[1]), "one lane per key");
        }
        assert_eq!(events.all().len(), 3, "three lanes created, none closed");
    }

    #[tokio::test]
    async fn depth_counts_the_running_item_and_capacity_refuses() {
        let log = Log::default();
        let (router, _events) = build(
            Mode::Router,
            None,
            handler(Arc::clone(&log), Duration::from_millis(50), &[]),
        );
        assert_eq!(router.route(item(1, 0), Some(2)), Ok(0));
        tokio::task::yield_now().await; // item 0 starts running
        assert_eq!(router.route(item(1, 1), Some(2)), Ok(1));
        assert_eq!(router.route(item(1, 2), Some(2)), Err(item(1, 2)));
        assert_eq!(router.route(item(2, 3), Some(0)), Err(item(2, 3)));
        wait_until(|| log.lock().unwrap().len() == 2).await;
        tokio::time::sleep(Duration::from_millis(5)).await;
        assert_eq!(router.route(item(1, 4), Some(2)), Ok(0));
        let stats = router.stats().unwrap();
        assert_eq!(stats.items_shed, 2);
        assert_eq!(stats.lanes_created, 1, "a refused item opens no lane");
    }

    #[tokio::test]
    async fn an_idle_lane_reaps_itself_and_the_key_gets_a_new_one() {
        let log = Log::default();
        let (router, events) = build(
            Mode::Router,
            Some(Duration::from_millis(20)),
            handler(Arc::clone(&log), Duration::ZERO, &[]),
        );
        router.route(item(7, 0), None).unwrap();
        wait_until(|| events.closed().len() == 1).await;
        let [(7, first, LaneExit::Reaped)] = events.closed()[..] else {
            panic!("reaped: {:?}", events.all());
        };
        assert_eq!(router.stats().unwrap().lanes_live, 0);

        assert_eq!(router.route(item(7, 1), None), Ok(0));
        wait_until(|| events.closed().len() == 2).await;
        let (_, second, exit) = events.closed()[1];
        assert!(second > first);
        assert_eq!(exit, LaneExit::Reaped);
        let lanes: Vec<_> = log.lock().unwrap().iter().map(|(l, _)| *l).collect();
        assert_eq!(lanes, [Some(first), Some(second)]);
    }

    #[tokio::test]
    async fn a_busy_lane_is_not_reaped() {
        let log = Log::default();
        let (router, events) = build(
            Mode::Router,
            Some(Duration::from_millis(10)),
            handler(Arc::clone(&log), Duration::from_millis(30), &[]),
        );
        for seq in 0..3 {
            router.route(item(1, seq), None).unwrap();
        }
        wait_until(|| log.lock().unwrap().len() == 3).await;
        assert!(
            events.closed().is_empty(),
            "no reap while items are pending"
        );
        wait_until(|| events.closed().len() == 1).await;
    }

    #[tokio::test]
    async fn dropping_the_router_finishes_queued_work_then_closes_lanes() {
        let log = Log::default();
        let (router, events) = build(
            Mode::Router,
            Some(Duration::from_secs(60)),
            handler(Arc::clone(&log), Duration::from_millis(2), &[]),
        );
        for seq in 0..20 {
            router.route(item(seq % 4, seq), None).unwrap();
        }
        drop(router);
        wait_until(|| events.closed().len() == 4).await;
        assert_eq!(log.lock().unwrap().len(), 20);
        assert!(events
            .closed()
            .iter()
            .all(|(_, _, exit)| *exit == LaneExit::Closed));
    }

    #[tokio::test]
    async fn router_mode_panic_kills_the_lane_and_the_key_gets_a_new_one() {
        let log = Log::default();
        let (router, events) = build(
            Mode::Router,
            None,
            handler(Arc::clone(&log), Duration::ZERO, &[0]),
        );
        router.route(item(1, 0), None).unwrap();
        wait_until(|| events.closed().len() == 1).await;
        let [(1, dead, LaneExit::Panicked)] = events.closed()[..] else {
            panic!("panicked: {:?}", events.all());
        };

        router.route(item(1, 1), None).unwrap();
        wait_until(|| log.lock().unwrap().len() == 1).await;
        let (lane, _) = log.lock().unwrap()[0];
        assert!(lane.unwrap() > dead);
        assert_eq!(router.stats().unwrap().handler_panics, 0);
    }

    #[tokio::test]
    async fn dispatcher_catches_panics_and_the_lane_lives_on() {
        let log = Log::default();
        let (router, events) = build(
            Mode::Reject { limit: 8 },
            None,
            handler(Arc::clone(&log), Duration::ZERO, &[1]),
        );
        for seq in 0..4 {
            router.route(item(1, seq), Some(8)).unwrap();
        }
        wait_until(|| log.lock().unwrap().len() == 3).await;
        let seqs: Vec<u64> = log.lock().unwrap().iter().map(|(_, i)| i.seq).collect();
        assert_eq!(seqs, [0, 2, 3]);
        assert!(events.closed().is_empty());
        assert_eq!(router.stats().unwrap().handler_panics, 1);
    }

    #[tokio::test]
    async fn warn_mode_admits_past_its_limit() {
        let log = Log::default();
        let (router, _events) = build(
            Mode::Warn { limit: 1 },
            None,
            handler(Arc::clone(&log), Duration::from_millis(5), &[]),
        );
        for seq in 0..3 {
            assert_eq!(router.route(item(1, seq), None), Ok(seq as usize));
        }
        assert_eq!(router.warnings(), 2);
        assert_eq!(router.stats().unwrap().items_shed, 0);
        wait_until(|| log.lock().unwrap().len() == 3).await;
    }

    #[test]
    fn a_lane_dropped_by_runtime_shutdown_reports_cancelled() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let log = Log::default();
        let (router, events) = runtime.block_on(async {
            let built = build(
                Mode::Router,
                None,
                handler(Arc::clone(&log), Duration::from_secs(3600), &[]),
            );
            built.0.route(item(3, 0), None).unwrap();
            tokio::task::yield_now().await; // the lane starts its long item
            built
        });
        drop(runtime);
        let [(3, _, LaneExit::Cancelled)] = events.closed()[..] else {
            panic!("cancelled: {:?}", events.all());
        };
        assert_eq!(router.stats().unwrap().lanes_live, 0);
        drop(router);
        assert_eq!(events.closed().len(), 1, "no second report on drop");
    }

    /// Producers on several threads route while lanes reap themselves every
    /// millisecond: every item is handled once, in order, on a lane that
    /// was live for its key, and a key never has two lanes live at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn routes_racing_reaps_keep_order_and_one_lane_per_key() {
        const KEYS: u64 = 8;
        const PER_KEY: u64 = 200;
        let log = Log::default();
        let (router, events) = build(
            Mode::Router,
            Some(Duration::from_millis(1)),
            handler(Arc::clone(&log), Duration::ZERO, &[]),
        );
        let router = Arc::new(router);
        let producers: Vec<_> = (0..KEYS)
            .map(|key| {
                let router = Arc::clone(&router);
                tokio::spawn(async move {
                    for n in 0..PER_KEY {
                        router.route(item(key, key * PER_KEY + n), None).unwrap();
                        // Pauses of 0, 2 and 4 ms: around the 1 ms TTL, so
                        // some routes find a live lane, some a lane deciding
                        // its reap, some none.
                        if n % (key + 3) == 0 {
                            let pause = 2 * ((n / (key + 3)) % 3);
                            tokio::time::sleep(Duration::from_millis(pause)).await;
                        }
                    }
                })
            })
            .collect();
        for producer in producers {
            producer.await.unwrap();
        }
        wait_until(|| log.lock().unwrap().len() == (KEYS * PER_KEY) as usize).await;
        drop(Arc::into_inner(router).expect("producers are done"));
        wait_until(|| {
            let all = events.all();
            let created = all
                .iter()
                .filter(|e| matches!(e, Event::Created(..)))
                .count();
            created == events.closed().len()
        })
        .await;

        let log = log.lock().unwrap().clone();
        let all = events.all();
        for key in 0..KEYS {
            let seqs: Vec<u64> = log
                .iter()
                .filter(|(_, i)| i.key == key)
                .map(|(_, i)| i.seq)
                .collect();
            let expected: Vec<u64> = (key * PER_KEY..(key + 1) * PER_KEY).collect();
            assert_eq!(seqs, expected, "key {key}: each item once, in route order");

            // Reports alternate created/closed per key, ids growing.
            let mut live = None;
            let mut last = LaneId(0);
            for event in &all {
                match *event {
                    Event::Created(k, lane) if k == key => {
                        assert!(live.is_none(), "key {key}: two live lanes");
                        assert!(lane > last);
                        live = Some(lane);
                        last = lane;
                    }
                    Event::Closed(k, lane, exit) if k == key => {
                        assert_eq!(live, Some(lane), "key {key}: closed a lane not live");
                        assert!(matches!(exit, LaneExit::Reaped | LaneExit::Closed));
                        live = None;
                    }
                    _ => {}
                }
            }
            // Handled on non-decreasing lanes (an older lane never runs
            // after a newer one).
            let lanes: Vec<LaneId> = log
                .iter()
                .filter(|(_, i)| i.key == key)
                .map(|(l, _)| l.unwrap())
                .collect();
            assert!(
                lanes.windows(2).all(|w| w[0] <= w[1]),
                "key {key}: lanes in order"
            );
        }
        let reaped = events
            .closed()
            .iter()
            .filter(|c| c.2 == LaneExit::Reaped)
            .count();
        assert!(
            reaped > KEYS as usize,
            "the race was exercised: {reaped} reaps"
        );
    }
}
