//! Inline payload reads: answers `TxSeg`'s payload reads of an inline WQE
//! (`abi::wqe::WQE_FLAG_INLINE`) from the WQE itself, which `WqeFetch`
//! holds, instead of from host memory; every other read passes to the DMA
//! read arbiter unchanged.
//!
//! An inline message lives in its WQE's SGE area, in the send ring, so it
//! has a bus address (`inl_addr`: the held WQE's bus address + 32) and
//! `TxSeg` treats it as one SGE at that address: its segments' reads and
//! the `tx_log` records carry bus addresses inside the ring, and a
//! retransmission re-reads the ring (the slot is not reused before the
//! WQE's completion, which waits for the peer's ACK: `send_cpl`). What
//! this block saves is the first read's DMA round trip, a small message's
//! largest cost after the WQE fetch (docs/sim.md, "Where a small Write's
//! latency goes").
//!
//! * Request (`up_req_*`, valid/ready): `up_req_inl` high marks a read of
//!   the inline message (`TxSeg` holds an inline WQE). It is taken when no
//!   inline read is being answered; the message (`inl_data`, 96 octets) is
//!   copied then, so the WQE may be popped while its answer still streams.
//!   Other reads go out on `dn_req_valid` with `up_req_ready` =
//!   `dn_req_ready` (address, length and tag are wired past the block).
//! * Answer: `len` octets from octet `off = addr - inl_addr` (mod 128) of the message,
//!   as completion beats with the request's tag (`keep` a byte count: 8 on
//!   every beat but the last, DMA read contract), one per clock in which
//!   the arbiter delivers no completion of its own (`dn_cpl_valid` has
//!   priority: `TxSeg` takes a completion in every clock and never holds
//!   one). The message is first moved down `off / 8` beats, one per clock;
//!   then each beat is two message beats shifted by `off mod 8` octets.
//! * A read beyond the message (`off + len > 96`, which `TxSeg` never asks
//!   for: its segments lie inside the WQE's inline length) gets zeros for
//!   the octets past it, never another WQE's.
use rust_hdl::prelude::*;

/// Octets of the inline message area (`abi::wqe::MAX_INLINE_DATA`).
pub const INLINE_AREA: usize = rnic_wire::abi::wqe::MAX_INLINE_DATA;
const _: () = assert!(INLINE_AREA == 96);

#[derive(LogicBlock, Default)]
pub struct InlineRd {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Payload read requests from `TxSeg`.
    pub up_req_valid: Signal<In, Bit>,
    pub up_req_ready: Signal<Out, Bit>,
    pub up_req_inl: Signal<In, Bit>,
    /// The read's bus address mod 128 (all the block needs: the offset
    /// into a 96-octet message).
    pub up_req_lo: Signal<In, Bits<7>>,
    pub up_req_len: Signal<In, Bits<16>>,
    pub up_req_tag: Signal<In, Bits<8>>,
    // The same, toward the DMA read arbiter (non-inline reads only).
    pub dn_req_valid: Signal<Out, Bit>,
    pub dn_req_ready: Signal<In, Bit>,
    // The held WQE's inline message and its bus address mod 128
    // (`WqeFetch`).
    pub inl_lo: Signal<In, Bits<7>>,
    pub inl_data: Signal<In, Bits<768>>,
    // Completions from the arbiter, and the merged stream to `TxSeg`.
    pub dn_cpl_valid: Signal<In, Bit>,
    pub dn_cpl_data: Signal<In, Bits<64>>,
    pub dn_cpl_keep: Signal<In, Bits<4>>,
    pub dn_cpl_last: Signal<In, Bit>,
    pub dn_cpl_tag: Signal<In, Bits<8>>,
    pub up_cpl_valid: Signal<Out, Bit>,
    pub up_cpl_data: Signal<Out, Bits<64>>,
    pub up_cpl_keep: Signal<Out, Bits<4>>,
    pub up_cpl_last: Signal<Out, Bit>,
    pub up_cpl_tag: Signal<Out, Bits<8>>,
    /// An inline read is being answered.
    busy: DFF<Bit>,
    /// The message, moved down as it is sent (beat 0 in the low bits).
    msg: DFF<Bits<768>>,
    /// Whole beats still to drop before the first octet (`off / 8`).
    skip: DFF<Bits<4>>,
    /// Octet shift within a beat (`off mod 8`), in bits.
    fine: DFF<Bits<8>>,
    /// Octets still to send.
    rem: DFF<Bits<16>>,
    tag: DFF<Bits<8>>,
    /// `addr - inl_addr` mod 128 (the message is 96 octets).
    off: Signal<Local, Bits<7>>,
    take: Signal<Local, Bit>,
    emit: Signal<Local, Bit>,
    pair: Signal<Local, Bits<128>>,
}

