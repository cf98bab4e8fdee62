//! Tasks: spawn one, on the current runtime or a handle to one, and yield.
//!
//! Normally these are tokio's own (`tokio::task::spawn`, `yield_now`,
//! `JoinHandle`, `JoinError`, `tokio::runtime::Handle`), re-exported: code
//! written against them is code written against tokio.
//!
//! Under shuttle a task is one the checker schedules
//! (`shuttle::future::spawn`): every poll of it is a step the checker may
//! put anywhere among the other tasks' steps. Its [`JoinHandle`] behaves as
//! tokio's: awaiting it gives the task's output (or a [`JoinError`] if it
//! panicked or was aborted), `abort` cancels it at its next await, and
//! dropping the handle detaches the task, which runs on (shuttle's own
//! handle would abort it). [`Handle`] stands for the checker's scheduler:
//! `Handle::current()` works anywhere inside a model, and its `spawn` is
//! [`spawn`].
//!
//! Under loom a task is a loom thread running the future to completion.
//!
//! Either way `abort` is the shim's own, as tokio's: the task is woken and,
//! at that poll, its future is dropped and its handle gives a cancelled
//! [`JoinError`] (shuttle's abort leaves a task that waits for a wake-up
//! waiting for ever).
//!
//! Pinned under shuttle by `tests/shuttle_task.rs`.

#[cfg(not(any(loom, shuttle)))]
pub use tokio::runtime::Handle;
#[cfg(not(any(loom, shuttle)))]
pub use tokio::task::{spawn, yield_now, AbortHandle, JoinError, JoinHandle};

#[cfg(any(loom, shuttle))]
pub use model_task::{spawn, yield_now, AbortHandle, Handle, JoinError, JoinHandle};

/// The model checker's number for the task running now: shuttle's task id
/// under `--cfg shuttle` (ids grow in spawn order), `None` in any other
/// build (tokio's task ids are opaque; the worlds number tasks themselves).
#[must_use]
pub fn current_id() -> Option<u64> {
    #[cfg(shuttle)]
    {
        Some(usize::from(shuttle::current::me()) as u64)
    }
    #[cfg(not(shuttle))]
    {
        None
    }
}

#[cfg(any(loom, shuttle))]
mod model_task {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::task::{Context, Poll};

    /// Why awaiting a task gave no output.
    #[derive(Debug)]
    pub struct JoinError {
        cancelled: bool,
    }

    impl JoinError {
        /// It was aborted.
        #[must_use]
        pub fn is_cancelled(&self) -> bool {
            self.cancelled
        }

        /// It panicked.
        #[must_use]
        pub fn is_panic(&self) -> bool {
            !self.cancelled
        }
    }

