//! An event's kind: which [`Event`] variant it is, without its fields.
//!
//! Model. A failure's signature (`run::signature`) names the kind of the
//! event that decided it, and `audit` compares two diverging events' kinds:
//! both match on a small `Copy` enum, not on a printed name. The enum is
//! made from the one list below by a macro that also writes the exhaustive
//! match, so an event added to [`Event`] without a kind here does not
//! compile (`every_event_has_a_kind_named_as_the_log_names_it`).

use serde::{Deserialize, Serialize};

use super::Event;

macro_rules! kinds {
    ($($name:ident),* $(,)?) => {
        /// Which [`Event`] variant an event is.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum EventKind {
            $($name,)*
        }

        impl Event {
            /// This event's kind.
            #[must_use]
            pub fn kind(&self) -> EventKind {
                match self {
                    $(Self::$name { .. } => EventKind::$name,)*
                }
            }
        }

        impl EventKind {
            /// Every kind, in the log's declaration order.
            pub const ALL: &'static [EventKind] = &[$(Self::$name),*];

            /// The variant's name, as the log prints it (`Routed`).
            #[must_use]
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$name => stringify!($name),)*
                }
            }
        }
    };
}

kinds!(
    Routed,
    RouteBegan,
    LaneCreated,
    LaneClosed,
    HandleStart,
    HandleEnd,
    Stuck,
    RouterDropped,
    DispatcherStats,
    ConnectionUp,
    ConnectionDown,
    DialFailed,
    DataEnqueued,
    ControlEnqueued,
    WriteStarted,
    WriteFinished,
    WriteAbandoned,
    ControlSkipped,
    ControlDiscarded,
    DataUnroutable,
    DataDiscarded,
    FrameWriteBegun,
    HandshakeWriteBegun,
    Linked,
    NoConnection,
    PeerAccepted,
    FrameArrived,
    PeerActed,
    PeerSocketClosed,
    Fault,
    ShutdownRequested,
    Disconnected,
    SenderStats,
    TableAtEnd,
    NodeStarted,
    MeshUp,
    MeshDown,
    MeshLinked,
    MeshControl,
    MeshStrayFrame,
    MeshArrived,
    MeshNoConnection,
    MeshFault,
    MeshSquat,
    MeshClaim,
    MeshDataSent,
    MeshDataArrived,
    MeshDialedTogether,
    MeshTableAtEnd,
    WorkloadDone,
    RunEnd,
    InboundFrameRead,
    MeshProbe,
    MeshFloodProbe,
    MeshFloodHeld,
    MeshDescriptorsOut,
    MeshImpostor,
    MeshTrickle,
    MeshMisdialed,
    MeshStranger,
    MeshDialFailed,
    MeshHeld,
    MeshBudgetDown,
    MeshIntruderDown,
    TaskHeld,
);

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kind's name is the variant's name as an event prints (`{:?}`),
    /// and no two kinds share one.
    #[test]
    fn every_event_has_a_kind_named_as_the_log_names_it() {
        let event = Event::WorkloadDone;
        assert_eq!(event.kind(), EventKind::WorkloadDone);
        assert!(format!("{event:?}").starts_with(event.kind().name()));
        let routed = Event::Routed {
            key: 1,
            item: 2,
            capacity: None,
            depth: Some(0),
        };
        assert_eq!(routed.kind(), EventKind::Routed);
        assert!(format!("{routed:?}").starts_with("Routed {"));
        let mut names: Vec<&str> = EventKind::ALL.iter().map(|k| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), EventKind::ALL.len());
    }
}
