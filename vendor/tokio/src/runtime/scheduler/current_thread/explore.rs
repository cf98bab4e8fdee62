//! lanesim patch (LANESIM.md): what the current-thread scheduler does for
//! an explorer a simulated world installed (`lanesim_sched`): tasks held
//! back for a span of virtual time, and the decisions asked before a poll.
//!
//! A held task is out of the run queue until its instant; the scheduler
//! parks no longer than the earliest one, so a paused clock advances to it
//! as it would to a timer, and the task is queued again after the park.

use super::Notified;

cfg_time! {
    use crate::time::Instant;
    use std::time::Duration;

    /// Tasks held back, each with the instant it is queued again.
    #[derive(Default)]
    pub(super) struct Held {
        tasks: Vec<(Instant, Notified)>,
    }

    impl Held {
        /// Holds `task` for `hold` from now, to the timer boundary after
        /// it (as a `sleep` would wake), when the runtime has timers;
        /// `Err(task)` when it has none.
        pub(super) fn hold(
            &mut self,
            driver: &crate::runtime::driver::Handle,
            task: Notified,
            hold: Duration,
        ) -> Result<(), Notified> {
            let Some(time) = driver.time.as_ref() else {
                return Err(task);
            };
            let source = time.time_source();
            let tick = source.deadline_to_tick(driver.clock().now() + hold);
            self.tasks.push((source.tick_to_instant(tick), task));
            Ok(())
        }

        /// How long the scheduler may park before a held task is due
        /// (`None`: none is held).
        pub(super) fn wait(&self, driver: &crate::runtime::driver::Handle) -> Option<Duration> {
            let first = self.tasks.iter().map(|(until, _)| *until).min()?;
            Some(first.saturating_duration_since(driver.clock().now()))
        }

        /// The held tasks now due, in the order they were held.
        pub(super) fn due(&mut self, driver: &crate::runtime::driver::Handle) -> Vec<Notified> {
            if self.tasks.is_empty() {
                return Vec::new();
            }
            let now = driver.clock().now();
            let mut due = Vec::new();
            let mut kept = Vec::with_capacity(self.tasks.len());
            for (until, task) in self.tasks.drain(..) {
                if until <= now {
                    due.push(task);
                } else {
                    kept.push((until, task));
                }
            }
            self.tasks = kept;
            due
        }

        pub(super) fn clear(&mut self) {
            self.tasks.clear();
        }
    }
}

cfg_not_time! {
    use std::time::Duration;

    /// Without timers nothing is held (a hold runs the task at once).
    #[derive(Default)]
    pub(super) struct Held;

    impl Held {
        pub(super) fn hold(
            &mut self,
            _driver: &crate::runtime::driver::Handle,
            task: Notified,
            _hold: Duration,
        ) -> Result<(), Notified> {
            Err(task)
        }

        pub(super) fn wait(&self, _driver: &crate::runtime::driver::Handle) -> Option<Duration> {
            None
        }

        pub(super) fn due(&mut self, _driver: &crate::runtime::driver::Handle) -> Vec<Notified> {
            Vec::new()
        }

        pub(super) fn clear(&mut self) {}
    }
}

/// The explorer's task handle for `task`.
pub(super) fn task(task: &Notified) -> lanesim_sched::Task {
    lanesim_sched::Task {
        id: task.explore_id().as_u64(),
    }
}
