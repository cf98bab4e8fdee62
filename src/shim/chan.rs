//! Channels: flume's unbounded (lanes) and bounded (sender lanes).
//!
//! Only the operations the production code needs are used: `send`,
//! `try_send`, `try_recv` and `recv_async`. flume's `Selector` is never used
//! (it draws from fastrand and would break seeded replay).

#[cfg(not(loom))]
pub(crate) use flume::{bounded, unbounded, Receiver, Sender, TrySendError};

#[cfg(loom)]
pub(crate) use loom_chan::{bounded, unbounded, Receiver, Sender, TrySendError};

/// A loom-visible channel: a loom mutex around the queue, an explicit
/// sender count and receiver flag for disconnects, and a loom `AtomicWaker`
/// for the one receiver's async wait. Same names and semantics as the flume
/// subset the production code uses.
#[cfg(loom)]
mod loom_chan {
    use std::collections::VecDeque;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context, Poll};

    use loom::future::AtomicWaker;
    use loom::sync::Mutex;

    struct State<T> {
        queue: VecDeque<T>,
        capacity: Option<usize>,
        senders: usize,
        receiver: bool,
    }

    struct Chan<T> {
        state: Mutex<State<T>>,
        waker: AtomicWaker,
    }

    pub(crate) struct Sender<T>(Arc<Chan<T>>);
    pub(crate) struct Receiver<T>(Arc<Chan<T>>);

    /// Why `try_send` refused.
    pub(crate) enum TrySendError<T> {
        Full(T),
        Disconnected(T),
    }

    /// The receiver is gone.
    #[derive(Debug)]
    pub(crate) struct SendError<T>(pub(crate) T);

    /// Every sender is gone and the queue is empty.
    #[derive(Debug)]
    pub(crate) struct RecvError;

    /// Nothing to receive now.
    #[derive(Debug)]
    pub(crate) enum TryRecvError {
        Empty,
        Disconnected,
    }

    fn channel<T>(capacity: Option<usize>) -> (Sender<T>, Receiver<T>) {
        let chan = Arc::new(Chan {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                capacity,
                senders: 1,
                receiver: true,
            }),
            waker: AtomicWaker::new(),
        });
        (Sender(Arc::clone(&chan)), Receiver(chan))
    }

    pub(crate) fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
        channel(None)
    }

    pub(crate) fn bounded<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
        channel(Some(capacity))
    }

    impl<T> Sender<T> {
        pub(crate) fn send(&self, item: T) -> Result<(), SendError<T>> {
            match self.try_send(item) {
                Ok(()) => Ok(()),
                Err(TrySendError::Full(item) | TrySendError::Disconnected(item)) => {
                    Err(SendError(item))
                }
            }
        }

        pub(crate) fn try_send(&self, item: T) -> Result<(), TrySendError<T>> {
            {
                let mut state = self.0.state.lock().unwrap();
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
            }
            self.0.waker.wake();
            Ok(())
        }
    }

    impl<T> Clone for Sender<T> {
        fn clone(&self) -> Self {
            self.0.state.lock().unwrap().senders += 1;
            Self(Arc::clone(&self.0))
        }
    }

    impl<T> Drop for Sender<T> {
        fn drop(&mut self) {
            let last = {
                let mut state = self.0.state.lock().unwrap();
                state.senders -= 1;
                state.senders == 0
            };
            if last {
                self.0.waker.wake();
            }
        }
    }

    impl<T> Receiver<T> {
        pub(crate) fn try_recv(&self) -> Result<T, TryRecvError> {
            let mut state = self.0.state.lock().unwrap();
            match state.queue.pop_front() {
                Some(item) => Ok(item),
                None if state.senders == 0 => Err(TryRecvError::Disconnected),
                None => Err(TryRecvError::Empty),
            }
        }

        pub(crate) fn recv_async(&self) -> RecvFut<'_, T> {
            RecvFut(self)
        }
    }

    impl<T> Drop for Receiver<T> {
        fn drop(&mut self) {
            let mut state = self.0.state.lock().unwrap();
            state.receiver = false;
            state.queue.clear();
        }
    }

    pub(crate) struct RecvFut<'a, T>(&'a Receiver<T>);

    impl<T> Future for RecvFut<'_, T> {
        type Output = Result<T, RecvError>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            // Register first, then look: a send between the two is seen by
            // the look, a send after it wakes us.
            self.0 .0.waker.register_by_ref(cx.waker());
            match self.0.try_recv() {
                Ok(item) => Poll::Ready(Ok(item)),
                Err(TryRecvError::Disconnected) => Poll::Ready(Err(RecvError)),
                Err(TryRecvError::Empty) => Poll::Pending,
            }
        }
    }
}
