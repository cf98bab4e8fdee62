//! The registration, stand-by and tie-break behaviours, on in-memory and
//! loopback streams.

use std::sync::Mutex;

use lanesim_target::wire::encode;

use super::*;
use crate::distribution::connection::DownListener;
use crate::distribution::Cookie;
use crate::shim::net::{Connected, TokioTcp};
use crate::shim::rt::RuntimeChoice;
use crate::shim::sync::Arc;

fn in_memory() -> Connected {
    let (ours, theirs) = tokio::io::duplex(1024);
    std::mem::forget(theirs); // keep the peer open for the whole test
    let (read, write) = tokio::io::split(ours);
    Connected {
        read: Box::new(read),
        write: Box::new(write),
        peer: "memory".into(),
        local: "memory".into(),
    }
}

fn manager(planted: Planted) -> ConnectionManager {
    let mut config = ManagerConfig::new(RuntimeChoice::current(), Cookie::new("unit").unwrap());
    config.planted = planted;
    ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap()
}

fn flip_only(connection: &DistConnection) {
    connection.flip_down_flag_only(DownReason::WriteTimeout);
}

/// The window between `mark_down`'s flag flip and the manager's removal
/// has no `.await` in it, so only a thread can land there; this test
/// stops time inside it by doing the two halves by hand.
#[tokio::test]
async fn a_down_but_not_yet_removed_entry_counts_as_absent_and_is_displaced() {
    let manager = manager(Planted::none());
    let downs = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&downs);
    manager.register_connection_down(move |event| sink.lock().unwrap().push(event.clone()));
    let node = NodeName::from("peer@test");
    let old = manager.register(node.clone(), in_memory());

    // First half of mark_down: the flag flips ...
    flip_only(&old);
    // ... and before the removal, the entry must already count as gone.
    assert!(
        manager.get_connection(&node).is_none(),
        "a down entry was handed out"
    );
    assert!(manager.connected_nodes().is_empty());
    let new = manager.register(node.clone(), in_memory());
    assert_eq!(new.generation(), 2, "the down entry blocked the redial");

    // Second half: the manager removes only its own entry and fires once.
    manager
        .shared
        .connection_down(&old, DownReason::WriteTimeout);
    assert!(
        Arc::ptr_eq(&manager.get_connection(&node).unwrap(), &new),
        "evicted the successor"
    );
    let downs = downs.lock().unwrap().clone();
    assert_eq!(downs.len(), 1, "{downs:?}");
    assert_eq!(
        (downs[0].generation, downs[0].reason),
        (1, DownReason::WriteTimeout)
    );
}

/// An in-memory stream whose far end the test keeps, named `peer`.
fn in_memory_to(peer: &str) -> (Connected, tokio::io::DuplexStream) {
    let (ours, theirs) = tokio::io::duplex(1024);
    let (read, write) = tokio::io::split(ours);
    let stream = Connected {
        read: Box::new(read),
        write: Box::new(write),
        peer: peer.into(),
        local: "memory".into(),
    };
    (stream, theirs)
}

/// An accepted incumbent from "early@test", which sorts before
/// "local@test": streams it dials win.
fn stale_incumbent(manager: &ConnectionManager) -> (NodeName, Arc<DistConnection>) {
    let node = NodeName::from("early@test");
    let (stale, stale_far) = in_memory_to("stale");
    std::mem::forget(stale_far);
    let incumbent = manager
        .register_as(node.clone(), stale, Origin::Accepted)
        .into_connection();
    (node, incumbent)
}

/// The stale incumbent, and our dial that lost to it (its far end).
fn stale_incumbent_and_losing_dial(
    manager: &ConnectionManager,
) -> (NodeName, Arc<DistConnection>, tokio::io::DuplexStream) {
    let (node, incumbent) = stale_incumbent(manager);
    let (fresh, fresh_far) = in_memory_to("fresh");
    let refused = manager.register_as(node.clone(), fresh, Origin::Dialed);
    assert!(
        matches!(refused, Registered::SimultaneousAbort(ref kept) if Arc::ptr_eq(kept, &incumbent)),
        "the dial should lose the tie-break: {refused:?}"
    );
    (node, incumbent, fresh_far)
}

/// The mesh hunt's M1 failure (`scenarios/mesh_stale_hello.toml`):
/// the accepted incumbent was a stream its dialer had already closed.
#[tokio::test(start_paused = true)]
async fn a_dial_that_lost_to_a_stale_accepted_stream_is_registered_when_it_dies() {
    let manager = manager(Planted::none());
    let (node, incumbent, _fresh_far) = stale_incumbent_and_losing_dial(&manager);
    incumbent.mark_down(DownReason::PeerClosed);
    tokio::time::sleep(Duration::from_millis(1)).await;
    let now = manager
        .get_connection(&node)
        .expect("the dial that stood by was not registered");
    assert_eq!(now.peer(), "fresh");
    assert_eq!(now.generation(), 2);
}

