//! Coverage marks and preemption points: how the testbed sees which races a
//! run reached, and how a single-threaded simulated world reaches races that
//! in production only a second thread could.
//!
//! Model. Both are calls the production code makes at the sites that matter;
//! neither changes what the code does.
//!
//! - `mark` says "this run got here" (a declined reap, a write deadline
//!   that fired, a control skipped because its generation was down). The
//!   testbed counts marks per run and a scenario lists the marks it exists
//!   to reach, so a scenario that never reaches its race fails instead of
//!   passing vacuously (FoundationDB's `TEST()` and TigerBeetle's coverage
//!   marks are the models).
//! - `preempt_point` sits where a decision and its action are separated
//!   and another thread could run between them in production (a lane's idle
//!   timeout and its reap, a drain's down check and its write). A simulated
//!   world may answer with a yield or a short virtual sleep, drawn from the
//!   run's seed, so other tasks run inside the window: a model of a
//!   preempted thread. The point is in the correct code and never moves a
//!   bug's code; it lets the worlds interleave where production threads
//!   can, including inside a window a bug opens there.
//!
//! lanesim's components use the public probe API (`lanesim_target::probe`)
//! as any implementation would: this module only names their sites, as
//! enums, so a typo is a build error and the testbed can list them
//! ([`LANES_SITES`], [`NODE_SITES`]). Both compile to nothing without the
//! `testbed` feature (which turns on `lanesim-target/testbed`), like the
//! planted bugs; the testbed package enables it, a production build never
//! does.

pub use lanesim_target::probe::ENABLED;
use lanesim_target::probe::{Role, Sites};

macro_rules! named {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The name reports and scenario files use.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            /// Looks a value up by [`Self::name`].
            #[must_use]
            pub fn from_name(name: &str) -> Option<Self> {
                Self::ALL.iter().copied().find(|value| value.name() == name)
            }
        }
    };
}

