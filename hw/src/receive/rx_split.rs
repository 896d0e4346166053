//! Fast/slow split of parsed TCP segments.
//!
//! For each TCP segment `rx_parse` offers (`tuple_valid`, then `hdr_valid`)
//! the block looks the 4-tuple up in the connection table (local = the
//! segment's destination, peer = its source), then decides once, in this
//! order:
//!
//! | condition | result | reason (`ExceptionReason`) | conn |
//! |---|---|---|---|
//! | no used entry matches, or its mode is Free | exception | `NoMatch` (0) | none |
//! | mode is not Rdma (Firmware) | exception | `FirmwareMode` (1) | index |
//! | RST | exception | `Rst` (3) | index |
//! | SYN | exception | `Syn` (4) | index |
//! | FIN | exception | `Fin` (2) | index |
//! | SEG.SEQ != RCV.NXT, or SEG.LEN > RCV.WND | exception | `OutOfWindow` (5) | index |
//! | otherwise | fast path | | index |
//!
//! Only the in-order case is taken in hardware; the acceptability tests of
//! RFC 9293 §3.10.7.4 for everything else (old duplicates, partial overlap,
//! window probes) are the firmware's. A fast-path segment:
//! * advances `rcv_nxt` by its payload length (RFC 9293 §3.10.7.4, "seventh,
//!   process the segment text") and, if it carries payload, raises an ACK
//!   request `{conn, ack = new rcv_nxt}` for the TX side (a one-clock pulse;
//!   TX keeps a per-connection "ACK due" bit, so requests may coalesce);
//! * with ACK set and SND.UNA < SEG.ACK =< SND.NXT (modulo 2^32), sets
//!   `snd_una` to SEG.ACK (RFC 9293 §3.10.7.4, "fifth, check the ACK field");
//!   pure ACKs (no payload) are fast-path segments like any other;
//! * with ACK set and SND.UNA =< SEG.ACK =< SND.NXT, sets `snd_wnd` to
//!   SEG.WND << the peer's window scale (`snd_wscale` from the connection,
//!   at most 14; RFC 7323 §2.3) (RFC 9293 §3.10.7.4, "fifth": "If SND.UNA =<
//!   SEG.ACK =< SND.NXT, the send window should be updated"). The SND.WL1 /
//!   SND.WL2 test that guards against old segments is not kept: a fast-path
//!   segment has SEG.SEQ = RCV.NXT, which is never below the SEQ of an
//!   earlier fast-path segment (SND.WL1), and SEG.ACK >= SND.UNA >= every
//!   earlier accepted SEG.ACK (SND.WL2), so the test always holds here;
//!   segments out of order go to the firmware.
//!
//! The decision (`dec_*`) is held until `rx_parse` signals `done`. The
//! context write (`up_*`) is issued with the decision, so a following
//! segment of the same connection (whose lookup starts at least 5 clocks
//! later) reads the updated values. Decision latency: `dec_valid` rises 3
//! clocks after `tuple_valid` (lookup 2, decision register 1; the lookup
//! result is used in the clock it arrives), or 1 clock after `hdr_valid` if
//! that is later.

use rust_hdl::prelude::*;

/// `ExceptionReason` codes (rnic_wire::abi::context).
pub const REASON_NO_MATCH: u64 = 0;
pub const REASON_FIRMWARE_MODE: u64 = 1;
pub const REASON_FIN: u64 = 2;
pub const REASON_RST: u64 = 3;
pub const REASON_SYN: u64 = 4;
pub const REASON_OUT_OF_WINDOW: u64 = 5;
/// `ConnMode` codes (rnic_wire::abi::context).
pub const MODE_FREE: u64 = 0;
pub const MODE_RDMA: u64 = 2;
/// `EXC_CONN` for "no connection".
pub const CONN_NONE: u64 = 0xFFFF_FFFF;

