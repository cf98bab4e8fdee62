//! The lanes world for real: the same workload and events on a real
//! multi-thread tokio runtime (two workers), the router spawning its lanes
//! on it as production does, wall time instead of paused time.

use std::sync::Arc;
use std::time::Duration;

use super::{Lateness, RealClock};
use crate::coverage::{self, WorldProbe};
use crate::event::EventLog;
use crate::scenario::LanesParams;
use crate::targets::Subject;
use crate::world::lanes::{main, Clock, Host};
use crate::world::{Order, WorldRun};

/// `params` with every duration the world acts on multiplied by `scale`:
/// gaps, pauses, handler durations, the idle TTL, the router drop (the
/// budget is scaled by the caller; preemption sleeps are not used in real
/// mode).
#[must_use]
pub fn scaled(params: &LanesParams, scale: f64) -> LanesParams {
    let by = |d: Duration| d.mul_f64(scale);
    let mut p = params.clone();
    p.gap = (by(p.gap.0), by(p.gap.1));
    p.pause = (by(p.pause.0), by(p.pause.1));
    p.handler = (by(p.handler.0), by(p.handler.1));
    p.idle_ttl = p.idle_ttl.map(by);
    p.drop_router_at = p.drop_router_at.map(by);
    p.preempt.sleep = (by(p.preempt.sleep.0), by(p.preempt.sleep.1));
    p
}

/// Runs one seed of the lanes world for real: the same workload and
/// events on a real multi-thread tokio runtime (two workers), the router
/// spawning its lanes on it (`RuntimeChoice::current()`, as production
/// does), wall time instead of paused time, the scenario's durations
/// multiplied by `scale`. The log's times are wall time divided by
/// `scale`. Preemption points answer as in simulation (their sleeps
/// scaled). Not deterministic: the seed fixes the parameters and the
/// workload's choices, real scheduling the rest.
#[must_use]
pub fn run_real(
    params: &LanesParams,
    scale: f64,
    seed: u64,
    budget: Duration,
    subject: &Subject,
) -> super::sender::RealRun {
    let p = scaled(params, scale);
    // Preemption points answer as in simulation (sleeps scaled), which is
    // what reaches `reap_declined` for real (see `real::sender::run_real`).
    let probe = Arc::new(WorldProbe::new(seed, p.preempt));
    let installed = coverage::install(&probe);
    let on_worker = Arc::clone(&probe);
    let order = Arc::new(Order::default());
    let parking = Arc::clone(&order);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("lanesim-real")
        .enable_all()
        .on_thread_start(move || std::mem::forget(coverage::install(&on_worker)))
        // A worker with nothing left to run has finished the poll that
        // kept the order (see `World::end`).
        .on_thread_park(move || parking.let_go())
        .build()
        .expect("a real tokio runtime");
    let lateness = Lateness::watch(&runtime, None);
    let log = EventLog::default();
    let clock = RealClock::starting(scale);
    let (stuck, elapsed, inference) = runtime.block_on(main(
        p,
        seed,
        budget.mul_f64(scale),
        subject,
        log.clone(),
        Arc::clone(&probe),
        Host::Real(Clock::Real(clock), order),
    ));
    let wall = clock.start.elapsed(); // wall-clock: ok (real mode)
    let finished = stuck.is_none();
    let mut world = WorldRun::ended(&log, &probe, finished, elapsed, stuck);
    world.lanes = Some(inference);
    let lateness = lateness.worst();
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(installed);
    super::sender::RealRun {
        world,
        wall,
        lateness,
    }
}
