//! The node table: the live generation per peer node, the generation
//! numbers handed out (1, 2, 3, ... per peer, never reused), and the
//! tie-break when a second live stream of the same pair is proven.
//!
//! Model. A slot holds a peer's live generation only: a generation that
//! goes down leaves its slot. When a stream is proven while the slot is
//! live, the stream dialed by the node whose name sorts lower wins (both
//! ends see the same two streams and names, so both keep the same one);
//! between two streams dialed the same way the newer wins (its dialer only
//! dials when it holds no live connection, so the older one is dead at that
//! end).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use lanesim_target::node::{Connection, Origin};

use super::connection::Link;

/// What registering a proven stream did.
pub(super) enum Registered {
    /// It is the live generation now; it displaced this one, if any (the
    /// caller takes that one down).
    Up {
        link: Arc<Link>,
        displaced: Option<Arc<Link>>,
    },
    /// It lost the tie-break to this live generation (the caller closes
    /// the stream).
    Lost(Arc<Link>),
}

#[derive(Default)]
struct Slots {
    live: BTreeMap<String, Arc<Link>>,
    generations: BTreeMap<String, u64>,
}

/// The table.
#[derive(Default)]
pub(super) struct Table {
    slots: Mutex<Slots>,
}

impl Table {
    /// `node`'s live generation.
    pub fn live(&self, node: &str) -> Option<Arc<Link>> {
        let slots = self.slots.lock().unwrap();
        slots.live.get(node).filter(|link| !link.is_down()).cloned()
    }

    /// What `node`'s slot holds: its generation and whether it is down.
    pub fn slot(&self, node: &str) -> Option<(u64, bool)> {
        let slots = self.slots.lock().unwrap();
        slots
            .live
            .get(node)
            .map(|link| (link.generation(), link.is_down()))
    }

    /// Registers a stream to `node` proven by the handshake, unless the
    /// tie-break keeps the live one; `make` builds the generation from its
    /// number.
    pub fn register(
        &self,
        me: &str,
        node: &str,
        origin: Origin,
        make: impl FnOnce(u64) -> Arc<Link>,
    ) -> Registered {
        let mut slots = self.slots.lock().unwrap();
        let incumbent = slots.live.get(node).filter(|link| !link.is_down()).cloned();
        if let Some(incumbent) = &incumbent {
            let dialer = |origin: Origin| match origin {
                Origin::Dialed => me,
                Origin::Accepted => node,
            };
            let lower = me.min(node);
            let new_wins = dialer(origin) == dialer(incumbent.origin()) || dialer(origin) == lower;
            if !new_wins {
                return Registered::Lost(Arc::clone(incumbent));
            }
        }
        let generation = slots.generations.entry(node.to_owned()).or_insert(0);
        *generation += 1;
        let link = make(*generation);
        slots.live.insert(node.to_owned(), Arc::clone(&link));
        Registered::Up {
            link,
            displaced: incumbent,
        }
    }

    /// Removes `generation` from `node`'s slot if it holds it; the
    /// generation the slot holds afterwards.
    pub fn remove(&self, node: &str, generation: u64) -> Option<u64> {
        let mut slots = self.slots.lock().unwrap();
        if slots
            .live
            .get(node)
            .is_some_and(|link| link.generation() == generation)
        {
            slots.live.remove(node);
        }
        slots.live.get(node).map(|link| link.generation())
    }

    /// Empties the table (the node is being dropped).
    pub fn drain(&self) -> Vec<Arc<Link>> {
        let mut slots = self.slots.lock().unwrap();
        std::mem::take(&mut slots.live).into_values().collect()
    }
}
