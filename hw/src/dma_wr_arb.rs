//! DMA write arbiter: merges two DMA write streams (the contract of
//! `docs/rtl.md`: a header beat, then data beats up to `last`) into one, at
//! request boundaries. A pure multiplexer, no storage: the chosen input's
//! beats pass through in the clock they are offered, so every beat an input
//! had taken before a later beat of the other input is also out first
//! (CQEs after their data, whatever input they come from).
//!
//! When no request is open the next one is granted to `a` or `b`,
//! alternating when both wait (each waits for at most one request of the
//! other); the grant holds from the beat after a header through the data
//! beat with `last`.

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
    /// A request is open (granted).
    locked: DFF<Bit>,
    /// The open request's input (1: b); when not locked, b is preferred.
    sel: DFF<Bit>,
    pick_b: Signal<Local, Bit>,
}

impl Logic for DmaWrArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, locked, sel);
        self.pick_b.next = self.sel.q.val();
        if !self.locked.q.val() {
            self.pick_b.next = self.b_valid.val() & (self.sel.q.val() | !self.a_valid.val());
        }
        self.a_ready.next = false;
        self.b_ready.next = false;
        if self.pick_b.val() {
            self.dma_wr_valid.next = self.b_valid.val();
            self.dma_wr_hdr.next = self.b_hdr.val();
            self.dma_wr_len.next = self.b_len.val();
            self.dma_wr_data.next = self.b_data.val();
            self.dma_wr_keep.next = self.b_keep.val();
            self.dma_wr_last.next = self.b_last.val();
            self.b_ready.next = self.dma_wr_ready.val();
        } else {
            self.dma_wr_valid.next = self.a_valid.val();
            self.dma_wr_hdr.next = self.a_hdr.val();
            self.dma_wr_len.next = self.a_len.val();
            self.dma_wr_data.next = self.a_data.val();
            self.dma_wr_keep.next = self.a_keep.val();
            self.dma_wr_last.next = self.a_last.val();
            self.a_ready.next = self.dma_wr_ready.val();
        }
        if self.dma_wr_valid.val() & self.dma_wr_ready.val() {
            if self.dma_wr_last.val() & !self.dma_wr_hdr.val() {
                // Request done: the other input is preferred next.
                self.locked.d.next = false;
                self.sel.d.next = !self.pick_b.val();
            } else {
                self.locked.d.next = true;
                self.sel.d.next = self.pick_b.val();
            }
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
    use crate::testutil::{tick, Rng};
    use std::collections::VecDeque;

    /// (hdr, len, data, keep, last) beats of random requests, tagged by
    /// source in the data so the output can be attributed.
    fn requests(rng: &mut Rng, src: u64, n: usize) -> VecDeque<(bool, u64, u64, u64, bool)> {
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

    #[test]
    fn merges_whole_requests_in_order() {
        let mut rng = Rng::new(3);
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
        let mut qa = requests(&mut rng, 1, 30);
        let mut qb = requests(&mut rng, 2, 30);
        let (ea, eb) = (qa.clone(), qb.clone());
        let (mut oa, mut ob) = (Vec::new(), Vec::new());
        let mut open: Option<u64> = None;
        let mut waited = 0;
        for _ in 0..3000 {
            let va = !qa.is_empty() && rng.below(100) < 70;
            let vb = !qb.is_empty() && rng.below(100) < 70;
            let r = rng.below(100) < 70;
            u.a_valid.next = va;
            u.b_valid.next = vb;
            if let Some(&(h, l, d, k, la)) = qa.front() {
                u.a_hdr.next = h;
                u.a_len.next = l.into();
                u.a_data.next = d.into();
                u.a_keep.next = k.into();
                u.a_last.next = la;
            }
            if let Some(&(h, l, d, k, la)) = qb.front() {
                u.b_hdr.next = h;
                u.b_len.next = l.into();
                u.b_data.next = d.into();
                u.b_keep.next = k.into();
                u.b_last.next = la;
            }
            u.dma_wr_ready.next = r;
            assert!(simulate(&mut u, 1000));
            if u.dma_wr_valid.val() && r {
                let d = u.dma_wr_data.val().to_u64();
                let src = d >> 60;
                let beat = (
                    u.dma_wr_hdr.val(),
                    u.dma_wr_len.val().to_u64(),
                    d,
                    u.dma_wr_keep.val().to_u64(),
                    u.dma_wr_last.val(),
                );
                // Never interleaved inside a request.
                if let Some(o) = open {
                    assert_eq!(o, src, "interleaved");
                    assert!(!beat.0);
                } else {
                    assert!(beat.0, "data beat outside a request");
                }
                open = if beat.4 { None } else { Some(src) };
                if src == 1 {
                    assert!(u.a_ready.val() && va);
                    oa.push(beat);
                    qa.pop_front();
                } else {
                    assert!(u.b_ready.val() && vb);
                    ob.push(beat);
                    qb.pop_front();
                }
            }
            // Fairness: a waiting header is served within one request of the other.
            if open.is_none() && va && vb {
                waited += 1;
            }
            tick!(u);
            if qa.is_empty() && qb.is_empty() {
                break;
            }
        }
        assert!(qa.is_empty() && qb.is_empty(), "not drained");
        assert_eq!(oa, Vec::from(ea));
        assert_eq!(ob, Vec::from(eb));
        assert!(waited > 0);
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
