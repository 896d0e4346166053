//! The debug module through its pins: the tests bit-bang TCK/TMS/TDI (at
//! 1/8 of the core clock, the documented limit) and read TDO, walking the
//! TAP controller's states as a JTAG probe does ([`Probe`]), while the
//! core runs programs from `cpu::asm`. Expected values come from RISC-V
//! External Debug Support 0.13.2 (register layouts, cmderr and sberror
//! codes) and from the core's retirement trace.

use super::tap::IDCODE;
use super::Rv32Debug;
use crate::cpu::asm::*;
use crate::cpu::map;
use rust_hdl::prelude::*;
use std::collections::HashMap;

const IW: usize = 10;
const DW: usize = 10;

// DM register addresses and fields (External Debug Support 0.13.2).
const DATA0: u32 = 0x04;
const DMCONTROL: u32 = 0x10;
const DMSTATUS: u32 = 0x11;
const HARTINFO: u32 = 0x12;
const ABSTRACTCS: u32 = 0x16;
const COMMAND: u32 = 0x17;
const SBCS: u32 = 0x38;
const SBADDRESS0: u32 = 0x39;
const SBDATA0: u32 = 0x3C;
const HALTSUM0: u32 = 0x40;
const HALTREQ: u32 = 1 << 31;
const RESUMEREQ: u32 = 1 << 30;
const ACKHAVERESET: u32 = 1 << 28;
const NDMRESET: u32 = 1 << 1;
const DMACTIVE: u32 = 1;
const ALLHALTED: u32 = 1 << 9;
const ALLRUNNING: u32 = 1 << 11;
const ALLRESUMEACK: u32 = 1 << 17;
const ALLHAVERESET: u32 = 1 << 19;
const ALLUNAVAIL: u32 = 1 << 13;
const ALLNONEXISTENT: u32 = 1 << 15;
const DCSR: u32 = 0x7B0;
const DPC: u32 = 0x7B1;
const TSELECT: u32 = 0x7A0;
const TDATA1: u32 = 0x7A1;
const TDATA2: u32 = 0x7A2;
const TDATA3: u32 = 0x7A3;
const TINFO: u32 = 0x7A4;
/// mcontrol fields (0.13.2, "Match Control"): type 2, dmode, hit, action 1, m, u,
/// execute.
const MC_TYPE2: u32 = 2 << 28;
const MC_DMODE: u32 = 1 << 27;
const MC_HIT: u32 = 1 << 20;
const MC_ACTION_DEBUG: u32 = 1 << 12;
const MC_M: u32 = 1 << 6;
const MC_U: u32 = 1 << 3;
const MC_EXECUTE: u32 = 1 << 2;
/// The execute breakpoint probe-rs 0.32 writes (`set_hw_breakpoint`).
const PROBE_RS_BP: u32 = MC_TYPE2 | MC_DMODE | MC_ACTION_DEBUG | MC_M | MC_U | MC_EXECUTE;
const SBREADONADDR: u32 = 1 << 20;
const SBACCESS32: u32 = 2 << 17;
const SBAUTOINCREMENT: u32 = 1 << 16;
const SBREADONDATA: u32 = 1 << 15;

/// Access Register, 32 bits, transfer.
fn access(regno: u32, write: bool) -> u32 {
    (2 << 20) | (1 << 17) | ((write as u32) << 16) | regno
}

/// One retired instruction (or trap) from the core's trace.
#[derive(Debug, Clone, Copy)]
struct Retired {
    pc: u32,
    trap: bool,
    /// The new mcause of a trap.
    cause: u32,
    next_pc: u32,
    rd: u32,
    wdata: u32,
}

/// The wrapper with a peripheral-bus model and a JTAG probe.
struct Probe {
    uut: Box<Rv32Debug<IW, DW>>,
    bus: HashMap<u32, u32>,
    retired: Vec<Retired>,
    irq: bool,
    /// The bus holds `bus_ready` low (an access waits).
    stall: bool,
}

impl Probe {
    /// Loads `prog` at 0 (instruction memory) and starts the core and the
    /// debug module from reset; the TAP is reset by TMS and left in
    /// Run-Test/Idle.
    fn new(prog: &[u32]) -> Self {
        let mut uut = Box::new(Rv32Debug::<IW, DW>::default());
        uut.clock.connect();
        uut.reset.connect();
        uut.dm_reset.connect();
        uut.ext_irq.connect();
        uut.bus_ready.connect();
        uut.bus_rdata.connect();
        uut.load_we.connect();
        uut.load_addr.connect();
        uut.load_data.connect();
        uut.tck.connect();
        uut.tms.connect();
        uut.tdi.connect();
        uut.connect_all();
        let mut p = Probe {
            uut,
            bus: HashMap::new(),
            retired: Vec::new(),
            irq: false,
            stall: false,
        };
        p.uut.reset.next = true;
        p.uut.dm_reset.next = true;
        for (k, &w) in prog.iter().enumerate() {
            p.uut.load_we.next = true;
            p.uut.load_addr.next = ((4 * k) as u64).into();
            p.uut.load_data.next = (w as u64).into();
            p.clock();
        }
        p.uut.load_we.next = false;
        p.clock();
        p.clock();
        p.uut.reset.next = false;
        p.uut.dm_reset.next = false;
        p.tap_reset();
        p
    }

    /// One core clock: the bus answers at once (reads: the stored word or
    /// its address), then the edge; records a retirement.
    fn clock(&mut self) {
        let u = &mut self.uut;
        u.bus_ready.next = u.bus_valid.val() && !self.stall;
        if u.bus_valid.val() && !self.stall {
            let a = u.bus_addr.val().to_u64() as u32;
            u.bus_rdata.next = (*self.bus.get(&a).unwrap_or(&a) as u64).into();
            if u.bus_we.val() {
                self.bus.insert(a, u.bus_wdata.val().to_u64() as u32);
            }
        }
        u.ext_irq.next = self.irq;
        u.clock.next = false.into();
        assert!(simulate(u.as_mut(), 1000), "did not settle");
        u.clock.next = true.into();
        assert!(simulate(u.as_mut(), 1000), "did not settle");
        if u.tr_valid.val() {
            self.retired.push(Retired {
                pc: u.tr_pc.val().to_u64() as u32,
                trap: u.tr_trap.val(),
                cause: u.tr_cause.val().to_u64() as u32,
                next_pc: u.tr_next_pc.val().to_u64() as u32,
                rd: u.tr_rd.val().to_u64() as u32,
                wdata: u.tr_rd_wdata.val().to_u64() as u32,
            });
        }
    }

    fn run(&mut self, clocks: usize) {
        for _ in 0..clocks {
            self.clock();
        }
    }

