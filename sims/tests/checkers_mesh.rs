//! Each mesh checker (M1-M9) against a hand-made log that breaks exactly
//! its contract (`*_detects_*`), the same log mended that breaks none, and
//! the excuses each checker makes (a crashed maker, a fault on the pair).
//! Each test names the violation it expects by its contract and the
//! records it cites (`support`).

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use lanesim_sims::check::CheckContext;
use lanesim_sims::event::{
    DialFailure, Event, Intruder, LinkMsg, LinkSide, MeshFaultApplied, MisdialOutcome, Record, Side,
};
use lanesim_sims::scenario::Contract;
use lanesim_target::node::DownReason;
use support::{
    assert_clean, assert_holds, assert_only, assert_violates, assert_violates_exactly, citing,
    edit_all, insert_before, insert_in_time, is, remove, remove_all, replace, the,
};

const ALL: [Contract; 9] = [
    Contract::M1,
    Contract::M2,
    Contract::M3,
    Contract::M4,
    Contract::M5,
    Contract::M6,
    Contract::M7,
    Contract::M8,
    Contract::M9,
];

fn at(ms: u64, event: Event) -> Record {
    support::record("node", ms, event)
}

fn context() -> CheckContext {
    CheckContext {
        finished: true,
        tick: Duration::from_millis(10),
        heartbeat: Some(Duration::from_secs(1)),
        frame_timeout: Some(Duration::from_secs(2)),
        frame_budget: Some(262_144),
        connect_timeout: Duration::from_millis(500),
        ..CheckContext::default()
    }
}

fn socket(port: u16) -> SocketAddr {
    SocketAddr::from(([192, 168, 0, 1], port))
}

fn started(ms: u64, node: u64, incarnation: u64) -> Record {
    at(ms, Event::NodeStarted { node, incarnation })
}

fn up(ms: u64, node: u64, peer: u64, generation: u64, port: u16) -> Record {
    at(
        ms,
        Event::MeshUp {
            node,
            peer,
            generation,
            origin: if node < peer {
                Side::Dialed
            } else {
                Side::Accepted
            },
            socket: socket(port),
        },
    )
}

fn down(ms: u64, node: u64, peer: u64, generation: u64) -> Record {
    at(
        ms,
        Event::MeshDown {
            node,
            peer,
            generation,
            reason: DownReason::PeerClosed,
        },
    )
}

fn linked(ms: u64, node: u64, peer: u64, generation: u64, link: u64) -> Record {
    at(
        ms,
        Event::MeshLinked {
            node,
            peer,
            generation,
            link,
        },
    )
}

fn arrived(ms: u64, node: u64, peer: u64, generation: u64, link: u64, msg: LinkMsg) -> Record {
    at(
        ms,
        Event::MeshArrived {
            node,
            peer,
            generation,
            link,
            msg,
        },
    )
}

fn noconnection(
    ms: u64,
    node: u64,
    peer: u64,
    generation: u64,
    link: u64,
    side: LinkSide,
) -> Record {
    at(
        ms,
        Event::MeshNoConnection {
            node,
            peer,
            generation,
            link,
            side,
        },
    )
}

fn fault(ms: u64, fault: MeshFaultApplied) -> Record {
    at(ms, Event::MeshFault { fault })
}

fn table(ms: u64, node: u64, peer: u64, port: Option<u16>) -> Record {
    at(
        ms,
        Event::MeshTableAtEnd {
            node,
            peer,
            socket: port.map(socket),
        },
    )
}

fn end(ms: u64) -> Record {
    at(ms, Event::RunEnd { finished: true })
}

/// The contracts `log` breaks, each once.
fn broken(log: &[Record]) -> Vec<Contract> {
    support::broken(&ALL, log, &context())
}

/// Two nodes on one socket; node 0 links over it and the EXIT arrives.
fn healthy() -> Vec<Record> {
    vec![
        started(0, 0, 0),
        started(0, 1, 0),
        up(10, 0, 1, 1, 5000),
        up(20, 1, 0, 1, 5000),
        linked(100, 0, 1, 1, 7),
        arrived(120, 1, 0, 1, 7, LinkMsg::Link),
        arrived(300, 1, 0, 1, 7, LinkMsg::Exit),
        table(5000, 0, 1, Some(5000)),
        table(5000, 1, 0, Some(5000)),
        end(5000),
    ]
}

/// The table node `node` held at the end.
fn table_of(log: &[Record], node: u64) -> Record {
    the(
        log,
        |e| matches!(e, Event::MeshTableAtEnd { node: n, .. } if *n == node),
    )
}

/// Node `node`'s generation `generation` coming up.
fn up_of(log: &[Record], node: u64, generation: u64) -> Record {
    the(
        log,
        |e| matches!(e, Event::MeshUp { node: n, generation: g, .. } if *n == node && *g == generation),
    )
}

/// The fault record matching `pred`.
fn the_fault(log: &[Record], pred: impl Fn(&MeshFaultApplied) -> bool) -> Record {
    the(
        log,
        |e| matches!(e, Event::MeshFault { fault } if pred(fault)),
    )
}

/// The cross-dial fault of a log.
fn cross_dial(log: &[Record]) -> Record {
    the_fault(log, |f| matches!(f, MeshFaultApplied::CrossDial { .. }))
}

#[test]
fn a_healthy_mesh_log_breaks_nothing() {
    assert_clean(&ALL, &healthy(), &context());
}

#[test]
fn m1_detects_two_ends_holding_different_sockets() {
    let mut log = healthy();
    let other = replace(
        &mut log,
        is!(Event::MeshTableAtEnd { node: 1, .. }),
        table(5000, 1, 0, Some(5002)),
    );
    // (M4 also sees node 1's generation 1 neither live nor down.)
    assert_violates(
        &log,
        &context(),
        Contract::M1,
        &[&table_of(&log, 0), &other],
    );
}

#[test]
fn m1_detects_a_pair_with_no_connection_at_the_end() {
    let mut log = healthy();
    let tables = is!(Event::MeshTableAtEnd { node: 0, .. });
    insert_before(&mut log, tables, down(4000, 0, 1, 1));
    insert_before(&mut log, tables, down(4000, 1, 0, 1));
    let none_0 = replace(&mut log, tables, table(5000, 0, 1, None));
    let none_1 = replace(
        &mut log,
        is!(Event::MeshTableAtEnd { node: 1, .. }),
        table(5000, 1, 0, None),
    );
    // The link made over the downed generation is settled by its EXIT.
    assert_eq!(broken(&log), vec![Contract::M1]);
    assert_violates(&log, &context(), Contract::M1, &[&none_0, &none_1]);
}

#[test]
fn m1_detects_a_cross_dial_that_needs_a_redial_to_converge() {
    // Both drop gen 1 and dial at 1 s; each keeps its own socket and closes
    // the other's; they agree again only at 2.5 s, after a redial.
    let mut log = vec![
        started(0, 0, 0),
        started(0, 1, 0),
        up(10, 0, 1, 1, 5000),
        up(20, 1, 0, 1, 5000),
        fault(1000, MeshFaultApplied::CrossDial { a: 0, b: 1 }),
        down(1000, 0, 1, 1),
        down(1000, 1, 0, 1),
        up(1020, 0, 1, 2, 5001),
        up(1020, 1, 0, 2, 5002),
        down(1050, 0, 1, 2),
        down(1050, 1, 0, 2),
        up(2500, 0, 1, 3, 5003),
        up(2520, 1, 0, 3, 5003),
        table(5000, 0, 1, Some(5003)),
        table(5000, 1, 0, Some(5003)),
        end(5000),
    ];
    assert_eq!(broken(&log), vec![Contract::M1]);
    assert_violates(&log, &context(), Contract::M1, &[&cross_dial(&log)]);
    // Mended: the tie-break settles on 5001 within the round trip.
    replace(
        &mut log,
        is!(Event::MeshUp {
            node: 1,
            generation: 2,
            ..
        }),
        up(1030, 1, 0, 2, 5001),
    );
    remove_all(
        &mut log,
        is!(Event::MeshDown { generation: 2, .. } | Event::MeshUp { generation: 3, .. }),
    );
    replace(
        &mut log,
        is!(Event::MeshTableAtEnd { node: 0, .. }),
        table(5000, 0, 1, Some(5001)),
    );
    replace(
        &mut log,
        is!(Event::MeshTableAtEnd { node: 1, .. }),
        table(5000, 1, 0, Some(5001)),
    );
    assert_clean(&ALL, &log, &context());
}

