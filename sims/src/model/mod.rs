//! The model world: a lanes target's own code run under a model checker
//! (shuttle), so a race between threads with no await in it is found, and
//! replayed, by seed.
//!
//! Model. Each workload ([`workload`]) is a few producers routing one or two
//! keys into the target's router, built on the checker's scheduler; its
//! lanes, its locks, its channels and its timers are the checker's when the
//! target takes them from `lanesim_target::shim` (the "port by `use`
//! lines" of docs/your-implementation.md). The checker runs the workload
//! again and again, each time in another interleaving of every task's
//! steps, a timer firing wherever it chooses ([`lanesim_target::shim::explore`]);
//! after each execution the log ([`world`]) is decided by the lanes world's
//! own checkers (`check::lanes`). The first execution that breaks a
//! contract is reported with its evidence and the command that replays it:
//! `(strategy, seed, executions)`, since a seeded checker's execution `k`
//! is the same every time the same plan reaches it.
//!
//! What is decided. L1 (per-key order), L2 (exactly once: nothing lost,
//! nothing twice), L3 (the lane an item was admitted to handles it; one
//! live lane per key), L4 (capacity and the depth `route` reports) for
//! every target; L5 (no lane reaped holding work, every lane ends after the
//! drop) for a target that reports its lanes' lifecycle. Time does not move
//! in a model, so L5's timing clauses and L6 are the simulated worlds' to
//! decide, never this one's.
//!
//! Build. The checker exists only in a build with `--cfg shuttle`
//! (`lanesim_target::shim::explore::available`); `lanesim model` in any other build
//! rebuilds itself so, in a target directory of its own, and runs there
//! (`cli::model`). A production build has no checker in it.

mod order;
pub mod reach;
pub mod sender;
pub mod workload;
mod world;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::lanes::{LanesCapabilities, ModeKind};
use lanesim_target::shim::explore::{explore, Broke, Plan, Strategy, Unavailable};

use crate::check::{lanes as lane_checks, CheckContext, Reported, Violation};
use crate::event::Record;
use crate::scenario::Contract;
use crate::targets::decide::NotDecided;
use crate::targets::Subject;
use workload::{Admit, LanesShape, Shape, Workload};

/// What one execution leaves for the judge, whichever world ran it.
pub(crate) trait Left: Send + Sync {
    /// Its log.
    fn take_log(&self) -> Vec<Record>;
    /// Why it could not run as planned (the target could not be built or
    /// started, or its `route` panicked), if it could not.
    fn take_crash(&self) -> Option<String>;
}

/// The contracts the lanes workloads decide, when the target reports its
/// lanes' lifecycle.
pub const CONTRACTS: [Contract; 5] = [
    Contract::L1,
    Contract::L2,
    Contract::L3,
    Contract::L4,
    Contract::L5,
];

/// What the lanes workloads decide of a router, and what they do not.
#[must_use]
pub fn decided(caps: &LanesCapabilities) -> (Vec<Contract>, Vec<NotDecided<Contract>>) {
    let mut decided: Vec<Contract> = CONTRACTS.to_vec();
    let mut not = Vec::new();
    if !caps.lifecycle {
        decided.retain(|c| *c != Contract::L5);
        not.push(NotDecided {
            what: Contract::L5,
            why: "reaping is seen only in the lane lifecycle, which the target does not report (LanesCapabilities::lifecycle); the model world infers no lanes".into(),
        });
    }
    not.push(NotDecided {
        what: Contract::L6,
        why: "time does not move in a model: stalls and the timing clauses of L5 are decided by the simulated worlds".into(),
    });
    (decided, not)
}

/// Why the lanes workload `workload` cannot run on a router with `caps`,
/// if it cannot.
#[must_use]
pub fn refusal(workload: &LanesShape, caps: &LanesCapabilities) -> Option<String> {
    let (mode, name) = match workload.admit {
        Admit::Router | Admit::Capacity(_) => (ModeKind::Router, "router"),
        Admit::Reject(_) => (ModeKind::Reject, "reject"),
    };
    if !caps.modes.contains(&mode) {
        return Some(format!("the target's lanes have no `{name}` mode"));
    }
    let wants = match workload.admit {
        Admit::Router => None,
        Admit::Capacity(c) | Admit::Reject(c) => Some(c),
    };
    if let (Some(wants), Some(fixed)) = (wants, caps.fixed.capacity) {
        if wants != fixed {
            return Some(format!(
                "the workload is written for a capacity of {wants}; the target's is fixed at {fixed}"
            ));
        }
    }
    None
}

/// How one workload was explored.
#[derive(Debug)]
pub struct WorkloadRun {
    /// The workload.
    pub workload: &'static Workload,
    /// The exploration's plan.
    pub plan: Plan,
    /// What came of it.
    pub ran: Ran,
}

