//! What a scenario file may say. Every table denies unknown keys; ranges are
//! `[min, max]` and sampled per seed (see `sample`).

use serde::{Deserialize, Serialize};

use super::sample::{Dur, Sampled};
use crate::world_kind::WorldKind;

/// A whole scenario file. Serializes back to the TOML it was read from
/// (the hunt writes the cases it generates and shrinks this way).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Short name; defaults to the file stem.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What the scenario injects and why.
    pub description: String,
    /// Which world runs it.
    pub world: WorldKind,
    /// The contracts this scenario checks (e.g. `["L1", "L3"]`).
    pub checks: Vec<Contract>,
    /// Seeds `run` uses without `--seed`/`--seeds`: `"A..B"` (B excluded)
    /// or `"A..=B"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<super::seeds::SeedRange>,
    /// Virtual-time budget; a run still going then is a liveness failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Dur>,
    /// Per-event ranges (`gap`, `pause`, `handler`, `burst`, `frame_bytes`,
    /// `preempt_for`) are the run's sub-range as written, not a range to
    /// draw one from: the file pins one run's parameters exactly (the hunt
    /// writes its cases this way). No `chaos` then: every fault is listed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exact: bool,
    /// Real mode (`run --real`) multiplies every duration the world acts on
    /// (timeouts, redial pause, gaps, fault times and durations, the
    /// budget) by this, in `[0.01, 1]`, so a real run takes seconds; its log
    /// reads wall time divided by it. Default 1. Simulation ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_time_scale: Option<f64>,
    /// Coverage marks this scenario exists to reach: `"mark"` (some seed of
    /// a sweep must reach it) or `"mark >= 25%"` (that share of its seeds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reaches: Vec<String>,
    /// The lanes world's workload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lanes: Option<LanesSpec>,
    /// The sender world's workload and faults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sender: Option<SenderSpec>,
    /// The mesh world's nodes, workload and faults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshSpec>,
}

/// The contracts a checker decides (docs/contracts.md).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, serde::Serialize,
)]
pub enum Contract {
    L1,
    L2,
    L3,
    L4,
    L5,
    L6,
    #[serde(rename = "DC-1")]
    Dc1,
    #[serde(rename = "DC-2")]
    Dc2,
    #[serde(rename = "DC-5")]
    Dc5,
    S1,
    S2,
    S3,
    S4,
    S5,
    S6,
    S7,
    S8,
    /// Independence across peers: one peer's trouble (a fault on it or its
    /// link, or its own flood of controls) never takes a healthy peer's
    /// generation down, never has its frames refused, and delays them by
    /// at most one write per other peer.
    S9,
    /// End to end: no death signal is lost, none is invented.
    #[serde(rename = "E2E")]
    EndToEnd,
    /// Mesh: every pair that both want connected converges on one live
    /// generation, the same socket on both ends.
    M1,
    /// Mesh: no lost death signal: every link's EXIT arrives on the socket
    /// it was made over, or `noconnection` is delivered on that end.
    M2,
    /// Mesh: no spurious `noconnection`: only for a link over a generation
    /// that went down, once.
    M3,
    /// Mesh: the down hook fires once per generation on each end, and every
    /// generation that is not live at the end went down.
    M4,
    /// Mesh: a silent or half-open generation goes down within the
    /// heartbeat tick plus slack.
    M5,
    /// Mesh: FIFO per connection: the data frames one node sent over one
    /// socket arrive in the order sent, each at most once.
    M6,
    /// Mesh: a node accepts for its whole life: after every fault, a fresh
    /// stream that dials it and proves the cookie is accepted.
    M7,
    /// Mesh: a stream whose peer did not prove the cookie is never
    /// registered and is written nothing after the handshake.
    M8,
    /// Mesh: no node is downed for the frame budget others spent: a
    /// generation between two nodes never goes down `OverBudget`.
    M9,
}

