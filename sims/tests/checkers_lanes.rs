//! Each lanes checker against a hand-made log that breaks exactly its
//! contract (`*_detects_*`), and a well-behaved log that breaks none. Each
//! test names the violation it expects by its contract and the records it
//! cites (`support`).

mod support;

use std::time::Duration;

use lanesim_sims::check::lanes::MAX_RUN;
use lanesim_sims::check::{check, CheckContext};
use lanesim_sims::event::{Event, Exit, Record};
use lanesim_sims::scenario::Contract;
use support::{
    assert_clean, assert_holds, assert_only, assert_violates, assert_violates_exactly, citing,
    find, insert_after, insert_before, insert_in_time, is, remove, remove_all, replace, the,
};

const ALL: [Contract; 6] = [
    Contract::L1,
    Contract::L2,
    Contract::L3,
    Contract::L4,
    Contract::L5,
    Contract::L6,
];

fn at(ms: u64, event: Event) -> Record {
    support::record("lanes", ms, event)
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

/// The good log with its lane ending at `ms` as `exit` instead; that end.
fn lane_ends(ms: u64, exit: Exit) -> (Vec<Record>, Record) {
    let mut log = good();
    let end = replace(
        &mut log,
        is!(Event::LaneClosed { .. }),
        closed(ms, 1, 1, exit),
    );
    (log, end)
}

/// The creation of the lane of `lane`.
fn creation(log: &[Record], lane: u64) -> Record {
    the(
        log,
        |e| matches!(e, Event::LaneCreated { lane: l, .. } if *l == lane),
    )
}

/// The route of `item`.
fn route(log: &[Record], item: u64) -> Record {
    the(
        log,
        |e| matches!(e, Event::Routed { item: i, .. } if *i == item),
    )
}

/// The end of `item`'s handler.
fn end_of(log: &[Record], item: u64) -> Record {
    the(
        log,
        |e| matches!(e, Event::HandleEnd { item: i, .. } if *i == item),
    )
}

#[test]
fn a_well_behaved_log_breaks_nothing() {
    assert_clean(&ALL, &good(), &finished());
}

#[test]
fn l1_detects_a_key_handled_out_of_route_order() {
    let mut log = good();
    // Item 11 starts (and ends) before item 10.
    for (first, second) in [
        (
            find(&log, is!(Event::HandleStart { item: 10, .. })),
            find(&log, is!(Event::HandleStart { item: 11, .. })),
        ),
        (
            find(&log, is!(Event::HandleEnd { item: 10, .. })),
            find(&log, is!(Event::HandleEnd { item: 11, .. })),
        ),
    ] {
        log.swap(first, second);
    }
    let later = the(&log, is!(Event::HandleStart { item: 11, .. }));
    let earlier = the(&log, is!(Event::HandleStart { item: 10, .. }));
    assert_violates(
        &log,
        &finished(),
        Contract::L1,
        &[&route(&log, 10), &later, &earlier],
    );
}

#[test]
fn l2_detects_a_lost_item_a_duplicate_and_a_refused_item_handled() {
    let mut lost = good();
    remove_all(
        &mut lost,
        is!(Event::HandleStart { item: 11, .. } | Event::HandleEnd { item: 11, .. }),
    );
    assert_violates_exactly(&lost, &finished(), Contract::L2, &[&route(&lost, 11)]);

    let mut twice = good();
    let first = the(&twice, is!(Event::HandleStart { item: 11, .. }));
    let again = insert_before(
        &mut twice,
        is!(Event::LaneClosed { .. }),
        start(4, 1, 11, 1),
    );
    assert_violates(&twice, &finished(), Contract::L2, &[&first, &again]);

    let mut refused = good();
    let handled = insert_before(
        &mut refused,
        is!(Event::LaneClosed { .. }),
        start(4, 1, 12, 1),
    );
    assert_violates(
        &refused,
        &finished(),
        Contract::L2,
        &[&route(&refused, 12), &handled],
    );
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
    let exited = the(&log, is!(Event::LaneClosed { .. }));
    assert_violates(&log, &context, Contract::L2, &[&exited, &route(&log, 11)]);
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
    let context = CheckContext::default();
    // Lane 2 created while lane 1 holds item 10.
    assert_violates(
        &log,
        &context,
        Contract::L3,
        &[&creation(&log, 1), &creation(&log, 2)],
    );
    // Item 10, admitted to lane 1, handled by lane 2.
    let handled = the(&log, is!(Event::HandleStart { item: 10, .. }));
    assert_violates(&log, &context, Contract::L3, &[&route(&log, 10), &handled]);
}

/// The three checks of a route (past capacity, a wrong depth, a refusal
/// below capacity) all cite the route alone: each log below makes only the
/// one it plants possible (its depth is right, or it was refused), and
/// exactly one L4 violation cites it.
#[test]
fn l4_detects_admission_past_capacity_a_short_depth_and_a_refusal_below_capacity() {
    let context = CheckContext::default();
    let one_l4_citing = |log: &[Record], route: &Record| {
        let found = citing(log, &context, Contract::L4, &[route]);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].evidence, vec![route.clone()]);
    };
    let mut past = good();
    let admitted = replace(
        &mut past,
        is!(Event::Routed { item: 12, .. }),
        routed(0, 1, 12, Some(2), Some(2)),
    );
    let closing = is!(Event::LaneClosed { .. });
    insert_before(&mut past, closing, start(3, 1, 12, 1));
    insert_before(&mut past, closing, end(3, 1, 12, 1));
    one_l4_citing(&past, &admitted);

    let mut short = good();
    let shallow = replace(
        &mut short,
        is!(Event::Routed { item: 11, .. }),
        routed(0, 1, 11, Some(2), Some(0)),
    );
    one_l4_citing(&short, &shallow);

    let mut early = good();
    let refused = replace(
        &mut early,
        is!(Event::Routed { item: 11, .. }),
        routed(0, 1, 11, Some(2), None),
    );
    one_l4_citing(&early, &refused);
}

