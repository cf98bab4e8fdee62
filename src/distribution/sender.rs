//! [`DistSender`]: all outbound node-to-node writes, off the caller's thread.
//!
//! Model, and the invariant each piece protects:
//!
//! - Two lanes, entered with `try_send` only, so enqueueing never awaits
//!   (S1), each bounded per destination node (`depths`): a node's frame is
//!   refused only when that node's own frames fill its depth, never for
//!   another node's backlog (S9). The data lane is best effort: full or
//!   closed ⇒ the frame is dropped and counted (S4). The control lane is
//!   must-deliver (DC-1): full ⇒ the *pinned* connection is marked down
//!   first, then `Overflow` returns, so there is no silent-loss arm.
//! - One drain task, which takes what the lanes hold into per-node turns
//!   (`turns`) and writes one frame of each node with frames per turn, a
//!   node's controls before its data, through one writer mutex per
//!   connection: per-connection FIFO for both lanes (DC-5), and a node
//!   whose writes are slow costs each other node at most one write per
//!   turn (S9).
//! - A control carries the `Arc` of the generation it was enqueued against
//!   and is written only there; once that generation is down it is skipped,
//!   never re-resolved by node onto a redialed socket (DC-2). Data frames are
//!   resolved by node at write time: that is their contract.
//! - Every write is bounded by the write deadline; on expiry the connection is
//!   marked down (`WriteTimeout`) and the drain moves on, so one wedged peer
//!   delays the others by at most one deadline per wedged write (S2), and
//!   by the turns at most one per turn (S9).
//! - The drain owns only the connection manager and its receivers; the
//!   runtime it runs on is dropped without blocking (S5, see `shim::rt`).
//! - Shutdown keeps DC-1: the drain records the frame it holds before its
//!   first await after taking it, so its drop (however it is aborted) marks
//!   down the connection it was writing (a cancelled write leaves half a
//!   frame on the socket), the pinned generation of the control it held, and
//!   that of every control still queued or waiting its turn; a control that
//!   races the shutdown is marked down by its own enqueuer (see
//!   `enqueue_control`).

use crate::shim::time::Duration;
use std::fmt;
use std::io;

use lanesim_target::node::DownReason;

use crate::shim::rt::JoinHandle;

use super::connection::DistConnection;
use super::depths::Depths;
use super::manager::ConnectionManager;
use super::node::NodeName;
use super::turns::{Turn, Turns};
use crate::planted::{Planted, PlantedBug};
use crate::shim::chan::{self, Receiver, Sender, TrySendError};
use crate::shim::probe::{mark, preempt_point, Mark, Point};
use crate::shim::rt::{RuntimeChoice, TaskRuntime};
use crate::shim::sync::{Arc, AtomicBool, AtomicU64, Mutex, Ordering};

/// Default depth of the data lane, per destination node.
pub const DATA_QUEUE_CAP: usize = 1024;
/// Default depth of the control lane, per destination node: small on
/// purpose, a peer that cannot absorb this many pending controls is
/// effectively down.
pub const CONTROL_QUEUE_CAP: usize = 256;
/// Default per-write deadline.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// A data frame for whichever connection `node` has when it is written.
#[derive(Clone, Debug)]
pub struct DataOutbound {
    /// Destination node.
    pub node: NodeName,
    /// The encoded frame (shared, so a broadcast clones a pointer).
    pub frame: Arc<[u8]>,
}

/// A control frame pinned to the connection generation it was enqueued
/// against (DC-2).
#[derive(Clone, Debug)]
pub struct ControlOutbound {
    /// The pinned generation.
    pub connection: Arc<DistConnection>,
    /// The encoded frame.
    pub frame: Arc<[u8]>,
}

/// What happened to a data frame at enqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// In the lane.
    Queued,
    /// Dropped: the lane was full.
    DroppedFull,
    /// Dropped: the sender is shut down.
    DroppedClosed,
}

