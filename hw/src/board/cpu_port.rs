//! The firmware on the chip: the RISC-V core's peripheral bus joined to
//! `rnic_core`'s firmware port (`CpuPort`), and the choice of who drives
//! that port, the CPU or the host bridge's firmware window (`FwPortOwner`).
//!
//! **`CpuPort`** does what the co-simulation's `sim/src/cpu_fw.rs` does, clock
//! for clock. The bus window at `0x2000_0000` (`FW_PORT` in
//! `firmware/rnic-fw.x`), 16 MiB, is the port's register space: `fw_addr`
//! = `bus_addr` − `0x2000_0000` (24 bits). In the clock where the CPU's
//! `bus_valid` first shows, `fw_valid` is high (one clock) with `fw_write`,
//! `fw_addr` and `fw_wdata`. A write is answered (`bus_ready`) in the next
//! clock; a read in the clock where `fw_rvalid` shows, with `fw_rdata`. An
//! access outside the window does not reach the port: it is answered in
//! the next clock, a read with 0. The port's registers are 32 bits wide and
//! the firmware writes whole words, so `bus_strb` is not used. A read takes
//! 2 clocks plus the port's read latency, a write 2 clocks.
//!
//! **`FwPortOwner`** gives the port to one owner at a time, and holds three
//! registers of the top in BAR0 (the bridge's `MMIO_READ`/`MMIO_WRITE`) in
//! the board's page, `rnic_wire::abi::csr::BOARD_REGS` (0xFF_F000, the last
//! 4 KiB of BAR0: [`CPU_CTL`], [`CPU_LOAD_ADDR`], [`CPU_LOAD_DATA`]);
//! accesses to that page never reach the core, every other BAR0 access
//! (registers, QP and CQ doorbells) passes through unchanged.
//! * `CPU_CTL` bit 0, `HOLD` (0 after reset): 0 = the CPU runs and owns
//!   the firmware port; the bridge's firmware-window accesses
//!   (`FW_READ`/`FW_WRITE`) are answered here (a read 0, a write dropped).
//!   1 = the CPU is held in reset and the bridge's firmware window is the
//!   port (the firmware on a host, as before the CPU).
//! * `CPU_LOAD_ADDR`: the instruction-memory octet address of the next
//!   load; `CPU_LOAD_DATA`: a write puts the word into the CPU's load port
//!   at that address and adds 4 to it. The load port writes only while the
//!   CPU is held (`HOLD` = 1).
//!
//! A core answer (`fw_rvalid`) goes to the owner at the time it arrives: a
//! CPU read in flight when `HOLD` is set is lost with the CPU's reset, and
//! its answer reaches the bridge while the bridge waits for nothing.

use rust_hdl::prelude::*;

/// BAR0 offsets (bridge `MMIO_READ`/`MMIO_WRITE`) of the CPU control
/// register (bit 0 `HOLD`), the load address (octets, instruction memory)
/// and the load data register (write only), as the host sees them.
pub use rnic_wire::abi::csr::{CPU_CTL, CPU_LOAD_ADDR, CPU_LOAD_DATA};

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum CpuPortState {
    Idle,
    /// A read went to the port; waiting for `fw_rvalid`.
    Read,
    /// A write went to the port, or an access outside the window: answered
    /// in this clock.
    Ack,
}

/// The CPU's peripheral bus → `rnic_core`'s firmware port (module doc).
#[derive(LogicBlock, Default)]
pub struct CpuPort {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // The CPU's peripheral bus (`cpu` module doc).
    pub bus_valid: Signal<In, Bit>,
    pub bus_we: Signal<In, Bit>,
    pub bus_addr: Signal<In, Bits<32>>,
    pub bus_wdata: Signal<In, Bits<32>>,
    pub bus_ready: Signal<Out, Bit>,
    pub bus_rdata: Signal<Out, Bits<32>>,
    // The core's firmware port.
    pub fw_valid: Signal<Out, Bit>,
    pub fw_write: Signal<Out, Bit>,
    pub fw_addr: Signal<Out, Bits<24>>,
    pub fw_wdata: Signal<Out, Bits<32>>,
    pub fw_rdata: Signal<In, Bits<32>>,
    pub fw_rvalid: Signal<In, Bit>,
    state: DFF<CpuPortState>,
}

