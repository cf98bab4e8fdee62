//! The production `Transport` over turmoil's simulated TCP, with an
//! MSS-capped write half: each `poll_write` passes at most `mss` bytes, so a
//! frame is several segments (turmoil's flow control counts segments) and a
//! write deadline can cancel `write_all` mid-frame, as on a real socket.
//!
//! A FIN waits for the window. turmoil 0.7.2 delivers a segment to the
//! reader's queue only when it arrives or when a later segment arrives; its
//! flow control keeps data within the queue's capacity but not the FIN, so
//! a FIN sent while the receiver's queue is full of unread data is never
//! delivered, however much the receiver reads afterwards (pinned by
//! `turmoil_loses_a_fin_sent_into_a_full_window`). A real kernel keeps the
//! FIN queued behind the data and sends it when the window opens. The
//! halves here share one stream, so the write half can wait for the window
//! (`TcpStream::writable`: a credit free means a queue slot free) before it
//! sends the FIN, on `shutdown` and, lingering in a task like a kernel
//! does after `close`, when dropped unshut. (The hunt found this: a peer
//! that never saw the end of a stream the sender had closed, an S3 false
//! positive.)
//!
//! The write half also follows the frame boundaries in what it passes and
//! can report (`WriteTap`) the moment the first byte of each frame reaches
//! the socket: ground truth for "no frame starts to be written to a
//! generation after it went down", which the drain's own report (made
//! before it takes the writer lock) cannot give. It also reports each
//! write the socket parked for want of window: the back-pressure a slow or
//! partitioned reader puts on the writer, which a scenario about a slow
//! peer must show it reached (`write_blocked_on_window`).

use crate::explore::spawn_world;
use std::future::Future;
use std::io;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use lanesim_target::net::{BoxFuture, BoxRead, BoxWrite, Connected, Listener, Transport};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use turmoil::net::TcpStream;

use super::descriptors::{Descriptor, Descriptors};
use super::tag::frame_len;

/// What a write half tells its tap about the socket it writes (the local
/// port).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tapped<'a> {
    /// A frame's first byte reached the socket; this starts with the whole
    /// frame.
    FrameStart(&'a [u8]),
    /// The socket parked a write: no window (turmoil's segment credit, a
    /// real socket's buffers) until the reader reads.
    WindowFull,
}

