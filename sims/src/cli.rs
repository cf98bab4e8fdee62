//! Command line: parse, dispatch, map outcomes to exit codes (0 pass,
//! 1 contract violated, 2 bad input or usage, 3 liveness, 4 crash).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use lanesim::planted::{Planted, PlantedBug, CATALOGUE};

use crate::run::{self, report, selftest, Verdict};
use crate::scenario::{parse_seed_range, Scenario};

/// Deterministic simulation testbed for per-key ordering lanes and
/// node-to-node senders.
#[derive(Parser, Debug)]
#[command(name = "lanesim", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Human,
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the scenarios under the given files or directories, and the
    /// planted bugs this build can select.
    List {
        /// Scenario files or directories (default: `scenarios`).
        paths: Vec<PathBuf>,
    },
    /// Run scenarios over seeds and decide every run against its contracts.
    Run {
        /// Scenario files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// One seed.
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// A seed range `A..B` (B excluded); default: each scenario's own.
        #[arg(long)]
        seeds: Option<String>,
        /// Parallel jobs (threads); results are identical to `--jobs 1`.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Print every run's seed and sampled parameters before it starts.
        #[arg(long, short)]
        verbose: bool,
        /// Plant this bug (needs a `--features planted-bugs` build).
        #[arg(long)]
        bug: Option<String>,
    },
    /// Re-run one seed, printing its parameters, its events (RUST_LOG
    /// filters them, default `lanesim::event=debug`) and its verdict.
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
    /// Check that every planted bug visible to the simulated worlds is caught
    /// by some scenario (needs a `--features planted-bugs` build).
    Selftest {
        /// Scenario files or directories.
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Seeds tried per scenario before a bug counts as escaped.
        #[arg(long, default_value_t = 500)]
        max_seeds: u64,
    },
    /// Measure the testbed: seeds/s per scenario, the wedged-peer exchange
    /// real vs simulated, and the harness against bare turmoil.
    Bench {
        /// Scenario files or directories.
        #[arg(default_value = "scenarios")]
        paths: Vec<PathBuf>,
        /// Seeds per scenario.
        #[arg(long, default_value = "0..200")]
        seeds: String,
        /// Skip the 5 s real loopback exchange.
        #[arg(long)]
        no_real: bool,
    },
    /// Run each seed twice and compare the event-log hashes.
    Audit {
        /// Scenario files or directories.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seed range `A..B`.
        #[arg(long, default_value = "0..8")]
        seeds: String,
    },
}

