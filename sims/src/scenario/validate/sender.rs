//! The `[sender]` table and its `[[sender.fault]]` entries: peers, frames
//! and the memory they may take, queues, deadlines, the tick, faults.

use std::time::Duration;

use super::common::{
    at_most, count, no_longer, preemption, problem, span, Preemption, Problem,
    MESH_TICKS_PER_HEARTBEAT,
};
use crate::scenario::limits::{self, MAX_PEERS, SLOW_FRACTION};
use crate::scenario::position::KeyPath;
use crate::scenario::sample::Dur;
use crate::scenario::spec::{FaultKind, SenderSpec, TORN_FRAME_LEN};

/// `sender.<field>`.
fn key(field: &str) -> KeyPath {
    KeyPath::field("sender", field)
}

pub(super) fn validate(sender: &SenderSpec, problems: &mut Vec<Problem>) {
    count(&key("peers"), &sender.peers, 1, problems);
    if sender.peers.bounds().1 > MAX_PEERS {
        problems.push(problem(
            key("peers"),
            format!("more peers than the simulated network has addresses ({MAX_PEERS})"),
        ));
    }
    count(&key("data_frames"), &sender.data_frames, 0, problems);
    count(&key("links"), &sender.links, 0, problems);
    count(&key("frame_bytes"), &sender.frame_bytes, 0, problems);
    span(&key("gap"), &sender.gap, false, problems);
    at_most(
        &key("data_frames"),
        &sender.data_frames,
        limits::FRAMES,
        problems,
    );
    at_most(&key("links"), &sender.links, limits::FRAMES, problems);
    at_most(
        &key("frame_bytes"),
        &sender.frame_bytes,
        limits::FRAME_BYTES,
        problems,
    );
    no_longer(&key("gap"), &sender.gap, limits::SPAN, problems);
    // Each frame's payload is allocated when it is enqueued, and a run may
    // hold all of them at once (a wedged peer): bound their product, not
    // only each, so no file inside the bounds exhausts the memory.
    let frames = sender
        .data_frames
        .bounds()
        .1
        .saturating_mul(sender.frame_bytes.bounds().1);
    if frames > limits::RUN_FRAME_BYTES {
        problems.push(problem(
            key("frame_bytes"),
            format!(
                "data_frames x frame_bytes may reach {} MiB of frames in one run; at most {} MiB (lower either)",
                frames >> 20,
                limits::RUN_FRAME_BYTES >> 20
            ),
        ));
    }
    for (field, value, max) in [
        ("data_capacity", &sender.data_capacity, limits::QUEUE),
        ("control_capacity", &sender.control_capacity, limits::QUEUE),
        ("mss", &sender.mss, limits::SEGMENTS),
        ("tcp_capacity", &sender.tcp_capacity, limits::SEGMENTS),
        ("chaos", &sender.chaos, limits::FAULTS),
    ] {
        if let Some(value) = value {
            at_most(&key(field), value, max, problems);
        }
    }
    for (field, value) in [
        ("write_timeout", sender.write_timeout.as_ref()),
        ("connect_timeout", sender.connect_timeout.as_ref()),
        ("redial_after", sender.redial_after.as_ref()),
        ("shutdown_at", sender.shutdown_at.as_ref()),
    ] {
        if let Some(value) = value {
            no_longer(&key(field), value, limits::SPAN, problems);
        }
    }
    if sender
        .tick
        .is_some_and(|tick| !tick.0.is_zero() && tick.0 < limits::MIN_TICK)
    {
        problems.push(problem(
            key("tick"),
            format!(
                "at least {}: every host is polled once per tick",
                Dur(limits::MIN_TICK)
            ),
        ));
    }
    if sender
        .tick
        .is_some_and(|tick| tick.0 > Duration::from_secs(1))
    {
        problems.push(problem(key("tick"), "at most 1s"));
    }
    if sender.chaos_kinds.as_ref().is_some_and(Vec::is_empty) {
        problems.push(problem(
            key("chaos_kinds"),
            "name at least one kind (or leave it out for all)",
        ));
    }
    // A kind listed twice is drawn twice as often (a weight), so repeats
    // are allowed, up to a bound: a list of thousands is a file's size
    // spent on nothing.
    if sender
        .chaos_kinds
        .as_ref()
        .is_some_and(|kinds| kinds.len() > limits::CHAOS_KINDS)
    {
        problems.push(problem(
            key("chaos_kinds"),
            format!(
                "at most {} entries (a kind may repeat, to weigh it)",
                limits::CHAOS_KINDS
            ),
        ));
    }
    if sender.fault.len() as u64 > limits::FAULTS {
        problems.push(problem(
            key("fault"),
            format!("at most {} scripted faults", limits::FAULTS),
        ));
    }
    for (field, value) in [
        ("data_capacity", &sender.data_capacity),
        ("control_capacity", &sender.control_capacity),
        ("mss", &sender.mss),
        ("tcp_capacity", &sender.tcp_capacity),
    ] {
        if let Some(value) = value {
            count(&key(field), value, 1, problems);
        }
    }
    for (field, value) in [
        ("write_timeout", &sender.write_timeout),
        ("connect_timeout", &sender.connect_timeout),
        ("redial_after", &sender.redial_after),
    ] {
        if let Some(value) = value {
            span(&key(field), value, true, problems);
        }
    }
    if sender.tick.is_some_and(|tick| tick.0.is_zero()) {
        problems.push(problem(key("tick"), "must be greater than zero"));
    }
    if let Some(chaos) = &sender.chaos {
        count(&key("chaos"), chaos, 0, problems);
    }
    if let Some(at) = &sender.shutdown_at {
        span(&key("shutdown_at"), at, false, problems);
    }
    preemption(
        "sender",
        &Preemption {
            preempt: sender.preempt.as_ref(),
            preempt_for: sender.preempt_for.as_ref(),
            shuffle: sender.shuffle.as_ref(),
            preempt_awaits: sender.preempt_awaits.as_ref(),
        },
        problems,
    );
    faults(sender, problems);
}

