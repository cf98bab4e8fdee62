//! Exploration finds a race with no await in it, replays it from
//! `(strategy, seed, execution)`, and reports the checker's own failures
//! (a deadlock) as found, without taking the process down.
//!
//! Run: `RUSTFLAGS="--cfg shuttle" cargo test --release -p lanesim-shim --test shuttle_explore`
#![cfg(shuttle)]

use std::sync::{Arc, Mutex};

use lanesim_shim::explore::{explore, Broke, Plan, Strategy};
use lanesim_shim::sync::{AtomicU64, Ordering};
use lanesim_shim::{chan, task};

/// Two tasks each add one by a load and a store: an update is lost in
/// some interleavings. The body records the final count; the judge reads it.
fn lost_update(plan: &Plan) -> lanesim_shim::explore::Explored {
    let seen = Arc::new(Mutex::new(None::<u64>));
    let record = Arc::clone(&seen);
    explore(
        plan,
        move || {
            let count = Arc::new(AtomicU64::new(0));
            let record = Arc::clone(&record);
            let (done_tx, done_rx) = chan::unbounded::<()>();
            for _ in 0..2 {
                let count = Arc::clone(&count);
                let done = done_tx.clone();
                drop(task::spawn(async move {
                    let now = count.load(Ordering::SeqCst);
                    count.store(now + 1, Ordering::SeqCst);
                    done.send(()).unwrap();
                }));
            }
            drop(done_tx);
            drop(task::spawn(async move {
                while done_rx.recv_async().await.is_ok() {}
                *record.lock().unwrap() = Some(count.load(Ordering::SeqCst));
            }));
        },
        move |_| match seen.lock().unwrap().take() {
            Some(2) => None,
            Some(n) => Some(format!("count is {n}, not 2")),
            None => Some("the body recorded nothing".to_owned()),
        },
    )
    .expect("a shuttle build")
}

#[test]
fn a_lost_update_is_found_and_replays_from_its_execution() {
    for strategy in [Strategy::Random, Strategy::Pct { depth: 2 }] {
        let plan = Plan {
            strategy,
            seed: 7,
            executions: 200,
            max_steps: 10_000,
            quiet: "",
        };
        let explored = lost_update(&plan);
        let found = explored.found.expect("the lost update is found");
        assert_eq!(found.broke, Broke::Judged("count is 1, not 2".to_owned()));
        assert_eq!(explored.executions, found.execution + 1);
        let replay = lost_update(&Plan {
            executions: found.execution + 1,
            ..plan
        });
        assert_eq!(replay.found, Some(found), "{strategy}");
    }
}

#[test]
fn a_correct_body_runs_every_execution_and_finds_nothing() {
    let explored = explore(
        &Plan {
            strategy: Strategy::Random,
            seed: 1,
            executions: 50,
            max_steps: 10_000,
            quiet: "",
        },
        || {
            let count = Arc::new(AtomicU64::new(0));
            for _ in 0..2 {
                let count = Arc::clone(&count);
                drop(task::spawn(async move {
                    count.fetch_add(1, Ordering::SeqCst);
                }));
            }
        },
        |_| None,
    )
    .expect("a shuttle build");
    assert_eq!(explored.executions, 50);
    assert!(explored.found.is_none());
    // The most one execution took: more than its three tasks' first steps,
    // far less than fifty executions' worth.
    assert!(
        (3..40).contains(&explored.max_steps_seen),
        "{}",
        explored.max_steps_seen
    );
}

/// `std_sync`'s atomics are the checker's: a load and a store are two
/// steps another task can come between, so the lost update is found.
#[test]
fn std_sync_atomics_are_scheduling_points() {
    use lanesim_shim::std_sync::atomic::{AtomicU64 as StdNamed, Ordering as StdOrdering};
    let seen = Arc::new(Mutex::new(Vec::<u64>::new()));
    let record = Arc::clone(&seen);
    let explored = explore(
        &Plan {
            strategy: Strategy::Random,
            seed: 5,
            executions: 300,
            max_steps: 10_000,
            quiet: "",
        },
        move || {
            let count = Arc::new(StdNamed::new(0));
            let record = Arc::clone(&record);
            let (done_tx, done_rx) = chan::unbounded::<()>();
            for _ in 0..2 {
                let count = Arc::clone(&count);
                let done = done_tx.clone();
                drop(task::spawn(async move {
                    let now = count.load(StdOrdering::SeqCst);
                    count.store(now + 1, StdOrdering::SeqCst);
                    done.send(()).unwrap();
                }));
            }
            drop(done_tx);
            drop(task::spawn(async move {
                while done_rx.recv_async().await.is_ok() {}
                record.lock().unwrap().push(count.load(StdOrdering::SeqCst));
            }));
        },
        |_| None,
    )
    .expect("a shuttle build");
    assert_eq!(explored.executions, 300);
    let counts = seen.lock().unwrap().clone();
    assert!(
        counts.contains(&1),
        "no lost update in 300 executions: {counts:?}"
    );
    assert!(counts.contains(&2));
}

