//! lanesim's own components as a target: `LaneRouter` and
//! `OrderedDispatcher` for the lanes world ([`lanes`]), `ConnectionManager`
//! with `DistSender` for the sender and mesh worlds, each wrapped in an
//! adapter over the public target traits, as a user wraps theirs. The
//! planted-bug catalogue is this target's own: a selection travels in the
//! target.

pub mod lanes;
pub mod node;

use lanesim::planted::Planted;
use lanesim_target::lanes::LanesTarget;
use lanesim_target::node::NodeTarget;
use lanesim_target::Targets;

use crate::sites::{Registry, LANESIM_SITES};

/// Registers the sites lanesim's components mark, with the world whose
/// code reaches each ([`LANESIM_SITES`]): the shipped scenarios name them,
/// whatever the target. The process's registry starts with them.
pub fn register_sites(registry: &mut Registry) {
    for (world, sites) in LANESIM_SITES {
        registry.add(world, sites);
    }
}

/// Every lanesim component, built with one planted bug or none.
#[derive(Clone, Copy, Debug, Default)]
pub struct LanesimTargets {
    lanes: lanes::LanesimLanes,
    node: node::LanesimNode,
}

impl LanesimTargets {
    /// The components with `planted`.
    #[must_use]
    pub fn new(planted: Planted) -> Self {
        Self {
            lanes: lanes::LanesimLanes { planted },
            node: node::LanesimNode { planted },
        }
    }
}

impl Targets for LanesimTargets {
    fn name(&self) -> &str {
        "lanesim"
    }

    fn lanes(&self) -> Option<&dyn LanesTarget> {
        Some(&self.lanes)
    }

    fn node(&self) -> Option<&dyn NodeTarget> {
        Some(&self.node)
    }
}
