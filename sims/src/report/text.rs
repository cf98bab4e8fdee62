//! The other subcommands' text: `list`, `hunt` and `shrink`, `selftest`,
//! `bench` and the detection benchmark, a replay's marks.

use std::time::Duration;

use lanesim::planted::CATALOGUE;

use crate::coverage::{CoverMark, WorldMark};
use crate::hunt::bench::BugChases;
use crate::hunt::genes::size;
use crate::hunt::{Found, HuntReport, Origin, Stop};
use crate::real::{Fidelity, RealOutcome};
use crate::run::bench::BenchReport;
use crate::run::selftest::{catalogue_contracts, not_expected_because, BugReport};
use crate::run::signature::Signature;
use crate::run::{Repro, RunResult};
use crate::scenario::{Scenario, WorldKind};
use crate::targets::Subject;

pub(super) fn hunt_report(report: &HuntReport, subject: &Subject) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let stop = match report.stop {
        Stop::Cases => "ran its cases",
        Stop::Time => "its time was up",
        Stop::Failure => "found a failure",
    };
    let _ = writeln!(
        out,
        "hunt: {} cases ({} mutated from a corpus of {}) in {:.1} s; stopped: {stop}",
        report.cases,
        report.mutated,
        report.corpus,
        report.wall.as_secs_f64()
    );
    let all: Vec<CoverMark> = subject
        .marks()
        .into_iter()
        .filter(|mark| {
            [WorldKind::Lanes, WorldKind::Sender, WorldKind::Mesh]
                .into_iter()
                .any(|world| {
                    report.world.covers(world) && crate::scenario::marks::reachable_in(*mark, world)
                })
        })
        .collect();
    let missed: Vec<String> = all
        .iter()
        .filter(|mark| !report.marks.contains_key(mark))
        .map(ToString::to_string)
        .collect();
    let _ = writeln!(
        out,
        "marks reached: {} of {}; not reached: {}",
        report.marks.len(),
        all.len(),
        if missed.is_empty() {
            "none".into()
        } else {
            missed.join(" ")
        }
    );
    let mut rarest: Vec<(u64, CoverMark)> = report.marks.iter().map(|(m, n)| (*n, *m)).collect();
    rarest.sort_unstable();
    let rarest: Vec<String> = rarest
        .iter()
        .take(8)
        .map(|(n, mark)| format!("{mark} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "rarest marks (cases that reached them): {}",
        rarest.join(", ")
    );
    hunt_groups(&mut out, report, subject);
    let _ = writeln!(
        out,
        "hunt: {} failure(s); digest of its runs {:016x}",
        report.failures, report.digest
    );
    out
}

/// Cases of a group listed by number before the rest are counted.
const CASES_SHOWN: usize = 5;

/// A hunt's failures, one per distinct failure (`run::signature`): the
/// signature, how many kept cases have it and which, then the first one's
/// lines (its shrink and repro); then what the cases not kept were, by
/// signature before shrinking. Pinned by
/// `failures_with_one_signature_print_once_with_their_count`.
fn hunt_groups(out: &mut String, report: &HuntReport, subject: &Subject) {
    use std::fmt::Write as _;
    if report.failures == 0 {
        return;
    }
    // Kept cases by signature, groups in the order their first case came.
    let mut groups: Vec<(&Signature, Vec<&Found>)> = Vec::new();
    for found in &report.found {
        match groups.iter_mut().find(|(s, _)| **s == found.signature) {
            Some((_, members)) => members.push(found),
            None => groups.push((&found.signature, vec![found])),
        }
    }
    // Failing cases not kept (past the first `MAX_FOUND`), by their
    // signature before shrinking.
    let unkept: Vec<(&Signature, u64)> = report
        .signatures
        .iter()
        .filter_map(|(bare, all)| {
            let kept = report
                .found
                .iter()
                .filter(|f| f.signature.bare() == *bare)
                .count() as u64;
            (*all > kept).then_some((bare, all - kept))
        })
        .collect();
    let only_unkept = unkept
        .iter()
        .filter(|(bare, _)| !report.found.iter().any(|f| f.signature.bare() == **bare))
        .count();
    let _ = writeln!(
        out,
        "failures: {} distinct failure(s) in {} failing case(s); each once, with its count and one repro (every kept case: --format json)",
        groups.len() + only_unkept,
        report.failures
    );
    for (signature, members) in &groups {
        let mut cases: Vec<String> = members
            .iter()
            .take(CASES_SHOWN)
            .map(|f| f.index.to_string())
            .collect();
        if members.len() > CASES_SHOWN {
            cases.push(format!("{} more", members.len() - CASES_SHOWN));
        }
        let word = if members.len() == 1 { "case" } else { "cases" };
        let _ = writeln!(
            out,
            "{} \u{d7} {}: {word} {}",
            super::paint(&signature.to_string(), super::Tone::Bad),
            members.len(),
            super::sweep::join_last(&cases)
        );
        found_lines(out, members[0], subject);
    }
    for (bare, count) in unkept {
        let _ = writeln!(
            out,
            "{bare} \u{d7} {count} more, not kept (past the first {} failures: not shrunk, not in the JSON)",
            crate::hunt::MAX_FOUND
        );
    }
}

