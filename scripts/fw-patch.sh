#!/usr/bin/env bash
# The firmware image into the ECPIX-5 bitstream's instruction memory,
# without synthesis or place and route: `ecpbram` replaces the random
# pattern the board Verilog's instruction memory was synthesised with
# (hw/src/board/ecpix5_top.rs `IMEM_SEED_HEX`, written by
# scripts/bitstream.sh) with the image, in the placed design, then
# `ecppack` writes the bitstream.
#
#   scripts/fw-patch.sh [--elf FILE] [--out-dir target/fpga]
#
# Without --elf it builds the image `make firmware-elf` builds. Needs the
# placed design `make bitstream` leaves (<out-dir>/rnic_ecpix5.config, timing
# met) and the pattern. Checks that every 512-word slice of the pattern was
# found and replaced (a second ecpbram pass over the result finds none), and
# records the image (path, octets, SHA-256) in <out-dir>/report.json.
# `make bitstream` runs this as its last step; `make bitstream-fw` alone.
set -euo pipefail

cd "$(dirname "$0")/.."
venv=.venv/bin
out_dir=target/fpga
elf=
while [ $# -gt 0 ]; do
    case "$1" in
        --elf) elf=$2; shift 2 ;;
        --out-dir) out_dir=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "fw-patch: unknown argument $1" >&2; exit 2 ;;
    esac
done
top=rnic_ecpix5
seed_hex=target/fpga/imem-seed.hex
cfg="$out_dir/$top.config"
bit="$out_dir/$top.bit"
report="$out_dir/report.json"
for f in "$cfg" "$seed_hex" "$report"; do
    [ -f "$f" ] || { echo "fw-patch: $f is missing; run 'make bitstream' first" >&2; exit 1; }
done
if ! python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('top')=='$top' and r.get('timing_met') else 1)" "$report"; then
    echo "fw-patch: $report is not a timing-met build of $top; run 'make bitstream' first" >&2
    exit 1
fi
if [ "$seed_hex" -nt "$cfg" ]; then
    echo "fw-patch: $seed_hex is newer than $cfg (another pattern); run 'make bitstream' first" >&2
    exit 1
fi
for t in python3 yowasp-ecppack; do
    [ -x "$venv/$t" ] || { echo "fw-patch: $venv/$t is missing; run make deps-fpga" >&2; exit 1; }
done

if [ -z "$elf" ]; then
    cargo build -q -p rnic-fw --target riscv32im-unknown-none-elf --release
    elf=target/riscv32im-unknown-none-elf/release/rnic-fw
fi
[ -f "$elf" ] || { echo "fw-patch: no ELF at $elf" >&2; exit 1; }
# The paths handed to the YoWASP tools are relative to the repository root
# (their sandbox sees the working tree only).
fw_hex="$out_dir/imem-fw.hex"
cargo run -q -p rnic-fw --features image --bin rnic-fw-hex -- "$elf" "$fw_hex"

# ecpbram with the Trellis database mounted (scripts/ecpbram.py says why).
ecpbram() {
    "$venv/python3" scripts/ecpbram.py "$@" || { echo "fw-patch: ecpbram $* failed" >&2; exit 1; }
}
zeros="$out_dir/imem-zero.hex"
python3 -c "import sys; open(sys.argv[1],'w').write('00000000\n' * 32768)" "$zeros"
# Whether a slice of the pattern is in a config: replacing the pattern by
# itself and by zeros gives the same text only when there is none (ecpbram
# rewrites the whole file, so the input itself is not comparable).
has_pattern() {
    ecpbram -i "$1" -o "$out_dir/same.config" -f "$seed_hex" -t "$seed_hex"
    ecpbram -i "$1" -o "$out_dir/zeroed.config" -f "$seed_hex" -t "$zeros"
    local rc=0
    cmp -s "$out_dir/same.config" "$out_dir/zeroed.config" || rc=1
    rm -f "$out_dir/same.config" "$out_dir/zeroed.config"
    [ "$rc" = 1 ]
}
if ! has_pattern "$cfg"; then
    echo "fw-patch: the pattern is not in $cfg (instruction memory not found); nothing replaced" >&2
    exit 1
fi
patched="$out_dir/$top-fw.config"
ecpbram -i "$cfg" -o "$patched" -f "$seed_hex" -t "$fw_hex"
if has_pattern "$patched"; then
    echo "fw-patch: part of the pattern is still in $patched after patching" >&2
    rm -f "$patched"
    exit 1
fi
rm -f "$zeros"

"$venv/yowasp-ecppack" --compress "$patched" "$bit.tmp"
mv "$bit.tmp" "$bit"
python3 scripts/fpga_report.py --amend "$report" --bitstream "$bit" --firmware "$elf"
echo "fw-patch: wrote $bit with the firmware $elf ($(sha256sum "$elf" | cut -c1-16)…)"
