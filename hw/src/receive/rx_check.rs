//! RX header and checksum check on the MAC stream, ahead of `rx_fifo`.
//!
//! # Why here
//! The TCP checksum is known only after the last beat of a frame, but the
//! fast path must not start placing a segment whose checksum turns out bad.
//! Instead of buffering every frame a second time after the parser, the
//! checks run on the MAC side of `rx_fifo` (which stores frames whole
//! anyway), and a 4-bit verdict `tag` travels with the frame in `rx_fifo`'s
//! frame record. When `rx_parse` reads the first beat of a frame it already
//! knows whether to drop it, hand it to the firmware, or parse it as TCP.
//! Cost: this block's ~650 FFs and a 3-cycle delay, no extra BRAM and no
//! extra frame time of latency.
//!
//! # What it checks (at one beat per clock, no `ready`: a MAC cannot stall)
//! * Ethernet: EtherType IPv4 (`0x0800`); any other EtherType (ARP `0x0806`,
//!   IPv6, VLAN, ...) is [`TAG_EXC_NOT_IPV4`].
//! * IPv4 (RFC 791 §3.1): version 4, IHL >= 5 (options are covered by the
//!   header checksum and otherwise skipped), total length >= header length
//!   and <= the frame (shorter frames: Ethernet padding is ignored, RFC 894),
//!   header checksum (RFC 1071). Fragments (MF set or offset != 0) and
//!   protocols other than TCP are [`TAG_EXC_IPV4`] (after the header checks).
//! * TCP (RFC 9293 §3.1): data offset >= 5 and the header within the
//!   segment; the checksum over the pseudo-header (RFC 9293 §3.1: source and
//!   destination address, zero, protocol, TCP length) and the segment.
//!
//! Every 16-bit word of the IPv4 and TCP headers sits at an even frame
//! offset (14 + 4k), so each beat holds exactly 4 aligned words. Words are
//! added into two 32-bit accumulators (a 16376-byte frame, 2047 beats, adds
//! at most 8188 x 0xFFFF < 2^29, so no carry is lost) and folded to 16 bits once at
//! the end of the frame. Bytes past the IPv4 total length (Ethernet padding,
//! don't-care lanes) are masked to zero, which also gives the zero-padded
//! last word of an odd-length segment. The pseudo-header's addresses are
//! added from their fixed frame offsets 26..34.
//!
//! # Timing
//! `out_*` is `in_*` delayed by exactly 3 clocks (every cycle, valid or
//! not); `out_tag` is valid with the delayed `last` beat. The sums are
//! pipelined so no clock holds more than one 3-operand add: the clock a beat
//! is taken, its masked lane words are added in pairs and registered; the
//! next clock adds both pairs into the accumulators. The clock after the last
//! beat, every length/EtherType/protocol check is registered; the clock after
//! that, the final sums are folded and the tag is registered.
//! Frames of any length are classified; frames longer than 2047 beats get a
//! meaningless tag (rx_fifo drops them as oversize anyway). Jumbo frames
//! (MTU 9000, 1128 beats) are classified like any other.

use rust_hdl::prelude::*;

/// A TCP/IPv4 segment that passed every check.
pub const TAG_OK: u64 = 0;
/// Not IPv4 (ARP and every other EtherType): to the firmware.
pub const TAG_EXC_NOT_IPV4: u64 = 1;
/// A good IPv4 header, but a fragment or not TCP: to the firmware.
pub const TAG_EXC_IPV4: u64 = 2;
/// Runt, bad version/IHL/data offset, or lengths that do not fit: dropped.
pub const TAG_BAD_LEN: u64 = 3;
/// Bad IPv4 header checksum: dropped.
pub const TAG_BAD_IP_CSUM: u64 = 4;
/// Bad TCP checksum: dropped.
pub const TAG_BAD_TCP_CSUM: u64 = 5;

