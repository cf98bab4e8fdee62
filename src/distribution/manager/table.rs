//! The slot table and its tie-break: which stream becomes a node's
//! generation, which is refused, and which refused stream stands by.
//!
//! Model: see the parent module's doc. The decision inside the table lock is
//! [`decide`], a pure function of the incumbent, the stream's origin and
//! which origin wins (table-driven tests below); `register_or_stand_by` applies
//! it and does the I/O (spawning read loops, standing by) outside the lock.

use std::collections::BTreeMap;

use lanesim_target::handshake::Nonce;
use lanesim_target::node::DownReason;
use tokio::io::AsyncReadExt as _;

use super::read_loop::{keepalives, read_loop};
use super::{ConnectionManager, ManagerShared, Origin, Registered, UpEvent};
use crate::distribution::connection::{DistConnection, DownEvent, DownListener};
use crate::distribution::frame::{buffer_within, FrameBudget};
use crate::distribution::node::NodeName;
use crate::planted::PlantedBug;
use crate::shim::net::{BoxRead, Connected};
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::{Arc, Notify, Weak};
use crate::shim::time::sleep;

/// What holds a node's slot when a stream arrives, as the tie-break sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Incumbent {
    /// Nothing.
    None,
    /// A connection already down (a redial displaces it).
    Down,
    /// A live connection, dialed from this end or the other.
    Live(Origin),
}

/// What becomes of the incumbent when a stream is installed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Displaces {
    /// There was none.
    Nothing,
    /// It was down already.
    Down,
    /// It was live and lost the tie-break: it goes down `SimultaneousConnect`.
    TieBreakLoser,
}

/// The registration's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// The stream becomes the node's next generation.
    Install(Displaces),
    /// The live incumbent stays and the stream is refused; `simultaneous`:
    /// the two were dialed from opposite ends.
    Refuse { simultaneous: bool },
}

/// The tie-break of the parent module's doc, with no I/O and no lock: a
/// stream of `origin` against `incumbent`, where streams of `winner` (the
/// origin the lower-named node dialed) win a simultaneous connect.
/// `tie_break` false is planted bug `NoTieBreak`: every live incumbent
/// stays. Pinned case by case by `the_tie_break_decides_every_case_as_the_table_says`.
pub(super) fn decide(
    incumbent: Incumbent,
    origin: Origin,
    winner: Origin,
    tie_break: bool,
) -> Decision {
    match incumbent {
        Incumbent::None => Decision::Install(Displaces::Nothing),
        Incumbent::Down => Decision::Install(Displaces::Down),
        Incumbent::Live(held) => {
            let simultaneous = held != origin;
            if tie_break && simultaneous && origin == winner {
                Decision::Install(Displaces::TieBreakLoser)
            } else {
                Decision::Refuse { simultaneous }
            }
        }
    }
}

/// What registration holds a stream to, beyond the table's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Checked {
    /// Nothing: the table's rules alone (this node's own dials, a test's
    /// streams, a refused stream standing by after the table's refusal).
    Unchecked,
    /// The claim check saw this live incumbent generation (`None`: no live
    /// one). If another live generation holds the slot by now, the stream
    /// is handed back for a fresh check instead.
    Incumbent(Option<u64>),
}

/// How a stream standing by is registered when its incumbent goes down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Promote {
    /// By the table's rules (a stream the table refused).
    Table,
    /// By the claim check again, against whatever holds the slot then (a
    /// claim its incumbent left unanswered, whose hello carried this
    /// nonce): it never displaces a live generation that did not confirm
    /// it.
    Claim(Nonce),
}

/// Per node: the last generation issued and the current connection.
#[derive(Default)]
pub(super) struct Slot {
    pub(super) generation: u64,
    /// The connection and which end dialed it.
    pub(super) current: Option<(Arc<DistConnection>, Origin)>,
}

/// The table: slots, and the one generation counter they draw from.
#[derive(Default)]
pub(super) struct Table {
    pub(super) slots: BTreeMap<NodeName, Slot>,
    pub(super) last_generation: u64,
}

