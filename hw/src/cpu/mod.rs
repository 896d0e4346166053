//! The firmware's processor: an RV32IM core in machine mode
//! ([`core::Rv32`]), its multiply/divide unit ([`muldiv::MulDiv`]) and the
//! generation of its Verilog ([`gen`]). `docs/cpu.md` has the design, the
//! verification and the measured size.
//!
//! # Memory map
//!
//! | address | size | what | access |
//! |---|---|---|---|
//! | `0x0000_0000` | `4 << IW` (128 KiB in [`Rv32Fw`]) | instruction memory (block RAM); the reset pc is 0 | fetch, load; a store faults (cause 7) |
//! | `0x0200_4000` | 4 | `mtimecmp` low word | load, word store |
//! | `0x0200_4004` | 4 | `mtimecmp` high word | load, word store |
//! | `0x0200_BFF8` | 4 | `mtime` low word (counts clocks from reset) | load |
//! | `0x0200_BFFC` | 4 | `mtime` high word | load |
//! | other `0x0200_xxxx` | | the rest of the timer block (CLINT layout) | loads read 0, stores are ignored |
//! | `0x1000_0000` | `4 << DW` (64 KiB in [`Rv32Fw`]) | data memory (block RAM, byte lanes) | load, store; a fetch faults (cause 1) |
//! | `0x2000_0000`–`0x2FFF_FFFF` | 256 MiB | peripheral bus (the firmware port's window, `FW_PORT` in `firmware/rnic-fw.x`) | load, store |
//! | anything else | | | access fault: fetch 1, load 5, store 7 |
//!
//! The timer raises mip.MTIP while `mtime >= mtimecmp` (64-bit, unsigned);
//! `mtimecmp` is all ones after reset. Stores narrower than a word to the
//! timer are ignored; `mtime` is read-only.
//!
//! # Peripheral bus
//!
//! One access at a time: the core raises `bus_valid` with `bus_addr` (the
//! word address: bits 1:0 are 0), `bus_we`, `bus_strb` (the byte lanes
//! accessed, for loads too) and `bus_wdata` (a byte or halfword store's
//! data is replicated in every lane), and holds them until a clock where
//! `bus_ready` is high; that clock ends the access and, for a load,
//! `bus_rdata` is taken then (the whole word; the core picks the lanes).
//! There is no bus error: the peripheral answers every address of the
//! window.
//!
//! # Machine mode
//!
//! CSRs: `mstatus` (MIE, MPIE; MPP reads 3), `misa` (RV32IM, read-only),
//! `mie` (MEIE, MTIE), `mip` (MEIP, MTIP; read-only), `mtvec` (direct and
//! vectored), `mscratch`, `mepc`, `mcause`, `mtval`, `mcycle[h]`,
//! `minstret[h]` (and their read-only `cycle[h]`, `instret[h]` views),
//! `mstatush`, `mvendorid`, `marchid`, `mimpid`, `mhartid`, `mconfigptr`
//! (0), and the trigger CSRs of the debug support (`tselect`, `tdata1`,
//! `tdata2`, `tinfo`; "Debug mode" below). Any other CSR, and a write to a
//! read-only one, is an illegal instruction. A CSR write to a counter half replaces that instruction's
//! increment of the counter (the other half is left as it was).
//!
//! Traps: instruction-address misaligned (0; a taken branch or jump to an
//! address with bit 1 set; mepc = the branch, mtval = the target),
//! instruction access fault (1), illegal instruction (2; mtval = the
//! instruction), breakpoint (3; mtval = pc), load/store misaligned (4/6)
//! and access fault (5/7; mtval = the address), ecall (11; mtval = 0).
//! Interrupts (machine external 11 before machine timer 7) are taken
//! between instructions when mstatus.MIE and the mie bit are set; mepc =
//! the next instruction. `wfi` is a nop, `fence` a nop, `fence.i` illegal
//! (no Zifencei).
//!
//! # Debug mode
//!
//! For the Debug Module ([`debug`], RISC-V External Debug Support 0.13.2)
//! through the core's `dbg_*` ports: a halt request (`dbg_halt_req`, a
//! level) is taken at the next instruction boundary (dcsr.cause 3, dpc =
//! the next pc); `ebreak` with dcsr.ebreakm = 1 halts instead of trapping
//! (cause 1, dpc = the ebreak); while halted nothing is fetched, the
//! register file and the CSRs (those above, `dcsr`, `dpc`) are read and
//! written through `dbg_reg_*`, and `dbg_resume_req` continues at dpc
//! (with dcsr.step: one instruction or trap, then cause 4; no interrupts
//! unless dcsr.stepie). Two mcontrol triggers (`tselect` 0/1, `tdata1`,
//! `tdata2`, `tinfo`) compare the pc of the instruction about to execute
//! with tdata2: action 1 (dmode = 1 only) halts before it (cause 2, dpc =
//! that pc), action 0 takes a breakpoint exception (cause 3, mtval = pc);
//! with dmode = 1 only debug mode writes the trigger.
//! System-bus accesses (`dbg_sb_*`, whole words, the memory map above;
//! instruction memory writable) are served while halted or between two
//! instructions. `dcsr` (0x7B0) and `dpc` (0x7B1) are not CSRs a program
//! can reach (illegal instruction, as any other missing CSR). Neither a
//! halt nor an access is a retirement or a trap on the trace (a trigger's
//! breakpoint exception is a trap).

pub mod core;
pub mod debug;
pub mod gen;
pub mod muldiv;

#[cfg(test)]
mod asm;
#[cfg(test)]
mod directed;
#[cfg(test)]
mod firmware;
#[cfg(test)]
mod lockstep;
#[cfg(test)]
mod refmodel;

/// The firmware's configuration: 128 KiB of instruction memory, 64 KiB of
/// data memory (`firmware/rnic-fw.x`).
pub type Rv32Fw = core::Rv32<15, 14>;

/// The firmware's core with its JTAG debug module ([`debug::Rv32Debug`]):
/// the Verilog top `rv32_core` and the ECPIX-5 board's CPU.
pub type Rv32FwDebug = debug::Rv32Debug<15, 14>;

/// Byte addresses of the memory map.
pub mod map {
    pub const IMEM: u32 = 0x0000_0000;
    pub const DMEM: u32 = 0x1000_0000;
    pub const BUS: u32 = 0x2000_0000;
    pub const BUS_END: u32 = 0x3000_0000;
    pub const CLINT: u32 = 0x0200_0000;
    pub const MTIMECMP: u32 = 0x0200_4000;
    pub const MTIME: u32 = 0x0200_BFF8;
}
