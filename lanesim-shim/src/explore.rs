//! Exploring thread interleavings of a body of code, judged after each
//! execution: the entry point of a model world.
//!
//! Model. [`explore`] runs `body` again and again under the model checker
//! (one *execution* each time, every task it spawns through this crate
//! scheduled by the checker), and calls `judge` between executions, once
//! every task of the last one has ended, outside the checker: the judge
//! reads what the body recorded and says what, if anything, broke. It stops
//! at the first execution judged broken, at the first the checker itself
//! fails (a panic that escaped a task, every task blocked, the step bound),
//! or after [`Plan::executions`].
//!
//! Replay. The schedulers are seeded: execution `k` of a plan depends only
//! on the plan's strategy, seed and the executions before it (PCT learns
//! its step bound from the first), so a plan limited to `k + 1` executions
//! ([`Plan::executions`]) replays execution `k` exactly. No schedule string
//! is needed, and the one printed command a model world gives is
//! `(strategy, seed, execution)`.
//!
//! Which checker: shuttle (`--cfg shuttle`), with its PCT and random
//! schedulers. A build without it (production, or `--cfg loom`: loom
//! explores exhaustively and has no seed to replay from) answers
//! [`Unavailable`], so callers need no `cfg` of their own.

use std::fmt;
use std::time::Duration;

/// How schedules are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Uniformly random: any runnable task at each step (shuttle's random
    /// scheduler's rule, from a seeded stream of our own).
    Random,
    /// Shuttle's PCT scheduler: random priorities with `depth - 1`
    /// priority changes per execution, which finds a bug of depth `depth`
    /// with a probability it bounds from below.
    Pct {
        /// The bug depth aimed at (at least 1).
        depth: usize,
    },
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Random => f.write_str("random"),
            Self::Pct { depth } => write!(f, "pct:{depth}"),
        }
    }
}

/// One exploration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// How schedules are chosen.
    pub strategy: Strategy,
    /// The scheduler's seed.
    pub seed: u64,
    /// How many executions at most.
    pub executions: usize,
    /// Steps one execution may take before it counts as not ending (a task
    /// that spins for ever, or a livelock).
    pub max_steps: usize,
    /// Panics whose message starts with this are the body's own, on
    /// purpose (an injected handler panic): no panic hook prints them.
    /// Every other panic is printed as usual.
    pub quiet: &'static str,
}

/// Why an execution broke.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Broke {
    /// The judge's words about it.
    Judged(String),
    /// The checker failed it: a panic that escaped a task, every task
    /// blocked (a deadlock), or the step bound.
    Checker(String),
}

/// The first broken execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its index (0-based): a plan of `execution + 1` executions replays it.
    pub execution: usize,
    /// What broke.
    pub broke: Broke,
    /// The scheduling steps it took.
    pub steps: usize,
}

/// What an exploration did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explored {
    /// Executions run (judged or failed).
    pub executions: usize,
    /// The most scheduling steps one execution took.
    pub max_steps_seen: usize,
    /// The first broken execution, if any.
    pub found: Option<Found>,
    /// How long it took (wall time, for the report only).
    pub elapsed: Duration,
}

/// This build has no model checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unavailable;

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "this build has no model checker: build it with RUSTFLAGS=\"--cfg shuttle\" \
             (and a target directory of its own, as `lanesim model` does)",
        )
    }
}

impl std::error::Error for Unavailable {}

thread_local! {
    /// Panics caught in tasks of the running execution (the checker runs
    /// every task of a model on one thread), but for the quiet ones.
    static TASK_PANICS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The prefix of the panics not to keep ([`Plan::quiet`]).
    static QUIET_PREFIX: std::cell::Cell<&'static str> = const { std::cell::Cell::new("") };
}

/// A task of the model panicked and the panic was caught (as tokio catches
/// a task's panic): the shim's tasks and lanesim's own report it here, so
/// a judge can tell a panic nobody injected (a target that took tokio's
/// runtime directly panics "there is no reactor running") from the model's
/// findings. Does nothing outside a model.
pub fn task_panicked(payload: &(dyn std::any::Any + Send)) {
    if !available() {
        return;
    }
    let words = panic_words(payload);
    if !quiet(&words) {
        TASK_PANICS.with(|panics| panics.borrow_mut().push(words));
    }
}