/// A hunt as one JSON document (`hunt --format json`): its counts, why it
/// stopped, the marks its cases reached, and each failure kept with its
/// parameters (as an object), its shrink and its repro (as argv and line).
pub(super) fn hunt_json(report: &HuntReport, subject: &Subject) -> String {
    use serde_json::json;
    let stop = match report.stop {
        Stop::Cases => "cases",
        Stop::Time => "time",
        Stop::Failure => "failure",
    };
    let found: Vec<serde_json::Value> = report
        .found
        .iter()
        .map(|found| {
            let origin = match found.origin {
                Origin::Replayed => "replayed",
                Origin::Fresh => "fresh",
                Origin::Mutated => "mutated",
                Origin::Written => "written",
            };
            let shrunk = found.shrunk.as_ref().map(|(shrunk, path)| {
                let path = path.display().to_string();
                json!({
                    "path": path,
                    "runs": shrunk.runs,
                    "wall_s": shrunk.wall.as_secs_f64(),
                    "exhausted": shrunk.exhausted,
                    "params": shrunk.params.to_object(),
                    "repro": Repro::replay(&path, found.seed, subject),
                })
            });
            json!({
                "case": found.index,
                "origin": origin,
                "seed": found.seed,
                "signature": found.signature,
                "contracts": found.contracts.iter().map(|c| c.id()).collect::<Vec<_>>(),
                "message": found.message,
                "params": found.params.to_object(),
                "shrunk": shrunk,
            })
        })
        .collect();
    let marks: serde_json::Map<String, serde_json::Value> = report
        .marks
        .iter()
        .map(|(mark, cases)| (mark.to_string(), json!(cases)))
        .collect();
    json!({
        "world": report.world.name(),
        "cases": report.cases,
        "mutated": report.mutated,
        "corpus": report.corpus,
        "wall_s": report.wall.as_secs_f64(),
        "stop": stop,
        "failures": report.failures,
        "signatures": report
            .signatures
            .iter()
            .map(|(signature, cases)| json!({ "signature": signature, "cases": cases }))
            .collect::<Vec<_>>(),
        "found": found,
        "marks": marks,
        "digest": format!("{:016x}", report.digest),
    })
    .to_string()
}

/// A failure: what broke, how small it shrank, and the line that replays it.
pub(super) fn found_lines(out: &mut String, found: &Found, subject: &Subject) {
    use std::fmt::Write as _;
    let origin = match found.origin {
        Origin::Replayed => "replayed from the regression file",
        Origin::Fresh => "fresh",
        Origin::Mutated => "mutated",
        Origin::Written => "written",
    };
    let _ = writeln!(
        out,
        "FAIL case {} ({origin}, seed {}): {}",
        found.index, found.seed, found.message
    );
    let (keys, items, faults) = size(&found.params);
    let _ = writeln!(
        out,
        "  found at size: {keys} keys/peers, {items} items/frames, {faults} faults"
    );
    match &found.shrunk {
        Some((shrunk, path)) => {
            let (keys, items, faults) = size(&shrunk.params);
            let _ = writeln!(
                out,
                "  shrunk in {} runs ({:.1} s{}) to {keys} keys/peers, {items} items/frames, {faults} faults: {}",
                shrunk.runs,
                shrunk.wall.as_secs_f64(),
                if shrunk.exhausted { ", budget exhausted" } else { "" },
                crate::workdir::shown(&path.display().to_string())
            );
            let _ = writeln!(
                out,
                "  repro: {}",
                Repro::replay(&path.display().to_string(), found.seed, subject)
            );
        }
        None => {
            let _ = writeln!(out, "  not shrunk; parameters: {}", found.params);
        }
    }
}

/// A replayed run's marks on one line.
pub(super) struct ScenarioReachLine<'a>(pub(super) &'a RunResult);

impl std::fmt::Display for ScenarioReachLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("marks:")?;
        for (mark, count) in &self.0.coverage {
            write!(f, " {mark}={count}")?;
        }
        Ok(())
    }
}

