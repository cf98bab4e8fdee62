//! The node target: a node's outbound sender and the connection layer under
//! it (the shape of beamr's `DistSender` over its `ConnectionManager`).
//!
//! Model. A node has at most one live connection per peer node, each a
//! *generation* (1, 2, 3, … per peer, never reused) that goes down exactly
//! once with a reason. It sends two kinds of frame: best-effort *data* for a
//! node ([`Node::enqueue`]), and must-deliver *controls* pinned to one
//! generation ([`Node::enqueue_control`]): written to that generation's
//! socket, in order, or that generation is marked down (send-or-down); never
//! written to another generation.
//!
//! Two worlds run a node target:
//!
//! - the **sender world** runs one node that dials peers which only read
//!   (they log every frame they get) and injects wedged, slow, killed,
//!   crashed and partitioned peers, redials and shutdowns;
//! - the **mesh world** runs N nodes that dial and accept each other
//!   ([`Node::serve`]) with heartbeats, restarts, half-open links,
//!   squatters and cross-dials ([`NodeCapabilities::accepts`]).
//!
//! What the checkers decide from outside, for every node target: the bytes
//! each socket carried (the world's transport taps every write) and what
//! each peer read, against the up and down reports (generation pinning,
//! FIFO per node and per socket, down exactly once, written means
//! delivered, no spurious down, redial liveness, no lost death signal, pair
//! agreement in the mesh). What needs the target's help is declared in
//! [`NodeCapabilities`]: the drain's own account of every frame
//! ([`NodeEvents`]'s write and skip hooks: send-or-down, bounded stall,
//! accounting), counters, and the table's view of a slot.
//!
//! The wire: the worlds' peers speak lanesim's protocol ([`crate::wire`]):
//! a node must write each enqueued frame's bytes to its socket as given
//! (they are already framed), read frames in the same format, start every
//! stream with the authenticated handshake ([`crate::handshake`]) under
//! [`NodeSetup::cookie`], and treat 8 zero bytes as a keepalive.
//!
//! Determinism: dial and listen only through [`NodeSetup::transport`],
//! spawn only on [`NodeSetup::runtime`] (in simulation, the world's host
//! runtime; build your own only for [`Runtime::Own`]), sleep and time out
//! with `tokio::time`, and take no randomness but what the world gives
//! (nonces from [`NodeSetup::nonces`]).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use crate::handshake::Nonces;
use crate::net::{Listener, Transport};
use crate::probe::Sites;

/// A boxed future borrowing the node.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One connection generation, as the target hands it out.
pub trait Connection: Send + Sync + 'static {
    /// The peer node's name.
    fn node(&self) -> &str;
    /// Its generation: 1 for a node's first connection, then one more for
    /// each.
    fn generation(&self) -> u64;
    /// Whether it has gone down (once down, for good).
    fn is_down(&self) -> bool;
    /// Our address on its socket (`host:port`): with
    /// [`Connection::peer_addr`], what names the socket in the log.
    fn local_addr(&self) -> &str;
    /// The remote address of its socket.
    fn peer_addr(&self) -> &str;
    /// The target's own type, for [`Node::enqueue_control`] to take back.
    fn as_any(&self) -> &dyn Any;
}

/// A generation handle, cheap to clone.
pub type Conn = Arc<dyn Connection>;

/// Why a generation went down: the one list of reasons, which lanesim's own
/// node (`lanesim::distribution::DownReason` is this type), a node target
/// and the testbed's event log all use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DownReason {
    /// The peer closed the stream at a frame boundary.
    PeerClosed,
    /// Any other read failure: an I/O error, a truncated, malformed or
    /// oversized frame.
    ReadError,
    /// A write failed.
    WriteError,
    /// A write did not finish within its deadline.
    WriteTimeout,
    /// Disconnected on purpose (or the node shut down).
    ManualDisconnect,
    /// Nothing was read for a whole heartbeat tick.
    HeartbeatTimeout,
    /// Its control lane was full when a control pinned to it arrived.
    ControlOverflow,
    /// A simultaneous connect was settled in favour of the other socket
    /// (the one dialed by the node whose name sorts lower).
    SimultaneousConnect,
    /// The inbound frame handler panicked on a frame that arrived on it.
    HandlerPanicked,
    /// A write was dropped partway through its frame (its caller gave up on
    /// it, or its task was aborted): the stream holds part of a frame, so
    /// nothing more may be written on it.
    WriteCancelled,
    /// A frame's body did not arrive within the frame deadline after its
    /// header (a slowloris).
    FrameTimeout,
    /// Its reader was refused for the budget of partly read frames: the
    /// budget was contended and it was over its share (or evicted for
    /// holding more than its share while another reader needed room).
    OverBudget,
    /// Its name's owner reclaimed it: a stream from the address this node
    /// dials for the name claimed the name, this generation's node denied
    /// dialing it, and this generation's peer is not at that address (a
    /// cookie holder squatting on the name).
    NameReclaimed,
}

