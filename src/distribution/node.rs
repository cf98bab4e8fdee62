//! Node identity: an interned-by-`Arc` name, cheap to clone and compare, and
//! ordered so `connected_nodes` and every table are deterministic.

use std::fmt;

use crate::shim::sync::Arc;

/// A node's name, e.g. `peer@10.0.0.2`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeName(Arc<str>);

impl NodeName {
    /// The name as text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for NodeName {
    fn from(name: &str) -> Self {
        Self(Arc::from(name))
    }
}

impl From<String> for NodeName {
    fn from(name: String) -> Self {
        Self(Arc::from(name))
    }
}

impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}
