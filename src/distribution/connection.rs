//! [`DistConnection`]: one generation of a connection to one node.
//!
//! Model: a connection goes down exactly once. `mark_down` is a single
//! compare-and-swap on the state, so the first caller's reason is the one
//! recorded and only that caller wakes the read loop and tells the manager,
//! which fires the down hook (S3: exactly once per generation). After down,
//! no frame begins on this socket: `write_raw` refuses once down, and a
//! write already in progress is abandoned the moment the connection goes
//! down (DC-2), so a control pinned here is either already on the wire or
//! covered by the down (DC-1), and a write parked on a dead socket never
//! holds the drain past the down (S2). (Before, a write parked on flow
//! control passed its first byte after the down once the window opened:
//! the sender world's socket-level DC-2 check found it, and
//! `a_write_parked_when_its_connection_goes_down_is_abandoned` pins it.)
//!
//! The reasons are `lanesim_target::node::DownReason`, the one list a node
//! target reports too; the state word holds the first one as a small code.

use crate::shim::time::Duration;
use std::fmt;
use std::io;

use lanesim_target::node::DownReason;
use tokio::io::AsyncWriteExt;

use super::node::NodeName;
use crate::planted::{Planted, PlantedBug};
use crate::shim::net::BoxWrite;
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::{AsyncMutex, AtomicU8, Notify, Ordering, Weak};
use crate::shim::time::{timeout, Instant};

/// The state word's value while the connection is up; once down, it holds
/// [`code`] of the first reason.
const UP: u8 = 0;

/// `reason` as the state word holds it: one more than its place in
/// [`DownReason::ALL`], so no reason is [`UP`].
fn code(reason: DownReason) -> u8 {
    reason as u8 + 1
}

/// The reason the state word holds, once down.
fn reason_of(code: u8) -> Option<DownReason> {
    DownReason::ALL
        .get(usize::from(code.checked_sub(1)?))
        .copied()
}

/// The coverage mark of a generation going down for `reason`.
fn down_mark(reason: DownReason) -> Mark {
    match reason {
        DownReason::PeerClosed => Mark::DownPeerClosed,
        DownReason::ReadError => Mark::DownReadError,
        DownReason::WriteError => Mark::DownWriteError,
        DownReason::WriteTimeout => Mark::DownWriteTimeout,
        DownReason::ManualDisconnect => Mark::DownManualDisconnect,
        DownReason::HeartbeatTimeout => Mark::DownHeartbeatTimeout,
        DownReason::ControlOverflow => Mark::DownControlOverflow,
        DownReason::SimultaneousConnect => Mark::DownSimultaneousConnect,
        DownReason::HandlerPanicked => Mark::DownHandlerPanicked,
        DownReason::WriteCancelled => Mark::DownWriteCancelled,
        DownReason::FrameTimeout => Mark::DownFrameTimeout,
        DownReason::OverBudget => Mark::DownOverBudget,
        DownReason::NameReclaimed => Mark::DownNameReclaimed,
    }
}

/// Armed while a frame goes out under the writer lock. Dropped armed, the
/// write's future was dropped partway through the frame; it marks the
/// connection down (`WriteCancelled`) before the writer lock is released,
/// so no other writer appends a frame to the cut one. Without it, a caller
/// that gave up on a write let the next writer follow half a frame with a
/// whole one, and the peer read garbage on a connection still up
/// (`loom_sender::a_write_dropped_mid_frame_never_shares_the_socket_with_another_writer`;
/// the sender's shutdown mid-write was one such caller).
struct CutWrite<'a>(Option<&'a DistConnection>);

impl CutWrite<'_> {
    /// The write ended on its own: disarmed.
    fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for CutWrite<'_> {
    fn drop(&mut self) {
        if let Some(connection) = self.0 {
            connection.mark_down(DownReason::WriteCancelled);
        }
    }
}

/// Who a connection tells when it goes down: the manager that owns it. A
/// trait, so a connection (the child) calls back without depending on the
/// manager's module.
pub(crate) trait DownListener: Send + Sync {
    /// Called once per generation, by the `mark_down` that downed it.
    fn connection_down(&self, connection: &DistConnection, reason: DownReason);
    /// A later `mark_down` of a generation already down (coverage only: the
    /// testbed wants to know whether the node had moved on by then).
    fn connection_down_again(&self, connection: &DistConnection);
}

/// What the down hook is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DownEvent {
    /// The node.
    pub node: NodeName,
    /// The generation that went down.
    pub generation: u64,
    /// The first recorded reason.
    pub reason: DownReason,
}

