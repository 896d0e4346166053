//! The firmware image (`make firmware-elf`, `riscv32im-unknown-none-elf`)
//! on the core in lock step with the reference, from reset: startup code,
//! `fw_main`'s boot (device limits, interface configuration, clock) and
//! the firmware's poll loop, which answers an ARP request the port model
//! puts in the exception queue.
//!
//! The peripheral bus holds [`FwPort`], a model of the firmware port's
//! registers (`rnic_wire::abi::context::port`) driven by the order of
//! accesses alone: the testbench and the reference each hold an instance,
//! so a bus load the core makes differently from the reference shows as a
//! difference. Every retired instruction is compared as in
//! [`super::lockstep`].
//!
//! The ELF is built by the test (`cargo build -p rnic-fw --target
//! riscv32im-unknown-none-elf --release`, quick when it is current). If it
//! cannot be built (the target is not installed) the test fails under
//! `CI=true` and prints "skipped" otherwise. `make cpu-soak` runs the
//! image longer (`CPU_FW_EVENTS`).

use super::lockstep::{compare, Bench};
use super::map;
use super::refmodel::{Peripheral, RefCpu, RefMem};
use rnic_wire::abi::context::{port, ExceptionReason};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The firmware configuration's memories (`Rv32Fw`, `firmware/rnic-fw.x`).
const IW: usize = 15;
const DW: usize = 14;
const IMEM_BYTES: usize = 4 << IW;
const DMEM_BYTES: usize = 4 << DW;

/// The image's instruction memory words and entry point
/// ([`rnic_fw::image::load_elf`] for this configuration's memory).
pub fn load_elf(d: &[u8]) -> Result<(Vec<u32>, u32), String> {
    rnic_fw::image::load_elf(d, IMEM_BYTES)
}

/// Our interface (the port's `CFG_*`).
pub const MAC: [u8; 6] = [0x02, 0x52, 0x4E, 0x49, 0x43, 0x01];
pub const IP: [u8; 4] = [10, 0, 0, 1];
/// The peer asking for our MAC.
pub const PEER_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];
pub const PEER_IP: [u8; 4] = [10, 0, 0, 2];

/// An ARP request (RFC 826) for [`IP`] from the peer, written out here.
pub fn arp_request() -> Vec<u8> {
    let mut f = vec![0xFF; 6];
    f.extend(PEER_MAC);
    f.extend([0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 1]);
    f.extend(PEER_MAC);
    f.extend(PEER_IP);
    f.extend([0; 6]);
    f.extend(IP);
    f
}

/// The reply the firmware must send to [`arp_request`].
pub fn arp_reply() -> Vec<u8> {
    let mut f = PEER_MAC.to_vec();
    f.extend(MAC);
    f.extend([0x08, 0x06, 0, 1, 0x08, 0x00, 6, 4, 0, 2]);
    f.extend(MAC);
    f.extend(IP);
    f.extend(PEER_MAC);
    f.extend(PEER_IP);
    f
}

/// What the firmware did to the port (the testbench's instance).
#[derive(Default, Debug)]
pub struct PortLog {
    /// Accesses so far.
    pub accesses: u64,
    /// Reads of `LIM_CONN` (the first thing `fw_main` does).
    pub limit_reads: u32,
    /// Reads of `MBOX_CMD` (one per poll of the loop).
    pub polls: u32,
    /// Exceptions popped.
    pub pops: u32,
    /// Frames sent (`TX_SEND` writes: the frame).
    pub sent: Vec<Vec<u8>>,
}

/// The firmware port: a board-profile device (`hw/src/profile.rs` `BOARD`
/// limits) at 62.5 MHz whose cycle counter advances 625 clocks (10 µs)
/// per `CYCLES_LO` read, with an empty exception queue, mailbox and
/// Terminate queue, never busy, until the `arp_at`-th poll, from which an
/// ARP request for our address is at the head of the exception queue
/// until popped. Window registers (`TABLE_DATA`, `TX_DATA`, ...) hold what
/// was written.
pub struct FwPort {
    regs: HashMap<u32, u32>,
    cycles: u64,
    cycles_hi: u32,
    arp_at: u32,
    arp_pending: bool,
    arp_done: bool,
    log: Rc<RefCell<PortLog>>,
}

impl FwPort {
    pub fn new(arp_at: u32, log: Rc<RefCell<PortLog>>) -> Self {
        FwPort {
            regs: HashMap::new(),
            cycles: 0,
            cycles_hi: 0,
            arp_at,
            arp_pending: false,
            arp_done: false,
            log,
        }
    }
}