fn manager_with(config: ManagerConfig) -> ConnectionManager {
    ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap()
}

async fn closed(far: &mut tokio::io::DuplexStream) -> bool {
    use tokio::io::AsyncReadExt;
    let mut byte = [0u8; 1];
    matches!(
        tokio::time::timeout(Duration::from_millis(1), far.read(&mut byte)).await,
        Ok(Ok(0))
    )
}

#[tokio::test(start_paused = true)]
async fn a_stream_closed_while_standing_by_is_never_registered() {
    let manager = manager(Planted::none());
    let ups = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&ups);
    manager.register_connection_up(move |event| sink.lock().unwrap().push(event.peer.clone()));
    let (node, incumbent, fresh_far) = stale_incumbent_and_losing_dial(&manager);
    // The other end refused our dial too, and closed it.
    drop(fresh_far);
    tokio::time::sleep(Duration::from_millis(1)).await;
    incumbent.mark_down(DownReason::PeerClosed);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(manager.get_connection(&node).is_none());
    assert_eq!(
        *ups.lock().unwrap(),
        vec!["stale".to_string()],
        "a stream its other end had closed was registered"
    );
}

/// Accepted streams of one node refused for an accepted incumbent: the
/// newest stands by, an older one is dropped, and what the newest's
/// dialer wrote meanwhile reaches the frame callback once it is
/// registered.
#[tokio::test(start_paused = true)]
async fn a_newer_stream_supersedes_the_one_standing_by() {
    use tokio::io::AsyncWriteExt;
    let frames = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&frames);
    let mut config = ManagerConfig::new(RuntimeChoice::current(), Cookie::new("unit").unwrap());
    config.on_frame = Some(Arc::new(move |frame| sink.lock().unwrap().push(frame)));
    let manager = manager_with(config);
    let (node, incumbent) = stale_incumbent(&manager);
    let (first, mut first_far) = in_memory_to("first");
    let (second, mut second_far) = in_memory_to("second");
    for stream in [first, second] {
        let refused = manager.register_as(node.clone(), stream, Origin::Accepted);
        assert!(
            matches!(refused, Registered::IncumbentKept(_)),
            "{refused:?}"
        );
    }
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(
        closed(&mut first_far).await,
        "the older stream still stands by"
    );
    assert!(
        !closed(&mut second_far).await,
        "the newer stream was dropped"
    );
    let frame = encode(b"ctl", b"early");
    second_far.write_all(&frame).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1)).await;
    incumbent.mark_down(DownReason::PeerClosed);
    tokio::time::sleep(Duration::from_millis(1)).await;
    let now = manager
        .get_connection(&node)
        .expect("the newer stream was not registered");
    assert_eq!(now.peer(), "second");
    let frames = frames.lock().unwrap().clone();
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(
        (
            frames[0].control.as_slice(),
            frames[0].payload.as_slice(),
            frames[0].generation
        ),
        (&b"ctl"[..], &b"early"[..], now.generation())
    );
}

