//! Send-side SGE checks and translation inside `rnic_core` (Verilator,
//! docs/rtl.md "Send-side SGE checks and translation"): the firmware
//! programs a connection in RDMA mode, a QP with its send CQ and TPT
//! entries with page lists through `fw_*` (`TableId::Tpt`/`Pbl`); the host
//! writes send WQEs (`SendWqe::emit`) whose SGEs name a region of
//! scattered, shuffled, non-contiguous 4 KiB pages at an unaligned virtual
//! address, and rings the doorbell.
//!
//! * `writes_and_sends_from_scattered_pages`: RDMA Writes and Sends (one
//!   crossing 3 pages, one from the identity region) — every frame parses
//!   with smoltcp (`parse_frame`), the peer's model (`rnic_wire::model::
//!   Receiver`) places the Writes and completes the Sends with exactly the
//!   region's octets (`TptEntry::page_of` + page list), the CQEs say
//!   Success, and every DMA read lies in the SQ ring or a registered page.
//! * `refused_sges_complete_with_protection_error`: one core per kind (bad
//!   index, bad key, wrong PD, below / beyond the region, length wrap,
//!   invalidated entry, a Read's sink without LOCAL_WRITE), each refused by
//!   `TptEntry::check` too: after a good Write, the bad WQE's CQE is
//!   `LocalProtectionError`; no frame and no DMA read for it (its SGE
//!   points at a DMA-able "secret" buffer, never read), and the Send posted
//!   after it is neither sent nor completed (the QP's send side is off).

mod core_rig;

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::hal::Hal;
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::MacTxPort;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::TableId;
use rnic_wire::abi::cqe::{Cqe, WcOpcode, WcStatus, CQE_SIZE};
use rnic_wire::abi::csr::qp_doorbell_page;
use rnic_wire::abi::doorbell::QP_SQ_PRODUCER;
use rnic_wire::abi::tpt::{
    Stag, TptEntry, TptState, ACCESS_ALL, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, TPT_ENTRY_SIZE,
};
use rnic_wire::abi::wqe::{
    SendOpcode, SendWqe, Sge, SgeList, MAX_SGE_PER_WQE, WQE_FLAG_SIGNALED, WQE_SIZE,
};
use rnic_wire::model::{parse_frame, Endpoint, MpaSettings, Receiver, RxConfig, Tpt};

const CONN: u32 = 4;
const QPN: u32 = 9;
const CQN: u32 = 3;
const CQ_LOG2: u32 = 4;
const SQ_LOG2: u32 = 4;
const PD: u32 = 1;
const ISS: u32 = 1000;
/// The peer's sink region (RDMA Write target) in the receiver model.
const SINK_STAG: u32 = 0x4242;
const SINK_VA: u64 = 0x1000;
const SINK_LEN: usize = 32 * 1024;
const PAGE: u64 = 4096;

struct Region {
    lkey: u32,
    entry: TptEntry,
    pages: Vec<u64>,
}

impl Region {
    fn bus(&self, va: u64) -> u64 {
        let (i, off) = self.entry.page_of(va).unwrap();
        self.pages[(i - self.entry.pbl_base) as usize] + off
    }
}

struct Rig {
    node: Rc<RefCell<FwNode>>,
    hal: CoSimHal,
    host: HostCsr,
    dma: DmaServer,
    mem: HostMemory,
    mac: MacTxPort,
    rng: Rng,
    sq: u64,
    sq_prod: u32,
    cq: u64,
    frames: Vec<Vec<u8>>,
    /// Every DMA read request: (bus address, octets).
    reads: Vec<(u64, u64)>,
    next_pbl: u32,
}

