//! DC-5, S6 and E2E: what arrives. DC-5 holds each lane's arrivals (and
//! the drain's data writes) to enqueue order; S6 holds a frame written
//! whole to arrive, and E2E a link's EXIT to arrive on its generation or
//! `noconnection` to be told. S6 and E2E share the one excuse for a frame
//! that never arrived ([`excused`]: its generation was impaired or reset
//! while it was on its way) and the same window from a write to its read.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::model::{Control, Fate, GenId, Impairment, Model};
use crate::check::{CheckContext, Collector};
use crate::event::{ControlOutcome, Event, Lane, Record, Written};
use crate::scenario::Contract;

/// DC-5. Controls are numbered globally and data per node, both in
/// enqueue order, so order is "seq only grows" on each key: the drain must
/// start writing each node's data in enqueue order (whatever generation it
/// resolves to), and each socket must deliver each lane in that order.
/// Across two generations of a node nothing orders arrivals: frames left
/// in the old socket may arrive after the new one's, which only the
/// receiving node can sort out.
pub(super) fn dc5(out: &mut Collector<'_>) {
    let mut last: BTreeMap<(u8, u64, Lane), (u64, usize)> = BTreeMap::new();
    for (index, record) in out.records().iter().enumerate() {
        let (key, seq, text) = match record.event {
            Event::WriteStarted {
                peer,
                lane: Lane::Data,
                seq,
                ..
            } => (
                (0, peer, Lane::Data),
                seq,
                format!("data to peer{peer} written"),
            ),
            Event::FrameArrived {
                peer,
                socket,
                lane,
                seq,
                ..
            } => (
                (1, u64::from(socket), lane),
                seq,
                format!("{lane:?} frames on socket {socket} of peer{peer} arrived"),
            ),
            _ => continue,
        };
        if let Some((previous, at)) = last
            .insert(key, (seq, index))
            .filter(|&(previous, _)| seq <= previous)
        {
            out.violate(
                Contract::Dc5,
                format!("{text} out of order: {seq} after {previous}"),
                &[at, index],
            );
        }
    }
}

/// Whether `gen` was impaired while a frame written at `written_at` could
/// still have been on its way (within `bound`): the only excuse for its
/// never arriving.
fn excused(
    model: &Model,
    records: &[Record],
    gen: &GenId,
    written_at: Duration,
    bound: Duration,
) -> bool {
    let reset = model
        .resets
        .get(gen)
        .is_some_and(|&down| written_at <= records[down].at);
    reset
        || model.impaired.get(gen).is_some_and(|spans| {
            spans.iter().any(|&Impairment { from, until }| {
                records[from].at <= written_at + bound
                    && until.is_none_or(|until| until >= written_at)
            })
        })
}

pub(super) fn s6(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    if !context.finished {
        return;
    }
    let records = out.records();
    let mut arrived: BTreeSet<(u16, Lane, u64)> = BTreeSet::new();
    for record in records {
        if let Event::FrameArrived {
            socket, lane, seq, ..
        } = record.event
        {
            arrived.insert((socket, lane, seq));
        }
    }
    for (index, record) in records.iter().enumerate() {
        let (gen, lane, seq) = match record.event {
            Event::WriteFinished {
                peer,
                generation,
                lane,
                seq,
                outcome: Written::Written,
            } if context.reported.drain => (GenId { peer, generation }, lane, seq),
            // Without the drain's account: a frame that began on a socket
            // whose generation never went down was written whole (a write
            // that fails or misses its deadline takes its generation down).
            Event::FrameWriteBegun {
                socket, lane, seq, ..
            } if !context.reported.drain => {
                let Some(&gen) = model.socket_gen.get(&socket) else {
                    continue;
                };
                if model.down_at(&gen).is_some() {
                    continue;
                }
                (gen, lane, seq)
            }
            _ => continue,
        };
        let GenId { peer, generation } = gen;
        let Some(&socket) = model.gen_socket.get(&gen) else {
            continue;
        };
        // From a write's begin, it may take a whole write to finish.
        let bound = if context.reported.drain {
            context.delivery_bound
        } else {
            context.delivery_bound + context.write_bound
        };
        if !arrived.contains(&(socket, lane, seq))
            && !excused(model, records, &gen, record.at, bound)
        {
            out.violate(
                Contract::S6,
                format!("{lane:?} frame {seq} was written whole to peer{peer}/{generation}, whose peer kept reading, but never arrived"),
                &[index],
            );
        }
    }
}

pub(super) fn end_to_end(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let records = out.records();
    let mut told: BTreeSet<u64> = BTreeSet::new();
    let mut delivered: BTreeMap<u64, usize> = BTreeMap::new();
    for (index, record) in records.iter().enumerate() {
        match record.event {
            Event::FrameArrived {
                socket,
                lane: Lane::Control,
                seq,
                link: Some(link),
                ..
            } if model.socket_gen.get(&socket).is_some_and(|on| {
                model
                    .controls
                    .get(&seq)
                    .is_some_and(|control| control.pinned == *on)
            }) =>
            {
                told.insert(link);
            }
            Event::NoConnection {
                peer,
                generation,
                link,
            } => {
                told.insert(link);
                if let Some(first) = delivered.insert(link, index) {
                    out.violate(
                        Contract::EndToEnd,
                        format!("link {link}: noconnection delivered twice"),
                        &[first, index],
                    );
                }
                if model
                    .down_at(&GenId { peer, generation })
                    .is_none_or(|down| down > index)
                {
                    out.violate(
                        Contract::EndToEnd,
                        format!("link {link}: noconnection delivered for peer{peer}/{generation}, which had not gone down: an invented death signal"),
                        &[index],
                    );
                }
            }
            _ => {}
        }
    }
    if !context.finished {
        return;
    }
    // Links whose EXIT only a heartbeat could account for (written to an
    // impaired generation) or that were never sent (the sender was shut).
    let mut excused_links: BTreeSet<u64> = BTreeSet::new();
    for (
        &seq,
        &Control {
            pinned,
            link,
            outcome,
            ..
        },
    ) in &model.controls
    {
        let Some(link) = link else { continue };
        if outcome == ControlOutcome::Closed {
            excused_links.insert(link);
            continue;
        }
        let fates = model.control_fates.get(&seq).map_or(&[][..], Vec::as_slice);
        let written_at: Vec<usize> = if context.reported.drain {
            fates
                .iter()
                .filter(|f| {
                    f.fate == Fate::Written(Written::Written) && f.written_to == Some(pinned)
                })
                .map(|f| f.record)
                .collect()
        } else {
            model
                .begun_on(Lane::Control, seq, &pinned)
                .into_iter()
                .collect()
        };
        let bound = if context.reported.drain {
            context.delivery_bound
        } else {
            context.delivery_bound + context.write_bound
        };
        for at in written_at {
            if excused(model, records, &pinned, records[at].at, bound) {
                excused_links.insert(link);
            }
        }
    }
    for (index, record) in records.iter().enumerate() {
        if let Event::Linked {
            peer,
            generation,
            link,
        } = record.event
        {
            if !told.contains(&link) && !excused_links.contains(&link) {
                out.violate(
                    Contract::EndToEnd,
                    format!("link {link} over peer{peer}/{generation}: its EXIT never arrived and no noconnection was delivered: a lost death signal"),
                    &[index],
                );
            }
        }
    }
}
