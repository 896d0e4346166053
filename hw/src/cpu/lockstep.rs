//! Lock-step comparison of the core with the reference ([`RefCpu`]:
//! rrs-lib plus the machine-mode layer) on seeded random programs.
//!
//! After every retired instruction or trap the core reports (`tr_*`), the
//! reference executes one step and the two must agree on: trap or not and
//! mcause, the pc, the next pc, the register written and its value, and
//! the store's address, byte lanes and data. CSR state is compared through
//! the trap handler, which reads mcause/mepc/mtval into registers, and
//! through the random CSR instructions' results.
//!
//! Values that count clocks rather than instructions (mcycle, mtime, mip)
//! are taken from the core (mip: only MEIP/MTIP may be set). External
//! interrupts are raised at random by the testbench and dropped when the
//! handler stores to [`ACK`]; an interrupt the core takes must be pending
//! and enabled in the reference (and be the one of highest priority), and
//! one that has been pending and enabled for the whole of an instruction
//! must be taken before it.
//!
//! `cargo test -p rnic-hw cpu::lockstep` runs the short seeded run;
//! `make cpu-soak` the long one (`CPU_SOAK_SEEDS`, `CPU_SOAK_EVENTS`).

use super::asm::*;
use super::core::Rv32;
use super::map;
use super::refmodel::{bus_default, Event, Peripheral, RefCpu, RefMem};
use crate::common::testutil::Rng;
use rust_hdl::prelude::*;
use std::collections::HashMap;

/// Memories of the test configuration: 4 KiB each (small, so that random
/// addresses often cross their ends).
pub const IW: usize = 10;
pub const DW: usize = 10;
const IMEM_WORDS: usize = 1 << IW;
const DMEM_BYTES: usize = 4 << DW;
/// The store that acknowledges the testbench's interrupt.
pub const ACK: u32 = map::BUS + 0xF00;

/// What the core reported for one retired instruction or trap.
#[derive(Debug, Clone)]
pub struct CoreEvent {
    pub pc: u32,
    pub insn: u32,
    pub trap: Option<u32>,
    pub next_pc: u32,
    pub rd: Option<(usize, u32)>,
    pub strb: u32,
    pub maddr: u32,
    pub mwdata: u32,
}

/// The core with its testbench: program loading, a peripheral on the bus
/// (random wait states; words hold [`bus_default`] until written), the
/// interrupt line.
pub struct Bench<const I: usize, const D: usize> {
    pub uut: Box<Rv32<I, D>>,
    pub bus: HashMap<u32, u32>,
    /// The device on the bus; `None`: `bus` (words that hold
    /// [`bus_default`] until written).
    pub port: Option<Box<dyn Peripheral>>,
    pub rng: Rng,
    /// Clocks since reset was released (= the core's mtime).
    pub cycle: u64,
    pub irq: bool,
    /// Random interrupts: probability per clock (in 1/65536) of raising
    /// the line while it is low.
    pub irq_rate: u32,
    /// Clock of the last change of the interrupt line.
    pub irq_since: u64,
    /// Most wait states of a bus access.
    pub max_wait: u32,
    wait: u32,
}

impl<const I: usize, const D: usize> Bench<I, D> {
    pub fn new(seed: u64) -> Self {
        let mut uut = Box::new(Rv32::<I, D>::default());
        uut.clock.connect();
        uut.reset.connect();
        uut.ext_irq.connect();
        uut.bus_ready.connect();
        uut.bus_rdata.connect();
        uut.load_we.connect();
        uut.load_addr.connect();
        uut.load_data.connect();
        // No debugger: the debug inputs stay low.
        uut.dbg_halt_req.connect();
        uut.dbg_resume_req.connect();
        uut.dbg_reg_req.connect();
        uut.dbg_reg_write.connect();
        uut.dbg_reg_num.connect();
        uut.dbg_reg_wdata.connect();
        uut.dbg_sb_req.connect();
        uut.dbg_sb_write.connect();
        uut.dbg_sb_addr.connect();
        uut.dbg_sb_wdata.connect();
        uut.connect_all();
        Bench {
            uut,
            bus: HashMap::new(),
            port: None,
            rng: Rng::new(seed),
            cycle: 0,
            irq: false,
            irq_rate: 0,
            irq_since: 0,
            max_wait: 3,
            wait: 0,
        }
    }

