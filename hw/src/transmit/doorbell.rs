//! Doorbell pages: MMIO decode of the per-QP doorbell pages of BAR0 into
//! per-QP send-queue producer index registers and a pending bitmap.
//!
//! * QP `n`'s page is at `QP_DOORBELL_BASE + n * DOORBELL_PAGE_SIZE`
//!   (`rnic_wire::abi::csr`); a write of `QP_SQ_PRODUCER` (+0) stores the
//!   free-running 32-bit producer index in an `n_qp`-entry RAM and sets
//!   `pending[n]`. Three kinds of write are passed on as one-clock pulses,
//!   one clock after the write, in write order, with its QP and value
//!   (`wr_qp`, `wr_value`): `QP_RQ_PRODUCER` (+4) on `rq_valid` (for the
//!   receive side), `QP_SQ_PRODUCER` on `sq_valid` (the WQE push buffer's
//!   binding to its index), and a write inside the push window
//!   `QP_SQ_PUSH` (+0x800, 128 octets) on `push_valid` with its dword
//!   `push_dw` (`wqe_fetch` keeps the push buffer;
//!   `abi::doorbell::QP_SQ_PUSH` has the rules). Any other write inside
//!   the QP doorbell area (`QP_DOORBELL_PAGES` pages: a QP at or above the
//!   profile's QPs, `PROFILES[PR].fw.n_qp` = 64 in the sim core, 16 on the
//!   board; another offset) is ignored and counted in `cnt_db_bad` (the
//!   core's `cnt_db_bad` output): a send or receive doorbell of a QP the
//!   profile does not have is refused, never aliased onto another QP.
//!   All QP indices are ANDed with `n_qp - 1` where they are used (shifts,
//!   RAM addresses), so on the board the state of QPs 16..63 has no reader
//!   or writer and synthesis removes it. Reads are not answered here (the CSR read mux
//!   returns 0 for doorbell pages).
//! * `take_valid`/`take_qp`: the fetch unit takes a QP's work: `take_prod`
//!   is its producer index after the next edge (`take_ack` high), and
//!   `pending[take_qp]` is cleared — unless a doorbell for the same QP is
//!   written in the same clock, which wins (no doorbell is ever lost).
//! * `rearm_valid`/`rearm_qp`: sets a pending bit again (the fetch unit did
//!   not fetch everything up to the producer index it took).
//! * `reset` clears `pending` and the counters; the producer RAM keeps its
//!   contents (the host rewrites a QP's doorbell when it brings it up).

use rnic_wire::abi::csr::{DOORBELL_PAGE_SIZE, QP_DOORBELL_BASE, QP_DOORBELL_PAGES};
use rnic_wire::abi::doorbell::{QP_RQ_PRODUCER, QP_SQ_PRODUCER, QP_SQ_PUSH, QP_SQ_PUSH_SIZE};
use rust_hdl::prelude::*;

/// Number of QPs the doorbell block serves (`pending` width).
pub const DB_QPS: usize = 64;
/// log2 of [`DB_QPS`].
pub const DB_LOG2_QPS: usize = 6;

/// The doorbell pages of the sim profile (64 QPs).
pub type Doorbell = DoorbellN<{ crate::profile::PR_SIM }>;

/// The QP count of profile `pr` (a power of two, at most [`DB_QPS`]).
pub fn profile_qps(pr: usize) -> usize {
    let n = crate::profile::PROFILES[pr].fw.n_qp as usize;
    assert!(n.is_power_of_two() && n <= DB_QPS);
    n
}

/// `n_qp - 1` of profile `pr`: the QP index mask.
pub fn qp_mask(pr: usize) -> Constant<Bits<6>> {
    Constant::new(((profile_qps(pr) - 1) as u64).into())
}

/// The bitmap of the QPs of profile `pr` (bit n set for QP n < n_qp).
pub fn qp_set(pr: usize) -> Constant<Bits<64>> {
    let n = profile_qps(pr);
    Constant::new((if n == 64 { u64::MAX } else { (1u64 << n) - 1 }).into())
}

