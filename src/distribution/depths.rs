//! A lane's depth per destination node: what [`DistSender`]'s enqueues
//! admit.
//!
//! Model: a lane's depth is a promise to each node, not a budget the nodes
//! share. A frame for node `n` is refused (a data frame dropped, a control
//! overflowed and its pinned generation marked down) only when `n`'s own
//! frames fill its depth, so one node's backlog never refuses another
//! node's frame (S9, independence across peers). A frame counts from its
//! admission until the drain takes it to write, skip or drop: a lane holds
//! at most `depth` frames of each node, and the sender at most `depth`
//! times the nodes it holds frames for.
//!
//! Before, each lane was one bounded channel: a write parked on a wedged
//! peer let the other nodes' controls fill the one lane, and the next
//! control for a healthy node overflowed and took that node down
//! (`sender_wedge_blast_radius`, every seed). Pinned by
//! `one_nodes_full_share_of_the_control_lane_never_refuses_another_nodes_control`
//! (tests/distribution_sender.rs); planted bug #21
//! ([`PlantedBug::LaneDepthSharedAcrossNodes`]) puts the shared depth back.
//!
//! [`DistSender`]: super::DistSender

use std::collections::BTreeMap;

use super::node::NodeName;
use crate::planted::{Planted, PlantedBug};
use crate::shim::sync::Mutex;

/// One lane's per-node depth.
pub(super) struct Depths {
    depth: usize,
    /// Frames admitted and not yet taken, per node (`None`: every node at
    /// once, the planted bug's one shared count). A node with none has no
    /// entry.
    held: Mutex<BTreeMap<Option<NodeName>, usize>>,
    planted: Planted,
}

impl Depths {
    /// `depth` frames per node (at least 1: the configuration checks it).
    pub(super) fn new(depth: usize, planted: Planted) -> Self {
        Self {
            depth,
            held: Mutex::new(BTreeMap::new()),
            planted,
        }
    }

    /// Whose count a frame for `node` is held in.
    fn key(&self, node: &NodeName) -> Option<NodeName> {
        (!self.planted.has(PlantedBug::LaneDepthSharedAcrossNodes)).then(|| node.clone())
    }

    /// Admits one frame for `node` if its depth has room; whether it did.
    pub(super) fn admit(&self, node: &NodeName) -> bool {
        let mut held = self.held.lock();
        let count = held.entry(self.key(node)).or_default();
        if *count >= self.depth {
            return false;
        }
        *count += 1;
        true
    }

    /// One admitted frame for `node` left the lane (taken by the drain,
    /// swept, or never sent).
    pub(super) fn release(&self, node: &NodeName) {
        let mut held = self.held.lock();
        let key = self.key(node);
        if let Some(count) = held.get_mut(&key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(&key);
            }
        }
    }
}
