//! Clock-domain crossing of a MAC receive stream (no `ready`) from the PHY's
//! receive clock into the core clock, through rust-hdl's
//! `AsynchronousFIFO` (32 entries of {fcs_bad, last, keep, data}). At
//! 1 Gb/s a beat arrives at most every 8 receive clocks and leaves at one
//! per core clock, so the FIFO holds at most a few entries; if it ever
//! fills, `overflow` (core clock, sticky until reset) is raised and beats
//! are lost.
//!
//! rust-hdl's asynchronous FIFO has no reset port (its pointers start from
//! their `initial` values, which the ECP5 bitstream sets).
//!
//! The FIFO is [`AsyncFifoB`]: rust-hdl's `AsynchronousFIFO` (the same read
//! and write logic and pointer synchronisers) with its 32 x 70 storage in
//! block RAM (`ram_style = "block"`: 2 DP16KD instead of 36 TRELLIS_DPR16X4,
//! ~290 TRELLIS_COMB; docs/fpga.md "Measured size and Fmax"). A DP16KD's two
//! ports have their own clocks, as the FIFO's RAM.

use crate::pram::PRam;
use rust_hdl::prelude::*;
use rust_hdl::widgets::fifo::fifo_logic::{FIFOReadLogic, FIFOWriteLogic};

/// rust-hdl's `AsynchronousFIFO<D, N, NP1, 1>` (the same ports) on a
/// [`PRam::block`]: the write side on `write_clock`, the read side on
/// `read_clock`, first-word fall-through.
#[derive(LogicBlock)]
pub struct AsyncFifoB<D: Synth, const N: usize, const NP1: usize> {
    pub read: Signal<In, Bit>,
    pub data_out: Signal<Out, D>,
    pub empty: Signal<Out, Bit>,
    pub almost_empty: Signal<Out, Bit>,
    pub underflow: Signal<Out, Bit>,
    pub read_clock: Signal<In, Clock>,
    pub read_fill: Signal<Out, Bits<NP1>>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, D>,
    pub full: Signal<Out, Bit>,
    pub almost_full: Signal<Out, Bit>,
    pub overflow: Signal<Out, Bit>,
    pub write_clock: Signal<In, Clock>,
    pub write_fill: Signal<Out, Bits<NP1>>,
    ram: PRam<D, N>,
    read_logic: FIFOReadLogic<D, N, NP1, 1>,
    write_logic: FIFOWriteLogic<D, N, NP1, 1>,
    write_to_read: VectorSynchronizer<Bits<NP1>>,
    read_to_write: VectorSynchronizer<Bits<NP1>>,
}

impl<D: Synth, const N: usize, const NP1: usize> Default for AsyncFifoB<D, N, NP1> {
    fn default() -> Self {
        Self {
            read: Default::default(),
            data_out: Default::default(),
            empty: Default::default(),
            almost_empty: Default::default(),
            underflow: Default::default(),
            read_clock: Default::default(),
            read_fill: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            full: Default::default(),
            almost_full: Default::default(),
            overflow: Default::default(),
            write_clock: Default::default(),
            write_fill: Default::default(),
            ram: PRam::default().block(),
            read_logic: Default::default(),
            write_logic: Default::default(),
            write_to_read: Default::default(),
            read_to_write: Default::default(),
        }
    }
}

impl<D: Synth, const N: usize, const NP1: usize> Logic for AsyncFifoB<D, N, NP1> {
    #[hdl_gen]
    fn update(&mut self) {
        // (rust-hdl 0.46 `AsynchronousFIFO::update`.)
        self.read_logic.clock.next = self.read_clock.val();
        self.read_logic.read.next = self.read.val();
        self.empty.next = self.read_logic.empty.val();
        self.almost_empty.next = self.read_logic.almost_empty.val();
        self.data_out.next = self.read_logic.data_out.val();
        self.underflow.next = self.read_logic.underflow.val();
        self.write_logic.clock.next = self.write_clock.val();
        self.overflow.next = self.write_logic.overflow.val();
        self.almost_full.next = self.write_logic.almost_full.val();
        self.full.next = self.write_logic.full.val();
        self.write_logic.write.next = self.write.val();
        self.write_logic.data_in.next = self.data_in.val();
        self.ram.write_clock.next = self.write_logic.ram_write_clock.val();
        self.ram.write_enable.next = self.write_logic.ram_write_enable.val();
        self.ram.write_address.next = self.write_logic.ram_write_address.val();
        self.ram.write_data.next = self.write_logic.ram_write_data.val();
        self.ram.read_clock.next = self.read_logic.ram_read_clock.val();
        self.ram.read_address.next = self.read_logic.ram_read_address.val();
        self.read_logic.ram_read_data.next = self.ram.read_data.val();
        self.read_to_write.clock_in.next = self.read_clock.val();
        self.read_to_write.clock_out.next = self.write_clock.val();
        self.read_to_write.sig_in.next = self.read_logic.read_address_out.val();
        self.write_logic.read_address.next = self.read_to_write.sig_out.val();
        self.read_to_write.send.next = !self.read_to_write.busy.val();
        self.write_to_read.clock_in.next = self.write_clock.val();
        self.write_to_read.clock_out.next = self.read_clock.val();
        self.write_to_read.sig_in.next = self.write_logic.write_address_delayed.val();
        self.read_logic.write_address_delayed.next = self.write_to_read.sig_out.val();
        self.write_to_read.send.next = !self.write_to_read.busy.val();
        self.write_fill.next = self.write_logic.fill_level.val();
        self.read_fill.next = self.read_logic.fill_level.val();
    }
}

