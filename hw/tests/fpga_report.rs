//! `scripts/fpga_report.py --pnr-failed`, the report `make bitstream` writes
//! when nextpnr stops (the board top does not fit the 45F): it must say
//! what is over, carry nextpnr's error, never claim timing, and exit 1.
//! The logs are the utilisation block and error nextpnr-ecp5 (YoWASP
//! 0.70) printed for the board top of 3c256c2 on the LFE5UM5G-45F, and the
//! same block with the core shrunk to fit (nextpnr's numbers, not ours).

use std::path::PathBuf;
use std::process::Command;

/// nextpnr's device utilisation lines (`Info: <tab> BEL: used/ avail pct%`).
fn util_block(comb: u32) -> String {
    let rows = [
        ("TRELLIS_IO", 48, 245),
        ("DCCA", 5, 56),
        ("DP16KD", 103, 108),
        ("MULT18X18D", 0, 72),
        ("EHXPLLL", 1, 4),
        ("IOLOGIC", 22, 160),
        ("TRELLIS_FF", 29106, 43848),
        ("TRELLIS_COMB", comb, 43848),
        ("TRELLIS_RAMW", 495, 5481),
    ];
    let mut s = String::from("Info: Checksum: 0x391be44e\n\nInfo: Device utilisation:\n");
    for (bel, used, avail) in rows {
        s += &format!(
            "Info: \t{bel:>20}: {used:>7}/{avail:>7} {:>5}%\n",
            used * 100 / avail
        );
    }
    s + "\nInfo: Placed 71 cells based on constraints.\n"
}

const PLACE_ERROR: &str = "ERROR: Unable to place cell 'core.tx_seg.pk_wb.q_LUT4_D_Z_LUT4_Z', \
                           no BELs remaining to implement cell type 'TRELLIS_COMB'\n";

/// The report's main fields, as one line.
const FIELDS: &str = "u=r['utilisation']; print(r['fits'], r['timing_met'], r['clocks'], \
                      u['LUT4']['used'], u['LUT4']['available'], u['BRAM']['used'], \
                      r['lut_map'], repr(r['pnr_error']))";

/// Runs the script on `log`; its exit code and what the Python statement
/// `show` prints of its report.json `r` (read back by Python's json module,
/// independently of the script).
fn run(name: &str, log: &str, show: &str) -> (Option<i32>, String) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("rnic-fpga-report-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (log_p, out_p) = (dir.join("pnr.log"), dir.join("report.json"));
    std::fs::write(&log_p, log).unwrap();
    let st = Command::new("python3")
        .arg(root.join("scripts/fpga_report.py"))
        .args(["--pnr-failed", "--top", "rnic_versa5g", "--lut-map", "abc"])
        .arg("--pnr-log")
        .arg(&log_p)
        .arg("--out")
        .arg(&out_p)
        .args(["--synth-seconds", "612", "--pnr-seconds", "24"])
        .output()
        .expect("python3");
    let fields = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import json,sys; r=json.load(open(sys.argv[1])); {show}"
        ))
        .arg(&out_p)
        .output()
        .expect("python3");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        fields.status.success(),
        "report.json not written or not JSON"
    );
    (
        st.status.code(),
        String::from_utf8(fields.stdout).unwrap().trim().to_string(),
    )
}

#[test]
fn overflow_is_reported_as_not_fitting_and_fails() {
    let (code, f) = run("over", &(util_block(57425) + PLACE_ERROR), FIELDS);
    assert_eq!(code, Some(1));
    assert_eq!(
        f,
        "False False [] 57425 43848 103 abc \"Unable to place cell \
         'core.tx_seg.pk_wb.q_LUT4_D_Z_LUT4_Z', no BELs remaining to implement cell type \
         'TRELLIS_COMB'\""
    );
}

#[test]
fn a_design_that_fits_but_failed_later_still_fails() {
    // Fits (every resource within the part), nextpnr stopped anyway: the
    // report says it fits, keeps the error, and still exits 1.
    let (code, f) = run(
        "fits",
        &(util_block(40000) + "ERROR: Failed to route net 'x'\n"),
        FIELDS,
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        f,
        "True False [] 40000 43848 103 abc \"Failed to route net 'x'\""
    );
}

#[test]
fn a_log_without_utilisation_does_not_claim_a_fit() {
    let (code, f) = run(
        "empty",
        "ERROR: Failed to parse the JSON netlist\n",
        "print(r['fits'], r['timing_met'], r['utilisation'], repr(r['pnr_error']))",
    );
    assert_eq!(code, Some(1));
    assert_eq!(f, "False False {} 'Failed to parse the JSON netlist'");
}
