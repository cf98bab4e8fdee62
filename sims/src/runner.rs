//! The runner for a user's crate: the whole `lanesim` CLI, or a plain
//! `#[test]`, on the user's own implementations.
//!
//! A `harness = false` test (or a binary) with
//!
//! ```no_run
//! # struct MyTargets;
//! # impl lanesim_target::Targets for MyTargets { fn name(&self) -> &str { "mine" } }
//! lanesim_sims::main!(MyTargets);
//! ```
//!
//! gives every subcommand (`run`, `replay`, `hunt`, `shrink`, `audit`,
//! `replay --trace`, `run --real`, …) on `MyTargets`, with the shipped
//! scenarios at the path `@shipped`; run with no arguments (as `cargo
//! test` runs it) it runs `run @shipped`. Every repro line it prints is the
//! cargo command that runs it (`cargo test -p <package> --release --test
//! <name> -- replay …`, `run::Rerun`), so it reproduces in the user's
//! crate, after a `cargo clean` too.
//!
//! For an ordinary `#[test]`, [`Runner::check`] sweeps scenarios and fails
//! with the contract, the seed and the repro line of the first failure.

use std::fmt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use lanesim_target::Targets;

use crate::run::sweep::{sweep, Plan, Shard, SweepReport, Unwatched};
use crate::scenario::{Scenario, SeedRange};
use crate::targets::Subject;

/// Runs the testbed on a user's targets.
#[derive(Clone, Debug)]
pub struct Runner {
    subject: Subject,
    accept_undecided: bool,
}

impl Runner {
    /// A runner of `targets`. Their marks and preemption points become
    /// nameable by scenarios.
    pub fn new(targets: impl Targets) -> Self {
        Self {
            subject: Subject::user(Arc::new(targets)),
            accept_undecided: false,
        }
    }

    /// Repro lines start with `command` (what runs this runner, up to its
    /// `--`), e.g. `cargo test --test lanesim --`. [`crate::main!`] says
    /// how its binary is run instead ([`Runner::rerun`]).
    #[must_use]
    pub fn command(self, command: impl Into<String>) -> Self {
        Self {
            subject: self.subject.with_command(command),
            ..self
        }
    }

    /// [`Runner::check`] accepts a scenario whose reach requirements the
    /// target decides none of (as `run --accept-undecided` does): they are
    /// still reported as not decided.
    #[must_use]
    pub fn accept_undecided(self) -> Self {
        Self {
            accept_undecided: true,
            ..self
        }
    }

    /// Repro lines run this runner again as `rerun` says (a cargo test or
    /// binary target, with the features it was built with), with the
    /// profile the running binary was built with.
    #[must_use]
    pub fn rerun(self, rerun: crate::run::Rerun) -> Self {
        Self {
            subject: self.subject.with_rerun(rerun),
            ..self
        }
    }

    /// What it tests.
    #[must_use]
    pub fn subject(&self) -> &Subject {
        &self.subject
    }

    /// The CLI on the process's arguments (none: `run @shipped`).
    #[must_use]
    pub fn main(&self) -> ExitCode {
        crate::cli::main_with(&self.subject)
    }

    /// Sweeps the scenarios under `paths` (files, directories, `@shipped`
    /// paths) on each one's own seeds (or `seeds`, `"A..B"`), and fails if
    /// a run failed or a reach requirement was missed. What the target
    /// cannot decide (a scenario it cannot run, a contract it cannot
    /// support) is listed in the report, not a failure.
    ///
    /// # Errors
    /// The failure, printed as the CLI prints it, with the contract, the
    /// seed and the repro line.
    pub fn check(&self, paths: &[&str], seeds: Option<&str>) -> Result<SweepReport, Failed> {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        let scenarios = crate::cli::load_all(&paths).map_err(Failed::Input)?;
        let seeds = seeds
            .map(str::parse::<SeedRange>)
            .transpose()
            .map_err(Failed::Input)?;
        let jobs = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let report = sweep(
            &Plan {
                scenarios: &scenarios,
                seeds,
                shard: Shard::ALL,
                wall: None,
                jobs,
                subject: self.subject.clone(),
                accept_undecided: self.accept_undecided,
            },
            &mut Unwatched,
        );
        let failed = report.verdicts().failed() > 0
            || report
                .reaches()
                .iter()
                .any(crate::run::ScenarioReach::fell_short);
        if failed {
            return Err(Failed::Runs(Box::new(report)));
        }
        Ok(report)
    }