#[test]
fn l5_detects_a_reap_with_work_a_late_reap_and_a_lane_outliving_the_router() {
    let mut busy = good();
    let reaped = insert_after(
        &mut busy,
        is!(Event::HandleStart { item: 10, .. }),
        closed(1, 1, 1, Exit::Reaped),
    );
    // The lane's creation and the reap: a lane that ended as closed by a
    // drop cites the same two, but this one says it was reaped.
    assert_violates_exactly(
        &busy,
        &CheckContext::default(),
        Contract::L5,
        &[&creation(&busy, 1), &reaped],
    );

    // Idle since 3 ms, TTL 10 ms + 1 ms slack.
    let (late, reaped) = lane_ends(19, Exit::Reaped);
    // The lane, the end of its idle stretch, and the reap (an early reap
    // cites the last two alone).
    assert_violates_exactly(
        &late,
        &finished(),
        Contract::L5,
        &[&creation(&late, 1), &end_of(&late, 11), &reaped],
    );

    let mut survivor = good();
    remove(&mut survivor, is!(Event::LaneClosed { .. }));
    let context = CheckContext {
        idle_ttl: None,
        ..finished()
    };
    // The lane's creation alone.
    assert_violates_exactly(
        &survivor,
        &context,
        Contract::L5,
        &[&creation(&survivor, 1)],
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
    remove(&mut late, is!(Event::LaneClosed { .. })); // not reaped: still there at the drop (20 ms)
    let ended = insert_after(
        &mut late,
        is!(Event::RouterDropped),
        closed(29, 1, 1, Exit::Closed),
    );
    assert_violates_exactly(
        &late,
        &context,
        Contract::L5,
        &[&creation(&late, 1), &ended],
    );

    let mut prompt = good();
    remove(&mut prompt, is!(Event::LaneClosed { .. }));
    insert_after(
        &mut prompt,
        is!(Event::RouterDropped),
        closed(20, 1, 1, Exit::Closed),
    );
    assert_clean(&ALL, &prompt, &context);
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
    // Exactly-once is broken too; independence is what the stuck key
    // broke. Both cite item 20's route, and nothing else is reported.
    let starved = route(&log, 20);
    assert_only(
        &ALL,
        &log,
        &context,
        &[(Contract::L2, &[&starved]), (Contract::L6, &[&starved])],
    );
}

#[test]
fn completeness_is_not_judged_on_a_run_that_ran_out_of_budget() {
    let mut unfinished = good();
    remove_all(
        &mut unfinished,
        is!(Event::HandleStart { item: 11, .. } | Event::HandleEnd { item: 11, .. }),
    );
    let context = CheckContext {
        finished: false,
        ..finished()
    };
    assert_holds(&unfinished, &context, Contract::L2);
}

#[test]
fn l5_detects_an_early_reap_and_a_lane_idle_past_its_ttl_in_any_stretch() {
    // Idle since 3 ms, TTL 10 ms.
    let (early, reaped) = lane_ends(5, Exit::Reaped);
    // The start of the idle stretch and the reap, without the lane's
    // creation (which a reap too late cites too).
    assert_violates_exactly(
        &early,
        &finished(),
        Contract::L5,
        &[&end_of(&early, 11), &reaped],
    );

    // Idle from 3 ms, then a new item at 20 ms on the same lane: it should
    // have been reaped by 14 ms. The lane's *last* stretch is fine.
    let mut stretch = good();
    let closing = is!(Event::LaneClosed { .. });
    let new_item = insert_before(&mut stretch, closing, routed(20, 1, 13, Some(2), Some(0)));
    insert_before(&mut stretch, closing, start(20, 1, 13, 1));
    insert_before(&mut stretch, closing, end(21, 1, 13, 1));
    replace(&mut stretch, closing, closed(31, 1, 1, Exit::Reaped));
    replace(
        &mut stretch,
        is!(Event::RouterDropped),
        at(40, Event::RouterDropped),
    );
    replace(
        &mut stretch,
        is!(Event::RunEnd { .. }),
        at(50, Event::RunEnd { finished: true }),
    );
    assert_violates_exactly(
        &stretch,
        &finished(),
        Contract::L5,
        &[&creation(&stretch, 1), &end_of(&stretch, 11), &new_item],
    );
    // A preemption point may hold the reap decision: within that, no breach.
    let preempting = CheckContext {
        preempt_max: Duration::from_millis(10),
        ..finished()
    };
    assert_holds(&stretch, &preempting, Contract::L5);
}

/// Key 0's lane handles `MAX_RUN + 1` items back to back while key 1's
/// item, routed before them, waits ready: a lane that never yields its
/// thread (L6, citing the waiting item's route, the run's first start and
/// the start past the bound). The same run broken halfway by key 1's item
/// holds.
#[test]
fn l6_detects_a_lane_that_never_yields_its_thread() {
    const NEIGHBOUR: u64 = 1 << 40;
    let flood = |yields: bool| {
        let mut log = vec![
            created(0, 0, 1),
            created(0, 1, 2),
            routed(0, 1, NEIGHBOUR, None, Some(0)),
        ];
        let n = MAX_RUN + 1;
        log.extend((0..n).map(|item| routed(0, 0, item, None, Some(item))));
        for item in 0..n {
            if yields && item == MAX_RUN / 2 {
                log.push(start(0, 1, NEIGHBOUR, 2));
                log.push(end(0, 1, NEIGHBOUR, 2));
            }
            log.push(start(0, 0, item, 1));
            log.push(end(0, 0, item, 1));
        }
        if !yields {
            log.push(start(0, 1, NEIGHBOUR, 2));
            log.push(end(0, 1, NEIGHBOUR, 2));
        }
        log
    };
    let kept = flood(false);
    assert_violates_exactly(
        &kept,
        &CheckContext::default(),
        Contract::L6,
        &[
            &route(&kept, NEIGHBOUR),
            &start(0, 0, 0, 1),
            &start(0, 0, MAX_RUN, 1),
        ],
    );
    assert_holds(&flood(true), &CheckContext::default(), Contract::L6);
}

#[test]
fn l6_detects_a_ready_item_left_waiting_and_a_key_shed_for_another_keys_backlog() {
    let mut stalled = good();
    let late = replace(
        &mut stalled,
        is!(Event::HandleStart { item: 10, .. }),
        start(5, 1, 10, 1),
    );
    assert_violates(
        &stalled,
        &finished(),
        Contract::L6,
        &[&route(&stalled, 10), &late],
    );
    let preempting = CheckContext {
        preempt_max: Duration::from_millis(5),
        ..finished()
    };
    assert_holds(&stalled, &preempting, Contract::L6);

    let shed = vec![
        created(0, 1, 1),
        routed(0, 1, 10, Some(1), Some(0)),
        created(0, 2, 2),
        routed(0, 2, 20, Some(1), None),
    ];
    // Key 2's item 20 refused as key 1's lane 1 was full.
    assert_violates(
        &shed,
        &CheckContext::default(),
        Contract::L6,
        &[&creation(&shed, 1), &route(&shed, 20)],
    );
}

/// Each wrong counter is the stats record alone: which counter is wrong is
/// the one field the planted record gets wrong (lanes created and live are
/// both L5's, and cite it alike), and exactly one violation cites it.
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
    insert_before(&mut right, is!(Event::RouterDropped), stats(1, 0, 1, 0));
    assert_clean(&ALL, &right, &finished());
    for (wrong, contract) in [
        (stats(2, 0, 1, 0), Contract::L5), // lanes created
        (stats(1, 1, 1, 0), Contract::L5), // lanes live
        (stats(1, 0, 0, 0), Contract::L4), // items shed
        (stats(1, 0, 1, 1), Contract::L2), // handler panics
    ] {
        let mut log = good();
        let counters = insert_before(&mut log, is!(Event::RouterDropped), wrong);
        let found = check(&ALL, &log, &finished());
        let citing: Vec<_> = found
            .iter()
            .filter(|v| v.evidence.contains(&counters))
            .map(|v| (v.contract, v.evidence.clone()))
            .collect();
        assert_eq!(
            citing,
            vec![(contract, vec![counters.clone()])],
            "{found:#?}"
        );
    }
}

