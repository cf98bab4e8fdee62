//! A per-key ordering router built for throughput: a sharded map of lanes,
//! an atomic pending count per lane, and lanes that reap themselves.
//!
//! # Design
//!
//! - **No router-wide lock.** Keys map to lane handles in a [`DashMap`]; a
//!   `route` of a key that has a lane takes only that key's shard *read*
//!   lock, so routes to different keys (and to the same shard) run in
//!   parallel. Only lane creation and removal take a shard's write lock.
//! - **Admission is one atomic.** Each lane has a pending counter (items
//!   admitted and not yet finished, the running one included). `route`
//!   bumps it with a compare-and-swap loop that refuses at `capacity`, and
//!   returns the old value as the depth. The item then goes into the lane's
//!   unbounded channel: the counter *is* the bound, so the channel never
//!   needs one.
//! - **Reaping without a tombstone.** `route` holds the shard read guard
//!   across the increment and the send. An idle lane removes itself with
//!   `remove_if` under the shard write lock, only if the entry is still its
//!   own and its counter is zero. The two are mutually exclusive, so a lane
//!   is never removed between a route's lookup and its send, and a removed
//!   lane can have nothing queued: nothing is lost, nothing is stranded.
//! - **Idle timer only when idle.** A lane drains its channel with
//!   `try_recv` and only arms the TTL timer when it finds the channel empty,
//!   so a busy lane pays no timer per item.
//! - **Drop.** The map owns each lane's only `Sender`; lanes hold the map
//!   weakly. Dropping the router drops the senders, each lane drains what
//!   it was given and then sees the disconnect and ends.
//! - **Lifecycle.** Creation is reported under the shard write lock before
//!   the lane task is spawned; a reap is reported inside `remove_if`'s
//!   predicate, under the same lock, so a key's "closed" always precedes
//!   its next lane's "created". A panicking handler unwinds through its
//!   lane; the lane's `Drop` unregisters it, so the next route of that key
//!   gets a fresh lane.

use std::future::{poll_fn, Future};
use std::hash::Hash;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::pin;

use lanesim_target::lanes::{
    Item, LaneExit, LaneId, LaneReports, Lanes, LanesCapabilities, LanesFixed, LanesSetup,
    LanesTarget, Mode, ModeKind,
};
use lanesim_target::probe::Sites;
use lanesim_target::shim::chan::{self, Receiver, Sender, TryRecvError};
use lanesim_target::shim::dashmap::DashMap;
use lanesim_target::shim::std_sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use lanesim_target::shim::std_sync::{Arc, Weak};
use lanesim_target::shim::task::{yield_now, Handle};
use lanesim_target::shim::time::{timeout, Duration};

/// Items a lane handles back to back before yielding its worker thread, so
/// a hot key cannot starve the other lanes scheduled there.
const BATCH: u32 = 64;

/// Told when lanes come and go. Called under a shard lock: keep it cheap.
pub trait LaneObserver<K>: Send + Sync {
    /// A lane numbered `lane` was installed for `key`, before it runs.
    fn created(&self, _key: &K, _lane: u64) {}
    /// The lane ended; the router no longer routes to it.
    fn closed(&self, _key: &K, _lane: u64, _exit: LaneExit) {}
}

/// No observer.
impl<K> LaneObserver<K> for () {}

/// What the map holds per key: the producer side of a lane.
struct LaneHandle<V> {
    id: u64,
    pending: Arc<AtomicUsize>,
    tx: Sender<V>,
}

impl<V> LaneHandle<V> {
    /// Admits `item` if the lane holds fewer than `capacity` items. Called
    /// with the entry's shard lock held (see the module docs).
    fn admit(&self, item: V, capacity: Option<usize>) -> Result<usize, V> {
        let limit = capacity.unwrap_or(usize::MAX);
        let Ok(depth) = self
            .pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
        else {
            return Err(item);
        };
        match self.tx.send(item) {
            Ok(()) => Ok(depth),
            // The lane died under us (its runtime is shutting down): refuse.
            Err(chan::SendError(item)) => {
                self.pending.fetch_sub(1, Ordering::AcqRel);
                Err(item)
            }
        }
    }
}

type Map<K, V> = DashMap<K, LaneHandle<V>>;

/// What every lane shares, strongly (the map is shared weakly).
struct Ctx<K, H> {
    handler: H,
    observer: Box<dyn LaneObserver<K>>,
    idle_ttl: Option<Duration>,
    runtime: Handle,
    next_id: AtomicU64,
}

/// The router: per-key FIFO lanes, each a task running `handler` on its
/// key's items one at a time. Dropping it lets every lane finish its queue
/// and end.
pub struct LaneRouter<K, V, H> {
    lanes: Arc<Map<K, V>>,
    ctx: Arc<Ctx<K, H>>,
}