pub(super) fn listing(scenarios: &[Scenario]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "scenarios ({}):", scenarios.len());
    for scenario in scenarios {
        let checks: Vec<&str> = scenario.file.checks.iter().map(|c| c.id()).collect();
        let _ = writeln!(
            out,
            "  {:<32} {:<7} [{}]",
            scenario.name,
            format!("{:?}", scenario.file.world).to_lowercase(),
            checks.join(", ")
        );
        let _ = writeln!(
            out,
            "      {}",
            scenario
                .file
                .description
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        );
        if !scenario.reaches.is_empty() {
            let reaches: Vec<String> = scenario.reaches.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "      reaches: {}", reaches.join(", "));
        }
    }
    let _ = writeln!(out, "coverage marks ({}):", CoverMark::all().len());
    let all = CoverMark::all();
    let code: Vec<String> = all
        .iter()
        .filter(|m| matches!(m, CoverMark::Code(_)))
        .map(ToString::to_string)
        .collect();
    let world: Vec<&str> = WorldMark::ALL.iter().map(|m| m.name()).collect();
    let points: Vec<String> = all
        .iter()
        .filter(|m| matches!(m, CoverMark::Preempted(_)))
        .map(ToString::to_string)
        .collect();
    let _ = writeln!(
        out,
        "  code sites (lanesim's components and the target's): {}",
        code.join(" ")
    );
    let _ = writeln!(out, "  worlds: {}", world.join(" "));
    let _ = writeln!(out, "  preemption points: {}", points.join(" "));
    let _ = writeln!(
        out,
        "  roles (a target maps its own marks to them: Sites::roles):"
    );
    for role in crate::coverage::Role::ALL {
        let _ = writeln!(out, "    role:{:<34} {}", role.name(), role.meaning());
    }
    if CATALOGUE.is_empty() {
        let _ = writeln!(
            out,
            "planted bugs: none in this build (build with --features planted-bugs)"
        );
    } else {
        let _ = writeln!(out, "planted bugs ({}):", CATALOGUE.len());
        for bug in CATALOGUE {
            let _ = writeln!(out, "  #{:<3} {}", bug.catalogue_id(), bug.name());
        }
    }
    out
}

pub(super) fn selftest_table(reports: &[BugReport]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| bug | contracts | scenario | caught / seeds | first catching seed | runs to first | wall to first |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    for report in reports {
        let contracts: Vec<&str> = catalogue_contracts(report.bug)
            .iter()
            .map(|c| c.id())
            .collect();
        let name = format!("#{} {}", report.bug.catalogue_id(), report.bug.name());
        let catching: Vec<_> = report
            .detections
            .iter()
            .filter(|d| d.seeds_caught > 0)
            .collect();
        if catching.is_empty() {
            let verdict = if report.expected {
                "ESCAPED".to_owned()
            } else {
                format!(
                    "not caught (not expected: {})",
                    not_expected_because(report.bug)
                )
            };
            let _ = writeln!(
                out,
                "| {name} | {} | {verdict} | 0 / {} | - | - | - |",
                contracts.join(", "),
                report.detections.iter().map(|d| d.seeds_run).sum::<u64>()
            );
        }
        for d in catching {
            let (seed, runs, wall) = d.first.expect("caught");
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} / {} | {seed} | {runs} | {:.1} ms |",
                contracts.join(", "),
                d.scenario,
                d.seeds_caught,
                d.seeds_run,
                wall.as_secs_f64() * 1e3
            );
        }
    }
    let escaped: Vec<String> = reports
        .iter()
        .filter(|r| r.escaped())
        .map(|r| r.bug.name().to_string())
        .collect();
    let caught = reports.iter().filter(|r| r.caught()).count();
    let _ = writeln!(
        out,
        "selftest: {caught} of {} bugs caught; {} expected bug(s) escaped{}",
        reports.len(),
        escaped.len(),
        if escaped.is_empty() {
            String::new()
        } else {
            format!(": {}", escaped.join(", "))
        }
    );
    out
}

