//! The event log every world records and every checker reads: (virtual time,
//! host, event). Worlds are single-threaded, so the log's order is a
//! linearisation of what happened; checkers rely on that.

use std::fmt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::lanes::LaneExit;
use lanesim_target::node::{
    ControlOutcome as Answered, DataOutcome as Offered, DownReason, SenderLane, SenderStats,
    WriteOutcome,
};
use serde::{Deserialize, Serialize};

mod kind;
mod mesh;

pub use kind::EventKind;
pub use mesh::{DialFailure, Intruder, LinkMsg, LinkSide, MeshFaultApplied, MisdialOutcome, Side};

/// A lane task's end, as the router's [`LaneExit`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exit {
    Reaped,
    Closed,
    Panicked,
    Cancelled,
}

impl From<LaneExit> for Exit {
    fn from(exit: LaneExit) -> Self {
        match exit {
            LaneExit::Reaped => Self::Reaped,
            LaneExit::Closed => Self::Closed,
            LaneExit::Panicked => Self::Panicked,
            LaneExit::Cancelled => Self::Cancelled,
        }
    }
}

/// Which sender lane a frame travelled ([`SenderLane`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    Data,
    Control,
}

impl From<SenderLane> for Lane {
    fn from(lane: SenderLane) -> Self {
        match lane {
            SenderLane::Data => Self::Data,
            SenderLane::Control => Self::Control,
        }
    }
}

/// How a drain write ended ([`WriteOutcome`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Written {
    Written,
    Failed,
    TimedOut,
}

impl From<WriteOutcome> for Written {
    fn from(outcome: WriteOutcome) -> Self {
        match outcome {
            WriteOutcome::Written => Self::Written,
            WriteOutcome::Failed => Self::Failed,
            WriteOutcome::TimedOut => Self::TimedOut,
        }
    }
}

/// A down reason in the log's JSON: its `snake_case` name, as the log's
/// own enums are spelled. The log holds lanesim-target's [`DownReason`]
/// itself (it needs no variant of its own), so its `Debug` and its hash are
/// the reason's.
fn down_reason<S: serde::Serializer>(reason: &DownReason, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(reason.name())
}

/// What `enqueue` did with a data frame ([`Enqueued`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DataOutcome {
    Queued,
    DroppedFull,
    DroppedClosed,
}

impl From<Offered> for DataOutcome {
    fn from(outcome: Offered) -> Self {
        match outcome {
            Offered::Queued => Self::Queued,
            Offered::DroppedFull => Self::DroppedFull,
            Offered::DroppedClosed => Self::DroppedClosed,
        }
    }
}

/// What `enqueue_control` answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlOutcome {
    Queued,
    Overflow,
    Closed,
}

impl From<Answered> for ControlOutcome {
    fn from(outcome: Answered) -> Self {
        match outcome {
            Answered::Queued => Self::Queued,
            Answered::Overflow => Self::Overflow,
            Answered::Closed => Self::Closed,
        }
    }
}

/// How a peer's socket ended, seen from the peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SocketEnd {
    /// End of stream at a frame boundary.
    Eof,
    /// The stream failed (reset, or ended inside a frame).
    Error,
    /// Bytes that are not a frame the world wrote: a control part that is
    /// not a tag, a tagged frame whose payload is not filler, or a header
    /// over the peer's maximum.
    Garbage,
    /// The peer closed it itself, inside a frame it was writing (a
    /// torn-frame fault).
    Torn,
}

/// What a peer did to one of its sockets on a fault's orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerAct {
    /// Stopped reading it, kept it open.
    Wedged,
    /// Closed it.
    Killed,
    /// Wrote the local node a well-formed frame whose body is exactly the
    /// local node's inbound maximum, and read on.
    WroteMaxFrame,
    /// Wrote the local node a header claiming one byte more than its
    /// inbound maximum, and read on.
    WroteOversize,
    /// Wrote the local node the first `bytes` bytes of a frame (fewer than
    /// a header's 8: torn inside the header) and closed the socket.
    Tore { bytes: u32 },
}

impl PeerAct {
    /// Whether the act can rightly end the generation on its socket (S7):
    /// every act but a well-formed frame at the maximum.
    #[must_use]
    pub fn impairs(self) -> bool {
        match self {
            Self::Wedged | Self::Killed | Self::WroteOversize | Self::Tore { .. } => true,
            Self::WroteMaxFrame => false,
        }
    }
}

