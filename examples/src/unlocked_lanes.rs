//! A per-key ordering router ("lanes") whose table lock is never held
//! while an item is handed to a lane.
//!
//! # Shape
//!
//! - The router's table is a `Mutex<HashMap<K, LaneHandle>>`. A
//!   [`LaneHandle`] is an `Arc` of the lane's shared state ([`LaneState`]:
//!   its id and its `pending` count) and the sending side of its queue.
//! - Every lane is one task: it takes the next item from its queue, runs
//!   the handler on it to the end, decrements `pending`, and waits again,
//!   for at most the idle TTL.
//! - [`Router::route`] holds the table lock only to find (or install) the
//!   key's lane and clone its handle out; it then *admits* the item on the
//!   lane's `pending` count (lock-free) and sends it (no lock held).
//!
//! # Admission and the reap race
//!
//! Releasing the lock before admitting opens the classic window: a route
//! clones the handle of a lane, and before it admits, that lane times out,
//! sees nothing pending, removes itself and ends; the item would then be
//! sent to a queue nobody reads (or to a closed one). The fix is to make
//! `pending` the one place where "admit" and "retire" are decided, so they
//! cannot both win:
//!
//! - the top bit of `pending` is [`RETIRED`]. A lane retires only by a
//!   compare-and-swap of `pending` from exactly `0` to `RETIRED`; a route
//!   admits only by a compare-and-swap from `d` to `d + 1` where `d` has
//!   no `RETIRED` bit (and `d < capacity`; `d` is the depth it returns).
//! - so either the route admitted first (`pending > 0`, the lane's retire
//!   fails and it goes back to waiting: the item is on its way), or the
//!   lane retired first (the route sees `RETIRED`, goes back to the table,
//!   and installs a fresh lane in place of the retiring one).
//! - a retired lane has `pending == 0`: every item ever admitted to it has
//!   been handled, so its queue is empty and nothing is lost when it ends.
//! - a fresh lane is created with its first item already admitted
//!   (`pending == 1`), so a lane can never retire before its creator's
//!   item reaches it (an eager timer cannot starve a key).
//!
//! The `pending` decrement happens only after the handler finished, so the
//! depth `route` returns counts the running item too.
//!
//! # Who reports a lane's end
//!
//! Exactly one party removes a lane's entry and reports it closed: the lane
//! itself (from a drop guard, under the table lock, only if the entry is
//! still its own) or a route that found it retiring and replaced it (also
//! under the table lock). A `reported` flag makes the report exactly-once
//! even when the router is already gone. Because both happen under the
//! table lock, a key's `closed` always precedes the `created` of the lane
//! that replaces it, and `created` is reported before the new lane exists
//! for anyone else.
//!
//! # Drop
//!
//! Lanes hold only a `Weak` to the table (which holds their senders), so
//! dropping the router drops the table and every sender: each lane then
//! drains what is already queued (a channel gives queued items before it
//! reports the disconnect), and ends. Nothing admitted is dropped.
//!
//! # Panics
//!
//! A panicking handler unwinds through its lane. The lane's drop guard
//! marks it retired (and panicked), removes its entry, reports it; its
//! queued items die with it. A route that had already admitted to it sees
//! the send fail and retries on a fresh lane.
//!
//! # Queues
//!
//! A lane's queue is a `chan::unbounded()`: `pending` already bounds it by
//! the `capacity` routes pass, so a send never waits. Were it bounded, a
//! send could wait for room, which is why no lock is ever held across it
//! (lifecycle reports do run under the table lock: they are calls, not
//! sends).
//!
//! # Limits
//!
//! The order among *concurrent* routes of one key is the order in which
//! their sends reach the queue; routes of a key that do not overlap are
//! handled in call order.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hash};
use std::pin::Pin;

use lanesim_target::lanes::{
    Handler, Item, LaneExit, LaneId, LaneReports, Lanes, LanesCapabilities, LanesFixed, LanesSetup,
    LanesTarget, Mode, ModeKind,
};
use lanesim_target::probe::Sites;
use lanesim_target::shim::chan::{self, Receiver, Sender};
use lanesim_target::shim::std_sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use lanesim_target::shim::std_sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use lanesim_target::shim::task::Handle;
use lanesim_target::shim::time::{timeout, Duration};

