//! Shrinking a failing case to a small one that fails the same way.
//!
//! Model. A case is a run's parameters and seed. The shrinker removes
//! faults one at a time (proptest's vector shrinking, by hand: a fault stays
//! out when the case still fails without it), then walks the knobs of
//! `genes`, tries each at its least, and otherwise shrinks it with
//! proptest's own `BinarySearch` value tree:
//! `simplify` proposes a value halfway to the knob's least, `complicate`
//! backs off when the smaller case stops failing, until the search
//! converges. It repeats the whole pass while a pass still shrinks
//! something, within a budget of runs and wall time. "Fails the same way"
//! is [`Expect`]: the same contract violated, or the same liveness or crash
//! verdict; a candidate whose scenario file would not load counts as not
//! failing, so every step is a scenario `lanesim run` accepts.

use std::time::{Duration, Instant};

use crate::targets::Subject;
use proptest::num::u64::BinarySearch;
use proptest::strategy::ValueTree;

use super::genes::{fault_count, genes, with_gene, without_fault};
use crate::run::{execute, RunResult, Verdict};
use crate::scenario::{Contract, Params, Scenario};

/// What a failing case must keep doing while it shrinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Expect {
    /// Violate this contract.
    Violates(Contract),
    /// Outlive its virtual-time budget.
    Liveness,
    /// Crash the testbed.
    Crash,
}

impl Expect {
    /// What `result` failed with, if it failed: its first contract.
    #[must_use]
    pub fn of(result: &RunResult) -> Option<Self> {
        match result.verdict {
            Verdict::Pass | Verdict::Hazard => None,
            Verdict::Violated => result
                .violations
                .first()
                .map(|v| Self::Violates(v.contract)),
            Verdict::Liveness => Some(Self::Liveness),
            Verdict::Crash => Some(Self::Crash),
        }
    }

    /// Whether `result` failed this way.
    #[must_use]
    pub fn met_by(self, result: &RunResult) -> bool {
        match self {
            Self::Violates(contract) => result.violations.iter().any(|v| v.contract == contract),
            Self::Liveness => result.verdict == Verdict::Liveness,
            Self::Crash => result.verdict == Verdict::Crash,
        }
    }

    /// A file-name-friendly label: the contract id, `liveness` or `crash`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Violates(contract) => contract.id(),
            Self::Liveness => "liveness",
            Self::Crash => "crash",
        }
    }
}

/// The virtual-time budget of a generated case (a file's default), unless
/// its workload needs more ([`fitted_horizon`]).
pub const HORIZON: Duration = Duration::from_secs(120);

/// The most virtual time a generated case is given, however big its
/// workload: a run that really hangs costs turmoil's steps up to here.
pub const MAX_HORIZON: Duration = Duration::from_secs(600);

/// `horizon`, or longer when the case's workload cannot be done in it on a
/// healthy link: a sender case gets twice the time its frames take written
/// one after another (each within the checkers' write bound: a window of
/// segments a round, each round a latency and two ticks) after its last
/// fault ends, at most [`MAX_HORIZON`]. A hunt once reported "liveness"
/// for a case still delivering a frame every 0.8 s when 120 s ran out
/// (139 frames of 15 kB through a 5-segment window;
/// `a_big_slow_workload_gets_the_time_it_needs`).
#[must_use]
pub fn fitted_horizon(params: &Params, horizon: Duration) -> Duration {
    let Params::Sender(p) = params else {
        return horizon;
    };
    let per_frame = crate::run::check_context(params, true).write_bound;
    let frames = u32::try_from(p.data_frames.saturating_add(p.links)).unwrap_or(u32::MAX);
    let faults_end = p
        .faults
        .iter()
        .map(|f| f.at.saturating_add(f.lasting))
        .max()
        .unwrap_or_default();
    let needed = faults_end
        .saturating_add(p.connect_timeout)
        .saturating_add(per_frame.saturating_mul(frames))
        .saturating_mul(2);
    horizon.max(needed.min(MAX_HORIZON))
}

/// A case as a loadable scenario: its exact file, parsed back (so a case
/// the file format cannot say is refused like any bad file).
///
/// # Errors
/// The file's validation error.
pub fn scenario_of(
    params: &Params,
    seed: u64,
    horizon: Duration,
    description: &str,
) -> Result<Scenario, String> {
    let file = params.to_file(
        description.to_string(),
        seed,
        fitted_horizon(params, horizon),
    );
    let text = toml::to_string(&file).map_err(|e| e.to_string())?;
    Scenario::parse(std::path::Path::new("case.toml"), &text).map_err(|e| e.to_string())
}

