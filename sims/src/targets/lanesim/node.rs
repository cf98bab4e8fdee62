//! lanesim's `ConnectionManager` with a `DistSender` over it behind the
//! public node target trait: the manager's up and down hooks, its frame
//! callback and the sender's observer all turned into the trait's reports.
//! The manager alone is also a `ConnectionLayer` ([`start_layer`]), for a
//! user's sender to run over (`targets::composed`).

use std::any::Any;
use std::sync::{Arc, Mutex};

use lanesim::distribution::{
    ConnectionManager, ControlEnqueueError, ControlOutbound, Cookie, DialError, DistConnection,
    DistSender, Enqueued, InboundFrame, LinkTable, ManagerConfig, NodeName, Origin as Side,
    SenderConfig, SenderLane as Lane, SenderObserver, WeakConnectionManager,
    WriteOutcome as Outcome,
};
use lanesim::planted::Planted;
/// The connection layer's own sites (without the sender's).
pub use lanesim::shim::probe::LAYER_SITES;
use lanesim::shim::probe::NODE_SITES;
use lanesim::shim::rt::{JoinHandle, RuntimeChoice};
use lanesim_target::layer::{ConnectionLayer, LayerConn, LayerConnection, Sender, SenderSetup};
use lanesim_target::net::Listener;
use lanesim_target::node::{
    BoxFuture, Conn, Connection, ControlOutcome, DataOutcome, DialFailure, Down, DownReason,
    Generation, Link, Node, NodeCapabilities, NodeFixed, NodeReports, NodeSetup, NodeTarget,
    Origin, Runtime, SenderLane, SenderStats, Up, WriteOutcome,
};

/// lanesim's node, with a planted bug or none.
#[derive(Clone, Copy, Debug, Default)]
pub struct LanesimNode {
    /// The planted bug the components are built with.
    pub planted: Planted,
}

/// One of lanesim's generations, as the trait hands it out.
struct LanesimConn(Arc<DistConnection>);

impl Connection for LanesimConn {
    fn node(&self) -> &str {
        self.0.node().as_str()
    }

    fn generation(&self) -> u64 {
        self.0.generation()
    }

    fn is_down(&self) -> bool {
        self.0.is_down()
    }

    fn local_addr(&self) -> &str {
        self.0.local()
    }

    fn peer_addr(&self) -> &str {
        self.0.peer()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn conn(connection: Arc<DistConnection>) -> Conn {
    Arc::new(LanesimConn(connection))
}

impl LayerConnection for LanesimConn {
    fn write_raw<'a>(&'a self, frame: &'a [u8]) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(self.0.write_raw(frame))
    }

    fn mark_down(&self, why: DownReason) {
        self.0.mark_down(why);
    }

    fn as_connection(self: Arc<Self>) -> Conn {
        self
    }
}

/// lanesim's connection manager as a sender's connection layer.
struct Layer(ConnectionManager);

impl ConnectionLayer for Layer {
    fn get_connection(&self, node: &str) -> Option<LayerConn> {
        self.0
            .get_connection(&NodeName::from(node))
            .map(|connection| Arc::new(LanesimConn(connection)) as LayerConn)
    }
}

/// The layer's handle on a connection it handed out as a world's `Conn`.
#[must_use]
pub fn layer_conn(pinned: &Conn) -> Option<LayerConn> {
    pinned
        .as_any()
        .downcast_ref::<LanesimConn>()
        .map(|own| Arc::new(LanesimConn(Arc::clone(&own.0))) as LayerConn)
}

fn lane(lane: Lane) -> SenderLane {
    match lane {
        Lane::Data => SenderLane::Data,
        Lane::Control => SenderLane::Control,
    }
}

fn generation(connection: &DistConnection) -> Generation<'_> {
    Generation {
        node: connection.node().as_str(),
        generation: connection.generation(),
    }
}

/// The sender's observer, told on as the drain's reports.
struct Observer(NodeReports);

impl SenderObserver for Observer {
    fn write_started(&self, connection: &DistConnection, via: Lane, frame: &[u8]) {
        self.0
            .write_started(generation(connection), lane(via), frame);
    }

    fn write_finished(
        &self,
        connection: &DistConnection,
        via: Lane,
        frame: &[u8],
        outcome: Outcome,
    ) {
        let outcome = match outcome {
            Outcome::Written => WriteOutcome::Written,
            Outcome::Failed => WriteOutcome::Failed,
            Outcome::TimedOut => WriteOutcome::TimedOut,
        };
        self.0
            .write_finished(generation(connection), lane(via), frame, outcome);
    }

