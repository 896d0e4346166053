#!/usr/bin/env bash
# Loads the Versa-5G bitstream with openFPGALoader over the board's FT2232
# JTAG cable (`-c ft2232`; openFPGALoader has no "versa" board entry).
#
#   scripts/flash.sh             load into the FPGA's SRAM (lost at power-off)
#   scripts/flash.sh --flash     write the SPI configuration flash instead
#   scripts/flash.sh --bit FILE  another bitstream (same checks)
#
# Before touching the cable it refuses a missing bitstream, and one older
# than any of its inputs (the board Verilog, the constraints, the flow
# scripts): run `make bitstream` first. Without a board it says so and
# exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

bit=target/fpga/rnic_versa5g.bit
mode=()
while [ $# -gt 0 ]; do
    case "$1" in
        --flash) mode=(--write-flash); shift ;;
        --bit) bit=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "flash: unknown argument $1" >&2; exit 2 ;;
    esac
done
inputs=(hw/generated/rnic_versa5g.v constraints/versa5g.lpf scripts/bitstream.sh scripts/fpga_report.py)

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