impl DownReason {
    /// Every reason, in declaration order.
    pub const ALL: [DownReason; 13] = [
        Self::PeerClosed,
        Self::ReadError,
        Self::WriteError,
        Self::WriteTimeout,
        Self::ManualDisconnect,
        Self::HeartbeatTimeout,
        Self::ControlOverflow,
        Self::SimultaneousConnect,
        Self::HandlerPanicked,
        Self::WriteCancelled,
        Self::FrameTimeout,
        Self::OverBudget,
        Self::NameReclaimed,
    ];

    /// The reason's name in `snake_case` (`peer_closed`), as logs and
    /// reports spell it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::PeerClosed => "peer_closed",
            Self::ReadError => "read_error",
            Self::WriteError => "write_error",
            Self::WriteTimeout => "write_timeout",
            Self::ManualDisconnect => "manual_disconnect",
            Self::HeartbeatTimeout => "heartbeat_timeout",
            Self::ControlOverflow => "control_overflow",
            Self::SimultaneousConnect => "simultaneous_connect",
            Self::HandlerPanicked => "handler_panicked",
            Self::WriteCancelled => "write_cancelled",
            Self::FrameTimeout => "frame_timeout",
            Self::OverBudget => "over_budget",
            Self::NameReclaimed => "name_reclaimed",
        }
    }
}

/// Which end dialed a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// This node dialed it.
    Dialed,
    /// This node accepted it.
    Accepted,
}

/// Why a dial failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DialFailure {
    /// Connect or hello did not finish within the connect timeout.
    Timeout,
    /// The transport failed.
    Io,
    /// The peer's answer was not a hello.
    BadHello,
    /// The node name is not a valid name.
    BadName,
    /// The peer's proof did not verify (it lacks the cookie), or it is
    /// another node than the one dialed.
    Unauthenticated,
}

/// What [`Node::enqueue`] did with a data frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataOutcome {
    /// Queued for the node.
    Queued,
    /// Dropped: the data lane was full.
    DroppedFull,
    /// Dropped: the sender is shut down.
    DroppedClosed,
}

/// What [`Node::enqueue_control`] answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ControlOutcome {
    /// Queued for its pinned generation.
    Queued,
    /// The control lane was full: the pinned generation is down (it must be
    /// by the time this returns).
    Overflow,
    /// The sender is shut down.
    Closed,
}

/// Which lane a frame travelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SenderLane {
    /// Best-effort data.
    Data,
    /// Must-deliver controls.
    Control,
}

/// How a write ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WriteOutcome {
    /// The whole frame was written.
    Written,
    /// The write failed (the generation is down).
    Failed,
    /// The write missed its deadline (the generation is down).
    TimedOut,
}

/// A generation, as a report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Generation<'a> {
    /// The peer node.
    pub node: &'a str,
    /// The generation.
    pub generation: u64,
}

/// A generation was registered.
#[derive(Clone, Copy, Debug)]
pub struct Up<'a> {
    /// The peer node.
    pub node: &'a str,
    /// The new generation.
    pub generation: u64,
    /// Which end dialed it.
    pub origin: Origin,
    /// Our address on its socket.
    pub local_addr: &'a str,
    /// The remote address of its socket.
    pub peer_addr: &'a str,
}

/// A generation went down.
#[derive(Clone, Copy, Debug)]
pub struct Down<'a> {
    /// The peer node.
    pub node: &'a str,
    /// The generation.
    pub generation: u64,
    /// Why.
    pub reason: DownReason,
    /// The generation the node's table slot holds right after, down or not
    /// (targets with [`NodeCapabilities::table`]; `None` otherwise, or when
    /// the slot is empty).
    pub table: Option<u64>,
}

/// A link between a local process and a process on a remote node, made
/// over one generation ([`NodeCapabilities::links`]): the duty a down
/// carries (DC-3) is one `noconnection` for each link made over that
/// generation or an older one of the same node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Link {
    /// The generation the link was made over.
    pub generation: u64,
    /// The local process.
    pub local: u64,
    /// The remote process.
    pub remote: u64,
}