    /// Holds reset, writes `words` at byte address `base` through the load
    /// port, and releases reset.
    pub fn load(&mut self, regions: &[(u32, &[u32])]) {
        self.uut.reset.next = true;
        for &(base, words) in regions {
            for (k, &w) in words.iter().enumerate() {
                self.uut.load_we.next = true;
                self.uut.load_addr.next = ((base + 4 * k as u32) as u64).into();
                self.uut.load_data.next = (w as u64).into();
                clk(&mut self.uut);
            }
        }
        self.uut.load_we.next = false;
        clk(&mut self.uut);
        clk(&mut self.uut);
        self.uut.reset.next = false;
        self.cycle = 0;
    }

    /// One clock: the peripheral answers, then the edge. Returns the
    /// core's trace for that edge.
    pub fn clock(&mut self) -> Option<CoreEvent> {
        let u = &mut self.uut;
        u.bus_ready.next = false;
        if u.bus_valid.val() {
            if self.wait == 0 {
                let a = u.bus_addr.val().to_u64() as u32;
                let strb = u.bus_strb.val().to_u64() as u32;
                let mask = (0..4)
                    .filter(|b| strb >> b & 1 == 1)
                    .fold(0u32, |m, b| m | 0xFF << (8 * b));
                let w = u.bus_wdata.val().to_u64() as u32;
                u.bus_ready.next = true;
                if let Some(p) = self.port.as_mut() {
                    // One read or write of the device per access.
                    if u.bus_we.val() {
                        p.write(a, strb, w & mask);
                    } else {
                        u.bus_rdata.next = (p.read(a) as u64).into();
                    }
                } else {
                    let old = *self.bus.get(&a).unwrap_or(&bus_default(a));
                    u.bus_rdata.next = (old as u64).into();
                    if u.bus_we.val() {
                        self.bus.insert(a, (old & !mask) | (w & mask));
                        if a == ACK {
                            self.irq = false;
                            self.irq_since = self.cycle;
                        }
                    }
                }
                self.wait = self.rng.below(self.max_wait as usize + 1) as u32;
            } else {
                self.wait -= 1;
            }
        }
        if !self.irq && self.irq_rate > 0 && (self.rng.next_u64() & 0xFFFF) < self.irq_rate as u64 {
            self.irq = true;
            self.irq_since = self.cycle;
        }
        u.ext_irq.next = self.irq;
        clk(u);
        self.cycle += 1;
        if !u.tr_valid.val() {
            return None;
        }
        let trap = u.tr_trap.val().then(|| u.tr_cause.val().to_u64() as u32);
        let rd = u.tr_rd.val().to_u64() as usize;
        Some(CoreEvent {
            pc: u.tr_pc.val().to_u64() as u32,
            insn: u.tr_insn.val().to_u64() as u32,
            trap,
            next_pc: u.tr_next_pc.val().to_u64() as u32,
            rd: (rd != 0).then(|| (rd, u.tr_rd_wdata.val().to_u64() as u32)),
            strb: u.tr_mem_strb.val().to_u64() as u32,
            maddr: u.tr_mem_addr.val().to_u64() as u32,
            mwdata: u.tr_mem_wdata.val().to_u64() as u32,
        })
    }

    /// Clocks until the next trace event (panics after `limit` clocks).
    pub fn next_event(&mut self, limit: u64) -> CoreEvent {
        for _ in 0..limit {
            if let Some(e) = self.clock() {
                return e;
            }
        }
        panic!(
            "no instruction retired in {limit} clocks (pc {:#x})",
            self.uut.tr_pc.val().to_u64()
        );
    }
}

/// One clock: inputs set before are sampled at the rising edge.
pub fn clk<const I: usize, const D: usize>(u: &mut Rv32<I, D>) {
    u.clock.next = false.into();
    assert!(simulate(u, 1000), "did not settle");
    u.clock.next = true.into();
    assert!(simulate(u, 1000), "did not settle");
}

/// The store of a reference event as (word address, byte lanes, data in
/// those lanes).
fn lanes(w: &(u32, u32, u32)) -> (u32, u32, u32) {
    let (addr, n, data) = *w;
    let sh = addr & 3;
    let strb = ((1u32 << n) - 1) << sh;
    let mask = (0..4)
        .filter(|b| strb >> b & 1 == 1)
        .fold(0u32, |m, b| m | 0xFF << (8 * b));
    (addr & !3, strb, (data << (8 * sh)) & mask)
}

