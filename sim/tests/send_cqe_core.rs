//! Send-side completions inside `rnic_core` (Verilator): the firmware
//! programs a connection in RDMA mode, a QP whose `send_cqn` names a small
//! CQ, and that CQ (with `CqContext.armed`) through `fw_*`
//! (`rnic_fw::hal::Hal::write_conn`/`write_qp`/`write_cq` on `CoSimHal`);
//! the host writes send WQEs (`SendWqe::emit`), rings the SQ doorbell and
//! the CQ doorbells (consumer, arm) through BAR0, and sets up the event
//! queue (`EQ_*`, `INT_MASK`). Checked against `rnic_wire::abi`: every
//! CQE in the send CQ parses with `Cqe::parse` (one per signaled WQE and
//! per refused WQE, in order, with wr_id, opcode, status, byte_len, QP and
//! the phase of its pass over the ring); the wrap after the consumer
//! doorbell; an overflow counted without a write outside the ring; every
//! EQ entry parses with `Event::parse` — the CQ events and the firmware's
//! own events (`Hal::post_event`) through the one EQ writer, with the
//! phase bit, `INT_EVENT`/`INT_EQ_OVERFLOW` and `irq`.

mod core_rig;

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::hal::{Hal, HalExt};
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::MacTxPort;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::port;
use rnic_wire::abi::cqe::{Cqe, WcOpcode, WcStatus, CQE_SIZE};
use rnic_wire::abi::csr::{self, cq_doorbell_page, qp_doorbell_page};
use rnic_wire::abi::doorbell::{CqArm, CQ_ARM, CQ_CONSUMER, QP_SQ_PRODUCER};
use rnic_wire::abi::mailbox::{Event, EventKind, EVENT_SIZE};
use rnic_wire::abi::wqe::{
    SendOpcode, SendWqe, Sge, SgeList, MAX_SGE_PER_WQE, WQE_FLAG_SIGNALED, WQE_SIZE,
};
use rnic_wire::model::{parse_frame, Endpoint};

const CONN: u32 = 4;
const QPN: u32 = 9;
const CQN: u32 = 3;
const CQ_LOG2: u32 = 2;
const SQ_LOG2: u32 = 4;
const EQ_ENTRIES: u32 = 4;
/// Guard octets after each ring: must never be written.
const GUARD: u8 = 0xA5;
const GUARD_LEN: usize = 256;

/// A WQE posted: what its CQE must say (None: no CQE expected).
struct Posted {
    wr_id: u64,
    cqe: Option<(WcOpcode, WcStatus, u32)>,
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
    eq: u64,
    posted: Vec<Posted>,
    frames: usize,
    /// Clock of the last beat of the last data frame.
    last_mac_beat: u64,
    /// (address, clock of its last data beat) of every DMA write.
    writes: Vec<(u64, u64)>,
    wr_addr: Option<u64>,
    irq_seen: bool,
}

impl Rig {
    fn new(seed: u64, cq_armed: u32) -> Rig {
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
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
            mac: MacTxPort::new(),
            rng: Rng::new(seed),
            sq: 0,
            sq_prod: 0,
            cq: 0,
            eq: 0,
            posted: Vec::new(),
            frames: 0,
            last_mac_beat: 0,
            writes: Vec::new(),
            wr_addr: None,
            irq_seen: false,
        };
        r.sq = r.mem.alloc_dma((WQE_SIZE as u64) << SQ_LOG2, 4096).unwrap();
        let cq_len = (CQE_SIZE << CQ_LOG2) + GUARD_LEN;
        r.cq = r.mem.alloc_dma(cq_len as u64, 4096).unwrap();
        r.mem
            .write(r.cq + (CQE_SIZE << CQ_LOG2) as u64, &[GUARD; GUARD_LEN])
            .unwrap();
        let eq_len = EVENT_SIZE * EQ_ENTRIES as usize + GUARD_LEN;
        r.eq = r.mem.alloc_dma(eq_len as u64, 4096).unwrap();
        r.mem
            .write(
                r.eq + (EVENT_SIZE * EQ_ENTRIES as usize) as u64,
                &[GUARD; GUARD_LEN],
            )
            .unwrap();
        // host: event queue and interrupt mask
        r.host.write(csr::EQ_BASE_LO, r.eq as u32);
        r.host.write(csr::EQ_BASE_HI, (r.eq >> 32) as u32);
        r.host.write(csr::EQ_ENTRIES, EQ_ENTRIES);
        r.host.write(csr::EQ_CONSUMER, 0);
        r.host
            .write(csr::INT_MASK, csr::INT_EVENT | csr::INT_EQ_OVERFLOW);
        // firmware: CQ, QP (send CQ), connection in RDMA mode
        let q = core_rig::FwQp {
            cqn: CQN,
            cq_ring: r.cq,
            cq_log2: CQ_LOG2,
            cq_armed,
            qpn: QPN,
            sq_ring: r.sq,
            sq_log2: SQ_LOG2,
            pd: 1,
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
        let c = core_rig::rdma_conn(&local, &peer, 1000, 5000, 0xFFFF, QPN);
        core_rig::setup_fw_qp(&mut r.hal, &q, &c);
        r
    }

