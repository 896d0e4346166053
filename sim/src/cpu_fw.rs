//! The firmware on the RISC-V core (`rnic-sim --fw cpu`): a Verilated
//! `rv32_core` (hw/src/cpu, the firmware configuration: 128 KiB instruction
//! memory, 64 KiB data memory; docs/cpu.md) running the firmware image
//! that `make firmware-elf` builds, the ELF the board's block RAM holds.
//!
//! Its peripheral bus is joined to the node's `rnic_core` firmware port as
//! the board joins them: the bus window at [`FW_PORT`] (`firmware/rnic-fw.x`)
//! is the port's register space (`fw_addr` = bus address − [`FW_PORT`]).
//! [`CpuFw::drive`] and [`CpuFw::sample`] run inside the node's clock
//! (`FwNode::tick`): the core and the CPU share one clock, as on the board.
//!
//! A bus access: the clock after the CPU raises `bus_valid`, `fw_valid` is
//! high for one edge; a write is answered (`bus_ready`) on the next clock, a
//! read on the clock after `fw_rvalid` with `fw_rdata`. An access outside the
//! port's 16 MiB (`fw_addr` is 24 bits) reads 0 and writes nothing, and is
//! counted in [`CpuStats::stray`]; the firmware makes none.

use crate::fw_log::{FwLog, Line, RttLayout, RttSnoop};
use crate::jtag::{JtagCable, JtagPort};
use rnic_wire::abi::context::port;
use verilator_sys::rv32_core::Model as Rv32;

/// Where the firmware port's registers are in the core's address space
/// (`FW_PORT` in `firmware/rnic-fw.x`, the peripheral bus's base).
pub const FW_PORT: u32 = 0x2000_0000;
/// The firmware port's register window (`fw_addr` is 24 bits).
pub const FW_PORT_SPAN: u32 = 1 << 24;
/// Instruction memory of the firmware configuration (`Rv32Fw`,
/// `firmware/rnic-fw.x`).
pub const IMEM_BYTES: usize = 128 << 10;
/// Data memory of the firmware configuration: the stack starts at its top
/// (`_stack_top` in `firmware/rnic-fw.x`).
pub const DMEM: u32 = 0x1000_0000;
pub const DMEM_BYTES: u32 = 64 << 10;

/// What the core did, from its retirement trace (`tr_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Instructions retired.
    pub retired: u64,
    /// Traps taken (the firmware takes none: it polls, with interrupts off).
    pub traps: u64,
    /// The first trap: (mcause, pc).
    pub first_trap: Option<(u32, u32)>,
    /// Firmware-port reads and writes.
    pub port_reads: u64,
    pub port_writes: u64,
    /// Peripheral-bus accesses outside the firmware port's window.
    pub stray: u64,
    /// Reads of `MBOX_CMD`: one per firmware poll (`Firmware::poll` reads
    /// the mailbox once), so this counts polls.
    pub polls: u64,
    /// The node's clock when the core left reset, and at its first poll
    /// (boot is done).
    pub start_cycle: Option<u64>,
    pub first_poll_cycle: Option<u64>,
    /// The lowest stack pointer (`x2`) the core has written: the stack's
    /// high-water mark is `DMEM + DMEM_BYTES` minus this.
    pub sp_low: Option<u32>,
}

impl CpuStats {
    /// Clocks from leaving reset to the first poll.
    pub fn boot_cycles(&self) -> Option<u64> {
        Some(self.first_poll_cycle? - self.start_cycle?)
    }

    /// The deepest the stack has been, in octets (0 before any write of `sp`).
    pub fn stack_peak(&self) -> u32 {
        self.sp_low
            .map_or(0, |sp| (DMEM + DMEM_BYTES).wrapping_sub(sp))
    }
}

/// Where the bus access in flight is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Idle,
    /// `fw_valid` went out at the last edge; a read waits for `fw_rvalid`.
    Issued {
        write: bool,
    },
    /// The answer goes to the CPU at the next edge.
    Answer(u32),
}

/// The CPU, its bus state and its statistics.
pub struct CpuFw {
    pub cpu: Rv32,
    access: Access,
    /// Hold the core at its next read of `MBOX_CMD` (`FwNode::with_port`).
    hold: bool,
    /// It is held there: the port is free for someone else.
    held: bool,
    pub stats: CpuStats,
    /// Clocks spent per instruction address and call site (the clocks up
    /// to and including each retirement go to the retired instruction's pc;
    /// the call site is the `jal`/`jalr` that called its function, from a
    /// shadow stack of calls and returns), when on ([`CpuFw::profile_on`]).
    pub profile: Option<std::collections::HashMap<(u32, u32), u64>>,
    /// Call sites of the functions the core is in (the profile's).
    shadow: Vec<u32>,
    /// Clocks since the last retirement.
    since_retire: u64,
    /// The firmware's RTT up channel read from the core's stores, and its
    /// decoder, when on ([`CpuFw::rtt_snoop`]).
    rtt: Option<Box<(RttSnoop, FwLog)>>,
    /// A JTAG adapter on the debug pins ([`CpuFw::plug_jtag`]).
    jtag: Option<JtagPort>,
    /// What the image's reads of `CLOCK_KHZ` answer instead of the RTL's
    /// (`FwNode::set_clock_khz`).
    pub(crate) clock_khz: Option<u32>,
}

