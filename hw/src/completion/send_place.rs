//! Send placement: consumes `ddp_rx`'s untagged messages (`ut_*`), places
//! Send / Send with Invalidate / Send with SE / Send with SE and Invalidate
//! (QN 0) into the receive WQE's SGE buffers by DMA write, completes the
//! receive WQE (completion record for `cpl_write`) and consumes it; hands
//! incoming Terminates (QN 2) to the firmware and moves their QP to error.
//!
//! Per segment (header fields on `ut_*` with the first beat, QP index =
//! `ut_qpn` < 2^[`QP_BITS`]):
//! 1. QN 1 (Read Request): consumed and counted (`cnt_rreq`); the Read
//!    responder is not part of this block.
//! 2. QN 2 (Terminate, RFC 5040 §5.1 / §7): its first 8 octets (Terminate
//!    Control and the start of the echoed header) go out on `rterm_*`, the
//!    QP moves to error (`adv_err` to `recv_wqe`, `qp_err_*` pulse): nothing
//!    of this QP is placed after it.
//! 3. QN 0: the receive WQE at the QP's consumer index (`req_*`/`rsp_*` of
//!    `recv_wqe`). Checks, in order (RFC 5041 §5.3, §7.2; RFC 5040 §7):
//!    QP off or in error → dropped quietly (`cnt_drop_qp`); no WQE posted →
//!    DDP "Invalid MSN - no buffer available" (1/2/2); MSN != expected →
//!    "Invalid MSN - MSN range is not valid" (1/2/3); malformed WQE → RDMAP
//!    "Catastrophic error, localized to RDMAP Stream" (0/2/7) and an error
//!    completion `LocalQpOperationError`; MO beyond the buffer (sum of the
//!    SGE lengths) → "Invalid MO" (1/2/4), `LocalLengthError`; MO + length
//!    beyond it → "DDP Message too long for available buffer" (1/2/5),
//!    `LocalLengthError`. An error writes nothing of the segment, emits a
//!    Terminate request (`term_*`, same shape as `ddp_rx`'s, with the
//!    segment's DDP/RDMAP header rebuilt from the `ut_*` fields), the error
//!    completion (with `TERM_CAUSE_PRESENT | cause`) when a WQE was
//!    involved, and moves the QP to error.
//! 4. Placement (scatter): message octets `[MO, MO + len)` map onto the
//!    receive WQE's SGEs in order (up to 6; empty ones take nothing): the
//!    SGE holding octet `m` is found by walking the list (`CalcA`, one
//!    clock per SGE passed, `ck`/`cbase`, SGE `rsp_sel` of `recv_wqe`);
//!    one DMA write request per piece, split at SGE ends and 4 KiB bus
//!    boundaries, data packed from the request address through a 24-octet
//!    realigner (one beat per clock, see "Pipeline"). On the segment
//!    with DDP L = 1: completion record (opcode `Recv`, `byte_len` = MO +
//!    len, `WITH_INV` + the STag for the Invalidate opcodes, `SOLICITED` for
//!    the SE opcodes), then the WQE is consumed (`adv_*`: ci + 1, MSN + 1).
//!    The completion record is raised only after the last data beat was
//!    taken, so on an ordered DMA stream the CQE lands after the data.
//!
//! 5. Receive SGEs are checked and translated through the TPT (`chk_*` /
//!    `res_*`, one `Tpt` check port shared in the core). After the length
//!    checks, each SGE with octets is checked whole (`SChk`/`SRes`): the
//!    lkey's entry valid with the key, the region's PD = the QP's
//!    (`ut_pd`), LOCAL_WRITE, `[addr, addr + length)` inside the region and
//!    its page list, no wrap. A refusal: DDP "Local Catastrophic" Terminate
//!    (1/0/0; RFC 5041 §7.2 has no untagged-buffer code for a local buffer
//!    fault, and Linux siw answers a failed receive SGE check this way), the
//!    error completion `LocalProtectionError`, QP to error, nothing of the
//!    segment written. This runs on the message's first segment (MO = 0),
//!    from the last SGE down to SGE 0, so a Send into a bad buffer writes
//!    nothing. Then, on every segment, every piece is translated
//!    (`XChk`/`XRes`): a full TPT check of the octets the piece writes,
//!    giving the bus address and the octets left in its page (pieces also
//!    end at page ends). A piece that starts at the first octet of the SGE
//!    the sweep checked last (the first segment's first piece) takes that
//!    answer instead, and a piece that follows on in the same page the
//!    previous piece's translation, without a TPT round trip.
//!
//! 6. Send with Invalidate / Send with SE and Invalidate (RFC 5040 §5.3,
//!    §6.10): after the message's last segment is placed, its Invalidate
//!    STag goes to the TPT as an invalidation (`IChk`/`IRes`, `chk_inv`):
//!    a valid STag (index, key) of the QP's PD becomes `Invalid` there,
//!    then the completion (`WITH_INV` + STag) is written. Otherwise RDMAP
//!    Remote Protection "STag cannot be Invalidated" (0/1/9), the error
//!    completion `RemoteInvalidRequestError`, QP to error (the data is
//!    placed already). `inv_hold` keeps the TPT from the other clients
//!    from the header of such a segment until then.
//!
//! # Pipeline
//! Two stages, so that a segment's checks and translations overlap the
//! previous segment's data (at MTU 1500 the wire leaves about 12 clocks per
//! segment beyond its data beats; the checks alone take ~16):
//! * **input**: every `ut_*` beat goes to a data queue (`dq`, 64 beats), and
//!   each segment's header fields, with its first beat, to a header queue
//!   (`hq`, 4 segments). The input stops only when one of them is full.
//! * **control** (`state`): takes a header from `hq` and does items 1–6
//!   above (WQE, checks, SGE walk, translation), handing the data stage a
//!   command per piece `{bus address, octets}` (`cq`, 4 commands); the
//!   segment's end rides on its last piece ([`CMD_END_AFTER_BIT`]), or is a
//!   command of its own ([`CMD_END`]) when no piece carries it. A message's
//!   completion record goes into a queue of records (`pcq`, 8), to be sent
//!   by the data stage after the data: flagged on the message's last piece
//!   ([`CMD_CPL_AFTER_BIT`]) and queued in the same clock as the WQE's
//!   advance (`adv_*`), or, after a Send with Invalidate's invalidation, by
//!   a command of its own ([`CMD_CPL`]); the control stage goes on to the
//!   next segment at once. A one-piece Send takes the control stage 10
//!   clocks of its own plus the WQE's answer (6 when `recv_wqe` holds it)
//!   and the TPT's (`SChk`/`SRes`, 5). It waits for the data stage to be idle (every command
//!   done) only before a Terminate request, an error completion, a received
//!   Terminate's report.
//! * **data** (`dstate`): per piece a DMA write header, then its beats
//!   through the realigner (24 octets, so a beat goes in and one out every
//!   clock at any alignment); per segment end, the segment's remaining beats
//!   (through `last`) are taken unwritten and the realigner emptied.
//!
//! A Send with Invalidate's last segment raises `inv_hold` from the clock
//! its header enters `hq` (`inv_pend`), so no FPDU behind it is checked
//! before its invalidation, however far the input runs ahead.
//!
//! Measured (`cargo test --release -p rnic-hw --lib full_size_segments --
//! --nocapture`, every input offered, DMA always ready, TPT at its 4-clock
//! latency): 181.9 clocks per 1436-octet Send segment (MTU 1500; the wire
//! takes 192.2) and 1,118.3 per 8936-octet one (MTU 9000; wire 1,129.8).

use crate::common::fifo::Fifo;
use crate::common::k;
use crate::completion::recv_wqe::QP_BITS;
use rnic_wire::abi::cqe::{
    WcOpcode, WcStatus, CQE_FLAG_SOLICITED, CQE_FLAG_WITH_INV, TERM_CAUSE_PRESENT,
};
use rnic_wire::abi::tpt::ACCESS_LOCAL_WRITE;
use rnic_wire::ddp::{QueueNumber, DDP_VERSION, UNTAGGED_HEADER_LEN};
use rnic_wire::rdmap::{Opcode, RDMAP_VERSION};
use rnic_wire::terminate::{
    DdpError, RemoteOperationError, RemoteProtectionError, TerminateCause, UntaggedBufferError,
};
use rust_hdl::prelude::*;

/// Width of a header-queue entry: opcode 0, ddp_last 4, qn 5, msn 7, mo 39,
/// inv_stag 71, len 103, conn 119, qpn 151, pd 183 (LSB positions).
pub const HQ_W: usize = 215;
/// Width of a data-queue entry: data 0, keep 64, last 68.
pub const DQ_W: usize = 69;
/// Width of a command: kind 0 (0: a piece; bit 0: end of segment, with
/// bit 1: capture the first 8 octets; 2: a completion, [`CMD_CPL`]), n 2
/// (octets of a piece), bus address 18, then two flags of a piece:
/// [`CMD_END_AFTER_BIT`] (the segment ends with it) and [`CMD_CPL_AFTER_BIT`] (and
/// the completion record at `pcq`'s head follows that end).
pub const CQ_W: usize = 84;
/// A piece's flag (bit 82): its segment ends with it, as if a [`CMD_END`]
/// followed (one command instead of two for a segment's last piece).
pub const CMD_END_AFTER_BIT: usize = 82;
/// A piece's flag (bit 83), with [`CMD_END_AFTER_BIT`]: the completion record
/// at `pcq`'s head goes out after the segment's end, as if a [`CMD_CPL`]
/// followed.
pub const CMD_CPL_AFTER_BIT: usize = 83;
// `update` writes these bit positions as literals (rust-hdl does not
// translate a Rust constant there): a change here must change them too.
const _: () = assert!(CMD_END_AFTER_BIT == 82 && CMD_CPL_AFTER_BIT == 83 && CQ_W == 84);
/// Command kind: the end of a segment (its remaining beats are dropped).
pub const CMD_END: u64 = 1;
/// Command kind: the end of a segment, its first 8 octets captured (a
/// Terminate's or Read Request's header for the firmware).
pub const CMD_END_CAPTURE: u64 = 3;
/// Command kind: the completion record at the head of `pcq` goes out (after
/// every earlier command's data).
pub const CMD_CPL: u64 = 2;
/// Width of a pending completion record: cq 0, wr_id 4, byte_len 68, qpn
/// 100, flags 132, imm 140 (LSB positions).
pub const PC_W: usize = 172;