    impl std::fmt::Display for JoinError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(if self.cancelled {
                "task was cancelled"
            } else {
                "task panicked"
            })
        }
    }

    impl std::error::Error for JoinError {}

    /// A task's abort switch: set, and the task woken to see it.
    #[derive(Default)]
    struct Abort(
        crate::model::Mutex<(bool, Option<std::task::Waker>)>,
        /// The task has ended (its output is ready, or it was cancelled or
        /// panicked): what `is_finished` reads. Std's: the checker runs one
        /// task at a time and nothing waits on it.
        std::sync::atomic::AtomicBool,
    );

    /// A task's future behind its abort switch.
    struct Abortable<F> {
        future: Pin<Box<F>>,
        abort: Arc<Abort>,
    }

    impl<F: Future> Future for Abortable<F> {
        type Output = Result<F::Output, JoinError>;

        /// Looks at the switch and registers under one lock, so an abort
        /// between them still wakes the task.
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let polled = {
                let mut switch = self.abort.0.lock().unwrap();
                if switch.0 {
                    Some(Poll::Ready(Err(JoinError { cancelled: true })))
                } else {
                    switch.1 = Some(cx.waker().clone());
                    None
                }
            };
            // A panic ends the task with a `JoinError`, as tokio's does,
            // instead of failing the whole model: a panicking lane is a
            // case the model explores, not a checker failure.
            let polled = polled.unwrap_or_else(|| {
                let future = &mut self.future;
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    future.as_mut().poll(cx)
                })) {
                    Ok(poll) => poll.map(Ok),
                    Err(payload) => {
                        crate::explore::task_panicked(payload.as_ref());
                        Poll::Ready(Err(JoinError { cancelled: false }))
                    }
                }
            });
            if polled.is_ready() {
                self.abort
                    .1
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            polled
        }
    }

    /// A spawned task: await it for its output; dropping it detaches the
    /// task.
    pub struct JoinHandle<T> {
        #[cfg(shuttle)]
        inner: Option<shuttle::future::JoinHandle<Result<T, JoinError>>>,
        #[cfg(loom)]
        inner: Option<loom::thread::JoinHandle<Result<T, JoinError>>>,
        abort: Arc<Abort>,
    }

    /// Aborts a task without owning its handle ([`JoinHandle::abort_handle`]).
    #[derive(Clone)]
    pub struct AbortHandle {
        abort: Arc<Abort>,
    }

    impl AbortHandle {
        /// As [`JoinHandle::abort`].
        pub fn abort(&self) {
            abort(&self.abort);
        }

        /// As [`JoinHandle::is_finished`].
        #[must_use]
        pub fn is_finished(&self) -> bool {
            self.abort.1.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    /// Cancels the task behind `switch`: at its next poll (it is woken for
    /// it) its future is dropped.
    fn abort(switch: &Abort) {
        let waker = {
            let mut switch = switch.0.lock().unwrap();
            switch.0 = true;
            switch.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    impl<T> JoinHandle<T> {
        /// Cancels the task: at its next poll (it is woken for it) its
        /// future is dropped.
        pub fn abort(&self) {
            abort(&self.abort);
        }

        /// Whether the task has ended (finished, cancelled or panicked).
        #[must_use]
        pub fn is_finished(&self) -> bool {
            self.abort.1.load(std::sync::atomic::Ordering::Relaxed)
        }

        /// A handle that aborts the task, as tokio's.
        #[must_use]
        pub fn abort_handle(&self) -> AbortHandle {
            AbortHandle {
                abort: Arc::clone(&self.abort),
            }
        }
    }

    impl<T> Drop for JoinHandle<T> {
        fn drop(&mut self) {
            // Detach, as tokio does: shuttle's handle aborts its task when
            // dropped, loom's thread runs on anyway.
            if let Some(inner) = self.inner.take() {
                std::mem::forget(inner);
            }
        }
    }

    #[cfg(shuttle)]
    impl<T> Future for JoinHandle<T> {
        type Output = Result<T, JoinError>;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let inner = self.inner.as_mut().expect("polled after it finished");
            match Pin::new(inner).poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(output)) => Poll::Ready(output),
                Poll::Ready(Err(shuttle::future::JoinError::Cancelled)) => {
                    Poll::Ready(Err(JoinError { cancelled: true }))
                }
            }
        }
    }

    #[cfg(loom)]
    impl<T> Future for JoinHandle<T> {
        type Output = Result<T, JoinError>;

        /// Loom's threads cannot be awaited: this joins the thread, a step
        /// loom schedules like any other.
        fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
            let inner = self.inner.take().expect("polled after it finished");
            Poll::Ready(inner.join().unwrap_or(Err(JoinError { cancelled: false })))
        }
    }

    /// Runs `future` as a task the checker schedules.
    pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let abort = Arc::new(Abort::default());
        let task = Abortable {
            future: Box::pin(future),
            abort: Arc::clone(&abort),
        };
        #[cfg(shuttle)]
        let inner = shuttle::future::spawn(task);
        #[cfg(loom)]
        let inner = loom::thread::spawn(move || loom::future::block_on(task));
        JoinHandle {
            inner: Some(inner),
            abort,
        }
    }

    /// Gives the checker a point to run another task.
    pub async fn yield_now() {
        #[cfg(shuttle)]
        shuttle::future::yield_now().await;
        #[cfg(loom)]
        loom::thread::yield_now();
    }

    /// The checker's scheduler, where tasks are spawned.
    #[derive(Clone, Debug)]
    pub struct Handle(());

    impl Handle {
        /// The scheduler of the model running now.
        #[must_use]
        pub fn current() -> Self {
            Self(())
        }

        /// [`spawn`].
        pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
        where
            F: Future + Send + 'static,
            F::Output: Send + 'static,
        {
            spawn(future)
        }
    }

    /// A runtime of the code's own (a dedicated thread's) is, under a
    /// model checker, the checker's scheduler too: the checker must see
    /// and schedule every task. Normally `Handle` is tokio's, and this is
    /// the identity conversion, so code that builds a runtime of its own
    /// writes `runtime.handle().clone().into()` on both sides.
    impl From<tokio::runtime::Handle> for Handle {
        fn from(_runtime: tokio::runtime::Handle) -> Self {
            Self(())
        }
    }
}
