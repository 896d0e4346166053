//! Output queue of `mpa_rx`: six entries, up to three writes and one read
//! per clock.
//!
//! The MPA deframer can finish one FPDU piece and start another in the same
//! input beat, which may produce up to three output beats at once (the last
//! two beats of the piece that ends, and a beat that opens or rejects the next
//! FPDU). Output beats are never more than input beats over an FPDU
//! (`ceil(ULPDU_LENGTH / 8)` against `(2 + ULPDU_LENGTH + pad + 4 + markers) / 8`),
//! so a short queue absorbs those bursts and the input keeps one beat per
//! clock with an always-ready sink.
//!
//! * `w_n` (0..=3) entries are written at the clock edge: `w0`, then `w1`,
//!   then `w2`. The writer may only write while at most 3 entries are held.
//! * `held` = entries held (registered count, before this clock's
//!   read); while it is at most 3, three writes always fit.
//! * `out`/`out_valid` is the head (registered, no combinational path from
//!   the writes); it is popped on `out_ready`. `out` is undefined while
//!   `out_valid` is low.
//! * Synchronous `reset` empties it.
//!
//! # Structure: one lane per write port, no write multiplexers
//!
//! A clock's writes are a *group* of 1..=3 entries. Each write port has its
//! own lane, a small circular buffer in flip-flops that only that port
//! writes: lane 0 takes `w0` (with the group's size), lane 1 `w1`, lane 2
//! `w2`. An entry is never moved, so the only wide multiplexer is the one
//! that loads the head register `h` (the old shifting queue had a five-way
//! multiplexer in front of every bit of every entry):
//!
//! * `h` holds the head; its group's size and the head's index in the group
//!   (`hk`) are kept beside it. The other entries wait in the lanes: lane 0
//!   holds the first entry of every group after the head's, lanes 1 and 2 the
//!   second and third entries not yet at the head, each lane in group order.
//! * On a pop the next head is the next entry of the head's group (the
//!   oldest of lane `hk + 1`) if the group has one, else the first entry of
//!   the next group (the oldest of lane 0). Which lane entry that is depends
//!   only on registers, so `h`'s multiplexer select does not depend on the
//!   inputs; only its load enable (`out_ready`) and the bypass do.
//! * Bypass: when the queue is empty after this clock's pop, `w0` goes
//!   straight into `h` (not into lane 0), so the cycle behaviour is the
//!   shifting queue's: an entry written at an edge is at the head after it.
//! * Lane depths: at most 6 entries are held (3 before the writes, 3
//!   written), one of them in `h`, so lane 0 holds at most 5 groups; a group
//!   with a second entry has at least 2 entries, so lane 1 holds at most 3;
//!   lane 2 at most 2 (one of the head's group plus one further group of 3).
//!   Lane 0 is 5 deep (pointers mod 5), lane 1 3 (mod 3), lane 2 2 (mod 2).

use rust_hdl::prelude::*;

/// Width of one queued beat: data 64, keep 4, last, ulpdu_start, fpdu_end,
/// crc_ok, marker_bad, length_bad.
pub const OUTQ_W: usize = 74;

/// A lane 0 entry: the beat and its group's size (`w_n`, 1..=3) above it.
const L0_W: usize = OUTQ_W + 2;
// `update` spells the size's offset in lane 0 as 74 (hdl_gen takes a literal).
const _: () = assert!(OUTQ_W == 74);

