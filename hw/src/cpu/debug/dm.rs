//! `Dm`: the Debug Module of RISC-V External Debug Support 0.13.2 for the
//! one hart of the firmware's core, on the DMI of [`super::dtm::Dtm`]. The
//! registers it has, and what it leaves out, are listed in the module doc
//! of [`super`] and in docs/cpu.md ("Debug module").
//!
//! A DMI request is taken in the clock it arrives and answered the next
//! clock (`dmi_ack`, with the read value); the DM never answers an error.
//! Towards the core ([`crate::cpu::core::Rv32`]'s `dbg_*` ports): the halt
//! request is a level, the resume, register and system-bus requests are
//! held until the core's `resumed` / `reg_done` / `sb_done` pulse.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct Dm {
    pub clock: Signal<In, Clock>,
    /// The system reset (not `ndmreset`): everything, dmactive = 0.
    pub reset: Signal<In, Bit>,
    // DMI.
    pub dmi_req: Signal<In, Bit>,
    pub dmi_addr: Signal<In, Bits<7>>,
    pub dmi_wdata: Signal<In, Bits<32>>,
    pub dmi_op: Signal<In, Bits<2>>,
    pub dmi_ack: Signal<Out, Bit>,
    pub dmi_rdata: Signal<Out, Bits<32>>,
    pub dmi_resp: Signal<Out, Bits<2>>,
    // The hart.
    /// The core is held in reset (by the system or by `ndmreset`).
    pub core_reset: Signal<In, Bit>,
    pub ndmreset: Signal<Out, Bit>,
    pub halt_req: Signal<Out, Bit>,
    pub resume_req: Signal<Out, Bit>,
    pub halted: Signal<In, Bit>,
    pub resumed: Signal<In, Bit>,
    pub reg_req: Signal<Out, Bit>,
    pub reg_write: Signal<Out, Bit>,
    /// `0x1000 | n`: GPR n; `0x000`-`0xFFF`: a CSR (the core answers
    /// `reg_err` if it has no such CSR).
    pub reg_num: Signal<Out, Bits<13>>,
    pub reg_wdata: Signal<Out, Bits<32>>,
    pub reg_done: Signal<In, Bit>,
    pub reg_rdata: Signal<In, Bits<32>>,
    pub reg_err: Signal<In, Bit>,
    pub sb_req: Signal<Out, Bit>,
    pub sb_write: Signal<Out, Bit>,
    pub sb_addr: Signal<Out, Bits<32>>,
    pub sb_wdata: Signal<Out, Bits<32>>,
    pub sb_done: Signal<In, Bit>,
    pub sb_err: Signal<In, Bit>,
    pub sb_rdata: Signal<In, Bits<32>>,

    ack: DFF<Bit>,
    rdata: DFF<Bits<32>>,
    // dmcontrol and the hart's state.
    dmactive: DFF<Bit>,
    ndm: DFF<Bit>,
    hartsel: DFF<Bit>,
    haltreq: DFF<Bit>,
    resume_pend: DFF<Bit>,
    resumeack: DFF<Bit>,
    havereset: DFF<Bit>,
    // Abstract commands.
    data0: DFF<Bits<32>>,
    cmd_busy: DFF<Bit>,
    cmderr: DFF<Bits<3>>,
    cmd_write: DFF<Bit>,
    cmd_num: DFF<Bits<13>>,
    // System bus.
    sb_busy: DFF<Bit>,
    sb_wr: DFF<Bit>,
    sbbusyerror: DFF<Bit>,
    sbreadonaddr: DFF<Bit>,
    sbaccess: DFF<Bits<3>>,
    sbautoincrement: DFF<Bit>,
    sbreadondata: DFF<Bit>,
    sberror: DFF<Bits<3>>,
    sbaddress: DFF<Bits<32>>,
    sbdata: DFF<Bits<32>>,

    wr: Signal<Local, Bit>,
    rd: Signal<Local, Bit>,
    w: Signal<Local, Bits<32>>,
    regno: Signal<Local, Bits<16>>,
    regok: Signal<Local, Bit>,
    regcode: Signal<Local, Bits<13>>,
    status: Signal<Local, Bits<32>>,
    /// Start a system-bus read / a write of `w` this clock (the checks
    /// below decide whether it runs); `sb_start_mis`: its address is not
    /// word aligned.
    sb_start_rd: Signal<Local, Bit>,
    sb_start_wr: Signal<Local, Bit>,
    sb_start_mis: Signal<Local, Bit>,
}

