//! The firmware's [`Hal`] over a Verilated `rnic_core`'s firmware port
//! (`fw_*`, `rnic_wire::abi::context::port`), and the host's BAR0 (`csr_*`).
//!
//! [`FwNode`] owns the model and clocks it: every register access is one
//! clock (`fw_valid` for one edge; a read's `fw_rdata` is there right after
//! that edge), and each clock also drives the MAC receive port
//! ([`FwNode::mac_rx`]), takes the raw TX frames (`raw_tx_*`, always ready)
//! into [`FwNode::tx_frames`], a copy of each event record (`ev_*`) into
//! [`FwNode::events`] (the core itself writes them into the host's event
//! queue) and the flush strobes into [`FwNode::flushes`].
//! [`CoSimHal`] and [`HostCsr`] are handles on one shared node, so the real
//! firmware (`rnic_fw::Firmware`, polled between clocks) and a test acting
//! as the host drive the same model.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

use rnic_fw::hal::{Exception, Hal, HalError, IfConfig, TermRequest};
use rnic_wire::abi::context::{port, ConnContext, ExceptionReason, TableId};
use rnic_wire::abi::csr;
use rnic_wire::abi::mailbox::{Event, MboxStatus, EVENT_SIZE};
use verilator_sys::rnic_core::Model;

use crate::cpu_fw::CpuFw;
use crate::dma::{DmaConfig, DmaServer};
use crate::host_mem::HostMemory;
use crate::mac_port::{MacRxPort, MacTxPort};

/// The model, with the stream adapters' pin traits.
pub struct Core(pub Model);
impl Deref for Core {
    type Target = Model;
    fn deref(&self) -> &Model {
        &self.0
    }
}
impl DerefMut for Core {
    fn deref_mut(&mut self) -> &mut Model {
        &mut self.0
    }
}
crate::impl_mac_rx_pins!(Core);
crate::impl_mac_tx_pins!(Core; get_raw_tx_data, get_raw_tx_keep, get_raw_tx_last,
    get_raw_tx_valid, set_raw_tx_ready);
// On the model itself (not `Core`): the macro's `eval` must resolve to the
// model's inherent method, not recurse into the trait's.
crate::impl_dma_pins!(Model);
// The MAC TX port (the TX engine's frames and fast-path ACKs), on the model.
crate::impl_mac_tx_pins!(Model);

/// Host memory of a node: where its allocator starts and ends.
pub const HOST_MEM_BASE: u64 = 0x1_0000_0000;
pub const HOST_MEM_LIMIT: u64 = 0x2_0000_0000;

/// Polls of a busy bit before an access gives up (each poll is a clock).
const BUSY_POLLS: u32 = 100_000;

/// A frame the node sent, and the clock of its first beat (the link puts
/// it on the wire from then: the MAC streams at line rate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxFrame {
    pub data: Vec<u8>,
    pub start: u64,
}

impl std::ops::Deref for TxFrame {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.data
    }
}