impl CpuFw {
    /// A core with `imem` (instruction memory words from address 0, what
    /// [`rnic_fw::image::load_elf`] returns) loaded through its load port
    /// while reset is held; it leaves reset on the node's next clock.
    pub fn new(imem: &[u32]) -> Self {
        assert!(
            imem.len() * 4 <= IMEM_BYTES,
            "image larger than instruction memory"
        );
        let mut cpu = Rv32::new();
        cpu.set_reset(1);
        // The debug module (TAP pins left low) starts from its reset too,
        // inactive.
        cpu.set_dm_reset(1);
        cpu.ticks(2);
        cpu.set_load_we(1);
        for (k, &w) in imem.iter().enumerate() {
            cpu.set_load_addr(4 * k as u64);
            cpu.set_load_data(w as u64);
            cpu.tick();
        }
        cpu.set_load_we(0);
        cpu.tick();
        cpu.set_reset(0);
        cpu.set_dm_reset(0);
        CpuFw {
            cpu,
            access: Access::Idle,
            hold: false,
            clock_khz: None,
            held: false,
            stats: CpuStats::default(),
            profile: None,
            shadow: Vec::new(),
            since_retire: 0,
            rtt: None,
            jtag: None,
        }
    }

    /// The image built now (`rnic_fw::image::build_elf`, quick when
    /// current), as [`CpuFw::new`] takes it.
    pub fn build_image() -> Result<Vec<u32>, String> {
        let path = rnic_fw::image::build_elf()?;
        Self::read_image(&path)
    }

    /// The instruction memory words of the ELF file `path`.
    pub fn read_image(path: &std::path::Path) -> Result<Vec<u32>, String> {
        let d = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (imem, entry) = rnic_fw::image::load_elf(&d, IMEM_BYTES)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if entry != 0 {
            return Err(format!(
                "{}: entry {entry:#x}, the core starts at 0",
                path.display()
            ));
        }
        Ok(imem)
    }

    /// Before the clock's edge: the answer of a finished access to the CPU,
    /// or a new access to the core's firmware port (`core`'s `fw_*`).
    pub fn drive(&mut self, core: &mut verilator_sys::rnic_core::Model, cycle: u64) {
        self.stats.start_cycle.get_or_insert(cycle);
        if self.held {
            // Someone else drives the port; the core waits on its bus.
            self.cpu.set_bus_ready(0);
            return;
        }
        core.set_fw_valid(0);
        core.set_fw_write(0);
        match self.access {
            Access::Answer(v) => {
                self.cpu.set_bus_ready(1);
                self.cpu.set_bus_rdata(v as u64);
                self.access = Access::Idle;
                return;
            }
            Access::Issued { .. } => {
                self.cpu.set_bus_ready(0);
                return;
            }
            Access::Idle => self.cpu.set_bus_ready(0),
        }
        if self.cpu.get_bus_valid() == 0 {
            return;
        }
        let addr = self.cpu.get_bus_addr() as u32;
        let write = self.cpu.get_bus_we() != 0;
        let off = addr.wrapping_sub(FW_PORT);
        if self.hold && !write && off == port::MBOX_CMD {
            self.held = true;
            return;
        }
        if off >= FW_PORT_SPAN {
            self.stats.stray += 1;
            self.access = Access::Answer(0);
            return;
        }
        if !write && off == port::CLOCK_KHZ {
            if let Some(khz) = self.clock_khz {
                // `FwNode::set_clock_khz`: the clock this run stands for
                self.stats.port_reads += 1;
                self.access = Access::Answer(khz);
                return;
            }
        }
        if write {
            self.stats.port_writes += 1;
        } else {
            self.stats.port_reads += 1;
            if off == port::MBOX_CMD {
                self.stats.polls += 1;
                self.stats.first_poll_cycle.get_or_insert(cycle);
            }
        }
        // The port's registers are 32 bits wide; the firmware writes whole
        // words (`write_volatile` of u32).
        core.set_fw_valid(1);
        core.set_fw_write(write as u64);
        core.set_fw_addr(off as u64);
        core.set_fw_wdata(self.cpu.get_bus_wdata());
        self.access = Access::Issued { write };
    }