/// A fault the driver applied (see `fault::Action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultApplied {
    /// The peer is told to stop reading its current socket.
    Wedge,
    /// The peer reads one frame per `every_us` from now on.
    Slow { every_us: u64 },
    /// The peer is told to close its current socket.
    Kill,
    /// The peer host crashed.
    Crash,
    /// The peer host restarted.
    Bounce,
    /// The local node and the peer were partitioned.
    Partition,
    /// The partition healed.
    Repair,
    /// The link gained this latency.
    Latency { us: u64 },
    /// The local node disconnected the peer's live generation.
    Disconnect,
    /// The peer is told to write a frame at the local node's maximum.
    MaxFrame,
    /// The peer is told to write a header over the local node's maximum.
    OversizeFrame,
    /// The peer is told to tear its stream `bytes` bytes into a frame.
    TornFrame { bytes: u32 },
}

/// The sender's counters, as `SenderStats` reports them, in the units the
/// S4 check counts events in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Counts {
    pub data_queued: u64,
    pub data_written: u64,
    /// Failed or timed out.
    pub data_failed: u64,
    pub data_no_connection: u64,
    pub data_discarded: u64,
    pub control_queued: u64,
    pub control_written: u64,
    /// Failed or timed out.
    pub control_failed: u64,
    pub control_skipped: u64,
    pub control_discarded: u64,
}

impl From<SenderStats> for Counts {
    fn from(s: SenderStats) -> Self {
        Self {
            data_queued: s.data_queued,
            data_written: s.data_written,
            data_failed: s.data_failed,
            data_no_connection: s.data_no_connection,
            data_discarded: s.data_discarded,
            control_queued: s.control_queued,
            control_written: s.control_written,
            control_failed: s.control_failed,
            control_skipped: s.control_skipped,
            control_discarded: s.control_discarded,
        }
    }
}

