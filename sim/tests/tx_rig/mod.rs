//! The TX-datapath rig shared by `tx_datapath` and `tx_jumbo`: a Verilated
//! `rnic_core` with its connection and QP tables written through the core
//! pins (`core_rig`), WQEs in host memory, doorbells, the co-sim DMA server,
//! a MAC TX port whose every frame is parsed with smoltcp and compared with
//! `rnic_wire::model::TxStream` for the same work requests.
#![allow(dead_code)] // shared by several test binaries, each using a subset

use std::collections::{BTreeMap, VecDeque};

use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_sim::host_mem::HostMemory;
use rnic_sim::mac_port::{MacRxPort, MacTxPort};
use rnic_sim::rng::Rng;
use rnic_wire::abi::context::{MPA_CRC_TX, MPA_MARKERS_TX};
use rnic_wire::abi::wqe::{
    SendOpcode, SendWqe, Sge, SgeList, WQE_FLAG_SIGNALED, WQE_FLAG_SOLICITED, WQE_SIZE,
};
use rnic_wire::model::net::{ack_frame, data_frame};
use rnic_wire::model::{parse_frame, Endpoint, Message, MpaSettings, Segment, TxStream};
use rnic_wire::rdmap::ReadRequestRepr;
use verilator_sys::rnic_core::Model;

/// The window we offer (octets) and its field as sent (no scaling).
pub(crate) const RCV_WND: u32 = 0xFFFF;

/// The core model: the sim crate implements `MacRxPins`, `MacTxPins` and
/// `DmaPins` on it.
pub(crate) type Core = Model;

/// One work request as the test posts it.
#[derive(Clone)]
pub(crate) enum Wr {
    Write {
        stag: u32,
        to: u64,
        data: Vec<u8>,
    },
    Send {
        data: Vec<u8>,
        se: bool,
        inv: Option<u32>,
    },
    Read {
        rr: ReadRequestRepr,
    },
}

/// A QP with its connection, ring and reference stream.
pub(crate) struct Qp {
    pub(crate) qpn: u32,
    pub(crate) local: Endpoint,
    pub(crate) peer: Endpoint,
    pub(crate) ring: u64,
    pub(crate) log2: u32,
    pub(crate) prod: u32,
    pub(crate) ack: u32,
    /// Every ACK number the connection has had (rcv_nxt), in order.
    pub(crate) ack_hist: Vec<u32>,
    /// Sequence number after the last data frame seen on the wire.
    pub(crate) wire_nxt: u32,
    /// Pure ACKs seen: (seq, ack).
    pub(crate) acks: Vec<(u32, u32)>,
    /// The ACK number of the last frame (data or pure ACK).
    pub(crate) last_ack: u32,
    pub(crate) tx: TxStream,
    /// Segments the reference sent, not yet seen on the wire.
    pub(crate) expect: VecDeque<Segment>,
    /// (WQE index, wr_id) of signaled WQEs, in order.
    pub(crate) cq_expect: VecDeque<(u32, u64)>,
}

pub(crate) struct Rig {
    pub(crate) core: Core,
    pub(crate) mac: MacTxPort,
    pub(crate) macrx: MacRxPort,
    pub(crate) dma: DmaServer,
    pub(crate) mem: HostMemory,
    pub(crate) rng: Rng,
    pub(crate) qps: Vec<Qp>,
    /// Local TCP port → index in `qps`.
    pub(crate) by_port: BTreeMap<u16, usize>,
    pub(crate) frames: u64,
    /// Longest frame seen (octets, without FCS).
    pub(crate) longest: usize,
    /// MAC ready probability (1.0: always).
    pub(crate) ready_p: f64,
    pub(crate) first_beat: Option<u64>,
    pub(crate) last_beat: u64,
}

impl Rig {
    pub(crate) fn new(seed: u64, dma: DmaConfig) -> Rig {
        let mut core = Model::new();
        core.reset(4);
        core.set_tx_cq_pop(1);
        Rig {
            core,
            mac: MacTxPort::new(),
            macrx: MacRxPort::new(3),
            dma: DmaServer::new(dma),
            mem: HostMemory::new(0x1_0000_0000, 0x2_0000_0000),
            rng: Rng::new(seed),
            qps: Vec::new(),
            by_port: BTreeMap::new(),
            frames: 0,
            ready_p: 1.0,
            longest: 0,
            first_beat: None,
            last_beat: 0,
        }
    }

