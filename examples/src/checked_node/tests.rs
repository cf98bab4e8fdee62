//! Unit tests of the checked node over real loopback TCP (node to node, and
//! against a bare peer written from `lanesim_target::handshake`) and over
//! in-memory streams (`tokio::io::duplex`) for the write path and the
//! reader alone.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::handshake::{self as hs, Role, SeededNonces, Transcript};
use lanesim_target::net::{BoxFuture, Connected, Listener, Transport};
use lanesim_target::node::{
    Conn, Connection, ControlOutcome, DataOutcome, DialFailure, Down, DownReason, Generation, Node,
    NodeCapabilities, NodeEvents, NodeReports, NodeSetup, NodeTarget, Origin, Runtime, SenderLane,
    Up, WriteOutcome,
};
use lanesim_target::wire::{self, encode, HEADER_LEN, KEEPALIVE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{sleep, Instant};

use super::connection::{Link, WriteError};
use super::shared::Shared;
use super::{reader, CheckedNode};

const COOKIE: &[u8] = b"the test cluster's cookie";

// ---- what a node reports ----

#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Up {
        node: String,
        generation: u64,
        origin: Origin,
    },
    Down {
        node: String,
        generation: u64,
        reason: DownReason,
    },
    Frame {
        node: String,
        generation: u64,
        control: Vec<u8>,
        payload: Vec<u8>,
    },
    Started {
        generation: u64,
        lane: SenderLane,
    },
    Finished {
        generation: u64,
        lane: SenderLane,
        frame: Vec<u8>,
        outcome: WriteOutcome,
    },
    Skipped {
        generation: u64,
        frame: Vec<u8>,
    },
    Unroutable {
        node: String,
    },
}

#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<Event>>,
}

impl Recorder {
    fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }

    fn push(&self, event: Event) {
        self.events.lock().unwrap().push(event);
    }

    fn frames(&self) -> Vec<(String, u64, Vec<u8>, Vec<u8>)> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                Event::Frame {
                    node,
                    generation,
                    control,
                    payload,
                } => Some((node, generation, control, payload)),
                _ => None,
            })
            .collect()
    }

    fn downs(&self) -> Vec<(String, u64, DownReason)> {
        self.events()
            .into_iter()
            .filter_map(|event| match event {
                Event::Down {
                    node,
                    generation,
                    reason,
                } => Some((node, generation, reason)),
                _ => None,
            })
            .collect()
    }
}

impl NodeEvents for Recorder {
    fn up(&self, up: Up<'_>) {
        self.push(Event::Up {
            node: up.node.to_owned(),
            generation: up.generation,
            origin: up.origin,
        });
    }

    fn down(&self, down: Down<'_>) {
        self.push(Event::Down {
            node: down.node.to_owned(),
            generation: down.generation,
            reason: down.reason,
        });
    }

    fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
        self.push(Event::Frame {
            node: from.node.to_owned(),
            generation: from.generation,
            control: control.to_vec(),
            payload: payload.to_vec(),
        });
    }

    fn write_started(&self, to: Generation<'_>, lane: SenderLane, _frame: &[u8]) {
        self.push(Event::Started {
            generation: to.generation,
            lane,
        });
    }

    fn write_finished(
        &self,
        to: Generation<'_>,
        lane: SenderLane,
        frame: &[u8],
        outcome: WriteOutcome,
    ) {
        self.push(Event::Finished {
            generation: to.generation,
            lane,
            frame: frame.to_vec(),
            outcome,
        });
    }

    fn control_skipped(&self, pinned: Generation<'_>, frame: &[u8]) {
        self.push(Event::Skipped {
            generation: pinned.generation,
            frame: frame.to_vec(),
        });
    }

    fn data_unroutable(&self, node: &str, _frame: &[u8]) {
        self.push(Event::Unroutable {
            node: node.to_owned(),
        });
    }
}

// ---- real loopback TCP as a transport ----

struct Loopback;

struct LoopbackListener(TcpListener);

impl Transport for Loopback {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move { Connected::from_tcp(TcpStream::connect(addr).await?) })
    }

    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        Box::pin(async move {
            let listener = TcpListener::bind(addr).await?;
            Ok(Box::new(LoopbackListener(listener)) as Box<dyn Listener>)
        })
    }
}

