//! Requester side of RDMA Read: the per-QP record of outstanding Read
//! Requests (ORD-bounded) and the completion of a Read when its last Read
//! Response has been placed (RFC 5040 §5.3: a Read completes at the
//! requester once all of its Read Response data is placed; §4.5: the last
//! Read Response segment carries L = 1).
//!
//! * `sent_*`: `tx_seg`'s pulse when an RDMA Read WQE's Read Request went to
//!   the framer: {wr_id, signaled, sink length} is appended to the QP's
//!   record (64 QPs x [`ORD_MAX`] entries in a RAM, FIFO per QP: Read
//!   Responses come back in request order, RFC 5040 §5.3). `hq_*` tells
//!   `tx_seg` when a QP has ORD Reads outstanding, so it holds the next Read
//!   WQE; a Read beyond the ORD that still arrives (ORD 0, or the ORD
//!   lowered by a context write) is not recorded: counted in `cnt_ord_over`.
//! * `tag_*`: `ddp_rx`'s record of a placed tagged segment, presented as
//!   `tag_valid` in the clock it is taken (`busy` asks the core to hold the
//!   records while one is being handled). A Read Response with L = 1 for a
//!   QP with an outstanding Read completes the oldest one: a completion
//!   record on `cpl_*` (status `WcStatus::Success`, the Read's length) if it
//!   was signaled. With none outstanding → a Terminate request: RDMAP
//!   Remote Operation "Unexpected OpCode" (0/2/6, RFC 5040 §7), echo = the
//!   tagged DDP header rebuilt (RFC 5041 §4.2). `ddp_rx` asks `rx_*` first
//!   and refuses a Read Response for a QP with no Read outstanding before
//!   placing it, so this path is the backstop for a record that reaches the
//!   tracker without one.
//! * `cfg_*` (QP context write): ORD (clamped to [`ORD_MAX`]); the record is
//!   emptied.
//! * Profile (`RdTrackN<PR>`): the QPs are `PROFILES[PR].fw.n_qp` (64 in the
//!   sim core, 16 on the board). Every QP index is ANDed with `n_qp - 1` at
//!   its point of use and the packed per-QP vectors with the profile's
//!   fields, so the board's state for QPs 16..63 has no reader or writer.
//!   A `sent_*`/`cfg_*` of a QP beyond the profile is ignored, a Read
//!   Response for one is not tracked (as for a QP >= 64 before).

use crate::common::k;
use rnic_wire::rdmap::Opcode;
use rnic_wire::terminate::{RemoteOperationError, TerminateCause};
use rust_hdl::prelude::*;

/// Outstanding Reads kept per QP.
pub const ORD_MAX: u64 = 8;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum RtState {
    Idle,
    Look,
    Rd,
    Cpl,
    Term,
}

/// The tracker of the sim profile (64 QPs).
pub type RdTrack = RdTrackN<{ crate::profile::PR_SIM }>;

/// A constant of `W` bits with the low `n` bits set.
fn low_ones<const W: usize>(n: usize) -> Constant<Bits<W>> {
    Constant::new((0..W).fold(Bits::<W>::default(), |m, i| m.replace_bit(i, i < n)))
}