impl DownListener for ManagerShared {
    fn connection_down_again(&self, connection: &DistConnection) {
        let table = self.table.lock();
        if table
            .slots
            .get(connection.node())
            .is_some_and(|slot| slot.generation > connection.generation())
        {
            mark(Mark::LateDownOfOldGeneration);
        }
    }

    /// Called once per generation by `DistConnection::mark_down`.
    fn connection_down(&self, connection: &DistConnection, reason: DownReason) {
        {
            let mut table = self.table.lock();
            if let Some(slot) = table.slots.get_mut(connection.node()) {
                if slot
                    .current
                    .as_ref()
                    .is_some_and(|(current, _)| std::ptr::eq(Arc::as_ptr(current), connection))
                {
                    slot.current = None;
                }
                // No live connection left: the slot goes (the counter that
                // keeps generations growing is the table's, not the slot's).
                if slot.current.is_none() {
                    table.slots.remove(connection.node());
                    mark(Mark::SlotRemoved);
                }
            }
        }
        let event = DownEvent {
            node: connection.node().clone(),
            generation: connection.generation(),
            reason,
        };
        tracing::debug!(node = %event.node, generation = event.generation, ?reason, "connection down");
        let hooks = self.down_hooks.lock().clone();
        for hook in hooks {
            // One panicking hook must neither starve the others (the link
            // table's noconnections) nor unwind into whoever marked down.
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&event))).is_err() {
                tracing::error!(node = %event.node, generation = event.generation, "a connection-down hook panicked");
            }
        }
    }
}
impl ConnectionManager {
    /// Installs `stream`, which this node dialed, as `node`'s connection
    /// and starts its read loop; returns the node's live connection after
    /// the tie-break (see [`ConnectionManager::register_as`]).
    ///
    /// No handshake: the caller vouches for the stream's peer (a stream it
    /// authenticated itself, or a test's). [`dial`](Self::dial) and the
    /// accept path register only streams whose peer proved the cookie.
    pub fn register(&self, node: NodeName, stream: Connected) -> Arc<DistConnection> {
        self.register_as(node, stream, Origin::Dialed)
            .into_connection()
    }

    /// Installs `stream` as `node`'s connection and starts its read loop
    /// and keepalives. With no live incumbent, the stream becomes the next
    /// generation (displacing a down one). With a live incumbent, the
    /// simultaneous-connect tie-break decides (module doc): the stream
    /// displaces it only if the stream was dialed by the lower-named node
    /// and the incumbent was not; otherwise the stream is dropped, and the
    /// refusal logged.
    ///
    /// Two refusals are not dropped at once (this node's dial losing to an
    /// accepted incumbent, and an accepted stream refused for an accepted
    /// incumbent): they stand by (see [`ConnectionManager::stand_by`]) in
    /// case the incumbent was a stale stream whose hello landed after its
    /// dialer had closed it.
    pub fn register_as(&self, node: NodeName, stream: Connected, origin: Origin) -> Registered {
        match self.register_or_stand_by(node, stream, origin, true, Checked::Unchecked) {
            Ok(registered) => registered,
            Err(_) => unreachable!("an unchecked stream is never handed back"),
        }
    }

    /// Registers an accepted stream the claim check passed, against the
    /// incumbent it checked: `Err(stream)` if another live generation took
    /// the slot meanwhile (the caller checks again).
    pub(super) fn register_checked(
        &self,
        node: NodeName,
        stream: Connected,
        checked: Option<u64>,
    ) -> Result<Registered, Connected> {
        self.register_or_stand_by(
            node,
            stream,
            Origin::Accepted,
            true,
            Checked::Incumbent(checked),
        )
    }