/// One generation of a connection to a node.
pub struct DistConnection {
    node: NodeName,
    generation: u64,
    peer: String,
    local: String,
    writer: AsyncMutex<Option<BoxWrite>>,
    state: AtomicU8,
    shutdown: Notify,
    manager: Weak<dyn DownListener>,
    planted: Planted,
}

impl DistConnection {
    pub(super) fn new(
        node: NodeName,
        generation: u64,
        peer: String,
        local: String,
        writer: BoxWrite,
        manager: Weak<dyn DownListener>,
        planted: Planted,
    ) -> Self {
        Self {
            node,
            generation,
            peer,
            local,
            writer: AsyncMutex::new(Some(writer)),
            state: AtomicU8::new(UP),
            shutdown: Notify::new(),
            manager,
            planted,
        }
    }

    /// The node this connects to.
    #[must_use]
    pub fn node(&self) -> &NodeName {
        &self.node
    }

    /// This connection's generation: per node, from 1, only growing.
    #[must_use]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The remote address.
    #[must_use]
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// Our own address on this connection's socket.
    #[must_use]
    pub fn local(&self) -> &str {
        &self.local
    }

    /// Whether the connection has gone down.
    #[must_use]
    pub fn is_down(&self) -> bool {
        self.state.load(Ordering::Acquire) != UP
    }

    /// The first recorded down reason, once down.
    #[must_use]
    pub fn down_reason(&self) -> Option<DownReason> {
        reason_of(self.state.load(Ordering::Acquire))
    }

    /// Writes one whole frame under the writer lock, with no deadline. See
    /// [`DistConnection::write_frame`].
    ///
    /// # Errors
    /// As [`DistConnection::write_frame`].
    pub async fn write_raw(&self, frame: &[u8]) -> io::Result<()> {
        self.write_frame(frame, None).await
    }

