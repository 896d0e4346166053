//! Read Request queue of the Read responder: takes every RDMA Read Request
//! (untagged, QN 1, RFC 5040 §4.4) off `ddp_rx`'s untagged stream, checks
//! it, and queues it for `read_resp` in arrival order (RFC 5040 §5.3: the
//! responder answers Read Requests in the order they arrived).
//!
//! # Input
//! `ut_*` is `ddp_rx`'s untagged stream (payload = the 28-octet RDMAP
//! header of a Read Request, aligned to octet 0; header fields held on every
//! beat). This block only *observes* it next to the Send path (`rx_send`,
//! which consumes and counts QN 1): the core presents a beat here as
//! `ut_valid` only when the other consumer takes it too, and holds the
//! stream with `ut_ready` (low while a request is being decided or the
//! queue is full; it depends on registered state only). Beats of other
//! queues pass (taken, ignored).
//!
//! # Checks, in this order (per Read Request, after its last beat)
//! 1. QP index >= 64, or the QP already sent a Terminate from here: dropped
//!    quietly (`cnt_drop`).
//! 2. MSN != the QP's expected QN-1 MSN → DDP "Invalid MSN - MSN range is
//!    not valid" (1/2/3, RFC 5041 §5.4, §7.2).
//! 3. MO != 0 → DDP "Invalid MO" (1/2/4, RFC 5041 §7.2).
//! 4. DDP L = 0, or fewer than 28 octets → RDMAP Remote Operation
//!    "Catastrophic error, localized to RDMAP Stream" (0/2/7): the RDMAP
//!    header is incomplete (RFC 5040 §4.4), and RFC 5040 has no closer code.
//! 5. More than 28 octets → DDP "DDP Message too long for available buffer"
//!    (1/2/5, RFC 5041 §7.2): a QN 1 buffer holds one 28-octet header.
//! 6. The QP already has IRD requests outstanding (queued or being
//!    answered) → DDP "Invalid MSN - no buffer available" (1/2/2, RFC 5041
//!    §7.2): QN 1's receive buffers are the IRD (RFC 5040 §5.3 / §6, ORD /
//!    IRD); Linux siw answers the same overflow with the same code.
//!
//! An error emits one Terminate request (`term_*`, the shape of `ddp_rx`'s:
//! cause, the segment's DDP header rebuilt from the `ut_*` fields plus up to
//! 30 octets of the RDMAP header as the echo, RFC 5040 §4.8) and stops the
//! QP here (its later Read Requests are dropped until its context is
//! written again). A good request is queued and the QP's expected MSN and
//! outstanding count advance.
//!
//! # Per-QP state
//! `cfg_*` (a QP context write): IRD (clamped to [`IRD_MAX`]) and the
//! expected MSN (`QpContext.rx_read_msn`, starts at 1) in a 64 x 37 RAM; the
//! outstanding count and the stopped bit are cleared. `done_*`: `read_resp`
//! finished a request of that QP (count - 1, never below 0). The `done`
//! pulse is registered first (FPGA timing: `read_resp`'s state logic into
//! this count register was the core's critical path, docs/fpga.md): the
//! count drops one clock later. A request whose QP has such a decrement
//! pending waits that clock in `Decide` and is checked against the count
//! the decrement left (so the decrement is not on the IRD check's path,
//! FPGA timing again), and the decrement condition accounts for a request
//! of the same QP queued in the clock of `done` (`dn_inc`): what the block
//! answers is unchanged, one clock later in that case only.
//!
//! # Queue
//! One FIFO of [`QUEUE_DEPTH`] requests shared by all QPs (a single
//! responder answers them in order), first-word fall-through on `q_*`,
//! `q_ready` pops. When it is full the untagged stream waits (`ut_ready`
//! low): back-pressure into the receive path, never a loss.

use crate::common::fifo::Fifo;
use crate::common::k;
use crate::common::qp_ram::QpRam;
use rnic_wire::rdmap::READ_REQUEST_HEADER_LEN;
use rnic_wire::terminate::{RemoteOperationError, TerminateCause, UntaggedBufferError};
use rust_hdl::prelude::*;

/// Largest IRD kept per QP (a larger context value is clamped).
pub const IRD_MAX: u64 = 16;
/// Requests the shared queue holds.
pub const QUEUE_DEPTH: usize = 16;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum RqState {
    Collect,
    Look,
    Decide,
    Term,
}

fn cause(c: impl Into<TerminateCause>) -> Constant<Bits<16>> {
    Constant::new((c.into().to_bits() as u64).into())
}

/// A queued request: {conn[269:262], msn[261:230], src_to[229:166],
/// src_stag[165:134], len[133:102], sink_to[101:38], sink_stag[37:6],
/// qp[5:0]}.
pub type RreqWord = Bits<270>;

/// The queue of the sim profile (64 QPs).
pub type RreqQueue = RreqQueueN<{ crate::profile::PR_SIM }>;

