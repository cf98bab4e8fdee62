//! Channels: flume's unbounded channel normally; under a model checker one
//! checker mutex around a queue, with the same names and semantics.
//!
//! Only `send`, `try_send`, `try_recv` and `recv_async` are offered. flume's
//! `Selector` is not (it draws from fastrand and would break seeded
//! replay).

#[cfg(not(any(loom, shuttle)))]
pub use flume::{unbounded, Receiver, Sender, TrySendError};

#[cfg(any(loom, shuttle))]
pub use loom_chan::{unbounded, Receiver, Sender, TrySendError};

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
    pub struct RecvError;

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
        }));
        (Sender(Arc::clone(&state)), Receiver(state))
    }

    pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
        channel(None)
    }

    /// Wakes outside the lock: a waker may run checker code.
    fn wake(waker: Option<Waker>) {
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    impl<T> Sender<T> {
        pub fn send(&self, item: T) -> Result<(), SendError<T>> {
            match self.try_send(item) {
                Ok(()) => Ok(()),
                Err(TrySendError::Full(item) | TrySendError::Disconnected(item)) => {
                    Err(SendError(item))
                }
            }
        }

        pub fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
            let waker = {
                let mut state = self.0.lock().unwrap();
                if !state.receiver {
                    return Err(TrySendError::Disconnected(item));
                }
                if state
                    .capacity
                    .is_some_and(|capacity| state.queue.len() >= capacity)
                {
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

    impl<T> Receiver<T> {
        pub fn try_recv(&self) -> Result<T, TryRecvError> {
            let mut state = self.0.lock().unwrap();
            match state.queue.pop_front() {
                Some(item) => Ok(item),
                None if state.senders == 0 => Err(TryRecvError::Disconnected),
                None => Err(TryRecvError::Empty),
            }
        }

        pub fn recv_async(&self) -> RecvFut<'_, T> {
            RecvFut(self)
        }
    }

    impl<T> Drop for Receiver<T> {
        fn drop(&mut self) {
            let mut state = self.0.lock().unwrap();
            state.receiver = false;
            state.queue.clear();
        }
    }

    pub struct RecvFut<'a, T>(&'a Receiver<T>);

    impl<T> Future for RecvFut<'_, T> {
        type Output = Result<T, RecvError>;

        /// Looks and registers under the one lock, so no send can slip
        /// between them.
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let mut state = self.0 .0.lock().unwrap();
            if let Some(item) = state.queue.pop_front() {
                return Poll::Ready(Ok(item));
            }
            if state.senders == 0 {
                return Poll::Ready(Err(RecvError));
            }
            state.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}