impl Logic for CpuPort {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state);
        self.fw_valid.next = false;
        self.fw_write.next = self.bus_we.val();
        self.fw_addr.next = self.bus_addr.val().get_bits::<24>(0);
        self.fw_wdata.next = self.bus_wdata.val();
        self.bus_ready.next = false;
        self.bus_rdata.next = 0.into();
        match self.state.q.val() {
            CpuPortState::Idle => {
                if self.bus_valid.val() {
                    if self.bus_addr.val().get_bits::<8>(24) == 0x20 {
                        self.fw_valid.next = true;
                        if self.bus_we.val() {
                            self.state.d.next = CpuPortState::Ack;
                        } else {
                            self.state.d.next = CpuPortState::Read;
                        }
                    } else {
                        self.state.d.next = CpuPortState::Ack;
                    }
                }
            }
            CpuPortState::Read => {
                if self.fw_rvalid.val() {
                    self.bus_ready.next = true;
                    self.bus_rdata.next = self.fw_rdata.val();
                    self.state.d.next = CpuPortState::Idle;
                }
            }
            CpuPortState::Ack => {
                self.bus_ready.next = true;
                self.state.d.next = CpuPortState::Idle;
            }
        }
        if self.reset.val() {
            self.state.d.next = CpuPortState::Idle;
        }
    }
}

/// Who drives the core's firmware port, and the CPU's reset and load port
/// (module doc).
#[derive(LogicBlock, Default)]
pub struct FwPortOwner {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // The bridge's firmware window.
    pub br_valid: Signal<In, Bit>,
    pub br_write: Signal<In, Bit>,
    pub br_addr: Signal<In, Bits<24>>,
    pub br_wdata: Signal<In, Bits<32>>,
    pub br_rdata: Signal<Out, Bits<32>>,
    pub br_rvalid: Signal<Out, Bit>,
    // The bridge's BAR0 side and the core's BAR0.
    pub br_csr_valid: Signal<In, Bit>,
    pub br_csr_write: Signal<In, Bit>,
    pub br_csr_addr: Signal<In, Bits<24>>,
    pub br_csr_wdata: Signal<In, Bits<32>>,
    pub br_csr_rdata: Signal<Out, Bits<32>>,
    pub br_csr_rvalid: Signal<Out, Bit>,
    pub csr_valid: Signal<Out, Bit>,
    pub csr_write: Signal<Out, Bit>,
    pub csr_addr: Signal<Out, Bits<24>>,
    pub csr_wdata: Signal<Out, Bits<32>>,
    pub csr_rdata: Signal<In, Bits<32>>,
    pub csr_rvalid: Signal<In, Bit>,
    // The CPU's side (`CpuPort`'s `fw_*`).
    pub cpu_valid: Signal<In, Bit>,
    pub cpu_write: Signal<In, Bit>,
    pub cpu_addr: Signal<In, Bits<24>>,
    pub cpu_wdata: Signal<In, Bits<32>>,
    pub cpu_rdata: Signal<Out, Bits<32>>,
    pub cpu_rvalid: Signal<Out, Bit>,
    // The core's firmware port.
    pub fw_valid: Signal<Out, Bit>,
    pub fw_write: Signal<Out, Bit>,
    pub fw_addr: Signal<Out, Bits<24>>,
    pub fw_wdata: Signal<Out, Bits<32>>,
    pub fw_rdata: Signal<In, Bits<32>>,
    pub fw_rvalid: Signal<In, Bit>,
    /// The CPU's reset (and `CpuPort`'s): the board's reset or `HOLD`.
    pub cpu_reset: Signal<Out, Bit>,
    /// The CPU's load port.
    pub load_we: Signal<Out, Bit>,
    pub load_addr: Signal<Out, Bits<32>>,
    pub load_data: Signal<Out, Bits<32>>,
    hold: DFF<Bit>,
    next_addr: DFF<Bits<32>>,
    ld_we: DFF<Bit>,
    ld_addr: DFF<Bits<32>>,
    ld_data: DFF<Bits<32>>,
    ans: DFF<Bit>,
    csr_ans: DFF<Bit>,
    csr_ans_data: DFF<Bits<32>>,
    /// The BAR0 access is in the board's page (`csr::BOARD_REGS`).
    board_page: Signal<Local, Bit>,
}

