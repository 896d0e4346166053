//! TX scheduler: round-robin among the QPs with pending send work, plus a
//! priority requester (ACK / Terminate / Read Response work) that is never
//! starved and never starves the QPs.
//!
//! * `pending[64]` (from `Doorbell`): QP `n` has work; `blocked[64]` (from
//!   `WqeFetch::busy`): QP `n` must not be granted now. The grant goes to the
//!   first pending QP at or after `ptr` (cyclically), and `ptr` moves to the
//!   QP after the granted one, so each QP with work is served once per round.
//! * `prio_valid`: priority work waits. When both kinds wait, they alternate:
//!   the priority requester wins unless the previous grant was also a
//!   priority grant. So priority work waits at most one QP grant, and QP work
//!   gets at least every other grant.
//! * Output `grant_valid`, `grant_prio` (1: the priority requester, 0: QP
//!   `grant_qp`), handshake `grant_ready`. Registered (FPGA timing: so the
//!   rotate / lowest-set-bit / index chain does not run in one clock from
//!   `WqeFetch`'s busy register back into it): the grant on offer was
//!   chosen one clock earlier from `pending`, `blocked`, `prio_valid`, `ptr`
//!   and the alternation bit, and is re-chosen every clock. After a
//!   handshake the offer is withdrawn for one clock, so the next grant is
//!   chosen from the `ptr`, `pending` and `blocked` that the handshake
//!   updated. Cost: one clock per grant (a grant every other clock at
//!   most), one clock of latency from `pending` to the grant. `prio_valid`
//!   must stay up until granted (it is; it is the requester's valid).
//! * Parking (docs/rtl.md "Parked QPs"): `park_fire` (`park_qp`,
//!   `park_conn`) marks a QP parked: `TxSeg` gave its grant back because
//!   the segment at its head could not start (peer window, RFC 9293
//!   §3.8.6; or ORD, RFC 5040 §6.2). A parked QP is not granted until a
//!   wakeup: a window update of its connection (`wake_conn_*`), an ORD
//!   count decrement of the QP (`wake_qp_*`), or the retry sweep every
//!   [`PARK_RETRY`] clocks (`cnt_park_retry`). A woken QP is eligible (as
//!   if pending) until its next grant: its fetch index was rewound to the
//!   parked WQE. No lost wakeup: a matching wakeup while `park_valid` is
//!   up, in the clock of `park_fire`, or in the [`WAKE_HIST`] clocks before
//!   it, makes the park a wakeup at once (the stall was decided on a
//!   window/ORD value up to a few clocks old). The choice sees a park one
//!   clock late (`pv_r`, `pq_r`: FPGA timing, the park decode was the front
//!   of the board's longest path, `TxSeg`'s state → this choice → `g_qp`);
//!   an offer chosen in the park's first clock
//!   for the parking QP is withdrawn (`gate`, a 6-bit compare of
//!   registers), so the QP is still not offered from the clock after its
//!   park begins.
//! * Contention (`contend`, registered, docs/rtl.md "Park only when
//!   another QP waits"): some QP other than `cur_qp` (the QP of the WQE at
//!   `TxSeg`'s head) is pending, woken or being fetched (`blocked`), or
//!   `WqeFetch`'s FIFO holds another QP's WQE (`fifo_others`). `TxSeg`
//!   parks a stalled QP only then; alone, it waits holding the WQE and
//!   sends in the clock the window opens (no park, refetch, wakeup).

use rust_hdl::prelude::*;

/// Bit `i` of mask `b` is set when bit `b` of the number `i` is.
fn index_mask(b: usize) -> Constant<Bits<64>> {
    Constant::new(
        (0..64)
            .fold(0u64, |m, i| m | (((i >> b) & 1) as u64) << i)
            .into(),
    )
}

/// Clocks between two retry sweeps of the parked QPs (a bound on a lost
/// wakeup; each sweep with a parked QP counts in `cnt_park_retry`).
pub const PARK_RETRY: u64 = 4096;
/// Wakeups remembered for a park in flight (clocks).
pub const WAKE_HIST: usize = 4;

