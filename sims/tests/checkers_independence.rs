//! S9 (independence across peers) against hand-made logs of two peers: a
//! faulty peer 0 and a healthy peer 1. Each breach is planted by event
//! (`*_detects_*`): a healthy peer's generation taken down, a healthy
//! peer's frame refused for the other's backlog, a frame a healthy peer
//! read late or never; and each excuse the contract makes is pinned
//! beside it (`*_excuses_*`): the faulty peer's own down, a healthy peer
//! flooded by its own controls, a wait within one write per other peer,
//! a peer judged no more after its own first fault. Every violation is
//! named by the records it cites (`support`).

mod support;

use std::time::Duration;

use lanesim_sims::check::{CheckContext, Reported};
use lanesim_sims::event::{
    ControlOutcome, DataOutcome, Event, FaultApplied, Lane, Record, Written,
};
use lanesim_sims::scenario::Contract;
use lanesim_target::node::DownReason;
use support::{
    assert_holds, assert_not_violates, assert_violates, assert_violates_exactly, insert_in_time,
    is, the,
};

const FAULTY: u64 = 0;
const HEALTHY: u64 = 1;

fn socket(peer: u64) -> u16 {
    4000 + u16::try_from(peer).unwrap()
}

fn at(ms: u64, event: Event) -> Record {
    support::record("local", ms, event)
}

/// A deadline of 5 s, one frame's write on a healthy link 50 ms, 100 ms
/// from a write to its read, lanes of 4 data frames and 2 controls per
/// peer, no preemption: S9's bound for a healthy peer beside one faulty
/// one is `5 s + 50 ms + 2 x 8 ms + 100 ms = 5.166 s`.
fn context() -> CheckContext {
    CheckContext {
        finished: true,
        write_timeout: Some(Duration::from_secs(5)),
        tick: Duration::from_millis(1),
        delivery_bound: Duration::from_millis(100),
        write_bound: Duration::from_millis(50),
        lane_capacity: Some((4, 2)),
        ..CheckContext::default()
    }
}

/// A target that reports no drain account, counters or table.
fn outside() -> CheckContext {
    CheckContext {
        reported: Reported {
            drain: false,
            stats: false,
            table: false,
            ..Reported::default()
        },
        ..context()
    }
}

fn up(ms: u64, peer: u64) -> Record {
    at(
        ms,
        Event::ConnectionUp {
            peer,
            generation: 1,
            socket: socket(peer),
        },
    )
}

fn down(ms: u64, peer: u64, reason: DownReason) -> Record {
    at(
        ms,
        Event::ConnectionDown {
            peer,
            generation: 1,
            reason,
            table: None,
        },
    )
}

fn data(ms: u64, peer: u64, seq: u64, outcome: DataOutcome) -> Record {
    at(ms, Event::DataEnqueued { peer, seq, outcome })
}

fn control(ms: u64, peer: u64, seq: u64, outcome: ControlOutcome) -> Record {
    at(
        ms,
        Event::ControlEnqueued {
            peer,
            generation: 1,
            seq,
            link: None,
            outcome,
            down_at_return: outcome == ControlOutcome::Overflow,
        },
    )
}

/// The drain's account of one whole write of `lane` frame `seq` to
/// `peer`, and its first byte on the socket, all at `ms`.
fn written(ms: u64, peer: u64, lane: Lane, seq: u64) -> Vec<Record> {
    vec![
        at(
            ms,
            Event::WriteStarted {
                peer,
                generation: 1,
                lane,
                seq,
            },
        ),
        at(
            ms,
            Event::FrameWriteBegun {
                socket: socket(peer),
                lane,
                seq,
                bytes: 100,
            },
        ),
        at(
            ms,
            Event::WriteFinished {
                peer,
                generation: 1,
                lane,
                seq,
                outcome: Written::Written,
            },
        ),
    ]
}

fn read(ms: u64, peer: u64, lane: Lane, seq: u64) -> Record {
    support::record(
        &format!("peer{peer}"),
        ms,
        Event::FrameArrived {
            peer,
            socket: socket(peer),
            lane,
            generation: if lane == Lane::Control { 1 } else { 0 },
            seq,
            link: None,
        },
    )
}

fn wedge(ms: u64) -> Record {
    at(
        ms,
        Event::Fault {
            peer: FAULTY,
            fault: FaultApplied::Wedge,
        },
    )
}