/// What a handler returns.
pub type BoxFut = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// The handler: called on the lane's own task with the lane's id.
pub type LaneFn<T> = Arc<dyn Fn(u64, T) -> BoxFut + Send + Sync>;

/// Why a lane ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneEnd {
    /// Idle for the TTL with nothing pending.
    Reaped,
    /// The router was dropped and the lane drained its queue.
    Closed,
    /// The handler panicked.
    Panicked,
    /// The lane's task was dropped unfinished (runtime shutdown).
    Cancelled,
}

/// Hears about lanes coming and going.
pub trait LaneObserver<K>: Send + Sync {
    /// A lane `lane` was installed for `key`, before any of its items ran.
    fn created(&self, key: &K, lane: u64);
    /// The lane `lane` of `key` ended; no route reaches it any more.
    fn closed(&self, key: &K, lane: u64, end: LaneEnd);
}

/// The router's settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct Config {
    /// Reap a lane idle this long (`None`: never).
    pub idle_ttl: Option<Duration>,
}

/// The top bit of `pending`: the lane retired, nothing may be admitted.
const RETIRED: usize = 1 << (usize::BITS - 1);

/// What a lane shares with the routes that reach it.
#[derive(Debug)]
struct LaneState {
    id: u64,
    /// Items admitted and not yet handled (the running one included), with
    /// the [`RETIRED`] bit once the lane can take no more.
    pending: AtomicUsize,
    /// The lane died of a handler panic (set before `RETIRED`).
    panicked: AtomicBool,
    /// Its end has been reported (exactly once).
    reported: AtomicBool,
}

/// The outcome of [`LaneState::admit`].
enum Admit {
    Admitted(usize),
    Full,
    Retired,
}

impl LaneState {
    fn new(id: u64, pending: usize) -> Self {
        Self {
            id,
            pending: AtomicUsize::new(pending),
            panicked: AtomicBool::new(false),
            reported: AtomicBool::new(false),
        }
    }

    /// Takes a place in the lane, unless it is full or retired.
    fn admit(&self, capacity: Option<usize>) -> Admit {
        let mut depth = self.pending.load(Ordering::Acquire);
        loop {
            if depth & RETIRED != 0 {
                return Admit::Retired;
            }
            if capacity.is_some_and(|capacity| depth >= capacity) {
                return Admit::Full;
            }
            match self.pending.compare_exchange(
                depth,
                depth + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Admit::Admitted(depth),
                Err(seen) => depth = seen,
            }
        }
    }

    /// Retires the lane if nothing is pending: from here on no route can
    /// admit to it.
    fn try_retire(&self) -> bool {
        self.pending
            .compare_exchange(0, RETIRED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    fn retire(&self) {
        self.pending.fetch_or(RETIRED, Ordering::AcqRel);
    }

    fn is_retired(&self) -> bool {
        self.pending.load(Ordering::Acquire) & RETIRED != 0
    }

    /// Why a retired lane ended, as seen by a route that replaces it.
    fn end(&self) -> LaneEnd {
        if self.panicked.load(Ordering::Acquire) {
            LaneEnd::Panicked
        } else {
            LaneEnd::Reaped
        }
    }

    /// Whether the caller is the one to report the lane's end.
    fn claim_report(&self) -> bool {
        !self.reported.swap(true, Ordering::AcqRel)
    }
}

/// A lane as the table holds it: cloned out by `route`.
struct LaneHandle<T> {
    state: Arc<LaneState>,
    tx: Sender<T>,
}

impl<T> Clone for LaneHandle<T> {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
            tx: self.tx.clone(),
        }
    }
}

/// Fixed-key hashing: the table's drop order (which lane hears of the
/// router's drop first) replays.
type Table<K, T> = HashMap<K, LaneHandle<T>, BuildHasherDefault<DefaultHasher>>;

/// What lanes keep strongly: it holds no sender, so no cycle.
struct Common<K, T> {
    idle_ttl: Option<Duration>,
    handler: LaneFn<T>,
    observer: Arc<dyn LaneObserver<K>>,
}

struct Shared<K, T> {
    table: Mutex<Table<K, T>>,
    next_id: AtomicU64,
    runtime: Handle,
    common: Arc<Common<K, T>>,
}

/// The router: per-key FIFO lanes, each a task of its own.
pub struct Router<K, T> {
    shared: Arc<Shared<K, T>>,
}