impl Rig {
    fn new(seed: u64) -> Rig {
        let node = FwNode::shared();
        {
            let mut n = node.borrow_mut();
            n.serve_host_side = false;
            n.core.set_fw_raw_to_mac(1);
        }
        let mut r = Rig {
            hal: CoSimHal::new(node.clone()),
            host: HostCsr { node: node.clone() },
            node,
            dma: DmaServer::new(DmaConfig {
                read_jitter: 20,
                seed,
                ..DmaConfig::default()
            }),
            mem: HostMemory::new(core_rig::IDENT_VA, core_rig::IDENT_VA + core_rig::IDENT_LEN),
            mac: MacTxPort::new(),
            rng: Rng::new(seed),
            sq: 0,
            sq_prod: 0,
            cq: 0,
            frames: vec![],
            reads: vec![],
            next_pbl: 64,
        };
        r.sq = r.mem.alloc_dma((WQE_SIZE as u64) << SQ_LOG2, 4096).unwrap();
        r.cq = r.mem.alloc_dma((CQE_SIZE << CQ_LOG2) as u64, 4096).unwrap();
        let q = core_rig::FwQp {
            cqn: CQN,
            cq_ring: r.cq,
            cq_log2: CQ_LOG2,
            cq_armed: 0,
            qpn: QPN,
            sq_ring: r.sq,
            sq_log2: SQ_LOG2,
            pd: PD,
            ord: 1,
            conn: CONN,
        };
        let local = Endpoint {
            mac: [2, 0, 0, 0, 0, 1],
            ip: [10, 0, 0, 1],
            port: 7000,
        };
        let peer = Endpoint {
            mac: [2, 0, 0, 0, 0, 2],
            ip: [10, 0, 0, 2],
            port: 40000,
        };
        let c = core_rig::rdma_conn(&local, &peer, ISS, 5000, 0xFFFF, QPN);
        core_rig::setup_fw_qp(&mut r.hal, &q, &c);
        r
    }

    /// A region of `npages` scattered 4 KiB pages (shuffled, a non-DMA gap
    /// after each) at `va`, filled with random octets, written through the
    /// firmware port.
    #[allow(clippy::too_many_arguments)]
    fn region(
        &mut self,
        index: u32,
        key: u8,
        pd: u32,
        access: u8,
        va: u64,
        npages: u32,
        state: TptState,
    ) -> Region {
        let mut pages = vec![];
        for _ in 0..npages {
            let p = self.mem.alloc_dma(PAGE, PAGE).unwrap();
            let d = self.rng.bytes(PAGE as usize);
            self.mem.write(p, &d).unwrap();
            self.mem
                .alloc(PAGE * (1 + self.rng.below(3)), PAGE)
                .unwrap();
            pages.push(p);
        }
        for i in (1..pages.len()).rev() {
            pages.swap(i, self.rng.below(i as u64 + 1) as usize);
        }
        let first = va & !(PAGE - 1);
        let entry = TptEntry {
            state,
            key,
            access,
            page_shift: 12,
            pd,
            va,
            length: npages as u64 * PAGE - (va - first) - 100,
            pbl_base: self.next_pbl,
            npages,
        };
        self.next_pbl += npages + 5;
        for (i, p) in pages.iter().enumerate() {
            self.hal
                .write_table(TableId::Pbl, entry.pbl_base + i as u32, &p.to_le_bytes())
                .expect("page-list write");
        }
        let mut b = [0u8; TPT_ENTRY_SIZE];
        entry.emit(&mut b).unwrap();
        self.hal
            .write_table(TableId::Tpt, index, &b)
            .expect("TPT write");
        Region {
            lkey: Stag::new(index, key).unwrap().0,
            entry,
            pages,
        }
    }

    fn rd(&self, a: u64, n: usize) -> Vec<u8> {
        let mut b = vec![0; n];
        self.mem.read(a, &mut b).unwrap();
        b
    }

    /// Writes a one-SGE send WQE (no doorbell); returns its wr_id.
    fn post(&mut self, op: SendOpcode, sge: Sge, signaled: bool, roff: u64) -> u64 {
        self.post_sges(op, &[sge], signaled, roff)
    }

    /// Writes a send WQE gathering `sges` (no doorbell); returns its wr_id.
    fn post_sges(&mut self, op: SendOpcode, sges: &[Sge], signaled: bool, roff: u64) -> u64 {
        let wr_id = self.rng.next_u64();
        let wqe = SendWqe {
            wr_id,
            opcode: op,
            flags: if signaled { WQE_FLAG_SIGNALED } else { 0 },
            imm_or_inv: 0,
            remote_offset: roff,
            remote_stag: SINK_STAG,
            sges: SgeList::new(sges).unwrap(),
            inline: None,
        };
        let mut b = [0u8; WQE_SIZE];
        wqe.emit(&mut b).unwrap();
        let slot = (self.sq_prod & ((1 << SQ_LOG2) - 1)) as u64;
        self.mem
            .write(self.sq + slot * WQE_SIZE as u64, &b)
            .unwrap();
        self.sq_prod = self.sq_prod.wrapping_add(1);
        wr_id
    }