/// Both peers up; peer 1 is sent data frame 1 (read at 12 ms); peer 0 is
/// wedged at 20 ms and then sent data frame 1, whose write parks; the run
/// ends at 20 s. Breaks no contract S9 decides.
fn beside_a_wedge() -> Vec<Record> {
    let mut log = vec![up(0, FAULTY), up(1, HEALTHY)];
    log.push(data(10, HEALTHY, 1, DataOutcome::Queued));
    log.extend(written(11, HEALTHY, Lane::Data, 1));
    log.push(read(12, HEALTHY, Lane::Data, 1));
    log.push(wedge(20));
    log.push(data(30, FAULTY, 1, DataOutcome::Queued));
    log.push(at(
        31,
        Event::WriteStarted {
            peer: FAULTY,
            generation: 1,
            lane: Lane::Data,
            seq: 1,
        },
    ));
    log.push(at(
        31,
        Event::FrameWriteBegun {
            socket: socket(FAULTY),
            lane: Lane::Data,
            seq: 1,
            bytes: 100,
        },
    ));
    log.push(at(20_000, Event::RunEnd { finished: true }));
    log
}

fn the_wedge(log: &[Record]) -> Record {
    the(log, is!(Event::Fault { .. }))
}

/// Peer 0's two controls (seq 1, 2), queued behind its parked write: the
/// control lane holds its depth of peer 0's, none of peer 1's.
fn faulty_fills_the_control_lane(log: &mut Vec<Record>) -> Record {
    insert_in_time(log, control(40, FAULTY, 1, ControlOutcome::Queued));
    insert_in_time(log, control(41, FAULTY, 2, ControlOutcome::Queued))
}

#[test]
fn s9_holds_beside_a_wedge() {
    assert_holds(&beside_a_wedge(), &context(), Contract::S9);
    assert_holds(&beside_a_wedge(), &outside(), Contract::S9);
}

/// A shared control lane full of the wedged peer's controls refuses the
/// healthy peer's and takes its generation down: the violation cites the
/// down, the refusal, the fault that preceded them and the peer whose
/// controls filled the lane.
#[test]
fn s9_detects_a_healthy_peer_taken_down_by_another_peers_backlog() {
    for context in [context(), outside()] {
        let mut log = beside_a_wedge();
        let filler = faulty_fills_the_control_lane(&mut log);
        let overflowed = insert_in_time(&mut log, down(50, HEALTHY, DownReason::ControlOverflow));
        let refused = insert_in_time(&mut log, control(50, HEALTHY, 3, ControlOutcome::Overflow));
        assert_violates_exactly(
            &log,
            &context,
            Contract::S9,
            &[&the_wedge(&log), &filler, &overflowed, &refused],
        );
    }
}

/// The same down of the wedged peer itself is its own.
#[test]
fn s9_excuses_the_faulty_peer_going_down() {
    let mut log = beside_a_wedge();
    faulty_fills_the_control_lane(&mut log);
    let timed_out = insert_in_time(&mut log, down(5_031, FAULTY, DownReason::WriteTimeout));
    let refused_down = insert_in_time(&mut log, down(50, FAULTY, DownReason::ControlOverflow));
    assert_not_violates(&log, &context(), Contract::S9, &[&timed_out]);
    assert_not_violates(&log, &context(), Contract::S9, &[&refused_down]);
    assert_holds(&log, &context(), Contract::S9);
}

/// A healthy peer whose own controls fill its share of the lane is
/// flooded: its overflow down is its own.
#[test]
fn s9_excuses_a_healthy_peer_flooded_by_its_own_controls() {
    let mut log = beside_a_wedge();
    insert_in_time(&mut log, control(40, HEALTHY, 1, ControlOutcome::Queued));
    insert_in_time(&mut log, control(41, HEALTHY, 2, ControlOutcome::Queued));
    insert_in_time(&mut log, down(50, HEALTHY, DownReason::ControlOverflow));
    insert_in_time(&mut log, control(50, HEALTHY, 3, ControlOutcome::Overflow));
    assert_holds(&log, &context(), Contract::S9);
}

/// A healthy peer's generation may not go down for a peer-side reason
/// either (a target that marked the wrong connection down).
#[test]
fn s9_detects_a_healthy_peer_taken_down_for_another_peers_read_error() {
    let mut log = beside_a_wedge();
    let read_error = insert_in_time(&mut log, down(60, HEALTHY, DownReason::ReadError));
    assert_violates_exactly(
        &log,
        &context(),
        Contract::S9,
        &[&the_wedge(&log), &read_error],
    );
    // With no other peer in trouble it is S7's question, not S9's.
    let mut alone = beside_a_wedge();
    alone.retain(|r| !matches!(r.event, Event::Fault { .. }));
    insert_in_time(&mut alone, down(60, HEALTHY, DownReason::ReadError));
    assert_holds(&alone, &context(), Contract::S9);
}

/// A data frame for the healthy peer dropped while the lane held only the
/// faulty peer's.
#[test]
fn s9_detects_a_healthy_peers_data_refused_for_another_peers_backlog() {
    let mut log = beside_a_wedge();
    let mut filler = None;
    for seq in 2..=5 {
        filler = Some(insert_in_time(
            &mut log,
            data(40 + seq, FAULTY, seq, DataOutcome::Queued),
        ));
    }
    let refused = insert_in_time(&mut log, data(50, HEALTHY, 2, DataOutcome::DroppedFull));
    assert_violates_exactly(
        &log,
        &context(),
        Contract::S9,
        &[&the_wedge(&log), &filler.unwrap(), &refused],
    );
}

