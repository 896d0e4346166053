//! `fpdu_buffer`: store-and-forward of `mpa_rx` pieces, so that the DDP
//! stage only ever sees whole FPDUs whose MPA verdict is known and good.
//!
//! # Scheme
//! Beats of every piece (with backpressure, `in_ready`) go to a `2^N` x
//! {data, keep} FIFO (`N` = [`FPDU_BUF_N`] = 11 by default: 2048 beats,
//! 16 KiB); on the piece's `last` beat a record {octets, connection, kind,
//! cause, beats} goes to a 16-entry record FIFO. The read side
//! starts a piece only when its record is present, waits one clock (`LOAD`:
//! a RAM lookup keyed by `out_conn`, the QP table in `rnic_core`, has its
//! result; `in_qpn` is sampled then), and then:
//! * **pass** (the piece is a whole FPDU — `ulpdu_start` on its first beat,
//!   `fpdu_end` and `crc_ok` on its last): presented on `out_*` with
//!   `out_len`/`out_conn` held on every beat;
//! * **span** (a piece of an FPDU that spans TCP segments, `ulpdu_start = 0`
//!   or `fpdu_end = 0`): reassembled in a **span slot** (below) and released
//!   as one whole FPDU once its last piece (`fpdu_end & crc_ok`) is in.
//!   RFC 5044 §8: nothing of an FPDU is placed before its CRC is checked;
//!   RFC 5044 §5 only *recommends* one FPDU per segment, a peer's TCP may
//!   resegment (retransmission, smaller path MTU);
//! * **error** (`fpdu_end` with `crc_ok = 0`: CRC mismatch, bad marker or
//!   impossible ULPDU_LENGTH): the beats are discarded and a Terminate
//!   request is raised on `mterm_*` (held until `mterm_pop`) with the LLP
//!   cause of RFC 5044 §8 / RFC 6580 §3.3 (layer 2, error type 0): code 2
//!   for a CRC error, code 3 ("MPA Marker and ULPDU Length field disagree")
//!   for a bad marker or length. While a Terminate is pending, the next
//!   error record waits (so none is lost; `mpa_rx` stops a connection at its
//!   first error, RFC 5044 §8).
//!
//! # Span slots (FPDUs that span TCP segments)
//! [`SPAN_SLOTS`] slots (default 2: that many connections may have a split
//! FPDU pending at once), each `2^SPAN_BEAT_BITS` beats (16 KiB, above the
//! ~9 KB MULPDU of a 9000-MTU peer) of one BRAM `sram` addressed
//! {slot, beat}, plus a per-slot record in `meta` {write pointer, octets,
//! residue octets and count} and a busy bit and connection per slot (a
//! small CAM). A piece is moved out of the data FIFO into its slot (`STORE`,
//! one beat per clock, byte-realigned so that the slot holds the ULPDU
//! packed from octet 0 whatever the pieces' lengths), so other connections'
//! pieces behind it keep flowing (no head-of-line blocking). The first piece
//! (`ulpdu_start`, no `fpdu_end`) takes a free slot; middle pieces append;
//! the last piece (`fpdu_end & crc_ok`) appends and then the slot is
//! replayed on `out_*` as one FPDU (`PRIME`, `REPLAY`: 1 + beats clocks,
//! `out_len` = the whole ULPDU) and freed. Defined answers:
//! * last piece with an MPA error: the slot is freed, nothing placed, the
//!   MPA Terminate above (RFC 5044 §8);
//! * no free slot for a first piece, a continuation with no slot (its first
//!   piece was refused), or an FPDU longer than a slot: its pieces are
//!   dropped and counted in `cnt_span`, and a Terminate request with the
//!   DDP Local Catastrophic cause ([`CAUSE_DDP_LOCAL_CATASTROPHIC`], RFC
//!   5041 §7.2) is raised once, on the first piece refused (or at the end of
//!   a too-long FPDU). With the admission rule below a first piece always
//!   finds a slot, so of these only the too-long FPDU happens (the peer
//!   exceeded any MULPDU a 9000-octet MTU allows); the others remain the
//!   defined answer should a slot leak (below);
//! * a whole or first piece on a connection whose slot is still open (the
//!   firmware re-initialised the connection mid-FPDU): the stale slot is
//!   freed (counted in `cnt_span`).
//!
//! # Admission (no stream terminated for want of a slot)
//! The write side replays the read side's slot rule as each piece's last
//! beat is written: a connection holds a slot after a piece that starts an
//! FPDU without ending it, keeps it through continuations, and gives it up
//! with the piece that ends the FPDU (or ends it with an error); a whole
//! FPDU on a connection still holding one frees the stale slot. Per
//! connection that is one bit (`span_held`), and `span_cnt` counts the
//! ones. The read side processes the same pieces in the same order, so
//! when it takes a piece its slots in use equal the count right after that
//! piece was written. The segment sequencer (`rnic_core`) asks `adm_ok` for
//! the connection of each segment before `mpa_rx` takes it: a connection
//! holding a slot may always go on (its own slot is freed before it could
//! need another), any other only while `span_cnt < SPAN_SLOTS`. As
//! `mpa_rx` takes one segment at a time and a segment leaves at most one
//! FPDU open (its last), the count never exceeds the slots. A segment
//! refused here is discarded whole before anything of it is acknowledged,
//! and TCP brings it again (docs/rtl.md "Receive").
//!
//! A slot held by a connection that the firmware re-initialises or frees
//! mid-FPDU stays held until that connection's next piece (the stale-slot
//! rule above), and is counted so: the count never claims a slot the read
//! side does not have free.
//!
//! A piece must fit the data FIFO: the pieces are at most one TCP payload,
//! and `rx_fifo` limits the frame size. The default holds the payload of a
//! 9000-octet-MTU segment (9000 - 20 IPv4 - 20 TCP = 8960 octets, 1120
//! beats; with TCP options fewer) with room for 928 more beats, so a jumbo
//! FPDU passes while smaller ones keep arriving. `N` is a parameter
//! ([`FpduBufferN`]); the data FIFO is a `RAM` with a registered read, the
//! same inference pattern as before (on ECP5: 2048 x 68 bits = 8 DP16KD
//! blocks in 2048 x 9 mode).

use crate::common::fifo::Fifo;
use rust_hdl::prelude::*;

/// Record kind: a whole good FPDU.
pub const KIND_PASS: u64 = 0;
/// Record kind: part of an FPDU that spans segments.
pub const KIND_SPAN: u64 = 1;
/// Record kind: an FPDU with an MPA error.
pub const KIND_ERROR: u64 = 2;
/// Terminate cause bits (`TerminateCause::to_bits`): LLP layer 2, MPA error
/// type 0, code 2 = CRC error (RFC 5044 §8).
pub const CAUSE_MPA_CRC: u64 = 0x2002;
/// Code 3 = marker and ULPDU_LENGTH disagree (RFC 5044 §8).
pub const CAUSE_MPA_MARKER: u64 = 0x2003;
/// DDP layer 1, error type 0 Local Catastrophic, code 0 (RFC 5041 §7.2): a
/// spanning FPDU this device cannot hold (no free span slot, or longer than
/// a slot).
pub const CAUSE_DDP_LOCAL_CATASTROPHIC: u64 = 0x1000;

