//! `JtagTap`: the IEEE 1149.1 test access port of the debug transport
//! (5-bit instruction register, the TAP controller's 16 states), run in the
//! core clock: TCK, TMS and TDI are pins sampled through two-flop
//! synchronisers and TCK's edges are found by comparing two samples, so
//! there is no TCK clock domain.
//!
//! On a rising edge of TCK (seen two to three core clocks late, TMS and
//! TDI delayed alike) the controller captures or shifts in its current
//! state and then moves by TMS. On a falling edge it updates (Update-IR
//! loads the instruction, Update-DR pulses `update`) and drives TDO from
//! the bit that the next rising edge shifts out, as JTAG requires (TDO
//! changes on the falling edge). So TCK must stay high and low for at
//! least 4 core clocks each: TCK at most 1/8 of the core clock (7.8 MHz at
//! 62.5 MHz).
//!
//! Instructions: `IDCODE` (0x01, [`IDCODE`]), `DTMCS` (0x10, 32 bits) and
//! `DMI` (0x11, 41 bits), whose values the DTM (`dtm.rs`) supplies in
//! `capture_value` and takes at `update`; `BYPASS` (0x1F) and every other
//! instruction select the 1-bit bypass register. Test-Logic-Reset (five
//! TCK clocks with TMS high, or `reset`) selects `IDCODE`. Capture-IR
//! loads 0b00001. TDO is driven at all times (no output enable; it holds
//! its last value outside the shift states).

use rust_hdl::prelude::*;

/// The TAP's IDCODE: version 1, part number 0x5249, manufacturer identity
/// 0 (JEDEC assigns code 0 to no manufacturer, so the value cannot be
/// mistaken for a vendor's part), bit 0 = 1 as IEEE 1149.1 requires.
pub const IDCODE: u32 = 0x1524_9001;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum TapState {
    TestLogicReset,
    RunTestIdle,
    SelectDr,
    CaptureDr,
    ShiftDr,
    Exit1Dr,
    PauseDr,
    Exit2Dr,
    UpdateDr,
    SelectIr,
    CaptureIr,
    ShiftIr,
    Exit1Ir,
    PauseIr,
    Exit2Ir,
    UpdateIr,
}

#[derive(LogicBlock, Default)]
pub struct JtagTap {
    pub clock: Signal<In, Clock>,
    /// Synchronous: Test-Logic-Reset.
    pub reset: Signal<In, Bit>,
    /// The pins, asynchronous to `clock`.
    pub tck: Signal<In, Bit>,
    pub tms: Signal<In, Bit>,
    pub tdi: Signal<In, Bit>,
    pub tdo: Signal<Out, Bit>,
    /// The current instruction.
    pub ir: Signal<Out, Bits<5>>,
    /// One clock: Capture-DR takes `capture_value` (DTMCS, DMI) now.
    pub capture: Signal<Out, Bit>,
    pub capture_value: Signal<In, Bits<41>>,
    /// One clock: Update-DR; `dr` holds the shifted-in value (DTMCS in
    /// bits 31:0, DMI in 40:0).
    pub update: Signal<Out, Bit>,
    pub dr: Signal<Out, Bits<41>>,

    tck_s: DFF<Bits<3>>,
    tms_s: DFF<Bits<2>>,
    tdi_s: DFF<Bits<2>>,
    state: DFF<TapState>,
    ir_q: DFF<Bits<5>>,
    ir_sr: DFF<Bits<5>>,
    sr: DFF<Bits<41>>,
    tdo_q: DFF<Bit>,
    rise: Signal<Local, Bit>,
    fall: Signal<Local, Bit>,
    tms_v: Signal<Local, Bit>,
    tdi_v: Signal<Local, Bit>,
    sr_next: Signal<Local, Bits<41>>,
}

