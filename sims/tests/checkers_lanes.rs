//! Each lanes checker against a hand-made log that breaks exactly its
//! contract (`*_detects_*`), and a well-behaved log that breaks none.

use std::time::Duration;

use lanesim_sims::check::{check, CheckContext};
use lanesim_sims::event::{Event, Exit, Record};
use lanesim_sims::scenario::Contract;

const ALL: [Contract; 6] = [
    Contract::L1,
    Contract::L2,
    Contract::L3,
    Contract::L4,
    Contract::L5,
    Contract::L6,
];

fn at(ms: u64, event: Event) -> Record {
    Record {
        at: Duration::from_millis(ms),
        host: "lanes".into(),
        event,
    }
}

fn created(ms: u64, key: u64, lane: u64) -> Record {
    at(ms, Event::LaneCreated { key, lane })
}
fn routed(ms: u64, key: u64, item: u64, capacity: Option<u64>, depth: Option<u64>) -> Record {
    at(
        ms,
        Event::Routed {
            key,
            item,
            capacity,
            depth,
        },
    )
}
fn start(ms: u64, key: u64, item: u64, lane: u64) -> Record {
    at(ms, Event::HandleStart { key, item, lane })
}
fn end(ms: u64, key: u64, item: u64, lane: u64) -> Record {
    at(
        ms,
        Event::HandleEnd {
            key,
            item,
            lane,
            panicked: false,
        },
    )
}
fn closed(ms: u64, key: u64, lane: u64, exit: Exit) -> Record {
    at(ms, Event::LaneClosed { key, lane, exit })
}

fn finished() -> CheckContext {
    CheckContext {
        finished: true,
        idle_ttl: Some(Duration::from_millis(10)),
        ..CheckContext::default()
    }
}

/// Two items on one key, handled in order, reaped on time, router dropped.
fn good() -> Vec<Record> {
    vec![
        created(0, 1, 1),
        routed(0, 1, 10, Some(2), Some(0)),
        routed(0, 1, 11, Some(2), Some(1)),
        routed(0, 1, 12, Some(2), None),
        start(0, 1, 10, 1),
        end(2, 1, 10, 1),
        start(2, 1, 11, 1),
        end(3, 1, 11, 1),
        closed(13, 1, 1, Exit::Reaped),
        at(20, Event::RouterDropped),
        at(30, Event::RunEnd { finished: true }),
    ]
}

fn contracts_of(records: &[Record], context: &CheckContext) -> Vec<(Contract, String)> {
    check(&ALL, records, context)
        .into_iter()
        .map(|v| (v.contract, v.message))
        .collect()
}

#[test]
fn a_well_behaved_log_breaks_nothing() {
    assert_eq!(contracts_of(&good(), &finished()), vec![]);
}

#[test]
fn l1_detects_a_key_handled_out_of_route_order() {
    let mut log = good();
    log.swap(4, 6); // start 11 before 10
    log.swap(5, 7);
    let found = contracts_of(&log, &finished());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L1 && m.contains("item 10")),
        "{found:?}"
    );
}

#[test]
fn l2_detects_a_lost_item_a_duplicate_and_a_refused_item_handled() {
    let mut lost = good();
    lost.retain(|r| {
        !matches!(
            r.event,
            Event::HandleStart { item: 11, .. } | Event::HandleEnd { item: 11, .. }
        )
    });
    let found = contracts_of(&lost, &finished());
    assert!(
        found.contains(&(
            Contract::L2,
            "key 1: admitted item 11 was never handled".into()
        )),
        "{found:?}"
    );

    let mut twice = good();
    twice.insert(8, start(4, 1, 11, 1));
    assert!(
        contracts_of(&twice, &finished()).contains(&(Contract::L2, "item 11 handled twice".into()))
    );

    let mut refused = good();
    refused.insert(8, start(4, 1, 12, 1));
    assert!(contracts_of(&refused, &finished())
        .contains(&(Contract::L2, "item 12 was refused but handled".into())));
}

#[test]
fn l2_detects_an_item_admitted_into_a_lane_that_already_exited() {
    let log = vec![
        created(0, 1, 1),
        routed(0, 1, 10, None, Some(0)),
        start(0, 1, 10, 1),
        at(
            0,
            Event::HandleEnd {
                key: 1,
                item: 10,
                lane: 1,
                panicked: true,
            },
        ),
        closed(0, 1, 1, Exit::Panicked),
        routed(1, 1, 11, None, Some(1)),
    ];
    let context = CheckContext {
        panics_kill_lanes: true,
        ..finished()
    };
    let found = contracts_of(&log, &context);
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L2 && m.contains("black-holed")),
        "{found:?}"
    );
}