    /// One TCK period (8 core clocks): TCK low with TMS/TDI set, TDO read
    /// just before the rising edge, then TCK high.
    fn tck(&mut self, tms: bool, tdi: bool) -> bool {
        self.uut.tck.next = false;
        self.uut.tms.next = tms;
        self.uut.tdi.next = tdi;
        self.run(4);
        let tdo = self.uut.tdo.val();
        self.uut.tck.next = true;
        self.run(4);
        tdo
    }

    /// Test-Logic-Reset by TMS, then Run-Test/Idle.
    fn tap_reset(&mut self) {
        for _ in 0..5 {
            self.tck(true, false);
        }
        self.tck(false, false);
    }

    /// From Run-Test/Idle: shifts `n` bits of `v` through the register
    /// after Select-DR (`ir` false) or Select-IR, back to Run-Test/Idle;
    /// returns the bits that came out (the captured value).
    fn scan(&mut self, ir: bool, v: u64, n: usize) -> u64 {
        self.tck(true, false);
        if ir {
            self.tck(true, false);
        }
        self.tck(false, false); // Capture
        self.tck(false, false); // Shift
        let mut out = 0u64;
        for k in 0..n {
            let tdo = self.tck(k == n - 1, (v >> k) & 1 == 1);
            out |= (tdo as u64) << k;
        }
        self.tck(true, false); // Update
        self.tck(false, false); // Run-Test/Idle
        out
    }

    fn ir(&mut self, ir: u32) -> u32 {
        self.scan(true, ir as u64, 5) as u32
    }

    fn dr(&mut self, v: u64, n: usize) -> u64 {
        self.scan(false, v, n)
    }

    /// One `dmi` scan; returns (address, data, op) captured.
    fn dmi(&mut self, addr: u32, data: u32, op: u32) -> (u32, u32, u32) {
        let v = ((addr as u64) << 34) | ((data as u64) << 2) | op as u64;
        let r = self.dr(v, 41);
        ((r >> 34) as u32, (r >> 2) as u32, (r & 3) as u32)
    }

    fn read(&mut self, addr: u32) -> u32 {
        self.ir(0x11);
        let (_, _, op) = self.dmi(addr, 0, 1);
        assert_eq!(op, 0, "dmi status before the read of {addr:#x}");
        let (a, data, op) = self.dmi(0, 0, 0);
        assert_eq!((a, op), (addr, 0), "dmi read of {addr:#x}");
        data
    }

    fn write(&mut self, addr: u32, data: u32) {
        self.ir(0x11);
        let (_, _, op) = self.dmi(addr, data, 2);
        assert_eq!(op, 0, "dmi status before the write of {addr:#x}");
    }

    fn activate(&mut self) {
        self.write(DMCONTROL, DMACTIVE);
        assert_eq!(self.read(DMCONTROL) & 1, 1, "dmactive");
    }

    fn halt(&mut self) {
        self.write(DMCONTROL, DMACTIVE | HALTREQ);
        let s = self.read(DMSTATUS);
        assert_eq!(s & (ALLHALTED | ALLRUNNING), ALLHALTED, "dmstatus {s:#x}");
        self.write(DMCONTROL, DMACTIVE);
    }

    fn resume(&mut self) {
        self.write(DMCONTROL, DMACTIVE | RESUMEREQ);
    }

    /// An abstract command; returns abstractcs.cmderr.
    fn command(&mut self, cmd: u32) -> u32 {
        self.write(COMMAND, cmd);
        let cs = self.read(ABSTRACTCS);
        assert_eq!(cs & (1 << 12), 0, "abstractcs.busy");
        (cs >> 8) & 7
    }

    fn reg(&mut self, regno: u32) -> u32 {
        assert_eq!(self.command(access(regno, false)), 0, "read {regno:#x}");
        self.read(DATA0)
    }

    fn set_reg(&mut self, regno: u32, v: u32) {
        self.write(DATA0, v);
        assert_eq!(self.command(access(regno, true)), 0, "write {regno:#x}");
    }

    /// probe-rs 0.32's `set_hw_breakpoint`: tselect, check the type in
    /// tdata1, tdata1 = 0, tdata2 = the address, tdata1 = the trigger.
    fn set_bp(&mut self, unit: u32, addr: u32) {
        self.set_reg(TSELECT, unit);
        assert_eq!(self.reg(TDATA1) >> 28, 2, "mcontrol");
        self.set_reg(TDATA1, 0);
        self.set_reg(TDATA2, addr);
        self.set_reg(TDATA1, PROBE_RS_BP);
    }

    /// probe-rs 0.32's `enable_breakpoints(on)` for every trigger: an
    /// execute trigger with action 1, match 0 and m = u gets m = u = on.
    fn enable_bps(&mut self, on: bool, units: u32) {
        for unit in 0..units {
            self.set_reg(TSELECT, unit);
            let t = self.reg(TDATA1);
            let mu = t & (MC_M | MC_U);
            if t >> 28 == 2
                && (t >> 12) & 0xF == 1
                && (t >> 7) & 0xF == 0
                && t & MC_EXECUTE != 0
                && (mu == 0 || mu == MC_M | MC_U)
            {
                let v = if on {
                    t | MC_M | MC_U
                } else {
                    t & !(MC_M | MC_U)
                };
                self.set_reg(TDATA1, v);
            }
        }
    }

    /// probe-rs 0.32's `step` from a halt (not on an ebreak): off
    /// triggers if the halt was a trigger's, dcsr.step (stepie 0), resume,
    /// wait for the halt, dcsr.step off (stepie 1), triggers back on.
    /// Returns the number of instructions retired.
    fn probe_rs_step(&mut self, units: u32) -> usize {
        let on_trigger = (self.reg(DCSR) >> 6) & 7 == 2;
        if on_trigger {
            self.enable_bps(false, units);
        }
        let d = self.reg(DCSR);
        self.set_reg(DCSR, (d | 4 | (1 << 10)) & !(1 << 11));
        let n = self.retired.len();
        self.resume();
        self.run(100);
        assert_eq!(self.read(DMSTATUS) & ALLHALTED, ALLHALTED, "halted");
        let d = self.reg(DCSR);
        self.set_reg(DCSR, (d & !4 & !(1 << 10)) | (1 << 11));
        if on_trigger {
            self.enable_bps(true, units);
        }
        self.retired.len() - n
    }

    fn clear_cmderr(&mut self) {
        self.write(ABSTRACTCS, 7 << 8);
        assert_eq!(self.read(ABSTRACTCS) & (7 << 8), 0, "cmderr cleared");
    }
}

/// `x1 += 1`, `x2 += 1` forever from 4 (x1, x2 start at 0).
fn counting_loop() -> Vec<u32> {
    vec![NOP, addi(1, 1, 1), addi(2, 2, 1), jal(-8, 0)]
}