/// One `rnic_core` with its MAC receive feed and its firmware-side sinks.
pub struct FwNode {
    pub core: Core,
    /// Frames fed into `mac_rx_*`, one beat per clock.
    pub mac_rx: MacRxPort,
    raw_tx: MacTxPort,
    mac_tx: MacTxPort,
    /// Frames the node sent: the firmware's (`TX_SEND` → `raw_tx_*`) and the
    /// TX path's (`mac_tx_*`: ACKs, RDMA traffic), in the order they ended.
    pub tx_frames: VecDeque<TxFrame>,
    /// How many of [`FwNode::tx_frames`] came from `mac_tx_*`.
    pub mac_tx_frames: u64,
    /// Whether [`FwNode::tick`] also serves the core's host side: its DMA
    /// (from [`FwNode::mem`]), `mac_tx_*`, and the placement/Terminate
    /// records. On by default; a test that drives those ports with its own
    /// DMA server and MAC sink turns it off, or two sinks would share (and
    /// tear) the same beats.
    pub serve_host_side: bool,
    /// Event records the firmware pushed (`EVENT_PUSH` → `ev_*`), copied
    /// when they appear; the core's completion writer writes them into the
    /// host's event queue by DMA and pops them.
    pub events: VecDeque<[u8; EVENT_SIZE]>,
    ev_prev: bool,
    /// QP numbers of `FLUSH_QP` strobes.
    pub flushes: Vec<u32>,
    /// Placement records (`placed_*`: STag, tagged offset, length), popped
    /// every clock.
    pub placed: Vec<(u32, u64, u16)>,
    /// Terminate requests the core raised (`term_*`: cause, connection),
    /// each once, when it shows: popped from the pins every clock, or —
    /// with [`FwNode::fw_terms`] — left for the firmware, which pops them
    /// through `TERM_POP` when it polls ([`CoSimHal`]).
    pub terms: Vec<(u16, u32)>,
    /// The request on `term_*` is already in `terms` (until it is popped).
    term_seen: bool,
    /// The firmware takes the Terminate requests through its port (and
    /// sends them); [`FwNode::tick`] leaves the `term_*` pins alone. Set by
    /// [`CoSimHal::new`].
    pub fw_terms: bool,
    /// The host's memory, served to the core's DMA ports by [`FwNode::dma`].
    pub mem: HostMemory,
    /// The DMA server (`dma_wr_*`, `dma_rd_*`), stepped every clock.
    pub dma: DmaServer,
    /// No effect (kept for callers): the event-queue stand-in is gone, the
    /// RTL writes the event queue (docs/rtl.md, "Completions").
    pub eq_standin: bool,
    /// Firmware port accesses (reads, writes) and clocks spent in them.
    pub fw_reads: u64,
    pub fw_writes: u64,
    pub fw_cycles: u64,
    /// The firmware on the RISC-V core (`--fw cpu`): when present, it
    /// drives the firmware port every clock and [`CoSimHal`] is not used.
    pub cpu: Option<CpuFw>,
    /// Connection indices the firmware wrote into `RETX_CONN` (its
    /// retransmission timer fired), in order, with the clock of the write.
    pub retx_writes: Vec<(u32, u64)>,
    /// Frames the firmware put into the receive pipeline (`RX_INJECT`):
    /// (cycle of the write, length).
    pub rx_injects: Vec<(u64, usize)>,
    /// What a read of `CLOCK_KHZ` answers instead of the RTL's parameter
    /// (set by [`FwNode::set_clock_khz`]).
    clock_khz: Option<u32>,
}

impl Default for FwNode {
    fn default() -> Self {
        Self::new()
    }
}

impl FwNode {
    /// A reset model with `link_up` high.
    pub fn new() -> Self {
        let mut core = Core(Model::new());
        core.set_link_up(1);
        // the fast path's payload stream is drained (rx_ulp_en = 0)
        core.set_rx_pay_ready(1);
        core.reset(4);
        FwNode {
            core,
            mac_rx: MacRxPort::new(4),
            raw_tx: MacTxPort::new(),
            mac_tx: MacTxPort::new(),
            mac_tx_frames: 0,
            serve_host_side: true,
            tx_frames: VecDeque::new(),
            events: VecDeque::new(),
            ev_prev: false,
            flushes: Vec::new(),
            placed: Vec::new(),
            terms: Vec::new(),
            fw_terms: false,
            term_seen: false,
            mem: HostMemory::new(HOST_MEM_BASE, HOST_MEM_LIMIT),
            dma: DmaServer::new(DmaConfig {
                log: false,
                ..DmaConfig::default()
            }),
            eq_standin: false,
            fw_reads: 0,
            fw_writes: 0,
            fw_cycles: 0,
            cpu: None,
            retx_writes: Vec::new(),
            rx_injects: Vec::new(),
            clock_khz: None,
        }
    }

    /// The firmware's reads of `CLOCK_KHZ` (native, or the image on the
    /// core) answer `khz` instead of the clock the RTL was generated for
    /// (`None`: the RTL's): a co-simulation that makes a clock stand for
    /// another rate (`crate::clock::Timing`) tells the firmware, whose
    /// timers count µs from it. Set it before the firmware first reads
    /// the clock, and after the core is in place.
    pub fn set_clock_khz(&mut self, khz: Option<u32>) {
        self.clock_khz = khz;
        if let Some(cpu) = self.cpu.as_mut() {
            cpu.clock_khz = khz;
        }
    }

