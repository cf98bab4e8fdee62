//! Running scenarios: one seed ([`execute`]); sweeps of any size across
//! threads, streamed into per-scenario tallies identical to a serial run's
//! and split into shards ([`sweep`], on the engine in [`stream`]);
//! determinism audits ([`audit`]); the command every failure prints to
//! reproduce it ([`Repro`]); what a run that outlived its budget left
//! pending ([`pending`]); and what makes two failures the same failure
//! ([`signature`]).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use crate::targets::decide::{Decidable, NotDecided};
use crate::targets::Subject;

pub mod bench;
pub mod diverge;
pub mod pending;
mod repro;
pub mod rerun;
pub mod selftest;
pub mod signature;
pub mod stream;
pub mod sweep;

use crate::check::{self, CheckContext, Violation};
use crate::coverage::{CoverMark, Coverage, PreemptPolicy};
use crate::event::{log_hash, record_hash, Record};
use crate::explore::Exploration;
use crate::scenario::{Contract, FaultKind, Params, Policy, Reach, Scenario};
use crate::world;

pub use repro::Repro;
pub use rerun::{Profile, Rerun};

/// How one run ended.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every checked contract held.
    Pass,
    /// Only contracts the target accepts breaking broke
    /// (`lanesim_target::hazard`): not a pass, not a failure; reported
    /// with the target's reason. Exit code 0: the target's authors
    /// accepted it.
    Hazard,
    /// The virtual-time budget ran out with no contract broken.
    Liveness,
    /// A contract was broken.
    Violated,
    /// The testbed itself panicked (outside the code under test).
    Crash,
}

impl Verdict {
    /// The process exit code for this verdict.
    #[must_use]
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Pass | Self::Hazard => 0,
            Self::Violated => 1,
            Self::Liveness => 3,
            Self::Crash => 4,
        }
    }

    /// Lower-case name for reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Pass => "pass",
            Self::Hazard => "accepted hazard",
            Self::Liveness => "liveness",
            Self::Violated => "violated",
            Self::Crash => "crash",
        }
    }

    /// Whether the run failed: a contract the target promises broke, the
    /// run ran out of time, or the testbed crashed (a pass and an
    /// accepted hazard did not).
    #[must_use]
    pub fn is_failure(self) -> bool {
        match self {
            Self::Pass | Self::Hazard => false,
            Self::Liveness | Self::Violated | Self::Crash => true,
        }
    }
}

/// One seed's result.
#[derive(Debug)]
pub struct RunResult {
    /// The scenario's name.
    pub scenario: String,
    /// The scenario's file.
    pub path: String,
    /// The seed.
    pub seed: u64,
    /// The sampled parameters, as printed.
    pub params: String,
    /// The same, as an object (`Params::to_object`; null when none were
    /// sampled).
    pub parameters: serde_json::Value,
    /// The verdict.
    pub verdict: Verdict,
    /// Broken contracts.
    pub violations: Vec<Violation>,
    /// The crash message, if the testbed panicked.
    pub crash: Option<String>,
    /// Hash of the whole event log.
    pub hash: u64,
    /// The event log.
    pub records: Vec<Record>,
    /// The preemptions that fired, beside the log (not in it, nor in
    /// `hash`: `fired`).
    pub preemptions: Vec<crate::fired::Preemption>,
    /// Virtual time the run covered.
    pub elapsed: Duration,
    /// The marks the run reached.
    pub coverage: Coverage,
    /// What the run left pending when its budget ran out (`None` when it
    /// finished).
    pub pending: Option<pending::Pending>,
    /// The scenario's contracts the target cannot support (not checked,
    /// never counted as held).
    pub undecided: Vec<NotDecided<Contract>>,
    /// Breaks of contracts the target accepts breaking, with their
    /// reasons in `accepted` (never in `violations`).
    pub hazards: Vec<Violation>,
    /// The scenario's contracts the target accepts breaking, and why.
    pub accepted: Vec<NotDecided<Contract>>,
    /// Wall time the run took (for reports only: nothing simulated reads
    /// it; zero where nobody measured).
    pub wall: Duration,
}

