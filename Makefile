# rnic — the two commands are `make sim` and `make test`; the rest are parts of them
# or separate jobs (bench, soak, bitstream, flash). Every target installs what it
# needs first (scripts/deps.sh, quick when all is there).

CARGO      ?= cargo
RV_TARGET  := riscv32im-unknown-none-elf
RTL        := hw/generated/rnic_core.v
SIM_ARGS   ?=

.PHONY: all sim test deps deps-fpga fmt-check clippy unit tshark-check firmware-elf lint rtl bench soak interop bitstream bitstream-fw flash fw-load fw-log debug-sim clean

all: test

## The main job: a two-node RDMA session over the RTL (two Verilated cores, their
## firmware and drivers) with a report (also as JSON in target/sim/).
## `make sim SIM_ARGS="--max-size 65536"` for options (`--fw cpu`: the firmware
## image on a Verilated RISC-V core beside each node); `rnic-sim model` runs the
## reference model instead.
sim: deps
	$(CARGO) run --release -p rnic-sim -- run $(SIM_ARGS)

## Every test, lint and format check; what CI runs.
test: deps fmt-check clippy lint unit tshark-check firmware-elf
	@echo "make test: all checks passed"

deps:
	@scripts/deps.sh

deps-fpga:
	@scripts/deps.sh fpga

fmt-check:
	$(CARGO) fmt --all --check

clippy:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

## Every test binary's tests through cargo-nextest: each test in its own
## process, tests of different binaries side by side (a binary's one long
## co-simulation no longer leaves a core idle; 612 s against libtest's 772 s
## here), with each test's time; then the doc tests, which nextest does not run,
## of the crates that can have them. rnic-hw has none (`doctest = false`), and
## rnic-sim, rnic-probe and verilator-board have no code block in their docs at
## all: asking them would build each as a plain library with its dependencies
## (probe-rs, the RTL crate) only to find nothing, 1.5 to 4 minutes. The grep
## fails the run if one of them gains a code block, so none is skipped unseen.
## Test threads get 64 MiB of stack: tests that elaborate the whole rust-hdl core
## (and the board top holding another) overflow libtest's 2 MiB in debug builds.
DOC_TEST_SKIPPED_SRC = sim/src probe/src sim/verilator-board/src
unit: deps
	RUST_MIN_STACK=67108864 $(CARGO) nextest run --workspace --no-fail-fast
	@if grep -rqE '^\s*//[/!]\s*```' $(DOC_TEST_SKIPPED_SRC); then \
	  echo "unit: a doc code block in $(DOC_TEST_SKIPPED_SRC): give its crate to the doc-test step"; exit 1; fi
	$(CARGO) test --workspace --doc --exclude rnic-hw --exclude rnic-sim --exclude rnic-probe --exclude verilator-board

## tshark's iWARP dissectors decode a session rnic-wire wrote (shown, not hidden:
## each test prints what tshark reported; without tshark it prints "skipped", or
## fails when CI is set, as .ci/run sets it).
tshark-check: deps
	$(CARGO) test -q -p rnic-wire --test tshark -- --nocapture --test-threads 1

## The firmware as a bare-metal RISC-V ELF, and its size.
firmware-elf: deps
	$(CARGO) build -p rnic-fw --target $(RV_TARGET) --release
	@scripts/elf-size.sh $${CARGO_TARGET_DIR:-target}/$(RV_TARGET)/release

## Verilator -Wall lint of the generated Verilog (its waivers, each with its reason, are inline in the file).
lint: deps
	@if [ -f $(RTL) ]; then \
	  verilator --lint-only -Wall $(RTL) --top-module rnic_core && echo "lint: $(RTL) clean under verilator -Wall"; \
	else echo "lint: $(RTL) not found (make rtl writes it)"; fi

## Regenerate the checked-in Verilog from the rust-hdl sources.
rtl:
	$(CARGO) run --release -p rnic-hw --bin rnic-hw-gen

## A live Linux kernel as the peer: a QEMU guest with Soft-iWARP (siw) and
## rdma-core, built into target/interop/linux-peer/ if needed
## (scripts/linux-peer/build.sh), against one co-simulated node (`rnic-sim
## rping`) on the node's external port. rping at 64 B, 4 KiB and 65535 B, both
## directions, siw's defaults and CRC + RTR; one table, a pcap and both sides'
## logs per case in target/interop/ (scripts/interop.sh; CASES=regex picks cases).
interop: deps
	$(CARGO) build --release -p rnic-sim
	@scripts/interop.sh

## FPGA bitstream (Yosys → nextpnr-ecp5 → ecppack, YoWASP tools in .venv) for the
## LambdaConcept ECPIX-5 (LFE5UM5G-85F, CABGA554) by default; FPGA_BOARD=versa5g builds
## the ECP5 Versa-5G instead (its LFE5UM5G-45F, which the top does not fit yet; with
## FPGA_PART=85f the LFE5UM5G-85F in the same package). FPGA_PART=45f|85f picks the
## board's part; FPGA_SEED=N sets nextpnr's placer seed (default 1). report.json
## records the board, the part and the seed.
bitstream: deps-fpga
	@scripts/bitstream.sh

## The current firmware ELF (or FW_ELF=path) into the last ECPIX-5 bitstream's
## instruction memory, without synthesis or place and route (ecpbram; docs/fpga.md).
bitstream-fw: deps-fpga
	@scripts/fw-patch.sh $(if $(FW_ELF),--elf $(FW_ELF))

