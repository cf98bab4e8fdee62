//! [`ConnectionManager`]: the table of node → current connection, and the
//! generations.
//!
//! Model: generations come from one counter per manager, so a node's
//! generations only grow even though its slot is removed as soon as it has
//! no live connection (a slot per node name ever announced would grow
//! without bound). At most one *live* connection per node is in the table;
//! a down one may linger for an instant between its `mark_down` and its
//! removal, and must then count as absent: it neither blocks a redial nor is
//! handed out (liveness). On down, the entry is removed only if it is still
//! that connection (a redial may already have displaced it), and the down
//! hook fires once per generation regardless (S3). Hooks run outside the
//! table lock, so they may call back into the manager.
//!
//! A mesh: every node dials and accepts, so two nodes may dial each other at
//! once. The tie-break both ends apply without another round trip: of two
//! live connections between the same pair, the one dialed by the node whose
//! name sorts lower wins. A new stream dialed that way displaces a live
//! incumbent dialed the other way (which goes down `SimultaneousConnect`);
//! a new stream dialed the other way is refused while such an incumbent
//! lives; between two streams dialed the same way the incumbent stays. Both
//! ends see the same two streams and the same names, so they keep the same
//! one (`simultaneous_dials_converge_on_one_connection`).
//!
//! Heartbeats (Erlang's `net_ticktime` is the model): each generation
//! writes a keepalive every quarter tick, and a generation that reads
//! nothing for a whole tick goes down `HeartbeatTimeout`, so a silent
//! squatter or a half-open socket cannot hold a node's slot for longer than
//! that. The accept path trusts nothing: every stream starts with the
//! cookie handshake (`handshake`: hello, challenge, proof), which must end
//! within twice the connect timeout, name a valid node other than this one
//! and prove the cookie before the stream is registered, and every partly
//! read frame body is charged to one budget across connections.
//!
//! Start here: this file holds the public types and the manager's API
//! (dial, lookups, hooks). The rest, one concept a file:
//! - `table`: the slots, the tie-break as a pure decision (`decide`), the
//!   registration that applies it under the table lock, and the stand-by of
//!   refused streams;
//! - `serve`: the accept loop (errors skipped or backed off, never fatal)
//!   and the caps on inbound streams;
//! - `claim`: the claim check an accepted stream passes before it may
//!   displace a live generation of the node it names;
//! - `handshake`: both ends of the cookie handshake, and the accept path
//!   from `accept()` to a registered stream;
//! - `read_loop`: a generation's read loop, its keepalives and its silence
//!   clock.

use std::collections::BTreeMap;
use std::fmt;
use std::io;

use lanesim_target::node::DownReason;

use super::connection::{DistConnection, DownEvent};
use super::cookie::Cookie;
use super::frame::{FrameBudget, DEFAULT_MAX_FRAME};
use super::node::{NameError, NodeName};
use crate::planted::{Planted, PlantedBug};
use crate::shim::entropy::{Nonces, OsNonces};
use crate::shim::net::Transport;
use crate::shim::probe::{mark, preempt_point, Mark, Point};
use crate::shim::rt::{RuntimeChoice, TaskRuntime};
use crate::shim::sync::{Arc, AsyncMutex, Mutex, Notify, Weak};
use crate::shim::time::{timeout, Duration};

mod claim;
mod handshake;
mod read_loop;
mod serve;
mod table;
#[cfg(test)]
mod tests;

pub use serve::{
    fit_caps, lingering_room, Fitted, InboundCap, Source, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_SOURCE, DEFAULT_MAX_HANDSHAKES, DEFAULT_MAX_HANDSHAKES_PER_SOURCE,
    LINGERING, MIN_CONNECTIONS, RESERVED_DESCRIPTORS,
};
use table::Table;

/// Default bound on a dial (connect and handshake).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Default heartbeat tick: a generation that reads nothing for this long
/// goes down `HeartbeatTimeout`; keepalives go out every quarter of it.
/// Erlang's `net_ticktime` default.
pub const DEFAULT_TICK: Duration = Duration::from_secs(60);
/// Default budget for partly read frame bodies across all connections:
/// four maximum-size frames.
pub const DEFAULT_FRAME_BUDGET: u64 = 4 * DEFAULT_MAX_FRAME;
/// Default bound on a frame body's arrival after its header: a 64 MiB frame
/// then needs a little over 1 MiB/s.
pub const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(60);

