//! Each sender checker against a hand-made log that breaks exactly its
//! contract (`*_detects_*`), and a well-behaved log that breaks none.

use std::time::Duration;

use lanesim_sims::check::{check, CheckContext};
use lanesim_sims::event::{Event, Record};
use lanesim_sims::scenario::Contract;

const ALL: [Contract; 9] = [
    Contract::Dc1,
    Contract::Dc2,
    Contract::Dc5,
    Contract::S1,
    Contract::S2,
    Contract::S3,
    Contract::S4,
    Contract::S5,
    Contract::EndToEnd,
];

fn at(ms: u64, host: &str, event: Event) -> Record {
    Record {
        at: Duration::from_millis(ms),
        host: host.into(),
        event,
    }
}

fn s(text: &str) -> String {
    text.to_string()
}

fn context() -> CheckContext {
    CheckContext {
        finished: true,
        write_timeout: Some(Duration::from_secs(5)),
        tick: Duration::from_millis(1),
        ..CheckContext::default()
    }
}

fn up(ms: u64, generation: u64, local: &str) -> Record {
    at(
        ms,
        "local",
        Event::ConnectionUp {
            node: s("peer0"),
            generation,
            local: s(local),
        },
    )
}

fn control(ms: u64, generation: u64, seq: u64, link: u64, outcome: &str, down: bool) -> Record {
    at(
        ms,
        "local",
        Event::ControlEnqueued {
            node: s("peer0"),
            generation,
            seq,
            link: Some(link),
            outcome: s(outcome),
            down_at_return: down,
            blocked_us: 0,
        },
    )
}

fn write(ms: u64, generation: u64, lane: &str, seq: u64, outcome: Option<&str>) -> Record {
    match outcome {
        None => at(
            ms,
            "local",
            Event::WriteStarted {
                node: s("peer0"),
                generation,
                lane: s(lane),
                seq,
            },
        ),
        Some(outcome) => at(
            ms,
            "local",
            Event::WriteFinished {
                node: s("peer0"),
                generation,
                lane: s(lane),
                seq,
                outcome: s(outcome),
            },
        ),
    }
}

fn arrived(
    ms: u64,
    remote: &str,
    lane: &str,
    generation: u64,
    seq: u64,
    link: Option<u64>,
) -> Record {
    at(
        ms,
        "peer0",
        Event::FrameArrived {
            peer: s("peer0"),
            remote: s(remote),
            lane: s(lane),
            generation,
            seq,
            link,
        },
    )
}

fn data(ms: u64, seq: u64) -> Record {
    at(
        ms,
        "local",
        Event::DataEnqueued {
            node: s("peer0"),
            seq,
            outcome: s("queued"),
            blocked_us: 0,
        },
    )
}

fn down(ms: u64, generation: u64, reason: &str) -> Record {
    at(
        ms,
        "local",
        Event::ConnectionDown {
            node: s("peer0"),
            generation,
            reason: s(reason),
        },
    )
}

fn stats(data_written: u64) -> Record {
    at(
        900,
        "local",
        Event::SenderStats {
            data_queued: 2,
            data_written,
            data_failed: 0,
            data_no_connection: 0,
            control_queued: 1,
            control_written: 1,
            control_failed: 0,
            control_skipped: 0,
        },
    )
}

/// One link, its EXIT written and read on its generation, two data frames.
fn good() -> Vec<Record> {
    vec![
        up(0, 1, "10.0.0.1:4000"),
        at(
            1,
            "local",
            Event::Linked {
                node: s("peer0"),
                generation: 1,
                link: 7,
            },
        ),
        data(2, 1),
        control(3, 1, 1, 7, "queued", false),
        data(4, 2),
        write(5, 1, "control", 1, None),
        write(5, 1, "control", 1, Some("written")),
        write(6, 1, "data", 1, None),
        write(6, 1, "data", 1, Some("written")),
        write(7, 1, "data", 2, None),
        write(7, 1, "data", 2, Some("written")),
        arrived(8, "10.0.0.1:4000", "control", 1, 1, Some(7)),
        arrived(9, "10.0.0.1:4000", "data", 0, 1, None),
        arrived(9, "10.0.0.1:4000", "data", 0, 2, None),
        stats(2),
        at(950, "local", Event::SenderDropped { panicked: false }),
        at(1000, "driver", Event::RunEnd { finished: true }),
    ]
}

