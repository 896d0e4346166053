//! Verilog generation for the board tops `rnic_versa5g`
//! (`hw/generated/rnic_versa5g.v`) and `rnic_ecpix5`
//! (`hw/generated/rnic_ecpix5.v`), both written by `rnic-board-gen`.
//!
//! rust-hdl's output gets the same width fixes and waivers as `rnic_core.v`
//! ([`crate::gen::fix_widths`], [`crate::gen::waive`]), the top module is
//! renamed, each waiver is written next to its reason, and the Verilator-only models of the ECP5
//! primitives ([`super::ecp5::SIM_MODELS`]) are appended.

use super::ecp5::SIM_MODELS;
use super::ecpix5_top::Ecpix5Top;
use super::versa5g_top::VersaTop;
use rust_hdl::prelude::*;

/// Name of the Versa-5G top module.
pub const TOP: &str = "rnic_versa5g";
/// Path, relative to the `hw/` crate root, of the checked-in output.
pub const VERILOG_PATH: &str = "generated/rnic_versa5g.v";
/// Name of the ECPIX-5 top module.
pub const ECPIX5_TOP: &str = "rnic_ecpix5";
/// Path, relative to the `hw/` crate root, of its checked-in output.
pub const ECPIX5_VERILOG_PATH: &str = "generated/rnic_ecpix5.v";