/// Which end dialed a connection: what the simultaneous-connect tie-break
/// compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    /// This node dialed it.
    Dialed,
    /// The remote node dialed it (it arrived through `accept`/`serve`).
    Accepted,
}

/// What `register` did with a stream.
#[derive(Clone, Debug)]
pub enum Registered {
    /// It is the node's new live generation.
    New(Arc<DistConnection>),
    /// A live incumbent dialed the same way was kept; the stream was dropped.
    IncumbentKept(Arc<DistConnection>),
    /// The tie-break kept a live incumbent dialed the winning way; the
    /// stream (dialed the losing way) was dropped: a simultaneous connect
    /// this end lost.
    SimultaneousAbort(Arc<DistConnection>),
}

impl Registered {
    /// The node's live connection after the registration.
    #[must_use]
    pub fn into_connection(self) -> Arc<DistConnection> {
        match self {
            Self::New(connection)
            | Self::IncumbentKept(connection)
            | Self::SimultaneousAbort(connection) => connection,
        }
    }
}

/// A frame that arrived on a connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InboundFrame {
    /// From this node.
    pub node: NodeName,
    /// On this generation.
    pub generation: u64,
    /// The control part.
    pub control: Vec<u8>,
    /// The payload part.
    pub payload: Vec<u8>,
}

type DownHook = Arc<dyn Fn(&DownEvent) + Send + Sync>;
type UpHook = Arc<dyn Fn(&UpEvent) + Send + Sync>;

/// What the up hook is told: a generation was registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpEvent {
    /// The node.
    pub node: NodeName,
    /// The new generation.
    pub generation: u64,
    /// Which end dialed it.
    pub origin: Origin,
    /// The remote address of its socket.
    pub peer: String,
    /// Our address on its socket.
    pub local: String,
}
type FrameHook = Arc<dyn Fn(InboundFrame) + Send + Sync>;

/// How a [`ConnectionManager`] runs.
pub struct ManagerConfig {
    /// Where read loops run.
    pub runtime: RuntimeChoice,
    /// Bound on a dial (connect, and the handshake up to our proof
    /// written); an inbound handshake is waited for twice as long (see
    /// [`ConnectionManager::accept`]).
    pub connect_timeout: Duration,
    /// The cluster's shared secret: only a peer that proves it in the
    /// handshake is registered.
    pub cookie: Cookie,
    /// Where the handshake's nonces come from: the OS by default; a
    /// simulated world hands a seeded source.
    pub nonces: Arc<dyn Nonces>,
    /// Largest inbound frame body; a larger header marks the connection down
    /// with `ReadError`.
    pub max_frame: u64,
    /// Called for every inbound non-keepalive frame, on the read loop. A
    /// panic in it is caught and logged, and takes that generation down
    /// (`HandlerPanicked`): its read loop cannot go on, and its links must
    /// be told.
    pub on_frame: Option<FrameHook>,
    /// Heartbeat tick (`None`: no heartbeat; for peers that never write,
    /// and for the model checkers, which have no clock).
    pub tick: Option<Duration>,
    /// Bytes all partly read frame bodies together may hold; when
    /// contended, each reader is owed an equal share (see
    /// [`FrameBudget`](crate::distribution::frame::FrameBudget)).
    pub frame_budget: u64,
    /// How long a frame's body may take to arrive after its header; a
    /// slower frame takes its generation down `FrameTimeout` (`None`: no
    /// deadline).
    pub frame_timeout: Option<Duration>,
    /// Inbound streams whose hello has not been read yet, at most; a newer
    /// one is closed at once (see [`ConnectionManager::serve`]).
    pub max_handshakes: u64,
    /// Inbound streams open at once (in their handshake, registered or
    /// standing by), at most; a newer one is closed at once.
    pub max_connections: u64,
    /// Inbound streams in their handshake from one source (an IPv4
    /// address, an IPv6 /64), at most: one address's silent streams cannot
    /// take every handshake place.
    pub max_handshakes_per_source: u64,
    /// Inbound streams open at once from one source, at most.
    pub max_connections_per_source: u64,
    /// Planted bug, if any.
    pub planted: Planted,
}

