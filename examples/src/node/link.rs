//! One connection generation ([`Link`]): what it is (peer, number,
//! origin, addresses), its down flag and the signal that stops its tasks,
//! its own outbound queue of [`Item`]s with the writer's wake-up, and the
//! [`Gate`] that keeps its down report behind its up report. Controls are
//! pinned to a `Link`, so a generation carries its queue with it.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use lanesim_target::node::{Connection, DownReason, Generation, Origin, SenderLane};
use tokio::sync::{watch, Notify};

use super::sync::lock;

/// One frame waiting in a generation's queue.
pub(super) enum Item {
    Data(Arc<[u8]>),
    Control(Arc<[u8]>),
}

impl Item {
    pub(super) fn lane(&self) -> SenderLane {
        match self {
            Item::Data(_) => SenderLane::Data,
            Item::Control(_) => SenderLane::Control,
        }
    }

    pub(super) fn frame(&self) -> &Arc<[u8]> {
        match self {
            Item::Data(frame) | Item::Control(frame) => frame,
        }
    }
}

/// A generation's outbound queue.
#[derive(Default)]
pub(super) struct Queue {
    pub(super) items: VecDeque<Item>,
    /// The lane of the frame the writer is writing now, if any.
    pub(super) in_flight: Option<SenderLane>,
    /// The writer has gone: nothing more is accepted.
    pub(super) closed: bool,
}

/// Makes sure `down` is never reported before `up`.
#[derive(Default)]
pub(super) struct Gate {
    pub(super) up_reported: bool,
    pub(super) pending_down: Option<(DownReason, Option<u64>)>,
}

/// One connection generation.
pub(super) struct Link {
    pub(super) owner: u64,
    pub(super) node: String,
    pub(super) generation: u64,
    pub(super) origin: Origin,
    pub(super) local: String,
    pub(super) peer: String,
    /// Set once, under the table lock.
    pub(super) down: AtomicBool,
    /// Raised right after `down` is set, to stop this generation's tasks.
    pub(super) down_signal: watch::Sender<bool>,
    pub(super) queue: Mutex<Queue>,
    pub(super) wake: Notify,
    pub(super) gate: Mutex<Gate>,
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
pub(super) enum Push {
    Queued,
    /// The sender is shut down.
    ShutDown,
    /// The generation's writer is gone (it is down).
    Dead,
}

impl Link {
    pub(super) fn id(&self) -> Generation<'_> {
        Generation {
            node: &self.node,
            generation: self.generation,
        }
    }

    pub(super) fn push(&self, sender_closed: &AtomicBool, item: Item) -> Push {
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
