//! The firmware port, the host registers and the TX path joined inside
//! `rnic_core` (Verilator): the firmware programs a connection and a QP
//! through `fw_*` (`rnic_fw::hal::Hal::write_conn`/`write_qp` on
//! `CoSimHal`), the host writes WQEs into host memory (`SendWqe::emit`) and
//! rings the SQ doorbell through BAR0 (`csr_*` at
//! `qp_doorbell_page(qpn) + QP_SQ_PRODUCER`), and the frames on `mac_tx_*`
//! must parse with smoltcp (`rnic_wire::model::parse_frame`, IPv4 and TCP
//! checksums) and carry, segment for segment, the TCP payload and sequence
//! numbers `rnic_wire::model::TxStream` sends for the same work requests. A
//! frame the firmware sends with `Hal::send_frame` must leave whole, octet
//! for octet, between data frames.

mod core_rig;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rnic_fw::hal::{Hal, HalExt};
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::MacTxPort;
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::{
    ConnContext, ConnMode, QpContext, RtrKind, MPA_CRC_RX, MPA_CRC_TX, MPA_MARKERS_TX, NO_CONN,
};
use rnic_wire::abi::csr::qp_doorbell_page;
use rnic_wire::abi::doorbell::{QP_RQ_PRODUCER, QP_SQ_PRODUCER};
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::wqe::{SendOpcode, SendWqe, Sge, SgeList, WQE_FLAG_SIGNALED, WQE_SIZE};
use rnic_wire::model::{parse_frame, Endpoint, Message, MpaSettings, Segment, TxStream};

/// CRC on, markers off, SeqStart 1000.
const MPA_DEFAULT: MpaSettings = MpaSettings {
    crc: true,
    markers: false,
    seq_start: 1000,
};

/// The window we offer (octets); its field as sent (no scaling).
const RCV_WND: u32 = 0xFFFF;

/// What left on `mac_tx_*`, in order.
#[derive(Debug, PartialEq)]
enum Out {
    Data,
    Fw(usize),
}

struct Rig {
    node: Rc<RefCell<FwNode>>,
    hal: CoSimHal,
    host: HostCsr,
    mac: MacTxPort,
    dma: DmaServer,
    mem: HostMemory,
    rng: Rng,
    qpn: u32,
    local: Endpoint,
    peer: Endpoint,
    ring: u64,
    log2: u32,
    prod: u32,
    ack: u32,
    tx: TxStream,
    expect: VecDeque<Segment>,
    cq_expect: VecDeque<(u32, u64)>,
    /// Frames the firmware sent, not yet seen.
    fw_expect: VecDeque<(usize, Vec<u8>)>,
    out: Vec<Out>,
    ready_p: f64,
    /// Clock of the first beat taken on `mac_tx`.
    first_beat: Option<u64>,
}

impl Rig {
    fn new(seed: u64) -> Rig {
        let node = FwNode::shared();
        {
            let mut n = node.borrow_mut();
            // This rig serves DMA and sinks mac_tx_* itself.
            n.serve_host_side = false;
            n.core.set_fw_raw_to_mac(1);
            n.core.set_tx_cq_pop(1);
        }
        Rig {
            hal: CoSimHal::new(node.clone()),
            host: HostCsr { node: node.clone() },
            node,
            mac: MacTxPort::new(),
            dma: DmaServer::new(DmaConfig {
                read_jitter: 40,
                seed,
                ..DmaConfig::default()
            }),
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
            rng: Rng::new(seed),
            qpn: 0,
            local: Endpoint {
                mac: [2, 0, 0, 0, 0, 1],
                ip: [10, 0, 0, 1],
                port: 0,
            },
            peer: Endpoint {
                mac: [2, 0x1c, 0x33, 0x44, 0x55, 0x66],
                ip: [10, 0, 1, 7],
                port: 0,
            },
            ring: 0,
            log2: 0,
            prod: 0,
            ack: 0,
            tx: TxStream::new(MPA_DEFAULT, 1460),
            expect: VecDeque::new(),
            cq_expect: VecDeque::new(),
            fw_expect: VecDeque::new(),
            out: Vec::new(),
            ready_p: 1.0,
            first_beat: None,
        }
    }

