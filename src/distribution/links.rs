//! A model of the down hook's DC-3 duty: the links local processes hold over
//! each node, and `noconnection` for every one of them when the connection
//! they were made over goes down.
//!
//! Model: a link is tagged with the generation it was made over. A down of
//! generation G breaks the node's links of generations `<= G` and no others,
//! so a redial that registered G+1 before G's hook ran keeps its fresh links.
//! Each broken link is delivered exactly once (it leaves the table as it is
//! delivered), which is what makes a lost death signal visible: a control for
//! a link either reaches the peer on its generation or the link is delivered
//! here. A link made over a generation that is already down is delivered at
//! once: `link` checks the flag under the table lock, and `mark_down` flips
//! the flag before its hook takes that lock, so no link slips between them.

use std::collections::{BTreeMap, BTreeSet};

use super::connection::{DistConnection, DownEvent};
use super::manager::ConnectionManager;
use super::node::NodeName;
use crate::shim::probe::{mark, Mark};
use crate::shim::sync::{Arc, Mutex};

/// A link between a local process and a process on a remote node: the
/// target API's own type, which the testbed's worlds make links with.
pub use lanesim_target::node::Link;

type Deliver = Arc<dyn Fn(&NodeName, Link) + Send + Sync>;

/// The local side's links, per node.
#[derive(Clone)]
pub struct LinkTable {
    links: Arc<Mutex<BTreeMap<NodeName, BTreeSet<Link>>>>,
    deliver: Deliver,
}

impl LinkTable {
    /// A table that calls `deliver(node, link)` for each `noconnection`.
    pub fn new(deliver: impl Fn(&NodeName, Link) + Send + Sync + 'static) -> Self {
        Self {
            links: Arc::new(Mutex::new(BTreeMap::new())),
            deliver: Arc::new(deliver),
        }
    }

    /// Installs the down hook on `manager`.
    pub fn attach(&self, manager: &ConnectionManager) {
        let table = self.clone();
        manager.register_connection_down(move |event| table.connection_down(event));
    }

    /// Records a link between `local` and `remote` over `connection`'s
    /// generation and returns it. If that generation is already down the
    /// link is broken at once (`noconnection` delivered) and `None` returned.
    pub fn link(&self, connection: &DistConnection, local: u64, remote: u64) -> Option<Link> {
        let link = Link {
            generation: connection.generation(),
            local,
            remote,
        };
        {
            let mut links = self.links.lock();
            if !connection.is_down() {
                links
                    .entry(connection.node().clone())
                    .or_default()
                    .insert(link);
                return Some(link);
            }
        }
        mark(Mark::LinkMadeOverDown);
        (self.deliver)(connection.node(), link);
        None
    }

    /// Removes a link (an unlink, or an exit that reached the peer). Returns
    /// whether it was there.
    pub fn unlink(&self, node: &NodeName, link: &Link) -> bool {
        self.links
            .lock()
            .get_mut(node)
            .is_some_and(|links| links.remove(link))
    }

    /// The links over `node`, in order.
    #[must_use]
    pub fn links_over(&self, node: &NodeName) -> Vec<Link> {
        self.links
            .lock()
            .get(node)
            .map(|links| links.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Breaks every link over `event.node` made at or before the downed
    /// generation, delivering `noconnection` for each outside the lock.
    pub fn connection_down(&self, event: &DownEvent) {
        let broken: Vec<Link> = {
            let mut links = self.links.lock();
            let Some(of_node) = links.get_mut(&event.node) else {
                return;
            };
            let kept = of_node.split_off(&Link {
                generation: event.generation + 1,
                local: 0,
                remote: 0,
            });
            if !kept.is_empty() {
                mark(Mark::LinkKeptAcrossDown);
            }
            std::mem::replace(of_node, kept).into_iter().collect()
        };
        if !broken.is_empty() {
            mark(Mark::LinkBrokenByDown);
        }
        for link in broken {
            (self.deliver)(&event.node, link);
        }
    }
}