impl Contract {
    /// The name used in files and reports.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::L1 => "L1",
            Self::L2 => "L2",
            Self::L3 => "L3",
            Self::L4 => "L4",
            Self::L5 => "L5",
            Self::L6 => "L6",
            Self::Dc1 => "DC-1",
            Self::Dc2 => "DC-2",
            Self::Dc5 => "DC-5",
            Self::S1 => "S1",
            Self::S2 => "S2",
            Self::S3 => "S3",
            Self::S4 => "S4",
            Self::S5 => "S5",
            Self::S6 => "S6",
            Self::S7 => "S7",
            Self::S8 => "S8",
            Self::S9 => "S9",
            Self::EndToEnd => "E2E",
            Self::M1 => "M1",
            Self::M2 => "M2",
            Self::M3 => "M3",
            Self::M4 => "M4",
            Self::M5 => "M5",
            Self::M6 => "M6",
            Self::M7 => "M7",
            Self::M8 => "M8",
            Self::M9 => "M9",
        }
    }

    /// Its name in a few words (docs/contracts.md has each in full).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::L1 => "per-key FIFO",
            Self::L2 => "exactly once",
            Self::L3 => "one live lane per key",
            Self::L4 => "capacity",
            Self::L5 => "reap soundness",
            Self::L6 => "independence",
            Self::Dc1 => "send or down",
            Self::Dc2 => "generation pinning",
            Self::Dc5 => "FIFO",
            Self::S1 => "enqueue never awaits",
            Self::S2 => "bounded stall",
            Self::S3 => "down once",
            Self::S4 => "accounting",
            Self::S5 => "safe drop",
            Self::S6 => "written means delivered",
            Self::S7 => "no spurious down",
            Self::S8 => "redial liveness",
            Self::S9 => "independence across peers",
            Self::EndToEnd => "no death signal lost",
            Self::M1 => "pair agreement",
            Self::M2 => "no lost death signal",
            Self::M3 => "no spurious noconnection",
            Self::M4 => "down hook once",
            Self::M5 => "silence is death",
            Self::M6 => "FIFO per connection",
            Self::M7 => "accepts for life",
            Self::M8 => "only proven peers",
            Self::M9 => "bounded spending",
        }
    }

    /// Every contract, in report order.
    pub const ALL: [Contract; 28] = [
        Self::L1,
        Self::L2,
        Self::L3,
        Self::L4,
        Self::L5,
        Self::L6,
        Self::Dc1,
        Self::Dc2,
        Self::Dc5,
        Self::S1,
        Self::S2,
        Self::S3,
        Self::S4,
        Self::S5,
        Self::S6,
        Self::S7,
        Self::S8,
        Self::S9,
        Self::EndToEnd,
        Self::M1,
        Self::M2,
        Self::M3,
        Self::M4,
        Self::M5,
        Self::M6,
        Self::M7,
        Self::M8,
        Self::M9,
    ];

    /// Why no simulated world can decide this contract, if none can. A
    /// scenario that lists it is refused at load time.
    #[must_use]
    pub fn undecidable_in_simulation(self) -> Option<&'static str> {
        match self {
            Self::S1 => Some(
                "S1 (enqueue never blocks) is decided by the types, the loom models and the \
                 real-mode tests: a single-threaded simulated host cannot observe a blocked \
                 synchronous call",
            ),
            Self::S5 => Some(
                "S5 (safe runtime drop) is decided by the real-mode tests: a simulated host \
                 never owns a runtime",
            ),
            _ => None,
        }
    }

    /// The world whose log this contract is about.
    #[must_use]
    pub fn world(self) -> WorldKind {
        match self {
            Self::L1 | Self::L2 | Self::L3 | Self::L4 | Self::L5 | Self::L6 => WorldKind::Lanes,
            Self::M1
            | Self::M2
            | Self::M3
            | Self::M4
            | Self::M5
            | Self::M6
            | Self::M7
            | Self::M8
            | Self::M9 => WorldKind::Mesh,
            _ => WorldKind::Sender,
        }
    }
}

/// How the lanes world's producers reach the router.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// `OrderedDispatcher`, `OverflowPolicy::Reject` (panics caught).
    Reject,
    /// `OrderedDispatcher`, `OverflowPolicy::Warn` (panics caught).
    Warn,
    /// `LaneRouter::route` directly: a panicking consumer kills its lane.
    Raw,
}

