//! Read side of a payload reorder buffer (`tx_seg`: 8 slots, 4 on the board,
//! `read_resp`: 2): `2^S` slots of 512 beats in one RAM with a registered
//! read (or the first `n` of them, [`SlotDrain::with_slots`]), address
//! {slot, beat[8:0]} (`A = S + 9` bits). Each slot holds one DMA read; its
//! completion beats are written in order, the slot's last with the `last`
//! flag. The owner keeps the write side (which slot a completion beat goes
//! to, the beats written per slot) and the count of reads outstanding.
//!
//! The slots are drained in order, each beat as soon as it is written: with
//! a read outstanding (`busy`) and fewer beats read from the head slot
//! (`slot`) than written into it (`written`), the next beat is read; the
//! RAM output then holds it (`valid`) until `ready`. The beat that carries
//! the `last` flag (`ram_last`) ends the slot: `drained` pulses in the clock
//! it is taken, and the next slot is the head from the next clock (one idle
//! clock). Synchronous reset: head slot 0, nothing read, no beat held.

use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct SlotDrain<const S: usize, const A: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high.
    pub reset: Signal<In, Bit>,
    /// A read is outstanding whose last beat has not been taken: the head
    /// slot is in use.
    pub busy: Signal<In, Bit>,
    /// Beats written into the head slot (`slot`) so far.
    pub written: Signal<In, Bits<10>>,
    /// The RAM's read address.
    pub ram_addr: Signal<Out, Bits<A>>,
    /// The `last` flag of the beat on the RAM's output.
    pub ram_last: Signal<In, Bit>,
    /// The RAM's output holds a beat for the consumer.
    pub valid: Signal<Out, Bit>,
    pub ready: Signal<In, Bit>,
    /// The head slot's last beat is taken this clock.
    pub drained: Signal<Out, Bit>,
    /// The head slot.
    pub slot: Signal<Out, Bits<S>>,
    rd_slot: DFF<Bits<S>>,
    /// Beats read from the head slot.
    rcnt: DFF<Bits<10>>,
    /// The RAM's output holds a beat (read at `cur_addr`).
    ov: DFF<Bit>,
    cur_addr: DFF<Bits<A>>,
    /// The slots in use minus one (all `2^S` unless [`Self::with_slots`]):
    /// the head slot wraps to 0 after it.
    c_slot_mask: Constant<Bits<S>>,
    head_ok: Signal<Local, Bit>,
    raddr: Signal<Local, Bits<A>>,
}

impl<const S: usize, const A: usize> SlotDrain<S, A> {
    /// A drain over the first `n` slots (a power of two, at most `2^S`):
    /// a profile that keeps fewer slots in its RAM.
    pub fn with_slots(n: usize) -> Self {
        assert!(
            n.is_power_of_two() && n <= 1 << S,
            "SlotDrain<{S}>: {n} slots"
        );
        Self {
            c_slot_mask: Constant::new(((n - 1) as u64).into()),
            ..Self::default()
        }
    }
}

impl<const S: usize, const A: usize> Default for SlotDrain<S, A> {
    fn default() -> Self {
        assert_eq!(A, S + 9, "SlotDrain: A = S + 9");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            busy: Default::default(),
            written: Default::default(),
            ram_addr: Default::default(),
            ram_last: Default::default(),
            valid: Default::default(),
            ready: Default::default(),
            drained: Default::default(),
            slot: Default::default(),
            rd_slot: Default::default(),
            rcnt: Default::default(),
            ov: Default::default(),
            cur_addr: Default::default(),
            c_slot_mask: Constant::new(((1u64 << S) - 1).into()),
            head_ok: Default::default(),
            raddr: Default::default(),
        }
    }
}

