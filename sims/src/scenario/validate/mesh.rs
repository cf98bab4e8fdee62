//! The `[mesh]` table and its `[[mesh.fault]]` entries: nodes, links and
//! data, the heartbeat and the tick, dial timings, chaos, faults, and
//! whether a run can end within its budget.

use std::time::Duration;

use super::common::{
    chance, count, preemption, problem, span, Preemption, Problem, MESH_TICKS_PER_HEARTBEAT,
};
use crate::scenario::limits::{
    self, MAX_FLOOD_HOSTS, MAX_MESH_LINKS, MAX_MESH_NODES, MAX_MESH_SPAN, MESH_MAX_FRAME,
};
use crate::scenario::params::{self, mesh_trickle_bound, HALF_OPEN_MIN_TICKS};
use crate::scenario::position::KeyPath;
use crate::scenario::sample::Dur;
use crate::scenario::spec::{InboundCapsSpec, MeshFaultKind, MeshFaultSpec, MeshSpec, MisdialBy};
use lanesim_target::wire;

/// `mesh.<field>`.
fn key(field: &str) -> KeyPath {
    KeyPath::field("mesh", field)
}

pub(super) fn validate(mesh: &MeshSpec, exact: bool, problems: &mut Vec<Problem>) {
    preemption(
        "mesh",
        &Preemption {
            preempt: None,
            preempt_for: mesh.preempt_for.as_ref(),
            shuffle: mesh.shuffle.as_ref(),
            preempt_awaits: mesh.preempt_awaits.as_ref(),
        },
        problems,
    );
    count(&key("nodes"), &mesh.nodes, 2, problems);
    if mesh.nodes.bounds().1 > MAX_MESH_NODES {
        problems.push(problem(
            key("nodes"),
            format!("at most {MAX_MESH_NODES} nodes"),
        ));
    }
    count(&key("links"), &mesh.links, 0, problems);
    if let Some(descriptors) = mesh.descriptors {
        if !(MIN_DESCRIPTORS..=MAX_DESCRIPTORS).contains(&descriptors) {
            problems.push(problem(
                key("descriptors"),
                format!(
                    "{MIN_DESCRIPTORS} to {MAX_DESCRIPTORS} (got {descriptors}): under {MIN_DESCRIPTORS} lanesim's node keeps 64 descriptors for itself and has fewer than 8 left to serve, and refuses to start"
                ),
            ));
        }
    }
    if let Some(caps) = mesh.inbound_caps {
        inbound_caps(caps, mesh.descriptors.is_some(), problems);
    }
    if let Some(data) = &mesh.data {
        count(&key("data"), data, 0, problems);
        if data.bounds().1 > MAX_MESH_LINKS {
            problems.push(problem(
                key("data"),
                format!("at most {MAX_MESH_LINKS} data frames per node"),
            ));
        }
    }
    if mesh.links.bounds().1 > MAX_MESH_LINKS {
        problems.push(problem(
            key("links"),
            format!("at most {MAX_MESH_LINKS} links per node"),
        ));
    }
    if mesh.workload.0 > MAX_MESH_SPAN {
        problems.push(problem(
            key("workload"),
            format!("at most {}", Dur(MAX_MESH_SPAN)),
        ));
    }
    span(&key("hold"), &mesh.hold, false, problems);
    if mesh.hold.bounds().1 .0 > MAX_MESH_SPAN {
        problems.push(problem(
            key("hold"),
            format!("at most {}", Dur(MAX_MESH_SPAN)),
        ));
    }
    if let Some(cross) = &mesh.cross_dial {
        chance(&key("cross_dial"), cross, problems);
    }
    if let Some(rows) = &mesh.first_dials {
        let (lo, hi) = mesh.nodes.bounds();
        let square =
            lo == hi && rows.len() as u64 == lo && rows.iter().all(|r| r.len() as u64 == lo);
        if !square {
            problems.push(problem(
                key("first_dials"),
                "needs one fixed `nodes` and that many rows of that many times",
            ));
        }
        if rows.iter().flatten().any(|at| at.0 > MAX_MESH_SPAN) {
            problems.push(problem(
                key("first_dials"),
                format!("at most {}", Dur(MAX_MESH_SPAN)),
            ));
        }
    }
    let heartbeat = mesh.heartbeat.map_or(Duration::from_secs(1), |d| d.0);
    for (field, value) in [
        ("heartbeat", mesh.heartbeat),
        ("frame_timeout", mesh.frame_timeout),
        ("connect_timeout", mesh.connect_timeout),
        ("tick", mesh.tick),
    ] {
        if let Some(value) = value {
            if value.0.is_zero() {
                problems.push(problem(key(field), "must be greater than zero"));
            } else if value.0 > Duration::from_secs(60) {
                problems.push(problem(key(field), "at most 60s"));
            }
        }
    }
    // A keepalive goes out every quarter tick and may take turmoil's
    // largest latency (100 ms) to cross, so a tick under ~133 ms declares
    // healthy links dead by design and no pair ever settles: at 40 ms every
    // seed of a fault-free mesh failed M1 (`docs/scenario-format.md`). The
    // floor is the hunt's (`M_TICK_MS`), which never saw such flapping.
    if mesh.heartbeat.is_some_and(|h| h.0 < limits::MIN_HEARTBEAT) {
        problems.push(problem(
            key("heartbeat"),
            format!(
                "at least {}: a keepalive every quarter tick must cross a simulated link whose latency reaches 100ms, or healthy links are declared dead",
                Dur(limits::MIN_HEARTBEAT)
            ),
        ));
    }
    if mesh
        .frame_timeout
        .is_some_and(|t| t.0 < limits::MIN_FRAME_TIMEOUT)
    {
        problems.push(problem(
            key("frame_timeout"),
            format!(
                "at least {}: an honest frame's bytes may cross a simulated link 100ms apart, and a shorter deadline would cut them",
                Dur(limits::MIN_FRAME_TIMEOUT)
            ),
        ));
    }
    if let Some(redial) = &mesh.redial_after {
        span(&key("redial_after"), redial, true, problems);
        if redial.bounds().1 .0 > Duration::from_secs(60) {
            problems.push(problem(key("redial_after"), "at most 60s"));
        }
    }
    // A run costs its virtual time over the tick, times its hosts: a
    // microsecond tick over minutes of workload would never end.
    if mesh
        .tick
        .is_some_and(|t| t.0 < Duration::from_millis(1) && !t.0.is_zero())
    {
        problems.push(problem(
            key("tick"),
            "at least 1ms: every host is polled once per tick",
        ));
    }
    if mesh.dial_spread.is_some_and(|d| d.0 > MAX_MESH_SPAN) {
        problems.push(problem(
            key("dial_spread"),
            format!("at most {}", Dur(MAX_MESH_SPAN)),
        ));
    }
    if let Some(chaos) = &mesh.chaos {
        count(&key("chaos"), chaos, 0, problems);
        if chaos.bounds().1 > 64 {
            problems.push(problem(key("chaos"), "at most 64 chaos faults"));
        }
        if exact {
            problems.push(problem(
                key("chaos"),
                "an exact file lists every fault: no chaos",
            ));
        }
    }
    if mesh.chaos_kinds.as_ref().is_some_and(Vec::is_empty) {
        problems.push(problem(
            key("chaos_kinds"),
            "name at least one kind (or leave it out for all)",
        ));
    }
    // A kind listed twice is drawn twice as often (a weight), so repeats
    // are allowed, up to a bound: a list of thousands is a file's size
    // spent on nothing.
    if mesh
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
    if mesh.fault.len() > 64 {
        problems.push(problem(key("fault"), "at most 64 scripted faults"));
    }
    faults(mesh, heartbeat, problems);
}