impl Peripheral for FwPort {
    fn read(&mut self, word_addr: u32) -> u32 {
        let off = word_addr - map::BUS;
        let mut log = self.log.borrow_mut();
        log.accesses += 1;
        let req = arp_request();
        match off {
            port::LIM_CONN => {
                log.limit_reads += 1;
                16
            }
            port::LIM_QP | port::LIM_CQ => 64,
            port::LIM_TPT => 256,
            port::LIM_PBL => 512,
            port::LIM_MTU | port::CFG_MTU => 1500,
            port::CFG_MAC_LO => u32::from_le_bytes([MAC[0], MAC[1], MAC[2], MAC[3]]),
            port::CFG_MAC_HI => u32::from_le_bytes([MAC[4], MAC[5], 0, 0]),
            port::CFG_IPV4 => u32::from_be_bytes(IP),
            port::CFG_NETMASK => 0xFFFF_FF00,
            port::CFG_GATEWAY => 0,
            port::CLOCK_KHZ => 62_500,
            port::CYCLES_LO => {
                self.cycles += 625;
                self.cycles_hi = (self.cycles >> 32) as u32;
                self.cycles as u32
            }
            port::CYCLES_HI => self.cycles_hi,
            port::MBOX_CMD => {
                log.polls += 1;
                if log.polls >= self.arp_at && !self.arp_done {
                    self.arp_pending = true;
                }
                0
            }
            port::EXC_STATUS if self.arp_pending => {
                1 << 31 | (ExceptionReason::NoMatch as u32) << 16 | req.len() as u32
            }
            port::EXC_CONN => u32::MAX,
            o if self.arp_pending && (port::EXC_DATA..port::EXC_DATA + 64).contains(&o) => {
                let k = (o - port::EXC_DATA) as usize;
                let b = |i: usize| *req.get(k + i).unwrap_or(&0);
                u32::from_le_bytes([b(0), b(1), b(2), b(3)])
            }
            // Status registers: nothing waiting, never busy, never full.
            port::EXC_STATUS
            | port::TERM_STATUS
            | port::TABLE_CMD
            | port::TX_SEND
            | port::RX_INJECT
            | port::EVENT_PUSH
            | port::RETX_STATUS => 0,
            o => *self.regs.get(&o).unwrap_or(&0),
        }
    }

    fn write(&mut self, word_addr: u32, strb: u32, data: u32) {
        let off = word_addr - map::BUS;
        let mut log = self.log.borrow_mut();
        log.accesses += 1;
        let mask = (0..4)
            .filter(|b| strb >> b & 1 == 1)
            .fold(0u32, |m, b| m | 0xFF << (8 * b));
        let old = *self.regs.get(&off).unwrap_or(&0);
        self.regs.insert(off, (old & !mask) | (data & mask));
        match off {
            port::EXC_POP if self.arp_pending => {
                self.arp_pending = false;
                self.arp_done = true;
                log.pops += 1;
            }
            port::TX_SEND => {
                let len = (data as usize).min(port::FRAME_WINDOW as usize);
                let f = (0..len)
                    .map(|i| {
                        let w = *self
                            .regs
                            .get(&(port::TX_DATA + 4 * (i as u32 / 4)))
                            .unwrap_or(&0);
                        (w >> (8 * (i % 4))) as u8
                    })
                    .collect();
                log.sent.push(f);
            }
            _ => {}
        }
    }
}

/// How far a run got.
#[derive(Debug)]
pub struct FwRun {
    /// Instructions retired (and compared).
    pub retired: usize,
    /// Traps (the firmware takes none).
    pub traps: usize,
    pub clocks: u64,
    pub log: PortLog,
    /// Instructions retired before the first poll of the loop.
    pub boot: Option<usize>,
}

/// Runs `events` events of the image from reset in lock step; `arp_at`:
/// the poll from which the ARP request waits. `tamper`: at that event,
/// corrupt the reference's stack pointer.
pub fn run(
    imem: &[u32],
    events: usize,
    arp_at: u32,
    tamper: Option<usize>,
) -> Result<FwRun, String> {
    let log = Rc::new(RefCell::new(PortLog::default()));
    let mut bench = Bench::<IW, DW>::new(0xF1);
    bench.port = Some(Box::new(FwPort::new(arp_at, log.clone())));
    bench.load(&[(0, imem)]);
    let mut mem = RefMem::new(IMEM_BYTES / 4, DMEM_BYTES);
    mem.imem[..imem.len()].copy_from_slice(imem);
    mem.port = Some(Box::new(FwPort::new(
        arp_at,
        Rc::new(RefCell::new(PortLog::default())),
    )));
    let mut r = RefCpu::new(mem);
    let mut run = FwRun {
        retired: 0,
        traps: 0,
        clocks: 0,
        log: PortLog::default(),
        boot: None,
    };
    let mut history: Vec<String> = Vec::new();
    for n in 0..events {
        if tamper == Some(n) {
            r.hart.registers[2] ^= 0x10;
        }
        let e = bench.next_event(500);
        match compare(&e, &mut r, false, bench.cycle) {
            Ok(ev) => {
                if ev.trap.is_some() {
                    run.traps += 1;
                } else {
                    run.retired += 1;
                }
                if run.boot.is_none() && log.borrow().polls > 0 {
                    run.boot = Some(run.retired);
                }
                history.push(format!(
                    "{:#07x} {:#010x} -> {:#x}",
                    e.pc, e.insn, e.next_pc
                ));
                if history.len() > 12 {
                    history.remove(0);
                }
            }
            Err(m) => {
                return Err(format!(
                    "event {n}, clock {}: {m}\nlast events:\n{}",
                    bench.cycle,
                    history.join("\n")
                ))
            }
        }
    }
    run.clocks = bench.cycle;
    run.log = std::mem::take(&mut *log.borrow_mut());
    Ok(run)
}

