//! `rnic-driver`: the verbs-style host driver (DESIGN.md §6).

pub mod ring;
