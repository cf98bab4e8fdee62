//! A generation's life in the table: registering a connected socket as a
//! peer's new generation (or, when the cross-dial tie-break keeps the one
//! there, refusing it), taking a generation down exactly once, and the up
//! and down reports, a down never before its up. The table is changed and
//! a generation marked down in one critical section; the reports are made
//! after the lock is let go.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use lanesim_target::net::Connected;
use lanesim_target::node::{Down, DownReason, Origin, Up};
use tokio::sync::{watch, Notify};

use super::link::{Gate, Link, Queue};
use super::shared::Shared;
use super::sync::lock;
use super::writer::Writer;

impl Shared {
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
    pub(super) fn install(
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
    pub(super) fn take_down(&self, link: &Link, reason: DownReason) -> bool {
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

    // --- the public operations --------------------------------------------

    pub(super) fn disconnect(&self, node: &str) {
        if let Some(link) = self.live(node) {
            self.take_down(&link, DownReason::ManualDisconnect);
        }
    }

    /// The node is dropped: shut the sender, take every generation down,
    /// and end every task.
    pub(super) fn stop(&self) {
        self.shutdown();
        let links: Vec<Arc<Link>> = lock(&self.state).live.values().cloned().collect();
        for link in &links {
            self.take_down(link, DownReason::ManualDisconnect);
        }
        self.stop_signal.send_replace(true);
    }
}
