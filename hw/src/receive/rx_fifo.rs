//! MAC RX FIFO: store-and-forward, frames with a bad FCS dropped whole.
//!
//! # Scheme: drop on last, with a frame-length FIFO
//! Beats of an accepted frame are written to a data FIFO (2048 x {data, keep})
//! as they arrive. On the `last` beat a frame record {beats written, good} is
//! pushed to a frame FIFO (64 entries). The read side only starts a frame when
//! its record is present (so output is store-and-forward: a whole frame is
//! buffered before its first beat leaves, and a bad FCS can never be seen
//! downstream), forwards `beats` beats of a good frame with `last` on the
//! final one, and pops and discards the beats of a bad one at one beat per
//! clock without presenting them.
//!
//! The MAC cannot be stalled. A frame is accepted if, at its first beat, the
//! frame FIFO is not full and the data FIFO has room for that beat; otherwise
//! the whole frame is ignored and counted in `cnt_overflow`. If the data FIFO
//! fills in the middle of an accepted frame, the rest of its beats are
//! lost: the frame is marked bad (its beats already written are discarded by
//! the read side) and also counted in `cnt_overflow`. (Reserving a whole
//! maximum frame up front would need a 4096-deep FIFO for back-to-back
//! jumbo frames; losing mid-frame needs only 2048.) Frames longer
//! than `max_frame` octets (the constructor's parameter; default
//! [`DEFAULT_MAX_FRAME`], 9018) are truncated in the FIFO at
//! `ceil(max_frame / 8)` beats, marked bad, and counted in `cnt_oversize`.
//! Precedence: overflow, then oversize, then a bad FCS. Frames delivered are
//! counted in `cnt_ok`. Every frame is counted by exactly one counter.
//! Counters are 32 bits and wrap.
//!
//! Each frame record also carries a 4-bit `in_tag`, sampled with the `last`
//! beat and presented as `out_tag` with every beat of that frame (the verdict
//! of `rx_check`, which runs on the MAC side; see rx_check.rs).
//!
//! Stream convention (docs/rtl.md): `keep` is the number of valid bytes of a
//! `last` beat (8 on the others); the MAC's `in_fcs_bad` is looked at on the
//! `last` beat only. `out_*` is a normal valid/ready stream.
//!
//! # Output register (timing)
//! `out_*` comes from a two-entry register slice (a main register `a` and a
//! skid register `b`), not from the data FIFO's RAM: on ECP5 the block RAM's
//! clock-to-output is slow enough that RAM output → `rx_parse` logic missed
//! 125 MHz. The slice accepts a beat whenever `b` is empty, so it sustains
//! one beat per clock with `out_ready` high, and `out_ready` does not reach
//! the RAM read address combinationally. Cost: one clock of latency (a
//! frame's first beat is on `out_*` one clock later than the RAM's output).

use crate::common::fifo::Fifo;
use rust_hdl::prelude::*;

/// Jumbo frames (issue 3): MTU 9000 + 14 octets of Ethernet header + 4 of
/// allowance (a VLAN tag; the MAC has already removed the FCS).
pub const DEFAULT_MAX_FRAME: u64 = 9018;
/// Data FIFO depth in beats (2^11): a maximum frame (at most 2047 beats)
/// always fits, and a second frame can arrive while the first drains.
pub const DATA_DEPTH: u64 = 2048;

