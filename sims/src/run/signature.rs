//! A failure's signature: what makes two failures the same failure, so a
//! report prints each distinct failure once, with its count and one repro,
//! instead of the same violation 169 times (a hunt of a published sender
//! did).
//!
//! Model. A signature is
//!
//! - how the run failed ([`Failing`]): the contract it broke first (the one
//!   a hunt shrinks for, `hunt::shrink::Expect`), or its verdict when no
//!   contract broke (liveness, crash);
//! - the kind of the event that decided it ([`EventKind`]): the last event
//!   the first violation cites, which is where the checker's replay met
//!   the breach (evidence is cited in log order); none for liveness and
//!   crash, which no event decides;
//! - for a hunt, the shape its case shrank to ([`Shape`]): the world and
//!   the kinds of fault the shrunk case still needs. Sizes are left out:
//!   shrinking is not exact (a smaller case draws a different run from the
//!   same seed), so two shrinks of one bug end at slightly different sizes
//!   but keep the faults the bug needs;
//! - for a sweep (`run`, `merge`), the scenario, so each scenario's
//!   failures stay its own.
//!
//! Every part a program matches on is an enum; the scenario is a name.
//! [`Group`] is one signature's count in a sweep, with its lowest seed and
//! that seed's repro. A group is a sum and a minimum, so shards' groups
//! merge into exactly the unsharded sweep's
//! (`groups_merge_as_counts_and_the_lowest_seed`).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Repro, RunResult, Verdict};
use crate::event::EventKind;
use crate::scenario::{Contract, FaultKind, MeshFaultKind, Params};

/// How a run failed: the contract it broke first, or its verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Failing {
    /// It broke this contract (first).
    Broke(Contract),
    /// It outlived its virtual-time budget, no contract broken.
    Liveness,
    /// The testbed panicked.
    Crash,
}

impl Failing {
    /// The contract's id, `liveness` or `crash`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Broke(contract) => contract.id(),
            Self::Liveness => "liveness",
            Self::Crash => "crash",
        }
    }
}

impl fmt::Display for Failing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Broke(contract) => write!(f, "{} ({})", contract.id(), contract.name()),
            Self::Liveness => f.write_str("LIVENESS"),
            Self::Crash => f.write_str("CRASH"),
        }
    }
}

/// The shape a hunt's case shrank to: its world and the kinds of fault it
/// still has (sorted, each once).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "world", content = "faults")]
pub enum Shape {
    /// A lanes case (the lanes world has no faults).
    Lanes,
    /// A sender case and its faults' kinds.
    Sender(Vec<FaultKind>),
    /// A mesh case and its faults' kinds.
    Mesh(Vec<MeshFaultKind>),
}

impl Shape {
    /// The shape of a case with `params`.
    #[must_use]
    pub fn of(params: &Params) -> Self {
        fn kinds<K: Ord + Copy>(faults: impl Iterator<Item = K>) -> Vec<K> {
            let mut kinds: Vec<K> = faults.collect();
            kinds.sort_unstable();
            kinds.dedup();
            kinds
        }
        match params {
            Params::Lanes(_) => Self::Lanes,
            Params::Sender(p) => Self::Sender(kinds(p.faults.iter().map(|f| f.kind))),
            Params::Mesh(p) => Self::Mesh(kinds(p.faults.iter().map(|f| f.kind))),
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn names<K: Serialize>(kinds: &[K]) -> String {
            if kinds.is_empty() {
                return "no faults".into();
            }
            kinds
                .iter()
                .map(|kind| {
                    serde_json::to_value(kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
        match self {
            Self::Lanes => f.write_str("lanes"),
            Self::Sender(kinds) => write!(f, "sender, {}", names(kinds)),
            Self::Mesh(kinds) => write!(f, "mesh, {}", names(kinds)),
        }
    }
}

/// What makes two failures the same failure (the module's model).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signature {
    /// The scenario (a sweep's failures; none for a hunt's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// How it failed.
    pub failing: Failing,
    /// The kind of the event that decided it (none for liveness, crash).
    pub decided_by: Option<EventKind>,
    /// The shape its case shrank to (a hunt's shrunk failures only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Shape>,
}

impl Signature {
    /// The signature of a failed run (`None` for a pass), without a
    /// scenario or a shape.
    #[must_use]
    pub fn of(result: &RunResult) -> Option<Self> {
        let (failing, decided_by) = match result.verdict {
            Verdict::Pass | Verdict::Hazard => return None,
            Verdict::Liveness => (Failing::Liveness, None),
            Verdict::Crash => (Failing::Crash, None),
            Verdict::Violated => {
                let first = result.violations.first()?;
                (
                    Failing::Broke(first.contract),
                    first.evidence.last().map(|record| record.event.kind()),
                )
            }
        };
        Some(Self {
            scenario: None,
            failing,
            decided_by,
            shape: None,
        })
    }

    /// The signature of a sweep's failed run: with its scenario.
    #[must_use]
    pub fn of_sweep(result: &RunResult) -> Option<Self> {
        Self::of(result).map(|signature| Self {
            scenario: Some(result.scenario.clone()),
            ..signature
        })
    }

    /// The same, with the shape its case shrank to.
    #[must_use]
    pub fn shrunk_to(self, shape: Shape) -> Self {
        Self {
            shape: Some(shape),
            ..self
        }
    }

    /// The same without scenario or shape: what a hunt can say of a
    /// failing case it did not keep.
    #[must_use]
    pub fn bare(&self) -> Self {
        Self {
            scenario: None,
            shape: None,
            ..self.clone()
        }
    }
}

/// `DC-1 (send or down) at ConnectionDown, shrunk to sender, wedge in
/// sender_chaos`: what the report heads a group with.
impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.failing)?;
        if let Some(kind) = self.decided_by {
            write!(f, " at {kind}")?;
        }
        if let Some(shape) = &self.shape {
            write!(f, ", shrunk to {shape}")?;
        }
        if let Some(scenario) = &self.scenario {
            write!(f, " in {scenario}")?;
        }
        Ok(())
    }
}

/// One signature's failures in a sweep: how many runs, the lowest seed and
/// its repro (its failure in full is among the kept ones unless more than
/// `KEPT_FAILURES` lower seeds failed first).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The signature.
    pub signature: Signature,
    /// Runs that failed with it.
    pub runs: u64,
    /// The lowest such seed.
    pub first: u64,
    /// What the first violation said on that seed (or the verdict).
    pub message: String,
    /// That seed's repro.
    pub repro: Repro,
}