#[test]
fn l3_detects_a_second_live_lane_and_an_item_on_the_wrong_lane() {
    let log = vec![
        created(0, 1, 1),
        routed(0, 1, 10, None, Some(0)),
        created(1, 1, 2),
        routed(1, 1, 11, None, Some(0)),
        start(2, 1, 11, 2),
        start(2, 1, 10, 2),
    ];
    let found = contracts_of(&log, &CheckContext::default());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L3 && m.contains("two live lanes")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L3
                && m.contains("handled by lane 2 but admitted to lane 1"))
    );
}

#[test]
fn l4_detects_admission_past_capacity_a_short_depth_and_a_refusal_below_capacity() {
    let mut past = good();
    past[3] = routed(0, 1, 12, Some(2), Some(2));
    past.insert(8, start(3, 1, 12, 1));
    past.insert(9, end(3, 1, 12, 1));
    let found = contracts_of(&past, &CheckContext::default());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L4 && m.contains("admitted past capacity 2")),
        "{found:?}"
    );

    let mut short = good();
    short[2] = routed(0, 1, 11, Some(2), Some(0));
    let found = contracts_of(&short, &CheckContext::default());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L4 && m.contains("reported depth 0")),
        "{found:?}"
    );

    let mut early = good();
    early[2] = routed(0, 1, 11, Some(2), None);
    let found = contracts_of(&early, &CheckContext::default());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L4 && m.contains("refused below capacity 2")),
        "{found:?}"
    );
}

#[test]
fn l5_detects_a_reap_with_work_a_late_reap_and_a_lane_outliving_the_router() {
    let mut busy = good();
    busy.insert(5, closed(1, 1, 1, Exit::Reaped));
    let found = contracts_of(&busy, &CheckContext::default());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L5 && m.contains("reaped while holding")),
        "{found:?}"
    );

    let mut late = good();
    late[8] = closed(19, 1, 1, Exit::Reaped); // idle since 3 ms, TTL 10 ms + 1 ms slack
    let found = contracts_of(&late, &finished());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L5 && m.contains("was not reaped by")),
        "{found:?}"
    );

    let mut survivor = good();
    survivor.remove(8);
    let context = CheckContext {
        idle_ttl: None,
        ..finished()
    };
    let found = contracts_of(&survivor, &context);
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L5
                && m.contains("still running after the router was dropped")),
        "{found:?}"
    );
}

/// The router's drop must end an idle lane at once (within the reap's
/// slack): a lane that ends only at its next idle timeout missed its death
/// signal; one that ends right after the drop, or right after its last
/// item when it was still busy, did not.
#[test]
fn l5_detects_a_lane_ended_late_after_the_drop() {
    let context = CheckContext {
        idle_ttl: None,
        ..finished()
    };
    let mut late = good();
    late.remove(8); // not reaped: still there at the drop (20 ms)
    late.insert(9, closed(29, 1, 1, Exit::Closed));
    let found = contracts_of(&late, &context);
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L5 && m.contains("ended only at 29ms")),
        "{found:?}"
    );

    let mut prompt = good();
    prompt.remove(8);
    prompt.insert(9, closed(20, 1, 1, Exit::Closed));
    assert_eq!(contracts_of(&prompt, &context), vec![]);
}

#[test]
fn l6_detects_another_key_starved_while_one_is_stuck() {
    let log = vec![
        created(0, 1, 1),
        routed(0, 1, 10, None, Some(0)),
        start(0, 1, 10, 1),
        at(
            0,
            Event::Stuck {
                key: 1,
                item: 10,
                lane: 1,
            },
        ),
        created(0, 2, 2),
        routed(0, 2, 20, None, Some(0)),
        at(50, Event::RunEnd { finished: true }),
    ];
    let context = CheckContext {
        idle_ttl: None,
        ..finished()
    };
    let found = contracts_of(&log, &context);
    // Exactly-once is broken too; independence is what the stuck key broke.
    assert_eq!(
        found,
        vec![
            (
                Contract::L2,
                "key 2: admitted item 20 was never handled".into()
            ),
            (
                Contract::L6,
                "key 2: admitted item 20 was never handled while key(s) {1} were stuck".into()
            )
        ]
    );
}

