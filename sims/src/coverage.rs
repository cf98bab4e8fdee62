//! Coverage: which marks a run reached, and the probe that counts them and
//! answers the production code's preemption points from the run's seed.
//!
//! Model. A mark is either a site in the code under test (a name it passes
//! to `lanesim_target::probe::mark`), a situation the world set up
//! ([`WorldMark`]), or a preemption point that actually preempted
//! ([`CoverMark::Preempted`]), or a [`Role`]: a state named in the world's
//! words that the target shows by marks of its own
//! ([`lanesim_target::probe::Sites::roles`]; a run reached a role when it
//! made one of the marks the target maps to it). Each run counts how often it hit each; a
//! sweep reports, per scenario, how many seeds hit each mark, and a
//! scenario's `reaches` list turns a mark it exists for into a requirement
//! (`run::reach`).
//!
//! Code sites are names, not an enum: any target declares its own
//! ([`lanesim_target::probe::Sites`]). The [`registry`] (`crate::sites`,
//! re-exported here) knows every name a scenario may write (lanesim's own
//! components' sites always, so the shipped scenarios parse whatever the
//! target, and the running target's), and which world can reach each.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

pub use lanesim_target::probe::Role;
use lanesim_target::probe::{Preempt, Probe};

use crate::fired::{Fired, Preempted};
use crate::rng::SimRng;
use crate::sites::spawn_site;
pub use crate::sites::{register, registry, Registry, Site};

