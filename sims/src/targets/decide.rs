//! What a target's capabilities let the testbed decide of a scenario.
//!
//! Model. A scenario lists contracts and marks to reach; a target declares
//! what it reports. Whatever the checkers can see from outside (handler
//! calls per key, what `route` answered, the bytes on every socket, what
//! peers read, up and down reports) is decided for every target. What
//! needs the target's help (lane lifecycle, the drain's account of every
//! frame, counters, marks in its code) is decided only for a target that
//! gives it; for any other it is **not decided**, with the reason, in
//! every output, and never counted as a pass. A target that cannot run a
//! scenario at all (no such component, a mode it lacks) is refused: none of
//! its seeds run, and the whole scenario is reported as not decided.
//!
//! The table of what each contract needs is here and only here, pinned by
//! `outside_lanesim_passes_what_it_decides_on_every_shipped_scenario`
//! (sims/tests/targets.rs): a target that reports nothing optional is left
//! S2 and S4, and nothing else, undecided (L5 is decided on lanes the world
//! infers from the router's tasks, run by run: `world::lanes::infer`).

use lanesim::shim::probe::Mark;
use lanesim_target::hazard::Hazard;
use lanesim_target::lanes::{LanesCapabilities, ModeKind};
use lanesim_target::node::NodeCapabilities;
use serde::{Deserialize, Serialize};

use super::Subject;
use crate::check::Reported;
use crate::coverage::{CoverMark, Coverage, Role, Site, WorldMark};
use crate::explore::tokio_explores;
use crate::scenario::{Contract, Policy, Scenario, WorldKind};

/// The roles a node's own link table reaches: a target that declares none
/// (`NodeCapabilities::links`) has its links kept by the world, and never
/// reaches them, whatever marks its code declares.
const LINK_ROLES: &[Role] = &[Role::LinkBrokenByDown, Role::LinkMadeOverDown];

/// lanesim's link table's marks (`src/distribution/links.rs`).
const LINK_MARKS: &[&str] = &[
    Mark::LinkBrokenByDown.name(),
    Mark::LinkKeptAcrossDown.name(),
    Mark::LinkMadeOverDown.name(),
];

const NO_LINK_TABLE: &str =
    "the world keeps the target's links: it declares no link table (NodeCapabilities::links)";

/// A contract or mark the target cannot support, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotDecided<T> {
    /// What is not decided.
    pub what: T,
    /// Why.
    pub why: String,
}

/// What a target can decide of one scenario.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decidable {
    /// Why the target cannot run the scenario at all.
    pub refused: Option<String>,
    /// Listed contracts it cannot support.
    pub contracts: Vec<NotDecided<Contract>>,
    /// Listed contracts decided but for a clause it cannot support (a
    /// capability it declares it lacks): the rest of the contract is
    /// checked, the clause is not.
    #[serde(default)]
    pub clauses: Vec<NotDecided<Contract>>,
    /// Marks the scenario must reach that it cannot report.
    pub marks: Vec<NotDecided<CoverMark>>,
    /// Listed contracts the target breaks knowingly, with its reason
    /// (`lanesim_target::hazard`): checked, and a run that breaks only
    /// these is an accepted hazard, never a pass.
    #[serde(default)]
    pub accepted: Vec<NotDecided<Contract>>,
    /// Which of the target's marks show each role it maps (what a run's
    /// coverage gains as [`CoverMark::Role`]: [`Decidable::show_roles`]).
    #[serde(skip)]
    pub roles: Vec<(Role, Site)>,
}

impl Decidable {
    /// Whether `contract` is decided.
    #[must_use]
    pub fn decides(&self, contract: Contract) -> bool {
        self.refused.is_none() && !self.contracts.iter().any(|n| n.what == contract)
    }

    /// Whether the target accepts breaking `contract` (a hazard it
    /// declares).
    #[must_use]
    pub fn accepts(&self, contract: Contract) -> bool {
        self.accepted.iter().any(|n| n.what == contract)
    }

    /// Whether a requirement on `mark` is decided.
    #[must_use]
    pub fn reaches(&self, mark: CoverMark) -> bool {
        self.refused.is_none() && !self.marks.iter().any(|n| n.what == mark)
    }

