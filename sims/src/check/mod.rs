//! Checkers: each decides one contract over a world's event log. The same
//! checker serves every scenario; a violation carries the contract, what was
//! broken, and the handful of events that prove it.

pub mod lanes;
pub mod sender;

use std::fmt;
use std::time::Duration;

use crate::event::Record;
use crate::scenario::{Contract, WorldKind};

/// One broken contract.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which contract.
    pub contract: Contract,
    /// What happened, in one sentence.
    pub message: String,
    /// The events that prove it, in log order.
    pub evidence: Vec<Record>,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} violated: {}", self.contract.id(), self.message)?;
        for record in &self.evidence {
            writeln!(f, "    {record}")?;
        }
        Ok(())
    }
}

/// What a checker may know besides the log.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckContext {
    /// The run ended within its budget; completeness checks ("every item was
    /// eventually handled") only apply then.
    pub finished: bool,
    /// The lanes' idle TTL, if any.
    pub idle_ttl: Option<Duration>,
    /// A panicking consumer kills its lane (raw router), so the items queued
    /// behind it are lost with it rather than handled.
    pub panics_kill_lanes: bool,
    /// The sender's write deadline (S2).
    pub write_timeout: Option<Duration>,
    /// The simulation's tick: the resolution of every time in the log.
    pub tick: Duration,
}

/// Every violation of `contracts` in `records`, in contract order.
#[must_use]
pub fn check(contracts: &[Contract], records: &[Record], context: &CheckContext) -> Vec<Violation> {
    let wants = |world| contracts.iter().any(|c| c.world() == world);
    let mut found: Vec<Violation> = Vec::new();
    if wants(WorldKind::Lanes) {
        found.extend(lanes::check(records, context));
    }
    if wants(WorldKind::Sender) {
        found.extend(sender::check(records, context));
    }
    found.retain(|v| contracts.contains(&v.contract));
    found.sort_by_key(|violation| violation.contract);
    found
}
