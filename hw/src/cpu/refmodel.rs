//! The reference the core is compared with in lock step: rrs-lib's RV32IM
//! instruction-set simulator for every unprivileged instruction, wrapped in
//! a machine-mode layer written here from the RISC-V privileged spec
//! (rrs-lib has no CSRs, no SYSTEM instructions and no traps: it reports an
//! exception to its caller and leaves the hart as it was).
//!
//! The layer: CSRs and their instructions, ecall/ebreak/mret/wfi, trap
//! entry (mepc, mcause, mtval, mstatus.MIE/MPIE, mtvec direct/vectored),
//! the encodings rrs-lib executes but the spec reserves (`slli` with
//! funct7 != 0, `jalr` with funct3 != 0), instruction-address-misaligned
//! (rrs-lib jumps anywhere: the layer restores the registers and traps),
//! and the memory map (rrs-lib asks its `Memory`, which answers by the map
//! of `cpu/mod.rs`: fetch only from instruction memory, no stores there,
//! nothing outside the regions).

use super::map;
use rrs_lib::instruction_executor::{InstructionException, InstructionExecutor};
use rrs_lib::{HartState, MemAccessSize, Memory};
use std::collections::HashMap;

/// What a bus address holds before it is written (the testbench's
/// peripheral model answers the same).
pub fn bus_default(word_addr: u32) -> u32 {
    word_addr.wrapping_mul(0x9E37_79B1) ^ 0x5A5A_5A5A
}

/// A model of the device on the peripheral bus, answering by the order of
/// accesses alone (no clock), so that the testbench and the reference each
/// hold an instance and see the same values when the core makes the
/// accesses the reference does. `word_addr` has bits 1:0 clear; `strb`
/// are the byte lanes written, `data` holds them in place.
pub trait Peripheral {
    fn read(&mut self, word_addr: u32) -> u32;
    fn write(&mut self, word_addr: u32, strb: u32, data: u32);
}

/// A store as rrs-lib made it: byte address, size in bytes, data.
pub type Write = (u32, u32, u32);

pub struct RefMem {
    pub imem: Vec<u32>,
    pub dmem: Vec<u8>,
    pub bus: HashMap<u32, u32>,
    /// The device on the bus; `None`: words that hold [`bus_default`]
    /// until written (`bus`).
    pub port: Option<Box<dyn Peripheral>>,
    pub mtimecmp: u64,
    /// Set by the harness before a step that loads from `mtime` (which
    /// counts clocks, not instructions): the core's loaded value.
    pub volatile: Option<u32>,
    pub writes: Vec<Write>,
}

impl RefMem {
    pub fn new(imem_words: usize, dmem_bytes: usize) -> Self {
        RefMem {
            imem: vec![0; imem_words],
            dmem: vec![0; dmem_bytes],
            bus: HashMap::new(),
            port: None,
            mtimecmp: u64::MAX,
            volatile: None,
            writes: Vec::new(),
        }
    }
    fn imem_bytes(&self) -> u32 {
        self.imem.len() as u32 * 4
    }
    pub fn fetchable(&self, pc: u32) -> bool {
        pc < self.imem_bytes()
    }
    fn word(&mut self, a: u32) -> Option<u32> {
        let w = a & !3;
        if w < self.imem_bytes() {
            Some(self.imem[(w / 4) as usize])
        } else if (map::DMEM..map::DMEM + self.dmem.len() as u32).contains(&w) {
            let o = (w - map::DMEM) as usize;
            Some(u32::from_le_bytes(self.dmem[o..o + 4].try_into().unwrap()))
        } else if (map::BUS..map::BUS_END).contains(&w) {
            if let Some(p) = self.port.as_mut() {
                return Some(p.read(w));
            }
            Some(*self.bus.get(&w).unwrap_or(&bus_default(w)))
        } else if w & 0xFFFF_0000 == map::CLINT {
            Some(match w {
                map::MTIMECMP => self.mtimecmp as u32,
                0x0200_4004 => (self.mtimecmp >> 32) as u32,
                map::MTIME | 0x0200_BFFC => {
                    self.volatile.expect("mtime read without the core's value")
                }
                _ => 0,
            })
        } else {
            None
        }
    }
}

