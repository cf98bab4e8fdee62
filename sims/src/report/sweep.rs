//! How results are shown: a human summary (default), one JSON document,
//! one JSON line per run (streamed), or JUnit XML. Failures in full, passes
//! counted, then the mark table: how many seeds of each scenario reached
//! each coverage mark, and which required marks a sweep missed. A run that
//! outlived its budget shows what it left pending ([`pending_lines`]; real
//! mode's lines use it too).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use super::{paint, Shown, Tone};
use crate::run::pending::{Pending, Unresolved};
use crate::run::sweep::{Failure, HazardSeen, SweepReport, Tally};
use crate::run::{MarkReach, RunResult, ScenarioReach, Verdict};
use crate::targets::Subject;
use crate::world::EndStep;

/// Violations printed per contract and run; the rest are counted.
const SHOWN_PER_CONTRACT: usize = 3;

/// Scenario names are padded to this many characters at most (longer
/// names push their line out).
const MAX_NAME_WIDTH: usize = 40;

/// The width names are padded to in a sweep of scenarios named `names`.
#[must_use]
pub fn name_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .min(MAX_NAME_WIDTH)
}

/// Whether a scenario is done: it ran every run planned for it (its line
/// is printed as it finishes).
#[must_use]
pub fn finished(tally: &Tally) -> bool {
    tally.refused.is_none() && tally.planned > 0 && tally.ran() == tally.planned
}

/// One scenario's line: its verdict, its name, its seeds, its passes, and
/// what else fell short.
#[must_use]
pub fn scenario_line(tally: &Tally, width: usize) -> String {
    let name = format!("{:<width$}", tally.scenario);
    if let Some(why) = &tally.refused {
        return format!("{} {name}  not decided: {why}", paint("skip", Tone::Warn));
    }
    let reach = tally.reach();
    let missed = if reach.judged {
        reach.missed().len() + reach.vacuous.len()
    } else {
        0
    } + usize::from(reach.starved);
    let undecided = tally.unreachable.len();
    let failed = tally.verdicts.failed();
    let (word, tone) = if failed > 0 {
        ("FAIL", Tone::Bad)
    } else if missed > 0 || reach.decided_no_reach() {
        ("SHORT", Tone::Warn)
    } else if tally.verdicts.hazard > 0 {
        ("HAZRD", Tone::Warn)
    } else if tally.ran() < tally.planned {
        ("part", Tone::Warn)
    } else {
        ("ok", Tone::Good)
    };
    let seeds = if tally.seeds.len() == 1 {
        format!("seed {}", tally.seeds.into_iter().next().unwrap_or(0))
    } else {
        format!("seeds {}", tally.seeds)
    };
    let mut line = format!(
        "{} {name}  {:<13} {}/{} pass",
        paint(&format!("{word:<5}"), tone),
        seeds,
        tally.verdicts.pass,
        tally.ran()
    );
    let verdicts = tally.verdicts;
    for (count, what) in [
        (verdicts.hazard, "accepted hazard"),
        (verdicts.violated, "violated"),
        (verdicts.liveness, "liveness"),
        (verdicts.crash, "crash"),
    ] {
        if count > 0 {
            let _ = write!(line, ", {count} {what}");
        }
    }
    if missed > 0 {
        let _ = write!(line, "; {missed} reach requirement(s) missed");
    }
    if undecided > 0 {
        let _ = write!(
            line,
            "; {undecided} of {} reach requirement(s) not decided",
            tally.requires.len() + undecided
        );
    }
    if tally.ran() < tally.planned {
        let _ = write!(
            line,
            " (stopped after {} of {} runs)",
            tally.ran(),
            tally.planned
        );
    }
    for not in &tally.undecided {
        let _ = write!(line, "\n      {} not decided: {}", not.what.id(), not.why);
    }
    for not in &tally.unreachable {
        let _ = write!(
            line,
            "\n      reach of `{}` not decided: {}",
            not.what, not.why
        );
    }
    for seen in &tally.hazards {
        let _ = write!(line, "\n      {}", hazard_line(seen, tally.ran()));
    }
    line
}

