//! DMA write arbiter: merges two DMA write streams (the contract of
//! `docs/rtl.md`: a header beat, then data beats up to `last`) into one, at
//! request boundaries. A pure multiplexer, no storage: the chosen input's
//! beats pass through in the clock they are offered, so every beat an input
//! had taken before a later beat of the other input is also out first
//! (CQEs after their data, whatever input they come from).
//!
//! The choice is a register (`sel`), never a function of this clock's
//! `valid`s: `a_ready` is `!sel & dma_wr_ready` and `b_ready` is
//! `sel & dma_wr_ready`. Why: with a combinational choice an input's `valid`
//! reached its own `ready` (and the other input's) in the same clock; on the
//! board that closed a loop `fpdu_buf` → `ddp_rx` → this block → `ddp_rx`
//! → `fpdu_buf`'s read, the routed critical path of the 62.5 MHz core clock
//! (docs/fpga.md, "Why the core clock is 62.5 MHz"). A `ready` with no `valid` behind it
//! transfers nothing (valid/ready rule), so the selected input may see it.
//!
//! `sel` changes only at a request boundary, never while a beat is on offer
//! (an offer stays put until it is taken):
//! * when a request's last data beat is taken, `sel` turns to the other input
//!   if it has a request waiting (each waits for at most one request of the
//!   other), else it stays, so one input's back-to-back requests go out on
//!   consecutive clocks;
//! * between requests, while the selected input offers nothing and the other
//!   has a request waiting, `sel` turns to it: one idle clock.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct DmaWrArb {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub a_valid: Signal<In, Bit>,
    pub a_ready: Signal<Out, Bit>,
    pub a_hdr: Signal<In, Bit>,
    pub a_len: Signal<In, Bits<16>>,
    pub a_data: Signal<In, Bits<64>>,
    pub a_keep: Signal<In, Bits<4>>,
    pub a_last: Signal<In, Bit>,
    pub b_valid: Signal<In, Bit>,
    pub b_ready: Signal<Out, Bit>,
    pub b_hdr: Signal<In, Bit>,
    pub b_len: Signal<In, Bits<16>>,
    pub b_data: Signal<In, Bits<64>>,
    pub b_keep: Signal<In, Bits<4>>,
    pub b_last: Signal<In, Bit>,
    pub dma_wr_valid: Signal<Out, Bit>,
    pub dma_wr_ready: Signal<In, Bit>,
    pub dma_wr_hdr: Signal<Out, Bit>,
    pub dma_wr_len: Signal<Out, Bits<16>>,
    pub dma_wr_data: Signal<Out, Bits<64>>,
    pub dma_wr_keep: Signal<Out, Bits<4>>,
    pub dma_wr_last: Signal<Out, Bit>,
    /// A request is open: its header has been taken, its last beat not yet.
    locked: DFF<Bit>,
    /// The selected input (1: b).
    sel: DFF<Bit>,
    /// The input not selected has a request waiting.
    other_valid: Signal<Local, Bit>,
}

