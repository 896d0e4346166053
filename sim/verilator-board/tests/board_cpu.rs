//! The firmware image on the ECPIX-5 top's own RISC-V core, seen at the
//! RGMII pins (docs/fpga.md "Firmware on the chip").
//!
//! ```text
//!  test thread ──PHY pins──► rnic_ecpix5: RxSplit ─┬─► UdpBridge ──► FwPortOwner ─► core BAR0, fw_*
//!   (bridge requests,                              │
//!    ARP request)                                  └─► rnic_core ◄──── CpuPort ◄── Rv32Fw
//!               ◄──PHY pins── TxArb ◄── bridge answers, the firmware's ARP reply
//! ```
//!
//! The test holds the CPU (`CPU_CTL.HOLD`, a register of the top in BAR0),
//! loads the ELF that `make firmware-elf` builds into its instruction
//! memory through BAR0 (`CPU_LOAD_ADDR`, `CPU_LOAD_DATA`), writes the interface
//! configuration into BAR0, and releases the CPU. Checked: while held the
//! bridge owns the firmware port (a port register reads its value), once
//! released the CPU does (the bridge's port reads are answered 0 by the
//! top); the firmware boots (BAR0 `STATUS_READY`, raised by its first
//! `MBOX_CMD` read); an ARP request for the core's IPv4 address gets exactly
//! one reply from the core's MAC, octet for octet the RFC 826 reply written
//! out below, while BAR0 reads through the bridge keep being answered.
//! A missing firmware ELF (target not installed) fails under `CI=true` and
//! prints "skipped" otherwise.

use rnic_wire::abi::bridge::Repr;
use rnic_wire::abi::context::port;
use rnic_wire::abi::csr;
use verilator_board::{ESig, Ecpix5Rig};

mod bridge_rig;
use bridge_rig::port0::{FW_IP, FW_MAC, PEER_IP, PEER_MAC};
use bridge_rig::{from_board, to_board};

/// The top's CPU registers in BAR0 (`hw/src/board/cpu_port.rs`).
use rnic_wire::abi::csr::{CPU_CTL, CPU_LOAD_ADDR, CPU_LOAD_DATA};
/// Instruction memory of the board's CPU (`Rv32Fw`).
const IMEM_BYTES: usize = 128 << 10;
/// Core clocks one bridge answer may take.
const ANSWER_CYCLES: u64 = 20_000;
/// Load writes in flight at once (the bridge's receive FIFO holds more).
const WINDOW: usize = 4;

struct Host {
    rig: Ecpix5Rig,
    seq: u32,
    /// Frames from the pins that are not bridge answers.
    other: Vec<Vec<u8>>,
    /// Bridge answers waiting to be taken, in order.
    answers: std::collections::VecDeque<Vec<u8>>,
}

impl Host {
    fn send(&mut self, mk: impl Fn(u32) -> Repr<'static>) -> u32 {
        self.seq += 1;
        let mut b = vec![0u8; mk(self.seq).buffer_len()];
        mk(self.seq).emit(&mut b).unwrap();
        self.rig.phy.send(&to_board(&b));
        self.seq
    }