pub(super) fn selftest_json(reports: &[BugReport]) -> String {
    let bugs: Vec<serde_json::Value> = reports
        .iter()
        .map(|report| {
            serde_json::json!({
                "bug": report.bug.name(),
                "catalogue_id": report.bug.catalogue_id(),
                "contracts": catalogue_contracts(report.bug).iter().map(|c| c.id()).collect::<Vec<_>>(),
                "expected": report.expected,
                "caught": report.caught(),
                "escaped": report.escaped(),
                "scenarios": report.detections.iter().map(|d| serde_json::json!({
                    "scenario": d.scenario,
                    "seeds_run": d.seeds_run,
                    "seeds_caught": d.seeds_caught,
                    "seeds_failed_otherwise": d.seeds_other,
                    "first_seed": d.first.map(|f| f.0),
                    "runs_to_first": d.first.map(|f| f.1),
                    "wall_ms_to_first": d.first.map(|f| f.2.as_secs_f64() * 1e3),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({ "bugs": bugs })).unwrap_or_default()
}

/// A Markdown table's header row and rule.
fn table_header(out: &mut String, columns: &[&str]) {
    out.push_str(&format!("| {} |\n", columns.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(columns.len())));
}

pub(super) fn bench_table(bench: &BenchReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    table_header(
        &mut out,
        &[
            "scenario",
            "seeds",
            "seeds/s (1 core)",
            "virtual s / wall s",
        ],
    );
    for b in &bench.scenarios {
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {:.0} |",
            b.name, b.seeds, b.seeds_per_sec, b.virtual_per_wall
        );
    }
    out.push('\n');
    if !bench.mesh.is_empty() {
        table_header(
            &mut out,
            &[
                "quiet mesh, nodes",
                "pairs",
                "seeds",
                "seeds/s (1 core)",
                "ms a seed",
            ],
        );
        for (nodes, b) in &bench.mesh {
            let _ = writeln!(
                out,
                "| {nodes} | {} | {} | {:.1} | {:.0} |",
                nodes * (nodes - 1) / 2,
                b.seeds,
                b.seeds_per_sec,
                1000.0 / b.seeds_per_sec
            );
        }
        out.push('\n');
    }
    for (tick, virtual_time, wall) in &bench.exchange {
        let _ = writeln!(out, "wedged exchange, turmoil tick {tick} ms: {virtual_time:?} virtual in {wall:?} wall (median of 7)");
    }
    if let Some(real) = bench.real {
        let _ = writeln!(out, "wedged exchange, real loopback TCP: {real:?} wall");
        for (tick, _, wall) in &bench.exchange {
            let _ = writeln!(
                out,
                "ratio real / simulated at tick {tick} ms: {:.0}x",
                real.as_secs_f64() / wall.as_secs_f64()
            );
        }
    }
    out.push('\n');
    table_header(
        &mut out,
        &[
            "scenario (20 seeds)",
            "harness",
            "unobserved",
            "harness / unobserved",
            "bare socket replay",
            "harness / bare",
        ],
    );
    for b in &bench.harness {
        let _ = writeln!(
            out,
            "| {} | {:.1} ms | {:.1} ms | {:.2}x | {:.1} ms | {:.2}x |",
            b.name,
            b.harness.as_secs_f64() * 1e3,
            b.unobserved.as_secs_f64() * 1e3,
            b.harness.as_secs_f64() / b.unobserved.as_secs_f64(),
            b.bare.as_secs_f64() * 1e3,
            b.harness.as_secs_f64() / b.bare.as_secs_f64()
        );
    }
    let diverged: u64 = bench.harness.iter().map(|b| b.diverged).sum();
    if diverged > 0 {
        let _ = writeln!(
            out,
            "warning: {diverged} unobserved runs took a different virtual time than their judged run; their ratio is not a fair one"
        );
    }
    out
}

pub(super) fn detection_table(bugs: &[BugChases], wall: Duration) -> String {
    use crate::hunt::bench::median;
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| bug | contract | guided: caught | cases (median) | wall (median / max) | unguided: caught | cases (median) | wall (median / max) | shrink wall (median / max) | shrunk to (largest of each) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|---|---|");
    let mut worst_wall = Duration::ZERO;
    let mut all_caught = true;
    for bug in bugs {
        let mode = |guided: bool| -> String {
            let chases: Vec<_> = bug.chases.iter().filter(|c| c.guided == guided).collect();
            let caught = chases.iter().filter(|c| c.caught()).count();
            // An uncaught hunt counts as never: it sorts last.
            let mut cases: Vec<u64> = chases
                .iter()
                .map(|c| if c.caught() { c.cases } else { u64::MAX })
                .collect();
            let mut walls: Vec<Duration> = chases
                .iter()
                .map(|c| if c.caught() { c.wall } else { Duration::MAX })
                .collect();
            let show_cases = |v: Option<u64>| match v {
                Some(u64::MAX) | None => "-".to_string(),
                Some(v) => v.to_string(),
            };
            let show_wall = |v: Option<Duration>| match v {
                Some(Duration::MAX) | None => format!("> {:.0} s", wall.as_secs_f64()),
                Some(v) => format!("{:.2} s", v.as_secs_f64()),
            };
            let max = walls.iter().copied().max();
            format!(
                "{caught} / {} | {} | {} / {}",
                chases.len(),
                show_cases(median(&mut cases)),
                show_wall(median(&mut walls)),
                show_wall(max)
            )
        };
        let contracts: Vec<&str> = catalogue_contracts(bug.bug)
            .iter()
            .map(|c| c.id())
            .collect();
        let shrinks: Vec<_> = bug.chases.iter().filter_map(|c| c.shrunk).collect();
        let mut shrink_walls: Vec<Duration> = shrinks.iter().map(|s| s.0).collect();
        // Each measure's largest over the shrinks (not one shrink's).
        let largest = shrinks
            .iter()
            .map(|s| s.2)
            .reduce(|a, b| (a.0.max(b.0), a.1.max(b.1), a.2.max(b.2)));
        for chase in bug.chases.iter().filter(|c| c.guided) {
            all_caught &= chase.caught();
            worst_wall = worst_wall.max(chase.wall);
        }
        let _ = writeln!(
            out,
            "| #{} {} | {} | {} | {} | {} / {} | {} |",
            bug.bug.catalogue_id(),
            bug.bug.name(),
            contracts.join(", "),
            mode(true),
            mode(false),
            median(&mut shrink_walls).map_or("-".into(), |w| format!("{:.2} s", w.as_secs_f64())),
            shrink_walls
                .iter()
                .max()
                .map_or("-".into(), |w| format!("{:.2} s", w.as_secs_f64())),
            largest.map_or("-".into(), |(keys, items, faults)| format!(
                "<= {keys} keys/peers, {items} items/frames, {faults} faults"
            )),
        );
    }
    let _ = writeln!(
        out,
        "detection: guided hunts caught every bug from every seed: {}; slowest guided hunt {:.2} s",
        if all_caught { "yes" } else { "NO" },
        worst_wall.as_secs_f64()
    );
    out
}

/// A real run's lines: its verdict, scale and wall time, and a failed
/// run's violations (no repro line: a real run cannot be replayed).
pub(super) fn real_lines(outcome: &RealOutcome) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    match outcome {
        RealOutcome::Skipped {
            scenario,
            seed,
            reason,
            ..
        } => {
            let _ = writeln!(text, "SKIP {scenario} seed {seed} (real): {reason}");
        }
        RealOutcome::Ran(ran) => {
            let r = &ran.result;
            let _ = writeln!(
                text,
                "{} {} seed {} (real, time scale {}): {:.2} s wall, {:.2} s scenario time, {} events, wake-ups up to {:.1} ms late",
                r.verdict.name().to_uppercase(),
                r.scenario,
                r.seed,
                ran.scale,
                ran.wall.as_secs_f64(),
                r.elapsed.as_secs_f64(),
                r.records.len(),
                ran.lateness.as_secs_f64() * 1e3
            );
            if let Some(crash) = &r.crash {
                let _ = writeln!(text, "  crash: {crash}");
            }
            for violation in &r.violations {
                let _ = write!(text, "  {violation}");
            }
            if let Some(pending) = &r.pending {
                super::sweep::pending_lines(&mut text, pending, "  ");
            }
        }
    }
    text
}

/// `run --real`'s summary.
pub(super) fn real_summary(runs: &[RealOutcome]) -> String {
    let mut verdicts = std::collections::BTreeMap::<&str, u64>::new();
    let mut skipped = 0;
    let mut wall = 0.0;
    for run in runs {
        match run {
            RealOutcome::Ran(ran) => {
                *verdicts.entry(ran.result.verdict.name()).or_default() += 1;
                wall += ran.wall.as_secs_f64();
            }
            RealOutcome::Skipped { .. } => skipped += 1,
        }
    }
    let ran: u64 = verdicts.values().sum();
    let counts: Vec<String> = verdicts
        .iter()
        .map(|(name, count)| format!("{count} {name}"))
        .collect();
    let mut text = format!(
        "real: {ran} run(s) ({}), {skipped} skipped, {wall:.2} s wall\n",
        if counts.is_empty() {
            "none".into()
        } else {
            counts.join(", ")
        }
    );
    if ran == 0 {
        text.push_str("real: no run was made for real, every one was skipped (above, why): nothing was decided\n");
    }
    text
}

/// `fidelity`'s table: per scenario, each seed's verdicts both ways, the
/// marks only one side reached, and wall time real vs simulated. With no
/// scenario `named`, the ones real mode cannot run are listed apart, not
/// as failures.
pub(super) fn fidelity(found: &[Fidelity], named: bool) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let mut disagreements = Vec::new();
    let mut no_real = Vec::new();
    for f in found {
        let ran: Vec<_> = f.seeds.iter().filter(|s| s.real.is_some()).collect();
        if ran.is_empty() {
            let why = f.skipped.as_deref().unwrap_or("no seeds");
            let _ = writeln!(
                text,
                "{}: no seed compared, skipped for real: {why}",
                f.scenario
            );
            if named {
                disagreements.push(format!("{} not compared", f.scenario));
            } else {
                no_real.push(f.scenario.clone());
            }
            continue;
        }
        let agree = ran.iter().filter(|s| !s.disagrees()).count();
        let sim: f64 = ran.iter().map(|s| s.simulated_wall.as_secs_f64()).sum();
        let real: f64 = ran.iter().map(|s| s.real_wall.as_secs_f64()).sum();
        let late = ran
            .iter()
            .map(|s| s.real_lateness)
            .max()
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "{}: verdicts agree on {agree}/{} seed(s); wall real {real:.2} s vs simulated {sim:.3} s ({:.0}x); real wake-ups up to {:.1} ms late",
            f.scenario,
            ran.len(),
            real / sim.max(1e-9),
            late.as_secs_f64() * 1e3
        );
        for s in &f.seeds {
            let real = s.real.map_or("skipped", |v| v.name());
            let broken = |b: &[String]| {
                if b.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", b.join(", "))
                }
            };
            let _ = writeln!(
                text,
                "  seed {}: simulated {}{}, real {real}{}{}",
                s.seed,
                s.simulated.name(),
                broken(&s.broken.0),
                broken(&s.broken.1),
                if s.disagrees() { "  DISAGREE" } else { "" }
            );
            if s.disagrees() {
                for line in s.real_evidence.iter().flat_map(|e| e.lines()) {
                    let _ = writeln!(text, "    real: {line}");
                }
                if let Some(pending) = &s.real_pending {
                    super::sweep::pending_lines(&mut text, pending, "    real: ");
                }
                disagreements.push(format!("{} seed {}", f.scenario, s.seed));
            }
        }
        if let Some(why) = &f.skipped {
            let _ = writeln!(text, "  some seeds skipped for real: {why}");
        }
        let only = |pick: fn(&(u64, u64)) -> bool| -> Vec<String> {
            f.marks
                .iter()
                .filter(|(_, counts)| pick(counts))
                .map(|(mark, _)| mark.to_string())
                .collect()
        };
        let both: Vec<String> = f
            .marks
            .iter()
            .filter(|(_, &(s, r))| s > 0 && r > 0)
            .map(|(mark, (s, r))| format!("{mark} {s}/{r}"))
            .collect();
        let _ = writeln!(
            text,
            "  marks reached both ways (seeds simulated/real): {}",
            if both.is_empty() {
                "none".to_string()
            } else {
                both.join(", ")
            }
        );
        for (side, marks) in [
            ("simulation", only(|&(s, r)| s > 0 && r == 0)),
            ("real", only(|&(s, r)| s == 0 && r > 0)),
        ] {
            if !marks.is_empty() {
                let _ = writeln!(text, "  marks only in {side}: {}", marks.join(", "));
            }
        }
    }
    if !no_real.is_empty() {
        let _ = writeln!(
            text,
            "not compared (real mode cannot run them; name one to make it count): {}",
            no_real.join(", ")
        );
    }
    if found.iter().all(|f| !f.compared()) {
        let _ = writeln!(text, "fidelity: no scenario compared: nothing was decided");
    } else if disagreements.is_empty() {
        let _ = writeln!(text, "fidelity: simulated and real verdicts agree");
    } else {
        let _ = writeln!(
            text,
            "fidelity: {} disagreement(s) or scenarios not compared: {}",
            disagreements.len(),
            disagreements.join("; ")
        );
    }
    text
}

/// The likely sources of one divergence (`run::diverge`), a line each,
/// most likely first, or why none is named.
pub(super) fn divergence_hints(d: &crate::run::Divergence) -> String {
    use std::fmt::Write as _;
    let hints = crate::run::diverge::likely(
        d.first.as_ref(),
        d.second.as_ref(),
        !crate::explore::tokio_explores(),
        d.fresh,
    );
    let mut out = String::new();
    match d.fresh {
        Some(true) => {
            let _ = writeln!(out, "    in two fresh processes the seed replays");
        }
        Some(false) => {
            let _ = writeln!(out, "    in two fresh processes it diverges too");
        }
        None => {}
    }
    if hints.is_empty() {
        let _ = writeln!(
            out,
            "    likely source: none the events point at (see the note below)"
        );
    }
    for hint in hints {
        let _ = writeln!(out, "    likely source ({}): {}", hint.why, hint.source);
    }
    out
}

/// What `audit` says after a divergence: where to look.
pub(super) fn audit_note(target: Option<&str>) -> String {
    match target {
        Some(name) => format!(
            "note: the target `{name}` is not replayable: two runs of one seed differed at the event above. \
             Look in its code for a runtime or threads of its own, the wall clock (std::time::Instant, SystemTime), \
             OS entropy (thread_rng, getrandom, RandomState), a map iterated, drained, cleared or dropped in a random \
             hasher's order{}: route them through the world (docs/your-implementation.md, \"Determinism\")",
            if crate::explore::tokio_explores() {
                ""
            } else {
                ", and an un-biased tokio::select! (this build has stock tokio, which does not seed it)"
            }
        ),
        None => "note: lanesim's own components did not replay: a bug in the testbed or in them (the seed and event above reproduce it)".to_string(),
    }
}

/// A chase's report ([`super::chased`]).
#[must_use]
pub fn chase_lines(chase: &crate::chase::Chase, subject: &Subject) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let what = chase.expect.label();
    let simulated_too = chase.tried.len() == 1 && chase.caught.is_some();
    if simulated_too {
        let _ = writeln!(
            out,
            "  the simulation fails seed {} of {} the same way ({what})",
            chase.seed, chase.scenario
        );
    } else {
        let _ = writeln!(
            out,
            "  {} {what} on seed {} of {}: the simulation passes that seed; chasing it in simulation with scheduling exploration on",
            super::paint("REAL ONLY", super::Tone::Bad),
            chase.seed,
            chase.scenario
        );
        for tried in &chase.tried {
            let _ = writeln!(out, "    tried {} ({} run(s))", tried.what, tried.runs);
        }
    }
    match &chase.caught {
        Some(caught) => {
            let _ = writeln!(
                out,
                "    simulated repro: seed {} (shuffle {}, preempt_awaits {}): {}",
                caught.seed, caught.explore.shuffle, caught.explore.awaits, caught.message
            );
            match &caught.file {
                Some(file) => {
                    let repro = Repro::replay(&file.display().to_string(), caught.seed, subject);
                    let _ = writeln!(
                        out,
                        "    shrunk in {} runs to {}\n    repro: {repro}",
                        caught.shrink_runs,
                        file.display()
                    );
                }
                None => {
                    let _ = writeln!(out, "    (its shrink could not write a file)");
                }
            }
        }
        None => {
            let _ = writeln!(
                out,
                "    no simulated run failed this way in {} run(s): the real run may need a schedule the explorer does not make (threads, a race with no await), or be an artifact of the machine",
                chase.runs()
            );
        }
    }
    out
}

