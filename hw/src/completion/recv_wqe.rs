//! Receive WQE fetch: per-QP receive queues in host memory; on request
//! (`req_*`, from `send_place`) returns the receive WQE at the QP's consumer
//! index (`rnic_wire::abi::wqe::RecvWqe`, 128 octets) with the QP's
//! expected MSN and receive CQ, read ahead of the Sends that consume it.
//!
//! * Per-QP record ([`QP_BITS`] = 6: 64 QPs, like `WqeFetch`) in one RAM,
//!   `{state[2], cq[4], msn[32], prod[32], ci[32], log2[5], base[64]}`:
//!   written by the firmware (`cfg_*`, each QP-context write: the receive
//!   ring, log2 entries, consumer index, the MSN expected on the next Send —
//!   1 at the start of the stream, RFC 5040 §5.1 — and the receive CQ; read
//!   first, so the producer index is kept, and a QP that was receiving and
//!   stays on keeps its consumer index and MSN); the producer index by the
//!   host's RQ doorbell only (`db_*`,
//!   `abi::doorbell::QP_RQ_PRODUCER`); `adv_*` from `send_place` either
//!   consumes the WQE (message complete: `ci + 1`, `msn + 1`) or moves the
//!   QP to error. All through one state machine (priority cfg, doorbell,
//!   advance, request), each port with its own `ready`.
//! * **WQE buffer** (`wbuf`, [`wqe_buf_bits`] of the profile's
//!   `rq_prefetch_log2`): `2^rq_prefetch_log2` WQEs per QP as read from
//!   host memory, 8 words of two beats each, WQE `i` in slot `i mod 2^rq_prefetch_log2`;
//!   per QP `pf_end` (its own RAM): the buffer holds `[ci, pf_end)`.
//!   * Request: QP not configured or in error → [`RSP_QP_ERR`]; `ci ==
//!     prod` → [`RSP_EMPTY`] (no WQE posted); the WQE just answered again
//!     (the next segment of the same message) → answered from the held
//!     registers; WQE `ci` in the buffer (a hit) → loaded from it, two
//!     beats a clock, its header words and its `num_sge` SGEs only (3
//!     clocks for one SGE, 8 for six; the SGEs beyond read as zero), and
//!     if at least `min(2^rq_prefetch_log2 / 2, FILL_MAX)`
//!     slots are free (or all posted WQEs fit), a fill is free and none is
//!     reading this QP, a **prefetch** of the WQEs from `pf_end` on
//!     starts; otherwise (a miss) one DMA read from `ci` (once no read of
//!     this QP is in flight and a fill is free: `Wait`) and the answer
//!     from its first 16 beats.
//!   * Each read (a **fill**, `recv_wqe_fill`: two in flight with
//!     prefetch, DMA tags [`TAG`] and `TAG + 1`, never two of one QP; one
//!     without) covers 1..=[`FILL_MAX`] consecutive WQEs of one QP: not
//!     past the ring's end, only posted ones (`< prod`), only free slots.
//!     Its beats go to the buffer; at its end the QP's `pf_end` moves to
//!     the end of what it read, unless the completion's length was wrong
//!     or the QP's context was written meanwhile (`cfg` empties the QP's
//!     buffer: its ring may have changed). A fill of 8 WQEs takes the DMA
//!     round trip and 128 beats; with one in flight 8 QPs of 64-octet
//!     Sends waited for their WQEs, two keep the completion stream busy.
//!   * Without prefetch (`rq_prefetch_log2` 0, the board profile) every
//!     request that is not the WQE just answered is a miss, one WQE per
//!     read.
//! * A WQE is checked as `RecvWqe::parse` does: reserved octets 8, 9,
//!   11..32 zero, `num_sge <= MAX_SGE_PER_WQE` (6) and SGE lengths adding
//!   up to at most 2^32 - 1; a refused WQE, or a read completion that ends
//!   before its 16th beat or is not the read's length, answers
//!   [`RSP_BAD`] (with its `wr_id`). The answer gives `num_sge`, the sum of
//!   the SGE lengths (`rsp_total`, added up as the beats come) and SGE
//!   `rsp_sel` (`rsp_sge_*`, a 6-way choice from the held WQE, no clock),
//!   valid until the next request.
//! * `dma_rd_cpl_ready` is always 1 and completion beats with another tag
//!   are ignored.
//! * A producer index more than the ring size ahead (host bug): the block
//!   fetches what the index says; stale slots are parsed and used or refused.

use crate::common::k;
use crate::completion::recv_wqe_fill::RecvWqeFill;
use rnic_wire::abi::wqe::{MAX_SGE_PER_WQE, WQE_SIZE};
use rust_hdl::prelude::*;

/// QP index bits (64 QPs).
pub const QP_BITS: usize = 6;
/// Width of a per-QP record.
pub const REC_BITS: usize = 171;
/// Most WQEs one DMA read fetches: 1 KiB, as `wqe_fetch` reads send WQEs
/// (a longer read would hold the shared completion stream longer).
pub const FILL_MAX: u64 = 8;
// A WQE is 128 octets (`<< 7`), 16 beats (`<< 4`).
const _: () = assert!(WQE_SIZE == 128);

/// DMA read tag of fill 0 (this block owns 0x40..=0x4F; fill 1 uses
/// `TAG + 1`).
pub const TAG: u64 = 0x40;
/// `rsp_status`: the WQE is good.
pub const RSP_OK: u64 = 0;
/// `rsp_status`: no WQE posted.
pub const RSP_EMPTY: u64 = 1;
/// `rsp_status`: the WQE is malformed (`RecvWqe::parse` refuses it).
pub const RSP_BAD: u64 = 2;
/// `rsp_status`: the QP is not configured or is in error.
pub const RSP_QP_ERR: u64 = 3;
/// Record state: not configured.
pub const QP_OFF: u64 = 0;
/// Record state: receiving.
pub const QP_ON: u64 = 1;
/// Record state: error (set by `adv_err`).
pub const QP_ERR: u64 = 2;

/// Address bits of the WQE buffer for `2^pf_log2` WQEs held per QP
/// (`crate::profile::Profile::rq_prefetch_log2`): 8 words of two beats per
/// WQE, per QP; 0 (no prefetch) keeps one WQE's words.
pub const fn wqe_buf_bits(pf_log2: usize) -> usize {
    if pf_log2 == 0 {
        3
    } else {
        QP_BITS + pf_log2 + 3
    }
}

/// The co-simulation profile's block.
pub type RecvWqeFetch = RecvWqeFetchN<{ wqe_buf_bits(crate::profile::SIM.rq_prefetch_log2) }>;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum RwState {
    Idle,
    Cfg,
    Db,
    Adv,
    Chk,
    /// The WQE comes from the DMA read just issued (a miss).
    Cpl,
    /// The WQE comes from the buffer (a hit).
    Load,
    /// A miss while another read is in flight.
    Wait,
    Rsp,
}