#[test]
fn idcode_after_tap_reset_and_bypass() {
    let mut p = Probe::new(&[jal(0, 0)]);
    // Test-Logic-Reset selects IDCODE.
    assert_eq!(p.dr(0, 32) as u32, IDCODE);
    assert_eq!(IDCODE & 1, 1);
    // Capture-IR loads 0b00001; IR shifts out while the new one goes in.
    assert_eq!(p.ir(0x1F), 1);
    // BYPASS: one bit, 0 captured, the pattern comes out one bit late.
    let out = p.dr(0b1011_0110, 9);
    assert_eq!(out, 0b1_0110_1100);
    // An unassigned instruction is BYPASS too.
    p.ir(0x05);
    assert_eq!(p.dr(0b1, 2), 0b10);
    // IR 0x01 again, and TAP reset by TMS gives IDCODE back.
    p.ir(0x01);
    assert_eq!(p.dr(0, 32) as u32, IDCODE);
    p.ir(0x1F);
    p.tap_reset();
    assert_eq!(p.dr(0, 32) as u32, IDCODE);
}

#[test]
fn dtmcs_fields() {
    let mut p = Probe::new(&[jal(0, 0)]);
    p.ir(0x10);
    let v = p.dr(0, 32) as u32;
    assert_eq!(v & 0xF, 1, "version 0.13");
    assert_eq!((v >> 4) & 0x3F, 7, "abits");
    assert_eq!((v >> 10) & 3, 0, "dmistat");
    assert_eq!((v >> 12) & 7, 1, "idle");
    assert_eq!(v >> 15, 0, "reserved bits and the write-only resets read 0");
}

#[test]
fn dmi_data0_write_read_and_module_identity() {
    let mut p = Probe::new(&[jal(0, 0)]);
    // Inactive: writes other than dmcontrol are ignored.
    p.write(DATA0, 0x1234_5678);
    assert_eq!(p.read(DATA0), 0);
    p.activate();
    for v in [0xDEAD_BEEF, 0, 0x8000_0001] {
        p.write(DATA0, v);
        assert_eq!(p.read(DATA0), v);
    }
    let s = p.read(DMSTATUS);
    assert_eq!(s & 0xF, 2, "version 0.13");
    assert_eq!(s & (1 << 7), 1 << 7, "authenticated");
    assert_eq!(
        s & (ALLRUNNING | (1 << 10)),
        ALLRUNNING | (1 << 10),
        "running"
    );
    assert_eq!(s & (ALLHALTED | ALLNONEXISTENT | ALLUNAVAIL), 0);
    assert_eq!(p.read(HARTINFO), 0);
    let cs = p.read(ABSTRACTCS);
    assert_eq!(cs & 0xF, 1, "datacount");
    assert_eq!((cs >> 24) & 0x1F, 0, "progbufsize");
    // dmactive = 0 resets the module: data0 back to 0.
    p.write(DMCONTROL, 0);
    assert_eq!(p.read(DMCONTROL) & 1, 0);
    p.activate();
    assert_eq!(p.read(DATA0), 0);
}

#[test]
fn hartsel_one_bit_and_nonexistent_hart() {
    let mut p = Probe::new(&[jal(0, 0)]);
    p.activate();
    p.write(DMCONTROL, DMACTIVE | (0x3FF << 16) | (0x3FF << 6));
    assert_eq!(p.read(DMCONTROL), DMACTIVE | (1 << 16), "HARTSELLEN 1");
    let s = p.read(DMSTATUS);
    assert_eq!(s & (ALLNONEXISTENT | (1 << 14)), ALLNONEXISTENT | (1 << 14));
    assert_eq!(s & (ALLRUNNING | ALLHALTED | ALLHAVERESET), 0);
    // A halt request for hart 1 does not halt hart 0.
    p.write(DMCONTROL, DMACTIVE | HALTREQ | (1 << 16));
    p.write(DMCONTROL, DMACTIVE);
    assert_eq!(p.read(DMSTATUS) & ALLRUNNING, ALLRUNNING);
}

#[test]
fn haltreq_halts_at_an_instruction_boundary_and_resume_continues() {
    let mut p = Probe::new(&counting_loop());
    p.activate();
    p.run(300);
    p.halt();
    let last = *p.retired.last().unwrap();
    let n = p.retired.len();
    // Halted: nothing retires, haltsum0 shows hart 0.
    p.run(500);
    assert_eq!(p.retired.len(), n, "retired while halted");
    assert_eq!(p.read(HALTSUM0), 1);
    let dpc = p.reg(DPC);
    assert_eq!(dpc, last.next_pc, "dpc = the next instruction");
    let dcsr = p.reg(DCSR);
    assert_eq!(dcsr >> 28, 4, "xdebugver");
    assert_eq!((dcsr >> 6) & 7, 3, "cause haltreq");
    assert_eq!(dcsr & 3, 3, "prv M");
    // x1 and x2 agree with where it stopped.
    let (x1, x2) = (p.reg(0x1001), p.reg(0x1002));
    assert_eq!(x1, x2 + (dpc == 8) as u32, "x1 {x1} x2 {x2} dpc {dpc}");
    assert!(x1 > 3);
    // Resume: resumeack, running, and the next retirement is at dpc.
    p.resume();
    let s = p.read(DMSTATUS);
    assert_eq!(s & (ALLRESUMEACK | ALLRUNNING), ALLRESUMEACK | ALLRUNNING);
    assert!(p.retired.len() > n);
    assert_eq!(p.retired[n].pc, dpc);
    assert!(p.retired.iter().all(|r| !r.trap), "no trap");
    // resumereq is ignored when haltreq is written with it.
    p.halt();
    let n = p.retired.len();
    p.write(DMCONTROL, DMACTIVE | HALTREQ | RESUMEREQ);
    p.run(100);
    assert_eq!(p.read(DMSTATUS) & ALLHALTED, ALLHALTED);
    assert_eq!(p.retired.len(), n);
}

#[test]
fn abstract_read_of_every_gpr() {
    let mut prog = Vec::new();
    let val = |r: u32| 0x1000_0001u32.wrapping_mul(r).wrapping_add(0x0101_0101 * r) ^ 0xA5A5_0000;
    for r in 1..32 {
        prog.extend(li(r, val(r)));
    }
    prog.push(jal(0, 0));
    let mut p = Probe::new(&prog);
    p.activate();
    p.run(400);
    p.halt();
    assert_eq!(p.reg(DPC), 4 * 62, "spinning on the last jal");
    assert_eq!(p.reg(0x1000), 0, "x0");
    for r in 1..32 {
        assert_eq!(p.reg(0x1000 + r), val(r), "x{r}");
    }
}