#[test]
fn m1_excuses_a_cross_dial_inside_a_partition_of_the_pair() {
    let log = vec![
        started(0, 0, 0),
        started(0, 1, 0),
        fault(500, MeshFaultApplied::Partition { a: 0, b: 1 }),
        fault(1000, MeshFaultApplied::CrossDial { a: 0, b: 1 }),
        fault(3000, MeshFaultApplied::Heal { a: 0, b: 1 }),
        up(3100, 0, 1, 1, 5000),
        up(3120, 1, 0, 1, 5000),
        table(5000, 0, 1, Some(5000)),
        table(5000, 1, 0, Some(5000)),
        end(5000),
    ];
    assert_clean(&ALL, &log, &context());
}

#[test]
fn m2_detects_a_link_whose_exit_never_arrived_and_that_was_never_broken() {
    let mut log = healthy();
    remove(
        &mut log,
        is!(Event::MeshArrived {
            msg: LinkMsg::Exit,
            ..
        }),
    );
    let found = broken(&log);
    assert_eq!(found, vec![Contract::M2], "{found:?}");
    // Unsettled on both ends: the maker's link, and the learner's LINK.
    let made = the(&log, is!(Event::MeshLinked { .. }));
    assert_violates_exactly(&log, &context(), Contract::M2, &[&made]);
    let learned = the(
        &log,
        is!(Event::MeshArrived {
            msg: LinkMsg::Link,
            ..
        }),
    );
    assert_violates_exactly(&log, &context(), Contract::M2, &[&learned]);
    // Either end's noconnection after a down would have settled it.
}

/// Node 1 took the insider's stream (socket 6000) for node 0 while its
/// slot was empty and made a link over it: no node reads that link's EXIT
/// and the insider keeps the generation live to the end, so M2 leaves it
/// unjudged. The same link over a node's stream stays unsettled: M2, and
/// so does an honest link of the same run.
#[test]
fn m2_leaves_a_link_over_an_insiders_stream_unjudged() {
    let over_6000 = |insider: bool| {
        let mut log = healthy();
        let the_end = is!(Event::MeshTableAtEnd { node: 0, .. });
        if insider {
            insert_before(&mut log, the_end, claim(1500, 6000));
        }
        insert_before(&mut log, the_end, down(1550, 1, 0, 1));
        insert_before(&mut log, the_end, up(1600, 1, 0, 2, 6000));
        let made = insert_before(&mut log, the_end, linked(1700, 1, 0, 2, 9));
        (log, made)
    };
    let (log, _) = over_6000(true);
    assert_holds(&log, &context(), Contract::M2);
    // The exemption is the socket's, not the run's: node 0's link over the
    // honest stream 5000, in the same run, stays judged once its EXIT is lost.
    let (mut log, _) = over_6000(true);
    remove(
        &mut log,
        is!(Event::MeshArrived {
            msg: LinkMsg::Exit,
            ..
        }),
    );
    let honest = the(&log, is!(Event::MeshLinked { generation: 1, .. }));
    assert_violates_exactly(&log, &context(), Contract::M2, &[&honest]);
    let (log, made) = over_6000(false);
    assert_violates_exactly(&log, &context(), Contract::M2, &[&made]);
}

#[test]
fn m2_detects_an_exit_arriving_over_another_socket_than_its_link() {
    let mut log = healthy();
    let exit = is!(Event::MeshArrived {
        msg: LinkMsg::Exit,
        ..
    });
    insert_before(&mut log, exit, up(250, 1, 0, 2, 5009));
    let elsewhere = replace(&mut log, exit, arrived(300, 1, 0, 2, 7, LinkMsg::Exit));
    let made = the(&log, is!(Event::MeshLinked { .. }));
    assert_violates(&log, &context(), Contract::M2, &[&made, &elsewhere]);
}

#[test]
fn m2_excuses_a_maker_that_crashed_but_not_the_learner() {
    // Node 0 links, then crashes: its own obligations end. Node 1 learned
    // the link and must still settle it.
    let mut log = vec![
        started(0, 0, 0),
        started(0, 1, 0),
        up(10, 0, 1, 1, 5000),
        up(20, 1, 0, 1, 5000),
        linked(100, 0, 1, 1, 7),
        arrived(120, 1, 0, 1, 7, LinkMsg::Link),
        fault(200, MeshFaultApplied::Crash { node: 0 }),
        down(1300, 1, 0, 1),
        noconnection(1300, 1, 0, 1, 7, LinkSide::Learner),
        fault(1500, MeshFaultApplied::Bounce { node: 0 }),
        started(1500, 0, 1),
        up(1600, 0, 1, 1, 5004),
        up(1620, 1, 0, 2, 5004),
        table(5000, 0, 1, Some(5004)),
        table(5000, 1, 0, Some(5004)),
        end(5000),
    ];
    assert_clean(&ALL, &log, &context());
    remove(&mut log, is!(Event::MeshNoConnection { .. })); // the learner's noconnection
    assert_eq!(broken(&log), vec![Contract::M2]);
    let learned = the(
        &log,
        is!(Event::MeshArrived {
            msg: LinkMsg::Link,
            ..
        }),
    );
    assert_violates_exactly(&log, &context(), Contract::M2, &[&learned]);
}

#[test]
fn m3_detects_a_noconnection_for_a_generation_that_never_went_down() {
    let mut log = healthy();
    let told = insert_before(
        &mut log,
        is!(Event::MeshArrived {
            msg: LinkMsg::Exit,
            ..
        }),
        noconnection(200, 0, 1, 1, 7, LinkSide::Maker),
    );
    assert_eq!(broken(&log), vec![Contract::M3]);
    // The noconnection alone: one delivered twice cites every delivery.
    assert_violates_exactly(&log, &context(), Contract::M3, &[&told]);
}

#[test]
fn m3_detects_a_noconnection_delivered_twice() {
    let mut log = healthy();
    remove(
        &mut log,
        is!(Event::MeshArrived {
            msg: LinkMsg::Exit,
            ..
        }),
    ); // no EXIT: the down settles it
    let tables = is!(Event::MeshTableAtEnd { node: 0, .. });
    insert_before(&mut log, tables, down(200, 0, 1, 1));
    let first = insert_before(
        &mut log,
        tables,
        noconnection(200, 0, 1, 1, 7, LinkSide::Maker),
    );
    let second = insert_before(
        &mut log,
        tables,
        noconnection(210, 0, 1, 1, 7, LinkSide::Maker),
    );
    // The table at the end now holds nothing for node 0: say so.
    replace(&mut log, tables, table(5000, 0, 1, None));
    let found = broken(&log);
    assert!(found.contains(&Contract::M3), "{found:?}");
    assert_violates(&log, &context(), Contract::M3, &[&first, &second]);
}

#[test]
fn m3_detects_a_noconnection_for_a_learned_link_its_exit_ended() {
    let mut log = healthy();
    let tables = is!(Event::MeshTableAtEnd { node: 1, .. });
    insert_before(&mut log, tables, down(400, 1, 0, 1));
    let told = insert_before(
        &mut log,
        tables,
        noconnection(410, 1, 0, 1, 7, LinkSide::Learner),
    );
    replace(&mut log, tables, table(5000, 1, 0, None));
    let exit = arrived(300, 1, 0, 1, 7, LinkMsg::Exit);
    let found = broken(&log);
    assert!(found.contains(&Contract::M3), "{found:?}");
    assert_violates(&log, &context(), Contract::M3, &[&exit, &told]);
}

