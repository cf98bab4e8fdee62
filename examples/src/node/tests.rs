//! The node's own tests, on loopback TCP and a real tokio runtime, through
//! its target API (a raw peer answers with the crate's handshake): a
//! control and data arriving and a disconnect going down once, cross-dials
//! settling on one socket, keepalives and the heartbeat timeout, and
//! control overflow and shutdown taking pinned generations down.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::handshake::SeededNonces;
use lanesim_target::net::{Connected, Listener, Transport};
use lanesim_target::node::{
    ControlOutcome, DataOutcome, Down, DownReason, Generation, Node, NodeEvents, NodeReports,
    NodeSetup, NodeTarget, Origin, Runtime, Up,
};
use lanesim_target::wire;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use tokio::time;

use super::sync::lock;
use super::ExampleNode;

struct Tcp;

struct TcpListen(TcpListener);

impl Transport for Tcp {
    fn connect<'a>(
        &'a self,
        addr: &'a str,
    ) -> lanesim_target::net::BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move { Connected::from_tcp(TcpStream::connect(addr).await?) })
    }

    fn bind<'a>(
        &'a self,
        addr: &'a str,
    ) -> lanesim_target::net::BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        Box::pin(async move {
            let listener = TcpListener::bind(addr).await?;
            Ok(Box::new(TcpListen(listener)) as Box<dyn Listener>)
        })
    }
}

impl Listener for TcpListen {
    fn accept(&mut self) -> lanesim_target::net::BoxFuture<'_, io::Result<Connected>> {
        Box::pin(async move { Connected::from_tcp(self.0.accept().await?.0) })
    }

    fn local_addr(&self) -> io::Result<String> {
        Ok(self.0.local_addr()?.to_string())
    }
}

type FrameRecord = (String, u64, Vec<u8>, Vec<u8>);

const COOKIE: &[u8] = b"example cookie";

#[derive(Default)]
struct Log {
    ups: Mutex<Vec<(String, u64, Origin)>>,
    downs: Mutex<Vec<(String, u64, DownReason)>>,
    frames: Mutex<Vec<FrameRecord>>,
}

impl NodeEvents for Log {
    fn up(&self, up: Up<'_>) {
        lock(&self.ups).push((up.node.to_owned(), up.generation, up.origin));
    }

    fn down(&self, down: Down<'_>) {
        lock(&self.downs).push((down.node.to_owned(), down.generation, down.reason));
    }

    fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
        let entry = (
            from.node.to_owned(),
            from.generation,
            control.to_vec(),
            payload.to_vec(),
        );
        lock(&self.frames).push(entry);
    }
}

fn start(
    name: &str,
    log: &Arc<Log>,
    heartbeat: Option<Duration>,
    controls: usize,
) -> Box<dyn Node> {
    ExampleNode
        .start(NodeSetup {
            name: name.to_owned(),
            transport: Arc::new(Tcp),
            runtime: Runtime::World(Handle::current()),
            connect_timeout: Duration::from_secs(2),
            write_timeout: Duration::from_secs(2),
            heartbeat,
            max_frame: 1 << 20,
            frame_budget: 4 << 20,
            frame_timeout: None,
            data_capacity: 64,
            control_capacity: controls,
            reports: NodeReports::new(Arc::clone(log) as Arc<dyn NodeEvents>),
            cookie: COOKIE.to_vec(),
            nonces: Arc::new(SeededNonces::new(name.len() as u64)),
            inbound_caps: None,
        })
        .expect("the node starts")
}

async fn serve(node: &dyn Node) -> String {
    let listener = Tcp.bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    node.serve(listener);
    addr
}

