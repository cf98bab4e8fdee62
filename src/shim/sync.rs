//! Shared-state primitives: `Arc`, `Weak`, atomics, a non-poisoning `Mutex`,
//! and the async `AsyncMutex` / `Notify` the connection layer waits on.
//!
//! The `Mutex` ignores poisoning on purpose: every critical section in this
//! crate leaves its data consistent at each statement, so a panic elsewhere
//! (a handler, a down hook) must not turn into a second panic for whoever
//! locks next.

#[cfg(not(any(loom, shuttle)))]
mod imp {
    pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
    pub(crate) use std::sync::{Arc, Weak};
    pub(crate) use tokio::sync::{Mutex as AsyncMutex, Notify};

    #[derive(Debug, Default)]
    pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

    pub(crate) type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(std::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
    }
}

#[cfg(any(loom, shuttle))]
mod imp {
    #[cfg(loom)]
    pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
    #[cfg(shuttle)]
    pub(crate) use shuttle::sync::atomic::{
        AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering,
    };
    // The checkers have no `Weak`; reference counting is not a race we model, so the
    // std pair stays and the loom-visible state lives behind it.
    pub(crate) use std::sync::{Arc, Weak};
    // The connection layer's async lock and notifier stay tokio's: they work
    // on loom threads (under `block_on`), though loom does not explore them.
    pub(crate) use tokio::sync::{Mutex as AsyncMutex, Notify};

    #[derive(Debug)]
    pub(crate) struct Mutex<T>(crate::shim::mc::Mutex<T>);

    pub(crate) type MutexGuard<'a, T> = crate::shim::mc::MutexGuard<'a, T>;

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(crate::shim::mc::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        }
    }
}

pub(crate) use imp::*;
