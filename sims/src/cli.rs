//! Command line. Model: one function per subcommand, each returning a typed
//! [`Outcome`]; [`print()`] is the one place results are printed; [`Exit`] is
//! the one type of exit code. The only other output is the announcement of
//! what is about to run (a run's seed and parameters are printed before its
//! first step, the determinism rule), which goes to stderr when stdout is a
//! machine format.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use lanesim::planted::{Planted, PlantedBug, CATALOGUE};
use lanesim::shim::probe::{Mark, Point};

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::coverage::{CoverMark, WorldMark};
use crate::hunt::bench::BugChases;
use crate::hunt::genes::size;
use crate::hunt::shrink::{Budget, Expect};
use crate::hunt::strategy::HuntWorld;
use crate::hunt::{self, Found, HuntConfig, HuntReport, Origin, Stop};
use crate::run::bench::BenchReport;
use crate::run::selftest::{self, catalogue_contracts, BugReport, TURMOIL_LAYER};
use crate::run::sweep::{self, Failure, Plan, Shard, SweepReport, Tally, Watch};
use crate::run::{self, report, Divergence, RunResult, ScenarioReach, Verdict};
use crate::scenario::WorldKind;
use crate::scenario::{Scenario, SeedRange};

/// `--help`'s list of [`Exit`] codes (pinned to the type by
/// `help_lists_every_exit_code`).
pub const EXIT_CODES: &str = "Exit codes:
  0  every run passed and every reach requirement was met
  1  a contract was violated
  2  bad input or usage (a scenario file, a flag, a shard report)
  3  liveness: a run outlived its virtual-time budget, no contract broken
  4  crash: the testbed itself panicked
  5  a required coverage mark not reached (or a listed contract no seed could break)
  6  audit: a seed's two runs diverged
  7  selftest: a planted bug a simulated world must catch escaped";

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
    /// A sweep missed a coverage mark its scenario requires.
    NotReached = 5,
    /// `audit`: a seed's two runs differed.
    Diverged = 6,
    /// `selftest`: a planted bug a simulated world must catch escaped.
    Escaped = 7,
}

impl Exit {
    /// Every code.
    pub const ALL: [Self; 8] = [
        Self::Pass,
        Self::Violated,
        Self::Usage,
        Self::Liveness,
        Self::Crash,
        Self::NotReached,
        Self::Diverged,
        Self::Escaped,
    ];

    /// The exit code of a run's verdict.
    #[must_use]
    pub fn of(verdict: Verdict) -> Self {
        match verdict {
            Verdict::Pass => Self::Pass,
            Verdict::Liveness => Self::Liveness,
            Verdict::Violated => Self::Violated,
            Verdict::Crash => Self::Crash,
        }
    }

