//! M9, bounded spending: no node pays for others' spending, and the budget
//! and the frame deadline bound what a spender costs. Four clauses, each
//! over records the world makes: a generation between two nodes is never
//! downed `OverBudget` or `FrameTimeout` (nodes write whole frames of a
//! few bytes); what a node holds of unfinished frames, measured at its read
//! halves (`MeshHeld`), stays within its budget but for an eviction's
//! instant; no stream is refused for the budget while the node holds no
//! more than half of it (`MeshBudgetDown`); a trickled frame is cut within
//! the deadline's bound of its header and reported `FrameTimeout`
//! (`MeshTrickle`, `MeshIntruderDown`).

use std::collections::BTreeMap;
use std::time::Duration;

use lanesim_target::node::DownReason;

use super::model::Model;
use crate::check::{CheckContext, Collector};
use crate::event::{Event, Intruder, MeshFaultApplied, Record};
use crate::scenario::{mesh_trickle_bound, Contract};

pub(super) fn m9(
    out: &mut Collector<'_>,
    model: &Model,
    records: &[Record],
    context: &CheckContext,
) {
    // A deadline shorter than the silence clock can be outrun by a frame
    // an honest node wrote whole: held in a partition, dropped by a
    // half-open link, or read slowly by a wedged or slowed reader. Such a
    // run holds FrameTimeout downs to nothing.
    let deadline_below_tick = match (context.frame_timeout, context.heartbeat) {
        (Some(deadline), Some(tick)) => deadline < tick,
        _ => false,
    };
    let stalled = records.iter().any(|r| {
        matches!(
            r.event,
            Event::MeshFault {
                fault: MeshFaultApplied::Partition { .. }
                    | MeshFaultApplied::HalfOpen { .. }
                    | MeshFaultApplied::Wedge { .. }
                    | MeshFaultApplied::Slow { .. }
            }
        )
    });
    for (index, record) in records.iter().enumerate() {
        let Event::MeshDown {
            node,
            peer,
            generation,
            reason,
        } = record.event
        else {
            continue;
        };
        // Hosts that are not nodes (spenders, tricklers, the prober) are
        // named u64::MAX: only they may be held to the budget and the
        // deadline. An honest node writes each frame whole and at once, so
        // its frames never wait on the budget, and never take longer than
        // the deadline after their header: a stalled stream is the silence
        // clock's (a tick, M5), well before the deadline (two ticks).
        let why = match reason {
            DownReason::OverBudget => {
                "for the frame budget (OverBudget): an honest node's small frames were refused \
                 for what others held"
            }
            DownReason::FrameTimeout if !(deadline_below_tick && stalled) => {
                "for the frame deadline (FrameTimeout): an honest node's frames arrive whole, \
                 so the deadline ran while no frame was being read (the wait for a header is \
                 not a frame's)"
            }
            _ => continue,
        };
        if peer != u64::MAX {
            out.violate(
                Contract::M9,
                format!("node{node} downed its generation {generation} to node{peer} {why}"),
                &[index],
            );
        }
    }
    // The budget's and the deadline's clauses judge a capability the
    // target may lack: without it they are not decided (targets::decide
    // says so), pinned by `m9_judges_no_budget_a_node_declares_it_lacks`.
    if context.reported.frame_budget {
        held_over_budget(out, records, context);
        refused_with_room(out, records, context);
    }
    let Some(deadline) = context
        .frame_timeout
        .filter(|_| context.reported.frame_deadline)
    else {
        return;
    };
    let bound = mesh_trickle_bound(deadline, context.tick);
    // A crash tears the node's streams down with its host: what the
    // trickler saw of them then is not something the node did.
    let crashed = |trickle: &super::model::Trickle| {
        let end = trickle.began + trickle.held;
        model
            .crashed
            .iter()
            .any(|(crashed, &t)| crashed.node == trickle.node && t >= trickle.began && t <= end)
    };
    // A trickle cut in time was cut by the deadline, and the node says so:
    // its down of the trickler is `FrameTimeout`, not a read failure. The
    // node may close the stream before it reports the down (the trickler
    // saw the close a tick before the report, hunt --world mesh --seed 1
    // case 6): the report may come up to the bound's slack after.
    let slack = bound.saturating_sub(deadline);
    for trickle in model
        .trickles
        .iter()
        .filter(|t| t.closed && t.held <= bound)
    {
        let end = trickle.began + trickle.held + slack;
        let said = records.iter().any(|r| {
            r.at >= trickle.began
                && r.at <= end
                && r.event
                    == Event::MeshIntruderDown {
                        node: trickle.node,
                        intruder: Intruder::Trickler,
                        reason: DownReason::FrameTimeout,
                    }
        });
        if !said && !crashed(trickle) {
            out.violate(
                Contract::M9,
                format!(
                    "node{} closed the trickler's stream {} {:.3}s after its header, within the \
                     frame deadline's bound, but did not report it down FrameTimeout",
                    trickle.node,
                    trickle.socket,
                    trickle.held.as_secs_f64()
                ),
                &[trickle.record],
            );
        }
    }
    for trickle in model.trickles.iter().filter(|t| t.held > bound) {
        if crashed(trickle) {
            continue;
        }
        let how = if trickle.closed {
            "before the node closed it"
        } else {
            "and the node never closed it (the trickler gave up)"
        };
        out.violate(
            Contract::M9,
            format!(
                "node{} let a frame trickle in on stream {} for {:.3}s after its header ({} \
                 bytes, one per quarter tick) {how}: past the frame deadline's bound of {:.3}s",
                trickle.node,
                trickle.socket,
                trickle.held.as_secs_f64(),
                trickle.sent,
                bound.as_secs_f64()
            ),
            &[trickle.record],
        );
    }
}