    /// Adds to `coverage` each role the target maps that the run showed:
    /// as often as the run made the role's marks, together.
    pub fn show_roles(&self, coverage: &mut Coverage) {
        for &(role, site) in &self.roles {
            if let Some(&hits) = coverage.get(&CoverMark::Code(site)) {
                *coverage.entry(CoverMark::Role(role)).or_default() += hits;
            }
        }
    }

    /// Whether everything the scenario lists is decided.
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.refused.is_none()
            && self.contracts.is_empty()
            && self.clauses.is_empty()
            && self.marks.is_empty()
    }

    /// What is not decided of the listed contracts, as reports list it:
    /// whole contracts, then clauses.
    #[must_use]
    pub fn undecided(&self) -> Vec<NotDecided<Contract>> {
        self.contracts
            .iter()
            .chain(&self.clauses)
            .cloned()
            .collect()
    }
}

fn not(what: Contract, why: &str) -> NotDecided<Contract> {
    NotDecided {
        what,
        why: why.to_string(),
    }
}

/// The hazards a target declares on the contracts `scenario` lists, or
/// why one names no contract (bad input: the scenario is refused).
fn accepted(hazards: &[Hazard], scenario: &Scenario) -> Result<Vec<NotDecided<Contract>>, String> {
    let mut out = Vec::new();
    for hazard in hazards {
        let Some(contract) = Contract::ALL
            .iter()
            .copied()
            .find(|c| c.id() == hazard.contract)
        else {
            let ids: Vec<&str> = Contract::ALL.iter().map(|c| c.id()).collect();
            return Err(format!(
                "the target accepts a hazard on `{}`, which names no contract (Hazard::contract is one of {})",
                hazard.contract,
                ids.join(", ")
            ));
        };
        if scenario.file.checks.contains(&contract)
            && !out
                .iter()
                .any(|n: &NotDecided<Contract>| n.what == contract)
        {
            out.push(NotDecided {
                what: contract,
                why: hazard.reason.to_string(),
            });
        }
    }
    Ok(out)
}

/// Why a lanes target cannot run `scenario`'s policy, if it cannot.
fn lanes_refusal(caps: &LanesCapabilities, policy: Policy) -> Option<String> {
    let (kind, name) = match policy {
        Policy::Raw => (ModeKind::Router, "router"),
        Policy::Reject => (ModeKind::Reject, "reject"),
        Policy::Warn => (ModeKind::Warn, "warn"),
    };
    (!caps.modes.contains(&kind)).then(|| format!("the target's lanes have no `{name}` mode"))
}

fn lanes_contracts(caps: &LanesCapabilities, scenario: &Scenario) -> Vec<NotDecided<Contract>> {
    let mut out = Vec::new();
    // Without lifecycle reports the world infers lanes from the target's
    // tasks, which only lanesim's tokio tells it of; a run where the
    // inference fails leaves L5 undecided for itself (`run::judge`).
    if caps.lifecycle || tokio_explores() {
        return out;
    }
    for &contract in &scenario.file.checks {
        if contract == Contract::L5 {
            out.push(not(
                contract,
                "reaping is seen only in the lane lifecycle, which the target does not report (LanesCapabilities::lifecycle) and this build's stock tokio cannot infer: the crate needs lanesim's `[patch.crates-io] tokio` line (README, \"Your implementation\")",
            ));
        }
    }
    out
}

/// The clauses of listed contracts a node's missing capabilities leave
/// undecided.
fn node_clauses(caps: &NodeCapabilities, scenario: &Scenario) -> Vec<NotDecided<Contract>> {
    let mut out = Vec::new();
    if scenario.file.checks.contains(&Contract::M9) {
        if !caps.frame_budget {
            out.push(not(
                Contract::M9,
                "its clauses on the frame budget (what a node holds of partly read frames stays within it; no stream refused with half of it free) are not decided: the target declares no frame budget (NodeCapabilities::frame_budget)",
            ));
        }
        if !caps.frame_deadline {
            out.push(not(
                Contract::M9,
                "its clause on the frame deadline (a trickled frame is cut within it) is not decided: the target declares no frame deadline (NodeCapabilities::frame_deadline)",
            ));
        }
    }
    if scenario.file.checks.contains(&Contract::M7)
        && scenario
            .file
            .mesh
            .as_ref()
            .is_some_and(|mesh| mesh.descriptors.is_some())
        && !caps.descriptors
    {
        out.push(not(
            Contract::M7,
            "its clause on descriptors (a node told its descriptor limit never runs out of them) is not decided: the target declares it does not fit its sockets within the limit (NodeCapabilities::descriptors)",
        ));
    }
    out
}

