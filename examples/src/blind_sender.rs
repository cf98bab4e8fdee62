//! A sender written blind against lanesim's public API and the shim
//! (`lanesim_target::shim`), run over lanesim's connection layer
//! ([`BlindSenderTargets`]).
//!
//! Design: one *lane* per destination node, created on the first frame for
//! that node and kept until shutdown. A lane is a small piece of state
//! behind a (sync) mutex: a FIFO of data frames for the node, a FIFO of
//! controls pinned to one of its generations, and a `closed` flag. Each lane
//! has one drain task that pops a frame under the lock, lets go of it, and
//! only then writes (controls before data). So a wedged peer stalls only
//! its own lane, and no lock is ever held across an await.
//!
//! - data: looked up per frame with `get_connection`; none is unroutable.
//! - controls: written to the generation they were pinned to, skipped if
//!   it is down by their turn; a full control lane takes the pinned
//!   generation down (`ControlOverflow`) before `Overflow` is returned.
//! - every write runs under `write_timeout`; a missed deadline takes the
//!   generation down (`WriteTimeout`) before the write is dropped.
//! - shutdown closes every lane, discards what is queued (controls' pinned
//!   generations taken down, `ManualDisconnect`) and wakes the drains; a
//!   drain in the middle of a write abandons it.

use std::collections::{HashMap, VecDeque};
use std::pin::pin;

use lanesim_target::layer::{
    ConnectionLayer, LayerConn, Sender, SenderCapabilities, SenderSetup, SenderTarget,
};
use lanesim_target::node::{
    ControlOutcome, DataOutcome, DownReason, Generation, NodeFixed, NodeReports, Runtime,
    SenderLane, SenderStats, WriteOutcome,
};
use lanesim_target::probe::Sites;
use lanesim_target::shim::sync::{Arc, AtomicU64, Mutex, Notify, Ordering};
use lanesim_target::shim::task::Handle;
use lanesim_target::shim::time::{self, Duration};

/// The blind sender alone, run over lanesim's connection layer as the node.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlindSenderTargets;

impl lanesim_target::Targets for BlindSenderTargets {
    fn name(&self) -> &str {
        "blind-sender"
    }

    fn sender(&self) -> Option<&dyn SenderTarget> {
        Some(&BlindSenderTarget)
    }
}

/// The sender target.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlindSenderTarget;

impl SenderTarget for BlindSenderTarget {
    fn capabilities(&self) -> SenderCapabilities {
        SenderCapabilities {
            drain: true,
            stats: true,
            fixed: NodeFixed::default(),
            hazards: &[],
            sites: Sites::default(),
        }
    }

    fn start(&self, setup: SenderSetup) -> Result<Box<dyn Sender>, String> {
        let spawner = match setup.runtime {
            Runtime::World(handle) => handle,
            // Everything runs on the world's runtime; the drain does not
            // need a runtime of its own.
            Runtime::Own { world, .. } => world,
        };
        let shared = Arc::new(Shared {
            layer: setup.layer,
            reports: setup.reports,
            write_timeout: setup.write_timeout,
            data_capacity: setup.data_capacity,
            control_capacity: setup.control_capacity,
            spawner,
            peers: Mutex::new(Peers::default()),
            stats: Counters::default(),
        });
        Ok(Box::new(BlindSender { shared }))
    }
}

/// The started sender. Dropping it shuts it down.
pub struct BlindSender {
    shared: Arc<Shared>,
}

struct Shared {
    layer: Arc<dyn ConnectionLayer>,
    reports: NodeReports,
    write_timeout: Duration,
    data_capacity: usize,
    control_capacity: usize,
    spawner: Handle,
    peers: Mutex<Peers>,
    stats: Counters,
}

#[derive(Default)]
struct Peers {
    closed: bool,
    lanes: HashMap<String, Arc<Lane>>,
}

/// One destination node's queues and the drain's wake-up.
struct Lane {
    node: String,
    state: Mutex<LaneState>,
    /// Woken on every enqueue and at shutdown.
    wake: Notify,
}

#[derive(Default)]
struct LaneState {
    closed: bool,
    data: VecDeque<Arc<[u8]>>,
    controls: VecDeque<(LayerConn, Arc<[u8]>)>,
}

enum Job {
    Data(Arc<[u8]>),
    Control(LayerConn, Arc<[u8]>),
}