impl Listener for LoopbackListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<Connected>> {
        Box::pin(async move { Connected::from_tcp(self.0.accept().await?.0) })
    }

    fn local_addr(&self) -> io::Result<String> {
        Ok(self.0.local_addr()?.to_string())
    }
}

fn setup(name: &str, recorder: &Arc<Recorder>, seed: u64) -> NodeSetup {
    NodeSetup {
        name: name.to_owned(),
        transport: Arc::new(Loopback),
        runtime: Runtime::World(tokio::runtime::Handle::current()),
        connect_timeout: Duration::from_secs(2),
        write_timeout: Duration::from_secs(1),
        heartbeat: None,
        max_frame: 1 << 20,
        frame_budget: 1 << 24,
        frame_timeout: None,
        data_capacity: 1024,
        control_capacity: 64,
        reports: NodeReports::new(Arc::clone(recorder) as Arc<dyn NodeEvents>),
        cookie: COOKIE.to_vec(),
        nonces: Arc::new(SeededNonces::new(seed)),
        inbound_caps: None,
    }
}

fn start(setup: NodeSetup) -> Box<dyn Node> {
    CheckedNode.start(setup).expect("the node starts")
}

/// Starts a node named `name` accepting on loopback; the node and its
/// address.
async fn serving(setup: NodeSetup) -> (Box<dyn Node>, String) {
    let listener = Loopback.bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let node = start(setup);
    node.serve(listener);
    (node, addr)
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        sleep(Duration::from_millis(5)).await;
    }
}

// ---- a bare peer, written from the API's handshake helpers ----

async fn read_raw_frame(stream: &mut TcpStream) -> io::Result<Vec<u8>> {
    let mut frame = vec![0; HEADER_LEN];
    stream.read_exact(&mut frame).await?;
    let header: [u8; HEADER_LEN] = frame[..].try_into().unwrap();
    let body = usize::try_from(wire::body_len(&header)).unwrap();
    frame.resize(HEADER_LEN + body, 0);
    stream.read_exact(&mut frame[HEADER_LEN..]).await?;
    Ok(frame)
}

/// What each stream a bare peer accepted carried, in accept order.
type Carried = Arc<Mutex<Vec<Arc<Mutex<Vec<u8>>>>>>;

/// A peer named `name` that accepts streams and proves the cookie; what
/// each stream carried after the handshake, by stream in accept order.
struct BarePeer {
    addr: String,
    streams: Carried,
}

