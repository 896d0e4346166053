//! Retransmission of RDMA-mode data in `rnic_core` (Verilator): the TX
//! FPDU log (`tx_log`) and its go-back-N replay through the firmware
//! port's `RETX_CONN` (docs/rtl.md "Retransmission of RDMA-mode data").
//!
//! Independent references: WQEs written with `SendWqe::emit`; every frame
//! parsed with smoltcp (`rnic_wire::model::parse_frame`, checksums
//! checked); first transmissions equal `rnic_wire::model::TxStream`'s
//! segments byte for byte; the peer's ACKs are built with smoltcp
//! (`TcpRepr`, `tcp_frame`); a replayed frame must equal the original
//! octet for octet except the IPv4 checksum and the TCP ACK number, window
//! and checksum (RFC 5044 §5/§4: a retransmitted segment carries the same
//! whole FPDUs). The peer is a go-back-N receiver: it drops the chosen
//! frames, discards what comes after a hole and acknowledges only the
//! in-order point (RFC 9293 §3.10.7.4).

mod core_rig;

use std::collections::{BTreeMap, VecDeque};

use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::{MacRxPort, MacTxPort};
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::{port, MPA_CRC_TX, MPA_MARKERS_TX};
use rnic_wire::abi::wqe::{SendOpcode, SendWqe, Sge, SgeList, WQE_FLAG_SIGNALED, WQE_SIZE};
use rnic_wire::model::net::tcp_frame;
use rnic_wire::model::{parse_frame, Endpoint, Message, MpaSettings, Segment, TxStream};
use rnic_wire::net::{TcpControl, TcpRepr, TcpSeqNumber};
use rnic_wire::rdmap::ReadRequestRepr;
use verilator_sys::rnic_core::Model;

/// The window the peer offers (octets, no scaling).
const PEER_WND: u16 = 0xFFFF;
const QPN: u32 = 1;
const CONN: u32 = 3;

fn seq_le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) >= 0
}

/// A frame with the fields a retransmission may change zeroed: IPv4
/// checksum (octets 24..26), TCP ACK number (42..46), window (48..50),
/// checksum (50..52).
fn masked(f: &[u8]) -> Vec<u8> {
    let mut m = f.to_vec();
    for r in [24..26, 42..46, 48..50, 50..52] {
        m[r].fill(0);
    }
    m
}

struct Rig {
    core: Model,
    mac: MacTxPort,
    macrx: MacRxPort,
    dma: DmaServer,
    mem: HostMemory,
    rng: Rng,
    local: Endpoint,
    peer: Endpoint,
    ring: u64,
    log2: u32,
    prod: u32,
    tx: TxStream,
    /// First transmissions still expected (TxStream's segments).
    expect: VecDeque<Segment>,
    signaled: u32,
    /// Every first transmission by its sequence number: the frame.
    orig: BTreeMap<u32, Vec<u8>>,
    /// The end of the highest data sent (the device's SND.NXT on the wire).
    hi: u32,
    /// The peer's in-order point (RCV.NXT) and its own sequence number.
    rcv: u32,
    peer_seq: u32,
    /// First transmissions counted, and the ones the peer drops.
    new_frames: u32,
    drop: Vec<u32>,
    /// Data frames in wire order: (seq, replayed, clock of its last beat).
    log: Vec<(u32, bool, u64)>,
    /// Clock of the first beat of every data frame.
    beat0: Option<u64>,
    cur_start: Vec<u64>,
    payload_octets_replayed: u64,
}

