//! A per-key ordering router ("lanes"), and its adapter to lanesim's
//! [`LanesTarget`] ([`BlindLanes`], [`BlindTargets`]).
//!
//! # Design
//!
//! - **One map, one lock.** The router owns a `Mutex<Table>`: for every key
//!   with a live lane, the lane's id, the sending half of its unbounded
//!   channel and its `pending` counter (items admitted and not yet
//!   finished, the running one included). Every change to the map happens
//!   under that lock: creating a lane, admitting an item (count and send
//!   together), a lane removing itself, the router's drop.
//! - **One task per lane.** A lane is a task spawned on the router's runtime
//!   handle. It receives its key's items in send order and awaits the
//!   consumer on each before taking the next, so a key's items are handled
//!   one at a time in route order; keys share nothing but the map lock,
//!   which no one holds across an await.
//! - **Depth and capacity.** `route` reads `pending` under the lock: that is
//!   the depth it reports, and the item is refused when it has reached the
//!   capacity given. The lane decrements `pending` after each item.
//! - **Idle reap.** A lane waits for its next item under `timeout(ttl, ..)`.
//!   When the timer fires it takes the map lock and removes its entry only
//!   if the entry is still its own and `pending` is 0. Since `route` counts
//!   and sends under that same lock, `pending == 0` there means nothing is
//!   queued and nothing can be queued until the lock is released, after
//!   which `route` finds no entry and creates a fresh lane. If `pending` is
//!   not 0, an item won the race with the timer: the lane goes back to
//!   receiving it. The decision never depends on timing, only on the
//!   counter read under the lock (the model checker fires timers at will).
//! - **Drop.** Lanes hold only a `Weak` to the map. Dropping the router takes
//!   the whole map out under the lock and drops it, i.e. every lane's
//!   sender. Each lane still receives what is in its channel, handles it,
//!   then sees the channel disconnected and ends (`LaneEnd::Closed`).
//!   Nothing waits for them: they finish on the runtime.
//! - **Every exit is reported once.** The lane's state lives in a [`Lane`]
//!   value that owns its receiver; its `Drop` reports how the lane ended and,
//!   for a panic or a cancelled task, first removes the lane's entry so the
//!   key gets a fresh lane next time. The receiver is a field of that value,
//!   so it outlives the entry: a `send` to a mapped lane cannot fail.
//!   Creation and reaping are reported under the map lock, so the reports
//!   of one key follow the map's order.

use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasherDefault, DefaultHasher, Hash};

use lanesim_target::lanes::{
    BoxFuture, Handler, Item, LaneExit, LaneId, LaneReports, Lanes, LanesCapabilities, LanesFixed,
    LanesSetup, LanesTarget, Mode, ModeKind,
};
use lanesim_target::probe::Sites;
use lanesim_target::shim::chan;
use lanesim_target::shim::std_sync::atomic::{AtomicUsize, Ordering};
use lanesim_target::shim::std_sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use lanesim_target::shim::task::Handle;
use lanesim_target::shim::time::{timeout, Duration};

/// How a lane ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneEnd {
    /// Idle for the TTL with nothing pending: it removed itself.
    Reaped,
    /// The router was dropped and the lane handled everything it was given.
    Closed,
    /// The consumer panicked; the lane's remaining items are dropped.
    Panicked,
    /// The task was dropped unfinished (its runtime shut down).
    Cancelled,
}

/// What the lanes run, and where they report their lifecycle.
pub trait Consumer<K, T>: Send + Sync + 'static {
    /// The future handling one item.
    type Fut: Future<Output = ()> + Send + 'static;
    /// Handles `item` of `key` on lane `lane`; called on the lane's task.
    fn handle(&self, key: &K, lane: u64, item: T) -> Self::Fut;
    /// A lane was installed for `key` (before any of its items runs).
    fn lane_created(&self, _key: &K, _lane: u64) {}
    /// The lane ended and is no longer routed to.
    fn lane_closed(&self, _key: &K, _lane: u64, _end: LaneEnd) {}
}

/// A map whose layout does not depend on a random seed (replayable drops).
type Map<K, V> = HashMap<K, V, BuildHasherDefault<DefaultHasher>>;

/// The router's view of one live lane.
struct Entry<T> {
    id: u64,
    tx: chan::Sender<T>,
    pending: Arc<AtomicUsize>,
}

struct Table<K, T> {
    lanes: Map<K, Entry<T>>,
    next_id: u64,
}

type Shared<K, T> = Mutex<Table<K, T>>;