#[test]
fn m4_detects_a_down_hook_fired_twice_for_one_generation() {
    let mut log = healthy();
    let tables = is!(Event::MeshTableAtEnd { node: 0, .. });
    let first = insert_before(&mut log, tables, down(400, 1, 0, 1));
    let second = insert_before(&mut log, tables, down(410, 1, 0, 1));
    assert_violates(&log, &context(), Contract::M4, &[&first, &second]);
}

#[test]
fn m4_detects_a_generation_that_vanished_without_a_down() {
    let mut log = healthy();
    // Node 1 registers a second generation; the first is neither live
    // at the end nor went down.
    insert_before(
        &mut log,
        is!(Event::MeshArrived {
            msg: LinkMsg::Exit,
            ..
        }),
        up(200, 1, 0, 2, 5001),
    );
    replace(
        &mut log,
        is!(Event::MeshTableAtEnd { node: 1, .. }),
        table(5000, 1, 0, Some(5001)),
    );
    let vanished = up_of(&log, 1, 1);
    // Its coming up alone (a down hook for a generation that never came
    // up cites the down).
    assert_violates_exactly(&log, &context(), Contract::M4, &[&vanished]);
}

#[test]
fn m5_detects_a_generation_that_outlives_a_tick_of_silence() {
    let squatter = vec![
        started(0, 0, 0),
        started(0, 1, 0),
        at(
            10,
            Event::MeshSquat {
                node: 1,
                claimed: 0,
                socket: socket(6000),
            },
        ),
        up(20, 1, 0, 1, 6000),
        // Down 1.5 s later: more than a tick plus slack.
        down(1520, 1, 0, 1),
        up(1600, 0, 1, 1, 5000),
        up(1620, 1, 0, 2, 5000),
        table(5000, 0, 1, Some(5000)),
        table(5000, 1, 0, Some(5000)),
        end(5000),
    ];
    assert_eq!(broken(&squatter), vec![Contract::M5]);
    let squat = the(&squatter, is!(Event::MeshSquat { .. }));
    assert_violates(
        &squatter,
        &context(),
        Contract::M5,
        &[&up_of(&squatter, 1, 1), &squat],
    );
    let mut mended = squatter.clone();
    replace(
        &mut mended,
        is!(Event::MeshDown { .. }),
        down(1020, 1, 0, 1),
    );
    assert_clean(&ALL, &mended, &context());
}

#[test]
fn m5_detects_a_half_open_generation_and_excuses_a_short_silence() {
    let log = |heal: u64, down_at: u64| {
        vec![
            started(0, 0, 0),
            started(0, 1, 0),
            up(10, 0, 1, 1, 5000),
            up(20, 1, 0, 1, 5000),
            fault(1000, MeshFaultApplied::HalfOpen { from: 0, to: 1 }),
            fault(heal, MeshFaultApplied::HalfOpenHealed { from: 0, to: 1 }),
            down(down_at, 1, 0, 1),
            down(down_at + 20, 0, 1, 1),
            up(4000, 0, 1, 2, 5001),
            up(4020, 1, 0, 2, 5001),
            table(5000, 0, 1, Some(5001)),
            table(5000, 1, 0, Some(5001)),
            end(5000),
        ]
    };
    // Silent from 1 s to 3 s; node 1 noticed only at 2.5 s.
    let late = log(3000, 2500);
    assert_eq!(broken(&late), vec![Contract::M5]);
    let half_open = the_fault(&late, |f| matches!(f, MeshFaultApplied::HalfOpen { .. }));
    assert_violates(
        &late,
        &context(),
        Contract::M5,
        &[&up_of(&late, 1, 1), &half_open],
    );
    // Noticed within the tick plus slack.
    assert_clean(&ALL, &log(3000, 2050), &context());
    // The silence was shorter than a tick: nothing had to notice.
    assert_clean(&ALL, &log(1500, 3500), &context());
}

/// Found by CI's mesh hunt (`hunt --world mesh --seed 1`, case 246):
/// node 1 registered an insider's stream (socket 6000) for node 0 while
/// segments from node 0 to node 1 were dropped. The insider writes its
/// keepalives from a host of its own: the half-open pair does not silence
/// its stream, so M5 holds it to nothing. The same generation over node
/// 0's own stream is silenced and must go down: M5.
#[test]
fn m5_leaves_an_insiders_stream_to_its_own_silence() {
    let log = |insider: bool| {
        let mut log = vec![
            started(0, 0, 0),
            started(0, 1, 0),
            up(10, 0, 1, 1, 5000),
            up(20, 1, 0, 1, 5000),
            fault(500, MeshFaultApplied::HalfOpen { from: 0, to: 1 }),
            down(1600, 1, 0, 1),
        ];
        if insider {
            log.push(claim(1750, 6000));
        }
        log.extend([
            up(1800, 1, 0, 2, 6000),
            fault(4500, MeshFaultApplied::HalfOpenHealed { from: 0, to: 1 }),
            end(5000),
        ]);
        log
    };
    assert_holds(&log(true), &context(), Contract::M5);
    let own = log(false);
    assert_violates(&own, &context(), Contract::M5, &[&up_of(&own, 1, 2)]);
    // The exemption is the socket's, not the run's: node 0's own generation
    // 1, silenced in the same run and left up, is still judged.
    let mut late = log(true);
    remove(&mut late, is!(Event::MeshDown { generation: 1, .. }));
    assert_violates(&late, &context(), Contract::M5, &[&up_of(&late, 1, 1)]);
}

/// Found by the hunt (`hunt --world mesh --seed 7 --unguided`, 5 of 40,000
/// cases): node 0 read node 1 slowly when node 1 crashed, and drained the
/// keepalives node 1 had written before its crash for half a second after
/// it. Its generation heard them, so its heartbeat rightly stayed quiet;
/// the silence starts when the backlog is read, at the slow fault's end.
/// A wedged reader (and a partition, whose held segments arrive on heal)
/// delays them until it ends, and latency by its extra delay. None excuses
/// a down later than a tick after that, nor does a hold the other way.
#[test]
fn m5_detects_a_silent_generation_left_up_but_not_a_backlog_still_draining() {
    let log = |lag: Option<MeshFaultApplied>, lag_end: Option<MeshFaultApplied>, down_at: u64| {
        let mut log = vec![
            started(0, 0, 0),
            started(0, 1, 0),
            up(10, 0, 1, 1, 5000),
            up(20, 1, 0, 1, 5000),
        ];
        log.extend(lag.map(|lag| fault(500, lag)));
        log.push(fault(1000, MeshFaultApplied::Crash { node: 1 }));
        log.extend(lag_end.map(|end| fault(2000, end)));
        log.extend([down(down_at, 0, 1, 1), table(5000, 0, 1, None), end(5000)]);
        log.sort_by_key(|record| record.at);
        log
    };
    // Node 0's generation, left up after node 1's crash: M5 cites its
    // coming up and its late down.
    let left_up = |log: &[Record]| {
        assert_eq!(broken(log), vec![Contract::M5]);
        let late = the(log, is!(Event::MeshDown { node: 0, .. }));
        assert_violates(log, &context(), Contract::M5, &[&up_of(log, 0, 1), &late]);
    };
    let slow = |node, peer| MeshFaultApplied::Slow {
        node,
        peer,
        every_us: 62_500,
    };
    let slow_end = |node, peer| MeshFaultApplied::SlowEnd { node, peer };
    // Crashed at 1 s, noticed at 2.5 s: over the 1.14 s tick plus slack.
    left_up(&log(None, None, 2500));
    // Node 0 read node 1 slowly until 2 s: heard until then.
    let draining = log(Some(slow(0, 1)), Some(slow_end(0, 1)), 2500);
    assert_clean(&ALL, &draining, &context());
    // ... but not for a tick after the backlog ended.
    left_up(&log(Some(slow(0, 1)), Some(slow_end(0, 1)), 3500));
    // A slow read the other way delays nothing node 0 hears.
    left_up(&log(Some(slow(1, 0)), Some(slow_end(1, 0)), 2500));
    // A wedged reader reads the backlog when it is unwedged, as a slow one
    // does; the other way, it delays nothing node 0 hears.
    let wedge = |node, peer| MeshFaultApplied::Wedge { node, peer };
    let unwedge = |node, peer| MeshFaultApplied::Unwedge { node, peer };
    assert_clean(
        &ALL,
        &log(Some(wedge(0, 1)), Some(unwedge(0, 1)), 2500),
        &context(),
    );
    left_up(&log(Some(wedge(0, 1)), Some(unwedge(0, 1)), 3500));
    left_up(&log(Some(wedge(1, 0)), Some(unwedge(1, 0)), 2500));
    // 200 ms more latency: the last bytes land at 1.2 s.
    let latency = MeshFaultApplied::Latency {
        a: 0,
        b: 1,
        us: 200_000,
    };
    let latency_end = MeshFaultApplied::LatencyEnd { a: 0, b: 1 };
    left_up(&log(None, None, 2300));
    let lagged = log(Some(latency), Some(latency_end), 2300);
    assert_clean(&ALL, &lagged, &context());
}

