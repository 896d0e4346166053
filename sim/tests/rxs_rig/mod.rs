//! The receive-side Send rig shared by `rx_send_core` and `rx_sge`: a
//! Verilated `rnic_core` behind `FwNode`, programmed by the firmware HAL
//! (`CoSimHal`: connection in RDMA mode, QP with a receive ring, CQ, TPT
//! regions), the host's BAR0 doorbells (`HostCsr`), receive WQEs written
//! into host memory with `RecvWqe::emit`, the peer's Sends built with
//! `rnic_wire::model::TxStream` and framed into `mac_rx_*`.
#![allow(dead_code)] // shared by two test binaries, each using a subset

use rnic_fw::hal::Hal;
use rnic_fw::hal::HalExt;
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::{
    ConnContext, ConnMode, CqContext, CqState, QpContext, RtrKind, TableId, MPA_CRC_RX, MPA_CRC_TX,
};
use rnic_wire::abi::cqe::{Cqe, WcOpcode, WcStatus, CQE_FLAG_SOLICITED, CQE_SIZE};
use rnic_wire::abi::csr::qp_doorbell_page;
use rnic_wire::abi::doorbell::QP_RQ_PRODUCER;
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::tpt::{Stag, TptEntry, TptState, ACCESS_ALL, TPT_ENTRY_SIZE};
use rnic_wire::abi::wqe::{RecvWqe, Sge, SgeList, WQE_SIZE};
use rnic_wire::model::net::data_frame;
use rnic_wire::model::{Endpoint, Message, MpaSettings, TxStream};
use std::cell::RefCell;
use std::rc::Rc;

pub const CONN: u32 = 3;
pub const QPN: u32 = 5;
pub const CQN: u32 = 2;
pub const RQ_LOG2: u32 = 3;
pub const CQ_LOG2: u32 = 2;
/// Fill of host memory around the receive buffers: must stay.
pub const FILL: u8 = 0xEE;
/// The QP's protection domain.
pub const PD: u32 = 1;
/// Host memory the allocator hands out: `[MEM_BASE, MEM_LIMIT)`.
pub const MEM_BASE: u64 = 0x1_0000_0000;
pub const MEM_LIMIT: u64 = 0x2_0000_0000;
/// lkey of the identity region (TPT index 0x12, key 0x34) every `post`
/// uses: `[MEM_BASE, MEM_LIMIT)` in 1 GiB pages whose bus address is their
/// virtual one (what the driver registers when CPU address = bus address).
pub const IDENT_LKEY: u32 = 0x1234;
/// Page-list entries the identity region takes (from index 0).
const IDENT_PAGES: u32 = 4;
const PAGE: u64 = 4096;

/// A registered region: its TPT entry and page list (bus addresses).
pub struct Region {
    pub lkey: u32,
    pub entry: TptEntry,
    pub pages: Vec<u64>,
}

impl Region {
    /// Bus address of virtual address `va` (`TptEntry::page_of`).
    pub fn bus(&self, va: u64) -> u64 {
        let (i, off) = self.entry.page_of(va).expect("inside the region");
        self.pages[(i - self.entry.pbl_base) as usize] + off
    }
}

/// A posted receive: its wr_id and buffers (bus address, length).
pub struct Posted {
    pub wr_id: u64,
    pub bufs: Vec<(u64, u32)>,
}

pub struct Rig {
    pub node: Rc<RefCell<FwNode>>,
    pub hal: CoSimHal,
    pub host: HostCsr,
    pub dma: DmaServer,
    pub mem: HostMemory,
    pub rng: Rng,
    pub peer: Endpoint,
    pub local: Endpoint,
    pub tx: TxStream,
    pub rq: u64,
    pub rq_prod: u32,
    pub cq: u64,
    pub posted: Vec<Posted>,
    pub terms: usize,
    /// Cycle of the last MAC beat driven and of the last DMA write beat
    /// taken in the latest `run`.
    pub last_mac: u64,
    pub last_wr: u64,
    /// Causes of the Terminate requests popped (`term_cause`), in order.
    pub term_causes: Vec<u16>,
    /// Next free page-list index.
    pub next_pbl: u32,
}