/// A receive FIFO of `2^N` data beats (`NP1 = N + 1`) whose [`Default`]
/// accepts frames up to `crate::profile::PROFILES[PR].max_frame` octets.
#[derive(LogicBlock)]
pub struct RxFifoN<const N: usize, const NP1: usize, const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_fcs_bad: Signal<In, Bit>,
    /// Frame tag, sampled on the `last` beat.
    pub in_tag: Signal<In, Bits<4>>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// The frame's `in_tag`, valid with `out_valid`.
    pub out_tag: Signal<Out, Bits<4>>,
    pub cnt_ok: Signal<Out, Bits<32>>,
    pub cnt_bad_fcs: Signal<Out, Bits<32>>,
    pub cnt_overflow: Signal<Out, Bits<32>>,
    pub cnt_oversize: Signal<Out, Bits<32>>,
    /// The most beats the data FIFO held at once since reset: how close
    /// the receive path came to dropping a frame (sizes the window).
    pub hwm: Signal<Out, Bits<NP1>>,
    /// `ceil(max_frame / 8)`: beats kept of a frame ...
    max_beats: Constant<Bits<11>>,
    /// ... `max_beats - 1` ...
    max_beats_m1: Constant<Bits<11>>,
    /// ... and the most octets the last of `max_beats` beats may hold.
    max_last_keep: Constant<Bits<4>>,
    /// Bit 11 of a frame record: the frame is good (bits 10:0: beats written;
    /// bits 15:12: the tag).
    good_flag: Constant<Bits<16>>,
    dfifo: Fifo<Bits<68>, N, NP1>,
    /// Frame records, 64 x 16 in block RAM (1 DP16KD instead of 16
    /// TRELLIS_DPR16X4).
    lfifo: Fifo<Bits<16>, 6, 7, true>,
    // write side
    mid: DFF<Bit>,
    accepting: DFF<Bit>,
    wbeats: DFF<Bits<11>>,
    oversize: DFF<Bit>,
    /// A beat of the current frame was lost to a full data FIFO.
    lost: DFF<Bit>,
    acc: Signal<Local, Bit>,
    wb: Signal<Local, Bits<11>>,
    want: Signal<Local, Bit>,
    wrote: Signal<Local, Bit>,
    ov: Signal<Local, Bit>,
    lo: Signal<Local, Bit>,
    nbeats: Signal<Local, Bits<11>>,
    rec: Signal<Local, Bits<16>>,
    // read side
    rcount: DFF<Bits<11>>,
    have: Signal<Local, Bit>,
    head_good: Signal<Local, Bit>,
    is_last: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    /// A good beat moves from the FIFO into the output slice.
    push: Signal<Local, Bit>,
    // output slice: main register `a` (drives out_*) and skid register `b`
    a_v: DFF<Bit>,
    a_data: DFF<Bits<64>>,
    a_keep: DFF<Bits<4>>,
    a_last: DFF<Bit>,
    a_tag: DFF<Bits<4>>,
    b_v: DFF<Bit>,
    b_data: DFF<Bits<64>>,
    b_keep: DFF<Bits<4>>,
    b_last: DFF<Bit>,
    b_tag: DFF<Bits<4>>,
    // counters
    c_ok: DFF<Bits<32>>,
    c_bad: DFF<Bits<32>>,
    c_overflow: DFF<Bits<32>>,
    c_oversize: DFF<Bits<32>>,
    c_hwm: DFF<Bits<NP1>>,
}

/// The co-simulation core's FIFO (2048 beats, jumbo frames).
pub type RxFifo = RxFifoN<11, 12, { crate::profile::PR_SIM }>;

impl<const N: usize, const NP1: usize, const PR: usize> RxFifoN<N, NP1, PR> {
    /// `max_frame`: longest accepted frame in octets (as the MAC delivers it,
    /// without FCS), at most 8 * 2047.
    pub fn new(max_frame: u64) -> Self {
        let max_beats = max_frame.div_ceil(8);
        assert!((1..2048).contains(&max_beats) && max_beats <= 1 << N && NP1 == N + 1);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            in_data: Default::default(),
            in_keep: Default::default(),
            in_last: Default::default(),
            in_valid: Default::default(),
            in_fcs_bad: Default::default(),
            in_tag: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_tag: Default::default(),
            cnt_ok: Default::default(),
            cnt_bad_fcs: Default::default(),
            cnt_overflow: Default::default(),
            cnt_oversize: Default::default(),
            max_beats: Constant::new(max_beats.into()),
            max_beats_m1: Constant::new((max_beats - 1).into()),
            max_last_keep: Constant::new((max_frame - 8 * (max_beats - 1)).into()),
            good_flag: Constant::new(0x800.into()),
            dfifo: Default::default(),
            lfifo: Default::default(),
            mid: Default::default(),
            accepting: Default::default(),
            wbeats: Default::default(),
            oversize: Default::default(),
            lost: Default::default(),
            acc: Default::default(),
            wb: Default::default(),
            want: Default::default(),
            wrote: Default::default(),
            ov: Default::default(),
            lo: Default::default(),
            nbeats: Default::default(),
            rec: Default::default(),
            rcount: Default::default(),
            have: Default::default(),
            head_good: Default::default(),
            is_last: Default::default(),
            take: Default::default(),
            push: Default::default(),
            a_v: Default::default(),
            a_data: Default::default(),
            a_keep: Default::default(),
            a_last: Default::default(),
            a_tag: Default::default(),
            b_v: Default::default(),
            b_data: Default::default(),
            b_keep: Default::default(),
            b_last: Default::default(),
            b_tag: Default::default(),
            c_ok: Default::default(),
            c_bad: Default::default(),
            c_overflow: Default::default(),
            c_oversize: Default::default(),
            c_hwm: Default::default(),
            hwm: Default::default(),
        }
    }
}