fn node_contracts(caps: &NodeCapabilities, scenario: &Scenario) -> Vec<NotDecided<Contract>> {
    let mut out = Vec::new();
    for &contract in &scenario.file.checks {
        match contract {
            Contract::S2 if !caps.drain => out.push(not(
                contract,
                "how long each write held the drain is seen only in the drain's account, which the target does not report (NodeCapabilities::drain)",
            )),
            Contract::S4 if !caps.drain => out.push(not(
                contract,
                "a frame's fate (written, skipped, unroutable, discarded) is seen only in the drain's account, which the target does not report (NodeCapabilities::drain)",
            )),
            Contract::M5 if !caps.heartbeat => out.push(not(
                contract,
                "the target runs no heartbeat (NodeCapabilities::heartbeat)",
            )),
            Contract::M7 if !caps.heartbeat => out.push(not(
                contract,
                "a probe's stream is seen accepted by the keepalive written on it, and the target runs no heartbeat (NodeCapabilities::heartbeat)",
            )),
            _ => {}
        }
    }
    out
}

/// The world marks only lanesim's tokio (the scheduler that asks an
/// explorer) makes; with stock tokio no run can reach them.
const EXPLORATION_MARKS: &[WorldMark] = &[
    WorldMark::ScheduleShuffled,
    WorldMark::AwaitPreempted,
    WorldMark::TaskHeld,
];

/// Why exploration marks are not decided in a build with stock tokio.
pub const STOCK_TOKIO: &str = "this build's tokio is stock tokio, which explores nothing: the crate needs lanesim's `[patch.crates-io] tokio` line (README, \"Your implementation\")";

/// The world marks only a lifecycle report makes.
const LIFECYCLE_MARKS: &[WorldMark] = &[
    WorldMark::LaneRebuiltAfterReap,
    WorldMark::LaneRebuiltAfterPanic,
];