    fn doorbell(&mut self) {
        {
            let mut n = self.node.borrow_mut();
            let m = &mut n.core.0;
            m.set_mac_tx_ready(0);
            m.set_dma_rd_req_ready(0);
            m.set_dma_rd_cpl_valid(0);
            m.set_dma_wr_ready(0);
        }
        let p = self.sq_prod;
        self.host.write(qp_doorbell_page(QPN) + QP_SQ_PRODUCER, p);
    }

    /// Clocks until quiet; returns the clock of the first MAC beat.
    fn run(&mut self, limit: u64) -> Option<u64> {
        let mut quiet = 0;
        let mut c = 0;
        let mut first = None;
        while quiet < 600 {
            c += 1;
            assert!(c < limit, "hung");
            let mut n = self.node.borrow_mut();
            let p = &mut n.core.0;
            self.mac.drive_ready(p, true);
            self.dma.drive(p, &mut self.mem);
            p.eval();
            let busy = !self.dma.idle() || p.get_mac_tx_valid() != 0 || p.get_dma_wr_valid() != 0;
            if p.get_mac_tx_valid() != 0 && first.is_none() {
                first = Some(p.cycle());
            }
            if p.get_dma_rd_req_valid() != 0 && p.get_dma_rd_req_ready() != 0 {
                self.reads
                    .push((p.get_dma_rd_req_addr(), p.get_dma_rd_req_len()));
            }
            let f = self.mac.sample(&*p);
            self.dma.sample(&*p, &mut self.mem);
            p.tick();
            drop(n);
            if let Some(f) = f {
                self.frames.push(f);
            }
            quiet = if busy { 0 } else { quiet + 1 };
        }
        assert!(
            self.dma.faults().is_empty(),
            "DMA faults {:?}",
            self.dma.faults()
        );
        first
    }

    fn cqe_raw(&self, idx: u32) -> Vec<u8> {
        self.rd(self.cq + (idx as u64) * CQE_SIZE as u64, CQE_SIZE)
    }

    /// Feeds every frame to the peer's receiver model (in order).
    fn receiver(&self, sends: &[(u64, usize)]) -> Receiver {
        let mut tpt = Tpt::new();
        tpt.register(SINK_STAG, 7, ACCESS_ALL, SINK_VA, vec![0; SINK_LEN]);
        let mut rx = Receiver::new(
            RxConfig {
                mpa: MpaSettings {
                    crc: true,
                    markers: false,
                    seq_start: ISS,
                },
                pd: 7,
                ird: 0,
            },
            tpt,
        );
        for &(w, n) in sends {
            rx.post_recv(w, n);
        }
        for f in &self.frames {
            let v = parse_frame(f).expect("frame parses with smoltcp");
            if v.payload.is_empty() {
                continue;
            }
            rx.receive(v.seq, v.payload)
                .expect("the peer's model takes it");
        }
        rx
    }

    /// Every DMA read lies in the SQ ring or one of `pages`.
    fn reads_inside(&self, pages: &[u64]) {
        let ring = (self.sq, (WQE_SIZE as u64) << SQ_LOG2);
        for &(a, n) in &self.reads {
            let ok = (a >= ring.0 && a + n <= ring.0 + ring.1)
                || pages.iter().any(|&p| a >= p && a + n <= p + PAGE);
            assert!(ok, "DMA read {a:#x}+{n} outside registered memory");
        }
    }
}

/// The octets of `r` at `va..va + n` (through its page list).
fn src(rig: &Rig, r: &Region, va: u64, n: usize) -> Vec<u8> {
    (0..n as u64).map(|i| rig.rd(r.bus(va + i), 1)[0]).collect()
}