/// Compares one core event with one reference step; returns the reference
/// event or what differs.
pub fn compare(
    core: &CoreEvent,
    r: &mut RefCpu,
    bench_irq_steady: bool,
    mtime: u64,
) -> Result<Event, String> {
    let mut ev;
    if let Some(c) = core.trap.filter(|c| c >> 31 == 1) {
        // An interrupt: pending and enabled in the reference, of the
        // highest priority. MEIP: the line was high recently; MTIP: mtime
        // has reached mtimecmp (within the clocks of the check).
        r.meip = c == 0x8000_000B || bench_irq_steady;
        r.mtip = mtime + 4 >= r.mem.mtimecmp;
        let want = r.pending_interrupt();
        if want != Some(c) {
            return Err(format!("core took interrupt {c:#x}, reference expects {want:x?} (mstatus.MIE {}, mie MEIE {} MTIE {})", r.csr.mie_bit, r.csr.meie, r.csr.mtie));
        }
        ev = r.interrupt(c);
    } else {
        r.meip = bench_irq_steady;
        r.mtip = mtime >= r.mem.mtimecmp.saturating_add(8);
        if let Some(c) = r.pending_interrupt() {
            return Err(format!("interrupt {c:#x} pending and enabled for the whole instruction at {:#x}, not taken", r.hart.pc));
        }
        ev = r.step();
        if ev.volatile_rd {
            if let (Some((rr, _)), Some((cr, cv))) = (ev.rd, core.rd) {
                if rr == cr {
                    r.hart.registers[rr] = cv;
                    ev.rd = Some((rr, cv));
                }
            }
        }
        let is_mip =
            core.insn & 0x7F == 0x73 && core.insn >> 20 == 0x344 && (core.insn >> 12) & 3 != 0;
        if is_mip && ev.trap.is_none() {
            if let (Some((rr, _)), Some((cr, cv))) = (ev.rd, core.rd) {
                if rr == cr && cv & !0x880 == 0 {
                    r.hart.registers[rr] = cv;
                    ev.rd = Some((rr, cv));
                }
            }
        }
    }
    let mut diffs = Vec::new();
    if core.pc != ev.pc {
        diffs.push(format!("pc core {:#x} ref {:#x}", core.pc, ev.pc));
    }
    if core.trap != ev.trap {
        diffs.push(format!("trap core {:x?} ref {:x?}", core.trap, ev.trap));
    }
    if core.next_pc != ev.next_pc {
        diffs.push(format!(
            "next pc core {:#x} ref {:#x}",
            core.next_pc, ev.next_pc
        ));
    }
    if core.rd != ev.rd {
        diffs.push(format!("rd core {:x?} ref {:x?}", core.rd, ev.rd));
    }
    let core_w = (core.strb != 0).then(|| {
        let mask = (0..4)
            .filter(|b| core.strb >> b & 1 == 1)
            .fold(0u32, |m, b| m | 0xFF << (8 * b));
        (core.maddr, core.strb, core.mwdata & mask)
    });
    let ref_w = ev.writes.first().map(lanes);
    if core_w != ref_w || ev.writes.len() > 1 {
        diffs.push(format!("store core {core_w:x?} ref {ref_w:x?}"));
    }
    if diffs.is_empty() {
        Ok(ev)
    } else {
        let mut o =
            rrs_lib::instruction_string_outputter::InstructionStringOutputter { insn_pc: ev.pc };
        let dis = rrs_lib::process_instruction(&mut o, core.insn).unwrap_or_else(|| "?".into());
        Err(format!(
            "insn {:#010x} ({dis}) at {:#x}: {}",
            core.insn,
            ev.pc,
            diffs.join("; ")
        ))
    }
}

// ---- Random programs.

const BODY_START: u32 = 0x140;
const HANDLER: u32 = 0xE00;
const BODY_END: u32 = HANDLER - 4;
const DATA_START: u32 = 0xF00;