impl Subject {
    /// What this target can decide of `scenario`.
    #[must_use]
    pub fn decidable(&self, scenario: &Scenario) -> Decidable {
        let world = scenario.file.world;
        let refused = match world {
            WorldKind::Lanes => match self.lanes() {
                None => Some("the target has no lanes router".to_string()),
                Some(lanes) => scenario
                    .file
                    .lanes
                    .as_ref()
                    .and_then(|spec| lanes_refusal(&lanes.capabilities(), spec.policy)),
            },
            WorldKind::Sender => self
                .node()
                .is_none()
                .then(|| "the target has no node".to_string()),
            WorldKind::Mesh => match self.node() {
                None => Some("the target has no node".to_string()),
                Some(node) => (!node.capabilities().accepts).then(|| {
                    "the target's node does not accept dials (NodeCapabilities::accepts)"
                        .to_string()
                }),
            },
        };
        let refused = refused.or_else(|| super::fixed::refusal(scenario, &self.fixed()));
        let hazards = match world {
            WorldKind::Lanes => self.lanes().map_or(&[][..], |l| l.capabilities().hazards),
            WorldKind::Sender | WorldKind::Mesh => {
                self.node().map_or(&[][..], |n| n.capabilities().hazards)
            }
        };
        let accepted = accepted(hazards, scenario);
        let refused = refused.or_else(|| accepted.as_ref().err().cloned());
        if refused.is_some() {
            return Decidable {
                refused,
                ..Decidable::default()
            };
        }
        let frame_deadline = self.node().is_none_or(|n| n.capabilities().frame_deadline);
        let links = self.node().is_none_or(|n| n.capabilities().links);
        let (contracts, clauses, sites, lifecycle) = match world {
            WorldKind::Lanes => {
                let caps = self.lanes().map(|l| l.capabilities());
                let caps = caps.expect("not refused: the target has lanes");
                (
                    lanes_contracts(&caps, scenario),
                    Vec::new(),
                    caps.sites,
                    caps.lifecycle,
                )
            }
            WorldKind::Sender | WorldKind::Mesh => {
                let caps = self.node().map(|n| n.capabilities());
                let caps = caps.expect("not refused: the target has a node");
                (
                    node_contracts(&caps, scenario),
                    node_clauses(&caps, scenario),
                    caps.sites,
                    true,
                )
            }
        };
        let marks = scenario
            .reaches
            .iter()
            .filter_map(|reach| {
                let why = match reach.mark {
                    CoverMark::Code(site) if !self.is_builtin() && !sites.marks.contains(&site.name()) => {
                        "the target's code does not declare this mark (Sites::marks)"
                    }
                    CoverMark::Preempted(site)
                        if !self.is_builtin() && !sites.points.contains(&site.name()) =>
                    {
                        "the target's code has no such preemption point (Sites::points)"
                    }
                    CoverMark::World(mark)
                        if !lifecycle && !tokio_explores() && LIFECYCLE_MARKS.contains(&mark) =>
                    {
                        "the world sees lanes come and go only in lifecycle reports (LanesCapabilities::lifecycle) or, with lanesim's tokio, inferred from the target's tasks, and this build has stock tokio"
                    }
                    CoverMark::World(WorldMark::TrickleCut) if !frame_deadline => {
                        "a trickle is cut by a frame deadline, and the target declares none (NodeCapabilities::frame_deadline)"
                    }
                    CoverMark::World(mark)
                        if EXPLORATION_MARKS.contains(&mark) && !tokio_explores() =>
                    {
                        STOCK_TOKIO
                    }
                    CoverMark::Task(..) if !tokio_explores() => STOCK_TOKIO,
                    CoverMark::Role(role) if !links && LINK_ROLES.contains(&role) => NO_LINK_TABLE,
                    CoverMark::Code(site) if !links && LINK_MARKS.contains(&site.name()) => {
                        NO_LINK_TABLE
                    }
                    CoverMark::Role(role) if !sites.roles.iter().any(|(r, _)| *r == role) => {
                        "the target maps none of its marks to this role (Sites::roles)"
                    }
                    CoverMark::Code(_)
                    | CoverMark::Preempted(_)
                    | CoverMark::World(_)
                    | CoverMark::Role(_)
                    | CoverMark::Task(..) => return None,
                };
                Some(NotDecided {
                    what: reach.mark,
                    why: why.to_string(),
                })
            })
            .collect();
        Decidable {
            refused: None,
            contracts,
            clauses,
            accepted: accepted.unwrap_or_default(),
            marks,
            roles: sites
                .roles
                .iter()
                .map(|&(role, mark)| (role, Site::new(mark)))
                .collect(),
        }
    }

