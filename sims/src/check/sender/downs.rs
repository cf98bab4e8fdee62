//! S3, S7 and S8: a generation's down. All three walk the down hook's
//! calls per generation (`Model::downs`): S3 that it fires once, for
//! every socket the peer ended, and leaves the socket closed and the table
//! without it; S7 that each down had a cause (the peer cut off, an
//! overflow, a disconnect, a deadline) and no live generation was
//! displaced; S8 that a redial follows within its bound once the peer is
//! reachable. S7's causes read when the generation was impaired
//! ([`impaired_at`]), S3 and S8 when its peer was unreachable.

use std::collections::{BTreeMap, BTreeSet};

use lanesim_target::node::DownReason;

use super::model::{DownCall, GenId, Impairment, Model, Unreachable};
use crate::check::{CheckContext, Collector};
use crate::event::{DialFailure, Event, PeerAct, Record, SocketEnd};
use crate::scenario::Contract;

pub(super) fn s3(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    // A node that reports its table has each connected peer's slot logged
    // at the end of a finished run; without it the table's end cannot be
    // checked, which is no pass.
    if context.finished && context.reported.table {
        let records = out.records();
        let at_end: BTreeSet<u64> = records
            .iter()
            .filter_map(|r| match r.event {
                Event::TableAtEnd { peer, .. } => Some(peer),
                _ => None,
            })
            .collect();
        let unlogged: Vec<(u64, usize)> = records
            .iter()
            .enumerate()
            .filter_map(|(index, r)| match r.event {
                Event::ConnectionUp { peer, .. } if !at_end.contains(&peer) => Some((peer, index)),
                _ => None,
            })
            .fold(Vec::new(), |mut first, (peer, index)| {
                if !first.iter().any(|(p, _)| *p == peer) {
                    first.push((peer, index));
                }
                first
            });
        for (peer, index) in unlogged {
            out.violate(
                Contract::S3,
                format!("peer{peer} was connected, but the finished run logged no table slot for it at its end: the table cannot be checked"),
                &[index],
            );
        }
    }
    for (gen, downs) in &model.downs {
        let cited: Vec<usize> = downs.iter().map(|d| d.record).collect();
        if downs.len() > 1 {
            out.violate(
                Contract::S3,
                format!(
                    "down hook fired {} times for peer{}/{}",
                    downs.len(),
                    gen.peer,
                    gen.generation
                ),
                &cited,
            );
        }
        for &DownCall {
            record: index,
            table,
            ..
        } in downs
        {
            if table == Some(gen.generation) {
                out.violate(
                    Contract::S3,
                    format!(
                        "peer{}/{} went down but its table slot still holds it",
                        gen.peer, gen.generation
                    ),
                    &[index],
                );
            }
        }
    }
    // A generation that went down has its socket closed, so its peer (if
    // it is still reading) sees the stream end.
    if context.finished {
        let records = out.records();
        let ended: BTreeSet<u16> = records
            .iter()
            .filter_map(|r| match r.event {
                Event::PeerSocketClosed { socket, .. }
                | Event::PeerActed {
                    socket,
                    act: PeerAct::Killed,
                    ..
                } => Some(socket),
                _ => None,
            })
            .collect();
        let bound = context.delivery_bound + context.preempt_max * 2 + context.connect_timeout;
        for (gen, downs) in &model.downs {
            let (
                Some(&DownCall {
                    record: index,
                    reason,
                    ..
                }),
                Some(socket),
            ) = (downs.first(), model.gen_socket.get(gen))
            else {
                continue;
            };
            let cut_off = model.impaired.contains_key(gen);
            if !cut_off && !ended.contains(socket) && records[index].at + bound <= model.end {
                out.violate(
                    Contract::S3,
                    format!(
                        "peer{}/{} went down ({reason:?}) but its socket was never closed: its peer, still reading, never saw the stream end",
                        gen.peer, gen.generation
                    ),
                    &[index],
                );
            }
        }
    }
    let mut latest: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
    for (index, record) in out.records().iter().enumerate() {
        // What the peer did that must take the socket's generation down.
        let ended = match record.event {
            Event::ConnectionUp {
                peer, generation, ..
            } => {
                // Every generation the manager installs is handed to the
                // dial that made it, and logged. They come from one counter
                // per manager (a node's slot is removed when it has no live
                // connection), so a node's generations only grow, from 1.
                let (previous, at) = latest.get(&peer).copied().unwrap_or((0, index));
                if generation <= previous {
                    out.violate(
                        Contract::S3,
                        format!("peer{peer}: generation {generation} came up after generation {previous}: generations start at 1 and only grow"),
                        &[at, index],
                    );
                }
                latest.insert(peer, (generation, index));
                None
            }
            Event::TableAtEnd {
                peer,
                generation: Some(generation),
            } => {
                if let Some(down) = model.down_at(&GenId { peer, generation }) {
                    out.violate(
                        Contract::S3,
                        format!("at the end the table still holds peer{peer}/{generation}, which went down"),
                        &[down, index],
                    );
                }
                None
            }
            Event::PeerActed {
                socket,
                act: act @ (PeerAct::WroteOversize | PeerAct::Tore { .. }),
                ..
            } => {
                // A header over the maximum and a stream that ends inside a
                // frame are read errors, never a clean close: a decoder
                // that calls either "closed" reports a broken peer as one
                // that said goodbye.
                let down = model.socket_gen.get(&socket).and_then(|gen| {
                    let downs = model.downs.get(gen)?;
                    downs.first().map(|down| (gen, down.record, down.reason))
                });
                if let Some((gen, at, DownReason::PeerClosed)) = down {
                    if at > index {
                        out.violate(
                            Contract::S3,
                            format!(
                                "the peer {} on peer{}/{}'s socket, but the generation went down as PeerClosed: that is a read error, not a clean close",
                                match act {
                                    PeerAct::Tore { bytes } => format!("tore its stream {bytes} bytes into a frame"),
                                    _ => "wrote a header over the maximum".to_owned(),
                                },
                                gen.peer, gen.generation
                            ),
                            &[index, at],
                        );
                    }
                }
                Some((
                    socket,
                    "the peer wrote a header over the maximum or tore its stream",
                ))
            }
            Event::PeerActed {
                socket,
                act: PeerAct::Killed,
                ..
            }
            | Event::PeerSocketClosed {
                socket,
                how: SocketEnd::Eof,
                ..
            } => Some((socket, "the peer closed")),
            _ => None,
        };
        if let Some((socket, what)) = ended {
            must_go_down(out, model, context, record, socket, index, what);
        }
    }
}

