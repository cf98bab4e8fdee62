//! A failure real mode saw and the simulation did not, chased back into
//! the simulation.
//!
//! Model. A real run cannot be replayed: what decided it was the OS's
//! scheduling. When a seed fails for real and passes simulated ("real
//! only"), the likeliest simulated counterpart is the same parameters
//! under another schedule, so the chase keeps the seed's parameters and
//! turns scheduling exploration on (`shuffle`, `preempt_awaits`; held tasks
//! when the scenario's preemption points are off, so `preempt_for` is free
//! to give the holds a span), first on the seed itself, then on the seeds
//! after it (each a different schedule and workload draw of the same
//! parameters), up to [`Budget::runs`] runs in all. A run that fails the
//! same way ([`Expect`]: the contract real mode saw broken, or liveness)
//! is shrunk to an exact scenario file, whose replay line is the repro. Not
//! finding one is an answer too: the report says what was tried.
//!
//! Pinned by `a_real_only_failure_is_chased_into_a_simulated_repro`
//! (sims/tests/chase.rs).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::explore::Exploration;
use crate::hunt::shrink::{run_case, Budget as ShrinkBudget, Expect};
use crate::hunt::shrink_run;
use crate::run::{execute, RunResult};
use crate::scenario::{Params, Scenario};
use crate::targets::Subject;

/// Limits on one chase.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most simulated runs, the first (the seed as written) included.
    pub runs: u64,
    /// Most runs the shrink of a find may take.
    pub shrink_runs: u64,
    /// Most wall time the shrink may take.
    pub shrink_wall: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            runs: 400,
            shrink_runs: 600,
            shrink_wall: Duration::from_secs(20),
        }
    }
}

/// The exploration levels a chase cycles through, mildest first.
const LEVELS: [(f64, f64); 3] = [(0.2, 0.1), (0.5, 0.3), (1.0, 0.6)];

/// The span a held task waits when the chase may choose it.
const HOLD: (Duration, Duration) = (Duration::ZERO, Duration::from_millis(5));

/// One way the chase tried.
#[derive(Clone, Debug, PartialEq)]
pub struct Tried {
    /// What was run.
    pub what: String,
    /// How many runs.
    pub runs: u64,
}

/// A simulated run that fails as the real one did.
#[derive(Clone, Debug)]
pub struct Caught {
    /// The seed of the failing simulated run.
    pub seed: u64,
    /// Its exploration.
    pub explore: Exploration,
    /// Its first violation (or verdict).
    pub message: String,
    /// The shrunk exact scenario file, if the shrink could write it.
    pub file: Option<PathBuf>,
    /// The shrink's runs.
    pub shrink_runs: u64,
}

/// What a chase did and found.
#[derive(Clone, Debug)]
pub struct Chase {
    /// The scenario's name.
    pub scenario: String,
    /// The real run's seed.
    pub seed: u64,
    /// What it chased.
    pub expect: Expect,
    /// What it ran, in order.
    pub tried: Vec<Tried>,
    /// The simulated failure, if one was found.
    pub caught: Option<Caught>,
}

impl Chase {
    /// Runs in all.
    #[must_use]
    pub fn runs(&self) -> u64 {
        self.tried.iter().map(|t| t.runs).sum()
    }
}

/// `params` with scheduling exploration at `level`; holds allowed when the
/// preemption points are off (their span is then free).
fn exploring(params: &Params, (shuffle, awaits): (f64, f64)) -> Params {
    let mut params = params.clone();
    let set = |explore: &mut Exploration, hold: (Duration, Duration)| {
        *explore = Exploration {
            shuffle,
            awaits,
            hold,
        };
    };
    match &mut params {
        Params::Lanes(p) => {
            if p.preempt.chance == 0.0 {
                p.preempt.sleep = HOLD;
            }
            set(&mut p.explore, p.preempt.sleep);
        }
        Params::Sender(p) => {
            if p.preempt.chance == 0.0 {
                p.preempt.sleep = HOLD;
            }
            set(&mut p.explore, p.preempt.sleep);
        }
        Params::Mesh(p) => set(&mut p.explore, HOLD),
    }
    params
}

/// Chases `expect`, which real mode saw on `seed` of `scenario`, in the
/// simulation; a find is shrunk into `out`.
#[must_use]
pub fn chase(
    scenario: &Scenario,
    seed: u64,
    expect: Expect,
    subject: &Subject,
    budget: Budget,
    out: &Path,
) -> Chase {
    let mut chase = Chase {
        scenario: scenario.name.clone(),
        seed,
        expect,
        tried: Vec::new(),
        caught: None,
    };
    let params = subject.sample(scenario, seed);
    let horizon = scenario.budget();
    let first = execute(scenario, seed, subject);
    chase.tried.push(Tried {
        what: format!("seed {seed} as written"),
        runs: 1,
    });
    if expect.met_by(&first) {
        chase.caught = Some(caught(&params, seed, &first, subject, budget, horizon, out));
        return chase;
    }
    let per_level = budget.runs.saturating_sub(1) / LEVELS.len() as u64;
    for level in LEVELS {
        let candidate = exploring(&params, level);
        let mut runs = 0;
        for offset in 0..per_level {
            let s = seed.wrapping_add(offset);
            runs += 1;
            let Ok(result) = run_case(&candidate, s, horizon, subject) else {
                break;
            };
            if expect.met_by(&result) {
                chase.tried.push(Tried {
                    what: describe(level, seed, runs),
                    runs,
                });
                chase.caught = Some(caught(
                    &candidate, s, &result, subject, budget, horizon, out,
                ));
                return chase;
            }
        }
        chase.tried.push(Tried {
            what: describe(level, seed, runs),
            runs,
        });
    }
    chase
}

fn describe((shuffle, awaits): (f64, f64), seed: u64, runs: u64) -> String {
    format!(
        "its parameters with shuffle = {shuffle}, preempt_awaits = {awaits}, seeds {seed}..{}",
        seed.wrapping_add(runs)
    )
}

/// Shrinks the failing `result` into `out`.
fn caught(
    params: &Params,
    seed: u64,
    result: &RunResult,
    subject: &Subject,
    budget: Budget,
    horizon: Duration,
    out: &Path,
) -> Caught {
    let message = result
        .violations
        .first()
        .map_or_else(|| format!("{:?}", result.verdict), |v| v.message.clone());
    let explore = match params {
        Params::Lanes(p) => p.explore,
        Params::Sender(p) => p.explore,
        Params::Mesh(p) => p.explore,
    };
    let shrink = ShrinkBudget {
        runs: budget.shrink_runs,
        wall: budget.shrink_wall,
    };
    let (file, shrink_runs) = match shrink_run(params, seed, horizon, subject, shrink, out) {
        Ok(found) => match found.shrunk {
            Some((shrunk, path)) => (Some(path), shrunk.runs),
            None => (None, 0),
        },
        Err(_) => (None, 0),
    };
    Caught {
        seed,
        explore,
        message,
        file,
        shrink_runs,
    }
}
