//! DistSender on real tokio and real loopback TCP: one test per behaviour the
//! seed's own tests pin, plus configuration errors and the safe drop.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{framed, loopback, manager, read_controls, record_downs, snapshot, wait_for};
use lanesim::distribution::{
    ControlEnqueueError, ControlOutbound, DistSender, DownReason, Enqueued, NodeName, SenderConfig,
    SenderConfigError,
};
use lanesim::shim::rt::RuntimeChoice;

fn dedicated() -> SenderConfig {
    SenderConfig::new(RuntimeChoice::Dedicated {
        thread_name: "dist-send".into(),
    })
}

/// A frame big enough to fill the kernel's send and receive buffers, so a
/// peer that never reads makes `write_all` park.
fn huge_frame() -> Arc<[u8]> {
    Arc::from(lanesim_target::wire::encode(
        &vec![1u8; 16 * 1024 * 1024],
        b"",
    ))
}

#[test]
fn enqueue_never_blocks_and_drops_when_full() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _entered = runtime.enter();
    let sender = DistSender::new(manager(), dedicated()).unwrap();
    let node = NodeName::from("absent@test");
    let outcomes: Vec<Enqueued> = (0..4096u32)
        .map(|i| sender.enqueue(node.clone(), framed(&i.to_be_bytes())))
        .collect();
    assert!(outcomes.contains(&Enqueued::DroppedFull) || sender.stats().data_no_connection > 0);
    let stats = sender.stats();
    assert_eq!(
        stats.data_queued + stats.data_dropped_full,
        4096,
        "{stats:?}"
    );
    sender.shutdown();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        sender.enqueue(node, framed(b"late")),
        Enqueued::DroppedClosed
    );
}

#[test]
fn a_full_data_lane_drops_and_counts() {
    // A drain that never runs (its runtime is not driven) makes "full" exact.
    let idle = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let _entered = idle.enter();
    let mut config = SenderConfig::new(RuntimeChoice::current());
    config.data_capacity = 4;
    let sender = DistSender::new(manager(), config).unwrap();
    let node = NodeName::from("absent@test");
    let outcomes: Vec<Enqueued> = (0..6)
        .map(|_| sender.enqueue(node.clone(), framed(b"x")))
        .collect();
    assert_eq!(outcomes[..4], [Enqueued::Queued; 4]);
    assert_eq!(outcomes[4..], [Enqueued::DroppedFull; 2]);
    assert_eq!(
        (sender.stats().data_queued, sender.stats().data_dropped_full),
        (4, 2)
    );
}

#[tokio::test]
async fn data_frames_to_one_node_arrive_in_enqueue_order() {
    let manager = manager();
    let (_, mut peer) = loopback(&manager, "peer@test").await;
    let sender = DistSender::new(manager, dedicated()).unwrap();
    for seq in 0..64u8 {
        assert_eq!(
            sender.enqueue(NodeName::from("peer@test"), framed(&[seq])),
            Enqueued::Queued
        );
    }
    let got = read_controls(&mut peer, 64).await;
    assert_eq!(got, (0..64u8).map(|seq| vec![seq]).collect::<Vec<_>>());
    // The drain counts a frame after its write returns, on its own thread:
    // the peer can read the last frame first (a CI run under load did).
    wait_for("64 frames counted written", || {
        sender.stats().data_written == 64
    })
    .await;
    // Dropped inside this single-threaded async test: must not panic (S5).
    drop(sender);
}

#[tokio::test]
async fn controls_to_one_connection_arrive_in_enqueue_order() {
    let manager = manager();
    let (connection, mut peer) = loopback(&manager, "peer@test").await;
    let sender = DistSender::new(manager, dedicated()).unwrap();
    for seq in 0..64u8 {
        sender
            .enqueue_control(ControlOutbound {
                connection: Arc::clone(&connection),
                frame: framed(&[seq]),
            })
            .expect("below capacity");
    }
    let got = read_controls(&mut peer, 64).await;
    assert_eq!(got, (0..64u8).map(|seq| vec![seq]).collect::<Vec<_>>());
    drop(sender);
}

