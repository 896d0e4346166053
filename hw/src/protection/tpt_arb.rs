//! TPT check-port arbiter: shares the one check unit of `tpt` among its four
//! clients, `ddp_rx` (tagged placement, `dv`), `rx_send` (receive SGEs and
//! Send with Invalidate, `rs`), `read_resp` (Read Request sources, `rr`) and
//! `tx_seg` (send SGEs, `ts`). It passes one client's request fields to the
//! unit, remembers whose check is in flight and routes the result's
//! `valid`/`ready` back to that client (the result fields fan out to all).
//!
//! # The grant is a register
//! The client that may hand in a check this clock is the one-hot register
//! `g_*`, chosen in the clock before from that clock's requests, and kept
//! while nobody asks. So a client's `chk_ready` is a function of registers
//! only (the unit's `chk_ready`, `g_*`, `placing`, `inv_hold`), never of any
//! client's `chk_valid`, and the request fields pass one 4:1 multiplexer
//! with a registered select. Why: with a combinational choice one client's
//! request reached another's `chk_ready` and on to its request fields in the
//! same clock; on the board that chain (`rx_send`'s length arithmetic →
//! the choice → `read_resp`'s candidate → the unit's STag input) was the
//! routed critical path of the core clock.
//! Cost: a client that asks after another client had the grant waits one
//! clock for it; a client asking again and again alone never waits.
//!
//! # Who may ask (the rules of the core, docs/rtl.md)
//! Priority `dv` > `rs` > `rr` > `ts`, decided for the next clock. These
//! conditions also hold *in the clock of the hand-in* (they use registers,
//! so they cost no cross-client path):
//! * `rs`, `rr`, `ts` never while `placing`: `ddp_rx`'s page walk uses the
//!   page-list read port the check unit uses in its page-list stage.
//! * `dv` and `rr` never while `inv_hold`: from the header of a Send with
//!   Invalidate's last segment until its STag is invalidated only `rx_send`
//!   checks, so every FPDU behind it (a Write or Read Request through that
//!   STag) is checked after the invalidation (RFC 5040 §5.3, §6.10).
//!
//! A check is in flight from its hand-in until its result is taken; the
//! unit's `chk_ready` is low meanwhile, so no second check enters.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct TptArb {
    pub clock: Signal<In, Clock>,
    /// Synchronous: no grant, no check in flight (reset the unit with it).
    pub reset: Signal<In, Bit>,
    /// `ddp_rx` places (its page walk owns the page-list read port).
    pub placing: Signal<In, Bit>,
    /// A Send with Invalidate waits for its invalidation (`rx_send`).
    pub inv_hold: Signal<In, Bit>,
    // ---- ddp_rx
    pub dv_valid: Signal<In, Bit>,
    pub dv_ready: Signal<Out, Bit>,
    pub dv_stag: Signal<In, Bits<32>>,
    pub dv_pd: Signal<In, Bits<32>>,
    pub dv_need: Signal<In, Bits<3>>,
    pub dv_to: Signal<In, Bits<64>>,
    pub dv_len: Signal<In, Bits<32>>,
    pub dv_res_valid: Signal<Out, Bit>,
    pub dv_res_ready: Signal<In, Bit>,
    // ---- rx_send (the only client that invalidates)
    pub rs_valid: Signal<In, Bit>,
    pub rs_ready: Signal<Out, Bit>,
    pub rs_stag: Signal<In, Bits<32>>,
    pub rs_pd: Signal<In, Bits<32>>,
    pub rs_need: Signal<In, Bits<3>>,
    pub rs_to: Signal<In, Bits<64>>,
    pub rs_len: Signal<In, Bits<32>>,
    pub rs_inv: Signal<In, Bit>,
    pub rs_res_valid: Signal<Out, Bit>,
    pub rs_res_ready: Signal<In, Bit>,
    // ---- read_resp
    pub rr_valid: Signal<In, Bit>,
    pub rr_ready: Signal<Out, Bit>,
    pub rr_stag: Signal<In, Bits<32>>,
    pub rr_pd: Signal<In, Bits<32>>,
    pub rr_need: Signal<In, Bits<3>>,
    pub rr_to: Signal<In, Bits<64>>,
    pub rr_len: Signal<In, Bits<32>>,
    pub rr_res_valid: Signal<Out, Bit>,
    pub rr_res_ready: Signal<In, Bit>,
    // ---- tx_seg
    pub ts_valid: Signal<In, Bit>,
    pub ts_ready: Signal<Out, Bit>,
    pub ts_stag: Signal<In, Bits<32>>,
    pub ts_pd: Signal<In, Bits<32>>,
    pub ts_need: Signal<In, Bits<3>>,
    pub ts_to: Signal<In, Bits<64>>,
    pub ts_len: Signal<In, Bits<32>>,
    pub ts_res_valid: Signal<Out, Bit>,
    pub ts_res_ready: Signal<In, Bit>,
    // ---- the check unit (`tpt`'s chk_* / res_valid / res_ready)
    pub chk_valid: Signal<Out, Bit>,
    pub chk_ready: Signal<In, Bit>,
    pub chk_stag: Signal<Out, Bits<32>>,
    pub chk_pd: Signal<Out, Bits<32>>,
    pub chk_need: Signal<Out, Bits<3>>,
    pub chk_to: Signal<Out, Bits<64>>,
    pub chk_len: Signal<Out, Bits<32>>,
    pub chk_inv: Signal<Out, Bit>,
    pub res_valid: Signal<In, Bit>,
    pub res_ready: Signal<Out, Bit>,
    // ---- state
    /// The grant (one-hot or none): who may hand in a check this clock.
    g_dv: DFF<Bit>,
    g_rs: DFF<Bit>,
    g_rr: DFF<Bit>,
    g_ts: DFF<Bit>,
    /// Whose check is in flight (one-hot or none).
    o_dv: DFF<Bit>,
    o_rs: DFF<Bit>,
    o_rr: DFF<Bit>,
    o_ts: DFF<Bit>,
    /// The rules: may each client hand in a check this clock?
    ok_dv: Signal<Local, Bit>,
    ok_rs: Signal<Local, Bit>,
    ok_rr: Signal<Local, Bit>,
    ok_ts: Signal<Local, Bit>,
    /// Each client's request, if the rules let it ask this clock.
    e_dv: Signal<Local, Bit>,
    e_rs: Signal<Local, Bit>,
    e_rr: Signal<Local, Bit>,
    e_ts: Signal<Local, Bit>,
    /// The unit takes a check this clock.
    take: Signal<Local, Bit>,
}