impl Rig {
    fn new(seed: u64, markers: bool) -> Rig {
        let mut core = Model::new();
        core.reset(4);
        core.set_tx_cq_pop(1);
        core.set_rx_pay_ready(1);
        core.set_tx_wnd_en(1);
        let mut rng = Rng::new(seed);
        let mut mem = HostMemory::new(0x1_0000_0000, 0x2_0000_0000);
        let local = Endpoint {
            mac: [2, 0, 0, 0, 0, 1],
            ip: [10, 0, 0, 1],
            port: 5001,
        };
        let peer = Endpoint {
            mac: [2, 0, 0, 0, 0, 2],
            ip: [10, 0, 1, 3],
            port: 40003,
        };
        let seq_start = rng.next_u32();
        let tx = TxStream::new(
            MpaSettings {
                crc: true,
                markers,
                seq_start,
            },
            1460,
        );
        let peer_seq = rng.next_u32();
        let log2 = 6;
        let mpa = MPA_CRC_TX as u64 | if markers { MPA_MARKERS_TX as u64 } else { 0 };
        let ring = core_rig::write_ct_qp(
            &mut core,
            &mut mem,
            &core_rig::CtQp {
                qpn: QPN,
                conn: CONN,
                local: &local,
                peer: &peer,
                mpa_flags: mpa,
                rcv_nxt: peer_seq,
                rcv_wnd: 0xFFFF,
                seq_start,
                snd_wnd: Some(PEER_WND as u32),
                mulpdu: tx.mulpdu(),
                log2,
            },
        );
        Rig {
            core,
            mac: MacTxPort::new(),
            macrx: MacRxPort::new(3),
            dma: DmaServer::new(DmaConfig {
                seed,
                log: false,
                ..DmaConfig::default()
            }),
            mem,
            rng,
            local,
            peer,
            ring,
            log2,
            prod: 0,
            tx,
            expect: VecDeque::new(),
            signaled: 0,
            orig: BTreeMap::new(),
            hi: seq_start,
            rcv: seq_start,
            peer_seq,
            new_frames: 0,
            drop: vec![],
            log: vec![],
            beat0: None,
            cur_start: vec![],
            payload_octets_replayed: 0,
        }
    }

    fn post(&mut self, wqe: &SendWqe) {
        let mut b = [0u8; WQE_SIZE];
        wqe.emit(&mut b).unwrap();
        let slot = (self.prod & ((1 << self.log2) - 1)) as u64;
        self.mem
            .write(self.ring + slot * WQE_SIZE as u64, &b)
            .unwrap();
        self.prod = self.prod.wrapping_add(1);
    }

    /// A signaled RDMA Write of `len` random octets.
    fn post_write(&mut self, len: usize) {
        let data = self.rng.bytes(len);
        let a = self.mem.alloc_dma(len as u64 + 64, 8).unwrap();
        self.mem.write(a, &data).unwrap();
        let (stag, to) = (self.rng.next_u32(), self.rng.next_u64());
        let wqe = SendWqe {
            wr_id: self.rng.next_u64(),
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
        self.post(&wqe);
        self.signaled += 1;
        let segs = self
            .tx
            .send(&Message::Write {
                stag,
                to,
                data: &data,
            })
            .unwrap();
        self.expect.extend(segs);
    }

    /// An unsignaled RDMA Read (its Read Request FPDU is what goes out).
    fn post_read(&mut self, len: u32) {
        let r = ReadRequestRepr {
            // The sink SGE is checked at post time (LOCAL_WRITE): inside
            // the rig's identity region.
            sink_stag: core_rig::IDENT_LKEY,
            sink_to: core_rig::IDENT_VA + self.rng.below(1 << 30),
            size: len,
            src_stag: self.rng.next_u32(),
            src_to: self.rng.next_u64(),
        };
        let wqe = SendWqe {
            wr_id: self.rng.next_u64(),
            opcode: SendOpcode::RdmaRead,
            flags: 0,
            imm_or_inv: 0,
            remote_offset: r.src_to,
            remote_stag: r.src_stag,
            sges: SgeList::new(&[Sge {
                addr: r.sink_to,
                length: len,
                lkey: r.sink_stag,
            }])
            .unwrap(),
            inline: None,
        };
        self.post(&wqe);
        let segs = self.tx.send(&Message::ReadRequest(r)).unwrap();
        self.expect.extend(segs);
    }

    fn doorbell(&mut self) {
        self.core.set_db_wr_valid(1);
        self.core.set_db_wr_qpn(QPN as u64);
        self.core.set_db_wr_value(self.prod as u64);
        self.cycle();
        self.core.set_db_wr_valid(0);
    }

    fn peer_ack(&mut self) {
        let tcp = TcpRepr {
            src_port: self.peer.port,
            dst_port: self.local.port,
            control: TcpControl::None,
            seq_number: TcpSeqNumber(self.peer_seq as i32),
            ack_number: Some(TcpSeqNumber(self.rcv as i32)),
            window_len: PEER_WND,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload: &[],
        };
        let f = tcp_frame(&self.peer, &self.local, &tcp);
        self.macrx.push(f, false);
    }

    fn fw_write(&mut self, addr: u32, v: u32) {
        self.core.set_fw_valid(1);
        self.core.set_fw_write(1);
        self.core.set_fw_addr(addr as u64);
        self.core.set_fw_wdata(v as u64);
        self.cycle();
        self.core.set_fw_valid(0);
        self.core.set_fw_write(0);
    }

    fn fw_read(&mut self, addr: u32) -> u32 {
        self.core.set_fw_valid(1);
        self.core.set_fw_write(0);
        self.core.set_fw_addr(addr as u64);
        self.cycle();
        self.core.set_fw_valid(0);
        assert_eq!(self.core.get_fw_rvalid(), 1);
        self.core.get_fw_rdata() as u32
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
            if self.beat0.is_none() {
                self.beat0 = Some(self.core.cycle());
            }
        }
        if self.core.get_tx_cq_valid() != 0 {
            assert_eq!(self.core.get_tx_cq_status(), 0, "completion status");
            self.signaled -= 1;
        }
        let now = self.core.cycle();
        let f = self.mac.sample(&self.core);
        self.dma.sample(&self.core, &mut self.mem);
        self.core.tick();
        if let Some(f) = f {
            let start = self.beat0.take().unwrap_or(now);
            self.frame(&f, start, now);
        }
        busy
    }