#[test]
fn abstract_write_of_a_gpr_and_dpc_then_resume() {
    // 0: spin; 8: x3 = x5 + 1, then spin at 12.
    let prog = [jal(0, 0), NOP, addi(3, 5, 1), jal(0, 0)];
    let mut p = Probe::new(&prog);
    p.activate();
    p.run(100);
    p.halt();
    assert_eq!(p.reg(DPC), 0);
    p.set_reg(0x1005, 41);
    assert_eq!(p.reg(0x1005), 41);
    p.set_reg(DPC, 8);
    assert_eq!(p.reg(DPC), 8);
    // x0 stays 0.
    p.set_reg(0x1000, 7);
    assert_eq!(p.reg(0x1000), 0);
    let n = p.retired.len();
    p.resume();
    p.run(50);
    let r = p.retired[n];
    assert_eq!((r.pc, r.rd, r.wdata), (8, 3, 42), "addi at the written dpc");
    p.halt();
    assert_eq!(p.reg(0x1003), 42);
    assert_eq!(p.reg(DPC), 12);
}

#[test]
fn single_step_retires_one_instruction_per_resume() {
    let prog = [
        addi(1, 0, 5),
        addi(2, 1, 1),
        jal(12, 0),
        addi(9, 0, 9), // skipped
        NOP,
        addi(3, 2, 1),
        jal(0, 0),
    ];
    let mut p = Probe::new(&prog);
    p.activate();
    // Halt before the first instruction: haltreq held through the core's
    // reset (ndmreset) halts it at pc 0.
    p.write(DMCONTROL, DMACTIVE | HALTREQ | NDMRESET);
    p.write(DMCONTROL, DMACTIVE | HALTREQ);
    p.write(DMCONTROL, DMACTIVE | ACKHAVERESET);
    p.retired.clear();
    assert_eq!(p.reg(DPC), 0);
    let dcsr = p.reg(DCSR);
    p.set_reg(DCSR, dcsr | 4);
    let mut pcs = Vec::new();
    for _ in 0..5 {
        let n = p.retired.len();
        p.resume();
        p.run(100);
        assert_eq!(p.retired.len(), n + 1, "one instruction per step");
        assert_eq!(p.read(DMSTATUS) & ALLHALTED, ALLHALTED);
        let dcsr = p.reg(DCSR);
        assert_eq!((dcsr >> 6) & 7, 4, "cause step");
        let dpc = p.reg(DPC);
        assert_eq!(dpc, p.retired[n].next_pc);
        pcs.push(dpc);
    }
    assert_eq!(pcs, [4, 8, 20, 24, 24]);
    assert_eq!(p.reg(0x1003), 7);
    assert_eq!(p.reg(0x1009), 0);
    // Step off: resume runs freely.
    let d = p.reg(DCSR);
    p.set_reg(DCSR, d & !4);
    p.resume();
    p.run(200);
    assert_eq!(p.read(DMSTATUS) & ALLRUNNING, ALLRUNNING);
}

#[test]
fn step_with_stepie_clear_takes_no_interrupt() {
    // Interrupts on (mtvec = 0x40, MEIE, MIE); the handler at 0x40 spins.
    let mut prog = vec![NOP; 0x50 / 4];
    let code = [
        addi(1, 0, 0x40),
        csrw(MTVEC, 1),
        addi(1, 0, 0x7FF),
        addi(1, 1, 1), // 0x800: MEIE
        csrw(MIE, 1),
        addi(1, 0, 8),
        csrw(MSTATUS, 1), // MIE
        addi(2, 2, 1),
        jal(-4, 0),
    ];
    prog[..code.len()].copy_from_slice(&code);
    prog[0x40 / 4] = jal(0, 0);
    let mut p = Probe::new(&prog);
    p.activate();
    p.run(200);
    p.halt();
    let dpc = p.reg(DPC);
    assert!(dpc == 28 || dpc == 32, "in the loop: {dpc}");
    p.irq = true;
    let d = p.reg(DCSR);
    p.set_reg(DCSR, d | 4);
    for _ in 0..4 {
        p.resume();
        p.run(100);
    }
    assert!(
        !p.retired.iter().any(|r| r.trap),
        "interrupt taken while stepping"
    );
    // stepie = 1: the interrupt is taken and the step halts at the handler.
    let d = p.reg(DCSR);
    p.set_reg(DCSR, d | (1 << 11));
    p.resume();
    p.run(100);
    assert!(p.retired.last().unwrap().trap);
    assert_eq!(p.reg(DPC), 0x40);
}

#[test]
fn ebreak_with_ebreakm_halts_with_cause_1() {
    let prog = [addi(1, 0, 1), EBREAK, addi(1, 0, 2), jal(0, 0)];
    let mut p = Probe::new(&prog);
    p.activate();
    p.write(DMCONTROL, DMACTIVE | HALTREQ | NDMRESET);
    p.write(DMCONTROL, DMACTIVE | HALTREQ);
    p.write(DMCONTROL, DMACTIVE);
    p.retired.clear();
    assert_eq!(p.reg(DPC), 0);
    let d = p.reg(DCSR);
    p.set_reg(DCSR, d | (1 << 15));
    p.resume();
    p.run(200);
    assert_eq!(p.read(DMSTATUS) & ALLHALTED, ALLHALTED);
    let dcsr = p.reg(DCSR);
    assert_eq!((dcsr >> 6) & 7, 1, "cause ebreak");
    assert_eq!(p.reg(DPC), 4, "dpc = the ebreak");
    assert_eq!(p.reg(0x1001), 1);
    assert_eq!(p.retired.len(), 1, "the ebreak neither retires nor traps");
    // Past the ebreak by hand; with ebreakm = 0 it would trap (cause 3).
    p.set_reg(DPC, 8);
    p.resume();
    p.run(100);
    assert_eq!(p.retired[1].pc, 8);
    assert_eq!(p.retired[1].wdata, 2);
}

