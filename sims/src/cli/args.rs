//! The `lanesim` command line as clap reads it: [`Cli`], one [`Command`]
//! variant per subcommand with its flags, help text and examples, and the
//! parsers of the values they take (`--jobs`, `--for`). Its test checks
//! that every subcommand's examples parse.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::hunt::strategy::HuntWorld;
use crate::report::{Format, EXIT_CODES};
use crate::run::sweep::Shard;
use crate::scenario::SeedRange;

/// Deterministic simulation testbed for per-key ordering lanes and
/// node-to-node senders.
#[derive(Parser, Debug)]
#[command(name = "lanesim", version, about, after_help = EXIT_CODES)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
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
  lanesim run scenarios --reach                            each required mark's count and share
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
        /// Also print, per scenario, each mark it requires: the seeds that
        /// reached it, their share, and the floor it is held to (the
        /// figures behind a `reaches` line, as this sweep measured them).
        #[arg(long)]
        reach: bool,
        /// Accept a scenario whose reach requirements the target decides
        /// none of (its marks and roles are lanesim's, or the target maps
        /// none): reported as not decided, but not exit 5.
        #[arg(long)]
        accept_undecided: bool,
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
        /// Where shrunk scenarios are written (default: target/lanesim/shrunk;
        /// a user's runner: TARGET/lanesim/NAME/shrunk, TARGET its target dir
        /// and NAME its targets').
        #[arg(long)]
        out: Option<PathBuf>,
        /// proptest's regression file: its seeds are replayed first and a
        /// failure's seed is saved (default: proptest-regressions/hunt-WORLD.txt,
        /// not written when a bug is planted; a user's runner:
        /// TARGET/lanesim/NAME/regressions/hunt-WORLD.txt).
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
    /// Run the lanes target, and a sender over lanesim's connection layer,
    /// under a model checker (shuttle): small workloads of racing producers
    /// (or of enqueues racing a shutdown, a disconnect, a write's
    /// deadline), every interleaving of their steps explored by a seeded
    /// scheduler, each execution decided by the lanes or sender checkers
    /// (L1-L5; DC-1, DC-2, DC-5, S3, S4, S6, S7); the first broken one is
    /// printed with the command that replays it. Rebuilds itself with `--cfg shuttle` in
    /// a target directory of its own (`target/model`) when this build has
    /// no checker.
    #[command(after_help = "Examples:
  lanesim model                                         every workload, PCT (depth 3) then random, 1000 executions each
  lanesim model --workload route-then-drop --strategy random --executions 20000
  lanesim model --workload two-keys --strategy pct:2 --seed 7 --executions 31 -v   replay execution 30, with its log
  cargo run --release --features planted-bugs -- model --bug reap-reads-pending-outside-lock
  cargo run --release --features planted-bugs -- model --selftest   every bug of the model layer, caught or escaped")]
    Model {
        /// Workloads to run (default: all; `lanesim model --list` names them).
        #[arg(long = "workload", value_name = "NAME")]
        workloads: Vec<String>,
        /// List the workloads and what each sets up, and exit.
        #[arg(long)]
        list: bool,
        /// Plant each bug the model world must catch in lanesim's router in
        /// turn, and report which workloads catch it (needs a
        /// `--features planted-bugs` build; exit 7 if one escapes).
        #[arg(long, conflicts_with_all = ["bug", "workloads"])]
        selftest: bool,
        /// `pct:DEPTH` (DEPTH 1 to 16) or `random` (default: `pct:3`, then
        /// `random`).
        #[arg(long, value_parser = parse_strategy)]
        strategy: Option<lanesim_target::shim::explore::Strategy>,
        /// The schedulers' seed.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Executions per workload and strategy (1 to 10^8).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
        executions: u64,
        /// Scheduling steps one execution may take before it counts as
        /// never ending (100 to 10^8).
        #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(100..=100_000_000))]
        max_steps: u64,
        /// `-v`: print the log of a broken execution.
        #[arg(short, long, action = clap::ArgAction::Count)]
        verbose: u8,
        /// Output format.
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
        /// Where the shrunk scenario is written (default: as `hunt --out`).
        #[arg(long)]
        out: Option<PathBuf>,
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
        /// Scenario files or directories (default: every shipped scenario,
        /// those real mode cannot run listed as not compared; a scenario
        /// named here that real mode cannot compare falls short, exit 5).
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

/// The most cases one hunt may be given.
const MAX_CASES: u64 = 1_000_000_000_000;
/// The longest one hunt may be given: a week.
const MAX_WALL: Duration = Duration::from_secs(7 * 24 * 3600);

fn jobs_parser() -> clap::builder::RangedI64ValueParser<u16> {
    clap::value_parser!(u16).range(1..=256)
}

/// A model checker's strategy: `pct:DEPTH` or `random`.
fn parse_strategy(text: &str) -> Result<lanesim_target::shim::explore::Strategy, String> {
    use lanesim_target::shim::explore::Strategy;
    if text == "random" {
        return Ok(Strategy::Random);
    }
    let depth = text
        .strip_prefix("pct:")
        .and_then(|depth| depth.parse::<usize>().ok())
        .filter(|depth| (1..=16).contains(depth))
        .ok_or_else(|| {
            format!("expected `random` or `pct:DEPTH` with DEPTH 1 to 16; got \"{text}\"")
        })?;
    Ok(Strategy::Pct { depth })
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
