//! M2, M3 and M4: one generation's life and the death signals it owes.
//! M2 holds every link settled (its EXIT over its socket, or a
//! `noconnection`) on both ends, M3 every `noconnection` to a generation
//! that went down (once per link and end, never for a learned link its
//! EXIT already ended), M4 the down hook to once per
//! generation that came up, and every generation that is not live at the
//! end to have gone down. All three read the same ups, downs, crashes and
//! `noconnection`s by incarnation.

use std::collections::BTreeMap;

use super::model::{Arrival, DeliveryKey, GenId, Linked, Model, NoConnection, Up};
use crate::check::Collector;
use crate::event::{LinkMsg, LinkSide};
use crate::scenario::Contract;

pub(super) fn m2(out: &mut Collector<'_>, model: &Model) {
    // EXITs and LINKs by link id.
    let mut exits: BTreeMap<u64, Vec<Arrival>> = BTreeMap::new();
    for &arrival in &model.arrived {
        if arrival.msg == LinkMsg::Exit {
            exits.entry(arrival.link).or_default().push(arrival);
        }
    }
    for &Linked {
        record: index,
        over: gen,
        link,
    } in &model.linked
    {
        let GenId {
            node, incarnation, ..
        } = gen;
        let made_over = model.socket(&gen);
        let arrivals = exits.get(&link).map(Vec::as_slice).unwrap_or_default();
        for &Arrival {
            record: arrived,
            on: learner,
            ..
        } in arrivals
        {
            let over = model.socket(&learner);
            if over.is_some() && over != made_over {
                out.violate(
                    Contract::M2,
                    format!(
                        "link {link:#x}'s EXIT arrived over another socket than the one it was made over"
                    ),
                    &[index, arrived],
                );
            }
        }
        if !model.finished || model.crashed_at(node, incarnation).is_some() {
            continue;
        }
        // Made over an intruder's stream (an insider or a squatter the
        // node took for the name's owner while the slot was empty): no
        // node reads its EXIT, and the intruder may keep the generation
        // live to the end. Nothing the node could do settles it (the hunt
        // found it: `hunt --world mesh --seed 1`, case 220, M2's own test
        // `m2_leaves_a_link_over_an_insiders_stream_unjudged`).
        if made_over.is_some_and(|socket| {
            model.claims.contains_key(&socket) || model.squats.contains_key(&socket)
        }) {
            continue;
        }
        let settled = arrivals
            .iter()
            .any(|exit| model.socket(&exit.on).is_some() && model.socket(&exit.on) == made_over)
            || model.noconnections.contains_key(&DeliveryKey {
                node,
                incarnation,
                link,
                side: LinkSide::Maker,
            });
        if !settled {
            out.violate(
                Contract::M2,
                format!(
                    "link {link:#x} made by node{node} was never settled: its EXIT never arrived over its socket and no noconnection was delivered"
                ),
                &[index],
            );
        }
    }
    if !model.finished {
        return;
    }
    for &Arrival {
        record: index,
        on: gen,
        link,
        msg,
    } in &model.arrived
    {
        let GenId {
            node, incarnation, ..
        } = gen;
        if msg != LinkMsg::Link || model.crashed_at(node, incarnation).is_some() {
            continue;
        }
        let exited = model
            .arrived
            .iter()
            .any(|a| a.on == gen && a.link == link && a.msg == LinkMsg::Exit);
        let broken = model.noconnections.contains_key(&DeliveryKey {
            node,
            incarnation,
            link,
            side: LinkSide::Learner,
        });
        if !exited && !broken {
            out.violate(
                Contract::M2,
                format!(
                    "node{node} learned link {link:#x} and it was never settled: no EXIT on its generation, no noconnection"
                ),
                &[index],
            );
        }
    }
}

pub(super) fn m3(out: &mut Collector<'_>, model: &Model) {
    for (
        &DeliveryKey {
            node, link, side, ..
        },
        deliveries,
    ) in &model.noconnections
    {
        let NoConnection {
            record: index,
            over: gen,
        } = deliveries[0];
        match model.first_down(&gen) {
            Some(down) if down.record < index => {}
            _ => out.violate(
                Contract::M3,
                format!(
                    "node{node} delivered noconnection for link {link:#x} ({side:?}) though its generation had not gone down"
                ),
                &[index],
            ),
        }
        // A learned link its EXIT unlinked is nobody's any more: a later
        // down owes it nothing.
        if side == LinkSide::Learner {
            if let Some(exit) = model.arrived.iter().find(|a| {
                a.on == gen && a.link == link && a.msg == LinkMsg::Exit && a.record < index
            }) {
                out.violate(
                    Contract::M3,
                    format!(
                        "node{node} delivered noconnection for link {link:#x} (Learner) after its EXIT had arrived and ended it"
                    ),
                    &[exit.record, index],
                );
            }
        }
        if deliveries.len() > 1 {
            let cited: Vec<usize> = deliveries.iter().map(|d| d.record).collect();
            out.violate(
                Contract::M3,
                format!(
                    "node{node} delivered noconnection for link {link:#x} ({side:?}) {} times",
                    deliveries.len()
                ),
                &cited,
            );
        }
    }
}

pub(super) fn m4(out: &mut Collector<'_>, model: &Model) {
    for (gen, downs) in &model.downs {
        let GenId {
            node,
            peer,
            generation,
            ..
        } = *gen;
        if downs.len() > 1 {
            let cited: Vec<usize> = downs.iter().map(|d| d.record).collect();
            out.violate(
                Contract::M4,
                format!(
                    "node{node}'s down hook fired {} times for generation {generation} of node{peer}",
                    downs.len()
                ),
                &cited,
            );
        }
        if !model.ups.contains_key(gen) {
            out.violate(
                Contract::M4,
                format!(
                    "node{node}'s down hook fired for generation {generation} of node{peer}, which never came up"
                ),
                &[downs[0].record],
            );
        }
    }
    if !model.finished {
        return;
    }
    for (
        gen,
        &Up {
            record: index,
            socket,
            ..
        },
    ) in &model.ups
    {
        let GenId {
            node,
            incarnation,
            peer,
            generation,
        } = *gen;
        if model.downs.contains_key(gen) || model.crashed_at(node, incarnation).is_some() {
            continue;
        }
        let live = model
            .table
            .get(&(node, peer))
            .is_some_and(|entry| entry.socket == Some(socket));
        if !live {
            out.violate(
                Contract::M4,
                format!(
                    "node{node}'s generation {generation} of node{peer} is neither live at the end nor went down"
                ),
                &[index],
            );
        }
    }
}
