//! Which board and ECP5 part a bitstream is for: `scripts/bitstream.sh
//! --board/--part` records them in report.json (`scripts/fpga_report.py
//! --board --device`), and `scripts/flash.sh` refuses, before it touches
//! the cable, a bitstream whose report is missing or names another board
//! or part than the one flashed (the ECPIX-5 with its LFE5UM5G-85F by
//! default; `--board versa5g` the Versa-5G with its LFE5UM5G-45F unless
//! `--part 85f`). The report also records nextpnr's seed
//! (`--seed`/`FPGA_SEED`), which `bitstream.sh` checks before synthesis.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PART_45F: &str = "LFE5UM5G-45F-8BG381";
const PART_85F: &str = "LFE5UM5G-85F-8BG381";
const ECPIX5_85F: &str = "LFE5UM5G-85F-8BG554I";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rnic-fpga-part-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A bitstream (content irrelevant: the checks run before the cable) with,
/// when `built` = (board, device) is given, the report `make bitstream`
/// writes beside it (no `board` field when the board is "").
fn fake_build(dir: &Path, built: Option<(&str, &str)>) -> PathBuf {
    let bit = dir.join("rnic_board.bit");
    std::fs::write(&bit, b"not a real bitstream").unwrap();
    if let Some((b, d)) = built {
        let board = if b.is_empty() {
            String::new()
        } else {
            format!(", \"board\": \"{b}\"")
        };
        let report = format!("{{\"schema\": \"rnic-fpga-report/1\", \"device\": \"{d}\"{board}}}");
        std::fs::write(dir.join("report.json"), report).unwrap();
    }
    bit
}

/// `flash.sh --bit bit` for `board` (None: the default) and `part`.
fn flash(bit: &Path, board: Option<&str>, part: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/flash.sh"))
        .arg("--bit")
        .arg(bit);
    cmd.env_remove("FPGA_PART");
    cmd.env_remove("FPGA_BOARD");
    if let Some(b) = board {
        cmd.args(["--board", b]);
    }
    if let Some(p) = part {
        cmd.args(["--part", p]);
    }
    let out: Output = cmd.output().expect("bash");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text)
}

/// `flash.sh` for the Versa-5G on a fake build for the Versa-5G and
/// `device`, in its own scratch directory (removed after).
fn flash_case(name: &str, device: Option<&str>, part: Option<&str>) -> (Option<i32>, String) {
    flash_board_case(name, device.map(|d| ("versa5g", d)), Some("versa5g"), part)
}

/// `flash.sh` for `board` (None: the default) on a fake build for `built`.
fn flash_board_case(
    name: &str,
    built: Option<(&str, &str)>,
    board: Option<&str>,
    part: Option<&str>,
) -> (Option<i32>, String) {
    let dir = scratch(name);
    let bit = fake_build(&dir, built);
    let result = flash(&bit, board, part);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Past the board and part checks `flash.sh` goes on to openFPGALoader
/// (absent here, or present with no board: either way exit 1, but not for
/// the board or part).
fn passed_the_checks(code: Option<i32>, text: &str) {
    assert_eq!(code, Some(1), "{text}");
    assert!(
        !text.contains("built for") && !text.contains("no report.json"),
        "{text}"
    );
    assert!(
        text.contains("openFPGALoader is not installed") || text.contains("flash: loading"),
        "{text}"
    );
}

#[test]
fn flash_defaults_to_the_ecpix5_and_its_85f() {
    let (code, text) = flash_board_case("ecpix5", Some(("ecpix5", ECPIX5_85F)), None, None);
    passed_the_checks(code, &text);
    if text.contains("flash: loading") {
        assert!(text.contains("-b ecpix5"), "{text}");
    }
}

#[test]
fn flash_refuses_a_bitstream_for_another_board() {
    // A Versa-5G build flashed as the default board (the ECPIX-5) ...
    let (code, text) = flash_board_case("board-v", Some(("versa5g", PART_85F)), None, None);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("built for board 'versa5g', not ecpix5"),
        "{text}"
    );
    assert!(
        !text.contains("flash: loading"),
        "reached the cable: {text}"
    );
    // ... an ECPIX-5 build flashed as the Versa-5G, even with the 85F ...
    let (code, text) = flash_board_case(
        "board-e",
        Some(("ecpix5", ECPIX5_85F)),
        Some("versa5g"),
        Some("85f"),
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("built for board 'ecpix5', not versa5g"),
        "{text}"
    );
    // ... and a report that does not name its board.
    let (code, text) = flash_board_case("board-none", Some(("", ECPIX5_85F)), None, None);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("built for board 'unknown'"), "{text}");
}

