//! DC-1, DC-2, DC-5, S1–S5 and the end-to-end "no death signal lost" over a
//! sender-world log.
//!
//! What each means here (the peers' `FrameArrived` is ground truth for what
//! reached a socket; `ConnectionUp` maps a socket's local address to its
//! generation):
//! - DC-1: `Overflow` only once the pinned generation is down; every accepted
//!   control is written to its pinned generation or that generation goes down.
//! - DC-2: a control is only ever written to, and only ever arrives on, the
//!   generation it was pinned to.
//! - DC-5: per socket, controls arrive in enqueue order; per node, data
//!   frames arrive in enqueue order (a subsequence).
//! - S1: no enqueue call spends virtual time.
//! - S2: no write holds the drain longer than the deadline (+ slack); a write
//!   that hits the deadline takes its generation down with `WriteTimeout`; a
//!   peer that is only slow or distant is never torn down for it.
//! - S3: the down hook fires at most once per generation, with a documented
//!   reason; a generation whose peer closed its socket does go down; a down
//!   generation is never written to again.
//! - S4: every queued data frame has exactly one fate (written, failed,
//!   unroutable), nothing arrives that was not written, and the sender's
//!   counters agree with the events.
//! - S5: dropping the sender did not panic.
//! - E2E: every link is either told of by its EXIT arriving on the link's
//!   generation, or broken locally with `noconnection` (or its EXIT was
//!   written to a peer that had stopped reading, which only a heartbeat could
//!   tell).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{CheckContext, Violation};
use crate::event::{Event, Record};
use crate::fault::stops_reading;
use crate::scenario::Contract;

const REASONS: [&str; 7] = [
    "PeerClosed",
    "ReadError",
    "WriteError",
    "WriteTimeout",
    "ManualDisconnect",
    "HeartbeatTimeout",
    "ControlOverflow",
];

type Gen = (String, u64);

#[derive(Default)]
struct Model {
    /// Socket (our local address) → generation.
    sockets: BTreeMap<String, Gen>,
    downs: BTreeMap<Gen, Vec<usize>>,
    down_reasons: BTreeMap<Gen, Vec<String>>,
    /// Peers and what happened to them, with the record index.
    faults: BTreeMap<String, Vec<(String, usize)>>,
}

struct Checker<'a> {
    records: &'a [Record],
    context: &'a CheckContext,
    violations: Vec<Violation>,
}

impl Checker<'_> {
    fn violate(&mut self, contract: Contract, message: String, evidence: &[usize]) {
        let mut evidence: Vec<usize> = evidence.to_vec();
        evidence.sort_unstable();
        evidence.dedup();
        evidence.truncate(8);
        self.violations.push(Violation {
            contract,
            message,
            evidence: evidence
                .into_iter()
                .map(|i| self.records[i].clone())
                .collect(),
        });
    }
}

fn model(records: &[Record]) -> Model {
    let mut model = Model::default();
    for (index, record) in records.iter().enumerate() {
        match &record.event {
            Event::ConnectionUp {
                node,
                generation,
                local,
            } => {
                model
                    .sockets
                    .insert(local.clone(), (node.clone(), *generation));
            }
            Event::ConnectionDown {
                node,
                generation,
                reason,
            } => {
                model
                    .downs
                    .entry((node.clone(), *generation))
                    .or_default()
                    .push(index);
                model
                    .down_reasons
                    .entry((node.clone(), *generation))
                    .or_default()
                    .push(reason.clone());
            }
            Event::Fault { what, peer } => model
                .faults
                .entry(peer.clone())
                .or_default()
                .push((what.clone(), index)),
            _ => {}
        }
    }
    model
}

/// All sender-contract violations in `records`.
#[must_use]
pub fn check(records: &[Record], context: &CheckContext) -> Vec<Violation> {
    let model = model(records);
    let mut checker = Checker {
        records,
        context,
        violations: Vec::new(),
    };
    dc1(&mut checker, &model);
    dc2_dc5(&mut checker, &model);
    s1(&mut checker);
    s2(&mut checker, &model);
    s3(&mut checker, &model);
    s4(&mut checker);
    s5(&mut checker);
    end_to_end(&mut checker, &model);
    checker.violations
}

