//! Writes `hw/generated/rnic_versa5g.v`, the ECP5 Versa-5G board top.
//!
//! `rnic-board-gen [--check] [--out FILE]`: with `--check`, writes nothing
//! and exits 1 if the file differs from what the generator produces.

use rnic_hw::board::gen::{generate, VERILOG_PATH};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut check = false;
    let mut path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(VERILOG_PATH);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--check" => check = true,
            "--out" => match args.next() {
                Some(p) => path = PathBuf::from(p),
                None => {
                    eprintln!("rnic-board-gen: --out needs a file");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("usage: rnic-board-gen [--check] [--out FILE]");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("rnic-board-gen: unknown argument `{other}`");
                return ExitCode::from(2);
            }
        }
    }
    let text = generate();
    if check {
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != text {
            eprintln!(
                "rnic-board-gen: {} is stale; regenerate with `cargo run -p rnic-hw --bin rnic-board-gen`",
                path.display()
            );
            return ExitCode::FAILURE;
        }
        return ExitCode::SUCCESS;
    }
    if let Err(e) = std::fs::write(&path, &text) {
        eprintln!("rnic-board-gen: {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    println!("wrote {}", path.display());
    ExitCode::SUCCESS
}