/// Locks the table; a panic elsewhere never leaves it inconsistent (every
/// critical section is a few map operations), so poisoning is ignored.
fn lock<K, T>(shared: &Shared<K, T>) -> MutexGuard<'_, Table<K, T>> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A per-key ordering router. See the module docs.
pub struct Router<K, T, C> {
    shared: Arc<Shared<K, T>>,
    consumer: Arc<C>,
    runtime: Handle,
    idle_ttl: Option<Duration>,
}

impl<K, T, C> Router<K, T, C>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    T: Send + 'static,
    C: Consumer<K, T>,
{
    /// A router spawning its lanes on `runtime`, reaping lanes idle for
    /// `idle_ttl` (`None`: never).
    pub fn new(runtime: Handle, idle_ttl: Option<Duration>, consumer: C) -> Self {
        let table = Table {
            lanes: Map::default(),
            next_id: 0,
        };
        Self {
            shared: Arc::new(Mutex::new(table)),
            consumer: Arc::new(consumer),
            runtime,
            idle_ttl,
        }
    }

    /// Queues `item` behind the earlier items of `key`, creating the key's
    /// lane if it has none. `Ok(depth)`: admitted behind `depth` unfinished
    /// items. `Err(item)`: refused, the lane already holds `capacity`.
    ///
    /// # Errors
    /// The item back when the lane is full.
    pub fn route(&self, key: K, item: T, capacity: Option<usize>) -> Result<usize, T> {
        let mut table = lock(&self.shared);
        let depth = table
            .lanes
            .get(&key)
            .map_or(0, |entry| entry.pending.load(Ordering::Acquire));
        if capacity.is_some_and(|capacity| depth >= capacity) {
            return Err(item);
        }
        let mut new_lane = None;
        if !table.lanes.contains_key(&key) {
            table.next_id += 1;
            let id = table.next_id;
            let (tx, rx) = chan::unbounded();
            let pending = Arc::new(AtomicUsize::new(0));
            let entry = Entry {
                id,
                tx,
                pending: Arc::clone(&pending),
            };
            table.lanes.insert(key.clone(), entry);
            self.consumer.lane_created(&key, id);
            new_lane = Some(Lane {
                shared: Arc::downgrade(&self.shared),
                consumer: Arc::clone(&self.consumer),
                key: key.clone(),
                id,
                rx,
                pending,
                end: LaneEnd::Cancelled,
            });
        }
        let entry = &table.lanes[&key];
        entry.pending.fetch_add(1, Ordering::AcqRel);
        let sent = entry.tx.send(item).map(|()| depth).map_err(|refused| {
            // Unreachable by construction (see `Lane`); never lose the item.
            entry.pending.fetch_sub(1, Ordering::AcqRel);
            refused.0
        });
        drop(table);
        if let Some(lane) = new_lane {
            // Detached: the lane ends by itself (reap, close, panic).
            drop(self.runtime.spawn(lane.run(self.idle_ttl)));
        }
        sent
    }

    /// The number of live lanes.
    pub fn lane_count(&self) -> usize {
        lock(&self.shared).lanes.len()
    }
}

impl<K, T, C> Drop for Router<K, T, C> {
    /// Drops every lane's sender (outside the lock): each lane handles what
    /// it holds, then sees its channel disconnected and ends.
    fn drop(&mut self) {
        let lanes = std::mem::take(&mut lock(&self.shared).lanes);
        drop(lanes);
    }
}

/// One lane's task state. Its `Drop` is the one place a lane's end is
/// reported (a reap reports under the lock, before it returns).
struct Lane<K: Hash + Eq, T, C: Consumer<K, T>> {
    shared: Weak<Shared<K, T>>,
    consumer: Arc<C>,
    key: K,
    id: u64,
    /// Dropped after `Drop::drop` has removed the entry: a mapped lane
    /// always has its receiver.
    rx: chan::Receiver<T>,
    pending: Arc<AtomicUsize>,
    end: LaneEnd,
}