    /// Writes a send WQE (payload of `len` octets, or `refused`: a WQE
    /// whose `num_sge` is above `MAX_SGE_PER_WQE`, refused by the TX path
    /// with `LocalQpOperationError`); no doorbell.
    fn post(&mut self, op: SendOpcode, len: u32, signaled: bool, refused: bool) {
        let wr_id = self.rng.next_u64();
        let mut sges = Vec::new();
        let nsge = if refused { 2 } else { (len > 0) as usize };
        for _ in 0..nsge {
            let a = self.mem.alloc_dma(len as u64 + 64, 8).unwrap();
            let data = self.rng.bytes(len as usize);
            self.mem.write(a, &data).unwrap();
            sges.push(Sge {
                addr: a,
                length: len,
                lkey: 0x77,
            });
        }
        let wqe = SendWqe {
            wr_id,
            opcode: op,
            flags: if signaled { WQE_FLAG_SIGNALED } else { 0 },
            imm_or_inv: 0,
            remote_offset: 0x1000,
            remote_stag: 0x4242,
            sges: SgeList::new(&sges).unwrap(),
            inline: None,
        };
        let mut b = [0u8; WQE_SIZE];
        wqe.emit(&mut b).unwrap();
        if refused {
            b[10] = MAX_SGE_PER_WQE as u8 + 1;
            assert!(SendWqe::parse(&b).is_err());
        }
        let slot = (self.sq_prod & ((1 << SQ_LOG2) - 1)) as u64;
        self.mem
            .write(self.sq + slot * WQE_SIZE as u64, &b)
            .unwrap();
        self.sq_prod = self.sq_prod.wrapping_add(1);
        // the ABI's work-completion opcode of the WQE (abi::cqe::WcOpcode)
        let wc = match op {
            SendOpcode::RdmaWrite | SendOpcode::RdmaWriteWithImm => WcOpcode::RdmaWrite,
            SendOpcode::RdmaRead => WcOpcode::RdmaRead,
            _ => WcOpcode::Send,
        };
        let cqe = if refused {
            Some((wc, WcStatus::LocalQpOperationError, 0))
        } else if signaled {
            Some((wc, WcStatus::Success, len))
        } else {
            None
        };
        self.posted.push(Posted { wr_id, cqe });
    }

    fn quiesce(&mut self) {
        let mut n = self.node.borrow_mut();
        let m = &mut n.core.0;
        m.set_mac_tx_ready(0);
        m.set_dma_rd_req_ready(0);
        m.set_dma_rd_cpl_valid(0);
        m.set_dma_wr_ready(0);
    }

    fn csr(&mut self, addr: u32, v: u32) {
        self.quiesce();
        self.host.write(addr, v);
    }

    fn csr_read(&mut self, addr: u32) -> u32 {
        self.quiesce();
        self.host.read(addr)
    }

    fn doorbell(&mut self) {
        let p = self.sq_prod;
        self.csr(qp_doorbell_page(QPN) + QP_SQ_PRODUCER, p);
    }

