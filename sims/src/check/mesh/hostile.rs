//! M7 and M8: the mesh against hosts that are not honest nodes and
//! against exhaustion. M7 holds a node to accepting for its whole life
//! (the end's probes, no spinning on `EMFILE`, and every honest dial
//! accepted while one address floods it with half-open handshakes), M8 to registering and
//! answering only peers that proved the cookie (the impostors' streams),
//! and only for their own names: a stream claiming a node's name that the
//! node did not make (the insider's) never displaces that node's live
//! generation; and a dial reaches only the node dialed (the misdials' and
//! the stranger's records). (An insider that holds a name against its owner's claims
//! leaves the pair unagreed at the end: M1's.)
//! Each reads the hostile hosts' own records, never a node pair's. M9,
//! the budget and the deadline against spenders, is `budget`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use super::faults::Exhaustion;
use super::model::{DescriptorsOut, FloodHeld, FloodProbe, GenId, Impostor, Model, Probe, Up};
use crate::check::{CheckContext, Collector};
use crate::event::{Event, MisdialOutcome};
use crate::scenario::Contract;
use crate::world::descriptors::PROCESS_HELD;
use lanesim_target::node::DownReason;

/// Failed accepts a node may make while out of descriptors: 16, then 25 a
/// second (one every 40 ms). A back-off from 1 ms doubling to 1 s (hyper's,
/// lanesim's) fails about a dozen times in its first second and once a
/// second after; a fixed pause of 50 ms (the example node's) twenty times a
/// second; a node that retries at once, or every millisecond, spins on
/// `EMFILE` a thousand times a second and is caught.
pub(super) fn exhausted_accepts_allowed(lasting: Duration) -> u64 {
    16 + (25.0 * lasting.as_secs_f64()).ceil() as u64
}

pub(super) fn m7(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    half_open_handshakes(out, model, context);
    descriptors_kept(out, model, context);
    for &Exhaustion {
        record: index,
        node,
        lasted: lasting,
        accepts,
    } in &model.exhaustions
    {
        let allowed = exhausted_accepts_allowed(lasting);
        if accepts > allowed {
            out.violate(
                Contract::M7,
                format!(
                    "node{node} spun on EMFILE: {accepts} failed accepts in {:.3}s without descriptors, more than the {allowed} allowed (16, then 25 a second): one failed accept every {:.2} ms on average",
                    lasting.as_secs_f64(),
                    lasting.as_secs_f64() * 1000.0 / accepts.max(1) as f64
                ),
                &[index],
            );
        }
    }
    for &FloodProbe {
        record: index,
        node,
        dials,
        accepted,
    } in &model.flood_probes
    {
        if accepted < dials {
            out.violate(
                Contract::M7,
                format!(
                    "node{node} kept honest dials out during a flood: {} of {dials} dials from \
                     an address that was not flooding, one after another, were not accepted",
                    dials - accepted
                ),
                &[index],
            );
        }
    }
    for &Probe {
        record: index,
        node,
        accepted,
        attempts,
    } in &model.probes
    {
        if !accepted {
            let by = out.records()[index].at.as_secs_f64();
            out.violate(
                Contract::M7,
                format!(
                    "node{node} stopped accepting: {attempts} fresh dial(s) up to {by:.3}s, each \
                     with the handshake, and none was accepted (nothing written back)"
                ),
                &[index],
            );
        }
    }
}

/// A node told its descriptor limit keeps its sockets within it, with
/// room for its own dials: no dial or accept of its fails for want of a
/// descriptor (the world's table, `world/descriptors.rs`; an `exhaust`
/// fault's refusals are injected, not counted). Decided for a target that
/// declares it fits the limit (`NodeCapabilities::descriptors`).
fn descriptors_kept(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    if !context.reported.descriptors {
        return;
    }
    for &DescriptorsOut {
        record,
        node,
        open,
        limit,
    } in &model.descriptors_out
    {
        out.violate(
            Contract::M7,
            format!(
                "node{node} ran out of descriptors: a dial or an accept failed with EMFILE with \
                 {open} sockets open and the process's own {PROCESS_HELD}, at the limit of \
                 {limit} it was told: a node keeps its inbound streams (refused ones it still \
                 holds too) within its limit, with room for its own dials"
            ),
            &[record],
        );
    }
}

/// No stream a flooder opened stayed open longer than a handshake may
/// take ([`half_open_bound`](super::half_open_bound)): the node closed
/// each, silent or silent after its hello, by a deadline. A flood during
/// a fault on the node's accepts is not judged: streams wait unaccepted
/// in its backlog then, with no deadline of the node's running.
fn half_open_handshakes(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let bound = super::half_open_bound(context);
    for &FloodHeld {
        record: index,
        node,
        from,
        hello,
        longest,
        open_at_end,
    } in &model.flood_holds
    {
        let until = out.records()[index].at;
        let accepts_faulted = model
            .accept_faults
            .iter()
            .any(|f| f.node == node && f.start <= until && f.end.is_none_or(|end| end >= from));
        if longest > bound && !accepts_faulted {
            let said = if hello {
                "said hello and then nothing"
            } else {
                "said nothing"
            };
            out.violate(
                Contract::M7,
                format!(
                    "node{node} let a half-open handshake hold its places for {:.3}s: a flood's \
                     stream that {said} stayed open that long ({open_at_end} of its streams open as the \
                     flood ended), longer than twice the connect timeout and slack ({:.3}s): \
                     some step of the handshake waits with no deadline",
                    longest.as_secs_f64(),
                    bound.as_secs_f64()
                ),
                &[index],
            );
        }
    }
}