/// Where a node reports to the world. Only the first three are required:
/// the world's model of links and pairs is built on them. The rest are the
/// drain's account of each frame ([`NodeCapabilities::drain`]).
///
/// Call every hook outside any lock the node's own methods take (the world
/// may call back into the node from a hook: `connection`, `slot`), and
/// expect it to return quickly.
pub trait NodeEvents: Send + Sync {
    /// A generation was registered (dialed or accepted), before any frame
    /// of it is reported.
    fn up(&self, up: Up<'_>);
    /// A generation went down: once per generation, after `is_down` turned
    /// true.
    fn down(&self, down: Down<'_>);
    /// A whole inbound frame (not a keepalive) arrived on a generation.
    fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]);

    /// The drain began writing `frame` to a generation.
    fn write_started(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        let _ = (to, lane, frame);
    }
    /// That write ended.
    fn write_finished(
        &self,
        to: Generation<'_>,
        lane: SenderLane,
        frame: &[u8],
        outcome: WriteOutcome,
    ) {
        let _ = (to, lane, frame, outcome);
    }
    /// The drain stopped (shut down) in the middle of that write.
    fn write_abandoned(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
        let _ = (to, lane, frame);
    }
    /// The drain dropped a control whose pinned generation was down.
    fn control_skipped(&self, pinned: Generation<'_>, frame: &[u8]) {
        let _ = (pinned, frame);
    }
    /// The drain ended (shut down) with this control unwritten.
    fn control_discarded(&self, pinned: Generation<'_>, frame: &[u8]) {
        let _ = (pinned, frame);
    }
    /// The drain dropped a data frame: no live connection to its node.
    fn data_unroutable(&self, node: &str, frame: &[u8]) {
        let _ = (node, frame);
    }
    /// The drain ended (shut down) with this data frame unwritten.
    fn data_discarded(&self, node: &str, frame: &[u8]) {
        let _ = (node, frame);
    }
    /// The node's link table broke `link` over `node` (its generation went
    /// down, or was down when the link was made): `noconnection`, once per
    /// link, after that generation's [`NodeEvents::down`]
    /// ([`NodeCapabilities::links`]).
    fn noconnection(&self, node: &str, link: Link) {
        let _ = (node, link);
    }
}

/// The world's report sink. Cheap to clone.
#[derive(Clone)]
pub struct NodeReports(Arc<dyn NodeEvents>);

impl NodeReports {
    /// Reports into `events`.
    pub fn new(events: Arc<dyn NodeEvents>) -> Self {
        Self(events)
    }

    /// The sink.
    #[must_use]
    pub fn events(&self) -> &dyn NodeEvents {
        &*self.0
    }
}

impl std::ops::Deref for NodeReports {
    type Target = dyn NodeEvents;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for NodeReports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NodeReports")
    }
}

/// Where a node runs its tasks.
#[derive(Clone, Debug)]
pub enum Runtime {
    /// On this runtime (the world's host runtime in simulation).
    World(lanesim_shim::task::Handle),
    /// On a runtime of the node's own, as production runs it (real mode):
    /// name its worker threads this, and pass
    /// [`crate::probe::worker_start_hook`] to its `on_thread_start`. Only
    /// the sender's drain needs to run there; a target may run everything
    /// on the world's runtime instead.
    Own {
        /// Name for its worker threads.
        thread_name: String,
        /// The world's runtime (for what the node does not move).
        world: lanesim_shim::task::Handle,
    },
}

