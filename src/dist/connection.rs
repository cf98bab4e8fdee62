//! [`DistConnection`]: one generation of a connection to one node.
//!
//! Model: a connection goes down exactly once. `mark_down` is a single
//! compare-and-swap on the state, so the first caller's reason is the one
//! recorded and only that caller wakes the read loop and tells the manager,
//! which fires the down hook (S3: exactly once per generation). After down,
//! nothing more is written to this socket: `write_raw` refuses, so a control
//! pinned here is either already on the wire or covered by the down (DC-1).

use crate::shim::time::Duration;
use std::fmt;
use std::io;

use tokio::io::AsyncWriteExt;

use super::manager::ManagerShared;
use super::node::NodeName;
use crate::planted::{Planted, PlantedBug};
use crate::shim::net::BoxWrite;
use crate::shim::sync::{AsyncMutex, AtomicU8, Notify, Ordering, Weak};
use crate::shim::time::timeout;

/// Why a connection went down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum DownReason {
    /// End of stream at a frame boundary.
    PeerClosed = 1,
    /// Any other read failure: I/O error, truncated or oversized frame.
    ReadError,
    /// A write failed.
    WriteError,
    /// A write did not finish within the sender's deadline.
    WriteTimeout,
    /// `disconnect_node` was called.
    ManualDisconnect,
    /// No traffic within the heartbeat window.
    HeartbeatTimeout,
    /// The control lane was full when a control for this connection arrived.
    ControlOverflow,
}

impl DownReason {
    const ALL: [DownReason; 7] = [
        Self::PeerClosed,
        Self::ReadError,
        Self::WriteError,
        Self::WriteTimeout,
        Self::ManualDisconnect,
        Self::HeartbeatTimeout,
        Self::ControlOverflow,
    ];

    fn from_code(code: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| *reason as u8 == code)
    }
}

const UP: u8 = 0;

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
    manager: Weak<ManagerShared>,
    planted: Planted,
}

impl DistConnection {
    pub(super) fn new(
        node: NodeName,
        generation: u64,
        peer: String,
        local: String,
        writer: BoxWrite,
        manager: Weak<ManagerShared>,
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
        DownReason::from_code(self.state.load(Ordering::Acquire))
    }

    /// Writes one whole frame under the writer lock. Refused once down; an
    /// I/O error marks the connection down (`WriteError`).
    ///
    /// # Errors
    /// `NotConnected` when down, or the write's own error.
    pub async fn write_raw(&self, frame: &[u8]) -> io::Result<()> {
        let mut writer = self.writer.lock().await;
        // Checked under the lock: the flag may have flipped while we waited.
        let writer = match writer.as_mut() {
            Some(writer) if !self.is_down() => writer,
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::NotConnected,
                    "connection is down",
                ))
            }
        };
        let written = async {
            writer.write_all(frame).await?;
            writer.flush().await
        }
        .await;
        if written.is_err() {
            self.mark_down(DownReason::WriteError);
        }
        written
    }

    /// Marks the connection down. The first call records `reason`, wakes the
    /// read loop and tells the manager (which fires the down hook); every
    /// later call is a no-op.
    pub fn mark_down(&self, reason: DownReason) {
        let first = self
            .state
            .compare_exchange(UP, reason as u8, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !first && !self.planted.has(PlantedBug::DownHookNotOnceGuarded) {
            return;
        }
        self.shutdown.notify_one();
        if let Some(manager) = self.manager.upgrade() {
            manager.connection_down(self, reason);
        }
    }

    /// `mark_down(WriteTimeout)`, the drain's deadline arm.
    pub fn mark_down_write_timeout(&self) {
        self.mark_down(DownReason::WriteTimeout);
    }

    /// `mark_down(ControlOverflow)`, the full-control-lane arm.
    pub fn mark_down_control_overflow(&self) {
        self.mark_down(DownReason::ControlOverflow);
    }

    /// Resolves once the connection is marked down (a stored permit makes a
    /// `mark_down` that happens before the wait still count).
    pub(super) async fn down_notified(&self) {
        self.shutdown.notified().await;
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::dist::manager::{ConnectionManager, ManagerConfig};
    use crate::shim::net::{Connected, TokioTcp};
    use crate::shim::rt::RuntimeChoice;
    use crate::shim::sync::Arc;

    fn in_memory() -> Connected {
        let (ours, theirs) = tokio::io::duplex(1024);
        std::mem::forget(theirs); // keep the peer open for the whole test
        let (read, write) = tokio::io::split(ours);
        Connected {
            read: Box::new(read),
            write: Box::new(write),
            peer: "memory".into(),
            local: "memory".into(),
        }
    }

    fn manager(planted: Planted) -> ConnectionManager {
        let mut config = ManagerConfig::new(RuntimeChoice::current());
        config.planted = planted;
        ConnectionManager::new(NodeName::from("local@test"), Arc::new(TokioTcp), config).unwrap()
    }

    /// The first half of `mark_down` (the flag flip) without the second (the
    /// manager's removal): the window a racing thread can land in.
    fn flip_only(connection: &DistConnection) {
        connection
            .state
            .store(DownReason::WriteTimeout as u8, Ordering::Release);
    }

    /// The window between `mark_down`'s flag flip and the manager's removal
    /// has no `.await` in it, so only a thread can land there; this test
    /// stops time inside it by doing the two halves by hand.
    #[tokio::test]
    async fn a_down_but_not_yet_removed_entry_counts_as_absent_and_is_displaced() {
        let manager = manager(Planted::none());
        let downs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&downs);
        manager.register_connection_down(move |event| sink.lock().unwrap().push(event.clone()));
        let node = NodeName::from("peer@test");
        let old = manager.register(node.clone(), in_memory());

        // First half of mark_down: the flag flips ...
        flip_only(&old);
        // ... and before the removal, the entry must already count as gone.
        assert!(
            manager.get_connection(&node).is_none(),
            "a down entry was handed out"
        );
        assert!(manager.connected_nodes().is_empty());
        let new = manager.register(node.clone(), in_memory());
        assert_eq!(new.generation(), 2, "the down entry blocked the redial");

        // Second half: the manager removes only its own entry and fires once.
        old.manager
            .upgrade()
            .unwrap()
            .connection_down(&old, DownReason::WriteTimeout);
        assert!(
            Arc::ptr_eq(&manager.get_connection(&node).unwrap(), &new),
            "evicted the successor"
        );
        let downs = downs.lock().unwrap().clone();
        assert_eq!(downs.len(), 1, "{downs:?}");
        assert_eq!(
            (downs[0].generation, downs[0].reason),
            (1, DownReason::WriteTimeout)
        );
    }

    #[cfg(feature = "planted-bugs")]
    #[tokio::test]
    async fn down_entry_treated_as_connected_hands_out_the_dead_generation_and_blocks_the_redial() {
        let manager = manager(Planted::bug(PlantedBug::DownEntryTreatedAsConnected));
        let node = NodeName::from("peer@test");
        let old = manager.register(node.clone(), in_memory());
        flip_only(&old);
        let handed_out = manager
            .get_connection(&node)
            .expect("the planted bug did not show");
        assert!(handed_out.is_down());
        let redialed = manager.register(node.clone(), in_memory());
        assert!(
            Arc::ptr_eq(&redialed, &old),
            "the planted bug did not show: the redial got through"
        );
    }
}
