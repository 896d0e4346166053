//! Writes `hw/generated/rv32_core.v`, the Verilog of the RISC-V core
//! (`rnic_hw::cpu`); `--check` exits 1 when the checked-in file is stale.

fn main() {
    let check = std::env::args().any(|a| a == "--check");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rnic_hw::cpu::gen::VERILOG_PATH);
    let v = rnic_hw::cpu::gen::generate();
    if check {
        let cur = std::fs::read_to_string(&path).unwrap_or_default();
        if cur != v {
            eprintln!(
                "{} is stale: run `cargo run -p rnic-hw --bin rnic-cpu-gen`",
                path.display()
            );
            std::process::exit(1);
        }
        println!("{} is current", path.display());
    } else {
        std::fs::write(&path, v).expect("write the Verilog");
        println!("wrote {}", path.display());
    }
}
