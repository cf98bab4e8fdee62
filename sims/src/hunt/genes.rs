//! A run's parameters as a list of shrinkable knobs ("genes"): counts,
//! durations (in microseconds or milliseconds), chances (in millionths),
//! each with the least value it may shrink to. Setting one keeps the
//! parameters coherent (a sub-range stays ordered, stuck keys stay fewer
//! than keys, a fault's peer stays a peer, a slow interval stays within
//! its deadline), so every shrink candidate is a scenario a file can say.

use std::time::Duration;

use super::strategy::bounds::*;
use super::strategy::{mesh_lasting, mesh_permille};
use crate::scenario::{
    LanesParams, MeshFaultKind, MeshParams, MisdialBy, Params, Policy, SenderParams, SLOW_FRACTION,
};

/// One knob: its name (for reports), value, least value, and the most a
/// mutation may set it to (the most generation draws, so a mutant is a case
/// the strategies could have drawn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gene {
    /// What it is.
    pub name: &'static str,
    /// Its value now.
    pub value: u64,
    /// The least it may shrink to.
    pub min: u64,
    /// The most a mutation may set.
    pub max: u64,
}

fn gene(name: &'static str, value: u64, min: u64, max: u64) -> Gene {
    Gene {
        name,
        value,
        min,
        max: max.max(value),
    }
}

