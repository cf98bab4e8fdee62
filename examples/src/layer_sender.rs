//! A node-to-node sender over a connection layer it is given: the outbound
//! half of a node (the shape of a `DistSender` over its `ConnectionManager`),
//! run by lanesim as a [`SenderTarget`] over lanesim's own connection layer.
//!
//! # Model
//!
//! The connection layer owns the sockets: it dials, accepts, reads, and
//! keeps one live *generation* per peer node. This sender owns what goes
//! out on them:
//!
//! - **Data** ([`NodeSender::enqueue`]) is best effort, addressed to a node.
//!   It is written, in enqueue order, to whatever generation is live for the
//!   node when the drain gets to it, and dropped (accounted as
//!   "unroutable") when the node has none.
//! - **Controls** ([`NodeSender::enqueue_control`]) are must-deliver and
//!   *pinned* to the generation the caller names. A control is written to
//!   that generation's socket, in enqueue order, or that generation is
//!   marked down (send-or-down). It is never written to any other
//!   generation, even a newer live one of the same node.
//!
//! # Structure
//!
//! - **One queue per destination node** (`Peer`): a control lane and a
//!   data lane behind one `std::sync::Mutex`, woken by a `Notify`. A
//!   control pinned to a generation of node `n` goes to `n`'s queue. The
//!   peer is created on the first frame for its node and lives as long as
//!   the sender (a cluster's node set is small and stable; reaping idle
//!   queues would buy little and open a reap-vs-enqueue race).
//! - **One drain task per node**, spawned on the setup's runtime when the
//!   peer is created. It pops controls before data (controls must not wait
//!   behind bulk data; each lane stays FIFO), and writes each frame with
//!   [`write_raw`](lanesim_target::layer::LayerConnection::write_raw) under
//!   `tokio::time::timeout`. A write that misses `write_timeout` takes its
//!   generation down ([`DownReason::WriteTimeout`]) before the unfinished
//!   write is dropped, so the generation's down reason is the deadline and
//!   nothing more is ever written after the partial frame.
//! - **The writer lock** (`Peer::writer`, a `tokio::sync::Mutex`) serialises
//!   every write to one node. The drain holds it across the down check, the
//!   write and its account, so a check and the write it guards are not
//!   interleaved with another writer's of the same node. Controls and data
//!   share it.
//! - **Down checks**: before writing a control the drain asks its pinned
//!   generation [`Connection::is_down`](lanesim_target::node::Connection::is_down);
//!   a down generation's control is skipped and accounted. (A generation
//!   that goes down between the check and the write refuses the write: the
//!   control ends `Failed`, its generation down, which is still
//!   send-or-down.)
//! - **Capacities** are the sender's: at most `data_capacity` data frames
//!   and `control_capacity` controls queued at once, across all nodes. A
//!   frame stops counting when the drain takes it off its queue to write
//!   it. A full data lane drops the new frame ([`DataOutcome::DroppedFull`]);
//!   a full control lane takes the control's pinned generation down
//!   ([`DownReason::ControlOverflow`]) before answering
//!   [`ControlOutcome::Overflow`], since the control will never be written.
//! - **Never waiting**: `enqueue` and `enqueue_control` take two short
//!   `std` locks (the node map, the node's queue) and never `.await`.
//!
//! # Shutdown
//!
//! [`NodeSender::shutdown`] closes every queue (later enqueues answer
//! `DroppedClosed` / `Closed`) and wakes every drain. A drain finishes the
//! write it is in, if any (bounded by `write_timeout`, so the socket never
//! carries half a frame because of a shutdown), then discards what is still
//! queued: data is dropped and accounted; each discarded control's pinned
//! generation is marked down ([`DownReason::ManualDisconnect`]) first, so no
//! control is silently lost on a generation that stays up. Dropping the
//! sender shuts it down.
//!
//! # Accounting
//!
//! Every frame the sender accepted has exactly one fate, reported to
//! [`SenderSetup::reports`] and counted in [`SenderStats`]: written, failed
//! or timed out (`write_started` then `write_finished`), skipped (a control
//! whose generation was down), unroutable (data with no live connection),
//! or discarded at shutdown. Reports are made with no `std` lock held, so a
//! report sink may call back into the sender.
//!
//! # Runtimes
//!
//! Drains run on [`SenderSetup::runtime`]: the world's runtime, or, for
//! [`Runtime::Own`], a dedicated single-threaded runtime on a thread of the
//! sender's own (named as asked), as a production node runs its sender. That
//! thread lives until the sender is shut down and every drain has finished.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use lanesim_target::layer::{
    ConnectionLayer, LayerConn, Sender, SenderCapabilities, SenderSetup, SenderTarget,
};
use lanesim_target::node::{
    BoxFuture, ControlOutcome, DataOutcome, DownReason, Generation, NodeFixed, NodeReports,
    Runtime, SenderLane, SenderStats, WriteOutcome,
};
use lanesim_target::probe::{self, Role, Sites};
// std's and tokio's names, through the shim (`lanesim_target::shim`): the
// real ones normally, the model checker's under `--cfg shuttle`.
use lanesim_target::shim::std_sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use lanesim_target::shim::std_sync::{Arc, Mutex, MutexGuard, PoisonError};
use lanesim_target::shim::task::Handle;
use lanesim_target::shim::task::JoinHandle;
use lanesim_target::shim::time;
use tokio::sync::{watch, Notify};

