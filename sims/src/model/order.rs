//! The log's ordering lock, shared by the model world's executions: a
//! step of the world and its record happen under it, so the log is a
//! linearisation although its records come from tasks the checker
//! interleaves at every step. It is the checker's mutex, so a task waiting
//! for it lets the others run, and reentrant on one task, so a record made
//! inside a step that already holds it (a socket's write tap inside a
//! write the drain logs) does not deadlock.

use std::sync::atomic::{AtomicU64, Ordering};

use lanesim_target::shim::{sync as model_sync, task};

/// The ordering lock.
#[derive(Default)]
pub(super) struct LogOrder {
    lock: model_sync::Mutex<()>,
    /// The task holding it, plus one (0: none).
    owner: AtomicU64,
}

impl LogOrder {
    /// Runs `step` holding the order.
    pub(super) fn ordered<R>(&self, step: impl FnOnce() -> R) -> R {
        let me = task::current_id().unwrap_or(0) + 1;
        if self.owner.load(Ordering::Relaxed) == me {
            return step();
        }
        let _held = self.lock.lock();
        self.owner.store(me, Ordering::Relaxed);
        let out = step();
        self.owner.store(0, Ordering::Relaxed);
        out
    }
}
