//! Time under shuttle: a timer fires where the checker chooses, so a race
//! against it is explored on both sides.
//!
//! Run: `RUSTFLAGS="--cfg shuttle" cargo test --release -p lanesim-shim --test shuttle_time`
#![cfg(shuttle)]

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_shim::{chan, task, time};

/// Counts across a checker's iterations (outside the model: a std mutex).
type Tally = Arc<Mutex<[u32; 2]>>;

/// A receive waiting with a timeout while another task sends: across
/// schedules the deadline passes before the send in some, and in others the
/// receive waits (its future polled and not ready) and still gets the item:
/// the timer did not fire at the first wait, as the most eager timer would,
/// so both sides of the race are explored.
#[test]
fn a_timeout_fires_on_either_side_of_a_racing_send() {
    let tally = Arc::new(Mutex::new([0u32; 3]));
    let seen = Arc::clone(&tally);
    shuttle::check_random(
        move || {
            let (tx, rx) = chan::unbounded::<u32>();
            let sender = shuttle::thread::spawn(move || {
                tx.send(7).unwrap();
            });
            let mut waited = false;
            let mut receive = std::pin::pin!(rx.recv_async());
            let got = shuttle::future::block_on(time::timeout(
                Duration::from_millis(1),
                std::future::poll_fn(|cx| {
                    let poll = receive.as_mut().poll(cx);
                    waited |= poll.is_pending();
                    poll
                }),
            ));
            let outcome = match got {
                Err(_) => 0,
                Ok(item) => {
                    assert_eq!(item.ok(), Some(7));
                    if waited {
                        2
                    } else {
                        1
                    }
                }
            };
            seen.lock().unwrap()[outcome] += 1;
            sender.join().unwrap();
        },
        300,
    );
    let [elapsed, at_once, after_waiting] = *tally.lock().unwrap();
    assert!(
        elapsed > 0 && after_waiting > 0,
        "{elapsed} elapsed, {at_once} received at once, {after_waiting} after waiting"
    );
}

/// A future ready at its first poll is never timed out.
#[test]
fn a_ready_future_always_beats_its_deadline() {
    shuttle::check_random(
        || {
            let got = shuttle::future::block_on(time::timeout(Duration::ZERO, async { 3 }));
            assert_eq!(got.ok(), Some(3));
        },
        100,
    );
}

/// A sleep ends, and where is the checker's choice: before another task's
/// step in some schedules, after it in others.
#[test]
fn a_sleep_ends_before_or_after_another_tasks_step() {
    let tally = Tally::default();
    let seen = Arc::clone(&tally);
    shuttle::check_random(
        move || {
            let stepped = Arc::new(shuttle::sync::atomic::AtomicBool::new(false));
            let other = Arc::clone(&stepped);
            let task = shuttle::thread::spawn(move || {
                other.store(true, shuttle::sync::atomic::Ordering::SeqCst);
            });
            shuttle::future::block_on(time::sleep(Duration::from_secs(1)));
            let after = stepped.load(shuttle::sync::atomic::Ordering::SeqCst);
            seen.lock().unwrap()[usize::from(after)] += 1;
            task.join().unwrap();
        },
        300,
    );
    let [before, after] = *tally.lock().unwrap();
    assert!(before > 0 && after > 0, "{before} before, {after} after");
}

/// A timeout on a future that never ends always fires, at its first wait
/// in some schedules and only after waiting again in others: the checker
/// chooses at every wait, not once (a choice made once would either fire
/// at once or never; a bound of 10,000 steps per run turns never into a
/// failure).
#[test]
fn a_timeout_on_a_future_that_never_ends_fires_at_its_first_wait_or_later() {
    let tally = Tally::default();
    let seen = Arc::clone(&tally);
    let mut config = shuttle::Config::new();
    config.max_steps = shuttle::MaxSteps::FailAfter(10_000);
    let scheduler = shuttle::scheduler::RandomScheduler::new_from_seed(0x71_3e, 300);
    shuttle::Runner::new(scheduler, config).run(move || {
        let mut waits = 0u32;
        let got = shuttle::future::block_on(time::timeout(
            Duration::from_millis(1),
            std::future::poll_fn(|_| {
                waits += 1;
                std::task::Poll::<()>::Pending
            }),
        ));
        assert!(got.is_err());
        seen.lock().unwrap()[usize::from(waits > 1)] += 1;
    });
    let [first, later] = *tally.lock().unwrap();
    assert!(
        first > 0 && later > 0,
        "{first} at the first wait, {later} later"
    );
}

/// A task waiting on a timer is always ready to look at it again; under
/// PCT it must still give the other tasks their turn, or the one that
/// would wake it never runs and the execution spins to its step bound.
#[test]
fn an_idle_timer_does_not_starve_a_ready_task() {
    use lanesim_shim::explore::{explore, Plan, Strategy};
    for strategy in [Strategy::Pct { depth: 3 }, Strategy::Random] {
        let explored = explore(
            &Plan {
                strategy,
                seed: 0,
                executions: 300,
                max_steps: 2_000,
                quiet: "",
            },
            || {
                let (tx, rx) = chan::unbounded::<u32>();
                drop(task::spawn(async move {
                    loop {
                        match time::timeout(Duration::from_millis(5), rx.recv_async()).await {
                            Ok(_) => break,
                            Err(_) => continue,
                        }
                    }
                }));
                drop(task::spawn(async move {
                    task::yield_now().await;
                    tx.send(1).unwrap();
                    std::mem::forget(tx);
                }));
            },
            |_| None,
        )
        .expect("a shuttle build");
        assert!(explored.found.is_none(), "{strategy}: {:?}", explored.found);
        assert_eq!(explored.executions, 300);
    }
}
