#!/usr/bin/env python3
"""Turns nextpnr-ecp5's --report JSON (and Yosys' `stat`) into rnic's FPGA
report: a readable summary on stdout and a machine-readable JSON file.

Exit status: 0 when every constrained clock meets its constraint, 1 when one
misses it (or nothing was reported, or a frequency named by --require-mhz is
not the constraint of any reported clock), 2 on bad input.

report.json (schema "rnic-fpga-report/1"):
  top, board (ecpix5, versa5g: the board whose package and part were used;
  null when not given), device, tool times
  in seconds (synth_s, pnr_s, pack_s), lut_map,
  seed (nextpnr's placer seed; null for a synthesis-only report),
  utilisation {LUT4, FF, BRAM (DP16KD), DSP (MULT18X18D), IO, PLL, ...}
    each {"used": n, "available": m},
  clocks [{"name", "constraint_mhz", "fmax_mhz", "met", "role"}],
  required_mhz (the --require-mhz values), missing_mhz (those no clock has),
  timing_met (bool), critical_paths [{"from", "to", "delay_ns", "worst_nets"}],
  synth_cells (Yosys `stat` cell counts), bitstream (path, when written),
  firmware (the ELF in the ECPIX-5 instruction memory: path, octets, SHA-256).
With --pnr-failed (nextpnr stopped, e.g. the design does not fit): no
clocks; utilisation as nextpnr printed it in its log, fits (bool: every
resource within the part), pnr_error (nextpnr's first ERROR line),
timing_met false; exit status 1.
"""
import argparse
import json
import re
import sys

# nextpnr bel type -> the name used in the report, in print order.
RESOURCES = [
    ("TRELLIS_COMB", "LUT4"),
    ("TRELLIS_FF", "FF"),
    ("DP16KD", "BRAM"),
    ("MULT18X18D", "DSP"),
    ("TRELLIS_IO", "IO"),
    ("EHXPLLL", "PLL"),
    ("DCCA", "global clocks"),
    ("IOLOGIC", "IOLOGIC"),
    ("SIOLOGIC", "SIOLOGIC"),
    ("TRELLIS_RAMW", "LUTRAM write ports"),
]


def clock_name(raw):
    """`$glbnet$clk100$TRELLIS_IO_IN` -> `clk100`."""
    n = raw
    n = re.sub(r"^\$glbnet\$", "", n)
    n = re.sub(r"\$TRELLIS_IO_IN$", "", n)
    return n


def clock_role(c):
    """What a clock of the board top is, from its net name and constraint
    (the names nextpnr reports depend on Yosys' net naming)."""
    n = c["net"]
    if "rxc" in n:
        return "RGMII receive"
    if "clk100" in n:
        return "board oscillator"
    f = c["constraint_mhz"]
    if f is not None and abs(f - 62.5) < 0.01:
        return "core (PLL CLKOS2)"
    if f is not None and abs(f - 125.0) < 0.01:
        return "RGMII transmit (PLL)"
    return "other"


def parse_stat(path):
    """Cell counts from the last `stat` table in a Yosys log/tee file."""
    cells = {}
    try:
        text = open(path).read()
    except OSError:
        return cells
    # Yosys 0.70 prints "   <count> <area?> <cell>" lines; older versions print
    # "     <cell>   <count>". Accept both for the ECP5 primitives.
    for line in text.splitlines():
        m = re.match(r"^\s+(\d+)\s+(?:[\d.]+\s+)?(\$?[A-Za-z_][\w$]*)\s*$", line)
        if m:
            cells[m.group(2)] = int(m.group(1))
            continue
        m = re.match(r"^\s+(\$?[A-Za-z_][\w$]*)\s+(\d+)\s*$", line)
        if m:
            cells[m.group(1)] = int(m.group(2))
    return cells


def synth_summary(cells):
    lut = cells.get("LUT4", 0)
    ccu = cells.get("CCU2C", 0)
    ff = sum(v for k, v in cells.items() if k.startswith("TRELLIS_FF"))
    return {
        "LUT4": lut,
        "CCU2C (2 LUT4 each)": ccu,
        "LUT4 incl. carry": lut + 2 * ccu,
        "FF": ff,
        "BRAM": cells.get("DP16KD", 0),
        "LUTRAM (TRELLIS_DPR16X4)": cells.get("TRELLIS_DPR16X4", 0),
        "DSP": cells.get("MULT18X18D", 0),
    }


