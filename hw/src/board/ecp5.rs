//! ECP5 primitives as small custom-Verilog blocks (rust-hdl `Wrapper`s), each
//! with a Rust model for rust-hdl's simulator:
//! * [`IddrBus`]: `N` × `IDDRX1F` (input DDR register);
//! * [`OddrBus`]: `N` × `ODDRX1F` (output DDR register);
//! * [`Pll`]: one `EHXPLLL`, 100 MHz in, 125 MHz at 0° and at 90° and
//!   62.5 MHz at 0° out.
//!
//! Yosys maps the primitives to the ECP5 IO logic and PLL. For Verilator
//! (lint and simulation) [`SIM_MODELS`] gives behavioural models of the
//! same primitives, compiled only under `ifdef VERILATOR`, so Yosys never
//! sees them.

use rust_hdl::prelude::*;

/// `N` input DDR registers on one clock. Model (and assumed timing of
/// `IDDRX1F`): after the rising edge of `sclk` at time t+T, `q0` holds `d` as
/// sampled at the rising edge at t and `q1` as sampled at the falling edge
/// at t+T/2 — so (`q0`, `q1`) are the two halves of one RGMII byte.
#[derive(LogicBlock, Default)]
pub struct IddrBus<const N: usize> {
    pub sclk: Signal<In, Clock>,
    pub d: Signal<In, Bits<N>>,
    pub q0: Signal<Out, Bits<N>>,
    pub q1: Signal<Out, Bits<N>>,
    rise: Signal<Local, Bits<N>>,
    fall: Signal<Local, Bits<N>>,
}

impl<const N: usize> Logic for IddrBus<N> {
    fn update(&mut self) {
        if self.sclk.pos_edge() {
            self.q0.next = self.rise.val();
            self.q1.next = self.fall.val();
            self.rise.next = self.d.val();
        }
        if self.sclk.neg_edge() {
            self.fall.next = self.d.val();
        }
    }
    fn connect(&mut self) {
        self.q0.connect();
        self.q1.connect();
        self.rise.connect();
        self.fall.connect();
    }
    fn hdl(&self) -> Verilog {
        let code = if N == 1 {
            "IDDRX1F ddr(.D(d), .SCLK(sclk), .RST(1'b0), .Q0(q0), .Q1(q1));".to_string()
        } else {
            format!(
                "genvar i;\ngenerate for (i = 0; i < {N}; i = i + 1) begin : g_iddr\n    \
                 IDDRX1F ddr(.D(d[i]), .SCLK(sclk), .RST(1'b0), .Q0(q0[i]), .Q1(q1[i]));\n\
                 end endgenerate"
            )
        };
        Verilog::Wrapper(Wrapper {
            code,
            cores: String::new(),
        })
    }
}

/// `N` output DDR registers on one clock: `d0` is driven while `sclk` is
/// high after the rising edge that sampled it, `d1` while it is low.
#[derive(LogicBlock, Default)]
pub struct OddrBus<const N: usize> {
    pub sclk: Signal<In, Clock>,
    pub d0: Signal<In, Bits<N>>,
    pub d1: Signal<In, Bits<N>>,
    pub q: Signal<Out, Bits<N>>,
    a: Signal<Local, Bits<N>>,
    b: Signal<Local, Bits<N>>,
}

impl<const N: usize> Logic for OddrBus<N> {
    fn update(&mut self) {
        if self.sclk.pos_edge() {
            self.a.next = self.d0.val();
            self.b.next = self.d1.val();
        }
        if self.sclk.val().clk {
            self.q.next = self.a.val();
        } else {
            self.q.next = self.b.val();
        }
    }
    fn connect(&mut self) {
        self.q.connect();
        self.a.connect();
        self.b.connect();
    }
    fn hdl(&self) -> Verilog {
        let code = if N == 1 {
            "ODDRX1F ddr(.D0(d0), .D1(d1), .SCLK(sclk), .RST(1'b0), .Q(q));".to_string()
        } else {
            format!(
                "genvar i;\ngenerate for (i = 0; i < {N}; i = i + 1) begin : g_oddr\n    \
                 ODDRX1F ddr(.D0(d0[i]), .D1(d1[i]), .SCLK(sclk), .RST(1'b0), .Q(q[i]));\n\
                 end endgenerate"
            )
        };
        Verilog::Wrapper(Wrapper {
            code,
            cores: String::new(),
        })
    }
}

