//! External debug of the firmware's core, after RISC-V External Debug
//! Support 0.13.2: a JTAG Debug Transport Module ([`dtm::Dtm`], with its
//! TAP [`tap::JtagTap`]) and a Debug Module ([`dm::Dm`]) beside the core,
//! which has a debug mode for them (`cpu::core`, module doc of `cpu`).
//! [`Rv32Debug`] puts the three together; it is the Verilog top
//! `rv32_core` (`cpu::gen`) and the CPU of the ECPIX-5 board top.
//!
//! Everything runs in the core clock: the TAP samples TCK, TMS and TDI
//! through synchronisers, so TCK must be at most 1/8 of the core clock
//! (7.8 MHz at 62.5 MHz). IDCODE [`tap::IDCODE`].
//!
//! Debug Module registers: `data0`, `dmcontrol` (haltreq, resumereq,
//! ackhavereset, ndmreset, dmactive; hartsel is one bit wide: hart 0
//! exists, hart 1 reads as nonexistent), `dmstatus` (version 2,
//! authenticated; halted / running / unavail / resumeack / havereset /
//! nonexistent), `hartinfo` (0), `abstractcs` (datacount 1, progbufsize 0,
//! busy, cmderr), `command` (Access Register, 32 bits, GPRs and every CSR
//! of the core, `dcsr`, `dpc` and the trigger CSRs among them), `sbcs` /
//! `sbaddress0` / `sbdata0` (32-bit system-bus accesses to the core's
//! memory map) and `haltsum0`; in the core, two mcontrol execute triggers.
//! Not there: the program buffer, `abstractauto`, `aarpostincrement`,
//! Quick Access and Access Memory commands, load/store triggers,
//! halt-on-reset (`setresethaltreq`), `hartreset`, the hart array,
//! authentication, 8/16/64/128-bit system-bus accesses; docs/cpu.md
//! ("Debug module") says what each answers.

pub mod dm;
pub mod dtm;
pub mod tap;

#[cfg(test)]
mod tests;

use super::core::Rv32;
use dm::Dm;
use dtm::Dtm;
use rust_hdl::prelude::*;

/// The core ([`Rv32`], same ports but for `dbg_*`) with its DTM and DM.
/// `reset` resets the core (as `Rv32::reset`: program loading holds it);
/// `dm_reset` resets the TAP, the DTM and the DM; the DM's `ndmreset`
/// resets the core too.
#[derive(LogicBlock)]
pub struct Rv32Debug<const IW: usize, const DW: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub dm_reset: Signal<In, Bit>,
    pub ext_irq: Signal<In, Bit>,
    pub bus_valid: Signal<Out, Bit>,
    pub bus_we: Signal<Out, Bit>,
    pub bus_addr: Signal<Out, Bits<32>>,
    pub bus_strb: Signal<Out, Bits<4>>,
    pub bus_wdata: Signal<Out, Bits<32>>,
    pub bus_ready: Signal<In, Bit>,
    pub bus_rdata: Signal<In, Bits<32>>,
    pub load_we: Signal<In, Bit>,
    pub load_addr: Signal<In, Bits<32>>,
    pub load_data: Signal<In, Bits<32>>,
    /// JTAG pins (no TRST: Test-Logic-Reset by TMS or `dm_reset`).
    pub tck: Signal<In, Bit>,
    pub tms: Signal<In, Bit>,
    pub tdi: Signal<In, Bit>,
    pub tdo: Signal<Out, Bit>,
    pub tr_valid: Signal<Out, Bit>,
    pub tr_trap: Signal<Out, Bit>,
    pub tr_cause: Signal<Out, Bits<32>>,
    pub tr_pc: Signal<Out, Bits<32>>,
    pub tr_insn: Signal<Out, Bits<32>>,
    pub tr_next_pc: Signal<Out, Bits<32>>,
    pub tr_rd: Signal<Out, Bits<5>>,
    pub tr_rd_wdata: Signal<Out, Bits<32>>,
    pub tr_mem_strb: Signal<Out, Bits<4>>,
    pub tr_mem_addr: Signal<Out, Bits<32>>,
    pub tr_mem_wdata: Signal<Out, Bits<32>>,
    pub core: Rv32<IW, DW>,
    dtm: Dtm,
    dm: Dm,
    core_reset: Signal<Local, Bit>,
}

impl<const IW: usize, const DW: usize> Default for Rv32Debug<IW, DW> {
    fn default() -> Self {
        Self::with_core(Rv32::default())
    }
}

