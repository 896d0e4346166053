//! TX send state of `rnic_core` in Verilator: SND.NXT kept by TX, SND.UNA
//! from the peer's ACKs, the peer's window respected, ACK coalescing and
//! piggybacking, the MULPDU limit (docs/rtl.md "TX send state").
//!
//! Independent references: WQEs written with `SendWqe::emit`; every frame
//! parsed with smoltcp (`rnic_wire::model::parse_frame`, checksums checked);
//! data frames equal `rnic_wire::model::TxStream`'s segments byte for byte;
//! pure ACKs equal `rnic_wire::model::net::ack_frame`; the peer's ACKs and
//! data are built with smoltcp (`tcp_frame`, `data_frame`). The window rule
//! is checked on every data frame: its end never passes the right edge
//! (SEG.ACK + SEG.WND) of the newest ACK the peer sent (RFC 9293 §3.8.6).

mod core_rig;

use std::collections::VecDeque;

use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::{MacRxPort, MacTxPort};
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::MPA_CRC_TX;
use rnic_wire::abi::cqe::WcStatus;
use rnic_wire::abi::wqe::{SendOpcode, SendWqe, Sge, SgeList, WQE_FLAG_SIGNALED, WQE_SIZE};
use rnic_wire::model::net::{ack_frame, data_frame, tcp_frame};
use rnic_wire::model::{parse_frame, Endpoint, Message, MpaSettings, Segment, TxStream};
use rnic_wire::net::{TcpControl, TcpRepr, TcpSeqNumber};
use verilator_sys::rnic_core::Model;

/// The window we offer (octets, no scaling).
const RCV_WND: u32 = 0xFFFF;
/// `tx_ack::ACK_DELAY_CLOCKS`: a lone segment's ACK waits at most this long.
const ACK_DELAY: u64 = 2048;

/// The core model: the sim crate implements `MacRxPins`, `MacTxPins` and
/// `DmaPins` on it.
type Core = Model;

fn seq_le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) >= 0
}

/// A QP, its connection and the peer's view of it.
struct Qp {
    qpn: u32,
    local: Endpoint,
    peer: Endpoint,
    ring: u64,
    log2: u32,
    prod: u32,
    tx: TxStream,
    expect: VecDeque<Segment>,
    /// (WQE index, wr_id, status) of signaled WQEs, in order.
    cq_expect: VecDeque<(u32, u64, u8)>,
    /// The peer's RCV.NXT: the end of the device's data seen in order.
    peer_rcv: u32,
    /// The peer's own sequence number (the device's RCV.NXT).
    peer_seq: u32,
    /// Right edge of the peer's window as last told to the device.
    edge: u32,
    /// Largest octets in flight seen (end of a frame − newest ACK told).
    max_flight: u32,
    told_ack: u32,
    data_frames: u64,
    pure_acks: Vec<u32>,
    /// The ACK number of the last frame (data or pure ACK) from the device.
    last_ack: u32,
}

struct Rig {
    core: Core,
    mac: MacTxPort,
    macrx: MacRxPort,
    dma: DmaServer,
    mem: HostMemory,
    rng: Rng,
    qps: Vec<Qp>,
    first_beat: Option<u64>,
    last_beat: u64,
}

impl Rig {
    fn new(seed: u64) -> Rig {
        let mut core = Model::new();
        core.reset(4);
        core.set_tx_cq_pop(1);
        core.set_rx_pay_ready(1);
        core.set_tx_wnd_en(1);
        Rig {
            core,
            mac: MacTxPort::new(),
            macrx: MacRxPort::new(3),
            dma: DmaServer::new(DmaConfig {
                seed,
                log: false,
                ..DmaConfig::default()
            }),
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
            rng: Rng::new(seed),
            qps: Vec::new(),
            first_beat: None,
            last_beat: 0,
        }
    }

