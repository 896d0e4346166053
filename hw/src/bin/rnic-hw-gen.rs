//! Writes `hw/generated/rnic_core.v` and `hw/generated/rnic_core.ports`.
//!
//! `rnic-hw-gen [--check] [--out-dir DIR]`: with `--check`, writes nothing and
//! exits 1 if the files in the output directory (default: the `hw/generated`
//! folder of this crate) differ from what the generator produces.

use rnic_hw::gen::{generate, write_or_check, PORTS_PATH, VERILOG_PATH};
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut check = false;
    let mut root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out_dir: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--check" => check = true,
            "--out-dir" => out_dir = args.next().map(PathBuf::from),
            "-h" | "--help" => {
                println!("usage: rnic-hw-gen [--check] [--out-dir DIR]");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("rnic-hw-gen: unknown argument `{other}`");
                return ExitCode::from(2);
            }
        }
    }
    let g = generate();
    let files = [(VERILOG_PATH, g.verilog), (PORTS_PATH, g.ports)];
    if let Some(d) = out_dir {
        root = d;
    }
    let mut out = Vec::new();
    for (rel, text) in files {
        match out_dir_file(&root, rel) {
            Some(p) => out.push((p, text)),
            None => return ExitCode::from(2),
        }
    }
    match write_or_check(&out, check, "cargo run -p rnic-hw --bin rnic-hw-gen") {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("rnic-hw-gen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `root/generated/x` for the crate root, or `root/x` (file name only) for an
/// explicit output directory.
fn out_dir_file(root: &std::path::Path, rel: &str) -> Option<PathBuf> {
    let name = std::path::Path::new(rel).file_name()?;
    if root == std::path::Path::new(env!("CARGO_MANIFEST_DIR")) {
        Some(root.join(rel))
    } else {
        Some(root.join(name))
    }
}
