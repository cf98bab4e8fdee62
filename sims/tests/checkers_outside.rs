//! The checkers on logs of targets that are not lanesim's: what they decide
//! from outside when a target does not report (`Reported`), and the shapes
//! another design's log takes (several writers, a fate settled inside
//! `enqueue`). Each check has a log that trips it (`*_detects_*`) and a
//! well-behaved one that must not.

use std::time::Duration;

use lanesim_sims::check::{check, CheckContext, Reported};
use lanesim_sims::event::{ControlOutcome, DataOutcome, Event, Lane, Record, Written};
use lanesim_sims::scenario::Contract;

const SENDER: [Contract; 10] = [
    Contract::Dc1,
    Contract::Dc2,
    Contract::Dc5,
    Contract::S2,
    Contract::S3,
    Contract::S4,
    Contract::S6,
    Contract::S7,
    Contract::S8,
    Contract::EndToEnd,
];
/// What a node target without the drain's account is held to
/// (`targets::decide`: S2 and S4 are not decided then).
const FROM_OUTSIDE: [Contract; 8] = [
    Contract::Dc1,
    Contract::Dc2,
    Contract::Dc5,
    Contract::S3,
    Contract::S6,
    Contract::S7,
    Contract::S8,
    Contract::EndToEnd,
];
const LANES: [Contract; 4] = [Contract::L1, Contract::L2, Contract::L3, Contract::L4];

fn at(ms: u64, event: Event) -> Record {
    Record {
        at: Duration::from_millis(ms),
        host: "local".into(),
        event,
    }
}

fn sender_context() -> CheckContext {
    CheckContext {
        finished: true,
        write_timeout: Some(Duration::from_secs(5)),
        tick: Duration::from_millis(1),
        delivery_bound: Duration::from_millis(100),
        write_bound: Duration::from_millis(10),
        ..CheckContext::default()
    }
}

/// A target that reports no drain account, counters or table.
fn outside(context: CheckContext) -> CheckContext {
    CheckContext {
        reported: Reported {
            drain: false,
            stats: false,
            table: false,
            ..Reported::default()
        },
        ..context
    }
}

fn violations(contracts: &[Contract], log: &[Record], context: &CheckContext) -> Vec<String> {
    check(contracts, log, context)
        .into_iter()
        .map(|v| format!("{}: {}", v.contract.id(), v.message))
        .collect()
}

#[track_caller]
fn assert_has(contracts: &[Contract], log: &[Record], context: &CheckContext, needle: &str) {
    let found = violations(contracts, log, context);
    assert!(
        found.iter().any(|v| v.contains(needle)),
        "expected `{needle}`, found {found:#?}"
    );
}

#[track_caller]
fn assert_clean(contracts: &[Contract], log: &[Record], context: &CheckContext) {
    assert_eq!(violations(contracts, log, context), Vec::<String>::new());
}

fn up(ms: u64, peer: u64, socket: u16) -> Record {
    at(
        ms,
        Event::ConnectionUp {
            peer,
            generation: 1,
            socket,
        },
    )
}

fn control(ms: u64, peer: u64, seq: u64, link: u64) -> Record {
    at(
        ms,
        Event::ControlEnqueued {
            peer,
            generation: 1,
            seq,
            link: Some(link),
            outcome: ControlOutcome::Queued,
            down_at_return: false,
        },
    )
}

fn linked(ms: u64, peer: u64, link: u64) -> Record {
    at(
        ms,
        Event::Linked {
            peer,
            generation: 1,
            link,
        },
    )
}

fn data(ms: u64, peer: u64, seq: u64) -> Record {
    at(
        ms,
        Event::DataEnqueued {
            peer,
            seq,
            outcome: DataOutcome::Queued,
        },
    )
}

fn started(ms: u64, peer: u64, lane: Lane, seq: u64) -> Record {
    at(
        ms,
        Event::WriteStarted {
            peer,
            generation: 1,
            lane,
            seq,
        },
    )
}

fn finished(ms: u64, peer: u64, lane: Lane, seq: u64) -> Record {
    at(
        ms,
        Event::WriteFinished {
            peer,
            generation: 1,
            lane,
            seq,
            outcome: Written::Written,
        },
    )
}

