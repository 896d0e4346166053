//! Fast retransmit (RFC 5681 §3.2): the third duplicate ACK of a connection
//! asks the TX log for a replay of that connection (go-back-N from SND.UNA,
//! the same request as the firmware's `RETX_CONN`), instead of waiting for
//! the firmware's retransmission timer (one RTO: 200 ms on the board).
//!
//! * `ev_*`: one clock per fast-path segment `rx_split` decided (the only
//!   segments that carry an ACK the device takes), with `ev_dup` = the
//!   segment is a duplicate ACK by RFC 5681 §2's definition, as far as
//!   `rx_split` can tell: (a) data outstanding (SND.NXT != SND.UNA), (b) no
//!   payload, (c) no SYN/FIN (never fast path), (d) SEG.ACK == SND.UNA; and
//!   `ev_wnd` = SEG.WND, raw, for (e) "the advertised window equals the
//!   last one": the block keeps each connection's last SEG.WND.
//! * Per connection (256 x {count 2 bits, last SEG.WND 16 bits}, a RAM read
//!   the clock after the event and written the clock after that; events
//!   come at least 5 clocks apart, `rx_split`'s lookup): a duplicate ACK with
//!   an unchanged window counts; any other fast-path segment (new data
//!   acknowledged, payload, a window update) sets the count to 0. The third
//!   duplicate asks for a replay (`rq_valid`, one clock) if `en` and the log
//!   is free (`busy` low: no replay pending or running, no firmware request
//!   this clock). The count then stays at 3, so the further duplicates that
//!   the rest of the flight draws do not ask again (go-back-N re-sends the
//!   whole flight once) until an ACK that is not a duplicate resets it
//!   (RFC 5681 §3.2 steps 4–6: the recovery ends with the ACK of new data).
//! * A third duplicate while the log is busy is **deferred**, not dropped:
//!   one slot (`pend`, its connection) asks as soon as the log is free,
//!   unless an ACK that is not a duplicate of that connection came first
//!   (that ACK shows the stream moving again, so the replay under way
//!   covered the loss). This is the loss of a segment *inside* a replay:
//!   with a large window a go-back-N replay runs for many round trips of a
//!   short link, the segments after the new hole draw duplicates while it
//!   runs, and without the deferral only the firmware's backed-off timer
//!   would resend (RFC 6298 §5.5), one hole per RTO. A duplicate that
//!   draws from the first segments of a replay (old duplicates the peer
//!   already had, acknowledged with its RCV.NXT) is followed by ACKs of new
//!   data once the replay passes RCV.NXT, which cancel the deferral.
//!   A third duplicate that finds the slot held by another connection, or
//!   `en` low, asks for nothing and is counted in `cnt_skip` (the
//!   firmware's timer covers it).
//! * A connection index reused by a new connection starts with the old
//!   count: at worst its first three duplicate ACKs ask for nothing until
//!   one ACK of new data has been seen, and the timer covers that case.
//! * Profile ([`FastRetxN`]`<PR>`): the RAM's addresses are ANDed with
//!   [`crate::receive::conn_table::conn_state_mask`] (co-simulation all 256; the
//!   board's 16 connections: a 16-entry table, LUT RAM instead of a block
//!   RAM). An event of a connection beyond the profile is ignored (the core
//!   cannot make one: `rx_split`'s indices come from the profile's
//!   connection table), never aliased onto another connection's count.

use crate::common::k;
use rust_hdl::prelude::*;

/// Duplicate ACKs that start a fast retransmit (RFC 5681 §3.2: "the
/// arrival of 3 duplicate ACKs").
pub const DUP_THRESHOLD: u64 = 3;

/// [`FastRetxN`] with the co-simulation profile's connections.
pub type FastRetx = FastRetxN<{ crate::profile::PR_SIM }>;