/// How the drain's write of one frame ended.
enum Fate {
    Done(WriteOutcome),
    Abandoned,
}

#[derive(Default)]
struct Counters {
    data_queued: AtomicU64,
    data_written: AtomicU64,
    data_failed: AtomicU64,
    data_no_connection: AtomicU64,
    data_discarded: AtomicU64,
    control_queued: AtomicU64,
    control_written: AtomicU64,
    control_failed: AtomicU64,
    control_skipped: AtomicU64,
    control_discarded: AtomicU64,
}

fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::AcqRel);
}

impl Counters {
    fn snapshot(&self) -> SenderStats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Acquire);
        SenderStats {
            data_queued: get(&self.data_queued),
            data_written: get(&self.data_written),
            data_failed: get(&self.data_failed),
            data_no_connection: get(&self.data_no_connection),
            data_discarded: get(&self.data_discarded),
            control_queued: get(&self.control_queued),
            control_written: get(&self.control_written),
            control_failed: get(&self.control_failed),
            control_skipped: get(&self.control_skipped),
            control_discarded: get(&self.control_discarded),
        }
    }
}

fn generation(conn: &LayerConn) -> Generation<'_> {
    Generation {
        node: conn.node(),
        generation: conn.generation(),
    }
}

impl Lane {
    fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// The next frame to write (controls first), or `None` if there is
    /// none; `Err` once the lane is closed.
    fn next_job(&self) -> Result<Option<Job>, ()> {
        let mut state = self.state.lock();
        if state.closed {
            return Err(());
        }
        if let Some((pinned, frame)) = state.controls.pop_front() {
            return Ok(Some(Job::Control(pinned, frame)));
        }
        Ok(state.data.pop_front().map(Job::Data))
    }
}

impl Shared {
    /// `node`'s lane, created (and its drain spawned) on first use; `None`
    /// once the sender is shut down.
    fn lane(self: &Arc<Self>, node: &str) -> Option<Arc<Lane>> {
        let (lane, fresh) = {
            let mut peers = self.peers.lock();
            if peers.closed {
                return None;
            }
            match peers.lanes.get(node) {
                Some(lane) => (Arc::clone(lane), false),
                None => {
                    let lane = Arc::new(Lane {
                        node: node.to_owned(),
                        state: Mutex::new(LaneState::default()),
                        wake: Notify::new(),
                    });
                    peers.lanes.insert(node.to_owned(), Arc::clone(&lane));
                    (lane, true)
                }
            }
        };
        if fresh {
            let _detached = self
                .spawner
                .spawn(drain(Arc::clone(self), Arc::clone(&lane)));
        }
        Some(lane)
    }

    /// Writes `frame` to `conn` under the write deadline, reporting the
    /// start and the end. Gives up (abandons) if the lane is closed
    /// meanwhile.
    async fn write(&self, lane: &Lane, conn: &LayerConn, kind: SenderLane, frame: &[u8]) -> Fate {
        self.reports.write_started(generation(conn), kind, frame);
        let mut write = conn.write_raw(frame);
        let ended = {
            let mut timed = pin!(time::timeout(self.write_timeout, &mut write));
            loop {
                lanesim_target::shim::select! {
                    result = &mut timed => break Some(result),
                    () = lane.wake.notified() => {
                        // A new frame, or shutdown: only the latter stops us.
                        if lane.is_closed() {
                            break None;
                        }
                    }
                }
            }
        };
        let fate = match ended {
            Some(Ok(Ok(()))) => Fate::Done(WriteOutcome::Written),
            Some(Ok(Err(_))) => {
                // The layer has taken it down already; first reason wins.
                conn.mark_down(DownReason::WriteError);
                Fate::Done(WriteOutcome::Failed)
            }
            Some(Err(_elapsed)) => {
                // Down before the write is dropped, so the reason is ours.
                conn.mark_down(DownReason::WriteTimeout);
                Fate::Done(WriteOutcome::TimedOut)
            }
            None => {
                // The frame may be half on the wire: nothing more may go
                // on this stream.
                conn.mark_down(DownReason::ManualDisconnect);
                Fate::Abandoned
            }
        };
        drop(write);
        match fate {
            Fate::Done(outcome) => {
                self.reports
                    .write_finished(generation(conn), kind, frame, outcome);
                let counter = match (kind, outcome) {
                    (SenderLane::Data, WriteOutcome::Written) => &self.stats.data_written,
                    (SenderLane::Data, _) => &self.stats.data_failed,
                    (SenderLane::Control, WriteOutcome::Written) => &self.stats.control_written,
                    (SenderLane::Control, _) => &self.stats.control_failed,
                };
                bump(counter);
            }
            Fate::Abandoned => {
                self.reports.write_abandoned(generation(conn), kind, frame);
                bump(match kind {
                    SenderLane::Data => &self.stats.data_discarded,
                    SenderLane::Control => &self.stats.control_discarded,
                });
            }
        }
        fate
    }