/// Per-QP state for the QPs of profile `PR` (`PROFILES[PR].fw.n_qp`: 64 in
/// the sim core, 16 on the board): the context RAM is `n_qp` deep
/// (`QpRam`), the counts and stopped bits are ANDed with the profile's
/// fields. A Read Request for a QP beyond the profile is dropped and
/// counted in `cnt_drop` (as one for a QP >= 64 before); a context write
/// or a `done` of one is ignored.
#[derive(LogicBlock)]
pub struct RreqQueueN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- untagged stream (observed)
    pub ut_data: Signal<In, Bits<64>>,
    pub ut_keep: Signal<In, Bits<4>>,
    pub ut_last: Signal<In, Bit>,
    pub ut_valid: Signal<In, Bit>,
    pub ut_ready: Signal<Out, Bit>,
    pub ut_ddp_last: Signal<In, Bit>,
    pub ut_qn: Signal<In, Bits<2>>,
    pub ut_msn: Signal<In, Bits<32>>,
    pub ut_mo: Signal<In, Bits<32>>,
    pub ut_len: Signal<In, Bits<16>>,
    pub ut_conn: Signal<In, Bits<32>>,
    pub ut_qpn: Signal<In, Bits<32>>,
    // ---- QP context write
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_qp: Signal<In, Bits<6>>,
    pub cfg_ird: Signal<In, Bits<16>>,
    pub cfg_msn: Signal<In, Bits<32>>,
    // ---- a request of this QP was answered
    pub done_valid: Signal<In, Bit>,
    pub done_qp: Signal<In, Bits<6>>,
    // ---- queue out
    pub q_valid: Signal<Out, Bit>,
    pub q_ready: Signal<In, Bit>,
    pub q_qp: Signal<Out, Bits<6>>,
    pub q_conn: Signal<Out, Bits<8>>,
    pub q_msn: Signal<Out, Bits<32>>,
    pub q_sink_stag: Signal<Out, Bits<32>>,
    pub q_sink_to: Signal<Out, Bits<64>>,
    pub q_len: Signal<Out, Bits<32>>,
    pub q_src_stag: Signal<Out, Bits<32>>,
    pub q_src_to: Signal<Out, Bits<64>>,
    // ---- Terminate requests
    pub term_valid: Signal<Out, Bit>,
    pub term_ready: Signal<In, Bit>,
    pub term_cause: Signal<Out, Bits<16>>,
    pub term_hdr: Signal<Out, Bits<384>>,
    pub term_seg_len: Signal<Out, Bits<16>>,
    pub term_conn: Signal<Out, Bits<32>>,
    pub term_qpn: Signal<Out, Bits<32>>,
    // ---- counters
    pub cnt_rreq: Signal<Out, Bits<32>>,
    pub cnt_drop: Signal<Out, Bits<32>>,
    pub cnt_term: Signal<Out, Bits<32>>,
    // ---- sub-blocks
    fifo: Fifo<RreqWord, 4, 5>,
    /// Per QP: {ird[36:32], expected MSN[31:0]}.
    ctx: QpRam<Bits<37>, PR>,
    qm: Constant<Bits<6>>,
    qset: Constant<Bits<64>>,
    k_nq: Constant<Bits<32>>,
    cq: Signal<Local, Bits<6>>,
    dq: Signal<Local, Bits<6>>,
    c_ok: Signal<Local, Bit>,
    d_ok: Signal<Local, Bit>,
    // ---- constants
    k_qn_rreq: Constant<Bits<2>>,
    k_hdr_len: Constant<Bits<16>>,
    k_ird_max: Constant<Bits<16>>,
    k_c_msn: Constant<Bits<16>>,
    k_c_mo: Constant<Bits<16>>,
    k_c_short: Constant<Bits<16>>,
    k_c_long: Constant<Bits<16>>,
    k_c_ird: Constant<Bits<16>>,
    k_hdr_u: Constant<Bits<16>>,
    ones64: Constant<Bits<64>>,
    m1: Constant<Bits<64>>,
    m2: Constant<Bits<64>>,
    m3: Constant<Bits<64>>,
    m_ird: Constant<Bits<37>>,
    // ---- state
    state: DFF<RqState>,
    mid: DFF<Bit>,
    bcnt: DFF<Bits<3>>,
    h0: DFF<Bits<64>>,
    h1: DFF<Bits<64>>,
    h2: DFF<Bits<64>>,
    h3: DFF<Bits<64>>,
    qpn: DFF<Bits<32>>,
    conn: DFF<Bits<32>>,
    msn: DFF<Bits<32>>,
    mo: DFF<Bits<32>>,
    len: DFF<Bits<16>>,
    ddp_last: DFF<Bit>,
    cause_r: DFF<Bits<16>>,
    /// Outstanding requests per QP as five bit planes: bit `b` of QP `q`'s
    /// count is bit `q` of `cp{b}`. A QP's count is read by indexing each
    /// plane (a 64:1 multiplexer per bit) and written through one-hot masks,
    /// so no arithmetic spans the QPs (FPGA timing, docs/fpga.md).
    cp0: DFF<Bits<64>>,
    cp1: DFF<Bits<64>>,
    cp2: DFF<Bits<64>>,
    cp3: DFF<Bits<64>>,
    cp4: DFF<Bits<64>>,
    /// `done_*` registered (`dn_inc`: a request of the same QP was queued
    /// in the clock of `done`).
    dn_v: DFF<Bit>,
    dn_q: DFF<Bits<6>>,
    dn_inc: DFF<Bit>,
    dec: Signal<Local, Bit>,
    /// A decrement of the deciding request's QP lands at this edge.
    dn_hit: Signal<Local, Bit>,
    stopped: DFF<Bits<64>>,
    c_rreq: DFF<Bits<32>>,
    c_drop: DFF<Bits<32>>,
    c_term: DFF<Bits<32>>,
    // ---- temporaries
    qp6: Signal<Local, Bits<6>>,
    qbit: Signal<Local, Bits<64>>,
    cur: Signal<Local, Bits<5>>,
    dcur: Signal<Local, Bits<5>>,
    /// One-hot QP masks of this clock's count changes: decrement (`done`),
    /// increment (a request queued), clear (a context write).
    d_oh: Signal<Local, Bits<64>>,
    i_oh: Signal<Local, Bits<64>>,
    c_oh: Signal<Local, Bits<64>>,
    /// Counts that stay; the QP that takes the decremented count `nd`; the
    /// QP that takes the incremented count `ni`.
    keep: Signal<Local, Bits<64>>,
    wd: Signal<Local, Bits<64>>,
    wi: Signal<Local, Bits<64>>,
    nd: Signal<Local, Bits<5>>,
    ni: Signal<Local, Bits<5>>,
    pw0: Signal<Local, Bits<64>>,
    pw1: Signal<Local, Bits<64>>,
    pw2: Signal<Local, Bits<64>>,
    pw3: Signal<Local, Bits<64>>,
    pw4: Signal<Local, Bits<64>>,
    inc: Signal<Local, Bit>,
    ird_v: Signal<Local, Bits<5>>,
    beat_mask: Signal<Local, Bits<64>>,
    masked: Signal<Local, Bits<64>>,
    r0: Signal<Local, Bits<64>>,
    r1: Signal<Local, Bits<64>>,
    r2: Signal<Local, Bits<64>>,
    r3: Signal<Local, Bits<64>>,
    f_sink_stag: Signal<Local, Bits<32>>,
    f_sink_to: Signal<Local, Bits<64>>,
    f_len: Signal<Local, Bits<32>>,
    f_src_stag: Signal<Local, Bits<32>>,
    f_src_to: Signal<Local, Bits<64>>,
    rs_msn: Signal<Local, Bits<32>>,
    rs_mo: Signal<Local, Bits<32>>,
    ctl0: Signal<Local, Bits<8>>,
}

