//! Where background tasks (lane tasks, the sender's drain, read loops) run.
//!
//! A component is given a [`RuntimeChoice`] at construction:
//!
//! - `Dedicated`: a single-worker runtime the component owns. Its drop must
//!   never block inside an async context (tokio panics with "Cannot drop a
//!   runtime in a context where blocking is not allowed"), yet the last owner
//!   can be released anywhere. [`OwnedRuntime`]'s drop therefore uses
//!   `shutdown_background`, which signals the worker and returns at once; this
//!   is the S5 "safe drop" invariant.
//! - `Handle`: tasks run on a runtime the caller already has. Simulation uses
//!   this, because turmoil's sockets only work on the host's own runtime.

use std::future::Future;
use std::io;

use tokio::runtime::{Builder, Handle};
/// A spawned background task; `abort` stops it.
pub use tokio::task::JoinHandle;

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
pub(crate) struct TaskRuntime {
    handle: Handle,
    _owned: Option<OwnedRuntime>,
}

impl TaskRuntime {
    pub(crate) fn start(choice: RuntimeChoice, planted: Planted) -> io::Result<Self> {
        match choice {
            RuntimeChoice::Handle(handle) => Ok(Self {
                handle,
                _owned: None,
            }),
            RuntimeChoice::Dedicated { thread_name } => {
                let runtime = Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name(thread_name)
                    .enable_all()
                    .build()?;
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
struct OwnedRuntime {
    runtime: Option<tokio::runtime::Runtime>,
    planted: Planted,
}

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
pub(crate) use tokio::task::coop::consume_budget;
