//! Keyed ordering lanes (velo's ordered dispatch mode).
//!
//! A [`LaneRouter`] gives every key its own FIFO channel and one consumer
//! task, so items of one key are handled strictly in route order while
//! distinct keys run in parallel. [`OrderedDispatcher`] is what a service
//! calls: it adds panic isolation, an overflow policy and counters.
//!
//! # Model
//!
//! Lanes are created on first use and reap *themselves* after `idle_ttl`
//! without work. Soundness rests on three invariants, each owned by one piece:
//!
//! 1. **Admission and send happen under the map's shard write lock**
//!    ([`LaneRouter::route`]), the same lock `remove_if` takes to reap. A
//!    reaper therefore sees either `pending > 0` and declines, or an entry no
//!    producer is touching (L3, L5).
//! 2. **`pending` is decremented after the consumer future resolves**
//!    (the lane task), so a long handler over an empty queue keeps its lane
//!    alive and the capacity check counts it (L4, L5).
//! 3. **Removal is identity-checked and guaranteed on every exit** (the exit
//!    guard), so a dying lane never leaves a black hole and never evicts its
//!    successor (L2, L3).
//!
//! Together: the map holds at most one sender per key, and a lane whose entry
//! was removed provably has an empty queue and can never receive again.
//!
//! Start here: `router.rs` (route, admission), `task.rs` (the lane loop, the
//! reap, the exit guard), `queue.rs` (the lane's queue: written on the
//! shim's `Mutex`, so loom and shuttle check it as it runs in production;
//! the lane empties it a batch at a time and spends one unit of tokio's
//! coop budget per 128 items).

mod config;
mod dispatcher;
mod lane;
mod observer;
mod queue;
mod router;
mod task;

pub use config::{FixedHasher, LaneConfigError, LaneRouterConfig, RandomState, DEFAULT_SHARDS};
pub use dispatcher::{DispatchStats, DispatcherConfig, Handler, OrderedDispatcher, OverflowPolicy};
pub use lane::{Consumer, LaneConsumer};
pub use observer::{LaneExit, LaneId, LaneObserver};
pub use router::LaneRouter;
