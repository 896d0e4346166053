//! TX segmentation: turns a WQE (from `WqeFetch`) into one `TxFramer`
//! descriptor per DDP segment, issues one payload DMA read per segment, and
//! keeps each QP's stream state (`snd_nxt` = TCP sequence number of the next
//! FPDU, the MSNs of QN 0 and QN 1).
//!
//! Segmentation is `rnic_wire::model::TxStream::send`'s (checked segment by
//! segment in the tests):
//! * ULPDU (DDP header + payload) at most MULPDU octets (RFC 5041 §5.2, RFC
//!   5044 §4.5); L = 1 on the last segment (RFC 5041 §4.1); a zero-length
//!   message is one segment with no payload (RFC 5040 §4.1).
//! * Tagged (RDMA Write, opcode 0): STag and TO = WQE TO + octets before
//!   (RFC 5041 §4.2). Untagged (Send family, QN 0; Read Request, QN 1):
//!   MSN = the queue's next MSN, incremented once per message, MO = octets
//!   before (RFC 5041 §4.3).
//! * RDMA Read: one Read Request (RFC 5040 §4.4) whose 28-octet RDMAP header
//!   {SinkSTag = SGE lkey, SinkTO = SGE address, RDMARDSZ = SGE length,
//!   SrcSTag, SrcTO} is generated here as the segment's payload.
//! * `snd_nxt` moves by the FPDU's wire length, `4 * ceil((2 + ULPDU) / 4)
//!   plus 4` (length field, pad, CRC), plus 4 for each marker that falls
//!   inside it when markers are on (RFC 5044 §4.3: a marker where
//!   `(seq - SeqStart) mod 512 == 0`, also in front of the FPDU, never
//!   after its CRC).
//!
//! Gather (up to `MAX_SGE_PER_WQE` = 6 SGEs): a Write's or Send's message
//! is the concatenation of its SGEs in order (`wqe_len` octets, the sum of
//! their lengths; zero-length SGEs are skipped). The block walks the list
//! with its own index (`sge_sel` → `WqeFetch::wqe_sge_*`). A segment never
//! spans two SGEs: it is cut at an SGE's end as at a page end (one bus
//! address per FPDU, which `tx_log` replays from; RFC 5041 §5.2 bounds a
//! segment only by MULPDU, so a shorter one is legal), so the FPDUs are
//! `TxStream::send`'s with extra cuts at the SGE ends and page ends; the
//! peer places the same octets.
//!
//! Send-side SGE checks (docs/rtl.md "Send-side SGE checks and
//! translation"): before any octet of a message is read, every SGE with
//! octets is checked through the TPT check unit (`chk_*`/`res_*`) —
//! `{lkey, the QP's PD (pd_wr_*), addr, length}`, the whole SGE
//! (`TptEntry::check`: entry valid, key, PD, bounds without wrap); a data
//! SGE needs no access bit (local read is implied by registration), an
//! RDMA Read's sink SGE needs LOCAL_WRITE. The sweep runs from the last SGE
//! to the first (`Skip`, `PSel`, `Chk`, `Res` with `pre`), so its last
//! answer is the first SGE's translation. Payload reads go to the
//! translated bus address, and a segment is cut at every page end of the
//! region (one read and one `tx_log` address per FPDU); the next page, or
//! the next SGE (`Nxt`), is translated (and checked again) when a segment
//! ends at a page or SGE end. A refused SGE: completion
//! `LocalProtectionError`, nothing read or sent, then the QP's send side
//! off (`off_*`).
//!
//! Inline WQEs (`WqeFetch::wqe_inl`, `abi::wqe::WQE_FLAG_INLINE`): the
//! message is one SGE whose address is a bus address in the send ring
//! (the WQE's own octets 32..), so `Skip` goes straight to `Seg` with it,
//! without the TPT check and translation; segments are cut as for any SGE,
//! their reads are marked `dma_rd_req_inl` (`InlineRd` answers them from
//! the held WQE), and `tx_log` records the ring address, which a
//! retransmission reads again.
//!
//! Simplified paths (documented limits): an RDMA Read's sink is one SGE
//! (a Read with `num_sge != 1`, and the immediate-data opcodes get an error
//! completion with `LocalQpOperationError`, as do WQEs `WqeFetch` marks bad
//! and a QP whose MULPDU is below 64; `CAPS[23:16]` = 1 tells the driver,
//! which refuses more).
//!
//! Per-QP state (`cfg_*`, written by the firmware at connection setup; a
//! `cfg` write wins over the block's own write-back): `seq` (snd_nxt),
//! `msn_send`, `msn_rreq`, `seq_start`, `mulpdu`, `mk_en`, `crc_en`.
//!
//! Payload DMA reads (tag [`PAY_TAG`] | slot): up to 8 in flight (the
//! profile's `tx_slots_log2`; 4 on the board), each into its own slot of a
//! reorder buffer (8 x 512 beats; board 4 x 256), drained in request
//! order on `pay_*` as soon as the head slot's beats are written
//! (`SlotDrain`, as in `read_resp`). A segment
//! payload longer than [`SEG_READ`] (4096) octets is read in 4096-octet
//! pieces (and the rest) into consecutive slots, one payload stream with
//! `pay_last` on its last piece only. Reads
//! longer than [`SHORT_READ`] wait until every earlier completion has
//! started (so they come back in order). A Read Request's payload is sent
//! once every earlier DMA payload has gone.
//!
//! Parking (docs/rtl.md "Parked QPs"): when the segment at the head cannot
//! start because it would pass the peer's window (stage 5 below, RFC 9293
//! §3.8.6), or an RDMA Read WQE finds its QP at ORD (RFC 5040 §6.2, RFC
//! 6581), the block does not wait holding the WQE: in `Park` it writes the
//! QP's stream state back (snd_nxt after the segments already sent; the
//! MSNs as before the message, so the message's MSN is taken again) and a
//! resume record {WQE index, octets already segmented} (`rs_ram`), and
//! hands the WQE back (`park_*`: `WqeFetch` pops it and rewinds the QP's
//! fetch index to it, `TxSched` grants the QP again after a wakeup). When
//! the WQE comes back, `Load` finds its index in the resume record and
//! starts at the octet where it stopped (TO, MO and remaining length moved
//! on; `Skip` finds the SGE and the offset in it; the rest of the message
//! is checked and translated again), so the QP's byte stream is the one it
//! would have sent waiting.
//! A QP context write (`cfg_*`) clears the record.
//! A stalled QP parks only while another QP waits for the segmenter
//! (`contend`, from `TxSched`; docs/rtl.md "Park only when another QP
//! waits"); alone it waits holding the WQE, as before parking, and its
//! segment starts in the clock `fits_r` rises (a park, WQE refetch and
//! wakeup cost ~100 clocks at every window stall of a single stream).
//!
//! Profiles (`crate::profile`, `TxSegN<PR>`): the sim profile as above
//! (MULPDU up to [`MAX_MULPDU`], 512-beat slots, 4096-octet reads). The
//! board (MTU 1500) refuses WQEs of a QP whose MULPDU is above 1454
//! (markers off) or 1442 (markers on), `mpa::mulpdu(1460, ·)` (RFC 5044
//! §8), with `LocalQpOperationError` (its FPDUs would not fit a frame),
//! cuts `xs_mulpdu` (the Read Responses') at the same limit, and has
//! 256-beat slots (reads of at most 2048 octets; a board segment's payload,
//! at most 1440 octets, is one read).
//!
//! Completion records (`cq_*`): one per signaled WQE after its last
//! descriptor (status 0, with `cq_end_seq` = the QP's SND.NXT after it; an
//! RDMA Read's record holds its place in the send CQ's order until the
//! requester completes it), one per refused WQE (status
//! `LocalQpOperationError`, nothing sent, no state change; or
//! `LocalProtectionError` for a refused SGE, above). A WQE starts only
//! while `cq_room` (the completion queue can take its record).

use crate::common::pram::PRam;
use crate::common::slot_drain::SlotDrain;
use rnic_wire::abi::cqe::WcStatus;
use rnic_wire::abi::tpt::ACCESS_LOCAL_WRITE;
use rust_hdl::prelude::*;

// The fence test in `update` reads `wqe_flags` bit 2.
const _: () = assert!(rnic_wire::abi::wqe::WQE_FLAG_FENCE == 1 << 2);

/// DMA read tags of payload requests: `PAY_TAG | slot`, slot 0..=7.
pub const PAY_TAG: u64 = 0x80;
/// `cq_status` of a refused WQE: `WcStatus::LocalQpOperationError`.
pub const STATUS_LOCAL_QP_OP_ERR: u64 = WcStatus::LocalQpOperationError as u64;
/// `cq_status` of a WQE whose SGE the TPT refused:
/// `WcStatus::LocalProtectionError` (module doc, "Send-side SGE checks").
pub const STATUS_LOCAL_PROT_ERR: u64 = WcStatus::LocalProtectionError as u64;
/// Payload reads up to this many octets are issued while earlier ones are
/// still unanswered (one per reorder slot); longer ones wait until every earlier
/// completion has started.
pub const SHORT_READ: u64 = 512;
/// Largest payload DMA read (`abi::caps::TX_MAX_SEG_READ`, the DMA read
/// contract's 4096 octets = one 512-beat reorder slot): a longer segment
/// payload is read in pieces of this size into consecutive slots.
pub const SEG_READ: u64 = rnic_wire::abi::caps::TX_MAX_SEG_READ as u64;
/// Smallest MULPDU the block segments for (every header fits).
pub const MIN_MULPDU: u64 = 64;
/// DDP header of a tagged segment (RFC 5041 §4.2: 14 octets), the smallest.
pub const TAGGED_HDR: u64 = 14;
/// Largest MULPDU the block segments for: the framer takes at most
/// `tx_mpa::MAX_PAY_LEN` (8868: up to 3 payload reads of [`SEG_READ`]
/// octets in consecutive reorder slots) octets after the DDP header, so a
/// tagged ULPDU may be `MAX_PAY_LEN + TAGGED_HDR` = 8882 octets. A QP whose MULPDU is
/// larger (e.g. one derived from a jumbo EMSS, RFC 5044 §8) gets error
/// completions, never a truncated frame.
pub const MAX_MULPDU: u64 = crate::transmit::tx_mpa::MAX_PAY_LEN as u64 + TAGGED_HDR;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum SegState {
    Idle,
    Load,
    Seg,
    Fin,
    Cpl,
    Pop,
    XLoad,
    Ext,
    Chk,
    Res,
    Off,
    Park,
    /// Find the SGE holding the message's next octet (`soff` octets in).
    Skip,
    /// The checks before any read: the next SGE to check, from the last down.
    PSel,
    /// The next SGE with octets after one is used up.
    Nxt,
}

/// The segmenter of the sim profile (jumbo MULPDU, 512-beat slots).
pub type TxSeg = TxSegN<{ crate::profile::PR_SIM }>;

/// The segmenter of core profile `PR` (module doc, "Profiles"): its MULPDU
/// limits (`tx_max_mulpdu`, `tx_max_mulpdu_mk`), Read Response cap
/// (`tx_rresp_cap`) and reorder slot size (`tx_slot_log2`) come from
/// `PROFILES[PR]`.
#[derive(LogicBlock)]
pub struct TxSegN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub wqe_valid: Signal<In, Bit>,
    pub wqe_qp: Signal<In, Bits<6>>,
    pub wqe_idx: Signal<In, Bits<32>>,
    pub wqe_wr_id: Signal<In, Bits<64>>,
    pub wqe_opcode: Signal<In, Bits<8>>,
    pub wqe_flags: Signal<In, Bits<8>>,
    pub wqe_num_sge: Signal<In, Bits<8>>,
    pub wqe_imm: Signal<In, Bits<32>>,
    pub wqe_roff: Signal<In, Bits<64>>,
    pub wqe_rstag: Signal<In, Bits<32>>,
    /// The message length (the sum of the SGE lengths, `WqeFetch::wqe_len`).
    pub wqe_len: Signal<In, Bits<32>>,
    /// SGE `sge_sel` of the WQE (`WqeFetch`, no clock between).
    pub sge_sel: Signal<Out, Bits<3>>,
    pub wqe_sge_addr: Signal<In, Bits<64>>,
    pub wqe_sge_len: Signal<In, Bits<32>>,
    pub wqe_sge_lkey: Signal<In, Bits<32>>,
    pub wqe_bad: Signal<In, Bit>,
    /// The WQE is inline (`WqeFetch::wqe_inl`): its message is SGE 0, a bus
    /// address in the send ring, neither checked nor translated.
    pub wqe_inl: Signal<In, Bit>,
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_qp: Signal<In, Bits<6>>,
    pub cfg_seq: Signal<In, Bits<32>>,
    pub cfg_msn_send: Signal<In, Bits<32>>,
    pub cfg_msn_rreq: Signal<In, Bits<32>>,
    pub cfg_seq_start: Signal<In, Bits<32>>,
    pub cfg_mulpdu: Signal<In, Bits<16>>,
    pub cfg_mk_en: Signal<In, Bit>,
    pub cfg_crc_en: Signal<In, Bit>,
    pub desc_ready: Signal<In, Bit>,
    pub dma_rd_req_ready: Signal<In, Bit>,
    pub dma_rd_cpl_valid: Signal<In, Bit>,
    pub dma_rd_cpl_data: Signal<In, Bits<64>>,
    pub dma_rd_cpl_keep: Signal<In, Bits<4>>,
    pub dma_rd_cpl_tag: Signal<In, Bits<8>>,
    pub dma_rd_cpl_last: Signal<In, Bit>,
    pub pay_ready: Signal<In, Bit>,
    pub cq_ready: Signal<In, Bit>,
    /// The completion queue has room for a record (`SendCpl::room`): a WQE
    /// starts only with it, so its record is always taken.
    pub cq_room: Signal<In, Bit>,
    /// The WQE's QP is off (`WqeFetch::wqe_off`): no further segment starts,
    /// the WQE is popped without a completion (docs/rtl.md "QP send stop").
    pub stop: Signal<In, Bit>,
    /// The presented WQE's QP has ORD Read Requests outstanding
    /// (`RdTrack::hq_full`): an RDMA Read WQE waits in `Idle` before its
    /// Read Request is issued (RFC 5040 §6.2, RFC 6581: at most ORD).
    pub rd_full: Signal<In, Bit>,
    /// The presented WQE's QP has an RDMA Read outstanding (`RdTrack`'s
    /// `hq_any`): a WQE with `WQE_FLAG_FENCE` waits (parked like a Read at
    /// ORD) until every earlier Read of its QP has completed (the verbs
    /// fence: IB spec, "Fence indicator"; RFC 5040 §5.3 leaves ordering of
    /// a Read's response against later operations to the ULP).
    pub rd_any: Signal<In, Bit>,
    /// Idle: no WQE started (`WqeFetch::wqe_hold` = !idle).
    pub idle: Signal<Out, Bit>,
    pub wqe_ready: Signal<Out, Bit>,
    pub desc_valid: Signal<Out, Bit>,
    pub desc_qp: Signal<Out, Bits<6>>,
    pub desc_seq: Signal<Out, Bits<32>>,
    pub desc_crc_en: Signal<Out, Bit>,
    pub desc_mk_en: Signal<Out, Bit>,
    pub desc_seq_start: Signal<Out, Bits<32>>,
    pub desc_opcode: Signal<Out, Bits<4>>,
    pub desc_last: Signal<Out, Bit>,
    pub desc_stag: Signal<Out, Bits<32>>,
    pub desc_to: Signal<Out, Bits<64>>,
    pub desc_qn: Signal<Out, Bits<32>>,
    pub desc_msn: Signal<Out, Bits<32>>,
    pub desc_mo: Signal<Out, Bits<32>>,
    pub desc_pay_len: Signal<Out, Bits<16>>,
    /// For the TX log (`tx_log`), beside the descriptor: the bus address
    /// of the segment's payload read, the segment's length in sequence
    /// space (markers included), a Read Request's 28-octet payload.
    pub desc_addr: Signal<Out, Bits<64>>,
    pub desc_adv: Signal<Out, Bits<16>>,
    pub desc_rr: Signal<Out, Bits<224>>,
    pub dma_rd_req_valid: Signal<Out, Bit>,
    pub dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub dma_rd_req_len: Signal<Out, Bits<16>>,
    pub dma_rd_req_tag: Signal<Out, Bits<8>>,
    /// The read is of an inline message (`InlineRd` answers it).
    pub dma_rd_req_inl: Signal<Out, Bit>,
    pub dma_rd_cpl_ready: Signal<Out, Bit>,
    pub pay_valid: Signal<Out, Bit>,
    pub pay_data: Signal<Out, Bits<64>>,
    pub pay_keep: Signal<Out, Bits<4>>,
    pub pay_last: Signal<Out, Bit>,
    pub cq_valid: Signal<Out, Bit>,
    pub cq_qp: Signal<Out, Bits<6>>,
    pub cq_idx: Signal<Out, Bits<32>>,
    pub cq_wr_id: Signal<Out, Bits<64>>,
    pub cq_status: Signal<Out, Bits<8>>,
    pub cq_opcode: Signal<Out, Bits<8>>,
    /// The QP's SND.NXT after the WQE's last FPDU (`SendCpl` waits for the
    /// peer's ACK of it).
    pub cq_end_seq: Signal<Out, Bits<32>>,
    pub cnt_segs: Signal<Out, Bits<32>>,
    pub cnt_bad_wqe: Signal<Out, Bits<32>>,
    /// Peer window (RFC 9293 §3.8.6): with `win_en`, an FPDU is not started
    /// while its end (its sequence number + wire length) would pass
    /// `win_end` = SND.UNA + SND.WND of the current WQE's connection (the
    /// integrator looks it up from `wqe_qp`, 2 clocks).
    pub win_en: Signal<In, Bit>,
    pub win_end: Signal<In, Bits<32>>,
    /// Clocks a segment waited for the peer's window.
    pub cnt_wnd_wait: Signal<Out, Bits<32>>,
    /// Refused WQEs because the QP's MULPDU is above the profile's limit
    /// ([`MAX_MULPDU`] in the sim profile).
    pub cnt_mulpdu_bad: Signal<Out, Bits<32>>,
    c_max_mulpdu: Constant<Bits<16>>,
    /// [`Self::c_max_mulpdu`] of a QP with markers on.
    c_max_mulpdu_mk: Constant<Bits<16>>,
    /// Cap `xs_mulpdu` at the QP's limit (profile `tx_rresp_cap`).
    c_rr_cap: Constant<Bit>,
    /// The limit of the head WQE's QP (markers from `state_ram`) and
    /// whether its MULPDU is above it.
    mp_max: Signal<Local, Bits<16>>,
    mp_over: Signal<Local, Bit>,
    /// The limit of the current QP (`mk`), for `xs_mulpdu`.
    xs_max: Signal<Local, Bits<16>>,
    n_wnd_wait: DFF<Bits<32>>,
    n_mulpdu_bad: DFF<Bits<32>>,
    fits: Signal<Local, Bit>,
    wgo: Signal<Local, Bit>,
    send_end: Signal<Local, Bits<32>>,
    // ---- Segment arithmetic pipeline (see "Segment arithmetic" in update)
    ph: DFF<Bits<3>>,
    plen_r: DFF<Bits<32>>,
    last_r: DFF<Bit>,
    d0_r: DFF<Bits<16>>,
    flen_r: DFF<Bits<16>>,
    k_r: DFF<Bits<16>>,
    adv_r: DFF<Bits<32>>,
    send_end_r: DFF<Bits<32>>,
    fits_r: DFF<Bit>,
    go: Signal<Local, Bit>,
    plen_c: Signal<Local, Bits<32>>,
    last_c: Signal<Local, Bit>,
    // ---- Read responder hook (read_resp): the QP's stream between WQEs
    pub xs_req: Signal<In, Bit>,
    pub xs_qp: Signal<In, Bits<6>>,
    pub xs_done: Signal<In, Bit>,
    pub xs_seq_new: Signal<In, Bits<32>>,
    /// The TX log's replay (`tx_log`): `hold` starts no further segment
    /// (as `stop`, for every QP); `quiet` = no segment half issued and none
    /// of our payload outstanding, so the framer's input is free.
    pub hold: Signal<In, Bit>,
    pub quiet: Signal<Out, Bit>,
    pub xs_gnt: Signal<Out, Bit>,
    pub xs_seq: Signal<Out, Bits<32>>,
    pub xs_seq_start: Signal<Out, Bits<32>>,
    pub xs_mulpdu: Signal<Out, Bits<16>>,
    pub xs_mk_en: Signal<Out, Bit>,
    pub xs_crc_en: Signal<Out, Bit>,
    /// Pulse: a Read Request went to the framer (its WQE's last descriptor).
    pub rd_sent_valid: Signal<Out, Bit>,
    pub rd_sent_qp: Signal<Out, Bits<6>>,
    pub rd_sent_wr_id: Signal<Out, Bits<64>>,
    pub rd_sent_signaled: Signal<Out, Bit>,
    pub rd_sent_len: Signal<Out, Bits<32>>,
    // ---- Send-side SGE checks (module doc): the QP's PD, the TPT check
    // client, the QP's send side off after a refused SGE.
    /// QP context write: the QP's protection domain.
    pub pd_wr_valid: Signal<In, Bit>,
    pub pd_wr_qp: Signal<In, Bits<6>>,
    pub pd_wr_pd: Signal<In, Bits<32>>,
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
    /// After a refused SGE's completion: turn the QP's send side off
    /// (`WqeFetch::en_*` with `en_on` low), held until `off_ready`.
    pub off_valid: Signal<Out, Bit>,
    pub off_qp: Signal<Out, Bits<6>>,
    pub off_ready: Signal<In, Bit>,
    /// WQEs refused by the SGE check.
    pub cnt_prot: Signal<Out, Bits<32>>,
    // ---- Parking (module doc)
    /// Hand the WQE at the head back (`park_qp`/`park_idx` = its QP and
    /// index); taken with `park_ready` (`WqeFetch`).
    pub park_valid: Signal<Out, Bit>,
    pub park_qp: Signal<Out, Bits<6>>,
    pub park_idx: Signal<Out, Bits<32>>,
    pub park_ready: Signal<In, Bit>,
    /// Another QP waits (`TxSched::contend`): park a stall only then.
    pub contend: Signal<In, Bit>,
    /// Per QP: {valid, WQE index, octets already segmented}.
    rs_ram: RAM<Bits<65>, 6>,
    /// The park writes the stream state back (a window park in `Seg`; an
    /// ORD park in `Idle` has loaded nothing).
    pk_wb: DFF<Bit>,
    rs_hit: Signal<Local, Bit>,
    rs_done: Signal<Local, Bits<32>>,
    // Load's sums with `rs_done`, added from the RAM's octet count and
    // chosen by `rs_hit` after the adders (the resume record, module doc).
    ld_to: Signal<Local, Bits<64>>,
    ld_addr: Signal<Local, Bits<64>>,
    ld_rem: Signal<Local, Bits<32>>,
    msn0_wb: Signal<Local, Bits<32>>,
    msn1_wb: Signal<Local, Bits<32>>,
    pd_ram: RAM<Bits<32>, 6>,
    cpd: DFF<Bits<32>>,
    // ---- The SGE walk (module doc, "Gather"): the current SGE, the one the
    // message (re)starts in, the check sweep before any read, the octets
    // left in the current SGE, the octets `Skip` still has to pass.
    sk: DFF<Bits<3>>,
    s0: DFF<Bits<3>>,
    pre: DFF<Bit>,
    srem: DFF<Bits<32>>,
    soff: DFF<Bits<32>>,
    /// In the sweep, an SGE other than the start one: check it whole.
    pre_other: Signal<Local, Bit>,
    xaddr: DFF<Bits<64>>,
    xleft: DFF<Bits<32>>,
    lim_r: DFF<Bits<32>>,
    sent: DFF<Bit>,
    oqp: DFF<Bits<6>>,
    /// `park_qp`: the head's QP a clock late. The head is loaded for 9
    /// clocks before `wqe_valid` and stays while parked, so in `Park` this
    /// is its QP; the register keeps the FIFO head's QP out of
    /// `TxSched`'s grant logic (board timing).
    pqp: DFF<Bits<6>>,
    n_prot: DFF<Bits<32>>,
    c_prot_err: Constant<Bits<8>>,
    c_local_write: Constant<Bits<3>>,
    c_pay_tag: Constant<Bits<8>>,
    c_min_mulpdu: Constant<Bits<16>>,
    c_qp_op_err: Constant<Bits<8>>,
    state_ram: RAM<Bits<146>, 6>,
    st: DFF<SegState>,
    seq: DFF<Bits<32>>,
    msn0: DFF<Bits<32>>,
    msn1: DFF<Bits<32>>,
    seq_start: DFF<Bits<32>>,
    mulpdu: DFF<Bits<16>>,
    mk: DFF<Bit>,
    crc: DFF<Bit>,
    is_tagged: DFF<Bit>,
    rop: DFF<Bits<4>>,
    qn: DFF<Bits<32>>,
    stag: DFF<Bits<32>>,
    to: DFF<Bits<64>>,
    mo: DFF<Bits<32>>,
    msn: DFF<Bits<32>>,
    rem: DFF<Bits<32>>,
    room: DFF<Bits<16>>,
    addr: DFF<Bits<64>>,
    is_rr: DFF<Bit>,
    status: DFF<Bits<8>>,
    desc_done: DFF<Bit>,
    req_done: DFF<Bit>,
    rr: DFF<Bits<256>>,
    rr_pending: DFF<Bit>,
    pbeat: DFF<Bits<2>>,
    outst: DFF<Bits<4>>,
    unst: DFF<Bits<4>>,
    c_short: Constant<Bits<32>>,
    /// The profile's slot count (`2^tx_slots_log2`, 4 or 8) and slot
    /// index mask.
    c_slots: Constant<Bits<4>>,
    c_slot_mask: Constant<Bits<3>>,
    /// `2^tx_slots_log2` slots of `2^tx_slot_log2` beats, address
    /// {slot[1:0], slot[2], beat[8:0]}: a 4-slot profile (slot[2] = 0)
    /// keeps the top two bits and the low `tx_slot_log2` ones.
    pbuf: PRam<Bits<69>, 12>,
    /// The read side: the head slot's beats to `pay_*`.
    drain: SlotDrain<3, 12>,
    wr_slot: DFF<Bits<3>>,
    /// Beats written per slot.
    wc0: DFF<Bits<10>>,
    wc1: DFF<Bits<10>>,
    wc2: DFF<Bits<10>>,
    wc3: DFF<Bits<10>>,
    wc4: DFF<Bits<10>>,
    wc5: DFF<Bits<10>>,
    wc6: DFF<Bits<10>>,
    wc7: DFF<Bits<10>>,
    // ---- A segment's payload in pieces (`docs/rtl.md` "Full 9000-octet
    // frames"): next piece's bus address and octets left to request, the
    // last piece issued, per-slot "holds a segment's last piece".
    pa: DFF<Bits<64>>,
    pl: DFF<Bits<32>>,
    pdone: DFF<Bit>,
    sfin: DFF<Bits<8>>,
    c_seg_read: Constant<Bits<32>>,
    pc_len: Signal<Local, Bits<32>>,
    pay_fin: Signal<Local, Bit>,
    rd_all: Signal<Local, Bit>,
    sfin_h: Signal<Local, Bit>,
    n_segs: DFF<Bits<32>>,
    n_bad: DFF<Bits<32>>,
    hdr: Signal<Local, Bits<16>>,
    plen: Signal<Local, Bits<32>>,
    seg_last: Signal<Local, Bit>,
    flen: Signal<Local, Bits<16>>,
    sdiff: Signal<Local, Bits<32>>,
    p: Signal<Local, Bits<9>>,
    d0: Signal<Local, Bits<16>>,
    rest: Signal<Local, Bits<16>>,
    k: Signal<Local, Bits<16>>,
    adv: Signal<Local, Bits<32>>,
    need_req: Signal<Local, Bit>,
    can_issue: Signal<Local, Bit>,
    d_ok: Signal<Local, Bit>,
    r_ok: Signal<Local, Bit>,
    rr_mode: Signal<Local, Bit>,
    cslot: Signal<Local, Bits<3>>,
    /// `sfin` shifted by the head slot, the one-hot of `wr_slot`.
    sfin_sh: Signal<Local, Bits<8>>,
    wr_bit: Signal<Local, Bits<8>>,
    cwc: Signal<Local, Bits<10>>,
    req_fire: Signal<Local, Bit>,
    outst_next: Signal<Local, Bits<4>>,
    unst_next: Signal<Local, Bits<4>>,
    rr_in: Signal<Local, Bits<256>>,
    len: Signal<Local, Bits<32>>,
    sol: Signal<Local, Bit>,
}

