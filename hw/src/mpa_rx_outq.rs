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
//!   then `w2`. The writer may only write while `room` is set.
//! * `room` = at most 3 entries held (registered count, before this clock's
//!   read), so three writes always fit.
//! * `out`/`out_valid` is the head (registered, no combinational path from
//!   the writes); it is popped on `out_ready`.

use rust_hdl::prelude::*;

/// Width of one queued beat: data 64, keep 4, last, ulpdu_start, fpdu_end,
/// crc_ok, marker_bad, length_bad.
pub const OUTQ_W: usize = 74;

#[derive(LogicBlock, Default)]
pub struct MpaRxOutQ {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: empties the queue.
    pub reset: Signal<In, Bit>,
    pub w_n: Signal<In, Bits<2>>,
    pub w0: Signal<In, Bits<OUTQ_W>>,
    pub w1: Signal<In, Bits<OUTQ_W>>,
    pub w2: Signal<In, Bits<OUTQ_W>>,
    pub room: Signal<Out, Bit>,
    pub out: Signal<Out, Bits<OUTQ_W>>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    q0: DFF<Bits<OUTQ_W>>,
    q1: DFF<Bits<OUTQ_W>>,
    q2: DFF<Bits<OUTQ_W>>,
    q3: DFF<Bits<OUTQ_W>>,
    q4: DFF<Bits<OUTQ_W>>,
    q5: DFF<Bits<OUTQ_W>>,
    cnt: DFF<Bits<3>>,
    pop: Signal<Local, Bit>,
    /// Count after this clock's pop: where `w0` goes.
    base: Signal<Local, Bits<3>>,
    /// Where `w1` and `w2` go.
    base1: Signal<Local, Bits<3>>,
    base2: Signal<Local, Bits<3>>,
    n1: Signal<Local, Bit>,
    n2: Signal<Local, Bit>,
    n3: Signal<Local, Bit>,
}

impl Logic for MpaRxOutQ {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, q0, q1, q2, q3, q4, q5, cnt);
        self.pop.next = self.out_ready.val() & (self.cnt.q.val() != 0);
        self.base.next = self.cnt.q.val();
        if self.pop.val() {
            self.base.next = self.cnt.q.val() - 1;
        }
        self.base1.next = self.base.val() + 1;
        self.base2.next = self.base.val() + 2;
        self.n1.next = self.w_n.val() >= 1;
        self.n2.next = self.w_n.val() >= 2;
        self.n3.next = self.w_n.val() >= 3;
        // Shift on pop.
        if self.pop.val() {
            self.q0.d.next = self.q1.q.val();
            self.q1.d.next = self.q2.q.val();
            self.q2.d.next = self.q3.q.val();
            self.q3.d.next = self.q4.q.val();
            self.q4.d.next = self.q5.q.val();
        }
        // Writes land at base, base+1, base+2.
        if self.n1.val() & (self.base.val() == 0) {
            self.q0.d.next = self.w0.val();
        }
        if self.n1.val() & (self.base.val() == 1) {
            self.q1.d.next = self.w0.val();
        }
        if self.n1.val() & (self.base.val() == 2) {
            self.q2.d.next = self.w0.val();
        }
        if self.n1.val() & (self.base.val() == 3) {
            self.q3.d.next = self.w0.val();
        }
        if self.n2.val() & (self.base1.val() == 1) {
            self.q1.d.next = self.w1.val();
        }
        if self.n2.val() & (self.base1.val() == 2) {
            self.q2.d.next = self.w1.val();
        }
        if self.n2.val() & (self.base1.val() == 3) {
            self.q3.d.next = self.w1.val();
        }
        if self.n2.val() & (self.base1.val() == 4) {
            self.q4.d.next = self.w1.val();
        }
        if self.n3.val() & (self.base2.val() == 2) {
            self.q2.d.next = self.w2.val();
        }
        if self.n3.val() & (self.base2.val() == 3) {
            self.q3.d.next = self.w2.val();
        }
        if self.n3.val() & (self.base2.val() == 4) {
            self.q4.d.next = self.w2.val();
        }
        if self.n3.val() & (self.base2.val() == 5) {
            self.q5.d.next = self.w2.val();
        }
        self.cnt.d.next = self.base.val() + bit_cast::<3, 2>(self.w_n.val());
        self.room.next = self.cnt.q.val() <= 3;
        self.out.next = self.q0.q.val();
        self.out_valid.next = self.cnt.q.val() != 0;
        if self.reset.val() {
            self.cnt.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tick, Rng};
    use std::collections::VecDeque;

    fn beat(rng: &mut Rng, tag: u64) -> (u128, Bits<OUTQ_W>) {
        // A random 74-bit beat whose low 20 bits are a running tag, so a
        // wrong, repeated or lost entry shows.
        let hi = (rng.next() & 0x3ff) as u128;
        let lo = (rng.next() & !0xf_ffff) | (tag & 0xf_ffff);
        let v = (hi << 64) | lo as u128;
        let b =
            bit_cast::<OUTQ_W, 64>(lo.into()) | (bit_cast::<OUTQ_W, 10>((hi as u64).into()) << 64);
        (v, b)
    }

    fn val(b: Bits<OUTQ_W>) -> u128 {
        b.to_u128()
    }

    /// Long random runs against a `VecDeque`, checking `out_valid`, `room`
    /// and (while valid) `out` before every clock. Phases change how often the
    /// sink is ready and how many entries are written, so the queue runs
    /// empty, full (6) and everything between; bursts of 3 writes land while 3
    /// are held (with and without a pop), writes land on an empty queue in the
    /// clock it empties, and reset comes mid-stream, also with writes and a
    /// pop in the same clock. The writer writes only with `room`, as
    /// `mpa_rx` does.
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
            assert_eq!(uut.room.val(), model.len() <= 3, "room, cycle {cycle}");
            if let Some(&h) = model.front() {
                assert_eq!(val(uut.out.val()), h, "out, cycle {cycle}");
            }
            let ready = rng.below(8) < phase.0;
            let n = if !uut.room.val() {
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
