//! Coverage marks and preemption points, for any implementation: how the
//! testbed sees which races a run reached, and how a single-threaded
//! simulated world reaches races that in production only a second thread
//! could.
//!
//! Model. Both are calls the code under test makes at the sites that
//! matter; neither changes what the code does.
//!
//! - [`mark`] says "this run got here" (a declined reap, a write deadline
//!   that fired). The testbed counts marks per run, and a scenario lists the
//!   marks it exists to reach (`reaches = ["reap_declined >= 25%"]`), so a
//!   scenario that never reaches its race fails instead of passing
//!   vacuously (FoundationDB's `TEST()` and TigerBeetle's coverage marks are
//!   the models).
//! - [`preempt_point`] sits where a decision and its action are separated
//!   and another thread could run between them in production (an idle
//!   timeout and its reap, a down check and its write). A simulated world
//!   may answer with a yield or a short virtual sleep, drawn from the run's
//!   seed, so other tasks run inside the window: a model of a preempted
//!   thread. The point is in the correct code too; it lets the worlds
//!   interleave where production threads can.
//!
//! A target declares the names it uses ([`Sites`]), so a scenario naming a
//! mark the target never declared is refused or reported as not decided,
//! never passed.
//!
//! Both compile to nothing without the `testbed` feature (an empty inline
//! function and a future that is ready at once). Take this crate as a
//! normal dependency and call them in production code: only a build that
//! also has the testbed (a `lanesim-sims` dev-dependency, whose features
//! cargo's resolver 2 applies to test builds only) turns them on. Under
//! `--cfg loom` and `--cfg shuttle` they are no-ops too: the model checkers
//! interleave at every atomic already. With the feature, a probe is
//! installed per thread ([`install`]): a simulated world runs on one
//! thread, so marks and preemptions count for exactly one run even when a
//! sweep runs many worlds side by side.

use std::time::Duration;

/// The names of the marks and preemption points a component's code uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sites {
    /// Every name the code passes to [`mark`].
    pub marks: &'static [&'static str],
    /// Every name the code passes to [`preempt_point`].
    pub points: &'static [&'static str],
}

/// What a preemption point does in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preempt {
    /// Carry on at once.
    Run,
    /// Let every other ready task run first.
    Yield,
    /// Sleep this long (virtual time in a simulated world).
    Sleep(Duration),
}

/// The testbed's side: told of every mark, asked at every point.
pub trait Probe: Send + Sync {
    /// A run reached `mark`.
    fn mark(&self, mark: &'static str);
    /// A task reached `point`: what should it do?
    fn preempt(&self, point: &'static str) -> Preempt;
    /// A worker thread of a runtime the code under test built started, on
    /// that thread ([`worker_start_hook`]). The testbed's real mode notes
    /// which threads are the component's own, to measure how long the OS
    /// kept them waiting to run.
    fn worker_started(&self) {}
}

#[cfg(all(feature = "testbed", not(any(loom, shuttle))))]
mod imp {
    use std::cell::RefCell;
    use std::sync::Arc;

    use super::{Preempt, Probe};

    thread_local! {
        static PROBE: RefCell<Option<Arc<dyn Probe>>> = const { RefCell::new(None) };
    }

    /// Whether marks and points do anything in this build.
    pub const ENABLED: bool = true;

    /// Uninstalls the probe when dropped.
    #[must_use = "the probe is uninstalled when this is dropped"]
    pub struct Installed(());

    impl Drop for Installed {
        fn drop(&mut self) {
            PROBE.with(|probe| probe.borrow_mut().take());
        }
    }

    /// Installs `probe` for this thread until the returned guard drops.
    ///
    /// # Panics
    /// When a probe is already installed on this thread.
    pub fn install(probe: Arc<dyn Probe>) -> Installed {
        PROBE.with(|slot| {
            let mut slot = slot.borrow_mut();
            assert!(
                slot.is_none(),
                "a probe is already installed on this thread"
            );
            *slot = Some(probe);
        });
        Installed(())
    }

    fn current() -> Option<Arc<dyn Probe>> {
        PROBE.with(|probe| probe.borrow().clone())
    }

    /// For a runtime the code under test builds itself (a dedicated
    /// runtime): pass the result to tokio's `Builder::on_thread_start`. It
    /// installs the probe of the thread that built the runtime, if it had
    /// one, on each worker as it starts, so marks made there count for the
    /// run that started them, and tells the probe
    /// ([`Probe::worker_started`]). `None` when this thread has no probe
    /// (and always without the `testbed` feature).
    #[must_use]
    pub fn worker_start_hook() -> Option<Arc<dyn Fn() + Send + Sync>> {
        let probe = current()?;
        Some(Arc::new(move || {
            PROBE.with(|slot| *slot.borrow_mut() = Some(Arc::clone(&probe)));
            probe.worker_started();
        }))
    }

    /// This run reached `name`.
    #[inline]
    pub fn mark(name: &'static str) {
        if let Some(probe) = current() {
            probe.mark(name);
        }
    }

    /// A point where another thread could run before this task goes on.
    pub async fn preempt_point(name: &'static str) {
        let decision = current().map_or(Preempt::Run, |probe| probe.preempt(name));
        match decision {
            Preempt::Run => {}
            Preempt::Yield => tokio::task::yield_now().await,
            Preempt::Sleep(duration) => tokio::time::sleep(duration).await,
        }
    }
}

#[cfg(not(all(feature = "testbed", not(any(loom, shuttle)))))]
mod imp {
    /// Whether marks and points do anything in this build.
    pub const ENABLED: bool = false;

    /// Nothing to inherit in this build.
    #[inline(always)]
    #[must_use]
    pub fn worker_start_hook() -> Option<std::sync::Arc<dyn Fn() + Send + Sync>> {
        None
    }

    /// Nothing in this build.
    #[inline(always)]
    pub fn mark(_name: &'static str) {}

    /// Ready at once in this build.
    #[inline(always)]
    pub async fn preempt_point(_name: &'static str) {}
}

#[cfg(all(feature = "testbed", not(any(loom, shuttle))))]
pub use imp::{install, Installed};
pub use imp::{mark, preempt_point, worker_start_hook, ENABLED};