/// `mesh.inbound_caps`: the caps a node is configured with
/// ([`lanesim_target::node::InboundCaps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InboundCapsSpec {
    /// Inbound streams in their handshake at once.
    pub handshakes: u64,
    /// Inbound streams open at once.
    pub connections: u64,
}

/// The lanes world.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LanesSpec {
    /// Distinct keys.
    pub keys: Sampled<u64>,
    /// Producer tasks.
    pub producers: Sampled<u64>,
    /// Items each producer routes.
    pub items_per_producer: Sampled<u64>,
    /// Items per burst.
    pub burst: Sampled<u64>,
    /// Gap between items inside a burst.
    pub gap: Sampled<Dur>,
    /// Pause between bursts (set it near `idle_ttl` for reap races).
    pub pause: Sampled<Dur>,
    /// Chance an item goes to key 0 instead of a uniform key (one hot key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_key: Option<Sampled<f64>>,
    /// How long a handler runs.
    pub handler: Sampled<Dur>,
    /// Idle TTL; absent = never reap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_ttl: Option<Sampled<Dur>>,
    /// Per-lane capacity / dispatcher limit; absent = unbounded (raw only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Sampled<u64>>,
    /// Router or dispatcher, and overflow policy.
    pub policy: Policy,
    /// Chance a handler panics after its first await.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub panic_chance: Option<Sampled<f64>>,
    /// Chance a handler panics before returning its future.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_panic_chance: Option<Sampled<f64>>,
    /// When to drop the router mid-run; absent = at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_router_at: Option<Sampled<Dur>>,
    /// Keys whose handler hangs forever on their first item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck_keys: Option<Sampled<u64>>,
    /// Chance of extra yields / short sleeps at each await point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buggify: Option<Sampled<f64>>,
    /// Chance that a preemption point in the production code preempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<Sampled<f64>>,
    /// How long a preempted point sleeps (a per-run sub-range; zero yields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_for: Option<Sampled<Dur>>,
    /// Chance the scheduler polls a random ready task instead of the
    /// oldest (scheduling exploration; needs lanesim's tokio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<Sampled<f64>>,
    /// Chance a task about to be polled is preempted at one of its next
    /// await points on a tokio resource, or held back for `preempt_for`
    /// (scheduling exploration; needs lanesim's tokio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_awaits: Option<Sampled<f64>>,
}

/// The sender world.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SenderSpec {
    /// Peer hosts.
    pub peers: Sampled<u64>,
    /// Data frames the local node enqueues, in all.
    pub data_frames: Sampled<u64>,
    /// Links made (each later sends one EXIT control).
    pub links: Sampled<u64>,
    /// Bytes of payload per frame.
    pub frame_bytes: Sampled<u64>,
    /// Gap between enqueues.
    pub gap: Sampled<Dur>,
    /// Data lane capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_capacity: Option<Sampled<u64>>,
    /// Control lane capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_capacity: Option<Sampled<u64>>,
    /// Per-write deadline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_timeout: Option<Sampled<Dur>>,
    /// Dial timeout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<Sampled<Dur>>,
    /// Redial a downed node after this long; absent = never redial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redial_after: Option<Sampled<Dur>>,
    /// Largest write the simulated socket accepts at once (bytes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mss: Option<Sampled<u64>>,
    /// turmoil's tick.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<Dur>,
    /// turmoil's per-direction segment credit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp_capacity: Option<Sampled<u64>>,
    /// Extra random faults drawn from `chaos_kinds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chaos: Option<Sampled<u64>>,
    /// Fault kinds chaos may draw (default: every kind but resets and
    /// exhaust).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chaos_kinds: Option<Vec<FaultKind>>,
    /// Shut the sender down at this time; absent = never (it is dropped at
    /// the end of the run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shutdown_at: Option<Sampled<Dur>>,
    /// The local node's heartbeat tick; the peers then write a keepalive
    /// every quarter of it, so writes to a peer contend with the node's own
    /// keepalives for the writer. Absent: no heartbeat, peers never write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<Dur>,
    /// Chance that a preemption point in the production code preempts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<Sampled<f64>>,
    /// How long a preempted point sleeps (a per-run sub-range; zero yields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_for: Option<Sampled<Dur>>,
    /// Chance the scheduler polls a random ready task instead of the
    /// oldest (scheduling exploration; needs lanesim's tokio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<Sampled<f64>>,
    /// Chance a task about to be polled is preempted at one of its next
    /// await points on a tokio resource, or held back for `preempt_for`
    /// (scheduling exploration; needs lanesim's tokio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_awaits: Option<Sampled<f64>>,
    /// Scripted faults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault: Vec<FaultSpec>,
}