#[derive(LogicBlock)]
pub struct RdTrackN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub sent_valid: Signal<In, Bit>,
    pub sent_qp: Signal<In, Bits<6>>,
    pub sent_wr_id: Signal<In, Bits<64>>,
    pub sent_signaled: Signal<In, Bit>,
    pub sent_len: Signal<In, Bits<32>>,
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_qp: Signal<In, Bits<6>>,
    pub cfg_ord: Signal<In, Bits<16>>,
    /// ORD query for `tx_seg` (RFC 5040 §6.2 / RFC 6581: the requester
    /// issues no more than ORD Read Requests at a time): `hq_full` = QP
    /// `hq_qp` has ORD Reads outstanding (ORD 0 never reads as full).
    /// Combinational from registered state.
    pub hq_qp: Signal<In, Bits<6>>,
    pub hq_full: Signal<Out, Bit>,
    /// QP `hq_qp` has a Read outstanding (a fenced WQE waits: IB fence,
    /// `WQE_FLAG_FENCE`).
    pub hq_any: Signal<Out, Bit>,
    /// Receive query for `ddp_rx`: `rx_any` = QP `rx_qp` has a Read
    /// outstanding, so a Read Response for it may be placed (RFC 5040 §5.3:
    /// a Read Response answers an outstanding Read Request; one without is
    /// refused before anything is written). A QP beyond the profile has
    /// none. Combinational from registered state; while `busy`, a record
    /// being handled may still pop a Read, so the asker waits.
    pub rx_qp: Signal<In, Bits<32>>,
    pub rx_any: Signal<Out, Bit>,
    /// Pulse: QP `dec_qp`'s outstanding count went down (a Read's last
    /// Read Response): `TxSched` wakes the QP if it is parked at ORD.
    pub dec_valid: Signal<Out, Bit>,
    pub dec_qp: Signal<Out, Bits<6>>,
    pub tag_valid: Signal<In, Bit>,
    pub busy: Signal<Out, Bit>,
    pub tag_opcode: Signal<In, Bits<4>>,
    pub tag_ddp_last: Signal<In, Bit>,
    pub tag_stag: Signal<In, Bits<32>>,
    pub tag_to: Signal<In, Bits<64>>,
    pub tag_len: Signal<In, Bits<16>>,
    pub tag_conn: Signal<In, Bits<32>>,
    pub tag_qpn: Signal<In, Bits<32>>,
    pub cpl_valid: Signal<Out, Bit>,
    pub cpl_ready: Signal<In, Bit>,
    pub cpl_qp: Signal<Out, Bits<6>>,
    pub cpl_wr_id: Signal<Out, Bits<64>>,
    pub cpl_status: Signal<Out, Bits<8>>,
    pub cpl_len: Signal<Out, Bits<32>>,
    pub term_valid: Signal<Out, Bit>,
    pub term_ready: Signal<In, Bit>,
    pub term_cause: Signal<Out, Bits<16>>,
    pub term_hdr: Signal<Out, Bits<384>>,
    pub term_seg_len: Signal<Out, Bits<16>>,
    pub term_conn: Signal<Out, Bits<32>>,
    pub term_qpn: Signal<Out, Bits<32>>,
    pub cnt_cpl: Signal<Out, Bits<32>>,
    pub cnt_ord_over: Signal<Out, Bits<32>>,
    pub cnt_term: Signal<Out, Bits<32>>,
    /// {signaled[96], len[95:64], wr_id[63:0]} at {qp, slot}.
    ram: RAM<Bits<97>, 9>,
    k_op_rresp: Constant<Bits<4>>,
    k_ord_max: Constant<Bits<16>>,
    k_c_unexp: Constant<Bits<16>>,
    m1: Constant<Bits<64>>,
    m2: Constant<Bits<64>>,
    m3: Constant<Bits<64>>,
    state: DFF<RtState>,
    qp: DFF<Bits<6>>,
    conn: DFF<Bits<32>>,
    qpn: DFF<Bits<32>>,
    stag: DFF<Bits<32>>,
    to: DFF<Bits<64>>,
    len: DFF<Bits<16>>,
    /// The completion record, taken from the RAM in `Rd` (the RAM's read
    /// address moves on with the head after the pop).
    c_wr_id: DFF<Bits<64>>,
    c_len: DFF<Bits<32>>,
    /// Per QP: ORD (4 bits), count (4 bits), head slot (3 bits).
    ord: DFF<Bits<256>>,
    cnt: DFF<Bits<256>>,
    head: DFF<Bits<192>>,
    c_cpl: DFF<Bits<32>>,
    c_over: DFF<Bits<32>>,
    c_term: DFF<Bits<32>>,
    cnt_v: Signal<Local, Bits<256>>,
    head_v: Signal<Local, Bits<192>>,
    s4: Signal<Local, Bits<8>>,
    s3: Signal<Local, Bits<8>>,
    q4: Signal<Local, Bits<8>>,
    q3: Signal<Local, Bits<8>>,
    c4: Signal<Local, Bits<8>>,
    h4: Signal<Local, Bits<8>>,
    sh_h_cnt: Signal<Local, Bits<256>>,
    sh_h_ord: Signal<Local, Bits<256>>,
    h_cnt: Signal<Local, Bits<4>>,
    h_ord: Signal<Local, Bits<4>>,
    /// Per-QP vectors shifted down to a QP's field (rust-hdl has no
    /// variable part-select; only the low bits are used).
    sh_s_cnt: Signal<Local, Bits<256>>,
    sh_s_ord: Signal<Local, Bits<256>>,
    sh_s_head: Signal<Local, Bits<192>>,
    sh_q_cnt: Signal<Local, Bits<256>>,
    sh_q_head: Signal<Local, Bits<192>>,
    s_cnt: Signal<Local, Bits<4>>,
    s_head: Signal<Local, Bits<3>>,
    s_ord: Signal<Local, Bits<4>>,
    q_cnt: Signal<Local, Bits<4>>,
    q_head: Signal<Local, Bits<3>>,
    ord_v: Signal<Local, Bits<4>>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    r_stag: Signal<Local, Bits<32>>,
    r_to: Signal<Local, Bits<64>>,
    qm: Constant<Bits<6>>,
    k_nq: Constant<Bits<32>>,
    m_cnt: Constant<Bits<256>>,
    m_head: Constant<Bits<192>>,
    sq: Signal<Local, Bits<6>>,
    cq: Signal<Local, Bits<6>>,
    hq: Signal<Local, Bits<6>>,
    rq4: Signal<Local, Bits<8>>,
    sh_r_cnt: Signal<Local, Bits<256>>,
    pq: Signal<Local, Bits<6>>,
    s_ok: Signal<Local, Bit>,
    c_ok: Signal<Local, Bit>,
}

