//! Receive-side Send and completions, composed: `recv_wqe` (receive WQE
//! fetch) + `send_place` (Send placement, checks, Terminates) + `cpl_write`
//! (CQEs, events) + a `dma_wr_arb` that merges the Send data and the
//! completion writes into one ordered DMA write stream. One DMA read client
//! (receive WQEs, tag 0x40) and one DMA write stream; the lead merges the
//! latter with `ddp_rx`'s tagged placement through another `DmaWrArb`.
//! Ports: the sub-blocks' (see their files), prefixed `rq_cfg_`/`rq_db_`
//! (recv_wqe `cfg_`/`db_`) and `cq_cfg_`/`cq_db_` (cpl_write `cfg_`/`db_`).

use crate::common::dma_wr_arb::DmaWrArb;
use crate::common::skid::Skid;
use crate::completion::cpl_write::CplWrite;
use crate::completion::recv_wqe::{wqe_buf_bits, RecvWqeFetchN};
use crate::completion::send_place::SendPlace;
use rust_hdl::prelude::*;

/// Width of one `ut_*` beat in the register slice in front of
/// `send_place`: data 0, keep 64, last 68, opcode 69, ddp_last 73, qn 74,
/// msn 76, mo 108, inv_stag 140, len 172, conn 188, qpn 220, pd 252 (LSB
/// positions).
pub const UT_W: usize = 284;

/// The co-simulation profile's block.
pub type RxSend = RxSendN<{ wqe_buf_bits(crate::profile::SIM.rq_prefetch_log2) }>;

/// `RA`: `recv_wqe`'s WQE buffer address bits (`wqe_buf_bits` of the
/// profile's `rq_prefetch_log2`).
#[derive(LogicBlock, Default)]
pub struct RxSendN<const RA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- untagged messages (ddp_rx ut_*)
    pub ut_data: Signal<In, Bits<64>>,
    pub ut_keep: Signal<In, Bits<4>>,
    pub ut_last: Signal<In, Bit>,
    pub ut_valid: Signal<In, Bit>,
    pub ut_opcode: Signal<In, Bits<4>>,
    pub ut_ddp_last: Signal<In, Bit>,
    pub ut_qn: Signal<In, Bits<2>>,
    pub ut_msn: Signal<In, Bits<32>>,
    pub ut_mo: Signal<In, Bits<32>>,
    pub ut_inv_stag: Signal<In, Bits<32>>,
    pub ut_len: Signal<In, Bits<16>>,
    pub ut_conn: Signal<In, Bits<32>>,
    pub ut_qpn: Signal<In, Bits<32>>,
    /// The QP's protection domain (ddp_rx `ut_pd`).
    pub ut_pd: Signal<In, Bits<32>>,
    pub ut_ready: Signal<Out, Bit>,
    // ---- TPT check client (send_place: receive SGE checks, translation)
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
    /// Sends refused by the local SGE check.
    pub cnt_prot: Signal<Out, Bits<32>>,
    /// The `chk_*` request is an invalidation (Send with Invalidate).
    pub chk_inv: Signal<Out, Bit>,
    /// A Send with Invalidate's last segment waits for its invalidation:
    /// no other TPT client may check meanwhile (`SendPlace::inv_hold`).
    pub inv_hold: Signal<Out, Bit>,
    /// STags invalidated / Invalidate STags refused.
    pub cnt_inv: Signal<Out, Bits<32>>,
    pub cnt_inv_err: Signal<Out, Bits<32>>,
    // ---- receive queues (recv_wqe cfg_*, db_*)
    pub rq_cfg_valid: Signal<In, Bit>,
    pub rq_cfg_qp: Signal<In, Bits<6>>,
    pub rq_cfg_base: Signal<In, Bits<64>>,
    pub rq_cfg_log2: Signal<In, Bits<5>>,
    pub rq_cfg_ci: Signal<In, Bits<32>>,
    pub rq_cfg_msn: Signal<In, Bits<32>>,
    pub rq_cfg_cq: Signal<In, Bits<4>>,
    pub rq_cfg_on: Signal<In, Bit>,
    pub rq_cfg_ready: Signal<Out, Bit>,
    pub rq_db_valid: Signal<In, Bit>,
    pub rq_db_qp: Signal<In, Bits<6>>,
    pub rq_db_prod: Signal<In, Bits<32>>,
    pub rq_db_ready: Signal<Out, Bit>,
    // ---- completion queues and event queue (cpl_write cfg_*, db_*, eq_*)
    pub cq_cfg_valid: Signal<In, Bit>,
    pub cq_cfg_cq: Signal<In, Bits<4>>,
    pub cq_cfg_state: Signal<In, Bits<2>>,
    pub cq_cfg_base: Signal<In, Bits<64>>,
    pub cq_cfg_log2: Signal<In, Bits<5>>,
    pub cq_cfg_prod: Signal<In, Bits<32>>,
    pub cq_cfg_cons: Signal<In, Bits<32>>,
    pub cq_cfg_ready: Signal<Out, Bit>,
    pub cq_db_valid: Signal<In, Bit>,
    pub cq_db_cq: Signal<In, Bits<4>>,
    pub cq_db_arm: Signal<In, Bit>,
    pub cq_db_value: Signal<In, Bits<32>>,
    pub cq_db_ready: Signal<Out, Bit>,
    pub eq_base: Signal<In, Bits<64>>,
    pub eq_entries: Signal<In, Bits<32>>,
    pub eq_cons: Signal<In, Bits<32>>,
    pub eq_prod: Signal<Out, Bits<32>>,
    // ---- DMA read (receive WQEs)
    pub dma_rd_req_ready: Signal<In, Bit>,
    pub dma_rd_cpl_valid: Signal<In, Bit>,
    pub dma_rd_cpl_data: Signal<In, Bits<64>>,
    pub dma_rd_cpl_keep: Signal<In, Bits<4>>,
    pub dma_rd_cpl_last: Signal<In, Bit>,
    pub dma_rd_cpl_tag: Signal<In, Bits<8>>,
    pub dma_rd_req_valid: Signal<Out, Bit>,
    pub dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub dma_rd_req_len: Signal<Out, Bits<16>>,
    pub dma_rd_req_tag: Signal<Out, Bits<8>>,
    pub dma_rd_cpl_ready: Signal<Out, Bit>,
    // ---- DMA write (Send data, CQEs, events, in order)
    pub dma_wr_ready: Signal<In, Bit>,
    pub dma_wr_valid: Signal<Out, Bit>,
    pub dma_wr_hdr: Signal<Out, Bit>,
    pub dma_wr_len: Signal<Out, Bits<16>>,
    pub dma_wr_data: Signal<Out, Bits<64>>,
    pub dma_wr_keep: Signal<Out, Bits<4>>,
    pub dma_wr_last: Signal<Out, Bit>,
    // ---- Terminate requests, incoming Terminates, QP errors
    pub term_ready: Signal<In, Bit>,
    pub term_valid: Signal<Out, Bit>,
    pub term_cause: Signal<Out, Bits<16>>,
    pub term_hdr: Signal<Out, Bits<384>>,
    pub term_seg_len: Signal<Out, Bits<16>>,
    pub term_conn: Signal<Out, Bits<32>>,
    pub term_qpn: Signal<Out, Bits<32>>,
    pub rterm_ready: Signal<In, Bit>,
    pub rterm_valid: Signal<Out, Bit>,
    pub rterm_conn: Signal<Out, Bits<32>>,
    pub rterm_qpn: Signal<Out, Bits<32>>,
    pub rterm_len: Signal<Out, Bits<16>>,
    pub rterm_data: Signal<Out, Bits<64>>,
    pub qp_err_valid: Signal<Out, Bit>,
    pub qp_err_qpn: Signal<Out, Bits<32>>,
    pub qp_err_conn: Signal<Out, Bits<32>>,
    // ---- interrupts, counters
    pub irq_event: Signal<Out, Bit>,
    pub irq_eq_overflow: Signal<Out, Bit>,
    pub cnt_send: Signal<Out, Bits<32>>,
    pub cnt_term_tx: Signal<Out, Bits<32>>,
    pub cnt_term_rx: Signal<Out, Bits<32>>,
    pub cnt_drop_qp: Signal<Out, Bits<32>>,
    pub cnt_rreq: Signal<Out, Bits<32>>,
    pub cnt_fetch: Signal<Out, Bits<32>>,
    pub cnt_bad_wqe: Signal<Out, Bits<32>>,
    pub cnt_cqe: Signal<Out, Bits<32>>,
    pub cnt_event: Signal<Out, Bits<32>>,
    pub cnt_cpl_drop: Signal<Out, Bits<32>>,
    pub cnt_cq_overflow: Signal<Out, Bits<32>>,
    pub cnt_eq_overflow: Signal<Out, Bits<32>>,
    pub cnt_db_bad: Signal<Out, Bits<32>>,
    // ---- send-side completion records (cpl_write cp2_*), firmware events
    // (cpl_write fev_*), CqContext.armed (cpl_write cfg_armed)
    pub cp2_valid: Signal<In, Bit>,
    pub cp2_ready: Signal<Out, Bit>,
    pub cp2_cq: Signal<In, Bits<4>>,
    pub cp2_wr_id: Signal<In, Bits<64>>,
    pub cp2_byte_len: Signal<In, Bits<32>>,
    pub cp2_qpn: Signal<In, Bits<32>>,
    pub cp2_opcode: Signal<In, Bits<8>>,
    pub cp2_status: Signal<In, Bits<8>>,
    pub fev_valid: Signal<In, Bit>,
    pub fev_ready: Signal<Out, Bit>,
    pub fev_data: Signal<In, Bits<512>>,
    pub cq_cfg_armed: Signal<In, Bits<2>>,
    /// A CQ overran (cpl_write `ovf_*`, for the firmware).
    pub cq_ovf_valid: Signal<Out, Bit>,
    pub cq_ovf_ready: Signal<In, Bit>,
    pub cq_ovf_cq: Signal<Out, Bits<4>>,
    ut_in: Signal<Local, Bits<UT_W>>,
    sk: Skid<Bits<UT_W>>,
    rw: RecvWqeFetchN<RA>,
    sp: SendPlace,
    cw: CplWrite,
    arb: DmaWrArb,
}

