//! The connection layer on real loopback TCP: generations, the once-only down
//! hook, hostile input from the peer, redial, dial/accept, and the link table.

mod common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use common::{framed, log, loopback, manager, record_downs, snapshot, wait_for};
use lanesim::distribution::{
    ConnectionManager, DialError, DownReason, InboundFrame, Link, LinkTable, ManagerConfig,
    NodeName,
};
use lanesim::shim::net::{Connected, TokioTcp, Transport};
use lanesim::shim::rt::RuntimeChoice;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Generations come from one counter per manager: a node's slot is removed
/// once it has no live connection (hostile peers announcing ever new names
/// must not grow the table), and its generations still never go back.
#[tokio::test]
async fn generations_only_grow_even_after_their_slot_is_removed() {
    let manager = manager();
    let node = NodeName::from("peer@test");
    let mut seen = Vec::new();
    let mut peers = Vec::new();
    for _ in 0..3 {
        let (connection, peer) = loopback(&manager, "peer@test").await;
        seen.push(connection.generation());
        peers.push(peer);
        assert!(manager.disconnect_node(&node));
        assert!(manager.get_connection(&node).is_none());
        assert!(
            manager.slots().is_empty(),
            "a slot with no live connection stayed"
        );
    }
    assert_eq!(seen, vec![1, 2, 3]);
    assert!(
        !manager.disconnect_node(&node),
        "nothing left to disconnect"
    );
    // Another node draws from the same counter.
    assert_eq!(loopback(&manager, "other@test").await.0.generation(), 4);
    assert_eq!(loopback(&manager, "peer@test").await.0.generation(), 5);
}

#[tokio::test]
async fn a_live_incumbent_is_kept_and_the_new_stream_dropped() {
    let manager = manager();
    let (first, _peer1) = loopback(&manager, "peer@test").await;
    let (second, mut peer2) = loopback(&manager, "peer@test").await;
    assert!(
        Arc::ptr_eq(&first, &second),
        "a live connection was displaced"
    );
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(5), peer2.read(&mut byte)).await;
    assert_eq!(read.expect("the refused stream is closed").unwrap(), 0);
}

#[test]
fn racing_mark_down_calls_fire_the_hook_once() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for _ in 0..50 {
        // The peer's end stays open through the race: dropped, its end of
        // stream would let the read loop mark the connection down
        // (`PeerClosed`) on the runtime's thread, a fifth racer whose hook
        // may still be running when the four below have returned.
        let (manager, connection, downs, _peer) = runtime.block_on(async {
            let manager = manager();
            let downs = record_downs(&manager);
            let (connection, peer) = loopback(&manager, "peer@test").await;
            (manager, connection, downs, peer)
        });
        let reasons = [
            DownReason::WriteTimeout,
            DownReason::ControlOverflow,
            DownReason::WriteError,
            DownReason::ManualDisconnect,
        ];
        let barrier = Arc::new(Barrier::new(reasons.len()));
        let racers: Vec<_> = reasons
            .into_iter()
            .map(|reason| {
                let (connection, barrier) = (Arc::clone(&connection), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    connection.mark_down(reason);
                })
            })
            .collect();
        for racer in racers {
            racer.join().unwrap();
        }
        let downs = snapshot(&downs);
        assert_eq!(downs.len(), 1, "hook fired {} times", downs.len());
        assert_eq!(
            Some(downs[0].reason),
            connection.down_reason(),
            "the first reason must win"
        );
        assert!(manager
            .get_connection(&NodeName::from("peer@test"))
            .is_none());
    }
}

/// Sends `bytes` from the peer and returns the reason the connection went down.
async fn down_reason_after_peer_sends(bytes: &[u8], close: bool) -> DownReason {
    let manager = manager();
    let downs = record_downs(&manager);
    let (connection, mut peer) = loopback(&manager, "peer@test").await;
    peer.write_all(bytes).await.unwrap();
    if close {
        peer.shutdown().await.unwrap();
    }
    wait_for("connection down", || !snapshot(&downs).is_empty()).await;
    assert_eq!(snapshot(&downs).len(), 1);
    connection.down_reason().unwrap()
}

#[tokio::test]
async fn an_oversized_frame_header_marks_the_connection_down_with_read_error() {
    // Claims 8 GiB: refused at the header, nothing allocated (see dist_frame).
    let header = [0xFFu8; 8];
    assert_eq!(
        down_reason_after_peer_sends(&header, false).await,
        DownReason::ReadError
    );
}

