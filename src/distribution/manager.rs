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
//! that. The accept path trusts nothing: a hello must arrive within twice
//! the connect timeout and name a valid node other than this one, and every
//! partly read frame body is charged to one budget across connections.

use crate::shim::time::Duration;
use std::collections::BTreeMap;
use std::fmt;
use std::io;

use crate::shim::rt::JoinHandle;
use tokio::io::AsyncWriteExt;

use super::connection::{DistConnection, DownEvent, DownListener, DownReason};
use super::frame::{
    encode, read_frame, read_frame_within, Frame, FrameBudget, ReadFrameError, DEFAULT_MAX_FRAME,
    KEEPALIVE,
};
use super::node::{NameError, NodeName};
use crate::planted::{Planted, PlantedBug};
use crate::shim::net::{BoxRead, Connected, Listener, Transport};
use crate::shim::probe::{mark, preempt_point, Mark, Point};
use crate::shim::rt::{RuntimeChoice, TaskRuntime};
use crate::shim::sync::{Arc, AsyncMutex, Counter, Mutex, Notify, Weak};
use crate::shim::time::{sleep, timeout, Instant};
use tokio::io::AsyncReadExt as _;

/// Default bound on a dial (connect plus hello).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The first frame on a dialed stream: this control, and the dialer's name as
/// payload. Lets `accept` learn who is calling.
pub const HELLO: &[u8] = b"lanesim/hello";
/// Default heartbeat tick: a generation that reads nothing for this long
/// goes down `HeartbeatTimeout`; keepalives go out every quarter of it.
/// Erlang's `net_ticktime` default.
pub const DEFAULT_TICK: Duration = Duration::from_secs(60);
/// Default budget for partly read frame bodies across all connections:
/// four maximum-size frames.
pub const DEFAULT_FRAME_BUDGET: u64 = 4 * DEFAULT_MAX_FRAME;

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
    /// Bound on a dial (connect and hello written); an inbound hello is
    /// waited for twice as long (see [`ConnectionManager::accept`]).
    pub connect_timeout: Duration,
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
    /// Bytes all partly read frame bodies together may hold.
    pub frame_budget: u64,
    /// Planted bug, if any.
    pub planted: Planted,
}

impl ManagerConfig {
    /// Defaults: 5 s connect timeout, 64 MiB frames, a 60 s heartbeat
    /// tick, a 256 MiB frame budget, no frame callback.
    #[must_use]
    pub fn new(runtime: RuntimeChoice) -> Self {
        Self {
            runtime,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_frame: DEFAULT_MAX_FRAME,
            on_frame: None,
            tick: Some(DEFAULT_TICK),
            frame_budget: DEFAULT_FRAME_BUDGET,
            planted: Planted::none(),
        }
    }
}

/// Why a dial or accept failed.
#[derive(Debug)]
pub enum DialError {
    /// The transport did not connect (or send the hello) in time.
    Timeout,
    /// The transport failed.
    Io(io::Error),
    /// The inbound stream did not start with a valid hello.
    BadHello(String),
    /// The hello named a node this node will not accept.
    BadName(NameError),
}

impl fmt::Display for DialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Timeout => f.write_str("connect timed out"),
            Self::Io(error) => write!(f, "connect failed: {error}"),
            Self::BadHello(why) => write!(f, "bad hello: {why}"),
            Self::BadName(why) => write!(f, "bad hello: {why}"),
        }
    }
}

impl std::error::Error for DialError {}

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

/// Per node: the last generation issued and the current connection.
#[derive(Default)]
struct Slot {
    generation: u64,
    current: Option<Arc<DistConnection>>,
    origin: Option<Origin>,
}

/// The table: slots, and the one generation counter they draw from.
#[derive(Default)]
struct Table {
    slots: BTreeMap<NodeName, Slot>,
    last_generation: u64,
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
    max_frame: u64,
    tick: Option<Duration>,
    budget: Arc<FrameBudget>,
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

impl DownListener for ManagerShared {
    fn connection_down_again(&self, connection: &DistConnection) {
        let table = self.table.lock();
        if table
            .slots
            .get(connection.node())
            .is_some_and(|slot| slot.generation > connection.generation())
        {
            mark(Mark::LateDownOfOldGeneration);
        }
    }