    fn control_skipped(&self, connection: &DistConnection, frame: &[u8]) {
        self.0.control_skipped(generation(connection), frame);
    }

    fn data_unroutable(&self, node: &NodeName, frame: &[u8]) {
        self.0.data_unroutable(node.as_str(), frame);
    }

    fn write_abandoned(&self, connection: &DistConnection, via: Lane, frame: &[u8]) {
        self.0
            .write_abandoned(generation(connection), lane(via), frame);
    }

    fn control_discarded(&self, pinned: &DistConnection, frame: &[u8]) {
        self.0.control_discarded(generation(pinned), frame);
    }

    fn data_discarded(&self, node: &NodeName, frame: &[u8]) {
        self.0.data_discarded(node.as_str(), frame);
    }
}

/// A started node: the manager, the sender over it, its accept loop.
struct Started {
    layer: Started0,
    sender: OwnSender,
}

/// lanesim's `DistSender` as the public API's sender: what a started node
/// enqueues through, and what the model world runs over the layer
/// ([`Started0::own_sender`]).
pub struct OwnSender(DistSender);

impl OwnSender {
    /// A sender over `manager` with `setup`'s depths and deadline, its
    /// drain reported to `setup.reports`.
    fn start(
        manager: &ConnectionManager,
        setup: SenderSetup,
        planted: Planted,
    ) -> Result<Self, String> {
        DistSender::new(
            manager.clone(),
            SenderConfig {
                data_capacity: setup.data_capacity,
                control_capacity: setup.control_capacity,
                write_timeout: setup.write_timeout,
                runtime: sender_runtime(&setup.runtime),
                observer: Some(Arc::new(Observer(setup.reports))),
                planted,
            },
        )
        .map(Self)
        .map_err(|error| error.to_string())
    }

    /// Offers a control pinned to `pinned`, one of lanesim's generations.
    fn enqueue_pinned(&self, pinned: Arc<DistConnection>, frame: Arc<[u8]>) -> ControlOutcome {
        match self.0.enqueue_control(ControlOutbound {
            connection: pinned,
            frame,
        }) {
            Ok(()) => ControlOutcome::Queued,
            Err(ControlEnqueueError::Overflow) => ControlOutcome::Overflow,
            Err(ControlEnqueueError::Closed) => ControlOutcome::Closed,
        }
    }
}

/// What lanesim's own sender reports, run alone over the layer (the model
/// world's sender workloads).
#[must_use]
pub fn own_sender_capabilities() -> lanesim_target::layer::SenderCapabilities {
    lanesim_target::layer::SenderCapabilities {
        drain: true,
        stats: true,
        fixed: NodeFixed::default(),
        hazards: &[],
        sites: NODE_SITES,
    }
}

/// The generation behind a handle this layer handed out.
fn own_connection(pinned: &dyn Any) -> Arc<DistConnection> {
    pinned
        .downcast_ref::<LanesimConn>()
        .map(|own| Arc::clone(&own.0))
        .expect("a connection this node handed out")
}

impl Sender for OwnSender {
    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        match self.0.enqueue(NodeName::from(node), frame) {
            Enqueued::Queued => DataOutcome::Queued,
            Enqueued::DroppedFull => DataOutcome::DroppedFull,
            Enqueued::DroppedClosed => DataOutcome::DroppedClosed,
        }
    }

    fn enqueue_control(&self, pinned: &LayerConn, frame: Arc<[u8]>) -> ControlOutcome {
        self.enqueue_pinned(own_connection(pinned.as_any()), frame)
    }

    fn shutdown(&self) {
        self.0.shutdown();
    }

    fn stats(&self) -> Option<SenderStats> {
        let s = self.0.stats();
        Some(SenderStats {
            data_queued: s.data_queued,
            data_written: s.data_written,
            data_failed: s.data_failed,
            data_no_connection: s.data_no_connection,
            data_discarded: s.data_discarded,
            control_queued: s.control_queued,
            control_written: s.control_written,
            control_failed: s.control_failed,
            control_skipped: s.control_skipped_down,
            control_discarded: s.control_discarded,
        })
    }
}

/// The connection layer alone: the manager and its accept loop. What a
/// composed node (a user's sender over it) runs on.
pub struct Started0 {
    manager: ConnectionManager,
    accepting: Mutex<Vec<JoinHandle<()>>>,
    /// lanesim's link table over the manager (`NodeCapabilities::links`):
    /// its `noconnection`s are the reports'.
    links: LinkTable,
}