    fn frame(&mut self, f: &[u8], start: u64, end_clock: u64) {
        let v = parse_frame(f).expect("frame parses with smoltcp, checksums good");
        assert_eq!(v.tuple.src_port, self.local.port);
        if v.payload.is_empty() {
            return; // a pure ACK
        }
        let seq = v.seq;
        let end = seq.wrapping_add(v.payload.len() as u32);
        let replayed = !seq_le(self.hi, seq);
        if replayed {
            // a retransmission: the original's octets (RFC 5044 §5)
            let o = self
                .orig
                .get(&seq)
                .unwrap_or_else(|| panic!("replayed seq {seq:#x} was never sent"));
            assert_eq!(masked(f), masked(o), "replayed frame at seq {seq:#x}");
            self.payload_octets_replayed += v.payload.len() as u64;
        } else {
            let want = self.expect.pop_front().expect("a data frame expected");
            assert_eq!(seq, want.seq, "seq of a first transmission");
            assert!(
                v.payload == want.payload.as_slice(),
                "payload of a first transmission"
            );
            self.orig.insert(seq, f.to_vec());
            self.hi = end;
            self.new_frames += 1;
        }
        self.log.push((seq, replayed, end_clock));
        self.cur_start.push(start);
        // the go-back-N peer
        let dropped = !replayed && self.drop.contains(&self.new_frames);
        if !dropped {
            if seq == self.rcv {
                self.rcv = end;
            }
            self.peer_ack();
        }
    }

    fn run_quiet(&mut self, quiet: u64, limit: u64) {
        let start = self.core.cycle();
        let mut q = 0;
        while q < quiet {
            assert!(self.core.cycle() - start < limit, "hung");
            q = if self.cycle() { 0 } else { q + 1 };
        }
    }

    fn status(&mut self) -> (bool, u32) {
        let s = self.fw_read(port::RETX_STATUS);
        (s & port::RETX_STATUS_BUSY != 0, s >> 16)
    }

    fn snd_nxt(&mut self) -> u32 {
        self.core.set_ct_rd_idx(CONN as u64);
        self.cycle();
        self.cycle();
        self.core.get_ct_rd_snd_nxt() as u32
    }

