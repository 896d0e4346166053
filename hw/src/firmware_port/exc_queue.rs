//! Exception queue: whole frames for the firmware, with a reason code and a
//! connection index, in the shape of the firmware port's `EXC_*` registers
//! (`rnic_wire::abi::context::port`).
//!
//! * Storage: [`SLOTS`] slots of 2 KiB (256 beats) in one RAM
//!   (4 x 2 KiB = 8 KiB), plus a FIFO of {reason, conn, length} records.
//! * Write side (from `rx_parse`, no backpressure): every frame's beats are
//!   written into the next free slot as they come; on the `last` beat,
//!   `in_commit` decides whether the frame is queued (record pushed, slot
//!   taken) or forgotten (the slot is reused by the next frame). A frame that
//!   starts while all slots are taken is not stored; if it is then
//!   committed it is counted in `cnt_full` (the firmware was too slow; TCP
//!   retransmits). Frames longer than 2 KiB keep their first 2 KiB and report
//!   their full length.
//! * Read side: `head_valid`, `head_reason`, `head_len`, `head_conn` describe
//!   the oldest frame (`EXC_STATUS` = `valid << 31 | reason << 16 | len`,
//!   `EXC_CONN`); `rd_word` (32-bit word index in the frame: `EXC_DATA`
//!   window offset / 4) gives `rd_data` = frame bytes `4*rd_word ..
//!   4*rd_word + 4`, the first in bits 7:0, **one clock later**; `pop`
//!   (`EXC_POP`) drops the head; `count` = frames queued (0..=4).

use crate::common::fifo::Fifo;
use rust_hdl::prelude::*;

/// Number of frame slots.
pub const SLOTS: u64 = 4;
/// Bytes per slot (the `EXC_DATA` window, `port::FRAME_WINDOW`).
pub const SLOT_BYTES: u64 = 2048;
pub const SLOT_BEATS: u64 = SLOT_BYTES / 8;

#[derive(LogicBlock, Default)]
pub struct ExcQueue {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_commit: Signal<In, Bit>,
    pub in_reason: Signal<In, Bits<8>>,
    pub in_conn: Signal<In, Bits<32>>,
    pub head_valid: Signal<Out, Bit>,
    pub head_reason: Signal<Out, Bits<8>>,
    pub head_len: Signal<Out, Bits<16>>,
    pub head_conn: Signal<Out, Bits<32>>,
    pub rd_word: Signal<In, Bits<9>>,
    pub rd_data: Signal<Out, Bits<32>>,
    pub pop: Signal<In, Bit>,
    pub count: Signal<Out, Bits<3>>,
    /// Frames queued.
    pub cnt_queued: Signal<Out, Bits<32>>,
    /// Frames to be queued but lost for lack of a slot.
    pub cnt_full: Signal<Out, Bits<32>>,
    ram: RAM<Bits<64>, 10>,
    /// {len[55:40], conn[39:8], reason[7:0]}
    meta: Fifo<Bits<56>, 2, 3>,
    wslot: DFF<Bits<2>>,
    rslot: DFF<Bits<2>>,
    mid: DFF<Bit>,
    accepting: DFF<Bit>,
    wbeat: DFF<Bits<9>>,
    wlen: DFF<Bits<16>>,
    rd_hi: DFF<Bit>,
    c_queued: DFF<Bits<32>>,
    c_full: DFF<Bits<32>>,
    acc: Signal<Local, Bit>,
    bi: Signal<Local, Bits<9>>,
    len: Signal<Local, Bits<16>>,
}

