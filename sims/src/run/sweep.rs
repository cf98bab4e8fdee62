//! Sweeps at scale: runs drawn lazily, results folded into a [`Tally`] per
//! scenario as they finish, in bounded memory, optionally one shard of N,
//! optionally stopped at a wall-time budget; and [`merge`], which folds
//! shards' reports into the report of the whole sweep.
//!
//! Model: a sweep is the sequence of `(scenario, seed)` jobs, scenario by
//! scenario, seeds ascending; job `g` of it belongs to shard `g mod N`.
//! Nothing is kept per run except a failure (at most [`KEPT_FAILURES`] per
//! scenario, the lowest seeds; the rest are counted, by signature:
//! `run::signature`, a group per distinct failure), so memory does not
//! grow with the number of seeds (pinned by `sims/tests/memory.rs`, which
//! reads the process's peak RSS). Every part of a tally is a sum, an "any"
//! or the lowest seeds, so folding shards' tallies gives exactly the tally
//! of the unsharded sweep (pinned by
//! `the_union_of_shards_is_the_unsharded_sweep`).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::ControlFlow;
use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::signature::{self, Group, Signature};
use super::stream::{self, Feed};
use super::{execute, MarkReach, Repro, RunResult, ScenarioReach, Verdict};
use crate::coverage::CoverMark;
use crate::scenario::marks::evidence;
use crate::scenario::{Contract, Reach, Scenario, SeedRange};
use crate::targets::decide::{Decidable, NotDecided};
use crate::targets::Subject;

/// Failures kept in full per scenario (the lowest seeds); the rest are
/// counted. `--format jsonl` streams every one.
pub const KEPT_FAILURES: usize = 100;
/// The most shards a sweep may be split into.
pub const MAX_SHARDS: u64 = 100_000;
/// The most scenario files one sweep may hold (so a sweep's job count,
/// files times [`crate::scenario::MAX_SEEDS`], fits in a `u64`).
pub const MAX_FILES: usize = 10_000;

/// One shard of a sweep: `index` of `count` (`I/N`, `0 <= I < N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, from 0.
    pub index: u64,
    /// How many shards.
    pub count: u64,
}

impl Shard {
    /// The whole sweep.
    pub const ALL: Self = Self { index: 0, count: 1 };

    /// Whether job `g` of the sweep is this shard's.
    #[must_use]
    pub fn owns(self, g: u64) -> bool {
        g % self.count == self.index
    }

    /// How many of the jobs `start..start + len` are this shard's.
    #[must_use]
    pub fn share(self, start: u64, len: u64) -> u64 {
        // Jobs below `x` that are ours.
        let below = |x: u64| {
            if x > self.index {
                (x - self.index - 1) / self.count + 1
            } else {
                0
            }
        };
        below(start + len) - below(start)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let expected =
            || format!("expected I/N with 0 <= I < N <= {MAX_SHARDS} (e.g. 0/4), got \"{text}\"");
        let (i, n) = text.split_once('/').ok_or_else(expected)?;
        let index: u64 = i.trim().parse().map_err(|_| expected())?;
        let count: u64 = n.trim().parse().map_err(|_| expected())?;
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(expected());
        }
        Ok(Self { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A broken contract, as reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Broken {
    /// Which contract.
    pub contract: Contract,
    /// What happened.
    pub message: String,
    /// The events that prove it, printed.
    pub evidence: Vec<String>,
}

/// A failed run, as reported: everything but its event log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The scenario's name.
    pub scenario: String,
    /// Its file.
    pub path: String,
    /// The seed.
    pub seed: u64,
    /// How it ended.
    pub verdict: Verdict,
    /// The sampled parameters, as one line.
    pub params_line: String,
    /// The same, as an object keyed as a scenario file is.
    #[serde(default)]
    pub params: serde_json::Value,
    /// Broken contracts.
    pub violations: Vec<Broken>,
    /// The testbed's panic, if it crashed.
    pub crash: Option<String>,
    /// Virtual time covered, in ms.
    pub virtual_ms: u64,
    /// The event log's hash.
    pub hash: String,
    /// The command that reproduces it.
    pub repro: Repro,
    /// The command that writes its trace.
    #[serde(default)]
    pub trace: Repro,
    /// What it left pending when its budget ran out.
    #[serde(default)]
    pub pending: Option<super::pending::Pending>,
    /// What makes it the same failure as others (`None` for a pass).
    #[serde(default)]
    pub signature: Option<Signature>,
}

impl Failure {
    /// The report of `result`.
    #[must_use]
    pub fn of(result: &RunResult, subject: &Subject) -> Self {
        Self {
            scenario: result.scenario.clone(),
            path: result.path.clone(),
            seed: result.seed,
            verdict: result.verdict,
            params_line: result.params.clone(),
            params: result.parameters.clone(),
            violations: result
                .violations
                .iter()
                .map(|v| Broken {
                    contract: v.contract,
                    message: v.message.clone(),
                    evidence: v.evidence.iter().map(ToString::to_string).collect(),
                })
                .collect(),
            crash: result.crash.clone(),
            virtual_ms: u64::try_from(result.elapsed.as_millis()).unwrap_or(u64::MAX),
            hash: format!("{:016x}", result.hash),
            repro: Repro::replay(&result.path, result.seed, subject),
            trace: Repro::trace(&result.path, result.seed, subject),
            pending: result.pending.clone(),
            signature: Signature::of_sweep(result),
        }
    }
}

/// Runs per verdict.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdicts {
    /// Every contract held.
    pub pass: u64,
    /// Only contracts the target accepts breaking broke.
    #[serde(default)]
    pub hazard: u64,
    /// A contract broke.
    pub violated: u64,
    /// Out of virtual time.
    pub liveness: u64,
    /// The testbed panicked.
    pub crash: u64,
}

impl Verdicts {
    fn add(&mut self, verdict: Verdict) {
        *self.slot(verdict) += 1;
    }