fn size_bytes(size: MemAccessSize) -> u32 {
    match size {
        MemAccessSize::Byte => 1,
        MemAccessSize::HalfWord => 2,
        MemAccessSize::Word => 4,
    }
}

impl Memory for RefMem {
    fn read_mem(&mut self, addr: u32, size: MemAccessSize) -> Option<u32> {
        let n = size_bytes(size);
        let w = self.word(addr)?;
        let v = w >> ((addr & 3) * 8);
        Some(if n == 4 { v } else { v & ((1 << (8 * n)) - 1) })
    }

    fn write_mem(&mut self, addr: u32, size: MemAccessSize, data: u32) -> bool {
        let n = size_bytes(size);
        let data = if n == 4 {
            data
        } else {
            data & ((1 << (8 * n)) - 1)
        };
        let w = addr & !3;
        if (map::DMEM..map::DMEM + self.dmem.len() as u32).contains(&w) {
            let o = (addr - map::DMEM) as usize;
            self.dmem[o..o + n as usize].copy_from_slice(&data.to_le_bytes()[..n as usize]);
        } else if (map::BUS..map::BUS_END).contains(&w) {
            let sh = (addr & 3) * 8;
            let mask = if n == 4 {
                u32::MAX
            } else {
                ((1u32 << (8 * n)) - 1) << sh
            };
            if let Some(p) = self.port.as_mut() {
                let strb = ((1u32 << n) - 1) << (addr & 3);
                p.write(w, strb, (data << sh) & mask);
            } else {
                let old = *self.bus.get(&w).unwrap_or(&bus_default(w));
                self.bus.insert(w, (old & !mask) | ((data << sh) & mask));
            }
        } else if w & 0xFFFF_0000 == map::CLINT {
            if n == 4 && w == map::MTIMECMP {
                self.mtimecmp = (self.mtimecmp & !0xFFFF_FFFF) | data as u64;
            } else if n == 4 && w == 0x0200_4004 {
                self.mtimecmp = (self.mtimecmp & 0xFFFF_FFFF) | ((data as u64) << 32);
            }
        } else {
            return false;
        }
        self.writes.push((addr, n, data));
        true
    }
}

/// Machine-mode state (privileged spec, chapter "Machine-Level ISA").
#[derive(Clone, Debug, Default)]
pub struct Csrs {
    pub mie_bit: bool,
    pub mpie: bool,
    pub meie: bool,
    pub mtie: bool,
    pub mtvec: u32,
    pub mscratch: u32,
    pub mepc: u32,
    pub mcause: u32,
    pub mtval: u32,
    pub minstret: u64,
}

/// What one step did, to compare with the core's trace.
#[derive(Debug, PartialEq, Eq, Clone)]
pub struct Event {
    pub pc: u32,
    pub trap: Option<u32>,
    pub next_pc: u32,
    /// Register written (not x0) and its value.
    pub rd: Option<(usize, u32)>,
    pub writes: Vec<Write>,
    /// rd's value is a cycle count (mcycle/cycle, mtime): the harness takes
    /// the core's.
    pub volatile_rd: bool,
}

pub struct RefCpu {
    pub hart: HartState,
    pub mem: RefMem,
    pub csr: Csrs,
    /// mip.MEIP / mip.MTIP as the harness sees them.
    pub meip: bool,
    pub mtip: bool,
}

impl RefCpu {
    pub fn new(mem: RefMem) -> Self {
        RefCpu {
            hart: HartState::new(),
            mem,
            csr: Csrs::default(),
            meip: false,
            mtip: false,
        }
    }

