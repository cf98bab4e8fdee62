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
//! - L5: no lane is reaped holding work or before it has been idle for its
//!   TTL; every idle stretch (not only the last) ends in a reap within
//!   TTL and slack, or in new work before that; after the router is
//!   dropped, every lane ends.
//! - The dispatcher's counters (lanes created and live, items shed, handler
//!   panics) agree with the log (L5, L4, L2 respectively).
//! - L6: a key's items wait for nothing but their own lane: an item starts
//!   within slack of being ready (routed, and its lane's previous item
//!   done), a key is never refused because another key is full, with a
//!   key stuck forever every other key's items are still handled, and no
//!   lane handles more than [`MAX_RUN`] items in a row while another key's
//!   item waits ready (a lane with a backlog of instant handlers must
//!   yield its thread: in virtual time a monopolised thread costs nothing,
//!   so the count, not the clock, shows it).
//!
//! A target that reports no lane lifecycle (`Reported::lifecycle` false)
//! logs no `LaneCreated` or `LaneClosed`, and its handlers' lanes are the
//! tasks they ran on, numbered by the world. Then each key stands for its
//! lane (admission, depth, capacity and readiness are counted per key,
//! which is per lane for a router with one live lane per key), and L3 is
//! decided from the tasks: a key's items never run on two tasks at once,
//! and never on an older task after a newer one began (two live lanes for
//! one key). L5 needs the lifecycle: in simulation the world infers it
//! from the target's tasks and, where that holds for a run, the run is
//! checked as if the target had reported it (`world::lanes::infer`); where
//! it does not, any lifecycle events in the log are not read and L5 is not
//! decided for the run (`run::judge`).
//!
//! Slack. Virtual time is exact in the lanes world, so the slack is what
//! the code itself allows: tokio's timers fire up to 1 ms late (their wheel
//! rounds deadlines up to the millisecond), and each preemption point on
//! the path may hold a task for up to `preempt_max` (two lie between a
//! lane's idle timeout and the log of its end: `lane.idle_before_reap` and
//! `lane.reaped_before_exit`; none between an item becoming ready and its
//! handler starting, but `lane.idle_before_reap` when the item arrives while
//! the lane is deciding to reap). In real mode the context's tick is raised
//! to real scheduling's grain, and both slacks grow by the excess.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::holds::Holds;
use super::{CheckContext, Collector, Violation};
use crate::event::{Event, Exit, Record};
use crate::scenario::Contract;

/// The most items one lane may handle in a row while another key's item
/// waits ready (L6): twice the 16,384 a lanesim lane handles between two
/// yields (128 items per unit of tokio's coop budget of 128, a tenth of a
/// millisecond of instant handlers), so a router that yields as tokio's
/// own resources do passes, and one whose lane never yields over a backlog
/// is caught (`l6_detects_a_lane_that_never_yields_its_thread`,
/// `lanes_flooded_key`).
pub const MAX_RUN: u64 = 32_768;

/// The current run of one key's starts, back to back in the log.
struct Run {
    key: u64,
    len: u64,
    /// The record of its first start.
    first: usize,
    /// Whether it was already found too long.
    reported: bool,
}

/// How late a tokio timer may fire: its wheel rounds deadlines up to the
/// next millisecond.
const TIMER_GRAIN: Duration = Duration::from_millis(1);

#[derive(Default)]
struct Lane {
    key: u64,
    open: bool,
    /// Items admitted here that have not ended, by admission index.
    outstanding: BTreeSet<u64>,
    /// Since when (and from which record) the lane has had no work.
    idle_since: Option<(Duration, usize)>,
    /// When the lane's last item ended.
    last_end: Option<Duration>,
    closed: Option<usize>,
    created: usize,
    stuck: bool,
    /// Items whose end is logged that the lane may not have acknowledged
    /// yet ([`CheckContext::late_acks`]): since its last start.
    unacked: u64,
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

struct Replay<'a> {
    records: &'a [Record],
    /// The time the scheduling explorer held tasks ([`Holds`]).
    holds: Holds,
    out: Collector<'a>,
    context: &'a CheckContext,
    lanes: BTreeMap<u64, Lane>,
    /// Per key, its open lanes (what `created` looks at, without a walk
    /// over every lane the run ever had).
    open_by_key: BTreeMap<u64, BTreeSet<u64>>,
    current: BTreeMap<u64, u64>,
    items: BTreeMap<u64, Item>,
    refused: BTreeMap<u64, usize>,
    admissions: BTreeMap<u64, u64>,
    last_started: BTreeMap<u64, (u64, usize)>,
    stuck_keys: BTreeSet<u64>,
    lost: BTreeSet<u64>,
    router_dropped: Option<Duration>,
    /// Inferred lanes only: per key, the newest task lane an item of it ran
    /// on (and the record), and the items running now, per task lane.
    newest_task: BTreeMap<u64, (u64, usize)>,
    running: BTreeMap<u64, BTreeMap<u64, (u64, usize)>>,
    /// The key whose items started last, back to back ([`MAX_RUN`]).
    run: Option<Run>,
}