impl Started0 {
    /// Its connection layer, for a sender.
    #[must_use]
    pub fn layer(&self) -> Arc<dyn ConnectionLayer> {
        Arc::new(Layer(self.manager.clone()))
    }

    /// Dials `node` at `addr`.
    pub fn dial<'a>(
        &'a self,
        node: &'a str,
        addr: &'a str,
    ) -> BoxFuture<'a, Result<Conn, DialFailure>> {
        Box::pin(async move {
            self.manager
                .dial(&NodeName::from(node), addr)
                .await
                .map(conn)
                .map_err(|error| match error {
                    DialError::Timeout => DialFailure::Timeout,
                    // `Refused` comes only from the accept side.
                    DialError::Io(_) | DialError::Refused(_) => DialFailure::Io,
                    DialError::BadHello(_) => DialFailure::BadHello,
                    DialError::BadName(_) => DialFailure::BadName,
                    DialError::BadProof | DialError::WrongNode(_) => DialFailure::Unauthenticated,
                    // Like `Refused`, only the accept side's.
                    DialError::ClaimDenied(_) => DialFailure::Io,
                })
        })
    }

    /// Accepts on `listener`.
    pub fn serve(&self, listener: Box<dyn Listener>) {
        let task = self.manager.serve(listener);
        self.accepting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(task);
    }

    /// `node`'s live connection.
    #[must_use]
    pub fn connection(&self, node: &str) -> Option<Conn> {
        self.manager.get_connection(&NodeName::from(node)).map(conn)
    }

    /// Takes `node`'s live connection down.
    pub fn disconnect(&self, node: &str) {
        self.manager.disconnect_node(&NodeName::from(node));
    }

    /// `node`'s table slot.
    #[must_use]
    pub fn slot(&self, node: &str) -> Option<(u64, bool)> {
        slot_of(&self.manager, node)
    }

    /// Records a link over `over`'s generation in lanesim's link table.
    #[must_use]
    pub fn link(&self, over: &Conn, local: u64, remote: u64) -> Option<Link> {
        self.links
            .link(&own_connection(over.as_any()), local, remote)
    }

    /// Removes a link from lanesim's link table.
    #[must_use]
    pub fn unlink(&self, node: &str, made: &Link) -> bool {
        self.links.unlink(&NodeName::from(node), made)
    }

    /// Installs `stream` as `node`'s connection with no handshake (the
    /// model world's in-memory sockets, whose peer the world vouches for)
    /// and returns the node's live connection after the tie-break.
    #[must_use]
    pub fn adopt(&self, node: &str, stream: lanesim_target::net::Connected) -> LayerConn {
        Arc::new(LanesimConn(
            self.manager.register(NodeName::from(node), stream),
        ))
    }

    /// lanesim's own sender over this layer, built with `planted`.
    ///
    /// # Errors
    /// When the sender cannot start (a depth of zero).
    pub fn own_sender(&self, setup: SenderSetup, planted: Planted) -> Result<OwnSender, String> {
        OwnSender::start(&self.manager, setup, planted)
    }
}

impl Drop for Started0 {
    fn drop(&mut self) {
        for task in self
            .accepting
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
        {
            task.abort();
        }
    }
}

/// The generation `node`'s table slot holds, down or not.
fn slot_of(manager: &ConnectionManager, node: &str) -> Option<(u64, bool)> {
    manager
        .slots()
        .into_iter()
        .find(|slot| slot.node.as_str() == node)
        .and_then(|slot| slot.current)
}

impl Node for Started {
    fn dial<'a>(
        &'a self,
        node: &'a str,
        addr: &'a str,
    ) -> BoxFuture<'a, Result<Conn, DialFailure>> {
        self.layer.dial(node, addr)
    }

    fn serve(&self, listener: Box<dyn Listener>) {
        self.layer.serve(listener);
    }

    fn connection(&self, node: &str) -> Option<Conn> {
        self.layer.connection(node)
    }

    fn disconnect(&self, node: &str) {
        self.layer.disconnect(node);
    }

    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        self.sender.enqueue(node, frame)
    }

    fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome {
        self.sender
            .enqueue_pinned(own_connection(pinned.as_any()), frame)
    }

    fn shutdown(&self) {
        self.sender.shutdown();
    }

    fn stats(&self) -> Option<SenderStats> {
        self.sender.stats()
    }

    fn slot(&self, node: &str) -> Option<(u64, bool)> {
        self.layer.slot(node)
    }

    fn link(&self, over: &Conn, local: u64, remote: u64) -> Option<Link> {
        self.layer.link(over, local, remote)
    }

    fn unlink(&self, node: &str, link: &Link) -> bool {
        self.layer.unlink(node, link)
    }
}

