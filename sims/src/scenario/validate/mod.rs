//! Validation of a parsed scenario file: every impossible value, named by
//! its key, in the order the file's problems are reported (the first is
//! the one shown).
//!
//! - this file: [`validate`], the file's own keys (its world's table,
//!   `checks`, `reaches`, `real_time_scale`, `budget`) and whether what is
//!   timed falls within the budget; [`name_problem`].
//! - [`common`]: [`Problem`] and the checks of one value (counts,
//!   durations, chances, bounds, preemption).
//! - [`lanes`], [`sender`], [`mesh`]: each world's table and its faults.
//!
//! The bounds are [`crate::scenario::limits`]'s. Keys are
//! [`KeyPath`]s, which `scenario::position` turns into file:line:col.

mod common;
mod lanes;
mod mesh;
mod sender;

use std::time::Duration;

use common::problem;
pub(super) use common::Problem;

use super::limits;
use super::marks;
use super::position::KeyPath;
use super::reach::Reach;
use super::sample::Dur;
use super::spec::{Contract, ScenarioFile};
use crate::coverage::CoverMark;
use crate::world_kind::WorldKind;

/// Why `name` cannot name a scenario in a report, if it cannot: empty,
/// over [`limits::NAME_CHARS`] characters, or holding a control character
/// or a line or paragraph separator.
pub(super) fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("is empty".into());
    }
    if name.chars().count() > limits::NAME_CHARS {
        return Some(format!("is longer than {} characters", limits::NAME_CHARS));
    }
    name.chars()
        .find(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
        .map(|c| {
            format!(
                "holds {c:?} (U+{:04X}): a name is printed in report lines",
                c as u32
            )
        })
}

/// Every problem of `file`, in the order they are reported.
pub(super) fn validate(file: &ScenarioFile) -> Vec<Problem> {
    let mut problems = Vec::new();
    file_keys(file, &mut problems);
    if let Some(lanes) = &file.lanes {
        lanes::validate(lanes, &mut problems);
    }
    if let Some(sender) = &file.sender {
        sender::validate(sender, &mut problems);
    }
    if let Some(mesh) = &file.mesh {
        mesh::validate(mesh, file.exact, &mut problems);
    }
    // A fault scheduled after the budget would silently never happen.
    let budget = file.budget.map_or(Duration::from_secs(120), |b| b.0);
    if let Some(mesh) = &file.mesh {
        mesh::timing(mesh, budget, &mut problems);
    }
    if let Some(sender) = &file.sender {
        sender::timing(sender, &mut problems);
    }
    within_budget(file, budget, &mut problems);
    problems
}

