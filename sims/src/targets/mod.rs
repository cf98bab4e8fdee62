//! The implementations the worlds run. A world sees a target only through
//! the public traits of `lanesim_target`; lanesim's own components are one
//! target among others ([`lanesim`]), the only module of the testbed that
//! names their types.
//!
//! A run's [`Subject`] is the target it tests and, for lanesim's own
//! components, the planted bug they are built with (the catalogue is theirs:
//! another target has none).

pub mod composed;
pub mod decide;
pub mod fixed;
pub mod lanesim;
pub mod outside;

use std::fmt;
use std::sync::Arc;

use ::lanesim::planted::Planted;
use lanesim_target::lanes::LanesTarget;
use lanesim_target::node::NodeTarget;
use lanesim_target::Targets;

use crate::run::Rerun;
use crate::world_kind::WorldKind;

/// What the runs of a sweep test. Cheap to clone.
#[derive(Clone)]
pub struct Subject {
    targets: Arc<dyn Targets>,
    /// The node made of lanesim's connection layer and the target's
    /// sender, for a target that offers a sender alone.
    composed: Option<Arc<composed::Composed>>,
    planted: Planted,
    builtin: bool,
    /// How a repro line runs this binary again (`cargo run --` for
    /// lanesim's own; a user's runner says its own).
    rerun: Arc<Rerun>,
}

impl Subject {
    /// lanesim's own components, built with `planted` (none, or one bug).
    #[must_use]
    pub fn lanesim(planted: Planted) -> Self {
        Self {
            targets: Arc::new(lanesim::LanesimTargets::new(planted)),
            composed: None,
            planted,
            builtin: true,
            rerun: Arc::new(Rerun::Lanesim {
                planted: planted.selected().is_some(),
            }),
        }
    }

    /// A user's implementations. Their code sites become nameable by
    /// scenarios (`sites::register`).
    #[must_use]
    pub fn user(targets: Arc<dyn Targets>) -> Self {
        if let Some(lanes) = targets.lanes() {
            crate::sites::register(WorldKind::Lanes, lanes.capabilities().sites);
        }
        if let Some(node) = targets.node() {
            crate::sites::register(WorldKind::Sender, node.capabilities().sites);
        }
        if let Some(sender) = targets.sender() {
            crate::sites::register(WorldKind::Sender, sender.capabilities().sites);
        }
        let composed = (targets.node().is_none() && targets.sender().is_some())
            .then(|| Arc::new(composed::Composed::new(Arc::clone(&targets))));
        let rerun = Arc::new(Rerun::Given(format!("<the runner of {}>", targets.name())));
        Self {
            targets,
            composed,
            planted: Planted::none(),
            builtin: false,
            rerun,
        }
    }

    /// The same, its repro lines starting with `command` (e.g. `cargo test
    /// --test lanesim --`): the command that runs this runner.
    #[must_use]
    pub fn with_command(self, command: impl Into<String>) -> Self {
        self.with_rerun(Rerun::Given(command.into()))
    }

    /// The same, run again as `rerun` says (`main!` says how its binary
    /// is run: `run::Rerun`).
    #[must_use]
    pub fn with_rerun(mut self, rerun: Rerun) -> Self {
        self.rerun = Arc::new(rerun);
        self
    }

    /// How a repro line runs this binary again.
    #[must_use]
    pub fn rerun(&self) -> &Rerun {
        &self.rerun
    }

    /// The same target seen from outside only (`outside`), with the same
    /// planted bug (a node made of its sender over lanesim's layer is seen
    /// from outside as a whole).
    #[must_use]
    pub fn outside(&self) -> Self {
        let targets: Arc<dyn Targets> = Arc::new(outside::OutsideTargets::new(Arc::new(Resolved(
            self.clone(),
        ))));
        Self {
            targets,
            composed: None,
            planted: self.planted,
            builtin: false,
            rerun: Arc::clone(&self.rerun),
        }
    }

    /// Every mark a run of this target can reach: the worlds' own and the
    /// code sites its components declare (all of lanesim's for lanesim's).
    #[must_use]
    pub fn marks(&self) -> Vec<crate::coverage::CoverMark> {
        use crate::coverage::CoverMark;
        let all = CoverMark::all();
        if self.builtin {
            return all;
        }
        let lanes = self.lanes().map(|l| l.capabilities().sites);
        let node = self.node().map(|n| n.capabilities().sites);
        let declared = |site: crate::sites::Site, point: bool| {
            [lanes, node].into_iter().flatten().any(|sites| {
                let names = if point { sites.points } else { sites.marks };
                names.contains(&site.name())
            })
        };
        all.into_iter()
            .filter(|mark| match *mark {
                CoverMark::Code(site) => declared(site, false),
                CoverMark::Preempted(site) => declared(site, true),
                CoverMark::Role(role) => [lanes, node]
                    .into_iter()
                    .flatten()
                    .any(|sites| sites.roles.iter().any(|(r, _)| *r == role)),
                CoverMark::World(_) | CoverMark::Task(..) => true,
            })
            .collect()
    }

    /// The values the target does not take from the world
    /// ([`fixed`]).
    #[must_use]
    pub fn fixed(&self) -> fixed::Fixed {
        fixed::Fixed {
            lanes: self
                .lanes()
                .map(|l| l.capabilities().fixed)
                .unwrap_or_default(),
            node: self
                .node()
                .map(|n| n.capabilities().fixed)
                .unwrap_or_default(),
        }
    }

    /// Seed `seed`'s parameters of `scenario`, as this target runs them:
    /// sampled, then with the target's fixed values in place
    /// ([`fixed::apply`]).
    #[must_use]
    pub fn sample(
        &self,
        scenario: &crate::scenario::Scenario,
        seed: u64,
    ) -> crate::scenario::Params {
        let mut params = scenario.sample(seed);
        fixed::apply(&mut params, &self.fixed());
        params
    }

    /// The target's name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.targets.name()
    }

    /// Whether this is lanesim's own components.
    #[must_use]
    pub fn is_builtin(&self) -> bool {
        self.builtin
    }

    /// The planted bug (always none for a user's target).
    #[must_use]
    pub fn planted(&self) -> Planted {
        self.planted
    }

    /// The lanes router, if the target has one.
    #[must_use]
    pub fn lanes(&self) -> Option<&dyn LanesTarget> {
        self.targets.lanes()
    }

    /// The sender the target offers alone, to run over lanesim's
    /// connection layer (`Targets::sender`), if it does.
    #[must_use]
    pub fn sender(&self) -> Option<&dyn lanesim_target::layer::SenderTarget> {
        self.targets.sender()
    }

    /// The node, if the target has one: its own, or its sender over
    /// lanesim's connection layer.
    #[must_use]
    pub fn node(&self) -> Option<&dyn NodeTarget> {
        self.targets.node().or_else(|| {
            self.composed
                .as_deref()
                .map(|composed| composed as &dyn NodeTarget)
        })
    }
}

/// A subject's components as a `Targets` (its node the composed one, when
/// it has a sender alone).
struct Resolved(Subject);

impl Targets for Resolved {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn lanes(&self) -> Option<&dyn LanesTarget> {
        self.0.lanes()
    }

    fn node(&self) -> Option<&dyn NodeTarget> {
        self.0.node()
    }
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subject")
            .field("target", &self.name())
            .field("planted", &self.planted)
            .finish()
    }
}

impl Default for Subject {
    fn default() -> Self {
        Self::lanesim(Planted::none())
    }
}