/// One thing that happened. Every field a checker matches on is a small
/// `Copy` enum, matched exhaustively: renaming a production variant breaks
/// the build here instead of silently switching a checker off.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    // ---- lanes world ----
    /// `route` / `dispatch` returned. `depth` is the reported depth before
    /// the item when admitted, `None` when refused.
    Routed {
        key: u64,
        item: u64,
        capacity: Option<u64>,
        depth: Option<u64>,
    },
    /// A `route` call began (the model world's overlapping routes: its
    /// `Routed` is logged when it returns, and the item was admitted
    /// somewhere between the two).
    RouteBegan { key: u64, item: u64 },
    /// A lane task was spawned.
    LaneCreated { key: u64, lane: u64 },
    /// A lane task ended.
    LaneClosed { key: u64, lane: u64, exit: Exit },
    /// A handler began running an item on a lane.
    HandleStart { key: u64, item: u64, lane: u64 },
    /// A handler finished (or panicked: the item still counts as handled).
    HandleEnd {
        key: u64,
        item: u64,
        lane: u64,
        panicked: bool,
    },
    /// The world made this key's handler hang forever from this item on.
    Stuck { key: u64, item: u64, lane: u64 },
    /// The world dropped the router.
    RouterDropped,
    /// The dispatcher's counters, just before the world dropped it.
    DispatcherStats {
        lanes_created: u64,
        lanes_live: u64,
        items_shed: u64,
        handler_panics: u64,
    },

    // ---- sender world ----
    // Peers are numbered (`peer` = index, node name `peer<N>`); a socket is
    // named by the local node's port on it, which both ends log.
    /// A connection generation was registered.
    ConnectionUp {
        peer: u64,
        generation: u64,
        socket: u16,
    },
    /// The down hook fired. `table` is the generation the node's table
    /// slot holds right after, down or not (S3: never the one that went
    /// down).
    ConnectionDown {
        peer: u64,
        generation: u64,
        #[serde(serialize_with = "down_reason")]
        reason: DownReason,
        table: Option<u64>,
    },
    /// A dial failed.
    DialFailed { peer: u64, error: DialFailure },
    /// A data frame was offered to `enqueue`.
    DataEnqueued {
        peer: u64,
        seq: u64,
        outcome: DataOutcome,
    },
    /// A control was offered to `enqueue_control`, pinned to a generation;
    /// `down_at_return` records whether that generation was already down
    /// when the call returned.
    ControlEnqueued {
        peer: u64,
        generation: u64,
        seq: u64,
        link: Option<u64>,
        outcome: ControlOutcome,
        down_at_return: bool,
    },
    /// The drain began writing a frame.
    WriteStarted {
        peer: u64,
        generation: u64,
        lane: Lane,
        seq: u64,
    },
    /// That write ended.
    WriteFinished {
        peer: u64,
        generation: u64,
        lane: Lane,
        seq: u64,
        outcome: Written,
    },
    /// The drain ended in the middle of that write.
    WriteAbandoned {
        peer: u64,
        generation: u64,
        lane: Lane,
        seq: u64,
    },
    /// The drain skipped a control whose pinned generation was down.
    ControlSkipped {
        peer: u64,
        generation: u64,
        seq: u64,
    },
    /// The drain ended with this control unwritten.
    ControlDiscarded {
        peer: u64,
        generation: u64,
        seq: u64,
    },
    /// The drain dropped a data frame: no live connection.
    DataUnroutable { peer: u64, seq: u64 },
    /// The drain ended with this data frame unwritten.
    DataDiscarded { peer: u64, seq: u64 },
    /// The first byte of a tagged frame (`bytes` long, header included)
    /// reached a socket: ground truth for "nothing starts to be written
    /// after a down" (DC-2), and what `lanesim bench` has bare turmoil carry.
    FrameWriteBegun {
        socket: u16,
        lane: Lane,
        seq: u64,
        bytes: u64,
    },
    /// The first byte of an untagged frame (the dialer's hello or proof)
    /// reached a socket: bytes a partition can drop like any other.
    HandshakeWriteBegun { socket: u16 },
    /// A local link was made over a generation.
    Linked {
        peer: u64,
        generation: u64,
        link: u64,
    },
    /// The local side delivered `noconnection` for a link.
    NoConnection {
        peer: u64,
        generation: u64,
        link: u64,
    },
    /// A peer accepted a socket.
    PeerAccepted { peer: u64, socket: u16 },
    /// A peer read a whole tagged frame from a socket; `generation` is the
    /// one the tag says it was pinned to (0 for data).
    FrameArrived {
        peer: u64,
        socket: u16,
        lane: Lane,
        generation: u64,
        seq: u64,
        link: Option<u64>,
    },
    /// A peer acted on a fault for one socket.
    PeerActed {
        peer: u64,
        socket: u16,
        act: PeerAct,
    },
    /// A peer's socket ended.
    PeerSocketClosed {
        peer: u64,
        socket: u16,
        how: SocketEnd,
    },
    /// The driver applied a fault to a peer (or its link).
    Fault { peer: u64, fault: FaultApplied },
    /// The world asked the sender to shut down.
    ShutdownRequested,
    /// The local node disconnected a peer (`disconnect_node`), whose live
    /// generation then was `generation` (none: a no-op).
    Disconnected { peer: u64, generation: Option<u64> },
    /// The sender's final counters (S4).
    SenderStats(Counts),
    /// At the end, the generation a peer's table slot holds, down or not.
    TableAtEnd { peer: u64, generation: Option<u64> },

    // ---- mesh world ----
    // Nodes are numbered (`node` = index, host and node name `node<N>`); a
    // socket is named by its dialer's address, which both ends know.
    /// A node's software started: its incarnation (0 first, then one per
    /// restart).
    NodeStarted { node: u64, incarnation: u64 },
    /// A generation was registered at `node` for `peer`.
    MeshUp {
        node: u64,
        peer: u64,
        generation: u64,
        origin: Side,
        socket: SocketAddr,
    },
    /// The down hook fired at `node`.
    MeshDown {
        node: u64,
        peer: u64,
        generation: u64,
        #[serde(serialize_with = "down_reason")]
        reason: DownReason,
    },
    /// `node` made `link` over its generation toward `peer`.
    MeshLinked {
        node: u64,
        peer: u64,
        generation: u64,
        link: u64,
    },
    /// `node` offered a link's LINK or EXIT control, pinned to its
    /// generation, to `enqueue_control`.
    MeshControl {
        node: u64,
        peer: u64,
        generation: u64,
        link: u64,
        msg: LinkMsg,
        outcome: ControlOutcome,
    },
    /// A frame arrived at `node` from `peer` on `node`'s generation that
    /// is neither a data frame nor a LINK or EXIT: no node of the mesh
    /// writes one (`control_len`, `payload_len`: its parts' lengths).
    MeshStrayFrame {
        node: u64,
        peer: u64,
        generation: u64,
        control_len: u64,
        payload_len: u64,
    },
    /// A LINK or EXIT arrived at `node` from `peer` on `node`'s generation.
    MeshArrived {
        node: u64,
        peer: u64,
        generation: u64,
        link: u64,
        msg: LinkMsg,
    },
    /// `node` delivered `noconnection` for a link over its generation.
    MeshNoConnection {
        node: u64,
        peer: u64,
        generation: u64,
        link: u64,
        side: LinkSide,
    },
    /// The driver applied a mesh fault.
    MeshFault { fault: MeshFaultApplied },
    /// A squatter proved itself to `node` as node `claimed`, from `socket`.
    MeshSquat {
        node: u64,
        claimed: u64,
        socket: SocketAddr,
    },
    /// The insider proved itself to `node` as node `claimed`, from
    /// `socket`: it keeps its heartbeat and denies every claim query.
    MeshClaim {
        node: u64,
        claimed: u64,
        socket: SocketAddr,
    },
    /// `node` offered data frame `seq` for `peer` to `enqueue`.
    MeshDataSent {
        node: u64,
        peer: u64,
        seq: u64,
        outcome: DataOutcome,
    },
    /// Data frame `seq` from `peer` arrived at `node` on `node`'s generation.
    MeshDataArrived {
        node: u64,
        peer: u64,
        generation: u64,
        seq: u64,
    },
    /// Both ends of a pair sent their first dial in this instant (logged by
    /// the lower-numbered node): a simultaneous connect with no fault.
    MeshDialedTogether { a: u64, b: u64 },
    /// At the end: the socket of `node`'s live connection toward `peer`.
    MeshTableAtEnd {
        node: u64,
        peer: u64,
        socket: Option<SocketAddr>,
    },

    // ---- all ----
    /// The workload finished and the world began its end-of-run checks.
    WorkloadDone,
    /// The run ended; `finished` is false when the virtual-time budget ran out.
    RunEnd { finished: bool },

    // ---- sender (last, so every older variant hashes as it always did) ----
    /// The local node's read loop read a whole frame of `bytes` bytes (body)
    /// from `peer` on `generation` (only a hostile peer ever writes one).
    InboundFrameRead {
        peer: u64,
        generation: u64,
        bytes: u64,
    },

    // ---- mesh, newer ----
    /// At the end, a fresh stream dialed `node` and proved the cookie; `accepted`:
    /// the node wrote to it (a keepalive) before the probe gave up, after
    /// `attempts` dials.
    MeshProbe {
        node: u64,
        accepted: bool,
        attempts: u64,
    },
    /// During a flood of `node`, the prober dialed it `dials` times from
    /// an address of its own, one after another, and `accepted` of them
    /// were accepted (the node wrote to the stream after the handshake)
    /// within a dial's wait.
    MeshFloodProbe {
        node: u64,
        dials: u64,
        accepted: u64,
    },
    /// One flooder's streams to `node` during one flood of `us` ended (as
    /// the flood did): `streams` opened (each saying hello first, if
    /// `hello`); the longest any stayed open, from its connect until the
    /// node closed it or the flood ended, `longest_us`; `open_at_end` were
    /// still open as it ended (M7: none held longer than a handshake's
    /// deadline, [`half_open_bound`](crate::check::mesh::half_open_bound)).
    MeshFloodHeld {
        node: u64,
        us: u64,
        hello: bool,
        streams: u64,
        longest_us: u64,
        open_at_end: u64,
    },
    /// `node` had no descriptor left for a socket (a dial or an accept
    /// failed with `EMFILE`): `open` of its sockets were open, within the
    /// `limit` its transport told it (the process holding
    /// [`PROCESS_HELD`](crate::world::descriptors::PROCESS_HELD) more).
    /// Logged once per run of refusals.
    MeshDescriptorsOut { node: u64, open: u64, limit: u64 },
    /// The impostor's stream to `node`, claiming `claimed`, ended: `read`
    /// bytes arrived after the node's challenge (0 unless the node
    /// registered it), and whether the node closed it (else the impostor
    /// gave up two ticks after its proof).
    MeshImpostor {
        node: u64,
        claimed: u64,
        socket: SocketAddr,
        read: u64,
        closed: bool,
    },
    /// The trickler's stream to `node` ended `held_us` after it wrote its
    /// frame's header, having written `sent` bytes of the body (one per
    /// quarter tick); `closed`: the node closed it (else the trickler gave
    /// up when its fault ended).
    MeshTrickle {
        node: u64,
        socket: SocketAddr,
        sent: u64,
        held_us: u64,
        closed: bool,
    },
    /// `node`'s dial of `named`, at an address where `answerer` answers
    /// (`None`: the stranger), ended (M8: never `Registered`).
    MeshMisdialed {
        node: u64,
        named: u64,
        answerer: Option<u64>,
        outcome: MisdialOutcome,
    },
    /// The stranger (no cookie) answered `node`'s dial of `named` on
    /// `socket` with a challenge under `named`'s name and a proof it could
    /// not make, then read what the node wrote for two ticks or until it
    /// closed the stream: `wrote` bytes (M8: none, no proof goes to an
    /// acceptor that did not prove the cookie).
    MeshStranger {
        node: u64,
        named: u64,
        socket: SocketAddr,
        wrote: u64,
    },
    /// `node`'s dial of `peer` failed.
    MeshDialFailed {
        node: u64,
        peer: u64,
        error: DialFailure,
    },
    /// What `node` holds of frames it has not finished reading crossed its
    /// frame budget: `over`, holding `bytes`; or back under it, having held
    /// at most `bytes` meanwhile (measured at its read halves, M9).
    MeshHeld { node: u64, over: bool, bytes: u64 },
    /// `node` took a stream down for its frame budget (`OverBudget`) while
    /// holding `held` bytes of frames it had not finished reading
    /// (measured at its read halves, M9).
    MeshBudgetDown { node: u64, held: u64 },
    /// `node` took down a generation of a host that is no node, and said
    /// why (M9: a trickle cut at the deadline is `FrameTimeout`, a spender
    /// refused for the budget `OverBudget`).
    MeshIntruderDown {
        node: u64,
        intruder: Intruder,
        #[serde(serialize_with = "down_reason")]
        reason: DownReason,
    },

    // ---- all, scheduling exploration ----
    /// The scheduling explorer held a task back for `held_us` of virtual
    /// time before its next poll (a descheduled thread, `explore`): every
    /// timing bound grows by the time tasks were held within it
    /// (`check::holds`).
    TaskHeld { held_us: u64 },
}

