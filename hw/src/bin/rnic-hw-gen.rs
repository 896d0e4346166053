//! Writes `hw/generated/rnic_core.v` and `hw/generated/rnic_core.ports`.
//!
//! `rnic-hw-gen [--check] [--out-dir DIR]`: with `--check`, writes nothing and
//! exits 1 if the files in the output directory (default: the `hw/generated`
//! folder of this crate) differ from what the generator produces.

use rnic_hw::gen::{generate, PORTS_PATH, VERILOG_PATH};
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
    let mut stale = false;
    for (rel, text) in &files {
        let path = match out_dir_file(&root, rel) {
            Some(p) => p,
            None => return ExitCode::from(2),
        };
        if check {
            let current = std::fs::read_to_string(&path).unwrap_or_default();
            if &current != text {
                eprintln!("rnic-hw-gen: {} is stale", path.display());
                stale = true;
            }
        } else {
            if let Some(parent) = path.parent() {
                if let Err(e) = std::fs::create_dir_all(parent) {
                    eprintln!("rnic-hw-gen: {}: {e}", parent.display());
                    return ExitCode::FAILURE;
                }
            }
            if let Err(e) = std::fs::write(&path, text) {
                eprintln!("rnic-hw-gen: {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            println!("wrote {}", path.display());
        }
    }
    if stale {
        eprintln!("rnic-hw-gen: regenerate with `cargo run -p rnic-hw --bin rnic-hw-gen`");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
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
