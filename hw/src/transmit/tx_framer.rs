//! TX framing pipeline: segment descriptor + payload stream in, one
//! Ethernet/IPv4/TCP frame carrying one FPDU out on the MAC TX stream, at one
//! beat per clock. Contract in `docs/rtl.md` ("TX framer").
//!
//! ```text
//! desc_* ──► TxMpa ──beats──► data FIFO (2048 x 65) ──► TxTcpHdr ──► tx_*
//! pay_*  ──►   │                                          ▲
//!              └──record (side band, T, psum, CRC)──► record FIFO (8)
//! ```
//! `TxMpa` (`tx_mpa`, with `tx_ddp_hdr` and a `Crc32cX64`) builds the TCP
//! payload — ULPDU_LENGTH, DDP/RDMAP header, payload, pad, markers, a CRC
//! placeholder — and the record with the CRC and the payload's checksum sum;
//! `TxTcpHdr` (`tx_tcp_hdr`) sends the 54-octet header with both checksums,
//! then the payload with the CRC in place. Store-and-forward per segment:
//! a frame starts once its payload is whole in the data FIFO.
//!
//! Descriptor queue (`Profile::tx_desc_q_log2`; sim 8 descriptors, board
//! none): `TxMpa` takes one descriptor at a time and holds it until its
//! payload has gone through, so without a queue a source's next descriptor
//! (and with it, in `tx_seg`, the payload read after next) waits for that
//! payload's DMA round trip. The queue takes descriptors while `TxMpa` is
//! busy; payloads still arrive in descriptor order on `pay_*`. A descriptor
//! that finds the queue empty and `TxMpa` idle goes straight in (no added
//! clock).
//!
//! Jumbo frames: the framer takes FPDUs up to the TCP payload of a
//! 9000-octet IP MTU (8960 octets, markers included; `tx_mpa::MAX_FPDU_WORDS`,
//! `abi::caps::TX_MAX_TCP_PAYLOAD`), i.e. 1120 beats, so the data FIFO is
//! 2048 beats deep (the next power of two; 1.8 such segments).
//!
//! Profiles (`crate::profile`): `TxFramerN<PR>` takes its FIFO depth
//! (`tx_fifo_log2`) and its FPDU limit (`tx_max_tcp_payload`, in `TxMpaN`)
//! from `PROFILES[PR]`: the sim profile as above; the board (MTU 1500) a
//! 512-beat FIFO (2 DP16KD instead of 8) that holds 2.8 frames of a
//! 1460-octet TCP payload (183 beats), and `tx_mpa` drops any FPDU longer
//! than that payload (`cnt_desc_drop`) so a frame is never cut.

use crate::common::fifo::Fifo;
use crate::common::fifo_p::FifoP;
use crate::transmit::tx_mpa::{TxMpaN, REC_W};
use crate::transmit::tx_tcp_hdr::{TxTcpHdr, SIDE_W};
use rust_hdl::prelude::*;

/// A queued descriptor: the side band (`SIDE_W` = 272 bits, with the
/// sequence number at 192) then crc_en, mk_en, seq_start, opcode, last,
/// stag, to, qn, msn, mo, pay_len (bit offsets in `update`).
pub const DQ_W: usize = SIDE_W + 247;
const _: () = assert!(SIDE_W == 272);

/// The framer of the sim profile (jumbo frames, 2048-beat FIFO).
pub type TxFramer = TxFramerN<{ crate::profile::PR_SIM }>;

/// The framer of core profile `PR` (module doc, "Profiles").
#[derive(LogicBlock)]
pub struct TxFramerN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high; hold for at least 2 clocks.
    pub reset: Signal<In, Bit>,
    // Segment descriptor (valid/ready).
    pub desc_valid: Signal<In, Bit>,
    pub desc_ready: Signal<Out, Bit>,
    pub desc_dst_mac: Signal<In, Bits<48>>,
    pub desc_src_mac: Signal<In, Bits<48>>,
    pub desc_src_ip: Signal<In, Bits<32>>,
    pub desc_dst_ip: Signal<In, Bits<32>>,
    pub desc_src_port: Signal<In, Bits<16>>,
    pub desc_dst_port: Signal<In, Bits<16>>,
    pub desc_seq: Signal<In, Bits<32>>,
    pub desc_ack: Signal<In, Bits<32>>,
    pub desc_window: Signal<In, Bits<16>>,
    pub desc_crc_en: Signal<In, Bit>,
    pub desc_mk_en: Signal<In, Bit>,
    pub desc_seq_start: Signal<In, Bits<32>>,
    pub desc_opcode: Signal<In, Bits<4>>,
    pub desc_last: Signal<In, Bit>,
    pub desc_stag: Signal<In, Bits<32>>,
    pub desc_to: Signal<In, Bits<64>>,
    pub desc_qn: Signal<In, Bits<32>>,
    pub desc_msn: Signal<In, Bits<32>>,
    pub desc_mo: Signal<In, Bits<32>>,
    pub desc_pay_len: Signal<In, Bits<16>>,
    // Payload stream.
    pub pay_data: Signal<In, Bits<64>>,
    pub pay_keep: Signal<In, Bits<4>>,
    pub pay_last: Signal<In, Bit>,
    pub pay_valid: Signal<In, Bit>,
    pub pay_ready: Signal<Out, Bit>,
    // MAC TX stream (frames without FCS).
    pub tx_data: Signal<Out, Bits<64>>,
    pub tx_keep: Signal<Out, Bits<4>>,
    pub tx_last: Signal<Out, Bit>,
    pub tx_valid: Signal<Out, Bit>,
    pub tx_ready: Signal<In, Bit>,
    // Counters (32 bits, wrapping, cleared by reset).
    pub cnt_tx_frames: Signal<Out, Bits<32>>,
    pub cnt_desc_drop: Signal<Out, Bits<32>>,
    pub cnt_pay_err: Signal<Out, Bits<32>>,
    mpa: TxMpaN<PR>,
    /// `2^tx_fifo_log2` beats: 2048 (sim: a whole 8960-octet FPDU, 1120
    /// beats, fits) or 512 (board: 2.8 FPDUs of 1460 octets).
    dfifo: FifoP<Bits<65>, 11, 12>,
    rfifo: Fifo<Bits<REC_W>, 3, 4>,
    hdr: TxTcpHdr,
    /// Descriptor queue (module doc), on when `dq_on`.
    dq: FifoP<Bits<DQ_W>, 3, 4>,
    dq_on: Constant<Bit>,
    /// The descriptor as it comes in, packed.
    dq_in: Signal<Local, Bits<DQ_W>>,
    /// The descriptor `TxMpa` sees: the queue's head or the input.
    dq_h: Signal<Local, Bits<DQ_W>>,
    /// The queue holds descriptors: `TxMpa` takes its head.
    use_q: Signal<Local, Bit>,
    /// The input goes straight to `TxMpa`.
    byp: Signal<Local, Bit>,
    side: Signal<Local, Bits<SIDE_W>>,
}