pub(super) fn m8(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    // A node's own name is never a peer's: a stream whose hello names the
    // node itself (a cookie holder's, or a misdial that reached the node
    // it came from) is refused, never registered.
    for (
        &GenId {
            node,
            peer,
            generation,
            ..
        },
        &Up {
            record: up, socket, ..
        },
    ) in &model.ups
    {
        if node == peer {
            out.violate(
                Contract::M8,
                format!(
                    "node{node} registered generation {generation} under its own name on stream \
                     {socket}: a hello that names the node itself is refused"
                ),
                &[up],
            );
        }
    }
    let by_socket: BTreeMap<SocketAddr, &Impostor> =
        model.impostors.iter().map(|i| (i.socket, i)).collect();
    for (
        &GenId {
            node,
            peer,
            generation,
            ..
        },
        &Up {
            record: up, socket, ..
        },
    ) in &model.ups
    {
        if let Some(impostor) = by_socket.get(&socket) {
            out.violate(
                Contract::M8,
                format!(
                    "node{node} registered generation {generation} for node{peer} on the \
                     impostor's stream {socket}, whose peer never proved the cookie"
                ),
                &[up, impostor.record],
            );
        }
    }
    for (
        &GenId {
            node,
            peer,
            generation,
            ..
        },
        &Up {
            record: up,
            socket,
            displaced,
            ..
        },
    ) in &model.ups
    {
        let Some(&claim) = model.claims.get(&socket) else {
            continue;
        };
        // A live generation of the node named, on a stream that node made
        // (not another intruder's).
        let Some(live) = displaced
            .filter(|held| !model.claims.contains_key(held) && !model.squats.contains_key(held))
        else {
            continue;
        };
        out.violate(
            Contract::M8,
            format!(
                "node{node} registered generation {generation} for node{peer} on the insider's \
                 stream {socket} while node{peer}'s live generation on {live} held the slot: a \
                 live generation displaced by a claim node{peer} did not make"
            ),
            &[claim, up],
        );
    }
    // A manual disconnect is the node owner's word: the insider's stream,
    // whose claim arrived while a generation of the name it claims held
    // the slot, is never registered once the owner disconnected that
    // generation (it stood by, or was being checked, behind it). The
    // insider logs its claim as it writes its proof; the node reads it up
    // to a one-way delay later ([`silence_slack`](super::silence_slack)),
    // so a disconnect within that finds a claim that may arrive at an
    // empty slot: not judged (`hunt --world mesh --seed 1 --jobs 2`, case
    // 1068: a disconnect 10 ms after the claim's record).
    let in_flight = super::silence_slack(context);
    for (gen, up) in &model.ups {
        let Some(&claim) = model.claims.get(&up.socket) else {
            continue;
        };
        let claimed_at = out.records()[claim].at;
        let arrived_by = claimed_at + in_flight;
        let cut = model
            .ups
            .iter()
            .filter(|(held, held_up)| {
                held.node == gen.node
                    && held.peer == gen.peer
                    && held.incarnation == gen.incarnation
                    && held_up.at <= claimed_at
            })
            .filter_map(|(held, _)| Some((held, model.first_down(held)?)))
            .find(|(_, down)| {
                down.at > arrived_by
                    && down.at <= up.at
                    && matches!(
                        out.records()[down.record].event,
                        Event::MeshDown {
                            reason: DownReason::ManualDisconnect,
                            ..
                        }
                    )
            });
        if let Some((held, down)) = cut {
            out.violate(
                Contract::M8,
                format!(
                    "node{} registered generation {} for node{} on the insider's stream {} after \
                     its owner disconnected node{}'s generation {}, which held the name when the \
                     claim arrived: a stream refused for a generation undid its manual disconnect",
                    gen.node, gen.generation, gen.peer, up.socket, gen.peer, held.generation
                ),
                &[claim, down.record, up.record],
            );
        }
    }
    // A name is the node's that answers to it: a dial answered by another
    // host (another node under its own name, a stranger under the name
    // dialed with a proof it cannot make) never becomes a connection, and
    // no proof goes to a host that did not prove the cookie first.
    for misdial in model
        .misdials
        .iter()
        .filter(|m| m.outcome == MisdialOutcome::Registered)
    {
        let by = misdial.answerer.map_or_else(
            || "the stranger (no cookie)".to_string(),
            |c| format!("node{c}"),
        );
        out.violate(
            Contract::M8,
            format!(
                "node{} dialed node{} at an address where {by} answered, and its dial returned a \
                 connection to that host: a connection registered under a name its peer does \
                 not hold",
                misdial.node, misdial.named
            ),
            &[misdial.record],
        );
    }
    for stranger in model.strangers.iter().filter(|s| s.wrote > 0) {
        out.violate(
            Contract::M8,
            format!(
                "node{} wrote {} bytes on stream {} after the stranger's challenge, which \
                 answered as node{} with a proof made without the cookie: a dialer proves \
                 itself only to an acceptor that proved the cookie first",
                stranger.node, stranger.wrote, stranger.socket, stranger.named
            ),
            &[stranger.record],
        );
    }
    for impostor in model.impostors.iter().filter(|i| i.read > 0) {
        out.violate(
            Contract::M8,
            format!(
                "node{} wrote {} bytes after its challenge to the impostor's stream {} (which \
                 claimed to be node{} and never proved the cookie)",
                impostor.node, impostor.read, impostor.socket, impostor.claimed
            ),
            &[impostor.record],
        );
    }
}
