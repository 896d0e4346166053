//! Register slice (skid buffer) for a valid/ready stream: cuts every
//! combinational path through it, forward (`in_valid`/`in_data` →
//! `out_*`) and backward (`out_ready` → `in_ready`), and keeps one transfer
//! per clock.
//!
//! Two registers: the main register `a` drives `out_*`; the skid register
//! `b` catches the one beat that the source sends in the clock where `a` is
//! held (`in_ready` was already promised from `b` being empty). `in_ready`
//! is `!b_v`, a flop. Beats leave in the order they came; +1 clock of
//! latency. Synchronous reset empties both registers.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct Skid<D: Synth> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: drops both registers.
    pub reset: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_data: Signal<In, D>,
    pub in_ready: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_data: Signal<Out, D>,
    pub out_ready: Signal<In, Bit>,
    a_v: DFF<Bit>,
    a_d: DFF<D>,
    b_v: DFF<Bit>,
    b_d: DFF<D>,
}

impl<D: Synth> Logic for Skid<D> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, a_v, a_d, b_v, b_d);
        self.in_ready.next = !self.b_v.q.val();
        if !self.a_v.q.val() | self.out_ready.val() {
            // `a` is empty or leaves at this edge: refill it from `b`, else
            // from the input (the input is accepted: `b` is empty then).
            if self.b_v.q.val() {
                self.a_v.d.next = true;
                self.a_d.d.next = self.b_d.q.val();
                self.b_v.d.next = false;
            } else {
                self.a_v.d.next = self.in_valid.val();
                self.a_d.d.next = self.in_data.val();
            }
        } else if self.in_valid.val() & !self.b_v.q.val() {
            // `a` is held: the accepted beat waits in `b`.
            self.b_v.d.next = true;
            self.b_d.d.next = self.in_data.val();
        }
        if self.reset.val() {
            self.a_v.d.next = false;
            self.b_v.d.next = false;
        }
        self.out_valid.next = self.a_v.q.val();
        self.out_data.next = self.a_d.q.val();
    }
}

/// [`Skid`] on a DMA write request stream (`dma_wr_*` of `ddp_rx`,
/// `rx_send` and the write arbiter: a header beat with `len`, then data
/// beats with `keep` and `last`), its fields packed into one register:
/// {last 85, keep 84:81, data 80:17, len 16:1, hdr 0}.
#[derive(LogicBlock, Default)]
pub struct DmaWrSkid {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: drops the held beats.
    pub reset: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_hdr: Signal<In, Bit>,
    pub in_len: Signal<In, Bits<16>>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_hdr: Signal<Out, Bit>,
    pub out_len: Signal<Out, Bits<16>>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    sk: Skid<Bits<86>>,
    beat: Signal<Local, Bits<86>>,
}

