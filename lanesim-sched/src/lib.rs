//! The seam between lanesim's tokio and a simulated world's scheduler.
//!
//! Model. A simulated world runs every task of a target on a current-thread
//! tokio runtime. Stock tokio makes three choices there that no seed
//! reaches: which ready task is polled next (first woken, first polled),
//! how far a task runs before its budget makes it yield (128 operations on
//! tokio's resources: channels, timers, sockets, locks), and the branch
//! order of an un-`biased` `select!` (a generator seeded from OS entropy).
//! lanesim's copy of tokio (`vendor/tokio`, through `[patch.crates-io]`)
//! asks an [`Explorer`] for all three when one is installed on the thread
//! that builds the runtime:
//!
//! - [`Explorer::rng_seed`]: the seed of the runtime's generator, so every
//!   `select!` draws its branch order from the run's seed;
//! - [`Explorer::pick`]: which of the ready tasks is polled next;
//! - [`Explorer::poll`]: before each poll, run the task with its usual
//!   budget, with a budget of `n` operations (its `n + 1`-th operation on a
//!   tokio resource returns `Pending` and the task yields, so every other
//!   ready task runs first: a preemption at an await point nobody marked),
//!   or hold it back for a span of virtual time first;
//! - [`Explorer::polled`]: after the poll, whether a budgeted operation was
//!   refused (the task was preempted).
//!
//! It also tells the explorer where tasks come from ([`Explorer::spawned`])
//! and when they end ([`Explorer::ended`]): the lanes world infers a
//! router's lanes from them (a task spawned while the world routes a key,
//! ended when the lane ends).
//!
//! Nothing installed, the patched tokio is stock tokio (one branch per
//! runtime build). Without the patch nothing asks: [`patched`] tells a
//! runner which it has, so it can refuse to claim exploration it cannot do.
//!
//! Outside any runtime (a model checker runs tasks on threads of its own),
//! an un-`biased` `select!` asks a [`Chooser`] set on the thread, if one
//! is, for its branch order ([`choose`]): the model world sets the model
//! checker's own choice there, so both orders are explored and replayed.
//!
//! This crate has no dependencies because tokio depends on it.

use std::cell::RefCell;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A task as the explorer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    /// tokio's task id (`tokio::task::Id`), unique in the process.
    pub id: u64,
}

/// What to do with a task about to be polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Poll {
    /// Poll it with tokio's usual budget.
    Run,
    /// Poll it with a budget of this many operations on tokio's resources:
    /// the next one returns `Pending` and the task yields.
    Budget(u8),
    /// Put it back for this long (virtual time), then poll it.
    Hold(Duration),
}

/// The world's side, asked by the patched scheduler.
pub trait Explorer: Send + Sync + 'static {
    /// The seed of a new runtime's random generator (`select!`'s branch
    /// order), asked once per runtime.
    fn rng_seed(&self) -> u64;

    /// Whether this runtime's order of ready tasks is the explorer's
    /// ([`Explorer::pick`]); asked once per runtime. When not, tasks are
    /// polled in stock tokio's order, local queue and injected alike.
    fn reorders(&self) -> bool;

    /// A task was spawned at `at`.
    fn spawned(&self, task: Task, at: &'static Location<'static>) {
        let _ = (task, at);
    }

    /// Of `ready` tasks waiting to be polled (oldest first, `ready >= 2`),
    /// the index of the one polled next.
    fn pick(&self, ready: usize) -> usize;

    /// `task` is about to be polled.
    fn poll(&self, task: Task) -> Poll;

    /// `task`'s poll ended; `preempted`: an operation was refused for its
    /// budget, so it yielded.
    fn polled(&self, task: Task, preempted: bool) {
        let _ = (task, preempted);
    }

    /// `task` ended: it returned, panicked or was cancelled, and will not be
    /// polled again (asked on the runtime's thread as tokio releases it,
    /// after its future is dropped).
    fn ended(&self, task: Task) {
        let _ = task;
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Explorer>>> = const { RefCell::new(None) };
}

/// Set by the patched tokio the first time it builds a runtime.
static ASKED: AtomicBool = AtomicBool::new(false);

/// Uninstalls the explorer when dropped.
#[must_use = "the explorer is uninstalled when this is dropped"]
pub struct Installed(Option<Arc<dyn Explorer>>);

impl Drop for Installed {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|slot| *slot.borrow_mut() = previous);
    }
}

/// Installs `explorer` for the runtimes built on this thread until the
/// guard drops (the one installed before comes back then).
pub fn install(explorer: Arc<dyn Explorer>) -> Installed {
    let previous = CURRENT.with(|slot| slot.borrow_mut().replace(explorer));
    Installed(previous)
}

/// For the patched tokio, building a current-thread runtime: the explorer
/// installed on this thread, if any.
#[doc(hidden)]
pub fn for_new_runtime() -> Option<Arc<dyn Explorer>> {
    ASKED.store(true, Ordering::Relaxed);
    CURRENT.with(|slot| slot.borrow().clone())
}

/// Whether this process's tokio asks for an explorer: true once the patched
/// tokio has built a current-thread runtime. A runner builds one to find
/// out.
#[must_use]
pub fn patched() -> bool {
    ASKED.load(Ordering::Relaxed)
}

/// Where a `select!` outside any runtime draws its branch order: the first
/// branch it polls, below `n`.
pub type Chooser = fn(u32) -> u32;

thread_local! {
    static CHOOSER: std::cell::Cell<Option<Chooser>> = const { std::cell::Cell::new(None) };
}

/// The chooser set on this thread until it is dropped (then the previous
/// one is back).
#[must_use = "the chooser is unset when this is dropped"]
pub struct Chosen(Option<Chooser>);

impl Drop for Chosen {
    fn drop(&mut self) {
        let previous = self.0.take();
        CHOOSER.with(|slot| slot.set(previous));
    }
}

/// Sets `chooser` on this thread.
pub fn set_chooser(chooser: Chooser) -> Chosen {
    Chosen(CHOOSER.with(|slot| slot.replace(Some(chooser))))
}

/// For the patched tokio's `select!`: the first branch to poll, below `n`,
/// if a chooser is set on this thread.
#[doc(hidden)]
#[must_use]
pub fn choose(n: u32) -> Option<u32> {
    CHOOSER
        .with(std::cell::Cell::get)
        .map(|chooser| chooser(n) % n.max(1))
}