#[derive(LogicBlock)]
pub struct FastRetxN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Fast retransmit on (the core's `fast_retx_en` pin).
    pub en: Signal<In, Bit>,
    pub ev_valid: Signal<In, Bit>,
    pub ev_conn: Signal<In, Bits<8>>,
    pub ev_dup: Signal<In, Bit>,
    pub ev_wnd: Signal<In, Bits<16>>,
    /// The TX log cannot take a request this clock.
    pub busy: Signal<In, Bit>,
    pub rq_valid: Signal<Out, Bit>,
    pub rq_conn: Signal<Out, Bits<8>>,
    /// Duplicate ACKs seen (counted whether or not `en`).
    pub cnt_dup: Signal<Out, Bits<32>>,
    /// Replays asked for.
    pub cnt_req: Signal<Out, Bits<32>>,
    /// Third duplicates that asked for nothing (`en` low, or the deferral
    /// slot held by another connection).
    pub cnt_skip: Signal<Out, Bits<32>>,
    /// Third duplicates deferred while the log was busy.
    pub cnt_defer: Signal<Out, Bits<32>>,
    k_thr: Constant<Bits<2>>,
    /// The profile's connection mask.
    k_cmask: Constant<Bits<8>>,
    /// {count[17:16], last SEG.WND[15:0]} per connection.
    st: RAM<Bits<18>, 8>,
    /// The event, one and two clocks later.
    v1: DFF<Bit>,
    conn1: DFF<Bits<8>>,
    dup1: DFF<Bit>,
    wnd1: DFF<Bits<16>>,
    n_dup: DFF<Bits<32>>,
    n_req: DFF<Bits<32>>,
    n_skip: DFF<Bits<32>>,
    n_defer: DFF<Bits<32>>,
    /// The deferred request: valid, connection.
    pend: DFF<Bit>,
    pend_conn: DFF<Bits<8>>,
    cnt: Signal<Local, Bits<2>>,
    new_cnt: Signal<Local, Bits<2>>,
    third: Signal<Local, Bit>,
    cancel: Signal<Local, Bit>,
}

