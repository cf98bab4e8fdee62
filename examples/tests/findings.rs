//! What lanesim finds in these implementations, pinned: a change to the
//! testbed or to them that changes a finding fails here, and
//! `docs/examples.md` is updated with it.

use lanesim_examples::ExampleTargets;
use lanesim_sims::run::sweep::SweepReport;
use lanesim_sims::scenario::Contract;
use lanesim_sims::{Failed, Runner};

fn runner() -> Runner {
    Runner::new(ExampleTargets).command("cargo test -p lanesim-examples --test lanesim --")
}

/// The router passes every lanes scenario on its own seeds, with every
/// contract decided (it reports its lanes' lifecycle and counters).
#[test]
fn the_router_passes_every_lanes_scenario() {
    let report = runner()
        .check(
            &[
                "@shipped/lanes_capacity_flood.toml",
                "@shipped/lanes_drop_midflight.toml",
                "@shipped/lanes_long_handler.toml",
                "@shipped/lanes_order.toml",
                "@shipped/lanes_panics.toml",
                "@shipped/lanes_raw_panics.toml",
                "@shipped/lanes_reap_race.toml",
                "@shipped/lanes_stuck_key.toml",
            ],
            Some("0..16"),
        )
        .unwrap();
    for tally in &report.scenarios {
        assert!(tally.undecided.is_empty(), "{}", tally.scenario);
        assert_eq!(tally.verdicts.pass, 16, "{}", tally.scenario);
    }
}

fn failed(result: Result<SweepReport, Failed>) -> SweepReport {
    match result {
        Err(Failed::Runs(report)) => *report,
        Err(Failed::Input(message)) => panic!("{message}"),
        Ok(_) => panic!("the sweep passed"),
    }
}

/// The node loses a simultaneous connect: both ends register a stream of
/// the pair and then close what the other holds, and they hold no common
/// connection until a redial (M1). Found by `run @shipped/mesh_cross_dial.toml`
/// (seed 146 of 0..200) and shrunk to a file; the repro line is this
/// crate's.
#[test]
fn the_node_loses_a_simultaneous_connect() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/findings/mesh_crossed_dials.toml"
    );
    let report = failed(runner().check(&[path], None));
    let failure = &report.scenarios[0].failures[0];
    assert_eq!(failure.violations[0].contract, Contract::M1);
    // The path as the shell `cargo test` was typed in names it.
    let shown = lanesim_sims::workdir::shown(path);
    assert_eq!(
        failure.repro.cargo,
        format!("cargo test -p lanesim-examples --test lanesim -- replay {shown} --seed 146")
    );
    assert_eq!(failure.repro.argv[1..], ["replay", path, "--seed", "146"]);
}

/// The node has no frame deadline: a frame trickled in a byte per quarter
/// tick is never cut off (M9). Found by `hunt --world mesh --seed 3` (case
/// 2) once the mesh learned the trickle.
#[test]
fn the_node_lets_a_slowloris_hold_a_frame() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/findings/mesh_slowloris.toml");
    let report = failed(runner().check(&[path], None));
    let failure = &report.scenarios[0].failures[0];
    assert_eq!(failure.violations[0].contract, Contract::M9);
    assert!(
        failure.violations[0].message.contains("never closed it"),
        "{}",
        failure.violations[0].message
    );
}

/// The node has no frame budget: five spenders that each send all but the
/// last byte of a 64 KiB frame make it hold 320 KiB of unfinished frames
/// against its 256 KiB budget for as long as they like (M9's memory bound,
/// measured at its read halves). Found by `run @shipped/mesh_spender.toml`
/// once M9 measured what nodes hold: every seed.
#[test]
fn the_node_holds_whatever_spenders_send() {
    let report = failed(runner().check(&["@shipped/mesh_spender.toml"], Some("0..4")));
    let tally = &report.scenarios[0];
    assert_eq!(tally.verdicts.violated, 4, "{}", tally.scenario);
    for failure in &tally.failures {
        // The report carries evidence as printed records.
        let over = failure.violations.iter().find(|v| {
            v.contract == Contract::M9
                && v.evidence
                    .iter()
                    .any(|record| record.contains("MeshHeld { node: 0, over: true"))
        });
        assert!(over.is_some(), "{:?}", failure.violations);
    }
}

/// The node keeps every sender contract on the shipped sender scenarios'
/// first seeds (what `run @shipped` finds on every seed is in
/// docs/examples.md).
#[test]
fn the_node_keeps_the_sender_contracts() {
    let report = runner()
        .check(
            &[
                "@shipped/sender_fifo.toml",
                "@shipped/sender_wedged_peer.toml",
                "@shipped/sender_control_flood_healthy.toml",
                "@shipped/sender_late_down.toml",
            ],
            Some("0..4"),
        )
        .unwrap();
    assert_eq!(report.verdicts().pass, 16);
}