    /// Trap entry: mepc, mcause, mtval, MPIE = MIE, MIE = 0, pc = the
    /// vector (vectored mode: base + 4 * cause for interrupts).
    fn trap(&mut self, cause: u32, tval: u32) {
        let c = &mut self.csr;
        c.mepc = self.hart.pc;
        c.mcause = cause;
        c.mtval = tval;
        c.mpie = c.mie_bit;
        c.mie_bit = false;
        let base = c.mtvec & !3;
        self.hart.pc = if c.mtvec & 1 == 1 && cause >> 31 == 1 {
            base.wrapping_add(4 * (cause & 0x7FFF_FFFF))
        } else {
            base
        };
    }

    /// The pending and enabled interrupt the spec says is taken first, if
    /// any (MEI before MTI).
    pub fn pending_interrupt(&self) -> Option<u32> {
        if !self.csr.mie_bit {
            None
        } else if self.meip && self.csr.meie {
            Some(0x8000_000B)
        } else if self.mtip && self.csr.mtie {
            Some(0x8000_0007)
        } else {
            None
        }
    }

    /// Takes interrupt `cause` before the next instruction.
    pub fn interrupt(&mut self, cause: u32) -> Event {
        let pc = self.hart.pc;
        self.trap(cause, 0);
        Event {
            pc,
            trap: Some(cause),
            next_pc: self.hart.pc,
            rd: None,
            writes: vec![],
            volatile_rd: false,
        }
    }

    fn csr_read(&self, a: u32, cycle: u64) -> Option<u32> {
        let c = &self.csr;
        Some(match a {
            0x300 => 0x1800 | (c.mpie as u32) << 7 | (c.mie_bit as u32) << 3,
            0x301 => 0x4000_1100,
            0x304 => (c.meie as u32) << 11 | (c.mtie as u32) << 7,
            0x305 => c.mtvec,
            0x340 => c.mscratch,
            0x341 => c.mepc,
            0x342 => c.mcause,
            0x343 => c.mtval,
            0x344 => (self.meip as u32) << 11 | (self.mtip as u32) << 7,
            0xB00 | 0xC00 => cycle as u32,
            0xB80 | 0xC80 => (cycle >> 32) as u32,
            0xB02 | 0xC02 => c.minstret as u32,
            0xB82 | 0xC82 => (c.minstret >> 32) as u32,
            0x310 | 0xF11..=0xF15 => 0,
            _ => return None,
        })
    }

    /// Returns whether the write replaced the minstret increment.
    fn csr_write(&mut self, a: u32, v: u32) -> bool {
        let c = &mut self.csr;
        match a {
            0x300 => {
                c.mie_bit = v & 8 != 0;
                c.mpie = v & 0x80 != 0;
            }
            0x304 => {
                c.meie = v & 0x800 != 0;
                c.mtie = v & 0x80 != 0;
            }
            0x305 => c.mtvec = v & !2,
            0x340 => c.mscratch = v,
            0x341 => c.mepc = v & !3,
            0x342 => c.mcause = v,
            0x343 => c.mtval = v,
            0xB02 => {
                c.minstret = (c.minstret & !0xFFFF_FFFF) | v as u64;
                return true;
            }
            0xB82 => {
                c.minstret = (c.minstret & 0xFFFF_FFFF) | (v as u64) << 32;
                return true;
            }
            _ => {}
        }
        false
    }

