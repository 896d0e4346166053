//! TX MPA framing (RFC 5044 §4): one segment descriptor plus its payload
//! stream in, the segment's TCP payload — exactly one FPDU as it goes on the
//! wire, markers included — out, at one 8-octet beat per clock. First stage
//! of `tx_framer`.
//!
//! # Word structure
//! ULPDU_LENGTH plus a DDP header is 16 or 20 octets (`tx_ddp_hdr`), the
//! pad makes ULPDU_LENGTH + ULPDU + pad a multiple of 4 (RFC 5044 §4.1),
//! markers are 4 octets at sequence numbers `s` with
//! `(s - SeqStart) mod 512 == 0` (RFC 5044 §4.3), and an FPDU starts 4-aligned
//! to them. So the wire form of an FPDU is a sequence of 4-octet *words*:
//! header words (4 or 5), payload words (`ceil(pay_len / 4)`, the last one
//! zero-padded: that is the pad), the CRC word, with a marker word wherever
//! the word phase `((seq - SeqStart) mod 512) / 4` is 0 — also in front of
//! the first header word or of the CRC word, never after the CRC word. Every
//! output beat is two word slots; the block decides per slot marker / header
//! / payload / CRC from counters, with no byte shifter: the payload input
//! (two words per beat) goes through a one-word holding register.
//!
//! # CRC and checksum
//! The CRC word is sent as a zero placeholder. A [`Crc32cX64`] watches the
//! output beats, with the placeholder cut off (`keep` 0 or 4 on the FPDU's
//! last beat — its unpad matrix handles a zero-octet last beat too), so it
//! covers ULPDU_LENGTH, header, payload, pad and every marker (RFC 5044
//! §4.4); the value comes 2 clocks after the last beat and goes into the
//! record, and `tx_tcp_hdr` writes it over the placeholder (zero when CRC is
//! off; the field is still sent, RFC 5044 §7.1). The sum of the beats'
//! 16-bit little-endian lanes (`psum`, placeholder = 0) goes into the record
//! for the TCP checksum (one's-complement sums are byte-order independent,
//! RFC 1071 §2).
//!
//! # Interface
//! * `d_*` (valid/ready): one segment descriptor. `d_ready` is high in the
//!   idle state when the record FIFO has room for this segment's record.
//! * `pay_*` (ready): the `d_pay_len` octets after the DDP header, from lane
//!   0; none for `d_pay_len = 0`. Lanes at and above the count are ignored.
//!   Framing follows `d_pay_len`; a stream that disagrees (`last` early or
//!   late, or a last `keep` that differs) is counted in `cnt_pay_err`:
//!   missing octets are sent as zeros, extra beats are discarded up to
//!   `last`.
//! * Bad descriptors are dropped whole (`cnt_drop`, payload consumed up to
//!   `last`, nothing sent): markers on and `seq - SeqStart` not a multiple
//!   of 4 (an FPDU must start 4-aligned to the markers, RFC 5044 §4.3), or
//!   an FPDU longer than a 9000-octet MTU frame carries: more than
//!   [`MAX_FPDU_WORDS`] non-marker words, [`MAX_FPDU_WORDS_MK`] with markers
//!   on (`d_pay_len` up to [`FRAMER_MAX_PAY_LEN`] = 8940 tagged without
//!   markers). That is the sim profile; `TxMpaN<PR>` takes the TCP payload
//!   limit from `PROFILES[PR].tx_max_tcp_payload` ([`fpdu_word_limits`]:
//!   365 / 362 words for the board's 1460 octets).
//! * `o_*`: beats for the data FIFO (`o_write` when `!o_full`); `o_last` on
//!   the segment's last beat, which holds 4 or 8 octets (the TCP payload is
//!   a multiple of 4).
//! * `r_*`: one record per segment ([`REC_W`] bits, layout below), written 2
//!   clocks after the segment's last beat; `r_count` is the record FIFO's
//!   occupancy (depth [`REC_DEPTH`]).

use crate::common::crc32c_beat::Crc32cX64;
use crate::receive::mpa_rx::LaneMask;
use crate::transmit::tx_ddp_hdr::TxDdpHdr;
use crate::transmit::tx_tcp_hdr::SIDE_W;
use rnic_wire::abi::caps;
use rnic_wire::ddp::TAGGED_HEADER_LEN;
use rnic_wire::mpa::{MPA_CRC_LEN, MPA_MARKER_INTERVAL, MPA_ULPDU_LENGTH_LEN};
use rust_hdl::prelude::*;

