//! The planted-bug catalogue (docs/contracts.md): real bug classes from these
//! components' history, each a small branch at the real code site, so the
//! testbed can prove its checkers catch them.
//!
//! With the `planted-bugs` feature a component is built with at most one bug
//! selected (`Planted::bug`, or `Planted::select`); the selection travels in the component's
//! configuration, never in global state, so tests running side by side cannot
//! see each other's bug. Without the feature [`Planted`] is a zero-sized type
//! whose [`Planted::has`] is a constant `false`: every branch compiles away
//! and [`CATALOGUE`] is empty.

/// One planted bug. The doc of each says the bug, its symptom and which
/// invariant must catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PlantedBug {
    /// #1: `route` clones the lane's sender out of the map and drops the entry
    /// guard before admitting and sending. Symptom: a send lands on a lane the
    /// reaper already removed, so an item is lost or a second live lane for
    /// the key races the first. Caught by L1/L2/L3 (loom, shuttle).
    RouteSendsAfterUnlock,
    /// #2: `pending` is decremented when the item is dequeued rather than
    /// after its handler resolves. Symptom: while a handler runs, one item more
    /// than the cap is admitted and `route` reports a depth one short. Caught
    /// by L4 (turmoil, loom).
    PendingDecrementedAtDequeue,
    /// #3: the reaper and the exit guard remove the key's entry without
    /// checking it is still their own lane. Symptom: an exiting lane evicts its
    /// successor, whose items are then black-holed or race a third lane.
    /// Caught by L3/L5 (loom, shuttle).
    ReapWithoutIdentityCheck,
    /// #4: no exit guard. Symptom: a lane task that dies (a consumer panic on
    /// the raw router) leaves its sender in the map and every later item for
    /// the key is black-holed. Caught by L2/L5 (turmoil).
    NoExitGuard,
    /// #5a: capacity checked against a snapshot taken outside the entry guard.
    /// Symptom: concurrent producers admit more than `n` unhandled items.
    /// Caught by L4 (loom, shuttle).
    CapacityCheckedOutsideGuard,
    /// #5b: capacity checked against one counter shared by every key. Symptom:
    /// one key's backlog sheds another key's items. Caught by L4/L6 (turmoil).
    CapacitySharedAcrossKeys,
    /// #6: the drain writes a control by resolving its node at write time
    /// instead of using the pinned generation. Symptom: a stale control on a
    /// redialed socket. Caught by DC-2 (turmoil).
    ControlResolvedByNode,
    /// #7: no per-write deadline. Symptom: one wedged peer stalls the drain,
    /// and so every other peer, indefinitely. Caught by S2 (turmoil).
    NoWriteDeadline,
    /// #8: a full control lane drops the control silently without marking the
    /// pinned connection down. Symptom: a lost death signal. Caught by DC-1 and
    /// the end-to-end check (turmoil, loom).
    SilentControlOverflow,
    /// #9: the owned runtime is dropped in place. Symptom: a panic when the
    /// last owner is released inside an async context. Caught by S5
    /// (real-mode test).
    RuntimeDroppedInPlace,
    /// #10: `mark_down` has no once-guard. Symptom: the down hook fires once
    /// per `mark_down` call, so a generation gets duplicate `noconnection`s.
    /// Caught by S3 (turmoil, loom).
    DownHookNotOnceGuarded,
    /// #11: a down-but-not-yet-removed entry is treated as connected. Symptom:
    /// `get_connection` and dial hand back a dead generation, so the node is
    /// never redialed. Caught by liveness (loom).
    DownEntryTreatedAsConnected,
    /// #12: no simultaneous-connect tie-break: a live incumbent always
    /// wins `register`, on both ends. Symptom: two nodes that dial each
    /// other at once each keep their own socket and refuse the other's, so
    /// the pair ends with two half-used connections or none (upstream
    /// beamr's "first-registered-wins" dedup). Caught by pair agreement
    /// (mesh world).
    NoTieBreak,
    /// #13: no heartbeat: nothing reads a generation's silence as death.
    /// Symptom: a silent squatter holds a node's name forever and a
    /// half-open generation refuses every re-registration and swallows the
    /// EXITs dropped into it. Caught by the silent-generation check, pair
    /// agreement and the death-signal check (mesh world).
    NoHeartbeat,
    /// #14: the accept loop ends on the first error `accept` returns.
    /// Symptom: one stream reset before it was accepted, or one moment
    /// without descriptors, and the node never accepts again: every peer
    /// that needs to dial it is refused. Caught by M7 (mesh world).
    AcceptLoopStopsOnError,
    /// #15: the acceptor registers an inbound stream without checking its
    /// proof. Symptom: a peer without the cookie registers under any
    /// node's name, may displace that node's live connection, and is
    /// written the frames meant for that node. Caught by M8 (mesh world).
    HandshakeSkipsProof,
    /// #16: the frame budget refuses the reader whose chunk would cross
    /// it, whatever its share (the policy before fair shares). Symptom:
    /// peers that each hold most of a large frame spend the budget, and an
    /// honest peer's small frame is refused and that peer is downed.
    /// Caught by M9 (mesh world).
    BudgetRefusesTheNewest,
    /// #17: a write's deadline bounds the wait for the writer lock and then,
    /// afresh, the write (the code before one deadline covered both).
    /// Symptom: a write queued behind a slow keepalive holds the drain for
    /// up to twice the write deadline. Caught by S2 (sender world, with a
    /// heartbeat).
    DeadlineRestartsAfterLock,
    /// #18: the frame deadline bounds each read of a frame's body rather
    /// than the whole frame (the classic slowloris hole). Symptom: a peer
    /// that sends one byte of a frame at a time, a little faster than the
    /// deadline, holds its stream and its share of the budget for as long
    /// as it likes. Caught by M9 (mesh world, `trickle`).
    FrameDeadlinePerRead,
    /// #19: a lane's idle wait is an un-`biased` `select!` between its
    /// queue and the TTL's sleep, and the sleep's arm ends the lane once
    /// the router is gone, without looking at the queue again (velo's idle
    /// loop). Symptom: when the sleep and an item are ready at one poll
    /// and the router has been dropped, the select may take the sleep and
    /// the admitted item is never handled. No preemption point reaches it
    /// (there is no await between the choice and the exit): the seeded
    /// `select!` order and held tasks do. Caught by L2 (lanes world,
    /// exploring).
    IdleSelectUnbiased,
    /// #20: a write looks at the connection's down flag before it waits
    /// for the writer lock, and neither the wait nor the lock's holder
    /// looks again. Symptom: a write queued behind another (a keepalive, a
    /// write that times out) goes out on a generation that went down while
    /// it waited (DC-2), and a write under way on a generation that went
    /// down goes on to its deadline, which then blames the wrong cause
    /// (S2). Caught by DC-2 and S2 (sender world).
    DownCheckedBeforeLock,
    /// #21: a lane's depth is one count shared by every destination node
    /// (the sender's lanes before depths per node). Symptom: while the
    /// drain is parked on a wedged peer's write, the other nodes' controls
    /// fill the one lane, and the next control for a healthy node
    /// overflows and takes that healthy node down. Caught by S9 (sender
    /// world, `sender_wedge_blast_radius`).
    LaneDepthSharedAcrossNodes,
    /// #22: the drain takes frames in arrival order across nodes (every
    /// control, then every data frame), not one frame per node per turn
    /// (the drain before its turns). Symptom: a burst to a peer whose
    /// writes are slow holds every frame enqueued behind it for the whole
    /// burst, past one write per other peer. Caught by S9 (sender world).
    TurnsInArrivalOrder,
    /// #23: an idle lane reads its pending count before it takes the shard
    /// lock producers admit under, and decides its reap on that reading
    /// (the identity is still checked under the lock). Symptom: an item
    /// routed between the read and the removal is admitted to a lane that
    /// then reaps itself holding it: the item is never handled. There is
    /// no await between the read and the removal, so no simulated world
    /// reaches it; the model world does. Caught by L2/L5 (model world).
    ReapReadsPendingOutsideLock,
    /// #24: the acceptor takes a stream's claim of a name at its word (no
    /// claim check: the tie-break and the stand-by alone decide, as before
    /// names belonged to their owners). Symptom: a cookie holder claiming
    /// a live node's name displaces that node's generation (the tie-break
    /// favours its stream) or stands by and takes the slot when the node
    /// blips, and a squatter that keeps its heartbeat holds a name against
    /// its owner. Caught by M8 and M1 (mesh world, `mesh_insider`).
    ClaimsTakenAtTheirWord,
    /// #25: admission does not look at the source: no per-source caps,
    /// no eviction (the accept path before fair admission). Symptom: one
    /// address's half-open handshakes take every handshake place, and
    /// honest dials from elsewhere are refused for as long as it floods.
    /// Caught by M7 (mesh world, `mesh_flood`).
    AdmissionIgnoresSources,
    /// #26: the acceptor's handshake has no deadline of its own, only the
    /// hello's (the belief that the hello's deadline covers the rest).
    /// Symptom: a stream that says hello and then nothing holds its
    /// handshake places until its peer gives up: many such streams from a
    /// few addresses keep the places taken for as long as they like.
    /// Caught by M7 (mesh world, `mesh_flood_hello`).
    ProofWaitsWithoutDeadline,
}