impl<const PR: usize> Default for RreqQueueN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            ut_data: Default::default(),
            ut_keep: Default::default(),
            ut_last: Default::default(),
            ut_valid: Default::default(),
            ut_ready: Default::default(),
            ut_ddp_last: Default::default(),
            ut_qn: Default::default(),
            ut_msn: Default::default(),
            ut_mo: Default::default(),
            ut_len: Default::default(),
            ut_conn: Default::default(),
            ut_qpn: Default::default(),
            cfg_valid: Default::default(),
            cfg_qp: Default::default(),
            cfg_ird: Default::default(),
            cfg_msn: Default::default(),
            done_valid: Default::default(),
            done_qp: Default::default(),
            q_valid: Default::default(),
            q_ready: Default::default(),
            q_qp: Default::default(),
            q_conn: Default::default(),
            q_msn: Default::default(),
            q_sink_stag: Default::default(),
            q_sink_to: Default::default(),
            q_len: Default::default(),
            q_src_stag: Default::default(),
            q_src_to: Default::default(),
            term_valid: Default::default(),
            term_ready: Default::default(),
            term_cause: Default::default(),
            term_hdr: Default::default(),
            term_seg_len: Default::default(),
            term_conn: Default::default(),
            term_qpn: Default::default(),
            cnt_rreq: Default::default(),
            cnt_drop: Default::default(),
            cnt_term: Default::default(),
            fifo: Default::default(),
            ctx: Default::default(),
            k_qn_rreq: k(rnic_wire::ddp::QueueNumber::ReadRequest.value() as u64),
            k_hdr_len: k(READ_REQUEST_HEADER_LEN as u64),
            k_ird_max: k(IRD_MAX),
            k_c_msn: cause(UntaggedBufferError::InvalidMsnRange),
            k_c_mo: cause(UntaggedBufferError::InvalidMo),
            k_c_short: cause(RemoteOperationError::CatastrophicLocal),
            k_c_long: cause(UntaggedBufferError::MessageTooLong),
            k_c_ird: cause(UntaggedBufferError::InvalidMsnNoBuffer),
            k_hdr_u: k(rnic_wire::ddp::UNTAGGED_HEADER_LEN as u64),
            ones64: k(u64::MAX),
            m1: k(0xff00),
            m2: k(0xff_0000),
            m3: k(0xff00_0000),
            m_ird: k(0x1f_0000_0000),
            state: Default::default(),
            mid: Default::default(),
            bcnt: Default::default(),
            h0: Default::default(),
            h1: Default::default(),
            h2: Default::default(),
            h3: Default::default(),
            qpn: Default::default(),
            conn: Default::default(),
            msn: Default::default(),
            mo: Default::default(),
            len: Default::default(),
            ddp_last: Default::default(),
            cause_r: Default::default(),
            cp0: Default::default(),
            cp1: Default::default(),
            cp2: Default::default(),
            cp3: Default::default(),
            cp4: Default::default(),
            dn_v: Default::default(),
            dn_q: Default::default(),
            dn_inc: Default::default(),
            dec: Default::default(),
            dn_hit: Default::default(),
            stopped: Default::default(),
            c_rreq: Default::default(),
            c_drop: Default::default(),
            c_term: Default::default(),
            qp6: Default::default(),
            qbit: Default::default(),
            cur: Default::default(),
            dcur: Default::default(),
            d_oh: Default::default(),
            i_oh: Default::default(),
            c_oh: Default::default(),
            keep: Default::default(),
            wd: Default::default(),
            wi: Default::default(),
            nd: Default::default(),
            ni: Default::default(),
            pw0: Default::default(),
            pw1: Default::default(),
            pw2: Default::default(),
            pw3: Default::default(),
            pw4: Default::default(),
            inc: Default::default(),
            ird_v: Default::default(),
            beat_mask: Default::default(),
            masked: Default::default(),
            r0: Default::default(),
            r1: Default::default(),
            r2: Default::default(),
            r3: Default::default(),
            f_sink_stag: Default::default(),
            f_sink_to: Default::default(),
            f_len: Default::default(),
            f_src_stag: Default::default(),
            f_src_to: Default::default(),
            rs_msn: Default::default(),
            rs_mo: Default::default(),
            ctl0: Default::default(),
            qm: crate::transmit::doorbell::qp_mask(PR),
            qset: crate::transmit::doorbell::qp_set(PR),
            k_nq: k(crate::transmit::doorbell::profile_qps(PR) as u64),
            cq: Default::default(),
            dq: Default::default(),
            c_ok: Default::default(),
            d_ok: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for RreqQueueN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, fifo);
        dff_setup!(
            self, clock, state, mid, bcnt, h0, h1, h2, h3, qpn, conn, msn, mo, len, ddp_last,
            cause_r, cp0, cp1, cp2, cp3, cp4, stopped, c_rreq, c_drop, c_term, dn_v, dn_q, dn_inc
        );
        self.ctx.read_clock.next = self.clock.val();
        self.ctx.write_clock.next = self.clock.val();
        self.fifo.reset.next = self.reset.val();

        // ---- the request's fields (RFC 5040 §4.4, big-endian): byte-
        // reversed beats make them contiguous.
        self.r0.next = (self.h0.q.val() << 56)
            | ((self.h0.q.val() & self.m1.val()) << 40)
            | ((self.h0.q.val() & self.m2.val()) << 24)
            | ((self.h0.q.val() & self.m3.val()) << 8)
            | ((self.h0.q.val() >> 8) & self.m3.val())
            | ((self.h0.q.val() >> 24) & self.m2.val())
            | ((self.h0.q.val() >> 40) & self.m1.val())
            | (self.h0.q.val() >> 56);
        self.r1.next = (self.h1.q.val() << 56)
            | ((self.h1.q.val() & self.m1.val()) << 40)
            | ((self.h1.q.val() & self.m2.val()) << 24)
            | ((self.h1.q.val() & self.m3.val()) << 8)
            | ((self.h1.q.val() >> 8) & self.m3.val())
            | ((self.h1.q.val() >> 24) & self.m2.val())
            | ((self.h1.q.val() >> 40) & self.m1.val())
            | (self.h1.q.val() >> 56);
        self.r2.next = (self.h2.q.val() << 56)
            | ((self.h2.q.val() & self.m1.val()) << 40)
            | ((self.h2.q.val() & self.m2.val()) << 24)
            | ((self.h2.q.val() & self.m3.val()) << 8)
            | ((self.h2.q.val() >> 8) & self.m3.val())
            | ((self.h2.q.val() >> 24) & self.m2.val())
            | ((self.h2.q.val() >> 40) & self.m1.val())
            | (self.h2.q.val() >> 56);
        self.r3.next = (self.h3.q.val() << 56)
            | ((self.h3.q.val() & self.m1.val()) << 40)
            | ((self.h3.q.val() & self.m2.val()) << 24)
            | ((self.h3.q.val() & self.m3.val()) << 8)
            | ((self.h3.q.val() >> 8) & self.m3.val())
            | ((self.h3.q.val() >> 24) & self.m2.val())
            | ((self.h3.q.val() >> 40) & self.m1.val())
            | (self.h3.q.val() >> 56);
        // SinkSTag 0..4, SinkTO 4..12, RDMARDSZ 12..16, SrcSTag 16..20,
        // SrcTO 20..28.
        self.f_sink_stag.next = self.r0.val().get_bits::<32>(32);
        self.f_sink_to.next =
            (bit_cast::<64, 32>(self.r0.val().get_bits::<32>(0)) << 32) | (self.r1.val() >> 32);
        self.f_len.next = self.r1.val().get_bits::<32>(0);
        self.f_src_stag.next = self.r2.val().get_bits::<32>(32);
        self.f_src_to.next =
            (bit_cast::<64, 32>(self.r2.val().get_bits::<32>(0)) << 32) | (self.r3.val() >> 32);

        // ---- queue
        self.fifo.data_in.next = (bit_cast::<270, 8>(self.conn.q.val().get_bits::<8>(0)) << 262)
            | (bit_cast::<270, 32>(self.msn.q.val()) << 230)
            | (bit_cast::<270, 64>(self.f_src_to.val()) << 166)
            | (bit_cast::<270, 32>(self.f_src_stag.val()) << 134)
            | (bit_cast::<270, 32>(self.f_len.val()) << 102)
            | (bit_cast::<270, 64>(self.f_sink_to.val()) << 38)
            | (bit_cast::<270, 32>(self.f_sink_stag.val()) << 6)
            | bit_cast::<270, 6>(self.qpn.q.val().get_bits::<6>(0));
        self.fifo.write.next = false;
        self.fifo.read.next = self.q_ready.val();
        self.q_valid.next = !self.fifo.empty.val();
        self.q_qp.next = self.fifo.data_out.val().get_bits::<6>(0);
        self.q_sink_stag.next = self.fifo.data_out.val().get_bits::<32>(6);
        self.q_sink_to.next = self.fifo.data_out.val().get_bits::<64>(38);
        self.q_len.next = self.fifo.data_out.val().get_bits::<32>(102);
        self.q_src_stag.next = self.fifo.data_out.val().get_bits::<32>(134);
        self.q_src_to.next = self.fifo.data_out.val().get_bits::<64>(166);
        self.q_msn.next = self.fifo.data_out.val().get_bits::<32>(230);
        self.q_conn.next = self.fifo.data_out.val().get_bits::<8>(262);

        // ---- per-QP context RAM: read at the request's QP; written by the
        // context write (priority) or with the advanced MSN.
        self.qp6.next = self.qpn.q.val().get_bits::<6>(0) & self.qm.val();
        self.cq.next = self.cfg_qp.val() & self.qm.val();
        self.dq.next = self.done_qp.val() & self.qm.val();
        self.c_ok.next = !(self.cfg_qp.val() & !self.qm.val()).any();
        self.d_ok.next = !(self.done_qp.val() & !self.qm.val()).any();
        self.ctx.read_address.next = self.qp6.val();
        self.ctx.write_address.next = self.qp6.val();
        self.ctx.write_enable.next = false;
        self.ctx.write_data.next = (self.ctx.read_data.val() & self.m_ird.val())
            | bit_cast::<37, 32>(self.msn.q.val() + 1);
        self.ird_v.next = self.cfg_ird.val().get_bits::<5>(0);
        if self.cfg_ird.val() > self.k_ird_max.val() {
            self.ird_v.next = self.k_ird_max.val().get_bits::<5>(0);
        }
        self.qbit.next = (bits::<64>(1) << self.qp6.val()) & self.qset.val();

        // ---- outstanding counts: done (−1, not below 0), then a new
        // request (+1), then a context write (cleared).
        self.cur.next = bit_cast::<5, 1>(self.cp0.q.val().get_bit(self.qp6.val().index()).into())
            | (bit_cast::<5, 1>(self.cp1.q.val().get_bit(self.qp6.val().index()).into()) << 1)
            | (bit_cast::<5, 1>(self.cp2.q.val().get_bit(self.qp6.val().index()).into()) << 2)
            | (bit_cast::<5, 1>(self.cp3.q.val().get_bit(self.qp6.val().index()).into()) << 3)
            | (bit_cast::<5, 1>(self.cp4.q.val().get_bit(self.qp6.val().index()).into()) << 4);
        self.dcur.next =
            bit_cast::<5, 1>(self.cp0.q.val().get_bit(self.dn_q.q.val().index()).into())
                | (bit_cast::<5, 1>(self.cp1.q.val().get_bit(self.dn_q.q.val().index()).into())
                    << 1)
                | (bit_cast::<5, 1>(self.cp2.q.val().get_bit(self.dn_q.q.val().index()).into())
                    << 2)
                | (bit_cast::<5, 1>(self.cp3.q.val().get_bit(self.dn_q.q.val().index()).into())
                    << 3)
                | (bit_cast::<5, 1>(self.cp4.q.val().get_bit(self.dn_q.q.val().index()).into())
                    << 4);
        // The registered `done` decrements unless the count was 0 in its
        // clock (now: 0, or 1 from a request queued then).
        self.dec.next =
            self.dn_v.q.val() & (self.dcur.val() > bit_cast::<5, 1>(self.dn_inc.q.val().into()));
        self.dn_hit.next = self.dn_v.q.val() & (self.dn_q.q.val() == self.qp6.val());
        self.inc.next = false;

        // ---- stream: keep the first 4 beats of a QN 1 message
        self.beat_mask.next = self.ones64.val();
        if self.ut_keep.val() < 8 {
            self.beat_mask.next =
                !(self.ones64.val() << (bit_cast::<7, 4>(self.ut_keep.val()) << 3));
        }
        self.masked.next = self.ut_data.val() & self.beat_mask.val();
        self.ut_ready.next = false;
        self.term_valid.next = false;

        match self.state.q.val() {
            RqState::Collect => {
                self.ut_ready.next = !self.fifo.full.val();
                if self.ut_valid.val()
                    & !self.fifo.full.val()
                    & (self.ut_qn.val() == self.k_qn_rreq.val())
                {
                    if !self.mid.q.val() {
                        self.qpn.d.next = self.ut_qpn.val();
                        self.conn.d.next = self.ut_conn.val();
                        self.msn.d.next = self.ut_msn.val();
                        self.mo.d.next = self.ut_mo.val();
                        self.len.d.next = self.ut_len.val();
                        self.ddp_last.d.next = self.ut_ddp_last.val();
                        self.h0.d.next = self.masked.val();
                        self.h1.d.next = 0.into();
                        self.h2.d.next = 0.into();
                        self.h3.d.next = 0.into();
                        self.bcnt.d.next = 1.into();
                    } else {
                        if self.bcnt.q.val() < 4 {
                            self.bcnt.d.next = self.bcnt.q.val() + 1;
                        }
                        if self.bcnt.q.val() == 1 {
                            self.h1.d.next = self.masked.val();
                        }
                        if self.bcnt.q.val() == 2 {
                            self.h2.d.next = self.masked.val();
                        }
                        if self.bcnt.q.val() == 3 {
                            self.h3.d.next = self.masked.val();
                        }
                    }
                    self.mid.d.next = !self.ut_last.val();
                    if self.ut_last.val() {
                        self.state.d.next = RqState::Look;
                    }
                }
            }
            RqState::Look => {
                // the context RAM's registered read at the request's QP
                self.state.d.next = RqState::Decide;
            }
            RqState::Decide => {
                self.state.d.next = RqState::Term;
                if self.dn_hit.val() {
                    // The QP's count drops at this edge: decide next clock,
                    // on the count it leaves (see "Per-QP state").
                    self.state.d.next = RqState::Decide;
                } else if (self.qpn.q.val() >= self.k_nq.val())
                    | (self.stopped.q.val() & self.qbit.val()).any()
                {
                    self.c_drop.d.next = self.c_drop.q.val() + 1;
                    self.state.d.next = RqState::Collect;
                } else if self.msn.q.val() != self.ctx.read_data.val().get_bits::<32>(0) {
                    self.cause_r.d.next = self.k_c_msn.val();
                } else if self.mo.q.val() != 0 {
                    self.cause_r.d.next = self.k_c_mo.val();
                } else if !self.ddp_last.q.val() | (self.len.q.val() < self.k_hdr_len.val()) {
                    self.cause_r.d.next = self.k_c_short.val();
                } else if self.len.q.val() > self.k_hdr_len.val() {
                    self.cause_r.d.next = self.k_c_long.val();
                } else if self.cur.val() >= self.ctx.read_data.val().get_bits::<5>(32) {
                    self.cause_r.d.next = self.k_c_ird.val();
                } else {
                    self.fifo.write.next = true;
                    self.inc.next = true;
                    self.ctx.write_enable.next = true;
                    self.c_rreq.d.next = self.c_rreq.q.val() + 1;
                    self.state.d.next = RqState::Collect;
                }
            }
            RqState::Term => {
                self.term_valid.next = true;
                if self.term_ready.val() {
                    self.c_term.d.next = self.c_term.q.val() + 1;
                    self.stopped.d.next = self.stopped.q.val() | self.qbit.val();
                    self.state.d.next = RqState::Collect;
                }
            }
        }

        self.dn_v.d.next = self.done_valid.val() & self.d_ok.val();
        self.dn_q.d.next = self.dq.val();
        self.dn_inc.d.next = self.inc.val() & (self.qp6.val() == self.dq.val());
        self.d_oh.next = 0.into();
        if self.dec.val() {
            self.d_oh.next = bits::<64>(1) << self.dn_q.q.val();
        }
        self.i_oh.next = 0.into();
        if self.inc.val() {
            self.i_oh.next = bits::<64>(1) << self.qp6.val();
        }
        self.c_oh.next = 0.into();
        if self.cfg_valid.val() & self.c_ok.val() {
            self.c_oh.next = bits::<64>(1) << self.cq.val();
            self.stopped.d.next = self.stopped.q.val() & !(bits::<64>(1) << self.cq.val());
            self.ctx.write_enable.next = true;
            self.ctx.write_address.next = self.cq.val();
            self.ctx.write_data.next = (bit_cast::<37, 5>(self.ird_v.val()) << 32)
                | bit_cast::<37, 32>(self.cfg_msn.val());
        }
        // A request is never queued in the clock its QP's count drops
        // (`dn_hit` holds it), so the decrement and the increment are on
        // different QPs; a context write clears whatever else happens.
        self.keep.next = !(self.d_oh.val() | self.i_oh.val() | self.c_oh.val()) & self.qset.val();
        self.wd.next = self.d_oh.val() & !self.c_oh.val();
        self.wi.next = self.i_oh.val() & !self.c_oh.val();
        self.nd.next = self.dcur.val() - 1;
        self.ni.next = self.cur.val() + 1;
        self.pw0.next = self.cp0.q.val() & self.keep.val();
        self.pw1.next = self.cp1.q.val() & self.keep.val();
        self.pw2.next = self.cp2.q.val() & self.keep.val();
        self.pw3.next = self.cp3.q.val() & self.keep.val();
        self.pw4.next = self.cp4.q.val() & self.keep.val();
        if self.nd.val().get_bit(0) {
            self.pw0.next = self.pw0.val() | self.wd.val();
        }
        if self.nd.val().get_bit(1) {
            self.pw1.next = self.pw1.val() | self.wd.val();
        }
        if self.nd.val().get_bit(2) {
            self.pw2.next = self.pw2.val() | self.wd.val();
        }
        if self.nd.val().get_bit(3) {
            self.pw3.next = self.pw3.val() | self.wd.val();
        }
        if self.nd.val().get_bit(4) {
            self.pw4.next = self.pw4.val() | self.wd.val();
        }
        if self.ni.val().get_bit(0) {
            self.pw0.next = self.pw0.val() | self.wi.val();
        }
        if self.ni.val().get_bit(1) {
            self.pw1.next = self.pw1.val() | self.wi.val();
        }
        if self.ni.val().get_bit(2) {
            self.pw2.next = self.pw2.val() | self.wi.val();
        }
        if self.ni.val().get_bit(3) {
            self.pw3.next = self.pw3.val() | self.wi.val();
        }
        if self.ni.val().get_bit(4) {
            self.pw4.next = self.pw4.val() | self.wi.val();
        }
        self.cp0.d.next = self.pw0.val();
        self.cp1.d.next = self.pw1.val();
        self.cp2.d.next = self.pw2.val();
        self.cp3.d.next = self.pw3.val();
        self.cp4.d.next = self.pw4.val();

        // ---- Terminate record: the untagged DDP header rebuilt (RFC 5041
        // §4.3; RDMAP control RV 1, opcode Read Request) and the RDMAP
        // header octets received, zero past them (RFC 5040 §4.8).
        self.rs_msn.next = (self.msn.q.val() << 24)
            | ((self.msn.q.val() & 0xff00) << 8)
            | ((self.msn.q.val() >> 8) & 0xff00)
            | (self.msn.q.val() >> 24);
        self.rs_mo.next = (self.mo.q.val() << 24)
            | ((self.mo.q.val() & 0xff00) << 8)
            | ((self.mo.q.val() >> 8) & 0xff00)
            | (self.mo.q.val() >> 24);
        // DDP control: T 0, L, DV 1 (0x01 | 0x40 with L); RDMAP control:
        // RV 1, opcode 1 (Read Request) = 0x41.
        self.ctl0.next = 0x01.into();
        if self.ddp_last.q.val() {
            self.ctl0.next = 0x41.into();
        }
        self.term_cause.next = self.cause_r.q.val();
        self.term_hdr.next = (bit_cast::<384, 64>(self.h3.q.val()) << 336)
            | (bit_cast::<384, 64>(self.h2.q.val()) << 272)
            | (bit_cast::<384, 64>(self.h1.q.val()) << 208)
            | (bit_cast::<384, 64>(self.h0.q.val()) << 144)
            | (bit_cast::<384, 32>(self.rs_mo.val()) << 112)
            | (bit_cast::<384, 32>(self.rs_msn.val()) << 80)
            | (bits::<384>(0x01) << 72)
            | (bits::<384>(0x41) << 8)
            | bit_cast::<384, 8>(self.ctl0.val());
        self.term_seg_len.next = self.len.q.val() + self.k_hdr_u.val();
        self.term_conn.next = self.conn.q.val();
        self.term_qpn.next = self.qpn.q.val();
        self.cnt_rreq.next = self.c_rreq.q.val();
        self.cnt_drop.next = self.c_drop.q.val();
        self.cnt_term.next = self.c_term.q.val();

        if self.reset.val() {
            self.state.d.next = RqState::Collect;
            self.mid.d.next = false;
            self.cp0.d.next = 0.into();
            self.cp1.d.next = 0.into();
            self.cp2.d.next = 0.into();
            self.cp3.d.next = 0.into();
            self.cp4.d.next = 0.into();
            self.stopped.d.next = 0.into();
            self.dn_v.d.next = false;
            self.c_rreq.d.next = 0.into();
            self.c_drop.d.next = 0.into();
            self.c_term.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{beats, tick, Rng};
    use rnic_wire::ddp::UNTAGGED_HEADER_LEN;
    use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};

    /// One untagged message as `ddp_rx` hands it over: the segment octets
    /// (DDP header included, for the echo check) and its fields.
    struct Msg {
        seg: Vec<u8>,
        qn: u8,
        msn: u32,
        mo: u32,
        last: bool,
        qpn: u32,
    }

    fn rreq(msn: u32, qpn: u32, r: ReadRequestRepr) -> Msg {
        let repr = RdmapRepr::ReadRequest { msn, request: r };
        let mut seg = vec![0u8; repr.buffer_len()];
        repr.emit(&mut seg).unwrap();
        Msg {
            seg,
            qn: 1,
            msn,
            mo: 0,
            last: true,
            qpn,
        }
    }

    fn random_req(rng: &mut Rng) -> ReadRequestRepr {
        ReadRequestRepr {
            sink_stag: rng.next_u64() as u32,
            sink_to: rng.next_u64(),
            size: rng.next_u64() as u32,
            src_stag: rng.next_u64() as u32,
            src_to: rng.next_u64(),
        }
    }

    fn bench<const PR: usize>() -> RreqQueueN<PR> {
        let mut b = RreqQueueN::<PR>::default();
        b.clock.connect();
        b.reset.connect();
        b.ut_data.connect();
        b.ut_keep.connect();
        b.ut_last.connect();
        b.ut_valid.connect();
        b.ut_ddp_last.connect();
        b.ut_qn.connect();
        b.ut_msn.connect();
        b.ut_mo.connect();
        b.ut_len.connect();
        b.ut_conn.connect();
        b.ut_qpn.connect();
        b.cfg_valid.connect();
        b.cfg_qp.connect();
        b.cfg_ird.connect();
        b.cfg_msn.connect();
        b.done_valid.connect();
        b.done_qp.connect();
        b.q_ready.connect();
        b.term_ready.connect();
        b.connect_all();
        b.reset.next = true;
        tick!(b);
        tick!(b);
        b.reset.next = false;
        b
    }

    type Term = (u16, Vec<u8>, u16, u32);

    /// One clock; takes a Terminate record when one is offered.
    fn step<const PR: usize>(b: &mut RreqQueueN<PR>, terms: &mut Vec<Term>) {
        b.term_ready.next = b.term_valid.val();
        if b.term_valid.val() {
            let h = b.term_hdr.val();
            let hdr: Vec<u8> = (0..48)
                .map(|i| h.get_bits::<8>(8 * i).index() as u8)
                .collect();
            terms.push((
                b.term_cause.val().index() as u16,
                hdr,
                b.term_seg_len.val().index() as u16,
                b.term_qpn.val().index() as u32,
            ));
        }
        tick!(*b);
        b.cfg_valid.next = false;
        b.done_valid.next = false;
        b.q_ready.next = false;
    }

    /// Presents beat `i` of message `m` (`bs` = its payload's beats) with
    /// `ut_valid` = `valid` and random octets above `keep`.
    fn present<const PR: usize>(
        b: &mut RreqQueueN<PR>,
        m: &Msg,
        bs: &[(u64, u8)],
        i: usize,
        valid: bool,
        rng: &mut Rng,
    ) {
        b.ut_valid.next = valid;
        b.ut_data.next = (bs[i].0
            | if bs[i].1 < 8 {
                rng.next_u64() << (8 * bs[i].1)
            } else {
                0
            })
        .into();
        b.ut_keep.next = (bs[i].1 as u64).into();
        b.ut_last.next = i + 1 == bs.len();
        b.ut_qn.next = (m.qn as u64).into();
        b.ut_msn.next = (m.msn as u64).into();
        b.ut_mo.next = (m.mo as u64).into();
        b.ut_ddp_last.next = m.last;
        b.ut_len.next = ((m.seg.len() - UNTAGGED_HEADER_LEN) as u64).into();
        b.ut_conn.next = (m.qpn as u64 + 1000).into();
        b.ut_qpn.next = (m.qpn as u64).into();
    }

    /// Drives one message (random gaps), then lets the block decide.
    fn send<const PR: usize>(
        b: &mut RreqQueueN<PR>,
        m: &Msg,
        rng: &mut Rng,
        terms: &mut Vec<Term>,
    ) {
        let bs = beats(&m.seg[UNTAGGED_HEADER_LEN..]);
        let n = bs.len();
        let mut i = 0;
        let mut guard = 0;
        while i < n {
            guard += 1;
            assert!(guard < 1000, "stream held");
            let v = rng.below(4) != 0;
            present(b, m, &bs, i, v, rng);
            let taken = v & b.ut_ready.val();
            step(b, terms);
            if taken {
                i += 1;
            }
        }
        b.ut_valid.next = false;
        for _ in 0..6 {
            step(b, terms);
        }
    }

    fn cfg<const PR: usize>(
        b: &mut RreqQueueN<PR>,
        qp: u32,
        ird: u16,
        msn: u32,
        terms: &mut Vec<Term>,
    ) {
        b.cfg_valid.next = true;
        b.cfg_qp.next = (qp as u64).into();
        b.cfg_ird.next = (ird as u64).into();
        b.cfg_msn.next = (msn as u64).into();
        step(b, terms);
    }

    fn pop<const PR: usize>(
        b: &mut RreqQueueN<PR>,
        terms: &mut Vec<Term>,
    ) -> Option<(u32, ReadRequestRepr)> {
        if !b.q_valid.val() {
            return None;
        }
        let r = (
            b.q_qp.val().index() as u32,
            ReadRequestRepr {
                sink_stag: b.q_sink_stag.val().index() as u32,
                sink_to: b.q_sink_to.val().to_u64(),
                size: b.q_len.val().index() as u32,
                src_stag: b.q_src_stag.val().index() as u32,
                src_to: b.q_src_to.val().to_u64(),
            },
        );
        b.q_ready.next = true;
        step(b, terms);
        step(b, terms);
        Some(r)
    }

    fn expect_term(terms: &mut Vec<Term>, c: impl Into<TerminateCause>, m: &Msg) {
        assert_eq!(terms.len(), 1, "one Terminate expected");
        let (cause, hdr, seg_len, qpn) = terms.remove(0);
        assert_eq!(cause, c.into().to_bits());
        assert_eq!(seg_len as usize, m.seg.len());
        assert_eq!(qpn, m.qpn);
        // the echo: the segment's first 48 octets, zero past its end
        let mut want = m.seg.clone();
        want.resize(48, 0);
        want.truncate(48);
        assert_eq!(hdr, want, "echoed header");
    }

    /// Board profile (16 QPs): the context write of QP 21 is ignored (not
    /// aliased onto QP 5 = 21 & 15) and its Read Request dropped and
    /// counted, quietly; QP 5 keeps its MSN and IRD. A 64-QP queue answers
    /// QP 21's request (here a Terminate for its MSN).
    #[test]
    fn board_refuses_qp21() {
        let mut rng = Rng::new(43);
        let mut b = bench::<{ crate::profile::PR_BOARD }>();
        let mut t = Vec::new();
        cfg(&mut b, 5, 1, 1, &mut t);
        cfg(&mut b, 21, 4, 50, &mut t);
        send(&mut b, &rreq(1, 21, random_req(&mut rng)), &mut rng, &mut t);
        assert!(t.is_empty(), "QP 21 is beyond the board's QPs");
        assert_eq!(b.cnt_drop.val().index(), 1);
        let r = random_req(&mut rng);
        send(&mut b, &rreq(1, 5, r), &mut rng, &mut t);
        assert!(t.is_empty(), "QP 5's MSN 1 kept");
        assert_eq!(pop(&mut b, &mut t), Some((5, r)));
        // IRD 1 kept: the next one of QP 5 is refused until done.
        let m = rreq(2, 5, random_req(&mut rng));
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, UntaggedBufferError::InvalidMsnNoBuffer, &m);
        assert_eq!(b.cnt_rreq.val().index(), 1);
    }

    /// The outstanding counts against a reference model: `done` pulses on
    /// random QPs in random clocks (also on QPs with nothing outstanding, in
    /// the clock of a request's decision and of a context write), random
    /// pops, four QPs with IRD 1..=4. The model applies a `done` in its clock
    /// (never below 0) and decides a request in the block's `Decide` clock on
    /// the count before that clock, which is what the block must answer
    /// although its decrement lands a clock later; after every clock the
    /// count registers hold the model's counts but for that clock's
    /// decrement, and 0 after a context write. Fails if the decrement,
    /// the same-clock increment (`dn_inc`), the hold of a decision while its
    /// QP's decrement is pending (`dn_hit`) or the clear is lost or doubled;
    /// and if a decision waits in any other case.
    #[test]
    fn outstanding_counts_follow_done_and_requests() {
        // QPs 0..6's counts as the bit planes hold them
        fn counts(b: &RreqQueue) -> [u32; 6] {
            let planes = [&b.cp0, &b.cp1, &b.cp2, &b.cp3, &b.cp4];
            std::array::from_fn(|q| {
                (0..5).fold(0, |a, k| a | ((planes[k].q.val().get_bit(q) as u32) << k))
            })
        }
        let mut rng = Rng::new(47);
        let mut b = bench::<{ crate::profile::PR_SIM }>();
        let mut t = Vec::new();
        let ird = [1u32, 2, 3, 4];
        let mut msn = [1u32; 4];
        let mut count = [0u32; 6];
        for (q, &i) in ird.iter().enumerate() {
            cfg(&mut b, q as u32, i as u16, 1, &mut t);
        }
        let (mut accepted, mut refused, mut dones) = (0, 0, 0);
        for _ in 0..600 {
            let q = rng.below(4);
            let m = rreq(msn[q], q as u32, random_req(&mut rng));
            let bs = beats(&m.seg[UNTAGGED_HEADER_LEN..]);
            let (mut i, mut after) = (0, 0);
            let mut decided = None;
            // the previous clock's `done` (its decrement lands in this clock)
            let mut prev_done = None;
            while after < 8 {
                let v = i < bs.len() && rng.below(4) != 0;
                if i < bs.len() {
                    present(&mut b, &m, &bs, i, v, &mut rng);
                } else {
                    b.ut_valid.next = false;
                }
                let done = rng.below(6) == 0;
                // half of them on the request's own QP: a decrement in the clock
                // of its decision, or of its increment
                let dq = if rng.below(2) == 0 { q } else { rng.below(6) };
                b.done_valid.next = done;
                b.done_qp.next = (dq as u64).into();
                b.q_ready.next = b.q_valid.val() & (rng.below(2) == 0);
                let in_decide = b.state.q.val() == RqState::Decide;
                let want = count[q] < ird[q];
                let before = b.cnt_rreq.val().index();
                let taken = v & b.ut_ready.val();
                step(&mut b, &mut t);
                if taken {
                    i += 1;
                }
                if i == bs.len() {
                    after += 1;
                }
                let applied = done && count[dq] > 0;
                if done {
                    count[dq] = count[dq].saturating_sub(1);
                    dones += 1;
                }
                // A decision waits one clock only while its QP's decrement
                // is pending, and then it must.
                let deciding = in_decide && b.state.q.val() != RqState::Decide;
                if in_decide {
                    assert_eq!(!deciding, prev_done == Some(q), "QP {q}: decision held");
                }
                prev_done = done.then_some(dq);
                if deciding {
                    let got = b.cnt_rreq.val().index() == before + 1;
                    assert_eq!(
                        got, want,
                        "QP {q}: {} outstanding, IRD {}",
                        count[q], ird[q]
                    );
                    decided = Some(got);
                    if got {
                        count[q] += 1;
                    }
                }
                // the registers lag the model by this clock's decrement
                let mut exp = count;
                if applied {
                    exp[dq] += 1;
                }
                assert_eq!(
                    counts(&b),
                    exp,
                    "counts after a clock (done {done} QP {dq})"
                );
            }
            b.ut_valid.next = false;
            match decided {
                Some(true) => {
                    accepted += 1;
                    msn[q] += 1;
                    assert!(t.is_empty());
                }
                Some(false) => {
                    refused += 1;
                    expect_term(&mut t, UntaggedBufferError::InvalidMsnNoBuffer, &m);
                    // the QP stopped: written again (count cleared), with
                    // `done`s of that QP in the clock before (its decrement
                    // lands in the clock of the clear) and in that clock
                    b.done_valid.next = true;
                    b.done_qp.next = (q as u64).into();
                    step(&mut b, &mut t);
                    b.done_valid.next = true;
                    b.done_qp.next = (q as u64).into();
                    cfg(&mut b, q as u32, ird[q] as u16, 1, &mut t);
                    dones += 2;
                    msn[q] = 1;
                    count[q] = 0;
                    step(&mut b, &mut t);
                    assert_eq!(counts(&b), count, "counts after QP {q}'s context write");
                }
                None => panic!("QP {q}: no decision"),
            }
        }
        assert!(
            accepted > 200 && refused > 30 && dones > 800,
            "{accepted} {refused} {dones}"
        );
    }

    #[test]
    fn queue_checks_ird_and_terminates() {
        let mut rng = Rng::new(41);
        let mut b = bench::<{ crate::profile::PR_SIM }>();
        let mut t = Vec::new();
        let mut want = std::collections::VecDeque::new();
        cfg(&mut b, 5, 3, 1, &mut t);
        cfg(&mut b, 9, 40, 100, &mut t);
        // a Send on QN 0 in between is ignored
        let smsg = {
            let repr = RdmapRepr::Send {
                solicited: false,
                invalidate_stag: None,
                last: true,
                msn: 1,
                mo: 0,
                payload: &[7u8; 37],
            };
            let mut seg = vec![0u8; repr.buffer_len()];
            repr.emit(&mut seg).unwrap();
            Msg {
                seg,
                qn: 0,
                msn: 1,
                mo: 0,
                last: true,
                qpn: 5,
            }
        };
        for i in 0..3 {
            let r = random_req(&mut rng);
            send(&mut b, &rreq(1 + i, 5, r), &mut rng, &mut t);
            want.push_back((5, r));
            send(&mut b, &smsg, &mut rng, &mut t);
        }
        assert!(t.is_empty());
        assert_eq!(b.cnt_rreq.val().index(), 3);
        // IRD 3 reached: the fourth is refused (RFC 5041 §7.2 no buffer)
        let m = rreq(4, 5, random_req(&mut rng));
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, UntaggedBufferError::InvalidMsnNoBuffer, &m);
        // the QP is stopped: the next is dropped quietly
        send(&mut b, &rreq(5, 5, random_req(&mut rng)), &mut rng, &mut t);
        assert!(t.is_empty());
        assert_eq!(b.cnt_drop.val().index(), 1);
        // QP 9: IRD clamped to 16; wrong MSN
        let m = rreq(101, 9, random_req(&mut rng));
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, UntaggedBufferError::InvalidMsnRange, &m);
        // MO != 0, L = 0, short, long: each on a freshly written QP
        let mut m = rreq(100, 9, random_req(&mut rng));
        m.mo = 8;
        m.seg[14..18].copy_from_slice(&8u32.to_be_bytes());
        cfg(&mut b, 9, 40, 100, &mut t);
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, UntaggedBufferError::InvalidMo, &m);
        let mut m = rreq(100, 9, random_req(&mut rng));
        m.last = false;
        m.seg[0] &= !0x40;
        cfg(&mut b, 9, 40, 100, &mut t);
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, RemoteOperationError::CatastrophicLocal, &m);
        let mut m = rreq(100, 9, random_req(&mut rng));
        m.seg.truncate(UNTAGGED_HEADER_LEN + 20);
        cfg(&mut b, 9, 40, 100, &mut t);
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, RemoteOperationError::CatastrophicLocal, &m);
        let mut m = rreq(100, 9, random_req(&mut rng));
        m.seg.extend_from_slice(&[0x5a; 9]);
        cfg(&mut b, 9, 40, 100, &mut t);
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, UntaggedBufferError::MessageTooLong, &m);
        // a QP index beyond the 64 QPs: dropped
        send(&mut b, &rreq(1, 70, random_req(&mut rng)), &mut rng, &mut t);
        assert!(t.is_empty());
        assert_eq!(b.cnt_drop.val().index(), 2);
        // the queue, in arrival order
        for _ in 0..3 {
            assert_eq!(pop(&mut b, &mut t), want.pop_front());
        }
        assert_eq!(pop(&mut b, &mut t), None);

        // QP 9 (IRD 16): fill the 16-deep queue; the 17th waits for room,
        // then is refused (16 outstanding) until one is answered.
        cfg(&mut b, 9, 40, 100, &mut t);
        for i in 0..16 {
            let r = random_req(&mut rng);
            send(&mut b, &rreq(100 + i, 9, r), &mut rng, &mut t);
            want.push_back((9, r));
        }
        assert!(t.is_empty());
        assert!(!b.ut_ready.val(), "full queue holds the stream");
        assert_eq!(pop(&mut b, &mut t), want.pop_front());
        b.done_valid.next = true;
        b.done_qp.next = 9.into();
        step(&mut b, &mut t);
        let r = random_req(&mut rng);
        send(&mut b, &rreq(116, 9, r), &mut rng, &mut t);
        want.push_back((9, r));
        assert!(t.is_empty());
        // 16 outstanding again: the next one overflows
        let m = rreq(117, 9, random_req(&mut rng));
        assert_eq!(pop(&mut b, &mut t), want.pop_front());
        send(&mut b, &m, &mut rng, &mut t);
        expect_term(&mut t, UntaggedBufferError::InvalidMsnNoBuffer, &m);
        while let Some(x) = pop(&mut b, &mut t) {
            assert_eq!(Some(x), want.pop_front());
        }
        assert!(want.is_empty());
        assert_eq!(b.cnt_term.val().index(), 7);
    }

    #[test]
    fn generates_verilog() {
        let mut b = RreqQueue::default();
        b.connect_all();
        let v = generate_verilog(&b);
        assert!(v.contains("module top"));
    }
}
