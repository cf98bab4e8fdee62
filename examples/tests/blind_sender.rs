//! The blind sender ([`lanesim_examples::blind_sender`]) against a fake
//! connection layer: order, pinning, overflow, deadlines and shutdown.

use std::any::Any;
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_examples::blind_sender::BlindSenderTarget;
use lanesim_target::layer::{
    ConnectionLayer, LayerConn, LayerConnection, Sender, SenderSetup, SenderTarget,
};
use lanesim_target::node::{
    BoxFuture, Connection, ControlOutcome, DataOutcome, Down, DownReason, Generation, NodeEvents,
    NodeReports, Runtime, SenderLane, Up, WriteOutcome,
};

/// Everything the fake sockets carried, in order: (node, generation, frame).
type Wire = Arc<Mutex<Vec<(String, u64, Vec<u8>)>>>;

struct FakeConn {
    node: String,
    generation: u64,
    down: Mutex<Option<DownReason>>,
    /// Writes never finish (a wedged peer).
    stuck: bool,
    wire: Wire,
}

impl FakeConn {
    fn reason(&self) -> Option<DownReason> {
        *self.down.lock().unwrap()
    }
}

impl Connection for FakeConn {
    fn node(&self) -> &str {
        &self.node
    }
    fn generation(&self) -> u64 {
        self.generation
    }
    fn is_down(&self) -> bool {
        self.reason().is_some()
    }
    fn local_addr(&self) -> &str {
        "10.0.0.1:1"
    }
    fn peer_addr(&self) -> &str {
        "10.0.0.2:2"
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl LayerConnection for FakeConn {
    fn write_raw<'a>(&'a self, frame: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            if self.is_down() {
                return Err(io::Error::new(io::ErrorKind::NotConnected, "down"));
            }
            if self.stuck {
                std::future::pending::<()>().await;
            }
            self.wire
                .lock()
                .unwrap()
                .push((self.node.clone(), self.generation, frame.to_vec()));
            Ok(())
        })
    }

    fn mark_down(&self, reason: DownReason) {
        self.down.lock().unwrap().get_or_insert(reason);
    }

    fn as_connection(self: Arc<Self>) -> Arc<dyn Connection> {
        self
    }
}

#[derive(Default)]
struct FakeLayer {
    live: Mutex<HashMap<String, Arc<FakeConn>>>,
    wire: Wire,
}

impl FakeLayer {
    fn connect(&self, node: &str, generation: u64, stuck: bool) -> Arc<FakeConn> {
        let conn = Arc::new(FakeConn {
            node: node.to_owned(),
            generation,
            down: Mutex::new(None),
            stuck,
            wire: Arc::clone(&self.wire),
        });
        self.live
            .lock()
            .unwrap()
            .insert(node.to_owned(), Arc::clone(&conn));
        conn
    }

    fn frames(&self) -> Vec<(String, u64, Vec<u8>)> {
        self.wire.lock().unwrap().clone()
    }
}

impl ConnectionLayer for FakeLayer {
    fn get_connection(&self, node: &str) -> Option<LayerConn> {
        let conn = self.live.lock().unwrap().get(node).cloned()?;
        if conn.is_down() {
            return None;
        }
        Some(conn)
    }
}

/// The drain's account, one line per report.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

fn g(to: Generation<'_>) -> String {
    format!("{}#{}", to.node, to.generation)
}

fn f(frame: &[u8]) -> String {
    String::from_utf8_lossy(frame).into_owned()
}

