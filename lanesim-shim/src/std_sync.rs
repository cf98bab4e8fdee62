//! `std::sync`'s own names and signatures, for code written against std:
//! port it by changing `use std::sync::…` to `use lanesim_shim::std_sync::…`
//! (`lock()` still returns a `LockResult`, `PoisonError::into_inner` still
//! works).
//!
//! Normally these are std's, re-exported. Under shuttle they are shuttle's
//! mutex, read-write lock, condition variable and atomics, which the checker
//! sees and switches tasks at (a std lock held across a checker switch would
//! block the one thread every model task runs on, for good); `Arc` and
//! `Weak` stay std's, as shuttle's own are. Under loom, loom's locks and
//! atomics, std's `Arc` and `Weak` (loom's `Arc` has no `Weak`).

#[cfg(not(any(loom, shuttle)))]
pub use std::sync::{
    atomic, Arc, Barrier, Condvar, Mutex, MutexGuard, Once, RwLock, RwLockReadGuard,
    RwLockWriteGuard, Weak,
};

#[cfg(shuttle)]
pub use shuttle::sync::{
    atomic, Barrier, Condvar, Mutex, MutexGuard, Once, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

#[cfg(loom)]
pub use loom::sync::{
    atomic, Condvar, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

#[cfg(any(loom, shuttle))]
pub use std::sync::{Arc, Weak};

pub use std::sync::{LockResult, PoisonError, TryLockError, TryLockResult};
