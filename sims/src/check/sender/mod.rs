//! DC-1, DC-2, DC-5, S2–S4, S6–S9 and the end-to-end "no death signal
//! lost, none invented" over a sender-world log.
//!
//! Ground truth: the transport's `FrameWriteBegun` says what reached which
//! socket and when; the peers' `FrameArrived` what was read; the drain's
//! observer what the drain did; `ConnectionUp` names each generation's
//! socket. A generation is *impaired* while a fault may stop its peer
//! reading it: for good once the peer wedged or killed that very socket
//! (`PeerActed`) or the peer host crashed or restarted; for the length of a
//! partition, or for good if bytes were on their way through it (turmoil
//! does not retransmit what a partition dropped). Slow and latency faults
//! impair nothing.
//!
//! What each contract means here:
//! - DC-1: `Overflow` only once the pinned generation is down; `Closed`
//!   only after a shutdown was asked for; every accepted control reaches the
//!   drain and meets exactly one fate (written, failed, skipped, discarded);
//!   it is written to its pinned generation or that generation goes down;
//!   a control is skipped only when its generation is down.
//! - DC-2: a control is written to, and arrives on, only the generation it
//!   was pinned to; no frame begins to reach a generation's socket after
//!   that generation went down.
//! - DC-5: per node, the drain writes data frames in enqueue order (a
//!   subsequence); per socket, each lane arrives in enqueue order.
//! - S2: no write holds the drain longer than the deadline (+ slack); a
//!   write that hits the deadline has taken its generation down, with
//!   `WriteTimeout`, by the time it returns; the drain never sits idle
//!   while frames are queued.
//! - S3: the down hook fires at most once per generation; a generation
//!   whose socket the peer closed, or whose write failed, goes down; a down
//!   generation's socket is closed (its peer, if still reading, sees the
//!   stream end) and it leaves the table (at its down, and at the end);
//!   generations per node count 1, 2, 3, ...
//! - S4: every queued data frame meets exactly one fate, nothing arrives
//!   that was not written, and the sender's counters agree with the events.
//! - S6: a frame written whole to a generation arrives at its peer, unless
//!   the generation was impaired before it could be read.
//! - S7: no spurious down: a generation goes down only for a cause — a
//!   peer-side reason only once it was impaired, `ControlOverflow` only with
//!   an overflow, `ManualDisconnect` only after a disconnect or shutdown was
//!   asked for, `WriteCancelled` (a write dropped mid-frame) only after a
//!   shutdown or as a deadline would (`WriteTimeout`'s causes); a live
//!   generation is never displaced by a new one.
//! - S8: with redial on, a node that went down is connected again within
//!   the redial bound of its peer becoming reachable (not crashed, not
//!   partitioned, and a round trip fits in the connect timeout).
//! - S9: independence across peers: a peer with a fault on it or its link,
//!   or whose own frames fill a lane, never takes a healthy peer's
//!   generation down, never has a healthy peer's frame refused, and delays
//!   a healthy peer's frames by at most one write per other peer
//!   (`independence.rs` has the bound and its derivation).
//! - E2E: every link is told: its EXIT arrives on the link's generation, or
//!   `noconnection` is delivered (or its EXIT was written to an impaired
//!   generation, which only a heartbeat could tell); `noconnection` only
//!   for a generation that went down, and once per link.
//!
//! Without the drain's account (`Reported::drain` false: a target that does
//! not report its writes and skips) the socket is the ground truth: a
//! control is "written" to its generation when it began to reach that
//! generation's socket (DC-1), a frame written to the wrong generation is
//! one that began on another generation's socket (DC-2), and "written
//! means delivered" holds for every frame that began on a socket whose
//! generation never went down (S6: a write that failed or missed its
//! deadline must take its generation down, so such a frame was written
//! whole); the checks that need a frame's fate (a skip, an unroutable
//! frame, a discard) are left out, and S2 and S4 are not decided
//! (`targets::decide`).
//!
//! Layout: `model.rs` builds the one `Model` every contract reads; the
//! contracts sit in groups by what their code shares: `controls.rs` (DC-1,
//! DC-2: a control's pinned generation and its fate), `accounting.rs` (S4
//! and the lanes' depths: every frame counted once), `stall.rs` (S2: the
//! drain's deadline and progress), `downs.rs` (S3, S7, S8: the down hook,
//! its causes, the redial after it), `delivery.rs` (DC-5, S6, E2E: what
//! arrives, in what order, and which death signals are told) and
//! `independence.rs` (S9: one peer's trouble kept from the others).

mod accounting;
mod controls;
mod delivery;
mod downs;
mod independence;
mod model;
mod stall;

use super::{CheckContext, Collector, Violation};
use crate::event::Record;
use model::Model;

/// All sender-contract violations in `records`.
#[must_use]
pub fn check(records: &[Record], context: &CheckContext) -> Vec<Violation> {
    let model = Model::build(records, context);
    let mut out = Collector::new(records);
    accounting::lane_depths(&mut out, context);
    controls::dc1(&mut out, &model, context);
    controls::dc2(&mut out, &model, context);
    delivery::dc5(&mut out);
    stall::s2(&mut out, &model, context);
    downs::s3(&mut out, &model, context);
    accounting::s4(&mut out, &model, context);
    delivery::s6(&mut out, &model, context);
    downs::s7(&mut out, &model, context);
    downs::s8(&mut out, &model, context);
    independence::s9(&mut out, &model, context);
    delivery::end_to_end(&mut out, &model, context);
    out.into_violations()
}