impl Rig {
    pub fn new(seed: u64) -> Rig {
        let node = FwNode::shared();
        node.borrow_mut().set_ulp(true);
        let mut rng = Rng::new(seed);
        let seq_start = rng.next_u32();
        let mut r = Rig {
            hal: CoSimHal::new(node.clone()),
            host: HostCsr { node: node.clone() },
            node,
            dma: DmaServer::new(DmaConfig {
                read_jitter: 30,
                seed,
                ..DmaConfig::default()
            }),
            mem: HostMemory::new(MEM_BASE, MEM_LIMIT),
            rng,
            peer: Endpoint {
                mac: [2, 0, 0, 0, 0, 2],
                ip: [10, 0, 0, 2],
                port: 40001,
            },
            local: Endpoint {
                mac: [2, 0, 0, 0, 0, 1],
                ip: [10, 0, 0, 1],
                port: 7174,
            },
            tx: TxStream::new(
                MpaSettings {
                    crc: true,
                    markers: false,
                    seq_start,
                },
                1460,
            ),
            rq: 0,
            rq_prod: 0,
            cq: 0,
            posted: Vec::new(),
            terms: 0,
            last_mac: 0,
            last_wr: 0,
            term_causes: Vec::new(),
            next_pbl: IDENT_PAGES,
        };
        r.rq = r.mem.alloc_dma((WQE_SIZE as u64) << RQ_LOG2, 4096).unwrap();
        r.cq = r.mem.alloc_dma((CQE_SIZE as u64) << CQ_LOG2, 4096).unwrap();
        let c = ConnContext {
            mode: ConnMode::Rdma,
            mpa_flags: MPA_CRC_RX | MPA_CRC_TX,
            snd_wscale: 0,
            rcv_wscale: 0,
            local_ip: u32::from_be_bytes(r.local.ip),
            peer_ip: u32::from_be_bytes(r.peer.ip),
            local_port: r.local.port,
            peer_port: r.peer.port,
            local_mac: r.local.mac,
            peer_mac: r.peer.mac,
            mss: 1460,
            mulpdu: 1460,
            rcv_nxt: seq_start,
            snd_nxt: 1000,
            snd_una: 1000,
            snd_wnd: 0x10000,
            rcv_wnd: 1 << 30,
            tx_marker_ref: 1000,
            rx_marker_ref: seq_start,
            qpn: QPN,
        };
        let q = QpContext {
            state: QpState::Rts,
            flags: 0,
            rtr: RtrKind::None,
            sq_log2: 2,
            pd: PD,
            send_cqn: 0,
            recv_cqn: CQN,
            sq_ring: 0x1_0000_0000,
            rq_ring: r.rq,
            rq_log2: RQ_LOG2 as u8,
            conn: CONN,
            ird: 1,
            ord: 1,
            tx_send_msn: 1,
            tx_read_msn: 1,
            rx_send_msn: 1,
            rx_read_msn: 1,
            term_cause: 0,
        };
        let cq = CqContext {
            state: CqState::Valid,
            log2_entries: CQ_LOG2 as u8,
            ring: r.cq,
            producer: 0,
            consumer: 0,
            armed: 0,
        };
        let ident = TptEntry {
            state: TptState::Valid,
            key: Stag(IDENT_LKEY).key(),
            access: ACCESS_ALL,
            page_shift: 30,
            pd: PD,
            va: MEM_BASE,
            length: MEM_LIMIT - MEM_BASE,
            pbl_base: 0,
            npages: IDENT_PAGES,
        };
        let pages = (0..IDENT_PAGES as u64)
            .map(|i| MEM_BASE + (i << 30))
            .collect();
        r.register(Stag(IDENT_LKEY).index(), &ident, pages);
        r.hal.write_cq(CQN, &cq).expect("CQ write");
        r.hal.write_qp(QPN, &q).expect("QP write");
        r.hal.write_conn(CONN, &c).expect("connection write");
        r
    }