    /// Connection (with the peer's window `snd_wnd`, MULPDU from `emss`
    /// unless `mulpdu` is given), then its QP.
    fn add_qp(&mut self, qpn: u32, conn: u32, emss: u16, snd_wnd: u32, mulpdu: Option<u16>) {
        let local = Endpoint {
            mac: [2, 0, 0, 0, 0, 1],
            ip: [10, 0, 0, 1],
            port: 5000 + qpn as u16,
        };
        let peer = Endpoint {
            mac: [2, 0, 0, 0, 0, 2],
            ip: [10, 0, 1, conn as u8],
            port: 40000 + conn as u16,
        };
        let seq_start = self.rng.next_u32();
        let mpa = MpaSettings {
            crc: true,
            markers: false,
            seq_start,
        };
        let tx = TxStream::new(mpa, emss);
        let ack = self.rng.next_u32();
        let log2 = 6;
        let ring = core_rig::write_ct_qp(
            &mut self.core,
            &mut self.mem,
            &core_rig::CtQp {
                qpn,
                conn,
                local: &local,
                peer: &peer,
                mpa_flags: MPA_CRC_TX as u64,
                rcv_nxt: ack,
                rcv_wnd: RCV_WND,
                seq_start,
                snd_wnd: Some(snd_wnd),
                mulpdu: mulpdu.unwrap_or(tx.mulpdu()),
                log2,
            },
        );
        self.qps.push(Qp {
            qpn,
            local,
            peer,
            ring,
            log2,
            prod: 0,
            tx,
            expect: VecDeque::new(),
            cq_expect: VecDeque::new(),
            peer_rcv: seq_start,
            peer_seq: ack,
            edge: seq_start.wrapping_add(snd_wnd),
            max_flight: 0,
            told_ack: seq_start,
            data_frames: 0,
            pure_acks: Vec::new(),
            last_ack: ack,
        });
    }

    /// A signaled RDMA Write of `len` random octets; `refused`: the device
    /// must complete it with LocalQpOperationError and send nothing.
    fn post_write(&mut self, qi: usize, len: usize, refused: bool) {
        let data = self.rng.bytes(len);
        let a = self.mem.alloc_dma(len as u64 + 64, 8).unwrap();
        self.mem.write(a, &data).unwrap();
        let wr_id = self.rng.next_u64();
        let (stag, to) = (self.rng.next_u32(), self.rng.next_u64());
        let wqe = SendWqe {
            wr_id,
            opcode: SendOpcode::RdmaWrite,
            flags: WQE_FLAG_SIGNALED,
            imm_or_inv: 0,
            remote_offset: to,
            remote_stag: stag,
            sges: SgeList::new(&[Sge {
                addr: a,
                length: len as u32,
                lkey: 0x77,
            }])
            .unwrap(),
            inline: None,
        };
        let mut b = [0u8; WQE_SIZE];
        wqe.emit(&mut b).unwrap();
        let q = &mut self.qps[qi];
        let slot = (q.prod & ((1 << q.log2) - 1)) as u64;
        self.mem.write(q.ring + slot * WQE_SIZE as u64, &b).unwrap();
        let status = if refused {
            WcStatus::LocalQpOperationError as u8
        } else {
            0
        };
        q.cq_expect.push_back((q.prod, wr_id, status));
        q.prod = q.prod.wrapping_add(1);
        if !refused {
            let segs =
                q.tx.send(&Message::Write {
                    stag,
                    to,
                    data: &data,
                })
                .unwrap();
            q.expect.extend(segs);
        }
    }

    fn doorbell(&mut self, qi: usize) {
        let (qpn, prod) = (self.qps[qi].qpn, self.qps[qi].prod);
        self.core.set_db_wr_valid(1);
        self.core.set_db_wr_qpn(qpn as u64);
        self.core.set_db_wr_value(prod as u64);
        self.cycle();
        self.core.set_db_wr_valid(0);
    }

    /// The peer acknowledges `ack` with window `wnd` (a pure ACK, smoltcp).
    fn peer_ack(&mut self, qi: usize, ack: u32, wnd: u16) {
        let q = &mut self.qps[qi];
        let tcp = TcpRepr {
            src_port: q.peer.port,
            dst_port: q.local.port,
            control: TcpControl::None,
            seq_number: TcpSeqNumber(q.peer_seq as i32),
            ack_number: Some(TcpSeqNumber(ack as i32)),
            window_len: wnd,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload: &[],
        };
        let f = tcp_frame(&q.peer, &q.local, &tcp);
        if seq_le(q.told_ack, ack) && seq_le(ack, q.peer_rcv) {
            q.told_ack = ack;
            let e = ack.wrapping_add(wnd as u32);
            if seq_le(q.edge, e) {
                q.edge = e;
            }
        }
        self.macrx.push(f, false);
    }