/// Adds one failed run to `groups` (kept sorted by signature): its
/// group's count grows, and its seed becomes the group's first when lower;
/// `detail` (its message and repro) is made only then.
pub fn add_run(
    groups: &mut Vec<Group>,
    signature: Signature,
    seed: u64,
    detail: impl FnOnce() -> (String, Repro),
) {
    match groups.binary_search_by(|g| g.signature.cmp(&signature)) {
        Ok(at) => {
            let group = &mut groups[at];
            group.runs += 1;
            if seed < group.first {
                (group.message, group.repro) = detail();
                group.first = seed;
            }
        }
        Err(at) => {
            let (message, repro) = detail();
            groups.insert(
                at,
                Group {
                    signature,
                    runs: 1,
                    first: seed,
                    message,
                    repro,
                },
            );
        }
    }
}

/// Folds another shard's group into `groups`: counts add, the lower first
/// seed is kept.
pub fn merge(groups: &mut Vec<Group>, other: Group) {
    match groups.binary_search_by(|g| g.signature.cmp(&other.signature)) {
        Ok(at) => {
            let group = &mut groups[at];
            group.runs += other.runs;
            if other.first < group.first {
                group.first = other.first;
                group.message = other.message;
                group.repro = other.repro;
            }
        }
        Err(at) => groups.insert(at, other),
    }
}

/// The first violation's line of a failed run (or its verdict, or its
/// crash).
#[must_use]
pub fn first_message(result: &RunResult) -> String {
    match result.violations.first() {
        Some(v) => format!(
            "{} ({}) violated: {}",
            v.contract.id(),
            v.contract.name(),
            v.message
        ),
        None => result
            .crash
            .clone()
            .unwrap_or_else(|| result.verdict.name().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(contract: Contract, scenario: &str, seed: u64) -> Group {
        Group {
            signature: Signature {
                scenario: Some(scenario.into()),
                failing: Failing::Broke(contract),
                decided_by: Some(EventKind::Routed),
                shape: None,
            },
            runs: 1,
            first: seed,
            message: format!("seed {seed}"),
            repro: Repro::default(),
        }
    }

    /// Folding failures in any order, or in shards whose groups are then
    /// folded together, gives the same groups: counts add up, the lowest
    /// seed is kept with its message.
    #[test]
    fn groups_merge_as_counts_and_the_lowest_seed() {
        let failures = [
            group(Contract::L4, "a", 9),
            group(Contract::L1, "a", 4),
            group(Contract::L4, "a", 2),
            group(Contract::L4, "b", 7),
            group(Contract::L4, "a", 5),
        ];
        let fold = |groups: &mut Vec<Group>, one: &Group| {
            add_run(groups, one.signature.clone(), one.first, || {
                (one.message.clone(), one.repro.clone())
            });
        };
        let mut serial = Vec::new();
        for one in &failures {
            fold(&mut serial, one);
        }
        let mut shards = [Vec::new(), Vec::new()];
        for (i, one) in failures.iter().rev().enumerate() {
            fold(&mut shards[i % 2], one);
        }
        let [left, right] = shards;
        let mut merged = left;
        for one in right {
            merge(&mut merged, one);
        }
        assert_eq!(serial, merged);
        assert_eq!(serial.len(), 3);
        let l4a = serial
            .iter()
            .find(|g| {
                g.signature.failing == Failing::Broke(Contract::L4)
                    && g.signature.scenario.as_deref() == Some("a")
            })
            .unwrap();
        assert_eq!(
            (l4a.runs, l4a.first, l4a.message.as_str()),
            (3, 2, "seed 2")
        );
    }

    /// A shape names the world and each fault kind once, in order.
    #[test]
    fn a_shape_is_its_world_and_its_fault_kinds_each_once() {
        let shape = Shape::Sender(vec![FaultKind::Wedge, FaultKind::Kill]);
        assert_eq!(shape.to_string(), "sender, wedge, kill");
        assert_eq!(Shape::Mesh(Vec::new()).to_string(), "mesh, no faults");
        let signature = Signature {
            scenario: None,
            failing: Failing::Broke(Contract::Dc1),
            decided_by: Some(EventKind::ConnectionDown),
            shape: Some(shape),
        };
        assert_eq!(
            signature.to_string(),
            "DC-1 (send or down) at ConnectionDown, shrunk to sender, wedge, kill"
        );
    }
}