impl Logic for JtagTap {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, tck_s, tms_s, tdi_s, state, ir_q, ir_sr, sr, tdo_q);
        // Synchronisers: bit 0 is the first flop; TCK keeps a third sample
        // for its edges.
        self.tck_s.d.next = (self.tck_s.q.val() << 1) | bit_cast::<3, 1>(self.tck.val().into());
        self.tms_s.d.next = (self.tms_s.q.val() << 1) | bit_cast::<2, 1>(self.tms.val().into());
        self.tdi_s.d.next = (self.tdi_s.q.val() << 1) | bit_cast::<2, 1>(self.tdi.val().into());
        self.rise.next = self.tck_s.q.val().get_bit(1) & !self.tck_s.q.val().get_bit(2);
        self.fall.next = !self.tck_s.q.val().get_bit(1) & self.tck_s.q.val().get_bit(2);
        self.tms_v.next = self.tms_s.q.val().get_bit(1);
        self.tdi_v.next = self.tdi_s.q.val().get_bit(1);

        self.ir.next = self.ir_q.q.val();
        self.dr.next = self.sr.q.val();
        self.tdo.next = self.tdo_q.q.val();
        self.capture.next = false;
        self.update.next = false;

        // The data register's shift: TDI enters at the top bit of the
        // selected register, the bottom bit leaves on TDO.
        self.sr_next.next = self.sr.q.val() >> 1;
        if self.ir_q.q.val() == 0x11 {
            self.sr_next.next = self.sr_next.val().replace_bit(40, self.tdi_v.val());
        } else if (self.ir_q.q.val() == 0x01) | (self.ir_q.q.val() == 0x10) {
            self.sr_next.next = self.sr_next.val().replace_bit(31, self.tdi_v.val());
        } else {
            self.sr_next.next = self.sr_next.val().replace_bit(0, self.tdi_v.val());
        }

        if self.rise.val() {
            match self.state.q.val() {
                TapState::TestLogicReset => {
                    if !self.tms_v.val() {
                        self.state.d.next = TapState::RunTestIdle;
                    }
                }
                TapState::RunTestIdle => {
                    if self.tms_v.val() {
                        self.state.d.next = TapState::SelectDr;
                    }
                }
                TapState::SelectDr => {
                    self.state.d.next = TapState::CaptureDr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::SelectIr;
                    }
                }
                TapState::CaptureDr => {
                    if self.ir_q.q.val() == 0x01 {
                        self.sr.d.next = 0x1524_9001_u64.into();
                    } else if (self.ir_q.q.val() == 0x10) | (self.ir_q.q.val() == 0x11) {
                        self.sr.d.next = self.capture_value.val();
                        self.capture.next = true;
                    } else {
                        self.sr.d.next = 0.into();
                    }
                    self.state.d.next = TapState::ShiftDr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::Exit1Dr;
                    }
                }
                TapState::ShiftDr => {
                    self.sr.d.next = self.sr_next.val();
                    if self.tms_v.val() {
                        self.state.d.next = TapState::Exit1Dr;
                    }
                }
                TapState::Exit1Dr => {
                    self.state.d.next = TapState::PauseDr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::UpdateDr;
                    }
                }
                TapState::PauseDr => {
                    if self.tms_v.val() {
                        self.state.d.next = TapState::Exit2Dr;
                    }
                }
                TapState::Exit2Dr => {
                    self.state.d.next = TapState::ShiftDr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::UpdateDr;
                    }
                }
                TapState::UpdateDr => {
                    self.state.d.next = TapState::RunTestIdle;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::SelectDr;
                    }
                }
                TapState::SelectIr => {
                    self.state.d.next = TapState::CaptureIr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::TestLogicReset;
                    }
                }
                TapState::CaptureIr => {
                    self.ir_sr.d.next = 1.into();
                    self.state.d.next = TapState::ShiftIr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::Exit1Ir;
                    }
                }
                TapState::ShiftIr => {
                    self.ir_sr.d.next = (self.ir_sr.q.val() >> 1)
                        | (bit_cast::<5, 1>(self.tdi_v.val().into()) << 4);
                    if self.tms_v.val() {
                        self.state.d.next = TapState::Exit1Ir;
                    }
                }
                TapState::Exit1Ir => {
                    self.state.d.next = TapState::PauseIr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::UpdateIr;
                    }
                }
                TapState::PauseIr => {
                    if self.tms_v.val() {
                        self.state.d.next = TapState::Exit2Ir;
                    }
                }
                TapState::Exit2Ir => {
                    self.state.d.next = TapState::ShiftIr;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::UpdateIr;
                    }
                }
                TapState::UpdateIr => {
                    self.state.d.next = TapState::RunTestIdle;
                    if self.tms_v.val() {
                        self.state.d.next = TapState::SelectDr;
                    }
                }
            }
        }
        if self.fall.val() {
            if self.state.q.val() == TapState::ShiftDr {
                self.tdo_q.d.next = self.sr.q.val().get_bit(0);
            } else if self.state.q.val() == TapState::ShiftIr {
                self.tdo_q.d.next = self.ir_sr.q.val().get_bit(0);
            } else if self.state.q.val() == TapState::UpdateDr {
                self.update.next = true;
            } else if self.state.q.val() == TapState::UpdateIr {
                self.ir_q.d.next = self.ir_sr.q.val();
            } else if self.state.q.val() == TapState::TestLogicReset {
                self.ir_q.d.next = 1.into();
            }
        }
        if self.reset.val() {
            self.state.d.next = TapState::TestLogicReset;
            self.ir_q.d.next = 1.into();
            self.tdo_q.d.next = false;
            self.update.next = false;
            self.capture.next = false;
        }
    }
}