/// What can go wrong with a peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Stops reading its current socket (kept open).
    Wedge,
    /// Reads slowly: one frame per `every`.
    Slow,
    /// Closes its current socket.
    Kill,
    /// Crashes, and is restarted after `for`.
    CrashBounce,
    /// Partitioned from the local node, healed after `for`.
    Partition,
    /// Adds link latency.
    Latency,
    /// The local node disconnects the peer's live generation
    /// (`disconnect_node`): a local, not a peer, fault.
    Disconnect,
    /// The peer writes the local node one well-formed frame whose body is
    /// exactly the local node's inbound maximum: it must be read, not
    /// refused.
    MaxFrame,
    /// The peer writes the local node a header claiming one byte more than
    /// its inbound maximum: the generation must go down (`ReadError`).
    OversizeFrame,
    /// The peer writes the local node part of a frame (a header cut short,
    /// or a whole header and part of its body) and closes its socket: a
    /// torn stream, which must go down as a read error, not a clean close.
    TornFrame,
}

impl FaultKind {
    /// What sender chaos draws from when a scenario does not say: the
    /// faults every sender scenario has always had (the hostile-frame kinds
    /// are opt-in through `chaos_kinds`, so adding them moved no existing
    /// scenario's draws). The hunt draws from [`FaultKind::ALL`].
    pub const DRAWN: [FaultKind; 7] = [
        Self::Wedge,
        Self::Slow,
        Self::Kill,
        Self::CrashBounce,
        Self::Partition,
        Self::Latency,
        Self::Disconnect,
    ];

    /// Every kind, in the order the hunt's genes number them: the drawn
    /// ones, then the hostile frames (`every_fault_kind_is_in_all`).
    pub const ALL: [FaultKind; 10] = {
        let mut all = [Self::MaxFrame; 10];
        let mut i = 0;
        while i < Self::DRAWN.len() {
            all[i] = Self::DRAWN[i];
            i += 1;
        }
        all[8] = Self::OversizeFrame;
        all[9] = Self::TornFrame;
        all
    };

    /// Its place in [`FaultKind::ALL`] (exhaustive: a new kind fails to
    /// compile here until it is placed).
    #[must_use]
    pub fn index(self) -> usize {
        match self {
            Self::Wedge => 0,
            Self::Slow => 1,
            Self::Kill => 2,
            Self::CrashBounce => 3,
            Self::Partition => 4,
            Self::Latency => 5,
            Self::Disconnect => 6,
            Self::MaxFrame => 7,
            Self::OversizeFrame => 8,
            Self::TornFrame => 9,
        }
    }

    /// Whether the fault takes a `for` (a duration, or slow's read interval).
    #[must_use]
    pub fn lasts(self) -> bool {
        match self {
            Self::Slow | Self::CrashBounce | Self::Partition | Self::Latency => true,
            Self::Wedge
            | Self::Kill
            | Self::Disconnect
            | Self::MaxFrame
            | Self::OversizeFrame
            | Self::TornFrame => false,
        }
    }
}

/// One scripted fault.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// What.
    pub kind: FaultKind,
    /// Which peer (index).
    pub peer: Sampled<u64>,
    /// When.
    pub at: Sampled<Dur>,
    /// How long (crash_bounce, partition, latency), or the read interval (slow).
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    pub lasting: Option<Sampled<Dur>>,
    /// torn_frame only: how many bytes of the frame the peer writes before
    /// it closes the socket, 1 to [`TORN_FRAME_LEN`] - 1 (under 8: inside
    /// the header); absent, drawn per run from that whole range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Sampled<u64>>,
    /// oversize_frame only: which length of the header's two (control,
    /// payload) carries the excess; absent, drawn per run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<OversizeSplit>,
}