/// Runs one case within `horizon` of virtual time.
///
/// # Errors
/// Why its file would not load.
pub fn run_case(
    params: &Params,
    seed: u64,
    horizon: Duration,
    subject: &Subject,
) -> Result<RunResult, String> {
    let scenario = scenario_of(params, seed, horizon, "a generated case")?;
    Ok(execute(&scenario, seed, subject))
}

/// Values tried below a count's converged least before giving up on it.
const STEP_DOWN: u64 = 6;

/// Whether a gene counts things (keys, items, peers, frames, capacities)
/// rather than measuring a time or a chance.
fn is_count(name: &str) -> bool {
    !(name.ends_with("_us") || name.ends_with("_ms") || name.ends_with("_ppm"))
}

/// Limits on one shrink.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Most runs.
    pub runs: u64,
    /// Most wall time.
    pub wall: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Self {
            runs: 3_000,
            wall: Duration::from_secs(60),
        }
    }
}

/// The result of a shrink.
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The smallest case found that still fails as expected.
    pub params: Params,
    /// Runs it took.
    pub runs: u64,
    /// Steps that made the case smaller.
    pub steps: u64,
    /// Wall time it took.
    pub wall: Duration,
    /// Whether the budget ran out before the shrink converged.
    pub exhausted: bool,
}

/// Shrinks `params` (which fails as `expect` on `seed` within `horizon` of
/// virtual time) within `budget`.
#[must_use]
pub fn shrink(
    params: &Params,
    seed: u64,
    horizon: Duration,
    expect: Expect,
    subject: &Subject,
    budget: Budget,
) -> Shrunk {
    let started = Instant::now(); // wall-clock: ok (a shrink's time budget, outside any run)
    let mut best = params.clone();
    let (mut runs, mut steps) = (0u64, 0u64);
    let mut exhausted = false;
    let fails = |candidate: &Params, runs: &mut u64| -> bool {
        *runs += 1;
        run_case(candidate, seed, horizon, subject).is_ok_and(|result| expect.met_by(&result))
    };
    let over = |runs: u64| runs >= budget.runs || started.elapsed() >= budget.wall;
    'passes: loop {
        let before = steps;
        // Faults first: a fault that is not needed goes.
        let mut index = 0;
        while index < fault_count(&best) {
            if over(runs) {
                exhausted = true;
                break 'passes;
            }
            let candidate = without_fault(&best, index);
            if fails(&candidate, &mut runs) {
                best = candidate;
                steps += 1;
            } else {
                index += 1;
            }
        }
        // Then each knob, by binary search toward its least.
        let count = genes(&best).len();
        for index in 0..count {
            let gene = genes(&best)[index];
            if gene.value <= gene.min {
                continue;
            }
            // The least value first: a knob that does not matter (a chance
            // that can be 0, a feature that can be off) goes in one run,
            // where the search would take a dozen.
            if over(runs) {
                exhausted = true;
                break 'passes;
            }
            let least = with_gene(&best, index, gene.min);
            if fails(&least, &mut runs) {
                best = least;
                steps += 1;
                continue;
            }
            let mut search = BinarySearch::new_above(gene.min, gene.value);
            'search: while search.simplify() {
                loop {
                    if over(runs) {
                        exhausted = true;
                        break 'passes;
                    }
                    let value = search.current();
                    // The knob's present value is known to fail.
                    if value == genes(&best)[index].value {
                        break;
                    }
                    let candidate = with_gene(&best, index, value);
                    if fails(&candidate, &mut runs) {
                        best = candidate;
                        steps += 1;
                        break;
                    }
                    // Converged: the least failing value is the knob's now.
                    if !search.complicate() {
                        break 'search;
                    }
                }
            }
            // A count's failing values are not an interval (a smaller case
            // draws a different run from the same seed), so below where
            // the search converged a few single steps are worth a run each.
            if is_count(gene.name) {
                let mut misses = 0;
                while misses < STEP_DOWN {
                    let value = genes(&best)[index].value;
                    if value <= gene.min {
                        break;
                    }
                    if over(runs) {
                        exhausted = true;
                        break 'passes;
                    }
                    let candidate =
                        with_gene(&best, index, value - 1 - misses.min(value - 1 - gene.min));
                    if fails(&candidate, &mut runs) {
                        best = candidate;
                        steps += 1;
                        misses = 0;
                    } else {
                        misses += 1;
                    }
                }
            }
        }
        if steps == before {
            break;
        }
    }
    Shrunk {
        params: best,
        runs,
        steps,
        wall: started.elapsed(),
        exhausted,
    }
}
