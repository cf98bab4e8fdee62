//! Values a scenario file may give as one value or as a `[min, max]` range
//! (sampled per run from the seed, swarm style), and the duration syntax.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use serde::de::{self, Deserializer, IntoDeserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::rng::SimRng;

/// One value, or a `[min, max]` range to sample from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sampled<T> {
    /// Always this.
    One(T),
    /// Uniform in `min..=max`.
    Range(T, T),
}

impl<T: Copy + PartialOrd> Sampled<T> {
    /// The bounds (equal for `One`).
    pub fn bounds(&self) -> (T, T) {
        match *self {
            Self::One(v) => (v, v),
            Self::Range(lo, hi) => (lo, hi),
        }
    }

    /// Whether `min <= max`.
    pub fn ordered(&self) -> bool {
        let (lo, hi) = self.bounds();
        lo <= hi
    }
}

impl Sampled<u64> {
    /// A value drawn from the range.
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        let (lo, hi) = self.bounds();
        rng.range(lo, hi)
    }
}

impl Sampled<Dur> {
    /// A duration drawn from the range, to the microsecond.
    pub fn sample(&self, rng: &mut SimRng) -> Duration {
        let (lo, hi) = self.bounds();
        Duration::from_micros(rng.range(lo.0.as_micros() as u64, hi.0.as_micros() as u64))
    }
}

impl Sampled<f64> {
    /// A probability drawn from the range.
    pub fn sample(&self, rng: &mut SimRng) -> f64 {
        let (lo, hi) = self.bounds();
        lo + (hi - lo) * (rng.range(0, 1 << 20) as f64 / f64::from(1u32 << 20))
    }
}

struct SampledVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for SampledVisitor<T> {
    type Value = Sampled<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value or a [min, max] pair")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        T::deserialize(v.into_deserializer()).map(Sampled::One)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        T::deserialize(v.into_deserializer()).map(Sampled::One)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        T::deserialize(v.into_deserializer()).map(Sampled::One)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        T::deserialize(v.into_deserializer()).map(Sampled::One)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        T::deserialize(v.into_deserializer()).map(Sampled::One)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let lo = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(0, &"a [min, max] pair"))?;
        let hi = seq
            .next_element()?
            .ok_or_else(|| de::Error::invalid_length(1, &"a [min, max] pair"))?;
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(3, &"a [min, max] pair"));
        }
        Ok(Sampled::Range(lo, hi))
    }
}

impl<T: Serialize> Serialize for Sampled<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::One(value) => value.serialize(serializer),
            Self::Range(lo, hi) => [lo, hi].serialize(serializer),
        }
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Sampled<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SampledVisitor(PhantomData))
    }
}

/// A duration written as text: `"5s"`, `"250ms"`, `"40us"`, `"1.5s"`, `"0s"`.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Dur(pub Duration);

impl Dur {
    /// Parses the duration syntax.
    ///
    /// # Errors
    /// A message saying what is expected.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| c.is_ascii_alphabetic())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let scale = match unit {
            "s" => 1e6,
            "ms" => 1e3,
            "us" => 1.0,
            _ => {
                return Err(format!(
                "bad duration \"{text}\": expected a number and a unit (s, ms, us), e.g. \"250ms\""
            ))
            }
        };
        let value: f64 = number.parse().map_err(|_| {
            format!("bad duration \"{text}\": expected a number before the unit, e.g. \"250ms\"")
        })?;
        if !value.is_finite() || value < 0.0 {
            return Err(format!("bad duration \"{text}\": must not be negative"));
        }
        if value * scale > 1e15 {
            return Err(format!("bad duration \"{text}\": too long"));
        }
        Ok(Self(Duration::from_micros((value * scale).round() as u64)))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_duration(self.0, f)
    }
}

/// Prints a duration the way scenario files write it.
pub fn fmt_duration(d: Duration, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let micros = d.as_micros();
    if micros % 1_000_000 == 0 {
        write!(f, "{}s", micros / 1_000_000)
    } else if micros % 1000 == 0 {
        write!(f, "{}ms", micros / 1000)
    } else {
        write!(f, "{micros}us")
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurVisitor;
        impl Visitor<'_> for DurVisitor {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration such as \"250ms\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                Dur::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(DurVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_in_every_unit_and_refuse_nonsense() {
        assert_eq!(Dur::parse("5s").unwrap().0, Duration::from_secs(5));
        assert_eq!(Dur::parse("1.5ms").unwrap().0, Duration::from_micros(1500));
        assert_eq!(Dur::parse("40us").unwrap().0, Duration::from_micros(40));
        for bad in ["5", "ms", "-1s", "5 minutes", "1e30s"] {
            assert!(Dur::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sampling_stays_inside_the_range() {
        let mut rng = SimRng::new(3);
        let span = Sampled::Range(Dur(Duration::from_millis(1)), Dur(Duration::from_millis(2)));
        for _ in 0..100 {
            let d = span.sample(&mut rng);
            assert!(d >= Duration::from_millis(1) && d <= Duration::from_millis(2));
        }
        assert_eq!(Sampled::One(7u64).sample(&mut rng), 7);
    }
}
