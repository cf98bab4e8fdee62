//! Command line. Model: the arguments (clap), and one function per
//! subcommand, each returning a typed [`Outcome`]. Nothing here prints:
//! outcomes, announcements (a run's seed and parameters before its first
//! step, the determinism rule), streamed runs and errors all go through
//! [`crate::report`], which also holds the one [`Exit`] code type.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lanesim::planted::{Planted, PlantedBug, CATALOGUE};

use crate::targets::Subject;

use crate::hunt::shrink::Budget;
use crate::hunt::strategy::HuntWorld;
use crate::hunt::{self, HuntConfig};
use crate::real;
use crate::report::{self, announce, print, Outcome, Shown, EXIT_CODES};
use crate::run::selftest::{self, catalogue_contracts, TURMOIL_LAYER};
use crate::run::sweep::{self, Plan, Shard, SweepReport, Tally, Watch};
use crate::run::{self, RunResult};
use crate::scenario::{Scenario, SeedRange};

pub use crate::report::{Exit, Format};

/// Deterministic simulation testbed for per-key ordering lanes and
/// node-to-node senders.
#[derive(Parser, Debug)]
#[command(name = "lanesim", version, about, after_help = EXIT_CODES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the scenarios under the given files or directories, the coverage
    /// marks, and the planted bugs this build can select.
    #[command(after_help = "Examples:
  lanesim list                        every shipped scenario, the marks, the planted bugs
  lanesim list scenarios/mesh_*.toml  some scenarios, with their contracts and seeds")]
    List {
        /// Scenario files or directories (default: `scenarios`).
        paths: Vec<PathBuf>,
    },
    /// Run scenarios over seeds and decide every run against its contracts
    /// and every sweep against the marks its scenario must reach.
    #[command(after_help = "Examples:
  lanesim run scenarios                                    every scenario on its own seeds
  lanesim run scenarios/sender_chaos.toml --seeds 0..10000 --jobs 4
  lanesim run scenarios --seeds 0..100000 --for 50m --shard 0/4 --format json > shard-0.json
  lanesim run scenarios --format jsonl > runs.jsonl        a line per run, then a summary line
  lanesim run scenarios --junit report.xml --marks         JUnit for CI, and the mark table
  lanesim run scenarios/sender_fifo.toml --real            on real tokio and loopback TCP")]
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
        /// Also print the mark table: how many seeds of each scenario
        /// reached each coverage mark (by default only the required marks a
        /// sweep missed are printed).
        #[arg(long)]
        marks: bool,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
        /// Run on the production path instead of in simulation: a real
        /// tokio runtime and real loopback TCP, faults made for real, the
        /// same checkers. Sender-world scenarios only; not deterministic
        /// (the seed fixes the parameters only); one run at a time;
        /// default seeds: each scenario's first three.
        #[arg(long, conflicts_with_all = ["shard", "for_", "junit"])]
        real: bool,
    },
    /// Fold the `--format json` reports of a sweep's shards into the report
    /// of the whole sweep, with the exit code the unsharded run would have.
    #[command(after_help = "Examples:
  lanesim merge shard-0.json shard-1.json shard-2.json shard-3.json
  lanesim merge shard-*.json --format json --junit report.xml")]
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
    /// Re-run one seed, printing its parameters, its verdict with the
    /// events that prove it, and its marks; `-v` also prints every event of
    /// its log, `-vv` the production code's log as it runs (RUST_LOG
    /// filters it).
    #[command(after_help = "Examples:
  lanesim replay scenarios/lanes_reap_race.toml --seed 7
  lanesim replay scenarios/regressions/kill_inside_partition.toml   a one-seed file needs no --seed
  lanesim replay scenarios/sender_chaos.toml --seed 3 -v            with every event of its log
  lanesim replay scenarios/mesh_chaos.toml --seed 1 --trace trace.json   open it at ui.perfetto.dev")]
    Replay {
        /// The scenario file.
        path: PathBuf,
        /// The seed (default: the file's, when it pins one).
        #[arg(long)]
        seed: Option<u64>,
        /// `-v`: print every event of the run's log after it; `-vv`: also
        /// the production code's log as it runs.
        #[arg(short, long, action = clap::ArgAction::Count)]
        verbose: u8,
        /// Also write the run as a Chrome / Perfetto trace-event file in
        /// virtual time (open it at ui.perfetto.dev).
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Plant each bug in turn and report which scenarios catch it, by a
    /// contract the catalogue lists for it, in what share of their seeds
    /// (needs a `--features planted-bugs` build).
    #[command(after_help = "Examples:
  cargo run --release --features planted-bugs -- selftest
  cargo run --release --features planted-bugs -- selftest scenarios/mesh_*.toml --format json")]
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
    #[command(after_help = "Examples:
  lanesim bench                    seeds/s per scenario, real vs simulated, the harness's cost
  lanesim bench --no-real scenarios/lanes_order.toml
  cargo run --release --features planted-bugs -- bench --detection")]
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
    #[command(after_help = "Examples:
  lanesim hunt --world mesh --for 10m --jobs 4
  lanesim hunt --seed 1 --cases 1000 --jobs 2          what CI runs: fixed seed, fixed cases
  lanesim hunt --world sender --keep-going --format json > hunt.json")]
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
        /// Output format: `human`, or `json` (one document on stdout: the
        /// hunt's counts, marks and each failure with its repro).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Shrink a failing seed of a scenario to a small exact scenario file
    /// that fails the same way.
    #[command(after_help = "Examples:
  lanesim shrink scenarios/sender_chaos.toml --seed 340
  cargo run --features planted-bugs -- shrink scenarios/lanes_order.toml --seed 5 --bug pending-decremented-at-dequeue")]
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
    /// Run each seed of each real-capable scenario both in simulation and
    /// for real (`run --real`): verdicts (they must agree), coverage marks
    /// each side reached, wall time real vs simulated. A disagreement
    /// exits 6, naming scenario and seed.
    #[command(after_help = "Examples:
  lanesim fidelity                                  every real-capable scenario, seeds 0..3
  lanesim fidelity scenarios/sender_wedged_peer.toml --seeds 0..10")]
    Fidelity {
        /// Scenario files or directories.
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Seed range `A..B` or `A..=B`.
        #[arg(long, default_value = "0..3")]
        seeds: SeedRange,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Run each seed twice and compare the event-log hashes.
    #[command(after_help = "Examples:
  lanesim audit scenarios --seeds 0..8          each seed twice in this process
  lanesim audit scenarios --seeds 0..8 --processes   a sweep in two processes, line by line")]
    Audit {
        /// Scenario files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed range `A..B` or `A..=B`.
        #[arg(long, default_value = "0..8")]
        seeds: SeedRange,
        /// Instead, run the sweep in two separate processes (one thread,
        /// then two) and compare every run they stream: verdict, marks and
        /// event-log hash. Catches what one process hides (a hash map
        /// seeded per process, an address-dependent order).
        #[arg(long)]
        processes: bool,
    },
}

/// Runs the CLI on the process arguments, testing lanesim's own components.
#[must_use]
pub fn main() -> ExitCode {
    main_with(&Subject::default())
}

/// Runs the CLI on the process arguments, testing `base` (a `--bug` plants
/// into lanesim's own components only).
#[must_use]
pub fn main_with(base: &Subject) -> ExitCode {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A user's runner run with no arguments (as `cargo test` runs a
    // harness-less test) runs every shipped scenario.
    if args.len() <= 1 && !base.is_builtin() {
        args.extend(["run".into(), crate::scenario::shipped::PREFIX.into()]);
    }
    let cli = match Cli::try_parse_from(args) {
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
    let exit = match dispatch(cli.command, base) {
        Ok(outcome) => {
            print(&outcome);
            outcome.exit()
        }
        Err(message) => {
            report::error(&message);
            Exit::Usage
        }
    };
    ExitCode::from(exit as u8)
}

fn dispatch(command: Command, base: &Subject) -> Result<Outcome, String> {
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
            marks,
            bug,
            real,
        } => run(
            &RunArgs {
                paths,
                seeds: seed.map(SeedRange::one).or(seeds),
                jobs: usize::from(jobs),
                wall: for_,
                shard: shard.unwrap_or(Shard::ALL),
                format,
                junit,
                verbose,
                marks,
                bug,
                real,
            },
            base,
        ),
        Command::Merge {
            files,
            format,
            junit,
        } => merge(&files, format, junit.as_deref()),
        Command::Replay {
            path,
            seed,
            verbose,
            trace,
            bug,
        } => replay(
            &path,
            seed,
            verbose,
            trace.as_deref(),
            subject(base, bug.as_deref())?,
        ),
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
            base,
        ))),
        Command::Audit {
            paths,
            seeds,
            processes: false,
        } => audit(&paths, seeds, base),
        Command::Audit {
            paths,
            seeds,
            processes: true,
        } => audit_processes(&paths, seeds),
        Command::Fidelity { paths, seeds, bug } => {
            fidelity(&paths, seeds, &subject(base, bug.as_deref())?)
        }
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
            format,
            bug,
        } => {
            if format == Format::Jsonl {
                return Err(
                    "hunt --format: jsonl streams a sweep's runs; use json or human".into(),
                );
            }
            let subject = subject(base, bug.as_deref())?;
            let regressions = match regressions {
                Some(path) => {
                    check_regressions(&path, true)?;
                    Some(path)
                }
                None if subject.planted().selected().is_none() => {
                    let path =
                        PathBuf::from(format!("proptest-regressions/hunt-{}.txt", world.name()));
                    check_regressions(&path, false)?;
                    Some(path)
                }
                None => None,
            };
            let config = HuntConfig {
                world,
                seed,
                cases: cases.or(for_.is_none().then_some(1_000)),
                wall: for_,
                jobs: usize::from(jobs),
                keep_going,
                subject,
                guided: !unguided,
                shrink: (!no_shrink).then(Budget::default),
                out,
                regressions,
            };
            hunt(&config, format)
        }
        Command::Shrink {
            path,
            seed,
            out,
            bug,
        } => shrink(&path, seed, &out, &subject(base, bug.as_deref())?),
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