    /// Requests a replay; returns the clock of the write.
    fn retx(&mut self) -> u64 {
        let c = self.core.cycle();
        self.fw_write(port::RETX_CONN, CONN);
        c
    }

    fn check_clean(&self) {
        assert!(
            self.expect.is_empty(),
            "{} segments left",
            self.expect.len()
        );
        assert_eq!(self.signaled, 0, "completions left");
        assert!(self.dma.faults().is_empty(), "{:?}", self.dma.faults());
        assert_eq!(self.mac.errors(), 0);
        assert_eq!(self.core.get_cnt_tx_desc_drop(), 0);
        assert_eq!(self.core.get_cnt_tx_pay_err(), 0);
    }
}

/// RDMA Writes of several sizes (and a Read Request among them), CRC on,
/// the peer's window enforced: the 3rd data frame is dropped; the peer
/// acknowledges only up to the hole. A `RETX_CONN` write re-sends every
/// FPDU from the hole on, each byte-identical to its original; then the
/// peer acknowledges everything, the log is empty, SND.NXT is the original
/// end. A second request finds nothing (`RETX_EMPTY`).
#[test]
fn dropped_write_frame_is_replayed_byte_identical() {
    for (seed, markers) in [(1u64, false), (2, true)] {
        let mut rig = Rig::new(seed, markers);
        rig.drop = vec![3];
        for len in [100usize, 3000, 64, 0, 5000, 1] {
            rig.post_write(len);
        }
        rig.post_read(7000);
        rig.post_write(1500);
        rig.doorbell();
        rig.run_quiet(400, 200_000);
        let first = rig.new_frames;
        let end = rig.hi;
        assert!(first >= 10, "{first} frames");
        assert!(rig.expect.is_empty());
        assert_ne!(rig.rcv, end, "the hole holds the peer's ACK");
        let (busy, used) = rig.status();
        assert!(!busy);
        assert!(
            used >= first - 2,
            "log holds the unacknowledged FPDUs: {used}"
        );
        let unacked: Vec<u32> = rig
            .orig
            .keys()
            .copied()
            .filter(|s| !seq_le(s.wrapping_add(1), rig.rcv))
            .collect();
        // replay
        let n0 = rig.log.len();
        let t0 = rig.retx();
        rig.run_quiet(400, 200_000);
        let replayed: Vec<u32> = rig.log[n0..].iter().map(|e| e.0).collect();
        let mut want = unacked.clone();
        want.sort_by_key(|s| s.wrapping_sub(rig.rcv));
        assert!(rig.log[n0..].iter().all(|e| e.1), "only retransmissions");
        let mut replayed_sorted = replayed.clone();
        replayed_sorted.sort_by_key(|s| s.wrapping_sub(want[0]));
        assert_eq!(replayed, replayed_sorted, "replay in sequence order");
        assert_eq!(replayed.len(), first as usize - 2, "frames 3.. re-sent");
        assert_eq!(rig.fw_read(port::RETX_COUNT), replayed.len() as u32);
        eprintln!(
            "markers {markers}: {first} frames, hole at frame 3; RETX_CONN write -> first replayed beat {} clocks, {} frames re-sent",
            rig.cur_start[n0] - t0,
            replayed.len()
        );
        assert_eq!(rig.rcv, end, "the peer has everything");
        rig.run_quiet(200, 10_000);
        let (busy, used) = rig.status();
        assert!(!busy);
        assert_eq!(used, 0, "log empty after the peer acknowledged everything");
        assert_eq!(rig.snd_nxt(), end, "SND.NXT is the original end");
        // nothing left to re-send
        let n1 = rig.log.len();
        rig.retx();
        rig.run_quiet(200, 10_000);
        assert_eq!(rig.log.len(), n1, "nothing re-sent");
        assert_eq!(rig.fw_read(port::RETX_EMPTY), 1);
        assert_eq!(rig.fw_read(port::RETX_BUSY), 0);
        assert_eq!(rig.fw_read(port::RETX_LOST), 0);
        rig.check_clean();
    }
}