def parse_pnr_log_util(path):
    """`Info: \t  TRELLIS_COMB:   57425/  43848   130%` lines of a nextpnr
    log (its device utilisation, printed before placement) and the first
    ERROR line."""
    util, error = {}, None
    try:
        text = open(path).read()
    except OSError:
        return util, error
    names = dict(RESOURCES)
    for line in text.splitlines():
        m = re.match(r"^Info:\s+([A-Z][A-Z0-9_]*):\s+(\d+)/\s*(\d+)\s+\d+%", line)
        if m:
            bel, used, avail = m.group(1), int(m.group(2)), int(m.group(3))
            if used or bel in names:
                util[names.get(bel, bel)] = {"used": used, "available": avail}
        if error is None and line.startswith("ERROR:"):
            error = line[len("ERROR:"):].strip()
    return util, error


def worst_nets(path, n=3):
    nets = [s for s in path.get("path", []) if s.get("type") == "routing"]
    nets.sort(key=lambda s: -s.get("delay", 0))
    return [s.get("net", "?") for s in nets[:n]]


def print_util(util, over=()):
    """One line per resource: used / available (per cent), `OVER` for those in `over`."""
    for name, v in util.items():
        avail = v.get("available") or 0
        pct = 100.0 * v["used"] / avail if avail else 0.0
        flag = "  OVER" if name in over else ""
        print(f"    {name:<20} {v['used']:>7} / {avail:<7} ({pct:5.1f} %){flag}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top")
    ap.add_argument("--board", help="the board the bitstream is for (ecpix5, versa5g)")
    ap.add_argument("--device", default="LFE5UM5G-45F-8BG381",
                    help="the part placed and routed for (scripts/bitstream.sh --part)")
    ap.add_argument("--pnr-report")
    ap.add_argument("--pnr-log")
    ap.add_argument("--stat")
    ap.add_argument("--out")
    ap.add_argument("--synth-seconds", type=float)
    ap.add_argument("--pnr-seconds", type=float)
    ap.add_argument("--pack-seconds", type=float)
    ap.add_argument("--synth-only", action="store_true")
    ap.add_argument("--pnr-failed", action="store_true",
                    help="nextpnr failed: report its log's utilisation and error")
    ap.add_argument("--lut-map", help="the LUT mapper synthesis used (abc, abc9)")
    ap.add_argument("--seed", type=int,
                    help="nextpnr's placer seed (recorded: routing is deterministic per netlist and seed)")
    ap.add_argument("--amend", help="add pack time / bitstream to an existing report")
    ap.add_argument("--bitstream")
    ap.add_argument("--firmware", help="the firmware ELF patched into the bitstream (scripts/fw-patch.sh)")
    ap.add_argument(
        "--require-mhz",
        type=float,
        action="append",
        default=[],
        help="a clock constrained to this frequency must be reported (repeatable)",
    )
    a = ap.parse_args()

    if a.amend:
        r = json.load(open(a.amend))
        if a.pack_seconds is not None:
            r["times_s"]["pack"] = a.pack_seconds
        if a.bitstream:
            r["bitstream"] = a.bitstream
        if a.firmware:
            import hashlib
            d = open(a.firmware, "rb").read()
            r["firmware"] = {"elf": a.firmware, "octets": len(d),
                             "sha256": hashlib.sha256(d).hexdigest()}
        json.dump(r, open(a.amend, "w"), indent=2)
        return 0

    report = {
        "schema": "rnic-fpga-report/1",
        "top": a.top,
        "board": a.board,
        "device": a.device,
        "times_s": {"synth": a.synth_seconds, "pnr": a.pnr_seconds, "pack": None},
        "lut_map": a.lut_map,
        "seed": None if a.synth_only else a.seed,
    }
    cells = parse_stat(a.stat) if a.stat else {}
    report["synth_cells"] = synth_summary(cells)

    if a.synth_only:
        s = report["synth_cells"]
        print(f"synthesis of {a.top} (pre-place-and-route cell counts):")
        for k, v in s.items():
            print(f"  {k:<26} {v:>7}")
        if a.out:
            json.dump(report, open(a.out, "w"), indent=2)
        return 0

    if a.pnr_failed:
        util, error = parse_pnr_log_util(a.pnr_log)
        over = [n for n, v in util.items() if v["used"] > v["available"]]
        report.update(
            utilisation=util,
            fits=bool(util) and not over,
            pnr_error=error,
            clocks=[],
            timing_met=False,
        )
        print(f"FPGA report for {a.top} on {report['device']} (seed {a.seed}): place and route FAILED")
        print_util(util, over)
        if over:
            print(f"  does NOT fit the part: {', '.join(over)} over", file=sys.stderr)
        print(f"  nextpnr: {error}", file=sys.stderr)
        print("  timing: NOT MET (nothing placed)")
        if a.out:
            json.dump(report, open(a.out, "w"), indent=2)
        return 1

    try:
        pnr = json.load(open(a.pnr_report))
    except (OSError, ValueError) as e:
        print(f"fpga_report: cannot read {a.pnr_report}: {e}", file=sys.stderr)
        return 2

    util = {}
    raw_util = pnr.get("utilization", {})
    for bel, name in RESOURCES:
        if bel in raw_util:
            util[name] = raw_util[bel]
    for bel, v in raw_util.items():
        if v.get("used") and bel not in dict(RESOURCES):
            util[bel] = v
    report["utilisation"] = util

    clocks = []
    for raw, v in sorted(pnr.get("fmax", {}).items()):
        c = {
            "name": clock_name(raw),
            "net": raw,
            "constraint_mhz": v.get("constraint"),
            "fmax_mhz": round(v.get("achieved", 0.0), 2),
        }
        c["met"] = c["constraint_mhz"] is None or c["fmax_mhz"] >= c["constraint_mhz"]
        clocks.append(c)
    for c in clocks:
        c["role"] = clock_role(c)
    report["clocks"] = clocks
    missing = [
        f
        for f in a.require_mhz
        if not any(
            c["constraint_mhz"] is not None and abs(c["constraint_mhz"] - f) < 0.01
            for c in clocks
        )
    ]
    report["required_mhz"] = a.require_mhz
    report["missing_mhz"] = missing
    report["timing_met"] = (
        bool(clocks) and all(c["met"] for c in clocks) and not missing
    )

    paths = []
    for p in pnr.get("critical_paths", []):
        delay = sum(s.get("delay", 0.0) for s in p.get("path", []))
        steps = p.get("path", [])
        paths.append(
            {
                "from": clock_name(p.get("from", "").replace("posedge ", "").replace("negedge ", "")),
                "to": clock_name(p.get("to", "").replace("posedge ", "").replace("negedge ", "")),
                "delay_ns": round(delay, 3),
                "start_cell": steps[0]["from"]["cell"] if steps else None,
                "end_cell": steps[-1]["to"]["cell"] if steps else None,
                "worst_nets": worst_nets(p),
            }
        )
    report["critical_paths"] = paths

    print(f"FPGA report for {a.top} on {report['device']} (seed {a.seed})")
    t = report["times_s"]
    print(f"  times: synthesis {t['synth']} s, place and route {t['pnr']} s")
    print("  utilisation:")
    print_util(util)
    print("  clocks:")
    for c in clocks:
        verdict = "met" if c["met"] else "FAILED"
        print(
            f"    {c['name']:<40} {c['role']:<22} Fmax {c['fmax_mhz']:8.2f} MHz  "
            f"(required {c['constraint_mhz']} MHz)  {verdict}"
        )
    for f in missing:
        print(f"  no clock is constrained to {f} MHz: FAILED", file=sys.stderr)
    for p in paths:
        if p["from"] == p["to"]:
            print(
                f"  critical path in {p['from']}: {p['delay_ns']} ns, "
                f"{p['start_cell']} -> {p['end_cell']}"
            )
    if not clocks:
        print("  no clock was reported: nothing is timed", file=sys.stderr)
    print(f"  timing: {'MET' if report['timing_met'] else 'NOT MET'}")

    if a.out:
        json.dump(report, open(a.out, "w"), indent=2)
    return 0 if report["timing_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