impl ManagerConfig {
    /// Defaults for a node of the cluster whose secret is `cookie`: 5 s
    /// connect timeout, nonces from the OS, 64 MiB frames, a 60 s heartbeat
    /// tick, a 256 MiB frame budget, 60 s per frame body, 256 inbound
    /// handshakes and 1,024
    /// inbound connections at once, no frame callback.
    #[must_use]
    pub fn new(runtime: RuntimeChoice, cookie: Cookie) -> Self {
        Self {
            runtime,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            cookie,
            nonces: Arc::new(OsNonces),
            max_frame: DEFAULT_MAX_FRAME,
            on_frame: None,
            tick: Some(DEFAULT_TICK),
            frame_budget: DEFAULT_FRAME_BUDGET,
            frame_timeout: Some(DEFAULT_FRAME_TIMEOUT),
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_handshakes_per_source: DEFAULT_MAX_HANDSHAKES_PER_SOURCE,
            max_connections_per_source: DEFAULT_MAX_CONNECTIONS_PER_SOURCE,
            planted: Planted::none(),
        }
    }
}

/// Why a dial or accept failed.
#[derive(Debug)]
pub enum DialError {
    /// The transport did not connect, or the handshake did not end, in
    /// time.
    Timeout,
    /// The transport failed.
    Io(io::Error),
    /// The inbound stream did not start with a valid hello.
    BadHello(String),
    /// The hello named a node this node will not accept.
    BadName(NameError),
    /// An inbound stream met a cap and was closed; or, for a dial, the
    /// node dialed met one and said which (a refusal frame instead of its
    /// challenge).
    Refused(InboundCap),
    /// The peer's proof did not verify: it does not hold the cookie (or
    /// replayed another stream's proof). Nothing was registered.
    BadProof,
    /// The node that answered a dial is not the one dialed: it named
    /// itself this.
    WrongNode(String),
    /// An inbound stream claimed this node's name while it had a live
    /// connection, and that connection's node denied dialing the stream
    /// (the claim check, docs/protocol.md): refused.
    ClaimDenied(NodeName),
}

impl fmt::Display for DialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("connect timed out"),
            Self::Io(error) => write!(f, "connect failed: {error}"),
            Self::BadHello(why) => write!(f, "bad hello: {why}"),
            Self::BadName(why) => write!(f, "bad hello: {why}"),
            Self::Refused(cap) => write!(f, "refused: {} reached", cap.knob()),
            Self::BadProof => f.write_str("handshake refused: the peer's proof does not verify"),
            Self::WrongNode(name) => write!(f, "handshake refused: the node answered as {name:?}"),
            Self::ClaimDenied(node) => write!(
                f,
                "claim refused: {node}'s live connection denies dialing this stream"
            ),
        }
    }
}

impl std::error::Error for DialError {}

/// What the accept path has done: gauges now, and counts since the manager
/// started ([`ConnectionManager::inbound`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InboundStats {
    /// Inbound streams whose hello has not been read yet.
    pub handshaking: u64,
    /// Inbound streams open (in their handshake, registered or standing by).
    pub open: u64,
    /// Streams admitted under the caps.
    pub accepted: u64,
    /// Streams closed at once because a cap was reached.
    pub refused: u64,
    /// Accept errors that belonged to one connection, skipped.
    pub skipped: u64,
    /// Accept errors waited out (resources exhausted, or unknown).
    pub backed_off: u64,
    /// Handshakes evicted for a source holding fewer places, every place
    /// being held.
    pub evicted: u64,
    /// Sources with a stream open now.
    pub sources: u64,
}

/// One node's slot in the table, as [`ConnectionManager::slots`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotView {
    /// The node.
    pub node: NodeName,
    /// The last generation issued for it (0: none yet).
    pub last_generation: u64,
    /// The connection the slot holds: its generation and whether it is down.
    pub current: Option<(u64, bool)>,
}