/// Told `(socket, what)` as a write half writes.
pub type WriteTap = Arc<dyn Fn(u16, Tapped<'_>) + Send + Sync>;

/// turmoil TCP for `ConnectionManager`.
pub struct TurmoilTcp {
    /// Largest write passed to the socket at once.
    pub mss: usize,
    /// Frame starts are reported here, if set.
    pub tap: Option<WriteTap>,
    /// What the read halves obey, if set: a production node made to stop
    /// reading a peer (wedged), or to read it slowly.
    pub gate: Option<Arc<ReadGate>>,
    /// What the listener and the dials obey, if set: streams reset before
    /// accept, descriptors exhausted.
    pub accepts: Option<Arc<AcceptGate>>,
    /// The descriptor table it keeps and whose limit it tells a node (the
    /// mesh's `descriptors`): a node fits its inbound caps within it, and
    /// a socket past it fails with `EMFILE` (world/descriptors.rs).
    pub descriptors: Option<Arc<Descriptors>>,
}

impl TurmoilTcp {
    /// Segments of at most `mss` bytes, no tap, no gate, no descriptor
    /// limit.
    #[must_use]
    pub fn new(mss: usize) -> Self {
        Self {
            mss,
            tap: None,
            gate: None,
            accepts: None,
            descriptors: None,
        }
    }

    /// A descriptor for a new socket, if the transport keeps a table:
    /// `EMFILE` when none is left.
    fn descriptor(&self) -> io::Result<Option<Descriptor>> {
        match &self.descriptors {
            None => Ok(None),
            Some(table) => table
                .take()
                .map(Some)
                .ok_or_else(|| io::Error::from_raw_os_error(EMFILE)),
        }
    }

    /// Whether the node has no descriptor left for a new socket.
    fn out_of_descriptors(&self) -> bool {
        self.descriptors
            .as_ref()
            .is_some_and(|table| !table.available())
    }

    /// `stream` as a connection, holding `fd` (its descriptor, if the
    /// transport keeps a table) until both halves are dropped.
    fn split(
        &self,
        stream: turmoil::net::TcpStream,
        fd: Option<Descriptor>,
    ) -> io::Result<Connected> {
        let peer = stream.peer_addr()?;
        let local = stream.local_addr()?;
        let stream = Arc::new(Mutex::new(stream));
        let fd = fd.map(Arc::new);
        let read = SharedRead {
            stream: Arc::clone(&stream),
            _fd: fd.clone(),
        };
        let read: BoxRead = match &self.gate {
            Some(gate) => Box::new(GatedRead {
                inner: read,
                remote: peer.ip(),
                id: gate.held.open(),
                meter: super::held::FrameMeter::default(),
                gate: Arc::clone(gate),
                pause: None,
            }),
            None => Box::new(read),
        };
        Ok(Connected {
            read,
            write: MssCapped::boxed(
                SharedWrite {
                    stream,
                    shut: false,
                    _fd: fd,
                },
                self.mss,
                local.port(),
                self.tap.clone(),
            ),
            peer: peer.to_string(),
            local: local.to_string(),
        })
    }
}

impl Transport for TurmoilTcp {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(async move {
            if let Some(accepts) = &self.accepts {
                accepts.dial()?;
            }
            // The socket's descriptor is taken before it connects.
            let fd = self.descriptor()?;
            self.split(turmoil::net::TcpStream::connect(addr).await?, fd)
        })
    }

    fn bind<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        Box::pin(async move {
            let listener = turmoil::net::TcpListener::bind(addr).await?;
            Ok(Box::new(TurmoilListener {
                listener,
                transport: TurmoilTcp {
                    mss: self.mss,
                    tap: self.tap.clone(),
                    gate: self.gate.clone(),
                    accepts: self.accepts.clone(),
                    descriptors: self.descriptors.clone(),
                },
            }) as Box<dyn Listener>)
        })
    }

    fn descriptor_limit(&self) -> Option<u64> {
        self.descriptors.as_ref().map(|table| table.limit())
    }
}

/// Where each peer listens in real mode: its node name to its loopback port
/// (a crashed peer keeps its entry; a dial to it is refused).
pub type PortMap = Arc<Mutex<std::collections::BTreeMap<String, u16>>>;

/// Real loopback TCP for `ConnectionManager` in the sender world's real
/// mode: `peerN:PORT` dials `127.0.0.1` at the port peer N listens on, and
/// the write half is MSS-capped and tapped exactly as [`TurmoilTcp`]'s.
/// `buffer`, if set, is the socket's send and receive buffer request
/// (what stands in for turmoil's segment credit: the kernel parks a write
/// once the buffers on both ends are full).
pub struct RealTcp {
    /// Largest write passed to the socket at once.
    pub mss: usize,
    /// Frame starts are reported here, if set.
    pub tap: Option<WriteTap>,
    /// Peer name to loopback port.
    pub ports: PortMap,
    /// `SO_SNDBUF` / `SO_RCVBUF` to ask for, in bytes.
    pub buffer: Option<u32>,
}

