//! The model world decides what it claims to: lanesim's router passes every
//! workload and reaches the states each is named for; a race with no await
//! in it (planted #23) is found, with the contracts it breaks, and a find
//! replays from `(strategy, seed, executions)`; a target that uses tokio's
//! runtime directly is told so instead of being judged on lost items.
//!
//! Run (the model checker is a build of its own):
//! `RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/model cargo test --release -p lanesim-sims --features planted-bugs --test model_world`
#![cfg(shuttle)]

use std::sync::Arc;

use lanesim::planted::{Planted, PlantedBug};
use lanesim_sims::model::workload::{self, WORKLOADS};
use lanesim_sims::model::{explore_workload, ModelBreak, ModelFind, Ran, WorkloadRun, QUIET};
use lanesim_sims::scenario::Contract;
use lanesim_sims::targets::Subject;
use lanesim_target::lanes::{
    Item, Lanes, LanesCapabilities, LanesFixed, LanesSetup, LanesTarget, ModeKind,
};
use lanesim_target::probe::Sites;
use lanesim_target::shim::explore::{Plan, Strategy};

fn plan(strategy: Strategy, executions: usize) -> Plan {
    Plan {
        strategy,
        seed: 0,
        executions,
        max_steps: 100_000,
        quiet: QUIET,
    }
}

fn find(run: &WorkloadRun) -> Option<&ModelFind> {
    match &run.ran {
        Ran::Explored { found, .. } => found.as_deref(),
        Ran::NotDecided(why) => panic!("{} not decided: {why}", run.workload.name),
    }
}

fn contracts(find: &ModelFind) -> Vec<Contract> {
    match &find.broke {
        ModelBreak::Violated(violations) => violations.iter().map(|v| v.contract).collect(),
        other => panic!("not a violation: {other:?}"),
    }
}

#[test]
fn lanesims_router_passes_every_workload_and_reaches_what_each_is_named_for() {
    let subject = Subject::default();
    for workload in WORKLOADS {
        for strategy in [Strategy::Pct { depth: 3 }, Strategy::Random] {
            let run = explore_workload(&subject, workload, plan(strategy, 1000)).unwrap();
            assert!(
                find(&run).is_none(),
                "{} {strategy}: {:?}",
                workload.name,
                find(&run)
            );
            let Ran::Explored {
                executions,
                reaches,
                ..
            } = &run.ran
            else {
                unreachable!()
            };
            assert_eq!(*executions, 1000);
            assert!(!reaches.is_empty(), "{} names no state", workload.name);
            assert!(
                !run.fell_short(),
                "{} {strategy}: {reaches:?}",
                workload.name
            );
        }
    }
}

/// Planted #23: the reap reads the pending count before it takes the
/// shard lock. No await lies between the read and the removal, so only
/// thread interleavings reach it; the model world finds a lane reaped
/// holding an item, which is then never handled, and replays it.
#[test]
fn a_reap_decided_on_a_pending_count_read_outside_the_lock_is_found_and_replays() {
    let planted = Planted::select(PlantedBug::ReapReadsPendingOutsideLock)
        .expect("a --features planted-bugs build");
    let subject = Subject::lanesim(planted);
    let workload = workload::named("route-then-drop").unwrap();
    for strategy in [Strategy::Pct { depth: 3 }, Strategy::Random] {
        let run = explore_workload(&subject, workload, plan(strategy, 5_000)).unwrap();
        let found = find(&run).unwrap_or_else(|| panic!("{strategy}: not found"));
        let broke = contracts(found);
        assert!(broke.contains(&Contract::L2), "{strategy}: {broke:?}");
        let replay =
            explore_workload(&subject, workload, plan(strategy, found.execution + 1)).unwrap();
        let again = find(&replay).expect("the replay finds it again");
        assert_eq!(again.execution, found.execution);
        assert_eq!(again.records, found.records, "{strategy}: the same log");
        assert_eq!(contracts(again), broke);
    }
}

/// The same bug breaks L5 too (a lane reaped holding work), and L5 is
/// decided for a target that reports its lifecycle.
#[test]
fn a_lane_reaped_holding_work_breaks_l5_in_the_model_world() {
    let planted = Planted::select(PlantedBug::ReapReadsPendingOutsideLock)
        .expect("a --features planted-bugs build");
    let subject = Subject::lanesim(planted);
    let workload = workload::named("route-then-drop").unwrap();
    let run =
        explore_workload(&subject, workload, plan(Strategy::Pct { depth: 3 }, 5_000)).unwrap();
    let found = find(&run).expect("found");
    assert!(
        contracts(found).contains(&Contract::L5),
        "{:?}",
        found.broke
    );
}

/// A router that spawns its lanes with tokio's own `spawn` (not through
/// the shim) has no runtime under the model checker.
struct TokioSpawning;

struct Spawner;

impl Lanes for Spawner {
    fn route(&self, _item: Item, _capacity: Option<usize>) -> Result<usize, Item> {
        drop(tokio::spawn(async {}));
        Ok(0)
    }
}

impl LanesTarget for TokioSpawning {
    fn capabilities(&self) -> LanesCapabilities {
        LanesCapabilities {
            modes: &[ModeKind::Router, ModeKind::Reject],
            lifecycle: false,
            stats: false,
            fixed: LanesFixed::default(),
            hazards: &[],
            sites: Sites::default(),
        }
    }

    fn build(&self, _setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        Ok(Box::new(Spawner))
    }
}

struct Targets;

impl lanesim_target::Targets for Targets {
    fn name(&self) -> &str {
        "tokio-spawning"
    }

    fn lanes(&self) -> Option<&dyn LanesTarget> {
        Some(&TokioSpawning)
    }
}

#[test]
fn a_target_that_spawns_on_tokio_directly_is_told_to_port_not_judged() {
    let subject = Subject::user(Arc::new(Targets));
    let workload = workload::named("drop-racing-work").unwrap();
    let run = explore_workload(&subject, workload, plan(Strategy::Random, 10)).unwrap();
    let found = find(&run).expect("found");
    assert_eq!(found.execution, 0);
    match &found.broke {
        ModelBreak::Crashed(why) => {
            assert!(why.contains("route panicked"), "{why}");
            assert!(why.contains("lanesim_target::shim"), "{why}");
        }
        other => panic!("{other:?}"),
    }
}