/// Why `enqueue_control` did not accept a control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlEnqueueError {
    /// The lane was full; the pinned connection is *already* marked down
    /// (`ControlOverflow`), whose down hook delivers the `noconnection`s.
    Overflow,
    /// The sender is shut down.
    Closed,
}

impl fmt::Display for ControlEnqueueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overflow => f.write_str("control lane full; pinned connection marked down"),
            Self::Closed => f.write_str("sender shut down"),
        }
    }
}

impl std::error::Error for ControlEnqueueError {}

/// Which lane a frame travelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderLane {
    /// Best effort, resolved by node at write time.
    Data,
    /// Must deliver, pinned to a generation.
    Control,
}

/// How one drain write ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The whole frame was written.
    Written,
    /// The write failed (the connection is now down, `WriteError`).
    Failed,
    /// The deadline expired (the connection is now down, `WriteTimeout`).
    TimedOut,
}

/// Hooks into the drain, for metrics and for the testbed's S2/S4 checks.
/// Called on the drain task (the discard hooks also from an enqueuer that
/// races a shutdown); keep them quick.
pub trait SenderObserver: Send + Sync {
    /// A write of `frame` to `connection` begins.
    fn write_started(&self, connection: &DistConnection, lane: SenderLane, frame: &[u8]);
    /// That write ended.
    fn write_finished(
        &self,
        connection: &DistConnection,
        lane: SenderLane,
        frame: &[u8],
        outcome: WriteOutcome,
    );
    /// A control was skipped: its pinned generation is down.
    fn control_skipped(&self, connection: &DistConnection, frame: &[u8]);
    /// A data frame was dropped: its node has no live connection.
    fn data_unroutable(&self, node: &NodeName, frame: &[u8]);
    /// The drain ended (shutdown, or its runtime went away) in the middle
    /// of this write; `connection` is marked down.
    fn write_abandoned(&self, connection: &DistConnection, lane: SenderLane, frame: &[u8]) {
        let _ = (connection, lane, frame);
    }
    /// The drain ended with this control not yet written; its pinned
    /// generation is marked down.
    fn control_discarded(&self, pinned: &DistConnection, frame: &[u8]) {
        let _ = (pinned, frame);
    }
    /// The drain ended with this data frame not yet written; it is dropped.
    fn data_discarded(&self, node: &NodeName, frame: &[u8]) {
        let _ = (node, frame);
    }
}

/// How a [`DistSender`] runs.
#[derive(Clone)]
pub struct SenderConfig {
    /// Data lane depth per destination node, at least 1.
    pub data_capacity: usize,
    /// Control lane depth per destination node, at least 1.
    pub control_capacity: usize,
    /// Per-write deadline, greater than zero.
    pub write_timeout: Duration,
    /// Where the drain runs.
    pub runtime: RuntimeChoice,
    /// Drain hooks.
    pub observer: Option<Arc<dyn SenderObserver>>,
    /// Planted bug, if any.
    pub planted: Planted,
}

impl SenderConfig {
    /// The defaults (1024 / 256 / 5 s) on `runtime`.
    #[must_use]
    pub fn new(runtime: RuntimeChoice) -> Self {
        Self {
            data_capacity: DATA_QUEUE_CAP,
            control_capacity: CONTROL_QUEUE_CAP,
            write_timeout: WRITE_TIMEOUT,
            runtime,
            observer: None,
            planted: Planted::none(),
        }
    }
}

/// Why a sender configuration was refused.
#[derive(Debug)]
pub enum SenderConfigError {
    /// A lane of depth 0 would drop (or mark down) on every enqueue.
    ZeroCapacity(&'static str),
    /// A zero deadline would time out every write.
    ZeroWriteTimeout,
    /// The dedicated runtime could not start.
    Runtime(io::Error),
}

impl fmt::Display for SenderConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ZeroCapacity(lane) => write!(f, "{lane} must be at least 1"),
            Self::ZeroWriteTimeout => f.write_str("write_timeout must be greater than zero"),
            Self::Runtime(error) => write!(f, "could not start the sender runtime: {error}"),
        }
    }
}