/// A random program: init code, a random body that jumps back to its
/// start, the trap handler and random data words.
pub fn random_program(rng: &mut Rng) -> Vec<u32> {
    let mut p = vec![NOP; IMEM_WORDS];
    let mut at = 0usize;
    let put = |p: &mut Vec<u32>, at: &mut usize, w: u32| {
        p[*at] = w;
        *at += 1;
    };
    // Init: handler address, interrupts on, random registers.
    for w in li(1, HANDLER) {
        put(&mut p, &mut at, w);
    }
    put(&mut p, &mut at, csrw(MTVEC, 1));
    for w in li(1, 0x800) {
        put(&mut p, &mut at, w);
    }
    put(&mut p, &mut at, csrw(MIE, 1));
    put(&mut p, &mut at, csr(6, 0, MSTATUS, 8));
    for r in 1..32 {
        let v = match rng.below(4) {
            0 => rng.below(64) as u32,
            1 => map::DMEM + rng.below(DMEM_BYTES) as u32,
            _ => rng.next_u64() as u32,
        };
        for w in li(r, v) {
            put(&mut p, &mut at, w);
        }
    }
    assert!(at * 4 <= BODY_START as usize);
    let j = BODY_START as i32 - 4 * at as i32;
    put(&mut p, &mut at, jal(j, 0));

    // Body.
    let mut at = (BODY_START / 4) as usize;
    let end = (BODY_END / 4) as usize;
    while at < end - 3 {
        let room = (end - at) as i32 * 4;
        for w in random_slot(rng, room) {
            p[at] = w;
            at += 1;
        }
    }
    p[end] = jal(BODY_START as i32 - BODY_END as i32, 0);

    // Handler (uses x27..x30; the body writes only x1..x26).
    let mut h = vec![
        csrr(28, MCAUSE),
        csrr(29, MEPC),
        csrr(30, MTVAL),
        b(0, 0, 28, 4), // blt x28, x0, irq (patched below)
        addi(27, 0, 1),
        b(0, 27, 28, 0), // beq x28, x27, refetch (patched)
        addi(29, 29, 4),
        csrw(MEPC, 29),
        MRET,
    ];
    // A fetch fault (mepc is the unfetchable target): resume somewhere in
    // the body's first 2 KiB, chosen by mcycle (the reference takes the
    // core's mcycle, so both resume at the same place).
    let refetch = h.len();
    h.extend([
        csrr(29, MCYCLE),
        i(0x7FC, 29, 7, 29, OP_IMM),
        addi(29, 29, BODY_START as i32),
        csrw(MEPC, 29),
        MRET,
    ]);
    let irq = h.len();
    h.extend(li(27, ACK));
    h.extend([sw(0, 27, 0), MRET]);
    h[3] = b(4 * (irq as i32 - 3), 0, 28, 4);
    h[5] = b(4 * (refetch as i32 - 5), 27, 28, 0);
    let hb = (HANDLER / 4) as usize;
    p[hb..hb + h.len()].copy_from_slice(&h);
    for w in p.iter_mut().skip((DATA_START / 4) as usize) {
        *w = rng.next_u64() as u32;
    }
    p
}

fn rd_reg(rng: &mut Rng) -> u32 {
    1 + rng.below(26) as u32
}
fn any_reg(rng: &mut Rng) -> u32 {
    rng.below(32) as u32
}