#[test]
fn completeness_is_not_judged_on_a_run_that_ran_out_of_budget() {
    let mut unfinished = good();
    unfinished.retain(|r| {
        !matches!(
            r.event,
            Event::HandleStart { item: 11, .. } | Event::HandleEnd { item: 11, .. }
        )
    });
    let context = CheckContext {
        finished: false,
        ..finished()
    };
    assert!(contracts_of(&unfinished, &context)
        .iter()
        .all(|(c, _)| *c != Contract::L2));
}

#[test]
fn l5_detects_an_early_reap_and_a_lane_idle_past_its_ttl_in_any_stretch() {
    let mut early = good();
    early[8] = closed(5, 1, 1, Exit::Reaped); // idle since 3 ms, TTL 10 ms
    let found = contracts_of(&early, &finished());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L5 && m.contains("reaped after only 2ms idle")),
        "{found:?}"
    );

    // Idle from 3 ms, then a new item at 20 ms on the same lane: it should
    // have been reaped by 14 ms. The lane's *last* stretch is fine.
    let mut stretch = good();
    stretch.insert(8, routed(20, 1, 13, Some(2), Some(0)));
    stretch.insert(9, start(20, 1, 13, 1));
    stretch.insert(10, end(21, 1, 13, 1));
    stretch[11] = closed(31, 1, 1, Exit::Reaped);
    stretch[12] = at(40, Event::RouterDropped);
    stretch[13] = at(50, Event::RunEnd { finished: true });
    let found = contracts_of(&stretch, &finished());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L5 && m.contains("took a new item at 20ms")),
        "{found:?}"
    );
    // A preemption point may hold the reap decision: within that, no breach.
    let preempting = CheckContext {
        preempt_max: Duration::from_millis(10),
        ..finished()
    };
    assert!(contracts_of(&stretch, &preempting)
        .iter()
        .all(|(c, _)| *c != Contract::L5));
}

#[test]
fn l6_detects_a_ready_item_left_waiting_and_a_key_shed_for_another_keys_backlog() {
    let mut stalled = good();
    stalled[4] = start(5, 1, 10, 1);
    let found = contracts_of(&stalled, &finished());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L6 && m.contains("its lane stalled")),
        "{found:?}"
    );
    let preempting = CheckContext {
        preempt_max: Duration::from_millis(5),
        ..finished()
    };
    assert!(contracts_of(&stalled, &preempting)
        .iter()
        .all(|(c, _)| *c != Contract::L6));

    let shed = vec![
        created(0, 1, 1),
        routed(0, 1, 10, Some(1), Some(0)),
        created(0, 2, 2),
        routed(0, 2, 20, Some(1), None),
    ];
    let found = contracts_of(&shed, &CheckContext::default());
    assert!(
        found
            .iter()
            .any(|(c, m)| *c == Contract::L6 && m.contains("as key 1's lane 1 was full")),
        "{found:?}"
    );
}

#[test]
fn l2_l4_l5_detect_dispatcher_counters_that_disagree_with_the_log() {
    let stats = |lanes_created, lanes_live, items_shed, handler_panics| {
        at(
            19,
            Event::DispatcherStats {
                lanes_created,
                lanes_live,
                items_shed,
                handler_panics,
            },
        )
    };
    // One lane created and reaped, one item refused, no panic.
    let mut right = good();
    right.insert(9, stats(1, 0, 1, 0));
    assert_eq!(contracts_of(&right, &finished()), vec![]);
    for (wrong, contract, name) in [
        (stats(2, 0, 1, 0), Contract::L5, "lanes created"),
        (stats(1, 1, 1, 0), Contract::L5, "lanes live"),
        (stats(1, 0, 0, 0), Contract::L4, "items shed"),
        (stats(1, 0, 1, 1), Contract::L2, "handler panics"),
    ] {
        let mut log = good();
        log.insert(9, wrong);
        let found = contracts_of(&log, &finished());
        assert!(
            found
                .iter()
                .any(|(c, m)| *c == contract && m.contains(name)),
            "{name}: {found:?}"
        );
    }
}

#[test]
fn l5_detects_a_lane_closed_by_a_drop_that_never_happened() {
    let mut log = good();
    let reaped = log
        .iter()
        .position(|r| matches!(r.event, Event::LaneClosed { .. }))
        .unwrap();
    log[reaped] = closed(13, 1, 1, Exit::Closed);
    let found: Vec<(Contract, String)> = check(&ALL, &log, &finished())
        .into_iter()
        .map(|v| (v.contract, v.message))
        .collect();
    assert!(
        found.iter().any(|(c, m)| *c == Contract::L5
            && m.contains("ended as closed by the router's drop, but the router was not dropped")),
        "{found:#?}"
    );
}
