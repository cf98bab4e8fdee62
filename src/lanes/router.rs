//! [`LaneRouter`]: admission and send under the shard lock (invariant 1 of
//! the module model), lane creation on first use.

use std::fmt::Debug;
use std::hash::{BuildHasher, Hash};

use super::config::{LaneConfigError, LaneRouterConfig, RandomState};
use super::lane::{Consumer, ConsumerKind, Lane, LaneConsumer, LaneContext, LaneMap};
use super::observer::LaneId;
use super::queue::{self, Sender};
use super::task::LaneTask;
use crate::planted::PlantedBug;
use crate::shim::map::ShardedMap;
use crate::shim::probe::{mark, Mark};
use crate::shim::rt::TaskRuntime;
use crate::shim::sync::{Arc, AtomicU64, AtomicUsize, Ordering};

/// Routes items to per-key ordering lanes: items sharing a key reach the
/// consumer one at a time in route order; distinct keys run concurrently.
pub struct LaneRouter<K, T, S = RandomState>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    T: Send + 'static,
    S: BuildHasher + Clone + Send + Sync + 'static,
{
    lanes: Arc<LaneMap<K, T, S>>,
    ctx: Arc<LaneContext<K, T>>,
    // Declared last so it drops last: the map's senders go first and lane
    // tasks see a clean disconnect before a dedicated runtime stops.
    runtime: TaskRuntime,
}

