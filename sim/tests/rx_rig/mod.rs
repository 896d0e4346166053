//! The RDMA Write receive rig shared by `rx_datapath` and `rx_jumbo`: a
//! Verilated `rnic_core` with a connection in RDMA mode, TPT regions, frames
//! from `rnic_wire`'s reference model fed into `mac_rx_*`, DMA writes served
//! into a sparse host memory, and checks of the whole memory.
#![allow(dead_code, unused_imports)] // shared by two test binaries, each using a subset

pub use std::collections::BTreeMap;
pub use std::ops::{Deref, DerefMut};
pub use std::time::Instant;

pub use rnic_sim::dma::{CplBeat, DmaConfig, DmaPins, DmaServer, RdReq, WrBeat};
pub use rnic_sim::host_mem::HostMemory;
pub use rnic_sim::mac_port::{MacRxPort, MacTxPort};
pub use rnic_sim::rng::Rng;
pub use rnic_wire::abi::context::{MPA_CRC_RX, MPA_MARKERS_RX};
pub use rnic_wire::abi::mailbox::QpState;
pub use rnic_wire::abi::tpt::{
    Stag, TptEntry, TptState, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE, TPT_ENTRY_SIZE,
};
pub use rnic_wire::model::net::data_frame;
pub use rnic_wire::model::{Endpoint, Message, MpaSettings, TxStream};
pub use rnic_wire::terminate::{
    DdpError, MpaError, RdmapError, RemoteProtectionError, TaggedBufferError, TerminateCause,
};
pub use verilator_sys::rnic_core::Model;

pub const PAGE: u64 = 4096;
/// `ConnMode::Rdma`.
pub const MODE_RDMA: u64 = 2;

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
rnic_sim::impl_mac_rx_pins!(Core);

