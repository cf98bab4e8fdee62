//! The lanes target: a router that gives every key its own FIFO lane (the
//! shape of velo's `LaneRouter` and `OrderedDispatcher`).
//!
//! Model. The lanes world builds one router per run ([`LanesTarget::build`])
//! on the world's runtime, routes a seeded workload into it from several
//! producers ([`Lanes::route`]), and drops it at the end (or mid-flight).
//! Every item's handling runs the world's [`Handler`], which records when
//! the item started and ended and injects long handlers, panics and stuck
//! keys. The checkers decide the lanes contracts from what the world sees:
//!
//! - from outside, for every target: the handler's calls per key and what
//!   `route` answered (L1 per-key FIFO, L2 exactly-once, L4 capacity and
//!   depth, L6 independence), and lane identity inferred from the tokio task
//!   a handler runs on (L3: a key's items never run on two tasks at once,
//!   and never on an older task after a newer one);
//! - with [`LanesCapabilities::lifecycle`] (the target calls
//!   [`LaneReports`] as lanes come and go and hands each item's lane to the
//!   handler, [`Handler::call_on`]): L3 against the lane each item was
//!   admitted to, and L5 reap soundness and liveness (no lane reaped
//!   holding work, every idle lane reaped within its TTL, every lane ended
//!   after the drop). Without it, in simulation, the world infers the
//!   lifecycle: a lane is the task a `route` of its key spawned, ended when
//!   that task ends, and L5 is decided on it wherever every handler ran on
//!   such a task (lanesim's tokio tells the world when tasks are spawned
//!   and end);
//! - with [`LanesCapabilities::stats`]: the counters agree with the log.
//!
//! A contract a target cannot support is reported as not decided, with the
//! reason, in every output; it is never counted as a pass.
//!
//! Determinism: spawn lanes on [`LanesSetup::runtime`] only, sleep with
//! `tokio::time`, and use a hasher with fixed keys for any map you iterate
//! or whose layout decides an order (`lanesim audit` tells you when a run
//! does not replay).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::probe::Sites;

/// A boxed `'static` future, as handlers return.
pub type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// What the world routes: an item of a key, numbered across the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Item {
    /// The ordering key.
    pub key: u64,
    /// The item's number, unique in the run.
    pub seq: u64,
}

/// One lane over the router's life: a key that is reaped and routed again
/// gets a new, larger id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LaneId(pub u64);

impl fmt::Display for LaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lane#{}", self.0)
    }
}

/// Why a lane ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LaneExit {
    /// Idle for the TTL with nothing pending: removed itself.
    Reaped,
    /// Its router was dropped.
    Closed,
    /// The handler panicked and the lane died with it.
    Panicked,
    /// Dropped unfinished (its runtime shut down).
    Cancelled,
}

/// How the world wants items admitted and panics treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A plain router: `route(item, capacity)` admits while the key's lane
    /// holds fewer than `capacity` unhandled items (`None`: no limit); a
    /// panicking handler unwinds through its lane.
    Router,
    /// A dispatcher with a per-lane limit that refuses past it, and catches
    /// handler panics (the lane lives on). `route`'s `capacity` is the
    /// limit.
    Reject {
        /// Unhandled items a lane may hold.
        limit: usize,
    },
    /// A dispatcher with a per-lane limit that admits past it (with a
    /// warning) and catches handler panics. `route`'s `capacity` is `None`.
    Warn {
        /// The limit past which it warns.
        limit: usize,
    },
}

/// Which kinds of [`Mode`] a target offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModeKind {
    /// [`Mode::Router`].
    Router,
    /// [`Mode::Reject`].
    Reject,
    /// [`Mode::Warn`].
    Warn,
}

impl Mode {
    /// The kind of this mode.
    #[must_use]
    pub fn kind(self) -> ModeKind {
        match self {
            Self::Router => ModeKind::Router,
            Self::Reject { .. } => ModeKind::Reject,
            Self::Warn { .. } => ModeKind::Warn,
        }
    }
}

/// The world's handler: what every admitted item must run, exactly once, in
/// route order per key. Cheap to clone.
#[derive(Clone)]
pub struct Handler(Arc<dyn Fn(Option<LaneId>, Item) -> BoxFuture + Send + Sync>);

impl Handler {
    /// A handler running `f` (the world builds it; tests may too).
    pub fn new(f: impl Fn(Option<LaneId>, Item) -> BoxFuture + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Handles `item`. Call it on the lane's own task: without lifecycle
    /// reports, the world tells lanes apart by the task a handler runs on.
    /// The synchronous part may panic (the world injects that too).
    #[must_use]
    pub fn call(&self, item: Item) -> BoxFuture {
        (self.0)(None, item)
    }

    /// Handles `item` on `lane`, the id the target reported when the lane
    /// was created ([`LaneReports::created`]).
    #[must_use]
    pub fn call_on(&self, lane: LaneId, item: Item) -> BoxFuture {
        (self.0)(Some(lane), item)
    }
}

impl fmt::Debug for Handler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Handler")
    }
}

