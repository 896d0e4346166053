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
//! * **span** (an FPDU that spans TCP segments, `ulpdu_start = 0` or
//!   `fpdu_end = 0`): its beats are discarded and counted in `cnt_span`.
//!   RFC 5044 §8 forbids placing octets of an FPDU before its CRC is
//!   checked, and the whole FPDU is never in one place here; the peers we
//!   talk to send one FPDU per segment (RFC 5044 §5 recommendation, our TX,
//!   Linux siw). Handing such FPDUs to the firmware is not built;
//! * **error** (`fpdu_end` with `crc_ok = 0`: CRC mismatch, bad marker or
//!   impossible ULPDU_LENGTH): the beats are discarded and a Terminate
//!   request is raised on `mterm_*` (held until `mterm_pop`) with the LLP
//!   cause of RFC 5044 §8 / RFC 6580 §3.3 (layer 2, error type 0): code 2
//!   for a CRC error, code 3 ("MPA Marker and ULPDU Length field disagree")
//!   for a bad marker or length. While a Terminate is pending, the next
//!   error record waits (so none is lost; `mpa_rx` stops a connection at its
//!   first error, RFC 5044 §8).
//!
//! A piece must fit the data FIFO: the pieces are at most one TCP payload,
//! and `rx_fifo` limits the frame size. The default holds the payload of a
//! 9000-octet-MTU segment (9000 - 20 IPv4 - 20 TCP = 8960 octets, 1120
//! beats; with TCP options fewer) with room for 928 more beats, so a jumbo
//! FPDU passes while smaller ones keep arriving. `N` is a parameter
//! ([`FpduBufferN`]); the data FIFO is a `RAM` with a registered read, the
//! same inference pattern as before (on ECP5: 2048 x 68 bits = 8 DP16KD
//! blocks in 2048 x 9 mode).

use crate::fifo::Fifo;
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

const S_IDLE: u64 = 0;
const S_LOAD: u64 = 1;
const S_PASS: u64 = 2;
const S_DROP: u64 = 3;

/// Default data FIFO address bits: 2^11 = 2048 beats (16 KiB), enough for
/// the FPDU of a 9000-MTU segment (8960 octets of TCP payload).
pub const FPDU_BUF_N: usize = 11;
/// Record bits besides the beat count: octets 16, connection 8, kind 2,
/// marker/length cause 1.
pub const REC_FIXED: usize = 27;

/// `fpdu_buffer` with the default size (see [`FPDU_BUF_N`]).
pub type FpduBuffer = FpduBufferN<FPDU_BUF_N, { FPDU_BUF_N + 1 }, { FPDU_BUF_N + 1 + REC_FIXED }>;

/// `fpdu_buffer` with a data FIFO of `2^N` beats; `NP1 = N + 1` (the beat
/// count width), `RW = NP1 + REC_FIXED` (the record width). rust-hdl needs
/// the derived widths spelled out (as for [`Fifo`]); [`FpduBufferN::new`]
/// checks them.
#[derive(LogicBlock, Default)]
pub struct FpduBufferN<const N: usize, const NP1: usize, const RW: usize> {
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
    dfifo: Fifo<Bits<68>, N, NP1>,
    rfifo: Fifo<Bits<RW>, 4, 5>,
    // write side
    mid: DFF<Bit>,
    sflag: DFF<Bit>,
    wbeats: DFF<Bits<NP1>>,
    wlen: DFF<Bits<16>>,
    take_in: Signal<Local, Bit>,
    n_beats: Signal<Local, Bits<NP1>>,
    n_len: Signal<Local, Bits<16>>,
    n_start: Signal<Local, Bit>,
    kind: Signal<Local, Bits<2>>,
    // read side
    rstate: DFF<Bits<2>>,
    rcount: DFF<Bits<NP1>>,
    head: Signal<Local, Bits<RW>>,
    take_out: Signal<Local, Bit>,
    mt_valid: DFF<Bit>,
    mt_cause: DFF<Bits<16>>,
    mt_conn: DFF<Bits<8>>,
    mt_qpn: DFF<Bits<32>>,
    c_pass: DFF<Bits<32>>,
    c_span: DFF<Bits<32>>,
    c_err: DFF<Bits<32>>,
}

impl<const N: usize, const NP1: usize, const RW: usize> FpduBufferN<N, NP1, RW> {
    /// A buffer of `2^N` beats; panics if `NP1`/`RW` are not `N + 1` and
    /// `N + 1 + REC_FIXED`.
    pub fn new() -> Self {
        assert_eq!(NP1, N + 1, "NP1 = N + 1");
        assert_eq!(RW, NP1 + REC_FIXED, "RW = N + 1 + REC_FIXED");
        Self::default()
    }
}