/// Where an `oversize_frame` header puts its claim of one byte over the
/// local maximum: a decoder must refuse the sum of the header's two
/// lengths, not either one alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OversizeSplit {
    /// All in the payload length (the control length 0).
    Payload,
    /// All in the control length (the payload length 0).
    Control,
    /// Half each: neither length alone is over the maximum.
    Both,
}

impl OversizeSplit {
    /// Every split, in the order draws index them.
    pub const ALL: [OversizeSplit; 3] = [Self::Payload, Self::Control, Self::Both];

    /// The (control, payload) lengths of a header claiming `max + 1`.
    #[must_use]
    pub fn lengths(self, max: u64) -> (u64, u64) {
        let over = max + 1;
        match self {
            Self::Payload => (0, over),
            Self::Control => (over, 0),
            Self::Both => (over / 2, over - over / 2),
        }
    }
}

/// The whole length of the frame a `torn_frame` peer starts to write: an
/// 8-byte header announcing a 32-byte body. A tear is 1 to 39 bytes in.
pub const TORN_FRAME_LEN: u64 = 40;

/// The mesh world: `nodes` production nodes (manager, sender, link tables),
/// each dialing every other on its own schedule and accepting their dials.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeshSpec {
    /// Production nodes (2 to 64).
    pub nodes: Sampled<u64>,
    /// Links each node makes (each sends a LINK control, and an EXIT
    /// control `hold` later, pinned to the generation it was made over).
    pub links: Sampled<u64>,
    /// Data frames each node sends, to peers drawn at random, over the
    /// workload window (best effort, resolved by node at write time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Sampled<u64>>,
    /// The window the links are made in.
    pub workload: Dur,
    /// How long a link lives before its EXIT (a per-run sub-range).
    pub hold: Sampled<Dur>,
    /// Chance that a pair's first dials leave both ends at the same
    /// virtual instant (a simultaneous connect).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross_dial: Option<Sampled<f64>>,
    /// The window the first dials are spread over (default: 100ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dial_spread: Option<Dur>,
    /// Every first dial, node by node (an exact file's: written instead of
    /// `cross_dial` and `dial_spread`, `nodes` rows of `nodes` times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_dials: Option<Vec<Vec<Dur>>>,
    /// The production heartbeat tick (default: 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<Dur>,
    /// The nodes' frame deadline: how long a frame's body may take after
    /// its header (default: two heartbeat ticks). Shorter than the gap
    /// between keepalives, it tells a deadline that starts at the header
    /// from one that counts the quiet wait for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_timeout: Option<Dur>,
    /// Dial timeout (default: 500ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_timeout: Option<Dur>,
    /// The descriptor limit the network tells each node (default: none, no
    /// limit to fit): a node fits its inbound caps within it, so a small
    /// one gives small caps that floods and dials reach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptors: Option<u64>,
    /// The inbound caps each node is configured with (default: the
    /// node's own): with `descriptors`, caps near the limit that a node
    /// must fit within it, keeping room for its own dials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inbound_caps: Option<InboundCapsSpec>,
    /// A node with no live connection to another redials after this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redial_after: Option<Sampled<Dur>>,
    /// turmoil's tick (default: 1ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<Dur>,
    /// Extra random faults drawn from `chaos_kinds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chaos: Option<Sampled<u64>>,
    /// Fault kinds chaos may draw (default: every kind but resets and
    /// exhaust).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chaos_kinds: Option<Vec<MeshFaultKind>>,
    /// Chance the scheduler polls a random ready task instead of the
    /// oldest (scheduling exploration; needs lanesim's tokio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shuffle: Option<Sampled<f64>>,
    /// Chance a task about to be polled is preempted at one of its next
    /// await points on a tokio resource, or held back for `preempt_for`
    /// (scheduling exploration; needs lanesim's tokio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_awaits: Option<Sampled<f64>>,
    /// How long a held task waits (a per-run sub-range; the mesh has no
    /// preemption points, so only the explorer's holds use it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt_for: Option<Sampled<Dur>>,
    /// Scripted faults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault: Vec<MeshFaultSpec>,
}