impl<const N: usize, const NP1: usize, const PR: usize> Default for RxFifoN<N, NP1, PR> {
    fn default() -> Self {
        Self::new(crate::profile::PROFILES[PR].max_frame)
    }
}

impl<const N: usize, const NP1: usize, const PR: usize> Logic for RxFifoN<N, NP1, PR> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, dfifo, lfifo);
        dff_setup!(
            self, clock, mid, accepting, wbeats, oversize, lost, rcount, c_ok, c_bad, c_overflow,
            c_oversize, c_hwm, a_v, a_data, a_keep, a_last, a_tag, b_v, b_data, b_keep, b_last,
            b_tag
        );
        self.dfifo.reset.next = self.reset.val();
        self.lfifo.reset.next = self.reset.val();

        // ---- write side
        if self.mid.q.val() {
            self.acc.next = self.accepting.q.val();
            self.wb.next = self.wbeats.q.val();
        } else {
            // The first beat must fit, so a record never has 0 beats.
            self.acc.next = !self.dfifo.full.val() & !self.lfifo.full.val();
            self.wb.next = 0.into();
        }
        self.want.next = self.acc.val() & (self.wb.val() < self.max_beats.val());
        // (after a lost beat nothing more of the frame is written)
        self.wrote.next =
            self.want.val() & !self.dfifo.full.val() & !(self.mid.q.val() & self.lost.q.val());
        self.lo.next =
            (self.mid.q.val() & self.lost.q.val()) | (self.want.val() & self.dfifo.full.val());
        // Oversize: more than `max_beats` beats, or exactly that many with
        // more than `max_last_keep` octets in the last.
        self.ov.next = (self.mid.q.val() & self.oversize.q.val())
            | (self.acc.val() & (self.wb.val() >= self.max_beats.val()))
            | (self.acc.val()
                & self.in_last.val()
                & (self.wb.val() == self.max_beats_m1.val())
                & (self.in_keep.val() > self.max_last_keep.val()));
        self.nbeats.next = self.wb.val();
        if self.wrote.val() {
            self.nbeats.next = self.wb.val() + 1;
        }
        self.dfifo.data_in.next =
            bit_cast::<68, 64>(self.in_data.val()) | (bit_cast::<68, 4>(self.in_keep.val()) << 64);
        self.rec.next =
            bit_cast::<16, 11>(self.nbeats.val()) | (bit_cast::<16, 4>(self.in_tag.val()) << 12);
        if !(self.lo.val() | self.ov.val() | self.in_fcs_bad.val()) {
            self.rec.next = self.rec.val() | self.good_flag.val();
        }
        self.lfifo.data_in.next = self.rec.val();
        self.dfifo.write.next = false;
        self.lfifo.write.next = false;
        if self.in_valid.val() {
            self.mid.d.next = !self.in_last.val();
            self.accepting.d.next = self.acc.val();
            self.wbeats.d.next = self.nbeats.val();
            self.oversize.d.next = self.ov.val();
            self.lost.d.next = self.lo.val();
            self.dfifo.write.next = self.wrote.val();
            if self.in_last.val() {
                if self.acc.val() {
                    self.lfifo.write.next = true;
                    if self.lo.val() {
                        self.c_overflow.d.next = self.c_overflow.q.val() + 1;
                    } else if self.ov.val() {
                        self.c_oversize.d.next = self.c_oversize.q.val() + 1;
                    } else if self.in_fcs_bad.val() {
                        self.c_bad.d.next = self.c_bad.q.val() + 1;
                    } else {
                        self.c_ok.d.next = self.c_ok.q.val() + 1;
                    }
                } else {
                    self.c_overflow.d.next = self.c_overflow.q.val() + 1;
                }
            }
        }

        // ---- read side
        self.have.next = !self.lfifo.empty.val() & !self.dfifo.empty.val();
        self.head_good.next = self.lfifo.data_out.val().get_bit(11);
        self.is_last.next =
            (self.rcount.q.val() + 1) == self.lfifo.data_out.val().get_bits::<11>(0);
        // A bad frame's beats are popped and dropped; a good frame's beats
        // go into the output slice while its skid register is free.
        self.take.next = self.have.val() & (!self.head_good.val() | !self.b_v.q.val());
        self.push.next = self.take.val() & self.head_good.val();
        self.dfifo.read.next = self.take.val();
        self.lfifo.read.next = self.take.val() & self.is_last.val();
        if self.take.val() {
            if self.is_last.val() {
                self.rcount.d.next = 0.into();
            } else {
                self.rcount.d.next = self.rcount.q.val() + 1;
            }
        }

        // ---- output slice
        if !self.a_v.q.val() | self.out_ready.val() {
            // `a` is empty or leaves at this edge: refill from `b`, else from
            // the FIFO (`b` is empty then).
            if self.b_v.q.val() {
                self.a_v.d.next = true;
                self.a_data.d.next = self.b_data.q.val();
                self.a_keep.d.next = self.b_keep.q.val();
                self.a_last.d.next = self.b_last.q.val();
                self.a_tag.d.next = self.b_tag.q.val();
                self.b_v.d.next = false;
            } else {
                self.a_v.d.next = self.push.val();
                self.a_data.d.next = self.dfifo.data_out.val().get_bits::<64>(0);
                self.a_keep.d.next = self.dfifo.data_out.val().get_bits::<4>(64);
                self.a_last.d.next = self.is_last.val();
                self.a_tag.d.next = self.lfifo.data_out.val().get_bits::<4>(12);
            }
        } else if self.push.val() {
            // `a` is held: the beat waits in `b`.
            self.b_v.d.next = true;
            self.b_data.d.next = self.dfifo.data_out.val().get_bits::<64>(0);
            self.b_keep.d.next = self.dfifo.data_out.val().get_bits::<4>(64);
            self.b_last.d.next = self.is_last.val();
            self.b_tag.d.next = self.lfifo.data_out.val().get_bits::<4>(12);
        }
        self.out_valid.next = self.a_v.q.val();
        self.out_data.next = self.a_data.q.val();
        self.out_keep.next = self.a_keep.q.val();
        self.out_last.next = self.a_last.q.val();
        self.out_tag.next = self.a_tag.q.val();

        self.cnt_ok.next = self.c_ok.q.val();
        self.cnt_bad_fcs.next = self.c_bad.q.val();
        self.cnt_overflow.next = self.c_overflow.q.val();
        self.cnt_oversize.next = self.c_oversize.q.val();
        self.hwm.next = self.c_hwm.q.val();
        if self.dfifo.count.val() > self.c_hwm.q.val() {
            self.c_hwm.d.next = self.dfifo.count.val();
        }

        if self.reset.val() {
            self.mid.d.next = false;
            self.accepting.d.next = false;
            self.wbeats.d.next = 0.into();
            self.oversize.d.next = false;
            self.lost.d.next = false;
            self.rcount.d.next = 0.into();
            self.a_v.d.next = false;
            self.b_v.d.next = false;
            self.c_ok.d.next = 0.into();
            self.c_bad.d.next = 0.into();
            self.c_overflow.d.next = 0.into();
            self.c_oversize.d.next = 0.into();
            self.c_hwm.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{beats, tick, Rng};

    struct Sent {
        frame: Vec<u8>,
        fcs_bad: bool,
        oversize: bool,
    }

    fn run(
        max_frame: u64,
        frames: usize,
        ready_pct: usize,
        seed: u64,
    ) -> (Vec<Sent>, Vec<Vec<u8>>, [u32; 4]) {
        let mut uut = RxFifo::new(max_frame);
        uut.clock.connect();
        uut.reset.connect();
        uut.in_data.connect();
        uut.in_keep.connect();
        uut.in_last.connect();
        uut.in_valid.connect();
        uut.in_fcs_bad.connect();
        uut.in_tag.connect();
        uut.out_ready.connect();
        uut.connect_all();
        let mut rng = Rng::new(seed);
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut sent = Vec::new();
        let mut got = Vec::new();
        let mut cur = Vec::new();
        let mut pending: Vec<(u64, u8, bool, bool)> = Vec::new();
        let mut idle = 0;
        loop {
            if pending.is_empty() && sent.len() < frames {
                let len = 1 + rng.below(max_frame as usize + 32);
                let frame = rng.bytes(len);
                let fcs_bad = rng.below(4) == 0;
                let bs = beats(&frame);
                let n = bs.len();
                sent.push(Sent {
                    oversize: len as u64 > max_frame,
                    frame,
                    fcs_bad,
                });
                pending = bs
                    .into_iter()
                    .enumerate()
                    .map(|(i, (d, k))| (d, k, i + 1 == n, fcs_bad && i + 1 == n))
                    .rev()
                    .collect();
            }
            // The output beat (settled after the previous edge) transfers at
            // the next edge if `ready` is set now.
            let draining = pending.is_empty() && sent.len() == frames;
            let ready = draining || rng.below(100) < ready_pct;
            uut.out_ready.next = ready;
            if uut.out_valid.val() && ready {
                let d = uut.out_data.val().to_u64().to_le_bytes();
                let last = uut.out_last.val();
                let k = if last {
                    uut.out_keep.val().to_u64() as usize
                } else {
                    8
                };
                cur.extend_from_slice(&d[..k]);
                if last {
                    got.push(std::mem::take(&mut cur));
                }
            }
            if !pending.is_empty() && rng.below(8) != 0 {
                let (d, k, last, bad) = pending.pop().unwrap();
                uut.in_data.next = d.into();
                uut.in_keep.next = (k as u64).into();
                uut.in_last.next = last;
                uut.in_fcs_bad.next = bad;
                uut.in_valid.next = true;
            } else {
                uut.in_valid.next = false;
                uut.in_fcs_bad.next = rng.below(2) == 0;
                if pending.is_empty() && sent.len() == frames {
                    idle += 1;
                    if idle > 2 * DATA_DEPTH {
                        break;
                    }
                }
            }
            tick!(uut);
        }
        let c = [
            uut.cnt_ok.val().to_u32(),
            uut.cnt_bad_fcs.val().to_u32(),
            uut.cnt_overflow.val().to_u32(),
            uut.cnt_oversize.val().to_u32(),
        ];
        (sent, got, c)
    }

    /// Always-ready sink: exactly the good frames come out, whole, in order.
    #[test]
    fn drops_bad_fcs_and_oversize_exactly() {
        // 190 octets: 24 beats, at most 6 octets in the 24th.
        let (sent, got, c) = run(190, 120, 100, 11);
        let want: Vec<&Vec<u8>> = sent
            .iter()
            .filter(|s| !s.fcs_bad && !s.oversize)
            .map(|s| &s.frame)
            .collect();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g, w);
        }
        let oversize = sent.iter().filter(|s| s.oversize).count() as u32;
        let bad = sent.iter().filter(|s| s.fcs_bad && !s.oversize).count() as u32;
        assert!(oversize > 0 && bad > 0);
        assert_eq!(c, [got.len() as u32, bad, 0, oversize]);
    }

    /// A slow sink: the FIFO fills, whole frames are refused (never partial
    /// ones), and every frame is accounted for by exactly one counter.
    #[test]
    fn overflow_drops_whole_frames() {
        let (sent, got, c) = run(192, 400, 5, 12);
        let mut it = sent.iter();
        for g in &got {
            // Each delivered frame is the next good frame not skipped.
            loop {
                let s = it.next().expect("delivered frame not in the sent sequence");
                if &s.frame == g {
                    assert!(!s.fcs_bad && !s.oversize);
                    break;
                }
            }
        }
        assert_eq!(c[0] as usize, got.len());
        assert!(c[2] > 0, "expected overflow drops: {c:?}");
        assert_eq!(c.iter().sum::<u32>() as usize, sent.len());
    }

    /// Jumbo frames (issue 3) with the default maximum, back to back at one
    /// beat per clock into an always-ready sink: 9014 (MTU 9000) and 9018
    /// octets pass intact, 9019 and 12000 are dropped and counted as
    /// oversize, a bad FCS is dropped, and nothing overflows.
    #[test]
    fn jumbo_frames_pass_and_longer_ones_are_dropped() {
        frames_up_to_the_limit_pass(
            RxFifo::default(),
            &[
                (9014, false, true),
                (9018, false, true),
                (9019, false, false),
                (9014, true, false),
                (12000, false, false),
                (9014, false, true),
                (60, false, true),
            ],
        );
    }

    /// The board profile (`profile::BOARD`, 512 beats, MTU 1500): frames up
    /// to 1518 octets pass, a 1519-octet one and jumbo frames are dropped
    /// and counted as oversize.
    #[test]
    fn the_board_profile_takes_frames_up_to_mtu_1500() {
        use crate::profile::{BOARD, PR_BOARD};
        assert_eq!(BOARD.max_frame, 1518);
        frames_up_to_the_limit_pass(
            RxFifoN::<{ BOARD.rx_fifo_log2 }, { BOARD.rx_fifo_log2 + 1 }, PR_BOARD>::default(),
            &[
                (1514, false, true),
                (1518, false, true),
                (1519, false, false),
                (1514, true, false),
                (9018, false, false),
                (1514, false, true),
                (60, false, true),
            ],
        );
    }

    /// `spec`: (octets, FCS bad, expected out); 4 good, 2 oversize, 1 bad.
    fn frames_up_to_the_limit_pass<const N: usize, const NP1: usize, const PR: usize>(
        mut uut: RxFifoN<N, NP1, PR>,
        spec: &[(usize, bool, bool)],
    ) {
        uut.clock.connect();
        uut.reset.connect();
        uut.in_data.connect();
        uut.in_keep.connect();
        uut.in_last.connect();
        uut.in_valid.connect();
        uut.in_fcs_bad.connect();
        uut.in_tag.connect();
        uut.out_ready.connect();
        uut.connect_all();
        let mut rng = Rng::new(3);
        // (frame, fcs_bad, expected out)
        let frames: Vec<(Vec<u8>, bool, bool)> = spec
            .iter()
            .map(|&(n, bad, ok)| (rng.bytes(n), bad, ok))
            .collect();
        let mut pending: Vec<(u64, u8, bool, bool)> = Vec::new();
        for (f, bad, _) in &frames {
            let bs = beats(f);
            let n = bs.len();
            pending.extend(
                bs.into_iter()
                    .enumerate()
                    .map(|(i, (d, k))| (d, k, i + 1 == n, *bad && i + 1 == n)),
            );
        }
        pending.reverse();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        uut.out_ready.next = true;
        let mut got = Vec::new();
        let mut cur = Vec::new();
        for _ in 0..pending.len() + 2 * DATA_DEPTH as usize {
            if uut.out_valid.val() {
                let d = uut.out_data.val().to_u64().to_le_bytes();
                let k = if uut.out_last.val() {
                    uut.out_keep.val().to_u64() as usize
                } else {
                    8
                };
                cur.extend_from_slice(&d[..k]);
                if uut.out_last.val() {
                    got.push(std::mem::take(&mut cur));
                }
            }
            if let Some((d, k, last, bad)) = pending.pop() {
                uut.in_data.next = d.into();
                uut.in_keep.next = (k as u64).into();
                uut.in_last.next = last;
                uut.in_fcs_bad.next = bad;
                uut.in_valid.next = true;
            } else {
                uut.in_valid.next = false;
            }
            tick!(uut);
        }
        let want: Vec<&Vec<u8>> = frames.iter().filter(|f| f.2).map(|f| &f.0).collect();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.len(), w.len());
            assert!(g == w, "frame of {} octets changed", w.len());
        }
        assert_eq!(uut.cnt_ok.val().to_u32(), 4);
        assert_eq!(uut.cnt_oversize.val().to_u32(), 2);
        assert_eq!(uut.cnt_bad_fcs.val().to_u32(), 1);
        assert_eq!(uut.cnt_overflow.val().to_u32(), 0);
    }
}