#[derive(LogicBlock)]
pub struct RecvWqeFetchN<const RA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- per-QP receive queue (firmware)
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_ready: Signal<Out, Bit>,
    pub cfg_qp: Signal<In, Bits<QP_BITS>>,
    pub cfg_base: Signal<In, Bits<64>>,
    pub cfg_log2: Signal<In, Bits<5>>,
    pub cfg_ci: Signal<In, Bits<32>>,
    pub cfg_msn: Signal<In, Bits<32>>,
    pub cfg_cq: Signal<In, Bits<4>>,
    /// 1: receiving; 0: off.
    pub cfg_on: Signal<In, Bit>,
    // ---- RQ doorbell (host)
    pub db_valid: Signal<In, Bit>,
    pub db_ready: Signal<Out, Bit>,
    pub db_qp: Signal<In, Bits<QP_BITS>>,
    pub db_prod: Signal<In, Bits<32>>,
    // ---- consume / error (send_place)
    pub adv_valid: Signal<In, Bit>,
    pub adv_ready: Signal<Out, Bit>,
    pub adv_qp: Signal<In, Bits<QP_BITS>>,
    pub adv_err: Signal<In, Bit>,
    // ---- request / response (send_place)
    pub req_valid: Signal<In, Bit>,
    pub req_ready: Signal<Out, Bit>,
    pub req_qp: Signal<In, Bits<QP_BITS>>,
    pub rsp_valid: Signal<Out, Bit>,
    pub rsp_ready: Signal<In, Bit>,
    pub rsp_status: Signal<Out, Bits<2>>,
    pub rsp_idx: Signal<Out, Bits<32>>,
    pub rsp_msn: Signal<Out, Bits<32>>,
    pub rsp_cq: Signal<Out, Bits<4>>,
    pub rsp_wr_id: Signal<Out, Bits<64>>,
    pub rsp_nsge: Signal<Out, Bits<3>>,
    /// The sum of the WQE's `num_sge` SGE lengths.
    pub rsp_total: Signal<Out, Bits<32>>,
    /// Which SGE `rsp_sge_*` shows (0..=5).
    pub rsp_sel: Signal<In, Bits<3>>,
    pub rsp_sge_addr: Signal<Out, Bits<64>>,
    pub rsp_sge_len: Signal<Out, Bits<32>>,
    pub rsp_sge_lkey: Signal<Out, Bits<32>>,
    // ---- DMA read
    pub dma_rd_req_valid: Signal<Out, Bit>,
    pub dma_rd_req_ready: Signal<In, Bit>,
    pub dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub dma_rd_req_len: Signal<Out, Bits<16>>,
    pub dma_rd_req_tag: Signal<Out, Bits<8>>,
    pub dma_rd_cpl_valid: Signal<In, Bit>,
    pub dma_rd_cpl_ready: Signal<Out, Bit>,
    pub dma_rd_cpl_data: Signal<In, Bits<64>>,
    pub dma_rd_cpl_keep: Signal<In, Bits<4>>,
    pub dma_rd_cpl_last: Signal<In, Bit>,
    pub dma_rd_cpl_tag: Signal<In, Bits<8>>,
    // ---- counters
    /// DMA reads issued (each of 1 to `FILL_MAX` WQEs).
    pub cnt_fetch: Signal<Out, Bits<32>>,
    pub cnt_bad_wqe: Signal<Out, Bits<32>>,
    // ---- constants
    k_tag: Constant<Bits<8>>,
    k_max_sge: Constant<Bits<8>>,
    k_on: Constant<Bits<2>>,
    k_err: Constant<Bits<2>>,
    k_rsv1: Constant<Bits<64>>,
    /// Prefetch on (the WQE buffer holds `k_pn` WQEs per QP).
    k_pf: Constant<Bit>,
    /// log2 of `k_pn`.
    k_pl: Constant<Bits<4>>,
    /// WQEs held per QP (1 without prefetch).
    k_pn: Constant<Bits<32>>,
    /// A prefetch is issued once it can fetch this many WQEs (or all that
    /// are posted).
    k_half: Constant<Bits<32>>,
    /// WQEs per DMA read at most.
    k_fmax: Constant<Bits<32>>,
    // ---- state
    ram: RAM<Bits<REC_BITS>, QP_BITS>,
    /// Per QP: the index after the last WQE in the buffer (`pf_end`); the
    /// buffer holds the QP's WQEs `[ci, pf_end)` when `1 <= pf_end - ci <=
    /// k_pn`, WQE `i` in slot `i mod k_pn`.
    pf: RAM<Bits<32>, QP_BITS>,
    /// The WQE buffer: `{qp, slot, beat / 2}` → beats `beat & !1` (low
    /// half) and `beat | 1` as read from host memory, so a hit is loaded
    /// two beats a clock.
    wbuf: RAM<Bits<128>, RA>,
    state: DFF<RwState>,
    qp: DFF<Bits<QP_BITS>>,
    flag: DFF<Bit>,
    pend: DFF<Bit>,
    val: DFF<Bits<32>>,
    beat: DFF<Bits<4>>,
    status: DFF<Bits<2>>,
    idx: DFF<Bits<32>>,
    msn: DFF<Bits<32>>,
    cq: DFF<Bits<4>>,
    w0: DFF<Bits<64>>,
    w1: DFF<Bits<64>>,
    w23: DFF<Bit>,
    /// Beats 4..15: the six SGEs (beat 4 in the low bits once all are in).
    wsg: DFF<Bits<768>>,
    /// Where word `beat` goes in `wsg` (a load from the buffer): SGE
    /// `beat - 2`.
    wsh: Signal<Local, Bits<10>>,
    /// The sum of the SGE lengths so far (35 bits: more than 2^32 - 1 is bad).
    tsum: DFF<Bits<35>>,
    /// SGE `rsp_sel`: {lkey, length, addr}.
    sg: Signal<Local, Bits<128>>,
    /// `beat - 5`: twice the SGE index of a length beat (compared with
    /// twice `num_sge`).
    bk: Signal<Local, Bits<4>>,
    c_valid: DFF<Bit>,
    c_qp: DFF<Bits<QP_BITS>>,
    c_ci: DFF<Bits<32>>,
    c_bad: DFF<Bit>,
    n_fetch: DFF<Bits<32>>,
    n_bad: DFF<Bits<32>>,
    // ---- the fills: DMA reads of consecutive WQEs of one QP, two in
    // flight (tags `TAG` and `TAG + 1`; the second only with prefetch)
    fill0: RecvWqeFill,
    fill1: RecvWqeFill,
    k_tag1: Constant<Bits<8>>,
    /// The fill whose request is on offer (kept until it is taken).
    rq_sel: DFF<Bit>,
    rq_now: Signal<Local, Bit>,
    /// The fill a miss started (its first 16 beats are the answer).
    m_sel: DFF<Bit>,
    m_n: Signal<Local, Bits<8>>,
    /// A fill is free (`go_sel`: the one to start), and a fill of the
    /// request's QP is in flight.
    any_free: Signal<Local, Bit>,
    go_sel: Signal<Local, Bit>,
    qp_busy: Signal<Local, Bit>,
    // ---- temporaries
    x_base: Signal<Local, Bits<64>>,
    x_log2: Signal<Local, Bits<5>>,
    x_ci: Signal<Local, Bits<32>>,
    x_prod: Signal<Local, Bits<32>>,
    x_msn: Signal<Local, Bits<32>>,
    x_cq: Signal<Local, Bits<4>>,
    x_state: Signal<Local, Bits<2>>,
    x_pf: Signal<Local, Bits<32>>,
    n_ci: Signal<Local, Bits<32>>,
    n_prod: Signal<Local, Bits<32>>,
    n_msn: Signal<Local, Bits<32>>,
    n_state: Signal<Local, Bits<2>>,
    n_cq: Signal<Local, Bits<4>>,
    n_log2: Signal<Local, Bits<5>>,
    n_base: Signal<Local, Bits<64>>,
    mask: Signal<Local, Bits<32>>,
    bad_now: Signal<Local, Bit>,
    cfg_st: Signal<Local, Bits<2>>,
    /// Record and `pf` read address.
    ra: Signal<Local, Bits<QP_BITS>>,
    /// A beat of the WQE being answered: from the DMA read (`Cpl`) or the
    /// buffer (`Load`).
    bv: Signal<Local, Bit>,
    bd: Signal<Local, Bits<64>>,
    /// The buffer word read: its even and odd beat.
    lo: Signal<Local, Bits<64>>,
    hi: Signal<Local, Bits<64>>,
    /// `pf_end - ci`, and the request hits the buffer.
    pd: Signal<Local, Bits<32>>,
    hit: Signal<Local, Bit>,
    smask: Signal<Local, Bits<32>>,
    /// A fill to start: its first WQE index and count.
    fs_go: Signal<Local, Bit>,
    fs_start: Signal<Local, Bits<32>>,
    fs_n: Signal<Local, Bits<32>>,
    fs_av: Signal<Local, Bits<32>>,
    fs_rl: Signal<Local, Bits<32>>,
    fs_slot: Signal<Local, Bits<8>>,
    /// Buffer addresses `{qp, slot, beat}` before truncation to `RA` bits.
    rd_a: Signal<Local, Bits<16>>,
    wr_a: Signal<Local, Bits<16>>,
}

