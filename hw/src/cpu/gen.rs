//! The Verilog of the firmware's core with its debug module
//! ([`Rv32FwDebug`]: the core, the JTAG DTM and the Debug Module; TAP pins
//! `tck`, `tms`, `tdi`, `tdo`, debug-module reset `dm_reset`), checked in as
//! `hw/generated/rv32_core.v` (top module `rv32_core`) with its port
//! manifest `hw/generated/rv32_core.ports` (what `verilator-sys` builds a
//! model from), both written by `cargo run -p rnic-hw --bin rnic-cpu-gen`.
//! It goes through the same post-processing as the NIC core's
//! ([`crate::gen::postprocess_as`]), so `verilator --lint-only -Wall` is
//! clean on it (the lint test lints every file in `hw/generated/`).

use super::Rv32FwDebug;
use rust_hdl::prelude::*;

pub const TOP: &str = "rv32_core";
/// Relative to the `hw` crate.
pub const VERILOG_PATH: &str = "generated/rv32_core.v";
pub const PORTS_PATH: &str = "generated/rv32_core.ports";

/// The Verilog and the port manifest.
pub fn generate() -> crate::gen::Generated {
    let verilog = generate_verilog_only();
    let ports = crate::gen::manifest(&crate::gen::parse_top_ports(&verilog, TOP));
    crate::gen::Generated { verilog, ports }
}

fn generate_verilog_only() -> String {
    let mut cpu = Rv32FwDebug::default();
    cpu.connect_all();
    let v = crate::gen::postprocess_as(&generate_verilog(&cpu), TOP);
    v.replacen(
        "cargo run -p rnic-hw --bin rnic-hw-gen",
        "cargo run -p rnic-hw --bin rnic-cpu-gen",
        1,
    )
}

#[cfg(test)]
mod tests {
    /// The checked-in files are what the sources generate.
    #[test]
    fn checked_in_verilog_is_current() {
        let g = super::generate();
        for (rel, want) in [
            (super::VERILOG_PATH, g.verilog),
            (super::PORTS_PATH, g.ports),
        ] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
            let cur = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                cur == want,
                "{} is stale: run `cargo run -p rnic-hw --bin rnic-cpu-gen`",
                path.display()
            );
        }
    }
}