#[test]
fn writes_and_sends_from_scattered_pages() {
    let mut rig = Rig::new(11);
    let r = rig.region(
        5,
        0x3c,
        PD,
        ACCESS_ALL,
        0x7f00_1234_5123,
        7,
        TptState::Valid,
    );
    // (op, va, len, remote offset)
    let plan: [(SendOpcode, u64, usize, u64); 4] = [
        (SendOpcode::RdmaWrite, r.entry.va + 100, 9000, SINK_VA + 7),
        (SendOpcode::Send, r.entry.va + 4000, 5000, 0),
        (
            SendOpcode::RdmaWrite,
            r.entry.va + 20000,
            3000,
            SINK_VA + 12000,
        ),
        (SendOpcode::Send, r.entry.va, 1, 0),
    ];
    let mut wrs = vec![];
    for &(op, va, len, roff) in &plan {
        let sge = Sge {
            addr: va,
            length: len as u32,
            lkey: r.lkey,
        };
        wrs.push(rig.post(op, sge, true, roff));
    }
    // And a Send from a plain buffer of the identity region.
    let plain = rig.mem.alloc_dma(2000, 8).unwrap();
    let pd = rig.rng.bytes(2000);
    rig.mem.write(plain, &pd).unwrap();
    let sge = Sge {
        addr: plain,
        length: 2000,
        lkey: core_rig::IDENT_LKEY,
    };
    wrs.push(rig.post(SendOpcode::Send, sge, true, 0));
    rig.doorbell();
    let t0 = rig.node.borrow().core.0.cycle();
    let first = rig.run(200_000).expect("frames sent");
    eprintln!("doorbell -> first MAC beat: {} clocks", first - t0);
    let sends: Vec<(u64, usize)> = [(1usize, 5000usize), (3, 1), (4, 2000)]
        .iter()
        .map(|&(i, n)| (wrs[i], n))
        .collect();
    let rx = rig.receiver(&sends);
    let sink = &rx.tpt().region(SINK_STAG).unwrap().bytes;
    for &(op, va, len, roff) in &plan {
        let want = src(&rig, &r, va, len);
        if op == SendOpcode::RdmaWrite {
            let o = (roff - SINK_VA) as usize;
            assert_eq!(&sink[o..o + len], &want[..], "Write from {va:#x}");
        }
    }
    assert_eq!(
        rx.completed_recv(wrs[1]).expect("Send 1 completed").bytes,
        src(&rig, &r, plan[1].1, 5000)
    );
    assert_eq!(
        rx.completed_recv(wrs[3]).expect("Send 3").bytes,
        src(&rig, &r, plan[3].1, 1)
    );
    assert_eq!(rx.completed_recv(wrs[4]).expect("Send 4").bytes, pd);
    for (i, &w) in wrs.iter().enumerate() {
        let c = Cqe::parse(&rig.cqe_raw(i as u32)).expect("CQE parses");
        assert_eq!((c.wr_id, c.status), (w, WcStatus::Success), "CQE {i}");
    }
    // Reads: the ring, the region's pages and the plain buffer only; the
    // region's payload reads never cross a page.
    let mut pages = r.pages.clone();
    pages.push(plain & !(PAGE - 1));
    rig.reads_inside(&pages);
    eprintln!("{} frames, {} DMA reads", rig.frames.len(), rig.reads.len());
}