    /// A shared handle.
    pub fn shared() -> Rc<RefCell<FwNode>> {
        Rc::new(RefCell::new(FwNode::new()))
    }

    /// Turns the RX ULP path on (`rx_ulp_en`): RDMA-mode payload is placed
    /// by DMA into host memory; the untagged stream (`ut_*`) is drained.
    pub fn set_ulp(&mut self, on: bool) {
        self.core.set_rx_ulp_en(on as u64);
        self.core.set_ut_ready(on as u64);
    }

    /// Puts the firmware on the RISC-V core: `cpu` drives the firmware
    /// port from the next clock, and takes the Terminate requests.
    pub fn attach_cpu(&mut self, cpu: CpuFw) {
        self.fw_terms = true;
        self.cpu = Some(cpu);
    }

    /// One clock: MAC receive beat, raw TX, DMA and event sinks, the CPU's
    /// bus, then the edge.
    pub fn tick(&mut self) {
        self.mac_rx.drive(&mut self.core);
        let cycle = self.core.cycle();
        if let Some(cpu) = &mut self.cpu {
            cpu.drive(&mut self.core.0, cycle);
        }
        // Replay requests and injected frames, from the port's pins:
        // whoever drives them (the native firmware's `fw_write`, the core).
        if self.core.get_fw_valid() != 0 && self.core.get_fw_write() != 0 {
            let v = self.core.get_fw_wdata() as u32;
            match self.core.get_fw_addr() as u32 {
                port::RETX_CONN => self.retx_writes.push((v, cycle)),
                port::RX_INJECT => self.rx_injects.push((cycle, v as usize)),
                _ => {}
            }
        }
        self.raw_tx.drive_ready(&mut self.core, true);
        let host = self.serve_host_side;
        if host {
            self.mac_tx.drive_ready(&mut self.core.0, true);
            self.dma.drive(&mut self.core.0, &mut self.mem);
        }
        let pv = host && self.core.get_placed_valid() != 0;
        let tv = host && !self.fw_terms && self.core.get_term_valid() != 0;
        if host {
            self.core.set_placed_pop(pv as u64);
            self.core.set_term_pop(tv as u64);
        }
        if pv {
            self.placed.push((
                self.core.get_placed_stag() as u32,
                self.core.get_placed_to(),
                self.core.get_placed_len() as u16,
            ));
        }
        if tv {
            self.terms.push((
                self.core.get_term_cause() as u16,
                self.core.get_term_conn() as u32,
            ));
        }
        if self.fw_terms && !self.term_seen && self.core.get_term_valid() != 0 {
            // observed, not popped: the firmware takes it
            self.term_seen = true;
            self.terms.push((
                self.core.get_term_cause() as u16,
                self.core.get_term_conn() as u32,
            ));
        }
        self.core.eval();
        if host {
            self.dma.sample(&self.core.0, &mut self.mem);
        }
        let now = self.core.cycle();
        if let Some(data) = self.raw_tx.sample(&self.core) {
            let start = (now + 1).saturating_sub(self.raw_tx.frame_cycles());
            self.tx_frames.push_back(TxFrame { data, start });
        }
        if host {
            if let Some(data) = self.mac_tx.sample(&self.core.0) {
                let start = (now + 1).saturating_sub(self.mac_tx.frame_cycles());
                self.tx_frames.push_back(TxFrame { data, start });
                self.mac_tx_frames += 1;
            }
        }
        let ev = self.core.get_ev_valid() != 0;
        if ev && !self.ev_prev {
            let mut e = [0u8; EVENT_SIZE];
            for (i, w) in self.core.get_ev_data().iter().enumerate() {
                e[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
            }
            self.events.push_back(e);
        }
        self.ev_prev = ev;
        if self.core.get_flush_valid() != 0 {
            self.flushes.push(self.core.get_flush_qpn() as u32);
        }
        self.core.tick();
        if let Some(cpu) = &mut self.cpu {
            cpu.sample(&self.core.0);
        }
    }

    /// `n` clocks.
    pub fn ticks(&mut self, n: u64) {
        for _ in 0..n {
            self.tick();
        }
    }

    /// Clocks until the MAC receive queue is empty and then `extra` more.
    pub fn drain_rx(&mut self, extra: u64) {
        while self.mac_rx.pending() > 0 {
            self.tick();
        }
        self.ticks(extra);
    }

    /// Firmware port write: one clock.
    pub fn fw_write(&mut self, addr: u32, v: u32) {
        assert!(
            self.cpu.as_ref().is_none_or(CpuFw::held),
            "the firmware port belongs to the RISC-V core (FwNode::with_port)"
        );
        self.core.set_fw_valid(1);
        self.core.set_fw_write(1);
        self.core.set_fw_addr(addr as u64);
        self.core.set_fw_wdata(v as u64);
        self.tick();
        self.core.set_fw_valid(0);
        self.core.set_fw_write(0);
        self.fw_writes += 1;
        self.fw_cycles += 1;
    }

    /// Firmware port read: one clock (`fw_rvalid` right after the edge).
    pub fn fw_read(&mut self, addr: u32) -> u32 {
        assert!(
            self.cpu.as_ref().is_none_or(CpuFw::held),
            "the firmware port belongs to the RISC-V core (FwNode::with_port)"
        );
        self.core.set_fw_valid(1);
        self.core.set_fw_write(0);
        self.core.set_fw_addr(addr as u64);
        self.tick();
        self.core.set_fw_valid(0);
        self.fw_reads += 1;
        self.fw_cycles += 1;
        let mut n = 0;
        while self.core.get_fw_rvalid() == 0 {
            assert!(n < 16, "fw_rvalid never came for {addr:#x}");
            self.tick();
            self.fw_cycles += 1;
            n += 1;
        }
        match self.clock_khz {
            Some(khz) if addr == port::CLOCK_KHZ => khz,
            _ => self.core.get_fw_rdata() as u32,
        }
    }

    /// BAR0 write: one clock.
    pub fn csr_write(&mut self, addr: u32, v: u32) {
        self.core.set_csr_valid(1);
        self.core.set_csr_write(1);
        self.core.set_csr_addr(addr as u64);
        self.core.set_csr_wdata(v as u64);
        self.tick();
        self.core.set_csr_valid(0);
        self.core.set_csr_write(0);
    }

    /// BAR0 read: one clock.
    pub fn csr_read(&mut self, addr: u32) -> u32 {
        self.core.set_csr_valid(1);
        self.core.set_csr_write(0);
        self.core.set_csr_addr(addr as u64);
        self.tick();
        self.core.set_csr_valid(0);
        let mut n = 0;
        while self.core.get_csr_rvalid() == 0 {
            assert!(n < 16, "csr_rvalid never came for {addr:#x}");
            self.tick();
            n += 1;
        }
        self.core.get_csr_rdata() as u32
    }

    fn fw_write_bytes(&mut self, base: u32, b: &[u8]) {
        for (i, c) in b.chunks(4).enumerate() {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            self.fw_write(base + 4 * i as u32, u32::from_le_bytes(w));
        }
    }

    fn fw_read_bytes(&mut self, base: u32, out: &mut [u8]) {
        for (i, c) in out.chunks_mut(4).enumerate() {
            let w = self.fw_read(base + 4 * i as u32).to_le_bytes();
            c.copy_from_slice(&w[..c.len()]);
        }
    }

    /// Reads entry `index` of `table` into `buf` (the entry's size) through
    /// the firmware port.
    pub fn read_table(
        &mut self,
        table: TableId,
        index: u32,
        buf: &mut [u8],
    ) -> Result<(), HalError> {
        self.fw_write(port::TABLE_SEL, (table as u32) << 24 | index);
        self.fw_write(port::TABLE_CMD, port::TABLE_READ);
        self.table_wait()?;
        self.fw_read_bytes(port::TABLE_DATA, buf);
        Ok(())
    }

    /// Connection context `index`, read through the firmware port.
    pub fn read_conn(&mut self, index: u32) -> Result<ConnContext, HalError> {
        let mut b = [0u8; ConnContext::SIZE];
        self.read_table(TableId::Conn, index, &mut b)?;
        ConnContext::parse(&b).map_err(|_| HalError::BadLength)
    }

    /// Runs `f` with the firmware port to itself: a test or report reading
    /// the device's tables as the firmware would. With the firmware on the
    /// RISC-V core, the core is first held on its next read of `MBOX_CMD`
    /// (the start of a poll, between two of the port protocol's access
    /// sequences: no table command of the firmware's is half done), and
    /// released after `f`; the core's clock runs on meanwhile.
    pub fn with_port<R>(&mut self, f: impl FnOnce(&mut FwNode) -> R) -> R {
        if self.cpu.is_none() {
            return f(self);
        }
        self.cpu.as_mut().expect("checked").hold(true);
        let mut n = 0u64;
        while !self.cpu.as_ref().expect("checked").held() {
            assert!(
                n < 10_000_000,
                "the RISC-V core never reached its next poll"
            );
            self.tick();
            n += 1;
        }
        let r = f(self);
        self.cpu.as_mut().expect("checked").hold(false);
        r
    }

    /// Waits while `TABLE_CMD` is busy; `Err` if the command failed.
    fn table_wait(&mut self) -> Result<(), HalError> {
        for _ in 0..BUSY_POLLS {
            let s = self.fw_read(port::TABLE_CMD);
            if s & 1 == 0 {
                // bit 1: unknown table, index out of range, no read-back
                return if s & 2 != 0 {
                    Err(HalError::BadIndex)
                } else {
                    Ok(())
                };
            }
        }
        panic!("TABLE_CMD stayed busy");
    }
}

/// The firmware's [`Hal`] on a shared [`FwNode`].
pub struct CoSimHal {
    pub node: Rc<RefCell<FwNode>>,
    khz: Option<u64>,
}

impl CoSimHal {
    /// The firmware's handle on `node`; from now on the firmware takes the
    /// node's Terminate requests ([`FwNode::fw_terms`]).
    pub fn new(node: Rc<RefCell<FwNode>>) -> Self {
        node.borrow_mut().fw_terms = true;
        CoSimHal { node, khz: None }
    }
}

impl Hal for CoSimHal {
    fn config(&mut self) -> IfConfig {
        let mut n = self.node.borrow_mut();
        let lo = n.fw_read(port::CFG_MAC_LO).to_le_bytes();
        let hi = n.fw_read(port::CFG_MAC_HI).to_le_bytes();
        IfConfig {
            mac: [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1]],
            ip: n.fw_read(port::CFG_IPV4),
            netmask: n.fw_read(port::CFG_NETMASK),
            gateway: n.fw_read(port::CFG_GATEWAY),
            mtu: n.fw_read(port::CFG_MTU).min(u16::MAX as u32) as u16,
        }
    }

