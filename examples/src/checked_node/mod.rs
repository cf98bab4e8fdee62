//! A node (outbound sender plus its own TCP connection layer) written the
//! ordinary production way, and checked by lanesim only through its public
//! target API ([`CheckedNode`], a [`lanesim_target::node::NodeTarget`]).
//!
//! Model. A node keeps at most one live connection per peer node; each is a
//! *generation* ([`connection::Link`]) with a `down` flag that turns true
//! once, a notify for the tasks that watch it, and a `tokio::sync::Mutex`
//! around its write half. Every write goes through one path: check `down`
//! (refuse if down), take the writer lock, write the whole frame under a
//! write deadline, and take the generation down if the write fails or
//! misses its deadline. Around that:
//!
//! - [`handshake`]: the cookie handshake on every new stream, dialing and
//!   accepting, and the node-name rule;
//! - [`table`]: the live generation per peer, generation numbers, and the
//!   tie-break between two live streams of one pair;
//! - [`admit`]: a proven stream becomes a registered generation (the up
//!   report, its reader, its heartbeat);
//! - [`reader`]: one task per generation reading inbound frames; it takes
//!   the generation down on end of stream, a read error, an oversized or
//!   too slow frame, or a heartbeat tick of silence;
//! - [`heartbeat`]: one timer task per generation writing keepalives
//!   through the same write path as every frame;
//! - [`queue`]: per destination node a data queue and a control queue
//!   (controls pinned to the generation they were enqueued for), drained by
//!   one task per node;
//! - [`accept`]: the accept loop;
//! - [`node`]: the [`lanesim_target::node::Node`] the world drives;
//! - [`shared`] and [`stats`]: what all of a node's tasks share, and its
//!   counters.

mod accept;
mod admit;
mod connection;
mod handshake;
mod heartbeat;
mod node;
mod queue;
mod reader;
mod shared;
mod stats;
mod table;
#[cfg(test)]
mod tests;

pub use node::CheckedNode;