#[cfg(test)]
mod chase_tests {
    use super::*;
    use crate::chase::{Caught, Chase, Tried};
    use crate::explore::Exploration;
    use crate::hunt::shrink::Expect;
    use crate::scenario::Contract;

    fn chase(tried: &[(&str, u64)], caught: Option<Caught>) -> Chase {
        Chase {
            scenario: "lanes_select_idle".into(),
            seed: 18,
            expect: Expect::Violates(Contract::L2),
            tried: tried
                .iter()
                .map(|(what, runs)| Tried {
                    what: (*what).into(),
                    runs: *runs,
                })
                .collect(),
            caught,
        }
    }

    /// A real-only failure says so, lists what was tried, and gives the
    /// repro of what it found or says it found none.
    #[test]
    fn a_real_only_failure_is_named_with_what_the_chase_tried() {
        let subject = Subject::default();
        let none = chase_lines(
            &chase(&[("seed 18 as written", 1), ("exploring", 399)], None),
            &subject,
        );
        assert!(
            none.contains("REAL ONLY L2 on seed 18 of lanes_select_idle"),
            "{none}"
        );
        assert!(none.contains("tried exploring (399 run(s))"), "{none}");
        assert!(
            none.contains("no simulated run failed this way in 400 run(s)"),
            "{none}"
        );

        let found = Caught {
            seed: 75,
            explore: Exploration {
                shuffle: 0.2,
                awaits: 0.1,
                hold: (Duration::ZERO, Duration::ZERO),
            },
            message: "key 0: admitted item 26 was never handled".into(),
            file: Some("target/lanesim/chased/L2-75.toml".into()),
            shrink_runs: 600,
        };
        let found = chase_lines(
            &chase(&[("seed 18 as written", 1), ("exploring", 58)], Some(found)),
            &subject,
        );
        assert!(found.contains("REAL ONLY"), "{found}");
        assert!(found.contains("simulated repro: seed 75"), "{found}");
        assert!(
            found.contains("replay target/lanesim/chased/L2-75.toml --seed 75"),
            "{found}"
        );
    }