struct ManagerShared {
    table: Mutex<Table>,
    down_hooks: Mutex<Vec<DownHook>>,
    up_hooks: Mutex<Vec<UpHook>>,
    /// Per node with a dial in flight: the gate its dials take turns at.
    dials: Mutex<BTreeMap<NodeName, Arc<AsyncMutex<()>>>>,
    /// Per node and origin, the refused stream standing by, if any: told
    /// when a newer one supersedes it (`stand_by`).
    standing_by: Mutex<BTreeMap<(NodeName, Origin), Arc<Notify>>>,
    on_frame: Option<FrameHook>,
    connect_timeout: Duration,
    cookie: Cookie,
    nonces: Arc<dyn Nonces>,
    max_frame: u64,
    tick: Option<Duration>,
    budget: Arc<FrameBudget>,
    frame_timeout: Option<Duration>,
    max_handshakes: u64,
    max_connections: u64,
    max_handshakes_per_source: u64,
    max_connections_per_source: u64,
    /// Refused streams held at once to be told why.
    max_lingering: u64,
    admission: serve::Admission,
    /// This node's recent dials, the hosts it dialed, the claim queries it
    /// awaits (`claim`).
    claims: claim::Claims,
    planted: Planted,
    runtime: TaskRuntime,
}

impl ManagerShared {
    /// Whether `connection` counts as connected (planted bug #11 counts a
    /// down-but-not-yet-removed entry too).
    fn usable(&self, connection: &DistConnection) -> bool {
        !connection.is_down() || self.planted.has(PlantedBug::DownEntryTreatedAsConnected)
    }
}

/// A per-source cap within its total: at most the total, and at most half
/// of it where the total was lowered to fit the descriptor limit; at least
/// one.
fn per_source(configured: u64, total: u64, lowered: bool) -> u64 {
    let ceiling = if lowered { total / 2 } else { total };
    configured.min(ceiling).max(1)
}

/// The node → connection table, dialing, accepting and read loops. Cheap to
/// clone; clones share one table.
#[derive(Clone)]
pub struct ConnectionManager {
    shared: Arc<ManagerShared>,
    transport: Arc<dyn Transport>,
    local: NodeName,
}

impl ConnectionManager {
    /// A manager for `local`, dialing through `transport`.
    ///
    /// # Errors
    /// When a dedicated runtime cannot start.
    pub fn new(
        local: NodeName,
        transport: Arc<dyn Transport>,
        config: ManagerConfig,
    ) -> io::Result<Self> {
        let (mut max_handshakes, mut max_connections) =
            (config.max_handshakes, config.max_connections);
        let limit = transport.descriptor_limit();
        match serve::fit_caps(limit, max_handshakes, max_connections) {
            Ok(None) => {}
            Ok(Some(fitted)) => {
                mark(Mark::CapsFittedToDescriptors);
                tracing::warn!(
                    limit,
                    max_connections = fitted.max_connections,
                    was = max_connections,
                    max_handshakes = fitted.max_handshakes,
                    handshakes_were = max_handshakes,
                    "the descriptor limit is below the inbound caps: caps lowered to fit it (raise RLIMIT_NOFILE to keep them)"
                );
                max_handshakes = fitted.max_handshakes;
                max_connections = fitted.max_connections;
            }
            Err(why) => return Err(io::Error::new(io::ErrorKind::InvalidInput, why)),
        }
        let max_lingering = serve::lingering_room(limit, max_connections);
        Ok(Self {
            shared: Arc::new(ManagerShared {
                table: Mutex::new(Table::default()),
                down_hooks: Mutex::new(Vec::new()),
                up_hooks: Mutex::new(Vec::new()),
                dials: Mutex::new(BTreeMap::new()),
                standing_by: Mutex::new(BTreeMap::new()),
                on_frame: config.on_frame,
                connect_timeout: config.connect_timeout,
                cookie: config.cookie,
                nonces: config.nonces,
                max_frame: config.max_frame,
                tick: config.tick,
                budget: Arc::new(FrameBudget::planted(config.frame_budget, config.planted)),
                frame_timeout: config.frame_timeout,
                max_handshakes,
                max_connections,
                // Never above the totals in force (lowered to fit the
                // descriptor limit, or configured so), and at most half
                // of them where they were lowered: one source never holds
                // every place.
                max_handshakes_per_source: per_source(
                    config.max_handshakes_per_source,
                    max_handshakes,
                    max_handshakes < config.max_handshakes,
                ),
                max_connections_per_source: per_source(
                    config.max_connections_per_source,
                    max_connections,
                    max_connections < config.max_connections,
                ),
                max_lingering,
                admission: serve::Admission::default(),
                claims: claim::Claims::default(),
                planted: config.planted,
                runtime: TaskRuntime::start(config.runtime, config.planted)?,
            }),
            transport,
            local,
        })
    }

