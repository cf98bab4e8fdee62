//! Where background tasks (lane tasks, the sender's drain, read loops) run.
//!
//! A component is given a [`RuntimeChoice`] at construction:
//!
//! - `Dedicated`: a single-worker runtime the component owns. Its drop must
//!   never block inside an async context (tokio panics with "Cannot drop a
//!   runtime in a context where blocking is not allowed"), yet the last owner
//!   can be released anywhere. `OwnedRuntime`'s drop therefore uses
//!   `shutdown_background`, which signals the worker and returns at once; this
//!   is the S5 "safe drop" invariant.
//! - `Handle`: tasks run on a runtime the caller already has. Simulation uses
//!   this, because turmoil's sockets only work on the host's own runtime.

#[cfg(not(any(loom, shuttle)))]
use std::future::Future;
#[cfg(not(any(loom, shuttle)))]
use std::io;

#[cfg(not(any(loom, shuttle)))]
use tokio::runtime::Builder;
// tokio's own normally; the checker's scheduler under a model checker.
use lanesim_shim::task::Handle;
/// A spawned background task; `abort` stops it.
#[cfg(not(any(loom, shuttle)))]
pub use tokio::task::JoinHandle;

#[cfg(any(loom, shuttle))]
pub use loom_rt::JoinHandle;
#[cfg(any(loom, shuttle))]
pub(crate) use loom_rt::{consume_budget, retry_hint, TaskRuntime};

#[cfg(not(any(loom, shuttle)))]
use crate::planted::{Planted, PlantedBug};

/// Where a component spawns its background tasks.
#[derive(Clone, Debug)]
pub enum RuntimeChoice {
    /// A dedicated single-worker runtime owned by the component, its worker
    /// thread named `thread_name`.
    Dedicated {
        /// Name given to the worker thread.
        thread_name: String,
    },
    /// Tasks run on this runtime.
    Handle(Handle),
}

impl RuntimeChoice {
    /// The runtime the caller is running on.
    ///
    /// # Panics
    /// Outside a tokio runtime, like [`Handle::current`].
    #[must_use]
    pub fn current() -> Self {
        Self::Handle(Handle::current())
    }
}

/// A started [`RuntimeChoice`]: a handle to spawn on and, when dedicated, the
/// runtime itself.
#[cfg(not(any(loom, shuttle)))]
pub(crate) struct TaskRuntime {
    handle: Handle,
    _owned: Option<OwnedRuntime>,
}

#[cfg(not(any(loom, shuttle)))]
impl TaskRuntime {
    pub(crate) fn start(choice: RuntimeChoice, planted: Planted) -> io::Result<Self> {
        match choice {
            RuntimeChoice::Handle(handle) => Ok(Self {
                handle,
                _owned: None,
            }),
            RuntimeChoice::Dedicated { thread_name } => {
                let mut builder = Builder::new_multi_thread();
                builder
                    .worker_threads(1)
                    .thread_name(thread_name)
                    .enable_all();
                // The testbed's probe, if the building thread has one (a
                // no-op without the `testbed` feature).
                if let Some(inherit) = crate::shim::probe::inheritor() {
                    builder.on_thread_start(move || inherit());
                }
                let runtime = builder.build()?;
                Ok(Self {
                    handle: runtime.handle().clone(),
                    _owned: Some(OwnedRuntime {
                        runtime: Some(runtime),
                        planted,
                    }),
                })
            }
        }
    }

    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(future)
    }
}

/// A runtime whose drop is safe from any context (S5).
#[cfg(not(any(loom, shuttle)))]
struct OwnedRuntime {
    runtime: Option<tokio::runtime::Runtime>,
    planted: Planted,
}

#[cfg(not(any(loom, shuttle)))]
impl Drop for OwnedRuntime {
    fn drop(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        if self.planted.has(PlantedBug::RuntimeDroppedInPlace) {
            drop(runtime);
            return;
        }
        // Does not wait for the worker: no blocking, so no panic when the last
        // owner is released on an async worker or inside `#[tokio::test]`.
        runtime.shutdown_background();
    }
}

/// A cooperative yield point: returns at once unless the task has used its
/// scheduling budget, so a busy loop cannot starve its neighbours.
#[cfg(not(any(loom, shuttle)))]
pub(crate) use tokio::task::coop::consume_budget;

