//! TX: Ethernet II + IPv4 + TCP header in front of a buffered TCP payload,
//! with both checksums, out on the MAC TX stream at one beat per clock.
//! Second stage of `tx_framer`.
//!
//! The frame is what `rnic_wire::model::net::data_frame` builds with
//! smoltcp: Ethernet II (type 0x0800, no FCS), IPv4 with a 20-octet header
//! (DSCP/ECN 0, identification 0, DF, TTL 64, protocol 6, header checksum,
//! RFC 791 §3.1), TCP with a 20-octet header (no options, flags ACK|PSH,
//! urgent pointer 0, checksum over the pseudo-header, header and payload,
//! RFC 9293 §3.1).
//!
//! # Checksums: first pass, not patching
//! The payload sits in the data FIFO whole before the frame starts
//! (store-and-forward: the header goes first and its TCP checksum covers the
//! payload). `tx_mpa` sums the payload's 16-bit lanes as it writes the FIFO
//! and hands the sum over in the record with the FPDU's CRC; here a 5-stage
//! register pipeline, recomputed every clock from the record at the head of
//! the record FIFO, adds the CRC word, the header fields and the
//! pseudo-header and folds (RFC 1071). A record is at the head at least 3
//! clocks before header beat 3 (the IPv4 checksum, pipeline stage 3) and 6
//! before beat 6 (the TCP checksum, stage 5), so the pipeline costs no clock.
//! The payload needs no patching pass and no second buffer: only the CRC
//! placeholder (the payload's last 4 octets) is replaced on the way out.
//!
//! # Beats
//! 54 header octets are 6 full beats and 6 octets, so the payload goes out
//! shifted by 6 lanes through a 6-octet holding register: beat 6 carries
//! header octets 48..54 and payload octets 0..2, then each payload beat
//! yields one output beat, and a final beat carries the last 2 or 6 octets.
//! That is `ceil((54 + T) / 8)` beats in as many clocks: no bubble inside a
//! frame or between frames while records are waiting and `tx_ready` is high.
//!
//! # Side band (`SIDE_W` bits, from the descriptor, numbers in network
//! order: the first octet on the wire is the most significant)
//! `[47:0]` destination MAC, `[95:48]` source MAC, `[127:96]` source IPv4,
//! `[159:128]` destination IPv4, `[175:160]` source port, `[191:176]`
//! destination port, `[223:192]` sequence number, `[255:224]` acknowledgment
//! number, `[271:256]` window.

use crate::transmit::tx_ddp_hdr::ByteRev;
use crate::transmit::tx_mpa::REC_W;
use rust_hdl::prelude::*;

/// Width of the side band (TCP/IP/Ethernet fields) carried in the record.
pub const SIDE_W: usize = 272;
/// Octets of Ethernet II + IPv4 + TCP headers.
pub const HDR_LEN: usize = 54;

/// Packs the side band (for tests and the lead's integration).
#[allow(clippy::too_many_arguments)]
pub fn pack_side(
    dst_mac: [u8; 6],
    src_mac: [u8; 6],
    src_ip: [u8; 4],
    dst_ip: [u8; 4],
    src_port: u16,
    dst_port: u16,
    seq: u32,
    ack: u32,
    window: u16,
) -> Bits<SIDE_W> {
    let mac = |m: [u8; 6]| m.iter().fold(0u64, |a, &b| a << 8 | b as u64);
    let mut b: Bits<SIDE_W> = 0.into();
    b.set_bits::<48>(0, mac(dst_mac).into());
    b.set_bits::<48>(48, mac(src_mac).into());
    b.set_bits::<32>(96, (u32::from_be_bytes(src_ip) as u64).into());
    b.set_bits::<32>(128, (u32::from_be_bytes(dst_ip) as u64).into());
    b.set_bits::<16>(160, (src_port as u64).into());
    b.set_bits::<16>(176, (dst_port as u64).into());
    b.set_bits::<32>(192, (seq as u64).into());
    b.set_bits::<32>(224, (ack as u64).into());
    b.set_bits::<16>(256, (window as u64).into());
    b
}