impl std::error::Error for SenderConfigError {}

/// Counters for S4 accounting: every data frame queued ends in exactly one
/// of `data_written`, `data_no_connection`, `data_failed`, `data_discarded`
/// (or is still queued); every control queued in exactly one of
/// `control_written`, `control_skipped_down`, `control_failed`,
/// `control_discarded`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data frames accepted into the lane.
    pub data_queued: u64,
    /// Data frames dropped at enqueue, their node's share of the lane full.
    pub data_dropped_full: u64,
    /// Data frames refused at enqueue: the sender is shut down.
    pub data_dropped_closed: u64,
    /// Data frames accepted but still queued (or in hand) when the drain
    /// ended: dropped.
    pub data_discarded: u64,
    /// Data frames dropped by the drain: no live connection for the node.
    pub data_no_connection: u64,
    /// Data frames written.
    pub data_written: u64,
    /// Data frames lost with their connection (write error or deadline).
    pub data_failed: u64,
    /// Controls accepted into the lane.
    pub control_queued: u64,
    /// Controls refused with `Overflow`, their node's share of the lane
    /// full (their connection marked down).
    pub control_overflow: u64,
    /// Controls written to their pinned generation.
    pub control_written: u64,
    /// Controls skipped because their pinned generation was down.
    pub control_skipped_down: u64,
    /// Controls whose write failed or timed out (their connection marked
    /// down).
    pub control_failed: u64,
    /// Controls still queued (or in hand) when the drain ended (their
    /// pinned connection marked down).
    pub control_discarded: u64,
}

#[derive(Default)]
struct Counters {
    data_queued: AtomicU64,
    data_dropped_full: AtomicU64,
    data_dropped_closed: AtomicU64,
    data_discarded: AtomicU64,
    data_no_connection: AtomicU64,
    data_written: AtomicU64,
    data_failed: AtomicU64,
    control_queued: AtomicU64,
    control_overflow: AtomicU64,
    control_written: AtomicU64,
    control_skipped_down: AtomicU64,
    control_failed: AtomicU64,
    control_discarded: AtomicU64,
}

/// Release, and `stats` loads with Acquire: a reader that sees a control
/// counted as failed or skipped also sees its connection's down flag. (Free
/// on x86; loom checks it.)
fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Release);
}

/// What the handles and the drain share: the lanes' receiving ends (held
/// here as well as by the drain, so a lane stays connected, and what lands
/// in it stays there, until it is swept), each lane's depth per node, the
/// counters, the observer and the closed flag.
struct Shared {
    data_rx: Receiver<DataOutbound>,
    control_rx: Receiver<ControlOutbound>,
    data_depth: Depths,
    control_depth: Depths,
    counters: Counters,
    observer: Option<Arc<dyn SenderObserver>>,
    /// Set by `shutdown`, the last handle's drop and the drain's drop;
    /// enqueues look before and after they send.
    closed: AtomicBool,
}

impl Shared {
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Empties both lanes for good: every control's pinned generation is
    /// marked down and every frame counted discarded (DC-1, S4). The
    /// drain's drop sweeps, and so does an enqueuer that finds the sender
    /// closed right after its send: a frame that lands after the drain's
    /// last look is still accounted for, and each frame is taken (and
    /// counted) by exactly one sweeper. (Before, such a frame died with
    /// the channel, counted queued and nothing else.)
    fn sweep(&self) {
        self.sweep_with(Vec::new(), Vec::new());
    }