impl Logic for TptArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, g_dv, g_rs, g_rr, g_ts, o_dv, o_rs, o_rr, o_ts);
        self.ok_dv.next = !self.inv_hold.val();
        self.ok_rs.next = !self.placing.val();
        self.ok_rr.next = !self.placing.val() & !self.inv_hold.val();
        self.ok_ts.next = !self.placing.val();
        self.e_dv.next = self.dv_valid.val() & self.ok_dv.val();
        self.e_rs.next = self.rs_valid.val() & self.ok_rs.val();
        self.e_rr.next = self.rr_valid.val() & self.ok_rr.val();
        self.e_ts.next = self.ts_valid.val() & self.ok_ts.val();

        // ---- hand-in: the granted client, on this clock's rules
        self.dv_ready.next = self.chk_ready.val() & self.g_dv.q.val() & self.ok_dv.val();
        self.rs_ready.next = self.chk_ready.val() & self.g_rs.q.val() & self.ok_rs.val();
        self.rr_ready.next = self.chk_ready.val() & self.g_rr.q.val() & self.ok_rr.val();
        self.ts_ready.next = self.chk_ready.val() & self.g_ts.q.val() & self.ok_ts.val();
        self.chk_valid.next = (self.g_dv.q.val() & self.e_dv.val())
            | (self.g_rs.q.val() & self.e_rs.val())
            | (self.g_rr.q.val() & self.e_rr.val())
            | (self.g_ts.q.val() & self.e_ts.val());
        self.chk_stag.next = self.dv_stag.val();
        self.chk_pd.next = self.dv_pd.val();
        self.chk_need.next = self.dv_need.val();
        self.chk_to.next = self.dv_to.val();
        self.chk_len.next = self.dv_len.val();
        self.chk_inv.next = false;
        if self.g_rs.q.val() {
            self.chk_stag.next = self.rs_stag.val();
            self.chk_pd.next = self.rs_pd.val();
            self.chk_need.next = self.rs_need.val();
            self.chk_to.next = self.rs_to.val();
            self.chk_len.next = self.rs_len.val();
            self.chk_inv.next = self.rs_inv.val();
        }
        if self.g_rr.q.val() {
            self.chk_stag.next = self.rr_stag.val();
            self.chk_pd.next = self.rr_pd.val();
            self.chk_need.next = self.rr_need.val();
            self.chk_to.next = self.rr_to.val();
            self.chk_len.next = self.rr_len.val();
        }
        if self.g_ts.q.val() {
            self.chk_stag.next = self.ts_stag.val();
            self.chk_pd.next = self.ts_pd.val();
            self.chk_need.next = self.ts_need.val();
            self.chk_to.next = self.ts_to.val();
            self.chk_len.next = self.ts_len.val();
        }
        self.take.next = self.chk_valid.val() & self.chk_ready.val();
        if self.take.val() {
            self.o_dv.d.next = self.g_dv.q.val();
            self.o_rs.d.next = self.g_rs.q.val();
            self.o_rr.d.next = self.g_rr.q.val();
            self.o_ts.d.next = self.g_ts.q.val();
        }

        // ---- the grant for the next clock: priority, kept while nobody asks
        if self.e_dv.val() | self.e_rs.val() | self.e_rr.val() | self.e_ts.val() {
            self.g_dv.d.next = self.e_dv.val();
            self.g_rs.d.next = !self.e_dv.val() & self.e_rs.val();
            self.g_rr.d.next = !self.e_dv.val() & !self.e_rs.val() & self.e_rr.val();
            self.g_ts.d.next =
                !self.e_dv.val() & !self.e_rs.val() & !self.e_rr.val() & self.e_ts.val();
        }

        // ---- result: to the client whose check it is
        self.dv_res_valid.next = self.res_valid.val() & self.o_dv.q.val();
        self.rs_res_valid.next = self.res_valid.val() & self.o_rs.q.val();
        self.rr_res_valid.next = self.res_valid.val() & self.o_rr.q.val();
        self.ts_res_valid.next = self.res_valid.val() & self.o_ts.q.val();
        self.res_ready.next = (self.o_dv.q.val() & self.dv_res_ready.val())
            | (self.o_rs.q.val() & self.rs_res_ready.val())
            | (self.o_rr.q.val() & self.rr_res_ready.val())
            | (self.o_ts.q.val() & self.ts_res_ready.val());
        if self.res_valid.val() & self.res_ready.val() {
            self.o_dv.d.next = false;
            self.o_rs.d.next = false;
            self.o_rr.d.next = false;
            self.o_ts.d.next = false;
        }

        if self.reset.val() {
            self.g_dv.d.next = false;
            self.g_rs.d.next = false;
            self.g_rr.d.next = false;
            self.g_ts.d.next = false;
            self.o_dv.d.next = false;
            self.o_rs.d.next = false;
            self.o_rr.d.next = false;
            self.o_ts.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use std::collections::VecDeque;

    const DV: usize = 0;
    const RS: usize = 1;
    const RR: usize = 2;
    const TS: usize = 3;

    /// A request: (stag, pd, need, to, len, inv); the client and its
    /// sequence number are in the STag so a hand-in can be attributed.
    type Req = (u64, u64, u64, u64, u64, bool);

    fn requests(rng: &mut Rng, client: usize, n: usize) -> VecDeque<Req> {
        (0..n as u64)
            .map(|i| {
                (
                    ((client as u64) << 28) | i,
                    rng.next_u64() & 0xffff_ffff,
                    rng.below(8) as u64,
                    rng.next_u64(),
                    rng.next_u64() & 0xffff_ffff,
                    client == RS && rng.below(4) == 0,
                )
            })
            .collect()
    }

    fn unit() -> TptArb {
        let mut u = TptArb::default();
        u.clock.connect();
        u.reset.connect();
        u.placing.connect();
        u.inv_hold.connect();
        u.chk_ready.connect();
        u.res_valid.connect();
        for c in 0..4 {
            let (v, s, p, n, t, l, rr) = ports(&mut u, c);
            v.connect();
            s.connect();
            p.connect();
            n.connect();
            t.connect();
            l.connect();
            rr.connect();
        }
        u.rs_inv.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u
    }

    type Ports<'a> = (
        &'a mut Signal<In, Bit>,
        &'a mut Signal<In, Bits<32>>,
        &'a mut Signal<In, Bits<32>>,
        &'a mut Signal<In, Bits<3>>,
        &'a mut Signal<In, Bits<64>>,
        &'a mut Signal<In, Bits<32>>,
        &'a mut Signal<In, Bit>,
    );

    /// A client's inputs: valid, stag, pd, need, to, len, res_ready.
    fn ports(u: &mut TptArb, c: usize) -> Ports<'_> {
        match c {
            DV => (
                &mut u.dv_valid,
                &mut u.dv_stag,
                &mut u.dv_pd,
                &mut u.dv_need,
                &mut u.dv_to,
                &mut u.dv_len,
                &mut u.dv_res_ready,
            ),
            RS => (
                &mut u.rs_valid,
                &mut u.rs_stag,
                &mut u.rs_pd,
                &mut u.rs_need,
                &mut u.rs_to,
                &mut u.rs_len,
                &mut u.rs_res_ready,
            ),
            RR => (
                &mut u.rr_valid,
                &mut u.rr_stag,
                &mut u.rr_pd,
                &mut u.rr_need,
                &mut u.rr_to,
                &mut u.rr_len,
                &mut u.rr_res_ready,
            ),
            _ => (
                &mut u.ts_valid,
                &mut u.ts_stag,
                &mut u.ts_pd,
                &mut u.ts_need,
                &mut u.ts_to,
                &mut u.ts_len,
                &mut u.ts_res_ready,
            ),
        }
    }

    fn drive(u: &mut TptArb, c: usize, valid: bool, req: Option<&Req>, res_ready: bool) {
        if c == RS {
            u.rs_inv.next = req.is_some_and(|r| r.5);
        }
        let (v, s, p, n, t, l, rr) = ports(u, c);
        v.next = valid;
        if let Some(&(st, pd, nd, to, len, _)) = req {
            s.next = st.into();
            p.next = pd.into();
            n.next = nd.into();
            t.next = to.into();
            l.next = len.into();
        }
        rr.next = res_ready;
    }

    fn readys(u: &TptArb) -> [bool; 4] {
        [
            u.dv_ready.val(),
            u.rs_ready.val(),
            u.rr_ready.val(),
            u.ts_ready.val(),
        ]
    }

    fn res_valids(u: &TptArb) -> [bool; 4] {
        [
            u.dv_res_valid.val(),
            u.rs_res_valid.val(),
            u.rr_res_valid.val(),
            u.ts_res_valid.val(),
        ]
    }

    /// The rules of the core: may client `c` hand in a check now?
    fn allowed(c: usize, placing: bool, inv_hold: bool) -> bool {
        match c {
            DV => !inv_hold,
            RR => !placing && !inv_hold,
            _ => !placing,
        }
    }

    /// Four clients with queues of checks against a model check unit (one
    /// check at a time, answered after 1..6 clocks, result held until
    /// taken), `placing` and `inv_hold` in random runs. `hold`: a client that
    /// raised `valid` keeps it until taken; else `valid` comes and goes.
    /// Checked every clock: `ready`s independent of every `valid` (flipped
    /// and re-settled), at most one, only with the unit ready, only for the
    /// granted client (reference: priority dv > rs > rr > ts over the last
    /// clock's allowed requests, kept while none) and on this clock's rules;
    /// the unit sees exactly the handed-in request; the result goes to the
    /// client whose check it is. Every check is handed in once, in order.
    fn run(seed: u64, hold: bool) {
        let mut rng = Rng::new(seed);
        let mut u = unit();
        let mut q: Vec<VecDeque<Req>> = (0..4).map(|c| requests(&mut rng, c, 25)).collect();
        let expect: Vec<Vec<Req>> = q.iter().map(|x| x.iter().copied().collect()).collect();
        let mut got: Vec<Vec<Req>> = vec![Vec::new(); 4];
        let mut valid = [false; 4];
        // The model unit: the check in flight (client, clocks to its result).
        let mut in_flight: Option<(usize, usize)> = None;
        let mut waiting = [false; 4]; // a client waits for its result
        let mut grant: Option<usize> = None; // reference grant
        let (mut placing, mut inv_hold) = (false, false);
        for _ in 0..20000 {
            if rng.below(100) < 8 {
                placing = !placing;
            }
            if rng.below(100) < 5 {
                inv_hold = !inv_hold;
            }
            for c in 0..4 {
                let fresh = rng.below(100) < 60;
                valid[c] = !q[c].is_empty() && !waiting[c] && ((hold && valid[c]) || fresh);
            }
            let unit_ready = in_flight.is_none();
            let res_valid = matches!(in_flight, Some((_, 0)));
            let res_ready: Vec<bool> = (0..4).map(|_| rng.below(100) < 60).collect();
            u.placing.next = placing;
            u.inv_hold.next = inv_hold;
            u.chk_ready.next = unit_ready;
            u.res_valid.next = res_valid;
            for c in 0..4 {
                let front = q[c].front().copied();
                drive(&mut u, c, valid[c], front.as_ref(), res_ready[c]);
            }
            assert!(simulate(&mut u, 1000));
            let r = readys(&u);
            // No ready follows any valid.
            for c in 0..4 {
                let front = q[c].front().copied();
                drive(&mut u, c, !valid[c], front.as_ref(), res_ready[c]);
            }
            assert!(simulate(&mut u, 1000));
            assert_eq!(readys(&u), r, "a ready follows a valid");
            for c in 0..4 {
                let front = q[c].front().copied();
                drive(&mut u, c, valid[c], front.as_ref(), res_ready[c]);
            }
            assert!(simulate(&mut u, 1000));
            for (c, &ready) in r.iter().enumerate() {
                let expect_ready = unit_ready && grant == Some(c) && allowed(c, placing, inv_hold);
                assert_eq!(
                    ready, expect_ready,
                    "client {c}: ready {ready} (grant {grant:?})"
                );
            }
            // Hand-in: exactly the ready client's valid request.
            let taker = (0..4).find(|&c| r[c] && valid[c]);
            assert_eq!(u.chk_valid.val() && unit_ready, taker.is_some());
            if let Some(c) = taker {
                let req = q[c].pop_front().unwrap();
                assert_eq!(u.chk_stag.val().to_u64(), req.0);
                assert_eq!(u.chk_pd.val().to_u64(), req.1);
                assert_eq!(u.chk_need.val().to_u64(), req.2);
                assert_eq!(u.chk_to.val().to_u64(), req.3);
                assert_eq!(u.chk_len.val().to_u64(), req.4);
                assert_eq!(u.chk_inv.val(), req.5);
                got[c].push(req);
                waiting[c] = true;
                valid[c] = false;
            }
            // Result: only to its client, ready from that client.
            let rv = res_valids(&u);
            let owner = in_flight.map(|(c, _)| c);
            for (c, &v) in rv.iter().enumerate() {
                assert_eq!(v, res_valid && owner == Some(c), "result to client {c}");
            }
            let taken = res_valid && u.res_ready.val();
            if let Some(o) = owner {
                assert_eq!(u.res_ready.val(), res_ready[o]);
            }
            // Next clock's model state.
            let allowed_now: Vec<bool> = (0..4).map(|c| valid[c] || (taker == Some(c))).collect();
            let eligible = |c: usize| allowed_now[c] && allowed(c, placing, inv_hold);
            if let Some(c) = (0..4).find(|&c| eligible(c)) {
                grant = Some(c);
            }
            if taken {
                let (o, _) = in_flight.take().unwrap();
                waiting[o] = false;
            } else if let Some((_, n)) = in_flight.as_mut() {
                *n = n.saturating_sub(1);
            }
            if let Some(c) = taker {
                in_flight = Some((c, 1 + rng.below(6)));
            }
            tick!(u);
            if q.iter().all(|x| x.is_empty()) && in_flight.is_none() {
                break;
            }
        }
        assert!(q.iter().all(|x| x.is_empty()), "not drained");
        assert_eq!(got, expect);
    }

    #[test]
    fn grants_on_registers_routes_results_to_their_client() {
        run(1, true);
        run(2, true);
    }

    #[test]
    fn valids_that_come_and_go_are_served_in_order() {
        run(3, false);
        run(4, false);
    }

    /// One client alone, always asking, the unit answering at once: after
    /// the one clock the grant needs to turn to it, every check is handed in
    /// the first clock the unit is free.
    #[test]
    fn a_client_alone_waits_one_clock_for_the_grant_then_none() {
        let mut rng = Rng::new(7);
        let mut u = unit();
        for c in [TS, RR, RS, DV] {
            let mut q = requests(&mut rng, c, 6);
            let mut lost = 0;
            let mut in_flight = false;
            for _ in 0..200 {
                let front = q.front().copied();
                drive(&mut u, c, !q.is_empty() && !in_flight, front.as_ref(), true);
                u.chk_ready.next = !in_flight;
                u.res_valid.next = in_flight;
                assert!(simulate(&mut u, 1000));
                if in_flight {
                    assert!(u.res_ready.val());
                    in_flight = false;
                } else if !q.is_empty() {
                    if readys(&u)[c] {
                        q.pop_front();
                        in_flight = true;
                    } else {
                        lost += 1;
                    }
                }
                tick!(u);
                if q.is_empty() && !in_flight {
                    break;
                }
            }
            assert!(q.is_empty());
            assert_eq!(lost, 1, "client {c}: clocks lost to the grant");
            drive(&mut u, c, false, None, false);
        }
    }

    #[test]
    fn generates_verilog() {
        let mut u = TptArb::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "tpt_arb");
        assert!(v.contains("module tpt_arb("));
        if let Ok(dir) = std::env::var("RX_SEND_VERILOG_DIR") {
            std::fs::write(format!("{dir}/tpt_arb.v"), &v).unwrap();
        }
    }
}