impl PlantedBug {
    /// Every bug, in catalogue order.
    pub const ALL: [PlantedBug; 27] = [
        Self::RouteSendsAfterUnlock,
        Self::PendingDecrementedAtDequeue,
        Self::ReapWithoutIdentityCheck,
        Self::NoExitGuard,
        Self::CapacityCheckedOutsideGuard,
        Self::CapacitySharedAcrossKeys,
        Self::ControlResolvedByNode,
        Self::NoWriteDeadline,
        Self::SilentControlOverflow,
        Self::RuntimeDroppedInPlace,
        Self::DownHookNotOnceGuarded,
        Self::DownEntryTreatedAsConnected,
        Self::NoTieBreak,
        Self::NoHeartbeat,
        Self::AcceptLoopStopsOnError,
        Self::HandshakeSkipsProof,
        Self::BudgetRefusesTheNewest,
        Self::DeadlineRestartsAfterLock,
        Self::FrameDeadlinePerRead,
        Self::IdleSelectUnbiased,
        Self::DownCheckedBeforeLock,
        Self::LaneDepthSharedAcrossNodes,
        Self::TurnsInArrivalOrder,
        Self::ReapReadsPendingOutsideLock,
        Self::ClaimsTakenAtTheirWord,
        Self::AdmissionIgnoresSources,
        Self::ProofWaitsWithoutDeadline,
    ];

