//! `verilator --lint-only -Wall` on every checked-in `hw/generated/*.v` (top
//! module = file name) and on the Verilog of a few blocks generated here on
//! their own, each as its own top module, with the same post-processing
//! (`standalone_blocks`; they are also part of `rnic_core`). Any
//! warning fails the test with Verilator's messages. Without Verilator the
//! test prints "skipped: ..." and passes, except under CI, where it fails
//! (`support::have_tool`).

use rnic_hw::protection::tpt::{Tpt, PBL_INDEX_BITS, TPT_INDEX_BITS};
use rnic_hw::receive::ddp_rx::DdpRx;
use rnic_hw::receive::mpa_rx::MpaRx;
use rnic_hw::receive::placement::Placement;
use rnic_hw::transmit::tx_framer::TxFramer;
use rust_hdl::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../testdata/support.rs"]
mod support;

/// Verilator's messages, or `None` when the file is clean.
fn lint(file: &Path, top: &str) -> Option<String> {
    let out = Command::new("verilator")
        .args(["--lint-only", "-Wall"])
        .arg(file)
        .args(["--top-module", top])
        .output()
        .expect("run verilator");
    let msgs =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let bad = !out.status.success() || msgs.contains("%Warning") || msgs.contains("%Error");
    bad.then(|| format!("{}:\n{msgs}", file.display()))
}

/// Blocks linted as their own top module (each is also inside `rnic_core`,
/// placement inside ddp_rx): (top module name, rust-hdl's raw Verilog).
fn standalone_blocks() -> Vec<(&'static str, String)> {
    fn raw<T: Block>(mut b: T) -> String {
        b.connect_all();
        generate_verilog(&b)
    }
    vec![
        ("mpa_rx", raw(MpaRx::default())),
        ("tx_framer", raw(TxFramer::default())),
        ("ddp_rx", raw(DdpRx::<PBL_INDEX_BITS>::default())),
        ("tpt", raw(Tpt::<TPT_INDEX_BITS, PBL_INDEX_BITS>::default())),
        ("placement", raw(Placement::<PBL_INDEX_BITS>::default())),
    ]
}

#[test]
fn generated_verilog_is_lint_clean() {
    if !support::have_tool("verilator") {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("generated");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("hw/generated")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "v"))
        .collect();
    files.sort();
    assert!(
        files.iter().any(|f| f.ends_with("rnic_core.v")),
        "no rnic_core.v in {}",
        dir.display()
    );
    let mut failures = Vec::new();
    for f in &files {
        let top = f.file_stem().unwrap().to_str().unwrap();
        failures.extend(lint(f, top));
    }
    let tmp = std::env::temp_dir().join(format!("rnic-hw-lint-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (top, raw) in standalone_blocks() {
        let f = tmp.join(format!("{top}.v"));
        std::fs::write(&f, rnic_hw::gen::postprocess_as(&raw, top)).unwrap();
        failures.extend(lint(&f, top));
    }
    if std::env::var_os("RNIC_LINT_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    } else {
        println!("kept {}", tmp.display());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!(
        "lint clean: {} checked-in file(s) and {} standalone block(s)",
        files.len(),
        standalone_blocks().len()
    );
}