/// Where a target with [`LanesCapabilities::lifecycle`] reports lanes
/// coming and going (the shape of velo's `LaneObserver`).
pub trait LaneEvents: Send + Sync {
    /// A lane was created for `key`, which had none.
    fn created(&self, key: u64, lane: LaneId);
    /// The lane for `key` ended; the router no longer routes to it.
    fn closed(&self, key: u64, lane: LaneId, exit: LaneExit);
}

/// The world's lifecycle sink. Cheap to clone.
#[derive(Clone)]
pub struct LaneReports(Arc<dyn LaneEvents>);

impl LaneReports {
    /// Reports into `events`.
    pub fn new(events: Arc<dyn LaneEvents>) -> Self {
        Self(events)
    }

    /// A lane was created for `key`: call it when the lane is installed,
    /// before any item of that lane can start.
    pub fn created(&self, key: u64, lane: LaneId) {
        self.0.created(key, lane);
    }

    /// The lane for `key` ended: call it once the router can no longer
    /// route to it.
    pub fn closed(&self, key: u64, lane: LaneId, exit: LaneExit) {
        self.0.closed(key, lane, exit);
    }
}

impl fmt::Debug for LaneReports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LaneReports")
    }
}

/// Everything a router is built from.
#[derive(Debug)]
pub struct LanesSetup {
    /// Spawn every lane task here (the world's paused runtime in
    /// simulation, a real multi-thread runtime in real mode). It is
    /// `tokio::runtime::Handle` itself (`lanesim_shim::task` re-exports it);
    /// in a build under a model checker it is the checker's scheduler.
    pub runtime: lanesim_shim::task::Handle,
    /// Reap a lane idle this long (`None`: never reap).
    pub idle_ttl: Option<Duration>,
    /// How items are admitted and panics treated.
    pub mode: Mode,
    /// What every admitted item runs.
    pub handler: Handler,
    /// Where to report lanes coming and going (if the target does).
    pub reports: LaneReports,
}

/// A dispatcher's counters, as a target with [`LanesCapabilities::stats`]
/// reports them just before the world drops it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaneStats {
    /// Lanes created so far.
    pub lanes_created: u64,
    /// Lanes alive now.
    pub lanes_live: u64,
    /// Items refused: only [`Mode::Reject`] refuses (an item admitted past
    /// the limit in [`Mode::Warn`] is not shed).
    pub items_shed: u64,
    /// Handler panics caught (none in [`Mode::Router`], which catches
    /// none).
    pub handler_panics: u64,
}

/// A built router. Dropping it is the world's "drop the router": every
/// lane must end once its work is done.
pub trait Lanes: Send + Sync {
    /// Routes `item` to its key's lane. `Ok(depth)`: admitted, where
    /// `depth` is the number of the lane's unhandled items before this one
    /// (the running one included). `Err(item)`: refused, the item handed
    /// back. `capacity` is the world's limit for this call (see [`Mode`]).
    ///
    /// # Errors
    /// The item back, when it was refused.
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item>;

    /// The counters (targets with [`LanesCapabilities::stats`]).
    fn stats(&self) -> Option<LaneStats> {
        None
    }
}

/// What a lanes target offers and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LanesCapabilities {
    /// The modes it can be built in; a scenario in another mode is not
    /// decided for this target.
    pub modes: &'static [ModeKind],
    /// It reports every lane's creation and end ([`LaneReports`]) and hands
    /// each item's lane to the handler ([`Handler::call_on`]).
    pub lifecycle: bool,
    /// [`Lanes::stats`] returns its counters.
    pub stats: bool,
    /// The values it does not take from the world.
    pub fixed: LanesFixed,
    /// Contracts it breaks knowingly, with the reason ([`crate::hazard`]):
    /// still checked; a run that breaks only these is reported as an
    /// accepted hazard, never as a pass. Usually empty.
    pub hazards: &'static [crate::hazard::Hazard],
    /// The marks and preemption points its code uses.
    pub sites: Sites,
}

/// Values a router has built in instead of taking them from the world
/// (`None`: it takes the world's). The lanes world runs such a target with
/// its own value, checks against it, and refuses, as not decided and with
/// the reason, a scenario written for values that exclude it (a fixed
/// 256-deep lane never overflows in a scenario written for 2 to 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LanesFixed {
    /// Its capacity: what it admits of one key (a lane's queue) or, in
    /// [`ModeKind::Reject`] and [`ModeKind::Warn`], its limit, whatever
    /// `route` is passed.
    pub capacity: Option<usize>,
    /// How long a lane waits idle before it reaps itself, whatever
    /// [`LanesSetup::idle_ttl`] says.
    pub idle_ttl: Option<Duration>,
}

/// A lanes router implementation.
pub trait LanesTarget: Send + Sync {
    /// What it offers and reports.
    fn capabilities(&self) -> LanesCapabilities;

    /// Builds a router for one run, inside the world's runtime.
    ///
    /// # Errors
    /// Why it could not be built (the run is reported as a crash of the
    /// target, with this text).
    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String>;
}