#[derive(LogicBlock, Default)]
pub struct RxSplit {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // from rx_parse
    pub ip_src: Signal<In, Bits<32>>,
    pub ip_dst: Signal<In, Bits<32>>,
    pub sport: Signal<In, Bits<16>>,
    pub dport: Signal<In, Bits<16>>,
    pub tuple_valid: Signal<In, Bit>,
    pub seq: Signal<In, Bits<32>>,
    pub ack: Signal<In, Bits<32>>,
    /// TCP flags: FIN, SYN, RST, ACK (RFC 9293 §3.1).
    pub fin: Signal<In, Bit>,
    pub syn: Signal<In, Bit>,
    pub rst: Signal<In, Bit>,
    pub ack_flag: Signal<In, Bit>,
    pub pay_len: Signal<In, Bits<16>>,
    pub hdr_valid: Signal<In, Bit>,
    pub done: Signal<In, Bit>,
    // to rx_parse
    pub dec_valid: Signal<Out, Bit>,
    pub dec_fast: Signal<Out, Bit>,
    pub dec_reason: Signal<Out, Bits<8>>,
    pub dec_conn: Signal<Out, Bits<32>>,
    // connection table
    pub lk_valid: Signal<Out, Bit>,
    pub lk_local_ip: Signal<Out, Bits<32>>,
    pub lk_peer_ip: Signal<Out, Bits<32>>,
    pub lk_local_port: Signal<Out, Bits<16>>,
    pub lk_peer_port: Signal<Out, Bits<16>>,
    pub res_valid: Signal<In, Bit>,
    pub res_hit: Signal<In, Bit>,
    pub res_idx: Signal<In, Bits<8>>,
    pub res_mode: Signal<In, Bits<2>>,
    pub res_mpa: Signal<In, Bits<4>>,
    pub res_rcv_nxt: Signal<In, Bits<32>>,
    pub res_rcv_wnd: Signal<In, Bits<32>>,
    pub res_snd_una: Signal<In, Bits<32>>,
    pub res_snd_nxt: Signal<In, Bits<32>>,
    pub up_valid: Signal<Out, Bit>,
    pub up_idx: Signal<Out, Bits<8>>,
    pub up_rcv_nxt: Signal<Out, Bits<32>>,
    pub up_snd_una: Signal<Out, Bits<32>>,
    pub up_ready: Signal<In, Bit>,
    // to the TX side
    pub ack_req_valid: Signal<Out, Bit>,
    pub ack_req_conn: Signal<Out, Bits<8>>,
    pub ack_req_ack: Signal<Out, Bits<32>>,
    // sideband of the fast-path segment (valid while dec_valid)
    pub seg_conn: Signal<Out, Bits<8>>,
    pub seg_mpa: Signal<Out, Bits<4>>,
    pub cnt_fast: Signal<Out, Bits<32>>,
    /// SEG.WND (the TCP header's window field) with `hdr_valid`.
    pub window: Signal<In, Bits<16>>,
    /// The peer's window scale from the lookup (`snd_wscale`).
    pub res_snd_wscale: Signal<In, Bits<4>>,
    /// With `up_valid`: also write `snd_wnd = up_snd_wnd`.
    pub up_wnd_valid: Signal<Out, Bit>,
    pub up_snd_wnd: Signal<Out, Bits<32>>,
    /// For fast retransmit (`fast_retx`), with every fast-path decision
    /// (`dup_valid` = `up_valid`): the connection, SEG.WND (raw) and
    /// whether the segment is a duplicate ACK (RFC 5681 §2: ACK set, data
    /// outstanding (SND.NXT != SND.UNA), no payload, SEG.ACK == SND.UNA;
    /// SYN/FIN are never fast path; the window test is `fast_retx`'s).
    pub dup_valid: Signal<Out, Bit>,
    pub dup_conn: Signal<Out, Bits<8>>,
    pub dup_ack: Signal<Out, Bit>,
    pub dup_wnd: Signal<Out, Bits<16>>,
    // state
    looked: DFF<Bit>,
    have: DFF<Bit>,
    hit: DFF<Bit>,
    idx: DFF<Bits<8>>,
    mode: DFF<Bits<2>>,
    mpa: DFF<Bits<4>>,
    rcv_nxt: DFF<Bits<32>>,
    rcv_wnd: DFF<Bits<32>>,
    snd_una: DFF<Bits<32>>,
    snd_nxt: DFF<Bits<32>>,
    dv: DFF<Bit>,
    dfast: DFF<Bit>,
    dreason: DFF<Bits<8>>,
    dconn: DFF<Bits<32>>,
    c_fast: DFF<Bits<32>>,
    wsc: DFF<Bits<4>>,
    // temporaries
    c_have: Signal<Local, Bit>,
    c_hit: Signal<Local, Bit>,
    c_idx: Signal<Local, Bits<8>>,
    c_mode: Signal<Local, Bits<2>>,
    c_rcv_nxt: Signal<Local, Bits<32>>,
    c_rcv_wnd: Signal<Local, Bits<32>>,
    c_snd_una: Signal<Local, Bits<32>>,
    c_snd_nxt: Signal<Local, Bits<32>>,
    decide: Signal<Local, Bit>,
    /// Zero; its complement is `CONN_NONE` (an unsuffixed literal above
    /// 2^31 does not type-check in `hdl_gen`).
    zero32: Signal<Local, Bits<32>>,
    fast: Signal<Local, Bit>,
    reason: Signal<Local, Bits<8>>,
    new_nxt: Signal<Local, Bits<32>>,
    d_una: Signal<Local, Bits<32>>,
    d_nxt: Signal<Local, Bits<32>>,
    ack_ok: Signal<Local, Bit>,
    wnd_ok: Signal<Local, Bit>,
    c_wsc: Signal<Local, Bits<4>>,
}