fn begun(ms: u64, socket: u16, lane: Lane, seq: u64) -> Record {
    at(
        ms,
        Event::FrameWriteBegun {
            socket,
            lane,
            seq,
            bytes: 100,
        },
    )
}

fn arrived(ms: u64, peer: u64, socket: u16, lane: Lane, seq: u64, link: Option<u64>) -> Record {
    at(
        ms,
        Event::FrameArrived {
            peer,
            socket,
            lane,
            generation: u64::from(lane == Lane::Control),
            seq,
            link,
        },
    )
}

fn end() -> Record {
    at(1000, Event::RunEnd { finished: true })
}

/// Peer 0 on socket 4000 gets control 1 (link 7) and data 1, as a node
/// that reports no drain account logs it: enqueues, socket writes, arrivals.
fn outside_good() -> Vec<Record> {
    vec![
        up(0, 0, 4000),
        linked(1, 0, 7),
        control(2, 0, 1, 7),
        data(3, 0, 1),
        begun(4, 4000, Lane::Control, 1),
        begun(5, 4000, Lane::Data, 1),
        arrived(6, 0, 4000, Lane::Control, 1, Some(7)),
        arrived(7, 0, 4000, Lane::Data, 1, None),
        end(),
    ]
}

#[test]
fn a_node_seen_from_outside_that_keeps_its_contracts_breaks_nothing() {
    assert_clean(&FROM_OUTSIDE, &outside_good(), &outside(sender_context()));
}

#[test]
fn dc1_detects_from_the_socket_alone_a_control_never_begun_on_its_live_generation() {
    let mut lost = outside_good();
    lost.retain(|r| {
        !matches!(
            r.event,
            Event::FrameWriteBegun {
                lane: Lane::Control,
                ..
            } | Event::FrameArrived {
                lane: Lane::Control,
                ..
            }
        )
    });
    assert_has(
        &FROM_OUTSIDE,
        &lost,
        &outside(sender_context()),
        "DC-1: control 1 accepted against peer0/1 was neither written to it nor was it marked down",
    );
}

#[test]
fn dc2_detects_from_the_socket_alone_a_control_begun_on_another_generations_socket() {
    let mut log = outside_good();
    log.insert(1, up(0, 1, 4001));
    let begun_at = log
        .iter()
        .position(|r| {
            matches!(
                r.event,
                Event::FrameWriteBegun {
                    lane: Lane::Control,
                    ..
                }
            )
        })
        .unwrap();
    log[begun_at] = begun(4, 4001, Lane::Control, 1);
    assert_has(
        &FROM_OUTSIDE,
        &log,
        &outside(sender_context()),
        "DC-2: control 1 pinned to peer0/1 began to be written to peer1/1's socket",
    );
}

#[test]
fn s6_detects_from_the_socket_alone_a_frame_begun_on_a_live_generation_that_never_arrives() {
    let mut log = outside_good();
    log.retain(|r| {
        !matches!(
            r.event,
            Event::FrameArrived {
                lane: Lane::Data,
                ..
            }
        )
    });
    assert_has(
        &FROM_OUTSIDE,
        &log,
        &outside(sender_context()),
        "S6: Data frame 1 was written whole to peer0/1",
    );
}

/// The same log as a node that does report its drain: the drain's events
/// decide DC-1 and S6 then, and their absence is a breach.
#[test]
fn a_node_that_reports_its_drain_is_held_to_its_account() {
    assert_has(
        &SENDER,
        &outside_good(),
        &sender_context(),
        "DC-1: control 1 was accepted against peer0/1 but the drain never saw it",
    );
}