#[tokio::test]
async fn a_truncated_frame_marks_the_connection_down_with_read_error() {
    let mut frame = framed(b"abcdef").to_vec();
    frame.truncate(10);
    assert_eq!(
        down_reason_after_peer_sends(&frame, true).await,
        DownReason::ReadError
    );
    assert_eq!(
        down_reason_after_peer_sends(&[0, 0, 0], true).await,
        DownReason::ReadError
    );
}

#[tokio::test]
async fn end_of_stream_at_a_frame_boundary_is_peer_closed() {
    let mut bytes = framed(b"one").to_vec();
    bytes.extend_from_slice(&lanesim_target::wire::KEEPALIVE);
    assert_eq!(
        down_reason_after_peer_sends(&bytes, true).await,
        DownReason::PeerClosed
    );
}

#[tokio::test]
async fn a_peer_sending_garbage_is_marked_down_and_the_process_lives() {
    // Deterministic garbage: a header that claims a modest body, then noise,
    // then close. Whatever it decodes to, the connection must end ReadError
    // or PeerClosed, never panic.
    let mut garbage = vec![0, 0, 0, 3, 0, 0, 0, 2, 1, 2, 3, 4, 5];
    let mut x: u32 = 0x9E37_79B9;
    for _ in 0..4096 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        garbage.push(x as u8);
    }
    let reason = down_reason_after_peer_sends(&garbage, true).await;
    assert!(
        matches!(reason, DownReason::ReadError | DownReason::PeerClosed),
        "{reason:?}"
    );
}

#[tokio::test]
async fn marking_down_closes_the_socket_so_the_peer_sees_end_of_stream() {
    let manager = manager();
    let (connection, mut peer) = loopback(&manager, "peer@test").await;
    connection.mark_down(DownReason::HeartbeatTimeout);
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(5), peer.read(&mut buf)).await;
    assert_eq!(read.expect("peer sees the close").unwrap(), 0);
    assert!(
        connection.write_raw(&framed(b"late")).await.is_err(),
        "wrote after down"
    );
}

#[tokio::test]
async fn a_down_generation_does_not_block_a_redial() {
    let manager = manager();
    let node = NodeName::from("peer@test");
    let (old, _old_peer) = loopback(&manager, "peer@test").await;
    old.mark_down(DownReason::WriteTimeout);
    assert!(manager.connected_nodes().is_empty());
    let (new, _new_peer) = loopback(&manager, "peer@test").await;
    assert_eq!(new.generation(), 2);
    assert!(Arc::ptr_eq(&manager.get_connection(&node).unwrap(), &new));
    assert_eq!(manager.connected_nodes(), vec![node]);
}

async fn managers_with_inbox() -> (
    ConnectionManager,
    ConnectionManager,
    common::Log<InboundFrame>,
    String,
) {
    let inbox = log::<InboundFrame>();
    let sink = Arc::clone(&inbox);
    let mut config = ManagerConfig::new(RuntimeChoice::current(), common::raw::cookie());
    config.on_frame = Some(Arc::new(move |frame| sink.lock().unwrap().push(frame)));
    let server =
        ConnectionManager::new(NodeName::from("server@test"), Arc::new(TokioTcp), config).unwrap();
    let listener = TokioTcp.bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    server.serve(listener);
    (manager(), server, inbox, addr)
}

#[tokio::test]
async fn dial_announces_the_node_and_accept_registers_it() {
    let (client, server, inbox, addr) = managers_with_inbox().await;
    let node = NodeName::from("server@test");
    let connection = client.dial(&node, &addr).await.expect("dial");
    assert_eq!(connection.generation(), 1);
    assert!(
        Arc::ptr_eq(&client.dial(&node, &addr).await.unwrap(), &connection),
        "redialed a live node"
    );
    connection.write_raw(&framed(b"ping")).await.unwrap();
    wait_for("frame at the server", || !snapshot(&inbox).is_empty()).await;
    let got = snapshot(&inbox);
    assert_eq!(got[0].node.as_str(), "local@test");
    assert_eq!(
        (got[0].generation, got[0].control.as_slice()),
        (1, b"ping".as_slice())
    );
    assert_eq!(server.connected_nodes(), vec![NodeName::from("local@test")]);
}