#[test]
fn l5_detects_a_lane_closed_by_a_drop_that_never_happened() {
    let (log, ended) = lane_ends(13, Exit::Closed);
    // The lane and its end: a reap while busy cites the same two, but this
    // lane says it ended as closed.
    assert_violates_exactly(
        &log,
        &finished(),
        Contract::L5,
        &[&creation(&log, 1), &ended],
    );
}

/// The scheduler may hold a task back for virtual time (`Event::TaskHeld`,
/// `preempt_awaits`): a reap that came late by no more than the holds in
/// its window (each counted to the next timer boundary) is on time; a hold
/// outside the window, or one too short, excuses nothing.
#[test]
fn l5_allows_for_the_time_tasks_were_held() {
    // Idle since 3 ms, TTL 10 ms + 1 ms slack: due by 14 ms, reaped at 19.
    let (late, reaped) = lane_ends(19, Exit::Reaped);
    let held = |ms: u64, held_ms: u64| {
        support::record(
            lanesim_sims::explore::HOST,
            ms,
            Event::TaskHeld {
                held_us: held_ms * 1_000,
            },
        )
    };

    // Held 5 ms at 5 ms (counted 6 ms): due by 20 ms.
    let mut excused = late.clone();
    insert_in_time(&mut excused, held(5, 5));
    assert_holds(&excused, &finished(), Contract::L5);

    // Held 2 ms (counted 3): due by 17 ms, still late.
    let mut short = late.clone();
    insert_in_time(&mut short, held(5, 2));
    assert_violates_exactly(
        &short,
        &finished(),
        Contract::L5,
        &[&creation(&short, 1), &end_of(&short, 11), &reaped],
    );

    // Held 5 ms, but after the reap: outside the window.
    let mut after = late.clone();
    insert_in_time(&mut after, held(25, 5));
    assert_violates_exactly(
        &after,
        &finished(),
        Contract::L5,
        &[&creation(&after, 1), &end_of(&after, 11), &reaped],
    );
}