/// Two writers, each a frame in hand: a lane of depth 1 shows three frames
/// between enqueue and fate without holding more than it may.
fn two_writers() -> Vec<Record> {
    vec![
        up(0, 0, 4000),
        up(0, 1, 4001),
        linked(1, 0, 7),
        linked(1, 1, 8),
        linked(1, 0, 9),
        control(2, 0, 1, 7),
        started(2, 0, Lane::Control, 1),
        begun(2, 4000, Lane::Control, 1),
        control(3, 1, 2, 8),
        started(3, 1, Lane::Control, 2),
        begun(3, 4001, Lane::Control, 2),
        control(4, 0, 3, 9),
        finished(5, 0, Lane::Control, 1),
        finished(5, 1, Lane::Control, 2),
        started(6, 0, Lane::Control, 3),
        begun(6, 4000, Lane::Control, 3),
        finished(6, 0, Lane::Control, 3),
        arrived(7, 0, 4000, Lane::Control, 1, Some(7)),
        arrived(7, 1, 4001, Lane::Control, 2, Some(8)),
        arrived(8, 0, 4000, Lane::Control, 3, Some(9)),
        end(),
    ]
}

#[test]
fn lane_depths_allow_one_frame_per_writer_in_flight() {
    let depth_one = CheckContext {
        lane_capacity: Some((4, 1)),
        ..sender_context()
    };
    assert_clean(&SENDER, &two_writers(), &depth_one);
}

#[test]
fn lane_depths_detect_a_lane_holding_more_than_one_frame_per_writer() {
    let depth_one = CheckContext {
        lane_capacity: Some((4, 1)),
        ..sender_context()
    };
    // Control 3 accepted while only one write is under way and two frames
    // wait: a lane of one would have refused it.
    let mut one_writer = two_writers();
    let second = one_writer
        .iter()
        .position(|r| matches!(r.event, Event::WriteStarted { seq: 2, .. }))
        .unwrap();
    one_writer.remove(second);
    assert_has(
        &SENDER,
        &one_writer,
        &depth_one,
        "DC-1: the Control lane accepted a frame while it held 2 of 1",
    );
}

/// A node that settles a frame's fate inside `enqueue` (no connection:
/// unroutable at once) logs the fate just before the enqueue: no frame is
/// left queued by that, for the idle-drain check or the lane's depth.
#[test]
fn a_fate_settled_inside_enqueue_leaves_nothing_queued() {
    let mut log = outside_good();
    log.insert(4, at(3, Event::DataUnroutable { peer: 0, seq: 2 }));
    log.insert(5, data(3, 0, 2));
    // The drain's account of the rest.
    let reporting = vec![
        started(4, 0, Lane::Control, 1),
        finished(4, 0, Lane::Control, 1),
        started(5, 0, Lane::Data, 1),
        finished(5, 0, Lane::Data, 1),
    ];
    for record in reporting {
        let at = log.iter().position(|r| r.at > record.at).unwrap();
        log.insert(at, record);
    }
    let later = log.len() - 1;
    log.insert(later, data(900, 0, 3));
    log.insert(later + 1, started(900, 0, Lane::Data, 3));
    log.insert(later + 2, begun(900, 4000, Lane::Data, 3));
    log.insert(later + 3, finished(900, 0, Lane::Data, 3));
    log.insert(later + 4, arrived(901, 0, 4000, Lane::Data, 3, None));
    let bounded = CheckContext {
        lane_capacity: Some((1, 1)),
        ..sender_context()
    };
    assert_clean(&[Contract::S2, Contract::S4, Contract::Dc1], &log, &bounded);
}

// ---- lanes, from the tasks handlers run on ----

fn lanes_context(panics_kill_lanes: bool) -> CheckContext {
    CheckContext {
        finished: true,
        panics_kill_lanes,
        reported: Reported {
            lifecycle: false,
            lane_stats: false,
            ..Reported::default()
        },
        ..CheckContext::default()
    }
}

fn routed(ms: u64, key: u64, item: u64, depth: Option<u64>) -> Record {
    at(
        ms,
        Event::Routed {
            key,
            item,
            capacity: None,
            depth,
        },
    )
}

fn start(ms: u64, key: u64, item: u64, task: u64) -> Record {
    at(
        ms,
        Event::HandleStart {
            key,
            item,
            lane: task,
        },
    )
}

fn handled(ms: u64, key: u64, item: u64, task: u64, panicked: bool) -> Record {
    at(
        ms,
        Event::HandleEnd {
            key,
            item,
            lane: task,
            panicked,
        },
    )
}

