//! `rnic-sim`: the co-simulator (DESIGN.md §7). A node is the Verilated
//! `rnic_core`, its firmware, its host memory and its driver; nodes are joined
//! by a link model.

pub mod host_mem;
pub mod model_run;
pub mod pcap;
pub mod rng;
