//! The subcommands that examine the testbed itself rather than hunt in the
//! target: `selftest` (does each planted bug get caught), `audit` (is a run
//! deterministic, in one process or across two), `fidelity` (does
//! simulation agree with real mode), `bench` (how fast) and `list` (what
//! there is to run).

use std::path::PathBuf;

use lanesim::planted::{PlantedBug, CATALOGUE};

use super::inputs::{load_all, refuse_bad_for_real};
use crate::chase;
use crate::hunt::shrink::Expect;
use crate::real;
use crate::report::{self, announce, Format, Outcome};
use crate::run;
use crate::run::selftest::{self, catalogue_contracts};
use crate::run::Verdict;
use crate::scenario::Contract;
use crate::scenario::SeedRange;
use crate::targets::Subject;

pub(super) fn selftest(
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

pub(super) fn audit(
    paths: &[PathBuf],
    seeds: SeedRange,
    subject: &Subject,
) -> Result<Outcome, String> {
    let scenarios = load_all(paths)?;
    let mut audits: Vec<run::Audited> = scenarios
        .iter()
        .map(|scenario| run::audit_scenario(scenario, seeds, subject))
        .collect();
    // The first few divergences are run again in two fresh processes: a
    // seed that replays there but not twice in one process keeps state in
    // a static (`run::diverge`).
    let mut tried = 0;
    for (audited, scenario) in audits.iter_mut().zip(&scenarios) {
        for divergence in &mut audited.divergences {
            if tried == FRESH_TRIES {
                break;
            }
            tried += 1;
            divergence.fresh = fresh_agree(&scenario.path, divergence.seed, subject);
        }
    }
    Ok(Outcome::Audit {
        audits,
        target: (!subject.is_builtin()).then(|| subject.name().to_string()),
    })
}

/// Divergences `audit` runs again in two fresh processes.
const FRESH_TRIES: usize = 3;

/// Whether seed `seed` of the scenario at `path`, run once in each of two
/// fresh processes of this binary, has the same event-log hash in both
/// (`None`: a process could not be run or said no hash).
fn fresh_agree(path: &std::path::Path, seed: u64, subject: &Subject) -> Option<bool> {
    let exe = std::env::current_exe().ok()?;
    let hash = || -> Option<String> {
        let mut command = std::process::Command::new(&exe);
        command
            .arg("run")
            .arg(path)
            .args(["--seed", &seed.to_string(), "--format", "jsonl"]);
        if let Some(bug) = subject.planted().selected() {
            command.args(["--bug", bug.name()]);
        }
        let out = command.env("NO_COLOR", "1").output().ok()?;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).ok()?;
                value["hash"].as_str().map(str::to_string)
            })
    };
    Some(hash()? == hash()?)
}

pub(super) fn fidelity(
    paths: &[PathBuf],
    named: bool,
    seeds: SeedRange,
    subject: &Subject,
) -> Result<Outcome, String> {
    let scenarios = load_all(paths)?;
    refuse_bad_for_real(&scenarios)?;
    announce(Format::Human, report::REAL_NOTE);
    let mut found = Vec::new();
    for scenario in &scenarios {
        announce(
            Format::Human,
            &format!("{}: seeds {seeds}, simulated and real", scenario.name),
        );
        let fidelity = real::fidelity(scenario, seeds, subject);
        // A seed that fails only for real is chased into the simulation.
        for seed in fidelity.seeds.iter().filter(|s| !s.simulated.is_failure()) {
            let expect = match seed.real {
                Some(Verdict::Violated) => seed.broken.1.first().and_then(|id| {
                    Contract::ALL
                        .into_iter()
                        .find(|c| c.id() == id)
                        .map(Expect::Violates)
                }),
                Some(Verdict::Liveness) => Some(Expect::Liveness),
                Some(Verdict::Crash) => Some(Expect::Crash),
                Some(Verdict::Pass | Verdict::Hazard) | None => None,
            };
            if let Some(expect) = expect {
                let out = super::output::chased(subject);
                let chase = chase::chase(
                    scenario,
                    seed.seed,
                    expect,
                    subject,
                    chase::Budget::default(),
                    &out,
                );
                report::chased(&chase, subject);
            }
        }
        found.push(fidelity);
    }
    Ok(Outcome::Fidelity { found, named })
}

/// Runs the sweep in two child processes of this binary (`--jobs 1`, then
/// `--jobs 2`) streaming JSON lines, and compares them run by run.
pub(super) fn audit_processes(paths: &[PathBuf], seeds: SeedRange) -> Result<Outcome, String> {
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

/// `bench`: seeds/s per scenario, real vs simulated, the harness's cost.
pub(super) fn bench(
    paths: &[PathBuf],
    seeds: SeedRange,
    no_real: bool,
    base: &Subject,
) -> Result<Outcome, String> {
    Ok(Outcome::Bench(run::bench::report(
        &load_all(paths)?,
        seeds,
        no_real,
        base,
    )))
}

pub(super) fn list(paths: &[PathBuf]) -> Result<Outcome, String> {
    let defaults = [PathBuf::from("scenarios")];
    let paths = if paths.is_empty() {
        &defaults[..]
    } else {
        paths
    };
    Ok(Outcome::List(load_all(paths)?))
}
