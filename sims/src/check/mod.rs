//! Checkers: each decides one contract over a world's event log. The same
//! checker serves every scenario; a violation carries the contract, what was
//! broken, and the handful of events that prove it.
//!
//! Model. A checker replays the log (a linearisation: every world is
//! single-threaded) and reports through one [`Collector`], which owns the
//! evidence policy: the cited records in log order, duplicates removed, at
//! most [`MAX_EVIDENCE`] of them, the first and the last always among them.
//! Safety contracts are decided as the replay meets their breach;
//! completeness contracts ("every admitted item was handled", "every
//! written frame arrived") only when the run ended within its budget ([`CheckContext::finished`]).

pub mod holds;
pub mod lanes;
pub mod mesh;
pub mod overlap;
pub mod sender;

use std::fmt;
use std::time::Duration;

use crate::event::Record;
use crate::scenario::{Contract, WorldKind};

/// Records cited per violation, at most.
pub const MAX_EVIDENCE: usize = 8;

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
        writeln!(
            f,
            "{} ({}) violated: {}",
            self.contract.id(),
            self.contract.name(),
            self.message
        )?;
        for record in &self.evidence {
            writeln!(f, "    {record}")?;
        }
        Ok(())
    }
}

/// Collects violations with their evidence, the same way for every checker.
pub struct Collector<'a> {
    records: &'a [Record],
    violations: Vec<Violation>,
}

impl<'a> Collector<'a> {
    /// A collector citing records of `records`.
    #[must_use]
    pub fn new(records: &'a [Record]) -> Self {
        Self {
            records,
            violations: Vec::new(),
        }
    }

    /// The log being checked.
    #[must_use]
    pub fn records(&self) -> &'a [Record] {
        self.records
    }

    /// Reports a breach of `contract`, citing the records at `evidence`
    /// (indices into the log, any order, repeats allowed). The records
    /// that decide the breach are cited whatever their number: when more
    /// than [`MAX_EVIDENCE`] are given, the first and the last in log
    /// order are kept (what began the breach and what decided it: the
    /// write's start and its end, a down and the write that outlived it)
    /// and the rest are cut from the middle (pinned by
    /// `evidence_keeps_the_deciding_record_when_it_cuts`).
    pub fn violate(&mut self, contract: Contract, message: String, evidence: &[usize]) {
        let mut cited: Vec<usize> = evidence
            .iter()
            .copied()
            .filter(|&i| i < self.records.len())
            .collect();
        cited.sort_unstable();
        cited.dedup();
        if cited.len() > MAX_EVIDENCE {
            let last = cited[cited.len() - 1];
            cited.truncate(MAX_EVIDENCE - 1);
            cited.push(last);
        }
        self.violations.push(Violation {
            contract,
            message,
            evidence: cited.into_iter().map(|i| self.records[i].clone()).collect(),
        });
    }

    /// Everything reported.
    #[must_use]
    pub fn into_violations(self) -> Vec<Violation> {
        self.violations
    }
}

/// What the target under test reports beyond what the world sees from
/// outside (`targets::decide`): a checker that would read a report the log
/// cannot have goes without it, or leaves its contract to `decide`'s "not
/// decided". lanesim's own components report everything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reported {
    /// Lanes come and go in the log (`LaneCreated`, `LaneClosed`), and each
    /// handler call names the lane it runs on.
    pub lifecycle: bool,
    /// The lanes' counters (`DispatcherStats`).
    pub lane_stats: bool,
    /// The drain's account of every frame (`WriteStarted`, `WriteFinished`,
    /// skips, discards).
    pub drain: bool,
    /// The sender's counters (`SenderStats`).
    pub stats: bool,
    /// The node's table (`ConnectionDown::table`, `TableAtEnd`).
    pub table: bool,
    /// The node bounds partly read frames by its frame budget: M9's
    /// clauses about the budget are decided.
    pub frame_budget: bool,
    /// The node enforces the frame deadline: M9's trickle clause is
    /// decided.
    pub frame_deadline: bool,
    /// The node keeps its sockets within the descriptor limit it is told:
    /// M7's clause on running out of descriptors is decided.
    pub descriptors: bool,
}

impl Default for Reported {
    fn default() -> Self {
        Self {
            lifecycle: true,
            lane_stats: true,
            drain: true,
            stats: true,
            table: true,
            frame_budget: true,
            frame_deadline: true,
            descriptors: true,
        }
    }
}