/// The longest a preemption point, or the scheduling explorer's hold, can
/// keep a task under `policy` and `explore` (holds last as long as a point
/// sleeps), whose sleeps wake at the next timer `grain` (tokio's wheel
/// rounds deadlines up to the millisecond; turmoil steps in ticks).
fn preempt_max(policy: PreemptPolicy, explore: Exploration, grain: Duration) -> Duration {
    if policy.chance > 0.0 || explore.awaits > 0.0 {
        // A point's sleep, or an await's hold (`preempt_for`): the mesh
        // hunt's case 3250 of seed 2 was held past M7's half-open bound by
        // holds this once left out.
        policy.sleep.1.max(explore.hold.1) + grain
    } else {
        Duration::ZERO
    }
}

/// turmoil's default largest message latency (its `Builder`).
const TURMOIL_MAX_LATENCY: Duration = Duration::from_millis(100);
/// A frame's bytes beyond its payload: the header and the tag.
const FRAME_OVERHEAD: u64 = (lanesim_target::wire::HEADER_LEN + crate::world::tag::TAG_LEN) as u64;

/// What the checkers may assume about a run with `params`.
#[must_use]
pub fn check_context(params: &Params, finished: bool) -> CheckContext {
    match params {
        Params::Mesh(p) => CheckContext {
            finished,
            tick: p.tick,
            heartbeat: Some(p.heartbeat),
            frame_timeout: Some(p.frame_timeout),
            frame_budget: Some(crate::world::mesh::FRAME_BUDGET),
            connect_timeout: p.connect_timeout,
            redial: Some((p.redial_after, p.connect_timeout)),
            preempt_max: preempt_max(PreemptPolicy::default(), p.explore, p.tick),
            ..CheckContext::default()
        },
        Params::Lanes(p) => CheckContext {
            finished,
            idle_ttl: p.idle_ttl,
            panics_kill_lanes: p.policy == Policy::Raw,
            tick: Duration::from_millis(1),
            preempt_max: preempt_max(p.preempt, p.explore, Duration::from_millis(1)),
            ..CheckContext::default()
        },
        Params::Sender(p) => {
            let latency = p
                .faults
                .iter()
                .filter(|f| f.kind == FaultKind::Latency)
                .map(|f| f.lasting)
                .max()
                .unwrap_or_default()
                .max(TURMOIL_MAX_LATENCY);
            let slowest = p
                .faults
                .iter()
                .filter(|f| f.kind == FaultKind::Slow)
                .map(|f| f.lasting)
                .max()
                .unwrap_or_default();
            // A frame written whole sits behind at most `tcp_capacity`
            // segments (so frames) in the socket, each read one slow
            // interval apart, then crosses the link.
            let backlog = u32::try_from(p.tcp_capacity.saturating_add(2)).unwrap_or(u32::MAX);
            // A frame is `ceil(len / mss)` segments; a window of them
            // crosses per round, after the window already in the socket.
            let segments = (p.frame_bytes.1 + FRAME_OVERHEAD).div_ceil(p.mss.max(1));
            let rounds =
                u32::try_from(segments.div_ceil(p.tcp_capacity.max(1)) + 1).unwrap_or(u32::MAX);
            let preempt = preempt_max(p.preempt, p.explore, p.tick.max(Duration::from_millis(1)));
            CheckContext {
                finished,
                write_timeout: Some(p.write_timeout),
                tick: p.tick,
                preempt_max: preempt_max(
                    p.preempt,
                    p.explore,
                    p.tick.max(Duration::from_millis(1)),
                ),
                delivery_bound: latency * 2 + slowest.saturating_mul(backlog) + p.tick * 5,
                write_bound: (latency + p.tick * 2).saturating_mul(rounds) + preempt * 2,
                redial: p.redial_after.map(|after| (after, p.connect_timeout)),
                lane_capacity: Some((p.data_capacity, p.control_capacity)),
                connect_timeout: p.connect_timeout,
                ..CheckContext::default()
            }
        }
    }
}