async fn eventually(what: &str, check: impl Fn() -> bool) {
    for _ in 0..500 {
        if check() {
            return;
        }
        time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

fn frame(control: &[u8], payload: &[u8]) -> Arc<[u8]> {
    wire::encode(control, payload).into()
}

#[tokio::test]
async fn a_control_arrives_and_a_disconnect_goes_down_once() {
    let (log_a, log_b) = (Arc::new(Log::default()), Arc::new(Log::default()));
    let a = start("a", &log_a, None, 8);
    let b = start("b", &log_b, None, 8);
    let addr = serve(&*b).await;

    let conn = a.dial("b", &addr).await.expect("dial");
    assert_eq!((conn.node(), conn.generation()), ("b", 1));
    assert!(Arc::ptr_eq(&a.connection("b").unwrap(), &conn));
    assert_eq!(a.slot("b"), Some((1, false)));
    assert_eq!(
        a.enqueue_control(&conn, frame(b"ctl", b"one")),
        ControlOutcome::Queued
    );
    assert_eq!(a.enqueue("b", frame(b"data", b"two")), DataOutcome::Queued);
    eventually("both frames at b", || lock(&log_b.frames).len() == 2).await;
    assert_eq!(
        *lock(&log_b.frames),
        vec![
            ("a".to_owned(), 1, b"ctl".to_vec(), b"one".to_vec()),
            ("a".to_owned(), 1, b"data".to_vec(), b"two".to_vec()),
        ]
    );
    assert_eq!(
        *lock(&log_b.ups),
        vec![("a".to_owned(), 1, Origin::Accepted)]
    );

    a.disconnect("b");
    assert!(conn.is_down());
    assert!(a.connection("b").is_none());
    a.disconnect("b");
    eventually("b sees the close", || !lock(&log_b.downs).is_empty()).await;
    time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        *lock(&log_a.downs),
        vec![("b".to_owned(), 1, DownReason::ManualDisconnect)]
    );
    assert_eq!(
        *lock(&log_b.downs),
        vec![("a".to_owned(), 1, DownReason::PeerClosed)]
    );

    // A control pinned to the dead generation is never written anywhere.
    assert_eq!(
        a.enqueue_control(&conn, frame(b"ctl", b"late")),
        ControlOutcome::Queued
    );
    let again = a.dial("b", &addr).await.expect("redial");
    assert_eq!(again.generation(), 2);
    assert_eq!(
        a.enqueue_control(&again, frame(b"ctl", b"three")),
        ControlOutcome::Queued
    );
    eventually("the new control at b", || lock(&log_b.frames).len() == 3).await;
    assert_eq!(
        lock(&log_b.frames)[2],
        ("a".to_owned(), 2, b"ctl".to_vec(), b"three".to_vec())
    );
    let stats = a.stats().unwrap();
    assert_eq!(
        (
            stats.control_written,
            stats.control_skipped,
            stats.data_written
        ),
        (2, 1, 1)
    );
}

#[tokio::test]
async fn cross_dials_settle_on_one_socket() {
    let (log_a, log_b) = (Arc::new(Log::default()), Arc::new(Log::default()));
    let a = start("a", &log_a, None, 8);
    let b = start("b", &log_b, None, 8);
    let (addr_a, addr_b) = (serve(&*a).await, serve(&*b).await);
    let (ab, ba) = tokio::join!(a.dial("b", &addr_b), b.dial("a", &addr_a));
    ab.expect("a dials b");
    ba.expect("b dials a");
    eventually("one agreed socket", || {
        match (a.connection("b"), b.connection("a")) {
            (Some(x), Some(y)) => {
                x.local_addr() == y.peer_addr() && x.peer_addr() == y.local_addr()
            }
            _ => false,
        }
    })
    .await;
    // The socket kept is the one "a" (the lower name) dialed.
    let kept = a.connection("b").unwrap();
    assert_eq!(kept.peer_addr(), addr_b);
    time::sleep(Duration::from_millis(50)).await;
    assert!(a.connection("b").is_some_and(|c| Arc::ptr_eq(&c, &kept)));
}

#[tokio::test]
async fn a_silent_peer_gets_keepalives_then_times_out() {
    let log = Arc::new(Log::default());
    let a = start("a", &log, Some(Duration::from_millis(150)), 8);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let answer = async {
        let (socket, _) = listener.accept().await.unwrap();
        let mut connected = Connected::from_tcp(socket).unwrap();
        let proved = crate::handshake::accept(&mut connected, "peer", COOKIE, [5; 16]).await;
        (connected, proved)
    };
    let (conn, (mut socket, proved)) = tokio::join!(a.dial("peer", &addr), answer);
    let conn = conn.expect("dial");
    let (name, leftover) = proved.expect("a proved the cookie");
    assert_eq!(name, "a");

    // Its first keepalive, perhaps read with the proof already.
    let mut got = leftover;
    let mut byte = [0_u8; 1];
    while got.len() < wire::HEADER_LEN {
        socket.read.read_exact(&mut byte).await.unwrap();
        got.push(byte[0]);
    }
    assert_eq!(&got[..wire::HEADER_LEN], &wire::KEEPALIVE[..]);

    eventually("the heartbeat timeout", || conn.is_down()).await;
    assert_eq!(
        *lock(&log.downs),
        vec![("peer".to_owned(), 1, DownReason::HeartbeatTimeout)]
    );
}

/// A raw peer named `name` accepting one dial and answering its
/// handshake.
async fn answer(listener: &TcpListener, name: &str) -> Connected {
    let (socket, _) = listener.accept().await.unwrap();
    let mut connected = Connected::from_tcp(socket).unwrap();
    crate::handshake::accept(&mut connected, name, COOKIE, [6; 16])
        .await
        .expect("the dialer proved the cookie");
    connected
}

#[tokio::test]
async fn overflow_and_shutdown_take_pinned_generations_down() {
    let log = Arc::new(Log::default());
    let a = start("a", &log, None, 1);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let (first, _p1) = tokio::join!(a.dial("p", &addr), answer(&listener, "p"));
    let first = first.unwrap();
    // No await in between: the writer has not run yet.
    assert_eq!(
        a.enqueue_control(&first, frame(b"c", b"1")),
        ControlOutcome::Queued
    );
    assert_eq!(
        a.enqueue_control(&first, frame(b"c", b"2")),
        ControlOutcome::Overflow
    );
    assert!(first.is_down());
    assert_eq!(
        *lock(&log.downs),
        vec![("p".to_owned(), 1, DownReason::ControlOverflow)]
    );

    let (second, _p2) = tokio::join!(a.dial("p", &addr), answer(&listener, "p"));
    let second = second.unwrap();
    assert_eq!(second.generation(), 2);
    assert_eq!(
        a.enqueue_control(&second, frame(b"c", b"3")),
        ControlOutcome::Queued
    );
    a.shutdown();
    assert!(second.is_down());
    assert_eq!(
        a.enqueue("p", frame(b"d", b"x")),
        DataOutcome::DroppedClosed
    );
    assert_eq!(
        a.enqueue_control(&second, frame(b"c", b"4")),
        ControlOutcome::Closed
    );
    time::sleep(Duration::from_millis(20)).await;
    assert_eq!(lock(&log.downs).len(), 2);
    assert_eq!(
        lock(&log.downs)[1],
        ("p".to_owned(), 2, DownReason::ManualDisconnect)
    );
    assert_eq!(a.stats().unwrap().control_discarded, 1);
}
