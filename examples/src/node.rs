//! A node: a sender and the connection layer under it, written from a short
//! spec.
//!
//! Design:
//!
//! - One table, `Mutex<State>`, maps a peer's name to its live generation
//!   ([`Link`]) and keeps the per-peer generation counter. A generation is
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

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lanesim_target::handshake::Nonces;
use lanesim_target::net::{BoxRead, BoxWrite, Connected, Listener, Transport};
use lanesim_target::node::{
    BoxFuture, Conn, Connection, ControlOutcome, DataOutcome, DialFailure, Down, DownReason,
    Generation, Node, NodeCapabilities, NodeReports, NodeSetup, NodeTarget, Origin, Runtime,
    SenderLane, SenderStats, Up, WriteOutcome,
};
use lanesim_target::probe::Sites;
use lanesim_target::wire::{self, Frame};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::runtime::Handle;
use tokio::sync::{watch, Notify};
use tokio::time::{self, Instant, Interval, MissedTickBehavior};

use crate::handshake;

/// How long the accept loop backs off after a failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 16 * 1024;

/// Distinguishes nodes, so a handle from another node is never accepted as
/// one of ours.
static NEXT_NODE_ID: AtomicU64 = AtomicU64::new(1);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The node target.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExampleNode;

impl NodeTarget for ExampleNode {
    fn capabilities(&self) -> NodeCapabilities {
        NodeCapabilities {
            accepts: true,
            heartbeat: true,
            drain: true,
            stats: true,
            table: true,
            sites: Sites::default(),
        }
    }

    fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
        let shared = Shared::new(setup)?;
        Ok(Box::new(ExampleNodeHandle { shared }))
    }
}

// ---------------------------------------------------------------------------
// Generations

/// One frame waiting in a generation's queue.
enum Item {
    Data(Arc<[u8]>),
    Control(Arc<[u8]>),
}

impl Item {
    fn lane(&self) -> SenderLane {
        match self {
            Item::Data(_) => SenderLane::Data,
            Item::Control(_) => SenderLane::Control,
        }
    }

    fn frame(&self) -> &Arc<[u8]> {
        match self {
            Item::Data(frame) | Item::Control(frame) => frame,
        }
    }
}

/// A generation's outbound queue.
#[derive(Default)]
struct Queue {
    items: VecDeque<Item>,
    /// The lane of the frame the writer is writing now, if any.
    in_flight: Option<SenderLane>,
    /// The writer has gone: nothing more is accepted.
    closed: bool,
}

/// Makes sure `down` is never reported before `up`.
#[derive(Default)]
struct Gate {
    up_reported: bool,
    pending_down: Option<(DownReason, Option<u64>)>,
}

/// One connection generation.
struct Link {
    owner: u64,
    node: String,
    generation: u64,
    origin: Origin,
    local: String,
    peer: String,
    /// Set once, under the table lock.
    down: AtomicBool,
    /// Raised right after `down` is set, to stop this generation's tasks.
    down_signal: watch::Sender<bool>,
    queue: Mutex<Queue>,
    wake: Notify,
    gate: Mutex<Gate>,
}

impl Connection for Link {
    fn node(&self) -> &str {
        &self.node
    }

    fn generation(&self) -> u64 {
        self.generation
    }

    fn is_down(&self) -> bool {
        self.down.load(Ordering::SeqCst)
    }

    fn local_addr(&self) -> &str {
        &self.local
    }

    fn peer_addr(&self) -> &str {
        &self.peer
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What pushing onto a generation's queue did.
enum Push {
    Queued,
    /// The sender is shut down.
    ShutDown,
    /// The generation's writer is gone (it is down).
    Dead,
}

impl Link {
    fn id(&self) -> Generation<'_> {
        Generation {
            node: &self.node,
            generation: self.generation,
        }
    }

    fn push(&self, sender_closed: &AtomicBool, item: Item) -> Push {
        let mut queue = lock(&self.queue);
        if sender_closed.load(Ordering::SeqCst) {
            return Push::ShutDown;
        }
        if queue.closed {
            return Push::Dead;
        }
        queue.items.push_back(item);
        drop(queue);
        self.wake.notify_one();
        Push::Queued
    }
}

// ---------------------------------------------------------------------------
// The node's shared state

#[derive(Default)]
struct State {
    live: HashMap<String, Arc<Link>>,
    generations: HashMap<String, u64>,
}

#[derive(Default)]
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

struct Shared {
    id: u64,
    name: String,
    transport: Arc<dyn Transport>,
    handle: Handle,
    connect_timeout: Duration,
    write_timeout: Duration,
    heartbeat: Option<Duration>,
    max_frame: u64,
    data_capacity: usize,
    control_capacity: usize,
    reports: NodeReports,
    cookie: Vec<u8>,
    nonces: Arc<dyn Nonces>,
    state: Mutex<State>,
    /// The sender is shut down: enqueues are refused.
    closed: AtomicBool,
    shutdown_signal: watch::Sender<bool>,
    /// The node is dropped: every task ends.
    stop_signal: watch::Sender<bool>,
    data_pending: AtomicUsize,
    control_pending: AtomicUsize,
    counters: Counters,
}

fn reserve(count: &AtomicUsize, capacity: usize) -> bool {
    count
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < capacity).then_some(n + 1)
        })
        .is_ok()
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// Waits until a flag is raised (or its sender is gone).
async fn raised(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|raised| *raised).await;
}