    fn register_or_stand_by(
        &self,
        node: NodeName,
        stream: Connected,
        origin: Origin,
        may_stand_by: bool,
        checked: Checked,
    ) -> Result<Registered, Connected> {
        let Connected {
            read,
            write,
            peer,
            local,
        } = stream;
        // Moved into the new connection only if it is registered; a refused
        // stream may still stand by.
        let mut halves = Some((write, local));
        // The connection dialed by the lower name wins.
        let winner = if self.local < node {
            Origin::Dialed
        } else {
            Origin::Accepted
        };
        let tie_break = !self.shared.planted.has(PlantedBug::NoTieBreak);
        let decided = {
            let mut table = self.shared.table.lock();
            let Table {
                slots,
                last_generation,
            } = &mut *table;
            let slot = slots.entry(node.clone()).or_default();
            let incumbent = match &slot.current {
                Some((current, held)) if self.shared.usable(current) => Incumbent::Live(*held),
                Some(_) => Incumbent::Down,
                None => Incumbent::None,
            };
            let live = slot
                .current
                .as_ref()
                .filter(|(current, _)| self.shared.usable(current))
                .map(|(current, _)| current.generation());
            // Another live generation took the slot since the check.
            let changed =
                matches!(checked, Checked::Incumbent(seen) if live.is_some() && live != seen);
            let decision = decide(incumbent, origin, winner, tie_break);
            let mut displaced_reason = DownReason::ManualDisconnect;
            let mut kept = None;
            match decision {
                Decision::Install(Displaces::Nothing) => {}
                Decision::Install(Displaces::Down) => mark(Mark::RegisterDisplacedDown),
                Decision::Install(Displaces::TieBreakLoser) => {
                    mark(Mark::RegisterTieBreakWon);
                    displaced_reason = DownReason::SimultaneousConnect;
                }
                Decision::Refuse { simultaneous } => {
                    // `decide` refuses only for a live incumbent.
                    let (current, _) = slot.current.as_ref().expect("refused for an incumbent");
                    kept = Some((Arc::clone(current), simultaneous));
                }
            }
            match kept {
                _ if changed => Err(None),
                Some(kept) => Err(Some(kept)),
                None => {
                    *last_generation += 1;
                    slot.generation = *last_generation;
                    let (write, local) = halves.take().expect("taken once, here");
                    let connection = Arc::new(DistConnection::new(
                        node.clone(),
                        slot.generation,
                        peer.clone(),
                        local,
                        write,
                        Arc::downgrade(&self.shared) as Weak<dyn DownListener>,
                        self.shared.planted,
                    ));
                    let displaced = slot
                        .current
                        .replace((Arc::clone(&connection), origin))
                        .map(|(old, _)| old);
                    Ok((connection, displaced.map(|old| (old, displaced_reason))))
                }
            }
        };
        let (connection, displaced) = match decided {
            Ok(new) => new,
            Err(None) => {
                let (write, local) = halves
                    .take()
                    .expect("not taken: the stream was not installed");
                return Err(Connected {
                    read,
                    write,
                    peer,
                    local,
                });
            }
            Err(Some((incumbent, simultaneous))) => {
                // Two refusals can be the work of a stale incumbent (see
                // `stand_by`): our dial losing to an accepted stream, and an
                // accepted stream refused for an accepted incumbent.
                let stands_by = may_stand_by
                    && matches!(
                        (origin, simultaneous),
                        (Origin::Dialed, true) | (Origin::Accepted, false)
                    );
                let refused = Self::refuse(Arc::clone(&incumbent), origin, &peer, simultaneous);
                if let (true, Some((write, local))) = (stands_by, halves) {
                    let stream = Connected {
                        read,
                        write,
                        peer,
                        local,
                    };
                    self.stand_by(node, stream, origin, incumbent, Promote::Table);
                }
                return Ok(refused);
            }
        };
        let hooks = self.shared.up_hooks.lock().clone();
        if !hooks.is_empty() {
            let event = UpEvent {
                node: connection.node().clone(),
                generation: connection.generation(),
                origin,
                peer: connection.peer().to_string(),
                local: connection.local().to_string(),
            };
            for hook in hooks {
                if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(&event))).is_err()
                {
                    tracing::error!(node = %event.node, generation = event.generation, "a connection-up hook panicked");
                }
            }
        }
        if let Some((displaced, reason)) = displaced {
            // Down already (a redial), or live and losing the tie-break.
            // Either way it goes down now, once.
            displaced.mark_down(reason);
        }
        tracing::debug!(node = %connection.node(), generation = connection.generation(), ?origin, "connection up");
        self.shared.runtime.spawn(read_loop(
            Arc::downgrade(&self.shared),
            Arc::clone(&connection),
            read,
        ));
        if let Some(tick) = self.shared.tick {
            self.shared
                .runtime
                .spawn(keepalives(Arc::clone(&connection), tick));
        }
        Ok(Registered::New(connection))
    }

    /// Keeps `stream`, refused in favour of the live `incumbent`, open for
    /// a while: if the incumbent goes down first, the stream is registered
    /// after all (it stands by once); otherwise it is dropped.
    ///
    /// Why: the tie-break assumes both ends see the same streams. A stream
    /// whose dialer closed it while its hello was in flight breaks that:
    /// the hello still lands, the acceptor registers the dead stream, and
    /// it then refuses the fresh streams that replace it, which the other
    /// end has meanwhile registered. Dropping them left both ends without a
    /// connection until a redial (`lanesim hunt --world mesh --seed 41`,
    /// case 6482; `scenarios/mesh_stale_hello.toml`). Two refusals can be
    /// that:
    /// - this node's dial, losing to an accepted stream (the stale one,
    ///   dialed the winning way by the other end, which has since dialed
    ///   again); pinned by
    ///   `a_dial_that_lost_to_a_stale_accepted_stream_is_registered_when_it_dies`;
    /// - an accepted stream, refused because an accepted incumbent came
    ///   the same way: its dialer dials only when it holds no live
    ///   connection, so the incumbent is dead at its end, or stale.
    ///
    /// The stale incumbent goes down on its dialer's close, and the stream
    /// that stood by takes its place, as it already has at the other end.
    /// A refused squatter gains nothing it would not get by arriving when
    /// the slot is empty: its silence takes it down within a tick (M5).
    ///
    /// How long: twice the connect timeout (the accept path's bound on a
    /// hello, and so on how late a stale one lands), and at most half a
    /// heartbeat tick: this end writes nothing on the stream meanwhile, so
    /// the other end would take it down for silence after a tick.
    ///
    /// Meanwhile the stream is read, and what arrives is kept (at most
    /// [`STANDBY_BUFFER`] bytes) and handed to its read loop if it is
    /// registered: so a stream the other end closes (it refused it too, or
    /// gave up on it) ends its stand-by at once and is never registered
    /// dead, and one dropped at the window's end leaves nothing unread (a
    /// close over unread bytes is a reset). One stream stands by per node
    /// and origin: a newer one supersedes it, because its dialer dialed
    /// again and so gave up on the older. The task holds the manager
    /// weakly; a stream standing by when the manager is dropped stays open
    /// until its window ends.
    /// `a_stream_closed_while_standing_by_is_never_registered`,
    /// `a_newer_stream_supersedes_the_one_standing_by`.
    ///
    /// `promote`: how it is registered when the incumbent goes down: by
    /// the table's rules, or (a claim its incumbent never answered) by the
    /// claim check again, so it never displaces a live generation that took
    /// the slot meanwhile without that generation's word.
    pub(super) fn stand_by(
        &self,
        node: NodeName,
        stream: Connected,
        origin: Origin,
        incumbent: Arc<DistConnection>,
        promote: Promote,
    ) {
        let mut window = self.shared.connect_timeout.saturating_mul(2);
        if let Some(tick) = self.shared.tick {
            window = window.min(tick / 2);
        }
        let superseded = Arc::new(Notify::new());
        if let Some(older) = self
            .shared
            .standing_by
            .lock()
            .insert((node.clone(), origin), Arc::clone(&superseded))
        {
            older.notify_one();
        }
        let manager = self.downgrade();
        self.shared.runtime.spawn(async move {
            let Connected {
                mut read,
                write,
                peer,
                local,
            } = stream;
            let mut early = Vec::new();
            let budget = manager
                .upgrade()
                .map(|manager| Arc::clone(&manager.shared.budget));
            let incumbent_down = {
                let watch = watch_closed(&mut read, &mut early, budget.as_deref());
                tokio::select! {
                    biased;
                    () = incumbent.down_notified() => true,
                    () = superseded.notified() => false,
                    () = watch => false,
                    () = sleep(window) => false,
                }
            };
            // A stand-by never undoes a manual disconnect that took its
            // incumbent down: it would reconnect what this node's owner just
            // cut (`a_stream_standing_by_does_not_undo_a_manual_disconnect`).
            // A disconnect that finds the incumbent already down is not
            // told apart from any other down.
            let deliberate = incumbent.down_reason() == Some(DownReason::ManualDisconnect);
            drop(incumbent);
            let Some(manager) = manager.upgrade() else {
                return;
            };
            {
                let mut standing_by = manager.shared.standing_by.lock();
                let key = (node.clone(), origin);
                if standing_by
                    .get(&key)
                    .is_some_and(|current| Arc::ptr_eq(current, &superseded))
                {
                    standing_by.remove(&key);
                }
            }
            if incumbent_down && deliberate {
                mark(Mark::StandbyDroppedForDisconnect);
            }
            if !incumbent_down || deliberate {
                return;
            }
            let read: BoxRead = if early.is_empty() {
                read
            } else {
                Box::new(std::io::Cursor::new(early).chain(read))
            };
            let stream = Connected {
                read,
                write,
                peer,
                local,
            };
            // Registered only if nothing live took the slot meanwhile; a
            // second refusal drops the stream (it stands by once).
            let registered = match promote {
                Promote::Table => {
                    match manager.register_or_stand_by(node, stream, origin, false, Checked::Unchecked) {
                        Ok(Registered::New(connection)) => Some(connection),
                        _ => None,
                    }
                }
                Promote::Claim(nonce) => {
                    let before = manager.shared.table.lock().last_generation;
                    manager
                        .settle_claim(node, nonce, stream, false)
                        .await
                        .ok()
                        .filter(|connection| connection.generation() > before)
                }
            };
            if let Some(connection) = registered {
                mark(Mark::StandbyRegistered);
                tracing::debug!(node = %connection.node(), generation = connection.generation(), ?origin, "a refused stream that stood by was registered: its incumbent went down");
            }
        });
    }

    /// A stream refused in favour of the live `incumbent`: logged; the
    /// caller drops it (closing it) or lets it stand by. `simultaneous`: the two
    /// were dialed from opposite ends.
    pub(super) fn refuse(
        incumbent: Arc<DistConnection>,
        origin: Origin,
        peer: &str,
        simultaneous: bool,
    ) -> Registered {
        tracing::warn!(
            node = %incumbent.node(),
            generation = incumbent.generation(),
            %peer,
            ?origin,
            simultaneous,
            "connection refused: the node already has a live connection"
        );
        if simultaneous {
            mark(Mark::RegisterTieBreakLost);
            Registered::SimultaneousAbort(incumbent)
        } else {
            mark(Mark::RegisterIncumbentKept);
            Registered::IncumbentKept(incumbent)
        }
    }
}

