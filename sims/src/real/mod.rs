//! Real mode: a scenario's seed run on the production path (a real tokio
//! multi-thread runtime, the sender on its own runtime, real loopback TCP,
//! faults made for real) and decided by the same checkers over the same
//! kind of event log. Not deterministic: the seed fixes the parameters and
//! the workload's choices; real scheduling decides the rest, so a real run
//! cannot be replayed. Real runs are serialized in a process: two at once
//! would share the cores their timing depends on.
//!
//! The sender and lanes worlds have a real mode; the mesh world has none
//! yet.
//!
//! Rooms: this file runs and judges a real seed ([`execute_real`]) and
//! compares it with its simulated twin ([`fidelity`]); [`clock`] is real
//! mode's clock and its measure of its own lateness (what widens the
//! checkers' slacks); [`sender`] and [`lanes`] drive those worlds on a real
//! runtime and real loopback TCP. The worlds' own code (`crate::world`) is
//! the same in both modes but for its clock.

pub mod clock;
pub mod lanes;
pub mod sender;

pub(crate) use clock::Lateness;
pub use clock::RealClock;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;
use std::time::Duration;

use crate::targets::Subject;

use std::collections::BTreeMap;

use crate::coverage::CoverMark;
use crate::run::{check_context, judge, stream, RunResult, Verdict};
use crate::scenario::{Params, Scenario, SeedRange};

/// One real run, decided.
#[derive(Debug)]
pub struct RealResult {
    /// The run's result; its times are wall time divided by `scale`.
    pub result: RunResult,
    /// Wall time the run took.
    pub wall: Duration,
    /// The scenario's `real_time_scale`.
    pub scale: f64,
    /// The worst wake-up lateness the run measured, in wall time; the
    /// checkers' grain was [`real_grain`] of it.
    pub lateness: Duration,
}

/// A seed real mode ran, or skipped and why.
#[derive(Debug)]
pub enum RealOutcome {
    /// It ran.
    Ran(Box<RealResult>),
    /// It could not be made faithfully for real.
    Skipped {
        /// The scenario's name.
        scenario: String,
        /// Its file.
        path: String,
        /// The seed.
        seed: u64,
        /// Why.
        reason: String,
    },
}

/// Why `scenario` has no real mode at all, if it has none (whatever the
/// seed).
#[must_use]
pub fn scenario_refusal(scenario: &Scenario) -> Option<String> {
    let world = scenario.file.world;
    matches!(world, crate::scenario::WorldKind::Mesh).then(|| {
        format!(
            "real mode covers the sender and lanes worlds only so far; the {} world has none yet",
            world.name()
        )
    })
}

/// The segment sizes Linux's `TCP_MAXSEG` takes: real mode sets the
/// scenario's `mss` on every socket.
pub const REAL_MSS: std::ops::RangeInclusive<u64> = 88..=32_767;

/// Why `scenario` is bad input for real mode (exit 2), where the simulated
/// worlds take it: an `mss` the kernel refuses as a segment size.
#[must_use]
pub fn bad_for_real(scenario: &Scenario) -> Option<String> {
    let mss = scenario.file.sender.as_ref()?.mss.as_ref()?;
    let (lo, hi) = mss.bounds();
    (!REAL_MSS.contains(&lo) || !REAL_MSS.contains(&hi)).then(|| {
        format!(
            "sender.mss: real mode sets it as TCP_MAXSEG, which takes {}..={} (got {lo}..={hi})",
            REAL_MSS.start(),
            REAL_MSS.end()
        )
    })
}

/// Why seed `seed` of `scenario` cannot run for real, if it cannot.
#[must_use]
pub fn refusal(scenario: &Scenario, seed: u64) -> Option<String> {
    if let Some(reason) = scenario_refusal(scenario) {
        return Some(reason);
    }
    match scenario.sample(seed) {
        Params::Sender(p) => sender::real_refusal(&p),
        Params::Lanes(_) => None,
        Params::Mesh(_) => Some("not a sender- or lanes-world scenario".into()),
    }
}