#[test]
fn system_bus_loads_a_program_and_reaches_every_region() {
    let mut p = Probe::new(&[jal(0, 0)]);
    p.activate();
    let sbcs = p.read(SBCS);
    assert_eq!(sbcs >> 29, 1, "sbversion");
    assert_eq!((sbcs >> 5) & 0x7F, 32, "sbasize");
    assert_eq!(sbcs & 0x1F, 0b00100, "sbaccess32 only");
    assert_eq!((sbcs >> 17) & 7, 2, "sbaccess reset 32 bits");
    p.halt();
    // A new program at 0x100, written with autoincrement.
    let prog = [addi(4, 0, 0x123), addi(5, 4, 1), jal(0, 0)];
    p.write(SBCS, SBACCESS32 | SBAUTOINCREMENT);
    p.write(SBADDRESS0, 0x100);
    for &w in &prog {
        p.write(SBDATA0, w);
    }
    assert_eq!(p.read(SBADDRESS0), 0x10C);
    // Read back: sbreadonaddr starts the first read, sbreadondata the rest.
    p.write(
        SBCS,
        SBACCESS32 | SBAUTOINCREMENT | SBREADONADDR | SBREADONDATA,
    );
    p.write(SBADDRESS0, 0x100);
    let back: Vec<u32> = (0..3).map(|_| p.read(SBDATA0)).collect();
    assert_eq!(back, prog);
    assert_eq!(p.read(SBCS) & (7 << 12 | 1 << 22 | 1 << 21), 0, "no error");
    // Run it.
    p.set_reg(DPC, 0x100);
    p.resume();
    p.run(100);
    p.halt();
    assert_eq!(p.reg(0x1005), 0x124);
    // Data memory: write, read back (no autoincrement).
    p.write(SBCS, SBACCESS32 | SBREADONADDR);
    p.write(SBADDRESS0, map::DMEM + 0x20);
    p.write(SBDATA0, 0xCAFE_F00D);
    p.write(SBADDRESS0, map::DMEM + 0x24);
    p.write(SBDATA0, 0x0BAD_CAFE);
    p.write(SBADDRESS0, map::DMEM + 0x20);
    assert_eq!(p.read(SBDATA0), 0xCAFE_F00D);
    p.write(SBADDRESS0, map::DMEM + 0x24);
    assert_eq!(p.read(SBDATA0), 0x0BAD_CAFE);
    // The peripheral bus and the timer's mtimecmp.
    p.write(SBADDRESS0, map::BUS + 0x40);
    assert_eq!(
        p.read(SBDATA0),
        map::BUS + 0x40,
        "bus model: unwritten word = address"
    );
    p.write(SBDATA0, 0x5555_AAAA);
    assert_eq!(p.bus.get(&(map::BUS + 0x40)), Some(&0x5555_AAAA));
    p.write(SBADDRESS0, map::MTIMECMP);
    assert_eq!(p.read(SBDATA0), 0xFFFF_FFFF);
    // While running, too (taken between two instructions).
    p.resume();
    p.write(SBADDRESS0, map::DMEM + 0x20);
    assert_eq!(p.read(SBDATA0), 0xCAFE_F00D);
    assert_eq!(p.read(DMSTATUS) & ALLRUNNING, ALLRUNNING);
    // Unmapped: sberror 2 (bad address), no further access until cleared.
    p.write(SBADDRESS0, 0x4000_0000);
    assert_eq!((p.read(SBCS) >> 12) & 7, 2);
    p.write(SBADDRESS0, map::DMEM + 0x24);
    assert_eq!(p.read(SBDATA0), 0xCAFE_F00D, "no access while sberror");
    p.write(SBCS, SBACCESS32 | SBREADONADDR | (7 << 12));
    assert_eq!((p.read(SBCS) >> 12) & 7, 0, "W1C");
    // Misaligned: 3; unsupported size: 4.
    p.write(SBADDRESS0, map::DMEM + 2);
    assert_eq!((p.read(SBCS) >> 12) & 7, 3);
    p.write(SBCS, (1 << 17) | SBREADONADDR | (7 << 12));
    p.write(SBADDRESS0, map::DMEM);
    assert_eq!((p.read(SBCS) >> 12) & 7, 4);
}

#[test]
fn ndmreset_resets_the_core_and_not_the_module() {
    let mut p = Probe::new(&counting_loop());
    p.activate();
    p.write(DMCONTROL, DMACTIVE | ACKHAVERESET);
    assert_eq!(p.read(DMSTATUS) & ALLHAVERESET, 0);
    p.write(DATA0, 0x77);
    p.run(200);
    p.write(DMCONTROL, DMACTIVE | NDMRESET);
    let s = p.read(DMSTATUS);
    assert_eq!(s & (ALLUNAVAIL | ALLHAVERESET), ALLUNAVAIL | ALLHAVERESET);
    assert_eq!(p.read(DMCONTROL) & NDMRESET, NDMRESET);
    let n = p.retired.len();
    p.run(200);
    assert_eq!(p.retired.len(), n, "held in reset");
    p.write(DMCONTROL, DMACTIVE);
    p.run(50);
    assert_eq!(p.retired[n].pc, 0, "restarted at the reset pc");
    let s = p.read(DMSTATUS);
    assert_eq!(s & (ALLRUNNING | ALLHAVERESET), ALLRUNNING | ALLHAVERESET);
    p.write(DMCONTROL, DMACTIVE | ACKHAVERESET);
    assert_eq!(p.read(DMSTATUS) & ALLHAVERESET, 0);
    assert_eq!(p.read(DATA0), 0x77, "the DM keeps its state");
}

#[test]
fn unsupported_commands_get_their_cmderr() {
    let mut p = Probe::new(&counting_loop());
    p.activate();
    // Not halted: 4.
    assert_eq!(p.command(access(0x1001, false)), 4);
    // Ignored while cmderr is set: a valid command after halting does not
    // run (data0 keeps its value).
    p.halt();
    p.write(DATA0, 0x99);
    assert_eq!(p.command(access(0x1001, false)), 4);
    assert_eq!(p.read(DATA0), 0x99);
    p.clear_cmderr();
    for (cmd, err, what) in [
        ((1 << 24) | (1 << 17), 2, "Quick Access"),
        ((2 << 24) | (2 << 20), 2, "Access Memory"),
        ((3 << 20) | (1 << 17) | 0x1001, 2, "aarsize 64"),
        ((1 << 20) | (1 << 17) | 0x1001, 2, "aarsize 16"),
        (access(0x1001, false) | (1 << 18), 2, "postexec"),
        (access(0x1001, false) | (1 << 19), 2, "aarpostincrement"),
        (access(TDATA3, false), 3, "tdata3"),
        (access(0x3A0, false), 3, "pmpcfg0"),
        (access(0xF14, true), 3, "write of mhartid (read-only)"),
        (access(0x1020, false), 3, "f0"),
        (access(0xC000, true), 3, "non-standard"),
    ] {
        assert_eq!(p.command(cmd), err, "{what}");
        p.clear_cmderr();
    }
    // No transfer: nothing to do, no error (aarsize not looked at).
    assert_eq!(p.command(7 << 20), 0);
    // Still works after the errors.
    p.set_reg(0x1007, 0x1234);
    assert_eq!(p.reg(0x1007), 0x1234);
}

#[test]
fn dmi_capture_reports_the_last_request() {
    let mut p = Probe::new(&[jal(0, 0)]);
    p.activate();
    p.write(DATA0, 5);
    // A scan with a nop reports the last read's address and status 0.
    p.ir(0x11);
    p.dmi(DATA0, 0, 1);
    assert_eq!(p.dmi(0, 0, 0), (DATA0, 5, 0));
    // dtmcs: dmireset / dmihardreset are write-1 bits that read 0.
    p.ir(0x10);
    p.dr(1 << 16, 32);
    let v = p.dr(1 << 17, 32) as u32;
    assert_eq!(v & (3 << 16 | 3 << 10), 0);
}