    /// The exit code of a sweep: its worst verdict, else coverage missed.
    #[must_use]
    pub fn of_sweep(report: &SweepReport) -> Self {
        let worst = report.verdicts().worst();
        if worst == Verdict::Pass && report.reaches().iter().any(ScenarioReach::fell_short) {
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

/// Deterministic simulation testbed for per-key ordering lanes and
/// node-to-node senders.
#[derive(Parser, Debug)]
#[command(name = "lanesim", version, about, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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

#[derive(Subcommand, Debug)]
enum Command {
    /// List the scenarios under the given files or directories, the coverage
    /// marks, and the planted bugs this build can select.
    List {
        /// Scenario files or directories (default: `scenarios`).
        paths: Vec<PathBuf>,
    },
    /// Run scenarios over seeds and decide every run against its contracts
    /// and every sweep against the marks its scenario must reach.
    Run {
        /// Scenario files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// One seed.
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// A seed range `A..B` (B excluded) or `A..=B`, at most 10^15
        /// seeds, run lazily in bounded memory; default: each scenario's own.
        #[arg(long)]
        seeds: Option<SeedRange>,
        /// Parallel jobs (threads, 1 to 256); results are identical to `--jobs 1`.
        #[arg(long, default_value_t = 1, value_parser = jobs_parser())]
        jobs: u16,
        /// Stop starting runs after this much wall time (`90s`, `10m`, `2h`;
        /// at most 7 days) and report how far the sweep got.
        #[arg(long = "for", value_name = "DURATION", value_parser = parse_wall)]
        for_: Option<Duration>,
        /// Run shard I of N (`0/4` .. `3/4`): job g of the sweep is shard
        /// g mod N's. `lanesim merge` folds the shards' `--format json`
        /// outputs into the whole sweep's report.
        #[arg(long, value_name = "I/N")]
        shard: Option<Shard>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Also write JUnit XML here: a test case per scenario and one per
        /// failed seed, with its repro line.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Print every run's seed and sampled parameters before it starts.
        #[arg(long, short)]
        verbose: bool,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Fold the `--format json` reports of a sweep's shards into the report
    /// of the whole sweep, with the exit code the unsharded run would have.
    Merge {
        /// The shards' JSON reports (every shard of one sweep, once).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Also write JUnit XML here.
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
    },
    /// Re-run one seed, printing its parameters, its events (RUST_LOG
    /// filters them, default `lanesim::event=debug`), its marks and verdict.
    Replay {
        /// The scenario file.
        path: PathBuf,
        /// The seed.
        #[arg(long)]
        seed: u64,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Plant each bug in turn and report which scenarios catch it, by a
    /// contract the catalogue lists for it, in what share of their seeds
    /// (needs a `--features planted-bugs` build).
    Selftest {
        /// Scenario files or directories.
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Seeds per scenario `A..B` or `A..=B`; default: each scenario's own.
        #[arg(long)]
        seeds: Option<SeedRange>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Measure the testbed: seeds/s per scenario, the wedged-peer exchange
    /// real vs simulated, and the harness against bare turmoil.
    Bench {
        /// Scenario files or directories.
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Seeds per scenario.
        #[arg(long, default_value = "0..200")]
        seeds: SeedRange,
        /// Skip the 5 s real loopback exchange.
        #[arg(long)]
        no_real: bool,
        /// Instead, the detection benchmark: hunt each planted bug a
        /// simulated world can see, guided and unguided (needs a
        /// `--features planted-bugs` build).
        #[arg(long)]
        detection: bool,
        /// `--detection`: the hunt seeds `A..B`.
        #[arg(long, default_value = "1..6")]
        hunt_seeds: SeedRange,
        /// `--detection`: each hunt's wall budget.
        #[arg(long, default_value = "60s", value_parser = parse_wall)]
        hunt_for: Duration,
    },
    /// Generate cases (proptest), run each against every contract its world
    /// decides, and shrink the first failure to a scenario file.
    Hunt {
        /// Which world's cases.
        #[arg(long, value_enum, default_value_t = HuntWorld::Both)]
        world: HuntWorld,
        /// Hunt for this long (wall time: `90s`, `10m`, `2h`; at most 7 days).
        #[arg(long = "for", value_name = "DURATION", value_parser = parse_wall)]
        for_: Option<Duration>,
        /// Hunt through this many cases (at most 10^12); default 1000 when
        /// `--for` is not given either.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_CASES))]
        cases: Option<u64>,
        /// Parallel jobs (threads, 1 to 256); what is found does not depend on it.
        #[arg(long, default_value_t = 1, value_parser = jobs_parser())]
        jobs: u16,
        /// The hunt's seed: the same seed generates the same cases in the same order.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Go on after a failure (each is shrunk at the end).
        #[arg(long)]
        keep_going: bool,
        /// Generate fresh cases only (no coverage corpus).
        #[arg(long)]
        unguided: bool,
        /// Report failures unshrunk.
        #[arg(long)]
        no_shrink: bool,
        /// Where shrunk scenarios are written.
        #[arg(long, default_value = "target/lanesim/shrunk")]
        out: PathBuf,
        /// proptest's regression file: its seeds are replayed first and a
        /// failure's seed is saved (default: proptest-regressions/hunt-WORLD.txt,
        /// not written when a bug is planted).
        #[arg(long)]
        regressions: Option<PathBuf>,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Shrink a failing seed of a scenario to a small exact scenario file
    /// that fails the same way.
    Shrink {
        /// The scenario file.
        path: PathBuf,
        /// The failing seed.
        #[arg(long)]
        seed: u64,
        /// Where the shrunk scenario is written.
        #[arg(long, default_value = "target/lanesim/shrunk")]
        out: PathBuf,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Run each seed twice and compare the event-log hashes.
    Audit {
        /// Scenario files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed range `A..B` or `A..=B`.
        #[arg(long, default_value = "0..8")]
        seeds: SeedRange,
    },
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
    },
    /// `replay`.
    Replay {
        /// The run.
        result: Box<RunResult>,
        /// The bug planted.
        planted: Planted,
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
    Audit(Vec<(String, u64, Vec<Divergence>)>),
    /// `hunt`.
    Hunt {
        /// What it did.
        report: HuntReport,
        /// The bug planted.
        planted: Planted,
    },
    /// `shrink`.
    Shrink {
        /// The failing run shrunk.
        found: Box<Found>,
        /// The bug planted.
        planted: Planted,
    },
}

impl Outcome {
    /// The process exit code.
    #[must_use]
    pub fn exit(&self) -> Exit {
        match self {
            Self::List(_) | Self::Bench(_) | Self::Detection(..) => Exit::Pass,
            Self::Run { report, .. } => Exit::of_sweep(report),
            Self::Replay { result, .. } => Exit::of(result.verdict),
            Self::Selftest { reports, .. } => {
                if reports.iter().any(BugReport::escaped) {
                    Exit::Escaped
                } else {
                    Exit::Pass
                }
            }
            Self::Audit(audits) => {
                if audits.iter().any(|(_, _, d)| !d.is_empty()) {
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
        }
    }
}

/// Runs the CLI on the process arguments.
#[must_use]
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            let code = if error.use_stderr() {
                Exit::Usage
            } else {
                Exit::Pass
            };
            return ExitCode::from(code as u8);
        }
    };
    let exit = match dispatch(cli.command) {
        Ok(outcome) => {
            print(&outcome);
            outcome.exit()
        }
        Err(message) => {
            eprintln!("error: {message}");
            Exit::Usage
        }
    };
    ExitCode::from(exit as u8)
}

fn dispatch(command: Command) -> Result<Outcome, String> {
    match command {
        Command::List { paths } => list(&paths),
        Command::Run {
            paths,
            seed,
            seeds,
            jobs,
            for_,
            shard,
            format,
            junit,
            verbose,
            bug,
        } => run(&RunArgs {
            paths,
            seeds: seed.map(SeedRange::one).or(seeds),
            jobs: usize::from(jobs),
            wall: for_,
            shard: shard.unwrap_or(Shard::ALL),
            format,
            junit,
            verbose,
            bug,
        }),
        Command::Merge {
            files,
            format,
            junit,
        } => merge(&files, format, junit.as_deref()),
        Command::Replay { path, seed, bug } => replay(&path, seed, bug.as_deref()),
        Command::Selftest {
            paths,
            seeds,
            format,
        } => selftest(&paths, seeds, format),
        Command::Bench {
            detection: true,
            hunt_seeds,
            hunt_for,
            ..
        } => detection_bench(hunt_seeds, hunt_for),
        Command::Bench {
            paths,
            seeds,
            no_real,
            ..
        } => Ok(Outcome::Bench(run::bench::report(
            &load_all(&paths)?,
            seeds,
            no_real,
        ))),
        Command::Audit { paths, seeds } => audit(&paths, seeds),
        Command::Hunt {
            world,
            for_,
            cases,
            jobs,
            seed,
            keep_going,
            unguided,
            no_shrink,
            out,
            regressions,
            bug,
        } => {
            let planted = planted(bug.as_deref())?;
            let regressions = match regressions {
                Some(path) => Some(path),
                None if planted.selected().is_none() => Some(PathBuf::from(format!(
                    "proptest-regressions/hunt-{}.txt",
                    world.name()
                ))),
                None => None,
            };
            let config = HuntConfig {
                world,
                seed,
                cases: cases.or(for_.is_none().then_some(1_000)),
                wall: for_,
                jobs: usize::from(jobs),
                keep_going,
                planted,
                guided: !unguided,
                shrink: (!no_shrink).then(Budget::default),
                out,
                regressions,
            };
            Ok(hunt(&config))
        }
        Command::Shrink {
            path,
            seed,
            out,
            bug,
        } => shrink(&path, seed, &out, bug.as_deref()),
    }
}

/// The most cases one hunt may be given.
const MAX_CASES: u64 = 1_000_000_000_000;
/// The longest one hunt may be given: a week.
const MAX_WALL: Duration = Duration::from_secs(7 * 24 * 3600);

fn jobs_parser() -> clap::builder::RangedI64ValueParser<u16> {
    clap::value_parser!(u16).range(1..=256)
}

/// A hunt's wall time: a number and a unit (`ms`, `s`, `m`, `h`).
fn parse_wall(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale = match unit {
        "ms" => 1e-3,
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "expected a number and a unit (ms, s, m, h), e.g. 10m; got \"{text}\""
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("expected a number before the unit, e.g. 10m; got \"{text}\""))?;
    let seconds = value * scale;
    if seconds.is_nan() || seconds <= 0.0 || seconds > MAX_WALL.as_secs_f64() {
        return Err(format!(
            "must be more than 0 and at most 7 days; got \"{text}\""
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

fn hunt(config: &HuntConfig) -> Outcome {
    let guidance = if config.guided { "guided" } else { "unguided" };
    let limit = match (config.cases, config.wall) {
        (Some(cases), Some(wall)) => format!("{cases} cases or {wall:?}"),
        (Some(cases), None) => format!("{cases} cases"),
        (None, Some(wall)) => format!("{wall:?}"),
        (None, None) => "no limit".into(),
    };
    announce(
        Format::Human,
        &format!(
            "hunt --seed {} --world {}: {limit}, {} job(s), {guidance}{}",
            config.seed,
            config.world.name(),
            config.jobs,
            config
                .planted
                .selected()
                .map_or(String::new(), |bug| format!(", bug {}", bug.name()))
        ),
    );
    let bar = config
        .cases
        .map_or_else(ProgressBar::new_spinner, ProgressBar::new);
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(
        ProgressStyle::with_template("{spinner} {elapsed} {human_pos} cases {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    let report = hunt::hunt(config, &|cases, found, marks| {
        bar.set_position(cases);
        bar.set_message(format!("· {found} failure(s) · {marks} marks"));
    });
    bar.finish_and_clear();
    Outcome::Hunt {
        report,
        planted: config.planted,
    }
}

fn detection_bench(seeds: SeedRange, wall: Duration) -> Result<Outcome, String> {
    if CATALOGUE.is_empty() {
        return Err(
            "bench --detection needs planted bugs: use `cargo run --release --features planted-bugs -- bench --detection`"
                .into(),
        );
    }
    if seeds.len() > 100 {
        return Err("--hunt-seeds: at most 100 hunts per bug and mode".into());
    }
    announce(
        Format::Human,
        &format!(
            "detection: {} bugs x hunt seeds {seeds} x guided/unguided, {wall:?} each",
            TURMOIL_LAYER.len(),
        ),
    );
    let chases = hunt::bench::detection(&TURMOIL_LAYER, seeds, wall, &|bug, chase| {
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
    });
    Ok(Outcome::Detection(chases, wall))
}

fn shrink(path: &Path, seed: u64, out: &Path, bug: Option<&str>) -> Result<Outcome, String> {
    let planted = planted(bug)?;
    let scenario = Scenario::load(path).map_err(|e| e.to_string())?;
    announce(
        Format::Human,
        &format!("shrink {} seed {seed}", scenario.path.display()),
    );
    let params = scenario.sample(seed);
    announce(Format::Human, &format!("params: {params}"));
    let found = hunt::shrink_run(
        &params,
        seed,
        scenario.budget(),
        planted,
        Budget::default(),
        out,
    )
    .map_err(|why| format!("{}: seed {seed}: {why}", path.display()))?;
    Ok(Outcome::Shrink {
        found: Box::new(found),
        planted,
    })
}

/// Says what is about to run: on stdout for people, stderr for machines.
fn announce(format: Format, line: &str) {
    match format {
        Format::Human => println!("{line}"),
        Format::Json | Format::Jsonl => eprintln!("{line}"),
    }
}

fn list(paths: &[PathBuf]) -> Result<Outcome, String> {
    let defaults = [PathBuf::from("scenarios")];
    let paths = if paths.is_empty() {
        &defaults[..]
    } else {
        paths
    };
    Ok(Outcome::List(load_all(paths)?))
}

/// `run`'s arguments.
struct RunArgs {
    paths: Vec<PathBuf>,
    seeds: Option<SeedRange>,
    jobs: usize,
    wall: Option<Duration>,
    shard: Shard,
    format: Format,
    junit: Option<PathBuf>,
    verbose: bool,
    bug: Option<String>,
}

/// What a `run` shows while it goes: the seeds and parameters of runs
/// about to start (when asked, or when there is one), each run as a JSON
/// line (`--format jsonl`), and a progress bar on a terminal.
struct RunWatch {
    format: Format,
    verbose: bool,
    planted: Planted,
    bar: ProgressBar,
}

impl Watch for RunWatch {
    fn starting(&mut self, scenario: &Scenario, seed: u64) {
        if self.verbose {
            self.bar.suspend(|| {
                announce(
                    self.format,
                    &format!("  seed {seed}: {}", scenario.sample(seed)),
                );
            });
        }
    }

    fn folded(&mut self, result: &RunResult, _: &Tally) {
        if self.format == Format::Jsonl {
            println!("{}", report::jsonl(result, self.planted));
        }
        self.bar.inc(1);
    }
}

fn run(args: &RunArgs) -> Result<Outcome, String> {
    let planted = planted(args.bug.as_deref())?;
    let scenarios = load_all(&args.paths)?;
    let plan = Plan {
        scenarios: &scenarios,
        seeds: args.seeds,
        shard: args.shard,
        wall: args.wall,
        jobs: args.jobs,
        planted,
    };
    let mut single = true;
    for scenario in &scenarios {
        let seeds = plan.seeds_of(scenario);
        single &= seeds.len() == 1;
        let shard = if args.shard == Shard::ALL {
            String::new()
        } else {
            format!(", shard {}", args.shard)
        };
        announce(
            args.format,
            &format!(
                "{} ({}): seeds {seeds}{shard}",
                scenario.name,
                scenario.path.display(),
            ),
        );
    }
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
        planted,
        bar,
    };
    let report = sweep::sweep(&plan, &mut watch);
    watch.bar.finish_and_clear();
    if let Some(path) = &args.junit {
        write_junit(path, &report)?;
    }
    Ok(Outcome::Run {
        report,
        format: args.format,
    })
}

fn write_junit(path: &Path, report: &SweepReport) -> Result<(), String> {
    let xml = report::junit(report).map_err(|e| format!("--junit: {e}"))?;
    std::fs::write(path, xml).map_err(|e| format!("--junit {}: {e}", path.display()))
}

fn merge(files: &[PathBuf], format: Format, junit: Option<&Path>) -> Result<Outcome, String> {
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
    Ok(Outcome::Run { report, format })
}

/// The largest shard report `merge` reads: a report holds at most
/// [`sweep::KEPT_FAILURES`] failures per scenario, so a real one is far
/// smaller.
const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads `path` as UTF-8 text of at most `max` bytes.
fn read_bounded(path: &Path, max: u64) -> Result<String, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{}: larger than {max} bytes; not a shard report",
            path.display()
        ));
    }
    String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))
}

fn replay(path: &Path, seed: u64, bug: Option<&str>) -> Result<Outcome, String> {
    let planted = planted(bug)?;
    let scenario = Scenario::load(path).map_err(|e| e.to_string())?;
    init_tracing("lanesim::event=debug");
    announce(
        Format::Human,
        &format!("replay {} seed {seed}", scenario.path.display()),
    );
    announce(Format::Human, &format!("params: {}", scenario.sample(seed)));
    let result = run::execute(&scenario, seed, planted);
    Ok(Outcome::Replay {
        result: Box::new(result),
        planted,
    })
}

fn selftest(
    paths: &[PathBuf],
    seeds: Option<SeedRange>,
    format: Format,
) -> Result<Outcome, String> {
    if CATALOGUE.is_empty() {
        return Err(
            "selftest needs planted bugs: use `cargo run --features planted-bugs -- selftest`"
                .into(),
        );
    }
    if format == Format::Jsonl {
        return Err("selftest --format: jsonl streams a run's results; use json or human".into());
    }
    let scenarios = load_all(paths)?;
    let bugs: Vec<PlantedBug> = CATALOGUE
        .iter()
        .copied()
        .filter(|bug| {
            catalogue_contracts(*bug)
                .iter()
                .all(|c| c.undecidable_in_simulation().is_none())
        })
        .collect();
    Ok(Outcome::Selftest {
        reports: selftest::selftest(&bugs, &scenarios, seeds),
        format,
    })
}

fn audit(paths: &[PathBuf], seeds: SeedRange) -> Result<Outcome, String> {
    let scenarios = load_all(paths)?;
    Ok(Outcome::Audit(
        scenarios
            .iter()
            .map(|scenario| {
                (
                    scenario.name.clone(),
                    seeds.len(),
                    run::audit(scenario, seeds, Planted::none()),
                )
            })
            .collect(),
    ))
}

/// The one place outcomes are printed.
pub fn print(outcome: &Outcome) {
    match outcome {
        Outcome::List(scenarios) => print!("{}", listing(scenarios)),
        Outcome::Run {
            report,
            format: Format::Human,
        } => print!("{}", report::human(report)),
        Outcome::Run {
            report,
            format: Format::Json,
        } => println!("{}", report::json(report, Exit::of_sweep(report) as u8)),
        Outcome::Run {
            report,
            format: Format::Jsonl,
        } => eprint!("{}", report::human(report)),
        Outcome::Replay { result, planted } => {
            let reach = ScenarioReachLine(result);
            if result.verdict == Verdict::Pass {
                println!("PASS {} seed {}", result.scenario, result.seed);
            } else {
                let mut text = String::new();
                report::failure(&mut text, &Failure::of(result, *planted));
                print!("{text}");
            }
            println!("{reach}");
            println!(
                "event log hash: {:016x} ({} events)",
                result.hash,
                result.records.len()
            );
        }
        Outcome::Selftest {
            reports,
            format: Format::Human,
        } => print!("{}", selftest_table(reports)),
        Outcome::Selftest {
            reports,
            format: Format::Json | Format::Jsonl,
        } => println!("{}", selftest_json(reports)),
        Outcome::Bench(bench) => print!("{}", bench_table(bench)),
        Outcome::Detection(chases, wall) => print!("{}", detection_table(chases, *wall)),
        Outcome::Audit(audits) => {
            let mut total = 0;
            for (name, seeds, divergences) in audits {
                println!(
                    "{name}: {seeds} seeds x2, {} divergence(s)",
                    divergences.len()
                );
                for d in divergences {
                    let show = |r: &Option<crate::event::Record>| {
                        r.as_ref()
                            .map_or("<end of log>".into(), ToString::to_string)
                    };
                    println!("  seed {} diverges at event {}:", d.seed, d.index);
                    println!("    first:  {}", show(&d.first));
                    println!("    second: {}", show(&d.second));
                }
                total += divergences.len();
            }
            println!("audit: {total} divergence(s)");
        }
        Outcome::Hunt { report, planted } => print!("{}", hunt_report(report, *planted)),
        Outcome::Shrink { found, planted } => {
            let mut text = String::new();
            found_lines(&mut text, found, *planted);
            print!("{text}");
        }
    }
}

fn hunt_report(report: &HuntReport, planted: Planted) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let stop = match report.stop {
        Stop::Cases => "ran its cases",
        Stop::Time => "its time was up",
        Stop::Failure => "found a failure",
    };
    let _ = writeln!(
        out,
        "hunt: {} cases ({} mutated from a corpus of {}) in {:.1} s; stopped: {stop}",
        report.cases,
        report.mutated,
        report.corpus,
        report.wall.as_secs_f64()
    );
    let all = CoverMark::all();
    let all: Vec<CoverMark> = all
        .into_iter()
        .filter(|mark| {
            [WorldKind::Lanes, WorldKind::Sender, WorldKind::Mesh]
                .into_iter()
                .any(|world| {
                    report.world.covers(world) && crate::scenario::marks::reachable_in(*mark, world)
                })
        })
        .collect();
    let missed: Vec<String> = all
        .iter()
        .filter(|mark| !report.marks.contains_key(mark))
        .map(ToString::to_string)
        .collect();
    let _ = writeln!(
        out,
        "marks reached: {} of {}; not reached: {}",
        report.marks.len(),
        all.len(),
        if missed.is_empty() {
            "none".into()
        } else {
            missed.join(" ")
        }
    );
    let mut rarest: Vec<(u64, CoverMark)> = report.marks.iter().map(|(m, n)| (*n, *m)).collect();
    rarest.sort_unstable();
    let rarest: Vec<String> = rarest
        .iter()
        .take(8)
        .map(|(n, mark)| format!("{mark} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "rarest marks (cases that reached them): {}",
        rarest.join(", ")
    );
    for found in &report.found {
        found_lines(&mut out, found, planted);
    }
    if report.failures > report.found.len() as u64 {
        let _ = writeln!(
            out,
            "... and {} more failing case(s), not kept",
            report.failures - report.found.len() as u64
        );
    }
    let _ = writeln!(
        out,
        "hunt: {} failure(s); digest of its runs {:016x}",
        report.failures, report.digest
    );
    out
}

/// A failure: what broke, how small it shrank, and the line that replays it.
fn found_lines(out: &mut String, found: &Found, planted: Planted) {
    use std::fmt::Write as _;
    let origin = match found.origin {
        Origin::Replayed => "replayed from the regression file",
        Origin::Fresh => "fresh",
        Origin::Mutated => "mutated",
        Origin::Written => "written",
    };
    let _ = writeln!(
        out,
        "FAIL case {} ({origin}, seed {}): {}",
        found.index, found.seed, found.message
    );
    let (keys, items, faults) = size(&found.params);
    let _ = writeln!(
        out,
        "  found at size: {keys} keys/peers, {items} items/frames, {faults} faults"
    );
    match &found.shrunk {
        Some((shrunk, path)) => {
            let (keys, items, faults) = size(&shrunk.params);
            let _ = writeln!(
                out,
                "  shrunk in {} runs ({:.1} s{}) to {keys} keys/peers, {items} items/frames, {faults} faults: {}",
                shrunk.runs,
                shrunk.wall.as_secs_f64(),
                if shrunk.exhausted { ", budget exhausted" } else { "" },
                path.display()
            );
            let _ = writeln!(
                out,
                "  {}",
                run::repro_line(&path.display().to_string(), found.seed, planted)
            );
        }
        None => {
            let _ = writeln!(out, "  not shrunk; parameters: {}", found.params);
        }
    }
}

/// A replayed run's marks on one line.
struct ScenarioReachLine<'a>(&'a RunResult);

impl std::fmt::Display for ScenarioReachLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("marks:")?;
        for (mark, count) in &self.0.coverage {
            write!(f, " {mark}={count}")?;
        }
        Ok(())
    }
}

fn listing(scenarios: &[Scenario]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "scenarios ({}):", scenarios.len());
    for scenario in scenarios {
        let checks: Vec<&str> = scenario.file.checks.iter().map(|c| c.id()).collect();
        let _ = writeln!(
            out,
            "  {:<32} {:<7} [{}]",
            scenario.name,
            format!("{:?}", scenario.file.world).to_lowercase(),
            checks.join(", ")
        );
        let _ = writeln!(
            out,
            "      {}",
            scenario
                .file
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
        if !scenario.reaches.is_empty() {
            let reaches: Vec<String> = scenario.reaches.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "      reaches: {}", reaches.join(", "));
        }
    }
    let _ = writeln!(out, "coverage marks ({}):", CoverMark::all().len());
    let code: Vec<&str> = Mark::ALL.iter().map(|m| m.name()).collect();
    let world: Vec<&str> = WorldMark::ALL.iter().map(|m| m.name()).collect();
    let points: Vec<String> = Point::ALL
        .iter()
        .map(|p| CoverMark::Preempted(*p).to_string())
        .collect();
    let _ = writeln!(out, "  production code: {}", code.join(" "));
    let _ = writeln!(out, "  worlds: {}", world.join(" "));
    let _ = writeln!(out, "  preemption points: {}", points.join(" "));
    if CATALOGUE.is_empty() {
        let _ = writeln!(
            out,
            "planted bugs: none in this build (build with --features planted-bugs)"
        );
    } else {
        let _ = writeln!(out, "planted bugs ({}):", CATALOGUE.len());
        for bug in CATALOGUE {
            let _ = writeln!(out, "  #{:<3} {}", bug.catalogue_id(), bug.name());
        }
    }
    out
}

