//! LaneRouter on real multi-thread tokio runtimes: one test per behaviour the
//! seed's own tests pin, plus the configuration errors.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{lane_config, log, snapshot, wait_for, Recorder};
use lanesim::lanes::{LaneConfigError, LaneExit, LaneRouter, LaneRouterConfig};
use lanesim::shim::rt::RuntimeChoice;

fn logging_router<T: Clone + Send + Sync + 'static>(
    sink: &common::Log<T>,
    config: LaneRouterConfig<u64>,
) -> LaneRouter<u64, T> {
    let sink = Arc::clone(sink);
    LaneRouter::new(
        Arc::new(move |item: T| {
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                tokio::task::yield_now().await;
                sink.lock().unwrap().push(item);
            })
        }),
        config,
    )
    .expect("valid config")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn per_key_order_is_route_order() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<(u64, u32)>();
    let router = logging_router(&handled, lane_config(None, &recorder));
    for seq in 0..250u32 {
        for key in 0..4u64 {
            assert!(router.route(key, (key, seq), None).is_ok());
        }
    }
    wait_for("all items handled", || snapshot(&handled).len() == 1000).await;
    let mut by_key: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for (key, seq) in snapshot(&handled) {
        by_key.entry(key).or_default().push(seq);
    }
    for key in 0..4 {
        assert_eq!(
            by_key[&key],
            (0..250).collect::<Vec<_>>(),
            "key {key} reordered"
        );
    }
    assert_eq!(recorder.created(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn distinct_keys_run_concurrently() {
    // Both handlers wait on one 2-party barrier: if the keys shared a task
    // this would deadlock, so finishing is the assertion.
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let done = Arc::new(AtomicUsize::new(0));
    let recorder = Arc::new(Recorder::default());
    let (b, d) = (Arc::clone(&barrier), Arc::clone(&done));
    let router: LaneRouter<u64, ()> = LaneRouter::new(
        Arc::new(move |()| {
            let (barrier, done) = (Arc::clone(&b), Arc::clone(&d));
            Box::pin(async move {
                barrier.wait().await;
                done.fetch_add(1, Ordering::SeqCst);
            })
        }),
        lane_config(None, &recorder),
    )
    .unwrap();
    router.route(1, (), None).unwrap();
    router.route(2, (), None).unwrap();
    wait_for("both lanes passed the barrier", || {
        done.load(Ordering::SeqCst) == 2
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_lane_is_reaped() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let router = logging_router(
        &handled,
        lane_config(Some(Duration::from_millis(50)), &recorder),
    );
    router.route(7, 1, None).unwrap();
    wait_for("item handled", || snapshot(&handled).len() == 1).await;
    wait_for("lane reaped", || router.lane_count() == 0).await;
    wait_for("lane task exited", || recorder.closed() == 1).await;
    assert_eq!(recorder.created(), 1);
    assert_eq!(recorder.exits()[0].2, LaneExit::Reaped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_reap_while_items_are_queued() {
    // Each handler takes 20x the TTL; the backlog must keep the lane alive.
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let sink = Arc::clone(&handled);
    let router: LaneRouter<u64, u32> = LaneRouter::new(
        Arc::new(move |seq| {
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                sink.lock().unwrap().push(seq);
            })
        }),
        lane_config(Some(Duration::from_millis(1)), &recorder),
    )
    .unwrap();
    for seq in 0..5 {
        router.route(1, seq, None).unwrap();
    }
    wait_for("all items handled", || snapshot(&handled).len() == 5).await;
    assert_eq!(snapshot(&handled), vec![0, 1, 2, 3, 4]);
    assert_eq!(
        recorder.created(),
        1,
        "reaped and recreated while work was queued"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_reap_while_a_handler_runs_past_the_ttl() {
    // One item whose handler runs 30x the TTL over an empty queue: only a
    // `pending` decremented after the handler resolves keeps this lane.
    let recorder = Arc::new(Recorder::default());
    let finished = Arc::new(AtomicBool::new(false));
    let f = Arc::clone(&finished);
    let router: LaneRouter<u64, ()> = LaneRouter::new(
        Arc::new(move |()| {
            let finished = Arc::clone(&f);
            Box::pin(async move {
                tokio::time::sleep(Duration::from_millis(150)).await;
                finished.store(true, Ordering::SeqCst);
            })
        }),
        lane_config(Some(Duration::from_millis(5)), &recorder),
    )
    .unwrap();
    router.route(1, (), None).unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert_eq!(
        router.lane_count(),
        1,
        "a lane with a handler in flight was reaped"
    );
    assert_eq!(recorder.closed(), 0);
    assert!(!finished.load(Ordering::SeqCst));
    // And the in-flight item still counts against capacity.
    assert_eq!(router.route(1, (), Some(1)), Err(()));
    wait_for("handler finished", || finished.load(Ordering::SeqCst)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reaped_lane_is_rebuilt_in_order() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let router = logging_router(
        &handled,
        lane_config(Some(Duration::from_millis(30)), &recorder),
    );
    for seq in 0..5 {
        router.route(1, seq, None).unwrap();
    }
    wait_for("first burst handled", || snapshot(&handled).len() == 5).await;
    wait_for("lane reaped", || router.lane_count() == 0).await;
    for seq in 5..10 {
        router.route(1, seq, None).unwrap();
    }
    wait_for("second burst handled", || snapshot(&handled).len() == 10).await;
    assert_eq!(snapshot(&handled), (0..10).collect::<Vec<_>>());
    assert_eq!(
        recorder.created(),
        2,
        "the reaped lane must be rebuilt exactly once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_producers_on_one_key_never_see_two_live_lanes_and_lose_nothing() {
    const PRODUCERS: u32 = 8;
    const PER_PRODUCER: u32 = 400;
    let recorder = Arc::new(Recorder::default());
    let handled = log::<(lanesim::lanes::LaneId, u32)>();
    let in_handler = Arc::new(AtomicUsize::new(0));
    let overlap = Arc::new(AtomicBool::new(false));
    let (sink, busy, over) = (
        Arc::clone(&handled),
        Arc::clone(&in_handler),
        Arc::clone(&overlap),
    );
    let router: Arc<LaneRouter<u64, u32>> = Arc::new(
        LaneRouter::with_lane_ids(
            Arc::new(move |lane, item| {
                let (sink, busy, over) = (Arc::clone(&sink), Arc::clone(&busy), Arc::clone(&over));
                Box::pin(async move {
                    if busy.fetch_add(1, Ordering::SeqCst) != 0 {
                        over.store(true, Ordering::SeqCst);
                    }
                    if item % 7 == 0 {
                        tokio::task::yield_now().await;
                    }
                    sink.lock().unwrap().push((lane, item));
                    busy.fetch_sub(1, Ordering::SeqCst);
                })
            }),
            // A TTL of 1 ms reaps between producer bursts: maximum churn.
            lane_config(Some(Duration::from_millis(1)), &recorder),
        )
        .unwrap(),
    );
    // Every 100 items all producers pause together for 20 ms, long past the
    // TTL, so the lane is reaped and rebuilt as the next burst races in
    // however loaded the machine is (staggered 1 ms naps alone left the
    // lane never idle for a whole TTL under load: no churn at all).
    let pause = Arc::new(tokio::sync::Barrier::new(PRODUCERS as usize));
    let mut producers = Vec::new();
    for producer in 0..PRODUCERS {
        let (router, pause) = (Arc::clone(&router), Arc::clone(&pause));
        producers.push(tokio::spawn(async move {
            for i in 0..PER_PRODUCER {
                router.route(1, producer * PER_PRODUCER + i, None).unwrap();
                if i % 32 == 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                if i % 100 == 99 {
                    pause.wait().await;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }));
    }
    for producer in producers {
        producer.await.unwrap();
    }
    let total = (PRODUCERS * PER_PRODUCER) as usize;
    wait_for("all items handled", || snapshot(&handled).len() == total).await;
    let observed = snapshot(&handled);
    assert!(
        !overlap.load(Ordering::SeqCst),
        "two handlers of one key ran at once"
    );
    assert!(
        observed.windows(2).all(|w| w[0].0 <= w[1].0),
        "items of one key were handled by lanes out of creation order: two live lanes"
    );
    let mut items: Vec<u32> = observed.iter().map(|(_, item)| *item).collect();
    // Each producer's own items stay in its route order.
    for producer in 0..PRODUCERS {
        let mine: Vec<u32> = items
            .iter()
            .copied()
            .filter(|i| i / PER_PRODUCER == producer)
            .collect();
        assert!(
            mine.windows(2).all(|w| w[0] < w[1]),
            "producer {producer} reordered"
        );
    }
    items.sort_unstable();
    assert_eq!(
        items,
        (0..PRODUCERS * PER_PRODUCER).collect::<Vec<_>>(),
        "lost or duplicated"
    );
    assert!(
        recorder.created() > 1,
        "the TTL never reaped: the test exercised no churn"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_router_ends_every_lane() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let router = logging_router(&handled, lane_config(None, &recorder));
    for key in 0..3 {
        router.route(key, 0, None).unwrap();
    }
    wait_for("items handled", || snapshot(&handled).len() == 3).await;
    assert_eq!(recorder.created(), 3);
    drop(router);
    wait_for("all lanes exited", || recorder.closed() == 3).await;
    assert!(recorder
        .exits()
        .iter()
        .all(|(_, _, exit)| *exit == LaneExit::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_router_still_handles_what_was_admitted() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let router = logging_router(&handled, lane_config(None, &recorder));
    for seq in 0..100 {
        router.route(1, seq, None).unwrap();
    }
    drop(router);
    wait_for("lane exited", || recorder.closed() == 1).await;
    assert_eq!(snapshot(&handled), (0..100).collect::<Vec<_>>());
}

/// A consumer that parks every item until `release` is set.
fn gated_router(
    release: &Arc<AtomicBool>,
    handled: &common::Log<u32>,
    recorder: &Arc<Recorder>,
) -> LaneRouter<u64, u32> {
    let (release, sink) = (Arc::clone(release), Arc::clone(handled));
    LaneRouter::new(
        Arc::new(move |item| {
            let (release, sink) = (Arc::clone(&release), Arc::clone(&sink));
            Box::pin(async move {
                while !release.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                sink.lock().unwrap().push(item);
            })
        }),
        lane_config(None, recorder),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capacity_is_per_key() {
    let recorder = Arc::new(Recorder::default());
    let release = Arc::new(AtomicBool::new(false));
    let handled = log::<u32>();
    let router = gated_router(&release, &handled, &recorder);
    // Key 1: one item in the handler, two queued, the fourth refused.
    assert_eq!(router.route(1, 10, Some(3)), Ok(0));
    assert_eq!(router.route(1, 11, Some(3)), Ok(1));
    assert_eq!(router.route(1, 12, Some(3)), Ok(2));
    assert_eq!(
        router.route(1, 13, Some(3)),
        Err(13),
        "a full lane hands the item back"
    );
    // Key 2 is untouched by key 1's backlog.
    assert_eq!(router.route(2, 20, Some(3)), Ok(0));
    // No capacity never refuses, even on the full lane; zero always refuses.
    assert_eq!(router.route(1, 14, None), Ok(3));
    assert_eq!(router.route(3, 30, Some(0)), Err(30));
    release.store(true, Ordering::SeqCst);
    wait_for("admitted items handled", || snapshot(&handled).len() == 5).await;
    let of = |key: u32| {
        snapshot(&handled)
            .into_iter()
            .filter(|i| i / 10 == key)
            .collect::<Vec<_>>()
    };
    assert_eq!(of(1), vec![10, 11, 12, 14], "key 1 lost or reordered");
    assert_eq!(of(2), vec![20]);
    assert_eq!(of(3), Vec::<u32>::new(), "a refused item was handled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capacity_frees_as_the_lane_drains() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let router = logging_router(&handled, lane_config(None, &recorder));
    assert_eq!(router.route(1, 0, Some(1)), Ok(0));
    wait_for("first item handled", || snapshot(&handled).len() == 1).await;
    assert_eq!(
        router.route(1, 1, Some(1)),
        Ok(0),
        "capacity must be reusable once drained"
    );
    wait_for("second item handled", || snapshot(&handled).len() == 2).await;
    assert_eq!(snapshot(&handled), vec![0, 1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_that_catches_its_panics_keeps_its_lane() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let sink = Arc::clone(&handled);
    let router: LaneRouter<u64, u32> = LaneRouter::new(
        Arc::new(move |seq| {
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                use futures_util::FutureExt;
                let result = std::panic::AssertUnwindSafe(async move {
                    assert_ne!(seq, 3, "deliberate panic");
                    seq
                })
                .catch_unwind()
                .await;
                if let Ok(seq) = result {
                    sink.lock().unwrap().push(seq);
                }
            })
        }),
        lane_config(None, &recorder),
    )
    .unwrap();
    for seq in 0..8 {
        router.route(1, seq, None).unwrap();
    }
    wait_for("surviving items handled", || snapshot(&handled).len() == 7).await;
    assert_eq!(snapshot(&handled), vec![0, 1, 2, 4, 5, 6, 7]);
    assert_eq!(
        recorder.created(),
        1,
        "the lane must survive a caught panic"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lane_killed_by_a_panic_leaves_no_black_hole() {
    // The raw router does not catch panics: the lane dies, but its exit guard
    // removes its entry, so the next item for the key gets a fresh lane.
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let sink = Arc::clone(&handled);
    let router: LaneRouter<u64, u32> = LaneRouter::new(
        Arc::new(move |seq| {
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                assert_ne!(seq, 0, "deliberate panic");
                sink.lock().unwrap().push(seq);
            })
        }),
        lane_config(None, &recorder),
    )
    .unwrap();
    router.route(1, 0, None).unwrap();
    wait_for("lane died", || recorder.closed() == 1).await;
    assert_eq!(recorder.exits()[0].2, LaneExit::Panicked);
    assert_eq!(
        router.lane_count(),
        0,
        "the dead lane's entry is still in the map"
    );
    router.route(1, 1, None).unwrap();
    wait_for("next item handled by a new lane", || {
        snapshot(&handled) == vec![1]
    })
    .await;
    assert_eq!(recorder.created(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dedicated_runtime_runs_lanes_and_drops_from_async_code() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let mut config = lane_config(None, &recorder);
    config.runtime = RuntimeChoice::Dedicated {
        thread_name: "lanes".into(),
    };
    let router = logging_router(&handled, config);
    router.route(1, 1, None).unwrap();
    wait_for("handled on the dedicated runtime", || {
        snapshot(&handled) == vec![1]
    })
    .await;
    drop(router); // inside an async context: must not panic
    wait_for("lane ended", || recorder.closed() == 1).await;
}

/// A lane with a deep backlog and instant handlers never waits on its
/// queue; it must still give its worker up now and then (one unit of coop
/// budget per 128 items: a yield every 16,384). On a one-thread runtime a
/// neighbour spawned after 200,000 items were queued runs long before the
/// lane is through them. Without the budget the lane ran all 200,000 first.
#[tokio::test(flavor = "current_thread")]
async fn a_flooded_lane_yields_to_its_neighbours() {
    const ITEMS: usize = 200_000;
    let recorder = Arc::new(Recorder::default());
    let handled = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&handled);
    let router = LaneRouter::new(
        Arc::new(move |_item: u64| {
            counted.fetch_add(1, Ordering::Relaxed);
            Box::pin(std::future::ready(()))
        }),
        lane_config(None, &recorder),
    )
    .expect("valid config");
    for item in 0..ITEMS as u64 {
        router.route(7, item, None).unwrap();
    }
    let seen = Arc::clone(&handled);
    let neighbour = tokio::spawn(async move { seen.load(Ordering::Relaxed) });
    let at_neighbour = neighbour.await.unwrap();
    while handled.load(Ordering::Relaxed) < ITEMS {
        tokio::task::yield_now().await;
    }
    assert!(
        at_neighbour < 50_000,
        "the neighbour ran only after {at_neighbour} of {ITEMS} items"
    );
}

/// A router whose runtime has shut down: `spawn` drops the lane task a
/// route creates at once, and its exit guard removes the entry it was made
/// for (exit `Cancelled`). The task is started only after the shard lock is
/// released; spawned under it, the guard's removal takes that same lock and
/// `route` deadlocks (mutant `lane-spawn-under-lock`, which every simulated
/// world passes: they drop the router before its runtime). The route runs on
/// its own thread, so a deadlock fails this test instead of hanging it.
#[test]
fn routing_after_the_runtime_shut_down_neither_deadlocks_nor_leaves_an_entry() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    let config = LaneRouterConfig::<u64>::new(RuntimeChoice::Handle(runtime.handle().clone()))
        .observer(Arc::clone(&recorder) as _);
    let router: Arc<LaneRouter<u64, u32>> =
        Arc::new(LaneRouter::new(Arc::new(|_| Box::pin(async {})), config).unwrap());
    runtime.shutdown_timeout(Duration::from_secs(5));
    let (done, routed) = std::sync::mpsc::channel();
    let on_thread = Arc::clone(&router);
    std::thread::spawn(move || {
        let _ = done.send(on_thread.route(7, 1, None));
    });
    let routed = routed
        .recv_timeout(Duration::from_secs(20))
        .expect("route() deadlocked on a runtime that has shut down");
    assert_eq!(routed, Ok(0));
    assert_eq!(router.lane_count(), 0, "the dropped lane left its entry");
    let exits = recorder.exits();
    assert_eq!(exits.len(), 1, "{exits:?}");
    assert_eq!((exits[0].0, exits[0].2), (7, LaneExit::Cancelled));
}

#[test]
fn a_zero_idle_ttl_is_a_configuration_error() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = LaneRouterConfig::<u64>::new(RuntimeChoice::Handle(runtime.handle().clone()))
        .idle_ttl(Duration::ZERO);
    let error = LaneRouter::<u64, ()>::new(Arc::new(|()| Box::pin(async {})), config).err();
    assert!(
        matches!(error, Some(LaneConfigError::ZeroIdleTtl)),
        "{error:?}"
    );
    assert_eq!(
        error.unwrap().to_string(),
        "idle_ttl must be greater than zero (use None to never reap)"
    );
}

#[test]
fn a_shard_count_that_is_not_a_power_of_two_is_a_configuration_error() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for shards in [0, 1, 3, 48] {
        let mut config =
            LaneRouterConfig::<u64>::new(RuntimeChoice::Handle(runtime.handle().clone()));
        config.shards = shards;
        let error = LaneRouter::<u64, ()>::new(Arc::new(|()| Box::pin(async {})), config).err();
        assert!(
            matches!(error, Some(LaneConfigError::BadShardCount(n)) if n == shards),
            "{error:?}"
        );
    }
}