    fn now_us(&mut self) -> u64 {
        let mut n = self.node.borrow_mut();
        let khz = *self
            .khz
            .get_or_insert_with(|| n.fw_read(port::CLOCK_KHZ).max(1) as u64);
        let lo = n.fw_read(port::CYCLES_LO) as u64;
        let hi = n.fw_read(port::CYCLES_HI) as u64;
        (hi << 32 | lo) * 1000 / khz
    }

    fn read_table(&mut self, table: TableId, index: u32, buf: &mut [u8]) -> Result<(), HalError> {
        let size = table.entry_size();
        if buf.len() < size {
            return Err(HalError::BadLength);
        }
        if index >= 1 << 24 {
            return Err(HalError::BadIndex);
        }
        self.node
            .borrow_mut()
            .read_table(table, index, &mut buf[..size])
    }

    fn write_table(&mut self, table: TableId, index: u32, data: &[u8]) -> Result<(), HalError> {
        if data.len() != table.entry_size() {
            return Err(HalError::BadLength);
        }
        if index >= 1 << 24 {
            return Err(HalError::BadIndex);
        }
        let mut n = self.node.borrow_mut();
        n.fw_write_bytes(port::TABLE_DATA, data);
        n.fw_write(port::TABLE_SEL, (table as u32) << 24 | index);
        n.fw_write(port::TABLE_CMD, port::TABLE_WRITE);
        n.table_wait()
    }