    /// Called once per generation by `DistConnection::mark_down`.
    fn connection_down(&self, connection: &DistConnection, reason: DownReason) {
        {
            let mut table = self.table.lock();
            if let Some(slot) = table.slots.get_mut(connection.node()) {
                if slot
                    .current
                    .as_ref()
                    .is_some_and(|current| std::ptr::eq(Arc::as_ptr(current), connection))
                {
                    slot.current = None;
                    slot.origin = None;
                }
                // No live connection left: the slot goes (the counter that
                // keeps generations growing is the table's, not the slot's).
                if slot.current.is_none() {
                    table.slots.remove(connection.node());
                    mark(Mark::SlotRemoved);
                }
            }
        }
        let event = DownEvent {
            node: connection.node().clone(),
            generation: connection.generation(),
            reason,
        };
        tracing::debug!(node = %event.node, generation = event.generation, ?reason, "connection down");
        let hooks = self.down_hooks.lock().clone();
        for hook in hooks {
            // One panicking hook must neither starve the others (the link
            // table's noconnections) nor unwind into whoever marked down.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&event))).is_err() {
                tracing::error!(node = %event.node, generation = event.generation, "a connection-down hook panicked");
            }
        }
    }
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
        Ok(Self {
            shared: Arc::new(ManagerShared {
                table: Mutex::new(Table::default()),
                down_hooks: Mutex::new(Vec::new()),
                up_hooks: Mutex::new(Vec::new()),
                dials: Mutex::new(BTreeMap::new()),
                standing_by: Mutex::new(BTreeMap::new()),
                on_frame: config.on_frame,
                connect_timeout: config.connect_timeout,
                max_frame: config.max_frame,
                tick: config.tick,
                budget: Arc::new(FrameBudget::new(config.frame_budget)),
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
        let current = table.slots.get(node)?.current.as_ref()?;
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
                current: slot.current.as_ref().map(|c| (c.generation(), c.is_down())),
            })
            .collect()
    }

    /// Nodes with a live connection, sorted.
    #[must_use]
    pub fn connected_nodes(&self) -> Vec<NodeName> {
        let table = self.shared.table.lock();
        table
            .slots
            .iter()
            .filter(|(_, slot)| slot.current.as_ref().is_some_and(|c| self.shared.usable(c)))
            .map(|(node, _)| node.clone())
            .collect()
    }

    /// Installs `stream`, which this node dialed, as `node`'s connection
    /// and starts its read loop; returns the node's live connection after
    /// the tie-break (see [`ConnectionManager::register_as`]).
    pub fn register(&self, node: NodeName, stream: Connected) -> Arc<DistConnection> {
        self.register_as(node, stream, Origin::Dialed)
            .into_connection()
    }

    /// Installs `stream` as `node`'s connection and starts its read loop
    /// and keepalives. With no live incumbent, the stream becomes the next
    /// generation (displacing a down one). With a live incumbent, the
    /// simultaneous-connect tie-break decides (module doc): the stream
    /// displaces it only if the stream was dialed by the lower-named node
    /// and the incumbent was not; otherwise the stream is dropped, and the
    /// refusal logged.
    ///
    /// Two refusals are not dropped at once (this node's dial losing to an
    /// accepted incumbent, and an accepted stream refused for an accepted
    /// incumbent): they stand by (see [`ConnectionManager::stand_by`]) in
    /// case the incumbent was a stale stream whose hello landed after its
    /// dialer had closed it.
    pub fn register_as(&self, node: NodeName, stream: Connected, origin: Origin) -> Registered {
        self.register_or_stand_by(node, stream, origin, true)
    }

    fn register_or_stand_by(
        &self,
        node: NodeName,
        stream: Connected,
        origin: Origin,
        may_stand_by: bool,
    ) -> Registered {
        let Connected {
            read,
            write,
            peer,
            local,
        } = stream;
        // Moved into the new connection only if it is registered; a refused
        // stream may still stand by.
        let mut halves = Some((write, local));
        // The connection dialed by the lower name wins.
        let dialed_wins = self.local < node;
        let wins = |origin: Origin| match origin {
            Origin::Dialed => dialed_wins,
            Origin::Accepted => !dialed_wins,
        };
        let decided = {
            let mut table = self.shared.table.lock();
            let Table {
                slots,
                last_generation,
            } = &mut *table;
            let slot = slots.entry(node.clone()).or_default();
            let mut displaced_reason = DownReason::ManualDisconnect;
            let mut kept = None;
            if let Some(current) = &slot.current {
                if self.shared.usable(current) {
                    let no_tie_break = self.shared.planted.has(PlantedBug::NoTieBreak);
                    let simultaneous = slot.origin != Some(origin);
                    if no_tie_break || !simultaneous || !wins(origin) {
                        kept = Some((Arc::clone(current), simultaneous));
                    } else {
                        mark(Mark::RegisterTieBreakWon);
                        displaced_reason = DownReason::SimultaneousConnect;
                    }
                } else {
                    mark(Mark::RegisterDisplacedDown);
                }
            }
            match kept {
                Some(kept) => Err(kept),
                None => {
                    *last_generation += 1;
                    slot.generation = *last_generation;
                    let (write, local) = halves.take().expect("taken once, here");
                    let connection = Arc::new(DistConnection::new(
                        node.clone(),
                        slot.generation,
                        peer.clone(),
                        local,
                        write,
                        Arc::downgrade(&self.shared) as Weak<dyn DownListener>,
                        self.shared.planted,
                    ));
                    slot.origin = Some(origin);
                    let displaced = slot.current.replace(Arc::clone(&connection));
                    Ok((connection, displaced.map(|old| (old, displaced_reason))))
                }
            }
        };
        let (connection, displaced) = match decided {
            Ok(new) => new,
            Err((incumbent, simultaneous)) => {
                // Two refusals can be the work of a stale incumbent (see
                // `stand_by`): our dial losing to an accepted stream, and an
                // accepted stream refused for an accepted incumbent.
                let stands_by = may_stand_by
                    && matches!(
                        (origin, simultaneous),
                        (Origin::Dialed, true) | (Origin::Accepted, false)
                    );
                let refused = Self::refuse(Arc::clone(&incumbent), origin, &peer, simultaneous);
                if let (true, Some((write, local))) = (stands_by, halves) {
                    let stream = Connected {
                        read,
                        write,
                        peer,
                        local,
                    };
                    self.stand_by(node, stream, origin, incumbent);
                }
                return refused;
            }
        };
        let hooks = self.shared.up_hooks.lock().clone();
        if !hooks.is_empty() {
            let event = UpEvent {
                node: connection.node().clone(),
                generation: connection.generation(),
                origin,
                peer: connection.peer().to_string(),
                local: connection.local().to_string(),
            };
            for hook in hooks {
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&event))).is_err()
                {
                    tracing::error!(node = %event.node, generation = event.generation, "a connection-up hook panicked");
                }
            }
        }
        if let Some((displaced, reason)) = displaced {
            // Down already (a redial), or live and losing the tie-break.
            // Either way it goes down now, once.
            displaced.mark_down(reason);
        }
        tracing::debug!(node = %connection.node(), generation = connection.generation(), ?origin, "connection up");
        self.shared.runtime.spawn(read_loop(
            Arc::downgrade(&self.shared),
            Arc::clone(&connection),
            read,
        ));
        if let Some(tick) = self.shared.tick {
            self.shared
                .runtime
                .spawn(keepalives(Arc::clone(&connection), tick));
        }
        Registered::New(connection)
    }

    /// Keeps `stream`, refused in favour of the live `incumbent`, open for
    /// a while: if the incumbent goes down first, the stream is registered
    /// after all (it stands by once); otherwise it is dropped.
    ///
    /// Why: the tie-break assumes both ends see the same streams. A stream
    /// whose dialer closed it while its hello was in flight breaks that:
    /// the hello still lands, the acceptor registers the dead stream, and
    /// it then refuses the fresh streams that replace it, which the other
    /// end has meanwhile registered. Dropping them left both ends without a
    /// connection until a redial (`lanesim hunt --world mesh --seed 41`,
    /// case 6482; `scenarios/mesh_stale_hello.toml`). Two refusals can be
    /// that:
    /// - this node's dial, losing to an accepted stream (the stale one,
    ///   dialed the winning way by the other end, which has since dialed
    ///   again); pinned by
    ///   `a_dial_that_lost_to_a_stale_accepted_stream_is_registered_when_it_dies`;
    /// - an accepted stream, refused because an accepted incumbent came
    ///   the same way: its dialer dials only when it holds no live
    ///   connection, so the incumbent is dead at its end, or stale.
    ///
    /// The stale incumbent goes down on its dialer's close, and the stream
    /// that stood by takes its place, as it already has at the other end.
    /// A refused squatter gains nothing it would not get by arriving when
    /// the slot is empty: its silence takes it down within a tick (M5).
    ///
    /// How long: twice the connect timeout (the accept path's bound on a
    /// hello, and so on how late a stale one lands), and at most half a
    /// heartbeat tick: this end writes nothing on the stream meanwhile, so
    /// the other end would take it down for silence after a tick.
    ///
    /// Meanwhile the stream is read, and what arrives is kept (at most
    /// [`STANDBY_BUFFER`] bytes) and handed to its read loop if it is
    /// registered: so a stream the other end closes (it refused it too, or
    /// gave up on it) ends its stand-by at once and is never registered
    /// dead, and one dropped at the window's end leaves nothing unread (a
    /// close over unread bytes is a reset). One stream stands by per node
    /// and origin: a newer one supersedes it, because its dialer dialed
    /// again and so gave up on the older. The task holds the manager
    /// weakly; a stream standing by when the manager is dropped stays open
    /// until its window ends.
    /// `a_stream_closed_while_standing_by_is_never_registered`,
    /// `a_newer_stream_supersedes_the_one_standing_by`.
    fn stand_by(
        &self,
        node: NodeName,
        stream: Connected,
        origin: Origin,
        incumbent: Arc<DistConnection>,
    ) {
        let mut window = self.shared.connect_timeout.saturating_mul(2);
        if let Some(tick) = self.shared.tick {
            window = window.min(tick / 2);
        }
        let superseded = Arc::new(Notify::new());
        if let Some(older) = self
            .shared
            .standing_by
            .lock()
            .insert((node.clone(), origin), Arc::clone(&superseded))
        {
            older.notify_one();
        }
        let manager = self.downgrade();
        self.shared.runtime.spawn(async move {
            let Connected {
                mut read,
                write,
                peer,
                local,
            } = stream;
            let mut early = Vec::new();
            let incumbent_down = {
                let watch = watch_closed(&mut read, &mut early);
                tokio::select! {
                    biased;
                    () = incumbent.down_notified() => true,
                    () = superseded.notified() => false,
                    () = watch => false,
                    () = sleep(window) => false,
                }
            };
            // A stand-by never undoes a manual disconnect that took its
            // incumbent down: it would reconnect what this node's owner just
            // cut (`a_stream_standing_by_does_not_undo_a_manual_disconnect`).
            // A disconnect that finds the incumbent already down is not
            // told apart from any other down.
            let deliberate = incumbent.down_reason() == Some(DownReason::ManualDisconnect);
            drop(incumbent);
            let Some(manager) = manager.upgrade() else {
                return;
            };
            {
                let mut standing_by = manager.shared.standing_by.lock();
                let key = (node.clone(), origin);
                if standing_by
                    .get(&key)
                    .is_some_and(|current| Arc::ptr_eq(current, &superseded))
                {
                    standing_by.remove(&key);
                }
            }
            if !incumbent_down || deliberate {
                return;
            }
            let read: BoxRead = if early.is_empty() {
                read
            } else {
                Box::new(std::io::Cursor::new(early).chain(read))
            };
            let stream = Connected {
                read,
                write,
                peer,
                local,
            };
            // Registered only if nothing live took the slot meanwhile; a
            // second refusal drops the stream (it stands by once).
            if let Registered::New(connection) =
                manager.register_or_stand_by(node, stream, origin, false)
            {
                mark(Mark::StandbyRegistered);
                tracing::debug!(node = %connection.node(), generation = connection.generation(), ?origin, "a refused stream that stood by was registered: its incumbent went down");
            }
        });
    }

    /// A stream refused in favour of the live `incumbent`: logged; the
    /// caller drops it (closing it) or lets it stand by. `simultaneous`: the two
    /// were dialed from opposite ends.
    fn refuse(
        incumbent: Arc<DistConnection>,
        origin: Origin,
        peer: &str,
        simultaneous: bool,
    ) -> Registered {
        tracing::warn!(
            node = %incumbent.node(),
            generation = incumbent.generation(),
            %peer,
            ?origin,
            simultaneous,
            "connection refused: the node already has a live connection"
        );
        if simultaneous {
            mark(Mark::RegisterTieBreakLost);
            Registered::SimultaneousAbort(incumbent)
        } else {
            mark(Mark::RegisterIncumbentKept);
            Registered::IncumbentKept(incumbent)
        }
    }

    /// The live connection to `node`, dialing `addr` if there is none. The
    /// dial is bounded by the connect timeout and announces us with a hello.
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
    /// When the connect or hello fails or times out.
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
        let hello = encode(HELLO, self.local.as_str().as_bytes()).expect("node names are short");
        let connect = async {
            let mut stream = self.transport.connect(addr).await?;
            stream.write.write_all(&hello).await?;
            stream.write.flush().await?;
            Ok::<_, io::Error>(stream)
        };
        let stream = timeout(self.shared.connect_timeout, connect)
            .await
            .map_err(|_| DialError::Timeout)?
            .map_err(DialError::Io)?;
        // Its own dial of us, a stream from a squatter, or a down of this
        // node's generation may land here: `register` decides under the
        // table lock.
        preempt_point(Point::DialBeforeRegister).await;
        Ok(self
            .register_as(node.clone(), stream, Origin::Dialed)
            .into_connection())
    }

    /// Accepts one inbound stream, reads its hello (bounded by twice the
    /// connect timeout) and registers it under the name it announced.
    ///
    /// Twice: the dialer counts a dial as made once it connected and wrote
    /// its hello within the connect timeout, and the acceptor's wait starts
    /// when the connection arrives. The hello can reach it up to a round
    /// trip (the connect's reply and the dialer's write, within the
    /// timeout) plus one one-way delay (itself within the round trip) after
    /// that. Waiting only the connect timeout refused hellos the dialer had
    /// already registered: with both ends dialing at once, the dialer's
    /// stream then won the tie-break over the acceptor's, the acceptor
    /// dropped it, and both ends were left without a connection until a
    /// redial (the mesh hunt found it: `hunt --world mesh --seed 41`,
    /// `scenarios/regressions/mesh_hello_slower_than_the_connect_timeout.toml`).
    ///
    /// # Errors
    /// When accepting fails, or the hello is late or malformed.
    pub async fn accept(
        &self,
        listener: &mut dyn Listener,
    ) -> Result<Arc<DistConnection>, DialError> {
        let stream = listener.accept().await.map_err(DialError::Io)?;
        self.handshake(stream).await
    }

    /// Reads an inbound stream's hello and registers it.
    async fn handshake(&self, mut stream: Connected) -> Result<Arc<DistConnection>, DialError> {
        let max = self.shared.max_frame.min(1024);
        let hello = timeout(
            self.shared.connect_timeout.saturating_mul(2),
            read_frame(&mut stream.read, max),
        )
        .await
        .map_err(|_| DialError::Timeout)?
        .map_err(|error| DialError::BadHello(error.to_string()))?;
        let node = match hello {
            Frame::Data { control, payload } if control == HELLO => {
                let node = NodeName::parse_bytes(&payload).map_err(|error| {
                    mark(Mark::HelloRefused);
                    DialError::BadName(error)
                })?;
                if node == self.local {
                    mark(Mark::HelloRefused);
                    return Err(DialError::BadName(NameError::Ours));
                }
                node
            }
            Frame::Data { control, .. } => {
                mark(Mark::HelloRefused);
                return Err(DialError::BadHello(format!(
                    "expected a hello, got a frame with a {}-byte control",
                    control.len()
                )));
            }
            Frame::Keepalive => {
                mark(Mark::HelloRefused);
                return Err(DialError::BadHello(
                    "expected a hello, got a keepalive".into(),
                ));
            }
        };
        Ok(self
            .register_as(node, stream, Origin::Accepted)
            .into_connection())
    }

    /// Accepts inbound connections on `listener` until it fails. Each
    /// stream's hello is read in its own task, so a caller that never sends
    /// one delays nobody else; a bad stream is dropped. The loop holds the
    /// manager weakly: it ends when the manager is gone.
    pub fn serve(&self, mut listener: Box<dyn Listener>) -> JoinHandle<()> {
        let shared = Arc::downgrade(&self.shared);
        let (transport, local) = (Arc::clone(&self.transport), self.local.clone());
        self.shared.runtime.spawn(async move {
            loop {
                let stream = match listener.accept().await {
                    Ok(stream) => stream,
                    Err(error) => {
                        tracing::warn!(%error, "accept loop stopped");
                        return;
                    }
                };
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let manager = ConnectionManager {
                    shared,
                    transport: Arc::clone(&transport),
                    local: local.clone(),
                };
                let runtime = Arc::clone(&manager.shared);
                runtime.runtime.spawn(async move {
                    if let Err(error) = manager.handshake(stream).await {
                        // `error` quotes names with `{:?}`: a newline in
                        // a hostile name cannot forge a log line.
                        tracing::warn!(%error, "inbound connection refused");
                    }
                });
            }
        })
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

/// Reads frames until the peer closes, a read fails, nothing arrives for a
/// heartbeat tick, or the connection is marked down; then closes the write
/// half so the peer sees end of stream.
async fn read_loop(manager: Weak<ManagerShared>, connection: Arc<DistConnection>, read: BoxRead) {
    // Only what the loop needs is held across its waits: holding the
    // manager itself would keep it alive while its owner drops it.
    let Some((max, close_bound, tick, budget)) = manager.upgrade().map(|m| {
        let tick = m.tick.filter(|_| !m.planted.has(PlantedBug::NoHeartbeat));
        (m.max_frame, m.connect_timeout, tick, Arc::clone(&m.budget))
    }) else {
        return;
    };
    let mut read = Watched::new(read);
    let progress = read.progress();
    // The generation is registered and handed out, but nobody watches for
    // its down until this loop first waits: a down that lands here must
    // still close the socket.
    preempt_point(Point::ReadLoopStarting).await;
    if connection.is_down() {
        mark(Mark::DownBeforeReadLoop);
    }
    let reason = loop {
        let frame = tokio::select! {
            biased;
            () = connection.down_notified() => break None,
            // Bytes already waiting count as heard: the read goes first.
            frame = read_frame_within(&mut read, max, &budget) => frame,
            () = silent_for(tick, &progress) => break Some(DownReason::HeartbeatTimeout),
        };
        match frame {
            Ok(Frame::Keepalive) => {}
            Ok(Frame::Data { control, payload }) => {
                let Some(shared) = manager.upgrade() else {
                    break None;
                };
                let Some(on_frame) = &shared.on_frame else {
                    continue;
                };
                let inbound = InboundFrame {
                    node: connection.node().clone(),
                    generation: connection.generation(),
                    control,
                    payload,
                };
                let handled =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_frame(inbound)));
                if handled.is_err() {
                    tracing::error!(
                        node = %connection.node(),
                        generation = connection.generation(),
                        "the frame callback panicked; the generation goes down"
                    );
                    break Some(DownReason::HandlerPanicked);
                }
            }
            Err(ReadFrameError::Closed) => break Some(DownReason::PeerClosed),
            Err(error @ ReadFrameError::OverBudget { .. }) => {
                mark(Mark::FrameBudgetRefused);
                tracing::warn!(
                    node = %connection.node(),
                    generation = connection.generation(),
                    %error,
                    "connection refused: frame budget spent"
                );
                break Some(DownReason::ReadError);
            }
            Err(error) => {
                tracing::debug!(node = %connection.node(), %error, "read failed");
                break Some(DownReason::ReadError);
            }
        }
    };
    if let Some(reason) = reason {
        if reason == DownReason::HeartbeatTimeout {
            tracing::warn!(
                node = %connection.node(),
                generation = connection.generation(),
                "nothing read for a heartbeat tick; the generation goes down"
            );
        }
        // The stream is dead but the generation still up: a write may
        // start in this window, and must fail or be refused, never hang.
        preempt_point(Point::ReadBeforeMarkDown).await;
        connection.mark_down(reason);
    }
    drop(read);
    connection.close_writer(close_bound).await;
}

