#!/usr/bin/env bash
# Loads the Versa-5G bitstream with openFPGALoader over the board's FT2232
# JTAG cable (`-c ft2232`; openFPGALoader has no "versa" board entry).
#
#   scripts/flash.sh             load into the FPGA's SRAM (lost at power-off)
#   scripts/flash.sh --flash     write the SPI configuration flash instead
#   scripts/flash.sh --bit FILE  another bitstream (same checks)
#   scripts/flash.sh --part 85f  a board carrying the LFE5UM5G-85F instead of
#                                the Versa-5G's LFE5UM5G-45F (FPGA_PART=85f too)
#
# Before touching the cable it refuses a missing bitstream, one older than
# any of its inputs (the board Verilog, the constraints, the flow scripts),
# and one whose report.json (written beside it by scripts/bitstream.sh) is
# missing or names another part than the board's: run `make bitstream`
# first. Without a board it says so and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

bit=target/fpga/rnic_versa5g.bit
part=${FPGA_PART:-45f}
mode=()
while [ $# -gt 0 ]; do
    case "$1" in
        --flash) mode=(--write-flash); shift ;;
        --bit) bit=$2; shift 2 ;;
        --part) part=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "flash: unknown argument $1" >&2; exit 2 ;;
    esac
done
# The board's part name, as report.json records it.
. scripts/fpga_part.sh
fpga_part flash "$part"
inputs=(hw/generated/rnic_versa5g.v constraints/versa5g.lpf scripts/bitstream.sh scripts/fpga_part.sh scripts/fpga_report.py)

if [ ! -f "$bit" ]; then
    echo "flash: no bitstream at $bit; run 'make bitstream' first" >&2
    exit 1
fi
for f in "${inputs[@]}"; do
    if [ -f "$f" ] && [ "$f" -nt "$bit" ]; then
        echo "flash: $bit is stale: $f is newer; run 'make bitstream' first" >&2
        exit 1
    fi
done
# The part the bitstream was placed and routed for, from its report: a
# bitstream for another part would be refused by the FPGA's IDCODE check at
# best, so it is refused here, before the cable.
report="$(dirname "$bit")/report.json"
if [ ! -f "$report" ]; then
    echo "flash: no report.json beside $bit, so its part is unknown; run 'make bitstream' first" >&2
    exit 1
fi
built_for=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("device", ""))' "$report" 2>/dev/null || true)
if [ "$built_for" != "$device" ]; then
    echo "flash: $bit was built for '${built_for:-an unknown part}', the board's part is $device (--part, FPGA_PART); run 'make bitstream' for it" >&2
    exit 1
fi
if ! command -v openFPGALoader >/dev/null 2>&1; then
    echo "flash: openFPGALoader is not installed; run scripts/deps.sh fpga (Debian package openfpgaloader)" >&2
    exit 1
fi

echo "flash: loading $bit over ft2232 ($([ ${#mode[@]} -gt 0 ] && echo 'SPI flash' || echo SRAM))"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
openFPGALoader -c ft2232 "${mode[@]}" "$bit" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
    if grep -qiE "unable to open ftdi device|device not found|no device found|JTAG init failed|cable not found" "$log"; then
        echo "flash: no board found: no FT2232 JTAG cable answered (is the Versa-5G connected by USB and powered?)" >&2
    else
        echo "flash: openFPGALoader failed (exit $rc)" >&2
    fi
    exit 1
fi
echo "flash: done"