/// A situation a world set up (as opposed to a production code site).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WorldMark {
    /// A key got a new lane after its previous lane reaped itself.
    LaneRebuiltAfterReap,
    /// A key got a new lane after its previous lane died of a panic (the
    /// exit guard removed it; without the guard the key is black-holed).
    LaneRebuiltAfterPanic,
    /// A stuck key's handler began to hang.
    StuckKeyHung,
    /// Lanes: a key had more items routed and not yet started than L6
    /// lets one lane handle in a row (`check::lanes::MAX_RUN`).
    BacklogPastMaxRun,
    /// The router was dropped while producers were still routing.
    RouterDroppedMidflight,
    /// A redial connected.
    RedialOk,
    /// A redial failed.
    RedialFailed,
    /// A redial connected while controls pinned to an older generation of
    /// that node were still queued: the drain must skip them (DC-2).
    RedialWithControlsQueued,
    /// A link was made over a generation that was already down.
    LinkOverDownGeneration,
    /// A fault was applied before the workload finished.
    FaultDuringWorkload,
    /// The sender was shut down while controls were still queued.
    ShutdownWithControlsQueued,
    /// An enqueue ran after the shutdown (it must report closed).
    EnqueueAfterShutdown,
    /// Fault applied: a peer stopped reading.
    FaultWedge,
    /// Fault applied: a peer reads slowly.
    FaultSlow,
    /// Fault applied: a peer closed its socket.
    FaultKill,
    /// Fault applied: a peer host crashed.
    FaultCrash,
    /// Fault applied: a peer host restarted.
    FaultBounce,
    /// Fault applied: a partition began.
    FaultPartition,
    /// Fault applied: a partition healed.
    FaultRepair,
    /// Fault applied: link latency.
    FaultLatency,
    /// Fault applied: a local disconnect of a live generation.
    FaultDisconnect,
    /// Mesh: a node crashed, to restart as a new incarnation.
    FaultRestart,
    /// Mesh: one direction of a link began dropping segments.
    FaultHalfOpen,
    /// Mesh: a squatter (with the cookie) proved itself under another node's
    /// name.
    FaultSquat,
    /// Mesh: an insider (with the cookie) claimed another node's name and
    /// keeps its heartbeat.
    FaultClaim,
    /// ... the name of the node it dialed (a claim with `b` = `a`).
    FaultClaimOwnName,
    /// Mesh: a flooder began opening half-open handshakes to a node.
    FaultFlood,
    /// Mesh: two nodes dropped their connection and redialed each other
    /// at the same instant.
    FaultCrossDial,
    /// Mesh: both ends of a pair sent their first dial at the same instant.
    SimultaneousFirstDial,
    /// Fault applied: a peer is to write a frame at the local maximum.
    FaultMaxFrame,
    /// Fault applied: a peer is to write a header over the local maximum.
    FaultOversizeFrame,
    /// Fault applied: a peer is to tear its stream.
    FaultTornFrame,
    /// A peer wrote a frame at the local maximum on a socket.
    PeerWroteMaxFrame,
    /// A peer wrote a header over the local maximum on a socket.
    PeerWroteOversize,
    /// ... with the excess in its payload length alone.
    PeerWroteOversizePayload,
    /// ... with the excess in its control length alone.
    PeerWroteOversizeControl,
    /// ... split so neither length alone is over the maximum.
    PeerWroteOversizeBoth,
    /// A peer tore its stream inside a frame's header and closed it.
    PeerToreHeader,
    /// A peer tore its stream inside a frame's body and closed it.
    PeerToreBody,
    /// The local node's socket parked a write for want of window: a reader
    /// (slow, wedged, partitioned away) pushed back on the writer.
    WriteBlockedOnWindow,
    /// A node reported a generation down (sender and mesh worlds): what
    /// gives the down-once contracts something to decide, for any target.
    GenerationDown,
    /// ... with `HeartbeatTimeout`: a silence was read as death.
    HeartbeatDown,
    /// A healthy peer (no fault on it or its link so far) read a frame that
    /// was enqueued while another peer had a fault: its traffic shared the
    /// node with a faulty peer's, what S9 (independence) is about.
    HealthyPeerBesideFault,
    /// Mesh: a node's inbound streams began to be reset before accept.
    FaultResets,
    /// Mesh: a node ran out of descriptors.
    FaultExhaust,
    /// Mesh: a stream was reset before its node accepted it (the node's
    /// `accept` failed with the connection's own error).
    AcceptReset,
    /// Mesh: a node's `accept` failed with `EMFILE`.
    AcceptExhausted,
    /// Mesh: an impostor (no cookie) dialed a node and wrote its proof.
    FaultImpostor,
    /// Mesh: a node closed an impostor's stream with nothing written after
    /// its challenge.
    ImpostorRefused,
    /// Mesh: spenders sent a node all but the last byte of their frames.
    FaultSpend,
    /// ... in place of their hellos, before any proof of the cookie.
    FaultSpendBeforeHello,
    /// Mesh: the trickler wrote a node the header of a frame it trickles.
    FaultTrickle,
    /// Mesh: a node closed the trickler's stream before the trickle ended.
    TrickleCut,
    /// Mesh: the trickled frame fits in one read chunk (1 KiB or less).
    TrickledSmallFrame,
    /// Mesh: the trickled frame is a node-protocol frame.
    TrickledNodeFrame,
    /// Mesh: a flood came from more than one address (`hosts`).
    FaultFloodManyAddresses,
    /// Mesh: a flood's streams said hello and then nothing (`hello`).
    FaultFloodHello,
    /// Mesh: a node closed a flood's stream that had said hello later
    /// than the connect timeout (and a close's latency, 100 ms and four
    /// ticks) after its connect: the wait for the proof had a deadline of
    /// its own, past the hello's.
    FloodProofAwaitCut,
    /// Mesh: a node's open sockets reached half of what its
    /// descriptor limit leaves after the process's own (`descriptors`).
    DescriptorsNearLimit,
    /// Mesh: a node was told to dial another at an address where a third
    /// host answers (`misdial`).
    FaultMisdial,
    /// Mesh: a misdialed dial answered by another node failed.
    MisdialRefusedByNode,
    /// Mesh: a misdialed dial answered by the stranger (no cookie) failed
    /// after the stranger wrote its challenge.
    MisdialRefusedByStranger,
    /// Mesh: a generation read a frame after a stretch with no frame at
    /// all longer than its node's frame deadline, and was still up: the
    /// deadline did not count the wait for a header. (No data for half a
    /// tick: it holds two keepalives a quarter tick apart, less the
    /// network's 100 ms of jitter, which is longer than the deadline.)
    QuietPastFrameDeadline,
    /// Mesh: a node held more than half its frame budget of frames it had
    /// not finished reading (measured at its read halves): the spending
    /// pressed the budget, so M9's memory bound could have failed.
    HeldPastHalfBudget,
    /// The scheduler polled a ready task other than the oldest
    /// (`shuffle`, `world::explore`).
    ScheduleShuffled,
    /// A task of the target yielded at an await point because the
    /// explorer's budget ran out: a preemption nobody marked
    /// (`preempt_awaits`).
    AwaitPreempted,
    /// A task of the target was held back for virtual time before a poll
    /// (`preempt_awaits` with `preempt_for`).
    TaskHeld,
}

