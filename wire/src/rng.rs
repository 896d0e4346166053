//! Small seeded generators for tests and for the simulator's random choices
//! (fault injection, completion order, test data). Deterministic per seed,
//! so a failing run reproduces; not for cryptography.
//!
//! One generator, [`Rng`], with the state step as a type parameter:
//!
//! | step | used by |
//! |---|---|
//! | [`SplitMix64`] (the default) | the simulator (`rnic-sim`) and its tests |
//! | [`XorShift64Star`] | block tests (`rnic-hw`), Verilator tests, the reference model's tests |
//! | [`XorShift64`] | the Verilog post-processing checks (`rnic-hw` `gen`), page-list tests |
//!
//! Tests assert on what their seeds produce, so each keeps the step it was
//! written with; the operations on top of the 64-bit step ([`Rng::below`],
//! [`Rng::bytes`], …) are the same for all.

use core::marker::PhantomData;

/// A 64-bit state step: how a seed becomes the state, and the next output.
pub trait Step {
    /// The initial state for `seed`.
    fn seed(seed: u64) -> u64;
    /// Advances `state` and returns the next 64 output bits.
    fn next(state: &mut u64) -> u64;
}

/// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit state, full period; any
/// seed, including 0, is the initial state.
#[derive(Debug, Clone, Copy)]
pub enum SplitMix64 {}

impl Step for SplitMix64 {
    fn seed(seed: u64) -> u64 {
        seed
    }
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// xorshift64* (Vigna 2016). A seed is spread over the state by a
/// multiplication and made odd, so that every seed (0 included) gives a
/// nonzero state; [`Rng::from_state`] takes the state as it is.
#[derive(Debug, Clone, Copy)]
pub enum XorShift64Star {}

impl Step for XorShift64Star {
    fn seed(seed: u64) -> u64 {
        seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
    }
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// xorshift64 (Marsaglia 2003, shifts 13, 7, 17); the output is the state.
/// The seed is the initial state and must not be 0 (0 stays 0).
#[derive(Debug, Clone, Copy)]
pub enum XorShift64 {}

impl Step for XorShift64 {
    fn seed(seed: u64) -> u64 {
        seed
    }
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }
}

/// A bound for [`Rng::below`] and [`Rng::percent`]: the unsigned integer
/// types, and `i32` so that an unsuffixed literal (`rng.below(3) == 0`)
/// needs no annotation.
pub trait Bound: Copy {
    /// The value as a `u64` (a bound is never negative).
    fn to_u64(self) -> u64;
    /// `v` (below a bound of this type) as this type.
    fn from_u64(v: u64) -> Self;
}

macro_rules! bound {
    ($($t:ty),*) => {$(
        impl Bound for $t {
            fn to_u64(self) -> u64 {
                self as u64
            }
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    )*};
}
bound!(u8, u16, u32, u64, usize, i32);

/// A seeded generator with the state step `S`.
#[derive(Debug, Clone)]
pub struct Rng<S: Step = SplitMix64> {
    state: u64,
    step: PhantomData<S>,
}

impl<S: Step> Rng<S> {
    /// A generator for `seed` (see the step for which seeds are allowed).
    pub fn new(seed: u64) -> Self {
        Self::from_state(S::seed(seed))
    }

    /// A generator whose state is `state`, as given.
    pub fn from_state(state: u64) -> Self {
        Rng {
            state,
            step: PhantomData,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        S::next(&mut self.state)
    }

    /// The next 32 random bits (the upper half of [`Rng::next_u64`]).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (`p <= 0` never, `p >= 1` always).
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.unit() < p)
    }

    /// Uniform in `0..n` (`n > 0`), as `next_u64() % n`: the modulo bias
    /// is below 2^-40 for `n` below 2^24.
    pub fn below<N: Bound>(&mut self, n: N) -> N {
        let n = n.to_u64();
        assert!(n > 0, "Rng::below(0)");
        N::from_u64(self.next_u64() % n)
    }

    /// `true` with probability `p` percent (`below(100) < p`).
    pub fn percent<N: Bound>(&mut self, p: N) -> bool {
        self.below(100u64) < p.to_u64()
    }

    /// `len` random octets (the low octet of each [`Rng::next_u64`]).
    #[cfg(feature = "std")]
    pub fn bytes(&mut self, len: usize) -> std::vec::Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first outputs of each step, fixed: the tests that use these
    /// generators rely on their seeded sequences.
    #[test]
    fn sequences_are_fixed() {
        let mut r = Rng::<SplitMix64>::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        let mut r = Rng::<XorShift64Star>::from_state(1);
        assert_eq!(r.next_u64(), 0x47E4_CE4B_896C_DD1D);
        let mut r = Rng::<XorShift64>::new(1);
        assert_eq!(r.next_u64(), 0x4082_2041);
    }

    #[test]
    fn reproducible_and_roughly_uniform() {
        let mut a = Rng::<SplitMix64>::new(42);
        let first: [u64; 5] = core::array::from_fn(|_| a.next_u64());
        let mut r = Rng::<SplitMix64>::new(42);
        assert_eq!(first, core::array::from_fn(|_| r.next_u64()));
        assert_ne!(Rng::<SplitMix64>::new(43).next_u64(), first[0]);
        let n = 100_000;
        let hits = (0..n).filter(|_| r.chance(0.25)).count() as f64;
        // 5 sigma of a binomial(n, 0.25).
        let sigma = (n as f64 * 0.25 * 0.75).sqrt();
        assert!((hits - 0.25 * n as f64).abs() < 5.0 * sigma, "{hits}");
        assert!(!r.chance(0.0));
        assert!(r.chance(1.0));
        for _ in 0..1000 {
            assert!(r.below(7usize) < 7);
            assert!(r.below(3) < 3);
        }
    }
}
