//! `rnic-sim`: the co-simulator.