    /// The answer to request `seq` (answers come in request order).
    fn answer(&mut self, seq: u32) -> Repr<'static> {
        let t0 = self.rig.core_cycles;
        while self.answers.is_empty() {
            assert!(
                self.rig.core_cycles - t0 < ANSWER_CYCLES,
                "no answer to request {seq} within {ANSWER_CYCLES} core clocks"
            );
            self.rig.run_core_cycles(16);
            self.collect();
        }
        let p = self.answers.pop_front().unwrap();
        let r = Repr::parse(&p).expect("answer parses");
        assert_eq!(r.seq(), seq, "answers in request order");
        match r {
            Repr::MmioReadRsp { seq, value } => Repr::MmioReadRsp { seq, value },
            Repr::MmioWriteAck { seq } => Repr::MmioWriteAck { seq },
            Repr::FwReadRsp { seq, value } => Repr::FwReadRsp { seq, value },
            Repr::FwWriteAck { seq } => Repr::FwWriteAck { seq },
            other => panic!("unexpected answer {other:?}"),
        }
    }

    fn collect(&mut self) {
        while let Some(f) = self.rig.phy.received.pop_front() {
            assert!(f.ok && !f.er, "bad frame from the board: {:02x?}", f.data);
            match from_board(&f.data) {
                Ok(p) if !matches!(Repr::parse(&p), Ok(Repr::Irq { .. })) => {
                    self.answers.push_back(p)
                }
                Ok(_) => {}
                Err(_) => self.other.push(f.data),
            }
        }
    }

    fn mmio_write(&mut self, offset: u32, value: u32) {
        let s = self.send(|seq| Repr::MmioWrite { seq, offset, value });
        assert!(matches!(self.answer(s), Repr::MmioWriteAck { .. }));
    }

    fn mmio_read(&mut self, offset: u32) -> u32 {
        let s = self.send(|seq| Repr::MmioRead { seq, offset });
        match self.answer(s) {
            Repr::MmioReadRsp { value, .. } => value,
            r => panic!("{r:?}"),
        }
    }

    fn fw_read(&mut self, offset: u32) -> u32 {
        let s = self.send(|seq| Repr::FwRead { seq, offset });
        match self.answer(s) {
            Repr::FwReadRsp { value, .. } => value,
            r => panic!("{r:?}"),
        }
    }

    /// The image through `CPU_LOAD_*`, [`WINDOW`] writes in flight.
    fn load(&mut self, words: &[u32]) {
        self.mmio_write(CPU_LOAD_ADDR, 0);
        let mut pending = std::collections::VecDeque::new();
        for &w in words {
            if pending.len() == WINDOW {
                let s = pending.pop_front().unwrap();
                assert!(matches!(self.answer(s), Repr::MmioWriteAck { .. }));
            }
            let s = self.send(|seq| Repr::MmioWrite {
                seq,
                offset: CPU_LOAD_DATA,
                value: w,
            });
            pending.push_back(s);
        }
        while let Some(s) = pending.pop_front() {
            assert!(matches!(self.answer(s), Repr::MmioWriteAck { .. }));
        }
    }
}

/// The image's instruction-memory words, or `None` when it cannot be built
/// outside CI.
fn image() -> Option<Vec<u32>> {
    match rnic_fw::image::build_elf() {
        Ok(path) => {
            let d = std::fs::read(&path).expect("ELF readable");
            let (words, entry) = rnic_fw::image::load_elf(&d, IMEM_BYTES).expect("ELF loads");
            assert_eq!(entry, 0, "the core starts at 0");
            Some(words)
        }
        Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("no firmware ELF under CI: {e}")
        }
        Err(e) => {
            println!("skipped: no firmware ELF ({e})");
            None
        }
    }
}

/// An ARP request from the peer for the firmware's address.
fn arp_request() -> Vec<u8> {
    let mut f = vec![0xFF; 6];
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&PEER_IP);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&FW_IP);
    f.resize(60, 0);
    f
}

/// The reply RFC 826 asks for, written out: to the requester, from the
/// core's MAC, opcode 2 (reply), sender = the core's MAC and address,
/// target = the requester's, padded to 60 octets.
fn arp_reply() -> Vec<u8> {
    let mut f = PEER_MAC.to_vec();
    f.extend_from_slice(&FW_MAC);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 2]);
    f.extend_from_slice(&FW_MAC);
    f.extend_from_slice(&FW_IP);
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&PEER_IP);
    f.resize(60, 0);
    f
}