impl RealTcp {
    /// A loopback socket with the buffer sizes asked for, whose segments
    /// carry at most `mss` bytes (`TCP_MAXSEG`), as turmoil's do.
    ///
    /// Why the segment size: loopback's MTU is 64 KiB, so without it the
    /// kernel sends segments of tens of kB, as large as half the small
    /// receive buffer real mode asks for, and the receiver rounds the
    /// window it advertises to whole segments. A healthy peer's
    /// connection could then stall at a window too small for the next
    /// segment: the peer had read everything (its receive queue empty),
    /// the writer's send queue full, and only the writer's persist timer
    /// (~200 ms) moved the stream, a segment or two per probe. Seen for
    /// real on `sender_wedged_peer` seeds 2 and 12 (about 1 run in 75 of
    /// seed 2): every frame to the healthy peer arrived 200 ms after the
    /// last, so the run crawled past its budget (liveness) or ended with
    /// frames still in the socket (S6, "never arrived").
    ///
    /// # Errors
    /// When the socket cannot be made.
    pub fn socket(buffer: Option<u32>, mss: usize) -> io::Result<tokio::net::TcpSocket> {
        let socket = tokio::net::TcpSocket::new_v4()?;
        if let Some(bytes) = buffer {
            socket.set_send_buffer_size(bytes)?;
            socket.set_recv_buffer_size(bytes)?;
        }
        socket2::SockRef::from(&socket).set_tcp_mss(u32::try_from(mss).unwrap_or(u32::MAX))?;
        Ok(socket)
    }

    async fn dial(&self, addr: &str) -> io::Result<Connected> {
        let host = addr.rsplit_once(':').map_or(addr, |(host, _)| host);
        let port = self
            .ports
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(host)
            .copied()
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::ConnectionRefused, format!("no peer {host}"))
            })?;
        let socket = Self::socket(self.buffer, self.mss)?;
        // A socket is named by its local port (both ends log it), so two
        // live sockets must never share one. `connect` alone may give two
        // connections to different peers the same local port (the 4-tuples
        // differ); the checks then took one peer's socket for the other's
        // (DC-2 "control pinned to peer3/4 arrived on peer1/5's socket", a
        // CI run of `a_dead_peer_passes_for_real`). `bind` to port 0 picks
        // a port no other local socket holds.
        socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let stream = socket
            .connect(std::net::SocketAddr::from(([127, 0, 0, 1], port)))
            .await?;
        stream.set_nodelay(true)?;
        let peer = stream.peer_addr()?;
        let local = stream.local_addr()?;
        let (read, write) = stream.into_split();
        Ok(Connected {
            read: Box::new(read),
            write: MssCapped::boxed(write, self.mss, local.port(), self.tap.clone()),
            peer: peer.to_string(),
            local: local.to_string(),
        })
    }
}

impl Transport for RealTcp {
    fn connect<'a>(&'a self, addr: &'a str) -> BoxFuture<'a, io::Result<Connected>> {
        Box::pin(self.dial(addr))
    }

    fn bind<'a>(&'a self, _addr: &'a str) -> BoxFuture<'a, io::Result<Box<dyn Listener>>> {
        Box::pin(async {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the real sender world's local node only dials",
            ))
        })
    }
}

struct TurmoilListener {
    listener: turmoil::net::TcpListener,
    transport: TurmoilTcp,
}

impl Listener for TurmoilListener {
    fn accept(&mut self) -> BoxFuture<'_, io::Result<Connected>> {
        Box::pin(async move {
            let Some(gate) = self.transport.accepts.clone() else {
                let (stream, _) = self.listener.accept().await?;
                let fd = self.transport.descriptor()?;
                return self.transport.split(stream, fd);
            };
            gate.accept(&self.listener, &self.transport).await
        })
    }

    fn local_addr(&self) -> io::Result<String> {
        Ok(self.listener.local_addr()?.to_string())
    }
}

/// What goes wrong with a node's accepts and dials: the mesh world's
/// `resets` and `exhaust` faults, made at the one place a production node's
/// streams come from, its transport (turmoil's own `accept` never fails).
///
/// - Resets: each stream that arrives is taken and dropped before the node
///   sees it (its dialer reads end of stream), and `accept` fails with
///   `ENOTCONN`, as Linux's does when the peer address of a stream reset in
///   the backlog is read.
/// - Exhausted: `accept` fails with `EMFILE` and so does every dial. The
///   streams that arrive wait, as in a kernel's backlog (kept here: turmoil
///   panics past its own backlog), and are handed out in order once the
///   node has descriptors again. An `accept` called again in the instant it
///   last failed first waits a millisecond: a node that retries without
///   pausing spins in real life, and would stop the simulated clock here.
#[derive(Default)]
pub struct AcceptGate {
    state: Mutex<AcceptState>,
    /// Told when the fault changes: an `accept` waiting for a stream under
    /// the old fault starts over under the new one.
    changed: tokio::sync::Notify,
}

