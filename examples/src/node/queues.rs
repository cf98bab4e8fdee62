//! The sender's side of the queues: data enqueued to a node's live
//! generation and controls to the generation they are pinned to, each
//! under its capacity (one count per lane across all generations);
//! shutdown; and the account of every frame that leaves a queue: popped
//! for writing, or unwritten because its generation is down or the sender
//! shut down.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lanesim_target::node::{Conn, ControlOutcome, DataOutcome, DownReason, SenderLane};

use super::link::{Item, Link, Push};
use super::shared::{bump, Shared};
use super::sync::lock;

fn reserve(count: &AtomicUsize, capacity: usize) -> bool {
    count
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            (n < capacity).then_some(n + 1)
        })
        .is_ok()
}

impl Shared {
    // --- queue accounting --------------------------------------------------

    /// Takes the next frame off `link`'s queue for writing.
    pub(super) fn pop(&self, link: &Link) -> Option<Item> {
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
    pub(super) fn account_dead(&self, link: &Link, item: &Item) {
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
    pub(super) fn drain_dead(&self, link: &Arc<Link>) {
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
    pub(super) fn discard_queue(&self, link: &Arc<Link>) {
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

    pub(super) fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
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

    pub(super) fn enqueue_control(&self, pinned: &Conn, frame: Arc<[u8]>) -> ControlOutcome {
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

    pub(super) fn shutdown(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.shutdown_signal.send_replace(true);
        let links: Vec<Arc<Link>> = lock(&self.state).live.values().cloned().collect();
        for link in &links {
            self.discard_queue(link);
        }
    }
}