    fn slot(&mut self, verdict: Verdict) -> &mut u64 {
        match verdict {
            Verdict::Pass => &mut self.pass,
            Verdict::Hazard => &mut self.hazard,
            Verdict::Violated => &mut self.violated,
            Verdict::Liveness => &mut self.liveness,
            Verdict::Crash => &mut self.crash,
        }
    }

    fn merge(&mut self, other: Self) {
        self.pass += other.pass;
        self.hazard += other.hazard;
        self.violated += other.violated;
        self.liveness += other.liveness;
        self.crash += other.crash;
    }

    /// Runs that failed (violated, liveness or crash): neither a pass
    /// nor an accepted hazard.
    #[must_use]
    pub fn failed(self) -> u64 {
        self.violated + self.liveness + self.crash
    }

    /// All runs.
    #[must_use]
    pub fn total(self) -> u64 {
        self.pass + self.hazard + self.violated + self.liveness + self.crash
    }

    /// The worst verdict any run had.
    #[must_use]
    pub fn worst(self) -> Verdict {
        [
            (self.crash, Verdict::Crash),
            (self.violated, Verdict::Violated),
            (self.liveness, Verdict::Liveness),
            (self.hazard, Verdict::Hazard),
        ]
        .into_iter()
        .find(|(n, _)| *n > 0)
        .map_or(Verdict::Pass, |(_, v)| v)
    }
}

/// A contract the target accepts breaking, and how often a sweep saw it
/// broken (`lanesim_target::hazard`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HazardSeen {
    /// The contract.
    pub contract: Contract,
    /// The target's reason for accepting it.
    pub why: String,
    /// Runs that broke it.
    pub runs: u64,
    /// The lowest seed that broke it, its first message and its repro
    /// line.
    pub first: Option<(u64, String, Repro)>,
}

/// Whether some run of a sweep gave a listed contract a chance to fail.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chance {
    /// The contract.
    pub contract: Contract,
    /// What a run must do to give it one.
    pub needs: String,
    /// Whether some run did.
    pub given: bool,
}

/// What a sweep learned about one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    /// The scenario's name.
    pub scenario: String,
    /// Its file.
    pub path: String,
    /// The seeds swept (all shards').
    pub seeds: SeedRange,
    /// Runs this report was to hold.
    pub planned: u64,
    /// Runs per verdict (their total is the runs done).
    pub verdicts: Verdicts,
    /// Seeds that reached each mark.
    pub marks: BTreeMap<CoverMark, u64>,
    /// The marks the scenario must reach.
    pub requires: Vec<Reach>,
    /// The contracts it lists that a run must do something to test.
    pub chances: Vec<Chance>,
    /// The failures of the lowest seeds, at most [`KEPT_FAILURES`].
    pub failures: Vec<Failure>,
    /// Every failure, by signature: how many, the lowest seed, its repro.
    #[serde(default)]
    pub groups: Vec<Group>,
    /// An order-free digest of every run's event-log hash.
    pub digest: u64,
    /// Wall time its runs took, summed.
    #[serde(skip)]
    pub wall: Wall,
    /// Why the target could not run this scenario at all (none of its
    /// seeds ran).
    #[serde(default)]
    pub refused: Option<String>,
    /// Listed contracts the target cannot support: not checked.
    #[serde(default)]
    pub undecided: Vec<NotDecided<Contract>>,
    /// Marks to reach that the target cannot report: not required.
    #[serde(default)]
    pub unreachable: Vec<NotDecided<CoverMark>>,
    /// Listed contracts the target accepts breaking, and how often runs
    /// broke them.
    #[serde(default)]
    pub hazards: Vec<HazardSeen>,
}

