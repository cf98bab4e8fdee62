//! The one switch point between real primitives and model-checked ones.
//!
//! Code that names its maps, channels, locks, atomics, time and detached
//! tasks through this crate compiles unchanged on both sides of the switch
//! (the rule tokio follows with its own `src/loom/`):
//!
//! - normally, the real crates, re-exported or wrapped at no cost: std's
//!   `Arc`, atomics and a non-poisoning `Mutex`, dashmap (as
//!   [`map::ShardedMap`]), flume's channels, `tokio::time`;
//! - under `--cfg loom` or `--cfg shuttle`, the model checker's: its mutex
//!   and atomics, a sharded map of checker mutexes, a checker-visible
//!   channel (bounded or not), modelled time (under shuttle a timer fires
//!   where the checker chooses, so a race against an idle timer is explored
//!   on both sides; under loom, which has no choices, the most eager timer:
//!   [`time`]), and `model::spawn` for a detached task the checker
//!   schedules.
//!
//! lanesim's own router and sender are written against it (their crate's
//! `src/shim/` adds what is theirs: the transport seam, runtimes, entropy,
//! the testbed's probe). A production build has no loom or shuttle in its
//! dependency graph (CI checks it).
//!
//! Start here: [`sync`] for shared state, [`map`] for a keyed table whose
//! entry and removal run under one lock, [`chan`] for queues, [`task`] for
//! spawning, [`time`].
//!
//! | module | normally | under a model checker |
//! |---|---|---|
//! | [`std_sync`] | std's `Mutex`, `RwLock`, `Condvar`, atomics, `Arc`, `Weak` | the checker's locks and atomics under std's names and signatures |
//! | `select!` | tokio's | tokio's, its branch order the checker's choice (with lanesim's tokio) |
//! | [`sync`] | std `Arc`/`Weak`/atomics, a non-poisoning `Mutex`, tokio's `Mutex` and `Notify` | the checker's |
//! | [`dashmap`] | dashmap's `DashMap`, `Entry`, `Ref`, `RefMut` | shards of checker mutexes, same names and methods (a subset), fixed hash |
//! | [`map`] | dashmap with a caller-chosen hasher and shard count | shards of checker mutexes |
//! | [`chan`] | flume's channels, bounded and unbounded | one checker mutex around a queue |
//! | [`task`] | tokio's `spawn`, `yield_now`, `JoinHandle`, runtime `Handle` | a task the checker schedules; a dropped handle detaches it |
//! | [`time`] | `tokio::time` | a clock that never moves; timers fire where shuttle chooses (eagerly under loom) |
//! | [`explore`] | answers "no checker in this build" | runs a body under shuttle's PCT or random scheduler, judged after each execution |
//! | `model` | absent | spawn a detached task, yield |

pub mod chan;
pub mod dashmap;
pub mod explore;
pub mod map;
#[cfg(any(loom, shuttle))]
pub mod model;
pub mod std_sync;
pub mod sync;
pub mod task;
pub mod time;

/// tokio's `select!`. With lanesim's tokio (its `[patch.crates-io]` line)
/// and under the model checker ([`explore`]), an un-`biased` one takes its
/// branch order from the checker's choices: both orders are explored, and
/// replayed. Elsewhere it is tokio's as it is.
pub use tokio::select;
