//! Simulated worlds. Each runs the production code unchanged in a
//! deterministic single-threaded setting and returns its event log.
//!
//! - `lanes`: LaneRouter / OrderedDispatcher on a paused current-thread tokio
//!   runtime (no network needed; idle time is skipped, not ticked).
//! - `sender`: ConnectionManager + DistSender on a turmoil host, peers on
//!   other hosts (`peer`), faults injected by the simulation driver, the
//!   simulated TCP with a frame-start tap (`net`), frame tags (`tag`).
//! - `mesh`: N production nodes (manager, sender, link tables) on turmoil
//!   hosts, every one dialing and accepting; restarts, held partitions,
//!   half-open links, squatters, cross-dials, wedged and slow readers (a
//!   read gate in `net`), and what each node holds of unfinished frames,
//!   measured at that gate (`held`), and each node's descriptor table
//!   (`descriptors`: a socket past the limit it is told fails with
//!   `EMFILE`).
//! - `real_clock`: the clock the lanes and sender worlds read in real mode
//!   (`crate::real`), wall time divided by the scenario's time scale.
//!
//! Each world installs a [`WorldProbe`](crate::coverage::WorldProbe) on its
//! thread for the run: it counts coverage marks and answers the production
//! code's preemption points from the run's seed.
//!
//! A world whose budget runs out says where it was ([`Stuck`]): the step of
//! its run it was waiting in ([`EndStep`]) and, for the sender world, what
//! the code under test still held, read at that instant, before anything
//! is torn down. A liveness verdict is otherwise only "it did not finish".

pub mod descriptors;
pub mod handshake;
pub mod held;
pub mod lanes;
pub mod links;
pub mod mesh;
pub mod net;
pub mod peer;
pub mod real_clock;
pub mod sender;
pub mod tag;

use std::sync::Once;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::coverage::{Coverage, WorldProbe};
use crate::event::{Counts, Event, EventLog, Record};
use crate::fired::Preemption;
use crate::scenario::{Params, Scenario};
use crate::targets::Subject;

/// What a world run produced.
#[derive(Debug)]
pub struct WorldRun {
    /// The event log.
    pub records: Vec<Record>,
    /// `false` when the virtual-time budget ran out first.
    pub finished: bool,
    /// Virtual time the run took.
    pub elapsed: Duration,
    /// The marks the run reached, and how often.
    pub coverage: Coverage,
    /// Where the run was when its budget ran out (`None` when it finished).
    pub stuck: Option<Stuck>,
    /// The preemptions that fired, beside the log (not in it, nor in its
    /// hash: `fired`).
    pub preemptions: Vec<Preemption>,
    /// The lanes world: how it knew the router's lanes (reported, or
    /// inferred from its tasks: `lanes::infer`).
    pub lanes: Option<lanes::Inference>,
}

impl WorldRun {
    /// The one end every world's run has (simulated or real): the probe
    /// stops counting, and the log is taken up to its `RunEnd` (a report
    /// that slipped in after it, on another thread in real mode, is not
    /// part of the run; in simulation `RunEnd` is the last record anyway).
    /// What tearing the world down does afterwards is not counted either.
    pub(crate) fn ended(
        log: &EventLog,
        probe: &WorldProbe,
        finished: bool,
        elapsed: Duration,
        stuck: Option<Stuck>,
    ) -> Self {
        let coverage = probe.close();
        let preemptions = probe.fired().take();
        let mut records = log.take();
        if let Some(end) = records
            .iter()
            .position(|record| matches!(record.event, Event::RunEnd { .. }))
        {
            records.truncate(end + 1);
        }
        Self {
            records,
            finished,
            elapsed,
            coverage,
            stuck,
            preemptions,
            lanes: None,
        }
    }
}

/// Where a world was when its budget ran out, read at that instant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stuck {
    /// The step of the run the world was waiting in.
    pub step: EndStep,
    /// The sender's own counters (sender world): what it says it queued
    /// and disposed of, next to what the log says.
    pub stats: Option<Counts>,
    /// Per peer (by index), the connection its table slot held: its
    /// generation and whether it was down (sender world; `None` there
    /// when the table's lock could not be taken within a second, real
    /// mode).
    pub table: Option<Vec<Option<(u64, bool)>>>,
    /// Real mode: the log's ordering lock ([`Order`]) then. A step that
    /// never lets go of it stops every thread that logs, which reads in
    /// the log as everything going quiet at once.
    pub order: Option<OrderState>,
}

/// The ordering lock's state, read when a budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderState {
    /// Some thread's step held it (or a thread kept it past its step).
    pub held: bool,
    /// Threads waiting for it.
    pub waiting: usize,
}

