//! Router configuration, validated once at construction so `route` never has
//! to reject a configuration at run time.

use std::fmt;
use std::io;

pub use foldhash::fast::RandomState;

use super::observer::LaneObserver;
use crate::planted::Planted;
use crate::shim::rt::RuntimeChoice;
use crate::shim::sync::Arc;
use crate::shim::time::Duration;

/// A hasher with fixed keys: the same key lands in the same shard and bucket
/// on every run and machine. Simulated runs must use it (or another fixed
/// one); production keeps the per-process seeded default ([`RandomState`])
/// against hash flooding. Both are foldhash: SipHash cost about a fifth of
/// `route` in the benchmark.
pub type FixedHasher = foldhash::fast::FixedState;

/// Shard count unless configured: fixed, not derived from the core count, so
/// a run's layout does not depend on the machine.
pub const DEFAULT_SHARDS: usize = 64;

/// How a [`LaneRouter`](super::LaneRouter) runs.
pub struct LaneRouterConfig<K, S = RandomState> {
    /// How long a lane may sit with no work before it reaps itself. `None`
    /// keeps lanes until the router is dropped. Zero is rejected.
    pub idle_ttl: Option<Duration>,
    /// Where lane tasks run.
    pub runtime: RuntimeChoice,
    /// Lifecycle hooks. Called while the key's shard lock is held (creation)
    /// or from the exiting lane task, so they must be quick and must not call
    /// back into the router.
    pub observer: Option<Arc<dyn LaneObserver<K>>>,
    /// The lane map's hasher.
    pub hasher: S,
    /// The lane map's shard count: a power of two, at least 2.
    pub shards: usize,
    /// Planted bug, if any (only selectable with the `planted-bugs` feature).
    pub planted: Planted,
}

impl<K, S: Default> LaneRouterConfig<K, S> {
    /// Lanes on `runtime`, never reaped, no observer, default map layout.
    #[must_use]
    pub fn new(runtime: RuntimeChoice) -> Self {
        Self {
            idle_ttl: None,
            runtime,
            observer: None,
            hasher: S::default(),
            shards: DEFAULT_SHARDS,
            planted: Planted::none(),
        }
    }
}

impl<K, S> LaneRouterConfig<K, S> {
    /// Reap lanes idle for `ttl`.
    #[must_use]
    pub fn idle_ttl(mut self, ttl: Duration) -> Self {
        self.idle_ttl = Some(ttl);
        self
    }

    /// Install lifecycle hooks.
    #[must_use]
    pub fn observer(mut self, observer: Arc<dyn LaneObserver<K>>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Use `hasher` for the lane map.
    #[must_use]
    pub fn hasher<S2>(self, hasher: S2) -> LaneRouterConfig<K, S2> {
        LaneRouterConfig {
            idle_ttl: self.idle_ttl,
            runtime: self.runtime,
            observer: self.observer,
            hasher,
            shards: self.shards,
            planted: self.planted,
        }
    }

    /// Build with this planted bug selection.
    #[must_use]
    pub fn planted(mut self, planted: Planted) -> Self {
        self.planted = planted;
        self
    }

    pub(super) fn validate(&self) -> Result<(), LaneConfigError> {
        if self.idle_ttl.is_some_and(|ttl| ttl.is_zero()) {
            return Err(LaneConfigError::ZeroIdleTtl);
        }
        if self.shards < 2 || !self.shards.is_power_of_two() {
            return Err(LaneConfigError::BadShardCount(self.shards));
        }
        Ok(())
    }
}

/// Why a router or dispatcher configuration was refused.
#[derive(Debug)]
pub enum LaneConfigError {
    /// `idle_ttl` of zero would reap a lane between any two items; use `None`
    /// to disable reaping instead.
    ZeroIdleTtl,
    /// The shard count must be a power of two and at least 2.
    BadShardCount(usize),
    /// A dispatcher limit of 0 would shed every item.
    ZeroLimit,
    /// The dedicated runtime could not be started.
    Runtime(io::Error),
}

impl fmt::Display for LaneConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroIdleTtl => {
                f.write_str("idle_ttl must be greater than zero (use None to never reap)")
            }
            Self::BadShardCount(shards) => {
                write!(f, "shard count must be a power of two >= 2, got {shards}")
            }
            Self::ZeroLimit => f.write_str("the per-lane limit must be at least 1"),
            Self::Runtime(error) => write!(f, "could not start the lane runtime: {error}"),
        }
    }
}

impl std::error::Error for LaneConfigError {}