/// How a sweep saw a hazard the target accepts: the contract, the
/// target's reason, the runs that broke it and the lowest one's repro.
#[must_use]
pub fn hazard_line(seen: &HazardSeen, ran: u64) -> String {
    let mut line = format!(
        "accepted hazard: {} ({}) broken in {} of {ran} run(s); the target's reason: {}",
        seen.contract.id(),
        seen.contract.name(),
        seen.runs,
        seen.why
    );
    if let Some((seed, message, repro)) = &seen.first {
        let _ = write!(line, "\n        seed {seed}: {message}\n        {repro}");
    }
    line
}

/// The human report of a sweep: the lines of the scenarios not printed as
/// they finished, the failures in full (each scenario's lowest seeds'),
/// the requirements missed, the mark table when asked, and the summary.
#[must_use]
pub fn human(report: &SweepReport, shown: Shown) -> String {
    let mut out = String::new();
    let width = name_width(report.scenarios.iter().map(|t| t.scenario.as_str()));
    let shard = report
        .shard
        .map_or_else(String::new, |shard| format!(" (shard {shard})"));
    let (mut not_run, mut undecided) = (0, 0);
    for tally in &report.scenarios {
        if tally.refused.is_some() {
            not_run += 1;
        }
        undecided += tally.undecided.len();
        if !(shown.streamed && finished(tally)) {
            let _ = writeln!(out, "{}", scenario_line(tally, width));
        }
    }
    let failed: u64 = report.scenarios.iter().map(|t| t.verdicts.failed()).sum();
    if failed > 0 {
        grouped(&mut out, report, failed, &shard);
    }
    let reaches = report.reaches();
    if shown.marks {
        out.push_str(&mark_table(&reaches));
    }
    if shown.reach {
        out.push_str(&reach_table(&reaches));
    }
    let mut short = String::new();
    let missed = missed_lines(&mut short, &reaches);
    if missed > 0 {
        out.push('\n');
        out.push_str(&short);
    }
    let verdicts = report.verdicts();
    let nothing = report.planned() == 0;
    if nothing {
        let _ = writeln!(
            out,
            "{}: this sweep{shard} holds no run (a shard of fewer seeds than shards): nothing was decided",
            paint("NOTHING RAN", Tone::Bad)
        );
    }
    if report.stopped {
        let _ = writeln!(
            out,
            "stopped by --for: {} of {} runs done",
            report.ran(),
            report.planned()
        );
    }
    let not_decided = if not_run + undecided == 0 {
        String::new()
    } else {
        format!(
            "; not decided for this target: {not_run} scenario(s), {undecided} contract(s) of the rest"
        )
    };
    let timing = if report.wall.0.is_zero() {
        String::new()
    } else {
        let secs = report.wall.0.as_secs_f64();
        format!(
            "; {secs:.1} s, {:.0} runs/s",
            verdicts.total() as f64 / secs.max(1e-9)
        )
    };
    let unreached = report.undecided_reaches();
    let undecided_reaches = if unreached == 0 {
        String::new()
    } else {
        format!("; {unreached} reach requirement(s) not decided")
    };
    let all_good = verdicts.failed() == 0 && missed == 0 && !report.stopped && !nothing;
    let tone = if !all_good {
        Tone::Bad
    } else if not_run + undecided + unreached > 0 || verdicts.hazard > 0 {
        Tone::Warn
    } else {
        Tone::Good
    };
    let hazards = if verdicts.hazard == 0 {
        String::new()
    } else {
        format!(" {} accepted hazard,", verdicts.hazard)
    };
    let _ = writeln!(
        out,
        "{}: {} runs: {} pass,{hazards} {} violated, {} liveness, {} crash; {missed} reach requirement(s) missed{undecided_reaches}{not_decided}{timing}",
        paint("summary", tone),
        verdicts.total(),
        verdicts.pass,
        verdicts.violated,
        verdicts.liveness,
        verdicts.crash,
    );
    out
}

/// Seeds of a group listed by name before the rest are counted.
const SEEDS_SHOWN: usize = 5;