/// The data stage (module doc, "Pipeline").
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum DState {
    /// Waiting for a command.
    Idle,
    /// A piece's DMA write header.
    Hdr,
    /// A piece's data beats through the realigner.
    Data,
    /// The end of a segment: the rest of its beats (through `last`) are
    /// taken without being written; the realigner is emptied.
    End,
    /// A message's completion record (`pcq`'s head) out to `cpl_*`.
    Cpl,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum SpState {
    Idle,
    Req,
    Rsp,
    Decide,
    Calc,
    /// The piece computed in `Calc` goes to the data stage.
    Push,
    /// One clock between `Rsp` and `Decide`: the buffer sums get registered.
    Sum,
    /// Two clocks before `Calc`: the piece's SGE and offset, then its
    /// address and room, get registered (FPGA timing).
    CalcA,
    CalcB,
    /// The segment's end command (after its last piece).
    End,
    Cpl,
    Adv,
    /// A segment placed nowhere: its end command only.
    Drain,
    ErrDrain,
    ErrTerm,
    ErrCpl,
    ErrAdv,
    /// An incoming Terminate: its end command with capture.
    RtRun,
    RtOut,
    /// Local check of the receive WQE's SGE `csel` (whole SGE, TPT).
    SChk,
    SRes,
    /// Translation of the next piece's virtual address (TPT).
    XChk,
    XRes,
    /// Send with Invalidate, last segment placed: invalidate its STag (TPT).
    IChk,
    IRes,
}

fn cause(c: impl Into<TerminateCause>) -> Constant<Bits<16>> {
    Constant::new((c.into().to_bits() as u64).into())
}

#[derive(LogicBlock)]
pub struct SendPlace {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- untagged messages from ddp_rx
    pub ut_data: Signal<In, Bits<64>>,
    pub ut_keep: Signal<In, Bits<4>>,
    pub ut_last: Signal<In, Bit>,
    pub ut_valid: Signal<In, Bit>,
    pub ut_ready: Signal<Out, Bit>,
    pub ut_opcode: Signal<In, Bits<4>>,
    pub ut_ddp_last: Signal<In, Bit>,
    pub ut_qn: Signal<In, Bits<2>>,
    pub ut_msn: Signal<In, Bits<32>>,
    pub ut_mo: Signal<In, Bits<32>>,
    pub ut_inv_stag: Signal<In, Bits<32>>,
    pub ut_len: Signal<In, Bits<16>>,
    pub ut_conn: Signal<In, Bits<32>>,
    pub ut_qpn: Signal<In, Bits<32>>,
    /// The QP's protection domain (from `ddp_rx`, with the first beat).
    pub ut_pd: Signal<In, Bits<32>>,
    // ---- recv_wqe
    pub req_valid: Signal<Out, Bit>,
    pub req_ready: Signal<In, Bit>,
    pub req_qp: Signal<Out, Bits<QP_BITS>>,
    pub rsp_valid: Signal<In, Bit>,
    pub rsp_ready: Signal<Out, Bit>,
    pub rsp_status: Signal<In, Bits<2>>,
    pub rsp_msn: Signal<In, Bits<32>>,
    pub rsp_cq: Signal<In, Bits<4>>,
    pub rsp_wr_id: Signal<In, Bits<64>>,
    pub rsp_nsge: Signal<In, Bits<3>>,
    /// The sum of the WQE's SGE lengths (`recv_wqe`).
    pub rsp_total: Signal<In, Bits<32>>,
    /// SGE `rsp_sel` of the WQE (`recv_wqe`, no clock between; it holds
    /// the WQE until this block's next request).
    pub rsp_sel: Signal<Out, Bits<3>>,
    pub rsp_sge_addr: Signal<In, Bits<64>>,
    pub rsp_sge_len: Signal<In, Bits<32>>,
    pub rsp_sge_lkey: Signal<In, Bits<32>>,
    // ---- TPT check client (a `Tpt` check port, shared in the core)
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
    /// The request on `chk_*` is an invalidation (`Tpt::chk_inv`).
    pub chk_inv: Signal<Out, Bit>,
    /// A Send with Invalidate's last segment is in progress here, from its
    /// header until its STag is invalidated (or the message failed): the
    /// core gives the TPT to no other client meanwhile, so the FPDUs behind
    /// it are checked after the invalidation (RFC 5040 §5.3 / §6.10).
    pub inv_hold: Signal<Out, Bit>,
    pub adv_valid: Signal<Out, Bit>,
    pub adv_ready: Signal<In, Bit>,
    pub adv_qp: Signal<Out, Bits<QP_BITS>>,
    pub adv_err: Signal<Out, Bit>,
    // ---- DMA write
    pub dma_wr_valid: Signal<Out, Bit>,
    pub dma_wr_ready: Signal<In, Bit>,
    pub dma_wr_hdr: Signal<Out, Bit>,
    pub dma_wr_len: Signal<Out, Bits<16>>,
    pub dma_wr_data: Signal<Out, Bits<64>>,
    pub dma_wr_keep: Signal<Out, Bits<4>>,
    pub dma_wr_last: Signal<Out, Bit>,
    // ---- completion records (to cpl_write)
    pub cpl_valid: Signal<Out, Bit>,
    pub cpl_ready: Signal<In, Bit>,
    pub cpl_cq: Signal<Out, Bits<4>>,
    pub cpl_wr_id: Signal<Out, Bits<64>>,
    pub cpl_byte_len: Signal<Out, Bits<32>>,
    pub cpl_qpn: Signal<Out, Bits<32>>,
    pub cpl_opcode: Signal<Out, Bits<8>>,
    pub cpl_status: Signal<Out, Bits<8>>,
    pub cpl_flags: Signal<Out, Bits<8>>,
    pub cpl_imm: Signal<Out, Bits<32>>,
    pub cpl_term: Signal<Out, Bits<32>>,
    // ---- Terminate requests (to TX, like ddp_rx's term_*)
    pub term_valid: Signal<Out, Bit>,
    pub term_ready: Signal<In, Bit>,
    pub term_cause: Signal<Out, Bits<16>>,
    pub term_hdr: Signal<Out, Bits<384>>,
    pub term_seg_len: Signal<Out, Bits<16>>,
    pub term_conn: Signal<Out, Bits<32>>,
    pub term_qpn: Signal<Out, Bits<32>>,
    // ---- incoming Terminates (to firmware)
    pub rterm_valid: Signal<Out, Bit>,
    pub rterm_ready: Signal<In, Bit>,
    pub rterm_conn: Signal<Out, Bits<32>>,
    pub rterm_qpn: Signal<Out, Bits<32>>,
    pub rterm_len: Signal<Out, Bits<16>>,
    /// The Terminate message's first 8 octets (octet i in bits 8i+7..8i):
    /// Terminate Control (RFC 5040 §4.8) and the start of its echo.
    pub rterm_data: Signal<Out, Bits<64>>,
    // ---- QP moved to error (pulse)
    pub qp_err_valid: Signal<Out, Bit>,
    pub qp_err_qpn: Signal<Out, Bits<32>>,
    pub qp_err_conn: Signal<Out, Bits<32>>,
    // ---- counters
    pub cnt_send: Signal<Out, Bits<32>>,
    pub cnt_term_tx: Signal<Out, Bits<32>>,
    pub cnt_term_rx: Signal<Out, Bits<32>>,
    pub cnt_drop_qp: Signal<Out, Bits<32>>,
    pub cnt_rreq: Signal<Out, Bits<32>>,
    /// Sends refused by the local SGE check (TPT fault).
    pub cnt_prot: Signal<Out, Bits<32>>,
    /// STags invalidated by a Send with Invalidate.
    pub cnt_inv: Signal<Out, Bits<32>>,
    /// Send with Invalidate whose STag could not be invalidated.
    pub cnt_inv_err: Signal<Out, Bits<32>>,
    // ---- constants
    k_qn_rreq: Constant<Bits<2>>,
    k_qn_term: Constant<Bits<2>>,
    k_cmd_end: Constant<Bits<CQ_W>>,
    k_cmd_end_capt: Constant<Bits<CQ_W>>,
    k_op_send_inv: Constant<Bits<4>>,
    k_op_send_se: Constant<Bits<4>>,
    k_op_send_se_inv: Constant<Bits<4>>,
    k_hdr_u: Constant<Bits<16>>,
    k_wc_recv: Constant<Bits<8>>,
    k_wc_len_err: Constant<Bits<8>>,
    k_wc_qp_err: Constant<Bits<8>>,
    k_f_sol: Constant<Bits<8>>,
    k_f_inv: Constant<Bits<8>>,
    k_term_present: Constant<Bits<32>>,
    k_c_nobuf: Constant<Bits<16>>,
    k_c_msn: Constant<Bits<16>>,
    k_c_mo: Constant<Bits<16>>,
    k_c_long: Constant<Bits<16>>,
    k_c_wqe: Constant<Bits<16>>,
    k_c_prot: Constant<Bits<16>>,
    k_wc_prot: Constant<Bits<8>>,
    k_c_inv: Constant<Bits<16>>,
    k_wc_inv: Constant<Bits<8>>,
    k_need_lw: Constant<Bits<3>>,
    k_ctl0: Constant<Bits<8>>,
    k_ctl1: Constant<Bits<8>>,
    ones64: Constant<Bits<64>>,
    k_4k: Constant<Bits<32>>,
    // ---- state
    state: DFF<SpState>,
    opcode: DFF<Bits<4>>,
    ddp_last: DFF<Bit>,
    qn: DFF<Bits<2>>,
    msn: DFF<Bits<32>>,
    mo: DFF<Bits<32>>,
    inv: DFF<Bits<32>>,
    len: DFF<Bits<16>>,
    conn: DFF<Bits<32>>,
    qpn: DFF<Bits<32>>,
    w_status: DFF<Bits<2>>,
    w_msn: DFF<Bits<32>>,
    w_cq: DFF<Bits<4>>,
    w_wr_id: DFF<Bits<64>>,
    /// The WQE's SGE count and the sum of its SGE lengths.
    nsge_r: DFF<Bits<3>>,
    tot: DFF<Bits<32>>,
    /// The SGE at hand (`rsp_sel`): checked in `SChk`, walked in `CalcA`,
    /// and the message octet it starts at (`CalcA`).
    ck: DFF<Bits<3>>,
    cbase: DFF<Bits<32>>,
    /// The SGE sweep of `SChk` is through (it runs from the last SGE down
    /// to SGE 0).
    sdone: DFF<Bit>,
    /// The sweep's last answer: the translation of SGE `pre_sge`'s first
    /// octet (`pre_addr`, octets left in its page), which the segment's
    /// first piece uses instead of a TPT round trip when it starts there.
    pre_v: DFF<Bit>,
    pre_sge: DFF<Bits<3>>,
    pre_addr: DFF<Bits<64>>,
    pre_left: DFF<Bits<32>>,
    /// `cbase` + the length of SGE `ck`: where it ends in the message.
    cend: Signal<Local, Bits<33>>,
    m: DFF<Bits<32>>,
    r: DFF<Bits<32>>,
    paddr: DFF<Bits<64>>,
    pn: DFF<Bits<32>>,
    prem: DFF<Bits<32>>,
    /// Register cut (docs/fpga.md, "Why the core clock is 62.5 MHz"):
    /// `min(prem, 8)` and `prem > 8`, updated wherever `prem` is (so the
    /// beat's octet count `g_k` and `dma_wr_last` start from flops, not from
    /// a 32-bit compare of `prem`). Their reset values (0, false) are those
    /// of `prem` = 0.
    gk_r: DFF<Bits<5>>,
    pmore_r: DFF<Bit>,
    gbuf: DFF<Bits<192>>,
    cnt: DFF<Bits<5>>,
    in_done: DFF<Bit>,
    e_cause: DFF<Bits<16>>,
    e_cqe: DFF<Bit>,
    e_status: DFF<Bits<8>>,
    rt_data: DFF<Bits<64>>,
    rt_first: DFF<Bit>,
    c_send: DFF<Bits<32>>,
    c_term_tx: DFF<Bits<32>>,
    c_term_rx: DFF<Bits<32>>,
    c_drop: DFF<Bits<32>>,
    c_rreq: DFF<Bits<32>>,
    c_prot: DFF<Bits<32>>,
    c_inv: DFF<Bits<32>>,
    c_inv_err: DFF<Bits<32>>,
    // ---- local SGE check and translation
    pd: DFF<Bits<32>>,
    key_r: DFF<Bits<32>>,
    t_addr: DFF<Bits<64>>,
    t_avail: DFF<Bits<32>>,
    /// Pieces placed without a TPT round trip of their own: the previous
    /// piece's translation (same page) or the SGE sweep's last answer.
    c_reuse: DFF<Bits<32>>,
    // ---- registered arithmetic (Sum, CalcA, CalcB)
    total_r: DFF<Bits<34>>,
    msg_end_r: DFF<Bits<34>>,
    off_r: DFF<Bits<32>>,
    lsel_r: DFF<Bits<32>>,
    base_r: DFF<Bits<64>>,
    avail_r: DFF<Bits<32>>,
    addr_r: DFF<Bits<64>>,
    /// The piece `Calc` computed: bus address and octets.
    c_addr: DFF<Bits<64>>,
    c_n: DFF<Bits<32>>,
    // ---- pipeline (module doc, "Pipeline")
    /// Segment headers (one per segment, written with its first beat).
    hq: Fifo<Bits<HQ_W>, 2, 3>,
    /// Segment payload beats.
    dq: Fifo<Bits<DQ_W>, 6, 7>,
    /// Commands from the control stage to the data stage.
    cq: Fifo<Bits<CQ_W>, 2, 3>,
    /// Completion records waiting for their `CMD_CPL` (module doc,
    /// "Pipeline"); one per such command in `cq` or in the data stage.
    pcq: Fifo<Bits<PC_W>, 3, 4>,
    /// The control stage's completion record (the current message's).
    rec: Signal<Local, Bits<PC_W>>,
    k_cmd_cpl: Constant<Bits<CQ_W>>,
    hq_in: Signal<Local, Bits<HQ_W>>,
    dq_in: Signal<Local, Bits<DQ_W>>,
    cq_in: Signal<Local, Bits<CQ_W>>,
    /// The next command's octet count.
    cmd_n: Signal<Local, Bits<16>>,
    /// A Send with Invalidate's header entering / leaving `hq`.
    inv_in: Signal<Local, Bit>,
    inv_out: Signal<Local, Bit>,
    /// The input is inside a segment (its next beat is not a first beat).
    mid_r: DFF<Bit>,
    /// Last segments of a Send with Invalidate in `hq` (they hold the TPT
    /// from the other clients, see `inv_hold`).
    inv_pend: DFF<Bits<3>>,
    dstate: DFF<DState>,
    /// The segment ending in `DState::End` is a Terminate: keep its first
    /// 8 octets (`rt_data`).
    d_capt: DFF<Bit>,
    /// The current piece's `CMD_END_AFTER_BIT` and `CMD_CPL_AFTER_BIT`
    /// (`p_cpl` also of an end command, whose flag is 0).
    p_end: DFF<Bit>,
    p_cpl: DFF<Bit>,
    /// The segment's last piece (`Push`), and whether its message's
    /// completion and WQE advance go with it.
    last_pc: Signal<Local, Bit>,
    fast_cpl: Signal<Local, Bit>,
    /// The data stage has done every command handed to it.
    d_idle: Signal<Local, Bit>,
    /// The data stage takes its next command this clock.
    take: Signal<Local, Bit>,
    dd_data: Signal<Local, Bits<64>>,
    dd_keep: Signal<Local, Bits<4>>,
    dd_last: Signal<Local, Bit>,
    dd_valid: Signal<Local, Bit>,
    /// An input beat is taken this clock.
    acc: Signal<Local, Bit>,
    /// The input's segment / `hq`'s head is a Send with Invalidate's last
    /// segment.
    in_inv: Signal<Local, Bit>,
    hq_inv: Signal<Local, Bit>,
    // ---- temporaries
    c_ar: Signal<Local, Bit>,
    c_tr: Signal<Local, Bit>,
    c_ta: Signal<Local, Bit>,
    gear_on: Signal<Local, Bit>,
    in_en: Signal<Local, Bit>,
    in_fire: Signal<Local, Bit>,
    out_fire: Signal<Local, Bit>,
    g_k: Signal<Local, Bits<5>>,
    cnt_after: Signal<Local, Bits<5>>,
    gbuf_after: Signal<Local, Bits<192>>,
    cnt_pop: Signal<Local, Bits<5>>,
    gbuf_pop: Signal<Local, Bits<192>>,
    ins: Signal<Local, Bits<192>>,
    ins_pop: Signal<Local, Bits<192>>,
    ins_keep: Signal<Local, Bits<192>>,
    cnt_in: Signal<Local, Bits<5>>,
    cnt_in_pop: Signal<Local, Bits<5>>,
    cnt_in_keep: Signal<Local, Bits<5>>,
    masked: Signal<Local, Bits<64>>,
    total: Signal<Local, Bits<34>>,
    msg_end: Signal<Local, Bits<34>>,
    off: Signal<Local, Bits<32>>,
    avail: Signal<Local, Bits<32>>,
    addr: Signal<Local, Bits<64>>,
    to4k: Signal<Local, Bits<32>>,
    n: Signal<Local, Bits<32>>,
    rs_inv: Signal<Local, Bits<32>>,
    rs_qn: Signal<Local, Bits<32>>,
    rs_msn: Signal<Local, Bits<32>>,
    rs_mo: Signal<Local, Bits<32>>,
    ctl0: Signal<Local, Bits<8>>,
    s_len: Signal<Local, Bits<32>>,
    x_len: Signal<Local, Bits<32>>,
    is_inv: Signal<Local, Bit>,
}

impl Default for SendPlace {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
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
            req_valid: Default::default(),
            req_ready: Default::default(),
            req_qp: Default::default(),
            rsp_valid: Default::default(),
            rsp_ready: Default::default(),
            rsp_status: Default::default(),
            rsp_msn: Default::default(),
            rsp_cq: Default::default(),
            rsp_wr_id: Default::default(),
            rsp_nsge: Default::default(),
            rsp_total: Default::default(),
            rsp_sel: Default::default(),
            rsp_sge_addr: Default::default(),
            rsp_sge_len: Default::default(),
            rsp_sge_lkey: Default::default(),
            nsge_r: Default::default(),
            tot: Default::default(),
            ck: Default::default(),
            cbase: Default::default(),
            cend: Default::default(),
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
            chk_inv: Default::default(),
            inv_hold: Default::default(),
            adv_valid: Default::default(),
            adv_ready: Default::default(),
            adv_qp: Default::default(),
            adv_err: Default::default(),
            dma_wr_valid: Default::default(),
            dma_wr_ready: Default::default(),
            dma_wr_hdr: Default::default(),
            dma_wr_len: Default::default(),
            dma_wr_data: Default::default(),
            dma_wr_keep: Default::default(),
            dma_wr_last: Default::default(),
            cpl_valid: Default::default(),
            cpl_ready: Default::default(),
            cpl_cq: Default::default(),
            cpl_wr_id: Default::default(),
            cpl_byte_len: Default::default(),
            cpl_qpn: Default::default(),
            cpl_opcode: Default::default(),
            cpl_status: Default::default(),
            cpl_flags: Default::default(),
            cpl_imm: Default::default(),
            cpl_term: Default::default(),
            term_valid: Default::default(),
            term_ready: Default::default(),
            term_cause: Default::default(),
            term_hdr: Default::default(),
            term_seg_len: Default::default(),
            term_conn: Default::default(),
            term_qpn: Default::default(),
            rterm_valid: Default::default(),
            rterm_ready: Default::default(),
            rterm_conn: Default::default(),
            rterm_qpn: Default::default(),
            rterm_len: Default::default(),
            rterm_data: Default::default(),
            qp_err_valid: Default::default(),
            qp_err_qpn: Default::default(),
            qp_err_conn: Default::default(),
            cnt_send: Default::default(),
            cnt_term_tx: Default::default(),
            cnt_term_rx: Default::default(),
            cnt_drop_qp: Default::default(),
            cnt_rreq: Default::default(),
            cnt_prot: Default::default(),
            cnt_inv: Default::default(),
            cnt_inv_err: Default::default(),
            k_qn_rreq: k(QueueNumber::ReadRequest.value() as u64),
            k_qn_term: k(QueueNumber::Terminate.value() as u64),
            k_cmd_end: k(CMD_END),
            k_cmd_end_capt: k(CMD_END_CAPTURE),
            k_op_send_inv: k(Opcode::SendInvalidate.value() as u64),
            k_op_send_se: k(Opcode::SendSe.value() as u64),
            k_op_send_se_inv: k(Opcode::SendSeInvalidate.value() as u64),
            k_hdr_u: k(UNTAGGED_HEADER_LEN as u64),
            k_wc_recv: k(WcOpcode::Recv as u64),
            k_wc_len_err: k(WcStatus::LocalLengthError as u64),
            k_wc_qp_err: k(WcStatus::LocalQpOperationError as u64),
            k_f_sol: k(CQE_FLAG_SOLICITED as u64),
            k_f_inv: k(CQE_FLAG_WITH_INV as u64),
            k_term_present: k(TERM_CAUSE_PRESENT as u64),
            k_c_nobuf: cause(UntaggedBufferError::InvalidMsnNoBuffer),
            k_c_msn: cause(UntaggedBufferError::InvalidMsnRange),
            k_c_mo: cause(UntaggedBufferError::InvalidMo),
            k_c_long: cause(UntaggedBufferError::MessageTooLong),
            k_c_wqe: cause(RemoteOperationError::CatastrophicLocal),
            // A receive SGE refused by its local check: the peer did nothing
            // wrong and RFC 5041 §7.2 has no untagged-buffer code for it, so
            // DDP Local Catastrophic (1/0/0), as Linux siw answers.
            k_c_prot: cause(DdpError::LocalCatastrophic),
            k_wc_prot: k(WcStatus::LocalProtectionError as u64),
            // The Invalidate STag of a Send with Invalidate that is not a
            // valid STag of this QP's PD: RDMAP Remote Protection Error
            // "STag cannot be Invalidated" (0/1/9, RFC 5040 §4.8, §5.3), as
            // rnic-wire's reference model answers (Linux siw: the same for a
            // PD mismatch); the receive completes with "remote invalid
            // request" (siw: SIW_WC_REM_INV_REQ_ERR).
            k_c_inv: cause(RemoteProtectionError::StagCannotBeInvalidated),
            k_wc_inv: k(WcStatus::RemoteInvalidRequestError as u64),
            k_need_lw: k(ACCESS_LOCAL_WRITE as u64),
            // RFC 5041 §4.3 control octet (T = 0, DV) and RFC 5040 §4.1 RV.
            k_ctl0: k(DDP_VERSION as u64),
            k_ctl1: k((RDMAP_VERSION as u64) << 6),
            ones64: k(u64::MAX),
            k_4k: k(4096),
            state: Default::default(),
            opcode: Default::default(),
            ddp_last: Default::default(),
            qn: Default::default(),
            msn: Default::default(),
            mo: Default::default(),
            inv: Default::default(),
            len: Default::default(),
            conn: Default::default(),
            qpn: Default::default(),
            w_status: Default::default(),
            w_msn: Default::default(),
            w_cq: Default::default(),
            w_wr_id: Default::default(),
            m: Default::default(),
            r: Default::default(),
            paddr: Default::default(),
            pn: Default::default(),
            prem: Default::default(),
            gk_r: Default::default(),
            pmore_r: Default::default(),
            gbuf: Default::default(),
            cnt: Default::default(),
            in_done: Default::default(),
            e_cause: Default::default(),
            e_cqe: Default::default(),
            e_status: Default::default(),
            rt_data: Default::default(),
            rt_first: Default::default(),
            c_send: Default::default(),
            c_term_tx: Default::default(),
            c_term_rx: Default::default(),
            c_drop: Default::default(),
            c_rreq: Default::default(),
            c_prot: Default::default(),
            c_inv: Default::default(),
            c_inv_err: Default::default(),
            pd: Default::default(),
            key_r: Default::default(),
            t_addr: Default::default(),
            sdone: Default::default(),
            pre_v: Default::default(),
            pre_sge: Default::default(),
            pre_addr: Default::default(),
            pre_left: Default::default(),
            t_avail: Default::default(),
            c_reuse: Default::default(),
            total_r: Default::default(),
            msg_end_r: Default::default(),
            off_r: Default::default(),
            lsel_r: Default::default(),
            base_r: Default::default(),
            avail_r: Default::default(),
            addr_r: Default::default(),
            c_addr: Default::default(),
            c_n: Default::default(),
            hq: Default::default(),
            dq: Default::default(),
            cq: Default::default(),
            pcq: Default::default(),
            rec: Default::default(),
            k_cmd_cpl: k(CMD_CPL),
            hq_in: Default::default(),
            dq_in: Default::default(),
            cq_in: Default::default(),
            cmd_n: Default::default(),
            inv_in: Default::default(),
            inv_out: Default::default(),
            mid_r: Default::default(),
            inv_pend: Default::default(),
            dstate: Default::default(),
            d_capt: Default::default(),
            p_end: Default::default(),
            p_cpl: Default::default(),
            last_pc: Default::default(),
            fast_cpl: Default::default(),
            d_idle: Default::default(),
            take: Default::default(),
            dd_data: Default::default(),
            dd_keep: Default::default(),
            dd_last: Default::default(),
            dd_valid: Default::default(),
            acc: Default::default(),
            in_inv: Default::default(),
            hq_inv: Default::default(),
            c_ar: Default::default(),
            c_tr: Default::default(),
            c_ta: Default::default(),
            gear_on: Default::default(),
            in_en: Default::default(),
            in_fire: Default::default(),
            out_fire: Default::default(),
            g_k: Default::default(),
            cnt_after: Default::default(),
            gbuf_after: Default::default(),
            cnt_pop: Default::default(),
            gbuf_pop: Default::default(),
            ins: Default::default(),
            ins_pop: Default::default(),
            ins_keep: Default::default(),
            cnt_in: Default::default(),
            cnt_in_pop: Default::default(),
            cnt_in_keep: Default::default(),
            masked: Default::default(),
            total: Default::default(),
            msg_end: Default::default(),
            off: Default::default(),
            avail: Default::default(),
            addr: Default::default(),
            to4k: Default::default(),
            n: Default::default(),
            rs_inv: Default::default(),
            rs_qn: Default::default(),
            rs_msn: Default::default(),
            rs_mo: Default::default(),
            ctl0: Default::default(),
            s_len: Default::default(),
            x_len: Default::default(),
            is_inv: Default::default(),
        }
    }
}