impl<K, V, H, F> LaneRouter<K, V, H>
where
    K: Eq + Hash + Clone + Send + Sync + 'static,
    V: Send + 'static,
    H: Fn(u64, V) -> F + Send + Sync + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    /// A router spawning lanes on `runtime`, reaping a lane idle for
    /// `idle_ttl` (`None`: never), and calling `handler(lane, item)`.
    pub fn new(runtime: Handle, idle_ttl: Option<Duration>, handler: H) -> Self {
        Self::with_observer(runtime, idle_ttl, handler, ())
    }

    /// As [`LaneRouter::new`], reporting lanes to `observer`.
    pub fn with_observer(
        runtime: Handle,
        idle_ttl: Option<Duration>,
        handler: H,
        observer: impl LaneObserver<K> + 'static,
    ) -> Self {
        Self {
            lanes: Arc::new(DashMap::default()),
            ctx: Arc::new(Ctx {
                handler,
                observer: Box::new(observer),
                idle_ttl,
                runtime,
                next_id: AtomicU64::new(1),
            }),
        }
    }

    /// Queues `item` behind the earlier items of `key`. `Ok(depth)`: the
    /// lane's pending items before this one; `Err(item)`: the lane already
    /// holds `capacity` items.
    ///
    /// # Errors
    /// The item back, when it was refused.
    pub fn route(&self, key: K, item: V, capacity: Option<usize>) -> Result<usize, V> {
        // Hot path: the lane exists; shared shard lock only.
        if let Some(lane) = self.lanes.get(&key) {
            return lane.admit(item, capacity);
        }
        // Cold path: create it, unless another route beat us to it.
        let lane = self
            .lanes
            .entry(key.clone())
            .or_insert_with(|| self.spawn_lane(key));
        lane.admit(item, capacity)
    }

    /// Lanes alive now.
    pub fn live_lanes(&self) -> usize {
        self.lanes.len()
    }

    /// Runs under the key's shard write lock, so ids grow per key and
    /// `created` precedes any route to the lane.
    fn spawn_lane(&self, key: K) -> LaneHandle<V> {
        let id = self.ctx.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = chan::unbounded();
        let pending = Arc::new(AtomicUsize::new(0));
        self.ctx.observer.created(&key, id);
        let lane = Lane {
            key,
            id,
            rx,
            pending: Arc::clone(&pending),
            map: Arc::downgrade(&self.lanes),
            ctx: Arc::clone(&self.ctx),
            exit: None,
        };
        // Detached: the lane ends on its own (reap, disconnect or panic).
        drop(self.ctx.runtime.spawn(lane.run()));
        LaneHandle { id, pending, tx }
    }
}

/// The consumer side of a lane, owned by its task.
struct Lane<K: Eq + Hash, V, H> {
    key: K,
    id: u64,
    rx: Receiver<V>,
    pending: Arc<AtomicUsize>,
    map: Weak<Map<K, V>>,
    ctx: Arc<Ctx<K, H>>,
    /// How it ended (`None` in `Drop`: cancelled, its future dropped).
    exit: Option<LaneExit>,
}

impl<K, V, H, F> Lane<K, V, H>
where
    K: Eq + Hash,
    H: Fn(u64, V) -> F,
    F: Future<Output = ()>,
{
    async fn run(mut self) {
        let mut streak = 0;
        let exit = loop {
            let next = match self.rx.try_recv() {
                Ok(item) => Ok(item),
                Err(TryRecvError::Disconnected) => break LaneExit::Closed,
                Err(TryRecvError::Empty) => {
                    streak = 0;
                    match self.ctx.idle_ttl {
                        None => self.rx.recv_async().await,
                        Some(ttl) => match timeout(ttl, self.rx.recv_async()).await {
                            Ok(next) => next,
                            Err(_) if self.try_reap() => break LaneExit::Reaped,
                            Err(_) => continue,
                        },
                    }
                }
            };
            // Disconnected and drained: the router was dropped.
            let Ok(item) = next else {
                break LaneExit::Closed;
            };
            // A panic unwinds through the lane (Mode::Router), marked on
            // the way so `Drop` can tell it from a cancellation: checked
            // here, not by `thread::panicking()`, because an executor may
            // drop the task's future after it caught the unwind.
            let call = mark_panic(&mut self.exit, || (self.ctx.handler)(self.id, item));
            let mut call = pin!(call);
            poll_fn(|cx| mark_panic(&mut self.exit, || call.as_mut().poll(cx))).await;
            self.pending.fetch_sub(1, Ordering::Release);
            streak += 1;
            if streak == BATCH {
                streak = 0;
                yield_now().await;
            }
        };
        self.exit = Some(exit);
    }

    /// Removes this lane if it is still registered and holds nothing; the
    /// shard write lock excludes every `route` between lookup and send.
    /// A gone router is not reaped here: its disconnect ends the lane.
    fn try_reap(&self) -> bool {
        self.unregister(LaneExit::Reaped, true)
    }
}