impl<const PR: usize> Default for TxSegN<PR> {
    fn default() -> Self {
        let pr = &crate::profile::PROFILES[PR];
        Self {
            clock: Default::default(),
            reset: Default::default(),
            wqe_valid: Default::default(),
            wqe_qp: Default::default(),
            wqe_idx: Default::default(),
            wqe_wr_id: Default::default(),
            wqe_opcode: Default::default(),
            wqe_flags: Default::default(),
            wqe_num_sge: Default::default(),
            wqe_imm: Default::default(),
            wqe_roff: Default::default(),
            wqe_rstag: Default::default(),
            wqe_len: Default::default(),
            sge_sel: Default::default(),
            wqe_sge_addr: Default::default(),
            wqe_sge_len: Default::default(),
            wqe_sge_lkey: Default::default(),
            wqe_bad: Default::default(),
            cfg_valid: Default::default(),
            cfg_qp: Default::default(),
            cfg_seq: Default::default(),
            cfg_msn_send: Default::default(),
            cfg_msn_rreq: Default::default(),
            cfg_seq_start: Default::default(),
            cfg_mulpdu: Default::default(),
            cfg_mk_en: Default::default(),
            cfg_crc_en: Default::default(),
            desc_ready: Default::default(),
            dma_rd_req_ready: Default::default(),
            wqe_inl: Default::default(),
            dma_rd_req_inl: Default::default(),
            dma_rd_cpl_valid: Default::default(),
            dma_rd_cpl_data: Default::default(),
            dma_rd_cpl_keep: Default::default(),
            dma_rd_cpl_tag: Default::default(),
            dma_rd_cpl_last: Default::default(),
            pay_ready: Default::default(),
            cq_ready: Default::default(),
            cq_room: Default::default(),
            stop: Default::default(),
            rd_full: Default::default(),
            rd_any: Default::default(),
            idle: Default::default(),
            wqe_ready: Default::default(),
            desc_valid: Default::default(),
            desc_qp: Default::default(),
            desc_seq: Default::default(),
            desc_crc_en: Default::default(),
            desc_mk_en: Default::default(),
            desc_seq_start: Default::default(),
            desc_opcode: Default::default(),
            desc_last: Default::default(),
            desc_stag: Default::default(),
            desc_to: Default::default(),
            desc_qn: Default::default(),
            desc_msn: Default::default(),
            desc_mo: Default::default(),
            desc_pay_len: Default::default(),
            desc_addr: Default::default(),
            desc_adv: Default::default(),
            desc_rr: Default::default(),
            dma_rd_req_valid: Default::default(),
            dma_rd_req_addr: Default::default(),
            dma_rd_req_len: Default::default(),
            dma_rd_req_tag: Default::default(),
            dma_rd_cpl_ready: Default::default(),
            pay_valid: Default::default(),
            pay_data: Default::default(),
            pay_keep: Default::default(),
            pay_last: Default::default(),
            cq_valid: Default::default(),
            cq_qp: Default::default(),
            cq_idx: Default::default(),
            cq_wr_id: Default::default(),
            cq_status: Default::default(),
            cq_opcode: Default::default(),
            cq_end_seq: Default::default(),
            cnt_segs: Default::default(),
            cnt_bad_wqe: Default::default(),
            win_en: Default::default(),
            win_end: Default::default(),
            cnt_wnd_wait: Default::default(),
            cnt_mulpdu_bad: Default::default(),
            c_max_mulpdu: Constant::new((pr.tx_max_mulpdu as u64).into()),
            c_max_mulpdu_mk: Constant::new((pr.tx_max_mulpdu_mk as u64).into()),
            c_rr_cap: Constant::new(pr.tx_rresp_cap),
            mp_max: Default::default(),
            mp_over: Default::default(),
            xs_max: Default::default(),
            n_wnd_wait: Default::default(),
            n_mulpdu_bad: Default::default(),
            fits: Default::default(),
            wgo: Default::default(),
            send_end: Default::default(),
            ph: Default::default(),
            plen_r: Default::default(),
            last_r: Default::default(),
            d0_r: Default::default(),
            flen_r: Default::default(),
            k_r: Default::default(),
            adv_r: Default::default(),
            send_end_r: Default::default(),
            fits_r: Default::default(),
            go: Default::default(),
            plen_c: Default::default(),
            last_c: Default::default(),
            xs_req: Default::default(),
            xs_qp: Default::default(),
            xs_done: Default::default(),
            xs_seq_new: Default::default(),
            hold: Default::default(),
            quiet: Default::default(),
            xs_gnt: Default::default(),
            xs_seq: Default::default(),
            xs_seq_start: Default::default(),
            xs_mulpdu: Default::default(),
            xs_mk_en: Default::default(),
            xs_crc_en: Default::default(),
            rd_sent_valid: Default::default(),
            rd_sent_qp: Default::default(),
            rd_sent_wr_id: Default::default(),
            rd_sent_signaled: Default::default(),
            rd_sent_len: Default::default(),
            pd_wr_valid: Default::default(),
            pd_wr_qp: Default::default(),
            pd_wr_pd: Default::default(),
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
            off_valid: Default::default(),
            off_qp: Default::default(),
            off_ready: Default::default(),
            cnt_prot: Default::default(),
            park_valid: Default::default(),
            park_qp: Default::default(),
            park_idx: Default::default(),
            park_ready: Default::default(),
            contend: Default::default(),
            rs_ram: Default::default(),
            pk_wb: Default::default(),
            rs_hit: Default::default(),
            rs_done: Default::default(),
            ld_to: Default::default(),
            ld_addr: Default::default(),
            ld_rem: Default::default(),
            msn0_wb: Default::default(),
            msn1_wb: Default::default(),
            pd_ram: Default::default(),
            cpd: Default::default(),
            sk: Default::default(),
            s0: Default::default(),
            pre: Default::default(),
            srem: Default::default(),
            soff: Default::default(),
            pre_other: Default::default(),
            xaddr: Default::default(),
            xleft: Default::default(),
            lim_r: Default::default(),
            sent: Default::default(),
            oqp: Default::default(),
            pqp: Default::default(),
            n_prot: Default::default(),
            c_prot_err: Constant::new(STATUS_LOCAL_PROT_ERR.into()),
            c_local_write: Constant::new((ACCESS_LOCAL_WRITE as u64).into()),
            c_pay_tag: Constant::new(PAY_TAG.into()),
            c_min_mulpdu: Constant::new(MIN_MULPDU.into()),
            c_qp_op_err: Constant::new(STATUS_LOCAL_QP_OP_ERR.into()),
            state_ram: Default::default(),
            st: Default::default(),
            seq: Default::default(),
            msn0: Default::default(),
            msn1: Default::default(),
            seq_start: Default::default(),
            mulpdu: Default::default(),
            mk: Default::default(),
            crc: Default::default(),
            is_tagged: Default::default(),
            rop: Default::default(),
            qn: Default::default(),
            stag: Default::default(),
            to: Default::default(),
            mo: Default::default(),
            msn: Default::default(),
            rem: Default::default(),
            room: Default::default(),
            addr: Default::default(),
            is_rr: Default::default(),
            status: Default::default(),
            desc_done: Default::default(),
            req_done: Default::default(),
            rr: Default::default(),
            rr_pending: Default::default(),
            pbeat: Default::default(),
            outst: Default::default(),
            unst: Default::default(),
            c_short: Constant::new(SHORT_READ.into()),
            c_slots: Constant::new((1u64 << pr.tx_slots_log2).into()),
            c_slot_mask: Constant::new(((1u64 << pr.tx_slots_log2) - 1).into()),
            pbuf: {
                assert!(matches!(pr.tx_slots_log2, 2 | 3), "tx_seg: 4 or 8 slots");
                PRam::new(pr.tx_slots_log2, pr.tx_slot_log2)
            },
            drain: SlotDrain::with_slots(1 << pr.tx_slots_log2),
            wr_slot: Default::default(),
            wc0: Default::default(),
            wc1: Default::default(),
            wc2: Default::default(),
            wc3: Default::default(),
            wc4: Default::default(),
            wc5: Default::default(),
            wc6: Default::default(),
            wc7: Default::default(),
            pa: Default::default(),
            pl: Default::default(),
            pdone: Default::default(),
            sfin: Default::default(),
            c_seg_read: Constant::new((8u64 << pr.tx_slot_log2).min(SEG_READ).into()),
            pc_len: Default::default(),
            pay_fin: Default::default(),
            rd_all: Default::default(),
            sfin_h: Default::default(),
            n_segs: Default::default(),
            n_bad: Default::default(),
            hdr: Default::default(),
            plen: Default::default(),
            seg_last: Default::default(),
            flen: Default::default(),
            sdiff: Default::default(),
            p: Default::default(),
            d0: Default::default(),
            rest: Default::default(),
            k: Default::default(),
            adv: Default::default(),
            need_req: Default::default(),
            can_issue: Default::default(),
            d_ok: Default::default(),
            r_ok: Default::default(),
            rr_mode: Default::default(),
            cslot: Default::default(),
            sfin_sh: Default::default(),
            wr_bit: Default::default(),
            cwc: Default::default(),
            req_fire: Default::default(),
            outst_next: Default::default(),
            unst_next: Default::default(),
            rr_in: Default::default(),
            len: Default::default(),
            sol: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for TxSegN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            st,
            pqp,
            seq,
            msn0,
            msn1,
            seq_start,
            mulpdu,
            mk,
            crc,
            is_tagged,
            rop,
            qn,
            stag,
            to,
            mo,
            msn,
            rem,
            room,
            addr,
            is_rr,
            status,
            desc_done,
            req_done,
            rr,
            rr_pending,
            pbeat,
            outst,
            unst,
            wr_slot,
            wc0,
            wc1,
            wc2,
            wc3,
            wc4,
            wc5,
            wc6,
            wc7,
            pa,
            pl,
            pdone,
            sfin,
            n_segs,
            n_bad,
            n_wnd_wait,
            n_mulpdu_bad,
            ph,
            plen_r,
            last_r,
            d0_r,
            flen_r,
            k_r,
            adv_r,
            send_end_r,
            fits_r,
            cpd,
            xaddr,
            xleft,
            lim_r,
            sent,
            oqp,
            n_prot,
            pk_wb,
            sk,
            s0,
            pre,
            srem,
            soff
        );
        self.pd_ram.read_clock.next = self.clock.val();
        self.pd_ram.write_clock.next = self.clock.val();
        self.pd_ram.read_address.next = self.wqe_qp.val();
        self.pd_ram.write_enable.next = self.pd_wr_valid.val();
        self.pd_ram.write_address.next = self.pd_wr_qp.val();
        self.pd_ram.write_data.next = self.pd_wr_pd.val();
        self.state_ram.read_clock.next = self.clock.val();
        self.state_ram.write_clock.next = self.clock.val();
        self.state_ram.read_address.next = self.wqe_qp.val();
        self.state_ram.write_enable.next = self.cfg_valid.val();
        self.state_ram.write_address.next = self.cfg_qp.val();
        self.state_ram.write_data.next = (bit_cast::<146, 1>(self.cfg_crc_en.val().into()) << 145)
            | (bit_cast::<146, 1>(self.cfg_mk_en.val().into()) << 144)
            | (bit_cast::<146, 16>(self.cfg_mulpdu.val()) << 128)
            | (bit_cast::<146, 32>(self.cfg_seq_start.val()) << 96)
            | (bit_cast::<146, 32>(self.cfg_msn_rreq.val()) << 64)
            | (bit_cast::<146, 32>(self.cfg_msn_send.val()) << 32)
            | bit_cast::<146, 32>(self.cfg_seq.val());

        // Segment arithmetic, pipelined over five clocks (FPGA timing: in one
        // clock it was the core's worst path, 24.93 ns on the ECP5). Every
        // stage recomputes each clock from registers; `ph` counts the clocks
        // since the inputs (`rem`, `room`, `seq`, ... ) last changed, i.e.
        // since the Seg state was entered or the last segment advanced, and
        // the segment is started (`go`) once `ph` reaches 5, when every stage
        // holds values of the current inputs. Cost: 5 clocks per segment,
        // hidden behind the payload DMA read and the framer's drain except
        // for tiny messages (measured in docs/fpga.md).
        // Stage 0: the segment's limit, min(room, octets left in the
        // translated page) (a segment never crosses a page end of the
        // region: one translated address per FPDU, module doc).
        self.lim_r.d.next = bit_cast::<32, 16>(self.room.q.val());
        if !self.is_rr.q.val() & (self.xleft.q.val() < bit_cast::<32, 16>(self.room.q.val())) {
            self.lim_r.d.next = self.xleft.q.val();
        }
        // Stage 1: payload length of this segment and marker phase.
        self.plen_c.next = self.rem.q.val();
        self.last_c.next = true;
        if self.rem.q.val() > self.lim_r.q.val() {
            self.plen_c.next = self.lim_r.q.val();
            self.last_c.next = false;
        }
        self.plen_r.d.next = self.plen_c.val();
        self.last_r.d.next = self.last_c.val();
        self.sdiff.next = self.seq.q.val() - self.seq_start.q.val();
        self.p.next = self.sdiff.val().get_bits::<9>(0);
        // Octets to the next marker position (RFC 5044 §4.3: every 512
        // octets of sequence space after SeqStart).
        self.d0.next = bit_cast::<16, 9>(bits::<9>(0) - self.p.val());
        self.d0_r.d.next = self.d0.val();
        self.plen.next = self.plen_r.q.val();
        self.seg_last.next = self.last_r.q.val();
        // Stage 2: FPDU length 4 * ceil((2 + ULPDU) / 4) + 4 (RFC 5044 §4.1:
        // length field, pad, CRC).
        self.hdr.next = 18.into();
        if self.is_tagged.q.val() {
            self.hdr.next = 14.into();
        }
        self.flen.next = ((self.hdr.val() + self.plen.val().get_bits::<16>(0) + 5) & 0xFFFC) + 4;
        self.flen_r.d.next = self.flen.val();
        // Stage 3: markers inside the FPDU: one at d0 if the FPDU passes it,
        // one more every 508 octets of FPDU after it (512 of sequence space
        // minus the 4-octet marker). The thresholds rise, so the last true
        // compare gives the count (parallel compares, no adder chain).
        self.rest.next = 0.into();
        if self.flen_r.q.val() > self.d0_r.q.val() {
            self.rest.next = self.flen_r.q.val() - self.d0_r.q.val();
        }
        self.k.next = 0.into();
        if self.flen_r.q.val() > self.d0_r.q.val() {
            self.k.next = 1.into();
        }
        if self.rest.val() > 508 {
            self.k.next = 2.into();
        }
        if self.rest.val() > 1016 {
            self.k.next = 3.into();
        }
        if self.rest.val() > 1524 {
            self.k.next = 4.into();
        }
        if self.rest.val() > 2032 {
            self.k.next = 5.into();
        }
        if self.rest.val() > 2540 {
            self.k.next = 6.into();
        }
        if self.rest.val() > 3048 {
            self.k.next = 7.into();
        }
        if self.rest.val() > 3556 {
            self.k.next = 8.into();
        }
        if self.rest.val() > 4064 {
            self.k.next = 9.into();
        }
        // (up to 18 markers in a 9000-MTU FPDU, docs/rtl.md "Full 9000-octet
        // frames")
        if self.rest.val() > 4572 {
            self.k.next = 10.into();
        }
        if self.rest.val() > 5080 {
            self.k.next = 11.into();
        }
        if self.rest.val() > 5588 {
            self.k.next = 12.into();
        }
        if self.rest.val() > 6096 {
            self.k.next = 13.into();
        }
        if self.rest.val() > 6604 {
            self.k.next = 14.into();
        }
        if self.rest.val() > 7112 {
            self.k.next = 15.into();
        }
        if self.rest.val() > 7620 {
            self.k.next = 16.into();
        }
        if self.rest.val() > 8128 {
            self.k.next = 17.into();
        }
        if self.rest.val() > 8636 {
            self.k.next = 18.into();
        }
        self.k_r.d.next = self.k.val();
        // Stage 4: snd_nxt advance and the FPDU's end in sequence space.
        self.adv_r.d.next = bit_cast::<32, 16>(self.flen_r.q.val());
        self.send_end_r.d.next = self.seq.q.val() + bit_cast::<32, 16>(self.flen_r.q.val());
        if self.mk.q.val() {
            self.adv_r.d.next = bit_cast::<32, 16>(self.flen_r.q.val() + (self.k_r.q.val() << 2));
            self.send_end_r.d.next = self.seq.q.val()
                + bit_cast::<32, 16>(self.flen_r.q.val() + (self.k_r.q.val() << 2));
        }
        self.adv.next = self.adv_r.q.val();
        self.send_end.next = self.send_end_r.q.val();

        // Stage 5, peer window (RFC 9293 §3.8.6): the FPDU [seq, seq + adv)
        // must end at or before SND.UNA + SND.WND (sequence space, RFC 9293
        // §3.4). Registered: `win_end` is seen one clock late, as if the
        // ACK had come one clock later. Once its descriptor or read has
        // gone, the segment is finished.
        self.fits_r.d.next =
            !self.win_en.val() | (((self.win_end.val() - self.send_end.val()) >> 31) == 0);
        // A stopped QP starts no further segment (docs/rtl.md, "QP send stop
        // and Terminate receive").
        self.fits.next = self.fits_r.q.val() & !self.stop.val() & !self.hold.val();
        self.quiet.next = (self.outst.q.val() == 0)
            & !self.rr_pending.q.val()
            & !((self.st.q.val() == SegState::Seg)
                & (self.desc_done.q.val() | self.req_done.q.val()));
        self.go.next = (self.st.q.val() == SegState::Seg) & (self.ph.q.val() == 6);
        self.ph.d.next = 0.into();
        if (self.st.q.val() == SegState::Seg) & (self.ph.q.val() != 6) {
            self.ph.d.next = self.ph.q.val() + 1;
        }
        if self.go.val() {
            self.ph.d.next = 6.into();
        }
        self.wgo.next =
            self.go.val() & (self.fits.val() | self.desc_done.q.val() | self.req_done.q.val());
        if self.go.val() & !self.wgo.val() {
            self.n_wnd_wait.d.next = self.n_wnd_wait.q.val() + 1;
        }

        // Descriptor (valid in Seg until taken).
        self.desc_valid.next =
            (self.st.q.val() == SegState::Seg) & !self.desc_done.q.val() & self.wgo.val();
        self.desc_qp.next = self.wqe_qp.val();
        self.desc_seq.next = self.seq.q.val();
        self.desc_crc_en.next = self.crc.q.val();
        self.desc_mk_en.next = self.mk.q.val();
        self.desc_seq_start.next = self.seq_start.q.val();
        self.desc_opcode.next = self.rop.q.val();
        self.desc_last.next = self.seg_last.val();
        self.desc_stag.next = self.stag.q.val();
        self.desc_to.next = self.to.q.val();
        self.desc_qn.next = self.qn.q.val();
        self.desc_msn.next = self.msn.q.val();
        self.desc_mo.next = self.mo.q.val();
        self.desc_pay_len.next = self.plen.val().get_bits::<16>(0);
        self.desc_addr.next = self.xaddr.q.val();
        self.desc_adv.next = self.adv.val().get_bits::<16>(0);
        self.desc_rr.next = self.rr.q.val().get_bits::<224>(0);

        // Payload DMA reads: up to 8 (4 on the board) in flight, one reorder
        // slot each (tag
        // PAY_TAG | slot), issued and drained in slot order. A segment's
        // payload is read in pieces of at most SEG_READ octets (the DMA read
        // contract) into consecutive slots: before its first read
        // (`req_done` low) `pa`/`pl` follow the segment's bus address and
        // payload length (one clock behind; `go` waits for the arithmetic
        // pipeline anyway), each read takes min(pl, SEG_READ) octets at `pa`.
        // A payload of at most SEG_READ octets is one read.
        self.need_req.next = !self.is_rr.q.val() & self.plen.val().any();
        self.rd_all.next = self.req_done.q.val() & self.pdone.q.val();
        self.pay_fin.next = self.pl.q.val() <= self.c_seg_read.val();
        self.pc_len.next = self.c_seg_read.val();
        if self.pay_fin.val() {
            self.pc_len.next = self.pl.q.val();
        }
        // Long reads (over SHORT_READ octets) wait until every earlier read's
        // completion has started: they then come back in request order and
        // drain at once (no head-of-line wait); short ones use all slots.
        self.can_issue.next = !self.rr_pending.q.val()
            & (self.outst.q.val() < self.c_slots.val())
            & ((self.pl.q.val() <= self.c_short.val()) | (self.unst.q.val() == 0));
        self.dma_rd_req_valid.next = (self.st.q.val() == SegState::Seg)
            & self.wgo.val()
            & self.need_req.val()
            & !self.rd_all.val()
            & self.can_issue.val();
        self.dma_rd_req_addr.next = self.pa.q.val();
        self.dma_rd_req_len.next = self.pc_len.val().get_bits::<16>(0);
        self.dma_rd_req_tag.next = self.c_pay_tag.val() | bit_cast::<8, 3>(self.wr_slot.q.val());
        self.dma_rd_req_inl.next = self.wqe_inl.val();
        // (any piece: `req_done` = the segment's reads have started)
        self.req_fire.next = self.dma_rd_req_valid.val() & self.dma_rd_req_ready.val();
        if !self.req_done.q.val() {
            self.pa.d.next = self.xaddr.q.val();
            self.pl.d.next = self.plen.val();
        }
        self.wr_bit.next = 1.into();
        self.wr_bit.next = self.wr_bit.val() << self.wr_slot.q.val();
        if self.req_fire.val() {
            self.pa.d.next = self.pa.q.val() + bit_cast::<64, 32>(self.c_seg_read.val());
            self.pl.d.next = self.pl.q.val() - self.pc_len.val();
            self.sfin.d.next = self.sfin.q.val() & !self.wr_bit.val();
            if self.pay_fin.val() {
                self.sfin.d.next = self.sfin.q.val() | self.wr_bit.val();
            }
        }
        self.pdone.d.next = (self.pdone.q.val() & self.req_done.q.val())
            | (self.req_fire.val() & self.pay_fin.val());
        self.d_ok.next = self.desc_done.q.val() | (self.desc_valid.val() & self.desc_ready.val());
        self.r_ok.next =
            !self.need_req.val() | self.rd_all.val() | (self.req_fire.val() & self.pay_fin.val());

        // Reorder buffer: 8 (board 4) slots of 512 (256) beats {last, keep,
        // data}; a
        // completion beat goes to its tag's slot (a request is at most 4096
        // octets, so a slot never overflows and completions are never held).
        // `last` marks the slot's end; `pay_last` is it in a slot holding a
        // segment's last piece (`sfin`).
        self.pbuf.read_clock.next = self.clock.val();
        self.pbuf.write_clock.next = self.clock.val();
        self.dma_rd_cpl_ready.next = true;
        // (Our tags only: the slot index masked to the profile's slots.)
        self.cslot.next = self.dma_rd_cpl_tag.val().get_bits::<3>(0) & self.c_slot_mask.val();
        self.cwc.next = self.wc0.q.val();
        if self.cslot.val() == 1 {
            self.cwc.next = self.wc1.q.val();
        }
        if self.cslot.val() == 2 {
            self.cwc.next = self.wc2.q.val();
        }
        if self.cslot.val() == 3 {
            self.cwc.next = self.wc3.q.val();
        }
        if self.cslot.val() == 4 {
            self.cwc.next = self.wc4.q.val();
        }
        if self.cslot.val() == 5 {
            self.cwc.next = self.wc5.q.val();
        }
        if self.cslot.val() == 6 {
            self.cwc.next = self.wc6.q.val();
        }
        if self.cslot.val() == 7 {
            self.cwc.next = self.wc7.q.val();
        }
        self.pbuf.write_enable.next = self.dma_rd_cpl_valid.val();
        // {slot[1:0], slot[2], beat[8:0]} (the `pbuf` layout).
        self.pbuf.write_address.next = (bit_cast::<12, 3>(self.cslot.val() & 3) << 10)
            | (bit_cast::<12, 3>(self.cslot.val() >> 2) << 9)
            | bit_cast::<12, 10>(self.cwc.val() & 511);
        self.pbuf.write_data.next = (bit_cast::<69, 1>(self.dma_rd_cpl_last.val().into()) << 68)
            | (bit_cast::<69, 4>(self.dma_rd_cpl_keep.val()) << 64)
            | bit_cast::<69, 64>(self.dma_rd_cpl_data.val());
        if self.dma_rd_cpl_valid.val() {
            if self.cslot.val() == 0 {
                self.wc0.d.next = self.wc0.q.val() + 1;
            }
            if self.cslot.val() == 1 {
                self.wc1.d.next = self.wc1.q.val() + 1;
            }
            if self.cslot.val() == 2 {
                self.wc2.d.next = self.wc2.q.val() + 1;
            }
            if self.cslot.val() == 3 {
                self.wc3.d.next = self.wc3.q.val() + 1;
            }
            if self.cslot.val() == 4 {
                self.wc4.d.next = self.wc4.q.val() + 1;
            }
            if self.cslot.val() == 5 {
                self.wc5.d.next = self.wc5.q.val() + 1;
            }
            if self.cslot.val() == 6 {
                self.wc6.d.next = self.wc6.q.val() + 1;
            }
            if self.cslot.val() == 7 {
                self.wc7.d.next = self.wc7.q.val() + 1;
            }
        }
        // A newly issued slot starts empty (it was drained: outst below the
        // slot count).
        if self.req_fire.val() {
            self.wr_slot.d.next = (self.wr_slot.q.val() + 1) & self.c_slot_mask.val();
            if self.wr_slot.q.val() == 0 {
                self.wc0.d.next = 0.into();
            }
            if self.wr_slot.q.val() == 1 {
                self.wc1.d.next = 0.into();
            }
            if self.wr_slot.q.val() == 2 {
                self.wc2.d.next = 0.into();
            }
            if self.wr_slot.q.val() == 3 {
                self.wc3.d.next = 0.into();
            }
            if self.wr_slot.q.val() == 4 {
                self.wc4.d.next = 0.into();
            }
            if self.wr_slot.q.val() == 5 {
                self.wc5.d.next = 0.into();
            }
            if self.wr_slot.q.val() == 6 {
                self.wc6.d.next = 0.into();
            }
            if self.wr_slot.q.val() == 7 {
                self.wc7.d.next = 0.into();
            }
        }
        // Drain: the head slot's beats as soon as they are written.
        self.drain.clock.next = self.clock.val();
        self.drain.reset.next = self.reset.val();
        self.drain.busy.next = self.outst.q.val() != 0;
        self.drain.written.next = self.wc0.q.val();
        if self.drain.slot.val() == 1 {
            self.drain.written.next = self.wc1.q.val();
        }
        if self.drain.slot.val() == 2 {
            self.drain.written.next = self.wc2.q.val();
        }
        if self.drain.slot.val() == 3 {
            self.drain.written.next = self.wc3.q.val();
        }
        if self.drain.slot.val() == 4 {
            self.drain.written.next = self.wc4.q.val();
        }
        if self.drain.slot.val() == 5 {
            self.drain.written.next = self.wc5.q.val();
        }
        if self.drain.slot.val() == 6 {
            self.drain.written.next = self.wc6.q.val();
        }
        if self.drain.slot.val() == 7 {
            self.drain.written.next = self.wc7.q.val();
        }
        // The drain's {slot, beat} in the `pbuf` layout.
        self.pbuf.read_address.next = (self.drain.ram_addr.val() & 0x1FF)
            | ((self.drain.ram_addr.val() & 0x600) << 1)
            | ((self.drain.ram_addr.val() & 0x800) >> 2);
        self.drain.ram_last.next = self.pbuf.read_data.val().get_bit(68);
        self.drain.ready.next = self.pay_ready.val();
        self.rr_mode.next = self.rr_pending.q.val() & (self.outst.q.val() == 0);
        self.pay_valid.next = self.drain.valid.val();
        self.pay_data.next = self.pbuf.read_data.val().get_bits::<64>(0);
        self.pay_keep.next = self.pbuf.read_data.val().get_bits::<4>(64);
        self.sfin_sh.next = self.sfin.q.val() >> self.drain.slot.val();
        self.sfin_h.next = self.sfin_sh.val().get_bit(0);
        self.pay_last.next = self.pbuf.read_data.val().get_bit(68) & self.sfin_h.val();
        if self.rr_mode.val() {
            self.pay_valid.next = true;
            self.pay_data.next = self.rr.q.val().get_bits::<64>(0);
            self.pay_keep.next = 8.into();
            self.pay_last.next = self.pbeat.q.val() == 3;
            if self.pbeat.q.val() == 3 {
                self.pay_keep.next = 4.into();
            }
            if self.pay_ready.val() {
                self.rr.d.next = self.rr.q.val() >> 64;
                self.pbeat.d.next = self.pbeat.q.val() + 1;
                if self.pbeat.q.val() == 3 {
                    self.rr_pending.d.next = false;
                }
            }
        }
        self.outst_next.next = self.outst.q.val();
        if self.req_fire.val() {
            self.outst_next.next = self.outst_next.val() + 1;
        }
        if self.drain.drained.val() {
            self.outst_next.next = self.outst_next.val() - 1;
        }
        self.outst.d.next = self.outst_next.val();
        // Reads whose completion has not started yet.
        self.unst_next.next = self.unst.q.val();
        if self.req_fire.val() {
            self.unst_next.next = self.unst_next.val() + 1;
        }
        if self.dma_rd_cpl_valid.val() & (self.cwc.val() == 0) {
            self.unst_next.next = self.unst_next.val() - 1;
        }
        self.unst.d.next = self.unst_next.val();

        // Read Request header, network order in little-endian lanes.
        self.rr_in.next = (bit_cast::<256, 8>(self.wqe_sge_lkey.val().get_bits::<8>(24)) << 0)
            | (bit_cast::<256, 8>(self.wqe_sge_lkey.val().get_bits::<8>(16)) << 8)
            | (bit_cast::<256, 8>(self.wqe_sge_lkey.val().get_bits::<8>(8)) << 16)
            | (bit_cast::<256, 8>(self.wqe_sge_lkey.val().get_bits::<8>(0)) << 24)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(56)) << 32)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(48)) << 40)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(40)) << 48)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(32)) << 56)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(24)) << 64)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(16)) << 72)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(8)) << 80)
            | (bit_cast::<256, 8>(self.wqe_sge_addr.val().get_bits::<8>(0)) << 88)
            | (bit_cast::<256, 8>(self.wqe_sge_len.val().get_bits::<8>(24)) << 96)
            | (bit_cast::<256, 8>(self.wqe_sge_len.val().get_bits::<8>(16)) << 104)
            | (bit_cast::<256, 8>(self.wqe_sge_len.val().get_bits::<8>(8)) << 112)
            | (bit_cast::<256, 8>(self.wqe_sge_len.val().get_bits::<8>(0)) << 120)
            | (bit_cast::<256, 8>(self.wqe_rstag.val().get_bits::<8>(24)) << 128)
            | (bit_cast::<256, 8>(self.wqe_rstag.val().get_bits::<8>(16)) << 136)
            | (bit_cast::<256, 8>(self.wqe_rstag.val().get_bits::<8>(8)) << 144)
            | (bit_cast::<256, 8>(self.wqe_rstag.val().get_bits::<8>(0)) << 152)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(56)) << 160)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(48)) << 168)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(40)) << 176)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(32)) << 184)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(24)) << 192)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(16)) << 200)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(8)) << 208)
            | (bit_cast::<256, 8>(self.wqe_roff.val().get_bits::<8>(0)) << 216);

        // Defaults.
        self.idle.next = self.st.q.val() == SegState::Idle;
        self.wqe_ready.next = false;
        self.cq_valid.next = false;
        self.cq_qp.next = self.wqe_qp.val();
        self.cq_idx.next = self.wqe_idx.val();
        self.cq_wr_id.next = self.wqe_wr_id.val();
        self.cq_status.next = self.status.q.val();
        self.cq_opcode.next = self.wqe_opcode.val();
        self.cq_end_seq.next = self.seq.q.val();
        // The message length (an RDMA Read's: its one sink SGE's).
        self.len.next = self.wqe_len.val();
        self.sge_sel.next = self.sk.q.val();
        self.sol.next = self.wqe_flags.val().get_bit(1);

        // TPT check client: the SGE's region (lkey, the QP's PD, VA, octets
        // left); an RDMA Read's sink SGE needs LOCAL_WRITE, a data SGE no
        // right beyond the registration (module doc).
        self.chk_valid.next = self.st.q.val() == SegState::Chk;
        // The current SGE (`sk`): in the sweep before any read an SGE other
        // than the start one is checked whole; otherwise what is left of
        // the current SGE from `addr`.
        self.pre_other.next = self.pre.q.val() & (self.sk.q.val() != self.s0.q.val());
        self.chk_stag.next = self.wqe_sge_lkey.val();
        self.chk_pd.next = self.cpd.q.val();
        self.chk_need.next = 0.into();
        self.chk_len.next = self.srem.q.val();
        self.chk_to.next = self.addr.q.val();
        if self.pre_other.val() {
            self.chk_len.next = self.wqe_sge_len.val();
            self.chk_to.next = self.wqe_sge_addr.val();
        }
        if self.is_rr.q.val() {
            self.chk_need.next = self.c_local_write.val();
            self.chk_len.next = self.len.val();
        }
        self.res_ready.next = self.st.q.val() == SegState::Res;
        self.off_valid.next = self.st.q.val() == SegState::Off;
        self.off_qp.next = self.oqp.q.val();
        self.cnt_prot.next = self.n_prot.q.val();

        // Parking (module doc): the resume record, read with the WQE's QP.
        self.rs_ram.read_clock.next = self.clock.val();
        self.rs_ram.write_clock.next = self.clock.val();
        self.rs_ram.read_address.next = self.wqe_qp.val();
        self.rs_ram.write_enable.next = self.cfg_valid.val();
        self.rs_ram.write_address.next = self.cfg_qp.val();
        self.rs_ram.write_data.next = 0.into();
        self.rs_hit.next = self.rs_ram.read_data.val().get_bit(64)
            & (self.rs_ram.read_data.val().get_bits::<32>(32) == self.wqe_idx.val());
        self.rs_done.next = 0.into();
        if self.rs_hit.val() {
            self.rs_done.next = self.rs_ram.read_data.val().get_bits::<32>(0);
        }
        // The adders take the RAM's count directly and `rs_hit` picks the
        // sum or the base afterwards: the 32-bit index compare then runs
        // beside the 64-bit carry chains, not in front of them (through
        // `rs_done`, the RAM read -> compare -> add -> `xaddr` path was the
        // unit-delay model's second longest on 70b4cf1, docs/fpga.md).
        self.ld_to.next = self.wqe_roff.val();
        self.ld_addr.next = self.wqe_sge_addr.val();
        self.ld_rem.next = self.len.val();
        if self.rs_hit.val() {
            self.ld_to.next = self.wqe_roff.val()
                + bit_cast::<64, 32>(self.rs_ram.read_data.val().get_bits::<32>(0));
            self.ld_addr.next = self.wqe_sge_addr.val()
                + bit_cast::<64, 32>(self.rs_ram.read_data.val().get_bits::<32>(0));
            self.ld_rem.next = self.len.val() - self.rs_ram.read_data.val().get_bits::<32>(0);
        }
        // The MSNs as before the message (Load takes the message's again).
        self.msn0_wb.next = self.msn.q.val();
        self.msn1_wb.next = self.msn1.q.val();
        if self.is_rr.q.val() {
            self.msn0_wb.next = self.msn0.q.val();
            self.msn1_wb.next = self.msn.q.val();
        }
        self.park_valid.next = (self.st.q.val() == SegState::Park) & !self.cfg_valid.val();
        self.pqp.d.next = self.wqe_qp.val();
        self.park_qp.next = self.pqp.q.val();
        self.park_idx.next = self.wqe_idx.val();

        // Read responder hook: outputs, and the completion-free Read.
        self.xs_gnt.next = self.st.q.val() == SegState::Ext;
        self.xs_seq.next = self.seq.q.val();
        self.xs_seq_start.next = self.seq_start.q.val();
        self.xs_mulpdu.next = self.mulpdu.q.val();
        // The board cuts Read Responses at its MULPDU limit (RFC 5044 §8:
        // MULPDU is the sender's bound; a smaller one is always legal).
        self.xs_max.next = self.c_max_mulpdu.val();
        if self.mk.q.val() {
            self.xs_max.next = self.c_max_mulpdu_mk.val();
        }
        if self.c_rr_cap.val() & (self.mulpdu.q.val() > self.xs_max.val()) {
            self.xs_mulpdu.next = self.xs_max.val();
        }
        // The head WQE's QP: MULPDU above the profile's limit for its
        // marker setting (the framer could not send its FPDUs whole).
        self.mp_max.next = self.c_max_mulpdu.val();
        if self.state_ram.read_data.val().get_bit(144) {
            self.mp_max.next = self.c_max_mulpdu_mk.val();
        }
        self.mp_over.next = self.state_ram.read_data.val().get_bits::<16>(128) > self.mp_max.val();
        self.xs_mk_en.next = self.mk.q.val();
        self.xs_crc_en.next = self.crc.q.val();
        self.rd_sent_valid.next = (self.st.q.val() == SegState::Fin) & self.is_rr.q.val();
        self.rd_sent_qp.next = self.wqe_qp.val();
        self.rd_sent_wr_id.next = self.wqe_wr_id.val();
        self.rd_sent_signaled.next = self.wqe_flags.val().get_bit(0);
        self.rd_sent_len.next = self.len.val();

        match self.st.q.val() {
            SegState::Idle => {
                // (a WQE starts at SGE 0: `Load` reads a Read's sink there)
                self.sk.d.next = 0.into();
                // The Read Request header register holds until its payload went.
                if self.xs_req.val() & (self.outst.q.val() == 0) & !self.rr_pending.q.val() {
                    // read_resp takes the QP's stream once every payload of
                    // ours has gone to the framer (descriptor order = payload
                    // order at the framer)
                    self.state_ram.read_address.next = self.xs_qp.val();
                    self.st.d.next = SegState::XLoad;
                } else if self.wqe_valid.val()
                    & self.cq_room.val()
                    & !self.rr_pending.q.val()
                    & !(self.rd_full.val() & (self.wqe_opcode.val() == 4))
                    & !(self.rd_any.val() & self.wqe_flags.val().get_bit(2))
                {
                    // an RDMA Read (opcode 4) waits while its QP is at ORD,
                    // a fenced WQE (flags bit 2) while it has a Read
                    // outstanding
                    self.st.d.next = SegState::Load;
                } else if self.wqe_valid.val()
                    & self.cq_room.val()
                    & !self.rr_pending.q.val()
                    & self.contend.val()
                {
                    // ... parked (module doc, "Parking") when another QP
                    // waits, not holding the WQE: nothing loaded, nothing
                    // to write back. Alone it waits here.
                    self.pk_wb.d.next = false;
                    self.st.d.next = SegState::Park;
                }
            }
            SegState::XLoad => {
                self.seq.d.next = self.state_ram.read_data.val().get_bits::<32>(0);
                self.msn0.d.next = self.state_ram.read_data.val().get_bits::<32>(32);
                self.msn1.d.next = self.state_ram.read_data.val().get_bits::<32>(64);
                self.seq_start.d.next = self.state_ram.read_data.val().get_bits::<32>(96);
                self.mulpdu.d.next = self.state_ram.read_data.val().get_bits::<16>(128);
                self.mk.d.next = self.state_ram.read_data.val().get_bit(144);
                self.crc.d.next = self.state_ram.read_data.val().get_bit(145);
                self.st.d.next = SegState::Ext;
            }
            SegState::Ext => {
                if self.xs_done.val() {
                    // snd_nxt after the Read Response FPDUs (a cfg write in
                    // the same clock wins)
                    if !self.cfg_valid.val() {
                        self.state_ram.write_enable.next = true;
                        self.state_ram.write_address.next = self.xs_qp.val();
                        self.state_ram.write_data.next =
                            (bit_cast::<146, 1>(self.crc.q.val().into()) << 145)
                                | (bit_cast::<146, 1>(self.mk.q.val().into()) << 144)
                                | (bit_cast::<146, 16>(self.mulpdu.q.val()) << 128)
                                | (bit_cast::<146, 32>(self.seq_start.q.val()) << 96)
                                | (bit_cast::<146, 32>(self.msn1.q.val()) << 64)
                                | (bit_cast::<146, 32>(self.msn0.q.val()) << 32)
                                | bit_cast::<146, 32>(self.xs_seq_new.val());
                    }
                    self.st.d.next = SegState::Idle;
                }
            }
            SegState::Load => {
                // The QP's stream state (read with the WQE's QP as address).
                self.seq.d.next = self.state_ram.read_data.val().get_bits::<32>(0);
                self.msn0.d.next = self.state_ram.read_data.val().get_bits::<32>(32);
                self.msn1.d.next = self.state_ram.read_data.val().get_bits::<32>(64);
                self.seq_start.d.next = self.state_ram.read_data.val().get_bits::<32>(96);
                self.mulpdu.d.next = self.state_ram.read_data.val().get_bits::<16>(128);
                self.mk.d.next = self.state_ram.read_data.val().get_bit(144);
                self.crc.d.next = self.state_ram.read_data.val().get_bit(145);
                // (a parked WQE resumes `rs_done` octets in, module doc)
                self.to.d.next = self.ld_to.val();
                self.mo.d.next = self.rs_done.val();
                self.addr.d.next = self.ld_addr.val();
                self.rem.d.next = self.ld_rem.val();
                self.stag.d.next = 0.into();
                self.qn.d.next = 0.into();
                self.msn.d.next = self.state_ram.read_data.val().get_bits::<32>(32);
                self.is_rr.d.next = false;
                self.is_tagged.d.next = false;
                self.desc_done.d.next = false;
                self.req_done.d.next = false;
                self.status.d.next = 0.into();
                self.room.d.next = self.state_ram.read_data.val().get_bits::<16>(128) - 18;
                self.cpd.d.next = self.pd_ram.read_data.val();
                self.xaddr.d.next = self.ld_addr.val();
                self.xleft.d.next = 0xFFFF_FFFF_u64.into();
                self.sent.d.next = self.rs_done.val().any();
                self.pre.d.next = false;
                self.soff.d.next = self.rs_done.val();
                self.st.d.next = SegState::Seg;
                // The SGEs with octets are checked (and the first
                // translated) first: find the start SGE (module doc).
                if self.len.val().any() {
                    self.st.d.next = SegState::Skip;
                }
                if self.wqe_opcode.val() == 0 {
                    // RDMA Write.
                    self.is_tagged.d.next = true;
                    self.rop.d.next = 0.into();
                    self.stag.d.next = self.wqe_rstag.val();
                    self.room.d.next = self.state_ram.read_data.val().get_bits::<16>(128) - 14;
                } else if self.wqe_opcode.val() == 2 {
                    // Send / Send with SE.
                    self.rop.d.next = 3.into();
                    if self.sol.val() {
                        self.rop.d.next = 5.into();
                    }
                    self.msn0.d.next = self.state_ram.read_data.val().get_bits::<32>(32) + 1;
                } else if self.wqe_opcode.val() == 3 {
                    // Send with Invalidate (with SE).
                    self.rop.d.next = 4.into();
                    if self.sol.val() {
                        self.rop.d.next = 6.into();
                    }
                    self.stag.d.next = self.wqe_imm.val();
                    self.msn0.d.next = self.state_ram.read_data.val().get_bits::<32>(32) + 1;
                } else {
                    // RDMA Read: one Read Request on QN 1.
                    self.rop.d.next = 1.into();
                    self.qn.d.next = 1.into();
                    self.is_rr.d.next = true;
                    self.rem.d.next = 28.into();
                    self.room.d.next = 28.into();
                    self.msn.d.next = self.state_ram.read_data.val().get_bits::<32>(64);
                    self.msn1.d.next = self.state_ram.read_data.val().get_bits::<32>(64) + 1;
                    self.rr.d.next = self.rr_in.val();
                    // its one sink SGE (no walk)
                    if self.len.val().any() {
                        self.st.d.next = SegState::Chk;
                    }
                }
                if self.wqe_bad.val()
                    | (self.wqe_opcode.val() == 1)
                    | (self.wqe_opcode.val() == 5)
                    | ((self.wqe_opcode.val() == 4) & (self.wqe_num_sge.val() != 1))
                    | (self.state_ram.read_data.val().get_bits::<16>(128) < self.c_min_mulpdu.val())
                    | self.mp_over.val()
                {
                    if self.mp_over.val() {
                        self.n_mulpdu_bad.d.next = self.n_mulpdu_bad.q.val() + 1;
                    }
                    self.status.d.next = self.c_qp_op_err.val();
                    self.n_bad.d.next = self.n_bad.q.val() + 1;
                    self.st.d.next = SegState::Cpl;
                }
            }
            SegState::Seg => {
                // QP off between segments: stop (no completion, module doc).
                if self.stop.val() & !self.desc_done.q.val() & !self.req_done.q.val() {
                    self.st.d.next = SegState::Pop;
                }
                if self.desc_valid.val() & self.desc_ready.val() {
                    self.desc_done.d.next = true;
                }
                if self.req_fire.val() {
                    self.req_done.d.next = true;
                }
                // The segment would pass the peer's window: park (module
                // doc), nothing of it issued, when another QP waits;
                // alone, wait here for the window.
                if self.go.val()
                    & self.contend.val()
                    & !self.fits_r.q.val()
                    & !self.stop.val()
                    & !self.hold.val()
                    & !self.desc_done.q.val()
                    & !self.req_done.q.val()
                {
                    self.pk_wb.d.next = true;
                    self.st.d.next = SegState::Park;
                }
                if self.d_ok.val() & self.r_ok.val() {
                    // New inputs for the arithmetic pipeline: restart it.
                    self.ph.d.next = 0.into();
                    self.desc_done.d.next = false;
                    self.req_done.d.next = false;
                    self.seq.d.next = self.seq.q.val() + self.adv.val();
                    self.rem.d.next = self.rem.q.val() - self.plen.val();
                    self.to.d.next = self.to.q.val() + bit_cast::<64, 32>(self.plen.val());
                    self.mo.d.next = self.mo.q.val() + self.plen.val();
                    self.addr.d.next = self.addr.q.val() + bit_cast::<64, 32>(self.plen.val());
                    self.xaddr.d.next = self.xaddr.q.val() + bit_cast::<64, 32>(self.plen.val());
                    self.xleft.d.next = self.xleft.q.val() - self.plen.val();
                    self.srem.d.next = self.srem.q.val() - self.plen.val();
                    self.sent.d.next = true;
                    self.n_segs.d.next = self.n_segs.q.val() + 1;
                    // The page is used up: translate the next one first;
                    // the SGE is used up (`xleft` is capped at its end):
                    // go on with the next SGE.
                    if !self.is_rr.q.val() & (self.xleft.q.val() == self.plen.val()) {
                        self.st.d.next = SegState::Chk;
                        if self.srem.q.val() == self.plen.val() {
                            self.sk.d.next = self.sk.q.val() + 1;
                            self.st.d.next = SegState::Nxt;
                        }
                    }
                    if self.is_rr.q.val() {
                        self.rr_pending.d.next = true;
                        self.pbeat.d.next = 0.into();
                    }
                    if self.seg_last.val() {
                        self.st.d.next = SegState::Fin;
                    }
                }
            }
            SegState::Fin => {
                // Write the stream state back (a cfg write in the same clock wins).
                if !self.cfg_valid.val() {
                    self.state_ram.write_enable.next = true;
                    self.state_ram.write_address.next = self.wqe_qp.val();
                    self.state_ram.write_data.next = (bit_cast::<146, 1>(self.crc.q.val().into())
                        << 145)
                        | (bit_cast::<146, 1>(self.mk.q.val().into()) << 144)
                        | (bit_cast::<146, 16>(self.mulpdu.q.val()) << 128)
                        | (bit_cast::<146, 32>(self.seq_start.q.val()) << 96)
                        | (bit_cast::<146, 32>(self.msn1.q.val()) << 64)
                        | (bit_cast::<146, 32>(self.msn0.q.val()) << 32)
                        | bit_cast::<146, 32>(self.seq.q.val());
                }
                // A signaled WQE's record; a Read's is its place in the
                // send CQ's order (it completes when its last Read Response
                // is placed: rd_sent_* → the requester → SendCpl). A
                // message stopped by a refused translation completes.
                if self.wqe_flags.val().get_bit(0) | self.status.q.val().any() {
                    self.st.d.next = SegState::Cpl;
                } else {
                    // No record: the WQE is popped now (as in `Pop`).
                    self.wqe_ready.next = true;
                    self.oqp.d.next = self.wqe_qp.val();
                    self.st.d.next = SegState::Idle;
                }
            }
            SegState::Cpl => {
                self.cq_valid.next = true;
                // The record is taken and the WQE popped in one clock (as
                // in `Pop`).
                if self.cq_ready.val() {
                    self.wqe_ready.next = true;
                    self.oqp.d.next = self.wqe_qp.val();
                    self.st.d.next = SegState::Idle;
                    if self.status.q.val() == self.c_prot_err.val() {
                        self.st.d.next = SegState::Off;
                    }
                }
            }
            SegState::Pop => {
                self.wqe_ready.next = true;
                self.st.d.next = SegState::Idle;
                // (the QP: after the pop, wqe_qp is the next WQE's)
                self.oqp.d.next = self.wqe_qp.val();
                if self.status.q.val() == self.c_prot_err.val() {
                    self.st.d.next = SegState::Off;
                }
            }
            SegState::Chk => {
                if self.chk_ready.val() {
                    self.st.d.next = SegState::Res;
                }
            }
            SegState::Res => {
                if self.res_valid.val() {
                    if self.res_fault.val().any() {
                        // Refused: nothing (more) is read or sent; the WQE
                        // completes with LocalProtectionError. A message
                        // cut after its first segment (its region changed
                        // in between) writes its stream state back first.
                        self.status.d.next = self.c_prot_err.val();
                        self.n_prot.d.next = self.n_prot.q.val() + 1;
                        self.st.d.next = SegState::Cpl;
                        if self.sent.q.val() {
                            self.st.d.next = SegState::Fin;
                        }
                    } else if self.pre_other.val() {
                        // The sweep goes on down to the start SGE.
                        self.sk.d.next = self.sk.q.val() - 1;
                        self.st.d.next = SegState::PSel;
                    } else {
                        // The translation of the current SGE's next octet:
                        // a segment ends at the page's end or the SGE's.
                        self.pre.d.next = false;
                        self.xaddr.d.next = self.res_addr.val();
                        self.xleft.d.next = self.res_page_left.val();
                        if !self.is_rr.q.val() & (self.srem.q.val() < self.res_page_left.val()) {
                            self.xleft.d.next = self.srem.q.val();
                        }
                        self.st.d.next = SegState::Seg;
                    }
                }
            }
            SegState::Skip => {
                // Pass whole SGEs (and empty ones) until the one holding
                // octet `soff` of the message (`soff` < `wqe_len`).
                if self.soff.q.val() >= self.wqe_sge_len.val() {
                    self.soff.d.next = self.soff.q.val() - self.wqe_sge_len.val();
                    self.sk.d.next = self.sk.q.val() + 1;
                } else {
                    self.addr.d.next =
                        self.wqe_sge_addr.val() + bit_cast::<64, 32>(self.soff.q.val());
                    self.srem.d.next = self.wqe_sge_len.val() - self.soff.q.val();
                    self.s0.d.next = self.sk.q.val();
                    // the sweep starts at the last SGE
                    self.sk.d.next = self.wqe_num_sge.val().get_bits::<3>(0) - 1;
                    self.pre.d.next = true;
                    self.st.d.next = SegState::PSel;
                    // The start SGE is the last: the sweep is that one
                    // check (`PSel` would only pass it on).
                    if self.sk.q.val() == self.wqe_num_sge.val().get_bits::<3>(0) - 1 {
                        self.st.d.next = SegState::Chk;
                    }
                    // Inline (module doc): the one SGE is the message in
                    // the ring, a bus address already; no check.
                    if self.wqe_inl.val() {
                        self.xaddr.d.next =
                            self.wqe_sge_addr.val() + bit_cast::<64, 32>(self.soff.q.val());
                        self.xleft.d.next = self.wqe_sge_len.val() - self.soff.q.val();
                        self.pre.d.next = false;
                        self.st.d.next = SegState::Seg;
                    }
                }
            }
            SegState::PSel => {
                // Empty SGEs need no check (as in `TptEntry`-free ibverbs:
                // a zero-length SGE names no memory).
                if self.sk.q.val() == self.s0.q.val() {
                    self.st.d.next = SegState::Chk;
                } else if self.wqe_sge_len.val() == 0 {
                    self.sk.d.next = self.sk.q.val() - 1;
                } else {
                    self.st.d.next = SegState::Chk;
                }
            }
            SegState::Nxt => {
                // The next SGE with octets (one exists: octets are left).
                if self.wqe_sge_len.val() == 0 {
                    self.sk.d.next = self.sk.q.val() + 1;
                } else {
                    self.addr.d.next = self.wqe_sge_addr.val();
                    self.srem.d.next = self.wqe_sge_len.val();
                    self.st.d.next = SegState::Chk;
                }
            }
            SegState::Off => {
                if self.off_ready.val() {
                    self.st.d.next = SegState::Idle;
                }
            }
            SegState::Park => {
                // Taken: the stream state and the resume record are
                // written (a window park), the WQE is popped by WqeFetch.
                if self.park_valid.val() & self.park_ready.val() {
                    if self.pk_wb.q.val() {
                        self.state_ram.write_enable.next = true;
                        self.state_ram.write_address.next = self.wqe_qp.val();
                        self.state_ram.write_data.next =
                            (bit_cast::<146, 1>(self.crc.q.val().into()) << 145)
                                | (bit_cast::<146, 1>(self.mk.q.val().into()) << 144)
                                | (bit_cast::<146, 16>(self.mulpdu.q.val()) << 128)
                                | (bit_cast::<146, 32>(self.seq_start.q.val()) << 96)
                                | (bit_cast::<146, 32>(self.msn1_wb.val()) << 64)
                                | (bit_cast::<146, 32>(self.msn0_wb.val()) << 32)
                                | bit_cast::<146, 32>(self.seq.q.val());
                        self.rs_ram.write_enable.next = true;
                        self.rs_ram.write_address.next = self.wqe_qp.val();
                        self.rs_ram.write_data.next = (bits::<65>(1) << 64)
                            | (bit_cast::<65, 32>(self.wqe_idx.val()) << 32)
                            | bit_cast::<65, 32>(self.mo.q.val());
                    }
                    self.st.d.next = SegState::Idle;
                }
            }
            _ => {
                self.st.d.next = SegState::Idle;
            }
        }
        self.cnt_segs.next = self.n_segs.q.val();
        self.cnt_bad_wqe.next = self.n_bad.q.val();
        self.cnt_wnd_wait.next = self.n_wnd_wait.q.val();
        self.cnt_mulpdu_bad.next = self.n_mulpdu_bad.q.val();

        if self.reset.val() {
            self.st.d.next = SegState::Idle;
            self.rr_pending.d.next = false;
            self.outst.d.next = 0.into();
            self.unst.d.next = 0.into();
            self.wr_slot.d.next = 0.into();
            self.desc_done.d.next = false;
            self.req_done.d.next = false;
            self.n_segs.d.next = 0.into();
            self.n_bad.d.next = 0.into();
            self.n_wnd_wait.d.next = 0.into();
            self.n_mulpdu_bad.d.next = 0.into();
            self.n_prot.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use crate::completion::rd_track::RdTrack;
    use crate::transmit::doorbell::Doorbell;
    use crate::transmit::tx_sched::{TxSched, PARK_RETRY};
    use crate::transmit::wqe_fetch::WqeFetch;
    use rnic_wire::abi::csr::{DOORBELL_PAGE_SIZE, QP_DOORBELL_BASE};
    use rnic_wire::abi::tpt::{Stag, TptEntry, TptFault, TptState, ACCESS_ALL};
    use rnic_wire::abi::wqe::{InlineData, MAX_INLINE_DATA};
    use rnic_wire::abi::wqe::{SendOpcode, SendWqe, Sge, SgeList, WQE_FLAG_SIGNALED};
    use rnic_wire::abi::wqe::{WQE_FLAG_FENCE, WQE_FLAG_SOLICITED, WQE_SIZE};
    use rnic_wire::model::{frame_ulpdu, Message, MpaSettings, TxStream};
    use rnic_wire::rdmap::{RdmapRepr, ReadRequestHeader, ReadRequestRepr};
    use std::collections::{HashMap, VecDeque};

    /// The TX engine as it is meant to be wired: doorbell → scheduler →
    /// WQE fetch → segmentation (priority requester idle).
    #[derive(LogicBlock, Default)]
    struct Tb<const PR: usize> {
        clock: Signal<In, Clock>,
        reset: Signal<In, Bit>,
        db: Doorbell,
        sched: TxSched,
        fetch: WqeFetch,
        seg: TxSegN<PR>,
        rdt: RdTrack,
    }

    impl<const PR: usize> Logic for Tb<PR> {
        #[hdl_gen]
        fn update(&mut self) {
            clock!(self, clock, db, sched, fetch, seg, rdt);
            self.rdt.reset.next = self.reset.val();
            // The requester's record, as in rnic_core (ORD 0 unless a test
            // configures it: never full).
            self.rdt.sent_valid.next = self.seg.rd_sent_valid.val();
            self.rdt.sent_qp.next = self.seg.rd_sent_qp.val();
            self.rdt.sent_wr_id.next = self.seg.rd_sent_wr_id.val();
            self.rdt.sent_signaled.next = self.seg.rd_sent_signaled.val();
            self.rdt.sent_len.next = self.seg.rd_sent_len.val();
            self.rdt.hq_qp.next = self.fetch.wqe_qp.val();
            self.seg.rd_full.next = self.rdt.hq_full.val();
            self.seg.rd_any.next = self.rdt.hq_any.val();
            self.db.reset.next = self.reset.val();
            self.sched.reset.next = self.reset.val();
            self.fetch.reset.next = self.reset.val();
            self.seg.reset.next = self.reset.val();
            self.sched.pending.next = self.db.pending.val();
            self.sched.blocked.next = self.fetch.busy.val();
            self.sched.prio_valid.next = false;
            self.fetch.grant_valid.next =
                self.sched.grant_valid.val() & !self.sched.grant_prio.val();
            self.fetch.grant_qp.next = self.sched.grant_qp.val();
            self.sched.grant_ready.next = self.fetch.grant_ready.val();
            self.db.take_valid.next = self.fetch.take_valid.val();
            self.db.take_qp.next = self.fetch.take_qp.val();
            self.fetch.take_prod.next = self.db.take_prod.val();
            self.db.rearm_valid.next = self.fetch.rearm_valid.val();
            self.db.rearm_qp.next = self.fetch.rearm_qp.val();
            self.seg.wqe_valid.next = self.fetch.wqe_valid.val();
            self.fetch.wqe_ready.next = self.seg.wqe_ready.val();
            self.seg.wqe_qp.next = self.fetch.wqe_qp.val();
            self.seg.wqe_idx.next = self.fetch.wqe_idx.val();
            self.seg.wqe_wr_id.next = self.fetch.wqe_wr_id.val();
            self.seg.wqe_opcode.next = self.fetch.wqe_opcode.val();
            self.seg.wqe_flags.next = self.fetch.wqe_flags.val();
            self.seg.wqe_num_sge.next = self.fetch.wqe_num_sge.val();
            self.seg.wqe_imm.next = self.fetch.wqe_imm.val();
            self.seg.wqe_roff.next = self.fetch.wqe_roff.val();
            self.seg.wqe_rstag.next = self.fetch.wqe_rstag.val();
            self.seg.wqe_len.next = self.fetch.wqe_len.val();
            self.fetch.sge_sel.next = self.seg.sge_sel.val();
            self.seg.wqe_sge_addr.next = self.fetch.wqe_sge_addr.val();
            self.seg.wqe_sge_len.next = self.fetch.wqe_sge_len.val();
            self.seg.wqe_sge_lkey.next = self.fetch.wqe_sge_lkey.val();
            self.seg.wqe_bad.next = self.fetch.wqe_bad.val();
            self.seg.wqe_inl.next = self.fetch.wqe_inl.val();
            self.seg.xs_req.next = false;
            self.seg.xs_qp.next = 0.into();
            self.seg.xs_done.next = false;
            self.seg.xs_seq_new.next = 0.into();
            self.seg.hold.next = false;
            // A refused SGE turns the QP's send side off (as in rnic_core).
            self.fetch.en_valid.next = self.seg.off_valid.val();
            self.fetch.en_qp.next = self.seg.off_qp.val();
            self.fetch.en_on.next = false;
            self.seg.off_ready.next = true;
            // Parking (as in rnic_core; connection = QP here).
            self.fetch.park_valid.next = self.seg.park_valid.val();
            self.fetch.park_qp.next = self.seg.park_qp.val();
            self.fetch.park_idx.next = self.seg.park_idx.val();
            self.seg.park_ready.next = self.fetch.park_ready.val();
            self.sched.cur_qp.next = self.fetch.wqe_qp.val();
            self.sched.fifo_others.next = self.fetch.others.val();
            self.seg.contend.next = self.sched.contend.val();
            self.sched.park_valid.next = self.seg.park_valid.val();
            self.sched.park_fire.next = self.seg.park_valid.val() & self.fetch.park_ready.val();
            self.sched.park_qp.next = self.seg.park_qp.val();
            self.sched.park_conn.next = bit_cast::<8, 6>(self.seg.park_qp.val());
            self.sched.wake_qp_valid.next = self.rdt.dec_valid.val();
            self.sched.wake_qp.next = self.rdt.dec_qp.val();
        }
    }

    fn tb<const PR: usize>() -> Box<Tb<PR>> {
        let mut u = Box::new(Tb::<PR>::default());
        u.clock.connect();
        u.reset.connect();
        u.db.csr_valid.connect();
        u.db.csr_write.connect();
        u.db.csr_addr.connect();
        u.db.csr_wdata.connect();
        u.fetch.cfg_valid.connect();
        u.fetch.cfg_qp.connect();
        u.fetch.cfg_base.connect();
        u.fetch.cfg_log2.connect();
        u.fetch.cfg_ci.connect();
        u.fetch.cfg_ci_load.connect();
        u.seg.pd_wr_valid.connect();
        u.seg.pd_wr_qp.connect();
        u.seg.pd_wr_pd.connect();
        u.seg.chk_ready.connect();
        u.seg.res_valid.connect();
        u.seg.res_fault.connect();
        u.seg.res_addr.connect();
        u.seg.res_page_left.connect();
        u.fetch.wqe_hold.connect();
        u.seg.stop.connect();
        u.rdt.cfg_valid.connect();
        u.rdt.cfg_qp.connect();
        u.rdt.cfg_ord.connect();
        u.rdt.tag_valid.connect();
        u.rdt.tag_opcode.connect();
        u.rdt.tag_ddp_last.connect();
        u.rdt.tag_stag.connect();
        u.rdt.tag_to.connect();
        u.rdt.tag_len.connect();
        u.rdt.tag_conn.connect();
        u.rdt.tag_qpn.connect();
        u.rdt.cpl_ready.connect();
        u.rdt.term_ready.connect();
        u.fetch.dma_rd_req_ready.connect();
        u.fetch.dma_rd_cpl_valid.connect();
        u.fetch.dma_rd_cpl_data.connect();
        u.fetch.dma_rd_cpl_last.connect();
        u.fetch.dma_rd_cpl_tag.connect();
        u.seg.cfg_valid.connect();
        u.seg.win_en.connect();
        u.seg.win_end.connect();
        u.seg.cfg_qp.connect();
        u.seg.cfg_seq.connect();
        u.seg.cfg_msn_send.connect();
        u.seg.cfg_msn_rreq.connect();
        u.seg.cfg_seq_start.connect();
        u.seg.cfg_mulpdu.connect();
        u.seg.cfg_mk_en.connect();
        u.seg.cfg_crc_en.connect();
        u.seg.desc_ready.connect();
        u.seg.dma_rd_req_ready.connect();
        u.seg.dma_rd_cpl_valid.connect();
        u.seg.dma_rd_cpl_data.connect();
        u.seg.dma_rd_cpl_keep.connect();
        u.seg.dma_rd_cpl_tag.connect();
        u.seg.dma_rd_cpl_last.connect();
        u.seg.pay_ready.connect();
        u.seg.cq_ready.connect();
        u.seg.cq_room.connect();
        u.seg.cq_room.next = true;
        u.sched.wake_conn_valid.connect();
        u.sched.wake_conn.connect();
        u.connect_all();
        u
    }

    /// Host memory answering DMA reads: each request completes after
    /// `latency + rand(jitter)` clocks; among the ready ones a random one is
    /// sent next (out of order across tags), its beats contiguous.
    struct DmaPort {
        pending: Vec<(u64, u64, Vec<u8>)>, // (ready at, tag, octets)
        cur: Option<(u64, VecDeque<u8>)>,
        latency: u64,
        jitter: u64,
        gaps: bool,
    }

    impl DmaPort {
        fn new(latency: u64, jitter: u64, gaps: bool) -> Self {
            DmaPort {
                pending: Vec::new(),
                cur: None,
                latency,
                jitter,
                gaps,
            }
        }
        fn request(&mut self, now: u64, mem: &[u8], addr: u64, len: u64, tag: u64, rng: &mut Rng) {
            assert!((1..=4096).contains(&len), "DMA read length {len}");
            let a = addr as usize;
            let j = if self.jitter > 0 {
                rng.next_u64() % self.jitter
            } else {
                0
            };
            self.pending.push((
                now + self.latency + j,
                tag,
                mem[a..a + len as usize].to_vec(),
            ));
        }
        /// The beat to present this clock: (tag, data, keep, last).
        fn beat(&mut self, now: u64, rng: &mut Rng) -> Option<(u64, u64, u64, bool)> {
            if self.cur.is_none() {
                let ready: Vec<usize> = (0..self.pending.len())
                    .filter(|&i| self.pending[i].0 <= now)
                    .collect();
                if ready.is_empty() {
                    return None;
                }
                let i = ready[rng.below(ready.len())];
                let (_, tag, d) = self.pending.swap_remove(i);
                self.cur = Some((tag, d.into()));
            }
            if self.gaps && rng.below(8) == 0 {
                return None;
            }
            let (tag, d) = self.cur.as_ref().unwrap();
            let n = d.len().min(8);
            let mut b = [0u8; 8];
            for (i, x) in d.iter().take(n).enumerate() {
                b[i] = *x;
            }
            // Garbage above `keep`.
            for x in b.iter_mut().skip(n) {
                *x = 0xA5;
            }
            Some((*tag, u64::from_le_bytes(b), n as u64, d.len() <= 8))
        }
        fn pop(&mut self) {
            let (_, d) = self.cur.as_mut().unwrap();
            let n = d.len().min(8);
            d.drain(..n);
            if d.is_empty() {
                self.cur = None;
            }
        }
    }

    /// The TPT check unit as the test bench's model, built from
    /// `rnic_wire::abi::tpt` (`TptEntry::check`, `page_of`, a page list),
    /// answering `chk_*` 4..8 clocks later. `regions: None` = every access
    /// granted at its own address (the tests written before the SGE
    /// checks; their buffers lie inside one 1 GiB page, so no page cut).
    #[derive(Default)]
    struct TptModel {
        regions: Option<(HashMap<u32, TptEntry>, HashMap<u32, u64>)>,
        pend: Option<(u64, u64, u64, u64)>,
        busy: bool,
        /// Requests seen: (stag, pd, need, to, len).
        log: Vec<(u32, u32, u64, u64, u64)>,
        /// (TPT index, n): the entry becomes `Invalid` right after its
        /// n-th request was answered (a region invalidated mid-message).
        inval_after: Option<(u32, usize)>,
        /// The peer window (tests of parking; `None`: window off).
        win: Option<WinModel>,
        /// This QP's doorbell is rung before any other's (tests whose
        /// scenario needs one QP first; otherwise the order is random and
        /// shifts with every change of the design's timing).
        db_first: Option<usize>,
    }

    /// The peer window as rnic_core presents it: `win_end` of the head
    /// WQE's QP, 2 clocks late (connection = QP here), window updates
    /// (`TxSched::wake_conn_*`) at given clocks or in the clock a QP's n-th
    /// park is taken (the same-clock wakeup). Every descriptor is checked
    /// to end inside the window in force when it is issued (RFC 9293
    /// §3.8.6).
    #[derive(Default)]
    struct WinModel {
        wend: Vec<u32>,
        lag: VecDeque<u32>,
        /// (clock, QP, new window end)
        at: Vec<(u64, usize, u32)>,
        /// (QP, n-th park from 1, new window end)
        at_park: Vec<(usize, usize, u32)>,
        /// Parks taken: (clock, QP).
        parks: Vec<(u64, usize)>,
        /// Window updates: (clock, QP).
        opened: Vec<(u64, usize)>,
        /// Descriptors: (clock, QP).
        descs: Vec<(u64, usize)>,
        cnt_park: u64,
        cnt_retry: u64,
    }

    impl WinModel {
        fn drive<const PR: usize>(&mut self, u: &mut Tb<PR>, now: u64) {
            u.seg.win_en.next = true;
            u.sched.wake_conn_valid.next = false;
            let mut open: Option<(usize, u32)> = None;
            // (outputs of this clock: registered state, settled at the tick)
            if u.seg.park_valid.val() && u.fetch.park_ready.val() {
                let q = u.seg.park_qp.val().to_u64() as usize;
                self.parks.push((now, q));
                let n = self.parks.iter().filter(|p| p.1 == q).count();
                if let Some(e) = self.at_park.iter().find(|e| e.0 == q && e.1 == n) {
                    open = Some((q, e.2));
                }
            }
            if let Some(e) = self.at.iter().find(|e| e.0 == now) {
                open = Some((e.1, e.2));
            }
            if let Some((q, e)) = open {
                self.wend[q] = e;
                u.sched.wake_conn_valid.next = true;
                u.sched.wake_conn.next = (q as u64).into();
                self.opened.push((now, q));
            }
            if u.seg.desc_valid.val() && u.seg.desc_ready.next {
                let q = u.seg.desc_qp.val().to_u64() as usize;
                let end = (u.seg.desc_seq.val().to_u64() as u32)
                    .wrapping_add(u.seg.desc_adv.val().to_u64() as u32);
                assert!(
                    (self.wend[q].wrapping_sub(end) as i32) >= 0,
                    "QP {q}: FPDU ending at {end} passes the window end {}",
                    self.wend[q]
                );
                self.descs.push((now, q));
            }
            let q = u.fetch.wqe_qp.val().to_u64() as usize;
            self.lag.push_back(self.wend.get(q).copied().unwrap_or(0));
            while self.lag.len() > 3 {
                self.lag.pop_front();
            }
            u.seg.win_end.next = (*self.lag.front().unwrap() as u64).into();
            self.cnt_park = u.sched.cnt_park.val().to_u64();
            self.cnt_retry = u.sched.cnt_park_retry.val().to_u64();
        }
    }

    impl TptModel {
        fn answer(&self, stag: u32, pd: u32, need: u64, to: u64, len: u64) -> (u64, u64, u64) {
            let Some((ents, pbl)) = &self.regions else {
                return (0, to, (1 << 30) - (to & ((1 << 30) - 1)));
            };
            let code = |f: TptFault| match f {
                TptFault::InvalidStag => crate::protection::tpt::fault::INVALID_STAG,
                TptFault::WrongPd => crate::protection::tpt::fault::WRONG_PD,
                TptFault::AccessRights => crate::protection::tpt::fault::ACCESS_RIGHTS,
                TptFault::Bounds => crate::protection::tpt::fault::BOUNDS,
                TptFault::OffsetWrap => crate::protection::tpt::fault::OFFSET_WRAP,
            };
            let st = Stag(stag);
            let Some(e) = ents.get(&st.index()) else {
                return (crate::protection::tpt::fault::INVALID_STAG, 0, 0);
            };
            if let Err(f) = e.check(st, pd, need as u8, to, len) {
                return (code(f), 0, 0);
            }
            if len == 0 {
                return (0, 0, 0);
            }
            let (Some((i, off)), Some((j, _))) = (e.page_of(to), e.page_of(to + len - 1)) else {
                return (crate::protection::tpt::fault::BOUNDS, 0, 0);
            };
            if !pbl.contains_key(&j) {
                return (crate::protection::tpt::fault::BOUNDS, 0, 0);
            }
            (0, pbl[&i] + off, (1u64 << e.page_shift) - off)
        }
        /// Before the clock's evaluation.
        fn drive<const PR: usize>(&mut self, u: &mut Tb<PR>, now: u64) {
            if let Some(w) = &mut self.win {
                w.drive(u, now);
            }
            u.seg.chk_ready.next = !self.busy;
            let r = self.pend.filter(|p| p.0 <= now);
            u.seg.res_valid.next = r.is_some();
            let (_, f, a, l) = r.unwrap_or_default();
            u.seg.res_fault.next = f.into();
            u.seg.res_addr.next = a.into();
            u.seg.res_page_left.next = l.into();
        }
        /// After it, before the edge: the handshakes.
        fn sample<const PR: usize>(&mut self, u: &Tb<PR>, now: u64, rng: &mut Rng) {
            if u.seg.res_valid.val() && u.seg.res_ready.val() {
                self.pend = None;
                self.busy = false;
            }
            if u.seg.chk_valid.val() && u.seg.chk_ready.val() {
                let s = &u.seg;
                let q = (
                    s.chk_stag.val().to_u64() as u32,
                    s.chk_pd.val().to_u64() as u32,
                    s.chk_need.val().to_u64(),
                    s.chk_to.val().to_u64(),
                    s.chk_len.val().to_u64(),
                );
                self.log.push(q);
                let (f, a, l) = self.answer(q.0, q.1, q.2, q.3, q.4);
                if let Some((idx, n)) = self.inval_after {
                    let seen = self.log.iter().filter(|r| Stag(r.0).index() == idx).count();
                    if seen == n {
                        if let Some((ents, _)) = &mut self.regions {
                            ents.get_mut(&idx).unwrap().state = TptState::Invalid;
                        }
                    }
                }
                self.pend = Some((now + 4 + rng.below(5) as u64, f, a, l));
                self.busy = true;
            }
        }
    }

    #[derive(Clone, Debug)]
    struct Desc {
        qp: usize,
        seq: u32,
        crc: bool,
        mk: bool,
        seq_start: u32,
        opcode: u64,
        last: bool,
        stag: u32,
        to: u64,
        qn: u32,
        msn: u32,
        mo: u32,
        pay_len: usize,
    }

    /// What one QP expects: segments (seq, FPDU) in order, completion
    /// records (idx, wr_id, status) in order.
    #[derive(Default)]
    struct QpRef {
        segs: VecDeque<(u32, Vec<u8>)>,
        cqs: VecDeque<(u32, u64, u64)>,
        mpa: Option<MpaSettings>,
    }

    struct QpSetup {
        log2: u32,
        ci0: u32,
        seq_start: u32,
        emss: u16,
        mpa: MpaSettings,
        wqes: Vec<[u8; WQE_SIZE]>,
    }

    struct Run {
        cycles: u64,
        first_desc: Option<u64>,
        desc_cycles: Vec<u64>,
        desc_qps: Vec<usize>,
        pay_cycles: Vec<u64>,
        qp_done: Vec<u64>,
        /// Payload DMA reads: (QP, bus address, octets).
        reads: Vec<(usize, u64, u64)>,
        cnt_prot: u64,
        /// The largest `xs_mulpdu` seen (the Read Response MULPDU).
        xs_mulpdu_max: u64,
        /// Payload reads marked inline.
        n_inl_reads: usize,
        /// The most payload reads unanswered at once (at most the
        /// profile's reorder slots).
        max_pay_reads: usize,
    }

    /// Posts every QP's WQEs (in random batches with doorbells interleaved
    /// across QPs) and checks every descriptor, payload octet and completion
    /// against the references.
    #[allow(clippy::too_many_arguments)]
    fn run(
        setups: &[QpSetup],
        refs: &mut [QpRef],
        mem: &mut [u8],
        latency: u64,
        jitter: u64,
        stress: bool,
        seed: u64,
        max_cycles: u64,
    ) -> Run {
        let mut tpm = TptModel::default();
        run_with(
            setups,
            refs,
            mem,
            latency,
            jitter,
            stress,
            seed,
            max_cycles,
            &mut tpm,
            &[],
        )
    }

    /// [`run`] with a TPT model and the QPs' PDs (`pds[q]`, 0 beyond).
    #[allow(clippy::too_many_arguments)]
    fn run_with(
        setups: &[QpSetup],
        refs: &mut [QpRef],
        mem: &mut [u8],
        latency: u64,
        jitter: u64,
        stress: bool,
        seed: u64,
        max_cycles: u64,
        tpm: &mut TptModel,
        pds: &[u32],
    ) -> Run {
        run_pr::<{ crate::profile::PR_SIM }>(
            setups, refs, mem, latency, jitter, stress, seed, max_cycles, tpm, pds,
        )
    }

    /// [`run_with`] for the segmenter of profile `PR`.
    #[allow(clippy::too_many_arguments)]
    fn run_pr<const PR: usize>(
        setups: &[QpSetup],
        refs: &mut [QpRef],
        mem: &mut [u8],
        latency: u64,
        jitter: u64,
        stress: bool,
        seed: u64,
        max_cycles: u64,
        tpm: &mut TptModel,
        pds: &[u32],
    ) -> Run {
        let mut rng = Rng::new(seed);
        let mut u = tb::<PR>();
        u.reset.next = true;
        tick!(*u);
        tick!(*u);
        u.reset.next = false;
        // Configuration (the firmware's part).
        for (q, s) in setups.iter().enumerate() {
            let base = ring_base(q);
            u.fetch.cfg_valid.next = true;
            u.fetch.cfg_qp.next = (q as u64).into();
            u.fetch.cfg_base.next = base.into();
            u.fetch.cfg_log2.next = (s.log2 as u64).into();
            u.fetch.cfg_ci.next = (s.ci0 as u64).into();
            u.fetch.cfg_ci_load.next = true;
            u.seg.cfg_valid.next = true;
            u.seg.cfg_qp.next = (q as u64).into();
            u.seg.cfg_seq.next = (s.seq_start as u64).into();
            u.seg.cfg_msn_send.next = 1.into();
            u.seg.cfg_msn_rreq.next = 1.into();
            u.seg.cfg_seq_start.next = (s.seq_start as u64).into();
            u.seg.cfg_mulpdu.next = (rnic_wire::mpa::mulpdu(s.emss, s.mpa.markers) as u64).into();
            u.seg.cfg_mk_en.next = s.mpa.markers;
            u.seg.cfg_crc_en.next = s.mpa.crc;
            u.seg.pd_wr_valid.next = true;
            u.seg.pd_wr_qp.next = (q as u64).into();
            u.seg.pd_wr_pd.next = (pds.get(q).copied().unwrap_or(0) as u64).into();
            tick!(*u);
        }
        u.fetch.cfg_valid.next = false;
        u.seg.cfg_valid.next = false;
        u.seg.pd_wr_valid.next = false;
        // Doorbell plan: per QP, batch boundaries.
        let mut posted = vec![0usize; setups.len()];
        let mut fdma = DmaPort::new(latency, jitter, stress);
        let mut sdma = DmaPort::new(latency, jitter, stress);
        let mut cur_desc: VecDeque<Desc> = VecDeque::new();
        let mut cur_pay: Vec<u8> = Vec::new();
        let mut res = Run {
            cycles: 0,
            first_desc: None,
            desc_cycles: vec![],
            desc_qps: vec![],
            pay_cycles: vec![],
            qp_done: vec![0; setups.len()],
            reads: vec![],
            cnt_prot: 0,
            xs_mulpdu_max: 0,
            n_inl_reads: 0,
            max_pay_reads: 0,
        };
        let mut first_db: Option<u64> = None;
        let total_segs: usize = refs.iter().map(|r| r.segs.len()).sum();
        let total_cqs: usize = refs.iter().map(|r| r.cqs.len()).sum();
        let (mut got_segs, mut got_cqs) = (0usize, 0usize);
        let mut now = 0u64;
        while got_segs < total_segs
            || got_cqs < total_cqs
            || !cur_desc.is_empty()
            || (0..setups.len()).any(|q| posted[q] < setups[q].wqes.len())
        {
            assert!(now < max_cycles, "hang: {got_segs}/{total_segs} segments, {got_cqs}/{total_cqs} completions after {now} clocks");
            // Host: a doorbell now and then (a storm when stress).
            u.db.csr_valid.next = false;
            let open: Vec<usize> = (0..setups.len())
                .filter(|&q| posted[q] < setups[q].wqes.len())
                .collect();
            if !open.is_empty() && (stress || rng.below(4) == 0) {
                let q = match tpm.db_first {
                    Some(f) if posted[f] == 0 => f,
                    _ => open[rng.below(open.len())],
                };
                let s = &setups[q];
                let n = 1 + rng.below(s.wqes.len() - posted[q]);
                let n = if stress { n } else { s.wqes.len() - posted[q] };
                for k in posted[q]..posted[q] + n {
                    let idx = s.ci0.wrapping_add(k as u32);
                    let slot = (idx & ((1 << s.log2) - 1)) as usize;
                    let a = ring_base(q) as usize + slot * WQE_SIZE;
                    mem[a..a + WQE_SIZE].copy_from_slice(&s.wqes[k]);
                }
                posted[q] += n;
                u.db.csr_valid.next = true;
                u.db.csr_write.next = true;
                u.db.csr_addr.next =
                    ((QP_DOORBELL_BASE + q as u32 * DOORBELL_PAGE_SIZE) as u64).into();
                u.db.csr_wdata.next = (s.ci0.wrapping_add(posted[q] as u32) as u64).into();
                first_db.get_or_insert(now);
            }
            // DMA ports.
            let rdy = !stress || rng.below(3) != 0;
            u.fetch.dma_rd_req_ready.next = rdy;
            u.seg.dma_rd_req_ready.next = !stress || rng.below(3) != 0;
            let fb = fdma.beat(now, &mut rng);
            u.fetch.dma_rd_cpl_valid.next = fb.is_some();
            if let Some((tag, d, _, last)) = fb {
                u.fetch.dma_rd_cpl_tag.next = tag.into();
                u.fetch.dma_rd_cpl_data.next = d.into();
                u.fetch.dma_rd_cpl_last.next = last;
            }
            let sb = sdma.beat(now, &mut rng);
            u.seg.dma_rd_cpl_valid.next = sb.is_some();
            if let Some((tag, d, keep, last)) = sb {
                let slots = 1u64 << crate::profile::PROFILES[PR].tx_slots_log2;
                assert!(tag >= PAY_TAG && tag < PAY_TAG + slots, "tag {tag:#x}");
                u.seg.dma_rd_cpl_tag.next = tag.into();
                u.seg.dma_rd_cpl_data.next = d.into();
                u.seg.dma_rd_cpl_keep.next = keep.into();
                u.seg.dma_rd_cpl_last.next = last;
            }
            u.seg.desc_ready.next = !stress || rng.below(4) != 0;
            u.seg.pay_ready.next = !stress || rng.below(4) != 0;
            u.seg.cq_ready.next = !stress || rng.below(2) != 0;
            tpm.drive(&mut u, now);
            assert!(simulate(&mut *u, 1000));
            tpm.sample(&u, now, &mut rng);
            res.xs_mulpdu_max = res.xs_mulpdu_max.max(u.seg.xs_mulpdu.val().to_u64());
            // Sample handshakes before the edge.
            if u.fetch.dma_rd_req_valid.val() && rdy {
                fdma.request(
                    now,
                    mem,
                    u.fetch.dma_rd_req_addr.val().to_u64(),
                    u.fetch.dma_rd_req_len.val().to_u64(),
                    u.fetch.dma_rd_req_tag.val().to_u64(),
                    &mut rng,
                );
            }
            if u.seg.dma_rd_req_valid.val() && u.seg.dma_rd_req_ready.val() {
                // Reads in the rings (below the payload heap) are of
                // inline messages, and only those are marked.
                assert_eq!(
                    u.seg.dma_rd_req_inl.val(),
                    u.seg.dma_rd_req_addr.val().to_u64() < 0x10_0000,
                    "inline mark of a read at {:#x}",
                    u.seg.dma_rd_req_addr.val().to_u64()
                );
                res.n_inl_reads += u.seg.dma_rd_req_inl.val() as usize;
                res.reads.push((
                    u.seg.desc_qp.val().to_u64() as usize,
                    u.seg.dma_rd_req_addr.val().to_u64(),
                    u.seg.dma_rd_req_len.val().to_u64(),
                ));
                sdma.request(
                    now,
                    mem,
                    u.seg.dma_rd_req_addr.val().to_u64(),
                    u.seg.dma_rd_req_len.val().to_u64(),
                    u.seg.dma_rd_req_tag.val().to_u64(),
                    &mut rng,
                );
            }
            if fb.is_some() && u.fetch.dma_rd_cpl_ready.val() {
                fdma.pop();
            }
            if sb.is_some() && u.seg.dma_rd_cpl_ready.val() {
                sdma.pop();
            }
            let unanswered = sdma.pending.len() + sdma.cur.is_some() as usize;
            assert!(unanswered <= 1 << crate::profile::PROFILES[PR].tx_slots_log2);
            res.max_pay_reads = res.max_pay_reads.max(unanswered);
            if u.seg.desc_valid.val() && u.seg.desc_ready.val() {
                let s = &u.seg;
                cur_desc.push_back(Desc {
                    qp: s.desc_qp.val().to_u64() as usize,
                    seq: s.desc_seq.val().to_u64() as u32,
                    crc: s.desc_crc_en.val(),
                    mk: s.desc_mk_en.val(),
                    seq_start: s.desc_seq_start.val().to_u64() as u32,
                    opcode: s.desc_opcode.val().to_u64(),
                    last: s.desc_last.val(),
                    stag: s.desc_stag.val().to_u64() as u32,
                    to: s.desc_to.val().to_u64(),
                    qn: s.desc_qn.val().to_u64() as u32,
                    msn: s.desc_msn.val().to_u64() as u32,
                    mo: s.desc_mo.val().to_u64() as u32,
                    pay_len: s.desc_pay_len.val().to_u64() as usize,
                });
                res.first_desc.get_or_insert(now - first_db.unwrap());
                res.desc_cycles.push(now);
                res.desc_qps.push(u.seg.desc_qp.val().to_u64() as usize);
            }
            if u.seg.pay_valid.val() && u.seg.pay_ready.val() {
                let d = u.seg.pay_data.val().to_u64().to_le_bytes();
                let keep = u.seg.pay_keep.val().to_u64() as usize;
                let last = u.seg.pay_last.val();
                let want = cur_desc
                    .front()
                    .expect("payload beat before its descriptor");
                let due = want.pay_len - cur_pay.len();
                if last {
                    assert_eq!(keep, due, "last beat keep");
                } else {
                    assert_eq!(keep, 8);
                    assert!(due > 8, "missing last");
                }
                cur_pay.extend_from_slice(&d[..keep]);
                res.pay_cycles.push(now);
            }
            if u.seg.cq_valid.val() && u.seg.cq_ready.val() {
                let q = u.seg.cq_qp.val().to_u64() as usize;
                let got = (
                    u.seg.cq_idx.val().to_u64() as u32,
                    u.seg.cq_wr_id.val().to_u64(),
                    u.seg.cq_status.val().to_u64(),
                );
                let want = refs[q]
                    .cqs
                    .pop_front()
                    .unwrap_or_else(|| panic!("unexpected completion {got:?} of QP {q}"));
                if got != want {
                    let k = got.0.wrapping_sub(setups[q].ci0) as usize;
                    eprintln!("WQE {k}: {:?}", SendWqe::parse(&setups[q].wqes[k]));
                    for (q2, s2) in setups.iter().enumerate() {
                        for (k2, w) in s2.wqes.iter().enumerate() {
                            if w[..8] == got.1.to_le_bytes() {
                                eprintln!(
                                    "got wr_id is QP {q2} WQE {k2} ci0 {}: {:?} {:x?}",
                                    s2.ci0,
                                    SendWqe::parse(w),
                                    w
                                );
                            }
                        }
                    }
                }
                assert_eq!(got, want, "completion of QP {q}");
                got_cqs += 1;
                res.qp_done[q] = now;
            }
            // Whole segments (zero-length ones complete at once).
            while let Some(d) = cur_desc.front() {
                if cur_pay.len() < d.pay_len {
                    break;
                }
                let d = cur_desc.pop_front().unwrap();
                check_segment(&d, &cur_pay, &mut refs[d.qp]);
                cur_pay.clear();
                got_segs += 1;
                res.qp_done[d.qp] = now;
            }
            tick!(*u);
            now += 1;
        }
        // Drain a little: nothing more may come out.
        for _ in 0..200 {
            u.seg.desc_ready.next = true;
            u.seg.cq_ready.next = true;
            u.fetch.dma_rd_cpl_valid.next = false;
            u.seg.dma_rd_cpl_valid.next = false;
            tick!(*u);
            assert!(!u.seg.desc_valid.val() && !u.seg.cq_valid.val());
            assert!(!u.fetch.dma_rd_req_valid.val());
        }
        assert_eq!(u.db.pending.val().to_u64(), 0);
        res.cnt_prot = u.seg.cnt_prot.val().to_u64();
        res.cycles = now;
        res
    }

    fn ring_base(q: usize) -> u64 {
        0x1000 * q as u64
    }

    /// The descriptor and its payload, framed by the `rnic-wire` emitters,
    /// must be the reference segment byte for byte.
    fn check_segment(d: &Desc, pay: &[u8], r: &mut QpRef) {
        let mpa = r.mpa.unwrap();
        assert_eq!(
            (d.crc, d.mk, d.seq_start),
            (mpa.crc, mpa.markers, mpa.seq_start)
        );
        let repr = match d.opcode {
            0 => RdmapRepr::RdmaWrite {
                last: d.last,
                stag: d.stag,
                to: d.to,
                payload: pay,
            },
            1 => {
                assert!(d.last);
                assert_eq!(d.qn, 1);
                let h = ReadRequestHeader::new_checked(pay).unwrap();
                RdmapRepr::ReadRequest {
                    msn: d.msn,
                    request: ReadRequestRepr::parse(&h).unwrap(),
                }
            }
            3..=6 => {
                assert_eq!(d.qn, 0);
                RdmapRepr::Send {
                    solicited: d.opcode == 5 || d.opcode == 6,
                    invalidate_stag: (d.opcode == 4 || d.opcode == 6).then_some(d.stag),
                    last: d.last,
                    msn: d.msn,
                    mo: d.mo,
                    payload: pay,
                }
            }
            op => panic!("opcode {op}"),
        };
        let mut ulpdu = vec![0u8; repr.buffer_len()];
        repr.emit(&mut ulpdu).unwrap();
        let fpdu = frame_ulpdu(&mpa, d.seq, &ulpdu).unwrap();
        let (seq, want) = r.segs.pop_front().expect("unexpected segment");
        assert_eq!(d.seq, seq, "sequence number");
        if fpdu != want {
            let i = (0..fpdu.len().min(want.len())).find(|&i| fpdu[i] != want[i]);
            panic!(
                "segment {d:?}: lengths {} / {}, first difference at {i:?}",
                fpdu.len(),
                want.len()
            );
        }
    }

    /// Random WQEs for one QP, their reference segments and completions, and
    /// the payload buffers in host memory.
    #[allow(clippy::too_many_arguments)]
    fn make_qp(
        rng: &mut Rng,
        mem: &mut [u8],
        heap: &mut usize,
        n: usize,
        max_len: usize,
        bad: bool,
        mpa: MpaSettings,
        emss: u16,
        log2: u32,
        ci0: u32,
    ) -> (QpSetup, QpRef) {
        let mut stream = TxStream::new(mpa, emss);
        let mut r = QpRef {
            mpa: Some(mpa),
            ..Default::default()
        };
        let mut wqes = vec![];
        for k in 0..n {
            let idx = ci0.wrapping_add(k as u32);
            let len = if rng.below(6) == 0 {
                0
            } else {
                rng.below(max_len + 1)
            };
            let addr = *heap as u64;
            let data = rng.bytes(len);
            mem[*heap..*heap + len].copy_from_slice(&data);
            *heap += len + rng.below(8);
            let signaled = rng.below(3) != 0;
            let mut flags = if signaled { WQE_FLAG_SIGNALED } else { 0 };
            let opcode = [
                SendOpcode::RdmaWrite,
                SendOpcode::Send,
                SendOpcode::SendWithInv,
                SendOpcode::RdmaRead,
            ][rng.below(4)];
            if opcode.is_send() && rng.below(2) == 0 {
                flags |= WQE_FLAG_SOLICITED;
            }
            let sge = Sge {
                addr,
                length: len as u32,
                lkey: rng.next_u64() as u32,
            };
            let kind = if bad { rng.below(7) } else { 0 };
            // Inline (the message in the WQE; the payload buffer unused).
            let inline = (kind == 0
                && opcode != SendOpcode::RdmaRead
                && len <= MAX_INLINE_DATA
                && rng.below(3) == 0)
                .then(|| InlineData::new(&data).unwrap());
            let nsge = if inline.is_some()
                || (len == 0 && opcode != SendOpcode::RdmaRead && rng.below(2) == 0)
            {
                0
            } else {
                1
            };
            let w = SendWqe {
                wr_id: rng.next_u64(),
                opcode,
                flags,
                imm_or_inv: rng.next_u64() as u32,
                remote_offset: rng.next_u64() >> rng.below(64),
                remote_stag: rng.next_u64() as u32,
                sges: SgeList::new(&[sge][..nsge]).unwrap(),
                inline,
            };
            let mut b = [0u8; WQE_SIZE];
            w.emit(&mut b).unwrap();
            match kind {
                1 => b[8] = 6 + rng.below(250) as u8, // opcode
                2 => b[10] = 7,                       // num_sge
                3 => b[11] = 1,                       // reserved octet
                4 => b[9] |= 0x10,                    // unknown flag
                5 => b[28] = 1,                       // reserved word
                6 => {
                    // An RDMA Read with two sink SGEs: valid ABI, not
                    // supported by this block (CAPS[23:16] = 1).
                    let s2 = SgeList::new(&[sge, sge]).unwrap();
                    SendWqe {
                        opcode: SendOpcode::RdmaRead,
                        flags: flags & !WQE_FLAG_SOLICITED,
                        sges: s2,
                        ..w
                    }
                    .emit(&mut b)
                    .unwrap();
                }
                _ => {}
            }
            wqes.push(b);
            if kind != 0 {
                // The independent reference agrees it is malformed (or, for
                // a two-SGE Read, parses: refused as unsupported).
                assert_eq!(SendWqe::parse(&b).is_err(), kind != 6);
                r.cqs.push_back((idx, w.wr_id, STATUS_LOCAL_QP_OP_ERR));
                continue;
            }
            let msg = match opcode {
                SendOpcode::RdmaWrite => Message::Write {
                    stag: w.remote_stag,
                    to: w.remote_offset,
                    data: &data,
                },
                SendOpcode::Send | SendOpcode::SendWithInv => Message::Send {
                    data: &data,
                    solicited: flags & WQE_FLAG_SOLICITED != 0,
                    invalidate: (opcode == SendOpcode::SendWithInv).then_some(w.imm_or_inv),
                },
                _ => Message::ReadRequest(ReadRequestRepr {
                    sink_stag: sge.lkey,
                    sink_to: sge.addr,
                    size: sge.length,
                    src_stag: w.remote_stag,
                    src_to: w.remote_offset,
                }),
            };
            let msg = match msg {
                // TO wrap is refused by the model; keep TOs in range.
                Message::Write { stag, data, .. } => Message::Write {
                    stag,
                    to: w.remote_offset >> 1,
                    data,
                },
                m => m,
            };
            if let Message::Write { to, .. } = msg {
                // Re-emit with the TO the model was given.
                let w2 = SendWqe {
                    remote_offset: to,
                    ..w
                };
                w2.emit(wqes.last_mut().unwrap()).unwrap();
            }
            for s in stream.send(&msg).unwrap() {
                r.segs.push_back((s.seq, s.payload));
            }
            // a signaled Read's record holds its CQE's place (SendCpl)
            if signaled {
                r.cqs.push_back((idx, w.wr_id, 0));
            }
        }
        let setup = QpSetup {
            log2,
            ci0,
            seq_start: mpa.seq_start,
            emss,
            mpa,
            wqes,
        };
        (setup, r)
    }

    fn mem() -> Vec<u8> {
        vec![0u8; 1 << 22]
    }

    /// Doorbell storm over `nqp` QPs with random batches, random producer
    /// steps, rings that wrap (and a 32-bit index wrap on QP 0), random MPA
    /// settings, DMA completions out of order with gaps, back-pressure
    /// everywhere, and malformed WQEs on every fourth QP: every segment
    /// matches `TxStream`, every completion comes once, in per-QP order.
    fn storm(nqp: usize, per_qp: usize, max_len: usize, seed: u64) {
        let mut rng = Rng::new(seed);
        let mut m = mem();
        let mut heap = 0x10_0000usize;
        let mut setups = vec![];
        let mut refs = vec![];
        for q in 0..nqp {
            let mpa = MpaSettings {
                crc: rng.below(2) == 0,
                markers: rng.below(2) == 0,
                seq_start: (rng.next_u64() as u32) | 0xFFFF_F000,
            };
            let emss = [1460u16, 300, 512, 700][rng.below(4)];
            let ci0 = if q == 0 {
                0xFFFF_FFFD
            } else {
                rng.next_u64() as u32
            };
            let (s, r) = make_qp(
                &mut rng,
                &mut m,
                &mut heap,
                per_qp,
                max_len,
                q % 4 == 1,
                mpa,
                emss,
                3,
                ci0,
            );
            setups.push(s);
            refs.push(r);
        }
        let res = run(&setups, &mut refs, &mut m, 78, 60, true, seed, 400_000);
        assert!(refs.iter().all(|r| r.segs.is_empty() && r.cqs.is_empty()));
        assert!(res.n_inl_reads > 0, "no inline WQE in the storm");
        let (lo, hi) = (
            res.qp_done.iter().min().unwrap(),
            res.qp_done.iter().max().unwrap(),
        );
        eprintln!(
            "storm: {nqp} QPs x {per_qp} WQEs, {} segments in {} clocks; QPs finish between clock {lo} and {hi}",
            res.desc_cycles.len(),
            res.cycles
        );
    }

    /// Equal load on 16 QPs (8 one-segment 64-octet Sends each, all posted
    /// within the first clocks): how evenly are they served? Jain's index of
    /// the descriptors per QP when half of all have gone (1.0 = perfectly
    /// even), and the longest run of one QP's descriptors (measured: service
    /// is round-robin per fetch of up to PREFETCH WQEs, so with 8 WQEs per QP
    /// half the QPs are done at half-way: Jain 0.5).
    #[test]
    fn fairness_16_qps_equal_load() {
        let mut rng = Rng::new(21);
        let mut m = mem();
        let mut heap = 0x10_0000usize;
        let mut setups = vec![];
        let mut refs = vec![];
        let mpa = MpaSettings {
            crc: true,
            markers: false,
            seq_start: 0,
        };
        for _ in 0..16 {
            let mut stream = TxStream::new(mpa, 1460);
            let mut r = QpRef {
                mpa: Some(mpa),
                ..Default::default()
            };
            let mut wqes = vec![];
            for k in 0..8u64 {
                let data = rng.bytes(64);
                m[heap..heap + 64].copy_from_slice(&data);
                let w = SendWqe {
                    wr_id: k,
                    opcode: SendOpcode::Send,
                    flags: 0,
                    imm_or_inv: 0,
                    remote_offset: 0,
                    remote_stag: 0,
                    sges: SgeList::new(&[Sge {
                        addr: heap as u64,
                        length: 64,
                        lkey: 0,
                    }])
                    .unwrap(),
                    inline: None,
                };
                heap += 64;
                let mut b = [0u8; WQE_SIZE];
                w.emit(&mut b).unwrap();
                wqes.push(b);
                let msg = Message::Send {
                    data: &data,
                    solicited: false,
                    invalidate: None,
                };
                for sg in stream.send(&msg).unwrap() {
                    r.segs.push_back((sg.seq, sg.payload));
                }
            }
            setups.push(QpSetup {
                log2: 4,
                ci0: 0,
                seq_start: 0,
                emss: 1460,
                mpa,
                wqes,
            });
            refs.push(r);
        }
        let res = run(&setups, &mut refs, &mut m, 78, 0, false, 3, 100_000);
        let half = res.desc_qps.len() / 2;
        let mut n = [0f64; 16];
        for &q in &res.desc_qps[..half] {
            n[q] += 1.0;
        }
        let jain = n.iter().sum::<f64>().powi(2) / (16.0 * n.iter().map(|x| x * x).sum::<f64>());
        let mut run_len = 1;
        let mut longest = 1;
        for w in res.desc_qps.windows(2) {
            run_len = if w[0] == w[1] { run_len + 1 } else { 1 };
            longest = longest.max(run_len);
        }
        eprintln!(
            "fairness: 16 QPs x 8 Sends, {} descriptors in {} clocks; at half-way per-QP counts {:?}, Jain index {jain:.3}; longest run of one QP {longest}",
            res.desc_qps.len(),
            res.cycles,
            n
        );
        // Round-robin is per fetch: one QP gets at most one fetch (up to
        // PREFETCH WQEs) in a row while others wait.
        assert!(longest <= crate::transmit::wqe_fetch::PREFETCH as usize);
        assert!(jain >= 0.5);
    }

    #[test]
    fn storm_16_qps_matches_txstream() {
        storm(16, 6, 900, 5);
    }

    #[test]
    fn storm_64_qps_matches_txstream() {
        storm(64, 3, 200, 6);
    }

    /// QPs of random WQEs (`make_qp`: Writes, Sends, Read Requests, random
    /// lengths) for the parking tests; QP `q`'s window ends at `wend[q]`.
    fn park_qps(
        n_qp: usize,
        per_qp: usize,
        max_len: usize,
        seed: u64,
    ) -> (Vec<QpSetup>, Vec<QpRef>, Vec<u8>) {
        let mut rng = Rng::new(seed);
        let mut m = mem();
        let mut heap = 0x10_0000usize;
        let (mut setups, mut refs) = (vec![], vec![]);
        for q in 0..n_qp {
            let mpa = MpaSettings {
                crc: true,
                markers: q % 2 == 1,
                seq_start: 0xFFFF_F000 + 0x100 * q as u32,
            };
            let (s, r) = make_qp(
                &mut rng, &mut m, &mut heap, per_qp, max_len, false, mpa, 1460, 4, 0,
            );
            setups.push(s);
            refs.push(r);
        }
        (setups, refs, m)
    }

    /// Parking (module doc): QP 0's peer window admits a quarter of its
    /// stream and opens in three steps (window updates at clocks 3000, 6000
    /// and 9000: half, three quarters, all); QPs 1..3 have an open window. QP 0 parks
    /// (instead of holding the segmenter) and resumes mid-message: every
    /// descriptor, payload octet and completion matches `TxStream` QP by
    /// QP (`run_with`), no FPDU passes the window, and the other QPs finish
    /// while QP 0 is still stalled.
    ///
    /// Two streams: in the first, QP 0 parks only inside untagged messages
    /// (a resumed RDMA Write's tagged offset is never checked by it); in
    /// the second it parks inside an RDMA Write, so its resumed TO is.
    #[test]
    fn window_parked_qp_resumes_mid_message() {
        for seed in [0x9A4C, 2] {
            window_park_case(seed);
        }
    }

    fn window_park_case(seed: u64) {
        let (setups, mut refs, mut m) = park_qps(4, 6, 6000, seed);
        let s0 = setups[0].seq_start;
        // QP 0's stream in sequence space (FPDUs, markers included).
        let total = refs[0].segs.iter().map(|s| s.1.len() as u32).sum::<u32>();
        let mut w = WinModel {
            wend: setups
                .iter()
                .map(|s| s.seq_start.wrapping_add(1 << 30))
                .collect(),
            ..Default::default()
        };
        w.wend[0] = s0.wrapping_add(total / 4);
        w.at = vec![
            (3000, 0, s0.wrapping_add(total / 2)),
            (6000, 0, s0.wrapping_add(total / 4 * 3)),
            (9000, 0, s0.wrapping_add(1 << 30)),
        ];
        // QP 0 first, so that the others wait when it stalls.
        let mut tpm = TptModel {
            win: Some(w),
            db_first: Some(0),
            ..Default::default()
        };
        let res = run_with(
            &setups,
            &mut refs,
            &mut m,
            78,
            20,
            false,
            11,
            200_000,
            &mut tpm,
            &[],
        );
        assert!(refs.iter().all(|r| r.segs.is_empty() && r.cqs.is_empty()));
        let w = tpm.win.unwrap();
        eprintln!(
            "window park: QP 0 ({total} octets on the wire) parked {} times ({} retry sweeps); QPs 1..3 done at {:?}, QP 0 at {}; opened {:?}",
            w.cnt_park,
            w.cnt_retry,
            &res.qp_done[1..],
            res.qp_done[0],
            w.opened
        );
        // QP 0 parks while another QP waits (docs/rtl.md, "Parked QPs": not
        // when it is alone, then it waits holding the WQE for the next
        // opening).
        assert!(w.cnt_park >= 1, "QP 0 parked while QPs 1..3 waited");
        assert!(w.parks.iter().all(|p| p.1 == 0), "only QP 0 parks");
        // The other QPs are not held behind QP 0.
        assert!(res.qp_done[1..].iter().all(|&t| t < 9000));
        // QP 0 sent something before each opening and something after.
        for &(t, _) in &w.opened {
            assert!(w.descs.iter().any(|&(c, q)| q == 0 && c > t));
        }
        // Clocks from each window update to QP 0's next descriptor.
        for &(t, _) in &w.opened {
            let next = w.descs.iter().find(|&&(c, q)| q == 0 && c > t).unwrap().0;
            eprintln!(
                "window update at {t}: QP 0's next descriptor {} clocks later",
                next - t
            );
        }
    }

    /// A window update in the very clock QP 0's park is taken is not lost:
    /// QP 0 is granted again at once (not only at the retry sweep after
    /// `PARK_RETRY` clocks).
    #[test]
    fn wakeup_in_the_clock_of_the_park() {
        // Four QPs, so that others wait when QP 0 stalls (it parks only
        // then).
        let (setups, mut refs, mut m) = park_qps(4, 6, 5000, 0x5A3E);
        let s0 = setups[0].seq_start;
        let mut w = WinModel {
            wend: setups
                .iter()
                .map(|s| s.seq_start.wrapping_add(1 << 30))
                .collect(),
            ..Default::default()
        };
        w.wend[0] = s0.wrapping_add(1000);
        w.at_park = vec![(0, 1, s0.wrapping_add(1 << 30))];
        // without a park the window opens late (a failed check, not a hang)
        w.at = vec![(150_000, 0, s0.wrapping_add(1 << 30))];
        let mut tpm = TptModel {
            win: Some(w),
            ..Default::default()
        };
        let _res = run_with(
            &setups,
            &mut refs,
            &mut m,
            78,
            0,
            false,
            12,
            200_000,
            &mut tpm,
            &[],
        );
        assert!(refs.iter().all(|r| r.segs.is_empty() && r.cqs.is_empty()));
        let w = tpm.win.unwrap();
        let (t_open, _) = w.opened[0];
        let next = w
            .descs
            .iter()
            .find(|&&(c, q)| q == 0 && c > t_open)
            .unwrap()
            .0;
        eprintln!(
            "same-clock wakeup at {t_open} (park {:?}): QP 0's next descriptor {} clocks later, {} parks, {} retry sweeps",
            w.parks,
            next - t_open,
            w.cnt_park,
            w.cnt_retry
        );
        assert_eq!(w.parks[0].0, t_open, "the update came in the park's clock");
        assert_eq!(w.cnt_park, 1);
        // Woken at once (no retry sweep); with 3 other QPs' WQEs queued
        // ahead of its refetch (whole messages each) its next descriptor
        // comes after theirs.
        assert!(
            next - t_open < PARK_RETRY,
            "woken at once, not by the sweep"
        );
        assert_eq!(w.cnt_retry, 0);
    }

    fn one_qp_writes(
        n: usize,
        len: usize,
        emss: u16,
        markers: bool,
    ) -> (Vec<QpSetup>, Vec<QpRef>, Vec<u8>) {
        let mut rng = Rng::new(99);
        let mut m = mem();
        let mpa = MpaSettings {
            crc: true,
            markers,
            seq_start: 1000,
        };
        let mut stream = TxStream::new(mpa, emss);
        let mut r = QpRef {
            mpa: Some(mpa),
            ..Default::default()
        };
        let mut wqes = vec![];
        for k in 0..n {
            let addr = 0x10_0000 + k * len.next_multiple_of(0x4000).max(0x4000);
            let data = rng.bytes(len);
            m[addr..addr + len].copy_from_slice(&data);
            let w = SendWqe {
                wr_id: k as u64,
                opcode: SendOpcode::RdmaWrite,
                flags: 0,
                imm_or_inv: 0,
                remote_offset: 0x4000,
                remote_stag: 0x1234,
                sges: SgeList::new(&[Sge {
                    addr: addr as u64,
                    length: len as u32,
                    lkey: 1,
                }])
                .unwrap(),
                inline: None,
            };
            let mut b = [0u8; WQE_SIZE];
            w.emit(&mut b).unwrap();
            wqes.push(b);
            for s in stream
                .send(&Message::Write {
                    stag: 0x1234,
                    to: 0x4000,
                    data: &data,
                })
                .unwrap()
            {
                r.segs.push_back((s.seq, s.payload));
            }
        }
        let s = QpSetup {
            log2: 6,
            ci0: 0,
            seq_start: 1000,
            emss,
            mpa,
            wqes,
        };
        (vec![s], vec![r], m)
    }

    /// Doorbell → first descriptor, and the descriptor rate of 64-octet
    /// RDMA Writes, with the default 78-clock DMA latency, no jitter, no
    /// back-pressure.
    #[test]
    fn latency_and_64b_write_rate() {
        let (s, mut r, mut m) = one_qp_writes(24, 64, 1460, false);
        let res = run(&s, &mut r, &mut m, 78, 0, false, 1, 100_000);
        let d = &res.desc_cycles;
        let rate = (d.len() - 1) as f64 / (d[d.len() - 1] - d[0]) as f64;
        eprintln!(
            "doorbell write -> first descriptor: {} clocks; 64 B Writes: {} descriptors in {} clocks = {:.3} per clock ({:.1} clocks each)",
            res.first_desc.unwrap(),
            d.len(),
            d[d.len() - 1] - d[0],
            rate,
            1.0 / rate
        );
        eprintln!("payload reads unanswered at once: {}", res.max_pay_reads);
        assert!(res.first_desc.unwrap() < 78 * 2 + 40);
        // More reads in flight than a 4-slot buffer allows.
        assert!(
            res.max_pay_reads > 4,
            "{} reads in flight",
            res.max_pay_reads
        );
    }

    /// Segmentation of long Writes into 1442-octet ULPDUs (MULPDU of EMSS
    /// 1448): the payload stream rate (beats per clock from the first to the
    /// last payload beat).
    #[test]
    fn payload_rate_1442() {
        // EMSS 1448 without markers: MULPDU 1442 = 14 + 1428 octets payload.
        let (s, mut r, mut m) = one_qp_writes(2, 1428 * 6, 1448, false);
        assert_eq!(rnic_wire::mpa::mulpdu(1448, false), 1442);
        let res = run(&s, &mut r, &mut m, 78, 0, false, 2, 100_000);
        let p = &res.pay_cycles;
        let span = p[p.len() - 1] - p[0] + 1;
        eprintln!(
            "1442-octet segments: {} payload beats in {} clocks = {:.3} beats per clock ({} descriptors)",
            p.len(),
            span,
            p.len() as f64 / span as f64,
            res.desc_cycles.len()
        );
        assert!(p.len() as f64 / span as f64 > 0.95);
    }

    /// Full 9000-MTU FPDUs (`caps::MAX_MULPDU` = 8882: EMSS 8960 with
    /// markers, 8888 without) against `TxStream`: Writes of two and a half
    /// maximum segments, so each full segment's 8868-octet payload is read
    /// as 4096 + 4096 + 676 octets into consecutive reorder slots (tags
    /// PAY_TAG | slot in order), contiguous on the bus, and drained as one
    /// payload stream (`pay_last` once, payload bytes exact in `run`).
    #[test]
    fn jumbo_mulpdu_8882_reads_in_pieces() {
        use rnic_wire::abi::caps::MAX_MULPDU;
        for (markers, emss) in [(true, 8960u16), (false, 8888)] {
            assert_eq!(rnic_wire::mpa::mulpdu(emss, markers), MAX_MULPDU);
            let pay = MAX_MULPDU as usize - TAGGED_HDR as usize;
            let (s, mut r, mut m) = one_qp_writes(2, 2 * pay + pay / 2, emss, markers);
            let res = run(&s, &mut r, &mut m, 78, 0, false, 7, 200_000);
            assert!(r[0].segs.is_empty() && r[0].cqs.is_empty());
            // Per Write: 4096, 4096, 676 | 4096, 4096, 676 | 4096, 338.
            let lens: Vec<u64> = res.reads.iter().map(|x| x.2).collect();
            let one = [4096, 4096, 676, 4096, 4096, 676, 4096, 338];
            assert_eq!(lens, [one, one].concat(), "read lengths");
            for w in res.reads.windows(2) {
                if w[0].2 == SEG_READ {
                    assert_eq!(w[1].1, w[0].1 + SEG_READ, "pieces contiguous");
                }
            }
            let p = &res.pay_cycles;
            let span = p[p.len() - 1] - p[0] + 1;
            eprintln!(
                "MULPDU 8882 (markers {markers}): {} reads, {} payload beats in {} clocks = {:.3} beats per clock",
                lens.len(),
                p.len(),
                span,
                p.len() as f64 / span as f64
            );
            assert!(p.len() as f64 / span as f64 > 0.95);
        }
    }

    /// Random Writes, Sends, Reads (and zero-length ones) up to 20000
    /// octets at MULPDU 8882 with out-of-order DMA completions, gaps and
    /// back-pressure on every port: every segment equals `TxStream`'s.
    #[test]
    fn jumbo_random_matches_txstream() {
        use rnic_wire::abi::caps::MAX_MULPDU;
        for (i, (markers, emss)) in [(true, 8960u16), (false, 8888)].into_iter().enumerate() {
            let mut rng = Rng::new(40 + i as u64);
            let mut m = mem();
            let mut heap = 0x10_0000usize;
            let mpa = MpaSettings {
                crc: i == 0,
                markers,
                seq_start: 0u32.wrapping_sub(20_000),
            };
            let (su, r) = make_qp(
                &mut rng, &mut m, &mut heap, 8, 20_000, false, mpa, emss, 4, 0,
            );
            assert_eq!(rnic_wire::mpa::mulpdu(emss, markers), MAX_MULPDU);
            let mut refs = vec![r];
            let res = run(
                &[su],
                &mut refs,
                &mut m,
                78,
                60,
                true,
                11 + i as u64,
                600_000,
            );
            assert!(refs[0].segs.is_empty() && refs[0].cqs.is_empty());
            assert!(res.reads.iter().all(|x| x.2 <= SEG_READ));
            assert!(res.reads.iter().any(|x| x.2 == SEG_READ));
            eprintln!(
                "MULPDU 8882 random (markers {markers}): {} segments in {} clocks, {} reads",
                res.desc_cycles.len(),
                res.cycles,
                res.reads.len()
            );
        }
    }

    /// Board profile (MTU 1500): QPs at the board's largest MULPDUs (1454
    /// markers off, 1442 on: EMSS 1460) segment random Writes, Sends and
    /// Reads exactly as `TxStream` through the 256-beat reorder slots; QPs
    /// whose MULPDU is above the board's limit for their marker setting
    /// (1462 off, 1450 on, 8882 on) get every WQE completed with
    /// `LocalQpOperationError` and nothing read or sent; `xs_mulpdu` (the
    /// Read Responses' MULPDU) never shows more than the limit. Without the
    /// profile's limits the sim limit (8882) would let them through.
    #[test]
    fn board_mulpdu_limits_refuse_longer_qps() {
        use crate::profile::PR_BOARD;
        let mut rng = Rng::new(61);
        let mut m = mem();
        let mut heap = 0x10_0000usize;
        let mut setups = vec![];
        let mut refs = vec![];
        // (EMSS, markers, accepted)
        let qps = [
            (1460u16, true, true),
            (1460, false, true),
            (1468, false, false),
            (8960, true, false),
            (1468, true, false),
        ];
        for (q, &(emss, markers, ok)) in qps.iter().enumerate() {
            let mpa = MpaSettings {
                crc: q % 2 == 0,
                markers,
                seq_start: (rng.next_u64() as u32) | 0xFFFF_F000,
            };
            let (su, mut r) = make_qp(
                &mut rng, &mut m, &mut heap, 6, 5000, false, mpa, emss, 3, q as u32,
            );
            let mulpdu = rnic_wire::mpa::mulpdu(emss, markers);
            let limit = if markers { 1442 } else { 1454 };
            assert_eq!(mulpdu <= limit, ok, "QP {q}: MULPDU {mulpdu}");
            if !ok {
                r.segs.clear();
                r.cqs = su
                    .wqes
                    .iter()
                    .enumerate()
                    .map(|(k, w)| {
                        let wr_id = u64::from_le_bytes(w[..8].try_into().unwrap());
                        (su.ci0.wrapping_add(k as u32), wr_id, STATUS_LOCAL_QP_OP_ERR)
                    })
                    .collect();
            }
            setups.push(su);
            refs.push(r);
        }
        let mut tpm = TptModel::default();
        let res = run_pr::<PR_BOARD>(
            &setups,
            &mut refs,
            &mut m,
            78,
            60,
            true,
            62,
            400_000,
            &mut tpm,
            &[],
        );
        assert!(refs.iter().all(|r| r.segs.is_empty() && r.cqs.is_empty()));
        assert!(res.reads.iter().all(|x| x.0 < 2 && x.2 <= 1440));
        assert!(res.desc_qps.iter().all(|&q| q < 2));
        // The Read Response MULPDU (`xs_mulpdu`) follows the QP loaded
        // last, the refused ones included, and is capped at the board's
        // limit for its marker setting: 8882 (markers on) shows as 1442.
        assert!(res.xs_mulpdu_max >= 1442 && res.xs_mulpdu_max <= 1454);
        eprintln!(
            "board: {} segments in {} clocks, {} reads",
            res.desc_cycles.len(),
            res.cycles,
            res.reads.len()
        );
    }

    #[test]
    fn generates_verilog() {
        for (name, v) in [
            ("tx_seg", {
                let mut u = TxSeg::default();
                u.connect_all();
                generate_verilog(&u)
            }),
            ("wqe_fetch", {
                let mut u = WqeFetch::default();
                u.connect_all();
                generate_verilog(&u)
            }),
        ] {
            let v = crate::gen::postprocess_as(&v, name);
            assert!(v.contains(&format!("module {name}(")));
            if let Ok(dir) = std::env::var("TX_ENGINE_VERILOG_DIR") {
                std::fs::write(format!("{dir}/{name}.v"), &v).unwrap();
            }
        }
    }
    /// ORD hold (RFC 5040 §6.2, RFC 6581): QP 0 with ORD 1 and QP 1 with
    /// ORD 2, 6 Read WQEs each (`SendWqe::emit`) posted at once; each Read
    /// Request's Read Response (L = 1) is delivered to `RdTrack` 150..400
    /// clocks after the request went out. The number of Read Requests on the
    /// wire without their response never exceeds the QP's ORD, the ORD is
    /// reached (so the hold was exercised), every signaled Read completes in
    /// order and no Read is counted beyond the ORD. WQE 3 of each QP is a
    /// fenced zero-length Write instead: it goes out only once no Read of
    /// its QP is outstanding (the verbs fence), in ring order.
    #[test]
    fn read_wqes_wait_at_ord() {
        let mut rng = Rng::new(0x04D5);
        let ords = [1usize, 2];
        let n = 6usize;
        // WQE 3 of each QP is a fenced Write: it must not go out while a
        // Read before it is outstanding (IB fence), and the Reads after it
        // wait for it (ring order).
        const FENCED: usize = 3;
        let mut fenced_sent = [false; 2];
        let mut mem = vec![0u8; 1 << 20];
        let mut u = tb::<{ crate::profile::PR_SIM }>();
        u.reset.next = true;
        tick!(*u);
        tick!(*u);
        u.reset.next = false;
        let mut wqes: Vec<Vec<[u8; WQE_SIZE]>> = vec![];
        let mut want_cpl: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(), VecDeque::new()];
        for (q, &ord) in ords.iter().enumerate() {
            u.fetch.cfg_valid.next = true;
            u.fetch.cfg_qp.next = (q as u64).into();
            u.fetch.cfg_base.next = ring_base(q).into();
            u.fetch.cfg_log2.next = 4.into();
            u.fetch.cfg_ci.next = 0.into();
            u.fetch.cfg_ci_load.next = true;
            u.seg.cfg_valid.next = true;
            u.seg.cfg_qp.next = (q as u64).into();
            u.seg.cfg_seq.next = 1000.into();
            u.seg.cfg_msn_send.next = 1.into();
            u.seg.cfg_msn_rreq.next = 1.into();
            u.seg.cfg_seq_start.next = 1000.into();
            u.seg.cfg_mulpdu.next = 1448.into();
            u.seg.cfg_mk_en.next = false;
            u.seg.cfg_crc_en.next = true;
            u.rdt.cfg_valid.next = true;
            u.rdt.cfg_qp.next = (q as u64).into();
            u.rdt.cfg_ord.next = (ord as u64).into();
            tick!(*u);
            let mut v = vec![];
            for k in 0..n {
                let len = 1 + rng.below(9000) as u32;
                if k == FENCED {
                    // a fenced zero-length RDMA Write, unsignaled
                    let w = SendWqe {
                        wr_id: rng.next_u64(),
                        opcode: SendOpcode::RdmaWrite,
                        flags: WQE_FLAG_FENCE,
                        imm_or_inv: 0,
                        remote_offset: rng.next_u64(),
                        remote_stag: rng.next_u64() as u32,
                        sges: SgeList::new(&[]).unwrap(),
                        inline: None,
                    };
                    let mut b = [0u8; WQE_SIZE];
                    w.emit(&mut b).unwrap();
                    let a = ring_base(q) as usize + k * WQE_SIZE;
                    mem[a..a + WQE_SIZE].copy_from_slice(&b);
                    v.push(b);
                    continue;
                }
                let w = SendWqe {
                    wr_id: rng.next_u64(),
                    opcode: SendOpcode::RdmaRead,
                    flags: if k % 3 == 2 { 0 } else { WQE_FLAG_SIGNALED },
                    imm_or_inv: 0,
                    remote_offset: rng.next_u64(),
                    remote_stag: rng.next_u64() as u32,
                    sges: SgeList::new(&[Sge {
                        addr: 0x1000 * (k as u64 + 1),
                        length: len,
                        lkey: 7,
                    }])
                    .unwrap(),
                    inline: None,
                };
                if k % 3 != 2 {
                    want_cpl[q].push_back((w.wr_id, len as u64));
                }
                let mut b = [0u8; WQE_SIZE];
                w.emit(&mut b).unwrap();
                let a = ring_base(q) as usize + k * WQE_SIZE;
                mem[a..a + WQE_SIZE].copy_from_slice(&b);
                v.push(b);
            }
            wqes.push(v);
        }
        u.fetch.cfg_valid.next = false;
        u.seg.cfg_valid.next = false;
        u.rdt.cfg_valid.next = false;
        let mut fdma = DmaPort::new(20, 10, false);
        let mut outst = [0usize; 2];
        let mut max_outst = [0usize; 2];
        let mut sent = [0usize; 2];
        // (due clock, qp) of each Read Response still to be delivered
        let mut resp: Vec<(u64, usize)> = vec![];
        let mut got_cpl = 0usize;
        let total_cpl: usize = want_cpl.iter().map(|c| c.len()).sum();
        let mut now = 0u64;
        let mut rang = 0usize;
        let mut tpm = TptModel::default();
        let mut trng = Rng::new(5);
        // (until every Read went: an unsignaled last Read of a QP parked
        // at ORD goes after its wakeup and refetch)
        while got_cpl < total_cpl
            || outst.iter().any(|&o| o > 0)
            || sent != [n - 1, n - 1]
            || fenced_sent != [true, true]
        {
            assert!(now < 20_000, "hang: sent {sent:?}, outstanding {outst:?}");
            u.db.csr_valid.next = false;
            if rang < 2 {
                u.db.csr_valid.next = true;
                u.db.csr_write.next = true;
                u.db.csr_addr.next =
                    ((QP_DOORBELL_BASE + rang as u32 * DOORBELL_PAGE_SIZE) as u64).into();
                u.db.csr_wdata.next = (n as u64).into();
                rang += 1;
            }
            u.fetch.dma_rd_req_ready.next = true;
            u.seg.dma_rd_req_ready.next = true;
            let fb = fdma.beat(now, &mut rng);
            u.fetch.dma_rd_cpl_valid.next = fb.is_some();
            if let Some((tag, d, _, last)) = fb {
                u.fetch.dma_rd_cpl_tag.next = tag.into();
                u.fetch.dma_rd_cpl_data.next = d.into();
                u.fetch.dma_rd_cpl_last.next = last;
            }
            u.seg.dma_rd_cpl_valid.next = false;
            u.seg.desc_ready.next = true;
            u.seg.pay_ready.next = true;
            u.seg.cq_ready.next = true;
            u.rdt.cpl_ready.next = rng.below(2) == 0;
            u.rdt.term_ready.next = true;
            // a due Read Response (L = 1) placed, while RdTrack takes one
            let due = resp.iter().position(|&(t, _)| t <= now);
            u.rdt.tag_valid.next = false;
            if let Some(i) = due {
                if !u.rdt.busy.val() {
                    let q = resp[i].1;
                    u.rdt.tag_valid.next = true;
                    u.rdt.tag_opcode.next = 2.into(); // Read Response
                    u.rdt.tag_ddp_last.next = true;
                    u.rdt.tag_qpn.next = (q as u64).into();
                    u.rdt.tag_conn.next = (q as u64).into();
                    u.rdt.tag_len.next = 100.into();
                    resp.remove(i);
                    outst[q] -= 1;
                }
            }
            tpm.drive(&mut u, now);
            assert!(simulate(&mut *u, 1000));
            tpm.sample(&u, now, &mut trng);
            if u.fetch.dma_rd_req_valid.val() {
                fdma.request(
                    now,
                    &mem,
                    u.fetch.dma_rd_req_addr.val().to_u64(),
                    u.fetch.dma_rd_req_len.val().to_u64(),
                    u.fetch.dma_rd_req_tag.val().to_u64(),
                    &mut rng,
                );
            }
            if fb.is_some() && u.fetch.dma_rd_cpl_ready.val() {
                fdma.pop();
            }
            assert!(!u.seg.dma_rd_req_valid.val(), "a Read reads no payload");
            if u.seg.cq_valid.val() {
                // a Read's record holds its CQE's place; RdTrack completes it
                assert_eq!(
                    u.seg.cq_opcode.val().to_u64(),
                    4,
                    "only Reads are signaled here"
                );
                assert_eq!(u.seg.cq_status.val().to_u64(), 0);
            }
            if u.seg.desc_valid.val() && u.seg.desc_opcode.val().to_u64() == 0 {
                let q = u.seg.desc_qp.val().to_u64() as usize;
                assert_eq!(sent[q], FENCED, "QP {q}: ring order");
                assert_eq!(
                    outst[q], 0,
                    "QP {q}: the fenced Write went out with {} Reads outstanding",
                    outst[q]
                );
                fenced_sent[q] = true;
            } else if u.seg.desc_valid.val() {
                assert_eq!(u.seg.desc_opcode.val().to_u64(), 1, "Read Request");
                let q = u.seg.desc_qp.val().to_u64() as usize;
                assert_eq!(fenced_sent[q], sent[q] >= FENCED, "QP {q}: ring order");
                sent[q] += 1;
                outst[q] += 1;
                max_outst[q] = max_outst[q].max(outst[q]);
                assert!(
                    outst[q] <= ords[q],
                    "QP {q}: {} Read Requests outstanding, ORD {}",
                    outst[q],
                    ords[q]
                );
                resp.push((now + 150 + rng.below(250) as u64, q));
            }
            if u.rdt.cpl_valid.val() && u.rdt.cpl_ready.val() {
                let q = u.rdt.cpl_qp.val().to_u64() as usize;
                let w = want_cpl[q].pop_front().expect("unexpected completion");
                assert_eq!(
                    (u.rdt.cpl_wr_id.val().to_u64(), u.rdt.cpl_len.val().to_u64()),
                    w
                );
                assert_eq!(u.rdt.cpl_status.val().to_u64(), 0);
                got_cpl += 1;
            }
            assert!(!u.rdt.term_valid.val(), "no stray Read Response");
            tick!(*u);
            now += 1;
        }
        assert_eq!(sent, [n - 1, n - 1]);
        assert_eq!(fenced_sent, [true, true]);
        assert_eq!(max_outst, [1, 2], "the ORD was reached");
        assert_eq!(u.rdt.cnt_ord_over.val().to_u64(), 0);
        assert_eq!(u.rdt.cnt_cpl.val().to_u64(), total_cpl as u64);
        // A Read WQE at ORD is parked (module doc), woken by RdTrack's
        // count decrement of its QP.
        let parks = u.sched.cnt_park.val().to_u64();
        let sweeps = u.sched.cnt_park_retry.val().to_u64();
        eprintln!(
            "ORD hold: {n} + {n} Reads in {now} clocks, {parks} parks, {sweeps} retry sweeps"
        );
        assert!(parks > 0, "the ORD stall parked");
    }

    /// The reference for send-side translation: `TxStream::send`'s
    /// segmentation with one more cut, at every page end of the region
    /// (docs/rtl.md "Send-side SGE checks"), built from the same
    /// `rnic-wire` emitters; checked against `TxStream::send` itself where
    /// no page end falls inside a segment.
    struct PagedTx {
        mpa: MpaSettings,
        mulpdu: usize,
        seq: u32,
        msn: [u32; 2],
    }

    impl PagedTx {
        fn new(mpa: MpaSettings, emss: u16) -> Self {
            PagedTx {
                mpa,
                mulpdu: rnic_wire::mpa::mulpdu(emss, mpa.markers) as usize,
                seq: mpa.seq_start,
                msn: [1, 1],
            }
        }
        /// Segments (seq, FPDU) and payload reads (bus address, octets) of
        /// `msg`, whose data starts at `va` in region `e`.
        #[allow(clippy::type_complexity)]
        fn send<'a>(
            &mut self,
            msg: &Message<'a>,
            va: u64,
            e: &TptEntry,
            pbl: &HashMap<u32, u64>,
        ) -> (Vec<(u32, Vec<u8>)>, Vec<(u64, u64)>) {
            let len = match *msg {
                Message::Write { data, .. } | Message::Send { data, .. } => data.len(),
                _ => 0,
            };
            self.send_sges(msg, &[(va, len, *e)], pbl)
        }
        /// The same for a message gathered from SGEs `(va, octets, region)`
        /// in order (their octets are `msg`'s data): TxStream's segments
        /// with cuts at every SGE end and page end (module doc, "Gather").
        #[allow(clippy::type_complexity)]
        fn send_sges<'a>(
            &mut self,
            msg: &Message<'a>,
            sges: &[(u64, usize, TptEntry)],
            pbl: &HashMap<u32, u64>,
        ) -> (Vec<(u32, Vec<u8>)>, Vec<(u64, u64)>) {
            let mut reprs: Vec<RdmapRepr<'a>> = vec![];
            let mut reads = vec![];
            if let Message::ReadRequest(request) = *msg {
                reprs.push(RdmapRepr::ReadRequest {
                    msn: self.msn[1],
                    request,
                });
                self.msn[1] += 1;
            } else {
                let (data, room) = match *msg {
                    Message::Write { data, .. } => (data, self.mulpdu - 14),
                    Message::Send { data, .. } => (data, self.mulpdu - 18),
                    _ => unreachable!(),
                };
                let msn = self.msn[0];
                if matches!(msg, Message::Send { .. }) {
                    self.msn[0] += 1;
                }
                let mut off = 0usize;
                loop {
                    let rem = data.len() - off;
                    let mut n = rem.min(room);
                    if rem > 0 {
                        // The SGE holding octet `off` (empty ones hold none).
                        let (mut k, mut o) = (0, off);
                        while o >= sges[k].1 {
                            o -= sges[k].1;
                            k += 1;
                        }
                        let (va, sl, e) = sges[k];
                        let (i, po) = e.page_of(va + o as u64).unwrap();
                        n = n.min((1usize << e.page_shift) - po as usize).min(sl - o);
                        reads.push((pbl[&i] + po, n as u64));
                    }
                    let last = off + n == data.len();
                    let payload = &data[off..off + n];
                    reprs.push(match *msg {
                        Message::Write { stag, to, .. } => RdmapRepr::RdmaWrite {
                            last,
                            stag,
                            to: to + off as u64,
                            payload,
                        },
                        Message::Send {
                            solicited,
                            invalidate,
                            ..
                        } => RdmapRepr::Send {
                            solicited,
                            invalidate_stag: invalidate,
                            last,
                            msn,
                            mo: off as u32,
                            payload,
                        },
                        _ => unreachable!(),
                    });
                    off += n;
                    if last {
                        break;
                    }
                }
            }
            let mut segs = vec![];
            for r in &reprs {
                let mut u = vec![0u8; r.buffer_len()];
                r.emit(&mut u).unwrap();
                let f = frame_ulpdu(&self.mpa, self.seq, &u).unwrap();
                let next = self.seq.wrapping_add(f.len() as u32);
                segs.push((self.seq, f));
                self.seq = next;
            }
            (segs, reads)
        }
    }

    /// Send-side SGE checks and translation: random Writes, Sends (with SE,
    /// with Invalidate) and Reads from regions of scattered, shuffled 4 KiB
    /// and 8 KiB pages at unaligned virtual addresses, under a TPT model
    /// built from `rnic_wire::abi::tpt`: every segment and payload read
    /// equals the page-cut reference (`PagedTx`, itself equal to
    /// `TxStream::send` when no page end falls inside a segment); and one
    /// QP per violation kind (bad index, bad key, wrong PD, below / beyond
    /// the region, length wrap, invalidated entry, a Read's sink without
    /// LOCAL_WRITE), each refused by `TptEntry::check` too: the WQE
    /// completes with `LocalProtectionError`, no DMA read and no segment
    /// for it, the QP's later WQE is neither sent nor completed (its send
    /// side is off), and every payload read lies in registered pages.
    #[test]
    fn send_sges_are_checked_and_translated() {
        let mut rng = Rng::new(0x5e9);
        let mut m = mem();
        let mut ents: HashMap<u32, TptEntry> = HashMap::new();
        let mut pbl: HashMap<u32, u64> = HashMap::new();
        let mut pages4: Vec<u64> = (0x100..0x200u64).map(|p| p << 12).collect();
        let mut pages8: Vec<u64> = (0x100..0x180u64).map(|p| p << 13).collect();
        for v in [&mut pages4, &mut pages8] {
            for i in (1..v.len()).rev() {
                v.swap(i, rng.below(i + 1));
            }
        }
        let mut owned: Vec<(u64, u64)> = vec![];
        let mut next_pbl = 16u32;
        #[allow(clippy::too_many_arguments)]
        let mut region = |m: &mut [u8],
                          index: u32,
                          key: u8,
                          pd: u32,
                          access: u8,
                          ps: u8,
                          va: u64,
                          length: u64,
                          state: TptState,
                          rng: &mut Rng| {
            let first = va & !((1u64 << ps) - 1);
            let npages = (va + length - first).div_ceil(1 << ps) as u32;
            for k in 0..npages {
                let b = if ps == 12 { pages4.pop() } else { pages8.pop() }.unwrap();
                let n = 1usize << ps;
                m[b as usize..b as usize + n].copy_from_slice(&rng.bytes(n));
                pbl.insert(next_pbl + k, b);
                owned.push((b, n as u64));
            }
            let e = TptEntry {
                state,
                key,
                access,
                page_shift: ps,
                pd,
                va,
                length,
                pbl_base: next_pbl,
                npages,
            };
            next_pbl += npages + 3;
            ents.insert(index, e);
            (Stag::new(index, key).unwrap().0, e)
        };
        const PD: u32 = 5;
        let va_a = 0x7f00_1234_5000 + 0x123;
        let (sa, ea) = region(
            &mut m,
            3,
            0x5a,
            PD,
            ACCESS_ALL,
            12,
            va_a,
            6 * 4096 - 0x123 - 77,
            TptState::Valid,
            &mut rng,
        );
        let va_b = 0x5555_0000_0000 + 0x1f00;
        let (sb, eb) = region(
            &mut m,
            9,
            0x11,
            PD,
            ACCESS_ALL,
            13,
            va_b,
            3 * 8192 - 0x1f00,
            TptState::Valid,
            &mut rng,
        );
        let (sc, ec) = region(
            &mut m,
            4,
            0x22,
            PD,
            ACCESS_ALL,
            12,
            0x1000_0000,
            8192,
            TptState::Invalid,
            &mut rng,
        );
        let (sd, ed) = region(
            &mut m,
            5,
            0x33,
            PD + 1,
            ACCESS_ALL,
            12,
            0x2000_0000,
            8192,
            TptState::Valid,
            &mut rng,
        );
        let (se, ee) = region(
            &mut m,
            6,
            0x44,
            PD,
            rnic_wire::abi::tpt::ACCESS_REMOTE_READ,
            12,
            0x3000_0100,
            8000,
            TptState::Valid,
            &mut rng,
        );
        // The octets of a region at a virtual address (through the page list).
        let bytes_at = |m: &[u8], e: &TptEntry, va: u64, len: usize| -> Vec<u8> {
            (0..len as u64)
                .map(|i| {
                    let (p, o) = e.page_of(va + i).unwrap();
                    m[(pbl[&p] + o) as usize]
                })
                .collect()
        };
        let mpa = MpaSettings {
            crc: true,
            markers: true,
            seq_start: 0xFFFF_F123,
        };
        let emss = 1460u16;
        // The reference itself: where no page end cuts, it is TxStream's.
        {
            let data = rng.bytes(3000);
            let msg = Message::Send {
                data: &data,
                solicited: false,
                invalidate: None,
            };
            let huge = TptEntry {
                page_shift: 30,
                va: 0,
                length: 1 << 30,
                npages: 1,
                pbl_base: 0,
                ..ea
            };
            let p0: HashMap<u32, u64> = [(0, 0)].into();
            let want: Vec<(u32, Vec<u8>)> = TxStream::new(mpa, emss)
                .send(&msg)
                .unwrap()
                .into_iter()
                .map(|s| (s.seq, s.payload))
                .collect();
            assert_eq!(
                PagedTx::new(mpa, emss).send(&msg, 0x100, &huge, &p0).0,
                want
            );
        }
        let mut setups = vec![];
        let mut refs = vec![];
        let mut want_reads: Vec<Vec<(u64, u64)>> = vec![];
        // A WQE and its reference.
        #[allow(clippy::too_many_arguments)]
        let post = |wqes: &mut Vec<[u8; WQE_SIZE]>,
                    r: &mut QpRef,
                    reads: &mut Vec<(u64, u64)>,
                    tx: &mut PagedTx,
                    rng: &mut Rng,
                    m: &[u8],
                    opcode: SendOpcode,
                    lkey: u32,
                    e: Option<&TptEntry>,
                    va: u64,
                    len: usize,
                    idx: u32,
                    expect: Option<u64>| {
            let signaled = expect.is_some() || rng.below(3) != 0;
            let mut flags = if signaled { WQE_FLAG_SIGNALED } else { 0 };
            if opcode.is_send() && rng.below(2) == 0 {
                flags |= WQE_FLAG_SOLICITED;
            }
            let w = SendWqe {
                wr_id: rng.next_u64(),
                opcode,
                flags,
                imm_or_inv: rng.next_u64() as u32,
                remote_offset: rng.next_u64() >> 20,
                remote_stag: rng.next_u64() as u32,
                sges: SgeList::new(&[Sge {
                    addr: va,
                    length: len as u32,
                    lkey,
                }])
                .unwrap(),
                inline: None,
            };
            let mut b = [0u8; WQE_SIZE];
            w.emit(&mut b).unwrap();
            wqes.push(b);
            match expect {
                Some(st) => r.cqs.push_back((idx, w.wr_id, st)),
                None => {
                    let e = e.unwrap();
                    let data = if opcode == SendOpcode::RdmaRead {
                        vec![]
                    } else {
                        bytes_at(m, e, va, len)
                    };
                    let msg = match opcode {
                        SendOpcode::RdmaWrite => Message::Write {
                            stag: w.remote_stag,
                            to: w.remote_offset,
                            data: &data,
                        },
                        SendOpcode::RdmaRead => Message::ReadRequest(ReadRequestRepr {
                            sink_stag: lkey,
                            sink_to: va,
                            size: len as u32,
                            src_stag: w.remote_stag,
                            src_to: w.remote_offset,
                        }),
                        _ => Message::Send {
                            data: &data,
                            solicited: flags & WQE_FLAG_SOLICITED != 0,
                            invalidate: (opcode == SendOpcode::SendWithInv).then_some(w.imm_or_inv),
                        },
                    };
                    let (segs, rd) = tx.send(&msg, va, e, &pbl);
                    r.segs.extend(segs);
                    reads.extend(rd);
                    if signaled {
                        r.cqs.push_back((idx, w.wr_id, 0));
                    }
                }
            }
        };
        // QP 0: good WQEs only.
        {
            let mut tx = PagedTx::new(mpa, emss);
            let mut r = QpRef {
                mpa: Some(mpa),
                ..Default::default()
            };
            let (mut wqes, mut reads) = (vec![], vec![]);
            for k in 0..14u32 {
                let opcode = [
                    SendOpcode::RdmaWrite,
                    SendOpcode::Send,
                    SendOpcode::SendWithInv,
                    SendOpcode::RdmaRead,
                ][rng.below(4)];
                let (lkey, e) = match rng.below(3) {
                    0 => (sa, &ea),
                    1 => (sb, &eb),
                    _ if opcode != SendOpcode::RdmaRead => (se, &ee),
                    _ => (sa, &ea),
                };
                let len = if rng.below(8) == 0 {
                    0
                } else {
                    rng.below(9000.min(e.length as usize) + 1)
                };
                let va = e.va + rng.below(e.length as usize - len + 1) as u64;
                post(
                    &mut wqes,
                    &mut r,
                    &mut reads,
                    &mut tx,
                    &mut rng,
                    &m,
                    opcode,
                    lkey,
                    Some(e),
                    va,
                    len,
                    k,
                    None,
                );
            }
            setups.push(QpSetup {
                log2: 4,
                ci0: 0,
                seq_start: mpa.seq_start,
                emss,
                mpa,
                wqes,
            });
            refs.push(r);
            want_reads.push(reads);
        }
        // QPs 1..=8: a good Write, one refused WQE, a Send never sent.
        let prot = STATUS_LOCAL_PROT_ERR;
        let bad: [(SendOpcode, u32, u64, usize, Option<&TptEntry>); 8] = [
            (
                SendOpcode::Send,
                Stag::new(200, 1).unwrap().0,
                va_a,
                100,
                None,
            ),
            (SendOpcode::RdmaWrite, sa ^ 0xFF, va_a, 100, Some(&ea)),
            (SendOpcode::Send, sd, ed.va, 100, Some(&ed)),
            (SendOpcode::RdmaWrite, sa, va_a - 1, 100, Some(&ea)),
            (
                SendOpcode::SendWithInv,
                sa,
                va_a + ea.length - 50,
                100,
                Some(&ea),
            ),
            (SendOpcode::RdmaWrite, sa, u64::MAX - 10, 100, Some(&ea)),
            (SendOpcode::Send, sc, ec.va, 100, Some(&ec)),
            (SendOpcode::RdmaRead, se, ee.va, 100, Some(&ee)),
        ];
        for (q, &(op, lkey, va, len, e)) in bad.iter().enumerate() {
            let need = if op == SendOpcode::RdmaRead {
                rnic_wire::abi::tpt::ACCESS_LOCAL_WRITE
            } else {
                0
            };
            if let Some(e) = e {
                assert!(
                    e.check(Stag(lkey), PD, need, va, len as u64).is_err(),
                    "kind {q}"
                );
            }
            let mut tx = PagedTx::new(mpa, emss);
            let mut r = QpRef {
                mpa: Some(mpa),
                ..Default::default()
            };
            let (mut wqes, mut reads) = (vec![], vec![]);
            post(
                &mut wqes,
                &mut r,
                &mut reads,
                &mut tx,
                &mut rng,
                &m,
                SendOpcode::RdmaWrite,
                sa,
                Some(&ea),
                va_a + 4000,
                300,
                0,
                None,
            );
            post(
                &mut wqes,
                &mut r,
                &mut reads,
                &mut tx,
                &mut rng,
                &m,
                op,
                lkey,
                None,
                va,
                len,
                1,
                Some(prot),
            );
            let mut r2 = QpRef::default();
            post(
                &mut wqes,
                &mut r2,
                &mut vec![],
                &mut tx,
                &mut rng,
                &m,
                SendOpcode::Send,
                sa,
                Some(&ea),
                va_a,
                64,
                2,
                None,
            );
            setups.push(QpSetup {
                log2: 4,
                ci0: 0,
                seq_start: mpa.seq_start,
                emss,
                mpa,
                wqes,
            });
            refs.push(r);
            want_reads.push(reads);
        }
        // Gather (module doc): a WQE of 0..=6 SGEs, some empty, from the
        // regions above; `bad` = Some(k): SGE k is refused (all are
        // checked before any octet is read).
        #[allow(clippy::too_many_arguments)]
        let post_sges = |wqes: &mut Vec<[u8; WQE_SIZE]>,
                         r: &mut QpRef,
                         reads: &mut Vec<(u64, u64)>,
                         tx: &mut PagedTx,
                         rng: &mut Rng,
                         m: &[u8],
                         opcode: SendOpcode,
                         sges: &[(u32, u64, usize, TptEntry)],
                         idx: u32,
                         bad: bool| {
            let signaled = bad || rng.below(3) != 0;
            let mut flags = if signaled { WQE_FLAG_SIGNALED } else { 0 };
            if opcode.is_send() && rng.below(2) == 0 {
                flags |= WQE_FLAG_SOLICITED;
            }
            let list: Vec<Sge> = sges
                .iter()
                .map(|&(lkey, addr, len, _)| Sge {
                    addr,
                    length: len as u32,
                    lkey,
                })
                .collect();
            let w = SendWqe {
                wr_id: rng.next_u64(),
                opcode,
                flags,
                imm_or_inv: rng.next_u64() as u32,
                remote_offset: rng.next_u64() >> 20,
                remote_stag: rng.next_u64() as u32,
                sges: SgeList::new(&list).unwrap(),
                inline: None,
            };
            let mut b = [0u8; WQE_SIZE];
            w.emit(&mut b).unwrap();
            wqes.push(b);
            if bad {
                r.cqs.push_back((idx, w.wr_id, STATUS_LOCAL_PROT_ERR));
                return;
            }
            let data: Vec<u8> = sges
                .iter()
                .flat_map(|(_, va, len, e)| bytes_at(m, e, *va, *len))
                .collect();
            let msg = match opcode {
                SendOpcode::RdmaWrite => Message::Write {
                    stag: w.remote_stag,
                    to: w.remote_offset,
                    data: &data,
                },
                _ => Message::Send {
                    data: &data,
                    solicited: flags & WQE_FLAG_SOLICITED != 0,
                    invalidate: (opcode == SendOpcode::SendWithInv).then_some(w.imm_or_inv),
                },
            };
            let pieces: Vec<(u64, usize, TptEntry)> =
                sges.iter().map(|&(_, va, len, e)| (va, len, e)).collect();
            let (segs, rd) = tx.send_sges(&msg, &pieces, &pbl);
            r.segs.extend(segs);
            reads.extend(rd);
            if signaled {
                r.cqs.push_back((idx, w.wr_id, 0));
            }
        };
        let good_sge = |rng: &mut Rng| -> (u32, u64, usize, TptEntry) {
            let (lkey, e) = [(sa, ea), (sb, eb), (se, ee)][rng.below(3)];
            let len = if rng.below(5) == 0 {
                0
            } else {
                1 + rng.below(3000.min(e.length as usize))
            };
            let va = e.va + rng.below(e.length as usize - len + 1) as u64;
            (lkey, va, len, e)
        };
        // QP 9: Writes and Sends gathered from 0..=6 SGEs.
        {
            let mut tx = PagedTx::new(mpa, emss);
            let mut r = QpRef {
                mpa: Some(mpa),
                ..Default::default()
            };
            let (mut wqes, mut reads) = (vec![], vec![]);
            for k in 0..14u32 {
                let opcode = [
                    SendOpcode::RdmaWrite,
                    SendOpcode::Send,
                    SendOpcode::SendWithInv,
                ][rng.below(3)];
                let n = [0, 1, 2, 3, 4, 5, 6, 6, 6, 4][rng.below(10)];
                let sges: Vec<_> = (0..n).map(|_| good_sge(&mut rng)).collect();
                post_sges(
                    &mut wqes, &mut r, &mut reads, &mut tx, &mut rng, &m, opcode, &sges, k, false,
                );
            }
            setups.push(QpSetup {
                log2: 4,
                ci0: 0,
                seq_start: mpa.seq_start,
                emss,
                mpa,
                wqes,
            });
            refs.push(r);
            want_reads.push(reads);
        }
        // QPs 10..=13: a good gathered Write, then a 4-SGE WQE whose SGE k
        // (0, 1, 2, 3) is refused — nothing of it is read, not even the
        // good SGEs before the bad one — then a Send never sent.
        let n_gather_bad = 4;
        for k in 0..n_gather_bad {
            let mut tx = PagedTx::new(mpa, emss);
            let mut r = QpRef {
                mpa: Some(mpa),
                ..Default::default()
            };
            let (mut wqes, mut reads) = (vec![], vec![]);
            let sges: Vec<_> = (0..3).map(|_| good_sge(&mut rng)).collect();
            post_sges(
                &mut wqes,
                &mut r,
                &mut reads,
                &mut tx,
                &mut rng,
                &m,
                SendOpcode::RdmaWrite,
                &sges,
                0,
                false,
            );
            let mut sges: Vec<_> = (0..4)
                .map(|_| {
                    let mut s = good_sge(&mut rng);
                    s.2 = s.2.max(1);
                    s
                })
                .collect();
            // below its region, or another PD's region, or a bad key
            sges[k] = match k % 3 {
                0 => (sa, va_a - 1, 100, ea),
                1 => (sd, ed.va, 100, ed),
                _ => (sb ^ 0xFF, eb.va, 100, eb),
            };
            let (lkey, va, len, e) = sges[k];
            assert!(e.check(Stag(lkey), PD, 0, va, len as u64).is_err());
            post_sges(
                &mut wqes,
                &mut r,
                &mut reads,
                &mut tx,
                &mut rng,
                &m,
                SendOpcode::Send,
                &sges,
                1,
                true,
            );
            let mut r2 = QpRef::default();
            post(
                &mut wqes,
                &mut r2,
                &mut vec![],
                &mut tx,
                &mut rng,
                &m,
                SendOpcode::Send,
                sa,
                Some(&ea),
                va_a,
                64,
                2,
                None,
            );
            setups.push(QpSetup {
                log2: 4,
                ci0: 0,
                seq_start: mpa.seq_start,
                emss,
                mpa,
                wqes,
            });
            refs.push(r);
            want_reads.push(reads);
        }
        let mut tpm = TptModel {
            regions: Some((ents, pbl.clone())),
            ..Default::default()
        };
        let pds = vec![PD; setups.len()];
        let res = run_with(
            &setups, &mut refs, &mut m, 78, 40, true, 9, 300_000, &mut tpm, &pds,
        );
        assert!(refs.iter().all(|r| r.segs.is_empty() && r.cqs.is_empty()));
        for (q, want) in want_reads.iter().enumerate() {
            let got: Vec<(u64, u64)> = res
                .reads
                .iter()
                .filter(|r| r.0 == q)
                .map(|r| (r.1, r.2))
                .collect();
            assert_eq!(&got, want, "payload reads of QP {q}");
        }
        for &(_, a, n) in &res.reads {
            assert!(
                owned.iter().any(|&(b, s)| a >= b && a + n <= b + s),
                "read {a:#x}+{n} outside the registered pages"
            );
        }
        assert_eq!(res.cnt_prot, 8 + n_gather_bad as u64);
        eprintln!(
            "send SGE checks: {} segments, {} payload reads, {} TPT checks in {} clocks",
            res.desc_cycles.len(),
            res.reads.len(),
            tpm.log.len(),
            res.cycles
        );
    }

    /// A region invalidated after a message's first (whole-SGE) check: the
    /// segments inside the first page go out, the translation of the next
    /// page is refused, no further segment or read, the WQE completes with
    /// `LocalProtectionError` and the QP's next WQE is never sent.
    #[test]
    fn region_invalidated_mid_message_stops_at_the_next_page() {
        let mut rng = Rng::new(0x1d);
        let mut m = mem();
        let pages: Vec<u64> = vec![0x23_0000, 0x11_0000, 0x31_7000];
        for &p in &pages {
            let d = rng.bytes(4096);
            m[p as usize..p as usize + 4096].copy_from_slice(&d);
        }
        let e = TptEntry {
            state: TptState::Valid,
            key: 0x5a,
            access: ACCESS_ALL,
            page_shift: 12,
            pd: 3,
            va: 0x7f00_0000_0123,
            length: 3 * 4096 - 0x123,
            pbl_base: 40,
            npages: 3,
        };
        let pbl: HashMap<u32, u64> = (0..3).map(|i| (40 + i, pages[i as usize])).collect();
        let lkey = Stag::new(3, 0x5a).unwrap().0;
        let mpa = MpaSettings {
            crc: true,
            markers: false,
            seq_start: 77,
        };
        let emss = 1460u16;
        let data: Vec<u8> = (0..9000u64)
            .map(|i| {
                let (p, o) = e.page_of(e.va + i).unwrap();
                m[(pbl[&p] + o) as usize]
            })
            .collect();
        let w = SendWqe {
            wr_id: 0xabc,
            opcode: SendOpcode::RdmaWrite,
            flags: 0,
            imm_or_inv: 0,
            remote_offset: 0x5000,
            remote_stag: 0x99,
            sges: SgeList::new(&[Sge {
                addr: e.va,
                length: 9000,
                lkey,
            }])
            .unwrap(),
            inline: None,
        };
        let later = SendWqe {
            wr_id: 0xdef,
            opcode: SendOpcode::Send,
            flags: WQE_FLAG_SIGNALED,
            sges: SgeList::new(&[Sge {
                addr: e.va,
                length: 10,
                lkey,
            }])
            .unwrap(),
            ..w
        };
        let mut wqes = vec![];
        for x in [&w, &later] {
            let mut b = [0u8; WQE_SIZE];
            x.emit(&mut b).unwrap();
            wqes.push(b);
        }
        let (segs, reads) = PagedTx::new(mpa, emss).send(
            &Message::Write {
                stag: 0x99,
                to: 0x5000,
                data: &data,
            },
            e.va,
            &e,
            &pbl,
        );
        // Only the first page's segments.
        let first = 4096 - 0x123u64;
        let mut k = 0;
        let mut sum = 0;
        while sum < first {
            sum += reads[k].1;
            k += 1;
        }
        assert_eq!(sum, first);
        let mut r = QpRef {
            mpa: Some(mpa),
            ..Default::default()
        };
        r.segs.extend(segs[..k].iter().cloned());
        r.cqs.push_back((0, 0xabc, STATUS_LOCAL_PROT_ERR));
        let setups = vec![QpSetup {
            log2: 3,
            ci0: 0,
            seq_start: mpa.seq_start,
            emss,
            mpa,
            wqes,
        }];
        let mut refs = vec![r];
        let mut tpm = TptModel {
            regions: Some(([(3, e)].into(), pbl.clone())),
            inval_after: Some((3, 1)),
            ..Default::default()
        };
        let res = run_with(
            &setups,
            &mut refs,
            &mut m,
            78,
            20,
            false,
            4,
            100_000,
            &mut tpm,
            &[3],
        );
        assert!(refs[0].segs.is_empty() && refs[0].cqs.is_empty());
        let got: Vec<(u64, u64)> = res.reads.iter().map(|r| (r.1, r.2)).collect();
        assert_eq!(got, reads[..k].to_vec());
        assert_eq!(res.cnt_prot, 1);
        // The whole-SGE check, then the refused translation of page 2.
        assert_eq!(tpm.log.len(), 2);
        assert_eq!((tpm.log[1].3, tpm.log[1].4), (e.va + first, 9000 - first));
    }
}