/// One random instruction or short sequence at byte address `pc`, at
/// most `room` bytes.
fn random_slot(rng: &mut Rng, room: i32) -> Vec<u32> {
    let k = rng.below(100);
    let (rd, rs1, rs2) = (rd_reg(rng), any_reg(rng), any_reg(rng));
    match k {
        0..=17 => {
            // OP-IMM
            let f3 = rng.below(8) as u32;
            let imm = match f3 {
                1 => rng.below(32),
                5 => rng.below(32) | if rng.below(2) == 0 { 0x400 } else { 0 },
                _ => (rng.next_u64() as i32) >> 20,
            };
            vec![i(imm, rs1, f3, rd, OP_IMM)]
        }
        18..=30 => {
            let f3 = rng.below(8) as u32;
            let f7 = if (f3 == 0 || f3 == 5) && rng.below(2) == 0 {
                0x20
            } else {
                0
            };
            vec![r(f7, rs2, rs1, f3, rd, OP)]
        }
        31..=38 => vec![r(1, rs2, rs1, rng.below(8) as u32, rd, OP)],
        39..=46 => vec![u(
            rng.next_u64() as u32 & 0xF_FFFF,
            rd,
            if rng.below(2) == 0 { 0x37 } else { 0x17 },
        )],
        47..=69 => mem_slot(rng, rd),
        70..=71 => {
            // A jump out of the instruction memory (fetch fault there).
            let base = rd_reg(rng);
            let to = [map::DMEM, map::BUS, (IMEM_WORDS * 4) as u32, map::CLINT][rng.below(4)]
                + 4 * rng.below(16) as u32;
            let mut v = li(base, to).to_vec();
            v.push(jalr(0, base, if rng.below(2) == 0 { 0 } else { rd }));
            v
        }
        72..=79 => {
            // Branch forward (sometimes to a misaligned target).
            let max = (room / 4 - 1).clamp(1, 16);
            let mut off = 4 * (1 + rng.below(max as usize) as i32);
            if rng.below(10) == 0 {
                off -= 2;
            }
            let f3 = [0, 1, 4, 5, 6, 7][rng.below(6)];
            let (a, c) = if rng.below(4) == 0 {
                (rs1, rs1)
            } else {
                (rs1, rs2)
            };
            vec![b(off, c, a, f3)]
        }
        80..=81 => {
            let max = (room / 4 - 1).clamp(1, 16);
            let mut off = 4 * (1 + rng.below(max as usize) as i32);
            if rng.below(10) == 0 {
                off -= 2;
            }
            vec![jal(off, if rng.below(2) == 0 { 0 } else { rd })]
        }
        82..=83 if room >= 48 => {
            // auipc base; jalr forward (bit 0 of the target dropped;
            // sometimes bit 1 set).
            let base = rd_reg(rng);
            let mut off = 4 * (2 + rng.below(8));
            match rng.below(6) {
                0 => off += 1,
                1 => off += 2,
                _ => {}
            }
            if rng.below(4) == 0 {
                // Through any register: mostly outside the instruction
                // memory (access fault) or misaligned.
                return vec![jalr(off, any_reg(rng), rd)];
            }
            vec![
                u(0, base, 0x17),
                jalr(off, base, if rng.below(3) == 0 { 0 } else { rd }),
            ]
        }
        84..=89 => vec![csr_slot(rng, rd, rs1)],
        90..=91 => vec![if rng.below(2) == 0 { ECALL } else { EBREAK }],
        92..=95 => vec![illegal(rng)],
        96 => vec![FENCE],
        97 => vec![WFI],
        _ => vec![i((rng.next_u64() as i32) >> 20, rs1, 0, rd, OP_IMM)],
    }
}

/// A load or store: usually `li base, address` then the access.
fn mem_slot(rng: &mut Rng, rd: u32) -> Vec<u32> {
    let store = rng.below(5) < 2;
    let f3 = if store {
        rng.below(3) as u32
    } else {
        [0, 1, 2, 4, 5][rng.below(5)]
    };
    let mut off = rng.below(64) - 32;
    if rng.below(3) != 0 {
        off &= !((1 << (f3 & 3)) - 1);
    }
    let base = rd_reg(rng);
    let addr = match rng.below(100) {
        0..=59 => map::DMEM + rng.below(DMEM_BYTES) as u32,
        60..=69 => rng.below(IMEM_WORDS * 4) as u32,
        70..=79 => map::BUS + rng.below(0x200) as u32,
        80..=81 => [map::MTIMECMP, map::MTIMECMP + 4, map::MTIME, map::MTIME + 4][rng.below(4)],
        82..=87 => map::DMEM + DMEM_BYTES as u32 - 8 + rng.below(16) as u32,
        88..=91 => IMEM_WORDS as u32 * 4 - 8 + rng.below(16) as u32,
        _ => rng.next_u64() as u32,
    };
    // No stores to the timer here (a small mtimecmp would interrupt
    // forever; the timer has its directed tests).
    let store = store && addr & 0xFFFF_0000 != map::CLINT;
    let mut v: Vec<u32> = li(base, addr.wrapping_sub(off as u32)).to_vec();
    if rng.below(8) == 0 {
        // An arbitrary register as the base.
        v.clear();
    }
    let b = if v.is_empty() { any_reg(rng) } else { base };
    v.push(if store {
        s(off, any_reg(rng), b, f3)
    } else {
        i(off, b, f3, rd, LOAD)
    });
    v
}