impl<K: Eq + Hash, V, H> Lane<K, V, H> {
    /// Removes this lane's own entry (if `only_idle`, only while its count
    /// is zero), reporting `exit` under the shard lock. False if nothing
    /// was removed.
    fn unregister(&self, exit: LaneExit, only_idle: bool) -> bool {
        let Some(map) = self.map.upgrade() else {
            return false;
        };
        let removed = map.remove_if(&self.key, |_, lane| {
            let ours =
                lane.id == self.id && (!only_idle || lane.pending.load(Ordering::Acquire) == 0);
            if ours {
                self.ctx.observer.closed(&self.key, self.id, exit);
            }
            ours
        });
        removed.is_some()
    }
}

/// Runs `f`; if it panics, records [`LaneExit::Panicked`] and re-raises.
fn mark_panic<T>(exit: &mut Option<LaneExit>, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        *exit = Some(LaneExit::Panicked);
        resume_unwind(panic)
    })
}

/// Runs however the task ends; fields (the receiver) drop after it, so a
/// dying lane leaves the map before its channel closes.
impl<K: Eq + Hash, V, H> Drop for Lane<K, V, H> {
    fn drop(&mut self) {
        match self.exit.unwrap_or(LaneExit::Cancelled) {
            LaneExit::Reaped => {} // reported under the shard lock
            LaneExit::Closed => self
                .ctx
                .observer
                .closed(&self.key, self.id, LaneExit::Closed),
            // Panicked or cancelled while still registered: leave the map.
            exit => {
                if !self.unregister(exit, false) {
                    self.ctx.observer.closed(&self.key, self.id, exit);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// lanesim adapter

impl LaneObserver<u64> for LaneReports {
    fn created(&self, key: &u64, lane: u64) {
        LaneReports::created(self, *key, LaneId(lane));
    }

    fn closed(&self, key: &u64, lane: u64, exit: LaneExit) {
        LaneReports::closed(self, *key, LaneId(lane), exit);
    }
}

/// [`LaneRouter`] as a lanesim lanes target ([`Mode::Router`] only).
#[derive(Clone, Copy, Debug, Default)]
pub struct ShardedLanes;

struct Built<H>(LaneRouter<u64, Item, H>);

impl<H, F> Lanes for Built<H>
where
    H: Fn(u64, Item) -> F + Send + Sync + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        self.0.route(item.key, item, capacity)
    }
}

impl LanesTarget for ShardedLanes {
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
                "sharded-lanes offers Mode::Router only, not {:?}",
                setup.mode
            ));
        }
        let handler = setup.handler;
        let router = LaneRouter::with_observer(
            setup.runtime,
            setup.idle_ttl,
            move |lane, item| handler.call_on(LaneId(lane), item),
            setup.reports,
        );
        Ok(Box::new(Built(router)))
    }
}

/// The sharded lanes router alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShardedTargets;

impl lanesim_target::Targets for ShardedTargets {
    fn name(&self) -> &str {
        "sharded-lanes"
    }