    /// This node's name.
    #[must_use]
    pub fn local(&self) -> &NodeName {
        &self.local
    }

    /// A handle that does not keep the manager alive: for a down hook that
    /// wants to look at the table (a hook holding the manager itself would
    /// be a reference cycle through the hook list).
    #[must_use]
    pub fn downgrade(&self) -> WeakConnectionManager {
        WeakConnectionManager {
            shared: Arc::downgrade(&self.shared),
            transport: Arc::clone(&self.transport),
            local: self.local.clone(),
        }
    }

    /// Adds a hook fired once per generation that goes down, outside any lock.
    pub fn register_connection_down(&self, hook: impl Fn(&DownEvent) + Send + Sync + 'static) {
        self.shared.down_hooks.lock().push(Arc::new(hook));
    }

    /// Adds a hook fired once per generation registered (before the
    /// generation it displaced, if any, goes down), outside any lock.
    pub fn register_connection_up(&self, hook: impl Fn(&UpEvent) + Send + Sync + 'static) {
        self.shared.up_hooks.lock().push(Arc::new(hook));
    }

    /// The node's live connection, if any. Never a down one.
    #[must_use]
    pub fn get_connection(&self, node: &NodeName) -> Option<Arc<DistConnection>> {
        let table = self.shared.table.lock();
        let (current, _) = table.slots.get(node)?.current.as_ref()?;
        self.shared.usable(current).then(|| Arc::clone(current))
    }

    /// The table as it is now, node by node (sorted): the last generation
    /// issued and the connection the slot holds, if any, with its down
    /// flag. Diagnostics: unlike [`get_connection`](Self::get_connection)
    /// it shows a down connection still in its slot (the testbed's S3 check
    /// reads it: a down generation must leave the table).
    #[must_use]
    pub fn slots(&self) -> Vec<SlotView> {
        let table = self.shared.table.lock();
        table
            .slots
            .iter()
            .map(|(node, slot)| SlotView {
                node: node.clone(),
                last_generation: slot.generation,
                current: slot
                    .current
                    .as_ref()
                    .map(|(c, _)| (c.generation(), c.is_down())),
            })
            .collect()
    }

    /// The inbound caps in force, `(max_handshakes, max_connections)`: the
    /// configured ones, or lower where the transport's descriptor limit
    /// would not hold them (`fit_caps`).
    #[must_use]
    pub fn inbound_caps(&self) -> (u64, u64) {
        (self.shared.max_handshakes, self.shared.max_connections)
    }

    /// The per-source caps in force, `(max_handshakes_per_source,
    /// max_connections_per_source)`: within the totals in force, half of
    /// them where those were lowered.
    #[must_use]
    pub fn source_caps(&self) -> (u64, u64) {
        (
            self.shared.max_handshakes_per_source,
            self.shared.max_connections_per_source,
        )
    }

    /// What the accept path has done so far.
    #[must_use]
    pub fn inbound(&self) -> InboundStats {
        self.shared.admission.stats()
    }

    /// Nodes with a live connection, sorted.
    #[must_use]
    pub fn connected_nodes(&self) -> Vec<NodeName> {
        let table = self.shared.table.lock();
        table
            .slots
            .iter()
            .filter(|(_, slot)| {
                slot.current
                    .as_ref()
                    .is_some_and(|(c, _)| self.shared.usable(c))
            })
            .map(|(node, _)| node.clone())
            .collect()
    }