/// An event with its time and host.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Record {
    /// Virtual time since the world started.
    #[serde(serialize_with = "as_micros")]
    pub at: Duration,
    /// Which simulated host recorded it (interned: one allocation per host
    /// name per run, not per event).
    pub host: Arc<str>,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

fn as_micros<S: serde::Serializer>(at: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(at.as_micros() as u64)
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:>12.6}s {:>6}] {:?}",
            self.at.as_secs_f64(),
            self.host,
            self.event
        )
    }
}

/// The shared, append-only log. Cheap to clone; `Send + Sync` because the
/// production code's hooks must be.
#[derive(Clone, Default)]
pub struct EventLog {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    records: Vec<Record>,
    hosts: Vec<Arc<str>>,
    /// A counting log ([`EventLog::counting`]): how many records were
    /// pushed and when the last one was, nothing else.
    counting: Option<(usize, Option<Duration>)>,
}

impl EventLog {
    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A log that keeps no records, only how many were pushed and when the
    /// last one was: what a world's own control flow reads of its log (the
    /// sender world's end waits for the log to go quiet), so a world run
    /// with it takes exactly the steps it takes with a full log. For the
    /// benchmark of what observing a run costs (`run::bench`), pinned by
    /// `an_unobserved_run_takes_the_same_steps`.
    #[must_use]
    pub fn counting() -> Self {
        let log = Self::default();
        log.inner().counting = Some((0, None));
        log
    }