/// Found by the hunt (both are regression scenarios): a cross-dial during
/// latency no dial can cross in time, or while one of the pair is crashed,
/// cannot converge; the tie-break is not to blame. A fault on another pair
/// excuses nothing.
#[test]
fn m1_excuses_a_cross_dial_under_latency_or_while_a_node_is_down_but_not_elsewhere() {
    let unconverged = |faults: Vec<Record>| {
        let mut log = vec![started(0, 0, 0), started(0, 1, 0), started(0, 2, 0)];
        log.extend(faults);
        log.extend([
            fault(1000, MeshFaultApplied::CrossDial { a: 0, b: 1 }),
            up(3000, 0, 1, 1, 5000),
            up(3020, 1, 0, 1, 5000),
            table(5000, 0, 1, Some(5000)),
            table(5000, 1, 0, Some(5000)),
            end(5000),
        ]);
        log
    };
    let latency = vec![
        fault(
            0,
            MeshFaultApplied::Latency {
                a: 1,
                b: 0,
                us: 110_000,
            },
        ),
        fault(2500, MeshFaultApplied::LatencyEnd { a: 1, b: 0 }),
    ];
    assert_clean(&ALL, &unconverged(latency), &context());
    let crashed = vec![fault(300, MeshFaultApplied::Crash { node: 1 })];
    assert_holds(&unconverged(crashed), &context(), Contract::M1);
    let elsewhere = vec![
        fault(
            0,
            MeshFaultApplied::Latency {
                a: 2,
                b: 0,
                us: 110_000,
            },
        ),
        fault(2500, MeshFaultApplied::LatencyEnd { a: 2, b: 0 }),
    ];
    let log = unconverged(elsewhere);
    assert_eq!(broken(&log), vec![Contract::M1]);
    assert_violates(&log, &context(), Contract::M1, &[&cross_dial(&log)]);
}

fn data(ms: u64, node: u64, peer: u64, generation: u64, seq: u64) -> Record {
    at(
        ms,
        Event::MeshDataArrived {
            node,
            peer,
            generation,
            seq,
        },
    )
}

/// A frame delivered that no node wrote (an empty one, as a keepalive
/// handed over as a frame would be): M6, citing it alone.
#[test]
fn m6_detects_a_frame_no_node_wrote() {
    let mut log = healthy();
    let tables = is!(Event::MeshTableAtEnd { node: 0, .. });
    let stray = insert_before(
        &mut log,
        tables,
        at(
            450,
            Event::MeshStrayFrame {
                node: 1,
                peer: 0,
                generation: 1,
                control_len: 0,
                payload_len: 0,
            },
        ),
    );
    assert_violates_exactly(&log, &context(), Contract::M6, &[&stray]);
}

/// Out of order, and twice: both cite the two arrivals of a pair, so a
/// frame read twice in a row on one generation is both (two violations
/// cite the pair), and two frames swapped are the first alone (one does).
#[test]
fn m6_detects_data_out_of_order_on_one_generation_and_a_frame_arriving_twice() {
    let with = |first: Record, second: Record| {
        let mut log = healthy();
        let tables = is!(Event::MeshTableAtEnd { node: 0, .. });
        insert_before(&mut log, tables, first);
        insert_before(&mut log, tables, second);
        log
    };
    let m6_citing = |log: &[Record], first: &Record, second: &Record| {
        assert_eq!(broken(log), vec![Contract::M6]);
        citing(log, &context(), Contract::M6, &[first, second])
            .into_iter()
            .filter(|v| v.evidence.len() == 2)
            .count()
    };
    // In order on one generation; a later frame on a new generation
    // after an earlier one on the old is fine (a redial re-resolves data).
    assert_clean(
        &ALL,
        &with(data(400, 1, 0, 1, 1), data(410, 1, 0, 1, 2)),
        &context(),
    );
    let (two, one) = (data(400, 1, 0, 1, 2), data(410, 1, 0, 1, 1));
    let swapped = with(two.clone(), one.clone());
    assert_eq!(m6_citing(&swapped, &two, &one), 1, "out of order");
    let (once, again) = (data(400, 1, 0, 1, 1), data(410, 1, 0, 1, 1));
    let twice = with(once.clone(), again.clone());
    assert_eq!(
        m6_citing(&twice, &once, &again),
        2,
        "out of order, and arrived twice"
    );
}

#[test]
fn m1_detects_both_ends_of_a_socket_claiming_to_have_dialed_it() {
    let mut log = healthy();
    let dialed = replace(
        &mut log,
        is!(Event::MeshUp { node: 1, .. }),
        at(
            20,
            Event::MeshUp {
                node: 1,
                peer: 0,
                generation: 1,
                origin: Side::Dialed,
                socket: socket(5000),
            },
        ),
    );
    assert_violates(
        &log,
        &context(),
        Contract::M1,
        &[&up_of(&log, 0, 1), &dialed],
    );
    assert_holds(&healthy(), &context(), Contract::M1);
}

fn probe(ms: u64, node: u64, accepted: bool) -> Record {
    at(
        ms,
        Event::MeshProbe {
            node,
            accepted,
            attempts: 3,
        },
    )
}

#[test]
fn m7_detects_a_node_that_no_longer_accepts_a_fresh_stream() {
    let mut log = healthy();
    let the_end = is!(Event::RunEnd { .. });
    insert_before(&mut log, the_end, probe(4900, 0, true));
    insert_before(&mut log, the_end, probe(4900, 1, true));
    assert_clean(&ALL, &log, &context());
    let refused = replace(
        &mut log,
        is!(Event::MeshProbe { node: 1, .. }),
        probe(4900, 1, false),
    );
    assert_only(&ALL, &log, &context(), &[(Contract::M7, &[&refused])]);
}

/// `healthy()` with node 1 flooded for 3 s from 500 ms (its streams saying
/// hello first if `hello`), and where the fault went.
fn flooded(hello: bool) -> (Vec<Record>, impl Fn(&Event) -> bool + Copy) {
    let mut log = healthy();
    let linked = is!(Event::MeshLinked { .. });
    insert_before(
        &mut log,
        linked,
        fault(
            500,
            MeshFaultApplied::Flood {
                node: 1,
                us: 3_000_000,
                hosts: 1,
                hello,
            },
        ),
    );
    (log, linked)
}