/// A CSR instruction on an existing, missing or read-only CSR (never a
/// write of mtvec, which the handler needs).
fn csr_slot(rng: &mut Rng, rd: u32, rs1: u32) -> u32 {
    const CSRS: [u32; 30] = [
        MSTATUS, MISA, MIE, MTVEC, MSCRATCH, MSCRATCH, MEPC, MCAUSE, MTVAL, MIP, MCYCLE, MCYCLEH,
        MINSTRET, MINSTRETH, 0xC00, 0xC80, 0xC02, 0xC82, 0x310, 0xF11, 0xF12, 0xF13, MHARTID,
        0xF15, 0x306, 0x7C0, 0xC01, 0x320, 0x3A0, 0x180,
    ];
    let mut c = CSRS[rng.below(CSRS.len())];
    let f3 = [1, 2, 3, 5, 6, 7][rng.below(6)];
    let src = if rng.below(3) == 0 { 0 } else { rs1 };
    let writes = f3 & 3 == 1 || src != 0;
    if c == MTVEC && writes {
        c = MSCRATCH;
    }
    if c == MSTATUS && writes && f3 & 3 != 3 && rng.below(2) == 0 {
        // Keep MIE mostly on: set it explicitly.
        return csr(6, rd, MSTATUS, 8);
    }
    csr(f3, rd, c, src)
}

/// An encoding the core must refuse (or occasionally a random word).
fn illegal(rng: &mut Rng) -> u32 {
    let (rd, rs1, rs2) = (rd_reg(rng), any_reg(rng), any_reg(rng));
    match rng.below(14) {
        0 => i(0x400 | rng.below(32), rs1, 1, rd, OP_IMM), // slli, funct7 != 0
        1 => i(0x200, rs1, 5, rd, OP_IMM),                 // srli, bad funct7
        2 => r(0x20, rs2, rs1, 1 + rng.below(4) as u32, rd, OP), // bad funct7
        3 => r(0x02, rs2, rs1, rng.below(8) as u32, rd, OP),
        4 => b(8, rs2, rs1, 2 + rng.below(2) as u32), // branch funct3 2/3
        5 => i(0, rs1, [3, 6, 7][rng.below(3)], rd, LOAD),
        6 => s(0, rs2, rs1, 3 + rng.below(5) as u32),
        7 => i(0, rs1, 1 + rng.below(7) as u32, rd, 0x67), // jalr funct3 != 0
        8 => 0x0000_100F,                                  // fence.i
        9 => 0x1020_0073,                                  // sret
        10 => csr(4, rd, MSCRATCH, rs1),                   // SYSTEM funct3 4
        11 => 0x0000_4501,                                 // a compressed c.li
        12 => 0,
        _ => rng.next_u64() as u32,
    }
}

/// What a run covered.
#[derive(Default, Debug)]
pub struct Coverage {
    pub retired: usize,
    pub interrupts: usize,
    pub stores: usize,
    /// Exceptions by mcause.
    pub exceptions: [usize; 12],
    /// Retired instructions by major opcode (insn[6:2]).
    pub opcodes: [usize; 32],
    /// Distinct pcs.
    pub pcs: std::collections::HashSet<u32>,
}

impl Coverage {
    pub fn add(&mut self, o: &Coverage) {
        self.retired += o.retired;
        self.interrupts += o.interrupts;
        self.stores += o.stores;
        for k in 0..12 {
            self.exceptions[k] += o.exceptions[k];
        }
        for k in 0..32 {
            self.opcodes[k] += o.opcodes[k];
        }
        self.pcs.extend(o.pcs.iter());
    }
    pub fn summary(&self) -> String {
        let names = [
            (0x0C, "op"),
            (0x04, "op-imm"),
            (0x00, "load"),
            (0x08, "store"),
            (0x18, "branch"),
            (0x1B, "jal"),
            (0x19, "jalr"),
            (0x0D, "lui"),
            (0x05, "auipc"),
            (0x1C, "system"),
            (0x03, "misc-mem"),
        ];
        let ops: Vec<String> = names
            .iter()
            .map(|(k, n)| format!("{n} {}", self.opcodes[*k]))
            .collect();
        format!(
            "{} retired ({}), {} stores, {} interrupts, exceptions by cause {:?}",
            self.retired,
            ops.join(", "),
            self.stores,
            self.interrupts,
            self.exceptions
        )
    }
}

/// Runs `events` core events of the random program of `seed` in lock step.
pub fn run_seed(seed: u64, events: usize) -> Coverage {
    run_seed_checked(seed, events, None).unwrap_or_else(|m| panic!("{m}"))
}

