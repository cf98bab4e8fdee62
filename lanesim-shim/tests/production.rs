//! Normally the shim is the real crates: its names are their types, so a
//! production build of code written against it is that code written against
//! tokio, flume and std (no wrapper to cost anything). Under a model checker
//! these are the checker's, and this test does not apply.
#![cfg(not(any(loom, shuttle)))]

use std::any::TypeId;

fn same<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

#[test]
fn the_production_shim_is_the_real_crates() {
    use lanesim_shim::{chan, sync, task, time};
    assert!(same::<task::Handle, tokio::runtime::Handle>());
    assert!(same::<task::JoinHandle<u8>, tokio::task::JoinHandle<u8>>());
    assert!(same::<task::JoinError, tokio::task::JoinError>());
    assert!(same::<chan::Sender<u8>, flume::Sender<u8>>());
    assert!(same::<
        lanesim_shim::dashmap::DashMap<u8, u8>,
        dashmap::DashMap<u8, u8>,
    >());
    assert!(same::<chan::Receiver<u8>, flume::Receiver<u8>>());
    assert!(same::<sync::Arc<u8>, std::sync::Arc<u8>>());
    assert!(same::<sync::AtomicUsize, std::sync::atomic::AtomicUsize>());
    assert!(same::<time::Instant, tokio::time::Instant>());
    assert!(same::<time::Duration, std::time::Duration>());
    assert!(same::<task::AbortHandle, tokio::task::AbortHandle>());
    use lanesim_shim::std_sync;
    assert!(same::<std_sync::Mutex<u8>, std::sync::Mutex<u8>>());
    assert!(same::<std_sync::RwLock<u8>, std::sync::RwLock<u8>>());
    assert!(same::<std_sync::Condvar, std::sync::Condvar>());
    assert!(same::<std_sync::Weak<u8>, std::sync::Weak<u8>>());
    assert!(same::<
        std_sync::atomic::AtomicU64,
        std::sync::atomic::AtomicU64,
    >());
}

/// Outside a model checker the exploration entry answers that there is
/// none, and a task's caught panic is not kept (nothing would read it).
#[test]
fn a_production_build_has_no_checker() {
    use lanesim_shim::explore::{self, Plan, Strategy, Unavailable};
    assert!(!explore::available());
    let plan = Plan {
        strategy: Strategy::Random,
        seed: 0,
        executions: 1,
        max_steps: 100,
        quiet: "",
    };
    assert_eq!(explore::explore(&plan, || {}, |_| None), Err(Unavailable));
    explore::task_panicked(&"a panic");
    assert!(explore::take_task_panics().is_empty());
}

/// `task::spawn` is tokio's: it runs on the current runtime.
#[tokio::test]
async fn spawn_runs_on_the_current_runtime() {
    let handle = lanesim_shim::task::Handle::current().spawn(async { 7 });
    assert_eq!(handle.await.unwrap(), 7);
}