impl WorldMark {
    /// Every world mark.
    pub const ALL: [WorldMark; 67] = [
        Self::LaneRebuiltAfterReap,
        Self::LaneRebuiltAfterPanic,
        Self::StuckKeyHung,
        Self::BacklogPastMaxRun,
        Self::RouterDroppedMidflight,
        Self::RedialOk,
        Self::RedialFailed,
        Self::RedialWithControlsQueued,
        Self::LinkOverDownGeneration,
        Self::FaultDuringWorkload,
        Self::ShutdownWithControlsQueued,
        Self::EnqueueAfterShutdown,
        Self::FaultWedge,
        Self::FaultSlow,
        Self::FaultKill,
        Self::FaultCrash,
        Self::FaultBounce,
        Self::FaultPartition,
        Self::FaultRepair,
        Self::FaultLatency,
        Self::FaultDisconnect,
        Self::FaultRestart,
        Self::FaultHalfOpen,
        Self::FaultSquat,
        Self::FaultClaim,
        Self::FaultClaimOwnName,
        Self::FaultFlood,
        Self::FaultCrossDial,
        Self::SimultaneousFirstDial,
        Self::FaultMaxFrame,
        Self::FaultOversizeFrame,
        Self::FaultTornFrame,
        Self::PeerWroteMaxFrame,
        Self::PeerWroteOversize,
        Self::PeerWroteOversizePayload,
        Self::PeerWroteOversizeControl,
        Self::PeerWroteOversizeBoth,
        Self::PeerToreHeader,
        Self::PeerToreBody,
        Self::WriteBlockedOnWindow,
        Self::GenerationDown,
        Self::HeartbeatDown,
        Self::HealthyPeerBesideFault,
        Self::FaultResets,
        Self::FaultExhaust,
        Self::AcceptReset,
        Self::AcceptExhausted,
        Self::FaultImpostor,
        Self::ImpostorRefused,
        Self::FaultSpend,
        Self::FaultSpendBeforeHello,
        Self::FaultTrickle,
        Self::TrickleCut,
        Self::TrickledSmallFrame,
        Self::TrickledNodeFrame,
        Self::FaultFloodManyAddresses,
        Self::FaultFloodHello,
        Self::FloodProofAwaitCut,
        Self::DescriptorsNearLimit,
        Self::FaultMisdial,
        Self::MisdialRefusedByNode,
        Self::MisdialRefusedByStranger,
        Self::QuietPastFrameDeadline,
        Self::HeldPastHalfBudget,
        Self::ScheduleShuffled,
        Self::AwaitPreempted,
        Self::TaskHeld,
    ];

