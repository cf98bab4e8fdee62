//! S2: the drain's time. One replay follows the write under way and the
//! frames queued behind it: no write holds the drain past the deadline
//! (+ slack), a write that hits the deadline has taken its generation down
//! (as `WriteTimeout`) by the time it returns, and the drain never sits
//! idle with frames queued. A failed write that left its generation up is
//! seen by the same replay and reported here too (as S3).

use std::collections::BTreeMap;
use std::time::Duration;

use lanesim_target::node::DownReason;

use super::model::{DownCall, GenId, Model};
use crate::check::{CheckContext, Collector};
use crate::event::{ControlOutcome, DataOutcome, Event, Lane, Written};
use crate::scenario::Contract;

/// What a write may take past its deadline: the simulation's ticks (a
/// deadline is seen at the tick after it) and tokio's timer grain. S2's
/// slack on every write, and S9's on each write a faulty peer may hold the
/// drain for.
pub(super) fn write_slack(context: &CheckContext) -> Duration {
    context.tick * 3 + Duration::from_millis(5)
}

/// What picking the next frame may take: [`write_slack`] and the two
/// preemption points between taking a frame and writing it
/// (`drain.picked`, `drain.before_write`). Held time is added by the
/// caller, over its own window.
pub(super) fn pick_slack(context: &CheckContext) -> Duration {
    write_slack(context) + context.preempt_max * 2
}

pub(super) fn s2(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let Some(deadline) = context.write_timeout else {
        return;
    };
    let slack = write_slack(context);
    // The drain picks the next frame within two preemption points, and
    // whatever time the scheduling explorer held tasks meanwhile.
    let pick_slack =
        |from: Duration, to: Duration| pick_slack(context) + model.holds.within(from, to);
    let records = out.records();
    let mut open: BTreeMap<(u64, Lane, u64), usize> = BTreeMap::new();
    // Signed: a target may settle a frame's fate inside `enqueue` (a frame
    // with no connection, reported unroutable at once), and then the fate
    // is logged before the enqueue it belongs to.
    let mut queued: i64 = 0;
    let mut idle_since: Option<usize> = None;
    let mut stalled_reported = false;
    for (index, record) in records.iter().enumerate() {
        // Drain progress: idle with work queued for longer than it takes to
        // pick a frame.
        if let Some(since) = idle_since {
            let waited = record.at.saturating_sub(records[since].at);
            if waited > pick_slack(records[since].at, record.at)
                && !stalled_reported
                && model.shutdown.is_none_or(|s| s > index)
            {
                stalled_reported = true;
                out.violate(
                    Contract::S2,
                    format!("the drain sat idle for {waited:?} with {queued} frame(s) queued"),
                    &[since, index],
                );
            }
        }
        let mut picked = false;
        match record.event {
            Event::DataEnqueued {
                outcome: DataOutcome::Queued,
                ..
            }
            | Event::ControlEnqueued {
                outcome: ControlOutcome::Queued,
                ..
            } => queued += 1,
            Event::WriteStarted {
                peer, lane, seq, ..
            } => {
                open.insert((peer, lane, seq), index);
                queued -= 1;
                picked = true;
            }
            Event::ControlSkipped { .. }
            | Event::DataUnroutable { .. }
            | Event::ControlDiscarded { .. }
            | Event::DataDiscarded { .. } => {
                queued -= 1;
                picked = true;
            }
            Event::WriteFinished {
                peer,
                generation,
                lane,
                seq,
                outcome,
            } => {
                picked = true;
                let open_started = open.remove(&(peer, lane, seq));
                if let Some(started) = open_started {
                    let took = record.at.saturating_sub(records[started].at);
                    if took > deadline + slack + model.holds.within(records[started].at, record.at)
                    {
                        out.violate(
                            Contract::S2,
                            format!("a write to peer{peer}/{generation} held the drain for {took:?} (deadline {deadline:?})"),
                            &[started, index],
                        );
                    }
                }
                let gen = GenId { peer, generation };
                let first_down = model.downs.get(&gen).and_then(|d| d.first()).copied();
                match outcome {
                    Written::TimedOut if first_down.is_none_or(|down| down.record > index) => {
                        out.violate(
                            Contract::S2,
                            format!("a write to peer{peer}/{generation} timed out but the generation was not down when it returned"),
                            &[open_started.unwrap_or(index), index],
                        );
                    }
                    // Down by this write's deadline, unless something else
                    // downed it while the write was under way.
                    Written::TimedOut => {
                        let started = open_started.unwrap_or(index);
                        if let Some(DownCall {
                            record: down,
                            reason,
                            ..
                        }) = first_down.filter(|down| {
                            down.record > started && down.reason != DownReason::WriteTimeout
                        }) {
                            let into = records[down].at.saturating_sub(records[started].at);
                            out.violate(
                                Contract::S2,
                                format!("a write to peer{peer}/{generation} ran on to its deadline after its generation went down as {reason:?} {into:?} into the write: a write is abandoned when its generation goes down, and only a write's own deadline takes it down WriteTimeout"),
                                &[started, down, index],
                            );
                        }
                    }
                    // For real, another thread's down (the flag a refused
                    // or abandoned write saw) may be logged just after the
                    // write's end: excused within the race window (zero in
                    // simulation; `real_s3_excuses_only_a_down_racing_the_failed_write`).
                    // A write its generation's deadline ended (the down
                    // came while it was under way, as `WriteTimeout`) timed
                    // out: the drain's account says so.
                    Written::Failed
                        if first_down.is_some_and(|down| {
                            down.reason == DownReason::WriteTimeout
                                && open_started.is_some_and(|started| down.record > started)
                        }) =>
                    {
                        out.violate(
                            Contract::S2,
                            format!("a write to peer{peer}/{generation} was ended by its deadline (its generation went down as WriteTimeout while it was under way) but was reported failed, not timed out"),
                            &[index],
                        );
                    }
                    Written::Failed
                        if first_down.is_none_or(|down| {
                            down.record > index
                                && !context.may_precede(records[down.record].at, record.at)
                                && !context.shutdown_down_logged_late(
                                    model.shutdown,
                                    index,
                                    down.record,
                                    down.reason,
                                )
                        }) =>
                    {
                        out.violate(
                            Contract::S3,
                            format!("a write to peer{peer}/{generation} failed but the generation was not down when it returned"),
                            &[index],
                        );
                    }
                    Written::Written | Written::Failed => {}
                }
            }
            Event::WriteAbandoned {
                peer, lane, seq, ..
            } => {
                open.remove(&(peer, lane, seq));
                picked = true;
            }
            _ => {}
        }
        if picked {
            idle_since = None;
            stalled_reported = false;
        }
        if open.is_empty() && queued > 0 && idle_since.is_none() {
            idle_since = Some(index);
        }
    }
    for ((peer, _, _), started) in open {
        let waited = model.end.saturating_sub(records[started].at);
        if waited > deadline + slack + model.holds.within(records[started].at, model.end) {
            out.violate(
                Contract::S2,
                format!("a write to peer{peer} has held the drain for {waited:?} and never finished (deadline {deadline:?})"),
                &[started],
            );
        }
    }
}