impl Logic for DmaWrSkid {
    #[hdl_gen]
    fn update(&mut self) {
        self.sk.clock.next = self.clock.val();
        self.sk.reset.next = self.reset.val();
        self.sk.in_valid.next = self.in_valid.val();
        self.in_ready.next = self.sk.in_ready.val();
        self.beat.next = (bit_cast::<86, 1>(self.in_last.val().into()) << 85)
            | (bit_cast::<86, 4>(self.in_keep.val()) << 81)
            | (bit_cast::<86, 64>(self.in_data.val()) << 17)
            | (bit_cast::<86, 16>(self.in_len.val()) << 1)
            | bit_cast::<86, 1>(self.in_hdr.val().into());
        self.sk.in_data.next = self.beat.val();
        self.out_valid.next = self.sk.out_valid.val();
        self.sk.out_ready.next = self.out_ready.val();
        self.out_hdr.next = self.sk.out_data.val().get_bit(0);
        self.out_len.next = self.sk.out_data.val().get_bits::<16>(1);
        self.out_data.next = self.sk.out_data.val().get_bits::<64>(17);
        self.out_keep.next = self.sk.out_data.val().get_bits::<4>(81);
        self.out_last.next = self.sk.out_data.val().get_bit(85);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use std::collections::VecDeque;

    fn uut() -> Skid<Bits<40>> {
        let mut u = Skid::<Bits<40>>::default();
        u.clock.connect();
        u.reset.connect();
        u.in_valid.connect();
        u.in_data.connect();
        u.out_ready.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u
    }

    /// Random stalls on both sides: every offered word comes out once, in
    /// order (the reference is the list of accepted words, kept by the test),
    /// and `in_ready` never depends on this clock's `out_ready`.
    #[test]
    fn order_and_no_loss_under_random_stalls() {
        let mut u = uut();
        let mut rng = Rng::new(7);
        let mut sent: VecDeque<u64> = VecDeque::new();
        let mut got = 0usize;
        let mut next_word = 1u64;
        for _ in 0..4000 {
            let valid = rng.below(3) != 0;
            u.in_valid.next = valid;
            u.in_data.next = next_word.into();
            // in_ready is a flop: the same for either out_ready.
            u.out_ready.next = false;
            assert!(simulate(&mut u, 1000));
            let r0 = u.in_ready.val();
            u.out_ready.next = true;
            assert!(simulate(&mut u, 1000));
            assert_eq!(r0, u.in_ready.val(), "in_ready follows out_ready");
            let ready = rng.below(4) != 0;
            u.out_ready.next = ready;
            assert!(simulate(&mut u, 1000));
            if u.out_valid.val() && ready {
                let want = sent.pop_front().expect("a word that was never sent");
                assert_eq!(u.out_data.val(), want);
                got += 1;
            }
            if valid && u.in_ready.val() {
                sent.push_back(next_word);
                next_word = next_word.wrapping_mul(0x9E37_79B9) % 0xff_ffff_ffff + 1;
            }
            tick!(u);
        }
        assert!(sent.len() <= 2, "{} words held", sent.len());
        assert!(got > 1500, "only {got} transfers");
    }

    /// With the sink always ready, one word per clock after one clock of
    /// latency; a reset drops held words.
    #[test]
    fn full_throughput_and_reset() {
        let mut u = uut();
        u.out_ready.next = true;
        u.in_valid.next = true;
        let mut outs = vec![];
        for i in 0..50u64 {
            u.in_data.next = (i + 100).into();
            assert!(simulate(&mut u, 1000));
            assert!(u.in_ready.val());
            if u.out_valid.val() {
                outs.push(u.out_data.val());
            }
            tick!(u);
        }
        let want: Vec<Bits<40>> = (100..149u64).map(|v| v.into()).collect();
        assert_eq!(outs, want);
        // Fill both registers, then reset.
        u.out_ready.next = false;
        tick!(u);
        tick!(u);
        assert!(!u.in_ready.val() && u.out_valid.val());
        u.in_valid.next = false;
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        assert!(simulate(&mut u, 1000));
        assert!(u.in_ready.val() && !u.out_valid.val());
    }

    /// `DmaWrSkid`: each field comes out in its own field. The words are
    /// random per field, so a swapped or shifted field (or one bit of
    /// `hdr`/`last` landing in `data`) shows; with stalls on both sides the
    /// beats still come out once each, in order.
    #[test]
    fn dma_wr_skid_keeps_each_field() {
        let mut u = DmaWrSkid::default();
        u.clock.connect();
        u.reset.connect();
        u.in_valid.connect();
        u.in_hdr.connect();
        u.in_len.connect();
        u.in_data.connect();
        u.in_keep.connect();
        u.in_last.connect();
        u.out_ready.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        let mut rng = Rng::new(11);
        type Beat = (bool, u64, u64, u64, bool);
        let mut offer: Beat = (false, 0, 0, 0, false);
        let mut sent: VecDeque<Beat> = VecDeque::new();
        let mut got = 0usize;
        let mut fresh = true;
        for _ in 0..3000 {
            if fresh {
                offer = (
                    rng.below(2) == 1,
                    rng.next_u64() & 0xFFFF,
                    rng.next_u64(),
                    rng.next_u64() & 0xF,
                    rng.below(2) == 1,
                );
            }
            let valid = rng.below(3) != 0;
            let ready = rng.below(3) != 0;
            u.in_valid.next = valid;
            u.in_hdr.next = offer.0;
            u.in_len.next = offer.1.into();
            u.in_data.next = offer.2.into();
            u.in_keep.next = offer.3.into();
            u.in_last.next = offer.4;
            u.out_ready.next = ready;
            assert!(simulate(&mut u, 1000));
            if u.out_valid.val() && ready {
                let want = sent.pop_front().expect("a beat that was never sent");
                let have = (
                    u.out_hdr.val(),
                    u.out_len.val().to_u64(),
                    u.out_data.val().to_u64(),
                    u.out_keep.val().to_u64(),
                    u.out_last.val(),
                );
                assert_eq!(have, want);
                got += 1;
            }
            fresh = valid && u.in_ready.val();
            if fresh {
                sent.push_back(offer);
            }
            tick!(u);
        }
        assert!(got > 1000, "only {got} transfers");
    }
}