/// A replay while more WQEs are queued: `RETX_CONN` first, then a doorbell
/// with three more Writes. The replayed FPDUs come first on the wire, the
/// new ones after them, continuing at the original SND.NXT.
#[test]
fn replay_goes_before_queued_wqes() {
    let mut rig = Rig::new(3, false);
    rig.drop = vec![2];
    rig.post_write(6000);
    rig.doorbell();
    rig.run_quiet(400, 200_000);
    let end = rig.hi;
    let n0 = rig.log.len();
    for len in [2000usize, 300, 4000] {
        rig.post_write(len);
    }
    rig.retx();
    rig.doorbell();
    rig.run_quiet(400, 200_000);
    let kinds: Vec<bool> = rig.log[n0..].iter().map(|e| e.1).collect();
    let k = kinds.iter().take_while(|r| **r).count();
    assert!(k >= 3, "replayed frames first ({k})");
    assert!(kinds[k..].iter().all(|r| !r), "new frames after: {kinds:?}");
    assert_eq!(rig.log[n0 + k].0, end, "new data continues at SND.NXT");
    rig.check_clean();
    rig.run_quiet(200, 10_000);
    assert_eq!(rig.status(), (false, 0));
    assert_eq!(rig.snd_nxt(), rig.hi);
}

/// Replay rate: a 64 KiB Write whose first frame is lost; the peer
/// discards everything after the hole, so the whole window is re-sent.
#[test]
fn measure_replay_rate_64k() {
    let mut rig = Rig::new(4, false);
    rig.drop = vec![1];
    rig.post_write(65536);
    rig.doorbell();
    rig.run_quiet(400, 400_000);
    let n0 = rig.log.len();
    let t0 = rig.retx();
    rig.run_quiet(400, 400_000);
    // every frame re-sent first; then the FPDUs the window held back go
    let rep: Vec<usize> = (n0..rig.log.len()).filter(|&i| rig.log[i].1).collect();
    assert_eq!(rep.len(), n0, "every frame re-sent");
    assert_eq!(
        rep,
        (n0..2 * n0).collect::<Vec<_>>(),
        "replayed frames first"
    );
    let n = rep.len();
    let first = rig.cur_start[n0];
    let last = rig.log[2 * n0 - 1].2;
    let octets = rig.payload_octets_replayed;
    eprintln!(
        "replay of 64 KiB: {n} frames, {octets} TCP payload octets, RETX_CONN -> first beat {} clocks, first -> last beat {} clocks: {:.3} octets/clock ({:.2} Gb/s at 156.25 MHz)",
        first - t0,
        last - first,
        octets as f64 / (last - first) as f64,
        octets as f64 * 8.0 * 156.25e6 / (last - first) as f64 / 1e9
    );
    rig.run_quiet(200, 10_000);
    assert_eq!(rig.status(), (false, 0));
    rig.check_clean();
}

