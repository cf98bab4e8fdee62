//! A node made of lanesim's connection layer and a user's sender: what the
//! worlds run for a target that offers a sender alone (`Targets::sender`).
//!
//! The layer (lanesim's `ConnectionManager`) dials, accepts, reads and
//! reports ups, downs and frames; the user's sender enqueues and drains
//! over it through `ConnectionLayer`. The node's capabilities are the
//! layer's (accepts, heartbeat, table) and the sender's (its drain account,
//! its counters); its sites are both.

use std::sync::Arc;

use lanesim_target::layer::{LayerConn, Sender, SenderCapabilities, SenderSetup};
use lanesim_target::net::Listener;
use lanesim_target::node::{
    BoxFuture, Conn, ControlOutcome, DataOutcome, DialFailure, Link, Node, NodeCapabilities,
    NodeFixed, NodeSetup, NodeTarget, SenderStats,
};
use lanesim_target::probe::Sites;
use lanesim_target::Targets;

use super::lanesim::node::{layer_conn, LanesimNode, Started0, LAYER_SITES};

/// The composed node target: `targets`' sender over lanesim's layer.
pub struct Composed {
    targets: Arc<dyn Targets>,
    layer: LanesimNode,
    /// Both components' sites, leaked once (a `Sites` holds `'static`
    /// slices).
    sites: Sites,
}

impl Composed {
    /// The node of `targets`, whose `sender()` is `Some`.
    #[must_use]
    pub fn new(targets: Arc<dyn Targets>) -> Self {
        let layer = LanesimNode::default();
        let own = LAYER_SITES;
        let theirs = targets
            .sender()
            .map(|sender| sender.capabilities().sites)
            .unwrap_or_default();
        let join =
            |a: &'static [&'static str], b: &'static [&'static str]| -> &'static [&'static str] {
                Box::leak(
                    a.iter()
                        .chain(b)
                        .copied()
                        .collect::<Vec<_>>()
                        .into_boxed_slice(),
                )
            };
        let sites = Sites {
            marks: join(own.marks, theirs.marks),
            points: join(own.points, theirs.points),
            roles: Box::leak(
                own.roles
                    .iter()
                    .chain(theirs.roles)
                    .copied()
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            ),
        };
        Self {
            targets,
            layer,
            sites,
        }
    }

    fn sender_capabilities(&self) -> SenderCapabilities {
        self.targets
            .sender()
            .expect("composed only for a target with a sender")
            .capabilities()
    }
}

impl NodeTarget for Composed {
    fn capabilities(&self) -> NodeCapabilities {
        let sender = self.sender_capabilities();
        NodeCapabilities {
            drain: sender.drain,
            stats: sender.stats,
            hazards: sender.hazards,
            fixed: NodeFixed {
                write_timeout: sender.fixed.write_timeout,
                data_capacity: sender.fixed.data_capacity,
                control_capacity: sender.fixed.control_capacity,
                ..NodeFixed::default()
            },
            sites: self.sites,
            ..self.layer.capabilities()
        }
    }

    fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
        let target = self
            .targets
            .sender()
            .expect("composed only for a target with a sender");
        let (runtime, reports) = (setup.runtime.clone(), setup.reports.clone());
        let (data_capacity, control_capacity, write_timeout) = (
            setup.data_capacity,
            setup.control_capacity,
            setup.write_timeout,
        );
        let layer = self.layer.start_layer(setup)?;
        let sender = target.start(SenderSetup {
            layer: layer.layer(),
            runtime,
            write_timeout,
            data_capacity,
            control_capacity,
            reports,
        })?;
        Ok(Box::new(Both { layer, sender }))
    }
}

/// The started pair.
struct Both {
    layer: Started0,
    sender: Box<dyn Sender>,
}

impl Node for Both {
    fn dial<'a>(
        &'a self,
        node: &'a str,
        addr: &'a str,
    ) -> BoxFuture<'a, Result<Conn, DialFailure>> {
        self.layer.dial(node, addr)
    }

    fn serve(&self, listener: Box<dyn Listener>) {
        self.layer.serve(listener);
    }

    fn connection(&self, node: &str) -> Option<Conn> {
        self.layer.connection(node)
    }

    fn disconnect(&self, node: &str) {
        self.layer.disconnect(node);
    }

    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        self.sender.enqueue(node, frame)
    }

    fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome {
        let pinned: LayerConn = layer_conn(pinned).expect("a connection the layer handed out");
        self.sender.enqueue_control(&pinned, frame)
    }

    fn shutdown(&self) {
        self.sender.shutdown();
    }

    fn stats(&self) -> Option<SenderStats> {
        self.sender.stats()
    }

    fn slot(&self, node: &str) -> Option<(u64, bool)> {
        self.layer.slot(node)
    }

    fn link(&self, over: &Conn, local: u64, remote: u64) -> Option<Link> {
        self.layer.link(over, local, remote)
    }

    fn unlink(&self, node: &str, link: &Link) -> bool {
        self.layer.unlink(node, link)
    }
}