/// What can go wrong in a mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MeshFaultKind {
    /// Node `a` crashes and restarts `for` later: a new incarnation under
    /// the same name.
    Restart,
    /// `a` and `b` are partitioned for `for`: segments are held, as TCP
    /// retransmission would, and delivered when it heals.
    Partition,
    /// Segments from `a` to `b` are dropped for `for` (at least a heartbeat
    /// tick and a half: shorter drops lose bytes no real TCP would).
    HalfOpen,
    /// Node `a` disconnects its live generation to `b`.
    Kill,
    /// The link between `a` and `b` gains an eighth of a heartbeat tick of
    /// latency for `for`.
    Latency,
    /// A host that holds the cookie dials `a`, proves itself as node `b`,
    /// and stays silent.
    Squat,
    /// A host that holds the cookie dials `a` and proves itself as node
    /// `b`, then keeps its heartbeat alive and denies every claim query it
    /// is asked (an insider): it must not displace a live generation of
    /// `b` at `a`, nor hold `b`'s name against `b`.
    Claim,
    /// A host without the cookie dials `a` four times, saying hello as
    /// node `b`: proving another cookie, reflecting `a`'s own proof,
    /// sending an empty proof, and replaying the first stream's hello with
    /// the proof an honest dialer would have made for it; on each it reads
    /// what it is sent (for two ticks, writing keepalives): it must never
    /// be registered nor written to.
    Impostor,
    /// A host with the cookie opens five streams to `a`, and on each sends
    /// all but one byte of a frame of the largest size, and holds them for
    /// `for` (under a heartbeat tick): together more than `a`'s frame
    /// budget. `b` is ignored.
    Spend,
    /// A host with the cookie opens a stream to `a`, sends the header of a
    /// frame of the largest size and then one byte of its body every
    /// quarter tick, for `for` (longer than the frame deadline, two ticks,
    /// and its slack: see `mesh_trickle_bound`): often enough for the
    /// silence clock, too slow for the deadline. `b` is ignored.
    Trickle,
    /// `a` and `b` disconnect each other and both redial at once: a
    /// simultaneous connect mid-run.
    CrossDial,
    /// Node `a` stops reading what `b` sends, for `for` (its socket stays
    /// open; `b`'s writes back up).
    Wedge,
    /// Node `a` reads what `b` sends one read per sixteenth of a tick,
    /// for `for`.
    Slow,
    /// A host floods node `a` with half-open handshakes from one address
    /// (or `hosts` hosts, each its own address) for `for`: 320 streams at
    /// once in all (more than the default 256 handshake places), each
    /// silent, and each reopened the moment `a` closes it.
    /// Honest dials to `a` from elsewhere must keep completing meanwhile
    /// (M7). `b` is ignored.
    Flood,
    /// Every stream dialed to node `a` is reset before `a` accepts it, for
    /// `for`: its `accept` fails with the connection's own error (a port
    /// scanner's resets). `b` is ignored.
    Resets,
    /// Node `a` has no file descriptors left, for `for`: its `accept`
    /// fails with `EMFILE` (streams wait in the backlog) and so does every
    /// dial it makes. `b` is ignored.
    Exhaust,
    /// Node `a` disconnects `b` and dials `b` again at once, at an address
    /// where another host answers (`by`): a node of the mesh, which
    /// answers as itself, or a stranger without the cookie, which answers
    /// as `b` with a proof it cannot make. The dial must fail, and `a`
    /// must write the stranger nothing after its challenge.
    Misdial,
}

/// Who answers a `misdial`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MisdialBy {
    /// Another node of the mesh (the next after `b` that is not `a`): it
    /// holds the cookie and answers under its own name.
    Node,
    /// A host without the cookie that answers under the name dialed.
    Stranger,
}

impl MisdialBy {
    /// Every answerer, in the order draws index them.
    pub const ALL: [MisdialBy; 2] = [Self::Node, Self::Stranger];