fn found(records: &[Record], context: &CheckContext) -> Vec<(Contract, String)> {
    check(&ALL, records, context)
        .into_iter()
        .map(|v| (v.contract, v.message))
        .collect()
}

fn has(found: &[(Contract, String)], contract: Contract, needle: &str) -> bool {
    found
        .iter()
        .any(|(c, m)| *c == contract && m.contains(needle))
}

#[test]
fn a_well_behaved_log_breaks_nothing() {
    assert_eq!(found(&good(), &context()), vec![]);
}

#[test]
fn dc1_detects_an_overflow_before_down_and_a_silently_lost_control() {
    let mut early = good();
    early.insert(4, control(3, 1, 2, 8, "overflow", false));
    assert!(has(
        &found(&early, &context()),
        Contract::Dc1,
        "Overflow returned while"
    ));

    let mut lost = good();
    lost.retain(|r| !matches!(&r.event, Event::WriteFinished { lane, .. } | Event::WriteStarted { lane, .. } if lane == "control"));
    lost.retain(|r| !matches!(&r.event, Event::FrameArrived { lane, .. } if lane == "control"));
    let f = found(&lost, &context());
    assert!(has(&f, Contract::Dc1, "silently lost"), "{f:?}");
    assert!(has(&f, Contract::EndToEnd, "lost death signal"), "{f:?}");
}

#[test]
fn dc2_detects_a_control_on_a_redialed_generation() {
    let mut stale = good();
    stale.insert(5, down(4, 1, "PeerClosed"));
    stale.insert(6, up(4, 2, "10.0.0.1:4001"));
    for record in &mut stale {
        match &mut record.event {
            Event::WriteStarted {
                generation, lane, ..
            }
            | Event::WriteFinished {
                generation, lane, ..
            } if lane == "control" => {
                *generation = 2;
            }
            Event::FrameArrived { remote, lane, .. } if lane == "control" => {
                *remote = s("10.0.0.1:4001")
            }
            _ => {}
        }
    }
    let f = found(&stale, &context());
    assert!(
        has(
            &f,
            Contract::Dc2,
            "pinned to peer0/1 was written to generation 2"
        ),
        "{f:?}"
    );
    assert!(
        has(&f, Contract::Dc2, "arrived on peer0's generation 2 socket"),
        "{f:?}"
    );
}

#[test]
fn dc5_detects_reordered_data_and_controls() {
    let mut data_swapped = good();
    data_swapped.swap(12, 13);
    assert!(has(
        &found(&data_swapped, &context()),
        Contract::Dc5,
        "data to peer0 out of order: 1 after 2"
    ));

    let mut controls = good();
    controls.insert(12, arrived(8, "10.0.0.1:4000", "control", 1, 0, None));
    assert!(has(
        &found(&controls, &context()),
        Contract::Dc5,
        "controls out of order"
    ));
}

#[test]
fn s1_detects_an_enqueue_that_spent_virtual_time() {
    let mut blocked = good();
    blocked[2] = at(
        2,
        "local",
        Event::DataEnqueued {
            node: s("peer0"),
            seq: 1,
            outcome: s("queued"),
            blocked_us: 5,
        },
    );
    assert!(has(&found(&blocked, &context()), Contract::S1, "took 5us"));
}