impl WorkloadRun {
    /// It ran to its end without a find, and reached a required state in
    /// less than its share of executions.
    #[must_use]
    pub fn fell_short(&self) -> bool {
        matches!(&self.ran, Ran::Explored { found: None, reaches, .. } if reaches.iter().any(reach::ReachTally::fell_short))
    }
}

/// What came of a workload.
#[derive(Debug)]
pub enum Ran {
    /// The target cannot run it, and why.
    NotDecided(String),
    /// It was explored.
    Explored {
        /// Executions run.
        executions: usize,
        /// The most scheduling steps one took.
        max_steps_seen: usize,
        /// Wall time.
        elapsed: Duration,
        /// The first broken execution.
        found: Option<Box<ModelFind>>,
        /// The workload's required states, as its executions reached them.
        reaches: Vec<reach::ReachTally>,
    },
}

/// The first execution of a workload that broke something.
#[derive(Debug)]
pub struct ModelFind {
    /// Its index: the plan limited to `execution + 1` executions replays it.
    pub execution: usize,
    /// Scheduling steps it took.
    pub steps: usize,
    /// What broke.
    pub broke: ModelBreak,
    /// Its log.
    pub records: Vec<Record>,
}

/// What broke in an execution.
#[derive(Debug)]
pub enum ModelBreak {
    /// Contracts, with their evidence.
    Violated(Vec<Violation>),
    /// The target could not run the workload (not built, or `route`
    /// panicked).
    Crashed(String),
    /// The checker failed the execution: every task blocked (a deadlock: a
    /// lane or producer waits for ever), the step bound (a task that never
    /// stops), or a panic outside any task.
    Checker(String),
}

/// What the judge leaves.
#[derive(Default)]
struct Verdicts {
    /// The last judged execution's violations and log, when it broke.
    found: Option<(ModelBreak, Vec<Record>)>,
    /// Executions judged, and how many reached each state.
    judged: usize,
    reached: std::collections::BTreeMap<reach::Reach, usize>,
}

/// What a panic nobody injected, caught in one of the target's tasks,
/// says about the target (`count` such panics in the execution).
fn task_panic(first: &str, count: usize) -> String {
    let hint = if first.contains("no reactor running") || first.contains("Tokio 1.x runtime") {
        ": the target used tokio's runtime directly (tokio::time, tokio::spawn, a tokio Handle), which is not there under the model checker; take them from lanesim_target::shim (docs/your-implementation.md, \"Port by use lines\")"
    } else {
        ""
    };
    format!("a task of the target panicked ({count} in this execution): {first}{hint}")
}

/// The check context of the lanes workloads for a router with `caps`.
fn context(caps: &LanesCapabilities, workload: &LanesShape) -> CheckContext {
    CheckContext {
        finished: true,
        // No clock: the TTL's timing clauses are not decided.
        idle_ttl: None,
        panics_kill_lanes: matches!(workload.admit, Admit::Router | Admit::Capacity(_)),
        tick: Duration::from_millis(1),
        late_acks: true,
        reported: Reported {
            lifecycle: caps.lifecycle,
            lane_stats: false,
            ..Reported::default()
        },
        ..CheckContext::default()
    }
}

/// Decides an execution's log.
type Check = Box<dyn Fn(&[Record]) -> Vec<Violation> + Send + Sync>;

/// How one workload is run and judged on one target.
struct Setup {
    /// The contracts decided.
    decided: BTreeSet<Contract>,
    /// Lifecycle reports: the lanes states only they show are decided.
    lifecycle: bool,
    /// Decides an execution's log.
    check: Check,
}

/// How `workload` runs on `subject`, or why it cannot.
fn setup(subject: &Subject, workload: &'static Workload) -> Result<Setup, String> {
    match &workload.shape {
        Shape::Lanes(lanes) => {
            let caps = subject
                .lanes()
                .map(lanesim_target::lanes::LanesTarget::capabilities)
                .ok_or("the target has no lanes router")?;
            if let Some(why) = refusal(lanes, &caps) {
                return Err(why);
            }
            let context = context(&caps, lanes);
            let overlap = lanes.overlap;
            Ok(Setup {
                decided: decided(&caps).0.into_iter().collect(),
                lifecycle: caps.lifecycle,
                check: Box::new(move |records| {
                    if overlap {
                        crate::check::overlap::check(records)
                    } else {
                        lane_checks::check(records, &context)
                    }
                }),
            })
        }
        Shape::Sender(shape) => {
            let caps = sender::capabilities(subject).ok_or(
                "the target has no sender over lanesim's connection layer (Targets::sender); a node with a connection layer of its own is not modelled: its sockets and handshake have no model here",
            )?;
            if let Some(why) = sender::refusal(shape, &caps) {
                return Err(why);
            }
            let context = sender::context(&caps, shape);
            Ok(Setup {
                decided: sender::decided(&caps).0.into_iter().collect(),
                lifecycle: false,
                check: Box::new(move |records| crate::check::sender::check(records, &context)),
            })
        }
    }
}

