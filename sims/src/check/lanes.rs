//! L1–L6 over a lanes-world log. One pass replays the log into a model of
//! keys, lanes and items; each contract's violations are collected as the
//! replay meets them (safety) or at the end (completeness, liveness).
//!
//! What each contract means here:
//! - L1: per key, handlers start in route (admission) order.
//! - L2: each admitted item is handled exactly once; refused items never;
//!   nothing unadmitted is handled; nothing admitted into a lane that already
//!   exited (a black hole).
//! - L3: an item is handled by the lane that held the key when it was
//!   admitted; no lane is created for a key while another still holds work.
//! - L4: `route` never admits past the capacity, never refuses below it, and
//!   reports the true depth (unhandled items, the running one included).
//! - L5: no lane is reaped holding work; an idle lane is reaped within TTL +
//!   slack; after the router is dropped, every lane ends.
//! - L6: with a key stuck forever, every other key's items are still handled.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{CheckContext, Violation};
use crate::event::{Event, Record};
use crate::scenario::Contract;

/// Reap slack: timers have millisecond resolution and a reap decision may
/// wait behind one more item's worth of scheduling.
const REAP_SLACK: Duration = Duration::from_millis(5);

#[derive(Default)]
struct Lane {
    key: u64,
    open: bool,
    /// Items admitted here that have not ended, by admission index.
    outstanding: BTreeSet<u64>,
    last_activity: Duration,
    closed_at: Option<Duration>,
    closed: Option<usize>,
    created: usize,
    stuck: bool,
}

struct Item {
    key: u64,
    lane: u64,
    /// Position among the key's admissions.
    order: u64,
    routed: usize,
    started: Option<usize>,
    ended: bool,
}

#[derive(Default)]
struct Replay<'a> {
    records: &'a [Record],
    violations: Vec<Violation>,
    lanes: BTreeMap<u64, Lane>,
    current: BTreeMap<u64, u64>,
    items: BTreeMap<u64, Item>,
    refused: BTreeMap<u64, usize>,
    admissions: BTreeMap<u64, u64>,
    last_started: BTreeMap<u64, (u64, usize)>,
    stuck_keys: BTreeSet<u64>,
    lost: BTreeSet<u64>,
    router_dropped: Option<Duration>,
}