#[test]
fn flash_refuses_an_ecpix5_bitstream_for_the_45f_variant() {
    let (code, text) = flash_board_case(
        "ecpix5-45",
        Some(("ecpix5", "LFE5UM5G-45F-8BG554I")),
        None,
        None,
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("built for 'LFE5UM5G-45F-8BG554I'") && text.contains(ECPIX5_85F),
        "{text}"
    );
}

#[test]
fn an_unknown_board_is_an_error_in_both_scripts() {
    let (code, text) = flash_board_case("unknown-board", None, Some("arty"), None);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("must be ecpix5 or versa5g, not 'arty'"),
        "{text}"
    );
    let out = bitstream_without_input("unknown-board-bitstream", &["--board", "arty"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be ecpix5 or versa5g, not 'arty'"));
}

#[test]
fn flash_refuses_a_bitstream_for_another_part() {
    let (code, text) = flash_case("other", Some(PART_85F), None);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(&format!("built for '{PART_85F}'")) && text.contains(PART_45F),
        "{text}"
    );
    assert!(
        !text.contains("flash: loading"),
        "reached the cable: {text}"
    );
}

#[test]
fn flash_refuses_a_bitstream_without_its_report() {
    let (code, text) = flash_case("noreport", None, None);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("no report.json beside"), "{text}");
    assert!(
        !text.contains("flash: loading"),
        "reached the cable: {text}"
    );
}

#[test]
fn flash_takes_a_bitstream_for_the_part_it_is_told() {
    let (code, text) = flash_case("same", Some(PART_85F), Some("85f"));
    passed_the_checks(code, &text);
}

/// Runs `scripts/bitstream.sh` with `args` (and `FPGA_SEED` = `seed_env`
/// when given, else none) on a source that does not exist, in a scratch
/// output directory: were the check a test expects gone, the script would
/// stop at the missing input (exit 1) instead of starting a synthesis.
fn bitstream_without_input(name: &str, args: &[&str], seed_env: Option<&str>) -> Output {
    let dir = scratch(name);
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/bitstream.sh"))
        .args(args)
        .arg("--out-dir")
        .arg(&dir)
        .arg("no-such-input.v");
    cmd.env_remove("FPGA_SEED");
    cmd.env_remove("FPGA_BOARD");
    cmd.env_remove("FPGA_PART");
    if let Some(e) = seed_env {
        cmd.env("FPGA_SEED", e);
    }
    let out = cmd.output().expect("bash");
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn an_unknown_part_is_an_error_in_both_scripts() {
    let (code, text) = flash_case("unknown", Some(PART_45F), Some("25f"));
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("must be 45f or 85f, not '25f'"), "{text}");

    let out = bitstream_without_input("unknown-bitstream", &["--part", "25f"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be 45f or 85f, not '25f'"));
}

/// A seed that is not a number stops `bitstream.sh` before synthesis (exit
/// 2, the value named), whether given as `--seed` or as `FPGA_SEED`.
#[test]
fn a_bad_seed_is_an_error_before_synthesis() {
    for (arg, env) in [(Some("1x"), None), (None, Some("-3")), (Some(""), None)] {
        let args: Vec<&str> = arg.map(|a| vec!["--seed", a]).unwrap_or_default();
        let out = bitstream_without_input("bad-seed", &args, env);
        let err = String::from_utf8_lossy(&out.stderr);
        let bad = arg.or(env).unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg:?} {env:?}: {err}");
        assert!(
            err.contains(&format!("must be a non-negative integer, not '{bad}'")),
            "{err}"
        );
        assert!(!err.contains("synthesis"), "{err}");
    }
}

/// Runs `scripts/fpga_report.py` with `args`, plus `--out` and a
/// `--pnr-log` holding one nextpnr ERROR line (read by `--pnr-failed`,
/// ignored by `--synth-only`): its exit code, its stdout, and the field
/// `key` of the report.json it wrote, read back by Python's json module.
fn report_field(name: &str, args: &[&str], key: &str) -> (Option<i32>, String, String) {
    let dir = scratch(name);
    let (log_p, out_p) = (dir.join("pnr.log"), dir.join("report.json"));
    std::fs::write(&log_p, "ERROR: nothing placed\n").unwrap();
    let out = Command::new("python3")
        .arg(root().join("scripts/fpga_report.py"))
        .args(args)
        .arg("--pnr-log")
        .arg(&log_p)
        .arg("--out")
        .arg(&out_p)
        .output()
        .expect("python3");
    let read = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import json,sys; print(json.load(open(sys.argv[1]))['{key}'])"
        ))
        .arg(&out_p)
        .output()
        .expect("python3");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8(read.stdout).unwrap().trim().to_string(),
    )
}

