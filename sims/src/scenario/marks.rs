//! Which world can reach which coverage mark: what a scenario's `reaches`
//! may name. Matches are exhaustive, so a new mark must be given a world.

use lanesim::shim::probe::{Mark, Point};

use super::spec::WorldKind;
use crate::coverage::{CoverMark, WorldMark};

/// The world that can reach `mark`.
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
        | WorldMark::FaultDisconnect => WorldKind::Sender,
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
        | Mark::ControlRefusedClosed => WorldKind::Sender,
    }
}

fn point_world(point: Point) -> WorldKind {
    match point {
        Point::LaneIdleBeforeReap | Point::LaneReapedBeforeExit => WorldKind::Lanes,
        Point::DrainPicked
        | Point::DrainBeforeWrite
        | Point::ReadBeforeMarkDown
        | Point::DialBeforeRegister => WorldKind::Sender,
    }
}