impl<K, T, S> LaneRouter<K, T, S>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    T: Send + 'static,
    S: BuildHasher + Clone + Send + Sync + 'static,
{
    /// A router handing each item to `consumer` on its key's lane.
    ///
    /// # Errors
    /// A zero `idle_ttl`, a bad shard count, or a dedicated runtime that
    /// cannot start.
    pub fn new(
        consumer: Consumer<T>,
        config: LaneRouterConfig<K, S>,
    ) -> Result<Self, LaneConfigError> {
        Self::start(ConsumerKind::Plain(consumer), config)
    }

    /// Like [`LaneRouter::new`], with a consumer that is told its lane.
    ///
    /// # Errors
    /// As [`LaneRouter::new`].
    pub fn with_lane_ids(
        consumer: LaneConsumer<T>,
        config: LaneRouterConfig<K, S>,
    ) -> Result<Self, LaneConfigError> {
        Self::start(ConsumerKind::WithLaneIds(consumer), config)
    }

    fn start(
        consumer: ConsumerKind<T>,
        config: LaneRouterConfig<K, S>,
    ) -> Result<Self, LaneConfigError> {
        config.validate()?;
        let runtime =
            TaskRuntime::start(config.runtime, config.planted).map_err(LaneConfigError::Runtime)?;
        Ok(Self {
            lanes: Arc::new(ShardedMap::new(config.hasher, config.shards)),
            ctx: Arc::new(LaneContext {
                consumer,
                idle_ttl: config.idle_ttl,
                observer: config.observer,
                planted: config.planted,
                next_lane: AtomicU64::new(1),
                all_pending: AtomicUsize::new(0),
            }),
            runtime,
        })
    }

    /// Enqueues `item` on `key`'s lane, creating the lane if there is none.
    ///
    /// Returns the lane's depth (unhandled items) *before* this one, or hands
    /// `item` back when `capacity` is `Some(n)` and the lane already holds `n`.
    /// `None` never refuses. Never blocks: the channel is unbounded and
    /// `capacity` is an admission check.
    pub fn route(&self, key: K, item: T, capacity: Option<usize>) -> Result<usize, T> {
        let planted = self.ctx.planted;
        // A new lane's task is started only after the shard lock is
        // released: a runtime that is shutting down drops the task at once,
        // and its exit guard takes this same lock.
        let mut new_task = None;
        let routed = if planted.has(PlantedBug::RouteSendsAfterUnlock) {
            let tx = self.lanes.with_entry(
                key,
                |key| self.new_lane(key, &mut new_task),
                |lane| lane.tx.clone(),
            );
            self.admit(&tx, item, capacity)
        } else if planted.has(PlantedBug::CapacityCheckedOutsideGuard) {
            let depth = self
                .lanes
                .get_with(&key, |lane| lane.state().pending.load(Ordering::Acquire))
                .unwrap_or(0);
            if capacity.is_some_and(|capacity| depth >= capacity) {
                return Err(item);
            }
            self.lanes.with_entry(
                key,
                |key| self.new_lane(key, &mut new_task),
                |lane| self.admit(&lane.tx, item, None).map(|_| depth),
            )
        } else {
            // Everything happens inside `with_entry`, under the shard write
            // lock. Do NOT clone the sender out and send after the guard
            // drops: the clone keeps the channel alive, so the send
            // "succeeds" into a lane the reaper may already have removed and
            // replaced.
            self.lanes.with_entry(
                key,
                |key| self.new_lane(key, &mut new_task),
                |lane| self.admit(&lane.tx, item, capacity),
            )
        };
        if let Some(task) = new_task {
            self.runtime.spawn(task.run());
        }
        routed
    }

    /// Number of live lanes.
    #[must_use]
    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// The capacity check and the send. Called with the shard lock held, which
    /// serialises every producer of the key, so "add, then undo if over" is
    /// exact: no other producer can see the transient count, and the reaper
    /// needs this same lock to look. One read-modify-write instead of a load
    /// and an add halves the traffic on a cache line the lane task also
    /// writes. The lane task only ever decrements, so the depth read can be
    /// stale-high (reject a shade early), never stale-low (admit past the cap).
    fn admit(&self, tx: &Sender<T>, item: T, capacity: Option<usize>) -> Result<usize, T> {
        let state = tx.shared();
        let counter = if self.ctx.planted.has(PlantedBug::CapacitySharedAcrossKeys) {
            &self.ctx.all_pending
        } else {
            &state.pending
        };
        let depth = counter.fetch_add(1, Ordering::AcqRel);
        if capacity.is_some_and(|capacity| depth >= capacity) {
            counter.fetch_sub(1, Ordering::AcqRel);
            mark(Mark::CapacityRefused);
            return Err(item);
        }
        if self.ctx.planted.has(PlantedBug::CapacitySharedAcrossKeys) {
            state.pending.fetch_add(1, Ordering::AcqRel);
        }
        // Cannot fail: the receiver outlives the map entry (the exit guard
        // removes the entry before the task drops its receiver), and we hold
        // the entry's lock.
        let _ = tx.send(item);
        Ok(depth)
    }

    /// Creates a key's lane and its (not yet started) task. Runs under the
    /// shard lock.
    fn new_lane(&self, key: &K, task: &mut Option<LaneTask<K, T, S>>) -> Lane<T> {
        mark(Mark::LaneCreated);
        let id = LaneId(self.ctx.next_lane.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = queue::unbounded();
        let state = Arc::clone(tx.shared());
        if let Some(observer) = &self.ctx.observer {
            observer.lane_created(key, id);
        }
        *task = Some(LaneTask::new(
            key.clone(),
            id,
            rx,
            Arc::clone(&state),
            // Weak: a lane never keeps the map alive, so dropping the router
            // drops every sender and each lane exits on the disconnect.
            Arc::downgrade(&self.lanes),
            Arc::clone(&self.ctx),
        ));
        Lane { tx }
    }
}

impl<K, T, S> Drop for LaneRouter<K, T, S>
where
    K: Eq + Hash + Clone + Debug + Send + Sync + 'static,
    T: Send + 'static,
    S: BuildHasher + Clone + Send + Sync + 'static,
{
    fn drop(&mut self) {
        if crate::shim::probe::ENABLED && !self.lanes.is_empty() {
            mark(Mark::RouterDroppedWithLiveLanes);
        }
    }
}