/// Everything a node is started from.
pub struct NodeSetup {
    /// This node's name.
    pub name: String,
    /// Dial and listen only through this.
    pub transport: Arc<dyn Transport>,
    /// Where to run.
    pub runtime: Runtime,
    /// Bound on a dial (connect and hello).
    pub connect_timeout: Duration,
    /// Bound on one frame's write.
    pub write_timeout: Duration,
    /// Heartbeat tick: keepalives at a fraction of it, and a generation
    /// with nothing read for a whole tick goes down (`HeartbeatTimeout`).
    /// `None`: no heartbeat (the sender world's peers never write).
    pub heartbeat: Option<Duration>,
    /// The largest inbound frame body; a larger header takes the
    /// generation down with `ReadError`.
    pub max_frame: u64,
    /// Bytes all partly read inbound frames together may hold (a target
    /// without such a budget ignores it); a reader refused for it goes
    /// down `OverBudget`.
    pub frame_budget: u64,
    /// How long a frame's body may take after its header (`None`: no
    /// deadline); a slower one goes down `FrameTimeout`.
    pub frame_timeout: Option<Duration>,
    /// Data frames the sender may hold queued for one destination node: a
    /// node's frame may be dropped as full only when that node's own
    /// frames fill it (S4, S9: a sender whose one count covers every node
    /// refuses a healthy node for another's backlog).
    pub data_capacity: usize,
    /// Controls the sender may hold queued for one destination node: a
    /// control may overflow (its generation down) only when its node's own
    /// controls fill it (DC-1, S9).
    pub control_capacity: usize,
    /// Where to report.
    pub reports: NodeReports,
    /// The cluster cookie: the handshake's shared secret.
    pub cookie: Vec<u8>,
    /// Where the handshake's nonces come from (seeded by the world).
    pub nonces: Arc<dyn Nonces>,
    /// The inbound caps to configure, if the scenario sets them (a target
    /// without such caps ignores it): a node with
    /// [`NodeCapabilities::descriptors`] still fits them within its
    /// transport's [`descriptor_limit`](crate::net::Transport::descriptor_limit).
    pub inbound_caps: Option<InboundCaps>,
}

/// A node's bounds on inbound streams ([`NodeSetup::inbound_caps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InboundCaps {
    /// Inbound streams in their handshake at once, at most.
    pub handshakes: u64,
    /// Inbound streams open at once (in their handshake, registered or
    /// standing by), at most.
    pub connections: u64,
}

impl fmt::Debug for NodeSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeSetup")
            .field("name", &self.name)
            .field("runtime", &self.runtime)
            .field("connect_timeout", &self.connect_timeout)
            .field("write_timeout", &self.write_timeout)
            .field("heartbeat", &self.heartbeat)
            .field("max_frame", &self.max_frame)
            .field("data_capacity", &self.data_capacity)
            .field("control_capacity", &self.control_capacity)
            .field("inbound_caps", &self.inbound_caps)
            .finish_non_exhaustive()
    }
}

/// A node's counters, for targets with [`NodeCapabilities::stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data frames queued.
    pub data_queued: u64,
    /// Written whole.
    pub data_written: u64,
    /// Failed or timed out mid-write.
    pub data_failed: u64,
    /// Dropped with no connection to their node.
    pub data_no_connection: u64,
    /// Discarded at shutdown.
    pub data_discarded: u64,
    /// Controls queued.
    pub control_queued: u64,
    /// Written whole.
    pub control_written: u64,
    /// Failed or timed out mid-write.
    pub control_failed: u64,
    /// Skipped: pinned generation down.
    pub control_skipped: u64,
    /// Discarded at shutdown.
    pub control_discarded: u64,
}

/// A started node. Dropping it ends it (its tasks, its connections).
pub trait Node: Send + Sync {
    /// Connects to `node` at `addr` (through the transport), says hello, and
    /// registers the connection: its live generation (an existing live one,
    /// if the node has one).
    fn dial<'a>(&'a self, node: &'a str, addr: &'a str)
        -> BoxFuture<'a, Result<Conn, DialFailure>>;

    /// Accepts inbound connections on `listener` until the node is dropped
    /// (targets with [`NodeCapabilities::accepts`]).
    fn serve(&self, listener: Box<dyn Listener>) {
        let _ = listener;
    }

    /// The live generation to `node`, if any.
    fn connection(&self, node: &str) -> Option<Conn>;

    /// Takes the live generation to `node` down (`ManualDisconnect`), if
    /// there is one.
    fn disconnect(&self, node: &str);

    /// Offers a data frame (already framed) for `node`. Never waits.
    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome;

    /// Offers a control (already framed) pinned to `pinned`. Never waits.
    fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome;

    /// Stops the sender: queued frames are discarded (controls' generations
    /// marked down), later enqueues refused.
    fn shutdown(&self);

    /// The counters ([`NodeCapabilities::stats`]).
    fn stats(&self) -> Option<SenderStats> {
        None
    }

    /// The generation `node`'s table slot holds, down or not, and whether
    /// it is down ([`NodeCapabilities::table`]).
    fn slot(&self, node: &str) -> Option<(u64, bool)> {
        let _ = node;
        None
    }

    /// Records a link between `local` and `remote` over `over`'s
    /// generation in the node's link table ([`NodeCapabilities::links`]):
    /// `Some(link)` kept until a down of its generation breaks it, `None`
    /// when that generation was down already (then
    /// [`NodeEvents::noconnection`] was reported for it at once). A target
    /// without a table is never asked.
    fn link(&self, over: &Conn, local: u64, remote: u64) -> Option<Link> {
        let _ = (over, local, remote);
        None
    }

    /// Removes `link` over `node` from the link table (an unlink, or an
    /// exit that reached the peer): whether it was there
    /// ([`NodeCapabilities::links`]).
    fn unlink(&self, node: &str, link: &Link) -> bool {
        let _ = (node, link);
        false
    }
}