/// The file's own keys: the world's table and no other, the checks and
/// the marks it names, `real_time_scale`, `budget`.
fn file_keys(file: &ScenarioFile, problems: &mut Vec<Problem>) {
    let world = file.world.name();
    let tables = [
        (WorldKind::Lanes, file.lanes.is_some()),
        (WorldKind::Sender, file.sender.is_some()),
        (WorldKind::Mesh, file.mesh.is_some()),
    ];
    for (kind, present) in tables {
        if kind == file.world && !present {
            problems.push(problem(
                KeyPath::top("world"),
                format!("world = \"{world}\" needs a [{world}] table"),
            ));
        } else if kind != file.world && present {
            problems.push(problem(
                KeyPath::top(kind.name()),
                format!("a {world} world has no [{}] table", kind.name()),
            ));
        }
    }
    if file.checks.is_empty() {
        problems.push(problem(
            KeyPath::top("checks"),
            "name at least one contract to check",
        ));
    }
    for (index, contract) in file.checks.iter().enumerate() {
        let key = KeyPath::top("checks").index(index);
        if file.checks[..index].contains(contract) {
            problems.push(problem(
                key.clone(),
                format!("{} is listed twice", contract.id()),
            ));
        }
        if contract.world() != file.world {
            problems.push(problem(
                key.clone(),
                format!("{} is not a contract of the {world} world", contract.id()),
            ));
        }
        if let Some(why) = contract.undecidable_in_simulation() {
            problems.push(problem(key, why));
        }
    }
    let redials = file
        .sender
        .as_ref()
        .is_some_and(|s| s.redial_after.is_some());
    if let Some(index) = file
        .checks
        .iter()
        .position(|c| *c == Contract::S8)
        .filter(|_| !redials)
    {
        problems.push(problem(
            KeyPath::top("checks").index(index),
            "S8 (redial liveness) needs sender.redial_after: a world that never redials cannot fail it",
        ));
    }
    if file.reaches.len() > limits::REACHES {
        problems.push(problem(
            KeyPath::top("reaches"),
            format!("at most {} marks", limits::REACHES),
        ));
    }
    // Each mark once: two entries for one mark are a duplicate, or a
    // contradiction (`>= 10%` and `>= 99%`), and either way one of them
    // says nothing.
    let mut seen: Vec<(CoverMark, usize)> = Vec::new();
    for (index, text) in file.reaches.iter().enumerate() {
        let key = KeyPath::top("reaches").index(index);
        match Reach::parse(text) {
            Err(message) => problems.push(problem(key, message)),
            Ok(reach) if !marks::reachable_in(reach.mark, file.world) => problems.push(problem(
                key,
                format!("`{}` is not a mark the {world} world can reach", reach.mark),
            )),
            Ok(reach) => {
                if let Some(&(_, first)) = seen.iter().find(|(mark, _)| *mark == reach.mark) {
                    problems.push(problem(
                        key,
                        format!(
                            "`{}` is already required by reaches[{first}] (`{}`): list each mark once, with one share",
                            reach.mark, file.reaches[first]
                        ),
                    ));
                } else {
                    seen.push((reach.mark, index));
                }
            }
        }
    }
    if file.exact && file.sender.as_ref().is_some_and(|s| s.chaos.is_some()) {
        problems.push(problem(
            KeyPath::field("sender", "chaos"),
            "an exact file lists every fault: no chaos",
        ));
    }
    if let Some(scale) = file.real_time_scale {
        if !(limits::MIN_REAL_TIME_SCALE..=1.0).contains(&scale) {
            problems.push(problem(
                KeyPath::top("real_time_scale"),
                format!(
                    "must be in [{}, 1] (got {scale})",
                    limits::MIN_REAL_TIME_SCALE
                ),
            ));
        }
    }
    if file.budget.is_some_and(|budget| budget.0.is_zero()) {
        problems.push(problem(KeyPath::top("budget"), "must be greater than zero"));
    }
    if file.budget.is_some_and(|budget| budget.0 > limits::BUDGET) {
        problems.push(problem(
            KeyPath::top("budget"),
            format!("at most {}", Dur(limits::BUDGET)),
        ));
    }
}

/// Nothing is timed at or past the budget: a shutdown, a router drop or a
/// mesh workload the run never gets to; a fault lasting longer than the
/// whole run (a latency of 5000 s once ran out of budget), or scheduled
/// after it, which would silently never happen.
fn within_budget(file: &ScenarioFile, budget: Duration, problems: &mut Vec<Problem>) {
    let mut timed: Vec<(KeyPath, Duration)> = Vec::new();
    if let Some(at) = file.sender.as_ref().and_then(|s| s.shutdown_at.as_ref()) {
        timed.push((KeyPath::field("sender", "shutdown_at"), at.bounds().1 .0));
    }
    if let Some(at) = file.lanes.as_ref().and_then(|l| l.drop_router_at.as_ref()) {
        timed.push((KeyPath::field("lanes", "drop_router_at"), at.bounds().1 .0));
    }
    if let Some(mesh) = &file.mesh {
        timed.push((KeyPath::field("mesh", "workload"), mesh.workload.0));
    }
    for (index, fault) in file.sender.iter().flat_map(|s| s.fault.iter().enumerate()) {
        if let Some(lasting) = &fault.lasting {
            timed.push((
                KeyPath::field("sender", "fault").index(index).key("for"),
                lasting.bounds().1 .0,
            ));
        }
    }
    for (key, time) in timed {
        if time >= budget {
            problems.push(problem(
                key,
                format!(
                    "{} is not within the run's budget ({})",
                    Dur(time),
                    Dur(budget)
                ),
            ));
        }
    }
    let ats = file
        .sender
        .iter()
        .flat_map(|s| s.fault.iter().map(|f| f.at).enumerate())
        .map(|(index, at)| ("sender", index, at))
        .chain(
            file.mesh
                .iter()
                .flat_map(|m| m.fault.iter().map(|f| f.at).enumerate())
                .map(|(index, at)| ("mesh", index, at)),
        );
    for (world, index, at) in ats {
        if at.bounds().1 .0 >= budget {
            problems.push(problem(
                KeyPath::field(world, "fault").index(index).key("at"),
                format!(
                    "{} is not before the run's budget ({}): the fault would never happen",
                    at.bounds().1,
                    Dur(budget)
                ),
            ));
        }
    }
}
