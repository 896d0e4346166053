//! Adds the linker scripts for the bare-metal image (riscv32 targets only).
use std::{env, fs, path::PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=rnic-fw.x");
    let target = env::var("TARGET").unwrap_or_default();
    if target.starts_with("riscv32") {
        let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
        fs::write(out.join("rnic-fw.x"), include_bytes!("rnic-fw.x")).expect("write linker script");
        println!("cargo:rustc-link-search={}", out.display());
        println!("cargo:rustc-link-arg-bins=-Trnic-fw.x");
        // defmt's format strings: the `.defmt` section (not loaded), from
        // the linker script defmt's build script puts on the search path.
        println!("cargo:rustc-link-arg-bins=-Tdefmt.x");
    }
}