#[tokio::test]
async fn controls_are_written_before_queued_data() {
    let manager = manager();
    let (connection, mut peer) = loopback(&manager, "peer@test").await;
    // Fill both lanes before the drain runs, on a runtime we do not drive yet.
    let parked = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut config = SenderConfig::new(RuntimeChoice::Handle(parked.handle().clone()));
    config.write_timeout = Duration::from_secs(5);
    let sender = DistSender::new(manager, config).unwrap();
    sender.enqueue(NodeName::from("peer@test"), framed(b"data"));
    sender
        .enqueue_control(ControlOutbound {
            connection,
            frame: framed(b"control"),
        })
        .unwrap();
    std::thread::spawn(move || {
        parked.block_on(async { tokio::time::sleep(Duration::from_millis(500)).await })
    });
    let got = tokio::time::timeout(Duration::from_secs(5), read_controls(&mut peer, 2))
        .await
        .expect("both frames arrive");
    assert_eq!(
        got,
        vec![b"control".to_vec(), b"data".to_vec()],
        "the drain is biased to controls"
    );
}

#[tokio::test]
async fn a_dead_peer_does_not_stall_the_drain_and_its_hook_fires() {
    let manager = manager();
    let downs = record_downs(&manager);
    let (dead, dead_peer) = loopback(&manager, "dead@test").await;
    drop(dead_peer);
    let (_, mut live_peer) = loopback(&manager, "live@test").await;
    let sender = DistSender::new(manager.clone(), dedicated()).unwrap();
    for seq in 0..32u8 {
        sender.enqueue(NodeName::from("dead@test"), framed(&[seq]));
    }
    sender.enqueue(NodeName::from("live@test"), framed(&[0xAB]));
    assert_eq!(read_controls(&mut live_peer, 1).await, vec![vec![0xAB]]);
    wait_for("dead peer's hook", || !snapshot(&downs).is_empty()).await;
    let downs = snapshot(&downs);
    assert_eq!(downs.len(), 1, "{downs:?}");
    assert_eq!(
        (downs[0].node.as_str(), downs[0].generation),
        ("dead@test", 1)
    );
    assert!(
        matches!(
            downs[0].reason,
            DownReason::PeerClosed | DownReason::WriteError | DownReason::ReadError
        ),
        "{downs:?}"
    );
    assert!(dead.is_down());
    assert!(manager
        .get_connection(&NodeName::from("dead@test"))
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wedged_peer_stalls_the_drain_only_up_to_the_write_deadline_and_is_purged() {
    let manager = manager();
    let downs = record_downs(&manager);
    let (wedged, _held_never_read) = loopback(&manager, "wedged@test").await;
    let (_, mut live_peer) = loopback(&manager, "live@test").await;
    let mut config = dedicated();
    config.write_timeout = Duration::from_millis(300);
    let sender = DistSender::new(manager.clone(), config).unwrap();
    let started = Instant::now(); // wall-clock: ok (real-mode test)
    sender.enqueue(NodeName::from("wedged@test"), huge_frame());
    sender.enqueue(NodeName::from("live@test"), framed(&[0xAB]));
    let got = tokio::time::timeout(Duration::from_secs(10), read_controls(&mut live_peer, 1))
        .await
        .expect("the healthy peer is served within the bounded window");
    let waited = started.elapsed();
    assert_eq!(got, vec![vec![0xAB]]);
    assert!(
        waited >= Duration::from_millis(250),
        "the deadline never engaged: {waited:?}"
    );
    assert!(
        waited < Duration::from_secs(5),
        "stalled well past one deadline: {waited:?}"
    );
    wait_for("wedged peer's hook", || !snapshot(&downs).is_empty()).await;
    let downs = snapshot(&downs);
    assert_eq!(downs.len(), 1);
    assert_eq!(downs[0].reason, DownReason::WriteTimeout);
    assert_eq!(wedged.down_reason(), Some(DownReason::WriteTimeout));
    assert!(
        manager
            .get_connection(&NodeName::from("wedged@test"))
            .is_none(),
        "not purged"
    );
    // Counted by the drain after the down its deadline caused: wait for it.
    wait_for("the timed-out frame counted failed", || {
        sender.stats().data_failed == 1
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_flood_against_a_wedged_peer_marks_it_down_once_and_overflows_only_after_down() {
    let manager = manager();
    let downs = record_downs(&manager);
    let (wedged, _held_never_read) = loopback(&manager, "wedged@test").await;
    let sender = DistSender::new(manager.clone(), dedicated()).unwrap();
    let pin = |frame| ControlOutbound {
        connection: Arc::clone(&wedged),
        frame,
    };
    sender
        .enqueue_control(pin(huge_frame()))
        .expect("an empty lane accepts");
    let started = Instant::now(); // wall-clock: ok (real-mode test)
    let mut overflowed = 0;
    for seq in 0..1024u32 {
        match sender.enqueue_control(pin(framed(&seq.to_be_bytes()))) {
            // Once the drain skips the queued controls of the downed
            // generation the lane has room again: accepted, and covered by the
            // down (DC-1's second arm).
            Ok(()) => {}
            Err(ControlEnqueueError::Overflow) => {
                assert!(
                    wedged.is_down(),
                    "Overflow returned before the pinned connection was down"
                );
                overflowed += 1;
            }
            Err(ControlEnqueueError::Closed) => panic!("closed while the sender is live"),
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "enqueue_control blocked"
    );
    assert!(
        overflowed > 0,
        "4x capacity behind a wedged write never overflowed"
    );
    wait_for("down hook", || !snapshot(&downs).is_empty()).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let downs = snapshot(&downs);
    assert_eq!(
        downs.len(),
        1,
        "down hook must fire exactly once: {downs:?}"
    );
    assert!(matches!(
        downs[0].reason,
        DownReason::ControlOverflow | DownReason::WriteTimeout
    ));
    assert!(manager
        .get_connection(&NodeName::from("wedged@test"))
        .is_none());
}

/// A node's share of the control lane is its own (`distribution::depths`):
/// with the drain parked on a wedged node and that node's share full, a
/// live node's control is still accepted and the live node stays up, and
/// once the wedged node goes down its write is abandoned and the live
/// node's control is written (S9; a depth shared by every node is planted
/// bug #21, `planted_bugs.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_nodes_full_share_of_the_control_lane_never_refuses_another_nodes_control() {
    let mut shared = common::sharing::wedged_share_full(dedicated()).await;
    assert!(
        !shared.wedged.is_down(),
        "the drain did not park: no share filled"
    );
    assert_eq!(shared.control_for_the_live_node(), Ok(()));
    assert!(!shared.live.is_down());
    // The wedged node's own share is full: its next control overflows,
    // marking it down, which abandons the parked write.
    let refused = shared.sender.enqueue_control(ControlOutbound {
        connection: Arc::clone(&shared.wedged),
        frame: framed(&[0xFF]),
    });
    assert_eq!(refused, Err(ControlEnqueueError::Overflow));
    assert!(shared.wedged.is_down());
    let got = tokio::time::timeout(
        Duration::from_secs(10),
        read_controls(&mut shared.live_peer, 1),
    )
    .await
    .expect("the live node's control is written once the drain is free");
    assert_eq!(got, vec![vec![0x11]]);
    assert!(!shared.live.is_down());
}

/// The drain writes one frame of each node with frames per turn
/// (`distribution::turns`): a burst of three for `a` queued before one
/// for `b` is written a, b, a, a, not a, a, a, b (S9's delay bound; the
/// arrival order is planted bug #22, `planted_bugs.rs`).
#[tokio::test]
async fn the_drain_writes_one_frame_of_each_node_per_turn() {
    let order = common::sharing::burst_then_one(lanesim::planted::Planted::none()).await;
    assert_eq!(order, ["a@test", "b@test", "a@test", "a@test"]);
}

#[tokio::test]
async fn a_control_pinned_to_a_downed_generation_never_reaches_the_redialed_socket() {
    let manager = manager();
    let node = NodeName::from("peer@test");
    let (pinned, _old_peer) = loopback(&manager, "peer@test").await;
    pinned.mark_down(lanesim::distribution::DownReason::WriteTimeout);
    assert!(
        manager.get_connection(&node).is_none(),
        "the downed generation left the table"
    );
    let (redialed, mut new_peer) = loopback(&manager, "peer@test").await;
    assert_eq!((pinned.generation(), redialed.generation()), (1, 2));
    let sender = DistSender::new(manager, dedicated()).unwrap();
    sender
        .enqueue_control(ControlOutbound {
            connection: Arc::clone(&pinned),
            frame: framed(&[0xCC]),
        })
        .expect("accepted; the skip happens in the drain");
    sender.enqueue(node, framed(&[0xDD]));
    assert_eq!(
        read_controls(&mut new_peer, 1).await,
        vec![vec![0xDD]],
        "the first frame on the redialed socket must be the data sentinel, never the pinned control"
    );
    assert_eq!(sender.stats().control_skipped_down, 1);
}

#[tokio::test]
async fn dropping_the_sender_inside_async_code_does_not_panic() {
    for _ in 0..3 {
        let sender = DistSender::new(manager(), dedicated()).unwrap();
        let clone = sender.clone();
        sender.enqueue(NodeName::from("absent@test"), framed(b"x"));
        drop(sender);
        drop(clone); // the last owner, inside a current-thread runtime
    }
}

#[test]
fn zero_capacities_and_a_zero_deadline_are_configuration_errors() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _entered = runtime.enter();
    let config = |edit: fn(&mut SenderConfig)| {
        let mut config = SenderConfig::new(RuntimeChoice::current());
        edit(&mut config);
        DistSender::new(manager(), config)
            .err()
            .map(|error| error.to_string())
    };
    assert_eq!(
        config(|c| c.data_capacity = 0).as_deref(),
        Some("data_capacity must be at least 1")
    );
    assert_eq!(
        config(|c| c.control_capacity = 0).as_deref(),
        Some("control_capacity must be at least 1")
    );
    assert_eq!(
        config(|c| c.write_timeout = Duration::ZERO).as_deref(),
        Some("write_timeout must be greater than zero")
    );
    assert!(matches!(
        DistSender::new(
            manager(),
            SenderConfig {
                data_capacity: 0,
                ..SenderConfig::new(RuntimeChoice::current())
            }
        ),
        Err(SenderConfigError::ZeroCapacity("data_capacity"))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_marks_down_every_queued_controls_connection_and_refuses_later_ones() {
    let manager = manager();
    let (wedged, _held_never_read) = loopback(&manager, "wedged@test").await;
    let (queued_behind, _peer) = loopback(&manager, "other@test").await;
    let sender = DistSender::new(manager, dedicated()).unwrap();
    let pin = |connection: &Arc<lanesim::distribution::DistConnection>, frame| ControlOutbound {
        connection: Arc::clone(connection),
        frame,
    };
    // The drain parks mid-write on the wedged peer; one control queues behind.
    sender.enqueue_control(pin(&wedged, huge_frame())).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    sender
        .enqueue_control(pin(&queued_behind, framed(b"exit")))
        .unwrap();
    sender.shutdown();
    wait_for(
        "the in-flight and the queued control's connections are down",
        || wedged.is_down() && queued_behind.is_down(),
    )
    .await;
    assert_eq!(
        queued_behind.down_reason(),
        Some(DownReason::ManualDisconnect)
    );
    assert_eq!(
        sender.enqueue_control(pin(&queued_behind, framed(b"late"))),
        Err(ControlEnqueueError::Closed)
    );
}

/// Enqueues racing a shutdown from another thread: every frame accepted is
/// accounted for exactly once (written, failed, skipped or discarded), and
/// every control accepted is written or its generation is down. (A frame
/// that landed after the drain's last look once died with the channel,
/// counted queued and nothing else.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueues_racing_a_shutdown_are_each_accounted_for_once() {
    for _ in 0..20 {
        let manager = manager();
        let (connection, _peer) = loopback(&manager, "peer@test").await;
        let node = NodeName::from("peer@test");
        let sender = DistSender::new(manager, dedicated()).unwrap();
        let producer = {
            let (sender, connection) = (sender.clone(), Arc::clone(&connection));
            std::thread::spawn(move || {
                for i in 0..2_000u32 {
                    let _ = sender.enqueue(node.clone(), framed(&i.to_be_bytes()));
                    let _ = sender.enqueue_control(ControlOutbound {
                        connection: Arc::clone(&connection),
                        frame: framed(b"exit"),
                    });
                }
            })
        };
        tokio::time::sleep(Duration::from_micros(200)).await;
        sender.shutdown();
        producer.join().unwrap();
        wait_for("every accepted frame has a fate", || {
            let s = sender.stats();
            s.data_queued
                == s.data_written + s.data_no_connection + s.data_failed + s.data_discarded
                && s.control_queued
                    == s.control_written
                        + s.control_skipped_down
                        + s.control_failed
                        + s.control_discarded
        })
        .await;
        let s = sender.stats();
        assert!(
            s.control_discarded + s.control_failed + s.control_skipped_down == 0
                || connection.is_down(),
            "DC-1: controls went unwritten on a generation that is still up: {s:?}"
        );
    }
}