/// Most a stream standing by may have read before it stops reading (the
/// rest waits in the socket).
pub const STANDBY_BUFFER: usize = 64 * 1024;

/// Reads `read` into `early` until the other end closes it or it fails
/// (then resolves), or until `early` holds [`STANDBY_BUFFER`] bytes (then
/// waits for ever).
async fn watch_closed(read: &mut BoxRead, early: &mut Vec<u8>) {
    let mut chunk = [0u8; 1024];
    while early.len() < STANDBY_BUFFER {
        let room = chunk.len().min(STANDBY_BUFFER - early.len());
        match read.read(&mut chunk[..room]).await {
            Ok(0) | Err(_) => return,
            Ok(n) => early.extend_from_slice(&chunk[..n]),
        }
    }
    std::future::pending().await
}

/// Writes a keepalive every quarter `tick` until the generation goes down,
/// so a healthy peer's heartbeat never fires on a quiet connection. The
/// write has no deadline of its own: a peer that stops reading is found by
/// the sender's write deadline or by its own silence, and a down abandons
/// the write.
async fn keepalives(connection: Arc<DistConnection>, tick: Duration) {
    let every = tick / 4;
    loop {
        tokio::select! {
            biased;
            () = connection.down_notified() => return,
            () = sleep(every) => {}
        }
        if connection.write_raw(&KEEPALIVE).await.is_err() {
            return;
        }
        mark(Mark::KeepaliveSent);
    }
}

