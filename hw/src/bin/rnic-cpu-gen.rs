//! Writes `hw/generated/rv32_core.v` and `hw/generated/rv32_core.ports`,
//! the Verilog of the RISC-V core (`rnic_hw::cpu`) and its port manifest;
//! `--check` exits 1 when a checked-in file is stale.

use rnic_hw::cpu::gen;
use std::process::ExitCode;

fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let g = gen::generate();
    let files = [
        (root.join(gen::VERILOG_PATH), g.verilog),
        (root.join(gen::PORTS_PATH), g.ports),
    ];
    match rnic_hw::gen::write_or_check(&files, check, "cargo run -p rnic-hw --bin rnic-cpu-gen") {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("rnic-cpu-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