/// Data frame 2 for the healthy peer, enqueued at 100 ms, written and read
/// `wait_ms` after it.
fn healthy_frame_read_after(wait_ms: u64) -> (Vec<Record>, Record, Record) {
    let mut log = beside_a_wedge();
    let enqueued = insert_in_time(&mut log, data(100, HEALTHY, 2, DataOutcome::Queued));
    for record in written(100 + wait_ms - 1, HEALTHY, Lane::Data, 2) {
        insert_in_time(&mut log, record);
    }
    let arrived = insert_in_time(&mut log, read(100 + wait_ms, HEALTHY, Lane::Data, 2));
    (log, enqueued, arrived)
}

/// Beside one faulty peer, a healthy peer may wait one write deadline (and
/// a healthy write, the picks and the way across), not more: the late
/// read is cited with the frame's enqueue, the read before it and the
/// fault.
#[test]
fn s9_detects_a_frame_a_healthy_peer_read_late() {
    let (log, enqueued, arrived) = healthy_frame_read_after(6_000);
    let before = the(
        &log,
        is!(Event::FrameArrived {
            peer: HEALTHY,
            seq: 1,
            ..
        }),
    );
    assert_violates_exactly(
        &log,
        &context(),
        Contract::S9,
        &[&before, &the_wedge(&log), &enqueued, &arrived],
    );
    assert_violates(&log, &outside(), Contract::S9, &[&enqueued, &arrived]);
}

#[test]
fn s9_excuses_a_wait_within_one_write_per_other_peer() {
    let (log, _, _) = healthy_frame_read_after(5_100);
    assert_holds(&log, &context(), Contract::S9);
    // Held tasks count in the bound: a 2 s hold inside the wait excuses a
    // 6 s one.
    let (mut held, _, _) = healthy_frame_read_after(6_000);
    insert_in_time(
        &mut held,
        support::record("sched", 200, Event::TaskHeld { held_us: 2_000_000 }),
    );
    assert_holds(&held, &context(), Contract::S9);
}

/// A frame the healthy peer never reads, while it stays up and healthy to
/// the end of the run, is late once its bound has passed.
#[test]
fn s9_detects_a_frame_a_healthy_peer_never_read() {
    let mut log = beside_a_wedge();
    let enqueued = insert_in_time(&mut log, data(100, HEALTHY, 2, DataOutcome::Queued));
    let end = the(&log, is!(Event::RunEnd { .. }));
    assert_violates(&log, &context(), Contract::S9, &[&enqueued, &end]);
}

/// Obligations toward a peer end at its own first fault: the same wait,
/// cut by a fault on the waiting peer before its bound passed, is not
/// judged.
#[test]
fn s9_judges_a_peer_no_more_after_its_own_first_fault() {
    let (mut log, _, _) = healthy_frame_read_after(6_000);
    insert_in_time(
        &mut log,
        at(
            1_000,
            Event::Fault {
                peer: HEALTHY,
                fault: FaultApplied::Slow { every_us: 1_000 },
            },
        ),
    );
    assert_holds(&log, &context(), Contract::S9);
}

/// With no fault at all, a healthy peer held behind another peer's
/// backlog for longer than one write per peer: the late read is cited with
/// the other peer's latest frame accepted meanwhile.
#[test]
fn s9_detects_a_healthy_peer_held_behind_another_peers_backlog() {
    let (log, enqueued, arrived, latest) = held_behind_a_backlog();
    assert_violates(
        &log,
        &context(),
        Contract::S9,
        &[&enqueued, &arrived, &latest],
    );
}

/// The healthy peer's frame read 1 s after its enqueue, with no fault,
/// behind 8 more of peer 0's frames accepted meanwhile (the latest one
/// returned last).
fn held_behind_a_backlog() -> (Vec<Record>, Record, Record, Record) {
    let (mut log, enqueued, arrived) = healthy_frame_read_after(1_000);
    log.retain(|r| !matches!(r.event, Event::Fault { .. }));
    let mut latest = None;
    for seq in 2..=9 {
        latest = Some(insert_in_time(
            &mut log,
            data(40 + seq, FAULTY, seq, DataOutcome::Queued),
        ));
    }
    (log, enqueued, arrived, latest.unwrap())
}

/// The bound's `F` counts the other peers faulty by the time a wait is
/// judged, not those that become faulty later: the same late read, with
/// peer 0 wedged only after it, is allowed no write deadline for that
/// wedge.
#[test]
fn s9_counts_only_the_faults_before_a_wait_is_judged() {
    let (mut log, enqueued, arrived, latest) = held_behind_a_backlog();
    insert_in_time(&mut log, wedge(1_500));
    assert_violates(
        &log,
        &context(),
        Contract::S9,
        &[&enqueued, &arrived, &latest],
    );
}
