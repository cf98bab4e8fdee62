//! The sender's queues: per destination node a data queue and a control
//! queue, drained by one task per node.
//!
//! Model. `enqueue` and `enqueue_control` never wait: they push under a
//! short lock or refuse (a full data queue drops the frame; a full control
//! queue takes the control's pinned generation down, `ControlOverflow`).
//! A control carries the generation it was enqueued for and is written to
//! that generation only; data goes to whatever generation is live when the
//! drain takes it. The drain writes controls before data, each queue in
//! FIFO order, one frame at a time, through the generation's write path,
//! and reports each frame's fate. Shutdown closes every queue, discards
//! what is queued (taking the discarded controls' generations down) and
//! refuses later enqueues.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use lanesim_target::node::{
    Conn, ControlOutcome, DataOutcome, DownReason, SenderLane, WriteOutcome,
};

use super::connection::{Link, WriteError};
use super::shared::Shared;
use super::stats::bump;

#[derive(Default)]
struct Pending {
    data: VecDeque<Arc<[u8]>>,
    control: VecDeque<(Arc<Link>, Arc<[u8]>)>,
    closed: bool,
}

/// One destination node's queues.
struct NodeQueue {
    node: String,
    pending: Mutex<Pending>,
    wake: tokio::sync::Notify,
}

/// Every destination's queues.
#[derive(Default)]
pub(super) struct Queues {
    nodes: Mutex<BTreeMap<String, Arc<NodeQueue>>>,
}

/// What the drain took next.
enum Job {
    Control(Arc<Link>, Arc<[u8]>),
    Data(Arc<[u8]>),
}

/// `node`'s queues, made (and their drain started) on first use; `None`
/// once the sender is shut down.
fn queue_for(shared: &Arc<Shared>, node: &str) -> Option<Arc<NodeQueue>> {
    let mut nodes = shared.queues.nodes.lock().unwrap();
    if shared.is_closed() {
        return None;
    }
    if let Some(queue) = nodes.get(node) {
        return Some(Arc::clone(queue));
    }
    let queue = Arc::new(NodeQueue {
        node: node.to_owned(),
        pending: Mutex::new(Pending::default()),
        wake: tokio::sync::Notify::new(),
    });
    nodes.insert(node.to_owned(), Arc::clone(&queue));
    drop(nodes);
    shared.spawn(drain(Arc::clone(shared), Arc::clone(&queue)));
    Some(queue)
}

/// Queues a data frame for `node`.
pub(super) fn enqueue(shared: &Arc<Shared>, node: &str, frame: Arc<[u8]>) -> DataOutcome {
    let Some(queue) = queue_for(shared, node) else {
        return DataOutcome::DroppedClosed;
    };
    let mut pending = queue.pending.lock().unwrap();
    if pending.closed {
        return DataOutcome::DroppedClosed;
    }
    if pending.data.len() >= shared.data_capacity {
        return DataOutcome::DroppedFull;
    }
    pending.data.push_back(frame);
    bump(&shared.stats.data_queued);
    drop(pending);
    queue.wake.notify_one();
    DataOutcome::Queued
}

/// Queues a control pinned to `pinned`.
pub(super) fn enqueue_control(
    shared: &Arc<Shared>,
    pinned: &Conn,
    frame: Arc<[u8]>,
) -> ControlOutcome {
    let Some(link) = pinned.as_any().downcast_ref::<Link>().and_then(Link::arc) else {
        return ControlOutcome::Closed;
    };
    let Some(queue) = queue_for(shared, pinned.node()) else {
        return ControlOutcome::Closed;
    };
    let mut pending = queue.pending.lock().unwrap();
    if pending.closed {
        return ControlOutcome::Closed;
    }
    if pending.control.len() >= shared.control_capacity {
        drop(pending);
        link.mark_down(DownReason::ControlOverflow);
        return ControlOutcome::Overflow;
    }
    pending.control.push_back((link, frame));
    bump(&shared.stats.control_queued);
    drop(pending);
    queue.wake.notify_one();
    ControlOutcome::Queued
}

/// Shuts the sender down: every queue closed and emptied.
pub(super) fn shutdown(shared: &Arc<Shared>) {
    let queues: Vec<Arc<NodeQueue>> = {
        let nodes = shared.queues.nodes.lock().unwrap();
        shared
            .closed
            .store(true, std::sync::atomic::Ordering::Release);
        nodes.values().cloned().collect()
    };
    for queue in queues {
        let (data, control) = {
            let mut pending = queue.pending.lock().unwrap();
            pending.closed = true;
            (
                std::mem::take(&mut pending.data),
                std::mem::take(&mut pending.control),
            )
        };
        queue.wake.notify_one();
        for frame in data {
            shared.reports.data_discarded(&queue.node, &frame);
            bump(&shared.stats.data_discarded);
        }
        for (link, frame) in control {
            shared.reports.control_discarded(link.id(), &frame);
            bump(&shared.stats.control_discarded);
            link.mark_down(DownReason::ManualDisconnect);
        }
    }
}

/// The next job, waiting for one; `None` once the queue is closed.
async fn next(queue: &NodeQueue) -> Option<Job> {
    loop {
        {
            let mut pending = queue.pending.lock().unwrap();
            if pending.closed {
                return None;
            }
            if let Some((link, frame)) = pending.control.pop_front() {
                return Some(Job::Control(link, frame));
            }
            if let Some(frame) = pending.data.pop_front() {
                return Some(Job::Data(frame));
            }
        }
        queue.wake.notified().await;
    }
}

/// Drains `queue` until the sender is shut down.
async fn drain(shared: Arc<Shared>, queue: Arc<NodeQueue>) {
    let reports = &shared.reports;
    let stats = &shared.stats;
    while let Some(job) = next(&queue).await {
        match job {
            Job::Control(link, frame) => {
                let lane = SenderLane::Control;
                let started = || reports.write_started(link.id(), lane, &frame);
                match link.write_frame(&frame, started).await {
                    Ok(()) => {
                        reports.write_finished(link.id(), lane, &frame, WriteOutcome::Written);
                        bump(&stats.control_written);
                    }
                    Err(WriteError::Down) => {
                        reports.control_skipped(link.id(), &frame);
                        bump(&stats.control_skipped);
                    }
                    Err(failed) => {
                        reports.write_finished(link.id(), lane, &frame, outcome(failed));
                        bump(&stats.control_failed);
                    }
                }
            }
            Job::Data(frame) => {
                let lane = SenderLane::Data;
                let Some(link) = shared.table.live(&queue.node) else {
                    reports.data_unroutable(&queue.node, &frame);
                    bump(&stats.data_no_connection);
                    continue;
                };
                let started = || reports.write_started(link.id(), lane, &frame);
                match link.write_frame(&frame, started).await {
                    Ok(()) => {
                        reports.write_finished(link.id(), lane, &frame, WriteOutcome::Written);
                        bump(&stats.data_written);
                    }
                    Err(WriteError::Down) => {
                        reports.data_unroutable(&queue.node, &frame);
                        bump(&stats.data_no_connection);
                    }
                    Err(failed) => {
                        reports.write_finished(link.id(), lane, &frame, outcome(failed));
                        bump(&stats.data_failed);
                    }
                }
            }
        }
    }
}

fn outcome(error: WriteError) -> WriteOutcome {
    match error {
        WriteError::TimedOut => WriteOutcome::TimedOut,
        WriteError::Down | WriteError::Failed => WriteOutcome::Failed,
    }
}