/// Called by a loop that found its wait cut short and is about to wait
/// again. Nothing with real timers (the next wait takes its full time);
/// under loom, where timeouts elapse at once, a yield.
#[cfg(not(any(loom, shuttle)))]
#[inline]
pub(crate) async fn retry_hint() {}

/// Under a model checker every background task is a checker task (a loom
/// thread under `block_on`, a shuttle future), whatever `RuntimeChoice`
/// says: the checker must see and schedule every task. Loom fits at most 4
/// beside a model's main thread.
#[cfg(any(loom, shuttle))]
mod loom_rt {
    use std::future::Future;
    use std::io;
    use std::marker::PhantomData;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll, Waker};

    use super::RuntimeChoice;
    use crate::planted::Planted;

    pub(crate) struct TaskRuntime;

    impl TaskRuntime {
        pub(crate) fn start(_choice: RuntimeChoice, _planted: Planted) -> io::Result<Self> {
            Ok(Self)
        }

        pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
        where
            F: Future + Send + 'static,
            F::Output: Send + 'static,
        {
            let cell = Arc::new(AbortCell::default());
            // Detached: a model joins its tasks by watching their effects.
            lanesim_shim::model::spawn(Abortable {
                future: Some(Box::pin(future)),
                cell: Arc::clone(&cell),
            });
            JoinHandle {
                cell,
                _output: PhantomData,
            }
        }
    }

    /// Whether the task was aborted, and its waker as of its last poll so
    /// `abort` can wake it. Std's types, which the checker does not see:
    /// checker primitives here would add a scheduling point to every poll of
    /// every task (the loom sender suite took 266 s with a checker mutex
    /// here against 192 s with these, the shutdown model then at bound 3),
    /// and the checker runs one thread at a time, so std's are exact. What
    /// the checker explores is the wake-up (`abort` wakes the task with the
    /// checker's waker) and everything the aborted future's drop does.
    #[derive(Default)]
    struct AbortCell {
        aborted: AtomicBool,
        waker: std::sync::Mutex<Option<Waker>>,
    }

    /// A task that `abort` ends as tokio does: at its next poll, by dropping
    /// the future (so its drop code runs, on the task's own thread). A model
    /// of the sender's shutdown needs that: the drain's drop sweeps the
    /// lanes (`loom_sender::a_control_racing_a_shutdown_*`).
    struct Abortable<F> {
        future: Option<Pin<Box<F>>>,
        cell: Arc<AbortCell>,
    }

    impl<F: Future> Future for Abortable<F> {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            // The handle gone, no abort can come.
            if Arc::strong_count(&self.cell) > 1 {
                // Registered before the look: an abort after the look finds
                // this waker. Nothing the checker sees may run while the std
                // lock is held (it could switch threads there, and the other
                // thread would block for real: a first version hung so), so
                // the waker is cloned before it and the old one dropped after.
                let waker = cx.waker().clone();
                let _old = std::mem::replace(
                    &mut *self
                        .cell
                        .waker
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                    Some(waker),
                );
                if self.cell.aborted.load(Ordering::SeqCst) {
                    self.future = None;
                }
            }
            let Some(future) = self.future.as_mut() else {
                return Poll::Ready(());
            };
            // A panic ends the task, as tokio's does (its drop code runs
            // as it unwinds), instead of failing the whole model: a lane
            // whose handler panics is a case the model world explores.
            let polled =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| future.as_mut().poll(cx)));
            if let Err(payload) = &polled {
                lanesim_shim::explore::task_panicked(payload.as_ref());
            }
            match polled {
                Ok(Poll::Ready(_)) | Err(_) => {
                    self.future = None;
                    Poll::Ready(())
                }
                Ok(Poll::Pending) => Poll::Pending,
            }
        }
    }

    /// A checker task's handle: `abort` ends the task at its next poll,
    /// dropping its future, as tokio's does.
    pub struct JoinHandle<T> {
        cell: Arc<AbortCell>,
        _output: PhantomData<T>,
    }

    impl<T> JoinHandle<T> {
        /// Ends the task at its next poll (waking it if it waits).
        pub fn abort(&self) {
            self.cell.aborted.store(true, Ordering::SeqCst);
            let waker = self
                .cell
                .waker
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }

    /// Each task is its own loom thread: there is no budget to share.
    pub(crate) async fn consume_budget() {}

    /// A loop about to wait again yields first: with timeouts that elapse
    /// at once, it would otherwise spin without bound.
    pub(crate) async fn retry_hint() {
        lanesim_shim::model::yield_now();
    }
}