/// How long a node may hold more of unfinished frames than its budget:
/// the instant an eviction takes (the evicted reader frees its bytes when
/// its task next runs) and four simulation ticks.
fn held_allowance(context: &CheckContext) -> Duration {
    context.tick * 4
}

/// M9's memory bound: a node never holds more bytes of frames it has not
/// finished reading than its frame budget (`MeshHeld`, measured at its
/// read halves), beyond an eviction's instant.
fn held_over_budget(out: &mut Collector<'_>, records: &[Record], context: &CheckContext) {
    let allowance = held_allowance(context);
    let mut over: BTreeMap<u64, (usize, Duration, u64)> = BTreeMap::new();
    let breach = |out: &mut Collector<'_>,
                  node,
                  since: (usize, Duration, u64),
                  to,
                  peak,
                  end: Option<usize>| {
        let (record, at, _) = since;
        let lasted: Duration = to - at;
        if lasted > allowance {
            let until = if end.is_some() {
                ""
            } else {
                ", to the end of the run"
            };
            out.violate(
                Contract::M9,
                format!(
                    "node{node} held {peak} bytes of frames it had not finished reading, over \
                     its frame budget, for {:.3}s{until}: the budget did not bound what \
                     spenders made it hold",
                    lasted.as_secs_f64()
                ),
                &[Some(record), end]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>(),
            );
        }
    };
    let mut end = Duration::ZERO;
    for (index, record) in records.iter().enumerate() {
        end = end.max(record.at);
        match record.event {
            Event::MeshHeld {
                node,
                over: true,
                bytes,
            } => {
                over.entry(node).or_insert((index, record.at, bytes));
            }
            Event::MeshHeld {
                node,
                over: false,
                bytes,
            } => {
                if let Some(since) = over.remove(&node) {
                    breach(out, node, since, record.at, bytes, Some(index));
                }
            }
            // A crash frees what the node held with its host (its next
            // incarnation reports its own holdings).
            Event::MeshFault {
                fault: MeshFaultApplied::Crash { node },
            } => {
                if let Some(since) = over.remove(&node) {
                    breach(out, node, since, record.at, since.2, Some(index));
                }
            }
            _ => {}
        }
    }
    for (node, since) in over {
        breach(out, node, since, end, since.2, None);
    }
}

/// M9's other side of the budget: a node refuses or evicts a reader for
/// its budget only when the budget is short of room. Readers charge a chunk
/// before they read it, so a budget may be full while a little less is
/// held; but an `OverBudget` down while the node held no more than half its
/// budget refused what fitted: the budget's count is not what the node
/// holds (a charge never given back, or given back twice).
fn refused_with_room(out: &mut Collector<'_>, records: &[Record], context: &CheckContext) {
    let Some(budget) = context.frame_budget else {
        return;
    };
    for (index, record) in records.iter().enumerate() {
        if let Event::MeshBudgetDown { node, held } = record.event {
            if held <= budget / 2 {
                out.violate(
                    Contract::M9,
                    format!(
                        "node{node} took a stream down for its frame budget while it held \
                         {held} bytes of unfinished frames, no more than half its {budget}-byte \
                         budget: the budget counted bytes nobody held"
                    ),
                    &[index],
                );
            }
        }
    }
}