fn selftest_table(reports: &[BugReport]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| bug | contracts | scenario | caught / seeds | first catching seed | runs to first | wall to first |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for report in reports {
        let contracts: Vec<&str> = catalogue_contracts(report.bug)
            .iter()
            .map(|c| c.id())
            .collect();
        let name = format!("#{} {}", report.bug.catalogue_id(), report.bug.name());
        let catching: Vec<_> = report
            .detections
            .iter()
            .filter(|d| d.seeds_caught > 0)
            .collect();
        if catching.is_empty() {
            let verdict = if report.expected {
                "ESCAPED"
            } else {
                "not caught (not expected: loom/shuttle)"
            };
            let _ = writeln!(
                out,
                "| {name} | {} | {verdict} | 0 / {} | - | - | - |",
                contracts.join(", "),
                report.detections.iter().map(|d| d.seeds_run).sum::<u64>()
            );
        }
        for d in catching {
            let (seed, runs, wall) = d.first.expect("caught");
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} / {} | {seed} | {runs} | {:.1} ms |",
                contracts.join(", "),
                d.scenario,
                d.seeds_caught,
                d.seeds_run,
                wall.as_secs_f64() * 1e3
            );
        }
    }
    let escaped: Vec<String> = reports
        .iter()
        .filter(|r| r.escaped())
        .map(|r| r.bug.name().to_string())
        .collect();
    let caught = reports.iter().filter(|r| r.caught()).count();
    let _ = writeln!(
        out,
        "selftest: {caught} of {} bugs caught; {} expected bug(s) escaped{}",
        reports.len(),
        escaped.len(),
        if escaped.is_empty() {
            String::new()
        } else {
            format!(": {}", escaped.join(", "))
        }
    );
    out
}

