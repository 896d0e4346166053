//! `Rv32<IW, DW>`: the RV32IM machine-mode core (see [`super`] for the
//! memory map, the CSRs and the trap rules).
//!
//! Multi-cycle, one instruction at a time:
//!
//! | state | what |
//! |---|---|
//! | `Fetch` | present `pc` (a register) to the instruction memory |
//! | `Decode` | take a pending enabled interrupt, or an instruction-access fault of `pc`; else latch the instruction and present rs1/rs2 to the register file |
//! | `Exec` | execute; write rd; the next `pc` into its register (next clock `Fetch`), or the load address to the memories |
//! | `Mem` | a load from a memory or the timer: write rd, next `pc` |
//! | `Bus` | a peripheral-bus access: hold `bus_valid` until `bus_ready` |
//! | `MulDiv` | wait for [`MulDiv`](super::muldiv::MulDiv) (33 clocks) |
//! | `Halted` | debug mode (module doc of `cpu`, "Debug mode"): fetch nothing; serve `dbg_reg_*`, `dbg_sb_*`, resume |
//! | `DbgReg` | debug mode: an abstract register read (the register file's registered read) |
//! | `DbgCsr` | debug mode: an abstract CSR access, through the CSR instructions' logic |
//! | `DbgSb` | a debugger's system-bus access (from `Halted`, or from `Decode` between two instructions) |
//!
//! The next pc is registered before it reaches the instruction memory's
//! address pins (`Fetch`), so that the branch/jump/trap logic and the
//! instruction memory's address nets are in different clocks (the 62.5 MHz
//! core clock on the ECP5, docs/cpu.md). Clocks per instruction: 3 (ALU,
//! branches, jumps, stores to memory, CSR ops, fence, wfi, mret), 4 (loads
//! from memory or the timer), 3 + wait states + 1 (peripheral bus), 36 (M
//! extension). A trap costs its clock (Exec or Decode) and then starts the
//! handler's first instruction at `Fetch` like any jump.
//!
//! The memories are rust-hdl RAMs with registered reads ([`PRam`], block
//! RAM style): instruction memory 32 bits wide, `2^IW` words; data memory
//! four 8-bit lanes of `2^DW` entries (byte stores write one lane). The
//! register file is two copies (one per read port) of a 32 x 32 RAM; x0 is
//! never written and reads as 0 by a mux, so the RAMs' initial contents do
//! not matter.
//!
//! `load_we`/`load_addr`/`load_data` write one word into the instruction or
//! data memory (by the memory map; other addresses are ignored). They take
//! the memories' write ports from the core, so use them while `reset` is
//! held (program loading).
//!
//! The `tr_*` outputs report, for one clock after the edge that completed
//! it, each retired instruction and each trap (an RVFI-like trace for the
//! lock-step tests; unconnected in a system, Yosys removes them):
//! `tr_valid`; `tr_trap` (a trap was taken instead: `tr_cause` is the new
//! mcause, `tr_pc` the new mepc); `tr_pc`, `tr_insn`, `tr_next_pc`;
//! `tr_rd`/`tr_rd_wdata` (rd = 0: no register written); `tr_mem_strb`,
//! `tr_mem_addr` (word address), `tr_mem_wdata` for a store's write.

use super::muldiv::MulDiv;
use crate::common::pram::PRam;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum CpuState {
    Fetch,
    Decode,
    Exec,
    Mem,
    Bus,
    MulDiv,
    /// Debug mode: halted, fetching nothing (`cpu::debug`).
    Halted,
    /// Debug mode: an abstract register read (the register file's read).
    DbgReg,
    /// Debug mode: an abstract CSR access (through the CSR instructions'
    /// logic, `ir` holding a `csrrs`/`csrrw` made up for it).
    DbgCsr,
    /// A system-bus access of the debugger (halted, or between two
    /// instructions while running).
    DbgSb,
}

/// `IW`: instruction memory word-address bits (`2^IW` words); `DW`: data
/// memory word-address bits.
#[derive(LogicBlock)]
pub struct Rv32<const IW: usize, const DW: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: pc = 0, interrupts disabled, the timer's
    /// compare register all ones.
    pub reset: Signal<In, Bit>,
    /// Machine external interrupt request (level, mip.MEIP one clock later).
    pub ext_irq: Signal<In, Bit>,
    // Peripheral bus (module doc of `cpu`).
    pub bus_valid: Signal<Out, Bit>,
    pub bus_we: Signal<Out, Bit>,
    pub bus_addr: Signal<Out, Bits<32>>,
    pub bus_strb: Signal<Out, Bits<4>>,
    pub bus_wdata: Signal<Out, Bits<32>>,
    pub bus_ready: Signal<In, Bit>,
    pub bus_rdata: Signal<In, Bits<32>>,
    // Program loading.
    pub load_we: Signal<In, Bit>,
    pub load_addr: Signal<In, Bits<32>>,
    pub load_data: Signal<In, Bits<32>>,
    // Debug interface (`cpu::debug::Dm`; module doc "Debug mode").
    pub dbg_halt_req: Signal<In, Bit>,
    pub dbg_resume_req: Signal<In, Bit>,
    pub dbg_halted: Signal<Out, Bit>,
    pub dbg_resumed: Signal<Out, Bit>,
    pub dbg_reg_req: Signal<In, Bit>,
    pub dbg_reg_write: Signal<In, Bit>,
    /// `0x1000 | n`: GPR n; `0x000`-`0xFFF`: the CSR of that number.
    pub dbg_reg_num: Signal<In, Bits<13>>,
    pub dbg_reg_wdata: Signal<In, Bits<32>>,
    pub dbg_reg_done: Signal<Out, Bit>,
    pub dbg_reg_rdata: Signal<Out, Bits<32>>,
    /// With `dbg_reg_done`: the CSR does not exist, or a write to a
    /// read-only one (the DM's cmderr 3).
    pub dbg_reg_err: Signal<Out, Bit>,
    pub dbg_sb_req: Signal<In, Bit>,
    pub dbg_sb_write: Signal<In, Bit>,
    pub dbg_sb_addr: Signal<In, Bits<32>>,
    pub dbg_sb_wdata: Signal<In, Bits<32>>,
    pub dbg_sb_done: Signal<Out, Bit>,
    pub dbg_sb_err: Signal<Out, Bit>,
    pub dbg_sb_rdata: Signal<Out, Bits<32>>,
    // Retirement trace.
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

    /// Address bits above the instruction / data memory (their masks).
    imem_hi: Constant<Bits<32>>,
    dmem_hi: Constant<Bits<32>>,
    imem: PRam<Bits<32>, IW>,
    dmem0: PRam<Bits<8>, DW>,
    dmem1: PRam<Bits<8>, DW>,
    dmem2: PRam<Bits<8>, DW>,
    dmem3: PRam<Bits<8>, DW>,
    rf1: PRam<Bits<32>, 5>,
    rf2: PRam<Bits<32>, 5>,
    md: MulDiv,

    state: DFF<CpuState>,
    pc: DFF<Bits<32>>,
    ir: DFF<Bits<32>>,
    /// `pc` is outside the instruction memory (found when it was set).
    fetch_fault: DFF<Bit>,
    /// `pc + 4`, registered: the instruction memory reads there during
    /// `Exec` (but for a load), so that a sequential next instruction is
    /// in `Decode` the clock after `Exec`, without a `Fetch`.
    fa: DFF<Bits<32>>,
    /// Load / bus access in flight: address, funct3, source (0 imem, 1
    /// dmem, 2 timer, 3 bus), write, strobes, write data.
    ls_addr: DFF<Bits<32>>,
    ls_f3: DFF<Bits<3>>,
    ls_src: DFF<Bits<2>>,
    ls_we: DFF<Bit>,
    ls_strb: DFF<Bits<4>>,
    ls_wdata: DFF<Bits<32>>,
    meip: DFF<Bit>,
    // CSRs.
    st_mie: DFF<Bit>,
    st_mpie: DFF<Bit>,
    ie_meie: DFF<Bit>,
    ie_mtie: DFF<Bit>,
    mtvec: DFF<Bits<32>>,
    mscratch: DFF<Bits<32>>,
    mepc: DFF<Bits<32>>,
    mcause: DFF<Bits<32>>,
    mtval: DFF<Bits<32>>,
    cycle_lo: DFF<Bits<32>>,
    cycle_hi: DFF<Bits<32>>,
    instret_lo: DFF<Bits<32>>,
    instret_hi: DFF<Bits<32>>,
    // Debug mode.
    dmode: DFF<Bit>,
    dpc: DFF<Bits<32>>,
    dcsr_ebreakm: DFF<Bit>,
    dcsr_stepie: DFF<Bit>,
    dcsr_step: DFF<Bit>,
    dcsr_cause: DFF<Bits<3>>,
    /// Resumed with dcsr.step: halt at the next instruction boundary
    /// once `step_done`.
    stepping: DFF<Bit>,
    step_done: DFF<Bit>,
    // Trigger module (two mcontrol triggers): tselect; per trigger the
    // writable tdata1 bits, tdata2, and `match`: tdata2 equals the pc of
    // the instruction that reaches Decode next (compared a clock early).
    tsel: DFF<Bit>,
    tg0_dmode: DFF<Bit>,
    tg0_hit: DFF<Bit>,
    tg0_action: DFF<Bit>,
    tg0_m: DFF<Bit>,
    tg0_u: DFF<Bit>,
    tg0_exec: DFF<Bit>,
    tg0_addr: DFF<Bits<32>>,
    tg0_match: DFF<Bit>,
    tg1_dmode: DFF<Bit>,
    tg1_hit: DFF<Bit>,
    tg1_action: DFF<Bit>,
    tg1_m: DFF<Bit>,
    tg1_u: DFF<Bit>,
    tg1_exec: DFF<Bit>,
    tg1_addr: DFF<Bits<32>>,
    tg1_match: DFF<Bit>,
    // Timer.
    mtime_lo: DFF<Bits<32>>,
    mtime_hi: DFF<Bits<32>>,
    mtimecmp_lo: DFF<Bits<32>>,
    mtimecmp_hi: DFF<Bits<32>>,
    // Trace registers.
    t_valid: DFF<Bit>,
    t_trap: DFF<Bit>,
    t_cause: DFF<Bits<32>>,
    t_pc: DFF<Bits<32>>,
    t_insn: DFF<Bits<32>>,
    t_next: DFF<Bits<32>>,
    t_rd: DFF<Bits<5>>,
    t_wdata: DFF<Bits<32>>,
    t_strb: DFF<Bits<4>>,
    t_maddr: DFF<Bits<32>>,
    t_mwdata: DFF<Bits<32>>,

    // Decode of `ir`.
    opcode: Signal<Local, Bits<7>>,
    rd: Signal<Local, Bits<5>>,
    f3: Signal<Local, Bits<3>>,
    rs1: Signal<Local, Bits<5>>,
    f7: Signal<Local, Bits<7>>,
    csr: Signal<Local, Bits<12>>,
    imm_i: Signal<Local, Bits<32>>,
    imm_s: Signal<Local, Bits<32>>,
    imm_b: Signal<Local, Bits<32>>,
    imm_j: Signal<Local, Bits<32>>,
    rs1v: Signal<Local, Bits<32>>,
    rs2v: Signal<Local, Bits<32>>,
    pc4: Signal<Local, Bits<32>>,
    // ALU.
    op_b: Signal<Local, Bits<32>>,
    shamt: Signal<Local, Bits<5>>,
    alu: Signal<Local, Bits<32>>,
    alu_ok: Signal<Local, Bit>,
    taken: Signal<Local, Bit>,
    /// The next pc is `pc + 4` (no jump taken, no trap, no mret).
    seq: Signal<Local, Bit>,
    target: Signal<Local, Bits<32>>,
    // Loads and stores.
    maddr: Signal<Local, Bits<32>>,
    misal: Signal<Local, Bit>,
    in_imem: Signal<Local, Bit>,
    in_dmem: Signal<Local, Bit>,
    in_clint: Signal<Local, Bit>,
    in_bus: Signal<Local, Bit>,
    st_data: Signal<Local, Bits<32>>,
    st_strb: Signal<Local, Bits<4>>,
    dm_we: Signal<Local, Bits<4>>,
    ld_word: Signal<Local, Bits<32>>,
    ld_shift: Signal<Local, Bits<32>>,
    ld_val: Signal<Local, Bits<32>>,
    clint_rd: Signal<Local, Bits<32>>,
    mtip: Signal<Local, Bit>,
    // CSR access.
    csr_src: Signal<Local, Bits<32>>,
    csr_old: Signal<Local, Bits<32>>,
    csr_new: Signal<Local, Bits<32>>,
    csr_ok: Signal<Local, Bit>,
    csr_wr: Signal<Local, Bit>,
    // Outcome of this clock.
    retire: Signal<Local, Bit>,
    trap: Signal<Local, Bit>,
    cause: Signal<Local, Bits<32>>,
    tval: Signal<Local, Bits<32>>,
    wb_en: Signal<Local, Bit>,
    wb_data: Signal<Local, Bits<32>>,
    jump: Signal<Local, Bit>,
    jump_pc: Signal<Local, Bits<32>>,
    trap_vec: Signal<Local, Bits<32>>,
    csr_we: Signal<Local, Bit>,
    mem_addr: Signal<Local, Bits<32>>,
    mem_wdata: Signal<Local, Bits<32>>,
    load_dm: Signal<Local, Bit>,
    mem_strb: Signal<Local, Bits<4>>,
    // Debug.
    /// Interrupts may be taken (not while stepping with dcsr.stepie = 0).
    int_ok: Signal<Local, Bit>,
    halt_now: Signal<Local, Bit>,
    /// A system-bus access starts this clock.
    sb_go: Signal<Local, Bit>,
    dcsr_val: Signal<Local, Bits<32>>,
    sb_done: Signal<Local, Bit>,
    /// The end of a step: halt (cause 4) before the next instruction.
    step_end: Signal<Local, Bit>,
    // Triggers.
    tg0_data1: Signal<Local, Bits<32>>,
    tg1_data1: Signal<Local, Bits<32>>,
    /// The pc the triggers compare with this clock.
    tg_pc: Signal<Local, Bits<32>>,
    /// The selected trigger's tdata1/tdata2 may be written (dmode = 0, or
    /// in debug mode).
    tg_wok: Signal<Local, Bit>,
    tg0_fire: Signal<Local, Bit>,
    tg1_fire: Signal<Local, Bit>,
    /// A trigger fires with action 1 (enter debug mode) / 0 (breakpoint
    /// exception) on the instruction in Decode.
    trig_dbg: Signal<Local, Bit>,
    trig_exc: Signal<Local, Bit>,
}