    /// [`Self::sweep`], with the frames the drain had taken into its turns
    /// first: each lane's in the order the lanes took them, so every
    /// control goes before every data frame, as the lanes held them.
    fn sweep_with(&self, turned_controls: Vec<ControlOutbound>, turned_data: Vec<DataOutbound>) {
        let mut controls = 0;
        let lane = std::iter::from_fn(|| self.control_rx.try_recv().ok());
        for item in turned_controls.into_iter().chain(lane) {
            controls += 1;
            self.control_depth.release(item.connection.node());
            item.connection.mark_down(DownReason::ManualDisconnect);
            bump(&self.counters.control_discarded);
            if let Some(observer) = &self.observer {
                observer.control_discarded(&item.connection, &item.frame);
            }
        }
        if controls > 0 {
            mark(Mark::ShutdownWithQueuedControls);
        }
        let lane = std::iter::from_fn(|| self.data_rx.try_recv().ok());
        for item in turned_data.into_iter().chain(lane) {
            self.data_depth.release(&item.node);
            bump(&self.counters.data_discarded);
            if let Some(observer) = &self.observer {
                observer.data_discarded(&item.node, &item.frame);
            }
        }
    }
}

struct SenderInner {
    shared: Arc<Shared>,
    planted: Planted,
    drain: JoinHandle<()>,
    // Last: the drain is aborted before a dedicated runtime shuts down.
    _runtime: TaskRuntime,
}

impl Drop for SenderInner {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        self.drain.abort();
    }
}

/// The outbound sender. Cheap to clone; clones share the lanes and the drain.
#[derive(Clone)]
pub struct DistSender {
    data_tx: Sender<DataOutbound>,
    control_tx: Sender<ControlOutbound>,
    inner: Arc<SenderInner>,
}

impl DistSender {
    /// Starts the drain for `connections`.
    ///
    /// # Errors
    /// A zero capacity or deadline, or a dedicated runtime that cannot start.
    pub fn new(
        connections: ConnectionManager,
        config: SenderConfig,
    ) -> Result<Self, SenderConfigError> {
        if config.data_capacity == 0 {
            return Err(SenderConfigError::ZeroCapacity("data_capacity"));
        }
        if config.control_capacity == 0 {
            return Err(SenderConfigError::ZeroCapacity("control_capacity"));
        }
        if config.write_timeout.is_zero() {
            return Err(SenderConfigError::ZeroWriteTimeout);
        }
        let runtime = TaskRuntime::start(config.runtime, config.planted)
            .map_err(SenderConfigError::Runtime)?;
        // Unbounded channels: the depths bound what each node may hold.
        let (data_tx, data_rx) = chan::unbounded();
        let (control_tx, control_rx) = chan::unbounded();
        let shared = Arc::new(Shared {
            data_rx,
            control_rx,
            data_depth: Depths::new(config.data_capacity, config.planted),
            control_depth: Depths::new(config.control_capacity, config.planted),
            counters: Counters::default(),
            observer: config.observer,
            closed: AtomicBool::new(false),
        });
        let drain = Drain {
            connections,
            shared: Arc::clone(&shared),
            write_timeout: config.write_timeout,
            planted: config.planted,
            in_hand: Mutex::new(None),
            turns: Mutex::new(Turns::new(config.planted)),
        };
        let drain = runtime.spawn(drain.run());
        Ok(Self {
            data_tx,
            control_tx,
            inner: Arc::new(SenderInner {
                shared,
                planted: config.planted,
                drain,
                _runtime: runtime,
            }),
        })
    }

    /// Queues a data frame for `node`. Never awaits; drops (and says so) when
    /// `node`'s share of the lane is full or the sender shut down.
    pub fn enqueue(&self, node: NodeName, frame: Arc<[u8]>) -> Enqueued {
        let shared = &self.inner.shared;
        let counters = &shared.counters;
        if shared.is_closed() {
            bump(&counters.data_dropped_closed);
            return Enqueued::DroppedClosed;
        }
        if !shared.data_depth.admit(&node) {
            mark(Mark::DataDroppedFull);
            bump(&counters.data_dropped_full);
            return Enqueued::DroppedFull;
        }
        match self.data_tx.try_send(DataOutbound { node, frame }) {
            Ok(()) => {
                bump(&counters.data_queued);
                // Raced a shutdown: the drain may have swept for the last
                // time already; sweep what it may have missed.
                if shared.is_closed() {
                    shared.sweep();
                }
                Enqueued::Queued
            }
            // Never full: the lane is unbounded, its depth kept above.
            Err(TrySendError::Full(item)) => {
                shared.data_depth.release(&item.node);
                mark(Mark::DataDroppedFull);
                bump(&counters.data_dropped_full);
                Enqueued::DroppedFull
            }
            Err(TrySendError::Disconnected(item)) => {
                shared.data_depth.release(&item.node);
                bump(&counters.data_dropped_closed);
                Enqueued::DroppedClosed
            }
        }
    }