    /// The peer sends `n` in-order data segments of `len` octets.
    fn peer_data(&mut self, qi: usize, n: usize, len: usize) {
        for _ in 0..n {
            let data = self.rng.bytes(len);
            let q = &mut self.qps[qi];
            let f = data_frame(&q.peer, &q.local, q.peer_seq, q.told_ack, &data);
            q.peer_seq = q.peer_seq.wrapping_add(len as u32);
            self.macrx.push(f, false);
        }
    }

    fn cycle(&mut self) -> bool {
        self.mac.drive_ready(&mut self.core, true);
        let mut busy = self.macrx.pending() > 0;
        self.macrx.drive(&mut self.core);
        self.dma.drive(&mut self.core, &mut self.mem);
        self.core.eval();
        busy |= !self.dma.idle();
        if self.core.get_mac_tx_valid() != 0 {
            busy = true;
            self.first_beat.get_or_insert(self.core.cycle());
            self.last_beat = self.core.cycle();
        }
        if self.core.get_tx_cq_valid() != 0 {
            busy = true;
            let qp = self.core.get_tx_cq_qp() as u32;
            let q = self.qps.iter_mut().find(|q| q.qpn == qp).expect("known QP");
            let want = q.cq_expect.pop_front().expect("an expected completion");
            let got = (
                self.core.get_tx_cq_idx() as u32,
                self.core.get_tx_cq_wr_id(),
                self.core.get_tx_cq_status() as u8,
            );
            assert_eq!(got, want, "completion of QP {qp}");
        }
        let f = self.mac.sample(&self.core);
        self.dma.sample(&self.core, &mut self.mem);
        self.core.tick();
        if let Some(f) = f {
            self.check_frame(&f);
        }
        busy
    }

    fn check_frame(&mut self, f: &[u8]) {
        let v = parse_frame(f).expect("frame parses with smoltcp, checksums good");
        let q = self
            .qps
            .iter_mut()
            .find(|q| q.local.port == v.tuple.src_port)
            .expect("a QP's port");
        assert_eq!(v.tuple.dst_port, q.peer.port);
        let ack = v.ack.expect("ACK set");
        assert!(seq_le(q.last_ack, ack), "ACK number went back");
        q.last_ack = ack;
        if v.payload.is_empty() {
            // The MAC pads it to the Ethernet minimum: 60 octets, zeros.
            let mut want = ack_frame(&q.local, &q.peer, q.peer_rcv, ack);
            want.resize(60, 0);
            assert_eq!(f, want.as_slice());
            q.pure_acks.push(ack);
            return;
        }
        let want = q.expect.pop_front().expect("a data frame expected");
        assert_eq!(v.seq, want.seq, "QP {} seq", q.qpn);
        assert!(v.payload == want.payload.as_slice(), "QP {} payload", q.qpn);
        let end = v.seq.wrapping_add(v.payload.len() as u32);
        // RFC 9293 §3.8.6: never beyond the window the peer offered.
        assert!(
            seq_le(end, q.edge),
            "QP {}: frame ends {:#x}, past the window edge {:#x}",
            q.qpn,
            end,
            q.edge
        );
        q.max_flight = q.max_flight.max(end.wrapping_sub(q.told_ack));
        q.peer_rcv = end;
        q.data_frames += 1;
    }

    /// Clocks until quiet for `quiet` clocks (or `limit`).
    fn run_quiet(&mut self, quiet: u64, limit: u64) -> u64 {
        let start = self.core.cycle();
        let mut q = 0;
        while q < quiet {
            assert!(self.core.cycle() - start < limit, "hung");
            q = if self.cycle() { 0 } else { q + 1 };
        }
        self.core.cycle() - start
    }

