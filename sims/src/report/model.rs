//! `lanesim model`'s report: per workload and strategy, what was explored
//! (executions, the most steps one took, seconds), and every find with its
//! violations, its evidence and the command that replays it.

use std::fmt::Write as _;

use serde_json::{json, Value};

use crate::model::workload::Workload;
use crate::model::{ModelBreak, ModelFind, ModelReport, Ran, WorkloadRun};

/// The workloads, one per line, with what each sets up.
pub(super) fn listing(workloads: &[Workload]) -> String {
    let mut text = String::new();
    for workload in workloads {
        let _ = writeln!(text, "{:<20} {}", workload.name, workload.about);
    }
    text
}

fn broke_line(find: &ModelFind) -> String {
    match &find.broke {
        ModelBreak::Violated(violations) => violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(""),
        ModelBreak::Crashed(why) => format!("the target could not run the workload: {why}\n"),
        ModelBreak::Checker(why) => format!("the model checker failed the execution: {why}\n"),
    }
}

/// The report as people read it.
pub(super) fn human(report: &ModelReport, verbose: bool) -> String {
    let mut text = String::new();
    let ids = |contracts: &[crate::scenario::Contract]| {
        contracts
            .iter()
            .map(|c| c.id())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        text,
        "model world: target `{}` under shuttle; decided: {}",
        report.target,
        ids(&report.decided)
    );
    for not in &report.not_decided {
        let _ = writeln!(text, "  not decided: {}: {}", not.what.id(), not.why);
    }
    let _ = writeln!(
        text,
        "{:<20} {:<8} {:>10} {:>9} {:>8}  result",
        "workload", "strategy", "executions", "max steps", "seconds"
    );
    for run in &report.runs {
        let strategy = run.plan.strategy.to_string();
        match &run.ran {
            Ran::NotDecided(why) => {
                let _ = writeln!(
                    text,
                    "{:<20} {:<8} {:>10} {:>9} {:>8}  not decided: {why}",
                    run.workload.name, strategy, "-", "-", "-"
                );
            }
            Ran::Explored {
                executions,
                max_steps_seen,
                elapsed,
                found,
                reaches,
            } => {
                let result = match found {
                    None if run.fell_short() => "SHORT of a required state".to_owned(),
                    None => "pass".to_owned(),
                    Some(find) => format!("FAIL at execution {}", find.execution),
                };
                let _ = writeln!(
                    text,
                    "{:<20} {:<8} {:>10} {:>9} {:>8.2}  {result}",
                    run.workload.name,
                    strategy,
                    executions,
                    max_steps_seen,
                    elapsed.as_secs_f64()
                );
                let shares: Vec<String> = reaches
                    .iter()
                    .map(|tally| match tally.undecided {
                        Some(_) => format!("{} not decided", tally.reach.name()),
                        None => format!(
                            "{} {:.1}% (>= {:.1}%){}",
                            tally.reach.name(),
                            100.0 * tally.count as f64 / tally.of.max(1) as f64,
                            100.0 * tally.required,
                            if found.is_none() && tally.fell_short() {
                                " SHORT"
                            } else {
                                ""
                            }
                        ),
                    })
                    .collect();
                if !shares.is_empty() {
                    let _ = writeln!(text, "{:<29} reached: {}", "", shares.join(", "));
                }
            }
        }
    }
    for (run, find) in report.finds() {
        let _ = writeln!(
            text,
            "\nFAIL {} ({}, seed {}, execution {}, {} steps):",
            run.workload.name, run.plan.strategy, run.plan.seed, find.execution, find.steps
        );
        for line in broke_line(find).lines() {
            let _ = writeln!(text, "  {line}");
        }
        if verbose {
            let _ = writeln!(text, "  its log:");
            for record in &find.records {
                let _ = writeln!(text, "    {record}");
            }
        }
        let _ = writeln!(text, "  replay: {}", report.replay_line(run, find));
    }
    let failed = report.finds().count();
    let explored: usize = report
        .runs
        .iter()
        .map(|run| match run.ran {
            Ran::Explored { executions, .. } => executions,
            Ran::NotDecided(_) => 0,
        })
        .sum();
    let _ = writeln!(
        text,
        "\nmodel: {explored} executions, {failed} of {} workload run(s) failed",
        report.runs.len()
    );
    text
}

