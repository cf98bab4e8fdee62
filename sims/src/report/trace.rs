//! A run as a Chrome / Perfetto trace-event file, stamped in *virtual* time
//! (`replay --trace FILE`; open it at ui.perfetto.dev or chrome://tracing).
//!
//! Model: the trace is written from the run's typed event log after the
//! run, not by a tracing layer during it, so every timestamp is the
//! simulation clock's (`Record::at`, µs) and writing a trace cannot perturb
//! the run it shows. One process per simulated host; one track (thread) per
//! lane key, per connection generation and per generation's writes; spans
//! for handler runs, connection lifetimes and writes; instants for faults,
//! downs, overflows, lane ends (reaps among them) and every contract
//! violation with its evidence. Every other event is an instant on its
//! host's `events` track, its typed fields as the instant's args, so the
//! trace loses nothing the log holds. Pinned by
//! `a_trace_is_trace_event_json_in_virtual_time` (a wedged peer's deadline
//! down lands `write_timeout` after its write began).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use crate::event::{ControlOutcome, DataOutcome, Event, Exit, Record};
use crate::run::RunResult;

/// Where an event is drawn.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Track {
    /// Everything not drawn elsewhere, per host.
    Events,
    /// A lane key's handler runs.
    Key(u64),
    /// A connection generation toward a peer: its lifetime and its down.
    Generation { peer: u64, generation: u64 },
    /// That generation's writes.
    Writes { peer: u64, generation: u64 },
}

impl Track {
    fn name(&self) -> String {
        match self {
            Self::Events => "events".into(),
            Self::Key(key) => format!("key {key}"),
            Self::Generation { peer, generation } => format!("to {peer} gen {generation}"),
            Self::Writes { peer, generation } => format!("to {peer} gen {generation} writes"),
        }
    }
}

/// How an event is drawn.
enum Mark {
    Begin(String),
    End,
    Instant(String),
    /// An instant that also ends the track's span (a generation's down).
    Ends(String),
}

/// The trace-event document of `result`'s run.
#[must_use]
pub fn document(result: &RunResult) -> Value {
    let mut trace = Trace::default();
    for record in &result.records {
        let (track, mark) = draw(&record.event);
        trace.push(record, track, mark);
    }
    let end = result.records.last().map_or(Duration::ZERO, |r| r.at);
    // What the run left open (a live generation, a write in flight, a
    // handler run) ends with the run: every `B` has its `E`.
    trace.close_all(end);
    for violation in &result.violations {
        let at = violation.evidence.iter().map(|r| r.at).max().unwrap_or(end);
        trace.events.push(json!({
            "name": format!("{} ({}) violated", violation.contract.id(), violation.contract.name()),
            "ph": "i",
            "s": "g",
            "ts": micros(at),
            "pid": 0,
            "tid": 0,
            "args": {
                "message": violation.message,
                "evidence": violation.evidence.iter().map(ToString::to_string).collect::<Vec<_>>(),
            },
        }));
    }
    let mut events = trace.metadata();
    events.append(&mut trace.events);
    json!({
        "displayTimeUnit": "ms",
        "otherData": {
            "scenario": result.scenario,
            "seed": result.seed,
            "params": result.params,
            "verdict": result.verdict.name(),
            "clock": "virtual (the simulation's), in microseconds",
        },
        "traceEvents": events,
    })
}

#[derive(Default)]
struct Trace {
    /// Host name → process id, in first-seen order.
    hosts: BTreeMap<String, u64>,
    /// (process, track) → thread id, in first-seen order per process.
    tracks: BTreeMap<(u64, Track), u64>,
    /// Per (process, thread): spans begun and not yet ended.
    open: BTreeMap<(u64, u64), u64>,
    events: Vec<Value>,
}

impl Trace {
    fn push(&mut self, record: &Record, track: Track, mark: Mark) {
        let next_pid = self.hosts.len() as u64 + 1;
        let pid = *self
            .hosts
            .entry(record.host.to_string())
            .or_insert(next_pid);
        let next_tid = self.tracks.keys().filter(|(p, _)| *p == pid).count() as u64;
        let tid = *self.tracks.entry((pid, track)).or_insert(next_tid);
        let args = serde_json::to_value(&record.event).unwrap_or(Value::Null);
        let ts = micros(record.at);
        let open = self.open.entry((pid, tid)).or_default();
        match mark {
            Mark::Begin(name) => {
                *open += 1;
                self.events.push(
                    json!({ "name": name, "ph": "B", "ts": ts, "pid": pid, "tid": tid, "args": args }),
                );
            }
            // An end with nothing open (a down of a generation whose up the
            // log does not hold) draws nothing: a lone `E` confuses viewers.
            Mark::End if *open == 0 => {}
            Mark::End => {
                *open -= 1;
                self.events
                    .push(json!({ "ph": "E", "ts": ts, "pid": pid, "tid": tid, "args": args }));
            }
            Mark::Instant(name) => self.events.push(json!({
                "name": name, "ph": "i", "s": "t", "ts": ts, "pid": pid, "tid": tid, "args": args,
            })),
            Mark::Ends(name) => {
                self.events.push(json!({
                    "name": name, "ph": "i", "s": "t", "ts": ts, "pid": pid, "tid": tid,
                    "args": args.clone(),
                }));
                if *open > 0 {
                    *open -= 1;
                    self.events
                        .push(json!({ "ph": "E", "ts": ts, "pid": pid, "tid": tid, "args": args }));
                }
            }
        }
    }