    /// Queues a control pinned to `item.connection`. Never awaits. When its
    /// node's share of the lane is full the pinned connection is marked
    /// down *before* `Overflow` returns (its down hook may run inline, on
    /// this thread).
    ///
    /// # Errors
    /// `Overflow` (connection already down) or `Closed`.
    pub fn enqueue_control(&self, item: ControlOutbound) -> Result<(), ControlEnqueueError> {
        let shared = &self.inner.shared;
        let counters = &shared.counters;
        if shared.is_closed() {
            mark(Mark::ControlRefusedClosed);
            return Err(ControlEnqueueError::Closed);
        }
        if !shared.control_depth.admit(item.connection.node()) {
            return self.overflow(&item);
        }
        match self.control_tx.try_send(item) {
            Ok(()) => {
                bump(&counters.control_queued);
                // Raced a shutdown: the drain may already have emptied the
                // lane for the last time. Either it took this control (and
                // marked its generation down) or our sweep takes it now.
                if shared.is_closed() {
                    mark(Mark::ControlRacedShutdown);
                    shared.sweep();
                }
                Ok(())
            }
            // Never full: the lane is unbounded, its depth kept above.
            Err(TrySendError::Full(item)) => {
                shared.control_depth.release(item.connection.node());
                self.overflow(&item)
            }
            Err(TrySendError::Disconnected(item)) => {
                shared.control_depth.release(item.connection.node());
                mark(Mark::ControlRefusedClosed);
                Err(ControlEnqueueError::Closed)
            }
        }
    }

    /// Refuses `item`, its node's share of the lane full: its pinned
    /// connection is marked down first (DC-1).
    fn overflow(&self, item: &ControlOutbound) -> Result<(), ControlEnqueueError> {
        if self.inner.planted.has(PlantedBug::SilentControlOverflow) {
            return Ok(());
        }
        mark(Mark::ControlOverflowMarkedDown);
        item.connection.mark_down_control_overflow();
        bump(&self.inner.shared.counters.control_overflow);
        Err(ControlEnqueueError::Overflow)
    }

    /// Stops the drain. Queued data frames are dropped; every queued control's
    /// pinned connection, and the connection being written, are marked down
    /// (`ManualDisconnect`), so no accepted control is lost silently (DC-1).
    /// Later enqueues report closed. Idempotent.
    pub fn shutdown(&self) {
        self.inner.shared.closed.store(true, Ordering::SeqCst);
        self.inner.drain.abort();
    }

    /// The counters now.
    #[must_use]
    pub fn stats(&self) -> SenderStats {
        let c = &self.inner.shared.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Acquire);
        SenderStats {
            data_queued: load(&c.data_queued),
            data_dropped_full: load(&c.data_dropped_full),
            data_dropped_closed: load(&c.data_dropped_closed),
            data_discarded: load(&c.data_discarded),
            data_no_connection: load(&c.data_no_connection),
            data_written: load(&c.data_written),
            data_failed: load(&c.data_failed),
            control_queued: load(&c.control_queued),
            control_overflow: load(&c.control_overflow),
            control_written: load(&c.control_written),
            control_skipped_down: load(&c.control_skipped_down),
            control_failed: load(&c.control_failed),
            control_discarded: load(&c.control_discarded),
        }
    }
}