    /// Clocks until the core has been quiet for a while.
    fn run(&mut self, limit: u64) {
        let mut quiet = 0;
        let mut c = 0;
        while quiet < 500 {
            c += 1;
            assert!(c < limit, "hung");
            let mut n = self.node.borrow_mut();
            let p = &mut n.core.0;
            self.mac.drive_ready(p, true);
            self.dma.drive(p, &mut self.mem);
            p.eval();
            let mut busy = !self.dma.idle() || p.get_mac_tx_valid() != 0;
            if p.get_mac_tx_valid() != 0 && p.get_mac_tx_last() != 0 {
                self.last_mac_beat = p.cycle();
            }
            if p.get_dma_wr_valid() != 0 && p.get_dma_wr_ready() != 0 {
                busy = true;
                if p.get_dma_wr_hdr() != 0 {
                    self.wr_addr = Some(p.get_dma_wr_data());
                } else if p.get_dma_wr_last() != 0 {
                    let a = self.wr_addr.take().expect("data after a header");
                    self.writes.push((a, p.cycle()));
                }
            }
            self.irq_seen |= p.get_irq() != 0;
            let f = self.mac.sample(&*p);
            self.dma.sample(&*p, &mut self.mem);
            p.tick();
            drop(n);
            if let Some(f) = f {
                parse_frame(&f).expect("data frame parses with smoltcp");
                self.frames += 1;
            }
            quiet = if busy { 0 } else { quiet + 1 };
        }
        assert!(
            self.dma.faults().is_empty(),
            "DMA faults {:?}",
            self.dma.faults()
        );
    }

    fn read(&self, a: u64, n: usize) -> Vec<u8> {
        let mut b = vec![0; n];
        self.mem.read(a, &mut b).unwrap();
        b
    }

    fn cqe(&self, idx: u32) -> Cqe {
        let slot = (idx & ((1 << CQ_LOG2) - 1)) as u64;
        Cqe::parse(&self.read(self.cq + slot * CQE_SIZE as u64, CQE_SIZE)).expect("CQE parses")
    }

    fn event(&self, idx: u32) -> Event {
        let slot = (idx % EQ_ENTRIES) as u64;
        Event::parse(&self.read(self.eq + slot * EVENT_SIZE as u64, EVENT_SIZE))
            .expect("event parses")
    }

    /// The CQE at CQ index `idx` is the completion of posted WQE `w`.
    fn check_cqe(&self, idx: u32, w: usize) {
        let p = &self.posted[w];
        let (opcode, status, len) = p.cqe.expect("a WQE that completes");
        let got = self.cqe(idx);
        let phase = (idx >> CQ_LOG2) & 1 == 0;
        assert_eq!(
            got,
            Cqe {
                wr_id: p.wr_id,
                byte_len: len,
                qpn: QPN,
                opcode,
                status,
                flags: 0,
                imm_or_inv: 0,
                term_cause: 0,
                phase,
            },
            "CQE at index {idx} (WQE {w})"
        );
    }

    fn guards_intact(&self) {
        let g = self.read(self.cq + (CQE_SIZE << CQ_LOG2) as u64, GUARD_LEN);
        assert!(g.iter().all(|&b| b == GUARD), "written past the CQ ring");
        let g = self.read(
            self.eq + (EVENT_SIZE * EQ_ENTRIES as usize) as u64,
            GUARD_LEN,
        );
        assert!(g.iter().all(|&b| b == GUARD), "written past the EQ ring");
    }

    fn int_status(&mut self) -> u32 {
        self.csr_read(csr::INT_STATUS)
    }

    fn int_clear(&mut self) {
        self.csr(csr::INT_STATUS, csr::INT_EVENT | csr::INT_EQ_OVERFLOW);
        self.irq_seen = false;
    }

    fn counters(&self) -> (u64, u64, u64, u64, u64) {
        let n = self.node.borrow();
        (
            n.core.get_cnt_rxs_cqe(),
            n.core.get_cnt_rxs_event(),
            n.core.get_cnt_rxs_cq_overflow(),
            n.core.get_cnt_rxs_cpl_drop(),
            n.core.get_cnt_rxs_eq_overflow(),
        )
    }
}

