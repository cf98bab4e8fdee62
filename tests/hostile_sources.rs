//! Fair admission on loopback: one address floods half-open handshakes as
//! fast as it can (silent streams, reopened as soon as they are closed),
//! and honest dials from other addresses keep completing (figures against
//! their usual time: `cargo bench --bench admission`, docs/benchmarks.md). Before, the
//! flood held every `max_handshakes` place for twice the connect timeout
//! each and honest dials were refused (1 of 67 got through); now a stream
//! from a source holding fewer places evicts the oldest handshake of the
//! source holding the most, and one source holds at most
//! `max_handshakes_per_source`.
#![cfg(target_os = "linux")]

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::served::{config, served, served_on};
use lanesim::distribution::Source;
use tokio::net::{TcpSocket, TcpStream};

/// A silent stream to `to` from `from` (a 127.0.0.0/8 address: Linux
/// routes the whole block over loopback).
async fn silent(from: [u8; 4], to: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((from, 0)))?;
    socket.connect(to).await
}

#[test]
fn a_source_is_an_ipv4_address_or_an_ipv6_64() {
    assert_eq!(Source::of("127.0.0.2:4000"), Source::of("127.0.0.2:5000"));
    assert_ne!(Source::of("127.0.0.2:4000"), Source::of("127.0.0.3:4000"));
    assert_eq!(
        Source::of("[2001:db8:1:2::1]:4000"),
        Source::of("[2001:db8:1:2:ffff::9]:80")
    );
    assert_ne!(
        Source::of("[2001:db8:1:2::1]:4000"),
        Source::of("[2001:db8:1:3::1]:4000")
    );
    assert_eq!(Source::of("[::ffff:10.0.0.1]:1"), Source::of("10.0.0.1:2"));
    assert_eq!(Source::of("not an address"), Source::Unknown);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn honest_dials_complete_while_one_address_floods_half_open_handshakes() {
    const HONEST: u32 = 40;
    let mut server_config = config();
    server_config.max_handshakes = 16;
    server_config.connect_timeout = Duration::from_secs(2);
    let server = served("z@test", server_config).await;
    let to: SocketAddr = server.addr.parse().unwrap();
    // The flood: as many silent streams from 127.0.0.2 as it can hold,
    // each reopened the moment the node closes it.
    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicU64::new(0));
    let mut flood = Vec::new();
    for _ in 0..64 {
        let (stop, opened) = (Arc::clone(&stop), Arc::clone(&opened));
        flood.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Ok(mut stream) = silent([127, 0, 0, 2], to).await else {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    continue;
                };
                opened.fetch_add(1, Ordering::Relaxed);
                // Held until the node closes it.
                let mut byte = [0u8; 1];
                let _ = tokio::io::AsyncReadExt::read(&mut stream, &mut byte).await;
            }
        }));
    }
    // The flood holds every place before the first honest dial.
    let filled = Instant::now();
    while server.manager.inbound().handshaking < 16 {
        assert!(
            filled.elapsed() < Duration::from_secs(5),
            "the flood never filled the places"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Honest dials, one after another, each from a node and an address of
    // its own (127.1.0.n), each a full handshake: every one completes,
    // and quickly.
    let mut slowest = Duration::ZERO;
    for n in 0..HONEST {
        let ip = std::net::IpAddr::from([127, 1, 0, u8::try_from(n + 1).unwrap()]);
        let honest = served_on(&format!("h{n}@test"), ip, config()).await;
        let began = Instant::now();
        let dialed = honest
            .manager
            .dial(server.manager.local(), &server.addr)
            .await;
        let took = began.elapsed();
        let connection = dialed.unwrap_or_else(|error| panic!("honest dial {n} failed: {error}"));
        slowest = slowest.max(took);
        connection.mark_down(lanesim::distribution::DownReason::ManualDisconnect);
    }
    stop.store(true, Ordering::Relaxed);
    let stats = server.manager.inbound();
    // The flood met the caps all along (its newest streams refused), and
    // honest streams that found every place held evicted a flooding one.
    assert!(stats.refused > 0 && stats.evicted > 0, "{stats:?}");
    assert!(
        opened.load(Ordering::Relaxed) > 64,
        "the flood kept reopening"
    );
    // A handshake on loopback takes well under a millisecond; the bound
    // leaves room for a loaded CI machine, far below the 4 s a held place
    // made honest dials wait before.
    assert!(
        slowest < Duration::from_secs(1),
        "slowest honest dial {slowest:?}"
    );
    for task in flood {
        task.abort();
    }
    // Every place is given back once every stream has ended, and only once
    // (an evicted place is not given back again when its task ends).
    let quiet = Instant::now();
    loop {
        let now = server.manager.inbound();
        if now.handshaking == 0 && now.open == 0 && now.sources == 0 {
            break;
        }
        assert!(
            quiet.elapsed() < Duration::from_secs(10),
            "places still held: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A dial the node turns away at a cap is told which: a refusal frame in
/// place of the challenge, read by the dialer as `DialError::Refused`, not
/// "bad hello: peer closed the stream".
#[tokio::test]
async fn a_refused_dialer_is_told_which_cap_turned_it_away() {
    let mut server_config = config();
    server_config.max_handshakes_per_source = 2;
    let server = served("z@test", server_config).await;
    let to: SocketAddr = server.addr.parse().unwrap();
    let _held = [
        silent([127, 0, 0, 1], to).await.unwrap(),
        silent([127, 0, 0, 1], to).await.unwrap(),
    ];
    let filled = Instant::now();
    while server.manager.inbound().handshaking < 2 {
        assert!(filled.elapsed() < Duration::from_secs(5), "never held");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let captured = common::capture::Captured::default();
    let _log = captured.install();
    let honest = served("h@test", config()).await;
    let refused = honest
        .manager
        .dial(server.manager.local(), &server.addr)
        .await
        .expect_err("the source's places are held");
    assert!(
        matches!(
            refused,
            lanesim::distribution::DialError::Refused(
                lanesim::distribution::InboundCap::SourceHandshakes
            )
        ),
        "{refused}"
    );
    assert_eq!(
        refused.to_string(),
        "refused: max_handshakes_per_source reached"
    );
    assert_eq!(
        captured
            .matching(&[
                "the cap is reached",
                "cap=\"max_handshakes_per_source\"",
                "limit=2"
            ])
            .len(),
        1,
        "{:#?}",
        captured.records()
    );
}

/// A refusal names its cap; a reason the dialer does not know is quoted
/// escaped in its error (a hostile node's newline cannot forge a log line).
#[tokio::test]
async fn an_unknown_refusal_reason_is_quoted_escaped() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut hello = [0u8; 64];
        let _ = stream.read(&mut hello).await;
        let refusal = lanesim_target::handshake::refused("evil\nFAKE LOG LINE");
        stream.write_all(&refusal).await.unwrap();
        stream.shutdown().await.unwrap();
        let _ = stream.read(&mut hello).await;
    });
    let honest = served("h@test", config()).await;
    let error = honest
        .manager
        .dial(&lanesim::distribution::NodeName::from("x@test"), &addr)
        .await
        .expect_err("refused");
    let text = error.to_string();
    assert!(text.contains("refused by the node"), "{text}");
    assert!(!text.contains('\n'), "{text}");
}

/// A node serving `listener` only once `queued` streams wait in its
/// backlog, so its accept loop admits them back to back, before any of
/// their handshake tasks first runs.
async fn serve_after(
    manager_config: lanesim::distribution::ManagerConfig,
    queued: &[[u8; 4]],
) -> (lanesim::distribution::ConnectionManager, Vec<TcpStream>) {
    use lanesim::distribution::{ConnectionManager, NodeName};
    use lanesim::shim::net::{TokioTcp, Transport};
    let manager =
        ConnectionManager::new(NodeName::from("z@test"), Arc::new(TokioTcp), manager_config)
            .unwrap();
    let listener = TokioTcp.bind("127.0.0.1:0").await.unwrap();
    let to: SocketAddr = listener.local_addr().unwrap().parse().unwrap();
    let mut streams = Vec::new();
    for &from in queued {
        streams.push(silent(from, to).await.unwrap());
    }
    manager.serve(listener);
    (manager, streams)
}

/// Whether the node closed `stream` within `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut byte = [0u8; 64];
    loop {
        match tokio::time::timeout(within, tokio::io::AsyncReadExt::read(stream, &mut byte)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            // A refusal frame: read on to the close.
            Ok(Ok(_)) => {}
        }
    }
}

/// Every handshake place held by one address, a stream from another
/// evicts the oldest, and the evicted stream is closed at once, even when
/// its handshake task had not yet run when it was evicted (the accept loop
/// admits a backlog's streams back to back): the eviction keeps its
/// notice for the task (a permit), or the evicted stream would be held to
/// its hello deadline beside the one that took its place.
#[tokio::test]
async fn an_evicted_handshake_is_closed_at_once_even_before_its_task_first_ran() {
    let mut server_config = config();
    server_config.max_handshakes = 2;
    server_config.connect_timeout = Duration::from_secs(30);
    let (manager, mut streams) = serve_after(
        server_config,
        &[[127, 0, 0, 2], [127, 0, 0, 2], [127, 0, 0, 3]],
    )
    .await;
    assert!(
        closed_within(&mut streams[0], Duration::from_secs(5)).await,
        "the evicted stream was held (its task never heard of the eviction)"
    );
    let stats = manager.inbound();
    assert_eq!((stats.evicted, stats.handshaking), (1, 2), "{stats:?}");
    assert!(
        !closed_within(&mut streams[2], Duration::from_millis(200)).await,
        "the newcomer that evicted was closed"
    );
}

/// Both caps reached (every open place and every handshake place held by
/// one address): a stream from another address is refused at
/// `max_connections`, and evicts nobody. Evicting first would end a
/// handshake for a stream that is refused anyway.
#[tokio::test]
async fn a_stream_refused_for_the_connections_cap_evicts_nobody() {
    let mut server_config = config();
    server_config.max_handshakes = 2;
    server_config.max_connections = 2;
    server_config.connect_timeout = Duration::from_secs(30);
    let (manager, mut streams) = serve_after(
        server_config,
        &[[127, 0, 0, 2], [127, 0, 0, 2], [127, 0, 0, 3]],
    )
    .await;
    assert!(
        closed_within(&mut streams[2], Duration::from_secs(5)).await,
        "the third stream was not refused"
    );
    let stats = manager.inbound();
    assert_eq!((stats.evicted, stats.refused), (0, 1), "{stats:?}");
    for held in &mut streams[..2] {
        assert!(
            !closed_within(held, Duration::from_millis(200)).await,
            "a handshake was ended for a stream refused anyway"
        );
    }
}