fn hunt(config: &HuntConfig, format: Format) -> Result<Outcome, String> {
    let subject = &config.subject;
    let (lanes, node) = (subject.lanes().is_some(), subject.node().is_some());
    let lacking = match config.world {
        HuntWorld::Lanes => (!lanes).then_some("a lanes router"),
        HuntWorld::Sender => (!node).then_some("a node"),
        HuntWorld::Mesh => (!subject.node().is_some_and(|n| n.capabilities().accepts))
            .then_some("a node that accepts dials"),
        HuntWorld::Both => (!lanes && !node).then_some("a lanes router or a node"),
    };
    if let Some(what) = lacking {
        return Err(format!(
            "hunt --world {}: the target `{}` has no {what}",
            config.world.name(),
            subject.name()
        ));
    }
    let guidance = if config.guided { "guided" } else { "unguided" };
    let limit = match (config.cases, config.wall) {
        (Some(cases), Some(wall)) => format!("{cases} cases or {wall:?}"),
        (Some(cases), None) => format!("{cases} cases"),
        (None, Some(wall)) => format!("{wall:?}"),
        (None, None) => "no limit".into(),
    };
    announce(
        format,
        &format!(
            "hunt --seed {} --world {}: {limit}, {} job(s), {guidance}{}",
            config.seed,
            config.world.name(),
            config.jobs,
            config
                .subject
                .planted()
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
    Ok(Outcome::Hunt {
        report,
        subject: config.subject.clone(),
        format,
    })
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
    let chases = hunt::bench::detection(&TURMOIL_LAYER, seeds, wall, &report::chase_done);
    Ok(Outcome::Detection(chases, wall))
}

fn shrink(path: &Path, seed: u64, out: &Path, subject: &Subject) -> Result<Outcome, String> {
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
        subject,
        Budget::default(),
        out,
    )
    .map_err(|why| format!("{}: seed {seed}: {why}", path.display()))?;
    Ok(Outcome::Shrink {
        found: Box::new(found),
        subject: subject.clone(),
    })
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
    marks: bool,
    bug: Option<String>,
    real: bool,
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
                    &format!("  seed {seed}: {}", scenario.sample(seed)),
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

fn run(args: &RunArgs, base: &Subject) -> Result<Outcome, String> {
    let subject = subject(base, args.bug.as_deref())?;
    if args.real {
        return run_real(args, &subject);
    }
    let scenarios = load_all(&args.paths)?;
    sweep_memory(&scenarios, args.jobs)?;
    let plan = Plan {
        scenarios: &scenarios,
        seeds: args.seeds,
        shard: args.shard,
        wall: args.wall,
        jobs: args.jobs,
        subject: subject.clone(),
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
                    &format!("  seed {seed}: {}", scenario.sample(seed)),
                );
            }
            let outcome = real::execute_real(scenario, seed, subject);
            report::real_run(&outcome);
            runs.push(outcome);
        }
    }
    Ok(Outcome::Real(runs))
}