/// The scheduler of the sim profile (64 QPs).
pub type TxSched = TxSchedN<{ crate::profile::PR_SIM }>;

/// Round robin among the QPs of profile `PR` (`PROFILES[PR].fw.n_qp`, 64 in
/// the sim core, 16 on the board): the ports stay 64 wide, every QP bitmap
/// is ANDed with the profile's QP set (a chosen QP, and `ptr`, are below
/// `n_qp`), and on the board the state and logic of QPs 16..63 have no
/// reader, so synthesis removes them. Pending/blocked bits of QPs beyond
/// the profile are ignored.
#[derive(LogicBlock)]
pub struct TxSchedN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub pending: Signal<In, Bits<64>>,
    /// QPs not to grant now (`WqeFetch::busy`: a fetch is in flight).
    pub blocked: Signal<In, Bits<64>>,
    pub prio_valid: Signal<In, Bit>,
    pub grant_valid: Signal<Out, Bit>,
    pub grant_prio: Signal<Out, Bit>,
    pub grant_qp: Signal<Out, Bits<6>>,
    pub grant_ready: Signal<In, Bit>,
    // ---- Parking (module doc)
    /// `TxSeg` wants to park `park_qp` (level, until `park_fire`).
    pub park_valid: Signal<In, Bit>,
    /// The park is taken (`WqeFetch` popped the WQE and rewound the QP).
    pub park_fire: Signal<In, Bit>,
    pub park_qp: Signal<In, Bits<6>>,
    /// The parked QP's connection (for window wakeups).
    pub park_conn: Signal<In, Bits<8>>,
    /// A window update (ACK or context write) of connection `wake_conn`.
    pub wake_conn_valid: Signal<In, Bit>,
    pub wake_conn: Signal<In, Bits<8>>,
    /// An ORD count decrement (`RdTrack`) of QP `wake_qp`.
    pub wake_qp_valid: Signal<In, Bit>,
    pub wake_qp: Signal<In, Bits<6>>,
    pub parked: Signal<Out, Bits<64>>,
    // ---- Contention (module doc)
    /// QP of the WQE at `TxSeg`'s head (`WqeFetch::wqe_qp`).
    pub cur_qp: Signal<In, Bits<6>>,
    /// `WqeFetch::others`.
    pub fifo_others: Signal<In, Bit>,
    pub contend: Signal<Out, Bit>,
    cont: DFF<Bit>,
    pub cnt_park: Signal<Out, Bits<32>>,
    pub cnt_park_retry: Signal<Out, Bits<32>>,
    pk: DFF<Bits<64>>,
    woke: DFF<Bits<64>>,
    pconn: DFF<Bits<512>>,
    hc: DFF<Bits<36>>,
    hq: DFF<Bits<28>>,
    pw: DFF<Bit>,
    timer: DFF<Bits<12>>,
    n_park: DFF<Bits<32>>,
    n_retry: DFF<Bits<32>>,
    hit: Signal<Local, Bits<64>>,
    pmask: Signal<Local, Bits<64>>,
    gmask: Signal<Local, Bits<64>>,
    woke_n: Signal<Local, Bits<64>>,
    m_now: Signal<Local, Bit>,
    m_hist: Signal<Local, Bit>,
    sweep: Signal<Local, Bit>,
    /// The round robin's start as a mask: bit `n` set for the QPs at or
    /// after `ptr` (the QP after the last QP granted), all set after reset
    /// (`ptr` 0). Kept as a mask so the choice is two lowest-set-bit
    /// searches side by side (`hi`, then all of `elig`) instead of a rotate
    /// by `ptr`, a search and an add of `ptr` in a row (FPGA timing: that
    /// chain was the board's second longest path).
    from: DFF<Bits<64>>,
    last_prio: DFF<Bit>,
    g_v: DFF<Bit>,
    g_prio: DFF<Bit>,
    g_qp: DFF<Bits<6>>,
    /// `park_valid` / `park_qp` one clock old (module doc, "Parking").
    pv_r: DFF<Bit>,
    pq_r: DFF<Bits<6>>,
    /// `pmask` one clock old, from `pv_r` / `pq_r`.
    pmask_r: Signal<Local, Bits<64>>,
    /// The offer is for the QP whose park began last clock: withdrawn.
    gate: Signal<Local, Bit>,
    c_valid: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    elig: Signal<Local, Bits<64>>,
    /// The eligible QPs at or after `ptr`.
    hi: Signal<Local, Bits<64>>,
    found: Signal<Local, Bit>,
    oh_hi: Signal<Local, Bits<64>>,
    oh_all: Signal<Local, Bits<64>>,
    onehot: Signal<Local, Bits<64>>,
    m0: Constant<Bits<64>>,
    m1: Constant<Bits<64>>,
    m2: Constant<Bits<64>>,
    m3: Constant<Bits<64>>,
    m4: Constant<Bits<64>>,
    m5: Constant<Bits<64>>,
    idx: Signal<Local, Bits<6>>,
    qp: Signal<Local, Bits<6>>,
    take_prio: Signal<Local, Bit>,
    qset: Constant<Bits<64>>,
    pset: Constant<Bits<512>>,
}