/// Key 1's items on task 1, then (its lane reaped) on task 3; key 2 on
/// task 2 meanwhile.
fn tasks_good() -> Vec<Record> {
    vec![
        routed(0, 1, 10, Some(0)),
        routed(0, 2, 20, Some(0)),
        routed(0, 1, 11, Some(1)),
        start(0, 1, 10, 1),
        start(0, 2, 20, 2),
        handled(1, 1, 10, 1, false),
        handled(1, 2, 20, 2, false),
        start(1, 1, 11, 1),
        handled(2, 1, 11, 1, false),
        routed(50, 1, 12, Some(0)),
        start(50, 1, 12, 3),
        handled(51, 1, 12, 3, false),
        at(60, Event::RouterDropped),
        at(70, Event::RunEnd { finished: true }),
    ]
}

#[test]
fn lanes_seen_from_their_tasks_that_keep_their_contracts_break_nothing() {
    assert_clean(&LANES, &tasks_good(), &lanes_context(false));
}

#[test]
fn l3_detects_from_tasks_two_lanes_of_one_key_running_at_once() {
    let mut log = tasks_good();
    // Item 11 starts on task 4 while item 10 still runs on task 1.
    let start11 = log
        .iter()
        .position(|r| matches!(r.event, Event::HandleStart { item: 11, .. }))
        .unwrap();
    log.remove(start11);
    log.insert(4, start(0, 1, 11, 4));
    let end11 = log
        .iter()
        .position(|r| matches!(r.event, Event::HandleEnd { item: 11, .. }))
        .unwrap();
    log[end11] = handled(2, 1, 11, 4, false);
    assert_has(
        &LANES,
        &log,
        &lanes_context(false),
        "L3: key 1: item 11 began on task 4 while item 10 of the key still ran on task 1",
    );
}

#[test]
fn l3_detects_from_tasks_an_item_on_an_older_task_after_a_newer_one() {
    let mut log = tasks_good();
    let start12 = log
        .iter()
        .position(|r| matches!(r.event, Event::HandleStart { item: 12, .. }))
        .unwrap();
    log.insert(start12 + 2, routed(52, 1, 13, Some(0)));
    log.insert(start12 + 3, start(52, 1, 13, 1));
    log.insert(start12 + 4, handled(53, 1, 13, 1, false));
    assert_has(
        &LANES,
        &log,
        &lanes_context(false),
        "L3: key 1: item 13 ran on task 1 after an item of the key had begun on the newer task 3",
    );
}

/// A raw router's lane that dies with a panic loses what was queued behind
/// it (excused), never what is routed after the panic.
fn panicking() -> Vec<Record> {
    vec![
        routed(0, 1, 10, Some(0)),
        routed(0, 1, 11, Some(1)),
        start(0, 1, 10, 1),
        handled(1, 1, 10, 1, true),
        routed(5, 1, 12, Some(0)),
        start(5, 1, 12, 2),
        handled(6, 1, 12, 2, false),
        at(60, Event::RouterDropped),
        at(70, Event::RunEnd { finished: true }),
    ]
}

#[test]
fn a_raw_lane_dying_with_a_panic_may_lose_only_what_was_queued_behind_it() {
    assert_clean(&LANES, &panicking(), &lanes_context(true));
}

#[test]
fn l2_detects_from_outside_a_key_black_holed_after_its_lane_panicked() {
    let mut log = panicking();
    log.retain(|r| {
        !matches!(
            r.event,
            Event::HandleStart { item: 12, .. } | Event::HandleEnd { item: 12, .. }
        )
    });
    assert_has(
        &LANES,
        &log,
        &lanes_context(true),
        "L2: key 1: admitted item 12 was never handled",
    );
}

/// A raw router that keeps counters counts no panic it did not catch.
#[test]
fn a_raw_routers_counters_count_no_uncaught_panic() {
    let mut log = panicking();
    log.insert(
        7,
        at(
            59,
            Event::DispatcherStats {
                lanes_created: 2,
                lanes_live: 1,
                items_shed: 0,
                handler_panics: 0,
            },
        ),
    );
    let reported = CheckContext {
        reported: Reported::default(),
        panics_kill_lanes: true,
        finished: true,
        ..CheckContext::default()
    };
    let found = violations(&LANES, &log, &reported);
    assert!(
        !found.iter().any(|v| v.contains("handler panics")),
        "{found:#?}"
    );
}
