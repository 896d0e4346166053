//! Verilates the board top `hw/generated/rnic_versa5g.v` (with the ECP5
//! primitive models appended to it under `ifdef VERILATOR`) and compiles it
//! with `csrc/board_shim.cpp` into `libvm_rnic_versa5g.a`. The Verilator
//! runtime is not built here: `verilator-sys` builds it once and links it.
//!
//! Rebuilt only when the Verilog, the shim, `csrc/public.vlt`, the
//! Verilator version or the flags change (the model is cached under their
//! hash, shared by the dev and test profiles), and only by crates that
//! depend on this one.

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

const TOP: &str = "rnic_versa5g";
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
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let verilog = dir.join("../../hw/generated").join(format!("{TOP}.v"));
    let shim = dir.join("csrc/board_shim.cpp");
    let vlt = dir.join("csrc/public.vlt");
    for p in [&verilog, &shim, &vlt] {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    println!("cargo:rerun-if-env-changed=VERILATOR");

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
    // verilator-board/<key>.
    let cache = out
        .ancestors()
        .nth(3)
        .map(|p| p.join("verilator-board"))
        .unwrap_or_else(|| out.clone());
    let dir = cache.join(&key);
    let lib = dir.join(format!("libvm_{TOP}.a"));
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
                TOP,
                "--prefix",
                &format!("V{TOP}"),
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
            .try_compile(&format!("vm_{TOP}"))
            .unwrap_or_else(|e| panic!("compiling the {TOP} model: {e}"));
        if fs::rename(&tmp, &dir).is_err() {
            // Another build script finished the same model first.
            let _ = fs::remove_dir_all(&tmp);
        }
        assert!(lib.exists(), "{} missing after the build", lib.display());
        // Older models (other keys) are no longer needed.
        for e in fs::read_dir(&cache).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if p != dir && !name.starts_with("tmp-") {
                let _ = fs::remove_dir_all(&p);
            }
        }
        eprintln!("verilator-board: built model {TOP}");
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=static=vm_{TOP}");
    println!("cargo:rustc-link-lib=stdc++");
}