impl RunResult {
    /// The result of a run whose testbed panicked with `message`.
    #[must_use]
    pub fn crashed(scenario: &Scenario, seed: u64, message: String) -> Self {
        Self {
            scenario: scenario.name.clone(),
            path: scenario.path.display().to_string(),
            seed,
            params: String::new(),
            parameters: serde_json::Value::Null,
            verdict: Verdict::Crash,
            violations: Vec::new(),
            crash: Some(message),
            hash: log_hash(&[]),
            records: Vec::new(),
            preemptions: Vec::new(),
            elapsed: Duration::ZERO,
            coverage: Coverage::new(),
            pending: None,
            undecided: Vec::new(),
            hazards: Vec::new(),
            accepted: Vec::new(),
            wall: Duration::ZERO,
        }
    }
}

/// Runs one seed of `scenario`.
#[must_use]
pub fn execute(scenario: &Scenario, seed: u64, subject: &Subject) -> RunResult {
    let params = subject.sample(scenario, seed);
    let decidable = subject.decidable(scenario);
    if let Some(why) = &decidable.refused {
        let mut result = RunResult::crashed(
            scenario,
            seed,
            format!("the target cannot run this scenario: {why}"),
        );
        result.params = params.to_string();
        result.parameters = params.to_object();
        return result;
    }
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        world::run(scenario, &params, seed, subject)
    }));
    let run = match outcome {
        Ok(run) => run,
        Err(payload) => {
            let mut result = RunResult::crashed(scenario, seed, stream::panic_message(&*payload));
            result.params = params.to_string();
            result.parameters = params.to_object();
            result.parameters = params.to_object();
            return result;
        }
    };
    let mut context = check_context(&params, run.finished);
    context.reported = subject.reported();
    judge(scenario, seed, &params, run, &context, &decidable)
}

/// Decides a world's run of `scenario` with `params` against its
/// contracts under `context` (simulated and real runs alike).
#[must_use]
pub fn judge(
    scenario: &Scenario,
    seed: u64,
    params: &Params,
    run: world::WorldRun,
    context: &CheckContext,
    decidable: &Decidable,
) -> RunResult {
    // A router that reports no lanes: its lanes as the world inferred them
    // from its tasks (`world::lanes::infer`), or, where that failed, L5
    // not decided for this run.
    let mut context = *context;
    let mut undecided = decidable.undecided();
    match &run.lanes {
        Some(world::lanes::Inference::Held) => context.reported.lifecycle = true,
        Some(world::lanes::Inference::Failed(why))
            if !context.reported.lifecycle
                && scenario.file.checks.contains(&Contract::L5)
                && decidable.decides(Contract::L5) =>
        {
            undecided.push(NotDecided {
                what: Contract::L5,
                why: why.clone(),
            });
        }
        Some(_) | None => {}
    }
    let decided: Vec<Contract> = scenario
        .file
        .checks
        .iter()
        .copied()
        .filter(|&contract| {
            decidable.decides(contract) && !undecided.iter().any(|n| n.what == contract)
        })
        .collect();
    let (hazards, violations): (Vec<_>, Vec<_>) = check::check(&decided, &run.records, &context)
        .into_iter()
        .partition(|v| decidable.accepts(v.contract));
    let mut coverage = run.coverage;
    decidable.show_roles(&mut coverage);
    // Whatever the verdict: a run cut short by its budget with a contract
    // broken was still waiting for something.
    let pending = (!run.finished).then(|| pending::pending(&run.records, run.stuck));
    let verdict = if !violations.is_empty() {
        Verdict::Violated
    } else if !run.finished {
        Verdict::Liveness
    } else if !hazards.is_empty() {
        Verdict::Hazard
    } else {
        Verdict::Pass
    };
    RunResult {
        scenario: scenario.name.clone(),
        path: scenario.path.display().to_string(),
        seed,
        params: params.to_string(),
        parameters: params.to_object(),
        verdict,
        violations,
        crash: None,
        hash: log_hash(&run.records),
        records: run.records,
        preemptions: run.preemptions,
        elapsed: run.elapsed,
        coverage,
        pending,
        undecided,
        hazards,
        accepted: decidable.accepted.clone(),
        wall: Duration::ZERO,
    }
}

