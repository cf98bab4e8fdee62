//! Node identity: an interned-by-`Arc` name, cheap to clone and compare, and
//! ordered so `connected_nodes` and every table are deterministic.

use std::fmt;

use crate::shim::sync::Arc;

/// A node's name, e.g. `peer@10.0.0.2`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeName(Arc<str>);

/// The longest node name a hello may announce, in bytes.
pub const MAX_NODE_NAME: usize = 255;

/// Why a name is not a node name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameError {
    /// Zero bytes.
    Empty,
    /// Longer than [`MAX_NODE_NAME`] bytes.
    TooLong(usize),
    /// Not UTF-8.
    NotUtf8,
    /// A character outside the node-name alphabet ([`NodeName::parse_bytes`]).
    Character(char),
    /// The name of the node reading the hello.
    Ours,
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("empty node name"),
            Self::TooLong(len) => {
                write!(f, "node name of {len} bytes is longer than {MAX_NODE_NAME}")
            }
            Self::NotUtf8 => f.write_str("node name is not UTF-8"),
            Self::Character(c) => write!(
                f,
                "node name holds {c:?} (U+{:04X}): a node name is ASCII letters, digits and _ - . @",
                u32::from(*c)
            ),
            Self::Ours => f.write_str("hello names this node"),
        }
    }
}

impl std::error::Error for NameError {}

/// Whether `c` may be in a node name: ASCII letters and digits, `_`, `-`,
/// `.` and `@` (Erlang's node names: `name@host`). A rule, not a list of
/// what to refuse: nothing that renders blank, joins, reorders, looks like
/// another letter or breaks a log line can pass, whatever Unicode adds.
#[must_use]
pub fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@')
}

impl NodeName {
    /// A name a hello may announce: 1 to [`MAX_NODE_NAME`] bytes of ASCII
    /// letters, digits, `_`, `-`, `.` and `@` ([`name_char`]). Checked
    /// before the name is looked at any further, so an error quotes only
    /// its first offence.
    ///
    /// # Errors
    /// As [`NameError`].
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, NameError> {
        if bytes.is_empty() {
            return Err(NameError::Empty);
        }
        if bytes.len() > MAX_NODE_NAME {
            return Err(NameError::TooLong(bytes.len()));
        }
        let name = std::str::from_utf8(bytes).map_err(|_| NameError::NotUtf8)?;
        if let Some(c) = name.chars().find(|&c| !name_char(c)) {
            return Err(NameError::Character(c));
        }
        Ok(Self::from(name))
    }

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

#[cfg(test)]
mod tests {
    use super::{NameError, NodeName};

    /// Every character a hostile peer tried to sit in a name as (renders
    /// blank, joins, reorders, looks like a Latin letter, breaks a log
    /// line), and the space, is refused by the rule; names of the alphabet
    /// pass.
    #[test]
    fn a_node_name_is_letters_digits_and_four_marks_and_nothing_else() {
        let refused = [
            '\u{00AD}',
            '\u{034F}',
            '\u{180E}',
            '\u{FE0F}',
            '\u{E0041}',
            '\u{206A}',
            '\u{FFF9}',
            '\u{3164}',
            '\u{2800}',
            '\u{00A0}',
            ' ',
            '\u{0301}',
            '\u{0430}',
            '\u{2028}',
            '\u{202E}',
            '\u{200B}',
            '\u{FEFF}',
            '\n',
            '\r',
            '\x1b',
            '\0',
            '/',
            ':',
            '"',
            '\\',
        ];
        for c in refused {
            let name = format!("peer{c}test");
            assert_eq!(
                NodeName::parse_bytes(name.as_bytes()),
                Err(NameError::Character(c)),
                "{c:?} passed"
            );
        }
        // A decomposed é (e and a combining acute) and a Cyrillic а.
        assert!(NodeName::parse_bytes("cafe\u{0301}@host".as_bytes()).is_err());
        assert!(NodeName::parse_bytes("\u{0430}@host".as_bytes()).is_err());
        assert!(NodeName::parse_bytes("   ".as_bytes()).is_err());
        for good in ["a@test", "node_1.eu-west@10.0.0.2", "Z", "peer-0"] {
            assert_eq!(
                NodeName::parse_bytes(good.as_bytes()).map(|n| n.as_str().to_string()),
                Ok(good.to_string())
            );
        }
    }
}