impl Logic for RxSplit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, looked, have, hit, idx, mode, mpa, rcv_nxt, rcv_wnd, snd_una, snd_nxt, dv,
            dfast, dreason, dconn, c_fast, wsc
        );
        // ---- lookup, once per segment
        self.lk_valid.next = self.tuple_valid.val() & !self.looked.q.val();
        self.lk_local_ip.next = self.ip_dst.val();
        self.lk_peer_ip.next = self.ip_src.val();
        self.lk_local_port.next = self.dport.val();
        self.lk_peer_port.next = self.sport.val();
        if self.lk_valid.val() {
            self.looked.d.next = true;
        }
        if self.res_valid.val() {
            self.have.d.next = true;
            self.hit.d.next = self.res_hit.val() & (self.res_mode.val() != 0); // MODE_FREE
            self.idx.d.next = self.res_idx.val();
            self.mode.d.next = self.res_mode.val();
            self.mpa.d.next = self.res_mpa.val();
            self.rcv_nxt.d.next = self.res_rcv_nxt.val();
            self.rcv_wnd.d.next = self.res_rcv_wnd.val();
            self.snd_una.d.next = self.res_snd_una.val();
            self.snd_nxt.d.next = self.res_snd_nxt.val();
            self.wsc.d.next = self.res_snd_wscale.val();
        }

        // ---- the context: this clock's lookup result, or the held one
        self.c_have.next = self.have.q.val() | self.res_valid.val();
        self.c_hit.next = self.hit.q.val();
        self.c_idx.next = self.idx.q.val();
        self.c_mode.next = self.mode.q.val();
        self.c_rcv_nxt.next = self.rcv_nxt.q.val();
        self.c_rcv_wnd.next = self.rcv_wnd.q.val();
        self.c_snd_una.next = self.snd_una.q.val();
        self.c_snd_nxt.next = self.snd_nxt.q.val();
        self.c_wsc.next = self.wsc.q.val();
        if self.res_valid.val() {
            self.c_hit.next = self.res_hit.val() & (self.res_mode.val() != 0); // MODE_FREE
            self.c_idx.next = self.res_idx.val();
            self.c_mode.next = self.res_mode.val();
            self.c_rcv_nxt.next = self.res_rcv_nxt.val();
            self.c_rcv_wnd.next = self.res_rcv_wnd.val();
            self.c_snd_una.next = self.res_snd_una.val();
            self.c_snd_nxt.next = self.res_snd_nxt.val();
            self.c_wsc.next = self.res_snd_wscale.val();
        }
        // RFC 7323 §2.3: a shift count above 14 is used as 14.
        if self.c_wsc.val() > 14 {
            self.c_wsc.next = 14.into();
        }

        // ---- decision
        self.zero32.next = 0.into();
        self.new_nxt.next = self.c_rcv_nxt.val() + bit_cast::<32, 16>(self.pay_len.val());
        self.d_una.next = self.ack.val() - self.c_snd_una.val();
        self.d_nxt.next = self.c_snd_nxt.val() - self.ack.val();
        // SND.UNA < SEG.ACK =< SND.NXT in sequence space (RFC 9293 §3.4)
        self.ack_ok.next = self.ack_flag.val()
            & (self.d_una.val() != 0)
            & ((self.d_una.val() >> 31) == 0)
            & ((self.d_nxt.val() >> 31) == 0);
        // SND.UNA =< SEG.ACK =< SND.NXT: the window may be updated
        self.wnd_ok.next =
            self.ack_flag.val() & ((self.d_una.val() >> 31) == 0) & ((self.d_nxt.val() >> 31) == 0);
        self.fast.next = false;
        self.reason.next = 5.into(); // REASON_OUT_OF_WINDOW
        if !self.c_hit.val() {
            self.reason.next = 0.into(); // REASON_NO_MATCH
        } else if self.c_mode.val() != 2 {
            // MODE_RDMA
            self.reason.next = 1.into(); // REASON_FIRMWARE_MODE
        } else if self.rst.val() {
            self.reason.next = 3.into(); // REASON_RST
        } else if self.syn.val() {
            self.reason.next = 4.into(); // REASON_SYN
        } else if self.fin.val() {
            self.reason.next = 2.into(); // REASON_FIN
        } else if (self.seq.val() == self.c_rcv_nxt.val())
            & (bit_cast::<32, 16>(self.pay_len.val()) <= self.c_rcv_wnd.val())
        {
            self.fast.next = true;
        }
        self.decide.next = self.c_have.val()
            & self.hdr_valid.val()
            & !self.dv.q.val()
            & (self.up_ready.val() | !self.fast.val());
        self.up_valid.next = false;
        self.up_idx.next = self.c_idx.val();
        self.up_rcv_nxt.next = self.new_nxt.val();
        self.up_snd_una.next = self.c_snd_una.val();
        if self.ack_ok.val() {
            self.up_snd_una.next = self.ack.val();
        }
        self.up_wnd_valid.next = self.wnd_ok.val();
        self.up_snd_wnd.next = bit_cast::<32, 16>(self.window.val()) << self.c_wsc.val();
        self.dup_valid.next = false;
        self.dup_conn.next = self.c_idx.val();
        self.dup_wnd.next = self.window.val();
        self.dup_ack.next = self.ack_flag.val()
            & (self.pay_len.val() == 0)
            & (self.d_una.val() == 0)
            & (self.c_snd_nxt.val() != self.c_snd_una.val());
        self.ack_req_valid.next = false;
        self.ack_req_conn.next = self.c_idx.val();
        self.ack_req_ack.next = self.new_nxt.val();
        if self.decide.val() {
            self.dv.d.next = true;
            self.dfast.d.next = self.fast.val();
            self.dreason.d.next = self.reason.val();
            if self.c_hit.val() {
                self.dconn.d.next = bit_cast::<32, 8>(self.c_idx.val());
            } else {
                self.dconn.d.next = !self.zero32.val(); // CONN_NONE
            }
            if self.fast.val() {
                self.up_valid.next = true;
                self.dup_valid.next = true;
                self.ack_req_valid.next = self.pay_len.val() != 0;
                self.c_fast.d.next = self.c_fast.q.val() + 1;
            }
        }
        if self.done.val() {
            self.looked.d.next = false;
            self.have.d.next = false;
            self.dv.d.next = false;
        }

        self.dec_valid.next = self.dv.q.val();
        self.dec_fast.next = self.dfast.q.val();
        self.dec_reason.next = self.dreason.q.val();
        self.dec_conn.next = self.dconn.q.val();
        self.seg_conn.next = self.idx.q.val();
        self.seg_mpa.next = self.mpa.q.val();
        self.cnt_fast.next = self.c_fast.q.val();

        if self.reset.val() {
            self.looked.d.next = false;
            self.have.d.next = false;
            self.dv.d.next = false;
            self.c_fast.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    /// RFC 9293 §3.4: `a` =< `b` in sequence space.
    fn seq_le(a: u32, b: u32) -> bool {
        (b.wrapping_sub(a) as i32) >= 0
    }

    /// Random in-order segments against a model of RFC 9293 §3.10.7.4
    /// ("fifth, check the ACK field"): SND.UNA moves to SEG.ACK only when
    /// SND.UNA < SEG.ACK =< SND.NXT; SND.WND takes SEG.WND << min(scale, 14)
    /// (RFC 7323 §2.3) when SND.UNA =< SEG.ACK =< SND.NXT; RCV.NXT moves by
    /// the payload; an ACK request only with payload.
    #[test]
    fn ack_and_window_update_match_rfc() {
        let mut u = RxSplit::default();
        u.clock.connect();
        u.reset.connect();
        u.ip_src.connect();
        u.ip_dst.connect();
        u.sport.connect();
        u.dport.connect();
        u.tuple_valid.connect();
        u.seq.connect();
        u.ack.connect();
        u.fin.connect();
        u.syn.connect();
        u.rst.connect();
        u.ack_flag.connect();
        u.pay_len.connect();
        u.hdr_valid.connect();
        u.done.connect();
        u.res_valid.connect();
        u.res_hit.connect();
        u.res_idx.connect();
        u.res_mode.connect();
        u.res_mpa.connect();
        u.res_rcv_nxt.connect();
        u.res_rcv_wnd.connect();
        u.res_snd_una.connect();
        u.res_snd_nxt.connect();
        u.up_ready.connect();
        u.window.connect();
        u.res_snd_wscale.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        u.up_ready.next = true;
        let mut rng = Rng::new(5);
        let (mut una_moves, mut wnd_moves, mut dups) = (0, 0, 0);
        for _ in 0..300 {
            let una = rng.next_u64() as u32;
            // sometimes nothing outstanding (SND.NXT == SND.UNA)
            let nxt = una.wrapping_add(rng.below(100_000) as u32 * (rng.below(6) != 0) as u32);
            let rcv = rng.next_u64() as u32;
            let ack = match rng.below(6) {
                0 => una,
                1 => nxt,
                2 => nxt.wrapping_add(1),
                3 => una.wrapping_sub(1 + rng.below(1000) as u32),
                _ => una.wrapping_add(rng.below(100_001) as u32),
            };
            let ack_flag = rng.below(8) != 0;
            // pure ACKs (no payload) often
            let len = rng.below(1500) as u32 * (rng.below(3) != 0) as u32;
            let win = rng.next_u64() as u16;
            let wsc = rng.below(16) as u32;
            u.tuple_valid.next = true;
            u.hdr_valid.next = true;
            u.seq.next = (rcv as u64).into();
            u.ack.next = (ack as u64).into();
            u.ack_flag.next = ack_flag;
            u.pay_len.next = (len as u64).into();
            u.window.next = (win as u64).into();
            let mut up = None;
            for n in 0..12 {
                // the connection table answers 2 clocks after the lookup
                u.res_valid.next = n == 2;
                u.res_hit.next = true;
                u.res_idx.next = 9.into();
                u.res_mode.next = 2.into();
                u.res_rcv_nxt.next = (rcv as u64).into();
                u.res_rcv_wnd.next = 0x10000.into();
                u.res_snd_una.next = (una as u64).into();
                u.res_snd_nxt.next = (nxt as u64).into();
                u.res_snd_wscale.next = (wsc as u64).into();
                assert!(simulate(&mut u, 100));
                if u.up_valid.val() {
                    assert!(up.is_none(), "one update per segment");
                    up = Some((
                        u.up_snd_una.val().to_u64() as u32,
                        u.up_rcv_nxt.val().to_u64() as u32,
                        u.up_wnd_valid.val(),
                        u.up_snd_wnd.val().to_u64() as u32,
                        u.ack_req_valid.val(),
                    ));
                    assert!(u.dup_valid.val());
                    assert_eq!(u.dup_conn.val().to_u64(), 9);
                    assert_eq!(u.dup_wnd.val().to_u64(), win as u64);
                    // RFC 5681 §2 (a), (b), (d)
                    let want_dup = ack_flag && len == 0 && ack == una && nxt != una;
                    assert_eq!(
                        u.dup_ack.val(),
                        want_dup,
                        "una {una:#x} ack {ack:#x} nxt {nxt:#x} len {len}"
                    );
                    dups += want_dup as usize;
                } else {
                    assert!(!u.dup_valid.val());
                }
                tick!(u);
            }
            let (g_una, g_rcv, g_wv, g_wnd, g_req) = up.expect("fast path");
            assert!(u.dec_valid.val() && u.dec_fast.val());
            let acc = ack_flag && seq_le(una, ack) && seq_le(ack, nxt);
            let want_una = if acc && ack != una { ack } else { una };
            assert_eq!(
                g_una, want_una,
                "SND.UNA: una {una:#x} ack {ack:#x} nxt {nxt:#x}"
            );
            assert_eq!(g_rcv, rcv.wrapping_add(len));
            assert_eq!(
                g_wv, acc,
                "window update: una {una:#x} ack {ack:#x} nxt {nxt:#x}"
            );
            if acc {
                assert_eq!(g_wnd, (win as u32) << wsc.min(14));
            }
            assert_eq!(g_req, len != 0);
            una_moves += (want_una != una) as usize;
            wnd_moves += acc as usize;
            u.tuple_valid.next = false;
            u.hdr_valid.next = false;
            u.done.next = true;
            tick!(u);
            u.done.next = false;
            tick!(u);
        }
        assert!(
            una_moves > 50 && wnd_moves > 100 && dups > 10,
            "{una_moves} {wnd_moves} {dups}"
        );
    }
}