impl<K, T> Router<K, T>
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
    T: Send + 'static,
{
    /// A router spawning its lanes on `runtime`.
    pub fn new(
        runtime: Handle,
        config: Config,
        handler: LaneFn<T>,
        observer: Arc<dyn LaneObserver<K>>,
    ) -> Self {
        let common = Arc::new(Common {
            idle_ttl: config.idle_ttl,
            handler,
            observer,
        });
        Self {
            shared: Arc::new(Shared {
                table: Mutex::new(Table::default()),
                next_id: AtomicU64::new(1),
                runtime,
                common,
            }),
        }
    }

    /// Queues `item` behind the earlier items of `key`. `Ok(depth)`: the
    /// lane's unhandled items before this one. `Err(item)`: refused, the
    /// lane already holds `capacity` items.
    ///
    /// # Errors
    /// The item back when the key's lane is full.
    pub fn route(&self, key: K, mut item: T, capacity: Option<usize>) -> Result<usize, T> {
        if capacity == Some(0) {
            return Err(item);
        }
        loop {
            // The table lock is taken and released in here.
            let (lane, fresh) = self.shared.lane_for(&key);
            let depth = if fresh {
                0 // created with this item already admitted
            } else {
                match lane.state.admit(capacity) {
                    Admit::Admitted(depth) => depth,
                    Admit::Full => return Err(item),
                    Admit::Retired => continue, // `lane_for` replaces it
                }
            };
            match lane.tx.send(item) {
                Ok(()) => return Ok(depth),
                // Only a lane whose handler panicked drops its queue.
                Err(chan::SendError(back)) => {
                    lane.state.retire();
                    item = back;
                }
            }
        }
    }

    /// Lanes in the table now.
    pub fn lanes(&self) -> usize {
        self.shared.lock().len()
    }
}