impl<const N: usize, const NP1: usize, const RW: usize> Logic for FpduBufferN<N, NP1, RW> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, dfifo, rfifo);
        dff_setup!(
            self, clock, mid, sflag, wbeats, wlen, rstate, rcount, mt_valid, mt_cause, mt_conn,
            mt_qpn, c_pass, c_span, c_err
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
        // cause 26, beats from 27 (the one field whose width is `NP1`).
        self.rfifo.data_in.next = bit_cast::<RW, 16>(self.n_len.val())
            | (bit_cast::<RW, 8>(self.in_conn.val()) << 16)
            | (bit_cast::<RW, 2>(self.kind.val()) << 24)
            | (bit_cast::<RW, 1>((self.in_marker_bad.val() | self.in_length_bad.val()).into())
                << 26)
            | (bit_cast::<RW, NP1>(self.n_beats.val()) << 27);
        self.rfifo.write.next = self.take_in.val() & self.in_last.val();
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
        if self.rstate.q.val() == 0 {
            // S_IDLE
            if !self.rfifo.empty.val() {
                self.rstate.d.next = 1.into();
            }
        } else if self.rstate.q.val() == 1 {
            // S_LOAD: the record is stable; the QP lookup has its result.
            self.rcount.d.next = self.head.val().get_bits::<NP1>(27);
            if self.head.val().get_bits::<2>(24) == 0 {
                self.rstate.d.next = 2.into();
            } else if self.head.val().get_bits::<2>(24) == 1 {
                self.c_span.d.next = self.c_span.q.val() + 1;
                self.rstate.d.next = 3.into();
            } else if !self.mt_valid.q.val() {
                self.mt_valid.d.next = true;
                self.mt_conn.d.next = self.head.val().get_bits::<8>(16);
                self.mt_qpn.d.next = self.in_qpn.val();
                // CAUSE_MPA_MARKER / CAUSE_MPA_CRC
                if self.head.val().get_bit(26) {
                    self.mt_cause.d.next = 0x2003.into();
                } else {
                    self.mt_cause.d.next = 0x2002.into();
                }
                self.c_err.d.next = self.c_err.q.val() + 1;
                self.rstate.d.next = 3.into();
            }
        } else if self.rstate.q.val() == 2 {
            // S_PASS
            self.out_valid.next = !self.dfifo.empty.val();
            self.take_out.next = !self.dfifo.empty.val() & self.out_ready.val();
        } else {
            // S_DROP
            self.take_out.next = !self.dfifo.empty.val();
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
            self.rstate.d.next = 0.into();
            self.mt_valid.d.next = false;
            self.c_pass.d.next = 0.into();
            self.c_span.d.next = 0.into();
            self.c_err.d.next = 0.into();
        }
    }
}

/// Documented names of the states and kinds above (rust-hdl cannot use
/// Rust constants inside `hdl_gen`); kept for the tests.
pub const STATES: [u64; 4] = [S_IDLE, S_LOAD, S_PASS, S_DROP];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tick, Rng};

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
        assert_eq!(STATES.len(), 4);
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
        run(FpduBufferN::<9, 10, 37>::new(), &pieces, &mut rng, 16000);
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

    /// Feeds `pieces` through `uut` with random input gaps and output stalls
    /// for `cycles` clocks and checks the output against the pieces.
    fn run<const N: usize, const NP1: usize, const RW: usize>(
        mut uut: FpduBufferN<N, NP1, RW>,
        pieces: &[Piece],
        rng: &mut Rng,
        cycles: usize,
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
        uut.connect_all();
        let mut expect: Vec<(Vec<u8>, u8)> = Vec::new();
        let mut terms = Vec::new();
        for p in pieces {
            let good = p.start && p.end && p.crc_ok && !p.marker_bad;
            if good {
                expect.push((p.data.clone(), p.conn));
            } else if p.end && (!p.crc_ok || p.marker_bad) {
                terms.push((
                    if p.marker_bad {
                        CAUSE_MPA_MARKER
                    } else {
                        CAUSE_MPA_CRC
                    },
                    p.conn,
                ));
            }
        }
        let mut beats: Vec<(u64, u64, bool, usize)> = Vec::new();
        for (pi, p) in pieces.iter().enumerate() {
            let bs = crate::testutil::beats(&p.data);
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
                let p = &pieces[pi];
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
        assert_eq!(got.len(), expect.len());
        assert_eq!(got, expect);
        assert_eq!(got_terms, terms);
        assert_eq!(uut.cnt_pass.val().to_u64() as usize, expect.len());
        assert_eq!(uut.cnt_err.val().to_u64() as usize, terms.len());
    }
}
