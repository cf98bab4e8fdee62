//! The run's only source of randomness: xoshiro256** seeded through
//! splitmix64. Our own few lines rather than a crate's `StdRng`, whose
//! algorithm may change between releases and silently break old repro lines.

/// A seeded generator. Cloning forks an identical stream.
#[derive(Clone, Debug)]
pub struct SimRng {
    s: [u64; 4],
}

impl SimRng {
    /// The generator for `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Self {
            s: [next(), next(), next(), next()],
        }
    }

    /// A generator for a named sub-stream, so adding draws in one part of a
    /// world does not shift the values another part sees.
    #[must_use]
    pub fn fork(&self, stream: &str) -> Self {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for byte in stream.bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x100_0000_01b3);
        }
        Self::new(self.s[0] ^ hash)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `lo..=hi` (`hi < lo` is treated as `lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo;
        if span == u64::MAX {
            return self.next_u64();
        }
        lo + self.next_u64() % (span + 1)
    }

    /// `true` with probability `p` (clamped to 0..=1).
    pub fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

#[cfg(test)]
mod tests {
    use super::SimRng;

    #[test]
    fn a_seed_always_gives_the_same_stream() {
        let a: Vec<u64> = (0..4)
            .scan(SimRng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .scan(SimRng::new(7), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        // Pinned: a change here breaks every recorded repro line.
        assert_eq!(SimRng::new(0).next_u64(), 0x99EC_5F36_CB75_F2B4);
    }

    #[test]
    fn ranges_stay_in_bounds_and_forks_differ() {
        let mut rng = SimRng::new(1);
        assert!((0..1000).all(|_| (3..=9).contains(&rng.range(3, 9))));
        assert_eq!(rng.range(5, 5), 5);
        assert_ne!(
            SimRng::new(1).fork("a").next_u64(),
            SimRng::new(1).fork("b").next_u64()
        );
    }
}