/// Octets of an FPDU word: ULPDU_LENGTH + ULPDU + pad is a multiple of 4
/// (RFC 5044 §4.1), and markers are 4 octets, 4-aligned (RFC 5044 §4.3).
pub const WORD_LEN: u16 = 4;
/// Largest TCP payload of a frame, in words: the EMSS of a 9000-octet IP MTU
/// without TCP options, `abi::caps::TX_MAX_TCP_PAYLOAD` = 9000 − 20 (IPv4)
/// − 20 (TCP) = 8960 octets = 2240 words.
pub const MAX_TCP_WORDS: u16 = caps::TX_MAX_TCP_PAYLOAD / WORD_LEN;
/// Words of sequence space between markers: 512 / 4 (RFC 5044 §4.3).
pub const MARKER_WORDS: u16 = MPA_MARKER_INTERVAL as u16 / WORD_LEN;
/// Markers that can fall inside [`MAX_TCP_WORDS`] wire words: one in front
/// of the FPDU and one per 128 words after it, ceil(2240 / 128) = 18.
pub const MAX_MARKERS: u16 = MAX_TCP_WORDS.div_ceil(MARKER_WORDS);
/// Largest FPDU, in non-marker words (header words, payload words with pad,
/// the CRC word), that the framer takes: markers off, 2240 (8960 octets);
/// markers on, 2240 − 18 = 2222 (8888 octets: the FPDU of
/// `mpa::mulpdu(8960, true)` = 8882, the RFC 5044 §8 formula), so with
/// its markers at any phase the TCP payload is at most 8960 octets.
pub const MAX_FPDU_WORDS: u16 = MAX_TCP_WORDS;
/// [`MAX_FPDU_WORDS`] with markers on.
pub const MAX_FPDU_WORDS_MK: u16 = MAX_TCP_WORDS - MAX_MARKERS;
// The sim profile's limits (`fpdu_word_limits`, the descriptor check).
const _: () = assert!(MAX_FPDU_WORDS == 2240 && MAX_FPDU_WORDS_MK == 2222);
/// Largest `d_pay_len` the framer takes (tagged header, markers off): FPDU =
/// 2 (ULPDU_LENGTH) + 14 (tagged DDP/RDMAP header) + 8940 (payload) + 0
/// (pad) + 4 (CRC) = 8960 octets = the TCP payload of a 9000-octet MTU frame.
/// Untagged (18-octet header): 8936; markers on: 8868 tagged, 8864
/// untagged. A longer descriptor is dropped (`cnt_drop`), never truncated.
/// The whole FPDU fits the data FIFO of `tx_framer` (2048 beats; at most
/// 8960 / 8 = 1120 beats) for store-and-forward.
pub const FRAMER_MAX_PAY_LEN: u16 = caps::TX_MAX_TCP_PAYLOAD
    - MPA_ULPDU_LENGTH_LEN as u16
    - TAGGED_HEADER_LEN as u16
    - MPA_CRC_LEN as u16;
/// Largest payload per segment the TX engine hands the framer: the device's
/// MULPDU limit (`abi::caps::MAX_MULPDU` = 8882, the framer's limit with
/// markers on; `tx_seg` reads it with up to 3 DMA reads of ≤ 4096 octets)
/// less the 14-octet tagged header = 8868. `tx_seg::MAX_MULPDU` is derived
/// from it. The framer itself takes up to [`FRAMER_MAX_PAY_LEN`].
pub const MAX_PAY_LEN: u16 = caps::MAX_MULPDU - TAGGED_HEADER_LEN as u16;
/// Depth of the record FIFO `r_count` refers to.
pub const REC_DEPTH: usize = 8;
/// Record: `[31:0]` CRC32c value (0 when CRC is off), `[63:32]` `psum`,
/// `[79:64]` TCP payload length in octets, `[80+SIDE_W-1:80]` the
/// descriptor's side band (TCP/IP/Ethernet fields, `tx_tcp_hdr`).
pub const REC_W: usize = 80 + SIDE_W;

/// `TxMpa` of the sim profile (jumbo frames).
pub type TxMpa = TxMpaN<{ crate::profile::PR_SIM }>;

/// The FPDU limits of a TCP payload of at most `max_tcp` octets, in
/// non-marker words: (markers off, markers on). Markers: one in front of the
/// FPDU and one per 128 words after it (RFC 5044 §4.3).
pub const fn fpdu_word_limits(max_tcp: u16) -> (u16, u16) {
    let words = max_tcp / WORD_LEN;
    (words, words - words.div_ceil(MARKER_WORDS))
}
const _: () = assert!(fpdu_word_limits(caps::TX_MAX_TCP_PAYLOAD).0 == MAX_FPDU_WORDS);
const _: () = assert!(fpdu_word_limits(caps::TX_MAX_TCP_PAYLOAD).1 == MAX_FPDU_WORDS_MK);