/// Each `[[mesh.fault]]`: nodes that exist and differ, `at` and `for`
/// within bounds, `for` exactly when the kind lasts, and long enough for a
/// half-open drop or a trickle to mean what it says.
/// A trickle's `frame` and `node_frame`: only a trickle takes them; its
/// frame is at most the largest of its kind, and long enough to drip
/// through the frame deadline and its slack (one byte a quarter tick, never
/// the last: a shorter one goes quiet, and the silence clock, not the
/// deadline, ends it).
fn trickled_frame(
    mesh: &MeshSpec,
    fault: &MeshFaultSpec,
    heartbeat: Duration,
    key: &dyn Fn(&str) -> KeyPath,
    problems: &mut Vec<Problem>,
) {
    if fault.kind != MeshFaultKind::Trickle {
        for (field, given) in [
            ("frame", fault.frame.is_some()),
            ("node_frame", fault.node_frame.is_some()),
        ] {
            if given {
                problems.push(problem(
                    key(field),
                    format!("only a trickle fault takes `{field}`"),
                ));
            }
        }
        return;
    }
    let node_frame = fault.node_frame == Some(true);
    let (largest, what) = if node_frame {
        (u64::from(wire::MAX_NODE_FRAME), "a node frame's payload")
    } else {
        (MESH_MAX_FRAME, "the nodes' largest frame")
    };
    let (lo, hi) = match &fault.frame {
        Some(frame) => {
            count(&key("frame"), frame, 0, problems);
            frame.bounds()
        }
        None => (largest, largest),
    };
    let field = if fault.frame.is_some() {
        "frame"
    } else {
        "node_frame"
    };
    let bound = mesh_trickle_bound(params::mesh_frame_timeout(mesh), params::mesh_tick(mesh));
    let drip = (heartbeat / 4).as_micros().max(1);
    let least = u64::try_from(bound.as_micros() / drip).unwrap_or(u64::MAX) + 2;
    if lo < least {
        problems.push(problem(
            key(field),
            format!(
                "a trickled frame needs at least {least} bytes: it drips one a quarter tick and never the last, so a shorter one goes quiet inside the frame deadline and its slack ({}), and the silence clock, not the deadline, ends it (got {lo})",
                Dur(bound),
            ),
        ));
    }
    if hi > largest {
        problems.push(problem(
            key(field),
            format!("a trickled frame is at most {what}, {largest} bytes (got {hi})"),
        ));
    }
}

