//! DC-1 and DC-2: the control lane's promises. Both judge a control
//! against the generation `enqueue` pinned it to (`Model::controls`): DC-1
//! that an accepted control meets exactly one fate and is written to that
//! generation unless it went down, DC-2 that it is written to and arrives
//! on that generation only, and that no frame begins on a generation's
//! socket after its down. They share the pinned generation, its socket and
//! its first down.

use super::model::{Control, Fate, FateAt, GenId, Model};
use crate::check::{CheckContext, Collector};
use crate::event::{ControlOutcome, Event, Lane, Written};
use crate::scenario::Contract;

pub(super) fn dc1(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    for (index, record) in out.records().iter().enumerate() {
        if let Event::ControlEnqueued {
            peer,
            generation,
            seq,
            outcome,
            down_at_return,
            ..
        } = record.event
        {
            match outcome {
                ControlOutcome::Overflow if !down_at_return => out.violate(
                    Contract::Dc1,
                    format!("control {seq}: Overflow returned while its pinned generation peer{peer}/{generation} was still up"),
                    &[index],
                ),
                ControlOutcome::Closed if model.shutdown.is_none_or(|s| s > index) => {
                    out.violate(
                        Contract::Dc1,
                        format!("control {seq}: Closed returned though no shutdown was asked for"),
                        &[index],
                    );
                }
                ControlOutcome::Queued | ControlOutcome::Overflow | ControlOutcome::Closed => {}
            }
        }
    }
    for (
        &seq,
        &Control {
            record: index,
            pinned,
            outcome,
            ..
        },
    ) in &model.controls
    {
        if outcome != ControlOutcome::Queued {
            continue;
        }
        let fates = model.control_fates.get(&seq).map_or(&[][..], Vec::as_slice);
        let GenId { peer, generation } = pinned;
        if fates.len() > 1 {
            let mut cited: Vec<usize> = fates.iter().map(|f| f.record).collect();
            cited.push(index);
            out.violate(
                Contract::Dc1,
                format!("control {seq} met {} fates", fates.len()),
                &cited,
            );
        }
        for &FateAt {
            record: at, fate, ..
        } in fates
        {
            let first_down = model.downs.get(&pinned).and_then(|d| d.first());
            let late = first_down.is_some_and(|down| {
                context.shutdown_down_logged_late(model.shutdown, at, down.record, down.reason)
            });
            if fate == Fate::Skipped && !late && model.down_at(&pinned).is_none_or(|down| down > at)
            {
                out.violate(
                    Contract::Dc1,
                    format!("control {seq} was skipped while its pinned generation peer{peer}/{generation} was up"),
                    &[index, at],
                );
            }
        }
        if !context.finished {
            continue;
        }
        let drain = context.reported.drain;
        if fates.is_empty() && drain {
            out.violate(
                Contract::Dc1,
                format!("control {seq} was accepted against peer{peer}/{generation} but the drain never saw it: neither written, skipped nor discarded"),
                &[index],
            );
        }
        let written = if drain {
            fates
                .iter()
                .any(|f| f.fate == Fate::Written(Written::Written) && f.written_to == Some(pinned))
        } else {
            model.begun_on(Lane::Control, seq, &pinned).is_some()
        };
        if !written && model.down_at(&pinned).is_none() {
            let mut cited: Vec<usize> = fates.iter().map(|f| f.record).collect();
            cited.push(index);
            out.violate(
                Contract::Dc1,
                format!("control {seq} accepted against peer{peer}/{generation} was neither written to it nor was it marked down: silently lost"),
                &cited,
            );
        }
    }
}

pub(super) fn dc2(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    for (index, record) in out.records().iter().enumerate() {
        match record.event {
            Event::WriteStarted {
                peer,
                generation,
                lane: Lane::Control,
                seq,
            } => {
                if let Some(&Control { pinned, .. }) = model.controls.get(&seq) {
                    if pinned != (GenId { peer, generation }) {
                        out.violate(
                            Contract::Dc2,
                            format!("control {seq} pinned to peer{}/{} was written to peer{peer}/{generation}", pinned.peer, pinned.generation),
                            &[index],
                        );
                    }
                }
            }
            Event::FrameWriteBegun {
                socket,
                lane: Lane::Control,
                seq,
                ..
            } if !context.reported.drain => {
                let pinned = model.controls.get(&seq).map(|c| c.pinned);
                let on = model.socket_gen.get(&socket).copied();
                if let (Some(pinned), Some(on)) = (pinned, on) {
                    if pinned != on {
                        out.violate(
                            Contract::Dc2,
                            format!(
                                "control {seq} pinned to peer{}/{} began to be written to peer{}/{}'s socket",
                                pinned.peer, pinned.generation, on.peer, on.generation
                            ),
                            &[index],
                        );
                    }
                }
                dc2_after_down(out, model, context, index, socket, Lane::Control, seq);
            }
            Event::FrameArrived {
                socket,
                lane: Lane::Control,
                seq,
                ..
            } => {
                let pinned = model.controls.get(&seq).map(|c| c.pinned);
                let arrived_on = model.socket_gen.get(&socket).copied();
                if let (Some(pinned), Some(on)) = (pinned, arrived_on) {
                    if pinned != on {
                        out.violate(
                            Contract::Dc2,
                            format!(
                                "control {seq} pinned to peer{}/{} arrived on peer{}/{}'s socket",
                                pinned.peer, pinned.generation, on.peer, on.generation
                            ),
                            &[index],
                        );
                    }
                }
            }
            Event::FrameWriteBegun {
                socket, lane, seq, ..
            } => dc2_after_down(out, model, context, index, socket, lane, seq),
            _ => {}
        }
    }
}

/// DC-2: no frame begins to reach a generation's socket after that
/// generation went down.
fn dc2_after_down(
    out: &mut Collector<'_>,
    model: &Model,
    context: &CheckContext,
    index: usize,
    socket: u16,
    lane: Lane,
    seq: u64,
) {
    let Some(gen) = model.socket_gen.get(&socket) else {
        return;
    };
    // For real, a write that passed its down check just before another
    // thread marked the generation down is logged (at the socket) just
    // after the down: excused within the race window. In simulation (no
    // window) log order alone decides, even within one tick
    // (`real_dc2_excuses_only_a_write_racing_the_down`).
    let records = out.records();
    let at = records[index].at;
    if let Some(down) = model
        .down_at(gen)
        .filter(|&down| down < index && !context.may_precede(at, records[down].at))
    {
        out.violate(
            Contract::Dc2,
            format!(
                "{lane:?} frame {seq} began to be written to peer{}/{} after that generation went down",
                gen.peer, gen.generation
            ),
            &[down, index],
        );
    }
}