#[tokio::test]
async fn an_inbound_stream_without_a_hello_is_refused() {
    let (_, server, _, addr) = managers_with_inbox().await;
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    stream.write_all(&framed(b"not a hello")).await.unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut byte)).await;
    assert_eq!(read.expect("refused stream is closed").unwrap(), 0);
    assert!(server.connected_nodes().is_empty());
}

#[tokio::test]
async fn a_dial_to_a_silent_address_times_out() {
    let mut config = ManagerConfig::new(RuntimeChoice::current(), common::raw::cookie());
    config.connect_timeout = Duration::from_millis(100);
    let manager = ConnectionManager::new(
        NodeName::from("local@test"),
        Arc::new(SilentTransport),
        config,
    )
    .unwrap();
    let dialed = manager.dial(&NodeName::from("void@test"), "void:1").await;
    assert!(matches!(dialed, Err(DialError::Timeout)), "{dialed:?}");
}

/// A transport whose connects never finish (a crashed host in simulation).
struct SilentTransport;

impl Transport for SilentTransport {
    fn connect<'a>(
        &'a self,
        _addr: &'a str,
    ) -> lanesim::shim::net::BoxFuture<'a, std::io::Result<lanesim::shim::net::Connected>> {
        Box::pin(std::future::pending())
    }
    fn bind<'a>(
        &'a self,
        _addr: &'a str,
    ) -> lanesim::shim::net::BoxFuture<'a, std::io::Result<Box<dyn lanesim::shim::net::Listener>>>
    {
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_down_generation_delivers_noconnection_for_its_links_only() {
    let manager = manager();
    let delivered = log::<(NodeName, Link)>();
    let sink = Arc::clone(&delivered);
    let links = LinkTable::new(move |node, link| sink.lock().unwrap().push((node.clone(), link)));
    links.attach(&manager);
    let node = NodeName::from("peer@test");
    let (old, _old_peer) = loopback(&manager, "peer@test").await;
    let a = links.link(&old, 10, 20).unwrap();
    let b = links.link(&old, 11, 21).unwrap();
    assert_eq!(
        a,
        Link {
            generation: 1,
            local: 10,
            remote: 20
        }
    );
    old.mark_down(DownReason::WriteTimeout);
    old.mark_down(DownReason::PeerClosed);
    assert_eq!(
        snapshot(&delivered),
        vec![(node.clone(), a), (node.clone(), b)]
    );
    assert!(links.links_over(&node).is_empty());
    // A late hook for generation 1 (after a redial made a generation-2 link)
    // must leave the newer link alone.
    let (new, _new_peer) = loopback(&manager, "peer@test").await;
    let fresh = links.link(&new, 12, 22).unwrap();
    assert_eq!(fresh.generation, 2);
    links.connection_down(&lanesim::distribution::DownEvent {
        node: node.clone(),
        generation: 1,
        reason: DownReason::PeerClosed,
    });
    assert_eq!(
        links.links_over(&node),
        vec![fresh],
        "a newer generation's link was broken"
    );
    assert!(links.unlink(&node, &fresh) && !links.unlink(&node, &fresh));
}

#[tokio::test]
async fn a_link_made_over_a_downed_generation_is_broken_at_once() {
    let manager = manager();
    let delivered = log::<(NodeName, Link)>();
    let sink = Arc::clone(&delivered);
    let links = LinkTable::new(move |node, link| sink.lock().unwrap().push((node.clone(), link)));
    links.attach(&manager);
    let (connection, _peer) = loopback(&manager, "peer@test").await;
    connection.mark_down(DownReason::WriteTimeout);
    assert_eq!(links.link(&connection, 1, 2), None);
    let broken = Link {
        generation: 1,
        local: 1,
        remote: 2,
    };
    assert_eq!(
        snapshot(&delivered),
        vec![(NodeName::from("peer@test"), broken)]
    );
    assert!(links.links_over(&NodeName::from("peer@test")).is_empty());
}

/// A write parked on a peer that does not read (16 MiB: more than the
/// kernel buffers) is abandoned the moment its connection goes down: no
/// more of the frame reaches the socket, and nothing waits for a deadline.
#[tokio::test]
async fn a_write_parked_when_its_connection_goes_down_is_abandoned() {
    let manager = manager();
    let (connection, _peer) = loopback(&manager, "peer@test").await;
    let writer = Arc::clone(&connection);
    let write = tokio::spawn(async move { writer.write_raw(&vec![7u8; 16 << 20]).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!write.is_finished(), "the write should be parked");
    connection.mark_down(DownReason::ManualDisconnect);
    let result = tokio::time::timeout(Duration::from_secs(2), write)
        .await
        .expect("the parked write returned once its connection went down")
        .unwrap();
    assert_eq!(
        result.unwrap_err().kind(),
        std::io::ErrorKind::ConnectionAborted
    );
    assert_eq!(connection.down_reason(), Some(DownReason::ManualDisconnect));
}

/// A write its caller gives up on partway through the frame (here a
/// `timeout` around it; a `select!` or an aborted task is the same) leaves
/// part of a frame on the stream: the connection goes down
/// (`WriteCancelled`) before the writer lock is released, so the next
/// writer is refused instead of following half a frame with a whole one.
/// Before, the connection stayed up and the peer read garbage
/// (`loom_sender::a_write_dropped_mid_frame_*` found it).
#[tokio::test]
async fn a_write_dropped_mid_frame_takes_its_connection_down_before_another_writes() {
    let manager = manager();
    let (connection, _peer) = loopback(&manager, "peer@test").await;
    // 16 MiB against a peer that never reads: the write parks mid-frame.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(50),
        connection.write_raw(&vec![7u8; 16 << 20]),
    )
    .await;
    assert!(
        gave_up.is_err(),
        "the write should still be parked at 50 ms"
    );
    assert_eq!(connection.down_reason(), Some(DownReason::WriteCancelled));
    let next = connection.write_raw(&[0, 0, 0, 0, 0, 0, 0, 0]).await;
    let refused = next.unwrap_err().kind();
    assert!(
        matches!(
            refused,
            std::io::ErrorKind::NotConnected | std::io::ErrorKind::ConnectionAborted
        ),
        "{refused:?}"
    );
}

/// A write queued behind another writer (a slow keepalive, a second
/// producer) gets what is left of its deadline, not a fresh one: the
/// lock wait and the write are bounded together. Here writer A (no
/// deadline) holds the lock until 900 ms, then B's frame meets a reader
/// that reads nothing more. B must fail at its 1 s deadline; with the wait
/// and the write bounded apart it failed at 1.9 s.
#[tokio::test(start_paused = true)]
async fn one_deadline_covers_the_lock_wait_and_the_write() {
    let mut config = ManagerConfig::new(RuntimeChoice::current(), common::raw::cookie());
    config.tick = None;
    let manager =
        ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap();
    let (ours, theirs) = tokio::io::duplex(1024);
    let (read, write) = tokio::io::split(ours);
    let connection = manager.register(
        NodeName::from("peer@test"),
        Connected {
            read: Box::new(read),
            write: Box::new(write),
            peer: "peer".into(),
            local: "local".into(),
        },
    );
    let (mut reader, _their_write) = tokio::io::split(theirs);
    let frame = lanesim_target::wire::encode(b"", &[7u8; 4096]);
    let a = tokio::spawn({
        let (connection, frame) = (Arc::clone(&connection), frame.clone());
        async move { connection.write_raw(&frame).await }
    });
    tokio::task::yield_now().await;
    let deadline = Duration::from_secs(1);
    let started = tokio::time::Instant::now();
    let b = tokio::spawn({
        let (connection, frame) = (Arc::clone(&connection), frame.clone());
        async move { connection.write_frame(&frame, Some(deadline)).await }
    });
    tokio::time::sleep(Duration::from_millis(900)).await;
    // Exactly A's frame; then the reader stops.
    let mut sink = vec![0u8; frame.len()];
    reader.read_exact(&mut sink).await.unwrap();
    a.await.unwrap().unwrap();
    let error = b.await.unwrap().expect_err("B's frame cannot get through");
    let took = started.elapsed();
    assert_eq!(error.kind(), std::io::ErrorKind::TimedOut, "{error}");
    assert!(
        took <= deadline + Duration::from_millis(5),
        "the write held its caller {took:?}, over its {deadline:?} deadline"
    );
    assert_eq!(connection.down_reason(), Some(DownReason::WriteTimeout));
}