    /// Appends `event` at virtual time `at`, from `host`.
    pub fn push(&self, at: Duration, host: &str, event: Event) {
        self.push_timed(|| at, host, event);
    }

    /// Appends `event` from `host` at the time `now` reads under the log's
    /// lock, so records pushed from many threads (real mode) stay in time
    /// order.
    pub fn push_timed(&self, now: impl FnOnce() -> Duration, host: &str, event: Event) {
        let mut inner = self.inner();
        let at = now();
        if let Some((count, last)) = &mut inner.counting {
            *count += 1;
            *last = Some(at);
            return;
        }
        tracing::debug!(target: "lanesim::event", at = %format_args!("{:.6}s", at.as_secs_f64()), host, ?event);
        let host = match inner.hosts.iter().find(|known| &***known == host) {
            Some(known) => Arc::clone(known),
            None => {
                let interned: Arc<str> = Arc::from(host);
                inner.hosts.push(Arc::clone(&interned));
                interned
            }
        };
        inner.records.push(Record { at, host, event });
    }

    /// How many records so far.
    #[must_use]
    pub fn len(&self) -> usize {
        let inner = self.inner();
        inner
            .counting
            .map_or(inner.records.len(), |(count, _)| count)
    }

    /// When the last record was made, if any.
    #[must_use]
    pub fn last_at(&self) -> Option<Duration> {
        let inner = self.inner();
        match inner.counting {
            Some((_, last)) => last,
            None => inner.records.last().map(|record| record.at),
        }
    }