#[test]
fn system_bus_busy_and_sbbusyerror() {
    let mut p = Probe::new(&[jal(0, 0)]);
    p.activate();
    p.halt();
    // A bus read that waits: sbbusy until the bus answers.
    p.stall = true;
    p.write(SBCS, SBACCESS32 | SBREADONADDR);
    p.write(SBADDRESS0, map::BUS + 0x80);
    let cs = p.read(SBCS);
    assert_eq!(cs & (1 << 21 | 1 << 22), 1 << 21, "sbbusy, no error yet");
    // sbaddress0 written and sbdata0 read while busy: sbbusyerror, and
    // neither takes effect.
    p.write(SBADDRESS0, map::DMEM);
    p.read(SBDATA0);
    p.stall = false;
    p.run(20);
    let cs = p.read(SBCS);
    assert_eq!(cs & (1 << 21 | 1 << 22), 1 << 22, "done, sbbusyerror");
    assert_eq!(p.read(SBADDRESS0), map::BUS + 0x80);
    assert_eq!(p.read(SBDATA0), map::BUS + 0x80, "the waited-for read");
    // While sbbusyerror is set no access starts; W1C clears it.
    p.write(SBADDRESS0, map::DMEM);
    assert_eq!(p.read(SBDATA0), map::BUS + 0x80);
    p.write(SBCS, SBACCESS32 | SBREADONADDR | (1 << 22));
    assert_eq!(p.read(SBCS) & (1 << 22), 0);
    p.write(SBADDRESS0, map::DMEM);
    assert_eq!(p.read(SBDATA0), 0, "data memory starts as zeros");
}

/// The DTM alone, its DMI answered by the test: a request the DM has not
/// answered makes the next scan's status 3 (busy), sticky until dmireset;
/// dmihardreset also forgets the request.
#[test]
fn dmi_busy_is_sticky_until_dmireset() {
    use super::dtm::Dtm;
    let mut d = Box::new(Dtm::default());
    d.clock.connect();
    d.reset.connect();
    d.tck.connect();
    d.tms.connect();
    d.tdi.connect();
    d.dmi_ack.connect();
    d.dmi_rdata.connect();
    d.dmi_resp.connect();
    d.connect_all();
    let mut reqs = 0;
    let clock = |d: &mut Dtm, ack: bool, reqs: &mut usize| {
        d.dmi_ack.next = ack;
        d.dmi_rdata.next = 0x5A5A_0000_u64.into();
        d.clock.next = false.into();
        assert!(simulate(d, 1000));
        d.clock.next = true.into();
        assert!(simulate(d, 1000));
        *reqs += d.dmi_req.val() as usize;
    };
    // One TCK period; `ack` answers every request at once.
    let tck = |d: &mut Dtm, tms: bool, tdi: bool, ack: bool, reqs: &mut usize| -> bool {
        d.tck.next = false;
        d.tms.next = tms;
        d.tdi.next = tdi;
        for _ in 0..4 {
            clock(d, ack, reqs);
        }
        let tdo = d.tdo.val();
        d.tck.next = true;
        for _ in 0..4 {
            clock(d, ack, reqs);
        }
        tdo
    };
    let scan = |d: &mut Dtm, ir: bool, v: u64, n: usize, ack: bool, reqs: &mut usize| {
        tck(d, true, false, ack, reqs);
        if ir {
            tck(d, true, false, ack, reqs);
        }
        tck(d, false, false, ack, reqs);
        tck(d, false, false, ack, reqs);
        let mut out = 0u64;
        for k in 0..n {
            out |= (tck(d, k == n - 1, (v >> k) & 1 == 1, ack, reqs) as u64) << k;
        }
        tck(d, true, false, ack, reqs);
        tck(d, false, false, ack, reqs);
        out
    };
    d.reset.next = true;
    clock(&mut d, false, &mut reqs);
    d.reset.next = false;
    for _ in 0..5 {
        tck(&mut d, true, false, false, &mut reqs);
    }
    tck(&mut d, false, false, false, &mut reqs);
    scan(&mut d, true, 0x11, 5, false, &mut reqs);
    let read = |addr: u64| (addr << 34) | 1;
    // A read the DM does not answer; the next scan finds it in flight.
    scan(&mut d, false, read(0x11), 41, false, &mut reqs);
    assert_eq!(reqs, 1);
    assert_eq!(scan(&mut d, false, read(0x12), 41, false, &mut reqs) & 3, 3);
    // Sticky: the request in that scan was not sent, and the status stays
    // 3 although nothing is in flight after a hard reset... until dmireset.
    assert_eq!(reqs, 1);
    assert_eq!(scan(&mut d, false, 0, 41, true, &mut reqs) & 3, 3);
    scan(&mut d, true, 0x10, 5, true, &mut reqs);
    assert_eq!(
        (scan(&mut d, false, 0, 32, true, &mut reqs) >> 10) & 3,
        3,
        "dmistat"
    );
    scan(&mut d, false, 1 << 17, 32, true, &mut reqs);
    assert_eq!(
        (scan(&mut d, false, 0, 32, true, &mut reqs) >> 10) & 3,
        0,
        "cleared"
    );
    // Answered requests: status 0 and the DM's data.
    scan(&mut d, true, 0x11, 5, true, &mut reqs);
    scan(&mut d, false, read(0x04), 41, true, &mut reqs);
    assert_eq!(reqs, 2);
    let r = scan(&mut d, false, 0, 41, true, &mut reqs);
    assert_eq!((r >> 34, (r >> 2) as u32, r & 3), (0x04, 0x5A5A_0000, 0));
    // dmireset alone clears a busy status once the request is answered.
    scan(&mut d, false, read(0x05), 41, false, &mut reqs);
    assert_eq!(scan(&mut d, false, 0, 41, false, &mut reqs) & 3, 3);
    scan(&mut d, false, 0, 41, true, &mut reqs);
    scan(&mut d, true, 0x10, 5, true, &mut reqs);
    scan(&mut d, false, 1 << 16, 32, true, &mut reqs);
    scan(&mut d, true, 0x11, 5, true, &mut reqs);
    assert_eq!(scan(&mut d, false, 0, 41, true, &mut reqs) & 3, 0);
}