fn us(d: Duration) -> u64 {
    d.as_micros() as u64
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

fn ppm(p: f64) -> u64 {
    (p * 1e6).round() as u64
}

fn opt_us(d: Option<Duration>) -> u64 {
    d.map_or(0, us)
}

/// Sets the high end of a sub-range, pulling the low end down with it.
fn hi<T: Ord + Copy>(range: &mut (T, T), value: T) {
    range.1 = value;
    range.0 = range.0.min(value);
}

/// Sets the low end of a sub-range, never above the high end.
fn lo<T: Ord + Copy>(range: &mut (T, T), value: T) {
    range.0 = value.min(range.1);
}

fn lanes_genes(p: &LanesParams) -> Vec<Gene> {
    let capacity_min = u64::from(p.policy != Policy::Raw);
    vec![
        gene("keys", p.keys, 1, L_KEYS),
        gene("producers", p.producers, 1, L_PRODUCERS),
        gene("items_per_producer", p.items_per_producer, 1, L_ITEMS),
        gene("burst.max", p.burst.1, 1, L_BURST),
        gene("burst.min", p.burst.0, 1, L_BURST),
        gene("gap.max_us", us(p.gap.1), 0, L_GAP_US),
        gene("gap.min_us", us(p.gap.0), 0, L_GAP_US),
        gene("pause.max_us", us(p.pause.1), 0, L_PAUSE_US),
        gene("pause.min_us", us(p.pause.0), 0, L_PAUSE_US),
        gene("handler.max_us", us(p.handler.1), 0, L_HANDLER_US),
        gene("handler.min_us", us(p.handler.0), 0, L_HANDLER_US),
        gene("hot_key_ppm", ppm(p.hot_key), 0, ppm(L_HOT_KEY)),
        gene("idle_ttl_us", opt_us(p.idle_ttl), 0, L_TTL_US.1),
        gene(
            "capacity",
            p.capacity.unwrap_or(0),
            capacity_min,
            L_CAPACITY,
        ),
        gene("panic_ppm", ppm(p.panic_chance), 0, ppm(L_PANIC)),
        gene("sync_panic_ppm", ppm(p.sync_panic_chance), 0, ppm(L_PANIC)),
        gene(
            "drop_router_at_us",
            opt_us(p.drop_router_at),
            0,
            L_DROP_AT_US,
        ),
        gene("stuck_keys", p.stuck_keys, 0, L_STUCK),
        gene("buggify_ppm", ppm(p.buggify), 0, ppm(L_BUGGIFY)),
        gene("preempt_ppm", ppm(p.preempt.chance), 0, PPM),
        gene("preempt_for.max_us", us(p.preempt.sleep.1), 0, PREEMPT_US),
        gene("preempt_for.min_us", us(p.preempt.sleep.0), 0, PREEMPT_US),
        gene("shuffle_ppm", ppm(p.explore.shuffle), 0, PPM),
        gene("preempt_awaits_ppm", ppm(p.explore.awaits), 0, PPM),
    ]
}

fn set_lanes(p: &mut LanesParams, index: usize, v: u64) {
    let d = Duration::from_micros(v);
    let chance = v as f64 / 1e6;
    match index {
        0 => {
            p.keys = v;
            p.stuck_keys = p.stuck_keys.min(v - 1);
        }
        1 => p.producers = v,
        2 => p.items_per_producer = v,
        3 => hi(&mut p.burst, v),
        4 => lo(&mut p.burst, v),
        5 => hi(&mut p.gap, d),
        6 => lo(&mut p.gap, d),
        7 => hi(&mut p.pause, d),
        8 => lo(&mut p.pause, d),
        9 => hi(&mut p.handler, d),
        10 => lo(&mut p.handler, d),
        11 => p.hot_key = chance,
        12 => p.idle_ttl = (v > 0).then_some(d),
        13 => p.capacity = (v > 0).then_some(v),
        14 => p.panic_chance = chance,
        15 => p.sync_panic_chance = chance,
        16 => p.drop_router_at = (v > 0).then_some(d),
        17 => p.stuck_keys = v.min(p.keys - 1),
        18 => p.buggify = chance,
        19 => p.preempt.chance = chance,
        20 => hi(&mut p.preempt.sleep, d),
        21 => lo(&mut p.preempt.sleep, d),
        22 => p.explore.shuffle = chance,
        23 => p.explore.awaits = chance,
        _ => unreachable!("a lanes gene index"),
    }
    // A held task waits as long as a preempted point sleeps.
    p.explore.hold = p.preempt.sleep;
}

/// The mesh's genes before the per-fault ones.
const MESH_GENES: usize = 13;

fn mesh_genes(p: &MeshParams) -> Vec<Gene> {
    let mut genes = vec![
        gene("nodes", p.nodes, 2, M_NODES),
        gene("links", p.links, 0, M_LINKS),
        gene("workload_ms", ms(p.workload), 1, M_WORKLOAD_MS),
        gene("hold.max_ms", ms(p.hold.1), 0, M_HOLD_MS),
        gene("hold.min_ms", ms(p.hold.0), 0, M_HOLD_MS),
        gene("heartbeat_ms", ms(p.heartbeat), M_TICK_MS.0, M_TICK_MS.1),
        gene(
            "connect_timeout_ms",
            ms(p.connect_timeout),
            M_CONNECT_MS.0,
            M_CONNECT_MS.1,
        ),
        gene(
            "redial_after_ms",
            ms(p.redial_after),
            M_REDIAL_MS.0,
            M_REDIAL_MS.1,
        ),
        gene("data", p.data, 0, M_DATA),
        gene("shuffle_ppm", ppm(p.explore.shuffle), 0, PPM),
        gene("preempt_awaits_ppm", ppm(p.explore.awaits), 0, PPM),
        gene("preempt_for.max_us", us(p.explore.hold.1), 0, PREEMPT_US),
        gene("preempt_for.min_us", us(p.explore.hold.0), 0, PREEMPT_US),
    ];
    debug_assert_eq!(genes.len(), MESH_GENES);
    for fault in &p.faults {
        genes.push(gene("fault.at_ms", ms(fault.at), 0, M_WORKLOAD_MS));
        genes.push(gene(
            "fault.for_permille",
            mesh_permille(fault.kind, p.heartbeat, fault.lasting),
            u64::from(fault.kind.lasts()),
            1_000,
        ));
    }
    genes
}

/// Keeps a mesh coherent: the first-dial table as wide as the nodes,
/// every fault between two nodes that exist, each length what its kind
/// may last under the tick.
fn clamp_mesh(p: &mut MeshParams) {
    let n = p.nodes as usize;
    p.first_dials.resize(n, Vec::new());
    for row in &mut p.first_dials {
        row.resize(n, Duration::ZERO);
    }
    for fault in &mut p.faults {
        fault.a = fault.a.min(p.nodes - 1);
        fault.b = fault.b.min(p.nodes - 1);
        if fault.a == fault.b {
            fault.b = (fault.a + 1) % p.nodes;
        }
        // A node answers a misdial only when there is a third one.
        if fault.by == Some(MisdialBy::Node) && p.nodes < 3 {
            fault.by = Some(MisdialBy::Stranger);
        }
        // A trickle outlasts the frame deadline's bound (a corpus file's
        // deadline need not be the two ticks `mesh_lasting` assumes).
        let bound = crate::scenario::mesh_trickle_bound(p.frame_timeout, p.tick);
        if fault.kind == MeshFaultKind::Trickle && fault.lasting <= bound {
            fault.lasting = bound + p.heartbeat;
        }
    }
}

fn set_mesh(p: &mut MeshParams, index: usize, v: u64) {
    let d = Duration::from_millis(v);
    match index {
        0 => p.nodes = v.max(2),
        1 => p.links = v,
        2 => p.workload = d,
        3 => hi(&mut p.hold, d),
        4 => lo(&mut p.hold, d),
        5 => {
            // Lengths scale with the tick: keep each fault's share of it.
            let old = p.heartbeat;
            p.heartbeat = d;
            // So does the frame deadline (a trickle's length is held to it).
            p.frame_timeout = if p.frame_timeout == crate::scenario::mesh_frame_deadline(old) {
                crate::scenario::mesh_frame_deadline(d)
            } else {
                p.frame_timeout
                    .mul_f64(d.as_secs_f64() / old.as_secs_f64().max(1e-9))
                    .max(crate::scenario::limits::MIN_FRAME_TIMEOUT)
            };
            for fault in &mut p.faults {
                let permille = mesh_permille(fault.kind, old, fault.lasting);
                fault.lasting = mesh_lasting(fault.kind, d, permille);
            }
        }
        6 => p.connect_timeout = d,
        7 => p.redial_after = d,
        8 => p.data = v,
        9 => p.explore.shuffle = v as f64 / 1e6,
        10 => p.explore.awaits = v as f64 / 1e6,
        11 => hi(&mut p.explore.hold, Duration::from_micros(v)),
        12 => lo(&mut p.explore.hold, Duration::from_micros(v)),
        _ => {
            let heartbeat = p.heartbeat;
            let fault = &mut p.faults[(index - MESH_GENES) / 2];
            if (index - MESH_GENES) % 2 == 0 {
                fault.at = d;
            } else {
                fault.lasting = mesh_lasting(fault.kind, heartbeat, v);
            }
        }
    }
    clamp_mesh(p);
}

/// The sender's genes before the per-fault ones.
const SENDER_GENES: usize = 18;

fn sender_genes(p: &SenderParams) -> Vec<Gene> {
    let mut genes = vec![
        gene("peers", p.peers, 1, S_PEERS),
        gene("data_frames", p.data_frames, 0, S_DATA),
        gene("links", p.links, 0, S_LINKS),
        gene("frame_bytes.max", p.frame_bytes.1, 0, S_FRAME_BYTES),
        gene("frame_bytes.min", p.frame_bytes.0, 0, S_FRAME_BYTES),
        gene("gap.max_us", us(p.gap.1), 0, S_GAP_US),
        gene("gap.min_us", us(p.gap.0), 0, S_GAP_US),
        gene("data_capacity", p.data_capacity, 1, S_DATA_CAPACITY),
        gene(
            "control_capacity",
            p.control_capacity,
            1,
            S_CONTROL_CAPACITY,
        ),
        gene(
            "write_timeout_ms",
            ms(p.write_timeout),
            S_WRITE_MS.0,
            S_WRITE_MS.1,
        ),
        gene(
            "connect_timeout_ms",
            ms(p.connect_timeout),
            S_CONNECT_MS.0,
            S_CONNECT_MS.1,
        ),
        gene("redial_after_us", opt_us(p.redial_after), 0, S_REDIAL_US.1),
        gene("shutdown_at_us", opt_us(p.shutdown_at), 0, S_SHUTDOWN_US),
        gene("preempt_ppm", ppm(p.preempt.chance), 0, PPM),
        gene("preempt_for.max_us", us(p.preempt.sleep.1), 0, PREEMPT_US),
        gene("preempt_for.min_us", us(p.preempt.sleep.0), 0, PREEMPT_US),
        gene("shuffle_ppm", ppm(p.explore.shuffle), 0, PPM),
        gene("preempt_awaits_ppm", ppm(p.explore.awaits), 0, PPM),
    ];
    debug_assert_eq!(genes.len(), SENDER_GENES);
    for fault in &p.faults {
        genes.push(gene("fault.at_us", us(fault.at), 0, S_FAULT_AT_US));
        genes.push(gene(
            "fault.for_us",
            us(fault.lasting),
            u64::from(fault.kind.lasts()),
            us(p.write_timeout * 2),
        ));
    }
    genes
}

/// Keeps every fault's length within what its kind may last under the
/// run's deadlines (a slow peer is never a wedge, latency never a
/// partition), and every fault on a peer that exists.
fn clamp_faults(p: &mut SenderParams) {
    for fault in &mut p.faults {
        fault.peer = fault.peer.min(p.peers - 1);
        let longest = match fault.kind {
            crate::scenario::FaultKind::Slow => p.write_timeout / (SLOW_FRACTION * 2),
            crate::scenario::FaultKind::Latency => p.connect_timeout / 4,
            _ => continue,
        };
        fault.lasting = fault.lasting.min(longest).max(Duration::from_micros(1));
    }
}

fn set_sender(p: &mut SenderParams, index: usize, v: u64) {
    let d = Duration::from_micros(v);
    match index {
        0 => p.peers = v,
        1 => p.data_frames = v,
        2 => p.links = v,
        3 => hi(&mut p.frame_bytes, v),
        4 => lo(&mut p.frame_bytes, v),
        5 => hi(&mut p.gap, d),
        6 => lo(&mut p.gap, d),
        7 => p.data_capacity = v,
        8 => p.control_capacity = v,
        9 => p.write_timeout = Duration::from_millis(v),
        10 => p.connect_timeout = Duration::from_millis(v),
        11 => p.redial_after = (v > 0).then_some(d),
        12 => p.shutdown_at = (v > 0).then_some(d),
        13 => p.preempt.chance = v as f64 / 1e6,
        14 => hi(&mut p.preempt.sleep, d),
        15 => lo(&mut p.preempt.sleep, d),
        16 => p.explore.shuffle = v as f64 / 1e6,
        17 => p.explore.awaits = v as f64 / 1e6,
        _ => {
            let fault = &mut p.faults[(index - SENDER_GENES) / 2];
            // Faults keep their places while shrinking (so a gene index
            // keeps naming one fault); files list them sorted.
            if (index - SENDER_GENES) % 2 == 0 {
                fault.at = d;
            } else {
                fault.lasting = d;
            }
        }
    }
    clamp_faults(p);
    // A held task waits as long as a preempted point sleeps.
    p.explore.hold = p.preempt.sleep;
}

/// The knobs of `params`, in shrink order (counts first, then times).
#[must_use]
pub fn genes(params: &Params) -> Vec<Gene> {
    match params {
        Params::Lanes(p) => lanes_genes(p),
        Params::Sender(p) => sender_genes(p),
        Params::Mesh(p) => mesh_genes(p),
    }
}

/// `params` with knob `index` set to `value` (and kept coherent).
#[must_use]
pub fn with_gene(params: &Params, index: usize, value: u64) -> Params {
    let mut params = params.clone();
    match &mut params {
        Params::Lanes(p) => set_lanes(p, index, value),
        Params::Sender(p) => set_sender(p, index, value),
        Params::Mesh(p) => set_mesh(p, index, value),
    }
    params
}

/// How many faults `params` schedules (what the shrinker removes first).
#[must_use]
pub fn fault_count(params: &Params) -> usize {
    match params {
        Params::Lanes(_) => 0,
        Params::Sender(p) => p.faults.len(),
        Params::Mesh(p) => p.faults.len(),
    }
}

/// `params` without fault `index`.
#[must_use]
pub fn without_fault(params: &Params, index: usize) -> Params {
    let mut params = params.clone();
    match &mut params {
        Params::Sender(p) => {
            p.faults.remove(index);
        }
        Params::Mesh(p) => {
            p.faults.remove(index);
        }
        Params::Lanes(_) => {}
    }
    params
}

/// A measure of a case's size, for reports and the shrink bound: keys or
/// peers, items or frames, and faults.
#[must_use]
pub fn size(params: &Params) -> (u64, u64, usize) {
    match params {
        Params::Lanes(p) => (p.keys, p.producers * p.items_per_producer, 0),
        Params::Sender(p) => (p.peers, p.data_frames + p.links, p.faults.len()),
        Params::Mesh(p) => (p.nodes, p.links + p.data, p.faults.len()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::hunt::shrink::{scenario_of, HORIZON};
    use crate::hunt::strategy::{case, HuntWorld};

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any knob of any generated case set anywhere between its least
        /// and its mutation bound, or any fault removed, leaves a case
        /// whose exact scenario file loads: shrinking and mutation never
        /// step outside what a file can say.
        #[test]
        fn every_gene_setting_and_fault_removal_keeps_a_loadable_case(
            (params, seed) in case(HuntWorld::Both),
            pick in any::<prop::sample::Index>(),
            fraction in 0.0f64..=1.0,
        ) {
            prop_assert!(scenario_of(&params, seed, HORIZON, "drawn").is_ok());
            let knobs = genes(&params);
            let index = pick.index(knobs.len());
            let knob = knobs[index];
            prop_assert!(knob.min <= knob.value && knob.value <= knob.max, "{knob:?}");
            let value = knob.min + ((knob.max - knob.min) as f64 * fraction) as u64;
            let moved = with_gene(&params, index, value);
            prop_assert!(scenario_of(&moved, seed, HORIZON, "moved").is_ok(), "{knob:?} -> {value}");
            if fault_count(&params) > 0 {
                let fewer = without_fault(&params, pick.index(fault_count(&params)));
                prop_assert_eq!(fault_count(&fewer), fault_count(&params) - 1);
                prop_assert!(scenario_of(&fewer, seed, HORIZON, "fewer").is_ok());
            }
        }
    }
}