    /// The firmware writes connection `conn` and QP `qpn` bound to it: the
    /// connection first (the QP write reads its TX fields), or with
    /// `qp_first` the firmware's own order (the connection's write entering
    /// RDMA mode then reloads the QP's stream state).
    fn program(
        &mut self,
        qpn: u32,
        conn: u32,
        mpa: MpaSettings,
        emss: u16,
        log2: u32,
        qp_first: bool,
    ) {
        self.qpn = qpn;
        self.log2 = log2;
        self.local.port = 5000 + qpn as u16;
        self.peer.port = 40000 + conn as u16;
        self.tx = TxStream::new(mpa, emss);
        self.ack = self.rng.next_u32();
        let mut flags = MPA_CRC_RX;
        if mpa.crc {
            flags |= MPA_CRC_TX;
        }
        if mpa.markers {
            flags |= MPA_MARKERS_TX;
        }
        let c = ConnContext {
            mode: ConnMode::Rdma,
            mpa_flags: flags,
            snd_wscale: 0,
            rcv_wscale: 0,
            local_ip: u32::from_be_bytes(self.local.ip),
            peer_ip: u32::from_be_bytes(self.peer.ip),
            local_port: self.local.port,
            peer_port: self.peer.port,
            local_mac: self.local.mac,
            peer_mac: self.peer.mac,
            mss: emss,
            mulpdu: self.tx.mulpdu(),
            rcv_nxt: self.ack,
            snd_nxt: mpa.seq_start,
            snd_una: mpa.seq_start,
            snd_wnd: 0x10000,
            rcv_wnd: RCV_WND,
            tx_marker_ref: mpa.seq_start,
            rx_marker_ref: self.rng.next_u32(),
            qpn,
        };
        if !qp_first {
            self.hal.write_conn(conn, &c).expect("connection write");
        } else {
            // as the firmware does: the connection in Firmware mode during
            // the handshake (other sequence numbers), the QP, then RDMA mode
            let mut f = c;
            f.mode = ConnMode::Firmware;
            f.mpa_flags = 0;
            f.snd_nxt = self.rng.next_u32();
            f.tx_marker_ref = self.rng.next_u32();
            self.hal.write_conn(conn, &f).expect("connection write");
        }
        self.ring = self.mem.alloc_dma((WQE_SIZE as u64) << log2, 4096).unwrap();
        let q = QpContext {
            state: QpState::Rts,
            flags: 0,
            rtr: RtrKind::None,
            sq_log2: log2 as u8,
            pd: 1,
            send_cqn: 0,
            recv_cqn: 0,
            sq_ring: self.ring,
            rq_ring: 0,
            rq_log2: 0,
            conn,
            ird: 1,
            ord: 1,
            tx_send_msn: 1,
            tx_read_msn: 1,
            rx_send_msn: 1,
            rx_read_msn: 1,
            term_cause: 0,
        };
        self.hal.write_qp(qpn, &q).expect("QP write");
        core_rig::register_identity_fw(&mut self.hal, q.pd);
        if qp_first {
            self.hal.write_conn(conn, &c).expect("connection write");
        }
        self.prod = 0;
    }

    /// Writes a WQE into the ring (payload in a fresh DMA buffer) and
    /// records the reference's segments. No doorbell.
    fn post(&mut self, msg: &Message, signaled: bool) {
        let wr_id = self.rng.next_u64();
        let (opcode, roff, rstag, data) = match msg {
            Message::Write { stag, to, data } => (SendOpcode::RdmaWrite, *to, *stag, *data),
            Message::Send { data, .. } => (SendOpcode::Send, 0, 0, *data),
            _ => unreachable!("Write and Send only"),
        };
        let mut sges = Vec::new();
        if !data.is_empty() {
            let a = self.mem.alloc_dma(data.len() as u64 + 64, 8).unwrap() + self.rng.below(8);
            self.mem.write(a, data).unwrap();
            sges.push(Sge {
                addr: a,
                length: data.len() as u32,
                lkey: 0x77,
            });
        }
        let wqe = SendWqe {
            wr_id,
            opcode,
            flags: if signaled { WQE_FLAG_SIGNALED } else { 0 },
            imm_or_inv: 0,
            remote_offset: roff,
            remote_stag: rstag,
            sges: SgeList::new(&sges).unwrap(),
            inline: None,
        };
        let mut b = [0u8; WQE_SIZE];
        wqe.emit(&mut b).unwrap();
        let slot = (self.prod & ((1 << self.log2) - 1)) as u64;
        self.mem
            .write(self.ring + slot * WQE_SIZE as u64, &b)
            .unwrap();
        if signaled {
            self.cq_expect.push_back((self.prod, wr_id));
        }
        self.prod = self.prod.wrapping_add(1);
        let segs = self.tx.send(msg).unwrap();
        self.expect.extend(segs);
    }

