//! `run` and `merge`: a sweep of scenarios over seeds in simulation,
//! watched as it goes ([`RunWatch`]: seeds and parameters, each scenario's
//! line, JSON lines, a progress bar), refused when its runs in flight could
//! allocate too much; `run --real` on the production path; the fold of a
//! sweep's shard reports into the whole sweep's; JUnit for both.

use std::path::{Path, PathBuf};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::inputs::{load_all, read_bounded, refuse_bad_for_real};
use super::output;
use super::setup::{init_tracing, subject};
use crate::chase;
use crate::hunt::shrink::Expect;
use crate::real;
use crate::report::{self, announce, Format, Outcome, Shown};
use crate::run::sweep::{self, Plan, Shard, SweepReport, Tally, Watch};
use crate::run::RunResult;
use crate::scenario::{Scenario, SeedRange};
use crate::targets::Subject;

/// `run`'s arguments.
pub(super) struct RunArgs {
    pub(super) paths: Vec<PathBuf>,
    pub(super) seeds: Option<SeedRange>,
    pub(super) jobs: usize,
    pub(super) wall: Option<Duration>,
    pub(super) shard: Shard,
    pub(super) format: Format,
    pub(super) junit: Option<PathBuf>,
    pub(super) verbose: bool,
    pub(super) marks: bool,
    pub(super) reach: bool,
    pub(super) accept_undecided: bool,
    pub(super) bug: Option<String>,
    pub(super) real: bool,
}

/// What a `run` shows while it goes: the seeds and parameters of runs
/// about to start (when asked, or when there is one), each scenario's line
/// as it finishes (people), each run as a JSON line (`--format jsonl`),
/// and a progress bar on a terminal.
struct RunWatch {
    format: Format,
    verbose: bool,
    subject: Subject,
    bar: ProgressBar,
    /// The width scenario names are padded to.
    width: usize,
}

impl Watch for RunWatch {
    fn starting(&mut self, scenario: &Scenario, seed: u64) {
        if self.verbose {
            self.bar.suspend(|| {
                announce(
                    self.format,
                    &format!("  seed {seed}: {}", self.subject.sample(scenario, seed)),
                );
            });
        }
    }

    fn folded(&mut self, result: &RunResult, tally: &Tally) {
        if self.format == Format::Jsonl {
            report::stream_run(result, &self.subject);
        }
        if self.format == Format::Human && report::sweep::finished(tally) {
            self.bar
                .suspend(|| report::scenario_done(tally, self.width));
        }
        self.bar.inc(1);
    }
}