impl BarePeer {
    async fn start(name: &'static str, close_after_handshake: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let streams: Carried = Arc::default();
        let all = Arc::clone(&streams);
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let carried = Arc::new(Mutex::new(Vec::new()));
                all.lock().unwrap().push(Arc::clone(&carried));
                tokio::spawn(async move {
                    let hello = read_raw_frame(&mut stream).await.unwrap();
                    let (hello, _) = wire::decode(&hello, 1024).unwrap().unwrap();
                    let hello = hs::parse_hello(&hello).unwrap();
                    let transcript = Transcript {
                        dialer: hello.name,
                        acceptor: name.as_bytes(),
                        dialer_nonce: hello.nonce,
                        acceptor_nonce: [9; hs::NONCE_LEN],
                    };
                    let challenge = hs::challenge(&transcript, COOKIE);
                    stream.write_all(&challenge).await.unwrap();
                    let proof = read_raw_frame(&mut stream).await.unwrap();
                    let (proof, _) = wire::decode(&proof, 1024).unwrap().unwrap();
                    let proof = hs::parse_proof(&proof).unwrap();
                    assert!(transcript.verify(COOKIE, Role::Dialer, &proof));
                    if close_after_handshake {
                        return;
                    }
                    let mut chunk = [0; 4096];
                    while let Ok(n @ 1..) = stream.read(&mut chunk).await {
                        carried.lock().unwrap().extend_from_slice(&chunk[..n]);
                    }
                });
            }
        });
        Self { addr, streams }
    }

    fn carried(&self, stream: usize) -> Vec<u8> {
        let streams = self.streams.lock().unwrap();
        streams
            .get(stream)
            .map(|carried| carried.lock().unwrap().clone())
            .unwrap_or_default()
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

// ---- node to node ----

#[tokio::test]
async fn a_frame_round_trips_between_two_nodes() {
    let (a_seen, b_seen) = (Arc::new(Recorder::default()), Arc::new(Recorder::default()));
    let (b, b_addr) = serving(setup("b", &b_seen, 2)).await;
    let a = start(setup("a", &a_seen, 1));
    let conn = a.dial("b", &b_addr).await.expect("a dials b");
    assert_eq!(
        (conn.node(), conn.generation(), conn.is_down()),
        ("b", 1, false)
    );
    until("b registers a", || b.connection("a").is_some()).await;
    assert_eq!(
        b.connection("a").unwrap().peer_addr(),
        conn.local_addr(),
        "both ends name the same socket"
    );

    let out = encode(b"ctl", b"hello from a");
    assert_eq!(a.enqueue("b", out.clone().into()), DataOutcome::Queued);
    until("b reads a's frame", || !b_seen.frames().is_empty()).await;
    assert_eq!(
        b_seen.frames(),
        vec![("a".into(), 1, b"ctl".to_vec(), b"hello from a".to_vec())]
    );
    assert!(a_seen.events().contains(&Event::Finished {
        generation: 1,
        lane: SenderLane::Data,
        frame: out,
        outcome: WriteOutcome::Written
    }));

    assert_eq!(
        b.enqueue("a", encode(b"", b"and back").into()),
        DataOutcome::Queued
    );
    until("a reads b's frame", || !a_seen.frames().is_empty()).await;
    assert_eq!(
        a_seen.frames(),
        vec![("b".into(), 1, Vec::new(), b"and back".to_vec())]
    );
    assert_eq!(
        a_seen.events()[0],
        Event::Up {
            node: "b".into(),
            generation: 1,
            origin: Origin::Dialed
        }
    );
    assert_eq!(
        b_seen.events()[0],
        Event::Up {
            node: "a".into(),
            generation: 1,
            origin: Origin::Accepted
        }
    );
    let stats = a.stats().unwrap();
    assert_eq!((stats.data_queued, stats.data_written), (1, 1));
}

#[tokio::test]
async fn data_for_one_node_arrives_in_enqueue_order() {
    let (a_seen, b_seen) = (Arc::new(Recorder::default()), Arc::new(Recorder::default()));
    let (_b, b_addr) = serving(setup("b", &b_seen, 2)).await;
    let a = start(setup("a", &a_seen, 1));
    a.dial("b", &b_addr).await.unwrap();
    let count = 500_u32;
    for i in 0..count {
        let frame = encode(b"seq", &i.to_be_bytes());
        assert_eq!(a.enqueue("b", frame.into()), DataOutcome::Queued);
    }
    until("every frame arrives", || {
        b_seen.frames().len() == count as usize
    })
    .await;
    let order: Vec<u32> = b_seen
        .frames()
        .iter()
        .map(|(_, _, _, payload)| u32::from_be_bytes(payload[..].try_into().unwrap()))
        .collect();
    assert_eq!(order, (0..count).collect::<Vec<_>>());
}

#[tokio::test]
async fn cross_dials_settle_on_one_socket_both_ends_agree_on() {
    let (a_seen, b_seen) = (Arc::new(Recorder::default()), Arc::new(Recorder::default()));
    let (a, a_addr) = serving(setup("a", &a_seen, 1)).await;
    let (b, b_addr) = serving(setup("b", &b_seen, 2)).await;
    let (from_a, from_b) = tokio::join!(a.dial("b", &b_addr), b.dial("a", &a_addr));
    from_a.unwrap();
    from_b.unwrap();
    until("both ends hold the same live socket", || {
        match (a.connection("b"), b.connection("a")) {
            (Some(ab), Some(ba)) => {
                ab.local_addr() == ba.peer_addr() && ab.peer_addr() == ba.local_addr()
            }
            _ => false,
        }
    })
    .await;
    // The socket kept is the one dialed by the lower name, "a".
    let kept = a.connection("b").unwrap();
    assert_eq!(kept.peer_addr(), b_addr);
}

#[tokio::test]
async fn a_dial_to_a_node_without_the_cookie_is_refused() {
    let (a_seen, b_seen) = (Arc::new(Recorder::default()), Arc::new(Recorder::default()));
    let mut other = setup("b", &b_seen, 2);
    other.cookie = b"another cluster".to_vec();
    let (b, b_addr) = serving(other).await;
    let a = start(setup("a", &a_seen, 1));
    assert_eq!(
        a.dial("b", &b_addr).await.err(),
        Some(DialFailure::Unauthenticated)
    );
    assert_eq!(
        a.dial("x y", &b_addr).await.err(),
        Some(DialFailure::BadName)
    );
    sleep(Duration::from_millis(50)).await;
    assert!(b.connection("a").is_none());
    assert!(a_seen.events().is_empty() && b_seen.events().is_empty());
}

// ---- against a bare peer ----

#[tokio::test]
async fn a_peer_closing_its_stream_takes_the_generation_down() {
    let seen = Arc::new(Recorder::default());
    let peer = BarePeer::start("b", true).await;
    let a = start(setup("a", &seen, 1));
    let conn = a.dial("b", &peer.addr).await.unwrap();
    until("the generation goes down", || conn.is_down()).await;
    assert_eq!(seen.downs(), vec![("b".into(), 1, DownReason::PeerClosed)]);
    assert!(a.connection("b").is_none());
    assert_eq!(a.slot("b"), None, "a down generation leaves the table");

    assert_eq!(
        a.enqueue("b", encode(b"", b"late").into()),
        DataOutcome::Queued
    );
    until("the frame is dropped", || {
        seen.events()
            .contains(&Event::Unroutable { node: "b".into() })
    })
    .await;
}

#[tokio::test]
async fn a_control_pinned_to_a_dead_generation_is_not_written_to_the_next() {
    let seen = Arc::new(Recorder::default());
    let peer = BarePeer::start("b", false).await;
    let a = start(setup("a", &seen, 1));
    let first: Conn = a.dial("b", &peer.addr).await.unwrap();

    // Queued while generation 1 is live, which goes down before the drain
    // runs (no await in between).
    let early = encode(b"early-control", b"for generation 1");
    assert_eq!(
        a.enqueue_control(&first, early.clone().into()),
        ControlOutcome::Queued
    );
    a.disconnect("b");
    assert!(first.is_down());

    let second = a.dial("b", &peer.addr).await.unwrap();
    assert_eq!(second.generation(), 2);
    // Queued for generation 1 while generation 2 is live.
    let late = encode(b"late-control", b"for generation 1");
    assert_eq!(
        a.enqueue_control(&first, late.clone().into()),
        ControlOutcome::Queued
    );
    let marker = encode(b"marker", b"data after both controls");
    assert_eq!(a.enqueue("b", marker.clone().into()), DataOutcome::Queued);

    until("the marker reaches generation 2", || {
        contains(&peer.carried(1), &marker)
    })
    .await;
    assert_eq!(
        peer.carried(1),
        marker,
        "generation 2 carried the marker only"
    );
    assert!(
        !contains(&peer.carried(0), b"control"),
        "nor did generation 1"
    );
    let events = seen.events();
    for frame in [early, late] {
        assert!(events.contains(&Event::Skipped {
            generation: 1,
            frame
        }));
    }
    assert_eq!(a.stats().unwrap().control_skipped, 2);
    assert_eq!(
        seen.downs(),
        vec![("b".into(), 1, DownReason::ManualDisconnect)]
    );
}

#[tokio::test]
async fn a_full_control_queue_takes_its_generation_down() {
    let seen = Arc::new(Recorder::default());
    let peer = BarePeer::start("b", false).await;
    let mut node = setup("a", &seen, 1);
    node.control_capacity = 1;
    let a = start(node);
    let conn = a.dial("b", &peer.addr).await.unwrap();
    let frame = || encode(b"ctl", b"x").into();
    assert_eq!(a.enqueue_control(&conn, frame()), ControlOutcome::Queued);
    assert_eq!(a.enqueue_control(&conn, frame()), ControlOutcome::Overflow);
    assert!(conn.is_down(), "down by the time Overflow is answered");
    assert_eq!(
        seen.downs(),
        vec![("b".into(), 1, DownReason::ControlOverflow)]
    );
    a.shutdown();
    assert_eq!(a.enqueue("b", frame()), DataOutcome::DroppedClosed);
    assert_eq!(a.enqueue_control(&conn, frame()), ControlOutcome::Closed);
}

// ---- in memory: the write path and the reader alone ----

/// A node's shared state and one generation of it writing to `write`.
fn link_over(write: tokio::io::DuplexStream, seen: &Arc<Recorder>) -> (Arc<Shared>, Arc<Link>) {
    let mut node = setup("a", seen, 1);
    node.write_timeout = Duration::from_millis(50);
    node.max_frame = 64;
    let shared = Arc::new(Shared::new(node));
    let link = Link::new(
        &shared,
        "b",
        1,
        Origin::Dialed,
        "local:1".into(),
        "peer:2".into(),
        Box::new(write),
    );
    (shared, link)
}

#[tokio::test]
async fn a_write_to_a_down_generation_is_refused_before_anything_else() {
    let seen = Arc::new(Recorder::default());
    let (mine, mut theirs) = tokio::io::duplex(1024);
    let (_shared, link) = link_over(mine, &seen);
    let frame = encode(b"c", b"p");
    link.write_frame(&frame, || {}).await.unwrap();
    let mut read = vec![0; frame.len()];
    theirs.read_exact(&mut read).await.unwrap();
    assert_eq!(read, frame);

    assert!(link.mark_down(DownReason::ManualDisconnect));
    assert!(!link.mark_down(DownReason::WriteError), "down once");
    let mut started = false;
    assert_eq!(
        link.write_frame(&frame, || started = true).await,
        Err(WriteError::Down)
    );
    assert!(!started);
    assert_eq!(
        seen.downs(),
        vec![("b".into(), 1, DownReason::ManualDisconnect)]
    );
    let mut rest = Vec::new();
    theirs.read_to_end(&mut rest).await.unwrap();
    assert!(
        rest.is_empty(),
        "closed, and nothing written after the down"
    );
}

#[tokio::test]
async fn a_write_past_its_deadline_takes_the_generation_down() {
    let seen = Arc::new(Recorder::default());
    let (mine, _theirs) = tokio::io::duplex(16);
    let (_shared, link) = link_over(mine, &seen);
    let big = encode(b"", &[7; 1000]);
    assert_eq!(
        link.write_frame(&big, || {}).await,
        Err(WriteError::TimedOut)
    );
    assert!(link.is_down());
    assert_eq!(
        seen.downs(),
        vec![("b".into(), 1, DownReason::WriteTimeout)]
    );
}

#[tokio::test]
async fn the_reader_reports_frames_and_tells_a_clean_end_from_a_torn_one() {
    for (tail, reason) in [
        (Vec::new(), DownReason::PeerClosed),
        (encode(b"", b"torn")[..10].to_vec(), DownReason::ReadError),
        (encode(b"", &[0; 65]), DownReason::ReadError),
    ] {
        let seen = Arc::new(Recorder::default());
        let (mine, _unused) = tokio::io::duplex(1024);
        let (shared, link) = link_over(mine, &seen);
        let (read, mut theirs) = tokio::io::duplex(1024);
        let task = tokio::spawn(reader::run(shared, Arc::clone(&link), Box::new(read)));
        theirs.write_all(&encode(b"one", b"1")).await.unwrap();
        theirs.write_all(&KEEPALIVE).await.unwrap();
        theirs
            .write_all(&encode(b"two", &[2; 64 - 3]))
            .await
            .unwrap();
        theirs.write_all(&tail).await.unwrap();
        drop(theirs);
        task.await.unwrap();
        assert_eq!(
            seen.frames(),
            vec![
                ("b".into(), 1, b"one".to_vec(), b"1".to_vec()),
                ("b".into(), 1, b"two".to_vec(), vec![2; 61]),
            ]
        );
        assert_eq!(seen.downs(), vec![("b".into(), 1, reason)]);
    }
}

#[test]
fn the_target_declares_what_it_reports() {
    let NodeCapabilities {
        accepts,
        heartbeat,
        drain,
        stats,
        table,
        links,
        frame_budget,
        frame_deadline,
        fixed,
        hazards,
        sites,
        descriptors,
    } = CheckedNode.capabilities();
    assert!(accepts && heartbeat && drain && stats && table);
    assert!(!links, "the world keeps its links");
    assert!(!descriptors, "it has no inbound caps to fit");
    assert!(frame_deadline && !frame_budget);
    assert_eq!(fixed, lanesim_target::node::NodeFixed::default());
    assert!(hazards.is_empty(), "it keeps S9: nothing to accept");
    assert!(sites.marks.is_empty() && sites.points.is_empty());
    assert!(super::handshake::valid_name(b"node-1.a_b@host"));
    for bad in [&b""[..], b"a b", b"caf\xc3\xa9", &[b'a'; 256]] {
        assert!(!super::handshake::valid_name(bad));
    }
}
