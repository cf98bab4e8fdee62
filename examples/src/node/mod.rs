//! A node: a sender and the connection layer under it, written from a short
//! spec.
//!
//! Design:
//!
//! - One table, `Mutex<State>`, maps a peer's name to its live generation
//!   ([`Link`](link::Link)) and keeps the per-peer generation counter. A generation is
//!   marked down and removed from the table in the same critical section,
//!   so the table never holds a down generation for long and a generation
//!   goes down exactly once. No lock is held across an `.await`, and no
//!   report is made with a lock held.
//! - Each generation has its own outbound queue (a `Mutex<VecDeque>` woken
//!   by a `Notify`) and its own writer task owning the socket's write half.
//!   Data for a node goes to the queue of the node's live generation at
//!   enqueue time; a control goes to the queue of the generation it is
//!   pinned to, so it can only ever be written to that generation's socket.
//!   Writers are independent, so a wedged peer stalls nobody else; every
//!   write carries the write deadline.
//! - Each generation has a reader task that decodes frames, reports them,
//!   and (with a heartbeat) takes the generation down when nothing at all
//!   was read for a whole tick. The writer sends keepalives at a third of
//!   the tick while idle.
//! - Queue capacities are the sender's: one count of queued data frames and
//!   one of queued controls across all generations.
//! - Cross-dials: of two sockets between the same pair, the one dialed by
//!   the node whose name sorts lower is kept; when the same node dialed both,
//!   the newer one is kept (the dialer only redials once it gave up on the
//!   old one). Both ends evaluate the same rule.
//!
//! The files, one concept each:
//!
//! - `mod.rs`: the target and the handle a started node is.
//! - `shared.rs`: `Shared`, the node's state: its table, its settings, its
//!   signals, its capacities' counts and its counters.
//! - `link.rs`: one generation (`Link`), its queue and the gate that orders
//!   its up and down reports.
//! - `generations.rs`: registering a socket as a generation (with the
//!   cross-dial tie-break), taking a generation down, and the up and down
//!   reports.
//! - `connect.rs`: where sockets come from: dialing, the accept loop and an
//!   accepted socket's handshake.
//! - `queues.rs`: the sender's side of the queues: enqueueing under the
//!   capacities, shutdown, and the account of every frame that leaves a
//!   queue without being written.
//! - `reader.rs`: a generation's reader task.
//! - `writer.rs`: a generation's writer task.
//! - `sync.rs`: the lock and the flag wait every part uses.

mod connect;
mod generations;
mod link;
mod queues;
mod reader;
mod shared;
mod sync;
#[cfg(test)]
mod tests;
mod writer;

use std::sync::Arc;

use lanesim_target::net::Listener;
use lanesim_target::node::{
    BoxFuture, Conn, Connection, ControlOutcome, DataOutcome, DialFailure, Node, NodeCapabilities,
    NodeFixed, NodeSetup, NodeTarget, SenderStats,
};
use lanesim_target::probe::Sites;

use shared::Shared;
use sync::lock;

/// The node target.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExampleNode;

impl NodeTarget for ExampleNode {
    fn capabilities(&self) -> NodeCapabilities {
        NodeCapabilities {
            hazards: &[],
            accepts: true,
            heartbeat: true,
            // This node bounds neither what partly read frames hold nor
            // how long a frame's body may take.
            frame_budget: false,
            frame_deadline: false,
            fixed: NodeFixed::default(),
            drain: true,
            stats: true,
            table: true,
            links: false,
            // No inbound caps: it does not fit a descriptor limit.
            descriptors: false,
            sites: Sites::default(),
        }
    }

    fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
        let shared = Shared::new(setup)?;
        Ok(Box::new(ExampleNodeHandle { shared }))
    }
}

// ---------------------------------------------------------------------------
// The handle

/// A started node; dropping it ends it.
struct ExampleNodeHandle {
    shared: Arc<Shared>,
}

impl Drop for ExampleNodeHandle {
    fn drop(&mut self) {
        self.shared.stop();
    }
}

impl Node for ExampleNodeHandle {
    fn dial<'a>(
        &'a self,
        node: &'a str,
        addr: &'a str,
    ) -> BoxFuture<'a, Result<Conn, DialFailure>> {
        Box::pin(self.shared.dial(node, addr))
    }

    fn serve(&self, listener: Box<dyn Listener>) {
        let shared = Arc::clone(&self.shared);
        self.shared.handle.spawn(shared.accept_loop(listener));
    }

    fn connection(&self, node: &str) -> Option<Conn> {
        self.shared.live(node).map(|link| link as Conn)
    }

    fn disconnect(&self, node: &str) {
        self.shared.disconnect(node);
    }

    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        self.shared.enqueue(node, frame)
    }

    fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome {
        self.shared.enqueue_control(pinned, frame)
    }

    fn shutdown(&self) {
        self.shared.shutdown();
    }

    fn stats(&self) -> Option<SenderStats> {
        Some(self.shared.counters.snapshot())
    }

    fn slot(&self, node: &str) -> Option<(u64, bool)> {
        lock(&self.shared.state)
            .live
            .get(node)
            .map(|link| (link.generation, link.is_down()))
    }
}