impl Logic for InlineRd {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, busy, msg, skip, fine, rem, tag);
        // Requests: inline ones here, the others to the arbiter.
        self.off.next = self.up_req_lo.val() - self.inl_lo.val();
        self.dn_req_valid.next = self.up_req_valid.val() & !self.up_req_inl.val();
        self.up_req_ready.next = self.dn_req_ready.val();
        if self.up_req_inl.val() {
            self.up_req_ready.next = !self.busy.q.val();
        }
        self.take.next = self.up_req_valid.val() & self.up_req_inl.val() & !self.busy.q.val();
        // Answer beats: after the coarse move, in clocks the arbiter leaves.
        self.emit.next = self.busy.q.val() & (self.skip.q.val() == 0) & !self.dn_cpl_valid.val();
        self.pair.next = self.msg.q.val().get_bits::<128>(0) >> self.fine.q.val();
        self.up_cpl_valid.next = self.dn_cpl_valid.val() | self.emit.val();
        self.up_cpl_data.next = self.dn_cpl_data.val();
        self.up_cpl_keep.next = self.dn_cpl_keep.val();
        self.up_cpl_last.next = self.dn_cpl_last.val();
        self.up_cpl_tag.next = self.dn_cpl_tag.val();
        if self.emit.val() {
            self.up_cpl_data.next = self.pair.val().get_bits::<64>(0);
            self.up_cpl_keep.next = 8.into();
            self.up_cpl_last.next = self.rem.q.val() <= 8;
            if self.rem.q.val() <= 8 {
                self.up_cpl_keep.next = self.rem.q.val().get_bits::<4>(0);
            }
            self.up_cpl_tag.next = self.tag.q.val();
        }
        if self.busy.q.val() & ((self.skip.q.val() != 0) | self.emit.val()) {
            self.msg.d.next = self.msg.q.val() >> 64;
        }
        if self.busy.q.val() & (self.skip.q.val() != 0) {
            self.skip.d.next = self.skip.q.val() - 1;
        }
        if self.emit.val() {
            self.rem.d.next = self.rem.q.val() - 8;
            if self.rem.q.val() <= 8 {
                self.busy.d.next = false;
            }
        }
        if self.take.val() {
            // (a zero-length read has no beat: `TxSeg` issues none)
            self.busy.d.next = self.up_req_len.val().any();
            self.msg.d.next = self.inl_data.val();
            self.skip.d.next = self.off.val().get_bits::<4>(3);
            self.fine.d.next = bit_cast::<8, 3>(self.off.val().get_bits::<3>(0)) << 3;
            self.rem.d.next = self.up_req_len.val();
            self.tag.d.next = self.up_req_tag.val();
        }
        if self.reset.val() {
            self.busy.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    fn uut() -> InlineRd {
        let mut u = InlineRd::default();
        u.clock.connect();
        u.reset.connect();
        u.up_req_valid.connect();
        u.up_req_inl.connect();
        u.up_req_lo.connect();
        u.up_req_len.connect();
        u.up_req_tag.connect();
        u.dn_req_ready.connect();
        u.inl_lo.connect();
        u.inl_data.connect();
        u.dn_cpl_valid.connect();
        u.dn_cpl_data.connect();
        u.dn_cpl_keep.connect();
        u.dn_cpl_last.connect();
        u.dn_cpl_tag.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u
    }

    fn area(msg: &[u8; INLINE_AREA]) -> Bits<768> {
        let mut b = Bits::<768>::default();
        for (i, &x) in msg.iter().enumerate() {
            b = b | (bit_cast::<768, 8>(Bits::<8>::from(x as u64)) << bits::<16>(8 * i as u64));
        }
        b
    }

    /// Random inline reads (every offset and length inside the message,
    /// and some past its end) interleaved with random arbiter completions:
    /// each inline read's beats are the message's octets `off..off + len`
    /// (zeros past the area), with its tag, a byte count `keep` and `last`
    /// on the final beat; every arbiter beat passes unchanged in its clock;
    /// non-inline requests go to the arbiter and only they.
    #[test]
    fn answers_from_the_message_and_passes_the_rest() {
        let mut u = uut();
        let mut rng = Rng::new(41);
        let base = 0x1234_5000_0020u64;
        for round in 0..300 {
            let mut msg = [0u8; INLINE_AREA];
            for x in msg.iter_mut() {
                *x = rng.below(256) as u8;
            }
            let off = rng.below(INLINE_AREA as u64) as usize;
            let len = if round % 10 == 9 {
                1 + rng.below(24) as usize + (INLINE_AREA - off)
            } else {
                1 + rng.below((INLINE_AREA - off) as u64) as usize
            };
            let tag = 0x80 | rng.below(4);
            let want: Vec<u8> = (off..off + len)
                .map(|i| msg.get(i).copied().unwrap_or(0))
                .collect();
            u.inl_lo.next = (base & 127).into();
            u.inl_data.next = area(&msg);
            // A non-inline request first: to the arbiter, with its ready.
            u.up_req_valid.next = true;
            u.up_req_inl.next = false;
            u.dn_req_ready.next = rng.below(2) == 0;
            assert!(simulate(&mut u, 1000));
            assert!(u.dn_req_valid.val());
            assert_eq!(u.up_req_ready.val(), u.dn_req_ready.val());
            // The inline one.
            u.up_req_inl.next = true;
            u.up_req_lo.next = ((base + off as u64) & 127).into();
            u.up_req_len.next = (len as u64).into();
            u.up_req_tag.next = tag.into();
            assert!(simulate(&mut u, 1000));
            assert!(
                !u.dn_req_valid.val(),
                "an inline read never reaches the arbiter"
            );
            assert!(u.up_req_ready.val());
            tick!(u);
            u.up_req_valid.next = false;
            // The message may change once the request is taken.
            u.inl_data.next = Bits::<768>::default();
            let mut got = Vec::new();
            let mut clocks = 0;
            loop {
                let dn = rng.below(3) == 0;
                let d = rng.below(1 << 32);
                u.dn_cpl_valid.next = dn;
                u.dn_cpl_data.next = d.into();
                u.dn_cpl_keep.next = 8.into();
                u.dn_cpl_last.next = false;
                u.dn_cpl_tag.next = 0x81.into();
                assert!(simulate(&mut u, 1000));
                assert!(u.up_cpl_valid.val() || !dn);
                if dn {
                    assert_eq!(u.up_cpl_data.val().to_u64(), d, "the arbiter's beat passes");
                    assert_eq!(u.up_cpl_tag.val().to_u64(), 0x81);
                } else if u.up_cpl_valid.val() {
                    assert_eq!(u.up_cpl_tag.val().to_u64(), tag);
                    let k = u.up_cpl_keep.val().to_u64() as usize;
                    let last = u.up_cpl_last.val();
                    assert!((1..=8).contains(&k) && (last || k == 8));
                    let data = u.up_cpl_data.val().to_u64().to_le_bytes();
                    got.extend_from_slice(&data[..k]);
                    if last {
                        tick!(u);
                        break;
                    }
                }
                tick!(u);
                clocks += 1;
                assert!(clocks < 200, "no end of the answer");
            }
            assert_eq!(got, want, "off {off} len {len}");
            u.dn_cpl_valid.next = false;
            assert!(simulate(&mut u, 1000));
            assert!(!u.up_cpl_valid.val(), "nothing after the last beat");
        }
    }
}
