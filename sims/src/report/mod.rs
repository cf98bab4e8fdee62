//! Everything the runner shows, in one module: the typed [`Outcome`] of a
//! subcommand, [`print()`] (the one place outcomes are printed), the
//! announcements made before a run starts and the runs a sweep streams,
//! and the one [`Exit`] code type. `sweep` formats sweeps (human, JSON, JSON
//! lines, JUnit); `text` the other subcommands' tables.
//!
//! Dependencies: `cli` → `report` → `hunt`, `run`; nothing below calls
//! back up.

mod model;
pub mod sweep;
mod text;
pub mod trace;

use std::time::Duration;

use crate::targets::Subject;
use clap::ValueEnum;

use crate::hunt::bench::BugChases;
use crate::hunt::shrink::Expect;
use crate::hunt::{Found, HuntReport};
use crate::real::{Fidelity, FidelitySeed, RealOutcome};
use crate::run::bench::BenchReport;
use crate::run::selftest::BugReport;
use crate::run::sweep::{Failure, SweepReport};
use crate::run::{Audited, RunResult, ScenarioReach, Verdict};
use crate::scenario::Scenario;

use text::{
    bench_table, detection_table, found_lines, hunt_report, listing, selftest_json, selftest_table,
    ScenarioReachLine,
};

/// Writes to stdout. A stdout that was closed (the reader of a pipe left:
/// `lanesim run … | head -1`) ends the process quietly with 141, as a
/// `SIGPIPE` would, instead of a panic (pinned by
/// `a_closed_stdout_ends_the_run_quietly`); any other failed write (a full
/// disk) ends it with 8, not with the testbed's own crash code.
fn write_out(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(Exit::ClosedStdout as i32);
        }
        eprintln!("error: cannot write to stdout: {error}");
        std::process::exit(Exit::StdoutFailed as i32);
    }
}

macro_rules! out {
    ($($arg:tt)*) => { write_out(format_args!($($arg)*)) };
}

