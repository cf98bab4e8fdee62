//! Each sender checker against a hand-made log that breaks exactly its
//! contract (`*_detects_*`), and a well-behaved log that breaks none. Every
//! check a checker makes has a log here that trips it, and each test names
//! the violation it expects by its contract and the records it cites
//! (`support`): the breach the test planted.

mod support;

use std::time::Duration;

use lanesim_sims::check::{CheckContext, Reported};
use lanesim_sims::event::{
    ControlOutcome, Counts, DataOutcome, DialFailure, Event, FaultApplied, Lane, PeerAct, Record,
    SocketEnd, Written,
};
use lanesim_sims::scenario::Contract;
use lanesim_target::node::DownReason;
use support::{
    assert_clean, assert_holds, assert_not_violates, assert_violates, assert_violates_exactly,
    citing, edit, edit_all, find, insert_after, insert_before, insert_in_time, is, remove,
    remove_all, replace, the,
};

const ALL: [Contract; 11] = [
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
    Contract::L1,
];

const SOCKET: u16 = 4000;

fn at(ms: u64, event: Event) -> Record {
    support::record("local", ms, event)
}

fn context() -> CheckContext {
    CheckContext {
        finished: true,
        write_timeout: Some(Duration::from_secs(5)),
        tick: Duration::from_millis(1),
        delivery_bound: Duration::from_millis(100),
        ..CheckContext::default()
    }
}

fn up(ms: u64, generation: u64, socket: u16) -> Record {
    at(
        ms,
        Event::ConnectionUp {
            peer: 0,
            generation,
            socket,
        },
    )
}

fn down(ms: u64, generation: u64, reason: DownReason, table: Option<u64>) -> Record {
    at(
        ms,
        Event::ConnectionDown {
            peer: 0,
            generation,
            reason,
            table,
        },
    )
}

fn control(ms: u64, generation: u64, seq: u64, link: u64, outcome: ControlOutcome) -> Record {
    at(
        ms,
        Event::ControlEnqueued {
            peer: 0,
            generation,
            seq,
            link: Some(link),
            outcome,
            down_at_return: outcome == ControlOutcome::Overflow,
        },
    )
}

fn started(ms: u64, generation: u64, lane: Lane, seq: u64) -> Record {
    at(
        ms,
        Event::WriteStarted {
            peer: 0,
            generation,
            lane,
            seq,
        },
    )
}