/// Ethernet header length (destination, source, EtherType).
pub const ETH_HDR_LEN: u64 = 14;
/// EtherType of IPv4 (RFC 894).
pub const ETHERTYPE_IPV4: u64 = 0x0800;
/// IPv4 protocol number of TCP (RFC 9293 §3.1, IANA).
pub const IPPROTO_TCP: u64 = 6;
/// Shortest IPv4 header (IHL 5, RFC 791 §3.1).
pub const IPV4_MIN_HDR: u64 = 20;
/// Shortest TCP header (data offset 5, RFC 9293 §3.1).
pub const TCP_MIN_HDR: u64 = 20;
/// IPv4 flags/fragment-offset word: MF (bit 13) and the 13-bit offset
/// (RFC 791 §3.1); DF is not looked at.
pub const IPV4_FRAG_MASK: u64 = 0x3FFF;

#[derive(LogicBlock, Default)]
pub struct RxCheck {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_fcs_bad: Signal<In, Bit>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_fcs_bad: Signal<Out, Bit>,
    /// `TAG_*` of the frame; valid with `out_valid && out_last`.
    pub out_tag: Signal<Out, Bits<4>>,
    // 3-clock delay line
    d1_data: DFF<Bits<64>>,
    d1_keep: DFF<Bits<4>>,
    d1_last: DFF<Bit>,
    d1_valid: DFF<Bit>,
    d1_fcs: DFF<Bit>,
    d2_data: DFF<Bits<64>>,
    d2_keep: DFF<Bits<4>>,
    d2_last: DFF<Bit>,
    d2_valid: DFF<Bit>,
    d2_fcs: DFF<Bit>,
    d3_data: DFF<Bits<64>>,
    d3_keep: DFF<Bits<4>>,
    d3_last: DFF<Bit>,
    d3_valid: DFF<Bit>,
    d3_fcs: DFF<Bit>,
    // sum pipeline, stage 1: pairwise lane sums of the beat taken last edge
    /// A beat was taken at the previous edge ...
    pv: DFF<Bit>,
    /// ... and it was beat 0 of its frame (stage 2 restarts the sums).
    pfirst: DFF<Bit>,
    pi0: DFF<Bits<32>>,
    pi1: DFF<Bits<32>>,
    pt0: DFF<Bits<32>>,
    pt1: DFF<Bits<32>>,
    // verdict pipeline, stage 1 (the clock after the last beat)
    /// The length/EtherType checks decided the tag alone: `s_tag` ...
    s_fixed: DFF<Bit>,
    s_tag: DFF<Bits<4>>,
    /// ... else, with a good IPv4 checksum: check the TCP checksum, or
    /// `s_after_ip` (fragment/protocol/TCP-length verdict).
    s_need_tcp: DFF<Bit>,
    s_after_ip: DFF<Bits<4>>,
    /// TCP length + protocol number: the pseudo-header's remaining terms.
    s_ph: DFF<Bits<32>>,
    // per-frame state
    /// Index of the incoming beat in its frame (saturates at 2047).
    bc: DFF<Bits<11>>,
    ethertype: DFF<Bits<16>>,
    ver_ihl: DFF<Bits<8>>,
    tot_len: DFF<Bits<16>>,
    frag: DFF<Bits<16>>,
    proto: DFF<Bits<8>>,
    doff: DFF<Bits<4>>,
    /// Beat holding the TCP data-offset byte (frame offset 26 + 4*IHL) ...
    doff_beat: DFF<Bits<11>>,
    /// ... and whether it is byte 6 of that beat (else byte 2).
    doff_hi: DFF<Bit>,
    /// IPv4 header bytes left from the start of the incoming beat (beats >= 2).
    hrem: DFF<Bits<8>>,
    /// IPv4 datagram bytes left from the start of the incoming beat (beats >= 3).
    rem: DFF<Bits<16>>,
    acc_ip: DFF<Bits<32>>,
    acc_tcp: DFF<Bits<32>>,
    flen: DFF<Bits<16>>,
    /// The last beat was taken at the previous edge: the header fields are
    /// final (verdict stage 1) ...
    fin: DFF<Bit>,
    /// ... and one clock later the sums are (verdict stage 2).
    fin2: DFF<Bit>,
    tag: DFF<Bits<4>>,
    // temporaries
    ihl_now: Signal<Local, Bits<8>>,
    ihl4_now: Signal<Local, Bits<8>>,
    fragbits: Signal<Local, Bits<16>>,
    dpos: Signal<Local, Bits<8>>,
    tl_now: Signal<Local, Bits<16>>,
    /// Bytes of the beat within the IPv4 datagram (bit i: byte i).
    bmask: Signal<Local, Bits<8>>,
    w0: Signal<Local, Bits<32>>,
    w1: Signal<Local, Bits<32>>,
    w2: Signal<Local, Bits<32>>,
    w3: Signal<Local, Bits<32>>,
    m0: Signal<Local, Bits<32>>,
    m1: Signal<Local, Bits<32>>,
    m2: Signal<Local, Bits<32>>,
    m3: Signal<Local, Bits<32>>,
    ia0: Signal<Local, Bits<32>>,
    ia1: Signal<Local, Bits<32>>,
    ia2: Signal<Local, Bits<32>>,
    ia3: Signal<Local, Bits<32>>,
    ta0: Signal<Local, Bits<32>>,
    ta1: Signal<Local, Bits<32>>,
    ta2: Signal<Local, Bits<32>>,
    ta3: Signal<Local, Bits<32>>,
    ihl4: Signal<Local, Bits<16>>,
    tcp_len: Signal<Local, Bits<16>>,
    doff4: Signal<Local, Bits<16>>,
    ipf1: Signal<Local, Bits<32>>,
    ipf2: Signal<Local, Bits<32>>,
    tall: Signal<Local, Bits<32>>,
    tf1: Signal<Local, Bits<32>>,
    tf2: Signal<Local, Bits<32>>,
    cls: Signal<Local, Bits<4>>,
}