#[derive(Default)]
struct AcceptState {
    fault: AcceptFault,
    /// Streams that arrived while exhausted, oldest first.
    backlog: std::collections::VecDeque<TcpStream>,
    /// When `accept` last failed with `EMFILE`.
    failed_at: Option<tokio::time::Instant>,
    /// What the fault did since it began.
    injected: Injected,
}

/// What an accept fault did while it lasted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Injected {
    /// Accepts that failed (a stream reset before it, or `EMFILE`).
    pub accepts: u64,
    /// Dials that failed (`EMFILE`).
    pub dials: u64,
}

/// The fault a node's accepts are under.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AcceptFault {
    /// None.
    #[default]
    None,
    /// Streams are reset before accept.
    Resets,
    /// No descriptors.
    Exhausted,
}

/// `EMFILE` (24 on Linux and macOS, the hosts the simulation runs on).
const EMFILE: i32 = 24;

impl AcceptGate {
    fn state(&self) -> MutexGuard<'_, AcceptState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Puts the node under `fault` (or none); what the fault it ends did.
    pub fn set(&self, fault: AcceptFault) -> Injected {
        let mut state = self.state();
        state.fault = fault;
        state.failed_at = None;
        self.changed.notify_waiters();
        std::mem::take(&mut state.injected)
    }

    fn dial(&self) -> io::Result<()> {
        let mut state = self.state();
        if state.fault == AcceptFault::Exhausted {
            state.injected.dials += 1;
            return Err(io::Error::from_raw_os_error(EMFILE));
        }
        Ok(())
    }

    async fn accept(
        &self,
        listener: &turmoil::net::TcpListener,
        transport: &TurmoilTcp,
    ) -> io::Result<Connected> {
        use futures_util::FutureExt as _;
        loop {
            // Armed before the fault is read, so a change in between is seen.
            let changed = self.changed.notified();
            let mut changed = std::pin::pin!(changed);
            changed.as_mut().enable();
            let fault = self.state().fault;
            // No descriptor left: as exhausted, but the node's own doing.
            let fault = match fault {
                AcceptFault::None if transport.out_of_descriptors() => AcceptFault::Exhausted,
                fault => fault,
            };
            match fault {
                AcceptFault::None => {
                    let waiting = self.state().backlog.pop_front();
                    if let Some(stream) = waiting {
                        return transport.split(stream, transport.descriptor()?);
                    }
                    tokio::select! {
                        biased;
                        () = &mut changed => continue,
                        accepted = listener.accept() => {
                            let stream = accepted?.0;
                            match transport.descriptor() {
                                Ok(fd) => return transport.split(stream, fd),
                                // Ran out while waiting: the stream waits
                                // in the backlog, as in a kernel's.
                                Err(error) => {
                                    let mut state = self.state();
                                    state.backlog.push_back(stream);
                                    state.failed_at = Some(tokio::time::Instant::now());
                                    return Err(error);
                                }
                            }
                        }
                    }
                }
                AcceptFault::Resets => {
                    tokio::select! {
                        biased;
                        () = &mut changed => continue,
                        accepted = listener.accept() => drop(accepted?.0),
                    }
                    self.state().injected.accepts += 1;
                    return Err(io::Error::from(io::ErrorKind::NotConnected));
                }
                AcceptFault::Exhausted => {
                    let spinning = self
                        .state()
                        .failed_at
                        .is_some_and(|at| at == tokio::time::Instant::now());
                    if spinning {
                        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                        continue;
                    }
                    // Take what arrived into the backlog, without waiting.
                    while let Some(Ok((stream, _))) = listener.accept().now_or_never() {
                        self.state().backlog.push_back(stream);
                    }
                    let mut state = self.state();
                    if state.fault == AcceptFault::Exhausted {
                        state.injected.accepts += 1;
                    } else if let Some(table) = &transport.descriptors {
                        table.ran_out();
                    }
                    state.failed_at = Some(tokio::time::Instant::now());
                    return Err(io::Error::from_raw_os_error(EMFILE));
                }
            }
        }
    }
}

