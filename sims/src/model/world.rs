//! One execution of the model world: the target's router built on the
//! model checker's scheduler, the workload's producers on tasks of their
//! own, a handler that logs each item's start and end, and the router
//! dropped by whichever producer finishes last.
//!
//! The log must be a linearisation the lanes checkers can read, although
//! its records come from tasks the checker interleaves at every step. As in
//! real mode, a step of the world and its record happen under one lock
//! ([`LogOrder`]): a route and its `Routed`, a handler's start and end and
//! their records, the drop and its `RouterDropped`; the lock is the model
//! checker's, so a task waiting for it lets the others run. Lifecycle
//! reports are logged without it: a target may report from under a lock of
//! its own that a route holding the order waits for. The one step a record
//! cannot share is the lane's acknowledgement of an item after its handler
//! returns, which the checkers allow for (`CheckContext::late_acks`).
//!
//! Time does not move (every record is at zero): the checkers' timing
//! clauses are not decided here, the model world's `idle_ttl` is given to
//! the router only.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::lanes::{
    BoxFuture, Handler, Item, LaneEvents, LaneExit, LaneId, LaneReports, Lanes, LanesSetup, Mode,
};
use lanesim_target::shim::task;

use super::order::LogOrder;
use super::workload::{self, Admit, LanesShape, Step};
use super::Left;
use crate::event::{Event, EventLog, Exit};
use crate::targets::Subject;
use crate::world::INJECTED;

const HOST: &str = "lanes";

/// The TTL the router is built with when the workload reaps (any value
/// does: the timer fires where the checker chooses).
pub(super) const MODEL_TTL: Duration = Duration::from_millis(10);

/// What one execution shares and leaves for the judge.
pub(super) struct Execution {
    log: EventLog,
    order: LogOrder,
    workload: &'static LanesShape,
    /// For a target that reports no lanes: the lane number of each task a
    /// handler ran on, numbered as first seen.
    tasks: Mutex<BTreeMap<u64, u64>>,
    /// Why the execution could not run as planned: the target could not be
    /// built, or its `route` panicked.
    crashed: Mutex<Option<String>>,
}

impl Left for Execution {
    fn take_log(&self) -> Vec<crate::event::Record> {
        self.log.take()
    }

    fn take_crash(&self) -> Option<String> {
        self.crashed.lock().unwrap().take()
    }
}

impl Execution {
    fn record(&self, event: Event) {
        self.order
            .ordered(|| self.log.push(Duration::ZERO, HOST, event));
    }

    fn crash(&self, why: String) {
        self.crashed.lock().unwrap().get_or_insert(why);
    }

    fn task_lane(&self) -> u64 {
        let task = task::current_id().unwrap_or(0);
        let mut tasks = self.tasks.lock().unwrap();
        let next = tasks.len() as u64 + 1;
        *tasks.entry(task).or_insert(next)
    }
}

struct Observer(Arc<Execution>);

impl LaneEvents for Observer {
    fn created(&self, key: u64, lane: LaneId) {
        self.0.log.push(
            Duration::ZERO,
            HOST,
            Event::LaneCreated { key, lane: lane.0 },
        );
    }

    fn closed(&self, key: u64, lane: LaneId, exit: LaneExit) {
        self.0.log.push(
            Duration::ZERO,
            HOST,
            Event::LaneClosed {
                key,
                lane: lane.0,
                exit: Exit::from(exit),
            },
        );
    }
}

/// The handler: logs the start, takes one step (so other tasks run
/// between an item's start and its end), logs the end, and panics where the
/// workload says.
fn handle(execution: &Arc<Execution>, lane: Option<LaneId>, item: Item) -> BoxFuture {
    let Item { key, seq } = item;
    let lane = lane.map_or_else(|| execution.task_lane(), |lane| lane.0);
    execution.record(Event::HandleStart {
        key,
        item: seq,
        lane,
    });
    let execution = Arc::clone(execution);
    Box::pin(async move {
        task::yield_now().await;
        let panicked = execution.workload.panics.contains(&seq);
        execution.record(Event::HandleEnd {
            key,
            item: seq,
            lane,
            panicked,
        });
        if panicked {
            panic!("{INJECTED} handler panic (key {key}, item {seq})");
        }
    })
}

