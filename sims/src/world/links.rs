//! The links a node's local processes hold over its generations, and the
//! `noconnection` each gets when its generation goes down: the duty a down
//! report carries (DC-3). A node target that keeps its own link table
//! (`NodeCapabilities::links`, lanesim's does) gets the workload's links in
//! it, and its `noconnection`s are the ones the end-to-end contracts (E2E,
//! M2, M3) decide; for any other target the world models the table over
//! its up and down reports ([`Keeper`]).
//!
//! Model: a link is tagged with the generation it was made over. A down of
//! generation G breaks the node's links of generations `<= G` and no
//! others, so a redial that registered G+1 before G's report keeps its
//! fresh links. Each broken link is delivered exactly once (it leaves the
//! table as it is delivered): a control for a link either reaches the peer
//! on its generation or the link is delivered here. A link made over a
//! generation that is already down is delivered at once: [`Links::link`]
//! looks at the generation under the table's lock, and a target reports a
//! down only after `is_down` turned true, so no link slips between them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use lanesim_target::node::{Conn, Connection, Node};

pub use lanesim_target::node::Link;

/// Where one table of links is kept: the world's model, or the target's
/// own link table (whose `noconnection`s reach the world as reports).
#[derive(Clone)]
pub enum Keeper {
    /// The world's model, over the target's up and down reports.
    World(Links),
    /// The target's table.
    Target,
}

impl Keeper {
    /// The target's table if it keeps one, else the world's model
    /// delivering through `deliver`.
    pub fn new(target_keeps: bool, deliver: impl Fn(&str, Link) + Send + Sync + 'static) -> Self {
        if target_keeps {
            Self::Target
        } else {
            Self::World(Links::new(deliver))
        }
    }

    /// Records a link over `over` ([`Links::link`]): `None` when its
    /// generation was down (its `noconnection` delivered at once).
    pub fn link(&self, node: &dyn Node, over: &Conn, local: u64, remote: u64) -> Option<Link> {
        match self {
            Self::World(links) => links.link(&**over, local, remote),
            Self::Target => node.link(over, local, remote),
        }
    }

    /// Removes a link: whether it was there.
    pub fn unlink(&self, node: &dyn Node, peer: &str, link: &Link) -> bool {
        match self {
            Self::World(links) => links.unlink(peer, link),
            Self::Target => node.unlink(peer, link),
        }
    }

    /// A generation went down: the world's model breaks its links; the
    /// target's table does that itself.
    pub fn down(&self, peer: &str, generation: u64) {
        if let Self::World(links) = self {
            links.down(peer, generation);
        }
    }
}

type Deliver = Arc<dyn Fn(&str, Link) + Send + Sync>;

/// One node's links, per peer node. Cheap to clone; clones share the table.
#[derive(Clone)]
pub struct Links {
    links: Arc<Mutex<BTreeMap<String, BTreeSet<Link>>>>,
    deliver: Deliver,
}

impl Links {
    /// A table that calls `deliver(node, link)` for each `noconnection`.
    pub fn new(deliver: impl Fn(&str, Link) + Send + Sync + 'static) -> Self {
        Self {
            links: Arc::new(Mutex::new(BTreeMap::new())),
            deliver: Arc::new(deliver),
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, BTreeSet<Link>>> {
        self.links
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a link between `local` and `remote` over `connection`'s
    /// generation and returns it. If that generation is already down the
    /// link is broken at once (`noconnection` delivered) and `None`
    /// returned.
    pub fn link(&self, connection: &dyn Connection, local: u64, remote: u64) -> Option<Link> {
        let link = Link {
            generation: connection.generation(),
            local,
            remote,
        };
        {
            let mut links = self.table();
            if !connection.is_down() {
                links
                    .entry(connection.node().to_string())
                    .or_default()
                    .insert(link);
                return Some(link);
            }
        }
        (self.deliver)(connection.node(), link);
        None
    }

    /// Removes a link (an exit that reached the peer). Returns whether it
    /// was there.
    pub fn unlink(&self, node: &str, link: &Link) -> bool {
        self.table()
            .get_mut(node)
            .is_some_and(|links| links.remove(link))
    }

    /// Breaks every link over `node` made at or before `generation`, which
    /// went down, delivering `noconnection` for each outside the lock.
    pub fn down(&self, node: &str, generation: u64) {
        let broken: Vec<Link> = {
            let mut links = self.table();
            let Some(of_node) = links.get_mut(node) else {
                return;
            };
            let kept = of_node.split_off(&Link {
                generation: generation + 1,
                local: 0,
                remote: 0,
            });
            std::mem::replace(of_node, kept).into_iter().collect()
        };
        for link in broken {
            (self.deliver)(node, link);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::any::Any;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    struct Gen(&'static str, u64, AtomicBool);

    impl Connection for Gen {
        fn node(&self) -> &str {
            self.0
        }
        fn generation(&self) -> u64 {
            self.1
        }
        fn is_down(&self) -> bool {
            self.2.load(Ordering::Acquire)
        }
        fn local_addr(&self) -> &str {
            "127.0.0.1:1"
        }
        fn peer_addr(&self) -> &str {
            "127.0.0.1:2"
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    type Told = Arc<Mutex<Vec<(String, Link)>>>;

    fn table() -> (Links, Told) {
        let delivered = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&delivered);
        let links = Links::new(move |node, link| {
            sink.lock().unwrap().push((node.to_string(), link));
        });
        (links, delivered)
    }

    /// A down of G breaks the node's links of G and older, each once, and
    /// keeps the links of a newer generation registered before G's report.
    #[test]
    fn a_down_breaks_its_generations_links_and_older_ones_once_and_no_newer() {
        let (links, delivered) = table();
        let old = Gen("a", 1, AtomicBool::new(false));
        let down = Gen("a", 2, AtomicBool::new(false));
        let newer = Gen("a", 3, AtomicBool::new(false));
        let other = Gen("b", 2, AtomicBool::new(false));
        links.link(&old, 10, 10).unwrap();
        links.link(&down, 20, 20).unwrap();
        links.link(&newer, 30, 30).unwrap();
        links.link(&other, 40, 40).unwrap();
        links.down("a", 2);
        let broken: Vec<u64> = delivered
            .lock()
            .unwrap()
            .iter()
            .map(|(_, l)| l.local)
            .collect();
        assert_eq!(broken, [10, 20]);
        links.down("a", 2);
        assert_eq!(delivered.lock().unwrap().len(), 2, "each link is told once");
        links.down("a", 3);
        let broken: Vec<u64> = delivered
            .lock()
            .unwrap()
            .iter()
            .map(|(_, l)| l.local)
            .collect();
        assert_eq!(broken, [10, 20, 30]);
        assert!(links.unlink(
            "b",
            &Link {
                generation: 2,
                local: 40,
                remote: 40
            }
        ));
    }

    /// A link over a generation already down is told at once, and kept
    /// nowhere.
    #[test]
    fn a_link_over_a_down_generation_is_told_at_once() {
        let (links, delivered) = table();
        let gone = Gen("a", 1, AtomicBool::new(true));
        assert_eq!(links.link(&gone, 5, 5), None);
        assert_eq!(delivered.lock().unwrap().len(), 1);
        links.down("a", 1);
        assert_eq!(delivered.lock().unwrap().len(), 1);
    }
}