/// The drain task's state: the connection manager and what it shares with
/// the handles, never the handles themselves (no `Arc` cycle).
struct Drain {
    connections: ConnectionManager,
    shared: Arc<Shared>,
    write_timeout: Duration,
    planted: Planted,
    /// The frame taken off a lane and not yet disposed of, if any. Recorded
    /// before the drain's first await after taking it, so however the drain
    /// ends (it is aborted at any await) the frame is accounted for and a
    /// control's pinned generation is marked down (DC-1).
    in_hand: Mutex<Option<InHand>>,
    /// The frames taken off the lanes, waiting for their node's turn
    /// (`turns`). Swept with the lanes when the drain ends.
    turns: Mutex<Turns>,
}

/// A frame the drain holds, and the connection it is being written to once
/// the write began.
struct InHand {
    lane: SenderLane,
    frame: Arc<[u8]>,
    /// A control's pinned generation; `None` for data.
    pinned: Option<Arc<DistConnection>>,
    /// A data frame's node.
    node: Option<NodeName>,
    /// Set when the write begins.
    writing: Option<Arc<DistConnection>>,
}

impl Drop for Drain {
    /// Runs when the drain ends, however: finished, aborted, or dropped with
    /// its runtime.
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        if let Some(held) = self.in_hand.lock().take() {
            self.discard_in_hand(held);
        }
        let (controls, data) = {
            let mut turns = self.turns.lock();
            (turns.drain_controls(), turns.drain_data())
        };
        self.shared.sweep_with(controls, data);
    }
}

impl Drain {
    async fn run(self) {
        let mut control_open = true;
        let mut data_open = true;
        loop {
            // One pass of the select per frame, as when the drain wrote
            // straight from the lanes: a frame from either lane joins the
            // turns, or, with the lanes empty, the turns already hold one.
            let waiting = !self.turns.lock().is_empty();
            tokio::select! {
                biased;
                control = self.shared.control_rx.recv_async(), if control_open => match control {
                    Ok(item) => self.turns.lock().push_control(item),
                    Err(_) => {
                        control_open = false;
                        continue;
                    }
                },
                data = self.shared.data_rx.recv_async(), if data_open => match data {
                    Ok(item) => self.turns.lock().push_data(item),
                    Err(_) => {
                        data_open = false;
                        continue;
                    }
                },
                () = std::future::ready(()), if waiting => {}
                else => break,
            }
            self.take_in();
            // Out of the lane: its node's depth has room again, and the
            // frame is in hand from here (`hold`, before any await).
            let turn = self.turns.lock().next();
            match turn {
                Some(Turn::Control(item)) => {
                    self.shared.control_depth.release(item.connection.node());
                    self.write_control(item).await;
                }
                Some(Turn::Data(item)) => {
                    self.shared.data_depth.release(&item.node);
                    self.write_data(item).await;
                }
                None => {}
            }
        }
    }

    /// Takes everything the lanes hold now into the turns, without
    /// waiting: a node's turn comes only once its frames are seen.
    fn take_in(&self) {
        let mut turns = self.turns.lock();
        while let Ok(item) = self.shared.control_rx.try_recv() {
            turns.push_control(item);
        }
        while let Ok(item) = self.shared.data_rx.try_recv() {
            turns.push_data(item);
        }
    }

    /// The drain ended holding `held`: a write cut mid-frame leaves the
    /// stream unusable, and a control's pinned generation must go down.
    fn discard_in_hand(&self, held: InHand) {
        if let Some(connection) = &held.writing {
            mark(Mark::ShutdownMidWrite);
            connection.mark_down(DownReason::ManualDisconnect);
            if let Some(observer) = &self.shared.observer {
                observer.write_abandoned(connection, held.lane, &held.frame);
            }
        }
        if let Some(pinned) = &held.pinned {
            pinned.mark_down(DownReason::ManualDisconnect);
            bump(&self.shared.counters.control_discarded);
            if let (None, Some(observer)) = (&held.writing, &self.shared.observer) {
                observer.control_discarded(pinned, &held.frame);
            }
        }
        if let Some(node) = &held.node {
            bump(&self.shared.counters.data_discarded);
            if let (None, Some(observer)) = (&held.writing, &self.shared.observer) {
                observer.data_discarded(node, &held.frame);
            }
        }
    }