/// EHXPLLL: `clkin` 100 MHz → `clk0` 125 MHz at 0°, `clk90` 125 MHz at 90°,
/// `clk62` 62.5 MHz at 0° (the core clock). Dividers from
/// `ecppll -i 100 -o 125 --clkout1 125 --phase1 90 --clkout2 62.5`
/// (VCO 625 MHz: CLKI_DIV 4, CLKFB_DIV 5, CLKOP/CLKOS_DIV 5, CLKOS phase
/// 3 + 2/8 VCO cycles past CLKOP's 2; CLKOS2_DIV 10, CPHASE 2 like CLKOP,
/// so each rising edge of `clk62` coincides with one of `clk0`). All three
/// outputs come from the one VCO, so they are frequency-locked; the board
/// still crosses between them only through asynchronous FIFOs.
///
/// The simulation model passes `clkin` through to `clk0` and `clk90` (rust-hdl
/// cannot shift phase), divides it by two for `clk62` (toggling on each
/// rising edge of `clkin`, starting low, so `clk62` rises on the 1st, 3rd, …
/// rising edge) and reports lock. The Verilator model in [`SIM_MODELS`]
/// does the same, so a co-simulation drives one clock (`clk100`, at the
/// 125 MHz of `clk0`).
#[derive(LogicBlock, Default)]
pub struct Pll {
    pub clkin: Signal<In, Clock>,
    pub clk0: Signal<Out, Clock>,
    pub clk90: Signal<Out, Clock>,
    pub clk62: Signal<Out, Clock>,
    pub locked: Signal<Out, Bit>,
    half: Signal<Local, Bit>,
}

impl Logic for Pll {
    fn update(&mut self) {
        self.clk0.next = self.clkin.val();
        self.clk90.next = self.clkin.val();
        if self.clkin.pos_edge() {
            self.half.next = !self.half.val();
        }
        self.clk62.next = Clock {
            clk: self.half.val(),
        };
        self.locked.next = true;
    }
    fn connect(&mut self) {
        self.clk0.connect();
        self.clk90.connect();
        self.clk62.connect();
        self.half.connect();
        self.locked.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Wrapper(Wrapper {
            code: PLL_CODE.to_string(),
            cores: String::new(),
        })
    }
}

