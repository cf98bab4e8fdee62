//! The model world's sender workloads: a target's sender over lanesim's
//! connection layer, under the model checker.
//!
//! Model. lanesim's `ConnectionManager` holds one generation per peer,
//! each on an in-memory socket ([`socket`]); the target's sender (lanesim's
//! `DistSender`, or a user's `SenderTarget`) drains over it. A few actors
//! ([`workload`]) enqueue data and controls, take generations down,
//! reconnect and shut the sender down, each on a task of its own; every
//! write's deadline may fire at any step the checker chooses, so a
//! deadline races whatever else is under way. The log ([`world`]) is
//! decided by the sender world's own checkers (`check::sender`).
//!
//! What is decided: DC-1 (send or down), DC-2 (generation pinning), DC-5
//! (FIFO), S3 (one down per generation, the table), S7 (no down without a
//! cause), and, for a sender that reports its drain, S4 (every frame meets
//! one fate) and S6 (written means delivered). Time does not move in a
//! model: S2's and S9's bounds, S3's clause on closing a down socket
//! (timed by the connect timeout) and S8 (redials) are the simulated
//! worlds'; the workloads make no links, so E2E is too. A node with a
//! connection layer of its own is not run here: its sockets and handshake
//! have no model.

pub mod reach;
pub mod workload;

mod socket;
pub(super) mod world;

use std::time::Duration;

use lanesim_target::layer::SenderCapabilities;

use crate::check::{CheckContext, Reported};
use crate::scenario::Contract;
use crate::targets::decide::NotDecided;
use crate::targets::Subject;

/// The contracts the sender workloads decide for a sender that reports
/// its drain.
pub const CONTRACTS: [Contract; 7] = [
    Contract::Dc1,
    Contract::Dc2,
    Contract::Dc5,
    Contract::S3,
    Contract::S4,
    Contract::S6,
    Contract::S7,
];

/// The sender the sender workloads run for `subject`: lanesim's own, or
/// the target's `Targets::sender`.
#[must_use]
pub fn capabilities(subject: &Subject) -> Option<SenderCapabilities> {
    if subject.is_builtin() {
        return Some(crate::targets::lanesim::node::own_sender_capabilities());
    }
    subject
        .sender()
        .map(lanesim_target::layer::SenderTarget::capabilities)
}

/// What the sender workloads decide of a sender with `caps`, and what not.
#[must_use]
pub fn decided(caps: &SenderCapabilities) -> (Vec<Contract>, Vec<NotDecided<Contract>>) {
    let mut decided: Vec<Contract> = CONTRACTS.to_vec();
    let mut not = Vec::new();
    if !caps.drain {
        decided.retain(|c| !matches!(c, Contract::S4 | Contract::S6));
        not.push(NotDecided {
            what: Contract::S4,
            why: "a frame's fate is seen only in the drain's account, which the sender does not report (SenderCapabilities::drain)".into(),
        });
    }
    for (what, why) in [
        (Contract::S2, "time does not move in a model: how long a write held the drain is the simulated worlds' to decide"),
        (Contract::S8, "the model world does not redial"),
        (Contract::S9, "its bounds are times, which do not move in a model"),
        (Contract::EndToEnd, "the sender workloads make no links"),
    ] {
        not.push(NotDecided {
            what,
            why: why.into(),
        });
    }
    (decided, not)
}

/// Why `shape` cannot run on a sender with `caps`, if it cannot.
#[must_use]
pub fn refusal(shape: &workload::SenderShape, caps: &SenderCapabilities) -> Option<String> {
    let fixed = caps.fixed;
    for (what, wants, fixed) in [
        ("data", shape.data_capacity, fixed.data_capacity),
        ("control", shape.control_capacity, fixed.control_capacity),
    ] {
        if let Some(fixed) = fixed {
            if fixed != wants {
                return Some(format!(
                    "the workload is written for a {what} lane depth of {wants}; the sender's is fixed at {fixed}"
                ));
            }
        }
    }
    None
}

/// The check context of the sender workloads for a sender with `caps`.
#[must_use]
pub fn context(caps: &SenderCapabilities, shape: &workload::SenderShape) -> CheckContext {
    CheckContext {
        finished: true,
        write_timeout: Some(world::MODEL_WRITE_TIMEOUT),
        tick: Duration::from_millis(1),
        // A deadline may fire at any step: any write may time out with
        // nothing wrong (S7).
        write_bound: Duration::from_secs(3_600),
        // Every record is at zero: the clauses bounded by these are
        // decided at once, except S3's on closing a down socket, which the
        // connect timeout puts out of a model's reach.
        delivery_bound: Duration::ZERO,
        connect_timeout: Duration::from_secs(3_600),
        lane_capacity: Some((shape.data_capacity as u64, shape.control_capacity as u64)),
        // A shutdown is asked for outside the log's order (`world`), so
        // enqueues race it.
        late_shutdown_downs: true,
        reported: Reported {
            lifecycle: false,
            lane_stats: false,
            drain: caps.drain,
            stats: caps.stats,
            table: true,
            frame_budget: false,
            frame_deadline: false,
            descriptors: false,
        },
        ..CheckContext::default()
    }
}
