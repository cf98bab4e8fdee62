//! Two nodes sharing one sender: the setups the per-node depth and the
//! drain's turns are pinned by (`distribution_sender.rs`), and their
//! planted bugs (#21, #22) shown by (`planted_bugs.rs`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim::distribution::{
    ControlEnqueueError, ControlOutbound, DistConnection, DistSender, NodeName, SenderConfig,
    SenderLane, SenderObserver, WriteOutcome,
};
use lanesim::shim::rt::RuntimeChoice;
use tokio::net::TcpStream;

use super::{framed, loopback, manager};

/// A sender whose drain is parked on a write to `wedged@test` (a frame no
/// kernel buffer holds), with `wedged@test`'s share of a control lane of
/// depth 2 full behind it, and a live `live@test` beside it.
pub struct WedgedShareFull {
    pub sender: DistSender,
    pub wedged: Arc<DistConnection>,
    pub live: Arc<DistConnection>,
    /// The live peer's end of its socket.
    pub live_peer: TcpStream,
    /// The wedged peer's end, held open and never read.
    pub wedged_peer: TcpStream,
}

pub async fn wedged_share_full(mut config: SenderConfig) -> WedgedShareFull {
    let manager = manager();
    let (wedged, wedged_peer) = loopback(&manager, "wedged@test").await;
    let (live, live_peer) = loopback(&manager, "live@test").await;
    config.control_capacity = 2;
    config.write_timeout = Duration::from_secs(30);
    let sender = DistSender::new(manager, config).unwrap();
    let huge: Arc<[u8]> = Arc::from(lanesim_target::wire::encode(&vec![1u8; 16 << 20], b""));
    sender.enqueue(NodeName::from("wedged@test"), huge);
    // Long enough for the drain to take the frame and park in its write
    // (nothing is timed: a drain slower than this only leaves the
    // controls below to be written, and the test then fails its
    // precondition, never passes wrongly).
    tokio::time::sleep(Duration::from_millis(200)).await;
    for seq in 0..2u8 {
        sender
            .enqueue_control(ControlOutbound {
                connection: Arc::clone(&wedged),
                frame: framed(&[seq]),
            })
            .expect("the wedged node's share has room for two");
    }
    WedgedShareFull {
        sender,
        wedged,
        live,
        live_peer,
        wedged_peer,
    }
}

impl WedgedShareFull {
    /// Offers the live node a control.
    pub fn control_for_the_live_node(&self) -> Result<(), ControlEnqueueError> {
        self.sender.enqueue_control(ControlOutbound {
            connection: Arc::clone(&self.live),
            frame: framed(&[0x11]),
        })
    }
}

/// Which node each write went to, in the order the drain began them.
#[derive(Default)]
pub struct WriteOrder(Mutex<Vec<String>>);

impl WriteOrder {
    pub fn nodes(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl SenderObserver for WriteOrder {
    fn write_started(&self, connection: &DistConnection, _: SenderLane, _: &[u8]) {
        let node = connection.node().as_str().to_owned();
        self.0.lock().unwrap().push(node);
    }
    fn write_finished(&self, _: &DistConnection, _: SenderLane, _: &[u8], _: WriteOutcome) {}
    fn control_skipped(&self, _: &DistConnection, _: &[u8]) {}
    fn data_unroutable(&self, _: &NodeName, _: &[u8]) {}
}

/// Three data frames for `a@test`, then one for `b@test`, all queued
/// before the drain first runs (its runtime is driven only once they
/// are): the order the drain writes them in.
pub async fn burst_then_one(planted: lanesim::planted::Planted) -> Vec<String> {
    let manager = manager();
    let (_, mut a) = loopback(&manager, "a@test").await;
    let (_, mut b) = loopback(&manager, "b@test").await;
    let parked = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let order = Arc::new(WriteOrder::default());
    let mut config = SenderConfig::new(RuntimeChoice::Handle(parked.handle().clone()));
    config.observer = Some(Arc::clone(&order) as Arc<dyn SenderObserver>);
    config.planted = planted;
    let sender = DistSender::new(manager, config).unwrap();
    for tag in [0xA1u8, 0xA2, 0xA3] {
        sender.enqueue(NodeName::from("a@test"), framed(&[tag]));
    }
    sender.enqueue(NodeName::from("b@test"), framed(&[0xB1]));
    std::thread::spawn(move || {
        parked.block_on(async { tokio::time::sleep(Duration::from_millis(500)).await })
    });
    let read = async {
        super::read_controls(&mut a, 3).await;
        super::read_controls(&mut b, 1).await;
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .expect("all four frames arrive");
    drop(sender);
    order.nodes()
}