## Load it with openFPGALoader (`-b ecpix5` for the ECPIX-5's onboard FT2232H, the
## FT2232 cable for the Versa-5G; FPGA_BOARD and FPGA_PART as above); refuses a
## missing or stale bitstream, or one built for another board or part.
flash: deps-fpga
	@scripts/flash.sh

## The firmware on the running board's core through probe-rs and a JTAG adapter
## (FT2232H/FT232H) on PMOD0, without rebuilding the bitstream: fw-load loads the
## ELF (FW_ELF=path, default the one firmware-elf builds) and runs it; fw-log prints
## its defmt log (RTT), decoded. Both name what is missing when no probe answers.
fw-load: firmware-elf
	$(CARGO) run --release -q -p rnic-probe -- load $(or $(FW_ELF),$${CARGO_TARGET_DIR:-target}/$(RV_TARGET)/release/rnic-fw)

fw-log: firmware-elf
	$(CARGO) run --release -q -p rnic-probe -- log $(or $(FW_ELF),$${CARGO_TARGET_DIR:-target}/$(RV_TARGET)/release/rnic-fw)

## probe-rs loads the firmware ELF into a co-simulated node's core through its JTAG
## pins, breaks, steps, reads its RTT log, and the node then connects and moves data
## (3 minutes, most of it loading; `make test` runs the same session without the load).
debug-sim: deps
	$(CARGO) test --release -p rnic-probe --test cosim_debug -- --ignored --nocapture

## Benchmarks (not tests): simulator speed, DMA-server overhead, protocol
## efficiency of the reference model, message rate of 64-octet Writes and
## Sends over the RTL (msg-rate.txt and .json, also at the board's timing),
## where a 64-octet Write's latency goes (latency.txt and .json), the `make
## sim` session at the board's 62.5 MHz behind 1 Gb/s (board.txt and .json);
## results in target/bench/. The speed of
## the `make sim` scenario in clocks per CPU-second is in cosim-speed.json;
## `BENCH_BASELINE=<an older rnic-sim binary> make bench` runs that binary
## on the same scenario too and prints the ratio (BENCH_MAX_SIZE shortens it).
bench: deps
	@mkdir -p target/bench
	$(CARGO) test --release -p rnic-sim --test bench -- --ignored --nocapture --test-threads 1 2>&1 | tee target/bench/sim-speed.txt
	$(CARGO) run --release -p rnic-sim -- model --ops 4 --pcap target/bench/model-1500.pcap | tee target/bench/model-efficiency-mtu1500.txt
	$(CARGO) run --release -p rnic-sim -- model --ops 4 --mtu 9000 --pcap target/bench/model-9000.pcap | tee target/bench/model-efficiency-mtu9000.txt
	$(CARGO) test --release -p rnic-sim --test driver_op_counts -- --nocapture 2>&1 | tee target/bench/driver-op-counts.txt
	$(CARGO) test --release -p rnic-sim --test msg_rate -- --ignored --nocapture --test-threads 1 2>&1 | tee target/bench/msg-rate.txt
	$(CARGO) test --release -p rnic-sim --test latency -- --ignored --nocapture 2>&1 | tee target/bench/latency.txt
	$(CARGO) run --release -p rnic-sim -- run --timing board --quiet --json target/bench/board.json --pcap target/bench/board.pcap | tee target/bench/board.txt
	@echo "bench: results in target/bench/"

## Long runs over a faulty link: the whole default sweep (1 B .. 1 MiB) at
## several seeds and fault mixes; each must stay byte-exact (exit 0).
SOAK_SEEDS ?= 1 2 3 4
soak: deps
	@mkdir -p target/soak
	$(CARGO) build --release -p rnic-sim
	@set -e; for s in $(SOAK_SEEDS); do \
	  for f in "--loss 0.01" "--loss 0.05" "--corrupt 0.02 --duplicate 0.02 --reorder 0.02" "--loss 0.02 --corrupt 0.01 --duplicate 0.01 --reorder 0.01"; do \
	    echo "soak: seed $$s $$f"; \
	    target/release/rnic-sim run --quiet --seed $$s $$f --pcap target/soak/last.pcap --json target/soak/seed$$s.json \
	      | grep -E "link faults|goodput over|disconnect:" | tee -a target/soak/soak.txt; \
	  done; \
	done
	@echo "soak: results in target/soak/soak.txt"

## The RISC-V core (hw/src/cpu/) in lock step with the rrs-lib reference on long
## random programs: CPU_SOAK_SEEDS seeds of CPU_SOAK_EVENTS retired instructions
## and traps each; then the firmware image for CPU_FW_EVENTS instructions
## (docs/cpu.md).
CPU_SOAK_SEEDS  ?= 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20
CPU_SOAK_EVENTS ?= 500000
CPU_FW_EVENTS   ?= 1000000
cpu-soak: deps
	CPU_SOAK_SEEDS="$(CPU_SOAK_SEEDS)" CPU_SOAK_EVENTS=$(CPU_SOAK_EVENTS) \
	  $(CARGO) test -p rnic-hw --lib cpu::lockstep::tests::lockstep_soak -- --ignored --nocapture
	CPU_FW_EVENTS=$(CPU_FW_EVENTS) \
	  $(CARGO) test -p rnic-hw --lib cpu::firmware::tests::firmware_soak -- --ignored --nocapture

## Size and Fmax of the RISC-V core alone on the LFE5UM5G-85F (docs/cpu.md).
cpu-size: deps-fpga
	@scripts/cpu-size.sh

clean:
	$(CARGO) clean
