//! From the parsed document to the typed file, with typed errors.
//!
//! Model. The TOML parser (`toml::de::DeTable`) turns the text into a tree
//! of values, each with its span; this module walks that tree as a serde
//! `Deserializer` whose error is lanesim's own [`DocError`]. Each node knows
//! its [`KeyPath`], so an error says which key it is about because the
//! walk was there when it happened, and what went wrong because serde
//! called the typed hook (`missing_field`, `unknown_field`, ...), not
//! because a message was read back. serde's value deserializers
//! (`serde::de::value`) do the leaves; the scalars are converted as the
//! toml crate converts them (integers as `i64`, then `u64`).
//!
//! Pinned by `sims/tests/scenario_errors.rs` (each kind of error named at
//! its key) and the unit tests below.

use std::fmt;

use serde::de::value::{MapAccessDeserializer, StrDeserializer};
use serde::de::{
    self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Unexpected, Visitor,
};
use serde::forward_to_deserialize_any;
use toml::de::{DeArray, DeTable, DeValue};

use super::position::KeyPath;

/// Why a document did not make a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum DocErrorKind {
    /// A table lacks a field its type requires.
    MissingField(&'static str),
    /// Anything else serde or a type's own `Deserialize` said.
    Other(String),
}

/// A deserialization error and the key it is about (`None`: the document).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct DocError {
    /// What went wrong.
    pub(super) kind: DocErrorKind,
    /// Where: the key whose value was being read, or for a missing field
    /// that field under the table that lacks it.
    pub(super) key: Option<KeyPath>,
    /// The key itself is wrong (an unknown field), not its value: the
    /// position is the key's.
    pub(super) at_key: bool,
}

impl DocError {
    fn other(message: impl fmt::Display) -> Self {
        Self {
            kind: DocErrorKind::Other(message.to_string()),
            key: None,
            at_key: false,
        }
    }

    /// Names `path` as the place, unless a deeper node already did.
    fn at(mut self, path: &KeyPath) -> Self {
        if self.key.is_none() {
            self.key = Some(match self.kind {
                DocErrorKind::MissingField(field) => path.clone().key(field),
                DocErrorKind::Other(_) => path.clone(),
            });
        }
        self
    }
}

impl fmt::Display for DocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            DocErrorKind::MissingField(field) => write!(f, "missing field `{field}`"),
            DocErrorKind::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for DocError {}

impl de::Error for DocError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self::other(message)
    }

    fn missing_field(field: &'static str) -> Self {
        Self {
            kind: DocErrorKind::MissingField(field),
            key: None,
            at_key: false,
        }
    }
}

/// Deserializes a `T` from a parsed document.
///
/// # Errors
/// The first error met, with the key it is about.
pub(super) fn from_document<'de, T: de::Deserialize<'de>>(
    doc: &DeTable<'_>,
) -> Result<T, DocError> {
    T::deserialize(Table {
        table: doc,
        path: &KeyPath::default(),
    })
}

/// A table of the document, at `path`.
struct Table<'a, 'i> {
    table: &'a DeTable<'i>,
    path: &'a KeyPath,
}

/// Any value of the document, at `path`.
struct Value<'a, 'i> {
    value: &'a DeValue<'i>,
    path: KeyPath,
}