/// The smallest descriptor limit a mesh file may tell its nodes: lanesim's
/// node keeps 64 and needs at least 8 for inbound streams.
/// `mesh.inbound_caps`: each at least 1 and at most [`MAX_DESCRIPTORS`],
/// no more handshakes than connections, and only with `descriptors` (caps
/// alone change nothing a world judges).
fn inbound_caps(caps: InboundCapsSpec, descriptors: bool, problems: &mut Vec<Problem>) {
    let at = KeyPath::field("mesh", "inbound_caps");
    if !descriptors {
        problems.push(problem(
            at.clone(),
            "only with `descriptors`: the caps are what a node fits within its descriptor limit"
                .to_string(),
        ));
    }
    for (name, value) in [
        ("handshakes", caps.handshakes),
        ("connections", caps.connections),
    ] {
        if !(1..=MAX_DESCRIPTORS).contains(&value) {
            problems.push(problem(
                at.clone().key(name),
                format!("1 to {MAX_DESCRIPTORS} (got {value})"),
            ));
        }
    }
    if caps.handshakes > caps.connections {
        problems.push(problem(
            at,
            format!(
                "`handshakes` ({}) above `connections` ({}): a stream in its handshake is an open stream",
                caps.handshakes, caps.connections
            ),
        ));
    }
}

const MIN_DESCRIPTORS: u64 = 72;
/// The largest (a real `nofile` hard limit is about a million).
const MAX_DESCRIPTORS: u64 = 1 << 20;

