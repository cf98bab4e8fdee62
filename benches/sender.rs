//! What `DistSender::enqueue` and `enqueue_control` cost the caller (ns per
//! call), two ways:
//!
//! - `uncontended`: the drain runs between batches of fewer than capacity
//!   calls, never during one, so each call is the enqueue path alone (the
//!   usual case: distribution traffic is low-frequency);
//! - `contended`: the drain runs on its dedicated runtime throughout, so the
//!   caller also pays for sharing the lane's lock with a drain that is busy.
//!
//! Destinations are chosen so the drain disposes of frames without I/O (no
//! connection for data, a downed pinned generation for controls).
//!
//! Run: `cargo bench --bench sender`

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use lanesim::distribution::{
    ConnectionManager, ControlOutbound, DistConnection, DistSender, DownReason, ManagerConfig,
    NodeName, SenderConfig, SenderStats,
};
use lanesim::shim::net::{Connected, TokioTcp};
use lanesim::shim::rt::RuntimeChoice;
use tokio::runtime::Runtime;

/// A manager with one downed connection to pin controls to.
fn manager_with_downed_pin() -> (ConnectionManager, Arc<DistConnection>) {
    let manager = ConnectionManager::new(
        NodeName::from("local@bench"),
        Arc::new(TokioTcp),
        ManagerConfig::new(
            RuntimeChoice::current(),
            lanesim::distribution::Cookie::new("bench").unwrap(),
        ),
    )
    .unwrap();
    let (ours, theirs) = tokio::io::duplex(64);
    std::mem::forget(theirs);
    let (read, write) = tokio::io::split(ours);
    let pinned = manager.register(
        NodeName::from("peer@bench"),
        Connected {
            read: Box::new(read),
            write: Box::new(write),
            peer: "memory".into(),
            local: "memory".into(),
        },
    );
    pinned.mark_down(DownReason::ManualDisconnect);
    (manager, pinned)
}

/// Times `iters` calls of `call` in batches the lane can hold, letting the
/// drain (on `parked`) empty the lane between batches, outside the timing.
fn batched(
    iters: u64,
    parked: &Runtime,
    sender: &DistSender,
    drained: fn(&SenderStats) -> bool,
    call: &dyn Fn(),
) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = left.min(200);
        let started = Instant::now(); // wall-clock: ok (benchmark)
        for _ in 0..batch {
            call();
        }
        total += started.elapsed();
        left -= batch;
        parked.block_on(async {
            while !drained(&sender.stats()) {
                tokio::task::yield_now().await;
            }
        });
    }
    total
}

fn enqueue_cost(c: &mut Criterion) {
    let frame: Arc<[u8]> = Arc::from(lanesim_target::wire::encode(b"ctl", b"payload"));
    let node = NodeName::from("absent@bench");
    let mut group = c.benchmark_group("sender");
    group.measurement_time(Duration::from_secs(3));

    let parked = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let entered = parked.enter();
    let (manager, pinned) = manager_with_downed_pin();
    let sender = DistSender::new(manager, SenderConfig::new(RuntimeChoice::current())).unwrap();
    drop(entered);
    let enqueue = || {
        black_box(sender.enqueue(node.clone(), Arc::clone(&frame)));
    };
    let enqueue_control = || {
        let _ = black_box(sender.enqueue_control(ControlOutbound {
            connection: Arc::clone(&pinned),
            frame: Arc::clone(&frame),
        }));
    };
    group.bench_function("enqueue/uncontended", |b| {
        b.iter_custom(|iters| {
            batched(
                iters,
                &parked,
                &sender,
                |s| s.data_queued == s.data_no_connection,
                &enqueue,
            )
        });
    });
    group.bench_function("enqueue_control/uncontended", |b| {
        b.iter_custom(|iters| {
            batched(
                iters,
                &parked,
                &sender,
                |s| s.control_queued == s.control_skipped_down,
                &enqueue_control,
            )
        });
    });
    let stats = sender.stats();
    assert_eq!(
        stats.data_dropped_full + stats.control_overflow,
        0,
        "a batch overflowed: {stats:?}"
    );

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let entered = runtime.enter();
    let (manager, pinned) = manager_with_downed_pin();
    let busy = DistSender::new(
        manager,
        SenderConfig::new(RuntimeChoice::Dedicated {
            thread_name: "bench-drain".into(),
        }),
    )
    .unwrap();
    drop(entered);
    group.bench_function("enqueue/contended", |b| {
        b.iter(|| busy.enqueue(node.clone(), Arc::clone(&frame)));
    });
    group.bench_function("enqueue_control/contended", |b| {
        b.iter(|| {
            busy.enqueue_control(ControlOutbound {
                connection: Arc::clone(&pinned),
                frame: Arc::clone(&frame),
            })
        });
    });
    group.finish();
}

criterion_group!(benches, enqueue_cost);
criterion_main!(benches);