/// How one mark fared over a scenario's sweep.
#[derive(Clone, Debug)]
pub struct MarkReach {
    /// The mark.
    pub mark: CoverMark,
    /// Seeds that reached it.
    pub seeds_hit: u64,
    /// What the scenario requires of it, if it lists it.
    pub required: Option<Reach>,
}

impl MarkReach {
    /// Whether a requirement was missed (`seeds` run in all).
    #[must_use]
    pub fn missed(&self, seeds: u64) -> bool {
        self.required
            .is_some_and(|reach| self.seeds_hit < reach.required(seeds))
    }
}

/// A scenario's coverage over one sweep.
#[derive(Clone, Debug)]
pub struct ScenarioReach {
    /// The scenario's name.
    pub scenario: String,
    /// Its file.
    pub path: String,
    /// Seeds run.
    pub seeds: u64,
    /// Every mark some seed reached or the scenario requires, in mark order.
    pub marks: Vec<MarkReach>,
    /// Whether requirements are judged: a sweep of one seed reports its
    /// marks but is not held to shares meant for a sweep.
    pub judged: bool,
    /// Contracts the scenario lists that no seed gave a chance to fail
    /// (see `scenario::marks::evidence`), with what was missing.
    pub vacuous: Vec<(Contract, String)>,
    /// Runs were planned and none ran (a time-boxed sweep that stopped
    /// before its first seed): nothing of the scenario was decided.
    pub starved: bool,
    /// Requirements the scenario lists that the target cannot decide, and
    /// why (a mark or role it does not report).
    pub undecided: Vec<NotDecided<CoverMark>>,
    /// The user accepts a scenario whose every requirement is undecided
    /// (`--accept-undecided`): it does not fall short for it.
    pub accept_undecided: bool,
}

impl ScenarioReach {
    /// The requirements missed (empty when not judged).
    #[must_use]
    pub fn missed(&self) -> Vec<&MarkReach> {
        if !self.judged {
            return Vec::new();
        }
        self.marks.iter().filter(|m| m.missed(self.seeds)).collect()
    }

    /// Whether the scenario lists reach requirements and the target could
    /// decide none of them: the sweep proved nothing about reach on its
    /// code (pinned by `a_sweep_that_decides_no_reach_requirement_falls_short`).
    #[must_use]
    pub fn decided_no_reach(&self) -> bool {
        self.judged && !self.undecided.is_empty() && self.marks.iter().all(|m| m.required.is_none())
    }

    /// Whether the sweep fell short: a required mark missed, a listed
    /// contract never given a chance to fail, or no listed requirement
    /// decided (unless the user accepts that).
    #[must_use]
    pub fn fell_short(&self) -> bool {
        self.starved
            || (self.judged && (!self.missed().is_empty() || !self.vacuous.is_empty()))
            || (self.decided_no_reach() && !self.accept_undecided)
    }
}

/// A seed whose two runs differed.
#[derive(Debug)]
pub struct Divergence {
    /// The scenario's name.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// Index of the first differing event.
    pub index: usize,
    /// The first run's event there (`None`: the log ended).
    pub first: Option<Record>,
    /// The second run's event there.
    pub second: Option<Record>,
    /// Whether two fresh processes, each running the seed once, agreed
    /// (`None`: not tried): `diverge` reads it.
    pub fresh: Option<bool>,
}

/// One scenario's audit: its seeds run twice and compared, or why the
/// target could not run it (then nothing was compared, and it is never
/// reported clean: pinned by `an_audit_of_a_scenario_the_target_cannot_run_is_not_clean`).
#[derive(Debug)]
pub struct Audited {
    /// The scenario's name.
    pub name: String,
    /// Seeds compared.
    pub seeds: u64,
    /// Why it was not run.
    pub not_run: Option<String>,
    /// The seeds whose two runs differed.
    pub divergences: Vec<Divergence>,
}