    /// Device's connection-table fields through the read port.
    fn ct_read(&mut self, conn: u32) -> (u32, u32, u32) {
        self.core.set_ct_rd_idx(conn as u64);
        self.cycle();
        self.cycle();
        (
            self.core.get_ct_rd_snd_una() as u32,
            self.core.get_ct_rd_snd_nxt() as u32,
            self.core.get_ct_rd_snd_wnd() as u32,
        )
    }

    fn check_done(&self) {
        for q in &self.qps {
            assert!(
                q.expect.is_empty(),
                "QP {}: {} segments left",
                q.qpn,
                q.expect.len()
            );
            assert!(q.cq_expect.is_empty(), "QP {}: completions left", q.qpn);
        }
        assert!(self.dma.faults().is_empty(), "{:?}", self.dma.faults());
        assert_eq!(self.mac.errors(), 0);
        assert_eq!(self.core.get_cnt_tx_desc_drop(), 0);
        assert_eq!(self.core.get_cnt_tx_pay_err(), 0);
    }
}

/// SND.NXT follows the data on the wire; SND.UNA moves exactly to each
/// acceptable ACK (RFC 9293 §3.10.7.4: SND.UNA < SEG.ACK =< SND.NXT), not
/// for an ACK of unsent data or an old one; SND.WND takes the ACK's window.
#[test]
fn snd_una_follows_acks() {
    let mut rig = Rig::new(1);
    rig.add_qp(2, 5, 1460, 1 << 20, None);
    let (una0, nxt0, wnd0) = rig.ct_read(5);
    assert_eq!((una0, nxt0, wnd0), (rig.qps[0].told_ack, una0, 1 << 20));
    rig.post_write(0, 20000, false);
    rig.doorbell(0);
    rig.run_quiet(400, 200_000);
    rig.check_done();
    let end = rig.qps[0].peer_rcv;
    let (una, nxt, _) = rig.ct_read(5);
    assert_eq!(
        (una, nxt),
        (una0, end),
        "snd_nxt = the end of the data on the wire"
    );
    // ACK points: a few frame ends and one in the middle of a frame.
    let mut points: Vec<u32> = vec![
        una0.wrapping_add(100),
        una0.wrapping_add(3000),
        una0.wrapping_add(3001),
        end.wrapping_sub(1),
        end,
    ];
    points.sort_by_key(|p| p.wrapping_sub(una0));
    for (k, &a) in points.iter().enumerate() {
        let wnd = 1000 + 7 * k as u16;
        rig.peer_ack(0, a, wnd);
        rig.run_quiet(60, 10_000);
        let (una, _, w) = rig.ct_read(5);
        assert_eq!(una, a, "snd_una after ACK {k}");
        assert_eq!(w, wnd as u32, "snd_wnd after ACK {k}");
    }
    // An ACK of data never sent, and an old one: SND.UNA stays.
    rig.peer_ack(0, end.wrapping_add(8), 500);
    rig.peer_ack(0, una0.wrapping_add(100), 600);
    rig.run_quiet(60, 10_000);
    let (una, nxt, w) = rig.ct_read(5);
    assert_eq!((una, nxt), (end, end));
    assert_eq!(w, 1000 + 7 * 4, "no window from unacceptable ACKs");
    assert_eq!(
        rig.core.get_cnt_rx_fast(),
        7,
        "pure ACKs take the fast path"
    );
}

/// A 4 KiB window: never more than the window beyond SND.UNA on any frame;
/// the device stops; each window update releases more, until the whole
/// 64 KiB arrived byte for byte.
#[test]
fn window_limits_flight() {
    let mut rig = Rig::new(2);
    let wnd = 4096u32;
    rig.add_qp(1, 3, 1460, wnd, None);
    rig.post_write(0, 65536, false);
    rig.doorbell(0);
    let mut stalls = 0;
    while !rig.qps[0].expect.is_empty() {
        rig.run_quiet(300, 100_000);
        let q = &rig.qps[0];
        if q.expect.is_empty() {
            break;
        }
        // stalled: the next FPDU does not fit in the window
        let next = &q.expect[0];
        let next_end = next.seq.wrapping_add(next.payload.len() as u32);
        assert!(
            !seq_le(next_end, q.edge),
            "stopped although the next FPDU fits"
        );
        stalls += 1;
        let a = q.peer_rcv;
        rig.peer_ack(0, a, wnd as u16);
    }
    rig.run_quiet(300, 100_000);
    rig.check_done();
    let q = &rig.qps[0];
    eprintln!(
        "window {wnd}: {} frames, {stalls} stalls, largest flight {} octets, {} clocks waited",
        q.data_frames,
        q.max_flight,
        rig.core.get_cnt_tx_wnd_wait()
    );
    assert!(q.max_flight <= wnd);
    assert!(stalls >= 65536 / wnd as usize - 1);
    assert!(rig.core.get_cnt_tx_wnd_wait() > 0);
}

