//! `FifoP<D, N, NP1>`: [`crate::common::fifo::Fifo`] whose depth is set at
//! construction (`2^log2` ≤ `2^N` words) instead of by the type, so a block
//! can take its FIFO depth from its core profile (`crate::profile`) without
//! a type parameter. The storage is a [`PRam`] of exactly that depth (Yosys
//! keeps a RAM at its declared depth whatever its addresses, so a smaller
//! FIFO needs a smaller declaration). Same contract as `Fifo`:
//! first-word fall-through, `count` = words held, `full` at the depth.
//!
//! The pointers stay `NP1` bits and wrap at `2^NP1`, a multiple of the
//! depth, so `pointer mod depth` (the low `log2` bits) is the RAM address.

use crate::common::pram::PRam;
use rust_hdl::prelude::*;

#[derive(LogicBlock)]
pub struct FifoP<D: Synth, const N: usize, const NP1: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: empties the FIFO.
    pub reset: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, D>,
    pub full: Signal<Out, Bit>,
    pub read: Signal<In, Bit>,
    pub data_out: Signal<Out, D>,
    pub empty: Signal<Out, Bit>,
    pub count: Signal<Out, Bits<NP1>>,
    /// The depth, `2^log2`.
    depth: Constant<Bits<NP1>>,
    /// `2^log2 - 1`: the RAM address of a pointer.
    amask: Constant<Bits<N>>,
    ram: PRam<D, N>,
    wr_ptr: DFF<Bits<NP1>>,
    wr_ptr_d: DFF<Bits<NP1>>,
    rd_ptr: DFF<Bits<NP1>>,
    rd_next: Signal<Local, Bits<NP1>>,
    used: Signal<Local, Bits<NP1>>,
    rd_a: Signal<Local, Bits<N>>,
    wr_a: Signal<Local, Bits<N>>,
}

impl<D: Synth, const N: usize, const NP1: usize> Default for FifoP<D, N, NP1> {
    /// The full `2^N` words (as `Fifo<D, N, NP1>`).
    fn default() -> Self {
        Self::new(N)
    }
}

impl<D: Synth, const N: usize, const NP1: usize> FifoP<D, N, NP1> {
    /// A FIFO of `2^log2` words (`1 ≤ log2 ≤ N`).
    pub fn new(log2: usize) -> Self {
        assert_eq!(NP1, N + 1);
        assert!((1..=N).contains(&log2));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            full: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            empty: Default::default(),
            count: Default::default(),
            depth: Constant::new((1u64 << log2).into()),
            amask: Constant::new(((1u64 << log2) - 1).into()),
            ram: PRam::low(log2),
            wr_ptr: Default::default(),
            wr_ptr_d: Default::default(),
            rd_ptr: Default::default(),
            rd_next: Default::default(),
            used: Default::default(),
            rd_a: Default::default(),
            wr_a: Default::default(),
        }
    }
}

impl<D: Synth, const N: usize, const NP1: usize> FifoP<D, N, NP1> {
    /// The same FIFO with its storage in block RAM ([`PRam::block`]).
    pub fn block(mut self) -> Self {
        self.ram = self.ram.block();
        self
    }
}

impl<D: Synth, const N: usize, const NP1: usize> Logic for FifoP<D, N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wr_ptr, wr_ptr_d, rd_ptr);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.used.next = self.wr_ptr.q.val() - self.rd_ptr.q.val();
        self.count.next = self.used.val();
        self.full.next = self.used.val() >= self.depth.val();
        self.empty.next = self.rd_ptr.q.val() == self.wr_ptr_d.q.val();
        self.rd_next.next = self.rd_ptr.q.val();
        if self.read.val() & !self.empty.val() {
            self.rd_next.next = self.rd_ptr.q.val() + 1;
        }
        self.rd_ptr.d.next = self.rd_next.val();
        self.rd_a.next = self.rd_next.val().get_bits::<N>(0) & self.amask.val();
        self.ram.read_address.next = self.rd_a.val();
        self.data_out.next = self.ram.read_data.val();
        self.wr_a.next = self.wr_ptr.q.val().get_bits::<N>(0) & self.amask.val();
        self.ram.write_address.next = self.wr_a.val();
        self.ram.write_data.next = self.data_in.val();
        self.ram.write_enable.next = self.write.val() & !self.full.val();
        if self.write.val() & !self.full.val() {
            self.wr_ptr.d.next = self.wr_ptr.q.val() + 1;
        }
        self.wr_ptr_d.d.next = self.wr_ptr.q.val();
        if self.reset.val() {
            self.wr_ptr.d.next = 0.into();
            self.wr_ptr_d.d.next = 0.into();
            self.rd_ptr.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    /// Random pushes and pops against a `VecDeque` model, for a FIFO of 8
    /// words in a type of 32: full at 8, words in order across the wrap.
    #[test]
    fn a_shallower_fifo_matches_model() {
        let mut uut: FifoP<Bits<16>, 5, 6> = FifoP::new(3);
        uut.clock.connect();
        uut.reset.connect();
        uut.write.connect();
        uut.data_in.connect();
        uut.read.connect();
        uut.connect_all();
        let mut rng = Rng::new(11);
        let mut model = std::collections::VecDeque::new();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut seen_full = 0;
        for cycle in 0..3000 {
            let empty = uut.empty.val();
            let full = uut.full.val();
            seen_full += full as usize;
            assert_eq!(
                uut.count.val().to_u64() as usize,
                model.len(),
                "cycle {cycle}"
            );
            assert_eq!(full, model.len() == 8, "cycle {cycle}");
            if !empty {
                assert_eq!(uut.data_out.val().to_u64(), model[0], "cycle {cycle}");
            }
            let wp = if (cycle / 200) % 2 == 0 { 3 } else { 1 };
            let w = rng.below(4) < wp;
            let r = rng.below(4) >= wp;
            let v = rng.next_u64() & 0xFFFF;
            uut.write.next = w;
            uut.data_in.next = v.into();
            uut.read.next = r;
            if r && !empty {
                model.pop_front();
            }
            if w && !full {
                model.push_back(v);
            }
            tick!(uut);
        }
        assert!(seen_full > 10);
    }
}
