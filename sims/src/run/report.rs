//! How results are shown: a human summary (default) or JSON for machines.
//! Failures in full, passes counted, then the mark table: how many seeds of
//! each scenario reached each coverage mark, and which required marks a
//! sweep missed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{repro_line, RunResult, ScenarioReach, Verdict};
use lanesim::planted::Planted;

/// Violations printed per contract and run; the rest are counted.
const SHOWN_PER_CONTRACT: usize = 3;

/// The human report of a sweep: failures in full, a line per scenario, the
/// mark table, missed marks, and the summary.
#[must_use]
pub fn human(results: &[RunResult], reaches: &[ScenarioReach], planted: Planted) -> String {
    let mut out = String::new();
    let mut counts = [0usize; 4];
    for result in results {
        counts[result.verdict as usize] += 1;
        if result.verdict != Verdict::Pass {
            failure(&mut out, result, planted);
        }
    }
    for reach in reaches {
        let mine = results.iter().filter(|r| r.path == reach.path);
        let passed = mine.clone().filter(|r| r.verdict == Verdict::Pass).count();
        let seeds = seed_span(mine.map(|r| r.seed));
        let _ = writeln!(
            out,
            "{} ({}): seeds {seeds}: {passed}/{} pass",
            reach.scenario, reach.path, reach.seeds
        );
    }
    out.push_str(&mark_table(reaches));
    let mut missed = 0;
    for reach in reaches.iter().filter(|r| r.judged) {
        for (contract, what) in &reach.vacuous {
            missed += 1;
            let _ = writeln!(
                out,
                "NOT REACHED: {} lists {} but none of its {} seeds {what}: the check could not have failed",
                reach.scenario,
                contract.id(),
                reach.seeds
            );
        }
        for mark in reach.missed() {
            missed += 1;
            let required = mark.required.map(|r| r.required(reach.seeds)).unwrap_or(1);
            let _ = writeln!(
                out,
                "NOT REACHED: {} reached `{}` in {} of {} seeds; it requires {} ({})",
                reach.scenario,
                mark.mark,
                mark.seeds_hit,
                reach.seeds,
                required,
                mark.required.map_or_else(String::new, |r| r.to_string()),
            );
        }
    }
    let _ = writeln!(
        out,
        "summary: {} runs: {} pass, {} violated, {} liveness, {} crash; {missed} reach requirement(s) missed",
        results.len(),
        counts[Verdict::Pass as usize],
        counts[Verdict::Violated as usize],
        counts[Verdict::Liveness as usize],
        counts[Verdict::Crash as usize]
    );
    out
}

/// `a..=b` for a contiguous run of seeds, else a count.
fn seed_span(seeds: impl Iterator<Item = u64>) -> String {
    let seeds: Vec<u64> = seeds.collect();
    match (seeds.first(), seeds.last()) {
        (Some(first), Some(last)) if last - first + 1 == seeds.len() as u64 => {
            format!("{first}..={last}")
        }
        _ => format!("{} seeds", seeds.len()),
    }
}