/// A board top the generator writes: (board name, top module, path
/// relative to `hw/`, generator).
pub type BoardTop = (&'static str, &'static str, &'static str, fn() -> String);

/// Every board top, in the order `rnic-board-gen` writes them.
pub const TOPS: [BoardTop; 2] = [
    ("versa5g", TOP, VERILOG_PATH, generate),
    ("ecpix5", ECPIX5_TOP, ECPIX5_VERILOG_PATH, generate_ecpix5),
];

/// Elaborates the Versa-5G top and returns the file's contents.
pub fn generate() -> String {
    let mut top = VersaTop::default();
    top.connect_all();
    postprocess_as(&generate_verilog(&top), TOP)
}

/// Elaborates the ECPIX-5 top and returns the file's contents. Its
/// modules are post-processed under the Versa-5G top's name and renamed
/// after: the lint waivers ([`crate::gen::waive`]) name the board's
/// modules by their path under `rnic_versa5g`, and the ECPIX-5 top names
/// its one port's instances as the Versa-5G's port 0 (`rx0`, `tx0`,
/// `txq0`, `mdio0`), so the same waivers, with the same reasons, apply.
pub fn generate_ecpix5() -> String {
    let mut top = Ecpix5Top::default();
    top.connect_all();
    let v = postprocess_as(&generate_verilog(&top), TOP).replace(TOP, ECPIX5_TOP);
    waive_ecpix5(&v)
}

/// The ECPIX-5 top's own unused-on-purpose declarations: (module, name,
/// reason). The rest are the Versa-5G's (see [`generate_ecpix5`]).
const ECPIX5_UNUSED: &[(&str, &str, &str)] = &[
    (ECPIX5_TOP, "core$rx_pay_data", ECPIX5_NO_ECHO),
    (ECPIX5_TOP, "core$rx_pay_keep", ECPIX5_NO_ECHO),
    (ECPIX5_TOP, "core$rx_pay_last", ECPIX5_NO_ECHO),
    (ECPIX5_TOP, "core$rx_pay_valid", ECPIX5_NO_ECHO),
    (
        ECPIX5_TOP,
        "mdio0$speed",
        "PhyManager::basic polls the standard status register, which has no speed \
         (the output is 0); the LEDs show the link only",
    ),
    (ECPIX5_TOP, "cpu$bus_strb", ECPIX5_WHOLE_WORDS),
    (ECPIX5_TOP, "cpu$tr_valid", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_trap", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_cause", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_pc", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_insn", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_next_pc", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_rd", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_rd_wdata", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_mem_strb", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_mem_addr", ECPIX5_NO_TRACE),
    (ECPIX5_TOP, "cpu$tr_mem_wdata", ECPIX5_NO_TRACE),
    (
        "rnic_ecpix5$split",
        "beats$count",
        "RxSplit needs the FIFO's full and empty flags only",
    ),
    (
        "rnic_ecpix5$split",
        "dec$count",
        "RxSplit needs the FIFO's full and empty flags only",
    ),
];
const ECPIX5_WHOLE_WORDS: &str = "the firmware port's registers are 32 bits wide and the \
     firmware writes whole words, so CpuPort takes no byte lanes (as the co-simulation's cpu_fw.rs)";
const ECPIX5_NO_TRACE: &str = "the CPU's retirement trace is for the lock-step and \
     co-simulation testbenches; nothing on the board reads it";
const ECPIX5_NO_ECHO: &str = "the ECPIX-5 has no DIP switch to select the Versa-5G's \
     bring-up echo: rx_pay_ready is held high and the fast-path payload output, unused \
     while rx_ulp_en is on, has no consumer";

/// Puts `UNUSEDSIGNAL` waivers, each with its reason, around the
/// declarations of [`ECPIX5_UNUSED`].
fn waive_ecpix5(src: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut module = "";
    for line in src.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("module ") {
            module = rest.split('(').next().unwrap_or("").trim();
        }
        let decl = t
            .strip_prefix("wire ")
            .map(|d| d.trim_start())
            .map(|d| {
                if d.starts_with('[') {
                    d.split_once(' ').map_or(d, |x| x.1)
                } else {
                    d
                }
            })
            .and_then(|d| d.strip_suffix(';'));
        let hit = decl.and_then(|name| {
            ECPIX5_UNUSED
                .iter()
                .find(|(m, n, _)| *m == module && *n == name.trim())
        });
        if let Some((_, _, why)) = hit {
            let ind = &line[..line.len() - t.len()];
            out.push(format!("{ind}// Unused on purpose: {why}."));
            out.push(format!("{ind}/* verilator lint_off UNUSEDSIGNAL */"));
            out.push(line.to_string());
            out.push(format!("{ind}/* verilator lint_on UNUSEDSIGNAL */"));
        } else {
            out.push(line.to_string());
        }
    }
    let mut s = out.join("\n");
    if src.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Renames `top` (and the `top$` prefix of instance modules) to `name`.
fn rename_top(src: &str, name: &str) -> String {
    src.lines()
        .map(|l| {
            let l = l.replace("module top(", &format!("module {name}("));
            let l = l.replace("endmodule // top", &format!("endmodule // {name}"));
            l.replace("top$", &format!("{name}$"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// [`postprocess_as`] for the Versa-5G top.
pub fn postprocess(raw: &str) -> String {
    postprocess_as(raw, TOP)
}

/// rust-hdl's raw Verilog of a board top → the checked-in file, with the
/// top module named `name`.
pub fn postprocess_as(raw: &str, name: &str) -> String {
    let v = crate::gen::fix_widths(&rename_top(raw, name));
    let body = v.lines().map(str::trim_end).collect::<Vec<_>>().join("\n");
    let body = crate::gen::split::split_comb(&body);
    let body = crate::gen::waive(&body);
    let mut out = String::new();
    out.push_str(
        "// Generated by `cargo run -p rnic-hw --bin rnic-board-gen` from hw/src/board.\n",
    );
    out.push_str("// Do not edit: edit the rust-hdl source and regenerate.\n");
    out.push_str("// All modules are in this one file on purpose (one artefact for lint and\n");
    out.push_str("// Yosys), so the file/module name rule does not apply:\n");
    out.push_str("/* verilator lint_off DECLFILENAME */\n");
    out.push_str(&body);
    out.push('\n');
    out.push_str(SIM_MODELS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checked-in board Verilog (every top in [`TOPS`]) matches what
    /// the generator produces now. On failure: `cargo run -p rnic-hw --bin
    /// rnic-board-gen`.
    #[test]
    fn checked_in_verilog_is_current() {
        let root = env!("CARGO_MANIFEST_DIR");
        for (_, _, path, gen) in TOPS {
            let v = std::fs::read_to_string(format!("{root}/{path}")).unwrap_or_default();
            // The board top (the whole core inside) overflows the harness's
            // 2 MiB thread stack in a debug build without RUST_MIN_STACK:
            // generate on a thread with room, as gen.rs's rewrite check does.
            let now = std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(gen)
                .expect("spawn")
                .join()
                .expect("generated");
            assert!(
                v == now,
                "{path} is stale: run `cargo run -p rnic-hw --bin rnic-board-gen`"
            );
        }
    }
}
