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

use rust_hdl::prelude::*;

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
    fifo: AsynchronousFIFO<Bits<70>, 5, 6, 1>,
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
