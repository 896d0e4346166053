//! Verilates the board tops `hw/generated/rnic_versa5g.v` and
//! `hw/generated/rnic_ecpix5.v` (with the ECP5 primitive models appended to
//! them under `ifdef VERILATOR`) and compiles each with its shim
//! (`csrc/board_shim.cpp`, `csrc/ecpix5_shim.cpp`) into
//! `libvm_<top>.a`. The Verilator runtime is not built here:
//! `verilator-sys` builds it once and links it.
//!
//! A model is rebuilt only when its Verilog, its shim, its `.vlt`, the
//! Verilator version or the flags change (it is cached under their hash,
//! shared by the dev and test profiles), and only by crates that depend on
//! this one.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// (top module, shim, Verilator configuration), under `csrc/`.
const MODELS: [(&str, &str, &str); 2] = [
    ("rnic_versa5g", "board_shim.cpp", "public.vlt"),
    ("rnic_ecpix5", "ecpix5_shim.cpp", "ecpix5.vlt"),
];
/// Same flags as verilator-sys (the runtime it built must match).
const VERILATOR_ARGS: &[&str] = &[
    "--cc",
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "--trace",
];
const CXX_FLAGS_DESC: &str = "c++17 -O2 VM_TRACE VM_TRACE_VCD";

fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.iter().chain(&[0xFFu8]) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn main() {
    println!("cargo:rerun-if-env-changed=VERILATOR");
    for (top, shim, vlt) in MODELS {
        build(top, shim, vlt);
    }
    println!("cargo:rustc-link-lib=stdc++");
}

fn build(top: &str, shim: &str, vlt: &str) {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let verilog = dir.join("../../hw/generated").join(format!("{top}.v"));
    let shim = dir.join("csrc").join(shim);
    let vlt = dir.join("csrc").join(vlt);
    // The shims' common part, included by each.
    let common = dir.join("csrc").join("vtop.h");
    for p in [&verilog, &shim, &vlt, &common] {
        println!("cargo:rerun-if-changed={}", p.display());
    }

    let verilator = env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
    let root = Command::new(&verilator)
        .args(["--getenv", "VERILATOR_ROOT"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_else(|| {
            panic!("Verilator (5.x) is needed to build the board model: run `make deps`, or `apt-get install verilator`")
        });
    let include = root.join("include");
    let version = Command::new(&verilator)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();

    let v = fs::read(&verilog).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run `cargo run -p rnic-hw --bin rnic-board-gen`)",
            verilog.display()
        )
    });
    let key = format!(
        "{:016x}",
        fnv(&[
            &v,
            &fs::read(&shim).unwrap(),
            &fs::read(&common).unwrap(),
            &fs::read(&vlt).unwrap(),
            version.as_bytes(),
            VERILATOR_ARGS.join(" ").as_bytes(),
            CXX_FLAGS_DESC.as_bytes(),
        ])
    );
    // The model does not depend on the Rust profile (fixed C++ flags), so it
    // is cached next to the profile directories' build outputs, keyed by the
    // hash: `cargo clippy` (dev profile) and `cargo test` (test profile) share
    // one build instead of compiling the board twice. OUT_DIR is
    // <target>/<dir>/build/<pkg>-<hash>/out; the cache is <target>/<dir>/
    // verilator-board/<top>/<key>.
    let cache = out
        .ancestors()
        .nth(3)
        .map(|p| p.join("verilator-board"))
        .unwrap_or_else(|| out.clone())
        .join(top);
    let dir = cache.join(&key);
    let lib = dir.join(format!("libvm_{top}.a"));
    if !lib.exists() {
        // Build in a private directory, then rename it into place, so two
        // build scripts running at once never see a half-built model.
        let tmp = cache.join(format!("tmp-{key}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        let mdir = tmp.join("vobj");
        fs::create_dir_all(&mdir).unwrap();
        let status = Command::new(&verilator)
            .args(VERILATOR_ARGS)
            .args([
                "--top-module",
                top,
                "--prefix",
                &format!("V{top}"),
                "--Mdir",
            ])
            .arg(&mdir)
            .arg(&vlt)
            .arg(&verilog)
            .status()
            .expect("`verilator` could not be run");
        assert!(
            status.success(),
            "verilator failed on {}",
            verilog.display()
        );
        let mut files: Vec<PathBuf> = fs::read_dir(&mdir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
            .collect();
        files.sort();
        cc::Build::new()
            .cpp(true)
            .std("c++17")
            .opt_level(2)
            .debug(false)
            .warnings(false)
            .cargo_metadata(false)
            .out_dir(&tmp)
            .flag_if_supported("-Wno-unused-parameter")
            .flag_if_supported("-Wno-sign-compare")
            .define("VM_TRACE", "1")
            .define("VM_TRACE_VCD", "1")
            .include(&mdir)
            .include(&include)
            .include(include.join("vltstd"))
            .files(&files)
            .file(&shim)
            .try_compile(&format!("vm_{top}"))
            .unwrap_or_else(|e| panic!("compiling the {top} model: {e}"));
        if fs::rename(&tmp, &dir).is_err() {
            // Another build script finished the same model first.
            let _ = fs::remove_dir_all(&tmp);
        }
        assert!(lib.exists(), "{} missing after the build", lib.display());
        // Older models of this top (other keys) are no longer needed.
        for e in fs::read_dir(&cache).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p != dir && !name.starts_with("tmp-") {
                let _ = fs::remove_dir_all(&p);
            }
        }
        eprintln!("verilator-board: built model {top}");
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=vm_{top}");
}