/// The marks this module makes.
const MARK_WRITE_TIMED_OUT: &str = "layer_sender_write_timed_out";
const MARK_CONTROL_SKIPPED: &str = "layer_sender_control_skipped";
const MARK_CONTROL_OVERFLOW: &str = "layer_sender_control_overflow";
const MARK_DISCARDED_AT_SHUTDOWN: &str = "layer_sender_discarded_at_shutdown";

/// Between a control's down check and its write: where, in production,
/// the connection layer's read loop may take the generation down.
const POINT_AFTER_DOWN_CHECK: &str = "layer_sender.after_down_check";

/// The sites above, for [`SenderCapabilities::sites`].
const SITES: Sites = Sites {
    marks: &[
        MARK_WRITE_TIMED_OUT,
        MARK_CONTROL_SKIPPED,
        MARK_CONTROL_OVERFLOW,
        MARK_DISCARDED_AT_SHUTDOWN,
    ],
    points: &[POINT_AFTER_DOWN_CHECK],
    // The races the shipped scenarios are written to reach, as this
    // module shows them.
    roles: &[
        (Role::WriteDeadlineFired, MARK_WRITE_TIMED_OUT),
        (Role::ControlSkippedPinnedDown, MARK_CONTROL_SKIPPED),
        (Role::ControlOverflowMarkedDown, MARK_CONTROL_OVERFLOW),
        (Role::ShutdownWithQueuedControls, MARK_DISCARDED_AT_SHUTDOWN),
    ],
};

/// Takes a `std` lock, even when a panic elsewhere poisoned it: every
/// critical section below leaves its data consistent at each statement.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How to reach a generation in a report.
fn generation_of(conn: &LayerConn) -> Generation<'_> {
    Generation {
        node: conn.node(),
        generation: conn.generation(),
    }
}

// ---------------------------------------------------------------------------
// Configuration

/// What a [`NodeSender`] is built from.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// Bound on one frame's write; a write that misses it takes its
    /// generation down.
    pub write_timeout: Duration,
    /// Data frames queued at once, across all nodes.
    pub data_capacity: usize,
    /// Controls queued at once, across all nodes.
    pub control_capacity: usize,
}

// ---------------------------------------------------------------------------
// Counters

/// The sender's counters (a snapshot is a [`SenderStats`]).
#[derive(Debug, Default)]
struct Counters {
    data_queued: AtomicU64,
    data_written: AtomicU64,
    data_failed: AtomicU64,
    data_no_connection: AtomicU64,
    data_discarded: AtomicU64,
    control_queued: AtomicU64,
    control_written: AtomicU64,
    control_failed: AtomicU64,
    control_skipped: AtomicU64,
    control_discarded: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    fn snapshot(&self) -> SenderStats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
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

// ---------------------------------------------------------------------------
// Capacity

/// A count of queued frames with a bound.
#[derive(Debug)]
struct Capacity {
    queued: AtomicUsize,
    limit: usize,
}

impl Capacity {
    fn new(limit: usize) -> Self {
        Self {
            queued: AtomicUsize::new(0),
            limit,
        }
    }

    /// Takes one slot, if there is one. A slot taken is given back with
    /// [`Capacity::release`] exactly once, when its frame leaves the queue.
    fn try_reserve(&self) -> bool {
        self.queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |queued| {
                (queued < self.limit).then_some(queued + 1)
            })
            .is_ok()
    }

    fn release(&self, slots: usize) {
        self.queued.fetch_sub(slots, Ordering::AcqRel);
    }
}

// ---------------------------------------------------------------------------
// One destination node

/// A control waiting for its drain, with the generation it is pinned to.
struct QueuedControl {
    pinned: LayerConn,
    frame: Arc<[u8]>,
}

/// What a node's drain takes off its queue next.
enum Next {
    Control(QueuedControl),
    Data(Arc<[u8]>),
    /// The queue was closed: everything still queued, to discard.
    Closed {
        controls: VecDeque<QueuedControl>,
        data: VecDeque<Arc<[u8]>>,
    },
    /// Nothing queued: wait for a wake-up.
    Idle,
}

/// A node's queued frames.
#[derive(Default)]
struct Lanes {
    controls: VecDeque<QueuedControl>,
    data: VecDeque<Arc<[u8]>>,
    /// Set once, by shutdown, under this lock: after it no frame is pushed,
    /// so the drain's final take leaves none behind.
    closed: bool,
}

/// One destination node: its queue, its drain's wake-up, its writer lock.
struct Peer {
    node: String,
    lanes: Mutex<Lanes>,
    /// Wakes the drain. `notify_one` stores a permit when the drain is not
    /// waiting, so a push between its empty check and its wait is not lost.
    wake: Notify,
    /// The writer lock: held around every write to this node (and the down
    /// check before it).
    writer: tokio::sync::Mutex<()>,
}

impl Peer {
    fn new(node: &str) -> Self {
        Self {
            node: node.to_owned(),
            lanes: Mutex::new(Lanes::default()),
            wake: Notify::new(),
            writer: tokio::sync::Mutex::new(()),
        }
    }

    /// Takes the next frame: controls first, each lane in order.
    fn next(&self) -> Next {
        let mut lanes = lock(&self.lanes);
        if lanes.closed {
            return Next::Closed {
                controls: std::mem::take(&mut lanes.controls),
                data: std::mem::take(&mut lanes.data),
            };
        }
        if let Some(control) = lanes.controls.pop_front() {
            return Next::Control(control);
        }
        match lanes.data.pop_front() {
            Some(frame) => Next::Data(frame),
            None => Next::Idle,
        }
    }

