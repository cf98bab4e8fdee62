//! Channels: flume's, bounded and unbounded, normally; under a model
//! checker one checker mutex around a queue, with the same names and
//! semantics.
//!
//! Offered: `unbounded`, `bounded`, `send` (which, on a full bounded
//! channel, waits for room: flume blocks the thread, the model yields to
//! the checker until a receive makes room), `send_async`, `try_send`,
//! `try_recv` and `recv_async`. flume's `Selector` is not (it draws from
//! fastrand and would break seeded replay). Pinned under shuttle by
//! `tests/shuttle_chan.rs`.

#[cfg(not(any(loom, shuttle)))]
pub use flume::{
    bounded, unbounded, Receiver, RecvError, SendError, Sender, TryRecvError, TrySendError,
};

#[cfg(any(loom, shuttle))]
pub use loom_chan::{
    bounded, unbounded, Receiver, RecvError, SendError, Sender, TryRecvError, TrySendError,
};

/// A checker-visible channel (loom or shuttle): one checker mutex around
/// the queue, an explicit sender count and receiver flag for disconnects, and
/// the one receiver's waker. Same names and semantics as the flume subset the
/// production code uses.
#[cfg(any(loom, shuttle))]
mod loom_chan {
    use std::collections::VecDeque;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context, Poll, Waker};

    use crate::model::Mutex;

    struct State<T> {
        queue: VecDeque<T>,
        capacity: Option<usize>,
        senders: usize,
        receiver: bool,
        /// The receiver's waker while it waits.
        waker: Option<Waker>,
        /// Senders waiting for room in a full bounded channel.
        blocked: Vec<Waker>,
    }

    pub struct Sender<T>(Arc<Mutex<State<T>>>);
    pub struct Receiver<T>(Arc<Mutex<State<T>>>);

    /// Why `try_send` refused.
    pub enum TrySendError<T> {
        Full(T),
        Disconnected(T),
    }

    /// The receiver is gone.
    #[derive(Debug)]
    pub struct SendError<T>(pub T);

    /// Every sender is gone and the queue is empty.
    #[derive(Debug)]
    pub enum RecvError {
        Disconnected,
    }

    /// Nothing to receive now.
    #[derive(Debug)]
    pub enum TryRecvError {
        Empty,
        Disconnected,
    }

    fn channel<T>(capacity: Option<usize>) -> (Sender<T>, Receiver<T>) {
        let state = Arc::new(Mutex::new(State {
            queue: VecDeque::new(),
            capacity,
            senders: 1,
            receiver: true,
            waker: None,
            blocked: Vec::new(),
        }));
        (Sender(Arc::clone(&state)), Receiver(state))
    }

    pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
        channel(None)
    }

    /// A channel that holds at most `capacity` items. Unlike flume, a
    /// capacity of 0 is not a rendezvous: it is refused.
    pub fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
        assert!(capacity > 0, "a model channel of capacity 0 is not offered");
        channel(Some(capacity))
    }

    /// Wakes outside the lock: a waker may run checker code.
    fn wake(waker: Option<Waker>) {
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    impl<T> Sender<T> {
        /// Sends, waiting for room in a full bounded channel (yielding to
        /// the checker until a receive makes some).
        pub fn send(&self, mut item: T) -> Result<(), SendError<T>> {
            loop {
                match self.try_send(item) {
                    Ok(()) => return Ok(()),
                    Err(TrySendError::Disconnected(returned)) => return Err(SendError(returned)),
                    Err(TrySendError::Full(returned)) => {
                        item = returned;
                        crate::model::yield_now();
                    }
                }
            }
        }

        /// Sends, waiting (as a future) for room in a full bounded channel.
        pub fn send_async(&self, item: T) -> SendFut<'_, T> {
            SendFut {
                sender: self,
                item: Some(item),
            }
        }

        pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
            self.offer(item, None)
        }

        /// Queues `item` if there is room; if full, registers `waiting` (a
        /// sender that will wait for room) under the same lock, so no
        /// receive can slip between the look and the registration.
        fn offer(&self, item: T, waiting: Option<&Waker>) -> Result<(), TrySendError<T>> {
            let waker = {
                let mut state = self.0.lock().unwrap();
                if !state.receiver {
                    return Err(TrySendError::Disconnected(item));
                }
                if state
                    .capacity
                    .is_some_and(|capacity| state.queue.len() >= capacity)
                {
                    state.blocked.extend(waiting.cloned());
                    return Err(TrySendError::Full(item));
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
            self.0.lock().unwrap().senders += 1;
            Self(Arc::clone(&self.0))
        }
    }

    impl<T> Drop for Sender<T> {
        fn drop(&mut self) {
            let waker = {
                let mut state = self.0.lock().unwrap();
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

    /// Wakes every sender waiting for room (outside the lock).
    fn unblock(blocked: Vec<Waker>) {
        for waker in blocked {
            waker.wake();
        }
    }

    impl<T> Receiver<T> {
        pub fn try_recv(&self) -> Result<T, TryRecvError> {
            self.take(None)
        }

        /// Takes the oldest item, waking the senders waiting for room; if
        /// there is none and senders remain, registers `waiting` (a
        /// receiver that will wait) under the same lock, so no send can
        /// slip between the look and the registration.
        fn take(&self, waiting: Option<&Waker>) -> Result<T, TryRecvError> {
            let (got, blocked) = {
                let mut state = self.0.lock().unwrap();
                match state.queue.pop_front() {
                    Some(item) => (Ok(item), std::mem::take(&mut state.blocked)),
                    None if state.senders == 0 => (Err(TryRecvError::Disconnected), Vec::new()),
                    None => {
                        if let Some(waker) = waiting {
                            state.waker = Some(waker.clone());
                        }
                        (Err(TryRecvError::Empty), Vec::new())
                    }
                }
            };
            unblock(blocked);
            got
        }

        pub fn recv_async(&self) -> RecvFut<'_, T> {
            RecvFut(self)
        }
    }

    impl<T> Drop for Receiver<T> {
        fn drop(&mut self) {
            let (queue, blocked) = {
                let mut state = self.0.lock().unwrap();
                state.receiver = false;
                (
                    std::mem::take(&mut state.queue),
                    std::mem::take(&mut state.blocked),
                )
            };
            // The items' destructors and the wakers run outside the lock.
            drop(queue);
            unblock(blocked);
        }
    }

    /// [`Sender::send_async`]'s future.
    pub struct SendFut<'a, T> {
        sender: &'a Sender<T>,
        item: Option<T>,
    }

    impl<T> Unpin for SendFut<'_, T> {}

    impl<T> Future for SendFut<'_, T> {
        type Output = Result<(), SendError<T>>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let item = self.item.take().expect("polled after it finished");
            match self.sender.offer(item, Some(cx.waker())) {
                Ok(()) => Poll::Ready(Ok(())),
                Err(TrySendError::Disconnected(item)) => Poll::Ready(Err(SendError(item))),
                Err(TrySendError::Full(item)) => {
                    self.item = Some(item);
                    Poll::Pending
                }
            }
        }
    }

    pub struct RecvFut<'a, T>(&'a Receiver<T>);

    impl<T> Future for RecvFut<'_, T> {
        type Output = Result<T, RecvError>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            match self.0.take(Some(cx.waker())) {
                Ok(item) => Poll::Ready(Ok(item)),
                Err(TryRecvError::Disconnected) => Poll::Ready(Err(RecvError::Disconnected)),
                Err(TryRecvError::Empty) => Poll::Pending,
            }
        }
    }
}
