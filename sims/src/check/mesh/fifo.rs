//! M6 FIFO per connection: the data frames one node sent that arrive on
//! one generation arrive in the order sent, no frame arrives twice
//! anywhere, and no frame arrives that no node wrote. Its own group: it
//! alone reads the data arrivals.

use std::collections::BTreeMap;

use super::model::{DataArrival, GenId, Model};
use crate::check::Collector;
use crate::event::Event;
use crate::scenario::Contract;

pub(super) fn m6(out: &mut Collector<'_>, model: &Model) {
    // Every frame a node delivers is one a node wrote: a data frame or a
    // LINK or EXIT. Anything else was invented or garbled on the way (a
    // keepalive handed over as an empty frame, a boundary lost).
    for &index in &model.strays {
        if let Event::MeshStrayFrame {
            node,
            peer,
            generation,
            control_len,
            payload_len,
        } = out.records()[index].event
        {
            out.violate(
                Contract::M6,
                format!(
                    "node{node} delivered a frame from node{peer} on generation {generation} \
                     that no node wrote ({control_len}-byte control, {payload_len}-byte payload)"
                ),
                &[index],
            );
        }
    }
    // Per receiving generation: the last sequence number read; per
    // (sender, seq): the first arrival.
    let mut last: BTreeMap<GenId, (u64, usize)> = BTreeMap::new();
    let mut seen: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for &DataArrival {
        record: index,
        on: gen,
        seq,
    } in &model.data
    {
        let GenId { node, peer, .. } = gen;
        if let Some(&(previous, at)) = last.get(&gen) {
            if seq <= previous {
                out.violate(
                    Contract::M6,
                    format!(
                        "node{node} read node{peer}'s data frame {seq:#x} after {previous:#x} on one generation: out of order"
                    ),
                    &[at, index],
                );
            }
        }
        last.insert(gen, (seq, index));
        if let Some(&first) = seen.get(&(peer, seq)) {
            out.violate(
                Contract::M6,
                format!("node{peer}'s data frame {seq:#x} arrived twice"),
                &[first, index],
            );
        } else {
            seen.insert((peer, seq), index);
        }
    }
}