#[derive(LogicBlock, Default)]
pub struct TxTcpHdr {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high.
    pub reset: Signal<In, Bit>,
    /// Head of the record FIFO (first-word fall-through), `tx_mpa::REC_W`.
    pub rec_data: Signal<In, Bits<REC_W>>,
    pub rec_empty: Signal<In, Bit>,
    pub rec_read: Signal<Out, Bit>,
    /// Head of the data FIFO: `[63:0]` data, `[64]` last.
    pub dat_data: Signal<In, Bits<65>>,
    pub dat_empty: Signal<In, Bit>,
    pub dat_read: Signal<Out, Bit>,
    // MAC TX stream.
    pub tx_data: Signal<Out, Bits<64>>,
    pub tx_keep: Signal<Out, Bits<4>>,
    pub tx_last: Signal<Out, Bit>,
    pub tx_valid: Signal<Out, Bit>,
    pub tx_ready: Signal<In, Bit>,
    /// Frames sent (last beat accepted into the output register).
    pub cnt_frames: Signal<Out, Bits<32>>,
    rev: ByteRev<432>,
    // 0 header beats, 1 payload beats, 2 final beat.
    st: DFF<Bits<2>>,
    bi: DFF<Bits<3>>,
    hold6: DFF<Bits<48>>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<4>>,
    o_last: DFF<Bit>,
    o_valid: DFF<Bit>,
    // Checksum pipeline (RFC 1071 one's-complement sums).
    s1_ips: DFF<Bits<18>>,
    s1_tcp: DFF<Bits<19>>,
    s1_pay: DFF<Bits<34>>,
    s1_t: DFF<Bits<16>>,
    s2_ip: DFF<Bits<20>>,
    s2_tcp: DFF<Bits<21>>,
    s2_pay: DFF<Bits<19>>,
    ip_csum: DFF<Bits<16>>,
    s3_pay: DFF<Bits<16>>,
    s3_tcp: DFF<Bits<21>>,
    s4_tcp: DFF<Bits<22>>,
    tcp_csum: DFF<Bits<16>>,
    c_frames: DFF<Bits<32>>,
    go: Signal<Local, Bit>,
    crc_v: Signal<Local, Bits<32>>,
    psum: Signal<Local, Bits<32>>,
    tlen: Signal<Local, Bits<16>>,
    totlen: Signal<Local, Bits<16>>,
    dst_mac: Signal<Local, Bits<48>>,
    src_mac: Signal<Local, Bits<48>>,
    src_ip: Signal<Local, Bits<32>>,
    dst_ip: Signal<Local, Bits<32>>,
    sport: Signal<Local, Bits<16>>,
    dport: Signal<Local, Bits<16>>,
    seq: Signal<Local, Bits<32>>,
    ack: Signal<Local, Bits<32>>,
    window: Signal<Local, Bits<16>>,
    f1_ip: Signal<Local, Bits<17>>,
    f2_ip: Signal<Local, Bits<16>>,
    f1_pay: Signal<Local, Bits<17>>,
    f2_pay: Signal<Local, Bits<16>>,
    f1_tcp: Signal<Local, Bits<17>>,
    f2_tcp: Signal<Local, Bits<16>>,
    hle: Signal<Local, Bits<432>>,
    dd: Signal<Local, Bits<64>>,
}

