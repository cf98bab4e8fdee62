//! The flooders: hosts that open half-open handshakes to a node as fast as
//! it closes them, from one address each (a flood from `hosts` addresses
//! is that many flooders).
//!
//! Model. On each order a flooder opens its share of the flood's streams
//! to one node, 32 a tick (within a listener's backlog in the simulated
//! network), and for as long as the order says reopens each the moment the
//! node closes it (a refusal, an eviction, or a deadline). A stream is
//! silent from the start, or (`hello`) says hello under the flooder's own
//! name (a valid name no node has) and then nothing: the node writes its
//! challenge and waits for a proof that never comes. Two things decide a
//! flood, neither the flooder's to judge:
//! - whether honest dials got in meanwhile (the prober's `MeshFloodProbe`,
//!   M7);
//! - how long the node let each stream hold its places: the flooder logs
//!   the longest any stayed open (`MeshFloodHeld`, as the flood ends),
//!   which a node with a deadline on every step of the handshake keeps
//!   within [`half_open_bound`](crate::check::mesh::half_open_bound) (M7).
//!   A node that waits for a proof with no deadline holds a hello's stream
//!   until the flood gives up on it.

use std::sync::Arc;
use std::time::Duration;

use lanesim_target::handshake::Nonces;
use tokio::io::AsyncWriteExt;

use super::listen::listen;
use super::{dial_node, flooder_name, Shared, TURMOIL_MAX_LATENCY};
use crate::coverage::WorldMark;
use crate::event::Event;
use crate::explore::spawn_world;
use crate::world::handshake;

/// One flood order for one flooder.
#[derive(Clone, Copy, Debug)]
pub(super) struct FloodOrder {
    /// The node flooded.
    pub(super) node: u64,
    /// For how long.
    pub(super) lasting: Duration,
    /// This flooder's streams at once.
    pub(super) streams: u64,
    /// Each stream says hello first.
    pub(super) hello: bool,
}

/// What one of a flood's stream slots saw, summed over its reopenings.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    /// Streams opened.
    streams: u64,
    /// The longest any stayed open.
    longest: Duration,
    /// Still open as the flood ended.
    open_at_end: u64,
}

impl Held {
    fn merge(self, other: Self) -> Self {
        Self {
            streams: self.streams + other.streams,
            longest: self.longest.max(other.longest),
            open_at_end: self.open_at_end + other.open_at_end,
        }
    }
}

/// Flooder `index`: obeys its orders, one flood after another as they
/// come (floods may overlap: each runs on its own).
pub(super) async fn main(shared: Arc<Shared>, index: u64) -> turmoil::Result {
    let Some(mut orders) = shared
        .floods
        .get(index as usize)
        .and_then(super::Orders::take)
    else {
        return Ok(());
    };
    while let Some(order) = orders.recv().await {
        spawn_world(flood(Arc::clone(&shared), index, order));
    }
    Ok(())
}

/// One flood: its stream slots, then the log of what they held, unless
/// the node's incarnation changed meanwhile (a crash ends every stream;
/// not the flood's to judge).
async fn flood(shared: Arc<Shared>, index: u64, order: FloodOrder) {
    let incarnation =
        shared.incarnation[order.node as usize].load(std::sync::atomic::Ordering::Acquire);
    let until = tokio::time::Instant::now() + order.lasting;
    let name = flooder_name(index);
    let nonces = Arc::new(handshake::nonces(shared.seed, &name));
    let slots: Vec<_> = (0..order.streams)
        .map(|n| {
            let start = shared.params.tick * u32::try_from(n / 32).unwrap_or(u32::MAX);
            spawn_world(slot(
                Arc::clone(&shared),
                order,
                name.clone(),
                Arc::clone(&nonces),
                start,
                until,
            ))
        })
        .collect();
    let mut held = Held::default();
    for slot in slots {
        held = held.merge(slot.await.unwrap_or_default());
    }
    if held.streams > 0 && shared.current(order.node, incarnation) {
        shared.record(
            &name,
            Event::MeshFloodHeld {
                node: order.node,
                us: u64::try_from(order.lasting.as_micros()).unwrap_or(u64::MAX),
                hello: order.hello,
                streams: held.streams,
                longest_us: u64::try_from(held.longest.as_micros()).unwrap_or(u64::MAX),
                open_at_end: held.open_at_end,
            },
        );
    }
}

/// One stream slot from `start` in to `until`: opens a stream, says hello
/// if told to, reads until the node closes it, and opens the next.
async fn slot(
    shared: Arc<Shared>,
    order: FloodOrder,
    name: String,
    nonces: Arc<lanesim_target::handshake::SeededNonces>,
    start: Duration,
    until: tokio::time::Instant,
) -> Held {
    let tick = shared.params.tick;
    let mut held = Held::default();
    tokio::time::sleep(start).await;
    while tokio::time::Instant::now() < until {
        let Ok(mut stream) = dial_node(order.node).await else {
            tokio::time::sleep(tick).await;
            continue;
        };
        let opened = tokio::time::Instant::now();
        held.streams += 1;
        if order.hello {
            let hello = lanesim_target::handshake::hello(&name, &nonces.next());
            if stream.write_all(&hello).await.is_err() {
                continue;
            }
        }
        if !listen(&mut stream, until, None).await.closed {
            held.longest = held.longest.max(until - opened);
            held.open_at_end += 1;
            return held;
        }
        let lasted = opened.elapsed();
        held.longest = held.longest.max(lasted);
        // Past the hello's deadline and a close's latency: only a wait for
        // the proof of its own kept it (a whole handshake bounded by the
        // connect timeout alone closes it by then).
        let past_hello = shared.params.connect_timeout + TURMOIL_MAX_LATENCY + tick * 4;
        if order.hello && lasted > past_hello {
            shared.probe.world(WorldMark::FloodProofAwaitCut);
        }
    }
    held
}
