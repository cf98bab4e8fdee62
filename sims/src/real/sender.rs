//! The sender world for real: the node target on its own runtime (as
//! production runs a sender), its connection layer and the peers on a real
//! multi-thread tokio runtime, real loopback TCP, the fault timeline made
//! for real (a crash closes the peer's listener and sockets, a bounce
//! re-binds its port, latency is the peer's own delay), its durations
//! multiplied by the scenario's time scale.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::RealClock;
use crate::coverage::{self, WorldProbe};
use crate::event::{Event, EventLog};
use crate::fault::{timeline, Action};
use crate::scenario::{FaultKind, SenderParams};
use crate::targets::Subject;
use crate::world::net::{PortMap, RealTcp};
use crate::world::peer::{peer_name, real_peer_main};
use crate::world::sender::{begin_fault, local_main, Clock, LocalNet, Shared};
use crate::world::{Stuck, WorldRun};

/// A real run: the world's log and coverage, and the wall time it took.
pub struct RealRun {
    /// What the run produced; `elapsed` is in the scenario's own units
    /// (wall time divided by the time scale).
    pub world: WorldRun,
    /// Wall time, start to `RunEnd`.
    pub wall: Duration,
    /// The worst wake-up lateness the run's runtime suffered, in wall time
    /// ([`super::Lateness`]).
    pub lateness: Duration,
}

/// Why the sender world cannot run `params` for real, if it cannot.
#[must_use]
pub fn real_refusal(params: &SenderParams) -> Option<String> {
    params
        .faults
        .iter()
        .any(|fault| fault.kind == FaultKind::Partition)
        .then(|| {
            "real mode cannot make a partition on loopback TCP: it would need packet \
             filtering (e.g. nftables, as root) to drop segments silently while both sockets \
             stay open, and it does none"
                .into()
        })
}

/// `params` with every duration the world acts on multiplied by `scale`:
/// gaps, write and connect timeouts, redial pause, shutdown time, fault
/// times and durations (and the tick and preemption sleeps, which real
/// mode does not use).
#[must_use]
pub fn scaled(params: &SenderParams, scale: f64) -> SenderParams {
    let by = |d: Duration| d.mul_f64(scale);
    let mut p = params.clone();
    p.gap = (by(p.gap.0), by(p.gap.1));
    p.write_timeout = by(p.write_timeout);
    p.connect_timeout = by(p.connect_timeout);
    p.redial_after = p.redial_after.map(by);
    p.tick = by(p.tick);
    p.shutdown_at = p.shutdown_at.map(by);
    p.preempt.sleep = (by(p.preempt.sleep.0), by(p.preempt.sleep.1));
    for fault in &mut p.faults {
        fault.at = by(fault.at);
        fault.lasting = by(fault.lasting);
    }
    p
}

/// The socket buffer size real mode asks for on both ends: half of
/// turmoil's segment credit in bytes each (the kernel doubles the request),
/// so a peer that stops reading parks the writer after about as many bytes
/// as in simulation.
fn real_buffer(p: &SenderParams) -> u32 {
    let credit = p.tcp_capacity.saturating_mul(p.mss) / 2;
    u32::try_from(credit.clamp(4 << 10, 4 << 20)).unwrap_or(4 << 20)
}

/// A peer's loopback listener on `port` (0: any), its accepted sockets
/// inheriting the buffer size asked for.
async fn bind_peer(port: u16, buffer: u32, mss: usize) -> std::io::Result<tokio::net::TcpListener> {
    let socket = RealTcp::socket(Some(buffer), mss)?;
    socket.set_reuseaddr(true)?;
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], port)))?;
    socket.listen(64)
}