fn selftest_json(reports: &[BugReport]) -> String {
    let bugs: Vec<serde_json::Value> = reports
        .iter()
        .map(|report| {
            serde_json::json!({
                "bug": report.bug.name(),
                "catalogue_id": report.bug.catalogue_id(),
                "contracts": catalogue_contracts(report.bug).iter().map(|c| c.id()).collect::<Vec<_>>(),
                "expected": report.expected,
                "caught": report.caught(),
                "escaped": report.escaped(),
                "scenarios": report.detections.iter().map(|d| serde_json::json!({
                    "scenario": d.scenario,
                    "seeds_run": d.seeds_run,
                    "seeds_caught": d.seeds_caught,
                    "seeds_failed_otherwise": d.seeds_other,
                    "first_seed": d.first.map(|f| f.0),
                    "runs_to_first": d.first.map(|f| f.1),
                    "wall_ms_to_first": d.first.map(|f| f.2.as_secs_f64() * 1e3),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "bugs": bugs })).unwrap_or_default()
}

fn bench_table(bench: &BenchReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| scenario | seeds | seeds/s (1 core) | virtual s / wall s |"
    );
    let _ = writeln!(out, "|---|---|---|---|");
    for b in &bench.scenarios {
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.0} |",
            b.name, b.seeds, b.seeds_per_sec, b.virtual_per_wall
        );
    }
    out.push('\n');
    for (tick, virtual_time, wall) in &bench.exchange {
        let _ = writeln!(out, "wedged exchange, turmoil tick {tick} ms: {virtual_time:?} virtual in {wall:?} wall (median of 7)");
    }
    if let Some(real) = bench.real {
        let _ = writeln!(out, "wedged exchange, real loopback TCP: {real:?} wall");
        for (tick, _, wall) in &bench.exchange {
            let _ = writeln!(
                out,
                "ratio real / simulated at tick {tick} ms: {:.0}x",
                real.as_secs_f64() / wall.as_secs_f64()
            );
        }
    }
    out.push('\n');
    for (name, harness, bare) in &bench.harness {
        let _ = writeln!(
            out,
            "{name}: harness {harness:?} vs bare turmoil {bare:?} over 20 seeds: {:.2}x",
            harness.as_secs_f64() / bare.as_secs_f64()
        );
    }
    out
}

fn detection_table(bugs: &[BugChases], wall: Duration) -> String {
    use hunt::bench::median;
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| bug | contract | guided: caught | cases (median) | wall (median / max) | unguided: caught | cases (median) | wall (median / max) | shrink wall (median / max) | shrunk to (largest of each) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    let mut worst_wall = Duration::ZERO;
    let mut all_caught = true;
    for bug in bugs {
        let mode = |guided: bool| -> String {
            let chases: Vec<_> = bug.chases.iter().filter(|c| c.guided == guided).collect();
            let caught = chases.iter().filter(|c| c.caught()).count();
            // An uncaught hunt counts as never: it sorts last.
            let mut cases: Vec<u64> = chases
                .iter()
                .map(|c| if c.caught() { c.cases } else { u64::MAX })
                .collect();
            let mut walls: Vec<Duration> = chases
                .iter()
                .map(|c| if c.caught() { c.wall } else { Duration::MAX })
                .collect();
            let show_cases = |v: Option<u64>| match v {
                Some(u64::MAX) | None => "-".to_string(),
                Some(v) => v.to_string(),
            };
            let show_wall = |v: Option<Duration>| match v {
                Some(Duration::MAX) | None => format!("> {:.0} s", wall.as_secs_f64()),
                Some(v) => format!("{:.2} s", v.as_secs_f64()),
            };
            let max = walls.iter().copied().max();
            format!(
                "{caught} / {} | {} | {} / {}",
                chases.len(),
                show_cases(median(&mut cases)),
                show_wall(median(&mut walls)),
                show_wall(max)
            )
        };
        let contracts: Vec<&str> = catalogue_contracts(bug.bug)
            .iter()
            .map(|c| c.id())
            .collect();
        let shrinks: Vec<_> = bug.chases.iter().filter_map(|c| c.shrunk).collect();
        let mut shrink_walls: Vec<Duration> = shrinks.iter().map(|s| s.0).collect();
        // Each measure's largest over the shrinks (not one shrink's).
        let largest = shrinks
            .iter()
            .map(|s| s.2)
            .reduce(|a, b| (a.0.max(b.0), a.1.max(b.1), a.2.max(b.2)));
        for chase in bug.chases.iter().filter(|c| c.guided) {
            all_caught &= chase.caught();
            worst_wall = worst_wall.max(chase.wall);
        }
        let _ = writeln!(
            out,
            "| #{} {} | {} | {} | {} | {} / {} | {} |",
            bug.bug.catalogue_id(),
            bug.bug.name(),
            contracts.join(", "),
            mode(true),
            mode(false),
            median(&mut shrink_walls).map_or("-".into(), |w| format!("{:.2} s", w.as_secs_f64())),
            shrink_walls
                .iter()
                .max()
                .map_or("-".into(), |w| format!("{:.2} s", w.as_secs_f64())),
            largest.map_or("-".into(), |(keys, items, faults)| format!(
                "<= {keys} keys/peers, {items} items/frames, {faults} faults"
            )),
        );
    }
    let _ = writeln!(
        out,
        "detection: guided hunts caught every bug from every seed: {}; slowest guided hunt {:.2} s",
        if all_caught { "yes" } else { "NO" },
        worst_wall.as_secs_f64()
    );
    out
}

fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colour only for a person at a terminal, and never under NO_COLOR
    // (no-color.org): escape codes in a redirected log are noise.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(colour)
        .with_writer(std::io::stderr)
        .with_timer(crate::world::VirtualTime)
        .with_target(false)
        .try_init();
}