impl<const PR: usize> Default for TxFramerN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            desc_valid: Default::default(),
            desc_ready: Default::default(),
            desc_dst_mac: Default::default(),
            desc_src_mac: Default::default(),
            desc_src_ip: Default::default(),
            desc_dst_ip: Default::default(),
            desc_src_port: Default::default(),
            desc_dst_port: Default::default(),
            desc_seq: Default::default(),
            desc_ack: Default::default(),
            desc_window: Default::default(),
            desc_crc_en: Default::default(),
            desc_mk_en: Default::default(),
            desc_seq_start: Default::default(),
            desc_opcode: Default::default(),
            desc_last: Default::default(),
            desc_stag: Default::default(),
            desc_to: Default::default(),
            desc_qn: Default::default(),
            desc_msn: Default::default(),
            desc_mo: Default::default(),
            desc_pay_len: Default::default(),
            pay_data: Default::default(),
            pay_keep: Default::default(),
            pay_last: Default::default(),
            pay_valid: Default::default(),
            pay_ready: Default::default(),
            tx_data: Default::default(),
            tx_keep: Default::default(),
            tx_last: Default::default(),
            tx_valid: Default::default(),
            tx_ready: Default::default(),
            cnt_tx_frames: Default::default(),
            cnt_desc_drop: Default::default(),
            cnt_pay_err: Default::default(),
            mpa: Default::default(),
            rfifo: Default::default(),
            hdr: Default::default(),
            dfifo: FifoP::new(crate::profile::PROFILES[PR].tx_fifo_log2),
            dq: FifoP::new(crate::profile::PROFILES[PR].tx_desc_q_log2.max(1)),
            dq_on: Constant::new(crate::profile::PROFILES[PR].tx_desc_q_log2 != 0),
            dq_in: Default::default(),
            dq_h: Default::default(),
            use_q: Default::default(),
            byp: Default::default(),
            side: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for TxFramerN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, mpa, dfifo, rfifo, hdr, dq);
        self.mpa.reset.next = self.reset.val();
        self.dfifo.reset.next = self.reset.val();
        self.rfifo.reset.next = self.reset.val();
        self.hdr.reset.next = self.reset.val();

        // Side band layout: `tx_tcp_hdr` module docs.
        self.side.next = bit_cast::<SIDE_W, 48>(self.desc_dst_mac.val())
            | (bit_cast::<SIDE_W, 48>(self.desc_src_mac.val()) << 48)
            | (bit_cast::<SIDE_W, 32>(self.desc_src_ip.val()) << 96)
            | (bit_cast::<SIDE_W, 32>(self.desc_dst_ip.val()) << 128)
            | (bit_cast::<SIDE_W, 16>(self.desc_src_port.val()) << 160)
            | (bit_cast::<SIDE_W, 16>(self.desc_dst_port.val()) << 176)
            | (bit_cast::<SIDE_W, 32>(self.desc_seq.val()) << 192)
            | (bit_cast::<SIDE_W, 32>(self.desc_ack.val()) << 224)
            | (bit_cast::<SIDE_W, 16>(self.desc_window.val()) << 256);
        self.dq_in.next = bit_cast::<DQ_W, SIDE_W>(self.side.val())
            | (bit_cast::<DQ_W, 1>(self.desc_crc_en.val().into()) << 272)
            | (bit_cast::<DQ_W, 1>(self.desc_mk_en.val().into()) << 273)
            | (bit_cast::<DQ_W, 32>(self.desc_seq_start.val()) << 274)
            | (bit_cast::<DQ_W, 4>(self.desc_opcode.val()) << 306)
            | (bit_cast::<DQ_W, 1>(self.desc_last.val().into()) << 310)
            | (bit_cast::<DQ_W, 32>(self.desc_stag.val()) << 311)
            | (bit_cast::<DQ_W, 64>(self.desc_to.val()) << 343)
            | (bit_cast::<DQ_W, 32>(self.desc_qn.val()) << 407)
            | (bit_cast::<DQ_W, 32>(self.desc_msn.val()) << 439)
            | (bit_cast::<DQ_W, 32>(self.desc_mo.val()) << 471)
            | (bit_cast::<DQ_W, 16>(self.desc_pay_len.val()) << 503);
        // Descriptor queue (module doc): `TxMpa` takes the queue's head
        // while it holds any, else the input directly; the input goes into
        // the queue when `TxMpa` cannot take it now. `count` (not `empty`,
        // which lags a write by a clock) decides, so nothing overtakes.
        self.dq.reset.next = self.reset.val();
        self.use_q.next = self.dq_on.val() & (self.dq.count.val() != 0);
        self.dq_h.next = self.dq_in.val();
        self.mpa.d_valid.next = self.desc_valid.val();
        if self.use_q.val() {
            self.dq_h.next = self.dq.data_out.val();
            self.mpa.d_valid.next = !self.dq.empty.val();
        }
        self.dq.read.next = self.use_q.val() & self.mpa.d_ready.val();
        self.byp.next = !self.use_q.val() & self.mpa.d_ready.val();
        self.desc_ready.next = self.byp.val() | (self.dq_on.val() & !self.dq.full.val());
        self.dq.write.next = self.desc_valid.val() & !self.byp.val() & self.dq_on.val();
        self.dq.data_in.next = self.dq_in.val();
        self.mpa.d_side.next = self.dq_h.val().get_bits::<SIDE_W>(0);
        self.mpa.d_seq.next = self.dq_h.val().get_bits::<32>(192);
        self.mpa.d_crc_en.next = self.dq_h.val().get_bit(272);
        self.mpa.d_mk_en.next = self.dq_h.val().get_bit(273);
        self.mpa.d_seq_start.next = self.dq_h.val().get_bits::<32>(274);
        self.mpa.d_opcode.next = self.dq_h.val().get_bits::<4>(306);
        self.mpa.d_last.next = self.dq_h.val().get_bit(310);
        self.mpa.d_stag.next = self.dq_h.val().get_bits::<32>(311);
        self.mpa.d_to.next = self.dq_h.val().get_bits::<64>(343);
        self.mpa.d_qn.next = self.dq_h.val().get_bits::<32>(407);
        self.mpa.d_msn.next = self.dq_h.val().get_bits::<32>(439);
        self.mpa.d_mo.next = self.dq_h.val().get_bits::<32>(471);
        self.mpa.d_pay_len.next = self.dq_h.val().get_bits::<16>(503);

        self.mpa.pay_data.next = self.pay_data.val();
        self.mpa.pay_keep.next = self.pay_keep.val();
        self.mpa.pay_last.next = self.pay_last.val();
        self.mpa.pay_valid.next = self.pay_valid.val();
        self.pay_ready.next = self.mpa.pay_ready.val();

        self.dfifo.write.next = self.mpa.o_write.val();
        self.dfifo.data_in.next = bit_cast::<65, 64>(self.mpa.o_data.val())
            | (bit_cast::<65, 1>(self.mpa.o_last.val().into()) << 64);
        self.mpa.o_full.next = self.dfifo.full.val();
        self.rfifo.write.next = self.mpa.r_write.val();
        self.rfifo.data_in.next = self.mpa.r_data.val();
        self.mpa.r_count.next = self.rfifo.count.val();

        self.hdr.rec_data.next = self.rfifo.data_out.val();
        self.hdr.rec_empty.next = self.rfifo.empty.val();
        self.rfifo.read.next = self.hdr.rec_read.val();
        self.hdr.dat_data.next = self.dfifo.data_out.val();
        self.hdr.dat_empty.next = self.dfifo.empty.val();
        self.dfifo.read.next = self.hdr.dat_read.val();

        self.tx_data.next = self.hdr.tx_data.val();
        self.tx_keep.next = self.hdr.tx_keep.val();
        self.tx_last.next = self.hdr.tx_last.val();
        self.tx_valid.next = self.hdr.tx_valid.val();
        self.hdr.tx_ready.next = self.tx_ready.val();

        self.cnt_tx_frames.next = self.hdr.cnt_frames.val();
        self.cnt_desc_drop.next = self.mpa.cnt_drop.val();
        self.cnt_pay_err.next = self.mpa.cnt_pay_err.val();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::common::testutil::{beats, Rng};
    use rnic_wire::model::net::{data_frame, Endpoint};
    use rnic_wire::model::{Message, MpaSettings, TxStream};
    use rnic_wire::mpa::{fpdu_len, marked_len, mulpdu};
    use rnic_wire::rdmap::ReadRequestRepr;
    use std::collections::VecDeque;

    /// One segment descriptor as the scheduler would issue it.
    #[derive(Debug, Clone)]
    pub struct Desc {
        pub crc: bool,
        pub mk: bool,
        pub seq: u32,
        pub seq_start: u32,
        pub opcode: u8,
        pub last: bool,
        pub stag: u32,
        pub to: u64,
        pub qn: u32,
        pub msn: u32,
        pub mo: u32,
        pub pay: Vec<u8>,
        /// Overrides `pay.len()` in the descriptor (bad-input tests).
        pub pay_len: Option<u16>,
        pub src: Endpoint,
        pub dst: Endpoint,
        pub ack: u32,
        pub window: u16,
        /// The reference TCP payload (`TxStream::send`) for this segment.
        pub wire: Vec<u8>,
    }

    /// A connection: endpoints, MPA settings, and the test's own
    /// segmenter (MULPDU, TO/MO, MSNs, sequence numbers), which must agree
    /// with the reference `TxStream` it runs next to.
    pub struct Conn {
        pub src: Endpoint,
        pub dst: Endpoint,
        pub ack: u32,
        pub mpa: MpaSettings,
        pub mulpdu: usize,
        pub seq: u32,
        pub msn: [u32; 3],
        pub reference: TxStream,
    }

    impl Conn {
        pub fn new(rng: &mut Rng, crc: bool, markers: bool, seq_start: u32, emss: u16) -> Conn {
            let ep = |rng: &mut Rng| Endpoint {
                mac: rng.bytes(6).try_into().unwrap(),
                ip: rng.bytes(4).try_into().unwrap(),
                port: rng.next_u64() as u16,
            };
            let mpa = MpaSettings {
                crc,
                markers,
                seq_start,
            };
            Conn {
                src: ep(rng),
                dst: ep(rng),
                ack: rng.next_u64() as u32,
                mpa,
                mulpdu: mulpdu(emss, markers) as usize,
                seq: seq_start,
                msn: [1; 3],
                reference: TxStream::new(mpa, emss),
            }
        }

        fn desc(&self, opcode: u8, last: bool, pay: &[u8]) -> Desc {
            Desc {
                crc: self.mpa.crc,
                mk: self.mpa.markers,
                seq: self.seq,
                seq_start: self.mpa.seq_start,
                opcode,
                last,
                stag: 0,
                to: 0,
                qn: 0,
                msn: 0,
                mo: 0,
                pay: pay.to_vec(),
                pay_len: None,
                src: self.src,
                dst: self.dst,
                ack: self.ack,
                window: rnic_wire::model::net::WINDOW,
                wire: Vec::new(),
            }
        }

        /// Advances our sequence number past a segment with this ULPDU.
        fn advance(&mut self, ulpdu: usize) {
            let flen = fpdu_len(ulpdu);
            let wire = if self.mpa.markers {
                marked_len(self.mpa.seq_start, self.seq, flen)
            } else {
                flen
            };
            self.seq = self.seq.wrapping_add(wire as u32);
        }

        /// Descriptors for `msg` and the reference frames for it.
        pub fn send(&mut self, msg: &Message<'_>) -> (Vec<Desc>, Vec<Vec<u8>>) {
            let mut out = Vec::new();
            let tagged = |c: &mut Conn, out: &mut Vec<Desc>, op, stag, to: u64, data: &[u8]| {
                let room = c.mulpdu - 14;
                let n = data.len().div_ceil(room).max(1);
                for i in 0..n {
                    let chunk = &data[(i * room).min(data.len())..((i + 1) * room).min(data.len())];
                    let mut d = c.desc(op, i + 1 == n, chunk);
                    d.stag = stag;
                    d.to = to + (i * room) as u64;
                    d.qn = 0x5a5a_5a5a; // ignored for tagged opcodes
                    out.push(d);
                    c.advance(14 + chunk.len());
                }
            };
            match *msg {
                Message::Write { stag, to, data } => tagged(self, &mut out, 0, stag, to, data),
                Message::ReadResponse { stag, to, data } => {
                    tagged(self, &mut out, 2, stag, to, data)
                }
                Message::Send {
                    data,
                    solicited,
                    invalidate,
                } => {
                    let room = self.mulpdu - 18;
                    let n = data.len().div_ceil(room).max(1);
                    let op = 3 + 2 * solicited as u8 + invalidate.is_some() as u8;
                    let msn = self.msn[0];
                    self.msn[0] += 1;
                    for i in 0..n {
                        let chunk =
                            &data[(i * room).min(data.len())..((i + 1) * room).min(data.len())];
                        let mut d = self.desc(op, i + 1 == n, chunk);
                        // Garbage STag without Invalidate: must not be sent.
                        d.stag = invalidate.unwrap_or(0xdead_beef);
                        d.msn = msn;
                        d.mo = (i * room) as u32;
                        out.push(d);
                        self.advance(18 + chunk.len());
                    }
                }
                Message::ReadRequest(req) => {
                    let mut body = [0u8; 28];
                    req.emit(&mut body).unwrap();
                    let mut d = self.desc(1, true, &body);
                    d.qn = 1;
                    d.msn = self.msn[1];
                    self.msn[1] += 1;
                    out.push(d);
                    self.advance(18 + 28);
                }
                Message::ImmediateData { data, solicited } => {
                    let mut d = self.desc(8 + solicited as u8, true, &data);
                    d.msn = self.msn[0];
                    self.msn[0] += 1;
                    out.push(d);
                    self.advance(18 + 8);
                }
                _ => unimplemented!(),
            }
            let segs = self.reference.send(msg).unwrap();
            assert_eq!(segs.len(), out.len(), "segment count vs reference");
            let mut frames = Vec::new();
            for (s, d) in segs.iter().zip(out.iter_mut()) {
                assert_eq!(s.seq, d.seq, "our sequence numbers vs reference");
                d.wire = s.payload.clone();
                frames.push(data_frame(
                    &self.src, &self.dst, s.seq, self.ack, &s.payload,
                ));
            }
            assert_eq!(self.seq, self.reference.seq());
            (out, frames)
        }
    }

    /// A random message of up to `max` octets (several kinds, zero-length
    /// ones included).
    pub fn random_message<'a>(rng: &mut Rng, data: &'a [u8], max: usize) -> Message<'a> {
        let len = match rng.below(6) {
            0 => 0,
            1 => rng.below(16),
            _ => rng.below(max + 1),
        };
        let d = &data[..len];
        match rng.below(6) {
            0 | 1 => Message::Write {
                stag: rng.next_u64() as u32,
                to: rng.next_u64() >> 1,
                data: d,
            },
            2 => Message::ReadResponse {
                stag: rng.next_u64() as u32,
                to: rng.next_u64() >> 1,
                data: d,
            },
            3 => Message::Send {
                data: d,
                solicited: rng.below(2) == 1,
                invalidate: (rng.below(2) == 1).then_some(rng.next_u64() as u32),
            },
            4 => Message::ReadRequest(ReadRequestRepr {
                sink_stag: rng.next_u64() as u32,
                sink_to: rng.next_u64(),
                size: rng.next_u64() as u32,
                src_stag: rng.next_u64() as u32,
                src_to: rng.next_u64(),
            }),
            _ => Message::ImmediateData {
                data: rng.bytes(8).try_into().unwrap(),
                solicited: rng.below(2) == 1,
            },
        }
    }

    fn mac(m: [u8; 6]) -> u64 {
        m.iter().fold(0u64, |a, &b| a << 8 | b as u64)
    }

    pub struct Harness<const PR: usize = { crate::profile::PR_SIM }> {
        pub uut: TxFramerN<PR>,
        pub cycle: u64,
    }

    /// Outcome of a run: frames, and per frame the cycles of its first and
    /// last beat.
    pub struct Run {
        pub frames: Vec<Vec<u8>>,
        pub first: Vec<u64>,
        pub last: Vec<u64>,
    }

    impl Harness {
        pub fn new() -> Harness {
            Harness::<{ crate::profile::PR_SIM }>::of_profile()
        }
    }

    impl<const PR: usize> Harness<PR> {
        /// The framer of profile `PR`, reset.
        pub fn of_profile() -> Harness<PR> {
            let mut uut = TxFramerN::<PR>::default();
            uut.clock.connect();
            uut.reset.connect();
            uut.desc_valid.connect();
            uut.desc_dst_mac.connect();
            uut.desc_src_mac.connect();
            uut.desc_src_ip.connect();
            uut.desc_dst_ip.connect();
            uut.desc_src_port.connect();
            uut.desc_dst_port.connect();
            uut.desc_seq.connect();
            uut.desc_ack.connect();
            uut.desc_window.connect();
            uut.desc_crc_en.connect();
            uut.desc_mk_en.connect();
            uut.desc_seq_start.connect();
            uut.desc_opcode.connect();
            uut.desc_last.connect();
            uut.desc_stag.connect();
            uut.desc_to.connect();
            uut.desc_qn.connect();
            uut.desc_msn.connect();
            uut.desc_mo.connect();
            uut.desc_pay_len.connect();
            uut.pay_data.connect();
            uut.pay_keep.connect();
            uut.pay_last.connect();
            uut.pay_valid.connect();
            uut.tx_ready.connect();
            uut.connect_all();
            let mut h = Harness { uut, cycle: 0 };
            h.uut.reset.next = true;
            h.half(false);
            h.half(true);
            h.half(false);
            h.half(true);
            h.uut.reset.next = false;
            h
        }

        fn half(&mut self, clk: bool) {
            self.uut.clock.next = clk.into();
            assert!(simulate(&mut self.uut, 1000), "did not settle");
        }

        fn set_desc(&mut self, d: &Desc) {
            let u = &mut self.uut;
            u.desc_dst_mac.next = mac(d.dst.mac).into();
            u.desc_src_mac.next = mac(d.src.mac).into();
            u.desc_src_ip.next = (u32::from_be_bytes(d.src.ip) as u64).into();
            u.desc_dst_ip.next = (u32::from_be_bytes(d.dst.ip) as u64).into();
            u.desc_src_port.next = (d.src.port as u64).into();
            u.desc_dst_port.next = (d.dst.port as u64).into();
            u.desc_seq.next = (d.seq as u64).into();
            u.desc_ack.next = (d.ack as u64).into();
            u.desc_window.next = (d.window as u64).into();
            u.desc_crc_en.next = d.crc;
            u.desc_mk_en.next = d.mk;
            u.desc_seq_start.next = (d.seq_start as u64).into();
            u.desc_opcode.next = (d.opcode as u64).into();
            u.desc_last.next = d.last;
            u.desc_stag.next = (d.stag as u64).into();
            u.desc_to.next = d.to.into();
            u.desc_qn.next = (d.qn as u64).into();
            u.desc_msn.next = (d.msn as u64).into();
            u.desc_mo.next = (d.mo as u64).into();
            u.desc_pay_len.next = (d.pay_len.unwrap_or(d.pay.len() as u16) as u64).into();
        }

        /// Runs `descs` (their payloads as given by `streams`, one beat list
        /// per descriptor with a payload) until `n_frames` frames came out or
        /// `max_cycles` passed. `p_desc`, `p_pay`, `p_ready`: percent
        /// chance per clock that a descriptor / payload beat is offered and
        /// that `tx_ready` is high.
        #[allow(clippy::too_many_arguments)]
        pub fn run(
            &mut self,
            rng: &mut Rng,
            descs: &[Desc],
            streams: &[Vec<(u64, u8, bool)>],
            n_frames: usize,
            p_desc: usize,
            p_pay: usize,
            p_ready: usize,
            max_cycles: u64,
        ) -> Run {
            let mut dq: VecDeque<&Desc> = descs.iter().collect();
            let mut pq: VecDeque<(u64, u8, bool)> = streams.iter().flatten().copied().collect();
            let mut run = Run {
                frames: Vec::new(),
                first: Vec::new(),
                last: Vec::new(),
            };
            let mut cur = Vec::new();
            let start = self.cycle;
            while run.frames.len() < n_frames {
                assert!(
                    self.cycle - start < max_cycles,
                    "timeout: {} frames",
                    run.frames.len()
                );
                let dv = !dq.is_empty() && rng.below(100) < p_desc;
                if let Some(d) = dq.front() {
                    self.set_desc(d);
                }
                self.uut.desc_valid.next = dv;
                let pv = !pq.is_empty() && rng.below(100) < p_pay;
                if let Some(&(data, keep, last)) = pq.front() {
                    // Garbage above `keep` on the last beat.
                    let g = if keep < 8 {
                        rng.next_u64() << (8 * keep)
                    } else {
                        0
                    };
                    self.uut.pay_data.next = (data | g).into();
                    self.uut.pay_keep.next = (keep as u64).into();
                    self.uut.pay_last.next = last;
                } else {
                    self.uut.pay_data.next = rng.next_u64().into();
                }
                self.uut.pay_valid.next = pv;
                let rdy = rng.below(100) < p_ready;
                self.uut.tx_ready.next = rdy;
                self.half(false);
                if dv && self.uut.desc_ready.val() {
                    dq.pop_front();
                }
                if pv && self.uut.pay_ready.val() {
                    pq.pop_front();
                }
                if rdy && self.uut.tx_valid.val() {
                    if cur.is_empty() {
                        run.first.push(self.cycle);
                    }
                    let k = self.uut.tx_keep.val().to_u64() as usize;
                    let last = self.uut.tx_last.val();
                    assert!(k == 8 || (last && k >= 1), "keep {k} on a non-last beat");
                    let d = self.uut.tx_data.val().to_u64().to_le_bytes();
                    cur.extend_from_slice(&d[..k]);
                    if last {
                        run.last.push(self.cycle);
                        run.frames.push(std::mem::take(&mut cur));
                    }
                }
                self.half(true);
                self.cycle += 1;
            }
            assert!(dq.is_empty() && pq.is_empty(), "inputs left over");
            run
        }
    }

    /// The payload beats of every descriptor (none for an empty payload).
    pub fn streams(descs: &[Desc]) -> Vec<Vec<(u64, u8, bool)>> {
        descs
            .iter()
            .filter(|d| !d.pay.is_empty())
            .map(|d| {
                let b = beats(&d.pay);
                let n = b.len();
                b.into_iter()
                    .enumerate()
                    .map(|(i, (x, k))| (x, k, i + 1 == n))
                    .collect()
            })
            .collect()
    }

    /// Second, independent check: smoltcp parses the frame and verifies the
    /// IPv4 and TCP checksums.
    pub fn smoltcp_check(frame: &[u8]) {
        use smoltcp::wire::{EthernetFrame, EthernetProtocol, IpAddress, Ipv4Packet, TcpPacket};
        let eth = EthernetFrame::new_checked(frame).unwrap();
        assert_eq!(eth.ethertype(), EthernetProtocol::Ipv4);
        let ip = Ipv4Packet::new_checked(eth.payload()).unwrap();
        assert!(ip.verify_checksum(), "IPv4 checksum");
        assert_eq!(ip.total_len() as usize, frame.len() - 14);
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        assert!(
            tcp.verify_checksum(
                &IpAddress::Ipv4(ip.src_addr()),
                &IpAddress::Ipv4(ip.dst_addr())
            ),
            "TCP checksum"
        );
        assert!(tcp.ack() && tcp.psh());
    }

    fn check_frames(run: &Run, expect: &[Vec<u8>]) {
        assert_eq!(run.frames.len(), expect.len());
        for (i, (g, e)) in run.frames.iter().zip(expect).enumerate() {
            if g != e {
                let at = g.iter().zip(e).position(|(a, b)| a != b);
                panic!(
                    "frame {i}: got {} octets, expected {}, first difference at {at:?}\n got {g:02x?}\nwant {e:02x?}",
                    g.len(),
                    e.len()
                );
            }
            smoltcp_check(g);
        }
    }

    fn random_traffic(seed: u64, crc: bool, markers: bool) {
        let mut rng = Rng::new(seed);
        let data = rng.bytes(3000);
        let mut h = Harness::new();
        // SeqStart within a few segments of the 2^32 wrap.
        let seq_start = (rng.below(1500) as u32).wrapping_neg() & !3;
        let emss = [1460u16, 300 + rng.below(400) as u16][rng.below(2)];
        let mut c = Conn::new(&mut rng, crc, markers, seq_start, emss);
        let mut descs = Vec::new();
        let mut expect = Vec::new();
        while expect.len() < 14 {
            let msg = random_message(&mut rng, &data, 1200);
            let (d, f) = c.send(&msg);
            descs.extend(d);
            expect.extend(f);
        }
        let s = streams(&descs);
        let run = h.run(&mut rng, &descs, &s, expect.len(), 70, 85, 75, 20_000);
        check_frames(&run, &expect);
        assert_eq!(h.uut.cnt_tx_frames.val().to_u64() as usize, expect.len());
        assert_eq!(h.uut.cnt_desc_drop.val().to_u64(), 0);
        assert_eq!(h.uut.cnt_pay_err.val().to_u64(), 0);
        assert!(
            descs.iter().any(|d| d.seq < d.seq_start) || descs.len() < 3,
            "sequence numbers did not wrap"
        );
    }

    #[test]
    fn frames_match_reference_crc_markers() {
        random_traffic(101, true, true);
    }

    #[test]
    fn frames_match_reference_crc_only() {
        random_traffic(102, true, false);
    }

    #[test]
    fn frames_match_reference_markers_only() {
        random_traffic(103, false, true);
    }

    #[test]
    fn frames_match_reference_plain() {
        random_traffic(104, false, false);
    }

    /// Many short FPDUs with markers on: markers land in front of the
    /// header, between header words, between payload words and right in
    /// front of the CRC word, in both word slots of a beat.
    #[test]
    fn small_fpdus_markers_everywhere() {
        let mut rng = Rng::new(105);
        let data = rng.bytes(64);
        let mut h = Harness::new();
        let seq_start = 0u32.wrapping_sub(600);
        let mut c = Conn::new(&mut rng, true, true, seq_start, 1460);
        let mut descs = Vec::new();
        let mut expect = Vec::new();
        // Where the markers fall: (wire word of the FPDU, wire words from
        // the marker to the FPDU's end, the marker included).
        let mut at = std::collections::BTreeSet::new();
        let covered = |at: &std::collections::BTreeSet<(usize, usize)>| {
            at.iter().any(|&(p, _)| p == 0)
                && at.iter().any(|&(p, _)| (1..5).contains(&p))
                && at.iter().any(|&(_, r)| r == 2)
                && at.iter().any(|&(p, _)| p % 2 == 1)
        };
        while expect.len() < 40 || !covered(&at) {
            assert!(expect.len() < 400, "coverage not reached: {at:?}");
            let msg = random_message(&mut rng, &data, 40);
            let (d, f) = c.send(&msg);
            for (d, f) in d.iter().zip(&f) {
                let phase = (d.seq.wrapping_sub(d.seq_start) % 512) as usize / 4;
                let words = (f.len() - 54) / 4;
                let pos = (128 - phase) % 128;
                if pos < words {
                    at.insert((pos, words - pos));
                }
            }
            descs.extend(d);
            expect.extend(f);
        }
        let s = streams(&descs);
        let run = h.run(&mut rng, &descs, &s, expect.len(), 90, 90, 80, 20_000);
        check_frames(&run, &expect);
    }

    /// The descriptor queue takes descriptors while `TxMpa` waits for a
    /// payload: with no payload offered, the sim profile takes 1 + 8
    /// descriptors (the one `TxMpa` holds and a full queue), the board
    /// (no queue) 1. The frames then come out in order, byte-exact.
    #[test]
    fn descriptors_queue_ahead_of_their_payloads() {
        use crate::profile::{PROFILES, PR_BOARD, PR_SIM};
        fn case<const PR: usize>(seed: u64) {
            let mut rng = Rng::new(seed);
            let mut h = Harness::<PR>::of_profile();
            let seq_start = rng.next_u64() as u32;
            let mut c = Conn::new(&mut rng, true, false, seq_start, 1460);
            let data = rng.bytes(64);
            let mut descs = Vec::new();
            let mut expect = Vec::new();
            for i in 0..12u64 {
                let (d, f) = c.send(&Message::Write {
                    stag: 0x1000 + i as u32,
                    to: i << 12,
                    data: &data,
                });
                descs.extend(d);
                expect.extend(f);
            }
            let mut taken = 0;
            for _ in 0..40 {
                h.set_desc(&descs[taken]);
                h.uut.desc_valid.next = true;
                h.uut.pay_valid.next = false;
                h.uut.tx_ready.next = true;
                h.half(false);
                if h.uut.desc_ready.val() {
                    taken += 1;
                }
                h.half(true);
                h.cycle += 1;
            }
            h.uut.desc_valid.next = false;
            let q = PROFILES[PR].tx_desc_q_log2;
            let want = 1 + if q == 0 { 0 } else { 1 << q };
            assert_eq!(taken, want, "descriptors taken before any payload");
            let s = streams(&descs);
            let run = h.run(
                &mut rng,
                &descs[taken..],
                &s,
                expect.len(),
                100,
                100,
                100,
                5_000,
            );
            check_frames(&run, &expect);
        }
        case::<PR_SIM>(301);
        case::<PR_BOARD>(302);
    }

    /// Bad input gets a defined answer and the next segment is framed
    /// right: a descriptor with markers on and a sequence number not
    /// 4-aligned to them, and one longer than `FRAMER_MAX_PAY_LEN`, are dropped
    /// with their payload; a payload stream that ends early is sent
    /// zero-filled, one that is too long is cut, and a wrong `keep` on
    /// the last beat is counted.
    #[test]
    fn bad_input_defined_answers() {
        let mut rng = Rng::new(106);
        let mut h = Harness::new();
        let mut c = Conn::new(&mut rng, true, true, 0xFFFF_FF00, 1460);
        let d40 = rng.bytes(40);
        let d16 = d40[..16].to_vec();
        let beat_list = |p: &[u8]| {
            let b = beats(p);
            let n = b.len();
            b.into_iter()
                .enumerate()
                .map(|(i, (x, k))| (x, k, i + 1 == n))
                .collect::<Vec<_>>()
        };
        let mut descs = Vec::new();
        let mut s = Vec::new();
        let mut expect = Vec::new();
        // 1. misaligned to the markers: dropped.
        let mut bad = c.desc(0, true, &d40);
        bad.seq = bad.seq.wrapping_add(2);
        s.push(beat_list(&d40));
        descs.push(bad);
        // 2. too long for a 9000-octet MTU frame: dropped.
        let big = rng.bytes(crate::transmit::tx_mpa::FRAMER_MAX_PAY_LEN as usize + 1);
        s.push(beat_list(&big));
        descs.push(c.desc(0, true, &big));
        // 3. stream ends after 16 of 40 octets: zeros for the rest.
        let mut z = d16.clone();
        z.resize(40, 0);
        let (d, f) = c.send(&Message::Write {
            stag: 1,
            to: 0,
            data: &z,
        });
        s.push(beat_list(&d16));
        descs.extend(d);
        expect.extend(f);
        // 4. stream of 40 octets for a 16-octet payload: cut.
        let (d, f) = c.send(&Message::Write {
            stag: 2,
            to: 0,
            data: &d16,
        });
        s.push(beat_list(&d40));
        descs.extend(d);
        expect.extend(f);
        // 5. last beat's keep says 8 where 4 octets are due: counted, framed
        // by the descriptor.
        let (d, f) = c.send(&Message::Write {
            stag: 3,
            to: 0,
            data: &d40[..20],
        });
        s.push(beat_list(&d40[..24]));
        descs.extend(d);
        expect.extend(f);
        // 6. a good one after all that.
        let (d, f) = c.send(&Message::Write {
            stag: 4,
            to: 8,
            data: &d40,
        });
        s.push(beat_list(&d40));
        descs.extend(d);
        expect.extend(f);
        let run = h.run(&mut rng, &descs, &s, expect.len(), 80, 80, 80, 5_000);
        check_frames(&run, &expect);
        assert_eq!(h.uut.cnt_desc_drop.val().to_u64(), 2);
        assert_eq!(h.uut.cnt_pay_err.val().to_u64(), 3);
        assert_eq!(h.uut.cnt_tx_frames.val().to_u64(), 4);
    }

    /// MTU 9000: the largest FPDUs a 9000-octet IP MTU frame carries, with
    /// the connection's EMSS 8960 (`abi::caps::TX_MAX_TCP_PAYLOAD`) and the
    /// test's segmenter at `mpa::mulpdu(8960, markers)`:
    /// 1. a tagged one at SeqStart (with markers on, a marker in front and 17
    ///    more: 18 in all), which must be a 9014-octet frame (14 + 9000);
    /// 2. one payload octet more (one FPDU word over the limit): dropped and
    ///    counted, its payload consumed, nothing sent (never truncated);
    /// 3. the largest untagged one (Send) at the sequence number after 1.
    ///
    /// Frames byte for byte against `TxStream::send` + `net::data_frame`,
    /// and smoltcp's IPv4/TCP parsers with both checksums verified.
    fn jumbo(seed: u64, crc: bool, markers: bool) {
        let mut rng = Rng::new(seed);
        let mut h = Harness::new();
        let seq_start = (rng.next_u64() as u32) & !3;
        let emss = rnic_wire::abi::caps::TX_MAX_TCP_PAYLOAD;
        let mut c = Conn::new(&mut rng, crc, markers, seq_start, emss);
        let tagged_max = c.mulpdu - 14;
        let max = crate::transmit::tx_mpa::FRAMER_MAX_PAY_LEN as usize;
        assert_eq!(tagged_max, if markers { max - 72 } else { max });
        let data = rng.bytes(max + 1);
        let mut descs = Vec::new();
        let mut s = Vec::new();
        let mut expect = Vec::new();
        let (d, f) = c.send(&Message::Write {
            stag: 0x1234_5678,
            to: rng.next_u64() >> 1,
            data: &data[..tagged_max],
        });
        assert_eq!(d.len(), 1);
        assert_eq!(f[0].len(), 14 + 9000, "the largest frame of MTU 9000");
        s.extend(streams(&d));
        descs.extend(d);
        expect.extend(f);
        let over = c.desc(0, true, &data[..tagged_max + 1]);
        s.extend(streams(std::slice::from_ref(&over)));
        descs.push(over);
        let (d, f) = c.send(&Message::Send {
            data: &data[..c.mulpdu - 18],
            solicited: false,
            invalidate: None,
        });
        assert_eq!(d.len(), 1);
        assert!(f[0].len() <= 14 + 9000);
        s.extend(streams(&d));
        descs.extend(d);
        expect.extend(f);
        let run = h.run(&mut rng, &descs, &s, expect.len(), 90, 90, 90, 10_000);
        check_frames(&run, &expect);
        assert_eq!(h.uut.cnt_tx_frames.val().to_u64(), 2);
        assert_eq!(h.uut.cnt_desc_drop.val().to_u64(), 1);
        assert_eq!(h.uut.cnt_pay_err.val().to_u64(), 0);
    }

    #[test]
    fn jumbo_max_crc_markers() {
        jumbo(111, true, true);
    }

    #[test]
    fn jumbo_max_crc_only() {
        jumbo(112, true, false);
    }

    #[test]
    fn jumbo_max_markers_only() {
        jumbo(113, false, true);
    }

    #[test]
    fn jumbo_max_plain() {
        jumbo(114, false, false);
    }

    /// Board profile (MTU 1500, 512-beat FIFO): the largest FPDUs of a
    /// 1460-octet EMSS (tagged and untagged, markers on and off) go out
    /// byte-exact against `TxStream::send` + `net::data_frame` (and smoltcp)
    /// while a slow MAC keeps the FIFO full; an FPDU one octet longer is
    /// dropped whole (`cnt_desc_drop`), never cut. Without the profile's
    /// limit in `tx_mpa` the longer one would be framed (jumbo limit).
    #[test]
    fn board_frames_mtu_1500_through_512_beats_and_drops_longer() {
        use crate::profile::{BOARD_MAX_TCP_PAYLOAD, PROFILES, PR_BOARD};
        assert_eq!(PROFILES[PR_BOARD].tx_fifo_log2, 9);
        for (seed, markers) in [(201u64, false), (202, true)] {
            let mut rng = Rng::new(seed);
            let mut h = Harness::<PR_BOARD>::of_profile();
            let seq_start = (rng.next_u64() as u32) & !3;
            let mut c = Conn::new(&mut rng, true, markers, seq_start, BOARD_MAX_TCP_PAYLOAD);
            let tagged_max = c.mulpdu - 14;
            let data = rng.bytes(tagged_max * 3 + 1);
            let mut descs = Vec::new();
            let mut s = Vec::new();
            let mut expect = Vec::new();
            // Three full-size tagged FPDUs: 3 x 183 beats > 512.
            let (d, f) = c.send(&Message::Write {
                stag: 0x0bad_cafe,
                to: rng.next_u64() >> 1,
                data: &data[..tagged_max * 3],
            });
            assert_eq!(d.len(), 3);
            for fr in &f {
                assert_eq!(fr.len(), 14 + 1500, "the largest frame of MTU 1500");
            }
            s.extend(streams(&d));
            descs.extend(d);
            expect.extend(f);
            let over = c.desc(0, true, &data[..tagged_max + 1]);
            s.extend(streams(std::slice::from_ref(&over)));
            descs.push(over);
            let (d, f) = c.send(&Message::Send {
                data: &data[..c.mulpdu - 18],
                solicited: false,
                invalidate: None,
            });
            assert_eq!(d.len(), 1);
            assert!(f[0].len() <= 14 + 1500);
            s.extend(streams(&d));
            descs.extend(d);
            expect.extend(f);
            let run = h.run(&mut rng, &descs, &s, expect.len(), 90, 90, 30, 20_000);
            check_frames(&run, &expect);
            assert_eq!(h.uut.cnt_tx_frames.val().to_u64(), 4);
            assert_eq!(h.uut.cnt_desc_drop.val().to_u64(), 1);
            assert_eq!(h.uut.cnt_pay_err.val().to_u64(), 0);
        }
    }

    /// Back-to-back 1514-octet frames with an always-ready MAC: cycles per
    /// frame and bubbles.
    #[test]
    fn throughput_back_to_back_1514() {
        for markers in [false, true] {
            let mut rng = Rng::new(7);
            let mut h = Harness::new();
            let mut c = Conn::new(&mut rng, true, markers, 1000, 1460);
            let room = c.mulpdu - 14;
            let data = rng.bytes(room * 8);
            let (descs, expect) = c.send(&Message::Write {
                stag: 5,
                to: 0,
                data: &data,
            });
            let s = streams(&descs);
            let run = h.run(&mut rng, &descs, &s, expect.len(), 100, 100, 100, 5000);
            check_frames(&run, &expect);
            let beats: Vec<u64> = expect.iter().map(|f| f.len().div_ceil(8) as u64).collect();
            for (i, b) in beats.iter().enumerate() {
                assert_eq!(
                    run.last[i] - run.first[i] + 1,
                    *b,
                    "bubble inside frame {i}"
                );
            }
            let mut gaps = Vec::new();
            for i in 1..expect.len() {
                gaps.push(run.first[i] - run.last[i - 1] - 1);
            }
            println!(
                "markers {markers}: frame lengths {:?}, beats {:?}, first frame out at cycle {}, gaps between frames {:?}, {} cycles for {} frames",
                expect.iter().map(Vec::len).collect::<Vec<_>>(),
                beats,
                run.first[0],
                gaps,
                run.last[expect.len() - 1] - run.first[0] + 1,
                expect.len()
            );
            assert!(
                gaps.iter().all(|&g| g == 0),
                "bubbles between frames: {gaps:?}"
            );
        }
    }

    /// The block elaborates to Verilog with the core's post-processing.
    /// `TX_FRAMER_VERILOG=<path>` writes it out for `verilator --lint-only`.
    #[test]
    fn generates_verilog() {
        let mut uut = TxFramer::default();
        uut.connect_all();
        let v = crate::gen::postprocess(&generate_verilog(&uut));
        assert!(v.contains("module rnic_core("));
        if let Ok(path) = std::env::var("TX_FRAMER_VERILOG") {
            std::fs::write(path, &v).unwrap();
        }
    }
}
