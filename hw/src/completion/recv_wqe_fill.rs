//! One *fill* of `recv_wqe`: a DMA read of 1..=`FILL_MAX` consecutive
//! receive WQEs of one QP, from its request to the end of its completion,
//! every beat handed on as a write of `recv_wqe`'s WQE buffer. `recv_wqe`
//! keeps two of them so that a second QP's WQEs are read while the first
//! read's completion is still on its way (one read in flight left a
//! 64-octet Send stream over 8 QPs waiting for receive WQEs: docs/sim.md,
//! "Message rate").
//!
//! * `start` (one clock, only while not `busy`) latches the read: bus
//!   address, WQE count, QP, first WQE index and its buffer slot. The
//!   request is offered (`req_*`) until taken; `issued` pulses then.
//! * Completion beats are this fill's when the parent says so (`mine`: the
//!   beat's tag is this fill's) and the request has gone: `take` is that
//!   beat. The even beat is held and written with the odd one after it
//!   (`wr_*`: buffer word `{qp, slot, word}`, two beats), so a buffer word
//!   is written once; beats past the requested length are not written.
//!   After a WQE's 16th beat the slot moves on, modulo `smask + 1`.
//! * The last beat ends the read: `done` until `ack`. `good` says the QP's
//!   buffer end may move to `pf_end` (the index after the last WQE read):
//!   not if the completion's length was not the read's (the host answered
//!   wrongly) or the QP was reconfigured while the read was in flight
//!   (`kill`).

use crate::completion::recv_wqe::QP_BITS;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RecvWqeFill {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- start (parent)
    pub start: Signal<In, Bit>,
    pub s_addr: Signal<In, Bits<64>>,
    /// WQEs to read (1..=`FILL_MAX`).
    pub s_n: Signal<In, Bits<8>>,
    pub s_qp: Signal<In, Bits<QP_BITS>>,
    /// Index of the first WQE read.
    pub s_start: Signal<In, Bits<32>>,
    /// Its buffer slot.
    pub s_slot: Signal<In, Bits<8>>,
    /// Buffer slots per QP, minus one.
    pub smask: Signal<In, Bits<8>>,
    /// The QP of this read was reconfigured (`Cfg`): fill no buffer.
    pub kill: Signal<In, Bit>,
    // ---- DMA request
    pub req_valid: Signal<Out, Bit>,
    pub req_ready: Signal<In, Bit>,
    pub req_addr: Signal<Out, Bits<64>>,
    pub req_len: Signal<Out, Bits<16>>,
    /// The request was taken this clock.
    pub issued: Signal<Out, Bit>,
    // ---- DMA completion (the shared beat; `mine`: its tag is this fill's)
    pub cpl_valid: Signal<In, Bit>,
    pub cpl_data: Signal<In, Bits<64>>,
    pub cpl_keep: Signal<In, Bits<4>>,
    pub cpl_last: Signal<In, Bit>,
    pub mine: Signal<In, Bit>,
    /// This clock's completion beat belongs to this read.
    pub take: Signal<Out, Bit>,
    // ---- WQE buffer write
    pub wr_en: Signal<Out, Bit>,
    pub wr_qp: Signal<Out, Bits<QP_BITS>>,
    pub wr_slot: Signal<Out, Bits<8>>,
    pub wr_word: Signal<Out, Bits<3>>,
    pub wr_data: Signal<Out, Bits<128>>,
    // ---- state
    pub busy: Signal<Out, Bit>,
    pub qp: Signal<Out, Bits<QP_BITS>>,
    /// WQEs this read covers.
    pub n: Signal<Out, Bits<8>>,
    /// The read is over (until `ack`); `good`: the QP's buffer now ends at
    /// `pf_end`.
    pub done: Signal<Out, Bit>,
    pub good: Signal<Out, Bit>,
    pub pf_end: Signal<Out, Bits<32>>,
    pub ack: Signal<In, Bit>,
    f_busy: DFF<Bit>,
    f_req: DFF<Bit>,
    f_done: DFF<Bit>,
    f_bad: DFF<Bit>,
    f_kill: DFF<Bit>,
    f_addr: DFF<Bits<64>>,
    f_len: DFF<Bits<16>>,
    f_qp: DFF<Bits<QP_BITS>>,
    f_start: DFF<Bits<32>>,
    f_n: DFF<Bits<8>>,
    f_slot: DFF<Bits<8>>,
    f_beat: DFF<Bits<4>>,
    f_cnt: DFF<Bits<12>>,
    f_lim: DFF<Bits<12>>,
    /// The even beat, written with the odd one after it.
    f_even: DFF<Bits<64>>,
}