/// Span slots: `2^SPAN_SLOT_BITS` connections may have an FPDU that spans
/// segments pending at once.
pub const SPAN_SLOT_BITS: usize = 1;
/// Number of span slots.
pub const SPAN_SLOTS: usize = 1 << SPAN_SLOT_BITS;
/// Beats per span slot: `2^SPAN_BEAT_BITS` (2048 beats = 16 KiB per slot).
pub const SPAN_BEAT_BITS: usize = 11;
/// Write pointer width (one more bit: a full slot is distinguishable).
const SPAN_WP: usize = SPAN_BEAT_BITS + 1;
const _: () = assert!(SPAN_WP <= 12);
// The span RAM address is {beat, slot} with a one-bit slot (`<< 1`).
const _: () = assert!(SPAN_SLOT_BITS == 1);
/// `meta` record: write pointer [11:0], octets [27:12], residue count
/// [30:28], too-long [31], residue octets [95:32].
const META_W: usize = 96;

const S_IDLE: u64 = 0;
const S_LOAD: u64 = 1;
const S_PASS: u64 = 2;
const S_DROP: u64 = 3;
const S_META: u64 = 4;
const S_STORE: u64 = 5;
const S_PRIME: u64 = 6;
const S_REPLAY: u64 = 7;

/// Default data FIFO address bits: 2^11 = 2048 beats (16 KiB), enough for
/// the FPDU of a 9000-MTU segment (8960 octets of TCP payload).
pub const FPDU_BUF_N: usize = 11;
/// Record bits besides the beat count: octets 16, connection 8, kind 2,
/// marker/length cause 1, `ulpdu_start` 1, `fpdu_end` 1.
pub const REC_FIXED: usize = 29;

/// `fpdu_buffer` with the default size (see [`FPDU_BUF_N`]).
pub type FpduBuffer = FpduBufferN<
    FPDU_BUF_N,
    { FPDU_BUF_N + 1 },
    { FPDU_BUF_N + 1 + REC_FIXED },
    SPAN_BEAT_BITS,
    { SPAN_BEAT_BITS + 1 },
    { SPAN_SLOT_BITS + SPAN_BEAT_BITS },
>;

/// `fpdu_buffer` with a data FIFO of `2^N` beats; `NP1 = N + 1` (the beat
/// count width), `RW = NP1 + REC_FIXED` (the record width); span slots of
/// `2^B` beats, `BP1 = B + 1`, `SA = SPAN_SLOT_BITS + B` (the span RAM's
/// address width). rust-hdl needs
/// the derived widths spelled out (as for [`Fifo`]); [`FpduBufferN::new`]
/// checks them.
#[derive(LogicBlock, Default)]
pub struct FpduBufferN<
    const N: usize,
    const NP1: usize,
    const RW: usize,
    const B: usize,
    const BP1: usize,
    const SA: usize,
> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // pieces from mpa_rx
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_ulpdu_start: Signal<In, Bit>,
    pub in_fpdu_end: Signal<In, Bit>,
    pub in_crc_ok: Signal<In, Bit>,
    pub in_marker_bad: Signal<In, Bit>,
    pub in_length_bad: Signal<In, Bit>,
    /// Connection of the piece (sampled on its `last` beat).
    pub in_conn: Signal<In, Bits<8>>,
    /// QP number of `out_conn`, sampled in `LOAD` (for `mterm_qpn`).
    pub in_qpn: Signal<In, Bits<32>>,
    // whole good FPDUs (ULPDUs) out
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// ULPDU octets; with `out_conn`, the head record's (stable from `LOAD`).
    pub out_len: Signal<Out, Bits<16>>,
    pub out_conn: Signal<Out, Bits<8>>,
    // MPA Terminate request
    pub mterm_valid: Signal<Out, Bit>,
    pub mterm_cause: Signal<Out, Bits<16>>,
    pub mterm_conn: Signal<Out, Bits<8>>,
    pub mterm_qpn: Signal<Out, Bits<32>>,
    pub mterm_pop: Signal<In, Bit>,
    // counters
    pub cnt_pass: Signal<Out, Bits<32>>,
    pub cnt_span: Signal<Out, Bits<32>>,
    pub cnt_err: Signal<Out, Bits<32>>,
    /// Occupancy: beats held (16 bits: any buffer size up to 2^15 beats,
    /// never saturating) and records held.
    pub level_beats: Signal<Out, Bits<16>>,
    pub level_recs: Signal<Out, Bits<5>>,
    /// Admission of a segment of connection `adm_conn` (see "Admission"):
    /// `adm_ok` (combinational) = the connection holds a span slot, or one
    /// is free once every piece already written is processed.
    pub adm_conn: Signal<In, Bits<8>>,
    pub adm_ok: Signal<Out, Bit>,
    /// Span slots held, as the write side counts them (`span_held` ones).
    pub span_used: Signal<Out, Bits<9>>,
    dfifo: Fifo<Bits<68>, N, NP1>,
    rfifo: Fifo<Bits<RW>, 4, 5>,
    // write side
    mid: DFF<Bit>,
    sflag: DFF<Bit>,
    /// Per connection: its pieces written so far leave it holding a span
    /// slot (the read side's allocation, replayed in order).
    span_held: DFF<Bits<256>>,
    span_cnt: DFF<Bits<9>>,
    held_old: Signal<Local, Bit>,
    held_new: Signal<Local, Bit>,
    wbeats: DFF<Bits<NP1>>,
    wlen: DFF<Bits<16>>,
    take_in: Signal<Local, Bit>,
    n_beats: Signal<Local, Bits<NP1>>,
    n_len: Signal<Local, Bits<16>>,
    n_start: Signal<Local, Bit>,
    kind: Signal<Local, Bits<2>>,
    // read side
    rstate: DFF<Bits<3>>,
    rcount: DFF<Bits<NP1>>,
    head: Signal<Local, Bits<RW>>,
    take_out: Signal<Local, Bit>,
    // span slots
    sram: RAM<Bits<64>, SA>,
    meta: RAM<Bits<META_W>, SPAN_SLOT_BITS>,
    s_busy: DFF<Bits<SPAN_SLOTS>>,
    s_conn: DFF<Bits<{ 8 * SPAN_SLOTS }>>,
    hit: Signal<Local, Bit>,
    hit_idx: Signal<Local, Bits<SPAN_SLOT_BITS>>,
    free: Signal<Local, Bit>,
    free_idx: Signal<Local, Bits<SPAN_SLOT_BITS>>,
    ci: Signal<Local, Bits<SPAN_SLOT_BITS>>,
    sc: Signal<Local, Bits<{ 8 * SPAN_SLOTS }>>,
    // the slot being written / replayed
    c_sel: DFF<Bits<SPAN_SLOT_BITS>>,
    c_wp: DFF<Bits<BP1>>,
    c_len: DFF<Bits<16>>,
    c_res: DFF<Bits<64>>,
    c_rc: DFF<Bits<3>>,
    c_bad: DFF<Bit>,
    c_end: DFF<Bit>,
    rp: DFF<Bits<BP1>>,
    // realigner (STORE)
    ksh: Signal<Local, Bits<7>>,
    ones: Signal<Local, Bits<64>>,
    dm: Signal<Local, Bits<64>>,
    rsh: Signal<Local, Bits<7>>,
    comb: Signal<Local, Bits<128>>,
    tot: Signal<Local, Bits<4>>,
    n_wp: Signal<Local, Bits<BP1>>,
    n_slen: Signal<Local, Bits<16>>,
    n_res: Signal<Local, Bits<64>>,
    n_rc: Signal<Local, Bits<3>>,
    n_bad: Signal<Local, Bit>,
    nb: Signal<Local, Bits<BP1>>,
    rp_n: Signal<Local, Bits<B>>,
    c_wp_full: Signal<Local, Bit>,
    mt_raise: Signal<Local, Bit>,
    mt_new_cause: Signal<Local, Bits<16>>,
    s_clear: Signal<Local, Bit>,
    s_clear_idx: Signal<Local, Bits<SPAN_SLOT_BITS>>,
    mt_valid: DFF<Bit>,
    mt_cause: DFF<Bits<16>>,
    mt_conn: DFF<Bits<8>>,
    mt_qpn: DFF<Bits<32>>,
    c_pass: DFF<Bits<32>>,
    c_span: DFF<Bits<32>>,
    c_err: DFF<Bits<32>>,
}