/// Real scheduling's least grain, in wall time: how late a real thread may
/// wake (a drain picking its next frame, a timer firing, a peer reading)
/// on a quiet machine. The checkers' slacks are multiples of the
/// simulation's tick, its grain; in real mode the grain is the largest of
/// the tick, this and the worst lateness the run itself measured
/// ([`RealRun::lateness`](crate::world::sender::RealRun)), divided by the
/// time scale (the log reads wall time / scale, so 5 ms of real lateness
/// reads as 50 ms at scale 0.1). The measured part is why a loaded CI
/// machine does not fail L5 on a reap a real timer fired late (once seen:
/// `lanes_reap_race` seed 1, a reap 2.3 ms past a 5 ms grain's slack).
pub const REAL_GRAIN: Duration = Duration::from_millis(5);

/// Real mode's grain for a run that measured `lateness`, in the log's
/// units. Twice the measure: a step's path on a loaded machine has two
/// waits the OS can stretch, the wake-up itself and the ordering lock
/// (`world::Order`) a descheduled thread may hold while it logs; each is
/// at most what the probe saw. (Measured: 1 L5 disagreement in 160 real
/// runs of `lanes_reap_race` with three busy loops on two cores at one
/// measure, a reap 14.5 ms after its lane went idle.)
#[must_use]
pub fn real_grain(lateness: Duration, scale: f64) -> Duration {
    REAL_GRAIN.max(lateness * 2).div_f64(scale)
}

/// The check context of a real run: the simulated one with its tick raised
/// to real mode's grain (what the checkers' slacks are made of) and the
/// grain as its race window.
fn real_context(params: &Params, grain: Duration, finished: bool) -> crate::check::CheckContext {
    let mut context = match params {
        // The sender's bounds are built from its tick: raise it first.
        Params::Sender(p) => {
            let mut p = p.clone();
            p.tick = p.tick.max(grain);
            check_context(&Params::Sender(p), finished)
        }
        _ => check_context(params, finished),
    };
    context.tick = context.tick.max(grain);
    context.race_window = grain;
    context
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The panics of the run's threads while a real run is under way (`Some`
/// then), but the ones the world injects: a production runtime's worker or
/// a blocking thread that panics is a crash of the run, though nothing
/// joins its thread (planted #9, a runtime dropped on a runtime thread,
/// printed a panic and passed). The run's threads are the ones named
/// `lanesim-real…` (the run's own, the world's runtime, the node's own
/// runtime as the world names it): a panic elsewhere in the process (a
/// test beside it) is not the run's. Pinned by
/// `a_panic_on_a_production_runtime_thread_is_a_crash_of_the_real_run`.
static PANICS: Mutex<Option<Vec<String>>> = Mutex::new(None);

/// The name every thread of a real run starts with.
const RUN_THREADS: &str = "lanesim-real";

/// Installs, once, the hook that keeps [`PANICS`] (after the world's,
/// which quiets injected panics; the hook chain prints the rest).
fn watch_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = stream::panic_message(info.payload());
            if !message.starts_with(crate::world::INJECTED) {
                let mut panics = PANICS
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let thread = std::thread::current();
                let name = thread.name().unwrap_or("");
                if let Some(panics) = panics.as_mut().filter(|_| name.starts_with(RUN_THREADS)) {
                    let at = info
                        .location()
                        .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
                    panics.push(format!("{name}{at}: {message}"));
                }
            }
            previous(info);
        }));
    });
}

/// Starts or ends the watch on panics ([`PANICS`]); ending it returns what
/// it saw.
fn panics_seen(watching: bool) -> Vec<String> {
    let mut panics = PANICS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let seen = panics.take().unwrap_or_default();
    if watching {
        *panics = Some(Vec::new());
    }
    seen
}

