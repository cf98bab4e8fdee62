//! L1 and L2 over a log whose routes overlap: the model world's
//! `overlapping-routes` workloads let producers call `route` at once on one
//! key, so a route's admission point lies somewhere between its
//! `RouteBegan` and its `Routed`, and the log is no linearisation of the
//! admissions (`check::lanes` needs one). What is still decided, soundly:
//!
//! - L2: every admitted item is handled exactly once (the run ended with
//!   every task), a refused item never, and nothing that was never routed;
//! - L1, per lane, for two items of one key it handled:
//!   - real-time order: an item whose route returned before the other's
//!     began was admitted first, so it starts first;
//!   - depth order: for two routes that overlap, where the lane finished
//!     no item from the first call's start to the last call's return (its
//!     backlog only grew), the smaller reported depth was admitted first,
//!     so it starts first. (With an end in that window the backlog may
//!     have shrunk between the admissions, and the depths say nothing.)
//!
//! L3, L4 and L5 need the admission point itself and are not decided on
//! such a log.

use std::collections::BTreeMap;

use super::{Collector, Violation};
use crate::event::{Event, Record};
use crate::scenario::Contract;

#[derive(Default)]
struct Routed {
    key: u64,
    began: Option<usize>,
    returned: Option<usize>,
    depth: Option<u64>,
    refused: bool,
    starts: Vec<(usize, u64)>,
}

/// L1 and L2 violations in `records`, a log with overlapping routes that
/// ran to its end (every task finished).
#[must_use]
pub fn check(records: &[Record]) -> Vec<Violation> {
    let mut out = Collector::new(records);
    let mut items: BTreeMap<u64, Routed> = BTreeMap::new();
    // Per lane, the records at which it finished an item.
    let mut ends: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (index, record) in records.iter().enumerate() {
        match record.event {
            Event::RouteBegan { key, item } => {
                let entry = items.entry(item).or_default();
                entry.key = key;
                entry.began = Some(index);
            }
            Event::Routed {
                key, item, depth, ..
            } => {
                let entry = items.entry(item).or_default();
                entry.key = key;
                entry.returned = Some(index);
                entry.depth = depth;
                entry.refused = depth.is_none();
            }
            Event::HandleStart { key, item, lane } => {
                let entry = items.entry(item).or_default();
                entry.key = key;
                entry.starts.push((index, lane));
            }
            Event::HandleEnd { lane, .. } => ends.entry(lane).or_default().push(index),
            _ => {}
        }
    }
    for (&item, entry) in &items {
        let key = entry.key;
        match (entry.began, entry.refused, entry.starts.as_slice()) {
            (None, _, [(start, _), ..]) => out.violate(
                Contract::L2,
                format!("key {key}: item {item} handled but never routed"),
                &[*start],
            ),
            (Some(_), true, [(start, _), ..]) => out.violate(
                Contract::L2,
                format!("key {key}: item {item} was refused but handled"),
                &[entry.returned.unwrap_or(*start), *start],
            ),
            (Some(began), false, []) if entry.returned.is_some() => out.violate(
                Contract::L2,
                format!("key {key}: admitted item {item} was never handled"),
                &[began, entry.returned.unwrap_or(began)],
            ),
            (_, _, [(first, _), (second, _), ..]) => out.violate(
                Contract::L2,
                format!("key {key}: item {item} handled twice"),
                &[*first, *second],
            ),
            _ => {}
        }
    }
    // L1: pairs of handled items of one key on one lane.
    let handled: Vec<(u64, &Routed, usize, u64)> = items
        .iter()
        .filter_map(|(&item, e)| {
            let (start, lane) = *e.starts.first()?;
            (e.began.is_some() && e.returned.is_some() && !e.refused)
                .then_some((item, e, start, lane))
        })
        .collect();
    for (i, &(a, ea, start_a, lane_a)) in handled.iter().enumerate() {
        for &(b, eb, start_b, lane_b) in &handled[i + 1..] {
            if ea.key != eb.key || lane_a != lane_b {
                continue;
            }
            // Order the pair so that `first` is the one admitted first, if
            // the log can tell.
            let (began_a, returned_a) = (ea.began.unwrap_or(0), ea.returned.unwrap_or(0));
            let (began_b, returned_b) = (eb.began.unwrap_or(0), eb.returned.unwrap_or(0));
            let by_time = if returned_a < began_b {
                Some(true)
            } else if returned_b < began_a {
                Some(false)
            } else {
                None
            };
            let order = by_time.map(|a_first| (a_first, "its route returned before the other's began")).or_else(|| {
                let (from, to) = (began_a.min(began_b), returned_a.max(returned_b));
                let quiet = !ends
                    .get(&lane_a)
                    .is_some_and(|ends| ends.iter().any(|&end| from < end && end < to));
                match (ea.depth, eb.depth) {
                    (Some(da), Some(db)) if quiet && da != db => Some((
                        da < db,
                        "their routes overlapped with no item of the lane finished meanwhile, and its depth was the smaller",
                    )),
                    _ => None,
                }
            });
            let Some((a_first, why)) = order else {
                continue;
            };
            let (first, later, first_start, later_start, first_e, later_e) = if a_first {
                (a, b, start_a, start_b, ea, eb)
            } else {
                (b, a, start_b, start_a, eb, ea)
            };
            if later_start < first_start {
                out.violate(
                    Contract::L1,
                    format!(
                        "key {}: item {later} (depth {:?}) started on lane {lane_a} before item {first} (depth {:?}), which was admitted first: {why}",
                        first_e.key, later_e.depth, first_e.depth
                    ),
                    &[
                        first_e.began.unwrap_or(0),
                        first_e.returned.unwrap_or(0),
                        later_e.began.unwrap_or(0),
                        later_e.returned.unwrap_or(0),
                        later_start,
                        first_start,
                    ],
                );
            }
        }
    }
    out.into_violations()
}