impl NodeEvents for Log {
    fn up(&self, _up: Up<'_>) {}
    fn down(&self, _down: Down<'_>) {}
    fn frame(&self, _from: Generation<'_>, _control: &[u8], _payload: &[u8]) {}

    fn write_started(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        self.push(format!("started {} {lane:?} {}", g(to), f(frame)));
    }
    fn write_finished(
        &self,
        to: Generation<'_>,
        lane: SenderLane,
        frame: &[u8],
        outcome: WriteOutcome,
    ) {
        self.push(format!(
            "finished {} {lane:?} {} {outcome:?}",
            g(to),
            f(frame)
        ));
    }
    fn write_abandoned(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        self.push(format!("abandoned {} {lane:?} {}", g(to), f(frame)));
    }
    fn control_skipped(&self, pinned: Generation<'_>, frame: &[u8]) {
        self.push(format!("skipped {} {}", g(pinned), f(frame)));
    }
    fn control_discarded(&self, pinned: Generation<'_>, frame: &[u8]) {
        self.push(format!("control_discarded {} {}", g(pinned), f(frame)));
    }
    fn data_unroutable(&self, node: &str, frame: &[u8]) {
        self.push(format!("unroutable {node} {}", f(frame)));
    }
    fn data_discarded(&self, node: &str, frame: &[u8]) {
        self.push(format!("data_discarded {node} {}", f(frame)));
    }
}

fn start(
    layer: &Arc<FakeLayer>,
    log: &Arc<Log>,
    data_capacity: usize,
    control_capacity: usize,
) -> Box<dyn Sender> {
    BlindSenderTarget
        .start(SenderSetup {
            layer: Arc::clone(layer) as Arc<dyn ConnectionLayer>,
            runtime: Runtime::World(tokio::runtime::Handle::current()),
            write_timeout: Duration::from_millis(50),
            data_capacity,
            control_capacity,
            reports: NodeReports::new(Arc::clone(log) as Arc<dyn NodeEvents>),
        })
        .expect("starts")
}

fn frame(text: &str) -> Arc<[u8]> {
    Arc::from(text.as_bytes())
}

/// Lets the drains run until `done` holds (or fails after a while).
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("timed out waiting until {what}");
}

#[tokio::test]
async fn data_frames_are_written_in_order_and_unroutable_ones_reported() {
    let layer = Arc::new(FakeLayer::default());
    let log = Arc::new(Log::default());
    layer.connect("a", 1, false);
    let sender = start(&layer, &log, 16, 4);

    for i in 0..6 {
        assert_eq!(
            sender.enqueue("a", frame(&format!("d{i}"))),
            DataOutcome::Queued
        );
    }
    assert_eq!(sender.enqueue("nobody", frame("lost")), DataOutcome::Queued);

    until("all written", || {
        sender.stats().unwrap().data_written == 6 && sender.stats().unwrap().data_no_connection == 1
    })
    .await;
    let written: Vec<Vec<u8>> = layer.frames().into_iter().map(|(_, _, f)| f).collect();
    let expected: Vec<Vec<u8>> = (0..6).map(|i| format!("d{i}").into_bytes()).collect();
    assert_eq!(written, expected);
    assert!(log.lines().contains(&"unroutable nobody lost".to_owned()));
    let stats = sender.stats().unwrap();
    assert_eq!(stats.data_queued, 7);
    assert_eq!(stats.data_failed + stats.data_discarded, 0);
}

#[tokio::test]
async fn a_control_whose_pin_is_down_is_skipped_never_rerouted() {
    let layer = Arc::new(FakeLayer::default());
    let log = Arc::new(Log::default());
    let old: LayerConn = layer.connect("a", 1, false);
    old.mark_down(DownReason::PeerClosed);
    layer.connect("a", 2, false);
    let sender = start(&layer, &log, 16, 4);

    assert_eq!(
        sender.enqueue_control(&old, frame("ctl")),
        ControlOutcome::Queued
    );
    assert_eq!(sender.enqueue("a", frame("data")), DataOutcome::Queued);
    until("both handled", || {
        let stats = sender.stats().unwrap();
        stats.control_skipped == 1 && stats.data_written == 1
    })
    .await;
    assert_eq!(layer.frames(), vec![("a".to_owned(), 2, b"data".to_vec())]);
    assert!(log.lines().contains(&"skipped a#1 ctl".to_owned()));
    assert_eq!(sender.stats().unwrap().control_written, 0);
}

#[tokio::test]
async fn a_full_control_lane_takes_its_pin_down_before_overflow_returns() {
    let layer = Arc::new(FakeLayer::default());
    let log = Arc::new(Log::default());
    let conn = layer.connect("a", 1, false);
    let pinned: LayerConn = Arc::clone(&conn) as LayerConn;
    let sender = start(&layer, &log, 16, 2);

    // A current-thread runtime: the drain does not run until we yield.
    assert_eq!(
        sender.enqueue_control(&pinned, frame("c1")),
        ControlOutcome::Queued
    );
    assert_eq!(
        sender.enqueue_control(&pinned, frame("c2")),
        ControlOutcome::Queued
    );
    assert_eq!(
        sender.enqueue_control(&pinned, frame("c3")),
        ControlOutcome::Overflow
    );
    assert_eq!(conn.reason(), Some(DownReason::ControlOverflow));

    // The queued ones now meet a down pin: skipped, and reported.
    until("both skipped", || {
        sender.stats().unwrap().control_skipped == 2
    })
    .await;
    let stats = sender.stats().unwrap();
    assert_eq!(stats.control_queued, 2);
    assert_eq!(stats.control_written, 0);
    assert!(layer.frames().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_wedged_peer_times_out_down_and_does_not_block_another() {
    let layer = Arc::new(FakeLayer::default());
    let log = Arc::new(Log::default());
    let wedged = layer.connect("slow", 1, true);
    layer.connect("fast", 1, false);
    let sender = start(&layer, &log, 16, 4);

    assert_eq!(sender.enqueue("slow", frame("s1")), DataOutcome::Queued);
    assert_eq!(sender.enqueue("slow", frame("s2")), DataOutcome::Queued);
    assert_eq!(sender.enqueue("fast", frame("f1")), DataOutcome::Queued);

    until("fast written", || sender.stats().unwrap().data_written == 1).await;
    until("slow timed out", || {
        let stats = sender.stats().unwrap();
        stats.data_failed == 1 && stats.data_no_connection == 1
    })
    .await;
    assert_eq!(wedged.reason(), Some(DownReason::WriteTimeout));
    let lines = log.lines();
    assert!(lines.contains(&"finished slow#1 Data s1 TimedOut".to_owned()));
    // The next frame finds no live connection: unroutable, not written.
    assert!(lines.contains(&"unroutable slow s2".to_owned()));
    assert_eq!(layer.frames(), vec![("fast".to_owned(), 1, b"f1".to_vec())]);
}

#[tokio::test]
async fn shutdown_discards_what_is_queued_and_downs_pinned_controls() {
    let layer = Arc::new(FakeLayer::default());
    let log = Arc::new(Log::default());
    let conn = layer.connect("a", 1, false);
    let pinned: LayerConn = Arc::clone(&conn) as LayerConn;
    let sender = start(&layer, &log, 2, 4);

    assert_eq!(sender.enqueue("a", frame("d1")), DataOutcome::Queued);
    assert_eq!(sender.enqueue("a", frame("d2")), DataOutcome::Queued);
    // Only this node's own frames fill its lane.
    assert_eq!(sender.enqueue("a", frame("d3")), DataOutcome::DroppedFull);
    assert_eq!(sender.enqueue("b", frame("b1")), DataOutcome::Queued);
    assert_eq!(
        sender.enqueue_control(&pinned, frame("c1")),
        ControlOutcome::Queued
    );
    sender.shutdown();

    assert_eq!(conn.reason(), Some(DownReason::ManualDisconnect));
    assert_eq!(
        sender.enqueue("a", frame("late")),
        DataOutcome::DroppedClosed
    );
    assert_eq!(
        sender.enqueue_control(&pinned, frame("late")),
        ControlOutcome::Closed
    );
    let lines = log.lines();
    assert!(lines.contains(&"control_discarded a#1 c1".to_owned()));
    assert!(lines.contains(&"data_discarded a d1".to_owned()));
    assert!(lines.contains(&"data_discarded a d2".to_owned()));
    assert!(lines.contains(&"data_discarded b b1".to_owned()));

    // The drain ends without writing anything.
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(layer.frames().is_empty());
    let stats = sender.stats().unwrap();
    assert_eq!((stats.data_queued, stats.data_discarded), (3, 3));
    assert_eq!((stats.control_queued, stats.control_discarded), (1, 1));
    assert_eq!(stats.data_written + stats.control_written, 0);
}