    /// The switch's name on the command line (kebab case).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::RouteSendsAfterUnlock => "route-sends-after-unlock",
            Self::PendingDecrementedAtDequeue => "pending-decremented-at-dequeue",
            Self::ReapWithoutIdentityCheck => "reap-without-identity-check",
            Self::NoExitGuard => "no-exit-guard",
            Self::CapacityCheckedOutsideGuard => "capacity-checked-outside-guard",
            Self::CapacitySharedAcrossKeys => "capacity-shared-across-keys",
            Self::ControlResolvedByNode => "control-resolved-by-node",
            Self::NoWriteDeadline => "no-write-deadline",
            Self::SilentControlOverflow => "silent-control-overflow",
            Self::RuntimeDroppedInPlace => "runtime-dropped-in-place",
            Self::DownHookNotOnceGuarded => "down-hook-not-once-guarded",
            Self::DownEntryTreatedAsConnected => "down-entry-treated-as-connected",
            Self::NoTieBreak => "no-tie-break",
            Self::NoHeartbeat => "no-heartbeat",
            Self::AcceptLoopStopsOnError => "accept-loop-stops-on-error",
            Self::HandshakeSkipsProof => "handshake-skips-proof",
            Self::BudgetRefusesTheNewest => "budget-refuses-the-newest",
            Self::DeadlineRestartsAfterLock => "deadline-restarts-after-lock",
            Self::FrameDeadlinePerRead => "frame-deadline-per-read",
            Self::IdleSelectUnbiased => "idle-select-unbiased",
            Self::DownCheckedBeforeLock => "down-checked-before-lock",
            Self::LaneDepthSharedAcrossNodes => "lane-depth-shared-across-nodes",
            Self::TurnsInArrivalOrder => "turns-in-arrival-order",
            Self::ReapReadsPendingOutsideLock => "reap-reads-pending-outside-lock",
            Self::ClaimsTakenAtTheirWord => "claims-taken-at-their-word",
            Self::AdmissionIgnoresSources => "admission-ignores-sources",
            Self::ProofWaitsWithoutDeadline => "proof-waits-without-deadline",
        }
    }

    /// The catalogue number in docs/contracts.md (`5a`/`5b` share 5).
    #[must_use]
    pub fn catalogue_id(self) -> &'static str {
        match self {
            Self::RouteSendsAfterUnlock => "1",
            Self::PendingDecrementedAtDequeue => "2",
            Self::ReapWithoutIdentityCheck => "3",
            Self::NoExitGuard => "4",
            Self::CapacityCheckedOutsideGuard => "5a",
            Self::CapacitySharedAcrossKeys => "5b",
            Self::ControlResolvedByNode => "6",
            Self::NoWriteDeadline => "7",
            Self::SilentControlOverflow => "8",
            Self::RuntimeDroppedInPlace => "9",
            Self::DownHookNotOnceGuarded => "10",
            Self::DownEntryTreatedAsConnected => "11",
            Self::NoTieBreak => "12",
            Self::NoHeartbeat => "13",
            Self::AcceptLoopStopsOnError => "14",
            Self::HandshakeSkipsProof => "15",
            Self::BudgetRefusesTheNewest => "16",
            Self::DeadlineRestartsAfterLock => "17",
            Self::FrameDeadlinePerRead => "18",
            Self::IdleSelectUnbiased => "19",
            Self::DownCheckedBeforeLock => "20",
            Self::LaneDepthSharedAcrossNodes => "21",
            Self::TurnsInArrivalOrder => "22",
            Self::ReapReadsPendingOutsideLock => "23",
            Self::ClaimsTakenAtTheirWord => "24",
            Self::AdmissionIgnoresSources => "25",
            Self::ProofWaitsWithoutDeadline => "26",
        }
    }

    /// Looks a switch up by [`PlantedBug::name`].
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|bug| bug.name() == name)
    }
}