impl Tally {
    /// An empty tally of `scenario` over `seeds`, `planned` runs to come,
    /// of which the target decides `decidable`.
    #[must_use]
    pub fn new(scenario: &Scenario, seeds: SeedRange, planned: u64, decidable: &Decidable) -> Self {
        let requires: Vec<Reach> = scenario
            .reaches
            .iter()
            .filter(|r| decidable.reaches(r.mark))
            .copied()
            .collect();
        Self {
            scenario: scenario.name.clone(),
            path: scenario.path.display().to_string(),
            seeds,
            planned,
            verdicts: Verdicts::default(),
            marks: requires.iter().map(|r| (r.mark, 0)).collect(),
            requires,
            chances: scenario
                .file
                .checks
                .iter()
                .filter(|&&contract| decidable.decides(contract))
                .filter_map(|&contract| {
                    let (needs, _) = evidence(contract)?;
                    Some(Chance {
                        contract,
                        needs: needs.into(),
                        given: false,
                    })
                })
                .collect(),
            failures: Vec::new(),
            groups: Vec::new(),
            digest: 0,
            wall: Wall::default(),
            refused: decidable.refused.clone(),
            undecided: decidable.undecided(),
            unreachable: decidable.marks.clone(),
            hazards: decidable
                .accepted
                .iter()
                .map(|n| HazardSeen {
                    contract: n.what,
                    why: n.why.clone(),
                    runs: 0,
                    first: None,
                })
                .collect(),
        }
    }

    /// Runs done.
    #[must_use]
    pub fn ran(&self) -> u64 {
        self.verdicts.total()
    }

    /// Folds one run in.
    pub fn add(&mut self, result: &RunResult, subject: &Subject) {
        self.verdicts.add(result.verdict);
        // A contract one run could not decide (lanes it could not infer)
        // is not decided for the scenario: the first reason is kept.
        for not in &result.undecided {
            if !self.undecided.iter().any(|n| n.what == not.what) {
                self.undecided.push(NotDecided {
                    what: not.what,
                    why: format!("{} (seed {})", not.why, result.seed),
                });
            }
        }
        self.wall.0 += result.wall;
        for mark in result.coverage.keys() {
            *self.marks.entry(*mark).or_default() += 1;
        }
        for chance in &mut self.chances {
            if let Some((_, marks)) = evidence(chance.contract) {
                chance.given |= marks.iter().any(|m| result.coverage.contains_key(m));
            }
        }
        if let Some(signature) = Signature::of_sweep(result) {
            signature::add_run(&mut self.groups, signature, result.seed, || {
                (
                    signature::first_message(result),
                    Repro::replay(&result.path, result.seed, subject),
                )
            });
        }
        for seen in &mut self.hazards {
            if let Some(broke) = result.hazards.iter().find(|v| v.contract == seen.contract) {
                seen.runs += 1;
                if seen
                    .first
                    .as_ref()
                    .is_none_or(|(seed, ..)| result.seed < *seed)
                {
                    seen.first = Some((
                        result.seed,
                        broke.message.clone(),
                        Repro::replay(&result.path, result.seed, subject),
                    ));
                }
            }
        }
        if result.verdict.is_failure() && self.failures.len() < KEPT_FAILURES {
            self.failures.push(Failure::of(result, subject));
        }
        self.digest = self
            .digest
            .wrapping_add(run_digest(result.seed, result.hash));
    }