#[test]
fn refused_sges_complete_with_protection_error() {
    for kind in 0..8u32 {
        let mut rig = Rig::new(100 + kind as u64);
        let r = rig.region(
            5,
            0x3c,
            PD,
            ACCESS_ALL,
            0x7f00_1234_5123,
            3,
            TptState::Valid,
        );
        let inv = rig.region(6, 0x11, PD, ACCESS_ALL, 0x5000_0000, 2, TptState::Invalid);
        let other = rig.region(7, 0x22, PD + 1, ACCESS_ALL, 0x6000_0000, 2, TptState::Valid);
        let ro = rig.region(
            8,
            0x33,
            PD,
            ACCESS_REMOTE_READ,
            0x7000_0000,
            2,
            TptState::Valid,
        );
        // A DMA-able buffer no good SGE names: must never be read.
        let secret = rig.mem.alloc_dma(PAGE, PAGE).unwrap();
        rig.mem.write(secret, &[0x5e; 4096]).unwrap();
        let e = r.entry;
        let (op, lkey, addr, len, ent): (SendOpcode, u32, u64, u32, Option<TptEntry>) = match kind {
            0 => (
                SendOpcode::Send,
                Stag::new(200, 1).unwrap().0,
                secret,
                100,
                None,
            ),
            1 => (SendOpcode::RdmaWrite, r.lkey ^ 0xFF, e.va, 100, Some(e)),
            2 => (
                SendOpcode::Send,
                other.lkey,
                other.entry.va,
                100,
                Some(other.entry),
            ),
            3 => (SendOpcode::RdmaWrite, r.lkey, e.va - 1, 100, Some(e)),
            4 => (SendOpcode::Send, r.lkey, e.va + e.length - 50, 100, Some(e)),
            5 => (SendOpcode::RdmaWrite, r.lkey, u64::MAX - 10, 100, Some(e)),
            6 => (
                SendOpcode::Send,
                inv.lkey,
                inv.entry.va,
                100,
                Some(inv.entry),
            ),
            _ => (
                SendOpcode::RdmaRead,
                ro.lkey,
                ro.entry.va,
                100,
                Some(ro.entry),
            ),
        };
        let need = if op == SendOpcode::RdmaRead {
            ACCESS_LOCAL_WRITE
        } else {
            0
        };
        if let Some(t) = ent {
            assert!(t.check(Stag(lkey), PD, need, addr, len as u64).is_err());
        }
        let good = Sge {
            addr: e.va + 3000,
            length: 3000,
            lkey: r.lkey,
        };
        let w0 = rig.post(SendOpcode::RdmaWrite, good, true, SINK_VA);
        let bad = Sge {
            addr,
            length: len,
            lkey,
        };
        let w1 = rig.post(op, bad, false, 0x9000);
        let later = Sge {
            addr: e.va,
            length: 64,
            lkey: r.lkey,
        };
        let _w2 = rig.post(SendOpcode::Send, later, true, 0);
        rig.doorbell();
        rig.run(200_000);
        let c0 = Cqe::parse(&rig.cqe_raw(0)).expect("CQE 0");
        assert_eq!(
            (c0.wr_id, c0.status),
            (w0, WcStatus::Success),
            "kind {kind}"
        );
        let c1 = Cqe::parse(&rig.cqe_raw(1)).expect("CQE 1");
        let wc = match op {
            SendOpcode::RdmaWrite => WcOpcode::RdmaWrite,
            SendOpcode::RdmaRead => WcOpcode::RdmaRead,
            _ => WcOpcode::Send,
        };
        assert_eq!(
            (c1.wr_id, c1.status, c1.opcode),
            (w1, WcStatus::LocalProtectionError, wc),
            "kind {kind}"
        );
        assert!(
            rig.cqe_raw(2).iter().all(|&b| b == 0),
            "kind {kind}: a CQE for the later Send"
        );
        // Only the good Write's frames: the peer's model places it whole.
        let rx = rig.receiver(&[]);
        let sink = &rx.tpt().region(SINK_STAG).unwrap().bytes;
        assert_eq!(
            &sink[..3000],
            &src(&rig, &r, e.va + 3000, 3000)[..],
            "kind {kind}"
        );
        // (a frame of the later Send would have no receive buffer there:
        // the model refuses it)
        rig.reads_inside(&r.pages);
        assert!(rig
            .reads
            .iter()
            .all(|&(a, n)| a + n <= secret || a >= secret + PAGE));
    }
}