    fn close(&self) {
        lock(&self.lanes).closed = true;
        self.wake.notify_one();
    }
}

/// The map of nodes, and whether the sender is shut down.
#[derive(Default)]
struct Peers {
    by_node: HashMap<String, Arc<Peer>>,
    /// Set once, by shutdown, under this lock: after it no peer (and no
    /// drain) is created.
    closed: bool,
    /// Every drain spawned, for a dedicated runtime to wait out.
    drains: Vec<JoinHandle<()>>,
}

// ---------------------------------------------------------------------------
// The sender

/// State shared by the handle and the drains.
struct Shared {
    layer: Arc<dyn ConnectionLayer>,
    spawner: Handle,
    write_timeout: Duration,
    data_capacity: Capacity,
    control_capacity: Capacity,
    peers: Mutex<Peers>,
    /// A fast path for enqueues after shutdown; the authority is
    /// `Peers::closed` and `Lanes::closed`.
    closed: AtomicBool,
    /// Raised by shutdown (for a dedicated runtime's thread).
    stopped: watch::Sender<bool>,
    reports: NodeReports,
    counters: Counters,
}

/// A sender over a connection layer: per-node queues drained by one task
/// per node. Cheap to share behind an `Arc`; dropping it shuts it down.
pub struct NodeSender {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for NodeSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeSender")
            .field("write_timeout", &self.shared.write_timeout)
            .field("closed", &self.shared.closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl NodeSender {
    /// Starts a sender whose drains run on `runtime`.
    ///
    /// # Errors
    /// When a dedicated runtime ([`Runtime::Own`]) or its thread cannot be
    /// started.
    pub fn start(
        layer: Arc<dyn ConnectionLayer>,
        runtime: &Runtime,
        config: &SenderConfig,
        reports: NodeReports,
    ) -> Result<Self, String> {
        let (stopped, _) = watch::channel(false);
        let (spawner, own_thread) = match runtime {
            Runtime::World(handle) => (handle.clone(), None),
            Runtime::Own { thread_name, .. } => {
                let (handle, start_thread) = own_runtime(thread_name)?;
                (handle, Some(start_thread))
            }
        };
        let shared = Arc::new(Shared {
            layer,
            spawner,
            write_timeout: config.write_timeout,
            data_capacity: Capacity::new(config.data_capacity),
            control_capacity: Capacity::new(config.control_capacity),
            peers: Mutex::new(Peers::default()),
            closed: AtomicBool::new(false),
            stopped,
            reports,
            counters: Counters::default(),
        });
        if let Some(start_thread) = own_thread {
            // The runtime's thread waits for shutdown, then for every drain
            // to finish its last write and its discards, and only then drops
            // the runtime (which would cancel a write half done).
            let shared = Arc::clone(&shared);
            start_thread(Box::pin(async move { shared.wait_drains().await }));
        }
        Ok(Self { shared })
    }

    /// Offers a data frame (already framed) for `node`. Never waits.
    pub fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        self.shared.enqueue(node, frame)
    }

    /// Offers a control (already framed) pinned to `pinned`. Never waits.
    pub fn enqueue_control(&self, pinned: &LayerConn, frame: Arc<[u8]>) -> ControlOutcome {
        self.shared.enqueue_control(pinned, frame)
    }

    /// Stops the sender (see the module doc). Idempotent; never waits.
    pub fn shutdown(&self) {
        self.shared.shutdown();
    }

    /// The counters.
    #[must_use]
    pub fn stats(&self) -> SenderStats {
        self.shared.counters.snapshot()
    }
}

impl Drop for NodeSender {
    fn drop(&mut self) {
        self.shared.shutdown();
    }
}

/// Hands a future to a dedicated runtime's thread, which runs it to
/// completion and then drops the runtime.
type StartThread = Box<dyn FnOnce(BoxFuture<'static, ()>) + Send>;

/// A dedicated single-threaded runtime on a thread named `thread_name`.
///
/// The runtime is built on its own thread (and dropped there), so it is
/// never built or dropped inside the caller's async context. Returns its
/// handle and the function that gives the thread the future to run; until
/// then the thread waits.
fn own_runtime(thread_name: &str) -> Result<(Handle, StartThread), String> {
    let hook = probe::worker_start_hook();
    let (handle_tx, handle_rx) = std::sync::mpsc::channel::<Result<Handle, String>>();
    let (main_tx, main_rx) = std::sync::mpsc::channel::<BoxFuture<'static, ()>>();
    std::thread::Builder::new()
        .name(thread_name.to_owned())
        .spawn(move || {
            if let Some(hook) = hook {
                hook();
            }
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(error) => {
                    let _ = handle_tx.send(Err(format!("sender runtime: {error}")));
                    return;
                }
            };
            // The identity normally; under a model checker its scheduler
            // (`lanesim_target::shim::task::Handle`).
            #[allow(clippy::useless_conversion)]
            let handle = runtime.handle().clone().into();
            if handle_tx.send(Ok(handle)).is_err() {
                return;
            }
            // Without a future to run (the sender failed to start), the
            // thread ends and drops the runtime.
            if let Ok(main) = main_rx.recv() {
                runtime.block_on(main);
            }
        })
        .map_err(|error| format!("sender thread: {error}"))?;
    let handle = handle_rx
        .recv()
        .map_err(|_| "sender thread ended before its runtime started".to_owned())??;
    let start: StartThread = Box::new(move |main| {
        let _ = main_tx.send(main);
    });
    Ok((handle, start))
}

impl Shared {
    /// `node`'s peer, created (with its drain) on first use; `None` once
    /// the sender is shut down.
    fn peer(self: &Arc<Self>, node: &str) -> Option<Arc<Peer>> {
        let mut peers = lock(&self.peers);
        if peers.closed {
            return None;
        }
        if let Some(peer) = peers.by_node.get(node) {
            return Some(Arc::clone(peer));
        }
        let peer = Arc::new(Peer::new(node));
        peers.by_node.insert(node.to_owned(), Arc::clone(&peer));
        // Spawned under the map lock so that shutdown, which closes the map
        // under it, sees every drain in `drains`.
        let drain = self
            .spawner
            .spawn(Arc::clone(self).drain(Arc::clone(&peer)));
        peers.drains.push(drain);
        Some(peer)
    }