/// A task that waits for ever on a channel whose sender is kept alive is a
/// deadlock: the checker fails the execution, and the process goes on.
#[test]
fn a_deadlock_is_found_as_the_checkers_failure() {
    let explored = explore(
        &Plan {
            strategy: Strategy::Random,
            seed: 3,
            executions: 10,
            max_steps: 10_000,
            quiet: "",
        },
        || {
            let (tx, rx) = chan::unbounded::<()>();
            drop(task::spawn(async move {
                let _ = rx.recv_async().await;
            }));
            std::mem::forget(tx);
        },
        |_| None,
    )
    .expect("a shuttle build");
    let found = explored.found.expect("the deadlock is found");
    assert_eq!(found.execution, 0);
    assert!(
        matches!(&found.broke, Broke::Checker(words) if words.contains("deadlock")),
        "{found:?}"
    );
}

/// An un-`biased` `select!` between two ready branches takes either, as
/// the checker chooses (lanesim's tokio asks it), and a plan's executions
/// choose the same way every time it runs.
#[test]
fn an_unbiased_select_explores_both_branches_and_replays() {
    let picks = || {
        let seen = Arc::new(Mutex::new(Vec::<u8>::new()));
        let record = Arc::clone(&seen);
        let explored = explore(
            &Plan {
                strategy: Strategy::Random,
                seed: 11,
                executions: 40,
                max_steps: 1_000,
                quiet: "",
            },
            move || {
                let record = Arc::clone(&record);
                drop(task::spawn(async move {
                    let won = lanesim_shim::select! {
                        () = std::future::ready(()) => 0,
                        () = std::future::ready(()) => 1,
                    };
                    record.lock().unwrap().push(won);
                }));
            },
            |_| None,
        )
        .expect("a shuttle build");
        assert_eq!(explored.executions, 40);
        let picks = seen.lock().unwrap().clone();
        picks
    };
    let first = picks();
    assert_eq!(first.len(), 40);
    assert!(first.contains(&0) && first.contains(&1), "{first:?}");
    assert_eq!(picks(), first);
}

/// Two tasks take two locks in opposite orders: some interleavings
/// deadlock. The checker's failure is reported at the execution that
/// failed, not before it, and the plan cut there fails the same way.
#[test]
fn a_deadlock_in_some_interleavings_is_reported_at_its_execution_and_replays() {
    let body = || {
        let a = Arc::new(lanesim_shim::sync::Mutex::new(()));
        let b = Arc::new(lanesim_shim::sync::Mutex::new(()));
        for flip in [false, true] {
            let (first, second) = if flip {
                (Arc::clone(&b), Arc::clone(&a))
            } else {
                (Arc::clone(&a), Arc::clone(&b))
            };
            drop(task::spawn(async move {
                let _one = first.lock();
                let _two = second.lock();
            }));
        }
    };
    let plan = Plan {
        strategy: Strategy::Random,
        seed: 2,
        executions: 500,
        max_steps: 10_000,
        quiet: "",
    };
    let explored = explore(&plan, body, |_| None).expect("a shuttle build");
    let found = explored.found.expect("the lock-order deadlock is found");
    assert!(
        matches!(&found.broke, Broke::Checker(w) if w.contains("deadlock")),
        "{found:?}"
    );
    assert_eq!(explored.executions, found.execution + 1);
    assert!(found.execution > 0, "found at once: pick another seed");
    let cut = explore(
        &Plan {
            executions: found.execution + 1,
            ..plan
        },
        body,
        |_| None,
    )
    .expect("a shuttle build");
    assert_eq!(cut.found, Some(found.clone()));
    let short = explore(
        &Plan {
            executions: found.execution,
            ..plan
        },
        body,
        |_| None,
    )
    .expect("a shuttle build");
    assert_eq!(short.found, None, "the executions before it pass");
}