    fn recv_exception(&mut self, buf: &mut [u8]) -> Option<Exception> {
        let mut n = self.node.borrow_mut();
        loop {
            let st = n.fw_read(port::EXC_STATUS);
            if st & 1 << 31 == 0 {
                return None;
            }
            let len = (st & 0xFFFF) as usize;
            let Ok(reason) = ExceptionReason::from_u8((st >> 16) as u8) else {
                // a reason this firmware does not know: drop the entry
                n.fw_write(port::EXC_POP, 1);
                continue;
            };
            let conn = n.fw_read(port::EXC_CONN);
            let take = len.min(buf.len()).min(port::FRAME_WINDOW as usize);
            n.fw_read_bytes(port::EXC_DATA, &mut buf[..take]);
            n.fw_write(port::EXC_POP, 1);
            return Some(Exception {
                reason,
                conn: (conn != u32::MAX).then_some(conn),
                len: take,
                frame_len: len,
            });
        }
    }

    fn send_frame(&mut self, frame: &[u8]) -> Result<(), HalError> {
        if frame.is_empty() || frame.len() > port::FRAME_WINDOW as usize {
            return Err(HalError::BadLength);
        }
        let mut n = self.node.borrow_mut();
        let mut polls = 0;
        while n.fw_read(port::TX_SEND) & 1 << 31 != 0 {
            polls += 1;
            if polls == BUSY_POLLS {
                return Err(HalError::Full);
            }
        }
        n.fw_write_bytes(port::TX_DATA, frame);
        n.fw_write(port::TX_SEND, frame.len() as u32);
        Ok(())
    }