    /// Whether nothing was recorded yet.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Everything so far, taken out of the log (which starts again empty):
    /// a world takes its records once, at its end, and copying them cost a
    /// few percent of a short run.
    #[must_use]
    pub fn take(&self) -> Vec<Record> {
        std::mem::take(&mut self.inner().records)
    }
}

/// A hasher with no seed, so equal logs hash equal in every process on
/// every machine: FNV-1a's offset and prime, taken a word at a time (a
/// byte at a time, hashing the log was a tenth of a short lanes run), each
/// word folded down after its multiply so high bits reach the low ones.
/// Integers are hashed by value, so the result does not depend on the
/// machine's byte order either.
struct Fnv(u64);

impl Fnv {
    fn word(&mut self, word: u64) {
        let mixed = (self.0 ^ word).wrapping_mul(0x100_0000_01b3);
        self.0 = mixed ^ (mixed >> 29);
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.word(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        let mut last = [0; 8];
        last[..rest.len()].copy_from_slice(rest);
        // The length, so "ab" + "" and "a" + "b" differ.
        self.word(u64::from_le_bytes(last) ^ ((bytes.len() as u64) << 56));
    }

    fn write_u8(&mut self, value: u8) {
        self.word(u64::from(value));
    }

    fn write_u16(&mut self, value: u16) {
        self.word(u64::from(value));
    }

    fn write_u32(&mut self, value: u32) {
        self.word(u64::from(value));
    }

    fn write_u64(&mut self, value: u64) {
        self.word(value);
    }

    fn write_usize(&mut self, value: usize) {
        self.word(value as u64);
    }
}

/// A record's hash.
#[must_use]
pub fn record_hash(record: &Record) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = Fnv(0xcbf2_9ce4_8422_2325);
    record.hash(&mut hasher);
    hasher.finish()
}

/// The hash of a whole log, in order.
#[must_use]
pub fn log_hash(records: &[Record]) -> u64 {
    records
        .iter()
        .fold(0x8422_2325_cbf2_9ce4u64, |acc, record| {
            (acc ^ record_hash(record))
                .wrapping_mul(0x100_0000_01b3)
                .rotate_left(5)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(at_us: u64, host: &str, event: Event) -> Record {
        Record {
            at: Duration::from_micros(at_us),
            host: Arc::from(host),
            event,
        }
    }

    /// A down reason is spelled in JSON as the log's own enums are (as the
    /// log's `Down` enum spelled it before the log held `DownReason`).
    #[test]
    fn down_reasons_are_snake_case_in_json() {
        let event = Event::MeshIntruderDown {
            node: 1,
            intruder: Intruder::Trickler,
            reason: DownReason::SimultaneousConnect,
        };
        let json = serde_json::to_value(&event).expect("serializes");
        assert_eq!(json["reason"], "simultaneous_connect");
        assert_eq!(json["intruder"], "trickler");
    }

    /// The word-wise hash still tells apart records that differ in any
    /// part, hosts whose names differ only in length or a late byte included.
    #[test]
    fn records_that_differ_anywhere_hash_differently() {
        let base = record(7, "peer1", Event::WorkloadDone);
        let others = [
            record(8, "peer1", Event::WorkloadDone),
            record(7, "peer2", Event::WorkloadDone),
            record(7, "peer10", Event::WorkloadDone),
            record(7, "peer", Event::WorkloadDone),
            record(7, "peer1", Event::RunEnd { finished: true }),
            record(7, "peer1", Event::ShutdownRequested),
        ];
        let hash = record_hash(&base);
        assert_eq!(hash, record_hash(&base.clone()));
        for other in &others {
            assert_ne!(hash, record_hash(other), "{other:?}");
        }
        let log = [base.clone(), others[0].clone()];
        let swapped = [others[0].clone(), base];
        assert_ne!(log_hash(&log), log_hash(&swapped));
    }
}