/// One failed run: verdict, parameters, violations, the repro line.
pub fn failure(out: &mut String, result: &RunResult, planted: Planted) {
    let _ = writeln!(
        out,
        "{} {} seed {}: {}",
        result.verdict.name().to_uppercase(),
        result.scenario,
        result.seed,
        result.params
    );
    let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
    for violation in &result.violations {
        let count = shown.entry(violation.contract.id()).or_default();
        *count += 1;
        if *count <= SHOWN_PER_CONTRACT {
            for line in violation.to_string().lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
    }
    for (contract, count) in shown {
        if count > SHOWN_PER_CONTRACT {
            let _ = writeln!(
                out,
                "    ... and {} more {contract} violation(s)",
                count - SHOWN_PER_CONTRACT
            );
        }
    }
    if let Some(crash) = &result.crash {
        let _ = writeln!(out, "    the testbed panicked: {crash}");
    }
    if result.verdict == Verdict::Liveness {
        let _ = writeln!(
            out,
            "    ran out of its virtual-time budget after {:?}",
            result.elapsed
        );
    }
    let _ = writeln!(out, "  {}", repro_line(&result.path, result.seed, planted));
}

/// Marks as rows, scenarios as numbered columns: how many seeds reached
/// each mark. `*` a required mark the sweep reached as required, `!` one
/// it missed; `.` none.
#[must_use]
pub fn mark_table(reaches: &[ScenarioReach]) -> String {
    let mut rows: BTreeMap<crate::coverage::CoverMark, Vec<String>> = BTreeMap::new();
    for (column, reach) in reaches.iter().enumerate() {
        for mark in &reach.marks {
            let cell = match (mark.required.is_some(), mark.missed(reach.seeds)) {
                (true, true) => format!("{}!", mark.seeds_hit),
                (true, false) => format!("{}*", mark.seeds_hit),
                (false, _) => mark.seeds_hit.to_string(),
            };
            rows.entry(mark.mark)
                .or_insert_with(|| vec![".".to_string(); reaches.len()])[column] = cell;
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let width = rows
        .keys()
        .map(|m| m.to_string().len())
        .max()
        .unwrap_or(0)
        .max(4);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nmarks: seeds that reached each mark, per scenario (* required and reached, ! required but missed)"
    );
    let _ = write!(out, "{:<width$}", "");
    for column in 1..=reaches.len() {
        let _ = write!(out, " {column:>5}");
    }
    out.push('\n');
    for (mark, cells) in &rows {
        let _ = write!(out, "{:<width$}", mark.to_string());
        for cell in cells {
            let _ = write!(out, " {cell:>5}");
        }
        out.push('\n');
    }
    for (column, reach) in reaches.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {:>2} = {} ({} seeds)",
            column + 1,
            reach.scenario,
            reach.seeds
        );
    }
    out
}

/// The JSON report of a sweep: every run, and per scenario its marks and
/// requirements.
#[must_use]
pub fn json(results: &[RunResult], reaches: &[ScenarioReach], planted: Planted) -> String {
    let runs: Vec<Value> = results
        .iter()
        .map(|r| {
            json!({
                "scenario": r.scenario,
                "path": r.path,
                "seed": r.seed,
                "verdict": r.verdict.name(),
                "params": r.params,
                "hash": format!("{:016x}", r.hash),
                "virtual_ms": r.elapsed.as_millis() as u64,
                "crash": r.crash,
                "marks": r.coverage.iter().map(|(mark, count)| (mark.to_string(), json!(count))).collect::<serde_json::Map<_, _>>(),
                "violations": r.violations.iter().map(|v| json!({
                    "contract": v.contract.id(),
                    "message": v.message,
                    "evidence": v.evidence,
                })).collect::<Vec<_>>(),
                "repro": (r.verdict != Verdict::Pass).then(|| repro_line(&r.path, r.seed, planted)),
            })
        })
        .collect();
    let scenarios: Vec<Value> = reaches
        .iter()
        .map(|reach| {
            json!({
                "scenario": reach.scenario,
                "path": reach.path,
                "seeds": reach.seeds,
                "judged": reach.judged,
                "marks": reach.marks.iter().map(|m| (m.mark.to_string(), json!(m.seeds_hit))).collect::<serde_json::Map<_, _>>(),
                "vacuous_contracts": reach.vacuous.iter().filter(|_| reach.judged).map(|(c, what)| json!({
                    "contract": c.id(),
                    "missing": what,
                })).collect::<Vec<_>>(),
                "reaches": reach.marks.iter().filter_map(|m| m.required.map(|r| json!({
                    "mark": m.mark.to_string(),
                    "share": r.share,
                    "required_seeds": r.required(reach.seeds),
                    "seeds_hit": m.seeds_hit,
                    "reached": !m.missed(reach.seeds),
                }))).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "runs": runs, "scenarios": scenarios }))
        .unwrap_or_default()
}
