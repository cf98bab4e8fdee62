//! Positions: from a key path to the file, line and column it was written
//! at, and back from a TOML error to the key it is about.
//!
//! A [`KeyPath`] is typed (keys and array entries), so validation names
//! `mesh.fault[2].at` by its segments and the lookup walks them through
//! the document; its `Display` is the dotted text the messages print.
//! Every position comes from the spans the TOML parser recorded for each
//! key and value (`serde_spanned`), never from rescanning the text.

use std::fmt;
use std::ops::Range;

use toml::de::{DeTable, DeValue};

/// The path from the document's root to one key, table or array entry:
/// `sender.fault[2].at` is key `sender` (a table), key `fault` (an array of
/// tables), entry 2, key `at`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct KeyPath(Vec<Segment>);

/// One step of a [`KeyPath`].
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    /// A key of a table (a table's name is its key in the one holding it).
    Key(String),
    /// An entry of an array, from 0.
    Index(usize),
}

impl KeyPath {
    /// A top-level key or table: `budget`, `sender`.
    pub(super) fn top(key: &str) -> Self {
        Self(vec![Segment::Key(key.to_string())])
    }

    /// Key `key` of top-level table `table`: `sender.peers`.
    pub(super) fn field(table: &str, key: &str) -> Self {
        Self::top(table).key(key)
    }

    /// This path, then key `key`.
    #[must_use]
    pub(super) fn key(mut self, key: &str) -> Self {
        self.0.push(Segment::Key(key.to_string()));
        self
    }

    /// This path, then array entry `index`.
    #[must_use]
    pub(super) fn index(mut self, index: usize) -> Self {
        self.0.push(Segment::Index(index));
        self
    }

    /// Its segments, from the root.
    fn segments(&self) -> &[Segment] {
        &self.0
    }

    fn push(&mut self, segment: Segment) {
        self.0.push(segment);
    }

    fn pop(&mut self) {
        self.0.pop();
    }

    /// The document itself: no key.
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// `a.b[2].c`: a key after anything written is preceded by a dot, an entry
/// is `[N]`. (A leading empty key, `"" = …`, writes nothing, so the key
/// after it takes no dot either.)
impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut written = false;
        for segment in &self.0 {
            match segment {
                Segment::Key(key) => {
                    if written {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                    written |= !key.is_empty();
                }
                Segment::Index(index) => {
                    write!(f, "[{index}]")?;
                    written = true;
                }
            }
        }
        Ok(())
    }
}

/// The 1-based line and column (in bytes) of byte `offset` of `source`.
pub(super) fn line_col(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
    (line, col)
}

/// The span the parser recorded for `key` (`table.field`,
/// `sender.fault[N].field`, or a top-level field): its value's, else (the
/// field is absent) the innermost table or entry that holds it, else the
/// document's start.
pub(super) fn span_of(doc: &DeTable<'_>, key: &KeyPath) -> Range<usize> {
    let mut found = 0..0;
    let mut here: Option<&DeValue<'_>> = None;
    for segment in key.segments() {
        let next = match (segment, here) {
            (Segment::Key(name), None) => doc.get(name.as_str()),
            (Segment::Key(name), Some(DeValue::Table(table))) => table.get(name.as_str()),
            (Segment::Index(index), Some(DeValue::Array(items))) => items.get(*index),
            _ => None,
        };
        let Some(next) = next else { break };
        found = next.span();
        here = Some(next.get_ref());
    }
    found
}

/// The span of `key`'s last key as written (`cpacity` in `cpacity = 4`),
/// else as [`span_of`].
pub(super) fn span_of_key(doc: &DeTable<'_>, key: &KeyPath) -> Range<usize> {
    let Some((Segment::Key(last), parent)) = key.segments().split_last() else {
        return span_of(doc, key);
    };
    let table = if parent.is_empty() {
        Some(doc)
    } else {
        lookup(doc, parent).and_then(DeValue::as_table)
    };
    table
        .and_then(|table| table.get_key_value(last.as_str()))
        .map_or_else(|| span_of(doc, key), |(written, _)| written.span())
}