/// The router, shared by the producers; the last one's drop drops it.
struct Shared {
    router: Option<Box<dyn Lanes>>,
    execution: Arc<Execution>,
    /// The capacity each route passes.
    capacity: Option<usize>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(router) = self.router.take() {
            self.execution.record(Event::RouterDropped);
            drop(router);
        }
    }
}

impl Shared {
    /// Routes one item and logs it: as one step of the log (the route and
    /// its `Routed` under the log's order), or, where the workload lets
    /// routes overlap, between a `RouteBegan` and a `Routed` logged apart.
    fn route(&self, key: u64, seq: u64) -> bool {
        let Some(router) = &self.router else {
            return false;
        };
        let execution = &self.execution;
        let overlap = execution.workload.overlap;
        let step = || {
            let routed = catch_unwind(AssertUnwindSafe(|| {
                router.route(Item { key, seq }, self.capacity)
            }));
            match routed {
                Ok(answer) => {
                    let event = Event::Routed {
                        key,
                        item: seq,
                        capacity: self.capacity.map(|c| c as u64),
                        depth: answer.ok().map(|d| d as u64),
                    };
                    if overlap {
                        execution.record(event);
                    } else {
                        execution.log.push(Duration::ZERO, HOST, event);
                    }
                    true
                }
                Err(payload) => {
                    let words = crate::run::stream::panic_message(payload.as_ref());
                    execution.crash(format!(
                        "the target's route panicked: {words} (a router under the model checker must spawn through lanesim_target::shim::task and take its primitives from lanesim_target::shim: tokio's own runtime is not there)"
                    ));
                    false
                }
            }
        };
        if overlap {
            execution.record(Event::RouteBegan { key, item: seq });
            step()
        } else {
            execution.order.ordered(step)
        }
    }
}

/// The mode and the per-route capacity a workload runs the target in,
/// given the capacity it has built in (if any).
pub(super) fn admission(admit: Admit, fixed: Option<usize>) -> (Mode, Option<usize>) {
    match admit {
        Admit::Router => (Mode::Router, fixed),
        Admit::Capacity(capacity) => (Mode::Router, Some(capacity)),
        Admit::Reject(limit) => (Mode::Reject { limit }, Some(limit)),
    }
}

/// One execution's body: builds the router and starts the producers. The
/// execution is left in `slot` for the judge.
pub(super) fn body(
    subject: &Subject,
    workload: &'static LanesShape,
    slot: &Mutex<Option<Arc<dyn Left>>>,
) {
    let execution = Arc::new(Execution {
        log: EventLog::default(),
        order: LogOrder::default(),
        workload,
        tasks: Mutex::new(BTreeMap::new()),
        crashed: Mutex::new(None),
    });
    *slot.lock().unwrap() = Some(Arc::clone(&execution) as Arc<dyn Left>);
    let Some(target) = subject.lanes() else {
        execution.crash("the target has no lanes router".into());
        return;
    };
    let caps = target.capabilities();
    let (mode, capacity) = admission(workload.admit, caps.fixed.capacity);
    let handler_execution = Arc::clone(&execution);
    let built = target.build(LanesSetup {
        runtime: task::Handle::current(),
        idle_ttl: workload.ttl.then_some(MODEL_TTL),
        mode,
        handler: Handler::new(move |lane, item| handle(&handler_execution, lane, item)),
        reports: LaneReports::new(Arc::new(Observer(Arc::clone(&execution)))),
    });
    let router = match built {
        Ok(router) => router,
        Err(error) => {
            execution.crash(format!("the lanes target could not be built: {error}"));
            return;
        }
    };
    let shared = Arc::new(Shared {
        router: Some(router),
        execution: Arc::clone(&execution),
        capacity,
    });
    for (producer, steps) in workload.producers.iter().enumerate() {
        let shared = Arc::clone(&shared);
        drop(task::spawn(async move {
            for (at, step) in steps.iter().enumerate() {
                match *step {
                    Step::Route(key) => {
                        if !shared.route(key, workload::item(producer, at)) {
                            break;
                        }
                    }
                    Step::Yield => task::yield_now().await,
                }
            }
            drop(shared);
        }));
    }
}
