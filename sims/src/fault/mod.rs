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

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;

use lanesim_target::wire::HEADER_LEN;

use crate::coverage::WorldMark;
use crate::event::{FaultApplied, PeerAct};
use crate::scenario::{FaultKind, OversizeSplit, ScheduledFault, TORN_FRAME_LEN};

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
    /// Frames to write the local node, in order, each on the first socket
    /// that looks (hostile-frame faults).
    pub hostile: Mutex<VecDeque<Hostile>>,
    /// Wakes the peer's sockets.
    pub poke: Notify,
}

/// What a hostile-frame fault has a peer write the local node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hostile {
    /// A well-formed frame whose body is exactly the local maximum.
    MaxFrame,
    /// A header claiming one byte more than the local maximum, the excess
    /// in the length `split` says.
    Oversize { split: OversizeSplit },
    /// The first `bytes` bytes of a frame, then the socket closed.
    Torn { bytes: u32 },
}

impl Hostile {
    /// The act the peer logs for it.
    #[must_use]
    pub fn act(self) -> PeerAct {
        match self {
            Self::MaxFrame => PeerAct::WroteMaxFrame,
            Self::Oversize { .. } => PeerAct::WroteOversize,
            Self::Torn { bytes } => PeerAct::Tore { bytes },
        }
    }

    /// The bytes to write, for a local node whose inbound maximum is `max`.
    /// Built by hand, not with the production `encode`: the input a check
    /// judges the decoder by must not share a bug with the code under test
    /// (and `encode` cannot write a header that lies about its length).
    #[must_use]
    pub fn bytes(self, max: u64) -> Vec<u8> {
        let parts = |control: u64, payload: u64| -> Vec<u8> {
            let part = |len: u64| u32::try_from(len).expect("a test maximum fits a header");
            [part(control).to_be_bytes(), part(payload).to_be_bytes()].concat()
        };
        let header = |body: u64| parts(0, body);
        match self {
            Self::MaxFrame => {
                let mut frame = header(max);
                frame.resize(frame.len() + max as usize, 0x5A);
                frame
            }
            Self::Oversize { split } => {
                let (control, payload) = split.lengths(max);
                parts(control, payload)
            }
            Self::Torn { bytes } => {
                let body = TORN_FRAME_LEN - HEADER_LEN as u64;
                let mut frame = header(body);
                frame.resize(TORN_FRAME_LEN as usize, 0x5A);
                frame.truncate(bytes as usize);
                frame
            }
        }
    }
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
        self.hostile
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
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
    /// The peer writes the local node a hostile frame.
    Hostile(Hostile),
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
            Self::Hostile(Hostile::MaxFrame) => FaultApplied::MaxFrame,
            Self::Hostile(Hostile::Oversize { .. }) => FaultApplied::OversizeFrame,
            Self::Hostile(Hostile::Torn { bytes }) => FaultApplied::TornFrame { bytes },
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
            Self::Hostile(Hostile::MaxFrame) => WorldMark::FaultMaxFrame,
            Self::Hostile(Hostile::Oversize { .. }) => WorldMark::FaultOversizeFrame,
            Self::Hostile(Hostile::Torn { .. }) => WorldMark::FaultTornFrame,
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
            FaultKind::MaxFrame => steps.push((at, peer, Action::Hostile(Hostile::MaxFrame))),
            FaultKind::OversizeFrame => {
                let split = fault.split;
                steps.push((at, peer, Action::Hostile(Hostile::Oversize { split })));
            }
            FaultKind::TornFrame => steps.push((
                at,
                peer,
                Action::Hostile(Hostile::Torn { bytes: fault.bytes }),
            )),
        }
    }
    steps.sort_by_key(|(at, peer, _)| (*at, *peer));
    steps
}