macro_rules! outln {
    () => { write_out(format_args!("\n")) };
    ($($arg:tt)*) => { write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `--help`'s list of [`Exit`] codes (pinned to the type by
/// `help_lists_every_exit_code`).
pub const EXIT_CODES: &str = "Exit codes:
  0  every run passed (or broke only a contract the target declares an accepted hazard: counted apart, never as a pass) and every reach requirement was met
  1  a contract was violated
  2  bad input or usage (a scenario file, a flag, a shard report)
  3  liveness: a run outlived its virtual-time budget, no contract broken
  4  crash: the testbed itself panicked
  5  fell short: a required coverage mark not reached, a listed contract no seed could break, or nothing decided (a scenario that ran no seed, a shard that holds no run, a scenario whose reach requirements the target decides none of, an audit that could run no scenario, every real run skipped, a fidelity scenario with no seed compared)
  6  audit: a seed's two runs diverged; fidelity: a seed's simulated and real verdicts differ
  7  selftest: a planted bug a simulated world must catch escaped
  8  the report could not be written to stdout (a full disk, an I/O error): it is lost
  141  stdout was closed under the run (a pipe's reader left): it ended quietly";

/// The process exit codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Everything held.
    Pass = 0,
    /// A contract was violated.
    Violated = 1,
    /// Bad input or usage.
    Usage = 2,
    /// A run outlived its virtual-time budget with no contract broken.
    Liveness = 3,
    /// The testbed itself panicked.
    Crash = 4,
    /// A sweep missed a coverage mark its scenario requires, or ran nothing
    /// (an empty shard).
    NotReached = 5,
    /// `audit`: a seed's two runs differed.
    Diverged = 6,
    /// `selftest`: a planted bug a simulated world must catch escaped.
    Escaped = 7,
    /// Stdout could not be written (other than closed): the report is lost.
    StdoutFailed = 8,
    /// Stdout was closed under the run (as a `SIGPIPE` would end it).
    ClosedStdout = 141,
}

impl Exit {
    /// Every code.
    pub const ALL: [Self; 10] = [
        Self::Pass,
        Self::Violated,
        Self::Usage,
        Self::Liveness,
        Self::Crash,
        Self::NotReached,
        Self::Diverged,
        Self::Escaped,
        Self::StdoutFailed,
        Self::ClosedStdout,
    ];

    /// The exit code of a model world's report: a broken contract or a
    /// target that could not run, 1; an execution the checker failed (a
    /// deadlock, the step bound), 3; a required state not reached in its
    /// share of executions, or nothing decided, 5.
    #[must_use]
    pub fn of_model(report: &crate::model::ModelReport) -> Self {
        use crate::model::{ModelBreak, Ran};
        let finds: Vec<&ModelBreak> = report.finds().map(|(_, find)| &find.broke).collect();
        if finds
            .iter()
            .any(|b| matches!(b, ModelBreak::Violated(_) | ModelBreak::Crashed(_)))
        {
            Self::Violated
        } else if !finds.is_empty() {
            Self::Liveness
        } else if report.fell_short()
            || report
                .runs
                .iter()
                .all(|run| matches!(run.ran, Ran::NotDecided(_)))
        {
            Self::NotReached
        } else {
            Self::Pass
        }
    }

    /// The exit code of a run's verdict.
    #[must_use]
    pub fn of(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Pass | Verdict::Hazard => Self::Pass,
            Verdict::Liveness => Self::Liveness,
            Verdict::Violated => Self::Violated,
            Verdict::Crash => Self::Crash,
        }
    }

    /// The exit code of a sweep: its worst verdict, else coverage missed
    /// (a sweep that planned no run, an empty shard, reached nothing).
    #[must_use]
    pub fn of_sweep(report: &SweepReport) -> Self {
        let worst = report.verdicts().worst();
        if !worst.is_failure()
            && (report.planned() == 0 || report.reaches().iter().any(ScenarioReach::fell_short))
        {
            Self::NotReached
        } else {
            Self::of(worst)
        }
    }

    /// The exit code of a failure found by `hunt` or shrunk by `shrink`.
    #[must_use]
    pub fn failed(expect: Expect) -> Self {
        match expect {
            Expect::Violates(_) => Self::Violated,
            Expect::Liveness => Self::Liveness,
            Expect::Crash => Self::Crash,
        }
    }
}

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// For people.
    Human,
    /// One JSON document on stdout (human lines go to stderr).
    Json,
    /// `run`: one JSON object per run on stdout, streamed as runs finish
    /// (the summary goes to stderr).
    Jsonl,
}

/// What a word of a person's report says at a glance: its colour on a
/// terminal.
#[derive(Clone, Copy, Debug)]
pub enum Tone {
    /// Passed (green).
    Good,
    /// Fell short or was skipped (yellow).
    Warn,
    /// Failed (red, bold).
    Bad,
}

/// `word` in its tone's colour when stdout is a terminal and `NO_COLOR`
/// is unset (no-color.org); as it is otherwise (a pipe, a file, a test).
#[must_use]
pub fn paint(word: &str, tone: Tone) -> String {
    static COLOUR: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let colour = *COLOUR.get_or_init(|| {
        std::io::IsTerminal::is_terminal(&std::io::stdout())
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    });
    if !colour {
        return word.to_string();
    }
    let code = match tone {
        Tone::Good => "32",
        Tone::Warn => "33",
        Tone::Bad => "1;31",
    };
    format!("\x1b[{code}m{word}\x1b[0m")
}

/// What a sweep's text shows besides its failures and summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shown {
    /// The scenarios' lines were printed as each finished
    /// ([`scenario_done`]): the report prints only the others'.
    pub streamed: bool,
    /// The mark table (`run --marks`).
    pub marks: bool,
    /// Each scenario's required marks with their counts (`run --reach`).
    pub reach: bool,
}