/// In the model world a handler's end is logged before its lane
/// acknowledges the item (`CheckContext::late_acks`): until the lane starts
/// its next item, a route may still count it, or be refused for it. Only
/// then: without the flag (every other world) the same depth is a breach;
/// with it, a depth past the unacknowledged ends, or one that still
/// counts an item after the lane's next start, is one too.
#[test]
fn l4_counts_an_unacknowledged_end_only_with_late_acks_and_detects_a_depth_past_it() {
    let log = vec![
        created(0, 1, 1),
        routed(0, 1, 10, Some(2), Some(0)),
        start(0, 1, 10, 1),
        end(1, 1, 10, 1),
        // Item 10 ended but may not be acknowledged: counted.
        routed(1, 1, 11, Some(2), Some(1)),
        start(2, 1, 11, 1),
        end(3, 1, 11, 1),
        // Capacity 1, item 11 ended, not acknowledged: a refusal is right.
        routed(3, 1, 12, Some(1), None),
        at(20, Event::RouterDropped),
        closed(20, 1, 1, Exit::Closed),
        at(30, Event::RunEnd { finished: true }),
    ];
    let late = CheckContext {
        late_acks: true,
        ..CheckContext::default()
    };
    assert_clean(&[Contract::L4], &log, &late);
    // Without the flag both are breaches.
    let strict = citing(
        &log,
        &CheckContext::default(),
        Contract::L4,
        &[&route(&log, 11)],
    );
    assert_eq!(strict.len(), 1, "{strict:#?}");
    let strict = citing(
        &log,
        &CheckContext::default(),
        Contract::L4,
        &[&route(&log, 12)],
    );
    assert_eq!(strict.len(), 1, "{strict:#?}");

    // Past the one unacknowledged end: depth 2 for item 11.
    let mut deep = log.clone();
    let too_deep = replace(
        &mut deep,
        is!(Event::Routed { item: 11, .. }),
        routed(1, 1, 11, Some(2), Some(2)),
    );
    assert_violates(&deep, &late, Contract::L4, &[&too_deep]);

    // The lane started item 11, so item 10 was acknowledged: a route
    // between that start and 11's end that counts both is a breach.
    let mut stale = log.clone();
    let counted = insert_after(
        &mut stale,
        is!(Event::HandleStart { item: 11, .. }),
        routed(2, 1, 13, Some(3), Some(2)),
    );
    insert_before(&mut stale, is!(Event::RouterDropped), start(4, 1, 13, 1));
    insert_before(&mut stale, is!(Event::RouterDropped), end(5, 1, 13, 1));
    assert_violates(&stale, &late, Contract::L4, &[&counted]);
}

