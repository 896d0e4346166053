//! A small seeded generator (xorshift64*) so runs are reproducible from
//! `--seed` without pulling a random-number crate into the simulator.

/// xorshift64* (Vigna, 2014): fast, 64-bit state, good enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value; 0 is remapped).
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A value in `0..n` (`n` > 0), by rejection so it is unbiased.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        unit < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_below_is_in_range() {
        let (mut a, mut b) = (Rng::new(5), Rng::new(5));
        let mut counts = [0u32; 10];
        for _ in 0..10_000 {
            assert_eq!(a.next_u64(), b.next_u64());
            counts[a.below(10) as usize] += 1;
            b.below(10);
        }
        // Each bucket near 1000 (binomial sd ~30).
        assert!(
            counts.iter().all(|&c| (850..1150).contains(&c)),
            "{counts:?}"
        );
        assert_ne!(Rng::new(5).next_u64(), Rng::new(6).next_u64());
    }
}