/// A stream stands by once: when the slot has a live connection again
/// by the time its incumbent went down, it is refused and dropped.
#[tokio::test(start_paused = true)]
async fn a_stream_refused_again_after_standing_by_is_dropped() {
    let manager = manager(Planted::none());
    let (node, incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
    incumbent.mark_down(DownReason::PeerClosed);
    let (winner, winner_far) = in_memory_to("winner");
    std::mem::forget(winner_far);
    let winner = manager
        .register_as(node.clone(), winner, Origin::Accepted)
        .into_connection();
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(
        closed(&mut fresh_far).await,
        "the stream stood by a second time"
    );
    assert!(Arc::ptr_eq(
        &manager.get_connection(&node).unwrap(),
        &winner
    ));
}

/// Half a tick when that is shorter than twice the connect timeout: the
/// other end hears nothing on the stream meanwhile.
#[tokio::test(start_paused = true)]
async fn a_stream_stands_by_at_most_half_a_tick() {
    let mut config = ManagerConfig::new(RuntimeChoice::current(), Cookie::new("unit").unwrap());
    config.tick = Some(Duration::from_secs(1));
    let manager = manager_with(config);
    let (_node, _incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
    tokio::time::sleep(Duration::from_millis(490)).await;
    assert!(!closed(&mut fresh_far).await, "dropped before half a tick");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(
        closed(&mut fresh_far).await,
        "still standing by after half a tick"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stream_standing_by_does_not_undo_a_manual_disconnect() {
    let manager = manager(Planted::none());
    let (node, _incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
    assert!(manager.disconnect_node(&node));
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(
        manager.get_connection(&node).is_none(),
        "the stream that stood by reconnected a disconnected node"
    );
    assert!(closed(&mut fresh_far).await, "the stream was not dropped");
}

#[tokio::test(start_paused = true)]
async fn a_dial_that_lost_to_a_live_accepted_stream_is_dropped_after_its_window() {
    let manager = manager(Planted::none());
    let (node, incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
    // Window: twice the 5 s connect timeout (half the 60 s tick is more).
    tokio::time::sleep(Duration::from_millis(9_990)).await;
    assert!(!closed(&mut fresh_far).await, "dropped before its window");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(
        closed(&mut fresh_far).await,
        "the dial was not dropped after its window"
    );
    // Going down now registers nothing: the dial is gone.
    incumbent.mark_down(DownReason::PeerClosed);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(manager.get_connection(&node).is_none());
}

#[cfg(feature = "planted-bugs")]
#[tokio::test]
async fn down_entry_treated_as_connected_hands_out_the_dead_generation_and_blocks_the_redial() {
    let manager = manager(Planted::bug(PlantedBug::DownEntryTreatedAsConnected));
    let node = NodeName::from("peer@test");
    let old = manager.register(node.clone(), in_memory());
    flip_only(&old);
    let handed_out = manager
        .get_connection(&node)
        .expect("the planted bug did not show");
    assert!(handed_out.is_down());
    let redialed = manager.register(node.clone(), in_memory());
    assert!(
        Arc::ptr_eq(&redialed, &old),
        "the planted bug did not show: the redial got through"
    );
}

/// The inbound caps fit the descriptor limit: untouched when they fit (or
/// there is no limit), lowered in proportion when they do not, refused
/// when the limit leaves no room to serve.
#[test]
fn caps_fit_the_descriptor_limit_or_the_node_refuses_to_start() {
    assert_eq!(fit_caps(None, 256, 1024), Ok(None));
    assert_eq!(fit_caps(Some(20_000), 256, 1024), Ok(None));
    assert_eq!(
        fit_caps(Some(1024 + RESERVED_DESCRIPTORS), 256, 1024),
        Ok(None)
    );
    assert_eq!(
        fit_caps(Some(256), 256, 1024),
        Ok(Some(Fitted {
            max_handshakes: 48,
            max_connections: 256 - RESERVED_DESCRIPTORS,
        }))
    );
    // Never a handshake cap of 0, nor one above the connections.
    assert_eq!(
        fit_caps(Some(RESERVED_DESCRIPTORS + MIN_CONNECTIONS), 1, 1000),
        Ok(Some(Fitted {
            max_handshakes: 1,
            max_connections: MIN_CONNECTIONS,
        }))
    );
    // A limit below the reserve leaves no room at all (never a wrap).
    assert!(fit_caps(Some(10), 256, 1024).is_err());
    assert!(fit_caps(Some(0), 256, 1024).is_err());
    let refused = fit_caps(Some(RESERVED_DESCRIPTORS + MIN_CONNECTIONS - 1), 256, 1024)
        .expect_err("no room to serve");
    assert!(refused.contains("raise it (ulimit -n)"), "{refused}");
}

/// The refused streams a node holds to tell them why fit beside its caps:
/// with fitted caps, half the reserve; with caps that fit, what the limit
/// leaves above them less half the reserve (none where nothing is left);
/// without a limit, all of them.
#[test]
fn refused_streams_held_fit_within_the_limit_beside_the_caps() {
    assert_eq!(lingering_room(None, 1024), LINGERING);
    let fitted = fit_caps(Some(96), 256, 1024).unwrap().unwrap();
    assert_eq!(
        lingering_room(Some(96), fitted.max_connections),
        RESERVED_DESCRIPTORS / 2
    );
    assert_eq!(lingering_room(Some(20_000), 1024), LINGERING);
    assert_eq!(lingering_room(Some(1024 + 64 + 10), 1024), 10 + 64 - 32);
    assert_eq!(lingering_room(Some(1024 + 64), 1024), 32);
    assert_eq!(lingering_room(Some(1024 + 20), 1024), 0);
    for limit in [72, 96, 256, 1024, 1100, 5000] {
        let connections = fit_caps(Some(limit), 256, 1024)
            .unwrap()
            .map_or(1024, |fitted| fitted.max_connections);
        let held = connections + lingering_room(Some(limit), connections);
        assert!(held + RESERVED_DESCRIPTORS / 2 <= limit, "{limit}: {held}");
    }
}