    /// Folds another shard's tally of the same scenario in.
    fn merge(&mut self, other: Self) {
        self.planned += other.planned;
        self.verdicts.merge(other.verdicts);
        for (mark, hits) in other.marks {
            *self.marks.entry(mark).or_default() += hits;
        }
        for (mine, theirs) in self.chances.iter_mut().zip(other.chances) {
            mine.given |= theirs.given;
        }
        self.failures.extend(other.failures);
        self.failures.sort_by_key(|f| f.seed);
        self.failures.truncate(KEPT_FAILURES);
        for group in other.groups {
            signature::merge(&mut self.groups, group);
        }
        for (mine, theirs) in self.hazards.iter_mut().zip(other.hazards) {
            mine.runs += theirs.runs;
            if let Some(first) = theirs.first {
                if mine.first.as_ref().is_none_or(|(seed, ..)| first.0 < *seed) {
                    mine.first = Some(first);
                }
            }
        }
        for not in other.undecided {
            if !self.undecided.iter().any(|n| n.what == not.what) {
                self.undecided.push(not);
            }
        }
        self.digest = self.digest.wrapping_add(other.digest);
        self.wall.0 += other.wall.0;
    }

    /// The coverage judgement: every mark reached, against what is required.
    #[must_use]
    pub fn reach(&self) -> ScenarioReach {
        ScenarioReach {
            scenario: self.scenario.clone(),
            path: self.path.clone(),
            seeds: self.ran(),
            marks: self
                .marks
                .iter()
                .map(|(mark, hits)| MarkReach {
                    mark: *mark,
                    seeds_hit: *hits,
                    required: self.requires.iter().find(|r| r.mark == *mark).copied(),
                })
                .collect(),
            judged: self.ran() > 1 && self.refused.is_none(),
            vacuous: self
                .chances
                .iter()
                .filter(|c| !c.given)
                .map(|c| (c.contract, c.needs.clone()))
                .collect(),
            starved: self.planned > 0 && self.ran() == 0 && self.refused.is_none(),
            undecided: self.unreachable.clone(),
            accept_undecided: false,
        }
    }
}