/// The failures of a sweep, one per distinct failure (`run::signature`):
/// its signature, how many runs failed with it and which seeds, then the
/// lowest seed's failure in full with its repro. Every failure is still in
/// `--format json` (the kept ones) and `jsonl` (each run); pinned by
/// `failures_with_one_signature_print_once_with_their_count`.
fn grouped(out: &mut String, report: &SweepReport, failed: u64, shard: &str) {
    // A tally from before groups existed counts its kept failures.
    let distinct: usize = report
        .scenarios
        .iter()
        .map(|t| {
            if t.groups.is_empty() {
                t.failures.len()
            } else {
                t.groups.len()
            }
        })
        .sum();
    let _ = writeln!(
        out,
        "\nfailures{shard}: {distinct} distinct failure(s) in {failed} run(s); each once, with its count and one repro (every run: --format jsonl)"
    );
    for tally in &report.scenarios {
        // A report from before groups existed (a shard written by an
        // older lanesim): its kept failures, each in full.
        if tally.groups.is_empty() {
            for failed in &tally.failures {
                out.push('\n');
                failure(out, failed);
            }
            continue;
        }
        for group in &tally.groups {
            // Its seeds among the failures kept in full (the lowest), else
            // its first.
            let mut seeds: Vec<u64> = tally
                .failures
                .iter()
                .filter(|f| f.signature.as_ref() == Some(&group.signature))
                .map(|f| f.seed)
                .collect();
            if seeds.is_empty() {
                seeds.push(group.first);
            }
            let mut listed: Vec<String> = seeds
                .iter()
                .take(SEEDS_SHOWN)
                .map(ToString::to_string)
                .collect();
            let more = group.runs.saturating_sub(listed.len() as u64);
            if more > 0 {
                listed.push(format!("{more} more"));
            }
            let seeds_word = if group.runs == 1 { "seed" } else { "seeds" };
            let _ = writeln!(
                out,
                "\n{} \u{d7} {}: {seeds_word} {}",
                paint(&group.signature.to_string(), Tone::Bad),
                group.runs,
                join_last(&listed)
            );
            match tally
                .failures
                .iter()
                .find(|f| f.seed == group.first && f.signature.as_ref() == Some(&group.signature))
            {
                Some(first) => failure(out, first),
                None => {
                    // More than `KEPT_FAILURES` lower seeds failed first:
                    // its first seed's line and repro, not its evidence.
                    let _ = writeln!(out, "  seed {}: {}", group.first, group.message);
                    let _ = writeln!(out, "  repro: {}", group.repro);
                }
            }
        }
    }
}