    /// The node that answers a misdial of `b` by `a` in a mesh of `nodes`
    /// (`None`: the stranger, or no third node to answer).
    #[must_use]
    pub fn answerer(self, a: u64, b: u64, nodes: u64) -> Option<u64> {
        match self {
            Self::Stranger => None,
            Self::Node => (1..nodes)
                .map(|step| (b + step) % nodes)
                .find(|&c| c != a && c != b),
        }
    }
}

impl MeshFaultKind {
    /// What chaos draws from when a scenario does not say (the hunt draws
    /// from [`MeshFaultKind::ALL`]).
    pub const DRAWN: [MeshFaultKind; 9] = [
        Self::Restart,
        Self::Partition,
        Self::HalfOpen,
        Self::Kill,
        Self::Latency,
        Self::Squat,
        Self::CrossDial,
        Self::Wedge,
        Self::Slow,
    ];

    /// Every kind: the drawn ones, the faults on accepts, the impostor,
    /// the spenders, the insider, the flooder and the misdial.
    pub const ALL: [MeshFaultKind; 17] = {
        let mut all = [Self::Resets; 17];
        let mut i = 0;
        while i < Self::DRAWN.len() {
            all[i] = Self::DRAWN[i];
            i += 1;
        }
        all[10] = Self::Exhaust;
        all[11] = Self::Impostor;
        all[12] = Self::Spend;
        all[13] = Self::Trickle;
        all[14] = Self::Claim;
        all[15] = Self::Flood;
        all[16] = Self::Misdial;
        all
    };

    /// Whether the fault takes a `for`.
    #[must_use]
    pub fn lasts(self) -> bool {
        match self {
            Self::Restart
            | Self::Partition
            | Self::HalfOpen
            | Self::Latency
            | Self::Wedge
            | Self::Slow
            | Self::Resets
            | Self::Exhaust
            | Self::Spend
            | Self::Trickle
            | Self::Flood => true,
            Self::Kill
            | Self::Squat
            | Self::Claim
            | Self::Impostor
            | Self::CrossDial
            | Self::Misdial => false,
        }
    }

    /// Whether the fault is on a node's accepts (and dials).
    #[must_use]
    pub fn on_accepts(self) -> bool {
        matches!(self, Self::Resets | Self::Exhaust)
    }

    /// Whether the fault happens to node `a` alone (`b` is ignored).
    #[must_use]
    pub fn one_node(self) -> bool {
        matches!(
            self,
            Self::Restart
                | Self::Resets
                | Self::Exhaust
                | Self::Spend
                | Self::Trickle
                | Self::Flood
        )
    }
}

/// One scripted mesh fault.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct MeshFaultSpec {
    /// What.
    pub kind: MeshFaultKind,
    /// The node it happens to (index).
    pub a: Sampled<u64>,
    /// The other node (index; ignored by restart, resets and exhaust).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<Sampled<u64>>,
    /// When.
    pub at: Sampled<Dur>,
    /// How long.
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    pub lasting: Option<Sampled<Dur>>,
    /// trickle only: the body length its header announces, 2 to
    /// [`MESH_MAX_FRAME`](super::MESH_MAX_FRAME) (absent: the largest). A frame deadline must
    /// cut a small frame as it cuts a large one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<Sampled<u64>>,
    /// trickle only: trickle a node-protocol frame (its control length the
    /// node frames' marker, its payload `frame` bytes, by default and at
    /// most the 64 a node frame may have) instead of a data frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_frame: Option<bool>,
    /// spend only: `true` to send the frames in place of a hello, before
    /// any proof of the cookie (by default after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_hello: Option<bool>,
    /// flood only: how many addresses the flood comes from, 1 to
    /// [`MAX_FLOOD_HOSTS`](super::limits::MAX_FLOOD_HOSTS) (absent: 1),
    /// its streams shared among them: several addresses each within its
    /// per-source cap fill the caps in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u64>,
    /// flood only: `true` to say hello on each stream (naming the flooder,
    /// a name no node has) and then nothing: the node writes its challenge
    /// and waits for a proof that never comes, a half-open handshake held
    /// past the hello's deadline (absent: silent from the start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hello: Option<bool>,
    /// misdial only: who answers (absent: drawn per run, a node only in a
    /// mesh of three or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<MisdialBy>,
}
