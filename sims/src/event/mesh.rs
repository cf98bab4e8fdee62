//! The mesh world's event fields: the faults its driver applies, which
//! end dialed, a link's frames and ends, why a dial failed, and the hosts
//! that are not nodes. Split from the log itself (`event`), which holds
//! every world's events.

use lanesim_target::node::{DialFailure as Failed, Origin};
use serde::Serialize;

/// A host on the mesh that is not a node, by what it does (its name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Intruder {
    /// `spender<N>`: holds all but the last byte of a large frame.
    Spender,
    /// `trickler<N>`: sends a frame's body a byte at a time.
    Trickler,
    /// Any other name.
    Other,
}

impl Intruder {
    /// The intruder a generation's node name is.
    #[must_use]
    pub fn named(name: &str) -> Self {
        if name.starts_with("spender") {
            Self::Spender
        } else if name.starts_with("trickler") {
            Self::Trickler
        } else {
            Self::Other
        }
    }
}

/// Why a dial failed ([`DialError`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DialFailure {
    Timeout,
    Io,
    BadHello,
    BadName,
    Unauthenticated,
}

impl From<Failed> for DialFailure {
    fn from(error: Failed) -> Self {
        match error {
            Failed::Timeout => Self::Timeout,
            Failed::Io => Self::Io,
            Failed::BadHello => Self::BadHello,
            Failed::BadName => Self::BadName,
            Failed::Unauthenticated => Self::Unauthenticated,
        }
    }
}

/// Which end dialed a mesh connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Dialed,
    Accepted,
}

impl From<Origin> for Side {
    fn from(origin: Origin) -> Self {
        match origin {
            Origin::Dialed => Self::Dialed,
            Origin::Accepted => Self::Accepted,
        }
    }
}

/// A mesh link's control frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkMsg {
    Link,
    Exit,
}

/// Which end of a mesh link a `noconnection` was delivered on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkSide {
    /// The node that made the link.
    Maker,
    /// The node the LINK reached.
    Learner,
}

/// A mesh fault the driver applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MeshFaultApplied {
    /// The node's host crashed.
    Crash { node: u64 },
    /// The node's host restarted.
    Bounce { node: u64 },
    /// Segments between `a` and `b` are held.
    Partition { a: u64, b: u64 },
    /// ... and released.
    Heal { a: u64, b: u64 },
    /// Segments from `from` to `to` are dropped.
    HalfOpen { from: u64, to: u64 },
    /// ... no longer.
    HalfOpenHealed { from: u64, to: u64 },
    /// `a` disconnected its live generation to `b`.
    Kill { a: u64, b: u64 },
    /// The link gained latency.
    Latency { a: u64, b: u64, us: u64 },
    /// The latency went.
    LatencyEnd { a: u64, b: u64 },
    /// A squatter dials `a` as `b`.
    Squat { a: u64, b: u64 },
    /// An insider (with the cookie, keeping its heartbeat) dials `a` as `b`.
    Claim { a: u64, b: u64 },
    /// An impostor without the cookie is to dial `a` as `b`.
    Impostor { a: u64, b: u64 },
    /// Spenders are to hold most of `node`'s frame budget for `us`.
    Spend {
        node: u64,
        us: u64,
        before_hello: bool,
    },
    /// Flooders are to open half-open handshakes to `node` from `hosts`
    /// addresses for `us` (saying hello on each first, if `hello`).
    Flood {
        node: u64,
        us: u64,
        hosts: u64,
        hello: bool,
    },
    /// `a` and `b` dropped their connection and redial each other now.
    CrossDial { a: u64, b: u64 },
    /// `node` stopped reading what `peer` sends.
    Wedge { node: u64, peer: u64 },
    /// ... and reads it again.
    Unwedge { node: u64, peer: u64 },
    /// `node` reads what `peer` sends once per `every_us`.
    Slow { node: u64, peer: u64, every_us: u64 },
    /// ... and at full speed again.
    SlowEnd { node: u64, peer: u64 },
    /// Every stream dialed to `node` is reset before it is accepted.
    Resets { node: u64 },
    /// ... no longer; `reset` streams were.
    ResetsEnd { node: u64, reset: u64 },
    /// `node` has no descriptors: its accepts and dials fail with `EMFILE`.
    Exhaust { node: u64 },
    /// ... it has again; `accepts` accepts and `dials` dials failed.
    ExhaustEnd { node: u64, accepts: u64, dials: u64 },
    /// The spender is to trickle a frame of `frame` body bytes (a
    /// node-protocol frame's payload if `node_frame`) to `node` for up to
    /// `us`.
    Trickle {
        node: u64,
        us: u64,
        frame: u64,
        node_frame: bool,
    },
    /// `a` disconnected `b` and dials it again at an address where
    /// `answerer` answers (`None`: the stranger, a host without the
    /// cookie).
    Misdial {
        a: u64,
        b: u64,
        answerer: Option<u64>,
    },
}

/// How a misdialed dial ended, as its node's `dial` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MisdialOutcome {
    /// The dial failed: the node refused what answered.
    Refused,
    /// The dial returned a connection to the host that answered: the node
    /// registered another host under the name it dialed.
    Registered,
    /// The dial returned a connection to the node named (one that reached
    /// it the right way meanwhile, joined or found live).
    Elsewhere,
}