/// The FPDU builder of core profile `PR`: its descriptor check takes FPDUs
/// that fit a TCP payload of `PROFILES[PR].tx_max_tcp_payload` octets
/// (8960 sim, 1460 board).
#[derive(LogicBlock)]
pub struct TxMpaN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high.
    pub reset: Signal<In, Bit>,
    // Descriptor.
    pub d_valid: Signal<In, Bit>,
    pub d_ready: Signal<Out, Bit>,
    pub d_crc_en: Signal<In, Bit>,
    pub d_mk_en: Signal<In, Bit>,
    pub d_seq: Signal<In, Bits<32>>,
    pub d_seq_start: Signal<In, Bits<32>>,
    pub d_opcode: Signal<In, Bits<4>>,
    pub d_last: Signal<In, Bit>,
    pub d_stag: Signal<In, Bits<32>>,
    pub d_to: Signal<In, Bits<64>>,
    pub d_qn: Signal<In, Bits<32>>,
    pub d_msn: Signal<In, Bits<32>>,
    pub d_mo: Signal<In, Bits<32>>,
    pub d_pay_len: Signal<In, Bits<16>>,
    pub d_side: Signal<In, Bits<SIDE_W>>,
    // Payload stream.
    pub pay_data: Signal<In, Bits<64>>,
    pub pay_keep: Signal<In, Bits<4>>,
    pub pay_last: Signal<In, Bit>,
    pub pay_valid: Signal<In, Bit>,
    pub pay_ready: Signal<Out, Bit>,
    // To the data FIFO.
    pub o_data: Signal<Out, Bits<64>>,
    pub o_last: Signal<Out, Bit>,
    pub o_write: Signal<Out, Bit>,
    pub o_full: Signal<In, Bit>,
    // To the record FIFO.
    pub r_data: Signal<Out, Bits<REC_W>>,
    pub r_write: Signal<Out, Bit>,
    pub r_count: Signal<In, Bits<4>>,
    pub cnt_drop: Signal<Out, Bits<32>>,
    pub cnt_pay_err: Signal<Out, Bits<32>>,
    ddp: TxDdpHdr,
    crcu: Crc32cX64,
    mask: LaneMask,
    // State: 0 idle, 1 framing, 2 discarding payload up to `last`.
    st: DFF<Bits<2>>,
    crc_en: DFF<Bit>,
    mk_en: DFF<Bit>,
    opcode: DFF<Bits<4>>,
    last: DFF<Bit>,
    stag: DFF<Bits<32>>,
    to: DFF<Bits<64>>,
    qn: DFF<Bits<32>>,
    msn: DFF<Bits<32>>,
    mo: DFF<Bits<32>>,
    pay_len: DFF<Bits<16>>,
    side: DFF<Bits<SIDE_W>>,
    /// Next non-marker FPDU word.
    fw: DFF<Bits<12>>,
    /// Marker word phase of the next word slot (RFC 5044 §4.3).
    wph: DFF<Bits<7>>,
    /// Wire words of this FPDU so far (markers included): FPDUPTR / 4.
    woff: DFF<Bits<12>>,
    hold: DFF<Bits<32>>,
    hold_v: DFF<Bit>,
    /// Payload octets not yet taken from the input.
    pay_rem: DFF<Bits<16>>,
    /// The payload ended early: further payload words are zeros.
    zfill: DFF<Bit>,
    /// The payload is longer than `pay_len`: discard up to `last` after.
    drain: DFF<Bit>,
    // Output register.
    q_data: DFF<Bits<64>>,
    q_last: DFF<Bit>,
    q_half: DFF<Bit>,
    q_valid: DFF<Bit>,
    psum: DFF<Bits<32>>,
    // The finished segment's record, waiting for its CRC.
    p_side: DFF<Bits<SIDE_W>>,
    p_t: DFF<Bits<16>>,
    p_psum: DFF<Bits<32>>,
    p_crc_en: DFF<Bit>,
    p_v: DFF<Bit>,
    c_drop: DFF<Bits<32>>,
    c_perr: DFF<Bits<32>>,
    // Combinational temporaries.
    adv: Signal<Local, Bit>,
    diff: Signal<Local, Bits<32>>,
    bad: Signal<Local, Bit>,
    d_hw: Signal<Local, Bits<3>>,
    d_fw: Signal<Local, Bits<18>>,
    too_long: Signal<Local, Bit>,
    /// The profile's FPDU limits in non-marker words (markers off / on).
    c_max_fw: Constant<Bits<18>>,
    c_max_fw_mk: Constant<Bits<18>>,
    /// The descriptor's CRC word index among its FPDU's non-marker words
    /// (header + payload words; `d_fw` is one more).
    d_fwc: Signal<Local, Bits<18>>,
    /// The FPDU's header words and CRC word index, registered when its
    /// descriptor is taken: the per-beat word-slot choice starts from
    /// registers, not from the header decode and an adder (board timing,
    /// docs/fpga.md).
    hwords: DFF<Bits<12>>,
    fw_crc: DFF<Bits<12>>,
    m0: Signal<Local, Bit>,
    h0: Signal<Local, Bit>,
    c0: Signal<Local, Bit>,
    k0: Signal<Local, Bit>,
    fw1: Signal<Local, Bits<12>>,
    s1x: Signal<Local, Bit>,
    m1: Signal<Local, Bit>,
    h1: Signal<Local, Bit>,
    c1: Signal<Local, Bit>,
    k1: Signal<Local, Bit>,
    need_in: Signal<Local, Bit>,
    stall: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    rem8: Signal<Local, Bits<4>>,
    li: Signal<Local, Bits<4>>,
    lanes: Signal<Local, Bits<8>>,
    iw: Signal<Local, Bits<64>>,
    pw0: Signal<Local, Bits<32>>,
    pw1: Signal<Local, Bits<32>>,
    sh0: Signal<Local, Bits<8>>,
    sh1: Signal<Local, Bits<8>>,
    hs0: Signal<Local, Bits<160>>,
    hs1: Signal<Local, Bits<160>>,
    woff1: Signal<Local, Bits<12>>,
    woff2: Signal<Local, Bits<12>>,
    ptr0: Signal<Local, Bits<16>>,
    ptr1: Signal<Local, Bits<16>>,
    w0: Signal<Local, Bits<32>>,
    w1: Signal<Local, Bits<32>>,
    nfw: Signal<Local, Bits<12>>,
    exp_last: Signal<Local, Bit>,
    drain_nx: Signal<Local, Bit>,
    bsum: Signal<Local, Bits<32>>,
    crcv: Signal<Local, Bits<32>>,
}

