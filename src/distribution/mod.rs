//! beamr's distribution layer, as much of it as the sender needs: the frame
//! codec, node identity, one connection generation ([`DistConnection`]), the
//! table of them ([`ConnectionManager`]), the outbound [`DistSender`], and a
//! model of the links the down hook breaks ([`LinkTable`]).
//!
//! The contracts (docs/contracts.md) and where each is kept:
//! DC-1 send-or-down and DC-2 generation pinning in `sender`; S3 down exactly
//! once in `connection`; redial liveness and monotone generations in
//! `manager`; DC-3 `noconnection` for every link of a downed generation in
//! `links`; DC-5 FIFO from the single drain plus the per-connection writer
//! mutex; S9 independence across peers from each lane's depth per node
//! (`depths`) and the drain's turns per node (`turns`).

mod auth;
mod connection;
mod depths;
pub mod frame;
mod links;
mod manager;
mod node;
mod sender;
mod turns;

pub use auth::{Cookie, CookieError, MAX_COOKIE};
pub use connection::{DistConnection, DownEvent, DownReason};
pub use links::{Link, LinkTable};
pub use manager::{
    ConnectionManager, DialError, InboundCap, InboundFrame, InboundStats, ManagerConfig, Origin,
    Registered, SlotView, UpEvent, WeakConnectionManager, CHALLENGE, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FRAME_BUDGET, DEFAULT_FRAME_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HANDSHAKES,
    DEFAULT_TICK, HELLO, PROOF,
};
pub use node::{NameError, NodeName, MAX_NODE_NAME};
pub use sender::{
    ControlEnqueueError, ControlOutbound, DataOutbound, DistSender, Enqueued, SenderConfig,
    SenderConfigError, SenderLane, SenderObserver, SenderStats, WriteOutcome, CONTROL_QUEUE_CAP,
    DATA_QUEUE_CAP, WRITE_TIMEOUT,
};
