//! The node's shared state ([`Shared`]): the table of live generations
//! and the per-peer generation counters ([`State`], behind one lock), the
//! setup's settings, the sender's closed flag and the node's signals, the
//! counts the queue capacities are held to, and the counters
//! ([`Counters`]) that its stats report. Every task holds it by `Arc`; what
//! it does is in the sibling files, one concept each.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::handshake::Nonces;
use lanesim_target::net::Transport;
use lanesim_target::node::{NodeReports, NodeSetup, Runtime, SenderLane, SenderStats};
use lanesim_target::shim::task::Handle;
use tokio::sync::watch;

use super::link::Link;
use super::sync::lock;

/// Distinguishes nodes, so a handle from another node is never accepted as
/// one of ours.
static NEXT_NODE_ID: AtomicU64 = AtomicU64::new(1);

#[derive(Default)]
pub(super) struct State {
    pub(super) live: HashMap<String, Arc<Link>>,
    pub(super) generations: HashMap<String, u64>,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) data_queued: AtomicU64,
    pub(super) data_written: AtomicU64,
    pub(super) data_failed: AtomicU64,
    pub(super) data_no_connection: AtomicU64,
    pub(super) data_discarded: AtomicU64,
    pub(super) control_queued: AtomicU64,
    pub(super) control_written: AtomicU64,
    pub(super) control_failed: AtomicU64,
    pub(super) control_skipped: AtomicU64,
    pub(super) control_discarded: AtomicU64,
}

pub(super) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    pub(super) fn snapshot(&self) -> SenderStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SenderStats {
            data_queued: get(&self.data_queued),
            data_written: get(&self.data_written),
            data_failed: get(&self.data_failed),
            data_no_connection: get(&self.data_no_connection),
            data_discarded: get(&self.data_discarded),
            control_queued: get(&self.control_queued),
            control_written: get(&self.control_written),
            control_failed: get(&self.control_failed),
            control_skipped: get(&self.control_skipped),
            control_discarded: get(&self.control_discarded),
        }
    }
}

pub(super) struct Shared {
    pub(super) id: u64,
    pub(super) name: String,
    pub(super) transport: Arc<dyn Transport>,
    pub(super) handle: Handle,
    pub(super) connect_timeout: Duration,
    pub(super) write_timeout: Duration,
    pub(super) heartbeat: Option<Duration>,
    pub(super) max_frame: u64,
    pub(super) data_capacity: usize,
    pub(super) control_capacity: usize,
    pub(super) reports: NodeReports,
    pub(super) cookie: Vec<u8>,
    pub(super) nonces: Arc<dyn Nonces>,
    pub(super) state: Mutex<State>,
    /// The sender is shut down: enqueues are refused.
    pub(super) closed: AtomicBool,
    pub(super) shutdown_signal: watch::Sender<bool>,
    /// The node is dropped: every task ends.
    pub(super) stop_signal: watch::Sender<bool>,
    pub(super) data_pending: AtomicUsize,
    pub(super) control_pending: AtomicUsize,
    pub(super) counters: Counters,
}

pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_control() || c.is_whitespace())
}

impl Shared {
    pub(super) fn new(setup: NodeSetup) -> Result<Arc<Self>, String> {
        if !valid_name(&setup.name) {
            return Err(format!("invalid node name {:?}", setup.name));
        }
        if setup.heartbeat.is_some_and(|tick| tick.is_zero()) {
            return Err("the heartbeat tick must be longer than zero".to_owned());
        }
        let handle = match setup.runtime {
            Runtime::World(handle) => handle,
            Runtime::Own { world, .. } => world,
        };
        Ok(Arc::new(Self {
            id: NEXT_NODE_ID.fetch_add(1, Ordering::Relaxed),
            name: setup.name,
            transport: setup.transport,
            handle,
            connect_timeout: setup.connect_timeout,
            write_timeout: setup.write_timeout,
            heartbeat: setup.heartbeat,
            max_frame: setup.max_frame,
            data_capacity: setup.data_capacity,
            control_capacity: setup.control_capacity,
            reports: setup.reports,
            cookie: setup.cookie,
            nonces: setup.nonces,
            state: Mutex::new(State::default()),
            closed: AtomicBool::new(false),
            shutdown_signal: watch::channel(false).0,
            stop_signal: watch::channel(false).0,
            data_pending: AtomicUsize::new(0),
            control_pending: AtomicUsize::new(0),
            counters: Counters::default(),
        }))
    }

    pub(super) fn live(&self, node: &str) -> Option<Arc<Link>> {
        lock(&self.state).live.get(node).cloned()
    }

    pub(super) fn release(&self, lane: SenderLane) {
        let count = match lane {
            SenderLane::Data => &self.data_pending,
            SenderLane::Control => &self.control_pending,
        };
        count.fetch_sub(1, Ordering::SeqCst);
    }
}
