//! The receive-side Send path inside `rnic_core` (Verilator): the firmware
//! programs a connection in RDMA mode, a QP with a receive ring and a CQ
//! through `fw_*` (`rnic_fw::hal::Hal::write_conn`/`write_qp`/`write_cq`
//! on `CoSimHal`); the host writes receive WQEs into host memory
//! (`RecvWqe::emit`) and rings the RQ producer doorbell and the CQ consumer
//! doorbell through BAR0 (`csr_*`); the peer's Sends are built with
//! `rnic_wire::model::TxStream` (MPA/DDP/RDMAP) and framed with
//! `rnic_wire::model::net::data_frame` into `mac_rx_*`. Checked against
//! those references: the payload lands octet for octet in the WQE's SGEs
//! (nothing around them touched), and each completion in the CQ ring parses
//! with `rnic_wire::abi::cqe::Cqe::parse` with the WQE's wr_id, the message
//! length, opcode `Recv`, the solicited flag, the QP and the phase bit of
//! its pass over the ring.

use rnic_fw::hal::HalExt;
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::{
    ConnContext, ConnMode, CqContext, CqState, QpContext, RtrKind, MPA_CRC_RX, MPA_CRC_TX,
};
use rnic_wire::abi::cqe::{Cqe, WcOpcode, WcStatus, CQE_FLAG_SOLICITED, CQE_SIZE};
use rnic_wire::abi::csr::{cq_doorbell_page, qp_doorbell_page};
use rnic_wire::abi::doorbell::{CQ_CONSUMER, QP_RQ_PRODUCER};
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::wqe::{RecvWqe, Sge, SgeList, WQE_SIZE};
use rnic_wire::model::net::data_frame;
use rnic_wire::model::{Endpoint, Message, MpaSettings, TxStream};
use std::cell::RefCell;
use std::rc::Rc;

const CONN: u32 = 3;
const QPN: u32 = 5;
const CQN: u32 = 2;
const RQ_LOG2: u32 = 3;
const CQ_LOG2: u32 = 2;
/// Fill of host memory around the receive buffers: must stay.
const FILL: u8 = 0xEE;

/// A posted receive: its wr_id and buffers (bus address, length).
struct Posted {
    wr_id: u64,
    bufs: Vec<(u64, u32)>,
}

struct Rig {
    node: Rc<RefCell<FwNode>>,
    hal: CoSimHal,
    host: HostCsr,
    dma: DmaServer,
    mem: HostMemory,
    rng: Rng,
    peer: Endpoint,
    local: Endpoint,
    tx: TxStream,
    rq: u64,
    rq_prod: u32,
    cq: u64,
    posted: Vec<Posted>,
    terms: usize,
    /// Cycle of the last MAC beat driven and of the last DMA write beat
    /// taken in the latest `run`.
    last_mac: u64,
    last_wr: u64,
}

impl Rig {
    fn new(seed: u64) -> Rig {
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
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
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
            pd: 1,
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
        r.hal.write_cq(CQN, &cq).expect("CQ write");
        r.hal.write_qp(QPN, &q).expect("QP write");
        r.hal.write_conn(CONN, &c).expect("connection write");
        r
    }