/// While one address floods node 1 with half-open handshakes, the prober
/// dials it from another, one dial after another: every one accepted is a
/// node that keeps its door for others (M7); one not accepted, a node the
/// flood shut.
#[test]
fn m7_detects_honest_dials_kept_out_during_a_flood() {
    let flood_probe = |accepted: u64| {
        at(
            3000,
            Event::MeshFloodProbe {
                node: 1,
                dials: 12,
                accepted,
            },
        )
    };
    let (mut log, _) = flooded(false);
    let the_end = is!(Event::RunEnd { .. });
    insert_before(&mut log, the_end, flood_probe(12));
    assert_clean(&ALL, &log, &context());
    let kept_out = replace(&mut log, is!(Event::MeshFloodProbe { .. }), flood_probe(11));
    assert_only(&ALL, &log, &context(), &[(Contract::M7, &[&kept_out])]);
}

/// A node told its descriptor limit that still runs out of descriptors
/// (a dial or an accept failing with EMFILE from the world's table) breaks
/// M7, citing the record; a target that declares it does not fit the
/// limit is not judged on it (its other clauses still are).
#[test]
fn m7_detects_a_node_running_out_of_the_descriptors_it_was_told() {
    let mut log = healthy();
    assert_clean(&ALL, &log, &context());
    let out = at(
        2500,
        Event::MeshDescriptorsOut {
            node: 1,
            open: 90,
            limit: 96,
        },
    );
    insert_before(&mut log, is!(Event::RunEnd { .. }), out.clone());
    assert_only(&ALL, &log, &context(), &[(Contract::M7, &[&out])]);
    let mut undeclared = context();
    undeclared.reported.descriptors = false;
    assert_clean(&ALL, &log, &undeclared);
}

/// A flood of streams that say hello and then nothing: a node whose
/// handshake has a deadline on every step closes each within twice the
/// connect timeout and slack (1.14 s here); one that waits for the proof
/// with no deadline holds them until the flood ends (M7). During a fault
/// on the node's accepts, streams wait unaccepted: not judged.
#[test]
fn m7_detects_a_half_open_handshake_held_past_its_deadline() {
    let held = |longest_ms: u64| {
        at(
            3500,
            Event::MeshFloodHeld {
                node: 1,
                us: 3_000_000,
                hello: true,
                streams: 900,
                longest_us: longest_ms * 1000,
                open_at_end: 320,
            },
        )
    };
    let (mut log, linked) = flooded(true);
    let the_end = is!(Event::RunEnd { .. });
    insert_before(&mut log, the_end, held(1_100));
    assert_clean(&ALL, &log, &context());
    let kept = replace(&mut log, is!(Event::MeshFloodHeld { .. }), held(1_150));
    assert_only(&ALL, &log, &context(), &[(Contract::M7, &[&kept])]);
    let kept = replace(&mut log, is!(Event::MeshFloodHeld { .. }), held(2_990));
    assert_only(&ALL, &log, &context(), &[(Contract::M7, &[&kept])]);
    // Another node out of descriptors meanwhile excuses nothing.
    let mut other = log.clone();
    insert_before(
        &mut other,
        linked,
        fault(2000, MeshFaultApplied::Exhaust { node: 0 }),
    );
    assert_violates(&other, &context(), Contract::M7, &[&kept]);
    // Node 1 out of descriptors from 2 s to 2.5 s of the flood: excused.
    insert_before(
        &mut log,
        linked,
        fault(2000, MeshFaultApplied::Exhaust { node: 1 }),
    );
    insert_before(
        &mut log,
        linked,
        fault(
            2500,
            MeshFaultApplied::ExhaustEnd {
                node: 1,
                accepts: 3,
                dials: 0,
            },
        ),
    );
    assert_holds(&log, &context(), Contract::M7);
}

#[test]
fn m1_excuses_a_cross_dial_while_either_end_is_out_of_descriptors() {
    // Node 1 cannot accept or dial from 500 ms to 3 s: the cross-dial at
    // 1 s cannot converge in its round trips, and is not held to it.
    let log = |exhausted: bool| {
        let mut log = vec![
            started(0, 0, 0),
            started(0, 1, 0),
            up(10, 0, 1, 1, 5000),
            up(20, 1, 0, 1, 5000),
            fault(1000, MeshFaultApplied::CrossDial { a: 0, b: 1 }),
            down(1000, 0, 1, 1),
            down(1000, 1, 0, 1),
            up(3500, 0, 1, 2, 5003),
            up(3520, 1, 0, 2, 5003),
            table(5000, 0, 1, Some(5003)),
            table(5000, 1, 0, Some(5003)),
            end(5000),
        ];
        if exhausted {
            insert_in_time(&mut log, fault(500, MeshFaultApplied::Exhaust { node: 1 }));
            insert_in_time(
                &mut log,
                fault(
                    3000,
                    MeshFaultApplied::ExhaustEnd {
                        node: 1,
                        accepts: 9,
                        dials: 4,
                    },
                ),
            );
        }
        log
    };
    let held = log(false);
    assert_eq!(broken(&held), vec![Contract::M1]);
    assert_violates(&held, &context(), Contract::M1, &[&cross_dial(&held)]);
    assert_clean(&ALL, &log(true), &context());
}

#[test]
fn m7_detects_a_node_that_spins_on_emfile() {
    let log = |accepts: u64| {
        let mut log = healthy();
        let linked = is!(Event::MeshLinked { .. });
        insert_before(
            &mut log,
            linked,
            fault(500, MeshFaultApplied::Exhaust { node: 1 }),
        );
        let ended = insert_before(
            &mut log,
            linked,
            fault(
                2000,
                MeshFaultApplied::ExhaustEnd {
                    node: 1,
                    accepts,
                    dials: 0,
                },
            ),
        );
        (log, ended)
    };
    // 1.5 s: a back-off makes about 12, a 50 ms pause 30; 54 are allowed.
    assert_clean(&ALL, &log(14).0, &context());
    assert_clean(&ALL, &log(54).0, &context());
    for spun in [55, 1500] {
        let (log, ended) = log(spun);
        assert_only(&ALL, &log, &context(), &[(Contract::M7, &[&ended])]);
    }
}

fn impostor(ms: u64, port: u16, read: u64) -> Record {
    at(
        ms,
        Event::MeshImpostor {
            node: 1,
            claimed: 0,
            socket: socket(port),
            read,
            closed: true,
        },
    )
}

#[test]
fn m8_detects_an_impostor_registered_or_written_to() {
    let mut log = healthy();
    insert_before(&mut log, is!(Event::RunEnd { .. }), impostor(2000, 6000, 0));
    assert_clean(&ALL, &log, &context()); // refused at once
                                          // Written to after the challenge: the node let it in.
    let impostors = is!(Event::MeshImpostor { .. });
    let answered = replace(&mut log, impostors, impostor(2000, 6000, 12));
    assert_only(&ALL, &log, &context(), &[(Contract::M8, &[&answered])]);
    // Registered on its socket, even with nothing written.
    let silent = replace(&mut log, impostors, impostor(2000, 6000, 0));
    let registered = insert_before(&mut log, impostors, up(1900, 1, 0, 2, 6000));
    insert_before(&mut log, impostors, down(1950, 1, 0, 2));
    assert_violates(&log, &context(), Contract::M8, &[&registered, &silent]);
}

/// Node 1 registers a generation under its own name (its peer is node 1):
/// M8, whatever else the run shows.
#[test]
fn m8_detects_a_node_registering_its_own_name() {
    let mut log = healthy();
    let the_end = is!(Event::MeshTableAtEnd { node: 0, .. });
    let registered = insert_before(&mut log, the_end, up(1600, 1, 1, 1, 6000));
    insert_before(&mut log, the_end, down(1700, 1, 1, 1));
    assert_violates_exactly(&log, &context(), Contract::M8, &[&registered]);
}