/// Signaled and unsignaled Writes and Sends, a refused WQE, the CQ armed by
/// the firmware's CqContext, by the doorbell (Solicited: no event for a
/// successful send; NextCompletion: one event), the wrap after the consumer
/// doorbell, the overflow, firmware events through the same EQ, and the EQ
/// overflow.
#[test]
fn send_cqes_in_order_wrap_overflow_and_events() {
    let t0 = std::time::Instant::now();
    // CqContext.armed = NextCompletion: the first CQE raises an event
    let mut r = Rig::new(5, CqArm::NextCompletion as u32);
    // ---- round 1: 5 WQEs, 3 CQEs (CQ indexes 0, 1, 2)
    r.post(SendOpcode::RdmaWrite, 100, true, false); // 0: CQE
    r.post(SendOpcode::Send, 200, false, false); // 1: none
    r.post(SendOpcode::Send, 300, false, true); // 2: refused: error CQE
    r.post(SendOpcode::RdmaWrite, 50, false, false); // 3: none
    r.post(SendOpcode::Send, 0, true, false); // 4: CQE
    r.doorbell();
    r.run(200_000);
    assert_eq!(r.frames, 4, "data frames (the refused WQE sends nothing)");
    r.check_cqe(0, 0);
    r.check_cqe(1, 2);
    r.check_cqe(2, 4);
    assert!(
        !Cqe::phase_of(&r.read(r.cq + 3 * 32, 32)).unwrap(),
        "slot 3 not yet written"
    );
    // the firmware's arm: one CqCompletion event at EQ index 0
    let e = r.event(0);
    assert_eq!(
        (e.kind, e.handle, e.phase),
        (EventKind::CqCompletion, CQN, true)
    );
    assert!(r.irq_seen, "irq with INT_EVENT unmasked");
    assert_eq!(r.int_status() & csr::INT_EVENT, csr::INT_EVENT);
    r.int_clear();
    assert_eq!(r.counters(), (3, 1, 0, 0, 0));

    // ---- round 2a: armed Solicited: a successful send CQE raises nothing.
    // Latency: last data beat on the MAC → the CQE's last DMA beat.
    r.csr(cq_doorbell_page(CQN) + CQ_ARM, CqArm::Solicited as u32);
    r.post(SendOpcode::RdmaWrite, 64, true, false); // 5: CQE index 3
    r.doorbell();
    r.run(200_000);
    r.check_cqe(3, 5);
    let cqe_addr = r.cq + 3 * CQE_SIZE as u64;
    let (_, at) = *r.writes.iter().rev().find(|w| w.0 == cqe_addr).unwrap();
    eprintln!(
        "64-octet signaled RDMA Write: last mac_tx beat at {}, CQE written at {} ({:+} clocks)",
        r.last_mac_beat,
        at,
        at as i64 - r.last_mac_beat as i64
    );
    assert!(
        !r.irq_seen,
        "no event for a successful send CQE with a Solicited arm"
    );
    assert_eq!(r.counters(), (4, 1, 0, 0, 0));

    // ---- round 2b: the consumer doorbell frees 0..2, the CQ wraps (phase
    // 0); arm NextCompletion: one event on the first of them
    r.csr(cq_doorbell_page(CQN) + CQ_CONSUMER, 3);
    r.csr(cq_doorbell_page(CQN) + CQ_ARM, CqArm::NextCompletion as u32);
    r.post(SendOpcode::Send, 5000, true, false); // 6: CQE index 4 (slot 0)
    r.post(SendOpcode::RdmaWrite, 1, false, false); // 7: none
    r.post(SendOpcode::RdmaWrite, 10, true, false); // 8: CQE index 5 (slot 1)
    r.doorbell();
    r.run(400_000);
    r.check_cqe(4, 6);
    r.check_cqe(5, 8);
    r.check_cqe(2, 4); // slot 2 still the first pass's
    let e = r.event(1);
    assert_eq!(
        (e.kind, e.handle, e.phase),
        (EventKind::CqCompletion, CQN, true)
    );
    assert!(r.irq_seen);
    r.int_clear();
    assert_eq!(r.counters(), (6, 2, 0, 0, 0));

    // ---- round 3: a firmware event through the same EQ (index 2); then 3
    // CQEs without a consumer doorbell: index 6 (slot 2) is written, the
    // next overflows (CqOverflow event at EQ index 3, nothing written), the
    // last is dropped (the CQ is in Overflow)
    let fw_ev = Event {
        kind: EventKind::Established,
        handle: QPN,
        status: 0,
        peer_ip: 0x0A00_0002,
        peer_port: 40000,
        local_port: 7000,
        ird: 1,
        ord: 1,
        private_data_len: 0,
        mpa_revision: 1,
        crc: true,
        markers: false,
        listen_id: 0,
        phase: false,
    };
    r.quiesce();
    r.hal.post_event(&fw_ev).expect("EVENT_PUSH");
    let before = r.read(r.cq, CQE_SIZE << CQ_LOG2);
    r.post(SendOpcode::Send, 70, true, false); // 9: CQE index 6 (slot 2)
    r.post(SendOpcode::RdmaWrite, 80, true, false); // 10: overflow
    r.post(SendOpcode::Send, 90, true, false); // 11: dropped
    r.doorbell();
    r.run(400_000);
    r.check_cqe(6, 9);
    let after = r.read(r.cq, CQE_SIZE << CQ_LOG2);
    assert_eq!(
        before[..2 * CQE_SIZE],
        after[..2 * CQE_SIZE],
        "unconsumed CQEs overwritten"
    );
    assert_eq!(
        before[3 * CQE_SIZE..],
        after[3 * CQE_SIZE..],
        "unconsumed CQEs overwritten"
    );
    assert_eq!(
        r.event(2),
        Event {
            phase: true,
            ..fw_ev
        },
        "firmware event"
    );
    let e = r.event(3);
    assert_eq!(
        (e.kind, e.handle, e.phase),
        (EventKind::CqOverflow, CQN, true)
    );
    assert_eq!(r.counters(), (7, 4, 1, 1, 0));
    r.int_clear();

    // ---- the EQ is full (4 entries, consumer 0): a firmware event is
    // dropped, INT_EQ_OVERFLOW and irq; nothing written past the ring
    r.quiesce();
    r.hal.post_event(&fw_ev).expect("EVENT_PUSH");
    r.run(100_000);
    assert_eq!(r.int_status() & csr::INT_EQ_OVERFLOW, csr::INT_EQ_OVERFLOW);
    assert!(r.irq_seen);
    assert_eq!(r.counters(), (7, 4, 1, 1, 1));
    // the firmware's event slot is free again (popped)
    r.quiesce();
    assert_eq!(
        r.node.borrow_mut().fw_read(port::EVENT_PUSH) & 1,
        0,
        "EVENT_PUSH full"
    );
    // after the host consumed, the next firmware event goes to index 4
    // (slot 0, second pass: phase 0)
    r.csr(csr::EQ_CONSUMER, 4);
    r.quiesce();
    r.hal.post_event(&fw_ev).expect("EVENT_PUSH");
    r.run(100_000);
    assert_eq!(
        r.event(4),
        Event {
            phase: false,
            ..fw_ev
        }
    );
    assert_eq!(r.node.borrow().core.get_rxs_eq_prod(), 5);
    r.guards_intact();
    let n = r.node.borrow();
    assert_eq!(n.core.get_cnt_scq_no_cq(), 0);
    assert_eq!(n.core.get_cnt_tx_desc_drop(), 0);
    assert_eq!(n.core.get_cnt_tx_bad_wqe(), 1);
    let cyc = n.core.cycle();
    eprintln!(
        "{cyc} clocks in {:.2} s: {:.0} clocks/s",
        t0.elapsed().as_secs_f64(),
        cyc as f64 / t0.elapsed().as_secs_f64()
    );
}

/// A QP whose send CQ the core has no context for (send_cqn >= 16): its
/// completions are taken (the send queue goes on) and counted, nothing is
/// written anywhere.
#[test]
fn qp_without_send_cq_counts_and_writes_nothing() {
    let mut r = Rig::new(8, 0);
    let mut q = r.hal.read_qp(QPN).expect("QP read back");
    q.send_cqn = 40;
    r.hal.write_qp(QPN, &q).expect("QP write");
    r.post(SendOpcode::RdmaWrite, 100, true, false);
    r.post(SendOpcode::Send, 10, true, false);
    r.doorbell();
    r.run(200_000);
    assert_eq!(r.frames, 2);
    let n = r.node.borrow();
    assert_eq!(n.core.get_cnt_scq_no_cq(), 2);
    assert_eq!(n.core.get_cnt_rxs_cqe(), 0);
    drop(n);
    assert!(r.writes.is_empty(), "DMA writes {:x?}", r.writes);
    r.guards_intact();
}