#[derive(LogicBlock, Default)]
pub struct RxCdc {
    pub wr_clock: Signal<In, Clock>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_fcs_bad: Signal<In, Bit>,
    pub rd_clock: Signal<In, Clock>,
    pub rd_reset: Signal<In, Bit>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_fcs_bad: Signal<Out, Bit>,
    pub overflow: Signal<Out, Bit>,
    fifo: AsyncFifoB<Bits<70>, 5, 6>,
    full_seen: BitSynchronizer,
    ovf: DFF<Bit>,
    word: Signal<Local, Bits<70>>,
}

impl Logic for RxCdc {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, rd_clock, ovf);
        self.fifo.write_clock.next = self.wr_clock.val();
        self.fifo.read_clock.next = self.rd_clock.val();
        self.full_seen.clock.next = self.rd_clock.val();
        self.word.next =
            bit_cast::<70, 64>(self.in_data.val()) | (bit_cast::<70, 4>(self.in_keep.val()) << 64);
        self.word.next = self.word.val().replace_bit(68, self.in_last.val());
        self.word.next = self.word.val().replace_bit(69, self.in_fcs_bad.val());
        self.fifo.data_in.next = self.word.val();
        self.fifo.write.next = self.in_valid.val();
        self.full_seen.sig_in.next = self.fifo.full.val() & self.in_valid.val();

        self.out_valid.next = !self.fifo.empty.val();
        self.fifo.read.next = !self.fifo.empty.val();
        self.out_data.next = self.fifo.data_out.val().get_bits::<64>(0);
        self.out_keep.next = self.fifo.data_out.val().get_bits::<4>(64);
        self.out_last.next = self.fifo.data_out.val().get_bit(68);
        self.out_fcs_bad.next = self.fifo.data_out.val().get_bit(69);
        if self.full_seen.sig_out.val() {
            self.ovf.d.next = true;
        }
        if self.rd_reset.val() {
            self.ovf.d.next = false;
        }
        self.overflow.next = self.ovf.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    /// Two unrelated clocks (write period 10, read period 6 or 22 time
    /// units): every word written while not full comes out once, in order,
    /// against a `VecDeque`; the RAM is declared `ram_style = "block"`.
    #[test]
    fn block_ram_async_fifo_keeps_order_across_clocks() {
        for (rp, seed) in [(3u64, 3u64), (11, 4)] {
            let mut u: AsyncFifoB<Bits<16>, 5, 6> = Default::default();
            u.read.connect();
            u.read_clock.connect();
            u.write.connect();
            u.data_in.connect();
            u.write_clock.connect();
            u.connect_all();
            let mut rng = Rng::new(seed);
            let mut model = std::collections::VecDeque::new();
            let (mut sent, mut got, mut fulls) = (0u64, 0u64, 0);
            let (mut wc, mut rc) = (false, false);
            for t in 0..200_000u64 {
                let wedge = t % 5 == 0;
                let redge = t % rp == 0;
                if wedge {
                    wc = !wc;
                    if wc {
                        // rising write edge: decide with the settled flags
                        if u.write.val() && !u.full.val() {
                            model.push_back(u.data_in.val().to_u64());
                        }
                        fulls += u.full.val() as usize;
                    }
                }
                if redge {
                    rc = !rc;
                    if rc && u.read.val() && !u.empty.val() {
                        let w = model.pop_front().expect("a word never written");
                        assert_eq!(u.data_out.val().to_u64(), w, "word {got}");
                        got += 1;
                    }
                }
                u.write_clock.next = wc.into();
                u.read_clock.next = rc.into();
                assert!(simulate(&mut u, 1000));
                if wedge && wc {
                    let w = rng.below(3) != 0;
                    u.write.next = w;
                    if w {
                        u.data_in.next = (sent & 0xFFFF).into();
                        sent += 1;
                    }
                }
                if redge && rc {
                    u.read.next = rng.below(2) == 0;
                }
                assert!(simulate(&mut u, 1000));
            }
            assert!(got > 1000, "{got} words read");
            assert!(rp < 10 || fulls > 0, "the slow reader never filled it");
        }
        let Verilog::Custom(s) = PRam::<Bits<70>, 5>::default().block().hdl() else {
            panic!()
        };
        assert!(s.contains("ram_style = \"block\""));
    }
}