impl Logic for ExcQueue {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, meta);
        dff_setup!(self, clock, wslot, rslot, mid, accepting, wbeat, wlen, rd_hi, c_queued, c_full);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.meta.reset.next = self.reset.val();

        // ---- write side
        if self.mid.q.val() {
            self.acc.next = self.accepting.q.val();
            self.bi.next = self.wbeat.q.val();
            self.len.next = self.wlen.q.val() + bit_cast::<16, 4>(self.in_keep.val());
        } else {
            self.acc.next = !self.meta.full.val();
            self.bi.next = 0.into();
            self.len.next = bit_cast::<16, 4>(self.in_keep.val());
        }
        self.ram.write_address.next = (bit_cast::<10, 2>(self.wslot.q.val()) << 8)
            | bit_cast::<10, 8>(self.bi.val().get_bits::<8>(0));
        self.ram.write_data.next = self.in_data.val();
        self.ram.write_enable.next = self.in_valid.val() & self.acc.val() & (self.bi.val() < 256); // SLOT_BEATS
        self.meta.data_in.next = (bit_cast::<56, 16>(self.len.val()) << 40)
            | (bit_cast::<56, 32>(self.in_conn.val()) << 8)
            | bit_cast::<56, 8>(self.in_reason.val());
        self.meta.write.next = false;
        if self.in_valid.val() {
            self.mid.d.next = !self.in_last.val();
            self.accepting.d.next = self.acc.val();
            self.wlen.d.next = self.len.val();
            if self.bi.val() < 256 {
                // SLOT_BEATS
                self.wbeat.d.next = self.bi.val() + 1;
            } else {
                self.wbeat.d.next = self.bi.val();
            }
            if self.in_last.val() & self.in_commit.val() {
                if self.acc.val() {
                    self.meta.write.next = true;
                    self.wslot.d.next = self.wslot.q.val() + 1;
                    self.c_queued.d.next = self.c_queued.q.val() + 1;
                } else {
                    self.c_full.d.next = self.c_full.q.val() + 1;
                }
            }
        }

        // ---- read side
        self.head_valid.next = !self.meta.empty.val();
        self.head_reason.next = self.meta.data_out.val().get_bits::<8>(0);
        self.head_conn.next = self.meta.data_out.val().get_bits::<32>(8);
        self.head_len.next = self.meta.data_out.val().get_bits::<16>(40);
        self.meta.read.next = self.pop.val();
        if self.pop.val() & !self.meta.empty.val() {
            self.rslot.d.next = self.rslot.q.val() + 1;
        }
        self.ram.read_address.next = (bit_cast::<10, 2>(self.rslot.q.val()) << 8)
            | bit_cast::<10, 8>(self.rd_word.val().get_bits::<8>(1));
        self.rd_hi.d.next = self.rd_word.val().get_bit(0);
        self.count.next = self.meta.count.val();
        if self.rd_hi.q.val() {
            self.rd_data.next = self.ram.read_data.val().get_bits::<32>(32);
        } else {
            self.rd_data.next = self.ram.read_data.val().get_bits::<32>(0);
        }
        self.cnt_queued.next = self.c_queued.q.val();
        self.cnt_full.next = self.c_full.q.val();

        if self.reset.val() {
            self.wslot.d.next = 0.into();
            self.rslot.d.next = 0.into();
            self.mid.d.next = false;
            self.c_queued.d.next = 0.into();
            self.c_full.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{beats, tick, Rng};

    /// Frames in, some committed; the committed ones read back whole, with
    /// their records, in order; a full queue counts its losses.
    #[test]
    fn commit_read_pop() {
        let mut u = ExcQueue::default();
        u.clock.connect();
        u.reset.connect();
        u.in_data.connect();
        u.in_keep.connect();
        u.in_last.connect();
        u.in_valid.connect();
        u.in_commit.connect();
        u.in_reason.connect();
        u.in_conn.connect();
        u.rd_word.connect();
        u.pop.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        let mut rng = Rng::new(4);
        let frames: Vec<Vec<u8>> = (0..7).map(|i| rng.bytes(20 + 37 * i)).collect();
        // frames 1 and 4 are not committed; 7 frames, 5 committed, 4 slots
        for (i, f) in frames.iter().enumerate() {
            let b = beats(f);
            let n = b.len();
            for (j, (d, k)) in b.into_iter().enumerate() {
                u.in_data.next = d.into();
                u.in_keep.next = (k as u64).into();
                u.in_last.next = j + 1 == n;
                u.in_valid.next = true;
                u.in_commit.next = i != 1 && i != 4;
                u.in_reason.next = (i as u64).into();
                u.in_conn.next = (100 + i as u64).into();
                tick!(u);
            }
        }
        u.in_valid.next = false;
        tick!(u);
        assert_eq!(u.cnt_queued.val().to_u64(), 4);
        assert_eq!(u.cnt_full.val().to_u64(), 1);
        for want in [0usize, 2, 3, 5] {
            assert!(u.head_valid.val());
            assert_eq!(u.head_reason.val().to_u64(), want as u64);
            assert_eq!(u.head_conn.val().to_u64(), 100 + want as u64);
            let len = u.head_len.val().to_u64() as usize;
            assert_eq!(len, frames[want].len());
            let mut got = Vec::new();
            for w in 0..len.div_ceil(4) {
                u.rd_word.next = (w as u64).into();
                tick!(u);
                got.extend_from_slice(&(u.rd_data.val().to_u64() as u32).to_le_bytes());
            }
            got.truncate(len);
            assert_eq!(got, frames[want]);
            u.pop.next = true;
            tick!(u);
            u.pop.next = false;
        }
        assert!(!u.head_valid.val());
    }
}
