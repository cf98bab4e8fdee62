//! `model`: the lanes target under a model checker (`crate::model`).
//!
//! A build without the checker (every ordinary build: `--cfg shuttle` is
//! a compiler flag for the whole dependency graph, not a feature) rebuilds
//! the same binary with it, in a target directory of its own beside the
//! usual one (`target/model`, so neither build evicts the other), and runs
//! the same command there, as cargo-fuzz builds its own instrumented
//! binary. The command it runs is the one this binary's repro lines use
//! (`run::Rerun`), so it works from lanesim's clone and from a user's crate
//! with `main!`.

use std::path::{Path, PathBuf};

use lanesim_target::shim::explore::{self, Plan, Strategy};

use super::setup::subject;
use crate::model::{self, workload};
use crate::report::{self, Exit, Format, Outcome};
use crate::run::{Profile, Rerun};
use crate::targets::Subject;

/// `model`'s arguments.
pub(super) struct ModelArgs {
    pub(super) workloads: Vec<String>,
    pub(super) list: bool,
    pub(super) selftest: bool,
    pub(super) strategy: Option<Strategy>,
    pub(super) seed: u64,
    pub(super) executions: usize,
    pub(super) max_steps: usize,
    pub(super) verbose: bool,
    pub(super) format: Format,
    pub(super) bug: Option<String>,
}

/// Set in the environment of the build `model` starts, so that build never
/// starts another.
const DELEGATED: &str = "LANESIM_MODEL_BUILD";

pub(super) fn model(args: &ModelArgs, base: &Subject) -> Result<Outcome, String> {
    if args.list {
        return Ok(Outcome::ModelList(workload::WORKLOADS));
    }
    if args.selftest {
        return selftest(args, base);
    }
    let subject = subject(base, args.bug.as_deref())?;
    let workloads = args
        .workloads
        .iter()
        .map(|name| {
            workload::named(name).ok_or_else(|| {
                let known: Vec<&str> = workload::WORKLOADS.iter().map(|w| w.name).collect();
                format!(
                    "--workload: unknown workload `{name}`; known: {}",
                    known.join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let workloads = if workloads.is_empty() {
        workload::WORKLOADS.iter().collect()
    } else {
        workloads
    };
    if subject.lanes().is_none() && model::sender::capabilities(&subject).is_none() {
        return Err(format!(
            "model: the target `{}` has neither a lanes router nor a sender over lanesim's connection layer (Targets::sender)",
            subject.name()
        ));
    }
    if !explore::available() {
        return delegate(subject.rerun());
    }
    let (strategies, plan) = plan(args);
    let report =
        model::explore_all(&subject, &workloads, &strategies, plan).map_err(|e| e.to_string())?;
    Ok(Outcome::Model {
        report,
        verbose: args.verbose,
        format: args.format,
    })
}

/// The strategies `args` ask for (default: PCT, then random) and the plan
/// each runs with.
fn plan(args: &ModelArgs) -> (Vec<Strategy>, Plan) {
    let strategies = args
        .strategy
        .map_or_else(|| model::STRATEGIES.to_vec(), |strategy| vec![strategy]);
    let plan = Plan {
        strategy: strategies[0],
        seed: args.seed,
        executions: args.executions,
        max_steps: args.max_steps,
        quiet: model::QUIET,
    };
    (strategies, plan)
}

/// `model --selftest`: every bug of `selftest::MODEL_LAYER` planted in
/// turn, every workload run with it.
fn selftest(args: &ModelArgs, base: &Subject) -> Result<Outcome, String> {
    if lanesim::planted::CATALOGUE.is_empty() || !base.is_builtin() {
        return Err("model --selftest plants bugs in lanesim's own router: use `cargo run --release --features planted-bugs -- model --selftest`".into());
    }
    if !explore::available() {
        return delegate(base.rerun());
    }
    let (strategies, plan) = plan(args);
    let reports = model::selftest(&crate::run::selftest::MODEL_LAYER, &strategies, plan)
        .map_err(|e| e.to_string())?;
    Ok(Outcome::ModelSelftest {
        reports,
        repro: Rerun::Lanesim { planted: true }.words(Some(&Profile::Release)),
    })
}

/// The target directory the running binary was built in: the nearest
/// ancestor cargo tagged (`CACHEDIR.TAG`).
fn target_dir(exe: &Path) -> Option<PathBuf> {
    exe.ancestors()
        .skip(1)
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf)
}

/// Builds this binary with the model checker and runs the same command in
/// it; its exit code is the outcome's.
fn delegate(rerun: &Rerun) -> Result<Outcome, String> {
    let how =
        "build it yourself with RUSTFLAGS=\"--cfg shuttle\" and a target directory of its own";
    if std::env::var_os(DELEGATED).is_some() {
        return Err(format!(
            "model: the build made for the model checker has none (RUSTFLAGS did not reach it?); {how}"
        ));
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("model: cannot find this binary ({e}); {how}"))?;
    let target = target_dir(&exe).ok_or_else(|| {
        format!(
            "model: {} is not in a cargo target directory, so it cannot be rebuilt with the model checker; {how}",
            exe.display()
        )
    })?;
    // A build that can plant bugs builds its model twin with them too (a
    // `--bug` or `--selftest` needs them; the catalogue is only switches).
    let rerun = match rerun {
        Rerun::Lanesim { .. } if !lanesim::planted::CATALOGUE.is_empty() => {
            Rerun::Lanesim { planted: true }
        }
        other => other.clone(),
    };
    let words = rerun.words(Some(&Profile::Release));
    if words.first().map(String::as_str) != Some("cargo") {
        return Err(format!(
            "model: this runner is run by a command of its own ({}), which cannot be rebuilt with the model checker; {how}",
            words.join(" ")
        ));
    }
    let rustflags = match std::env::var("RUSTFLAGS") {
        Ok(flags) if !flags.trim().is_empty() => format!("{flags} --cfg shuttle"),
        _ => "--cfg shuttle".to_owned(),
    };
    let model_dir = target.join("model");
    // Everything the user gave after the binary's name, as given.
    let given: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let workspace = target.parent().unwrap_or(&target);
    report::model_build(&rustflags, &model_dir, &words);
    let status = std::process::Command::new(&words[0])
        .args(&words[1..])
        .args(&given)
        .env("RUSTFLAGS", &rustflags)
        .env("CARGO_TARGET_DIR", &model_dir)
        .env(DELEGATED, "1")
        .current_dir(workspace)
        .status()
        .map_err(|e| format!("model: cannot run {} ({e}); {how}", words[0]))?;
    let code = status.code().unwrap_or(Exit::Crash as i32);
    Ok(Outcome::Delegated(
        Exit::ALL
            .into_iter()
            .find(|exit| *exit as i32 == code)
            .unwrap_or(Exit::Crash),
    ))
}
