//! Constants a target has built in instead of taking them from the world.
//!
//! Model. A scenario samples the values its point needs (a write deadline
//! of 50 to 200 ms, a control queue 2 to 8 deep) and the world hands them
//! to the target, then sizes its budgets and bounds from them. A target
//! with a value of its own (`LanesFixed`, `NodeFixed`) ignores what it is
//! handed, so a bound sized from the scenario's value would judge it
//! against a constant it never used: a correct 5 s write deadline judged a
//! stall against 105 ms, a 256-deep queue that never overflows where the
//! scenario was written for 8. So:
//!
//! - a scenario whose range for such a value (its default when it writes
//!   none) excludes the target's is **refused**, not decided, with the
//!   reason ([`refusal`]);
//! - otherwise the run's parameters take the target's value ([`apply`]),
//!   after sampling, so no other draw moves, and every budget and bound
//!   is sized from what the target really does.
//!
//! Pinned by `a_fixed_constant_outside_the_scenarios_range_is_refused` and
//! `a_fixed_constant_inside_the_range_is_the_runs_value` (tests below).

use std::fmt::Display;
use std::time::Duration;

use lanesim_target::lanes::LanesFixed;
use lanesim_target::node::NodeFixed;

use crate::scenario::sample::{Dur, Sampled};
use crate::scenario::{FaultKind, Params, Scenario};

/// The sender world's largest inbound frame (`world::peer::MAX_INBOUND`):
/// its hostile peers write frames at it and one byte over.
const SENDER_MAX_FRAME: u64 = 16 * 1024;

/// The mesh world's largest frame: its spenders and tricklers write frames
/// of up to this.
const MESH_MAX_FRAME: u64 = 64 * 1024;

/// The sender world's defaults for what a scenario may leave out
/// (`scenario::params`).
const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(5);
const DEFAULT_DATA_CAPACITY: u64 = 1024;
const DEFAULT_CONTROL_CAPACITY: u64 = 256;

/// The mesh world's queue depths and heartbeat default
/// (`world::mesh`): a node there is never flooded, so a deeper fixed
/// queue is harmless and only a shallower one is refused.
const MESH_DATA_CAPACITY: u64 = 1024;
const MESH_CONTROL_CAPACITY: u64 = 256;
const MESH_HEARTBEAT: Duration = Duration::from_secs(1);

/// What a target fixes, for both components.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fixed {
    /// The router's.
    pub lanes: LanesFixed,
    /// The node's (or the sender's, over lanesim's layer).
    pub node: NodeFixed,
}

fn outside<T: Copy + PartialOrd + Display>(
    name: &str,
    field: &str,
    fixed: T,
    range: (T, T),
) -> Option<String> {
    let (lo, hi) = range;
    (fixed < lo || fixed > hi).then(|| {
        let written = if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}..={hi}")
        };
        format!(
            "the scenario is written for {name} {written}; the target's is fixed at {fixed} ({field})"
        )
    })
}

fn dur_range(sampled: Option<Sampled<Dur>>, default: Duration) -> (Dur, Dur) {
    sampled.map_or((Dur(default), Dur(default)), |s| s.bounds())
}

fn count_range(sampled: Option<Sampled<u64>>, default: u64) -> (u64, u64) {
    sampled.map_or((default, default), |s| s.bounds())
}

