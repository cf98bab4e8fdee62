//! Coverage marks and preemption points, for any implementation: how the
//! testbed sees which races a run reached, and how a single-threaded
//! simulated world reaches races that in production only a second thread
//! could.
//!
//! Model. Both are calls the code under test makes at the sites that
//! matter; neither changes what the code does.
//!
//! - [`mark`] says "this run got here" (a declined reap, a write deadline
//!   that fired). The testbed counts marks per run, and a scenario lists the
//!   marks it exists to reach (`reaches = ["reap_declined >= 25%"]`), so a
//!   scenario that never reaches its race fails instead of passing
//!   vacuously (FoundationDB's `TEST()` and TigerBeetle's coverage marks are
//!   the models).
//! - [`preempt_point`] sits where a decision and its action are separated
//!   and another thread could run between them in production (an idle
//!   timeout and its reap, a down check and its write). A simulated world
//!   may answer with a yield or a short virtual sleep, drawn from the run's
//!   seed, so other tasks run inside the window: a model of a preempted
//!   thread. The point is in the correct code too; it lets the worlds
//!   interleave where production threads can.
//!
//! A target declares the names it uses ([`Sites`]), so a scenario naming a
//! mark the target never declared is refused or reported as not decided,
//! never passed.
//!
//! Both compile to nothing without the `testbed` feature (an empty inline
//! function and a future that is ready at once). Take this crate as a
//! normal dependency and call them in production code: only a build that
//! also has the testbed (a `lanesim-sims` dev-dependency, whose features
//! cargo's resolver 2 applies to test builds only) turns them on. Under
//! `--cfg loom` and `--cfg shuttle` they are no-ops too: the model checkers
//! interleave at every atomic already. With the feature, a probe is
//! installed per thread ([`install`]): a simulated world runs on one
//! thread, so marks and preemptions count for exactly one run even when a
//! sweep runs many worlds side by side.

use std::time::Duration;

/// The names of the marks and preemption points a component's code uses,
/// and which of its marks show each [`Role`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sites {
    /// Every name the code passes to [`mark`].
    pub marks: &'static [&'static str],
    /// Every name the code passes to [`preempt_point`].
    pub points: &'static [&'static str],
    /// Roles this code shows, each with the name of a mark in
    /// [`Sites::marks`] it makes when it does (a role may be listed with
    /// several marks: any of them shows it).
    pub roles: &'static [(Role, &'static str)],
}

/// A state a scenario is written to reach, in the world's words, not any
/// implementation's: "a lane idle past its TTL declined to reap because
/// work was pending". A scenario requires a role (`reaches =
/// ["role:reap_declined >= 25%"]`); a target says which of its own marks
/// show it ([`Sites::roles`]). A run reached the role when it made one of
/// those marks. For a target that maps no mark to a role, the requirement
/// is not decided, and reported so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// A key got a lane (its first, or a new one after its last ended).
    LaneCreated,
    /// `route` refused an item because the queues were at their limit.
    CapacityRefused,
    /// A lane idle past its TTL declined to reap itself because work for its key was pending.
    ReapDeclined,
    /// A lane idle past its TTL reaped itself (removed itself from the router).
    ReapWon,
    /// A lane went to reap itself after the router was dropped.
    ReapAfterRouterGone,
    /// An item and a lane's idle TTL were both due at the poll that decided between them.
    IdleWaitRaced,
    /// A lane task ended by a panic (a router that catches no handler panic).
    LaneExitPanicked,
    /// The router was dropped while lanes were still alive.
    RouterDroppedWithLiveLanes,
    /// A lane caught its handler's panic and went on.
    HandlerPanicked,
    /// A lane caught a panic raised by the handler call itself, before its future was polled.
    HandlerPanickedSync,
    /// A control found its node's control queue full, and the generation went down for it.
    ControlOverflowMarkedDown,
    /// The drain skipped a control pinned to a generation that had gone down.
    ControlSkippedPinnedDown,
    /// A down report of an older generation arrived after a newer one was up.
    LateDownOfOldGeneration,
    /// A write in progress was abandoned because its generation went down.
    WriteAbandonedOnDown,
    /// A frame's write outlived its write deadline.
    WriteDeadlineFired,
    /// The sender shut down with controls still queued.
    ShutdownWithQueuedControls,
    /// The sender shut down while a write was in progress.
    ShutdownMidWrite,
    /// An enqueue after shutdown was refused as closed.
    ControlRefusedClosed,
    /// A second down report of a generation already down was swallowed.
    DownRepeated,
    /// A generation went down because it was disconnected on purpose.
    DownManualDisconnect,
    /// A generation went down after nothing was read for a heartbeat tick.
    DownHeartbeatTimeout,
    /// A generation went down because a read failed or a frame was malformed.
    DownReadError,
    /// A generation went down because a simultaneous connect was settled for the other socket.
    DownSimultaneousConnect,
    /// A generation went down because a frame's body outlived the frame deadline.
    DownFrameTimeout,
    /// A generation went down because its reader was refused for the frame budget.
    DownOverBudget,
    /// A reader was refused bytes of the budget for partly read frames.
    FrameBudgetRefused,
    /// A keepalive was written.
    KeepaliveSent,
    /// A simultaneous connect was settled in favour of this node's socket.
    RegisterTieBreakWon,
    /// A simultaneous connect was settled in favour of the peer's socket.
    RegisterTieBreakLost,
    /// A new connection to a node was refused because a live one (the incumbent) was kept.
    RegisterIncumbentKept,
    /// A connection was kept standing by behind a live incumbent.
    StandbyRegistered,
    /// A dialer's handshake proof was refused.
    ProofRefused,
    /// A stream claiming a live node's name was refused: that node, asked
    /// over its live connection, denied dialing it.
    ClaimDenied,
    /// A stream from the host a name is dialed at found a squatter from
    /// another host holding the name, and reclaimed it.
    ClaimReclaimed,
    /// A generation went down because its name's owner reclaimed it.
    DownNameReclaimed,
    /// A down broke links made over its generation (or an older one of
    /// its node): `noconnection` for each, from the node's link table.
    LinkBrokenByDown,
    /// A link was made over a generation already down: broken at once.
    LinkMadeOverDown,
}

