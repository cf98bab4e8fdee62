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

/// Once `abort` has returned, an aborted task takes at most the step under
/// way (as on tokio's multi-thread runtime, a poll in progress finishes):
/// its next poll ends it without running its future. The task counts its
/// steps in a plain std counter, each step ending at a yield.
#[test]
fn an_aborted_task_finishes_at_most_the_step_under_way() {
    shuttle::check_random(
        || {
            let steps = Arc::new(std::sync::atomic::AtomicU32::new(0));
            let counted = Arc::clone(&steps);
            let handle = task::spawn(async move {
                for _ in 0..5 {
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    task::yield_now().await;
                }
            });
            task::Handle::current().spawn(async {}); // another task to run
            handle.abort();
            let at_abort = steps.load(std::sync::atomic::Ordering::SeqCst);
            let _ = shuttle::future::block_on(handle);
            let after = steps.load(std::sync::atomic::Ordering::SeqCst) - at_abort;
            assert!(after <= 1, "{after} steps after the abort returned");
        },
        500,
    );
}

/// A task parked when it is aborted is woken and ended without its future
/// being polled again. The future counts its polls and marks itself parked
/// right before it returns `Pending` (with nothing after it in the poll
/// where the checker could switch): once the spawner sees the mark, the
/// poll is over, and only the abort wakes the task.
#[test]
fn a_parked_task_is_aborted_without_another_poll() {
    shuttle::check_random(
        || {
            let polls = Arc::new(std::sync::atomic::AtomicU32::new(0));
            let parked = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let (counted, marked) = (Arc::clone(&polls), Arc::clone(&parked));
            let handle = task::spawn(std::future::poll_fn(move |_| {
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                marked.store(true, std::sync::atomic::Ordering::SeqCst);
                std::task::Poll::<()>::Pending
            }));
            while !parked.load(std::sync::atomic::Ordering::SeqCst) {
                shuttle::thread::yield_now();
            }
            let before = polls.load(std::sync::atomic::Ordering::SeqCst);
            handle.abort();
            let joined = shuttle::future::block_on(handle);
            assert!(joined.is_err_and(|e| e.is_cancelled()));
            assert_eq!(
                polls.load(std::sync::atomic::Ordering::SeqCst),
                before,
                "the aborted task's future was polled again"
            );
        },
        300,
    );
}

/// Tasks whose handles were dropped ran to their end by the end of each
/// run (a detached task keeps the model running, as a task keeps a
/// runtime busy): shuttle's own handle, dropped, would detach it from the
/// run too, and the run would end without it.
#[test]
fn a_detached_task_runs_to_its_end_within_the_run() {
    static ENDED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    const RUNS: usize = 100;
    shuttle::check_random(
        || {
            drop(task::spawn(async {
                for _ in 0..3 {
                    task::yield_now().await;
                }
                ENDED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }));
        },
        RUNS,
    );
    assert_eq!(ENDED.load(std::sync::atomic::Ordering::SeqCst), RUNS);
}

/// `yield_now` is a point where the checker may run another task: between
/// two steps with nothing else in them that the checker sees (plain std
/// atomics), another task observes the first step without the second in
/// some schedules.
#[test]
fn yield_now_lets_another_task_run_between_two_steps() {
    let tally = Arc::new(Mutex::new(0u32));
    let seen = Arc::clone(&tally);
    shuttle::check_random(
        move || {
            let step = Arc::new(std::sync::atomic::AtomicU8::new(0));
            let (a, b) = (Arc::clone(&step), Arc::clone(&step));
            let stepper = task::spawn(async move {
                a.store(1, std::sync::atomic::Ordering::SeqCst);
                task::yield_now().await;
                a.store(2, std::sync::atomic::Ordering::SeqCst);
            });
            let seen = Arc::clone(&seen);
            let observer = task::spawn(async move {
                if b.load(std::sync::atomic::Ordering::SeqCst) == 1 {
                    *seen.lock().unwrap() += 1;
                }
            });
            shuttle::future::block_on(async {
                stepper.await.unwrap();
                observer.await.unwrap();
            });
        },
        300,
    );
    assert!(*tally.lock().unwrap() > 0, "never seen between the steps");
}

/// A task that panics ends with a panic `JoinError`, as under tokio, and
/// the model goes on (the checker does not fail the execution).
#[test]
fn a_panicking_task_ends_with_a_panic_error_and_the_model_goes_on() {
    shuttle::check_random(
        || {
            let handle = task::spawn(async {
                task::yield_now().await;
                if true {
                    panic!("on purpose");
                }
                5
            });
            let error = shuttle::future::block_on(handle).expect_err("it panicked");
            assert!(error.is_panic() && !error.is_cancelled());
        },
        20,
    );
}

/// Under shuttle every task has the checker's number, growing in spawn
/// order.
#[test]
fn tasks_are_numbered_in_spawn_order() {
    shuttle::check_random(
        || {
            let main = task::current_id().expect("a number under shuttle");
            let child = shuttle::future::block_on(task::spawn(async { task::current_id() }))
                .unwrap()
                .expect("a number");
            assert!(child > main);
        },
        5,
    );
}

/// A task that ended any way (its output, a panic, an abort) says so
/// through its handle and its abort handle.
#[test]
fn a_task_that_panicked_or_was_aborted_is_finished() {
    shuttle::check_random(
        || {
            let panicking = task::spawn(async {
                if true {
                    panic!("on purpose");
                }
            });
            let watch = panicking.abort_handle();
            let _ = shuttle::future::block_on(panicking);
            assert!(watch.is_finished(), "a panicked task is finished");

            let (tx, rx) = chan::unbounded::<u8>();
            let parked = task::spawn(async move {
                let _ = rx.recv_async().await;
            });
            let abort = parked.abort_handle();
            abort.abort();
            let ended = shuttle::future::block_on(parked);
            assert!(ended.is_err_and(|e| e.is_cancelled()));
            assert!(abort.is_finished(), "an aborted task is finished");
            drop(tx);
        },
        50,
    );
}

/// An abort through an `AbortHandle` wakes a task parked at an await: its
/// handle resolves, cancelled (a parked task is polled only when woken).
#[test]
fn an_abort_handle_wakes_a_parked_task() {
    shuttle::check_random(
        || {
            let (tx, rx) = chan::unbounded::<u8>();
            let (parked_tx, parked_rx) = chan::unbounded::<()>();
            let parked = task::spawn(async move {
                parked_tx.send(()).unwrap();
                let _ = rx.recv_async().await;
            });
            // Once it has told us it runs, it parks at the receive.
            shuttle::future::block_on(parked_rx.recv_async()).unwrap();
            parked.abort_handle().abort();
            let ended = shuttle::future::block_on(parked);
            assert!(ended.is_err_and(|e| e.is_cancelled()));
            drop(tx);
        },
        50,
    );
}