/// The bugs this build can plant: all of them with the `planted-bugs`
/// feature, none without.
#[cfg(feature = "planted-bugs")]
pub const CATALOGUE: &[PlantedBug] = &PlantedBug::ALL;
/// The bugs this build can plant: all of them with the `planted-bugs`
/// feature, none without.
#[cfg(not(feature = "planted-bugs"))]
pub const CATALOGUE: &[PlantedBug] = &[];

/// Which planted bug, if any, a component is built with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Planted {
    #[cfg(feature = "planted-bugs")]
    bug: Option<PlantedBug>,
}

impl Planted {
    /// No bug: the correct code.
    #[must_use]
    pub const fn none() -> Self {
        Self {
            #[cfg(feature = "planted-bugs")]
            bug: None,
        }
    }

    /// Exactly this bug.
    #[cfg(feature = "planted-bugs")]
    #[must_use]
    pub const fn bug(bug: PlantedBug) -> Self {
        Self { bug: Some(bug) }
    }

    /// `bug` planted, when this build can plant bugs (`None` without the
    /// `planted-bugs` feature), so callers choose at run time without a
    /// `cfg` of their own.
    #[must_use]
    pub const fn select(bug: PlantedBug) -> Option<Self> {
        #[cfg(feature = "planted-bugs")]
        return Some(Self::bug(bug));
        #[cfg(not(feature = "planted-bugs"))]
        {
            let _ = bug;
            None
        }
    }

    /// The selected bug, if any.
    #[must_use]
    pub const fn selected(self) -> Option<PlantedBug> {
        #[cfg(feature = "planted-bugs")]
        return self.bug;
        #[cfg(not(feature = "planted-bugs"))]
        None
    }

    /// Whether `bug` is the selected one. A constant `false` without the
    /// feature, so the branch it guards compiles away.
    #[inline(always)]
    #[must_use]
    pub fn has(self, bug: PlantedBug) -> bool {
        #[cfg(feature = "planted-bugs")]
        return self.bug == Some(bug);
        #[cfg(not(feature = "planted-bugs"))]
        {
            let _ = bug;
            false
        }
    }
}