impl<const PR: usize> Default for RdTrackN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            sent_valid: Default::default(),
            sent_qp: Default::default(),
            sent_wr_id: Default::default(),
            sent_signaled: Default::default(),
            sent_len: Default::default(),
            cfg_valid: Default::default(),
            cfg_qp: Default::default(),
            cfg_ord: Default::default(),
            hq_qp: Default::default(),
            hq_full: Default::default(),
            hq_any: Default::default(),
            rx_qp: Default::default(),
            rx_any: Default::default(),
            dec_valid: Default::default(),
            dec_qp: Default::default(),
            tag_valid: Default::default(),
            busy: Default::default(),
            tag_opcode: Default::default(),
            tag_ddp_last: Default::default(),
            tag_stag: Default::default(),
            tag_to: Default::default(),
            tag_len: Default::default(),
            tag_conn: Default::default(),
            tag_qpn: Default::default(),
            cpl_valid: Default::default(),
            cpl_ready: Default::default(),
            cpl_qp: Default::default(),
            cpl_wr_id: Default::default(),
            cpl_status: Default::default(),
            cpl_len: Default::default(),
            term_valid: Default::default(),
            term_ready: Default::default(),
            term_cause: Default::default(),
            term_hdr: Default::default(),
            term_seg_len: Default::default(),
            term_conn: Default::default(),
            term_qpn: Default::default(),
            cnt_cpl: Default::default(),
            cnt_ord_over: Default::default(),
            cnt_term: Default::default(),
            ram: Default::default(),
            k_op_rresp: k(Opcode::ReadResponse.value() as u64),
            k_ord_max: k(ORD_MAX),
            k_c_unexp: Constant::new(
                (TerminateCause::from(RemoteOperationError::UnexpectedOpcode).to_bits() as u64)
                    .into(),
            ),
            m1: k(0xff00),
            m2: k(0xff_0000),
            m3: k(0xff00_0000),
            state: Default::default(),
            qp: Default::default(),
            conn: Default::default(),
            qpn: Default::default(),
            stag: Default::default(),
            to: Default::default(),
            len: Default::default(),
            c_wr_id: Default::default(),
            c_len: Default::default(),
            ord: Default::default(),
            cnt: Default::default(),
            head: Default::default(),
            c_cpl: Default::default(),
            c_over: Default::default(),
            c_term: Default::default(),
            cnt_v: Default::default(),
            head_v: Default::default(),
            s4: Default::default(),
            s3: Default::default(),
            q4: Default::default(),
            q3: Default::default(),
            c4: Default::default(),
            h4: Default::default(),
            sh_h_cnt: Default::default(),
            sh_h_ord: Default::default(),
            h_cnt: Default::default(),
            h_ord: Default::default(),
            sh_s_cnt: Default::default(),
            sh_s_ord: Default::default(),
            sh_s_head: Default::default(),
            sh_q_cnt: Default::default(),
            sh_q_head: Default::default(),
            s_cnt: Default::default(),
            s_head: Default::default(),
            s_ord: Default::default(),
            q_cnt: Default::default(),
            q_head: Default::default(),
            ord_v: Default::default(),
            push: Default::default(),
            pop: Default::default(),
            r_stag: Default::default(),
            r_to: Default::default(),
            qm: crate::transmit::doorbell::qp_mask(PR),
            k_nq: k(crate::transmit::doorbell::profile_qps(PR) as u64),
            m_cnt: low_ones(4 * crate::transmit::doorbell::profile_qps(PR)),
            m_head: low_ones(3 * crate::transmit::doorbell::profile_qps(PR)),
            sq: Default::default(),
            cq: Default::default(),
            hq: Default::default(),
            rq4: Default::default(),
            sh_r_cnt: Default::default(),
            pq: Default::default(),
            s_ok: Default::default(),
            c_ok: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for RdTrackN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, qp, conn, qpn, stag, to, len, c_wr_id, c_len, ord, cnt, head,
            c_cpl, c_over, c_term
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();

        // QP indices masked to the profile's QPs (module doc); a QP beyond
        // them (`s_ok`/`c_ok` low) is ignored.
        self.sq.next = self.sent_qp.val() & self.qm.val();
        self.cq.next = self.cfg_qp.val() & self.qm.val();
        self.hq.next = self.hq_qp.val() & self.qm.val();
        self.pq.next = self.qp.q.val() & self.qm.val();
        self.s_ok.next = !(self.sent_qp.val() & !self.qm.val()).any();
        self.c_ok.next = !(self.cfg_qp.val() & !self.qm.val()).any();
        // per-QP fields of the pushing QP (s*) and of the popping QP (q*)
        self.s4.next = bit_cast::<8, 6>(self.sq.val()) << 2;
        self.s3.next = (bit_cast::<8, 6>(self.sq.val()) << 1) + bit_cast::<8, 6>(self.sq.val());
        self.q4.next = bit_cast::<8, 6>(self.pq.val()) << 2;
        self.q3.next = (bit_cast::<8, 6>(self.pq.val()) << 1) + bit_cast::<8, 6>(self.pq.val());
        self.c4.next = bit_cast::<8, 6>(self.cq.val()) << 2;
        self.sh_s_cnt.next = self.cnt.q.val() >> self.s4.val();
        self.sh_s_ord.next = self.ord.q.val() >> self.s4.val();
        self.sh_s_head.next = self.head.q.val() >> self.s3.val();
        self.sh_q_cnt.next = self.cnt.q.val() >> self.q4.val();
        self.sh_q_head.next = self.head.q.val() >> self.q3.val();
        self.s_cnt.next = self.sh_s_cnt.val().get_bits::<4>(0);
        self.s_ord.next = self.sh_s_ord.val().get_bits::<4>(0);
        self.s_head.next = self.sh_s_head.val().get_bits::<3>(0);
        self.q_cnt.next = self.sh_q_cnt.val().get_bits::<4>(0);
        self.q_head.next = self.sh_q_head.val().get_bits::<3>(0);
        // ORD reached for the queried QP (tx_seg holds a Read WQE on it)
        self.h4.next = bit_cast::<8, 6>(self.hq.val()) << 2;
        self.sh_h_cnt.next = self.cnt.q.val() >> self.h4.val();
        self.sh_h_ord.next = self.ord.q.val() >> self.h4.val();
        self.h_cnt.next = self.sh_h_cnt.val().get_bits::<4>(0);
        self.h_ord.next = self.sh_h_ord.val().get_bits::<4>(0);
        self.hq_full.next = self.h_ord.val().any() & (self.h_cnt.val() >= self.h_ord.val());
        self.hq_any.next = self.h_cnt.val().any();
        // Outstanding Reads of the receiving QP (a QPN beyond the profile
        // has none: its Read Responses are refused).
        self.rq4.next = bit_cast::<8, 6>(self.rx_qp.val().get_bits::<6>(0) & self.qm.val()) << 2;
        self.sh_r_cnt.next = self.cnt.q.val() >> self.rq4.val();
        self.rx_any.next =
            self.sh_r_cnt.val().get_bits::<4>(0).any() & (self.rx_qp.val() < self.k_nq.val());

        // push: the Read Request went out
        self.push.next = false;
        self.ram.write_enable.next = false;
        self.ram.write_address.next = (bit_cast::<9, 6>(self.sq.val()) << 3)
            | bit_cast::<9, 3>(self.s_head.val() + self.s_cnt.val().get_bits::<3>(0));
        self.ram.write_data.next = (bit_cast::<97, 1>(self.sent_signaled.val().into()) << 96)
            | (bit_cast::<97, 32>(self.sent_len.val()) << 64)
            | bit_cast::<97, 64>(self.sent_wr_id.val());
        if self.sent_valid.val() & self.s_ok.val() {
            if self.s_cnt.val() < self.s_ord.val() {
                self.push.next = true;
                self.ram.write_enable.next = true;
            } else {
                self.c_over.d.next = self.c_over.q.val() + 1;
            }
        }
        self.ram.read_address.next =
            (bit_cast::<9, 6>(self.pq.val()) << 3) | bit_cast::<9, 3>(self.q_head.val());

        self.busy.next = self.state.q.val() != RtState::Idle;
        self.cpl_valid.next = false;
        self.term_valid.next = false;
        self.pop.next = false;
        self.cpl_qp.next = self.qp.q.val();
        self.cpl_wr_id.next = self.c_wr_id.q.val();
        self.cpl_len.next = self.c_len.q.val();
        self.cpl_status.next = 0.into();

        match self.state.q.val() {
            RtState::Idle => {
                if self.tag_valid.val()
                    & (self.tag_opcode.val() == self.k_op_rresp.val())
                    & self.tag_ddp_last.val()
                    & (self.tag_qpn.val() < self.k_nq.val())
                {
                    self.qp.d.next = self.tag_qpn.val().get_bits::<6>(0);
                    self.qpn.d.next = self.tag_qpn.val();
                    self.conn.d.next = self.tag_conn.val();
                    self.stag.d.next = self.tag_stag.val();
                    self.to.d.next = self.tag_to.val();
                    self.len.d.next = self.tag_len.val();
                    self.state.d.next = RtState::Look;
                }
            }
            RtState::Look => {
                // the RAM reads {qp, head} (registered)
                self.state.d.next = RtState::Rd;
                if self.q_cnt.val() == 0 {
                    self.state.d.next = RtState::Term;
                }
            }
            RtState::Rd => {
                self.pop.next = true;
                self.c_wr_id.d.next = self.ram.read_data.val().get_bits::<64>(0);
                self.c_len.d.next = self.ram.read_data.val().get_bits::<32>(64);
                self.state.d.next = RtState::Idle;
                if self.ram.read_data.val().get_bit(96) {
                    self.state.d.next = RtState::Cpl;
                }
            }
            RtState::Cpl => {
                self.cpl_valid.next = true;
                if self.cpl_ready.val() {
                    self.c_cpl.d.next = self.c_cpl.q.val() + 1;
                    self.state.d.next = RtState::Idle;
                }
            }
            RtState::Term => {
                self.term_valid.next = true;
                if self.term_ready.val() {
                    self.c_term.d.next = self.c_term.q.val() + 1;
                    self.state.d.next = RtState::Idle;
                }
            }
        }

        self.dec_valid.next = self.pop.val();
        self.dec_qp.next = self.qp.q.val();
        // counts and heads: pop, push, then a context write
        self.cnt_v.next = self.cnt.q.val();
        self.head_v.next = self.head.q.val();
        if self.pop.val() {
            self.cnt_v.next = self.cnt_v.val() - (bits::<256>(1) << self.q4.val());
            self.head_v.next = (self.head_v.val() & !(bits::<192>(7) << self.q3.val()))
                | (bit_cast::<192, 3>(self.q_head.val() + 1) << self.q3.val());
        }
        if self.push.val() {
            self.cnt_v.next = self.cnt_v.val() + (bits::<256>(1) << self.s4.val());
        }
        self.ord_v.next = self.cfg_ord.val().get_bits::<4>(0);
        if self.cfg_ord.val() > self.k_ord_max.val() {
            self.ord_v.next = self.k_ord_max.val().get_bits::<4>(0);
        }
        if self.cfg_valid.val() & self.c_ok.val() {
            self.cnt_v.next = self.cnt_v.val() & !(bits::<256>(15) << self.c4.val());
            self.ord.d.next = ((self.ord.q.val() & !(bits::<256>(15) << self.c4.val()))
                | (bit_cast::<256, 4>(self.ord_v.val()) << self.c4.val()))
                & self.m_cnt.val();
        }
        self.cnt.d.next = self.cnt_v.val() & self.m_cnt.val();
        self.head.d.next = self.head_v.val() & self.m_head.val();

        // Terminate: the tagged DDP header (RFC 5041 §4.2): control T, L,
        // DV 1 = 0xC1; RDMAP RV 1, opcode Read Response = 0x42; STag; TO.
        self.r_stag.next = (self.stag.q.val() << 24)
            | ((self.stag.q.val() & 0xff00) << 8)
            | ((self.stag.q.val() >> 8) & 0xff00)
            | (self.stag.q.val() >> 24);
        self.r_to.next = (self.to.q.val() << 56)
            | ((self.to.q.val() & self.m1.val()) << 40)
            | ((self.to.q.val() & self.m2.val()) << 24)
            | ((self.to.q.val() & self.m3.val()) << 8)
            | ((self.to.q.val() >> 8) & self.m3.val())
            | ((self.to.q.val() >> 24) & self.m2.val())
            | ((self.to.q.val() >> 40) & self.m1.val())
            | (self.to.q.val() >> 56);
        self.term_cause.next = self.k_c_unexp.val();
        self.term_hdr.next = (bit_cast::<384, 64>(self.r_to.val()) << 48)
            | (bit_cast::<384, 32>(self.r_stag.val()) << 16)
            | (bits::<384>(0x42) << 8)
            | bits::<384>(0xC1);
        self.term_seg_len.next = self.len.q.val() + 14;
        self.term_conn.next = self.conn.q.val();
        self.term_qpn.next = self.qpn.q.val();
        self.cnt_cpl.next = self.c_cpl.q.val();
        self.cnt_ord_over.next = self.c_over.q.val();
        self.cnt_term.next = self.c_term.q.val();

        if self.reset.val() {
            self.state.d.next = RtState::Idle;
            self.cnt.d.next = 0.into();
            self.head.d.next = 0.into();
            self.ord.d.next = 0.into();
            self.c_cpl.d.next = 0.into();
            self.c_over.d.next = 0.into();
            self.c_term.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::tick;
    use rnic_wire::rdmap::RdmapRepr;

    fn uut<const PR: usize>() -> RdTrackN<PR> {
        let mut u = RdTrackN::<PR>::default();
        u.hq_qp.connect();
        u.rx_qp.connect();
        u.clock.connect();
        u.reset.connect();
        u.sent_valid.connect();
        u.sent_qp.connect();
        u.sent_wr_id.connect();
        u.sent_signaled.connect();
        u.sent_len.connect();
        u.cfg_valid.connect();
        u.cfg_qp.connect();
        u.cfg_ord.connect();
        u.tag_valid.connect();
        u.tag_opcode.connect();
        u.tag_ddp_last.connect();
        u.tag_stag.connect();
        u.tag_to.connect();
        u.tag_len.connect();
        u.tag_conn.connect();
        u.tag_qpn.connect();
        u.cpl_ready.connect();
        u.term_ready.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        u
    }

    #[derive(Debug, PartialEq)]
    enum Ev {
        Cpl(u32, u64, u32),
        Term(u16, Vec<u8>, u16),
    }

    fn step<const PR: usize>(u: &mut RdTrackN<PR>, ev: &mut Vec<Ev>) {
        // the consumer takes a record in one clock of three: a record must
        // hold while it waits (the core's SendCpl is not always ready)
        thread_local!(static N: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
        let take = N.with(|n| {
            n.set(n.get() + 1);
            n.get() % 3 == 0
        });
        u.cpl_ready.next = u.cpl_valid.val() && take;
        u.term_ready.next = u.term_valid.val() && take;
        if u.cpl_valid.val() && take {
            assert_eq!(u.cpl_status.val().index(), 0);
            ev.push(Ev::Cpl(
                u.cpl_qp.val().index() as u32,
                u.cpl_wr_id.val().to_u64(),
                u.cpl_len.val().index() as u32,
            ));
        }
        if u.term_valid.val() && take {
            let h = u.term_hdr.val();
            ev.push(Ev::Term(
                u.term_cause.val().index() as u16,
                (0..48)
                    .map(|i| h.get_bits::<8>(8 * i).index() as u8)
                    .collect(),
                u.term_seg_len.val().index() as u16,
            ));
        }
        tick!(*u);
        u.sent_valid.next = false;
        u.cfg_valid.next = false;
        u.tag_valid.next = false;
    }

    fn cfg<const PR: usize>(u: &mut RdTrackN<PR>, qp: u64, ord: u64, ev: &mut Vec<Ev>) {
        u.cfg_valid.next = true;
        u.cfg_qp.next = qp.into();
        u.cfg_ord.next = ord.into();
        step(u, ev);
    }

    fn sent<const PR: usize>(
        u: &mut RdTrackN<PR>,
        qp: u64,
        wr_id: u64,
        sig: bool,
        len: u64,
        ev: &mut Vec<Ev>,
    ) {
        u.sent_valid.next = true;
        u.sent_qp.next = qp.into();
        u.sent_wr_id.next = wr_id.into();
        u.sent_signaled.next = sig;
        u.sent_len.next = len.into();
        step(u, ev);
    }

    /// A placed tagged segment's record (the core holds them while busy).
    #[allow(clippy::too_many_arguments)]
    fn tag<const PR: usize>(
        u: &mut RdTrackN<PR>,
        qp: u64,
        op: Opcode,
        last: bool,
        stag: u32,
        to: u64,
        len: u16,
        ev: &mut Vec<Ev>,
    ) {
        while u.busy.val() {
            step(u, ev);
        }
        u.tag_valid.next = true;
        u.tag_qpn.next = qp.into();
        u.tag_conn.next = (qp + 100).into();
        u.tag_opcode.next = (op.value() as u64).into();
        u.tag_ddp_last.next = last;
        u.tag_stag.next = (stag as u64).into();
        u.tag_to.next = to.into();
        u.tag_len.next = (len as u64).into();
        step(u, ev);
        for _ in 0..6 {
            step(u, ev);
        }
    }

    /// Board profile (16 QPs): ORD and the records per QP at 16 QPs; the
    /// context write, Read Request record and Read Response of QP 19 are
    /// refused (not aliased onto QP 3 = 19 & 15); a 64-QP tracker would
    /// complete QP 19's Read.
    #[test]
    fn board_ord_per_qp_at_16() {
        let mut u = uut::<{ crate::profile::PR_BOARD }>();
        let mut ev = vec![];
        cfg(&mut u, 3, 2, &mut ev);
        cfg(&mut u, 15, 1, &mut ev);
        cfg(&mut u, 19, 5, &mut ev);
        sent(&mut u, 3, 1, true, 10, &mut ev);
        sent(&mut u, 19, 99, true, 99, &mut ev);
        sent(&mut u, 3, 2, true, 20, &mut ev);
        sent(&mut u, 3, 3, true, 30, &mut ev); // beyond ORD 2
        sent(&mut u, 15, 4, true, 40, &mut ev);
        sent(&mut u, 15, 5, true, 50, &mut ev); // beyond ORD 1
        assert_eq!(u.cnt_ord_over.val().index(), 2, "QP 19 not counted");
        u.hq_qp.next = 3.into();
        step(&mut u, &mut ev);
        assert!(u.hq_full.val());
        u.hq_qp.next = 19.into();
        tag(&mut u, 19, Opcode::ReadResponse, true, 1, 0, 8, &mut ev);
        assert!(ev.is_empty(), "QP 19 is beyond the board's QPs: {ev:?}");
        for _ in 0..3 {
            tag(&mut u, 3, Opcode::ReadResponse, true, 1, 0, 8, &mut ev);
        }
        tag(&mut u, 15, Opcode::ReadResponse, true, 1, 0, 8, &mut ev);
        assert!(matches!(
            std::mem::take(&mut ev)[..],
            [
                Ev::Cpl(3, 1, 10),
                Ev::Cpl(3, 2, 20),
                Ev::Term(..),
                Ev::Cpl(15, 4, 40)
            ]
        ));
        assert_eq!(u.cnt_term.val().index(), 1);
    }

    #[test]
    fn completes_reads_in_order_and_terminates_strays() {
        let mut u = uut::<{ crate::profile::PR_SIM }>();
        let mut ev = vec![];
        cfg(&mut u, 2, 3, &mut ev);
        cfg(&mut u, 40, 20, &mut ev);
        sent(&mut u, 2, 0xA, true, 100, &mut ev);
        sent(&mut u, 2, 0xB, false, 200, &mut ev);
        sent(&mut u, 40, 0x40_00, true, 7, &mut ev);
        sent(&mut u, 2, 0xC, true, 300, &mut ev);
        sent(&mut u, 2, 0xD, true, 400, &mut ev); // beyond ORD 3
        assert_eq!(u.cnt_ord_over.val().index(), 1);
        // ddp_rx's query: Reads outstanding on 2 and 40, none on 3, and a
        // QPN beyond the 64 QPs (whose low bits are 2) has none
        let rx_any = |u: &mut RdTrackN<{ crate::profile::PR_SIM }>, qpn: u64| {
            u.rx_qp.next = qpn.into();
            assert!(simulate(u, 100));
            u.rx_any.val()
        };
        assert!(rx_any(&mut u, 2) && rx_any(&mut u, 40));
        assert!(!rx_any(&mut u, 3) && !rx_any(&mut u, 64 + 2));
        // not a last Read Response / not a Read Response: nothing
        tag(&mut u, 2, Opcode::ReadResponse, false, 1, 0, 64, &mut ev);
        tag(&mut u, 2, Opcode::RdmaWrite, true, 1, 0, 64, &mut ev);
        assert!(ev.is_empty());
        tag(&mut u, 2, Opcode::ReadResponse, true, 1, 0, 36, &mut ev);
        assert_eq!(std::mem::take(&mut ev), vec![Ev::Cpl(2, 0xA, 100)]);
        tag(&mut u, 2, Opcode::ReadResponse, true, 1, 0, 36, &mut ev);
        assert!(ev.is_empty(), "B is unsignaled");
        tag(&mut u, 40, Opcode::ReadResponse, true, 1, 0, 36, &mut ev);
        tag(&mut u, 2, Opcode::ReadResponse, true, 1, 0, 36, &mut ev);
        assert_eq!(
            std::mem::take(&mut ev),
            vec![Ev::Cpl(40, 0x40_00, 7), Ev::Cpl(2, 0xC, 300)]
        );
        assert!(!rx_any(&mut u, 2) && !rx_any(&mut u, 40), "all answered");
        // nothing outstanding: Terminate, the tagged header echoed
        let (stag, to, len) = (0xDEAD_BEEF, 0x0123_4567_89AB_CDEF, 77u16);
        tag(
            &mut u,
            2,
            Opcode::ReadResponse,
            true,
            stag,
            to,
            len,
            &mut ev,
        );
        let payload = vec![0u8; len as usize];
        let repr = RdmapRepr::ReadResponse {
            last: true,
            stag,
            to,
            payload: &payload,
        };
        let mut seg = vec![0u8; repr.buffer_len()];
        repr.emit(&mut seg).unwrap();
        let mut echo = seg[..14].to_vec();
        echo.resize(48, 0);
        assert_eq!(
            std::mem::take(&mut ev),
            vec![Ev::Term(
                TerminateCause::from(RemoteOperationError::UnexpectedOpcode).to_bits(),
                echo,
                seg.len() as u16
            )]
        );
        // ORD 20 clamps to 8; order kept across the slot wrap
        for round in 0..2u64 {
            for i in 0..9u64 {
                sent(&mut u, 40, round * 100 + i, true, i, &mut ev);
            }
            assert_eq!(u.cnt_ord_over.val().index() as u64, 2 + round);
            for i in 0..8u64 {
                tag(&mut u, 40, Opcode::ReadResponse, true, 1, 0, 8, &mut ev);
                assert_eq!(
                    std::mem::take(&mut ev),
                    vec![Ev::Cpl(40, round * 100 + i, i as u32)]
                );
            }
        }
        // a context write empties the record
        sent(&mut u, 40, 5, true, 5, &mut ev);
        cfg(&mut u, 40, 4, &mut ev);
        tag(&mut u, 40, Opcode::ReadResponse, true, 1, 0, 8, &mut ev);
        assert!(matches!(std::mem::take(&mut ev)[..], [Ev::Term(..)]));
        assert_eq!(u.cnt_cpl.val().index(), 19);
        assert_eq!(u.cnt_term.val().index(), 2);
    }

    #[test]
    fn generates_verilog() {
        let mut b = RdTrack::default();
        b.connect_all();
        let v = generate_verilog(&b);
        assert!(v.contains("module top"));
    }
}