    fn enqueue(self: &Arc<Self>, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        if self.closed.load(Ordering::Acquire) {
            return DataOutcome::DroppedClosed;
        }
        let Some(peer) = self.peer(node) else {
            return DataOutcome::DroppedClosed;
        };
        if !self.data_capacity.try_reserve() {
            return DataOutcome::DroppedFull;
        }
        {
            let mut lanes = lock(&peer.lanes);
            if lanes.closed {
                drop(lanes);
                self.data_capacity.release(1);
                return DataOutcome::DroppedClosed;
            }
            // Counted before the drain can see it, so `queued` never lags a
            // frame's fate.
            bump(&self.counters.data_queued);
            lanes.data.push_back(frame);
        }
        peer.wake.notify_one();
        DataOutcome::Queued
    }

    fn enqueue_control(self: &Arc<Self>, pinned: &LayerConn, frame: Arc<[u8]>) -> ControlOutcome {
        if self.closed.load(Ordering::Acquire) {
            return ControlOutcome::Closed;
        }
        let Some(peer) = self.peer(pinned.node()) else {
            return ControlOutcome::Closed;
        };
        if !self.control_capacity.try_reserve() {
            // Send-or-down: this control will never be written, so its
            // generation goes down before the caller hears `Overflow`. (No
            // lock is held: the layer reports the down from here.)
            probe::mark(MARK_CONTROL_OVERFLOW);
            pinned.mark_down(DownReason::ControlOverflow);
            return ControlOutcome::Overflow;
        }
        {
            let mut lanes = lock(&peer.lanes);
            if lanes.closed {
                drop(lanes);
                self.control_capacity.release(1);
                return ControlOutcome::Closed;
            }
            bump(&self.counters.control_queued);
            lanes.controls.push_back(QueuedControl {
                pinned: Arc::clone(pinned),
                frame,
            });
        }
        peer.wake.notify_one();
        ControlOutcome::Queued
    }

    fn shutdown(&self) {
        let peers: Vec<Arc<Peer>> = {
            let mut peers = lock(&self.peers);
            if peers.closed {
                return;
            }
            peers.closed = true;
            self.closed.store(true, Ordering::Release);
            peers.by_node.values().cloned().collect()
        };
        for peer in peers {
            peer.close();
        }
        self.stopped.send_replace(true);
    }

    /// For a dedicated runtime's thread: returns once the sender is shut
    /// down and every drain has ended.
    async fn wait_drains(&self) {
        let mut stopped = self.stopped.subscribe();
        let _ = stopped.wait_for(|stopped| *stopped).await;
        // Closed: no drain is spawned after this take.
        let drains = std::mem::take(&mut lock(&self.peers).drains);
        for drain in drains {
            let _ = drain.await;
        }
    }

    /// A node's drain: writes its frames until the sender shuts down.
    async fn drain(self: Arc<Self>, peer: Arc<Peer>) {
        loop {
            match peer.next() {
                Next::Idle => peer.wake.notified().await,
                Next::Control(control) => {
                    self.control_capacity.release(1);
                    self.send_control(&peer, control).await;
                }
                Next::Data(frame) => {
                    self.data_capacity.release(1);
                    self.send_data(&peer, &frame).await;
                }
                Next::Closed { controls, data } => {
                    self.discard(&peer.node, controls, data);
                    return;
                }
            }
        }
    }

    /// Writes a control to its pinned generation, or skips it when that
    /// generation is already down.
    async fn send_control(&self, peer: &Peer, control: QueuedControl) {
        let QueuedControl { pinned, frame } = control;
        let _writer = peer.writer.lock().await;
        if pinned.is_down() {
            probe::mark(MARK_CONTROL_SKIPPED);
            bump(&self.counters.control_skipped);
            self.reports.control_skipped(generation_of(&pinned), &frame);
            return;
        }
        probe::preempt_point(POINT_AFTER_DOWN_CHECK).await;
        self.write(&pinned, SenderLane::Control, &frame).await;
    }

    /// Writes a data frame to the node's live generation, or drops it when
    /// the node has none.
    async fn send_data(&self, peer: &Peer, frame: &[u8]) {
        let _writer = peer.writer.lock().await;
        // Looked up under the writer lock, per frame: data follows the
        // node's current generation across redials.
        match self.layer.get_connection(&peer.node) {
            Some(conn) => self.write(&conn, SenderLane::Data, frame).await,
            None => {
                bump(&self.counters.data_no_connection);
                self.reports.data_unroutable(&peer.node, frame);
            }
        }
    }

