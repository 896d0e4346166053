//! Synchronous FIFO with an explicit synchronous reset, first-word
//! fall-through read side and an occupancy output.
//!
//! rust-hdl's `SynchronousFIFO` has no reset (its pointers rely on `initial`
//! values), which breaks the "explicit synchronous reset" rule of the core, so
//! this is a small replacement on rust-hdl's `RAM` (registered read).
//!
//! * `data_out` is valid while `!empty`; `read` pops (ignored when empty).
//! * `write` pushes `data_in` (ignored when `full`).
//! * `empty` falls one clock after the edge that wrote the first word (the
//!   RAM read is registered, so the read side sees a one-clock-delayed write
//!   pointer).
//! * `count` = words written and not yet popped (for free-space decisions).
//!
//! The storage is a full-depth [`PRam`] (the Verilog of rust-hdl's `RAM`);
//! `BRAM = true` (`Fifo<D, N, NP1, true>`) maps it to block RAM
//! (`ram_style = "block"`, [`PRam::block`]) for a FIFO whose LUTRAM costs
//! more logic than its DP16KD is worth (deep and narrow ones); the
//! behaviour is the same.

use crate::common::pram::PRam;
use rust_hdl::prelude::*;

/// `N` address bits (depth `2^N`), `NP1 = N + 1`; `BRAM`: storage in block
/// RAM (module doc).
#[derive(LogicBlock)]
pub struct Fifo<D: Synth, const N: usize, const NP1: usize, const BRAM: bool = false> {
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
    /// `2^N`, the depth (rust-hdl cannot use a const generic in HDL).
    depth: Constant<Bits<NP1>>,
    ram: PRam<D, N>,
    wr_ptr: DFF<Bits<NP1>>,
    wr_ptr_d: DFF<Bits<NP1>>,
    rd_ptr: DFF<Bits<NP1>>,
    rd_next: Signal<Local, Bits<NP1>>,
    used: Signal<Local, Bits<NP1>>,
}

impl<D: Synth, const N: usize, const NP1: usize, const BRAM: bool> Default
    for Fifo<D, N, NP1, BRAM>
{
    fn default() -> Self {
        assert_eq!(NP1, N + 1);
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
            depth: Constant::new((1u64 << N).into()),
            ram: if BRAM {
                PRam::default().block()
            } else {
                PRam::default()
            },
            wr_ptr: Default::default(),
            wr_ptr_d: Default::default(),
            rd_ptr: Default::default(),
            rd_next: Default::default(),
            used: Default::default(),
        }
    }
}

impl<D: Synth, const N: usize, const NP1: usize, const BRAM: bool> Logic for Fifo<D, N, NP1, BRAM> {
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
        self.ram.read_address.next = self.rd_next.val().get_bits::<N>(0);
        self.data_out.next = self.ram.read_data.val();
        self.ram.write_address.next = self.wr_ptr.q.val().get_bits::<N>(0);
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

    /// Random pushes and pops against a `VecDeque` model.
    #[test]
    fn fifo_matches_model() {
        fifo_model::<false>();
    }

    /// The block-RAM FIFO: the same behaviour, and its memory declaration
    /// carries `ram_style = "block"` (the default one none).
    #[test]
    fn block_ram_fifo_matches_model_and_says_block() {
        fifo_model::<true>();
        let style = |v: Verilog| match v {
            Verilog::Custom(s) => s.contains("(* ram_style = \"block\" *)\nreg[15:0] mem[7:0];"),
            _ => panic!("custom Verilog"),
        };
        let b: Fifo<Bits<16>, 3, 4, true> = Default::default();
        let d: Fifo<Bits<16>, 3, 4> = Default::default();
        assert!(style(b.ram.hdl()));
        assert!(!style(d.ram.hdl()));
    }

    fn fifo_model<const BRAM: bool>() {
        let mut uut: Fifo<Bits<16>, 3, 4, BRAM> = Default::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.write.connect();
        uut.data_in.connect();
        uut.read.connect();
        uut.connect_all();
        let mut rng = Rng::new(7);
        let mut model = std::collections::VecDeque::new();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut seen_full = false;
        for cycle in 0..3000 {
            // Outputs after the last edge.
            let empty = uut.empty.val();
            let full = uut.full.val();
            seen_full |= full;
            assert_eq!(
                uut.count.val().to_u64() as usize,
                model.len(),
                "cycle {cycle}"
            );
            assert_eq!(full, model.len() == 8, "cycle {cycle}");
            if !empty {
                assert_eq!(uut.data_out.val().to_u64(), model[0], "cycle {cycle}");
            }
            // Phase-dependent rates so it both fills and drains.
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
            // The visibility delay: a word written at this edge shows one
            // clock later, so `empty` may lag the model by one cycle only.
            if uut.empty.val() && !model.is_empty() {
                let only_new = model.len() == 1 && w && !full;
                assert!(only_new, "cycle {cycle}: empty with old data");
            }
        }
        assert!(seen_full);
    }
}
