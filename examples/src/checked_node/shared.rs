//! What every task of one node shares: its settings (taken once from the
//! world's `NodeSetup`), its report sink, its table of live generations, its
//! send queues, its counters, and the handles of the tasks it spawned (so
//! dropping the node ends them).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::handshake::Nonces;
use lanesim_target::net::Transport;
use lanesim_target::node::{NodeReports, NodeSetup, Runtime};
use lanesim_target::shim::task::AbortHandle;
use lanesim_target::shim::task::Handle;

use super::queue::Queues;
use super::stats::Counters;
use super::table::Table;

/// One node's shared state.
pub(super) struct Shared {
    /// This node's name.
    pub name: String,
    /// Where streams are dialed and accepted.
    pub transport: Arc<dyn Transport>,
    /// Where every task runs.
    pub runtime: Handle,
    /// Bound on a dial, handshake included.
    pub connect_timeout: Duration,
    /// Bound on one frame's write.
    pub write_timeout: Duration,
    /// Heartbeat tick, if any.
    pub heartbeat: Option<Duration>,
    /// Largest inbound frame body.
    pub max_frame: u64,
    /// Longest a frame's body may take after its header.
    pub frame_timeout: Option<Duration>,
    /// Data frames queued per node at most.
    pub data_capacity: usize,
    /// Controls queued per node at most.
    pub control_capacity: usize,
    /// Where events are reported.
    pub reports: NodeReports,
    /// The cluster cookie.
    pub cookie: Vec<u8>,
    /// Handshake nonces.
    pub nonces: Arc<dyn Nonces>,
    /// Live generations per node.
    pub table: Table,
    /// Send queues per node.
    pub queues: Queues,
    /// Counters.
    pub stats: Counters,
    /// Set once the sender is shut down.
    pub closed: AtomicBool,
    /// One dial at a time per node.
    dial_turns: Mutex<BTreeMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Tasks to end when the node is dropped.
    tasks: Mutex<Vec<AbortHandle>>,
}

impl Shared {
    pub fn new(setup: NodeSetup) -> Self {
        let runtime = match setup.runtime {
            Runtime::World(handle) => handle,
            Runtime::Own { world, .. } => world,
        };
        Self {
            name: setup.name,
            transport: setup.transport,
            runtime,
            connect_timeout: setup.connect_timeout,
            write_timeout: setup.write_timeout,
            heartbeat: setup.heartbeat,
            max_frame: setup.max_frame,
            frame_timeout: setup.frame_timeout,
            data_capacity: setup.data_capacity,
            control_capacity: setup.control_capacity,
            reports: setup.reports,
            cookie: setup.cookie,
            nonces: setup.nonces,
            table: Table::default(),
            queues: Queues::default(),
            stats: Counters::default(),
            closed: AtomicBool::new(false),
            dial_turns: Mutex::new(BTreeMap::new()),
            tasks: Mutex::new(Vec::new()),
        }
    }

    /// Spawns `task` on the node's runtime; it is aborted when the node is
    /// dropped.
    pub fn spawn<F>(&self, task: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let handle = self.runtime.spawn(task);
        let mut tasks = self.tasks.lock().unwrap();
        tasks.retain(|task| !task.is_finished());
        tasks.push(handle.abort_handle());
    }

    /// The lock that makes dials of `node` take turns.
    pub fn dial_turn(&self, node: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.dial_turns.lock().unwrap();
        Arc::clone(turns.entry(node.to_owned()).or_default())
    }

    /// Whether the sender was shut down.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Ends every task and closes every live connection, reporting nothing
    /// (the node is being dropped).
    pub fn stop(&self) {
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap());
        for task in tasks {
            task.abort();
        }
        for link in self.table.drain() {
            link.close_silently();
        }
    }
}