    /// Writes a receive WQE with buffers of `lens` octets (each in fresh
    /// memory at an odd offset, surrounded by FILL); no doorbell.
    fn post(&mut self, lens: &[u32]) {
        let mut sges = Vec::new();
        let mut bufs = Vec::new();
        for &l in lens {
            let a = self.mem.alloc_dma(l as u64 + 64, 8).unwrap();
            self.mem.write(a, &vec![FILL; l as usize + 64]).unwrap();
            let a = a + 16 + self.rng.below(8);
            sges.push(Sge {
                addr: a,
                length: l,
                lkey: 0x1234,
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

    fn quiesce(&mut self) {
        let mut n = self.node.borrow_mut();
        let m = &mut n.core.0;
        m.set_dma_rd_req_ready(0);
        m.set_dma_rd_cpl_valid(0);
        m.set_dma_wr_ready(0);
    }

    fn csr(&mut self, addr: u32, v: u32) {
        self.quiesce();
        self.host.write(addr, v);
    }

    /// The peer's Send: frames into mac_rx.
    fn send(&mut self, data: &[u8], solicited: bool) {
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
    fn run(&mut self, limit: u64) -> u64 {
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
            if tv {
                self.terms += 1;
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

    fn rd(&self, a: u64, n: usize) -> Vec<u8> {
        let mut b = vec![0u8; n];
        self.mem.read(a, &mut b).unwrap();
        b
    }

    /// Checks message `i` (the i-th WQE posted) against `data` and its CQE
    /// at CQ index `ci`.
    fn check(&self, i: usize, ci: u32, data: &[u8], solicited: bool) {
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

#[test]
fn sends_land_in_posted_wqes_with_cqes() {
    let mut r = Rig::new(0x5e4d);
    let msgs: Vec<(Vec<u8>, bool)> = vec![
        (r.rng.bytes(100), false),
        (r.rng.bytes(3000), true),
        (r.rng.bytes(777), false),
        (r.rng.bytes(1), true),
        (r.rng.bytes(2100), false),
    ];
    // WQEs 0..3: one SGE; the second splits 3000 octets over two SGEs
    r.post(&[128]);
    r.post(&[1000, 2500]);
    r.post(&[800]);
    let prod = r.rq_prod;
    r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    let t0 = r.node.borrow().core.0.cycle();
    for (d, se) in &msgs[..3] {
        r.send(d, *se);
    }
    let clocks = r.run(200_000);
    for (i, (d, se)) in msgs[..3].iter().enumerate() {
        r.check(i, i as u32, d, *se);
    }
    // CQ of 4: the host consumes 3, so entries 3 and 4 (the second pass,
    // phase 0) fit; without the consumer doorbell entry 4 would overflow
    r.csr(cq_doorbell_page(CQN) + CQ_CONSUMER, 3);
    r.post(&[1]);
    r.post(&[4096]);
    let prod = r.rq_prod;
    r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    for (d, se) in &msgs[3..] {
        r.send(d, *se);
    }
    r.run(200_000);
    for (i, (d, se)) in msgs.iter().enumerate().skip(3) {
        r.check(i, i as u32, d, *se);
    }
    assert!(r.dma.faults().is_empty(), "DMA faults {:?}", r.dma.faults());
    assert_eq!(r.terms, 0, "no Terminate");
    let n = r.node.borrow();
    let m = &n.core.0;
    assert_eq!(m.get_cnt_rxs_cqe(), 5, "CQEs written");
    assert_eq!(m.get_cnt_rxs_fetch(), 5, "one WQE read per message");
    assert_eq!(m.get_cnt_rxs_cq_overflow(), 0);
    assert_eq!(m.get_cnt_rxs_lost(), 0);
    assert_eq!(m.get_cnt_rxs_drop_qp(), 0);
    assert_eq!(m.get_cnt_rxs_db_bad(), 0);
    assert_eq!(m.get_cnt_dma_rd_cpl_bad(), 0);
    println!(
        "rx_send_core: 3 Sends (3877 octets) placed with CQEs: {clocks} clocks from the RQ doorbell (clock {t0}) to quiet"
    );
}

#[test]
fn send_without_cq_room_overflows_the_cq() {
    // the same rig, no consumer doorbell: the fifth completion finds the CQ
    // of 4 full → no write, CqState::Overflow, counted (docs/rtl.md cpl_write)
    let mut r = Rig::new(77);
    for _ in 0..5 {
        r.post(&[64]);
    }
    let prod = r.rq_prod;
    r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    let msgs: Vec<Vec<u8>> = (0..5).map(|_| r.rng.bytes(50)).collect();
    for d in &msgs {
        r.send(d, false);
    }
    r.run(200_000);
    for (i, d) in msgs.iter().enumerate().take(4) {
        r.check(i, i as u32, d, false);
    }
    let n = r.node.borrow();
    assert_eq!(n.core.0.get_cnt_rxs_cqe(), 4);
    assert_eq!(n.core.0.get_cnt_rxs_cq_overflow(), 1);
}

/// Issue 3's figure: clocks from the last beat of a Send's frame on
/// `mac_rx_*` to the last DMA beat of its CQE, with the WQE already fetched
/// (posted and rung before the frame arrives). Includes the store-and-forward
/// of `rx_fifo` and the FPDU buffer, so it grows with the frame length.
#[test]
fn cqe_latency_after_the_last_beat() {
    let mut r = Rig::new(0x1a7e);
    let mut lat = Vec::new();
    for (i, n) in [16usize, 1024, 1400].into_iter().enumerate() {
        r.post(&[2048]);
        let prod = r.rq_prod;
        r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
        r.run(50_000); // the WQE fetch is done before the frame comes
        let d = r.rng.bytes(n);
        r.send(&d, false);
        r.run(50_000);
        r.check(i, i as u32, &d, false);
        assert!(r.last_wr > r.last_mac, "CQE written after the frame");
        lat.push((n, r.last_wr - r.last_mac));
    }
    assert_eq!(r.terms, 0);
    println!("rx_send_core: last MAC beat -> CQE written (Send payload octets, clocks): {lat:?}");
    // Measured 140 + about 2 clocks per 8-octet beat (two store-and-forward
    // stages: rx_fifo for the FCS, the FPDU buffer for the CRC); a loose
    // regression bound in clocks.
    for &(n, c) in &lat {
        assert!(c < 300 + 3 * n as u64 / 8, "{n} octets: {c} clocks");
    }
}