/// One execution's body for `workload`.
fn body(subject: &Subject, workload: &'static Workload, slot: &Mutex<Option<Arc<dyn Left>>>) {
    match &workload.shape {
        Shape::Lanes(lanes) => world::body(subject, lanes, slot),
        Shape::Sender(shape) => sender::world::body(subject, shape, slot),
    }
}

/// Explores `workload` on `subject` under `plan`.
///
/// # Errors
/// [`Unavailable`] in a build without a model checker.
pub fn explore_workload(
    subject: &Subject,
    workload: &'static Workload,
    plan: Plan,
) -> Result<WorkloadRun, Unavailable> {
    let setup = match setup(subject, workload) {
        Ok(setup) => setup,
        Err(why) => {
            return Ok(WorkloadRun {
                workload,
                plan,
                ran: Ran::NotDecided(why),
            })
        }
    };
    let Setup {
        decided,
        lifecycle,
        check,
    } = setup;
    let slot: Arc<Mutex<Option<Arc<dyn Left>>>> = Arc::default();
    let verdicts: Arc<Mutex<Verdicts>> = Arc::default();
    let body_subject = subject.clone();
    let body_slot = Arc::clone(&slot);
    let judge_verdicts = Arc::clone(&verdicts);
    let judge_slot = Arc::clone(&slot);
    let explored = explore(
        &plan,
        move || body(&body_subject, workload, &body_slot),
        move |_| {
            let execution = judge_slot.lock().unwrap().take()?;
            let records = execution.take_log();
            {
                let mut verdicts = judge_verdicts.lock().unwrap();
                verdicts.judged += 1;
                for state in reach::reached(&records) {
                    *verdicts.reached.entry(state).or_default() += 1;
                }
            }
            let crashed = execution.take_crash().or_else(|| {
                let panics = lanesim_target::shim::explore::take_task_panics();
                panics.first().map(|first| task_panic(first, panics.len()))
            });
            if let Some(why) = crashed {
                judge_verdicts.lock().unwrap().found =
                    Some((ModelBreak::Crashed(why.clone()), records));
                return Some(why);
            }
            let mut violations = check(&records);
            violations.retain(|v| decided.contains(&v.contract));
            let first = violations.first()?.to_string();
            judge_verdicts.lock().unwrap().found =
                Some((ModelBreak::Violated(violations), records));
            Some(first)
        },
    )?;
    let found = explored.found.map(|found| {
        let (broke, records) = match found.broke {
            Broke::Judged(_) => verdicts
                .lock()
                .unwrap()
                .found
                .take()
                .expect("a judged break leaves its verdict"),
            Broke::Checker(words) => {
                let records = slot
                    .lock()
                    .unwrap()
                    .take()
                    .map(|execution| execution.take_log())
                    .unwrap_or_default();
                (ModelBreak::Checker(words), records)
            }
        };
        Box::new(ModelFind {
            execution: found.execution,
            steps: found.steps,
            broke,
            records,
        })
    });
    let verdicts = verdicts.lock().unwrap();
    let reaches = reach::tallies(workload, &verdicts.reached, verdicts.judged, lifecycle);
    Ok(WorkloadRun {
        workload,
        plan,
        ran: Ran::Explored {
            executions: explored.executions,
            max_steps_seen: explored.max_steps_seen,
            elapsed: explored.elapsed,
            found,
            reaches,
        },
    })
}

