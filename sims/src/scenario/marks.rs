//! Which world can reach which coverage mark: what a scenario's `reaches`
//! may name. Matches are exhaustive, so a new mark must be given a world.

use super::spec::Contract;
use crate::coverage::{CoverMark, Role, WorldMark};
use crate::world_kind::WorldKind;

/// Whether a scenario of `world` can reach `mark`: its home world's, and
/// for the mesh, which runs the sender world's production code on every
/// node, the sender world's code marks, preemption points and the faults
/// both worlds share.
#[must_use]
pub fn reachable_in(mark: CoverMark, world: WorldKind) -> bool {
    // The scheduling explorer runs in every simulated world.
    if let CoverMark::Task(..)
    | CoverMark::World(
        WorldMark::ScheduleShuffled | WorldMark::AwaitPreempted | WorldMark::TaskHeld,
    ) = mark
    {
        return true;
    }
    let Some(home) = world_of(mark) else {
        return false;
    };
    home == world
        || (world == WorldKind::Mesh
            && home == WorldKind::Sender
            && match mark {
                CoverMark::Code(_)
                | CoverMark::Preempted(_)
                | CoverMark::Role(_)
                | CoverMark::Task(..) => true,
                CoverMark::World(mark) => matches!(
                    mark,
                    WorldMark::RedialOk
                        | WorldMark::RedialFailed
                        | WorldMark::FaultDuringWorkload
                        | WorldMark::FaultKill
                        | WorldMark::FaultWedge
                        | WorldMark::FaultSlow
                        | WorldMark::FaultPartition
                        | WorldMark::FaultRepair
                        | WorldMark::FaultLatency
                        | WorldMark::LinkOverDownGeneration
                        | WorldMark::GenerationDown
                        | WorldMark::HeartbeatDown
                ),
            })
}

/// The world a mark belongs to (the mesh can reach the sender world's
/// too: [`reachable_in`]). A code site no target registered belongs to
/// none (`None`); so does a mark of the scheduling explorer, which every
/// world reaches.
#[must_use]
pub fn world_of(mark: CoverMark) -> Option<WorldKind> {
    match mark {
        CoverMark::Code(site) => crate::sites::registry().world_of(site, false),
        CoverMark::World(mark) => world_mark_world(mark),
        CoverMark::Preempted(site) => crate::sites::registry().world_of(site, true),
        CoverMark::Role(role) => Some(role_world(role)),
        CoverMark::Task(..) => None,
    }
}

/// The world whose races a role names (a sender-world role is reachable in
/// the mesh too: [`reachable_in`]).
fn role_world(role: Role) -> WorldKind {
    match role {
        Role::LaneCreated
        | Role::CapacityRefused
        | Role::ReapDeclined
        | Role::ReapWon
        | Role::ReapAfterRouterGone
        | Role::IdleWaitRaced
        | Role::LaneExitPanicked
        | Role::RouterDroppedWithLiveLanes
        | Role::HandlerPanicked
        | Role::HandlerPanickedSync => WorldKind::Lanes,
        Role::ControlOverflowMarkedDown
        | Role::ControlSkippedPinnedDown
        | Role::LateDownOfOldGeneration
        | Role::WriteAbandonedOnDown
        | Role::WriteDeadlineFired
        | Role::ShutdownWithQueuedControls
        | Role::ShutdownMidWrite
        | Role::ControlRefusedClosed
        | Role::DownRepeated
        | Role::DownManualDisconnect
        | Role::DownHeartbeatTimeout
        | Role::DownReadError
        | Role::DownFrameTimeout
        | Role::DownOverBudget
        | Role::FrameBudgetRefused
        | Role::KeepaliveSent
        | Role::RegisterIncumbentKept
        | Role::LinkBrokenByDown
        | Role::LinkMadeOverDown => WorldKind::Sender,
        Role::DownSimultaneousConnect
        | Role::RegisterTieBreakWon
        | Role::RegisterTieBreakLost
        | Role::StandbyRegistered
        | Role::ProofRefused
        | Role::ClaimDenied
        | Role::ClaimReclaimed
        | Role::DownNameReclaimed => WorldKind::Mesh,
    }
}