pub(super) fn run(args: &RunArgs, base: &Subject) -> Result<Outcome, String> {
    let subject = subject(base, args.bug.as_deref())?;
    if args.real {
        return run_real(args, &subject);
    }
    let scenarios = load_all(&args.paths)?;
    sweep_memory(&scenarios, args.jobs)?;
    if !crate::explore::tokio_explores() && scenarios.iter().any(Scenario::explores) {
        announce(args.format, report::STOCK_TOKIO_NOTE);
    }
    let plan = Plan {
        scenarios: &scenarios,
        seeds: args.seeds,
        shard: args.shard,
        wall: args.wall,
        jobs: args.jobs,
        subject: subject.clone(),
        accept_undecided: args.accept_undecided,
    };
    let single = scenarios
        .iter()
        .all(|scenario| plan.seeds_of(scenario).len() == 1);
    let total: u64 = scenarios
        .iter()
        .scan(0u64, |start, scenario| {
            let len = plan.seeds_of(scenario).len();
            let share = args.shard.share(*start, len);
            *start += len;
            Some(share)
        })
        .sum();
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {elapsed} {human_pos}/{human_len} runs {per_sec} ({eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut watch = RunWatch {
        format: args.format,
        verbose: args.verbose || single,
        subject,
        bar,
        width: report::sweep::name_width(scenarios.iter().map(|s| s.name.as_str())),
    };
    let report = sweep::sweep(&plan, &mut watch);
    watch.bar.finish_and_clear();
    if let Some(path) = &args.junit {
        write_junit(path, &report)?;
    }
    Ok(Outcome::Run {
        report,
        format: args.format,
        shown: Shown {
            streamed: args.format == Format::Human,
            marks: args.marks,
            reach: args.reach,
        },
    })
}

/// Seeds `run --real` takes from a scenario given none: its first three.
const REAL_DEFAULT_SEEDS: u64 = 3;

/// `run --real`: each seed of each scenario on the production path, one at
/// a time, or the reason it cannot be made for real.
fn run_real(args: &RunArgs, subject: &Subject) -> Result<Outcome, String> {
    if args.format != Format::Human {
        return Err("--real prints human text only: use --format human".into());
    }
    let scenarios = load_all(&args.paths)?;
    refuse_bad_for_real(&scenarios)?;
    // `RUST_LOG=lanesim::event=debug` shows the events as they happen.
    init_tracing("warn");
    announce(Format::Human, report::REAL_NOTE);
    let mut runs = Vec::new();
    for scenario in &scenarios {
        let seeds = args.seeds.unwrap_or_else(|| {
            let own = scenario.default_seeds();
            let first = own.into_iter().next().unwrap_or(0);
            SeedRange::new(first, first + REAL_DEFAULT_SEEDS.min(own.len()) - 1).unwrap_or(own)
        });
        if let Some(reason) = real::scenario_refusal(scenario) {
            let skipped = real::RealOutcome::Skipped {
                scenario: scenario.name.clone(),
                path: scenario.path.display().to_string(),
                seed: seeds.into_iter().next().unwrap_or(0),
                reason,
            };
            report::real_run(&skipped);
            runs.push(skipped);
            continue;
        }
        announce(
            Format::Human,
            &format!(
                "{} ({}): seeds {seeds}, for real at time scale {}",
                scenario.name,
                scenario.path.display(),
                scenario.real_time_scale()
            ),
        );
        for seed in seeds {
            if args.verbose {
                announce(
                    Format::Human,
                    &format!("  seed {seed}: {}", subject.sample(scenario, seed)),
                );
            }
            let outcome = real::execute_real(scenario, seed, subject);
            report::real_run(&outcome);
            if let real::RealOutcome::Ran(ran) = &outcome {
                if let Some(expect) = Expect::of(&ran.result) {
                    let out = output::chased(subject);
                    let chase = chase::chase(
                        scenario,
                        seed,
                        expect,
                        subject,
                        chase::Budget::default(),
                        &out,
                    );
                    report::chased(&chase, subject);
                }
            }
            runs.push(outcome);
        }
    }
    Ok(Outcome::Real(runs))
}

fn write_junit(path: &Path, report: &SweepReport) -> Result<(), String> {
    let xml = report::sweep::junit(report).map_err(|e| format!("--junit: {e}"))?;
    std::fs::write(path, xml).map_err(|e| format!("--junit {}: {e}", path.display()))
}

pub(super) fn merge(
    files: &[PathBuf],
    format: Format,
    junit: Option<&Path>,
) -> Result<Outcome, String> {
    let mut shards = Vec::with_capacity(files.len());
    for file in files {
        let text = read_bounded(file, MAX_REPORT_BYTES)?;
        let shard: SweepReport = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{}:{}:{}: not a `lanesim run --format json` report: {e}",
                file.display(),
                e.line(),
                e.column()
            )
        })?;
        shards.push((file.display().to_string(), shard));
    }
    let report = sweep::merge(shards)?;
    if let Some(path) = junit {
        write_junit(path, &report)?;
    }
    Ok(Outcome::Run {
        report,
        format,
        shown: Shown::default(),
    })
}

/// The largest shard report `merge` reads: a report holds at most
/// [`sweep::KEPT_FAILURES`] failures per scenario, so a real one is far
/// smaller.
const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// `fidelity`: each scenario's seeds simulated and for real, compared.
/// Refuses a sweep whose runs in flight could together allocate more than
/// `limits::SWEEP_FRAME_BYTES` of frames: `jobs` runs of its largest.
fn sweep_memory(scenarios: &[Scenario], jobs: usize) -> Result<(), String> {
    use crate::scenario::limits::SWEEP_FRAME_BYTES;
    let Some(largest) = scenarios.iter().max_by_key(|s| s.frame_bytes_bound()) else {
        return Ok(());
    };
    let per_run = largest.frame_bytes_bound();
    let all = per_run.saturating_mul(jobs as u64);
    if all > SWEEP_FRAME_BYTES {
        return Err(format!(
            "--jobs {jobs} x up to {} MiB of frames a run ({}) = {} MiB, more than {} MiB: lower --jobs or the scenario's frame_bytes",
            per_run >> 20,
            largest.path.display(),
            all >> 20,
            SWEEP_FRAME_BYTES >> 20
        ));
    }
    Ok(())
}