/// Gather (docs/rtl.md "Send-side SGE checks and translation"): WQEs of
/// 4 and 6 SGEs (empty ones among them, SGEs crossing pages of the
/// scattered region, SGEs in the identity region, out of address order):
/// the peer's model places each message as the concatenation of its SGEs
/// in order, the CQEs say Success, and every read lies in the ring, a
/// region page or the plain buffer.
#[test]
fn writes_and_sends_gather_four_and_six_sges() {
    let mut rig = Rig::new(23);
    let r = rig.region(
        5,
        0x3c,
        PD,
        ACCESS_ALL,
        0x7f00_1234_5123,
        8,
        TptState::Valid,
    );
    let plain = rig.mem.alloc_dma(2000, 8).unwrap();
    let pbytes = rig.rng.bytes(2000);
    rig.mem.write(plain, &pbytes).unwrap();
    let va = r.entry.va;
    let s = |lkey: u32, addr: u64, length: u32| Sge { addr, length, lkey };
    let ident = core_rig::IDENT_LKEY;
    let plan: Vec<(SendOpcode, Vec<Sge>, u64)> = vec![
        (
            SendOpcode::RdmaWrite,
            vec![
                s(r.lkey, va + 100, 3000),
                s(ident, plain + 7, 500),
                s(r.lkey, va + 20000, 0),
                s(r.lkey, va + 9000, 4500),
            ],
            SINK_VA + 50,
        ),
        (
            SendOpcode::Send,
            vec![
                s(ident, plain + 600, 100),
                s(r.lkey, va + 4090, 10),
                s(r.lkey, va, 0),
                s(r.lkey, va + 12000, 8000),
                s(ident, plain + 1000, 1),
                s(r.lkey, va + 30, 200),
            ],
            0,
        ),
        (SendOpcode::Send, vec![s(r.lkey, va, 0); 4], 0),
        (
            SendOpcode::RdmaWrite,
            vec![s(r.lkey, va + 28000, 2000), s(ident, plain, 1)],
            SINK_VA + 20000,
        ),
    ];
    let bytes = |rig: &Rig, sges: &[Sge]| -> Vec<u8> {
        sges.iter()
            .flat_map(|g| {
                if g.lkey == ident {
                    rig.rd(g.addr, g.length as usize)
                } else {
                    src(rig, &r, g.addr, g.length as usize)
                }
            })
            .collect()
    };
    let mut wrs = vec![];
    for (op, sges, roff) in &plan {
        wrs.push(rig.post_sges(*op, sges, true, *roff));
    }
    rig.doorbell();
    rig.run(300_000).expect("frames sent");
    let sends: Vec<(u64, usize)> = vec![(wrs[1], 8311), (wrs[2], 0)];
    let rx = rig.receiver(&sends);
    let sink = &rx.tpt().region(SINK_STAG).unwrap().bytes;
    for (i, (op, sges, roff)) in plan.iter().enumerate() {
        let want = bytes(&rig, sges);
        if *op == SendOpcode::RdmaWrite {
            let o = (roff - SINK_VA) as usize;
            assert_eq!(&sink[o..o + want.len()], &want[..], "Write {i}");
        } else {
            let got = rx.completed_recv(wrs[i]).expect("Send completed");
            assert_eq!(got.bytes, want, "Send {i}");
        }
        let c = Cqe::parse(&rig.cqe_raw(i as u32)).expect("CQE parses");
        assert_eq!((c.wr_id, c.status), (wrs[i], WcStatus::Success), "CQE {i}");
    }
    let mut pages = r.pages.clone();
    pages.push(plain & !(PAGE - 1));
    rig.reads_inside(&pages);
    eprintln!(
        "gather: {} frames, {} DMA reads",
        rig.frames.len(),
        rig.reads.len()
    );
}

mod random_sge_lists {
    use super::*;
    use proptest::prelude::*;

    /// One SGE: (where: 0..=2 the scattered region, 3 the plain buffer;
    /// offset seed; length; bad: 0 good, 1 bad key, 2 beyond its region).
    type SgeSpec = (u8, u16, u16, u8);
    /// One WQE: (Send or Write, its SGEs).
    type WqeSpec = (bool, Vec<SgeSpec>);