/// The step of a world's run, named after what it waits for: where a run
/// that outlived its budget was stuck. Durations are in the log's units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum EndStep {
    /// Sender world: the first dial of `peer`, before the workload.
    SenderDialing {
        /// The peer being dialed.
        peer: u64,
    },
    /// Sender world: enqueueing the workload.
    SenderWorkload,
    /// Sender world: waiting for the sender's counters to account for
    /// every frame and control it queued; `looks` at them so far.
    SenderDrain {
        /// Times the counters were read.
        looks: u64,
    },
    /// Sender world: waiting for the fault timeline's last step, at `at`.
    SenderLastFault {
        /// When the last step is due.
        at: std::time::Duration,
    },
    /// Sender world: waiting for the log to stay quiet for `quiet`; each
    /// look that found new records started the wait again.
    SenderQuiet {
        /// The silence waited for (wall time in real mode, where it is
        /// not scaled).
        quiet: std::time::Duration,
        /// Waits so far.
        looks: u64,
    },
    /// Sender world: recording the table and counters at the end.
    SenderClosing,
    /// Lanes world: waiting for the producers to route every item.
    LanesProducing {
        /// Producers still routing.
        producing: u64,
    },
    /// Lanes world: waiting for the log to settle, before or after the
    /// router's drop.
    LanesSettling {
        /// Whether the router was dropped already.
        router_dropped: bool,
    },
    /// Mesh world: its workload clock still running.
    MeshClock,
}

/// Runs `scenario` with `params` (sampled from `seed`).
///
/// # Panics
/// Only on a bug in the testbed itself (the runner reports it as a crash).
#[must_use]
pub fn run(scenario: &Scenario, params: &Params, seed: u64, subject: &Subject) -> WorldRun {
    quiet_injected_panics();
    match params {
        Params::Lanes(p) => lanes::run(p, seed, scenario.budget(), subject),
        Params::Sender(p) => sender::run(p, seed, scenario.budget(), subject),
        Params::Mesh(p) => mesh::run(p, seed, scenario.budget(), subject),
    }
}

/// Steps a turmoil simulation until its clients are done (`true`) or its
/// virtual time passes `budget` (`false`), calling `due` before each step
/// with the time now, so the driver applies what is due at that instant.
/// The one loop the turmoil worlds share.
///
/// # Panics
/// When turmoil reports an error (a bug in the testbed: the runner reports
/// it as a crash).
pub(crate) fn drive(
    sim: &mut turmoil::Sim<'_>,
    budget: Duration,
    mut due: impl FnMut(&mut turmoil::Sim<'_>, Duration),
) -> bool {
    loop {
        let now = sim.elapsed();
        due(sim, now);
        match sim.step() {
            Ok(true) => return true,
            Ok(false) => {}
            Err(error) => panic!("turmoil: {error}"),
        }
        if sim.elapsed() > budget {
            return false;
        }
    }
}

thread_local! {
    /// When the lanes world running on this thread started (its clock is
    /// the paused runtime's).
    static LANES_START: std::cell::Cell<Option<tokio::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// A tracing timer that prints the running world's virtual time, so every
/// line of a replay, the production code's own included, is stamped with it.
pub struct VirtualTime;

impl tracing_subscriber::fmt::time::FormatTime for VirtualTime {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        let now = turmoil::sim_elapsed().or_else(|| {
            let start = LANES_START.with(std::cell::Cell::get)?;
            tokio::runtime::Handle::try_current().ok()?;
            Some(tokio::time::Instant::now().saturating_duration_since(start))
        });
        match now {
            Some(now) => write!(w, "{:>11.6}s", now.as_secs_f64()),
            None => write!(w, "{:>12}", "-"),
        }
    }
}

/// Marks the start of a lanes world on this thread (for [`VirtualTime`]).
pub(crate) fn lanes_started(start: Option<tokio::time::Instant>) {
    LANES_START.with(|cell| cell.set(start));
}

/// Text every injected panic starts with.
pub const INJECTED: &str = "lanesim: injected";

/// Injected panics are expected by the thousand: keep them off stderr, and
/// leave every other panic to the previous hook.
pub(crate) fn quiet_injected_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("");
            if !text.starts_with(INJECTED) {
                previous(info);
            }
        }));
    });
}