/// Resolves once `tick` has passed with nothing read (never, without a
/// tick).
async fn silent_for(tick: Option<Duration>, progress: &Progress) {
    let Some(tick) = tick else {
        return std::future::pending().await;
    };
    loop {
        let quiet = progress.quiet_for();
        if quiet >= tick {
            return;
        }
        sleep(tick - quiet).await;
    }
}

/// When a read half last delivered bytes.
struct Progress {
    base: Instant,
    /// Nanoseconds after `base`. Only the read loop's task touches it.
    last: Counter,
}

impl Progress {
    fn quiet_for(&self) -> Duration {
        let last = Duration::from_nanos(self.last.get());
        self.base.elapsed().saturating_sub(last)
    }

    fn touch(&self) {
        let now = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last.set(now);
    }
}

/// A read half that records when it last delivered bytes.
struct Watched {
    inner: BoxRead,
    progress: Arc<Progress>,
}

impl Watched {
    fn new(inner: BoxRead) -> Self {
        Self {
            inner,
            progress: Arc::new(Progress {
                base: Instant::now(),
                last: Counter::new(0),
            }),
        }
    }

    fn progress(&self) -> Arc<Progress> {
        Arc::clone(&self.progress)
    }
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.progress.touch();
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::shim::net::{Connected, TokioTcp};
    use crate::shim::rt::RuntimeChoice;
    use crate::shim::sync::Arc;