    /// A seed the simulation fails too is no real-only failure.
    #[test]
    fn a_failure_the_simulation_shares_is_not_called_real_only() {
        let caught = Caught {
            seed: 18,
            explore: Exploration::default(),
            message: "m".into(),
            file: None,
            shrink_runs: 0,
        };
        let text = chase_lines(
            &chase(&[("seed 18 as written", 1)], Some(caught)),
            &Subject::default(),
        );
        assert!(!text.contains("REAL ONLY"), "{text}");
        assert!(text.contains("the simulation fails seed 18"), "{text}");
    }
}

#[cfg(test)]
mod hunt_tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;
    use crate::event::EventKind;
    use crate::hunt::shrink::{Expect, Shrunk};
    use crate::hunt::strategy::HuntWorld;
    use crate::run::signature::{Failing, Shape};
    use crate::scenario::Contract;

    fn params(file: &str, seed: u64) -> crate::scenario::Params {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .join(file);
        Scenario::load(&path).unwrap().sample(seed)
    }

    /// Case `index` that broke `contract` at a `ConnectionDown`, shrunk to
    /// a sender case whose faults are `faults`' kinds.
    fn found(index: u64, contract: Contract, shrunk_to: &str) -> Found {
        let shrunk = params(shrunk_to, index);
        let bare = Signature {
            scenario: None,
            failing: Failing::Broke(contract),
            decided_by: Some(EventKind::ConnectionDown),
            shape: None,
        };
        Found {
            index,
            origin: Origin::Fresh,
            params: shrunk.clone(),
            seed: index,
            expect: Expect::Violates(contract),
            contracts: vec![contract],
            message: format!("{} broken in case {index}", contract.id()),
            signature: bare.shrunk_to(Shape::of(&shrunk)),
            shrunk: Some((
                Shrunk {
                    params: shrunk,
                    runs: 10,
                    steps: 3,
                    wall: Duration::from_millis(5),
                    exhausted: false,
                },
                PathBuf::from(format!(
                    "target/lanesim/shrunk/{}-{index}.toml",
                    contract.id()
                )),
            )),
        }
    }

    fn report(found: Vec<Found>, failures: u64) -> HuntReport {
        let mut signatures: Vec<(Signature, u64)> = Vec::new();
        for f in &found {
            match signatures
                .iter_mut()
                .find(|(s, _)| *s == f.signature.bare())
            {
                Some((_, n)) => *n += 1,
                None => signatures.push((f.signature.bare(), 1)),
            }
        }
        // The cases past the kept ones: like the first kept one.
        signatures[0].1 += failures - found.len() as u64;
        signatures.sort();
        HuntReport {
            world: HuntWorld::Sender,
            cases: 1000,
            mutated: 0,
            found,
            failures,
            signatures,
            marks: BTreeMap::new(),
            corpus: 0,
            wall: Duration::from_secs(1),
            stop: Stop::Cases,
            digest: 0,
        }
    }

    /// A hunt that found 169 failing cases of one DC-1 violation (100
    /// kept and shrunk to one shape) prints one failure, its count and one
    /// repro, and says what the 69 not kept were.
    #[test]
    fn a_hunts_failures_with_one_signature_print_once_with_their_count() {
        let found = (0..100)
            .map(|i| found(i, Contract::Dc1, "sender_wedged_peer.toml"))
            .collect();
        let text = hunt_report(&report(found, 169), &Subject::default());
        assert!(
            text.contains("failures: 1 distinct failure(s) in 169 failing case(s)"),
            "{text}"
        );
        assert!(
            text.contains("DC-1 (send or down) at ConnectionDown, shrunk to sender, wedge \u{d7} 100: cases 0, 1, 2, 3, 4 and 95 more"),
            "{text}"
        );
        assert!(
            text.contains("DC-1 (send or down) at ConnectionDown \u{d7} 69 more, not kept"),
            "{text}"
        );
        assert_eq!(text.matches("repro: ").count(), 1, "{text}");
        assert!(text.contains("FAIL case 0 "), "{text}");
    }

    /// Two contracts, or one contract whose cases shrank to different
    /// shapes, are separate failures, each with its own repro.
    #[test]
    fn a_hunts_grouping_detects_two_contracts_and_two_shapes() {
        let found = vec![
            found(0, Contract::Dc1, "sender_wedged_peer.toml"),
            found(1, Contract::S3, "sender_wedged_peer.toml"),
            found(2, Contract::Dc1, "sender_wedged_peer.toml"),
            found(3, Contract::Dc1, "sender_fifo.toml"),
        ];
        let text = hunt_report(&report(found, 4), &Subject::default());
        assert!(
            text.contains("3 distinct failure(s) in 4 failing case(s)"),
            "{text}"
        );
        assert!(text.contains("wedge \u{d7} 2: cases 0 and 2"), "{text}");
        assert!(text.contains("S3 ("), "{text}");
        assert_eq!(text.matches("repro: ").count(), 3, "{text}");
        assert!(!text.contains("not kept"), "{text}");
    }
}

