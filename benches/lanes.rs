//! LaneRouter throughput on a 2-worker runtime: route + handle end to end,
//! for 1, 64 and 10,000 keys, each without and with a 1 ms idle TTL (reap /
//! recreate churn), as items/s. `route_alone` times `route()` with no
//! consumer running.
//! `shim_cost` compares our lane path (the lane queue, `src/lanes/queue.rs`,
//! emptied a batch at a time) with the same admission written directly on
//! dashmap + flume, one item per lock: what the lane queue buys.
//!
//! Run: `cargo bench --bench lanes`

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use lanesim::lanes::{LaneRouter, LaneRouterConfig, RandomState};
use lanesim::shim::rt::RuntimeChoice;
use tokio::runtime::Runtime;

const ITEMS: u64 = 200_000;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Counts handled items without making the count the bottleneck: one
/// cache-line-padded stripe per key residue, so each lane writes its own line
/// and the bench thread sums them while it waits.
#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicU64);

struct Done {
    stripes: Vec<Stripe>,
}

impl Done {
    fn new() -> Self {
        Self {
            stripes: (0..64).map(|_| Stripe::default()).collect(),
        }
    }

    fn handle(&self, item: u64) {
        self.stripes[(item % 64) as usize]
            .0
            .fetch_add(1, Ordering::Relaxed);
    }

    fn handled(&self) -> u64 {
        self.stripes
            .iter()
            .map(|stripe| stripe.0.load(Ordering::Relaxed))
            .sum()
    }

    fn wait_for(&self, target: u64) {
        while self.handled() < target {
            std::thread::park_timeout(Duration::from_micros(20));
        }
    }
}

/// Routes `ITEMS` items round-robin over `keys` from a producer task on
/// `runtime` and waits until all are handled; returns the elapsed time.
fn produce_and_wait(
    runtime: &Runtime,
    done: &Done,
    keys: u64,
    route: &Arc<dyn Fn(u64, u64) + Send + Sync>,
) -> Duration {
    let target = done.handled() + ITEMS;
    let started = Instant::now(); // wall-clock: ok (benchmark)
                                  // The producer is a task on the same runtime, as a service's receive
                                  // loop would be.
    let route = Arc::clone(route);
    runtime.spawn(async move {
        for i in 0..ITEMS {
            route(i % keys, i);
        }
    });
    done.wait_for(target);
    started.elapsed()
}

fn router(runtime: &Runtime, done: &Arc<Done>, ttl: Option<Duration>) -> LaneRouter<u64, u64> {
    let done = Arc::clone(done);
    let mut config =
        LaneRouterConfig::<u64, RandomState>::new(RuntimeChoice::Handle(runtime.handle().clone()));
    config.idle_ttl = ttl;
    LaneRouter::new(
        Arc::new(move |item| {
            done.handle(item);
            Box::pin(std::future::ready(()))
        }),
        config,
    )
    .unwrap()
}

fn route_and_handle(c: &mut Criterion) {
    let mut group = c.benchmark_group("route_and_handle");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(ITEMS));
    let ttl = Some(Duration::from_millis(1));
    for (label, keys, ttl) in [
        ("keys=1", 1u64, None),
        ("keys=64", 64, None),
        ("keys=10000", 10_000, None),
        ("keys=1,ttl=1ms", 1, ttl),
        ("keys=64,ttl=1ms", 64, ttl),
        ("keys=10000,ttl=1ms", 10_000, ttl),
    ] {
        let runtime = runtime();
        let done = Arc::new(Done::new());
        let router = router(&runtime, &done, ttl);
        let route: Arc<dyn Fn(u64, u64) + Send + Sync> = Arc::new(move |key, item| {
            let _ = router.route(key, item, None);
        });
        group.bench_function(BenchmarkId::from_parameter(label), |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| produce_and_wait(&runtime, &done, keys, &route))
                    .sum()
            });
        });
    }
    group.finish();
}

/// `route` and the lane loop written directly on dashmap + flume (one item
/// per lock, a unit of coop budget per item) with the
/// same hasher, shard count and fast path: what the shim layer would cost if
/// it cost anything.
struct DirectRouter {
    lanes: dashmap::DashMap<u64, (flume::Sender<u64>, Arc<AtomicUsize>), RandomState>,
    runtime: tokio::runtime::Handle,
    done: Arc<Done>,
}

impl DirectRouter {
    fn route(&self, key: u64, item: u64) -> Result<usize, u64> {
        let lane = self.lanes.entry(key).or_insert_with(|| {
            let (tx, rx) = flume::unbounded::<u64>();
            let pending = Arc::new(AtomicUsize::new(0));
            let (pending_task, done) = (Arc::clone(&pending), Arc::clone(&self.done));
            self.runtime.spawn(async move {
                loop {
                    let item = match rx.try_recv() {
                        Ok(item) => item,
                        Err(_) => match rx.recv_async().await {
                            Ok(item) => item,
                            Err(_) => break,
                        },
                    };
                    done.handle(item);
                    std::future::ready(()).await;
                    pending_task.fetch_sub(1, Ordering::AcqRel);
                    tokio::task::coop::consume_budget().await;
                }
            });
            (tx, pending)
        });
        let depth = lane.1.fetch_add(1, Ordering::AcqRel);
        let _ = lane.0.send(item);
        Ok(depth)
    }
}

fn route_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("shim_cost_keys=64");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    group.throughput(Throughput::Elements(ITEMS));
    let runtime = runtime();
    let done = Arc::new(Done::new());
    let shim = router(&runtime, &done, None);
    let through_shim: Arc<dyn Fn(u64, u64) + Send + Sync> = Arc::new(move |key, item| {
        let _ = shim.route(key, item, None);
    });
    group.bench_function("through_shim", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| produce_and_wait(&runtime, &done, 64, &through_shim))
                .sum()
        });
    });
    let direct = DirectRouter {
        lanes: dashmap::DashMap::with_capacity_and_hasher_and_shard_amount(
            0,
            RandomState::default(),
            64,
        ),
        runtime: runtime.handle().clone(),
        done: Arc::clone(&done),
    };
    let direct: Arc<dyn Fn(u64, u64) + Send + Sync> = Arc::new(move |key, item| {
        let _ = direct.route(key, item);
    });
    group.bench_function("direct_dashmap_flume", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| produce_and_wait(&runtime, &done, 64, &direct))
                .sum()
        });
    });
    group.finish();
}

/// `route()` by itself: 64 live lanes on a current-thread runtime that is
/// not driven while the routes are timed (so no consumer competes for the
/// lanes' cache lines), then driven, untimed, to drain them.
fn route_alone(c: &mut Criterion) {
    let mut group = c.benchmark_group("route_alone");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(ITEMS));
    for keys in [64u64, 10_000] {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let done = Arc::new(Done::new());
        let router = router(&runtime, &done, None);
        group.bench_function(BenchmarkId::from_parameter(format!("keys={keys}")), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let target = done.handled() + ITEMS;
                    let started = Instant::now(); // wall-clock: ok (benchmark)
                    for i in 0..ITEMS {
                        let _ = router.route(i % keys, i, None);
                    }
                    total += started.elapsed();
                    runtime.block_on(async {
                        while done.handled() < target {
                            tokio::task::yield_now().await;
                        }
                    });
                }
                total
            });
        });
    }
    group.finish();
}

criterion_group!(benches, route_and_handle, route_cost, route_alone);
criterion_main!(benches);
