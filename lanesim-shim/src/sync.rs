//! Shared-state primitives: `Arc`, `Weak`, atomics, a non-poisoning `Mutex`,
//! and the async `AsyncMutex` / `Notify` the connection layer waits on.
//!
//! The `Mutex` ignores poisoning on purpose: every critical section in this
//! crate leaves its data consistent at each statement, so a panic elsewhere
//! (a handler, a down hook) must not turn into a second panic for whoever
//! locks next.

#[cfg(not(any(loom, shuttle)))]
mod imp {
    pub use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
    pub use std::sync::{Arc, Weak};
    pub use tokio::sync::{Mutex as AsyncMutex, Notify};

    #[derive(Debug, Default)]
    pub struct Mutex<T>(std::sync::Mutex<T>);

    pub type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub fn new(value: T) -> Self {
            Self(std::sync::Mutex::new(value))
        }

        pub fn lock(&self) -> MutexGuard<'_, T> {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
    }
}

#[cfg(any(loom, shuttle))]
mod imp {
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
    #[cfg(shuttle)]
    pub use shuttle::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
    // The checkers have no `Weak`; reference counting is not a race we model, so the
    // std pair stays and the loom-visible state lives behind it.
    pub use std::sync::{Arc, Weak};
    // The connection layer's async lock and notifier stay tokio's: they work
    // on loom threads (under `block_on`), though loom does not explore them.
    pub use tokio::sync::{Mutex as AsyncMutex, Notify};

    #[derive(Debug)]
    pub struct Mutex<T>(crate::model::Mutex<T>);

    pub type MutexGuard<'a, T> = crate::model::MutexGuard<'a, T>;

    impl<T: Default> Default for Mutex<T> {
        fn default() -> Self {
            Self::new(T::default())
        }
    }

    impl<T> Mutex<T> {
        pub fn new(value: T) -> Self {
            Self(crate::model::Mutex::new(value))
        }

        pub fn lock(&self) -> MutexGuard<'_, T> {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
    }
}

pub use imp::*;

/// A table kept for accounting (who holds how much of the frame budget),
/// never a synchronisation point: locked for a few instructions, never
/// across an await, and nothing else is ordered by it, so it is std's mutex
/// in every build, as [`Counter`] is std's atomic.
#[derive(Debug, Default)]
pub struct Ledger<T>(std::sync::Mutex<T>);

impl<T> Ledger<T> {
    pub const fn new(value: T) -> Self {
        Self(std::sync::Mutex::new(value))
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A counter kept for accounting (bytes held in partly read frames, when a
/// read half last delivered), never a synchronisation point: nothing waits
/// on it or orders other memory by it, so the model checkers need not
/// explore it and it is std's atomic in every build.
#[derive(Debug, Default)]
pub struct Counter(std::sync::atomic::AtomicU64);

impl Counter {
    pub const fn new(value: u64) -> Self {
        Self(std::sync::atomic::AtomicU64::new(value))
    }

    pub fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Acquire)
    }

    pub fn set(&self, value: u64) {
        self.0.store(value, std::sync::atomic::Ordering::Release);
    }

    /// Adds `amount` unless the total would pass `limit`; whether it did.
    pub fn add_within(&self, amount: u64, limit: u64) -> bool {
        use std::sync::atomic::Ordering;
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                now.checked_add(amount).filter(|total| *total <= limit)
            })
            .is_ok()
    }

    /// Adds one; the value before (an id from a shared sequence).
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, std::sync::atomic::Ordering::AcqRel)
    }

    /// Adds `amount` (wrapping: a count never reaches 2^64).
    pub fn add(&self, amount: u64) {
        self.0
            .fetch_add(amount, std::sync::atomic::Ordering::AcqRel);
    }

    pub fn sub(&self, amount: u64) {
        self.0
            .fetch_sub(amount, std::sync::atomic::Ordering::AcqRel);
    }
}