/// Values a node (or a sender) has built in instead of taking them from
/// [`NodeSetup`] (`None`: it takes the world's). The worlds run such a
/// target with its own value, size their budgets and bounds from it, and
/// refuse, as not decided and with the reason, a scenario written for
/// values that exclude it: a sender with a fixed 5 s write deadline is
/// not run in a scenario about a 50 ms one, where it would look stalled,
/// nor is a fixed 256-deep control queue in a scenario written to flood 8.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeFixed {
    /// Its bound on one frame's write ([`NodeSetup::write_timeout`]).
    pub write_timeout: Option<Duration>,
    /// Its heartbeat tick ([`NodeSetup::heartbeat`]).
    pub heartbeat: Option<Duration>,
    /// Its largest inbound frame body ([`NodeSetup::max_frame`]).
    pub max_frame: Option<u64>,
    /// Data frames its sender holds queued ([`NodeSetup::data_capacity`]).
    pub data_capacity: Option<usize>,
    /// Controls its sender holds queued ([`NodeSetup::control_capacity`]).
    pub control_capacity: Option<usize>,
}

/// What a node target offers and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeCapabilities {
    /// [`Node::serve`] accepts dials: the mesh world can run it.
    pub accepts: bool,
    /// It runs the heartbeat [`NodeSetup::heartbeat`] asks for.
    pub heartbeat: bool,
    /// It bounds the bytes of partly read inbound frames by
    /// [`NodeSetup::frame_budget`]. Without it, the clauses of M9 about the
    /// budget are not decided.
    pub frame_budget: bool,
    /// It enforces [`NodeSetup::frame_timeout`] on a frame's body. Without
    /// it, M9's trickle clause is not decided.
    pub frame_deadline: bool,
    /// The values it does not take from [`NodeSetup`].
    pub fixed: NodeFixed,
    /// Contracts it breaks knowingly, with the reason ([`crate::hazard`]):
    /// still checked; a run that breaks only these is reported as an
    /// accepted hazard, never as a pass. Usually empty.
    pub hazards: &'static [crate::hazard::Hazard],
    /// It reports the drain's account of every frame ([`NodeEvents`]).
    pub drain: bool,
    /// [`Node::stats`] returns its counters.
    pub stats: bool,
    /// [`Node::slot`] and [`Down::table`] report its table.
    pub table: bool,
    /// It keeps its open streams within its transport's
    /// [`descriptor_limit`](crate::net::Transport::descriptor_limit), with
    /// room for its own dials, and takes [`NodeSetup::inbound_caps`].
    /// Without it, M7's clause on running out of descriptors is not decided
    /// (the simulated network still enforces the limit).
    pub descriptors: bool,
    /// It keeps a link table ([`Node::link`], [`Node::unlink`],
    /// [`NodeEvents::noconnection`]): the worlds then make the workload's
    /// links in it and decide E2E (sender world), M2 and M3 (mesh) on its
    /// deliveries; without it the world keeps links itself over the up and
    /// down reports.
    pub links: bool,
    /// The marks and preemption points its code uses.
    pub sites: Sites,
}

/// A node implementation.
pub trait NodeTarget: Send + Sync {
    /// What it offers and reports.
    fn capabilities(&self) -> NodeCapabilities;

    /// Starts a node, inside the world's runtime.
    ///
    /// # Errors
    /// Why it could not start (the run is reported as a crash of the
    /// target, with this text).
    fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String>;
}

#[cfg(test)]
mod tests {
    use super::DownReason;

    #[test]
    fn every_reason_is_listed_once_in_order_with_a_name_of_its_own() {
        let mut names = Vec::new();
        for (index, reason) in DownReason::ALL.into_iter().enumerate() {
            assert_eq!(reason as usize, index, "{reason:?}");
            names.push(reason.name());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), DownReason::ALL.len());
        assert_eq!(
            DownReason::SimultaneousConnect.name(),
            "simultaneous_connect"
        );
    }
}