    /// The live connection to `node`, dialing `addr` if there is none. The
    /// dial, its connect and its handshake, is bounded by the connect
    /// timeout; the stream is registered only if the node at `addr` proved
    /// the cookie and is `node`.
    ///
    /// Dials of one node take turns: a dial that finds another in flight
    /// waits for it and returns its connection if it made one. Two sockets
    /// dialed by one node to another at once can register in opposite
    /// orders on the two ends (each end keeps the one it saw first, the
    /// tie-break cannot order two dials from the same side), and then each
    /// end closes the socket the other kept: the mesh hunt found exactly
    /// that (a keeper's dial racing the workload's), pinned by
    /// `concurrent_dials_of_one_node_share_one_socket`.
    ///
    /// # Errors
    /// When the connect or the handshake fails or times out.
    pub async fn dial(
        &self,
        node: &NodeName,
        addr: &str,
    ) -> Result<Arc<DistConnection>, DialError> {
        if let Some(connection) = self.get_connection(node) {
            return Ok(connection);
        }
        let turn = DialTurn::take(&self.shared, node);
        let _turn = turn.gate.lock().await;
        // The dial we waited for may have connected.
        if let Some(connection) = self.get_connection(node) {
            mark(Mark::DialJoinedInFlight);
            return Ok(connection);
        }
        let connect = async {
            let mut stream = self.transport.connect(addr).await.map_err(DialError::Io)?;
            self.prove(&mut stream, node).await?;
            Ok::<_, DialError>(stream)
        };
        let stream = timeout(self.shared.connect_timeout, connect)
            .await
            .map_err(|_| DialError::Timeout)??;
        // The host this node reaches `node` at: what tells its owner from
        // a squatter later (`claim`).
        self.shared.claims.dialed(node, &stream.peer);
        // Its own dial of us, a stream from a squatter, or a down of this
        // node's generation may land here: `register` decides under the
        // table lock.
        preempt_point(Point::DialBeforeRegister).await;
        Ok(self
            .register_as(node.clone(), stream, Origin::Dialed)
            .into_connection())
    }

    /// Marks `node`'s live connection down (`ManualDisconnect`). Returns
    /// whether there was one.
    pub fn disconnect_node(&self, node: &NodeName) -> bool {
        let connection = self.get_connection(node);
        if let Some(connection) = &connection {
            connection.mark_down(DownReason::ManualDisconnect);
        }
        connection.is_some()
    }
}

/// One node's dial gate, shared by the dials of that node in flight; the
/// entry leaves the table with the last of them (also when a dial is
/// cancelled), so names dialed once do not accumulate.
struct DialTurn {
    shared: Arc<ManagerShared>,
    node: NodeName,
    gate: Arc<AsyncMutex<()>>,
}

impl DialTurn {
    fn take(shared: &Arc<ManagerShared>, node: &NodeName) -> Self {
        let gate = Arc::clone(shared.dials.lock().entry(node.clone()).or_default());
        Self {
            shared: Arc::clone(shared),
            node: node.clone(),
            gate,
        }
    }
}

impl Drop for DialTurn {
    fn drop(&mut self) {
        let mut dials = self.shared.dials.lock();
        // The table's reference and ours: nobody else is waiting.
        if Arc::strong_count(&self.gate) == 2 {
            dials.remove(&self.node);
        }
    }
}

/// A [`ConnectionManager`] that may be gone (see
/// [`ConnectionManager::downgrade`]).
#[derive(Clone)]
pub struct WeakConnectionManager {
    shared: Weak<ManagerShared>,
    transport: Arc<dyn Transport>,
    local: NodeName,
}

impl WeakConnectionManager {
    /// The manager, if it still exists.
    #[must_use]
    pub fn upgrade(&self) -> Option<ConnectionManager> {
        Some(ConnectionManager {
            shared: self.shared.upgrade()?,
            transport: Arc::clone(&self.transport),
            local: self.local.clone(),
        })
    }
}