    /// The host rings the SQ doorbell through BAR0.
    fn doorbell(&mut self) {
        self.host
            .write(qp_doorbell_page(self.qpn) + QP_SQ_PRODUCER, self.prod);
    }

    /// Pins of the test's DMA server and MAC sink quiet, so clocks spent
    /// in `FwNode` (firmware or BAR0 accesses) neither lose a DMA beat nor
    /// a MAC beat: the model waits.
    fn quiesce(&mut self) {
        let mut n = self.node.borrow_mut();
        let m = &mut n.core.0;
        m.set_mac_tx_ready(0);
        m.set_dma_rd_req_ready(0);
        m.set_dma_rd_cpl_valid(0);
        m.set_dma_wr_ready(0);
    }

    /// One clock with the DMA server and the MAC sink.
    fn cycle(&mut self) -> bool {
        let ready = self.ready_p >= 1.0 || self.rng.chance(self.ready_p);
        let mut n = self.node.borrow_mut();
        let p = &mut n.core.0;
        self.mac.drive_ready(p, ready);
        self.dma.drive(p, &mut self.mem);
        p.eval();
        let mut busy = !self.dma.idle() || p.get_mac_tx_valid() != 0;
        if ready && p.get_mac_tx_valid() != 0 && self.first_beat.is_none() {
            self.first_beat = Some(p.cycle());
        }
        if p.get_tx_cq_valid() != 0 {
            busy = true;
            let want = self.cq_expect.pop_front().expect("an expected completion");
            assert_eq!(
                (p.get_tx_cq_idx() as u32, p.get_tx_cq_wr_id()),
                want,
                "send completion"
            );
            assert_eq!(p.get_tx_cq_status(), 0, "completion status");
        }
        let f = self.mac.sample(&*p);
        self.dma.sample(&*p, &mut self.mem);
        p.tick();
        drop(n);
        if let Some(f) = f {
            self.check_frame(&f);
        }
        busy
    }

    fn check_frame(&mut self, f: &[u8]) {
        if let Some((id, want)) = self.fw_expect.front() {
            if f == want.as_slice() {
                self.out.push(Out::Fw(*id));
                self.fw_expect.pop_front();
                return;
            }
        }
        let v = parse_frame(f).expect("data frame parses with smoltcp, checksums good");
        assert_eq!(
            v.src_mac, self.local.mac,
            "source MAC from the firmware's context"
        );
        assert_eq!(v.dst_mac, self.peer.mac, "destination MAC");
        assert_eq!(v.tuple.src_ip, self.local.ip);
        assert_eq!(v.tuple.dst_ip, self.peer.ip);
        assert_eq!(v.tuple.src_port, self.local.port);
        assert_eq!(v.tuple.dst_port, self.peer.port);
        assert_eq!(v.window, RCV_WND as u16);
        assert_eq!(v.ack, Some(self.ack), "ACK number = the context's rcv_nxt");
        let want = self
            .expect
            .pop_front()
            .unwrap_or_else(|| panic!("data frame {}: none expected", self.out.len()));
        assert_eq!(v.seq, want.seq, "seq of frame {}", self.out.len());
        assert!(
            v.payload == want.payload.as_slice(),
            "payload of frame {} differs ({} vs {} octets)",
            self.out.len(),
            v.payload.len(),
            want.payload.len()
        );
        self.out.push(Out::Data);
    }

    /// Clocks until `n` more frames have left (or everything is out).
    fn run_frames(&mut self, n: usize, limit: u64) {
        let goal = self.out.len() + n;
        let mut c = 0;
        while self.out.len() < goal {
            self.cycle();
            c += 1;
            assert!(c < limit, "hung after {} frames", self.out.len());
        }
    }