    /// One bounded write, reported and counted. A failed or late write
    /// leaves its generation down.
    async fn write(&self, conn: &LayerConn, lane: SenderLane, frame: &[u8]) {
        self.reports.write_started(generation_of(conn), lane, frame);
        let mut write = conn.write_raw(frame);
        let outcome = match time::timeout(self.write_timeout, &mut write).await {
            Ok(Ok(())) => WriteOutcome::Written,
            Ok(Err(_)) => {
                // The layer takes the generation down on an I/O error (and
                // refuses a write to one already down); marking it here too
                // makes "failed means down" this sender's own guarantee.
                conn.mark_down(DownReason::WriteError);
                WriteOutcome::Failed
            }
            Err(_) => {
                // Down before the unfinished write is dropped: the reason is
                // the deadline, and nothing follows the partial frame.
                probe::mark(MARK_WRITE_TIMED_OUT);
                conn.mark_down(DownReason::WriteTimeout);
                WriteOutcome::TimedOut
            }
        };
        drop(write);
        let counters = &self.counters;
        let counter = match (lane, outcome) {
            (SenderLane::Data, WriteOutcome::Written) => &counters.data_written,
            (SenderLane::Data, _) => &counters.data_failed,
            (SenderLane::Control, WriteOutcome::Written) => &counters.control_written,
            (SenderLane::Control, _) => &counters.control_failed,
        };
        bump(counter);
        self.reports
            .write_finished(generation_of(conn), lane, frame, outcome);
    }

    /// What a closed queue still held: data dropped, controls' generations
    /// taken down (send-or-down), each accounted.
    fn discard(&self, node: &str, controls: VecDeque<QueuedControl>, data: VecDeque<Arc<[u8]>>) {
        self.control_capacity.release(controls.len());
        self.data_capacity.release(data.len());
        if !controls.is_empty() || !data.is_empty() {
            probe::mark(MARK_DISCARDED_AT_SHUTDOWN);
        }
        for QueuedControl { pinned, frame } in controls {
            pinned.mark_down(DownReason::ManualDisconnect);
            bump(&self.counters.control_discarded);
            self.reports
                .control_discarded(generation_of(&pinned), &frame);
        }
        for frame in data {
            bump(&self.counters.data_discarded);
            self.reports.data_discarded(node, &frame);
        }
    }
}

// ---------------------------------------------------------------------------
// The adapter to lanesim's target API

/// The sender target: a [`NodeSender`] over the connection layer lanesim
/// hands it.
#[derive(Clone, Copy, Debug, Default)]
pub struct LayerSenderTarget;

impl SenderTarget for LayerSenderTarget {
    fn capabilities(&self) -> SenderCapabilities {
        SenderCapabilities {
            hazards: &[],
            drain: true,
            stats: true,
            fixed: NodeFixed::default(),
            sites: SITES,
        }
    }

    fn start(&self, setup: SenderSetup) -> Result<Box<dyn Sender>, String> {
        let config = SenderConfig {
            write_timeout: setup.write_timeout,
            data_capacity: setup.data_capacity,
            control_capacity: setup.control_capacity,
        };
        let sender = NodeSender::start(setup.layer, &setup.runtime, &config, setup.reports)?;
        Ok(Box::new(sender))
    }
}

impl Sender for NodeSender {
    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        NodeSender::enqueue(self, node, frame)
    }

    fn enqueue_control(&self, pinned: &LayerConn, frame: Arc<[u8]>) -> ControlOutcome {
        NodeSender::enqueue_control(self, pinned, frame)
    }

    fn shutdown(&self) {
        NodeSender::shutdown(self);
    }

    fn stats(&self) -> Option<SenderStats> {
        Some(NodeSender::stats(self))
    }
}

#[cfg(test)]
mod tests {
    use std::any::Any;
    use std::future::pending;
    use std::io;
    use std::time::Instant;

    use lanesim_target::layer::LayerConnection;
    use lanesim_target::node::{Connection, Down, NodeEvents, Up};

    use super::*;

    /// What a fake connection does with a write.
    #[derive(Clone)]
    enum Behaviour {
        /// Writes at once.
        Normal,
        /// Fails (and goes down, as the real layer does).
        Fail,
        /// Never completes.
        Wedge,
        /// Waits until the flag is raised, then writes.
        Gate(watch::Receiver<bool>),
    }

    struct FakeConn {
        node: String,
        generation: u64,
        behaviour: Behaviour,
        down: Mutex<Option<DownReason>>,
        written: Mutex<Vec<Vec<u8>>>,
        /// The thread each write completed on.
        threads: Mutex<Vec<Option<String>>>,
    }

    impl FakeConn {
        fn new(node: &str, generation: u64, behaviour: Behaviour) -> Arc<Self> {
            Arc::new(Self {
                node: node.to_owned(),
                generation,
                behaviour,
                down: Mutex::new(None),
                written: Mutex::new(Vec::new()),
                threads: Mutex::new(Vec::new()),
            })
        }

        fn written(&self) -> Vec<Vec<u8>> {
            lock(&self.written).clone()
        }

        fn down_reason(&self) -> Option<DownReason> {
            *lock(&self.down)
        }
    }