    fn in_memory() -> Connected {
        let (ours, theirs) = tokio::io::duplex(1024);
        std::mem::forget(theirs); // keep the peer open for the whole test
        let (read, write) = tokio::io::split(ours);
        Connected {
            read: Box::new(read),
            write: Box::new(write),
            peer: "memory".into(),
            local: "memory".into(),
        }
    }

    fn manager(planted: Planted) -> ConnectionManager {
        let mut config = ManagerConfig::new(RuntimeChoice::current());
        config.planted = planted;
        ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap()
    }

    fn flip_only(connection: &DistConnection) {
        connection.flip_down_flag_only(DownReason::WriteTimeout);
    }

    /// The window between `mark_down`'s flag flip and the manager's removal
    /// has no `.await` in it, so only a thread can land there; this test
    /// stops time inside it by doing the two halves by hand.
    #[tokio::test]
    async fn a_down_but_not_yet_removed_entry_counts_as_absent_and_is_displaced() {
        let manager = manager(Planted::none());
        let downs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&downs);
        manager.register_connection_down(move |event| sink.lock().unwrap().push(event.clone()));
        let node = NodeName::from("peer@test");
        let old = manager.register(node.clone(), in_memory());

        // First half of mark_down: the flag flips ...
        flip_only(&old);
        // ... and before the removal, the entry must already count as gone.
        assert!(
            manager.get_connection(&node).is_none(),
            "a down entry was handed out"
        );
        assert!(manager.connected_nodes().is_empty());
        let new = manager.register(node.clone(), in_memory());
        assert_eq!(new.generation(), 2, "the down entry blocked the redial");