fn faults(mesh: &MeshSpec, heartbeat: Duration, problems: &mut Vec<Problem>) {
    let min_nodes = mesh.nodes.bounds().0;
    for (index, fault) in mesh.fault.iter().enumerate() {
        let key = |field: &str| KeyPath::field("mesh", "fault").index(index).key(field);
        for (field, node) in [("a", Some(&fault.a)), ("b", fault.b.as_ref())] {
            let Some(node) = node else { continue };
            count(&key(field), node, 0, problems);
            if node.bounds().1 >= min_nodes {
                problems.push(problem(
                    key(field),
                    format!(
                        "node index {} does not exist: there may be only {min_nodes} nodes",
                        node.bounds().1
                    ),
                ));
            }
        }
        // A claim may name its own node: the insider's hello then names
        // the node it dials.
        if !fault.kind.one_node()
            && fault.kind != MeshFaultKind::Claim
            && fault
                .b
                .as_ref()
                .is_some_and(|b| b.bounds() == fault.a.bounds() && b.bounds().0 == b.bounds().1)
        {
            problems.push(problem(key("b"), "a fault between a node and itself"));
        }
        trickled_frame(mesh, fault, heartbeat, &key, problems);
        if fault.before_hello.is_some() && fault.kind != MeshFaultKind::Spend {
            problems.push(problem(
                key("before_hello"),
                "only a spend fault takes `before_hello`",
            ));
        }
        match fault.hosts {
            Some(_) if fault.kind != MeshFaultKind::Flood => {
                problems.push(problem(key("hosts"), "only a flood fault takes `hosts`"));
            }
            Some(hosts) if !(1..=MAX_FLOOD_HOSTS).contains(&hosts) => problems.push(problem(
                key("hosts"),
                format!("1 to {MAX_FLOOD_HOSTS} addresses"),
            )),
            _ => {}
        }
        if fault.hello.is_some() && fault.kind != MeshFaultKind::Flood {
            problems.push(problem(key("hello"), "only a flood fault takes `hello`"));
        }
        match fault.by {
            Some(_) if fault.kind != MeshFaultKind::Misdial => {
                problems.push(problem(key("by"), "only a misdial fault takes `by`"));
            }
            Some(MisdialBy::Node) if min_nodes < 3 => problems.push(problem(
                key("by"),
                format!(
                    "a node answers a misdial only in a mesh of three or more: this one may have {min_nodes}"
                ),
            )),
            _ => {}
        }
        span(&key("at"), &fault.at, false, problems);
        if fault.at.bounds().1 .0 > MAX_MESH_SPAN {
            problems.push(problem(
                key("at"),
                format!("at most {}", Dur(MAX_MESH_SPAN)),
            ));
        }
        match (&fault.lasting, fault.kind.lasts()) {
            (Some(lasting), true) => {
                span(&key("for"), lasting, true, problems);
                if lasting.bounds().1 .0 > MAX_MESH_SPAN {
                    problems.push(problem(
                        key("for"),
                        format!("at most {}", Dur(MAX_MESH_SPAN)),
                    ));
                }
                if fault.kind == MeshFaultKind::HalfOpen
                    && lasting.bounds().0 .0.as_secs_f64()
                        <= heartbeat.as_secs_f64() * HALF_OPEN_MIN_TICKS
                {
                    problems.push(problem(
                        key("for"),
                        format!(
                            "a half-open drop must last more than {HALF_OPEN_MIN_TICKS} heartbeat ticks ({}): a shorter one loses bytes from a stream that goes on, which no real TCP does",
                            Dur(heartbeat.mul_f64(HALF_OPEN_MIN_TICKS))
                        ),
                    ));
                }
                let trickle_bound =
                    mesh_trickle_bound(params::mesh_frame_timeout(mesh), params::mesh_tick(mesh));
                if fault.kind == MeshFaultKind::Trickle && lasting.bounds().0 .0 <= trickle_bound {
                    problems.push(problem(
                        key("for"),
                        format!(
                            "a trickle must last more than {}, the frame deadline (`frame_timeout`, by default twice the heartbeat) and its slack: a shorter one ends before a node that never cuts it off could be caught",
                            Dur(trickle_bound)
                        ),
                    ));
                }
            }
            (None, true) => problems.push(problem(key("kind"), "this fault needs `for`")),
            (Some(_), false) => problems.push(problem(
                key("for"),
                "this fault happens once; `for` would be ignored",
            )),
            (None, false) => {}
        }
    }
}

/// Mesh timings that can only fail for the testbed's own reasons: a
/// simulation tick too coarse for the heartbeat (keepalives a quarter tick
/// apart, quantised to a tick of 200 ms at a 250 ms heartbeat, failed M1
/// with 2 nodes and no fault), and a run whose workload, holds, faults and
/// settle time cannot end within its budget (every seed liveness).
pub(super) fn timing(mesh: &MeshSpec, budget: Duration, problems: &mut Vec<Problem>) {
    let heartbeat = mesh.heartbeat.map_or(Duration::from_secs(1), |d| d.0);
    let tick = mesh.tick.map_or(Duration::from_millis(1), |d| d.0);
    if tick > heartbeat / MESH_TICKS_PER_HEARTBEAT {
        problems.push(problem(
            key("tick"),
            format!(
                "at most heartbeat / {MESH_TICKS_PER_HEARTBEAT} ({}): keepalives go out a quarter heartbeat apart, and a coarser tick delays them past the heartbeat",
                Dur(heartbeat / MESH_TICKS_PER_HEARTBEAT)
            ),
        ));
    }
    let connect = mesh
        .connect_timeout
        .map_or(Duration::from_millis(500), |d| d.0);
    let redial = mesh
        .redial_after
        .as_ref()
        .map_or(Duration::from_millis(300), |r| r.bounds().1 .0);
    let settle = params::settle_time(heartbeat, redial, connect);
    let faults = mesh
        .fault
        .iter()
        .map(|f| {
            let lasting = f
                .lasting
                .as_ref()
                .map_or(Duration::ZERO, |l| l.bounds().1 .0);
            let recovery = if f.kind.on_accepts() {
                params::accept_fault_tail(heartbeat)
            } else {
                Duration::ZERO
            };
            f.at.bounds().1 .0 + lasting + recovery
        })
        .max()
        .unwrap_or_default();
    let end = (mesh.workload.0 + mesh.hold.bounds().1 .0).max(faults) + settle;
    if end >= budget {
        problems.push(problem(
            KeyPath::top("budget"),
            format!(
                "a run may need {} of virtual time (the workload and its longest hold, or the last fault, then {} to settle) and the budget is {}: every such seed would run out of time",
                Dur(end),
                Dur(settle),
                Dur(budget)
            ),
        ));
    }
}