    impl Connection for FakeConn {
        fn node(&self) -> &str {
            &self.node
        }
        fn generation(&self) -> u64 {
            self.generation
        }
        fn is_down(&self) -> bool {
            lock(&self.down).is_some()
        }
        fn local_addr(&self) -> &str {
            "10.0.0.1:1"
        }
        fn peer_addr(&self) -> &str {
            "10.0.0.2:2"
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    impl LayerConnection for FakeConn {
        fn write_raw<'a>(&'a self, frame: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
            Box::pin(async move {
                if self.is_down() {
                    return Err(io::Error::other("connection is down"));
                }
                match &self.behaviour {
                    Behaviour::Normal => {}
                    Behaviour::Fail => {
                        self.mark_down(DownReason::WriteError);
                        return Err(io::Error::other("broken pipe"));
                    }
                    Behaviour::Wedge => pending::<()>().await,
                    Behaviour::Gate(open) => {
                        let mut open = open.clone();
                        let _ = open.wait_for(|open| *open).await;
                    }
                }
                lock(&self.written).push(frame.to_vec());
                lock(&self.threads).push(std::thread::current().name().map(str::to_owned));
                Ok(())
            })
        }

        fn mark_down(&self, reason: DownReason) {
            lock(&self.down).get_or_insert(reason);
        }

        fn as_connection(self: Arc<Self>) -> Arc<dyn Connection> {
            self
        }
    }

    #[derive(Default)]
    struct FakeLayer {
        live: Mutex<HashMap<String, Arc<FakeConn>>>,
    }

    impl FakeLayer {
        fn set_live(&self, conn: &Arc<FakeConn>) {
            lock(&self.live).insert(conn.node.clone(), Arc::clone(conn));
        }
    }

    impl ConnectionLayer for FakeLayer {
        fn get_connection(&self, node: &str) -> Option<LayerConn> {
            lock(&self.live)
                .get(node)
                .map(|conn| Arc::clone(conn) as LayerConn)
        }
    }

    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Event {
        Started(String, u64, SenderLane, Vec<u8>),
        Finished(String, u64, SenderLane, Vec<u8>, WriteOutcome),
        Skipped(String, u64, Vec<u8>),
        ControlDiscarded(String, u64, Vec<u8>),
        Unroutable(String, Vec<u8>),
        DataDiscarded(String, Vec<u8>),
    }

    #[derive(Default)]
    struct Recorder(Mutex<Vec<Event>>);

    impl Recorder {
        fn events(&self) -> Vec<Event> {
            lock(&self.0).clone()
        }

        fn push(&self, event: Event) {
            lock(&self.0).push(event);
        }
    }

