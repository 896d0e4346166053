//! DDP/RDMAP receive: decodes one DDP segment (RFC 5041 §4, RFC 5040 §4.1),
//! checks tagged segments against the TPT and places their payload with DMA
//! writes, hands untagged messages to the next stage, and turns every error
//! into a Terminate request (RFC 5040 §7, RFC 5041 §7.2).
//!
//! # Input
//! `in_*` carries one ULPDU per packet: the DDP segment from its octet 0,
//! `last` on its final beat, as `mpa_rx` releases it **only after its MPA
//! CRC was found good** (store-and-forward: a segment that reaches this
//! block is trusted to be the one the peer sent). Sideband, sampled with the
//! first beat: `in_len` (the ULPDU length, i.e. the segment's octets, from
//! the MPA header), the connection and QP indices, and the QP context fields
//! the decode needs (`in_qp_state` as `abi::mailbox::QpState`, `in_pd`).
//!
//! # Decode and checks, in this order
//! 1. QP not in `Rts` or `Closing`: the segment is consumed and dropped
//!    (`cnt_drop_state`); no Terminate (the QP has stopped or not started:
//!    the firmware owns it).
//! 2. DV != 1 → DDP "Invalid DDP version" (tagged 1/1/4, untagged 1/2/6,
//!    RFC 5041 §7.2).
//! 3. Segment shorter than its DDP header (14 / 18 octets) → RDMAP Remote
//!    Operation "Catastrophic error, localized to RDMAP Stream" (0/2/7): the
//!    RFCs have no code for a truncated header.
//! 4. Untagged with QN ∉ {0, 1, 2} → DDP "Invalid QN" (1/2/1).
//! 5. RV != 1 → RDMAP "Invalid RDMAP version" (0/2/5, RFC 5040 §7).
//! 6. Opcode not one of RDMA Write / Read Response (tagged) or Read Request,
//!    Send (4 kinds), Terminate (untagged), or not on its queue (RFC 5040
//!    §4.1 Figure 4) → RDMAP "Unexpected OpCode" (0/2/6). RFC 7306 opcodes
//!    are unexpected: rnic does not implement them.
//! 7. A Read Response for a QP with no RDMA Read outstanding (`rd_track`'s
//!    answer on `rd_*`) → RDMAP "Unexpected OpCode" (0/2/6, RFC 5040 §5.3,
//!    §7), before any TPT check or placement.
//! 8. Tagged (RDMA Write: remote write right; Read Response: local write
//!    right): TPT check of `[TO, TO + payload)` ([`crate::protection::tpt`]); a fault
//!    maps to the DDP tagged buffer error (RFC 5041 §7.2: invalid STag 1/1/0,
//!    base or bounds 1/1/1, STag not associated with the stream (PD) 1/1/2,
//!    TO wrap 1/1/3), except access rights, which DDP has no code for:
//!    RDMAP Remote Protection "Access rights violation" (0/1/2, RFC 5040 §7).
//!
//! An error consumes the rest of the segment and emits one `term_*` record:
//! the cause (`term_cause` = Layer/EType/Error Code as
//! `TerminateCause::to_bits`), the segment length, and its first 48 octets
//! (`term_hdr`, octet `i` in bits `8i+7..8i`, zero past the segment's end:
//! the DDP header and, for a Read Request, the RDMA header the Terminate
//! echoes, RFC 5040 §4.8). **Nothing of such a segment is written**: the DMA
//! requests of a tagged segment start only after the whole range passed.
//!
//! # Outputs
//! * `dma_wr_*`: the DMA write stream of `docs/rtl.md` (placement).
//! * `tag_*`: one record per placed tagged segment (opcode, L, STag, TO,
//!   payload length), after its last DMA beat: the completion stage uses it
//!   for Read Responses (L = 1) and RFC 6581 zero-length RTR writes.
//! * `ut_*`: untagged messages (Send, Read Request, Terminate) for the next
//!   stage: the payload (for Read Request and Terminate, their RDMAP header)
//!   aligned to byte 0 as a stream (an empty payload is one beat with
//!   `keep = 0`), with the header fields held on every beat. MSN and MO are
//!   not checked here: the receive-queue / Read-queue stage owns them.
//!
//! # Timing
//! Header beats are taken at one per clock; a tagged segment waits for its
//! TPT result, then streams at one beat per clock plus one clock per DMA
//! request (measured in the tests: see `docs/rtl.md`).

use crate::common::k;
use crate::receive::placement::Placement;
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::ddp::{QueueNumber, DDP_VERSION, TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN};
use rnic_wire::rdmap::{Opcode, RDMAP_VERSION};
use rnic_wire::terminate::{
    RemoteOperationError, RemoteProtectionError, TaggedBufferError, TerminateCause,
    UntaggedBufferError,
};
use rust_hdl::prelude::*;

/// Octets of the segment kept for the Terminate's echo (untagged DDP header
/// plus a Read Request header is 46).
pub const ECHO_OCTETS: usize = 48;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum RxState {
    B0,
    B1,
    B2,
    Decide,
    Chk,
    Res,
    Place,
    UtCmd,
    UtRun,
    UtEmpty,
    Drain,
    Term,
}

fn cause(c: impl Into<TerminateCause>) -> Constant<Bits<16>> {
    Constant::new((c.into().to_bits() as u64).into())
}

/// [`DdpRxN`] with the co-simulation profile's connections (`PN`: log2 of
/// the page list's entries).
pub type DdpRx<const PN: usize> = DdpRxN<{ crate::profile::PR_SIM }, PN>;

/// DDP/RDMAP receive for profile `PR` (`crate::profile::PROFILES`): the
/// per-connection stopped bits cover [`crate::receive::conn_table::conn_state_mask`]
/// (co-simulation all 256, the board its 16 connections); a segment of a
/// connection beyond the profile is dropped and counted in
/// `cnt_drop_state`, as a stopped stream's (the core cannot make one: its
/// connection indices come from the profile's connection table).
#[derive(LogicBlock)]
pub struct DdpRxN<const PR: usize, const PN: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- segment in
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    pub in_len: Signal<In, Bits<16>>,
    pub in_conn: Signal<In, Bits<32>>,
    pub in_qpn: Signal<In, Bits<32>>,
    pub in_qp_state: Signal<In, Bits<8>>,
    pub in_pd: Signal<In, Bits<32>>,
    // ---- RDMA Read requester query (to `rd_track`'s `rx_*`)
    /// The segment's QPN, for the query.
    pub rd_qpn: Signal<Out, Bits<32>>,
    /// QP `rd_qpn` has a Read outstanding.
    pub rd_any: Signal<In, Bit>,
    /// The requester is handling a placed record (an outstanding count may
    /// be about to fall): a Read Response's decision waits for it.
    pub rd_busy: Signal<In, Bit>,
    // ---- TPT check client (to `Tpt`)
    pub chk_valid: Signal<Out, Bit>,
    pub chk_ready: Signal<In, Bit>,
    pub chk_stag: Signal<Out, Bits<32>>,
    pub chk_pd: Signal<Out, Bits<32>>,
    pub chk_need: Signal<Out, Bits<3>>,
    pub chk_to: Signal<Out, Bits<64>>,
    pub chk_len: Signal<Out, Bits<32>>,
    pub res_valid: Signal<In, Bit>,
    pub res_ready: Signal<Out, Bit>,
    pub res_fault: Signal<In, Bits<3>>,
    pub res_addr: Signal<In, Bits<64>>,
    pub res_page_left: Signal<In, Bits<32>>,
    pub res_pbl_idx: Signal<In, Bits<PN>>,
    pub res_page_shift: Signal<In, Bits<5>>,
    pub walk_idx: Signal<Out, Bits<PN>>,
    pub walk_addr: Signal<In, Bits<64>>,
    /// A tagged segment's check result is taken or it is being placed: the
    /// page walk may use the TPT's page-list read port (a core sharing the
    /// check unit must not start another check meanwhile).
    pub placing: Signal<Out, Bit>,
    // ---- DMA write
    pub dma_wr_valid: Signal<Out, Bit>,
    pub dma_wr_ready: Signal<In, Bit>,
    pub dma_wr_hdr: Signal<Out, Bit>,
    pub dma_wr_len: Signal<Out, Bits<16>>,
    pub dma_wr_data: Signal<Out, Bits<64>>,
    pub dma_wr_keep: Signal<Out, Bits<4>>,
    pub dma_wr_last: Signal<Out, Bit>,
    // ---- placed tagged segment record
    pub tag_valid: Signal<Out, Bit>,
    pub tag_ready: Signal<In, Bit>,
    pub tag_opcode: Signal<Out, Bits<4>>,
    pub tag_ddp_last: Signal<Out, Bit>,
    pub tag_stag: Signal<Out, Bits<32>>,
    pub tag_to: Signal<Out, Bits<64>>,
    pub tag_len: Signal<Out, Bits<16>>,
    pub tag_conn: Signal<Out, Bits<32>>,
    pub tag_qpn: Signal<Out, Bits<32>>,
    // ---- untagged messages
    pub ut_data: Signal<Out, Bits<64>>,
    pub ut_keep: Signal<Out, Bits<4>>,
    pub ut_last: Signal<Out, Bit>,
    pub ut_valid: Signal<Out, Bit>,
    pub ut_ready: Signal<In, Bit>,
    pub ut_opcode: Signal<Out, Bits<4>>,
    pub ut_ddp_last: Signal<Out, Bit>,
    pub ut_qn: Signal<Out, Bits<2>>,
    pub ut_msn: Signal<Out, Bits<32>>,
    pub ut_mo: Signal<Out, Bits<32>>,
    pub ut_inv_stag: Signal<Out, Bits<32>>,
    pub ut_len: Signal<Out, Bits<16>>,
    pub ut_conn: Signal<Out, Bits<32>>,
    pub ut_qpn: Signal<Out, Bits<32>>,
    /// The QP's protection domain (`in_pd` of the segment), for the local
    /// checks of receive SGEs.
    pub ut_pd: Signal<Out, Bits<32>>,
    // ---- Terminate requests
    pub term_valid: Signal<Out, Bit>,
    pub term_ready: Signal<In, Bit>,
    /// Layer (15:12), EType (11:8), Error Code (7:0).
    pub term_cause: Signal<Out, Bits<16>>,
    pub term_hdr: Signal<Out, Bits<384>>,
    pub term_seg_len: Signal<Out, Bits<16>>,
    pub term_conn: Signal<Out, Bits<32>>,
    pub term_qpn: Signal<Out, Bits<32>>,
    // ---- counters
    pub cnt_tagged: Signal<Out, Bits<32>>,
    pub cnt_untagged: Signal<Out, Bits<32>>,
    pub cnt_term: Signal<Out, Bits<32>>,
    pub cnt_drop_state: Signal<Out, Bits<32>>,
    /// Segments whose beats disagreed with `in_len` (upstream bug).
    pub cnt_len_err: Signal<Out, Bits<32>>,
    // ---- sub-blocks
    dma_pl: Placement<PN>,
    ut_pl: Placement<PN>,
    // ---- constants (from rnic-wire)
    k_ddp_version: Constant<Bits<2>>,
    k_rdmap_version: Constant<Bits<2>>,
    k_hdr_t: Constant<Bits<16>>,
    k_hdr_u: Constant<Bits<16>>,
    k_off_t: Constant<Bits<4>>,
    k_off_u: Constant<Bits<4>>,
    k_op_write: Constant<Bits<4>>,
    k_op_rreq: Constant<Bits<4>>,
    k_op_rresp: Constant<Bits<4>>,
    k_op_send: Constant<Bits<4>>,
    k_op_send_inv: Constant<Bits<4>>,
    k_op_send_se: Constant<Bits<4>>,
    k_op_send_se_inv: Constant<Bits<4>>,
    k_op_term: Constant<Bits<4>>,
    k_qn_send: Constant<Bits<32>>,
    k_qn_rreq: Constant<Bits<32>>,
    k_qn_term: Constant<Bits<32>>,
    k_qn_none: Constant<Bits<32>>,
    k_st_rts: Constant<Bits<8>>,
    k_st_closing: Constant<Bits<8>>,
    k_need_rw: Constant<Bits<3>>,
    k_need_lw: Constant<Bits<3>>,
    k_c_short: Constant<Bits<16>>,
    k_c_ddp_ver_t: Constant<Bits<16>>,
    k_c_ddp_ver_u: Constant<Bits<16>>,
    k_c_qn: Constant<Bits<16>>,
    k_c_rdmap_ver: Constant<Bits<16>>,
    k_c_opcode: Constant<Bits<16>>,
    k_c_stag: Constant<Bits<16>>,
    k_c_pd: Constant<Bits<16>>,
    k_c_rights: Constant<Bits<16>>,
    k_c_bounds: Constant<Bits<16>>,
    k_c_wrap: Constant<Bits<16>>,
    ones64: Constant<Bits<64>>,
    byte192: Constant<Bits<192>>,
    // ---- state
    state: DFF<RxState>,
    b0: DFF<Bits<64>>,
    b1: DFF<Bits<64>>,
    b2: DFF<Bits<64>>,
    b0_keep: DFF<Bits<4>>,
    early_end: DFF<Bit>,
    seg_done: DFF<Bit>,
    hold_last: DFF<Bit>,
    /// Connections (index mod 256) that received a Terminate.
    stopped: DFF<Bits<256>>,
    len: DFF<Bits<16>>,
    conn: DFF<Bits<32>>,
    qpn: DFF<Bits<32>>,
    qp_state: DFF<Bits<8>>,
    pd: DFF<Bits<32>>,
    bcnt: DFF<Bits<3>>,
    e0: DFF<Bits<64>>,
    e1: DFF<Bits<64>>,
    e2: DFF<Bits<64>>,
    e3: DFF<Bits<64>>,
    e4: DFF<Bits<64>>,
    e5: DFF<Bits<64>>,
    // decoded
    d_err: DFF<Bit>,
    d_drop: DFF<Bit>,
    d_cause: DFF<Bits<16>>,
    d_opcode: DFF<Bits<4>>,
    d_ddp_last: DFF<Bit>,
    d_stag: DFF<Bits<32>>,
    d_to: DFF<Bits<64>>,
    d_qn: DFF<Bits<2>>,
    d_msn: DFF<Bits<32>>,
    d_mo: DFF<Bits<32>>,
    d_plen: DFF<Bits<16>>,
    d_need: DFF<Bits<3>>,
    // counters
    c_tagged: DFF<Bits<32>>,
    c_untagged: DFF<Bits<32>>,
    c_term: DFF<Bits<32>>,
    c_drop: DFF<Bits<32>>,
    // ---- temporaries
    take: Signal<Local, Bit>,
    beat_mask: Signal<Local, Bits<64>>,
    masked: Signal<Local, Bits<64>>,
    hdr: Signal<Local, Bits<192>>,
    w0: Signal<Local, Bits<192>>,
    w1: Signal<Local, Bits<192>>,
    w2: Signal<Local, Bits<192>>,
    plen_t: Signal<Local, Bits<16>>,
    ctl: Signal<Local, Bits<8>>,
    rctl: Signal<Local, Bits<8>>,
    is_tagged: Signal<Local, Bit>,
    qn: Signal<Local, Bits<32>>,
    opcode: Signal<Local, Bits<4>>,
    op_q: Signal<Local, Bits<32>>,
    hdr_len: Signal<Local, Bits<16>>,
    short: Signal<Local, Bit>,
    conn_bit: Signal<Local, Bits<256>>,
    stop_hit: Signal<Local, Bits<256>>,
    /// The profile's connection mask, and `conn` beyond it.
    k_cmask: Constant<Bits<8>>,
    conn_out: Signal<Local, Bit>,
}