/// The core has the DMA write port only: reads are tied off here.
impl DmaPins for Core {
    fn wr(&self) -> WrBeat {
        WrBeat {
            valid: self.get_dma_wr_valid() != 0,
            hdr: self.get_dma_wr_hdr() != 0,
            len: self.get_dma_wr_len() as u16,
            data: self.get_dma_wr_data(),
            keep: self.get_dma_wr_keep() as u8,
            last: self.get_dma_wr_last() != 0,
        }
    }
    fn set_wr_ready(&mut self, ready: bool) {
        self.set_dma_wr_ready(ready as u64)
    }
    fn rd_req(&self) -> RdReq {
        RdReq {
            valid: false,
            addr: 0,
            len: 0,
            tag: 0,
        }
    }
    fn set_rd_req_ready(&mut self, _ready: bool) {}
    fn set_cpl(&mut self, _beat: CplBeat) {}
    fn cpl_ready(&self) -> bool {
        false
    }
    fn eval(&mut self) {
        self.0.eval()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub cause: u16,
    pub conn: u32,
    pub qpn: u32,
}

/// A registered region: its TPT entry and its page list (bus addresses).
pub struct Region {
    pub stag: u32,
    pub entry: TptEntry,
    pub pages: Vec<u64>,
}

impl Region {
    /// Bus address of tagged offset `to`.
    pub fn addr(&self, to: u64) -> u64 {
        let (i, off) = self.entry.page_of(to).expect("inside the region");
        self.pages[(i - self.entry.pbl_base) as usize] + off
    }
}

pub struct Rig {
    pub core: Core,
    pub mac: MacRxPort,
    pub dma: DmaServer,
    pub mem: HostMemory,
    pub rng: Rng,
    pub tx: TxStream,
    pub peer: Endpoint,
    pub local: Endpoint,
    pub qpn: u32,
    pub pd: u32,
    pub next_pbl: u32,
    pub terms: Vec<Term>,
    pub placed: Vec<(u32, u64, u16)>,
    /// Cycle of the last DMA data beat taken.
    pub last_dma: u64,
    /// Cycle of the last MAC beat driven.
    pub last_mac: u64,
    /// Cycle of the first MAC beat driven since `mark`.
    pub first_mac: Option<u64>,
    /// Expected host image: page address → contents.
    pub expect: BTreeMap<u64, Vec<u8>>,
    /// Largest Ethernet frame (without FCS) the test may send: 1536 for
    /// `rx_fifo`'s old limit, the jumbo size for MTU 9000.
    pub max_frame: usize,
    /// Most beats `fpdu_buffer` held at once (core port `ulp_buf_beats`).
    pub max_buf_beats: u64,
}

pub const CONN: u64 = 3;
/// Idle clocks between frames: 10GbE line rate at 8 octets per clock
/// (FCS 4 + preamble 8 + inter-frame gap 12 = 24 octets = 3 beats).
pub const WIRE_GAP: u64 = 3;
/// Clocks without visible activity that end a run: more than a frame's
/// trip through `rx_fifo` and `mpa_rx` (store and forward, <= 192 beats
/// each) before it reaches the FPDU buffer.
pub const QUIET: u64 = 1000;

impl Rig {
    pub fn new(seed: u64, crc: bool, markers: bool, emss: u16) -> Rig {
        let mut core = Core(Model::new());
        core.reset(4);
        core.set_rx_ulp_en(1);
        core.set_ut_ready(1);
        let mut rng = Rng::new(seed);
        let seq_start = rng.next_u64() as u32;
        let peer = Endpoint {
            mac: [2, 0, 0, 0, 0, 2],
            ip: [10, 0, 0, 2],
            port: 40001,
        };
        let local = Endpoint {
            mac: [2, 0, 0, 0, 0, 1],
            ip: [10, 0, 0, 1],
            port: 7174,
        };
        let mut mpa = 0u64;
        if crc {
            mpa |= MPA_CRC_RX as u64;
        }
        if markers {
            mpa |= MPA_MARKERS_RX as u64;
        }
        core.set_ct_wr_valid(1);
        core.set_ct_wr_idx(CONN);
        core.set_ct_wr_used(1);
        core.set_ct_wr_local_ip(u32::from_be_bytes(local.ip) as u64);
        core.set_ct_wr_peer_ip(u32::from_be_bytes(peer.ip) as u64);
        core.set_ct_wr_local_port(local.port as u64);
        core.set_ct_wr_peer_port(peer.port as u64);
        core.set_ct_wr_mode(MODE_RDMA);
        core.set_ct_wr_mpa(mpa);
        core.set_ct_wr_rcv_nxt(seq_start as u64);
        core.set_ct_wr_rcv_wnd(1 << 30);
        core.set_ct_wr_snd_una(1000);
        core.set_ct_wr_snd_nxt(1000);
        core.set_mpa_wr_valid(1);
        core.set_mpa_wr_idx(CONN);
        core.set_mpa_wr_seq_start(seq_start as u64);
        let (qpn, pd) = (0x51, 0x0D0D);
        core.set_qp_wr_valid(1);
        core.set_qp_wr_idx(CONN);
        core.set_qp_wr_qpn(qpn as u64);
        core.set_qp_wr_state(QpState::Rts as u64);
        core.set_qp_wr_pd(pd as u64);
        core.tick();
        core.set_ct_wr_valid(0);
        core.set_mpa_wr_valid(0);
        core.set_qp_wr_valid(0);
        core.tick();
        let cfg = DmaConfig {
            log: false,
            ..DmaConfig::default()
        };
        Rig {
            core,
            mac: MacRxPort::new(
                std::env::var("RXDP_GAP")
                    .map(|v| v.parse().unwrap())
                    .unwrap_or(WIRE_GAP),
            ),
            dma: DmaServer::new(cfg),
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
            rng,
            tx: TxStream::new(
                MpaSettings {
                    crc,
                    markers,
                    seq_start,
                },
                emss,
            ),
            peer,
            local,
            qpn,
            pd,
            next_pbl: 0,
            terms: Vec::new(),
            placed: Vec::new(),
            last_dma: 0,
            last_mac: 0,
            first_mac: None,
            expect: BTreeMap::new(),
            max_frame: 1536,
            max_buf_beats: 0,
        }
    }

