#!/usr/bin/env bash
# Loads a board's bitstream with openFPGALoader: the ECPIX-5 (the default)
# through its onboard FT2232H (openFPGALoader's board `-b ecpix5`), the
# Versa-5G over its FT2232 JTAG cable (`-c ft2232`; openFPGALoader has no
# "versa" board entry).
#
#   scripts/flash.sh                  load the ECPIX-5 into the FPGA's SRAM (lost at power-off)
#   scripts/flash.sh --flash          write the SPI configuration flash instead
#   scripts/flash.sh --board versa5g  the Versa-5G (FPGA_BOARD=versa5g too)
#   scripts/flash.sh --bit FILE       another bitstream (same checks)
#   scripts/flash.sh --part 45f|85f   the board's part if not its default (85f on
#                                     the ECPIX-5, 45f on the Versa-5G; FPGA_PART too)
#
# Before touching the cable it refuses a missing bitstream, one older than
# any of its inputs (the board Verilog, the constraints, the flow scripts),
# and one whose report.json (written beside it by scripts/bitstream.sh) is
# missing or names another board or part than the one flashed: run `make
# bitstream` first. Without a board it says so and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

board_arg=${FPGA_BOARD:-ecpix5}
bit=
part=${FPGA_PART:-}
mode=()
while [ $# -gt 0 ]; do
    case "$1" in
        --flash) mode=(--write-flash); shift ;;
        --board) board_arg=$2; shift 2 ;;
        --bit) bit=$2; shift 2 ;;
        --part) part=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "flash: unknown argument $1" >&2; exit 2 ;;
    esac
done
# The board and its part name, as report.json records them.
. scripts/fpga_part.sh
fpga_board flash "$board_arg"
fpga_part flash "${part:-$default_part}"
bit=${bit:-target/fpga/$top.bit}
inputs=("$verilog" "$lpf" scripts/bitstream.sh scripts/fpga_part.sh scripts/fpga_report.py)

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
# The ECPIX-5 bitstream carries the firmware image (scripts/fw-patch.sh):
# a firmware source newer than it means another image.
if [ "$top" = rnic_ecpix5 ]; then
    newer=$(find firmware/src firmware/rnic-fw.x firmware/build.rs firmware/Cargo.toml -newer "$bit" -print -quit 2>/dev/null)
    if [ -n "$newer" ]; then
        echo "flash: $bit carries an older firmware: $newer is newer; run 'make bitstream-fw' first" >&2
        exit 1
    fi
fi
# The board and part the bitstream was placed and routed for, from its
# report: a bitstream for another part would be refused by the FPGA's
# IDCODE check at best, one for another board (same part, other pins) not
# at all, so both are refused here, before the cable.
report="$(dirname "$bit")/report.json"
if [ ! -f "$report" ]; then
    echo "flash: no report.json beside $bit, so its board and part are unknown; run 'make bitstream' first" >&2
    exit 1
fi
field() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or "")' "$report" "$1" 2>/dev/null || true
}
built_board=$(field board)
if [ "$built_board" != "$board" ]; then
    echo "flash: $bit was built for board '${built_board:-unknown}', not $board (--board, FPGA_BOARD); run 'make bitstream' for it" >&2
    exit 1
fi
built_for=$(field device)
if [ "$built_for" != "$device" ]; then
    echo "flash: $bit was built for '${built_for:-an unknown part}', the board's part is $device (--part, FPGA_PART); run 'make bitstream' for it" >&2
    exit 1
fi
if ! command -v openFPGALoader >/dev/null 2>&1; then
    echo "flash: openFPGALoader is not installed; run scripts/deps.sh fpga (Debian package openfpgaloader)" >&2
    exit 1
fi

echo "flash: loading $bit onto the $board with openFPGALoader ${ofl_args[*]} ($([ ${#mode[@]} -gt 0 ] && echo 'SPI flash' || echo SRAM))"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
openFPGALoader "${ofl_args[@]}" "${mode[@]}" "$bit" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
    if grep -qiE "unable to open ftdi device|device not found|no device found|JTAG init failed|cable not found" "$log"; then
        echo "flash: no board found: no FT2232 JTAG interface answered (is the $board connected by USB and powered?)" >&2
    else
        echo "flash: openFPGALoader failed (exit $rc)" >&2
    fi
    exit 1
fi
echo "flash: done"