impl<const IW: usize, const DW: usize> Default for Rv32<IW, DW> {
    fn default() -> Self {
        assert!(IW + 2 <= 28 && DW + 2 <= 28, "memories up to 256 MiB");
        Self {
            clock: Default::default(),
            reset: Default::default(),
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
            dbg_halt_req: Default::default(),
            dbg_resume_req: Default::default(),
            dbg_halted: Default::default(),
            dbg_resumed: Default::default(),
            dbg_reg_req: Default::default(),
            dbg_reg_write: Default::default(),
            dbg_reg_num: Default::default(),
            dbg_reg_wdata: Default::default(),
            dbg_reg_done: Default::default(),
            dbg_reg_rdata: Default::default(),
            dbg_reg_err: Default::default(),
            dbg_sb_req: Default::default(),
            dbg_sb_write: Default::default(),
            dbg_sb_addr: Default::default(),
            dbg_sb_wdata: Default::default(),
            dbg_sb_done: Default::default(),
            dbg_sb_err: Default::default(),
            dbg_sb_rdata: Default::default(),
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
            imem_hi: Constant::new((!((4u64 << IW) - 1) & 0xFFFF_FFFF_u64).into()),
            dmem_hi: Constant::new((!((4u64 << DW) - 1) & 0xFFFF_FFFF_u64).into()),
            imem: PRam::default().block(),
            dmem0: PRam::default().block(),
            dmem1: PRam::default().block(),
            dmem2: PRam::default().block(),
            dmem3: PRam::default().block(),
            rf1: Default::default(),
            rf2: Default::default(),
            md: Default::default(),
            state: Default::default(),
            pc: Default::default(),
            ir: Default::default(),
            fetch_fault: Default::default(),
            fa: Default::default(),
            ls_addr: Default::default(),
            ls_f3: Default::default(),
            ls_src: Default::default(),
            ls_we: Default::default(),
            ls_strb: Default::default(),
            ls_wdata: Default::default(),
            meip: Default::default(),
            st_mie: Default::default(),
            st_mpie: Default::default(),
            ie_meie: Default::default(),
            ie_mtie: Default::default(),
            mtvec: Default::default(),
            mscratch: Default::default(),
            mepc: Default::default(),
            mcause: Default::default(),
            mtval: Default::default(),
            cycle_lo: Default::default(),
            cycle_hi: Default::default(),
            instret_lo: Default::default(),
            instret_hi: Default::default(),
            dmode: Default::default(),
            dpc: Default::default(),
            dcsr_ebreakm: Default::default(),
            dcsr_stepie: Default::default(),
            dcsr_step: Default::default(),
            dcsr_cause: Default::default(),
            stepping: Default::default(),
            step_done: Default::default(),
            tsel: Default::default(),
            tg0_dmode: Default::default(),
            tg0_hit: Default::default(),
            tg0_action: Default::default(),
            tg0_m: Default::default(),
            tg0_u: Default::default(),
            tg0_exec: Default::default(),
            tg0_addr: Default::default(),
            tg0_match: Default::default(),
            tg1_dmode: Default::default(),
            tg1_hit: Default::default(),
            tg1_action: Default::default(),
            tg1_m: Default::default(),
            tg1_u: Default::default(),
            tg1_exec: Default::default(),
            tg1_addr: Default::default(),
            tg1_match: Default::default(),
            mtime_lo: Default::default(),
            mtime_hi: Default::default(),
            mtimecmp_lo: Default::default(),
            mtimecmp_hi: Default::default(),
            t_valid: Default::default(),
            t_trap: Default::default(),
            t_cause: Default::default(),
            t_pc: Default::default(),
            t_insn: Default::default(),
            t_next: Default::default(),
            t_rd: Default::default(),
            t_wdata: Default::default(),
            t_strb: Default::default(),
            t_maddr: Default::default(),
            t_mwdata: Default::default(),
            opcode: Default::default(),
            rd: Default::default(),
            f3: Default::default(),
            rs1: Default::default(),
            f7: Default::default(),
            csr: Default::default(),
            imm_i: Default::default(),
            imm_s: Default::default(),
            imm_b: Default::default(),
            imm_j: Default::default(),
            rs1v: Default::default(),
            rs2v: Default::default(),
            pc4: Default::default(),
            op_b: Default::default(),
            shamt: Default::default(),
            alu: Default::default(),
            alu_ok: Default::default(),
            taken: Default::default(),
            seq: Default::default(),
            target: Default::default(),
            maddr: Default::default(),
            misal: Default::default(),
            in_imem: Default::default(),
            in_dmem: Default::default(),
            in_clint: Default::default(),
            in_bus: Default::default(),
            st_data: Default::default(),
            st_strb: Default::default(),
            dm_we: Default::default(),
            ld_word: Default::default(),
            ld_shift: Default::default(),
            ld_val: Default::default(),
            clint_rd: Default::default(),
            mtip: Default::default(),
            csr_src: Default::default(),
            csr_old: Default::default(),
            csr_new: Default::default(),
            csr_ok: Default::default(),
            csr_wr: Default::default(),
            retire: Default::default(),
            trap: Default::default(),
            cause: Default::default(),
            tval: Default::default(),
            wb_en: Default::default(),
            wb_data: Default::default(),
            jump: Default::default(),
            jump_pc: Default::default(),
            trap_vec: Default::default(),
            csr_we: Default::default(),
            mem_addr: Default::default(),
            mem_wdata: Default::default(),
            load_dm: Default::default(),
            mem_strb: Default::default(),
            int_ok: Default::default(),
            halt_now: Default::default(),
            sb_go: Default::default(),
            dcsr_val: Default::default(),
            sb_done: Default::default(),
            step_end: Default::default(),
            tg0_data1: Default::default(),
            tg1_data1: Default::default(),
            tg_pc: Default::default(),
            tg_wok: Default::default(),
            tg0_fire: Default::default(),
            tg1_fire: Default::default(),
            trig_dbg: Default::default(),
            trig_exc: Default::default(),
        }
    }
}