fn write_junit(path: &Path, report: &SweepReport) -> Result<(), String> {
    let xml = report::sweep::junit(report).map_err(|e| format!("--junit: {e}"))?;
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

/// The largest regressions file `hunt` reads: one line per saved failure,
/// about 200 bytes each.
const MAX_REGRESSIONS_BYTES: u64 = 1024 * 1024;

/// Checks a regressions file before the hunt replays it (proptest's reader
/// skips what it cannot parse, and reads anything whole): a regular file
/// of at most [`MAX_REGRESSIONS_BYTES`], every line a comment, blank, or
/// `cc <64 hex digits>` with an optional `# comment`. A path given on the
/// command line must exist; the default one may not yet.
fn check_regressions(path: &Path, explicit: bool) -> Result<(), String> {
    let shown = path.display();
    if !explicit && !path.exists() {
        return Ok(());
    }
    if explicit && !path.exists() {
        return Err(format!(
            "--regressions {shown}: no such file (create an empty one to start a new file)"
        ));
    }
    let bytes = crate::input::read_bounded(path, MAX_REGRESSIONS_BYTES, "a regressions file")
        .map_err(|e| format!("--regressions {shown}: {e}"))?;
    let text =
        String::from_utf8(bytes).map_err(|e| format!("--regressions {shown}: not UTF-8: {e}"))?;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let seed = line
            .strip_prefix("cc ")
            .map(|rest| rest.split('#').next().unwrap_or_default().trim());
        if !seed.is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit())) {
            return Err(format!(
                "{shown}:{}: not a saved case: a line is `cc <64 hex digits>`, blank, or a `#` comment",
                index + 1
            ));
        }
    }
    Ok(())
}