#[test]
fn s2_detects_a_write_past_the_deadline_and_a_write_that_never_ends() {
    let mut long = good();
    long[8] = write(6 + 5_200, 1, "data", 1, Some("written"));
    assert!(has(
        &found(&long, &context()),
        Contract::S2,
        "held the drain for"
    ));

    let mut stuck = good();
    stuck.retain(
        |r| !matches!(&r.event, Event::WriteFinished { lane, seq: 2, .. } if lane == "data"),
    );
    stuck.push(at(10_000, "driver", Event::RunEnd { finished: false }));
    let f = found(
        &stuck,
        &CheckContext {
            finished: false,
            ..context()
        },
    );
    assert!(has(&f, Contract::S2, "never finished"), "{f:?}");
}

#[test]
fn s2_detects_a_slow_peer_torn_down_by_the_deadline() {
    let mut torn = good();
    torn.insert(
        1,
        at(
            0,
            "driver",
            Event::Fault {
                what: s("slow"),
                peer: s("peer0"),
            },
        ),
    );
    torn.push(down(960, 1, "WriteTimeout"));
    assert!(has(
        &found(&torn, &context()),
        Contract::S2,
        "slow but reading peer"
    ));
}

#[test]
fn s3_detects_a_second_hook_an_unknown_reason_a_write_after_down_and_a_missing_down() {
    let mut twice = good();
    twice.push(down(960, 1, "WriteTimeout"));
    twice.push(down(961, 1, "ControlOverflow"));
    assert!(has(
        &found(&twice, &context()),
        Contract::S3,
        "fired 2 times"
    ));

    let mut odd = good();
    odd.push(down(960, 1, "Gremlins"));
    assert!(has(
        &found(&odd, &context()),
        Contract::S3,
        "undocumented down reason Gremlins"
    ));

    let mut after = good();
    after.insert(7, down(5, 1, "PeerClosed"));
    assert!(has(
        &found(&after, &context()),
        Contract::S3,
        "written to after it went down"
    ));

    let mut never = good();
    never.push(at(
        960,
        "peer0",
        Event::PeerSocketClosed {
            peer: s("peer0"),
            remote: s("10.0.0.1:4000"),
            how: s("killed"),
        },
    ));
    assert!(has(
        &found(&never, &context()),
        Contract::S3,
        "never went down"
    ));
}

#[test]
fn s4_detects_a_frame_with_no_fate_two_fates_or_invented_and_wrong_counters() {
    let mut no_fate = good();
    no_fate.retain(
        |r| !matches!(&r.event, Event::WriteFinished { lane, seq: 2, .. } if lane == "data"),
    );
    let f = found(&no_fate, &context());
    assert!(has(&f, Contract::S4, "has no fate"), "{f:?}");
    assert!(has(&f, Contract::S4, "sender counters"), "{f:?}");

    let mut two = good();
    two.insert(
        11,
        at(
            7,
            "local",
            Event::DataUnroutable {
                node: s("peer0"),
                seq: 2,
            },
        ),
    );
    assert!(has(&found(&two, &context()), Contract::S4, "met 2 fates"));

    let mut invented = good();
    invented.insert(14, arrived(9, "10.0.0.1:4000", "data", 0, 9, None));
    assert!(has(
        &found(&invented, &context()),
        Contract::S4,
        "arrived at peer0 but was never written"
    ));
}

#[test]
fn s5_detects_a_panicking_drop() {
    let mut panicked = good();
    panicked[15] = at(950, "local", Event::SenderDropped { panicked: true });
    assert!(has(&found(&panicked, &context()), Contract::S5, "panicked"));
}

#[test]
fn end_to_end_accepts_noconnection_instead_of_the_exit() {
    let mut broken = good();
    broken.retain(|r| !matches!(&r.event, Event::FrameArrived { lane, .. } if lane == "control"));
    assert!(has(
        &found(&broken, &context()),
        Contract::EndToEnd,
        "link 7"
    ));
    broken.push(at(
        960,
        "local",
        Event::NoConnection {
            node: s("peer0"),
            generation: 1,
            link: 7,
        },
    ));
    assert!(!found(&broken, &context())
        .iter()
        .any(|(c, _)| *c == Contract::EndToEnd));
}