    /// Like `send_frame`, with `RX_INJECT`: the frame goes into the core's
    /// receive pipeline (in front of the parser) instead of onto the wire.
    fn inject_rx(&mut self, frame: &[u8]) -> Result<(), HalError> {
        if frame.is_empty() || frame.len() > port::FRAME_WINDOW as usize {
            return Err(HalError::BadLength);
        }
        let mut n = self.node.borrow_mut();
        let mut polls = 0;
        while n.fw_read(port::RX_INJECT) & 1 << 31 != 0 {
            polls += 1;
            if polls == BUSY_POLLS {
                return Err(HalError::Full);
            }
        }
        n.fw_write_bytes(port::TX_DATA, frame);
        n.fw_write(port::RX_INJECT, frame.len() as u32);
        Ok(())
    }

    fn mailbox_poll(&mut self, buf: &mut [u8]) -> Option<(u16, usize)> {
        let mut n = self.node.borrow_mut();
        let cmd = n.fw_read(port::MBOX_CMD);
        if cmd & 1 << 31 == 0 {
            return None;
        }
        let len = (n.fw_read(port::MBOX_LEN) as usize).min(csr::MBOX_DATA_SIZE as usize);
        let take = len.min(buf.len());
        n.fw_read_bytes(port::MBOX_DATA, &mut buf[..take]);
        Some((cmd as u16, take))
    }

    fn mailbox_done(&mut self, status: MboxStatus, result: &[u8]) {
        let mut n = self.node.borrow_mut();
        let r = &result[..result.len().min(csr::MBOX_DATA_SIZE as usize)];
        n.fw_write_bytes(port::MBOX_DATA, r);
        n.fw_write(port::MBOX_LEN, r.len() as u32);
        n.fw_write(port::MBOX_DONE, status as u32);
    }

