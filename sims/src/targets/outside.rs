//! Any target seen from outside only: its lanes report no lifecycle and no
//! counters, its node no drain account, no counters and no table. What the
//! testbed then decides is what it decides for a target that offers nothing
//! optional; run on lanesim's own components, it is how the testbed proves
//! that deciding from outside raises no false alarm and still catches the
//! planted bugs of the contracts it decides
//! (`sims/tests/targets.rs`, `outside_*`).

use std::sync::Arc;

use lanesim_target::lanes::{
    Handler, LaneEvents, LaneExit, LaneId, LaneReports, LaneStats, Lanes, LanesCapabilities,
    LanesSetup, LanesTarget,
};
use lanesim_target::net::Listener;
use lanesim_target::node::{
    BoxFuture, Conn, ControlOutcome, DataOutcome, DialFailure, Down, Generation, Node,
    NodeCapabilities, NodeEvents, NodeReports, NodeSetup, NodeTarget, SenderStats, Up,
};
use lanesim_target::Targets;

/// Lifecycle reports go nowhere.
struct Deaf;

impl LaneEvents for Deaf {
    fn created(&self, _: u64, _: LaneId) {}
    fn closed(&self, _: u64, _: LaneId, _: LaneExit) {}
}

struct OutsideLanes<'a>(&'a dyn LanesTarget);

struct Counterless(Box<dyn Lanes>);

impl Lanes for Counterless {
    fn route(
        &self,
        item: lanesim_target::lanes::Item,
        capacity: Option<usize>,
    ) -> Result<usize, lanesim_target::lanes::Item> {
        self.0.route(item, capacity)
    }

    fn stats(&self) -> Option<LaneStats> {
        None
    }
}

impl LanesTarget for OutsideLanes<'_> {
    fn capabilities(&self) -> LanesCapabilities {
        LanesCapabilities {
            lifecycle: false,
            stats: false,
            ..self.0.capabilities()
        }
    }

    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        let handler = setup.handler.clone();
        // The target's lane ids are dropped: the world infers lanes from
        // the tasks handlers run on.
        let blind = Handler::new(move |_, item| handler.call(item));
        let built = self.0.build(LanesSetup {
            handler: blind,
            reports: LaneReports::new(Arc::new(Deaf)),
            ..setup
        })?;
        Ok(Box::new(Counterless(built)))
    }
}

/// A node's reports with the drain's account and the table cut out.
struct Filtered(NodeReports);

impl NodeEvents for Filtered {
    fn up(&self, up: Up<'_>) {
        self.0.up(up);
    }

    fn down(&self, down: Down<'_>) {
        self.0.down(Down {
            table: None,
            ..down
        });
    }

    fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
        self.0.frame(from, control, payload);
    }
}

struct OutsideNode<'a>(&'a dyn NodeTarget);

struct Tableless(Box<dyn Node>);

impl Node for Tableless {
    fn dial<'a>(
        &'a self,
        node: &'a str,
        addr: &'a str,
    ) -> BoxFuture<'a, Result<Conn, DialFailure>> {
        self.0.dial(node, addr)
    }

    fn serve(&self, listener: Box<dyn Listener>) {
        self.0.serve(listener);
    }

    fn connection(&self, node: &str) -> Option<Conn> {
        self.0.connection(node)
    }

    fn disconnect(&self, node: &str) {
        self.0.disconnect(node);
    }

    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        self.0.enqueue(node, frame)
    }

    fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome {
        self.0.enqueue_control(pinned, frame)
    }

    fn shutdown(&self) {
        self.0.shutdown();
    }

    fn stats(&self) -> Option<SenderStats> {
        None
    }

    fn slot(&self, _: &str) -> Option<(u64, bool)> {
        None
    }
}

impl NodeTarget for OutsideNode<'_> {
    fn capabilities(&self) -> NodeCapabilities {
        NodeCapabilities {
            drain: false,
            stats: false,
            table: false,
            links: false,
            ..self.0.capabilities()
        }
    }

    fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
        let reports = NodeReports::new(Arc::new(Filtered(setup.reports.clone())));
        let node = self.0.start(NodeSetup { reports, ..setup })?;
        Ok(Box::new(Tableless(node)))
    }
}

/// The targets, holding the views (the trait hands out references).
pub struct OutsideTargets {
    name: String,
    inner: Arc<dyn Targets>,
}

impl OutsideTargets {
    /// `inner` seen from outside.
    #[must_use]
    pub fn new(inner: Arc<dyn Targets>) -> Self {
        Self {
            name: format!("{} (from outside)", inner.name()),
            inner,
        }
    }
}

impl Targets for OutsideTargets {
    fn name(&self) -> &str {
        &self.name
    }

    fn lanes(&self) -> Option<&dyn LanesTarget> {
        self.inner.lanes().map(|_| self as &dyn LanesTarget)
    }

    fn node(&self) -> Option<&dyn NodeTarget> {
        self.inner.node().map(|_| self as &dyn NodeTarget)
    }
}

impl LanesTarget for OutsideTargets {
    fn capabilities(&self) -> LanesCapabilities {
        OutsideLanes(self.inner.lanes().expect("offered only with lanes")).capabilities()
    }

    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        OutsideLanes(self.inner.lanes().expect("offered only with lanes")).build(setup)
    }
}

impl NodeTarget for OutsideTargets {
    fn capabilities(&self) -> NodeCapabilities {
        OutsideNode(self.inner.node().expect("offered only with a node")).capabilities()
    }

    fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
        OutsideNode(self.inner.node().expect("offered only with a node")).start(setup)
    }
}
