//! The checkers on logs of targets that are not lanesim's: what they decide
//! from outside when a target does not report (`Reported`), and the shapes
//! another design's log takes (several writers, a fate settled inside
//! `enqueue`). Each check has a log that trips it (`*_detects_*`) and a
//! well-behaved one that must not. Each test names the violation it
//! expects by its contract and the records it cites (`support`).

mod support;

use std::time::Duration;

use lanesim_sims::check::{CheckContext, Reported};
use lanesim_sims::event::{ControlOutcome, DataOutcome, Event, Lane, Record, Written};
use lanesim_sims::scenario::Contract;
use support::{
    assert_clean, assert_not_violates, assert_violates, assert_violates_exactly, citing,
    insert_after, insert_before, insert_in_time, is, remove, remove_all, replace, the,
};

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
    support::record("local", ms, event)
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

/// A node that reports its drain account but not its counters or table:
/// for the hand-built logs here, which log neither at their end (the end
/// records' own clauses are `checkers_sender.rs`'s).
fn without_end_records(context: CheckContext) -> CheckContext {
    CheckContext {
        reported: Reported {
            stats: false,
            table: false,
            ..Reported::default()
        },
        ..context
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
    remove_all(
        &mut lost,
        is!(Event::FrameWriteBegun {
            lane: Lane::Control,
            ..
        } | Event::FrameArrived {
            lane: Lane::Control,
            ..
        }),
    );
    // Its enqueue alone ("the drain never saw it" would cite it alone too,
    // but a target without the drain's account is not held to that).
    let accepted = the(&lost, is!(Event::ControlEnqueued { seq: 1, .. }));
    assert_violates_exactly(
        &lost,
        &outside(sender_context()),
        Contract::Dc1,
        &[&accepted],
    );
}

#[test]
fn dc2_detects_from_the_socket_alone_a_control_begun_on_another_generations_socket() {
    let mut log = outside_good();
    insert_after(
        &mut log,
        is!(Event::ConnectionUp { peer: 0, .. }),
        up(0, 1, 4001),
    );
    let begun_there = replace(
        &mut log,
        is!(Event::FrameWriteBegun {
            lane: Lane::Control,
            ..
        }),
        begun(4, 4001, Lane::Control, 1),
    );
    assert_violates(
        &log,
        &outside(sender_context()),
        Contract::Dc2,
        &[&begun_there],
    );
}

#[test]
fn s6_detects_from_the_socket_alone_a_frame_begun_on_a_live_generation_that_never_arrives() {
    let mut log = outside_good();
    remove(
        &mut log,
        is!(Event::FrameArrived {
            lane: Lane::Data,
            ..
        }),
    );
    let begun = the(
        &log,
        is!(Event::FrameWriteBegun {
            lane: Lane::Data,
            ..
        }),
    );
    assert_violates(&log, &outside(sender_context()), Contract::S6, &[&begun]);
}

/// The same log as a node that does report its drain: the drain's events
/// decide DC-1 and S6 then, and their absence is a breach. The control's
/// enqueue is cited alone twice: the drain never saw it, and (by the
/// drain's account) it was never written, silently lost. Evidence alone
/// cannot tell those two apart, so the test counts them: from outside,
/// neither is owed.
#[test]
fn a_node_that_reports_its_drain_is_held_to_its_account() {
    let log = outside_good();
    let accepted = the(&log, is!(Event::ControlEnqueued { seq: 1, .. }));
    let alone = |context: &CheckContext| {
        citing(&log, context, Contract::Dc1, &[&accepted])
            .into_iter()
            .filter(|v| v.evidence == [accepted.clone()])
            .count()
    };
    assert_eq!(alone(&sender_context()), 2, "never seen, and never written");
    assert_eq!(alone(&outside(sender_context())), 0, "begun on its socket");
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
        ..without_end_records(sender_context())
    };
    assert_clean(&SENDER, &two_writers(), &depth_one);
}

/// Three controls for one peer, queued before any write begins, through a
/// lane of depth 1 per peer.
fn three_for_one_peer() -> Vec<Record> {
    let mut log = vec![up(0, 0, 4000)];
    for link in [7, 8, 9] {
        log.push(linked(1, 0, link));
    }
    for (seq, link) in [(1, 7), (2, 8), (3, 9)] {
        log.push(control(1 + seq, 0, seq, link));
    }
    for seq in 1..=3 {
        log.push(started(4 + seq, 0, Lane::Control, seq));
        log.push(begun(4 + seq, 4000, Lane::Control, seq));
        log.push(finished(4 + seq, 0, Lane::Control, seq));
    }
    for (seq, link) in [(1, 7), (2, 8), (3, 9)] {
        log.push(arrived(8 + seq, 0, 4000, Lane::Control, seq, Some(link)));
    }
    log.push(end());
    log
}

