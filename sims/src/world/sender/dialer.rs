//! The local node's dials: each generation's first appearance logged once,
//! a keeper per peer redialing after every down, and on-demand dials when
//! the workload wants a link it has no connection for (which may race the
//! keeper's).

use crate::explore::spawn_world;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lanesim_target::node::{Conn, Node};
use tokio::sync::Notify;

use super::{socket_of, Shared, LOCAL};
use crate::coverage::WorldMark;
use crate::event::Event;
use crate::world::peer::{peer_name, PeerWorld, PORT};

/// Dials, logging each generation's first appearance once.
pub(super) struct Dialer {
    pub(super) shared: Arc<Shared>,
    pub(super) node: Arc<dyn Node>,
    pub(super) seen: Mutex<BTreeSet<(u64, u64)>>,
    /// Peers with an on-demand dial in flight.
    pub(super) on_demand: Mutex<BTreeSet<u64>>,
}

impl Dialer {
    /// Dials `peer` (a redial when `redial`): logs a new generation or the
    /// failure, and the marks.
    pub(super) async fn dial(&self, peer: u64, redial: bool) -> Option<Conn> {
        let node = peer_name(peer);
        match self.node.dial(&node, &format!("{node}:{PORT}")).await {
            Ok(connection) => {
                let generation = connection.generation();
                let new = self
                    .seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert((peer, generation));
                if new {
                    self.shared.record(
                        LOCAL,
                        Event::ConnectionUp {
                            peer,
                            generation,
                            socket: socket_of(&*connection),
                        },
                    );
                    if redial {
                        self.shared.mark(WorldMark::RedialOk);
                        if self.shared.controls_pending_before(peer, generation) {
                            self.shared.mark(WorldMark::RedialWithControlsQueued);
                        }
                    }
                }
                Some(connection)
            }
            Err(error) => {
                if redial {
                    self.shared.mark(WorldMark::RedialFailed);
                }
                self.shared.record(
                    LOCAL,
                    Event::DialFailed {
                        peer,
                        error: error.into(),
                    },
                );
                None
            }
        }
    }

    /// Keeps `peer` connected: after every down, redials every `after` until
    /// a live generation exists.
    pub(super) async fn keep(self: Arc<Self>, peer: u64, after: Duration, downs: Arc<Notify>) {
        let node = peer_name(peer);
        loop {
            downs.notified().await;
            loop {
                tokio::time::sleep(after).await;
                if self.node.connection(&node).is_some() || self.dial(peer, true).await.is_some() {
                    break;
                }
            }
        }
    }

    /// Starts a dial of `peer` unless one started this way is in flight: the
    /// workload wants a link and has no connection (it may race the keeper).
    pub(super) fn dial_on_demand(self: &Arc<Self>, peer: u64) {
        let fresh = self
            .on_demand
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(peer);
        if fresh {
            let dialer = Arc::clone(self);
            spawn_world(async move {
                dialer.dial(peer, true).await;
                dialer
                    .on_demand
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&peer);
            });
        }
    }
}