impl Role {
    /// Every role, in declaration order.
    pub const ALL: &'static [Role] = &[
        Self::LaneCreated,
        Self::CapacityRefused,
        Self::ReapDeclined,
        Self::ReapWon,
        Self::ReapAfterRouterGone,
        Self::IdleWaitRaced,
        Self::LaneExitPanicked,
        Self::RouterDroppedWithLiveLanes,
        Self::HandlerPanicked,
        Self::HandlerPanickedSync,
        Self::ControlOverflowMarkedDown,
        Self::ControlSkippedPinnedDown,
        Self::LateDownOfOldGeneration,
        Self::WriteAbandonedOnDown,
        Self::WriteDeadlineFired,
        Self::ShutdownWithQueuedControls,
        Self::ShutdownMidWrite,
        Self::ControlRefusedClosed,
        Self::DownRepeated,
        Self::DownManualDisconnect,
        Self::DownHeartbeatTimeout,
        Self::DownReadError,
        Self::DownSimultaneousConnect,
        Self::DownFrameTimeout,
        Self::DownOverBudget,
        Self::FrameBudgetRefused,
        Self::KeepaliveSent,
        Self::RegisterTieBreakWon,
        Self::RegisterTieBreakLost,
        Self::RegisterIncumbentKept,
        Self::StandbyRegistered,
        Self::ProofRefused,
        Self::ClaimDenied,
        Self::ClaimReclaimed,
        Self::DownNameReclaimed,
        Self::LinkBrokenByDown,
        Self::LinkMadeOverDown,
    ];

    /// Its name in scenario files (after `role:`) and reports.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::LaneCreated => "lane_created",
            Self::CapacityRefused => "capacity_refused",
            Self::ReapDeclined => "reap_declined",
            Self::ReapWon => "reap_won",
            Self::ReapAfterRouterGone => "reap_after_router_gone",
            Self::IdleWaitRaced => "idle_wait_raced",
            Self::LaneExitPanicked => "lane_exit_panicked",
            Self::RouterDroppedWithLiveLanes => "router_dropped_with_live_lanes",
            Self::HandlerPanicked => "handler_panicked",
            Self::HandlerPanickedSync => "handler_panicked_sync",
            Self::ControlOverflowMarkedDown => "control_overflow_marked_down",
            Self::ControlSkippedPinnedDown => "control_skipped_pinned_down",
            Self::LateDownOfOldGeneration => "late_down_of_old_generation",
            Self::WriteAbandonedOnDown => "write_abandoned_on_down",
            Self::WriteDeadlineFired => "write_deadline_fired",
            Self::ShutdownWithQueuedControls => "shutdown_with_queued_controls",
            Self::ShutdownMidWrite => "shutdown_mid_write",
            Self::ControlRefusedClosed => "control_refused_closed",
            Self::DownRepeated => "down_repeated",
            Self::DownManualDisconnect => "down_manual_disconnect",
            Self::DownHeartbeatTimeout => "down_heartbeat_timeout",
            Self::DownReadError => "down_read_error",
            Self::DownSimultaneousConnect => "down_simultaneous_connect",
            Self::DownFrameTimeout => "down_frame_timeout",
            Self::DownOverBudget => "down_over_budget",
            Self::FrameBudgetRefused => "frame_budget_refused",
            Self::KeepaliveSent => "keepalive_sent",
            Self::RegisterTieBreakWon => "register_tie_break_won",
            Self::RegisterTieBreakLost => "register_tie_break_lost",
            Self::RegisterIncumbentKept => "register_incumbent_kept",
            Self::StandbyRegistered => "standby_registered",
            Self::ProofRefused => "proof_refused",
            Self::ClaimDenied => "claim_denied",
            Self::ClaimReclaimed => "claim_reclaimed",
            Self::DownNameReclaimed => "down_name_reclaimed",
            Self::LinkBrokenByDown => "link_broken_by_down",
            Self::LinkMadeOverDown => "link_made_over_down",
        }
    }

    /// What reaching it means.
    #[must_use]
    pub const fn meaning(self) -> &'static str {
        match self {
            Self::LaneCreated => "a key got a lane (its first, or a new one after its last ended)",
            Self::CapacityRefused => "`route` refused an item because the queues were at their limit",
            Self::ReapDeclined => "a lane idle past its TTL declined to reap itself because work for its key was pending",
            Self::ReapWon => "a lane idle past its TTL reaped itself (removed itself from the router)",
            Self::ReapAfterRouterGone => "a lane went to reap itself after the router was dropped",
            Self::IdleWaitRaced => "an item and a lane's idle TTL were both due at the poll that decided between them",
            Self::LaneExitPanicked => "a lane task ended by a panic (a router that catches no handler panic)",
            Self::RouterDroppedWithLiveLanes => "the router was dropped while lanes were still alive",
            Self::HandlerPanicked => "a lane caught its handler's panic and went on",
            Self::HandlerPanickedSync => "a lane caught a panic raised by the handler call itself, before its future was polled",
            Self::ControlOverflowMarkedDown => "a control found its node's control queue full, and the generation went down for it",
            Self::ControlSkippedPinnedDown => "the drain skipped a control pinned to a generation that had gone down",
            Self::LateDownOfOldGeneration => "a down report of an older generation arrived after a newer one was up",
            Self::WriteAbandonedOnDown => "a write in progress was abandoned because its generation went down",
            Self::WriteDeadlineFired => "a frame's write outlived its write deadline",
            Self::ShutdownWithQueuedControls => "the sender shut down with controls still queued",
            Self::ShutdownMidWrite => "the sender shut down while a write was in progress",
            Self::ControlRefusedClosed => "an enqueue after shutdown was refused as closed",
            Self::DownRepeated => "a second down report of a generation already down was swallowed",
            Self::DownManualDisconnect => "a generation went down because it was disconnected on purpose",
            Self::DownHeartbeatTimeout => "a generation went down after nothing was read for a heartbeat tick",
            Self::DownReadError => "a generation went down because a read failed or a frame was malformed",
            Self::DownSimultaneousConnect => "a generation went down because a simultaneous connect was settled for the other socket",
            Self::DownFrameTimeout => "a generation went down because a frame's body outlived the frame deadline",
            Self::DownOverBudget => "a generation went down because its reader was refused for the frame budget",
            Self::FrameBudgetRefused => "a reader was refused bytes of the budget for partly read frames",
            Self::KeepaliveSent => "a keepalive was written",
            Self::RegisterTieBreakWon => "a simultaneous connect was settled in favour of this node's socket",
            Self::RegisterTieBreakLost => "a simultaneous connect was settled in favour of the peer's socket",
            Self::RegisterIncumbentKept => "a new connection to a node was refused because a live one (the incumbent) was kept",
            Self::StandbyRegistered => "a connection was kept standing by behind a live incumbent",
            Self::ProofRefused => "a dialer's handshake proof was refused",
            Self::ClaimDenied => "a claim on a live node's name was denied by that node",
            Self::ClaimReclaimed => "a name's owner reclaimed it from a squatter",
            Self::DownNameReclaimed => "a generation went down: its name's owner reclaimed it",
            Self::LinkBrokenByDown => "a down broke links made over its generation (noconnection from the node's link table)",
            Self::LinkMadeOverDown => "a link made over a generation already down was broken at once",
        }
    }

    /// The role called `name`.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|role| role.name() == name)
    }
}

