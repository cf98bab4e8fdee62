//! Implementations written apart from lanesim's own, the way an engineer
//! would write them without its design in front of them, and tested by
//! lanesim only through its public target API (`lanesim_target`):
//!
//! - [`lanes`]: a per-key ordering router: a `Mutex<HashMap>` of tokio
//!   channels, one consumer task per key, idle lanes reaped by a sweeper.
//! - [`node`]: a node that dials peers and keeps one writer task per peer.
//! - [`select_lanes`]: another per-key router, one task per key whose idle
//!   wait is a `tokio::select!` between its channel and an idle timer; an
//!   idle lane reaps itself ([`SelectTargets`]).
//! - [`idle_lanes`]: a per-key router whose lanes reap themselves: a shared
//!   map of tokio channels with pending counters, one task per key looping
//!   on a `tokio::select!` between its channel and an idle sleep; on the
//!   sleep it removes its own entry if still registered and idle, and ends
//!   at once if the router is gone ([`IdleTargets`]).
//! - [`layer_sender`]: a sender alone, over a connection layer it is given:
//!   one queue and drain task per destination node, writes serialised by a
//!   per-node writer lock ([`LayerSenderTargets`]).
//! - [`checked_node`]: a node with its own TCP connection layer: per
//!   generation a `down` flag and a writer mutex, every write checking the
//!   flag, then taking the lock, then writing under a deadline; per peer a
//!   data and a control queue drained by one task; a reader and a
//!   keepalive task per generation ([`CheckedNodeTargets`]).
//!
//! - [`blind_lanes`]: a per-key router written blind against the public
//!   API and the shim (`lanesim_target::shim`), for the model world: a map
//!   behind one lock, a channel and a pending count per lane, idle lanes
//!   reaping themselves after a `timeout` ([`blind_lanes::BlindTargets`]).
//! - [`sharded_lanes`]: the same, written blind for throughput: a DashMap of
//!   lanes, `route` under the shard's read lock only, a reap by `remove_if`
//!   under its write lock ([`sharded_lanes::ShardedTargets`]).
//! - [`unlocked_lanes`]: the same, written blind under the rule "no lock
//!   across a send": a handle cloned out of the table, admission by a
//!   compare-and-swap on the pending count, then the send; a reap retires
//!   the lane by swapping that count from 0 ([`unlocked_lanes::UnlockedTargets`]).
//!
//! Nothing is planted in them: what the testbed finds in them is the
//! result (docs/examples.md).

pub mod blind_lanes;
pub mod blind_sender;
pub mod checked_node;
mod handshake;
pub mod idle_lanes;
pub mod lanes;
pub mod layer_sender;
pub mod node;
pub mod select_lanes;
pub mod sharded_lanes;
pub mod unlocked_lanes;

/// Both, as one target.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExampleTargets;

impl lanesim_target::Targets for ExampleTargets {
    fn name(&self) -> &str {
        "examples"
    }

    fn lanes(&self) -> Option<&dyn lanesim_target::lanes::LanesTarget> {
        Some(&lanes::ExampleLanes)
    }

    fn node(&self) -> Option<&dyn lanesim_target::node::NodeTarget> {
        Some(&node::ExampleNode)
    }
}

/// The `select!` lanes router ([`select_lanes`]) alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct SelectTargets;

impl lanesim_target::Targets for SelectTargets {
    fn name(&self) -> &str {
        "select-lanes"
    }

    fn lanes(&self) -> Option<&dyn lanesim_target::lanes::LanesTarget> {
        Some(&select_lanes::SelectLanes)
    }
}

/// The idle-reaping lanes router ([`idle_lanes`]) alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdleTargets;

impl lanesim_target::Targets for IdleTargets {
    fn name(&self) -> &str {
        "idle-lanes"
    }

    fn lanes(&self) -> Option<&dyn lanesim_target::lanes::LanesTarget> {
        Some(&idle_lanes::IdleLanes)
    }
}

/// The layer sender, run over lanesim's connection layer as the node.
#[derive(Clone, Copy, Debug, Default)]
pub struct LayerSenderTargets;

impl lanesim_target::Targets for LayerSenderTargets {
    fn name(&self) -> &str {
        "layer-sender"
    }

    fn node(&self) -> Option<&dyn lanesim_target::node::NodeTarget> {
        None
    }

    fn sender(&self) -> Option<&dyn lanesim_target::layer::SenderTarget> {
        Some(&layer_sender::LayerSenderTarget)
    }
}

/// The checked node ([`checked_node`]) alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckedNodeTargets;

impl lanesim_target::Targets for CheckedNodeTargets {
    fn name(&self) -> &str {
        "checked-node"
    }

    fn node(&self) -> Option<&dyn lanesim_target::node::NodeTarget> {
        Some(&checked_node::CheckedNode)
    }
}