#[derive(LogicBlock, Default)]
pub struct MpaRxOutQ {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: empties the queue.
    pub reset: Signal<In, Bit>,
    pub w_n: Signal<In, Bits<2>>,
    pub w0: Signal<In, Bits<OUTQ_W>>,
    pub w1: Signal<In, Bits<OUTQ_W>>,
    pub w2: Signal<In, Bits<OUTQ_W>>,
    /// Entries held (0..=6, the head included; the registered count). Three
    /// writes fit while it is at most 3; `mpa_rx` also counts the writes
    /// waiting in its write stage.
    pub held: Signal<Out, Bits<3>>,
    pub out: Signal<Out, Bits<OUTQ_W>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    /// Lane 0: first entries of the groups after the head's, with their size.
    a0: DFF<Bits<L0_W>>,
    a1: DFF<Bits<L0_W>>,
    a2: DFF<Bits<L0_W>>,
    a3: DFF<Bits<L0_W>>,
    a4: DFF<Bits<L0_W>>,
    /// Lane 1: second entries.
    b0: DFF<Bits<OUTQ_W>>,
    b1: DFF<Bits<OUTQ_W>>,
    b2: DFF<Bits<OUTQ_W>>,
    /// Lane 2: third entries.
    c0: DFF<Bits<OUTQ_W>>,
    c1: DFF<Bits<OUTQ_W>>,
    /// Lane write and read pointers (lane 0 mod 5, lane 1 mod 3, lane 2 mod 2).
    aw: DFF<Bits<3>>,
    ar: DFF<Bits<3>>,
    bw: DFF<Bits<2>>,
    br: DFF<Bits<2>>,
    cw: DFF<Bit>,
    cr: DFF<Bit>,
    /// The head.
    h: DFF<Bits<OUTQ_W>>,
    /// Size of the head's group (1..=3) and the head's index in it (0..=2).
    hn: DFF<Bits<2>>,
    hk: DFF<Bits<2>>,
    /// Entries held, the head included (0..=6).
    cnt: DFF<Bits<3>>,
    pop: Signal<Local, Bit>,
    /// Entries left after this clock's pop, before the writes.
    rest: Signal<Local, Bits<3>>,
    /// `w0` goes straight to the head.
    bypass: Signal<Local, Bit>,
    /// The oldest entry of each lane.
    a_old: Signal<Local, Bits<L0_W>>,
    b_old: Signal<Local, Bits<OUTQ_W>>,
    c_old: Signal<Local, Bits<OUTQ_W>>,
    /// Where the next head comes from after a pop: lane 1, lane 2, else lane 0.
    nxt_b: Signal<Local, Bit>,
    nxt_c: Signal<Local, Bit>,
    /// Lane writes this clock.
    wa: Signal<Local, Bit>,
    wb: Signal<Local, Bit>,
    wc: Signal<Local, Bit>,
}

