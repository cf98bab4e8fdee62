//! The drain's turns: frames taken off the lanes wait here, per node, and
//! the drain writes one frame of each node with frames per turn.
//!
//! Model: each node has its controls and its data, each in enqueue order,
//! and a place in a round: [`Turns::next`] takes the node whose turn it
//! is, hands out its oldest control (else its oldest data frame), and puts
//! the node at the back of the round if it has more. So between two
//! frames of one node the drain writes at most one frame of each other
//! node: a node whose writes are slow (a slow reader, a link with latency,
//! a wedged socket up to the write deadline) costs every other node at
//! most one write per turn, whatever its backlog (S9's delay bound), and a
//! node's controls still go before its data (DC-5 holds per node, which
//! is all it promises). Before, the drain wrote every node's controls,
//! then every node's data, each in enqueue order: a burst to a slow peer
//! held the frames enqueued behind it for the whole burst
//! (`sender_heartbeat_contention`, S9). Pinned by
//! `the_drain_writes_one_frame_of_each_node_per_turn`
//! (tests/distribution_sender.rs); planted bug #22
//! ([`PlantedBug::TurnsInArrivalOrder`]) puts that order back.
//!
//! Every frame carries its arrival number, so what is left at the drain's
//! end is handed back in the order the lanes took it (`drain_controls`,
//! `drain_data`).

use std::collections::{BTreeMap, VecDeque};

use super::node::NodeName;
use super::sender::{ControlOutbound, DataOutbound};
use crate::planted::{Planted, PlantedBug};

/// A frame whose turn came.
pub(super) enum Turn {
    Control(ControlOutbound),
    Data(DataOutbound),
}

/// One node's frames, each lane in arrival order.
#[derive(Default)]
struct Waiting {
    controls: VecDeque<(u64, ControlOutbound)>,
    data: VecDeque<(u64, DataOutbound)>,
}

impl Waiting {
    fn is_empty(&self) -> bool {
        self.controls.is_empty() && self.data.is_empty()
    }
}

/// The frames the drain has taken off the lanes and not yet written.
pub(super) struct Turns {
    nodes: BTreeMap<NodeName, Waiting>,
    /// Nodes with frames, in the order their turns come.
    round: VecDeque<NodeName>,
    /// The next arrival number.
    arrivals: u64,
    planted: Planted,
}

impl Turns {
    pub(super) fn new(planted: Planted) -> Self {
        Self {
            nodes: BTreeMap::new(),
            round: VecDeque::new(),
            arrivals: 0,
            planted,
        }
    }

    /// `node`'s frames, joining the round if it had none.
    fn waiting(&mut self, node: &NodeName) -> (&mut Waiting, u64) {
        if !self.nodes.contains_key(node) {
            self.round.push_back(node.clone());
        }
        let arrival = self.arrivals;
        self.arrivals += 1;
        (self.nodes.entry(node.clone()).or_default(), arrival)
    }

    /// Whether no frame is waiting.
    pub(super) fn is_empty(&self) -> bool {
        self.round.is_empty()
    }

    pub(super) fn push_control(&mut self, item: ControlOutbound) {
        let node = item.connection.node().clone();
        let (waiting, arrival) = self.waiting(&node);
        waiting.controls.push_back((arrival, item));
    }

    pub(super) fn push_data(&mut self, item: DataOutbound) {
        let node = item.node.clone();
        let (waiting, arrival) = self.waiting(&node);
        waiting.data.push_back((arrival, item));
    }

    /// The next frame to write, if any: the oldest control (else data
    /// frame) of the node whose turn it is.
    pub(super) fn next(&mut self) -> Option<Turn> {
        let node = if self.planted.has(PlantedBug::TurnsInArrivalOrder) {
            self.oldest()?
        } else {
            self.round.pop_front()?
        };
        let waiting = self.nodes.get_mut(&node)?;
        let turn = match waiting.controls.pop_front() {
            Some((_, control)) => Turn::Control(control),
            None => Turn::Data(waiting.data.pop_front()?.1),
        };
        if waiting.is_empty() {
            self.nodes.remove(&node);
            self.round.retain(|other| *other != node);
        } else if !self.planted.has(PlantedBug::TurnsInArrivalOrder) {
            self.round.push_back(node);
        }
        Some(turn)
    }

    /// Planted bug #22: the node of the oldest control anywhere, else of
    /// the oldest data frame (every control first, then every data frame,
    /// each in arrival order across nodes).
    fn oldest(&self) -> Option<NodeName> {
        let front = |lane: fn(&Waiting) -> Option<u64>| {
            self.nodes
                .iter()
                .filter_map(|(node, waiting)| lane(waiting).map(|arrival| (arrival, node)))
                .min()
                .map(|(_, node)| node.clone())
        };
        front(|w| w.controls.front().map(|(arrival, _)| *arrival))
            .or_else(|| front(|w| w.data.front().map(|(arrival, _)| *arrival)))
    }

    /// Every control left, in arrival order.
    pub(super) fn drain_controls(&mut self) -> Vec<ControlOutbound> {
        let mut all: Vec<(u64, ControlOutbound)> = self
            .nodes
            .values_mut()
            .flat_map(|waiting| waiting.controls.drain(..))
            .collect();
        all.sort_by_key(|(arrival, _)| *arrival);
        self.forget_empty();
        all.into_iter().map(|(_, control)| control).collect()
    }

    /// Every data frame left, in arrival order.
    pub(super) fn drain_data(&mut self) -> Vec<DataOutbound> {
        let mut all: Vec<(u64, DataOutbound)> = self
            .nodes
            .values_mut()
            .flat_map(|waiting| waiting.data.drain(..))
            .collect();
        all.sort_by_key(|(arrival, _)| *arrival);
        self.forget_empty();
        all.into_iter().map(|(_, data)| data).collect()
    }

    fn forget_empty(&mut self) {
        self.nodes.retain(|_, waiting| !waiting.is_empty());
        let nodes = &self.nodes;
        self.round.retain(|node| nodes.contains_key(node));
    }
}