/// Why `scenario` cannot be decided for a target that fixes `fixed`, if
/// it cannot.
#[must_use]
pub fn refusal(scenario: &Scenario, fixed: &Fixed) -> Option<String> {
    let file = &scenario.file;
    if let Some(spec) = &file.lanes {
        let LanesFixed { capacity, idle_ttl } = fixed.lanes;
        if let Some(capacity) = capacity {
            let Some(range) = spec.capacity else {
                return Some(format!(
                    "the scenario runs lanes without a capacity; the target's is fixed at {capacity} (LanesFixed::capacity)"
                ));
            };
            if let Some(why) = outside(
                "capacity",
                "LanesFixed::capacity",
                capacity as u64,
                range.bounds(),
            ) {
                return Some(why);
            }
        }
        if let Some(ttl) = idle_ttl {
            let Some(range) = spec.idle_ttl else {
                return Some(format!(
                    "the scenario's lanes never reap; the target's reap after a fixed idle TTL of {} (LanesFixed::idle_ttl)",
                    Dur(ttl)
                ));
            };
            if let Some(why) = outside("idle_ttl", "LanesFixed::idle_ttl", Dur(ttl), range.bounds())
            {
                return Some(why);
            }
        }
    }
    let node = fixed.node;
    if let Some(spec) = &file.sender {
        let checks = [
            node.write_timeout.and_then(|t| {
                outside(
                    "write_timeout",
                    "NodeFixed::write_timeout",
                    Dur(t),
                    dur_range(spec.write_timeout, DEFAULT_WRITE_TIMEOUT),
                )
            }),
            node.data_capacity.and_then(|c| {
                outside(
                    "data_capacity",
                    "NodeFixed::data_capacity",
                    c as u64,
                    count_range(spec.data_capacity, DEFAULT_DATA_CAPACITY),
                )
            }),
            node.control_capacity.and_then(|c| {
                outside(
                    "control_capacity",
                    "NodeFixed::control_capacity",
                    c as u64,
                    count_range(spec.control_capacity, DEFAULT_CONTROL_CAPACITY),
                )
            }),
            node.heartbeat.and_then(|tick| match spec.heartbeat {
                None => Some(format!(
                    "the scenario runs without a heartbeat (its peers never write, and a heartbeat would read their silence as death); the target's is fixed at {} (NodeFixed::heartbeat)",
                    Dur(tick)
                )),
                Some(written) => outside("heartbeat", "NodeFixed::heartbeat", Dur(tick), (written, written)),
            }),
            node.max_frame.filter(|&max| max != SENDER_MAX_FRAME).and_then(|max| {
                let hostile = |kind: &FaultKind| matches!(kind, FaultKind::MaxFrame | FaultKind::OversizeFrame);
                let scheduled = spec.fault.iter().any(|f| hostile(&f.kind));
                let drawn = spec.chaos.is_some()
                    && spec.chaos_kinds.as_ref().is_none_or(|kinds| kinds.iter().any(hostile));
                (scheduled || drawn).then(|| format!(
                    "the scenario's hostile peers write frames at the world's maximum ({SENDER_MAX_FRAME} bytes) and one byte over; the target's maximum is fixed at {max} (NodeFixed::max_frame)"
                ))
            }),
        ];
        if let Some(why) = checks.into_iter().flatten().next() {
            return Some(why);
        }
    }
    if let Some(spec) = &file.mesh {
        let tick = spec.heartbeat.map_or(MESH_HEARTBEAT, |d| d.0);
        let checks = [
            node.heartbeat.and_then(|t| {
                outside("heartbeat", "NodeFixed::heartbeat", Dur(t), (Dur(tick), Dur(tick)))
            }),
            node.write_timeout.and_then(|t| {
                outside(
                    "a write deadline of two heartbeat ticks,",
                    "NodeFixed::write_timeout",
                    Dur(t),
                    (Dur(tick * 2), Dur(tick * 2)),
                )
            }),
            node.max_frame.filter(|&max| max < MESH_MAX_FRAME).map(|max| format!(
                "the mesh world's spenders and tricklers write frames of up to {MESH_MAX_FRAME} bytes; the target's maximum is fixed at {max} (NodeFixed::max_frame)"
            )),
            node.data_capacity.filter(|&c| (c as u64) < MESH_DATA_CAPACITY).map(|c| format!(
                "the mesh world queues up to {MESH_DATA_CAPACITY} data frames a node; the target's queue is fixed at {c} (NodeFixed::data_capacity)"
            )),
            node.control_capacity.filter(|&c| (c as u64) < MESH_CONTROL_CAPACITY).map(|c| format!(
                "the mesh world queues up to {MESH_CONTROL_CAPACITY} controls a node; the target's queue is fixed at {c} (NodeFixed::control_capacity)"
            )),
        ];
        if let Some(why) = checks.into_iter().flatten().next() {
            return Some(why);
        }
    }
    None
}