/// Most a stream standing by may have read before it stops reading (the
/// rest waits in the socket).
pub const STANDBY_BUFFER: usize = 64 * 1024;

/// Reads `read` into `early` until the other end closes it or it fails
/// (then resolves), or until `early` holds [`STANDBY_BUFFER`] bytes or the
/// frame budget refuses it more (then waits); what it holds is charged to
/// `budget` (`frame::buffer_within`), which may evict it (then resolves:
/// the stream is dropped). Without a budget (the manager is gone) it reads
/// into an unlimited one.
async fn watch_closed(read: &mut BoxRead, early: &mut Vec<u8>, budget: Option<&FrameBudget>) {
    let unlimited;
    let budget = match budget {
        Some(budget) => budget,
        None => {
            unlimited = FrameBudget::unlimited();
            &unlimited
        }
    };
    buffer_within(read, early, STANDBY_BUFFER, budget).await;
}

#[cfg(test)]
mod tests {
    use super::{decide, Decision, Displaces, Incumbent};
    use crate::distribution::manager::Origin::{self, Accepted, Dialed};

    /// Every input the decision can see, and what it must decide: an empty
    /// or down slot always takes the stream; a live incumbent dialed the
    /// same way always stays; one dialed the other way loses only to a
    /// stream of the winning origin, and never with the tie-break planted
    /// away.
    #[test]
    fn the_tie_break_decides_every_case_as_the_table_says() {
        use Decision::{Install, Refuse};
        use Displaces::{Down, Nothing, TieBreakLoser};
        let cases: [(Incumbent, Origin, Origin, bool, Decision); 20] = [
            (Incumbent::None, Dialed, Dialed, true, Install(Nothing)),
            (Incumbent::None, Accepted, Dialed, true, Install(Nothing)),
            (Incumbent::None, Dialed, Accepted, false, Install(Nothing)),
            (Incumbent::None, Accepted, Accepted, false, Install(Nothing)),
            (Incumbent::Down, Dialed, Dialed, true, Install(Down)),
            (Incumbent::Down, Accepted, Accepted, true, Install(Down)),
            (Incumbent::Down, Dialed, Accepted, false, Install(Down)),
            (Incumbent::Down, Accepted, Dialed, false, Install(Down)),
            // Same way: the incumbent stays, whoever wins.
            (
                Incumbent::Live(Dialed),
                Dialed,
                Dialed,
                true,
                Refuse {
                    simultaneous: false,
                },
            ),
            (
                Incumbent::Live(Dialed),
                Dialed,
                Accepted,
                true,
                Refuse {
                    simultaneous: false,
                },
            ),
            (
                Incumbent::Live(Accepted),
                Accepted,
                Accepted,
                true,
                Refuse {
                    simultaneous: false,
                },
            ),
            (
                Incumbent::Live(Accepted),
                Accepted,
                Dialed,
                true,
                Refuse {
                    simultaneous: false,
                },
            ),
            // Opposite ways: the winning origin displaces, the other is refused.
            (
                Incumbent::Live(Accepted),
                Dialed,
                Dialed,
                true,
                Install(TieBreakLoser),
            ),
            (
                Incumbent::Live(Dialed),
                Accepted,
                Accepted,
                true,
                Install(TieBreakLoser),
            ),
            (
                Incumbent::Live(Accepted),
                Dialed,
                Accepted,
                true,
                Refuse { simultaneous: true },
            ),
            (
                Incumbent::Live(Dialed),
                Accepted,
                Dialed,
                true,
                Refuse { simultaneous: true },
            ),
            // Planted `NoTieBreak`: the incumbent always stays.
            (
                Incumbent::Live(Accepted),
                Dialed,
                Dialed,
                false,
                Refuse { simultaneous: true },
            ),
            (
                Incumbent::Live(Dialed),
                Accepted,
                Accepted,
                false,
                Refuse { simultaneous: true },
            ),
            (
                Incumbent::Live(Dialed),
                Dialed,
                Dialed,
                false,
                Refuse {
                    simultaneous: false,
                },
            ),
            (
                Incumbent::Live(Accepted),
                Accepted,
                Accepted,
                false,
                Refuse {
                    simultaneous: false,
                },
            ),
        ];
        for (incumbent, origin, winner, tie_break, expected) in cases {
            assert_eq!(
                decide(incumbent, origin, winner, tie_break),
                expected,
                "{incumbent:?}, a stream {origin:?}, {winner:?} wins, tie-break {tie_break}"
            );
        }
    }
}
