# Sourced by scripts/bitstream.sh and scripts/flash.sh (from the repository
# root): the ECP5-5G parts in the Versa-5G's CABGA381 package, speed grade 8.
#
#   fpga_part TOOL PART   sets pnr_dev (nextpnr-ecp5's device option) and
#                         device (the full part name report.json records and
#                         flash.sh checks), or says what is allowed and exits 2
fpga_part() {
    case "$2" in
        45f) pnr_dev=--um5g-45k; device=LFE5UM5G-45F-8BG381 ;;
        85f) pnr_dev=--um5g-85k; device=LFE5UM5G-85F-8BG381 ;;
        *) echo "$1: --part (FPGA_PART) must be 45f or 85f, not '$2'" >&2; exit 2 ;;
    esac
}