/// Runs seed `seed` of `scenario` for real, or says why it cannot.
#[must_use]
pub fn execute_real(scenario: &Scenario, seed: u64, subject: &Subject) -> RealOutcome {
    let skipped = |reason| RealOutcome::Skipped {
        scenario: scenario.name.clone(),
        path: scenario.path.display().to_string(),
        seed,
        reason,
    };
    if let Some(reason) = refusal(scenario, seed) {
        return skipped(reason);
    }
    let decidable = subject.decidable(scenario);
    if let Some(why) = decidable.refused.clone() {
        return skipped(format!("the target cannot run this scenario: {why}"));
    }
    let params = subject.sample(scenario, seed);
    let scale = scenario.real_time_scale();
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    crate::world::quiet_injected_panics();
    watch_panics();
    let _ = panics_seen(true);
    let budget = scenario.budget();
    let (owned, subject_owned) = (params.clone(), subject.clone());
    let (done, outcome) = std::sync::mpsc::channel();
    // The run goes on a thread of its own, watched: a run whose threads
    // all block (a target that reports a lifecycle event under its own
    // lock while a route the log orders waits for that lock) never reaches
    // its budget's timer, and must not hang the runner. Pinned by
    // `a_real_run_that_deadlocks_is_reported_not_waited_for`.
    let spawned = std::thread::Builder::new()
        .name("lanesim-real-run".into())
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| match &owned {
                Params::Sender(p) => sender::run_real(p, scale, seed, budget, &subject_owned),
                Params::Lanes(p) => lanes::run_real(p, scale, seed, budget, &subject_owned),
                Params::Mesh(_) => unreachable!("refused above"),
            }));
            let _ = done.send(outcome);
        });
    let watch = budget.mul_f64(scale).saturating_mul(2) + DEADLOCK_GRACE;
    let outcome = match spawned.map(|_| outcome.recv_timeout(watch)) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(_)) => Err(Box::new(format!(
            "the real run did not end within {watch:?} (twice its budget and {DEADLOCK_GRACE:?}): its threads are deadlocked, \
             the target's with each other or with the log's ordering (a lifecycle event reported under the target's own lock \
             while a route waits for that lock); the run's threads are abandoned"
        )) as Box<dyn std::any::Any + Send>),
        Err(error) => Err(Box::new(format!("cannot start the real run's thread: {error}"))
            as Box<dyn std::any::Any + Send>),
    };
    let panicked = panics_seen(false);
    let outcome = match (outcome, panicked.first()) {
        (Ok(_), Some(first)) => Err(Box::new(format!(
            "a thread panicked during the real run ({} panic(s)); the first: {first}",
            panicked.len()
        )) as Box<dyn std::any::Any + Send>),
        (outcome, _) => outcome,
    };
    let (result, wall, lateness) = match outcome {
        Ok(run) => {
            let grain = real_grain(run.lateness, scale);
            let mut context = real_context(&params, grain, run.world.finished);
            context.reported = subject.reported();
            (
                judge(scenario, seed, &params, run.world, &context, &decidable),
                run.wall,
                run.lateness,
            )
        }
        Err(payload) => {
            let mut result = RunResult::crashed(scenario, seed, stream::panic_message(&*payload));
            result.params = params.to_string();
            result.parameters = params.to_object();
            (result, Duration::ZERO, Duration::ZERO)
        }
    };
    RealOutcome::Ran(Box::new(RealResult {
        result,
        wall,
        scale,
        lateness,
    }))
}

/// How long past twice its budget a real run may go before it is taken
/// for deadlocked.
pub const DEADLOCK_GRACE: Duration = Duration::from_secs(10);