fn dc1(c: &mut Checker<'_>, model: &Model) {
    let mut written: BTreeMap<u64, Gen> = BTreeMap::new();
    for record in c.records {
        if let Event::WriteFinished {
            node,
            generation,
            lane,
            seq,
            outcome,
        } = &record.event
        {
            if lane == "control" && outcome == "written" {
                written.insert(*seq, (node.clone(), *generation));
            }
        }
    }
    for (index, record) in c.records.iter().enumerate() {
        let Event::ControlEnqueued {
            node,
            generation,
            seq,
            outcome,
            down_at_return,
            ..
        } = &record.event
        else {
            continue;
        };
        let pinned = (node.clone(), *generation);
        if outcome == "overflow" && !down_at_return {
            c.violate(
                Contract::Dc1,
                format!("control {seq}: Overflow returned while its pinned generation {node}/{generation} was still up"),
                &[index],
            );
        }
        if outcome == "queued"
            && c.context.finished
            && written.get(seq) != Some(&pinned)
            && !model.downs.contains_key(&pinned)
        {
            c.violate(
                Contract::Dc1,
                format!("control {seq} accepted against {node}/{generation} was neither written to it nor was it marked down: silently lost"),
                &[index],
            );
        }
    }
}

fn dc2_dc5(c: &mut Checker<'_>, model: &Model) {
    let pinned_of: BTreeMap<u64, u64> = c
        .records
        .iter()
        .filter_map(|r| match &r.event {
            Event::ControlEnqueued {
                seq, generation, ..
            } => Some((*seq, *generation)),
            _ => None,
        })
        .collect();
    let mut last_control: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    let mut last_data: BTreeMap<String, (u64, usize)> = BTreeMap::new();
    for (index, record) in c.records.iter().enumerate() {
        match &record.event {
            Event::WriteStarted {
                node,
                generation,
                lane,
                seq,
            } if lane == "control" => {
                let pinned = pinned_of.get(seq).copied();
                if pinned.is_some_and(|pinned| pinned != *generation) {
                    c.violate(
                        Contract::Dc2,
                        format!("control {seq} pinned to {node}/{} was written to generation {generation}", pinned.unwrap_or(0)),
                        &[index],
                    );
                }
            }
            Event::FrameArrived {
                peer,
                remote,
                lane,
                generation,
                seq,
                ..
            } => {
                let socket = model.sockets.get(remote);
                if lane == "control" {
                    if let Some((node, socket_generation)) = socket {
                        if socket_generation != generation {
                            c.violate(
                                Contract::Dc2,
                                format!("control {seq} pinned to generation {generation} arrived on {node}'s generation {socket_generation} socket"),
                                &[index],
                            );
                        }
                    }
                    if let Some(&(previous, at)) = last_control.get(remote) {
                        if *seq < previous {
                            c.violate(
                                Contract::Dc5,
                                format!("controls out of order on socket {remote} of {peer}: {seq} after {previous}"),
                                &[at, index],
                            );
                        }
                    }
                    last_control.insert(remote.clone(), (*seq, index));
                } else {
                    if let Some(&(previous, at)) = last_data.get(peer) {
                        if *seq <= previous {
                            c.violate(
                                Contract::Dc5,
                                format!("data to {peer} out of order: {seq} after {previous}"),
                                &[at, index],
                            );
                        }
                    }
                    last_data.insert(peer.clone(), (*seq, index));
                }
            }
            _ => {}
        }
    }
}

fn s1(c: &mut Checker<'_>) {
    for (index, record) in c.records.iter().enumerate() {
        if let Event::DataEnqueued { blocked_us, .. } | Event::ControlEnqueued { blocked_us, .. } =
            record.event
        {
            if blocked_us > 0 {
                c.violate(
                    Contract::S1,
                    format!("an enqueue call took {blocked_us}us of virtual time: it awaited"),
                    &[index],
                );
            }
        }
    }
}