fn finished(ms: u64, generation: u64, lane: Lane, seq: u64, outcome: Written) -> Record {
    at(
        ms,
        Event::WriteFinished {
            peer: 0,
            generation,
            lane,
            seq,
            outcome,
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

fn arrived(ms: u64, socket: u16, lane: Lane, generation: u64, seq: u64) -> Record {
    at(
        ms,
        Event::FrameArrived {
            peer: 0,
            socket,
            lane,
            generation,
            seq,
            link: (lane == Lane::Control).then_some(7),
        },
    )
}

fn data(ms: u64, seq: u64) -> Record {
    at(
        ms,
        Event::DataEnqueued {
            peer: 0,
            seq,
            outcome: DataOutcome::Queued,
        },
    )
}

fn fault(ms: u64, fault: FaultApplied) -> Record {
    at(ms, Event::Fault { peer: 0, fault })
}

fn acted(ms: u64, act: PeerAct) -> Record {
    at(
        ms,
        Event::PeerActed {
            peer: 0,
            socket: SOCKET,
            act,
        },
    )
}

fn noconnection(ms: u64, generation: u64, link: u64) -> Record {
    at(
        ms,
        Event::NoConnection {
            peer: 0,
            generation,
            link,
        },
    )
}

fn stats(data_written: u64, control_written: u64, control_skipped: u64) -> Record {
    at(
        900,
        Event::SenderStats(Counts {
            data_queued: 2,
            data_written,
            control_queued: 1,
            control_written,
            control_skipped,
            ..Counts::default()
        }),
    )
}

/// One link, its EXIT written and read on its generation, two data frames.
fn good() -> Vec<Record> {
    vec![
        up(0, 1, SOCKET),
        at(
            1,
            Event::Linked {
                peer: 0,
                generation: 1,
                link: 7,
            },
        ),
        data(2, 1),
        control(3, 1, 1, 7, ControlOutcome::Queued),
        data(4, 2),
        started(5, 1, Lane::Control, 1),
        begun(5, SOCKET, Lane::Control, 1),
        finished(5, 1, Lane::Control, 1, Written::Written),
        started(6, 1, Lane::Data, 1),
        begun(6, SOCKET, Lane::Data, 1),
        finished(6, 1, Lane::Data, 1, Written::Written),
        started(7, 1, Lane::Data, 2),
        begun(7, SOCKET, Lane::Data, 2),
        finished(7, 1, Lane::Data, 2, Written::Written),
        arrived(8, SOCKET, Lane::Control, 1, 1),
        arrived(9, SOCKET, Lane::Data, 0, 1),
        arrived(9, SOCKET, Lane::Data, 0, 2),
        at(
            890,
            Event::TableAtEnd {
                peer: 0,
                generation: Some(1),
            },
        ),
        stats(2, 1, 0),
        at(1000, Event::RunEnd { finished: true }),
    ]
}

/// The log ends with peer 0's table slot empty (its generation went down).
fn empty_table_at_end(log: &mut [Record]) {
    replace(
        log,
        is!(Event::TableAtEnd { .. }),
        at(
            890,
            Event::TableAtEnd {
                peer: 0,
                generation: None,
            },
        ),
    );
}

/// [`good`] but data frame 2, written whole, never arrives.
fn data_2_lost() -> Vec<Record> {
    let mut log = good();
    remove_all(
        &mut log,
        is!(Event::FrameArrived {
            lane: Lane::Data,
            seq: 2,
            ..
        }),
    );
    log
}

/// The good log with the generation down (by `reason`) after its work, its
/// peer having been cut off first, so nothing else trips.
fn good_then_down(reason: DownReason) -> Vec<Record> {
    let mut log = good();
    let table = is!(Event::TableAtEnd { .. });
    insert_before(&mut log, table, acted(850, PeerAct::Killed));
    insert_before(&mut log, table, down(860, 1, reason, None));
    empty_table_at_end(&mut log);
    log
}

/// The one `ConnectionDown` of a log.
fn the_down(log: &[Record]) -> Record {
    the(log, is!(Event::ConnectionDown { .. }))
}

/// The enqueue of control 1 (link 7), the good log's only control.
fn control_1(log: &[Record]) -> Record {
    the(log, is!(Event::ControlEnqueued { seq: 1, .. }))
}

/// Whether `event` is the drain's end of data frame 2's write.
fn is_data_2_end(event: &Event) -> bool {
    matches!(
        event,
        Event::WriteFinished {
            lane: Lane::Data,
            seq: 2,
            ..
        }
    )
}

/// The drain's end of data frame 2's write.
fn data_2_written(log: &[Record]) -> Record {
    the(log, is_data_2_end)
}

/// Data frame 2's write ends `outcome` instead (at 7 ms); returns that end.
fn data_2_ends(log: &mut [Record], outcome: Written) -> Record {
    replace(log, is_data_2_end, finished(7, 1, Lane::Data, 2, outcome))
}

#[test]
fn a_well_behaved_log_breaks_nothing() {
    assert_clean(&ALL, &good(), &context());
    assert_clean(&ALL, &good_then_down(DownReason::PeerClosed), &context());
}

/// The good log with a control 2 refused as `Closed` though no shutdown
/// was asked for (DC-1), and that control's enqueue.
fn closed_without_shutdown() -> (Vec<Record>, Record) {
    let mut log = good();
    let refused = insert_after(
        &mut log,
        is!(Event::ControlEnqueued { seq: 1, .. }),
        control(3, 1, 2, 8, ControlOutcome::Closed),
    );
    (log, refused)
}

/// The one test of how a violation reads (`Display`): its contract's id
/// and name, its message, and each record it cites on a line of its own.
#[test]
fn a_violation_renders_its_contract_message_and_evidence() {
    let (log, closed) = closed_without_shutdown();
    let found = citing(&log, &context(), Contract::Dc1, &[&closed]);
    let [violation] = &found[..] else {
        panic!("expected one DC-1 violation citing {closed}, found {found:#?}");
    };
    let mut expected = format!(
        "{} ({}) violated: {}\n",
        Contract::Dc1.id(),
        Contract::Dc1.name(),
        violation.message
    );
    for record in &violation.evidence {
        expected.push_str(&format!("    {record}\n"));
    }
    assert_eq!(violation.to_string(), expected);
    assert!(!violation.message.is_empty() && !violation.message.contains('\n'));
    assert!(
        expected.contains(&format!("    {closed}\n")),
        "the planted record is cited: {expected}"
    );
}

#[test]
fn dc1_detects_an_overflow_before_down_and_a_closed_without_shutdown() {
    let mut early = good();
    let overflow = insert_after(
        &mut early,
        is!(Event::ControlEnqueued { seq: 1, .. }),
        at(
            3,
            Event::ControlEnqueued {
                peer: 0,
                generation: 1,
                seq: 2,
                link: Some(8),
                outcome: ControlOutcome::Overflow,
                down_at_return: false,
            },
        ),
    );
    assert_violates(&early, &context(), Contract::Dc1, &[&overflow]);

    let (mut closed, refused) = closed_without_shutdown();
    assert_violates(&closed, &context(), Contract::Dc1, &[&refused]);
    insert_before(
        &mut closed,
        is!(Event::ControlEnqueued { seq: 1, .. }),
        at(2, Event::ShutdownRequested),
    );
    assert_not_violates(&closed, &context(), Contract::Dc1, &[&refused]);
}

#[test]
fn dc1_detects_a_control_the_drain_never_saw_even_when_its_generation_goes_down_later() {
    let mut vanished = good_then_down(DownReason::PeerClosed);
    remove_all(&mut vanished, is_control_frame);
    // The enqueue alone: "silently lost" would cite it alone too (it has
    // no fate), but the generation went down, which excuses that.
    assert_violates_exactly(
        &vanished,
        &context(),
        Contract::Dc1,
        &[&control_1(&vanished)],
    );
}

#[test]
fn dc1_detects_a_silently_lost_control_two_fates_and_a_skip_while_up() {
    let mut lost = good();
    let failed = replace(
        &mut lost,
        is!(Event::WriteFinished {
            lane: Lane::Control,
            ..
        }),
        finished(5, 1, Lane::Control, 1, Written::Failed),
    );
    remove_all(
        &mut lost,
        is!(Event::FrameArrived {
            lane: Lane::Control,
            ..
        }),
    );
    assert_violates_exactly(
        &lost,
        &context(),
        Contract::Dc1,
        &[&control_1(&lost), &failed],
    );

    let mut twice = good();
    let written = the(
        &twice,
        is!(Event::WriteFinished {
            lane: Lane::Control,
            ..
        }),
    );
    let skipped = insert_after(
        &mut twice,
        is!(Event::WriteFinished {
            lane: Lane::Control,
            ..
        }),
        at(
            5,
            Event::ControlSkipped {
                peer: 0,
                generation: 1,
                seq: 1,
            },
        ),
    );
    let enqueued = control_1(&twice);
    // Two fates: both, and the enqueue.
    assert_violates_exactly(
        &twice,
        &context(),
        Contract::Dc1,
        &[&enqueued, &written, &skipped],
    );
    // A skip while up: the enqueue and the skip, nothing else.
    assert_violates_exactly(&twice, &context(), Contract::Dc1, &[&enqueued, &skipped]);
}

/// Whether `event` is a record of the control frame's journey: the drain's
/// write, its begin on the socket, its arrival.
fn is_control_frame(event: &Event) -> bool {
    matches!(
        event,
        Event::WriteStarted {
            lane: Lane::Control,
            ..
        } | Event::WriteFinished {
            lane: Lane::Control,
            ..
        } | Event::FrameWriteBegun {
            lane: Lane::Control,
            ..
        } | Event::FrameArrived {
            lane: Lane::Control,
            ..
        }
    )
}

/// Control 1 written by the drain to `peer`'s generation `generation`,
/// and begun on and arrived over `socket` (the peer's arrival on `peer`).
fn control_sent_to(log: &mut [Record], to_peer: u64, to_generation: u64, to_socket: u16) {
    edit_all(log, is_control_frame, |record| match &mut record.event {
        Event::WriteStarted {
            peer, generation, ..
        }
        | Event::WriteFinished {
            peer, generation, ..
        } => (*peer, *generation) = (to_peer, to_generation),
        Event::FrameWriteBegun { socket, .. } => *socket = to_socket,
        Event::FrameArrived { peer, socket, .. } => (*peer, *socket) = (to_peer, to_socket),
        _ => {}
    });
}

/// DC-2 cites control 1's write (to a generation it was not pinned to),
/// and, apart, its arrival (on that generation's socket).
#[track_caller]
fn assert_control_went_astray(log: &[Record]) {
    let astray: [fn(&Event) -> bool; 2] = [
        is!(Event::WriteStarted {
            lane: Lane::Control,
            ..
        }),
        is!(Event::FrameArrived {
            lane: Lane::Control,
            ..
        }),
    ];
    for record in astray.map(|pred| the(log, pred)) {
        assert_violates(log, &context(), Contract::Dc2, &[&record]);
    }
}

#[test]
fn dc2_detects_a_control_on_a_redialed_generation() {
    let mut stale = good();
    let control_write = is!(Event::WriteStarted {
        lane: Lane::Control,
        ..
    });
    insert_before(&mut stale, control_write, acted(4, PeerAct::Killed));
    insert_before(
        &mut stale,
        control_write,
        down(4, 1, DownReason::PeerClosed, None),
    );
    insert_before(&mut stale, control_write, up(4, 2, 4001));
    control_sent_to(&mut stale, 0, 2, 4001);
    // Written to peer0/2, and arrived on its socket.
    assert_control_went_astray(&stale);
}

/// Generations count from 1 on every node: a control pinned to peer0's
/// generation 1 written to, and arriving on, peer1's generation 1 is on the
/// wrong node, and its link was not told.
#[test]
fn dc2_detects_a_control_sent_to_another_nodes_generation_of_the_same_number() {
    let mut elsewhere = good();
    insert_after(
        &mut elsewhere,
        is!(Event::ConnectionUp { peer: 0, .. }),
        at(
            0,
            Event::ConnectionUp {
                peer: 1,
                generation: 1,
                socket: 4001,
            },
        ),
    );
    control_sent_to(&mut elsewhere, 1, 1, 4001);
    assert_control_went_astray(&elsewhere);
    // Never written to its own generation, which never went down.
    let fate = the(
        &elsewhere,
        is!(Event::WriteFinished {
            lane: Lane::Control,
            ..
        }),
    );
    assert_violates_exactly(
        &elsewhere,
        &context(),
        Contract::Dc1,
        &[&control_1(&elsewhere), &fate],
    );
    let linked = the(&elsewhere, is!(Event::Linked { link: 7, .. }));
    assert_violates(&elsewhere, &context(), Contract::EndToEnd, &[&linked]);
}

#[test]
fn dc2_detects_a_frame_begun_on_a_socket_after_its_generation_went_down() {
    let mut late = good();
    let begun_2 = is!(Event::FrameWriteBegun {
        lane: Lane::Data,
        seq: 2,
        ..
    });
    insert_before(&mut late, begun_2, acted(7, PeerAct::Killed));
    let down = insert_before(&mut late, begun_2, down(7, 1, DownReason::WriteError, None));
    let begun = the(&late, begun_2);
    assert_violates(&late, &context(), Contract::Dc2, &[&down, &begun]);
}

/// For real, a write that passed its down check just before another
/// thread marked the generation down is logged just after the down: DC-2
/// excuses a begin within the race window of the down (real mode's grain),
/// and only that; in simulation the window is zero and the same log fails.
#[test]
fn real_dc2_excuses_only_a_write_racing_the_down() {
    let mut raced = good();
    let begun_2 = is!(Event::FrameWriteBegun {
        lane: Lane::Data,
        seq: 2,
        ..
    });
    let begun = the(&raced, begun_2);
    let mut down_then = down(0, 1, DownReason::WriteError, None);
    down_then.at = begun.at.saturating_sub(Duration::from_millis(2));
    let down = insert_before(&mut raced, begun_2, down_then);
    let real = CheckContext {
        race_window: Duration::from_millis(5),
        ..context()
    };
    assert_holds(&raced, &real, Contract::Dc2);
    assert_violates(&raced, &context(), Contract::Dc2, &[&down, &begun]);
    let narrow = CheckContext {
        race_window: Duration::from_millis(1),
        ..context()
    };
    assert_violates(&raced, &narrow, Contract::Dc2, &[&down, &begun]);
}

#[test]
fn dc5_detects_reordered_data_and_controls() {
    let mut data_swapped = good();
    let arrival = |seq| move |e: &Event| matches!(e, Event::FrameArrived { lane: Lane::Data, seq: s, .. } if *s == seq);
    let (first, second) = (
        find(&data_swapped, arrival(1)),
        find(&data_swapped, arrival(2)),
    );
    data_swapped.swap(first, second);
    let (one, two) = (
        the(&data_swapped, arrival(1)),
        the(&data_swapped, arrival(2)),
    );
    assert_violates(&data_swapped, &context(), Contract::Dc5, &[&two, &one]);

    let mut controls = good();
    let control_arrival = is!(Event::FrameArrived {
        lane: Lane::Control,
        seq: 1,
        ..
    });
    let first = the(&controls, control_arrival);
    let earlier = insert_after(
        &mut controls,
        control_arrival,
        arrived(8, SOCKET, Lane::Control, 1, 0),
    );
    assert_violates(&controls, &context(), Contract::Dc5, &[&first, &earlier]);

    let mut written = good();
    let start = |seq| move |e: &Event| matches!(e, Event::WriteStarted { lane: Lane::Data, seq: s, .. } if *s == seq);
    let (first, second) = (find(&written, start(1)), find(&written, start(2)));
    written.swap(first, second);
    let (one, two) = (the(&written, start(1)), the(&written, start(2)));
    assert_violates(&written, &context(), Contract::Dc5, &[&two, &one]);
}

#[test]
fn s2_detects_a_write_past_the_deadline_and_a_write_that_never_ends() {
    let mut long = good();
    let begun = the(
        &long,
        is!(Event::WriteStarted {
            lane: Lane::Data,
            seq: 1,
            ..
        }),
    );
    let ended = replace(
        &mut long,
        is!(Event::WriteFinished {
            lane: Lane::Data,
            seq: 1,
            ..
        }),
        finished(6 + 5_200, 1, Lane::Data, 1, Written::Written),
    );
    assert_violates(&long, &context(), Contract::S2, &[&begun, &ended]);

    let mut stuck = good();
    remove(&mut stuck, is_data_2_end);
    stuck.push(at(10_000, Event::RunEnd { finished: false }));
    let unfinished = CheckContext {
        finished: false,
        ..context()
    };
    let begun = the(
        &stuck,
        is!(Event::WriteStarted {
            lane: Lane::Data,
            seq: 2,
            ..
        }),
    );
    // The begin alone: a write that ended past its deadline cites its end too.
    assert_violates_exactly(&stuck, &unfinished, Contract::S2, &[&begun]);
}

#[test]
fn s2_detects_a_timed_out_write_whose_generation_stays_up() {
    // A down long after the timed-out write returned is not the deadline's.
    // The write's begin and end: a down of another reason cites the down too.
    let mut later = good_then_down(DownReason::PeerClosed);
    let timed_out = data_2_ends(&mut later, Written::TimedOut);
    let begun = the(
        &later,
        is!(Event::WriteStarted {
            lane: Lane::Data,
            seq: 2,
            ..
        }),
    );
    assert_violates_exactly(&later, &context(), Contract::S2, &[&begun, &timed_out]);

    let mut kept = good();
    let timed_out = data_2_ends(&mut kept, Written::TimedOut);
    let begun = the(
        &kept,
        is!(Event::WriteStarted {
            lane: Lane::Data,
            seq: 2,
            ..
        }),
    );
    assert_violates_exactly(&kept, &context(), Contract::S2, &[&begun, &timed_out]);
}

#[test]
fn s2_detects_a_timed_out_write_whose_generation_went_down_for_another_reason() {
    let mut wrong = good();
    let timed_out = data_2_ends(&mut wrong, Written::TimedOut);
    insert_before(&mut wrong, is_data_2_end, acted(7, PeerAct::Wedged));
    let other = insert_before(
        &mut wrong,
        is_data_2_end,
        down(7, 1, DownReason::WriteError, None),
    );
    assert_violates(&wrong, &context(), Contract::S2, &[&other, &timed_out]);
    replace(
        &mut wrong,
        is!(Event::ConnectionDown { .. }),
        down(7, 1, DownReason::WriteTimeout, None),
    );
    assert_not_violates(&wrong, &context(), Contract::S2, &[&timed_out]);
}

/// The good log with the generation down as the local node asked
/// (`Disconnected`, then `ManualDisconnect`), its peer never cut off.
fn disconnected() -> Vec<Record> {
    let mut log = good_then_down(DownReason::ManualDisconnect);
    replace(
        &mut log,
        is!(Event::PeerActed { .. }),
        at(
            850,
            Event::Disconnected {
                peer: 0,
                generation: Some(1),
            },
        ),
    );
    log
}

/// A local down closes the socket: a peer still reading sees the end.
#[test]
fn s3_detects_a_down_generation_whose_socket_was_never_closed() {
    let mut open = disconnected();
    edit(&mut open, is!(Event::RunEnd { .. }), |end| {
        end.at = Duration::from_secs(5);
    });
    let down = the_down(&open);
    // The down alone (the table left it, so that clause is silent).
    assert_violates_exactly(&open, &context(), Contract::S3, &[&down]);
    let mut closed = open.clone();
    insert_after(
        &mut closed,
        is!(Event::ConnectionDown { .. }),
        at(
            870,
            Event::PeerSocketClosed {
                peer: 0,
                socket: SOCKET,
                how: SocketEnd::Eof,
            },
        ),
    );
    assert_not_violates(&closed, &context(), Contract::S3, &[&down]);
}

#[test]
fn s3_detects_a_failed_write_that_left_its_generation_up() {
    let mut kept = good();
    let failed = data_2_ends(&mut kept, Written::Failed);
    assert_violates(&kept, &context(), Contract::S3, &[&failed]);
}

/// For real, a write refused because another thread had just marked its
/// generation down can end before that thread logs the down: S3 excuses a
/// down logged within the race window after the failed write, and only
/// then; in simulation (no window) the same log fails.
#[test]
fn real_s3_excuses_only_a_down_racing_the_failed_write() {
    let mut raced = good();
    let failed = data_2_ends(&mut raced, Written::Failed);
    insert_after(
        &mut raced,
        is_data_2_end,
        down(9, 1, DownReason::WriteError, None),
    );
    let s3 = |context: &CheckContext| citing(&raced, context, Contract::S3, &[&failed]).len();
    let real = CheckContext {
        race_window: Duration::from_millis(5),
        ..context()
    };
    assert_eq!(s3(&real), 0, "a down 2 ms later is excused for real");
    assert_eq!(s3(&context()), 1, "and not in simulation");
    let narrow = CheckContext {
        race_window: Duration::from_millis(1),
        ..context()
    };
    assert_eq!(s3(&narrow), 1, "nor 2 ms after a 1 ms window");
}

/// In the model world a shutdown is logged, then asked for outside the
/// log's order (`CheckContext::late_shutdown_downs`), so a write that
/// failed on the down it made, or a control skipped for it, may be logged
/// before that down. Excused there only, only for a shutdown's down
/// (`ManualDisconnect`), only with the shutdown asked before the report.
#[test]
fn s3_and_dc1_excuse_a_shutdowns_down_logged_after_its_effect_only_where_shutdowns_are_not_one_step(
) {
    let late = CheckContext {
        late_shutdown_downs: true,
        ..context()
    };
    let failed_before = |reason: DownReason, asked: bool| {
        let mut log = good();
        let failed = data_2_ends(&mut log, Written::Failed);
        if asked {
            insert_before(&mut log, is_data_2_end, at(7, Event::ShutdownRequested));
        }
        insert_after(&mut log, is_data_2_end, down(9, 1, reason, None));
        let s3 = |context: &CheckContext| citing(&log, context, Contract::S3, &[&failed]).len();
        (s3(&late), s3(&context()))
    };
    assert_eq!(
        failed_before(DownReason::ManualDisconnect, true),
        (0, 1),
        "a shutdown's down logged late is excused in the model world only"
    );
    assert_eq!(
        failed_before(DownReason::WriteError, true),
        (1, 1),
        "not a down for another reason"
    );
    assert_eq!(
        failed_before(DownReason::ManualDisconnect, false),
        (1, 1),
        "not without a shutdown asked before the failed write"
    );

    let skipped_before = |asked: bool| {
        let mut log = good();
        remove_all(
            &mut log,
            is!(Event::FrameWriteBegun {
                lane: Lane::Control,
                ..
            } | Event::FrameArrived {
                lane: Lane::Control,
                ..
            } | Event::WriteStarted {
                lane: Lane::Control,
                ..
            }),
        );
        let skipped = replace(
            &mut log,
            is!(Event::WriteFinished {
                lane: Lane::Control,
                ..
            }),
            at(
                5,
                Event::ControlSkipped {
                    peer: 0,
                    generation: 1,
                    seq: 1,
                },
            ),
        );
        if asked {
            insert_before(
                &mut log,
                is!(Event::ControlSkipped { .. }),
                at(4, Event::ShutdownRequested),
            );
        }
        insert_after(
            &mut log,
            is!(Event::ControlSkipped { .. }),
            down(5, 1, DownReason::ManualDisconnect, None),
        );
        let dc1 = |context: &CheckContext| citing(&log, context, Contract::Dc1, &[&skipped]).len();
        (dc1(&late), dc1(&context()))
    };
    assert_eq!(skipped_before(true), (0, 1), "a skip for a shutdown's down");
    assert_eq!(skipped_before(false), (1, 1), "a skip while up");
}

/// A peer reads a frame only after its first byte reached the socket: an
/// arrival logged before the frame began on that socket is a log that
/// lies about order (in real mode, where the two are logged by different
/// threads, excused within the race window).
#[test]
fn s4_detects_a_frame_that_arrived_before_it_began_to_reach_its_socket() {
    let mut early = good();
    let arrival = the(
        &early,
        is!(Event::FrameArrived {
            lane: Lane::Data,
            seq: 1,
            ..
        }),
    );
    remove_all(
        &mut early,
        is!(Event::FrameArrived {
            lane: Lane::Data,
            seq: 1,
            ..
        }),
    );
    let moved = insert_before(
        &mut early,
        is!(Event::FrameWriteBegun {
            lane: Lane::Data,
            seq: 1,
            ..
        }),
        Record {
            at: Duration::from_millis(6),
            ..arrival
        },
    );
    let begun = the(
        &early,
        is!(Event::FrameWriteBegun {
            lane: Lane::Data,
            seq: 1,
            ..
        }),
    );
    assert_violates_exactly(&early, &context(), Contract::S4, &[&moved, &begun]);
    let real = CheckContext {
        race_window: Duration::from_millis(5),
        ..context()
    };
    assert!(citing(&early, &real, Contract::S4, &[&moved, &begun]).is_empty());
}

/// A finished run of a node that reports its table and its counters logs
/// both at its end; a log without them cannot be checked against them, and
/// is no pass (a world that froze its log too early passed every such
/// check before).
#[test]
fn s3_and_s4_detect_a_finished_run_that_logged_no_table_or_counters() {
    let mut no_table = good();
    remove_all(&mut no_table, is!(Event::TableAtEnd { .. }));
    let first_up = the(&no_table, is!(Event::ConnectionUp { .. }));
    assert_violates_exactly(&no_table, &context(), Contract::S3, &[&first_up]);
    let mut no_counters = good();
    remove_all(&mut no_counters, is!(Event::SenderStats(_)));
    let last = no_counters.last().cloned().unwrap();
    assert_violates_exactly(&no_counters, &context(), Contract::S4, &[&last]);
    // Not decided where the node does not report them.
    let silent = CheckContext {
        reported: Reported {
            stats: false,
            table: false,
            ..context().reported
        },
        ..context()
    };
    assert!(citing(&no_counters, &silent, Contract::S4, &[&last]).is_empty());
    assert!(citing(&no_table, &silent, Contract::S3, &[&first_up]).is_empty());
}

#[test]
fn s2_detects_a_drain_that_sits_idle_with_frames_queued() {
    let mut idle = good();
    // The second data frame waits 50 ms after the first write, with the
    // drain doing nothing.
    edit_all(
        &mut idle,
        is!(Event::WriteStarted {
            lane: Lane::Data,
            seq: 2,
            ..
        } | Event::FrameWriteBegun {
            lane: Lane::Data,
            seq: 2,
            ..
        } | Event::WriteFinished {
            lane: Lane::Data,
            seq: 2,
            ..
        }),
        |record| record.at += Duration::from_millis(50),
    );
    let (idle_from, picked) = (
        the(
            &idle,
            is!(Event::WriteFinished {
                lane: Lane::Data,
                seq: 1,
                ..
            }),
        ),
        the(
            &idle,
            is!(Event::WriteStarted {
                lane: Lane::Data,
                seq: 2,
                ..
            }),
        ),
    );
    assert_violates(&idle, &context(), Contract::S2, &[&idle_from, &picked]);
    // Preemption points may hold the drain: two of them are allowed.
    let preempting = CheckContext {
        preempt_max: Duration::from_millis(25),
        ..context()
    };
    assert_holds(&idle, &preempting, Contract::S2);
}

#[test]
fn s3_detects_a_second_hook_and_a_down_generation_left_in_the_table() {
    let mut twice = good_then_down(DownReason::PeerClosed);
    let first = the_down(&twice);
    let second = insert_after(
        &mut twice,
        is!(Event::ConnectionDown { .. }),
        down(861, 1, DownReason::WriteTimeout, None),
    );
    assert_violates(&twice, &context(), Contract::S3, &[&first, &second]);

    let mut kept = good_then_down(DownReason::PeerClosed);
    let held = replace(
        &mut kept,
        is!(Event::ConnectionDown { .. }),
        down(860, 1, DownReason::PeerClosed, Some(1)),
    );
    // The down alone (its socket was closed: the kill).
    assert_violates_exactly(&kept, &context(), Contract::S3, &[&held]);

    let mut at_end = good_then_down(DownReason::PeerClosed);
    let table = replace(
        &mut at_end,
        is!(Event::TableAtEnd { .. }),
        at(
            890,
            Event::TableAtEnd {
                peer: 0,
                generation: Some(1),
            },
        ),
    );
    assert_violates(
        &at_end,
        &context(),
        Contract::S3,
        &[&the_down(&at_end), &table],
    );
}

#[test]
fn s3_detects_a_closed_socket_whose_generation_stays_up_and_a_generation_going_backwards() {
    let mut never = good();
    let closed = at(
        960,
        Event::PeerSocketClosed {
            peer: 0,
            socket: SOCKET,
            how: SocketEnd::Eof,
        },
    );
    never.push(closed.clone());
    assert_violates(&never, &context(), Contract::S3, &[&closed]);

    let mut backwards = good_then_down(DownReason::PeerClosed);
    let first = the(&backwards, is!(Event::ConnectionUp { .. }));
    let again = insert_after(
        &mut backwards,
        is!(Event::ConnectionDown { .. }),
        up(870, 1, 4001),
    );
    assert_violates(&backwards, &context(), Contract::S3, &[&first, &again]);
    let mut from_zero = good();
    let zero = replace(
        &mut from_zero,
        is!(Event::ConnectionUp { .. }),
        up(0, 0, SOCKET),
    );
    assert_violates_exactly(&from_zero, &context(), Contract::S3, &[&zero]);
}

#[test]
fn s4_detects_a_frame_with_no_fate_two_fates_or_invented_and_wrong_counters() {
    let mut no_fate = good();
    remove(&mut no_fate, is_data_2_end);
    let queued = the(&no_fate, is!(Event::DataEnqueued { seq: 2, .. }));
    assert_violates(&no_fate, &context(), Contract::S4, &[&queued]);
    let counters = the(&no_fate, is!(Event::SenderStats(_)));
    assert_violates(&no_fate, &context(), Contract::S4, &[&counters]);

    let mut two = good();
    let written = data_2_written(&two);
    let unroutable = insert_after(
        &mut two,
        is_data_2_end,
        at(7, Event::DataUnroutable { peer: 0, seq: 2 }),
    );
    // Both fates ("never queued" would cite them too, but frame 2 was).
    assert_violates_exactly(&two, &context(), Contract::S4, &[&written, &unroutable]);

    let mut invented = good();
    let arrival = insert_after(
        &mut invented,
        is!(Event::FrameArrived {
            lane: Lane::Data,
            seq: 2,
            ..
        }),
        arrived(9, SOCKET, Lane::Data, 0, 9),
    );
    assert_violates(&invented, &context(), Contract::S4, &[&arrival]);
}

/// A peer that read something the local node was never given (a frame
/// boundary lost to a cut write, changed bytes): a violation whatever
/// else the log says, not just a socket end.
#[test]
fn s4_detects_a_peer_reading_bytes_that_are_not_a_frame() {
    // The good log, with peer0's socket ending `how` just before its end.
    let ended = |how| {
        let mut log = good();
        let closed = Event::PeerSocketClosed {
            peer: 0,
            socket: SOCKET,
            how,
        };
        let closed = insert_before(&mut log, is!(Event::RunEnd { .. }), at(900, closed));
        (log, closed)
    };
    let (garbage, closed) = ended(SocketEnd::Garbage);
    assert_violates(&garbage, &context(), Contract::S4, &[&closed]);
    let (failed, closed) = ended(SocketEnd::Error);
    // A stream that merely failed is not garbage.
    assert_not_violates(&failed, &context(), Contract::S4, &[&closed]);
}

#[test]
fn s4_and_dc1_detect_a_lane_refusing_before_it_is_full_or_holding_more() {
    let bounded = |data, control| CheckContext {
        lane_capacity: Some((data, control)),
        ..context()
    };
    // The good log holds at most 2 data frames and 1 control at once.
    assert_clean(&ALL, &good(), &bounded(2, 1));
    // A third frame while two wait (one of them perhaps in the drain's
    // hands): a lane of two would have refused it. It is discarded at the
    // end, so that its enqueue is cited for the lane's depth alone (a
    // frame with no fate would cite it too).
    let mut over = good();
    let third = insert_after(
        &mut over,
        is!(Event::DataEnqueued { seq: 2, .. }),
        data(4, 3),
    );
    insert_before(
        &mut over,
        is!(Event::RunEnd { .. }),
        at(950, Event::DataDiscarded { peer: 0, seq: 3 }),
    );
    assert_violates(&over, &bounded(1, 1), Contract::S4, &[&third]);
    // Without a depth, nothing of S4 is about that enqueue.
    assert_not_violates(&over, &context(), Contract::S4, &[&third]);
    let mut early = good();
    let refused = insert_after(
        &mut early,
        is!(Event::DataEnqueued { seq: 1, .. }),
        at(
            2,
            Event::DataEnqueued {
                peer: 0,
                seq: 9,
                outcome: DataOutcome::DroppedFull,
            },
        ),
    );
    assert_violates(&early, &bounded(2, 1), Contract::S4, &[&refused]);
    assert_not_violates(&early, &context(), Contract::S4, &[&refused]);
    let mut overflow = good_then_down(DownReason::ControlOverflow);
    let refused = insert_after(
        &mut overflow,
        is!(Event::ControlEnqueued { seq: 1, .. }),
        control(3, 1, 2, 8, ControlOutcome::Overflow),
    );
    assert_violates(&overflow, &bounded(2, 4), Contract::Dc1, &[&refused]);
    // The overflow took its generation down as it returned: without a
    // depth, DC-1 has nothing to say of it.
    assert_not_violates(&overflow, &context(), Contract::Dc1, &[&refused]);
}

#[test]
fn s6_detects_a_written_frame_that_never_arrives_at_a_reading_peer() {
    let missing = data_2_lost();
    let written = data_2_written(&missing);
    assert_violates(&missing, &context(), Contract::S6, &[&written]);

    // Excused when the peer stopped reading that socket in time ...
    let mut wedged = missing.clone();
    insert_after(&mut wedged, is_data_2_end, acted(8, PeerAct::Wedged));
    assert_holds(&wedged, &context(), Contract::S6);

    // ... but not by a wedge long after the frame could have been read.
    let mut late = missing;
    insert_after(
        &mut late,
        is!(Event::TableAtEnd { .. }),
        acted(700, PeerAct::Wedged),
    );
    assert_violates(&late, &context(), Contract::S6, &[&written]);
}

/// A partition that came and went while nothing was in flight leaves the
/// stream whole: it excuses neither a later loss nor a later down.
#[test]
fn s6_and_s7_detect_a_loss_or_down_a_partition_that_healed_before_the_write_cannot_excuse() {
    let mut healed = data_2_lost();
    let first_write = is!(Event::WriteStarted {
        lane: Lane::Control,
        ..
    });
    // Nothing was written during [0, 0]: the partition is over by the
    // writes, 200 ms later.
    let from = find(&healed, first_write);
    for record in &mut healed[from..] {
        record.at += Duration::from_millis(200);
    }
    insert_before(&mut healed, first_write, fault(0, FaultApplied::Partition));
    insert_before(&mut healed, first_write, fault(0, FaultApplied::Repair));
    let written = data_2_written(&healed);
    assert_violates(&healed, &context(), Contract::S6, &[&written]);

    let mut late_down = good_then_down(DownReason::WriteTimeout);
    remove(&mut late_down, is!(Event::PeerActed { .. })); // not the kill: the partition is the only excuse
    let came_up = is!(Event::ConnectionUp { .. });
    insert_after(&mut late_down, came_up, fault(0, FaultApplied::Repair));
    insert_after(&mut late_down, came_up, fault(0, FaultApplied::Partition));
    let down = the_down(&late_down);
    assert_violates(&late_down, &context(), Contract::S7, &[&down]);

    // Bytes written during the partition are lost for good: excused.
    let mut lossy = data_2_lost();
    let begun_1 = is!(Event::FrameWriteBegun {
        lane: Lane::Data,
        seq: 1,
        ..
    });
    insert_before(&mut lossy, begun_1, fault(6, FaultApplied::Partition));
    insert_after(&mut lossy, begun_1, fault(6, FaultApplied::Repair));
    assert_holds(&lossy, &context(), Contract::S6);
}

#[test]
fn s7_detects_a_down_with_no_cause() {
    // A slow peer (no fault that stops reading) timed out.
    let mut slow = good();
    insert_after(
        &mut slow,
        is!(Event::ConnectionUp { .. }),
        fault(0, FaultApplied::Slow { every_us: 1000 }),
    );
    let down = insert_before(
        &mut slow,
        is!(Event::SenderStats(_)),
        down(860, 1, DownReason::WriteTimeout, None),
    );
    empty_table_at_end(&mut slow);
    assert_violates(&slow, &context(), Contract::S7, &[&down]);

    for reason in [
        DownReason::ReadError,
        DownReason::PeerClosed,
        DownReason::ControlOverflow,
        DownReason::ManualDisconnect,
        DownReason::WriteCancelled,
    ] {
        let mut spurious = good_then_down(reason);
        remove(&mut spurious, is!(Event::PeerActed { .. })); // the kill that excused it
        let down = the_down(&spurious);
        assert_violates(&spurious, &context(), Contract::S7, &[&down]);
    }

    // A write dropped mid-frame is excused by a shutdown asked for before it
    // (the drain's abort drops its write), or as a write deadline would be
    // (a sender that bounds a write by dropping it, its peer cut off), and
    // by nothing else (above).
    let mut cancelled = good_then_down(DownReason::WriteCancelled);
    replace(
        &mut cancelled,
        is!(Event::PeerActed { .. }),
        at(850, Event::ShutdownRequested),
    );
    assert_holds(&cancelled, &context(), Contract::S7);
    let dropped_on_deadline = good_then_down(DownReason::WriteCancelled);
    assert_holds(&dropped_on_deadline, &context(), Contract::S7);

    let asked = disconnected();
    assert_holds(&asked, &context(), Contract::S7);
}

/// For real, the driver kills a peer and then logs it; the local read can
/// fail first. S7 counts a fault logged within the race window after the
/// down as its cause, and only within it; in simulation (no window) the
/// same log has a down with no cause.
#[test]
fn real_s7_excuses_only_a_fault_logged_just_after_its_down() {
    let mut raced = good_then_down(DownReason::ReadError);
    remove(&mut raced, is!(Event::PeerActed { .. })); // the kill logged at 850, before the down at 860
    insert_after(
        &mut raced,
        is!(Event::ConnectionDown { .. }),
        acted(862, PeerAct::Killed),
    );
    let down = the_down(&raced);
    let s7 = |context: &CheckContext| citing(&raced, context, Contract::S7, &[&down]).len();
    let window = |ms| CheckContext {
        race_window: Duration::from_millis(ms),
        ..context()
    };
    assert_eq!(
        s7(&window(5)),
        0,
        "a kill logged 2 ms later is the cause, for real"
    );
    assert_eq!(s7(&context()), 1, "not in simulation");
    assert_eq!(s7(&window(1)), 1, "nor 2 ms after a 1 ms window");
}

#[test]
fn s7_detects_a_live_generation_displaced_by_a_new_one() {
    let mut displaced = good();
    let first = the(&displaced, is!(Event::ConnectionUp { .. }));
    let second = insert_before(
        &mut displaced,
        is!(Event::TableAtEnd { .. }),
        up(800, 2, 4001),
    );
    replace(
        &mut displaced,
        is!(Event::TableAtEnd { .. }),
        at(
            890,
            Event::TableAtEnd {
                peer: 0,
                generation: Some(2),
            },
        ),
    );
    assert_violates(&displaced, &context(), Contract::S7, &[&first, &second]);
}

#[test]
fn s8_detects_a_node_never_redialed_once_its_peer_was_reachable() {
    let redialing = CheckContext {
        redial: Some((Duration::from_millis(10), Duration::from_millis(50))),
        ..context()
    };
    let mut log = good_then_down(DownReason::PeerClosed);
    edit(&mut log, is!(Event::RunEnd { .. }), |end| {
        end.at = Duration::from_secs(5);
    });
    assert_violates(&log, &redialing, Contract::S8, &[&the_down(&log)]);

    // A redial in time satisfies it.
    let mut redialed = log.clone();
    insert_after(
        &mut redialed,
        is!(Event::ConnectionDown { .. }),
        up(870, 2, 4001),
    );
    assert_holds(&redialed, &redialing, Contract::S8);

    // A peer that crashed and never came back need not be reconnected.
    let mut crashed = log;
    insert_before(
        &mut crashed,
        is!(Event::PeerActed { .. }),
        fault(850, FaultApplied::Crash),
    );
    assert_holds(&crashed, &redialing, Contract::S8);
}

#[test]
fn s8_excuses_a_peer_every_dial_to_which_times_out_under_a_short_timeout() {
    // The same node never redialed in time, but now every dial it made
    // after the down timed out: under a 50 ms connect timeout (shorter than
    // a dial's two round trips at turmoil's largest latency) that is the
    // world's timing, not the code's.
    let context_with = |connect_ms: u64| CheckContext {
        redial: Some((Duration::from_millis(10), Duration::from_millis(connect_ms))),
        connect_timeout: Duration::from_millis(connect_ms),
        ..context()
    };
    let mut log = good_then_down(DownReason::PeerClosed);
    edit(&mut log, is!(Event::RunEnd { .. }), |end| {
        end.at = Duration::from_secs(5);
    });
    let down = the_down(&log);
    let dial = |ms: u64, error: DialFailure| at(ms, Event::DialFailed { peer: 0, error });
    // Two dials after the down, the later inserted first.
    let after_down = is!(Event::ConnectionDown { .. });
    let mut timed_out = log.clone();
    insert_after(&mut timed_out, after_down, dial(980, DialFailure::Timeout));
    insert_after(&mut timed_out, after_down, dial(920, DialFailure::Timeout));
    assert_holds(&timed_out, &context_with(50), Contract::S8);
    // A connect timeout a healthy dial always fits: held to it.
    assert_violates(&timed_out, &context_with(500), Contract::S8, &[&down]);
    // A dial that failed otherwise: held to it.
    let mut refused = log;
    insert_after(&mut refused, after_down, dial(980, DialFailure::Io));
    insert_after(&mut refused, after_down, dial(920, DialFailure::Timeout));
    assert_violates(&refused, &context_with(50), Contract::S8, &[&down]);
}

#[test]
fn end_to_end_detects_a_lost_death_signal_and_accepts_noconnection_instead() {
    let control_arrival = is!(Event::FrameArrived {
        lane: Lane::Control,
        ..
    });
    let mut broken = good();
    remove(&mut broken, control_arrival);
    let linked = the(&broken, is!(Event::Linked { link: 7, .. }));
    assert_violates(&broken, &context(), Contract::EndToEnd, &[&linked]);
    let mut told = good_then_down(DownReason::PeerClosed);
    remove(&mut told, control_arrival);
    insert_after(
        &mut told,
        is!(Event::ConnectionDown { .. }),
        noconnection(860, 1, 7),
    );
    assert_holds(&told, &context(), Contract::EndToEnd);
}

#[test]
fn end_to_end_detects_an_invented_or_repeated_noconnection() {
    let mut invented = good();
    let told = insert_before(
        &mut invented,
        is!(Event::TableAtEnd { .. }),
        noconnection(800, 1, 7),
    );
    // The noconnection alone: one told twice cites both.
    assert_violates_exactly(&invented, &context(), Contract::EndToEnd, &[&told]);

    let mut twice = good_then_down(DownReason::PeerClosed);
    let after_down = is!(Event::ConnectionDown { .. });
    let second = insert_after(&mut twice, after_down, noconnection(861, 1, 7));
    let first = insert_after(&mut twice, after_down, noconnection(860, 1, 7));
    assert_violates(&twice, &context(), Contract::EndToEnd, &[&first, &second]);
}

/// A write deadline no longer than a healthy link needs to carry a frame
/// excuses its own timeout (the hunt's 12 KB controls against 100 ms); a
/// deadline above that bound does not.
#[test]
fn s7_detects_a_timeout_only_when_the_deadline_could_cover_a_healthy_transfer() {
    let mut timeout = good();
    let down = insert_before(
        &mut timeout,
        is!(Event::RunEnd { .. }),
        down(860, 1, DownReason::WriteTimeout, None),
    );
    empty_table_at_end(&mut timeout);
    let mut roomy = context();
    roomy.write_timeout = Some(Duration::from_secs(5));
    roomy.write_bound = Duration::from_millis(480);
    assert_violates(&timeout, &roomy, Contract::S7, &[&down]);
    let mut tight = roomy;
    tight.write_timeout = Some(Duration::from_millis(100));
    assert_holds(&timeout, &tight, Contract::S7);
}

/// A peer's close sent into a partition is lost for good (turmoil drops
/// it), so its generation staying up is excused then, and only then.
#[test]
fn s3_detects_a_close_that_no_partition_swallowed() {
    let close = at(
        960,
        Event::PeerSocketClosed {
            peer: 0,
            socket: SOCKET,
            how: SocketEnd::Eof,
        },
    );
    let mut swallowed = good();
    swallowed.push(close.clone());
    swallowed.push(fault(1000, FaultApplied::Partition));
    assert_not_violates(&swallowed, &context(), Contract::S3, &[&close]);
    let mut later = good();
    later.push(close.clone());
    later.push(fault(5_000, FaultApplied::Partition));
    assert_violates(&later, &context(), Contract::S3, &[&close]);
}

/// A socket exists from its first byte (the dialer's hello), before its
/// generation registers: a partition in between cuts it, and the frames it
/// loses are excused; a partition over before the hello cuts nothing.
#[test]
fn s6_detects_a_loss_only_when_no_partition_cut_the_socket_before_it_registered() {
    let lossy = |partition_ms: u64| {
        let mut log = data_2_lost();
        for record in &mut log {
            record.at += Duration::from_millis(300);
        }
        // Hello at 297 ms, the generation registers at 300 ms.
        insert_in_time(
            &mut log,
            at(297, Event::HandshakeWriteBegun { socket: SOCKET }),
        );
        insert_in_time(&mut log, fault(partition_ms, FaultApplied::Partition));
        insert_in_time(&mut log, fault(partition_ms, FaultApplied::Repair));
        log
    };
    assert_holds(&lossy(298), &context(), Contract::S6);
    let lost = lossy(100);
    assert_violates(&lost, &context(), Contract::S6, &[&data_2_written(&lost)]);
}

/// A log where the peer did `act` to the socket at 850 ms and the
/// generation went down at 860 ms for `reason` (or stayed up), and the
/// peer's socket ended at 865 ms.
fn hostile_then(act: PeerAct, reason: Option<DownReason>) -> Vec<Record> {
    let mut log = good();
    let table = is!(Event::TableAtEnd { .. });
    insert_before(&mut log, table, acted(850, act));
    if let Some(reason) = reason {
        insert_before(&mut log, table, down(860, 1, reason, None));
        insert_before(
            &mut log,
            table,
            at(
                865,
                Event::PeerSocketClosed {
                    peer: 0,
                    socket: SOCKET,
                    how: SocketEnd::Eof,
                },
            ),
        );
        empty_table_at_end(&mut log);
    }
    log
}

/// What the peer did in a [`hostile_then`] log.
fn the_act(log: &[Record]) -> Record {
    the(log, is!(Event::PeerActed { .. }))
}

/// A stream that ends inside a frame, and a header over the maximum, are
/// read errors: a decoder that reports either as a clean close
/// (`PeerClosed`) is caught, whichever the tear (in the header or the
/// body); `ReadError` and an earlier write's failure are not.
#[test]
fn s3_detects_a_torn_stream_or_an_oversize_header_reported_as_a_clean_close() {
    for act in [
        PeerAct::Tore { bytes: 3 },
        PeerAct::Tore { bytes: 20 },
        PeerAct::WroteOversize,
    ] {
        let log = hostile_then(act, Some(DownReason::PeerClosed));
        assert_violates(
            &log,
            &context(),
            Contract::S3,
            &[&the_act(&log), &the_down(&log)],
        );
        for fine in [DownReason::ReadError, DownReason::WriteError] {
            let log = hostile_then(act, Some(fine));
            assert_not_violates(
                &log,
                &context(),
                Contract::S3,
                &[&the_act(&log), &the_down(&log)],
            );
        }
    }
}

/// A header over the maximum, or a torn stream, must take the generation
/// down: a decoder that waits for the body a lying header announced keeps
/// a broken peer's generation up for good.
#[test]
fn s3_detects_an_oversize_header_or_a_tear_that_left_the_generation_up() {
    for act in [PeerAct::WroteOversize, PeerAct::Tore { bytes: 5 }] {
        let log = hostile_then(act, None);
        // The act alone: a clean close it was not would cite the down too.
        assert_violates_exactly(&log, &context(), Contract::S3, &[&the_act(&log)]);
    }
    // Unless the run never finished: then nothing is owed yet.
    let unfinished = CheckContext {
        finished: false,
        ..context()
    };
    let log = hostile_then(PeerAct::WroteOversize, None);
    assert_not_violates(&log, &unfinished, Contract::S3, &[&the_act(&log)]);
}

/// A well-formed frame at exactly the maximum must be read: it cuts
/// nothing off, so a generation that goes down with `ReadError` after it
/// went down with no cause (an off-by-one at the limit); the same down
/// after an oversize header had one.
#[test]
fn s7_detects_a_frame_at_the_maximum_refused() {
    let refused = hostile_then(PeerAct::WroteMaxFrame, Some(DownReason::ReadError));
    assert_violates(&refused, &context(), Contract::S7, &[&the_down(&refused)]);
    assert_holds(
        &hostile_then(PeerAct::WroteOversize, Some(DownReason::ReadError)),
        &context(),
        Contract::S7,
    );
    assert_clean(
        &ALL,
        &hostile_then(PeerAct::WroteMaxFrame, None),
        &context(),
    );
}

/// A local close while a frame the peer was writing is still unread resets
/// the stream, and a reset discards what the peer had not read yet: a
/// written frame lost that way is excused, but only when the down came
/// before the local node had read the peer's whole frame (a close after
/// it is a plain FIN, which loses nothing), or when the peer's frame came
/// after the close. Found by hunts (seeds 11 and 12) once peers could
/// write.
#[test]
fn s6_detects_a_lost_frame_unless_a_reset_discarded_it() {
    let lossy = |read_before_down: bool| {
        let mut log = data_2_lost();
        insert_after(
            &mut log,
            is!(Event::ConnectionUp { .. }),
            acted(0, PeerAct::WroteMaxFrame),
        );
        // After data frame 1's arrival: the read (if any), the disconnect
        // and the down, each inserted just after it, the last first.
        let arrival = is!(Event::FrameArrived {
            lane: Lane::Data,
            ..
        });
        insert_after(
            &mut log,
            arrival,
            down(10, 1, DownReason::ManualDisconnect, None),
        );
        insert_after(
            &mut log,
            arrival,
            at(
                10,
                Event::Disconnected {
                    peer: 0,
                    generation: Some(1),
                },
            ),
        );
        if read_before_down {
            insert_after(
                &mut log,
                arrival,
                at(
                    10,
                    Event::InboundFrameRead {
                        peer: 0,
                        generation: 1,
                        bytes: 16 * 1024,
                    },
                ),
            );
        }
        empty_table_at_end(&mut log);
        log
    };
    // A reset excuses the loss.
    assert_holds(&lossy(false), &context(), Contract::S6);
    let read = lossy(true);
    assert_violates(&read, &context(), Contract::S6, &[&data_2_written(&read)]);
    // A frame written to the socket after the local close reaches a closed
    // socket, which answers with a reset: excused too.
    let mut after = lossy(true);
    remove(
        &mut after,
        is!(Event::PeerActed {
            act: PeerAct::WroteMaxFrame,
            ..
        }),
    );
    insert_after(
        &mut after,
        is!(Event::ConnectionDown { .. }),
        acted(11, PeerAct::WroteMaxFrame),
    );
    assert_holds(&after, &context(), Contract::S6);
}

#[test]
fn s4_detects_data_dropped_as_closed_with_no_shutdown() {
    let mut log = good();
    let dropped = insert_after(
        &mut log,
        is!(Event::DataEnqueued { seq: 1, .. }),
        at(
            2,
            Event::DataEnqueued {
                peer: 0,
                seq: 9,
                outcome: DataOutcome::DroppedClosed,
            },
        ),
    );
    assert_violates(&log, &context(), Contract::S4, &[&dropped]);
    // After a shutdown was asked for, closed is the answer.
    insert_before(
        &mut log,
        is!(Event::DataEnqueued {
            outcome: DataOutcome::DroppedClosed,
            ..
        }),
        at(2, Event::ShutdownRequested),
    );
    assert_not_violates(&log, &context(), Contract::S4, &[&dropped]);
}

#[test]
fn s2_detects_a_write_its_deadline_ended_reported_as_failed() {
    // Data frame 2's write is under way when its generation goes down as
    // WriteTimeout, and its end says Failed.
    let mut log = good();
    let failed = data_2_ends(&mut log, Written::Failed);
    insert_before(
        &mut log,
        is_data_2_end,
        down(7, 1, DownReason::WriteTimeout, None),
    );
    assert_violates(&log, &context(), Contract::S2, &[&failed]);
    // Reported as timed out, the same log says nothing of that write.
    let timed_out = data_2_ends(&mut log, Written::TimedOut);
    assert_not_violates(&log, &context(), Contract::S2, &[&timed_out]);
}