    /// Clocks until all is out and the core has been quiet for a while.
    fn run(&mut self, limit: u64) {
        let mut quiet = 0;
        let mut c = 0;
        while quiet < 400 {
            c += 1;
            assert!(
                c < limit,
                "hung: {} segments, {} firmware frames left",
                self.expect.len(),
                self.fw_expect.len()
            );
            quiet = if self.cycle() { 0 } else { quiet + 1 };
        }
        assert!(
            self.expect.is_empty(),
            "{} segments missing",
            self.expect.len()
        );
        assert!(self.fw_expect.is_empty(), "firmware frame missing");
        assert!(self.cq_expect.is_empty(), "completions missing");
        assert!(
            self.dma.faults().is_empty(),
            "DMA faults {:?}",
            self.dma.faults()
        );
        let n = self.node.borrow();
        assert_eq!(n.core.get_cnt_tx_desc_drop(), 0, "framer drops");
        assert_eq!(n.core.get_cnt_dma_rd_cpl_bad(), 0, "bad DMA tags");
        assert_eq!(self.mac.errors(), 0, "MAC TX stream errors");
    }

    /// A frame from the firmware (ARP-like broadcast, random body).
    fn fw_frame(&mut self, id: usize, len: usize) -> Vec<u8> {
        let mut f = self.rng.bytes(len);
        f[..6].copy_from_slice(&[0xff; 6]);
        f[6..12].copy_from_slice(&self.local.mac);
        f[12..14].copy_from_slice(&[0x08, 0x06]);
        // an id in the body so two frames never compare equal by chance
        f[14] = id as u8;
        f
    }

    /// The firmware sends `f` (`Hal::send_frame`) while the test's pins wait.
    fn fw_send(&mut self, id: usize, f: Vec<u8>) {
        self.quiesce();
        self.hal.send_frame(&f).expect("send_frame");
        self.fw_expect.push_back((id, f));
    }
}

fn random_msg(rng: &mut Rng, max: usize) -> (bool, u32, u64, Vec<u8>) {
    let len = rng.below(max as u64 + 1) as usize;
    (
        rng.chance(0.5),
        rng.next_u32(),
        rng.next_u64(),
        rng.bytes(len),
    )
}

/// Firmware-programmed connection and QP, BAR0 doorbells: the frames equal
/// TxStream's, for CRC/markers on and off and two EMSS values.
#[test]
fn firmware_programmed_qp_sends_txstream_frames() {
    for (i, (crc, markers, emss)) in [
        (true, false, 1460u16),
        (true, true, 536),
        (false, true, 900),
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = Rig::new(10 + i as u64);
        let seq_start = 0u32.wrapping_sub(r.rng.below(6000) as u32);
        let mpa = MpaSettings {
            crc,
            markers,
            seq_start,
        };
        let (qpn, conn) = (3 + i as u32 * 20, 17 + i as u32 * 20);
        r.program(qpn, conn, mpa, emss, 4, i == 1);
        r.ready_p = 0.8;
        let mut total = 0;
        for round in 0..3 {
            let k = 1 + r.rng.below(5) as usize;
            for _ in 0..k {
                let (write, stag, to, data) = random_msg(&mut r.rng, 5000);
                let m = if write {
                    Message::Write {
                        stag,
                        to,
                        data: &data,
                    }
                } else {
                    Message::Send {
                        data: &data,
                        solicited: false,
                        invalidate: None,
                    }
                };
                let sig = r.rng.chance(0.7);
                r.post(&m, sig);
            }
            total += k;
            r.quiesce();
            r.doorbell();
            r.run(400_000);
            eprintln!(
                "case {i} round {round}: {total} WRs, {} frames so far",
                r.out.len()
            );
        }
        assert!(!r.out.is_empty());
        let n = r.node.borrow();
        assert_eq!(n.core.get_cnt_db_bad(), 0);
        assert!(n.core.get_cnt_db() >= 3, "doorbells counted");
    }
}