    pub fn write_tpt(&mut self, index: u32, e: &TptEntry) {
        let mut b = [0u8; TPT_ENTRY_SIZE];
        e.emit(&mut b).unwrap();
        let mut w = [0u32; 8];
        for (i, c) in b.chunks(4).enumerate() {
            w[i] = u32::from_le_bytes(c.try_into().unwrap());
        }
        self.core.set_tpt_wr_en(1);
        self.core.set_tpt_wr_index(index as u64);
        self.core.set_tpt_wr_data(&w);
        self.core.tick();
        self.core.set_tpt_wr_en(0);
    }

    /// Registers `npages` non-contiguous DMA-able pages (shuffled, with
    /// non-DMA gaps between them) as a region starting at `va`.
    pub fn region(
        &mut self,
        index: u32,
        key: u8,
        pd: u32,
        access: u8,
        va: u64,
        len: u64,
    ) -> Region {
        let first = va & !(PAGE - 1);
        let npages = (va + len - first).div_ceil(PAGE) as usize;
        let mut pages = Vec::new();
        for _ in 0..npages {
            let gap = (1 + self.rng.below(3)) * PAGE;
            self.mem.alloc(gap, PAGE).unwrap();
            pages.push(self.mem.alloc_dma(PAGE, PAGE).unwrap());
        }
        for i in (1..pages.len()).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            pages.swap(i, j);
        }
        let entry = TptEntry {
            state: TptState::Valid,
            key,
            access,
            page_shift: 12,
            pd,
            va,
            length: len,
            pbl_base: self.next_pbl,
            npages: npages as u32,
        };
        for (i, &p) in pages.iter().enumerate() {
            self.core.set_pbl_wr_en(1);
            self.core
                .set_pbl_wr_index((self.next_pbl + i as u32) as u64);
            self.core.set_pbl_wr_data(p);
            self.core.tick();
        }
        self.core.set_pbl_wr_en(0);
        self.next_pbl += npages as u32;
        self.write_tpt(index, &entry);
        for &p in &pages {
            self.expect.insert(p, vec![0; PAGE as usize]);
        }
        Region {
            stag: Stag::new(index, key).unwrap().0,
            entry,
            pages,
        }
    }

    /// Frames of an RDMA Write (one FPDU per TCP segment).
    pub fn write_frames(&mut self, stag: u32, to: u64, data: &[u8]) -> Vec<Vec<u8>> {
        let segs = self.tx.send(&Message::Write { stag, to, data }).unwrap();
        segs.iter()
            .map(|s| data_frame(&self.peer, &self.local, s.seq, 1000, &s.payload))
            .collect()
    }

    pub fn send(&mut self, frames: Vec<Vec<u8>>) {
        for f in frames {
            assert!(f.len() <= self.max_frame, "frame fits the link MTU");
            self.mac.push(f, false);
        }
    }

    /// Sends an RDMA Write that must be placed and records the octets in the
    /// expected image.
    pub fn write_ok(&mut self, r: &Region, to: u64, data: &[u8]) {
        let frames = self.write_frames(r.stag, to, data);
        self.send(frames);
        for (i, &b) in data.iter().enumerate() {
            let a = r.addr(to + i as u64);
            self.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
        }
    }