    fn lanes(&self) -> Option<&dyn LanesTarget> {
        Some(&ShardedLanes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lanesim_target::shim::time::sleep;

    type Seen = (u64, u32, u32);

    #[derive(Debug, PartialEq)]
    enum Event {
        Created(u32, u64),
        Closed(u32, u64, LaneExit),
    }

    struct Events(Sender<Event>);

    impl LaneObserver<u32> for Events {
        fn created(&self, key: &u32, lane: u64) {
            self.0.send(Event::Created(*key, lane)).unwrap();
        }
        fn closed(&self, key: &u32, lane: u64, exit: LaneExit) {
            self.0.send(Event::Closed(*key, lane, exit)).unwrap();
        }
    }

    /// A router whose handler takes `delay` per item and records it.
    #[allow(clippy::type_complexity)]
    fn router(
        ttl: Option<Duration>,
        delay: Duration,
    ) -> (
        LaneRouter<u32, (u32, u32), impl Fn(u64, (u32, u32)) -> BoxedUnit + Send + Sync>,
        Receiver<Seen>,
        Receiver<Event>,
    ) {
        let (seen_tx, seen) = chan::unbounded();
        let (event_tx, events) = chan::unbounded();
        let handler = move |lane, (key, seq): (u32, u32)| -> BoxedUnit {
            assert!(!(key == 99 && seq == 1), "injected panic");
            let seen_tx = seen_tx.clone();
            Box::pin(async move {
                sleep(delay).await;
                seen_tx.send((lane, key, seq)).unwrap();
            })
        };
        let router = LaneRouter::with_observer(Handle::current(), ttl, handler, Events(event_tx));
        (router, seen, events)
    }

    type BoxedUnit = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

    fn drain<T>(rx: &Receiver<T>) -> Vec<T> {
        std::iter::from_fn(|| rx.try_recv().ok()).collect()
    }

    const MS: Duration = Duration::from_millis(1);

    #[tokio::test(start_paused = true)]
    async fn per_key_fifo_depth_and_independence() {
        let (router, seen, _events) = router(None, MS);
        for seq in 0..50 {
            for key in 0..4 {
                assert_eq!(router.route(key, (key, seq), None), Ok(seq as usize));
            }
        }
        // 4 keys x 50 items x 1ms: done in ~50ms only if keys run in parallel.
        sleep(60 * MS).await;
        let seen = drain(&seen);
        assert_eq!(seen.len(), 200);
        let mut next = [0; 4];
        let mut lane = [None; 4];
        for (id, key, seq) in seen {
            let k = key as usize;
            assert_eq!(seq, next[k], "key {key} out of order");
            next[k] += 1;
            assert_eq!(*lane[k].get_or_insert(id), id, "key {key} changed lanes");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn capacity_refuses_and_frees() {
        let (router, seen, _events) = router(None, 10 * MS);
        assert_eq!(router.route(1, (1, 0), Some(2)), Ok(0));
        assert_eq!(router.route(1, (1, 1), Some(2)), Ok(1));
        assert_eq!(router.route(1, (1, 2), Some(2)), Err((1, 2)));
        assert_eq!(router.route(2, (2, 0), Some(2)), Ok(0));
        sleep(25 * MS).await;
        assert_eq!(router.route(1, (1, 2), Some(2)), Ok(0));
        sleep(25 * MS).await;
        assert_eq!(drain(&seen).len(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn idle_lane_reaps_after_ttl_and_comes_back_fresh() {
        let (router, seen, events) = router(Some(100 * MS), 10 * MS);
        router.route(7, (7, 0), None).unwrap();
        sleep(50 * MS).await; // handled at 10ms, idle since
        assert_eq!(router.live_lanes(), 1);
        assert_eq!(drain(&events), [Event::Created(7, 1)]);
        sleep(100 * MS).await; // idle deadline at 110ms
        assert_eq!(router.live_lanes(), 0);
        assert_eq!(drain(&events), [Event::Closed(7, 1, LaneExit::Reaped)]);
        assert_eq!(router.route(7, (7, 1), None), Ok(0));
        sleep(20 * MS).await;
        assert_eq!(drain(&events), [Event::Created(7, 2)]);
        assert_eq!(drain(&seen), [(1, 7, 0), (2, 7, 1)]);
    }

    #[tokio::test(start_paused = true)]
    async fn drop_finishes_every_lane_then_ends_them() {
        let (router, seen, events) = router(Some(Duration::from_secs(10)), 10 * MS);
        for seq in 0..20 {
            for key in 0..3 {
                router.route(key, (key, seq), None).unwrap();
            }
        }
        drop(router);
        sleep(250 * MS).await; // 20 x 10ms, far short of the TTL
        let seen = drain(&seen);
        assert_eq!(seen.len(), 60);
        for key in 0..3 {
            let seqs: Vec<_> = seen.iter().filter(|s| s.1 == key).map(|s| s.2).collect();
            assert_eq!(seqs, (0..20).collect::<Vec<_>>());
        }
        let closed = drain(&events)
            .into_iter()
            .filter(|e| matches!(e, Event::Closed(_, _, LaneExit::Closed)))
            .count();
        assert_eq!(closed, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn panicking_handler_ends_its_lane_only() {
        let (router, seen, events) = router(None, MS);
        router.route(99, (99, 0), None).unwrap();
        router.route(99, (99, 1), None).unwrap(); // panics
        router.route(5, (5, 0), None).unwrap();
        sleep(10 * MS).await;
        assert_eq!(router.live_lanes(), 1);
        assert!(drain(&events).contains(&Event::Closed(99, 1, LaneExit::Panicked)));
        assert_eq!(router.route(99, (99, 2), None), Ok(0));
        sleep(10 * MS).await;
        assert_eq!(drain(&events), [Event::Created(99, 3)]);
        assert_eq!(drain(&seen).len(), 3);
    }
}