impl Logic for DmaWrArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, sel);
        self.a_ready.next = false;
        self.b_ready.next = false;
        if self.sel.q.val() {
            self.dma_wr_valid.next = self.b_valid.val();
            self.dma_wr_hdr.next = self.b_hdr.val();
            self.dma_wr_len.next = self.b_len.val();
            self.dma_wr_data.next = self.b_data.val();
            self.dma_wr_keep.next = self.b_keep.val();
            self.dma_wr_last.next = self.b_last.val();
            self.b_ready.next = self.dma_wr_ready.val();
            self.other_valid.next = self.a_valid.val();
        } else {
            self.dma_wr_valid.next = self.a_valid.val();
            self.dma_wr_hdr.next = self.a_hdr.val();
            self.dma_wr_len.next = self.a_len.val();
            self.dma_wr_data.next = self.a_data.val();
            self.dma_wr_keep.next = self.a_keep.val();
            self.dma_wr_last.next = self.a_last.val();
            self.a_ready.next = self.dma_wr_ready.val();
            self.other_valid.next = self.b_valid.val();
        }
        if self.dma_wr_valid.val() & self.dma_wr_ready.val() {
            if self.dma_wr_last.val() & !self.dma_wr_hdr.val() {
                // Request done: the other input next, if it waits.
                self.locked.d.next = false;
                if self.other_valid.val() {
                    self.sel.d.next = !self.sel.q.val();
                }
            } else {
                self.locked.d.next = true;
            }
        } else if !self.locked.q.val() & !self.dma_wr_valid.val() & self.other_valid.val() {
            // Between requests, the selected input idle: turn to the other.
            self.sel.d.next = !self.sel.q.val();
        }
        if self.reset.val() {
            self.locked.d.next = false;
            self.sel.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use std::collections::VecDeque;

    type Beat = (bool, u64, u64, u64, bool);

    /// (hdr, len, data, keep, last) beats of random requests, tagged by
    /// source in the data so the output can be attributed.
    fn requests(rng: &mut Rng, src: u64, n: usize) -> VecDeque<Beat> {
        let mut q = VecDeque::new();
        for i in 0..n as u64 {
            let len = 1 + rng.below(40) as u64;
            q.push_back((true, len, (src << 60) | (i << 32), 0, false));
            let beats = len.div_ceil(8);
            for j in 0..beats {
                let keep = if j + 1 == beats { len - 8 * j } else { 8 };
                q.push_back((false, 0, (src << 60) | (i << 32) | j, keep, j + 1 == beats));
            }
        }
        q
    }

    fn unit() -> DmaWrArb {
        let mut u = DmaWrArb::default();
        u.clock.connect();
        u.reset.connect();
        for s in [
            &mut u.a_valid,
            &mut u.a_hdr,
            &mut u.a_last,
            &mut u.b_valid,
            &mut u.b_hdr,
            &mut u.b_last,
            &mut u.dma_wr_ready,
        ] {
            s.connect();
        }
        u.a_len.connect();
        u.a_data.connect();
        u.a_keep.connect();
        u.b_len.connect();
        u.b_data.connect();
        u.b_keep.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u
    }

    fn drive(u: &mut DmaWrArb, va: bool, vb: bool, fa: Option<&Beat>, fb: Option<&Beat>) {
        u.a_valid.next = va;
        u.b_valid.next = vb;
        if let Some(&(h, l, d, k, la)) = fa {
            u.a_hdr.next = h;
            u.a_len.next = l.into();
            u.a_data.next = d.into();
            u.a_keep.next = k.into();
            u.a_last.next = la;
        }
        if let Some(&(h, l, d, k, la)) = fb {
            u.b_hdr.next = h;
            u.b_len.next = l.into();
            u.b_data.next = d.into();
            u.b_keep.next = k.into();
            u.b_last.next = la;
        }
    }

    /// Runs the two inputs' beat queues through the arbiter. `hold`: an input
    /// that raised `valid` keeps it until the beat is taken (the valid/ready
    /// rule); without it, `valid` comes and goes at random. Checks, every
    /// clock: no interleaving inside a request; `ready` only with a
    /// transfer-capable downstream and independent of both inputs' `valid`
    /// (the registered choice); with `hold`, an untaken offer stays, and
    /// never two clocks in a row without an offer while a request waits
    /// between requests. Returns the number of such clocks.
    fn run(seed: u64, hold: bool, ready_pct: usize) -> usize {
        let mut rng = Rng::new(seed);
        let mut u = unit();
        let mut qa = requests(&mut rng, 1, 30);
        let mut qb = requests(&mut rng, 2, 30);
        let (ea, eb) = (qa.clone(), qb.clone());
        let (mut oa, mut ob) = (Vec::new(), Vec::new());
        let mut open: Option<u64> = None;
        let (mut va, mut vb) = (false, false);
        let mut idle_run = 0;
        let mut idle = 0;
        let mut offered: Option<Beat> = None;
        for _ in 0..4000 {
            va = !qa.is_empty() && ((hold && va) || rng.below(100) < 70);
            vb = !qb.is_empty() && ((hold && vb) || rng.below(100) < 70);
            let r = rng.below(100) < ready_pct;
            drive(&mut u, va, vb, qa.front(), qb.front());
            u.dma_wr_ready.next = r;
            assert!(simulate(&mut u, 1000));
            let (ar, br) = (u.a_ready.val(), u.b_ready.val());
            assert!(!(ar && br), "both inputs ready");
            assert_eq!(ar || br, r, "ready without downstream ready, or lost");
            // The choice must not depend on this clock's valids.
            drive(&mut u, !va, !vb, qa.front(), qb.front());
            assert!(simulate(&mut u, 1000));
            assert_eq!(
                (u.a_ready.val(), u.b_ready.val()),
                (ar, br),
                "ready follows a valid"
            );
            drive(&mut u, va, vb, qa.front(), qb.front());
            assert!(simulate(&mut u, 1000));
            let out = u.dma_wr_valid.val().then(|| {
                (
                    u.dma_wr_hdr.val(),
                    u.dma_wr_len.val().to_u64(),
                    u.dma_wr_data.val().to_u64(),
                    u.dma_wr_keep.val().to_u64(),
                    u.dma_wr_last.val(),
                )
            });
            if hold {
                if let Some(o) = offered {
                    assert_eq!(out, Some(o), "an untaken offer changed");
                }
            }
            // Idle between requests (inside one, the open input decides).
            if open.is_none() && (va || vb) && out.is_none() {
                idle += 1;
                idle_run += 1;
                if hold {
                    assert!(idle_run < 2, "two idle clocks with a request waiting");
                }
            } else {
                idle_run = 0;
            }
            offered = None;
            if let Some(beat) = out {
                if !r {
                    offered = Some(beat);
                } else {
                    let src = beat.2 >> 60;
                    // Never interleaved inside a request.
                    if let Some(o) = open {
                        assert_eq!(o, src, "interleaved");
                        assert!(!beat.0);
                    } else {
                        assert!(beat.0, "data beat outside a request");
                    }
                    open = if beat.4 { None } else { Some(src) };
                    if src == 1 {
                        assert!(ar && va);
                        oa.push(beat);
                        qa.pop_front();
                        va = false;
                    } else {
                        assert!(br && vb);
                        ob.push(beat);
                        qb.pop_front();
                        vb = false;
                    }
                }
            }
            tick!(u);
            if qa.is_empty() && qb.is_empty() {
                break;
            }
        }
        assert!(qa.is_empty() && qb.is_empty(), "not drained");
        assert_eq!(oa, Vec::from(ea));
        assert_eq!(ob, Vec::from(eb));
        idle
    }

    #[test]
    fn merges_whole_requests_in_order() {
        for seed in 1..4 {
            run(seed, false, 70);
        }
    }

    #[test]
    fn holds_offers_and_wastes_at_most_one_clock() {
        let mut idle = 0;
        for (seed, ready_pct) in [(5, 70), (6, 100), (7, 30)] {
            idle += run(seed, true, ready_pct);
        }
        // The turn to a waiting input while the selected one is idle happened.
        assert!(idle > 0);
    }

    /// One input alone, always valid, downstream always ready: its
    /// back-to-back requests go out with no idle clock, also after the
    /// arbiter last served the other input.
    #[test]
    fn back_to_back_requests_of_one_input_have_no_gap() {
        let mut rng = Rng::new(9);
        let mut u = unit();
        // One request from b first, so `sel` must turn back to a.
        let mut qb = requests(&mut rng, 2, 1);
        let mut qa = requests(&mut rng, 1, 10);
        let n_a = qa.len();
        let mut gaps = 0;
        let mut clocks_a = 0;
        for _ in 0..400 {
            let vb = !qb.is_empty();
            let va = qb.is_empty() && !qa.is_empty();
            drive(&mut u, va, vb, qa.front(), qb.front());
            u.dma_wr_ready.next = true;
            assert!(simulate(&mut u, 1000));
            if va {
                clocks_a += 1;
                if !u.dma_wr_valid.val() {
                    gaps += 1;
                }
            }
            if u.dma_wr_valid.val() {
                if u.b_ready.val() && vb {
                    qb.pop_front();
                } else if u.a_ready.val() && va {
                    qa.pop_front();
                }
            }
            tick!(u);
            if qa.is_empty() && qb.is_empty() {
                break;
            }
        }
        assert!(qa.is_empty() && qb.is_empty(), "not drained");
        // One clock to turn from b to a, then every clock a beat.
        assert_eq!(gaps, 1);
        assert_eq!(clocks_a, n_a + 1);
    }

    #[test]
    fn generates_verilog() {
        let mut u = DmaWrArb::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "dma_wr_arb");
        assert!(v.contains("module dma_wr_arb("));
        if let Ok(dir) = std::env::var("RX_SEND_VERILOG_DIR") {
            std::fs::write(format!("{dir}/dma_wr_arb.v"), &v).unwrap();
        }
    }
}