impl<const PR: usize> Default for TxSchedN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            pending: Default::default(),
            blocked: Default::default(),
            prio_valid: Default::default(),
            grant_valid: Default::default(),
            grant_prio: Default::default(),
            grant_qp: Default::default(),
            grant_ready: Default::default(),
            park_valid: Default::default(),
            park_fire: Default::default(),
            park_qp: Default::default(),
            park_conn: Default::default(),
            wake_conn_valid: Default::default(),
            wake_conn: Default::default(),
            wake_qp_valid: Default::default(),
            wake_qp: Default::default(),
            parked: Default::default(),
            cur_qp: Default::default(),
            fifo_others: Default::default(),
            contend: Default::default(),
            cont: Default::default(),
            cnt_park: Default::default(),
            cnt_park_retry: Default::default(),
            pk: Default::default(),
            woke: Default::default(),
            pconn: Default::default(),
            hc: Default::default(),
            hq: Default::default(),
            pw: Default::default(),
            timer: Default::default(),
            n_park: Default::default(),
            n_retry: Default::default(),
            hit: Default::default(),
            pmask: Default::default(),
            gmask: Default::default(),
            woke_n: Default::default(),
            m_now: Default::default(),
            m_hist: Default::default(),
            sweep: Default::default(),
            from: Default::default(),
            last_prio: Default::default(),
            g_v: Default::default(),
            g_prio: Default::default(),
            g_qp: Default::default(),
            pv_r: Default::default(),
            pq_r: Default::default(),
            pmask_r: Default::default(),
            gate: Default::default(),
            c_valid: Default::default(),
            fire: Default::default(),
            elig: Default::default(),
            hi: Default::default(),
            found: Default::default(),
            oh_hi: Default::default(),
            oh_all: Default::default(),
            onehot: Default::default(),
            m0: index_mask(0),
            m1: index_mask(1),
            m2: index_mask(2),
            m3: index_mask(3),
            m4: index_mask(4),
            m5: index_mask(5),
            idx: Default::default(),
            qp: Default::default(),
            take_prio: Default::default(),
            qset: crate::transmit::doorbell::qp_set(PR),
            pset: {
                let n = crate::transmit::doorbell::profile_qps(PR);
                Constant::new(
                    (0..512).fold(Bits::<512>::default(), |m, i| m.replace_bit(i, i < 8 * n)),
                )
            },
        }
    }
}

