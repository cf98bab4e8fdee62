//! Fault injection for the sender world: a scenario's scheduled faults as a
//! timeline of actions, applied by the simulation driver between steps
//! (network faults through turmoil), signalled to a peer host (application
//! faults: stop reading, read slowly, close the socket), or done by the
//! local node (a manual disconnect).
//!
//! A peer acts on a signal between frames and says which socket it acted on
//! (`PeerActed`), so the checkers know exactly which generation a fault
//! touched. Its reader keeps partial frames across wake-ups (a framed
//! reader that is never cancelled mid-frame), so a fault never corrupts the
//! stream it does not close.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

use crate::coverage::WorldMark;
use crate::event::FaultApplied;
use crate::scenario::{FaultKind, ScheduledFault};

/// What a peer host is told to do; it checks between frames, and is woken
/// from a pending read when told.
#[derive(Default)]
pub struct PeerControl {
    /// Sockets to stop reading (kept open).
    pub wedge: AtomicU32,
    /// Sockets to close.
    pub kill: AtomicU32,
    /// Pause between frame reads, once slow.
    pub slow: Mutex<Option<Duration>>,
    /// Delay before reading each frame: real mode's stand-in for link
    /// latency (loopback has none to add without root). Never set in
    /// simulation, where turmoil delays the link itself.
    pub latency: Mutex<Option<Duration>>,
    /// Wakes the peer's sockets.
    pub poke: Notify,
}

impl PeerControl {
    /// Takes one pending request from `counter`, if any.
    pub fn take(counter: &AtomicU32) -> bool {
        counter
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Forgets pending requests (the host restarted).
    pub fn reset(&self) {
        self.wedge.store(0, Ordering::Release);
        self.kill.store(0, Ordering::Release);
    }
}

/// One step of the fault timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The peer stops reading its current socket.
    Wedge,
    /// The peer closes its current socket.
    Kill,
    /// The peer reads one frame per interval from now on.
    Slow(Duration),
    /// The peer host crashes.
    Crash,
    /// The peer host restarts.
    Bounce,
    /// The local node and the peer are partitioned.
    Partition,
    /// The partition heals.
    Repair,
    /// The link gains this latency.
    Latency(Duration),
    /// The local node disconnects the peer's live generation.
    Disconnect,
}

impl Action {
    /// The event that says it was applied.
    #[must_use]
    pub fn applied(self) -> FaultApplied {
        match self {
            Self::Wedge => FaultApplied::Wedge,
            Self::Kill => FaultApplied::Kill,
            Self::Slow(every) => FaultApplied::Slow {
                every_us: every.as_micros() as u64,
            },
            Self::Crash => FaultApplied::Crash,
            Self::Bounce => FaultApplied::Bounce,
            Self::Partition => FaultApplied::Partition,
            Self::Repair => FaultApplied::Repair,
            Self::Latency(latency) => FaultApplied::Latency {
                us: latency.as_micros() as u64,
            },
            Self::Disconnect => FaultApplied::Disconnect,
        }
    }

    /// The coverage mark of applying it.
    #[must_use]
    pub fn mark(self) -> WorldMark {
        match self {
            Self::Wedge => WorldMark::FaultWedge,
            Self::Kill => WorldMark::FaultKill,
            Self::Slow(_) => WorldMark::FaultSlow,
            Self::Crash => WorldMark::FaultCrash,
            Self::Bounce => WorldMark::FaultBounce,
            Self::Partition => WorldMark::FaultPartition,
            Self::Repair => WorldMark::FaultRepair,
            Self::Latency(_) => WorldMark::FaultLatency,
            Self::Disconnect => WorldMark::FaultDisconnect,
        }
    }
}

/// The scenario's faults as `(when, peer, action)`, in time order.
#[must_use]
pub fn timeline(faults: &[ScheduledFault]) -> Vec<(Duration, u64, Action)> {
    let mut steps = Vec::new();
    for fault in faults {
        let (at, peer, lasting) = (fault.at, fault.peer, fault.lasting);
        match fault.kind {
            FaultKind::Wedge => steps.push((at, peer, Action::Wedge)),
            FaultKind::Kill => steps.push((at, peer, Action::Kill)),
            FaultKind::Slow => steps.push((at, peer, Action::Slow(lasting))),
            FaultKind::Latency => steps.push((at, peer, Action::Latency(lasting))),
            FaultKind::CrashBounce => {
                steps.push((at, peer, Action::Crash));
                steps.push((at + lasting, peer, Action::Bounce));
            }
            FaultKind::Partition => {
                steps.push((at, peer, Action::Partition));
                steps.push((at + lasting, peer, Action::Repair));
            }
            FaultKind::Disconnect => steps.push((at, peer, Action::Disconnect)),
        }
    }
    steps.sort_by_key(|(at, peer, _)| (*at, *peer));
    steps
}
