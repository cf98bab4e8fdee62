//! What the model world finds in these implementations, pinned (as
//! `findings.rs` pins what the simulated worlds find): `idle_lanes` loses
//! an item when its idle sleep wins the `select!` just after the router's
//! drop, found within a few executions and replayed; `unlocked_lanes`
//! (written blind under "no lock across a send") starts an item admitted
//! behind another before it when two routes of one key overlap (L1), a
//! race with no await in it that no simulated run enters; the other routers,
//! `blind_lanes` and `sharded_lanes` (written blind against the shim for
//! this world) among them, pass every workload and reach the states each
//! is named for; so do the user senders over lanesim's connection layer,
//! `layer_sender` and `blind_sender` (written blind), in the sender
//! workloads.
//!
//! Run (the model checker is a build of its own):
//! `RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/model cargo test --release -p lanesim-examples --test model_findings`
#![cfg(shuttle)]

use lanesim_examples::blind_lanes::BlindTargets;
use lanesim_examples::blind_sender::BlindSenderTargets;
use lanesim_examples::sharded_lanes::ShardedTargets;
use lanesim_examples::unlocked_lanes::UnlockedTargets;
use lanesim_examples::{ExampleTargets, IdleTargets, LayerSenderTargets, SelectTargets};
use lanesim_sims::model::workload::Shape;
use lanesim_sims::model::{ModelBreak, ModelReport, Ran};
use lanesim_sims::scenario::Contract;
use lanesim_sims::Runner;

fn model(runner: &Runner) -> ModelReport {
    runner.model(0, 1000).expect("a --cfg shuttle build")
}

#[test]
fn idle_lanes_loses_an_item_when_its_idle_sleep_wins_after_the_drop() {
    let report = model(&Runner::new(IdleTargets));
    let finds: Vec<_> = report.finds().collect();
    let (run, find) = finds
        .iter()
        .find(|(run, _)| run.workload.name == "route-then-drop")
        .expect("route-then-drop finds it");
    let ModelBreak::Violated(violations) = &find.broke else {
        panic!("{:?}", find.broke)
    };
    assert!(
        violations
            .iter()
            .any(|v| v.contract == Contract::L2 && v.message.contains("never handled")),
        "{violations:?}"
    );
    // Within a handful of executions, under both strategies.
    assert!(find.execution < 50, "{}", find.execution);
    assert!(finds.len() >= 4, "{} finds", finds.len());
    // The printed replay reaches the same execution with the same log.
    let line = report.replay_line(run, find);
    assert!(
        line.contains(&format!("--executions {}", find.execution + 1)),
        "{line}"
    );
    let again = model(&Runner::new(IdleTargets));
    let (_, same) = again
        .finds()
        .find(|(r, _)| r.workload.name == run.workload.name && r.plan.strategy == run.plan.strategy)
        .expect("found again");
    assert_eq!(same.execution, find.execution);
    assert_eq!(same.records, find.records);
}

#[test]
fn the_other_routers_pass_every_workload_and_reach_its_states() {
    for (name, report) in [
        ("examples", model(&Runner::new(ExampleTargets))),
        ("select-lanes", model(&Runner::new(SelectTargets))),
        ("blind-lanes", model(&Runner::new(BlindTargets))),
        ("sharded-lanes", model(&Runner::new(ShardedTargets))),
    ] {
        let finds: Vec<_> = report
            .finds()
            .map(|(run, find)| {
                format!(
                    "{} {}: {:?}",
                    run.workload.name, run.plan.strategy, find.broke
                )
            })
            .collect();
        assert!(finds.is_empty(), "{name}: {finds:#?}");
        assert!(
            !report.fell_short(),
            "{name} fell short of a required state"
        );
        assert_eq!(report.target, name);
    }
}

/// `unlocked_lanes` admits by a compare-and-swap on the lane's pending
/// count and sends after: a route that admits second can send first. Its
/// author named the race; the simulated lanes scenarios pass it (408 runs).
#[test]
fn unlocked_lanes_starts_an_item_before_one_admitted_ahead_of_it_when_routes_overlap() {
    let report = model(&Runner::new(UnlockedTargets));
    let (run, find) = report
        .finds()
        .find(|(run, _)| run.workload.name == "overlapping-routes")
        .expect("overlapping-routes finds it");
    let ModelBreak::Violated(violations) = &find.broke else {
        panic!("{:?}", find.broke)
    };
    assert!(
        violations
            .iter()
            .any(|v| v.contract == Contract::L1 && v.message.contains("admitted first")),
        "{violations:?}"
    );
    assert!(find.execution < 1000, "{}", find.execution);
    // Every finding is an overlapping workload's: with routes one step
    // each, the race cannot happen.
    for (run, _) in report.finds() {
        assert!(run.workload.overlaps(), "{}", run.workload.name);
    }
    let _ = run;
}

/// The sender workloads run a user's sender over lanesim's connection
/// layer: `layer_sender` (beamr's `DistSender` shape, over the layer's
/// public trait, ported to the shim by its `use` lines) and `blind_sender`
/// (written blind against the public API and the shim) pass each and
/// reach the states each is named for.
#[test]
fn the_user_senders_pass_the_sender_workloads_and_reach_their_states() {
    for (name, report) in [
        ("layer-sender", model(&Runner::new(LayerSenderTargets))),
        ("blind-sender", model(&Runner::new(BlindSenderTargets))),
    ] {
        let mut ran = 0;
        for run in &report.runs {
            match (&run.ran, &run.workload.shape) {
                (Ran::NotDecided(why), Shape::Sender(_)) => {
                    panic!("{name}: {} not decided: {why}", run.workload.name)
                }
                (Ran::Explored { .. }, Shape::Sender(_)) => ran += 1,
                (_, Shape::Lanes(_)) => {}
            }
        }
        assert_eq!(ran, 12, "{name}: six sender workloads under two strategies");
        let finds: Vec<_> = report
            .finds()
            .map(|(run, find)| {
                format!(
                    "{} {}: {:?}",
                    run.workload.name, run.plan.strategy, find.broke
                )
            })
            .collect();
        assert!(finds.is_empty(), "{name}: {finds:#?}");
        assert!(
            !report.fell_short(),
            "{name} fell short of a required state"
        );
        assert_eq!(report.target, name);
    }
}