#[test]
fn lane_depths_detect_a_lane_holding_more_than_one_frame_per_writer() {
    let depth_one = CheckContext {
        lane_capacity: Some((4, 1)),
        ..sender_context()
    };
    // Control 3 accepted while two of its peer's controls wait and no
    // write is under way: a share of one would have refused it.
    let log = three_for_one_peer();
    let third = the(&log, is!(Event::ControlEnqueued { seq: 3, .. }));
    assert_violates(&log, &depth_one, Contract::Dc1, &[&third]);
    // Without a depth, nothing of DC-1 is about that enqueue.
    assert_not_violates(&log, &sender_context(), Contract::Dc1, &[&third]);
    // The depth is per peer (S9): one control waiting for each of two
    // peers, and a write under way, is within a share of one each.
    let mut two_peers = two_writers();
    remove(&mut two_peers, is!(Event::WriteStarted { seq: 2, .. }));
    assert_clean(&[Contract::Dc1], &two_peers, &depth_one);
}

/// A node that settles a frame's fate inside `enqueue` (no connection:
/// unroutable at once) logs the fate just before the enqueue: no frame is
/// left queued by that, for the idle-drain check or the lane's depth.
#[test]
fn a_fate_settled_inside_enqueue_leaves_nothing_queued() {
    let mut log = outside_good();
    insert_after(
        &mut log,
        is!(Event::DataEnqueued { seq: 1, .. }),
        at(3, Event::DataUnroutable { peer: 0, seq: 2 }),
    );
    insert_after(&mut log, is!(Event::DataUnroutable { .. }), data(3, 0, 2));
    // The drain's account of the rest.
    for record in [
        started(4, 0, Lane::Control, 1),
        finished(4, 0, Lane::Control, 1),
        started(5, 0, Lane::Data, 1),
        finished(5, 0, Lane::Data, 1),
    ] {
        insert_in_time(&mut log, record);
    }
    for record in [
        data(900, 0, 3),
        started(900, 0, Lane::Data, 3),
        begun(900, 4000, Lane::Data, 3),
        finished(900, 0, Lane::Data, 3),
        arrived(901, 0, 4000, Lane::Data, 3, None),
    ] {
        insert_before(&mut log, is!(Event::RunEnd { .. }), record);
    }
    let bounded = CheckContext {
        lane_capacity: Some((1, 1)),
        ..without_end_records(sender_context())
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
    remove(&mut log, is!(Event::HandleStart { item: 11, .. }));
    let running = the(&log, is!(Event::HandleStart { item: 10, .. }));
    let second = insert_after(
        &mut log,
        is!(Event::HandleStart { item: 10, .. }),
        start(0, 1, 11, 4),
    );
    replace(
        &mut log,
        is!(Event::HandleEnd { item: 11, .. }),
        handled(2, 1, 11, 4, false),
    );
    // The two starts: an item on an older task after a newer one cites two
    // starts as well (item 12 on task 3 after item 11's on task 4 does),
    // but not these two.
    assert_violates_exactly(
        &log,
        &lanes_context(false),
        Contract::L3,
        &[&running, &second],
    );
}

#[test]
fn l3_detects_from_tasks_an_item_on_an_older_task_after_a_newer_one() {
    let mut log = tasks_good();
    let newer = the(&log, is!(Event::HandleStart { item: 12, .. }));
    insert_after(
        &mut log,
        is!(Event::HandleEnd { item: 12, .. }),
        routed(52, 1, 13, Some(0)),
    );
    let older = insert_after(
        &mut log,
        is!(Event::Routed { item: 13, .. }),
        start(52, 1, 13, 1),
    );
    insert_after(
        &mut log,
        is!(Event::HandleStart { item: 13, .. }),
        handled(53, 1, 13, 1, false),
    );
    // The two starts (item 12 had ended: nothing ran at once).
    assert_violates_exactly(&log, &lanes_context(false), Contract::L3, &[&newer, &older]);
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
    remove_all(
        &mut log,
        is!(Event::HandleStart { item: 12, .. } | Event::HandleEnd { item: 12, .. }),
    );
    let admitted = the(&log, is!(Event::Routed { item: 12, .. }));
    assert_violates_exactly(&log, &lanes_context(true), Contract::L2, &[&admitted]);
}

/// A raw router that keeps counters counts no panic it did not catch.
#[test]
fn a_raw_routers_counters_count_no_uncaught_panic() {
    let mut log = panicking();
    let counters = insert_before(
        &mut log,
        is!(Event::RouterDropped),
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
    // Handler panics are L2's counter: nothing of L2 cites the counters.
    assert_not_violates(&log, &reported, Contract::L2, &[&counters]);
}