impl Logic for RecvWqeFill {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, f_busy, f_req, f_done, f_bad, f_kill, f_addr, f_len, f_qp, f_start, f_n,
            f_slot, f_beat, f_cnt, f_lim, f_even
        );
        self.req_valid.next = self.f_req.q.val();
        self.req_addr.next = self.f_addr.q.val();
        self.req_len.next = self.f_len.q.val();
        self.issued.next = self.f_req.q.val() & self.req_ready.val();
        self.busy.next = self.f_busy.q.val();
        self.qp.next = self.f_qp.q.val();
        self.n.next = self.f_n.q.val();
        self.done.next = self.f_done.q.val();
        self.good.next = !self.f_kill.q.val() & !self.f_bad.q.val();
        self.pf_end.next = self.f_start.q.val() + bit_cast::<32, 8>(self.f_n.q.val());
        self.take.next = self.f_busy.q.val()
            & !self.f_req.q.val()
            & !self.f_done.q.val()
            & self.cpl_valid.val()
            & self.mine.val();
        self.wr_qp.next = self.f_qp.q.val();
        self.wr_slot.next = self.f_slot.q.val();
        self.wr_word.next = self.f_beat.q.val().get_bits::<3>(1);
        self.wr_data.next = (bit_cast::<128, 64>(self.cpl_data.val()) << 64)
            | bit_cast::<128, 64>(self.f_even.q.val());
        self.wr_en.next = false;

        if self.issued.val() {
            self.f_req.d.next = false;
        }
        if self.kill.val() & self.f_busy.q.val() {
            self.f_kill.d.next = true;
        }
        if self.take.val() {
            self.f_even.d.next = self.cpl_data.val();
            self.wr_en.next =
                self.f_beat.q.val().get_bit(0) & (self.f_cnt.q.val() < self.f_lim.q.val());
            self.f_beat.d.next = self.f_beat.q.val() + 1;
            if self.f_beat.q.val() == 15 {
                self.f_slot.d.next = (self.f_slot.q.val() + 1) & self.smask.val();
            }
            self.f_cnt.d.next = self.f_cnt.q.val() + 1;
            if self.cpl_last.val() {
                self.f_done.d.next = true;
                if ((self.f_cnt.q.val() + 1) != self.f_lim.q.val()) | (self.cpl_keep.val() != 8) {
                    self.f_bad.d.next = true;
                }
            }
        }
        if self.f_done.q.val() & self.ack.val() {
            self.f_done.d.next = false;
            self.f_busy.d.next = false;
        }
        if self.start.val() {
            self.f_busy.d.next = true;
            self.f_req.d.next = true;
            self.f_done.d.next = false;
            self.f_bad.d.next = false;
            self.f_kill.d.next = false;
            self.f_addr.d.next = self.s_addr.val();
            self.f_len.d.next = bit_cast::<16, 8>(self.s_n.val()) << 7;
            self.f_qp.d.next = self.s_qp.val();
            self.f_start.d.next = self.s_start.val();
            self.f_n.d.next = self.s_n.val();
            self.f_slot.d.next = self.s_slot.val();
            self.f_beat.d.next = 0.into();
            self.f_cnt.d.next = 0.into();
            self.f_lim.d.next = bit_cast::<12, 8>(self.s_n.val()) << 4;
        }
        if self.reset.val() {
            self.f_busy.d.next = false;
            self.f_req.d.next = false;
            self.f_done.d.next = false;
        }
    }
}