named! {
    /// A site in the production code a run may reach.
    Mark {
        /// `route` created a lane for a key that had none.
        LaneCreated => "lane_created",
        /// `route` refused an item: its lane held `capacity` unhandled items.
        CapacityRefused => "capacity_refused",
        /// A lane's idle timeout fired, but under the shard lock it was not
        /// idle any more (`pending > 0`): the reap was declined.
        ReapDeclined => "reap_declined",
        /// A lane reaped itself.
        ReapWon => "reap_won",
        /// A lane's idle timeout fired after the router was dropped: it
        /// drains to the disconnect instead of exiting.
        ReapAfterRouterGone => "reap_after_router_gone",
        /// A lane's idle wait took an item when its TTL had already passed:
        /// the item and the timer were due at one poll (the choice an
        /// un-`biased` idle `select!` gets wrong).
        IdleWaitRaced => "idle_wait_raced",
        /// A lane task unwound (the raw router does not catch panics).
        LaneExitPanicked => "lane_exit_panicked",
        /// A lane task was dropped unfinished.
        LaneExitCancelled => "lane_exit_cancelled",
        /// A router was dropped while lanes were alive.
        RouterDroppedWithLiveLanes => "router_dropped_with_live_lanes",
        /// The dispatcher caught a handler panic after its first await.
        HandlerPanicked => "handler_panicked",
        /// The dispatcher caught a panic in a handler's synchronous part.
        HandlerPanickedSync => "handler_panicked_sync",
        /// A generation went down: the peer closed at a frame boundary.
        DownPeerClosed => "down_peer_closed",
        /// A generation went down: a read failed.
        DownReadError => "down_read_error",
        /// A generation went down: a write failed.
        DownWriteError => "down_write_error",
        /// A generation went down: a write missed its deadline.
        DownWriteTimeout => "down_write_timeout",
        /// A generation went down: manual disconnect or shutdown.
        DownManualDisconnect => "down_manual_disconnect",
        /// A generation went down: heartbeat timeout.
        DownHeartbeatTimeout => "down_heartbeat_timeout",
        /// A generation went down: its control lane overflowed.
        DownControlOverflow => "down_control_overflow",
        /// `mark_down` on a generation that was already down (no second hook).
        DownRepeated => "down_repeated",
        /// ... and by then its node already had a newer generation.
        LateDownOfOldGeneration => "late_down_of_old_generation",
        /// `register` found a live incumbent and kept it.
        RegisterIncumbentKept => "register_incumbent_kept",
        /// `register` displaced a down incumbent with a new generation.
        RegisterDisplacedDown => "register_displaced_down",
        /// `write_raw` found its generation down under the writer lock and
        /// refused: the stale-frame window closed by the locked check.
        WriteRefusedDown => "write_refused_down",
        /// A write in progress was abandoned: its generation went down.
        WriteAbandonedOnDown => "write_abandoned_on_down",
        /// The drain's write deadline fired.
        WriteDeadlineFired => "write_deadline_fired",
        /// ... while the write still waited for the writer lock (another
        /// writer held it): one deadline covers the wait and the write.
        LockWaitDeadlineFired => "lock_wait_deadline_fired",
        /// A node started with its inbound caps lowered to fit its
        /// transport's descriptor limit.
        CapsFittedToDescriptors => "caps_fitted_to_descriptors",
        /// A full control lane marked the pinned generation down.
        ControlOverflowMarkedDown => "control_overflow_marked_down",
        /// The drain skipped a control whose pinned generation was down.
        ControlSkippedPinnedDown => "control_skipped_pinned_down",
        /// The drain dropped a data frame: no live connection for its node.
        DataUnroutable => "data_unroutable",
        /// `enqueue` dropped a data frame: the data lane was full.
        DataDroppedFull => "data_dropped_full",
        /// The drain ended with controls still queued (each marked down).
        ShutdownWithQueuedControls => "shutdown_with_queued_controls",
        /// The drain ended in the middle of a write (its generation marked down).
        ShutdownMidWrite => "shutdown_mid_write",
        /// A control was queued as the sender shut down: its enqueuer marked
        /// the pinned generation down.
        ControlRacedShutdown => "control_raced_shutdown",
        /// `enqueue_control` refused: the sender is shut down.
        ControlRefusedClosed => "control_refused_closed",
        /// `register` displaced a live incumbent dialed the losing way by a
        /// connection dialed the winning way (the simultaneous-connect
        /// tie-break).
        RegisterTieBreakWon => "register_tie_break_won",
        /// `register` refused a new stream dialed the losing way: a live
        /// incumbent dialed the winning way stays.
        RegisterTieBreakLost => "register_tie_break_lost",
        /// A generation went down: the tie-break replaced it.
        DownSimultaneousConnect => "down_simultaneous_connect",
        /// A generation went down: the frame callback panicked on it.
        DownHandlerPanicked => "down_handler_panicked",
        /// An inbound hello was refused (bad or forged node name).
        HelloRefused => "hello_refused",
        /// An inbound stream's proof did not verify: its peer lacks the
        /// cookie (or replayed another stream's proof).
        ProofRefused => "proof_refused",
        /// A read was refused: the frame budget across connections was spent.
        FrameBudgetRefused => "frame_budget_refused",
        /// A node's table slot was removed: no live connection was left.
        SlotRemoved => "slot_removed",
        /// A connection wrote a keepalive.
        KeepaliveSent => "keepalive_sent",
        /// A dial found another dial of its node in flight, waited, and
        /// took the connection it made.
        DialJoinedInFlight => "dial_joined_in_flight",
        /// A read loop started on a generation that was already down: its
        /// down came before the loop first watched for one, so only a
        /// wake-up that keeps a permit (or a look at the flag) tells it.
        DownBeforeReadLoop => "down_before_read_loop",
        /// A generation went down: a write was dropped partway through its
        /// frame.
        DownWriteCancelled => "down_write_cancelled",
        /// A generation went down: a frame's body missed the frame deadline.
        DownFrameTimeout => "down_frame_timeout",
        /// A generation went down: its reader was refused for the frame
        /// budget.
        DownOverBudget => "down_over_budget",
        /// A stream refused in favour of a live incumbent was registered
        /// after all: the incumbent went down while the stream stood by (a
        /// stale hello had won the tie-break).
        StandbyRegistered => "standby_registered",
        /// A stream standing by was dropped: its incumbent went down by a
        /// manual disconnect, which it must not undo.
        StandbyDroppedForDisconnect => "standby_dropped_for_disconnect",
        /// A claim was refused: the incumbent it was being checked against
        /// went down by a manual disconnect before it answered.
        ClaimDroppedForDisconnect => "claim_dropped_for_disconnect",
        /// A generation went down: its name's owner reclaimed it (the
        /// claim check's rule 1: a squatter).
        DownNameReclaimed => "down_name_reclaimed",
        /// An accepted stream's claim was confirmed by the live incumbent's
        /// node (it dialed the stream).
        ClaimConfirmed => "claim_confirmed",
        /// An accepted stream's claim was denied by the live incumbent's
        /// node: the stream was refused.
        ClaimDenied => "claim_denied",
        /// The live incumbent did not answer a claim check in time, or went
        /// down first.
        ClaimUnanswered => "claim_unanswered",
        /// A stream from the name's dialed host found a squatter from
        /// another host holding the name: the squatter goes down.
        ClaimReclaimed => "claim_reclaimed",
        /// An inbound stream was refused at its source's cap.
        AdmissionRefusedForSource => "admission_refused_for_source",
        /// An inbound stream was refused at a total cap.
        AdmissionRefusedFull => "admission_refused_full",
        /// Every handshake place being held, the heaviest source's oldest
        /// handshake was evicted for a lighter source's stream.
        AdmissionEvicted => "admission_evicted",
        /// A down broke links over its node made at or before its
        /// generation (`noconnection` for each).
        LinkBrokenByDown => "link_broken_by_down",
        /// A down kept links over its node made over a newer generation (a
        /// redial registered before the old generation's hook ran).
        LinkKeptAcrossDown => "link_kept_across_down",
        /// A link was made over a generation already down: broken at once.
        LinkMadeOverDown => "link_made_over_down",
    }
}

