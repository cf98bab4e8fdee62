//! The types a router and its lane tasks share: the map entry ([`Lane`]),
//! the per-lane counter ([`LaneState`]) and what every lane of one router
//! shares ([`LaneContext`]). Their own module so that the router (which
//! creates lanes) and the lane task (which consumes and removes them) both
//! depend on it and not on each other.

use futures_util::future::BoxFuture;

use super::observer::{LaneId, LaneObserver};
use super::queue::Sender;
use crate::planted::Planted;
use crate::shim::map::ShardedMap;
use crate::shim::sync::{Arc, AtomicU64, AtomicUsize};
use crate::shim::time::Duration;

/// Handles one item; the future resolving is what frees its place in the lane.
pub type Consumer<T> = Arc<dyn Fn(T) -> BoxFuture<'static, ()> + Send + Sync>;

/// A consumer that is also told which lane runs it (the testbed's L3 check).
pub type LaneConsumer<T> = Arc<dyn Fn(LaneId, T) -> BoxFuture<'static, ()> + Send + Sync>;

pub(super) type LaneMap<K, T, S> = ShardedMap<K, Lane<T>, S>;

/// A key's lane as the map holds it: the only sender into the lane task.
pub(super) struct Lane<T> {
    pub(super) tx: Sender<T>,
}

impl<T> Lane<T> {
    /// State shared by the lane's producers and its task.
    pub(super) fn state(&self) -> &Arc<LaneState<T>> {
        self.tx.shared()
    }
}

/// State shared by a lane's producers and its task: its `pending` count
/// and its queue, one allocation (`queue::Shared`).
pub(crate) type LaneState<T> = super::queue::Shared<T>;

/// A router's consumer as given: told its lane or not. Kept as given so a
/// plain consumer costs one dynamic call per item, not two (a wrapper
/// closure around it was one more).
pub(super) enum ConsumerKind<T> {
    /// From [`LaneRouter::new`](super::LaneRouter::new).
    Plain(Consumer<T>),
    /// From [`LaneRouter::with_lane_ids`](super::LaneRouter::with_lane_ids).
    WithLaneIds(LaneConsumer<T>),
}

impl<T> ConsumerKind<T> {
    /// Starts handling `item` on lane `lane`.
    pub(super) fn call(&self, lane: LaneId, item: T) -> BoxFuture<'static, ()> {
        match self {
            Self::Plain(consumer) => consumer(item),
            Self::WithLaneIds(consumer) => consumer(lane, item),
        }
    }
}

/// What every lane task of a router shares.
pub(super) struct LaneContext<K, T> {
    pub(super) consumer: ConsumerKind<T>,
    pub(super) idle_ttl: Option<Duration>,
    pub(super) observer: Option<Arc<dyn LaneObserver<K>>>,
    pub(super) planted: Planted,
    pub(super) next_lane: AtomicU64,
    /// Only read and written under planted bug #5b (one counter for all keys).
    pub(super) all_pending: AtomicUsize,
}