impl Replay<'_> {
    fn violate(&mut self, contract: Contract, message: String, evidence: &[usize]) {
        let mut evidence: Vec<usize> = evidence.to_vec();
        evidence.sort_unstable();
        evidence.dedup();
        let evidence = evidence
            .into_iter()
            .map(|i| self.records[i].clone())
            .collect();
        self.violations.push(Violation {
            contract,
            message,
            evidence,
        });
    }

    fn step(&mut self, index: usize, context: &CheckContext) {
        let record = &self.records[index];
        let at = record.at;
        match record.event {
            Event::LaneCreated { key, lane } => self.created(index, at, key, lane),
            Event::Routed {
                key,
                item,
                capacity,
                depth,
            } => self.routed(index, at, key, item, capacity, depth),
            Event::HandleStart { key, item, lane } => self.started(index, key, item, lane),
            Event::HandleEnd { item, lane, .. } => self.ended(index, at, item, lane),
            Event::Stuck { key, lane, .. } => {
                self.stuck_keys.insert(key);
                if let Some(lane) = self.lanes.get_mut(&lane) {
                    lane.stuck = true;
                }
            }
            Event::LaneClosed {
                key,
                lane,
                ref exit,
            } => self.closed(index, at, key, lane, exit.clone(), context),
            Event::RouterDropped => self.router_dropped = Some(at),
            _ => {}
        }
    }

    fn created(&mut self, index: usize, at: Duration, key: u64, lane: u64) {
        let busy: Vec<(u64, usize)> = self
            .lanes
            .iter()
            .filter(|(id, l)| l.key == key && l.open && **id != lane && !l.outstanding.is_empty())
            .map(|(id, l)| (*id, l.created))
            .collect();
        for (other, created) in busy {
            let outstanding = self.lanes[&other].outstanding.len();
            self.violate(
                Contract::L3,
                format!("key {key}: lane {lane} created while lane {other} still holds {outstanding} unhandled item(s): two live lanes"),
                &[created, index],
            );
        }
        self.lanes.insert(
            lane,
            Lane {
                key,
                open: true,
                last_activity: at,
                created: index,
                ..Lane::default()
            },
        );
        self.current.insert(key, lane);
    }

    fn routed(
        &mut self,
        index: usize,
        at: Duration,
        key: u64,
        item: u64,
        capacity: Option<u64>,
        depth: Option<u64>,
    ) {
        let Some(&lane_id) = self.current.get(&key) else {
            if depth.is_some() {
                self.violate(
                    Contract::L3,
                    format!("key {key}: item {item} admitted but no lane was ever created"),
                    &[index],
                );
            }
            self.refused.insert(item, index);
            return;
        };
        let lane = &self.lanes[&lane_id];
        let outstanding = lane.outstanding.len() as u64;
        let (open, created, closed) = (lane.open, lane.created, lane.closed);
        match depth {
            Some(depth) => {
                if !open {
                    self.violate(
                        Contract::L2,
                        format!("key {key}: item {item} admitted into lane {lane_id}, which had already exited: black-holed"),
                        &[created, closed.unwrap_or(created), index],
                    );
                }
                if depth != outstanding {
                    self.violate(
                        Contract::L4,
                        format!("key {key}: route reported depth {depth} for item {item}, but lane {lane_id} held {outstanding} unhandled"),
                        &[index],
                    );
                }
                if let Some(capacity) = capacity {
                    if outstanding >= capacity {
                        self.violate(
                            Contract::L4,
                            format!("key {key}: item {item} admitted past capacity {capacity} (lane {lane_id} held {outstanding} unhandled)"),
                            &[index],
                        );
                    }
                }
                let order = self.admissions.entry(key).or_default();
                *order += 1;
                let order = *order;
                if self.items.contains_key(&item) || self.refused.contains_key(&item) {
                    self.violate(Contract::L2, format!("item {item} routed twice"), &[index]);
                }
                self.items.insert(
                    item,
                    Item {
                        key,
                        lane: lane_id,
                        order,
                        routed: index,
                        started: None,
                        ended: false,
                    },
                );
                let lane = self.lanes.get_mut(&lane_id).expect("current lane exists");
                lane.outstanding.insert(item);
                lane.last_activity = at;
            }
            None => {
                match capacity {
                    Some(capacity) if outstanding < capacity && open => self.violate(
                        Contract::L4,
                        format!("key {key}: item {item} refused below capacity {capacity} (lane {lane_id} held {outstanding} unhandled)"),
                        &[index],
                    ),
                    None => self.violate(Contract::L4, format!("key {key}: item {item} refused with no capacity set"), &[index]),
                    _ => {}
                }
                self.refused.insert(item, index);
            }
        }
    }

    fn started(&mut self, index: usize, key: u64, item: u64, lane: u64) {
        if let Some(&routed) = self.refused.get(&item) {
            self.violate(
                Contract::L2,
                format!("item {item} was refused but handled"),
                &[routed, index],
            );
            return;
        }
        let Some(entry) = self.items.get(&item) else {
            self.violate(
                Contract::L2,
                format!("item {item} handled but never admitted"),
                &[index],
            );
            return;
        };
        let (admitted_lane, order, routed, started) =
            (entry.lane, entry.order, entry.routed, entry.started);
        if let Some(first) = started {
            self.violate(
                Contract::L2,
                format!("item {item} handled twice"),
                &[first, index],
            );
            return;
        }
        if admitted_lane != lane {
            let created = self.lanes.get(&lane).map_or(index, |l| l.created);
            self.violate(
                Contract::L3,
                format!("key {key}: item {item} handled by lane {lane} but admitted to lane {admitted_lane}"),
                &[routed, created, index],
            );
        }
        match self.last_started.get(&key) {
            Some(&(latest, latest_index)) if order < latest => self.violate(
                Contract::L1,
                format!("key {key}: item {item} (admitted #{order}) handled after an item admitted later (#{latest})"),
                &[routed, latest_index, index],
            ),
            _ => {
                self.last_started.insert(key, (order, index));
            }
        }
        if let Some(entry) = self.items.get_mut(&item) {
            entry.started = Some(index);
        }
    }

    fn ended(&mut self, index: usize, at: Duration, item: u64, lane: u64) {
        let Some(entry) = self.items.get_mut(&item) else {
            return; // already reported at start
        };
        if entry.ended {
            self.violate(
                Contract::L2,
                format!("item {item} finished twice"),
                &[index],
            );
            return;
        }
        entry.ended = true;
        let admitted_lane = entry.lane;
        for id in [admitted_lane, lane] {
            if let Some(l) = self.lanes.get_mut(&id) {
                l.outstanding.remove(&item);
                l.last_activity = at;
            }
        }
    }

    fn closed(
        &mut self,
        index: usize,
        at: Duration,
        key: u64,
        lane_id: u64,
        exit: String,
        context: &CheckContext,
    ) {
        let Some(lane) = self.lanes.get_mut(&lane_id) else {
            return;
        };
        lane.open = false;
        lane.closed_at = Some(at);
        lane.closed = Some(index);
        let outstanding: Vec<u64> = lane.outstanding.iter().copied().collect();
        let created = lane.created;
        if outstanding.is_empty() {
            return;
        }
        match exit.as_str() {
            "reaped" => self.violate(
                Contract::L5,
                format!("key {key}: lane {lane_id} reaped while holding {} unhandled item(s) {outstanding:?}", outstanding.len()),
                &[created, index],
            ),
            "panicked" if context.panics_kill_lanes => self.lost.extend(outstanding),
            _ => {}
        }
    }

    fn finish(&mut self, context: &CheckContext) {
        let end = self.records.iter().map(|r| r.at).max().unwrap_or_default();
        if !context.finished {
            return;
        }
        // L2 / L6: every admitted item handled (or lost with a panicked lane,
        // or behind a stuck handler).
        let unhandled: Vec<(u64, u64, usize)> = self
            .items
            .iter()
            .filter(|(item, entry)| {
                !entry.ended && !self.lost.contains(item) && !self.stuck_keys.contains(&entry.key)
            })
            .map(|(item, entry)| (*item, entry.key, entry.routed))
            .collect();
        for (item, key, routed) in unhandled.into_iter().take(3) {
            let contract = if self.stuck_keys.is_empty() {
                Contract::L2
            } else {
                Contract::L6
            };
            let why = if self.stuck_keys.is_empty() {
                String::new()
            } else {
                format!(" while key(s) {:?} were stuck", self.stuck_keys)
            };
            self.violate(
                contract,
                format!("key {key}: admitted item {item} was never handled{why}"),
                &[routed],
            );
        }
        // L5: idle lanes reaped in time; every lane ends after the drop.
        let mut found = Vec::new();
        for (id, lane) in &self.lanes {
            let idle = lane.outstanding.is_empty() && !lane.stuck;
            if let (Some(ttl), true) = (context.idle_ttl, idle) {
                let due = lane.last_activity + ttl + REAP_SLACK;
                let late = lane.closed_at.is_none_or(|closed| closed > due);
                let dropped_first = self.router_dropped.is_some_and(|dropped| dropped <= due);
                if late && !dropped_first && end > due {
                    found.push((
                        format!(
                            "key {}: lane {id} idle since {:?} was not reaped by {due:?} (TTL {ttl:?} + slack)",
                            lane.key, lane.last_activity
                        ),
                        lane.created,
                    ));
                }
            }
            if lane.open && !lane.stuck && self.router_dropped.is_some() {
                found.push((
                    format!(
                        "key {}: lane {id} still running after the router was dropped",
                        lane.key
                    ),
                    lane.created,
                ));
            }
        }
        for (message, created) in found {
            self.violate(Contract::L5, message, &[created]);
        }
    }
}

/// All lanes-contract violations in `records`.
#[must_use]
pub fn check(records: &[Record], context: &CheckContext) -> Vec<Violation> {
    let mut replay = Replay {
        records,
        ..Replay::default()
    };
    for index in 0..records.len() {
        replay.step(index, context);
    }
    replay.finish(context);
    replay.violations
}