/// Which peers a node's read halves stop reading (wedged) or read slowly
/// (one read per interval): the mesh world's wedge and slow faults, made at
/// the one place a production node's reads pass through, its transport.
/// Its read halves also measure what the node holds of unfinished frames
/// (`held`).
#[derive(Default)]
pub struct ReadGate {
    state: Mutex<GateState>,
    /// The node's held bytes of unfinished frames, stream by stream.
    pub held: super::held::Holding,
}

#[derive(Default)]
struct GateState {
    wedged: std::collections::BTreeSet<std::net::IpAddr>,
    slow: std::collections::BTreeMap<std::net::IpAddr, std::time::Duration>,
    wakers: Vec<std::task::Waker>,
}

impl ReadGate {
    fn state(&self) -> MutexGuard<'_, GateState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops (`true`) or resumes reading from `remote`.
    pub fn wedge(&self, remote: std::net::IpAddr, wedged: bool) {
        let mut state = self.state();
        if wedged {
            state.wedged.insert(remote);
        } else {
            state.wedged.remove(&remote);
            for waker in state.wakers.drain(..) {
                waker.wake();
            }
        }
    }

    /// Reads from `remote` at most once per `every` (`None`: at full speed).
    pub fn slow(&self, remote: std::net::IpAddr, every: Option<std::time::Duration>) {
        let mut state = self.state();
        match every {
            Some(every) => state.slow.insert(remote, every),
            None => state.slow.remove(&remote),
        };
    }
}

/// A read half that obeys a [`ReadGate`], and reports to it what it holds
/// of an unfinished frame.
struct GatedRead {
    inner: SharedRead,
    remote: std::net::IpAddr,
    /// This stream's id in the gate's `held`.
    id: u64,
    meter: super::held::FrameMeter,
    gate: Arc<ReadGate>,
    /// After a read from a slow peer: no next read before this fires.
    pause: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl AsyncRead for GatedRead {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(pause) = &mut self.pause {
            std::task::ready!(pause.as_mut().poll(cx));
            self.pause = None;
        }
        let slow = {
            let mut state = self.gate.state();
            if state.wedged.contains(&self.remote) {
                if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
                    state.wakers.push(cx.waker().clone());
                }
                return Poll::Pending;
            }
            state.slow.get(&self.remote).copied()
        };
        let before = buf.filled().len();
        let read = std::task::ready!(Pin::new(&mut self.inner).poll_read(cx, buf));
        let fresh = &buf.filled()[before..];
        // The end of the stream, or its failure, frees what it held.
        let held = if read.is_ok() && !fresh.is_empty() {
            self.meter.feed(fresh)
        } else {
            0
        };
        let this = &mut *self;
        this.gate.held.hold(this.id, held);
        if let Some(every) = slow.filter(|_| buf.filled().len() > before) {
            self.pause = Some(Box::pin(tokio::time::sleep(every)));
        }
        Poll::Ready(read)
    }
}

/// A read half dropped (the node closed the stream, or its host died)
/// frees what it held.
impl Drop for GatedRead {
    fn drop(&mut self) {
        self.gate.held.hold(self.id, 0);
    }
}

/// Locks a stream; its halves only hold the lock within one poll.
fn lock(stream: &Mutex<TcpStream>) -> MutexGuard<'_, TcpStream> {
    stream
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Ready once a segment may be sent without overrunning the receiver.
fn poll_window(stream: &TcpStream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
    pin!(stream.writable()).poll(cx)
}