        // Second half: the manager removes only its own entry and fires once.
        manager
            .shared
            .connection_down(&old, DownReason::WriteTimeout);
        assert!(
            Arc::ptr_eq(&manager.get_connection(&node).unwrap(), &new),
            "evicted the successor"
        );
        let downs = downs.lock().unwrap().clone();
        assert_eq!(downs.len(), 1, "{downs:?}");
        assert_eq!(
            (downs[0].generation, downs[0].reason),
            (1, DownReason::WriteTimeout)
        );
    }

    /// An in-memory stream whose far end the test keeps, named `peer`.
    fn in_memory_to(peer: &str) -> (Connected, tokio::io::DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(1024);
        let (read, write) = tokio::io::split(ours);
        let stream = Connected {
            read: Box::new(read),
            write: Box::new(write),
            peer: peer.into(),
            local: "memory".into(),
        };
        (stream, theirs)
    }

    /// An accepted incumbent from "early@test", which sorts before
    /// "local@test": streams it dials win.
    fn stale_incumbent(manager: &ConnectionManager) -> (NodeName, Arc<DistConnection>) {
        let node = NodeName::from("early@test");
        let (stale, stale_far) = in_memory_to("stale");
        std::mem::forget(stale_far);
        let incumbent = manager
            .register_as(node.clone(), stale, Origin::Accepted)
            .into_connection();
        (node, incumbent)
    }

    /// The stale incumbent, and our dial that lost to it (its far end).
    fn stale_incumbent_and_losing_dial(
        manager: &ConnectionManager,
    ) -> (NodeName, Arc<DistConnection>, tokio::io::DuplexStream) {
        let (node, incumbent) = stale_incumbent(manager);
        let (fresh, fresh_far) = in_memory_to("fresh");
        let refused = manager.register_as(node.clone(), fresh, Origin::Dialed);
        assert!(
            matches!(refused, Registered::SimultaneousAbort(ref kept) if Arc::ptr_eq(kept, &incumbent)),
            "the dial should lose the tie-break: {refused:?}"
        );
        (node, incumbent, fresh_far)
    }

    /// The mesh hunt's M1 failure (`scenarios/mesh_stale_hello.toml`):
    /// the accepted incumbent was a stream its dialer had already closed.
    #[tokio::test(start_paused = true)]
    async fn a_dial_that_lost_to_a_stale_accepted_stream_is_registered_when_it_dies() {
        let manager = manager(Planted::none());
        let (node, incumbent, _fresh_far) = stale_incumbent_and_losing_dial(&manager);
        incumbent.mark_down(DownReason::PeerClosed);
        tokio::time::sleep(Duration::from_millis(1)).await;
        let now = manager
            .get_connection(&node)
            .expect("the dial that stood by was not registered");
        assert_eq!(now.peer(), "fresh");
        assert_eq!(now.generation(), 2);
    }

    fn manager_with(config: ManagerConfig) -> ConnectionManager {
        ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap()
    }

    async fn closed(far: &mut tokio::io::DuplexStream) -> bool {
        use tokio::io::AsyncReadExt;
        let mut byte = [0u8; 1];
        matches!(
            tokio::time::timeout(Duration::from_millis(1), far.read(&mut byte)).await,
            Ok(Ok(0))
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_closed_while_standing_by_is_never_registered() {
        let manager = manager(Planted::none());
        let ups = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&ups);
        manager.register_connection_up(move |event| sink.lock().unwrap().push(event.peer.clone()));
        let (node, incumbent, fresh_far) = stale_incumbent_and_losing_dial(&manager);
        // The other end refused our dial too, and closed it.
        drop(fresh_far);
        tokio::time::sleep(Duration::from_millis(1)).await;
        incumbent.mark_down(DownReason::PeerClosed);
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(manager.get_connection(&node).is_none());
        assert_eq!(
            *ups.lock().unwrap(),
            vec!["stale".to_string()],
            "a stream its other end had closed was registered"
        );
    }

    /// Accepted streams of one node refused for an accepted incumbent: the
    /// newest stands by, an older one is dropped, and what the newest's
    /// dialer wrote meanwhile reaches the frame callback once it is
    /// registered.
    #[tokio::test(start_paused = true)]
    async fn a_newer_stream_supersedes_the_one_standing_by() {
        use tokio::io::AsyncWriteExt;
        let frames = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&frames);
        let mut config = ManagerConfig::new(RuntimeChoice::current());
        config.on_frame = Some(Arc::new(move |frame| sink.lock().unwrap().push(frame)));
        let manager = manager_with(config);
        let (node, incumbent) = stale_incumbent(&manager);
        let (first, mut first_far) = in_memory_to("first");
        let (second, mut second_far) = in_memory_to("second");
        for stream in [first, second] {
            let refused = manager.register_as(node.clone(), stream, Origin::Accepted);
            assert!(
                matches!(refused, Registered::IncumbentKept(_)),
                "{refused:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(
            closed(&mut first_far).await,
            "the older stream still stands by"
        );
        assert!(
            !closed(&mut second_far).await,
            "the newer stream was dropped"
        );
        let frame = encode(b"ctl", b"early").unwrap();
        second_far.write_all(&frame).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        incumbent.mark_down(DownReason::PeerClosed);
        tokio::time::sleep(Duration::from_millis(1)).await;
        let now = manager
            .get_connection(&node)
            .expect("the newer stream was not registered");
        assert_eq!(now.peer(), "second");
        let frames = frames.lock().unwrap().clone();
        assert_eq!(frames.len(), 1, "{frames:?}");
        assert_eq!(
            (
                frames[0].control.as_slice(),
                frames[0].payload.as_slice(),
                frames[0].generation
            ),
            (&b"ctl"[..], &b"early"[..], now.generation())
        );
    }

    /// A stream stands by once: when the slot has a live connection again
    /// by the time its incumbent went down, it is refused and dropped.
    #[tokio::test(start_paused = true)]
    async fn a_stream_refused_again_after_standing_by_is_dropped() {
        let manager = manager(Planted::none());
        let (node, incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
        incumbent.mark_down(DownReason::PeerClosed);
        let (winner, winner_far) = in_memory_to("winner");
        std::mem::forget(winner_far);
        let winner = manager
            .register_as(node.clone(), winner, Origin::Accepted)
            .into_connection();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(
            closed(&mut fresh_far).await,
            "the stream stood by a second time"
        );
        assert!(Arc::ptr_eq(
            &manager.get_connection(&node).unwrap(),
            &winner
        ));
    }

    /// Half a tick when that is shorter than twice the connect timeout: the
    /// other end hears nothing on the stream meanwhile.
    #[tokio::test(start_paused = true)]
    async fn a_stream_stands_by_at_most_half_a_tick() {
        let mut config = ManagerConfig::new(RuntimeChoice::current());
        config.tick = Some(Duration::from_secs(1));
        let manager = manager_with(config);
        let (_node, _incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
        tokio::time::sleep(Duration::from_millis(490)).await;
        assert!(!closed(&mut fresh_far).await, "dropped before half a tick");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            closed(&mut fresh_far).await,
            "still standing by after half a tick"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_standing_by_does_not_undo_a_manual_disconnect() {
        let manager = manager(Planted::none());
        let (node, _incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
        assert!(manager.disconnect_node(&node));
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(
            manager.get_connection(&node).is_none(),
            "the stream that stood by reconnected a disconnected node"
        );
        assert!(closed(&mut fresh_far).await, "the stream was not dropped");
    }

    #[tokio::test(start_paused = true)]
    async fn a_dial_that_lost_to_a_live_accepted_stream_is_dropped_after_its_window() {
        let manager = manager(Planted::none());
        let (node, incumbent, mut fresh_far) = stale_incumbent_and_losing_dial(&manager);
        // Window: twice the 5 s connect timeout (half the 60 s tick is more).
        tokio::time::sleep(Duration::from_millis(9_990)).await;
        assert!(!closed(&mut fresh_far).await, "dropped before its window");
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            closed(&mut fresh_far).await,
            "the dial was not dropped after its window"
        );
        // Going down now registers nothing: the dial is gone.
        incumbent.mark_down(DownReason::PeerClosed);
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(manager.get_connection(&node).is_none());
    }

    #[cfg(feature = "planted-bugs")]
    #[tokio::test]
    async fn down_entry_treated_as_connected_hands_out_the_dead_generation_and_blocks_the_redial() {
        let manager = manager(Planted::bug(PlantedBug::DownEntryTreatedAsConnected));
        let node = NodeName::from("peer@test");
        let old = manager.register(node.clone(), in_memory());
        flip_only(&old);
        let handed_out = manager
            .get_connection(&node)
            .expect("the planted bug did not show");
        assert!(handed_out.is_down());
        let redialed = manager.register(node.clone(), in_memory());
        assert!(
            Arc::ptr_eq(&redialed, &old),
            "the planted bug did not show: the redial got through"
        );
    }
}