    impl NodeEvents for Recorder {
        fn up(&self, _: Up<'_>) {}
        fn down(&self, _: Down<'_>) {}
        fn frame(&self, _: Generation<'_>, _: &[u8], _: &[u8]) {}

        fn write_started(&self, to: Generation<'_>, lane: SenderLane, frame: &[u8]) {
            self.push(Event::Started(
                to.node.to_owned(),
                to.generation,
                lane,
                frame.to_vec(),
            ));
        }
        fn write_finished(
            &self,
            to: Generation<'_>,
            lane: SenderLane,
            frame: &[u8],
            outcome: WriteOutcome,
        ) {
            self.push(Event::Finished(
                to.node.to_owned(),
                to.generation,
                lane,
                frame.to_vec(),
                outcome,
            ));
        }
        fn control_skipped(&self, pinned: Generation<'_>, frame: &[u8]) {
            self.push(Event::Skipped(
                pinned.node.to_owned(),
                pinned.generation,
                frame.to_vec(),
            ));
        }
        fn control_discarded(&self, pinned: Generation<'_>, frame: &[u8]) {
            self.push(Event::ControlDiscarded(
                pinned.node.to_owned(),
                pinned.generation,
                frame.to_vec(),
            ));
        }
        fn data_unroutable(&self, node: &str, frame: &[u8]) {
            self.push(Event::Unroutable(node.to_owned(), frame.to_vec()));
        }
        fn data_discarded(&self, node: &str, frame: &[u8]) {
            self.push(Event::DataDiscarded(node.to_owned(), frame.to_vec()));
        }
    }

    struct Fixture {
        layer: Arc<FakeLayer>,
        recorder: Arc<Recorder>,
        sender: NodeSender,
    }

    fn fixture_on(
        runtime: &Runtime,
        write_timeout: Duration,
        data_capacity: usize,
        control_capacity: usize,
    ) -> Fixture {
        let layer = Arc::new(FakeLayer::default());
        let recorder = Arc::new(Recorder::default());
        let sender = NodeSender::start(
            Arc::clone(&layer) as Arc<dyn ConnectionLayer>,
            runtime,
            &SenderConfig {
                write_timeout,
                data_capacity,
                control_capacity,
            },
            NodeReports::new(Arc::clone(&recorder) as Arc<dyn NodeEvents>),
        )
        .expect("the sender starts");
        Fixture {
            layer,
            recorder,
            sender,
        }
    }

    fn fixture(write_timeout: Duration, data_capacity: usize, control_capacity: usize) -> Fixture {
        fixture_on(
            &Runtime::World(Handle::current()),
            write_timeout,
            data_capacity,
            control_capacity,
        )
    }

    fn frame(bytes: &[u8]) -> Arc<[u8]> {
        Arc::from(bytes)
    }

    fn pinned(conn: &Arc<FakeConn>) -> LayerConn {
        Arc::clone(conn) as LayerConn
    }

    /// Waits (real time, bounded) until `done` holds.
    async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    const SECOND: Duration = Duration::from_secs(1);

    #[tokio::test]
    async fn data_is_written_in_order_to_the_live_generation() {
        let f = fixture(SECOND, 16, 16);
        let a1 = FakeConn::new("a", 1, Behaviour::Normal);
        f.layer.set_live(&a1);
        for i in 0..5u8 {
            assert_eq!(f.sender.enqueue("a", frame(&[i])), DataOutcome::Queued);
        }
        eventually("five writes", || a1.written().len() == 5).await;
        assert_eq!(a1.written(), (0..5u8).map(|i| vec![i]).collect::<Vec<_>>());
        let stats = f.sender.stats();
        assert_eq!((stats.data_queued, stats.data_written), (5, 5));
    }

    #[tokio::test]
    async fn data_without_a_live_connection_is_unroutable() {
        let f = fixture(SECOND, 16, 16);
        assert_eq!(f.sender.enqueue("a", frame(b"x")), DataOutcome::Queued);
        eventually("the unroutable report", || {
            f.recorder.events() == vec![Event::Unroutable("a".into(), b"x".to_vec())]
        })
        .await;
        assert_eq!(f.sender.stats().data_no_connection, 1);
    }

    #[tokio::test]
    async fn a_control_is_written_only_to_its_pinned_generation() {
        let f = fixture(SECOND, 16, 16);
        let (gate_tx, gate) = watch::channel(false);
        let a1 = FakeConn::new("a", 1, Behaviour::Gate(gate));
        f.layer.set_live(&a1);
        // The drain blocks in this write; meanwhile a redial replaces the
        // generation, and a control pinned to the old one is queued.
        assert_eq!(f.sender.enqueue("a", frame(b"d1")), DataOutcome::Queued);
        eventually("the first write to start", || {
            !f.recorder.events().is_empty()
        })
        .await;
        let a2 = FakeConn::new("a", 2, Behaviour::Normal);
        f.layer.set_live(&a2);
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c1")),
            ControlOutcome::Queued
        );
        assert_eq!(f.sender.enqueue("a", frame(b"d2")), DataOutcome::Queued);
        gate_tx.send_replace(true);
        eventually("all written", || {
            a1.written().len() == 2 && a2.written().len() == 1
        })
        .await;
        assert_eq!(a1.written(), vec![b"d1".to_vec(), b"c1".to_vec()]);
        assert_eq!(a2.written(), vec![b"d2".to_vec()]);
    }

    #[tokio::test]
    async fn a_control_pinned_to_a_down_generation_is_skipped() {
        let f = fixture(SECOND, 16, 16);
        let a1 = FakeConn::new("a", 1, Behaviour::Normal);
        a1.mark_down(DownReason::PeerClosed);
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c")),
            ControlOutcome::Queued
        );
        eventually("the skip", || {
            f.recorder.events() == vec![Event::Skipped("a".into(), 1, b"c".to_vec())]
        })
        .await;
        assert!(a1.written().is_empty());
        assert_eq!(f.sender.stats().control_skipped, 1);
    }

    #[tokio::test]
    async fn a_wedged_write_times_out_and_takes_its_generation_down() {
        let f = fixture(Duration::from_millis(50), 16, 16);
        let a1 = FakeConn::new("a", 1, Behaviour::Wedge);
        f.layer.set_live(&a1);
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c1")),
            ControlOutcome::Queued
        );
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c2")),
            ControlOutcome::Queued
        );
        eventually("both controls' fates", || f.recorder.events().len() == 3).await;
        assert_eq!(a1.down_reason(), Some(DownReason::WriteTimeout));
        assert_eq!(
            f.recorder.events(),
            vec![
                Event::Started("a".into(), 1, SenderLane::Control, b"c1".to_vec()),
                Event::Finished(
                    "a".into(),
                    1,
                    SenderLane::Control,
                    b"c1".to_vec(),
                    WriteOutcome::TimedOut
                ),
                Event::Skipped("a".into(), 1, b"c2".to_vec()),
            ]
        );
        let stats = f.sender.stats();
        assert_eq!((stats.control_failed, stats.control_skipped), (1, 1));
    }

    #[tokio::test]
    async fn a_failed_write_leaves_its_generation_down() {
        let f = fixture(SECOND, 16, 16);
        let a1 = FakeConn::new("a", 1, Behaviour::Fail);
        f.layer.set_live(&a1);
        assert_eq!(f.sender.enqueue("a", frame(b"d")), DataOutcome::Queued);
        eventually("the failed write", || f.sender.stats().data_failed == 1).await;
        assert_eq!(a1.down_reason(), Some(DownReason::WriteError));
    }

    #[tokio::test]
    async fn writes_to_one_wedged_node_do_not_stall_another() {
        let f = fixture(SECOND * 10, 16, 16);
        let a1 = FakeConn::new("a", 1, Behaviour::Wedge);
        let b1 = FakeConn::new("b", 1, Behaviour::Normal);
        f.layer.set_live(&a1);
        f.layer.set_live(&b1);
        assert_eq!(f.sender.enqueue("a", frame(b"a")), DataOutcome::Queued);
        assert_eq!(f.sender.enqueue("b", frame(b"b")), DataOutcome::Queued);
        eventually("b's write", || b1.written().len() == 1).await;
    }