/// Two QPs: A's window is closed (its peer does not ACK), B's is open.
/// B's data goes out while A waits (A is parked, docs/rtl.md "Parked
/// QPs"; before, B's data waited behind A's WQE until A's window opened),
/// then pure ACKs for B's peer go out while A waits; when A's window opens
/// both streams finish byte for byte. (B's data and its peer's data are
/// not overlapped here: a pure ACK may leave ahead of a data frame whose
/// header already holds an older ACK number, the MAC merge's `mx_block`.)
#[test]
fn stalled_qp_does_not_stop_acks() {
    let mut rig = Rig::new(3);
    rig.add_qp(1, 1, 1460, 4096, None);
    rig.add_qp(2, 2, 1460, 1 << 20, None);
    rig.post_write(0, 32768, false);
    rig.doorbell(0);
    rig.run_quiet(300, 100_000);
    let a_frames = rig.qps[0].data_frames;
    assert!(
        a_frames > 0 && !rig.qps[0].expect.is_empty(),
        "A stalled on its window"
    );
    rig.post_write(1, 8000, false);
    rig.doorbell(1);
    rig.run_quiet(300, 100_000);
    assert!(
        rig.qps[1].expect.is_empty() && rig.qps[1].cq_expect.is_empty(),
        "B's data and completion while A waits"
    );
    rig.peer_data(1, 10, 1000);
    rig.run_quiet(ACK_DELAY + 300, 100_000);
    let b = &rig.qps[1];
    eprintln!(
        "A stalled after {a_frames} frames; meanwhile B: {} data frames, {} pure ACKs (last {:#x}, peer seq {:#x})",
        b.data_frames,
        b.pure_acks.len(),
        b.last_ack,
        b.peer_seq
    );
    assert_eq!(
        b.last_ack, b.peer_seq,
        "B's peer data acknowledged while A waits"
    );
    assert!(!b.pure_acks.is_empty());
    // A's window opens: everything finishes.
    let a_rcv = rig.qps[0].peer_rcv;
    rig.peer_ack(0, a_rcv, 65535);
    rig.run_quiet(300, 200_000);
    rig.check_done();
}

/// 64 in-order segments received: at most one pure ACK per
/// ACK_EVERY_SEGS (2) segments plus delayed ones, the last acknowledges
/// everything. Printed: ACKs per received segment.
#[test]
fn acks_for_64_segments() {
    let mut rig = Rig::new(4);
    rig.add_qp(1, 1, 1460, 1 << 20, None);
    rig.peer_data(0, 64, 1448);
    rig.run_quiet(ACK_DELAY + 300, 1_000_000);
    let q = &rig.qps[0];
    let n = q.pure_acks.len();
    eprintln!(
        "64 segments in: {n} pure ACKs ({:.3} per segment), piggybacked {}",
        n as f64 / 64.0,
        rig.core.get_cnt_tx_ack_piggy()
    );
    assert_eq!(q.last_ack, q.peer_seq, "everything acknowledged");
    assert!((32..=33).contains(&n), "{n} ACKs for 64 segments");
    assert_eq!(rig.core.get_cnt_rx_fast(), 64);
    assert_eq!(rig.core.get_cnt_tx_acks() as usize, n);
}