/// Runs the CLI on the process arguments.
#[must_use]
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
        }
    };
    match dispatch(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn dispatch(command: Command) -> Result<u8, String> {
    match command {
        Command::List { paths } => list(&paths),
        Command::Run {
            paths,
            seed,
            seeds,
            jobs,
            format,
            verbose,
            bug,
        } => {
            let planted = planted(bug.as_deref())?;
            let scenarios = load_all(&paths)?;
            let explicit = match (seed, seeds) {
                (Some(seed), _) => Some(seed..seed + 1),
                (None, Some(text)) => Some(
                    parse_seed_range(&text)
                        .ok_or(format!("--seeds: expected A..B with A < B, got {text}"))?,
                ),
                (None, None) => None,
            };
            let mut work = Vec::new();
            for scenario in &scenarios {
                let seeds = explicit.clone().unwrap_or_else(|| scenario.default_seeds());
                println!(
                    "{} ({}): seeds {}..{}",
                    scenario.name,
                    scenario.path.display(),
                    seeds.start,
                    seeds.end
                );
                for seed in seeds {
                    if verbose
                        || explicit
                            .as_ref()
                            .is_some_and(|range| range.end - range.start == 1)
                    {
                        println!("  seed {seed}: {}", scenario.sample(seed));
                    }
                    work.push((scenario, seed));
                }
            }
            let results = run::sweep(&work, jobs, planted, false);
            match format {
                Format::Human => print!("{}", report::human(&results, planted)),
                Format::Json => println!("{}", report::json(&results, planted)),
            }
            Ok(results
                .iter()
                .map(|r| r.verdict)
                .max()
                .unwrap_or(Verdict::Pass)
                .exit_code())
        }
        Command::Replay { path, seed, bug } => {
            let planted = planted(bug.as_deref())?;
            let scenario = Scenario::load(&path).map_err(|e| e.to_string())?;
            init_tracing("lanesim::event=debug");
            println!("replay {} seed {seed}", scenario.path.display());
            println!("params: {}", scenario.sample(seed));
            let result = run::execute(&scenario, seed, planted);
            print!("{}", report::human(std::slice::from_ref(&result), planted));
            println!(
                "event log hash: {:016x} ({} events)",
                result.hash,
                result.records.len()
            );
            Ok(result.verdict.exit_code())
        }
        Command::Selftest { paths, max_seeds } => {
            if CATALOGUE.is_empty() {
                return Err("selftest needs planted bugs: use `cargo run --features planted-bugs -- selftest`".into());
            }
            let scenarios = load_all(&paths)?;
            let caught = selftest::selftest(&selftest::TURMOIL_LAYER, &scenarios, max_seeds);
            let mut escaped = 0;
            for c in &caught {
                match &c.by {
                    Some((scenario, seed, contracts)) => {
                        let contracts: Vec<&str> = contracts.iter().map(|c| c.id()).collect();
                        println!(
                            "#{:<3} {:<32} caught by {scenario} seed {seed} [{}] after {} run(s)",
                            c.bug.catalogue_id(),
                            c.bug.name(),
                            contracts.join(", "),
                            c.runs
                        );
                    }
                    None => {
                        escaped += 1;
                        println!(
                            "#{:<3} {:<32} ESCAPED after {} run(s)",
                            c.bug.catalogue_id(),
                            c.bug.name(),
                            c.runs
                        );
                    }
                }
            }
            println!(
                "selftest: {} caught, {escaped} escaped",
                caught.len() - escaped
            );
            Ok(u8::from(escaped > 0))
        }
        Command::Bench {
            paths,
            seeds,
            no_real,
        } => {
            let seeds = parse_seed_range(&seeds)
                .ok_or(format!("--seeds: expected A..B with A < B, got {seeds}"))?;
            bench(&load_all(&paths)?, seeds, no_real);
            Ok(0)
        }
        Command::Audit { paths, seeds } => {
            let seeds = parse_seed_range(&seeds)
                .ok_or(format!("--seeds: expected A..B with A < B, got {seeds}"))?;
            let scenarios = load_all(&paths)?;
            let mut diverged = 0;
            for scenario in &scenarios {
                let divergences = run::audit(scenario, seeds.clone(), Planted::none());
                println!(
                    "{}: {} seeds x2, {} divergence(s)",
                    scenario.name,
                    seeds.end - seeds.start,
                    divergences.len()
                );
                for d in &divergences {
                    println!("  seed {} diverges at event {}:", d.seed, d.index);
                    println!(
                        "    first:  {}",
                        d.first
                            .as_ref()
                            .map_or("<end of log>".into(), ToString::to_string)
                    );
                    println!(
                        "    second: {}",
                        d.second
                            .as_ref()
                            .map_or("<end of log>".into(), ToString::to_string)
                    );
                }
                diverged += divergences.len();
            }
            println!("audit: {diverged} divergence(s)");
            Ok(u8::from(diverged > 0))
        }
    }
}

fn bench(scenarios: &[Scenario], seeds: std::ops::Range<u64>, no_real: bool) {
    use crate::run::bench;
    println!("| scenario | seeds | seeds/s (1 core) | virtual s / wall s |");
    println!("|---|---|---|---|");
    for scenario in scenarios {
        let b = bench::scenario(scenario, seeds.clone());
        println!(
            "| {} | {} | {:.0} | {:.0} |",
            b.name, b.seeds, b.seeds_per_sec, b.virtual_per_wall
        );
    }
    println!();
    // Medians of 7: these machines are shared and noisy.
    let mut ticks = Vec::new();
    for tick in [1, 10, 50, 100] {
        let mut runs: Vec<(std::time::Duration, std::time::Duration)> = (0..7)
            .map(|_| bench::wedged_exchange_sim(std::time::Duration::from_millis(tick)))
            .collect();
        runs.sort_by_key(|run| run.1);
        let (virtual_time, wall) = runs[3];
        println!("wedged exchange, turmoil tick {tick} ms: {virtual_time:?} virtual in {wall:?} wall (median of 7)");
        ticks.push((tick, wall));
    }
    if !no_real {
        let real = bench::wedged_exchange_real();
        println!("wedged exchange, real loopback TCP: {real:?} wall");
        for (tick, wall) in ticks {
            println!(
                "ratio real / simulated at tick {tick} ms: {:.0}x",
                real.as_secs_f64() / wall.as_secs_f64()
            );
        }
    }
    println!();
    for scenario in scenarios
        .iter()
        .filter(|s| s.file.world == crate::scenario::WorldKind::Sender)
    {
        let mut harness = std::time::Duration::ZERO;
        let mut bare = std::time::Duration::ZERO;
        for seed in seeds.clone().take(20) {
            let started = std::time::Instant::now(); // wall-clock: ok (benchmark)
            let _ = run::execute(scenario, seed, Planted::none());
            harness += started.elapsed();
            bare += bench::bare_turmoil(&scenario.sample(seed), seed);
        }
        println!(
            "{}: harness {:?} vs bare turmoil {:?} over 20 seeds: {:.2}x",
            scenario.name,
            harness,
            bare,
            harness.as_secs_f64() / bare.as_secs_f64()
        );
    }
}

fn init_tracing(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
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
    select(bug)
}

#[cfg(feature = "planted-bugs")]
fn select(bug: PlantedBug) -> Result<Planted, String> {
    Ok(Planted::bug(bug))
}

#[cfg(not(feature = "planted-bugs"))]
fn select(bug: PlantedBug) -> Result<Planted, String> {
    Err(format!(
        "--bug {}: this build has no planted bugs; use `cargo run --features planted-bugs -- ...`",
        bug.name()
    ))
}

/// Loads every scenario under `paths`, sorted by path; the first bad file is
/// the error.
fn load_all(paths: &[PathBuf]) -> Result<Vec<Scenario>, String> {
    let mut files = Vec::new();
    for path in paths {
        collect_toml(path, &mut files).map_err(|error| format!("{}: {error}", path.display()))?;
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err("no scenario files found".into());
    }
    files
        .iter()
        .map(|file| Scenario::load(file).map_err(|error| error.to_string()))
        .collect()
}

fn list(paths: &[PathBuf]) -> Result<u8, String> {
    let defaults = [PathBuf::from("scenarios")];
    let paths = if paths.is_empty() {
        &defaults[..]
    } else {
        paths
    };
    let scenarios = load_all(paths)?;
    println!("scenarios ({}):", scenarios.len());
    for scenario in &scenarios {
        let checks: Vec<&str> = scenario.file.checks.iter().map(|c| c.id()).collect();
        println!(
            "  {:<28} {:<7} [{}]",
            scenario.name,
            format!("{:?}", scenario.file.world).to_lowercase(),
            checks.join(", ")
        );
        println!(
            "      {}",
            scenario
                .file
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    if CATALOGUE.is_empty() {
        println!("planted bugs: none in this build (build with --features planted-bugs)");
    } else {
        println!("planted bugs ({}):", CATALOGUE.len());
        for bug in CATALOGUE {
            println!("  #{:<3} {}", bug.catalogue_id(), bug.name());
        }
    }
    Ok(0)
}

fn collect_toml(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_dir() {
        for entry in std::fs::read_dir(path)? {
            let entry = entry?.path();
            if entry.extension().is_some_and(|ext| ext == "toml") {
                files.push(entry);
            }
        }
        Ok(())
    } else if path.is_file() {
        files.push(path.to_path_buf());
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file or directory",
        ))
    }
}