impl<const RA: usize> Default for RecvWqeFetchN<RA> {
    fn default() -> Self {
        let pl = RA.saturating_sub(QP_BITS + 3) as u64;
        let pn = 1u64 << pl;
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cfg_valid: Default::default(),
            cfg_ready: Default::default(),
            cfg_qp: Default::default(),
            cfg_base: Default::default(),
            cfg_log2: Default::default(),
            cfg_ci: Default::default(),
            cfg_msn: Default::default(),
            cfg_cq: Default::default(),
            cfg_on: Default::default(),
            db_valid: Default::default(),
            db_ready: Default::default(),
            db_qp: Default::default(),
            db_prod: Default::default(),
            adv_valid: Default::default(),
            adv_ready: Default::default(),
            adv_qp: Default::default(),
            adv_err: Default::default(),
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_qp: Default::default(),
            rsp_valid: Default::default(),
            rsp_ready: Default::default(),
            rsp_status: Default::default(),
            rsp_idx: Default::default(),
            rsp_msn: Default::default(),
            rsp_cq: Default::default(),
            rsp_wr_id: Default::default(),
            rsp_nsge: Default::default(),
            rsp_total: Default::default(),
            rsp_sel: Default::default(),
            rsp_sge_addr: Default::default(),
            rsp_sge_len: Default::default(),
            rsp_sge_lkey: Default::default(),
            dma_rd_req_valid: Default::default(),
            dma_rd_req_ready: Default::default(),
            dma_rd_req_addr: Default::default(),
            dma_rd_req_len: Default::default(),
            dma_rd_req_tag: Default::default(),
            dma_rd_cpl_valid: Default::default(),
            dma_rd_cpl_ready: Default::default(),
            dma_rd_cpl_data: Default::default(),
            dma_rd_cpl_keep: Default::default(),
            dma_rd_cpl_last: Default::default(),
            dma_rd_cpl_tag: Default::default(),
            cnt_fetch: Default::default(),
            cnt_bad_wqe: Default::default(),
            k_tag: k(TAG),
            k_max_sge: k(MAX_SGE_PER_WQE as u64),
            k_on: k(QP_ON),
            k_err: k(QP_ERR),
            // RecvWqe::parse: octets 8, 9 (opcode, flags) and 11..16 must
            // be zero; octet 10 is num_sge.
            k_rsv1: k(0xFFFF_FFFF_FF00_FFFF),
            k_pf: Constant::new(pl > 0),
            k_pl: k(pl),
            k_pn: k(pn),
            k_half: k((pn / 2).clamp(1, FILL_MAX)),
            k_fmax: k(pn.min(FILL_MAX)),
            ram: Default::default(),
            pf: Default::default(),
            wbuf: Default::default(),
            state: Default::default(),
            qp: Default::default(),
            flag: Default::default(),
            pend: Default::default(),
            val: Default::default(),
            beat: Default::default(),
            status: Default::default(),
            idx: Default::default(),
            msn: Default::default(),
            cq: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            w23: Default::default(),
            wsg: Default::default(),
            wsh: Default::default(),
            tsum: Default::default(),
            sg: Default::default(),
            bk: Default::default(),
            c_valid: Default::default(),
            c_qp: Default::default(),
            c_ci: Default::default(),
            c_bad: Default::default(),
            n_fetch: Default::default(),
            n_bad: Default::default(),
            fill0: Default::default(),
            fill1: Default::default(),
            k_tag1: k(TAG + 1),
            rq_sel: Default::default(),
            rq_now: Default::default(),
            m_sel: Default::default(),
            m_n: Default::default(),
            any_free: Default::default(),
            go_sel: Default::default(),
            qp_busy: Default::default(),
            x_base: Default::default(),
            x_log2: Default::default(),
            x_ci: Default::default(),
            x_prod: Default::default(),
            x_msn: Default::default(),
            x_cq: Default::default(),
            x_state: Default::default(),
            x_pf: Default::default(),
            n_ci: Default::default(),
            n_prod: Default::default(),
            n_msn: Default::default(),
            n_state: Default::default(),
            n_cq: Default::default(),
            n_log2: Default::default(),
            n_base: Default::default(),
            mask: Default::default(),
            bad_now: Default::default(),
            cfg_st: Default::default(),
            ra: Default::default(),
            bv: Default::default(),
            bd: Default::default(),
            lo: Default::default(),
            hi: Default::default(),
            pd: Default::default(),
            hit: Default::default(),
            smask: Default::default(),
            fs_go: Default::default(),
            fs_start: Default::default(),
            fs_n: Default::default(),
            fs_av: Default::default(),
            fs_rl: Default::default(),
            fs_slot: Default::default(),
            rd_a: Default::default(),
            wr_a: Default::default(),
        }
    }
}