    /// The name reports and scenario files use.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::LaneRebuiltAfterReap => "lane_rebuilt_after_reap",
            Self::LaneRebuiltAfterPanic => "lane_rebuilt_after_panic",
            Self::StuckKeyHung => "stuck_key_hung",
            Self::BacklogPastMaxRun => "backlog_past_max_run",
            Self::RouterDroppedMidflight => "router_dropped_midflight",
            Self::RedialOk => "redial_ok",
            Self::RedialFailed => "redial_failed",
            Self::RedialWithControlsQueued => "redial_with_controls_queued",
            Self::LinkOverDownGeneration => "link_over_down_generation",
            Self::FaultDuringWorkload => "fault_during_workload",
            Self::ShutdownWithControlsQueued => "shutdown_with_controls_queued",
            Self::EnqueueAfterShutdown => "enqueue_after_shutdown",
            Self::FaultWedge => "fault_applied_wedge",
            Self::FaultSlow => "fault_applied_slow",
            Self::FaultKill => "fault_applied_kill",
            Self::FaultCrash => "fault_applied_crash",
            Self::FaultBounce => "fault_applied_bounce",
            Self::FaultPartition => "fault_applied_partition",
            Self::FaultRepair => "fault_applied_repair",
            Self::FaultLatency => "fault_applied_latency",
            Self::FaultDisconnect => "fault_applied_disconnect",
            Self::FaultRestart => "fault_applied_restart",
            Self::FaultHalfOpen => "fault_applied_half_open",
            Self::FaultSquat => "fault_applied_squat",
            Self::FaultClaim => "fault_applied_claim",
            Self::FaultClaimOwnName => "fault_applied_claim_own_name",
            Self::FaultFlood => "fault_applied_flood",
            Self::FaultCrossDial => "fault_applied_cross_dial",
            Self::SimultaneousFirstDial => "simultaneous_first_dial",
            Self::FaultMaxFrame => "fault_applied_max_frame",
            Self::FaultOversizeFrame => "fault_applied_oversize_frame",
            Self::FaultTornFrame => "fault_applied_torn_frame",
            Self::PeerWroteMaxFrame => "peer_wrote_max_frame",
            Self::PeerWroteOversize => "peer_wrote_oversize",
            Self::PeerWroteOversizePayload => "peer_wrote_oversize_payload",
            Self::PeerWroteOversizeControl => "peer_wrote_oversize_control",
            Self::PeerWroteOversizeBoth => "peer_wrote_oversize_both",
            Self::PeerToreHeader => "peer_tore_header",
            Self::PeerToreBody => "peer_tore_body",
            Self::WriteBlockedOnWindow => "write_blocked_on_window",
            Self::GenerationDown => "generation_down",
            Self::HeartbeatDown => "heartbeat_down",
            Self::HealthyPeerBesideFault => "healthy_peer_beside_fault",
            Self::FaultResets => "fault_applied_resets",
            Self::FaultExhaust => "fault_applied_exhaust",
            Self::AcceptReset => "accept_reset",
            Self::AcceptExhausted => "accept_exhausted",
            Self::FaultImpostor => "fault_applied_impostor",
            Self::ImpostorRefused => "impostor_refused",
            Self::FaultSpend => "fault_applied_spend",
            Self::FaultSpendBeforeHello => "fault_applied_spend_before_hello",
            Self::FaultTrickle => "fault_applied_trickle",
            Self::TrickleCut => "trickle_cut",
            Self::TrickledSmallFrame => "trickled_small_frame",
            Self::TrickledNodeFrame => "trickled_node_frame",
            Self::FaultFloodManyAddresses => "fault_applied_flood_many_addresses",
            Self::FaultFloodHello => "fault_applied_flood_hello",
            Self::FloodProofAwaitCut => "flood_proof_await_cut",
            Self::DescriptorsNearLimit => "descriptors_near_limit",
            Self::FaultMisdial => "fault_applied_misdial",
            Self::MisdialRefusedByNode => "misdial_refused_by_node",
            Self::MisdialRefusedByStranger => "misdial_refused_by_stranger",
            Self::QuietPastFrameDeadline => "quiet_past_frame_deadline",
            Self::HeldPastHalfBudget => "held_past_half_budget",
            Self::ScheduleShuffled => "schedule_shuffled",
            Self::AwaitPreempted => "await_preempted",
            Self::TaskHeld => "task_held",
        }
    }
}

/// This thread's OS id (Linux: `/proc/thread-self` names it); `None`
/// elsewhere, where real mode goes without the run-queue measure.
pub(crate) fn current_thread_id() -> Option<u32> {
    std::fs::read_link("/proc/thread-self")
        .ok()?
        .file_name()?
        .to_str()?
        .parse()
        .ok()
}