/// Reads `path` as UTF-8 text of at most `max` bytes.
fn read_bounded(path: &Path, max: u64) -> Result<String, String> {
    let bytes = crate::input::read_bounded(path, max, "a shard report")
        .map_err(|e| format!("{}: {e}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))
}

fn replay(
    path: &Path,
    seed: Option<u64>,
    verbose: u8,
    trace: Option<&Path>,
    subject: Subject,
) -> Result<Outcome, String> {
    let scenario = Scenario::load(path).map_err(|e| e.to_string())?;
    let own = scenario.default_seeds();
    let seed = match seed {
        Some(seed) => seed,
        None if own.len() == 1 => own.into_iter().next().unwrap_or(0),
        None => {
            return Err(format!(
                "replay {}: give --seed: the file's seeds are {own}",
                path.display()
            ))
        }
    };
    // Refused before the run, not after it.
    if let Some(trace) = trace {
        check_writable(trace).map_err(|e| format!("--trace {}: {e}", trace.display()))?;
    }
    init_tracing(if verbose >= 2 {
        "lanesim=debug"
    } else {
        "warn"
    });
    announce(
        Format::Human,
        &format!("replay {} seed {seed}", scenario.path.display()),
    );
    announce(Format::Human, &format!("params: {}", scenario.sample(seed)));
    let result = run::execute(&scenario, seed, &subject);
    let wrote = match trace {
        Some(trace) => {
            let document = report::trace::document(&result);
            std::fs::write(trace, document.to_string())
                .map_err(|e| format!("--trace {}: {e}", trace.display()))?;
            Some(trace.to_path_buf())
        }
        None => None,
    };
    Ok(Outcome::Replay {
        result: Box::new(result),
        subject,
        events: verbose >= 1,
        wrote,
    })
}

/// Whether `path` can be written: its directory exists and it is not a
/// directory or a special file (checked before a run, so a typo does not
/// cost one).
fn check_writable(path: &Path) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!("no such directory: {}", dir.display()));
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err("not a regular file".into()),
        Ok(meta) if meta.permissions().readonly() => Err("read-only".into()),
        _ => Ok(()),
    }
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

fn audit(paths: &[PathBuf], seeds: SeedRange, subject: &Subject) -> Result<Outcome, String> {
    let scenarios = load_all(paths)?;
    Ok(Outcome::Audit {
        audits: scenarios
            .iter()
            .map(|scenario| {
                (
                    scenario.name.clone(),
                    seeds.len(),
                    run::audit(scenario, seeds, subject),
                )
            })
            .collect(),
        target: (!subject.is_builtin()).then(|| subject.name().to_string()),
    })
}

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

