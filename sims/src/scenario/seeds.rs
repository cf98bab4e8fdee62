//! [`SeedRange`]: the seeds a sweep runs, parsed once wherever they are
//! written (a scenario's `seeds`, `--seeds`, `--hunt-seeds`) and never as a
//! half-open `Range<u64>`, which cannot hold `u64::MAX`: `--seed
//! 18446744073709551615` once ran nothing and exited 0 (pinned by
//! `the_last_seed_runs_exactly_once`).

use std::fmt;
use std::str::FromStr;

/// The most seeds one range may name: 10^15. A sweep runs its seeds lazily
/// and keeps a summary, not a result per seed, so the bound is time, not
/// memory (a million seeds a second would take 31 years); it exists so the
/// count of a whole sweep (ranges times scenario files) fits in a `u64`.
pub const MAX_SEEDS: u64 = 1_000_000_000_000_000;

/// A non-empty range of seeds, both ends included, at most [`MAX_SEEDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SeedRange {
    first: u64,
    last: u64,
}

impl SeedRange {
    /// Exactly `seed`.
    #[must_use]
    pub const fn one(seed: u64) -> Self {
        Self {
            first: seed,
            last: seed,
        }
    }

    /// `first..=last`.
    ///
    /// # Errors
    /// When `last < first` or the range names more than [`MAX_SEEDS`].
    pub fn new(first: u64, last: u64) -> Result<Self, String> {
        if last < first {
            return Err(format!("the range {first}..={last} is empty"));
        }
        if last - first >= MAX_SEEDS {
            return Err(format!(
                "{first}..={last} names more than {MAX_SEEDS} seeds (at most {MAX_SEEDS})"
            ));
        }
        Ok(Self { first, last })
    }

    /// The first seed.
    #[must_use]
    pub fn first(self) -> u64 {
        self.first
    }

    /// The last seed (included).
    #[must_use]
    pub fn last(self) -> u64 {
        self.last
    }

    /// How many seeds (at least 1).
    #[must_use]
    pub fn len(self) -> u64 {
        self.last - self.first + 1
    }

    /// Never: a range holds at least one seed.
    #[must_use]
    pub fn is_empty(self) -> bool {
        false
    }

    /// The seeds, in order.
    pub fn iter(self) -> impl Iterator<Item = u64> + Clone {
        self.first..=self.last
    }
}

impl IntoIterator for SeedRange {
    type Item = u64;
    type IntoIter = std::ops::RangeInclusive<u64>;

    fn into_iter(self) -> Self::IntoIter {
        self.first..=self.last
    }
}

impl FromStr for SeedRange {
    type Err = String;

    /// `"A..B"` (B excluded) or `"A..=B"` (B included).
    fn from_str(text: &str) -> Result<Self, String> {
        let expected = || {
            format!(
                "expected A..B (B excluded) or A..=B with A < B and at most {MAX_SEEDS} seeds, got \"{text}\""
            )
        };
        let (a, rest) = text.split_once("..").ok_or_else(expected)?;
        let (inclusive, b) = match rest.strip_prefix('=') {
            Some(b) => (true, b),
            None => (false, rest),
        };
        let a: u64 = a.trim().parse().map_err(|_| expected())?;
        let b: u64 = b.trim().parse().map_err(|_| expected())?;
        let last = if inclusive {
            b
        } else {
            b.checked_sub(1)
                .filter(|last| *last >= a)
                .ok_or_else(expected)?
        };
        Self::new(a, last).map_err(|why| format!("{}: {why}", expected()))
    }
}

impl fmt::Display for SeedRange {
    /// `A..B` when B fits in a `u64`, else `A..=B`: what `from_str` reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.last.checked_add(1) {
            Some(end) => write!(f, "{}..{end}", self.first),
            None => write!(f, "{}..={}", self.first, self.last),
        }
    }
}

impl serde::Serialize for SeedRange {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for SeedRange {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_parse_and_print_back() {
        let range: SeedRange = "3..7".parse().unwrap();
        assert_eq!((range.first(), range.last(), range.len()), (3, 6, 4));
        assert_eq!(range.to_string(), "3..7");
        assert_eq!("3..=6".parse::<SeedRange>().unwrap(), range);
        let top: SeedRange = "18446744073709551615..=18446744073709551615"
            .parse()
            .unwrap();
        assert_eq!(top, SeedRange::one(u64::MAX));
        assert_eq!(
            top.to_string(),
            "18446744073709551615..=18446744073709551615"
        );
        assert_eq!(top.to_string().parse::<SeedRange>().unwrap(), top);
        assert_eq!(top.iter().collect::<Vec<_>>(), vec![u64::MAX]);
    }

    #[test]
    fn empty_backwards_huge_and_garbled_ranges_are_refused() {
        for bad in [
            "5..5",
            "6..5",
            "5..=4",
            "0..1000000000000001",
            "0..=1000000000000000",
            "0..=18446744073709551615",
            "a..b",
            "5",
            "..",
            "-1..3",
        ] {
            assert!(bad.parse::<SeedRange>().is_err(), "{bad} was accepted");
        }
        assert_eq!(
            "0..1000000000000000".parse::<SeedRange>().unwrap().len(),
            MAX_SEEDS
        );
    }
}