impl<const IW: usize, const DW: usize> Rv32<IW, DW> {
    /// The instruction memory's contents at FPGA configuration come from
    /// `path` in synthesis ([`PRam::synthesis_init`]); simulation is
    /// unchanged (loaded through the load port).
    pub fn imem_synthesis_init(mut self, path: &'static str) -> Self {
        self.imem = self.imem.synthesis_init(path);
        self
    }
}

impl<const IW: usize, const DW: usize> Logic for Rv32<IW, DW> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            pc,
            ir,
            fetch_fault,
            fa,
            ls_addr,
            ls_f3,
            ls_src,
            ls_we,
            ls_strb,
            ls_wdata,
            meip,
            st_mie,
            st_mpie,
            ie_meie,
            ie_mtie,
            mtvec,
            mscratch,
            mepc,
            mcause,
            mtval,
            cycle_lo,
            cycle_hi,
            instret_lo,
            instret_hi,
            dmode,
            dpc,
            dcsr_ebreakm,
            dcsr_stepie,
            dcsr_step,
            dcsr_cause,
            stepping,
            step_done,
            tsel,
            tg0_dmode,
            tg0_hit,
            tg0_action,
            tg0_m,
            tg0_u,
            tg0_exec,
            tg0_addr,
            tg0_match,
            tg1_dmode,
            tg1_hit,
            tg1_action,
            tg1_m,
            tg1_u,
            tg1_exec,
            tg1_addr,
            tg1_match,
            mtime_lo,
            mtime_hi,
            mtimecmp_lo,
            mtimecmp_hi,
            t_valid,
            t_trap,
            t_cause,
            t_pc,
            t_insn,
            t_next,
            t_rd,
            t_wdata,
            t_strb,
            t_maddr,
            t_mwdata
        );
        clock!(self, clock, md);
        self.imem.read_clock.next = self.clock.val();
        self.imem.write_clock.next = self.clock.val();
        self.dmem0.read_clock.next = self.clock.val();
        self.dmem0.write_clock.next = self.clock.val();
        self.dmem1.read_clock.next = self.clock.val();
        self.dmem1.write_clock.next = self.clock.val();
        self.dmem2.read_clock.next = self.clock.val();
        self.dmem2.write_clock.next = self.clock.val();
        self.dmem3.read_clock.next = self.clock.val();
        self.dmem3.write_clock.next = self.clock.val();
        self.rf1.read_clock.next = self.clock.val();
        self.rf1.write_clock.next = self.clock.val();
        self.rf2.read_clock.next = self.clock.val();
        self.rf2.write_clock.next = self.clock.val();
        self.md.reset.next = self.reset.val();

        self.tr_valid.next = self.t_valid.q.val();
        self.tr_trap.next = self.t_trap.q.val();
        self.tr_cause.next = self.t_cause.q.val();
        self.tr_pc.next = self.t_pc.q.val();
        self.tr_insn.next = self.t_insn.q.val();
        self.tr_next_pc.next = self.t_next.q.val();
        self.tr_rd.next = self.t_rd.q.val();
        self.tr_rd_wdata.next = self.t_wdata.q.val();
        self.tr_mem_strb.next = self.t_strb.q.val();
        self.tr_mem_addr.next = self.t_maddr.q.val();
        self.tr_mem_wdata.next = self.t_mwdata.q.val();

        // ---- Decode of the latched instruction.
        self.opcode.next = self.ir.q.val().get_bits::<7>(0);
        self.rd.next = self.ir.q.val().get_bits::<5>(7);
        self.f3.next = self.ir.q.val().get_bits::<3>(12);
        self.rs1.next = self.ir.q.val().get_bits::<5>(15);
        self.f7.next = self.ir.q.val().get_bits::<7>(25);
        self.csr.next = self.ir.q.val().get_bits::<12>(20);
        self.imm_i.next = bit_cast::<32, 12>(self.ir.q.val().get_bits::<12>(20));
        self.imm_s.next =
            (bit_cast::<32, 7>(self.f7.val()) << 5) | bit_cast::<32, 5>(self.rd.val());
        self.imm_b.next = (bit_cast::<32, 4>(self.ir.q.val().get_bits::<4>(8)) << 1)
            | (bit_cast::<32, 6>(self.ir.q.val().get_bits::<6>(25)) << 5);
        if self.ir.q.val().get_bit(7) {
            self.imm_b.next = self.imm_b.val() | 0x800;
        }
        self.imm_j.next = (bit_cast::<32, 10>(self.ir.q.val().get_bits::<10>(21)) << 1)
            | (self.ir.q.val() & 0x000F_F000_u64);
        if self.ir.q.val().get_bit(20) {
            self.imm_j.next = self.imm_j.val() | 0x800;
        }
        if self.ir.q.val().get_bit(31) {
            self.imm_i.next = self.imm_i.val() | 0xFFFF_F000_u64;
            self.imm_s.next = self.imm_s.val() | 0xFFFF_F000_u64;
            self.imm_b.next = self.imm_b.val() | 0xFFFF_F000_u64;
            self.imm_j.next = self.imm_j.val() | 0xFFF0_0000_u64;
        }
        self.rs1v.next = self.rf1.read_data.val();
        if self.rs1.val() == 0 {
            self.rs1v.next = 0.into();
        }
        self.rs2v.next = self.rf2.read_data.val();
        if self.ir.q.val().get_bits::<5>(20) == 0 {
            self.rs2v.next = 0.into();
        }
        self.pc4.next = self.pc.q.val() + 4;

        // ---- ALU (OP, OP-IMM).
        self.op_b.next = self.imm_i.val();
        if self.opcode.val() == 0x33 {
            self.op_b.next = self.rs2v.val();
        }
        self.shamt.next = self.op_b.val().get_bits::<5>(0);
        self.alu.next = self.rs1v.val() + self.op_b.val();
        if self.f3.val() == 0 {
            if (self.opcode.val() == 0x33) & (self.f7.val() == 0x20) {
                self.alu.next = self.rs1v.val() - self.op_b.val();
            }
        } else if self.f3.val() == 1 {
            self.alu.next = self.rs1v.val() << self.shamt.val();
        } else if self.f3.val() == 2 {
            self.alu.next = 0.into();
            if (self.rs1v.val() ^ 0x8000_0000_u64) < (self.op_b.val() ^ 0x8000_0000_u64) {
                self.alu.next = 1.into();
            }
        } else if self.f3.val() == 3 {
            self.alu.next = 0.into();
            if self.rs1v.val() < self.op_b.val() {
                self.alu.next = 1.into();
            }
        } else if self.f3.val() == 4 {
            self.alu.next = self.rs1v.val() ^ self.op_b.val();
        } else if self.f3.val() == 5 {
            self.alu.next = self.rs1v.val() >> self.shamt.val();
            if self.f7.val().get_bit(5) & self.rs1v.val().get_bit(31) {
                self.alu.next = !((!self.rs1v.val()) >> self.shamt.val());
            }
        } else if self.f3.val() == 6 {
            self.alu.next = self.rs1v.val() | self.op_b.val();
        } else {
            self.alu.next = self.rs1v.val() & self.op_b.val();
        }
        // Encodings of OP / OP-IMM that exist (M is decided apart).
        self.alu_ok.next = true;
        if self.opcode.val() == 0x33 {
            self.alu_ok.next = (self.f7.val() == 0)
                | ((self.f7.val() == 0x20) & ((self.f3.val() == 0) | (self.f3.val() == 5)));
        } else if self.f3.val() == 1 {
            self.alu_ok.next = self.f7.val() == 0;
        } else if self.f3.val() == 5 {
            self.alu_ok.next = (self.f7.val() == 0) | (self.f7.val() == 0x20);
        }

        // ---- Branches and jumps.
        self.taken.next = false;
        if self.f3.val() == 0 {
            self.taken.next = self.rs1v.val() == self.rs2v.val();
        } else if self.f3.val() == 1 {
            self.taken.next = self.rs1v.val() != self.rs2v.val();
        } else if self.f3.val() == 4 {
            self.taken.next =
                (self.rs1v.val() ^ 0x8000_0000_u64) < (self.rs2v.val() ^ 0x8000_0000_u64);
        } else if self.f3.val() == 5 {
            self.taken.next =
                (self.rs1v.val() ^ 0x8000_0000_u64) >= (self.rs2v.val() ^ 0x8000_0000_u64);
        } else if self.f3.val() == 6 {
            self.taken.next = self.rs1v.val() < self.rs2v.val();
        } else if self.f3.val() == 7 {
            self.taken.next = self.rs1v.val() >= self.rs2v.val();
        }
        self.target.next = self.pc.q.val() + self.imm_b.val();
        if self.opcode.val() == 0x6F {
            self.target.next = self.pc.q.val() + self.imm_j.val();
        } else if self.opcode.val() == 0x67 {
            self.target.next = (self.rs1v.val() + self.imm_i.val()) & 0xFFFF_FFFE_u64;
        }

        // ---- Loads and stores: address, region, lanes.
        self.maddr.next = self.rs1v.val() + self.imm_i.val();
        if self.opcode.val() == 0x23 {
            self.maddr.next = self.rs1v.val() + self.imm_s.val();
        }
        self.misal.next = ((self.f3.val().get_bits::<2>(0) == 1) & self.maddr.val().get_bit(0))
            | ((self.f3.val().get_bits::<2>(0) == 2) & (self.maddr.val().get_bits::<2>(0) != 0));
        self.in_imem.next = (self.maddr.val() & self.imem_hi.val()) == 0;
        self.in_dmem.next = (self.maddr.val() & self.dmem_hi.val()) == 0x1000_0000_u64;
        self.in_clint.next = (self.maddr.val() & 0xFFFF_0000_u64) == 0x0200_0000_u64;
        self.in_bus.next = (self.maddr.val() & 0xF000_0000_u64) == 0x2000_0000_u64;
        self.st_data.next = self.rs2v.val();
        self.st_strb.next = 0xF.into();
        if self.f3.val().get_bits::<2>(0) == 0 {
            self.st_data.next = bit_cast::<32, 8>(self.rs2v.val().get_bits::<8>(0))
                | (bit_cast::<32, 8>(self.rs2v.val().get_bits::<8>(0)) << 8)
                | (bit_cast::<32, 8>(self.rs2v.val().get_bits::<8>(0)) << 16)
                | (bit_cast::<32, 8>(self.rs2v.val().get_bits::<8>(0)) << 24);
            if self.maddr.val().get_bits::<2>(0) == 0 {
                self.st_strb.next = 1.into();
            } else if self.maddr.val().get_bits::<2>(0) == 1 {
                self.st_strb.next = 2.into();
            } else if self.maddr.val().get_bits::<2>(0) == 2 {
                self.st_strb.next = 4.into();
            } else {
                self.st_strb.next = 8.into();
            }
        } else if self.f3.val().get_bits::<2>(0) == 1 {
            self.st_data.next = bit_cast::<32, 16>(self.rs2v.val().get_bits::<16>(0))
                | (bit_cast::<32, 16>(self.rs2v.val().get_bits::<16>(0)) << 16);
            self.st_strb.next = 3.into();
            if self.maddr.val().get_bit(1) {
                self.st_strb.next = 0xC.into();
            }
        }
        // The timer's registers and the loaded word.
        self.mtip.next = (self.mtime_hi.q.val() > self.mtimecmp_hi.q.val())
            | ((self.mtime_hi.q.val() == self.mtimecmp_hi.q.val())
                & (self.mtime_lo.q.val() >= self.mtimecmp_lo.q.val()));
        self.clint_rd.next = 0.into();
        if (self.ls_addr.q.val() & 0xFFFC) == 0x4000 {
            self.clint_rd.next = self.mtimecmp_lo.q.val();
        } else if (self.ls_addr.q.val() & 0xFFFC) == 0x4004 {
            self.clint_rd.next = self.mtimecmp_hi.q.val();
        } else if (self.ls_addr.q.val() & 0xFFFC) == 0xBFF8 {
            self.clint_rd.next = self.mtime_lo.q.val();
        } else if (self.ls_addr.q.val() & 0xFFFC) == 0xBFFC {
            self.clint_rd.next = self.mtime_hi.q.val();
        }
        self.ld_word.next = self.imem.read_data.val();
        if self.ls_src.q.val() == 1 {
            self.ld_word.next = bit_cast::<32, 8>(self.dmem0.read_data.val())
                | (bit_cast::<32, 8>(self.dmem1.read_data.val()) << 8)
                | (bit_cast::<32, 8>(self.dmem2.read_data.val()) << 16)
                | (bit_cast::<32, 8>(self.dmem3.read_data.val()) << 24);
        } else if self.ls_src.q.val() == 2 {
            self.ld_word.next = self.clint_rd.val();
        } else if self.ls_src.q.val() == 3 {
            self.ld_word.next = self.bus_rdata.val();
        }
        self.ld_shift.next = self.ld_word.val();
        if self.ls_addr.q.val().get_bits::<2>(0) == 1 {
            self.ld_shift.next = self.ld_word.val() >> 8;
        } else if self.ls_addr.q.val().get_bits::<2>(0) == 2 {
            self.ld_shift.next = self.ld_word.val() >> 16;
        } else if self.ls_addr.q.val().get_bits::<2>(0) == 3 {
            self.ld_shift.next = self.ld_word.val() >> 24;
        }
        self.ld_val.next = self.ld_shift.val();
        if self.ls_f3.q.val().get_bits::<2>(0) == 0 {
            self.ld_val.next = self.ld_shift.val() & 0xFF;
            if !self.ls_f3.q.val().get_bit(2) & self.ld_shift.val().get_bit(7) {
                self.ld_val.next = self.ld_shift.val() | 0xFFFF_FF00_u64;
            }
        } else if self.ls_f3.q.val().get_bits::<2>(0) == 1 {
            self.ld_val.next = self.ld_shift.val() & 0xFFFF;
            if !self.ls_f3.q.val().get_bit(2) & self.ld_shift.val().get_bit(15) {
                self.ld_val.next = self.ld_shift.val() | 0xFFFF_0000_u64;
            }
        }

        // ---- Debug CSRs' values: dcsr; each trigger's tdata1 (mcontrol,
        // type 2, maskmax 0; dmode, hit, action 0/1, m, u, execute
        // writable, the rest 0).
        self.dcsr_val.next = (bit_cast::<32, 3>(self.dcsr_cause.q.val()) << 6) | 0x4000_0003_u64;
        if self.dcsr_ebreakm.q.val() {
            self.dcsr_val.next = self.dcsr_val.val() | 0x8000;
        }
        if self.dcsr_stepie.q.val() {
            self.dcsr_val.next = self.dcsr_val.val() | 0x800;
        }
        if self.dcsr_step.q.val() {
            self.dcsr_val.next = self.dcsr_val.val() | 0x4;
        }
        self.tg0_data1.next = (bit_cast::<32, 1>(self.tg0_dmode.q.val().into()) << 27)
            | (bit_cast::<32, 1>(self.tg0_hit.q.val().into()) << 20)
            | (bit_cast::<32, 1>(self.tg0_action.q.val().into()) << 12)
            | (bit_cast::<32, 1>(self.tg0_m.q.val().into()) << 6)
            | (bit_cast::<32, 1>(self.tg0_u.q.val().into()) << 3)
            | (bit_cast::<32, 1>(self.tg0_exec.q.val().into()) << 2)
            | 0x2000_0000_u64;
        self.tg1_data1.next = (bit_cast::<32, 1>(self.tg1_dmode.q.val().into()) << 27)
            | (bit_cast::<32, 1>(self.tg1_hit.q.val().into()) << 20)
            | (bit_cast::<32, 1>(self.tg1_action.q.val().into()) << 12)
            | (bit_cast::<32, 1>(self.tg1_m.q.val().into()) << 6)
            | (bit_cast::<32, 1>(self.tg1_u.q.val().into()) << 3)
            | (bit_cast::<32, 1>(self.tg1_exec.q.val().into()) << 2)
            | 0x2000_0000_u64;
        self.tg_wok.next = !self.tg0_dmode.q.val() | self.dmode.q.val();
        if self.tsel.q.val() {
            self.tg_wok.next = !self.tg1_dmode.q.val() | self.dmode.q.val();
        }

        // ---- CSRs: the old value, whether it exists, the new value. An
        // abstract command (DbgCsr) writes the DM's data0.
        self.csr_src.next = self.rs1v.val();
        if self.f3.val().get_bit(2) {
            self.csr_src.next = bit_cast::<32, 5>(self.rs1.val());
        }
        if self.state.q.val() == CpuState::DbgCsr {
            self.csr_src.next = self.dbg_reg_wdata.val();
        }
        self.csr_ok.next = true;
        self.csr_old.next = 0.into();
        if self.csr.val() == 0x300 {
            self.csr_old.next = 0x1800.into();
            if self.st_mie.q.val() {
                self.csr_old.next = self.csr_old.val() | 0x8;
            }
            if self.st_mpie.q.val() {
                self.csr_old.next = self.csr_old.val() | 0x80;
            }
        } else if self.csr.val() == 0x301 {
            self.csr_old.next = 0x4000_1100_u64.into();
        } else if self.csr.val() == 0x304 {
            if self.ie_mtie.q.val() {
                self.csr_old.next = self.csr_old.val() | 0x80;
            }
            if self.ie_meie.q.val() {
                self.csr_old.next = self.csr_old.val() | 0x800;
            }
        } else if self.csr.val() == 0x305 {
            self.csr_old.next = self.mtvec.q.val();
        } else if self.csr.val() == 0x340 {
            self.csr_old.next = self.mscratch.q.val();
        } else if self.csr.val() == 0x341 {
            self.csr_old.next = self.mepc.q.val();
        } else if self.csr.val() == 0x342 {
            self.csr_old.next = self.mcause.q.val();
        } else if self.csr.val() == 0x343 {
            self.csr_old.next = self.mtval.q.val();
        } else if self.csr.val() == 0x344 {
            if self.mtip.val() {
                self.csr_old.next = self.csr_old.val() | 0x80;
            }
            if self.meip.q.val() {
                self.csr_old.next = self.csr_old.val() | 0x800;
            }
        } else if (self.csr.val() == 0xB00) | (self.csr.val() == 0xC00) {
            self.csr_old.next = self.cycle_lo.q.val();
        } else if (self.csr.val() == 0xB80) | (self.csr.val() == 0xC80) {
            self.csr_old.next = self.cycle_hi.q.val();
        } else if (self.csr.val() == 0xB02) | (self.csr.val() == 0xC02) {
            self.csr_old.next = self.instret_lo.q.val();
        } else if (self.csr.val() == 0xB82) | (self.csr.val() == 0xC82) {
            self.csr_old.next = self.instret_hi.q.val();
        } else if self.csr.val() == 0x7A0 {
            // tselect
            self.csr_old.next = bit_cast::<32, 1>(self.tsel.q.val().into());
        } else if self.csr.val() == 0x7A1 {
            self.csr_old.next = self.tg0_data1.val();
            if self.tsel.q.val() {
                self.csr_old.next = self.tg1_data1.val();
            }
        } else if self.csr.val() == 0x7A2 {
            self.csr_old.next = self.tg0_addr.q.val();
            if self.tsel.q.val() {
                self.csr_old.next = self.tg1_addr.q.val();
            }
        } else if self.csr.val() == 0x7A4 {
            // tinfo: type 2 (mcontrol) only; writes are ignored.
            self.csr_old.next = 4.into();
        } else if (self.csr.val() == 0x7B0) & self.dmode.q.val() {
            // dcsr and dpc: debug mode only (abstract commands).
            self.csr_old.next = self.dcsr_val.val();
        } else if (self.csr.val() == 0x7B1) & self.dmode.q.val() {
            self.csr_old.next = self.dpc.q.val();
        } else if (self.csr.val() == 0x310)
            | ((self.csr.val() >= 0xF11) & (self.csr.val() <= 0xF15))
        {
            // mstatush, mvendorid, marchid, mimpid, mhartid, mconfigptr: 0.
        } else {
            self.csr_ok.next = false;
        }
        self.csr_wr.next = (self.f3.val().get_bits::<2>(0) == 1) | (self.rs1.val() != 0);
        if self.csr_wr.val() & (self.csr.val().get_bits::<2>(10) == 3) {
            self.csr_ok.next = false;
        }
        self.csr_new.next = self.csr_src.val();
        if self.f3.val().get_bits::<2>(0) == 2 {
            self.csr_new.next = self.csr_old.val() | self.csr_src.val();
        } else if self.f3.val().get_bits::<2>(0) == 3 {
            self.csr_new.next = self.csr_old.val() & !self.csr_src.val();
        }

        // ---- Triggers: tdata2 compared with the pc of the instruction that
        // reaches Decode next, registered (Fetch: pc; Exec: pc + 4, for a
        // sequential next instruction that skips Fetch). In Decode they
        // fire if enabled (m, execute); not at the end of a step (External
        // Debug Support 0.13.2, "Single Step": a trigger at the new address fires
        // when the hart attempts to execute that instruction).
        self.tg_pc.next = self.fa.q.val();
        if self.state.q.val() == CpuState::Fetch {
            self.tg_pc.next = self.pc.q.val();
        }
        self.tg0_match.d.next = self.tg0_addr.q.val() == self.tg_pc.val();
        self.tg1_match.d.next = self.tg1_addr.q.val() == self.tg_pc.val();
        self.tg0_fire.next = self.tg0_match.q.val() & self.tg0_m.q.val() & self.tg0_exec.q.val();
        self.tg1_fire.next = self.tg1_match.q.val() & self.tg1_m.q.val() & self.tg1_exec.q.val();
        self.step_end.next = self.stepping.q.val() & self.step_done.q.val();
        self.trig_dbg.next = !self.step_end.val()
            & ((self.tg0_fire.val() & self.tg0_action.q.val())
                | (self.tg1_fire.val() & self.tg1_action.q.val()));
        self.trig_exc.next = (self.tg0_fire.val() & !self.tg0_action.q.val())
            | (self.tg1_fire.val() & !self.tg1_action.q.val());

        // ---- The state machine.
        self.retire.next = false;
        self.trap.next = false;
        self.cause.next = 2.into();
        self.tval.next = self.ir.q.val();
        self.wb_en.next = false;
        self.wb_data.next = self.alu.val();
        self.jump.next = false;
        self.jump_pc.next = self.pc4.val();
        self.seq.next = true;
        self.fa.d.next = self.pc4.val();
        self.csr_we.next = false;
        self.mem_strb.next = 0.into();
        self.mem_addr.next = self.maddr.val() & 0xFFFF_FFFC_u64;
        self.mem_wdata.next = self.st_data.val();
        self.dm_we.next = 0.into();
        self.md.start.next = false;
        self.md.op.next = self.f3.val();
        self.md.a.next = self.rs1v.val();
        self.md.b.next = self.rs2v.val();
        self.bus_valid.next = false;
        self.bus_we.next = self.ls_we.q.val();
        self.bus_addr.next = self.ls_addr.q.val() & 0xFFFF_FFFC_u64;
        self.bus_strb.next = self.ls_strb.q.val();
        self.bus_wdata.next = self.ls_wdata.q.val();
        self.meip.d.next = self.ext_irq.val();
        self.int_ok.next = !(self.stepping.q.val() & !self.dcsr_stepie.q.val());
        match self.state.q.val() {
            CpuState::Fetch => {
                // The instruction memory reads at pc (registered address).
                self.fetch_fault.d.next = (self.pc.q.val() & self.imem_hi.val()) != 0;
                self.state.d.next = CpuState::Decode;
            }
            CpuState::Decode => {
                self.ir.d.next = self.imem.read_data.val();
                if self.int_ok.val()
                    & self.st_mie.q.val()
                    & self.meip.q.val()
                    & self.ie_meie.q.val()
                {
                    self.trap.next = true;
                    self.cause.next = 0x8000_000B_u64.into();
                    self.tval.next = 0.into();
                } else if self.int_ok.val()
                    & self.st_mie.q.val()
                    & self.mtip.val()
                    & self.ie_mtie.q.val()
                {
                    self.trap.next = true;
                    self.cause.next = 0x8000_0007_u64.into();
                    self.tval.next = 0.into();
                } else if self.trig_exc.val() {
                    // A trigger with action 0: breakpoint exception.
                    self.trap.next = true;
                    self.cause.next = 3.into();
                    self.tval.next = self.pc.q.val();
                } else if self.fetch_fault.q.val() {
                    self.trap.next = true;
                    self.cause.next = 1.into();
                    self.tval.next = self.pc.q.val();
                } else {
                    self.state.d.next = CpuState::Exec;
                }
            }
            CpuState::Exec => {
                if self.opcode.val() == 0x37 {
                    // LUI
                    self.wb_en.next = true;
                    self.wb_data.next = self.ir.q.val() & 0xFFFF_F000_u64;
                    self.retire.next = true;
                    self.jump.next = true;
                } else if self.opcode.val() == 0x17 {
                    // AUIPC
                    self.wb_en.next = true;
                    self.wb_data.next = self.pc.q.val() + (self.ir.q.val() & 0xFFFF_F000_u64);
                    self.retire.next = true;
                    self.jump.next = true;
                } else if (self.opcode.val() == 0x6F)
                    | ((self.opcode.val() == 0x67) & (self.f3.val() == 0))
                {
                    // JAL, JALR
                    if self.target.val().get_bit(1) {
                        self.trap.next = true;
                        self.cause.next = 0.into();
                        self.tval.next = self.target.val();
                    } else {
                        self.wb_en.next = true;
                        self.wb_data.next = self.pc4.val();
                        self.retire.next = true;
                        self.jump.next = true;
                        self.jump_pc.next = self.target.val();
                        self.seq.next = false;
                    }
                } else if (self.opcode.val() == 0x63) & (self.f3.val() != 2) & (self.f3.val() != 3)
                {
                    // BRANCH
                    if self.taken.val() & self.target.val().get_bit(1) {
                        self.trap.next = true;
                        self.cause.next = 0.into();
                        self.tval.next = self.target.val();
                    } else {
                        self.retire.next = true;
                        self.jump.next = true;
                        if self.taken.val() {
                            self.jump_pc.next = self.target.val();
                            self.seq.next = false;
                        }
                    }
                } else if (self.opcode.val() == 0x33) & (self.f7.val() == 1) {
                    // M extension
                    self.md.start.next = true;
                    self.state.d.next = CpuState::MulDiv;
                } else if ((self.opcode.val() == 0x13) | (self.opcode.val() == 0x33))
                    & self.alu_ok.val()
                {
                    self.wb_en.next = true;
                    self.retire.next = true;
                    self.jump.next = true;
                } else if (self.opcode.val() == 0x03)
                    & (self.f3.val() != 3)
                    & (self.f3.val() != 6)
                    & (self.f3.val() != 7)
                {
                    // LOAD
                    self.ls_addr.d.next = self.maddr.val();
                    self.ls_f3.d.next = self.f3.val();
                    self.ls_we.d.next = false;
                    self.ls_strb.d.next = self.st_strb.val();
                    if self.misal.val() {
                        self.trap.next = true;
                        self.cause.next = 4.into();
                        self.tval.next = self.maddr.val();
                    } else if self.in_imem.val() {
                        self.ls_src.d.next = 0.into();
                        self.state.d.next = CpuState::Mem;
                    } else if self.in_dmem.val() {
                        self.ls_src.d.next = 1.into();
                        self.state.d.next = CpuState::Mem;
                    } else if self.in_clint.val() {
                        self.ls_src.d.next = 2.into();
                        self.state.d.next = CpuState::Mem;
                    } else if self.in_bus.val() {
                        self.ls_src.d.next = 3.into();
                        self.state.d.next = CpuState::Bus;
                    } else {
                        self.trap.next = true;
                        self.cause.next = 5.into();
                        self.tval.next = self.maddr.val();
                    }
                } else if (self.opcode.val() == 0x23)
                    & !self.f3.val().get_bit(2)
                    & (self.f3.val() != 3)
                {
                    // STORE
                    self.ls_addr.d.next = self.maddr.val();
                    self.ls_f3.d.next = self.f3.val();
                    self.ls_we.d.next = true;
                    self.ls_strb.d.next = self.st_strb.val();
                    self.ls_wdata.d.next = self.st_data.val();
                    if self.misal.val() {
                        self.trap.next = true;
                        self.cause.next = 6.into();
                        self.tval.next = self.maddr.val();
                    } else if self.in_dmem.val() {
                        self.dm_we.next = self.st_strb.val();
                        self.mem_strb.next = self.st_strb.val();
                        self.retire.next = true;
                        self.jump.next = true;
                    } else if self.in_clint.val() {
                        if self.st_strb.val() == 0xF {
                            if (self.maddr.val() & 0xFFFC) == 0x4000 {
                                self.mtimecmp_lo.d.next = self.st_data.val();
                            } else if (self.maddr.val() & 0xFFFC) == 0x4004 {
                                self.mtimecmp_hi.d.next = self.st_data.val();
                            }
                        }
                        self.mem_strb.next = self.st_strb.val();
                        self.retire.next = true;
                        self.jump.next = true;
                    } else if self.in_bus.val() {
                        self.ls_src.d.next = 3.into();
                        self.state.d.next = CpuState::Bus;
                    } else {
                        self.trap.next = true;
                        self.cause.next = 7.into();
                        self.tval.next = self.maddr.val();
                    }
                } else if (self.opcode.val() == 0x0F) & (self.f3.val() == 0) {
                    // FENCE: memory is already in order.
                    self.retire.next = true;
                    self.jump.next = true;
                } else if (self.opcode.val() == 0x73) & (self.f3.val() == 0) {
                    if self.ir.q.val() == 0x0000_0073_u64 {
                        self.trap.next = true;
                        self.cause.next = 11.into();
                        self.tval.next = 0.into();
                    } else if self.ir.q.val() == 0x0010_0073_u64 {
                        self.trap.next = true;
                        self.cause.next = 3.into();
                        self.tval.next = self.pc.q.val();
                    } else if self.ir.q.val() == 0x3020_0073_u64 {
                        // MRET
                        self.st_mie.d.next = self.st_mpie.q.val();
                        self.st_mpie.d.next = true;
                        self.retire.next = true;
                        self.jump.next = true;
                        self.jump_pc.next = self.mepc.q.val();
                        self.seq.next = false;
                    } else if self.ir.q.val() == 0x1050_0073_u64 {
                        // WFI: a nop (allowed by the privileged spec).
                        self.retire.next = true;
                        self.jump.next = true;
                    } else {
                        self.trap.next = true;
                    }
                } else if (self.opcode.val() == 0x73) & (self.f3.val() != 4) & self.csr_ok.val() {
                    self.wb_en.next = true;
                    self.wb_data.next = self.csr_old.val();
                    self.csr_we.next = self.csr_wr.val();
                    self.retire.next = true;
                    self.jump.next = true;
                } else {
                    // Illegal instruction (cause 2, mtval = the instruction).
                    self.trap.next = true;
                }
            }
            CpuState::Mem => {
                self.wb_en.next = true;
                self.wb_data.next = self.ld_val.val();
                self.retire.next = true;
                self.jump.next = true;
            }
            CpuState::Bus => {
                self.bus_valid.next = true;
                if self.bus_ready.val() {
                    self.wb_en.next = !self.ls_we.q.val();
                    self.wb_data.next = self.ld_val.val();
                    self.retire.next = true;
                    self.jump.next = true;
                    if self.ls_we.q.val() {
                        self.mem_strb.next = self.ls_strb.q.val();
                    }
                    self.mem_addr.next = self.ls_addr.q.val() & 0xFFFF_FFFC_u64;
                    self.mem_wdata.next = self.ls_wdata.q.val();
                }
            }
            CpuState::MulDiv => {
                if self.md.done.val() {
                    self.wb_en.next = true;
                    self.wb_data.next = self.md.result.val();
                    self.retire.next = true;
                    self.jump.next = true;
                }
            }
            CpuState::Halted => {}
            CpuState::DbgReg => {}
            CpuState::DbgCsr => {}
            CpuState::DbgSb => {}
        }

        // ---- Debug mode (module doc). Entry at an instruction boundary
        // (Decode: halt request, the end of a step, a trigger with action
        // 1) or by ebreak with dcsr.ebreakm; neither is a retirement nor a
        // trap in the trace.
        self.dbg_halted.next = self.dmode.q.val();
        self.dbg_resumed.next = false;
        self.dbg_reg_done.next = false;
        self.dbg_reg_err.next = false;
        self.dbg_reg_rdata.next = self.rf1.read_data.val();
        if self.state.q.val() == CpuState::DbgCsr {
            self.dbg_reg_rdata.next = self.csr_old.val();
        } else if self.dbg_reg_num.val().get_bits::<5>(0) == 0 {
            self.dbg_reg_rdata.next = 0.into();
        }
        self.sb_go.next = false;
        self.sb_done.next = false;
        self.dbg_sb_err.next = false;
        self.dbg_sb_rdata.next = self.ld_word.val();
        self.halt_now.next = self.dbg_halt_req.val() | self.step_end.val() | self.trig_dbg.val();
        if self.state.q.val() == CpuState::Decode {
            if self.halt_now.val() {
                // Causes by priority (dcsr.cause): trigger, haltreq, step.
                self.trap.next = false;
                self.state.d.next = CpuState::Halted;
                self.dmode.d.next = true;
                self.dpc.d.next = self.pc.q.val();
                self.dcsr_cause.d.next = 4.into();
                if self.trig_dbg.val() {
                    self.dcsr_cause.d.next = 2.into();
                    self.tg0_hit.d.next =
                        self.tg0_hit.q.val() | (self.tg0_fire.val() & self.tg0_action.q.val());
                    self.tg1_hit.d.next =
                        self.tg1_hit.q.val() | (self.tg1_fire.val() & self.tg1_action.q.val());
                } else if self.dbg_halt_req.val() {
                    self.dcsr_cause.d.next = 3.into();
                }
                self.stepping.d.next = false;
            } else if self.dbg_sb_req.val() {
                self.trap.next = false;
                self.sb_go.next = true;
            }
        }
        if (self.state.q.val() == CpuState::Exec)
            & (self.ir.q.val() == 0x0010_0073_u64)
            & self.dcsr_ebreakm.q.val()
        {
            self.trap.next = false;
            self.state.d.next = CpuState::Halted;
            self.dmode.d.next = true;
            self.dpc.d.next = self.pc.q.val();
            self.dcsr_cause.d.next = 1.into();
            self.stepping.d.next = false;
        }
        if (self.state.q.val() == CpuState::Decode) & self.trap.val() & (self.cause.val() == 3) {
            // The breakpoint exception of a trigger with action 0.
            self.tg0_hit.d.next =
                self.tg0_hit.q.val() | (self.tg0_fire.val() & !self.tg0_action.q.val());
            self.tg1_hit.d.next =
                self.tg1_hit.q.val() | (self.tg1_fire.val() & !self.tg1_action.q.val());
        }
        if self.state.q.val() == CpuState::Halted {
            if self.dbg_reg_req.val() {
                if !self.dbg_reg_num.val().get_bit(12) {
                    // A CSR: csrrw (write) or csrrs with x0 (read) of it,
                    // executed in DbgCsr.
                    self.ir.d.next = (bit_cast::<32, 12>(self.dbg_reg_num.val().get_bits::<12>(0))
                        << 20)
                        | 0x2073_u64;
                    if self.dbg_reg_write.val() {
                        self.ir.d.next =
                            (bit_cast::<32, 12>(self.dbg_reg_num.val().get_bits::<12>(0)) << 20)
                                | 0x1073_u64;
                    }
                    self.state.d.next = CpuState::DbgCsr;
                } else if !self.dbg_reg_write.val() {
                    self.state.d.next = CpuState::DbgReg;
                } else {
                    self.dbg_reg_done.next = true;
                }
            } else if self.dbg_sb_req.val() {
                self.sb_go.next = true;
            } else if self.dbg_resume_req.val() {
                self.pc.d.next = self.dpc.q.val();
                self.state.d.next = CpuState::Fetch;
                self.dmode.d.next = false;
                self.dbg_resumed.next = true;
                self.stepping.d.next = self.dcsr_step.q.val();
                self.step_done.d.next = false;
            }
        }
        if self.state.q.val() == CpuState::DbgReg {
            self.dbg_reg_done.next = true;
            self.state.d.next = CpuState::Halted;
        }
        if self.state.q.val() == CpuState::DbgCsr {
            self.dbg_reg_done.next = true;
            self.dbg_reg_err.next = !self.csr_ok.val();
            self.csr_we.next = self.csr_ok.val() & self.csr_wr.val();
            self.state.d.next = CpuState::Halted;
        }
        if self.sb_go.val() {
            self.ls_addr.d.next = self.dbg_sb_addr.val();
            self.ls_f3.d.next = 2.into();
            self.ls_we.d.next = self.dbg_sb_write.val();
            self.ls_strb.d.next = 0xF.into();
            self.ls_wdata.d.next = self.dbg_sb_wdata.val();
            self.state.d.next = CpuState::DbgSb;
            if (self.dbg_sb_addr.val() & self.imem_hi.val()) == 0 {
                self.ls_src.d.next = 0.into();
            } else if (self.dbg_sb_addr.val() & self.dmem_hi.val()) == 0x1000_0000_u64 {
                self.ls_src.d.next = 1.into();
            } else if (self.dbg_sb_addr.val() & 0xFFFF_0000_u64) == 0x0200_0000_u64 {
                self.ls_src.d.next = 2.into();
            } else if (self.dbg_sb_addr.val() & 0xF000_0000_u64) == 0x2000_0000_u64 {
                self.ls_src.d.next = 3.into();
            } else {
                // Unmapped: answered at once.
                self.sb_done.next = true;
                self.dbg_sb_err.next = true;
                self.state.d.next = CpuState::Fetch;
                if self.dmode.q.val() {
                    self.state.d.next = CpuState::Halted;
                }
            }
        }
        if self.state.q.val() == CpuState::DbgSb {
            if self.ls_src.q.val() == 3 {
                self.bus_valid.next = true;
                self.sb_done.next = self.bus_ready.val();
            } else {
                self.sb_done.next = true;
                if self.ls_we.q.val() & (self.ls_src.q.val() == 1) {
                    self.dm_we.next = 0xF.into();
                }
                if self.ls_we.q.val() & (self.ls_src.q.val() == 2) {
                    if (self.ls_addr.q.val() & 0xFFFC) == 0x4000 {
                        self.mtimecmp_lo.d.next = self.ls_wdata.q.val();
                    } else if (self.ls_addr.q.val() & 0xFFFC) == 0x4004 {
                        self.mtimecmp_hi.d.next = self.ls_wdata.q.val();
                    }
                }
            }
            if self.sb_done.val() {
                self.state.d.next = CpuState::Fetch;
                if self.dmode.q.val() {
                    self.state.d.next = CpuState::Halted;
                }
            }
        }
        self.dbg_sb_done.next = self.sb_done.val();
        if self.stepping.q.val() & (self.retire.val() | self.trap.val()) {
            self.step_done.d.next = true;
        }

        // ---- Counters and timer (a CSR write below replaces an increment).
        self.cycle_lo.d.next = self.cycle_lo.q.val() + 1;
        if self.cycle_lo.q.val() == 0xFFFF_FFFF_u64 {
            self.cycle_hi.d.next = self.cycle_hi.q.val() + 1;
        }
        if self.retire.val() {
            self.instret_lo.d.next = self.instret_lo.q.val() + 1;
            if self.instret_lo.q.val() == 0xFFFF_FFFF_u64 {
                self.instret_hi.d.next = self.instret_hi.q.val() + 1;
            }
        }
        self.mtime_lo.d.next = self.mtime_lo.q.val() + 1;
        if self.mtime_lo.q.val() == 0xFFFF_FFFF_u64 {
            self.mtime_hi.d.next = self.mtime_hi.q.val() + 1;
        }

        // ---- CSR writes.
        if self.csr_we.val() {
            if self.csr.val() == 0x300 {
                self.st_mie.d.next = self.csr_new.val().get_bit(3);
                self.st_mpie.d.next = self.csr_new.val().get_bit(7);
            } else if self.csr.val() == 0x304 {
                self.ie_mtie.d.next = self.csr_new.val().get_bit(7);
                self.ie_meie.d.next = self.csr_new.val().get_bit(11);
            } else if self.csr.val() == 0x305 {
                self.mtvec.d.next = self.csr_new.val() & 0xFFFF_FFFD_u64;
            } else if self.csr.val() == 0x340 {
                self.mscratch.d.next = self.csr_new.val();
            } else if self.csr.val() == 0x341 {
                self.mepc.d.next = self.csr_new.val() & 0xFFFF_FFFC_u64;
            } else if self.csr.val() == 0x342 {
                self.mcause.d.next = self.csr_new.val();
            } else if self.csr.val() == 0x343 {
                self.mtval.d.next = self.csr_new.val();
            } else if self.csr.val() == 0xB00 {
                self.cycle_lo.d.next = self.csr_new.val();
                self.cycle_hi.d.next = self.cycle_hi.q.val();
            } else if self.csr.val() == 0xB80 {
                self.cycle_hi.d.next = self.csr_new.val();
                self.cycle_lo.d.next = self.cycle_lo.q.val();
            } else if self.csr.val() == 0xB02 {
                self.instret_lo.d.next = self.csr_new.val();
                self.instret_hi.d.next = self.instret_hi.q.val();
            } else if self.csr.val() == 0xB82 {
                self.instret_hi.d.next = self.csr_new.val();
                self.instret_lo.d.next = self.instret_lo.q.val();
            } else if self.csr.val() == 0x7A0 {
                // tselect: 0 or 1; other values leave it (WARL).
                if (self.csr_new.val() & 0xFFFF_FFFE_u64) == 0 {
                    self.tsel.d.next = self.csr_new.val().get_bit(0);
                }
            } else if (self.csr.val() == 0x7A1) & self.tg_wok.val() {
                // tdata1: dmode only from debug mode, action 1 only with
                // dmode (else 0), other action values 0.
                if !self.tsel.q.val() {
                    self.tg0_dmode.d.next = self.csr_new.val().get_bit(27) & self.dmode.q.val();
                    self.tg0_hit.d.next = self.csr_new.val().get_bit(20);
                    self.tg0_action.d.next = (self.csr_new.val().get_bits::<4>(12) == 1)
                        & self.csr_new.val().get_bit(27)
                        & self.dmode.q.val();
                    self.tg0_m.d.next = self.csr_new.val().get_bit(6);
                    self.tg0_u.d.next = self.csr_new.val().get_bit(3);
                    self.tg0_exec.d.next = self.csr_new.val().get_bit(2);
                } else {
                    self.tg1_dmode.d.next = self.csr_new.val().get_bit(27) & self.dmode.q.val();
                    self.tg1_hit.d.next = self.csr_new.val().get_bit(20);
                    self.tg1_action.d.next = (self.csr_new.val().get_bits::<4>(12) == 1)
                        & self.csr_new.val().get_bit(27)
                        & self.dmode.q.val();
                    self.tg1_m.d.next = self.csr_new.val().get_bit(6);
                    self.tg1_u.d.next = self.csr_new.val().get_bit(3);
                    self.tg1_exec.d.next = self.csr_new.val().get_bit(2);
                }
            } else if (self.csr.val() == 0x7A2) & self.tg_wok.val() {
                if !self.tsel.q.val() {
                    self.tg0_addr.d.next = self.csr_new.val();
                } else {
                    self.tg1_addr.d.next = self.csr_new.val();
                }
            } else if self.csr.val() == 0x7B0 {
                // dcsr (only in debug mode: csr_ok): ebreakm, stepie, step.
                self.dcsr_ebreakm.d.next = self.csr_new.val().get_bit(15);
                self.dcsr_stepie.d.next = self.csr_new.val().get_bit(11);
                self.dcsr_step.d.next = self.csr_new.val().get_bit(2);
            } else if self.csr.val() == 0x7B1 {
                self.dpc.d.next = self.csr_new.val() & 0xFFFF_FFFC_u64;
            }
        }

        // ---- Trap entry, then the jump (every path into Decode).
        self.trap_vec.next = self.mtvec.q.val() & 0xFFFF_FFFC_u64;
        if self.mtvec.q.val().get_bit(0) & self.cause.val().get_bit(31) {
            self.trap_vec.next = (self.mtvec.q.val() & 0xFFFF_FFFC_u64)
                + (bit_cast::<32, 4>(self.cause.val().get_bits::<4>(0)) << 2);
        }
        if self.trap.val() {
            self.mepc.d.next = self.pc.q.val();
            self.mcause.d.next = self.cause.val();
            self.mtval.d.next = self.tval.val();
            self.st_mpie.d.next = self.st_mie.q.val();
            self.st_mie.d.next = false;
            self.jump.next = true;
            self.jump_pc.next = self.trap_vec.val();
            self.seq.next = false;
        }
        // The next pc goes to a register first and reaches the instruction
        // memory's address pins in Fetch: the next-pc logic does not drive
        // the 2^IW-word RAM's address nets in the clock that computes it.
        // In Exec, but for a load (which may read the instruction memory
        // at its own address), it reads at `pc + 4` (`fa`, a register): a
        // sequential next instruction goes straight to Decode.
        self.imem.read_address.next = self.maddr.val().get_bits::<IW>(2);
        if self.state.q.val() == CpuState::Fetch {
            self.imem.read_address.next = self.pc.q.val().get_bits::<IW>(2);
        } else if (self.state.q.val() == CpuState::Exec) & (self.opcode.val() != 0x03) {
            self.imem.read_address.next = self.fa.q.val().get_bits::<IW>(2);
        }
        if self.sb_go.val() {
            self.imem.read_address.next = self.dbg_sb_addr.val().get_bits::<IW>(2);
        }
        if self.jump.val() {
            self.pc.d.next = self.jump_pc.val();
            self.state.d.next = CpuState::Fetch;
            // A write of tdata2 goes through Fetch, for the triggers' compare.
            if (self.state.q.val() == CpuState::Exec)
                & self.seq.val()
                & !(self.csr_we.val() & (self.csr.val() == 0x7A2))
            {
                self.fetch_fault.d.next = (self.fa.q.val() & self.imem_hi.val()) != 0;
                self.state.d.next = CpuState::Decode;
            }
        }

        // ---- Memory and register-file ports.
        self.load_dm.next = (self.load_addr.val() & self.dmem_hi.val()) == 0x1000_0000_u64;
        self.imem.write_address.next = self.load_addr.val().get_bits::<IW>(2);
        self.imem.write_data.next = self.load_data.val();
        self.imem.write_enable.next =
            self.load_we.val() & ((self.load_addr.val() & self.imem_hi.val()) == 0);
        if !self.load_we.val()
            & (self.state.q.val() == CpuState::DbgSb)
            & self.ls_we.q.val()
            & (self.ls_src.q.val() == 0)
        {
            self.imem.write_address.next = self.ls_addr.q.val().get_bits::<IW>(2);
            self.imem.write_data.next = self.ls_wdata.q.val();
            self.imem.write_enable.next = true;
        }
        self.dmem0.read_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem1.read_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem2.read_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem3.read_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem0.write_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem1.write_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem2.write_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem3.write_address.next = self.maddr.val().get_bits::<DW>(2);
        self.dmem0.write_data.next = self.st_data.val().get_bits::<8>(0);
        self.dmem1.write_data.next = self.st_data.val().get_bits::<8>(8);
        self.dmem2.write_data.next = self.st_data.val().get_bits::<8>(16);
        self.dmem3.write_data.next = self.st_data.val().get_bits::<8>(24);
        if self.sb_go.val() {
            self.dmem0.read_address.next = self.dbg_sb_addr.val().get_bits::<DW>(2);
            self.dmem1.read_address.next = self.dbg_sb_addr.val().get_bits::<DW>(2);
            self.dmem2.read_address.next = self.dbg_sb_addr.val().get_bits::<DW>(2);
            self.dmem3.read_address.next = self.dbg_sb_addr.val().get_bits::<DW>(2);
        }
        if self.state.q.val() == CpuState::DbgSb {
            self.dmem0.write_address.next = self.ls_addr.q.val().get_bits::<DW>(2);
            self.dmem1.write_address.next = self.ls_addr.q.val().get_bits::<DW>(2);
            self.dmem2.write_address.next = self.ls_addr.q.val().get_bits::<DW>(2);
            self.dmem3.write_address.next = self.ls_addr.q.val().get_bits::<DW>(2);
            self.dmem0.write_data.next = self.ls_wdata.q.val().get_bits::<8>(0);
            self.dmem1.write_data.next = self.ls_wdata.q.val().get_bits::<8>(8);
            self.dmem2.write_data.next = self.ls_wdata.q.val().get_bits::<8>(16);
            self.dmem3.write_data.next = self.ls_wdata.q.val().get_bits::<8>(24);
        }
        if self.load_we.val() {
            self.dm_we.next = 0.into();
            if self.load_dm.val() {
                self.dm_we.next = 0xF.into();
            }
            self.dmem0.write_address.next = self.load_addr.val().get_bits::<DW>(2);
            self.dmem1.write_address.next = self.load_addr.val().get_bits::<DW>(2);
            self.dmem2.write_address.next = self.load_addr.val().get_bits::<DW>(2);
            self.dmem3.write_address.next = self.load_addr.val().get_bits::<DW>(2);
            self.dmem0.write_data.next = self.load_data.val().get_bits::<8>(0);
            self.dmem1.write_data.next = self.load_data.val().get_bits::<8>(8);
            self.dmem2.write_data.next = self.load_data.val().get_bits::<8>(16);
            self.dmem3.write_data.next = self.load_data.val().get_bits::<8>(24);
        }
        self.dmem0.write_enable.next = self.dm_we.val().get_bit(0);
        self.dmem1.write_enable.next = self.dm_we.val().get_bit(1);
        self.dmem2.write_enable.next = self.dm_we.val().get_bit(2);
        self.dmem3.write_enable.next = self.dm_we.val().get_bit(3);
        self.rf1.read_address.next = self.imem.read_data.val().get_bits::<5>(15);
        self.rf2.read_address.next = self.imem.read_data.val().get_bits::<5>(20);
        self.rf1.write_address.next = self.rd.val();
        self.rf2.write_address.next = self.rd.val();
        self.rf1.write_data.next = self.wb_data.val();
        self.rf2.write_data.next = self.wb_data.val();
        self.rf1.write_enable.next = self.wb_en.val() & (self.rd.val() != 0);
        self.rf2.write_enable.next = self.wb_en.val() & (self.rd.val() != 0);
        if self.state.q.val() == CpuState::Halted {
            // Abstract register access: read through rf1 (data in DbgReg),
            // write both copies.
            self.rf1.read_address.next = self.dbg_reg_num.val().get_bits::<5>(0);
            self.rf1.write_address.next = self.dbg_reg_num.val().get_bits::<5>(0);
            self.rf2.write_address.next = self.dbg_reg_num.val().get_bits::<5>(0);
            self.rf1.write_data.next = self.dbg_reg_wdata.val();
            self.rf2.write_data.next = self.dbg_reg_wdata.val();
            self.rf1.write_enable.next = self.dbg_reg_req.val()
                & self.dbg_reg_write.val()
                & self.dbg_reg_num.val().get_bit(12)
                & (self.dbg_reg_num.val().get_bits::<5>(0) != 0);
            self.rf2.write_enable.next = self.dbg_reg_req.val()
                & self.dbg_reg_write.val()
                & self.dbg_reg_num.val().get_bit(12)
                & (self.dbg_reg_num.val().get_bits::<5>(0) != 0);
        }

        // ---- Trace.
        self.t_valid.d.next = self.retire.val() | self.trap.val();
        self.t_trap.d.next = self.trap.val();
        self.t_cause.d.next = self.cause.val();
        self.t_pc.d.next = self.pc.q.val();
        self.t_insn.d.next = self.ir.q.val();
        self.t_next.d.next = self.jump_pc.val();
        self.t_rd.d.next = 0.into();
        if self.wb_en.val() {
            self.t_rd.d.next = self.rd.val();
        }
        self.t_wdata.d.next = self.wb_data.val();
        self.t_strb.d.next = self.mem_strb.val();
        self.t_maddr.d.next = self.mem_addr.val();
        self.t_mwdata.d.next = self.mem_wdata.val();

        if self.reset.val() {
            self.state.d.next = CpuState::Fetch;
            self.pc.d.next = 0.into();
            self.st_mie.d.next = false;
            self.st_mpie.d.next = false;
            self.ie_meie.d.next = false;
            self.ie_mtie.d.next = false;
            self.mtvec.d.next = 0.into();
            self.mcause.d.next = 0.into();
            self.cycle_lo.d.next = 0.into();
            self.cycle_hi.d.next = 0.into();
            self.instret_lo.d.next = 0.into();
            self.instret_hi.d.next = 0.into();
            self.mtime_lo.d.next = 0.into();
            self.mtime_hi.d.next = 0.into();
            self.mtimecmp_lo.d.next = 0xFFFF_FFFF_u64.into();
            self.mtimecmp_hi.d.next = 0xFFFF_FFFF_u64.into();
            self.t_valid.d.next = false;
            self.rf1.write_enable.next = false;
            self.rf2.write_enable.next = false;
            self.dmem0.write_enable.next = self.load_we.val() & self.load_dm.val();
            self.dmem1.write_enable.next = self.load_we.val() & self.load_dm.val();
            self.dmem2.write_enable.next = self.load_we.val() & self.load_dm.val();
            self.dmem3.write_enable.next = self.load_we.val() & self.load_dm.val();
            self.md.start.next = false;
            self.bus_valid.next = false;
            self.dmode.d.next = false;
            self.dpc.d.next = 0.into();
            self.dcsr_ebreakm.d.next = false;
            self.dcsr_stepie.d.next = false;
            self.dcsr_step.d.next = false;
            self.dcsr_cause.d.next = 0.into();
            self.stepping.d.next = false;
            self.step_done.d.next = false;
            self.dbg_resumed.next = false;
            self.dbg_reg_done.next = false;
            self.dbg_reg_err.next = false;
            self.dbg_sb_done.next = false;
            self.tsel.d.next = false;
            self.tg0_dmode.d.next = false;
            self.tg0_hit.d.next = false;
            self.tg0_action.d.next = false;
            self.tg0_m.d.next = false;
            self.tg0_u.d.next = false;
            self.tg0_exec.d.next = false;
            self.tg0_addr.d.next = 0.into();
            self.tg1_dmode.d.next = false;
            self.tg1_hit.d.next = false;
            self.tg1_action.d.next = false;
            self.tg1_m.d.next = false;
            self.tg1_u.d.next = false;
            self.tg1_exec.d.next = false;
            self.tg1_addr.d.next = 0.into();
            self.imem.write_enable.next =
                self.load_we.val() & ((self.load_addr.val() & self.imem_hi.val()) == 0);
        }
    }
}