const PLL_CODE: &str = r#"(* FREQUENCY_PIN_CLKI="100" *)
(* FREQUENCY_PIN_CLKOP="125" *)
(* FREQUENCY_PIN_CLKOS="125" *)
(* FREQUENCY_PIN_CLKOS2="62.5" *)
(* ICP_CURRENT="12" *) (* LPF_RESISTOR="8" *) (* MFG_ENABLE_FILTEROPAMP="1" *) (* MFG_GMCREF_SEL="2" *)
EHXPLLL #(
    .PLLRST_ENA("DISABLED"), .INTFB_WAKE("DISABLED"), .STDBY_ENABLE("DISABLED"),
    .DPHASE_SOURCE("DISABLED"), .OUTDIVIDER_MUXA("DIVA"), .OUTDIVIDER_MUXB("DIVB"),
    .OUTDIVIDER_MUXC("DIVC"), .OUTDIVIDER_MUXD("DIVD"),
    .CLKI_DIV(4), .CLKFB_DIV(5), .FEEDBK_PATH("CLKOP"),
    .CLKOP_ENABLE("ENABLED"), .CLKOP_DIV(5), .CLKOP_CPHASE(2), .CLKOP_FPHASE(0),
    .CLKOS_ENABLE("ENABLED"), .CLKOS_DIV(5), .CLKOS_CPHASE(3), .CLKOS_FPHASE(2),
    .CLKOS2_ENABLE("ENABLED"), .CLKOS2_DIV(10), .CLKOS2_CPHASE(2), .CLKOS2_FPHASE(0)
) pll_i (
    .RST(1'b0), .STDBY(1'b0), .CLKI(clkin), .CLKOP(clk0), .CLKOS(clk90), .CLKOS2(clk62),
    .CLKFB(clk0),
    .PHASESEL0(1'b0), .PHASESEL1(1'b0), .PHASEDIR(1'b1), .PHASESTEP(1'b1),
    .PHASELOADREG(1'b1), .PLLWAKESYNC(1'b0), .ENCLKOP(1'b0), .LOCK(locked)
);"#;

/// Behavioural models of the primitives above for Verilator only (the
/// generator appends them to the board Verilog inside `ifdef VERILATOR`).
pub const SIM_MODELS: &str = r#"`ifdef VERILATOR
// Models of ECP5 primitives for Verilator lint and simulation only; Yosys
// (which does not define VERILATOR) uses its own ECP5 cell library.
// The models ignore their reset and PLL control inputs:
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNUSEDPARAM */
/* verilator lint_off MULTIDRIVEN */
module IDDRX1F(input D, input SCLK, input RST, output reg Q0, output reg Q1);
    reg rise, fall;
    always @(posedge SCLK) begin
        Q0 <= rise;
        Q1 <= fall;
        rise <= D;
    end
    always @(negedge SCLK) fall <= D;
endmodule

module ODDRX1F(input D0, input D1, input SCLK, input RST, output Q);
    reg a, b;
    always @(posedge SCLK) begin
        a <= D0;
        b <= D1;
    end
    assign Q = SCLK ? a : b;
endmodule

module EHXPLLL #(
    parameter PLLRST_ENA = "DISABLED", parameter INTFB_WAKE = "DISABLED",
    parameter STDBY_ENABLE = "DISABLED", parameter DPHASE_SOURCE = "DISABLED",
    parameter OUTDIVIDER_MUXA = "DIVA", parameter OUTDIVIDER_MUXB = "DIVB",
    parameter OUTDIVIDER_MUXC = "DIVC", parameter OUTDIVIDER_MUXD = "DIVD",
    parameter integer CLKI_DIV = 1, parameter integer CLKFB_DIV = 1,
    parameter FEEDBK_PATH = "CLKOP",
    parameter CLKOP_ENABLE = "ENABLED", parameter integer CLKOP_DIV = 8,
    parameter integer CLKOP_CPHASE = 0, parameter integer CLKOP_FPHASE = 0,
    parameter CLKOS_ENABLE = "DISABLED", parameter integer CLKOS_DIV = 8,
    parameter integer CLKOS_CPHASE = 0, parameter integer CLKOS_FPHASE = 0,
    parameter CLKOS2_ENABLE = "DISABLED", parameter integer CLKOS2_DIV = 8,
    parameter integer CLKOS2_CPHASE = 0, parameter integer CLKOS2_FPHASE = 0
) (
    input RST, input STDBY, input CLKI, input CLKFB,
    input PHASESEL0, input PHASESEL1, input PHASEDIR, input PHASESTEP,
    input PHASELOADREG, input PLLWAKESYNC, input ENCLKOP,
    output CLKOP, output CLKOS, output CLKOS2, output LOCK
);
    // Phase is not modelled: CLKOP and CLKOS follow CLKI (the testbench
    // drives CLKI at CLKOP's frequency); CLKOS2 is CLKI divided by two (the
    // board's 62.5 MHz core clock, CLKOS2_DIV = 2 * CLKOP_DIV), rising on
    // the 1st, 3rd, ... rising edge of CLKI.
    reg div2 = 1'b0;
    always @(posedge CLKI) div2 <= ~div2;
    assign CLKOP = CLKI;
    assign CLKOS = CLKI;
    assign CLKOS2 = div2;
    assign LOCK = 1'b1;
endmodule
/* verilator lint_on MULTIDRIVEN */
/* verilator lint_on UNUSEDPARAM */
/* verilator lint_on UNUSEDSIGNAL */
`endif
"#;