/// `f`, bounded by `limit` if there is one: `None` when it ran out.
async fn bounded<F: Future>(limit: Option<Duration>, f: F) -> Option<F::Output> {
    match limit {
        Some(limit) => time::timeout(limit, f).await.ok(),
        None => Some(f.await),
    }
}

impl Shared {
    fn new(setup: NodeSetup) -> Result<Arc<Self>, String> {
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

    fn live(&self, node: &str) -> Option<Arc<Link>> {
        lock(&self.state).live.get(node).cloned()
    }

    fn release(&self, lane: SenderLane) {
        let count = match lane {
            SenderLane::Data => &self.data_pending,
            SenderLane::Control => &self.control_pending,
        };
        count.fetch_sub(1, Ordering::SeqCst);
    }

    // --- registering and taking down --------------------------------------

    /// Whether a new socket of `origin` should replace `existing`, both to
    /// the same peer.
    fn replaces(&self, existing: &Link, origin: Origin) -> bool {
        match (existing.origin, origin) {
            // Our own dials raced: keep the one registered first.
            (Origin::Dialed, Origin::Dialed) => false,
            // The peer dialed again: it has given up on the old socket.
            (Origin::Accepted, Origin::Accepted) => true,
            // A cross-dial: keep the socket dialed by the lower name.
            (Origin::Dialed, Origin::Accepted) => existing.node.as_str() < self.name.as_str(),
            (Origin::Accepted, Origin::Dialed) => self.name.as_str() < existing.node.as_str(),
        }
    }

    /// Registers a connected socket as `node`'s new generation and starts
    /// its tasks; or, when the tie-break keeps the existing one, closes the
    /// socket and answers the existing one.
    fn install(
        self: &Arc<Self>,
        node: &str,
        origin: Origin,
        connected: Connected,
        leftover: Vec<u8>,
    ) -> Result<Arc<Link>, Arc<Link>> {
        let Connected {
            read,
            write,
            peer,
            local,
        } = connected;
        let (link, displaced) = {
            let mut state = lock(&self.state);
            if let Some(existing) = state.live.get(node) {
                if !self.replaces(existing, origin) {
                    return Err(Arc::clone(existing));
                }
            }
            let counter = state.generations.entry(node.to_owned()).or_insert(0);
            *counter += 1;
            let link = Arc::new(Link {
                owner: self.id,
                node: node.to_owned(),
                generation: *counter,
                origin,
                local,
                peer,
                down: AtomicBool::new(false),
                down_signal: watch::channel(false).0,
                queue: Mutex::new(Queue::default()),
                wake: Notify::new(),
                gate: Mutex::new(Gate::default()),
            });
            let displaced = state.live.insert(node.to_owned(), Arc::clone(&link));
            if let Some(old) = &displaced {
                old.down.store(true, Ordering::SeqCst);
            }
            (link, displaced)
        };
        if let Some(old) = displaced {
            old.down_signal.send_replace(true);
            self.report_down(&old, DownReason::SimultaneousConnect, Some(link.generation));
        }
        self.report_up(&link);

        let reader = Arc::clone(self);
        let reader_link = Arc::clone(&link);
        self.handle
            .spawn(async move { reader.run_reader(reader_link, read, leftover).await });
        let writer = Writer::new(Arc::clone(self), Arc::clone(&link), write);
        self.handle.spawn(writer.run());
        Ok(link)
    }

    /// Takes `link` down with `reason`, unless it is down already. Returns
    /// whether this call did it.
    fn take_down(&self, link: &Link, reason: DownReason) -> bool {
        let table = {
            let mut state = lock(&self.state);
            if link.down.swap(true, Ordering::SeqCst) {
                return false;
            }
            if state
                .live
                .get(&link.node)
                .is_some_and(|current| std::ptr::eq(Arc::as_ptr(current), link))
            {
                state.live.remove(&link.node);
            }
            state.live.get(&link.node).map(|current| current.generation)
        };
        link.down_signal.send_replace(true);
        self.report_down(link, reason, table);
        true
    }

    fn report_up(&self, link: &Arc<Link>) {
        self.reports.up(Up {
            node: &link.node,
            generation: link.generation,
            origin: link.origin,
            local_addr: &link.local,
            peer_addr: &link.peer,
        });
        let pending = {
            let mut gate = lock(&link.gate);
            gate.up_reported = true;
            gate.pending_down.take()
        };
        if let Some((reason, table)) = pending {
            self.emit_down(link, reason, table);
        }
    }

    fn report_down(&self, link: &Link, reason: DownReason, table: Option<u64>) {
        let now = {
            let mut gate = lock(&link.gate);
            if gate.up_reported {
                true
            } else {
                gate.pending_down = Some((reason, table));
                false
            }
        };
        if now {
            self.emit_down(link, reason, table);
        }
    }

    fn emit_down(&self, link: &Link, reason: DownReason, table: Option<u64>) {
        self.reports.down(Down {
            node: &link.node,
            generation: link.generation,
            reason,
            table,
        });
    }

    // --- queue accounting --------------------------------------------------

    /// Takes the next frame off `link`'s queue for writing.
    fn pop(&self, link: &Link) -> Option<Item> {
        let mut queue = lock(&link.queue);
        if self.closed.load(Ordering::SeqCst) {
            return None;
        }
        let item = queue.items.pop_front()?;
        queue.in_flight = Some(item.lane());
        drop(queue);
        self.release(item.lane());
        Some(item)
    }

    /// Accounts for a frame that cannot be written because its generation
    /// is down.
    fn account_dead(&self, link: &Link, item: &Item) {
        match item {
            Item::Data(frame) => {
                bump(&self.counters.data_no_connection);
                self.reports.data_unroutable(&link.node, frame);
            }
            Item::Control(frame) => {
                bump(&self.counters.control_skipped);
                self.reports.control_skipped(link.id(), frame);
            }
        }
    }

    /// Closes a down generation's queue and accounts for what was left.
    fn drain_dead(&self, link: &Arc<Link>) {
        let items = {
            let mut queue = lock(&link.queue);
            queue.closed = true;
            queue.in_flight = None;
            std::mem::take(&mut queue.items)
        };
        for item in &items {
            self.release(item.lane());
            self.account_dead(link, item);
        }
    }

    /// Shutdown: discards `link`'s queue; a generation with a control
    /// queued (or being written) goes down.
    fn discard_queue(&self, link: &Arc<Link>) {
        let (items, control_in_flight) = {
            let mut queue = lock(&link.queue);
            let in_flight = queue.in_flight == Some(SenderLane::Control);
            (std::mem::take(&mut queue.items), in_flight)
        };
        let has_control = control_in_flight || items.iter().any(|i| matches!(i, Item::Control(_)));
        if has_control {
            self.take_down(link, DownReason::ManualDisconnect);
        }
        for item in &items {
            self.release(item.lane());
            match item {
                Item::Data(frame) => {
                    bump(&self.counters.data_discarded);
                    self.reports.data_discarded(&link.node, frame);
                }
                Item::Control(frame) => {
                    bump(&self.counters.control_discarded);
                    self.reports.control_discarded(link.id(), frame);
                }
            }
        }
    }

    // --- the public operations --------------------------------------------

    async fn dial(self: &Arc<Self>, node: &str, addr: &str) -> Result<Conn, DialFailure> {
        if !valid_name(node) {
            return Err(DialFailure::BadName);
        }
        if let Some(live) = self.live(node) {
            return Ok(live as Conn);
        }
        let nonce = self.nonces.next();
        let connect = async {
            let mut connected = self
                .transport
                .connect(addr)
                .await
                .map_err(|_| DialFailure::Io)?;
            let leftover =
                handshake::dial(&mut connected, &self.name, node, &self.cookie, nonce).await?;
            Ok::<_, DialFailure>((connected, leftover))
        };
        let (connected, leftover) = time::timeout(self.connect_timeout, connect)
            .await
            .map_err(|_| DialFailure::Timeout)??;
        match self.install(node, Origin::Dialed, connected, leftover) {
            Ok(link) | Err(link) => Ok(link as Conn),
        }
    }

    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        if self.closed.load(Ordering::SeqCst) {
            return DataOutcome::DroppedClosed;
        }
        if !reserve(&self.data_pending, self.data_capacity) {
            return DataOutcome::DroppedFull;
        }
        let Some(link) = self.live(node) else {
            self.release(SenderLane::Data);
            bump(&self.counters.data_queued);
            bump(&self.counters.data_no_connection);
            self.reports.data_unroutable(node, &frame);
            return DataOutcome::Queued;
        };
        match link.push(&self.closed, Item::Data(Arc::clone(&frame))) {
            Push::Queued => {
                bump(&self.counters.data_queued);
                DataOutcome::Queued
            }
            Push::ShutDown => {
                self.release(SenderLane::Data);
                DataOutcome::DroppedClosed
            }
            Push::Dead => {
                self.release(SenderLane::Data);
                bump(&self.counters.data_queued);
                bump(&self.counters.data_no_connection);
                self.reports.data_unroutable(node, &frame);
                DataOutcome::Queued
            }
        }
    }

    fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome {
        if self.closed.load(Ordering::SeqCst) {
            return ControlOutcome::Closed;
        }
        let Some(link) = pinned.as_any().downcast_ref::<Link>() else {
            // Not a connection of this implementation: nothing to pin to.
            return ControlOutcome::Closed;
        };
        if link.owner != self.id {
            return ControlOutcome::Closed;
        }
        if !reserve(&self.control_pending, self.control_capacity) {
            self.take_down(link, DownReason::ControlOverflow);
            return ControlOutcome::Overflow;
        }
        match link.push(&self.closed, Item::Control(Arc::clone(&frame))) {
            Push::Queued => {
                bump(&self.counters.control_queued);
                ControlOutcome::Queued
            }
            Push::ShutDown => {
                self.release(SenderLane::Control);
                ControlOutcome::Closed
            }
            Push::Dead => {
                self.release(SenderLane::Control);
                bump(&self.counters.control_queued);
                bump(&self.counters.control_skipped);
                self.reports.control_skipped(link.id(), &frame);
                ControlOutcome::Queued
            }
        }
    }

    fn shutdown(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.shutdown_signal.send_replace(true);
        let links: Vec<Arc<Link>> = lock(&self.state).live.values().cloned().collect();
        for link in &links {
            self.discard_queue(link);
        }
    }