#[test]
fn firmware_on_the_board_cpu_answers_arp() {
    let Some(words) = image() else { return };
    let mut h = Host {
        rig: Ecpix5Rig::new(40),
        seq: 0,
        other: Vec::new(),
        answers: Default::default(),
    };
    h.rig.trace_from_env("board_cpu");

    // After reset the CPU owns the port: the bridge's port reads are 0.
    assert_eq!(h.mmio_read(CPU_CTL), 0);
    assert_eq!(h.fw_read(port::CLOCK_KHZ), 0, "the port is the CPU's");
    // Held: the bridge's window reaches the port.
    h.mmio_write(CPU_CTL, 1);
    assert_eq!(h.mmio_read(CPU_CTL), 1);
    assert_eq!(
        h.fw_read(port::CLOCK_KHZ),
        62_500,
        "the port is the bridge's"
    );

    let t0 = h.rig.core_cycles;
    let w0 = std::time::Instant::now();
    h.load(&words);
    let load_cycles = h.rig.core_cycles - t0;
    assert_eq!(h.mmio_read(CPU_LOAD_ADDR), 4 * words.len() as u32);
    println!(
        "loaded {} words ({} octets) in {load_cycles} core clocks ({:.1} per word), {:.1} s",
        words.len(),
        4 * words.len(),
        load_cycles as f64 / words.len() as f64,
        w0.elapsed().as_secs_f64()
    );

    // The interface configuration, as `rnic_board_host::write_net_cfg`.
    let m = FW_MAC;
    h.mmio_write(csr::MAC_LO, u32::from_le_bytes([m[0], m[1], m[2], m[3]]));
    h.mmio_write(csr::MAC_HI, u32::from_le_bytes([m[4], m[5], 0, 0]));
    h.mmio_write(csr::IPV4_ADDR, u32::from_be_bytes(FW_IP));
    h.mmio_write(csr::IPV4_NETMASK, 0xFFFF_FF00);
    h.mmio_write(csr::IPV4_GATEWAY, 0);
    h.mmio_write(csr::MTU, 1500);
    h.mmio_write(csr::CTRL, csr::CTRL_ENABLE);
    assert_eq!(
        h.mmio_read(csr::STATUS) & csr::STATUS_READY,
        0,
        "no firmware yet"
    );

    // Released: the CPU boots the image.
    h.mmio_write(CPU_CTL, 0);
    let t0 = h.rig.core_cycles;
    let w0 = std::time::Instant::now();
    let mut reads = 0u32;
    while h.mmio_read(csr::STATUS) & csr::STATUS_READY == 0 {
        reads += 1;
        assert!(
            h.rig.core_cycles - t0 < 2_000_000,
            "the firmware did not come up ({reads} STATUS reads)"
        );
        h.rig.run_core_cycles(2_000);
    }
    let boot = h.rig.core_cycles - t0;
    println!(
        "STATUS_READY {boot} core clocks after release ({reads} STATUS reads before), {:.1} s",
        w0.elapsed().as_secs_f64()
    );
    assert_eq!(h.fw_read(port::CLOCK_KHZ), 0, "the port is the CPU's again");

    // ARP for the core's address: the firmware on the CPU answers.
    assert!(
        h.other.is_empty(),
        "frames before the request: {:02x?}",
        h.other
    );
    h.rig.phy.send(&arp_request());
    let t0 = h.rig.core_cycles;
    let mut bar0_reads = 0;
    while h.other.is_empty() {
        assert!(
            h.rig.core_cycles - t0 < 500_000,
            "no ARP reply within 500,000 core clocks"
        );
        // The bridge keeps answering meanwhile.
        assert_eq!(h.mmio_read(csr::IPV4_ADDR), u32::from_be_bytes(FW_IP));
        bar0_reads += 1;
        h.rig.run_core_cycles(500);
        h.collect();
    }
    let reply_cycles = h.rig.core_cycles - t0;
    h.rig.run_core_cycles(20_000);
    h.collect();
    assert_eq!(h.other.len(), 1, "one reply: {:02x?}", h.other);
    assert_eq!(h.other[0], arp_reply(), "the RFC 826 reply");
    println!(
        "ARP reply within {reply_cycles} core clocks of the request \
         ({bar0_reads} BAR0 reads answered meanwhile)"
    );
    assert_eq!(h.rig.board.get(ESig::SplitOverflow), 0);
    assert_eq!(h.rig.board.get(ESig::TxCntUnderrun), 0);
}