    /// The model world on the target's lanes router: every workload under
    /// PCT (depth 3) and random schedules, `executions` each, from `seed`
    /// (what `lanesim model` runs). For a test built with
    /// `RUSTFLAGS="--cfg shuttle"` (a `#![cfg(shuttle)]` test file): in
    /// any other build there is no model checker.
    ///
    /// # Errors
    /// The build has no model checker.
    pub fn model(&self, seed: u64, executions: usize) -> Result<crate::model::ModelReport, String> {
        let workloads: Vec<&'static crate::model::workload::Workload> =
            crate::model::workload::WORKLOADS.iter().collect();
        crate::model::explore_all(
            &self.subject,
            &workloads,
            &crate::model::STRATEGIES,
            lanesim_target::shim::explore::Plan {
                strategy: crate::model::STRATEGIES[0],
                seed,
                executions,
                max_steps: 100_000,
                quiet: crate::model::QUIET,
            },
        )
        .map_err(|e| e.to_string())
    }

    /// The scenarios under `paths`, loaded (for a test that runs them its
    /// own way).
    ///
    /// # Errors
    /// The first that does not load.
    pub fn load(&self, paths: &[&str]) -> Result<Vec<Scenario>, String> {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        crate::cli::load_all(&paths)
    }
}

/// Why [`Runner::check`] failed.
pub enum Failed {
    /// A path, a scenario file or the seeds were bad.
    Input(String),
    /// Runs failed or reach requirements were missed: the sweep's report.
    Runs(Box<SweepReport>),
}

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input(message) => write!(f, "error: {message}"),
            Self::Runs(report) => f.write_str(&crate::report::sweep::human(
                report,
                crate::report::Shown::default(),
            )),
        }
    }
}

/// The report itself, so a failing `check(..).unwrap()` (or a test
/// returning its `Result`) prints the failures and their repro lines.
impl fmt::Debug for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{self}")
    }
}

impl std::error::Error for Failed {}

/// `fn main` for a user's runner: `lanesim_sims::main!(MyTargets);` in a
/// `harness = false` test target (`[[test]] name = "lanesim" harness =
/// false`) or a binary. Repro lines say `cargo test -p <package> --release
/// --test <name> -- replay …` (a test target) or `cargo run -p <package>
/// --release --bin <name> -- replay …` (a binary), with the profile the
/// binary was built with.
///
/// A macro cannot list the crate's features; name the ones a repro needs
/// and those that are on in this build are carried:
/// `lanesim_sims::main!(MyTargets, features = ["slow-tests"]);` (each is
/// tested with `cfg!(feature = …)` in your crate).
#[macro_export]
macro_rules! main {
    ($targets:expr) => {
        $crate::main!($targets, features = []);
    };
    ($targets:expr, features = [$($feature:literal),* $(,)?]) => {
        fn main() -> ::std::process::ExitCode {
            #[allow(unused_mut)]
            let mut features: ::std::vec::Vec<&'static str> = ::std::vec::Vec::new();
            $(
                if ::std::cfg!(feature = $feature) {
                    features.push($feature);
                }
            )*
            let rerun = match ::std::option_env!("CARGO_BIN_NAME") {
                ::std::option::Option::Some(bin) => $crate::run::Rerun::CargoBin {
                    package: ::std::env!("CARGO_PKG_NAME").into(),
                    bin: bin.into(),
                    features: features.iter().map(|f| (*f).into()).collect(),
                },
                ::std::option::Option::None => $crate::run::Rerun::cargo_test(
                    ::std::env!("CARGO_PKG_NAME"),
                    ::std::env!("CARGO_CRATE_NAME"),
                    ::std::file!(),
                    &features,
                ),
            };
            $crate::Runner::new($targets).rerun(rerun).main()
        }
    };
}