impl Logic for Dm {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ack,
            rdata,
            dmactive,
            ndm,
            hartsel,
            haltreq,
            resume_pend,
            resumeack,
            havereset,
            data0,
            cmd_busy,
            cmderr,
            cmd_write,
            cmd_num,
            sb_busy,
            sb_wr,
            sbbusyerror,
            sbreadonaddr,
            sbaccess,
            sbautoincrement,
            sbreadondata,
            sberror,
            sbaddress,
            sbdata
        );
        self.dmi_ack.next = self.ack.q.val();
        self.dmi_rdata.next = self.rdata.q.val();
        self.dmi_resp.next = 0.into();
        self.ndmreset.next = self.ndm.q.val();
        self.halt_req.next = self.haltreq.q.val();
        self.resume_req.next = self.resume_pend.q.val();
        self.reg_req.next = self.cmd_busy.q.val();
        self.reg_write.next = self.cmd_write.q.val();
        self.reg_num.next = self.cmd_num.q.val();
        self.reg_wdata.next = self.data0.q.val();
        self.sb_req.next = self.sb_busy.q.val();
        self.sb_write.next = self.sb_wr.q.val();
        self.sb_addr.next = self.sbaddress.q.val();
        self.sb_wdata.next = self.sbdata.q.val();

        self.ack.d.next = self.dmi_req.val();
        self.wr.next = self.dmi_req.val() & (self.dmi_op.val() == 2);
        self.rd.next = self.dmi_req.val() & (self.dmi_op.val() == 1);
        self.w.next = self.dmi_wdata.val();
        self.sb_start_rd.next = false;
        self.sb_start_wr.next = false;
        self.sb_start_mis.next = self.sbaddress.q.val().get_bits::<2>(0) != 0;

        // The hart: one, selected by hartsel = 0.
        if self.core_reset.val() {
            self.havereset.d.next = true;
        }
        if self.resumed.val() {
            self.resume_pend.d.next = false;
            self.resumeack.d.next = true;
        }
        // dmstatus: version 2, authenticated; the rest by hart.
        self.status.next = 0x82.into();
        if self.hartsel.q.val() {
            self.status.next = self.status.val() | 0xC000;
        } else {
            if self.havereset.q.val() {
                self.status.next = self.status.val() | 0xC_0000;
            }
            if self.resumeack.q.val() {
                self.status.next = self.status.val() | 0x3_0000;
            }
            if self.core_reset.val() {
                self.status.next = self.status.val() | 0x3000;
            } else if self.halted.val() {
                self.status.next = self.status.val() | 0x300;
            } else {
                self.status.next = self.status.val() | 0xC00;
            }
        }

        // Abstract command decode: regno 0x0000-0x0FFF (CSRs: the core
        // decides whether one exists), 0x1000-0x101F (GPRs).
        self.regno.next = self.w.val().get_bits::<16>(0);
        self.regcode.next = self.regno.val().get_bits::<13>(0);
        self.regok.next =
            ((self.regno.val() & 0xF000) == 0) | ((self.regno.val() & 0xFFE0) == 0x1000);
        if self.reg_done.val() & self.cmd_busy.q.val() {
            self.cmd_busy.d.next = false;
            if self.reg_err.val() {
                // No such CSR, or a write to a read-only one: the hart's
                // exception.
                self.cmderr.d.next = 3.into();
            } else if !self.cmd_write.q.val() {
                self.data0.d.next = self.reg_rdata.val();
            }
        }
        if self.cmd_busy.q.val() & self.core_reset.val() {
            // The hart was reset under the command.
            self.cmd_busy.d.next = false;
            self.cmderr.d.next = 4.into();
        }
        if self.sb_done.val() & self.sb_busy.q.val() {
            self.sb_busy.d.next = false;
            if self.sb_err.val() {
                self.sberror.d.next = 2.into();
            } else {
                if !self.sb_wr.q.val() {
                    self.sbdata.d.next = self.sb_rdata.val();
                }
                if self.sbautoincrement.q.val() {
                    self.sbaddress.d.next = self.sbaddress.q.val() + 4;
                }
            }
        }

        // ---- DMI reads.
        self.rdata.d.next = 0.into();
        if self.rd.val() {
            if self.dmi_addr.val() == 0x04 {
                self.rdata.d.next = self.data0.q.val();
                if self.cmd_busy.q.val() & (self.cmderr.q.val() == 0) {
                    self.cmderr.d.next = 1.into();
                }
            } else if self.dmi_addr.val() == 0x10 {
                self.rdata.d.next = (bit_cast::<32, 1>(self.hartsel.q.val().into()) << 16)
                    | (bit_cast::<32, 1>(self.ndm.q.val().into()) << 1)
                    | bit_cast::<32, 1>(self.dmactive.q.val().into());
            } else if self.dmi_addr.val() == 0x11 {
                self.rdata.d.next = self.status.val();
            } else if self.dmi_addr.val() == 0x16 {
                self.rdata.d.next = (bit_cast::<32, 1>(self.cmd_busy.q.val().into()) << 12)
                    | (bit_cast::<32, 3>(self.cmderr.q.val()) << 8)
                    | 1_u64;
            } else if self.dmi_addr.val() == 0x38 {
                self.rdata.d.next = (bit_cast::<32, 1>(self.sbbusyerror.q.val().into()) << 22)
                    | (bit_cast::<32, 1>(self.sb_busy.q.val().into()) << 21)
                    | (bit_cast::<32, 1>(self.sbreadonaddr.q.val().into()) << 20)
                    | (bit_cast::<32, 3>(self.sbaccess.q.val()) << 17)
                    | (bit_cast::<32, 1>(self.sbautoincrement.q.val().into()) << 16)
                    | (bit_cast::<32, 1>(self.sbreadondata.q.val().into()) << 15)
                    | (bit_cast::<32, 3>(self.sberror.q.val()) << 12)
                    | 0x2000_0404_u64;
            } else if self.dmi_addr.val() == 0x39 {
                self.rdata.d.next = self.sbaddress.q.val();
            } else if self.dmi_addr.val() == 0x3C {
                self.rdata.d.next = self.sbdata.q.val();
                if self.sb_busy.q.val() {
                    self.sbbusyerror.d.next = true;
                } else if self.sbreadondata.q.val()
                    & (self.sberror.q.val() == 0)
                    & !self.sbbusyerror.q.val()
                {
                    self.sb_start_rd.next = true;
                }
            } else if self.dmi_addr.val() == 0x40 {
                self.rdata.d.next =
                    bit_cast::<32, 1>((self.halted.val() & !self.core_reset.val()).into());
            }
            // hartinfo (0x12) and everything else read 0.
        }

        // ---- DMI writes (only dmcontrol while dmactive is 0).
        if self.wr.val() & self.dmactive.q.val() {
            if self.dmi_addr.val() == 0x04 {
                if self.cmd_busy.q.val() {
                    if self.cmderr.q.val() == 0 {
                        self.cmderr.d.next = 1.into();
                    }
                } else {
                    self.data0.d.next = self.w.val();
                }
            } else if self.dmi_addr.val() == 0x16 {
                if self.cmd_busy.q.val() {
                    if self.cmderr.q.val() == 0 {
                        self.cmderr.d.next = 1.into();
                    }
                } else {
                    self.cmderr.d.next = self.cmderr.q.val() & !self.w.val().get_bits::<3>(8);
                }
            } else if self.dmi_addr.val() == 0x17 {
                if self.cmd_busy.q.val() {
                    if self.cmderr.q.val() == 0 {
                        self.cmderr.d.next = 1.into();
                    }
                } else if self.cmderr.q.val() != 0 {
                    // Ignored until cmderr is cleared.
                } else if (self.w.val().get_bits::<8>(24) != 0)
                    | self.w.val().get_bit(19)
                    | self.w.val().get_bit(18)
                    | (self.w.val().get_bit(17) & (self.w.val().get_bits::<3>(20) != 2))
                {
                    // Not Access Register, aarpostincrement, postexec (no
                    // program buffer), or not 32 bits.
                    self.cmderr.d.next = 2.into();
                } else if !self.w.val().get_bit(17) {
                    // No transfer: nothing to do.
                } else if self.hartsel.q.val() | !self.halted.val() | self.core_reset.val() {
                    self.cmderr.d.next = 4.into();
                } else if !self.regok.val() {
                    self.cmderr.d.next = 3.into();
                } else {
                    self.cmd_busy.d.next = true;
                    self.cmd_write.d.next = self.w.val().get_bit(16);
                    self.cmd_num.d.next = self.regcode.val();
                }
            } else if self.dmi_addr.val() == 0x38 {
                if self.w.val().get_bit(22) {
                    self.sbbusyerror.d.next = false;
                }
                self.sbreadonaddr.d.next = self.w.val().get_bit(20);
                self.sbaccess.d.next = self.w.val().get_bits::<3>(17);
                self.sbautoincrement.d.next = self.w.val().get_bit(16);
                self.sbreadondata.d.next = self.w.val().get_bit(15);
                self.sberror.d.next = self.sberror.q.val() & !self.w.val().get_bits::<3>(12);
            } else if self.dmi_addr.val() == 0x39 {
                if self.sb_busy.q.val() {
                    self.sbbusyerror.d.next = true;
                } else {
                    self.sbaddress.d.next = self.w.val();
                    if self.sbreadonaddr.q.val()
                        & (self.sberror.q.val() == 0)
                        & !self.sbbusyerror.q.val()
                    {
                        self.sb_start_rd.next = true;
                        self.sb_start_mis.next = self.w.val().get_bits::<2>(0) != 0;
                    }
                }
            } else if self.dmi_addr.val() == 0x3C {
                if self.sb_busy.q.val() {
                    self.sbbusyerror.d.next = true;
                } else if (self.sberror.q.val() == 0) & !self.sbbusyerror.q.val() {
                    self.sbdata.d.next = self.w.val();
                    self.sb_start_wr.next = true;
                }
            }
        }
        // A system-bus access starts unless its size or alignment is wrong.
        if self.sb_start_rd.val() | self.sb_start_wr.val() {
            if self.sbaccess.q.val() != 2 {
                self.sberror.d.next = 4.into();
            } else if self.sb_start_mis.val() {
                self.sberror.d.next = 3.into();
            } else {
                self.sb_busy.d.next = true;
                self.sb_wr.d.next = self.sb_start_wr.val();
            }
        }

        // dmcontrol: dmactive = 0 resets the module; otherwise the fields
        // apply to the hart the write selects (haltreq, resumereq,
        // ackhavereset only for hart 0). HARTSELLEN is 1: hartsello bit 0.
        if self.wr.val() & (self.dmi_addr.val() == 0x10) {
            if !self.dmactive.q.val() {
                self.dmactive.d.next = self.w.val().get_bit(0);
            } else if !self.w.val().get_bit(0) {
                self.dmactive.d.next = false;
            } else {
                self.hartsel.d.next = self.w.val().get_bit(16);
                self.ndm.d.next = self.w.val().get_bit(1);
                if !self.w.val().get_bit(16) {
                    self.haltreq.d.next = self.w.val().get_bit(31);
                    if self.w.val().get_bit(30) & !self.w.val().get_bit(31) & self.halted.val() {
                        self.resume_pend.d.next = true;
                        self.resumeack.d.next = false;
                    }
                    if self.w.val().get_bit(28) {
                        self.havereset.d.next = false;
                    }
                }
            }
        }

        if self.reset.val() | !self.dmactive.q.val() {
            self.ndm.d.next = false;
            self.hartsel.d.next = false;
            self.haltreq.d.next = false;
            self.resume_pend.d.next = false;
            self.resumeack.d.next = false;
            self.data0.d.next = 0.into();
            self.cmd_busy.d.next = false;
            self.cmderr.d.next = 0.into();
            self.cmd_write.d.next = false;
            self.cmd_num.d.next = 0.into();
            self.sb_busy.d.next = false;
            self.sb_wr.d.next = false;
            self.sbbusyerror.d.next = false;
            self.sbreadonaddr.d.next = false;
            self.sbaccess.d.next = 2.into();
            self.sbautoincrement.d.next = false;
            self.sbreadondata.d.next = false;
            self.sberror.d.next = 0.into();
            self.sbaddress.d.next = 0.into();
            self.sbdata.d.next = 0.into();
        }
        if self.reset.val() {
            self.dmactive.d.next = false;
            self.ack.d.next = false;
            self.havereset.d.next = true;
        }
    }
}
