//! A generation's read loop (frames to the callback, the frame budget, the
//! close of the write half), its keepalives and its silence clock: the
//! heartbeat of the parent module's doc.

use std::io;

use lanesim_target::node::DownReason;
use lanesim_target::wire::KEEPALIVE;

use super::{InboundFrame, ManagerShared};
use crate::distribution::connection::DistConnection;
use crate::distribution::frame::{read_frame_within, Frame, ReadFrameError};
use crate::planted::PlantedBug;
use crate::shim::net::BoxRead;
use crate::shim::probe::{mark, preempt_point, Mark, Point};
use crate::shim::sync::{Arc, Counter, Weak};
use crate::shim::time::{sleep, Duration, Instant};

/// Reads frames until the peer closes, a read fails, nothing arrives for a
/// heartbeat tick, or the connection is marked down; then closes the write
/// half so the peer sees end of stream.
pub(super) async fn read_loop(
    manager: Weak<ManagerShared>,
    connection: Arc<DistConnection>,
    read: BoxRead,
) {
    // Only what the loop needs is held across its waits: holding the
    // manager itself would keep it alive while its owner drops it.
    let Some((max, close_bound, tick, budget, frame_timeout)) = manager.upgrade().map(|m| {
        let tick = m.tick.filter(|_| !m.planted.has(PlantedBug::NoHeartbeat));
        let budget = Arc::clone(&m.budget);
        (
            m.max_frame,
            m.connect_timeout,
            tick,
            budget,
            m.frame_timeout,
        )
    }) else {
        return;
    };
    let mut read = Watched::new(read);
    // Claim answers this generation is writing (at most one at a time).
    let answering = Arc::new(Counter::new(0));
    let progress = read.progress();
    // The generation is registered and handed out, but nobody watches for
    // its down until this loop first waits: a down that lands here must
    // still close the socket.
    preempt_point(Point::ReadLoopStarting).await;
    if connection.is_down() {
        mark(Mark::DownBeforeReadLoop);
    }
    // One silence clock for the generation's life, not one per frame: it
    // sleeps to the tick's end, looks at when bytes last came, and sleeps
    // on for the rest (a timer armed per frame cost the simulated mesh a
    // timer-wheel insert and removal for every keepalive).
    let silence = silent_for(tick, &progress);
    tokio::pin!(silence);
    let reason = loop {
        let frame = tokio::select! {
            biased;
            () = connection.down_notified() => break None,
            // Bytes already waiting count as heard: the read goes first.
            frame = read_frame_within(&mut read, max, &budget, frame_timeout) => frame,
            () = &mut silence => break Some(DownReason::HeartbeatTimeout),
        };
        match frame {
            Ok(Frame::Keepalive) => {}
            Ok(Frame::Node { payload }) => {
                let Some(shared) = manager.upgrade() else {
                    break None;
                };
                super::claim::on_node_frame(&shared, &connection, &payload, &answering);
            }
            Ok(Frame::Data { control, payload }) => {
                let Some(shared) = manager.upgrade() else {
                    break None;
                };
                let Some(on_frame) = &shared.on_frame else {
                    continue;
                };
                let inbound = InboundFrame {
                    node: connection.node().clone(),
                    generation: connection.generation(),
                    control,
                    payload,
                };
                let handled =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| on_frame(inbound)));
                if handled.is_err() {
                    tracing::error!(
                        node = %connection.node(),
                        generation = connection.generation(),
                        "the frame callback panicked; the generation goes down"
                    );
                    break Some(DownReason::HandlerPanicked);
                }
            }
            Err(ReadFrameError::Closed) => break Some(DownReason::PeerClosed),
            Err(error @ ReadFrameError::OverShare { .. }) => {
                mark(Mark::FrameBudgetRefused);
                tracing::warn!(
                    node = %connection.node(),
                    generation = connection.generation(),
                    %error,
                    "connection refused: over its share of the frame budget"
                );
                break Some(DownReason::OverBudget);
            }
            Err(error @ ReadFrameError::Slow { .. }) => {
                tracing::warn!(
                    node = %connection.node(),
                    generation = connection.generation(),
                    %error,
                    "connection refused: a frame slower than the frame deadline"
                );
                break Some(DownReason::FrameTimeout);
            }
            Err(error) => {
                tracing::debug!(node = %connection.node(), %error, "read failed");
                break Some(DownReason::ReadError);
            }
        }
    };
    if let Some(reason) = reason {
        if reason == DownReason::HeartbeatTimeout {
            tracing::warn!(
                node = %connection.node(),
                generation = connection.generation(),
                "nothing read for a heartbeat tick; the generation goes down"
            );
        }
        // The stream is dead but the generation still up: a write may
        // start in this window, and must fail or be refused, never hang.
        preempt_point(Point::ReadBeforeMarkDown).await;
        connection.mark_down(reason);
    }
    drop(read);
    connection.close_writer(close_bound).await;
}

/// Writes a keepalive at once and then every quarter `tick` until the
/// generation goes down, so a healthy peer's heartbeat never fires on a
/// quiet connection. The write has no deadline of its own: a peer that
/// stops reading is found by the sender's write deadline or by its own
/// silence, and a down abandons the write.
///
/// At once, because the peer's silence clock starts when *it* registers
/// the stream: the two ends register up to a one-way latency apart (the
/// dialer on writing its hello, the acceptor on reading it), so a first
/// keepalive a quarter tick after registration reached the peer up to
/// `tick / 4` plus two one-way latencies after its clock started: 262.5 ms
/// at the shortest tick (250 ms) and the simulated network's largest
/// latency (100 ms), past the tick. Sent at once it arrives within two
/// latencies (200 ms), and every later gap is at most a quarter tick plus
/// the latency's jitter (162.5 ms): below the tick at every tick the
/// scenario files allow (docs/protocol.md, "Heartbeat").
pub(super) async fn keepalives(connection: Arc<DistConnection>, tick: Duration) {
    let every = tick / 4;
    loop {
        if connection.write_raw(&KEEPALIVE).await.is_err() {
            return;
        }
        mark(Mark::KeepaliveSent);
        tokio::select! {
            biased;
            () = connection.down_notified() => return,
            () = sleep(every) => {}
        }
    }
}

/// Resolves once `tick` has passed with nothing read (never, without a
/// tick).
async fn silent_for(tick: Option<Duration>, progress: &Progress) {
    let Some(tick) = tick else {
        return std::future::pending().await;
    };
    loop {
        let quiet = progress.quiet_for();
        if quiet >= tick {
            return;
        }
        sleep(tick - quiet).await;
    }
}

/// When a read half last delivered bytes.
struct Progress {
    base: Instant,
    /// Nanoseconds after `base`. Only the read loop's task touches it.
    last: Counter,
}

impl Progress {
    fn quiet_for(&self) -> Duration {
        let last = Duration::from_nanos(self.last.get());
        self.base.elapsed().saturating_sub(last)
    }

    fn touch(&self) {
        let now = u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.last.set(now);
    }
}

/// A read half that records when it last delivered bytes.
struct Watched {
    inner: BoxRead,
    progress: Arc<Progress>,
}

impl Watched {
    fn new(inner: BoxRead) -> Self {
        Self {
            inner,
            progress: Arc::new(Progress {
                base: Instant::now(),
                last: Counter::new(0),
            }),
        }
    }

    fn progress(&self) -> Arc<Progress> {
        Arc::clone(&self.progress)
    }
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.progress.touch();
        }
        polled
    }
}
