//! Tasks under shuttle behave as tokio's: a handle gives the output,
//! `abort` cancels, a dropped handle detaches, and a spawned task's steps
//! interleave with its spawner's wherever the checker puts them.
//!
//! Run: `RUSTFLAGS="--cfg shuttle" cargo test --release -p lanesim-shim --test shuttle_task`
#![cfg(shuttle)]

use std::sync::{Arc, Mutex};

use lanesim_shim::sync::{AtomicBool, Ordering};
use lanesim_shim::{chan, task};

#[test]
fn awaiting_a_handle_gives_the_tasks_output() {
    shuttle::check_random(
        || {
            let handle = task::Handle::current().spawn(async { 5 });
            assert_eq!(shuttle::future::block_on(handle).ok(), Some(5));
        },
        50,
    );
}

/// Dropping the handle detaches the task (shuttle's own handle would abort
/// it): it still runs to its end and sends.
#[test]
fn a_dropped_handle_detaches_its_task() {
    shuttle::check_random(
        || {
            let (tx, rx) = chan::unbounded::<u32>();
            drop(task::spawn(async move {
                task::yield_now().await;
                tx.send(1).unwrap();
            }));
            assert_eq!(shuttle::future::block_on(rx.recv_async()).ok(), Some(1));
        },
        100,
    );
}

/// An aborted task stops at its next await, and awaiting it says so.
#[test]
fn an_aborted_task_is_cancelled() {
    shuttle::check_random(
        || {
            let (tx, rx) = chan::unbounded::<u32>();
            let handle = task::spawn(async move { rx.recv_async().await.ok() });
            handle.abort();
            let joined = shuttle::future::block_on(handle);
            assert!(joined.is_err_and(|e| e.is_cancelled()));
            drop(tx);
        },
        100,
    );
}

/// A spawned task runs before its spawner's next step in some schedules and
/// after it in others.
#[test]
fn a_spawned_task_interleaves_with_its_spawner() {
    let tally = Arc::new(Mutex::new([0u32; 2]));
    let seen = Arc::clone(&tally);
    shuttle::check_random(
        move || {
            let ran = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&ran);
            let handle = task::spawn(async move { flag.store(true, Ordering::SeqCst) });
            let before = ran.load(Ordering::SeqCst);
            seen.lock().unwrap()[usize::from(before)] += 1;
            shuttle::future::block_on(handle).unwrap();
        },
        200,
    );
    let [after, before] = *tally.lock().unwrap();
    assert!(after > 0 && before > 0, "{after} after, {before} before");
}