/// The key a parse error of `source` is about, when it is a key written
/// twice: the error's span is a key, and the document parsed up to the
/// error already holds that key in the table the parser started last
/// before it (or, for a `[table]` header written twice, that table). None
/// for any other error. Told apart by the document's structure, not by the
/// parser's wording.
pub(super) fn key_of_parse_error(source: &str, error: &toml::de::Error) -> Option<KeyPath> {
    let span = error.span()?;
    let key = source.get(span.clone())?.trim();
    if key.is_empty() {
        return None;
    }
    let (partial, _) = DeTable::parse_recoverable(source);
    let mut path = KeyPath::default();
    let header = source[..span.start].trim_end().ends_with('[');
    if !header {
        last_table_before(partial.get_ref(), span.start, &mut path, &mut 0);
    }
    path.push(Segment::Key(key.to_string()));
    lookup(partial.get_ref(), path.segments())
        .is_some()
        .then_some(path)
}

/// The value of `doc` at `path` (segments from the root), if any.
fn lookup<'a, 'i>(doc: &'a DeTable<'i>, path: &[Segment]) -> Option<&'a DeValue<'i>> {
    let mut here: Option<&DeValue<'_>> = None;
    for segment in path {
        let next = match (segment, here) {
            (Segment::Key(name), None) => doc.get(name.as_str()),
            (Segment::Key(name), Some(DeValue::Table(table))) => table.get(name.as_str()),
            (Segment::Index(index), Some(DeValue::Array(items))) => items.get(*index),
            _ => None,
        };
        here = Some(next?.get_ref());
    }
    here
}

/// The path of the table (or array entry) whose span starts last before
/// `offset`, in `best` its start; empty for the document itself.
fn last_table_before(table: &DeTable<'_>, offset: usize, best: &mut KeyPath, start: &mut usize) {
    let mut path = KeyPath::default();
    walk_tables(table, &mut path, &mut |path, span| {
        if span.start <= offset && span.start >= *start {
            *start = span.start;
            best.clone_from(path);
        }
    });
}

/// Calls `visit` with the path and span of every table and array entry
/// under `table`.
fn walk_tables(
    table: &DeTable<'_>,
    path: &mut KeyPath,
    visit: &mut dyn FnMut(&KeyPath, Range<usize>),
) {
    for (key, value) in table {
        path.push(Segment::Key(key.get_ref().to_string()));
        match value.get_ref() {
            DeValue::Table(inner) => {
                visit(path, value.span());
                walk_tables(inner, path, visit);
            }
            DeValue::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    if let DeValue::Table(inner) = item.get_ref() {
                        path.push(Segment::Index(index));
                        visit(path, item.span());
                        walk_tables(inner, path, visit);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_path_renders_as_dotted_text() {
        let path = KeyPath::field("mesh", "fault").index(2).key("for");
        assert_eq!(path.to_string(), "mesh.fault[2].for");
        assert_eq!(KeyPath::top("checks").index(0).to_string(), "checks[0]");
        assert_eq!(KeyPath::top("budget").to_string(), "budget");
        assert_eq!(KeyPath::top("").key("x").to_string(), "x");
    }

    #[test]
    fn the_lookup_walks_the_segments() {
        let source =
            "[mesh]\nnodes = 2\n\n[[mesh.fault]]\nat = \"1s\"\n\n[[mesh.fault]]\nat = \"2s\"\n";
        let doc = DeTable::parse(source).unwrap();
        let at = |path: &KeyPath| line_col(source, span_of(doc.get_ref(), path).start);
        assert_eq!(at(&KeyPath::field("mesh", "nodes")), (2, 9));
        assert_eq!(
            at(&KeyPath::field("mesh", "fault").index(1).key("at")),
            (8, 6)
        );
        // Absent: the innermost entry that holds it.
        assert_eq!(
            at(&KeyPath::field("mesh", "fault").index(1).key("for")),
            (7, 1)
        );
        assert_eq!(at(&KeyPath::top("budget")), (1, 1));
    }

    /// A key written twice is told by the document, not by the message: the
    /// parse error's span is a key the partly parsed table already holds.
    /// Any other parse error names no key, even one whose span is text
    /// that could be a key.
    #[test]
    fn only_a_key_written_twice_is_named_from_a_parse_error() {
        let key = |source: &str| {
            let error = DeTable::parse(source).expect_err("a parse error");
            key_of_parse_error(source, &error).map(|k| k.to_string())
        };
        assert_eq!(
            key("[lanes]\nkeys = 1\nkeys = 2\n").as_deref(),
            Some("lanes.keys")
        );
        assert_eq!(key("[lanes]\n[lanes]\n").as_deref(), Some("lanes"));
        assert_eq!(key("[lanes]\nkeys = 1 keys\n"), None);
        assert_eq!(key("[lanes]\nkeys = \n"), None);
        assert_eq!(key("[lanes]\nkeys = [1,\n"), None);
    }
}