/// The run's parameters with the target's fixed values in place of the
/// sampled ones (only where [`refusal`] found them inside the scenario's
/// range, or where the world has no range: the mesh's queue depths).
pub fn apply(params: &mut Params, fixed: &Fixed) {
    match params {
        Params::Lanes(p) => {
            if let Some(capacity) = fixed.lanes.capacity {
                p.capacity = Some(capacity as u64);
            }
            if let Some(ttl) = fixed.lanes.idle_ttl {
                p.idle_ttl = Some(ttl);
            }
        }
        Params::Sender(p) => {
            let node = fixed.node;
            if let Some(t) = node.write_timeout {
                p.write_timeout = t;
            }
            if let Some(c) = node.data_capacity {
                p.data_capacity = c as u64;
            }
            if let Some(c) = node.control_capacity {
                p.control_capacity = c as u64;
            }
        }
        // The mesh hands a node no sampled value a target may fix: its
        // heartbeat and write deadline must equal the scenario's (else it
        // is refused), and its depths are the world's constants.
        Params::Mesh(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(name: &str) -> Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .join(format!("{name}.toml"));
        Scenario::load(&path).unwrap()
    }

    #[test]
    fn a_fixed_constant_outside_the_scenarios_range_is_refused() {
        let contention = shipped("sender_heartbeat_contention");
        let wedged = shipped("sender_wedged_peer");
        let five_seconds = Fixed {
            node: NodeFixed {
                write_timeout: Some(Duration::from_secs(5)),
                ..NodeFixed::default()
            },
            ..Fixed::default()
        };
        let why = refusal(&contention, &five_seconds).expect("refused");
        assert!(
            why.contains("write_timeout") && why.contains("fixed at 5s"),
            "{why}"
        );
        let deep = Fixed {
            lanes: LanesFixed {
                capacity: Some(256),
                ..LanesFixed::default()
            },
            ..Fixed::default()
        };
        let flood = shipped("lanes_capacity_flood");
        let why = refusal(&flood, &deep).expect("refused");
        assert!(why.contains("capacity") && why.contains("256"), "{why}");
        let hostile = shipped("sender_hostile_peer");
        let big = Fixed {
            node: NodeFixed {
                max_frame: Some(1 << 20),
                ..NodeFixed::default()
            },
            ..Fixed::default()
        };
        assert!(refusal(&hostile, &big).is_some());
        assert_eq!(refusal(&wedged, &big), None, "no hostile frames there");
        assert_eq!(refusal(&wedged, &Fixed::default()), None);
        // Written for 5 s: a 5 s target runs it.
        assert_eq!(refusal(&wedged, &five_seconds), None);
    }

    #[test]
    fn a_fixed_constant_inside_the_range_is_the_runs_value() {
        let flood = shipped("lanes_capacity_flood");
        let Some(range) = flood.file.lanes.as_ref().and_then(|l| l.capacity) else {
            panic!("lanes_capacity_flood has a capacity");
        };
        let (_, hi) = range.bounds();
        let fixed = Fixed {
            lanes: LanesFixed {
                capacity: Some(hi as usize),
                ..LanesFixed::default()
            },
            ..Fixed::default()
        };
        assert_eq!(refusal(&flood, &fixed), None);
        for seed in 0..8 {
            let mut params = flood.sample(seed);
            apply(&mut params, &fixed);
            let Params::Lanes(p) = params else {
                panic!("a lanes scenario")
            };
            assert_eq!(p.capacity, Some(hi));
        }
    }
    /// Each fixed depth lands in its own field of the run (the checkers
    /// size DC-1 and S4's bounds from both).
    #[test]
    fn each_fixed_depth_is_applied_to_its_own_queue() {
        let wedged = shipped("sender_wedged_peer");
        let sampled = |seed| {
            let Params::Sender(p) = wedged.sample(seed) else {
                panic!("a sender scenario")
            };
            p
        };
        let (data, control) = (4096_usize, 3_usize);
        for (fixed, want_data, want_control) in [
            (
                NodeFixed {
                    data_capacity: Some(data),
                    ..NodeFixed::default()
                },
                Some(data),
                None,
            ),
            (
                NodeFixed {
                    control_capacity: Some(control),
                    ..NodeFixed::default()
                },
                None,
                Some(control),
            ),
        ] {
            let before = sampled(3);
            let mut params = wedged.sample(3);
            apply(
                &mut params,
                &Fixed {
                    node: fixed,
                    ..Fixed::default()
                },
            );
            let Params::Sender(after) = params else {
                panic!("a sender scenario")
            };
            assert_eq!(
                after.data_capacity,
                want_data.map_or(before.data_capacity, |c| c as u64)
            );
            assert_eq!(
                after.control_capacity,
                want_control.map_or(before.control_capacity, |c| c as u64)
            );
        }
    }

    /// The mesh never floods a node: a fixed queue deeper than the
    /// world's runs, a shallower one is refused.
    #[test]
    fn the_mesh_refuses_only_a_fixed_queue_shallower_than_its_own() {
        let mesh = shipped("mesh_spender");
        let depth = |data: u64, control: u64| Fixed {
            node: NodeFixed {
                data_capacity: Some(data as usize),
                control_capacity: Some(control as usize),
                ..NodeFixed::default()
            },
            ..Fixed::default()
        };
        let deep = depth(MESH_DATA_CAPACITY * 4, MESH_CONTROL_CAPACITY * 4);
        assert_eq!(refusal(&mesh, &deep), None);
        let shallow_data = depth(MESH_DATA_CAPACITY / 4, MESH_CONTROL_CAPACITY);
        let why = refusal(&mesh, &shallow_data).expect("a shallow data queue is refused");
        assert!(why.contains("data_capacity"), "{why}");
        let shallow_control = depth(MESH_DATA_CAPACITY, MESH_CONTROL_CAPACITY / 4);
        let why = refusal(&mesh, &shallow_control).expect("a shallow control queue is refused");
        assert!(why.contains("control_capacity"), "{why}");
    }
}
