//! `rnic-probe`: the firmware's RISC-V core (hw/src/cpu) as probe-rs sees
//! it.
//!
//! * [`ops`]: loading the firmware and reading its RTT log, the same on
//!   the board and in co-simulation;
//! * [`target`]: the target description (`rnic.yaml`: the core's memory
//!   map and JTAG chain) in a probe-rs registry;
//! * [`sim_probe`]: a probe-rs `DebugProbe` on the co-simulated core's JTAG
//!   pins (`rnic_sim::jtag`), so that probe-rs, as a library, debugs the
//!   firmware in co-simulation exactly as it does on the board through an
//!   FT2232H on the PMOD.

pub mod ops;
pub mod sim_probe;
pub mod target;
