//! One connection generation: its identity, a `down` flag that turns true
//! exactly once (with a notify for the tasks watching it), and the writer
//! mutex around its write half.
//!
//! Model. Every frame this node writes (data, controls, keepalives) goes
//! through [`Link::write_frame`]: check `down` and refuse if it is set,
//! await the writer lock, then write the whole frame under the write
//! deadline; a failed or timed-out write takes the generation down.
//! Going down ([`Link::mark_down`]) happens once: it sets the flag, wakes
//! the watchers, leaves the table, reports `down`, and closes the write half
//! so the peer sees the end of the stream.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use lanesim_target::net::BoxWrite;
use lanesim_target::node::{Connection, Down, DownReason, Generation, Origin};
use tokio::io::AsyncWriteExt;
use tokio::sync::{Mutex, Notify};

use super::shared::Shared;

/// Why a write did not happen or did not finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WriteError {
    /// The generation was already down: nothing was attempted.
    Down,
    /// The write failed (the generation is now down).
    Failed,
    /// The write missed its deadline (the generation is now down).
    TimedOut,
}

/// One generation of a connection to a peer node.
pub(super) struct Link {
    this: Weak<Link>,
    node: String,
    generation: u64,
    origin: Origin,
    local: String,
    peer: String,
    write_timeout: Duration,
    down: AtomicBool,
    down_notify: Notify,
    writer: Mutex<Option<BoxWrite>>,
    shared: Weak<Shared>,
}

impl Link {
    /// A live generation writing to `write`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        shared: &Arc<Shared>,
        node: &str,
        generation: u64,
        origin: Origin,
        local: String,
        peer: String,
        write: BoxWrite,
    ) -> Arc<Self> {
        Arc::new_cyclic(|this| Self {
            this: this.clone(),
            node: node.to_owned(),
            generation,
            origin,
            local,
            peer,
            write_timeout: shared.write_timeout,
            down: AtomicBool::new(false),
            down_notify: Notify::new(),
            writer: Mutex::new(Some(write)),
            shared: Arc::downgrade(shared),
        })
    }

    /// Which end dialed it.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// Its name in a report.
    pub fn id(&self) -> Generation<'_> {
        Generation {
            node: &self.node,
            generation: self.generation,
        }
    }

    /// Writes one whole frame: refused at once if the generation is down;
    /// otherwise `started` is called, the writer lock awaited, and the frame
    /// written within the write deadline.
    pub async fn write_frame(
        &self,
        frame: &[u8],
        started: impl FnOnce(),
    ) -> Result<(), WriteError> {
        if self.is_down() {
            return Err(WriteError::Down);
        }
        started();
        let mut writer = self.writer.lock().await;
        let Some(stream) = writer.as_mut() else {
            // Closed under us: the generation went down and its write half
            // is gone.
            return Err(WriteError::Failed);
        };
        let written = tokio::time::timeout(self.write_timeout, async {
            stream.write_all(frame).await?;
            stream.flush().await
        })
        .await;
        drop(writer);
        match written {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => {
                self.mark_down(DownReason::WriteError);
                Err(WriteError::Failed)
            }
            Err(_) => {
                self.mark_down(DownReason::WriteTimeout);
                Err(WriteError::TimedOut)
            }
        }
    }

    /// Takes the generation down for `reason`, once: later calls do nothing
    /// and return `false`.
    pub fn mark_down(&self, reason: DownReason) -> bool {
        if self.down.swap(true, Ordering::AcqRel) {
            return false;
        }
        self.down_notify.notify_waiters();
        let Some(shared) = self.shared.upgrade() else {
            return true;
        };
        let table = shared.table.remove(&self.node, self.generation);
        shared.reports.down(Down {
            node: &self.node,
            generation: self.generation,
            reason,
            table,
        });
        if let Some(this) = self.this.upgrade() {
            shared.spawn(async move { this.close().await });
        }
        true
    }

    /// Waits until the generation is down.
    pub async fn wait_down(&self) {
        loop {
            let notified = self.down_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_down() {
                return;
            }
            notified.await;
        }
    }

    /// Shuts the write half down and drops it, once any write in progress
    /// has let go of the lock.
    async fn close(&self) {
        let stream = self.writer.lock().await.take();
        if let Some(mut stream) = stream {
            let _ = tokio::time::timeout(self.write_timeout, stream.shutdown()).await;
        }
    }

    /// For a node being dropped: marks the generation down without a report
    /// and drops its write half if no write holds it.
    pub fn close_silently(&self) {
        self.down.store(true, Ordering::Release);
        self.down_notify.notify_waiters();
        if let Ok(mut writer) = self.writer.try_lock() {
            writer.take();
        }
    }
}

impl Connection for Link {
    fn node(&self) -> &str {
        &self.node
    }

    fn generation(&self) -> u64 {
        self.generation
    }

    fn is_down(&self) -> bool {
        self.down.load(Ordering::Acquire)
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

impl Link {
    /// The `Arc` this generation lives in.
    pub fn arc(&self) -> Option<Arc<Link>> {
        self.this.upgrade()
    }
}
