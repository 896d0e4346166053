//! `rnic-probe load` and `rnic-probe log` (`make fw-load`, `make fw-log`)
//! with no JTAG adapter plugged in: both fail, naming what is missing and
//! where to connect it; a missing ELF is named too.

use std::process::Command;

fn run(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rnic-probe"))
        .args(args)
        .output()
        .expect("rnic-probe runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn without_a_probe_load_and_log_name_what_is_missing() {
    assert!(
        probe_rs::probe::list::Lister::new().list_all().is_empty(),
        "a debug probe is connected to this machine: this test checks the answer without one"
    );
    let elf = rnic_fw::image::build_elf().unwrap_or_else(|e| panic!("{e}"));
    let elf = elf.to_str().unwrap();
    for cmd in ["load", "log"] {
        let (ok, err) = run(&[cmd, elf]);
        assert!(!ok, "{cmd} without a probe failed");
        assert!(
            err.contains("no JTAG probe found") && err.contains("PMOD0") && err.contains("TCK"),
            "{cmd}: {err}"
        );
    }
    let (ok, err) = run(&["load", "/nonexistent/rnic-fw"]);
    assert!(!ok);
    assert!(
        err.contains("/nonexistent/rnic-fw") && err.contains("make firmware-elf"),
        "{err}"
    );
}
