//! What the testbed's tests share (each `mod support;`): the checker
//! tests' fixtures and verdicts below, and the shipped scenarios and a
//! whole sweep of them for the tests that run worlds.
//!
//! Fixtures. A test takes a hand-made log and plants its breach in it: every
//! record it inserts, replaces, edits or removes is located by its event
//! (a predicate, most often [`is!`]), never by a position, so a fixture
//! that grows or shrinks moves nothing a test means. Each helper panics,
//! naming the predicate's place in the test, when no record matches, and
//! (where one is meant) when more than one does.
//!
//! Verdicts. A violation is identified by its contract and by the records
//! it cites as evidence, never by its message: "a violation of C citing the
//! records the test planted" pins which clause fired, and survives any
//! rewording. Where two clauses of one contract would cite the same
//! records, a test names the whole evidence ([`assert_violates_exactly`]).

// Each test binary uses some of these.
#![allow(dead_code, unused_macros, unused_imports)]

use std::path::Path;
use std::time::Duration;

use lanesim_sims::check::{check, CheckContext, Violation};
use lanesim_sims::event::{Event, Record};
use lanesim_sims::run::sweep::{sweep, Plan, Shard, SweepReport, Unwatched};
use lanesim_sims::scenario::{Contract, Scenario, SeedRange};
use lanesim_sims::targets::Subject;

/// Every scenario file in `dir` (relative to the sims package), in path
/// order.
pub fn load_dir(dir: &str) -> Vec<Scenario> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| Scenario::load(p).expect("every shipped scenario loads"))
        .collect()
}

/// The shipped scenarios (`scenarios/*.toml`).
pub fn shipped() -> Vec<Scenario> {
    load_dir("../scenarios")
}

/// The shipped scenario called `name`.
pub fn shipped_named(name: &str) -> Scenario {
    shipped()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no shipped scenario {name}"))
}

/// A whole sweep of `scenarios` over `seeds` on two threads, for `subject`.
pub fn sweep_whole(scenarios: &[Scenario], seeds: SeedRange, subject: Subject) -> SweepReport {
    let plan = Plan {
        scenarios,
        seeds: Some(seeds),
        shard: Shard::ALL,
        wall: None,
        jobs: 2,
        subject,
        accept_undecided: false,
    };
    sweep(&plan, &mut Unwatched)
}

/// A predicate on an event, from a pattern: `is!(Event::RunEnd { .. })`.
macro_rules! is {
    ($($pattern:tt)+) => {
        |event: &::lanesim_sims::event::Event| matches!(event, $($pattern)+)
    };
}
pub(crate) use is;

/// A record of `event` at `ms` on `host`.
pub fn record(host: &str, ms: u64, event: Event) -> Record {
    Record {
        at: Duration::from_millis(ms),
        host: host.into(),
        event,
    }
}

/// The index of the one record whose event matches `pred`; panics, with
/// the log, when none does, and with the first two when more than one does.
#[track_caller]
pub fn find(log: &[Record], pred: impl Fn(&Event) -> bool) -> usize {
    let mut matching = log
        .iter()
        .enumerate()
        .filter(|(_, r)| pred(&r.event))
        .map(|(i, _)| i);
    let Some(first) = matching.next() else {
        panic!(
            "no record of the log matches the predicate:\n{}",
            listed(log)
        );
    };
    if let Some(second) = matching.next() {
        panic!(
            "more than one record matches the predicate (#{first}: {}, #{second}: {}); name one",
            log[first], log[second]
        );
    }
    first
}

/// The one record whose event matches `pred`.
#[track_caller]
pub fn the(log: &[Record], pred: impl Fn(&Event) -> bool) -> Record {
    log[find(log, pred)].clone()
}

/// Inserts `record` just before the one record matching `pred`; returns
/// what it planted.
#[track_caller]
pub fn insert_before(
    log: &mut Vec<Record>,
    pred: impl Fn(&Event) -> bool,
    record: Record,
) -> Record {
    let at = find(log, pred);
    insert_at(log, at, record)
}

/// Inserts `record` just after the one record matching `pred`; returns
/// what it planted.
#[track_caller]
pub fn insert_after(
    log: &mut Vec<Record>,
    pred: impl Fn(&Event) -> bool,
    record: Record,
) -> Record {
    let at = find(log, pred) + 1;
    insert_at(log, at, record)
}

/// Inserts `record` into a log in time order, after every record logged
/// at or before its time; returns what it planted.
#[track_caller]
pub fn insert_in_time(log: &mut Vec<Record>, record: Record) -> Record {
    assert!(
        log.windows(2).all(|pair| pair[0].at <= pair[1].at),
        "the log is not in time order:\n{}",
        listed(log)
    );
    let at = log.partition_point(|r| r.at <= record.at);
    insert_at(log, at, record)
}

fn insert_at(log: &mut Vec<Record>, at: usize, record: Record) -> Record {
    log.insert(at, record.clone());
    record
}

/// Replaces the one record matching `pred` with `record`; returns what it
/// planted.
#[track_caller]
pub fn replace(log: &mut [Record], pred: impl Fn(&Event) -> bool, record: Record) -> Record {
    let at = find(log, pred);
    log[at] = record.clone();
    record
}

/// Changes the one record matching `pred` in place; returns it as changed.
#[track_caller]
pub fn edit(
    log: &mut [Record],
    pred: impl Fn(&Event) -> bool,
    change: impl FnOnce(&mut Record),
) -> Record {
    let at = find(log, pred);
    change(&mut log[at]);
    log[at].clone()
}