/// The insider proved itself to node 1 as node 0 from `port`.
fn claim(ms: u64, port: u16) -> Record {
    at(
        ms,
        Event::MeshClaim {
            node: 1,
            claimed: 0,
            socket: socket(port),
        },
    )
}

/// Node 1 holds node 0's generation 1 (socket 5000); an insider claiming
/// node 0 is registered at node 1 while it lives (the claim displaced
/// it): M8. The same stream registered once generation 1 is down takes an
/// empty slot, which M8 allows.
#[test]
fn m8_detects_an_insider_displacing_a_live_generation() {
    let with_insider = |after_down: bool| {
        let mut log = healthy();
        let the_end = is!(Event::MeshTableAtEnd { node: 0, .. });
        let claimed = insert_before(&mut log, the_end, claim(1500, 6000));
        if after_down {
            insert_before(&mut log, the_end, down(1550, 1, 0, 1));
        }
        let registered = insert_before(&mut log, the_end, up(1600, 1, 0, 2, 6000));
        if !after_down {
            insert_before(&mut log, the_end, down(1610, 1, 0, 1));
        }
        insert_before(&mut log, the_end, down(1700, 1, 0, 2));
        (log, claimed, registered)
    };
    let (log, claimed, registered) = with_insider(false);
    assert_violates_exactly(&log, &context(), Contract::M8, &[&claimed, &registered]);
    // An insider that took an empty slot displaced nothing.
    let (log, _, _) = with_insider(true);
    assert_holds(&log, &context(), Contract::M8);
}

/// The insider claims node 0's name at node 1 while node 1 holds node 0's
/// generation 1 (socket 5000); node 1's owner disconnects generation 1;
/// the insider's stream is then registered: it undid the manual
/// disconnect (M8). Generation 1 going down otherwise (the silence of a
/// stale incumbent) lets the stream take the empty slot: M8 holds.
#[test]
fn m8_detects_a_claim_undoing_a_manual_disconnect() {
    let after_at = |reason: DownReason, cut_ms: u64| {
        let mut log = healthy();
        let the_end = is!(Event::MeshTableAtEnd { node: 0, .. });
        let claimed = insert_before(&mut log, the_end, claim(1500, 6000));
        let cut = insert_before(
            &mut log,
            the_end,
            at(
                cut_ms,
                Event::MeshDown {
                    node: 1,
                    peer: 0,
                    generation: 1,
                    reason,
                },
            ),
        );
        let registered = insert_before(&mut log, the_end, up(1800, 1, 0, 2, 6000));
        insert_before(&mut log, the_end, down(1900, 1, 0, 2));
        (log, [claimed, cut, registered])
    };
    let after = |reason| after_at(reason, 1700);
    let (log, [claimed, cut, registered]) = after(DownReason::ManualDisconnect);
    assert_violates_exactly(
        &log,
        &context(),
        Contract::M8,
        &[&claimed, &cut, &registered],
    );
    let (log, _) = after(DownReason::HeartbeatTimeout);
    assert_holds(&log, &context(), Contract::M8);
    // A disconnect 10 ms after the insider wrote its proof: the node may
    // read the claim only after it, at an empty slot (found by a mesh
    // hunt, case 1068). Within a one-way delay and four ticks: not judged.
    let (log, _) = after_at(DownReason::ManualDisconnect, 1510);
    assert_holds(&log, &context(), Contract::M8);
}

/// Node 0 misdials node 1 where node 2 answers, and its `dial` returns:
/// a connection to the host that answered breaks M8 (the name check let
/// another node in under the name dialed); a refusal, or a connection that
/// reached node 1 meanwhile, does not.
#[test]
fn m8_detects_a_misdialed_connection_registered() {
    let misdialed = |outcome: MisdialOutcome| {
        let mut log = healthy();
        let the_end = is!(Event::MeshTableAtEnd { node: 0, .. });
        let ended = insert_before(
            &mut log,
            the_end,
            at(
                1500,
                Event::MeshMisdialed {
                    node: 0,
                    named: 1,
                    answerer: Some(2),
                    outcome,
                },
            ),
        );
        (log, ended)
    };
    let (log, registered) = misdialed(MisdialOutcome::Registered);
    assert_violates_exactly(&log, &context(), Contract::M8, &[&registered]);
    for outcome in [MisdialOutcome::Refused, MisdialOutcome::Elsewhere] {
        let (log, _) = misdialed(outcome);
        assert_holds(&log, &context(), Contract::M8);
    }
}

/// The stranger (no cookie) answered node 0's misdial of node 1 and read
/// what node 0 wrote after its challenge: any byte (a proof written before
/// the stranger's proof was checked) breaks M8; none does not.
#[test]
fn m8_detects_a_proof_written_to_a_stranger() {
    let read = |wrote: u64| {
        let mut log = healthy();
        let the_end = is!(Event::MeshTableAtEnd { node: 0, .. });
        let ended = insert_before(
            &mut log,
            the_end,
            at(
                1500,
                Event::MeshStranger {
                    node: 0,
                    named: 1,
                    socket: socket(7000),
                    wrote,
                },
            ),
        );
        (log, ended)
    };
    let (log, wrote) = read(53);
    assert_violates_exactly(&log, &context(), Contract::M8, &[&wrote]);
    let (log, _) = read(0);
    assert_holds(&log, &context(), Contract::M8);
}

/// At the end node 1 holds the insider's stream for node 0 and node 0
/// holds nothing for node 1: the insider held the name against its owner
/// (M1) where node 1 had dialed node 0 (so knew the owner's host); a node
/// that never dialed the name cannot tell the owner from the insider, and
/// the pair is not held to agreeing. Nor can one that dialed it only in an
/// earlier life: a restarted node remembers no dial (the mesh hunt's case
/// 1978 of seed 1: `regressions/mesh_squat_after_a_restart.toml`).
#[test]
fn m1_detects_an_insider_holding_a_name_its_holder_dialed() {
    #[derive(Clone, Copy, PartialEq)]
    enum Before {
        Never,
        Dialed,
        DialedThenRestarted,
    }
    let ending_with_insider = |before: Before| {
        let mut log = healthy();
        let the_end = is!(Event::MeshTableAtEnd { node: 0, .. });
        if before != Before::Never {
            insert_before(
                &mut log,
                the_end,
                at(
                    500,
                    Event::MeshUp {
                        node: 1,
                        peer: 0,
                        generation: 2,
                        origin: Side::Dialed,
                        socket: socket(5100),
                    },
                ),
            );
            insert_before(&mut log, the_end, down(600, 1, 0, 2));
        }
        insert_before(&mut log, the_end, down(1000, 1, 0, 1));
        insert_before(&mut log, the_end, down(1000, 0, 1, 1));
        if before == Before::DialedThenRestarted {
            insert_before(
                &mut log,
                the_end,
                fault(1100, MeshFaultApplied::Crash { node: 1 }),
            );
            insert_before(
                &mut log,
                the_end,
                fault(1200, MeshFaultApplied::Bounce { node: 1 }),
            );
            insert_before(&mut log, the_end, started(1200, 1, 1));
        }
        insert_before(&mut log, the_end, claim(1500, 6000));
        insert_before(&mut log, the_end, up(1600, 1, 0, 3, 6000));
        let ours = replace(
            &mut log,
            is!(Event::MeshTableAtEnd { node: 0, .. }),
            table(5000, 0, 1, None),
        );
        let theirs = replace(
            &mut log,
            is!(Event::MeshTableAtEnd { node: 1, .. }),
            table(5000, 1, 0, Some(6000)),
        );
        (log, ours, theirs)
    };
    let (log, ours, theirs) = ending_with_insider(Before::Dialed);
    assert_violates_exactly(&log, &context(), Contract::M1, &[&ours, &theirs]);
    // Node 1 never dialed node 0: it cannot tell the owner from the
    // insider, and M1 does not hold it to.
    let (log, _, _) = ending_with_insider(Before::Never);
    assert_holds(&log, &context(), Contract::M1);
    // Node 1 dialed node 0 before it restarted: its new life knows no dial.
    let (log, _, _) = ending_with_insider(Before::DialedThenRestarted);
    assert_holds(&log, &context(), Contract::M1);
}