#[derive(LogicBlock)]
pub struct DoorbellN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub csr_valid: Signal<In, Bit>,
    pub csr_write: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<24>>,
    pub csr_wdata: Signal<In, Bits<32>>,
    pub pending: Signal<Out, Bits<64>>,
    pub take_valid: Signal<In, Bit>,
    pub take_qp: Signal<In, Bits<6>>,
    pub take_ack: Signal<Out, Bit>,
    pub take_prod: Signal<Out, Bits<32>>,
    pub rearm_valid: Signal<In, Bit>,
    pub rearm_qp: Signal<In, Bits<6>>,
    /// The pulses (module doc), one clock after their write: a
    /// receive-queue producer write, a send-queue producer write, a
    /// push-window write (dword `push_dw`); each with the write's QP
    /// (`wr_qp`) and value (`wr_value`).
    pub rq_valid: Signal<Out, Bit>,
    pub sq_valid: Signal<Out, Bit>,
    pub push_valid: Signal<Out, Bit>,
    pub wr_qp: Signal<Out, Bits<6>>,
    pub wr_value: Signal<Out, Bits<32>>,
    pub push_dw: Signal<Out, Bits<5>>,
    pub cnt_db: Signal<Out, Bits<32>>,
    pub cnt_db_bad: Signal<Out, Bits<32>>,
    base: Constant<Bits<24>>,
    window: Constant<Bits<24>>,
    area: Constant<Bits<24>>,
    off_sq: Constant<Bits<12>>,
    off_rq: Constant<Bits<12>>,
    qm: Constant<Bits<6>>,
    qset: Constant<Bits<64>>,
    prod: crate::common::qp_ram::QpRam<Bits<32>, PR>,
    pend: DFF<Bits<64>>,
    ack: DFF<Bit>,
    rqv: DFF<Bit>,
    wrq: DFF<Bits<6>>,
    wrv: DFF<Bits<32>>,
    sqv: DFF<Bit>,
    pwv: DFF<Bit>,
    pdw: DFF<Bits<5>>,
    n_db: DFF<Bits<32>>,
    n_bad: DFF<Bits<32>>,
    rel: Signal<Local, Bits<24>>,
    in_win: Signal<Local, Bit>,
    in_area: Signal<Local, Bit>,
    qp: Signal<Local, Bits<6>>,
    sq_wr: Signal<Local, Bit>,
    rq_wr: Signal<Local, Bit>,
    push_wr: Signal<Local, Bit>,
    pnext: Signal<Local, Bits<64>>,
    tq: Signal<Local, Bits<6>>,
    aq: Signal<Local, Bits<6>>,
}