/// Changes every record matching `pred` (one at least) in place.
#[track_caller]
pub fn edit_all(
    log: &mut [Record],
    pred: impl Fn(&Event) -> bool,
    mut change: impl FnMut(&mut Record),
) {
    let mut changed = 0;
    for record in log.iter_mut().filter(|r| pred(&r.event)) {
        change(record);
        changed += 1;
    }
    assert!(
        changed > 0,
        "no record of the log matches the predicate:\n{}",
        listed(log)
    );
}

/// Removes the one record matching `pred`; returns it.
#[track_caller]
pub fn remove(log: &mut Vec<Record>, pred: impl Fn(&Event) -> bool) -> Record {
    let at = find(log, pred);
    log.remove(at)
}

/// Removes every record matching `pred` (one at least); returns them.
#[track_caller]
pub fn remove_all(log: &mut Vec<Record>, pred: impl Fn(&Event) -> bool) -> Vec<Record> {
    let (gone, kept): (Vec<Record>, Vec<Record>) = log.drain(..).partition(|r| pred(&r.event));
    *log = kept;
    assert!(
        !gone.is_empty(),
        "no record of the log matches the predicate:\n{}",
        listed(log)
    );
    gone
}

fn listed(log: &[Record]) -> String {
    log.iter()
        .enumerate()
        .map(|(i, r)| format!("  #{i} {r}\n"))
        .collect()
}

/// Every violation of `contract` whose evidence holds each of `cited`.
pub fn citing(
    log: &[Record],
    context: &CheckContext,
    contract: Contract,
    cited: &[&Record],
) -> Vec<Violation> {
    check(&[contract], log, context)
        .into_iter()
        .filter(|v| cited.iter().all(|c| v.evidence.contains(c)))
        .collect()
}

/// Every violation of every contract, for a failed assertion to show.
fn everything(log: &[Record], context: &CheckContext) -> String {
    let found = check(&Contract::ALL, log, context);
    if found.is_empty() {
        return "no violation at all".into();
    }
    found.iter().map(ToString::to_string).collect()
}

fn cited_list(cited: &[&Record]) -> String {
    cited.iter().map(|r| format!("    {r}\n")).collect()
}

/// A violation of `contract` is reported whose evidence holds each of
/// `cited` (the records the test planted, or the ones its breach is about).
#[track_caller]
pub fn assert_violates(
    log: &[Record],
    context: &CheckContext,
    contract: Contract,
    cited: &[&Record],
) {
    assert!(
        !citing(log, context, contract, cited).is_empty(),
        "expected a violation of {} citing\n{}found:\n{}",
        contract.id(),
        cited_list(cited),
        everything(log, context)
    );
}

/// A violation of `contract` is reported whose evidence is exactly
/// `evidence` (in any order): where another clause of the contract cites a
/// part of it, the whole set tells which clause fired.
#[track_caller]
pub fn assert_violates_exactly(
    log: &[Record],
    context: &CheckContext,
    contract: Contract,
    evidence: &[&Record],
) {
    let same = |v: &Violation| {
        v.evidence.len() == evidence.len() && evidence.iter().all(|c| v.evidence.contains(c))
    };
    assert!(
        check(&[contract], log, context).iter().any(same),
        "expected a violation of {} citing exactly\n{}found:\n{}",
        contract.id(),
        cited_list(evidence),
        everything(log, context)
    );
}

/// No violation of `contract` cites all of `cited`.
#[track_caller]
pub fn assert_not_violates(
    log: &[Record],
    context: &CheckContext,
    contract: Contract,
    cited: &[&Record],
) {
    let found = citing(log, context, contract, cited);
    assert!(
        found.is_empty(),
        "expected no violation of {} citing\n{}found:\n{}",
        contract.id(),
        cited_list(cited),
        found.iter().map(ToString::to_string).collect::<String>()
    );
}

/// No violation of `contract` at all.
#[track_caller]
pub fn assert_holds(log: &[Record], context: &CheckContext, contract: Contract) {
    let found = check(&[contract], log, context);
    assert!(
        found.is_empty(),
        "expected no violation of {}, found:\n{}",
        contract.id(),
        found.iter().map(ToString::to_string).collect::<String>()
    );
}

/// No violation of any of `contracts`.
#[track_caller]
pub fn assert_clean(contracts: &[Contract], log: &[Record], context: &CheckContext) {
    let found = check(contracts, log, context);
    assert!(
        found.is_empty(),
        "expected no violation, found:\n{}",
        found.iter().map(ToString::to_string).collect::<String>()
    );
}

/// The violations of `contracts` in `log` are `expected` and no others,
/// in contract order: each contract with exactly the records it cites, in
/// log order (as a violation holds them).
#[track_caller]
pub fn assert_only(
    contracts: &[Contract],
    log: &[Record],
    context: &CheckContext,
    expected: &[(Contract, &[&Record])],
) {
    let found: Vec<(Contract, Vec<Record>)> = check(contracts, log, context)
        .into_iter()
        .map(|v| (v.contract, v.evidence))
        .collect();
    let expected: Vec<(Contract, Vec<Record>)> = expected
        .iter()
        .map(|(contract, cited)| (*contract, cited.iter().map(|&r| r.clone()).collect()))
        .collect();
    assert_eq!(found, expected);
}

/// The contracts of `contracts` that `log` breaks, in contract order, each
/// once: for a test that claims which contracts a breach touches (and
/// which it leaves alone).
pub fn broken(contracts: &[Contract], log: &[Record], context: &CheckContext) -> Vec<Contract> {
    let mut found: Vec<Contract> = check(contracts, log, context)
        .into_iter()
        .map(|v| v.contract)
        .collect();
    found.dedup();
    found
}