named! {
    /// A place where a decision and its action are separated and another
    /// thread could run between them in production.
    Point {
        /// A lane's idle timeout fired; its reap decision comes next.
        LaneIdleBeforeReap => "lane.idle_before_reap",
        /// A lane removed itself; its task has not ended yet.
        LaneReapedBeforeExit => "lane.reaped_before_exit",
        /// The drain took a frame off a lane; it has not looked at its
        /// connection yet.
        DrainPicked => "drain.picked",
        /// The drain found the frame's connection up; the write comes next.
        DrainBeforeWrite => "drain.before_write",
        /// A read loop saw its stream fail; the generation is not down yet.
        ReadBeforeMarkDown => "read.before_mark_down",
        /// A generation is registered; its read loop has not started
        /// watching for its down yet.
        ReadLoopStarting => "read.loop_starting",
        /// A dial connected and said hello; the generation is not
        /// registered yet.
        DialBeforeRegister => "dial.before_register",
    }
}

/// The roles a list of lanesim's marks shows: each role is shown by the
/// mark of the same name (`lanesim_target::probe::Role`).
macro_rules! roles {
    ($($variant:ident),+ $(,)?) => {
        &[$((Role::$variant, Mark::$variant.name()),)+]
    };
}

/// The lanes' sites.
pub const LANES_SITES: Sites = Sites {
    marks: &[
        Mark::LaneCreated.name(),
        Mark::CapacityRefused.name(),
        Mark::ReapDeclined.name(),
        Mark::ReapWon.name(),
        Mark::ReapAfterRouterGone.name(),
        Mark::IdleWaitRaced.name(),
        Mark::LaneExitPanicked.name(),
        Mark::LaneExitCancelled.name(),
        Mark::RouterDroppedWithLiveLanes.name(),
        Mark::HandlerPanicked.name(),
        Mark::HandlerPanickedSync.name(),
    ],
    points: &[
        Point::LaneIdleBeforeReap.name(),
        Point::LaneReapedBeforeExit.name(),
    ],
    roles: roles!(
        LaneCreated,
        CapacityRefused,
        ReapDeclined,
        ReapWon,
        ReapAfterRouterGone,
        IdleWaitRaced,
        LaneExitPanicked,
        RouterDroppedWithLiveLanes,
        HandlerPanicked,
        HandlerPanickedSync,
    ),
};

