//! M1 pair agreement: at the end, the two ends of a pair hold the same
//! live socket; the two ends of one socket agree on which dialed it; and
//! after a cross-dial both ends converge on one live socket within
//! [`convergence_bound`]. All three compare what the two ends of a pair
//! hold (the end's tables, `MeshUp`'s origin, the live timelines).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use super::convergence_bound;
use super::faults::CrossDial;
use super::model::{Model, TableEntry};
use crate::check::{CheckContext, Collector};
use crate::event::{Event, Side};
use crate::scenario::Contract;

pub(super) fn m1(out: &mut Collector<'_>, model: &Model) {
    if !model.finished {
        return;
    }
    for (
        &(node, peer),
        &TableEntry {
            record: index,
            socket,
        },
    ) in &model.table
    {
        if node > peer {
            continue;
        }
        let Some(&TableEntry {
            record: other_index,
            socket: other,
        }) = model.table.get(&(peer, node))
        else {
            continue; // the peer is not alive at the end
        };
        if socket.is_none() || other.is_none() || socket != other {
            if [(node, peer, socket), (peer, node, other)]
                .into_iter()
                .any(|(holder, named, held)| unprotected_squat(model, holder, named, held))
            {
                continue;
            }
            let describe = |s: Option<SocketAddr>| s.map_or("none".into(), |s| s.to_string());
            out.violate(
                Contract::M1,
                format!(
                    "node{node} and node{peer} disagree at the end: node{node} holds {}, node{peer} holds {}",
                    describe(socket),
                    describe(other)
                ),
                &[index, other_index],
            );
        }
    }
}

/// Whether `holder` ends holding the insider's stream `held` for `named`
/// without having dialed `named` itself in its last life: it has no
/// address of the name's owner to tell the owner from a cookie holder that
/// keeps its heartbeat (a restart forgets every dial), so the claim
/// check's guarantee does not reach it (docs/protocol.md, "Names belong to
/// their owners"). Not held against the pair
/// (`m1_detects_an_insider_holding_a_name_its_holder_dialed`).
fn unprotected_squat(model: &Model, holder: u64, named: u64, held: Option<SocketAddr>) -> bool {
    let life = model.incarnation_at_end(holder);
    held.is_some_and(|held| model.claims.contains_key(&held))
        && !model.ups.iter().any(|(gen, up)| {
            gen.node == holder
                && gen.incarnation == life
                && gen.peer == named
                && up.origin == Side::Dialed
        })
}

/// M1: the two ends of one socket agree on which of them dialed it (a
/// socket both call their own dial, or both an accept, is a pair that does
/// not agree on what it holds). Only sockets seen up exactly once at each
/// end are judged: a dialer address a restarted host reused names two
/// connections.
pub(super) fn m1_origins(out: &mut Collector<'_>) {
    let mut by_socket: BTreeMap<SocketAddr, Vec<(usize, u64, u64, Side)>> = BTreeMap::new();
    for (index, record) in out.records().iter().enumerate() {
        if let Event::MeshUp {
            node,
            peer,
            origin,
            socket,
            ..
        } = record.event
        {
            by_socket
                .entry(socket)
                .or_default()
                .push((index, node, peer, origin));
        }
    }
    for (socket, ups) in by_socket {
        let [(a_index, a, a_peer, a_origin), (b_index, b, b_peer, b_origin)] = ups[..] else {
            continue;
        };
        if a == b_peer && b == a_peer && a_origin == b_origin {
            out.violate(
                Contract::M1,
                format!("node{a} and node{b} both registered socket {socket} as {a_origin:?}: the ends of one socket disagree on which of them dialed it"),
                &[a_index, b_index],
            );
        }
    }
}

/// The socket `node` holds live toward `peer` at `at` (after every record
/// up to `at`).
fn live_at(model: &Model, node: u64, peer: u64, at: Duration) -> Option<SocketAddr> {
    model
        .live
        .get(&(node, peer))
        .and_then(|timeline| timeline.iter().rev().find(|change| change.at <= at))
        .and_then(|change| change.socket)
}

pub(super) fn m1_convergence(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let short_dials = context.dials_may_time_out();
    for &CrossDial {
        record: index,
        at,
        a,
        b,
    } in &model.cross_dials
    {
        // A dial of the pair that timed out, with neither end registering
        // a connection of the pair before it did.
        let window = at + context.connect_timeout + context.tick * 4;
        let timed_out = model.dial_timeouts.iter().find(|timeout| {
            let (x, y) = (timeout.node, timeout.peer);
            timeout.at > at && timeout.at <= window && ((x, y) == (a, b) || (x, y) == (b, a))
        });
        let registered =
            timed_out.is_some_and(|timeout| {
                let until = timeout.at;
                [(a, b), (b, a)].iter().any(|key| {
                    model.live.get(key).into_iter().flatten().any(|change| {
                        change.socket.is_some() && change.at > at && change.at <= until
                    })
                })
            });
        let bound = match context.redial {
            Some((after, connect)) if short_dials && timed_out.is_some() && !registered => {
                convergence_bound(context) + after + connect
            }
            _ => convergence_bound(context),
        };
        let due = at + bound;
        if model.end < due {
            continue;
        }
        // Another fault on this pair (or a crash of either) inside the
        // window has its own say.
        let pair = |x: u64, y: u64| (x == a && y == b) || (x == b && y == a);
        let disturbed = model.touches.iter().any(|touch| {
            let (x, y) = (touch.a, touch.b);
            touch.record != index
                && touch.at + bound >= at
                && touch.at <= due
                && (pair(x, y) || (x == y && (x == a || x == b)))
        }) || model.lasting.iter().any(|l| {
            // A partition, half-open link, latency, wedge or slow reader
            // between them over the window.
            pair(l.a, l.b) && l.start <= due && l.end.is_none_or(|end| end + bound >= at)
        }) || model.accept_faults.iter().any(|fault| {
            // Either end unable to accept or dial over the window.
            let node = fault.node;
            (node == a || node == b)
                && fault.start <= due
                && fault.end.is_none_or(|end| end + bound >= at)
        }) || [a, b].iter().any(|&node| !model.alive_at(node, at));
        if disturbed {
            continue;
        }
        // Every instant either end's table changed, within the window.
        let mut instants: Vec<Duration> = [(a, b), (b, a)]
            .iter()
            .filter_map(|key| model.live.get(key))
            .flatten()
            .map(|change| change.at)
            .filter(|t| *t > at && *t <= due)
            .collect();
        instants.push(due);
        instants.sort_unstable();
        let agreed = instants.iter().any(|&t| {
            let (x, y) = (live_at(model, a, b, t), live_at(model, b, a, t));
            x.is_some() && x == y
        });
        if !agreed {
            out.violate(
                Contract::M1,
                format!(
                    "node{a} and node{b} dialed each other at {:.3}s and held no common live socket within {:.3}s",
                    at.as_secs_f64(),
                    bound.as_secs_f64()
                ),
                &[index],
            );
        }
    }
}
