//! OrderedDispatcher on a real multi-thread runtime: panic isolation for the
//! synchronous and the async part of a handler, both overflow policies, the
//! counters, and the zero-limit configuration error.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{log, snapshot, wait_for};
use futures_util::future::BoxFuture;
use lanesim::lanes::{
    DispatchStats, DispatcherConfig, Handler, LaneConfigError, LaneRouterConfig, OrderedDispatcher,
    OverflowPolicy,
};
use lanesim::shim::rt::RuntimeChoice;

fn dispatcher(
    limit: usize,
    policy: OverflowPolicy,
    handler: Handler<u32>,
) -> OrderedDispatcher<u64, u32> {
    let config = DispatcherConfig {
        limit,
        policy,
        router: LaneRouterConfig::new(RuntimeChoice::current()),
    };
    OrderedDispatcher::new(handler, config).expect("valid config")
}

/// Panics synchronously on 3, after an await on 5, logs everything else.
fn panicky(sink: &common::Log<u32>) -> Handler<u32> {
    let sink = Arc::clone(sink);
    Arc::new(move |message: u32| -> BoxFuture<'static, ()> {
        assert_ne!(message, 3, "synchronous panic");
        let sink = Arc::clone(&sink);
        Box::pin(async move {
            tokio::task::yield_now().await;
            assert_ne!(message, 5, "async panic");
            sink.lock().unwrap().push(message);
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panics_in_either_part_of_a_handler_count_as_handled_and_the_lane_lives() {
    let handled = log::<u32>();
    let dispatcher = dispatcher(100, OverflowPolicy::Reject, panicky(&handled));
    for message in 0..8 {
        assert!(dispatcher.dispatch(1, message).is_ok());
    }
    wait_for("survivors handled", || snapshot(&handled).len() == 6).await;
    assert_eq!(snapshot(&handled), vec![0, 1, 2, 4, 6, 7]);
    let stats = dispatcher.stats();
    assert_eq!(
        (stats.handler_panics, stats.lanes_created, stats.lanes_live),
        (2, 1, 1),
        "{stats:?}"
    );
    assert_eq!(dispatcher.lane_count(), 1);
}

/// A handler that parks until `release`.
fn gated(release: &Arc<AtomicBool>, sink: &common::Log<u32>) -> Handler<u32> {
    let (release, sink) = (Arc::clone(release), Arc::clone(sink));
    Arc::new(move |message| {
        let (release, sink) = (Arc::clone(&release), Arc::clone(&sink));
        Box::pin(async move {
            while !release.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            sink.lock().unwrap().push(message);
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_sheds_at_the_per_lane_limit_and_counts_it() {
    let release = Arc::new(AtomicBool::new(false));
    let handled = log::<u32>();
    let dispatcher = dispatcher(2, OverflowPolicy::Reject, gated(&release, &handled));
    assert_eq!(dispatcher.dispatch(1, 10), Ok(0));
    assert_eq!(dispatcher.dispatch(1, 11), Ok(1));
    assert_eq!(
        dispatcher.dispatch(1, 12),
        Err(12),
        "over the limit must be handed back"
    );
    assert_eq!(
        dispatcher.dispatch(2, 20),
        Ok(0),
        "another key has its own limit"
    );
    assert_eq!(dispatcher.stats().items_shed, 1);
    release.store(true, Ordering::SeqCst);
    wait_for("admitted handled", || snapshot(&handled).len() == 3).await;
    let mut got = snapshot(&handled);
    got.sort_unstable();
    assert_eq!(got, vec![10, 11, 20], "a shed message was handled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn warn_admits_past_the_limit() {
    let release = Arc::new(AtomicBool::new(false));
    let handled = log::<u32>();
    let dispatcher = dispatcher(2, OverflowPolicy::Warn, gated(&release, &handled));
    let depths: Vec<usize> = (0..5)
        .map(|m| dispatcher.dispatch(1, m).expect("Warn never sheds"))
        .collect();
    assert_eq!(depths, vec![0, 1, 2, 3, 4]);
    release.store(true, Ordering::SeqCst);
    wait_for("all handled", || snapshot(&handled).len() == 5).await;
    assert_eq!(snapshot(&handled), vec![0, 1, 2, 3, 4]);
    assert_eq!(dispatcher.stats().items_shed, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_follow_lanes_through_reap_and_drop() {
    let handled = log::<u32>();
    let config = DispatcherConfig {
        limit: 8,
        policy: OverflowPolicy::Reject,
        router: LaneRouterConfig::new(RuntimeChoice::current()).idle_ttl(Duration::from_millis(20)),
    };
    let dispatcher = OrderedDispatcher::<u64, u32>::new(panicky(&handled), config).unwrap();
    for key in 0..3 {
        dispatcher.dispatch(key, 0).unwrap();
    }
    wait_for("all reaped", || dispatcher.stats().lanes_live == 0).await;
    assert_eq!(
        dispatcher.stats(),
        DispatchStats {
            lanes_live: 0,
            lanes_created: 3,
            items_shed: 0,
            handler_panics: 0
        }
    );
    dispatcher.dispatch(0, 1).unwrap();
    wait_for("recreated", || dispatcher.stats().lanes_created == 4).await;
}

#[test]
fn a_zero_limit_is_a_configuration_error() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let config = DispatcherConfig {
        limit: 0,
        policy: OverflowPolicy::Reject,
        router: LaneRouterConfig::<u64>::new(RuntimeChoice::Handle(runtime.handle().clone())),
    };
    let error = OrderedDispatcher::<u64, u32>::new(Arc::new(|_| Box::pin(async {})), config).err();
    assert!(
        matches!(error, Some(LaneConfigError::ZeroLimit)),
        "{error:?}"
    );
    assert_eq!(
        error.unwrap().to_string(),
        "the per-lane limit must be at least 1"
    );
}
