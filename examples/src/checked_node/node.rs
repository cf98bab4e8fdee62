//! The node the worlds drive: [`CheckedNode`] (the target) starts a
//! [`CheckedNodeHandle`] per run, whose methods are the API's `Node`:
//! dials (one at a time per peer, returning a live generation if there is
//! one), the accept loop, the table's view, disconnects, the sender's
//! queues and its counters. Dropping the handle ends the node's tasks and
//! closes its connections.

use std::sync::Arc;

use lanesim_target::net::Listener;
use lanesim_target::node::{
    BoxFuture, Conn, ControlOutcome, DataOutcome, DialFailure, DownReason, Node, NodeCapabilities,
    NodeFixed, NodeSetup, NodeTarget, Origin, SenderStats,
};
use lanesim_target::probe::Sites;

use super::admit::admit;
use super::shared::Shared;
use super::{accept, handshake, queue};

/// The target: a [`CheckedNodeHandle`] per node and run.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckedNode;

impl NodeTarget for CheckedNode {
    fn capabilities(&self) -> NodeCapabilities {
        NodeCapabilities {
            hazards: &[],
            accepts: true,
            heartbeat: true,
            // A frame deadline, but no budget for partly read frames.
            frame_budget: false,
            frame_deadline: true,
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
        Ok(Box::new(CheckedNodeHandle::start(setup)))
    }
}

/// A running node.
pub struct CheckedNodeHandle {
    shared: Arc<Shared>,
}

impl CheckedNodeHandle {
    /// Starts a node from `setup` (inside its runtime).
    #[must_use]
    pub fn start(setup: NodeSetup) -> Self {
        Self {
            shared: Arc::new(Shared::new(setup)),
        }
    }
}

impl Drop for CheckedNodeHandle {
    fn drop(&mut self) {
        self.shared.stop();
    }
}

impl Node for CheckedNodeHandle {
    fn dial<'a>(
        &'a self,
        node: &'a str,
        addr: &'a str,
    ) -> BoxFuture<'a, Result<Conn, DialFailure>> {
        Box::pin(async move {
            let shared = &self.shared;
            if !handshake::valid_name(node.as_bytes()) || node == shared.name {
                return Err(DialFailure::BadName);
            }
            let turn = shared.dial_turn(node);
            let _turn = turn.lock().await;
            if let Some(live) = shared.table.live(node) {
                return Ok(live as Conn);
            }
            let stream = handshake::dial(shared, node, addr).await?;
            Ok(admit(shared, node, Origin::Dialed, stream) as Conn)
        })
    }

    fn serve(&self, listener: Box<dyn Listener>) {
        accept::serve(&self.shared, listener);
    }

    fn connection(&self, node: &str) -> Option<Conn> {
        self.shared.table.live(node).map(|link| link as Conn)
    }

    fn disconnect(&self, node: &str) {
        if let Some(link) = self.shared.table.live(node) {
            link.mark_down(DownReason::ManualDisconnect);
        }
    }

    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        queue::enqueue(&self.shared, node, frame)
    }

    fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome {
        queue::enqueue_control(&self.shared, pinned, frame)
    }

    fn shutdown(&self) {
        queue::shutdown(&self.shared);
    }

    fn stats(&self) -> Option<SenderStats> {
        Some(self.shared.stats.snapshot())
    }

    fn slot(&self, node: &str) -> Option<(u64, bool)> {
        self.shared.table.slot(node)
    }
}
