//! A sender target over lanesim's connection layer: for a sender you have
//! without the connection layer it was written for (the shape of beamr's
//! `DistSender`, which uses its `ConnectionManager` through
//! `get_connection`, `is_down`, `write_raw`, `mark_down_*`).
//!
//! Model. The world starts lanesim's own connection layer (dials, accepts,
//! hellos, read loops, heartbeats, the table of generations) and hands your
//! sender a [`ConnectionLayer`] over it: look a node's live connection up,
//! ask a connection whether it is down, write a whole frame to it (an I/O
//! error takes it down with `WriteError`), take it down with a reason. Your
//! sender does the rest: its lanes, its drain, its deadlines, pinning.
//! Together they run in the sender and mesh worlds as one node.
//!
//! A target offers this by returning a [`SenderTarget`] from
//! `Targets::sender` (and no `Targets::node`). The connection layer's
//! reports (up, down, frames, its table) come from lanesim's; the drain's
//! account and the counters are your sender's to report
//! ([`SenderCapabilities`]).

use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::node::{
    BoxFuture, Connection, ControlOutcome, DataOutcome, DownReason, NodeFixed, NodeReports,
    Runtime, SenderStats,
};
use crate::probe::Sites;

/// One generation of the connection layer, as a sender uses it.
pub trait LayerConnection: Connection {
    /// Writes `frame` whole (under the connection's writer lock). A write
    /// to a connection already down is refused; an I/O error takes the
    /// connection down (`WriteError`). No deadline: bound it yourself.
    fn write_raw<'a>(&'a self, frame: &'a [u8]) -> BoxFuture<'a, io::Result<()>>;

    /// Takes the connection down with `reason` (once; the first reason
    /// wins): its read loop ends, its down is reported.
    fn mark_down(&self, reason: DownReason);

    /// The same connection as the world's handle ([`crate::node::Conn`]).
    fn as_connection(self: Arc<Self>) -> Arc<dyn Connection>;
}

/// A generation handle of the layer, cheap to clone.
pub type LayerConn = Arc<dyn LayerConnection>;

/// The connection layer a sender is built over.
pub trait ConnectionLayer: Send + Sync {
    /// `node`'s live connection, if it has one (never dials).
    fn get_connection(&self, node: &str) -> Option<LayerConn>;
}

/// Everything a sender is started from.
pub struct SenderSetup {
    /// The connection layer.
    pub layer: Arc<dyn ConnectionLayer>,
    /// Where to run (see [`Runtime`]): the world's runtime, or, in real
    /// mode, a runtime of your own as production runs a sender.
    pub runtime: Runtime,
    /// Bound on one frame's write.
    pub write_timeout: Duration,
    /// Data frames the sender may hold queued.
    pub data_capacity: usize,
    /// Controls the sender may hold queued.
    pub control_capacity: usize,
    /// Where to report the drain's account, if you do
    /// ([`SenderCapabilities::drain`]; the connection layer makes the up,
    /// down and frame reports).
    pub reports: NodeReports,
}

impl std::fmt::Debug for SenderSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SenderSetup")
            .field("runtime", &self.runtime)
            .field("write_timeout", &self.write_timeout)
            .field("data_capacity", &self.data_capacity)
            .field("control_capacity", &self.control_capacity)
            .finish_non_exhaustive()
    }
}

/// A started sender. Dropping it ends it.
pub trait Sender: Send + Sync {
    /// Offers a data frame (already framed) for `node`. Never waits. A
    /// sender that does not say what it did with a frame answers `Queued`.
    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome;

    /// Offers a control (already framed) pinned to `pinned`. Never waits.
    fn enqueue_control(&self, pinned: &LayerConn, frame: Arc<[u8]>) -> ControlOutcome;

    /// Stops the sender.
    fn shutdown(&self);

    /// The counters ([`SenderCapabilities::stats`]).
    fn stats(&self) -> Option<SenderStats> {
        None
    }
}

/// What a sender target reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderCapabilities {
    /// It reports the drain's account of every frame.
    pub drain: bool,
    /// [`Sender::stats`] returns its counters.
    pub stats: bool,
    /// The values it does not take from [`SenderSetup`] (its write
    /// deadline and queue depths; the layer's heartbeat and largest frame
    /// are lanesim's, which take the world's).
    pub fixed: NodeFixed,
    /// Contracts it breaks knowingly, with the reason ([`crate::hazard`]):
    /// still checked; a run that breaks only these is reported as an
    /// accepted hazard, never as a pass. Usually empty.
    pub hazards: &'static [crate::hazard::Hazard],
    /// The marks and preemption points its code uses.
    pub sites: Sites,
}

/// A sender implementation, run over lanesim's connection layer.
pub trait SenderTarget: Send + Sync {
    /// What it reports.
    fn capabilities(&self) -> SenderCapabilities;

    /// Starts a sender over `setup.layer`, inside the world's runtime.
    ///
    /// # Errors
    /// Why it could not start (the run is reported as a crash of the
    /// target, with this text).
    fn start(&self, setup: SenderSetup) -> Result<Box<dyn Sender>, String>;
}