fn world_mark_world(mark: WorldMark) -> Option<WorldKind> {
    Some(match mark {
        WorldMark::LaneRebuiltAfterReap
        | WorldMark::LaneRebuiltAfterPanic
        | WorldMark::StuckKeyHung
        | WorldMark::BacklogPastMaxRun
        | WorldMark::RouterDroppedMidflight => WorldKind::Lanes,
        WorldMark::RedialOk
        | WorldMark::RedialFailed
        | WorldMark::RedialWithControlsQueued
        | WorldMark::LinkOverDownGeneration
        | WorldMark::FaultDuringWorkload
        | WorldMark::ShutdownWithControlsQueued
        | WorldMark::EnqueueAfterShutdown
        | WorldMark::FaultWedge
        | WorldMark::FaultSlow
        | WorldMark::FaultKill
        | WorldMark::FaultCrash
        | WorldMark::FaultBounce
        | WorldMark::FaultPartition
        | WorldMark::FaultRepair
        | WorldMark::FaultLatency
        | WorldMark::FaultDisconnect
        | WorldMark::FaultMaxFrame
        | WorldMark::FaultOversizeFrame
        | WorldMark::FaultTornFrame
        | WorldMark::PeerWroteMaxFrame
        | WorldMark::PeerWroteOversize
        | WorldMark::PeerWroteOversizePayload
        | WorldMark::PeerWroteOversizeControl
        | WorldMark::PeerWroteOversizeBoth
        | WorldMark::PeerToreHeader
        | WorldMark::PeerToreBody
        | WorldMark::WriteBlockedOnWindow
        | WorldMark::GenerationDown
        | WorldMark::HeartbeatDown
        | WorldMark::HealthyPeerBesideFault => WorldKind::Sender,
        WorldMark::FaultRestart
        | WorldMark::FaultHalfOpen
        | WorldMark::FaultSquat
        | WorldMark::FaultClaim
        | WorldMark::FaultClaimOwnName
        | WorldMark::FaultFlood
        | WorldMark::FaultCrossDial
        | WorldMark::SimultaneousFirstDial
        | WorldMark::FaultResets
        | WorldMark::FaultExhaust
        | WorldMark::AcceptReset
        | WorldMark::AcceptExhausted
        | WorldMark::FaultImpostor
        | WorldMark::ImpostorRefused
        | WorldMark::FaultSpend
        | WorldMark::FaultSpendBeforeHello
        | WorldMark::FaultTrickle
        | WorldMark::TrickleCut
        | WorldMark::TrickledSmallFrame
        | WorldMark::TrickledNodeFrame
        | WorldMark::FaultFloodManyAddresses
        | WorldMark::FaultFloodHello
        | WorldMark::FloodProofAwaitCut
        | WorldMark::DescriptorsNearLimit
        | WorldMark::FaultMisdial
        | WorldMark::MisdialRefusedByNode
        | WorldMark::MisdialRefusedByStranger
        | WorldMark::QuietPastFrameDeadline
        | WorldMark::HeldPastHalfBudget => WorldKind::Mesh,
        WorldMark::ScheduleShuffled | WorldMark::AwaitPreempted | WorldMark::TaskHeld => {
            return None
        }
    })
}

/// What a sweep must reach for `contract` to be able to fail at all, and
/// what that is in words: a scenario that lists S3 but never takes a
/// generation down checks nothing (`None`: every run can break it).
#[must_use]
pub fn evidence(contract: Contract) -> Option<(&'static str, &'static [CoverMark])> {
    // World marks, made when a node reports a down: every target reports
    // its downs, so these decide vacuity for any target alike.
    const DOWNS: &[CoverMark] = &[CoverMark::World(WorldMark::GenerationDown)];
    const HEARTBEAT: &[CoverMark] = &[CoverMark::World(WorldMark::HeartbeatDown)];
    const ACCEPT_ERRORS: &[CoverMark] = &[
        CoverMark::World(WorldMark::AcceptReset),
        CoverMark::World(WorldMark::AcceptExhausted),
        CoverMark::World(WorldMark::FaultFlood),
    ];
    // M8 holds a node to proven peers and their own names: an impostor
    // without the cookie, an insider claiming a live name, or a dial
    // answered by a host other than the node dialed tests it.
    const IMPOSTORS: &[CoverMark] = &[
        CoverMark::World(WorldMark::FaultImpostor),
        CoverMark::World(WorldMark::FaultClaim),
        CoverMark::World(WorldMark::FaultClaimOwnName),
        CoverMark::World(WorldMark::FaultMisdial),
    ];
    // M9 holds a node to its budget and its frame deadline: spenders and
    // tricklers test that it does, a link quiet past the deadline that it
    // does not hold honest nodes to it.
    const SPENDERS: &[CoverMark] = &[
        CoverMark::World(WorldMark::FaultSpend),
        CoverMark::World(WorldMark::FaultSpendBeforeHello),
        CoverMark::World(WorldMark::FaultTrickle),
        CoverMark::World(WorldMark::QuietPastFrameDeadline),
    ];
    // S9 holds a healthy peer to its own causes and pace while another
    // peer is in trouble: a sweep in which no healthy peer carried
    // traffic beside a faulty one decided nothing of it.
    const BESIDE: &[CoverMark] = &[CoverMark::World(WorldMark::HealthyPeerBesideFault)];
    const REDIALS: &[CoverMark] = &[
        CoverMark::World(WorldMark::RedialOk),
        CoverMark::World(WorldMark::RedialFailed),
    ];
    match contract {
        Contract::S3 | Contract::M4 => Some(("took a generation down", DOWNS)),
        Contract::M5 => Some(("silenced a generation (a heartbeat fired)", HEARTBEAT)),
        Contract::S8 => Some(("redialed", REDIALS)),
        Contract::S9 => Some((
            "carried a healthy peer's frames beside a faulty peer",
            BESIDE,
        )),
        Contract::M7 => Some(("made a node's accept fail or flooded it", ACCEPT_ERRORS)),
        Contract::M8 => Some(("sent an impostor or an insider", IMPOSTORS)),
        Contract::M9 => Some((
            "sent spenders or kept a link quiet past the frame deadline",
            SPENDERS,
        )),
        Contract::L1
        | Contract::L2
        | Contract::L3
        | Contract::L4
        | Contract::L5
        | Contract::L6
        | Contract::Dc1
        | Contract::Dc2
        | Contract::Dc5
        | Contract::S1
        | Contract::S2
        | Contract::S4
        | Contract::S5
        | Contract::S6
        | Contract::S7
        | Contract::EndToEnd
        | Contract::M1
        | Contract::M2
        | Contract::M3
        | Contract::M6 => None,
    }
}