fn over_budget(ms: u64, node: u64, peer: u64, generation: u64) -> Record {
    down_for(ms, node, peer, generation, DownReason::OverBudget)
}

fn down_for(ms: u64, node: u64, peer: u64, generation: u64, reason: DownReason) -> Record {
    at(
        ms,
        Event::MeshDown {
            node,
            peer,
            generation,
            reason,
        },
    )
}

/// An honest node writes each frame whole, so the frame deadline never
/// runs out on it: a FrameTimeout down of a node's generation is the
/// deadline counting the quiet wait for a header (M9). A host that is no
/// node may be cut; and a deadline below the tick in a run that held
/// frames (a partition) excuses it.
#[test]
fn m9_detects_an_honest_node_downed_for_the_frame_deadline() {
    let honest = |fault: Option<Record>| {
        let mut log = healthy();
        let timed_out = insert_before(
            &mut log,
            is!(Event::MeshTableAtEnd { node: 0, .. }),
            down_for(1100, 1, 0, 1, DownReason::FrameTimeout),
        );
        if let Some(fault) = fault {
            insert_before(&mut log, is!(Event::MeshUp { node: 0, .. }), fault);
        }
        (log, timed_out)
    };
    let (log, timed_out) = honest(None);
    assert_only(
        &[Contract::M9],
        &log,
        &context(),
        &[(Contract::M9, &[&timed_out])],
    );
    // A trickler (no node: u64::MAX) cut at the deadline: as it should be.
    let mut log = healthy();
    let the_end = is!(Event::RunEnd { .. });
    insert_before(&mut log, the_end, up(1000, 1, u64::MAX, 1, 7000));
    insert_before(
        &mut log,
        the_end,
        down_for(1100, 1, u64::MAX, 1, DownReason::FrameTimeout),
    );
    assert_clean(&ALL, &log, &context());
    // A 250 ms deadline under a 1 s tick: a partition may hold an honest
    // frame past it, so that run excuses the down; a run without one
    // does not.
    let short = CheckContext {
        frame_timeout: Some(Duration::from_millis(250)),
        ..context()
    };
    let partition = fault(500, MeshFaultApplied::Partition { a: 0, b: 1 });
    let (log, _) = honest(Some(partition));
    assert_holds(&log, &short, Contract::M9);
    let (log, timed_out) = honest(None);
    assert_violates(&log, &short, Contract::M9, &[&timed_out]);
    // At the default deadline (two ticks) a partition is the silence
    // clock's first: the down is not excused.
    let partition = fault(500, MeshFaultApplied::Partition { a: 0, b: 1 });
    let (log, timed_out) = honest(Some(partition));
    assert_violates(&log, &context(), Contract::M9, &[&timed_out]);
}

#[test]
fn m9_detects_an_honest_node_downed_for_the_budget_but_not_a_spender() {
    let mut log = healthy();
    let the_end = is!(Event::RunEnd { .. });
    // A spender (a host that is no node: u64::MAX) refused: as it should be.
    insert_before(&mut log, the_end, up(1000, 1, u64::MAX, 1, 7000));
    insert_before(&mut log, the_end, over_budget(1100, 1, u64::MAX, 1));
    assert_clean(&ALL, &log, &context());
    // Node 0's generation on node 1 refused for the budget.
    let mut log = healthy();
    let refused = insert_before(
        &mut log,
        is!(Event::MeshTableAtEnd { node: 0, .. }),
        over_budget(1100, 1, 0, 1),
    );
    assert_only(
        &[Contract::M9],
        &log,
        &context(),
        &[(Contract::M9, &[&refused])],
    );
}

fn trickle(ms: u64, node: u64, held_ms: u64, closed: bool) -> Record {
    at(
        ms,
        Event::MeshTrickle {
            node,
            socket: socket(8000),
            sent: held_ms / 250,
            held_us: held_ms * 1_000,
            closed,
        },
    )
}

#[test]
fn m9_detects_a_frame_trickled_past_the_deadline_but_excuses_a_crash() {
    // Heartbeat 1 s, tick 10 ms: the frame deadline is 2 s and its bound
    // 2 s + 200 ms + 40 ms.
    let with = |record: Record| {
        let mut log = healthy();
        // The node's down of the trickler, FrameTimeout (see
        // `m9_detects_a_trickle_cut_without_its_frame_timeout_down`).
        let down = Event::MeshIntruderDown {
            node: 1,
            intruder: Intruder::Trickler,
            reason: DownReason::FrameTimeout,
        };
        insert_before(&mut log, is!(Event::RunEnd { .. }), at(3_100, down));
        insert_before(&mut log, is!(Event::RunEnd { .. }), record);
        log
    };
    assert_clean(&ALL, &with(trickle(3_200, 1, 2_200, true)), &context());
    assert_clean(&ALL, &with(trickle(3_240, 1, 2_240, true)), &context());
    // Cut, but late; and never cut.
    for late in [
        trickle(3_300, 1, 2_300, true),
        trickle(5_000, 1, 4_000, false),
    ] {
        assert_only(
            &ALL,
            &with(late.clone()),
            &context(),
            &[(Contract::M9, &[&late])],
        );
    }
    // Node 1 crashed while the frame trickled in: its streams died with
    // its host, whatever the trickler saw of them.
    let mut log = with(trickle(5_000, 1, 4_000, false));
    let first_up = is!(Event::MeshUp { node: 0, .. });
    insert_before(
        &mut log,
        first_up,
        fault(1_500, MeshFaultApplied::Crash { node: 1 }),
    );
    insert_before(
        &mut log,
        first_up,
        fault(1_600, MeshFaultApplied::Bounce { node: 1 }),
    );
    assert_clean(&[Contract::M9], &log, &context()); // a crash is excused
}

#[test]
fn m1_allows_a_redial_when_both_dials_time_out_on_a_healthy_link() {
    // A 100 ms connect timeout is shorter than a dial's two round trips at
    // turmoil's largest latency: both first dials at 100 ms can time out
    // with nothing wrong, and the redial (200 ms later) settles the pair
    // at 650 ms, past the 540 ms a dial's own round trips allow.
    let short = CheckContext {
        connect_timeout: Duration::from_millis(100),
        redial: Some((Duration::from_millis(200), Duration::from_millis(100))),
        ..context()
    };
    let timed_out = |ms: u64, node: u64, peer: u64, error: DialFailure| {
        at(ms, Event::MeshDialFailed { node, peer, error })
    };
    let log = |registered_first: bool| {
        let mut log = vec![
            started(0, 0, 0),
            started(0, 1, 0),
            at(100, Event::MeshDialedTogether { a: 0, b: 1 }),
        ];
        if registered_first {
            // Node 0's dial registered, and then the pair lost it: the
            // tie-break's business, held to the dials' own round trips.
            log.push(up(180, 0, 1, 1, 5000));
            log.push(down(190, 0, 1, 1));
        }
        log.push(timed_out(200, 1, 0, DialFailure::Timeout));
        log.extend([
            up(640, 0, 1, 2, 5001),
            up(650, 1, 0, 1, 5001),
            table(5000, 0, 1, Some(5001)),
            table(5000, 1, 0, Some(5001)),
            end(5000),
        ]);
        log
    };
    // Held to converging: M1 cites the dials made together.
    let unconverged = |log: &[Record], context: &CheckContext| {
        let together = the(log, is!(Event::MeshDialedTogether { .. }));
        assert_violates(log, context, Contract::M1, &[&together]);
    };
    assert_holds(&log(false), &short, Contract::M1); // a dial timed out
    unconverged(&log(true), &short); // one registered
                                     // Refused, not timed out: the pair's own doing.
    let mut refused = log(false);
    edit_all(&mut refused, is!(Event::MeshDialFailed { .. }), |r| {
        if let Event::MeshDialFailed { error, .. } = &mut r.event {
            *error = DialFailure::Unauthenticated;
        }
    });
    unconverged(&refused, &short);
    // With a connect timeout a dial always fits, no redial is allowed.
    let long = CheckContext {
        connect_timeout: Duration::from_millis(500),
        redial: Some((Duration::from_millis(200), Duration::from_millis(500))),
        ..context()
    };
    // The same, 400 ms later: past 500 ms + 440 ms.
    let mut late = log(false);
    edit_all(&mut late, is!(Event::MeshUp { .. }), |r| {
        r.at += Duration::from_millis(400);
    });
    unconverged(&late, &long);
}

