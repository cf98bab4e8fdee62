//! The model world's workloads: a handful of producers, one or two keys, a
//! few items each, every one set up for a race between threads. Small on
//! purpose: the model checker explores the interleavings of every step, so
//! each added step multiplies what there is to explore.
//!
//! Items are numbered `producer * 100 + step`, so an item's number says
//! who routed it. The router is shared by the producers and dropped by
//! whichever finishes last, so its drop races the lanes' work on what was
//! just routed; with a TTL every idle wait of a lane may time out at any
//! point (`lanesim_shim::time` under shuttle), so reaps race routes.

/// One step of a producer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Route the next item of this key.
    Route(u64),
    /// Let the other tasks run (`task::yield_now`).
    Yield,
}

/// How items are admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// A plain router, no capacity: a panicking handler unwinds through
    /// its lane.
    Router,
    /// A plain router that admits at most this many unhandled items per
    /// key.
    Capacity(usize),
    /// A dispatcher that refuses past this limit and catches panics.
    Reject(usize),
}

/// A workload of the model world.
#[derive(Debug)]
pub struct Workload {
    /// Its name, as `lanesim model --workload` takes it.
    pub name: &'static str,
    /// The race it sets up.
    pub about: &'static str,
    /// The states it must reach, each in at least this share of its
    /// executions under each default strategy: half the smallest share
    /// reached, under PCT (depth 3) or random, over 10,000 executions of
    /// seed 0, by lanesim's components and the example targets that pass
    /// (docs/model-world.md).
    pub reaches: &'static [(Reach, f64)],
    /// What it runs.
    pub shape: Shape,
}

/// What a workload runs: a lanes router, or a sender over lanesim's
/// connection layer.
#[derive(Debug)]
pub enum Shape {
    /// Producers routing items into the target's router ([`super::world`]).
    Lanes(LanesShape),
    /// Actors enqueueing frames into the target's sender, taking its
    /// connections down and shutting it down ([`super::sender`]).
    Sender(super::sender::workload::SenderShape),
}

impl Workload {
    /// The lanes workload, if it is one.
    #[must_use]
    pub fn lanes(&self) -> Option<&LanesShape> {
        match &self.shape {
            Shape::Lanes(lanes) => Some(lanes),
            Shape::Sender(_) => None,
        }
    }

    /// Its log is not a linearisation (routes overlap): only
    /// `check::overlap` decides it.
    #[must_use]
    pub fn overlaps(&self) -> bool {
        self.lanes().is_some_and(|lanes| lanes.overlap)
    }
}

/// A lanes workload: producers routing one or two keys.
#[derive(Debug)]
pub struct LanesShape {
    /// How items are admitted.
    pub admit: Admit,
    /// Lanes reap when idle (the timer fires where the checker chooses).
    pub ttl: bool,
    /// The producers' routes may overlap: a route is not one step of the
    /// log, its `Routed` is logged when it returns, and only L1 and L2 are
    /// decided (`check::overlap`). Otherwise each route and its record are
    /// one step, and every lanes contract is decided on the linearisation.
    pub overlap: bool,
    /// Each producer's steps, run on a task of its own.
    pub producers: &'static [&'static [Step]],
    /// Items whose handler panics (after its end is logged). Only where
    /// the dispatcher catches panics: shuttle models a panic as the end of
    /// an execution (a checker lock released while unwinding is closed to
    /// its waiters, as if poisoned), so a plain router's lane that unwinds
    /// through its own locks cannot be explored; the simulated worlds
    /// decide that case.
    pub panics: &'static [u64],
}

use super::reach::Reach;
use super::sender::workload::{
    Act::{self, Control, Data, Disconnect, Keepalive, Reconnect, Shutdown},
    SenderShape,
};
use Step::{Route, Yield};

