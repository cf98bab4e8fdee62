//! Which world can reach which coverage mark: what a scenario's `reaches`
//! may name. Matches are exhaustive, so a new mark must be given a world.

use lanesim::shim::probe::{Mark, Point};

use super::spec::{Contract, WorldKind};
use crate::coverage::{CoverMark, WorldMark};

/// Whether a scenario of `world` can reach `mark`: its home world's, and
/// for the mesh, which runs the sender world's production code on every
/// node, the sender world's code marks, preemption points and the faults
/// both worlds share.
#[must_use]
pub fn reachable_in(mark: CoverMark, world: WorldKind) -> bool {
    let home = world_of(mark);
    home == world
        || (world == WorldKind::Mesh
            && home == WorldKind::Sender
            && match mark {
                CoverMark::Code(_) | CoverMark::Preempted(_) => true,
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
                ),
            })
}

/// The world a mark belongs to (the mesh can reach the sender world's
/// too: [`reachable_in`]).
#[must_use]
pub fn world_of(mark: CoverMark) -> WorldKind {
    match mark {
        CoverMark::Code(mark) => code_mark_world(mark),
        CoverMark::World(mark) => world_mark_world(mark),
        CoverMark::Preempted(point) => point_world(point),
    }
}

fn world_mark_world(mark: WorldMark) -> WorldKind {
    match mark {
        WorldMark::LaneRebuiltAfterReap
        | WorldMark::LaneRebuiltAfterPanic
        | WorldMark::StuckKeyHung
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
        | WorldMark::PeerToreHeader
        | WorldMark::PeerToreBody
        | WorldMark::WriteBlockedOnWindow => WorldKind::Sender,
        WorldMark::FaultRestart
        | WorldMark::FaultHalfOpen
        | WorldMark::FaultSquat
        | WorldMark::FaultCrossDial
        | WorldMark::SimultaneousFirstDial => WorldKind::Mesh,
    }
}

fn code_mark_world(mark: Mark) -> WorldKind {
    match mark {
        Mark::LaneCreated
        | Mark::CapacityRefused
        | Mark::ReapDeclined
        | Mark::ReapWon
        | Mark::ReapAfterRouterGone
        | Mark::LaneExitPanicked
        | Mark::LaneExitCancelled
        | Mark::RouterDroppedWithLiveLanes
        | Mark::HandlerPanicked
        | Mark::HandlerPanickedSync => WorldKind::Lanes,
        Mark::DownPeerClosed
        | Mark::DownReadError
        | Mark::DownWriteError
        | Mark::DownWriteTimeout
        | Mark::DownManualDisconnect
        | Mark::DownHeartbeatTimeout
        | Mark::DownControlOverflow
        | Mark::DownRepeated
        | Mark::LateDownOfOldGeneration
        | Mark::RegisterIncumbentKept
        | Mark::RegisterDisplacedDown
        | Mark::WriteRefusedDown
        | Mark::WriteAbandonedOnDown
        | Mark::WriteDeadlineFired
        | Mark::ControlOverflowMarkedDown
        | Mark::ControlSkippedPinnedDown
        | Mark::DataUnroutable
        | Mark::DataDroppedFull
        | Mark::ShutdownWithQueuedControls
        | Mark::ShutdownMidWrite
        | Mark::ControlRacedShutdown
        | Mark::ControlRefusedClosed
        | Mark::FrameBudgetRefused
        | Mark::SlotRemoved
        | Mark::KeepaliveSent
        | Mark::DialJoinedInFlight
        | Mark::DownBeforeReadLoop
        | Mark::DownWriteCancelled => WorldKind::Sender,
        Mark::RegisterTieBreakWon
        | Mark::RegisterTieBreakLost
        | Mark::DownSimultaneousConnect
        | Mark::DownHandlerPanicked
        | Mark::HelloRefused
        | Mark::StandbyRegistered => WorldKind::Mesh,
    }
}

fn point_world(point: Point) -> WorldKind {
    match point {
        Point::LaneIdleBeforeReap | Point::LaneReapedBeforeExit => WorldKind::Lanes,
        Point::DrainPicked
        | Point::DrainBeforeWrite
        | Point::ReadBeforeMarkDown
        | Point::ReadLoopStarting
        | Point::DialBeforeRegister => WorldKind::Sender,
    }
}

/// What a sweep must reach for `contract` to be able to fail at all, and
/// what that is in words: a scenario that lists S3 but never takes a
/// generation down checks nothing (`None`: every run can break it).
#[must_use]
pub fn evidence(contract: Contract) -> Option<(&'static str, &'static [CoverMark])> {
    const DOWNS: &[CoverMark] = &[
        CoverMark::Code(Mark::DownPeerClosed),
        CoverMark::Code(Mark::DownReadError),
        CoverMark::Code(Mark::DownWriteError),
        CoverMark::Code(Mark::DownWriteTimeout),
        CoverMark::Code(Mark::DownManualDisconnect),
        CoverMark::Code(Mark::DownHeartbeatTimeout),
        CoverMark::Code(Mark::DownControlOverflow),
        CoverMark::Code(Mark::DownSimultaneousConnect),
        CoverMark::Code(Mark::DownHandlerPanicked),
        CoverMark::Code(Mark::DownWriteCancelled),
    ];
    const REDIALS: &[CoverMark] = &[
        CoverMark::World(WorldMark::RedialOk),
        CoverMark::World(WorldMark::RedialFailed),
    ];
    match contract {
        Contract::S3 | Contract::M4 => Some(("took a generation down", DOWNS)),
        Contract::M5 => Some((
            "silenced a generation (a heartbeat fired)",
            &[CoverMark::Code(Mark::DownHeartbeatTimeout)],
        )),
        Contract::S8 => Some(("redialed", REDIALS)),
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