impl<const PR: usize, const PN: usize> Default for DdpRxN<PR, PN> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            in_data: Default::default(),
            in_keep: Default::default(),
            in_last: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            in_len: Default::default(),
            in_conn: Default::default(),
            in_qpn: Default::default(),
            in_qp_state: Default::default(),
            in_pd: Default::default(),
            rd_qpn: Default::default(),
            rd_any: Default::default(),
            rd_busy: Default::default(),
            chk_valid: Default::default(),
            chk_ready: Default::default(),
            chk_stag: Default::default(),
            chk_pd: Default::default(),
            chk_need: Default::default(),
            chk_to: Default::default(),
            chk_len: Default::default(),
            res_valid: Default::default(),
            res_ready: Default::default(),
            res_fault: Default::default(),
            res_addr: Default::default(),
            res_page_left: Default::default(),
            res_pbl_idx: Default::default(),
            res_page_shift: Default::default(),
            walk_idx: Default::default(),
            walk_addr: Default::default(),
            placing: Default::default(),
            dma_wr_valid: Default::default(),
            dma_wr_ready: Default::default(),
            dma_wr_hdr: Default::default(),
            dma_wr_len: Default::default(),
            dma_wr_data: Default::default(),
            dma_wr_keep: Default::default(),
            dma_wr_last: Default::default(),
            tag_valid: Default::default(),
            tag_ready: Default::default(),
            tag_opcode: Default::default(),
            tag_ddp_last: Default::default(),
            tag_stag: Default::default(),
            tag_to: Default::default(),
            tag_len: Default::default(),
            tag_conn: Default::default(),
            tag_qpn: Default::default(),
            ut_data: Default::default(),
            ut_keep: Default::default(),
            ut_last: Default::default(),
            ut_valid: Default::default(),
            ut_ready: Default::default(),
            ut_opcode: Default::default(),
            ut_ddp_last: Default::default(),
            ut_qn: Default::default(),
            ut_msn: Default::default(),
            ut_mo: Default::default(),
            ut_inv_stag: Default::default(),
            ut_len: Default::default(),
            ut_conn: Default::default(),
            ut_qpn: Default::default(),
            ut_pd: Default::default(),
            term_valid: Default::default(),
            term_ready: Default::default(),
            term_cause: Default::default(),
            term_hdr: Default::default(),
            term_seg_len: Default::default(),
            term_conn: Default::default(),
            term_qpn: Default::default(),
            cnt_tagged: Default::default(),
            cnt_untagged: Default::default(),
            cnt_term: Default::default(),
            cnt_drop_state: Default::default(),
            cnt_len_err: Default::default(),
            dma_pl: Default::default(),
            ut_pl: Default::default(),
            k_ddp_version: k(DDP_VERSION as u64),
            k_rdmap_version: k(RDMAP_VERSION as u64),
            k_hdr_t: k(TAGGED_HEADER_LEN as u64),
            k_hdr_u: k(UNTAGGED_HEADER_LEN as u64),
            // The payload's first octet: lane 6 of beat 1 (tagged), lane 2
            // of beat 2 (untagged).
            k_off_t: k(TAGGED_HEADER_LEN as u64 % 8),
            k_off_u: k(UNTAGGED_HEADER_LEN as u64 % 8),
            k_op_write: k(Opcode::RdmaWrite.value() as u64),
            k_op_rreq: k(Opcode::ReadRequest.value() as u64),
            k_op_rresp: k(Opcode::ReadResponse.value() as u64),
            k_op_send: k(Opcode::Send.value() as u64),
            k_op_send_inv: k(Opcode::SendInvalidate.value() as u64),
            k_op_send_se: k(Opcode::SendSe.value() as u64),
            k_op_send_se_inv: k(Opcode::SendSeInvalidate.value() as u64),
            k_op_term: k(Opcode::Terminate.value() as u64),
            k_qn_send: k(QueueNumber::Send.value() as u64),
            k_qn_rreq: k(QueueNumber::ReadRequest.value() as u64),
            k_qn_term: k(QueueNumber::Terminate.value() as u64),
            k_qn_none: k(u32::MAX as u64),
            k_st_rts: k(QpState::Rts as u64),
            k_st_closing: k(QpState::Closing as u64),
            k_need_rw: k(ACCESS_REMOTE_WRITE as u64),
            k_need_lw: k(ACCESS_LOCAL_WRITE as u64),
            k_c_short: cause(RemoteOperationError::CatastrophicLocal),
            k_c_ddp_ver_t: cause(TaggedBufferError::InvalidDdpVersion),
            k_c_ddp_ver_u: cause(UntaggedBufferError::InvalidDdpVersion),
            k_c_qn: cause(UntaggedBufferError::InvalidQn),
            k_c_rdmap_ver: cause(RemoteOperationError::InvalidRdmapVersion),
            k_c_opcode: cause(RemoteOperationError::UnexpectedOpcode),
            k_c_stag: cause(TaggedBufferError::InvalidStag),
            k_c_pd: cause(TaggedBufferError::StagNotAssociated),
            k_c_rights: cause(RemoteProtectionError::AccessRightsViolation),
            k_c_bounds: cause(TaggedBufferError::BaseOrBoundsViolation),
            k_c_wrap: cause(TaggedBufferError::ToWrap),
            ones64: k(u64::MAX),
            byte192: k(0xff),
            state: Default::default(),
            b0: Default::default(),
            b1: Default::default(),
            b2: Default::default(),
            b0_keep: Default::default(),
            early_end: Default::default(),
            seg_done: Default::default(),
            hold_last: Default::default(),
            stopped: Default::default(),
            len: Default::default(),
            conn: Default::default(),
            qpn: Default::default(),
            qp_state: Default::default(),
            pd: Default::default(),
            bcnt: Default::default(),
            e0: Default::default(),
            e1: Default::default(),
            e2: Default::default(),
            e3: Default::default(),
            e4: Default::default(),
            e5: Default::default(),
            d_err: Default::default(),
            d_drop: Default::default(),
            d_cause: Default::default(),
            d_opcode: Default::default(),
            d_ddp_last: Default::default(),
            d_stag: Default::default(),
            d_to: Default::default(),
            d_qn: Default::default(),
            d_msn: Default::default(),
            d_mo: Default::default(),
            d_plen: Default::default(),
            d_need: Default::default(),
            c_tagged: Default::default(),
            c_untagged: Default::default(),
            c_term: Default::default(),
            c_drop: Default::default(),
            take: Default::default(),
            beat_mask: Default::default(),
            masked: Default::default(),
            hdr: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            plen_t: Default::default(),
            ctl: Default::default(),
            rctl: Default::default(),
            is_tagged: Default::default(),
            qn: Default::default(),
            opcode: Default::default(),
            op_q: Default::default(),
            hdr_len: Default::default(),
            short: Default::default(),
            conn_bit: Default::default(),
            stop_hit: Default::default(),
            k_cmask: Constant::new(crate::receive::conn_table::conn_state_mask(PR).into()),
            conn_out: Default::default(),
        }
    }
}

