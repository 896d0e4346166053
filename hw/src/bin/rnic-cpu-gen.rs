//! Writes `hw/generated/rv32_core.v` and `hw/generated/rv32_core.ports`,
//! the Verilog of the RISC-V core (`rnic_hw::cpu`) and its port manifest;
//! `--check` exits 1 when a checked-in file is stale.

use rnic_hw::cpu::gen;

fn main() {
    let check = std::env::args().any(|a| a == "--check");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let g = gen::generate();
    let mut stale = false;
    for (rel, text) in [(gen::VERILOG_PATH, g.verilog), (gen::PORTS_PATH, g.ports)] {
        let path = root.join(rel);
        if check {
            let cur = std::fs::read_to_string(&path).unwrap_or_default();
            if cur != text {
                eprintln!(
                    "{} is stale: run `cargo run -p rnic-hw --bin rnic-cpu-gen`",
                    path.display()
                );
                stale = true;
            } else {
                println!("{} is current", path.display());
            }
        } else {
            std::fs::write(&path, text).expect("write the generated file");
            println!("wrote {}", path.display());
        }
    }
    if stale {
        std::process::exit(1);
    }
}