impl<K, T> Shared<K, T>
where
    K: Clone + Eq + Hash + Send + Sync + 'static,
    T: Send + 'static,
{
    fn lock(&self) -> MutexGuard<'_, Table<K, T>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key's live lane, or a fresh one (`true`) with one item already
    /// admitted. Holds the table lock only for the lookup/insert.
    fn lane_for(self: &Arc<Self>, key: &K) -> (LaneHandle<T>, bool) {
        let observer = &self.common.observer;
        let mut table = self.lock();
        if let Some(lane) = table.get(key) {
            if !lane.state.is_retired() {
                return (lane.clone(), false);
            }
            // Retiring but not yet gone: replace it, reporting its end
            // unless its own task already did.
            if let Some(old) = table.remove(key) {
                if old.state.claim_report() {
                    observer.closed(key, old.state.id, old.state.end());
                }
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = chan::unbounded();
        let state = Arc::new(LaneState::new(id, 1));
        observer.created(key, id);
        let lane = LaneHandle { state, tx };
        table.insert(key.clone(), lane.clone());
        drop(table);
        let task = Lane {
            key: key.clone(),
            state: Arc::clone(&lane.state),
            shared: Arc::downgrade(self),
            common: Arc::clone(&self.common),
            end: None,
            rx,
        };
        drop(self.runtime.spawn(run(task)));
        (lane, true)
    }
}

/// A lane's task state. Its `Drop` retires the lane, removes its entry if
/// it is still its own, and reports its end, whichever way the task ends
/// (returned, unwound by a handler panic, or cancelled).
struct Lane<K: Clone + Eq + Hash, T> {
    key: K,
    state: Arc<LaneState>,
    shared: Weak<Shared<K, T>>,
    common: Arc<Common<K, T>>,
    /// Set when the loop returns; `None` in `drop`: a panic or a cancel.
    end: Option<LaneEnd>,
    rx: Receiver<T>,
}

/// The lane loop: next item (for at most the TTL), handle it, repeat.
async fn run<K: Clone + Eq + Hash, T>(mut lane: Lane<K, T>) {
    loop {
        let next = match lane.common.idle_ttl {
            None => lane.rx.recv_async().await,
            Some(ttl) => match timeout(ttl, lane.rx.recv_async()).await {
                Ok(next) => next,
                // Idle: retire only if nothing is pending. A route that
                // admitted meanwhile wins, and its item is on its way.
                Err(_) if lane.state.try_retire() => {
                    lane.end = Some(LaneEnd::Reaped);
                    return;
                }
                Err(_) => continue,
            },
        };
        let Ok(item) = next else {
            // Every sender gone: the router was dropped, the queue drained.
            lane.end = Some(LaneEnd::Closed);
            return;
        };
        (lane.common.handler)(lane.state.id, item).await;
        lane.state.pending.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<K: Clone + Eq + Hash, T> Drop for Lane<K, T> {
    fn drop(&mut self) {
        // A query, not a thread: were we unwound by the handler's panic?
        let end = self.end.unwrap_or(if std::thread::panicking() {
            LaneEnd::Panicked
        } else {
            LaneEnd::Cancelled
        });
        if end == LaneEnd::Panicked {
            self.state.panicked.store(true, Ordering::Release);
        }
        self.state.retire();
        let shared = self.shared.upgrade();
        let mut table = shared
            .as_ref()
            .map(|shared| shared.table.lock().unwrap_or_else(PoisonError::into_inner));
        let removed = table.as_mut().and_then(|table| {
            let ours = table
                .get(&self.key)
                .is_some_and(|lane| Arc::ptr_eq(&lane.state, &self.state));
            ours.then(|| table.remove(&self.key)).flatten()
        });
        if self.state.claim_report() {
            self.common.observer.closed(&self.key, self.state.id, end);
        }
        drop(removed);
        drop(table);
    }
}

// ---------------------------------------------------------------------------
// The lanesim adapter.

/// The router above as a lanesim lanes target (`Mode::Router` only).
#[derive(Clone, Copy, Debug, Default)]
pub struct UnlockedLanes;

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

struct Built(Router<u64, Item>);

impl Lanes for Built {
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        self.0.route(item.key, item, capacity)
    }
}

impl LanesTarget for UnlockedLanes {
    fn capabilities(&self) -> LanesCapabilities {
        LanesCapabilities {
            modes: &[ModeKind::Router],
            lifecycle: true,
            stats: false,
            fixed: LanesFixed::default(),
            hazards: &[],
            sites: Sites::default(),
        }
    }

    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        if setup.mode != Mode::Router {
            return Err(format!(
                "unlocked-lanes supports Mode::Router only, not {:?}",
                setup.mode
            ));
        }
        let handler: Handler = setup.handler;
        let call: LaneFn<Item> = Arc::new(move |lane, item| handler.call_on(LaneId(lane), item));
        let config = Config {
            idle_ttl: setup.idle_ttl,
        };
        let router = Router::new(
            setup.runtime,
            config,
            call,
            Arc::new(Reports(setup.reports)),
        );
        Ok(Box::new(Built(router)))
    }
}

/// The unlocked lanes router alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct UnlockedTargets;

impl lanesim_target::Targets for UnlockedTargets {
    fn name(&self) -> &str {
        "unlocked-lanes"
    }

    fn lanes(&self) -> Option<&dyn LanesTarget> {
        Some(&UnlockedLanes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanesim_target::shim::time::sleep;

    type Events = Mutex<Vec<(u64, u64, Option<LaneEnd>)>>;
    type Log = Arc<Mutex<Vec<(u64, Item)>>>;

    /// Records lifecycle events as `(key, lane, None)` for created and
    /// `(key, lane, Some(end))` for closed.
    #[derive(Default)]
    struct Recorder(Events);

    impl LaneObserver<u64> for Recorder {
        fn created(&self, key: &u64, lane: u64) {
            self.0.lock().unwrap().push((*key, lane, None));
        }

        fn closed(&self, key: &u64, lane: u64, end: LaneEnd) {
            self.0.lock().unwrap().push((*key, lane, Some(end)));
        }
    }

    /// A router whose handler sleeps `work` and logs `(lane, key, seq)`.
    fn router(ttl: Option<Duration>, work: Duration) -> (Router<u64, Item>, Log, Arc<Recorder>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let recorder = Arc::new(Recorder::default());
        let sink = Arc::clone(&log);
        let handler: LaneFn<Item> = Arc::new(move |lane, item| {
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                sleep(work).await;
                sink.lock().unwrap().push((lane, item));
            })
        });
        let config = Config { idle_ttl: ttl };
        let router = Router::new(Handle::current(), config, handler, recorder.clone());
        (router, log, recorder)
    }

    fn item(key: u64, seq: u64) -> Item {
        Item { key, seq }
    }

    #[tokio::test(start_paused = true)]
    async fn items_of_a_key_run_in_route_order_and_keys_do_not_wait() {
        let (router, log, _) = router(None, Duration::from_millis(10));
        for seq in 0..30 {
            router.route(seq % 3, item(seq % 3, seq), None).unwrap();
        }
        // 10 items a key, 10ms each, keys in parallel: 100ms, not 300ms.
        sleep(Duration::from_millis(105)).await;
        let log = log.lock().unwrap().clone();
        assert_eq!(log.len(), 30);
        for key in 0..3 {
            let seqs: Vec<u64> = log
                .iter()
                .filter(|(_, it)| it.key == key)
                .map(|(_, it)| it.seq)
                .collect();
            assert_eq!(seqs, (0..10).map(|n| n * 3 + key).collect::<Vec<_>>());
        }
        assert_eq!(router.lanes(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn depth_counts_the_running_item_and_capacity_refuses() {
        let (router, log, _) = router(None, Duration::from_millis(100));
        assert_eq!(router.route(1, item(1, 0), Some(2)), Ok(0));
        sleep(Duration::from_millis(1)).await; // the first one is running
        assert_eq!(router.route(1, item(1, 1), Some(2)), Ok(1));
        assert_eq!(router.route(1, item(1, 2), Some(2)), Err(item(1, 2)));
        assert_eq!(router.route(2, item(2, 3), Some(2)), Ok(0));
        assert_eq!(router.route(2, item(2, 4), Some(0)), Err(item(2, 4)));
        sleep(Duration::from_millis(150)).await; // item 0 done
        assert_eq!(router.route(1, item(1, 5), Some(2)), Ok(1));
        sleep(Duration::from_millis(500)).await;
        assert_eq!(log.lock().unwrap().len(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_lane_reaps_itself_and_a_later_route_gets_a_new_one() {
        let ttl = Duration::from_millis(100);
        let (router, log, recorder) = router(Some(ttl), Duration::from_millis(10));
        router.route(7, item(7, 0), None).unwrap();
        sleep(Duration::from_millis(60)).await;
        assert_eq!(router.lanes(), 1, "busy then idle for less than the TTL");
        sleep(Duration::from_millis(60)).await;
        assert_eq!(router.lanes(), 0, "idle past the TTL");
        router.route(7, item(7, 1), None).unwrap();
        sleep(Duration::from_millis(20)).await;
        let log = log.lock().unwrap().clone();
        assert_eq!(log.len(), 2);
        assert!(log[1].0 > log[0].0, "a fresh lane, with a larger id");
        let events = recorder.0.lock().unwrap().clone();
        assert_eq!(
            events,
            vec![
                (7, log[0].0, None),
                (7, log[0].0, Some(LaneEnd::Reaped)),
                (7, log[1].0, None),
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_router_drains_every_lane_then_ends_it() {
        let (router, log, recorder) =
            router(Some(Duration::from_millis(50)), Duration::from_millis(30));
        for seq in 0..20 {
            router.route(seq % 4, item(seq % 4, seq), None).unwrap();
        }
        drop(router);
        sleep(Duration::from_secs(1)).await;
        assert_eq!(log.lock().unwrap().len(), 20, "nothing lost on drop");
        let events = recorder.0.lock().unwrap().clone();
        let closed: Vec<_> = events.iter().filter(|e| e.2.is_some()).collect();
        assert_eq!(closed.len(), 4);
        assert!(closed.iter().all(|e| e.2 == Some(LaneEnd::Closed)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_handler_kills_only_its_lane() {
        let recorder = Arc::new(Recorder::default());
        let handled = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&handled);
        let handler: LaneFn<Item> = Arc::new(move |_, it: Item| {
            assert!(it.seq != 1, "planted panic");
            count.fetch_add(1, Ordering::SeqCst);
            Box::pin(async {})
        });
        let router = Router::new(
            Handle::current(),
            Config::default(),
            handler,
            recorder.clone(),
        );
        router.route(1, item(1, 0), None).unwrap();
        router.route(1, item(1, 1), None).unwrap();
        sleep(Duration::from_millis(1)).await;
        assert_eq!(router.lanes(), 0);
        router.route(1, item(1, 2), None).unwrap();
        sleep(Duration::from_millis(1)).await;
        assert_eq!(handled.load(Ordering::SeqCst), 2);
        let ends: Vec<_> = recorder
            .0
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| e.2)
            .collect();
        assert_eq!(ends, vec![LaneEnd::Panicked]);
    }
}