impl Logic for SendPlace {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, opcode, ddp_last, qn, msn, mo, inv, len, conn, qpn, w_status,
            w_msn, w_cq, w_wr_id, nsge_r, tot, ck, cbase, sdone, pre_v, pre_sge, pre_addr,
            pre_left, m, r, paddr, pn, prem, gbuf, cnt, in_done, gk_r, pmore_r, e_cause, e_cqe,
            e_status, rt_data, rt_first, c_send, c_term_tx, c_term_rx, c_drop, c_rreq, total_r,
            msg_end_r, off_r, lsel_r, base_r, avail_r, addr_r, c_prot, pd, key_r, t_addr, t_avail,
            c_reuse, c_inv, c_inv_err, c_addr, c_n, mid_r, inv_pend, dstate, d_capt, p_end, p_cpl
        );
        clock!(self, clock, hq, dq, cq, pcq);

        // ---- defaults
        self.req_valid.next = false;
        self.req_qp.next = self.qpn.q.val().get_bits::<6>(0);
        self.rsp_ready.next = false;
        self.adv_valid.next = false;
        self.adv_qp.next = self.qpn.q.val().get_bits::<6>(0);
        self.adv_err.next = false;
        self.cpl_valid.next = false;
        self.term_valid.next = false;
        self.rterm_valid.next = false;
        self.qp_err_valid.next = false;
        self.dma_wr_valid.next = false;
        self.dma_wr_hdr.next = false;
        self.dma_wr_len.next = self.pn.q.val().get_bits::<16>(0);
        self.dma_wr_data.next = self.gbuf.q.val().get_bits::<64>(0);

        // The current message's completion record (control registers):
        // `Cpl` queues it in `pcq`, the data stage sends it after the data.
        self.cpl_flags.next = 0.into();
        self.cpl_imm.next = 0.into();
        if (self.opcode.q.val() == self.k_op_send_se.val())
            | (self.opcode.q.val() == self.k_op_send_se_inv.val())
        {
            self.cpl_flags.next = self.k_f_sol.val();
        }
        self.is_inv.next = (self.opcode.q.val() == self.k_op_send_inv.val())
            | (self.opcode.q.val() == self.k_op_send_se_inv.val());
        if self.is_inv.val() {
            self.cpl_flags.next = self.cpl_flags.val() | self.k_f_inv.val();
            self.cpl_imm.next = self.inv.q.val();
        }
        self.rec.next = bit_cast::<PC_W, 4>(self.w_cq.q.val())
            | (bit_cast::<PC_W, 64>(self.w_wr_id.q.val()) << 4)
            | (bit_cast::<PC_W, 32>(self.mo.q.val() + bit_cast::<32, 16>(self.len.q.val())) << 68)
            | (bit_cast::<PC_W, 32>(self.qpn.q.val()) << 100)
            | (bit_cast::<PC_W, 8>(self.cpl_flags.val()) << 132)
            | (bit_cast::<PC_W, 32>(self.cpl_imm.val()) << 140);
        // (`Push`: the piece is its segment's last; it ends a message that
        // completes without an invalidation first)
        self.last_pc.next = self.r.q.val() == self.c_n.q.val();
        self.fast_cpl.next = self.last_pc.val() & self.ddp_last.q.val() & !self.is_inv.val();
        self.pcq.reset.next = self.reset.val();
        self.pcq.data_in.next = self.rec.val();
        self.pcq.write.next = false;
        self.pcq.read.next = false;
        // What `cpl_*` shows by default: the queued record at `pcq`'s head
        // (the data stage's `Cpl`); `ErrCpl` shows the control stage's.
        self.cpl_cq.next = self.pcq.data_out.val().get_bits::<4>(0);
        self.cpl_wr_id.next = self.pcq.data_out.val().get_bits::<64>(4);
        self.cpl_byte_len.next = self.pcq.data_out.val().get_bits::<32>(68);
        self.cpl_qpn.next = self.pcq.data_out.val().get_bits::<32>(100);
        self.cpl_flags.next = self.pcq.data_out.val().get_bits::<8>(132);
        self.cpl_imm.next = self.pcq.data_out.val().get_bits::<32>(140);
        self.cpl_opcode.next = self.k_wc_recv.val();
        self.cpl_status.next = 0.into();
        self.cpl_term.next = 0.into();

        // The Terminate's echo: the segment's untagged DDP header with the
        // RDMAP control octet (RFC 5041 §4.3, RFC 5040 §4.1; big-endian).
        self.rs_inv.next = (self.inv.q.val() << 24)
            | ((self.inv.q.val() & 0xff00) << 8)
            | ((self.inv.q.val() >> 8) & 0xff00)
            | (self.inv.q.val() >> 24);
        self.rs_qn.next = bit_cast::<32, 2>(self.qn.q.val()) << 24;
        self.rs_msn.next = (self.msn.q.val() << 24)
            | ((self.msn.q.val() & 0xff00) << 8)
            | ((self.msn.q.val() >> 8) & 0xff00)
            | (self.msn.q.val() >> 24);
        self.rs_mo.next = (self.mo.q.val() << 24)
            | ((self.mo.q.val() & 0xff00) << 8)
            | ((self.mo.q.val() >> 8) & 0xff00)
            | (self.mo.q.val() >> 24);
        self.ctl0.next = self.k_ctl0.val();
        if self.ddp_last.q.val() {
            self.ctl0.next = self.k_ctl0.val() | 0x40;
        }
        self.term_cause.next = self.e_cause.q.val();
        self.term_hdr.next = (bit_cast::<384, 32>(self.rs_mo.val()) << 112)
            | (bit_cast::<384, 32>(self.rs_msn.val()) << 80)
            | (bit_cast::<384, 32>(self.rs_qn.val()) << 48)
            | (bit_cast::<384, 32>(self.rs_inv.val()) << 16)
            | (bit_cast::<384, 8>(self.k_ctl1.val() | bit_cast::<8, 4>(self.opcode.q.val())) << 8)
            | bit_cast::<384, 8>(self.ctl0.val());
        self.term_seg_len.next = self.len.q.val() + self.k_hdr_u.val();
        self.term_conn.next = self.conn.q.val();
        self.term_qpn.next = self.qpn.q.val();
        self.rterm_conn.next = self.conn.q.val();
        self.rterm_qpn.next = self.qpn.q.val();
        self.rterm_len.next = self.len.q.val();
        self.rterm_data.next = self.rt_data.q.val();
        self.qp_err_qpn.next = self.qpn.q.val();
        self.qp_err_conn.next = self.conn.q.val();

        self.cnt_send.next = self.c_send.q.val();
        self.cnt_term_tx.next = self.c_term_tx.q.val();
        self.cnt_term_rx.next = self.c_term_rx.q.val();
        self.cnt_drop_qp.next = self.c_drop.q.val();
        self.cnt_rreq.next = self.c_rreq.q.val();
        self.cnt_prot.next = self.c_prot.q.val();
        self.cnt_inv.next = self.c_inv.q.val();
        self.cnt_inv_err.next = self.c_inv_err.q.val();

        // ---- TPT client: SGE checks (SChk) and piece translation (XChk)
        self.chk_valid.next = false;
        self.res_ready.next = false;
        self.chk_pd.next = self.pd.q.val();
        self.chk_need.next = self.k_need_lw.val();
        self.rsp_sel.next = self.ck.q.val();
        self.s_len.next = self.rsp_sge_len.val();
        self.chk_stag.next = self.rsp_sge_lkey.val();
        self.chk_to.next = self.rsp_sge_addr.val();
        self.chk_len.next = self.s_len.val();
        self.x_len.next = self.r.q.val();
        if self.avail_r.q.val() < self.r.q.val() {
            self.x_len.next = self.avail_r.q.val();
        }
        if self.state.q.val() == SpState::XChk {
            self.chk_stag.next = self.key_r.q.val();
            self.chk_to.next = self.addr_r.q.val();
            self.chk_len.next = self.x_len.val();
        }
        // Invalidation: the Invalidate STag, the QP's PD, no right, no range.
        self.chk_inv.next = false;
        if self.state.q.val() == SpState::IChk {
            self.chk_inv.next = true;
            self.chk_stag.next = self.inv.q.val();
            self.chk_need.next = 0.into();
            self.chk_to.next = 0.into();
            self.chk_len.next = 0.into();
        }
        self.inv_hold.next = self.is_inv.val()
            & self.ddp_last.q.val()
            & (self.qn.q.val() == 0)
            & (self.state.q.val() != SpState::Idle)
            & (self.state.q.val() != SpState::Cpl)
            & (self.state.q.val() != SpState::Adv)
            & (self.state.q.val() != SpState::ErrTerm)
            & (self.state.q.val() != SpState::ErrCpl)
            & (self.state.q.val() != SpState::ErrAdv)
            | (self.inv_pend.q.val() != 0);

        // ---- buffer arithmetic (Decide: the latched WQE), registered
        // every clock; `Sum` waits one clock after the WQE is latched so
        // `Decide` sees the sums of the current WQE and segment.
        self.total.next = bit_cast::<34, 32>(self.tot.q.val());
        self.msg_end.next =
            bit_cast::<34, 32>(self.mo.q.val()) + bit_cast::<34, 16>(self.len.q.val());
        self.total_r.d.next = self.total.val();
        self.msg_end_r.d.next = self.msg_end.val();
        // ---- next piece: the SGEs in order, at most to the SGE's end and
        // to the next 4 KiB bus boundary, over three clocks or more (FPGA
        // timing; each stage registered):
        // CalcA: the SGE holding message octet `m` (the walk in the state
        // machine) and the offset in it.
        self.cend.next =
            bit_cast::<33, 32>(self.cbase.q.val()) + bit_cast::<33, 32>(self.rsp_sge_len.val());
        self.off.next = self.m.q.val() - self.cbase.q.val();
        // CalcB: octets left in that SGE, and the bus address.
        self.avail_r.d.next = self.lsel_r.q.val() - self.off_r.q.val();
        self.addr_r.d.next = self.base_r.q.val() + bit_cast::<64, 32>(self.off_r.q.val());
        // Calc works on the translated piece (XRes): bus address, and the
        // octets left in the SGE capped at the end of the region's page.
        self.avail.next = self.t_avail.q.val();
        self.addr.next = self.t_addr.q.val();
        // Calc: n = min(r, avail, to4k) with the three compares in parallel.
        self.to4k.next = self.k_4k.val() - bit_cast::<32, 12>(self.addr.val().get_bits::<12>(0));
        self.c_ar.next = self.avail.val() < self.r.q.val();
        self.c_tr.next = self.to4k.val() < self.r.q.val();
        self.c_ta.next = self.to4k.val() < self.avail.val();
        self.n.next = self.r.q.val();
        if self.c_ar.val() {
            self.n.next = self.avail.val();
        }
        if (self.c_ar.val() & self.c_ta.val()) | (!self.c_ar.val() & self.c_tr.val()) {
            self.n.next = self.to4k.val();
        }

        // ---- input: every beat to `dq`; each segment's header, with its
        // first beat, to `hq`. The control stage works on a segment's
        // header while the data stage still places the segments before it.
        self.hq.reset.next = self.reset.val();
        self.dq.reset.next = self.reset.val();
        self.cq.reset.next = self.reset.val();
        self.ut_ready.next = !self.dq.full.val() & (self.mid_r.q.val() | !self.hq.full.val());
        self.acc.next = self.ut_ready.val() & self.ut_valid.val();
        self.dq_in.next = bit_cast::<DQ_W, 64>(self.ut_data.val())
            | (bit_cast::<DQ_W, 4>(self.ut_keep.val()) << 64);
        self.dq_in.next = self.dq_in.val().replace_bit(68, self.ut_last.val());
        self.dq.data_in.next = self.dq_in.val();
        self.dq.write.next = self.acc.val();
        self.hq_in.next = bit_cast::<HQ_W, 4>(self.ut_opcode.val())
            | (bit_cast::<HQ_W, 2>(self.ut_qn.val()) << 5)
            | (bit_cast::<HQ_W, 32>(self.ut_msn.val()) << 7)
            | (bit_cast::<HQ_W, 32>(self.ut_mo.val()) << 39)
            | (bit_cast::<HQ_W, 32>(self.ut_inv_stag.val()) << 71)
            | (bit_cast::<HQ_W, 16>(self.ut_len.val()) << 103)
            | (bit_cast::<HQ_W, 32>(self.ut_conn.val()) << 119)
            | (bit_cast::<HQ_W, 32>(self.ut_qpn.val()) << 151)
            | (bit_cast::<HQ_W, 32>(self.ut_pd.val()) << 183);
        self.hq_in.next = self.hq_in.val().replace_bit(4, self.ut_ddp_last.val());
        self.hq.data_in.next = self.hq_in.val();
        self.hq.write.next = self.acc.val() & !self.mid_r.q.val();
        if self.acc.val() {
            self.mid_r.d.next = !self.ut_last.val();
        }
        self.hq.read.next = false;
        self.in_inv.next = (self.ut_qn.val() == 0)
            & self.ut_ddp_last.val()
            & ((self.ut_opcode.val() == self.k_op_send_inv.val())
                | (self.ut_opcode.val() == self.k_op_send_se_inv.val()));
        self.hq_inv.next = (self.hq.data_out.val().get_bits::<2>(5) == 0)
            & self.hq.data_out.val().get_bit(4)
            & ((self.hq.data_out.val().get_bits::<4>(0) == self.k_op_send_inv.val())
                | (self.hq.data_out.val().get_bits::<4>(0) == self.k_op_send_se_inv.val()));
        // (one update of `inv_pend` from its two events, after the control
        // stage: a header entering `hq`, one leaving it in `Idle`)
        self.inv_in.next = self.hq.write.val() & self.in_inv.val();
        self.inv_out.next = false;

        // ---- the data stage: commands in order; a piece is a DMA write
        // header and its data beats, the end of a segment takes what is
        // left of it (through `last`).
        self.cq.read.next = false;
        self.cq.write.next = false;
        self.cq_in.next = 0.into();
        self.d_idle.next = (self.cq.count.val() == 0) & (self.dstate.q.val() == DState::Idle);
        self.dd_data.next = self.dq.data_out.val().get_bits::<64>(0);
        self.dd_keep.next = self.dq.data_out.val().get_bits::<4>(64);
        self.dd_last.next = self.dq.data_out.val().get_bit(68);
        self.dd_valid.next = !self.dq.empty.val();
        self.dq.read.next = false;

        // ---- realigner: `cnt` octets in `gbuf` (24 octets) from bit 0;
        // input while it holds at most 16; a data beat pops min(8, rest of
        // the piece). With room for a third beat, a beat can come in and one
        // go out in every clock whatever the alignment (with 16 octets and
        // input only at <= 8, an unaligned stream moved a beat every other
        // clock), and the input does not wait for the late DMA `ready`.
        self.gear_on.next =
            (self.dstate.q.val() == DState::Hdr) | (self.dstate.q.val() == DState::Data);
        // g_k = min(prem, 8), dma_wr_last = prem <= 8, from registers
        self.g_k.next = self.gk_r.q.val();
        self.dma_wr_keep.next = self.g_k.val().get_bits::<4>(0);
        self.dma_wr_last.next = !self.pmore_r.q.val();
        self.out_fire.next = (self.dstate.q.val() == DState::Data)
            & self.dma_wr_ready.val()
            & ((self.cnt.q.val() >= self.g_k.val()) | self.in_done.q.val());
        // FPGA timing: `out_fire` ends in the DMA write `ready`, which comes
        // through the write arbiters late in the clock. The shifts are done
        // for both outcomes from registers (popped: `*_pop`; not: `*_keep`)
        // and `out_fire` only selects between them (2:1 muxes), instead of
        // steering a 192-bit shift by a pop count that depends on it.
        self.cnt_pop.next = 0.into();
        if self.cnt.q.val() > self.g_k.val() {
            self.cnt_pop.next = self.cnt.q.val() - self.g_k.val();
        }
        self.gbuf_pop.next = self.gbuf.q.val() >> (bit_cast::<8, 5>(self.g_k.val()) << 3);
        self.in_en.next = self.gear_on.val() & !self.in_done.q.val() & (self.cnt.q.val() <= 16);
        self.in_fire.next = false;
        self.masked.next = self.dd_data.val();
        if self.dd_keep.val() < 8 {
            self.masked.next = self.dd_data.val()
                & !(self.ones64.val() << (bit_cast::<8, 4>(self.dd_keep.val()) << 3));
        }
        self.ins_pop.next =
            bit_cast::<192, 64>(self.masked.val()) << (bit_cast::<8, 5>(self.cnt_pop.val()) << 3);
        self.ins_keep.next =
            bit_cast::<192, 64>(self.masked.val()) << (bit_cast::<8, 5>(self.cnt.q.val()) << 3);
        self.cnt_in_pop.next = self.cnt_pop.val() + bit_cast::<5, 4>(self.dd_keep.val());
        self.cnt_in_keep.next = self.cnt.q.val() + bit_cast::<5, 4>(self.dd_keep.val());
        self.gbuf_after.next = self.gbuf.q.val();
        self.cnt_after.next = self.cnt.q.val();
        self.ins.next = self.ins_keep.val();
        self.cnt_in.next = self.cnt_in_keep.val();
        if self.out_fire.val() {
            self.gbuf_after.next = self.gbuf_pop.val();
            self.cnt_after.next = self.cnt_pop.val();
            self.ins.next = self.ins_pop.val();
            self.cnt_in.next = self.cnt_in_pop.val();
        }
        if self.gear_on.val() {
            self.in_fire.next = self.in_en.val() & self.dd_valid.val();
            self.dq.read.next = self.in_fire.val();
            self.gbuf.d.next = self.gbuf_after.val();
            self.cnt.d.next = self.cnt_after.val();
            if self.in_fire.val() {
                self.gbuf.d.next = self.gbuf_after.val() | self.ins.val();
                self.cnt.d.next = self.cnt_in.val();
                self.in_done.d.next = self.dd_last.val();
            }
        } else if self.dstate.q.val() == DState::End {
            // The end of a segment takes its remaining beats (through
            // `last`) without storing them; a Terminate's first 8 octets
            // are kept.
            self.dq.read.next = self.dd_valid.val() & !self.in_done.q.val();
            if self.dd_valid.val() & !self.in_done.q.val() {
                self.in_done.d.next = self.dd_last.val();
                self.rt_first.d.next = false;
                if self.rt_first.q.val() & self.d_capt.q.val() {
                    self.rt_data.d.next = self.masked.val();
                }
            }
        }

        match self.dstate.q.val() {
            DState::Idle => {}
            DState::Hdr => {
                self.dma_wr_valid.next = true;
                self.dma_wr_hdr.next = true;
                self.dma_wr_data.next = self.paddr.q.val();
                if self.dma_wr_ready.val() {
                    self.dstate.d.next = DState::Data;
                }
            }
            DState::Data => {
                self.dma_wr_valid.next =
                    (self.cnt.q.val() >= self.g_k.val()) | self.in_done.q.val();
                if self.out_fire.val() {
                    self.prem.d.next = self.prem.q.val() - bit_cast::<32, 5>(self.g_k.val());
                    // the same for prem - g_k: prem <= 8 leaves 0; else
                    // g_k = 8 and prem - 8 is > 8 iff prem > 16
                    self.gk_r.d.next = 8.into();
                    if !self.pmore_r.q.val() {
                        self.gk_r.d.next = 0.into();
                    } else if self.prem.q.val() < 16 {
                        self.gk_r.d.next = self.prem.q.val().get_bits::<5>(0) - 8;
                    }
                    self.pmore_r.d.next = self.prem.q.val() > 16;
                    if !self.pmore_r.q.val() {
                        self.dstate.d.next = DState::Idle;
                        if self.p_end.q.val() {
                            // The segment's last piece: its end, as a
                            // `CMD_END` would.
                            self.d_capt.d.next = false;
                            self.rt_first.d.next = true;
                            self.dstate.d.next = DState::End;
                        }
                    }
                }
            }
            DState::Cpl => {
                // Every earlier command's beats are taken (commands run in
                // order): the completion lands after the message's data.
                // (`pcq` was written with the command, so its head shows
                // when the command does; `empty` only guards it.)
                self.cpl_valid.next = !self.pcq.empty.val();
                if !self.pcq.empty.val() & self.cpl_ready.val() {
                    self.pcq.read.next = true;
                    self.c_send.d.next = self.c_send.q.val() + 1;
                    self.dstate.d.next = DState::Idle;
                }
            }
            DState::End => {
                if self.in_done.q.val() {
                    // Octets a refused or over-long segment left in the
                    // realigner must not leak into the next one.
                    self.cnt.d.next = 0.into();
                    self.gbuf.d.next = 0.into();
                    self.in_done.d.next = false;
                    self.dstate.d.next = DState::Idle;
                    if self.p_cpl.q.val() {
                        self.dstate.d.next = DState::Cpl;
                    }
                }
            }
        }
        // The next command, taken as the current one ends (no idle clock
        // between the pieces of a segment or between segments).
        self.take.next = !self.cq.empty.val()
            & ((self.dstate.q.val() == DState::Idle)
                | ((self.dstate.q.val() == DState::Data)
                    & self.out_fire.val()
                    & !self.pmore_r.q.val()
                    & !self.p_end.q.val())
                | ((self.dstate.q.val() == DState::End)
                    & self.in_done.q.val()
                    & !self.p_cpl.q.val()));
        self.cmd_n.next = self.cq.data_out.val().get_bits::<16>(2);
        if self.take.val() {
            self.cq.read.next = true;
            self.p_end.d.next = self.cq.data_out.val().get_bit(82);
            self.p_cpl.d.next = self.cq.data_out.val().get_bit(83);
            if self.cq.data_out.val().get_bit(0) {
                self.d_capt.d.next = self.cq.data_out.val().get_bit(1);
                self.rt_first.d.next = true;
                self.dstate.d.next = DState::End;
            } else if self.cq.data_out.val().get_bit(1) {
                self.dstate.d.next = DState::Cpl;
            } else {
                self.paddr.d.next = self.cq.data_out.val().get_bits::<64>(18);
                self.pn.d.next = bit_cast::<32, 16>(self.cmd_n.val());
                self.prem.d.next = bit_cast::<32, 16>(self.cmd_n.val());
                self.gk_r.d.next = 8.into();
                if self.cmd_n.val() < 8 {
                    self.gk_r.d.next = self.cq.data_out.val().get_bits::<5>(2);
                }
                self.pmore_r.d.next = self.cmd_n.val() > 8;
                self.dstate.d.next = DState::Hdr;
            }
        }

        // ---- the control stage
        match self.state.q.val() {
            SpState::Idle => {
                if !self.hq.empty.val() {
                    self.hq.read.next = true;
                    self.inv_out.next = self.hq_inv.val();
                    self.opcode.d.next = self.hq.data_out.val().get_bits::<4>(0);
                    self.ddp_last.d.next = self.hq.data_out.val().get_bit(4);
                    self.qn.d.next = self.hq.data_out.val().get_bits::<2>(5);
                    self.msn.d.next = self.hq.data_out.val().get_bits::<32>(7);
                    self.mo.d.next = self.hq.data_out.val().get_bits::<32>(39);
                    self.inv.d.next = self.hq.data_out.val().get_bits::<32>(71);
                    self.len.d.next = self.hq.data_out.val().get_bits::<16>(103);
                    self.conn.d.next = self.hq.data_out.val().get_bits::<32>(119);
                    self.qpn.d.next = self.hq.data_out.val().get_bits::<32>(151);
                    self.pd.d.next = self.hq.data_out.val().get_bits::<32>(183);
                    if self.hq.data_out.val().get_bits::<2>(5) == self.k_qn_term.val() {
                        self.state.d.next = SpState::RtRun;
                    } else if self.hq.data_out.val().get_bits::<2>(5) == self.k_qn_rreq.val() {
                        self.c_rreq.d.next = self.c_rreq.q.val() + 1;
                        self.state.d.next = SpState::Drain;
                    } else if self.hq.data_out.val().get_bits::<26>(157) != 0 {
                        self.c_drop.d.next = self.c_drop.q.val() + 1;
                        self.state.d.next = SpState::Drain;
                    } else {
                        self.state.d.next = SpState::Req;
                    }
                }
            }
            SpState::Req => {
                self.req_valid.next = true;
                if self.req_ready.val() {
                    self.state.d.next = SpState::Rsp;
                }
            }
            SpState::Rsp => {
                self.rsp_ready.next = true;
                if self.rsp_valid.val() {
                    self.w_status.d.next = self.rsp_status.val();
                    self.w_msn.d.next = self.rsp_msn.val();
                    self.w_cq.d.next = self.rsp_cq.val();
                    self.w_wr_id.d.next = self.rsp_wr_id.val();
                    self.nsge_r.d.next = self.rsp_nsge.val();
                    self.tot.d.next = self.rsp_total.val();
                    self.state.d.next = SpState::Sum;
                }
            }
            SpState::Sum => {
                self.state.d.next = SpState::Decide;
            }
            SpState::Decide => {
                // (the SGE walk starts at SGE 0, message octet 0; the
                // checks of a message's first segment at its last SGE)
                self.ck.d.next = 0.into();
                self.cbase.d.next = 0.into();
                self.pre_v.d.next = false;
                self.sdone.d.next = self.nsge_r.q.val() == 0;
                self.e_cqe.d.next = false;
                self.e_status.d.next = self.k_wc_len_err.val();
                self.m.d.next = self.mo.q.val();
                self.r.d.next = bit_cast::<32, 16>(self.len.q.val());
                self.state.d.next = SpState::ErrDrain;
                if self.w_status.q.val() == 3 {
                    // RSP_QP_ERR: the QP is stopped; nothing more is placed.
                    self.c_drop.d.next = self.c_drop.q.val() + 1;
                    self.state.d.next = SpState::Drain;
                } else if self.w_status.q.val() == 1 {
                    // RSP_EMPTY
                    self.e_cause.d.next = self.k_c_nobuf.val();
                } else if self.w_msn.q.val() != self.msn.q.val() {
                    self.e_cause.d.next = self.k_c_msn.val();
                } else if self.w_status.q.val() == 2 {
                    // RSP_BAD
                    self.e_cause.d.next = self.k_c_wqe.val();
                    self.e_cqe.d.next = true;
                    self.e_status.d.next = self.k_wc_qp_err.val();
                } else if bit_cast::<34, 32>(self.mo.q.val()) > self.total_r.q.val() {
                    self.e_cause.d.next = self.k_c_mo.val();
                    self.e_cqe.d.next = true;
                } else if self.msg_end_r.q.val() > self.total_r.q.val() {
                    self.e_cause.d.next = self.k_c_long.val();
                    self.e_cqe.d.next = true;
                } else if self.mo.q.val() == 0 {
                    // The message's first segment: check its whole buffer,
                    // from the last SGE down, so the last answer is the
                    // first SGE's (with octets) translation.
                    self.ck.d.next = self.nsge_r.q.val() - 1;
                    self.state.d.next = SpState::SChk;
                } else {
                    // Later segments: each piece's translation is a full
                    // check of the octets it writes (XChk).
                    self.state.d.next = SpState::CalcA;
                }
            }
            // Local check of each SGE with octets (RFC 5040 §7 / issue 3:
            // lkey → TPT entry valid, key, the QP's PD, LOCAL_WRITE, the
            // whole SGE inside the region), before any octet of the segment
            // is taken: a refused Send writes nothing.
            SpState::SChk => {
                if self.sdone.q.val() {
                    // All checked: place from SGE 0 (CalcA).
                    self.ck.d.next = 0.into();
                    self.cbase.d.next = 0.into();
                    self.state.d.next = SpState::CalcA;
                } else if self.s_len.val() == 0 {
                    self.ck.d.next = self.ck.q.val() - 1;
                    self.sdone.d.next = self.ck.q.val() == 0;
                } else {
                    self.chk_valid.next = true;
                    if self.chk_ready.val() {
                        self.state.d.next = SpState::SRes;
                    }
                }
            }
            SpState::SRes => {
                self.res_ready.next = true;
                if self.res_valid.val() {
                    if self.res_fault.val() != 0 {
                        self.c_prot.d.next = self.c_prot.q.val() + 1;
                        self.e_cause.d.next = self.k_c_prot.val();
                        self.e_cqe.d.next = true;
                        self.e_status.d.next = self.k_wc_prot.val();
                        self.state.d.next = SpState::ErrDrain;
                    } else {
                        self.pre_v.d.next = true;
                        self.pre_sge.d.next = self.ck.q.val();
                        self.pre_addr.d.next = self.res_addr.val();
                        self.pre_left.d.next = self.res_page_left.val();
                        self.ck.d.next = self.ck.q.val() - 1;
                        self.sdone.d.next = self.ck.q.val() == 0;
                        self.state.d.next = SpState::SChk;
                        if self.ck.q.val() == 0 {
                            // SGE 0 was the last to check: place from it
                            // (as `SChk` would with `sdone`, a clock later).
                            self.ck.d.next = 0.into();
                            self.state.d.next = SpState::CalcA;
                        }
                    }
                }
            }
            // Translation of the piece at message octet `m`: the TPT walks
            // the region's page list (bus address, octets left in the page).
            SpState::XChk => {
                if self.x_len.val() == 0 {
                    // Nothing left to place (Calc would find n = 0).
                    self.state.d.next = SpState::End;
                } else if self.pre_v.q.val()
                    & (self.pre_sge.q.val() == self.ck.q.val())
                    & (self.off_r.q.val() == 0)
                {
                    // The piece starts at the first octet of the SGE the
                    // sweep checked last (whole, a moment ago): its answer
                    // is this translation.
                    self.pre_v.d.next = false;
                    self.c_reuse.d.next = self.c_reuse.q.val() + 1;
                    self.t_addr.d.next = self.pre_addr.q.val();
                    self.t_avail.d.next = self.avail_r.q.val();
                    if self.pre_left.q.val() < self.avail_r.q.val() {
                        self.t_avail.d.next = self.pre_left.q.val();
                    }
                    self.state.d.next = SpState::Calc;
                } else {
                    self.chk_valid.next = true;
                    if self.chk_ready.val() {
                        self.state.d.next = SpState::XRes;
                    }
                }
            }
            SpState::XRes => {
                self.res_ready.next = true;
                if self.res_valid.val() {
                    self.t_addr.d.next = self.res_addr.val();
                    self.t_avail.d.next = self.avail_r.q.val();
                    if self.res_page_left.val() < self.avail_r.q.val() {
                        self.t_avail.d.next = self.res_page_left.val();
                    }
                    self.state.d.next = SpState::Calc;
                    if self.res_fault.val() != 0 {
                        // Only if the entry changed since SChk (the firmware
                        // rewrote it mid-segment): stop here.
                        self.c_prot.d.next = self.c_prot.q.val() + 1;
                        self.e_cause.d.next = self.k_c_prot.val();
                        self.e_cqe.d.next = true;
                        self.e_status.d.next = self.k_wc_prot.val();
                        self.state.d.next = SpState::ErrDrain;
                    }
                }
            }
            SpState::CalcA => {
                // Pass the SGEs that end at or before octet `m` (empty
                // ones too); with nothing left to place (`r` = 0) XChk
                // ends the segment whichever SGE this is.
                if (bit_cast::<33, 32>(self.m.q.val()) >= self.cend.val())
                    & (self.r.q.val() != 0)
                    & (self.ck.q.val() != 5)
                {
                    self.cbase.d.next = self.cend.val().get_bits::<32>(0);
                    self.ck.d.next = self.ck.q.val() + 1;
                } else {
                    self.off_r.d.next = self.off.val();
                    self.lsel_r.d.next = self.rsp_sge_len.val();
                    self.base_r.d.next = self.rsp_sge_addr.val();
                    self.key_r.d.next = self.rsp_sge_lkey.val();
                    self.state.d.next = SpState::CalcB;
                }
            }
            SpState::CalcB => {
                self.state.d.next = SpState::XChk;
            }
            SpState::Calc => {
                self.c_addr.d.next = self.addr.val();
                self.c_n.d.next = self.n.val();
                if self.n.val() == 0 {
                    // All placed (an empty SGE cannot take octets: n = 0
                    // with octets left only if the checks were bypassed).
                    self.state.d.next = SpState::End;
                } else {
                    self.state.d.next = SpState::Push;
                }
            }
            SpState::Push => {
                // The segment's last piece carries its end; if it ends a
                // message (not a Send with Invalidate, whose STag is
                // invalidated first), the completion and the WQE's advance
                // go in the same clock (`CMD_CPL_AFTER_BIT`, `pcq`, `adv_*`).
                self.cq_in.next = (bit_cast::<CQ_W, 64>(self.c_addr.q.val()) << 18)
                    | (bit_cast::<CQ_W, 16>(self.c_n.q.val().get_bits::<16>(0)) << 2)
                    | (bit_cast::<CQ_W, 1>(self.last_pc.val().into()) << 82)
                    | (bit_cast::<CQ_W, 1>(self.fast_cpl.val().into()) << 83);
                self.adv_valid.next =
                    self.fast_cpl.val() & !self.cq.full.val() & !self.pcq.full.val();
                if !self.cq.full.val()
                    & (!self.fast_cpl.val() | (!self.pcq.full.val() & self.adv_ready.val()))
                {
                    self.cq.write.next = true;
                    self.pcq.write.next = self.fast_cpl.val();
                    self.m.d.next = self.m.q.val() + self.c_n.q.val();
                    self.r.d.next = self.r.q.val() - self.c_n.q.val();
                    self.state.d.next = SpState::CalcA;
                    // A piece cut only by the 4 KiB DMA-write boundary
                    // (octets left in both the SGE and the region's page):
                    // the next piece follows on in the same page, so it
                    // reuses this translation instead of a new TPT round
                    // trip (XChk/XRes).
                    self.t_addr.d.next = self.t_addr.q.val() + bit_cast::<64, 32>(self.c_n.q.val());
                    self.t_avail.d.next = self.t_avail.q.val() - self.c_n.q.val();
                    // The segment's last piece (the walk would find nothing
                    // left to place): its end went with it.
                    if self.last_pc.val() {
                        self.state.d.next = SpState::Idle;
                        if self.ddp_last.q.val() & self.is_inv.val() {
                            self.state.d.next = SpState::IChk;
                        }
                    } else if self.t_avail.q.val() != self.c_n.q.val() {
                        self.c_reuse.d.next = self.c_reuse.q.val() + 1;
                        self.state.d.next = SpState::Calc;
                    }
                }
            }
            SpState::End => {
                // The segment's end command: the data stage takes the rest
                // of the segment (extra beats of a stream longer than
                // `ut_len` are dropped there).
                self.cq_in.next = self.k_cmd_end.val();
                if !self.cq.full.val() {
                    self.cq.write.next = true;
                    if self.ddp_last.q.val() & self.is_inv.val() {
                        self.state.d.next = SpState::IChk;
                    } else if self.ddp_last.q.val() {
                        self.state.d.next = SpState::Cpl;
                    } else {
                        self.state.d.next = SpState::Idle;
                    }
                }
            }
            // Send with Invalidate (RFC 5040 §5.3, §6.10): the message is
            // placed and checked; its Invalidate STag is invalidated before
            // the completion is written. The STag must be a valid STag (index,
            // key) of the QP's PD, else "STag cannot be Invalidated": the
            // Terminate, an error completion, the QP to error.
            SpState::IChk => {
                self.chk_valid.next = true;
                if self.chk_ready.val() {
                    self.state.d.next = SpState::IRes;
                }
            }
            SpState::IRes => {
                self.res_ready.next = true;
                if self.res_valid.val() {
                    if self.res_fault.val() == 0 {
                        self.c_inv.d.next = self.c_inv.q.val() + 1;
                        self.state.d.next = SpState::Cpl;
                    } else {
                        self.c_inv_err.d.next = self.c_inv_err.q.val() + 1;
                        self.e_cause.d.next = self.k_c_inv.val();
                        self.e_cqe.d.next = true;
                        self.e_status.d.next = self.k_wc_inv.val();
                        self.state.d.next = SpState::ErrTerm;
                    }
                }
            }
            SpState::Cpl => {
                // The record waits in `pcq` for the data stage, which sends
                // it after the message's last data beat (its `CMD_CPL`
                // follows the message's commands): on an ordered DMA stream
                // the CQE lands after the data. The control stage goes on.
                self.cq_in.next = self.k_cmd_cpl.val();
                if !self.cq.full.val() & !self.pcq.full.val() {
                    self.cq.write.next = true;
                    self.pcq.write.next = true;
                    self.state.d.next = SpState::Adv;
                }
            }
            SpState::Adv => {
                self.adv_valid.next = true;
                if self.adv_ready.val() {
                    self.state.d.next = SpState::Idle;
                }
            }
            SpState::Drain => {
                self.cq_in.next = self.k_cmd_end.val();
                if !self.cq.full.val() {
                    self.cq.write.next = true;
                    self.state.d.next = SpState::Idle;
                }
            }
            SpState::ErrDrain => {
                self.cq_in.next = self.k_cmd_end.val();
                if !self.cq.full.val() {
                    self.cq.write.next = true;
                    self.state.d.next = SpState::ErrTerm;
                }
            }
            SpState::ErrTerm => {
                // Once the data stage is through the segment (and any
                // octets placed before the error).
                self.term_valid.next = self.d_idle.val();
                if self.d_idle.val() & self.term_ready.val() {
                    self.c_term_tx.d.next = self.c_term_tx.q.val() + 1;
                    if self.e_cqe.q.val() {
                        self.state.d.next = SpState::ErrCpl;
                    } else {
                        self.state.d.next = SpState::ErrAdv;
                    }
                }
            }
            SpState::ErrCpl => {
                // (the data stage is idle: `ErrTerm` waited for it)
                self.cpl_valid.next = true;
                self.cpl_cq.next = self.w_cq.q.val();
                self.cpl_wr_id.next = self.w_wr_id.q.val();
                self.cpl_qpn.next = self.qpn.q.val();
                self.cpl_status.next = self.e_status.q.val();
                self.cpl_byte_len.next = 0.into();
                self.cpl_flags.next = 0.into();
                self.cpl_imm.next = 0.into();
                self.cpl_term.next =
                    self.k_term_present.val() | bit_cast::<32, 16>(self.e_cause.q.val());
                if self.cpl_ready.val() {
                    self.state.d.next = SpState::ErrAdv;
                }
            }
            SpState::ErrAdv => {
                self.adv_valid.next = true;
                self.adv_err.next = true;
                if self.adv_ready.val() {
                    self.qp_err_valid.next = true;
                    self.state.d.next = SpState::Idle;
                }
            }
            SpState::RtRun => {
                self.cq_in.next = self.k_cmd_end_capt.val();
                if !self.cq.full.val() {
                    self.cq.write.next = true;
                    self.state.d.next = SpState::RtOut;
                }
            }
            SpState::RtOut => {
                // `rt_data` holds the Terminate's first octets once the data
                // stage is through it.
                self.rterm_valid.next = self.d_idle.val();
                if self.d_idle.val() & self.rterm_ready.val() {
                    self.c_term_rx.d.next = self.c_term_rx.q.val() + 1;
                    if self.qpn.q.val().get_bits::<26>(6) == 0 {
                        self.state.d.next = SpState::ErrAdv;
                    } else {
                        self.qp_err_valid.next = true;
                        self.state.d.next = SpState::Idle;
                    }
                }
            }
        }

        self.cq.data_in.next = self.cq_in.val();
        self.inv_pend.d.next = self.inv_pend.q.val();
        if self.inv_in.val() & !self.inv_out.val() {
            self.inv_pend.d.next = self.inv_pend.q.val() + 1;
        }
        if self.inv_out.val() & !self.inv_in.val() {
            self.inv_pend.d.next = self.inv_pend.q.val() - 1;
        }

        if self.reset.val() {
            self.state.d.next = SpState::Idle;
            self.dstate.d.next = DState::Idle;
            self.mid_r.d.next = false;
            self.inv_pend.d.next = 0.into();
            self.in_done.d.next = false;
            self.cnt.d.next = 0.into();
            self.gbuf.d.next = 0.into();
            self.c_send.d.next = 0.into();
            self.c_term_tx.d.next = 0.into();
            self.c_term_rx.d.next = 0.into();
            self.c_drop.d.next = 0.into();
            self.c_rreq.d.next = 0.into();
            self.c_prot.d.next = 0.into();
            self.c_inv.d.next = 0.into();
            self.c_inv_err.d.next = 0.into();
        }
    }
}