    /// Executes the instruction at pc (or takes its exception).
    pub fn step(&mut self) -> Event {
        let pc = self.hart.pc;
        self.mem.writes.clear();
        let mut ev = Event {
            pc,
            trap: None,
            next_pc: 0,
            rd: None,
            writes: vec![],
            volatile_rd: false,
        };
        let done =
            |s: &mut Self, mut ev: Event, trap: Option<(u32, u32)>, rd: Option<(usize, u32)>| {
                if let Some((cause, tval)) = trap {
                    s.trap(cause, tval);
                    ev.trap = Some(cause);
                } else {
                    if let Some((r, v)) = rd {
                        if r != 0 {
                            s.hart.registers[r] = v;
                            ev.rd = Some((r, v));
                        }
                    }
                }
                ev.next_pc = s.hart.pc;
                ev.writes = std::mem::take(&mut s.mem.writes);
                ev
            };
        if !self.mem.fetchable(pc) {
            return done(self, ev, Some((1, pc)), None);
        }
        let insn = self.mem.imem[(pc / 4) as usize];
        let (opcode, f3, f7) = (insn & 0x7F, (insn >> 12) & 7, insn >> 25);
        let (rd, rs1) = (((insn >> 7) & 31) as usize, ((insn >> 15) & 31) as usize);
        let illegal = Some((2, insn));
        // The privileged layer.
        if opcode == 0x73 {
            if f3 == 0 {
                return match insn {
                    0x0000_0073 => done(self, ev, Some((11, 0)), None),
                    0x0010_0073 => done(self, ev, Some((3, pc)), None),
                    0x3020_0073 => {
                        self.csr.mie_bit = self.csr.mpie;
                        self.csr.mpie = true;
                        self.hart.pc = self.csr.mepc;
                        self.csr.minstret += 1;
                        done(self, ev, None, None)
                    }
                    0x1050_0073 => {
                        self.hart.pc = pc + 4;
                        self.csr.minstret += 1;
                        done(self, ev, None, None)
                    }
                    _ => done(self, ev, illegal, None),
                };
            }
            if f3 == 4 {
                return done(self, ev, illegal, None);
            }
            let a = insn >> 20;
            let src = if f3 & 4 != 0 {
                rs1 as u32
            } else {
                self.hart.registers[rs1]
            };
            let writes = f3 & 3 == 1 || rs1 != 0;
            let Some(old) = self.csr_read(a, 0) else {
                return done(self, ev, illegal, None);
            };
            if writes && a >> 10 == 3 {
                return done(self, ev, illegal, None);
            }
            ev.volatile_rd = matches!(a, 0xB00 | 0xC00 | 0xB80 | 0xC80);
            let new = match f3 & 3 {
                1 => src,
                2 => old | src,
                _ => old & !src,
            };
            let replaced = writes && self.csr_write(a, new);
            if !replaced {
                self.csr.minstret += 1;
            }
            self.hart.pc = pc + 4;
            return done(self, ev, None, Some((rd, old)));
        }
        if (opcode == 0x13 && f3 == 1 && f7 != 0) || (opcode == 0x67 && f3 != 0) {
            return done(self, ev, illegal, None);
        }
        ev.volatile_rd = opcode == 0x03 && {
            let a = self.hart.registers[rs1].wrapping_add(((insn as i32) >> 20) as u32) & !3;
            a == map::MTIME || a == 0x0200_BFFC
        };
        if ev.volatile_rd && self.mem.volatile.is_none() {
            self.mem.volatile = Some(0);
        }
        // rrs-lib for the rest; registers restored if it traps late.
        let saved = self.hart.registers;
        self.hart.last_register_write = None;
        let r = InstructionExecutor {
            hart_state: &mut self.hart,
            mem: &mut self.mem,
        }
        .step();
        self.mem.volatile = None;
        let trap = match r {
            Ok(()) if self.hart.pc & 3 != 0 => {
                let target = self.hart.pc;
                self.hart.registers = saved;
                self.hart.pc = pc;
                Some((0, target))
            }
            Ok(()) => None,
            Err(InstructionException::IllegalInstruction(..)) => illegal,
            Err(InstructionException::AlignmentFault(a)) => {
                Some((if opcode == 0x03 { 4 } else { 6 }, a))
            }
            Err(InstructionException::LoadAccessFault(a)) => Some((5, a)),
            Err(InstructionException::StoreAccessFault(a)) => Some((7, a)),
            Err(InstructionException::FetchError(a)) => Some((1, a)),
        };
        if trap.is_none() {
            self.csr.minstret += 1;
        }
        let rdw = match trap {
            None => self
                .hart
                .last_register_write
                .map(|r| (r, self.hart.registers[r])),
            Some(_) => None,
        };
        let mut ev = done(self, ev, trap, None);
        ev.rd = rdw;
        ev
    }
}