    #[tokio::test]
    async fn full_lanes_refuse_and_an_overflowed_control_takes_its_generation_down() {
        let f = fixture(SECOND * 10, 1, 1);
        let (_gate_tx, gate) = watch::channel(false);
        let a1 = FakeConn::new("a", 1, Behaviour::Gate(gate));
        f.layer.set_live(&a1);
        // The first frame is taken off the queue and blocks in its write:
        // it no longer counts against the capacity.
        assert_eq!(f.sender.enqueue("a", frame(b"d1")), DataOutcome::Queued);
        eventually("the first write to start", || {
            !f.recorder.events().is_empty()
        })
        .await;
        assert_eq!(f.sender.enqueue("a", frame(b"d2")), DataOutcome::Queued);
        assert_eq!(
            f.sender.enqueue("a", frame(b"d3")),
            DataOutcome::DroppedFull
        );
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c1")),
            ControlOutcome::Queued
        );
        assert!(!a1.is_down());
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c2")),
            ControlOutcome::Overflow
        );
        assert_eq!(a1.down_reason(), Some(DownReason::ControlOverflow));
    }

    #[tokio::test]
    async fn shutdown_finishes_the_write_in_flight_and_discards_the_rest() {
        let f = fixture(SECOND * 10, 16, 16);
        let (gate_tx, gate) = watch::channel(false);
        let a1 = FakeConn::new("a", 1, Behaviour::Gate(gate));
        f.layer.set_live(&a1);
        assert_eq!(f.sender.enqueue("a", frame(b"d1")), DataOutcome::Queued);
        eventually("the first write to start", || {
            !f.recorder.events().is_empty()
        })
        .await;
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c1")),
            ControlOutcome::Queued
        );
        assert_eq!(f.sender.enqueue("a", frame(b"d2")), DataOutcome::Queued);

        f.sender.shutdown();
        assert_eq!(
            f.sender.enqueue("a", frame(b"d3")),
            DataOutcome::DroppedClosed
        );
        assert_eq!(
            f.sender.enqueue("b", frame(b"d4")),
            DataOutcome::DroppedClosed
        );
        assert_eq!(
            f.sender.enqueue_control(&pinned(&a1), frame(b"c2")),
            ControlOutcome::Closed
        );
        gate_tx.send_replace(true);
        eventually("the discards", || f.recorder.events().len() == 4).await;
        assert_eq!(a1.written(), vec![b"d1".to_vec()]);
        assert_eq!(a1.down_reason(), Some(DownReason::ManualDisconnect));
        assert_eq!(
            f.recorder.events()[1..],
            [
                Event::Finished(
                    "a".into(),
                    1,
                    SenderLane::Data,
                    b"d1".to_vec(),
                    WriteOutcome::Written
                ),
                Event::ControlDiscarded("a".into(), 1, b"c1".to_vec()),
                Event::DataDiscarded("a".into(), b"d2".to_vec()),
            ]
        );
        let stats = f.sender.stats();
        assert_eq!(
            stats,
            SenderStats {
                data_queued: 2,
                data_written: 1,
                data_discarded: 1,
                control_queued: 1,
                control_discarded: 1,
                ..SenderStats::default()
            }
        );
    }

    #[tokio::test]
    async fn controls_go_before_queued_data_and_each_lane_keeps_its_order() {
        let f = fixture(SECOND, 16, 16);
        let (gate_tx, gate) = watch::channel(false);
        let a1 = FakeConn::new("a", 1, Behaviour::Gate(gate));
        f.layer.set_live(&a1);
        assert_eq!(f.sender.enqueue("a", frame(b"d0")), DataOutcome::Queued);
        eventually("the first write to start", || {
            !f.recorder.events().is_empty()
        })
        .await;
        for (data, control) in [(b"d1", b"c1"), (b"d2", b"c2")] {
            assert_eq!(f.sender.enqueue("a", frame(data)), DataOutcome::Queued);
            assert_eq!(
                f.sender.enqueue_control(&pinned(&a1), frame(control)),
                ControlOutcome::Queued
            );
        }
        gate_tx.send_replace(true);
        eventually("all written", || a1.written().len() == 5).await;
        let expected: Vec<Vec<u8>> = [b"d0", b"c1", b"c2", b"d1", b"d2"]
            .iter()
            .map(|frame| frame.to_vec())
            .collect();
        assert_eq!(a1.written(), expected);
    }

    #[tokio::test]
    async fn an_own_runtime_runs_the_drains_on_its_named_thread() {
        let f = fixture_on(
            &Runtime::Own {
                thread_name: "layer-sender-test".into(),
                world: Handle::current(),
            },
            SECOND,
            16,
            16,
        );
        let a1 = FakeConn::new("a", 1, Behaviour::Normal);
        f.layer.set_live(&a1);
        assert_eq!(f.sender.enqueue("a", frame(b"d")), DataOutcome::Queued);
        eventually("the write", || a1.written().len() == 1).await;
        assert_eq!(
            *lock(&a1.threads),
            vec![Some("layer-sender-test".to_owned())]
        );
        // Dropping the sender shuts it down: its drain ends, then its
        // thread, which drops the runtime and the last hold on the layer.
        drop(f.sender);
        eventually("the sender's thread to end", || {
            Arc::strong_count(&f.layer) == 1
        })
        .await;
    }

    #[tokio::test]
    async fn the_target_reports_the_drain_and_stats() {
        let capabilities = LayerSenderTarget.capabilities();
        assert!(capabilities.drain && capabilities.stats);
    }
}