/// Runs one seed of the sender world for real: the production sender on
/// its own runtime (as production runs it), its connection manager and the
/// peers on a real multi-thread tokio runtime, real loopback TCP, the
/// scenario's durations multiplied by `scale`, faults made for real (see
/// `docs/real-mode.md`). The log's times are wall time divided by `scale`.
/// Not deterministic: the seed fixes the parameters and the workload's
/// choices, real scheduling the rest.
///
/// # Panics
/// When no loopback port can be bound, or the testbed itself panics
/// (the runner reports a crash). `params` must not be refused by
/// [`real_refusal`].
#[must_use]
pub fn run_real(
    params: &SenderParams,
    scale: f64,
    seed: u64,
    budget: Duration,
    subject: &Subject,
) -> RealRun {
    let p = scaled(params, scale);
    // The scenario's preemption points answer as in simulation (their
    // sleeps scaled): real threads preempt for real too, but a race window
    // a few instructions wide is almost never hit without them.
    let probe = Arc::new(WorldProbe::new(seed, p.preempt));
    let installed = coverage::install(&probe);
    let on_worker = Arc::clone(&probe);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("lanesim-real")
        .enable_all()
        .on_thread_start(move || std::mem::forget(coverage::install(&on_worker)))
        .build()
        .expect("a real tokio runtime");
    // The sender runs on its own runtime, as production runs it: its
    // worker is watched for OS run-queue waits, not napped on.
    let lateness = super::Lateness::watch(&runtime, Some(Arc::clone(&probe)));
    let clock = RealClock::starting(scale);
    let shared = Shared::new(Clock::Real(clock), EventLog::default(), &p, &probe, seed);
    let buffer = real_buffer(&p);
    let stuck = runtime.block_on(drive_real(
        &shared,
        &p,
        seed,
        budget.mul_f64(scale),
        subject,
        buffer,
    ));
    let finished = stuck.is_none();
    shared.frozen.store(true, Ordering::Release);
    shared
        .log
        .push_timed(|| shared.clock.now(), "driver", Event::RunEnd { finished });
    let elapsed = shared.clock.now();
    let wall = clock.start.elapsed(); // wall-clock: ok (real mode)
    let lateness = lateness.worst();
    // A hook that passed the frozen check just before may have landed
    // after the end: the run ends at `RunEnd`.
    let world = WorldRun::ended(&shared.log, &probe, finished, elapsed, stuck);
    runtime.shutdown_timeout(Duration::from_secs(1));
    drop(installed);
    RealRun {
        world,
        wall,
        lateness,
    }
}

/// Real mode's driver: binds the peers, starts the local node, applies the
/// fault timeline at its (scaled) times; `None` when the local node
/// finished within `budget` (wall time), else where it was then.
async fn drive_real(
    shared: &Arc<Shared>,
    p: &SenderParams,
    seed: u64,
    budget: Duration,
    subject: &Subject,
    buffer: u32,
) -> Option<Stuck> {
    let begun = tokio::time::Instant::now();
    let ports: PortMap = Arc::default();
    let mut peers = Vec::new();
    for index in 0..p.peers {
        let listener = bind_peer(0, buffer, p.mss as usize)
            .await
            .expect("a loopback port");
        let port = listener.local_addr().expect("a bound port").port();
        ports
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(peer_name(index), port);
        peers.push(Some(tokio::spawn(real_peer_main(
            Arc::clone(shared),
            index,
            listener,
        ))));
    }
    let (disconnect_tx, disconnect_rx) = mpsc::unbounded_channel();
    let main = local_main(
        Arc::clone(shared),
        p.clone(),
        seed,
        subject.clone(),
        disconnect_rx,
        LocalNet::Real {
            ports: Arc::clone(&ports),
            buffer: Some(buffer),
        },
    );
    // turmoil's error type is not `Send`: the task's output carries text.
    let local = tokio::spawn(async move { main.await.map_err(|error| error.to_string()) });
    let driver = async {
        for (at, peer, action) in timeline(&p.faults) {
            tokio::time::sleep_until(begun + at).await;
            let control = &shared.peers[peer as usize];
            let now = || shared.clock.now();
            match begin_fault(shared, &disconnect_tx, peer, action, now()) {
                Some(Action::Crash) => {
                    // The listener and every accepted socket close.
                    if let Some(task) = peers[peer as usize].take() {
                        task.abort();
                        let _ = task.await;
                    }
                }
                Some(Action::Bounce) => {
                    control.reset();
                    let port = ports
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .get(&peer_name(peer))
                        .copied()
                        .unwrap_or_default();
                    let mut listener = bind_peer(port, buffer, p.mss as usize).await;
                    for _ in 0..100 {
                        if listener.is_ok() {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(2)).await;
                        listener = bind_peer(port, buffer, p.mss as usize).await;
                    }
                    let listener = listener.expect("re-bind a bounced peer's port");
                    peers[peer as usize] = Some(tokio::spawn(real_peer_main(
                        Arc::clone(shared),
                        peer,
                        listener,
                    )));
                }
                Some(Action::Latency(latency)) => {
                    *control
                        .latency
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(latency);
                }
                Some(Action::Partition | Action::Repair) => {
                    unreachable!("real mode refuses partitions before the run")
                }
                Some(
                    Action::Wedge
                    | Action::Kill
                    | Action::Slow(_)
                    | Action::Disconnect
                    | Action::Hostile(_),
                )
                | None => {}
            }
            control.poke.notify_waiters();
        }
        std::future::pending::<()>().await;
    };
    tokio::select! {
        biased;
        joined = local => match joined {
            Ok(Ok(())) => None,
            Ok(Err(error)) => panic!("the local node failed: {error}"),
            Err(error) => match error.try_into_panic() {
                Ok(payload) => std::panic::resume_unwind(payload),
                Err(error) => panic!("the local node was cancelled: {error}"),
            },
        },
        // Read before the local node's task is let go of (it runs on,
        // detached, until the runtime shuts down).
        () = tokio::time::sleep(budget) => Some(shared.stuck()),
        () = driver => unreachable!("the driver never ends"),
    }
}