/// The read half of a shared stream.
struct SharedRead {
    stream: Arc<Mutex<TcpStream>>,
    /// The socket's descriptor, shared with the write half.
    _fd: Option<Arc<Descriptor>>,
}

impl AsyncRead for SharedRead {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock(&self.stream)).poll_read(cx, buf)
    }
}

/// The write half of a shared stream: its FIN waits for the window.
struct SharedWrite {
    stream: Arc<Mutex<TcpStream>>,
    shut: bool,
    /// The socket's descriptor (shared with the read half): given back
    /// when both halves are dropped, as a kernel frees it on `close`,
    /// though the FIN may still be waiting for the window.
    _fd: Option<Arc<Descriptor>>,
}

impl AsyncWrite for SharedWrite {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *lock(&self.stream)).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *lock(&self.stream)).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut stream = lock(&self.stream);
        std::task::ready!(poll_window(&stream, cx))?;
        let shut = Pin::new(&mut *stream).poll_shutdown(cx);
        drop(stream);
        self.shut = true;
        shut
    }
}

impl Drop for SharedWrite {
    fn drop(&mut self) {
        if self.shut || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        // Closed unshut: like a kernel after `close`, send the FIN once the
        // window lets it through.
        let stream = Arc::clone(&self.stream);
        spawn_world(async move {
            let window = std::future::poll_fn(|cx| poll_window(&lock(&stream), cx)).await;
            if window.is_ok() {
                let _ = std::future::poll_fn(|cx| Pin::new(&mut *lock(&stream)).poll_shutdown(cx))
                    .await;
            }
        });
    }
}

/// `inner` as a connection's write half, capped at `mss` bytes per call and
/// tapped (the start of each frame, each write parked for want of window):
/// what every world's transport hands the node, the model world's
/// in-memory sockets too.
pub(crate) fn tapped_write<W: AsyncWrite + Send + Unpin + 'static>(
    inner: W,
    mss: usize,
    socket: u16,
    tap: Option<WriteTap>,
) -> BoxWrite {
    MssCapped::boxed(inner, mss, socket, tap)
}

/// A write half that accepts at most `mss` bytes per call and reports the
/// start of each frame and each write parked for window.
struct MssCapped<W> {
    inner: W,
    mss: usize,
    socket: u16,
    /// Bytes of the current frame not yet passed on; 0 at a boundary.
    remaining: usize,
    tap: Option<WriteTap>,
}