    fn hold(&self, held: InHand) {
        *self.in_hand.lock() = Some(held);
    }

    fn release(&self) {
        *self.in_hand.lock() = None;
    }

    async fn write_control(&self, item: ControlOutbound) {
        let ControlOutbound { connection, frame } = item;
        self.hold(InHand {
            lane: SenderLane::Control,
            frame: Arc::clone(&frame),
            pinned: Some(Arc::clone(&connection)),
            node: None,
            writing: None,
        });
        // Another thread may mark the pinned generation down from here on.
        preempt_point(Point::DrainPicked).await;
        let target = if self.planted.has(PlantedBug::ControlResolvedByNode) {
            self.connections.get_connection(connection.node())
        } else {
            Some(Arc::clone(&connection))
        };
        // Pinned and down: skipped, never re-resolved by node (DC-2). The
        // down already covers it (DC-1).
        let Some(target) = target.filter(|connection| !connection.is_down()) else {
            self.release();
            mark(Mark::ControlSkippedPinnedDown);
            if let Some(observer) = &self.shared.observer {
                observer.control_skipped(&connection, &frame);
            }
            bump(&self.shared.counters.control_skipped_down);
            return;
        };
        self.write(&target, SenderLane::Control, &frame).await;
    }

    async fn write_data(&self, item: DataOutbound) {
        let DataOutbound { node, frame } = item;
        self.hold(InHand {
            lane: SenderLane::Data,
            frame: Arc::clone(&frame),
            pinned: None,
            node: Some(node.clone()),
            writing: None,
        });
        preempt_point(Point::DrainPicked).await;
        // Connected only: the send path never dials.
        let Some(connection) = self.connections.get_connection(&node) else {
            self.release();
            mark(Mark::DataUnroutable);
            if let Some(observer) = &self.shared.observer {
                observer.data_unroutable(&node, &frame);
            }
            bump(&self.shared.counters.data_no_connection);
            return;
        };
        self.write(&connection, SenderLane::Data, &frame).await;
    }

    /// One bounded write of the frame in hand, counted.
    async fn write(&self, connection: &Arc<DistConnection>, lane: SenderLane, frame: &[u8]) {
        // The connection was up when looked at; it may go down before the
        // write takes the writer lock, which then refuses (DC-2).
        preempt_point(Point::DrainBeforeWrite).await;
        if let Some(observer) = &self.shared.observer {
            observer.write_started(connection, lane, frame);
        }
        if let Some(held) = self.in_hand.lock().as_mut() {
            held.writing = Some(Arc::clone(connection));
        }
        let deadline =
            (!self.planted.has(PlantedBug::NoWriteDeadline)).then_some(self.write_timeout);
        // The connection marks itself down on an error or a missed
        // deadline, before it lets go of its writer.
        let outcome = match connection.write_frame(frame, deadline).await {
            Ok(()) => WriteOutcome::Written,
            Err(error) if error.kind() == io::ErrorKind::TimedOut => WriteOutcome::TimedOut,
            Err(_) => WriteOutcome::Failed,
        };
        self.release();
        let c = &self.shared.counters;
        bump(match (lane, outcome) {
            (SenderLane::Control, WriteOutcome::Written) => &c.control_written,
            (SenderLane::Control, WriteOutcome::Failed | WriteOutcome::TimedOut) => {
                &c.control_failed
            }
            (SenderLane::Data, WriteOutcome::Written) => &c.data_written,
            (SenderLane::Data, WriteOutcome::Failed | WriteOutcome::TimedOut) => &c.data_failed,
        });
        if let Some(observer) = &self.shared.observer {
            observer.write_finished(connection, lane, frame, outcome);
        }
    }
}