/// The distribution layer's sites: every one a node can reach (those a
/// node reaches only when it accepts dials are [`ACCEPTOR_SITES`] too).
pub const NODE_SITES: Sites = Sites {
    marks: &[
        Mark::DownPeerClosed.name(),
        Mark::DownReadError.name(),
        Mark::DownWriteError.name(),
        Mark::DownWriteTimeout.name(),
        Mark::DownManualDisconnect.name(),
        Mark::DownHeartbeatTimeout.name(),
        Mark::DownControlOverflow.name(),
        Mark::DownRepeated.name(),
        Mark::LateDownOfOldGeneration.name(),
        Mark::RegisterIncumbentKept.name(),
        Mark::RegisterDisplacedDown.name(),
        Mark::WriteRefusedDown.name(),
        Mark::WriteAbandonedOnDown.name(),
        Mark::WriteDeadlineFired.name(),
        Mark::LockWaitDeadlineFired.name(),
        Mark::CapsFittedToDescriptors.name(),
        Mark::ControlOverflowMarkedDown.name(),
        Mark::ControlSkippedPinnedDown.name(),
        Mark::DataUnroutable.name(),
        Mark::DataDroppedFull.name(),
        Mark::ShutdownWithQueuedControls.name(),
        Mark::ShutdownMidWrite.name(),
        Mark::ControlRacedShutdown.name(),
        Mark::ControlRefusedClosed.name(),
        Mark::FrameBudgetRefused.name(),
        Mark::SlotRemoved.name(),
        Mark::KeepaliveSent.name(),
        Mark::DialJoinedInFlight.name(),
        Mark::DownBeforeReadLoop.name(),
        Mark::DownWriteCancelled.name(),
        Mark::DownFrameTimeout.name(),
        Mark::DownOverBudget.name(),
        Mark::RegisterTieBreakWon.name(),
        Mark::RegisterTieBreakLost.name(),
        Mark::DownSimultaneousConnect.name(),
        Mark::DownHandlerPanicked.name(),
        Mark::HelloRefused.name(),
        Mark::ProofRefused.name(),
        Mark::StandbyRegistered.name(),
        Mark::StandbyDroppedForDisconnect.name(),
        Mark::ClaimDroppedForDisconnect.name(),
        Mark::DownNameReclaimed.name(),
        Mark::ClaimConfirmed.name(),
        Mark::ClaimDenied.name(),
        Mark::ClaimUnanswered.name(),
        Mark::ClaimReclaimed.name(),
        Mark::AdmissionRefusedForSource.name(),
        Mark::AdmissionRefusedFull.name(),
        Mark::AdmissionEvicted.name(),
        Mark::LinkBrokenByDown.name(),
        Mark::LinkKeptAcrossDown.name(),
        Mark::LinkMadeOverDown.name(),
    ],
    points: &[
        Point::DrainPicked.name(),
        Point::DrainBeforeWrite.name(),
        Point::ReadBeforeMarkDown.name(),
        Point::ReadLoopStarting.name(),
        Point::DialBeforeRegister.name(),
    ],
    roles: roles!(
        ControlOverflowMarkedDown,
        ControlSkippedPinnedDown,
        WriteDeadlineFired,
        ShutdownWithQueuedControls,
        ShutdownMidWrite,
        ControlRefusedClosed,
        DownRepeated,
        DownManualDisconnect,
        DownHeartbeatTimeout,
        DownReadError,
        DownSimultaneousConnect,
        DownFrameTimeout,
        DownOverBudget,
        FrameBudgetRefused,
        KeepaliveSent,
        LateDownOfOldGeneration,
        WriteAbandonedOnDown,
        RegisterTieBreakWon,
        RegisterTieBreakLost,
        RegisterIncumbentKept,
        StandbyRegistered,
        ProofRefused,
        ClaimDenied,
        ClaimReclaimed,
        DownNameReclaimed,
        LinkBrokenByDown,
        LinkMadeOverDown,
    ),
};

/// The sites of [`NODE_SITES`] in the connection layer (`ConnectionManager`,
/// `DistConnection`): what a node made of this layer and another sender
/// reaches. The rest are the sender's (`DistSender`; the write deadline
/// fires in its drain's `write_frame`).
pub const LAYER_SITES: Sites = Sites {
    marks: &[
        Mark::DownPeerClosed.name(),
        Mark::DownReadError.name(),
        Mark::DownWriteError.name(),
        Mark::DownWriteTimeout.name(),
        Mark::DownManualDisconnect.name(),
        Mark::DownHeartbeatTimeout.name(),
        Mark::DownControlOverflow.name(),
        Mark::DownRepeated.name(),
        Mark::LateDownOfOldGeneration.name(),
        Mark::RegisterIncumbentKept.name(),
        Mark::RegisterDisplacedDown.name(),
        Mark::WriteRefusedDown.name(),
        Mark::WriteAbandonedOnDown.name(),
        Mark::FrameBudgetRefused.name(),
        Mark::SlotRemoved.name(),
        Mark::KeepaliveSent.name(),
        Mark::DialJoinedInFlight.name(),
        Mark::DownBeforeReadLoop.name(),
        Mark::DownWriteCancelled.name(),
        Mark::DownFrameTimeout.name(),
        Mark::DownOverBudget.name(),
        Mark::RegisterTieBreakWon.name(),
        Mark::RegisterTieBreakLost.name(),
        Mark::DownSimultaneousConnect.name(),
        Mark::DownHandlerPanicked.name(),
        Mark::HelloRefused.name(),
        Mark::ProofRefused.name(),
        Mark::StandbyRegistered.name(),
        Mark::StandbyDroppedForDisconnect.name(),
        Mark::ClaimDroppedForDisconnect.name(),
        Mark::DownNameReclaimed.name(),
        Mark::ClaimConfirmed.name(),
        Mark::ClaimDenied.name(),
        Mark::ClaimUnanswered.name(),
        Mark::ClaimReclaimed.name(),
        Mark::AdmissionRefusedForSource.name(),
        Mark::AdmissionRefusedFull.name(),
        Mark::AdmissionEvicted.name(),
        Mark::LinkBrokenByDown.name(),
        Mark::LinkKeptAcrossDown.name(),
        Mark::LinkMadeOverDown.name(),
    ],
    points: &[
        Point::ReadBeforeMarkDown.name(),
        Point::ReadLoopStarting.name(),
        Point::DialBeforeRegister.name(),
    ],
    roles: roles!(
        DownRepeated,
        DownManualDisconnect,
        DownHeartbeatTimeout,
        DownReadError,
        DownSimultaneousConnect,
        DownFrameTimeout,
        DownOverBudget,
        FrameBudgetRefused,
        KeepaliveSent,
        LateDownOfOldGeneration,
        WriteAbandonedOnDown,
        RegisterTieBreakWon,
        RegisterTieBreakLost,
        RegisterIncumbentKept,
        StandbyRegistered,
        ProofRefused,
        ClaimDenied,
        ClaimReclaimed,
        DownNameReclaimed,
        LinkBrokenByDown,
        LinkMadeOverDown,
    ),
};