impl<const PR: usize> Default for TxMpaN<PR> {
    fn default() -> Self {
        let (fw, fw_mk) = fpdu_word_limits(crate::profile::PROFILES[PR].tx_max_tcp_payload);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            d_valid: Default::default(),
            d_ready: Default::default(),
            d_crc_en: Default::default(),
            d_mk_en: Default::default(),
            d_seq: Default::default(),
            d_seq_start: Default::default(),
            d_opcode: Default::default(),
            d_last: Default::default(),
            d_stag: Default::default(),
            d_to: Default::default(),
            d_qn: Default::default(),
            d_msn: Default::default(),
            d_mo: Default::default(),
            d_pay_len: Default::default(),
            d_side: Default::default(),
            pay_data: Default::default(),
            pay_keep: Default::default(),
            pay_last: Default::default(),
            pay_valid: Default::default(),
            pay_ready: Default::default(),
            o_data: Default::default(),
            o_last: Default::default(),
            o_write: Default::default(),
            o_full: Default::default(),
            r_data: Default::default(),
            r_write: Default::default(),
            r_count: Default::default(),
            cnt_drop: Default::default(),
            cnt_pay_err: Default::default(),
            ddp: Default::default(),
            crcu: Default::default(),
            mask: Default::default(),
            st: Default::default(),
            crc_en: Default::default(),
            mk_en: Default::default(),
            opcode: Default::default(),
            last: Default::default(),
            stag: Default::default(),
            to: Default::default(),
            qn: Default::default(),
            msn: Default::default(),
            mo: Default::default(),
            pay_len: Default::default(),
            side: Default::default(),
            fw: Default::default(),
            wph: Default::default(),
            woff: Default::default(),
            hold: Default::default(),
            hold_v: Default::default(),
            pay_rem: Default::default(),
            zfill: Default::default(),
            drain: Default::default(),
            q_data: Default::default(),
            q_last: Default::default(),
            q_half: Default::default(),
            q_valid: Default::default(),
            psum: Default::default(),
            p_side: Default::default(),
            p_t: Default::default(),
            p_psum: Default::default(),
            p_crc_en: Default::default(),
            p_v: Default::default(),
            c_drop: Default::default(),
            c_perr: Default::default(),
            adv: Default::default(),
            diff: Default::default(),
            bad: Default::default(),
            d_hw: Default::default(),
            d_fw: Default::default(),
            too_long: Default::default(),
            d_fwc: Default::default(),
            hwords: Default::default(),
            fw_crc: Default::default(),
            m0: Default::default(),
            h0: Default::default(),
            c0: Default::default(),
            k0: Default::default(),
            fw1: Default::default(),
            s1x: Default::default(),
            m1: Default::default(),
            h1: Default::default(),
            c1: Default::default(),
            k1: Default::default(),
            need_in: Default::default(),
            stall: Default::default(),
            take: Default::default(),
            rem8: Default::default(),
            li: Default::default(),
            lanes: Default::default(),
            iw: Default::default(),
            pw0: Default::default(),
            pw1: Default::default(),
            sh0: Default::default(),
            sh1: Default::default(),
            hs0: Default::default(),
            hs1: Default::default(),
            woff1: Default::default(),
            woff2: Default::default(),
            ptr0: Default::default(),
            ptr1: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            nfw: Default::default(),
            exp_last: Default::default(),
            drain_nx: Default::default(),
            bsum: Default::default(),
            crcv: Default::default(),
            c_max_fw: Constant::new((fw as u64).into()),
            c_max_fw_mk: Constant::new((fw_mk as u64).into()),
        }
    }
}