    fn wqes() -> impl Strategy<Value = Vec<WqeSpec>> {
        let sge = (
            0u8..4,
            any::<u16>(),
            prop_oneof![Just(0u16), 1u16..1500],
            prop_oneof![6 => Just(0u8), 1 => 1u8..3],
        );
        let wqe = (
            any::<bool>(),
            prop::collection::vec(sge, 0..=MAX_SGE_PER_WQE),
        );
        prop::collection::vec(wqe, 1..=3)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
        /// Random SGE lists against the references: `TptEntry::check`
        /// decides which WQE is refused (the first with a bad SGE that has
        /// octets; empty SGEs are not checked, as in Linux siw), the peer's
        /// model (`rnic_wire::model::Receiver`) places every good WQE
        /// before it as the concatenation of its SGEs. The refused WQE
        /// completes with LocalProtectionError, none of its octets is read
        /// (its good SGEs point at a "secret" buffer) and nothing after it
        /// is sent or completed.
        #[test]
        fn random_sge_lists_match_the_model(plan in wqes()) {
            let mut rig = Rig::new(plan.len() as u64 * 77 + plan[0].1.len() as u64);
            let r = rig.region(5, 0x3c, PD, ACCESS_ALL, 0x7f00_1234_5123, 4, TptState::Valid);
            let plain = rig.mem.alloc_dma(4096, 8).unwrap();
            let pbytes = rig.rng.bytes(4096);
            rig.mem.write(plain, &pbytes).unwrap();
            let secret = rig.mem.alloc_dma(PAGE, PAGE).unwrap();
            rig.mem.write(secret, &[0x5e; 4096]).unwrap();
            let ident = core_rig::IDENT_LKEY;
            let e = r.entry;
            // (op, sges, octets, remote offset, refused)
            let mut posted = vec![];
            let mut sink_off = 0u64;
            for (is_send, specs) in &plan {
                let bad_wqe = specs.iter().any(|s| s.3 != 0 && s.2 > 0);
                let sges: Vec<Sge> = specs
                    .iter()
                    .map(|&(w, seed, len, bad)| {
                        let len = len as u64;
                        if bad != 0 && len > 0 {
                            return match bad {
                                1 => Sge { addr: e.va, length: len as u32, lkey: r.lkey ^ 0x80 },
                                _ => Sge { addr: e.va + e.length - len / 2, length: len as u32, lkey: r.lkey },
                            };
                        }
                        if bad_wqe {
                            // never to be read
                            return Sge { addr: secret + seed as u64 % 2000, length: len as u32, lkey: ident };
                        }
                        if w == 3 {
                            Sge { addr: plain + seed as u64 % (4096 - len), length: len as u32, lkey: ident }
                        } else {
                            // anywhere in the region, often across a page end
                            let a = e.va + (seed as u64 * 7) % (e.length - len);
                            Sge { addr: a, length: len as u32, lkey: r.lkey }
                        }
                    })
                    .collect();
                // the reference decides
                let refused = sges.iter().any(|g| {
                    g.length > 0
                        && g.lkey != ident
                        && e.check(Stag(g.lkey), PD, 0, g.addr, g.length as u64).is_err()
                });
                prop_assert_eq!(refused, bad_wqe);
                let total: u64 = sges.iter().map(|g| g.length as u64).sum();
                let op = if *is_send { SendOpcode::Send } else { SendOpcode::RdmaWrite };
                let roff = SINK_VA + sink_off;
                sink_off += total;
                let wr = rig.post_sges(op, &sges, true, roff);
                posted.push((op, sges, total, roff, refused, wr));
                if refused {
                    break;
                }
            }
            // A Send after a refused WQE: never sent (the QP's send side is off).
            let after = posted.last().unwrap().4;
            if after {
                rig.post(SendOpcode::Send, Sge { addr: plain, length: 10, lkey: ident }, true, 0);
            }
            rig.doorbell();
            rig.run(400_000);
            let good: Vec<_> = posted.iter().filter(|p| !p.4).collect();
            let sends: Vec<(u64, usize)> = good
                .iter()
                .filter(|p| p.0 == SendOpcode::Send)
                .map(|p| (p.5, p.2 as usize))
                .collect();
            let rx = rig.receiver(&sends);
            let sink = &rx.tpt().region(SINK_STAG).unwrap().bytes;
            let mut placed = 0usize;
            for (i, (op, sges, total, roff, refused, wr)) in posted.iter().enumerate() {
                let c = Cqe::parse(&rig.cqe_raw(i as u32)).expect("CQE parses");
                if *refused {
                    prop_assert_eq!((c.wr_id, c.status), (*wr, WcStatus::LocalProtectionError));
                    continue;
                }
                prop_assert_eq!((c.wr_id, c.status), (*wr, WcStatus::Success));
                let want: Vec<u8> = sges
                    .iter()
                    .flat_map(|g| {
                        if g.lkey == ident {
                            rig.rd(g.addr, g.length as usize)
                        } else {
                            src(&rig, &r, g.addr, g.length as usize)
                        }
                    })
                    .collect();
                prop_assert_eq!(want.len() as u64, *total);
                if *op == SendOpcode::RdmaWrite {
                    let o = (roff - SINK_VA) as usize;
                    prop_assert_eq!(&sink[o..o + want.len()], &want[..]);
                    placed = placed.max(o + want.len());
                } else {
                    prop_assert_eq!(&rx.completed_recv(*wr).expect("Send completed").bytes, &want);
                }
            }
            // Nothing more: no CQE after the last, no octet written beyond
            // the good Writes, no read of the secret buffer.
            prop_assert!(rig.cqe_raw(posted.len() as u32).iter().all(|&b| b == 0));
            let last_write_end = posted
                .iter()
                .filter(|p| !p.4 && p.0 == SendOpcode::RdmaWrite)
                .map(|p| (p.3 - SINK_VA + p.2) as usize)
                .max()
                .unwrap_or(0);
            prop_assert_eq!(placed.max(last_write_end), last_write_end);
            prop_assert!(sink[last_write_end..].iter().all(|&b| b == 0));
            prop_assert!(rig
                .reads
                .iter()
                .all(|&(a, n)| a + n <= secret || a >= secret + PAGE));
        }
    }
}
