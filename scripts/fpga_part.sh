# Sourced by scripts/bitstream.sh and scripts/flash.sh (from the repository
# root): the boards and their ECP5-5G parts, speed grade 8.
#
#   fpga_board TOOL BOARD  sets board, top, verilog, lpf, package, the
#                          board's default part (default_part) and how
#                          openFPGALoader reaches it (ofl_args), or says
#                          what is allowed and exits 2:
#     ecpix5   LambdaConcept ECPIX-5 (the default): rnic_ecpix5,
#              constraints/ecpix5.lpf, CABGA554, LFE5UM5G-85F (a 45F
#              variant exists too), openFPGALoader's board `ecpix5`
#     versa5g  Lattice ECP5 Versa-5G: rnic_versa5g, constraints/versa5g.lpf,
#              CABGA381, LFE5UM5G-45F (the board top does not fit it:
#              docs/fpga.md; 85f for a board carrying the 85F), FT2232 cable
#   fpga_part TOOL PART    (after fpga_board) sets pnr_dev (nextpnr-ecp5's
#                          device option) and device (the full part name
#                          report.json records and flash.sh checks), or
#                          says what is allowed and exits 2
fpga_board() {
    case "$2" in
        ecpix5)
            board=ecpix5; top=rnic_ecpix5; lpf=constraints/ecpix5.lpf
            package=CABGA554; pkg_code=BG554I; default_part=85f
            ofl_args=(-b ecpix5) ;;
        versa5g)
            board=versa5g; top=rnic_versa5g; lpf=constraints/versa5g.lpf
            package=CABGA381; pkg_code=BG381; default_part=45f
            ofl_args=(-c ft2232) ;;
        *) echo "$1: --board (FPGA_BOARD) must be ecpix5 or versa5g, not '$2'" >&2; exit 2 ;;
    esac
    verilog=hw/generated/$top.v
}
fpga_part() {
    case "$2" in
        45f) pnr_dev=--um5g-45k; device=LFE5UM5G-45F-8$pkg_code ;;
        85f) pnr_dev=--um5g-85k; device=LFE5UM5G-85F-8$pkg_code ;;
        *) echo "$1: --part (FPGA_PART) must be 45f or 85f, not '$2'" >&2; exit 2 ;;
    esac
}
