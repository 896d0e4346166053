//! Writes the board tops: `hw/generated/rnic_versa5g.v` (ECP5 Versa-5G)
//! and `hw/generated/rnic_ecpix5.v` (LambdaConcept ECPIX-5).
//!
//! `rnic-board-gen [--check] [--board versa5g|ecpix5] [--out FILE]`: every
//! board by default, one with `--board`; with `--check`, writes nothing and
//! exits 1 if a file differs from what the generator produces. `--out`
//! needs `--board`.

use rnic_hw::board::gen::TOPS;
use rnic_hw::gen::write_or_check;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: rnic-board-gen [--check] [--board versa5g|ecpix5] [--out FILE]";

fn main() -> ExitCode {
    let mut check = false;
    let mut board: Option<String> = None;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--check" => check = true,
            "--board" | "--out" => match args.next() {
                Some(v) if a == "--board" => board = Some(v),
                Some(v) => out = Some(PathBuf::from(v)),
                None => {
                    eprintln!("rnic-board-gen: {a} needs a value\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("rnic-board-gen: unknown argument `{other}`\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(b) = &board {
        if !TOPS.iter().any(|(name, ..)| name == b) {
            eprintln!("rnic-board-gen: unknown board `{b}`\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    if out.is_some() && board.is_none() {
        eprintln!("rnic-board-gen: --out needs --board\n{USAGE}");
        return ExitCode::from(2);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut stale = false;
    for (name, _, rel, gen) in TOPS {
        if board.as_deref().is_some_and(|b| b != name) {
            continue;
        }
        let path = out.clone().unwrap_or_else(|| root.join(rel));
        // The board top (the whole core inside) needs more stack than a
        // main thread may have in a debug build.
        let text = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(gen)
            .expect("spawn")
            .join()
            .expect("generated");
        match write_or_check(
            &[(path, text)],
            check,
            "cargo run -p rnic-hw --bin rnic-board-gen",
        ) {
            Ok(current) => stale |= !current,
            Err(e) => {
                eprintln!("rnic-board-gen: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if stale {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