    /// Runs until everything is sent, placed, landed, and `quiet` clocks
    /// passed without activity. Pops every Terminate and placed record.
    pub fn run(&mut self, limit: u64) {
        let mut quiet = 0;
        let start = self.core.cycle();
        while quiet < QUIET {
            assert!(self.core.cycle() - start < limit, "no progress: hung");
            let sending = self.mac.pending() > 0;
            self.mac.drive(&mut self.core);
            if sending {
                self.last_mac = self.core.cycle();
                self.first_mac.get_or_insert(self.core.cycle());
            }
            self.dma.drive(&mut self.core, &mut self.mem);
            self.core.eval();
            let (tv, pv) = self.pop_records();
            self.core.eval();
            let w = self.core.wr();
            if w.valid && self.core.get_dma_wr_ready() != 0 && !w.hdr {
                self.last_dma = self.core.cycle();
            }
            self.max_buf_beats = self.max_buf_beats.max(self.core.get_ulp_buf_beats());
            let busy = sending
                || w.valid
                || tv
                || pv
                || !self.dma.idle()
                || self.core.get_ulp_buf_recs() != 0
                // A jumbo FPDU takes ~1120 clocks to enter the FPDU buffer
                // before its record exists: longer than QUIET.
                || self.core.get_ulp_buf_beats() != 0;
            self.dma.sample(&self.core, &mut self.mem);
            self.core.tick();
            quiet = if busy { 0 } else { quiet + 1 };
        }
        assert!(self.dma.faults().is_empty(), "{:?}", self.dma.faults());
        if std::env::var("RXDP_DEBUG").is_ok() {
            self.core.flush_vcd();
        }
        let c = &self.core;
        if std::env::var("RXDP_DEBUG").is_ok() {
            eprintln!(
                "ok {} fast {} exc {} pass {} span {} err {} tagged {} term {} drop {} buf {}/{} placed {} terms {}",
                c.get_cnt_rx_ok(),
                c.get_cnt_rx_fast(),
                c.get_cnt_rx_exc(),
                c.get_cnt_mpa_pass(),
                c.get_cnt_mpa_span(),
                c.get_cnt_mpa_err(),
                c.get_cnt_ddp_tagged(),
                c.get_cnt_ddp_term(),
                c.get_cnt_ddp_drop_state(),
                c.get_ulp_buf_beats(),
                c.get_ulp_buf_recs(),
                self.placed.len(),
                self.terms.len()
            );
        }
        assert_eq!(self.core.get_cnt_rx_overflow(), 0);
        assert_eq!(self.core.get_cnt_ddp_len_err(), 0);
        assert_eq!(self.core.get_ulp_buf_beats(), 0);
    }

    /// Pops the Terminate request and the placed record on offer this
    /// clock (after an `eval`) into `terms` and `placed`; returns whether
    /// each was there.
    pub fn pop_records(&mut self) -> (bool, bool) {
        let tv = self.core.get_term_valid() != 0;
        let pv = self.core.get_placed_valid() != 0;
        self.core.set_term_pop(tv as u64);
        self.core.set_placed_pop(pv as u64);
        if tv {
            self.terms.push(Term {
                cause: self.core.get_term_cause() as u16,
                conn: self.core.get_term_conn() as u32,
                qpn: self.core.get_term_qpn() as u32,
            });
        }
        if pv {
            self.placed.push((
                self.core.get_placed_stag() as u32,
                self.core.get_placed_to(),
                self.core.get_placed_len() as u16,
            ));
        }
        (tv, pv)
    }

    /// Host memory equals the expected image in every registered page, and
    /// nothing outside them was written.
    pub fn check_memory(&self) {
        for (&p, want) in &self.expect {
            let mut got = vec![0u8; PAGE as usize];
            self.mem.read(p, &mut got).unwrap();
            if &got != want {
                let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap();
                panic!(
                    "page {p:#x}: first difference at +{i:#x}: got {:#04x}, want {:#04x}",
                    got[i], want[i]
                );
            }
        }
        let ranges: Vec<(u64, u64)> = self.expect.keys().map(|&p| (p, PAGE)).collect();
        let stray = self.mem.nonzero_outside(&ranges);
        assert!(stray.is_empty(), "written outside the regions: {stray:?}");
    }

    pub fn term(&self, cause: TerminateCause) -> Term {
        Term {
            cause: cause.to_bits(),
            conn: CONN as u32,
            qpn: self.qpn,
        }
    }
}

/// The placed-segment records tile each message: in order, TO of each
/// record = end of the previous one, from the message's TO to its end.
pub fn check_placed(placed: &[(u32, u64, u16)], stag: u32, msgs: &[(u64, usize)]) {
    let mut it = placed.iter();
    for &(to, n) in msgs {
        let mut at = to;
        while at < to + n as u64 || (n == 0 && at == to) {
            let &(s, t, l) = it.next().expect("a record per segment");
            assert_eq!((s, t), (stag, at), "record of message at {to:#x}");
            assert!(l > 0 || n == 0);
            at += l as u64;
            if n == 0 {
                break;
            }
        }
        assert_eq!(at, to + n as u64);
    }
    assert!(it.next().is_none(), "no extra records");
}
