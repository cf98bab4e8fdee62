//! Lane lifecycle hooks: how metrics and the testbed's checkers see lanes
//! come and go without the router knowing about either.

use std::fmt;

/// Identifies one lane over the router's life: a key that is reaped and
/// routed again gets a new, larger id. Ordered by creation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaneId(pub u64);

impl fmt::Display for LaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lane#{}", self.0)
    }
}

/// Why a lane task ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneExit {
    /// Idle for the TTL with nothing pending: removed itself.
    Reaped,
    /// Its sender is gone: the router was dropped.
    Closed,
    /// Unwound: the consumer panicked (the raw router does not catch).
    Panicked,
    /// Dropped unfinished: its runtime shut down.
    Cancelled,
}

/// Hooks fired as lanes are created and end.
pub trait LaneObserver<K>: Send + Sync {
    /// A lane was spawned for `key`, which had none.
    fn lane_created(&self, key: &K, lane: LaneId);
    /// The lane task for `key` ended; its map entry is already gone.
    fn lane_closed(&self, key: &K, lane: LaneId, exit: LaneExit);
}