/// The sites of [`NODE_SITES`] only a node that accepts reaches (the mesh
/// world's).
pub const ACCEPTOR_SITES: Sites = Sites {
    marks: &[
        Mark::RegisterTieBreakWon.name(),
        Mark::RegisterTieBreakLost.name(),
        Mark::DownSimultaneousConnect.name(),
        Mark::DownHandlerPanicked.name(),
        Mark::HelloRefused.name(),
        Mark::ProofRefused.name(),
        Mark::StandbyRegistered.name(),
        Mark::StandbyDroppedForDisconnect.name(),
        Mark::ClaimDroppedForDisconnect.name(),
        Mark::DownNameReclaimed.name(),
        Mark::ClaimConfirmed.name(),
        Mark::ClaimDenied.name(),
        Mark::ClaimUnanswered.name(),
        Mark::ClaimReclaimed.name(),
        Mark::AdmissionRefusedForSource.name(),
        Mark::AdmissionRefusedFull.name(),
        Mark::AdmissionEvicted.name(),
    ],
    points: &[],
    roles: roles!(
        RegisterTieBreakWon,
        RegisterTieBreakLost,
        StandbyRegistered,
        ProofRefused,
        ClaimDenied,
        ClaimReclaimed,
        DownNameReclaimed,
    ),
};

/// This run reached `mark`.
#[inline(always)]
pub(crate) fn mark(mark: Mark) {
    lanesim_target::probe::mark(mark.name());
}

/// A point where another thread could run before this task goes on.
#[inline(always)]
pub(crate) async fn preempt_point(point: Point) {
    lanesim_target::probe::preempt_point(point.name()).await;
}

/// The probe hook a dedicated runtime's workers start with.
#[cfg(not(any(loom, shuttle)))]
#[inline(always)]
pub(crate) fn inheritor() -> Option<std::sync::Arc<dyn Fn() + Send + Sync>> {
    lanesim_target::probe::worker_start_hook()
}

#[cfg(test)]
mod tests {
    use super::{Mark, Point, ACCEPTOR_SITES, LANES_SITES, LAYER_SITES, NODE_SITES};

    /// Every mark and point is in exactly one of the components' site
    /// lists; the acceptor's are the node's.
    #[test]
    fn every_site_is_declared_once() {
        for mark in ACCEPTOR_SITES.marks.iter().chain(LAYER_SITES.marks) {
            assert!(NODE_SITES.marks.contains(mark), "{mark}");
        }
        for point in LAYER_SITES.points {
            assert!(NODE_SITES.points.contains(point), "{point}");
        }
        let lists = [LANES_SITES, NODE_SITES];
        for mark in Mark::ALL {
            let n = lists
                .iter()
                .filter(|s| s.marks.contains(&mark.name()))
                .count();
            assert_eq!(n, 1, "{mark:?}");
        }
        for point in Point::ALL {
            let n = lists
                .iter()
                .filter(|s| s.points.contains(&point.name()))
                .count();
            assert_eq!(n, 1, "{point:?}");
        }
        let total: usize = lists.iter().map(|s| s.marks.len()).sum();
        assert_eq!(total, Mark::ALL.len());
    }
}
