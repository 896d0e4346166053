//! The simulator's generator for its random choices (fault injection,
//! completion order): SplitMix64 from [`rnic_wire::rng`]. Deterministic per
//! seed, so a failing run reproduces.

/// SplitMix64; [`Rng::new`] takes any seed, 0 included.
pub type Rng = rnic_wire::rng::Rng<rnic_wire::rng::SplitMix64>;