fn run_json(report: &ModelReport, run: &WorkloadRun) -> Value {
    let base = json!({
        "workload": run.workload.name,
        "strategy": run.plan.strategy.to_string(),
        "seed": run.plan.seed,
    });
    let mut value = base;
    match &run.ran {
        Ran::NotDecided(why) => value["not_decided"] = json!(why),
        Ran::Explored {
            executions,
            max_steps_seen,
            elapsed,
            found,
            reaches,
        } => {
            value["reaches"] = reaches
                .iter()
                .map(|t| json!({"state": t.reach.name(), "count": t.count, "of": t.of, "required": t.required, "decided": t.undecided.is_none(), "fell_short": t.fell_short()}))
                .collect();
            value["executions"] = json!(executions);
            value["max_steps"] = json!(max_steps_seen);
            value["seconds"] = json!(elapsed.as_secs_f64());
            if let Some(find) = found {
                let (kind, violations) = match &find.broke {
                    ModelBreak::Violated(v) => (
                        "violated",
                        v.iter()
                            .map(|v| json!({"contract": v.contract.id(), "message": v.message}))
                            .collect(),
                    ),
                    ModelBreak::Crashed(why) => ("crashed", vec![json!({"message": why})]),
                    ModelBreak::Checker(why) => ("checker", vec![json!({"message": why})]),
                };
                value["found"] = json!({
                    "execution": find.execution,
                    "steps": find.steps,
                    "kind": kind,
                    "violations": violations,
                    "replay": report.replay_line(run, find),
                });
            }
        }
    }
    value
}

/// The report as JSON (one object).
pub(super) fn json(report: &ModelReport, exit: u8) -> Value {
    json!({
        "target": report.target,
        "decided": report.decided.iter().map(|c| c.id()).collect::<Vec<_>>(),
        "not_decided": report.not_decided.iter().map(|n| json!({"contract": n.what.id(), "why": n.why})).collect::<Vec<_>>(),
        "runs": report.runs.iter().map(|run| run_json(report, run)).collect::<Vec<_>>(),
        "exit": exit,
    })
}

/// `model --selftest`: per bug, the workloads that caught it (with the
/// first execution and the replay) or that it escaped.
pub(super) fn selftest(reports: &[crate::model::ModelBugReport], repro: &[String]) -> String {
    let mut text = String::new();
    for report in reports {
        let catches: Vec<_> = report.catches().collect();
        let runs = report.runs.len();
        let _ = writeln!(
            text,
            "{} #{} {}: caught by {} of {runs} workload run(s)",
            if catches.is_empty() {
                "ESCAPED"
            } else {
                "caught "
            },
            report.bug.catalogue_id(),
            report.bug.name(),
            catches.len(),
        );
        for (run, find) in catches {
            let mut contracts: Vec<&str> = match &find.broke {
                ModelBreak::Violated(v) => v.iter().map(|v| v.contract.id()).collect(),
                ModelBreak::Crashed(_) | ModelBreak::Checker(_) => Vec::new(),
            };
            contracts.sort_unstable();
            contracts.dedup();
            let _ = writeln!(
                text,
                "    {:<20} {:<8} execution {:>5}  {}   replay: {} model --bug {} --workload {} --strategy {} --seed {} --executions {} -v",
                run.workload.name,
                run.plan.strategy.to_string(),
                find.execution,
                contracts.join(" "),
                repro.join(" "),
                report.bug.name(),
                run.workload.name,
                run.plan.strategy,
                run.plan.seed,
                find.execution + 1
            );
        }
    }
    let escaped = reports.iter().filter(|r| r.escaped()).count();
    let _ = writeln!(
        text,
        "model selftest: {} bug(s), {escaped} escaped",
        reports.len()
    );
    text
}