impl Logic for TxTcpHdr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, st, bi, hold6, o_data, o_keep, o_last, o_valid, s1_ips, s1_tcp, s1_pay,
            s1_t, s2_ip, s2_tcp, s2_pay, ip_csum, s3_pay, s3_tcp, s4_tcp, tcp_csum, c_frames
        );
        // ---- record fields
        self.crc_v.next = self.rec_data.val().get_bits::<32>(0);
        self.psum.next = self.rec_data.val().get_bits::<32>(32);
        self.tlen.next = self.rec_data.val().get_bits::<16>(64);
        self.dst_mac.next = self.rec_data.val().get_bits::<48>(80);
        self.src_mac.next = self.rec_data.val().get_bits::<48>(128);
        self.src_ip.next = self.rec_data.val().get_bits::<32>(176);
        self.dst_ip.next = self.rec_data.val().get_bits::<32>(208);
        self.sport.next = self.rec_data.val().get_bits::<16>(240);
        self.dport.next = self.rec_data.val().get_bits::<16>(256);
        self.seq.next = self.rec_data.val().get_bits::<32>(272);
        self.ack.next = self.rec_data.val().get_bits::<32>(304);
        self.window.next = self.rec_data.val().get_bits::<16>(336);

        // ---- checksum pipeline, recomputed every clock from the head record
        // Stage 1: the IP addresses (in both sums), the TCP header fields,
        // payload lanes + CRC word (little-endian lanes).
        self.s1_ips.d.next = bit_cast::<18, 16>(self.src_ip.val().get_bits::<16>(16))
            + bit_cast::<18, 16>(self.src_ip.val().get_bits::<16>(0))
            + bit_cast::<18, 16>(self.dst_ip.val().get_bits::<16>(16))
            + bit_cast::<18, 16>(self.dst_ip.val().get_bits::<16>(0));
        self.s1_tcp.d.next = bit_cast::<19, 16>(self.sport.val())
            + bit_cast::<19, 16>(self.dport.val())
            + bit_cast::<19, 16>(self.seq.val().get_bits::<16>(16))
            + bit_cast::<19, 16>(self.seq.val().get_bits::<16>(0))
            + bit_cast::<19, 16>(self.ack.val().get_bits::<16>(16))
            + bit_cast::<19, 16>(self.ack.val().get_bits::<16>(0))
            + bit_cast::<19, 16>(self.window.val());
        self.s1_pay.d.next = bit_cast::<34, 32>(self.psum.val())
            + bit_cast::<34, 16>(self.crc_v.val().get_bits::<16>(0))
            + bit_cast::<34, 16>(self.crc_v.val().get_bits::<16>(16));
        self.s1_t.d.next = self.tlen.val();
        // Stage 2. IPv4 constants: 0x4500 (version, IHL, DSCP), 0x4000 (DF),
        // 0x4006 (TTL 64, TCP) and 20 + 20 octets of headers in the total
        // length: 0xC52E. TCP: 0x5018 (offset 5, ACK|PSH), protocol 6 and
        // the 20-octet header in the pseudo-header's TCP length: 0x5032.
        self.s2_ip.d.next = bit_cast::<20, 18>(self.s1_ips.q.val())
            + bit_cast::<20, 16>(self.s1_t.q.val())
            + 0xC52E;
        self.s2_tcp.d.next = bit_cast::<21, 18>(self.s1_ips.q.val())
            + bit_cast::<21, 19>(self.s1_tcp.q.val())
            + bit_cast::<21, 16>(self.s1_t.q.val())
            + 0x5032;
        self.s2_pay.d.next = bit_cast::<19, 16>(self.s1_pay.q.val().get_bits::<16>(0))
            + bit_cast::<19, 18>(self.s1_pay.q.val().get_bits::<18>(16));
        // Stage 3: IPv4 checksum; payload sum folded, to network order.
        self.f1_ip.next = bit_cast::<17, 16>(self.s2_ip.q.val().get_bits::<16>(0))
            + bit_cast::<17, 4>(self.s2_ip.q.val().get_bits::<4>(16));
        self.f2_ip.next = self.f1_ip.val().get_bits::<16>(0)
            + bit_cast::<16, 1>(self.f1_ip.val().get_bits::<1>(16));
        self.ip_csum.d.next = !self.f2_ip.val();
        self.f1_pay.next = bit_cast::<17, 16>(self.s2_pay.q.val().get_bits::<16>(0))
            + bit_cast::<17, 3>(self.s2_pay.q.val().get_bits::<3>(16));
        self.f2_pay.next = self.f1_pay.val().get_bits::<16>(0)
            + bit_cast::<16, 1>(self.f1_pay.val().get_bits::<1>(16));
        self.s3_pay.d.next = (bit_cast::<16, 8>(self.f2_pay.val().get_bits::<8>(0)) << 8)
            | bit_cast::<16, 8>(self.f2_pay.val().get_bits::<8>(8));
        self.s3_tcp.d.next = self.s2_tcp.q.val();
        // Stages 4, 5: TCP checksum.
        self.s4_tcp.d.next =
            bit_cast::<22, 21>(self.s3_tcp.q.val()) + bit_cast::<22, 16>(self.s3_pay.q.val());
        self.f1_tcp.next = bit_cast::<17, 16>(self.s4_tcp.q.val().get_bits::<16>(0))
            + bit_cast::<17, 6>(self.s4_tcp.q.val().get_bits::<6>(16));
        self.f2_tcp.next = self.f1_tcp.val().get_bits::<16>(0)
            + bit_cast::<16, 1>(self.f1_tcp.val().get_bits::<1>(16));
        self.tcp_csum.d.next = !self.f2_tcp.val();

        // ---- the 54 header octets, network order (octet 0 in bits 431:424)
        self.totlen.next = self.tlen.val() + 40;
        self.rev.din.next = (bit_cast::<432, 48>(self.dst_mac.val()) << 384)
            | (bit_cast::<432, 48>(self.src_mac.val()) << 336)
            | (bits::<432>(0x0800) << 320)
            | (bits::<432>(0x4500) << 304)
            | (bit_cast::<432, 16>(self.totlen.val()) << 288)
            | (bits::<432>(0x4000) << 256)
            | (bits::<432>(0x4006) << 240)
            | (bit_cast::<432, 16>(self.ip_csum.q.val()) << 224)
            | (bit_cast::<432, 32>(self.src_ip.val()) << 192)
            | (bit_cast::<432, 32>(self.dst_ip.val()) << 160)
            | (bit_cast::<432, 16>(self.sport.val()) << 144)
            | (bit_cast::<432, 16>(self.dport.val()) << 128)
            | (bit_cast::<432, 32>(self.seq.val()) << 96)
            | (bit_cast::<432, 32>(self.ack.val()) << 64)
            | (bits::<432>(0x5018) << 48)
            | (bit_cast::<432, 16>(self.window.val()) << 32)
            | (bit_cast::<432, 16>(self.tcp_csum.q.val()) << 16);
        self.hle.next = self.rev.dout.val();

        // ---- payload beat with the CRC word in place of the placeholder
        self.dd.next = self.dat_data.val().get_bits::<64>(0);
        if self.dat_data.val().get_bit(64) {
            if self.tlen.val().get_bit(2) {
                self.dd.next = (bit_cast::<64, 32>(self.dat_data.val().get_bits::<32>(32)) << 32)
                    | bit_cast::<64, 32>(self.crc_v.val());
            } else {
                self.dd.next = bit_cast::<64, 32>(self.dat_data.val().get_bits::<32>(0))
                    | (bit_cast::<64, 32>(self.crc_v.val()) << 32);
            }
        }

        // ---- output register and beat sequencer
        self.go.next = !self.o_valid.q.val() | self.tx_ready.val();
        self.rec_read.next = false;
        self.dat_read.next = false;
        if self.go.val() {
            self.o_valid.d.next = false;
            if self.st.q.val() == 0 {
                if !self.rec_empty.val() {
                    self.o_valid.d.next = true;
                    self.o_keep.d.next = 8.into();
                    self.o_last.d.next = false;
                    self.bi.d.next = self.bi.q.val() + 1;
                    if self.bi.q.val() == 0 {
                        self.o_data.d.next = self.hle.val().get_bits::<64>(0);
                    }
                    if self.bi.q.val() == 1 {
                        self.o_data.d.next = self.hle.val().get_bits::<64>(64);
                    }
                    if self.bi.q.val() == 2 {
                        self.o_data.d.next = self.hle.val().get_bits::<64>(128);
                    }
                    if self.bi.q.val() == 3 {
                        self.o_data.d.next = self.hle.val().get_bits::<64>(192);
                    }
                    if self.bi.q.val() == 4 {
                        self.o_data.d.next = self.hle.val().get_bits::<64>(256);
                    }
                    if self.bi.q.val() == 5 {
                        self.o_data.d.next = self.hle.val().get_bits::<64>(320);
                        self.hold6.d.next = self.hle.val().get_bits::<48>(384);
                        self.st.d.next = 1.into();
                    }
                }
            } else if self.st.q.val() == 1 {
                if !self.dat_empty.val() {
                    self.dat_read.next = true;
                    self.o_valid.d.next = true;
                    self.o_keep.d.next = 8.into();
                    self.o_last.d.next = false;
                    self.o_data.d.next = bit_cast::<64, 48>(self.hold6.q.val())
                        | (bit_cast::<64, 16>(self.dd.val().get_bits::<16>(0)) << 48);
                    self.hold6.d.next = self.dd.val().get_bits::<48>(16);
                    if self.dat_data.val().get_bit(64) {
                        self.st.d.next = 2.into();
                    }
                }
            } else {
                self.rec_read.next = true;
                self.o_valid.d.next = true;
                self.o_data.d.next = bit_cast::<64, 48>(self.hold6.q.val());
                self.o_keep.d.next = 6.into();
                if self.tlen.val().get_bit(2) {
                    self.o_keep.d.next = 2.into();
                }
                self.o_last.d.next = true;
                self.st.d.next = 0.into();
                self.bi.d.next = 0.into();
                self.c_frames.d.next = self.c_frames.q.val() + 1;
            }
        }
        self.tx_data.next = self.o_data.q.val();
        self.tx_keep.next = self.o_keep.q.val();
        self.tx_last.next = self.o_last.q.val();
        self.tx_valid.next = self.o_valid.q.val();
        self.cnt_frames.next = self.c_frames.q.val();
        if self.reset.val() {
            self.st.d.next = 0.into();
            self.bi.d.next = 0.into();
            self.o_valid.d.next = false;
            self.c_frames.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::Rng;
    use rnic_wire::model::net::{tcp_frame, Endpoint};
    use smoltcp::wire::{TcpControl, TcpRepr, TcpSeqNumber};
    use std::collections::VecDeque;

    /// The block alone, fed from FIFO models: random fields (window too),
    /// payload lengths, CRC values, record arrival and MAC back-pressure;
    /// frames against smoltcp's `TcpRepr::emit` via `net::tcp_frame`.
    #[test]
    fn frames_match_smoltcp() {
        let mut uut = TxTcpHdr::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.rec_data.connect();
        uut.rec_empty.connect();
        uut.dat_data.connect();
        uut.dat_empty.connect();
        uut.tx_ready.connect();
        uut.connect_all();
        let mut rng = Rng::new(21);
        let mut recs: VecDeque<Bits<REC_W>> = VecDeque::new();
        let mut dat: VecDeque<(u64, bool)> = VecDeque::new();
        let mut expect = Vec::new();
        for i in 0..40 {
            let ep = |rng: &mut Rng| Endpoint {
                mac: rng.bytes(6).try_into().unwrap(),
                ip: rng.bytes(4).try_into().unwrap(),
                port: rng.next_u64() as u16,
            };
            let (src, dst) = (ep(&mut rng), ep(&mut rng));
            let t = 4 * (5 + rng.below(if i % 8 == 0 { 370 } else { 40 }));
            let mut pay = rng.bytes(t);
            let crc = rng.next_u64() as u32;
            let (seq, ack, window) = (
                rng.next_u64() as u32,
                rng.next_u64() as u32,
                rng.next_u64() as u16,
            );
            // What tx_mpa leaves in the FIFO: a zero CRC placeholder.
            pay[t - 4..].fill(0);
            let psum: u32 = pay
                .chunks(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
                .sum();
            for (k, c) in pay.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                dat.push_back((u64::from_le_bytes(b), (k + 1) * 8 >= t));
            }
            let side = pack_side(
                dst.mac, src.mac, src.ip, dst.ip, src.port, dst.port, seq, ack, window,
            );
            let mut r: Bits<REC_W> = 0.into();
            r.set_bits::<32>(0, (crc as u64).into());
            r.set_bits::<32>(32, (psum as u64).into());
            r.set_bits::<16>(64, (t as u64).into());
            r.set_bits::<SIDE_W>(80, side);
            recs.push_back(r);
            pay[t - 4..].copy_from_slice(&crc.to_le_bytes());
            let repr = TcpRepr {
                src_port: src.port,
                dst_port: dst.port,
                control: TcpControl::Psh,
                seq_number: TcpSeqNumber(seq as i32),
                ack_number: Some(TcpSeqNumber(ack as i32)),
                window_len: window,
                window_scale: None,
                max_seg_size: None,
                sack_permitted: false,
                sack_ranges: [None; 3],
                timestamp: None,
                payload: &pay,
            };
            expect.push(tcp_frame(&src, &dst, &repr));
        }
        uut.reset.next = true;
        for _ in 0..2 {
            crate::common::testutil::tick!(uut);
        }
        uut.reset.next = false;
        let mut frames = Vec::new();
        let mut cur = Vec::new();
        let mut shown = 0usize;
        for _ in 0..40_000 {
            if frames.len() == expect.len() {
                break;
            }
            // A record shows up at the FIFO head some time after its data.
            if shown < recs.len() && rng.below(4) == 0 {
                shown += 1;
            }
            uut.rec_empty.next = shown == 0;
            uut.rec_data.next = recs.front().copied().unwrap_or_default();
            uut.dat_empty.next = dat.is_empty();
            let (d, l) = dat.front().copied().unwrap_or((rng.next_u64(), false));
            uut.dat_data.next = (d as u128 | (l as u128) << 64).to_bits();
            let rdy = rng.below(10) < 8;
            uut.tx_ready.next = rdy;
            uut.clock.next = false.into();
            assert!(simulate(&mut uut, 1000));
            if uut.rec_read.val() {
                recs.pop_front();
                shown -= 1;
            }
            if uut.dat_read.val() {
                dat.pop_front().unwrap();
            }
            if rdy && uut.tx_valid.val() {
                let k = uut.tx_keep.val().to_u64() as usize;
                cur.extend_from_slice(&uut.tx_data.val().to_u64().to_le_bytes()[..k]);
                if uut.tx_last.val() {
                    frames.push(std::mem::take(&mut cur));
                }
            }
            uut.clock.next = true.into();
            assert!(simulate(&mut uut, 1000));
        }
        assert_eq!(frames, expect);
    }
}