impl Logic for RxCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, d1_data, d1_keep, d1_last, d1_valid, d1_fcs, d2_data, d2_keep, d2_last,
            d2_valid, d2_fcs, d3_data, d3_keep, d3_last, d3_valid, d3_fcs, pv, pfirst, pi0, pi1,
            pt0, pt1, s_fixed, s_tag, s_need_tcp, s_after_ip, s_ph, bc, ethertype, ver_ihl,
            tot_len, frag, proto, doff, doff_beat, doff_hi, hrem, rem, acc_ip, acc_tcp, flen, fin,
            fin2, tag
        );
        // ---- delay line
        self.d1_data.d.next = self.in_data.val();
        self.d1_keep.d.next = self.in_keep.val();
        self.d1_last.d.next = self.in_last.val();
        self.d1_valid.d.next = self.in_valid.val();
        self.d1_fcs.d.next = self.in_fcs_bad.val();
        self.d2_data.d.next = self.d1_data.q.val();
        self.d2_keep.d.next = self.d1_keep.q.val();
        self.d2_last.d.next = self.d1_last.q.val();
        self.d2_valid.d.next = self.d1_valid.q.val();
        self.d2_fcs.d.next = self.d1_fcs.q.val();
        self.d3_data.d.next = self.d2_data.q.val();
        self.d3_keep.d.next = self.d2_keep.q.val();
        self.d3_last.d.next = self.d2_last.q.val();
        self.d3_valid.d.next = self.d2_valid.q.val();
        self.d3_fcs.d.next = self.d2_fcs.q.val();
        self.out_data.next = self.d3_data.q.val();
        self.out_keep.next = self.d3_keep.q.val();
        self.out_last.next = self.d3_last.q.val();
        self.out_valid.next = self.d3_valid.q.val();
        self.out_fcs_bad.next = self.d3_fcs.q.val();
        self.out_tag.next = self.tag.q.val();

        // ---- the 4 big-endian words of the beat, and the same with bytes
        // at or past the end of the IPv4 datagram zeroed
        self.ihl_now.next = bit_cast::<8, 4>(self.in_data.val().get_bits::<4>(48));
        self.ihl4_now.next = self.ihl_now.val() << 2;
        self.dpos.next = self.ihl4_now.val() + 26;
        self.tl_now.next = (bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(0)) << 8)
            | bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(8));
        // byte i of the beat is in the datagram iff i < rem: a compare per
        // byte, no shifter (this is on the per-beat critical path)
        self.bmask.next = 0xFF.into();
        if self.rem.q.val() < 8 {
            self.bmask.next = 0.into();
            if self.rem.q.val() > 0 {
                self.bmask.next = 0x01.into();
            }
            if self.rem.q.val() > 1 {
                self.bmask.next = 0x03.into();
            }
            if self.rem.q.val() > 2 {
                self.bmask.next = 0x07.into();
            }
            if self.rem.q.val() > 3 {
                self.bmask.next = 0x0F.into();
            }
            if self.rem.q.val() > 4 {
                self.bmask.next = 0x1F.into();
            }
            if self.rem.q.val() > 5 {
                self.bmask.next = 0x3F.into();
            }
            if self.rem.q.val() > 6 {
                self.bmask.next = 0x7F.into();
            }
        }
        self.w0.next = (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(0)) << 8)
            | bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(8));
        self.w1.next = (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(16)) << 8)
            | bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(24));
        self.w2.next = (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(32)) << 8)
            | bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(40));
        self.w3.next = (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(48)) << 8)
            | bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(56));
        self.m0.next = 0.into();
        if self.bmask.val().get_bit(0) {
            self.m0.next = self.w0.val() & 0xFF00;
        }
        if self.bmask.val().get_bit(1) {
            self.m0.next = self.m0.val() | (self.w0.val() & 0x00FF);
        }
        self.m1.next = 0.into();
        if self.bmask.val().get_bit(2) {
            self.m1.next = self.w1.val() & 0xFF00;
        }
        if self.bmask.val().get_bit(3) {
            self.m1.next = self.m1.val() | (self.w1.val() & 0x00FF);
        }
        self.m2.next = 0.into();
        if self.bmask.val().get_bit(4) {
            self.m2.next = self.w2.val() & 0xFF00;
        }
        if self.bmask.val().get_bit(5) {
            self.m2.next = self.m2.val() | (self.w2.val() & 0x00FF);
        }
        self.m3.next = 0.into();
        if self.bmask.val().get_bit(6) {
            self.m3.next = self.w3.val() & 0xFF00;
        }
        if self.bmask.val().get_bit(7) {
            self.m3.next = self.m3.val() | (self.w3.val() & 0x00FF);
        }

        // ---- this beat's contribution to the two sums, one operand per lane
        self.ia0.next = 0.into();
        self.ia1.next = 0.into();
        self.ia2.next = 0.into();
        self.ia3.next = 0.into();
        self.ta0.next = 0.into();
        self.ta1.next = 0.into();
        self.ta2.next = 0.into();
        self.ta3.next = 0.into();
        if self.bc.q.val() == 1 {
            // frame offset 14: version/IHL and TOS
            self.ia3.next = self.w3.val();
        }
        if self.bc.q.val() >= 2 {
            if self.hrem.q.val() > 0 {
                self.ia0.next = self.w0.val();
            } else {
                self.ta0.next = self.m0.val();
            }
            if self.hrem.q.val() > 2 {
                self.ia1.next = self.w1.val();
            } else {
                self.ta1.next = self.m1.val();
            }
            if self.hrem.q.val() > 4 {
                self.ia2.next = self.w2.val();
            } else {
                self.ta2.next = self.m2.val();
            }
            if self.hrem.q.val() > 6 {
                self.ia3.next = self.w3.val();
            } else {
                self.ta3.next = self.m3.val();
            }
        }
        // Pseudo-header addresses: frame offsets 26, 28, 30 (beat 3) and 32
        // (beat 4). These lanes are inside the IPv4 header whenever IHL >= 5
        // (so their TCP operand would be 0); with IHL < 5 the verdict is
        // TAG_BAD_LEN whatever the sums.
        if self.bc.q.val() == 3 {
            self.ta1.next = self.w1.val();
            self.ta2.next = self.w2.val();
            self.ta3.next = self.w3.val();
        }
        if self.bc.q.val() == 4 {
            self.ta0.next = self.w0.val();
        }
        // stage 1: register pairwise sums; stage 2: add both into the sums
        self.pv.d.next = self.in_valid.val();
        self.pfirst.d.next = self.bc.q.val() == 0;
        self.pi0.d.next = self.ia0.val() + self.ia1.val();
        self.pi1.d.next = self.ia2.val() + self.ia3.val();
        self.pt0.d.next = self.ta0.val() + self.ta1.val();
        self.pt1.d.next = self.ta2.val() + self.ta3.val();
        if self.pv.q.val() {
            if self.pfirst.q.val() {
                self.acc_ip.d.next = self.pi0.q.val() + self.pi1.q.val();
                self.acc_tcp.d.next = self.pt0.q.val() + self.pt1.q.val();
            } else {
                self.acc_ip.d.next = self.acc_ip.q.val() + self.pi0.q.val() + self.pi1.q.val();
                self.acc_tcp.d.next = self.acc_tcp.q.val() + self.pt0.q.val() + self.pt1.q.val();
            }
        }

        // ---- per-beat state
        self.fin.d.next = self.in_valid.val() & self.in_last.val();
        if self.in_valid.val() {
            if self.in_last.val() {
                self.bc.d.next = 0.into();
                self.flen.d.next = (bit_cast::<16, 11>(self.bc.q.val()) << 3)
                    + bit_cast::<16, 4>(self.in_keep.val());
            } else if self.bc.q.val() != 2047 {
                self.bc.d.next = self.bc.q.val() + 1;
            }
            if self.bc.q.val() == 1 {
                self.ethertype.d.next = (bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(32))
                    << 8)
                    | bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(40));
                self.ver_ihl.d.next = self.in_data.val().get_bits::<8>(48);
                self.hrem.d.next = self.ihl4_now.val() - 2;
                self.doff_beat.d.next = bit_cast::<11, 8>(self.dpos.val() >> 3);
                self.doff_hi.d.next = self.dpos.val().get_bit(2);
            }
            if self.bc.q.val() == 2 {
                self.tot_len.d.next = self.tl_now.val();
                self.frag.d.next = (bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(32)) << 8)
                    | bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(40));
                self.proto.d.next = self.in_data.val().get_bits::<8>(56);
                // datagram bytes left at the start of beat 3: 14 + len - 24
                if self.tl_now.val() >= 10 {
                    self.rem.d.next = self.tl_now.val() - 10;
                } else {
                    self.rem.d.next = 0.into();
                }
            }
            if self.bc.q.val() >= 2 {
                if self.hrem.q.val() >= 8 {
                    self.hrem.d.next = self.hrem.q.val() - 8;
                } else {
                    self.hrem.d.next = 0.into();
                }
                if self.bc.q.val() == self.doff_beat.q.val() {
                    if self.doff_hi.q.val() {
                        self.doff.d.next = self.in_data.val().get_bits::<4>(52);
                    } else {
                        self.doff.d.next = self.in_data.val().get_bits::<4>(20);
                    }
                }
            }
            if self.bc.q.val() >= 3 {
                if self.rem.q.val() >= 8 {
                    self.rem.d.next = self.rem.q.val() - 8;
                } else {
                    self.rem.d.next = 0.into();
                }
            }
        }

        // ---- verdict stage 1, the clock after the last beat: every check
        // but the two checksums (the header fields are final, the sums not yet)
        self.ihl4.next = bit_cast::<16, 4>(self.ver_ihl.q.val().get_bits::<4>(0)) << 2;
        self.tcp_len.next = self.tot_len.q.val() - self.ihl4.val();
        self.doff4.next = bit_cast::<16, 4>(self.doff.q.val()) << 2;
        self.fragbits.next = self.frag.q.val() & 0x3FFF; // IPV4_FRAG_MASK
        if self.fin.q.val() {
            self.s_ph.d.next = bit_cast::<32, 16>(self.tcp_len.val()) + 6; // IPPROTO_TCP
            self.s_fixed.d.next = false;
            self.s_tag.d.next = 0.into();
            self.s_need_tcp.d.next = false;
            self.s_after_ip.d.next = 0.into();
            if self.flen.q.val() < 14 {
                // ETH_HDR_LEN
                self.s_fixed.d.next = true;
                self.s_tag.d.next = 3.into(); // TAG_BAD_LEN
            } else if self.ethertype.q.val() != 0x0800 {
                // ETHERTYPE_IPV4
                self.s_fixed.d.next = true;
                self.s_tag.d.next = 1.into(); // TAG_EXC_NOT_IPV4
            } else if (self.flen.q.val() < 34) // ETH_HDR_LEN + IPV4_MIN_HDR
                | (self.ver_ihl.q.val().get_bits::<4>(4) != 4)
                | (self.ihl4.val() < 20) // IPV4_MIN_HDR
                | (self.tot_len.q.val() < self.ihl4.val())
                | (self.tot_len.q.val() > (self.flen.q.val() - 14))
            // ETH_HDR_LEN
            {
                self.s_fixed.d.next = true;
                self.s_tag.d.next = 3.into(); // TAG_BAD_LEN
            } else if (self.fragbits.val() != 0) | (self.proto.q.val() != 6)
            // IPPROTO_TCP
            {
                self.s_after_ip.d.next = 2.into(); // TAG_EXC_IPV4
            } else if (self.tcp_len.val() < 20) // TCP_MIN_HDR
                | (self.doff4.val() < 20) // TCP_MIN_HDR
                | (self.doff4.val() > self.tcp_len.val())
            {
                self.s_after_ip.d.next = 3.into(); // TAG_BAD_LEN
            } else {
                self.s_need_tcp.d.next = true;
            }
        }
        self.fin2.d.next = self.fin.q.val();

        // ---- verdict stage 2: fold the final sums, same priority as the
        // checks above (IPv4 checksum before protocol/TCP checks)
        self.ipf1.next = (self.acc_ip.q.val() & 0xFFFF) + (self.acc_ip.q.val() >> 16);
        self.ipf2.next = (self.ipf1.val() & 0xFFFF) + (self.ipf1.val() >> 16);
        self.tall.next = self.acc_tcp.q.val() + self.s_ph.q.val();
        self.tf1.next = (self.tall.val() & 0xFFFF) + (self.tall.val() >> 16);
        self.tf2.next = (self.tf1.val() & 0xFFFF) + (self.tf1.val() >> 16);
        if self.s_fixed.q.val() {
            self.cls.next = self.s_tag.q.val();
        } else if self.ipf2.val() != 0xFFFF {
            self.cls.next = 4.into(); // TAG_BAD_IP_CSUM
        } else if !self.s_need_tcp.q.val() {
            self.cls.next = self.s_after_ip.q.val();
        } else if self.tf2.val() != 0xFFFF {
            self.cls.next = 5.into(); // TAG_BAD_TCP_CSUM
        } else {
            self.cls.next = 0.into(); // TAG_OK
        }
        if self.fin2.q.val() {
            self.tag.d.next = self.cls.val();
        }

        if self.reset.val() {
            self.d1_valid.d.next = false;
            self.d2_valid.d.next = false;
            self.d1_last.d.next = false;
            self.d2_last.d.next = false;
            self.d3_valid.d.next = false;
            self.d3_last.d.next = false;
            self.pv.d.next = false;
            self.bc.d.next = 0.into();
            self.fin.d.next = false;
            self.fin2.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{beats, tick};
    use smoltcp::wire::{
        EthernetAddress, EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Packet,
        TcpPacket, TcpSeqNumber,
    };

    /// A TCP/IPv4 frame from smoltcp's emitters: `ip_opts`/`tcp_opts` bytes
    /// of options, `pay` bytes of payload, padded to 60 bytes.
    fn tcp_frame(ip_opts: usize, tcp_opts: usize, pay: usize, proto: IpProtocol) -> Vec<u8> {
        let (src, dst) = ([10, 0, 0, 2].into(), [10, 0, 0, 1].into());
        let thl = 20 + tcp_opts;
        let mut tcp = vec![0u8; thl + pay];
        let mut t = TcpPacket::new_unchecked(&mut tcp[..]);
        t.set_src_port(40000);
        t.set_dst_port(7174);
        t.set_seq_number(TcpSeqNumber(12345));
        t.set_header_len(thl as u8);
        t.set_ack(true);
        t.set_window_len(1000);
        for (i, b) in t.payload_mut().iter_mut().enumerate() {
            *b = i as u8 ^ 0x5A;
        }
        t.fill_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst));
        let ihl = 20 + ip_opts;
        let mut ip = vec![0u8; ihl + tcp.len()];
        let mut p = Ipv4Packet::new_unchecked(&mut ip[..]);
        p.set_version(4);
        p.set_header_len(ihl as u8);
        p.set_total_len((ihl + tcp.len()) as u16);
        p.set_hop_limit(64);
        p.set_next_header(proto);
        p.set_src_addr(src);
        p.set_dst_addr(dst);
        p.payload_mut().copy_from_slice(&tcp);
        p.fill_checksum();
        let mut f = vec![0u8; 14 + ip.len()];
        let mut e = EthernetFrame::new_unchecked(&mut f[..]);
        e.set_dst_addr(EthernetAddress([2, 0, 0, 0, 0, 1]));
        e.set_src_addr(EthernetAddress([2, 0, 0, 0, 0, 2]));
        e.set_ethertype(EthernetProtocol::Ipv4);
        e.payload_mut().copy_from_slice(&ip);
        f.resize(f.len().max(60), 0xA5);
        f
    }

    /// Frames back to back; returns the tag seen with each delayed `last`.
    fn tags(frames: &[Vec<u8>]) -> Vec<u64> {
        let mut uut = RxCheck::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.in_data.connect();
        uut.in_keep.connect();
        uut.in_last.connect();
        uut.in_valid.connect();
        uut.in_fcs_bad.connect();
        uut.connect_all();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut out = Vec::new();
        let mut beats_in: Vec<(u64, u8, bool)> = Vec::new();
        for f in frames {
            let b = beats(f);
            let n = b.len();
            beats_in.extend(
                b.into_iter()
                    .enumerate()
                    .map(|(i, (d, k))| (d, k, i + 1 == n)),
            );
        }
        for i in 0..beats_in.len() + 4 {
            if let Some(&(d, k, last)) = beats_in.get(i) {
                uut.in_data.next = d.into();
                uut.in_keep.next = (k as u64).into();
                uut.in_last.next = last;
                uut.in_valid.next = true;
            } else {
                uut.in_valid.next = false;
            }
            tick!(uut);
            if uut.out_valid.val() && uut.out_last.val() {
                out.push(uut.out_tag.val().to_u64());
            }
        }
        out
    }

    #[test]
    fn tags_against_smoltcp_frames() {
        let good = tcp_frame(0, 0, 100, IpProtocol::Tcp);
        let opts = tcp_frame(8, 12, 33, IpProtocol::Tcp);
        let short = tcp_frame(0, 0, 1, IpProtocol::Tcp); // 55 bytes, padded
        let mut bad_ip = good.clone();
        bad_ip[24] ^= 0x10;
        let mut bad_tcp = opts.clone();
        bad_tcp[70] ^= 0x01;
        let udp = tcp_frame(0, 0, 10, IpProtocol::Udp);
        let mut arp = good.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let mut trunc = good.clone();
        trunc.truncate(100);
        let got = tags(&[good, opts, short, bad_ip, bad_tcp, udp, arp, trunc]);
        assert_eq!(
            got,
            vec![
                TAG_OK,
                TAG_OK,
                TAG_OK,
                TAG_BAD_IP_CSUM,
                TAG_BAD_TCP_CSUM,
                TAG_EXC_IPV4,
                TAG_EXC_NOT_IPV4,
                TAG_BAD_LEN
            ]
        );
    }

    /// MTU 9000 (issue 3): a 9014-octet frame (IPv4 total length 9000) is
    /// classified over all its 1127 beats: good, a payload bit flipped near
    /// its end, and cut short.
    #[test]
    fn jumbo_frames_are_classified() {
        let good = tcp_frame(0, 0, 9000 - 40, IpProtocol::Tcp);
        assert_eq!(good.len(), 9014);
        let mut bad_tcp = good.clone();
        bad_tcp[9000] ^= 0x04;
        let mut trunc = good.clone();
        trunc.truncate(8000);
        let got = tags(&[good, bad_tcp, trunc]);
        assert_eq!(got, vec![TAG_OK, TAG_BAD_TCP_CSUM, TAG_BAD_LEN]);
    }
}