    /// Writes a connection context and a QP bound to it (connection first,
    /// as the firmware does).
    pub(crate) fn add_qp(&mut self, qpn: u32, conn: u32, mpa: MpaSettings, emss: u16, log2: u32) {
        let local = Endpoint {
            mac: [2, 0, 0, 0, 0, 1],
            ip: [10, 0, 0, 1],
            port: 5000 + qpn as u16,
        };
        let peer = Endpoint {
            mac: [2, 0, 0, 0, 0, 2 + (conn as u8 % 7)],
            ip: [10, 0, 1, conn as u8],
            port: 40000 + conn as u16,
        };
        let tx = TxStream::new(mpa, emss);
        let ack = self.rng.next_u32();
        let mut flags = 0u64;
        if mpa.crc {
            flags |= MPA_CRC_TX as u64;
        }
        if mpa.markers {
            flags |= MPA_MARKERS_TX as u64;
        }
        let ring = crate::core_rig::write_ct_qp(
            &mut self.core,
            &mut self.mem,
            &crate::core_rig::CtQp {
                qpn,
                conn,
                local: &local,
                peer: &peer,
                mpa_flags: flags,
                rcv_nxt: ack,
                rcv_wnd: RCV_WND,
                seq_start: mpa.seq_start,
                snd_wnd: None,
                mulpdu: tx.mulpdu(),
                log2,
            },
        );
        self.by_port.insert(local.port, self.qps.len());
        self.qps.push(Qp {
            qpn,
            local,
            peer,
            ring,
            log2,
            prod: 0,
            ack,
            ack_hist: vec![ack],
            wire_nxt: mpa.seq_start,
            acks: Vec::new(),
            last_ack: ack,
            tx,
            expect: VecDeque::new(),
            cq_expect: VecDeque::new(),
        });
    }

    /// Writes a WQE for `wr` into QP `qi`'s ring (payload in a fresh DMA
    /// buffer) and records the reference's segments. No doorbell.
    pub(crate) fn post(&mut self, qi: usize, wr: &Wr, signaled: bool) {
        let wr_id = self.rng.next_u64();
        let (opcode, mut flags, imm, roff, rstag, sge) = match wr {
            Wr::Write { stag, to, data } => {
                let a = self.buf(data);
                (
                    SendOpcode::RdmaWrite,
                    0,
                    0,
                    *to,
                    *stag,
                    Some((a, data.len() as u32, 0x77)),
                )
            }
            Wr::Send { data, se, inv } => {
                let a = self.buf(data);
                let op = if inv.is_some() {
                    SendOpcode::SendWithInv
                } else {
                    SendOpcode::Send
                };
                let f = if *se { WQE_FLAG_SOLICITED } else { 0 };
                (
                    op,
                    f,
                    inv.unwrap_or(0),
                    0,
                    0,
                    Some((a, data.len() as u32, 0x77)),
                )
            }
            Wr::Read { rr } => (
                SendOpcode::RdmaRead,
                0,
                0,
                rr.src_to,
                rr.src_stag,
                Some((rr.sink_to, rr.size, rr.sink_stag)),
            ),
        };
        if signaled {
            flags |= WQE_FLAG_SIGNALED;
        }
        let sges: Vec<Sge> = sge
            .filter(|s| s.1 > 0 || matches!(wr, Wr::Read { .. }))
            .map(|(addr, length, lkey)| Sge { addr, length, lkey })
            .into_iter()
            .collect();
        let wqe = SendWqe {
            wr_id,
            opcode,
            flags,
            imm_or_inv: imm,
            remote_offset: roff,
            remote_stag: rstag,
            sges: SgeList::new(&sges).unwrap(),
            inline: None,
        };
        let mut b = [0u8; WQE_SIZE];
        wqe.emit(&mut b).unwrap();
        SendWqe::parse(&b).expect("the WQE is valid");
        let q = &mut self.qps[qi];
        let slot = (q.prod & ((1 << q.log2) - 1)) as u64;
        self.mem.write(q.ring + slot * WQE_SIZE as u64, &b).unwrap();
        // `tx_cq_*` shows TxSeg's records: one per signaled WQE, a Read's
        // too (it holds the Read's place in the send CQ's order; the CQE
        // waits for the last Read Response).
        if signaled {
            q.cq_expect.push_back((q.prod, wr_id));
        }
        q.prod = q.prod.wrapping_add(1);
        let msg = match wr {
            Wr::Write { stag, to, data } => Message::Write {
                stag: *stag,
                to: *to,
                data,
            },
            Wr::Send { data, se, inv } => Message::Send {
                data,
                solicited: *se,
                invalidate: *inv,
            },
            Wr::Read { rr } => Message::ReadRequest(*rr),
        };
        let segs = q.tx.send(&msg).unwrap();
        if std::env::var("TXDP_DEBUG").is_ok() {
            eprintln!(
                "post QP {} idx {} {:?} len {} -> {} segs at {:#x}",
                q.qpn,
                q.prod.wrapping_sub(1),
                opcode,
                sge.map_or(0, |s| s.1),
                segs.len(),
                segs[0].seq
            );
        }
        q.expect.extend(segs);
    }