    fn post_event(&mut self, event: &Event) -> Result<(), HalError> {
        let mut b = [0u8; EVENT_SIZE];
        event.emit(&mut b).map_err(|_| HalError::BadLength)?;
        let mut n = self.node.borrow_mut();
        if n.fw_read(port::EVENT_PUSH) & 1 != 0 {
            return Err(HalError::Full);
        }
        n.fw_write_bytes(port::EVENT_DATA, &b);
        n.fw_write(port::EVENT_PUSH, 1);
        Ok(())
    }

    fn flush_qp(&mut self, qpn: u32) -> Result<(), HalError> {
        self.node.borrow_mut().fw_write(port::FLUSH_QP, qpn);
        Ok(())
    }

    /// `TERM_STATUS`; if valid, `TERM_CONN`/`QPN`/`SEG_LEN`, the 48-octet
    /// `TERM_HDR`, then `TERM_POP` (17 clocks; 1 when there is none). The
    /// node recorded the request in [`FwNode::terms`] when it showed.
    fn pop_terminate(&mut self) -> Option<TermRequest> {
        let mut n = self.node.borrow_mut();
        let st = n.fw_read(port::TERM_STATUS);
        if st & 1 << 31 == 0 {
            return None;
        }
        let conn = n.fw_read(port::TERM_CONN);
        let qpn = n.fw_read(port::TERM_QPN);
        let seg_len = n.fw_read(port::TERM_SEG_LEN) as u16;
        let mut hdr = [0u8; port::TERM_HDR_LEN];
        n.fw_read_bytes(port::TERM_HDR, &mut hdr);
        n.fw_write(port::TERM_POP, 1);
        // the next request (if any) shows now: record it on the next clock
        n.term_seen = false;
        Some(TermRequest {
            cause: st as u16,
            conn,
            qpn,
            seg_len,
            hdr,
        })
    }

    /// `RETX_STATUS` (bit 0 busy: `Full`), then the connection index into
    /// `RETX_CONN`: the device replays the connection's unacknowledged
    /// FPDUs (2 clocks). A core without the registers ignores the write.
    fn retransmit(&mut self, conn: u32) -> Result<(), HalError> {
        let mut n = self.node.borrow_mut();
        if n.fw_read(port::RETX_STATUS) & 1 != 0 {
            return Err(HalError::Full);
        }
        n.fw_write(port::RETX_CONN, conn);
        Ok(())
    }
}

/// The host's side of the same node: BAR0 reads and writes, and a mailbox
/// command helper that polls the firmware between clocks.
pub struct HostCsr {
    pub node: Rc<RefCell<FwNode>>,
}

impl HostCsr {
    pub fn read(&self, addr: u32) -> u32 {
        self.node.borrow_mut().csr_read(addr)
    }
    pub fn write(&self, addr: u32, v: u32) {
        self.node.borrow_mut().csr_write(addr, v)
    }
    /// Writes a command's parameters and opcode (`MBOX_DATA`, `MBOX_LEN`,
    /// `MBOX_CTRL`).
    pub fn mbox_start(&self, opcode: u16, params: &[u8]) {
        let mut n = self.node.borrow_mut();
        for (i, c) in params.chunks(4).enumerate() {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            n.csr_write(csr::MBOX_DATA + 4 * i as u32, u32::from_le_bytes(w));
        }
        n.csr_write(csr::MBOX_LEN, params.len() as u32);
        n.csr_write(csr::MBOX_CTRL, opcode as u32);
    }
    /// The finished command's (status, result), or `None` while busy.
    pub fn mbox_result(&self) -> Option<(u32, Vec<u8>)> {
        let mut n = self.node.borrow_mut();
        if n.csr_read(csr::MBOX_CTRL) & csr::MBOX_BUSY != 0 {
            return None;
        }
        let status = n.csr_read(csr::MBOX_STATUS);
        let len = (n.csr_read(csr::MBOX_LEN) as usize).min(csr::MBOX_DATA_SIZE as usize);
        let mut out = vec![0u8; len];
        for (i, c) in out.chunks_mut(4).enumerate() {
            let w = n.csr_read(csr::MBOX_DATA + 4 * i as u32).to_le_bytes();
            c.copy_from_slice(&w[..c.len()]);
        }
        Some((status, out))
    }
}