/// `a, b and c`.
pub(super) fn join_last(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Writes a `NOT REACHED` line per requirement a judged sweep missed;
/// returns how many.
fn missed_lines(out: &mut String, reaches: &[ScenarioReach]) -> usize {
    let mut missed = 0;
    for reach in reaches.iter().filter(|r| r.starved) {
        missed += 1;
        let _ = writeln!(
            out,
            "NOT REACHED: {} ran none of its seeds (the sweep stopped first): nothing of it was decided",
            reach.scenario
        );
    }
    for reach in reaches.iter().filter(|r| r.decided_no_reach()) {
        if reach.accept_undecided {
            continue;
        }
        missed += 1;
        let _ = writeln!(
            out,
            "NOT DECIDED: {} lists {} reach requirement(s) and this target decides none of them (first: `{}`: {}): the sweep proved nothing about what it reached in the target's code (`--accept-undecided` accepts it)",
            reach.scenario,
            reach.undecided.len(),
            reach.undecided[0].what,
            reach.undecided[0].why,
        );
    }
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
    missed
}

/// One failed run: verdict, parameters, violations, the repro line.
pub fn failure(out: &mut String, failed: &Failure) {
    let _ = writeln!(
        out,
        "{} {} seed {}: {}",
        paint(&failed.verdict.name().to_uppercase(), Tone::Bad),
        failed.scenario,
        failed.seed,
        failed.params_line
    );
    let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
    for broken in &failed.violations {
        let count = shown.entry(broken.contract.id()).or_default();
        *count += 1;
        if *count <= SHOWN_PER_CONTRACT {
            let _ = writeln!(
                out,
                "    {} ({}) violated: {}",
                broken.contract.id(),
                broken.contract.name(),
                broken.message
            );
            for record in &broken.evidence {
                let _ = writeln!(out, "        {record}");
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
    if let Some(crash) = &failed.crash {
        let _ = writeln!(out, "    the testbed panicked: {crash}");
    }
    if failed.verdict == Verdict::Liveness {
        let _ = writeln!(
            out,
            "    ran out of its virtual-time budget after {} ms",
            failed.virtual_ms
        );
    }
    if let Some(pending) = &failed.pending {
        pending_lines(out, pending, "    ");
    }
    let _ = writeln!(out, "  repro: {}", failed.repro);
    if !failed.trace.argv.is_empty() {
        let _ = writeln!(out, "  trace: {} (open in ui.perfetto.dev)", failed.trace);
    }
}

/// What a run that outlived its budget was waiting for: the step its world
/// was in, the sender's counters and table then, what the log shows with
/// no fate, and the log's last records; each line indented by `indent`.
pub fn pending_lines(out: &mut String, pending: &Pending, indent: &str) {
    let secs = |d: std::time::Duration| format!("{:.3}s", d.as_secs_f64());
    match &pending.stuck {
        None => {
            let _ = writeln!(out, "{indent}pending: the world did not say where it was");
        }
        Some(stuck) => {
            let step = match stuck.step {
                EndStep::SenderDialing { peer } => format!("the first dial of peer{peer}"),
                EndStep::SenderWorkload => "the workload (still enqueueing)".into(),
                EndStep::SenderDrain { looks } => format!(
                    "the drain: the sender's counters did not yet account for every frame and control queued ({looks} look(s))"
                ),
                EndStep::SenderLastFault { at } => {
                    format!("the fault timeline's last step, due at {}", secs(at))
                }
                EndStep::SenderQuiet { quiet, looks } => format!(
                    "the end's quiet: the log to stay quiet for {} ({looks} wait(s), each after new records)",
                    secs(quiet)
                ),
                EndStep::SenderClosing => "closing: recording the table and counters".into(),
                EndStep::LanesProducing { producing } => {
                    format!("the producers: {producing} still routing")
                }
                EndStep::LanesSettling { router_dropped } => format!(
                    "the log to settle, {} the router's drop",
                    if router_dropped { "after" } else { "before" }
                ),
                EndStep::MeshClock => "the mesh workload's clock".into(),
            };
            let _ = writeln!(out, "{indent}stuck in: {step}");
            if let Some(c) = stuck.stats {
                let data = c.data_written + c.data_failed + c.data_no_connection + c.data_discarded;
                let controls =
                    c.control_written + c.control_failed + c.control_skipped + c.control_discarded;
                let _ = writeln!(
                    out,
                    "{indent}sender counters: data {} queued = {} written + {} failed + {} no connection + {} discarded, {} without a fate; controls {} queued = {} written + {} failed + {} skipped + {} discarded, {} without a fate",
                    c.data_queued,
                    c.data_written,
                    c.data_failed,
                    c.data_no_connection,
                    c.data_discarded,
                    c.data_queued.saturating_sub(data),
                    c.control_queued,
                    c.control_written,
                    c.control_failed,
                    c.control_skipped,
                    c.control_discarded,
                    c.control_queued.saturating_sub(controls),
                );
            }
            match &stuck.table {
                Some(table) => {
                    let slots: Vec<String> = table
                        .iter()
                        .enumerate()
                        .map(|(peer, slot)| match slot {
                            None => format!("peer{peer} none"),
                            Some((generation, down)) => format!(
                                "peer{peer} generation {generation} ({})",
                                if *down { "down" } else { "up" }
                            ),
                        })
                        .collect();
                    let _ = writeln!(out, "{indent}table: {}", slots.join(", "));
                }
                None if stuck.stats.is_some() => {
                    let _ = writeln!(
                        out,
                        "{indent}table: not read (its lock was not free within a second)"
                    );
                }
                None => {}
            }
            if let Some(order) = stuck.order {
                let _ = writeln!(
                    out,
                    "{indent}log's ordering lock: {}, {} thread(s) waiting",
                    if order.held { "held" } else { "free" },
                    order.waiting
                );
            }
        }
    }
    let _ = writeln!(
        out,
        "{indent}accepted with no fate in the log: {}{}",
        pending.unresolved_total,
        if pending.unresolved_total > pending.unresolved.len() {
            format!(" ({} shown)", pending.unresolved.len())
        } else {
            String::new()
        }
    );
    for unresolved in &pending.unresolved {
        let line = match *unresolved {
            Unresolved::Data {
                peer,
                seq,
                queued,
                writing,
            } => format!(
                "data {seq} to peer{peer}, queued at {}{}",
                secs(queued),
                writing.map_or(String::new(), |(generation, at)| format!(
                    ", being written to generation {generation} since {}",
                    secs(at)
                ))
            ),
            Unresolved::Control {
                peer,
                generation,
                seq,
                queued,
                writing,
            } => format!(
                "control {seq} pinned to peer{peer} generation {generation}, queued at {}{}",
                secs(queued),
                writing.map_or(String::new(), |at| format!(
                    ", being written since {}",
                    secs(at)
                ))
            ),
            Unresolved::Item {
                key,
                item,
                routed,
                started,
            } => format!(
                "item {item} of key {key}, routed at {}{}",
                secs(routed),
                started.map_or(String::new(), |at| format!(
                    ", its handler running since {}",
                    secs(at)
                ))
            ),
        };
        let _ = writeln!(out, "{indent}    {line}");
    }
    let _ = writeln!(
        out,
        "{indent}the log's last {} record(s):",
        pending.tail.len()
    );
    for record in &pending.tail {
        let _ = writeln!(out, "{indent}    {record}");
    }
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
    // Columns as wide as their widest cell (a long sweep's counts grow).
    let cell = rows
        .values()
        .flatten()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(5);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nmarks: seeds that reached each mark, per scenario (* required and reached, ! required but missed)"
    );
    let _ = write!(out, "{:<width$}", "");
    for column in 1..=reaches.len() {
        let _ = write!(out, " {column:>cell$}");
    }
    out.push('\n');
    for (mark, cells) in &rows {
        let _ = write!(out, "{:<width$}", mark.to_string());
        for text in cells {
            let _ = write!(out, " {text:>cell$}");
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

/// Each scenario's required marks, one line each: the seeds that reached
/// the mark, their share of the seeds run, and the floor (`>= 25%`, or one
/// seed), `MISSED` when short. The figures behind a scenario's `reaches`,
/// measured by this sweep rather than kept by hand.
#[must_use]
pub fn reach_table(reaches: &[ScenarioReach]) -> String {
    fn required(reach: &ScenarioReach) -> Vec<&MarkReach> {
        reach
            .marks
            .iter()
            .filter(|m| m.required.is_some())
            .collect()
    }
    let marks: Vec<&MarkReach> = reaches.iter().flat_map(required).collect();
    let width = marks
        .iter()
        .map(|m| m.mark.to_string().len())
        .max()
        .unwrap_or(0);
    let digits = reaches
        .iter()
        .map(|r| r.seeds.to_string().len())
        .max()
        .unwrap_or(1);
    let mut out =
        String::from("\nreach: seeds that reached each required mark, their share, the floor\n");
    for reach in reaches {
        let required = required(reach);
        if required.is_empty() {
            continue;
        }
        let seeds = if reach.seeds == 1 { "seed" } else { "seeds" };
        let judged = if reach.judged {
            ""
        } else {
            ", not judged: too few seeds"
        };
        let _ = writeln!(out, "{} ({} {seeds}{judged})", reach.scenario, reach.seeds);
        for mark in required {
            let floor = mark.required.and_then(|r| r.share).map_or_else(
                || "one seed".to_string(),
                |share| format!("{}%", share * 100.0),
            );
            let share = if reach.seeds == 0 {
                "-".to_string()
            } else {
                format!("{:.0}%", 100.0 * mark.seeds_hit as f64 / reach.seeds as f64)
            };
            let verdict = if reach.judged && mark.missed(reach.seeds) {
                paint("  MISSED", Tone::Bad)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  {:<width$}  {:>digits$}/{:<digits$}  {share:>4}  >= {floor}{verdict}",
                mark.mark.to_string(),
                mark.seeds_hit,
                reach.seeds,
            );
        }
    }
    out
}

/// The JSON report of a sweep: the report itself (what `lanesim merge`
/// reads back), each scenario's coverage judgement, and a summary with the
/// exit code.
#[must_use]
pub fn json(report: &SweepReport, exit: u8) -> String {
    let mut document = serde_json::to_value(report).unwrap_or(Value::Null);
    let reaches = report.reaches();
    if let Some(Value::Array(scenarios)) = document.get_mut("scenarios") {
        for (scenario, reach) in scenarios.iter_mut().zip(&reaches) {
            scenario["judged"] = json!(reach.judged);
            scenario["starved"] = json!(reach.starved);
            scenario["decided_no_reach"] = json!(reach.decided_no_reach());
            scenario["reaches"] = reach
                .marks
                .iter()
                .filter_map(|m| {
                    m.required.map(|r| {
                        json!({
                            "mark": m.mark.to_string(),
                            "required_seeds": r.required(reach.seeds),
                            "seeds_hit": m.seeds_hit,
                            "reached": !m.missed(reach.seeds),
                        })
                    })
                })
                .collect();
        }
    }
    document["summary"] = summary(report, exit);
    serde_json::to_string_pretty(&document).unwrap_or_default()
}

/// A sweep's totals and exit code: `--format json`'s `summary`, and the
/// last line of `--format jsonl` (with the wall time there).
#[must_use]
pub fn summary(report: &SweepReport, exit: u8) -> Value {
    let verdicts = report.verdicts();
    let reaches = report.reaches();
    json!({
        "planned": report.planned(),
        "runs": verdicts.total(),
        "pass": verdicts.pass,
        "hazard": verdicts.hazard,
        "violated": verdicts.violated,
        "liveness": verdicts.liveness,
        "crash": verdicts.crash,
        "missed": reaches.iter().filter(|r| r.fell_short()).count(),
        "not_run": report.scenarios.iter().filter(|t| t.refused.is_some()).count(),
        "undecided": report.scenarios.iter().map(|t| t.undecided.len()).sum::<usize>(),
        "undecided_reaches": report.undecided_reaches(),
        "decided_no_reach": reaches.iter().filter(|r| r.decided_no_reach()).count(),
        "exit": exit,
    })
}

/// The last line of `--format jsonl`: `{"summary": ...}`, told from a
/// run's line by its only key.
#[must_use]
pub fn jsonl_summary(report: &SweepReport, exit: u8) -> String {
    let mut summary = summary(report, exit);
    summary["wall_s"] = json!(report.wall.0.as_secs_f64());
    json!({ "summary": summary }).to_string()
}

/// One run as one line of JSON (`--format jsonl`).
#[must_use]
pub fn jsonl(result: &RunResult, subject: &Subject) -> String {
    let marks: serde_json::Map<String, Value> = result
        .coverage
        .iter()
        .map(|(mark, count)| (mark.to_string(), json!(count)))
        .collect();
    let mut line = serde_json::to_value(Failure::of(result, subject)).unwrap_or(Value::Null);
    line["marks"] = Value::Object(marks);
    line["undecided"] = result
        .undecided
        .iter()
        .map(|n| json!({ "contract": n.what.id(), "why": n.why }))
        .collect();
    line["hazards"] = result
        .hazards
        .iter()
        .map(|v| {
            let why = result.accepted.iter().find(|n| n.what == v.contract);
            json!({
                "contract": v.contract.id(),
                "message": v.message,
                "why": why.map(|n| n.why.as_str()),
            })
        })
        .collect();
    if !result.verdict.is_failure() {
        line["repro"] = Value::Null;
        line["trace"] = Value::Null;
    }
    line.to_string()
}

/// The JUnit XML of a sweep: a suite, a test case per scenario (failed if
/// any seed failed or a required mark was missed), and a test case per
/// failed seed kept, carrying its repro line.
///
/// # Errors
/// When the XML cannot be written.
pub fn junit(report: &SweepReport) -> Result<String, String> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new("lanesim");
    for (tally, reach) in report.scenarios.iter().zip(report.reaches()) {
        let skipped = |name: String, why: &str| {
            let mut status = TestCaseStatus::skipped();
            status.set_message(format!("not decided: {why}"));
            let mut case = TestCase::new(name, status);
            case.set_classname(tally.path.clone());
            case
        };
        if let Some(why) = &tally.refused {
            suite.add_test_case(skipped(tally.scenario.clone(), why));
            continue;
        }
        for not in &tally.undecided {
            suite.add_test_case(skipped(
                format!("{} {}", tally.scenario, not.what.id()),
                &not.why,
            ));
        }
        for not in &tally.unreachable {
            suite.add_test_case(skipped(
                format!("{} reaches {}", tally.scenario, not.what),
                &not.why,
            ));
        }
        for seen in &tally.hazards {
            let mut status = TestCaseStatus::skipped();
            status.set_message(hazard_line(seen, tally.ran()));
            let mut case = TestCase::new(
                format!("{} {} accepted hazard", tally.scenario, seen.contract.id()),
                status,
            );
            case.set_classname(tally.path.clone());
            suite.add_test_case(case);
        }
        let failed = tally.verdicts.failed();
        let mut missed = String::new();
        let short = missed_lines(&mut missed, std::slice::from_ref(&reach));
        let status = if failed > 0 || short > 0 {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(format!(
                "{failed} of {} seeds failed; {short} reach requirement(s) missed",
                tally.ran()
            ));
            let mut description = missed;
            for failure in &tally.failures {
                let _ = writeln!(description, "seed {}: {}", failure.seed, failure.repro);
            }
            status.set_description(description);
            status
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(tally.scenario.clone(), status);
        case.set_classname(tally.path.clone());
        case.set_time(tally.wall.0);
        suite.add_test_case(case);
        for failure in &tally.failures {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_type(failure.verdict.name());
            let first = failure.violations.first().map_or_else(
                || failure.verdict.name().to_string(),
                |b| {
                    format!(
                        "{} ({}) violated: {}",
                        b.contract.id(),
                        b.contract.name(),
                        b.message
                    )
                },
            );
            status.set_message(format!("{first}; {}", failure.repro));
            let mut text = String::new();
            self::failure(&mut text, failure);
            status.set_description(text);
            let mut case =
                TestCase::new(format!("{} seed {}", tally.scenario, failure.seed), status);
            case.set_classname(tally.path.clone());
            suite.add_test_case(case);
        }
    }
    suite.set_time(report.wall.0);
    let mut junit = Report::new("lanesim run");
    junit.set_time(report.wall.0);
    junit.add_test_suite(suite);
    junit.to_string().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::check::Violation;
    use crate::event::{Event, Record};
    use crate::run::sweep::Wall;
    use crate::scenario::{Contract, Scenario};
    use crate::targets::decide::Decidable;

    fn scenario() -> Scenario {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml");
        Scenario::load(&path).unwrap()
    }

    /// A run of `scenario` on `seed` that broke `contract`, decided by a
    /// `Routed` event.
    fn violated(scenario: &Scenario, seed: u64, contract: Contract) -> RunResult {
        let mut result = RunResult::crashed(scenario, seed, String::new());
        result.crash = None;
        result.verdict = Verdict::Violated;
        result.violations = vec![Violation {
            contract,
            message: format!("broken on seed {seed}"),
            evidence: vec![Record {
                at: Duration::from_millis(3),
                host: Arc::from("lanes"),
                event: Event::Routed {
                    key: 4,
                    item: 44,
                    capacity: None,
                    depth: Some(0),
                },
            }],
        }];
        result
    }

    fn sweep_of(runs: &[RunResult]) -> SweepReport {
        let scenario = scenario();
        let subject = Subject::default();
        let seeds = crate::scenario::SeedRange::new(0, runs.len() as u64 - 1).unwrap();
        let mut tally = Tally::new(&scenario, seeds, runs.len() as u64, &Decidable::default());
        for run in runs {
            tally.add(run, &subject);
        }
        SweepReport {
            scenarios: vec![tally],
            shard: None,
            stopped: false,
            planted: None,
            accept_undecided: false,
            wall: Wall::default(),
        }
    }

    /// 169 runs that broke one contract at one kind of event are one
    /// failure: printed once, with its count, its seeds and one repro.
    #[test]
    fn failures_with_one_signature_print_once_with_their_count() {
        let scenario = scenario();
        let runs: Vec<RunResult> = (0..169)
            .map(|seed| violated(&scenario, seed, Contract::Dc1))
            .collect();
        let report = sweep_of(&runs);
        let text = human(&report, Shown::default());
        assert!(
            text.contains("1 distinct failure(s) in 169 run(s)"),
            "{text}"
        );
        assert!(
            text.contains(
                "DC-1 (send or down) at Routed in lanes_order \u{d7} 169: seeds 0, 1, 2, 3, 4 and 164 more"
            ),
            "{text}"
        );
        assert_eq!(text.matches("repro: ").count(), 1, "{text}");
        assert_eq!(text.matches("VIOLATED lanes_order").count(), 1, "{text}");
        assert!(text.contains("VIOLATED lanes_order seed 0"), "{text}");
        // Every failure kept is still in the JSON, each with its signature.
        let doc: Value = serde_json::from_str(&json(&report, 1)).unwrap();
        let failures = doc["scenarios"][0]["failures"].as_array().unwrap();
        assert_eq!(failures.len(), crate::run::sweep::KEPT_FAILURES);
        assert_eq!(failures[7]["signature"]["failing"]["broke"], "DC-1");
        assert_eq!(failures[7]["signature"]["decided_by"], "Routed");
        assert_eq!(doc["scenarios"][0]["groups"][0]["runs"], 169);
    }

    /// Two contracts broken in one scenario are two failures, each with
    /// its own count and repro.
    #[test]
    fn grouping_detects_two_contracts_as_two_failures() {
        let scenario = scenario();
        let runs: Vec<RunResult> = (0..5)
            .map(|seed| {
                let contract = if seed == 3 {
                    Contract::L1
                } else {
                    Contract::L4
                };
                violated(&scenario, seed, contract)
            })
            .collect();
        let report = sweep_of(&runs);
        let text = human(&report, Shown::default());
        assert!(text.contains("2 distinct failure(s) in 5 run(s)"), "{text}");
        assert!(
            text.contains("L4 (capacity) at Routed in lanes_order \u{d7} 4: seeds 0, 1, 2 and 4"),
            "{text}"
        );
        assert!(
            text.contains("L1 (per-key FIFO) at Routed in lanes_order \u{d7} 1: seed 3"),
            "{text}"
        );
        assert_eq!(text.matches("repro: ").count(), 2, "{text}");
    }

    /// A group whose first seed is past the failures kept in full still
    /// prints its count, its first seed's line and its repro.
    #[test]
    fn a_group_past_the_kept_failures_still_prints_its_repro() {
        let scenario = scenario();
        let mut runs: Vec<RunResult> = (0..101)
            .map(|seed| violated(&scenario, seed, Contract::L4))
            .collect();
        runs[100] = violated(&scenario, 100, Contract::L2);
        let text = human(&sweep_of(&runs), Shown::default());
        assert!(
            text.contains("L2 (exactly once) at Routed in lanes_order \u{d7} 1: seed 100\n"),
            "{text}"
        );
        assert!(
            text.contains("  seed 100: L2 (exactly once) violated: broken on seed 100"),
            "{text}"
        );
        assert!(text.contains("lanes_order.toml --seed 100\n"), "{text}");
    }
}