impl NodeTarget for LanesimNode {
    fn capabilities(&self) -> NodeCapabilities {
        NodeCapabilities {
            hazards: &[],
            accepts: true,
            heartbeat: true,
            frame_budget: true,
            frame_deadline: true,
            fixed: NodeFixed::default(),
            drain: true,
            stats: true,
            table: true,
            links: true,
            descriptors: true,
            sites: NODE_SITES,
        }
    }

    fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
        let sender_setup = SenderSetup {
            layer: Arc::new(NoLayer),
            runtime: setup.runtime.clone(),
            write_timeout: setup.write_timeout,
            data_capacity: setup.data_capacity,
            control_capacity: setup.control_capacity,
            reports: setup.reports.clone(),
        };
        let layer = self.start_layer(setup)?;
        let sender = layer.own_sender(sender_setup, self.planted)?;
        Ok(Box::new(Started { layer, sender }))
    }
}

/// The layer a [`SenderSetup`] names when lanesim's own sender is built
/// over its own manager (which it takes directly, not through the trait).
struct NoLayer;

impl ConnectionLayer for NoLayer {
    fn get_connection(&self, _: &str) -> Option<LayerConn> {
        None
    }
}

/// Where the sender runs: the world's runtime, or (real mode) one of its
/// own, as production runs it.
fn sender_runtime(runtime: &Runtime) -> RuntimeChoice {
    match runtime {
        Runtime::World(handle) => RuntimeChoice::Handle(handle.clone()),
        Runtime::Own { thread_name, .. } => RuntimeChoice::Dedicated {
            thread_name: thread_name.clone(),
        },
    }
}

impl LanesimNode {
    /// Starts lanesim's connection layer alone (no sender): the manager,
    /// its hooks and frame callback turned into `setup.reports`. Its read
    /// loops run on the world's runtime in both modes.
    ///
    /// # Errors
    /// When the manager cannot start.
    pub fn start_layer(&self, setup: NodeSetup) -> Result<Started0, String> {
        let manager_runtime = match setup.runtime {
            Runtime::World(handle) | Runtime::Own { world: handle, .. } => {
                RuntimeChoice::Handle(handle)
            }
        };
        let cookie = Cookie::new(setup.cookie).map_err(|error| error.to_string())?;
        let mut config = ManagerConfig::new(manager_runtime, cookie);
        config.nonces = setup.nonces;
        config.connect_timeout = setup.connect_timeout;
        config.tick = setup.heartbeat;
        config.max_frame = setup.max_frame;
        config.frame_budget = setup.frame_budget;
        config.frame_timeout = setup.frame_timeout;
        if let Some(caps) = setup.inbound_caps {
            config.max_handshakes = caps.handshakes;
            config.max_connections = caps.connections;
        }
        let frames = setup.reports.clone();
        config.on_frame = Some(Arc::new(move |frame: InboundFrame| {
            frames.frame(
                Generation {
                    node: frame.node.as_str(),
                    generation: frame.generation,
                },
                &frame.control,
                &frame.payload,
            );
        }));
        config.planted = self.planted;
        let manager = ConnectionManager::new(NodeName::from(setup.name), setup.transport, config)
            .map_err(|error| error.to_string())?;
        let ups = setup.reports.clone();
        manager.register_connection_up(move |event| {
            ups.up(Up {
                node: event.node.as_str(),
                generation: event.generation,
                origin: match event.origin {
                    Side::Dialed => Origin::Dialed,
                    Side::Accepted => Origin::Accepted,
                },
                local_addr: &event.local,
                peer_addr: &event.peer,
            });
        });
        let (downs, table): (NodeReports, WeakConnectionManager) =
            (setup.reports.clone(), manager.downgrade());
        manager.register_connection_down(move |event| {
            let node = event.node.as_str();
            let table = table
                .upgrade()
                .and_then(|manager| slot_of(&manager, node))
                .map(|(generation, _)| generation);
            downs.down(Down {
                node,
                generation: event.generation,
                reason: event.reason,
                table,
            });
        });
        // After the down report's hook: a down is reported before the
        // noconnections it causes.
        let broken = setup.reports;
        let links = LinkTable::new(move |node, link| broken.noconnection(node.as_str(), link));
        links.attach(&manager);
        Ok(Started0 {
            manager,
            accepting: Mutex::new(Vec::new()),
            links,
        })
    }
}