impl<W: AsyncWrite + Send + Unpin + 'static> MssCapped<W> {
    /// `inner` as a connection's write half, capped at `mss` and tapped:
    /// the same for the simulated and the real transport.
    fn boxed(inner: W, mss: usize, socket: u16, tap: Option<WriteTap>) -> BoxWrite {
        Box::new(Self {
            inner,
            mss,
            socket,
            remaining: 0,
            tap,
        })
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for MssCapped<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let cap = buf.len().min(self.mss.max(1));
        let written = Pin::new(&mut self.inner).poll_write(cx, &buf[..cap]);
        if written.is_pending() {
            if let Some(tap) = &self.tap {
                tap(self.socket, Tapped::WindowFull);
            }
        }
        if let Poll::Ready(Ok(n)) = written {
            if n > 0 {
                // `write_all` hands over exactly what is left of its frame;
                // anything else is a new frame, after a boundary or after a
                // write cut short (abandoned, timed out) mid-frame.
                if self.remaining != buf.len() {
                    self.remaining = frame_len(buf).unwrap_or(n);
                    if let Some(tap) = &self.tap {
                        tap(self.socket, Tapped::FrameStart(buf));
                    }
                }
                self.remaining = self.remaining.saturating_sub(n);
            }
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::io::AsyncWriteExt;

    use super::*;
    use crate::event::Lane;
    use crate::world::tag::Tag;

    fn tag(seq: u64) -> Vec<u8> {
        Tag {
            lane: Lane::Data,
            generation: 0,
            seq,
            link: None,
        }
        .frame(40)
    }

    /// The tap sees each frame's start once, in segments or not, and a
    /// frame written after another was cut off mid-way is a new frame.
    #[tokio::test]
    async fn the_tap_reports_each_frame_start_even_after_a_cut_write() {
        let starts: Arc<Mutex<Vec<u64>>> = Arc::default();
        let seen = Arc::clone(&starts);
        let mut socket = MssCapped {
            inner: Vec::new(),
            mss: 10,
            socket: 1,
            remaining: 0,
            tap: Some(Arc::new(move |_, tapped: Tapped<'_>| {
                if let Tapped::FrameStart(frame) = tapped {
                    seen.lock().unwrap().push(Tag::of_frame(frame).unwrap().seq);
                }
            })),
        };
        socket.write_all(&tag(1)).await.unwrap();
        socket.write_all(&tag(2)).await.unwrap();
        // A write of frame 3 cut after its first segment ...
        let cut = tag(3);
        let first = std::future::poll_fn(|cx| Pin::new(&mut socket).poll_write(cx, &cut)).await;
        assert_eq!(first.unwrap(), 10);
        // ... then frame 4, whole.
        socket.write_all(&tag(4)).await.unwrap();
        assert_eq!(*starts.lock().unwrap(), [1, 2, 3, 4]);
    }

    /// The turmoil behaviour the shared halves work around: a FIN sent
    /// while the receiver's queue is full of unread data never arrives.
    #[test]
    fn turmoil_loses_a_fin_sent_into_a_full_window() {
        assert_eq!(
            stream_end_seen(|stream| Box::new(stream.into_split().1)),
            Some(false)
        );
    }

    /// Through the transport's halves the same FIN waits for the window
    /// and arrives, on `shutdown` and when the write half is dropped.
    #[test]
    fn a_fin_sent_into_a_full_window_arrives_once_the_reader_reads() {
        let shared = |stream| {
            let connected = TurmoilTcp::new(1_000).split(stream, None).unwrap();
            drop(connected.read);
            connected.write
        };
        assert_eq!(stream_end_seen(shared), Some(true));
    }

    /// Fills a 4-segment window, shuts the write half down (or drops it)
    /// while the reader sleeps, then reads: whether the reader saw the end.
    fn stream_end_seen(write_half: fn(TcpStream) -> BoxWrite) -> Option<bool> {
        use std::time::Duration;

        use tokio::io::AsyncReadExt;

        let mut seen = None;
        for drop_unshut in [false, true] {
            let ended = Arc::new(Mutex::new(None));
            let mut sim = turmoil::Builder::new()
                .tcp_capacity(4)
                .simulation_duration(Duration::from_secs(20))
                .build();
            let result = Arc::clone(&ended);
            sim.host("reader", move || {
                let result = Arc::clone(&result);
                async move {
                    let listener = turmoil::net::TcpListener::bind(("0.0.0.0", 9000)).await?;
                    let (mut stream, _) = listener.accept().await?;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    let mut all = Vec::new();
                    let read =
                        tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut all))
                            .await;
                    *result.lock().unwrap() = Some(matches!(read, Ok(Ok(16))));
                    Ok(())
                }
            });
            sim.client("writer", async move {
                let stream = TcpStream::connect(("reader", 9000)).await?;
                let mut write = write_half(stream);
                for _ in 0..4 {
                    write.write_all(b"abcd").await?;
                }
                if drop_unshut {
                    drop(write);
                } else {
                    write.shutdown().await?;
                }
                tokio::time::sleep(Duration::from_secs(10)).await;
                Ok(())
            });
            sim.run().unwrap();
            let this = *ended.lock().unwrap();
            assert!(seen.is_none() || seen == this, "shutdown and drop differ");
            seen = this;
        }
        seen
    }
}
