#!/usr/bin/env python3
"""What a block costs on the board: the Verilog with that block idle.

Copies a rust-hdl Verilog file with the bodies of the named modules replaced
by idle outputs (every output 0, outputs named `*_ready` all ones), so that
synthesis drops the block and every cell that only fed it. Synthesising the
copy (`scripts/bitstream.sh --synth-only`) and packing it (`nextpnr-ecp5
--pack-only`) measures what the block takes out of the board, which the
per-block attribution of `fpga_blocks.py` understates. An experiment's tool:
the copy does not work as a design.

    scripts/fpga_stub_blocks.py hw/generated/rnic_versa5g.v out.v \\
        'rnic_versa5g$core$rd_track' 'rnic_versa5g$core$rreq_q'

rust-hdl writes one module per instance, named by its instance path, with
one `input|output wire|reg [w] name;` line per port; that is what is read.
"""
import re
import sys

PORT = re.compile(r"\s*(input|output) (?:wire|reg)\s+(\[[^\]]+\])?\s*(\w+);")
HEAD = re.compile(r"module (\S+?)\(([^)]*)\);")


def stub(lines, names):
    out, found, i = [], set(), 0
    while i < len(lines):
        m = HEAD.match(lines[i])
        if not (m and m.group(1) in names):
            out.append(lines[i])
            i += 1
            continue
        found.add(m.group(1))
        out.append(lines[i])
        ports, j = [], i + 1
        while not lines[j].startswith("endmodule"):
            p = PORT.match(lines[j])
            if p:
                ports.append((p.group(1), p.group(2) or "", p.group(3)))
            j += 1
        # A port this reader did not recognise would leave the stub with a
        # port it never declares: refuse instead of writing broken Verilog.
        listed = [n.strip() for n in m.group(2).split(",") if n.strip()]
        if listed != [n for _, _, n in ports]:
            sys.exit(f"fpga_stub_blocks: {m.group(1)}: ports declared differ from its port list")
        out += [f"    {io} wire {w} {n};" for io, w, n in ports]
        out += [
            f"    assign {n} = {'~0' if n.endswith('ready') else '0'};"
            for io, _, n in ports
            if io == "output"
        ]
        out.append("endmodule")
        print(f"{m.group(1)}: {len(ports)} ports, {j - i} lines replaced", file=sys.stderr)
        i = j + 1
    missing = set(names) - found
    if missing:
        sys.exit(f"fpga_stub_blocks: no module {', '.join(sorted(missing))}")
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    src, dst, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(src) as f:
        lines = f.read().split("\n")
    with open(dst, "w") as f:
        f.write("\n".join(stub(lines, set(names))))


if __name__ == "__main__":
    main()