    pub(crate) fn buf(&mut self, data: &[u8]) -> u64 {
        if data.is_empty() {
            return 0;
        }
        let a = self.mem.alloc_dma(data.len() as u64 + 64, 8).unwrap() + self.rng.below(8);
        self.mem.write(a, data).unwrap();
        a
    }

    pub(crate) fn doorbell(&mut self, qi: usize) {
        let (qpn, prod) = (self.qps[qi].qpn, self.qps[qi].prod);
        self.core.set_db_wr_valid(1);
        self.core.set_db_wr_qpn(qpn as u64);
        self.core.set_db_wr_value(prod as u64);
        self.cycle();
        self.core.set_db_wr_valid(0);
    }

    /// One clock: DMA server, MAC sink, completion records.
    pub(crate) fn cycle(&mut self) -> bool {
        let ready = self.ready_p >= 1.0 || self.rng.chance(self.ready_p);
        self.mac.drive_ready(&mut self.core, ready);
        let mut busy = self.macrx.pending() > 0;
        self.macrx.drive(&mut self.core);
        self.dma.drive(&mut self.core, &mut self.mem);
        self.core.eval();
        busy |= !self.dma.idle();
        if self.core.get_mac_tx_valid() != 0 {
            busy = true;
            if ready {
                self.first_beat.get_or_insert(self.core.cycle());
                self.last_beat = self.core.cycle();
            }
        }
        if self.core.get_tx_cq_valid() != 0 {
            busy = true;
            let qp = self.core.get_tx_cq_qp() as u32;
            let qi = self
                .qps
                .iter()
                .position(|q| q.qpn == qp)
                .expect("cq of a known QP");
            let want = self.qps[qi]
                .cq_expect
                .pop_front()
                .expect("an expected completion");
            assert_eq!(
                (
                    self.core.get_tx_cq_idx() as u32,
                    self.core.get_tx_cq_wr_id()
                ),
                want,
                "completion of QP {qp}"
            );
            assert_eq!(self.core.get_tx_cq_status(), 0, "completion status");
        }
        let f = self.mac.sample(&self.core);
        self.dma.sample(&self.core, &mut self.mem);
        self.core.tick();
        if let Some(f) = f {
            self.check_frame(&f);
        }
        busy
    }

    pub(crate) fn check_frame(&mut self, f: &[u8]) {
        let v = parse_frame(f).expect("frame parses with smoltcp, checksums good");
        let qi = *self
            .by_port
            .get(&v.tuple.src_port)
            .expect("source port of a QP");
        let q = &mut self.qps[qi];
        assert_eq!(v.src_mac, q.local.mac);
        assert_eq!(v.dst_mac, q.peer.mac);
        assert_eq!(v.tuple.src_ip, q.local.ip);
        assert_eq!(v.tuple.dst_ip, q.peer.ip);
        assert_eq!(v.tuple.dst_port, q.peer.port);
        assert_eq!(v.window, RCV_WND as u16);
        assert!(!v.syn && !v.fin && !v.rst);
        let ack = v.ack.expect("ACK set");
        assert!(
            q.ack_hist.contains(&ack),
            "ACK number {ack:#x} never was rcv_nxt"
        );
        q.last_ack = ack;
        if v.payload.is_empty() {
            // A pure ACK: in order behind the data frames before it, and
            // exactly the frame the reference builds (RFC 9293 §3.10.7.4).
            // The MAC pads it to the Ethernet minimum: 60 octets, zeros.
            let mut want = ack_frame(&q.local, &q.peer, q.wire_nxt, ack);
            want.resize(60, 0);
            assert_eq!(f, want.as_slice());
            if let Some(&(_, prev)) = q.acks.last() {
                assert!(ack.wrapping_sub(prev) as i32 > 0, "ACK number went back");
            }
            q.acks.push((v.seq, ack));
            return;
        }
        q.wire_nxt = v.seq.wrapping_add(v.payload.len() as u32);
        let want = q
            .expect
            .pop_front()
            .unwrap_or_else(|| panic!("frame {} on QP {}: none expected", self.frames, q.qpn));
        assert_eq!(v.seq, want.seq, "frame {} seq, QP {}", self.frames, q.qpn);
        if let Some(d) = v
            .payload
            .iter()
            .zip(&want.payload)
            .position(|(a, b)| a != b)
        {
            eprintln!(
                "first difference at octet {d}: got {:02x?} want {:02x?}",
                &v.payload[d..(d + 8).min(v.payload.len())],
                &want.payload[d..(d + 8).min(want.payload.len())]
            );
        }
        assert!(
            v.payload == want.payload.as_slice(),
            "frame {} payload differs (QP {}, {} vs {} octets)",
            self.frames,
            q.qpn,
            v.payload.len(),
            want.payload.len()
        );
        if std::env::var("TXDP_DEBUG").is_ok() {
            eprintln!(
                "frame {} seq {:#x} len {}",
                self.frames,
                v.seq,
                v.payload.len()
            );
        }
        self.frames += 1;
        self.longest = self.longest.max(f.len());
    }

