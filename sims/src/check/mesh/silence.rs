//! M5: a generation that can hear nothing from its peer goes down within
//! the heartbeat tick plus [`silence_slack`]. What silences a generation
//! is gathered here from the model: lasting faults that silence the pair
//! one way or both, a crashed peer once its backlog is read
//! (`Model::heard_until`), and a squatter on the socket. A generation
//! over an intruder's socket (a squatter's or an insider's) hears that
//! host, not the peer's: faults between nodes and the peer's crash do not
//! silence it (`m5_leaves_an_insiders_stream_to_its_own_silence`).

use std::collections::BTreeSet;
use std::time::Duration;

use super::model::{GenId, Model, Up};
use super::silence_slack;
use crate::check::{CheckContext, Collector};
use crate::scenario::Contract;

/// A span in which a generation heard nothing from its peer.
struct Silent {
    start: Duration,
    /// `None`: until the end.
    end: Option<Duration>,
    /// The record that began it.
    cause: usize,
}

pub(super) fn m5(out: &mut Collector<'_>, model: &Model, context: &CheckContext) {
    let Some(tick) = context.heartbeat else {
        return;
    };
    let bound = tick + silence_slack(context);
    let mut reported: BTreeSet<GenId> = BTreeSet::new();
    for (
        gen,
        &Up {
            record: up,
            socket,
            at: up_at,
            ..
        },
    ) in &model.ups
    {
        let GenId {
            node,
            incarnation,
            peer,
            generation,
        } = *gen;
        let intruded = model.claims.contains_key(&socket) || model.squats.contains_key(&socket);
        // Every silence this generation lived through.
        let mut silences: Vec<Silent> = model
            .lasting
            .iter()
            .filter(|l| !intruded && l.silences(peer, node))
            .map(|l| Silent {
                start: l.start.max(up_at),
                end: l.end,
                cause: l.cause,
            })
            .collect();
        // A crashed peer: the sockets it had are silent from when the
        // last of what it wrote before the crash could arrive.
        for (crashed, &at) in &model.crashed {
            if !intruded && crashed.node == peer && at >= up_at {
                if let Some(heard_until) = model.heard_until(node, peer, at) {
                    silences.push(Silent {
                        start: heard_until,
                        end: None,
                        cause: up,
                    });
                }
            }
        }
        if let Some(&squat) = model.squats.get(&socket) {
            silences.push(Silent {
                start: up_at,
                end: None,
                cause: squat,
            });
        }
        for Silent { start, end, cause } in silences {
            let due = start + bound;
            let lasted = end.is_none_or(|end| end > due);
            let observed = model.end >= due
                && model
                    .crashed_at(node, incarnation)
                    .is_none_or(|crash| crash > due);
            if !lasted || !observed {
                continue;
            }
            let down = model.first_down(gen);
            if down.is_some_and(|down| down.at <= due) || down.is_some_and(|down| down.at < start) {
                continue;
            }
            if reported.insert(*gen) {
                let mut cited = vec![up, cause];
                cited.extend(down.map(|down| down.record));
                out.violate(
                    Contract::M5,
                    format!(
                        "node{node}'s generation {generation} of node{peer} heard nothing from {:.3}s and was still up {:.3}s later (tick {:.3}s + slack)",
                        start.as_secs_f64(),
                        bound.as_secs_f64(),
                        tick.as_secs_f64()
                    ),
                    &cited,
                );
            }
        }
    }
}