impl<const PR: usize, const PN: usize> Logic for DdpRxN<PR, PN> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, dma_pl, ut_pl);
        dff_setup!(
            self, clock, state, b0, b1, b2, b0_keep, early_end, seg_done, hold_last, stopped, len,
            conn, qpn, qp_state, pd, bcnt, e0, e1, e2, e3, e4, e5, d_err, d_drop, d_cause,
            d_opcode, d_ddp_last, d_stag, d_to, d_qn, d_msn, d_mo, d_plen, d_need, c_tagged,
            c_untagged, c_term, c_drop
        );
        self.dma_pl.reset.next = self.reset.val();
        self.ut_pl.reset.next = self.reset.val();

        // ---- defaults
        self.in_ready.next = false;
        self.chk_valid.next = false;
        self.res_ready.next = false;
        self.tag_valid.next = false;
        self.term_valid.next = false;

        // ---- sub-block wiring: both placements see the segment stream,
        // each only while it owns it.
        self.dma_pl.in_data.next = self.in_data.val();
        self.dma_pl.in_last.next = self.in_last.val();
        self.dma_pl.in_valid.next = self.in_valid.val() & (self.state.q.val() == RxState::Place);
        self.ut_pl.in_data.next = self.in_data.val();
        self.ut_pl.in_last.next = self.in_last.val();
        self.ut_pl.in_valid.next = self.in_valid.val() & (self.state.q.val() == RxState::UtRun);
        self.dma_pl.cmd_valid.next = false;
        self.dma_pl.cmd_hdr.next = true;
        self.dma_pl.cmd_addr.next = self.res_addr.val();
        self.dma_pl.cmd_len.next = self.d_plen.q.val();
        self.dma_pl.cmd_page_left.next = self.res_page_left.val();
        self.dma_pl.cmd_pbl_idx.next = self.res_pbl_idx.val();
        self.dma_pl.cmd_page_shift.next = self.res_page_shift.val();
        self.dma_pl.cmd_hold.next = self.b1.q.val();
        self.dma_pl.cmd_off.next = self.k_off_t.val();
        self.dma_pl.cmd_hold_last.next = self.hold_last.q.val();
        self.dma_pl.out_ready.next = self.dma_wr_ready.val();
        self.dma_pl.walk_addr.next = self.walk_addr.val();
        self.walk_idx.next = self.dma_pl.walk_idx.val();
        self.placing.next =
            (self.state.q.val() == RxState::Res) | (self.state.q.val() == RxState::Place);
        self.ut_pl.cmd_valid.next = false;
        self.ut_pl.cmd_hdr.next = false;
        self.ut_pl.cmd_addr.next = 0.into();
        self.ut_pl.cmd_len.next = self.d_plen.q.val();
        self.ut_pl.cmd_page_left.next = 0.into();
        self.ut_pl.cmd_pbl_idx.next = 0.into();
        self.ut_pl.cmd_page_shift.next = 0.into();
        self.ut_pl.cmd_hold.next = self.b2.q.val();
        self.ut_pl.cmd_off.next = self.k_off_u.val();
        self.ut_pl.cmd_hold_last.next = self.hold_last.q.val();
        self.ut_pl.out_ready.next = self.ut_ready.val();
        self.ut_pl.walk_addr.next = 0.into();

        self.dma_wr_valid.next = self.dma_pl.out_valid.val();
        self.dma_wr_hdr.next = self.dma_pl.out_hdr.val();
        self.dma_wr_len.next = self.dma_pl.out_len.val();
        self.dma_wr_data.next = self.dma_pl.out_data.val();
        self.dma_wr_keep.next = self.dma_pl.out_keep.val();
        self.dma_wr_last.next = self.dma_pl.out_last.val();

        self.ut_valid.next = self.ut_pl.out_valid.val();
        self.ut_data.next = self.ut_pl.out_data.val();
        self.ut_keep.next = self.ut_pl.out_keep.val();
        self.ut_last.next = self.ut_pl.out_last.val();
        self.ut_opcode.next = self.d_opcode.q.val();
        self.ut_ddp_last.next = self.d_ddp_last.q.val();
        self.ut_qn.next = self.d_qn.q.val();
        self.ut_msn.next = self.d_msn.q.val();
        self.ut_mo.next = self.d_mo.q.val();
        self.ut_inv_stag.next = self.d_stag.q.val();
        self.ut_len.next = self.d_plen.q.val();
        self.ut_conn.next = self.conn.q.val();
        self.ut_qpn.next = self.qpn.q.val();
        self.ut_pd.next = self.pd.q.val();

        self.tag_opcode.next = self.d_opcode.q.val();
        self.tag_ddp_last.next = self.d_ddp_last.q.val();
        self.tag_stag.next = self.d_stag.q.val();
        self.tag_to.next = self.d_to.q.val();
        self.tag_len.next = self.d_plen.q.val();
        self.tag_conn.next = self.conn.q.val();
        self.tag_qpn.next = self.qpn.q.val();

        self.term_cause.next = self.d_cause.q.val();
        self.term_hdr.next = (bit_cast::<384, 64>(self.e5.q.val()) << 320)
            | (bit_cast::<384, 64>(self.e4.q.val()) << 256)
            | (bit_cast::<384, 64>(self.e3.q.val()) << 192)
            | (bit_cast::<384, 64>(self.e2.q.val()) << 128)
            | (bit_cast::<384, 64>(self.e1.q.val()) << 64)
            | bit_cast::<384, 64>(self.e0.q.val());
        self.term_seg_len.next = self.len.q.val();
        self.term_conn.next = self.conn.q.val();
        self.term_qpn.next = self.qpn.q.val();

        self.cnt_tagged.next = self.c_tagged.q.val();
        self.cnt_untagged.next = self.c_untagged.q.val();
        self.cnt_term.next = self.c_term.q.val();
        self.cnt_drop_state.next = self.c_drop.q.val();
        self.cnt_len_err.next = self.dma_pl.cnt_short.val()
            + self.dma_pl.cnt_long.val()
            + self.ut_pl.cnt_short.val()
            + self.ut_pl.cnt_long.val();

        // ---- header decode (registers b0..b2, valid in Decide). Byte-
        // swapped beats make the big-endian fields contiguous: octet j of
        // the segment is bits 191-8j..184-8j of `hdr`.
        self.w0.next = bit_cast::<192, 64>(self.b0.q.val());
        self.w1.next = bit_cast::<192, 64>(self.b1.q.val());
        self.w2.next = bit_cast::<192, 64>(self.b2.q.val());
        self.hdr.next = (((self.w0.val() >> 0) & self.byte192.val()) << 184)
            | (((self.w0.val() >> 8) & self.byte192.val()) << 176)
            | (((self.w0.val() >> 16) & self.byte192.val()) << 168)
            | (((self.w0.val() >> 24) & self.byte192.val()) << 160)
            | (((self.w0.val() >> 32) & self.byte192.val()) << 152)
            | (((self.w0.val() >> 40) & self.byte192.val()) << 144)
            | (((self.w0.val() >> 48) & self.byte192.val()) << 136)
            | (((self.w0.val() >> 56) & self.byte192.val()) << 128)
            | (((self.w1.val() >> 0) & self.byte192.val()) << 120)
            | (((self.w1.val() >> 8) & self.byte192.val()) << 112)
            | (((self.w1.val() >> 16) & self.byte192.val()) << 104)
            | (((self.w1.val() >> 24) & self.byte192.val()) << 96)
            | (((self.w1.val() >> 32) & self.byte192.val()) << 88)
            | (((self.w1.val() >> 40) & self.byte192.val()) << 80)
            | (((self.w1.val() >> 48) & self.byte192.val()) << 72)
            | (((self.w1.val() >> 56) & self.byte192.val()) << 64)
            | (((self.w2.val() >> 0) & self.byte192.val()) << 56)
            | (((self.w2.val() >> 8) & self.byte192.val()) << 48)
            | (((self.w2.val() >> 16) & self.byte192.val()) << 40)
            | (((self.w2.val() >> 24) & self.byte192.val()) << 32)
            | (((self.w2.val() >> 32) & self.byte192.val()) << 24)
            | (((self.w2.val() >> 40) & self.byte192.val()) << 16)
            | (((self.w2.val() >> 48) & self.byte192.val()) << 8)
            | (((self.w2.val() >> 56) & self.byte192.val()) << 0);
        self.ctl.next = self.hdr.val().get_bits::<8>(184);
        self.rctl.next = self.hdr.val().get_bits::<8>(176);
        self.is_tagged.next = self.ctl.val().get_bit(7);
        self.opcode.next = self.rctl.val().get_bits::<4>(0);
        // RFC 5041 §4.3: QN at octets 6..10, MSN 10..14, MO 14..18; §4.2:
        // STag 2..6, TO 6..14 (the untagged Invalidate STag is at 2..6 too).
        self.qn.next = self.hdr.val().get_bits::<32>(112);
        self.hdr_len.next = self.k_hdr_u.val();
        if self.is_tagged.val() {
            self.hdr_len.next = self.k_hdr_t.val();
        }
        self.short.next = self.early_end.q.val() | (self.len.q.val() < self.hdr_len.val());
        // The queue an untagged opcode belongs on (RFC 5040 §4.1 Figure 4).
        self.op_q.next = self.k_qn_none.val();
        if (self.opcode.val() == self.k_op_send.val())
            | (self.opcode.val() == self.k_op_send_inv.val())
            | (self.opcode.val() == self.k_op_send_se.val())
            | (self.opcode.val() == self.k_op_send_se_inv.val())
        {
            self.op_q.next = self.k_qn_send.val();
        }
        if self.opcode.val() == self.k_op_rreq.val() {
            self.op_q.next = self.k_qn_rreq.val();
        }
        if self.opcode.val() == self.k_op_term.val() {
            self.op_q.next = self.k_qn_term.val();
        }

        self.chk_pd.next = self.pd.q.val();
        self.rd_qpn.next = self.qpn.q.val();
        // The profile's connections only (masked: the bits beyond have no
        // reader); a connection beyond it has no bit and is dropped below.
        self.conn_out.next = (self.conn.q.val().get_bits::<8>(0) & !self.k_cmask.val()).any();
        self.conn_bit.next =
            bits::<256>(1) << (self.conn.q.val().get_bits::<8>(0) & self.k_cmask.val());
        if self.conn_out.val() {
            self.conn_bit.next = 0.into();
        }
        self.stop_hit.next = self.stopped.q.val() & self.conn_bit.val();
        // The request leaves in Decide, straight from the header registers
        // (the TPT is idle then), or from the decoded copies in Chk.
        self.plen_t.next = self.len.q.val() - self.k_hdr_t.val();
        if self.state.q.val() == RxState::Decide {
            self.chk_stag.next = self.hdr.val().get_bits::<32>(144);
            self.chk_to.next = self.hdr.val().get_bits::<64>(80);
            self.chk_len.next = bit_cast::<32, 16>(self.plen_t.val());
            self.chk_need.next = self.k_need_rw.val();
            if self.opcode.val() == self.k_op_rresp.val() {
                self.chk_need.next = self.k_need_lw.val();
            }
        } else {
            self.chk_stag.next = self.d_stag.q.val();
            self.chk_to.next = self.d_to.q.val();
            self.chk_len.next = bit_cast::<32, 16>(self.d_plen.q.val());
            self.chk_need.next = self.d_need.q.val();
        }

        // ---- beat bookkeeping: keep the first 48 octets for the echo
        self.take.next = false;
        self.beat_mask.next = self.ones64.val();
        if self.in_last.val() & (self.in_keep.val() < 8) {
            self.beat_mask.next =
                !(self.ones64.val() << (bit_cast::<7, 4>(self.in_keep.val()) << 3));
        }
        self.masked.next = self.in_data.val() & self.beat_mask.val();

        match self.state.q.val() {
            RxState::B0 => {
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.b0.d.next = self.in_data.val();
                    self.b0_keep.d.next = self.in_keep.val();
                    self.len.d.next = self.in_len.val();
                    self.conn.d.next = self.in_conn.val();
                    self.qpn.d.next = self.in_qpn.val();
                    self.qp_state.d.next = self.in_qp_state.val();
                    self.pd.d.next = self.in_pd.val();
                    self.e0.d.next = self.masked.val();
                    self.e1.d.next = 0.into();
                    self.e2.d.next = 0.into();
                    self.e3.d.next = 0.into();
                    self.e4.d.next = 0.into();
                    self.e5.d.next = 0.into();
                    self.bcnt.d.next = 1.into();
                    self.seg_done.d.next = self.in_last.val();
                    self.early_end.d.next = self.in_last.val();
                    self.b1.d.next = 0.into();
                    self.b2.d.next = 0.into();
                    self.hold_last.d.next = true;
                    if self.in_last.val() {
                        self.state.d.next = RxState::Decide;
                    } else {
                        self.state.d.next = RxState::B1;
                    }
                }
            }
            RxState::B1 => {
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.take.next = true;
                    self.b1.d.next = self.in_data.val();
                    self.hold_last.d.next = self.in_last.val();
                    self.seg_done.d.next = self.in_last.val();
                    // An untagged header needs a third beat.
                    if self.b0.q.val().get_bit(7) | self.in_last.val() {
                        self.early_end.d.next = !self.b0.q.val().get_bit(7) & self.in_last.val();
                        self.state.d.next = RxState::Decide;
                    } else {
                        self.state.d.next = RxState::B2;
                    }
                }
            }
            RxState::B2 => {
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.take.next = true;
                    self.b2.d.next = self.in_data.val();
                    self.hold_last.d.next = self.in_last.val();
                    self.seg_done.d.next = self.in_last.val();
                    self.state.d.next = RxState::Decide;
                }
            }
            RxState::Decide => {
                self.d_err.d.next = true;
                self.d_drop.d.next = false;
                self.d_cause.d.next = self.k_c_opcode.val();
                self.d_opcode.d.next = self.opcode.val();
                self.d_ddp_last.d.next = self.ctl.val().get_bit(6);
                self.d_stag.d.next = self.hdr.val().get_bits::<32>(144);
                self.d_to.d.next = self.hdr.val().get_bits::<64>(80);
                self.d_qn.d.next = self.qn.val().get_bits::<2>(0);
                self.d_msn.d.next = self.hdr.val().get_bits::<32>(80);
                self.d_mo.d.next = self.hdr.val().get_bits::<32>(48);
                self.d_plen.d.next = self.len.q.val() - self.hdr_len.val();
                self.d_need.d.next = self.k_need_rw.val();
                if self.opcode.val() == self.k_op_rresp.val() {
                    self.d_need.d.next = self.k_need_lw.val();
                }
                self.state.d.next = RxState::Drain;
                if (self.qp_state.q.val() != self.k_st_rts.val())
                    & (self.qp_state.q.val() != self.k_st_closing.val())
                {
                    // The QP is not receiving: drop quietly. The firmware has
                    // taken it out of RTS, so a Terminate's stop is over.
                    self.d_err.d.next = false;
                    self.d_drop.d.next = true;
                    self.stopped.d.next = self.stopped.q.val() & !self.conn_bit.val();
                } else if self.stop_hit.val().any() | self.conn_out.val() {
                    // RFC 5040 §5.1/§7: a Terminate was received on this
                    // stream; nothing after it is placed. (Or a connection
                    // beyond the profile: refused the same way.)
                    self.d_err.d.next = false;
                    self.d_drop.d.next = true;
                } else if (self.len.q.val() == 0) | (self.b0_keep.q.val() == 0) {
                    self.d_cause.d.next = self.k_c_short.val();
                } else if self.ctl.val().get_bits::<2>(0) != self.k_ddp_version.val() {
                    // RFC 5041 §7.2: Invalid DDP version, per buffer model.
                    self.d_cause.d.next = self.k_c_ddp_ver_u.val();
                    if self.is_tagged.val() {
                        self.d_cause.d.next = self.k_c_ddp_ver_t.val();
                    }
                } else if self.short.val() {
                    self.d_cause.d.next = self.k_c_short.val();
                } else if !self.is_tagged.val() & (self.qn.val() > self.k_qn_term.val()) {
                    self.d_cause.d.next = self.k_c_qn.val();
                } else if self.rctl.val().get_bits::<2>(6) != self.k_rdmap_version.val() {
                    self.d_cause.d.next = self.k_c_rdmap_ver.val();
                } else if self.is_tagged.val() {
                    if (self.opcode.val() == self.k_op_rresp.val()) & self.rd_busy.val() {
                        // The requester may be popping this QP's last
                        // Read: decide once its count is settled.
                        self.state.d.next = RxState::Decide;
                    } else if (self.opcode.val() == self.k_op_rresp.val()) & !self.rd_any.val() {
                        // RFC 5040 §5.3/§7: a Read Response with no Read
                        // Request outstanding on the QP is an unexpected
                        // opcode (0/2/6); nothing of it is placed.
                    } else if (self.opcode.val() == self.k_op_write.val())
                        | (self.opcode.val() == self.k_op_rresp.val())
                    {
                        self.d_err.d.next = false;
                        self.chk_valid.next = true;
                        if self.chk_ready.val() {
                            self.state.d.next = RxState::Res;
                        } else {
                            self.state.d.next = RxState::Chk;
                        }
                    }
                } else if self.op_q.val() == self.qn.val() {
                    self.d_err.d.next = false;
                    if self.qn.val() == self.k_qn_term.val() {
                        // An incoming Terminate stops the stream (it still
                        // goes out on ut_* for the firmware's record).
                        self.stopped.d.next = self.stopped.q.val() | self.conn_bit.val();
                    }
                    if self.len.q.val() == self.hdr_len.val() {
                        self.state.d.next = RxState::UtEmpty;
                    } else {
                        self.state.d.next = RxState::UtCmd;
                    }
                }
            }
            RxState::Chk => {
                self.chk_valid.next = true;
                if self.chk_ready.val() {
                    self.state.d.next = RxState::Res;
                }
            }
            RxState::Res => {
                self.res_ready.next = true;
                if self.res_valid.val() {
                    if self.res_fault.val() == 0 {
                        // Placement is idle here: the command is taken now.
                        self.dma_pl.cmd_valid.next = true;
                        self.state.d.next = RxState::Place;
                    } else {
                        self.d_err.d.next = true;
                        self.state.d.next = RxState::Drain;
                        if self.res_fault.val() == 1 {
                            self.d_cause.d.next = self.k_c_stag.val();
                        } else if self.res_fault.val() == 2 {
                            self.d_cause.d.next = self.k_c_pd.val();
                        } else if self.res_fault.val() == 3 {
                            self.d_cause.d.next = self.k_c_rights.val();
                        } else if self.res_fault.val() == 4 {
                            self.d_cause.d.next = self.k_c_bounds.val();
                        } else {
                            self.d_cause.d.next = self.k_c_wrap.val();
                        }
                    }
                }
            }
            RxState::Place => {
                self.in_ready.next = self.dma_pl.in_ready.val();
                // Placement idle again: the segment is placed; its record.
                if self.dma_pl.cmd_ready.val() {
                    self.tag_valid.next = true;
                    if self.tag_ready.val() {
                        self.c_tagged.d.next = self.c_tagged.q.val() + 1;
                        self.state.d.next = RxState::B0;
                    }
                }
            }
            RxState::UtCmd => {
                self.ut_pl.cmd_valid.next = true;
                self.state.d.next = RxState::UtRun;
            }
            RxState::UtRun => {
                self.in_ready.next = self.ut_pl.in_ready.val();
                if self.ut_pl.cmd_ready.val() {
                    self.c_untagged.d.next = self.c_untagged.q.val() + 1;
                    self.state.d.next = RxState::B0;
                }
            }
            RxState::UtEmpty => {
                // No payload: one empty beat carries the header fields.
                self.ut_valid.next = true;
                self.ut_keep.next = 0.into();
                self.ut_last.next = true;
                if self.ut_ready.val() {
                    self.c_untagged.d.next = self.c_untagged.q.val() + 1;
                    self.state.d.next = RxState::Drain;
                }
            }
            RxState::Drain => {
                self.in_ready.next = !self.seg_done.q.val();
                if self.in_valid.val() & !self.seg_done.q.val() {
                    self.take.next = true;
                    self.seg_done.d.next = self.in_last.val();
                }
                if self.seg_done.q.val() {
                    if self.d_err.q.val() {
                        self.state.d.next = RxState::Term;
                    } else {
                        if self.d_drop.q.val() {
                            self.c_drop.d.next = self.c_drop.q.val() + 1;
                        }
                        self.state.d.next = RxState::B0;
                    }
                }
            }
            RxState::Term => {
                self.term_valid.next = true;
                if self.term_ready.val() {
                    self.c_term.d.next = self.c_term.q.val() + 1;
                    self.state.d.next = RxState::B0;
                }
            }
        }

        // Echo capture: beats 1..5 of the segment, as they are taken by the
        // header states or the drain.
        if self.take.val() {
            if self.bcnt.q.val() < 6 {
                self.bcnt.d.next = self.bcnt.q.val() + 1;
            }
            if self.bcnt.q.val() == 1 {
                self.e1.d.next = self.masked.val();
            }
            if self.bcnt.q.val() == 2 {
                self.e2.d.next = self.masked.val();
            }
            if self.bcnt.q.val() == 3 {
                self.e3.d.next = self.masked.val();
            }
            if self.bcnt.q.val() == 4 {
                self.e4.d.next = self.masked.val();
            }
            if self.bcnt.q.val() == 5 {
                self.e5.d.next = self.masked.val();
            }
        }

        if self.reset.val() {
            self.state.d.next = RxState::B0;
            self.stopped.d.next = 0.into();
            self.c_tagged.d.next = 0.into();
            self.c_untagged.d.next = 0.into();
            self.c_term.d.next = 0.into();
            self.c_drop.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{beats, tick, Rng};
    use crate::protection::tpt::tests::{entry_bits, reference};
    use crate::protection::tpt::{fault, Tpt, PBL_INDEX_BITS, TPT_INDEX_BITS};
    use rnic_wire::abi::tpt::{Stag, TptEntry, TptState, ACCESS_ALL};
    use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};
    use rnic_wire::terminate::TerminateRepr;
    use rnic_wire::Error;
    use std::collections::VecDeque;

    const PN: usize = PBL_INDEX_BITS;

    #[derive(LogicBlock, Default)]
    struct BenchP<const PR: usize> {
        clock: Signal<In, Clock>,
        tpt: Tpt<TPT_INDEX_BITS, PN>,
        rx: DdpRxN<PR, PN>,
    }

    type Bench = BenchP<{ crate::profile::PR_SIM }>;

    impl<const PR: usize> Logic for BenchP<PR> {
        #[hdl_gen]
        fn update(&mut self) {
            clock!(self, clock, tpt, rx);
            self.tpt.reset.next = self.rx.reset.val();
            self.tpt.chk_valid.next = self.rx.chk_valid.val();
            self.rx.chk_ready.next = self.tpt.chk_ready.val();
            self.tpt.chk_stag.next = self.rx.chk_stag.val();
            self.tpt.chk_pd.next = self.rx.chk_pd.val();
            self.tpt.chk_need.next = self.rx.chk_need.val();
            self.tpt.chk_to.next = self.rx.chk_to.val();
            self.tpt.chk_len.next = self.rx.chk_len.val();
            self.tpt.chk_inv.next = false;
            self.rx.res_valid.next = self.tpt.res_valid.val();
            self.tpt.res_ready.next = self.rx.res_ready.val();
            self.rx.res_fault.next = self.tpt.res_fault.val();
            self.rx.res_addr.next = self.tpt.res_addr.val();
            self.rx.res_page_left.next = self.tpt.res_page_left.val();
            self.rx.res_pbl_idx.next = self.tpt.res_pbl_idx.val();
            self.rx.res_page_shift.next = self.tpt.res_page_shift.val();
            self.tpt.walk_idx.next = self.rx.walk_idx.val();
            self.rx.walk_addr.next = self.tpt.walk_addr.val();
        }
    }

    fn bench() -> Bench {
        bench_pr()
    }

    fn bench_pr<const PR: usize>() -> BenchP<PR> {
        let mut b = BenchP::<PR>::default();
        b.clock.connect();
        b.rx.reset.connect();
        for s in [
            &mut b.rx.in_valid,
            &mut b.rx.in_last,
            &mut b.rx.dma_wr_ready,
            &mut b.rx.tag_ready,
            &mut b.rx.ut_ready,
            &mut b.rx.term_ready,
            &mut b.tpt.tpt_wr_en,
            &mut b.tpt.pbl_wr_en,
        ] {
            s.connect();
        }
        b.rx.in_data.connect();
        b.rx.in_keep.connect();
        b.rx.in_len.connect();
        b.rx.in_conn.connect();
        b.rx.in_qpn.connect();
        b.rx.in_qp_state.connect();
        b.rx.in_pd.connect();
        b.rx.rd_any.connect();
        b.rx.rd_busy.connect();
        b.tpt.tpt_wr_index.connect();
        b.tpt.tpt_wr_data.connect();
        b.tpt.pbl_wr_index.connect();
        b.tpt.pbl_wr_data.connect();
        b.connect_all();
        b.rx.reset.next = true;
        tick!(b);
        tick!(b);
        b.rx.reset.next = false;
        b
    }

    /// Host memory and registered regions for a run.
    struct World {
        table: Vec<TptEntry>,
        pbl: Vec<u64>,
    }

    fn world(rng: &mut Rng) -> World {
        let n = 1 << TPT_INDEX_BITS;
        let mut next = 0u32;
        let mut table = Vec::new();
        for i in 0..n {
            let page_shift = [12u8, 12, 13, 16][rng.below(4)];
            let length = 1 + rng.below(24000) as u64;
            let va = rng.next_u64() >> rng.below(30);
            let first = va & !((1u64 << page_shift) - 1);
            let npages = ((va + length - 1 - first) >> page_shift) as u32 + 1;
            if next + npages > 1024 {
                next = 0;
            }
            table.push(TptEntry {
                state: if i % 16 == 15 {
                    TptState::Invalid
                } else {
                    TptState::Valid
                },
                key: rng.next_u64() as u8,
                access: if rng.below(4) == 0 {
                    rng.below(ACCESS_ALL as usize + 1) as u8
                } else {
                    ACCESS_ALL
                },
                page_shift,
                pd: rng.below(3) as u32,
                va,
                length,
                pbl_base: next,
                npages,
            });
            next += npages;
        }
        // Distinct page addresses, aligned to the largest page.
        let pbl = (0..1024u64)
            .map(|i| (0x40_0000_0000 + i * (1 << 16)) ^ ((rng.next_u64() & 0xff) << 40))
            .collect();
        World { table, pbl }
    }

    fn load<const PR: usize>(b: &mut BenchP<PR>, w: &World) {
        for i in 0..w.table.len().max(w.pbl.len()) {
            b.tpt.tpt_wr_en.next = i < w.table.len();
            if let Some(e) = w.table.get(i) {
                b.tpt.tpt_wr_index.next = (i as u64).into();
                b.tpt.tpt_wr_data.next = entry_bits(e);
            }
            b.tpt.pbl_wr_en.next = i < w.pbl.len();
            if let Some(&a) = w.pbl.get(i) {
                b.tpt.pbl_wr_index.next = (i as u64).into();
                b.tpt.pbl_wr_data.next = a.into();
            }
            tick!(*b);
        }
        b.tpt.tpt_wr_en.next = false;
        b.tpt.pbl_wr_en.next = false;
    }

    /// A segment to send and what must come out for it.
    #[derive(Clone)]
    struct Seg {
        bytes: Vec<u8>,
        len: u16,
        qp_state: u8,
        pd: u32,
        conn: u32,
        qpn: u32,
        want: Want,
    }

    #[derive(Clone, Debug, PartialEq)]
    enum Want {
        /// Placed: these (address, octet) writes and this tag record.
        Placed {
            writes: Vec<(u64, u8)>,
            rec: TagRec,
        },
        Term(TermRec),
        Untagged(UtRec),
        Dropped,
    }

    #[derive(Clone, Debug, PartialEq)]
    struct TagRec {
        opcode: u8,
        last: bool,
        stag: u32,
        to: u64,
        len: u16,
    }

    #[derive(Clone, Debug, PartialEq)]
    struct TermRec {
        cause: u16,
        hdr: Vec<u8>,
        seg_len: u16,
        conn: u32,
        qpn: u32,
    }

    #[derive(Clone, Debug, PartialEq)]
    struct UtRec {
        opcode: u8,
        last: bool,
        qn: u8,
        msn: u32,
        mo: u32,
        inv_stag: u32,
        payload: Vec<u8>,
    }

    fn term(seg: &[u8], cause: TerminateCause, conn: u32, qpn: u32) -> Want {
        let mut hdr = seg[..seg.len().min(ECHO_OCTETS)].to_vec();
        hdr.resize(ECHO_OCTETS, 0);
        Want::Term(TermRec {
            cause: cause.to_bits(),
            hdr,
            seg_len: seg.len() as u16,
            conn,
            qpn,
        })
    }

    /// RFC 5041 §7.2 / RFC 5040 §7 cause of a TPT fault (the mapping this
    /// design uses, spelled with rnic-wire's cause types).
    fn tpt_cause(code: u64) -> TerminateCause {
        match code {
            fault::INVALID_STAG => TaggedBufferError::InvalidStag.into(),
            fault::WRONG_PD => TaggedBufferError::StagNotAssociated.into(),
            fault::ACCESS_RIGHTS => RemoteProtectionError::AccessRightsViolation.into(),
            fault::BOUNDS => TaggedBufferError::BaseOrBoundsViolation.into(),
            fault::OFFSET_WRAP => TaggedBufferError::ToWrap.into(),
            _ => unreachable!(),
        }
    }

    fn emit(r: &RdmapRepr) -> Vec<u8> {
        let mut v = vec![0; r.buffer_len()];
        r.emit(&mut v).unwrap();
        v
    }

    /// The bench's requester: QPs whose number is a multiple of 7 have no
    /// RDMA Read outstanding.
    fn read_outstanding(qpn: u32) -> bool {
        !qpn.is_multiple_of(7)
    }

    /// A tagged segment (RDMA Write or Read Response) with a random STag
    /// (mostly valid), TO and length; its expected outcome from
    /// `TptEntry::check`/`page_of`.
    fn tagged(rng: &mut Rng, w: &World, plen: Option<usize>, faults: bool) -> Seg {
        let idx = rng.below(w.table.len());
        let e = w.table[idx];
        let read_resp = rng.below(3) == 0;
        let plen = plen.unwrap_or_else(|| match rng.below(10) {
            0 => 0,
            1 => 1 + rng.below(8),
            _ => rng.below(3000),
        });
        let span = (e.length as usize).saturating_sub(plen) + 1;
        let mut to = e.va + rng.below(span) as u64;
        let mut key = e.key;
        let mut pd = e.pd;
        let mut stag_idx = idx as u32;
        if faults {
            match rng.below(8) {
                0 => key = key.wrapping_add(1),
                1 => pd = pd.wrapping_add(1),
                2 => {
                    // past the end
                    let back = rng.below(plen.max(1)) as u64;
                    to = e.va + e.length - back;
                }
                3 => {
                    let before = 1 + rng.below(100) as u64;
                    to = e.va.wrapping_sub(before);
                }
                4 => {
                    let back = rng.below(plen.max(1)) as u64;
                    to = u64::MAX - back;
                }
                5 => {
                    let extra = rng.below(1000) as u32;
                    stag_idx = (1 << TPT_INDEX_BITS) + extra;
                }
                _ => {}
            }
        }
        let stag = Stag::new(stag_idx, key).unwrap().0;
        let payload = rng.bytes(plen);
        let last = rng.below(2) == 0;
        let r = if read_resp {
            RdmapRepr::ReadResponse {
                last,
                stag,
                to,
                payload: &payload,
            }
        } else {
            RdmapRepr::RdmaWrite {
                last,
                stag,
                to,
                payload: &payload,
            }
        };
        let bytes = emit(&r);
        let need = if read_resp {
            ACCESS_LOCAL_WRITE
        } else {
            ACCESS_REMOTE_WRITE
        };
        let (code, ..) = reference(&w.table, &w.pbl, stag, pd, need, to, plen as u32);
        let conn = rng.below(1000) as u32;
        let qpn = rng.below(1000) as u32;
        let want = if read_resp && !read_outstanding(qpn) {
            // RFC 5040 §5.3/§7: no Read Request to answer, whatever the
            // STag: refused before the TPT check, nothing written.
            term(
                &bytes,
                RemoteOperationError::UnexpectedOpcode.into(),
                conn,
                qpn,
            )
        } else if code == fault::OK {
            let writes = (0..plen)
                .map(|i| {
                    let (p, off) = e.page_of(to + i as u64).unwrap();
                    (w.pbl[p as usize] + off, payload[i])
                })
                .collect();
            Want::Placed {
                writes,
                rec: TagRec {
                    opcode: r.opcode().value(),
                    last,
                    stag,
                    to,
                    len: plen as u16,
                },
            }
        } else {
            term(&bytes, tpt_cause(code), conn, qpn)
        };
        Seg {
            len: bytes.len() as u16,
            bytes,
            qp_state: QpState::Rts as u8,
            pd,
            conn,
            qpn,
            want,
        }
    }

    /// A valid untagged message: Send (any kind), Read Request or Terminate.
    fn untagged(rng: &mut Rng) -> Seg {
        let plen = match rng.below(4) {
            0 => 0,
            _ => rng.below(400),
        };
        let payload = rng.bytes(plen);
        let msn = rng.next_u64() as u32;
        let r = match rng.below(4) {
            0 => RdmapRepr::ReadRequest {
                msn,
                request: ReadRequestRepr {
                    sink_stag: rng.next_u64() as u32,
                    sink_to: rng.next_u64(),
                    size: rng.next_u64() as u32,
                    src_stag: rng.next_u64() as u32,
                    src_to: rng.next_u64(),
                },
            },
            1 => RdmapRepr::Terminate {
                msn,
                terminate: TerminateRepr::new(UntaggedBufferError::InvalidMo.into()),
            },
            _ => RdmapRepr::Send {
                solicited: rng.below(2) == 0,
                invalidate_stag: (rng.below(2) == 0).then_some(rng.next_u64() as u32),
                last: rng.below(2) == 0,
                msn,
                mo: rng.next_u64() as u32,
                payload: &payload,
            },
        };
        let bytes = emit(&r);
        let ddp = r.ddp_repr();
        let rnic_wire::ddp::DdpRepr::Untagged {
            last,
            rsvd_ulp_ext,
            qn,
            msn,
            mo,
            ..
        } = ddp
        else {
            unreachable!()
        };
        Seg {
            len: bytes.len() as u16,
            want: Want::Untagged(UtRec {
                opcode: r.opcode().value(),
                last,
                qn: qn as u8,
                msn,
                mo,
                inv_stag: rsvd_ulp_ext,
                payload: bytes[UNTAGGED_HEADER_LEN..].to_vec(),
            }),
            bytes,
            qp_state: QpState::Rts as u8,
            pd: 0,
            conn: rng.below(1000) as u32,
            qpn: rng.below(1000) as u32,
        }
    }

    /// A malformed segment (one fault) and its Terminate cause. rnic-wire's
    /// parser must refuse it too, with the matching error class.
    fn malformed(rng: &mut Rng, w: &World) -> Seg {
        let t = rng.below(2) == 0;
        let kind = rng.below(MALFORMED_KINDS);
        malformed_kind(rng, w, t, kind)
    }

    const MALFORMED_KINDS: usize = 7;

    fn malformed_kind(rng: &mut Rng, w: &World, t: bool, kind: usize) -> Seg {
        let mut s = if t {
            let plen = rng.below(100);
            tagged(rng, w, Some(plen), false)
        } else {
            untagged(rng)
        };
        let (cause, wire_err): (TerminateCause, Option<Error>) = match kind {
            0 => {
                s.bytes[0] = (s.bytes[0] & !3) | [0u8, 2, 3][rng.below(3)];
                let c = if t {
                    TaggedBufferError::InvalidDdpVersion.into()
                } else {
                    UntaggedBufferError::InvalidDdpVersion.into()
                };
                (c, Some(Error::BadVersion))
            }
            1 => {
                s.bytes[1] = (s.bytes[1] & 0x3f) | ([0u8, 2, 3][rng.below(3)] << 6);
                (
                    RemoteOperationError::InvalidRdmapVersion.into(),
                    Some(Error::BadVersion),
                )
            }
            2 => {
                // Reserved / experimental opcodes (RFC 5040 §4.1, RFC 6580).
                s.bytes[1] = (s.bytes[1] & 0xf0) | (0xc + rng.below(4) as u8);
                (
                    RemoteOperationError::UnexpectedOpcode.into(),
                    Some(Error::BadOpcode),
                )
            }
            3 => {
                // The other buffer model's opcode.
                let op = if t {
                    [1u8, 3, 4, 5, 6, 7][rng.below(6)]
                } else {
                    [0u8, 2][rng.below(2)]
                };
                s.bytes[1] = (s.bytes[1] & 0xf0) | op;
                (
                    RemoteOperationError::UnexpectedOpcode.into(),
                    Some(Error::BadOpcode),
                )
            }
            4 | 5 if t => {
                // Tagged: the opcode check instead (reserved opcodes).
                s.bytes[1] = (s.bytes[1] & 0xf0) | (0x8 + rng.below(8) as u8);
                let e = if s.bytes[1] & 0xf >= 0xc {
                    Some(Error::BadOpcode)
                } else {
                    None // RFC 7306 opcodes: rnic-wire knows them
                };
                (RemoteOperationError::UnexpectedOpcode.into(), e)
            }
            4 => {
                // A QN that is not 0, 1 or 2 (RFC 5041 §7.2 Invalid QN).
                // QN 3 is RFC 7306's Atomic Response queue: not spoken here.
                let qn = match rng.below(3) {
                    0 => 3,
                    1 => u32::MAX - rng.below(4) as u32,
                    _ => 4 + rng.below(1 << 20) as u32,
                };
                s.bytes[6..10].copy_from_slice(&qn.to_be_bytes());
                (UntaggedBufferError::InvalidQn.into(), Some(Error::BadField))
            }
            5 => {
                // A valid QN, but not the opcode's.
                let qn = u32::from_be_bytes(s.bytes[6..10].try_into().unwrap());
                let other = (qn + 1 + rng.below(2) as u32) % 3;
                s.bytes[6..10].copy_from_slice(&other.to_be_bytes());
                (
                    RemoteOperationError::UnexpectedOpcode.into(),
                    Some(Error::BadField),
                )
            }
            _ => {
                let h = if t {
                    TAGGED_HEADER_LEN
                } else {
                    UNTAGGED_HEADER_LEN
                };
                s.bytes.truncate(1 + rng.below(h - 1));
                (
                    RemoteOperationError::CatastrophicLocal.into(),
                    Some(Error::Truncated),
                )
            }
        };
        if let Some(e) = wire_err {
            assert_eq!(
                RdmapRepr::from_bytes(&s.bytes).err(),
                Some(e),
                "rnic-wire disagrees on {:02x?}",
                &s.bytes[..s.bytes.len().min(20)]
            );
        }
        s.len = s.bytes.len() as u16;
        s.want = term(&s.bytes, cause, s.conn, s.qpn);
        s
    }

    #[derive(Default)]
    struct Out {
        writes: Vec<(u64, u8)>,
        dma_beats: usize,
        tags: Vec<TagRec>,
        terms: Vec<TermRec>,
        uts: Vec<UtRec>,
        cycles: usize,
        /// Clock of each segment's first beat and of each DMA header beat.
        first_beat: Vec<usize>,
        dma_hdr_at: Vec<usize>,
        /// Clock at which each TPT check request was taken.
        chk_at: Vec<usize>,
    }

    /// Feeds `segs` with random gaps and random sink readiness; collects
    /// every output.
    fn run<const PR: usize>(
        mut b: BenchP<PR>,
        segs: &[Seg],
        rng: &mut Rng,
        in_pct: usize,
        out_pct: usize,
    ) -> (Out, BenchP<PR>) {
        let mut q: VecDeque<(usize, u64, u8, bool)> = VecDeque::new();
        for (i, s) in segs.iter().enumerate() {
            let bs = beats(&s.bytes);
            let n = bs.len();
            for (j, (d, k)) in bs.into_iter().enumerate() {
                q.push_back((i, d, k, j + 1 == n));
            }
        }
        let mut o = Out::default();
        let mut req: Option<(u64, usize, usize)> = None; // addr, len, got
        let mut ut_cur: Vec<u8> = Vec::new();
        let mut first = true;
        let mut idle = 0;
        loop {
            let present = !q.is_empty() && rng.below(100) < in_pct;
            b.rx.in_valid.next = present;
            if let Some(&(i, d, k, l)) = q.front() {
                let s = &segs[i];
                b.rx.in_data.next = d.into();
                b.rx.in_keep.next = (k as u64).into();
                b.rx.in_last.next = l;
                b.rx.in_len.next = (s.len as u64).into();
                b.rx.in_conn.next = (s.conn as u64).into();
                b.rx.in_qpn.next = (s.qpn as u64).into();
                b.rx.in_qp_state.next = (s.qp_state as u64).into();
                b.rx.in_pd.next = (s.pd as u64).into();
            }
            let r = |rng: &mut Rng| rng.below(100) < out_pct;
            let (dr, tr, ur, mr) = (r(rng), r(rng), r(rng), r(rng));
            // The requester's answer for the QP ddp_rx asks about, and its
            // busy clocks (as often as the sinks stall).
            b.rx.rd_any.next = read_outstanding(b.rx.rd_qpn.val().to_u64() as u32);
            b.rx.rd_busy.next = !r(rng);
            b.rx.dma_wr_ready.next = dr;
            b.rx.tag_ready.next = tr;
            b.rx.ut_ready.next = ur;
            b.rx.term_ready.next = mr;
            assert!(simulate(&mut b, 1000));
            let rx = &b.rx;
            if present && rx.in_ready.val() {
                if first {
                    o.first_beat.push(o.cycles);
                }
                first = q.front().unwrap().3;
                q.pop_front();
            }
            if rx.chk_valid.val() && b.tpt.chk_ready.val() {
                o.chk_at.push(o.cycles);
            }
            if rx.dma_wr_valid.val() && dr {
                o.dma_beats += 1;
                if rx.dma_wr_hdr.val() {
                    assert!(req.is_none(), "DMA header inside a request");
                    let a = rx.dma_wr_data.val().to_u64();
                    let l = rx.dma_wr_len.val().to_u64() as usize;
                    assert!((1..=4096).contains(&l), "DMA length {l}");
                    assert_eq!(a / 4096, (a + l as u64 - 1) / 4096, "request crosses 4 KiB");
                    o.dma_hdr_at.push(o.cycles);
                    req = Some((a, l, 0));
                } else {
                    let (a, l, got) = req.as_mut().expect("DMA data outside a request");
                    let k = rx.dma_wr_keep.val().to_u64() as usize;
                    let d = rx.dma_wr_data.val().to_u64().to_le_bytes();
                    for (j, &byte) in d[..k].iter().enumerate() {
                        o.writes.push((*a + (*got + j) as u64, byte));
                    }
                    *got += k;
                    assert_eq!(rx.dma_wr_last.val(), *got == *l, "DMA last/length");
                    if *got == *l {
                        req = None;
                    } else {
                        assert_eq!(k, 8);
                    }
                }
            }
            if rx.tag_valid.val() && tr {
                o.tags.push(TagRec {
                    opcode: rx.tag_opcode.val().to_u64() as u8,
                    last: rx.tag_ddp_last.val(),
                    stag: rx.tag_stag.val().to_u64() as u32,
                    to: rx.tag_to.val().to_u64(),
                    len: rx.tag_len.val().to_u64() as u16,
                });
                assert!(req.is_none());
            }
            if rx.term_valid.val() && mr {
                let h = rx.term_hdr.val();
                let hdr = (0..ECHO_OCTETS)
                    .map(|i| h.get_bits::<8>(8 * i).to_u64() as u8)
                    .collect();
                o.terms.push(TermRec {
                    cause: rx.term_cause.val().to_u64() as u16,
                    hdr,
                    seg_len: rx.term_seg_len.val().to_u64() as u16,
                    conn: rx.term_conn.val().to_u64() as u32,
                    qpn: rx.term_qpn.val().to_u64() as u32,
                });
            }
            if rx.ut_valid.val() && ur {
                let k = rx.ut_keep.val().to_u64() as usize;
                let d = rx.ut_data.val().to_u64().to_le_bytes();
                ut_cur.extend_from_slice(&d[..k]);
                if rx.ut_last.val() {
                    o.uts.push(UtRec {
                        opcode: rx.ut_opcode.val().to_u64() as u8,
                        last: rx.ut_ddp_last.val(),
                        qn: rx.ut_qn.val().to_u64() as u8,
                        msn: rx.ut_msn.val().to_u64() as u32,
                        mo: rx.ut_mo.val().to_u64() as u32,
                        inv_stag: rx.ut_inv_stag.val().to_u64() as u32,
                        payload: std::mem::take(&mut ut_cur),
                    });
                    assert_eq!(
                        rx.ut_len.val().to_u64() as usize,
                        o.uts.last().unwrap().payload.len()
                    );
                } else {
                    assert_eq!(k, 8);
                }
            }
            tick!(b);
            o.cycles += 1;
            if q.is_empty() {
                idle += 1;
                if idle > 200 {
                    break;
                }
            }
            assert!(o.cycles < 400_000, "hung");
        }
        (o, b)
    }

    fn check(segs: &[Seg], o: &Out) {
        let mut writes = Vec::new();
        let (mut tags, mut terms, mut uts) = (Vec::new(), Vec::new(), Vec::new());
        for s in segs {
            match &s.want {
                Want::Placed { writes: w, rec } => {
                    writes.extend_from_slice(w);
                    tags.push(rec.clone());
                }
                Want::Term(t) => terms.push(t.clone()),
                Want::Untagged(u) => uts.push(u.clone()),
                Want::Dropped => {}
            }
        }
        assert_eq!(o.writes.len(), writes.len(), "octets written");
        for (i, (g, w)) in o.writes.iter().zip(&writes).enumerate() {
            assert_eq!(g, w, "write {i}");
        }
        assert_eq!(o.tags, tags);
        assert_eq!(o.terms.len(), terms.len(), "terminates");
        for (g, w) in o.terms.iter().zip(&terms) {
            assert_eq!(g, w);
        }
        assert_eq!(o.uts.len(), uts.len(), "untagged");
        for (g, w) in o.uts.iter().zip(&uts) {
            assert_eq!(g, w);
        }
    }

    /// RDMA Writes and Read Responses with random STags, TOs and lengths
    /// (crossing pages, unaligned), some faulty: the DMA writes are exactly
    /// the expected octets at the bus addresses `TptEntry::page_of` gives,
    /// in order; faulty segments produce their Terminate and no write.
    #[test]
    fn tagged_segments_place_or_terminate() {
        let mut rng = Rng::new(31);
        let w = world(&mut rng);
        let mut b = bench();
        load(&mut b, &w);
        let segs: Vec<Seg> = (0..70)
            .map(|i| tagged(&mut rng, &w, None, i % 3 == 0))
            .collect();
        let placed = segs
            .iter()
            .filter(|s| matches!(s.want, Want::Placed { .. }))
            .count();
        assert!(placed > 30 && placed < 70, "mix: {placed} placed");
        let (o, b) = run(b, &segs, &mut rng, 85, 75);
        check(&segs, &o);
        assert_eq!(b.rx.cnt_tagged.val().to_u64() as usize, placed);
        assert_eq!(b.rx.cnt_term.val().to_u64() as usize, 70 - placed);
        assert_eq!(b.rx.cnt_len_err.val().to_u64(), 0);
    }

    /// A Read Response for a QP with no RDMA Read outstanding (RFC 5040
    /// §5.3) is refused with RDMAP Unexpected OpCode (0/2/6) and writes
    /// nothing, though its STag, rights and bounds are good; Read Responses
    /// for QPs with a Read outstanding are placed around it, and a busy
    /// requester only delays the decision.
    #[test]
    fn read_response_without_read_places_nothing() {
        let mut rng = Rng::new(35);
        let w = world(&mut rng);
        let mut b = bench();
        load(&mut b, &w);
        let (mut stray, mut good) = (Vec::new(), Vec::new());
        while stray.len() < 6 || good.len() < 6 {
            let plen = 1 + rng.below(3000);
            let s = tagged(&mut rng, &w, Some(plen), false);
            if s.bytes[1] & 0xf != Opcode::ReadResponse.value() {
                continue;
            }
            match &s.want {
                Want::Term(t) if !read_outstanding(s.qpn) => {
                    let c = TerminateCause::from(RemoteOperationError::UnexpectedOpcode);
                    assert_eq!(t.cause, c.to_bits());
                    stray.push(s)
                }
                Want::Placed { .. } => good.push(s),
                _ => {}
            }
        }
        let segs: Vec<Seg> = stray
            .into_iter()
            .zip(good)
            .flat_map(|(a, b)| [a, b])
            .collect();
        let (o, b) = run(b, &segs, &mut rng, 90, 70);
        check(&segs, &o);
        assert_eq!(b.rx.cnt_term.val().to_u64(), 6);
        assert_eq!(b.rx.cnt_tagged.val().to_u64(), 6);
    }

    /// Every TPT fault kind, each alone, gives its cause and zero DMA beats.
    #[test]
    fn every_tpt_fault_terminates_without_writes() {
        let mut rng = Rng::new(32);
        let w = world(&mut rng);
        let mut b = bench();
        load(&mut b, &w);
        let mut segs = Vec::new();
        let mut seen = [0usize; 6];
        while seen[1..].iter().any(|&c| c < 3) {
            let plen = 1 + rng.below(2000);
            let s = tagged(&mut rng, &w, Some(plen), true);
            if let Want::Term(t) = &s.want {
                let code = [
                    fault::INVALID_STAG,
                    fault::WRONG_PD,
                    fault::ACCESS_RIGHTS,
                    fault::BOUNDS,
                    fault::OFFSET_WRAP,
                ]
                .into_iter()
                .find(|&c| tpt_cause(c).to_bits() == t.cause);
                // (a Read Response with no Read outstanding: not a TPT fault)
                let Some(code) = code else { continue };
                if seen[code as usize] < 3 {
                    seen[code as usize] += 1;
                    segs.push(s);
                }
            }
        }
        let (o, _b) = run(b, &segs, &mut rng, 100, 100);
        assert_eq!(o.dma_beats, 0);
        check(&segs, &o);
    }

    /// Untagged messages reach `ut_*` with their header fields and payload;
    /// malformed segments of either model give the RFC cause (and rnic-wire
    /// refuses them too); a QP that is not receiving drops quietly.
    #[test]
    fn untagged_and_malformed() {
        let mut rng = Rng::new(33);
        let w = world(&mut rng);
        let mut b = bench();
        load(&mut b, &w);
        let mut segs = Vec::new();
        let mut drops = 0;
        for i in 0..90 {
            let mut s = match i % 3 {
                0 => untagged(&mut rng),
                1 => malformed(&mut rng, &w),
                _ => {
                    let plen = rng.below(200);
                    tagged(&mut rng, &w, Some(plen), false)
                }
            };
            if rng.below(12) == 0 {
                s.qp_state =
                    [QpState::Idle, QpState::Terminate, QpState::Error][rng.below(3)] as u8;
                s.want = Want::Dropped;
                drops += 1;
            }
            segs.push(s);
        }
        let stops = apply_stops(&mut segs);
        let (o, b) = run(b, &segs, &mut rng, 80, 70);
        check(&segs, &o);
        assert_eq!(b.rx.cnt_drop_state.val().to_u64(), drops + stops);
        assert!(drops > 0);
    }

    /// The expected effect of incoming Terminates (RFC 5040 §5.1/§7): after
    /// a good Terminate on a connection (index mod 256), its segments are
    /// dropped until one arrives while its QP is not Rts/Closing. Returns
    /// how many segments that drops.
    fn apply_stops(segs: &mut [Seg]) -> u64 {
        let mut stopped = std::collections::HashSet::new();
        let mut n = 0;
        for s in segs.iter_mut() {
            let c = s.conn % 256;
            let receiving =
                s.qp_state == QpState::Rts as u8 || s.qp_state == QpState::Closing as u8;
            if !receiving {
                stopped.remove(&c);
            } else if stopped.contains(&c) {
                s.want = Want::Dropped;
                n += 1;
            } else if matches!(&s.want, Want::Untagged(u) if u.qn == 2) {
                stopped.insert(c);
            }
        }
        n
    }

    /// An incoming Terminate stops its connection: a later RDMA Write on it
    /// is dropped (no DMA), other connections are not affected, and a
    /// segment seen while the QP is out of RTS ends the stop.
    #[test]
    fn incoming_terminate_stops_the_stream() {
        let mut rng = Rng::new(36);
        let w = world(&mut rng);
        let mut b = bench();
        load(&mut b, &w);
        let good = |rng: &mut Rng, conn: u32| {
            let mut s;
            loop {
                let plen = 1 + rng.below(100);
                s = tagged(rng, &w, Some(plen), false);
                if matches!(s.want, Want::Placed { .. }) {
                    break;
                }
            }
            s.conn = conn;
            s
        };
        let mut term = untagged(&mut rng);
        while !matches!(&term.want, Want::Untagged(u) if u.qn == 2) {
            term = untagged(&mut rng);
        }
        term.conn = 5 + 256; // same index as 5
        let mut segs = vec![
            good(&mut rng, 5),
            term,
            good(&mut rng, 5),
            good(&mut rng, 6),
        ];
        let mut idle = good(&mut rng, 5);
        idle.qp_state = QpState::Error as u8;
        segs.push(idle);
        segs.push(good(&mut rng, 5));
        let n = apply_stops(&mut segs);
        assert_eq!(n, 1);
        assert!(matches!(segs[2].want, Want::Dropped));
        segs[4].want = Want::Dropped;
        let (o, b) = run(b, &segs, &mut rng, 90, 80);
        check(&segs, &o);
        assert_eq!(b.rx.cnt_drop_state.val().to_u64(), 2);
        assert_eq!(b.rx.cnt_tagged.val().to_u64(), 3);
    }

    /// Board profile (n = 16 connections): a Terminate on connection n + 5
    /// (21: 5 modulo n) is beyond the profile: dropped and counted, it does
    /// not stop connection 5 (no aliasing); segments of n and 255 are
    /// dropped too, while n - 1 and 0 are placed; a Terminate on n - 1
    /// stops n - 1 only. Without the profile, 21's Terminate would go out
    /// on `ut_*` and 16's and 255's Writes would be placed. The connections
    /// follow `BOARD.conn_log2`.
    #[test]
    fn board_profile_stops_16_connections_and_drops_the_rest() {
        let mut rng = Rng::new(37);
        let w = world(&mut rng);
        let mut b = bench_pr::<{ crate::profile::PR_BOARD }>();
        load(&mut b, &w);
        let n = 1u32 << crate::profile::PROFILES[crate::profile::PR_BOARD].conn_log2;
        assert!(n > 5);
        let good = |rng: &mut Rng, conn: u32| {
            let mut s;
            loop {
                let plen = 1 + rng.below(100);
                s = tagged(rng, &w, Some(plen), false);
                if matches!(s.want, Want::Placed { .. }) {
                    break;
                }
            }
            s.conn = conn;
            s
        };
        let term = |rng: &mut Rng, conn: u32| {
            let mut t = untagged(rng);
            while !matches!(&t.want, Want::Untagged(u) if u.qn == 2) {
                t = untagged(rng);
            }
            t.conn = conn;
            t
        };
        let mut segs = vec![
            good(&mut rng, 5),
            term(&mut rng, n + 5),
            good(&mut rng, 5),
            good(&mut rng, n),
            good(&mut rng, n - 1),
            good(&mut rng, 255),
            good(&mut rng, 0),
            term(&mut rng, n - 1),
            good(&mut rng, n - 1),
            good(&mut rng, 0),
        ];
        for i in [1, 3, 5, 8] {
            segs[i].want = Want::Dropped;
        }
        let (o, b) = run(b, &segs, &mut rng, 90, 80);
        check(&segs, &o);
        assert_eq!(b.rx.cnt_drop_state.val().to_u64(), 4);
        assert_eq!(b.rx.cnt_tagged.val().to_u64(), 5);
        assert_eq!(b.rx.cnt_untagged.val().to_u64(), 1);
    }

    /// Each kind of malformed segment, for both buffer models, several
    /// times: its cause, and nothing placed or handed on.
    #[test]
    fn decode_errors_directed() {
        let mut rng = Rng::new(35);
        let w = world(&mut rng);
        let b = bench();
        let mut segs = Vec::new();
        for kind in 0..MALFORMED_KINDS {
            for t in [false, true] {
                for _ in 0..4 {
                    segs.push(malformed_kind(&mut rng, &w, t, kind));
                }
            }
        }
        let (o, b) = run(b, &segs, &mut rng, 100, 100);
        check(&segs, &o);
        assert_eq!(o.dma_beats, 0);
        assert_eq!(b.rx.cnt_term.val().to_u64() as usize, segs.len());
    }

    /// Back-to-back 1442-octet RDMA Writes with every sink ready: clocks
    /// per segment and from the last header beat to the first DMA beat.
    #[test]
    fn throughput_1442() {
        let mut rng = Rng::new(34);
        let mut w = world(&mut rng);
        // One big region in 64 KiB pages, so no request splits at a page.
        w.table[0] = TptEntry {
            state: TptState::Valid,
            key: 7,
            access: ACCESS_ALL,
            page_shift: 16,
            pd: 1,
            va: 0,
            length: 1 << 20,
            pbl_base: 0,
            npages: 16,
        };
        let mut b = bench();
        load(&mut b, &w);
        let n = 12;
        let plen = 1442 - TAGGED_HEADER_LEN;
        let segs: Vec<Seg> = (0..n)
            .map(|i| {
                let payload = rng.bytes(plen);
                let to = 4096 * i as u64; // aligned: one request per segment
                let r = RdmapRepr::RdmaWrite {
                    last: true,
                    stag: Stag::new(0, 7).unwrap().0,
                    to,
                    payload: &payload,
                };
                let bytes = emit(&r);
                let e = w.table[0];
                let writes = (0..plen)
                    .map(|j| {
                        let (p, off) = e.page_of(to + j as u64).unwrap();
                        (w.pbl[p as usize] + off, payload[j])
                    })
                    .collect();
                Seg {
                    len: bytes.len() as u16,
                    bytes,
                    qp_state: QpState::Rts as u8,
                    pd: 1,
                    conn: 0,
                    qpn: 0,
                    want: Want::Placed {
                        writes,
                        rec: TagRec {
                            opcode: 0,
                            last: true,
                            stag: Stag::new(0, 7).unwrap().0,
                            to,
                            len: plen as u16,
                        },
                    },
                }
            })
            .collect();
        let (o, _b) = run(b, &segs, &mut rng, 100, 100);
        check(&segs, &o);
        let per_seg: Vec<usize> = o.first_beat.windows(2).map(|x| x[1] - x[0]).collect();
        let beats = 1442usize.div_ceil(8);
        // Second header beat taken one clock after the first.
        let latency: Vec<usize> = o
            .first_beat
            .iter()
            .zip(&o.dma_hdr_at)
            .map(|(f, h)| h - (f + 1))
            .collect();
        let chk_to_dma: Vec<usize> = o
            .chk_at
            .iter()
            .zip(&o.dma_hdr_at)
            .map(|(c, h)| h - c)
            .collect();
        eprintln!(
            "1442-octet tagged segment: {} beats, {:?} clocks per segment; \
             header complete -> DMA header beat {:?} clocks; TPT request -> \
             DMA header beat {:?} clocks",
            beats, per_seg, latency, chk_to_dma
        );
        // 8 octets per clock plus a fixed 8 clocks per segment: 2 header
        // beats are also payload beats, so 181 beats take 189 clocks.
        assert!(per_seg.iter().all(|&c| c == beats + 8), "{per_seg:?}");
        assert!(latency.iter().all(|&c| c == 7), "{latency:?}");
        assert!(chk_to_dma.iter().all(|&c| c == 6), "{chk_to_dma:?}");
    }
}

#[cfg(test)]
mod lint {
    use super::*;
    use crate::protection::tpt::{Tpt, PBL_INDEX_BITS, TPT_INDEX_BITS};

    /// Writes the post-processed Verilog of the blocks (as tops) to
    /// `target/rtl-lint/` for `verilator --lint-only -Wall`.
    #[test]
    #[ignore]
    fn write_verilog_for_lint() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/rtl-lint");
        std::fs::create_dir_all(&dir).unwrap();
        let mut rx = DdpRx::<PBL_INDEX_BITS>::default();
        rx.connect_all();
        let v = crate::gen::postprocess(&generate_verilog(&rx));
        std::fs::write(dir.join("ddp_rx.v"), v.replace("rnic_core", "ddp_rx")).unwrap();
        let mut t = Tpt::<TPT_INDEX_BITS, PBL_INDEX_BITS>::default();
        t.connect_all();
        let v = crate::gen::postprocess(&generate_verilog(&t));
        std::fs::write(dir.join("tpt.v"), v.replace("rnic_core", "tpt")).unwrap();
    }
}