/// Each `[[sender.fault]]`: a peer that exists, a tear inside a frame,
/// `for` exactly when the kind lasts, a slow reader that is not a wedge.
fn faults(sender: &SenderSpec, problems: &mut Vec<Problem>) {
    let min_peers = sender.peers.bounds().0;
    for (index, fault) in sender.fault.iter().enumerate() {
        let key = |field: &str| KeyPath::field("sender", "fault").index(index).key(field);
        count(&key("peer"), &fault.peer, 0, problems);
        if fault.peer.bounds().1 >= min_peers {
            problems.push(problem(
                key("peer"),
                format!(
                    "peer index {} does not exist: there may be only {min_peers} peers",
                    fault.peer.bounds().1
                ),
            ));
        }
        span(&key("at"), &fault.at, false, problems);
        match (&fault.bytes, fault.kind == FaultKind::TornFrame) {
            (Some(bytes), true) => {
                count(&key("bytes"), bytes, 1, problems);
                if bytes.bounds().1 >= TORN_FRAME_LEN {
                    problems.push(problem(
                        key("bytes"),
                        format!(
                            "a torn frame is {TORN_FRAME_LEN} bytes long: tear it 1 to {} bytes in (got {})",
                            TORN_FRAME_LEN - 1,
                            bytes.bounds().1
                        ),
                    ));
                }
            }
            (Some(_), false) => problems.push(problem(
                key("bytes"),
                "only a torn_frame fault takes `bytes`",
            )),
            (None, _) => {}
        }
        if fault.split.is_some() && fault.kind != FaultKind::OversizeFrame {
            problems.push(problem(
                key("split"),
                "only an oversize_frame fault takes `split`",
            ));
        }
        match (&fault.lasting, fault.kind.lasts()) {
            (Some(lasting), true) => span(&key("for"), lasting, true, problems),
            (None, true) => problems.push(problem(
                key("kind"),
                "this fault needs `for` (how long, or the read interval for slow)",
            )),
            (Some(_), false) => problems.push(problem(
                key("for"),
                "this fault happens once; `for` would be ignored",
            )),
            (None, false) => {}
        }
        // Slow is not wedged: a reader that takes longer between frames than
        // a fraction of the deadline can make a healthy write time out, and
        // S7 holds that a slow peer never goes down.
        if let (FaultKind::Slow, Some(every)) = (fault.kind, &fault.lasting) {
            let deadline = sender
                .write_timeout
                .map_or(Duration::from_secs(5), |t| t.bounds().0 .0);
            if every.bounds().1 .0 * SLOW_FRACTION > deadline {
                problems.push(problem(
                    key("for"),
                    format!(
                        "a slow peer's read interval must be at most 1/{SLOW_FRACTION} of the write deadline ({}): slower is a wedge",
                        Dur(deadline)
                    ),
                ));
            }
        }
    }
}

/// Sender timings that can only fail for the testbed's own reasons: a
/// heartbeat a simulated link cannot carry, a simulation tick too coarse
/// for the heartbeat, or longer than the shortest write deadline it must
/// time.
pub(super) fn timing(sender: &SenderSpec, problems: &mut Vec<Problem>) {
    if let Some(heartbeat) = sender.heartbeat {
        let tick = sender.tick.map_or(Duration::from_millis(1), |t| t.0);
        if heartbeat.0 < limits::MIN_HEARTBEAT || heartbeat.0 > Duration::from_secs(60) {
            problems.push(problem(
                key("heartbeat"),
                format!(
                    "from {} to 60s: a keepalive every quarter tick must cross a simulated link whose latency reaches 100ms",
                    Dur(limits::MIN_HEARTBEAT)
                ),
            ));
        } else if tick > heartbeat.0 / MESH_TICKS_PER_HEARTBEAT {
            problems.push(problem(
                key("tick"),
                format!(
                    "at most heartbeat / {MESH_TICKS_PER_HEARTBEAT} ({}): keepalives go out a quarter heartbeat apart, and a coarser tick delays them past the heartbeat",
                    Dur(heartbeat.0 / MESH_TICKS_PER_HEARTBEAT)
                ),
            ));
        }
    }
    let (Some(tick), Some(deadline)) = (sender.tick, sender.write_timeout.as_ref()) else {
        return;
    };
    let deadline = deadline.bounds().0 .0;
    if tick.0 > deadline {
        problems.push(problem(
            key("tick"),
            format!(
                "at most the shortest write_timeout ({}): every host is polled once per tick, so a deadline shorter than a tick cannot be timed",
                Dur(deadline)
            ),
        ));
    }
}
