//! Command line. Model: the arguments (clap), and one function per
//! subcommand, each returning a typed [`Outcome`]. Nothing here prints:
//! outcomes, announcements (a run's seed and parameters before its first
//! step, the determinism rule), streamed runs and errors all go through
//! [`crate::report`], which also holds the one [`Exit`] code type.
//!
//! # Start here
//!
//! [`main_with`] parses the process arguments into a `Command` (`args`),
//! `dispatch` hands each subcommand's arguments to its function, and the
//! [`Outcome`] that returns is printed by [`report::print`] and mapped to
//! the exit code.
//!
//! # Map
//!
//! | file | what it holds |
//! |---|---|
//! | `args` | the clap types `Cli` and `Command` (flags, help, examples), the `--jobs` and `--for` parsers |
//! | `run` | `run` (the sweep and what it shows while it goes), `run --real`, `merge`, JUnit |
//! | `replay` | `replay` (one seed, its events, log and trace file), `shrink` |
//! | `hunt` | `hunt` (its regressions file, its progress), `bench --detection` |
//! | `testbed` | `selftest`, `audit`, `fidelity`, `bench`, `list` |
//! | `model` | `model` (the lanes target under shuttle), rebuilding itself with the checker when this build has none |
//! | `inputs` | scenarios under the given paths ([`load_all`]), bounded reads, scenarios real mode refuses |
//! | `setup` | the subject a subcommand tests (`--bug`), tracing |
//!
//! Dependencies point one way: this file → `args` and the subcommands'
//! files → `inputs`, `setup`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use crate::report::{self, print, Outcome};
use crate::run::sweep::Shard;
use crate::scenario::SeedRange;
use crate::targets::Subject;
use crate::workdir;

mod args;
mod hunt;
mod inputs;
mod model;
mod output;
mod replay;
mod run;
mod setup;
mod testbed;

use args::{Cli, Command};
use setup::subject;

pub use crate::report::{Exit, Format};
pub use inputs::load_all;

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

/// Every path the user named, resolved against the directory they invoked
/// from (`workdir`: `cargo test` runs a test in its package's directory).
fn resolved(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    paths.iter().map(|path| workdir::resolve(path)).collect()
}

fn dispatch(command: Command, base: &Subject) -> Result<Outcome, String> {
    let one = |path: PathBuf| workdir::resolve(&path);
    match command {
        Command::List { paths } => testbed::list(&resolved(paths)),
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
            reach,
            accept_undecided,
            bug,
            real,
        } => run::run(
            &run::RunArgs {
                paths: resolved(paths),
                seeds: seed.map(SeedRange::one).or(seeds),
                jobs: usize::from(jobs),
                wall: for_,
                shard: shard.unwrap_or(Shard::ALL),
                format,
                junit: junit.map(one),
                verbose,
                marks,
                reach,
                accept_undecided,
                bug,
                real,
            },
            base,
        ),
        Command::Merge {
            files,
            format,
            junit,
        } => run::merge(&resolved(files), format, junit.map(one).as_deref()),
        Command::Replay {
            path,
            seed,
            verbose,
            trace,
            bug,
        } => replay::replay(
            &one(path),
            seed,
            verbose,
            trace.map(one).as_deref(),
            subject(base, bug.as_deref())?,
        ),
        Command::Selftest {
            paths,
            seeds,
            format,
        } => testbed::selftest(&resolved(paths), seeds, format),
        Command::Bench {
            detection: true,
            hunt_seeds,
            hunt_for,
            ..
        } => hunt::detection_bench(hunt_seeds, hunt_for),
        Command::Bench {
            paths,
            seeds,
            no_real,
            ..
        } => testbed::bench(&resolved(paths), seeds, no_real, base),
        Command::Audit {
            paths,
            seeds,
            processes: false,
        } => testbed::audit(&resolved(paths), seeds, base),
        Command::Audit {
            paths,
            seeds,
            processes: true,
        } => testbed::audit_processes(&resolved(paths), seeds),
        Command::Fidelity { paths, seeds, bug } => {
            let named = !paths.is_empty();
            let paths = if named {
                paths
            } else {
                vec![PathBuf::from("scenarios")]
            };
            testbed::fidelity(
                &resolved(paths),
                named,
                seeds,
                &subject(base, bug.as_deref())?,
            )
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
        } => hunt::hunt(
            hunt::HuntArgs {
                world,
                wall: for_,
                cases,
                jobs: usize::from(jobs),
                seed,
                keep_going,
                unguided,
                no_shrink,
                out: out.map(one),
                regressions: regressions.map(one),
                format,
                bug,
            },
            base,
        ),
        Command::Model {
            workloads,
            list,
            selftest,
            strategy,
            seed,
            executions,
            max_steps,
            verbose,
            format,
            bug,
        } => model::model(
            &model::ModelArgs {
                workloads,
                list,
                selftest,
                strategy,
                seed,
                executions: usize::try_from(executions).unwrap_or(usize::MAX),
                max_steps: usize::try_from(max_steps).unwrap_or(usize::MAX),
                verbose: verbose > 0,
                format,
                bug,
            },
            base,
        ),
        Command::Shrink {
            path,
            seed,
            out,
            bug,
        } => {
            let subject = subject(base, bug.as_deref())?;
            let out = out.map_or_else(|| output::shrunk(&subject), one);
            replay::shrink(&one(path), seed, &out, &subject)
        }
    }
}