impl<const RA: usize> Logic for RecvWqeFetchN<RA> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, qp, flag, pend, val, beat, status, idx, msn, cq, w0, w1, w23, wsg,
            tsum, c_valid, c_qp, c_ci, c_bad, n_fetch, n_bad, rq_sel, m_sel
        );
        clock!(self, clock, fill0, fill1);
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();
        self.pf.read_clock.next = self.clock.val();
        self.pf.write_clock.next = self.clock.val();
        self.wbuf.read_clock.next = self.clock.val();
        self.wbuf.write_clock.next = self.clock.val();

        self.x_base.next = self.ram.read_data.val().get_bits::<64>(0);
        self.x_log2.next = self.ram.read_data.val().get_bits::<5>(64);
        self.x_ci.next = self.ram.read_data.val().get_bits::<32>(69);
        self.x_prod.next = self.ram.read_data.val().get_bits::<32>(101);
        self.x_msn.next = self.ram.read_data.val().get_bits::<32>(133);
        self.x_cq.next = self.ram.read_data.val().get_bits::<4>(165);
        self.x_state.next = self.ram.read_data.val().get_bits::<2>(169);
        self.x_pf.next = self.pf.read_data.val();
        self.n_ci.next = self.x_ci.val();
        self.n_prod.next = self.x_prod.val();
        self.n_msn.next = self.x_msn.val();
        self.n_state.next = self.x_state.val();
        self.n_cq.next = self.x_cq.val();
        self.n_log2.next = self.x_log2.val();
        self.n_base.next = self.x_base.val();
        self.mask.next = (bits::<32>(1) << self.x_log2.val()) - 1;
        self.smask.next = self.k_pn.val() - 1;
        self.cfg_st.next = 0.into(); // QP_OFF
        if self.cfg_on.val() {
            self.cfg_st.next = 1.into(); // QP_ON
        }

        // ---- defaults
        self.cfg_ready.next = false;
        self.db_ready.next = false;
        self.adv_ready.next = false;
        self.req_ready.next = false;
        self.rsp_valid.next = false;
        self.ra.next = self.qp.q.val();
        self.ram.write_enable.next = false;
        self.ram.write_address.next = self.qp.q.val();
        self.pf.write_enable.next = false;
        self.pf.write_address.next = self.qp.q.val();
        self.pf.write_data.next = self.x_ci.val();
        self.dma_rd_cpl_ready.next = true;
        self.fs_go.next = false;
        self.fill0.kill.next = false;
        self.fill1.kill.next = false;
        // The fills: a free one (fill 0 first; fill 1 only with prefetch),
        // and whether one is reading the request's QP.
        self.any_free.next = !self.fill0.busy.val() | (self.k_pf.val() & !self.fill1.busy.val());
        self.go_sel.next = self.fill0.busy.val();
        self.qp_busy.next = (self.fill0.busy.val() & (self.fill0.qp.val() == self.qp.q.val()))
            | (self.fill1.busy.val() & (self.fill1.qp.val() == self.qp.q.val()));
        // The request on offer stays until taken; then fill 0's, if any.
        self.rq_now.next = self.rq_sel.q.val();
        if !(self.fill0.req_valid.val() & !self.rq_sel.q.val())
            & !(self.fill1.req_valid.val() & self.rq_sel.q.val())
        {
            self.rq_now.next = !self.fill0.req_valid.val();
        }
        self.rq_sel.d.next = self.rq_now.val();
        self.dma_rd_req_valid.next = self.fill0.req_valid.val();
        self.dma_rd_req_addr.next = self.fill0.req_addr.val();
        self.dma_rd_req_len.next = self.fill0.req_len.val();
        self.dma_rd_req_tag.next = self.k_tag.val();
        if self.rq_now.val() {
            self.dma_rd_req_valid.next = self.fill1.req_valid.val();
            self.dma_rd_req_addr.next = self.fill1.req_addr.val();
            self.dma_rd_req_len.next = self.fill1.req_len.val();
            self.dma_rd_req_tag.next = self.k_tag1.val();
        }
        self.fill0.req_ready.next = self.dma_rd_req_ready.val() & !self.rq_now.val();
        self.fill1.req_ready.next = self.dma_rd_req_ready.val() & self.rq_now.val();
        self.m_n.next = self.fill0.n.val();
        if self.m_sel.q.val() {
            self.m_n.next = self.fill1.n.val();
        }
        // The next word (two beats) of the WQE being loaded from the
        // buffer (`beat` counts words there).
        self.rd_a.next = (((bit_cast::<16, QP_BITS>(self.qp.q.val()) << self.k_pl.val())
            | bit_cast::<16, 32>(self.idx.q.val() & self.smask.val()))
            << 3)
            | bit_cast::<16, 3>(self.beat.q.val().get_bits::<3>(0) + 1);

        self.rsp_status.next = self.status.q.val();
        self.rsp_idx.next = self.idx.q.val();
        self.rsp_msn.next = self.msn.q.val();
        self.rsp_cq.next = self.cq.q.val();
        self.rsp_wr_id.next = self.w0.q.val();
        self.rsp_nsge.next = self.w1.q.val().get_bits::<3>(16);
        self.rsp_total.next = self.tsum.q.val().get_bits::<32>(0);
        self.sg.next = self.wsg.q.val().get_bits::<128>(0);
        if self.rsp_sel.val() == 1 {
            self.sg.next = self.wsg.q.val().get_bits::<128>(128);
        }
        if self.rsp_sel.val() == 2 {
            self.sg.next = self.wsg.q.val().get_bits::<128>(256);
        }
        if self.rsp_sel.val() == 3 {
            self.sg.next = self.wsg.q.val().get_bits::<128>(384);
        }
        if self.rsp_sel.val() == 4 {
            self.sg.next = self.wsg.q.val().get_bits::<128>(512);
        }
        if self.rsp_sel.val() == 5 {
            self.sg.next = self.wsg.q.val().get_bits::<128>(640);
        }
        self.bk.next = self.beat.q.val() - 5;
        self.rsp_sge_addr.next = self.sg.val().get_bits::<64>(0);
        self.rsp_sge_len.next = self.sg.val().get_bits::<32>(64);
        self.rsp_sge_lkey.next = self.sg.val().get_bits::<32>(96);
        self.cnt_fetch.next = self.n_fetch.q.val();
        self.cnt_bad_wqe.next = self.n_bad.q.val();

        // RecvWqe::parse's checks on the words read (w2, w3 folded in w23).
        self.bad_now.next = ((self.w1.q.val() & self.k_rsv1.val()) != 0)
            | (self.w1.q.val().get_bits::<8>(16) > self.k_max_sge.val())
            | self.tsum.q.val().get_bits::<3>(32).any()
            | self.w23.q.val();

        // ---- the WQE being answered: from the DMA read (a miss, its
        // first 16 beats, one a clock) or from the buffer (a hit, word
        // `beat` = beats 2 * beat and 2 * beat + 1 a clock).
        self.bv.next = false;
        self.bd.next = self.dma_rd_cpl_data.val();
        if self.state.q.val() == RwState::Cpl {
            self.bv.next = self.fill0.take.val();
            if self.m_sel.q.val() {
                self.bv.next = self.fill1.take.val();
            }
        }
        self.lo.next = self.wbuf.read_data.val().get_bits::<64>(0);
        self.hi.next = self.wbuf.read_data.val().get_bits::<64>(64);
        self.wsh.next = bit_cast::<10, 4>(self.beat.q.val() - 2) << 7;
        if self.state.q.val() == RwState::Load {
            self.beat.d.next = self.beat.q.val() + 1;
            if self.beat.q.val() == 0 {
                self.w0.d.next = self.lo.val();
                self.w1.d.next = self.hi.val();
            }
            if self.beat.q.val() == 1 {
                self.w23.d.next = (self.lo.val() != 0) | (self.hi.val() != 0);
            }
            // Word 2 + k is SGE k, in its place (`wsg` is cleared in
            // `Chk`; the load may stop after the WQE's last SGE).
            if self.beat.q.val() >= 2 {
                self.wsg.d.next = self.wsg.q.val()
                    | (bit_cast::<768, 128>(self.wbuf.read_data.val()) << self.wsh.val());
            }
            // Word 2 + k: SGE k's length in its odd beat, counted if
            // k < num_sge.
            if (self.beat.q.val() >= 2)
                & (bit_cast::<8, 4>(self.beat.q.val() - 2) < self.w1.q.val().get_bits::<8>(16))
            {
                self.tsum.d.next =
                    self.tsum.q.val() + bit_cast::<35, 32>(self.hi.val().get_bits::<32>(0));
            }
        }
        if self.bv.val() {
            if self.beat.q.val() < 15 {
                self.beat.d.next = self.beat.q.val() + 1;
            }
            if self.beat.q.val() == 0 {
                self.w0.d.next = self.bd.val();
            }
            if self.beat.q.val() == 1 {
                self.w1.d.next = self.bd.val();
            }
            if (self.beat.q.val() == 2) | (self.beat.q.val() == 3) {
                self.w23.d.next = self.w23.q.val() | (self.bd.val() != 0);
            }
            if self.beat.q.val() >= 4 {
                self.wsg.d.next =
                    (self.wsg.q.val() >> 64) | (bit_cast::<768, 64>(self.bd.val()) << 704);
            }
            // Beat 5 + 2k: SGE k's length (low half), counted if
            // k < num_sge (beat 1, octet 10).
            if self.beat.q.val().get_bit(0)
                & (self.beat.q.val() >= 5)
                & (bit_cast::<9, 4>(self.bk.val())
                    < (bit_cast::<9, 8>(self.w1.q.val().get_bits::<8>(16)) << 1))
            {
                self.tsum.d.next =
                    self.tsum.q.val() + bit_cast::<35, 32>(self.bd.val().get_bits::<32>(0));
            }
        }

        // ---- a request's lookup (used in Chk): the buffer holds WQE ci
        // when 1 <= pf_end - ci <= k_pn. A hit may start a prefetch of the
        // WQEs after pf_end; a miss reads from ci. Either read stops at
        // the ring's end, at what is posted, at FILL_MAX WQEs and (a
        // prefetch) at the free slots.
        self.pd.next = self.x_pf.val() - self.x_ci.val();
        self.hit.next = self.k_pf.val() & ((self.pd.val() - 1) < self.k_pn.val());
        self.fs_start.next = self.x_ci.val();
        self.fs_n.next = self.k_fmax.val();
        if self.hit.val() {
            self.fs_start.next = self.x_pf.val();
            if (self.k_pn.val() - self.pd.val()) < self.k_fmax.val() {
                self.fs_n.next = self.k_pn.val() - self.pd.val();
            }
        }
        self.fs_av.next = self.x_prod.val() - self.fs_start.val();
        self.fs_rl.next = (self.mask.val() + 1) - (self.fs_start.val() & self.mask.val());
        if self.fs_av.val() < self.fs_n.val() {
            self.fs_n.next = self.fs_av.val();
        }
        if self.fs_rl.val() < self.fs_n.val() {
            self.fs_n.next = self.fs_rl.val();
        }

        match self.state.q.val() {
            RwState::Idle => {
                if self.cfg_valid.val() {
                    // read the record first: the producer index is the
                    // host's (its doorbell) and survives the rewrite
                    self.ra.next = self.cfg_qp.val();
                    self.qp.d.next = self.cfg_qp.val();
                    self.state.d.next = RwState::Cfg;
                } else if self.db_valid.val() {
                    self.db_ready.next = true;
                    self.ra.next = self.db_qp.val();
                    self.qp.d.next = self.db_qp.val();
                    self.val.d.next = self.db_prod.val();
                    self.state.d.next = RwState::Db;
                } else if self.adv_valid.val() {
                    self.adv_ready.next = true;
                    self.ra.next = self.adv_qp.val();
                    self.qp.d.next = self.adv_qp.val();
                    self.flag.d.next = self.adv_err.val();
                    self.state.d.next = RwState::Adv;
                } else if self.req_valid.val() {
                    self.req_ready.next = true;
                    self.ra.next = self.req_qp.val();
                    self.qp.d.next = self.req_qp.val();
                    self.state.d.next = RwState::Chk;
                }
            }
            RwState::Cfg => {
                // The firmware's QP-context write (cfg_* still at the head
                // of its queue). The producer index is kept: receives the
                // host posted while the QP was Idle are not lost (verbs
                // allow ibv_post_recv before RTS; rping posts them before
                // it accepts). A QP that was receiving and stays on (RTS →
                // Closing) keeps its consumer index and expected MSN too;
                // one that starts (Idle → RTS) or stops takes the
                // firmware's (ci 0, MSN 1 at the start of a stream, RFC
                // 5040 §5.1). A new QP starts at producer 0 because the
                // driver rings 0 when it creates it. Its buffered WQEs are
                // dropped (the ring may have moved), and so is a read in
                // flight for it.
                self.cfg_ready.next = true;
                self.c_valid.d.next = false;
                self.ram.write_enable.next = true;
                self.n_state.next = self.cfg_st.val();
                self.n_cq.next = self.cfg_cq.val();
                self.n_log2.next = self.cfg_log2.val();
                self.n_base.next = self.cfg_base.val();
                if !(self.cfg_on.val() & (self.x_state.val() == self.k_on.val())) {
                    self.n_ci.next = self.cfg_ci.val();
                    self.n_msn.next = self.cfg_msn.val();
                }
                self.pf.write_enable.next = true;
                self.pf.write_data.next = self.n_ci.val();
                self.fill0.kill.next = self.fill0.qp.val() == self.qp.q.val();
                self.fill1.kill.next = self.fill1.qp.val() == self.qp.q.val();
                self.state.d.next = RwState::Idle;
            }
            RwState::Db => {
                self.ram.write_enable.next = true;
                self.n_prod.next = self.val.q.val();
                self.state.d.next = RwState::Idle;
            }
            RwState::Adv => {
                self.ram.write_enable.next = true;
                if self.flag.q.val() {
                    self.n_state.next = self.k_err.val();
                } else {
                    self.n_ci.next = self.x_ci.val() + 1;
                    self.n_msn.next = self.x_msn.val() + 1;
                }
                self.state.d.next = RwState::Idle;
            }
            RwState::Chk => {
                self.idx.d.next = self.x_ci.val();
                self.msn.d.next = self.x_msn.val();
                self.cq.d.next = self.x_cq.val();
                self.state.d.next = RwState::Rsp;
                if self.x_state.val() != self.k_on.val() {
                    self.status.d.next = 3.into(); // RSP_QP_ERR
                } else if self.x_ci.val() == self.x_prod.val() {
                    self.status.d.next = 1.into(); // RSP_EMPTY
                } else if self.c_valid.q.val()
                    & (self.c_qp.q.val() == self.qp.q.val())
                    & (self.c_ci.q.val() == self.x_ci.val())
                {
                    // The WQE read for this message's first segment.
                    self.status.d.next = 0.into(); // RSP_OK
                    if self.c_bad.q.val() {
                        self.status.d.next = 2.into(); // RSP_BAD
                    }
                } else if self.hit.val() {
                    self.beat.d.next = 0.into();
                    self.w23.d.next = false;
                    self.tsum.d.next = 0.into();
                    self.wsg.d.next = 0.into();
                    self.rd_a.next = ((bit_cast::<16, QP_BITS>(self.qp.q.val())
                        << self.k_pl.val())
                        | bit_cast::<16, 32>(self.x_ci.val() & self.smask.val()))
                        << 3;
                    self.state.d.next = RwState::Load;
                    // Prefetch: a read of at least k_half WQEs, or of all
                    // that are posted.
                    self.fs_go.next = self.any_free.val()
                        & !self.qp_busy.val()
                        & (self.fs_n.val() != 0)
                        & ((self.fs_n.val() >= self.k_half.val())
                            | (self.fs_n.val() == self.fs_av.val()));
                } else if self.any_free.val() & !self.qp_busy.val() {
                    self.beat.d.next = 0.into();
                    self.w23.d.next = false;
                    self.tsum.d.next = 0.into();
                    self.fs_go.next = true;
                    self.m_sel.d.next = self.go_sel.val();
                    self.state.d.next = RwState::Cpl;
                } else {
                    self.state.d.next = RwState::Wait;
                }
            }
            RwState::Cpl => {
                if self.bv.val() & (self.dma_rd_cpl_last.val() | (self.beat.q.val() == 15)) {
                    // A completion that ends before the WQE's 16th beat, or
                    // whose length is not the read's, is a bad WQE.
                    if (self.beat.q.val() != 15)
                        | (self.dma_rd_cpl_keep.val() != 8)
                        | (self.dma_rd_cpl_last.val() != (self.m_n.val() == 1))
                    {
                        self.w23.d.next = true;
                    }
                    self.state.d.next = RwState::Idle;
                    self.pend.d.next = true;
                }
            }
            RwState::Load => {
                // Words 0 and 1 (the header) and one per SGE: the load ends
                // with the WQE's last SGE (`num_sge` from word 1, valid
                // from beat 1), at word 7 at the latest.
                if (self.beat.q.val() == 7)
                    | ((self.beat.q.val() != 0)
                        & (bit_cast::<8, 4>(self.beat.q.val())
                            == self.w1.q.val().get_bits::<8>(16) + 1))
                {
                    self.state.d.next = RwState::Idle;
                    self.pend.d.next = true;
                }
            }
            RwState::Wait => {
                // Look again once no read of this QP is in flight (its
                // pf_end written a clock before the record is read) and a
                // fill is free.
                if self.any_free.val() & !self.qp_busy.val() {
                    self.state.d.next = RwState::Chk;
                }
            }
            RwState::Rsp => {
                self.rsp_valid.next = true;
                if self.rsp_ready.val() {
                    self.state.d.next = RwState::Idle;
                }
            }
        }
        self.ram.read_address.next = self.ra.val();
        self.pf.read_address.next = self.ra.val();
        self.wbuf.read_address.next = bit_cast::<RA, 16>(self.rd_a.val());
        // The record written (after every update of the n_* fields).
        self.ram.write_data.next = (bit_cast::<171, 2>(self.n_state.val()) << 169)
            | (bit_cast::<171, 4>(self.n_cq.val()) << 165)
            | (bit_cast::<171, 32>(self.n_msn.val()) << 133)
            | (bit_cast::<171, 32>(self.n_prod.val()) << 101)
            | (bit_cast::<171, 32>(self.n_ci.val()) << 69)
            | (bit_cast::<171, 5>(self.n_log2.val()) << 64)
            | bit_cast::<171, 64>(self.n_base.val());
        // The clock after the last beat: the checks see the registered
        // words; the answer goes out from Rsp.
        if (self.state.q.val() == RwState::Idle) & self.pend.q.val() {
            self.pend.d.next = false;
            self.cfg_ready.next = false;
            self.db_ready.next = false;
            self.adv_ready.next = false;
            self.req_ready.next = false;
            self.ram.write_enable.next = false;
            self.state.d.next = RwState::Rsp;
            self.c_valid.d.next = true;
            self.c_qp.d.next = self.qp.q.val();
            self.c_ci.d.next = self.idx.q.val();
            self.c_bad.d.next = self.bad_now.val();
            self.status.d.next = 0.into(); // RSP_OK
            if self.bad_now.val() {
                self.status.d.next = 2.into(); // RSP_BAD
                self.n_bad.d.next = self.n_bad.q.val() + 1;
            }
        }

        // ---- the fills: every beat of a read into the buffer (beats past
        // the requested length are dropped; the completion stream carries
        // one beat a clock, so at most one fill writes); at a read's end,
        // unless it was short or long or its QP was reconfigured
        // meanwhile, the QP's pf_end moves to the end of what it read (not
        // in a Cfg clock, which writes pf itself; fill 0 first).
        self.fill0.mine.next = self.dma_rd_cpl_tag.val() == self.k_tag.val();
        self.fill1.mine.next = self.dma_rd_cpl_tag.val() == self.k_tag1.val();
        self.wr_a.next = (((bit_cast::<16, QP_BITS>(self.fill0.wr_qp.val()) << self.k_pl.val())
            | bit_cast::<16, 8>(self.fill0.wr_slot.val()))
            << 3)
            | bit_cast::<16, 3>(self.fill0.wr_word.val());
        self.wbuf.write_data.next = self.fill0.wr_data.val();
        if self.fill1.wr_en.val() {
            self.wr_a.next = (((bit_cast::<16, QP_BITS>(self.fill1.wr_qp.val())
                << self.k_pl.val())
                | bit_cast::<16, 8>(self.fill1.wr_slot.val()))
                << 3)
                | bit_cast::<16, 3>(self.fill1.wr_word.val());
            self.wbuf.write_data.next = self.fill1.wr_data.val();
        }
        self.wbuf.write_address.next = bit_cast::<RA, 16>(self.wr_a.val());
        self.wbuf.write_enable.next = self.fill0.wr_en.val() | self.fill1.wr_en.val();
        if self.fill0.issued.val() | self.fill1.issued.val() {
            self.n_fetch.d.next = self.n_fetch.q.val() + 1;
        }
        self.fill0.ack.next = false;
        self.fill1.ack.next = false;
        if self.state.q.val() != RwState::Cfg {
            if self.fill0.done.val() {
                self.fill0.ack.next = true;
                self.pf.write_enable.next = self.k_pf.val() & self.fill0.good.val();
                self.pf.write_address.next = self.fill0.qp.val();
                self.pf.write_data.next = self.fill0.pf_end.val();
            } else if self.fill1.done.val() {
                self.fill1.ack.next = true;
                self.pf.write_enable.next = self.k_pf.val() & self.fill1.good.val();
                self.pf.write_address.next = self.fill1.qp.val();
                self.pf.write_data.next = self.fill1.pf_end.val();
            }
        }
        self.fs_slot.next = bit_cast::<8, 32>(self.fs_start.val() & self.smask.val());
        self.fill0.s_addr.next =
            self.x_base.val() + (bit_cast::<64, 32>(self.fs_start.val() & self.mask.val()) << 7);
        self.fill0.s_n.next = self.fs_n.val().get_bits::<8>(0);
        self.fill0.s_qp.next = self.qp.q.val();
        self.fill0.s_start.next = self.fs_start.val();
        self.fill0.s_slot.next = self.fs_slot.val();
        self.fill0.smask.next = self.smask.val().get_bits::<8>(0);
        self.fill1.s_addr.next = self.fill0.s_addr.val();
        self.fill1.s_n.next = self.fill0.s_n.val();
        self.fill1.s_qp.next = self.qp.q.val();
        self.fill1.s_start.next = self.fs_start.val();
        self.fill1.s_slot.next = self.fs_slot.val();
        self.fill1.smask.next = self.fill0.smask.val();
        self.fill0.start.next = self.fs_go.val() & !self.go_sel.val();
        // (fill 1 is never started without prefetch: `k_pf` makes that
        // plain to synthesis, which then drops it)
        self.fill1.start.next = self.fs_go.val() & self.go_sel.val() & self.k_pf.val();
        self.fill0.cpl_valid.next = self.dma_rd_cpl_valid.val();
        self.fill0.cpl_data.next = self.dma_rd_cpl_data.val();
        self.fill0.cpl_keep.next = self.dma_rd_cpl_keep.val();
        self.fill0.cpl_last.next = self.dma_rd_cpl_last.val();
        self.fill1.cpl_valid.next = self.dma_rd_cpl_valid.val();
        self.fill1.cpl_data.next = self.dma_rd_cpl_data.val();
        self.fill1.cpl_keep.next = self.dma_rd_cpl_keep.val();
        self.fill1.cpl_last.next = self.dma_rd_cpl_last.val();
        self.fill0.reset.next = self.reset.val();
        self.fill1.reset.next = self.reset.val();

        if self.reset.val() {
            self.state.d.next = RwState::Idle;
            self.pend.d.next = false;
            self.c_valid.d.next = false;
            self.rq_sel.d.next = false;
            self.n_fetch.d.next = 0.into();
            self.n_bad.d.next = 0.into();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use rnic_wire::abi::wqe::{RecvWqe, Sge, SgeList};
    use std::collections::{HashMap, VecDeque};

    /// Host memory behind the DMA read contract: answers requests after a
    /// random latency, whole, in request order per tag; requests of
    /// different tags that are both due are answered in either order (as
    /// PCIe may), drawn from `pick`.
    #[derive(Default)]
    pub(crate) struct DmaRdServer {
        pub mem: HashMap<u64, u8>,
        /// (ready at cycle, tag, octets)
        q: VecDeque<(u64, u8, Vec<u8>)>,
        cur: Option<(u8, Vec<u8>, usize)>,
        pub reads: Vec<(u64, usize, u8)>,
        pub now: u64,
        pick: u64,
        /// Completions answered out of request order (across tags).
        pub passed: usize,
        /// The most reads outstanding at once.
        pub max_out: usize,
    }

    impl DmaRdServer {
        pub fn write(&mut self, a: u64, b: &[u8]) {
            for (i, &x) in b.iter().enumerate() {
                self.mem.insert(a + i as u64, x);
            }
        }
        pub fn request(&mut self, a: u64, len: usize, tag: u8, rng: &mut Rng) {
            assert!((1..=4096).contains(&len));
            self.reads.push((a, len, tag));
            let d = (0..len)
                .map(|i| *self.mem.get(&(a + i as u64)).unwrap_or(&0))
                .collect();
            self.q
                .push_back((self.now + 5 + rng.below(30) as u64, tag, d));
            self.max_out = self
                .max_out
                .max(self.q.len() + usize::from(self.cur.is_some()));
        }
        /// The beat on offer this clock: (data, keep, last, tag).
        pub fn offer(&mut self) -> Option<(u64, u64, bool, u8)> {
            if self.cur.is_none() {
                // The oldest due request of each tag.
                let mut due: Vec<usize> = Vec::new();
                for (i, x) in self.q.iter().enumerate() {
                    let first_of_tag = !self.q.iter().take(i).any(|y| y.1 == x.1);
                    if first_of_tag && x.0 <= self.now {
                        due.push(i);
                    }
                }
                if !due.is_empty() {
                    self.pick = self
                        .pick
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let i = due[(self.pick >> 33) as usize % due.len()];
                    self.passed += usize::from(i != 0);
                    let (_, t, d) = self.q.remove(i).unwrap();
                    self.cur = Some((t, d, 0));
                }
            }
            let (t, d, off) = self.cur.as_ref()?;
            let n = (d.len() - off).min(8);
            let mut w = [0xA5u8; 8]; // garbage above keep
            w[..n].copy_from_slice(&d[*off..off + n]);
            Some((u64::from_le_bytes(w), n as u64, off + n == d.len(), *t))
        }
        pub fn taken(&mut self) {
            let (_, d, off) = self.cur.as_mut().unwrap();
            *off += 8;
            if *off >= d.len() {
                self.cur = None;
            }
        }
    }

    fn bench<const RA: usize>() -> RecvWqeFetchN<RA> {
        let mut b = RecvWqeFetchN::<RA>::default();
        b.clock.connect();
        b.reset.connect();
        b.cfg_valid.connect();
        b.cfg_qp.connect();
        b.cfg_base.connect();
        b.cfg_log2.connect();
        b.cfg_ci.connect();
        b.cfg_msn.connect();
        b.cfg_cq.connect();
        b.cfg_on.connect();
        b.db_valid.connect();
        b.db_qp.connect();
        b.db_prod.connect();
        b.adv_valid.connect();
        b.adv_qp.connect();
        b.adv_err.connect();
        b.req_valid.connect();
        b.req_qp.connect();
        b.rsp_ready.connect();
        b.rsp_sel.connect();
        b.dma_rd_req_ready.connect();
        b.dma_rd_cpl_valid.connect();
        b.dma_rd_cpl_data.connect();
        b.dma_rd_cpl_keep.connect();
        b.dma_rd_cpl_last.connect();
        b.dma_rd_cpl_tag.connect();
        b.connect_all();
        b.reset.next = true;
        tick!(b);
        tick!(b);
        b.reset.next = false;
        b
    }

    /// One clock with the DMA server attached; returns the response taken
    /// this clock, if any.
    fn clock<const RA: usize>(
        b: &mut RecvWqeFetchN<RA>,
        srv: &mut DmaRdServer,
        rng: &mut Rng,
    ) -> Option<Rsp> {
        let rr = rng.below(100) < 60;
        b.dma_rd_req_ready.next = rr;
        let o = srv.offer().filter(|_| rng.below(100) < 80);
        b.dma_rd_cpl_valid.next = o.is_some();
        if let Some((d, k, l, t)) = o {
            b.dma_rd_cpl_data.next = d.into();
            b.dma_rd_cpl_keep.next = k.into();
            b.dma_rd_cpl_last.next = l;
            b.dma_rd_cpl_tag.next = (t as u64).into();
        }
        let ready = rng.below(100) < 70;
        b.rsp_ready.next = ready;
        assert!(simulate(b, 1000));
        if b.dma_rd_req_valid.val() && rr {
            srv.request(
                b.dma_rd_req_addr.val().to_u64(),
                b.dma_rd_req_len.val().to_u64() as usize,
                b.dma_rd_req_tag.val().to_u64() as u8,
                rng,
            );
        }
        if o.is_some() && b.dma_rd_cpl_ready.val() {
            srv.taken();
        }
        let r = (b.rsp_valid.val() && ready).then(|| {
            // Every SGE slot through `rsp_sel` (no clock), then SGE 0 again.
            let mut sges = [Sge::default(); 6];
            for (k, s) in sges.iter_mut().enumerate() {
                b.rsp_sel.next = (k as u64).into();
                assert!(simulate(b, 1000));
                *s = Sge {
                    addr: b.rsp_sge_addr.val().to_u64(),
                    length: b.rsp_sge_len.val().to_u64() as u32,
                    lkey: b.rsp_sge_lkey.val().to_u64() as u32,
                };
            }
            b.rsp_sel.next = 0.into();
            assert!(simulate(b, 1000));
            Rsp {
                status: b.rsp_status.val().to_u64(),
                idx: b.rsp_idx.val().to_u64() as u32,
                msn: b.rsp_msn.val().to_u64() as u32,
                cq: b.rsp_cq.val().to_u64() as u8,
                wr_id: b.rsp_wr_id.val().to_u64(),
                sges,
                nsge: b.rsp_nsge.val().to_u64() as usize,
                total: b.rsp_total.val().to_u64(),
            }
        });
        tick!(*b);
        srv.now += 1;
        r
    }

    #[derive(Debug)]
    struct Rsp {
        status: u64,
        idx: u32,
        msn: u32,
        cq: u8,
        wr_id: u64,
        sges: [Sge; 6],
        nsge: usize,
        total: u64,
    }

    /// Presents a request port's fields (set by the caller) until taken.
    fn offer<const RA: usize>(
        b: &mut RecvWqeFetchN<RA>,
        srv: &mut DmaRdServer,
        rng: &mut Rng,
        port: usize,
    ) -> Option<Rsp> {
        let mut got = None;
        for _ in 0..200 {
            assert!(simulate(b, 1000));
            let t = [
                b.cfg_ready.val(),
                b.db_ready.val(),
                b.adv_ready.val(),
                b.req_ready.val(),
            ];
            let r = clock(b, srv, rng);
            got = got.or(r);
            if t[port] {
                b.cfg_valid.next = false;
                b.db_valid.next = false;
                b.adv_valid.next = false;
                b.req_valid.next = false;
                return got;
            }
        }
        panic!("port {port} stuck");
    }

    struct QpModel {
        on: bool,
        err: bool,
        base: u64,
        log2: u8,
        ci: u32,
        prod: u32,
        msn: u32,
        cq: u8,
        /// The WQE at `ci` was answered (it may be consumed).
        seen: bool,
    }

    /// Every DMA read since `from` reads 1..=`fill_max` whole WQEs of one
    /// QP's ring, not past its end, all of them posted and not consumed.
    fn check_reads(srv: &DmaRdServer, from: usize, qps: &HashMap<usize, QpModel>, fill_max: usize) {
        for &(a, len, tag) in &srv.reads[from..] {
            // Fill 1's tag only with prefetch (more than one WQE a read).
            assert!(
                tag as u64 == TAG || (fill_max > 1 && tag as u64 == TAG + 1),
                "{tag:x}"
            );
            assert!(
                len % WQE_SIZE == 0 && (1..=fill_max).contains(&(len / WQE_SIZE)),
                "{len}"
            );
            let m = qps
                .values()
                .find(|m| (m.base..m.base + (WQE_SIZE << m.log2) as u64).contains(&a))
                .expect("a read outside every ring");
            let ring = 1u32 << m.log2;
            let slot = ((a - m.base) / WQE_SIZE as u64) as u32;
            assert_eq!(a, m.base + slot as u64 * WQE_SIZE as u64, "misaligned");
            let n = (len / WQE_SIZE) as u32;
            assert!(slot + n <= ring, "read past the ring's end");
            for s in slot..slot + n {
                let ahead = s.wrapping_sub(m.ci) & (ring - 1);
                assert!(
                    ahead < m.prod.wrapping_sub(m.ci),
                    "slot {s} not posted: read {a:x} {len}, ci {} prod {} base {:x}",
                    m.ci,
                    m.prod,
                    m.base
                );
            }
        }
    }

    #[test]
    fn fetches_and_checks_like_recvwqe_parse() {
        let (mut max_out, mut passed) = (0, 0);
        for seed in 7..15 {
            let srv =
                fetches_and_checks::<{ wqe_buf_bits(crate::profile::SIM.rq_prefetch_log2) }>(seed);
            max_out = max_out.max(srv.max_out);
            passed += srv.passed;
        }
        // Both fills were in flight, and completions came back out of
        // request order.
        assert_eq!(max_out, 2);
        assert!(passed > 0);
    }

    /// The board profile's block: no prefetch, one WQE per read.
    #[test]
    fn fetches_and_checks_without_prefetch() {
        let srv = fetches_and_checks::<{ wqe_buf_bits(crate::profile::BOARD.rq_prefetch_log2) }>(8);
        assert_eq!(srv.max_out, 1, "one read in flight without prefetch");
    }

    fn fetches_and_checks<const RA: usize>(seed: u64) -> DmaRdServer {
        let fill_max = if RA > QP_BITS + 4 {
            FILL_MAX as usize
        } else {
            1
        };
        let mut rng = Rng::new(seed);
        let mut b = bench::<RA>();
        let mut srv = DmaRdServer::default();
        let mut qps = HashMap::new();
        for (qp, log2, ci, on) in [
            (0usize, 2u8, 0u32, true),
            (9, 3, u32::MAX - 4, true),
            (63, 1, 100, true),
            (5, 2, 0, false),
        ] {
            let m = QpModel {
                on,
                err: false,
                base: 0x2_0000_0000 + qp as u64 * 0x10000,
                log2,
                ci,
                prod: ci,
                msn: rng.next_u64() as u32,
                cq: rng.below(16) as u8,
                seen: false,
            };
            b.cfg_valid.next = true;
            b.cfg_qp.next = (qp as u64).into();
            b.cfg_base.next = m.base.into();
            b.cfg_log2.next = (m.log2 as u64).into();
            b.cfg_ci.next = (m.ci as u64).into();
            b.cfg_msn.next = (m.msn as u64).into();
            b.cfg_cq.next = (m.cq as u64).into();
            b.cfg_on.next = on;
            offer(&mut b, &mut srv, &mut rng, 0);
            // The host's producer index (a new ring: the driver rings its
            // start); a QP-context write keeps it.
            doorbell(&mut b, &mut srv, &mut rng, qp as u64, m.prod as u64);
            qps.insert(qp, m);
        }
        let mut n_recfg = 0;
        let ids = [0usize, 9, 63, 5];
        let (mut n_ok, mut n_bad, mut n_empty, mut n_err) = (0, 0, 0, 0);
        for step in 0..600 {
            let mut reads = srv.reads.len();
            let qp = ids[rng.below(4)];
            let m = qps.get_mut(&qp).unwrap();
            if std::env::var("RW_DEBUG").is_ok() {
                eprintln!(
                    "step {step} qp {qp} ci {} prod {} err {}",
                    m.ci, m.prod, m.err
                );
            }
            match rng.below(10) {
                0..=2 => {
                    // Post up to the ring's free space; some WQEs malformed.
                    let free = (1u32 << m.log2) - m.prod.wrapping_sub(m.ci);
                    for _ in 0..rng.below(free as usize + 1) {
                        let n = rng.below(7);
                        let sges: Vec<Sge> = (0..n)
                            .map(|_| Sge {
                                addr: rng.next_u64(),
                                length: rng.next_u64() as u32 >> 3,
                                lkey: rng.next_u64() as u32,
                            })
                            .collect();
                        let w = RecvWqe {
                            wr_id: rng.next_u64(),
                            sges: SgeList::new(&sges).unwrap(),
                        };
                        let mut bytes = [0u8; WQE_SIZE];
                        w.emit(&mut bytes).unwrap();
                        // Stale SGE octets beyond num_sge are allowed.
                        if n < 6 {
                            bytes[32 + 16 * n + rng.below(16)] = rng.next_u64() as u8;
                        }
                        match rng.below(9) {
                            0 => {
                                bytes[[8, 9, 11, 12, 16, 23, 24, 31][rng.below(8)]] ^=
                                    1 << rng.below(8)
                            }
                            1 => bytes[10] = 7 + rng.below(249) as u8,
                            2 if n >= 2 => {
                                // Lengths adding up to 2^32 or more.
                                bytes[40..44].copy_from_slice(&u32::MAX.to_le_bytes())
                            }
                            _ => {}
                        }
                        let slot = m.prod & ((1 << m.log2) - 1);
                        srv.write(m.base + slot as u64 * WQE_SIZE as u64, &bytes);
                        m.prod = m.prod.wrapping_add(1);
                    }
                    doorbell(&mut b, &mut srv, &mut rng, qp as u64, m.prod as u64);
                }
                3..=7 => {
                    let r = request(&mut b, &mut srv, &mut rng, qp as u64);
                    if !m.on || m.err {
                        assert_eq!(r.status, RSP_QP_ERR, "step {step}");
                        n_err += 1;
                    } else if m.ci == m.prod {
                        assert_eq!(r.status, RSP_EMPTY, "step {step}");
                        n_empty += 1;
                    } else {
                        let slot = m.ci & ((1 << m.log2) - 1);
                        let a = m.base + slot as u64 * WQE_SIZE as u64;
                        let bytes: Vec<u8> =
                            (0..WQE_SIZE as u64).map(|i| srv.mem[&(a + i)]).collect();
                        assert_eq!((r.idx, r.msn, r.cq), (m.ci, m.msn, m.cq), "step {step}");
                        match RecvWqe::parse(&bytes) {
                            Ok(w) => {
                                assert_eq!(r.status, RSP_OK, "step {step}");
                                assert_eq!(r.wr_id, w.wr_id);
                                assert_eq!(r.nsge, w.sges.as_slice().len());
                                assert_eq!(&r.sges[..r.nsge], w.sges.as_slice());
                                assert_eq!(r.total, w.sges.total_len());
                                n_ok += 1;
                                m.seen = true;
                            }
                            Err(_) => {
                                assert_eq!(r.status, RSP_BAD, "step {step}");
                                assert_eq!(
                                    r.wr_id,
                                    u64::from_le_bytes(bytes[..8].try_into().unwrap())
                                );
                                n_bad += 1;
                                m.seen = true;
                            }
                        }
                    }
                    if m.seen && rng.below(2) == 0 {
                        // Placed: consumed right away.
                        check_reads(&srv, reads, &qps, fill_max);
                        reads = srv.reads.len();
                        let m = qps.get_mut(&qp).unwrap();
                        m.seen = false;
                        m.ci = m.ci.wrapping_add(1);
                        m.msn = m.msn.wrapping_add(1);
                        advance(&mut b, &mut srv, &mut rng, qp as u64, false);
                    }
                }
                8 => {
                    let err = rng.below(16) == 0;
                    if err {
                        m.err = true;
                    } else if m.ci != m.prod && m.seen {
                        // send_place consumes a WQE it was answered.
                        m.seen = false;
                        m.ci = m.ci.wrapping_add(1);
                        m.msn = m.msn.wrapping_add(1);
                    } else {
                        continue;
                    }
                    advance(&mut b, &mut srv, &mut rng, qp as u64, err);
                }
                _ if rng.below(2) == 0 => {
                    // The firmware rewrites the QP context (e.g. RTS →
                    // Closing, Idle → RTS, → Error/off): the producer index
                    // is always kept; a receiving QP that stays on keeps its
                    // consumer index and MSN (the cfg values are ignored),
                    // otherwise they are the firmware's.
                    let on = rng.below(4) != 0;
                    let stays = on && m.on && !m.err;
                    let cfg_msn = rng.next_u64() as u32;
                    let cfg_ci = if stays { rng.next_u64() as u32 } else { m.ci };
                    if !stays {
                        m.msn = cfg_msn;
                        // A restarted queue: what its posted slots hold
                        // changes (any WQE read before must not be used).
                        let ring = 1u32 << m.log2;
                        for j in 0..m.prod.wrapping_sub(m.ci) {
                            let slot = m.ci.wrapping_add(j) & (ring - 1);
                            let a = m.base + slot as u64 * WQE_SIZE as u64;
                            srv.write(a, &rng.next_u64().to_le_bytes());
                        }
                    }
                    m.on = on;
                    m.err = false;
                    m.seen = false;
                    b.cfg_valid.next = true;
                    b.cfg_qp.next = (qp as u64).into();
                    b.cfg_base.next = m.base.into();
                    b.cfg_log2.next = (m.log2 as u64).into();
                    b.cfg_ci.next = (cfg_ci as u64).into();
                    b.cfg_msn.next = (cfg_msn as u64).into();
                    b.cfg_cq.next = (m.cq as u64).into();
                    b.cfg_on.next = on;
                    offer(&mut b, &mut srv, &mut rng, 0);
                    n_recfg += 1;
                }
                _ => {
                    for _ in 0..3 {
                        clock(&mut b, &mut srv, &mut rng);
                    }
                }
            }
            check_reads(&srv, reads, &qps, fill_max);
        }
        assert!(
            n_ok > 20 && n_bad > 3 && n_empty > 3 && n_err > 3 && n_recfg > 3,
            "{n_ok} {n_bad} {n_empty} {n_err} {n_recfg}"
        );
        assert_eq!(b.cnt_fetch.val().to_u64() as usize, srv.reads.len());
        // The cache: fewer reads than answered WQEs (repeated requests).
        assert!(srv.reads.len() < n_ok + n_bad, "cache unused");
        srv
    }

    /// Sends consuming one QP's receives in order: after the first read,
    /// the WQEs come from the buffer, `FILL_MAX` per DMA read, read ahead
    /// of the requests; a request for a one-SGE WQE is answered in about 8
    /// clocks (3 of them loading its header and SGE two beats a clock)
    /// instead of a DMA round trip.
    #[test]
    fn prefetch_reads_ahead_in_batches() {
        let mut rng = Rng::new(3);
        let mut b = bench::<{ wqe_buf_bits(crate::profile::SIM.rq_prefetch_log2) }>();
        let mut srv = DmaRdServer::default();
        let (qp, base, log2) = (5u64, 0x3_0000_0000u64, 6u64);
        // The ring wraps after 4 WQEs.
        cfg_qp(&mut b, &mut srv, &mut rng, (qp, base, log2, 60, true));
        let n = 48u32;
        let ids: Vec<u64> = (0..n)
            .map(|i| post(&mut srv, &mut rng, base, (60 + i) % 64, i as u64))
            .collect();
        doorbell(&mut b, &mut srv, &mut rng, qp, 60 + n as u64);
        let mut waits = Vec::new();
        for (i, &id) in ids.iter().enumerate() {
            let t0 = srv.now;
            let r = request(&mut b, &mut srv, &mut rng, qp);
            waits.push(srv.now - t0);
            assert_eq!(
                (r.status, r.idx, r.wr_id),
                (RSP_OK, 60 + i as u32, id),
                "WQE {i}"
            );
            assert_eq!(r.sges[0].addr, i as u64);
            // The Send's placement takes a while before it consumes it.
            for _ in 0..10 {
                clock(&mut b, &mut srv, &mut rng);
            }
            advance(&mut b, &mut srv, &mut rng, qp, false);
        }
        // 4 to the ring's end, then 8 at a time (the last read may be short).
        assert!(srv.reads.len() <= 1 + (n as usize - 4).div_ceil(FILL_MAX as usize) + 1);
        assert_eq!(
            srv.reads[0],
            (base + 60 * WQE_SIZE as u64, 4 * WQE_SIZE, TAG as u8)
        );
        // Each WQE read once; all reads but the first and last are full.
        let k = srv.reads.len();
        assert!(
            srv.reads[1..k - 1]
                .iter()
                .all(|r| r.1 == FILL_MAX as usize * WQE_SIZE)
                && srv.reads.iter().map(|r| r.1).sum::<usize>() == n as usize * WQE_SIZE,
            "{:x?}",
            srv.reads
        );
        waits.sort();
        let median = waits[waits.len() / 2];
        eprintln!(
            "request → answer: median {median} clocks, max {}",
            waits.last().unwrap()
        );
        assert!(median <= 9, "{waits:?}");
    }

    /// Writes a good one-SGE WQE (SGE address `addr`) into ring slot
    /// `slot`; returns its `wr_id`.
    fn post(srv: &mut DmaRdServer, rng: &mut Rng, base: u64, slot: u32, addr: u64) -> u64 {
        let w = RecvWqe {
            wr_id: rng.next_u64(),
            sges: SgeList::new(&[Sge {
                addr,
                length: 64,
                lkey: 7,
            }])
            .unwrap(),
        };
        let mut bytes = [0u8; WQE_SIZE];
        w.emit(&mut bytes).unwrap();
        srv.write(base + slot as u64 * WQE_SIZE as u64, &bytes);
        w.wr_id
    }

    /// A QP-context write: the ring at `base` of `2^log2` WQEs, consumer
    /// index `ci`, MSN 1, CQ 0.
    fn cfg_qp<const RA: usize>(
        b: &mut RecvWqeFetchN<RA>,
        srv: &mut DmaRdServer,
        rng: &mut Rng,
        (qp, base, log2, ci, on): (u64, u64, u64, u64, bool),
    ) {
        b.cfg_valid.next = true;
        b.cfg_qp.next = qp.into();
        b.cfg_base.next = base.into();
        b.cfg_log2.next = log2.into();
        b.cfg_ci.next = ci.into();
        b.cfg_msn.next = 1.into();
        b.cfg_cq.next = 0.into();
        b.cfg_on.next = on;
        offer(b, srv, rng, 0);
    }

    fn doorbell<const RA: usize>(
        b: &mut RecvWqeFetchN<RA>,
        srv: &mut DmaRdServer,
        rng: &mut Rng,
        qp: u64,
        prod: u64,
    ) {
        b.db_valid.next = true;
        b.db_qp.next = qp.into();
        b.db_prod.next = prod.into();
        offer(b, srv, rng, 1);
    }

    /// `send_place`'s `adv_*`: the WQE at `ci` consumed, or (`err`) the QP
    /// to error.
    fn advance<const RA: usize>(
        b: &mut RecvWqeFetchN<RA>,
        srv: &mut DmaRdServer,
        rng: &mut Rng,
        qp: u64,
        err: bool,
    ) {
        b.adv_valid.next = true;
        b.adv_qp.next = qp.into();
        b.adv_err.next = err;
        offer(b, srv, rng, 2);
    }

    /// A request, clocked until it is answered.
    fn request<const RA: usize>(
        b: &mut RecvWqeFetchN<RA>,
        srv: &mut DmaRdServer,
        rng: &mut Rng,
        qp: u64,
    ) -> Rsp {
        b.req_valid.next = true;
        b.req_qp.next = qp.into();
        let mut r = offer(b, srv, rng, 3);
        while r.is_none() {
            r = clock(b, srv, rng);
        }
        r.unwrap()
    }

    /// A QP-context write while a read of its WQEs is still streaming in:
    /// that read fills no buffer, and the WQEs are read again (the queue
    /// may have been rebuilt, as here).
    #[test]
    fn reconfigured_queue_drops_its_buffer() {
        let mut rng = Rng::new(5);
        let mut b = bench::<{ wqe_buf_bits(crate::profile::SIM.rq_prefetch_log2) }>();
        let mut srv = DmaRdServer::default();
        let (qp, base) = (3u64, 0x4_0000_0000u64);
        cfg_qp(&mut b, &mut srv, &mut rng, (qp, base, 4, 0, true));
        for slot in 0..8 {
            post(&mut srv, &mut rng, base, slot, 1);
        }
        doorbell(&mut b, &mut srv, &mut rng, qp, 8);
        // A miss: one read of 8 WQEs, answered after the first one's beats.
        assert_eq!(request(&mut b, &mut srv, &mut rng, qp).status, RSP_OK);
        assert_eq!(srv.reads.len(), 1);
        assert!(b.fill0.busy.val(), "the read should still be streaming");
        // The queue is rebuilt: off, new WQEs in the same slots, on again.
        cfg_qp(&mut b, &mut srv, &mut rng, (qp, base, 4, 0, false));
        let ids: Vec<u64> = (0..8)
            .map(|s| post(&mut srv, &mut rng, base, s, 1))
            .collect();
        cfg_qp(&mut b, &mut srv, &mut rng, (qp, base, 4, 0, true));
        for _ in 0..300 {
            clock(&mut b, &mut srv, &mut rng);
        }
        let r = request(&mut b, &mut srv, &mut rng, qp);
        assert_eq!((r.status, r.idx, r.wr_id), (RSP_OK, 0, ids[0]));
        assert_eq!(srv.reads.len(), 2);
        advance(&mut b, &mut srv, &mut rng, qp, false);
        let r = request(&mut b, &mut srv, &mut rng, qp);
        assert_eq!((r.status, r.idx, r.wr_id), (RSP_OK, 1, ids[1]));
    }

    #[test]
    fn generates_verilog() {
        let mut u = RecvWqeFetch::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "recv_wqe");
        assert!(v.contains("module recv_wqe("));
        if let Ok(dir) = std::env::var("RX_SEND_VERILOG_DIR") {
            std::fs::write(format!("{dir}/recv_wqe.v"), &v).unwrap();
        }
    }
}
