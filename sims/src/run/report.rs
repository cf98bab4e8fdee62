//! How results are shown: a human summary (default) or JSON for machines.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{repro_line, RunResult, Verdict};
use lanesim::planted::Planted;

/// Violations printed per contract and run; the rest are counted.
const SHOWN_PER_CONTRACT: usize = 3;

/// The human report of a sweep; failures in full, passes counted.
#[must_use]
pub fn human(results: &[RunResult], planted: Planted) -> String {
    let mut out = String::new();
    let mut current = None;
    let mut counts = [0usize; 4];
    for result in results {
        if current != Some(&result.path) {
            flush(&mut out, results, current);
            current = Some(&result.path);
        }
        counts[result.verdict as usize] += 1;
        if result.verdict != Verdict::Pass {
            let _ = writeln!(
                out,
                "  {} seed {}: {}",
                result.verdict.name().to_uppercase(),
                result.seed,
                result.params
            );
            let mut shown: std::collections::BTreeMap<&str, usize> =
                std::collections::BTreeMap::new();
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
    }
    flush(&mut out, results, current);
    let _ = writeln!(
        out,
        "summary: {} runs: {} pass, {} violated, {} liveness, {} crash",
        results.len(),
        counts[Verdict::Pass as usize],
        counts[Verdict::Violated as usize],
        counts[Verdict::Liveness as usize],
        counts[Verdict::Crash as usize]
    );
    out
}

/// Closes a scenario's block with its pass count.
fn flush(out: &mut String, results: &[RunResult], path: Option<&String>) {
    let Some(path) = path else { return };
    let mine: Vec<&RunResult> = results.iter().filter(|r| &r.path == path).collect();
    let passed = mine.iter().filter(|r| r.verdict == Verdict::Pass).count();
    let (first, last) = (
        mine.first().map_or(0, |r| r.seed),
        mine.last().map_or(0, |r| r.seed),
    );
    let _ = writeln!(
        out,
        "{} ({path}): seeds {first}..={last}: {passed}/{} pass",
        mine[0].scenario,
        mine.len()
    );
}

/// The JSON report of a sweep.
#[must_use]
pub fn json(results: &[RunResult], planted: Planted) -> String {
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
                "violations": r.violations.iter().map(|v| json!({
                    "contract": v.contract.id(),
                    "message": v.message,
                    "evidence": v.evidence,
                })).collect::<Vec<_>>(),
                "repro": (r.verdict != Verdict::Pass).then(|| repro_line(&r.path, r.seed, planted)),
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "runs": runs })).unwrap_or_default()
}
