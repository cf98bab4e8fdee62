//! The model checker under `--cfg loom` or `--cfg shuttle` (this module
//! exists only there): the handful of primitives the checker-side modules
//! build on, named once here so the channel, map, timer and task shims
//! serve both checkers unchanged.

#[cfg(loom)]
pub use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread::yield_now;

#[cfg(shuttle)]
pub use shuttle::sync::{Mutex, MutexGuard};
#[cfg(shuttle)]
pub use shuttle::thread::yield_now;

/// Runs `future` as its own checker-visible task, detached.
#[cfg(loom)]
pub fn spawn<F>(future: F)
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let _ = loom::thread::spawn(move || loom::future::block_on(future));
}

/// Runs `future` as its own checker-visible task, detached.
#[cfg(shuttle)]
pub fn spawn<F>(future: F)
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    // A thread, not `shuttle::future::spawn`: dropping that one's handle
    // aborts the task.
    let _ = shuttle::thread::spawn(move || shuttle::future::block_on(future));
}