    fn disconnect(&self, node: &str) {
        if let Some(link) = self.live(node) {
            self.take_down(&link, DownReason::ManualDisconnect);
        }
    }

    /// The node is dropped: shut the sender, take every generation down,
    /// and end every task.
    fn stop(&self) {
        self.shutdown();
        let links: Vec<Arc<Link>> = lock(&self.state).live.values().cloned().collect();
        for link in &links {
            self.take_down(link, DownReason::ManualDisconnect);
        }
        self.stop_signal.send_replace(true);
    }

    // --- accepting ----------------------------------------------------------

    async fn accept_loop(self: Arc<Self>, mut listener: Box<dyn Listener>) {
        let mut stop = self.stop_signal.subscribe();
        loop {
            let accepted = tokio::select! {
                biased;
                () = raised(&mut stop) => return,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok(connected) => {
                    let shared = Arc::clone(&self);
                    self.handle
                        .spawn(async move { shared.handshake(connected).await });
                }
                Err(_) => {
                    tokio::select! {
                        biased;
                        () = raised(&mut stop) => return,
                        () = time::sleep(ACCEPT_BACKOFF) => {}
                    }
                }
            }
        }
    }

    /// Runs an accepted socket's handshake and registers it under the
    /// name it proved. A socket that does not finish it in time, or whose
    /// proof is wrong, is closed.
    async fn handshake(self: Arc<Self>, mut connected: Connected) {
        let mut stop = self.stop_signal.subscribe();
        let nonce = self.nonces.next();
        let hello = tokio::select! {
            biased;
            () = raised(&mut stop) => return,
            hello = time::timeout(
                self.connect_timeout,
                handshake::accept(&mut connected, &self.name, &self.cookie, nonce),
            ) => hello,
        };
        let Ok(Some((name, leftover))) = hello else {
            return;
        };
        if !valid_name(&name) {
            return;
        }
        // The loser of a tie-break is simply closed (dropped) here.
        let _ = self.install(&name, Origin::Accepted, connected, leftover);
    }

    // --- reading ------------------------------------------------------------