/// Overlapping routes (the model world's `overlapping-*` workloads): an
/// item that reported a larger depth started before one with a smaller
/// depth whose route overlapped it, with no item of the lane finished in
/// between, is an L1 breach; the same with an end in the window decides
/// nothing (the backlog may have shrunk); an item admitted and never
/// handled breaks L2.
#[test]
fn overlap_detects_an_inversion_the_depths_prove_and_a_lost_item_only() {
    use lanesim_sims::check::overlap;
    let began = |ms, item| at(ms, Event::RouteBegan { key: 1, item });
    let log = vec![
        began(0, 10),
        began(0, 11),
        routed(0, 1, 11, None, Some(1)),
        routed(0, 1, 10, None, Some(0)),
        start(1, 1, 11, 1),
        end(2, 1, 11, 1),
        start(2, 1, 10, 1),
        end(3, 1, 10, 1),
    ];
    let found = overlap::check(&log);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].contract, Contract::L1);
    assert!(
        found[0].evidence.contains(&start(1, 1, 11, 1)),
        "{found:#?}"
    );

    // In depth order: clean.
    let mut ordered = log.clone();
    let later = ordered.remove(4);
    let later_end = ordered.remove(4);
    ordered.extend([later, later_end]);
    assert!(
        overlap::check(&ordered).is_empty(),
        "{:#?}",
        overlap::check(&ordered)
    );

    // An end on the lane inside the window: the depths prove nothing.
    let mut unproven = vec![
        began(0, 9),
        routed(0, 1, 9, None, Some(0)),
        start(0, 1, 9, 1),
    ];
    unproven.extend(log[..2].iter().cloned());
    unproven.push(end(0, 1, 9, 1));
    unproven.extend(log[2..].iter().cloned());
    assert!(
        overlap::check(&unproven).is_empty(),
        "{:#?}",
        overlap::check(&unproven)
    );

    // Admitted, never handled.
    let lost: Vec<Record> = log[..4].to_vec();
    let found = overlap::check(&lost);
    assert_eq!(
        found.iter().filter(|v| v.contract == Contract::L2).count(),
        2,
        "{found:#?}"
    );
}