impl Logic for MpaRxOutQ {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, a0, a1, a2, a3, a4, b0, b1, b2, c0, c1, aw, ar, bw, br, cw, cr, h, hn, hk,
            cnt
        );
        self.pop.next = self.out_ready.val() & (self.cnt.q.val() != 0);
        self.rest.next = self.cnt.q.val();
        if self.pop.val() {
            self.rest.next = self.cnt.q.val() - 1;
        }
        self.bypass.next = (self.rest.val() == 0) & (self.w_n.val() != 0);

        // The oldest entry of each lane (selects are registers only).
        self.a_old.next = self.a0.q.val();
        if self.ar.q.val() == 1 {
            self.a_old.next = self.a1.q.val();
        }
        if self.ar.q.val() == 2 {
            self.a_old.next = self.a2.q.val();
        }
        if self.ar.q.val() == 3 {
            self.a_old.next = self.a3.q.val();
        }
        if self.ar.q.val() == 4 {
            self.a_old.next = self.a4.q.val();
        }
        self.b_old.next = self.b0.q.val();
        if self.br.q.val() == 1 {
            self.b_old.next = self.b1.q.val();
        }
        if self.br.q.val() == 2 {
            self.b_old.next = self.b2.q.val();
        }
        self.c_old.next = self.c0.q.val();
        if self.cr.q.val() {
            self.c_old.next = self.c1.q.val();
        }
        self.nxt_b.next = (self.hk.q.val() == 0) & (self.hn.q.val() >= 2);
        self.nxt_c.next = (self.hk.q.val() == 1) & (self.hn.q.val() == 3);

        // The head: the next entry on a pop while entries remain, `w0` when
        // the queue is empty after the pop.
        if self.pop.val() & (self.rest.val() != 0) {
            if self.nxt_b.val() {
                self.h.d.next = self.b_old.val();
                self.hk.d.next = 1.into();
                if self.br.q.val() == 2 {
                    self.br.d.next = 0.into();
                } else {
                    self.br.d.next = self.br.q.val() + 1;
                }
            } else if self.nxt_c.val() {
                self.h.d.next = self.c_old.val();
                self.hk.d.next = 2.into();
                self.cr.d.next = !self.cr.q.val();
            } else {
                self.h.d.next = self.a_old.val().get_bits::<OUTQ_W>(0);
                self.hn.d.next = self.a_old.val().get_bits::<2>(74);
                self.hk.d.next = 0.into();
                if self.ar.q.val() == 4 {
                    self.ar.d.next = 0.into();
                } else {
                    self.ar.d.next = self.ar.q.val() + 1;
                }
            }
        }
        if self.bypass.val() {
            self.h.d.next = self.w0.val();
            self.hn.d.next = self.w_n.val();
            self.hk.d.next = 0.into();
        }

        // Lane writes: each port into its own lane.
        self.wa.next = (self.w_n.val() != 0) & !self.bypass.val();
        self.wb.next = self.w_n.val() >= 2;
        self.wc.next = self.w_n.val() == 3;
        if self.wa.val() {
            if self.aw.q.val() == 0 {
                self.a0.d.next = bit_cast::<L0_W, OUTQ_W>(self.w0.val())
                    | (bit_cast::<L0_W, 2>(self.w_n.val()) << 74);
            }
            if self.aw.q.val() == 1 {
                self.a1.d.next = bit_cast::<L0_W, OUTQ_W>(self.w0.val())
                    | (bit_cast::<L0_W, 2>(self.w_n.val()) << 74);
            }
            if self.aw.q.val() == 2 {
                self.a2.d.next = bit_cast::<L0_W, OUTQ_W>(self.w0.val())
                    | (bit_cast::<L0_W, 2>(self.w_n.val()) << 74);
            }
            if self.aw.q.val() == 3 {
                self.a3.d.next = bit_cast::<L0_W, OUTQ_W>(self.w0.val())
                    | (bit_cast::<L0_W, 2>(self.w_n.val()) << 74);
            }
            if self.aw.q.val() == 4 {
                self.a4.d.next = bit_cast::<L0_W, OUTQ_W>(self.w0.val())
                    | (bit_cast::<L0_W, 2>(self.w_n.val()) << 74);
            }
            if self.aw.q.val() == 4 {
                self.aw.d.next = 0.into();
            } else {
                self.aw.d.next = self.aw.q.val() + 1;
            }
        }
        if self.wb.val() {
            if self.bw.q.val() == 0 {
                self.b0.d.next = self.w1.val();
            }
            if self.bw.q.val() == 1 {
                self.b1.d.next = self.w1.val();
            }
            if self.bw.q.val() == 2 {
                self.b2.d.next = self.w1.val();
            }
            if self.bw.q.val() == 2 {
                self.bw.d.next = 0.into();
            } else {
                self.bw.d.next = self.bw.q.val() + 1;
            }
        }
        if self.wc.val() {
            if self.cw.q.val() {
                self.c1.d.next = self.w2.val();
            } else {
                self.c0.d.next = self.w2.val();
            }
            self.cw.d.next = !self.cw.q.val();
        }

        self.cnt.d.next = self.rest.val() + bit_cast::<3, 2>(self.w_n.val());
        self.held.next = self.cnt.q.val();
        self.out.next = self.h.q.val();
        self.out_valid.next = self.cnt.q.val() != 0;
        if self.reset.val() {
            self.cnt.d.next = 0.into();
            self.aw.d.next = 0.into();
            self.ar.d.next = 0.into();
            self.bw.d.next = 0.into();
            self.br.d.next = 0.into();
            self.cw.d.next = false;
            self.cr.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use std::collections::VecDeque;

    fn beat(rng: &mut Rng, tag: u64) -> (u128, Bits<OUTQ_W>) {
        // A random 74-bit beat whose low 20 bits are a running tag, so a
        // wrong, repeated or lost entry shows.
        let hi = (rng.next_u64() & 0x3ff) as u128;
        let lo = (rng.next_u64() & !0xf_ffff) | (tag & 0xf_ffff);
        let v = (hi << 64) | lo as u128;
        let b =
            bit_cast::<OUTQ_W, 64>(lo.into()) | (bit_cast::<OUTQ_W, 10>((hi as u64).into()) << 64);
        (v, b)
    }

    fn val(b: Bits<OUTQ_W>) -> u128 {
        b.to_u128()
    }

    /// Long random runs against a `VecDeque`, checking `out_valid`, `held`
    /// and (while valid) `out` before every clock. Phases change how often the
    /// sink is ready and how many entries are written, so the queue runs
    /// empty, full (6) and everything between; bursts of 3 writes land while 3
    /// are held (with and without a pop), writes land on an empty queue in the
    /// clock it empties, and reset comes mid-stream, also with writes and a
    /// pop in the same clock. The writer writes only while at most 3
    /// are held, as `mpa_rx` does (counting its write stage).
    #[test]
    fn outq_matches_model() {
        let mut uut = MpaRxOutQ::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.w_n.connect();
        uut.w0.connect();
        uut.w1.connect();
        uut.w2.connect();
        uut.out_ready.connect();
        uut.connect_all();
        let mut rng = Rng::new(21);
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut model: VecDeque<u128> = VecDeque::new();
        let mut tag = 1u64;
        let (mut popped, mut max_len, mut resets) = (0, 0, 0);
        let (mut burst_at_3, mut burst_at_3_pop, mut refill_on_empty) = (0, 0, 0);
        // (ready in 8ths, P(3 writes) in 8ths) for this phase.
        let mut phase = (6, 2);
        for cycle in 0..40_000 {
            if cycle % 97 == 0 {
                phase = (rng.below(9), rng.below(9));
            }
            assert_eq!(
                uut.out_valid.val(),
                !model.is_empty(),
                "out_valid, cycle {cycle}"
            );
            assert_eq!(
                uut.held.val().to_u64(),
                model.len() as u64,
                "held, cycle {cycle}"
            );
            if let Some(&h) = model.front() {
                assert_eq!(val(uut.out.val()), h, "out, cycle {cycle}");
            }
            let ready = rng.below(8) < phase.0;
            let n = if uut.held.val().to_u64() > 3 {
                0
            } else if rng.below(8) < phase.1 {
                3
            } else {
                rng.below(4)
            };
            let reset = rng.below(600) == 0;
            let ws: Vec<(u128, Bits<OUTQ_W>)> = (0..3).map(|i| beat(&mut rng, tag + i)).collect();
            tag += 3;
            uut.out_ready.next = ready;
            uut.w_n.next = (n as u64).into();
            uut.w0.next = ws[0].1;
            uut.w1.next = ws[1].1;
            uut.w2.next = ws[2].1;
            uut.reset.next = reset;
            if reset {
                model.clear();
                resets += 1;
            } else {
                let pop = ready && !model.is_empty();
                if n == 3 && model.len() == 3 {
                    burst_at_3 += 1;
                    burst_at_3_pop += pop as usize;
                }
                if pop {
                    model.pop_front();
                    popped += 1;
                    if model.is_empty() && n > 0 {
                        refill_on_empty += 1;
                    }
                }
                for w in ws.iter().take(n) {
                    model.push_back(w.0);
                }
            }
            max_len = max_len.max(model.len());
            tick!(uut);
        }
        assert!(
            popped > 10_000
                && max_len == 6
                && resets > 20
                && burst_at_3_pop > 100
                && burst_at_3 - burst_at_3_pop > 100
                && refill_on_empty > 100,
            "coverage: popped {popped} max_len {max_len} resets {resets} \
             burst_at_3 {burst_at_3} (with pop {burst_at_3_pop}) refill_on_empty {refill_on_empty}"
        );
    }
}