    /// Writes one whole frame under the writer lock. Refused once down:
    /// `ConnectionAborted` when it was down before the call or went down
    /// while the write waited for the lock or was writing (the wait looks at
    /// the down signal first), `NotConnected` when it went down just as the
    /// lock was taken (the look under the lock; pinned by
    /// `a_write_dropped_mid_frame_takes_its_connection_down_before_another_writes`,
    /// which accepts either). An I/O error marks the connection down
    /// (`WriteError`). With a
    /// `deadline`, one deadline covers the lock wait and the write together
    /// (a write queued behind a slow keepalive gets what is left of it, not
    /// a fresh one: `one_deadline_covers_the_lock_wait_and_the_write`); a
    /// write that outlasts it marks the
    /// connection down (`WriteTimeout`, error kind `TimedOut`) *before* the
    /// writer lock is released, so no other writer ever appends to a
    /// stream a cut write left half a frame on. The same holds when the
    /// caller drops this future partway through the frame: the connection
    /// goes down (`WriteCancelled`) before the lock is released.
    ///
    /// # Errors
    /// As above, or the write's own error.
    pub async fn write_frame(&self, frame: &[u8], deadline: Option<Duration>) -> io::Result<()> {
        let aborted = || {
            io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "connection went down during the write",
            )
        };
        let started = Instant::now();
        let checked_before = self.planted.has(PlantedBug::DownCheckedBeforeLock);
        if checked_before && self.is_down() {
            return Err(aborted());
        }
        let lock = async {
            if checked_before {
                return Some(self.writer.lock().await);
            }
            tokio::select! {
                biased;
                () = self.down_notified() => None,
                writer = self.writer.lock() => Some(writer),
            }
        };
        let mut writer = match bounded(deadline, lock).await {
            Some(Some(writer)) => writer,
            Some(None) => return Err(aborted()),
            None => {
                mark(Mark::LockWaitDeadlineFired);
                return Err(self.write_timed_out());
            }
        };
        // Checked under the lock: the flag may have flipped while we waited.
        let writer = match writer.as_mut() {
            Some(writer) if checked_before || !self.is_down() => writer,
            _ => {
                mark(Mark::WriteRefusedDown);
                return Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "connection is down",
                ));
            }
        };
        // From here until the frame is out, dropping this future (a caller
        // that gives up on the write, an aborted task) would leave part of a
        // frame on the stream: the guard then marks the connection down, and
        // it drops before the writer lock, declared above, is released.
        let cut = CutWrite(Some(self));
        let write = async {
            if checked_before {
                let written = async {
                    writer.write_all(frame).await?;
                    writer.flush().await
                };
                return Some(written.await);
            }
            tokio::select! {
                biased;
                () = self.down_notified() => None,
                written = async {
                    writer.write_all(frame).await?;
                    writer.flush().await
                } => Some(written),
            }
        };
        let left = deadline.map(|deadline| {
            if self.planted.has(PlantedBug::DeadlineRestartsAfterLock) {
                deadline
            } else {
                deadline.saturating_sub(started.elapsed())
            }
        });
        let outcome = bounded(left, write).await;
        // Ended on its own (written, failed, abandoned on a down, or out of
        // time, each handled below): not cut by a caller.
        cut.finished();
        let written = match outcome {
            Some(Some(written)) => written,
            Some(None) => {
                mark(Mark::WriteAbandonedOnDown);
                return Err(aborted());
            }
            // Still holding the writer: down before anyone else can write.
            None => return Err(self.write_timed_out()),
        };
        if written.is_err() {
            self.mark_down(DownReason::WriteError);
        }
        written
    }

    /// A write outlasted its deadline: the connection goes down
    /// (`WriteTimeout`).
    fn write_timed_out(&self) -> io::Error {
        mark(Mark::WriteDeadlineFired);
        self.mark_down(DownReason::WriteTimeout);
        io::Error::new(io::ErrorKind::TimedOut, "write deadline passed")
    }

    /// Marks the connection down. The first call records `reason`, wakes the
    /// read loop and tells the manager (which fires the down hook); every
    /// later call is a no-op.
    pub fn mark_down(&self, reason: DownReason) {
        let first = self
            .state
            .compare_exchange(UP, code(reason), Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !first {
            mark(Mark::DownRepeated);
            if crate::shim::probe::ENABLED {
                if let Some(manager) = self.manager.upgrade() {
                    manager.connection_down_again(self);
                }
            }
            if !self.planted.has(PlantedBug::DownHookNotOnceGuarded) {
                return;
            }
        } else {
            mark(down_mark(reason));
        }
        self.shutdown.notify_waiters();
        if let Some(manager) = self.manager.upgrade() {
            manager.connection_down(self, reason);
        }
    }

    /// `mark_down(ControlOverflow)`, the full-control-lane arm.
    pub fn mark_down_control_overflow(&self) {
        self.mark_down(DownReason::ControlOverflow);
    }

    /// Resolves once the connection is marked down, however many wait (the
    /// read loop, a write in progress): each registers, then looks at the
    /// flag, so a `mark_down` between the look and the wait still wakes it.
    /// The look is a read-modify-write, which always reads the latest
    /// state: `notify_waiters` keeps no permit, and a plain load may read a
    /// stale `UP` (the loom sender models deadlocked on exactly that).
    pub(super) async fn down_notified(&self) {
        loop {
            let notified = self.shutdown.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.state.fetch_or(0, Ordering::AcqRel) != UP {
                return;
            }
            notified.await;
        }
    }

    /// The first half of `mark_down` alone (the flag flips, nobody is told):
    /// the window a racing thread can land in, for tests that stop time
    /// inside it.
    #[cfg(test)]
    pub(super) fn flip_down_flag_only(&self, reason: DownReason) {
        self.state.store(code(reason), Ordering::Release);
    }

    /// Closes the write half so the peer sees end of stream. Waits at most
    /// `bound` for an in-flight write to release the lock; if it does not,
    /// the half closes when the last reference to the connection drops.
    pub(super) async fn close_writer(&self, bound: Duration) {
        let Ok(mut writer) = timeout(bound, self.writer.lock()).await else {
            return;
        };
        if let Some(mut writer) = writer.take() {
            let _ = timeout(bound, writer.shutdown()).await;
        }
    }
}

impl fmt::Debug for DistConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistConnection")
            .field("node", &self.node)
            .field("generation", &self.generation)
            .field("peer", &self.peer)
            .field("down", &self.down_reason())
            .finish()
    }
}

/// `future`, or `None` once `deadline` (if any) has passed first.
async fn bounded<F: std::future::Future>(
    deadline: Option<Duration>,
    future: F,
) -> Option<F::Output> {
    match deadline {
        Some(deadline) => timeout(deadline, future).await.ok(),
        None => Some(future.await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_survives_the_state_word_and_none_reads_as_up() {
        for reason in DownReason::ALL {
            assert_ne!(code(reason), UP, "{reason:?}");
            assert_eq!(reason_of(code(reason)), Some(reason));
        }
        assert_eq!(reason_of(UP), None);
        assert_eq!(reason_of(u8::MAX), None);
    }
}