/// Any mark a run can reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoverMark {
    /// A site in the code under test.
    Code(Site),
    /// A situation the world set up.
    World(WorldMark),
    /// A state in the world's words, shown by the target's own marks.
    Role(Role),
    /// A preemption point that preempted (yielded or slept).
    Preempted(Site),
    /// What the scheduling explorer did to a task, by the place the task
    /// was spawned (a site named `file:line`).
    Task(TaskMark, Site),
}

/// What the scheduling explorer did to a task (`world::explore`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskMark {
    /// It yielded at an await point for its budget.
    Preempted,
    /// It was held back for virtual time.
    Held,
}

impl TaskMark {
    /// The prefix of its marks' names (before `@file:line`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Preempted => "await_preempted",
            Self::Held => "task_held",
        }
    }

    const ALL: [TaskMark; 2] = [Self::Preempted, Self::Held];
}

/// Prefix of a preemption point's mark name.
const PREEMPTED: &str = "preempted:";

/// Prefix of a role's mark name.
const ROLE: &str = "role:";

impl CoverMark {
    /// Every mark known in this process ([`registry`]), code marks first,
    /// each group in name order.
    #[must_use]
    pub fn all() -> Vec<CoverMark> {
        let registry = registry();
        registry
            .marks()
            .map(Self::Code)
            .chain(WorldMark::ALL.iter().map(|m| Self::World(*m)))
            .chain(registry.points().map(Self::Preempted))
            .chain(Role::ALL.iter().map(|r| Self::Role(*r)))
            .collect()
    }

    /// Looks a mark up by its printed name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        for mark in TaskMark::ALL {
            if let Some(site) = name
                .strip_prefix(mark.name())
                .and_then(|rest| rest.strip_prefix('@'))
            {
                let (file, line) = site.rsplit_once(':')?;
                if file.is_empty() || line.parse::<u32>().is_err() {
                    return None;
                }
                return Some(Self::Task(mark, spawn_site(site.to_owned())));
            }
        }
        if let Some(role) = name.strip_prefix(ROLE) {
            return Role::from_name(role).map(Self::Role);
        }
        let registry = registry();
        if let Some(point) = name.strip_prefix(PREEMPTED) {
            return registry.point(point).map(Self::Preempted);
        }
        if let Some(site) = registry.mark(name) {
            return Some(Self::Code(site));
        }
        WorldMark::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .map(Self::World)
    }
}

impl fmt::Display for CoverMark {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Code(site) => f.write_str(site.name()),
            Self::World(mark) => f.write_str(mark.name()),
            Self::Preempted(site) => write!(f, "{PREEMPTED}{}", site.name()),
            Self::Role(role) => write!(f, "{ROLE}{}", role.name()),
            Self::Task(mark, site) => write!(f, "{}@{}", mark.name(), site.name()),
        }
    }
}

/// A mark is written by its printed name in reports (a JSON map key), and
/// read back by it (`lanesim merge`).
impl serde::Serialize for CoverMark {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for CoverMark {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Self::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown coverage mark `{name}`")))
    }
}

/// How often a run hit each mark (marks it never hit are absent).
pub type Coverage = BTreeMap<CoverMark, u64>;

/// How a world answers preemption points: with probability `chance` a
/// point preempts, for a duration drawn from `sleep` (zero: a yield).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PreemptPolicy {
    /// Chance that a point preempts.
    pub chance: f64,
    /// The sleep's range; a draw of zero yields instead.
    pub sleep: (Duration, Duration),
}

/// The probe a world installs: counts marks and answers preemption points
/// from its own seeded stream, so the points never shift the draws the
/// rest of the world makes.
pub struct WorldProbe {
    inner: Mutex<ProbeState>,
    policy: PreemptPolicy,
    /// The OS thread ids of the workers of runtimes the production code
    /// built for this run ([`Probe::worker_started`]): real mode's
    /// lateness probe watches how long the OS kept them waiting to run.
    workers: Mutex<Vec<u32>>,
    /// The preemptions that fired, beside the log (`fired`).
    fired: Fired,
}

