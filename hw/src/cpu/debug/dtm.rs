//! `Dtm`: the JTAG Debug Transport Module of RISC-V External Debug Support
//! 0.13.2 (its chapter "Debug Transport Module"): the TAP ([`JtagTap`]) and
//! the two DTM registers behind it, and the DMI master that carries each
//! `dmi` scan to the Debug Module (`dm.rs`).
//!
//! * `dtmcs` (IR 0x10): version 1 (0.13), abits 7, idle 1 (a hint; the DM
//!   answers a DMI request in two core clocks, far sooner than the next
//!   Capture-DR can come at the TCK limit of `tap.rs`), dmistat (the
//!   sticky status of `dmi`); writing dmireset clears the sticky status,
//!   dmihardreset also forgets a request in flight.
//! * `dmi` (IR 0x11, 41 bits: address 40:34, data 33:2, op 1:0). Update-DR
//!   with op 1 (read) or 2 (write) sends the request unless the status is
//!   sticky; op 0 and the reserved op 3 send nothing. Capture-DR returns
//!   the address and data of the last request (for a read, what the DM
//!   answered) and the status as op: 0 done, 2 failed (the DM answered
//!   an error: ours never does), 3 busy. A Capture-DR or an Update-DR while
//!   a request is in flight makes the status 3, sticky until dmireset.

use super::tap::JtagTap;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct Dtm {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub tck: Signal<In, Bit>,
    pub tms: Signal<In, Bit>,
    pub tdi: Signal<In, Bit>,
    pub tdo: Signal<Out, Bit>,
    /// One clock per request; the DM answers with `dmi_ack` (a later clock).
    pub dmi_req: Signal<Out, Bit>,
    pub dmi_addr: Signal<Out, Bits<7>>,
    pub dmi_wdata: Signal<Out, Bits<32>>,
    /// 1 read, 2 write.
    pub dmi_op: Signal<Out, Bits<2>>,
    pub dmi_ack: Signal<In, Bit>,
    pub dmi_rdata: Signal<In, Bits<32>>,
    /// 0 done, 2 failed.
    pub dmi_resp: Signal<In, Bits<2>>,

    tap: JtagTap,
    busy: DFF<Bit>,
    stat: DFF<Bits<2>>,
    req: DFF<Bit>,
    addr: DFF<Bits<7>>,
    data: DFF<Bits<32>>,
    op: DFF<Bits<2>>,
    dr_op: Signal<Local, Bits<2>>,
}

impl Logic for Dtm {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, stat, req, addr, data, op);
        clock!(self, clock, tap);
        self.tap.reset.next = self.reset.val();
        self.tap.tck.next = self.tck.val();
        self.tap.tms.next = self.tms.val();
        self.tap.tdi.next = self.tdi.val();
        self.tdo.next = self.tap.tdo.val();

        self.dmi_req.next = self.req.q.val();
        self.dmi_addr.next = self.addr.q.val();
        self.dmi_wdata.next = self.data.q.val();
        self.dmi_op.next = self.op.q.val();
        self.req.d.next = false;

        // What Capture-DR loads: dtmcs, or dmi.
        self.tap.capture_value.next = (bit_cast::<41, 2>(self.stat.q.val()) << 10) | 0x1071_u64;
        if self.tap.ir.val() == 0x11 {
            self.tap.capture_value.next = (bit_cast::<41, 7>(self.addr.q.val()) << 34)
                | (bit_cast::<41, 32>(self.data.q.val()) << 2)
                | bit_cast::<41, 2>(self.stat.q.val());
            if self.busy.q.val() {
                self.tap.capture_value.next = (bit_cast::<41, 7>(self.addr.q.val()) << 34)
                    | (bit_cast::<41, 32>(self.data.q.val()) << 2)
                    | 3_u64;
            }
        }
        if self.tap.capture.val() & (self.tap.ir.val() == 0x11) & self.busy.q.val() {
            self.stat.d.next = 3.into();
        }

        self.dr_op.next = self.tap.dr.val().get_bits::<2>(0);
        if self.tap.update.val() {
            if self.tap.ir.val() == 0x10 {
                if self.tap.dr.val().get_bit(16) {
                    self.stat.d.next = 0.into();
                }
                if self.tap.dr.val().get_bit(17) {
                    self.stat.d.next = 0.into();
                    self.busy.d.next = false;
                }
            } else if (self.tap.ir.val() == 0x11)
                & ((self.dr_op.val() == 1) | (self.dr_op.val() == 2))
            {
                if self.busy.q.val() {
                    self.stat.d.next = 3.into();
                } else if self.stat.q.val() == 0 {
                    self.req.d.next = true;
                    self.busy.d.next = true;
                    self.addr.d.next = self.tap.dr.val().get_bits::<7>(34);
                    self.data.d.next = self.tap.dr.val().get_bits::<32>(2);
                    self.op.d.next = self.dr_op.val();
                }
            }
        }
        if self.dmi_ack.val() & self.busy.q.val() {
            self.busy.d.next = false;
            if self.op.q.val() == 1 {
                self.data.d.next = self.dmi_rdata.val();
            }
            if self.dmi_resp.val() != 0 {
                self.stat.d.next = 2.into();
            }
        }
        if self.reset.val() {
            self.busy.d.next = false;
            self.stat.d.next = 0.into();
            self.req.d.next = false;
            self.addr.d.next = 0.into();
            self.data.d.next = 0.into();
            self.op.d.next = 0.into();
        }
    }
}
