//! RX datapath of `rnic_core` in Verilator: RDMA Write frames in on
//! `mac_rx_*`, octets out by DMA into host memory through the co-sim's DMA
//! server.
//!
//! The reference is independent of the RTL: messages are framed by
//! `rnic_wire::model::TxStream` (DDP/RDMAP segmentation, MPA markers and
//! CRC) and `rnic_wire::model::net::data_frame` (Ethernet/IPv4/TCP); the
//! expected host image is built with `TptEntry::page_of` (the ABI's page
//! translation); Terminate causes come from `rnic_wire::terminate`.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::time::Instant;

use rnic_sim::dma::{CplBeat, DmaConfig, DmaPins, DmaServer, RdReq, WrBeat};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::MacRxPort;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::{MPA_CRC_RX, MPA_MARKERS_RX};
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::tpt::{
    Stag, TptEntry, TptState, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE, TPT_ENTRY_SIZE,
};
use rnic_wire::model::net::data_frame;
use rnic_wire::model::{Endpoint, Message, MpaSettings, TxStream};
use rnic_wire::terminate::{
    DdpError, MpaError, RdmapError, RemoteProtectionError, TaggedBufferError, TerminateCause,
};
use verilator_sys::rnic_core::Model;

const PAGE: u64 = 4096;
/// `ConnMode::Rdma`.
const MODE_RDMA: u64 = 2;

struct Core(Model);
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
struct Term {
    cause: u16,
    conn: u32,
    qpn: u32,
}

/// A registered region: its TPT entry and its page list (bus addresses).
struct Region {
    stag: u32,
    entry: TptEntry,
    pages: Vec<u64>,
}

impl Region {
    /// Bus address of tagged offset `to`.
    fn addr(&self, to: u64) -> u64 {
        let (i, off) = self.entry.page_of(to).expect("inside the region");
        self.pages[(i - self.entry.pbl_base) as usize] + off
    }
}

struct Rig {
    core: Core,
    mac: MacRxPort,
    dma: DmaServer,
    mem: HostMemory,
    rng: Rng,
    tx: TxStream,
    peer: Endpoint,
    local: Endpoint,
    qpn: u32,
    pd: u32,
    next_pbl: u32,
    terms: Vec<Term>,
    placed: Vec<(u32, u64, u16)>,
    /// Cycle of the last DMA data beat taken.
    last_dma: u64,
    /// Cycle of the last MAC beat driven.
    last_mac: u64,
    /// Cycle of the first MAC beat driven since `mark`.
    first_mac: Option<u64>,
    /// Expected host image: page address → contents.
    expect: BTreeMap<u64, Vec<u8>>,
}

const CONN: u64 = 3;
/// Idle clocks between frames: 10GbE line rate at 8 octets per clock
/// (FCS 4 + preamble 8 + inter-frame gap 12 = 24 octets = 3 beats).
const WIRE_GAP: u64 = 3;
/// Clocks without visible activity that end a run: more than a frame's
/// trip through `rx_fifo` and `mpa_rx` (store and forward, <= 192 beats
/// each) before it reaches the FPDU buffer.
const QUIET: u64 = 1000;