impl<const PR: usize> Default for DoorbellN<PR> {
    fn default() -> Self {
        const _: () = assert!(DOORBELL_PAGE_SIZE == 1 << 12);
        // The push window decode: 128 octets at 0x800 (`rel[11:7] == 16`).
        const _: () = assert!(QP_SQ_PUSH == 16 << 7 && QP_SQ_PUSH_SIZE == 1 << 7);
        Self {
            clock: Default::default(),
            reset: Default::default(),
            csr_valid: Default::default(),
            csr_write: Default::default(),
            csr_addr: Default::default(),
            csr_wdata: Default::default(),
            pending: Default::default(),
            take_valid: Default::default(),
            take_qp: Default::default(),
            take_ack: Default::default(),
            take_prod: Default::default(),
            rearm_valid: Default::default(),
            rearm_qp: Default::default(),
            rq_valid: Default::default(),
            wr_qp: Default::default(),
            wr_value: Default::default(),
            sq_valid: Default::default(),
            push_valid: Default::default(),
            push_dw: Default::default(),
            cnt_db: Default::default(),
            cnt_db_bad: Default::default(),
            base: Constant::new((QP_DOORBELL_BASE as u64).into()),
            window: Constant::new(((profile_qps(PR) as u64) * DOORBELL_PAGE_SIZE as u64).into()),
            area: Constant::new((QP_DOORBELL_PAGES as u64 * DOORBELL_PAGE_SIZE as u64).into()),
            off_sq: Constant::new((QP_SQ_PRODUCER as u64).into()),
            off_rq: Constant::new((QP_RQ_PRODUCER as u64).into()),
            qm: qp_mask(PR),
            qset: qp_set(PR),
            prod: Default::default(),
            pend: Default::default(),
            ack: Default::default(),
            rqv: Default::default(),
            wrq: Default::default(),
            wrv: Default::default(),
            sqv: Default::default(),
            pwv: Default::default(),
            pdw: Default::default(),
            n_db: Default::default(),
            n_bad: Default::default(),
            rel: Default::default(),
            in_win: Default::default(),
            in_area: Default::default(),
            qp: Default::default(),
            sq_wr: Default::default(),
            rq_wr: Default::default(),
            push_wr: Default::default(),
            pnext: Default::default(),
            tq: Default::default(),
            aq: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for DoorbellN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pend, ack, rqv, wrq, wrv, sqv, pwv, pdw, n_db, n_bad);
        self.prod.read_clock.next = self.clock.val();
        self.prod.write_clock.next = self.clock.val();
        // Decode: the QP doorbell window is [base, base + n_qp pages).
        self.rel.next = self.csr_addr.val() - self.base.val();
        self.in_area.next = self.csr_valid.val()
            & self.csr_write.val()
            & (self.csr_addr.val() >= self.base.val())
            & (self.rel.val() < self.area.val());
        self.in_win.next = self.in_area.val() & (self.rel.val() < self.window.val());
        self.qp.next = self.rel.val().get_bits::<6>(12) & self.qm.val();
        self.tq.next = self.take_qp.val() & self.qm.val();
        self.aq.next = self.rearm_qp.val() & self.qm.val();
        self.sq_wr.next =
            self.in_win.val() & (self.rel.val().get_bits::<12>(0) == self.off_sq.val());
        self.rq_wr.next =
            self.in_win.val() & (self.rel.val().get_bits::<12>(0) == self.off_rq.val());
        // The push window: offsets 0x800..0x880 of the page.
        self.push_wr.next = self.in_win.val() & (self.rel.val().get_bits::<5>(7) == 16);
        // Producer RAM: doorbell writes; take reads (registered).
        self.prod.write_address.next = self.qp.val();
        self.prod.write_data.next = self.csr_wdata.val();
        self.prod.write_enable.next = self.sq_wr.val();
        self.prod.read_address.next = self.tq.val();
        self.take_prod.next = self.prod.read_data.val();
        self.ack.d.next = self.take_valid.val();
        self.take_ack.next = self.ack.q.val();
        // Pending bitmap: clear on take, then set on rearm and doorbell (set wins).
        self.pnext.next = self.pend.q.val();
        if self.take_valid.val() {
            self.pnext.next = self.pnext.val() & !(bits::<64>(1) << self.tq.val());
        }
        if self.rearm_valid.val() {
            self.pnext.next = self.pnext.val() | (bits::<64>(1) << self.aq.val());
        }
        if self.sq_wr.val() {
            self.pnext.next = self.pnext.val() | (bits::<64>(1) << self.qp.val());
        }
        self.pend.d.next = self.pnext.val() & self.qset.val();
        self.pending.next = self.pend.q.val();
        // RQ and SQ producer writes and push writes go on as pulses
        // (sharing the QP and value registers: one write a clock).
        self.rqv.d.next = self.rq_wr.val();
        self.sqv.d.next = self.sq_wr.val();
        self.pwv.d.next = self.push_wr.val();
        self.wrq.d.next = self.qp.val();
        self.wrv.d.next = self.csr_wdata.val();
        self.pdw.d.next = self.rel.val().get_bits::<5>(2);
        self.rq_valid.next = self.rqv.q.val();
        self.sq_valid.next = self.sqv.q.val();
        self.push_valid.next = self.pwv.q.val();
        self.push_dw.next = self.pdw.q.val();
        self.wr_qp.next = self.wrq.q.val();
        self.wr_value.next = self.wrv.q.val();
        // Counters.
        if self.sq_wr.val() | self.rq_wr.val() {
            self.n_db.d.next = self.n_db.q.val() + 1;
        }
        if self.in_area.val() & !self.sq_wr.val() & !self.rq_wr.val() & !self.push_wr.val() {
            self.n_bad.d.next = self.n_bad.q.val() + 1;
        }
        self.cnt_db.next = self.n_db.q.val();
        self.cnt_db_bad.next = self.n_bad.q.val();
        if self.reset.val() {
            self.pend.d.next = 0.into();
            self.ack.d.next = false;
            self.rqv.d.next = false;
            self.sqv.d.next = false;
            self.pwv.d.next = false;
            self.n_db.d.next = 0.into();
            self.n_bad.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    fn uut<const PR: usize>() -> DoorbellN<PR> {
        let mut u = DoorbellN::<PR>::default();
        u.clock.connect();
        u.reset.connect();
        u.csr_valid.connect();
        u.csr_write.connect();
        u.csr_addr.connect();
        u.csr_wdata.connect();
        u.take_valid.connect();
        u.take_qp.connect();
        u.rearm_valid.connect();
        u.rearm_qp.connect();
        u.connect_all();
        u
    }

    fn write<const PR: usize>(u: &mut DoorbellN<PR>, addr: u32, v: u32) {
        u.csr_valid.next = true;
        u.csr_write.next = true;
        u.csr_addr.next = (addr as u64).into();
        u.csr_wdata.next = (v as u64).into();
        tick!(*u);
        u.csr_valid.next = false;
    }

    fn page(qp: u32) -> u32 {
        QP_DOORBELL_BASE + qp * DOORBELL_PAGE_SIZE
    }

    /// Random doorbells against a Rust model of the pages; takes in between.
    #[test]
    fn doorbells_match_model() {
        doorbells_match_model_for::<{ crate::profile::PR_SIM }>();
    }

    /// The board profile (16 QPs): the same model with 16 pages; send and
    /// receive doorbells of QPs 16..63 are refused and counted in
    /// `cnt_db_bad` (with the 64-page window they were accepted).
    #[test]
    fn board_doorbells_refuse_qp16() {
        doorbells_match_model_for::<{ crate::profile::PR_BOARD }>();
        let mut u = uut::<{ crate::profile::PR_BOARD }>();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        tick!(u);
        write(&mut u, page(16) + QP_SQ_PRODUCER, 9);
        write(&mut u, page(63) + QP_SQ_PRODUCER, 9);
        write(&mut u, page(16) + QP_RQ_PRODUCER, 9);
        assert!(!u.rq_valid.val());
        tick!(u);
        assert!(!u.rq_valid.val());
        assert_eq!(u.pending.val().to_u64(), 0, "QP 16 aliased onto QP 0");
        assert_eq!(u.cnt_db.val().to_u64(), 0);
        assert_eq!(u.cnt_db_bad.val().to_u64(), 3);
        write(&mut u, page(15) + QP_SQ_PRODUCER, 9);
        tick!(u);
        assert_eq!(u.pending.val().to_u64(), 1 << 15);
    }

    fn doorbells_match_model_for<const PR: usize>() {
        let nq = profile_qps(PR);
        let mut u = uut::<PR>();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        let mut rng = Rng::new(7);
        let mut prod = [0u32; DB_QPS];
        let mut pend = 0u64;
        let (mut good, mut bad) = (0u64, 0u64);
        for _ in 0..400 {
            match rng.below(7) {
                0..=2 => {
                    let qp = rng.below(nq) as u32;
                    let v = rng.next_u64() as u32;
                    write(&mut u, page(qp) + QP_SQ_PRODUCER, v);
                    assert!(u.sq_valid.val() && !u.push_valid.val() && !u.rq_valid.val());
                    assert_eq!(
                        (u.wr_qp.val().to_u64(), u.wr_value.val().to_u64()),
                        (qp as u64, v as u64)
                    );
                    prod[qp as usize] = v;
                    pend |= 1 << qp;
                    good += 1;
                }
                3 => {
                    let qp = rng.below(nq) as u32;
                    write(&mut u, page(qp) + QP_RQ_PRODUCER, 77);
                    assert!(
                        u.rq_valid.val() || {
                            tick!(u);
                            u.rq_valid.val()
                        }
                    );
                    assert_eq!(u.wr_qp.val().to_u64(), qp as u64);
                    good += 1;
                }
                4 => {
                    // Outside the n_qp pages, other offsets (either side of
                    // the push window), reads: ignored.
                    let (a, counted) = match rng.below(5) {
                        0 => (page((nq + rng.below(100)) as u32), true),
                        1 => (page(rng.below(nq) as u32) + 8, true),
                        2 => (page(rng.below(nq) as u32) + QP_SQ_PUSH - 4, true),
                        3 => (
                            page(rng.below(nq) as u32) + QP_SQ_PUSH + QP_SQ_PUSH_SIZE,
                            true,
                        ),
                        _ => (0x0020, false),
                    };
                    write(&mut u, a, 5);
                    assert!(!u.sq_valid.val() && !u.push_valid.val() && !u.rq_valid.val());
                    if counted {
                        bad += 1;
                    }
                }
                5 => {
                    // A push-window write: a pulse with its QP, dword and
                    // value; no doorbell, not counted bad.
                    let qp = rng.below(nq) as u32;
                    let dw = rng.below(32) as u32;
                    let v = rng.next_u64() as u32;
                    write(&mut u, page(qp) + QP_SQ_PUSH + 4 * dw, v);
                    assert!(u.push_valid.val() && !u.sq_valid.val() && !u.rq_valid.val());
                    assert_eq!(
                        (
                            u.wr_qp.val().to_u64(),
                            u.push_dw.val().to_u64(),
                            u.wr_value.val().to_u64()
                        ),
                        (qp as u64, dw as u64, v as u64)
                    );
                }
                _ => {
                    let qp = rng.below(nq);
                    u.take_valid.next = true;
                    u.take_qp.next = (qp as u64).into();
                    tick!(u);
                    u.take_valid.next = false;
                    assert!(u.take_ack.val());
                    assert_eq!(u.take_prod.val().to_u64(), prod[qp] as u64);
                    pend &= !(1 << qp);
                }
            }
            tick!(u);
            assert_eq!(u.pending.val().to_u64(), pend);
        }
        assert_eq!(u.cnt_db.val().to_u64(), good);
        assert_eq!(u.cnt_db_bad.val().to_u64(), bad);
        // A doorbell in the same clock as the take of the same QP wins.
        write(&mut u, page(9), 123);
        u.take_valid.next = true;
        u.take_qp.next = 9.into();
        write(&mut u, page(9), 124);
        u.take_valid.next = false;
        tick!(u);
        assert!(u.pending.val().get_bit(9));
        // Rearm sets, reset clears.
        u.rearm_valid.next = true;
        u.rearm_qp.next = ((nq - 1) as u64).into();
        tick!(u);
        u.rearm_valid.next = false;
        tick!(u);
        assert!(u.pending.val().get_bit(nq - 1));
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        tick!(u);
        assert_eq!(u.pending.val().to_u64(), 0);
    }

    #[test]
    fn generates_verilog() {
        let mut u = Doorbell::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "doorbell");
        assert!(v.contains("module doorbell("));
        if let Ok(path) = std::env::var("DOORBELL_VERILOG") {
            std::fs::write(path, &v).unwrap();
        }
    }
}