    /// Runs until every expected segment and completion is out and the core
    /// has been quiet for a while.
    /// Queues `n` data segments from QP `qi`'s peer on `mac_rx` (in order,
    /// at line rate), advancing the connection's rcv_nxt.
    pub(crate) fn peer_sends(&mut self, qi: usize, n: usize) {
        for _ in 0..n {
            let len = 1 + self.rng.below(1460) as usize;
            let data = self.rng.bytes(len);
            let q = &mut self.qps[qi];
            let f = data_frame(&q.peer, &q.local, q.ack, q.wire_nxt, &data);
            q.ack = q.ack.wrapping_add(len as u32);
            q.ack_hist.push(q.ack);
            self.macrx.push(f, false);
        }
    }

    pub(crate) fn run(&mut self, limit: u64) -> u64 {
        let start = self.core.cycle();
        let mut quiet = 0;
        // longer than TxAck's ACK_DELAY_CLOCKS (2048): a delayed ACK is
        // the last frame
        while quiet < 2500 {
            assert!(
                self.core.cycle() - start < limit,
                "hung: {} frames, left {:?}",
                self.frames,
                self.qps.iter().map(|q| q.expect.len()).collect::<Vec<_>>()
            );
            quiet = if self.cycle() { 0 } else { quiet + 1 };
        }
        for q in &self.qps {
            assert!(
                q.expect.is_empty(),
                "QP {}: {} segments missing",
                q.qpn,
                q.expect.len()
            );
            assert!(q.cq_expect.is_empty(), "QP {}: completions missing", q.qpn);
        }
        assert!(self.dma.faults().is_empty(), "{:?}", self.dma.faults());
        assert_eq!(self.mac.errors(), 0);
        assert_eq!(self.core.get_cnt_tx_desc_drop(), 0);
        assert_eq!(self.core.get_cnt_tx_pay_err(), 0);
        assert_eq!(self.core.get_cnt_dma_rd_cpl_bad(), 0);
        self.core.cycle() - start
    }
}

pub(crate) fn random_wr(rng: &mut Rng, max_len: u64) -> Wr {
    let len = match rng.below(4) {
        0 => rng.below(17),
        1 => rng.below(200),
        _ => rng.below(max_len + 1),
    } as usize;
    let data = rng.bytes(len);
    match rng.below(6) {
        0..=2 => Wr::Write {
            stag: rng.next_u32(),
            to: rng.next_u64(),
            data,
        },
        3 => Wr::Send {
            data,
            se: rng.chance(0.5),
            inv: None,
        },
        4 => Wr::Send {
            data,
            se: rng.chance(0.5),
            inv: Some(rng.next_u32()),
        },
        _ => Wr::Read {
            rr: ReadRequestRepr {
                // The sink SGE is checked at post time (LOCAL_WRITE):
                // inside the rig's identity region.
                sink_stag: crate::core_rig::IDENT_LKEY,
                sink_to: crate::core_rig::IDENT_VA + rng.below(1 << 30),
                size: 1 + rng.below(1 << 20) as u32,
                src_stag: rng.next_u32(),
                src_to: rng.next_u64(),
            },
        },
    }
}

pub(crate) fn dma_cfg(seed: u64, jitter: u64) -> DmaConfig {
    DmaConfig {
        read_jitter: jitter,
        seed,
        log: false,
        ..DmaConfig::default()
    }
}