impl<
        const N: usize,
        const NP1: usize,
        const RW: usize,
        const B: usize,
        const BP1: usize,
        const SA: usize,
    > FpduBufferN<N, NP1, RW, B, BP1, SA>
{
    /// A buffer of `2^N` beats; panics if `NP1`/`RW` are not `N + 1` and
    /// `N + 1 + REC_FIXED`.
    pub fn new() -> Self {
        assert_eq!(NP1, N + 1, "NP1 = N + 1");
        assert_eq!(RW, NP1 + REC_FIXED, "RW = N + 1 + REC_FIXED");
        assert_eq!(BP1, B + 1, "BP1 = B + 1");
        assert_eq!(SA, SPAN_SLOT_BITS + B, "SA = SPAN_SLOT_BITS + B");
        assert!(
            BP1 <= 12,
            "the write pointer has bits 11:0 of a meta record"
        );
        Self::default()
    }
}

impl<
        const N: usize,
        const NP1: usize,
        const RW: usize,
        const B: usize,
        const BP1: usize,
        const SA: usize,
    > Logic for FpduBufferN<N, NP1, RW, B, BP1, SA>
{
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, dfifo, rfifo);
        dff_setup!(
            self, clock, mid, sflag, span_held, span_cnt, wbeats, wlen, rstate, rcount, mt_valid,
            mt_cause, mt_conn, mt_qpn, c_pass, c_span, c_err, s_busy, s_conn, c_sel, c_wp, c_len,
            c_res, c_rc, c_bad, c_end, rp
        );
        self.dfifo.reset.next = self.reset.val();
        self.rfifo.reset.next = self.reset.val();

        // ---- write side
        // Room for this beat and for the record.
        self.in_ready.next = !self.dfifo.full.val() & !self.rfifo.full.val();
        self.take_in.next = self.in_valid.val() & self.in_ready.val();
        self.n_beats.next = 1.into();
        self.n_len.next = bit_cast::<16, 4>(self.in_keep.val());
        self.n_start.next = self.in_ulpdu_start.val();
        if self.mid.q.val() {
            self.n_beats.next = self.wbeats.q.val() + 1;
            self.n_len.next = self.wlen.q.val() + bit_cast::<16, 4>(self.in_keep.val());
            self.n_start.next = self.sflag.q.val();
        }
        // KIND_ERROR / KIND_PASS / KIND_SPAN
        self.kind.next = 1.into();
        if self.in_fpdu_end.val() & !self.in_crc_ok.val() {
            self.kind.next = 2.into();
        } else if self.in_fpdu_end.val() & self.n_start.val() {
            self.kind.next = 0.into();
        }
        self.dfifo.data_in.next =
            bit_cast::<68, 64>(self.in_data.val()) | (bit_cast::<68, 4>(self.in_keep.val()) << 64);
        self.dfifo.write.next = self.take_in.val();
        // Record: octets 15:0, connection 23:16, kind 25:24, marker/length
        // cause 26, ulpdu_start 27, fpdu_end 28, beats from 29 (the one
        // field whose width is `NP1`).
        self.rfifo.data_in.next = bit_cast::<RW, 16>(self.n_len.val())
            | (bit_cast::<RW, 8>(self.in_conn.val()) << 16)
            | (bit_cast::<RW, 2>(self.kind.val()) << 24)
            | (bit_cast::<RW, 1>((self.in_marker_bad.val() | self.in_length_bad.val()).into())
                << 26)
            | (bit_cast::<RW, 1>(self.n_start.val().into()) << 27)
            | (bit_cast::<RW, 1>(self.in_fpdu_end.val().into()) << 28)
            | (bit_cast::<RW, NP1>(self.n_beats.val()) << 29);
        self.rfifo.write.next = self.take_in.val() & self.in_last.val();
        // Span accounting (module doc, "Admission"): on a piece's last beat,
        // the read side's slot rule for it, applied now.
        self.held_old.next = self.span_held.q.val().get_bit(self.in_conn.val().index());
        self.held_new.next = !self.in_fpdu_end.val() & (self.n_start.val() | self.held_old.val());
        if self.take_in.val() & self.in_last.val() {
            self.span_held.d.next = self
                .span_held
                .q
                .val()
                .replace_bit(self.in_conn.val().index(), self.held_new.val());
            if self.held_new.val() & !self.held_old.val() {
                self.span_cnt.d.next = self.span_cnt.q.val() + 1;
            } else if !self.held_new.val() & self.held_old.val() {
                self.span_cnt.d.next = self.span_cnt.q.val() - 1;
            }
        }
        // span_cnt < SPAN_SLOTS: bits 8:1 clear (SPAN_SLOT_BITS == 1).
        self.adm_ok.next = self.span_held.q.val().get_bit(self.adm_conn.val().index())
            | (self.span_cnt.q.val().get_bits::<8>(1) == 0);
        self.span_used.next = self.span_cnt.q.val();
        if self.take_in.val() {
            self.mid.d.next = !self.in_last.val();
            self.wbeats.d.next = self.n_beats.val();
            self.wlen.d.next = self.n_len.val();
            self.sflag.d.next = self.n_start.val();
        }

        // ---- read side
        self.head.next = self.rfifo.data_out.val();
        self.out_len.next = self.head.val().get_bits::<16>(0);
        self.out_conn.next = self.head.val().get_bits::<8>(16);
        self.out_data.next = self.dfifo.data_out.val().get_bits::<64>(0);
        self.out_keep.next = self.dfifo.data_out.val().get_bits::<4>(64);
        self.out_last.next = self.rcount.q.val() == 1;
        self.out_valid.next = false;
        self.dfifo.read.next = false;
        self.rfifo.read.next = false;
        self.take_out.next = false;
        self.mt_raise.next = false;
        // CAUSE_DDP_LOCAL_CATASTROPHIC unless set below
        self.mt_new_cause.next = 0x1000.into();
        self.s_clear.next = false;
        self.s_clear_idx.next = self.c_sel.q.val();

        // Span slot lookup (CAM): the head record's connection's slot, and
        // the first free slot.
        self.hit.next = false;
        self.hit_idx.next = 0.into();
        self.free.next = false;
        self.free_idx.next = 0.into();
        self.ci.next = 0.into();
        for i in 0..SPAN_SLOTS {
            if self.s_busy.q.val().get_bit(i)
                & (self.s_conn.q.val().get_bits::<8>(8 * i) == self.head.val().get_bits::<8>(16))
            {
                self.hit.next = true;
                self.hit_idx.next = self.ci.val();
            }
            if !self.s_busy.q.val().get_bit(i) & !self.free.val() {
                self.free.next = true;
                self.free_idx.next = self.ci.val();
            }
            self.ci.next = self.ci.val() + 1;
        }

        // Span RAMs: `sram` {beat, slot} (address bit 0 = slot, bits B:1 =
        // beat: the slot in the low bit keeps the shift a literal for any
        // B), `meta` per slot.
        self.sram.read_clock.next = self.clock.val();
        self.sram.write_clock.next = self.clock.val();
        self.meta.read_clock.next = self.clock.val();
        self.meta.write_clock.next = self.clock.val();
        self.meta.read_address.next = self.c_sel.q.val();
        self.meta.write_address.next = self.c_sel.q.val();
        self.meta.write_enable.next = false;
        self.sram.write_enable.next = false;
        self.sram.write_address.next = (bit_cast::<SA, B>(self.c_wp.q.val().get_bits::<B>(0)) << 1)
            | bit_cast::<SA, SPAN_SLOT_BITS>(self.c_sel.q.val());
        // The write pointer's top bit (bit B, a full slot), written without
        // naming B (rust-hdl's HDL expressions take literals only).
        self.c_wp_full.next =
            bit_cast::<BP1, B>(self.c_wp.q.val().get_bits::<B>(0)) != self.c_wp.q.val();
        self.rp_n.next = self.rp.q.val().get_bits::<B>(0);

        // Realigner: append this beat's `keep` octets after the slot's
        // residue (`c_rc` octets in `c_res`); a full 8 octets go to `sram`.
        self.ksh.next = bit_cast::<7, 4>(self.dfifo.data_out.val().get_bits::<4>(64)) << 3;
        self.ones.next = 0xFFFF_FFFF_FFFF_FFFF_u64.into();
        // octets beyond `keep` cleared (a shift by 64 gives 0: keep = 8)
        self.dm.next =
            self.dfifo.data_out.val().get_bits::<64>(0) & !(self.ones.val() << self.ksh.val());
        self.rsh.next = bit_cast::<7, 3>(self.c_rc.q.val()) << 3;
        self.comb.next = bit_cast::<128, 64>(self.c_res.q.val())
            | (bit_cast::<128, 64>(self.dm.val()) << self.rsh.val());
        self.tot.next = bit_cast::<4, 3>(self.c_rc.q.val())
            + bit_cast::<4, 4>(self.dfifo.data_out.val().get_bits::<4>(64));
        self.sram.write_data.next = self.comb.val().get_bits::<64>(0);
        self.n_wp.next = self.c_wp.q.val();
        self.n_bad.next = self.c_bad.q.val();
        self.n_rc.next = self.tot.val().get_bits::<3>(0);
        self.n_res.next = self.comb.val().get_bits::<64>(0);
        self.n_slen.next =
            self.c_len.q.val() + bit_cast::<16, 4>(self.dfifo.data_out.val().get_bits::<4>(64));
        if self.tot.val().get_bit(3) {
            self.n_res.next = self.comb.val().get_bits::<64>(64);
            if self.c_wp_full.val() {
                // the slot is full: an FPDU longer than a slot
                self.n_bad.next = true;
            } else {
                self.n_wp.next = self.c_wp.q.val() + 1;
            }
        }
        self.meta.write_data.next = bit_cast::<META_W, BP1>(self.n_wp.val())
            | (bit_cast::<META_W, 16>(self.n_slen.val()) << 12)
            | (bit_cast::<META_W, 3>(self.n_rc.val()) << 28)
            | (bit_cast::<META_W, 1>(self.n_bad.val().into()) << 31)
            | (bit_cast::<META_W, 64>(self.n_res.val()) << 32);
        // Replay: whole beats from `sram`, then the residue beat.
        self.nb.next = self.c_wp.q.val();
        if self.c_rc.q.val() != 0 {
            self.nb.next = self.c_wp.q.val() + 1;
        }

        if self.rstate.q.val() == 0 {
            // S_IDLE
            if !self.rfifo.empty.val() {
                self.rstate.d.next = 1.into();
            }
        } else if self.rstate.q.val() == 1 {
            // S_LOAD: the record is stable; the QP lookup has its result.
            self.rcount.d.next = self.head.val().get_bits::<NP1>(29);
            self.c_end.d.next = self.head.val().get_bit(28);
            self.meta.read_address.next = self.hit_idx.val();
            if self.head.val().get_bits::<2>(24) == 0 {
                // a whole FPDU; a slot still open on its connection is stale
                if self.hit.val() {
                    self.s_clear.next = true;
                    self.s_clear_idx.next = self.hit_idx.val();
                    self.c_span.d.next = self.c_span.q.val() + 1;
                }
                self.rstate.d.next = 2.into();
            } else if self.head.val().get_bits::<2>(24) == 1 {
                // a piece of an FPDU that spans segments
                if self.head.val().get_bit(27) {
                    // first piece: a fresh slot (the stale one if open)
                    if self.hit.val() | self.free.val() {
                        self.c_sel.d.next = self.free_idx.val();
                        if self.hit.val() {
                            self.c_sel.d.next = self.hit_idx.val();
                            self.c_span.d.next = self.c_span.q.val() + 1;
                        }
                        self.c_wp.d.next = 0.into();
                        self.c_len.d.next = 0.into();
                        self.c_res.d.next = 0.into();
                        self.c_rc.d.next = 0.into();
                        self.c_bad.d.next = false;
                        self.rstate.d.next = 5.into();
                    } else if !self.mt_valid.q.val() {
                        // no free slot: drop, count, Terminate
                        self.mt_raise.next = true;
                        self.c_span.d.next = self.c_span.q.val() + 1;
                        self.rstate.d.next = 3.into();
                    }
                } else if self.hit.val() {
                    // a continuation: its slot's record next clock
                    self.c_sel.d.next = self.hit_idx.val();
                    self.rstate.d.next = 4.into();
                } else {
                    // a continuation whose first piece was refused
                    self.c_span.d.next = self.c_span.q.val() + 1;
                    self.rstate.d.next = 3.into();
                }
            } else if !self.mt_valid.q.val() {
                self.mt_raise.next = true;
                // CAUSE_MPA_MARKER / CAUSE_MPA_CRC
                if self.head.val().get_bit(26) {
                    self.mt_new_cause.next = 0x2003.into();
                } else {
                    self.mt_new_cause.next = 0x2002.into();
                }
                self.c_err.d.next = self.c_err.q.val() + 1;
                // nothing of the FPDU's earlier pieces is placed
                if self.hit.val() {
                    self.s_clear.next = true;
                    self.s_clear_idx.next = self.hit_idx.val();
                }
                self.rstate.d.next = 3.into();
            }
        } else if self.rstate.q.val() == 2 {
            // S_PASS
            self.out_valid.next = !self.dfifo.empty.val();
            self.take_out.next = !self.dfifo.empty.val() & self.out_ready.val();
        } else if self.rstate.q.val() == 3 {
            // S_DROP
            self.take_out.next = !self.dfifo.empty.val();
        } else if self.rstate.q.val() == 4 {
            // S_META: the slot's record from `meta`
            self.c_wp.d.next = self.meta.read_data.val().get_bits::<BP1>(0);
            self.c_len.d.next = self.meta.read_data.val().get_bits::<16>(12);
            self.c_rc.d.next = self.meta.read_data.val().get_bits::<3>(28);
            self.c_bad.d.next = self.meta.read_data.val().get_bit(31);
            self.c_res.d.next = self.meta.read_data.val().get_bits::<64>(32);
            self.rstate.d.next = 5.into();
        } else if self.rstate.q.val() == 5 {
            // S_STORE: the piece's beats into the slot
            if !self.dfifo.empty.val() {
                self.dfifo.read.next = true;
                self.rcount.d.next = self.rcount.q.val() - 1;
                self.sram.write_enable.next = self.tot.val().get_bit(3) & !self.c_wp_full.val();
                self.c_wp.d.next = self.n_wp.val();
                self.c_len.d.next = self.n_slen.val();
                self.c_res.d.next = self.n_res.val();
                self.c_rc.d.next = self.n_rc.val();
                self.c_bad.d.next = self.n_bad.val();
                if self.rcount.q.val() == 1 {
                    if self.c_end.q.val() {
                        self.rstate.d.next = 6.into();
                    } else {
                        self.meta.write_enable.next = true;
                        self.rfifo.read.next = true;
                        self.rstate.d.next = 0.into();
                    }
                }
            }
        } else if self.rstate.q.val() == 6 {
            // S_PRIME: the last piece is in; the first beat is read
            self.rp.d.next = 0.into();
            self.rp_n.next = 0.into();
            if self.c_bad.q.val() {
                // longer than a slot: drop, count, Terminate
                if !self.mt_valid.q.val() {
                    self.mt_raise.next = true;
                    self.c_span.d.next = self.c_span.q.val() + 1;
                    self.s_clear.next = true;
                    self.rfifo.read.next = true;
                    self.rstate.d.next = 0.into();
                }
            } else {
                self.rstate.d.next = 7.into();
            }
        } else {
            // S_REPLAY: the whole FPDU, `out_len` = its ULPDU octets
            self.out_len.next = self.c_len.q.val();
            self.out_valid.next = true;
            self.out_last.next = (self.rp.q.val() + 1) == self.nb.val();
            if self.rp.q.val() != self.c_wp.q.val() {
                self.out_data.next = self.sram.read_data.val();
                self.out_keep.next = 8.into();
            } else {
                self.out_data.next = self.c_res.q.val();
                self.out_keep.next = bit_cast::<4, 3>(self.c_rc.q.val());
            }
            if self.out_ready.val() {
                self.rp_n.next = self.rp.q.val().get_bits::<B>(0) + 1;
                self.rp.d.next = self.rp.q.val() + 1;
                if self.out_last.val() {
                    self.s_clear.next = true;
                    self.rfifo.read.next = true;
                    self.c_pass.d.next = self.c_pass.q.val() + 1;
                    self.rstate.d.next = 0.into();
                }
            }
        }
        self.sram.read_address.next = (bit_cast::<SA, B>(self.rp_n.val()) << 1)
            | bit_cast::<SA, SPAN_SLOT_BITS>(self.c_sel.q.val());
        // Slot allocation on a first piece; freeing.
        self.sc.next = self.s_conn.q.val();
        if (self.rstate.q.val() == 1)
            & (self.head.val().get_bits::<2>(24) == 1)
            & self.head.val().get_bit(27)
            & !self.hit.val()
            & self.free.val()
        {
            self.s_busy.d.next = self
                .s_busy
                .q
                .val()
                .replace_bit(self.free_idx.val().index(), true);
            for i in 0..SPAN_SLOTS {
                if self.free_idx.val().index() == i {
                    for j in 0..8 {
                        self.sc.next = self
                            .sc
                            .val()
                            .replace_bit(8 * i + j, self.head.val().get_bit(16 + j));
                    }
                }
            }
            self.s_conn.d.next = self.sc.val();
        }
        if self.s_clear.val() {
            self.s_busy.d.next = self
                .s_busy
                .q
                .val()
                .replace_bit(self.s_clear_idx.val().index(), false);
        }
        if self.mt_raise.val() {
            self.mt_valid.d.next = true;
            self.mt_conn.d.next = self.head.val().get_bits::<8>(16);
            self.mt_qpn.d.next = self.in_qpn.val();
            self.mt_cause.d.next = self.mt_new_cause.val();
        }
        if self.take_out.val() {
            self.dfifo.read.next = true;
            self.rcount.d.next = self.rcount.q.val() - 1;
            if self.rcount.q.val() == 1 {
                self.rfifo.read.next = true;
                self.rstate.d.next = 0.into();
                if self.rstate.q.val() == 2 {
                    self.c_pass.d.next = self.c_pass.q.val() + 1;
                }
            }
        }
        self.mterm_valid.next = self.mt_valid.q.val();
        self.mterm_cause.next = self.mt_cause.q.val();
        self.mterm_conn.next = self.mt_conn.q.val();
        self.mterm_qpn.next = self.mt_qpn.q.val();
        if self.mterm_pop.val() {
            self.mt_valid.d.next = false;
        }
        self.cnt_pass.next = self.c_pass.q.val();
        self.cnt_span.next = self.c_span.q.val();
        self.cnt_err.next = self.c_err.q.val();
        self.level_beats.next = bit_cast::<16, NP1>(self.dfifo.count.val());
        self.level_recs.next = self.rfifo.count.val();

        if self.reset.val() {
            self.mid.d.next = false;
            self.span_held.d.next = 0.into();
            self.span_cnt.d.next = 0.into();
            self.rstate.d.next = 0.into();
            self.mt_valid.d.next = false;
            self.c_pass.d.next = 0.into();
            self.c_span.d.next = 0.into();
            self.c_err.d.next = 0.into();
            self.s_busy.d.next = 0.into();
        }
    }
}