/// Read Response replay (the core as responder): the peer's Read Request
/// for 12000 octets of a region of 4 shuffled 4 KiB pages; the 3rd Read
/// Response frame is dropped, the peer (go-back-N) acknowledges only up to
/// it. `RETX_CONN` re-sends the responses from the hole on, byte-identical
/// (same translated addresses re-read); fed in order to the wire model's
/// `Receiver`, the sink equals the source octets (`TptEntry::page_of`).
#[test]
fn dropped_read_response_is_replayed() {
    use rnic_fw::hal::{Hal, HalExt};
    use rnic_sim::fw_hal::{CoSimHal, FwNode};
    use rnic_wire::abi::context::{ConnContext, ConnMode, QpContext, RtrKind, TableId, MPA_CRC_RX};
    use rnic_wire::abi::mailbox::QpState;
    use rnic_wire::abi::tpt::{
        Stag, TptEntry, TptState, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, TPT_ENTRY_SIZE,
    };
    use rnic_wire::model::net::data_frame;
    use rnic_wire::model::{Event, Receiver, RxConfig, Tpt};

    const ISS: u32 = 0xFFFF_F800;
    const PD: u32 = 3;
    let node = FwNode::shared();
    {
        let mut n = node.borrow_mut();
        n.serve_host_side = false;
        n.set_ulp(true);
        n.core.set_fw_raw_to_mac(1);
        n.core.set_tx_wnd_en(1);
    }
    let mut hal = CoSimHal::new(node.clone());
    let mut dma = DmaServer::new(DmaConfig {
        seed: 9,
        ..DmaConfig::default()
    });
    let mut mem = HostMemory::new(0x1_0000_0000, 0x2_0000_0000);
    let mut mac = MacTxPort::new();
    let mut rng = Rng::new(9);
    let local = Endpoint {
        mac: [2, 0, 0, 0, 0, 1],
        ip: [10, 0, 0, 1],
        port: 7100,
    };
    let peer = Endpoint {
        mac: [2, 0, 0, 0, 0, 2],
        ip: [10, 0, 0, 2],
        port: 40100,
    };
    let peer_iss = rng.next_u32();
    let mut peer_tx = TxStream::new(
        MpaSettings {
            crc: true,
            markers: false,
            seq_start: peer_iss,
        },
        1460,
    );
    let mut peer_rx = Receiver::new(
        RxConfig {
            mpa: MpaSettings {
                crc: true,
                markers: false,
                seq_start: ISS,
            },
            pd: 9,
            ird: 0,
        },
        Tpt::new(),
    );
    let qp = QpContext {
        state: QpState::Rts,
        flags: 0,
        rtr: RtrKind::None,
        sq_log2: 2,
        pd: PD,
        send_cqn: 0,
        recv_cqn: 0,
        sq_ring: 0x1_0000_0000,
        rq_ring: 0,
        rq_log2: 0,
        conn: CONN,
        ird: 4,
        ord: 1,
        tx_send_msn: 1,
        tx_read_msn: 1,
        rx_send_msn: 1,
        rx_read_msn: 1,
        term_cause: 0,
    };
    hal.write_qp(QPN, &qp).expect("QP write");
    let c = ConnContext {
        mode: ConnMode::Rdma,
        mpa_flags: MPA_CRC_RX | MPA_CRC_TX,
        snd_wscale: 0,
        rcv_wscale: 0,
        local_ip: u32::from_be_bytes(local.ip),
        peer_ip: u32::from_be_bytes(peer.ip),
        local_port: local.port,
        peer_port: peer.port,
        local_mac: local.mac,
        peer_mac: peer.mac,
        mss: 1460,
        mulpdu: 1440,
        rcv_nxt: peer_iss,
        snd_nxt: ISS,
        snd_una: ISS,
        snd_wnd: 0xFFFF,
        rcv_wnd: 1 << 20,
        tx_marker_ref: ISS,
        rx_marker_ref: peer_iss,
        qpn: QPN,
    };
    hal.write_conn(CONN, &c).expect("connection write");
    // the source region: 4 shuffled pages
    let mut pages = Vec::new();
    for _ in 0..4 {
        let a = mem.alloc_dma(8192, 4096).unwrap();
        mem.write(a, &rng.bytes(4096)).unwrap();
        pages.push(a);
    }
    pages.swap(0, 2);
    for (i, &a) in pages.iter().enumerate() {
        hal.write_table(TableId::Pbl, i as u32, &a.to_le_bytes())
            .expect("PBL write");
    }
    let e = TptEntry {
        state: TptState::Valid,
        key: 0x77,
        access: ACCESS_REMOTE_READ,
        page_shift: 12,
        pd: PD,
        va: 0x5000_0000_0000 + 0x1a3,
        length: 4 * 4096 - 0x1a3,
        pbl_base: 0,
        npages: 4,
    };
    let mut b = [0u8; TPT_ENTRY_SIZE];
    e.emit(&mut b).unwrap();
    hal.write_table(TableId::Tpt, 5, &b).expect("TPT write");
    let src = Stag::new(5, 0x77).unwrap().0;
    let len = 12000u32;
    let source: Vec<u8> = (0..len as u64)
        .map(|i| {
            let (pg, off) = e.page_of(e.va + 8 + i).unwrap();
            let mut o = [0u8];
            mem.read(pages[pg as usize] + off, &mut o).unwrap();
            o[0]
        })
        .collect();
    // the peer's Read Request
    let sink = Stag::new(40, 0x10).unwrap().0;
    let rr = ReadRequestRepr {
        sink_stag: sink,
        sink_to: 0x9000_0000_0000,
        size: len,
        src_stag: src,
        src_to: e.va + 8,
    };
    peer_rx.tpt_mut().register(
        sink,
        9,
        ACCESS_LOCAL_WRITE,
        rr.sink_to,
        vec![0; len as usize],
    );
    peer_rx.expect_read_response(rr);
    for s in peer_tx.send(&Message::ReadRequest(rr)).unwrap() {
        let f = data_frame(&peer, &local, s.seq, ISS, &s.payload);
        node.borrow_mut().mac_rx.push(f, false);
    }
    let peer_seq = peer_tx.seq();
    // run: a go-back-N peer dropping the 3rd response frame
    let mut orig: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let (mut hi, mut rcv) = (ISS, ISS);
    let mut n_new = 0u32;
    let mut replayed = 0u32;
    let mut events = Vec::new();
    let mut terms = Vec::new();
    macro_rules! run {
        () => {
            core_rig::until_quiet(400_000, 800, || {
                let s = core_rig::clock(&node, &mut mac, &mut dma, &mut mem, &mut terms, None);
                let busy = s.sending || s.dma_busy || s.mac_tx;
                if let Some(f) = s.frame {
                    let v = parse_frame(&f).expect("frame parses with smoltcp");
                    if v.payload.is_empty() {
                        return busy;
                    }
                    let end = v.seq.wrapping_add(v.payload.len() as u32);
                    let is_replay = !seq_le(hi, v.seq);
                    if is_replay {
                        let o = orig.get(&v.seq).expect("replayed seq was sent");
                        assert_eq!(masked(&f), masked(o), "replayed response at {:#x}", v.seq);
                        replayed += 1;
                    } else {
                        orig.insert(v.seq, f.clone());
                        hi = end;
                        n_new += 1;
                    }
                    if is_replay || n_new != 3 {
                        if v.seq == rcv {
                            events.extend(peer_rx.receive(v.seq, v.payload).expect("in order"));
                            rcv = end;
                        }
                        let tcp = TcpRepr {
                            src_port: peer.port,
                            dst_port: local.port,
                            control: TcpControl::None,
                            seq_number: TcpSeqNumber(peer_seq as i32),
                            ack_number: Some(TcpSeqNumber(rcv as i32)),
                            window_len: 0xFFFF,
                            window_scale: None,
                            max_seg_size: None,
                            sack_permitted: false,
                            sack_ranges: [None; 3],
                            timestamp: None,
                            payload: &[],
                        };
                        node.borrow_mut()
                            .mac_rx
                            .push(tcp_frame(&peer, &local, &tcp), false);
                    }
                }
                busy
            })
        };
    }
    run!();
    let first = n_new;
    assert!(first >= 9, "{first} response frames");
    assert_ne!(rcv, hi, "the hole holds the peer's ACK");
    node.borrow_mut().fw_write(port::RETX_CONN, CONN);
    run!();
    assert_eq!(replayed, first - 2, "responses 3.. re-sent");
    assert_eq!(rcv, hi, "the peer has every response");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::ReadResponseCompleted { .. })),
        "the Read completed at the peer"
    );
    assert_eq!(
        peer_rx.tpt().region(sink).unwrap().bytes,
        source,
        "sink = source"
    );
    assert!(terms.is_empty(), "{terms:x?}");
    assert!(dma.faults().is_empty(), "{:?}", dma.faults());
    let mut n = node.borrow_mut();
    assert_eq!(n.fw_read(port::RETX_COUNT), replayed);
    assert_eq!(n.fw_read(port::RETX_STATUS), 0, "idle, log empty");
    eprintln!("Read Response replay: {first} response frames, hole at 3, {replayed} re-sent");
}