#[cfg(test)]
mod audit_tests {
    use std::sync::Arc;

    use super::*;
    use crate::event::{Event, Record};
    use crate::run::Divergence;

    fn routed(at_ms: u64, key: u64) -> Option<Record> {
        Some(Record {
            at: Duration::from_millis(at_ms),
            host: Arc::from("lanes"),
            event: Event::Routed {
                key,
                item: 1,
                capacity: None,
                depth: Some(0),
            },
        })
    }

    /// A divergence prints its likely sources under its two events, and
    /// what two fresh processes said when they were asked.
    #[test]
    fn an_audit_divergence_prints_its_likely_sources() {
        let mut d = Divergence {
            scenario: "s".into(),
            seed: 3,
            index: 41,
            first: routed(12, 2),
            second: routed(15, 2),
            fresh: None,
        };
        let text = divergence_hints(&d);
        assert!(
            text.starts_with("    likely source (the runs differ in virtual time (0.012000s vs 0.015000s)): the wall clock"),
            "{text}"
        );
        d.fresh = Some(true);
        let text = divergence_hints(&d);
        assert!(
            text.contains("in two fresh processes the seed replays"),
            "{text}"
        );
        assert!(text.contains("likely source (the seed replays in two fresh processes but not twice in one): a static"), "{text}");
        d.second = None;
        d.fresh = None;
        assert!(divergence_hints(&d).contains("none the events point at"));
    }
}