impl<const S: usize, const A: usize> Logic for SlotDrain<S, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, rd_slot, rcnt, ov, cur_addr);
        self.slot.next = self.rd_slot.q.val();
        self.head_ok.next = self.busy.val() & (self.rcnt.q.val() < self.written.val());
        self.valid.next = self.ov.q.val();
        self.drained.next = false;
        self.ram_addr.next = self.cur_addr.q.val();
        // Assigned on every path: Yosys infers a latch otherwise (the
        // simulators do not care, synthesis does).
        self.raddr.next = (bit_cast::<A, S>(self.rd_slot.q.val()) << 9)
            | bit_cast::<A, 10>(self.rcnt.q.val() & 511);
        if self.ov.q.val() & !self.ready.val() {
            // Hold the beat.
            self.ov.d.next = true;
        } else if self.ov.q.val() & self.ram_last.val() {
            // The slot's last beat goes: next slot (one idle clock).
            self.drained.next = true;
            self.ov.d.next = false;
            self.rcnt.d.next = 0.into();
            self.rd_slot.d.next = (self.rd_slot.q.val() + 1) & self.c_slot_mask.val();
        } else if self.head_ok.val() {
            self.ram_addr.next = self.raddr.val();
            self.cur_addr.d.next = self.raddr.val();
            self.rcnt.d.next = self.rcnt.q.val() + 1;
            self.ov.d.next = true;
        } else {
            self.ov.d.next = false;
        }
        if self.reset.val() {
            self.rd_slot.d.next = 0.into();
            self.rcnt.d.next = 0.into();
            self.ov.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::pram::PRam;
    use crate::common::testutil::{tick, Rng};
    use std::collections::VecDeque;

    /// The drain and its RAM ({last 63, data 62:0}); the test writes the RAM
    /// and keeps the write side's counts.
    #[derive(LogicBlock, Default)]
    struct Bench<const S: usize, const A: usize> {
        clock: Signal<In, Clock>,
        reset: Signal<In, Bit>,
        wr_en: Signal<In, Bit>,
        wr_addr: Signal<In, Bits<A>>,
        wr_data: Signal<In, Bits<64>>,
        busy: Signal<In, Bit>,
        written: Signal<In, Bits<10>>,
        ready: Signal<In, Bit>,
        valid: Signal<Out, Bit>,
        data: Signal<Out, Bits<64>>,
        drained: Signal<Out, Bit>,
        slot: Signal<Out, Bits<S>>,
        ram: PRam<Bits<64>, A>,
        d: SlotDrain<S, A>,
    }

    impl<const S: usize, const A: usize> Logic for Bench<S, A> {
        #[hdl_gen]
        fn update(&mut self) {
            self.ram.read_clock.next = self.clock.val();
            self.ram.write_clock.next = self.clock.val();
            self.ram.write_enable.next = self.wr_en.val();
            self.ram.write_address.next = self.wr_addr.val();
            self.ram.write_data.next = self.wr_data.val();
            self.d.clock.next = self.clock.val();
            self.d.reset.next = self.reset.val();
            self.d.busy.next = self.busy.val();
            self.d.written.next = self.written.val();
            self.d.ready.next = self.ready.val();
            self.ram.read_address.next = self.d.ram_addr.val();
            self.d.ram_last.next = self.ram.read_data.val().get_bit(63);
            self.valid.next = self.d.valid.val();
            self.data.next = self.ram.read_data.val();
            self.drained.next = self.d.drained.val();
            self.slot.next = self.d.slot.val();
        }
    }

    /// One DMA read into a slot: its length and the words written so far.
    struct Read {
        slot: usize,
        len: usize,
        words: Vec<u64>,
        out: usize,
    }

    /// Random reads of 1..=512 beats into the slots in turn (a slot is
    /// reused only once drained, as the owners issue them), the beats of
    /// the reads in flight written interleaved at random clocks (each
    /// read's in order), random `ready`: every beat comes out once, in slot
    /// order and in order within its slot, never before it was written;
    /// `drained` pulses with each read's last beat, and `slot` then moves
    /// to the next slot. A reset mid-run empties the drain.
    fn drains_in_order<const S: usize, const A: usize>(seed: u64, slots: usize) {
        let mut b = Bench::<S, A> {
            d: SlotDrain::with_slots(slots),
            ..Default::default()
        };
        b.connect_all();
        b.reset.next = true;
        tick!(b);
        b.reset.next = false;
        let mut rng = Rng::new(seed);
        let mut reads: VecDeque<Read> = VecDeque::new();
        let mut wslot = 0usize;
        let (mut beats_out, mut drains, mut issued) = (0usize, 0usize, 0usize);
        let mut word = 1u64;
        for t in 0..40_000 {
            if t == 20_000 {
                // Reset: nothing in flight, head slot 0.
                b.reset.next = true;
                b.busy.next = false;
                b.wr_en.next = false;
                tick!(b);
                b.reset.next = false;
                assert!(simulate(&mut b, 1000));
                assert!(!b.valid.val() && b.slot.val().index() == 0);
                reads.clear();
                wslot = 0;
            }
            // A new read into the next slot when one is free.
            if reads.len() < slots && rng.below(8) == 0 {
                let len = if rng.below(4) == 0 {
                    1 + rng.below(512)
                } else {
                    1 + rng.below(12)
                };
                reads.push_back(Read {
                    slot: wslot,
                    len,
                    words: vec![],
                    out: 0,
                });
                wslot = (wslot + 1) % slots;
                issued += 1;
            }
            // The head slot's count before this clock's write.
            b.busy.next = !reads.is_empty();
            b.written.next = (reads.front().map_or(0, |r| r.words.len()) as u64).into();
            // A beat of a random read still being written.
            b.wr_en.next = false;
            let open: Vec<usize> = (0..reads.len())
                .filter(|&i| reads[i].words.len() < reads[i].len)
                .collect();
            let mut wrote = None;
            if !open.is_empty() && rng.below(3) != 0 {
                let r = &reads[open[rng.below(open.len())]];
                let i = r.words.len();
                let last = (i + 1 == r.len) as u64;
                b.wr_en.next = true;
                b.wr_addr.next = (((r.slot << 9) | i) as u64).into();
                b.wr_data.next = (word | (last << 63)).into();
                wrote = Some((r.slot, word));
                word += 1;
            }
            if let Some(r) = reads.front() {
                assert_eq!(b.slot.val().index(), r.slot, "head slot");
            }
            let ready = rng.below(4) != 0;
            b.ready.next = ready;
            assert!(simulate(&mut b, 1000));
            if b.valid.val() && ready {
                let v = b.data.val().to_u64();
                let r = reads.front_mut().expect("a read in flight");
                let (i, s) = (r.out, r.slot);
                assert!(i < r.words.len(), "beat {i} of slot {s} unwritten");
                assert_eq!(v & !(1 << 63), r.words[i], "slot {s} beat {i}");
                r.out += 1;
                let last = r.out == r.len;
                assert_eq!(v >> 63 == 1, last);
                assert_eq!(b.drained.val(), last);
                beats_out += 1;
                if last {
                    reads.pop_front();
                    drains += 1;
                }
            } else {
                assert!(!b.drained.val());
            }
            tick!(b);
            if let Some((s, w)) = wrote {
                let r = reads.iter_mut().find(|r| r.slot == s).unwrap();
                r.words.push(w);
            }
        }
        assert!(drains > 200, "{drains} reads drained");
        println!("S = {S}, {slots} slots: {issued} reads issued, {drains} drained, {beats_out} beats out");
    }

    #[test]
    fn two_slots_drain_in_order() {
        drains_in_order::<1, 10>(2, 2);
    }

    #[test]
    fn four_slots_drain_in_order() {
        drains_in_order::<2, 11>(4, 4);
    }

    #[test]
    fn eight_slots_drain_in_order() {
        drains_in_order::<3, 12>(8, 8);
    }

    /// `with_slots(4)` on a 3-bit slot index (the board's `tx_seg`): the
    /// head wraps after slot 3, slots 4..7 are never used.
    #[test]
    fn four_of_eight_slots_drain_in_order() {
        drains_in_order::<3, 12>(5, 4);
    }

    #[test]
    fn generates_verilog() {
        let mut d = SlotDrain::<2, 11>::default();
        d.connect_all();
        assert!(generate_verilog(&d).contains("module top"));
    }
}