/// [`run_seed`], returning the first difference; `tamper`: at that event,
/// invert the reference's registers x1..x26 (to show that the comparison
/// notices a wrong value).
pub fn run_seed_checked(
    seed: u64,
    events: usize,
    tamper: Option<usize>,
) -> Result<Coverage, String> {
    let mut rng = Rng::new(seed);
    let prog = random_program(&mut rng);
    let data: Vec<u32> = (0..DMEM_BYTES / 4).map(|_| rng.next_u64() as u32).collect();
    let mut bench = Bench::<IW, DW>::new(seed ^ 0xB0B);
    bench.irq_rate = 40;
    bench.load(&[(0, &prog), (map::DMEM, &data)]);
    let mut mem = RefMem::new(IMEM_WORDS, DMEM_BYTES);
    mem.imem.copy_from_slice(&prog);
    for (k, w) in data.iter().enumerate() {
        mem.dmem[4 * k..4 * k + 4].copy_from_slice(&w.to_le_bytes());
    }
    let mut r = RefCpu::new(mem);
    let mut cov = Coverage::default();
    let mut last_event_cycle = 0u64;
    let mut history: Vec<String> = Vec::new();
    for n in 0..events {
        if tamper == Some(n) {
            for x in 1..27 {
                r.hart.registers[x] = !r.hart.registers[x];
            }
        }
        let e = bench.next_event(500);
        // The line has been high since before the instruction began.
        let steady = bench.irq && bench.irq_since + 3 <= last_event_cycle;
        last_event_cycle = bench.cycle;
        match compare(&e, &mut r, steady, bench.cycle) {
            Ok(ev) => {
                match ev.trap {
                    None => {
                        cov.retired += 1;
                        cov.opcodes[((e.insn >> 2) & 31) as usize] += 1;
                    }
                    Some(c) if c >> 31 == 1 => cov.interrupts += 1,
                    Some(c) => cov.exceptions[c as usize] += 1,
                }
                cov.stores += ev.writes.len();
                cov.pcs.insert(e.pc);
                history.push(format!(
                    "{:#06x} {:#010x} -> {:#x}",
                    e.pc, e.insn, e.next_pc
                ));
                if history.len() > 12 {
                    history.remove(0);
                }
            }
            Err(m) => {
                return Err(format!(
                    "seed {seed}, event {n}, clock {}: {m}\nlast events:\n{}",
                    bench.cycle,
                    history.join("\n")
                ))
            }
        }
    }
    Ok(cov)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short seeded run of `cargo test` (debug build): a few seeds of
    /// random programs, every event compared.
    #[test]
    fn lockstep_random_programs() {
        let t = std::time::Instant::now();
        let mut total = Coverage::default();
        for seed in 1..=4 {
            total.add(&run_seed(seed, 25_000));
        }
        println!(
            "lock step: {} in {:.1} s",
            total.summary(),
            t.elapsed().as_secs_f64()
        );
        assert!(
            total.interrupts > 0 && total.stores > 100,
            "{}",
            total.summary()
        );
        assert!(
            total
                .exceptions
                .iter()
                .enumerate()
                .all(|(c, &n)| n > 0 || c == 8 || c == 9 || c == 10),
            "{}",
            total.summary()
        );
    }

    /// The comparison fails when the reference's state is wrong.
    #[test]
    fn lockstep_notices_a_difference() {
        let e =
            run_seed_checked(5, 5000, Some(1000)).expect_err("inverted registers must be noticed");
        assert!(e.contains("event 10"), "{e}");
    }

    /// The long run (`make cpu-soak`): `CPU_SOAK_SEEDS` (default 1..=20)
    /// seeds of `CPU_SOAK_EVENTS` (default 50,000) events.
    #[test]
    #[ignore]
    fn lockstep_soak() {
        let seeds: Vec<u64> = std::env::var("CPU_SOAK_SEEDS")
            .map(|s| s.split_whitespace().map(|x| x.parse().unwrap()).collect())
            .unwrap_or_else(|_| (1..=20).collect());
        let events = std::env::var("CPU_SOAK_EVENTS")
            .map(|s| s.parse().unwrap())
            .unwrap_or(500_000);
        let t = std::time::Instant::now();
        let mut total = Coverage::default();
        for &seed in &seeds {
            let c = run_seed(seed, events);
            println!("seed {seed}: {}", c.summary());
            total.add(&c);
        }
        println!(
            "lock step soak: {} seeds, {} events each: {} in {:.0} s",
            seeds.len(),
            events,
            total.summary(),
            t.elapsed().as_secs_f64()
        );
    }
}
