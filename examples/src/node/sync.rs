//! The two waits every part of the node shares: taking a lock (taken even
//! when a panic elsewhere poisoned it), and waiting for a flag (a `watch`
//! channel of a `bool`) to be raised. Their own module, so that every
//! sibling can use them without importing the node's entry.

use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits until a flag is raised (or its sender is gone).
pub(super) async fn raised(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|raised| *raised).await;
}
