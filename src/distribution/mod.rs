//! beamr's distribution layer, as much of it as the sender needs: reading
//! frames from a stream under a budget, node identity, one connection
//! generation ([`DistConnection`]), the table of them
//! ([`ConnectionManager`]), the outbound [`DistSender`], and a model of the
//! links the down hook breaks ([`LinkTable`]).
//!
//! The protocol is `lanesim_target`'s, used as any node target uses it: the
//! frame format (`lanesim_target::wire`), the handshake's frames and proofs
//! (`lanesim_target::handshake`) and the down reasons ([`DownReason`], which
//! is `lanesim_target::node::DownReason`, re-exported because this crate's
//! API speaks it). What is this node's own is here: the stream reader and
//! its budget (`frame`), the cookie (`Cookie`), the steps of each end of the
//! handshake (`manager`).
//!
//! The contracts (docs/contracts.md) and where each is kept:
//! DC-1 send-or-down and DC-2 generation pinning in `sender`; S3 down exactly
//! once in `connection`; redial liveness and monotone generations in
//! `manager`; DC-3 `noconnection` for every link of a downed generation in
//! `links`; DC-5 FIFO from the single drain plus the per-connection writer
//! mutex; S9 independence across peers from each lane's depth per node
//! (`depths`) and the drain's turns per node (`turns`).

mod connection;
mod cookie;
mod depths;
pub mod frame;
mod links;
mod manager;
mod node;
mod sender;
mod turns;

pub use connection::{DistConnection, DownEvent};
pub use cookie::{Cookie, CookieError, MAX_COOKIE};
pub use lanesim_target::node::DownReason;
pub use links::{Link, LinkTable};
pub use manager::{
    fit_caps, lingering_room, ConnectionManager, DialError, Fitted, InboundCap, InboundFrame,
    InboundStats, ManagerConfig, Origin, Registered, SlotView, Source, UpEvent,
    WeakConnectionManager, DEFAULT_CONNECT_TIMEOUT, DEFAULT_FRAME_BUDGET, DEFAULT_FRAME_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_CONNECTIONS_PER_SOURCE, DEFAULT_MAX_HANDSHAKES,
    DEFAULT_MAX_HANDSHAKES_PER_SOURCE, DEFAULT_TICK, LINGERING, MIN_CONNECTIONS,
    RESERVED_DESCRIPTORS,
};
pub use node::{NameError, NodeName, MAX_NODE_NAME};
pub use sender::{
    ControlEnqueueError, ControlOutbound, DataOutbound, DistSender, Enqueued, SenderConfig,
    SenderConfigError, SenderLane, SenderObserver, SenderStats, WriteOutcome, CONTROL_QUEUE_CAP,
    DATA_QUEUE_CAP, WRITE_TIMEOUT,
};