thread_local! {
    /// Whether this thread is inside [`Order::ordered`].
    static ORDERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Whether this thread kept its order past its step ([`Order::keep`]).
    static KEPT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The ordering seam of a world whose records come from many threads (real
/// mode): a step of the world and its record (an enqueue or a route and
/// its log, a hook and its log) run under one lock, so the log is a
/// faithful linearisation. In simulation one thread runs everything and
/// this changes nothing. Reentrant on one thread (a step may run hooks
/// inline that log too).
#[derive(Default)]
pub(crate) struct Order {
    /// The thread whose step is under way (or kept), and how many wait.
    owner: std::sync::Mutex<Owner>,
    free: std::sync::Condvar,
}

/// [`Order`]'s state under its lock.
#[derive(Default)]
struct Owner {
    /// The thread whose step is under way (or kept).
    thread: Option<std::thread::ThreadId>,
    /// Threads waiting for it: a release with none skips the condvar's
    /// notify, a futex system call every time (in simulation, where one
    /// thread runs everything, a tenth of a control flood's time).
    waiting: usize,
}

/// This thread's id, without `std::thread::current`'s handle clone.
fn this_thread() -> std::thread::ThreadId {
    thread_local! {
        static ME: std::thread::ThreadId = std::thread::current().id();
    }
    ME.with(|me| *me)
}

impl Order {
    fn owner(&self) -> std::sync::MutexGuard<'_, Owner> {
        self.owner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `f` as one step of the log. A thread that kept its order
    /// ([`Order::keep`]) runs its next step under it and then lets go.
    pub(crate) fn ordered<T>(&self, f: impl FnOnce() -> T) -> T {
        self.step(None, f)
    }

    /// As [`Order::ordered`], for a hook the target calls, perhaps under a
    /// lock of its own (a lane reporting its end while it holds its map):
    /// when another thread has held the order for `patience` while this one
    /// waits, `f` runs without it. That other thread's step is then a call
    /// into the target blocked on the lock this thread holds (a route
    /// waiting for the map), so the hook's event came first, which is where
    /// it is logged; waiting on would deadlock both (real mode on
    /// `examples/src/idle_lanes.rs`;
    /// `a_hook_under_the_targets_lock_does_not_deadlock_a_logged_route`).
    /// In simulation one thread runs everything and nothing waits.
    pub(crate) fn ordered_hook<T>(
        &self,
        patience: std::time::Duration,
        f: impl FnOnce() -> T,
    ) -> T {
        self.step(Some(patience), f)
    }

    /// Runs `f` once this thread owns the order; with `patience`, runs it
    /// without the order once another thread has held it that long.
    fn step<T>(&self, patience: Option<std::time::Duration>, f: impl FnOnce() -> T) -> T {
        struct Leave<'a>(&'a Order);
        impl Drop for Leave<'_> {
            fn drop(&mut self) {
                ORDERED.with(|inside| inside.set(false));
                if !KEPT.with(std::cell::Cell::get) {
                    self.0.release();
                }
            }
        }
        let me = this_thread();
        {
            let mut owner = self.owner();
            if owner.thread == Some(me) {
                if ORDERED.with(std::cell::Cell::get) {
                    drop(owner);
                    return f(); // nested
                }
                // Kept by an earlier step of this thread: this step comes
                // after whatever that step waited for.
                KEPT.with(|kept| kept.set(false));
            } else {
                let started = patience.map(|_| std::time::Instant::now()); // wall-clock: ok (real mode only: only there do two threads log)
                while owner.thread.is_some() {
                    owner.waiting += 1;
                    owner = match (patience, started) {
                        (Some(patience), Some(started)) => {
                            let left = patience.saturating_sub(started.elapsed());
                            if left.is_zero() {
                                owner.waiting -= 1;
                                drop(owner);
                                return f();
                            }
                            self.free
                                .wait_timeout(owner, left)
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .0
                        }
                        _ => self
                            .free
                            .wait(owner)
                            .unwrap_or_else(std::sync::PoisonError::into_inner),
                    };
                    owner.waiting -= 1;
                }
                owner.thread = Some(me);
                KEPT.with(|kept| kept.set(false));
            }
        }
        ORDERED.with(|inside| inside.set(true));
        let _leave = Leave(self);
        f()
    }

    /// Inside a step: keep the order past it, until this thread's next
    /// step or [`Order::let_go`] (real mode's lanes world: a handler's
    /// last record, kept until its lane has acknowledged the item, which
    /// the lane does on this thread before it runs anything else).
    pub(crate) fn keep(&self) {
        debug_assert!(ORDERED.with(std::cell::Cell::get));
        KEPT.with(|kept| kept.set(true));
    }

    /// Lets go of an order this thread kept (a worker about to park: the
    /// task whose step kept it has finished its poll).
    pub(crate) fn let_go(&self) {
        if KEPT.with(|kept| kept.replace(false)) && !ORDERED.with(std::cell::Cell::get) {
            self.release();
        }
    }

    /// The lock's state now (for a run that outlived its budget).
    pub(crate) fn state(&self) -> OrderState {
        let owner = self.owner();
        OrderState {
            held: owner.thread.is_some(),
            waiting: owner.waiting,
        }
    }

    fn release(&self) {
        let me = this_thread();
        let mut owner = self.owner();
        if owner.thread == Some(me) {
            owner.thread = None;
            let waiting = owner.waiting > 0;
            drop(owner);
            if waiting {
                self.free.notify_one();
            }
        }
    }
}