impl Logic for FwPortOwner {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            hold,
            next_addr,
            ld_we,
            ld_addr,
            ld_data,
            ans,
            csr_ans,
            csr_ans_data
        );
        self.cpu_reset.next = self.reset.val() | self.hold.q.val();
        self.load_we.next = self.ld_we.q.val();
        self.load_addr.next = self.ld_addr.q.val();
        self.load_data.next = self.ld_data.q.val();
        // The firmware port: the bridge's window while held, the CPU's
        // otherwise.
        if self.hold.q.val() {
            self.fw_valid.next = self.br_valid.val();
            self.fw_write.next = self.br_write.val();
            self.fw_addr.next = self.br_addr.val();
            self.fw_wdata.next = self.br_wdata.val();
        } else {
            self.fw_valid.next = self.cpu_valid.val();
            self.fw_write.next = self.cpu_write.val();
            self.fw_addr.next = self.cpu_addr.val();
            self.fw_wdata.next = self.cpu_wdata.val();
        }
        self.cpu_rdata.next = self.fw_rdata.val();
        self.cpu_rvalid.next = self.fw_rvalid.val() & !self.hold.q.val();
        // The bridge's window answers: from the core while held, else a
        // read is answered 0 here in the next clock.
        self.br_rvalid.next = self.ans.q.val() | (self.fw_rvalid.val() & self.hold.q.val());
        if self.ans.q.val() {
            self.br_rdata.next = 0.into();
        } else {
            self.br_rdata.next = self.fw_rdata.val();
        }
        self.ans.d.next = self.br_valid.val() & !self.br_write.val() & !self.hold.q.val();
        // BAR0: the board's page (`csr::BOARD_REGS`, 0xFF_F000) = the
        // registers here, everything else the core's.
        self.board_page.next = self.br_csr_addr.val().get_bits::<12>(12) == 0xFFF;
        self.csr_valid.next = self.br_csr_valid.val() & !self.board_page.val();
        self.csr_write.next = self.br_csr_write.val();
        self.csr_addr.next = self.br_csr_addr.val();
        self.csr_wdata.next = self.br_csr_wdata.val();
        self.br_csr_rvalid.next = self.csr_ans.q.val() | self.csr_rvalid.val();
        if self.csr_ans.q.val() {
            self.br_csr_rdata.next = self.csr_ans_data.q.val();
        } else {
            self.br_csr_rdata.next = self.csr_rdata.val();
        }
        self.csr_ans.d.next = false;
        self.ld_we.d.next = false;
        if self.br_csr_valid.val() & self.board_page.val() {
            if !self.br_csr_write.val() {
                self.csr_ans.d.next = true;
                self.csr_ans_data.d.next = 0.into();
                if (self.br_csr_addr.val() == 0xFF_F000) & self.hold.q.val() {
                    self.csr_ans_data.d.next = 1.into();
                }
                if self.br_csr_addr.val() == 0xFF_F004 {
                    self.csr_ans_data.d.next = self.next_addr.q.val();
                }
            } else {
                if self.br_csr_addr.val() == 0xFF_F000 {
                    self.hold.d.next = self.br_csr_wdata.val().get_bit(0);
                }
                if self.br_csr_addr.val() == 0xFF_F004 {
                    self.next_addr.d.next = self.br_csr_wdata.val();
                }
                if self.br_csr_addr.val() == 0xFF_F008 {
                    self.ld_we.d.next = true;
                    self.ld_addr.d.next = self.next_addr.q.val();
                    self.ld_data.d.next = self.br_csr_wdata.val();
                    self.next_addr.d.next = self.next_addr.q.val() + 4;
                }
            }
        }
        if self.reset.val() {
            self.hold.d.next = false;
            self.next_addr.d.next = 0.into();
            self.ld_we.d.next = false;
            self.ans.d.next = false;
            self.csr_ans.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tick;

    /// A model of the core's firmware port: a read seen at an edge is
    /// answered `lat` clocks later (`fw_rvalid` high for one clock, data =
    /// a function of the address); writes are recorded.
    struct PortModel {
        lat: u64,
        pending: Option<(u64, u32)>,
        writes: Vec<(u32, u32)>,
        reads: Vec<u32>,
    }

    fn rdata_of(addr: u32) -> u32 {
        addr.wrapping_mul(0x9E37_79B9) ^ 0x5A5A_0F0F
    }

    impl PortModel {
        /// Before the edge: what the port shows in this clock.
        fn drive(&self, rvalid: &mut Signal<In, Bit>, rdata: &mut Signal<In, Bits<32>>) {
            match self.pending {
                Some((0, a)) => {
                    rvalid.next = true;
                    rdata.next = (rdata_of(a) as u64).into();
                }
                _ => {
                    rvalid.next = false;
                    // Garbage while not valid: the bridge must not pass it.
                    rdata.next = 0xDEAD_BEEF_u64.into();
                }
            }
        }

        /// At the edge: take an access, count down a pending read.
        fn edge(&mut self, valid: bool, write: bool, addr: u32, wdata: u32) {
            self.pending = match self.pending {
                Some((0, _)) | None => None,
                Some((n, a)) => Some((n - 1, a)),
            };
            if valid {
                assert!(self.pending.is_none(), "an access while a read is pending");
                if write {
                    self.writes.push((addr, wdata));
                } else {
                    self.reads.push(addr);
                    self.pending = Some((self.lat, addr));
                }
            }
        }
    }

    /// One CPU access through `CpuPort`: returns (data, clocks from the
    /// clock `bus_valid` shows in to the edge that takes `bus_ready`).
    fn access(
        uut: &mut CpuPort,
        port: &mut PortModel,
        write: bool,
        addr: u32,
        wdata: u32,
    ) -> (u32, u64) {
        uut.bus_valid.next = true;
        uut.bus_we.next = write;
        uut.bus_addr.next = (addr as u64).into();
        uut.bus_wdata.next = (wdata as u64).into();
        let mut fw_valids = 0;
        for clocks in 1..100 {
            port.drive(&mut uut.fw_rvalid, &mut uut.fw_rdata);
            uut.clock.next = false.into();
            assert!(simulate(uut, 1000), "did not settle");
            let v = uut.fw_valid.val();
            if v {
                fw_valids += 1;
                assert_eq!(uut.fw_write.val(), write);
                assert_eq!(uut.fw_addr.val().to_u64() as u32, addr - 0x2000_0000);
                assert_eq!(uut.fw_wdata.val().to_u64() as u32, wdata);
            }
            let ready = uut.bus_ready.val();
            let data = uut.bus_rdata.val().to_u64() as u32;
            port.edge(
                v,
                uut.fw_write.val(),
                uut.fw_addr.val().to_u64() as u32,
                uut.fw_wdata.val().to_u64() as u32,
            );
            uut.clock.next = true.into();
            assert!(simulate(uut, 1000), "did not settle");
            if ready {
                let inside = (0x2000_0000..0x2100_0000).contains(&addr);
                assert_eq!(fw_valids, u64::from(inside), "fw_valid for one clock");
                uut.bus_valid.next = false;
                return (data, clocks);
            }
        }
        panic!("no bus_ready");
    }

    #[test]
    fn cpu_bus_reaches_the_firmware_port() {
        let mut uut = CpuPort::default();
        uut.connect_all();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        uut.bus_valid.next = false;
        tick!(uut);
        for lat in [0u64, 1, 3, 9] {
            let mut port = PortModel {
                lat,
                pending: None,
                writes: Vec::new(),
                reads: Vec::new(),
            };
            for (k, addr) in [0x2000_0000u32, 0x2000_0040, 0x2000_2000, 0x20FF_FFFC]
                .into_iter()
                .enumerate()
            {
                let w = 0x1234_0000 + k as u32;
                // A write: answered in the clock after fw_valid.
                assert_eq!(access(&mut uut, &mut port, true, addr, w), (0, 2));
                assert_eq!(port.writes.last(), Some(&(addr - 0x2000_0000, w)));
                // A read: answered in the clock fw_rvalid shows, its data.
                let (d, c) = access(&mut uut, &mut port, false, addr, 0);
                assert_eq!((d, c), (rdata_of(addr - 0x2000_0000), 2 + lat), "lat {lat}");
                assert_eq!(port.reads.last(), Some(&(addr - 0x2000_0000)));
                // Back to back with no idle clock between accesses.
                uut.bus_valid.next = true;
            }
            // Outside the window: read 0, write dropped, 2 clocks, nothing on
            // the port.
            let (nw, nr) = (port.writes.len(), port.reads.len());
            for addr in [0x1FFF_FFFCu32, 0x2100_0000, 0x3000_0000, 0x0000_0000] {
                assert_eq!(access(&mut uut, &mut port, true, addr, 7), (0, 2));
                assert_eq!(access(&mut uut, &mut port, false, addr, 0), (0, 2));
            }
            assert_eq!((port.writes.len(), port.reads.len()), (nw, nr));
            assert_eq!(port.writes.len(), 4);
            assert_eq!(port.reads.len(), 4);
            uut.bus_valid.next = false;
            tick!(uut);
        }
    }

    /// `HOLD`, the load port and who gets the core's answers.
    #[test]
    fn port_owner_hold_and_load() {
        let mut uut = FwPortOwner::default();
        uut.connect_all();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let settle = |u: &mut FwPortOwner| {
            u.clock.next = false.into();
            assert!(simulate(u, 1000), "did not settle");
        };
        let edge = |u: &mut FwPortOwner| {
            u.clock.next = true.into();
            assert!(simulate(u, 1000), "did not settle");
        };
        // A bridge access (one clock of valid) on the firmware window
        // (`bar0` false) or BAR0; the core answers a read it saw in the next
        // clock (0x00C0_FFEE on the port, 0x0000_BA50 on BAR0). Returns the
        // answer the bridge got (if a read) and whether the core saw it.
        let bridge = |u: &mut FwPortOwner, bar0: bool, write: bool, addr: u32, wdata: u32| {
            u.br_valid.next = !bar0;
            u.br_csr_valid.next = bar0;
            u.br_write.next = write;
            u.br_csr_write.next = write;
            u.br_addr.next = (addr as u64).into();
            u.br_csr_addr.next = (addr as u64).into();
            u.br_wdata.next = (wdata as u64).into();
            u.br_csr_wdata.next = (wdata as u64).into();
            u.cpu_valid.next = false;
            u.fw_rvalid.next = false;
            u.csr_rvalid.next = false;
            settle(u);
            let to_core = if bar0 {
                u.csr_valid.val()
            } else {
                u.fw_valid.val()
            };
            assert!(!(u.csr_valid.val() & u.fw_valid.val()));
            edge(u);
            u.br_valid.next = false;
            u.br_csr_valid.next = false;
            if bar0 {
                u.csr_rvalid.next = to_core & !write;
                u.csr_rdata.next = 0x0000_BA50_u64.into();
            } else {
                u.fw_rvalid.next = to_core & !write;
                u.fw_rdata.next = 0x00C0_FFEE_u64.into();
            }
            settle(u);
            let ans = if bar0 {
                u.br_csr_rvalid
                    .val()
                    .then(|| u.br_csr_rdata.val().to_u64() as u32)
            } else {
                u.br_rvalid.val().then(|| u.br_rdata.val().to_u64() as u32)
            };
            assert!(!u.cpu_rvalid.val(), "the CPU gets no answer for the bridge");
            edge(u);
            u.fw_rvalid.next = false;
            u.csr_rvalid.next = false;
            (ans, to_core)
        };
        // After reset the CPU runs and owns the port.
        settle(&mut uut);
        assert!(!uut.cpu_reset.val());
        uut.cpu_valid.next = true;
        uut.cpu_addr.next = 0x40.into();
        settle(&mut uut);
        assert!(uut.fw_valid.val());
        uut.cpu_valid.next = false;
        uut.fw_rvalid.next = true;
        settle(&mut uut);
        assert!(uut.cpu_rvalid.val() && !uut.br_rvalid.val());
        uut.fw_rvalid.next = false;
        edge(&mut uut);
        // The bridge's firmware-window accesses meanwhile are answered here;
        // BAR0 outside the board's page is the core's, CQ doorbells
        // (`csr::CQ_DOORBELL_BASE`) and the page just below included.
        assert_eq!(bridge(&mut uut, false, false, 0x40, 0), (Some(0), false));
        assert_eq!(bridge(&mut uut, false, true, 0x40, 1), (None, false));
        assert_eq!(bridge(&mut uut, true, false, 0x24, 0), (Some(0xBA50), true));
        assert_eq!(bridge(&mut uut, true, true, 0x24, 0), (None, true));
        let cq_db = rnic_wire::abi::csr::CQ_DOORBELL_BASE;
        assert_eq!(bridge(&mut uut, true, true, cq_db, 5), (None, true));
        assert_eq!(
            bridge(&mut uut, true, true, cq_db + 0x1000, 5),
            (None, true)
        );
        assert_eq!(bridge(&mut uut, true, true, CPU_CTL - 4, 1), (None, true));
        assert_eq!(bridge(&mut uut, true, false, CPU_CTL, 0), (Some(0), false));
        // HOLD: the CPU in reset, the bridge's window on the port.
        assert_eq!(bridge(&mut uut, true, true, CPU_CTL, 1), (None, false));
        assert_eq!(bridge(&mut uut, true, false, CPU_CTL, 0), (Some(1), false));
        settle(&mut uut);
        assert!(uut.cpu_reset.val());
        assert_eq!(
            bridge(&mut uut, false, false, 0x40, 0),
            (Some(0x00C0_FFEE), true)
        );
        assert_eq!(bridge(&mut uut, false, true, 0x44, 9), (None, true));
        assert_eq!(bridge(&mut uut, true, false, 0x24, 0), (Some(0xBA50), true));
        // The CPU's (stray) access does not reach the port while held.
        uut.cpu_valid.next = true;
        settle(&mut uut);
        assert!(!uut.fw_valid.val());
        uut.cpu_valid.next = false;
        // Loading: address, then words at +4 each; nothing reaches the core.
        assert_eq!(
            bridge(&mut uut, true, true, CPU_LOAD_ADDR, 0x100),
            (None, false)
        );
        let mut loads = Vec::new();
        for w in [0xAAu32, 0xBB, 0xCC] {
            uut.br_csr_valid.next = true;
            uut.br_csr_write.next = true;
            uut.br_csr_addr.next = (CPU_LOAD_DATA as u64).into();
            uut.br_csr_wdata.next = (w as u64).into();
            settle(&mut uut);
            assert!(!uut.csr_valid.val() && !uut.fw_valid.val());
            edge(&mut uut);
            uut.br_csr_valid.next = false;
            settle(&mut uut);
            assert!(uut.load_we.val());
            loads.push((
                uut.load_addr.val().to_u64() as u32,
                uut.load_data.val().to_u64() as u32,
            ));
            edge(&mut uut);
            settle(&mut uut);
            assert!(!uut.load_we.val(), "one clock per word");
        }
        assert_eq!(loads, [(0x100, 0xAA), (0x104, 0xBB), (0x108, 0xCC)]);
        assert_eq!(
            bridge(&mut uut, true, false, CPU_LOAD_ADDR, 0),
            (Some(0x10C), false)
        );
        // Released: the CPU runs again.
        assert_eq!(bridge(&mut uut, true, true, CPU_CTL, 0), (None, false));
        settle(&mut uut);
        assert!(!uut.cpu_reset.val());
        assert_eq!(bridge(&mut uut, false, false, 0x40, 0), (Some(0), false));
    }
}
