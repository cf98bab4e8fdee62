//! The one engine that runs many jobs on threads and folds their results in
//! job order, in bounded memory: `run` sweeps and `hunt` both stand on it.
//!
//! Model: a [`Feed`] draws jobs one at a time (lazily: a sweep of a billion
//! seeds never holds a list of them) and folds each result, strictly in the
//! order the jobs were drawn, so what a fold sees never depends on `--jobs`
//! (pinned by `a_parallel_sweep_gives_exactly_the_serial_results` and the
//! hunt's `a_hunt_draws_the_same_cases_from_the_same_seed_whatever_its_jobs`). At most
//! `lag` jobs are drawn ahead of the fold: that bounds the results waiting
//! to be folded, and lets a feed that draws from what it folded (the hunt's
//! corpus) know how stale its view is. A fold may stop the feed; results
//! still in flight are then drained and dropped, not folded.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Mutex};

/// A source of jobs and the fold of their results.
pub trait Feed {
    /// What a worker runs.
    type Job: Send + Sync;
    /// What a worker returns.
    type Done: Send;

    /// The next job (`index` counts from 0), or `None` when there is none.
    fn draw(&mut self, index: u64) -> Option<Self::Job>;

    /// Folds job `index`'s result; called in index order. `Break` stops
    /// drawing.
    fn fold(&mut self, index: u64, job: Self::Job, done: Self::Done) -> ControlFlow<()>;

    /// The result of a job whose worker panicked outside the run (a run
    /// catches its own panics): the fold waits for every index, so a lost
    /// job must still produce a result.
    fn lost(job: &Self::Job, panic: String) -> Self::Done;
}

/// Runs `feed` on `jobs` threads with `work`, drawing at most `lag` jobs
/// ahead of the fold.
pub fn drive<F, W>(feed: &mut F, jobs: usize, lag: u64, work: W)
where
    F: Feed,
    W: Fn(&F::Job) -> F::Done + Sync,
{
    let jobs = jobs.max(1);
    let lag = lag.max(1);
    let (job_tx, job_rx) = mpsc::sync_channel::<(u64, F::Job)>(jobs * 2);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<(u64, F::Job, F::Done)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let (job_rx, done_tx, work) = (&job_rx, done_tx.clone(), &work);
            scope.spawn(move || loop {
                let next = job_rx.lock().map(|rx| rx.recv());
                let Ok(Ok((index, job))) = next else { return };
                let done = catch_unwind(AssertUnwindSafe(|| work(&job)))
                    .unwrap_or_else(|p| F::lost(&job, panic_message(p.as_ref())));
                if done_tx.send((index, job, done)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        let mut pending: BTreeMap<u64, (F::Job, F::Done)> = BTreeMap::new();
        let (mut drawn, mut folded) = (0u64, 0u64);
        let mut stopped = false;
        let mut exhausted = false;
        loop {
            if !stopped && !exhausted && drawn < folded + lag {
                match feed.draw(drawn) {
                    Some(job) => {
                        if job_tx.send((drawn, job)).is_err() {
                            break;
                        }
                        drawn += 1;
                        continue;
                    }
                    None => exhausted = true,
                }
            }
            if folded == drawn {
                break;
            }
            while !pending.contains_key(&folded) {
                match done_rx.recv() {
                    Ok((index, job, done)) => {
                        pending.insert(index, (job, done));
                    }
                    Err(_) => return,
                }
            }
            let (job, done) = pending.remove(&folded).expect("just checked");
            if !stopped && feed.fold(folded, job, done).is_break() {
                stopped = true;
            }
            folded += 1;
        }
        drop(job_tx);
    });
}

/// A panic payload as text.
#[must_use]
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Squares 0..n, folding in order; `stop_at` breaks.
    struct Squares {
        n: u64,
        stop_at: Option<u64>,
        seen: Vec<u64>,
    }

    impl Feed for Squares {
        type Job = u64;
        type Done = u64;
        fn draw(&mut self, index: u64) -> Option<u64> {
            (index < self.n).then_some(index)
        }
        fn fold(&mut self, index: u64, job: u64, done: u64) -> ControlFlow<()> {
            assert_eq!(index, job);
            self.seen.push(done);
            if self.stop_at == Some(index) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        }
        fn lost(_: &u64, _: String) -> u64 {
            u64::MAX
        }
    }

    #[test]
    fn results_fold_in_draw_order_at_any_jobs() {
        for jobs in [1, 2, 7] {
            let mut feed = Squares {
                n: 200,
                stop_at: None,
                seen: Vec::new(),
            };
            drive(&mut feed, jobs, 5, |&i| {
                // Later jobs finish first, so out-of-order arrival is real.
                std::thread::sleep(std::time::Duration::from_micros((200 - i) % 7 * 50));
                i * i
            });
            assert_eq!(feed.seen, (0..200).map(|i| i * i).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_break_stops_the_fold_at_that_job() {
        let mut feed = Squares {
            n: 1000,
            stop_at: Some(9),
            seen: Vec::new(),
        };
        drive(&mut feed, 3, 4, |&i| i);
        assert_eq!(feed.seen, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn a_worker_panic_is_folded_as_lost_not_hung() {
        let mut feed = Squares {
            n: 6,
            stop_at: None,
            seen: Vec::new(),
        };
        drive(
            &mut feed,
            2,
            3,
            |&i| if i == 3 { panic!("boom") } else { i },
        );
        assert_eq!(feed.seen, vec![0, 1, 2, u64::MAX, 4, 5]);
    }
}