impl<const IW: usize, const DW: usize> Rv32Debug<IW, DW> {
    pub fn with_core(core: Rv32<IW, DW>) -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            dm_reset: Default::default(),
            ext_irq: Default::default(),
            bus_valid: Default::default(),
            bus_we: Default::default(),
            bus_addr: Default::default(),
            bus_strb: Default::default(),
            bus_wdata: Default::default(),
            bus_ready: Default::default(),
            bus_rdata: Default::default(),
            load_we: Default::default(),
            load_addr: Default::default(),
            load_data: Default::default(),
            tck: Default::default(),
            tms: Default::default(),
            tdi: Default::default(),
            tdo: Default::default(),
            tr_valid: Default::default(),
            tr_trap: Default::default(),
            tr_cause: Default::default(),
            tr_pc: Default::default(),
            tr_insn: Default::default(),
            tr_next_pc: Default::default(),
            tr_rd: Default::default(),
            tr_rd_wdata: Default::default(),
            tr_mem_strb: Default::default(),
            tr_mem_addr: Default::default(),
            tr_mem_wdata: Default::default(),
            core,
            dtm: Default::default(),
            dm: Default::default(),
            core_reset: Default::default(),
        }
    }
}

impl<const IW: usize, const DW: usize> Logic for Rv32Debug<IW, DW> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, core, dtm, dm);
        self.core_reset.next = self.reset.val() | self.dm.ndmreset.val();
        self.core.reset.next = self.core_reset.val();
        self.core.ext_irq.next = self.ext_irq.val();
        self.bus_valid.next = self.core.bus_valid.val();
        self.bus_we.next = self.core.bus_we.val();
        self.bus_addr.next = self.core.bus_addr.val();
        self.bus_strb.next = self.core.bus_strb.val();
        self.bus_wdata.next = self.core.bus_wdata.val();
        self.core.bus_ready.next = self.bus_ready.val();
        self.core.bus_rdata.next = self.bus_rdata.val();
        self.core.load_we.next = self.load_we.val();
        self.core.load_addr.next = self.load_addr.val();
        self.core.load_data.next = self.load_data.val();
        self.tr_valid.next = self.core.tr_valid.val();
        self.tr_trap.next = self.core.tr_trap.val();
        self.tr_cause.next = self.core.tr_cause.val();
        self.tr_pc.next = self.core.tr_pc.val();
        self.tr_insn.next = self.core.tr_insn.val();
        self.tr_next_pc.next = self.core.tr_next_pc.val();
        self.tr_rd.next = self.core.tr_rd.val();
        self.tr_rd_wdata.next = self.core.tr_rd_wdata.val();
        self.tr_mem_strb.next = self.core.tr_mem_strb.val();
        self.tr_mem_addr.next = self.core.tr_mem_addr.val();
        self.tr_mem_wdata.next = self.core.tr_mem_wdata.val();

        self.dtm.reset.next = self.dm_reset.val();
        self.dtm.tck.next = self.tck.val();
        self.dtm.tms.next = self.tms.val();
        self.dtm.tdi.next = self.tdi.val();
        self.tdo.next = self.dtm.tdo.val();
        self.dm.reset.next = self.dm_reset.val();
        self.dm.dmi_req.next = self.dtm.dmi_req.val();
        self.dm.dmi_addr.next = self.dtm.dmi_addr.val();
        self.dm.dmi_wdata.next = self.dtm.dmi_wdata.val();
        self.dm.dmi_op.next = self.dtm.dmi_op.val();
        self.dtm.dmi_ack.next = self.dm.dmi_ack.val();
        self.dtm.dmi_rdata.next = self.dm.dmi_rdata.val();
        self.dtm.dmi_resp.next = self.dm.dmi_resp.val();

        self.dm.core_reset.next = self.core_reset.val();
        self.core.dbg_halt_req.next = self.dm.halt_req.val();
        self.core.dbg_resume_req.next = self.dm.resume_req.val();
        self.dm.halted.next = self.core.dbg_halted.val();
        self.dm.resumed.next = self.core.dbg_resumed.val();
        self.core.dbg_reg_req.next = self.dm.reg_req.val();
        self.core.dbg_reg_write.next = self.dm.reg_write.val();
        self.core.dbg_reg_num.next = self.dm.reg_num.val();
        self.core.dbg_reg_wdata.next = self.dm.reg_wdata.val();
        self.dm.reg_done.next = self.core.dbg_reg_done.val();
        self.dm.reg_rdata.next = self.core.dbg_reg_rdata.val();
        self.dm.reg_err.next = self.core.dbg_reg_err.val();
        self.core.dbg_sb_req.next = self.dm.sb_req.val();
        self.core.dbg_sb_write.next = self.dm.sb_write.val();
        self.core.dbg_sb_addr.next = self.dm.sb_addr.val();
        self.core.dbg_sb_wdata.next = self.dm.sb_wdata.val();
        self.dm.sb_done.next = self.core.dbg_sb_done.val();
        self.dm.sb_err.next = self.core.dbg_sb_err.val();
        self.dm.sb_rdata.next = self.core.dbg_sb_rdata.val();
    }
}