fn held(ms: u64, node: u64, over: bool, bytes: u64) -> Record {
    at(ms, Event::MeshHeld { node, over, bytes })
}

/// A node may hold more of unfinished frames than its budget only for an
/// eviction's instant (four simulation ticks: 40 ms here); longer, or to
/// the end of the run, is M9. A crash ends what the node held.
#[test]
fn m9_detects_a_node_holding_more_than_its_budget_for_longer_than_an_instant() {
    let with = |records: &[Record]| {
        let mut log = healthy();
        for record in records {
            insert_before(
                &mut log,
                is!(Event::MeshTableAtEnd { node: 0, .. }),
                record.clone(),
            );
        }
        log
    };
    let brief = [
        held(1_000, 1, true, 300_000),
        held(1_030, 1, false, 310_000),
    ];
    assert_clean(&ALL, &with(&brief), &context());
    let (over, under) = (
        held(1_000, 1, true, 300_000),
        held(1_100, 1, false, 400_000),
    );
    assert_only(
        &ALL,
        &with(&[over.clone(), under.clone()]),
        &context(),
        &[(Contract::M9, &[&over, &under])],
    );
    let never_back = held(1_000, 1, true, 300_000);
    assert_violates(
        &with(std::slice::from_ref(&never_back)),
        &context(),
        Contract::M9,
        &[&never_back],
    );
    // Another node's span does not end node 1's.
    let other = held(1_010, 2, false, 1);
    assert_violates(
        &with(&[never_back.clone(), other]),
        &context(),
        Contract::M9,
        &[&never_back],
    );
    // Node 1 crashed 20 ms after it went over: its holdings died with it.
    let crash = fault(1_020, MeshFaultApplied::Crash { node: 1 });
    assert_holds(&with(&[never_back, crash]), &context(), Contract::M9);
}

/// A node refuses a stream for its budget only when the budget is short:
/// a refusal while it held no more than half of it counted bytes nobody
/// held (M9); one while it held more is the budget at work.
#[test]
fn m9_detects_a_stream_refused_for_the_budget_while_the_node_held_little() {
    let with = |record: &Record| {
        let mut log = healthy();
        insert_before(
            &mut log,
            is!(Event::MeshTableAtEnd { node: 0, .. }),
            record.clone(),
        );
        log
    };
    let pressed = at(
        1_000,
        Event::MeshBudgetDown {
            node: 1,
            held: 200_000,
        },
    );
    assert_clean(&ALL, &with(&pressed), &context());
    let idle = at(
        1_000,
        Event::MeshBudgetDown {
            node: 1,
            held: 131_072,
        },
    );
    assert_only(&ALL, &with(&idle), &context(), &[(Contract::M9, &[&idle])]);
}

/// A trickle cut within the deadline's bound was cut by the deadline, and
/// the node must say so: its down of the trickler is `FrameTimeout`. A
/// down for another reason, or none, is M9; a crash excuses it.
#[test]
fn m9_detects_a_trickle_cut_without_its_frame_timeout_down() {
    let with = |records: &[Record]| {
        let mut log = healthy();
        for record in records {
            insert_before(&mut log, is!(Event::RunEnd { .. }), record.clone());
        }
        log
    };
    let intruder_down = |ms: u64, reason: DownReason| {
        at(
            ms,
            Event::MeshIntruderDown {
                node: 1,
                intruder: Intruder::Trickler,
                reason,
            },
        )
    };
    // Cut 2.2 s after its header at 1 s, within the 2.24 s bound.
    let cut = trickle(3_200, 1, 2_200, true);
    let said = intruder_down(3_150, DownReason::FrameTimeout);
    assert_clean(&ALL, &with(&[said, cut.clone()]), &context());
    for wrong in [vec![intruder_down(3_150, DownReason::ReadError)], vec![]] {
        let mut records = wrong;
        records.push(cut.clone());
        assert_only(
            &ALL,
            &with(&records),
            &context(),
            &[(Contract::M9, &[&cut])],
        );
    }
    // Said a tick after the trickler saw the close: the node closed the
    // stream before it reported the down (hunt --world mesh --seed 1).
    let after = intruder_down(3_201, DownReason::FrameTimeout);
    assert_clean(&ALL, &with(&[cut.clone(), after]), &context());
    // Said, but before the header: not this trickle's.
    let early = intruder_down(900, DownReason::FrameTimeout);
    assert_violates(
        &with(&[early, cut.clone()]),
        &context(),
        Contract::M9,
        &[&cut],
    );
}

/// A node that declares it has no frame budget (or no frame deadline) is
/// not judged on them: M9's clauses about what it holds, about refusals
/// with room and about trickles are not decided for it, while its other
/// clause (an honest generation never downed `OverBudget`) still is.
#[test]
fn m9_judges_no_budget_a_node_declares_it_lacks() {
    let with = |records: &[Record]| {
        let mut log = healthy();
        for record in records {
            insert_before(
                &mut log,
                is!(Event::MeshTableAtEnd { node: 0, .. }),
                record.clone(),
            );
        }
        log
    };
    let never_back = held(1_000, 1, true, 300_000);
    let idle = at(
        1_000,
        Event::MeshBudgetDown {
            node: 1,
            held: 131_072,
        },
    );
    let late = trickle(5_000, 1, 4_000, false);
    let log = with(&[never_back.clone(), idle.clone(), late.clone()]);
    assert_violates(&log, &context(), Contract::M9, &[&never_back]);
    let mut lacking = context();
    lacking.reported.frame_budget = false;
    assert_violates(&log, &lacking, Contract::M9, &[&late]);
    lacking.reported.frame_deadline = false;
    assert_holds(&log, &lacking, Contract::M9);
    // Each capability gates its own clauses only: a budget alone judges
    // the budget, not trickles; a deadline alone the reverse.
    let budget_only = {
        let mut c = context();
        c.reported.frame_deadline = false;
        c
    };
    let deadline_only = {
        let mut c = context();
        c.reported.frame_budget = false;
        c
    };
    let spent = with(&[never_back.clone(), idle.clone()]);
    assert_violates(&spent, &budget_only, Contract::M9, &[&never_back]);
    assert_holds(&spent, &deadline_only, Contract::M9);
    let trickled = with(std::slice::from_ref(&late));
    assert_violates(&trickled, &deadline_only, Contract::M9, &[&late]);
    assert_holds(&trickled, &budget_only, Contract::M9);
    // Still decided without either: an honest generation downed for the
    // budget.
    let downed = over_budget(1_500, 0, 1, 1);
    assert_violates(
        &with(std::slice::from_ref(&downed)),
        &lacking,
        Contract::M9,
        &[&downed],
    );
}