/// The image, or `None` when it cannot be built outside CI.
pub fn image() -> Option<Vec<u32>> {
    match rnic_fw::image::build_elf() {
        Ok(path) => {
            let d = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let (imem, entry) = load_elf(&d).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(entry, 0, "the entry must be the reset pc");
            Some(imem)
        }
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("firmware ELF: {e}")
        }
        Err(e) => {
            println!("skipped: no firmware ELF ({e})");
            None
        }
    }
}

/// Checks a run: booted, polled, answered the ARP request, no trap.
pub fn check(run: &FwRun, arp_at: u32) {
    assert_eq!(run.traps, 0, "the firmware trapped: {run:?}");
    assert_eq!(run.log.limit_reads, 1, "fw_main read the limits once");
    let boot = run.boot.expect("the firmware reached its poll loop");
    assert!(boot > 0);
    assert!(run.log.polls > arp_at, "polls: {}", run.log.polls);
    assert_eq!(run.log.pops, 1, "the ARP request was popped");
    let reply = arp_reply();
    let arps: Vec<&Vec<u8>> = run.log.sent.iter().collect();
    assert_eq!(arps.len(), 1, "one frame sent: {arps:02x?}");
    let f = arps[0];
    assert!(
        f.len() >= reply.len()
            && f[..reply.len()] == reply[..]
            && f[reply.len()..].iter().all(|&b| b == 0),
        "ARP reply {f:02x?}, expected {reply:02x?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image from reset for 60,000 instructions: boot, the poll loop,
    /// an ARP request answered; every instruction compared.
    #[test]
    fn firmware_image_in_lock_step() {
        let Some(imem) = image() else { return };
        let t = std::time::Instant::now();
        let arp_at = 3;
        let run = run(&imem, 60_000, arp_at, None).unwrap_or_else(|m| panic!("{m}"));
        println!(
            "firmware in lock step: {} instructions compared ({} to the first poll), {} clocks, \
             {} polls, {} port accesses, frames sent {:?}, image {} B, {:.1} s",
            run.retired,
            run.boot.unwrap_or(0),
            run.clocks,
            run.log.polls,
            run.log.accesses,
            run.log.sent.iter().map(|f| f.len()).collect::<Vec<_>>(),
            imem.len() * 4,
            t.elapsed().as_secs_f64()
        );
        check(&run, arp_at);
    }

    /// The comparison notices a wrong stack pointer in the reference, at
    /// the first instruction that writes or uses `sp` after it (at the
    /// latest `fw_main`'s prologue, after `_start` has cleared `.bss`),
    /// never before.
    #[test]
    fn firmware_lock_step_notices_a_difference() {
        let Some(imem) = image() else { return };
        const TAMPER: usize = 100;
        let e = run(&imem, 100_000, 1, Some(TAMPER)).expect_err("a wrong sp must be noticed");
        let at: usize = e
            .strip_prefix("event ")
            .and_then(|r| r.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no event number in: {e}"));
        assert!(
            at >= TAMPER,
            "noticed at event {at}, before the tampering: {e}"
        );
    }

    /// The long run (`make cpu-soak`): `CPU_FW_EVENTS` (default 1,000,000).
    #[test]
    #[ignore]
    fn firmware_soak() {
        let imem = image().expect("firmware ELF");
        let events = std::env::var("CPU_FW_EVENTS")
            .map(|s| s.parse().unwrap())
            .unwrap_or(1_000_000);
        let t = std::time::Instant::now();
        let run = run(&imem, events, 3, None).unwrap_or_else(|m| panic!("{m}"));
        println!(
            "firmware soak: {} instructions compared, {} clocks, {} polls, {:.0} s",
            run.retired,
            run.clocks,
            run.log.polls,
            t.elapsed().as_secs_f64()
        );
        check(&run, 3);
    }
}
