//! lanesim's own components as a target: `LaneRouter` and
//! `OrderedDispatcher` for the lanes world ([`lanes`]), `ConnectionManager`
//! with `DistSender` for the sender and mesh worlds, each wrapped in an
//! adapter over the public target traits, as a user wraps theirs. The
//! planted-bug catalogue is this target's own: a selection travels in the
//! target.

pub mod lanes;
pub mod node;

use lanesim::planted::Planted;
use lanesim::shim::probe::{ACCEPTOR_SITES, LANES_SITES, NODE_SITES};
use lanesim_target::lanes::LanesTarget;
use lanesim_target::node::NodeTarget;
use lanesim_target::Targets;

use crate::coverage::Registry;
use crate::scenario::WorldKind;

/// Registers the sites lanesim's components mark, with the world whose
/// code reaches each: the shipped scenarios name them, whatever the target.
pub fn register_sites(registry: &mut Registry) {
    registry.add(WorldKind::Lanes, LANES_SITES);
    // The acceptor's first: a name keeps the world it is first given.
    registry.add(WorldKind::Mesh, ACCEPTOR_SITES);
    registry.add(WorldKind::Sender, NODE_SITES);
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