fn planted(bug: Option<&str>) -> Result<Planted, String> {
    let Some(name) = bug else {
        return Ok(Planted::none());
    };
    let bug = PlantedBug::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = PlantedBug::ALL.iter().map(|b| b.name()).collect();
        format!(
            "--bug: unknown planted bug `{name}`; known: {}",
            names.join(", ")
        )
    })?;
    Planted::select(bug).ok_or_else(|| {
        format!(
            "--bug {}: this build has no planted bugs; use `cargo run --features planted-bugs -- ...`",
            bug.name()
        )
    })
}

/// Loads every scenario under `paths`, sorted by path; the first bad file is
/// the error.
fn load_all(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    let mut files = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        let before = files.len();
        collect_toml(path, &mut files, &mut seen, 16)
            .map_err(|error| format!("{}: {error}", path.display()))?;
        if files.len() == before && path.is_dir() {
            return Err(format!(
                "{}: no scenario files (*.toml) in this directory or below it",
                path.display()
            ));
        }
        if files.len() > sweep::MAX_FILES {
            return Err(format!(
                "{}: more than {} scenario files",
                path.display(),
                sweep::MAX_FILES
            ));
        }
    }
    files.sort();
    files
        .iter()
        .map(|file| Scenario::load(file).map_err(|error| error.to_string()))
        .collect()
}

/// The `.toml` files under `path`, subdirectories included (so `run
/// scenarios` runs `scenarios/regressions/` too), at most `depth` levels
/// deep. `seen` holds the canonical paths already taken, so a file reached
/// twice (two arguments, a symlink to a directory) runs once and a symlink
/// loop ends. A path that cannot be read (missing, a loop of symlinks, no
/// permission) is an error saying why.
fn collect_toml(
    path: &Path,
    files: &mut Vec<PathBuf>,
    seen: &mut std::collections::BTreeSet<PathBuf>,
    depth: u32,
) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    let canonical = std::fs::canonicalize(path)?;
    if !seen.insert(canonical) {
        return Ok(());
    }
    if meta.is_dir() {
        if depth == 0 {
            return Ok(());
        }
        let mut entries = std::fs::read_dir(path)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<Vec<_>>>()?;
        entries.sort();
        for entry in entries {
            if entry.is_dir() || entry.extension().is_some_and(|ext| ext == "toml") {
                collect_toml(&entry, files, seen, depth - 1)?;
            }
        }
    } else {
        files.push(path.to_path_buf());
    }
    Ok(())
}
