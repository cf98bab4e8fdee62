//! A run that outlives its budget says what it left pending: the step of
//! its world's run it was stuck in, the sender's counters and table then,
//! what the log shows accepted with no fate, and the log's last records,
//! in simulation and in real mode, in the printed failure and in the JSON
//! a sweep's shards are merged from.

use std::path::Path;

use lanesim_sims::real::{execute_real, RealOutcome};
use lanesim_sims::run::pending::{Pending, Unresolved, TAIL};
use lanesim_sims::run::sweep::Failure;
use lanesim_sims::run::{execute, RunResult, Verdict};
use lanesim_sims::scenario::Scenario;
use lanesim_sims::targets::Subject;
use lanesim_sims::world::EndStep;

/// A peer stops reading at 50 ms while 30-40 kB frames keep coming, and
/// the write deadline (60 s) outlasts the budget (10 s): the drain is
/// parked on peer0's socket for the rest of the run, so the world's end
/// waits for counters that cannot balance. No S2 in `checks`: a write
/// that never ends is S2's own failure, not what this run is about.
const WEDGED_PAST_THE_BUDGET: &str = r#"
description = "a wedged peer whose write deadline outlasts the budget"
world = "sender"
checks = ["DC-1", "DC-5", "S4"]
budget = "10s"
real_time_scale = 0.1

[sender]
peers = 2
data_frames = 40
links = 3
frame_bytes = [30000, 40000]
gap = ["1ms", "2ms"]
write_timeout = "60s"
mss = 1460
tick = "50ms"

[[sender.fault]]
kind = "wedge"
peer = 0
at = "50ms"
"#;

fn scenario(name: &str, text: &str) -> Scenario {
    Scenario::parse(Path::new(name), text).expect("a good scenario")
}

fn pending_of(result: &RunResult) -> &Pending {
    assert_eq!(result.verdict, Verdict::Liveness, "{:?}", result.violations);
    result
        .pending
        .as_ref()
        .expect("a liveness says what it left pending")
}

/// What both modes must say of the wedged run: stuck waiting for the
/// drain, the sender's own counters short of what it queued, peer0's
/// generation still up in the table, and a frame to peer0 being written.
fn says_the_drain_is_parked_on_peer0(pending: &Pending) {
    let stuck = pending.stuck.as_ref().expect("the world says where it was");
    assert!(
        matches!(stuck.step, EndStep::SenderDrain { looks } if looks >= 1),
        "{:?}",
        stuck.step
    );
    let counts = stuck.stats.expect("the sender's counters");
    let accounted = counts.data_written
        + counts.data_failed
        + counts.data_no_connection
        + counts.data_discarded;
    assert!(counts.data_queued > accounted, "{counts:?}");
    let table = stuck.table.as_ref().expect("the table");
    assert!(matches!(table[0], Some((_, false))), "{table:?}");
    // The frame in the drain's hands is listed first: the write it waits on.
    let first = pending.unresolved.first().expect("something unresolved");
    let peer0_write = match *first {
        Unresolved::Data { peer, writing, .. } => peer == 0 && writing.is_some(),
        Unresolved::Control {
            peer,
            generation,
            writing,
            ..
        } => peer == 0 && writing.is_some() && Some((generation, false)) == table[0],
        Unresolved::Item { .. } => false,
    };
    assert!(peer0_write, "{first:?}");
    assert!(pending.unresolved_total >= pending.unresolved.len());
    assert!(!pending.tail.is_empty() && pending.tail.len() <= TAIL);
    assert!(pending.tail.last().unwrap().contains("RunEnd"));
}

#[test]
fn a_simulated_run_that_cannot_finish_reports_what_it_left_pending() {
    let result = execute(
        &scenario("wedged_past_budget", WEDGED_PAST_THE_BUDGET),
        0,
        &Subject::default(),
    );
    let pending = pending_of(&result);
    says_the_drain_is_parked_on_peer0(pending);
    // Simulation has one thread: no ordering lock to report.
    assert_eq!(pending.stuck.as_ref().unwrap().order, None);

    // Printed with the failure, and carried through the JSON that shards
    // are merged from.
    let failure = Failure::of(&result, &Subject::default());
    let mut text = String::new();
    lanesim_sims::report::sweep::failure(&mut text, &failure);
    for expected in [
        "stuck in: the drain",
        "sender counters: data ",
        "table: peer0 generation ",
        // A data frame's line names its generation, a control's is pinned.
        "being written ",
        "the log's last ",
        "RunEnd { finished: false }",
    ] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
    let json = serde_json::to_string(&failure).unwrap();
    let back: Failure = serde_json::from_str(&json).unwrap();
    assert_eq!(back, failure);
}

#[test]
fn a_real_run_that_cannot_finish_reports_what_it_left_pending() {
    let ran = match execute_real(
        &scenario("wedged_past_budget", WEDGED_PAST_THE_BUDGET),
        0,
        &Subject::default(),
    ) {
        RealOutcome::Ran(ran) => ran,
        RealOutcome::Skipped { reason, .. } => panic!("skipped: {reason}"),
    };
    let pending = pending_of(&ran.result);
    says_the_drain_is_parked_on_peer0(pending);
    // Nothing holds the log's ordering lock while the world waits.
    let order = pending.stuck.as_ref().unwrap().order.expect("real mode");
    assert!(!order.held, "{order:?}");
}

#[test]
fn a_lanes_run_that_cannot_finish_names_its_step_and_its_unhandled_items() {
    // 1 ms handlers, 5 ms to do 20+ items (the CLI tests' stuck scenario).
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lanes_order.toml"),
    )
    .unwrap()
    .replacen(
        "world = \"lanes\"",
        "world = \"lanes\"\nbudget = \"5ms\"",
        1,
    )
    .replacen("handler = [\"0ms\", \"1ms\"]", "handler = \"1ms\"", 1);
    let result = execute(&scenario("stuck", &text), 0, &Subject::default());
    let pending = pending_of(&result);
    let stuck = pending.stuck.as_ref().unwrap();
    assert!(
        matches!(
            stuck.step,
            EndStep::LanesProducing { .. } | EndStep::LanesSettling { .. }
        ),
        "{:?}",
        stuck.step
    );
    assert!(stuck.stats.is_none() && stuck.table.is_none());
    assert!(pending.unresolved_total > 0);
    assert!(pending
        .unresolved
        .iter()
        .all(|u| matches!(u, Unresolved::Item { .. })));
}

#[test]
fn a_finished_run_leaves_nothing_pending() {
    let result = execute(
        &Scenario::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/sender_wedged_peer.toml"),
        )
        .unwrap(),
        0,
        &Subject::default(),
    );
    assert_eq!(result.verdict, Verdict::Pass);
    assert!(result.pending.is_none());
}
