//! Code sites: the names the code under test passes to
//! `lanesim_target::probe::mark` and `preempt_point`, and the registry of
//! which world's code reaches each.
//!
//! Model. Code sites are names, not an enum: any target declares its own
//! ([`lanesim_target::probe::Sites`]). The [`registry`] knows every name a
//! scenario may write: lanesim's own components' sites always (so the
//! shipped scenarios parse whatever the target runs), and those of every
//! target [`register`]ed since, each with the world that reaches it.
//!
//! Coverage (its marks are made of sites), the scenarios (their `reaches`
//! name sites) and the targets (they register theirs) all need this, so it
//! imports none of them: only the world's name (`world_kind`), and the
//! lists of sites the production crate declares for lanesim's components.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard};

use lanesim::shim::probe::{ACCEPTOR_SITES, LANES_SITES, NODE_SITES};
use lanesim_target::probe::Sites;

use crate::world_kind::WorldKind;

/// lanesim's components' sites, each list with the world whose code reaches
/// it, in the order the registry takes them: the acceptor's before the
/// node's, since a name keeps the world it is first given.
pub const LANESIM_SITES: [(WorldKind, Sites); 3] = [
    (WorldKind::Lanes, LANES_SITES),
    (WorldKind::Mesh, ACCEPTOR_SITES),
    (WorldKind::Sender, NODE_SITES),
];

/// A name the code under test passes to `mark` or `preempt_point`. Ordered
/// and compared by the name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site(&'static str);

impl Site {
    /// The site called `name`.
    #[must_use]
    pub const fn new(name: &'static str) -> Self {
        Self(name)
    }

    /// The place a task was spawned, as `file:line`.
    #[must_use]
    pub fn spawned_at(at: &'static std::panic::Location<'static>) -> Self {
        spawn_site(format!("{}:{}", at.file(), at.line()))
    }

    /// Its name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        self.0
    }
}

/// The spawn site named `name` (`file:line`), interned: a program has as
/// many as it has `spawn` calls.
pub(crate) fn spawn_site(name: String) -> Site {
    static SITES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut sites = SITES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(site) = sites.get(name.as_str()) {
        return Site(site);
    }
    let site: &'static str = Box::leak(name.into_boxed_str());
    sites.insert(site);
    Site(site)
}

/// Every code site a scenario may name, with the world whose code reaches
/// it (a sender-world site is reachable in the mesh too:
/// `scenario::marks::reachable_in`).
#[derive(Default)]
pub struct Registry {
    marks: BTreeMap<&'static str, WorldKind>,
    points: BTreeMap<&'static str, WorldKind>,
}

impl Registry {
    /// Adds `sites`, reached in `world`. A name already known keeps the
    /// world it was first given.
    pub fn add(&mut self, world: WorldKind, sites: Sites) {
        for mark in sites.marks {
            self.marks.entry(mark).or_insert(world);
        }
        for point in sites.points {
            self.points.entry(point).or_insert(world);
        }
    }

    /// The world whose code reaches the mark or point `site`.
    #[must_use]
    pub fn world_of(&self, site: Site, point: bool) -> Option<WorldKind> {
        let map = if point { &self.points } else { &self.marks };
        map.get(site.0).copied()
    }

    /// Every mark site, in name order.
    pub fn marks(&self) -> impl Iterator<Item = Site> + '_ {
        self.marks.keys().map(|name| Site(name))
    }

    /// Every preemption point, in name order.
    pub fn points(&self) -> impl Iterator<Item = Site> + '_ {
        self.points.keys().map(|name| Site(name))
    }

    /// The mark site called `name`, if it is known.
    #[must_use]
    pub fn mark(&self, name: &str) -> Option<Site> {
        self.marks.get_key_value(name).map(|(name, _)| Site(name))
    }

    /// The preemption point called `name`, if it is known.
    #[must_use]
    pub fn point(&self, name: &str) -> Option<Site> {
        self.points.get_key_value(name).map(|(name, _)| Site(name))
    }
}

fn registry_lock() -> &'static RwLock<Registry> {
    static REGISTRY: OnceLock<RwLock<Registry>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut registry = Registry::default();
        for (world, sites) in LANESIM_SITES {
            registry.add(world, sites);
        }
        RwLock::new(registry)
    })
}

/// The code sites known in this process: lanesim's components' always,
/// and those of every target registered with [`register`].
pub fn registry() -> RwLockReadGuard<'static, Registry> {
    registry_lock()
        .read()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Makes `sites`, reached in `world`, nameable by scenarios.
pub fn register(world: WorldKind, sites: Sites) {
    registry_lock()
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .add(world, sites);
}