/// Audits `scenario` for `subject`: each seed run twice and compared, or,
/// when the target cannot run the scenario, nothing run and the reason.
#[must_use]
pub fn audit_scenario(
    scenario: &Scenario,
    seeds: crate::scenario::SeedRange,
    subject: &Subject,
) -> Audited {
    let not_run = subject.decidable(scenario).refused;
    let divergences = if not_run.is_some() {
        Vec::new()
    } else {
        audit(scenario, seeds, subject)
    };
    Audited {
        name: scenario.name.clone(),
        seeds: if not_run.is_some() { 0 } else { seeds.len() },
        not_run,
        divergences,
    }
}

/// Runs each seed twice and compares the event-log hashes; returns the
/// divergences (empty when deterministic) and how many runs were compared.
#[must_use]
pub fn audit(
    scenario: &Scenario,
    seeds: crate::scenario::SeedRange,
    subject: &Subject,
) -> Vec<Divergence> {
    let mut divergences = Vec::new();
    for seed in seeds {
        let a = execute(scenario, seed, subject);
        let b = execute(scenario, seed, subject);
        let Some(index) = first_divergence(&a.records, &b.records) else {
            continue;
        };
        divergences.push(Divergence {
            scenario: scenario.name.clone(),
            seed,
            index,
            first: a.records.get(index).cloned(),
            second: b.records.get(index).cloned(),
            fresh: None,
        });
    }
    divergences
}

/// Where two processes' streamed runs first differ: the index and both
/// lines (empty where one stream ended), or `None` when they are the same.
#[must_use]
pub fn first_line_difference(a: &[String], b: &[String]) -> Option<(usize, String, String)> {
    let index = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .or_else(|| (a.len() != b.len()).then(|| a.len().min(b.len())))?;
    Some((
        index,
        a.get(index).cloned().unwrap_or_default(),
        b.get(index).cloned().unwrap_or_default(),
    ))
}

/// Where two logs first differ, or `None` when they are the same.
#[must_use]
pub fn first_divergence(a: &[Record], b: &[Record]) -> Option<usize> {
    if log_hash(a) == log_hash(b) && a.len() == b.len() {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .position(|(x, y)| record_hash(x) != record_hash(y))
            .unwrap_or(a.len().min(b.len())),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::event::Event;
    use crate::targets::decide::NotDecided;

    /// A lanes log whose one handler call was never admitted: L2 broken.
    fn unadmitted(finished: bool) -> world::WorldRun {
        world::WorldRun {
            records: vec![Record {
                at: Duration::from_millis(1),
                host: Arc::from("lanes"),
                event: Event::HandleStart {
                    key: 0,
                    item: 7,
                    lane: 1,
                },
            }],
            finished,
            elapsed: Duration::from_millis(1),
            coverage: Coverage::default(),
            stuck: None,
            preemptions: Vec::new(),
            lanes: None,
        }
    }

    /// A run that broke only contracts its target accepts is an accepted
    /// hazard; one that also ran out of its budget is a liveness failure
    /// still: an accepted breach excuses nothing else.
    #[test]
    fn an_accepted_hazard_never_hides_a_run_that_did_not_finish() {
        let scenario = Scenario::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml"),
        )
        .unwrap();
        assert!(scenario.file.checks.contains(&Contract::L2));
        let params = scenario.sample(0);
        let accepting = Decidable {
            accepted: vec![NotDecided {
                what: Contract::L2,
                why: "known".into(),
            }],
            ..Decidable::default()
        };
        let judged = |finished: bool, decidable: &Decidable| {
            let context = check_context(&params, finished);
            judge(
                &scenario,
                0,
                &params,
                unadmitted(finished),
                &context,
                decidable,
            )
        };
        let finished = judged(true, &accepting);
        assert_eq!(finished.verdict, Verdict::Hazard);
        assert_eq!(finished.hazards.len(), 1);
        assert!(finished.violations.is_empty());
        let cut_short = judged(false, &accepting);
        assert_eq!(cut_short.verdict, Verdict::Liveness);
        assert_eq!(
            judged(true, &Decidable::default()).verdict,
            Verdict::Violated
        );
    }
}