    async fn run_reader(self: Arc<Self>, link: Arc<Link>, mut read: BoxRead, mut buf: Vec<u8>) {
        let mut down = link.down_signal.subscribe();
        let mut stop = self.stop_signal.subscribe();
        let mut chunk = vec![0_u8; READ_CHUNK];
        loop {
            let mut used = 0;
            loop {
                if link.is_down() {
                    return;
                }
                match wire::decode(&buf[used..], self.max_frame) {
                    Ok(Some((frame, len))) => {
                        used += len;
                        if let Frame::Data { control, payload } = frame {
                            let delivered = catch_unwind(AssertUnwindSafe(|| {
                                self.reports.frame(link.id(), control, payload);
                            }));
                            if delivered.is_err() {
                                self.take_down(&link, DownReason::HandlerPanicked);
                                return;
                            }
                        }
                    }
                    Ok(None) => break,
                    Err(_) => {
                        self.take_down(&link, DownReason::ReadError);
                        return;
                    }
                }
            }
            buf.drain(..used);

            let outcome = tokio::select! {
                biased;
                () = raised(&mut stop) => return,
                () = raised(&mut down) => return,
                outcome = bounded(self.heartbeat, read.read(&mut chunk)) => outcome,
            };
            let reason = match outcome {
                Some(Ok(0)) if buf.is_empty() => DownReason::PeerClosed,
                Some(Ok(0) | Err(_)) => DownReason::ReadError,
                Some(Ok(n)) => {
                    buf.extend_from_slice(&chunk[..n]);
                    continue;
                }
                None => DownReason::HeartbeatTimeout,
            };
            self.take_down(&link, reason);
            return;
        }
    }
}

// ---------------------------------------------------------------------------
// Writing

/// How one write attempt ended.
enum Attempt {
    Written,
    Failed,
    TimedOut,
    /// The generation went down (someone else took it down) mid-write.
    Down,
    /// Shutdown (or the node's end) stopped the write.
    Abandoned,
}

async fn write_whole(out: &mut BoxWrite, bytes: &[u8], written: &mut usize) -> io::Result<()> {
    while *written < bytes.len() {
        let n = out.write(&bytes[*written..]).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        *written += n;
    }
    out.flush().await
}