/// Documented names of the states and kinds above (rust-hdl cannot use
/// Rust constants inside `hdl_gen`); kept for the tests.
pub const STATES: [u64; 8] = [
    S_IDLE, S_LOAD, S_PASS, S_DROP, S_META, S_STORE, S_PRIME, S_REPLAY,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    struct Piece {
        data: Vec<u8>,
        start: bool,
        end: bool,
        crc_ok: bool,
        marker_bad: bool,
        conn: u8,
    }

    fn random_pieces(rng: &mut Rng, n: usize) -> Vec<Piece> {
        let mut pieces = Vec::new();
        for i in 0..n {
            let len = 1 + rng.below(if i % 7 == 0 { 600 } else { 60 });
            let k = rng.below(10);
            pieces.push(Piece {
                data: rng.bytes(len),
                start: k != 0,
                end: k != 1,
                crc_ok: k != 2,
                marker_bad: k == 3,
                conn: rng.below(8) as u8,
            });
        }
        pieces
    }

    /// Random pieces (pass, span, CRC and marker errors) with random input
    /// gaps and output stalls: exactly the pass pieces come out, whole and in
    /// order, with their length and connection; errors raise the Terminate
    /// cause of RFC 5044 §8 (checked against `rnic_wire::terminate`).
    #[test]
    fn passes_only_whole_good_fpdus() {
        use rnic_wire::terminate::{MpaError, TerminateCause};
        assert_eq!(
            TerminateCause::from(MpaError::CrcError).to_bits() as u64,
            CAUSE_MPA_CRC
        );
        assert_eq!(
            TerminateCause::from(MpaError::MarkerMismatch).to_bits() as u64,
            CAUSE_MPA_MARKER
        );
        assert_eq!(STATES.len(), 8);
        let _ = (KIND_PASS, KIND_SPAN, KIND_ERROR);
        let mut rng = Rng::new(11);
        let pieces = random_pieces(&mut rng, 40);
        run(FpduBuffer::new(), &pieces, &mut rng, 20000);
    }

    /// The same with the former size (512 beats): the size is a parameter.
    #[test]
    fn a_smaller_buffer_works_the_same() {
        let mut rng = Rng::new(12);
        let pieces = random_pieces(&mut rng, 30);
        run(
            FpduBufferN::<9, 10, 39, SPAN_BEAT_BITS, { SPAN_BEAT_BITS + 1 }, 12>::new(),
            &pieces,
            &mut rng,
            16000,
        );
    }

    /// The board profile's buffer (`profile::BOARD`: 512 beats, span slots
    /// of 256 beats = 2 KiB): random pieces pass as before; an FPDU longer
    /// than the board's slot is refused with the DDP Local Catastrophic
    /// Terminate (RFC 5041 §7.2) while one of a 1500-MTU segment's payload
    /// (1460 octets) reassembles.
    #[test]
    fn the_board_profile_buffer_refuses_only_what_it_cannot_hold() {
        use crate::profile::BOARD;
        type Board = FpduBufferN<
            { BOARD.fpdu_fifo_log2 },
            { BOARD.fpdu_fifo_log2 + 1 },
            { BOARD.fpdu_fifo_log2 + 1 + REC_FIXED },
            { BOARD.span_beat_log2 },
            { BOARD.span_beat_log2 + 1 },
            { SPAN_SLOT_BITS + BOARD.span_beat_log2 },
        >;
        let mut rng = Rng::new(23);
        let pieces = random_pieces(&mut rng, 30);
        run(Board::new(), &pieces, &mut rng, 16000);
        let piece = |rng: &mut Rng, c: u8, len: usize, start: bool, end: bool| Piece {
            data: rng.bytes(len),
            start,
            end,
            crc_ok: true,
            marker_bad: false,
            conn: c,
        };
        let slot = 8 << BOARD.span_beat_log2;
        // RFC 791 / RFC 9293 minimum headers: 20 octets each.
        let mss = BOARD.fw.max_mtu as usize - 20 - 20;
        assert!(mss <= slot, "a 1500-MTU FPDU fits a board span slot");
        let pieces = vec![
            piece(&mut rng, 1, 700, true, false),
            piece(&mut rng, 1, mss - 700, false, true),
            piece(&mut rng, 2, slot - 50, true, false),
            piece(&mut rng, 2, 120, false, true),
            piece(&mut rng, 3, 40, true, true),
        ];
        let (expect, terms) = reference(&pieces, BOARD.span_beat_log2);
        assert_eq!(expect.len(), 2);
        assert_eq!(terms, vec![(CAUSE_DDP_LOCAL_CATASTROPHIC, 2)]);
        let (_, span) = run(Board::new(), &pieces, &mut rng, 8000);
        assert_eq!(span, 1, "the too-long FPDU");
    }

    /// MTU 9000 (issue 3): FPDUs of a whole 9000-MTU segment's payload
    /// (8960 octets, 1120 beats) pass whole, between small ones, and a
    /// jumbo FPDU with a CRC error is dropped with a Terminate request.
    #[test]
    fn jumbo_fpdus_of_a_9000_mtu_segment_pass() {
        // RFC 791 / RFC 9293 minimum headers: 20 octets each.
        const MTU: usize = 9000;
        const JUMBO: usize = MTU - 20 - 20;
        let mut rng = Rng::new(13);
        let piece = |rng: &mut Rng, len: usize, crc_ok: bool| Piece {
            data: rng.bytes(len),
            start: true,
            end: true,
            crc_ok,
            marker_bad: false,
            conn: rng.below(8) as u8,
        };
        let pieces = vec![
            piece(&mut rng, JUMBO, true),
            piece(&mut rng, 100, true),
            piece(&mut rng, JUMBO, false),
            piece(&mut rng, JUMBO, true),
            piece(&mut rng, 7, true),
        ];
        let uut = FpduBuffer::new();
        assert!(JUMBO.div_ceil(8) <= 1 << FPDU_BUF_N, "a jumbo FPDU fits");
        run(uut, &pieces, &mut rng, 14000);
    }

    /// What the block must do with `pieces` (RFC 5044 §8, the span slots
    /// of the module doc): the whole good FPDUs in the order their last
    /// piece arrives, and the Terminate causes in order.
    #[allow(clippy::type_complexity)]
    fn reference(pieces: &[Piece], span_beat_bits: usize) -> (Vec<(Vec<u8>, u8)>, Vec<(u64, u8)>) {
        use std::collections::BTreeMap;
        let cap = 8 << span_beat_bits;
        let mut open: BTreeMap<u8, Vec<u8>> = BTreeMap::new();
        let mut expect = Vec::new();
        let mut terms = Vec::new();
        for p in pieces {
            if p.end && (!p.crc_ok || p.marker_bad) {
                let cause = if p.marker_bad {
                    CAUSE_MPA_MARKER
                } else {
                    CAUSE_MPA_CRC
                };
                terms.push((cause, p.conn));
                open.remove(&p.conn);
            } else if p.start && p.end {
                open.remove(&p.conn);
                expect.push((p.data.clone(), p.conn));
            } else if p.start {
                if open.contains_key(&p.conn) || open.len() < SPAN_SLOTS {
                    open.insert(p.conn, p.data.clone());
                } else {
                    terms.push((CAUSE_DDP_LOCAL_CATASTROPHIC, p.conn));
                }
            } else if let Some(mut whole) = open.remove(&p.conn) {
                whole.extend_from_slice(&p.data);
                if !p.end {
                    open.insert(p.conn, whole);
                } else if whole.len() / 8 > cap / 8 {
                    terms.push((CAUSE_DDP_LOCAL_CATASTROPHIC, p.conn));
                } else {
                    expect.push((whole, p.conn));
                }
            }
        }
        (expect, terms)
    }

    /// FPDUs cut into pieces at random octet positions (empty pieces
    /// included: a segment that carries only an FPDU's CRC), the pieces of
    /// two splitting connections interleaved with whole FPDUs of others,
    /// some with a CRC error on the last piece.
    fn split_stream(rng: &mut Rng, n: usize, split_conns: &[u8], max_len: usize) -> Vec<Piece> {
        let mut queues: Vec<Vec<Piece>> = Vec::new();
        for &c in split_conns {
            let mut q = Vec::new();
            for _ in 0..n {
                let len = 14 + rng.below(max_len);
                let ulpdu = rng.bytes(len);
                let crc_ok = rng.below(8) != 0;
                let mut cuts: Vec<usize> =
                    (0..1 + rng.below(3)).map(|_| rng.below(len + 1)).collect();
                cuts.sort();
                let mut at = 0;
                let np = cuts.len() + 1;
                for (i, &cut) in cuts.iter().chain([len].iter()).enumerate() {
                    q.push(Piece {
                        data: ulpdu[at..cut].to_vec(),
                        start: i == 0,
                        end: i + 1 == np,
                        crc_ok: i + 1 < np || crc_ok,
                        marker_bad: false,
                        conn: c,
                    });
                    at = cut;
                }
            }
            q.reverse();
            queues.push(q);
        }
        let mut out = Vec::new();
        while queues.iter().any(|q| !q.is_empty()) {
            let k = rng.below(queues.len() + 1);
            if k == queues.len() {
                let len = 14 + rng.below(80);
                out.push(Piece {
                    data: rng.bytes(len),
                    start: true,
                    end: true,
                    crc_ok: true,
                    marker_bad: false,
                    conn: 8 + rng.below(4) as u8,
                });
            } else if let Some(p) = queues[k].pop() {
                out.push(p);
            }
        }
        out
    }

    /// Issue 3: FPDUs that span segments, cut at random octets, two
    /// connections at once (the default slot count) interleaved with
    /// other connections' whole FPDUs: each comes out whole, in order,
    /// `out_len` the whole ULPDU; a CRC error on the last piece places
    /// nothing and raises the MPA CRC Terminate.
    #[test]
    fn reassembles_fpdus_split_across_segments() {
        let mut rng = Rng::new(21);
        let pieces = split_stream(&mut rng, 8, &[3, 5], 300);
        let (expect, terms) = reference(&pieces, SPAN_BEAT_BITS);
        assert!(expect.len() > 12 && !terms.is_empty());
        assert!(pieces.iter().any(|p| p.data.is_empty()));
        let uut = FpduBuffer::new();
        let (_, span) = run(uut, &pieces, &mut rng, 30000);
        assert_eq!(span, 0, "nothing refused with two slots");
    }

    /// Three connections splitting at once with two slots: the third's
    /// first piece is refused with the DDP Local Catastrophic Terminate
    /// and its continuation dropped (counted); the other two still pass.
    /// An FPDU longer than a slot (16 KiB) is refused the same way at its
    /// end.
    #[test]
    fn refuses_when_slots_are_busy_or_fpdu_too_long() {
        let mut rng = Rng::new(22);
        let piece = |rng: &mut Rng, c: u8, len: usize, start: bool, end: bool| Piece {
            data: rng.bytes(len),
            start,
            end,
            crc_ok: true,
            marker_bad: false,
            conn: c,
        };
        let big = 8 << SPAN_BEAT_BITS;
        let pieces = vec![
            piece(&mut rng, 1, 30, true, false),
            piece(&mut rng, 2, 31, true, false),
            piece(&mut rng, 3, 32, true, false),
            piece(&mut rng, 9, 40, true, true),
            piece(&mut rng, 3, 33, false, true),
            piece(&mut rng, 2, 34, false, true),
            piece(&mut rng, 1, 35, false, true),
            piece(&mut rng, 4, big - 100, true, false),
            piece(&mut rng, 4, 120, false, true),
            piece(&mut rng, 6, big - 100, true, false),
            piece(&mut rng, 6, 107, false, true),
            piece(&mut rng, 9, 20, true, true),
        ];
        let (expect, terms) = reference(&pieces, SPAN_BEAT_BITS);
        assert_eq!(expect.len(), 5);
        assert_eq!(
            terms,
            vec![
                (CAUSE_DDP_LOCAL_CATASTROPHIC, 3),
                (CAUSE_DDP_LOCAL_CATASTROPHIC, 4)
            ]
        );
        let (_, span) = run(FpduBuffer::new(), &pieces, &mut rng, 40000);
        assert_eq!(span, 3, "refused first, its continuation, too long");
    }

    /// Admission (module doc): eight connections, each a stream of FPDUs
    /// cut into segments at random octets, fed one segment at a time as the
    /// segment sequencer does; a segment is only written when `adm_ok` says
    /// so for its connection, and a refused one is tried again later (TCP's
    /// retransmission). With two slots many segments are refused, yet no
    /// piece ever finds no slot (`cnt_span` 0, no Terminate), the count
    /// never exceeds the slots, and every FPDU comes out whole and in
    /// order. Without the check (`obey = false`) the same input makes the
    /// block refuse pieces.
    #[test]
    fn admitted_segments_always_find_a_span_slot() {
        let (span, refused) = admission_run(31, true);
        assert_eq!(span, 0, "no piece refused");
        assert!(
            refused > 20,
            "the admission check refused {refused} segments"
        );
        let (span, _) = admission_run(31, false);
        assert!(span > 0, "without admission pieces are refused");
    }

    /// One run of [`admitted_segments_always_find_a_span_slot`]: returns
    /// (`cnt_span`, segments refused by `adm_ok`).
    fn admission_run(seed: u64, obey: bool) -> (usize, usize) {
        use std::collections::VecDeque;
        let mut rng = Rng::new(seed);
        let mut uut = FpduBuffer::new();
        connect_inputs(&mut uut);
        // Per connection: its FPDUs, and its segments as lists of pieces
        // (start, end, octets).
        const CONNS: usize = 8;
        let mut fpdus: Vec<VecDeque<Vec<u8>>> = Vec::new();
        let mut segs: Vec<VecDeque<Vec<Piece>>> = Vec::new();
        for c in 0..CONNS {
            let f: Vec<Vec<u8>> = (0..10)
                .map(|_| {
                    let n = 14 + rng.below(300);
                    rng.bytes(n)
                })
                .collect();
            let mut q = VecDeque::new();
            let (mut fi, mut at) = (0, 0);
            while fi < f.len() {
                let mut left = 1 + rng.below(400);
                let mut seg = Vec::new();
                while left > 0 && fi < f.len() {
                    let n = left.min(f[fi].len() - at);
                    seg.push(Piece {
                        data: f[fi][at..at + n].to_vec(),
                        start: at == 0,
                        end: at + n == f[fi].len(),
                        crc_ok: true,
                        marker_bad: false,
                        conn: c as u8,
                    });
                    at += n;
                    left -= n;
                    if at == f[fi].len() {
                        fi += 1;
                        at = 0;
                    }
                }
                q.push_back(seg);
            }
            fpdus.push(f.into_iter().collect());
            segs.push(q);
        }
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        uut.in_qpn.next = 0x77.into();
        // The segment being written: its beats (data, keep, last, piece).
        let mut cur: VecDeque<(u64, u64, bool, usize)> = VecDeque::new();
        let mut cur_seg: Vec<Piece> = Vec::new();
        let mut cand: Option<usize> = None;
        let mut refused = 0;
        let mut out = Vec::new();
        let mut terms = 0;
        for _ in 0..200_000 {
            if cur.is_empty()
                && segs.iter().all(|q| q.is_empty())
                && fpdus.iter().all(|f| f.is_empty())
            {
                break;
            }
            uut.in_valid.next = false;
            if cur.is_empty() {
                // `adm_conn` was set to `cand` a clock ago.
                if let Some(c) = cand.take() {
                    if !obey || uut.adm_ok.val() {
                        cur_seg = segs[c].pop_front().unwrap();
                        for (pi, p) in cur_seg.iter().enumerate() {
                            let bs = crate::common::testutil::beats(&p.data);
                            if bs.is_empty() {
                                cur.push_back((0, 0, true, pi));
                            }
                            for (j, (d, k)) in bs.iter().enumerate() {
                                cur.push_back((*d, *k as u64, j + 1 == bs.len(), pi));
                            }
                        }
                    } else {
                        refused += 1;
                    }
                } else {
                    let live: Vec<usize> = (0..CONNS).filter(|&c| !segs[c].is_empty()).collect();
                    if !live.is_empty() {
                        let c = live[rng.below(live.len())];
                        cand = Some(c);
                        uut.adm_conn.next = (c as u64).into();
                    }
                }
            }
            let send = !cur.is_empty() && rng.below(4) != 0;
            if let Some(&(d, k, l, pi)) = cur.front() {
                drive_beat(&mut uut, (d, k, l), &cur_seg[pi]);
                uut.in_valid.next = send;
            }
            let ready = rng.below(3) != 0;
            uut.out_ready.next = ready;
            uut.mterm_pop.next = uut.mterm_valid.val();
            if uut.mterm_valid.val() {
                terms += 1;
            }
            if send && uut.in_ready.val() {
                cur.pop_front();
            }
            assert!(
                !obey || uut.span_used.val().to_u64() as usize <= SPAN_SLOTS,
                "more slots held than exist"
            );
            if uut.out_valid.val() && ready {
                let k = uut.out_keep.val().to_u64() as usize;
                let d = uut.out_data.val().to_u64().to_le_bytes();
                out.extend_from_slice(&d[..k]);
                if uut.out_last.val() {
                    let c = uut.out_conn.val().to_u64() as usize;
                    let want = fpdus[c].pop_front().expect("an FPDU expected");
                    assert_eq!(
                        std::mem::take(&mut out),
                        want,
                        "conn {c}: FPDU in order, whole"
                    );
                }
            }
            tick!(uut);
            if !obey && uut.cnt_span.val().to_u64() > 0 {
                return (uut.cnt_span.val().to_u64() as usize, refused);
            }
        }
        assert!(fpdus.iter().all(|f| f.is_empty()), "every FPDU out");
        assert_eq!(terms, 0, "no Terminate");
        (uut.cnt_span.val().to_u64() as usize, refused)
    }

    /// Drives one input beat `(data, keep, last)` of piece `p`: the piece's
    /// flags, and its verdict on the last beat.
    fn drive_beat<
        const N: usize,
        const NP1: usize,
        const RW: usize,
        const B: usize,
        const BP1: usize,
        const SA: usize,
    >(
        uut: &mut FpduBufferN<N, NP1, RW, B, BP1, SA>,
        (d, k, l): (u64, u64, bool),
        p: &Piece,
    ) {
        uut.in_data.next = d.into();
        uut.in_keep.next = k.into();
        uut.in_last.next = l;
        uut.in_ulpdu_start.next = p.start;
        uut.in_fpdu_end.next = l && p.end;
        uut.in_crc_ok.next = l && p.crc_ok && !p.marker_bad;
        uut.in_marker_bad.next = l && p.marker_bad;
        uut.in_length_bad.next = false;
        uut.in_conn.next = (p.conn as u64).into();
    }

    /// Marks every input of `uut` as driven by the test.
    fn connect_inputs<
        const N: usize,
        const NP1: usize,
        const RW: usize,
        const B: usize,
        const BP1: usize,
        const SA: usize,
    >(
        uut: &mut FpduBufferN<N, NP1, RW, B, BP1, SA>,
    ) {
        uut.clock.connect();
        uut.reset.connect();
        uut.in_data.connect();
        uut.in_keep.connect();
        uut.in_last.connect();
        uut.in_valid.connect();
        uut.in_ulpdu_start.connect();
        uut.in_fpdu_end.connect();
        uut.in_crc_ok.connect();
        uut.in_marker_bad.connect();
        uut.in_length_bad.connect();
        uut.in_conn.connect();
        uut.in_qpn.connect();
        uut.out_ready.connect();
        uut.mterm_pop.connect();
        uut.adm_conn.connect();
        uut.connect_all();
    }

    /// Feeds `pieces` through `uut` with random input gaps and output stalls
    /// for `cycles` clocks and checks the output against the pieces.
    #[allow(clippy::type_complexity)]
    fn run<
        const N: usize,
        const NP1: usize,
        const RW: usize,
        const B: usize,
        const BP1: usize,
        const SA: usize,
    >(
        mut uut: FpduBufferN<N, NP1, RW, B, BP1, SA>,
        pieces: &[Piece],
        rng: &mut Rng,
        cycles: usize,
    ) -> (usize, usize) {
        connect_inputs(&mut uut);
        let (expect, terms) = reference(pieces, B);
        let mut beats: Vec<(u64, u64, bool, usize)> = Vec::new();
        for (pi, p) in pieces.iter().enumerate() {
            let bs = crate::common::testutil::beats(&p.data);
            for (j, (d, k)) in bs.iter().enumerate() {
                beats.push((*d, *k as u64, j + 1 == bs.len(), pi));
            }
        }
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut bi = 0;
        let mut got: Vec<(Vec<u8>, u8)> = Vec::new();
        let mut cur = Vec::new();
        let mut got_terms = Vec::new();
        for _ in 0..cycles {
            if bi == beats.len() && got.len() == expect.len() && got_terms.len() == terms.len() {
                break;
            }
            let send = bi < beats.len() && rng.below(4) != 0;
            if send {
                let (d, k, l, pi) = beats[bi];
                drive_beat(&mut uut, (d, k, l), &pieces[pi]);
            }
            uut.in_valid.next = send;
            uut.in_qpn.next = 0x77.into();
            let ready = rng.below(3) != 0;
            uut.out_ready.next = ready;
            let pop = uut.mterm_valid.val() && rng.below(5) == 0;
            uut.mterm_pop.next = pop;
            if pop {
                assert_eq!(uut.mterm_qpn.val().to_u64(), 0x77);
                got_terms.push((
                    uut.mterm_cause.val().to_u64(),
                    uut.mterm_conn.val().to_u64() as u8,
                ));
            }
            if send && uut.in_ready.val() {
                bi += 1;
            }
            if uut.out_valid.val() && ready {
                let k = uut.out_keep.val().to_u64() as usize;
                let d = uut.out_data.val().to_u64().to_le_bytes();
                cur.extend_from_slice(&d[..k]);
                if uut.out_last.val() {
                    assert_eq!(uut.out_len.val().to_u64() as usize, cur.len());
                    got.push((std::mem::take(&mut cur), uut.out_conn.val().to_u64() as u8));
                }
            }
            tick!(uut);
        }
        assert_eq!(bi, beats.len(), "all input taken");
        let brief = |v: &[(Vec<u8>, u8)]| -> Vec<(usize, u8, u32)> {
            v.iter()
                .map(|(d, c)| (d.len(), *c, crc32c::crc32c(d)))
                .collect()
        };
        assert_eq!(brief(&got), brief(&expect), "(octets, conn, crc32c)");
        assert_eq!(got_terms, terms);
        assert_eq!(uut.cnt_pass.val().to_u64() as usize, expect.len());
        let mpa_terms = terms
            .iter()
            .filter(|t| t.0 != CAUSE_DDP_LOCAL_CATASTROPHIC)
            .count();
        assert_eq!(uut.cnt_err.val().to_u64() as usize, mpa_terms);
        (
            uut.cnt_pass.val().to_u64() as usize,
            uut.cnt_span.val().to_u64() as usize,
        )
    }
}