impl Rig {
    fn new(seed: u64, crc: bool, markers: bool, emss: u16) -> Rig {
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
        }
    }

    fn write_tpt(&mut self, index: u32, e: &TptEntry) {
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
    fn region(&mut self, index: u32, key: u8, pd: u32, access: u8, va: u64, len: u64) -> Region {
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
    fn write_frames(&mut self, stag: u32, to: u64, data: &[u8]) -> Vec<Vec<u8>> {
        let segs = self.tx.send(&Message::Write { stag, to, data }).unwrap();
        segs.iter()
            .map(|s| data_frame(&self.peer, &self.local, s.seq, 1000, &s.payload))
            .collect()
    }

    fn send(&mut self, frames: Vec<Vec<u8>>) {
        for f in frames {
            assert!(f.len() <= 1536, "frame fits rx_fifo");
            self.mac.push(f, false);
        }
    }

    /// Sends an RDMA Write that must be placed and records the octets in the
    /// expected image.
    fn write_ok(&mut self, r: &Region, to: u64, data: &[u8]) {
        let frames = self.write_frames(r.stag, to, data);
        self.send(frames);
        for (i, &b) in data.iter().enumerate() {
            let a = r.addr(to + i as u64);
            self.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
        }
    }

    /// Runs until everything is sent, placed, landed, and `quiet` clocks
    /// passed without activity. Pops every Terminate and placed record.
    fn run(&mut self, limit: u64) {
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
            self.core.eval();
            let w = self.core.wr();
            if w.valid && self.core.get_dma_wr_ready() != 0 && !w.hdr {
                self.last_dma = self.core.cycle();
            }
            let busy = sending
                || w.valid
                || tv
                || pv
                || !self.dma.idle()
                || self.core.get_ulp_buf_recs() != 0;
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

    /// Host memory equals the expected image in every registered page, and
    /// nothing outside them was written.
    fn check_memory(&self) {
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

    fn term(&self, cause: TerminateCause) -> Term {
        Term {
            cause: cause.to_bits(),
            conn: CONN as u32,
            qpn: self.qpn,
        }
    }
}

/// Sizes 1 B … 64 KiB at random offsets into a multi-page region with a
/// shuffled, non-contiguous page list, for CRC and markers on and off.
#[test]
fn writes_land_byte_exact() {
    for (k, (crc, markers)) in [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .enumerate()
    {
        let mut rig = Rig::new(100 + k as u64, crc, markers, 1460);
        let va = 0x7f00_0000_0000 + rig.rng.below(PAGE);
        let len = 80 * 1024;
        let pd = rig.pd;
        let r = rig.region(5, 0x3C, pd, ACCESS_REMOTE_WRITE, va, len);
        let mut sizes = vec![1, 2, 7, 8, 9, 15, 16, 17, 100, 1000, 1425, 1426, 1427, 4096];
        sizes.extend([5000, 16384, 65536]);
        for _ in 0..6 {
            sizes.push(1 + rig.rng.below(20000) as usize);
        }
        let mut msgs = Vec::new();
        for &n in &sizes {
            let to = va + rig.rng.below(len - n as u64 + 1);
            let data = rig.rng.bytes(n);
            rig.write_ok(&r, to, &data);
            msgs.push((to, n));
            // run in batches so the MAC queue does not outrun the model
            rig.run(2_000_000);
        }
        rig.check_memory();
        assert!(rig.terms.is_empty(), "{:?}", rig.terms);
        check_placed(&rig.placed, r.stag, &msgs);
        assert_eq!(rig.core.get_cnt_mpa_span(), 0);
        assert_eq!(rig.core.get_cnt_mpa_err(), 0);
        assert_eq!(rig.core.get_cnt_mpa_pass(), rig.placed.len() as u64);
    }
}

/// The placed-segment records tile each message: in order, TO of each
/// record = end of the previous one, from the message's TO to its end.
fn check_placed(placed: &[(u32, u64, u16)], stag: u32, msgs: &[(u64, usize)]) {
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

/// One 1 MiB Write (CRC and markers on) into a 257-page region.
#[test]
fn one_mib_write() {
    let mut rig = Rig::new(77, true, true, 1460);
    let pd = rig.pd;
    let n = 1 << 20;
    let va = 0x5555_0000_0000 + 0x9ab;
    let r = rig.region(3, 0x81, pd, ACCESS_REMOTE_WRITE, va, n as u64);
    let data = rig.rng.bytes(n);
    rig.write_ok(&r, va, &data);
    rig.run(4_000_000);
    rig.check_memory();
    assert!(rig.terms.is_empty());
    check_placed(&rig.placed, r.stag, &[(va, n)]);
}

/// Every TPT violation: the right Terminate cause (RFC 5040 §7 / RFC 5041
/// §7.2 via `rnic_wire::terminate`) and zero octets written anywhere; a
/// good Write afterwards is still placed.
#[test]
fn tpt_violations_terminate_and_write_nothing() {
    let mut rig = Rig::new(7, true, false, 1460);
    let pd = rig.pd;
    let va = 0x1000_0000 + 0x123;
    let len = 5 * PAGE;
    let good = rig.region(9, 0x44, pd, ACCESS_REMOTE_WRITE, va, len);
    let ro = rig.region(10, 0x45, pd, ACCESS_LOCAL_WRITE, va, len);
    let other_pd = rig.region(11, 0x46, pd ^ 1, ACCESS_REMOTE_WRITE, va, len);
    let data = rig.rng.bytes(700);
    let cases: Vec<(u32, u64, TerminateCause)> = vec![
        // no entry at index 200
        (
            Stag::new(200, 0x44).unwrap().0,
            va,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag)),
        ),
        // wrong key
        (
            Stag::new(9, 0x99).unwrap().0,
            va,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag)),
        ),
        // region of another protection domain
        (
            other_pd.stag,
            va,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::StagNotAssociated)),
        ),
        // no remote write right
        (
            ro.stag,
            va,
            TerminateCause::Rdmap(RdmapError::RemoteProtection(
                RemoteProtectionError::AccessRightsViolation,
            )),
        ),
        // before the region, past its end, straddling its end
        (
            good.stag,
            va - 1,
            TerminateCause::Ddp(DdpError::TaggedBuffer(
                TaggedBufferError::BaseOrBoundsViolation,
            )),
        ),
        (
            good.stag,
            va + len,
            TerminateCause::Ddp(DdpError::TaggedBuffer(
                TaggedBufferError::BaseOrBoundsViolation,
            )),
        ),
        (
            good.stag,
            va + len - 699,
            TerminateCause::Ddp(DdpError::TaggedBuffer(
                TaggedBufferError::BaseOrBoundsViolation,
            )),
        ),
    ];
    for (stag, to, cause) in &cases {
        let f = rig.write_frames(*stag, *to, &data);
        assert_eq!(f.len(), 1);
        rig.send(f);
        rig.run(200_000);
        assert_eq!(rig.terms.last(), Some(&rig.term(*cause)), "{cause:?}");
        assert!(rig.placed.is_empty());
    }
    assert_eq!(rig.terms.len(), cases.len());
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );
    // the stream goes on: a good write is placed exactly
    let to = va + len - 700;
    rig.write_ok(&good, to, &data);
    rig.run(200_000);
    rig.check_memory();
    assert_eq!(rig.placed.len(), 1);
    assert_eq!(rig.core.get_cnt_ddp_term(), cases.len() as u64);
}