/// The lane a key stands for when the target reports no lanes: outside
/// the range of the world's task numbers.
const KEY_LANE: u64 = 1 << 63;

impl Replay<'_> {
    fn violate(&mut self, contract: Contract, message: String, evidence: &[usize]) {
        self.out.violate(contract, message, evidence);
    }

    /// How long past its TTL an idle lane's end may be logged, for a reap
    /// due in a window from `from` to `to`: its idle timer fires up to a
    /// grain late, a preemption point may hold the reap decision, another
    /// may hold the reaped lane before its exit guard logs the end, and
    /// the scheduling explorer may have held tasks in the window.
    fn reap_slack(&self, from: Duration, to: Duration) -> Duration {
        TIMER_GRAIN + self.lateness() + self.context.preempt_max * 2 + self.holds.within(from, to)
    }

    /// How long an item ready at `from` may wait to start, if it started
    /// at `to`.
    fn start_slack(&self, from: Duration, to: Duration) -> Duration {
        self.context.preempt_max + self.lateness() + self.holds.within(from, to)
    }

    /// How late a thread may wake beyond what the slacks above model: none
    /// in simulation (the tick is the timer's grain, and virtual time is
    /// exact); in real mode the tick is raised to real scheduling's grain
    /// (`real::real_grain`, which grows with the lateness the run
    /// measured), and the excess is how late a real thread
    /// may run.
    fn lateness(&self) -> Duration {
        self.context.tick.saturating_sub(TIMER_GRAIN)
    }

    /// Whether lanes are inferred from tasks (no lifecycle reports).
    fn inferred(&self) -> bool {
        !self.context.reported.lifecycle
    }

    /// Inferred lanes: the lane `key` stands for, made on its first route.
    fn key_lane(&mut self, index: usize, key: u64) -> u64 {
        let lane = KEY_LANE | key;
        if let std::collections::btree_map::Entry::Vacant(entry) = self.lanes.entry(lane) {
            entry.insert(Lane {
                key,
                open: true,
                created: index,
                ..Lane::default()
            });
            self.current.insert(key, lane);
        }
        lane
    }

    /// Inferred lanes, a raw router: a handler of `key` panicked, which may
    /// kill its lane (no lifecycle report says whether it did). What was
    /// queued behind it may die with the lane; anything admitted after this
    /// record went to a lane alive at its route, and must be handled (a
    /// black hole otherwise: L2).
    fn died_with(&mut self, key: u64) {
        let queued: Vec<u64> = self
            .items
            .iter()
            .filter(|(_, item)| item.key == key && item.started.is_none())
            .map(|(id, _)| *id)
            .collect();
        // The key's next lane starts empty: what died here holds no room.
        if let Some(lane) = self.lanes.get_mut(&(KEY_LANE | key)) {
            for item in &queued {
                lane.outstanding.remove(item);
            }
        }
        self.lost.extend(queued);
    }

    /// Inferred lanes: L3 from the task an item of `key` starts on.
    fn started_on_task(&mut self, index: usize, key: u64, item: u64, task: u64) {
        match self.newest_task.get(&key) {
            Some(&(newest, newest_index)) if task < newest => self.violate(
                Contract::L3,
                format!("key {key}: item {item} ran on task {task} after an item of the key had begun on the newer task {newest}: two live lanes"),
                &[newest_index, index],
            ),
            _ => {
                self.newest_task.insert(key, (task, index));
            }
        }
        let running = self.running.entry(key).or_default();
        let others: Vec<(u64, u64, usize)> = running
            .iter()
            .filter(|(other, _)| **other != task)
            .map(|(other, (running_item, at))| (*other, *running_item, *at))
            .collect();
        running.insert(task, (item, index));
        for (other, running_item, at) in others {
            self.violate(
                Contract::L3,
                format!("key {key}: item {item} began on task {task} while item {running_item} of the key still ran on task {other}: two live lanes"),
                &[at, index],
            );
        }
    }

    fn step(&mut self, index: usize) {
        let record = &self.records[index];
        let at = record.at;
        match record.event {
            // Inferred lanes: a lifecycle the world inferred but could not
            // vouch for (`world::lanes::infer`) is not read.
            Event::LaneCreated { .. } | Event::LaneClosed { .. } if self.inferred() => {}
            Event::LaneCreated { key, lane } => self.created(index, key, lane),
            Event::Routed {
                key,
                item,
                capacity,
                depth,
            } => self.routed(index, at, key, item, capacity, depth),
            Event::HandleStart { key, item, lane } => self.started(index, at, key, item, lane),
            Event::HandleEnd {
                key,
                item,
                lane,
                panicked,
            } => {
                self.ended(index, at, item, lane);
                if panicked && self.inferred() && self.context.panics_kill_lanes {
                    self.died_with(key);
                }
            }
            Event::Stuck { key, lane, .. } => {
                self.stuck_keys.insert(key);
                let lane = if self.inferred() {
                    KEY_LANE | key
                } else {
                    lane
                };
                if let Some(lane) = self.lanes.get_mut(&lane) {
                    lane.stuck = true;
                }
            }
            Event::LaneClosed { key, lane, exit } => self.closed(index, at, key, lane, exit),
            Event::RouterDropped => self.router_dropped = Some(at),
            Event::DispatcherStats {
                lanes_created,
                lanes_live,
                items_shed,
                handler_panics,
            } => self.counters(
                index,
                [lanes_created, lanes_live, items_shed, handler_panics],
            ),
            // Overlapping routes are decided apart, without a
            // linearisation (`check::overlap`).
            Event::RouteBegan { .. } => {}
            // The sender world's events, and the markers both worlds log.
            Event::ConnectionUp { .. }
            | Event::ConnectionDown { .. }
            | Event::DialFailed { .. }
            | Event::DataEnqueued { .. }
            | Event::ControlEnqueued { .. }
            | Event::WriteStarted { .. }
            | Event::WriteFinished { .. }
            | Event::WriteAbandoned { .. }
            | Event::ControlSkipped { .. }
            | Event::ControlDiscarded { .. }
            | Event::DataUnroutable { .. }
            | Event::DataDiscarded { .. }
            | Event::FrameWriteBegun { .. }
            | Event::HandshakeWriteBegun { .. }
            | Event::Linked { .. }
            | Event::NoConnection { .. }
            | Event::PeerAccepted { .. }
            | Event::FrameArrived { .. }
            | Event::InboundFrameRead { .. }
            | Event::PeerActed { .. }
            | Event::PeerSocketClosed { .. }
            | Event::Fault { .. }
            | Event::ShutdownRequested
            | Event::Disconnected { .. }
            | Event::SenderStats(_)
            | Event::TableAtEnd { .. }
            | Event::WorkloadDone
            | Event::NodeStarted { .. }
            | Event::MeshUp { .. }
            | Event::MeshDown { .. }
            | Event::MeshLinked { .. }
            | Event::MeshControl { .. }
            | Event::MeshArrived { .. }
            | Event::MeshStrayFrame { .. }
            | Event::MeshNoConnection { .. }
            | Event::MeshFault { .. }
            | Event::MeshSquat { .. }
            | Event::MeshClaim { .. }
            | Event::MeshProbe { .. }
            | Event::MeshFloodProbe { .. }
            | Event::MeshFloodHeld { .. }
            | Event::MeshDescriptorsOut { .. }
            | Event::MeshImpostor { .. }
            | Event::MeshTrickle { .. }
            | Event::MeshDialFailed { .. }
            | Event::MeshMisdialed { .. }
            | Event::MeshStranger { .. }
            | Event::MeshHeld { .. }
            | Event::MeshBudgetDown { .. }
            | Event::MeshIntruderDown { .. }
            | Event::MeshTableAtEnd { .. }
            | Event::MeshDialedTogether { .. }
            | Event::MeshDataSent { .. }
            | Event::MeshDataArrived { .. }
            | Event::RunEnd { .. }
            | Event::TaskHeld { .. } => {}
        }
    }

    /// The dispatcher's counters against the log so far: lanes created and
    /// live (L5), items shed (L4), handler panics (L2).
    fn counters(&mut self, index: usize, said: [u64; 4]) {
        let created = self.lanes.len() as u64;
        let live = self.lanes.values().filter(|lane| lane.open).count() as u64;
        let shed = self.refused.len() as u64;
        let panics = self.records[..index]
            .iter()
            .filter(|r| matches!(r.event, Event::HandleEnd { panicked: true, .. }))
            .count() as u64;
        // A raw router catches no panic: it counts none it did not catch.
        let panics = if self.context.panics_kill_lanes {
            said[3]
        } else {
            panics
        };
        // Lanes created and live are the lifecycle's to say.
        let (created, live) = if self.inferred() {
            (said[0], said[1])
        } else {
            (created, live)
        };
        let seen = [created, live, shed, panics];
        let names = [
            "lanes created",
            "lanes live",
            "items shed",
            "handler panics",
        ];
        let contracts = [Contract::L5, Contract::L5, Contract::L4, Contract::L2];
        for ((name, contract), (said, seen)) in
            names.iter().zip(contracts).zip(said.iter().zip(seen))
        {
            if *said != seen {
                self.violate(
                    contract,
                    format!("the dispatcher counts {said} {name} but the log shows {seen}"),
                    &[index],
                );
            }
        }
    }

    /// L5: the router's drop is a lane's death signal. Once the router is
    /// gone and the lane's last item has ended, the disconnect must end it
    /// within the reap's slack, not at its next idle timeout or never (a
    /// lost wake-up on the last sender's drop ends a lane with a TTL only
    /// when its timer fires; `l5_detects_a_lane_ended_late_after_the_drop`).
    fn ended_late_after_drop(&mut self, lane_id: u64, at: Duration, index: usize) {
        let (Some(dropped), Some(lane)) = (self.router_dropped, self.lanes.get(&lane_id)) else {
            return;
        };
        if lane.stuck || !lane.outstanding.is_empty() {
            return;
        }
        let free = lane.last_end.map_or(dropped, |end| end.max(dropped));
        let due = free + self.reap_slack(free, at);
        if at > due {
            let (key, created) = (lane.key, lane.created);
            self.violate(
                Contract::L5,
                format!(
                    "key {key}: lane {lane_id} ended only at {at:?}, though the router was dropped at {dropped:?} and its work was done by {free:?} (due by {due:?})"
                ),
                &[created, index],
            );
        }
    }

    /// L5: an idle stretch that ends at `at` (new work, or the end of the
    /// log) lasted past TTL + slack without a reap.
    fn idle_too_long(&mut self, lane_id: u64, at: Duration, cited: usize, what: &str) {
        let (Some(ttl), Some(lane)) = (self.context.idle_ttl, self.lanes.get(&lane_id)) else {
            return;
        };
        let Some((since, since_index)) = lane.idle_since else {
            return;
        };
        let due = since + ttl + self.reap_slack(since, at);
        let dropped_first = self.router_dropped.is_some_and(|dropped| dropped <= due);
        if lane.open && !lane.stuck && at > due && !dropped_first {
            let (key, created) = (lane.key, lane.created);
            self.violate(
                Contract::L5,
                format!(
                    "key {key}: lane {lane_id}, idle since {since:?}, was not reaped by {due:?} (TTL {ttl:?} + slack) and {what} at {at:?}"
                ),
                &[created, since_index, cited],
            );
        }
    }

    fn created(&mut self, index: usize, key: u64, lane: u64) {
        let open = self.open_by_key.entry(key).or_default();
        let busy: Vec<(u64, usize)> = open
            .iter()
            .map(|id| (*id, &self.lanes[id]))
            .filter(|(id, l)| l.key == key && l.open && *id != lane && !l.outstanding.is_empty())
            .map(|(id, l)| (id, l.created))
            .collect();
        open.insert(lane);
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
        if self.inferred() {
            self.key_lane(index, key);
        }
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
        // What the target may still count: ends logged but not yet
        // acknowledged by the lane (`CheckContext::late_acks`).
        let counted = outstanding + lane.unacked;
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
                if depth < outstanding || depth > counted {
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
                self.idle_too_long(lane_id, at, index, "took a new item");
                let lane = self.lanes.get_mut(&lane_id).expect("current lane exists");
                lane.outstanding.insert(item);
                lane.idle_since = None;
            }
            None => {
                match capacity {
                    Some(capacity) if counted < capacity && open => {
                        self.violate(
                            Contract::L4,
                            format!("key {key}: item {item} refused below capacity {capacity} (lane {lane_id} held {outstanding} unhandled)"),
                            &[index],
                        );
                        let full = self.lanes.iter().find(|(id, other)| {
                            **id != lane_id
                                && other.open
                                && other.outstanding.len() as u64 >= capacity
                        });
                        if let Some((other, full)) = full {
                            let (other_key, created) = (full.key, full.created);
                            self.violate(
                                Contract::L6,
                                format!("key {key}: item {item} refused while its own lane held {outstanding} of {capacity}, as key {other_key}'s lane {other} was full: one key's backlog shed another's item"),
                                &[created, index],
                            );
                        }
                    }
                    None => self.violate(
                        Contract::L4,
                        format!("key {key}: item {item} refused with no capacity set"),
                        &[index],
                    ),
                    _ => {}
                }
                self.refused.insert(item, index);
            }
        }
    }

    fn started(&mut self, index: usize, at: Duration, key: u64, item: u64, lane: u64) {
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
        if self.inferred() {
            self.started_on_task(index, key, item, lane);
        } else if admitted_lane != lane {
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
        self.extend_run(index, key);
        // L6: ready since it was routed and its lane's previous item ended.
        let routed_at = self.records[routed].at;
        let own = if self.inferred() { admitted_lane } else { lane };
        // The lane starts its next item only once it has acknowledged the
        // previous one.
        if let Some(l) = self.lanes.get_mut(&own) {
            l.unacked = 0;
        }
        let previous_end = self.lanes.get(&own).and_then(|l| l.last_end);
        let ready = previous_end.map_or(routed_at, |end| end.max(routed_at));
        let waited = at.saturating_sub(ready);
        let slack = self.start_slack(ready, at);
        if waited > slack && !self.stuck_keys.contains(&key) {
            self.violate(
                Contract::L6,
                format!("key {key}: item {item} was ready at {ready:?} but started only at {at:?} ({waited:?} later, slack {slack:?}): its lane stalled"),
                &[routed, index],
            );
        }
    }

    /// L6: one more start of `key`, back to back with its run or a new
    /// run; a run past [`MAX_RUN`] while another key's item waited ready
    /// (routed before the run began, its key running nothing and not
    /// stuck) is a lane that kept its thread.
    fn extend_run(&mut self, index: usize, key: u64) {
        let run = match &mut self.run {
            Some(run) if run.key == key => {
                run.len += 1;
                run
            }
            _ => self.run.insert(Run {
                key,
                len: 1,
                first: index,
                reported: false,
            }),
        };
        if run.len <= MAX_RUN || run.reported {
            return;
        }
        run.reported = true;
        let (first, len) = (run.first, run.len);
        let busy: BTreeSet<u64> = self
            .items
            .values()
            .filter(|i| i.started.is_some() && !i.ended)
            .map(|i| i.key)
            .collect();
        let waiting = self.items.iter().find(|(_, i)| {
            i.key != key
                && i.started.is_none()
                && i.routed < first
                && !busy.contains(&i.key)
                && !self.stuck_keys.contains(&i.key)
        });
        if let Some((&waited, i)) = waiting {
            let (other, routed) = (i.key, i.routed);
            self.violate(
                Contract::L6,
                format!("key {key}'s lane handled {len} items in a row while key {other}'s item {waited} waited ready: a lane with a backlog kept its thread (at most {MAX_RUN} in a row)"),
                &[routed, first, index],
            );
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
        let key = entry.key;
        if let Some(running) = self.running.get_mut(&key) {
            if running
                .get(&lane)
                .is_some_and(|(running_item, _)| *running_item == item)
            {
                running.remove(&lane);
            }
        }
        if self.context.late_acks {
            if let Some(l) = self.lanes.get_mut(&admitted_lane) {
                l.unacked += 1;
            }
        }
        for id in [admitted_lane, lane] {
            if let Some(l) = self.lanes.get_mut(&id) {
                l.outstanding.remove(&item);
                l.last_end = Some(at);
                if l.outstanding.is_empty() && l.open {
                    l.idle_since = Some((at, index));
                }
            }
        }
    }

    fn closed(&mut self, index: usize, at: Duration, key: u64, lane_id: u64, exit: Exit) {
        if exit == Exit::Reaped {
            self.idle_too_long(lane_id, at, index, "reaped only");
            let early = match (self.context.idle_ttl, self.lanes.get(&lane_id)) {
                (Some(ttl), Some(lane)) => lane
                    .idle_since
                    .filter(|(since, _)| at < *since + ttl)
                    .map(|(since, since_index)| (since, since_index, ttl)),
                _ => None,
            };
            if let Some((since, since_index, ttl)) = early {
                let idle = at.saturating_sub(since);
                self.violate(
                    Contract::L5,
                    format!(
                        "key {key}: lane {lane_id} reaped after only {idle:?} idle (TTL {ttl:?})"
                    ),
                    &[since_index, index],
                );
            }
        }
        if exit == Exit::Closed {
            self.ended_late_after_drop(lane_id, at, index);
            // `Closed` is the drop's death signal: a lane that says it
            // ended so while the router lives ended for another reason
            // (reaped, cancelled) reported wrongly, or ended for nothing.
            if self.router_dropped.is_none() {
                let created = self.lanes.get(&lane_id).map_or(index, |l| l.created);
                self.violate(
                    Contract::L5,
                    format!("key {key}: lane {lane_id} ended as closed by the router's drop, but the router was not dropped"),
                    &[created, index],
                );
            }
        }
        let Some(lane) = self.lanes.get_mut(&lane_id) else {
            return;
        };
        if let Some(open) = self.open_by_key.get_mut(&lane.key) {
            open.remove(&lane_id);
        }
        lane.open = false;
        lane.closed = Some(index);
        lane.idle_since = None;
        lane.unacked = 0;
        let outstanding: Vec<u64> = lane.outstanding.iter().copied().collect();
        let created = lane.created;
        if outstanding.is_empty() {
            return;
        }
        match exit {
            Exit::Reaped => self.violate(
                Contract::L5,
                format!("key {key}: lane {lane_id} reaped while holding {} unhandled item(s) {outstanding:?}", outstanding.len()),
                &[created, index],
            ),
            Exit::Panicked if self.context.panics_kill_lanes => self.lost.extend(outstanding),
            Exit::Panicked | Exit::Closed | Exit::Cancelled => {}
        }
    }

    fn finish(&mut self) {
        let end = self.records.iter().map(|r| r.at).max().unwrap_or_default();
        if !self.context.finished {
            return;
        }
        // L2 (and L6 when a key is stuck): every admitted item handled, or
        // lost with a panicked raw lane, or queued behind a stuck handler.
        let unhandled: Vec<(u64, u64, usize)> = self
            .items
            .iter()
            .filter(|(item, entry)| {
                !entry.ended && !self.lost.contains(item) && !self.stuck_keys.contains(&entry.key)
            })
            .map(|(item, entry)| (*item, entry.key, entry.routed))
            .collect();
        for (item, key, routed) in unhandled.into_iter().take(3) {
            self.violate(
                Contract::L2,
                format!("key {key}: admitted item {item} was never handled"),
                &[routed],
            );
            if !self.stuck_keys.is_empty() {
                let stuck = self.stuck_keys.clone();
                self.violate(
                    Contract::L6,
                    format!("key {key}: admitted item {item} was never handled while key(s) {stuck:?} were stuck"),
                    &[routed],
                );
            }
        }
        // L5: an idle stretch still open at the end; every lane ends after
        // the drop.
        let last = self.records.len().saturating_sub(1);
        let ids: Vec<u64> = self.lanes.keys().copied().collect();
        for id in ids {
            self.idle_too_long(id, end, last, "was still there");
            let lane = &self.lanes[&id];
            if lane.open && !lane.stuck && self.router_dropped.is_some() {
                let (key, created) = (lane.key, lane.created);
                self.violate(
                    Contract::L5,
                    format!("key {key}: lane {id} still running after the router was dropped"),
                    &[created],
                );
            }
        }
    }
}

/// All lanes-contract violations in `records`.
#[must_use]
pub fn check(records: &[Record], context: &CheckContext) -> Vec<Violation> {
    let mut replay = Replay {
        records,
        holds: Holds::of(records, context.tick),
        out: Collector::new(records),
        context,
        lanes: BTreeMap::new(),
        open_by_key: BTreeMap::new(),
        current: BTreeMap::new(),
        items: BTreeMap::new(),
        refused: BTreeMap::new(),
        admissions: BTreeMap::new(),
        last_started: BTreeMap::new(),
        stuck_keys: BTreeSet::new(),
        lost: BTreeSet::new(),
        router_dropped: None,
        newest_task: BTreeMap::new(),
        running: BTreeMap::new(),
        run: None,
    };
    for index in 0..records.len() {
        replay.step(index);
    }
    replay.finish();
    replay.out.into_violations()
}
