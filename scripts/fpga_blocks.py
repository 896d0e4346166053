#!/usr/bin/env python3
"""Where a synthesised design's cells go, by block.

Reads a Yosys JSON netlist (scripts/bitstream.sh writes
target/fpga/<top>.json; synth_ecp5 flattens and `autoname`s it, so a cell's
name starts with the instance path of the block it came from, e.g.
`core.rx_send.sp.state_TRELLIS_FF_Q`) and prints the ECP5 cells per block at
the chosen depth of the instance path, largest first:

    scripts/fpga_blocks.py target/fpga/rnic_versa5g.json --depth 2
    scripts/fpga_blocks.py target/fpga/rnic_versa5g.json --depth 3 --under core.rx_send

COMB is nextpnr's TRELLIS_COMB estimate: LUT4 + 2 per CCU2C + 8 per
TRELLIS_DPR16X4 (a 16x4 LUTRAM packs into two RAM-mode slices and blocks
the third slice's LUTs for its write port: measured about 8 on this
design, docs/fpga.md). It is an estimate for ranking blocks; nextpnr's
packer report is the figure that counts.
"""
import argparse
import json
import sys
from collections import defaultdict

KINDS = ["LUT4", "CCU2C", "PFUMX", "L6MUX21", "TRELLIS_DPR16X4", "DP16KD", "TRELLIS_FF", "MULT18X18D"]
SHORT = {"TRELLIS_DPR16X4": "DPR16X4", "TRELLIS_FF": "FF", "MULT18X18D": "MULT18"}


def path_of(name, cell):
    h = cell.get("attributes", {}).get("hdlname")
    if h:
        parts = h.split(" ")[:-1]
    else:
        n = name.lstrip("\\")
        parts = n.split(".")[:-1] if "." in n else []
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json")
    ap.add_argument("--depth", type=int, default=2, help="instance-path levels to group by")
    ap.add_argument("--under", default="", help="only blocks under this dotted instance path")
    ap.add_argument("--top", default=None, help="module to read (default: the one with attribute top)")
    ap.add_argument("--min-comb", type=int, default=0, help="fold smaller blocks into one row")
    a = ap.parse_args()
    d = json.load(open(a.json))
    mods = d["modules"]
    top = a.top or next((m for m, v in mods.items() if v.get("attributes", {}).get("top")), None)
    if top is None:
        top = max(mods, key=lambda m: len(mods[m].get("cells", {})))
    under = [p for p in a.under.split(".") if p]
    rows = defaultdict(lambda: defaultdict(int))
    for name, cell in mods[top]["cells"].items():
        t = cell["type"]
        if t not in KINDS:
            continue
        p = path_of(name, cell)
        if p[: len(under)] != under:
            continue
        key = ".".join(p[: len(under) + a.depth]) or "(top)"
        rows[key][t] += 1
    total = defaultdict(int)
    for r in rows.values():
        for k, v in r.items():
            total[k] += v

    def comb(r):
        return r["LUT4"] + 2 * r["CCU2C"] + 8 * r["TRELLIS_DPR16X4"]

    out = sorted(rows.items(), key=lambda kv: -comb(kv[1]))
    small = defaultdict(int)
    hdr = f"{'block':40s} {'COMB':>7s} " + " ".join(f"{SHORT.get(k, k):>8s}" for k in KINDS)
    print(hdr)
    for key, r in out:
        if comb(r) < a.min_comb:
            for k, v in r.items():
                small[k] += v
            continue
        print(f"{key:40s} {comb(r):7d} " + " ".join(f"{r[k]:8d}" for k in KINDS))
    if small:
        print(f"{'(smaller blocks)':40s} {comb(small):7d} " + " ".join(f"{small[k]:8d}" for k in KINDS))
    print(f"{'total':40s} {comb(total):7d} " + " ".join(f"{total[k]:8d}" for k in KINDS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