impl<const RA: usize> Logic for RxSendN<RA> {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, sk, rw, sp, cw, arb);
        self.rw.req_valid.next = self.sp.req_valid.val();
        self.rw.req_qp.next = self.sp.req_qp.val();
        self.sp.req_ready.next = self.rw.req_ready.val();
        self.sp.rsp_valid.next = self.rw.rsp_valid.val();
        self.sp.rsp_status.next = self.rw.rsp_status.val();
        self.sp.rsp_msn.next = self.rw.rsp_msn.val();
        self.sp.rsp_cq.next = self.rw.rsp_cq.val();
        self.sp.rsp_wr_id.next = self.rw.rsp_wr_id.val();
        self.sp.rsp_nsge.next = self.rw.rsp_nsge.val();
        self.sp.rsp_total.next = self.rw.rsp_total.val();
        self.rw.rsp_sel.next = self.sp.rsp_sel.val();
        self.sp.rsp_sge_addr.next = self.rw.rsp_sge_addr.val();
        self.sp.rsp_sge_len.next = self.rw.rsp_sge_len.val();
        self.sp.rsp_sge_lkey.next = self.rw.rsp_sge_lkey.val();
        self.chk_valid.next = self.sp.chk_valid.val();
        self.sp.chk_ready.next = self.chk_ready.val();
        self.chk_stag.next = self.sp.chk_stag.val();
        self.chk_pd.next = self.sp.chk_pd.val();
        self.chk_need.next = self.sp.chk_need.val();
        self.chk_to.next = self.sp.chk_to.val();
        self.chk_len.next = self.sp.chk_len.val();
        self.sp.res_valid.next = self.res_valid.val();
        self.res_ready.next = self.sp.res_ready.val();
        self.sp.res_fault.next = self.res_fault.val();
        self.sp.res_addr.next = self.res_addr.val();
        self.sp.res_page_left.next = self.res_page_left.val();
        self.cnt_prot.next = self.sp.cnt_prot.val();
        self.chk_inv.next = self.sp.chk_inv.val();
        self.inv_hold.next = self.sp.inv_hold.val();
        self.cnt_inv.next = self.sp.cnt_inv.val();
        self.cnt_inv_err.next = self.sp.cnt_inv_err.val();
        self.rw.rsp_ready.next = self.sp.rsp_ready.val();
        self.rw.adv_valid.next = self.sp.adv_valid.val();
        self.rw.adv_qp.next = self.sp.adv_qp.val();
        self.rw.adv_err.next = self.sp.adv_err.val();
        self.sp.adv_ready.next = self.rw.adv_ready.val();
        self.arb.a_valid.next = self.sp.dma_wr_valid.val();
        self.arb.b_valid.next = self.cw.dma_wr_valid.val();
        self.arb.a_hdr.next = self.sp.dma_wr_hdr.val();
        self.arb.b_hdr.next = self.cw.dma_wr_hdr.val();
        self.arb.a_len.next = self.sp.dma_wr_len.val();
        self.arb.b_len.next = self.cw.dma_wr_len.val();
        self.arb.a_data.next = self.sp.dma_wr_data.val();
        self.arb.b_data.next = self.cw.dma_wr_data.val();
        self.arb.a_keep.next = self.sp.dma_wr_keep.val();
        self.arb.b_keep.next = self.cw.dma_wr_keep.val();
        self.arb.a_last.next = self.sp.dma_wr_last.val();
        self.arb.b_last.next = self.cw.dma_wr_last.val();
        self.sp.dma_wr_ready.next = self.arb.a_ready.val();
        self.cw.dma_wr_ready.next = self.arb.b_ready.val();
        self.cw.cpl_valid.next = self.sp.cpl_valid.val();
        self.cw.cpl_cq.next = self.sp.cpl_cq.val();
        self.cw.cpl_wr_id.next = self.sp.cpl_wr_id.val();
        self.cw.cpl_byte_len.next = self.sp.cpl_byte_len.val();
        self.cw.cpl_qpn.next = self.sp.cpl_qpn.val();
        self.cw.cpl_opcode.next = self.sp.cpl_opcode.val();
        self.cw.cpl_status.next = self.sp.cpl_status.val();
        self.cw.cpl_flags.next = self.sp.cpl_flags.val();
        self.cw.cpl_imm.next = self.sp.cpl_imm.val();
        self.cw.cpl_term.next = self.sp.cpl_term.val();
        self.sp.cpl_ready.next = self.cw.cpl_ready.val();
        self.rw.reset.next = self.reset.val();
        self.sp.reset.next = self.reset.val();
        self.cw.reset.next = self.reset.val();
        self.arb.reset.next = self.reset.val();
        // ut_* through the register slice (timing: cuts fpdu_buffer/ddp_rx
        // -> send_place in both directions; +1 clock, full rate).
        self.sk.reset.next = self.reset.val();
        self.sk.in_valid.next = self.ut_valid.val();
        self.ut_in.next = bit_cast::<284, 64>(self.ut_data.val())
            | (bit_cast::<284, 4>(self.ut_keep.val()) << 64)
            | (bit_cast::<284, 4>(self.ut_opcode.val()) << 69)
            | (bit_cast::<284, 2>(self.ut_qn.val()) << 74)
            | (bit_cast::<284, 32>(self.ut_msn.val()) << 76)
            | (bit_cast::<284, 32>(self.ut_mo.val()) << 108)
            | (bit_cast::<284, 32>(self.ut_inv_stag.val()) << 140)
            | (bit_cast::<284, 16>(self.ut_len.val()) << 172)
            | (bit_cast::<284, 32>(self.ut_conn.val()) << 188)
            | (bit_cast::<284, 32>(self.ut_qpn.val()) << 220)
            | (bit_cast::<284, 32>(self.ut_pd.val()) << 252);
        self.ut_in.next = self.ut_in.val().replace_bit(68, self.ut_last.val());
        self.ut_in.next = self.ut_in.val().replace_bit(73, self.ut_ddp_last.val());
        self.sk.in_data.next = self.ut_in.val();
        self.ut_ready.next = self.sk.in_ready.val();
        self.sp.ut_valid.next = self.sk.out_valid.val();
        self.sp.ut_data.next = self.sk.out_data.val().get_bits::<64>(0);
        self.sp.ut_keep.next = self.sk.out_data.val().get_bits::<4>(64);
        self.sp.ut_last.next = self.sk.out_data.val().get_bit(68);
        self.sp.ut_opcode.next = self.sk.out_data.val().get_bits::<4>(69);
        self.sp.ut_ddp_last.next = self.sk.out_data.val().get_bit(73);
        self.sp.ut_qn.next = self.sk.out_data.val().get_bits::<2>(74);
        self.sp.ut_msn.next = self.sk.out_data.val().get_bits::<32>(76);
        self.sp.ut_mo.next = self.sk.out_data.val().get_bits::<32>(108);
        self.sp.ut_inv_stag.next = self.sk.out_data.val().get_bits::<32>(140);
        self.sp.ut_len.next = self.sk.out_data.val().get_bits::<16>(172);
        self.sp.ut_conn.next = self.sk.out_data.val().get_bits::<32>(188);
        self.sp.ut_qpn.next = self.sk.out_data.val().get_bits::<32>(220);
        self.sp.ut_pd.next = self.sk.out_data.val().get_bits::<32>(252);
        self.sk.out_ready.next = self.sp.ut_ready.val();
        self.rw.cfg_valid.next = self.rq_cfg_valid.val();
        self.rw.cfg_qp.next = self.rq_cfg_qp.val();
        self.rw.cfg_base.next = self.rq_cfg_base.val();
        self.rw.cfg_log2.next = self.rq_cfg_log2.val();
        self.rw.cfg_ci.next = self.rq_cfg_ci.val();
        self.rw.cfg_msn.next = self.rq_cfg_msn.val();
        self.rw.cfg_cq.next = self.rq_cfg_cq.val();
        self.rw.cfg_on.next = self.rq_cfg_on.val();
        self.rq_cfg_ready.next = self.rw.cfg_ready.val();
        self.rw.db_valid.next = self.rq_db_valid.val();
        self.rw.db_qp.next = self.rq_db_qp.val();
        self.rw.db_prod.next = self.rq_db_prod.val();
        self.rq_db_ready.next = self.rw.db_ready.val();
        self.cw.cfg_valid.next = self.cq_cfg_valid.val();
        self.cw.cfg_cq.next = self.cq_cfg_cq.val();
        self.cw.cfg_state.next = self.cq_cfg_state.val();
        self.cw.cfg_base.next = self.cq_cfg_base.val();
        self.cw.cfg_log2.next = self.cq_cfg_log2.val();
        self.cw.cfg_prod.next = self.cq_cfg_prod.val();
        self.cw.cfg_cons.next = self.cq_cfg_cons.val();
        self.cq_cfg_ready.next = self.cw.cfg_ready.val();
        self.cw.db_valid.next = self.cq_db_valid.val();
        self.cw.db_cq.next = self.cq_db_cq.val();
        self.cw.db_arm.next = self.cq_db_arm.val();
        self.cw.db_value.next = self.cq_db_value.val();
        self.cq_db_ready.next = self.cw.db_ready.val();
        self.cw.eq_base.next = self.eq_base.val();
        self.cw.eq_entries.next = self.eq_entries.val();
        self.cw.eq_cons.next = self.eq_cons.val();
        self.eq_prod.next = self.cw.eq_prod.val();
        self.rw.dma_rd_req_ready.next = self.dma_rd_req_ready.val();
        self.rw.dma_rd_cpl_valid.next = self.dma_rd_cpl_valid.val();
        self.rw.dma_rd_cpl_data.next = self.dma_rd_cpl_data.val();
        self.rw.dma_rd_cpl_keep.next = self.dma_rd_cpl_keep.val();
        self.rw.dma_rd_cpl_last.next = self.dma_rd_cpl_last.val();
        self.rw.dma_rd_cpl_tag.next = self.dma_rd_cpl_tag.val();
        self.dma_rd_req_valid.next = self.rw.dma_rd_req_valid.val();
        self.dma_rd_req_addr.next = self.rw.dma_rd_req_addr.val();
        self.dma_rd_req_len.next = self.rw.dma_rd_req_len.val();
        self.dma_rd_req_tag.next = self.rw.dma_rd_req_tag.val();
        self.dma_rd_cpl_ready.next = self.rw.dma_rd_cpl_ready.val();
        self.arb.dma_wr_ready.next = self.dma_wr_ready.val();
        self.dma_wr_valid.next = self.arb.dma_wr_valid.val();
        self.dma_wr_hdr.next = self.arb.dma_wr_hdr.val();
        self.dma_wr_len.next = self.arb.dma_wr_len.val();
        self.dma_wr_data.next = self.arb.dma_wr_data.val();
        self.dma_wr_keep.next = self.arb.dma_wr_keep.val();
        self.dma_wr_last.next = self.arb.dma_wr_last.val();
        self.sp.term_ready.next = self.term_ready.val();
        self.term_valid.next = self.sp.term_valid.val();
        self.term_cause.next = self.sp.term_cause.val();
        self.term_hdr.next = self.sp.term_hdr.val();
        self.term_seg_len.next = self.sp.term_seg_len.val();
        self.term_conn.next = self.sp.term_conn.val();
        self.term_qpn.next = self.sp.term_qpn.val();
        self.sp.rterm_ready.next = self.rterm_ready.val();
        self.rterm_valid.next = self.sp.rterm_valid.val();
        self.rterm_conn.next = self.sp.rterm_conn.val();
        self.rterm_qpn.next = self.sp.rterm_qpn.val();
        self.rterm_len.next = self.sp.rterm_len.val();
        self.rterm_data.next = self.sp.rterm_data.val();
        self.qp_err_valid.next = self.sp.qp_err_valid.val();
        self.qp_err_qpn.next = self.sp.qp_err_qpn.val();
        self.qp_err_conn.next = self.sp.qp_err_conn.val();
        self.irq_event.next = self.cw.irq_event.val();
        self.irq_eq_overflow.next = self.cw.irq_eq_overflow.val();
        self.cnt_send.next = self.sp.cnt_send.val();
        self.cnt_term_tx.next = self.sp.cnt_term_tx.val();
        self.cnt_term_rx.next = self.sp.cnt_term_rx.val();
        self.cnt_drop_qp.next = self.sp.cnt_drop_qp.val();
        self.cnt_rreq.next = self.sp.cnt_rreq.val();
        self.cnt_fetch.next = self.rw.cnt_fetch.val();
        self.cnt_bad_wqe.next = self.rw.cnt_bad_wqe.val();
        self.cnt_cqe.next = self.cw.cnt_cqe.val();
        self.cnt_event.next = self.cw.cnt_event.val();
        self.cnt_cpl_drop.next = self.cw.cnt_cpl_drop.val();
        self.cnt_cq_overflow.next = self.cw.cnt_cq_overflow.val();
        self.cnt_eq_overflow.next = self.cw.cnt_eq_overflow.val();
        self.cnt_db_bad.next = self.cw.cnt_db_bad.val();
        self.cw.cp2_valid.next = self.cp2_valid.val();
        self.cp2_ready.next = self.cw.cp2_ready.val();
        self.cw.cp2_cq.next = self.cp2_cq.val();
        self.cw.cp2_wr_id.next = self.cp2_wr_id.val();
        self.cw.cp2_byte_len.next = self.cp2_byte_len.val();
        self.cw.cp2_qpn.next = self.cp2_qpn.val();
        self.cw.cp2_opcode.next = self.cp2_opcode.val();
        self.cw.cp2_status.next = self.cp2_status.val();
        self.cw.fev_valid.next = self.fev_valid.val();
        self.fev_ready.next = self.cw.fev_ready.val();
        self.cw.fev_data.next = self.fev_data.val();
        self.cw.cfg_armed.next = self.cq_cfg_armed.val();
        self.cq_ovf_valid.next = self.cw.ovf_valid.val();
        self.cq_ovf_cq.next = self.cw.ovf_cq.val();
        self.cw.ovf_ready.next = self.cq_ovf_ready.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{beats, tick, Rng};
    use crate::completion::cpl_write::tests::DmaWrSink;
    use crate::completion::recv_wqe::tests::DmaRdServer;
    use rnic_wire::abi::context::CqState;
    use rnic_wire::abi::cqe::{
        decode_term_cause, Cqe, WcOpcode, WcStatus, CQE_FLAG_SOLICITED, CQE_FLAG_WITH_INV,
    };
    use rnic_wire::abi::doorbell::CqArm;
    use rnic_wire::abi::mailbox::{Event, EventKind};
    use rnic_wire::abi::tpt::{
        Stag, TptEntry, TptFault, TptState, ACCESS_ALL, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE,
    };
    use rnic_wire::abi::wqe::{RecvWqe, Sge, SgeList, WQE_SIZE};
    use rnic_wire::ddp::UNTAGGED_HEADER_LEN;
    use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};
    use rnic_wire::terminate::{
        DdpError, RemoteOperationError, RemoteProtectionError, TerminateCause, TerminateRepr,
        UntaggedBufferError,
    };
    use std::collections::{HashMap, VecDeque};

    const CQ: u64 = 2;
    /// The protection domain of every QP in these tests.
    const PD: u32 = 0x77;
    /// lkey of an identity region (TPT index 1): va 0, 4 GiB in 1 GiB pages
    /// whose bus addresses equal their virtual ones.
    const IDENT: u32 = 0x111;

    /// The TPT as `rnic_wire::abi::tpt` defines it (the reference the
    /// `Tpt` block is tested against): a check request → (fault code,
    /// bus address of `to`, octets left in its page).
    #[derive(Default)]
    struct TptModel {
        entries: HashMap<u32, TptEntry>,
        pbl: Vec<u64>,
    }

    impl TptModel {
        fn check(&self, stag: u32, pd: u32, need: u8, to: u64, len: u64) -> (u64, u64, u64) {
            let code = |f: TptFault| match f {
                TptFault::InvalidStag => 1,
                TptFault::WrongPd => 2,
                TptFault::AccessRights => 3,
                TptFault::Bounds => 4,
                TptFault::OffsetWrap => 5,
            };
            let st = Stag(stag);
            let Some(e) = self.entries.get(&st.index()) else {
                return (1, 0, 0);
            };
            if let Err(f) = e.check(st, pd, need, to, len) {
                return (code(f), 0, 0);
            }
            if len == 0 {
                return (0, 0, 0);
            }
            let inside = |va: u64| {
                e.page_of(va)
                    .filter(|&(i, _)| (i as usize) < self.pbl.len())
            };
            match (inside(to), inside(to + len - 1)) {
                (Some((i, off)), Some(_)) => {
                    (0, self.pbl[i as usize] + off, (1u64 << e.page_shift) - off)
                }
                _ => (4, 0, 0),
            }
        }

        /// Bus address of every octet of `[va, va + len)` (a checked range).
        fn bus(&self, stag: u32, va: u64, len: u64) -> Vec<u64> {
            let e = self.entries[&Stag(stag).index()];
            (va..va + len)
                .map(|a| {
                    let (i, off) = e.page_of(a).unwrap();
                    self.pbl[i as usize] + off
                })
                .collect()
        }
    }
    const CQ_BASE: u64 = 0x3000_0000;
    const EQ_BASE: u64 = 0x5000_0000;

    fn ring(qp: u64) -> u64 {
        0x1000_0000 + qp * 0x1000
    }

    /// One ut_* beat: (data, keep, last, opcode, ddp_last, qn, msn, mo, inv, len, qpn)
    type UtBeat = (u64, u64, bool, u64, bool, u64, u64, u64, u64, u64, u64);

    /// The ut_* beats `ddp_rx` emits for this message segment: the octets
    /// after the untagged DDP header, header fields on every beat.
    fn ut_beats(r: &RdmapRepr, qpn: u64) -> Vec<UtBeat> {
        let mut b = vec![0; r.buffer_len()];
        r.emit(&mut b).unwrap();
        let h = &b[..UNTAGGED_HEADER_LEN];
        let be = |o: usize| u32::from_be_bytes(h[o..o + 4].try_into().unwrap()) as u64;
        let pay = &b[UNTAGGED_HEADER_LEN..];
        beats(pay)
            .into_iter()
            .enumerate()
            .map(|(i, (d, k))| {
                (
                    d,
                    k as u64,
                    8 * (i + 1) >= pay.len(),
                    (h[1] & 0xf) as u64,
                    h[0] & 0x40 != 0,
                    be(6),
                    be(10),
                    be(14),
                    be(2),
                    pay.len() as u64,
                    qpn,
                )
            })
            .collect()
    }

    fn hdr_of(r: &RdmapRepr) -> Vec<u8> {
        let mut b = vec![0; r.buffer_len()];
        r.emit(&mut b).unwrap();
        b.truncate(UNTAGGED_HEADER_LEN);
        b
    }

    struct Tb {
        u: RxSend,
        rd: DmaRdServer,
        wr: DmaWrSink,
        rng: Rng,
        ut: VecDeque<UtBeat>,
        terms: Vec<(u16, Vec<u8>, u16, u32)>,
        rterms: Vec<(u32, u64, u16)>,
        qp_errs: Vec<u32>,
        irqs: usize,
        cycles: u64,
        last_wr: u64,
        tpt: TptModel,
        /// A check result waiting: (ready at cycle, fault, addr, page_left).
        chk: Option<(u64, u64, u64, u64)>,
        n_chk: usize,
        n_inv: usize,
        /// Every input offered and every output taken each clock, the TPT
        /// answering after its own latency (4 clocks): throughput tests.
        full_rate: bool,
        /// Clocks in which a `ut_*` beat was offered and not taken.
        ut_stalls: u64,
        /// The clock each segment's first beat was taken, and whether the
        /// next beat taken is inside a segment.
        seg_start: Vec<u64>,
        in_seg: bool,
    }

    impl Tb {
        fn new(seed: u64) -> Tb {
            let mut u = RxSend::default();
            u.clock.connect();
            u.reset.connect();
            for s in [
                &mut u.ut_last,
                &mut u.ut_valid,
                &mut u.ut_ddp_last,
                &mut u.rq_cfg_valid,
                &mut u.rq_cfg_on,
                &mut u.rq_db_valid,
                &mut u.cq_cfg_valid,
                &mut u.cq_db_valid,
                &mut u.cq_db_arm,
                &mut u.dma_rd_req_ready,
                &mut u.dma_rd_cpl_valid,
                &mut u.dma_rd_cpl_last,
                &mut u.dma_wr_ready,
                &mut u.term_ready,
                &mut u.rterm_ready,
            ] {
                s.connect();
            }
            u.ut_data.connect();
            u.ut_keep.connect();
            u.ut_opcode.connect();
            u.ut_qn.connect();
            u.ut_msn.connect();
            u.ut_mo.connect();
            u.ut_inv_stag.connect();
            u.ut_len.connect();
            u.ut_conn.connect();
            u.ut_qpn.connect();
            u.rq_cfg_qp.connect();
            u.rq_cfg_base.connect();
            u.rq_cfg_log2.connect();
            u.rq_cfg_ci.connect();
            u.rq_cfg_msn.connect();
            u.rq_cfg_cq.connect();
            u.rq_db_qp.connect();
            u.rq_db_prod.connect();
            u.cq_cfg_cq.connect();
            u.cq_cfg_state.connect();
            u.cq_cfg_base.connect();
            u.cq_cfg_log2.connect();
            u.cq_cfg_prod.connect();
            u.cq_cfg_cons.connect();
            u.cq_db_cq.connect();
            u.cq_db_value.connect();
            u.eq_base.connect();
            u.eq_entries.connect();
            u.eq_cons.connect();
            u.dma_rd_cpl_data.connect();
            u.dma_rd_cpl_keep.connect();
            u.dma_rd_cpl_tag.connect();
            u.cp2_valid.connect();
            u.cp2_cq.connect();
            u.cp2_wr_id.connect();
            u.cp2_byte_len.connect();
            u.cp2_qpn.connect();
            u.cp2_opcode.connect();
            u.cp2_status.connect();
            u.fev_valid.connect();
            u.fev_data.connect();
            u.cq_cfg_armed.connect();
            u.cq_ovf_ready.connect();
            u.ut_pd.connect();
            u.chk_ready.connect();
            u.res_valid.connect();
            u.res_fault.connect();
            u.res_addr.connect();
            u.res_page_left.connect();
            u.connect_all();
            u.reset.next = true;
            tick!(u);
            tick!(u);
            u.reset.next = false;
            u.eq_base.next = EQ_BASE.into();
            u.eq_entries.next = 8.into();
            u.eq_cons.next = 0.into();
            let mut tb = Tb {
                u,
                rd: DmaRdServer::default(),
                wr: DmaWrSink::default(),
                rng: Rng::new(seed),
                ut: VecDeque::new(),
                terms: vec![],
                rterms: vec![],
                qp_errs: vec![],
                irqs: 0,
                cycles: 0,
                last_wr: 0,
                tpt: TptModel::default(),
                chk: None,
                n_chk: 0,
                n_inv: 0,
                full_rate: false,
                ut_stalls: 0,
                seg_start: vec![],
                in_seg: false,
            };
            tb.tpt.pbl = (0..4).map(|i| i << 30).collect();
            tb.tpt.entries.insert(
                Stag(IDENT).index(),
                TptEntry {
                    state: TptState::Valid,
                    key: Stag(IDENT).key(),
                    access: ACCESS_ALL,
                    page_shift: 30,
                    pd: PD,
                    va: 0,
                    length: 4 << 30,
                    pbl_base: 0,
                    npages: 4,
                },
            );
            // CQ 2: 8 entries, armed for the next completion.
            tb.u.cq_cfg_valid.next = true;
            tb.u.cq_cfg_cq.next = CQ.into();
            tb.u.cq_cfg_state.next = (CqState::Valid as u64).into();
            tb.u.cq_cfg_base.next = CQ_BASE.into();
            tb.u.cq_cfg_log2.next = 3.into();
            tb.u.cq_cfg_prod.next = 0.into();
            tb.u.cq_cfg_cons.next = 0.into();
            tb.until(|u| u.cq_cfg_ready.val());
            tb.u.cq_db_valid.next = true;
            tb.u.cq_db_cq.next = CQ.into();
            tb.u.cq_db_arm.next = true;
            tb.u.cq_db_value.next = (CqArm::NextCompletion as u64).into();
            tb.until(|u| u.cq_db_ready.val());
            tb
        }

        /// Configures a QP's receive queue (8 WQEs, MSN 1, CQ 2) and posts
        /// `wqes` (raw 128-octet images).
        fn qp(&mut self, qp: u64, wqes: &[[u8; WQE_SIZE]]) {
            self.u.rq_cfg_valid.next = true;
            self.u.rq_cfg_qp.next = qp.into();
            self.u.rq_cfg_base.next = ring(qp).into();
            self.u.rq_cfg_log2.next = 3.into();
            self.u.rq_cfg_ci.next = 0.into();
            self.u.rq_cfg_msn.next = 1.into();
            self.u.rq_cfg_cq.next = CQ.into();
            self.u.rq_cfg_on.next = true;
            self.until(|u| u.rq_cfg_ready.val());
            for (i, w) in wqes.iter().enumerate() {
                self.rd.write(ring(qp) + (WQE_SIZE * i) as u64, w);
            }
            self.u.rq_db_valid.next = true;
            self.u.rq_db_qp.next = qp.into();
            self.u.rq_db_prod.next = (wqes.len() as u64).into();
            self.until(|u| u.rq_db_ready.val());
        }

        /// Clocks until `taken` is true in a clock (then drops every
        /// request valid the test drives).
        fn until(&mut self, taken: impl Fn(&RxSend) -> bool) {
            for _ in 0..100 {
                assert!(simulate(&mut self.u, 1000));
                let t = taken(&self.u);
                self.clock();
                if t {
                    self.u.rq_cfg_valid.next = false;
                    self.u.rq_db_valid.next = false;
                    self.u.cq_cfg_valid.next = false;
                    self.u.cq_db_valid.next = false;
                    return;
                }
            }
            panic!("not taken");
        }

        fn clock(&mut self) {
            let rng = &mut self.rng;
            let u = &mut self.u;
            let fr = self.full_rate;
            let present = !self.ut.is_empty() && (fr || rng.below(100) < 80);
            u.ut_valid.next = present;
            if let Some(&(d, k, l, op, dl, qn, msn, mo, inv, len, qpn)) = self.ut.front() {
                u.ut_data.next = (d | if k < 8 { u64::MAX << (8 * k) } else { 0 }).into();
                u.ut_keep.next = k.into();
                u.ut_last.next = l;
                u.ut_opcode.next = op.into();
                u.ut_ddp_last.next = dl;
                u.ut_qn.next = qn.into();
                u.ut_msn.next = msn.into();
                u.ut_mo.next = mo.into();
                u.ut_inv_stag.next = inv.into();
                u.ut_len.next = len.into();
                u.ut_conn.next = (qpn + 100).into();
                u.ut_qpn.next = qpn.into();
                u.ut_pd.next = (PD as u64).into();
            }
            // The TPT: one request at a time, answered 4..8 clocks later.
            u.chk_ready.next = self.chk.is_none();
            let res = self.chk.filter(|c| c.0 <= self.cycles);
            u.res_valid.next = res.is_some();
            if let Some((_, f, a, l)) = res {
                u.res_fault.next = f.into();
                u.res_addr.next = a.into();
                u.res_page_left.next = l.into();
            }
            let rr = fr || rng.below(100) < 70;
            u.dma_rd_req_ready.next = rr;
            let o = self.rd.offer().filter(|_| fr || rng.below(100) < 80);
            u.dma_rd_cpl_valid.next = o.is_some();
            if let Some((d, k, l, t)) = o {
                u.dma_rd_cpl_data.next = d.into();
                u.dma_rd_cpl_keep.next = k.into();
                u.dma_rd_cpl_last.next = l;
                u.dma_rd_cpl_tag.next = (t as u64).into();
            }
            let wr = fr || rng.below(100) < 75;
            u.dma_wr_ready.next = wr;
            let tr = rng.below(100) < 60;
            u.term_ready.next = tr;
            u.rterm_ready.next = tr;
            assert!(simulate(u, 1000));
            if present && u.ut_ready.val() {
                let b = self.ut.pop_front().unwrap();
                if !self.in_seg {
                    self.seg_start.push(self.cycles);
                }
                self.in_seg = !b.2;
            } else if present {
                self.ut_stalls += 1;
            }
            if res.is_some() && u.res_ready.val() {
                self.chk = None;
            } else if self.chk.is_none() && u.chk_valid.val() {
                let (f, a, l) = self.tpt.check(
                    u.chk_stag.val().to_u64() as u32,
                    u.chk_pd.val().to_u64() as u32,
                    u.chk_need.val().to_u64() as u8,
                    u.chk_to.val().to_u64(),
                    u.chk_len.val().to_u64(),
                );
                if u.chk_inv.val() {
                    // An invalidation: STag and PD only (Tpt::chk_inv).
                    assert_eq!(u.chk_need.val().to_u64(), 0);
                    assert_eq!(u.chk_len.val().to_u64(), 0);
                    assert!(u.inv_hold.val());
                    if f == 0 {
                        let idx = Stag(u.chk_stag.val().to_u64() as u32).index();
                        self.tpt.entries.get_mut(&idx).unwrap().state = TptState::Invalid;
                    }
                    self.n_inv += 1;
                } else {
                    assert_eq!(u.chk_need.val().to_u64(), ACCESS_LOCAL_WRITE as u64);
                }
                let lat = if fr { 4 } else { 4 + rng.below(5) as u64 };
                self.chk = Some((self.cycles + lat, f, a, l));
                self.n_chk += 1;
            }
            if u.dma_rd_req_valid.val() && rr {
                self.rd.request(
                    u.dma_rd_req_addr.val().to_u64(),
                    u.dma_rd_req_len.val().to_u64() as usize,
                    u.dma_rd_req_tag.val().to_u64() as u8,
                    rng,
                );
            }
            if o.is_some() && u.dma_rd_cpl_ready.val() {
                self.rd.taken();
            }
            if u.dma_wr_valid.val() && wr {
                self.last_wr = self.cycles;
                self.wr.beat(
                    u.dma_wr_hdr.val(),
                    u.dma_wr_len.val().to_u64(),
                    u.dma_wr_data.val().to_u64(),
                    u.dma_wr_keep.val().to_u64(),
                    u.dma_wr_last.val(),
                );
            }
            if u.term_valid.val() && tr {
                let h = u.term_hdr.val();
                let hdr = (0..48)
                    .map(|i| h.get_bits::<8>(8 * i).to_u64() as u8)
                    .collect();
                self.terms.push((
                    u.term_cause.val().to_u64() as u16,
                    hdr,
                    u.term_seg_len.val().to_u64() as u16,
                    u.term_qpn.val().to_u64() as u32,
                ));
                assert_eq!(u.term_conn.val().to_u64(), u.term_qpn.val().to_u64() + 100);
            }
            if u.rterm_valid.val() && tr {
                self.rterms.push((
                    u.rterm_qpn.val().to_u64() as u32,
                    u.rterm_data.val().to_u64(),
                    u.rterm_len.val().to_u64() as u16,
                ));
            }
            if u.qp_err_valid.val() {
                self.qp_errs.push(u.qp_err_qpn.val().to_u64() as u32);
            }
            self.irqs += u.irq_event.val() as usize;
            tick!(*u);
            self.rd.now += 1;
            self.cycles += 1;
        }

        fn send(&mut self, r: &RdmapRepr, qpn: u64) {
            self.ut.extend(ut_beats(r, qpn));
        }

        /// One Send message (MSN `msn`, no SE, no Invalidate) in segments
        /// of at most `seg` octets; returns how many.
        fn send_message(&mut self, qpn: u64, msn: u32, data: &[u8], seg: usize) -> usize {
            let pieces = data.chunks(seg);
            let n = pieces.len();
            for (i, piece) in pieces.enumerate() {
                let mo = i * seg;
                self.send(
                    &RdmapRepr::Send {
                        solicited: false,
                        invalidate_stag: None,
                        last: mo + piece.len() == data.len(),
                        msn,
                        mo: mo as u32,
                        payload: piece,
                    },
                    qpn,
                );
            }
            n
        }

        fn run(&mut self, n: usize) {
            for _ in 0..n {
                self.clock();
            }
            assert!(self.ut.is_empty(), "ut stream not drained");
            assert!(self.wr.idle());
        }
    }

    fn wqe(wr_id: u64, sges: &[Sge]) -> [u8; WQE_SIZE] {
        let mut b = [0u8; WQE_SIZE];
        RecvWqe {
            wr_id,
            sges: SgeList::new(sges).unwrap(),
        }
        .emit(&mut b)
        .unwrap();
        b
    }

    fn cqe(tb: &Tb, slot: u64) -> Cqe {
        Cqe::parse(&tb.wr.read(CQ_BASE + 32 * slot, 32)).expect("CQE parses")
    }

    #[test]
    fn send_into_posted_two_sge_wqe() {
        let mut tb = Tb::new(1);
        let mut rng = Rng::new(2);
        // WQE 0: SGE 0 crosses a 4 KiB boundary, SGE 1 unaligned.
        let s0 = Sge {
            addr: 0x7000_0FF0,
            length: 100,
            lkey: IDENT,
        };
        let s1 = Sge {
            addr: 0x8000_0003,
            length: 500,
            lkey: IDENT,
        };
        let s2 = Sge {
            addr: 0x9000_0101,
            length: 400,
            lkey: IDENT,
        };
        tb.qp(3, &[wqe(0xAAAA, &[s0, s1]), wqe(0xBBBB, &[s2])]);
        let p1 = rng.bytes(300);
        let t0 = tb.cycles;
        tb.send(
            &RdmapRepr::Send {
                solicited: true,
                invalidate_stag: None,
                last: true,
                msn: 1,
                mo: 0,
                payload: &p1,
            },
            3,
        );
        // A Read Request in between is taken and counted.
        tb.send(
            &RdmapRepr::ReadRequest {
                msn: 1,
                request: ReadRequestRepr {
                    sink_stag: 1,
                    sink_to: 2,
                    size: 3,
                    src_stag: 4,
                    src_to: 5,
                },
            },
            3,
        );
        // Message 2: three segments, Send with Invalidate of a valid STag
        // of the QP's PD (RFC 5040 §5.3): invalidated before its CQE.
        let inv_entry = TptEntry {
            state: TptState::Valid,
            key: 0x78,
            access: ACCESS_ALL,
            page_shift: 12,
            pd: PD,
            va: 0x5000,
            length: 0x1000,
            pbl_base: 0,
            npages: 1,
        };
        tb.tpt.entries.insert(Stag(0x1234_5678).index(), inv_entry);
        let p2 = rng.bytes(297);
        for (mo, len) in [(0usize, 120usize), (120, 120), (240, 57)] {
            tb.send(
                &RdmapRepr::Send {
                    solicited: false,
                    invalidate_stag: Some(0x1234_5678),
                    last: mo == 240,
                    msn: 2,
                    mo: mo as u32,
                    payload: &p2[mo..mo + len],
                },
                3,
            );
        }
        tb.run(900);
        // Bytes land in the SGEs, nothing else but CQEs and events.
        assert_eq!(tb.wr.read(s0.addr, 100), p1[..100]);
        assert_eq!(tb.wr.read(s1.addr, 200), p1[100..]);
        assert_eq!(tb.wr.read(s2.addr, 297), p2);
        let data_octets = 300 + 297;
        let cqe_ev = 2 * 32 + 64;
        assert_eq!(tb.wr.mem.len(), data_octets + cqe_ev, "stray writes");
        let c0 = cqe(&tb, 0);
        assert_eq!(
            c0,
            Cqe {
                wr_id: 0xAAAA,
                byte_len: 300,
                qpn: 3,
                opcode: WcOpcode::Recv,
                status: WcStatus::Success,
                flags: CQE_FLAG_SOLICITED,
                imm_or_inv: 0,
                term_cause: 0,
                phase: true,
            }
        );
        let c1 = cqe(&tb, 1);
        assert_eq!(
            (c1.wr_id, c1.byte_len, c1.flags),
            (0xBBBB, 297, CQE_FLAG_WITH_INV)
        );
        assert_eq!(
            (c1.imm_or_inv, c1.phase, c1.status),
            (0x1234_5678, true, WcStatus::Success)
        );
        // Exactly that entry was invalidated, once.
        assert_eq!(tb.n_inv, 1);
        assert_eq!(
            tb.tpt.entries[&Stag(0x1234_5678).index()],
            TptEntry {
                state: TptState::Invalid,
                ..inv_entry
            }
        );
        assert_eq!(tb.tpt.entries[&Stag(IDENT).index()].state, TptState::Valid);
        assert_eq!(tb.u.cnt_inv.val().to_u64(), 1);
        // The CQE request comes after every data request of its message.
        let pos = |a: u64| tb.wr.reqs.iter().position(|r| r.0 == a).unwrap();
        let last_data_1 = tb.wr.reqs.iter().position(|r| r.0 == s1.addr).unwrap();
        assert!(pos(CQ_BASE) > last_data_1);
        assert!(pos(CQ_BASE + 32) > pos(s2.addr + 240));
        // Armed for the next completion: exactly one event, after CQE 0.
        let ev = Event::parse(&tb.wr.read(EQ_BASE, 64)).unwrap();
        assert_eq!(
            (ev.kind, ev.handle, ev.phase),
            (EventKind::CqCompletion, CQ as u32, true)
        );
        assert!(pos(EQ_BASE) > pos(CQ_BASE));
        assert_eq!(tb.irqs, 1);
        // Requests never cross 4 KiB (checked by the sink): SGE 0 split.
        assert!(tb.wr.reqs.contains(&(s0.addr, 16)));
        let u = &tb.u;
        assert_eq!(u.cnt_send.val().to_u64(), 2);
        assert_eq!(u.cnt_rreq.val().to_u64(), 1);
        assert_eq!(u.cnt_cqe.val().to_u64(), 2);
        // Both posted WQEs in one read (read ahead), none per segment.
        assert_eq!(u.cnt_fetch.val().to_u64(), 1);
        assert!(tb.terms.is_empty() && tb.qp_errs.is_empty());
        println!(
            "two messages (300 + 297 octets, 1 + 3 segments), a Read Request, 2 CQEs, 1 event: \
             last DMA beat {} clocks after the first ut beat was offered",
            tb.last_wr - t0
        );
    }

    #[test]
    fn send_without_wqe_and_bad_input_terminate_without_writes() {
        let mut tb = Tb::new(5);
        let mut rng = Rng::new(6);
        let big = Sge {
            addr: 0x7100_0000,
            length: 64,
            lkey: IDENT,
        };
        let mut bad = wqe(0xDEAD, &[big]);
        bad[12] = 1; // a reserved octet
        tb.qp(1, &[]); // nothing posted
        tb.qp(4, &[wqe(0x44, &[big])]); // MSN mismatch
        tb.qp(5, &[wqe(0x55, &[big, big])]); // too long: 129 > 128
        tb.qp(6, &[bad]); // malformed WQE
        tb.qp(7, &[wqe(0x77, &[big])]); // Terminate, then a Send
        let pay = rng.bytes(129);
        let send = |msn, payload| RdmapRepr::Send {
            solicited: false,
            invalidate_stag: None,
            last: true,
            msn,
            mo: 0,
            payload,
        };
        let term = RdmapRepr::Terminate {
            msn: 1,
            terminate: TerminateRepr {
                cause: UntaggedBufferError::InvalidMsnNoBuffer.into(),
                ddp: None,
                rdma: None,
            },
        };
        let cases: [(u64, RdmapRepr, Option<TerminateCause>); 5] = [
            (
                1,
                send(1, &pay[..40]),
                Some(UntaggedBufferError::InvalidMsnNoBuffer.into()),
            ),
            (
                4,
                send(3, &pay[..40]),
                Some(UntaggedBufferError::InvalidMsnRange.into()),
            ),
            (
                5,
                send(1, &pay),
                Some(UntaggedBufferError::MessageTooLong.into()),
            ),
            (
                6,
                send(1, &pay[..8]),
                Some(RemoteOperationError::CatastrophicLocal.into()),
            ),
            (7, term, None),
        ];
        for (qp, r, _) in &cases {
            tb.send(r, *qp);
        }
        // After the error every later Send of those QPs is dropped.
        tb.send(&send(1, &pay[..20]), 1);
        tb.send(&send(1, &pay[..20]), 7);
        tb.run(700);
        // Terminates: cause and the header echo, as RdmapRepr::emit writes it.
        let want: Vec<_> = cases
            .iter()
            .filter_map(|(qp, r, c)| c.map(|c| (c.to_bits(), hdr_of(r), *qp as u32)))
            .collect();
        let got: Vec<_> = tb
            .terms
            .iter()
            .map(|(c, h, _, q)| {
                assert!(h[UNTAGGED_HEADER_LEN..].iter().all(|&x| x == 0));
                (*c, h[..UNTAGGED_HEADER_LEN].to_vec(), *q)
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(tb.terms[2].2 as usize, UNTAGGED_HEADER_LEN + 129);
        // The incoming Terminate: record with its first 8 octets.
        let mut tbytes = vec![0; cases[4].1.buffer_len()];
        cases[4].1.emit(&mut tbytes).unwrap();
        let mut t8 = [0u8; 8];
        let n = (tbytes.len() - 18).min(8);
        t8[..n].copy_from_slice(&tbytes[18..18 + n]);
        let first8 = u64::from_le_bytes(t8);
        assert_eq!(tb.rterms, vec![(7, first8, (tbytes.len() - 18) as u16)]);
        assert_eq!(tb.qp_errs, vec![1, 4, 5, 6, 7]);
        // Error completions only where a WQE was involved (QPs 5, 6); the
        // data of no Send was written anywhere.
        let c0 = cqe(&tb, 0);
        assert_eq!(
            (c0.wr_id, c0.qpn, c0.status),
            (0x55, 5, WcStatus::LocalLengthError)
        );
        assert_eq!(
            decode_term_cause(c0.term_cause).unwrap(),
            Some(UntaggedBufferError::MessageTooLong.into())
        );
        let c1 = cqe(&tb, 1);
        assert_eq!(
            (c1.wr_id, c1.status),
            (0xDEAD, WcStatus::LocalQpOperationError)
        );
        let octets: Vec<u64> = tb.wr.mem.keys().copied().collect();
        assert!(
            octets
                .iter()
                .all(|&a| (CQ_BASE..CQ_BASE + 64).contains(&a)
                    || (EQ_BASE..EQ_BASE + 64).contains(&a)),
            "stray write"
        );
        assert_eq!(tb.u.cnt_drop_qp.val().to_u64(), 2);
        assert_eq!(tb.u.cnt_term_tx.val().to_u64(), 4);
        assert_eq!(tb.u.cnt_term_rx.val().to_u64(), 1);
        assert_eq!(tb.u.cnt_send.val().to_u64(), 0);
    }

    /// Send with Invalidate / Send with SE and Invalidate (RFC 5040 §5.3,
    /// §6.10): after the last segment is placed the Invalidate STag is
    /// invalidated through the TPT port (`chk_inv`, the model built from
    /// `rnic_wire::abi::tpt` answers), exactly that entry, before the CQE
    /// (WITH_INV + STag). An STag that is not a valid STag of the QP's PD
    /// (bad index, bad key, wrong PD, already invalid) → RDMAP Remote
    /// Protection "STag cannot be Invalidated" Terminate with the segment's
    /// header echo, the error CQE `RemoteInvalidRequestError`, QP to error;
    /// the data is placed (untagged, before the check) and nothing else is
    /// written; no entry changes.
    #[test]
    fn send_with_invalidate_invalidates_or_terminates() {
        let mut tb = Tb::new(31);
        let mut rng = Rng::new(32);
        let region = |key: u8, pd: u32, state| TptEntry {
            state,
            key,
            access: ACCESS_ALL,
            page_shift: 12,
            pd,
            va: 0x10_0000,
            length: 0x2000,
            pbl_base: 0,
            npages: 2,
        };
        // Entries 0x20.. (index): valid of PD, valid of another PD, invalid.
        let good1 = Stag::new(0x20, 0x11).unwrap().0;
        let good2 = Stag::new(0x21, 0x12).unwrap().0;
        let other_pd = Stag::new(0x22, 0x13).unwrap().0;
        let invalid = Stag::new(0x23, 0x14).unwrap().0;
        let bystander = Stag::new(0x24, 0x15).unwrap().0;
        tb.tpt
            .entries
            .insert(0x20, region(0x11, PD, TptState::Valid));
        tb.tpt
            .entries
            .insert(0x21, region(0x12, PD, TptState::Valid));
        tb.tpt
            .entries
            .insert(0x22, region(0x13, PD + 1, TptState::Valid));
        tb.tpt
            .entries
            .insert(0x23, region(0x14, PD, TptState::Invalid));
        tb.tpt
            .entries
            .insert(0x24, region(0x15, PD, TptState::Valid));
        let before = tb.tpt.entries.clone();
        let bad_key = Stag::new(0x24, 0x99).unwrap().0;
        let bad_index = Stag::new(0x30, 0x01).unwrap().0;
        let buf = |i: u64| Sge {
            addr: 0x7200_0000 + 0x1000 * i,
            length: 700,
            lkey: IDENT,
        };
        // QP 1: two good ones (Send Inv in 2 segments, Send SE Inv).
        tb.qp(1, &[wqe(0x100, &[buf(0)]), wqe(0x101, &[buf(1)])]);
        // QPs 2..6: one bad Invalidate STag each.
        let bads = [
            (2u64, bad_index),
            (3, bad_key),
            (4, other_pd),
            (5, invalid),
            (6, good1),
        ];
        for (qp, _) in bads {
            tb.qp(
                qp,
                &[wqe(0x200 + qp, &[buf(qp)]), wqe(0x300 + qp, &[buf(qp + 8)])],
            );
        }
        let inv_send = |se, stag, last, mo: u32, payload| RdmapRepr::Send {
            solicited: se,
            invalidate_stag: Some(stag),
            last,
            msn: 1,
            mo,
            payload,
        };
        let p0 = rng.bytes(600);
        let p1 = rng.bytes(33);
        tb.send(&inv_send(false, good1, false, 0, &p0[..400]), 1);
        tb.send(&inv_send(false, good1, true, 400, &p0[400..]), 1);
        let mut p1_msg = inv_send(true, good2, true, 0, &p1[..]);
        if let RdmapRepr::Send { msn, .. } = &mut p1_msg {
            *msn = 2;
        }
        tb.send(&p1_msg, 1);
        tb.run(900);
        let c0 = cqe(&tb, 0);
        assert_eq!(
            (c0.wr_id, c0.byte_len, c0.status, c0.flags, c0.imm_or_inv),
            (0x100, 600, WcStatus::Success, CQE_FLAG_WITH_INV, good1)
        );
        let c1 = cqe(&tb, 1);
        assert_eq!(
            (c1.wr_id, c1.byte_len, c1.status, c1.flags, c1.imm_or_inv),
            (
                0x101,
                33,
                WcStatus::Success,
                CQE_FLAG_WITH_INV | CQE_FLAG_SOLICITED,
                good2
            )
        );
        assert_eq!(tb.wr.read(buf(0).addr, 600), p0);
        assert_eq!(tb.wr.read(buf(1).addr, 33), p1);
        // Exactly the two entries changed, to Invalid.
        let mut want = before.clone();
        want.get_mut(&0x20).unwrap().state = TptState::Invalid;
        want.get_mut(&0x21).unwrap().state = TptState::Invalid;
        assert_eq!(tb.tpt.entries, want);
        assert_eq!(tb.n_inv, 2);
        assert!(tb.terms.is_empty() && tb.qp_errs.is_empty());

        // The bad ones (good1 is invalid by now: "already invalid" twice).
        let mem_before = tb.wr.mem.clone();
        let pb = rng.bytes(50);
        let msgs: Vec<_> = bads
            .iter()
            .map(|&(qp, stag)| (qp, inv_send(qp == 3, stag, true, 0, &pb[..])))
            .collect();
        for (qp, m) in &msgs {
            tb.send(m, *qp);
            // A later Send of the QP is dropped (QP in error).
            tb.send(&inv_send(false, bystander, true, 0, &pb[..10]), *qp);
        }
        tb.run(1500);
        let cause: TerminateCause = RemoteProtectionError::StagCannotBeInvalidated.into();
        let got: Vec<_> = tb
            .terms
            .iter()
            .map(|(c, h, _, q)| (*c, h[..UNTAGGED_HEADER_LEN].to_vec(), *q))
            .collect();
        let want_terms: Vec<_> = msgs
            .iter()
            .map(|(qp, m)| (cause.to_bits(), hdr_of(m), *qp as u32))
            .collect();
        assert_eq!(got, want_terms);
        assert_eq!(tb.qp_errs, vec![2, 3, 4, 5, 6]);
        for (i, (qp, _)) in bads.iter().enumerate() {
            let c = cqe(&tb, 2 + i as u64);
            assert_eq!(
                (c.wr_id, c.qpn, c.status, c.flags, c.imm_or_inv),
                (
                    0x200 + qp,
                    *qp as u32,
                    WcStatus::RemoteInvalidRequestError,
                    0,
                    0
                )
            );
            assert_eq!(decode_term_cause(c.term_cause).unwrap(), Some(cause));
            // The data was placed before the check; nothing of the second
            // WQE's buffer.
            assert_eq!(tb.wr.read(buf(*qp).addr, 50), pb);
        }
        // Nothing else written: only those buffers, the CQEs (and events).
        for (&a, _) in tb
            .wr
            .mem
            .iter()
            .filter(|(a, _)| !mem_before.contains_key(a))
        {
            let in_buf = bads
                .iter()
                .any(|(qp, _)| (buf(*qp).addr..buf(*qp).addr + 50).contains(&a));
            let in_cq = (CQ_BASE..CQ_BASE + 8 * 32).contains(&a);
            let in_eq = (EQ_BASE..EQ_BASE + 8 * 64).contains(&a);
            assert!(in_buf || in_cq || in_eq, "stray write at {a:#x}");
        }
        // No entry changed.
        assert_eq!(tb.tpt.entries, want);
        assert_eq!(tb.n_inv, 2 + bads.len());
        assert_eq!(tb.u.cnt_inv.val().to_u64(), 2);
        assert_eq!(tb.u.cnt_inv_err.val().to_u64(), bads.len() as u64);
        assert_eq!(tb.u.cnt_drop_qp.val().to_u64(), bads.len() as u64);
    }

    /// Receive WQE SGEs go through the TPT (the `rnic_wire::abi::tpt`
    /// model answers the check port): Sends into regions of scattered 4 KiB
    /// pages land byte-exact at the translated bus addresses (pieces split
    /// at page ends); every kind of bad SGE (bad index, bad key, wrong PD,
    /// no LOCAL_WRITE, out of bounds below/above, length overflow,
    /// invalidated entry, a bad second SGE behind a good first one) gives
    /// the error CQE `LocalProtectionError`, a DDP Local Catastrophic
    /// Terminate and not one written octet.
    #[test]
    fn receive_sges_are_checked_and_translated() {
        let mut tb = Tb::new(21);
        let mut rng = Rng::new(22);
        // CQ 2 with 32 entries (one CQE per case).
        tb.u.cq_cfg_valid.next = true;
        tb.u.cq_cfg_cq.next = CQ.into();
        tb.u.cq_cfg_state.next = (CqState::Valid as u64).into();
        tb.u.cq_cfg_base.next = CQ_BASE.into();
        tb.u.cq_cfg_log2.next = 5.into();
        tb.u.cq_cfg_prod.next = 0.into();
        tb.u.cq_cfg_cons.next = 0.into();
        tb.until(|u| u.cq_cfg_ready.val());
        // Regions: 4 pages of 4 KiB each, scattered and out of order in bus
        // memory; `base` is the page list's first index.
        let region = |tb: &mut Tb,
                      rng: &mut Rng,
                      index: u32,
                      key: u8,
                      base: u32,
                      f: &dyn Fn(&mut TptEntry)| {
            let va = 0x10_0000_0000 * (index as u64 + 1) + rng.below(4096) as u64;
            let mut e = TptEntry {
                state: TptState::Valid,
                key,
                access: ACCESS_LOCAL_WRITE,
                page_shift: 12,
                pd: PD,
                va,
                length: 4 * 4096 - (va & 0xfff) - rng.below(2000) as u64,
                pbl_base: base,
                npages: 4,
            };
            f(&mut e);
            if tb.tpt.pbl.len() < base as usize + 4 {
                tb.tpt.pbl.resize(base as usize + 4, 0);
            }
            for (j, p) in [3u64, 0, 2, 1].into_iter().enumerate() {
                tb.tpt.pbl[base as usize + j] = 0x4000_0000 + (base as u64 + p) * 0x5000;
            }
            tb.tpt.entries.insert(index, e);
            (Stag::new(index, key).unwrap().0, e)
        };
        let (good, ge) = region(&mut tb, &mut rng, 2, 0x22, 100, &|_| {});
        let (nolw, _) = region(&mut tb, &mut rng, 3, 0x33, 104, &|e| {
            e.access = ACCESS_REMOTE_WRITE | rnic_wire::abi::tpt::ACCESS_REMOTE_READ
        });
        let (otherpd, _) = region(&mut tb, &mut rng, 4, 0x44, 108, &|e| e.pd = PD + 1);
        let (inval, _) = region(&mut tb, &mut rng, 5, 0x55, 112, &|e| {
            e.state = TptState::Invalid
        });
        let sge = |lkey: u32, addr: u64, length: u32| Sge { addr, length, lkey };
        let va = ge.va;
        // Bad cases: (what, SGEs); each on its own QP (8, 9, ...).
        let bad: Vec<(&str, Vec<Sge>)> = vec![
            (
                "bad index",
                vec![sge(Stag::new(0x1234, 0x22).unwrap().0, va, 64)],
            ),
            ("bad key", vec![sge(good ^ 1, va, 64)]),
            ("wrong PD", vec![sge(otherpd, tb.tpt.entries[&4].va, 64)]),
            ("no LOCAL_WRITE", vec![sge(nolw, tb.tpt.entries[&3].va, 64)]),
            ("below the region", vec![sge(good, va - 1, 64)]),
            (
                "beyond the region",
                vec![sge(good, va + ge.length - 63, 64)],
            ),
            ("length overflow", vec![sge(good, u64::MAX - 10, 64)]),
            ("invalidated", vec![sge(inval, tb.tpt.entries[&5].va, 64)]),
            (
                "second SGE bad",
                vec![sge(good, va, 32), sge(good, va + ge.length, 32)],
            ),
        ];
        for (what, s) in &bad {
            let refs = s
                .iter()
                .map(|s| {
                    tb.tpt
                        .check(s.lkey, PD, ACCESS_LOCAL_WRITE, s.addr, s.length as u64)
                        .0
                })
                .collect::<Vec<_>>();
            assert!(
                refs.iter().any(|&f| f != 0),
                "{what}: the model must refuse it"
            );
        }
        // Good cases: own region each (index 10 + i), 1 to 6 SGEs inside (some empty),
        // a Send of up to 1500 octets in segments of up to 500.
        struct Good {
            qp: u64,
            sges: Vec<Sge>,
            data: Vec<u8>,
        }
        let mut goods = vec![];
        for i in 0..5u32 {
            let (lk, e) = region(
                &mut tb,
                &mut rng,
                10 + i,
                0x80 + i as u8,
                120 + 4 * i,
                &|_| {},
            );
            // 1..=6 SGEs (scatter in order), some of them empty.
            let n = 1 + rng.below(6);
            let sges: Vec<Sge> = (0..n)
                .map(|_| {
                    let l = if rng.below(5) == 0 {
                        0
                    } else {
                        1 + rng.below(2500) as u64
                    };
                    let a = e.va + rng.below((e.length - l) as usize) as u64;
                    sge(lk, a, l as u32)
                })
                .collect();
            let cap: u64 = sges.iter().map(|s| s.length as u64).sum();
            let len = 1 + rng.below(cap.min(1500) as usize);
            goods.push(Good {
                qp: 20 + i as u64,
                sges,
                data: rng.bytes(len),
            });
        }
        // Interleave: good, bad, good, bad, ...
        let mut order = vec![];
        for i in 0..bad.len().max(goods.len()) {
            if i < goods.len() {
                order.push((true, i));
            }
            if i < bad.len() {
                order.push((false, i));
            }
        }
        for &(is_good, i) in &order {
            let (qp, sges) = if is_good {
                (goods[i].qp, goods[i].sges.clone())
            } else {
                (8 + i as u64, bad[i].1.clone())
            };
            tb.qp(qp, &[wqe(0x1000 + qp, &sges)]);
        }
        let t0 = tb.cycles;
        for &(is_good, i) in &order {
            if is_good {
                let g = &goods[i];
                let n = g.data.len();
                let mut mo = 0;
                while mo < n {
                    let l = (n - mo).min(500);
                    tb.send(
                        &RdmapRepr::Send {
                            solicited: false,
                            invalidate_stag: None,
                            last: mo + l == n,
                            msn: 1,
                            mo: mo as u32,
                            payload: &g.data[mo..mo + l],
                        },
                        g.qp,
                    );
                    mo += l;
                }
            } else {
                let p = rng.bytes(40);
                tb.send(
                    &RdmapRepr::Send {
                        solicited: false,
                        invalidate_stag: None,
                        last: true,
                        msn: 1,
                        mo: 0,
                        payload: &p,
                    },
                    8 + i as u64,
                );
            }
        }
        tb.run(9000);
        let clocks = tb.last_wr - t0;
        // Good: every octet at the bus address the model translates it to.
        let mut data_octets = 0;
        for g in &goods {
            let mut m = 0;
            for s in &g.sges {
                let k = (g.data.len() - m).min(s.length as usize);
                for (j, a) in tb.tpt.bus(s.lkey, s.addr, k as u64).into_iter().enumerate() {
                    assert_eq!(
                        tb.wr.mem.get(&a),
                        Some(&g.data[m + j]),
                        "QP {} octet {}",
                        g.qp,
                        m + j
                    );
                }
                m += k;
            }
            data_octets += g.data.len();
        }
        // CQEs in the order the Sends came; bad ones with the protection
        // error and the Terminate cause.
        let prot: TerminateCause = DdpError::LocalCatastrophic.into();
        for (slot, &(is_good, i)) in order.iter().enumerate() {
            let c = cqe(&tb, slot as u64);
            if is_good {
                let g = &goods[i];
                assert_eq!(
                    (c.qpn, c.wr_id, c.status, c.byte_len),
                    (
                        g.qp as u32,
                        0x1000 + g.qp,
                        WcStatus::Success,
                        g.data.len() as u32
                    )
                );
            } else {
                assert_eq!(
                    (c.qpn, c.wr_id, c.status, c.byte_len),
                    (
                        8 + i as u32,
                        0x1008 + i as u64,
                        WcStatus::LocalProtectionError,
                        0
                    ),
                    "{}",
                    bad[i].0
                );
                assert_eq!(decode_term_cause(c.term_cause).unwrap(), Some(prot));
            }
        }
        let terms: Vec<_> = tb.terms.iter().map(|t| (t.0, t.3)).collect();
        let want: Vec<_> = (0..bad.len())
            .map(|i| (prot.to_bits(), 8 + i as u32))
            .collect();
        assert_eq!(terms, want);
        assert_eq!(tb.qp_errs, (8..8 + bad.len() as u32).collect::<Vec<_>>());
        // Nothing else written: data and CQEs only (re-configuring the CQ
        // disarmed it: no event).
        assert_eq!(
            tb.wr.mem.len(),
            data_octets + order.len() * 32,
            "stray writes"
        );
        assert_eq!(tb.u.cnt_prot.val().to_u64(), bad.len() as u64);
        assert_eq!(tb.u.cnt_send.val().to_u64(), goods.len() as u64);
        println!(
            "{} good Sends ({} octets), {} refused: {} TPT checks, {} clocks",
            goods.len(),
            data_octets,
            bad.len(),
            tb.n_chk,
            clocks
        );
    }

    /// A region of 64 KiB pages: a segment's pieces are still cut at every
    /// 4 KiB bus boundary (DMA writes never cross one), but only a page end
    /// of the region (or an SGE end) costs a new TPT translation; pieces in
    /// the same page reuse the segment's translation. Octets land where the
    /// TPT model translates them, and the count of TPT checks is the
    /// model's: one whole-SGE check per message plus one per (segment,
    /// region page) run, less the first run's, which starts at the SGE's
    /// first octet and uses the whole-SGE check's translation.
    #[test]
    fn pieces_in_one_large_page_share_a_translation() {
        let mut tb = Tb::new(31);
        let mut rng = Rng::new(32);
        tb.u.cq_cfg_valid.next = true;
        tb.u.cq_cfg_cq.next = CQ.into();
        tb.u.cq_cfg_state.next = (CqState::Valid as u64).into();
        tb.u.cq_cfg_base.next = CQ_BASE.into();
        tb.u.cq_cfg_log2.next = 5.into();
        tb.u.cq_cfg_prod.next = 0.into();
        tb.u.cq_cfg_cons.next = 0.into();
        tb.until(|u| u.cq_cfg_ready.val());
        const SHIFT: u8 = 16;
        let page = 1u64 << SHIFT;
        // Two 64 KiB pages, out of order in bus memory.
        let va = 0x30_0000_0000u64;
        tb.tpt.pbl.resize(202, 0);
        tb.tpt.pbl[200] = 0x6000_0000 + 5 * page;
        tb.tpt.pbl[201] = 0x6000_0000 + 2 * page;
        tb.tpt.entries.insert(
            7,
            TptEntry {
                state: TptState::Valid,
                key: 0x77,
                access: ACCESS_LOCAL_WRITE,
                page_shift: SHIFT,
                pd: PD,
                va,
                length: 2 * page,
                pbl_base: 200,
                npages: 2,
            },
        );
        let lkey = Stag::new(7, 0x77).unwrap().0;
        // The SGE starts 1000 octets before the region's page end, less
        // octets before than a segment: segments straddle 4 KiB boundaries
        // and one straddles the page end.
        let start = va + page - 13 * 1454 - 1000;
        let len = 16 * 1454 + 77;
        let data = rng.bytes(len);
        let sges = [Sge {
            addr: start,
            length: len as u32,
            lkey,
        }];
        tb.qp(40, &[wqe(0x2040, &sges)]);
        let n0 = tb.n_chk;
        // (the first piece starts at the SGE's first octet: it uses the
        // whole-SGE check's translation, no check of its own)
        let mut want_chk = 0;
        for mo in (0..len).step_by(1454) {
            let l = (len - mo).min(1454);
            let (a, b) = (start + mo as u64, start + (mo + l) as u64 - 1);
            want_chk += ((b - va) / page - (a - va) / page + 1) as usize;
        }
        tb.send_message(40, 1, &data, 1454);
        tb.run(20000);
        for (j, a) in tb.tpt.bus(lkey, start, len as u64).into_iter().enumerate() {
            assert_eq!(tb.wr.mem.get(&a), Some(&data[j]), "octet {j}");
        }
        let c = cqe(&tb, 0);
        assert_eq!(
            (c.qpn, c.wr_id, c.status, c.byte_len),
            (40, 0x2040, WcStatus::Success, len as u32)
        );
        assert_eq!(tb.wr.mem.len(), len + 32, "stray writes");
        let four_k = (start..start + len as u64)
            .filter(|a| a % 4096 == 0)
            .count();
        println!(
            "{len} octets in 17 segments, {four_k} 4 KiB boundaries: {} TPT checks (model {want_chk})",
            tb.n_chk - n0
        );
        assert_eq!(tb.n_chk - n0, want_chk);
    }

    /// Clocks per full-size segment when nothing outside the block waits:
    /// every `ut_*` beat offered at once, DMA writes always taken, the TPT
    /// at its own latency. A 64 KiB Send in segments of the size MTU 1500
    /// and MTU 9000 carry (TCP MSS less MPA header and CRC, less the
    /// untagged DDP/RDMAP header), into one SGE of the identity region.
    #[test]
    fn full_size_segments_keep_up_with_the_wire() {
        for (mtu, seg) in [(1500usize, 1436usize), (9000, 8936)] {
            let mut tb = Tb::new(41);
            let mut rng = Rng::new(42);
            tb.full_rate = true;
            let len = 64 * 1024;
            let data = rng.bytes(len);
            let sges = [Sge {
                addr: 0x4000_0000,
                length: len as u32,
                lkey: IDENT,
            }];
            tb.qp(5, &[wqe(0x5005, &sges)]);
            let nseg = tb.send_message(5, 1, &data, seg);
            let beats = tb.ut.len() as u64;
            let t0 = tb.cycles;
            while !tb.ut.is_empty() {
                tb.clock();
            }
            let took = tb.cycles - t0;
            tb.run(400);
            assert_eq!(tb.wr.read(0x4000_0000, len), data);
            // The wire: Ethernet frame + FCS + preamble + IFG, 8 octets a clock.
            let wire = (mtu + 14 + 4 + 8 + 12) as f64 / 8.0;
            // Between the first beats of the second and the last segment
            // (the first waits for its WQE and its SGE checks).
            let st = &tb.seg_start;
            assert_eq!(st.len(), nseg);
            let steady = (st[nseg - 1] - st[1]) as f64 / (nseg - 2) as f64;
            println!(
                "MTU {mtu}: {nseg} segments of {seg} octets, {beats} beats in {took} clocks \
                 ({} input stalls); {steady:.1} clocks/segment after the first, wire {wire:.1}",
                tb.ut_stalls
            );
            assert!(steady <= wire, "the wire outruns Send placement");
        }
    }

    /// Every segment is checked, not only the first: a region invalidated
    /// after a message's first segment stops its second one at the piece
    /// check (before any of its octets is written) with the protection
    /// error; the first segment's octets stay where they landed.
    #[test]
    fn region_invalidated_mid_message_stops_the_next_segment() {
        let mut tb = Tb::new(31);
        let mut rng = Rng::new(32);
        let e = TptEntry {
            state: TptState::Valid,
            key: 0x42,
            access: ACCESS_LOCAL_WRITE,
            page_shift: 12,
            pd: PD,
            va: 0x2_0000_0100,
            length: 8000,
            pbl_base: 8,
            npages: 3,
        };
        tb.tpt.pbl.resize(11, 0);
        tb.tpt.pbl[8] = 0x6000_5000;
        tb.tpt.pbl[9] = 0x6000_1000;
        tb.tpt.pbl[10] = 0x6000_9000;
        tb.tpt.entries.insert(7, e);
        let lkey = Stag::new(7, 0x42).unwrap().0;
        tb.qp(
            2,
            &[wqe(
                0x22,
                &[Sge {
                    addr: e.va,
                    length: 8000,
                    lkey,
                }],
            )],
        );
        let p = rng.bytes(900);
        let seg = |mo: usize, len: usize, last: bool| RdmapRepr::Send {
            solicited: false,
            invalidate_stag: None,
            last,
            msn: 1,
            mo: mo as u32,
            payload: &p[mo..mo + len],
        };
        tb.send(&seg(0, 300, false), 2);
        tb.run(400);
        let first: Vec<u64> = tb.tpt.bus(lkey, e.va, 300);
        for (i, a) in first.iter().enumerate() {
            assert_eq!(tb.wr.mem.get(a), Some(&p[i]));
        }
        tb.tpt.entries.get_mut(&7).unwrap().state = TptState::Invalid;
        tb.send(&seg(300, 300, false), 2);
        tb.send(&seg(600, 300, true), 2);
        tb.run(600);
        let c = cqe(&tb, 0);
        assert_eq!((c.wr_id, c.status), (0x22, WcStatus::LocalProtectionError));
        let prot: TerminateCause = DdpError::LocalCatastrophic.into();
        assert_eq!(
            tb.terms.iter().map(|t| t.0).collect::<Vec<_>>(),
            vec![prot.to_bits()]
        );
        assert_eq!(tb.qp_errs, vec![2]);
        // the first segment, the CQE and its event (the CQ is armed); the
        // third segment was dropped
        assert_eq!(
            tb.wr.mem.len(),
            300 + 32 + 64,
            "nothing of the second segment"
        );
        assert_eq!(tb.u.cnt_drop_qp.val().to_u64(), 1);
    }

    #[test]
    fn generates_verilog() {
        let mut u = RxSend::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "rx_send");
        assert!(v.contains("module rx_send("));
        if let Ok(dir) = std::env::var("RX_SEND_VERILOG_DIR") {
            std::fs::write(format!("{dir}/rx_send.v"), &v).unwrap();
        }
    }
}
