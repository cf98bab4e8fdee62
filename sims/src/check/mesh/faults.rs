//! The faults as the mesh model records them: a lasting fault on a pair
//! ([`Lasting`]: what it silences, [`Silence`], and how it delays what was
//! already sent, [`Lag`]), and the records of the others (which nodes a
//! fault touches, restarts, faults on a node's accepts, exhaustions, and
//! cross-dials, which a fault makes or the first dials happen to be).
//! Types only: [`super::model`] fills them in, the contracts read them.

use std::time::Duration;

/// What a lasting fault does to what the two ends hear of each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Silence {
    /// Nothing crosses either way (a held partition).
    Both,
    /// Nothing crosses from `a` to `b` (a half-open link).
    FromAToB,
    /// Everything still crosses (latency, a wedged or slow reader).
    None,
}

/// How a lasting fault delays what was already sent: bytes a peer wrote
/// before it fell silent (a crash) still reach the other end this late.
#[derive(Clone, Copy, Debug)]
pub(super) enum Lag {
    /// Delivered as on a healthy link (within the slack).
    None,
    /// What the other end sends to `reader` (to either end, if `None`) is
    /// held back until the fault ends: a backlog written before a crash is
    /// read then (a slow or wedged reader; a partition, whose segments are
    /// delivered on heal).
    HeldUntilEnd { reader: Option<u64> },
    /// Each way carries this much more latency.
    Latency(Duration),
}

/// A lasting fault on a pair.
#[derive(Clone, Copy, Debug)]
pub(super) struct Lasting {
    pub(super) a: u64,
    pub(super) b: u64,
    pub(super) silence: Silence,
    pub(super) lag: Lag,
    pub(super) start: Duration,
    pub(super) end: Option<Duration>,
    /// The record that began it.
    pub(super) cause: usize,
}

impl Lasting {
    /// Whether `to` hears nothing from `from` while it lasts.
    pub(super) fn silences(&self, from: u64, to: u64) -> bool {
        match self.silence {
            Silence::Both => (from, to) == (self.a, self.b) || (from, to) == (self.b, self.a),
            Silence::FromAToB => (from, to) == (self.a, self.b),
            Silence::None => false,
        }
    }
}

/// Two nodes that dialed each other at once (a cross-dial, or first dials
/// in the same instant).
#[derive(Clone, Copy, Debug)]
pub(super) struct CrossDial {
    pub(super) record: usize,
    pub(super) at: Duration,
    pub(super) a: u64,
    pub(super) b: u64,
}

/// A restart of a node's host.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounce {
    pub(super) node: u64,
    pub(super) at: Duration,
}

/// A fault and the nodes it touches (`a == b`: one node).
#[derive(Clone, Copy, Debug)]
pub(super) struct Touch {
    pub(super) record: usize,
    pub(super) at: Duration,
    pub(super) a: u64,
    pub(super) b: u64,
}

/// A fault on one node's accepts and dials.
#[derive(Clone, Copy, Debug)]
pub(super) struct AcceptFault {
    pub(super) node: u64,
    pub(super) start: Duration,
    /// `None` while open.
    pub(super) end: Option<Duration>,
}

/// An ended exhaustion of a node's descriptors.
#[derive(Clone, Copy, Debug)]
pub(super) struct Exhaustion {
    pub(super) record: usize,
    pub(super) node: u64,
    /// How long it lasted.
    pub(super) lasted: Duration,
    /// Accepts that failed meanwhile.
    pub(super) accepts: u64,
}
