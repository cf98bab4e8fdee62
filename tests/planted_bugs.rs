//! Each planted bug that a real runtime can show, shown: with the switch on,
//! the symptom docs/contracts.md's catalogue names appears, and the assertion that
//! holds for the correct code (pinned in the other test files) fails. The
//! thread-level bugs (#1, #3, #5a) have no `.await` in their window; the loom
//! models catch those. #11's window is shown by a unit test in
//! `src/distribution/connection.rs`, which stops inside it.
#![cfg(feature = "planted-bugs")]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{
    framed, lane_config, log, loopback, manager, read_controls, record_downs, snapshot, wait_for,
    Recorder,
};
use lanesim::distribution::{
    ConnectionManager, ControlEnqueueError, ControlOutbound, DistSender, DownReason, ManagerConfig,
    NodeName, SenderConfig,
};
use lanesim::lanes::LaneRouter;
use lanesim::planted::{Planted, PlantedBug};
use lanesim::shim::net::TokioTcp;
use lanesim::shim::rt::RuntimeChoice;

fn gated_router(
    bug: PlantedBug,
    release: &Arc<AtomicBool>,
    started: &Arc<AtomicBool>,
) -> LaneRouter<u64, u32> {
    let (release, started) = (Arc::clone(release), Arc::clone(started));
    let recorder = Arc::new(Recorder::default());
    LaneRouter::new(
        Arc::new(move |_| {
            let (release, started) = (Arc::clone(&release), Arc::clone(&started));
            Box::pin(async move {
                started.store(true, Ordering::SeqCst);
                while !release.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
        }),
        lane_config(None, &recorder).planted(Planted::bug(bug)),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_decremented_at_dequeue_admits_past_the_cap_while_a_handler_runs() {
    let (release, started) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let router = gated_router(PlantedBug::PendingDecrementedAtDequeue, &release, &started);
    assert_eq!(router.route(1, 0, Some(1)), Ok(0));
    wait_for("handler running", || started.load(Ordering::SeqCst)).await;
    // Correct code: Err (the running item still counts). Bug: admitted.
    assert_eq!(
        router.route(1, 1, Some(1)),
        Ok(0),
        "the planted bug did not show"
    );
    release.store(true, Ordering::SeqCst);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capacity_shared_across_keys_sheds_another_keys_item() {
    let (release, started) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let router = gated_router(PlantedBug::CapacitySharedAcrossKeys, &release, &started);
    for item in 0..3 {
        router.route(1, item, Some(3)).unwrap();
    }
    assert_eq!(
        router.route(2, 20, Some(3)),
        Err(20),
        "the planted bug did not show"
    );
    release.store(true, Ordering::SeqCst);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_exit_guard_black_holes_the_key_after_a_lane_dies() {
    let recorder = Arc::new(Recorder::default());
    let handled = log::<u32>();
    let sink = Arc::clone(&handled);
    let router: LaneRouter<u64, u32> = LaneRouter::new(
        Arc::new(move |item| {
            let sink = Arc::clone(&sink);
            Box::pin(async move {
                assert_ne!(item, 0, "deliberate panic");
                sink.lock().unwrap().push(item);
            })
        }),
        lane_config(None, &recorder).planted(Planted::bug(PlantedBug::NoExitGuard)),
    )
    .unwrap();
    router.route(1, 0, None).unwrap();
    wait_for("lane died", || recorder.closed() == 1).await;
    assert_eq!(
        router.lane_count(),
        1,
        "the dead lane's entry should linger under the bug"
    );
    router.route(1, 1, None).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        snapshot(&handled).is_empty(),
        "the planted bug did not show"
    );
}

fn sender(manager: &ConnectionManager, bug: PlantedBug, write_timeout: Duration) -> DistSender {
    let mut config = SenderConfig::new(RuntimeChoice::Dedicated {
        thread_name: "planted".into(),
    });
    config.write_timeout = write_timeout;
    config.planted = Planted::bug(bug);
    DistSender::new(manager.clone(), config).unwrap()
}

#[tokio::test]
async fn control_resolved_by_node_leaks_a_stale_control_onto_the_redialed_socket() {
    let manager = manager();
    let (pinned, _old) = loopback(&manager, "peer@test").await;
    pinned.mark_down(lanesim::distribution::DownReason::WriteTimeout);
    let (_, mut new_peer) = loopback(&manager, "peer@test").await;
    let sender = sender(
        &manager,
        PlantedBug::ControlResolvedByNode,
        Duration::from_secs(5),
    );
    sender
        .enqueue_control(ControlOutbound {
            connection: pinned,
            frame: framed(&[0xCC]),
        })
        .unwrap();
    sender.enqueue(NodeName::from("peer@test"), framed(&[0xDD]));
    assert_eq!(
        read_controls(&mut new_peer, 1).await,
        vec![vec![0xCC]],
        "the planted bug did not show"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_write_deadline_lets_one_wedged_peer_stall_every_peer() {
    let manager = manager();
    let (_wedged, _never_read) = loopback(&manager, "wedged@test").await;
    let (_, mut live) = loopback(&manager, "live@test").await;
    let sender = sender(
        &manager,
        PlantedBug::NoWriteDeadline,
        Duration::from_millis(100),
    );
    let huge: Arc<[u8]> = Arc::from(lanesim_target::wire::encode(&vec![1u8; 16 << 20], b""));
    sender.enqueue(NodeName::from("wedged@test"), huge);
    sender.enqueue(NodeName::from("live@test"), framed(&[0xAB]));
    let served = tokio::time::timeout(Duration::from_secs(2), read_controls(&mut live, 1)).await;
    assert!(
        served.is_err(),
        "the healthy peer was served: the planted bug did not show"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_control_overflow_drops_controls_without_marking_down() {
    let manager = manager();
    let (wedged, _never_read) = loopback(&manager, "wedged@test").await;
    let sender = sender(
        &manager,
        PlantedBug::SilentControlOverflow,
        Duration::from_secs(30),
    );
    let huge: Arc<[u8]> = Arc::from(lanesim_target::wire::encode(&vec![1u8; 16 << 20], b""));
    let pin = |frame| ControlOutbound {
        connection: Arc::clone(&wedged),
        frame,
    };
    sender.enqueue_control(pin(huge)).unwrap();
    let results: Vec<_> = (0..1024u32)
        .map(|i| sender.enqueue_control(pin(framed(&i.to_be_bytes()))))
        .collect();
    assert!(!results.contains(&Err(ControlEnqueueError::Overflow)));
    assert!(
        !wedged.is_down(),
        "the planted bug did not show: the overflow marked down"
    );
    assert!(
        sender.stats().control_queued < 1024,
        "nothing overflowed: the test exercised nothing"
    );
}

#[tokio::test]
async fn runtime_dropped_in_place_panics_when_released_inside_async_code() {
    let sender = sender(
        &manager(),
        PlantedBug::RuntimeDroppedInPlace,
        Duration::from_secs(5),
    );
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(sender)));
    let payload = dropped.expect_err("the planted bug did not show: the drop did not panic");
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or_default();
    assert!(message.contains("Cannot drop a runtime"), "{message}");
}

#[tokio::test]
async fn down_hook_not_once_guarded_fires_per_mark_down() {
    let mut config = ManagerConfig::new(RuntimeChoice::current(), common::raw::cookie());
    config.planted = Planted::bug(PlantedBug::DownHookNotOnceGuarded);
    let manager =
        ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap();
    let downs = record_downs(&manager);
    let (connection, _peer) = loopback(&manager, "peer@test").await;
    connection.mark_down(DownReason::WriteTimeout);
    connection.mark_down(DownReason::ControlOverflow);
    assert_eq!(snapshot(&downs).len(), 2, "the planted bug did not show");
}

/// #21: one depth shared by every node: the wedged node's two queued
/// controls fill the lane, and the live node's control overflows and
/// takes the live node down (the correct code accepts it:
/// `one_nodes_full_share_of_the_control_lane_never_refuses_another_nodes_control`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lane_depth_shared_across_nodes_takes_a_healthy_node_down() {
    let mut config = SenderConfig::new(RuntimeChoice::Dedicated {
        thread_name: "planted".into(),
    });
    config.planted = Planted::bug(PlantedBug::LaneDepthSharedAcrossNodes);
    let shared = common::sharing::wedged_share_full(config).await;
    assert!(
        !shared.wedged.is_down(),
        "the drain did not park: no lane filled"
    );
    assert_eq!(
        shared.control_for_the_live_node(),
        Err(ControlEnqueueError::Overflow),
        "the planted bug did not show"
    );
    assert!(shared.live.is_down());
    shared.wedged.mark_down(DownReason::ManualDisconnect);
}

/// #22: frames written in arrival order across nodes: `b`'s one frame
/// waits behind `a`'s whole burst (the correct code gives `b` the second
/// turn: `the_drain_writes_one_frame_of_each_node_per_turn`).
#[tokio::test]
async fn turns_in_arrival_order_hold_a_node_behind_another_nodes_burst() {
    let order =
        common::sharing::burst_then_one(Planted::bug(PlantedBug::TurnsInArrivalOrder)).await;
    assert_eq!(
        order,
        ["a@test", "a@test", "a@test", "b@test"],
        "the planted bug did not show"
    );
}
