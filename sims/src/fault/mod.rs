//! Fault injection for the sender world: a scenario's scheduled faults as a
//! timeline of actions, applied by the simulation driver between steps
//! (network faults through turmoil) or signalled to a peer host (application
//! faults: stop reading, read slowly, close the socket).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

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
}

impl Action {
    /// The name in `Fault` events.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Wedge => "wedge",
            Self::Kill => "kill",
            Self::Slow(_) => "slow",
            Self::Crash => "crash",
            Self::Bounce => "bounce",
            Self::Partition => "partition",
            Self::Repair => "repair",
            Self::Latency(_) => "latency",
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
        }
    }
    steps.sort_by_key(|(at, peer, _)| (*at, *peer));
    steps
}

/// Whether a fault kind stops a peer from reading what reaches it (so a
/// written frame may never be read): the checker's notion of an unhealthy
/// peer.
#[must_use]
pub fn stops_reading(action: &str) -> bool {
    ["wedge", "kill", "crash", "partition"].contains(&action)
}