/// What a preemption point does in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preempt {
    /// Carry on at once.
    Run,
    /// Let every other ready task run first.
    Yield,
    /// Sleep this long (virtual time in a simulated world).
    Sleep(Duration),
}

/// The testbed's side: told of every mark, asked at every point.
pub trait Probe: Send + Sync {
    /// A run reached `mark`.
    fn mark(&self, mark: &'static str);
    /// A task reached `point`: what should it do?
    fn preempt(&self, point: &'static str) -> Preempt;
    /// A worker thread of a runtime the code under test built started, on
    /// that thread ([`worker_start_hook`]). The testbed's real mode notes
    /// which threads are the component's own, to measure how long the OS
    /// kept them waiting to run.
    fn worker_started(&self) {}
}

#[cfg(all(feature = "testbed", not(any(loom, shuttle))))]
mod imp {
    use std::cell::RefCell;
    use std::sync::Arc;

    use super::{Preempt, Probe};

    thread_local! {
        static PROBE: RefCell<Option<Arc<dyn Probe>>> = const { RefCell::new(None) };
    }

    /// Whether marks and points do anything in this build.
    pub const ENABLED: bool = true;

    /// Uninstalls the probe when dropped.
    #[must_use = "the probe is uninstalled when this is dropped"]
    pub struct Installed(());

    impl Drop for Installed {
        fn drop(&mut self) {
            PROBE.with(|probe| probe.borrow_mut().take());
        }
    }

    /// Installs `probe` for this thread until the returned guard drops.
    ///
    /// # Panics
    /// When a probe is already installed on this thread.
    pub fn install(probe: Arc<dyn Probe>) -> Installed {
        PROBE.with(|slot| {
            let mut slot = slot.borrow_mut();
            assert!(
                slot.is_none(),
                "a probe is already installed on this thread"
            );
            *slot = Some(probe);
        });
        Installed(())
    }

    fn current() -> Option<Arc<dyn Probe>> {
        PROBE.with(|probe| probe.borrow().clone())
    }

    /// For a runtime the code under test builds itself (a dedicated
    /// runtime): pass the result to tokio's `Builder::on_thread_start`. It
    /// installs the probe of the thread that built the runtime, if it had
    /// one, on each worker as it starts, so marks made there count for the
    /// run that started them, and tells the probe
    /// ([`Probe::worker_started`]). `None` when this thread has no probe
    /// (and always without the `testbed` feature).
    #[must_use]
    pub fn worker_start_hook() -> Option<Arc<dyn Fn() + Send + Sync>> {
        let probe = current()?;
        Some(Arc::new(move || {
            PROBE.with(|slot| *slot.borrow_mut() = Some(Arc::clone(&probe)));
            probe.worker_started();
        }))
    }

    /// This run reached `name`.
    #[inline]
    pub fn mark(name: &'static str) {
        if let Some(probe) = current() {
            probe.mark(name);
        }
    }

    /// A point where another thread could run before this task goes on.
    pub async fn preempt_point(name: &'static str) {
        let decision = current().map_or(Preempt::Run, |probe| probe.preempt(name));
        match decision {
            Preempt::Run => {}
            Preempt::Yield => tokio::task::yield_now().await,
            Preempt::Sleep(duration) => tokio::time::sleep(duration).await,
        }
    }
}

#[cfg(not(all(feature = "testbed", not(any(loom, shuttle)))))]
mod imp {
    /// Whether marks and points do anything in this build.
    pub const ENABLED: bool = false;

    /// Nothing to uninstall in this build.
    #[must_use = "the probe is uninstalled when this is dropped"]
    pub struct Installed(());

    /// Installs nothing in this build (no marks or points fire): a testbed
    /// built under a model checker still compiles its worlds.
    pub fn install(_probe: std::sync::Arc<dyn super::Probe>) -> Installed {
        Installed(())
    }

    /// Nothing to inherit in this build.
    #[inline(always)]
    #[must_use]
    pub fn worker_start_hook() -> Option<std::sync::Arc<dyn Fn() + Send + Sync>> {
        None
    }

    /// Nothing in this build.
    #[inline(always)]
    pub fn mark(_name: &'static str) {}

    /// Ready at once in this build.
    #[inline(always)]
    pub async fn preempt_point(_name: &'static str) {}
}

pub use imp::{install, mark, preempt_point, worker_start_hook, Installed, ENABLED};