    /// What the target reports, as the checkers need to know it.
    #[must_use]
    pub fn reported(&self) -> Reported {
        let lanes = self.lanes().map(|l| l.capabilities());
        let node = self.node().map(|n| n.capabilities());
        Reported {
            lifecycle: lanes.is_none_or(|c| c.lifecycle),
            lane_stats: lanes.is_none_or(|c| c.stats),
            drain: node.is_none_or(|c| c.drain),
            stats: node.is_none_or(|c| c.stats),
            table: node.is_none_or(|c| c.table),
            frame_budget: node.is_none_or(|c| c.frame_budget),
            frame_deadline: node.is_none_or(|c| c.frame_deadline),
            descriptors: node.is_none_or(|c| c.descriptors),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use ::lanesim::planted::Planted;
    use lanesim_target::node::{Node, NodeSetup, NodeTarget};
    use lanesim_target::probe::Role;
    use lanesim_target::Targets;

    use super::*;
    use crate::targets::lanesim::LanesimTargets;

    /// lanesim's node declaring only the frame and descriptor
    /// capabilities it is given.
    struct Frames {
        inner: LanesimTargets,
        budget: bool,
        deadline: bool,
        descriptors: bool,
    }

    impl Targets for Frames {
        fn name(&self) -> &str {
            "frames"
        }

        fn node(&self) -> Option<&dyn NodeTarget> {
            Some(self)
        }
    }

    impl NodeTarget for Frames {
        fn capabilities(&self) -> NodeCapabilities {
            NodeCapabilities {
                frame_budget: self.budget,
                frame_deadline: self.deadline,
                descriptors: self.descriptors,
                ..self
                    .inner
                    .node()
                    .expect("lanesim has a node")
                    .capabilities()
            }
        }

        fn start(&self, setup: NodeSetup) -> Result<Box<dyn Node>, String> {
            self.inner.node().expect("lanesim has a node").start(setup)
        }
    }

    fn frames(budget: bool, deadline: bool) -> Subject {
        Subject::user(Arc::new(Frames {
            inner: LanesimTargets::new(Planted::none()),
            budget,
            deadline,
            descriptors: true,
        }))
    }

    /// M7's descriptor clause is left undecided for a node that does not
    /// declare it fits the limit, in a scenario that sets one, and only
    /// there; its other clauses are still decided.
    #[test]
    fn the_descriptor_clause_is_undecided_without_its_capability() {
        let undeclared = Subject::user(Arc::new(Frames {
            inner: LanesimTargets::new(Planted::none()),
            budget: true,
            deadline: true,
            descriptors: false,
        }));
        let why = |subject: &Subject, name: &str| -> Vec<String> {
            subject
                .decidable(&shipped(name))
                .clauses
                .into_iter()
                .map(|n| n.why)
                .collect()
        };
        let tight = why(&undeclared, "mesh_flood_tight_descriptors");
        assert_eq!(tight.len(), 1, "{tight:?}");
        assert!(
            tight[0].contains("NodeCapabilities::descriptors"),
            "{tight:?}"
        );
        assert!(why(&undeclared, "mesh_flood").is_empty());
        assert!(why(&frames(true, true), "mesh_flood_tight_descriptors").is_empty());
        assert!(!undeclared.reported().descriptors);
    }

    fn shipped(name: &str) -> Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scenarios")
            .join(format!("{name}.toml"));
        Scenario::load(&path).unwrap()
    }

    /// Each of M9's capability clauses is left undecided by its own
    /// capability, and only by it (a node with a deadline and no budget
    /// is judged on trickles, not on the budget; and the reverse).
    #[test]
    fn each_frame_clause_is_undecided_by_its_own_capability() {
        let spender = shipped("mesh_spender");
        let clauses = |budget, deadline| -> Vec<String> {
            frames(budget, deadline)
                .decidable(&spender)
                .clauses
                .into_iter()
                .map(|n| n.why)
                .collect()
        };
        assert!(clauses(true, true).is_empty());
        let no_budget = clauses(false, true);
        assert_eq!(no_budget.len(), 1, "{no_budget:?}");
        assert!(no_budget[0].contains("frame_budget"), "{no_budget:?}");
        let no_deadline = clauses(true, false);
        assert_eq!(no_deadline.len(), 1, "{no_deadline:?}");
        assert!(no_deadline[0].contains("frame_deadline"), "{no_deadline:?}");
        assert_eq!(clauses(false, false).len(), 2);
    }

    /// `trickle_cut` needs a frame deadline: a node with a budget alone
    /// leaves it undecided, one with a deadline alone decides it.
    #[test]
    fn a_trickle_cut_is_decided_by_the_frame_deadline_alone() {
        let trickle = shipped("mesh_trickle");
        let cut = CoverMark::World(WorldMark::TrickleCut);
        assert!(
            trickle.reaches.iter().any(|r| r.mark == cut),
            "mesh_trickle requires trickle_cut"
        );
        assert!(!frames(true, false).decidable(&trickle).reaches(cut));
        assert!(frames(false, true).decidable(&trickle).reaches(cut));
    }

    /// A role mapped to several marks is shown as often as all of them
    /// together, not as the last one.
    #[test]
    fn a_role_counts_every_mark_mapped_to_it() {
        let role = Role::ALL[0];
        let (one, two) = (Site::new("first_of_two"), Site::new("second_of_two"));
        let decidable = Decidable {
            roles: vec![(role, one), (role, two)],
            ..Decidable::default()
        };
        let mut coverage = Coverage::new();
        coverage.insert(CoverMark::Code(one), 3);
        coverage.insert(CoverMark::Code(two), 4);
        decidable.show_roles(&mut coverage);
        assert_eq!(coverage.get(&CoverMark::Role(role)), Some(&7));
    }
}