impl<K, T, C> Lane<K, T, C>
where
    K: Hash + Eq + Send + Sync + 'static,
    T: Send + 'static,
    C: Consumer<K, T>,
{
    async fn run(mut self, idle_ttl: Option<Duration>) {
        loop {
            let received = match idle_ttl {
                None => self.rx.recv_async().await,
                Some(ttl) => match timeout(ttl, self.rx.recv_async()).await {
                    Ok(received) => received,
                    Err(_elapsed) if self.try_reap() => return,
                    Err(_elapsed) => continue,
                },
            };
            let Ok(item) = received else {
                // Every sender is gone (the router was dropped) and the
                // queue is drained.
                self.end = LaneEnd::Closed;
                return;
            };
            self.consumer.handle(&self.key, self.id, item).await;
            self.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Removes this lane from the map if it is still mapped and has nothing
    /// pending (see the module docs). `false`: keep receiving, either an
    /// item raced the timer or the router is going away (its drop closes
    /// the channel).
    fn try_reap(&mut self) -> bool {
        let Some(shared) = self.shared.upgrade() else {
            return false;
        };
        let mut table = lock(&shared);
        let idle = table
            .lanes
            .get(&self.key)
            .is_some_and(|entry| entry.id == self.id && entry.pending.load(Ordering::Acquire) == 0);
        if idle {
            table.lanes.remove(&self.key);
            self.end = LaneEnd::Reaped;
            self.consumer
                .lane_closed(&self.key, self.id, LaneEnd::Reaped);
        }
        idle
    }
}

impl<K: Hash + Eq, T, C: Consumer<K, T>> Drop for Lane<K, T, C> {
    fn drop(&mut self) {
        if self.end == LaneEnd::Reaped {
            return;
        }
        let end = if std::thread::panicking() {
            LaneEnd::Panicked
        } else {
            self.end
        };
        // A panicked or cancelled lane is still mapped: unmap it so the key
        // gets a fresh lane. A closed one is not (the router took the map).
        let shared = self.shared.upgrade();
        let mut table = shared.as_deref().map(lock);
        if let Some(table) = table.as_mut() {
            if table
                .lanes
                .get(&self.key)
                .is_some_and(|entry| entry.id == self.id)
            {
                table.lanes.remove(&self.key);
            }
        }
        self.consumer.lane_closed(&self.key, self.id, end);
    }
}

// ---------------------------------------------------------------------------
// lanesim adapter
// ---------------------------------------------------------------------------

/// The world's handler and lifecycle sink as a [`Consumer`].
struct WorldConsumer {
    handler: Handler,
    reports: LaneReports,
}

impl Consumer<u64, Item> for WorldConsumer {
    type Fut = BoxFuture;

    fn handle(&self, _key: &u64, lane: u64, item: Item) -> BoxFuture {
        self.handler.call_on(LaneId(lane), item)
    }

    fn lane_created(&self, key: &u64, lane: u64) {
        self.reports.created(*key, LaneId(lane));
    }

    fn lane_closed(&self, key: &u64, lane: u64, end: LaneEnd) {
        let exit = match end {
            LaneEnd::Reaped => LaneExit::Reaped,
            LaneEnd::Closed => LaneExit::Closed,
            LaneEnd::Panicked => LaneExit::Panicked,
            LaneEnd::Cancelled => LaneExit::Cancelled,
        };
        self.reports.closed(*key, LaneId(lane), exit);
    }
}

/// The router built for one lanesim run.
struct BlindRouter(Router<u64, Item, WorldConsumer>);

impl Lanes for BlindRouter {
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        self.0.route(item.key, item, capacity)
    }
}

/// This router as a lanesim lanes target ([`Mode::Router`] only; a
/// panicking handler unwinds through its lane).
#[derive(Clone, Copy, Debug, Default)]
pub struct BlindLanes;

impl LanesTarget for BlindLanes {
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
                "blind lanes supports Mode::Router only, not {:?}",
                setup.mode
            ));
        }
        let consumer = WorldConsumer {
            handler: setup.handler,
            reports: setup.reports,
        };
        let router = Router::new(setup.runtime, setup.idle_ttl, consumer);
        Ok(Box::new(BlindRouter(router)))
    }
}

/// The blind lanes router alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlindTargets;

impl lanesim_target::Targets for BlindTargets {
    fn name(&self) -> &str {
        "blind-lanes"
    }