    /// Ends every span still open at `at`.
    fn close_all(&mut self, at: Duration) {
        let ts = micros(at);
        for (&(pid, tid), open) in &mut self.open {
            for _ in 0..*open {
                self.events
                    .push(json!({ "ph": "E", "ts": ts, "pid": pid, "tid": tid }));
            }
            *open = 0;
        }
    }

    /// Names for every process and track, and the violations' process.
    fn metadata(&self) -> Vec<Value> {
        let mut out = vec![json!({
            "name": "process_name", "ph": "M", "pid": 0, "tid": 0,
            "args": { "name": "contracts" },
        })];
        for (host, pid) in &self.hosts {
            out.push(json!({
                "name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                "args": { "name": host },
            }));
        }
        for ((pid, track), tid) in &self.tracks {
            out.push(json!({
                "name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                "args": { "name": track.name() },
            }));
        }
        out
    }
}

fn micros(at: Duration) -> u64 {
    u64::try_from(at.as_micros()).unwrap_or(u64::MAX)
}

/// Where and how one event is drawn.
fn draw(event: &Event) -> (Track, Mark) {
    let generation = |peer: u64, generation: u64| Track::Generation { peer, generation };
    let writes = |peer: u64, generation: u64| Track::Writes { peer, generation };
    match event {
        Event::HandleStart { key, item, .. } => {
            (Track::Key(*key), Mark::Begin(format!("item {item}")))
        }
        Event::HandleEnd { key, .. } => (Track::Key(*key), Mark::End),
        Event::LaneCreated { key, lane } => (
            Track::Key(*key),
            Mark::Instant(format!("lane {lane} created")),
        ),
        Event::LaneClosed { key, lane, exit } => {
            let what = match exit {
                Exit::Reaped => "reaped",
                Exit::Closed => "closed",
                Exit::Panicked => "panicked",
                Exit::Cancelled => "cancelled",
            };
            (
                Track::Key(*key),
                Mark::Instant(format!("lane {lane} {what}")),
            )
        }
        Event::Routed {
            key, depth: None, ..
        } => (Track::Key(*key), Mark::Instant("refused: full".into())),
        Event::Stuck { key, .. } => (Track::Key(*key), Mark::Instant("stuck".into())),
        Event::ConnectionUp {
            peer,
            generation: g,
            ..
        }
        | Event::MeshUp {
            peer,
            generation: g,
            ..
        } => (
            generation(*peer, *g),
            Mark::Begin(format!("generation {g}")),
        ),
        Event::ConnectionDown {
            peer,
            generation: g,
            reason,
            ..
        }
        | Event::MeshDown {
            peer,
            generation: g,
            reason,
            ..
        } => (
            generation(*peer, *g),
            Mark::Ends(format!("down: {reason:?}")),
        ),
        Event::WriteStarted {
            peer,
            generation: g,
            lane,
            seq,
        } => (
            writes(*peer, *g),
            Mark::Begin(format!("write {lane:?} {seq}")),
        ),
        Event::WriteFinished {
            peer,
            generation: g,
            ..
        }
        | Event::WriteAbandoned {
            peer,
            generation: g,
            ..
        } => (writes(*peer, *g), Mark::End),
        Event::DataEnqueued {
            outcome: DataOutcome::DroppedFull,
            ..
        } => (Track::Events, Mark::Instant("data dropped: full".into())),
        Event::ControlEnqueued {
            outcome: ControlOutcome::Overflow,
            ..
        }
        | Event::MeshControl {
            outcome: ControlOutcome::Overflow,
            ..
        } => (Track::Events, Mark::Instant("control overflow".into())),
        Event::Fault { fault, .. } => (Track::Events, Mark::Instant(format!("fault: {fault:?}"))),
        Event::MeshFault { fault } => (Track::Events, Mark::Instant(format!("fault: {fault:?}"))),
        other => (Track::Events, Mark::Instant(kind(other))),
    }
}

/// An event's kind, as the log's JSON tags it.
fn kind(event: &Event) -> String {
    serde_json::to_value(event)
        .ok()
        .and_then(|v| v.get("event").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "event".into())
}
