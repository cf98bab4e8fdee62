//! lanesim's `LaneRouter` (mode `Router`) and `OrderedDispatcher` (modes
//! `Reject`, `Warn`) behind the public lanes target trait: built on the
//! world's runtime with a fixed hasher, every lane reported, every item's
//! lane handed to the handler.

use std::sync::Arc;

use lanesim::lanes::{
    DispatcherConfig, FixedHasher, LaneExit as Exit, LaneId as Id, LaneObserver, LaneRouter,
    LaneRouterConfig, OrderedDispatcher, OverflowPolicy,
};
use lanesim::planted::Planted;
use lanesim::shim::probe::LANES_SITES;
use lanesim::shim::rt::RuntimeChoice;
use lanesim_target::lanes::{
    Handler, Item, LaneExit, LaneId, LaneReports, LaneStats, Lanes, LanesCapabilities, LanesFixed,
    LanesSetup, LanesTarget, Mode, ModeKind,
};

/// lanesim's router and dispatcher, with a planted bug or none.
#[derive(Clone, Copy, Debug, Default)]
pub struct LanesimLanes {
    /// The planted bug the components are built with.
    pub planted: Planted,
}

/// The router's lifecycle hooks, told on to the world.
struct Observer(LaneReports);

fn exit(exit: Exit) -> LaneExit {
    match exit {
        Exit::Reaped => LaneExit::Reaped,
        Exit::Closed => LaneExit::Closed,
        Exit::Panicked => LaneExit::Panicked,
        Exit::Cancelled => LaneExit::Cancelled,
    }
}

impl LaneObserver<u64> for Observer {
    fn lane_created(&self, key: &u64, lane: Id) {
        self.0.created(*key, LaneId(lane.0));
    }

    fn lane_closed(&self, key: &u64, lane: Id, why: Exit) {
        self.0.closed(*key, LaneId(lane.0), exit(why));
    }
}

enum Built {
    Router(LaneRouter<u64, Item, FixedHasher>),
    Dispatcher(OrderedDispatcher<u64, Item, FixedHasher>),
}

impl Lanes for Built {
    fn route(&self, item: Item, capacity: Option<usize>) -> Result<usize, Item> {
        match self {
            Self::Router(router) => router.route(item.key, item, capacity),
            Self::Dispatcher(dispatcher) => dispatcher.dispatch(item.key, item),
        }
    }

    fn stats(&self) -> Option<LaneStats> {
        match self {
            Self::Router(_) => None,
            Self::Dispatcher(dispatcher) => {
                let stats = dispatcher.stats();
                Some(LaneStats {
                    lanes_created: stats.lanes_created,
                    lanes_live: stats.lanes_live,
                    items_shed: stats.items_shed,
                    handler_panics: stats.handler_panics,
                })
            }
        }
    }
}

impl LanesTarget for LanesimLanes {
    fn capabilities(&self) -> LanesCapabilities {
        LanesCapabilities {
            hazards: &[],
            modes: &[ModeKind::Router, ModeKind::Reject, ModeKind::Warn],
            lifecycle: true,
            stats: true,
            fixed: LanesFixed::default(),
            sites: LANES_SITES,
        }
    }

    fn build(&self, setup: LanesSetup) -> Result<Box<dyn Lanes>, String> {
        // Built the way a user builds one, the hasher last: a builder step
        // that dropped a field would change the run.
        let mut config = LaneRouterConfig::<u64>::new(RuntimeChoice::Handle(setup.runtime))
            .observer(Arc::new(Observer(setup.reports)))
            .planted(self.planted);
        if let Some(ttl) = setup.idle_ttl {
            config = config.idle_ttl(ttl);
        }
        let config = config.hasher(FixedHasher::default());
        let handler: Handler = setup.handler;
        let consumer = Arc::new(move |lane: Id, item: Item| handler.call_on(LaneId(lane.0), item));
        let dispatcher = |limit, policy, router| {
            OrderedDispatcher::with_lane_ids(
                consumer.clone(),
                DispatcherConfig {
                    limit,
                    policy,
                    router,
                },
            )
            .map(Built::Dispatcher)
        };
        let built = match setup.mode {
            Mode::Router => LaneRouter::with_lane_ids(consumer.clone(), config).map(Built::Router),
            Mode::Reject { limit } => dispatcher(limit, OverflowPolicy::Reject, config),
            Mode::Warn { limit } => dispatcher(limit, OverflowPolicy::Warn, config),
        };
        built
            .map(|built| Box::new(built) as Box<dyn Lanes>)
            .map_err(|error| error.to_string())
    }
}

#[cfg(test)]
mod tests {
    /// The production code's dedicated runtime tells the probe of the
    /// thread that built it about each worker it starts: the threads real
    /// mode watches.
    #[test]
    fn a_dedicated_runtime_tells_the_probe_its_workers() {
        use lanesim::lanes::{LaneRouter, LaneRouterConfig};
        use lanesim::shim::rt::RuntimeChoice;
        use std::sync::Arc;
        use std::time::Duration;

        use crate::coverage::{self, PreemptPolicy, WorldProbe};

        let probe = Arc::new(WorldProbe::new(0, PreemptPolicy::default()));
        let installed = coverage::install(&probe);
        let router = LaneRouter::new(
            Arc::new(|_: u64| Box::pin(async {}) as futures_util::future::BoxFuture<'static, ()>),
            LaneRouterConfig::<u64>::new(RuntimeChoice::Dedicated {
                thread_name: "lanesim-test-dedicated".into(),
            }),
        )
        .expect("a router");
        let started = std::time::Instant::now(); // wall-clock: ok (a real runtime's start)
        while probe.workers().is_empty() && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(probe.workers().len(), 1, "one worker, told once");
        drop(router);
        drop(installed);
    }
}