    /// Writes a TPT entry and its page list through the firmware port.
    pub fn register(&mut self, index: u32, e: &TptEntry, pages: Vec<u64>) -> Region {
        for (i, p) in pages.iter().enumerate() {
            self.hal
                .write_table(TableId::Pbl, e.pbl_base + i as u32, &p.to_le_bytes())
                .expect("page-list write");
        }
        let mut b = [0u8; TPT_ENTRY_SIZE];
        e.emit(&mut b).unwrap();
        self.hal
            .write_table(TableId::Tpt, index, &b)
            .expect("TPT write");
        Region {
            lkey: Stag::new(index, e.key).unwrap().0,
            entry: *e,
            pages,
        }
    }

    /// A region of 4 KiB pages at virtual address `va` (unrelated to the
    /// bus addresses) whose pages are scattered in host memory: allocated
    /// with non-DMA gaps, then shuffled.
    pub fn sparse_region(
        &mut self,
        index: u32,
        key: u8,
        access: u8,
        va: u64,
        len: u64,
        f: impl Fn(&mut TptEntry),
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
        let mut e = TptEntry {
            state: TptState::Valid,
            key,
            access,
            page_shift: 12,
            pd: PD,
            va,
            length: len,
            pbl_base: self.next_pbl,
            npages: npages as u32,
        };
        f(&mut e);
        self.next_pbl += npages as u32;
        self.register(index, &e, pages)
    }

    /// Writes a receive WQE with these SGEs as they are (no checks, no
    /// doorbell); returns its wr_id.
    pub fn post_sges(&mut self, sges: &[Sge]) -> u64 {
        let wr_id = self.rng.next_u64();
        let w = RecvWqe {
            wr_id,
            sges: SgeList::new(sges).unwrap(),
        };
        let mut b = [0u8; WQE_SIZE];
        w.emit(&mut b).unwrap();
        let slot = (self.rq_prod & ((1 << RQ_LOG2) - 1)) as u64;
        self.mem
            .write(self.rq + slot * WQE_SIZE as u64, &b)
            .unwrap();
        self.rq_prod = self.rq_prod.wrapping_add(1);
        self.posted.push(Posted {
            wr_id,
            bufs: vec![],
        });
        wr_id
    }

    /// Rings the RQ producer doorbell with everything posted.
    pub fn ring_rq(&mut self) {
        let prod = self.rq_prod;
        self.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    }

    /// The CQE at CQ index `ci`.
    pub fn cqe(&self, ci: u32) -> Cqe {
        let slot = (ci & ((1 << CQ_LOG2) - 1)) as u64;
        Cqe::parse(&self.rd(self.cq + slot * CQE_SIZE as u64, CQE_SIZE)).expect("CQE parses")
    }

    /// Writes a receive WQE with buffers of `lens` octets (each in fresh
    /// memory at an odd offset, surrounded by FILL); no doorbell.
    pub fn post(&mut self, lens: &[u32]) {
        let mut sges = Vec::new();
        let mut bufs = Vec::new();
        for &l in lens {
            let a = self.mem.alloc_dma(l as u64 + 64, 8).unwrap();
            self.mem.write(a, &vec![FILL; l as usize + 64]).unwrap();
            let a = a + 16 + self.rng.below(8);
            sges.push(Sge {
                addr: a,
                length: l,
                lkey: IDENT_LKEY,
            });
            bufs.push((a, l));
        }
        let wr_id = self.rng.next_u64();
        let w = RecvWqe {
            wr_id,
            sges: SgeList::new(&sges).unwrap(),
        };
        let mut b = [0u8; WQE_SIZE];
        w.emit(&mut b).unwrap();
        let slot = (self.rq_prod & ((1 << RQ_LOG2) - 1)) as u64;
        self.mem
            .write(self.rq + slot * WQE_SIZE as u64, &b)
            .unwrap();
        self.rq_prod = self.rq_prod.wrapping_add(1);
        self.posted.push(Posted { wr_id, bufs });
    }

    pub fn quiesce(&mut self) {
        let mut n = self.node.borrow_mut();
        let m = &mut n.core.0;
        m.set_dma_rd_req_ready(0);
        m.set_dma_rd_cpl_valid(0);
        m.set_dma_wr_ready(0);
    }

