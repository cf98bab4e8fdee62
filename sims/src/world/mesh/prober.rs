//! The prober (M7): a host that dials nodes after their accept faults,
//! during floods and at the end, to see that each still accepts a stream
//! that proves the cookie.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use lanesim_target::handshake::{Nonces, SeededNonces};
use tokio::io::AsyncReadExt;

use super::{dial_node, Shared, PROBER, TURMOIL_MAX_LATENCY};
use crate::event::Event;
use crate::scenario::{MeshFaultKind, ACCEPT_RECOVERY};
use crate::world::handshake::{self, COOKIE};

/// The prober: 1 s ([`ACCEPT_RECOVERY`]) after each accept fault ends, it
/// probes that node (unless another fault on the node, a restart or an
/// accept fault, falls within the probe: it would have its own say), and
/// from [`MeshParams::probe_span`] before the end it probes every node. A
/// probe dials, runs the handshake as `prober`, and waits for the node to write
/// anything (a keepalive, sent when it registers the stream); a dial
/// refused, reset, or answered by nothing is tried again until the span is
/// over. Each probe logs one `MeshProbe`, unless its node crashed or
/// restarted meanwhile. Every node is up at the end: faults end a settle
/// time before it.
pub(super) async fn main(shared: Arc<Shared>) -> turmoil::Result {
    let p = shared.params.clone();
    let end = p.end();
    let span = p.probe_span();
    let nonces = Arc::new(handshake::nonces(shared.seed, PROBER));
    let mut probes = tokio::task::JoinSet::new();
    for fault in p.faults.iter().filter(|f| f.kind.on_accepts()) {
        let from = fault.at + fault.lasting + ACCEPT_RECOVERY;
        let until = from + span;
        let disturbed = p.faults.iter().any(|other| {
            !std::ptr::eq(other, fault)
                && other.a == fault.a
                && (other.kind.on_accepts() || other.kind == MeshFaultKind::Restart)
                && other.at <= until
                && other.at + other.lasting >= fault.at
        });
        if disturbed || until + span >= end {
            continue;
        }
        probes.spawn(probe(
            Arc::clone(&shared),
            Arc::clone(&nonces),
            fault.a,
            from,
            until,
        ));
    }
    // During each flood: dials one after another, from a quarter of the
    // flood in to a tick before its end.
    for fault in p.faults.iter().filter(|f| f.kind == MeshFaultKind::Flood) {
        let (from, until) = (
            fault.at + fault.lasting / 4,
            (fault.at + fault.lasting).saturating_sub(p.tick),
        );
        // A node whose accepts fail, or that restarts, meanwhile is not
        // the flood's to judge.
        let disturbed = p.faults.iter().any(|other| {
            other.a == fault.a
                && (other.kind.on_accepts() || other.kind == MeshFaultKind::Restart)
                && other.at <= until
                && other.at + other.lasting >= from
        });
        if disturbed {
            continue;
        }
        probes.spawn(flood_probe(
            Arc::clone(&shared),
            Arc::clone(&nonces),
            fault.a,
            from,
            until,
        ));
    }
    // Before the driver logs the tables at the end.
    let until = end.saturating_sub(p.tick * 4);
    for node in 0..p.nodes {
        probes.spawn(probe(
            Arc::clone(&shared),
            Arc::clone(&nonces),
            node,
            end.saturating_sub(span),
            until,
        ));
    }
    while probes.join_next().await.is_some() {}
    std::future::pending::<()>().await;
    Ok(())
}

/// One dial of `node` as the prober: whether the node wrote to the
/// stream after the handshake (it registered it) within `wait`.
async fn accepted_within(node: u64, nonces: &SeededNonces, wait: Duration) -> bool {
    let attempt = async {
        let mut stream = dial_node(node).await.ok()?;
        let proved = handshake::dial(&mut stream, PROBER, COOKIE, nonces.next()).await;
        (proved.ok()? == handshake::Dialed::Proved).then_some(())?;
        let mut byte = [0u8; 1];
        matches!(stream.read(&mut byte).await, Ok(n) if n > 0).then_some(())
    };
    tokio::time::timeout(wait, attempt)
        .await
        .ok()
        .flatten()
        .is_some()
}

/// Dials `node` during a flood, one dial after another from `from` until
/// `until`, each given a dial's wait (a heartbeat tick and two of the
/// network's largest latencies), and logs how many were accepted (unless
/// the node crashed or restarted meanwhile). Every one should be: the
/// flood is one address's, the prober another's.
async fn flood_probe(
    shared: Arc<Shared>,
    nonces: Arc<SeededNonces>,
    node: u64,
    from: Duration,
    until: Duration,
) {
    let p = &shared.params;
    let now = turmoil::sim_elapsed().unwrap_or_default();
    tokio::time::sleep(from.saturating_sub(now)).await;
    let incarnation = shared.incarnation[node as usize].load(Ordering::Acquire);
    let wait = p.heartbeat + TURMOIL_MAX_LATENCY * 2;
    let (mut dials, mut accepted) = (0, 0);
    while turmoil::sim_elapsed().unwrap_or_default() + wait <= until {
        dials += 1;
        if accepted_within(node, &nonces, wait).await {
            accepted += 1;
        }
    }
    if dials > 0 && shared.current(node, incarnation) {
        shared.record(
            PROBER,
            Event::MeshFloodProbe {
                node,
                dials,
                accepted,
            },
        );
    }
}

/// One probe of `node` from `from` to `until`, logged when it ends (not
/// when the node's incarnation changed while it ran).
async fn probe(
    shared: Arc<Shared>,
    nonces: Arc<SeededNonces>,
    node: u64,
    from: Duration,
    until: Duration,
) {
    let p = &shared.params;
    let now = turmoil::sim_elapsed().unwrap_or_default();
    tokio::time::sleep(from.saturating_sub(now)).await;
    let incarnation = shared.incarnation[node as usize].load(Ordering::Acquire);
    let mut attempts = 0;
    let accepted = loop {
        attempts += 1;
        let left = until.saturating_sub(turmoil::sim_elapsed().unwrap_or_default());
        let wait = (p.heartbeat + TURMOIL_MAX_LATENCY * 2).min(left);
        let accepted = accepted_within(node, &nonces, wait).await;
        let pause = Duration::from_millis(100);
        if accepted || turmoil::sim_elapsed().unwrap_or_default() + pause >= until {
            break accepted;
        }
        tokio::time::sleep(pause).await;
    };
    if shared.current(node, incarnation) {
        shared.record(
            PROBER,
            Event::MeshProbe {
                node,
                accepted,
                attempts,
            },
        );
    }
}