/// A panic's message.
fn panic_words(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Whether a panic saying `words` is one of the body's own, on purpose
/// ([`Plan::quiet`] of the exploration running on this thread).
fn quiet(words: &str) -> bool {
    let quiet = QUIET_PREFIX.with(std::cell::Cell::get);
    !quiet.is_empty() && words.starts_with(quiet)
}

/// The panics caught in tasks since the last call (on this thread: call it
/// from the judge), but for the quiet ones.
#[must_use]
pub fn take_task_panics() -> Vec<String> {
    TASK_PANICS.with(|panics| std::mem::take(&mut *panics.borrow_mut()))
}

/// Whether this build can explore (it was built with `--cfg shuttle`).
#[must_use]
pub fn available() -> bool {
    cfg!(shuttle)
}

/// Explores `body` under `plan`, calling `judge(execution)` after each
/// execution ends (outside the checker). See the module's model.
///
/// # Errors
/// [`Unavailable`] in a build without shuttle.
#[cfg(not(shuttle))]
pub fn explore<B, J>(_plan: &Plan, _body: B, _judge: J) -> Result<Explored, Unavailable>
where
    B: Fn() + Send + Sync + 'static,
    J: FnMut(usize) -> Option<String> + Send + 'static,
{
    Err(Unavailable)
}

/// Explores `body` under `plan`, calling `judge(execution)` after each
/// execution ends (outside the checker). See the module's model.
///
/// # Errors
/// [`Unavailable`] in a build without shuttle.
#[cfg(shuttle)]
pub fn explore<B, J>(plan: &Plan, body: B, judge: J) -> Result<Explored, Unavailable>
where
    B: Fn() + Send + Sync + 'static,
    J: FnMut(usize) -> Option<String> + Send + 'static,
{
    // On a thread of its own: shuttle keeps its state in thread-locals, and
    // an execution it failed (a deadlock, the step bound) unwinds without
    // cleaning them, which would break the next exploration on the thread.
    let plan = *plan;
    std::thread::Builder::new()
        .name("lanesim-explore".into())
        .spawn(move || checker::explore(&plan, body, Box::new(judge)))
        .map_err(|_| Unavailable)?
        .join()
        .map_err(|_| Unavailable)
}

#[cfg(shuttle)]
mod checker {
    use std::cell::RefCell;
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::rc::Rc;
    use std::time::Instant;

    use shuttle::scheduler::{PctScheduler, RandomScheduler, Schedule, Scheduler, Task, TaskId};

    use super::{Broke, Explored, Found, Plan, Strategy};

    type Judge = Box<dyn FnMut(usize) -> Option<String> + Send>;

    #[derive(Default)]
    struct Progress {
        /// Executions begun.
        begun: usize,
        /// Executions judged (all but a failed last one).
        judged: usize,
        steps: usize,
        max_steps_seen: usize,
        found: Option<Found>,
    }

    /// The plan's scheduler, judging each execution as the next begins.
    struct Judging {
        inner: Box<dyn Scheduler>,
        limit: usize,
        judge: Rc<RefCell<Judge>>,
        progress: Rc<RefCell<Progress>>,
    }

    fn judge_last(judge: &RefCell<Judge>, progress: &RefCell<Progress>) {
        let mut p = progress.borrow_mut();
        if p.found.is_some() || p.judged == p.begun {
            return;
        }
        let execution = p.begun - 1;
        p.judged = p.begun;
        let steps = p.steps;
        drop(p);
        if let Some(words) = (judge.borrow_mut())(execution) {
            progress.borrow_mut().found = Some(Found {
                execution,
                broke: Broke::Judged(words),
                steps,
            });
        }
    }

    impl Scheduler for Judging {
        fn new_execution(&mut self) -> Option<Schedule> {
            judge_last(&self.judge, &self.progress);
            let mut p = self.progress.borrow_mut();
            if p.found.is_some() || p.begun >= self.limit {
                return None;
            }
            p.begun += 1;
            p.steps = 0;
            drop(p);
            self.inner.new_execution()
        }

        fn next_task(
            &mut self,
            runnable: &[&Task],
            current: Option<TaskId>,
            is_yielding: bool,
        ) -> Option<TaskId> {
            let mut p = self.progress.borrow_mut();
            p.steps += 1;
            p.max_steps_seen = p.max_steps_seen.max(p.steps);
            drop(p);
            self.inner.next_task(runnable, current, is_yielding)
        }

        fn next_u64(&mut self) -> u64 {
            self.inner.next_u64()
        }
    }

    /// Shuttle's random scheduler, minus its habit of printing a "failing
    /// seed" whenever it is dropped before its last execution (which an
    /// exploration that stops at a find always does): any runnable task at
    /// each step, uniformly, from a seeded splitmix64 stream.
    struct Uniform {
        state: u64,
    }

    impl Uniform {
        fn seeded(seed: u64) -> Self {
            Self { state: seed }
        }

        fn next(&mut self) -> u64 {
            self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    impl Scheduler for Uniform {
        fn new_execution(&mut self) -> Option<Schedule> {
            Some(Schedule::new(self.next()))
        }

        fn next_task(
            &mut self,
            runnable: &[&Task],
            _current: Option<TaskId>,
            _is_yielding: bool,
        ) -> Option<TaskId> {
            let pick = (self.next() % runnable.len() as u64) as usize;
            Some(runnable[pick].id())
        }

        fn next_u64(&mut self) -> u64 {
            self.next()
        }
    }

    /// Silences panics that start with `quiet` (on this thread, which runs
    /// every task of the model). Shuttle installs its own hook at its first
    /// run, printing every panic with a failure notice: ours goes on top
    /// of it, so a first empty run makes sure it is there already.
    fn quiet_hook(quiet: &'static str) {
        static INSTALLED: std::sync::Once = std::sync::Once::new();
        INSTALLED.call_once(|| {
            let mut config = shuttle::Config::new();
            config.silence_warnings = true;
            shuttle::Runner::new(RandomScheduler::new_from_seed(0, 1), config).run(|| {});
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if !super::quiet(&super::panic_words(info.payload())) {
                    previous(info);
                }
            }));
        });
        super::QUIET_PREFIX.with(|cell| cell.set(quiet));
    }

    /// A choice below `n`, the checker's (inside an execution only).
    fn checker_choice(n: u32) -> u32 {
        use shuttle::rand::Rng;
        shuttle::rand::thread_rng().gen_range(0..n.max(1))
    }

    pub(super) fn explore<B>(plan: &Plan, body: B, judge: Judge) -> Explored
    where
        B: Fn() + Send + Sync + 'static,
    {
        let start = Instant::now(); // wall-clock: ok (reported, never decides)
        let inner: Box<dyn Scheduler> = match plan.strategy {
            Strategy::Random => Box::new(Uniform::seeded(plan.seed)),
            Strategy::Pct { depth } => Box::new(PctScheduler::new_from_seed(
                plan.seed,
                depth.max(1),
                plan.executions,
            )),
        };
        let judge = Rc::new(RefCell::new(judge));
        let progress = Rc::new(RefCell::new(Progress::default()));
        let scheduler = Judging {
            inner,
            limit: plan.executions,
            judge: Rc::clone(&judge),
            progress: Rc::clone(&progress),
        };
        let mut config = shuttle::Config::new();
        config.failure_persistence = shuttle::FailurePersistence::None;
        config.max_steps = shuttle::MaxSteps::FailAfter(plan.max_steps);
        config.silence_warnings = true;
        quiet_hook(plan.quiet);
        drop(super::take_task_panics());
        // An un-`biased` select! (with lanesim's tokio) draws its branch
        // order from the checker: explored, and replayed.
        let _chosen = lanesim_sched::set_chooser(checker_choice);
        let runner = shuttle::Runner::new(scheduler, config);
        match catch_unwind(AssertUnwindSafe(|| runner.run(body))) {
            Ok(_) => judge_last(&judge, &progress),
            Err(payload) => {
                let mut p = progress.borrow_mut();
                let execution = p.begun.saturating_sub(1);
                p.judged = p.begun;
                let steps = p.steps;
                p.found = Some(Found {
                    execution,
                    broke: Broke::Checker(super::panic_words(payload.as_ref())),
                    steps,
                });
            }
        }
        let p = progress.borrow();
        Explored {
            executions: p.begun,
            max_steps_seen: p.max_steps_seen,
            found: p.found.clone(),
            elapsed: start.elapsed(),
        }
    }
}