/// Data going out carries the ACK number: a segment received just before a
/// data frame is acknowledged by it, and no pure ACK follows.
#[test]
fn data_frame_piggybacks_ack() {
    let mut rig = Rig::new(5);
    rig.add_qp(1, 1, 1460, 1 << 20, None);
    rig.peer_data(0, 1, 500);
    rig.run_quiet(100, 10_000);
    assert!(
        rig.qps[0].pure_acks.is_empty(),
        "a lone segment's ACK waits"
    );
    rig.post_write(0, 3000, false);
    rig.doorbell(0);
    rig.run_quiet(ACK_DELAY + 300, 100_000);
    rig.check_done();
    let q = &rig.qps[0];
    assert_eq!(q.last_ack, q.peer_seq);
    assert!(q.pure_acks.is_empty(), "the data frames carried the ACK");
    assert_eq!(rig.core.get_cnt_tx_ack_piggy(), 1);
}

/// MULPDU above the framer's limit (3968 + 14): the WQE completes with
/// LocalQpOperationError, nothing is sent, the counter counts it; a QP at
/// the limit sends.
#[test]
fn oversized_mulpdu_refused() {
    let mut rig = Rig::new(6);
    rig.add_qp(1, 1, 9000, 1 << 20, Some(8960));
    rig.add_qp(2, 2, 3988, 1 << 20, None);
    rig.post_write(0, 5000, true);
    rig.post_write(0, 0, true);
    rig.doorbell(0);
    rig.run_quiet(400, 100_000);
    assert_eq!(rig.qps[0].data_frames, 0);
    assert_eq!(rig.core.get_cnt_tx_mulpdu_bad(), 2);
    assert_eq!(rig.core.get_cnt_tx_frames(), 0);
    // EMSS 3988 gives MULPDU 3982 (RFC 5044 §8 formula), below the limit.
    assert_eq!(rig.qps[1].tx.mulpdu(), 3982);
    rig.post_write(1, 10000, false);
    rig.doorbell(1);
    rig.run_quiet(400, 100_000);
    rig.check_done();
    assert_eq!(rig.core.get_cnt_tx_mulpdu_bad(), 2);
}

/// Goodput of 64 KiB RDMA Writes with the peer's window 64 KiB and 16 KiB,
/// the peer ACKing each frame a round trip after it left (0, 2 us, 20 us:
/// the link and the peer, not the DMA), DMA round trip 500 ns.
#[test]
fn measure_goodput_with_window() {
    for (wnd, rtt) in [
        (65535u32, 0u64),
        (16384, 0),
        (65535, 312),
        (16384, 312),
        (65535, 3125),
        (16384, 3125),
    ] {
        let mut rig = Rig::new(7);
        rig.add_qp(1, 1, 1460, wnd, None);
        let n = 8;
        for _ in 0..n {
            rig.post_write(0, 65536, false);
        }
        rig.doorbell(0);
        let t0 = rig.core.cycle();
        let mut seen = rig.qps[0].peer_rcv;
        let mut acks: VecDeque<(u64, u32)> = VecDeque::new();
        while !rig.qps[0].expect.is_empty() {
            assert!(rig.core.cycle() - t0 < 4_000_000, "hung");
            rig.cycle();
            let r = rig.qps[0].peer_rcv;
            if r != seen {
                seen = r;
                acks.push_back((rig.core.cycle() + rtt, r));
            }
            while acks.front().is_some_and(|&(t, _)| t <= rig.core.cycle()) {
                let (_, a) = acks.pop_front().unwrap();
                rig.peer_ack(0, a, wnd as u16);
            }
        }
        rig.run_quiet(300, 100_000);
        rig.check_done();
        let cyc = rig.last_beat + 1 - rig.first_beat.unwrap();
        let octets = (n * 65536) as f64;
        eprintln!(
            "window {wnd}, peer ACK after {rtt} clocks: {n} x 64 KiB in {cyc} clocks: {:.3} \
             octets/clock ({:.2} Gb/s at 156.25 MHz), largest flight {}, {} clocks waited \
             for the window",
            octets / cyc as f64,
            octets / cyc as f64 * 8.0 * 0.15625,
            rig.qps[0].max_flight,
            rig.core.get_cnt_tx_wnd_wait()
        );
        assert!(rig.qps[0].max_flight <= wnd);
    }
}