#[test]
fn abstract_access_to_the_cores_csrs() {
    // 0: spin; 8: the program reads what the debugger wrote; 0x40: the
    // trap handler spins.
    let mut prog = vec![NOP; 0x44 / 4];
    let code = [
        jal(0, 0),
        NOP,
        csrr(5, MSCRATCH),
        csrr(6, TINFO),
        csrr(7, DCSR), // illegal outside debug mode
        jal(0, 0),
    ];
    prog[..code.len()].copy_from_slice(&code);
    prog[0x40 / 4] = jal(0, 0);
    let mut p = Probe::new(&prog);
    p.activate();
    p.run(100);
    p.halt();
    assert_eq!(p.reg(MISA), (1 << 30) | (1 << 12) | (1 << 8), "RV32IM");
    assert_eq!(p.reg(MHARTID), 0);
    for c in [0xF11, 0xF12, 0xF13, 0xF15, 0x310] {
        assert_eq!(p.reg(c), 0, "{c:#x}");
    }
    assert_eq!(p.reg(MSTATUS), 0x1800, "MPP 3, MIE/MPIE 0 after reset");
    assert_eq!(p.reg(MCAUSE), 0);
    // Written and read back; misa ignores writes (WARL), mip too.
    p.set_reg(MTVEC, 0x40);
    assert_eq!(p.reg(MTVEC), 0x40);
    p.set_reg(MSCRATCH, 0x1234_5678);
    assert_eq!(p.reg(MSCRATCH), 0x1234_5678);
    p.set_reg(MEPC, 0x1003);
    assert_eq!(p.reg(MEPC), 0x1000, "mepc bits 1:0 are 0");
    p.set_reg(MISA, 0);
    assert_eq!(p.reg(MISA), 0x4000_1100);
    p.set_reg(MIE, 0x880);
    assert_eq!(p.reg(MIE), 0x880);
    p.set_reg(MIE, 0);
    // The counters count on while halted; minstret does not.
    let (c0, i0) = (p.reg(MCYCLE), p.reg(MINSTRET));
    assert!(p.reg(MCYCLE) > c0);
    assert_eq!(p.reg(MINSTRET), i0);
    p.set_reg(MINSTRETH, 7);
    assert_eq!(p.reg(MINSTRETH), 7);
    assert_eq!(p.reg(0xC82), 7, "instreth, the read-only view");
    // dcsr and dpc as before.
    assert_eq!(p.reg(DCSR) >> 28, 4);
    // A write to a read-only CSR, a CSR that does not exist: cmderr 3,
    // data0 untouched.
    p.write(DATA0, 0x55);
    assert_eq!(p.command(access(MHARTID, true)), 3);
    p.clear_cmderr();
    assert_eq!(p.command(access(0x7C0, false)), 3);
    p.clear_cmderr();
    assert_eq!(p.read(DATA0), 0x55);
    // The program sees mscratch; tinfo is a CSR for it too; dcsr is not.
    let n = p.retired.len();
    p.set_reg(DPC, 8);
    p.resume();
    p.run(100);
    let r = &p.retired[n..];
    assert_eq!((r[0].pc, r[0].rd, r[0].wdata), (8, 5, 0x1234_5678));
    assert_eq!((r[1].pc, r[1].rd, r[1].wdata), (12, 6, 4));
    assert!(r[2].trap && r[2].cause == 2 && r[2].pc == 16, "{:x?}", r[2]);
    assert_eq!(r[2].next_pc, 0x40);
}

#[test]
fn trigger_enumeration_as_probe_rs_does_it() {
    let mut p = Probe::new(&counting_loop());
    p.activate();
    p.halt();
    // determine_number_of_hardware_breakpoints (0.13.2, 5.1).
    let mut n = 0;
    loop {
        p.write(DATA0, n);
        let err = p.command(access(TSELECT, true));
        if err == 3 {
            p.clear_cmderr();
            break;
        }
        assert_eq!(err, 0);
        if p.reg(TSELECT) != n {
            break;
        }
        if p.reg(TINFO) & 0xFFFF == 1 {
            break;
        }
        n += 1;
    }
    assert_eq!(n, 2, "two triggers");
    for unit in 0..2 {
        p.set_reg(TSELECT, unit);
        assert_eq!(p.reg(TSELECT), unit);
        assert_eq!(p.reg(TINFO), 1 << 2, "type 2 only");
        let t = p.reg(TDATA1);
        assert_eq!(t, MC_TYPE2, "mcontrol, maskmax 0, disabled");
        // Fields it does not have read 0: select, timing, sizelo, chain,
        // match, s, store, load; action 2 (trace) is not there either.
        p.set_reg(TDATA1, !0);
        let t = p.reg(TDATA1);
        assert_eq!(t, MC_TYPE2 | MC_DMODE | MC_HIT | MC_M | MC_U | MC_EXECUTE);
        p.set_reg(TDATA1, MC_DMODE | MC_ACTION_DEBUG);
        assert_eq!(p.reg(TDATA1), MC_TYPE2 | MC_DMODE | MC_ACTION_DEBUG);
        p.set_reg(TDATA2, 0x1234_5678 + unit);
        assert_eq!(p.reg(TDATA2), 0x1234_5678 + unit);
    }
    p.set_reg(TSELECT, 0);
    assert_eq!(p.reg(TDATA2), 0x1234_5678, "each trigger its own tdata2");
    // tselect out of range: kept (WARL).
    p.set_reg(TSELECT, 7);
    assert_eq!(p.reg(TSELECT), 0);
    assert_eq!(p.command(access(TDATA3, false)), 3, "no tdata3");
}

#[test]
fn breakpoint_halts_before_the_instruction_and_steps_off_it() {
    // 0: nop; 4: x1 += 1; 8: x2 += 1; 12: jal 4.
    let mut p = Probe::new(&counting_loop());
    p.activate();
    p.run(200);
    p.halt();
    p.set_bp(0, 8);
    assert_eq!(p.reg(TDATA1), PROBE_RS_BP, "reads back as written");
    assert_eq!(p.reg(TDATA2), 8);
    let n = p.retired.len();
    p.resume();
    p.run(300);
    assert_eq!(p.read(DMSTATUS) & ALLHALTED, ALLHALTED, "hit");
    let dcsr = p.reg(DCSR);
    assert_eq!((dcsr >> 6) & 7, 2, "cause trigger");
    assert_eq!(p.reg(DPC), 8);
    // Nothing at 8 retired: the last retirement is the addi at 4, whose
    // next pc is 8; x2 is one behind x1.
    let last = *p.retired.last().unwrap();
    assert!(p.retired.len() > n);
    assert_eq!((last.pc, last.next_pc), (4, 8));
    assert!(p.retired[n..].iter().all(|r| r.pc != 8 && !r.trap));
    assert_eq!(p.reg(0x1001), p.reg(0x1002) + 1);
    assert_eq!(p.reg(TDATA1), PROBE_RS_BP | MC_HIT, "hit");
    let n = p.retired.len();
    p.run(300);
    assert_eq!(p.retired.len(), n, "nothing retires while halted");
    // probe-rs's step from it: triggers off, one instruction, on again.
    assert_eq!(p.probe_rs_step(2), 1);
    assert_eq!(p.retired.last().unwrap().pc, 8);
    assert_eq!((p.reg(DCSR) >> 6) & 7, 4, "cause step");
    assert_eq!(p.reg(DPC), 12);
    p.set_reg(TSELECT, 0);
    assert_eq!(p.reg(TDATA1), PROBE_RS_BP | MC_HIT, "enabled again");
    // Run: around the loop (12, 4) and the trigger again at 8.
    let n = p.retired.len();
    p.resume();
    p.run(300);
    assert_eq!((p.reg(DCSR) >> 6) & 7, 2);
    assert_eq!(p.reg(DPC), 8);
    let pcs: Vec<u32> = p.retired[n..].iter().map(|r| r.pc).collect();
    assert_eq!(pcs, [12, 4]);
    // probe-rs's run from a trigger halt: its step, then resume.
    p.probe_rs_step(2);
    let n = p.retired.len();
    p.resume();
    p.run(300);
    assert_eq!(p.reg(DPC), 8);
    assert_eq!(p.retired.len(), n + 2);
    // Cleared (probe-rs: tdata1 = 0, tdata2 = 0): the loop runs on.
    p.set_reg(TSELECT, 0);
    p.set_reg(TDATA1, 0);
    p.set_reg(TDATA2, 0);
    let n = p.retired.len();
    p.resume();
    p.run(600);
    assert_eq!(p.read(DMSTATUS) & ALLRUNNING, ALLRUNNING);
    assert!(p.retired[n..].iter().filter(|r| r.pc == 8).count() > 3);
}