/// S3: the generation on `socket` goes down once the peer did what
/// `what` says to it at `record` (`index`), unless the run did not finish
/// or a partition swallowed it (turmoil drops what crosses a partition for
/// good, the FIN too: the hunt found a kill inside a partition).
fn must_go_down(
    out: &mut Collector<'_>,
    model: &Model,
    context: &CheckContext,
    record: &Record,
    socket: u16,
    index: usize,
    what: &str,
) {
    if !context.finished {
        return;
    }
    if let Some(gen) = model.socket_gen.get(&socket) {
        let lost = model.unreachable.get(&gen.peer).is_some_and(|windows| {
            windows.iter().any(|&Unreachable { from, to }| {
                from <= record.at + context.delivery_bound && to.is_none_or(|to| record.at <= to)
            })
        });
        if !model.downs.contains_key(gen) && !lost {
            out.violate(
                Contract::S3,
                format!(
                    "{what} peer{}/{}'s socket but the generation never went down",
                    gen.peer, gen.generation
                ),
                &[index],
            );
        }
    }
}

/// Whether `gen`'s peer was cut off when record `index` was logged. For
/// real, a fault made on the driver's thread (a peer aborted, a socket
/// closed) can reach the local node's read before the driver logs it: a
/// fault logged within the race window after the record counts
/// ([`CheckContext::may_precede`];
/// `real_s7_excuses_only_a_fault_logged_just_after_its_down`).
fn impaired_at(
    model: &Model,
    records: &[Record],
    gen: &GenId,
    index: usize,
    context: &CheckContext,
) -> bool {
    let at = records[index].at;
    model.impaired.get(gen).is_some_and(|spans| {
        spans.iter().any(|&Impairment { from, until }| {
            let begun = from <= index || context.may_precede(records[from].at, at);
            begun && until.is_none_or(|until| until >= at)
        })
    })
}