/// Refuses, as bad input, a scenario real mode cannot take.
fn refuse_bad_for_real(scenarios: &[Scenario]) -> Result<(), String> {
    for scenario in scenarios {
        if let Some(why) = real::bad_for_real(scenario) {
            return Err(format!("{}: {why}", scenario.path.display()));
        }
    }
    Ok(())
}

fn fidelity(paths: &[PathBuf], seeds: SeedRange, subject: &Subject) -> Result<Outcome, String> {
    let scenarios = load_all(paths)?;
    refuse_bad_for_real(&scenarios)?;
    announce(Format::Human, report::REAL_NOTE);
    let mut found = Vec::new();
    for scenario in &scenarios {
        announce(
            Format::Human,
            &format!("{}: seeds {seeds}, simulated and real", scenario.name),
        );
        found.push(real::fidelity(scenario, seeds, subject));
    }
    Ok(Outcome::Fidelity(found))
}

/// Runs the sweep in two child processes of this binary (`--jobs 1`, then
/// `--jobs 2`) streaming JSON lines, and compares them run by run.
fn audit_processes(paths: &[PathBuf], seeds: SeedRange) -> Result<Outcome, String> {
    load_all(paths)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let sweep = |jobs: &str| -> Result<Vec<String>, String> {
        let out = std::process::Command::new(&exe)
            .arg("run")
            .args(paths)
            .args([
                "--seeds",
                &seeds.to_string(),
                "--jobs",
                jobs,
                "--format",
                "jsonl",
            ])
            .env("NO_COLOR", "1")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if out.stdout.is_empty() {
            return Err(format!(
                "the sweep with --jobs {jobs} streamed nothing: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        // The runs' lines; the summary record ends the stream and carries
        // the wall time, which differs from process to process.
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|line| !line.starts_with("{\"summary\""))
            .map(str::to_string)
            .collect())
    };
    let (first, second) = (sweep("1")?, sweep("2")?);
    let difference = run::first_line_difference(&first, &second);
    Ok(Outcome::AuditProcesses {
        runs: first.len() as u64,
        difference,
    })
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

/// What a subcommand tests: `base`, or lanesim's own components with the
/// bug `--bug` names planted.
fn subject(base: &Subject, bug: Option<&str>) -> Result<Subject, String> {
    match bug {
        None => Ok(base.clone()),
        Some(name) if !base.is_builtin() => Err(format!(
            "--bug {name}: planted bugs are lanesim's own components'; the target `{}` has none",
            base.name()
        )),
        Some(name) => planted(Some(name)).map(Subject::lanesim),
    }
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
///
/// # Errors
/// The first path or file that does not load, said as the CLI says it.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    let mut files = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for path in paths {
        if let Some(shipped) = crate::scenario::shipped::under(path) {
            if shipped.is_empty() {
                return Err(format!(
                    "{}: no shipped scenario there (`list @shipped` lists them)",
                    path.display()
                ));
            }
            files.extend(shipped);
            continue;
        }
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
    files.dedup();
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

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::Cli;

    /// Every subcommand's `--help` ends with examples, and each example
    /// that names the binary (`lanesim ...`, or `cargo run ... -- ...`)
    /// parses as written: its flags are real.
    #[test]
    fn every_subcommands_help_has_examples_that_parse() {
        let cli = Cli::command();
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
            let help = sub
                .get_after_help()
                .map(ToString::to_string)
                .unwrap_or_default();
            assert!(
                help.starts_with("Examples:"),
                "{} has no examples",
                sub.get_name()
            );
            let examples: Vec<&str> = help.lines().skip(1).collect();
            assert!(!examples.is_empty(), "{}", sub.get_name());
            for line in examples {
                // A comment follows two spaces or more; a redirection is
                // the shell's.
                let command = line.trim().split("  ").next().unwrap_or_default();
                let command = command.split(" >").next().unwrap_or_default();
                let words: Vec<&str> = match command.split_once(" -- ") {
                    Some((_, args)) => std::iter::once("lanesim")
                        .chain(args.split_whitespace())
                        .collect(),
                    None => command.split_whitespace().collect(),
                };
                assert_eq!(words.first(), Some(&"lanesim"), "{line}");
                if let Err(error) = Cli::try_parse_from(&words) {
                    panic!("`{line}` does not parse: {error}");
                }
            }
        }
    }
}