/// What a checker may know besides the log: the run's configuration, which
/// bounds how long things may take.
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
    /// The longest a preemption point may hold a task (0: points never
    /// sleep): a task preempted there is late by up to this much.
    pub preempt_max: Duration,
    /// How long a frame written to a healthy socket may take to be read by
    /// its peer (latency, a slow reader's backlog, ticks): S6's window.
    pub delivery_bound: Duration,
    /// How long writing one whole frame may take on a healthy link: its
    /// segments go a window (`tcp_capacity`) per round, each round up to a
    /// latency and two ticks, behind at most a window already unread. A
    /// write deadline no longer than this can fire with nothing wrong (S7).
    pub write_bound: Duration,
    /// The world's redial policy, if it redials: `(after, connect_timeout)`
    /// (S8's bound).
    pub redial: Option<(Duration, Duration)>,
    /// The sender's lane depths, `(data, control)`: a lane refuses only
    /// when full and never holds more.
    pub lane_capacity: Option<(u64, u64)>,
    /// The connection layer's bound on a dial (its handshake too), and closing a
    /// socket after a down.
    pub connect_timeout: Duration,
    /// The production heartbeat tick, where the world runs one (M5).
    pub heartbeat: Option<Duration>,
    /// The nodes' frame deadline, where the world sets one (M9).
    pub frame_timeout: Option<Duration>,
    /// The nodes' frame budget in bytes, where the world sets one (M9).
    pub frame_budget: Option<u64>,
    /// How far apart two racing steps on different threads may be logged
    /// out of the order in which they took effect: zero in simulation (one
    /// thread runs everything, and a step and its record have no `.await`
    /// between them); real mode's grain for a real run, where a step's
    /// effect (a write passing its down check under the writer lock) and
    /// its record (the socket-level write tap) are apart by however long
    /// the OS keeps that thread from its next instruction.
    pub race_window: Duration,
    /// What the target reports.
    pub reported: Reported,
    /// A lane acknowledges an item (drops it from the count `route`
    /// reports and admits by) only after its handler returns, and the log
    /// may hold the item's end before that: until the lane starts its next
    /// item (or ends), `route` may still count it. False where a record
    /// and its step are one (simulation, real mode's ordering lock keeps
    /// them together); true in the model world, whose tasks interleave
    /// between a handler's end and the lane's acknowledgement.
    pub late_acks: bool,
    /// A shutdown is not one step of the log: the world logs it, then asks
    /// for it outside the log's order, and the downs it makes
    /// (`ManualDisconnect`) are logged by the task that asked after other
    /// tasks may already see them. A failed write or a skipped control
    /// logged after `ShutdownRequested` and before its generation's
    /// shutdown down is then that down's effect, not a fate with no cause.
    /// True in the model world only, where enqueues must race a shutdown;
    /// everywhere else a shutdown and its downs are logged as they happen.
    pub late_shutdown_downs: bool,
}

impl CheckContext {
    /// Whether the down `down` of a generation, logged at `down_at`, may
    /// have taken effect before the record at `index` although logged
    /// after it ([`CheckContext::late_shutdown_downs`]): a shutdown's
    /// down, the shutdown asked for at `shutdown` before `index`.
    #[must_use]
    pub fn shutdown_down_logged_late(
        &self,
        shutdown: Option<usize>,
        index: usize,
        down_at: usize,
        reason: lanesim_target::node::DownReason,
    ) -> bool {
        self.late_shutdown_downs
            && reason == lanesim_target::node::DownReason::ManualDisconnect
            && shutdown.is_some_and(|asked| asked < index)
            && down_at > index
    }

    /// Whether a record logged at `logged` may have taken effect before one
    /// logged at `other`: only within the race window after it (never in
    /// simulation, where the window is zero and log order alone decides,
    /// even within one tick). The one rule DC-2, S3 and S7 share.
    #[must_use]
    pub fn may_precede(&self, logged: Duration, other: Duration) -> bool {
        !self.race_window.is_zero() && logged <= other + self.race_window
    }

    /// How long a dial takes on a healthy simulated link at worst: its
    /// connect and its handshake are two round trips at up to turmoil's
    /// largest latency (100 ms) each way, seen at the simulation's tick. A
    /// connect timeout shorter than this can expire with nothing wrong, so
    /// M1 and S8 do not hold a dial that timed out under it against the
    /// code (`m1_allows_a_redial_when_both_dials_time_out_on_a_healthy_link`,
    /// `s8_excuses_a_peer_every_dial_to_which_times_out_under_a_short_timeout`).
    #[must_use]
    pub fn dial_round_trips(&self) -> Duration {
        Duration::from_millis(400) + self.tick * 4
    }

    /// Whether a dial may time out on a healthy link ([`Self::dial_round_trips`]).
    #[must_use]
    pub fn dials_may_time_out(&self) -> bool {
        self.connect_timeout < self.dial_round_trips()
    }
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
    if wants(WorldKind::Mesh) {
        found.extend(mesh::check(records, context));
    }
    found.retain(|v| contracts.contains(&v.contract));
    found.sort_by_key(|violation| violation.contract);
    found
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::event::{Event, Record};

    #[test]
    fn evidence_keeps_the_deciding_record_when_it_cuts() {
        let host: Arc<str> = Arc::from("local");
        let records: Vec<Record> = (0..20u64)
            .map(|i| Record {
                at: Duration::from_millis(i),
                host: Arc::clone(&host),
                event: Event::RunEnd {
                    finished: i % 2 == 0,
                },
            })
            .collect();
        let mut out = Collector::new(&records);
        // The deciding record (19) given first, then many more.
        let cited: Vec<usize> = std::iter::once(19).chain(0..15).collect();
        out.violate(Contract::L1, "breach".into(), &cited);
        let violation = &out.into_violations()[0];
        assert_eq!(violation.evidence.len(), MAX_EVIDENCE);
        assert_eq!(violation.evidence[0], records[0]);
        assert_eq!(violation.evidence[MAX_EVIDENCE - 1], records[19]);
        // In log order throughout.
        assert!(violation.evidence.windows(2).all(|w| w[0].at < w[1].at));
    }
}
