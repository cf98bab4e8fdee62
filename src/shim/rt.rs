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
use tokio::runtime::Handle;
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
            // Detached: a model joins its tasks by watching their effects.
            crate::shim::mc::spawn(future);
            JoinHandle(std::marker::PhantomData)
        }
    }

    /// A loom thread's handle. Models end tasks by closing their channels;
    /// `abort` cannot stop a loom thread and does nothing.
    pub struct JoinHandle<T>(std::marker::PhantomData<T>);

    impl<T> JoinHandle<T> {
        /// Does nothing under loom (see the type's docs).
        pub fn abort(&self) {}
    }

    /// Each task is its own loom thread: there is no budget to share.
    pub(crate) async fn consume_budget() {}

    /// A loop about to wait again yields first: with timeouts that elapse
    /// at once, it would otherwise spin without bound.
    pub(crate) async fn retry_hint() {
        crate::shim::mc::yield_now();
    }
}