impl<const PR: usize> Default for FastRetxN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            en: Default::default(),
            ev_valid: Default::default(),
            ev_conn: Default::default(),
            ev_dup: Default::default(),
            ev_wnd: Default::default(),
            busy: Default::default(),
            rq_valid: Default::default(),
            rq_conn: Default::default(),
            cnt_dup: Default::default(),
            cnt_req: Default::default(),
            cnt_skip: Default::default(),
            cnt_defer: Default::default(),
            k_thr: k(DUP_THRESHOLD),
            k_cmask: Constant::new(crate::receive::conn_table::conn_state_mask(PR).into()),
            st: Default::default(),
            v1: Default::default(),
            conn1: Default::default(),
            dup1: Default::default(),
            wnd1: Default::default(),
            n_dup: Default::default(),
            n_req: Default::default(),
            n_skip: Default::default(),
            n_defer: Default::default(),
            pend: Default::default(),
            pend_conn: Default::default(),
            cnt: Default::default(),
            new_cnt: Default::default(),
            third: Default::default(),
            cancel: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for FastRetxN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, v1, conn1, dup1, wnd1, n_dup, n_req, n_skip, n_defer, pend, pend_conn
        );
        self.st.read_clock.next = self.clock.val();
        self.st.write_clock.next = self.clock.val();
        // clock 0: the event; its connection's state is read
        self.st.read_address.next = self.ev_conn.val() & self.k_cmask.val();
        self.v1.d.next = self.ev_valid.val() & !(self.ev_conn.val() & !self.k_cmask.val()).any();
        self.conn1.d.next = self.ev_conn.val();
        self.dup1.d.next = self.ev_dup.val();
        self.wnd1.d.next = self.ev_wnd.val();
        // clock 1: count, write back, maybe ask
        self.cnt.next = self.st.read_data.val().get_bits::<2>(16);
        self.new_cnt.next = 0.into();
        self.third.next = false;
        if self.dup1.q.val() & (self.st.read_data.val().get_bits::<16>(0) == self.wnd1.q.val()) {
            if self.cnt.val() == self.k_thr.val() {
                self.new_cnt.next = self.cnt.val();
            } else {
                self.new_cnt.next = self.cnt.val() + 1;
                self.third.next = (self.cnt.val() + 1) == self.k_thr.val();
            }
        }
        self.st.write_enable.next = self.v1.q.val();
        self.st.write_address.next = self.conn1.q.val() & self.k_cmask.val();
        self.st.write_data.next =
            (bit_cast::<18, 2>(self.new_cnt.val()) << 16) | bit_cast::<18, 16>(self.wnd1.q.val());
        self.rq_valid.next = false;
        self.rq_conn.next = self.conn1.q.val();
        if self.v1.q.val() & self.dup1.q.val() {
            self.n_dup.d.next = self.n_dup.q.val() + 1;
        }
        // An event of the deferred connection that resets its count (not
        // a duplicate) cancels the deferral.
        self.cancel.next = self.v1.q.val()
            & self.pend.q.val()
            & (self.pend_conn.q.val() == self.conn1.q.val())
            & (self.new_cnt.val() == 0);
        if self.cancel.val() {
            self.pend.d.next = false;
        }
        if self.v1.q.val() & self.third.val() {
            if self.en.val() & !self.busy.val() {
                self.rq_valid.next = true;
                self.n_req.d.next = self.n_req.q.val() + 1;
                if self.pend_conn.q.val() == self.conn1.q.val() {
                    self.pend.d.next = false;
                }
            } else if self.en.val()
                & (!self.pend.q.val() | (self.pend_conn.q.val() == self.conn1.q.val()))
            {
                self.pend.d.next = true;
                self.pend_conn.d.next = self.conn1.q.val();
                self.n_defer.d.next = self.n_defer.q.val() + 1;
            } else {
                self.n_skip.d.next = self.n_skip.q.val() + 1;
            }
        }
        // The deferred request, when the log is free and no event asks
        // this clock (the log's `busy` rises the clock after a request).
        if self.pend.q.val()
            & self.en.val()
            & !self.busy.val()
            & !(self.v1.q.val() & self.third.val())
            & !self.cancel.val()
        {
            self.rq_valid.next = true;
            self.rq_conn.next = self.pend_conn.q.val();
            self.n_req.d.next = self.n_req.q.val() + 1;
            self.pend.d.next = false;
        }
        if !self.en.val() {
            self.pend.d.next = false;
        }
        self.cnt_dup.next = self.n_dup.q.val();
        self.cnt_req.next = self.n_req.q.val();
        self.cnt_skip.next = self.n_skip.q.val();
        self.cnt_defer.next = self.n_defer.q.val();
        if self.reset.val() {
            self.v1.d.next = false;
            self.pend.d.next = false;
            self.n_dup.d.next = 0.into();
            self.n_req.d.next = 0.into();
            self.n_skip.d.next = 0.into();
            self.n_defer.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    fn new_uut() -> FastRetx {
        new_uut_pr()
    }

    fn new_uut_pr<const PR: usize>() -> FastRetxN<PR> {
        let mut u = FastRetxN::<PR>::default();
        u.clock.connect();
        u.reset.connect();
        u.en.connect();
        u.ev_valid.connect();
        u.ev_conn.connect();
        u.ev_dup.connect();
        u.ev_wnd.connect();
        u.busy.connect();
        u.connect_all();
        u
    }

    /// RFC 5681 §3.2 as a plain model: per connection the count of
    /// consecutive duplicate ACKs with an unchanged window (anything else
    /// resets it); the third one asks for a retransmission unless busy; no
    /// second request until a non-duplicate resets the count.
    #[derive(Default, Clone, Copy)]
    struct Model {
        count: u64,
        wnd: u16,
    }

    /// Random events over 4 connections (duplicates, window changes, ACKs of
    /// new data, runs of busy clocks), compared request by request with the
    /// model: a third duplicate while busy is deferred in the one slot and
    /// asked for at the first free clock, cancelled by a non-duplicate of
    /// its connection, skipped if the slot holds another connection.
    #[test]
    fn third_duplicate_asks_once_per_loss() {
        let mut u = new_uut();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u.en.next = true;
        let mut rng = Rng::new(5681);
        let mut m = [Model::default(); 4];
        let mut pend: Option<u64> = None;
        let (mut want, mut got) = (Vec::new(), Vec::new());
        let (mut dups, mut skips, mut defers, mut cancels) = (0u64, 0u64, 0u64, 0u64);
        let mut busy = false;
        for i in 0..4000u64 {
            let c = rng.below(4);
            let dup = rng.below(5) != 0;
            // mostly the same window; now and then a window update
            let wnd = if rng.below(12) == 0 {
                rng.below(4) as u16 * 1000
            } else {
                m[c].wnd
            };
            // busy in runs (a replay lasts many events)
            if rng.below(4) == 0 {
                busy = !busy;
            }
            u.busy.next = busy;
            u.ev_valid.next = true;
            u.ev_conn.next = (c as u64).into();
            u.ev_dup.next = dup;
            u.ev_wnd.next = (wnd as u64).into();
            // clock 0: the event enters; a deferral asks if the log is free
            assert!(simulate(&mut u, 1000));
            if u.rq_valid.val() {
                got.push((i, u.rq_conn.val().to_u64()));
            }
            if !busy {
                if let Some(p) = pend.take() {
                    want.push((i, p));
                }
            }
            // clock 1 and the gap (events come at least 5 clocks apart,
            // rx_split's lookup)
            tick!(u);
            u.ev_valid.next = false;
            for _ in 0..4 {
                assert!(simulate(&mut u, 1000));
                if u.rq_valid.val() {
                    got.push((i, u.rq_conn.val().to_u64()));
                }
                tick!(u);
            }
            // model
            if dup {
                dups += 1;
            }
            if dup && wnd == m[c].wnd {
                if m[c].count < DUP_THRESHOLD {
                    m[c].count += 1;
                    if m[c].count == DUP_THRESHOLD {
                        if !busy {
                            want.push((i, c as u64));
                        } else if pend.is_none_or(|p| p == c as u64) {
                            pend = Some(c as u64);
                            defers += 1;
                        } else {
                            skips += 1;
                        }
                    }
                }
            } else {
                m[c].count = 0;
                if pend == Some(c as u64) {
                    pend = None;
                    cancels += 1;
                }
            }
            m[c].wnd = wnd;
        }
        assert_eq!(got, want);
        assert!(want.len() > 20, "too few fast retransmits: {}", want.len());
        assert!(
            defers > 20 && skips > 5 && cancels > 5,
            "the mix lacks a case: {defers} deferred, {skips} skipped, {cancels} cancelled"
        );
        assert_eq!(u.cnt_dup.val().to_u64(), dups);
        assert_eq!(u.cnt_req.val().to_u64(), want.len() as u64);
        assert_eq!(u.cnt_skip.val().to_u64(), skips);
        assert_eq!(u.cnt_defer.val().to_u64(), defers);
        eprintln!(
            "fast_retx: {} requests, {defers} deferred ({cancels} cancelled), {skips} skipped, {dups} duplicates",
            want.len()
        );
    }

    /// With `en` low nothing is asked; the third duplicate is counted as
    /// skipped.
    #[test]
    fn disabled_asks_nothing() {
        let mut u = new_uut();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        for _ in 0..4 {
            u.ev_valid.next = true;
            u.ev_conn.next = 7.into();
            u.ev_dup.next = true;
            tick!(u);
            u.ev_valid.next = false;
            for _ in 0..5 {
                assert!(!u.rq_valid.val());
                tick!(u);
            }
        }
        assert_eq!(u.cnt_dup.val().to_u64(), 4);
        assert_eq!(u.cnt_skip.val().to_u64(), 1);
        assert_eq!(u.cnt_req.val().to_u64(), 0);
    }

    /// Board profile (n = 16 connections): duplicates of connection n - 1
    /// (15) with events of 2n - 1 (31: 15 modulo n) between them: 15's
    /// third duplicate asks for 15 although 31's non-duplicates came
    /// between (no aliasing); 31's own three duplicates ask for nothing and
    /// are not counted (beyond the profile), nor is n's. Without the
    /// profile mask 31 would ask. The connections follow `BOARD.conn_log2`.
    #[test]
    fn board_profile_counts_16_connections_and_ignores_the_rest() {
        let mut u = new_uut_pr::<{ crate::profile::PR_BOARD }>();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u.en.next = true;
        let n = 1u64 << crate::profile::PROFILES[crate::profile::PR_BOARD].conn_log2;
        let (l, x) = (n - 1, 2 * n - 1);
        // (connection, duplicate)
        let evs = [
            (l, true),
            (x, false),
            (x, true),
            (l, true),
            (x, true),
            (0, true),
            (x, true),
            (l, true),
            (n, true),
            (0, true),
            (0, true),
        ];
        let mut got = Vec::new();
        for (i, &(c, dup)) in evs.iter().enumerate() {
            u.ev_valid.next = true;
            u.ev_conn.next = c.into();
            u.ev_dup.next = dup;
            u.ev_wnd.next = 0.into();
            tick!(u);
            u.ev_valid.next = false;
            for _ in 0..5 {
                assert!(simulate(&mut u, 1000));
                if u.rq_valid.val() {
                    got.push((i, u.rq_conn.val().to_u64()));
                }
                tick!(u);
            }
        }
        assert_eq!(got, vec![(7, l), (10, 0)]);
        assert_eq!(u.cnt_dup.val().to_u64(), 6);
        assert_eq!(u.cnt_req.val().to_u64(), 2);
    }

    #[test]
    fn generates_verilog() {
        let mut u = FastRetx::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "fast_retx");
        assert!(v.contains("module fast_retx("));
    }
}