/// Every workload, in the order `lanesim model` runs them: the lanes
/// workloads, then the sender's ([`super::sender::workload::WORKLOADS`]).
pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "route-then-drop",
        about: "one producer routes, lets the lane go idle (its timer may fire), routes again and drops the router: a reap racing the last route and the drop",
        reaches: &[
            (Reach::Reaped, 0.05),
            (Reach::DroppedWithWork, 0.12),
        ],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Router,
            ttl: true,
            overlap: false,
            producers: &[&[Route(0), Yield, Yield, Yield, Route(0)]],
            panics: &[],
        }),
    },
    Workload {
        name: "reap-racing-routes",
        about: "two producers route one key around idle gaps while its lane may reap at any wait: a reap racing a route from another thread",
        reaches: &[
            (Reach::Reaped, 0.014),
            (Reach::RebuiltAfterReap, 0.014),
            (Reach::QueuedBehind, 0.018),
        ],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Router,
            ttl: true,
            overlap: false,
            producers: &[
                &[Route(0), Yield, Yield, Yield, Yield, Yield, Yield, Route(0)],
                &[Yield, Yield, Yield, Route(0)],
            ],
            panics: &[],
        }),
    },
    Workload {
        name: "two-keys",
        about: "two producers route two keys in opposite orders, lanes reaping: per-key order and one live lane per key across keys",
        reaches: &[
            (Reach::TwoLanesLive, 0.5),
            (Reach::Reaped, 0.016),
            (Reach::RebuiltAfterReap, 0.015),
        ],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Router,
            ttl: true,
            overlap: false,
            producers: &[&[Route(0), Route(1)], &[Route(1), Route(0)]],
            panics: &[],
        }),
    },
    Workload {
        name: "drop-racing-work",
        about: "two producers route one key with no TTL; the last to finish drops the router while the lane still works: every admitted item handled, every lane ends",
        reaches: &[
            (Reach::DroppedWithWork, 0.49),
            (Reach::QueuedBehind, 0.49),
        ],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Router,
            ttl: false,
            overlap: false,
            producers: &[&[Route(0), Route(0)], &[Route(0)]],
            panics: &[],
        }),
    },
    Workload {
        name: "panic",
        about: "the first item's handler panics while another producer routes the key; the dispatcher catches it (limit 8, never reached): the lane lives on, nothing admitted is lost",
        reaches: &[
            (Reach::HandledAfterPanic, 0.5),
            (Reach::QueuedBehind, 0.49),
        ],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Reject(8),
            ttl: false,
            overlap: false,
            producers: &[&[Route(0), Route(0)], &[Yield, Route(0)]],
            panics: &[0],
        }),
    },
    Workload {
        name: "capacity-edge",
        about: "two producers route one key into a lane of capacity 1: admissions and refusals at the edge, and the depth each route reports",
        reaches: &[
            (Reach::Refused, 0.49),
            (Reach::DroppedWithWork, 0.05),
        ],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Capacity(1),
            ttl: false,
            overlap: false,
            producers: &[&[Route(0), Route(0)], &[Route(0)]],
            panics: &[],
        }),
    },
    Workload {
        name: "reject-edge",
        about: "a dispatcher with limit 1 refuses past it and catches a panicking handler while two producers route one key",
        reaches: &[
            (Reach::Refused, 0.49),
            (Reach::Reaped, 0.024),
            (Reach::HandledAfterPanic, 0.005),
        ],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Reject(1),
            ttl: true,
            overlap: false,
            producers: &[&[Route(0), Route(0)], &[Route(0)]],
            panics: &[0],
        }),
    },
    Workload {
        name: "overlapping-routes",
        about: "two producers route one key at once, their routes overlapping (only L1 and L2 decided): items admitted behind others must not start before them",
        reaches: &[(Reach::RoutesOverlapped, 0.18), (Reach::QueuedBehind, 0.5)],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Router,
            ttl: false,
            overlap: true,
            producers: &[&[Route(0), Route(0)], &[Route(0), Route(0)]],
            panics: &[],
        }),
    },
    Workload {
        name: "overlapping-reaps",
        about: "two producers route one key at once around idle gaps while its lane may reap (only L1 and L2 decided): overlapping routes racing a reap",
        reaches: &[(Reach::RoutesOverlapped, 0.008), (Reach::Reaped, 0.004)],
        shape: Shape::Lanes(LanesShape {
            admit: Admit::Router,
            ttl: true,
            overlap: true,
            producers: &[
                &[Route(0), Yield, Yield, Yield, Yield, Yield, Route(0)],
                &[Yield, Yield, Yield, Route(0), Route(0)],
            ],
            panics: &[],
        }),
    },
    Workload {
        name: "enqueue-racing-shutdown",
        about: "two actors enqueue data and controls for one peer while a third shuts the sender down: nothing accepted is lost, nothing is accepted that the drain will never see",
        reaches: &[(Reach::EnqueuedAfterShutdown, 0.033), (Reach::ShutdownWithQueued, 0.18)],
        shape: Shape::Sender(SenderShape {
            peers: 1,
            data_capacity: 4,
            control_capacity: 4,
            wedged: &[],
            slow: false,
            actors: &[
                &[Data(0), Data(0), Control(0)],
                &[Control(0), Data(0)],
                &[Act::Yield, Shutdown],
            ],
        }),
    },
    Workload {
        name: "control-racing-down",
        about: "an actor enqueues controls pinned to a peer's generation while another takes it down and reconnects: a control goes to its own generation or none, data to the live one, in order",
        reaches: &[
            (Reach::DownWithQueued, 0.16),
            (Reach::PinnedToDown, 0.023),
            (Reach::Reconnected, 0.5),
        ],
        shape: Shape::Sender(SenderShape {
            peers: 1,
            data_capacity: 4,
            control_capacity: 4,
            wedged: &[],
            slow: false,
            actors: &[
                &[Control(0), Data(0), Control(0)],
                &[Disconnect(0), Reconnect(0), Data(0)],
            ],
        }),
    },
    Workload {
        name: "deadline-racing-overflow",
        about: "a wedged peer's control lane of depth 1 overflows while the stuck write's deadline fires; another actor reconnects and enqueues: one down per generation, overflow only once down",
        reaches: &[
            (Reach::Overflowed, 0.4),
            (Reach::WriteTimedOut, 0.065),
            (Reach::DownAskedTwice, 0.029),
            (Reach::PinnedToDown, 0.42),
        ],
        shape: Shape::Sender(SenderShape {
            peers: 1,
            data_capacity: 4,
            control_capacity: 1,
            wedged: &[0],
            slow: false,
            actors: &[
                &[Control(0), Control(0), Control(0)],
                &[Data(0), Act::Yield, Reconnect(0), Control(0)],
            ],
        }),
    },
    Workload {
        name: "disconnect-racing-deadline",
        about: "a write to a wedged peer waits while one actor disconnects the peer and the write's deadline fires: the generation goes down once, its frames meet one fate each",
        reaches: &[
            (Reach::WriteTimedOut, 0.031),
            (Reach::DownAskedTwice, 0.007),
            (Reach::DownWithQueued, 0.45),
        ],
        shape: Shape::Sender(SenderShape {
            peers: 1,
            data_capacity: 4,
            control_capacity: 4,
            wedged: &[0],
            slow: false,
            actors: &[&[Control(0), Data(0)], &[Act::Yield, Disconnect(0)]],
        }),
    },
    Workload {
        name: "keepalive-racing-down",
        about: "a keepalive and the drain contend for a generation's writer lock while another actor disconnects it: no frame begins on a generation after its down",
        reaches: &[(Reach::DownMidWrite, 0.069), (Reach::DownWithQueued, 0.24)],
        shape: Shape::Sender(SenderShape {
            peers: 1,
            data_capacity: 4,
            control_capacity: 4,
            wedged: &[],
            slow: true,
            actors: &[
                &[Data(0), Control(0), Data(0)],
                &[Keepalive(0), Keepalive(0)],
                &[Act::Yield, Disconnect(0)],
            ],
        }),
    },
    Workload {
        name: "two-peers",
        about: "two actors enqueue for a healthy peer and a wedged one (lane depth 2): the healthy peer's frames keep their order and are never refused for the other's backlog",
        reaches: &[(Reach::WriteTimedOut, 0.5), (Reach::DataRefused, 0.37)],
        shape: Shape::Sender(SenderShape {
            peers: 2,
            data_capacity: 2,
            control_capacity: 2,
            wedged: &[1],
            slow: false,
            actors: &[
                &[Data(0), Data(1), Data(0), Data(1)],
                &[Data(1), Data(0), Data(1), Control(0)],
            ],
        }),
    },
];

/// The workload named `name`.
#[must_use]
pub fn named(name: &str) -> Option<&'static Workload> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// The item a producer's step routes.
#[must_use]
pub fn item(producer: usize, step: usize) -> u64 {
    producer as u64 * 100 + step as u64
}