struct ProbeState {
    coverage: Coverage,
    rng: SimRng,
    /// Once set, marks are no longer counted: the run is over and what the
    /// teardown does is not part of it.
    closed: bool,
}

impl WorldProbe {
    /// A probe for the run with `seed`.
    #[must_use]
    pub fn new(seed: u64, policy: PreemptPolicy) -> Self {
        Self {
            inner: Mutex::new(ProbeState {
                coverage: Coverage::new(),
                rng: SimRng::new(seed).fork("preempt"),
                closed: false,
            }),
            policy,
            workers: Mutex::new(Vec::new()),
            fired: Fired::default(),
        }
    }

    /// The preemptions that fired in this run, kept beside its log (a
    /// world watches them: `Fired::watch`).
    #[must_use]
    pub fn fired(&self) -> &Fired {
        &self.fired
    }

    /// The OS thread ids of the component's own runtime workers so far.
    #[must_use]
    pub fn workers(&self) -> Vec<u32> {
        self.workers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ProbeState> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Counts `mark`.
    pub fn hit(&self, mark: CoverMark) {
        let mut state = self.state();
        if !state.closed {
            *state.coverage.entry(mark).or_default() += 1;
        }
    }

    /// Counts a world mark.
    pub fn world(&self, mark: WorldMark) {
        self.hit(CoverMark::World(mark));
    }

    /// Stops counting and returns what was counted.
    pub fn close(&self) -> Coverage {
        let mut state = self.state();
        state.closed = true;
        std::mem::take(&mut state.coverage)
    }

    /// The policy points are answered with.
    #[must_use]
    pub fn policy(&self) -> PreemptPolicy {
        self.policy
    }
}

impl Probe for WorldProbe {
    fn mark(&self, mark: &'static str) {
        self.hit(CoverMark::Code(Site::new(mark)));
    }

    fn worker_started(&self) {
        if let Some(tid) = current_thread_id() {
            self.workers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(tid);
        }
    }

    fn preempt(&self, point: &'static str) -> Preempt {
        let mut state = self.state();
        if state.closed || !state.rng.chance(self.policy.chance) {
            return Preempt::Run;
        }
        *state
            .coverage
            .entry(CoverMark::Preempted(Site::new(point)))
            .or_default() += 1;
        let (lo, hi) = self.policy.sleep;
        let micros = state
            .rng
            .range(lo.as_micros() as u64, hi.as_micros() as u64);
        drop(state);
        let sleep = (micros > 0).then(|| Duration::from_micros(micros));
        self.fired.note(Preempted::Point { point, sleep });
        sleep.map_or(Preempt::Yield, Preempt::Sleep)
    }
}

/// Installs `probe` for this thread's production code until the guard drops.
#[must_use = "the probe is uninstalled when this is dropped"]
pub fn install(probe: &std::sync::Arc<WorldProbe>) -> lanesim_target::probe::Installed {
    lanesim_target::probe::install(std::sync::Arc::clone(probe) as std::sync::Arc<dyn Probe>)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mark_name_is_unique_and_looks_itself_up() {
        let all = CoverMark::all();
        let mut names: Vec<String> = all.iter().map(ToString::to_string).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len(), "two marks share a name");
        for mark in all {
            assert_eq!(CoverMark::from_name(&mark.to_string()), Some(mark));
        }
        assert_eq!(CoverMark::from_name("no_such_mark"), None);
    }

    #[test]
    fn a_closed_probe_counts_nothing_and_never_preempts() {
        let probe = WorldProbe::new(
            1,
            PreemptPolicy {
                chance: 1.0,
                sleep: (Duration::ZERO, Duration::ZERO),
            },
        );
        assert_eq!(probe.preempt("drain.picked"), Preempt::Yield);
        probe.mark("reap_won");
        let counted = probe.close();
        assert_eq!(counted[&CoverMark::Code(Site::new("reap_won"))], 1);
        assert_eq!(counted[&CoverMark::Preempted(Site::new("drain.picked"))], 1);
        probe.mark("reap_won");
        assert_eq!(probe.preempt("drain.picked"), Preempt::Run);
        assert!(probe.close().is_empty());
    }
}
