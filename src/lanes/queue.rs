//! A lane's queue: unbounded, any number of senders, one receiver that takes
//! everything queued at once.
//!
//! Model: one lock ([`crate::shim::sync::Mutex`]) around a `VecDeque`, the
//! sender count, whether the receiver lives, and the receiver's waker. A send
//! pushes and takes the waker under the lock and wakes outside it. The
//! receiver never pops one item: [`Receiver::take_all`] swaps the whole queue
//! with the lane's own (empty) batch, so a lane with a backlog touches the
//! lock its producers use once per batch, not once per item, and neither side
//! allocates in the steady state (the two buffers trade places and keep their
//! capacity). Looking and registering the waker happen under the one lock, so
//! no send can slip between them (no lost wake-up).
//!
//! Why our own and not flume's: flume pops one item per lock, and its
//! `drain` moves the queue's buffer out, so the next send allocates a new one
//! (at 10,000 keys, one allocation per item; measured 0.67x upstream). And
//! because it is written on the shim's `Mutex`, loom and shuttle check this
//! queue itself, not a model of someone else's channel
//! (`loom_lanes::queue_*`).
//!
//! In the router, producers send only under the key's shard lock (invariant
//! 1), so there is one sender at a time; the queue does not rely on it (the
//! planted bug `RouteSendsAfterUnlock` sends outside the lock and must stay
//! memory-safe).

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::shim::sync::{Arc, AtomicUsize, Mutex};

/// One lane's shared allocation: its `pending` count beside its queue, so a
/// route touches one allocation, not two (at 10,000 keys every route is a
/// cache miss on each). Its address is the lane's identity (the reap's
/// `ptr_eq`).
pub(crate) struct Shared<T> {
    /// Items admitted to this lane whose handler has not resolved yet.
    /// Incremented by producers under the shard lock; decremented only by
    /// the lane task. Reading 0 under the shard lock proves the lane idle.
    pub(crate) pending: AtomicUsize,
    state: Mutex<State<T>>,
}

struct State<T> {
    queue: VecDeque<T>,
    senders: usize,
    receiver: bool,
    /// The receiver's waker while it waits.
    waker: Option<Waker>,
}

/// A sending end; cloning counts senders, the last one's drop wakes the
/// receiver to see the disconnect.
pub(crate) struct Sender<T>(Arc<Shared<T>>);

/// The one receiving end.
pub(crate) struct Receiver<T>(Arc<Shared<T>>);

/// What [`Receiver::take_all`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Taken {
    /// Items were moved into the batch.
    Some,
    /// Nothing queued; senders remain.
    Empty,
    /// Nothing queued and every sender is gone: nothing will ever come.
    Closed,
}

/// A new queue.
pub(crate) fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        pending: AtomicUsize::new(0),
        state: Mutex::new(State {
            queue: VecDeque::new(),
            senders: 1,
            receiver: true,
            waker: None,
        }),
    });
    (Sender(Arc::clone(&shared)), Receiver(shared))
}

/// Wakes outside the lock: a waker may run scheduler (or checker) code.
fn wake(waker: Option<Waker>) {
    if let Some(waker) = waker {
        waker.wake();
    }
}

impl<T> Sender<T> {
    /// The lane's shared allocation.
    pub(crate) fn shared(&self) -> &Arc<Shared<T>> {
        &self.0
    }

    /// Queues `item`; hands it back when the receiver is gone.
    pub(crate) fn send(&self, item: T) -> Result<(), T> {
        let waker = {
            let mut state = self.0.state.lock();
            if !state.receiver {
                return Err(item);
            }
            state.queue.push_back(item);
            state.waker.take()
        };
        wake(waker);
        Ok(())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.state.lock().senders += 1;
        Self(Arc::clone(&self.0))
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut state = self.0.state.lock();
            state.senders -= 1;
            if state.senders == 0 {
                state.waker.take()
            } else {
                None
            }
        };
        wake(waker);
    }
}

impl<T> Receiver<T> {
    /// Moves everything queued to the back of `batch` (a swap when `batch`
    /// is empty, as the lane keeps it).
    pub(crate) fn take_all(&self, batch: &mut VecDeque<T>) -> Taken {
        let mut state = self.0.state.lock();
        Self::take_locked(&mut state, batch)
    }

    fn take_locked(state: &mut State<T>, batch: &mut VecDeque<T>) -> Taken {
        if state.queue.is_empty() {
            return if state.senders == 0 {
                Taken::Closed
            } else {
                Taken::Empty
            };
        }
        if batch.is_empty() {
            std::mem::swap(&mut state.queue, batch);
        } else {
            batch.append(&mut state.queue);
        }
        Taken::Some
    }

    /// Waits until something can be taken into `batch` (then
    /// [`Taken::Some`]) or nothing ever can ([`Taken::Closed`]).
    pub(crate) fn wait_into<'a>(&'a self, batch: &'a mut VecDeque<T>) -> WaitInto<'a, T> {
        WaitInto {
            receiver: self,
            batch,
        }
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // The items are dropped outside the lock: their drop is the user's
        // code.
        let _queued = {
            let mut state = self.0.state.lock();
            state.receiver = false;
            state.waker = None;
            std::mem::take(&mut state.queue)
        };
    }
}

/// [`Receiver::wait_into`]'s future.
pub(crate) struct WaitInto<'a, T> {
    receiver: &'a Receiver<T>,
    batch: &'a mut VecDeque<T>,
}

impl<T> Future for WaitInto<'_, T> {
    type Output = Taken;

    /// Looks and registers under the one lock, so no send can slip between
    /// them.
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Taken> {
        let this = self.get_mut();
        let mut state = this.receiver.0.state.lock();
        match Receiver::take_locked(&mut state, this.batch) {
            Taken::Empty => {
                if !state
                    .waker
                    .as_ref()
                    .is_some_and(|waker| waker.will_wake(cx.waker()))
                {
                    state.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            taken => Poll::Ready(taken),
        }
    }
}