async fn next_tick(keepalive: &mut Option<Interval>) {
    match keepalive {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// A generation's writer task: owns the write half.
struct Writer {
    shared: Arc<Shared>,
    link: Arc<Link>,
    out: BoxWrite,
    down: watch::Receiver<bool>,
    shut: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
    keepalive: Option<Interval>,
}

impl Writer {
    fn new(shared: Arc<Shared>, link: Arc<Link>, out: BoxWrite) -> Self {
        let keepalive = shared.heartbeat.map(|tick| {
            let period = (tick / 3).max(Duration::from_millis(1));
            let mut interval = time::interval_at(Instant::now() + period, period);
            interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
            interval
        });
        Self {
            down: link.down_signal.subscribe(),
            shut: shared.shutdown_signal.subscribe(),
            stop: shared.stop_signal.subscribe(),
            shared,
            link,
            out,
            keepalive,
        }
    }

    async fn run(mut self) {
        loop {
            if self.link.is_down() || *self.stop.borrow() {
                break;
            }
            let shut = *self.shut.borrow();
            if !shut {
                if let Some(item) = self.shared.pop(&self.link) {
                    self.send(item).await;
                    continue;
                }
            }
            tokio::select! {
                biased;
                () = raised(&mut self.stop) => break,
                () = raised(&mut self.down) => break,
                () = raised(&mut self.shut), if !shut => {
                    self.shared.discard_queue(&self.link);
                }
                () = self.link.wake.notified(), if !shut => {}
                () = next_tick(&mut self.keepalive) => self.send_keepalive().await,
            }
        }
        if !self.link.is_down() {
            // Only when the node itself ends.
            self.shared
                .take_down(&self.link, DownReason::ManualDisconnect);
        }
        self.shared.drain_dead(&self.link);
    }

    /// One whole write under the write deadline; `written` bytes made it.
    async fn write(&mut self, bytes: &[u8], abandon_on_shutdown: bool) -> (Attempt, usize) {
        let mut written = 0;
        let limit = self.shared.write_timeout;
        let attempt = {
            let Self {
                out,
                down,
                shut,
                stop,
                ..
            } = self;
            let io = time::timeout(limit, write_whole(out, bytes, &mut written));
            tokio::select! {
                biased;
                () = raised(shut), if abandon_on_shutdown => Attempt::Abandoned,
                () = raised(down) => Attempt::Down,
                () = raised(stop) => Attempt::Abandoned,
                result = io => match result {
                    Ok(Ok(())) => Attempt::Written,
                    Ok(Err(_)) => Attempt::Failed,
                    Err(_) => Attempt::TimedOut,
                },
            }
        };
        (attempt, written)
    }

    fn wrote(&mut self) {
        if let Some(interval) = &mut self.keepalive {
            interval.reset();
        }
    }

    async fn send_keepalive(&mut self) {
        let (attempt, _) = self.write(&wire::KEEPALIVE, false).await;
        match attempt {
            Attempt::Written => {}
            Attempt::Failed => {
                self.shared.take_down(&self.link, DownReason::WriteError);
            }
            Attempt::TimedOut => {
                self.shared.take_down(&self.link, DownReason::WriteTimeout);
            }
            Attempt::Down | Attempt::Abandoned => {}
        }
    }

    async fn send(&mut self, item: Item) {
        let lane = item.lane();
        if self.link.is_down() {
            lock(&self.link.queue).in_flight = None;
            self.shared.account_dead(&self.link, &item);
            return;
        }
        let frame = Arc::clone(item.frame());
        let shared = Arc::clone(&self.shared);
        let reports = &shared.reports;
        let counters = &shared.counters;
        let (written_counter, failed_counter, discarded_counter) = match lane {
            SenderLane::Data => (
                &counters.data_written,
                &counters.data_failed,
                &counters.data_discarded,
            ),
            SenderLane::Control => (
                &counters.control_written,
                &counters.control_failed,
                &counters.control_discarded,
            ),
        };

        reports.write_started(self.link.id(), lane, &frame);
        let (attempt, written) = self.write(&frame, true).await;
        lock(&self.link.queue).in_flight = None;
        match attempt {
            Attempt::Written => {
                self.wrote();
                bump(written_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::Written);
            }
            Attempt::Failed => {
                shared.take_down(&self.link, DownReason::WriteError);
                bump(failed_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::Failed);
            }
            Attempt::TimedOut => {
                shared.take_down(&self.link, DownReason::WriteTimeout);
                bump(failed_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::TimedOut);
            }
            Attempt::Down => {
                bump(failed_counter);
                reports.write_finished(self.link.id(), lane, &frame, WriteOutcome::Failed);
            }
            Attempt::Abandoned => {
                if written > 0 && written < frame.len() {
                    // Part of a frame is on the wire: the stream is unusable.
                    shared.take_down(&self.link, DownReason::WriteCancelled);
                } else if lane == SenderLane::Control {
                    shared.take_down(&self.link, DownReason::ManualDisconnect);
                }
                bump(discarded_counter);
                reports.write_abandoned(self.link.id(), lane, &frame);
            }
        }
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

// ---------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use lanesim_target::handshake::SeededNonces;
    use lanesim_target::node::NodeEvents;
    use tokio::net::{TcpListener, TcpStream};

    struct Tcp;

    struct TcpListen(TcpListener);

    impl Transport for Tcp {
        fn connect<'a>(
            &'a self,
            addr: &'a str,
        ) -> lanesim_target::net::BoxFuture<'a, io::Result<Connected>> {
            Box::pin(async move { Connected::from_tcp(TcpStream::connect(addr).await?) })
        }

        fn bind<'a>(
            &'a self,
            addr: &'a str,
        ) -> lanesim_target::net::BoxFuture<'a, io::Result<Box<dyn Listener>>> {
            Box::pin(async move {
                let listener = TcpListener::bind(addr).await?;
                Ok(Box::new(TcpListen(listener)) as Box<dyn Listener>)
            })
        }
    }

    impl Listener for TcpListen {
        fn accept(&mut self) -> lanesim_target::net::BoxFuture<'_, io::Result<Connected>> {
            Box::pin(async move { Connected::from_tcp(self.0.accept().await?.0) })
        }

        fn local_addr(&self) -> io::Result<String> {
            Ok(self.0.local_addr()?.to_string())
        }
    }

    type FrameRecord = (String, u64, Vec<u8>, Vec<u8>);

    const COOKIE: &[u8] = b"example cookie";

    #[derive(Default)]
    struct Log {
        ups: Mutex<Vec<(String, u64, Origin)>>,
        downs: Mutex<Vec<(String, u64, DownReason)>>,
        frames: Mutex<Vec<FrameRecord>>,
    }

    impl NodeEvents for Log {
        fn up(&self, up: Up<'_>) {
            lock(&self.ups).push((up.node.to_owned(), up.generation, up.origin));
        }

        fn down(&self, down: Down<'_>) {
            lock(&self.downs).push((down.node.to_owned(), down.generation, down.reason));
        }

        fn frame(&self, from: Generation<'_>, control: &[u8], payload: &[u8]) {
            let entry = (
                from.node.to_owned(),
                from.generation,
                control.to_vec(),
                payload.to_vec(),
            );
            lock(&self.frames).push(entry);
        }
    }

    fn start(
        name: &str,
        log: &Arc<Log>,
        heartbeat: Option<Duration>,
        controls: usize,
    ) -> Box<dyn Node> {
        ExampleNode
            .start(NodeSetup {
                name: name.to_owned(),
                transport: Arc::new(Tcp),
                runtime: Runtime::World(Handle::current()),
                connect_timeout: Duration::from_secs(2),
                write_timeout: Duration::from_secs(2),
                heartbeat,
                max_frame: 1 << 20,
                frame_budget: 4 << 20,
                frame_timeout: None,
                data_capacity: 64,
                control_capacity: controls,
                reports: NodeReports::new(Arc::clone(log) as Arc<dyn NodeEvents>),
                cookie: COOKIE.to_vec(),
                nonces: Arc::new(SeededNonces::new(name.len() as u64)),
            })
            .expect("the node starts")
    }

    async fn serve(node: &dyn Node) -> String {
        let listener = Tcp.bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        node.serve(listener);
        addr
    }

    async fn eventually(what: &str, check: impl Fn() -> bool) {
        for _ in 0..500 {
            if check() {
                return;
            }
            time::sleep(Duration::from_millis(10)).await;
        }
        panic!("timed out waiting for {what}");
    }

    fn frame(control: &[u8], payload: &[u8]) -> Arc<[u8]> {
        wire::encode(control, payload).into()
    }

    #[tokio::test]
    async fn a_control_arrives_and_a_disconnect_goes_down_once() {
        let (log_a, log_b) = (Arc::new(Log::default()), Arc::new(Log::default()));
        let a = start("a", &log_a, None, 8);
        let b = start("b", &log_b, None, 8);
        let addr = serve(&*b).await;

        let conn = a.dial("b", &addr).await.expect("dial");
        assert_eq!((conn.node(), conn.generation()), ("b", 1));
        assert!(Arc::ptr_eq(&a.connection("b").unwrap(), &conn));
        assert_eq!(a.slot("b"), Some((1, false)));
        assert_eq!(
            a.enqueue_control(&conn, frame(b"ctl", b"one")),
            ControlOutcome::Queued
        );
        assert_eq!(a.enqueue("b", frame(b"data", b"two")), DataOutcome::Queued);
        eventually("both frames at b", || lock(&log_b.frames).len() == 2).await;
        assert_eq!(
            *lock(&log_b.frames),
            vec![
                ("a".to_owned(), 1, b"ctl".to_vec(), b"one".to_vec()),
                ("a".to_owned(), 1, b"data".to_vec(), b"two".to_vec()),
            ]
        );
        assert_eq!(
            *lock(&log_b.ups),
            vec![("a".to_owned(), 1, Origin::Accepted)]
        );

        a.disconnect("b");
        assert!(conn.is_down());
        assert!(a.connection("b").is_none());
        a.disconnect("b");
        eventually("b sees the close", || !lock(&log_b.downs).is_empty()).await;
        time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            *lock(&log_a.downs),
            vec![("b".to_owned(), 1, DownReason::ManualDisconnect)]
        );
        assert_eq!(
            *lock(&log_b.downs),
            vec![("a".to_owned(), 1, DownReason::PeerClosed)]
        );

        // A control pinned to the dead generation is never written anywhere.
        assert_eq!(
            a.enqueue_control(&conn, frame(b"ctl", b"late")),
            ControlOutcome::Queued
        );
        let again = a.dial("b", &addr).await.expect("redial");
        assert_eq!(again.generation(), 2);
        assert_eq!(
            a.enqueue_control(&again, frame(b"ctl", b"three")),
            ControlOutcome::Queued
        );
        eventually("the new control at b", || lock(&log_b.frames).len() == 3).await;
        assert_eq!(
            lock(&log_b.frames)[2],
            ("a".to_owned(), 2, b"ctl".to_vec(), b"three".to_vec())
        );
        let stats = a.stats().unwrap();
        assert_eq!(
            (
                stats.control_written,
                stats.control_skipped,
                stats.data_written
            ),
            (2, 1, 1)
        );
    }

    #[tokio::test]
    async fn cross_dials_settle_on_one_socket() {
        let (log_a, log_b) = (Arc::new(Log::default()), Arc::new(Log::default()));
        let a = start("a", &log_a, None, 8);
        let b = start("b", &log_b, None, 8);
        let (addr_a, addr_b) = (serve(&*a).await, serve(&*b).await);
        let (ab, ba) = tokio::join!(a.dial("b", &addr_b), b.dial("a", &addr_a));
        ab.expect("a dials b");
        ba.expect("b dials a");
        eventually("one agreed socket", || {
            match (a.connection("b"), b.connection("a")) {
                (Some(x), Some(y)) => {
                    x.local_addr() == y.peer_addr() && x.peer_addr() == y.local_addr()
                }
                _ => false,
            }
        })
        .await;
        // The socket kept is the one "a" (the lower name) dialed.
        let kept = a.connection("b").unwrap();
        assert_eq!(kept.peer_addr(), addr_b);
        time::sleep(Duration::from_millis(50)).await;
        assert!(a.connection("b").is_some_and(|c| Arc::ptr_eq(&c, &kept)));
    }

    #[tokio::test]
    async fn a_silent_peer_gets_keepalives_then_times_out() {
        let log = Arc::new(Log::default());
        let a = start("a", &log, Some(Duration::from_millis(150)), 8);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let answer = async {
            let (socket, _) = listener.accept().await.unwrap();
            let mut connected = Connected::from_tcp(socket).unwrap();
            let proved = crate::handshake::accept(&mut connected, "peer", COOKIE, [5; 16]).await;
            (connected, proved)
        };
        let (conn, (mut socket, proved)) = tokio::join!(a.dial("peer", &addr), answer);
        let conn = conn.expect("dial");
        let (name, leftover) = proved.expect("a proved the cookie");
        assert_eq!(name, "a");

        // Its first keepalive, perhaps read with the proof already.
        let mut got = leftover;
        let mut byte = [0_u8; 1];
        while got.len() < wire::HEADER_LEN {
            socket.read.read_exact(&mut byte).await.unwrap();
            got.push(byte[0]);
        }
        assert_eq!(&got[..wire::HEADER_LEN], &wire::KEEPALIVE[..]);

        eventually("the heartbeat timeout", || conn.is_down()).await;
        assert_eq!(
            *lock(&log.downs),
            vec![("peer".to_owned(), 1, DownReason::HeartbeatTimeout)]
        );
    }

    /// A raw peer named `name` accepting one dial and answering its
    /// handshake.
    async fn answer(listener: &TcpListener, name: &str) -> Connected {
        let (socket, _) = listener.accept().await.unwrap();
        let mut connected = Connected::from_tcp(socket).unwrap();
        crate::handshake::accept(&mut connected, name, COOKIE, [6; 16])
            .await
            .expect("the dialer proved the cookie");
        connected
    }

    #[tokio::test]
    async fn overflow_and_shutdown_take_pinned_generations_down() {
        let log = Arc::new(Log::default());
        let a = start("a", &log, None, 1);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let (first, _p1) = tokio::join!(a.dial("p", &addr), answer(&listener, "p"));
        let first = first.unwrap();
        // No await in between: the writer has not run yet.
        assert_eq!(
            a.enqueue_control(&first, frame(b"c", b"1")),
            ControlOutcome::Queued
        );
        assert_eq!(
            a.enqueue_control(&first, frame(b"c", b"2")),
            ControlOutcome::Overflow
        );
        assert!(first.is_down());
        assert_eq!(
            *lock(&log.downs),
            vec![("p".to_owned(), 1, DownReason::ControlOverflow)]
        );

        let (second, _p2) = tokio::join!(a.dial("p", &addr), answer(&listener, "p"));
        let second = second.unwrap();
        assert_eq!(second.generation(), 2);
        assert_eq!(
            a.enqueue_control(&second, frame(b"c", b"3")),
            ControlOutcome::Queued
        );
        a.shutdown();
        assert!(second.is_down());
        assert_eq!(
            a.enqueue("p", frame(b"d", b"x")),
            DataOutcome::DroppedClosed
        );
        assert_eq!(
            a.enqueue_control(&second, frame(b"c", b"4")),
            ControlOutcome::Closed
        );
        time::sleep(Duration::from_millis(20)).await;
        assert_eq!(lock(&log.downs).len(), 2);
        assert_eq!(
            lock(&log.downs)[1],
            ("p".to_owned(), 2, DownReason::ManualDisconnect)
        );
        assert_eq!(a.stats().unwrap().control_discarded, 1);
    }
}