#[test]
fn trigger_on_the_stepped_instruction_and_after_a_step() {
    let mut p = Probe::new(&counting_loop());
    p.activate();
    p.run(200);
    p.halt();
    // Trigger 1 at 8, the hart at 4.
    p.set_bp(1, 8);
    p.set_reg(DPC, 4);
    // A step ending at 8 halts with cause 4: the trigger at the new
    // address fires only when the hart attempts that instruction
    // (0.13.2, "Single Step").
    let d = p.reg(DCSR);
    p.set_reg(DCSR, d | 4);
    let n = p.retired.len();
    p.resume();
    p.run(100);
    assert_eq!(p.retired.len(), n + 1);
    assert_eq!(((p.reg(DCSR) >> 6) & 7, p.reg(DPC)), (4, 8));
    // Stepping the instruction at 8 with the trigger on: it fires before
    // the instruction (cause 2 instead of 4, "Single Step"), nothing retires;
    // every further step does the same.
    for _ in 0..2 {
        p.resume();
        p.run(100);
        assert_eq!(p.retired.len(), n + 1, "not executed");
        assert_eq!(((p.reg(DCSR) >> 6) & 7, p.reg(DPC)), (2, 8));
    }
    // With the trigger off (as probe-rs does after a trigger halt) the
    // step executes it.
    p.set_reg(TSELECT, 1);
    p.set_reg(TDATA1, PROBE_RS_BP & !(MC_M | MC_U));
    p.resume();
    p.run(100);
    assert_eq!(p.retired.len(), n + 2);
    assert_eq!(((p.reg(DCSR) >> 6) & 7, p.reg(DPC)), (4, 12));
}

#[test]
fn trigger_without_m_or_execute_does_not_fire() {
    let mut p = Probe::new(&counting_loop());
    p.activate();
    p.halt();
    p.set_bp(0, 8);
    p.set_reg(TDATA1, PROBE_RS_BP & !MC_M);
    p.set_bp(1, 8);
    p.set_reg(TDATA1, PROBE_RS_BP & !MC_EXECUTE);
    let n = p.retired.len();
    p.resume();
    p.run(600);
    assert_eq!(p.read(DMSTATUS) & ALLRUNNING, ALLRUNNING);
    assert!(p.retired[n..].iter().filter(|r| r.pc == 8).count() > 3);
    p.halt();
    for unit in 0..2 {
        p.set_reg(TSELECT, unit);
        assert_eq!(p.reg(TDATA1) & MC_HIT, 0, "no hit");
    }
}

#[test]
fn machine_mode_triggers_action_0_and_dmode_protection() {
    // The program sets trigger 0 itself (dmode 0: action 0, a breakpoint
    // exception) on the addi at 0x28 and reads tdata1 back; the handler
    // at 0x60 reads mcause and mtval. At 0x30: tries to overwrite trigger
    // 1's tdata2 and tdata1.
    let target = 0x28u32;
    let mut prog = vec![NOP; 0x70 / 4];
    let code = [
        addi(1, 0, 0x60),
        csrw(MTVEC, 1),
        csrw(TSELECT, 0),
        addi(2, 0, target as i32),
        csrw(TDATA2, 2),
        lui(3, (MC_TYPE2 | MC_DMODE | MC_ACTION_DEBUG) >> 12),
        addi(3, 3, (MC_M | MC_EXECUTE) as i32),
        csrw(TDATA1, 3), // dmode and action 1 not writable from M-mode
        csrr(4, TDATA1),
        NOP,
        addi(5, 0, 1), // 0x28: the trigger
        jal(0, 0),
        addi(8, 0, 1), // 0x30
        csrw(TSELECT, 8),
        csrw(TDATA2, 0),
        csrw(TDATA1, 0),
        jal(0, 0),
    ];
    prog[..code.len()].copy_from_slice(&code);
    prog[0x60 / 4..0x60 / 4 + 3].copy_from_slice(&[csrr(6, MCAUSE), csrr(7, MTVAL), jal(0, 0)]);
    let mut p = Probe::new(&prog);
    p.activate();
    p.run(400);
    let trap = p.retired.iter().find(|r| r.trap).copied().unwrap();
    assert_eq!((trap.pc, trap.cause, trap.next_pc), (target, 3, 0x60));
    assert!(p.retired.iter().all(|r| r.pc != target || r.trap));
    p.halt();
    assert_eq!(
        p.reg(0x1004),
        MC_TYPE2 | MC_M | MC_EXECUTE,
        "tdata1 as M-mode sees it"
    );
    assert_eq!((p.reg(0x1006), p.reg(0x1007)), (3, target));
    assert_eq!(p.reg(0x1005), 0, "the addi at the trigger did not run");
    p.set_reg(TSELECT, 0);
    assert_eq!(p.reg(TDATA1), MC_TYPE2 | MC_HIT | MC_M | MC_EXECUTE, "hit");
    // Trigger 1 with dmode 1 (set here, in debug mode), off, at 0x100:
    // the program's writes at 0x30 are ignored.
    p.set_reg(TSELECT, 1);
    p.set_reg(TDATA2, 0x100);
    p.set_reg(TDATA1, MC_DMODE | MC_ACTION_DEBUG);
    p.set_reg(TSELECT, 0);
    p.set_reg(TDATA1, 0);
    p.set_reg(DPC, 0x30);
    p.resume();
    p.run(200);
    p.halt();
    assert_eq!(p.reg(0x1008), 1, "ran");
    assert_eq!(p.reg(TSELECT), 1, "tselect is writable from M-mode");
    assert_eq!(p.reg(TDATA2), 0x100);
    assert_eq!(p.reg(TDATA1), MC_TYPE2 | MC_DMODE | MC_ACTION_DEBUG);
}