/// Explores each of `workloads` under each of `strategies` (`plan` gives
/// the seed, the executions and the step bound) on `subject`.
///
/// # Errors
/// [`Unavailable`] in a build without a model checker.
pub fn explore_all(
    subject: &Subject,
    workloads: &[&'static Workload],
    strategies: &[Strategy],
    plan: Plan,
) -> Result<ModelReport, Unavailable> {
    let mut runs = Vec::new();
    for &workload in workloads {
        for &strategy in strategies {
            runs.push(explore_workload(
                subject,
                workload,
                Plan { strategy, ..plan },
            )?);
        }
    }
    let mut words = subject.rerun().words(Some(&crate::run::Profile::Release));
    words.push("model".into());
    if let Some(bug) = subject.planted().selected() {
        words.extend(["--bug".into(), bug.name().into()]);
    }
    Ok(ModelReport::new(subject, runs, words))
}

/// The default strategies: PCT aimed at bugs of depth 3, then random.
pub const STRATEGIES: [Strategy; 2] = [Strategy::Pct { depth: 3 }, Strategy::Random];

/// The quiet prefix for panics the world injects.
pub const QUIET: &str = crate::world::INJECTED;

/// What `lanesim model` found: per workload and strategy, what it explored.
#[derive(Debug)]
pub struct ModelReport {
    /// The target's name.
    pub target: String,
    /// The contracts decided for it.
    pub decided: Vec<Contract>,
    /// Those not decided, and why.
    pub not_decided: Vec<NotDecided<Contract>>,
    /// Each workload under each strategy.
    pub runs: Vec<WorkloadRun>,
    /// The words that run `model` again, up to and including `model` (and
    /// the planted bug): a replay line adds the workload and the plan.
    pub repro: Vec<String>,
}

impl ModelReport {
    /// The report of `runs` on `subject`.
    #[must_use]
    pub fn new(subject: &Subject, runs: Vec<WorkloadRun>, repro: Vec<String>) -> Self {
        let (mut decided, mut not_decided) = subject
            .lanes()
            .map(|lanes| decided(&lanes.capabilities()))
            .unwrap_or_default();
        if let Some(caps) = sender::capabilities(subject) {
            let (theirs, not) = sender::decided(&caps);
            decided.extend(theirs);
            not_decided.extend(not);
        }
        Self {
            target: subject.name().to_owned(),
            decided,
            not_decided,
            runs,
            repro,
        }
    }

    /// The command that replays `run`'s find (`-v`: with its log).
    #[must_use]
    pub fn replay_line(&self, run: &WorkloadRun, find: &ModelFind) -> String {
        let mut words = self.repro.clone();
        words.extend([
            "--workload".into(),
            run.workload.name.into(),
            "--strategy".into(),
            run.plan.strategy.to_string(),
            "--seed".into(),
            run.plan.seed.to_string(),
            "--executions".into(),
            (find.execution + 1).to_string(),
            "--max-steps".into(),
            run.plan.max_steps.to_string(),
            "-v".into(),
        ]);
        words.join(" ")
    }

    /// Whether a run without a find fell short of a state its workload
    /// must reach.
    #[must_use]
    pub fn fell_short(&self) -> bool {
        self.runs.iter().any(WorkloadRun::fell_short)
    }

    /// The finds, with their runs.
    pub fn finds(&self) -> impl Iterator<Item = (&WorkloadRun, &ModelFind)> {
        self.runs.iter().filter_map(|run| match &run.ran {
            Ran::Explored {
                found: Some(find), ..
            } => Some((run, find.as_ref())),
            _ => None,
        })
    }
}

/// How the model world fared against one planted bug.
#[derive(Debug)]
pub struct ModelBugReport {
    /// The bug.
    pub bug: lanesim::planted::PlantedBug,
    /// Each workload and strategy run with it planted.
    pub runs: Vec<WorkloadRun>,
    /// The contracts that count as catching it.
    pub contracts: &'static [Contract],
}

impl ModelBugReport {
    /// The runs that caught it: a find that breaks a catalogue contract.
    pub fn catches(&self) -> impl Iterator<Item = (&WorkloadRun, &ModelFind)> {
        self.runs.iter().filter_map(|run| match &run.ran {
            Ran::Explored {
                found: Some(find), ..
            } => match &find.broke {
                ModelBreak::Violated(violations)
                    if violations
                        .iter()
                        .any(|v| self.contracts.contains(&v.contract)) =>
                {
                    Some((run, find.as_ref()))
                }
                _ => None,
            },
            _ => None,
        })
    }

    /// No workload caught it.
    #[must_use]
    pub fn escaped(&self) -> bool {
        self.catches().next().is_none()
    }
}

/// Plants each of `bugs` in lanesim's router in turn and runs every
/// workload under every strategy of `strategies` with it.
///
/// # Errors
/// [`Unavailable`] in a build without a model checker.
pub fn selftest(
    bugs: &[lanesim::planted::PlantedBug],
    strategies: &[Strategy],
    plan: Plan,
) -> Result<Vec<ModelBugReport>, Unavailable> {
    let mut reports = Vec::new();
    for &bug in bugs {
        let planted = lanesim::planted::Planted::select(bug).unwrap_or_default();
        let subject = Subject::lanesim(planted);
        let mut runs = Vec::new();
        for workload in workload::WORKLOADS {
            for &strategy in strategies {
                runs.push(explore_workload(
                    &subject,
                    workload,
                    Plan { strategy, ..plan },
                )?);
            }
        }
        reports.push(ModelBugReport {
            bug,
            runs,
            contracts: crate::run::selftest::catalogue_contracts(bug),
        });
    }
    Ok(reports)
}