impl<const PR: usize> Logic for TxMpaN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, crcu);
        dff_setup!(
            self, clock, st, crc_en, mk_en, opcode, last, stag, to, qn, msn, mo, pay_len, side, fw,
            wph, woff, hold, hold_v, pay_rem, zfill, drain, q_data, q_last, q_half, q_valid, psum,
            p_side, p_t, p_psum, p_crc_en, p_v, c_drop, c_perr, hwords, fw_crc
        );
        self.crcu.reset.next = self.reset.val();

        // ---- DDP header of the latched descriptor
        self.ddp.opcode.next = self.opcode.q.val();
        self.ddp.last.next = self.last.q.val();
        self.ddp.stag.next = self.stag.q.val();
        self.ddp.to.next = self.to.q.val();
        self.ddp.qn.next = self.qn.q.val();
        self.ddp.msn.next = self.msn.q.val();
        self.ddp.mo.next = self.mo.q.val();
        self.ddp.pay_len.next = self.pay_len.q.val();

        // ---- output register → data FIFO, CRC and checksum sidecars
        self.o_write.next = self.q_valid.q.val() & !self.o_full.val();
        self.o_data.next = self.q_data.q.val();
        self.o_last.next = self.q_last.q.val();
        self.adv.next = !self.q_valid.q.val() | !self.o_full.val();
        if self.o_write.val() {
            self.q_valid.d.next = false;
        }
        self.crcu.data.next = self.q_data.q.val();
        self.crcu.last.next = self.q_last.q.val();
        // The CRC covers the wire octets before the CRC word (RFC 5044 §4.4).
        self.crcu.keep.next = 4.into();
        if self.q_half.q.val() {
            self.crcu.keep.next = 0.into();
        }
        self.crcu.valid.next = self.o_write.val();
        self.bsum.next = bit_cast::<32, 16>(self.q_data.q.val().get_bits::<16>(0))
            + bit_cast::<32, 16>(self.q_data.q.val().get_bits::<16>(16))
            + bit_cast::<32, 16>(self.q_data.q.val().get_bits::<16>(32))
            + bit_cast::<32, 16>(self.q_data.q.val().get_bits::<16>(48));
        if self.o_write.val() {
            if self.q_last.q.val() {
                self.p_psum.d.next = self.psum.q.val() + self.bsum.val();
                self.psum.d.next = 0.into();
            } else {
                self.psum.d.next = self.psum.q.val() + self.bsum.val();
            }
        }

        // ---- record, when the CRC is known
        self.crcv.next = 0.into();
        if self.p_crc_en.q.val() {
            self.crcv.next = self.crcu.crc.val();
        }
        self.r_write.next = self.crcu.crc_valid.val();
        self.r_data.next = bit_cast::<REC_W, 32>(self.crcv.val())
            | (bit_cast::<REC_W, 32>(self.p_psum.q.val()) << 32)
            | (bit_cast::<REC_W, 16>(self.p_t.q.val()) << 64)
            | (bit_cast::<REC_W, SIDE_W>(self.p_side.q.val()) << 80);
        if self.crcu.crc_valid.val() {
            self.p_v.d.next = false;
        }

        // ---- descriptor
        self.d_ready.next = (self.st.q.val() == 0)
            & ((bit_cast::<5, 4>(self.r_count.val()) + bit_cast::<5, 1>(self.p_v.q.val().into()))
                < 8);
        self.diff.next = self.d_seq.val() - self.d_seq_start.val();
        // The descriptor's FPDU in non-marker words: ULPDU_LENGTH + header
        // (4 words tagged, 5 untagged, as `tx_ddp_hdr`), payload + pad, CRC.
        self.d_hw.next = 5.into();
        if (self.d_opcode.val() == 0) | (self.d_opcode.val() == 2) {
            self.d_hw.next = 4.into();
        }
        self.d_fwc.next = bit_cast::<18, 3>(self.d_hw.val())
            + ((bit_cast::<18, 16>(self.d_pay_len.val()) + 3) >> 2);
        self.d_fw.next = self.d_fwc.val() + 1;
        // The FPDU with its markers must fit the profile's MTU frame:
        // MAX_FPDU_WORDS (2240), MAX_FPDU_WORDS_MK (2222) with markers on
        // the sim profile (9000), 365 / 362 on the board (1500).
        self.too_long.next = self.d_fw.val() > self.c_max_fw.val();
        if self.d_mk_en.val() {
            self.too_long.next = self.d_fw.val() > self.c_max_fw_mk.val();
        }
        self.bad.next = (self.d_mk_en.val() & ((self.diff.val() & 3) != 0)) | self.too_long.val();

        // ---- word slots of this beat
        self.m0.next = self.mk_en.q.val() & (self.wph.q.val() == 0);
        self.h0.next = !self.m0.val() & (self.fw.q.val() < self.hwords.q.val());
        self.c0.next = !self.m0.val() & (self.fw.q.val() == self.fw_crc.q.val());
        self.k0.next = !self.m0.val() & !self.h0.val() & !self.c0.val();
        self.fw1.next = self.fw.q.val() + 1;
        if self.m0.val() {
            self.fw1.next = self.fw.q.val();
        }
        // A marker is only sent in front of an FPDU octet (RFC 5044 §4.3).
        self.s1x.next = self.m0.val() | !self.c0.val();
        self.m1.next = self.s1x.val() & self.mk_en.q.val() & (self.wph.q.val() == 127);
        self.h1.next = self.s1x.val() & !self.m1.val() & (self.fw1.val() < self.hwords.q.val());
        self.c1.next = self.s1x.val() & !self.m1.val() & (self.fw1.val() == self.fw_crc.q.val());
        self.k1.next = self.s1x.val() & !self.m1.val() & !self.h1.val() & !self.c1.val();
        self.nfw.next = self.fw1.val();
        if !self.m1.val() & self.s1x.val() {
            self.nfw.next = self.fw1.val() + 1;
        }

        // ---- payload words: one holding register in front of the input
        self.need_in.next = (self.k0.val() & self.k1.val())
            | ((self.k0.val() | self.k1.val()) & !self.hold_v.q.val());
        self.stall.next = self.need_in.val() & !self.zfill.q.val() & !self.pay_valid.val();
        self.take.next = false;
        self.rem8.next = 8.into();
        if self.pay_rem.q.val() < 8 {
            self.rem8.next = self.pay_rem.q.val().get_bits::<4>(0);
        }
        self.li.next = 0.into();
        self.lanes.next = 0.into();
        for i in 0..8 {
            if self.li.val() < self.rem8.val() {
                self.lanes.next = self.lanes.val().replace_bit(i, true);
            }
            self.li.next = self.li.val() + 1;
        }
        self.mask.data.next = self.pay_data.val();
        self.mask.lanes.next = self.lanes.val();
        self.iw.next = self.mask.out.val();
        if self.zfill.q.val() {
            self.iw.next = 0.into();
        }
        self.pw0.next = self.iw.val().get_bits::<32>(0);
        self.pw1.next = self.iw.val().get_bits::<32>(32);
        if self.hold_v.q.val() {
            self.pw0.next = self.hold.q.val();
            self.pw1.next = self.iw.val().get_bits::<32>(0);
        }
        self.exp_last.next = self.pay_rem.q.val() <= 8;
        self.drain_nx.next = self.drain.q.val();

        // ---- header and marker words
        self.sh0.next = bit_cast::<8, 3>(self.fw.q.val().get_bits::<3>(0)) << 5;
        self.sh1.next = bit_cast::<8, 3>(self.fw1.val().get_bits::<3>(0)) << 5;
        self.hs0.next = self.ddp.hdr.val() >> self.sh0.val();
        self.hs1.next = self.ddp.hdr.val() >> self.sh1.val();
        // FPDUPTR: wire octets from the FPDU's start to the marker
        // (RFC 5044 §4.3); the marker is 0x0000 then FPDUPTR, network order.
        self.woff1.next = self.woff.q.val() + 1;
        self.woff2.next = self.woff.q.val() + 2;
        self.ptr0.next = bit_cast::<16, 12>(self.woff.q.val()) << 2;
        self.ptr1.next = bit_cast::<16, 12>(self.woff1.val()) << 2;
        self.w0.next = self.pw0.val();
        if self.m0.val() {
            self.w0.next = (bit_cast::<32, 8>(self.ptr0.val().get_bits::<8>(0)) << 24)
                | (bit_cast::<32, 8>(self.ptr0.val().get_bits::<8>(8)) << 16);
        }
        if self.h0.val() {
            self.w0.next = self.hs0.val().get_bits::<32>(0);
        }
        if self.c0.val() {
            self.w0.next = 0.into();
        }
        self.w1.next = 0.into();
        if self.k1.val() {
            self.w1.next = self.pw0.val();
            if self.k0.val() {
                self.w1.next = self.pw1.val();
            }
        }
        if self.m1.val() {
            self.w1.next = (bit_cast::<32, 8>(self.ptr1.val().get_bits::<8>(0)) << 24)
                | (bit_cast::<32, 8>(self.ptr1.val().get_bits::<8>(8)) << 16);
        }
        if self.h1.val() {
            self.w1.next = self.hs1.val().get_bits::<32>(0);
        }

        // ---- state machine
        self.pay_ready.next = false;
        if self.st.q.val() == 0 {
            if self.d_valid.val() & self.d_ready.val() {
                self.crc_en.d.next = self.d_crc_en.val();
                self.mk_en.d.next = self.d_mk_en.val();
                self.opcode.d.next = self.d_opcode.val();
                self.last.d.next = self.d_last.val();
                self.stag.d.next = self.d_stag.val();
                self.to.d.next = self.d_to.val();
                self.qn.d.next = self.d_qn.val();
                self.msn.d.next = self.d_msn.val();
                self.mo.d.next = self.d_mo.val();
                self.pay_len.d.next = self.d_pay_len.val();
                // Header words (as `tx_ddp_hdr`'s header) and the index of
                // the CRC word among the FPDU's non-marker words.
                self.hwords.d.next = bit_cast::<12, 3>(self.d_hw.val());
                self.fw_crc.d.next = self.d_fwc.val().get_bits::<12>(0);
                self.side.d.next = self.d_side.val();
                self.wph.d.next = self.diff.val().get_bits::<7>(2);
                self.fw.d.next = 0.into();
                self.woff.d.next = 0.into();
                self.hold_v.d.next = false;
                self.pay_rem.d.next = self.d_pay_len.val();
                self.zfill.d.next = false;
                self.drain.d.next = false;
                if self.bad.val() {
                    self.c_drop.d.next = self.c_drop.q.val() + 1;
                    if self.d_pay_len.val() != 0 {
                        self.st.d.next = 2.into();
                    }
                } else {
                    self.st.d.next = 1.into();
                }
            }
        } else if self.st.q.val() == 1 {
            if self.adv.val() & !self.stall.val() {
                self.take.next = self.need_in.val();
                self.q_valid.d.next = true;
                self.q_data.d.next =
                    bit_cast::<64, 32>(self.w0.val()) | (bit_cast::<64, 32>(self.w1.val()) << 32);
                self.q_last.d.next = self.c0.val() | self.c1.val();
                self.q_half.d.next = self.c0.val();
                self.fw.d.next = self.nfw.val();
                self.wph.d.next = self.wph.q.val() + 2;
                self.woff.d.next = self.woff2.val();
                if (self.k0.val() | self.k1.val()) & self.hold_v.q.val() & !self.need_in.val() {
                    self.hold_v.d.next = false;
                }
                if self.take.val() {
                    self.pay_ready.next = !self.zfill.q.val();
                    self.pay_rem.d.next = self.pay_rem.q.val() - 8;
                    if self.exp_last.val() {
                        self.pay_rem.d.next = 0.into();
                    }
                    if self.k0.val() & self.k1.val() & !self.hold_v.q.val() {
                        self.hold_v.d.next = false;
                    } else {
                        self.hold.d.next = self.iw.val().get_bits::<32>(32);
                        self.hold_v.d.next = self.pay_rem.q.val() > 4;
                    }
                    if !self.zfill.q.val() {
                        if self.pay_last.val() & !self.exp_last.val() {
                            self.zfill.d.next = true;
                        }
                        if !self.pay_last.val() & self.exp_last.val() {
                            self.drain_nx.next = true;
                        }
                        if (self.pay_last.val() != self.exp_last.val())
                            | (self.pay_last.val()
                                & (bit_cast::<16, 4>(self.pay_keep.val()) != self.pay_rem.q.val()))
                        {
                            self.c_perr.d.next = self.c_perr.q.val() + 1;
                        }
                    }
                }
                self.drain.d.next = self.drain_nx.val();
                if self.c0.val() | self.c1.val() {
                    // Last beat of the FPDU: the record waits for its CRC.
                    self.p_side.d.next = self.side.q.val();
                    self.p_crc_en.d.next = self.crc_en.q.val();
                    self.p_v.d.next = true;
                    self.p_t.d.next = bit_cast::<16, 12>(self.woff1.val()) << 2;
                    if !self.c0.val() {
                        self.p_t.d.next = bit_cast::<16, 12>(self.woff2.val()) << 2;
                    }
                    self.st.d.next = 0.into();
                    if self.drain_nx.val() {
                        self.st.d.next = 2.into();
                    }
                }
            }
        } else {
            self.pay_ready.next = true;
            if self.pay_valid.val() & self.pay_last.val() {
                self.st.d.next = 0.into();
            }
        }

        self.cnt_drop.next = self.c_drop.q.val();
        self.cnt_pay_err.next = self.c_perr.q.val();
        if self.reset.val() {
            self.st.d.next = 0.into();
            self.q_valid.d.next = false;
            self.psum.d.next = 0.into();
            self.p_v.d.next = false;
            self.c_drop.d.next = 0.into();
            self.c_perr.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::Rng;
    use crate::transmit::tx_framer::tests::{random_message, streams, Conn};
    use std::collections::VecDeque;

    /// The block alone: for random messages on connections with CRC and
    /// markers on/off, what it writes to the data FIFO must be the
    /// reference TCP payload (`TxStream::send`) with the CRC field zeroed,
    /// and its record must carry that CRC (0 when off), the payload length,
    /// the sum of the 16-bit lanes and the side band; with a data FIFO that
    /// is often full.
    /// The device's MULPDU limit in the ABI is what the RTL transmits:
    /// `tx_seg` refuses above exactly it, and it is within the framer's own
    /// limits (markers on and off) and `tx_seg`'s reads of one segment.
    #[test]
    fn abi_mulpdu_limit_matches_rtl() {
        assert_eq!(crate::transmit::tx_seg::MAX_MULPDU, caps::MAX_MULPDU as u64);
        assert_eq!(MAX_PAY_LEN, 8868);
        assert_eq!(FRAMER_MAX_PAY_LEN, 8940);
        let fpdu_words = |ulpdu: usize| rnic_wire::mpa::fpdu_len(ulpdu) / 4;
        assert!(fpdu_words(caps::MAX_MULPDU as usize) <= MAX_FPDU_WORDS_MK as usize);
        assert_eq!(
            fpdu_words(rnic_wire::mpa::mulpdu(caps::TX_MAX_TCP_PAYLOAD, true) as usize),
            MAX_FPDU_WORDS_MK as usize
        );
        assert_eq!(
            fpdu_words(rnic_wire::mpa::mulpdu(caps::TX_MAX_TCP_PAYLOAD, false) as usize),
            MAX_FPDU_WORDS as usize
        );
        const { assert!(MAX_PAY_LEN <= caps::TX_SEG_MAX_READS * caps::TX_MAX_SEG_READ) };
        const { assert!(MAX_PAY_LEN <= FRAMER_MAX_PAY_LEN) };
    }

    #[test]
    fn payload_and_record_match_txstream() {
        let mut rng = Rng::new(31);
        let data = rng.bytes(1500);
        let mut descs = Vec::new();
        for (crc, mk) in [(true, true), (false, true), (true, false), (false, false)] {
            let ss = (rng.next_u64() as u32) & !3;
            let mut c = Conn::new(&mut rng, crc, mk, ss, 400);
            for _ in 0..4 {
                let msg = random_message(&mut rng, &data, 700);
                descs.extend(c.send(&msg).0);
            }
        }
        run(&mut rng, &descs, 60_000);
    }

    /// MTU 9000: per CRC on/off × markers on/off, the largest tagged FPDU
    /// (at SeqStart: with markers, 18 of them) and the largest untagged one
    /// of an EMSS-8960 connection (`mpa::mulpdu(8960, markers)`), each a
    /// TCP payload of at most 8960 octets; checked as above against
    /// `TxStream::send` and the `crc32c` crate.
    #[test]
    fn max_fpdus_match_txstream() {
        let mut rng = Rng::new(32);
        let data = rng.bytes(FRAMER_MAX_PAY_LEN as usize);
        let mut descs = Vec::new();
        for (crc, mk) in [(true, true), (false, true), (true, false), (false, false)] {
            let ss = (rng.next_u64() as u32) & !3;
            let emss = caps::TX_MAX_TCP_PAYLOAD;
            let mut c = Conn::new(&mut rng, crc, mk, ss, emss);
            let (d, f) = c.send(&rnic_wire::model::Message::Write {
                stag: 7,
                to: 0,
                data: &data[..c.mulpdu - 14],
            });
            assert_eq!(f[0].len(), 54 + caps::TX_MAX_TCP_PAYLOAD as usize);
            descs.extend(d);
            let (d, f) = c.send(&rnic_wire::model::Message::Send {
                data: &data[..c.mulpdu - 18],
                solicited: true,
                invalidate: None,
            });
            assert!(f[0].len() <= 54 + caps::TX_MAX_TCP_PAYLOAD as usize);
            descs.extend(d);
        }
        assert_eq!(descs.len(), 8);
        assert_eq!(descs[4].pay.len(), FRAMER_MAX_PAY_LEN as usize);
        run(&mut rng, &descs, 40_000);
    }

    fn run(rng: &mut Rng, descs: &[crate::transmit::tx_framer::tests::Desc], max_cycles: usize) {
        let mut uut = TxMpa::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.d_valid.connect();
        uut.d_crc_en.connect();
        uut.d_mk_en.connect();
        uut.d_seq.connect();
        uut.d_seq_start.connect();
        uut.d_opcode.connect();
        uut.d_last.connect();
        uut.d_stag.connect();
        uut.d_to.connect();
        uut.d_qn.connect();
        uut.d_msn.connect();
        uut.d_mo.connect();
        uut.d_pay_len.connect();
        uut.d_side.connect();
        uut.pay_data.connect();
        uut.pay_keep.connect();
        uut.pay_last.connect();
        uut.pay_valid.connect();
        uut.o_full.connect();
        uut.r_count.connect();
        uut.connect_all();
        let s = streams(descs);
        let mut dq: VecDeque<_> = descs.iter().collect();
        let mut sides: VecDeque<Bits<SIDE_W>> = VecDeque::new();
        let mut pq: VecDeque<(u64, u8, bool)> = s.iter().flatten().copied().collect();
        uut.reset.next = true;
        for _ in 0..2 {
            crate::common::testutil::tick!(uut);
        }
        uut.reset.next = false;
        let mut cur = Vec::new();
        let mut payloads: VecDeque<Vec<u8>> = VecDeque::new();
        let mut n = 0;
        for _ in 0..max_cycles {
            if n == descs.len() {
                break;
            }
            let dv = !dq.is_empty();
            if let Some(d) = dq.front() {
                uut.d_crc_en.next = d.crc;
                uut.d_mk_en.next = d.mk;
                uut.d_seq.next = (d.seq as u64).into();
                uut.d_seq_start.next = (d.seq_start as u64).into();
                uut.d_opcode.next = (d.opcode as u64).into();
                uut.d_last.next = d.last;
                uut.d_stag.next = (d.stag as u64).into();
                uut.d_to.next = d.to.into();
                uut.d_qn.next = (d.qn as u64).into();
                uut.d_msn.next = (d.msn as u64).into();
                uut.d_mo.next = (d.mo as u64).into();
                uut.d_pay_len.next = (d.pay.len() as u64).into();
                let mut side: Bits<SIDE_W> = 0.into();
                side.set_bits::<64>(100, rng.next_u64().into());
                uut.d_side.next = side;
            }
            uut.d_valid.next = dv;
            let pv = !pq.is_empty() && rng.below(10) < 8;
            if let Some(&(x, k, l)) = pq.front() {
                uut.pay_data.next = x.into();
                uut.pay_keep.next = (k as u64).into();
                uut.pay_last.next = l;
            }
            uut.pay_valid.next = pv;
            uut.o_full.next = rng.below(10) < 3;
            uut.r_count.next = (rng.below(8) as u64).into();
            uut.clock.next = false.into();
            assert!(simulate(&mut uut, 1000));
            if dv && uut.d_ready.val() {
                dq.pop_front();
                sides.push_back(uut.d_side.val());
            }
            if pv && uut.pay_ready.val() {
                pq.pop_front();
            }
            if uut.o_write.val() {
                cur.extend_from_slice(&uut.o_data.val().to_u64().to_le_bytes());
                if uut.o_last.val() {
                    payloads.push_back(std::mem::take(&mut cur));
                }
            }
            if uut.r_write.val() {
                let r = uut.r_data.val();
                let t = r.get_bits::<16>(64).to_u64() as usize;
                let mut got = payloads.pop_front().expect("record before its payload");
                assert!(
                    got.len() == t || got.len() == t + 4,
                    "T {t} for {}",
                    got.len()
                );
                got.truncate(t);
                let d = &descs[n];
                let mut want = d.wire.clone();
                let crc = u32::from_le_bytes(want[t - 4..].try_into().unwrap());
                want[t - 4..].fill(0);
                assert_eq!(got, want, "segment {n}: {d:?}");
                assert_eq!(r.get_bits::<32>(0).to_u32(), if d.crc { crc } else { 0 });
                if d.crc {
                    // Independent: CRC32c of the wire octets before the field.
                    assert_eq!(crc, crc32c::crc32c(&want[..t - 4]));
                }
                let psum: u32 = want
                    .chunks(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
                    .sum();
                assert_eq!(r.get_bits::<32>(32).to_u32(), psum);
                assert_eq!(r.get_bits::<SIDE_W>(80), sides.pop_front().unwrap());
                n += 1;
            }
            uut.clock.next = true.into();
            assert!(simulate(&mut uut, 1000));
        }
        assert_eq!(n, descs.len(), "records");
    }
}