    /// After the core's edge (before the CPU's, which this clocks): a write
    /// is done; a read is done when `fw_rvalid` shows. Also counts the
    /// CPU's retirements and traps.
    pub fn sample(&mut self, core: &verilator_sys::rnic_core::Model) {
        if let Access::Issued { write } = self.access {
            if write {
                self.access = Access::Answer(0);
            } else if core.get_fw_rvalid() != 0 {
                self.access = Access::Answer(core.get_fw_rdata() as u32);
            }
        }
        if let Some(j) = &mut self.jtag {
            j.clock(&mut self.cpu);
        }
        self.cpu.tick();
        self.since_retire += 1;
        if self.cpu.get_tr_valid() != 0 {
            if let Some(p) = &mut self.profile {
                let pc = self.cpu.get_tr_pc() as u32;
                let site = self.shadow.last().copied().unwrap_or(0);
                *p.entry((pc, site)).or_default() += self.since_retire;
                // RISC-V calling convention: a call links into ra (x1), a
                // return is `jalr x0, 0(ra)`.
                let insn = self.cpu.get_tr_insn() as u32;
                let (opcode, rd, rs1) = (insn & 0x7F, insn >> 7 & 0x1F, insn >> 15 & 0x1F);
                let is_jump = opcode == 0x6F || opcode == 0x67;
                if is_jump && rd == 1 {
                    self.shadow.push(pc);
                } else if opcode == 0x67 && rd == 0 && rs1 == 1 {
                    self.shadow.pop();
                }
            }
            self.since_retire = 0;
            if self.cpu.get_tr_trap() != 0 {
                self.stats.traps += 1;
                let t = (self.cpu.get_tr_cause() as u32, self.cpu.get_tr_pc() as u32);
                self.stats.first_trap.get_or_insert(t);
            } else {
                self.stats.retired += 1;
                if let Some(r) = &mut self.rtt {
                    let strb = self.cpu.get_tr_mem_strb() as u32;
                    if strb != 0 {
                        let addr = self.cpu.get_tr_mem_addr() as u32;
                        r.0.store(addr, strb, self.cpu.get_tr_mem_wdata() as u32);
                    }
                }
                if self.cpu.get_tr_rd() == 2 {
                    let sp = self.cpu.get_tr_rd_wdata() as u32;
                    let low = self.stats.sp_low.get_or_insert(sp);
                    *low = (*low).min(sp);
                }
            }
        }
    }

    /// Starts reading the firmware's log: the RTT up channel of the image
    /// `elf` (the ELF file's bytes, the image this core runs), from the
    /// core's retired stores into its control block and buffer, decoded
    /// with the image's defmt table ([`CpuFw::rtt_lines`]). Nothing moves
    /// the channel's read position: what the firmware logs beyond its
    /// buffer (4 KiB) is dropped by the firmware.
    pub fn rtt_snoop(&mut self, elf: &[u8]) -> Result<(), String> {
        let layout = RttLayout::from_elf(elf)?;
        let log = FwLog::from_elf(elf)?;
        self.rtt = Some(Box::new((RttSnoop::new(layout), log)));
        Ok(())
    }

    /// The log messages the firmware published since the last call (none
    /// without [`CpuFw::rtt_snoop`]).
    pub fn rtt_lines(&mut self) -> Vec<Line> {
        match &mut self.rtt {
            Some(r) => {
                let bytes = r.0.take();
                if bytes.is_empty() {
                    Vec::new()
                } else {
                    r.1.push(&bytes)
                }
            }
            None => Vec::new(),
        }
    }

    /// Frames the firmware dropped for want of room in its RTT buffer, and
    /// frames that did not decode (with [`CpuFw::rtt_snoop`]).
    pub fn rtt_losses(&self) -> Option<(u32, u64)> {
        self.rtt.as_ref().map(|r| (r.0.dropped, r.1.malformed))
    }

    /// Octets the firmware published on its RTT up channel so far (with
    /// [`CpuFw::rtt_snoop`]).
    pub fn rtt_octets(&self) -> Option<u64> {
        self.rtt.as_ref().map(|r| r.0.octets)
    }

    /// Starts counting clocks per instruction address ([`CpuFw::profile`]).
    pub fn profile_on(&mut self) {
        self.profile.get_or_insert_with(Default::default);
    }

    /// Asks for the core to be held at its next read of `MBOX_CMD`, or
    /// releases it.
    pub fn hold(&mut self, on: bool) {
        self.hold = on;
        if !on {
            self.held = false;
        }
    }

    /// Plugs a JTAG adapter into the core's debug pins (replacing one
    /// plugged before) and returns the debugger's end of its cable.
    pub fn plug_jtag(&mut self) -> JtagCable {
        let (port, cable) = crate::jtag::cable();
        self.jtag = Some(port);
        cable
    }

    /// TCK cycles played on the debug pins so far.
    pub fn jtag_tck_cycles(&self) -> u64 {
        self.jtag.as_ref().map_or(0, |j| j.tck_cycles)
    }

    /// Whether the core is held and the port free.
    pub fn held(&self) -> bool {
        self.held
    }
}