/// One seed run both ways.
#[derive(Debug)]
pub struct FidelitySeed {
    /// The seed.
    pub seed: u64,
    /// The simulated run's verdict.
    pub simulated: Verdict,
    /// The real run's verdict (`None`: skipped).
    pub real: Option<Verdict>,
    /// The contracts each side found broken, as `(simulated, real)`.
    pub broken: (Vec<String>, Vec<String>),
    /// Wall time of the simulated run.
    pub simulated_wall: Duration,
    /// Wall time of the real run.
    pub real_wall: Duration,
    /// The real run's worst wake-up lateness, in wall time.
    pub real_lateness: Duration,
    /// The real run's first violation with its evidence, as printed (a
    /// real run cannot be replayed, so a disagreement shows it here).
    pub real_evidence: Option<String>,
    /// What the real run left pending, if its budget ran out (shown with
    /// a disagreement, for the same reason).
    pub real_pending: Option<crate::run::pending::Pending>,
}

impl FidelitySeed {
    /// Whether the two verdicts differ (a skipped real run differs from
    /// nothing).
    #[must_use]
    pub fn disagrees(&self) -> bool {
        self.real.is_some_and(|real| real != self.simulated)
    }
}

/// One scenario run both ways over some seeds.
#[derive(Debug)]
pub struct Fidelity {
    /// The scenario's name.
    pub scenario: String,
    /// Its file.
    pub path: String,
    /// Per seed.
    pub seeds: Vec<FidelitySeed>,
    /// Seeds the real side skipped, and why (the first reason).
    pub skipped: Option<String>,
    /// Per mark, how many seeds reached it: `(simulated, real)`.
    pub marks: BTreeMap<CoverMark, (u64, u64)>,
}

impl Fidelity {
    /// Whether any seed ran both ways.
    #[must_use]
    pub fn compared(&self) -> bool {
        self.seeds.iter().any(|seed| seed.real.is_some())
    }
}

/// Runs each of `seeds` of `scenario` in simulation and for real.
#[must_use]
pub fn fidelity(scenario: &Scenario, seeds: SeedRange, subject: &Subject) -> Fidelity {
    let mut out = Fidelity {
        scenario: scenario.name.clone(),
        path: scenario.path.display().to_string(),
        seeds: Vec::new(),
        skipped: scenario_refusal(scenario),
        marks: BTreeMap::new(),
    };
    if out.skipped.is_some() {
        return out;
    }
    let contracts = |r: &RunResult| -> Vec<String> {
        r.violations
            .iter()
            .map(|v| v.contract.id().to_string())
            .collect()
    };
    for seed in seeds {
        let started = std::time::Instant::now(); // wall-clock: ok (benchmark)
        let simulated = crate::run::execute(scenario, seed, subject);
        let simulated_wall = started.elapsed();
        for mark in simulated.coverage.keys() {
            out.marks.entry(*mark).or_default().0 += 1;
        }
        let (real, real_wall, real_lateness, real_broken, real_evidence, real_pending) =
            match execute_real(scenario, seed, subject) {
                RealOutcome::Ran(ran) => {
                    for mark in ran.result.coverage.keys() {
                        out.marks.entry(*mark).or_default().1 += 1;
                    }
                    let evidence = ran
                        .result
                        .violations
                        .first()
                        .map(ToString::to_string)
                        .or_else(|| ran.result.crash.clone());
                    (
                        Some(ran.result.verdict),
                        ran.wall,
                        ran.lateness,
                        contracts(&ran.result),
                        evidence,
                        ran.result.pending.clone(),
                    )
                }
                RealOutcome::Skipped { reason, .. } => {
                    out.skipped.get_or_insert(reason);
                    (None, Duration::ZERO, Duration::ZERO, Vec::new(), None, None)
                }
            };
        out.seeds.push(FidelitySeed {
            seed,
            simulated: simulated.verdict,
            real,
            broken: (contracts(&simulated), real_broken),
            simulated_wall,
            real_wall,
            real_lateness,
            real_evidence,
            real_pending,
        });
    }
    out
}