/// Doorbell writes at other offsets of the page do not start the send
/// queue: QP_RQ_PRODUCER goes to the receive side, an unknown offset is
/// counted in cnt_db_bad; a QP written with conn = NO_CONN has no TX side
/// (its send side is off: a later doorbell sends nothing).
#[test]
fn other_doorbell_offsets_do_not_send() {
    let mut r = Rig::new(7);
    r.program(5, 9, MPA_DEFAULT, 1460, 3, false);
    let data = r.rng.bytes(300);
    r.post(
        &Message::Send {
            data: &data,
            solicited: false,
            invalidate: None,
        },
        true,
    );
    r.quiesce();
    r.host.write(qp_doorbell_page(5) + QP_RQ_PRODUCER, r.prod);
    r.host.write(qp_doorbell_page(5) + 0x10, r.prod);
    for _ in 0..2000 {
        r.cycle();
    }
    assert!(r.out.is_empty(), "no frame without the SQ doorbell");
    assert_eq!(
        r.node.borrow().core.get_cnt_db_bad(),
        1,
        "unknown offset counted"
    );
    // a QP rewritten with NO_CONN: no TX side
    r.quiesce();
    r.doorbell();
    r.run(100_000);
    assert_eq!(r.out, vec![Out::Data]);
    let q = QpContext {
        state: QpState::Rts,
        flags: 0,
        rtr: RtrKind::None,
        sq_log2: 3,
        pd: 1,
        send_cqn: 0,
        recv_cqn: 0,
        sq_ring: 0xdead_0000,
        rq_ring: 0,
        rq_log2: 0,
        conn: NO_CONN,
        ird: 1,
        ord: 1,
        tx_send_msn: 9,
        tx_read_msn: 9,
        rx_send_msn: 1,
        rx_read_msn: 1,
        term_cause: 0,
    };
    r.quiesce();
    r.hal.write_qp(5, &q).expect("QP write");
    let data = r.rng.bytes(100);
    r.post(
        &Message::Send {
            data: &data,
            solicited: false,
            invalidate: None,
        },
        true,
    );
    r.quiesce();
    r.doorbell();
    for _ in 0..5000 {
        r.cycle();
    }
    // Since the QP send stop (docs/rtl.md "QP send stop"), a QP context
    // without a connection has its send side off: the WQE is skipped, not
    // sent (before, the old ring configuration kept sending).
    assert_eq!(
        r.out,
        vec![Out::Data],
        "nothing sent for a QP with no connection"
    );
}

/// Frames the firmware sends leave whole and unchanged between data frames
/// of a long RDMA Write, with random MAC back-pressure.
#[test]
fn firmware_frames_between_data_frames() {
    let t0 = std::time::Instant::now();
    let mut r = Rig::new(99);
    r.program(1, 2, MPA_DEFAULT, 1460, 4, true);
    // latency: BAR0 SQ doorbell write → first mac_tx beat, a 64-octet Write
    let data = r.rng.bytes(64);
    r.post(
        &Message::Write {
            stag: 0x99,
            to: 0,
            data: &data,
        },
        false,
    );
    r.quiesce();
    let c0 = r.node.borrow().core.cycle();
    r.doorbell();
    r.run(100_000);
    let lat = r.first_beat.unwrap() - c0;
    eprintln!("BAR0 doorbell write clock -> first mac_tx beat: {lat} clocks");
    assert!(lat < 400, "latency {lat}");
    r.out.clear();
    r.ready_p = 0.7;
    let data = r.rng.bytes(40 * 1440);
    r.post(
        &Message::Write {
            stag: 0x1234,
            to: 0x10_0000,
            data: &data,
        },
        true,
    );
    r.quiesce();
    r.doorbell();
    r.run_frames(3, 200_000);
    for id in 0..4 {
        let len = [60, 1514, 64, 333][id];
        let f = r.fw_frame(id, len);
        r.fw_send(id, f);
        r.run_frames(2 + id, 200_000);
    }
    r.run(400_000);
    let pos: Vec<usize> = (0..4)
        .map(|id| r.out.iter().position(|o| *o == Out::Fw(id)).unwrap())
        .collect();
    eprintln!("firmware frames at positions {pos:?} of {}", r.out.len());
    for &p in &pos {
        assert!(p > 0 && p + 1 < r.out.len(), "between data frames");
        assert!(
            r.out[p - 1] == Out::Data || r.out[p + 1] == Out::Data,
            "interleaved with data"
        );
    }
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "in order");
    assert_eq!(r.out.iter().filter(|o| **o == Out::Data).count(), 40);
    let cyc = r.node.borrow().core.cycle();
    eprintln!(
        "{cyc} clocks in {:.2} s: {:.0} clocks/s",
        t0.elapsed().as_secs_f64(),
        cyc as f64 / t0.elapsed().as_secs_f64()
    );
}
