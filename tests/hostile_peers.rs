//! A real `ConnectionManager` on loopback (127.0.0.1 only) against the
//! attacks a hostile network can make, one test per attack. Each asserts
//! that the node stays up, that a well-behaved peer still connects and is
//! delivered to afterwards, and that only the offender is refused, with the
//! reason logged. (Descriptor exhaustion lowers the process's descriptor
//! limit, so it has its own test binary: `tests/hostile_descriptors.rs`.)
//!
//! Every wait is bounded; the tests that read the log run on a
//! current-thread runtime, where the node's tasks log on the test's thread.

mod common;

use common::capture::Captured;
use common::raw::{closed_by_the_other_end, raw_peer};
use common::served::{an_honest_peer_is_delivered, config, served, Memory};
use common::wait_for;
use lanesim::distribution::NodeName;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

/// A port scanner that resets every connection it opens (SO_LINGER 0): a
/// reset that lands before `accept` finishes reading the peer's address
/// comes back as accept's own error (ENOTCONN), which used to end the accept
/// loop for good after a few dozen resets. Now each such error is skipped
/// and counted, and the node serves the next peer.
#[tokio::test]
async fn resets_before_accept_never_stop_the_listener() {
    let captured = Captured::default();
    let _log = captured.install();
    let node = served("z@test", config()).await;
    let memory = Memory::now();
    let mut resets = 0;
    // The issue measured the first failing accept after 8 to 118 resets.
    while node.manager.inbound().skipped == 0 && resets < 4000 {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_zero_linger().unwrap();
        let stream = socket.connect(node.addr.parse().unwrap()).await.unwrap();
        drop(stream);
        resets += 1;
        if resets % 16 == 0 {
            tokio::task::yield_now().await;
        }
    }
    wait_for("the node to see the resets", || {
        node.manager.inbound().handshaking == 0
    })
    .await;
    let stats = node.manager.inbound();
    assert!(
        stats.skipped >= 1,
        "no reset reached accept as its own error in {resets} resets: {stats:?}"
    );
    an_honest_peer_is_delivered(&node, "a@test", b"after the scan").await;
    memory.grew_less_than(64 << 20, "the reset flood");
    assert!(
        !captured
            .matching(&["inbound connection failed before its hello"])
            .is_empty(),
        "the skipped accept error is not logged: {:?}",
        captured.records()
    );
    assert_eq!(
        node.manager.inbound().backed_off,
        0,
        "{:?}",
        node.manager.inbound()
    );
}

/// Streams that never send a hello fill `max_handshakes`; streams that do
/// and stay fill `max_connections`. The newest stream past either cap is
/// closed at once, the burst is logged once with the knob's name, and the
/// caps free up as streams end, so an honest peer gets in afterwards.
#[tokio::test]
async fn caps_refuse_the_newest_stream_and_say_which_cap() {
    let captured = Captured::default();
    let _log = captured.install();
    let mut limits = config();
    limits.max_handshakes = 3;
    limits.max_connections = 5;
    let node = served("z@test", limits).await;
    let memory = Memory::now();

    // Three silent streams hold every handshake place.
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(TcpStream::connect(&node.addr).await.unwrap());
    }
    wait_for("three handshakes", || {
        node.manager.inbound().handshaking == 3
    })
    .await;
    for _ in 0..2 {
        let mut newest = TcpStream::connect(&node.addr).await.unwrap();
        closed_by_the_other_end(&mut newest, "a stream past max_handshakes").await;
    }
    let refusals = captured.matching(&["the cap is reached", "cap=\"max_handshakes\"", "limit=3"]);
    assert_eq!(
        refusals.len(),
        1,
        "one log line per burst: {:?}",
        captured.records()
    );
    assert_eq!(node.manager.inbound().refused, 2);
    drop(silent);
    wait_for("the silent streams to end", || {
        node.manager.inbound().handshaking == 0
    })
    .await;

    // Five peers that say hello and stay hold every open place.
    let mut staying = Vec::new();
    for i in 0..5 {
        staying.push(raw_peer(&node.addr, format!("p{i}@test").as_bytes()).await);
    }
    wait_for("five open streams", || {
        node.manager.connected_nodes().len() == 5 && node.manager.inbound().open == 5
    })
    .await;
    let mut sixth = raw_peer(&node.addr, b"p5@test").await;
    closed_by_the_other_end(&mut sixth, "a stream past max_connections").await;
    assert_eq!(
        captured
            .matching(&["the cap is reached", "cap=\"max_connections\"", "limit=5"])
            .len(),
        1,
        "{:?}",
        captured.records()
    );
    assert!(node
        .manager
        .get_connection(&NodeName::from("p5@test"))
        .is_none());
    // One leaves: its place is free again.
    let mut leaving = staying.pop().unwrap();
    leaving.shutdown().await.unwrap();
    drop(leaving);
    wait_for("a place to free", || node.manager.inbound().open == 4).await;
    an_honest_peer_is_delivered(&node, "a@test", b"after the flood").await;
    memory.grew_less_than(64 << 20, "the flood past the caps");
    assert!(
        !captured
            .matching(&["inbound connections admitted again", "refused=1"])
            .is_empty(),
        "{:?}",
        captured.records()
    );
    // Nobody else was turned away.
    assert_eq!(node.manager.inbound().refused, 3);
    assert_eq!(node.manager.connected_nodes().len(), 5);
}

/// Planted bug #14: the loop that ends on the first accept error. The same
/// reset flood then takes the node off the network: a connect is refused.
#[cfg(feature = "planted-bugs")]
#[tokio::test]
async fn with_planted_14_a_reset_flood_stops_the_listener() {
    use lanesim::planted::{Planted, PlantedBug};
    let mut planted = config();
    planted.planted = Planted::bug(PlantedBug::AcceptLoopStopsOnError);
    let node = served("z@test", planted).await;
    let mut refused = None;
    for resets in 0..4000 {
        let socket = TcpSocket::new_v4().unwrap();
        socket.set_zero_linger().unwrap();
        match socket.connect(node.addr.parse().unwrap()).await {
            Ok(stream) => drop(stream),
            Err(error) => {
                refused = Some((resets, error));
                break;
            }
        }
        if resets % 16 == 0 {
            tokio::task::yield_now().await;
        }
    }
    let (resets, error) = refused.expect("the listener outlived 4000 resets");
    assert_eq!(
        error.kind(),
        std::io::ErrorKind::ConnectionRefused,
        "after {resets} resets"
    );
}
