//! `verilator-sys`: the Verilated rnic core, driven from Rust.
