//! Real mode's clock and its measure of its own lateness.
//!
//! [`RealClock`]: wall time divided by the scenario's `real_time_scale`,
//! so a real run's log reads in the scenario's units (it lives with the
//! worlds that read it, `world::real_clock`, and is re-exported here).
//! [`Lateness`]: how late this very run's threads woke, which widens the
//! checkers' slacks (`real_grain`), so a loaded machine excuses what it
//! caused and nothing more.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::coverage::WorldProbe;
pub use crate::world::real_clock::RealClock;

/// Real mode's measure of its own lateness: a task on the world's runtime
/// that sleeps a millisecond at a time and keeps the worst overshoot. It
/// sees what a lane's idle timer or a drain's wake-up sees (the timer
/// wheel's rounding, workers busy with other tasks, the OS scheduling the
/// workers late), so on a loaded machine the checkers' slacks grow by what
/// this very run suffered, not by a guess (`real::real_context`). A
/// component that is late on its own account is not excused: the probe is
/// not held up by it.
///
/// A component on its own runtime (the sender, as production runs it) is
/// late on threads the nap does not run on, and a nap there would be held
/// up by the component itself and so excuse a drain that blocks its own
/// thread. For those threads (`watched`, told by the probe as they start)
/// the probe instead reads, at each nap, how long the OS has kept each
/// waiting to run (`/proc/self/task/<tid>/schedstat`, field 2, a running
/// total accounted when the thread next runs) and keeps the largest rise
/// between two naps (`RunQueueRises`): the sum of the waits that ended in
/// that interval, so about the longest single wait when the probe itself
/// runs on time and more when it is late too (it errs towards excusing).
/// A thread busy on its own account is running, not waiting: by the
/// kernel's accounting it adds nothing. The file's figure is pinned by
/// `lateness_measures_a_watched_thread_kept_off_the_cpu`, the rise by
/// `run_queue_rises_count_from_the_first_sample`.
pub(crate) struct Lateness {
    worst: Arc<std::sync::Mutex<Duration>>,
}

impl Lateness {
    /// Starts watching on `runtime`, and the component threads `watched`
    /// was told of ([`WorldProbe::workers`]); the task ends with the runtime.
    pub(crate) fn watch(
        runtime: &tokio::runtime::Runtime,
        watched: Option<Arc<WorldProbe>>,
    ) -> Self {
        const NAP: Duration = Duration::from_millis(1);
        let worst = Arc::new(std::sync::Mutex::new(Duration::ZERO));
        let seen = Arc::clone(&worst);
        runtime.spawn(async move {
            let mut waits = RunQueueRises::default();
            loop {
                let asked = std::time::Instant::now(); // wall-clock: ok (real mode)
                tokio::time::sleep(NAP).await;
                let over = asked.elapsed().saturating_sub(NAP); // wall-clock: ok (real mode)
                let tids = watched
                    .as_ref()
                    .map(|probe| probe.workers())
                    .unwrap_or_default();
                let waited = waits.largest(
                    tids.into_iter()
                        .filter_map(|tid| Some((tid, run_queue_wait(tid)?))),
                );
                let over = over.max(waited);
                let mut worst = seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                *worst = (*worst).max(over);
            }
        });
        Self { worst }
    }

    /// The worst overshoot so far, in wall time.
    pub(crate) fn worst(&self) -> Duration {
        *self
            .worst
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Each watched thread's last run-queue total, to take the rise since.
#[derive(Default)]
struct RunQueueRises(BTreeMap<u32, u64>);

impl RunQueueRises {
    /// The largest rise among `totals` (thread, total ns) since each
    /// thread's previous total; a thread seen for the first time rose by
    /// nothing (its total so far is from before the watch).
    fn largest(&mut self, totals: impl Iterator<Item = (u32, u64)>) -> Duration {
        totals
            .map(|(tid, total)| {
                let before = self.0.insert(tid, total).unwrap_or(total);
                Duration::from_nanos(total.saturating_sub(before))
            })
            .max()
            .unwrap_or_default()
    }
}

/// How long, in all, the OS has kept thread `tid` of this process waiting
/// to run, in nanoseconds (`schedstat`'s second field); `None` where there
/// is no such file (not Linux, the thread gone).
fn run_queue_wait(tid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    stat.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{run_queue_wait, Lateness};
    use std::sync::Arc;
    use std::time::Duration;

    use crate::coverage;

    /// A thread's first total is its baseline (nothing it waited before
    /// the watch counts); after that the largest rise of any thread.
    #[test]
    fn run_queue_rises_count_from_the_first_sample() {
        use super::RunQueueRises;
        let mut rises = RunQueueRises::default();
        assert_eq!(rises.largest([(7, 5_000_000)].into_iter()), Duration::ZERO);
        assert_eq!(
            rises.largest([(7, 8_000_000), (9, 1_000_000)].into_iter()),
            Duration::from_millis(3)
        );
        assert_eq!(
            rises.largest([(7, 8_500_000), (9, 3_000_000)].into_iter()),
            Duration::from_millis(2)
        );
        assert_eq!(rises.largest(std::iter::empty()), Duration::ZERO);
    }

    /// What the probe reads for a component's own threads: a thread that
    /// keeps asking for the CPU while more busy threads than cores hold it
    /// waits on the run queue, and its `schedstat` total says so.
    #[test]
    fn lateness_measures_a_watched_thread_kept_off_the_cpu() {
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let napper = std::thread::spawn(move || {
            tid_tx.send(coverage::current_thread_id()).unwrap();
            for _ in 0..300 {
                std::thread::sleep(Duration::from_micros(500));
            }
        });
        let tid = tid_rx.recv().unwrap().expect("a Linux thread id");
        let before = run_queue_wait(tid).expect("schedstat");
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let busy: Vec<_> = (0..cores * 4)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100));
        let after = run_queue_wait(tid).expect("schedstat");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for thread in busy {
            thread.join().unwrap();
        }
        napper.join().unwrap();
        assert!(
            after - before >= 2_000_000,
            "waited only {} us on the run queue behind {} busy threads",
            (after - before) / 1_000,
            cores * 4
        );
    }

    /// The probe sees a runtime whose workers are held: both workers of a
    /// two-worker runtime blocked for 40 ms make its naps at least 20 ms
    /// late (what widens a real run's slacks, `real::real_grain`).
    #[test]
    fn lateness_measures_workers_held_up() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let lateness = Lateness::watch(&runtime, None);
        runtime.block_on(async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let hold = || std::thread::sleep(Duration::from_millis(40));
            let a = tokio::spawn(async move { hold() });
            let b = tokio::spawn(async move { hold() });
            let _ = (a.await, b.await);
            tokio::time::sleep(Duration::from_millis(5)).await;
        });
        assert!(
            lateness.worst() >= Duration::from_millis(20),
            "{:?}",
            lateness.worst()
        );
    }
}