    fn shutdown(&self) {
        let lanes: Vec<Arc<Lane>> = {
            let mut peers = self.peers.lock();
            if peers.closed {
                return;
            }
            peers.closed = true;
            peers.lanes.drain().map(|(_, lane)| lane).collect()
        };
        for lane in lanes {
            let (data, controls) = {
                let mut state = lane.state.lock();
                state.closed = true;
                (
                    std::mem::take(&mut state.data),
                    std::mem::take(&mut state.controls),
                )
            };
            lane.wake.notify_one();
            for (pinned, frame) in controls {
                pinned.mark_down(DownReason::ManualDisconnect);
                self.reports.control_discarded(generation(&pinned), &frame);
                bump(&self.stats.control_discarded);
            }
            for frame in data {
                self.reports.data_discarded(&lane.node, &frame);
                bump(&self.stats.data_discarded);
            }
        }
    }
}

/// A lane's drain: one frame at a time, until the lane is closed.
async fn drain(shared: Arc<Shared>, lane: Arc<Lane>) {
    loop {
        let job = match lane.next_job() {
            Err(()) => return,
            Ok(None) => {
                lane.wake.notified().await;
                continue;
            }
            Ok(Some(job)) => job,
        };
        let fate = match job {
            Job::Control(pinned, frame) => {
                if pinned.is_down() {
                    shared.reports.control_skipped(generation(&pinned), &frame);
                    bump(&shared.stats.control_skipped);
                    continue;
                }
                shared
                    .write(&lane, &pinned, SenderLane::Control, &frame)
                    .await
            }
            Job::Data(frame) => match shared.layer.get_connection(&lane.node) {
                None => {
                    shared.reports.data_unroutable(&lane.node, &frame);
                    bump(&shared.stats.data_no_connection);
                    continue;
                }
                Some(conn) => shared.write(&lane, &conn, SenderLane::Data, &frame).await,
            },
        };
        if let Fate::Abandoned = fate {
            return;
        }
    }
}

impl Sender for BlindSender {
    fn enqueue(&self, node: &str, frame: Arc<[u8]>) -> DataOutcome {
        let Some(lane) = self.shared.lane(node) else {
            return DataOutcome::DroppedClosed;
        };
        {
            let mut state = lane.state.lock();
            if state.closed {
                return DataOutcome::DroppedClosed;
            }
            if state.data.len() >= self.shared.data_capacity {
                return DataOutcome::DroppedFull;
            }
            state.data.push_back(frame);
            bump(&self.shared.stats.data_queued);
        }
        lane.wake.notify_one();
        DataOutcome::Queued
    }

    fn enqueue_control(&self, pinned: &LayerConn, frame: Arc<[u8]>) -> ControlOutcome {
        let Some(lane) = self.shared.lane(pinned.node()) else {
            return ControlOutcome::Closed;
        };
        let full = {
            let mut state = lane.state.lock();
            if state.closed {
                return ControlOutcome::Closed;
            }
            let full = state.controls.len() >= self.shared.control_capacity;
            if !full {
                state.controls.push_back((Arc::clone(pinned), frame));
                bump(&self.shared.stats.control_queued);
            }
            full
        };
        if full {
            // Send-or-down: the control is refused, so its generation goes.
            pinned.mark_down(DownReason::ControlOverflow);
            return ControlOutcome::Overflow;
        }
        lane.wake.notify_one();
        ControlOutcome::Queued
    }

    fn shutdown(&self) {
        self.shared.shutdown();
    }

    fn stats(&self) -> Option<SenderStats> {
        Some(self.shared.stats.snapshot())
    }
}

impl Drop for BlindSender {
    fn drop(&mut self) {
        self.shared.shutdown();
    }
}