impl<'de> de::Deserializer<'de> for Table<'_, '_> {
    type Error = DocError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DocError> {
        let path = self.path;
        visitor
            .visit_map(Entries {
                entries: self.table.iter(),
                next: None,
                path,
            })
            .map_err(|error| error.at(path))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DocError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DocError> {
        visitor.visit_newtype_struct(self)
    }

    /// An enum written as a table of one entry: `{ variant = value }`.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DocError> {
        let path = self.path;
        visitor
            .visit_enum(MapAccessDeserializer::new(Entries {
                entries: self.table.iter(),
                next: None,
                path,
            }))
            .map_err(|error| error.at(path))
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// How serde names a value that is not what its place expects.
fn unexpected<'a>(value: &'a DeValue<'_>) -> Unexpected<'a> {
    match value {
        DeValue::String(text) => Unexpected::Str(text),
        DeValue::Integer(integer) => i64::from_str_radix(integer.as_str(), integer.radix())
            .map_or(Unexpected::Other("an integer"), Unexpected::Signed),
        DeValue::Float(float) => float
            .as_str()
            .parse()
            .map_or(Unexpected::Other("a float"), Unexpected::Float),
        DeValue::Boolean(value) => Unexpected::Bool(*value),
        DeValue::Datetime(_) => Unexpected::Other("a date-time"),
        DeValue::Array(_) => Unexpected::Seq,
        DeValue::Table(_) => Unexpected::Map,
    }
}

/// The toml crate's integer conversion: an `i64` if it fits, else a `u64`.
fn visit_integer<'de, V: Visitor<'de>>(
    digits: &str,
    radix: u32,
    visitor: V,
) -> Result<V::Value, DocError> {
    if let Ok(value) = i64::from_str_radix(digits, radix) {
        visitor.visit_i64(value)
    } else if let Ok(value) = u64::from_str_radix(digits, radix) {
        visitor.visit_u64(value)
    } else {
        Err(de::Error::invalid_type(
            Unexpected::Other("an integer beyond 64 bits"),
            &visitor,
        ))
    }
}

/// What an enum's place expects: one of its names.
struct OneOf(&'static [&'static str]);

impl de::Expected for OneOf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("one of ")?;
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{name}`")?;
        }
        Ok(())
    }
}

impl<'de> de::Deserializer<'de> for Value<'_, '_> {
    type Error = DocError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DocError> {
        let path = &self.path;
        match self.value {
            DeValue::String(text) => visitor.visit_str(text),
            DeValue::Integer(integer) => visit_integer(integer.as_str(), integer.radix(), visitor),
            DeValue::Float(float) => match float.as_str().parse::<f64>() {
                Ok(value) => visitor.visit_f64(value),
                Err(_) => Err(DocError::other("floating-point number overflowed")),
            },
            DeValue::Boolean(value) => visitor.visit_bool(*value),
            // No field of a scenario is a date: refused as what it is,
            // rather than read as the string it prints as.
            DeValue::Datetime(_) => Err(de::Error::invalid_type(
                Unexpected::Other("a date-time"),
                &visitor,
            )),
            DeValue::Array(items) => visitor.visit_seq(Items {
                items,
                next: 0,
                path,
            }),
            DeValue::Table(table) => return Table { table, path }.deserialize_any(visitor),
        }
        .map_err(|error| error.at(path))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DocError> {
        let path = self.path.clone();
        visitor.visit_some(self).map_err(|error| error.at(&path))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DocError> {
        let path = self.path.clone();
        visitor
            .visit_newtype_struct(self)
            .map_err(|error| error.at(&path))
    }

    /// A unit variant is its name as a string; any other variant a table
    /// of one entry.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DocError> {
        let path = &self.path;
        match self.value {
            DeValue::String(text) => {
                let variant: StrDeserializer<'_, DocError> = text.as_ref().into_deserializer();
                visitor.visit_enum(variant).map_err(|error| error.at(path))
            }
            DeValue::Table(table) => {
                Table { table, path }.deserialize_enum(name, variants, visitor)
            }
            other => Err(<DocError as de::Error>::invalid_type(
                unexpected(other),
                &OneOf(variants),
            )
            .at(path)),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// A table's entries, in the document's (sorted) key order.
struct Entries<'a, 'i, I> {
    entries: I,
    next: Option<(&'a str, &'a DeValue<'i>)>,
    path: &'a KeyPath,
}

impl<'de, 'a, 'i: 'a, I> MapAccess<'de> for Entries<'a, 'i, I>
where
    I: Iterator<
        Item = (
            &'a toml::Spanned<toml::de::DeString<'i>>,
            &'a toml::Spanned<DeValue<'i>>,
        ),
    >,
{
    type Error = DocError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DocError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let key: &'a str = key.get_ref();
        self.next = Some((key, value.get_ref()));
        let name: StrDeserializer<'_, DocError> = key.into_deserializer();
        seed.deserialize(name).map(Some).map_err(|error| DocError {
            at_key: error.key.is_none(),
            ..error.at(&self.path.clone().key(key))
        })
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DocError> {
        let (key, value) = self
            .next
            .take()
            .ok_or_else(|| DocError::other("a value asked for before its key"))?;
        seed.deserialize(Value {
            value,
            path: self.path.clone().key(key),
        })
    }
}

/// An array's entries, in order.
struct Items<'a, 'i> {
    items: &'a DeArray<'i>,
    next: usize,
    path: &'a KeyPath,
}

impl<'de> SeqAccess<'de> for Items<'_, '_> {
    type Error = DocError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, DocError> {
        let Some(item) = self.items.get(self.next) else {
            return Ok(None);
        };
        let path = self.path.clone().index(self.next);
        self.next += 1;
        seed.deserialize(Value {
            value: item.get_ref(),
            path,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::spec::ScenarioFile;

    /// What a loader made of a document: the file (as JSON) or the message.
    fn outcome(result: Result<ScenarioFile, String>) -> Result<serde_json::Value, String> {
        result.map(|file| serde_json::to_value(file).expect("a file serializes"))
    }

    /// Values written in place of a key's value: every TOML type, and the
    /// shapes the scenario's own types take (a duration, a range).
    const VALUES: &[&str] = &[
        "\"x\"",
        "\"1s\"",
        "0",
        "-1",
        "0x10",
        "18446744073709551615",
        "99999999999999999999",
        "1.5",
        "nan",
        "true",
        "[]",
        "[1, 2]",
        "[\"1s\", \"2s\"]",
        "[1, 2, 3]",
        "{}",
        "{ x = 1 }",
        "1979-05-27",
    ];

    /// The walk makes of every shipped scenario, and of every variant with
    /// a line dropped or a value replaced by another type, the same file
    /// as the toml crate's own deserializer, or refuses it too (in serde's
    /// words, where toml has its own: `LANESIM_SHOW_WORDING=1` lists them).
    #[test]
    fn the_walk_reads_every_file_as_the_toml_crate_does() {
        let mut compared = 0;
        for (name, source) in crate::scenario::shipped::FILES {
            let lines: Vec<&str> = source.lines().collect();
            let mut variants = vec![(*source).to_string()];
            for (i, line) in lines.iter().enumerate() {
                let mut dropped = lines.clone();
                dropped.remove(i);
                variants.push(dropped.join("\n"));
                if let Some((key, _)) = line.split_once(" = ") {
                    for value in VALUES {
                        let mut replaced = lines.clone();
                        let line = format!("{key} = {value}");
                        replaced[i] = &line;
                        variants.push(replaced.join("\n"));
                    }
                }
            }
            for variant in variants {
                let Ok(doc) = DeTable::parse(&variant) else {
                    continue;
                };
                let ours = outcome(from_document(doc.get_ref()).map_err(|e| e.to_string()));
                let theirs = outcome(
                    <ScenarioFile as de::Deserialize>::deserialize(toml::de::Deserializer::from(
                        doc.clone(),
                    ))
                    .map_err(|e| e.message().to_string()),
                );
                match (&ours, &theirs) {
                    (Err(ours), Err(theirs)) if ours != theirs => {
                        if std::env::var_os("LANESIM_SHOW_WORDING").is_some() {
                            eprintln!("{name}: ours `{ours}` toml `{theirs}`");
                        }
                    }
                    _ => assert_eq!(ours, theirs, "{name}:\n{variant}"),
                }
                compared += 1;
            }
        }
        assert!(compared > 10_000, "{compared}");
    }
}