fn s2(c: &mut Checker<'_>, model: &Model) {
    let Some(deadline) = c.context.write_timeout else {
        return;
    };
    let slack = c.context.tick * 3 + Duration::from_millis(5);
    let end = c.records.iter().map(|r| r.at).max().unwrap_or_default();
    let mut open: BTreeMap<(String, u64, String, u64), usize> = BTreeMap::new();
    for (index, record) in c.records.iter().enumerate() {
        match &record.event {
            Event::WriteStarted {
                node,
                generation,
                lane,
                seq,
            } => {
                open.insert((node.clone(), *generation, lane.clone(), *seq), index);
            }
            Event::WriteFinished {
                node,
                generation,
                lane,
                seq,
                outcome,
            } => {
                let Some(started) = open.remove(&(node.clone(), *generation, lane.clone(), *seq))
                else {
                    continue;
                };
                let took = record.at.saturating_sub(c.records[started].at);
                if took > deadline + slack {
                    c.violate(
                        Contract::S2,
                        format!("a write to {node}/{generation} held the drain for {took:?} (deadline {deadline:?})"),
                        &[started, index],
                    );
                }
                let gen = (node.clone(), *generation);
                if outcome == "timed_out" && !model.downs.contains_key(&gen) {
                    c.violate(Contract::S2, format!("a write to {node}/{generation} timed out but the generation never went down"), &[index]);
                }
            }
            _ => {}
        }
    }
    for ((node, generation, _, _), started) in open {
        let waited = end.saturating_sub(c.records[started].at);
        if waited > deadline + slack {
            c.violate(
                Contract::S2,
                format!("a write to {node}/{generation} has held the drain for {waited:?} and never finished (deadline {deadline:?})"),
                &[started],
            );
        }
    }
    for (gen, indices) in &model.downs {
        let only_slow = model.faults.get(&gen.0).is_some_and(|f| {
            f.iter()
                .all(|(what, _)| what == "slow" || what == "latency")
        });
        let timed_out = model
            .down_reasons
            .get(gen)
            .is_some_and(|r| r.iter().any(|reason| reason == "WriteTimeout"));
        if only_slow && timed_out {
            c.violate(
                Contract::S2,
                format!(
                    "{}/{}: a slow but reading peer was torn down by the write deadline",
                    gen.0, gen.1
                ),
                indices,
            );
        }
    }
}