    pub fn csr(&mut self, addr: u32, v: u32) {
        self.quiesce();
        self.host.write(addr, v);
    }

    /// The peer's Send: frames into mac_rx.
    pub fn send(&mut self, data: &[u8], solicited: bool) {
        let segs = self
            .tx
            .send(&Message::Send {
                data,
                solicited,
                invalidate: None,
            })
            .unwrap();
        let mut n = self.node.borrow_mut();
        for s in segs {
            let f = data_frame(&self.peer, &self.local, s.seq, 1000, &s.payload);
            n.mac_rx.push(f, false);
        }
    }

    /// Clocks until the MAC input is sent and the core is quiet.
    pub fn run(&mut self, limit: u64) -> u64 {
        let mut quiet = 0;
        let mut c = 0;
        while quiet < 600 {
            c += 1;
            assert!(c < limit, "hung");
            let n = &mut *self.node.borrow_mut();
            let sending = n.mac_rx.pending() > 0;
            n.mac_rx.drive(&mut n.core);
            let p = &mut n.core.0;
            self.dma.drive(p, &mut self.mem);
            p.eval();
            let tv = p.get_term_valid() != 0;
            p.set_term_pop(tv as u64);
            // placed tagged segments (RDMA Writes): records taken at once
            let pv = p.get_placed_valid();
            p.set_placed_pop(pv);
            if tv {
                self.terms += 1;
                self.term_causes.push(p.get_term_cause() as u16);
            }
            p.eval();
            if sending {
                self.last_mac = p.cycle();
            }
            if p.get_dma_wr_valid() != 0 && p.get_dma_wr_ready() != 0 {
                self.last_wr = p.cycle();
            }
            let busy = sending || !self.dma.idle() || p.get_dma_wr_valid() != 0;
            self.dma.sample(&*p, &mut self.mem);
            p.tick();
            quiet = if busy { 0 } else { quiet + 1 };
        }
        // clocks until the last busy one
        c - 600
    }

    pub fn rd(&self, a: u64, n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n];
        self.mem.read(a, &mut b).unwrap();
        b
    }

    /// Checks message `i` (the i-th WQE posted) against `data` and its CQE
    /// at CQ index `ci`.
    pub fn check(&self, i: usize, ci: u32, data: &[u8], solicited: bool) {
        let p = &self.posted[i];
        let mut off = 0;
        for &(a, l) in &p.bufs {
            let take = (data.len() - off).min(l as usize);
            let got = self.rd(a - 16, l as usize + 48);
            assert!(
                got[..16].iter().all(|&b| b == FILL),
                "octets before buffer {i}"
            );
            assert_eq!(
                &got[16..16 + take],
                &data[off..off + take],
                "message {i} payload"
            );
            assert!(
                got[16 + take..].iter().all(|&b| b == FILL),
                "octets after the data of message {i}"
            );
            off += take;
        }
        assert_eq!(off, data.len(), "message {i} fits");
        let slot = (ci & ((1 << CQ_LOG2) - 1)) as u64;
        let raw = self.rd(self.cq + slot * CQE_SIZE as u64, CQE_SIZE);
        let c = Cqe::parse(&raw).expect("CQE parses");
        assert_eq!(c.wr_id, p.wr_id, "CQE {ci} wr_id");
        assert_eq!(c.byte_len, data.len() as u32, "CQE {ci} byte_len");
        assert_eq!(c.opcode, WcOpcode::Recv, "CQE {ci} opcode");
        assert_eq!(c.status, WcStatus::Success, "CQE {ci} status");
        assert_eq!(c.qpn, QPN, "CQE {ci} qpn");
        assert_eq!(
            c.flags & CQE_FLAG_SOLICITED != 0,
            solicited,
            "CQE {ci} solicited"
        );
        // owner bit: 1 on the first pass over the ring, 0 on the second
        assert_eq!(c.phase, (ci >> CQ_LOG2) & 1 == 0, "CQE {ci} phase");
    }
}