pub(super) fn s7(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    for (gen, downs) in &model.downs {
        let Some(&DownCall {
            record: index,
            reason,
            ..
        }) = downs.first()
        else {
            continue;
        };
        let GenId { peer, generation } = *gen;
        let asked = |since: Option<usize>| since.is_some_and(|at| at <= index);
        let justified = match reason {
            DownReason::ControlOverflow => model.overflowed.contains(gen),
            DownReason::ManualDisconnect => {
                asked(model.shutdown) || asked(model.disconnected.get(gen).copied())
            }
            // A write dropped mid-frame: by a shutdown's abort, or by a
            // sender that bounds a write by dropping it, which is a
            // deadline as good as a `WriteTimeout` (beamr's drain, over
            // lanesim's connection layer, does: docs/examples.md).
            DownReason::WriteCancelled if asked(model.shutdown) => true,
            // A deadline a healthy link cannot meet is its own cause
            // (found by the hunt: 12 KB controls over a 4-segment window
            // against a 100 ms deadline).
            DownReason::WriteTimeout | DownReason::WriteCancelled => {
                context
                    .write_timeout
                    .is_some_and(|t| t <= context.write_bound)
                    || impaired_at(model, out.records(), gen, index, context)
            }
            // A frame that trickles in past its deadline needs a peer
            // that was cut off or slowed mid-frame.
            DownReason::PeerClosed
            | DownReason::ReadError
            | DownReason::WriteError
            | DownReason::HeartbeatTimeout
            | DownReason::FrameTimeout => impaired_at(model, out.records(), gen, index, context),
            // The sender world has one production node, no frame
            // callback, peers that write one small frame at a time
            // against an ample budget, and never claim a name twice: none
            // of these can happen there.
            DownReason::SimultaneousConnect
            | DownReason::HandlerPanicked
            | DownReason::OverBudget
            | DownReason::NameReclaimed => false,
        };
        if !justified {
            out.violate(
                Contract::S7,
                format!("peer{peer}/{generation} went down ({reason:?}) with no cause: its peer was never cut off and nothing local asked for it"),
                &[index],
            );
        }
    }
    for (&gen, &up) in &model.up {
        let displaced = model.up.iter().find(|(older, &older_up)| {
            older.peer == gen.peer
                && older.generation < gen.generation
                && older_up < up
                && model.down_at(older).is_none_or(|down| down > up)
        });
        if let Some((older, &older_up)) = displaced {
            out.violate(
                Contract::S7,
                format!(
                    "peer{}/{} came up while peer{}/{} was still live: a live generation was displaced",
                    gen.peer, gen.generation, older.peer, older.generation
                ),
                &[older_up, up],
            );
        }
    }
}

pub(super) fn s8(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let Some((after, connect_timeout)) = context.redial else {
        return;
    };
    let records = out.records();
    // A keeper sleeps `after` and dials, an attempt fails within the
    // connect timeout; three attempts after the peer is reachable (one may
    // have started while it was not, one may lose to turmoil's random
    // latency), then the network and one preemption point.
    let bound = (after + connect_timeout) * 3 + context.delivery_bound + context.preempt_max;
    for (gen, downs) in &model.downs {
        let Some(&DownCall { record: index, .. }) = downs.first() else {
            continue;
        };
        let GenId { peer, generation } = *gen;
        let down_at = records[index].at;
        let windows = model.unreachable.get(&peer).map_or(&[][..], Vec::as_slice);
        // The first moment from which the peer stays reachable for a whole
        // bound: step past every window that covers it or opens within it.
        let mut reachable = Some(down_at);
        while let Some(from) = reachable {
            let blocking = windows
                .iter()
                .filter(|window| {
                    window.from <= from + bound && window.to.is_none_or(|end| from < end)
                })
                .map(|window| window.to)
                .next();
            match blocking {
                None => break,
                Some(end) => reachable = end,
            }
        }
        let Some(reachable) = reachable.filter(|r| *r + bound <= model.end) else {
            continue;
        };
        let by = reachable + bound;
        let reconnected = model
            .up
            .iter()
            .any(|(up, &at)| up.peer == peer && up.generation > generation && records[at].at <= by);
        // Under a connect timeout a healthy dial may outlast, dials that
        // all timed out are the world's timing, not the code's: no verdict.
        let timed_out = context.dials_may_time_out() && {
            let dials: Vec<DialFailure> = records
                .iter()
                .filter(|r| r.at > reachable && r.at <= by)
                .filter_map(|r| match r.event {
                    Event::DialFailed { peer: p, error } if p == peer => Some(error),
                    _ => None,
                })
                .collect();
            !dials.is_empty() && dials.iter().all(|e| *e == DialFailure::Timeout)
        };
        if !reconnected && !timed_out {
            out.violate(
                Contract::S8,
                format!("peer{peer}/{generation} went down at {down_at:?}; its peer was reachable from {reachable:?} but no new generation came up by {by:?}"),
                &[index],
            );
        }
    }
}