/// One run's part of a tally's digest: a mix of its seed and log hash, so
/// the digest, a wrapping sum, is the same whatever order runs fold in.
fn run_digest(seed: u64, hash: u64) -> u64 {
    let mut x = hash ^ seed.rotate_left(32) ^ 0x9e37_79b9_7f4a_7c15;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Wall time, measured where a sweep ran: reported (the summary's runs/s,
/// JUnit's `time`), never part of what the sweep found. It is neither
/// written to the JSON report (merged shards must equal the unsharded
/// report byte for byte) nor compared: two sweeps that found the same are
/// equal however long each took.
#[derive(Clone, Copy, Debug, Default)]
pub struct Wall(pub Duration);

impl PartialEq for Wall {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What a sweep (or a shard of one, or a merge of shards) found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepReport {
    /// Per scenario, in sweep order.
    pub scenarios: Vec<Tally>,
    /// The shard this report is of; `None` for a whole sweep.
    pub shard: Option<Shard>,
    /// Whether `--for` ran out before every planned run was done.
    pub stopped: bool,
    /// The planted bug, if any.
    pub planted: Option<String>,
    /// A scenario whose reach requirements the target decides none of is
    /// accepted, not short (`--accept-undecided`).
    #[serde(default)]
    pub accept_undecided: bool,
    /// Wall time the sweep took, where it ran (zero after a merge).
    #[serde(skip)]
    pub wall: Wall,
}

impl SweepReport {
    /// Runs done.
    #[must_use]
    pub fn ran(&self) -> u64 {
        self.scenarios.iter().map(Tally::ran).sum()
    }

    /// Runs planned.
    #[must_use]
    pub fn planned(&self) -> u64 {
        self.scenarios.iter().map(|t| t.planned).sum()
    }

    /// Runs per verdict, over every scenario.
    #[must_use]
    pub fn verdicts(&self) -> Verdicts {
        let mut all = Verdicts::default();
        for tally in &self.scenarios {
            all.merge(tally.verdicts);
        }
        all
    }

    /// Per scenario, its coverage judgement.
    #[must_use]
    pub fn reaches(&self) -> Vec<ScenarioReach> {
        self.scenarios
            .iter()
            .map(|tally| ScenarioReach {
                accept_undecided: self.accept_undecided,
                ..tally.reach()
            })
            .collect()
    }

    /// Reach requirements listed and not decided for the target, over
    /// every scenario that ran.
    #[must_use]
    pub fn undecided_reaches(&self) -> usize {
        self.scenarios
            .iter()
            .filter(|t| t.refused.is_none())
            .map(|t| t.unreachable.len())
            .sum()
    }
}

/// What to sweep and how.
pub struct Plan<'a> {
    /// The scenarios, in sweep order.
    pub scenarios: &'a [Scenario],
    /// The seeds of every scenario; `None`: each scenario's own.
    pub seeds: Option<SeedRange>,
    /// Which shard of the sweep to run.
    pub shard: Shard,
    /// Stop drawing runs after this much wall time.
    pub wall: Option<Duration>,
    /// Threads.
    pub jobs: usize,
    /// What the runs test.
    pub subject: Subject,
    /// Accept a scenario whose reach requirements the target decides
    /// none of (`--accept-undecided`).
    pub accept_undecided: bool,
}

impl Plan<'_> {
    /// The seeds `scenario` is swept over.
    #[must_use]
    pub fn seeds_of(&self, scenario: &Scenario) -> SeedRange {
        self.seeds.unwrap_or_else(|| scenario.default_seeds())
    }
}

/// Told of a sweep's progress, on the thread that folds.
pub trait Watch {
    /// Run `seed` of `scenario` is about to start (its seed and parameters
    /// may be printed before its first step).
    fn starting(&mut self, scenario: &Scenario, seed: u64) {
        let _ = (scenario, seed);
    }

    /// A run was folded into `tally`.
    fn folded(&mut self, result: &RunResult, tally: &Tally) {
        let _ = (result, tally);
    }
}

/// A watch that watches nothing.
pub struct Unwatched;

impl Watch for Unwatched {}

/// Runs `plan`, telling `watch` as it goes.
pub fn sweep(plan: &Plan<'_>, watch: &mut dyn Watch) -> SweepReport {
    let mut start = 0u64;
    let mut tallies = Vec::with_capacity(plan.scenarios.len());
    let mut spans = Vec::with_capacity(plan.scenarios.len());
    for scenario in plan.scenarios {
        let seeds = plan.seeds_of(scenario);
        let decidable = plan.subject.decidable(scenario);
        // A scenario the target cannot run takes no jobs (in every shard
        // alike: the subject decides it, not the shard).
        let len = if decidable.refused.is_some() {
            0
        } else {
            seeds.len()
        };
        tallies.push(Tally::new(
            scenario,
            seeds,
            plan.shard.share(start, len),
            &decidable,
        ));
        spans.push((start, seeds, len));
        start += len;
    }
    let mut feed = SweepFeed {
        plan,
        cursors: spans.iter().map(|(start, _, _)| *start).collect(),
        turn: 0,
        spans,
        cursor: 0,
        tallies,
        watch,
        started: Instant::now(), // wall-clock: ok (the sweep's --for budget, outside any run)
        stopped: false,
    };
    let lag = u64::try_from(plan.jobs.max(1) * 4).unwrap_or(u64::MAX);
    stream::drive(&mut feed, plan.jobs, lag, |&(scenario, _, seed)| {
        let started = Instant::now(); // wall-clock: ok (reported, never simulated)
        let mut result = execute(scenario, seed, &plan.subject);
        result.wall = started.elapsed();
        result.records = Vec::new();
        result.preemptions = Vec::new();
        result
    });
    // The budget may run out just as the last run is drawn: only runs left
    // undone make the sweep a stopped one.
    let stopped = feed.stopped && feed.tallies.iter().any(|t| t.ran() < t.planned);
    SweepReport {
        wall: Wall(feed.started.elapsed()),
        scenarios: feed.tallies,
        shard: (plan.shard != Shard::ALL).then_some(plan.shard),
        stopped,
        planted: plan
            .subject
            .planted()
            .selected()
            .map(|bug| bug.name().to_string()),
        accept_undecided: plan.accept_undecided,
    }
}

/// The sweep as a [`Feed`]: jobs are `(scenario index, seed)`.
struct SweepFeed<'p, 'w> {
    plan: &'p Plan<'p>,
    /// Per scenario, its first job's index in the sweep, its seeds, and
    /// how many of them run (none for a scenario the target cannot run).
    spans: Vec<(u64, SeedRange, u64)>,
    /// The next job of the sweep to consider.
    cursor: u64,
    /// A time-boxed sweep's per-scenario cursors (the next job of each
    /// scenario to consider), and whose turn it is.
    cursors: Vec<u64>,
    turn: usize,
    tallies: Vec<Tally>,
    watch: &'w mut dyn Watch,
    started: Instant,
    /// Whether `--for` ran out while drawing.
    stopped: bool,
}

impl SweepFeed<'_, '_> {
    /// The next job to run: in sweep order, or for a time-boxed sweep
    /// (`--for`), one seed of each scenario in turn, so a budget that runs
    /// out leaves every scenario some seeds instead of the last ones none
    /// (`a_time_boxed_sweep_gives_every_scenario_seeds`). Either way the
    /// jobs are the same, and so is which shard owns each: only their order
    /// differs.
    fn next_job(&mut self) -> Option<(usize, u64)> {
        if self.plan.wall.is_none() {
            return self.next_in_order();
        }
        let shard = self.plan.shard;
        for _ in 0..self.spans.len() {
            let index = self.turn;
            self.turn = (self.turn + 1) % self.spans.len();
            let (start, seeds, len) = self.spans[index];
            let cursor = self.cursors[index];
            let offset = (shard.index + shard.count - cursor % shard.count) % shard.count;
            let Some(g) = cursor.checked_add(offset).filter(|g| *g < start + len) else {
                self.cursors[index] = start + len;
                continue;
            };
            self.cursors[index] = g + 1;
            return Some((index, seeds.first() + (g - start)));
        }
        None
    }

    /// The next job at or after the cursor that is this shard's.
    fn next_in_order(&mut self) -> Option<(usize, u64)> {
        let shard = self.plan.shard;
        // The first index >= cursor in this shard.
        let offset = (shard.index + shard.count - self.cursor % shard.count) % shard.count;
        let g = self.cursor.checked_add(offset)?;
        let index = self
            .spans
            .partition_point(|(start, _, len)| start + len <= g);
        let (start, seeds, _) = *self.spans.get(index)?;
        self.cursor = g + 1;
        Some((index, seeds.first() + (g - start)))
    }
}

impl<'p> Feed for SweepFeed<'p, '_> {
    type Job = (&'p Scenario, usize, u64);
    type Done = RunResult;

    fn draw(&mut self, _: u64) -> Option<Self::Job> {
        if self
            .plan
            .wall
            .is_some_and(|wall| self.started.elapsed() >= wall)
        {
            self.stopped = true;
            return None;
        }
        let (index, seed) = self.next_job()?;
        let scenario = &self.plan.scenarios[index];
        self.watch.starting(scenario, seed);
        Some((scenario, index, seed))
    }

    fn fold(&mut self, _: u64, (_, index, _): Self::Job, result: RunResult) -> ControlFlow<()> {
        let tally = &mut self.tallies[index];
        tally.add(&result, &self.plan.subject);
        self.watch.folded(&result, tally);
        ControlFlow::Continue(())
    }

    fn lost(&(scenario, _, seed): &Self::Job, panic: String) -> RunResult {
        RunResult::crashed(scenario, seed, panic)
    }
}

/// Checks that a shard report's counts are ones its plan allows: each
/// scenario's planned runs are this shard's share of its seeds (none for a
/// scenario the target refused), its runs (summed without overflow) are at
/// most those, and no more seeds reached a mark than ran.
fn check_counts(name: &str, report: &SweepReport, shard: Shard) -> Result<(), String> {
    let mut start = 0u64;
    for tally in &report.scenarios {
        let len = if tally.refused.is_some() {
            0
        } else {
            tally.seeds.len()
        };
        let planned = shard.share(start, len);
        start = start.saturating_add(len);
        if tally.planned != planned {
            return Err(format!(
                "{name}: {} plans {} run(s), but shard {shard} of its {} seed(s) has {planned}",
                tally.scenario, tally.planned, tally.seeds
            ));
        }
        let v = tally.verdicts;
        let ran = [v.pass, v.violated, v.liveness, v.crash]
            .into_iter()
            .try_fold(0u64, u64::checked_add);
        match ran {
            Some(ran) if ran <= planned => {
                if let Some((mark, hits)) = tally.marks.iter().find(|(_, hits)| **hits > ran) {
                    return Err(format!(
                        "{name}: {} has {hits} seed(s) reaching {mark} of {ran} run",
                        tally.scenario
                    ));
                }
            }
            _ => {
                return Err(format!(
                    "{name}: {} claims more runs than its {planned} planned",
                    tally.scenario
                ));
            }
        }
    }
    Ok(())
}

/// Folds the reports of every shard of one sweep (each named by where it
/// came from) into the report of the whole sweep.
///
/// # Errors
/// When the reports are not every shard of one sweep exactly once (a
/// missing or repeated shard, shards of different sweeps, scenarios or
/// planted bugs).
pub fn merge(shards: Vec<(String, SweepReport)>) -> Result<SweepReport, String> {
    let Some((first_name, first)) = shards.first() else {
        return Err("no shard reports to merge".into());
    };
    let first_name = first_name.clone();
    let count = first.shard.map_or(1, |s| s.count);
    if shards.len() as u64 != count {
        return Err(format!(
            "{first_name} is one of {count} shard(s), but {} report(s) were given",
            shards.len()
        ));
    }
    let mut seen = vec![false; shards.len()];
    let planted = first.planted.clone();
    let mut merged: Option<SweepReport> = None;
    for (name, report) in shards {
        let shard = report.shard.unwrap_or(Shard::ALL);
        if shard.count != count {
            return Err(format!(
                "{name} is shard {shard}, of a different split than {first_name} ({count} shards)"
            ));
        }
        if shard.index >= shard.count {
            return Err(format!(
                "{name} claims to be shard {shard}: a shard's index is below its count"
            ));
        }
        check_counts(&name, &report, shard)?;
        let slot = &mut seen[usize::try_from(shard.index).unwrap_or(usize::MAX)];
        if std::mem::replace(slot, true) {
            return Err(format!("{name}: shard {shard} was given twice"));
        }
        if report.planted != planted {
            return Err(format!(
                "{name} planted {:?}, {first_name} planted {planted:?}: not one sweep",
                report.planted
            ));
        }
        let Some(whole) = &mut merged else {
            merged = Some(SweepReport {
                shard: None,
                ..report
            });
            continue;
        };
        let same =
            whole.scenarios.len() == report.scenarios.len()
                && whole.scenarios.iter().zip(&report.scenarios).all(|(a, b)| {
                    a.path == b.path && a.seeds == b.seeds && a.requires == b.requires
                });
        if !same {
            return Err(format!(
                "{name} swept other scenarios or seeds than {first_name}: not one sweep"
            ));
        }
        whole.stopped |= report.stopped;
        whole.accept_undecided &= report.accept_undecided;
        for (mine, theirs) in whole.scenarios.iter_mut().zip(report.scenarios) {
            mine.merge(theirs);
        }
    }
    merged.ok_or_else(|| "no shard reports to merge".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every failure outranks an accepted hazard, which outranks a pass;
    /// a hazard is never counted as failed.
    #[test]
    fn the_worst_verdict_puts_every_failure_above_an_accepted_hazard() {
        let of = |verdicts: &[Verdict]| {
            let mut tally = Verdicts::default();
            for &v in verdicts {
                tally.add(v);
            }
            tally
        };
        for failure in [Verdict::Liveness, Verdict::Violated, Verdict::Crash] {
            for order in [[Verdict::Hazard, failure], [failure, Verdict::Hazard]] {
                let tally = of(&order);
                assert_eq!(tally.worst(), failure, "{order:?}");
                assert_eq!(tally.failed(), 1, "{order:?}");
            }
        }
        let hazards = of(&[Verdict::Pass, Verdict::Hazard, Verdict::Hazard]);
        assert_eq!(hazards.worst(), Verdict::Hazard);
        assert_eq!(hazards.failed(), 0);
        assert_eq!(hazards.total(), 3);
    }

    /// A tally names the lowest seed that broke an accepted contract, in
    /// whatever order the runs arrive.
    #[test]
    fn a_tally_names_the_lowest_seed_that_broke_an_accepted_contract() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml");
        let scenario = Scenario::load(&path).unwrap();
        let accepting = Decidable {
            accepted: vec![crate::targets::decide::NotDecided {
                what: Contract::L2,
                why: "known".into(),
            }],
            ..Decidable::default()
        };
        let subject = Subject::default();
        let mut tally = Tally::new(&scenario, scenario.default_seeds(), 3, &accepting);
        for seed in [5, 2, 7] {
            let mut result = RunResult::crashed(&scenario, seed, String::new());
            result.verdict = Verdict::Hazard;
            result.hazards = vec![crate::check::Violation {
                contract: Contract::L2,
                message: format!("seed {seed}"),
                evidence: Vec::new(),
            }];
            tally.add(&result, &subject);
        }
        let seen = &tally.hazards[0];
        assert_eq!(seen.runs, 3);
        let (seed, message, _) = seen.first.as_ref().unwrap();
        assert_eq!((*seed, message.as_str()), (2, "seed 2"));
    }

    /// A scenario a time-boxed sweep stopped before: planned runs, none
    /// run. It fell short (exit 5, a `NOT REACHED` line), not a pass.
    #[test]
    fn a_scenario_that_ran_no_seed_is_not_a_pass() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml");
        let scenario = Scenario::load(&path).unwrap();
        let seeds = scenario.default_seeds();
        let tally = Tally::new(&scenario, seeds, seeds.len(), &Decidable::default());
        let report = SweepReport {
            scenarios: vec![tally],
            shard: None,
            stopped: true,
            planted: None,
            accept_undecided: false,
            wall: Wall::default(),
        };
        let reach = &report.reaches()[0];
        assert!(reach.starved && reach.fell_short(), "{reach:?}");
        assert_eq!(
            crate::report::Exit::of_sweep(&report),
            crate::report::Exit::NotReached
        );
        let text = crate::report::sweep::human(&report, crate::report::Shown::default());
        assert!(
            text.contains("NOT REACHED: lanes_order ran none of its seeds"),
            "{text}"
        );
    }

    /// A sweep in which every run passed, of a scenario whose reach
    /// requirements the target decides none of: it proved nothing about
    /// reach, so it falls short (exit 5, a `NOT DECIDED` line), unless the
    /// user accepts it; either way the summary counts the undecided.
    #[test]
    fn a_sweep_that_decides_no_reach_requirement_falls_short() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml");
        let scenario = Scenario::load(&path).unwrap();
        let seeds = scenario.default_seeds();
        let none = Decidable {
            marks: scenario
                .reaches
                .iter()
                .map(|r| crate::targets::decide::NotDecided {
                    what: r.mark,
                    why: "not reported".into(),
                })
                .collect(),
            ..Decidable::default()
        };
        let mut some = none.clone();
        some.marks.pop();
        let report = |decidable: &Decidable, accept_undecided: bool| {
            let mut tally = Tally::new(&scenario, seeds, 4, decidable);
            for _ in 0..4 {
                tally.verdicts.add(Verdict::Pass);
            }
            // Whatever the marks: the decided requirement is the one left.
            for mark in tally.requires.iter().map(|r| r.mark).collect::<Vec<_>>() {
                tally.marks.insert(mark, 4);
            }
            SweepReport {
                scenarios: vec![tally],
                shard: None,
                stopped: false,
                planted: None,
                accept_undecided,
                wall: Wall::default(),
            }
        };
        let listed = scenario.reaches.len();
        let short = report(&none, false);
        let reach = &short.reaches()[0];
        assert!(reach.decided_no_reach() && reach.fell_short(), "{reach:?}");
        assert_eq!(
            crate::report::Exit::of_sweep(&short),
            crate::report::Exit::NotReached
        );
        let text = crate::report::sweep::human(&short, crate::report::Shown::default());
        assert!(text.contains("NOT DECIDED: lanes_order lists"), "{text}");
        assert!(
            text.contains(&format!("{listed} reach requirement(s) not decided")),
            "{text}"
        );
        let accepted = report(&none, true);
        assert!(!accepted.reaches()[0].fell_short());
        assert_eq!(
            crate::report::Exit::of_sweep(&accepted),
            crate::report::Exit::Pass
        );
        let text = crate::report::sweep::human(&accepted, crate::report::Shown::default());
        assert!(
            !text.contains("NOT DECIDED") && text.contains("reach requirement(s) not decided"),
            "{text}"
        );
        // One requirement decided (and met): not short, still counted.
        let partly = report(&some, false);
        assert!(!partly.reaches()[0].fell_short());
        assert_eq!(partly.undecided_reaches(), listed - 1);
        let junit = crate::report::sweep::junit(&partly).unwrap();
        assert!(junit.contains("lanes_order reaches"), "{junit}");
    }

    #[test]
    fn every_job_of_a_sweep_is_in_exactly_one_shard() {
        for count in [1u64, 2, 3, 7] {
            for (start, len) in [(0u64, 10u64), (5, 1), (13, 29), (0, 1)] {
                let shares: u64 = (0..count)
                    .map(|index| Shard { index, count }.share(start, len))
                    .sum();
                assert_eq!(shares, len, "{count} shards of {start}+{len}");
                for index in 0..count {
                    let shard = Shard { index, count };
                    let owned = (start..start + len).filter(|g| shard.owns(*g)).count() as u64;
                    assert_eq!(shard.share(start, len), owned);
                }
            }
        }
    }

    #[test]
    fn shards_parse_within_their_bounds() {
        assert_eq!("2/5".parse::<Shard>(), Ok(Shard { index: 2, count: 5 }));
        for bad in ["5/5", "0/0", "1", "a/b", "-1/3", "0/100001", "3/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad} was accepted");
        }
    }
}