    fn lanes(&self) -> Option<&dyn LanesTarget> {
        Some(&BlindLanes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanesim_target::shim::time::sleep;
    use std::pin::Pin;

    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Event {
        Created(u32, u64),
        Handled(u32, u64, u32),
        Closed(u32, u64, LaneEnd),
    }

    type Log = Arc<Mutex<Vec<Event>>>;

    /// Handles an item in `work` of simulated time; panics on `PANIC`.
    struct Recorder {
        log: Log,
        work: Duration,
    }

    const PANIC: u32 = 666;

    impl Consumer<u32, u32> for Recorder {
        type Fut = Pin<Box<dyn Future<Output = ()> + Send>>;

        fn handle(&self, key: &u32, lane: u64, item: u32) -> Self::Fut {
            assert_ne!(item, PANIC, "injected panic");
            let (log, work, key) = (Arc::clone(&self.log), self.work, *key);
            Box::pin(async move {
                sleep(work).await;
                log.lock().unwrap().push(Event::Handled(key, lane, item));
            })
        }

        fn lane_created(&self, key: &u32, lane: u64) {
            self.log.lock().unwrap().push(Event::Created(*key, lane));
        }

        fn lane_closed(&self, key: &u32, lane: u64, end: LaneEnd) {
            self.log
                .lock()
                .unwrap()
                .push(Event::Closed(*key, lane, end));
        }
    }

    fn router(ttl: Option<Duration>, work_ms: u64) -> (Router<u32, u32, Recorder>, Log) {
        let log = Log::default();
        let work = Duration::from_millis(work_ms);
        let recorder = Recorder {
            log: Arc::clone(&log),
            work,
        };
        (Router::new(Handle::current(), ttl, recorder), log)
    }

    fn handled(log: &Log, key: u32) -> Vec<u32> {
        let log = log.lock().unwrap();
        let items = log.iter().filter_map(|event| match event {
            Event::Handled(k, _, item) if *k == key => Some(*item),
            _ => None,
        });
        items.collect()
    }

    fn has(log: &Log, event: &Event) -> bool {
        log.lock().unwrap().contains(event)
    }

    #[tokio::test(start_paused = true)]
    async fn keys_keep_order_run_independently_and_report_depth() {
        let (router, log) = router(None, 10);
        for item in 0..5 {
            for key in 0..3 {
                assert_eq!(router.route(key, item, Some(5)), Ok(item as usize));
            }
        }
        assert_eq!(router.route(0, 99, Some(5)), Err(99), "lane 0 is full");
        // Serialised, 15 items would take 150ms; three lanes take 50ms.
        sleep(Duration::from_millis(55)).await;
        for key in 0..3 {
            assert_eq!(handled(&log, key), vec![0, 1, 2, 3, 4]);
        }
        assert_eq!(
            router.route(0, 5, Some(1)),
            Ok(0),
            "drained lane admits again"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_lane_reaps_itself_and_a_busy_one_does_not() {
        let (router, log) = router(Some(Duration::from_millis(100)), 80);
        for item in 0..3 {
            router.route(7, item, None).unwrap();
        }
        // Busy for 240ms, longer than the TTL: not reaped meanwhile.
        sleep(Duration::from_millis(300)).await;
        assert_eq!(handled(&log, 7), vec![0, 1, 2]);
        assert_eq!(router.lane_count(), 1, "idle for 60ms only");
        sleep(Duration::from_millis(50)).await;
        assert_eq!(router.lane_count(), 0);
        assert!(has(&log, &Event::Closed(7, 1, LaneEnd::Reaped)));
        router.route(7, 3, None).unwrap();
        sleep(Duration::from_millis(100)).await;
        assert!(has(&log, &Event::Created(7, 2)));
        assert!(has(&log, &Event::Handled(7, 2, 3)), "a fresh lane");
    }

    #[tokio::test(start_paused = true)]
    async fn dropping_the_router_loses_nothing() {
        let (router, log) = router(Some(Duration::from_millis(5)), 10);
        for item in 0..10 {
            router.route(1, item, None).unwrap();
            router.route(2, item, None).unwrap();
        }
        drop(router);
        sleep(Duration::from_secs(1)).await;
        for key in [1, 2] {
            assert_eq!(handled(&log, key), (0..10).collect::<Vec<_>>());
        }
        assert!(has(&log, &Event::Closed(1, 1, LaneEnd::Closed)));
        assert!(has(&log, &Event::Closed(2, 2, LaneEnd::Closed)));
        assert_eq!(log.lock().unwrap().len(), 2 + 20 + 2, "nothing else");
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicked_lane_is_replaced() {
        let (router, log) = router(None, 10);
        router.route(3, PANIC, None).unwrap();
        sleep(Duration::from_millis(1)).await;
        assert!(has(&log, &Event::Closed(3, 1, LaneEnd::Panicked)));
        assert_eq!(router.route(3, 1, None), Ok(0));
        sleep(Duration::from_millis(20)).await;
        assert!(has(&log, &Event::Handled(3, 2, 1)));
    }
}
