//! Each sender checker against a hand-made log that breaks exactly its
//! contract (`*_detects_*`), and a well-behaved log that breaks none. Every
//! check a checker makes has a log here that trips it.

use std::time::Duration;

use lanesim_sims::check::{check, CheckContext};
use lanesim_sims::event::{
    ControlOutcome, Counts, DataOutcome, DialFailure, Down, Event, FaultApplied, Lane, PeerAct,
    Record, SocketEnd, Written,
};
use lanesim_sims::scenario::Contract;

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
    Record {
        at: Duration::from_millis(ms),
        host: "local".into(),
        event,
    }
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

fn down(ms: u64, generation: u64, reason: Down, table: Option<u64>) -> Record {
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
    let table = find(log, |e| matches!(e, Event::TableAtEnd { .. }));
    log[table] = at(
        890,
        Event::TableAtEnd {
            peer: 0,
            generation: None,
        },
    );
}

/// [`good`] but data frame 2, written whole, never arrives.
fn data_2_lost() -> Vec<Record> {
    let mut log = good();
    log.retain(|r| {
        !matches!(
            r.event,
            Event::FrameArrived {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    log
}

/// Index of the first record matching `pred`.
fn find(log: &[Record], pred: impl Fn(&Event) -> bool) -> usize {
    log.iter()
        .position(|r| pred(&r.event))
        .expect("the record is in the log")
}

fn found(records: &[Record], context: &CheckContext) -> Vec<(Contract, String)> {
    check(&ALL, records, context)
        .into_iter()
        .map(|v| (v.contract, v.message))
        .collect()
}

#[track_caller]
fn assert_has(records: &[Record], context: &CheckContext, contract: Contract, needle: &str) {
    let f = found(records, context);
    assert!(
        f.iter().any(|(c, m)| *c == contract && m.contains(needle)),
        "expected {} `{needle}`, found {f:#?}",
        contract.id()
    );
}

#[track_caller]
fn assert_clean(records: &[Record], context: &CheckContext) {
    assert_eq!(found(records, context), vec![]);
}

/// The good log with the generation down (by `reason`) after its work, its
/// peer having been cut off first, so nothing else trips.
fn good_then_down(reason: Down) -> Vec<Record> {
    let mut log = good();
    log.insert(17, acted(850, PeerAct::Killed));
    log.insert(18, down(860, 1, reason, None));
    empty_table_at_end(&mut log);
    log
}

#[test]
fn a_well_behaved_log_breaks_nothing() {
    assert_clean(&good(), &context());
    assert_clean(&good_then_down(Down::PeerClosed), &context());
}

#[test]
fn dc1_detects_an_overflow_before_down_and_a_closed_without_shutdown() {
    let mut early = good();
    early.insert(
        4,
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
    assert_has(&early, &context(), Contract::Dc1, "Overflow returned while");

    let mut closed = good();
    closed.insert(4, control(3, 1, 2, 8, ControlOutcome::Closed));
    assert_has(&closed, &context(), Contract::Dc1, "no shutdown was asked");
    closed.insert(3, at(2, Event::ShutdownRequested));
    assert!(!found(&closed, &context())
        .iter()
        .any(|(_, m)| m.contains("no shutdown")));
}

#[test]
fn dc1_detects_a_control_the_drain_never_saw_even_when_its_generation_goes_down_later() {
    let mut vanished = good_then_down(Down::PeerClosed);
    vanished.retain(|r| {
        !matches!(
            r.event,
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
    });
    assert_has(
        &vanished,
        &context(),
        Contract::Dc1,
        "the drain never saw it",
    );
}

#[test]
fn dc1_detects_a_silently_lost_control_two_fates_and_a_skip_while_up() {
    let mut lost = good();
    let written = find(&lost, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Control,
                ..
            }
        )
    });
    lost[written] = finished(5, 1, Lane::Control, 1, Written::Failed);
    lost.retain(|r| {
        !matches!(
            r.event,
            Event::FrameArrived {
                lane: Lane::Control,
                ..
            }
        )
    });
    assert_has(&lost, &context(), Contract::Dc1, "silently lost");

    let mut twice = good();
    twice.insert(
        8,
        at(
            5,
            Event::ControlSkipped {
                peer: 0,
                generation: 1,
                seq: 1,
            },
        ),
    );
    assert_has(&twice, &context(), Contract::Dc1, "met 2 fates");
    assert_has(
        &twice,
        &context(),
        Contract::Dc1,
        "skipped while its pinned generation",
    );
}

#[test]
fn dc2_detects_a_control_on_a_redialed_generation() {
    let mut stale = good();
    stale.insert(5, down(4, 1, Down::PeerClosed, None));
    stale.insert(6, up(4, 2, 4001));
    stale.insert(5, acted(4, PeerAct::Killed));
    for record in &mut stale {
        match &mut record.event {
            Event::WriteStarted {
                generation,
                lane: Lane::Control,
                ..
            }
            | Event::WriteFinished {
                generation,
                lane: Lane::Control,
                ..
            } => *generation = 2,
            Event::FrameArrived {
                socket,
                lane: Lane::Control,
                ..
            }
            | Event::FrameWriteBegun {
                socket,
                lane: Lane::Control,
                ..
            } => *socket = 4001,
            _ => {}
        }
    }
    assert_has(
        &stale,
        &context(),
        Contract::Dc2,
        "pinned to peer0/1 was written to peer0/2",
    );
    assert_has(
        &stale,
        &context(),
        Contract::Dc2,
        "arrived on peer0/2's socket",
    );
}

/// Generations count from 1 on every node: a control pinned to peer0's
/// generation 1 written to, and arriving on, peer1's generation 1 is on the
/// wrong node, and its link was not told.
#[test]
fn dc2_detects_a_control_sent_to_another_nodes_generation_of_the_same_number() {
    let mut elsewhere = good();
    elsewhere.insert(
        1,
        at(
            0,
            Event::ConnectionUp {
                peer: 1,
                generation: 1,
                socket: 4001,
            },
        ),
    );
    for record in &mut elsewhere {
        match &mut record.event {
            Event::WriteStarted {
                peer,
                lane: Lane::Control,
                ..
            }
            | Event::WriteFinished {
                peer,
                lane: Lane::Control,
                ..
            }
            | Event::FrameArrived {
                peer,
                lane: Lane::Control,
                ..
            } => *peer = 1,
            _ => {}
        }
        match &mut record.event {
            Event::FrameArrived {
                socket,
                lane: Lane::Control,
                ..
            }
            | Event::FrameWriteBegun {
                socket,
                lane: Lane::Control,
                ..
            } => *socket = 4001,
            _ => {}
        }
    }
    assert_has(
        &elsewhere,
        &context(),
        Contract::Dc2,
        "pinned to peer0/1 was written to peer1/1",
    );
    assert_has(
        &elsewhere,
        &context(),
        Contract::Dc2,
        "arrived on peer1/1's socket",
    );
    assert_has(&elsewhere, &context(), Contract::Dc1, "silently lost");
    assert_has(&elsewhere, &context(), Contract::EndToEnd, "link 7");
}

#[test]
fn dc2_detects_a_frame_begun_on_a_socket_after_its_generation_went_down() {
    let mut late = good();
    let begun_at = find(&late, |e| {
        matches!(
            e,
            Event::FrameWriteBegun {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    late.insert(begun_at, down(7, 1, Down::WriteError, None));
    late.insert(begun_at, acted(7, PeerAct::Killed));
    assert_has(
        &late,
        &context(),
        Contract::Dc2,
        "Data frame 2 began to be written to peer0/1 after that generation went down",
    );
}

/// For real, a write that passed its down check just before another
/// thread marked the generation down is logged just after the down: DC-2
/// excuses a begin within the race window of the down (real mode's grain),
/// and only that; in simulation the window is zero and the same log fails.
#[test]
fn real_dc2_excuses_only_a_write_racing_the_down() {
    let mut raced = good();
    let begun_at = find(&raced, |e| {
        matches!(
            e,
            Event::FrameWriteBegun {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    let begun = raced[begun_at].at;
    let mut down_then = down(0, 1, Down::WriteError, None);
    down_then.at = begun.saturating_sub(Duration::from_millis(2));
    raced.insert(begun_at, down_then);
    let dc2 = |records: &[Record], context: &CheckContext| {
        found(records, context)
            .into_iter()
            .filter(|(c, _)| *c == Contract::Dc2)
            .count()
    };
    let real = CheckContext {
        race_window: Duration::from_millis(5),
        ..context()
    };
    assert_eq!(dc2(&raced, &real), 0, "a 2 ms race is excused for real");
    assert_has(
        &raced,
        &context(),
        Contract::Dc2,
        "Data frame 2 began to be written to peer0/1 after that generation went down",
    );
    let narrow = CheckContext {
        race_window: Duration::from_millis(1),
        ..context()
    };
    assert_has(
        &raced,
        &narrow,
        Contract::Dc2,
        "Data frame 2 began to be written to peer0/1 after that generation went down",
    );
}

#[test]
fn dc5_detects_reordered_data_and_controls() {
    let mut data_swapped = good();
    let first = find(&data_swapped, |e| {
        matches!(
            e,
            Event::FrameArrived {
                lane: Lane::Data,
                seq: 1,
                ..
            }
        )
    });
    data_swapped.swap(first, first + 1);
    assert_has(
        &data_swapped,
        &context(),
        Contract::Dc5,
        "Data frames on socket 4000 of peer0 arrived out of order: 1 after 2",
    );

    let mut controls = good();
    let arrival = find(&controls, |e| {
        matches!(
            e,
            Event::FrameArrived {
                lane: Lane::Control,
                ..
            }
        )
    });
    controls.insert(arrival + 1, arrived(8, SOCKET, Lane::Control, 1, 0));
    assert_has(
        &controls,
        &context(),
        Contract::Dc5,
        "Control frames on socket 4000",
    );

    let mut written = good();
    let first = find(&written, |e| {
        matches!(
            e,
            Event::WriteStarted {
                lane: Lane::Data,
                seq: 1,
                ..
            }
        )
    });
    let second = find(&written, |e| {
        matches!(
            e,
            Event::WriteStarted {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    written.swap(first, second);
    assert_has(
        &written,
        &context(),
        Contract::Dc5,
        "data to peer0 written out of order: 1 after 2",
    );
}

#[test]
fn s2_detects_a_write_past_the_deadline_and_a_write_that_never_ends() {
    let mut long = good();
    let end = find(&long, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 1,
                ..
            }
        )
    });
    long[end] = finished(6 + 5_200, 1, Lane::Data, 1, Written::Written);
    assert_has(&long, &context(), Contract::S2, "held the drain for");

    let mut stuck = good();
    stuck.retain(|r| {
        !matches!(
            r.event,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    stuck.push(at(10_000, Event::RunEnd { finished: false }));
    let unfinished = CheckContext {
        finished: false,
        ..context()
    };
    assert_has(&stuck, &unfinished, Contract::S2, "never finished");
}

#[test]
fn s2_detects_a_timed_out_write_whose_generation_stays_up() {
    // A down long after the timed-out write returned is not the deadline's.
    let mut later = good_then_down(Down::PeerClosed);
    let end = find(&later, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    later[end] = finished(7, 1, Lane::Data, 2, Written::TimedOut);
    assert_has(
        &later,
        &context(),
        Contract::S2,
        "timed out but the generation was not down when it returned",
    );

    let mut kept = good();
    let end = find(&kept, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    kept[end] = finished(7, 1, Lane::Data, 2, Written::TimedOut);
    assert_has(
        &kept,
        &context(),
        Contract::S2,
        "timed out but the generation was not down when it returned",
    );
}

#[test]
fn s2_detects_a_timed_out_write_whose_generation_went_down_for_another_reason() {
    let mut wrong = good();
    let end = find(&wrong, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    wrong[end] = finished(7, 1, Lane::Data, 2, Written::TimedOut);
    wrong.insert(end, down(7, 1, Down::WriteError, None));
    wrong.insert(end, acted(7, PeerAct::Wedged));
    assert_has(
        &wrong,
        &context(),
        Contract::S2,
        "timed out but its generation went down as WriteError",
    );
    wrong[end + 1] = down(7, 1, Down::WriteTimeout, None);
    assert!(!found(&wrong, &context())
        .iter()
        .any(|(c, m)| *c == Contract::S2 && m.contains("went down as")));
}

/// A local down closes the socket: a peer still reading sees the end.
#[test]
fn s3_detects_a_down_generation_whose_socket_was_never_closed() {
    let mut open = good_then_down(Down::ManualDisconnect);
    open[17] = at(
        850,
        Event::Disconnected {
            peer: 0,
            generation: Some(1),
        },
    );
    open.last_mut().expect("RunEnd").at = Duration::from_secs(5);
    assert_has(
        &open,
        &context(),
        Contract::S3,
        "its socket was never closed",
    );
    let mut closed = open.clone();
    closed.insert(
        19,
        at(
            870,
            Event::PeerSocketClosed {
                peer: 0,
                socket: SOCKET,
                how: SocketEnd::Eof,
            },
        ),
    );
    assert!(!found(&closed, &context())
        .iter()
        .any(|(_, m)| m.contains("never closed")));
}

#[test]
fn s3_detects_a_failed_write_that_left_its_generation_up() {
    let mut kept = good();
    let end = find(&kept, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    kept[end] = finished(7, 1, Lane::Data, 2, Written::Failed);
    assert_has(
        &kept,
        &context(),
        Contract::S3,
        "failed but the generation was not down when it returned",
    );
}

/// For real, a write refused because another thread had just marked its
/// generation down can end before that thread logs the down: S3 excuses a
/// down logged within the race window after the failed write, and only
/// then; in simulation (no window) the same log fails.
#[test]
fn real_s3_excuses_only_a_down_racing_the_failed_write() {
    let mut raced = good();
    let end = find(&raced, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    raced[end] = finished(7, 1, Lane::Data, 2, Written::Failed);
    let s3 = |records: &[Record], context: &CheckContext| {
        found(records, context)
            .into_iter()
            .filter(|(c, m)| *c == Contract::S3 && m.contains("failed but the generation"))
            .count()
    };
    raced.insert(end + 1, down(9, 1, Down::WriteError, None));
    let real = CheckContext {
        race_window: Duration::from_millis(5),
        ..context()
    };
    assert_eq!(
        s3(&raced, &real),
        0,
        "a down 2 ms later is excused for real"
    );
    assert_eq!(s3(&raced, &context()), 1, "and not in simulation");
    let narrow = CheckContext {
        race_window: Duration::from_millis(1),
        ..context()
    };
    assert_eq!(s3(&raced, &narrow), 1, "nor 2 ms after a 1 ms window");
}

#[test]
fn s2_detects_a_drain_that_sits_idle_with_frames_queued() {
    let mut idle = good();
    // The second data frame waits 50 ms after the first write, with the
    // drain doing nothing.
    let start = find(&idle, |e| {
        matches!(
            e,
            Event::WriteStarted {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    for record in &mut idle[start..start + 3] {
        record.at += Duration::from_millis(50);
    }
    assert_has(&idle, &context(), Contract::S2, "sat idle");
    // Preemption points may hold the drain: two of them are allowed.
    let preempting = CheckContext {
        preempt_max: Duration::from_millis(25),
        ..context()
    };
    assert!(!found(&idle, &preempting)
        .iter()
        .any(|(_, m)| m.contains("sat idle")));
}

#[test]
fn s3_detects_a_second_hook_and_a_down_generation_left_in_the_table() {
    let mut twice = good_then_down(Down::PeerClosed);
    twice.insert(19, down(861, 1, Down::WriteTimeout, None));
    assert_has(&twice, &context(), Contract::S3, "fired 2 times");

    let mut kept = good_then_down(Down::PeerClosed);
    kept[18] = down(860, 1, Down::PeerClosed, Some(1));
    assert_has(
        &kept,
        &context(),
        Contract::S3,
        "its table slot still holds it",
    );

    let mut at_end = good_then_down(Down::PeerClosed);
    let table = find(&at_end, |e| matches!(e, Event::TableAtEnd { .. }));
    at_end[table] = at(
        890,
        Event::TableAtEnd {
            peer: 0,
            generation: Some(1),
        },
    );
    assert_has(
        &at_end,
        &context(),
        Contract::S3,
        "at the end the table still holds",
    );
}

#[test]
fn s3_detects_a_closed_socket_whose_generation_stays_up_and_a_generation_going_backwards() {
    let mut never = good();
    never.push(at(
        960,
        Event::PeerSocketClosed {
            peer: 0,
            socket: SOCKET,
            how: SocketEnd::Eof,
        },
    ));
    assert_has(&never, &context(), Contract::S3, "never went down");

    let mut backwards = good_then_down(Down::PeerClosed);
    backwards.insert(19, up(870, 1, 4001));
    assert_has(
        &backwards,
        &context(),
        Contract::S3,
        "generations start at 1 and only grow",
    );
    let mut from_zero = good();
    from_zero[0] = up(0, 0, SOCKET);
    assert_has(
        &from_zero,
        &context(),
        Contract::S3,
        "generation 0 came up after generation 0",
    );
}

#[test]
fn s4_detects_a_frame_with_no_fate_two_fates_or_invented_and_wrong_counters() {
    let mut no_fate = good();
    no_fate.retain(|r| {
        !matches!(
            r.event,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    assert_has(&no_fate, &context(), Contract::S4, "has no fate");
    assert_has(
        &no_fate,
        &context(),
        Contract::S4,
        "disagree with the events",
    );

    let mut two = good();
    two.insert(14, at(7, Event::DataUnroutable { peer: 0, seq: 2 }));
    assert_has(&two, &context(), Contract::S4, "met 2 fates");

    let mut invented = good();
    invented.insert(17, arrived(9, SOCKET, Lane::Data, 0, 9));
    assert_has(
        &invented,
        &context(),
        Contract::S4,
        "arrived at peer0 but was never written",
    );
}

/// A peer that read something the local node was never given (a frame
/// boundary lost to a cut write, changed bytes): a violation whatever
/// else the log says, not just a socket end.
#[test]
fn s4_detects_a_peer_reading_bytes_that_are_not_a_frame() {
    // The good log, with peer0's socket ending `how` just before its end.
    let ended = |how| {
        let mut log = good();
        let end = log.len() - 1;
        let closed = Event::PeerSocketClosed {
            peer: 0,
            socket: SOCKET,
            how,
        };
        log.insert(end, at(900, closed));
        log
    };
    assert_has(
        &ended(SocketEnd::Garbage),
        &context(),
        Contract::S4,
        "that are not a frame the local node was given",
    );
    assert!(
        !found(&ended(SocketEnd::Error), &context())
            .iter()
            .any(|(_, message)| message.contains("not a frame")),
        "a stream that merely failed is not garbage"
    );
}

#[test]
fn s4_and_dc1_detect_a_lane_refusing_before_it_is_full_or_holding_more() {
    let bounded = |data, control| CheckContext {
        lane_capacity: Some((data, control)),
        ..context()
    };
    // The good log holds at most 2 data frames and 1 control at once.
    assert_clean(&good(), &bounded(2, 1));
    // A third frame while two wait (one of them perhaps in the drain's
    // hands): a lane of two would have refused it.
    let mut over = good();
    over.insert(5, data(4, 3));
    assert_has(
        &over,
        &bounded(1, 1),
        Contract::S4,
        "accepted a frame while it held 2 of 1",
    );
    let mut early = good();
    early.insert(
        3,
        at(
            2,
            Event::DataEnqueued {
                peer: 0,
                seq: 9,
                outcome: DataOutcome::DroppedFull,
            },
        ),
    );
    assert_has(
        &early,
        &bounded(2, 1),
        Contract::S4,
        "refused a frame while it held 1 of 2",
    );
    let mut overflow = good_then_down(Down::ControlOverflow);
    overflow.insert(4, control(3, 1, 2, 8, ControlOutcome::Overflow));
    assert_has(
        &overflow,
        &bounded(2, 4),
        Contract::Dc1,
        "the Control lane refused a frame while it held 1 of 4",
    );
}

#[test]
fn s6_detects_a_written_frame_that_never_arrives_at_a_reading_peer() {
    let missing = data_2_lost();
    assert_has(
        &missing,
        &context(),
        Contract::S6,
        "Data frame 2 was written whole",
    );

    // Excused when the peer stopped reading that socket in time ...
    let mut wedged = missing.clone();
    wedged.insert(14, acted(8, PeerAct::Wedged));
    assert!(!found(&wedged, &context())
        .iter()
        .any(|(c, _)| *c == Contract::S6));

    // ... but not by a wedge long after the frame could have been read.
    let mut late = missing;
    late.insert(17, acted(700, PeerAct::Wedged));
    assert_has(&late, &context(), Contract::S6, "never arrived");
}

/// A partition that came and went while nothing was in flight leaves the
/// stream whole: it excuses neither a later loss nor a later down.
#[test]
fn s6_and_s7_detect_a_loss_or_down_a_partition_that_healed_before_the_write_cannot_excuse() {
    let mut healed = data_2_lost();
    let first_write = find(&healed, |e| matches!(e, Event::WriteStarted { .. }));
    healed.insert(first_write, fault(0, FaultApplied::Partition));
    healed.insert(first_write + 1, fault(0, FaultApplied::Repair));
    // Nothing was written during [0, 0]: the partition is over by the writes.
    for record in &mut healed[first_write + 2..] {
        record.at += Duration::from_millis(200);
    }
    assert_has(
        &healed,
        &context(),
        Contract::S6,
        "Data frame 2 was written whole",
    );

    let mut late_down = good_then_down(Down::WriteTimeout);
    late_down.remove(17); // not the kill: the partition is the only excuse
    late_down.insert(1, fault(0, FaultApplied::Partition));
    late_down.insert(2, fault(0, FaultApplied::Repair));
    assert_has(&late_down, &context(), Contract::S7, "with no cause");

    // Bytes written during the partition are lost for good: excused.
    let mut lossy = data_2_lost();
    let begun = find(&lossy, |e| {
        matches!(
            e,
            Event::FrameWriteBegun {
                lane: Lane::Data,
                seq: 1,
                ..
            }
        )
    });
    lossy.insert(begun, fault(6, FaultApplied::Partition));
    lossy.insert(begun + 2, fault(6, FaultApplied::Repair));
    assert!(!found(&lossy, &context())
        .iter()
        .any(|(c, _)| *c == Contract::S6));
}

#[test]
fn s7_detects_a_down_with_no_cause() {
    // A slow peer (no fault that stops reading) timed out.
    let mut slow = good();
    slow.insert(1, fault(0, FaultApplied::Slow { every_us: 1000 }));
    slow.insert(19, down(860, 1, Down::WriteTimeout, None));
    empty_table_at_end(&mut slow);
    assert_has(
        &slow,
        &context(),
        Contract::S7,
        "went down (WriteTimeout) with no cause",
    );

    for reason in [
        Down::ReadError,
        Down::PeerClosed,
        Down::ControlOverflow,
        Down::ManualDisconnect,
        Down::WriteCancelled,
    ] {
        let mut spurious = good_then_down(reason);
        spurious.remove(17); // the kill that excused it
        assert_has(&spurious, &context(), Contract::S7, "with no cause");
    }

    // A write dropped mid-frame is excused by a shutdown asked for before it
    // (the drain's abort drops its write), or as a write deadline would be
    // (a sender that bounds a write by dropping it, its peer cut off), and
    // by nothing else (above).
    let mut cancelled = good_then_down(Down::WriteCancelled);
    cancelled[17] = at(850, Event::ShutdownRequested);
    assert!(!found(&cancelled, &context())
        .iter()
        .any(|(c, _)| *c == Contract::S7));
    let dropped_on_deadline = good_then_down(Down::WriteCancelled);
    assert!(!found(&dropped_on_deadline, &context())
        .iter()
        .any(|(c, _)| *c == Contract::S7));

    let mut asked = good_then_down(Down::ManualDisconnect);
    asked[17] = at(
        850,
        Event::Disconnected {
            peer: 0,
            generation: Some(1),
        },
    );
    assert!(!found(&asked, &context())
        .iter()
        .any(|(c, _)| *c == Contract::S7));
}

/// For real, the driver kills a peer and then logs it; the local read can
/// fail first. S7 counts a fault logged within the race window after the
/// down as its cause, and only within it; in simulation (no window) the
/// same log has a down with no cause.
#[test]
fn real_s7_excuses_only_a_fault_logged_just_after_its_down() {
    let mut raced = good_then_down(Down::ReadError);
    raced.remove(17); // the kill logged at 850, before the down at 860
    let down_at = find(&raced, |e| matches!(e, Event::ConnectionDown { .. }));
    raced.insert(down_at + 1, acted(862, PeerAct::Killed));
    let s7 = |context: &CheckContext| {
        found(&raced, context)
            .into_iter()
            .filter(|(c, m)| *c == Contract::S7 && m.contains("with no cause"))
            .count()
    };
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
    displaced.insert(17, up(800, 2, 4001));
    let table = find(&displaced, |e| matches!(e, Event::TableAtEnd { .. }));
    displaced[table] = at(
        890,
        Event::TableAtEnd {
            peer: 0,
            generation: Some(2),
        },
    );
    assert_has(&displaced, &context(), Contract::S7, "was still live");
}

#[test]
fn s8_detects_a_node_never_redialed_once_its_peer_was_reachable() {
    let redialing = CheckContext {
        redial: Some((Duration::from_millis(10), Duration::from_millis(50))),
        ..context()
    };
    let mut log = good_then_down(Down::PeerClosed);
    log.last_mut().expect("RunEnd").at = Duration::from_secs(5);
    assert_has(&log, &redialing, Contract::S8, "no new generation came up");

    // A redial in time satisfies it.
    let mut redialed = log.clone();
    redialed.insert(19, up(870, 2, 4001));
    assert!(!found(&redialed, &redialing)
        .iter()
        .any(|(c, _)| *c == Contract::S8));

    // A peer that crashed and never came back need not be reconnected.
    let mut crashed = log;
    crashed.insert(17, fault(850, FaultApplied::Crash));
    assert!(!found(&crashed, &redialing)
        .iter()
        .any(|(c, _)| *c == Contract::S8));
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
    let mut log = good_then_down(Down::PeerClosed);
    log.last_mut().expect("RunEnd").at = Duration::from_secs(5);
    let dial = |ms: u64, error: DialFailure| at(ms, Event::DialFailed { peer: 0, error });
    let mut timed_out = log.clone();
    timed_out.insert(19, dial(920, DialFailure::Timeout));
    timed_out.insert(20, dial(980, DialFailure::Timeout));
    let s8 = |log: &[Record], context: &CheckContext| {
        found(log, context).iter().any(|(c, _)| *c == Contract::S8)
    };
    assert!(!s8(&timed_out, &context_with(50)), "excused");
    // A connect timeout a healthy dial always fits: held to it.
    assert!(s8(&timed_out, &context_with(500)), "a long timeout");
    // A dial that failed otherwise: held to it.
    let mut refused = log;
    refused.insert(19, dial(920, DialFailure::Timeout));
    refused.insert(20, dial(980, DialFailure::Io));
    assert!(s8(&refused, &context_with(50)), "not every dial timed out");
}

#[test]
fn end_to_end_detects_a_lost_death_signal_and_accepts_noconnection_instead() {
    let mut broken = good();
    broken.retain(|r| {
        !matches!(
            r.event,
            Event::FrameArrived {
                lane: Lane::Control,
                ..
            }
        )
    });
    assert_has(&broken, &context(), Contract::EndToEnd, "link 7");
    let mut told = good_then_down(Down::PeerClosed);
    told.retain(|r| {
        !matches!(
            r.event,
            Event::FrameArrived {
                lane: Lane::Control,
                ..
            }
        )
    });
    told.insert(19, noconnection(860, 1, 7));
    assert!(!found(&told, &context())
        .iter()
        .any(|(c, _)| *c == Contract::EndToEnd));
}

#[test]
fn end_to_end_detects_an_invented_or_repeated_noconnection() {
    let mut invented = good();
    invented.insert(17, noconnection(800, 1, 7));
    assert_has(
        &invented,
        &context(),
        Contract::EndToEnd,
        "an invented death signal",
    );

    let mut twice = good_then_down(Down::PeerClosed);
    twice.insert(19, noconnection(860, 1, 7));
    twice.insert(20, noconnection(861, 1, 7));
    assert_has(&twice, &context(), Contract::EndToEnd, "delivered twice");
}

/// A write deadline no longer than a healthy link needs to carry a frame
/// excuses its own timeout (the hunt's 12 KB controls against 100 ms); a
/// deadline above that bound does not.
#[test]
fn s7_detects_a_timeout_only_when_the_deadline_could_cover_a_healthy_transfer() {
    let mut timeout = good();
    timeout.insert(19, down(860, 1, Down::WriteTimeout, None));
    empty_table_at_end(&mut timeout);
    let mut roomy = context();
    roomy.write_timeout = Some(Duration::from_secs(5));
    roomy.write_bound = Duration::from_millis(480);
    assert_has(
        &timeout,
        &roomy,
        Contract::S7,
        "went down (WriteTimeout) with no cause",
    );
    let mut tight = roomy;
    tight.write_timeout = Some(Duration::from_millis(100));
    assert!(!found(&timeout, &tight)
        .iter()
        .any(|(c, _)| *c == Contract::S7));
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
    assert!(!found(&swallowed, &context())
        .iter()
        .any(|(c, m)| *c == Contract::S3 && m.contains("never went down")));
    let mut later = good();
    later.push(close);
    later.push(fault(5_000, FaultApplied::Partition));
    assert_has(&later, &context(), Contract::S3, "never went down");
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
        log.push(at(297, Event::HandshakeWriteBegun { socket: SOCKET }));
        log.push(fault(partition_ms, FaultApplied::Partition));
        log.push(fault(partition_ms, FaultApplied::Repair));
        log.sort_by_key(|r| r.at);
        log
    };
    assert!(!found(&lossy(298), &context())
        .iter()
        .any(|(c, _)| *c == Contract::S6));
    assert_has(&lossy(100), &context(), Contract::S6, "never arrived");
}

/// A log where the peer did `act` to the socket at 850 ms and the
/// generation went down at 860 ms for `reason` (or stayed up), and the
/// peer's socket ended at 865 ms.
fn hostile_then(act: PeerAct, reason: Option<Down>) -> Vec<Record> {
    let mut log = good();
    log.insert(17, acted(850, act));
    if let Some(reason) = reason {
        log.insert(18, down(860, 1, reason, None));
        log.insert(
            19,
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
        assert_has(
            &hostile_then(act, Some(Down::PeerClosed)),
            &context(),
            Contract::S3,
            "not a clean close",
        );
        for fine in [Down::ReadError, Down::WriteError] {
            let log = hostile_then(act, Some(fine));
            assert!(
                !found(&log, &context())
                    .iter()
                    .any(|(_, m)| m.contains("not a clean close")),
                "{act:?} then {fine:?}"
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
        assert_has(
            &hostile_then(act, None),
            &context(),
            Contract::S3,
            "but the generation never went down",
        );
    }
    // Unless the run never finished: then nothing is owed yet.
    let unfinished = CheckContext {
        finished: false,
        ..context()
    };
    assert!(
        !found(&hostile_then(PeerAct::WroteOversize, None), &unfinished)
            .iter()
            .any(|(_, m)| m.contains("never went down"))
    );
}

/// A well-formed frame at exactly the maximum must be read: it cuts
/// nothing off, so a generation that goes down with `ReadError` after it
/// went down with no cause (an off-by-one at the limit); the same down
/// after an oversize header had one.
#[test]
fn s7_detects_a_frame_at_the_maximum_refused() {
    assert_has(
        &hostile_then(PeerAct::WroteMaxFrame, Some(Down::ReadError)),
        &context(),
        Contract::S7,
        "went down (ReadError) with no cause",
    );
    assert!(!found(
        &hostile_then(PeerAct::WroteOversize, Some(Down::ReadError)),
        &context()
    )
    .iter()
    .any(|(c, _)| *c == Contract::S7));
    assert_clean(&hostile_then(PeerAct::WroteMaxFrame, None), &context());
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
        log.insert(1, acted(0, PeerAct::WroteMaxFrame));
        let arrived = find(&log, |e| {
            matches!(
                e,
                Event::FrameArrived {
                    lane: Lane::Data,
                    ..
                }
            )
        });
        log.insert(arrived + 1, down(10, 1, Down::ManualDisconnect, None));
        log.insert(
            arrived + 1,
            at(
                10,
                Event::Disconnected {
                    peer: 0,
                    generation: Some(1),
                },
            ),
        );
        if read_before_down {
            log.insert(
                arrived + 1,
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
    assert!(
        !found(&lossy(false), &context())
            .iter()
            .any(|(c, _)| *c == Contract::S6),
        "a reset excuses the loss"
    );
    assert_has(
        &lossy(true),
        &context(),
        Contract::S6,
        "Data frame 2 was written whole",
    );
    // A frame written to the socket after the local close reaches a closed
    // socket, which answers with a reset: excused too.
    let mut after = lossy(true);
    let act = find(&after, |e| {
        matches!(
            e,
            Event::PeerActed {
                act: PeerAct::WroteMaxFrame,
                ..
            }
        )
    });
    after.remove(act);
    let down_at = find(&after, |e| matches!(e, Event::ConnectionDown { .. }));
    after.insert(down_at + 1, acted(11, PeerAct::WroteMaxFrame));
    assert!(
        !found(&after, &context())
            .iter()
            .any(|(c, _)| *c == Contract::S6),
        "a frame written after the close resets the stream"
    );
}

#[test]
fn s4_detects_data_dropped_as_closed_with_no_shutdown() {
    let mut log = good();
    log.insert(
        3,
        at(
            2,
            Event::DataEnqueued {
                peer: 0,
                seq: 9,
                outcome: DataOutcome::DroppedClosed,
            },
        ),
    );
    assert_has(
        &log,
        &context(),
        Contract::S4,
        "data frame 9 to peer0 was dropped as closed though no shutdown was asked for",
    );
    // After a shutdown was asked for, closed is the answer.
    log.insert(3, at(2, Event::ShutdownRequested));
    assert!(!found(&log, &context())
        .iter()
        .any(|(_, m)| m.contains("dropped as closed")));
}

#[test]
fn s2_detects_a_write_its_deadline_ended_reported_as_failed() {
    // Data frame 2's write is under way when its generation goes down as
    // WriteTimeout, and its end says Failed.
    let mut log = good();
    let finished_2 = find(&log, |e| {
        matches!(
            e,
            Event::WriteFinished {
                lane: Lane::Data,
                seq: 2,
                ..
            }
        )
    });
    log[finished_2] = finished(7, 1, Lane::Data, 2, Written::Failed);
    log.insert(finished_2, down(7, 1, Down::WriteTimeout, None));
    assert_has(
        &log,
        &context(),
        Contract::S2,
        "was reported failed, not timed out",
    );
    // Reported as timed out, the same log says nothing of it.
    log[finished_2 + 1] = finished(7, 1, Lane::Data, 2, Written::TimedOut);
    assert!(!found(&log, &context())
        .iter()
        .any(|(_, m)| m.contains("reported failed")));
}
