//! A scenario's `reaches`: the coverage marks a sweep of it must reach,
//! each at least once or on a share of its seeds.

use std::fmt;

use crate::coverage::CoverMark;

/// A mark a scenario must reach in a sweep.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Reach {
    /// The mark.
    pub mark: CoverMark,
    /// The share of seeds that must reach it; `None`: at least one seed.
    pub share: Option<f64>,
}

impl Reach {
    /// Parses `"mark"` or `"mark >= 25%"`.
    ///
    /// # Errors
    /// A message saying what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, share) = match text.split_once(">=") {
            Some((name, share)) => (name.trim(), Some(share.trim())),
            None => (text.trim(), None),
        };
        let mark = CoverMark::from_name(name).ok_or_else(|| {
            format!("unknown coverage mark `{name}` (`lanesim list` prints them all)")
        })?;
        let share = share
            .map(|share| {
                let percent: f64 = share
                    .strip_suffix('%')
                    .and_then(|p| p.trim().parse().ok())
                    .ok_or_else(|| format!("`{text}`: expected a share such as `>= 25%`"))?;
                if percent > 0.0 && percent <= 100.0 {
                    Ok(percent / 100.0)
                } else {
                    Err(format!("`{text}`: the share must be in (0%, 100%]"))
                }
            })
            .transpose()?;
        Ok(Self { mark, share })
    }

    /// How many of `seeds` seeds must reach the mark.
    #[must_use]
    pub fn required(&self, seeds: u64) -> u64 {
        match self.share {
            None => 1,
            Some(share) => ((share * seeds as f64).ceil() as u64).max(1),
        }
    }
}

impl fmt::Display for Reach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.share {
            None => write!(f, "{}", self.mark),
            Some(share) => write!(f, "{} >= {}%", self.mark, share * 100.0),
        }
    }
}