impl<const PR: usize> Logic for TxSchedN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, from, last_prio, g_v, g_prio, g_qp, pk, woke, pconn, hc, hq, pw, timer,
            n_park, n_retry, cont, pv_r, pq_r
        );
        // Parking (module doc). `pmask`: the QP being parked this clock
        // (not offered from the next clock on).
        self.pmask.next = 0.into();
        if self.park_valid.val() {
            self.pmask.next = (bits::<64>(1) << self.park_qp.val()) & self.qset.val();
        }
        self.pv_r.d.next = self.park_valid.val();
        self.pq_r.d.next = self.park_qp.val();
        self.pmask_r.next = 0.into();
        if self.pv_r.q.val() {
            self.pmask_r.next = (bits::<64>(1) << self.pq_r.q.val()) & self.qset.val();
        }
        // Wakeups of parked QPs: by connection, by QP, by the retry sweep.
        self.hit.next = 0.into();
        for i in 0..64 {
            if self.wake_conn_valid.val()
                & (self.pconn.q.val().get_bits::<8>(8 * i) == self.wake_conn.val())
            {
                self.hit.next = self.hit.val().replace_bit(i, true);
            }
        }
        if self.wake_qp_valid.val() {
            self.hit.next =
                self.hit.val() | ((bits::<64>(1) << self.wake_qp.val()) & self.qset.val());
        }
        self.timer.d.next = self.timer.q.val() + 1;
        self.sweep.next = self.timer.q.val().all();
        if self.sweep.val() {
            self.hit.next = self.hit.val() | self.pk.q.val();
            if self.pk.q.val().any() {
                self.n_retry.d.next = self.n_retry.q.val() + 1;
            }
        }
        self.hit.next = self.hit.val() & self.pk.q.val();
        // A wakeup for the QP being parked: now, while it waits for its
        // park to be taken (`pw`), or in the last WAKE_HIST clocks.
        self.m_now.next = (self.wake_conn_valid.val()
            & (self.wake_conn.val() == self.park_conn.val()))
            | (self.wake_qp_valid.val() & (self.wake_qp.val() == self.park_qp.val()));
        self.m_hist.next = false;
        for i in 0..4 {
            if self.hc.q.val().get_bit(9 * i + 8)
                & (self.hc.q.val().get_bits::<8>(9 * i) == self.park_conn.val())
            {
                self.m_hist.next = true;
            }
            if self.hq.q.val().get_bit(7 * i + 6)
                & (self.hq.q.val().get_bits::<6>(7 * i) == self.park_qp.val())
            {
                self.m_hist.next = true;
            }
        }
        self.hc.d.next = (self.hc.q.val() << 9)
            | bit_cast::<36, 8>(self.wake_conn.val())
            | (bit_cast::<36, 1>(self.wake_conn_valid.val().into()) << 8);
        self.hq.d.next = (self.hq.q.val() << 7)
            | bit_cast::<28, 6>(self.wake_qp.val())
            | (bit_cast::<28, 1>(self.wake_qp_valid.val().into()) << 6);
        self.pw.d.next =
            self.pw.q.val() | (self.park_valid.val() & (self.m_now.val() | self.m_hist.val()));
        self.pk.d.next = self.pk.q.val() & !self.hit.val() & self.qset.val();
        self.woke_n.next = self.woke.q.val() | self.hit.val();
        self.gmask.next = 0.into();
        if self.park_fire.val() {
            self.pw.d.next = false;
            self.n_park.d.next = self.n_park.q.val() + 1;
            self.pconn.d.next = ((self.pconn.q.val()
                & !(bits::<512>(0xFF) << (bit_cast::<9, 6>(self.park_qp.val()) << 3)))
                | (bit_cast::<512, 8>(self.park_conn.val())
                    << (bit_cast::<9, 6>(self.park_qp.val()) << 3)))
                & self.pset.val();
            if self.m_now.val() | self.m_hist.val() | self.pw.q.val() {
                self.woke_n.next = self.woke_n.val() | self.pmask.val();
            } else {
                self.pk.d.next =
                    ((self.pk.q.val() & !self.hit.val()) | self.pmask.val()) & self.qset.val();
            }
        }
        self.parked.next = self.pk.q.val();
        // Contention (module doc): another QP waits for the segmenter.
        self.cont.d.next = ((((self.pending.val() | self.woke.q.val()) & !self.pk.q.val())
            | self.blocked.val())
            & !(bits::<64>(1) << self.cur_qp.val())
            & self.qset.val())
        .any()
            | self.fifo_others.val();
        self.contend.next = self.cont.q.val();
        self.cnt_park.next = self.n_park.q.val();
        self.cnt_park_retry.next = self.n_retry.q.val();
        // The first eligible QP at or after `ptr`, else the first eligible
        // QP (cyclically from `ptr`): the lowest set bit of `hi` if any, else
        // of `elig`, both found at once.
        self.elig.next = (self.pending.val() | self.woke.q.val())
            & !self.blocked.val()
            & !self.pk.q.val()
            & !self.pmask_r.val()
            & self.qset.val();
        self.hi.next = self.elig.val() & self.from.q.val();
        self.found.next = self.elig.val().any();
        // Lowest set bit as one-hot (x & -x), then its index bit by bit.
        self.oh_hi.next = self.hi.val() & (!self.hi.val() + 1);
        self.oh_all.next = self.elig.val() & (!self.elig.val() + 1);
        self.onehot.next = self.oh_all.val();
        if self.hi.val().any() {
            self.onehot.next = self.oh_hi.val();
        }
        self.idx.next = 0.into();
        if (self.onehot.val() & self.m0.val()).any() {
            self.idx.next = self.idx.val() | 1;
        }
        if (self.onehot.val() & self.m1.val()).any() {
            self.idx.next = self.idx.val() | 2;
        }
        if (self.onehot.val() & self.m2.val()).any() {
            self.idx.next = self.idx.val() | 4;
        }
        if (self.onehot.val() & self.m3.val()).any() {
            self.idx.next = self.idx.val() | 8;
        }
        if (self.onehot.val() & self.m4.val()).any() {
            self.idx.next = self.idx.val() | 16;
        }
        if (self.onehot.val() & self.m5.val()).any() {
            self.idx.next = self.idx.val() | 32;
        }
        self.qp.next = self.idx.val();
        self.take_prio.next = self.prio_valid.val() & (!self.found.val() | !self.last_prio.q.val());
        self.c_valid.next = self.found.val() | self.prio_valid.val();
        // The offer (registered); withdrawn for the clock after a handshake.
        // The choice saw parks only up to last clock (`pmask_r`): an offer
        // for the QP whose park began last clock is withdrawn here.
        self.gate.next =
            self.pv_r.q.val() & !self.g_prio.q.val() & (self.pq_r.q.val() == self.g_qp.q.val());
        self.grant_valid.next = self.g_v.q.val() & !self.gate.val();
        self.grant_prio.next = self.g_prio.q.val();
        self.grant_qp.next = self.g_qp.q.val();
        self.fire.next = self.grant_valid.val() & self.grant_ready.val();
        self.g_v.d.next = self.c_valid.val() & !self.fire.val();
        self.g_prio.d.next = self.take_prio.val();
        self.g_qp.d.next = self.qp.val();
        if self.fire.val() {
            self.last_prio.d.next = self.g_prio.q.val();
            if !self.g_prio.q.val() {
                // `ptr` = the QP after it: the QPs above it (none after
                // the last QP: `ptr` 0, the search of all of `elig`).
                self.from.d.next =
                    !((bits::<64>(2) << self.g_qp.q.val()) - bits::<64>(1)) & self.qset.val();
                // A woken QP's grant is taken: it is an ordinary QP again.
                self.gmask.next = bits::<64>(1) << self.g_qp.q.val();
            }
        }
        self.woke.d.next = self.woke_n.val() & !self.gmask.val() & self.qset.val();
        if self.reset.val() {
            self.from.d.next = self.qset.val();
            self.last_prio.d.next = false;
            self.g_v.d.next = false;
            self.pv_r.d.next = false;
            self.pk.d.next = 0.into();
            self.woke.d.next = 0.into();
            self.pw.d.next = false;
            self.hc.d.next = 0.into();
            self.hq.d.next = 0.into();
            self.n_park.d.next = 0.into();
            self.n_retry.d.next = 0.into();
            self.cont.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    /// The scheduler with every input connected, after a reset clock.
    fn uut<const PR: usize>() -> TxSchedN<PR> {
        let mut u = TxSchedN::<PR>::default();
        u.clock.connect();
        u.reset.connect();
        u.pending.connect();
        u.blocked.connect();
        u.prio_valid.connect();
        u.grant_ready.connect();
        u.park_valid.connect();
        u.park_fire.connect();
        u.park_qp.connect();
        u.park_conn.connect();
        u.wake_conn_valid.connect();
        u.wake_conn.connect();
        u.wake_qp_valid.connect();
        u.wake_qp.connect();
        u.cur_qp.connect();
        u.fifo_others.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u
    }

    /// Random pending sets (each QP's work is a random number of grants),
    /// random priority work and random `grant_ready`: checks round-robin
    /// order against a reference, the bound on waiting, and measures
    /// fairness.
    #[test]
    fn round_robin_and_priority_bounds() {
        round_robin_for::<{ crate::profile::PR_SIM }>(false);
    }

    /// The board profile (16 QPs): round robin over QPs 0..15 (the pointer
    /// wraps at 16), with random pending bits on QPs 16..63 that must never
    /// be granted (no doorbell sets them in the core; a 64-QP scheduler
    /// grants them).
    #[test]
    fn board_round_robin_16_qps() {
        round_robin_for::<{ crate::profile::PR_BOARD }>(true);
    }

    fn round_robin_for<const PR: usize>(noise: bool) {
        let nq = crate::transmit::doorbell::profile_qps(PR);
        let mut u = uut::<PR>();
        let mut rng = Rng::new(3);
        let mut work = [0u32; 64];
        let mut ptr = 0usize;
        let mut last_prio = false;
        let mut prio_wait = 0u32;
        let mut prio_left = 0u32;
        let mut max_prio_wait = 0;
        let mut grants = [0u32; 64];
        let mut max_gap = [0u32; 64]; // QP grants between two of one QP's
        let mut since = [0u32; 64];
        let mut qp_grants = 0u32;
        let mut offer: (Option<usize>, bool, bool) = (None, false, false);
        let mut handshakes = 0u32;
        for cycle in 0..3000 {
            if cycle % 40 == 0 {
                for w in work.iter_mut().take(nq) {
                    if rng.below(3) == 0 {
                        *w += 1 + rng.below(4) as u32;
                    }
                }
            }
            if prio_left == 0 && rng.below(4) == 0 {
                prio_left = 1 + rng.below(3) as u32;
            }
            let mut pend: u64 = (0..64).fold(0, |a, i| a | ((work[i] > 0) as u64) << i);
            if noise {
                // QPs beyond the profile: ignored.
                pend |= rng.next_u64() & !((1u64 << nq) - 1);
            }
            u.pending.next = pend.into();
            u.prio_valid.next = prio_left > 0;
            let ready = rng.below(4) != 0;
            u.grant_ready.next = ready;
            assert!(simulate(&mut u, 1000));
            // Reference: the offer is the choice made one clock earlier
            // (from the state then), none in the clock after a handshake.
            let (c_ptr, c_work, c_prio_left, c_last_prio) = (ptr, work, prio_left, last_prio);
            let (next, want_prio, offered) = offer;
            assert_eq!(u.grant_valid.val(), offered, "cycle {cycle}");
            if offered {
                assert_eq!(u.grant_prio.val(), want_prio, "cycle {cycle}");
                if !want_prio {
                    assert_eq!(u.grant_qp.val().to_u64() as usize, next.unwrap());
                }
            }
            if prio_left > 0 {
                prio_wait += 1;
            }
            let fired = offered && ready;
            if fired {
                last_prio = want_prio;
                if want_prio {
                    prio_left -= 1;
                    max_prio_wait = max_prio_wait.max(prio_wait);
                    prio_wait = 0;
                } else {
                    let q = next.unwrap();
                    work[q] -= 1;
                    grants[q] += 1;
                    qp_grants += 1;
                    for (i, s) in since.iter_mut().enumerate() {
                        if i != q && work[i] > 0 {
                            *s += 1;
                        }
                    }
                    max_gap[q] = max_gap[q].max(since[q]);
                    since[q] = 0;
                    ptr = (q + 1) % nq;
                }
            }
            // The choice registered at this edge, from the state of this
            // clock (before the handshake's updates).
            let c_next = (0..nq).map(|k| (c_ptr + k) % nq).find(|&q| c_work[q] > 0);
            let c_prio = c_prio_left > 0 && (c_next.is_none() || !c_last_prio);
            offer = (
                c_next,
                c_prio,
                (c_next.is_some() || c_prio_left > 0) && !fired,
            );
            tick!(u);
            handshakes += fired as u32;
        }
        let busiest = *max_gap.iter().max().unwrap();
        eprintln!(
            "tx_sched ({nq} QPs): {handshakes} grants in 3000 clocks ({qp_grants} QP grants), max QP grants between two grants of one waiting QP {busiest} (<= {}), max priority wait {max_prio_wait} clocks",
            nq - 1
        );
        assert!(
            (busiest as usize) < nq,
            "a waiting QP was passed over more than once per round"
        );
        assert!(grants.iter().take(nq).all(|&g| g > 0));
        assert!(grants.iter().skip(nq).all(|&g| g == 0));
    }

    /// Parks (as `TxSeg` and `WqeFetch` give them: `park_valid` held until
    /// `park_fire`, which comes in the first clock or a few later, and no
    /// grant taken while `park_valid` is up) of QPs that stay pending, with
    /// no wakeup: from the clock after a park begins its QP is never offered
    /// again, and the QPs not parked keep being granted.
    #[test]
    fn a_parking_qp_is_not_offered_after_its_park_begins() {
        let mut u = uut::<{ crate::profile::PR_SIM }>();
        let mut rng = Rng::new(11);
        let nq = 12usize;
        // QP -> clock its park began.
        let mut parked: [Option<u32>; 64] = [None; 64];
        let mut park: Option<(usize, u32)> = None; // (qp, clocks left)
        let mut grants = [0u32; 64];
        let mut n_parks = 0;
        let mut offered_qp: Option<usize> = None;
        // Below the retry sweep (PARK_RETRY), which would wake them.
        for cycle in 0..(PARK_RETRY as u32 - 200) {
            // Park the QP on offer (it stays the choice while no grant is
            // taken): the case a choice that sees the park late gets wrong.
            if let (None, true, Some(q)) = (park, n_parks < 6, offered_qp) {
                park = Some((q, rng.below(4) as u32));
                parked[q] = Some(cycle);
                n_parks += 1;
            }
            u.pending.next = ((1u64 << nq) - 1).into();
            u.park_valid.next = park.is_some();
            u.park_qp.next = (park.map_or(0, |p| p.0) as u64).into();
            u.park_conn.next = (park.map_or(0, |p| p.0) as u64).into();
            u.park_fire.next = matches!(park, Some((_, 0)));
            let ready = park.is_none() && rng.below(4) != 0;
            u.grant_ready.next = ready;
            assert!(simulate(&mut u, 1000));
            offered_qp = None;
            if u.grant_valid.val() && !u.grant_prio.val() {
                let q = u.grant_qp.val().to_u64() as usize;
                if cycle % 300 == 299 {
                    offered_qp = Some(q);
                }
                if let Some(since) = parked[q] {
                    assert!(
                        cycle <= since,
                        "cycle {cycle}: QP {q} offered, its park began at {since}"
                    );
                }
                if ready {
                    grants[q] += 1;
                }
            }
            park = match park {
                Some((q, n)) if n > 0 => Some((q, n - 1)),
                _ => None,
            };
            tick!(u);
        }
        assert_eq!(n_parks, 6);
        assert_eq!(u.parked.val().to_u64().count_ones(), 6);
        for q in 0..nq {
            if parked[q].is_none() {
                assert!(grants[q] > 50, "QP {q} starved: {} grants", grants[q]);
            }
        }
    }

    #[test]
    fn generates_verilog() {
        let mut u = TxSched::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "tx_sched");
        assert!(v.contains("module tx_sched("));
        if let Ok(path) = std::env::var("TX_SCHED_VERILOG") {
            std::fs::write(path, &v).unwrap();
        }
    }
}