/// A scenario of a sweep finished: its line, as the sweep goes.
pub fn scenario_done(tally: &crate::run::sweep::Tally, width: usize) {
    outln!("{}", sweep::scenario_line(tally, width));
}

/// What a subcommand produced.
pub enum Outcome {
    /// `list`.
    List(Vec<Scenario>),
    /// `run` and `merge`.
    Run {
        /// What the sweep found.
        report: SweepReport,
        /// How to print.
        format: Format,
        /// What the text shows.
        shown: Shown,
    },
    /// `model --list`.
    ModelList(&'static [crate::model::workload::Workload]),
    /// `model`.
    Model {
        /// What it explored and found.
        report: crate::model::ModelReport,
        /// Print a find's log.
        verbose: bool,
        /// How to print.
        format: Format,
    },
    /// `model --selftest`: per bug, each workload's run with it planted.
    ModelSelftest {
        /// Per bug.
        reports: Vec<crate::model::ModelBugReport>,
        /// The words that run `model` again, up to `--`.
        repro: Vec<String>,
    },
    /// `model` in a build without the checker: the build with it ran the
    /// command and printed everything; its exit code.
    Delegated(Exit),
    /// `replay`.
    Replay {
        /// The run.
        result: Box<RunResult>,
        /// What it tested.
        subject: Subject,
        /// Print every event of its log (`-v`).
        events: bool,
        /// Where its trace was written (`--trace`).
        wrote: Option<std::path::PathBuf>,
    },
    /// `selftest`.
    Selftest {
        /// Per bug.
        reports: Vec<BugReport>,
        /// How to print.
        format: Format,
    },
    /// `bench`.
    Bench(BenchReport),
    /// `bench --detection`: per bug, its hunts; each hunt's budget.
    Detection(Vec<BugChases>, Duration),
    /// `audit`: per scenario, seeds compared and divergences.
    Audit {
        /// Per scenario: what was compared, or why nothing was.
        audits: Vec<Audited>,
        /// The target audited, when it is not lanesim's own: a divergence
        /// is then its code's to fix, and the note says where to look.
        target: Option<String>,
    },
    /// `audit --processes`: runs compared across two processes, and the
    /// first that differed (its index and both processes' lines).
    AuditProcesses {
        /// Runs the first process streamed.
        runs: u64,
        /// The first difference.
        difference: Option<(usize, String, String)>,
    },
    /// `hunt`.
    Hunt {
        /// What it did.
        report: HuntReport,
        /// What it tested.
        subject: Subject,
        /// How to print.
        format: Format,
    },
    /// `shrink`.
    Shrink {
        /// The failing run shrunk.
        found: Box<Found>,
        /// What it tested.
        subject: Subject,
    },
    /// `run --real`: each seed, run or skipped (each was shown as it
    /// finished, by [`real_run`]).
    Real(Vec<RealOutcome>),
    /// `fidelity`: per scenario, its seeds both ways.
    Fidelity {
        /// Per scenario, its seeds both ways.
        found: Vec<Fidelity>,
        /// The scenarios were named on the command line: one real mode
        /// cannot compare falls short. With none named (every shipped
        /// scenario), those are listed as not compared and fail nothing,
        /// unless no scenario at all was compared.
        named: bool,
    },
}

impl Outcome {
    /// The process exit code.
    #[must_use]
    pub fn exit(&self) -> Exit {
        match self {
            Self::List(_) | Self::ModelList(_) | Self::Bench(_) | Self::Detection(..) => Exit::Pass,
            Self::Model { report, .. } => Exit::of_model(report),
            Self::Delegated(exit) => *exit,
            Self::ModelSelftest { reports, .. } => {
                if reports.iter().any(crate::model::ModelBugReport::escaped) {
                    Exit::Escaped
                } else {
                    Exit::Pass
                }
            }
            Self::Run { report, .. } => Exit::of_sweep(report),
            Self::Replay { result, .. } => Exit::of(result.verdict),
            Self::Selftest { reports, .. } => {
                if reports.iter().any(BugReport::escaped) {
                    Exit::Escaped
                } else {
                    Exit::Pass
                }
            }
            Self::Audit { audits, .. } => {
                if audits.iter().any(|a| !a.divergences.is_empty()) {
                    Exit::Diverged
                } else if audits.iter().all(|a| a.not_run.is_some()) {
                    Exit::NotReached
                } else {
                    Exit::Pass
                }
            }
            Self::AuditProcesses { difference, .. } => {
                if difference.is_some() {
                    Exit::Diverged
                } else {
                    Exit::Pass
                }
            }
            Self::Hunt { report, .. } => report
                .found
                .iter()
                .map(|found| Exit::failed(found.expect))
                .max_by_key(|exit| *exit as u8)
                .unwrap_or(Exit::Pass),
            Self::Shrink { found, .. } => Exit::failed(found.expect),
            Self::Fidelity { found, named } => {
                if found
                    .iter()
                    .flat_map(|f| &f.seeds)
                    .any(FidelitySeed::disagrees)
                {
                    Exit::Diverged
                } else if (*named && found.iter().any(|f| !f.compared()))
                    || !found.iter().any(Fidelity::compared)
                {
                    // A scenario with no seed compared decided nothing:
                    // "agree" would be a green that misleads.
                    Exit::NotReached
                } else {
                    Exit::Pass
                }
            }
            Self::Real(runs) => runs
                .iter()
                .filter_map(|run| match run {
                    RealOutcome::Ran(ran) => Some(ran.result.verdict),
                    RealOutcome::Skipped { .. } => None,
                })
                .max()
                // Every run skipped: nothing was decided.
                .map_or(Exit::NotReached, Exit::of),
        }
    }
}

/// Says what is about to run: on stdout for people, stderr for machines.
pub fn announce(format: Format, line: &str) {
    match format {
        Format::Human => outln!("{line}"),
        Format::Json | Format::Jsonl => eprintln!("{line}"),
    }
}

/// `model` is about to rebuild this binary with the model checker and run
/// the same command there.
pub fn model_build(rustflags: &str, dir: &std::path::Path, words: &[String]) {
    eprintln!(
        "model: this build has no model checker; building one: RUSTFLAGS=\"{rustflags}\" CARGO_TARGET_DIR={} {} ...",
        dir.display(),
        words.join(" ")
    );
}

/// A subcommand that could not run: bad input or usage (exit 2).
pub fn error(message: &str) {
    eprintln!("error: {message}");
}

/// One hunt of the detection benchmark finished (a progress line).
pub fn chase_done(bug: lanesim::planted::PlantedBug, chase: &crate::hunt::bench::Chase) {
    eprintln!(
        "  {} seed {} {}: {} cases, {:.2} s, {}",
        bug.name(),
        chase.seed,
        if chase.guided { "guided" } else { "unguided" },
        chase.cases,
        chase.wall.as_secs_f64(),
        match &chase.first {
            Some(Ok(contract)) => format!("caught ({})", contract.id()),
            Some(Err(label)) => format!("first failure {label}"),
            None => "not caught".into(),
        }
    );
}

/// Streams one run of a sweep (`--format jsonl`): one line on stdout.
pub fn stream_run(result: &RunResult, subject: &Subject) {
    outln!("{}", sweep::jsonl(result, subject));
}

/// Said when a scenario asks for scheduling exploration in a build whose
/// tokio cannot explore.
pub const STOCK_TOKIO_NOTE: &str = "note: this build's tokio is stock tokio: `shuffle` and `preempt_awaits` do nothing and an un-`biased` select! is not seeded (runs may not replay); add lanesim's `[patch.crates-io] tokio` line to the crate's Cargo.toml (docs/your-implementation.md, \"Set up\")";

/// What every real-mode output says first.
pub const REAL_NOTE: &str = "note: real mode is not deterministic: the seed fixes the parameters and the workload's choices, real scheduling decides the rest; a real run cannot be replayed, and event-log hashes differ from run to run";

/// One real run finished (or was skipped): its verdict line, and a failed
/// run's violations.
pub fn real_run(outcome: &RealOutcome) {
    out!("{}", text::real_lines(outcome));
}

/// A real-mode failure chased into the simulation (`chase`): whether the
/// simulation fails the same seed too, and if not ("real only") the
/// simulated repro found, or what was tried.
pub fn chased(chase: &crate::chase::Chase, subject: &Subject) {
    out!("{}", text::chase_lines(chase, subject));
}

/// The one place outcomes are printed.
pub fn print(outcome: &Outcome) {
    match outcome {
        Outcome::List(scenarios) => out!("{}", listing(scenarios)),
        Outcome::ModelList(workloads) => out!("{}", model::listing(workloads)),
        Outcome::Model {
            report,
            verbose,
            format: Format::Human,
        } => out!("{}", model::human(report, *verbose)),
        Outcome::Model { report, .. } => {
            outln!("{}", model::json(report, Exit::of_model(report) as u8));
        }
        Outcome::Delegated(_) => {}
        Outcome::ModelSelftest { reports, repro } => out!("{}", model::selftest(reports, repro)),
        Outcome::Run {
            report,
            format: Format::Human,
            shown,
        } => out!("{}", sweep::human(report, *shown)),
        Outcome::Run {
            report,
            format: Format::Json,
            ..
        } => outln!("{}", sweep::json(report, Exit::of_sweep(report) as u8)),
        Outcome::Run {
            report,
            format: Format::Jsonl,
            shown,
        } => {
            outln!(
                "{}",
                sweep::jsonl_summary(report, Exit::of_sweep(report) as u8)
            );
            eprint!("{}", sweep::human(report, *shown));
        }
        Outcome::Replay {
            result,
            subject,
            events,
            wrote,
        } => {
            if *events {
                if !result.preemptions.is_empty() {
                    outln!("(lines marked ~ are preemptions, shown where they fired: not events of the log, nor in its hash)");
                }
                for line in crate::fired::interleaved(&result.records, &result.preemptions) {
                    outln!("{line}");
                }
            }
            let reach = ScenarioReachLine(result);
            out!("{}", replay_verdict(result, subject));
            outln!("{reach}");
            for not in &result.undecided {
                outln!("{} not decided: {}", not.what.id(), not.why);
            }
            outln!(
                "event log hash: {:016x} ({} events)",
                result.hash,
                result.records.len()
            );
            if let Some(path) = wrote {
                outln!("wrote {} (open it at ui.perfetto.dev)", path.display());
            }
        }
        Outcome::Selftest {
            reports,
            format: Format::Human,
        } => out!("{}", selftest_table(reports)),
        Outcome::Selftest {
            reports,
            format: Format::Json | Format::Jsonl,
        } => outln!("{}", selftest_json(reports)),
        Outcome::Bench(bench) => out!("{}", bench_table(bench)),
        Outcome::Detection(chases, wall) => out!("{}", detection_table(chases, *wall)),
        Outcome::Audit { audits, target } => {
            let (mut total, mut not_run) = (0, 0);
            for Audited {
                name,
                seeds,
                not_run: why,
                divergences,
            } in audits
            {
                if let Some(why) = why {
                    not_run += 1;
                    outln!("{name}: not run (not decided for this target): {why}");
                    continue;
                }
                outln!(
                    "{name}: {seeds} seeds x2, {} divergence(s)",
                    divergences.len()
                );
                for d in divergences {
                    let show = |r: &Option<crate::event::Record>| {
                        r.as_ref()
                            .map_or("<end of log>".into(), ToString::to_string)
                    };
                    outln!("  seed {} diverges at event {}:", d.seed, d.index);
                    outln!("    first:  {}", show(&d.first));
                    outln!("    second: {}", show(&d.second));
                    out!("{}", text::divergence_hints(d));
                }
                total += divergences.len();
            }
            if not_run == 0 {
                outln!("audit: {total} divergence(s)");
            } else {
                outln!(
                    "audit: {total} divergence(s) in {} scenario(s) run; {not_run} not run, so not audited",
                    audits.len() - not_run
                );
            }
            if total > 0 {
                outln!("{}", text::audit_note(target.as_deref()));
            }
        }
        Outcome::AuditProcesses { runs, difference } => match difference {
            None => outln!("audit across processes: {runs} runs, identical in both"),
            Some((index, first, second)) => {
                outln!("audit across processes: run {index} differs");
                outln!("  first process:  {first}");
                outln!("  second process: {second}");
            }
        },
        Outcome::Hunt {
            report,
            subject,
            format: Format::Human,
        } => out!("{}", hunt_report(report, subject)),
        Outcome::Hunt {
            report, subject, ..
        } => outln!("{}", text::hunt_json(report, subject)),
        Outcome::Shrink { found, subject } => {
            let mut text = String::new();
            found_lines(&mut text, found, subject);
            out!("{text}");
        }
        Outcome::Real(runs) => out!("{}", text::real_summary(runs)),
        Outcome::Fidelity { found, named } => out!("{}", text::fidelity(found, *named)),
    }
}

/// What `replay` says of its run's verdict: `PASS`; `ACCEPTED HAZARD` with
/// each accepted breach and the target's reason (only when that is all the
/// run broke); or the failure, with every violation and its evidence.
/// Pinned by `replay_shows_a_violation_beside_an_accepted_hazard`.
#[must_use]
pub fn replay_verdict(result: &RunResult, subject: &Subject) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    match result.verdict {
        Verdict::Pass => {
            let _ = writeln!(text, "PASS {} seed {}", result.scenario, result.seed);
        }
        Verdict::Hazard => {
            let _ = writeln!(
                text,
                "ACCEPTED HAZARD {} seed {}",
                result.scenario, result.seed
            );
            for broke in &result.hazards {
                let _ = writeln!(text, "{broke}");
                if let Some(why) = result.accepted.iter().find(|n| n.what == broke.contract) {
                    let _ = writeln!(text, "  accepted by the target: {}", why.why);
                }
            }
        }
        Verdict::Violated | Verdict::Liveness | Verdict::Crash => {
            sweep::failure(&mut text, &Failure::of(result, subject));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Violation;
    use crate::scenario::Contract;
    use crate::targets::decide::NotDecided;

    fn broke(contract: Contract, message: &str) -> Violation {
        Violation {
            contract,
            message: message.into(),
            evidence: Vec::new(),
        }
    }

    /// A run that broke a contract its target promises as well as one it
    /// accepts is a failure: replay shows the violation, not only the
    /// hazard; a run that broke only the accepted one shows the hazard and
    /// the target's reason.
    #[test]
    fn replay_shows_a_violation_beside_an_accepted_hazard() {
        let scenario = Scenario::load(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml"),
        )
        .unwrap();
        let subject = Subject::default();
        let mut result = RunResult::crashed(&scenario, 3, String::new());
        result.crash = None;
        result.accepted = vec![NotDecided {
            what: Contract::L2,
            why: "a reason".into(),
        }];
        result.hazards = vec![broke(Contract::L2, "the accepted breach")];
        result.violations = vec![broke(Contract::L1, "the promised order broken")];
        result.verdict = Verdict::Violated;
        let text = replay_verdict(&result, &subject);
        assert!(text.contains("the promised order broken"), "{text}");
        assert!(!text.contains("ACCEPTED HAZARD"), "{text}");

        result.violations.clear();
        result.verdict = Verdict::Hazard;
        let text = replay_verdict(&result, &subject);
        assert!(
            text.contains("ACCEPTED HAZARD lanes_order seed 3")
                && text.contains("the accepted breach")
                && text.contains("accepted by the target: a reason"),
            "{text}"
        );
    }
}