/// The device report.json records: the one `--device` names, else the 45F.
fn reported_device(device: Option<&str>) -> String {
    let mut args = vec!["--synth-only", "--top", "rnic_versa5g", "--lut-map", "abc"];
    if let Some(d) = device {
        args.extend(["--device", d]);
    }
    let name = format!("report-{}", device.unwrap_or("default"));
    let (code, _, device) = report_field(&name, &args, "device");
    assert_eq!(code, Some(0));
    device
}

/// The seed a place-and-route report records (`--seed`); a synthesis-only
/// report has none (`None`).
fn reported_seed(synth_only: bool) -> String {
    let mode = if synth_only {
        "--synth-only"
    } else {
        "--pnr-failed"
    };
    let args = [mode, "--top", "rnic_versa5g", "--seed", "7"];
    let (_, stdout, seed) = report_field(&format!("seed-{synth_only}"), &args, "seed");
    if !synth_only {
        assert!(stdout.contains("(seed 7)"), "{stdout}");
    }
    seed
}

#[test]
fn the_report_records_the_seed() {
    assert_eq!(reported_seed(false), "7");
    assert_eq!(reported_seed(true), "None");
}

/// The board report.json records: the one `--board` names, else none.
#[test]
fn the_report_names_the_board_it_was_built_for() {
    let args = ["--synth-only", "--top", "rnic_ecpix5", "--board", "ecpix5"];
    let (code, _, board) = report_field("board-ecpix5", &args, "board");
    assert_eq!((code, board.as_str()), (Some(0), "ecpix5"));
    let args = ["--synth-only", "--top", "rnic_versa5g"];
    let (_, _, board) = report_field("board-none", &args, "board");
    assert_eq!(board, "None");
}

#[test]
fn the_report_names_the_part_it_was_built_for() {
    assert_eq!(reported_device(Some(PART_85F)), PART_85F);
    assert_eq!(reported_device(None), PART_45F);
}

/// `scripts/fw-patch.sh` (`make bitstream-fw`) patches only a placed,
/// timing-met ECPIX-5 design: without one it stops with exit 1 and names
/// what is missing, before any tool or build runs.
#[test]
fn firmware_patch_needs_a_placed_ecpix5_design() {
    let run = |dir: &Path| {
        let out = Command::new("bash")
            .arg(root().join("scripts/fw-patch.sh"))
            .arg("--out-dir")
            .arg(dir)
            .output()
            .expect("bash");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let dir = scratch("fw-patch-empty");
    let (code, err) = run(&dir);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("rnic_ecpix5.config is missing; run 'make bitstream' first"),
        "{err}"
    );
    // A placed design whose report is a Versa-5G build, or missed timing.
    std::fs::write(dir.join("rnic_ecpix5.config"), ".device LFE5UM5G-85F\n").unwrap();
    let seed = root().join("target/fpga/imem-seed.hex");
    if !seed.exists() {
        std::fs::create_dir_all(seed.parent().unwrap()).unwrap();
        std::fs::write(&seed, "00000000\n").unwrap();
    }
    for report in [
        r#"{"top": "rnic_versa5g", "timing_met": true}"#,
        r#"{"top": "rnic_ecpix5", "timing_met": false}"#,
    ] {
        std::fs::write(dir.join("report.json"), report).unwrap();
        let (code, err) = run(&dir);
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("is not a timing-met build of rnic_ecpix5"),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