/// A corrupted FPDU: the MPA CRC Terminate (RFC 5044 §8: layer LLP, MPA
/// error, code 2) and no octet of it placed; FPDUs of the same Write before
/// it are placed, nothing after it (the connection is dead).
#[test]
fn corrupted_crc_terminates_and_places_nothing() {
    // a single-segment Write with one bit flipped: nothing at all is written
    let mut rig = Rig::new(21, true, false, 1460);
    let pd = rig.pd;
    let va = 0x4000_0000;
    let r = rig.region(1, 1, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(1000);
    let segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to: va + 10,
            data: &data,
        })
        .unwrap();
    assert_eq!(segs.len(), 1);
    let mut p = segs[0].payload.clone();
    p[500] ^= 0x10;
    let f = data_frame(&rig.peer, &rig.local, segs[0].seq, 1000, &p);
    rig.send(vec![f]);
    rig.run(200_000);
    assert_eq!(
        rig.terms,
        vec![rig.term(TerminateCause::Mpa(MpaError::CrcError))]
    );
    assert!(rig.placed.is_empty());
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );
    assert_eq!(rig.core.get_cnt_mpa_err(), 1);

    // a 3-segment Write with the second FPDU corrupted
    let mut rig = Rig::new(22, true, true, 1460);
    let r = rig.region(1, 1, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(4000);
    let to = va + 77;
    let segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to,
            data: &data,
        })
        .unwrap();
    assert_eq!(segs.len(), 3);
    let mut frames = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let mut p = s.payload.clone();
        if i == 1 {
            p[100] ^= 1;
        }
        frames.push(data_frame(&rig.peer, &rig.local, s.seq, 1000, &p));
    }
    rig.send(frames);
    rig.run(200_000);
    assert_eq!(
        rig.terms,
        vec![rig.term(TerminateCause::Mpa(MpaError::CrcError))]
    );
    assert_eq!(rig.placed.len(), 1, "only the first FPDU is placed");
    let n = rig.placed[0].2 as usize;
    for (i, &b) in data[..n].iter().enumerate() {
        let a = r.addr(to + i as u64);
        rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
    }
    rig.check_memory();
}