fn s3(c: &mut Checker<'_>, model: &Model) {
    for (gen, indices) in &model.downs {
        if indices.len() > 1 {
            c.violate(
                Contract::S3,
                format!(
                    "down hook fired {} times for {}/{}",
                    indices.len(),
                    gen.0,
                    gen.1
                ),
                indices,
            );
        }
        for (reason, index) in model.down_reasons[gen].iter().zip(indices) {
            if !REASONS.contains(&reason.as_str()) {
                c.violate(
                    Contract::S3,
                    format!("undocumented down reason {reason}"),
                    &[*index],
                );
            }
        }
    }
    for (index, record) in c.records.iter().enumerate() {
        match &record.event {
            Event::WriteStarted {
                node, generation, ..
            } => {
                if let Some(&down) = model
                    .downs
                    .get(&(node.clone(), *generation))
                    .and_then(|d| d.first())
                {
                    if down < index {
                        c.violate(
                            Contract::S3,
                            format!("{node}/{generation} was written to after it went down"),
                            &[down, index],
                        );
                    }
                }
            }
            Event::PeerSocketClosed { remote, how, .. }
                if c.context.finished && (how == "killed" || how == "eof") =>
            {
                if let Some(gen) = model.sockets.get(remote) {
                    if !model.downs.contains_key(gen) {
                        c.violate(
                            Contract::S3,
                            format!(
                                "the peer closed {}/{}'s socket but the generation never went down",
                                gen.0, gen.1
                            ),
                            &[index],
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

fn s4(c: &mut Checker<'_>) {
    let mut queued: BTreeMap<(String, u64), usize> = BTreeMap::new();
    let mut fates: BTreeMap<(String, u64), Vec<usize>> = BTreeMap::new();
    let mut written: BTreeSet<(String, u64)> = BTreeSet::new();
    let mut counted = [0u64; 4];
    let mut stats = None;
    for (index, record) in c.records.iter().enumerate() {
        match &record.event {
            Event::DataEnqueued {
                node, seq, outcome, ..
            } if outcome == "queued" => {
                queued.insert((node.clone(), *seq), index);
            }
            Event::WriteFinished {
                node,
                lane,
                seq,
                outcome,
                ..
            } if lane == "data" => {
                fates.entry((node.clone(), *seq)).or_default().push(index);
                if outcome == "written" {
                    written.insert((node.clone(), *seq));
                    counted[0] += 1;
                } else {
                    counted[1] += 1;
                }
            }
            Event::DataUnroutable { node, seq } => {
                fates.entry((node.clone(), *seq)).or_default().push(index);
                counted[2] += 1;
            }
            Event::FrameArrived {
                peer, lane, seq, ..
            } if lane == "data" && !written.contains(&(peer.clone(), *seq)) => {
                c.violate(
                    Contract::S4,
                    format!("data frame {seq} arrived at {peer} but was never written"),
                    &[index],
                );
            }
            Event::SenderStats {
                data_queued,
                data_written,
                data_failed,
                data_no_connection,
                ..
            } => {
                stats = Some((
                    index,
                    [
                        *data_written,
                        *data_failed,
                        *data_no_connection,
                        *data_queued,
                    ],
                ));
            }
            _ => {}
        }
    }
    counted[3] = queued.len() as u64;
    for ((node, seq), indices) in &fates {
        if indices.len() > 1 {
            c.violate(
                Contract::S4,
                format!("data frame {seq} to {node} met {} fates", indices.len()),
                indices,
            );
        }
        if !queued.contains_key(&(node.clone(), *seq)) {
            c.violate(
                Contract::S4,
                format!("data frame {seq} to {node} was written but never queued"),
                indices,
            );
        }
    }
    if c.context.finished {
        for ((node, seq), index) in &queued {
            if !fates.contains_key(&(node.clone(), *seq)) {
                c.violate(Contract::S4, format!("queued data frame {seq} to {node} has no fate: neither written, failed nor unroutable"), &[*index]);
            }
        }
        if let Some((index, stats)) = stats {
            if stats != counted {
                c.violate(
                    Contract::S4,
                    format!("sender counters (written, failed, unroutable, queued) = {stats:?} but the events say {counted:?}"),
                    &[index],
                );
            }
        }
    }
}

fn s5(c: &mut Checker<'_>) {
    for (index, record) in c.records.iter().enumerate() {
        if let Event::SenderDropped { panicked: true } = record.event {
            c.violate(
                Contract::S5,
                "dropping the sender panicked".into(),
                &[index],
            );
        }
    }
}

fn end_to_end(c: &mut Checker<'_>, model: &Model) {
    if !c.context.finished {
        return;
    }
    let mut told: BTreeSet<u64> = BTreeSet::new();
    let mut written_to_silent: BTreeSet<u64> = BTreeSet::new();
    let mut exit_seq: BTreeMap<u64, u64> = BTreeMap::new();
    for record in c.records {
        match &record.event {
            Event::ControlEnqueued {
                seq,
                link: Some(link),
                ..
            } => {
                exit_seq.insert(*seq, *link);
            }
            Event::FrameArrived {
                remote,
                lane,
                generation,
                link: Some(link),
                ..
            } if lane == "control"
                && model
                    .sockets
                    .get(remote)
                    .is_some_and(|(_, g)| g == generation) =>
            {
                told.insert(*link);
            }
            Event::NoConnection { link, .. } => {
                told.insert(*link);
            }
            Event::WriteFinished {
                node,
                lane,
                seq,
                outcome,
                ..
            } if lane == "control" && outcome == "written" => {
                let silent = model
                    .faults
                    .get(node)
                    .is_some_and(|f| f.iter().any(|(what, _)| stops_reading(what)));
                if let (true, Some(link)) = (silent, exit_seq.get(seq)) {
                    written_to_silent.insert(*link);
                }
            }
            _ => {}
        }
    }
    for (index, record) in c.records.iter().enumerate() {
        if let Event::Linked {
            node,
            generation,
            link,
        } = &record.event
        {
            if !told.contains(link) && !written_to_silent.contains(link) {
                c.violate(
                    Contract::EndToEnd,
                    format!("link {link} over {node}/{generation}: its EXIT never arrived and no noconnection was delivered: a lost death signal"),
                    &[index],
                );
            }
        }
    }
}