/// Throughput and latency of 64 KiB Writes at MTU 1500 (one 1460-octet
/// FPDU per 1514-octet frame, frames back to back), printed for
/// docs/rtl.md: octets placed per clock, clocks from the last MAC beat to
/// the last DMA data beat, and Verilator clocks per second.
#[test]
fn throughput_64k_mtu1500() {
    let mut rig = Rig::new(5, true, false, 1460);
    let pd = rig.pd;
    let va = 0x10_0000;
    let n = 64 * 1024;
    let r = rig.region(2, 2, pd, ACCESS_REMOTE_WRITE, va, 4 * n as u64);
    let mut total_clk = 0;
    let mut lat = Vec::new();
    let t0 = Instant::now();
    let c0 = rig.core.cycle();
    let reps = 4;
    for i in 0..reps {
        let data = rig.rng.bytes(n);
        rig.first_mac = None;
        rig.write_ok(&r, va + (i * n) as u64, &data);
        rig.run(2_000_000);
        let first = rig.first_mac.unwrap();
        total_clk += rig.last_dma - first + 1;
        lat.push(rig.last_dma - rig.last_mac);
    }
    let secs = t0.elapsed().as_secs_f64();
    let cyc = rig.core.cycle() - c0;
    rig.check_memory();
    let per_clk = (reps * n) as f64 / total_clk as f64;
    let frames = rig.mac.frames_sent;
    println!(
        "64 KiB Write, MTU 1500: {per_clk:.2} octets/clock placed ({frames} frames), \
         last MAC beat -> last DMA beat {lat:?} clocks, Verilator {:.0} clocks/s",
        cyc as f64 / secs
    );
    // the model alone (no harness), idle inputs, clock loop in C++
    let t1 = Instant::now();
    rig.core.ticks(200_000);
    println!(
        "model alone, idle: {:.0} clocks/s",
        200_000.0 / t1.elapsed().as_secs_f64()
    );
    assert!(per_clk > 6.0, "{per_clk}");
}

/// Debugging aid: one Write of `RXDP_N` octets (default 700) with a VCD of
/// the whole core in /tmp/rxdp.vcd (`RXDP_DEBUG=1` also prints counters).
#[test]
#[ignore]
fn debug_trace() {
    let mut rig = Rig::new(7, true, false, 1460);
    rig.core
        .trace_vcd(std::path::Path::new("/tmp/rxdp.vcd"))
        .unwrap();
    let pd = rig.pd;
    let va = 0x1000_0000 + 0x123;
    let good = rig.region(9, 0x44, pd, ACCESS_REMOTE_WRITE, va, 5 * PAGE);
    let n: usize = std::env::var("RXDP_N")
        .map(|v| v.parse().unwrap())
        .unwrap_or(700);
    let data = rig.rng.bytes(n);
    rig.write_ok(&good, va, &data);
    rig.run(20_000);
}

/// A marker whose FPDUPTR is wrong (CRC off, so only the marker check can
/// see it): MPA Terminate code 3 (RFC 5044 §8, "Marker and ULPDU Length
/// field disagree") and nothing placed. Then a QP not in RTS: its segments
/// are dropped with no Terminate and no write (`cnt_ddp_drop_state`).
#[test]
fn marker_error_and_qp_state() {
    let mut rig = Rig::new(31, false, true, 1460);
    let pd = rig.pd;
    let va = 0x6000_0000;
    let r = rig.region(4, 4, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(1200);
    let segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to: va,
            data: &data,
        })
        .unwrap();
    assert_eq!(segs.len(), 1);
    let s = &segs[0];
    // first marker in the segment: at stream offset ≡ 0 (mod 512) from SeqStart
    let seq_start = rig.tx.settings().seq_start;
    let m = (512 - s.seq.wrapping_sub(seq_start) % 512) % 512;
    assert!(
        (m as usize) + 4 <= s.payload.len(),
        "segment holds a marker"
    );
    let mut p = s.payload.clone();
    p[m as usize + 3] ^= 0x04; // FPDUPTR low octet (RFC 5044 §4.3)
    let f = data_frame(&rig.peer, &rig.local, s.seq, 1000, &p);
    rig.send(vec![f]);
    rig.run(200_000);
    assert_eq!(
        rig.terms,
        vec![rig.term(TerminateCause::Mpa(MpaError::MarkerMismatch))]
    );
    assert!(rig.placed.is_empty());
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );

    // a fresh connection whose QP is in Idle
    let mut rig = Rig::new(32, true, false, 1460);
    rig.core.set_qp_wr_valid(1);
    rig.core.set_qp_wr_idx(CONN);
    rig.core.set_qp_wr_qpn(rig.qpn as u64);
    rig.core.set_qp_wr_state(QpState::Idle as u64);
    rig.core.set_qp_wr_pd(pd as u64);
    rig.core.tick();
    rig.core.set_qp_wr_valid(0);
    let r = rig.region(4, 4, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(3000);
    let frames = rig.write_frames(r.stag, va, &data);
    rig.send(frames);
    rig.run(200_000);
    assert!(rig.terms.is_empty());
    assert!(rig.placed.is_empty());
    assert_eq!(rig.core.get_cnt_ddp_drop_state(), 3);
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );
}
