//! `rnic_core`: the top of the RTL, composing the blocks that exist so far.
//! Its port list is the contract with `verilator-sys`, `sim` and the FPGA
//! wrapper; it is listed in `hw/generated/rnic_core.ports` and described in
//! `docs/rtl.md`. Add ports at the end of a group; do not rename.
//!
//! Current RX data path:
//! ```text
//! mac_rx_* → RxCheck (header/checksum verdict, 3-clock delay)
//!          → RxFifo (store and forward; drops bad FCS; verdict in the frame record)
//!          → RxParse ──── header record (rx_hdr_*) + realigned TCP payload → rx_pay_*
//!               │  ↕ RxSplit ↔ ConnTable (ct_wr_*, ct_rd_*)  → ack_req_*
//!               └─ whole frames → ExcQueue → exc_*
//! ```
//! A [`Crc32cX64`] computes the CRC32c of every payload leaving on `rx_pay_*`.
//!
//! RX ULP path (when `rx_ulp_en` = 1, the fast-path payload goes here
//! instead of `rx_pay_*`):
//! ```text
//! rx_parse payload ─ segment sequencer ─ MpaRx ─ FpduBuffer ─ DdpRx ─ Placement → dma_wr_*
//!   mpa_ram[conn] (SeqStart + MpaRxState)   │        │  ↕ Tpt (tpt_wr_*, pbl_wr_*)
//!   (mpa_wr_*; loaded per segment,          │        ├→ placed_* (tagged segments placed)
//!    written back from st_out)              │        ├→ ut_*     (untagged messages)
//!                                 qp_ram[conn] (qp_wr_*)   └→ term_* ← MPA errors (FpduBuffer)
//! ```
//! The sequencer runs `mpa_rx` one segment at a time: it loads the
//! connection's record, passes the segment, writes `st_out` back and waits
//! until the segment's last piece has left `mpa_rx` (so each piece is known
//! to belong to the connection in `sq_conn`); see docs/rtl.md.

use crate::common::crc32c_beat::Crc32cX64;
use crate::common::dma_rd_arb::DmaRdArb;
use crate::common::dma_wr_arb::DmaWrArb;
use crate::common::fifo::Fifo;
use crate::common::qp_ram::QpRam;
use crate::common::skid::{DmaWrSkid, Skid};
use crate::completion::rd_track::RdTrackN;
use crate::completion::rx_send::RxSendN;
use crate::completion::send_cpl::SendCplN;
use crate::firmware_port::exc_arb::ExcArb;
use crate::firmware_port::exc_queue::ExcQueue;
use crate::firmware_port::fw_port::FwPortN;
use crate::host::dev_reset::DevReset;
use crate::host::host_regs::HostRegsN;
use crate::protection::tpt::Tpt;
use crate::protection::tpt_arb::TptArb;
use crate::receive::conn_table::ConnTableN;
use crate::receive::ddp_rx::DdpRxN;
use crate::receive::fpdu_buffer::FpduBufferN;
use crate::receive::mpa_rx::MpaRx;
use crate::receive::rx_check::RxCheck;
use crate::receive::rx_fifo::RxFifoN;
use crate::receive::rx_parse::RxParse;
use crate::receive::rx_split::RxSplit;
use crate::transmit::doorbell::DoorbellN;
use crate::transmit::inline_rd::InlineRd;
use crate::transmit::read_resp::ReadRespN;
use crate::transmit::rreq_queue::RreqQueueN;
use crate::transmit::tx_ack::TxAckN;
use crate::transmit::tx_framer::TxFramerN;
use crate::transmit::tx_log::TxLog512;
use crate::transmit::tx_sched::TxSchedN;
use crate::transmit::tx_seg::TxSegN;
use crate::transmit::wqe_fetch::WqeFetchN;
use rust_hdl::prelude::*;

/// `RnicCoreP` of profile `$p` (index `$pr` in `PROFILES`): every const
/// parameter, derived ones included, written once from the profile's sizes.
macro_rules! rnic_core_of {
    ($pr:ident, $p:ident) => {
        RnicCoreP<
            { crate::profile::$pr },
            { crate::profile::$p.conn_log2 },
            { crate::profile::$p.tpt_log2 },
            { crate::profile::$p.pbl_log2 },
            { crate::profile::$p.fpdu_fifo_log2 },
            { crate::profile::$p.fpdu_fifo_log2 + 1 },
            { crate::profile::$p.fpdu_fifo_log2 + 1 + crate::receive::fpdu_buffer::REC_FIXED },
            { crate::profile::$p.span_beat_log2 },
            { crate::profile::$p.span_beat_log2 + 1 },
            { crate::receive::fpdu_buffer::SPAN_SLOT_BITS + crate::profile::$p.span_beat_log2 },
            { crate::profile::$p.rx_fifo_log2 },
            { crate::profile::$p.rx_fifo_log2 + 1 },
            { crate::completion::recv_wqe::wqe_buf_bits(crate::profile::$p.rq_prefetch_log2) },
        >
    };
}

/// The core of the co-simulation profile (`crate::profile::SIM`): the one
/// `hw/generated/rnic_core.v` is generated from.
pub type RnicCore = rnic_core_of!(PR_SIM, SIM);

/// The core of the board profile (`crate::profile::BOARD`), inside
/// `rnic_versa5g`.
pub type RnicCoreBoard = rnic_core_of!(PR_BOARD, BOARD);

/// `rnic_core` with the sizes of a profile (`crate::profile`): `PR` its
/// index in `PROFILES`, `CTL` log2 connections, `TN`/`PN` log2 TPT and
/// page-list entries, `FBN`/`FBNP1`/`FBRW` and `FBB`/`FBBP1`/`FBSA` the
/// `fpdu_buffer` FIFO and span-slot parameters, `RXN`/`RXNP1` the
/// `rx_fifo` depth, `RQA` `recv_wqe`'s WQE buffer address bits. Only
/// [`RnicCore`] and [`RnicCoreBoard`] are used.
#[derive(LogicBlock, Default)]
pub struct RnicCoreP<
    const PR: usize,
    const CTL: usize,
    const TN: usize,
    const PN: usize,
    const FBN: usize,
    const FBNP1: usize,
    const FBRW: usize,
    const FBB: usize,
    const FBBP1: usize,
    const FBSA: usize,
    const RXN: usize,
    const RXNP1: usize,
    const RQA: usize,
> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high; hold for at least 2 clocks.
    pub reset: Signal<In, Bit>,
    // MAC RX stream (no backpressure: the MAC cannot be stalled).
    pub mac_rx_data: Signal<In, Bits<64>>,
    pub mac_rx_keep: Signal<In, Bits<4>>,
    pub mac_rx_last: Signal<In, Bit>,
    pub mac_rx_valid: Signal<In, Bit>,
    pub mac_rx_fcs_bad: Signal<In, Bit>,
    // RX payload stream out: TCP payload of fast-path segments, realigned.
    pub rx_pay_data: Signal<Out, Bits<64>>,
    pub rx_pay_keep: Signal<Out, Bits<4>>,
    pub rx_pay_last: Signal<Out, Bit>,
    pub rx_pay_valid: Signal<Out, Bit>,
    pub rx_pay_ready: Signal<In, Bit>,
    // CRC32c of each payload on rx_pay (pulse 2 clocks after its last beat).
    pub rx_pay_crc: Signal<Out, Bits<32>>,
    pub rx_pay_crc_valid: Signal<Out, Bit>,
    // Counters (32 bits, wrapping, cleared by reset).
    pub cnt_rx_ok: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_fcs: Signal<Out, Bits<32>>,
    pub cnt_rx_overflow: Signal<Out, Bits<32>>,
    pub cnt_rx_oversize: Signal<Out, Bits<32>>,
    /// `rx_fifo`'s high-water mark in beats since reset (`RxFifoN::hwm`).
    pub rx_fifo_hwm: Signal<Out, Bits<16>>,
    // Header record of the segment on rx_pay (valid with rx_pay_valid).
    pub rx_hdr_eth_dst: Signal<Out, Bits<48>>,
    pub rx_hdr_eth_src: Signal<Out, Bits<48>>,
    pub rx_hdr_ip_src: Signal<Out, Bits<32>>,
    pub rx_hdr_ip_dst: Signal<Out, Bits<32>>,
    pub rx_hdr_sport: Signal<Out, Bits<16>>,
    pub rx_hdr_dport: Signal<Out, Bits<16>>,
    pub rx_hdr_seq: Signal<Out, Bits<32>>,
    pub rx_hdr_ack: Signal<Out, Bits<32>>,
    pub rx_hdr_flags: Signal<Out, Bits<8>>,
    pub rx_hdr_window: Signal<Out, Bits<16>>,
    pub rx_hdr_pay_len: Signal<Out, Bits<16>>,
    pub rx_hdr_hdr_len: Signal<Out, Bits<8>>,
    // Connection of the segment on rx_pay (valid with rx_pay_valid).
    pub rx_seg_conn: Signal<Out, Bits<8>>,
    pub rx_seg_mpa: Signal<Out, Bits<4>>,
    // ACK request for the TX side: one-clock pulse per fast-path segment with payload.
    pub ack_req_valid: Signal<Out, Bit>,
    pub ack_req_conn: Signal<Out, Bits<8>>,
    pub ack_req_ack: Signal<Out, Bits<32>>,
    // Connection table write port (the firmware port will drive it).
    pub ct_wr_valid: Signal<In, Bit>,
    pub ct_wr_idx: Signal<In, Bits<8>>,
    pub ct_wr_used: Signal<In, Bit>,
    pub ct_wr_local_ip: Signal<In, Bits<32>>,
    pub ct_wr_peer_ip: Signal<In, Bits<32>>,
    pub ct_wr_local_port: Signal<In, Bits<16>>,
    pub ct_wr_peer_port: Signal<In, Bits<16>>,
    pub ct_wr_mode: Signal<In, Bits<2>>,
    pub ct_wr_mpa: Signal<In, Bits<4>>,
    pub ct_wr_rcv_nxt: Signal<In, Bits<32>>,
    pub ct_wr_rcv_wnd: Signal<In, Bits<32>>,
    pub ct_wr_snd_una: Signal<In, Bits<32>>,
    pub ct_wr_snd_nxt: Signal<In, Bits<32>>,
    // Connection table read port (device-updated fields, 1 clock).
    pub ct_rd_idx: Signal<In, Bits<8>>,
    pub ct_rd_used: Signal<Out, Bit>,
    pub ct_rd_mode: Signal<Out, Bits<2>>,
    pub ct_rd_rcv_nxt: Signal<Out, Bits<32>>,
    pub ct_rd_snd_una: Signal<Out, Bits<32>>,
    // Exception queue head (EXC_STATUS / EXC_CONN / EXC_DATA / EXC_POP).
    pub exc_valid: Signal<Out, Bit>,
    pub exc_reason: Signal<Out, Bits<8>>,
    pub exc_len: Signal<Out, Bits<16>>,
    pub exc_conn: Signal<Out, Bits<32>>,
    pub exc_rd_word: Signal<In, Bits<9>>,
    pub exc_rd_data: Signal<Out, Bits<32>>,
    pub exc_pop: Signal<In, Bit>,
    pub exc_count: Signal<Out, Bits<3>>,
    // More RX counters.
    pub cnt_rx_bad_len: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_ip_csum: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_tcp_csum: Signal<Out, Bits<32>>,
    pub cnt_rx_fast: Signal<Out, Bits<32>>,
    pub cnt_rx_exc: Signal<Out, Bits<32>>,
    pub cnt_rx_exc_full: Signal<Out, Bits<32>>,
    // ---- RX ULP path (MPA → FPDU buffer → DDP/RDMAP → TPT → placement → DMA)
    /// 1: fast-path payload goes to the ULP path (and not to `rx_pay_*`).
    /// Static configuration: change it only while no frame is in flight.
    pub rx_ulp_en: Signal<In, Bit>,
    /// Per-connection MPA receive context: `SeqStart` (RFC 5044 §4.3); the
    /// write also resets the connection's `MpaRxState` to its initial value.
    pub mpa_wr_valid: Signal<In, Bit>,
    pub mpa_wr_idx: Signal<In, Bits<8>>,
    pub mpa_wr_seq_start: Signal<In, Bits<32>>,
    /// QP of a connection: number, `QpState`, protection domain.
    pub qp_wr_valid: Signal<In, Bit>,
    pub qp_wr_idx: Signal<In, Bits<8>>,
    pub qp_wr_qpn: Signal<In, Bits<32>>,
    pub qp_wr_state: Signal<In, Bits<8>>,
    pub qp_wr_pd: Signal<In, Bits<32>>,
    /// TPT entry write (`TptEntry::emit` octets, octet i in bits 8i+7..8i).
    pub tpt_wr_en: Signal<In, Bit>,
    pub tpt_wr_index: Signal<In, Bits<24>>,
    pub tpt_wr_data: Signal<In, Bits<256>>,
    /// Page-list entry write (64-bit bus address).
    pub pbl_wr_en: Signal<In, Bit>,
    pub pbl_wr_index: Signal<In, Bits<24>>,
    pub pbl_wr_data: Signal<In, Bits<64>>,
    /// DMA write (docs/rtl.md "Core interfaces").
    pub dma_wr_valid: Signal<Out, Bit>,
    pub dma_wr_ready: Signal<In, Bit>,
    pub dma_wr_hdr: Signal<Out, Bit>,
    pub dma_wr_len: Signal<Out, Bits<16>>,
    pub dma_wr_data: Signal<Out, Bits<64>>,
    pub dma_wr_keep: Signal<Out, Bits<4>>,
    pub dma_wr_last: Signal<Out, Bit>,
    /// One record per placed tagged segment, after its last DMA beat.
    pub placed_valid: Signal<Out, Bit>,
    pub placed_pop: Signal<In, Bit>,
    pub placed_opcode: Signal<Out, Bits<4>>,
    pub placed_last: Signal<Out, Bit>,
    pub placed_stag: Signal<Out, Bits<32>>,
    pub placed_to: Signal<Out, Bits<64>>,
    pub placed_len: Signal<Out, Bits<16>>,
    pub placed_conn: Signal<Out, Bits<32>>,
    pub placed_qpn: Signal<Out, Bits<32>>,
    /// Untagged messages (Send, Read Request, Terminate) for the next stage.
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
    /// Terminate requests (DDP/RDMAP from `ddp_rx` first, then MPA).
    pub term_valid: Signal<Out, Bit>,
    pub term_pop: Signal<In, Bit>,
    pub term_cause: Signal<Out, Bits<16>>,
    pub term_conn: Signal<Out, Bits<32>>,
    pub term_qpn: Signal<Out, Bits<32>>,
    pub term_hdr: Signal<Out, Bits<384>>,
    pub term_seg_len: Signal<Out, Bits<16>>,
    pub cnt_mpa_pass: Signal<Out, Bits<32>>,
    pub cnt_mpa_span: Signal<Out, Bits<32>>,
    /// Segments refused for want of a span slot (`fpdu_buffer`
    /// "Admission"): discarded unacknowledged, RCV.NXT set back.
    pub cnt_rx_no_slot: Signal<Out, Bits<32>>,
    pub cnt_mpa_err: Signal<Out, Bits<32>>,
    pub cnt_ddp_tagged: Signal<Out, Bits<32>>,
    pub cnt_ddp_untagged: Signal<Out, Bits<32>>,
    pub cnt_ddp_term: Signal<Out, Bits<32>>,
    pub cnt_ddp_drop_state: Signal<Out, Bits<32>>,
    pub cnt_ddp_len_err: Signal<Out, Bits<32>>,
    /// FPDU buffer occupancy (beats, records).
    pub ulp_buf_beats: Signal<Out, Bits<16>>,
    pub ulp_buf_recs: Signal<Out, Bits<5>>,
    /// Span slots held (`fpdu_buffer`'s admission count).
    pub ulp_span_used: Signal<Out, Bits<9>>,
    // ---- TX datapath: doorbell → TxSched → WqeFetch → TxSeg → TxFramer → mac_tx_*
    /// Doorbell (temporary input until the BAR0 block drives it): a write of
    /// `db_wr_value` to the `QP_SQ_PRODUCER` register of QP doorbell page
    /// `db_wr_qpn` (`rnic_wire::abi::{csr, doorbell}`); pages >= 64 are
    /// ignored and counted in `cnt_db_bad`.
    pub db_wr_valid: Signal<In, Bit>,
    pub db_wr_qpn: Signal<In, Bits<10>>,
    pub db_wr_value: Signal<In, Bits<32>>,
    /// DMA read (docs/rtl.md "Core interfaces"); tags 0x00–0x0F WQE fetch,
    /// 0x40–0x4F receive-queue WQE fetch (reserved), 0x80–0x8F payload.
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
    /// MAC TX: whole frames without FCS.
    pub mac_tx_data: Signal<Out, Bits<64>>,
    pub mac_tx_keep: Signal<Out, Bits<4>>,
    pub mac_tx_last: Signal<Out, Bit>,
    pub mac_tx_valid: Signal<Out, Bit>,
    pub mac_tx_ready: Signal<In, Bit>,
    /// Raw frames from the firmware, merged into `mac_tx_*` between frames.
    pub fw_tx_data: Signal<In, Bits<64>>,
    pub fw_tx_keep: Signal<In, Bits<4>>,
    pub fw_tx_last: Signal<In, Bit>,
    pub fw_tx_valid: Signal<In, Bit>,
    pub fw_tx_ready: Signal<Out, Bit>,
    /// QP context, TX fields (`QpContext`), written with `qp_wr_valid`: the
    /// send queue of QP `qp_wr_qpn` (< 64) starts at index 0 of the ring
    /// `sq_ring` (bus address, `2^sq_log2` WQEs) on connection `conn`, whose
    /// context must be written before.
    pub qp_wr_sq_ring: Signal<In, Bits<64>>,
    pub qp_wr_sq_log2: Signal<In, Bits<8>>,
    pub qp_wr_conn: Signal<In, Bits<32>>,
    pub qp_wr_tx_send_msn: Signal<In, Bits<32>>,
    pub qp_wr_tx_read_msn: Signal<In, Bits<32>>,
    /// Connection context, TX fields (`ConnContext`), written with
    /// `ct_wr_valid` (MACs: first octet on the wire in bits 47:40).
    pub ct_wr_local_mac: Signal<In, Bits<48>>,
    pub ct_wr_peer_mac: Signal<In, Bits<48>>,
    pub ct_wr_mulpdu: Signal<In, Bits<16>>,
    pub ct_wr_rcv_wscale: Signal<In, Bits<8>>,
    pub ct_wr_tx_marker_ref: Signal<In, Bits<32>>,
    /// Send completions: one record per signaled WQE once its last segment
    /// is handed to the framer, one per refused WQE (`TxSeg` `cq_*`).
    pub tx_cq_valid: Signal<Out, Bit>,
    pub tx_cq_pop: Signal<In, Bit>,
    pub tx_cq_qp: Signal<Out, Bits<6>>,
    pub tx_cq_idx: Signal<Out, Bits<32>>,
    pub tx_cq_wr_id: Signal<Out, Bits<64>>,
    pub tx_cq_status: Signal<Out, Bits<8>>,
    pub tx_cq_opcode: Signal<Out, Bits<8>>,
    pub cnt_tx_frames: Signal<Out, Bits<32>>,
    pub cnt_tx_desc_drop: Signal<Out, Bits<32>>,
    pub cnt_tx_pay_err: Signal<Out, Bits<32>>,
    pub cnt_tx_segs: Signal<Out, Bits<32>>,
    pub cnt_tx_bad_wqe: Signal<Out, Bits<32>>,
    pub cnt_tx_fetch: Signal<Out, Bits<32>>,
    /// Send WQEs taken from a push (`abi::doorbell::QP_SQ_PUSH`) instead of
    /// a fetch.
    pub cnt_tx_push: Signal<Out, Bits<32>>,
    pub cnt_db: Signal<Out, Bits<32>>,
    pub cnt_db_bad: Signal<Out, Bits<32>>,
    pub cnt_dma_rd_cpl_bad: Signal<Out, Bits<32>>,
    /// Pure ACK frames sent (`TxAck`).
    pub cnt_tx_acks: Signal<Out, Bits<32>>,
    // ---- Host registers (BAR0) and firmware port (`host_regs`, `fw_port`;
    // docs/rtl.md "Host registers and firmware port")
    /// BAR0 access (docs/rtl.md "Core interfaces", Host MMIO); reads answer
    /// one clock after the request.
    pub csr_valid: Signal<In, Bit>,
    pub csr_write: Signal<In, Bit>,
    pub csr_addr: Signal<In, Bits<24>>,
    pub csr_wdata: Signal<In, Bits<32>>,
    pub csr_rdata: Signal<Out, Bits<32>>,
    pub csr_rvalid: Signal<Out, Bit>,
    /// Level interrupt: `INT_STATUS & INT_MASK` not zero.
    pub irq: Signal<Out, Bit>,
    /// Ethernet link state for BAR0 `STATUS_LINK_UP`.
    pub link_up: Signal<In, Bit>,
    /// QP doorbell page write: page (QP) number, offset in the page, value.
    pub db_qp_valid: Signal<Out, Bit>,
    pub db_qp_num: Signal<Out, Bits<10>>,
    pub db_qp_off: Signal<Out, Bits<12>>,
    pub db_qp_value: Signal<Out, Bits<32>>,
    /// CQ doorbell page write.
    pub db_cq_valid: Signal<Out, Bit>,
    pub db_cq_num: Signal<Out, Bits<10>>,
    pub db_cq_off: Signal<Out, Bits<12>>,
    pub db_cq_value: Signal<Out, Bits<32>>,
    /// Firmware port access (`rnic_wire::abi::context::port`), same shape.
    pub fw_valid: Signal<In, Bit>,
    pub fw_write: Signal<In, Bit>,
    pub fw_addr: Signal<In, Bits<24>>,
    pub fw_wdata: Signal<In, Bits<32>>,
    pub fw_rdata: Signal<Out, Bits<32>>,
    pub fw_rvalid: Signal<Out, Bit>,
    /// The firmware's raw frames (`TX_SEND`), until they join the TX path.
    pub raw_tx_data: Signal<Out, Bits<64>>,
    pub raw_tx_keep: Signal<Out, Bits<4>>,
    pub raw_tx_last: Signal<Out, Bit>,
    pub raw_tx_valid: Signal<Out, Bit>,
    pub raw_tx_ready: Signal<In, Bit>,
    /// Event records (`EVENT_PUSH`, 64 octets), observation only: the core's
    /// completion writer (`rx_send`'s `cpl_write`) writes each into the
    /// host's event queue at `eq_base` and pops it; `ev_pop` is not used.
    pub ev_valid: Signal<Out, Bit>,
    pub ev_data: Signal<Out, Bits<512>>,
    pub ev_pop: Signal<In, Bit>,
    pub eq_base: Signal<Out, Bits<64>>,
    pub eq_entries: Signal<Out, Bits<32>>,
    pub eq_consumer: Signal<Out, Bits<32>>,
    /// `FLUSH_QP`: one-clock strobe with the QP number.
    pub flush_valid: Signal<Out, Bit>,
    pub flush_qpn: Signal<Out, Bits<32>>,
    // ---- Firmware raw frames into the MAC merge (docs/rtl.md "Host interface and firmware port")
    /// 1: the firmware's raw frames (`TX_SEND`) go into the MAC TX merge
    /// (whole frames, between data/ACK frames), and `raw_tx_*` only shows
    /// the beats the merge took (`raw_tx_ready` unused); 0: they leave on
    /// `raw_tx_*` with `raw_tx_ready` as before. Static configuration.
    pub fw_raw_to_mac: Signal<In, Bit>,
    /// 1: BAR0 `CTRL_ENABLE` gates the datapath (at 0 no doorbell and no
    /// received frame is taken; `dev_reset`); 0: the datapath takes them
    /// whatever `CTRL_ENABLE` says (the reset value of a model's inputs:
    /// block-level rigs that never write BAR0). `CTRL_RESET` works either
    /// way. Static configuration; a node and the boards set it.
    pub ctrl_en_gate: Signal<In, Bit>,
    // ---- Receive-side Send path (`rx_send`, docs/rtl.md "Completions"):
    // observation outputs. `rterm_*`: an incoming Terminate's
    // record, valid for the one clock it is taken; `qp_err_*`: the QP moved
    // to error (pulse).
    pub rterm_valid: Signal<Out, Bit>,
    pub rterm_conn: Signal<Out, Bits<32>>,
    pub rterm_qpn: Signal<Out, Bits<32>>,
    pub rterm_len: Signal<Out, Bits<16>>,
    pub rterm_data: Signal<Out, Bits<64>>,
    pub qp_err_valid: Signal<Out, Bit>,
    pub qp_err_qpn: Signal<Out, Bits<32>>,
    pub qp_err_conn: Signal<Out, Bits<32>>,
    pub rxs_eq_prod: Signal<Out, Bits<32>>,
    pub cnt_rxs_send: Signal<Out, Bits<32>>,
    pub cnt_rxs_term_tx: Signal<Out, Bits<32>>,
    pub cnt_rxs_term_rx: Signal<Out, Bits<32>>,
    pub cnt_rxs_drop_qp: Signal<Out, Bits<32>>,
    pub cnt_rxs_rreq: Signal<Out, Bits<32>>,
    pub cnt_rxs_fetch: Signal<Out, Bits<32>>,
    pub cnt_rxs_bad_wqe: Signal<Out, Bits<32>>,
    pub cnt_rxs_cqe: Signal<Out, Bits<32>>,
    pub cnt_rxs_event: Signal<Out, Bits<32>>,
    pub cnt_rxs_cpl_drop: Signal<Out, Bits<32>>,
    pub cnt_rxs_cq_overflow: Signal<Out, Bits<32>>,
    pub cnt_rxs_eq_overflow: Signal<Out, Bits<32>>,
    pub cnt_rxs_db_bad: Signal<Out, Bits<32>>,
    /// Configuration writes and doorbells of the receive side refused: CQ
    /// doorbell at a CQ number >= 16 or an unknown offset, CQ table entry
    /// >= 16, or one of the four queues below full.
    pub cnt_rxs_lost: Signal<Out, Bits<32>>,
    /// Sends refused by the receive SGE check (TPT fault on an lkey).
    pub cnt_rxs_prot: Signal<Out, Bits<32>>,
    /// STags invalidated by a received Send with Invalidate (RFC 5040 §5.3).
    pub cnt_rxs_inv: Signal<Out, Bits<32>>,
    /// Received Sends with Invalidate whose STag could not be invalidated
    /// (Terminate 0/1/9, error CQE).
    pub cnt_rxs_inv_err: Signal<Out, Bits<32>>,
    /// Send-side completions (TxSeg, Read requester) dropped because their
    /// QP has no send CQ (`QpContext.send_cqn` never written or >= 16).
    pub cnt_scq_no_cq: Signal<Out, Bits<32>>,
    // ---- TX send state (docs/rtl.md "TX send state: SND.NXT and the peer's window")
    /// 1: TX starts no FPDU whose end would pass SND.UNA + SND.WND (RFC 9293
    /// §3.8.6). 0: the window is not enforced (the reset value of a model's
    /// inputs; tests whose peer sends no ACKs). Static configuration.
    pub tx_wnd_en: Signal<In, Bit>,
    /// `ConnContext` fields with `ct_wr_valid`: the peer's window in octets
    /// (already scaled) and its window scale (RFC 7323 §2.3).
    pub ct_wr_snd_wnd: Signal<In, Bits<32>>,
    pub ct_wr_snd_wscale: Signal<In, Bits<8>>,
    /// Read port (with `ct_rd_idx`): SND.NXT as TX sent it and SND.WND as
    /// the last acceptable ACK set it.
    pub ct_rd_snd_nxt: Signal<Out, Bits<32>>,
    pub ct_rd_snd_wnd: Signal<Out, Bits<32>>,
    /// Clocks a segment waited for the peer's window; WQEs refused for a
    /// MULPDU above the framer's limit; pure ACKs not sent because a data
    /// frame already carried the ACK number (piggybacked).
    pub cnt_tx_wnd_wait: Signal<Out, Bits<32>>,
    pub cnt_tx_mulpdu_bad: Signal<Out, Bits<32>>,
    pub cnt_tx_ack_piggy: Signal<Out, Bits<32>>,
    /// 1: the third duplicate ACK of a connection replays it from the TX
    /// log at once (fast retransmit, RFC 5681 §3.2; `fast_retx`), as a
    /// firmware `RETX_CONN` write would. 0: only the firmware's timer
    /// replays (the reset value of a model's inputs). Static configuration.
    pub fast_retx_en: Signal<In, Bit>,
    /// Fast retransmit: duplicate ACKs seen, replays asked for, third
    /// duplicates that asked for nothing (`fast_retx_en` low, or the
    /// deferral slot held by another connection), third duplicates deferred
    /// until a replay under way ended.
    pub cnt_fretx_dup: Signal<Out, Bits<32>>,
    pub cnt_fretx_req: Signal<Out, Bits<32>>,
    pub cnt_fretx_skip: Signal<Out, Bits<32>>,
    pub cnt_fretx_defer: Signal<Out, Bits<32>>,
    /// Parked QPs (docs/rtl.md "Parked QPs"): parks taken (a QP stalled on
    /// the peer window or ORD handed its WQE back); retry sweeps that found
    /// a parked QP (`tx_sched::PARK_RETRY`).
    pub cnt_tx_park: Signal<Out, Bits<32>>,
    pub cnt_tx_park_retry: Signal<Out, Bits<32>>,
    // ---- RDMA Read requester (`rd_track`, docs/rtl.md "RDMA Read"):
    // signaled Reads completed (records to the send CQ), Read
    // Requests sent beyond the QP's ORD (not recorded), stray Read
    // Responses (Terminate 0/2/6).
    pub cnt_rd_cpl: Signal<Out, Bits<32>>,
    pub cnt_rd_ord_over: Signal<Out, Bits<32>>,
    pub cnt_rd_term: Signal<Out, Bits<32>>,
    // ---- RDMA Read responder (`rreq_queue`, `read_resp`): Read Requests
    // queued, dropped (QP >= 64 or stopped), refused with a Terminate; Read
    // Responses completed, their segments, TPT faults (Terminate), requests
    // dropped for a stopped QP.
    pub cnt_rrq_req: Signal<Out, Bits<32>>,
    pub cnt_rrq_drop: Signal<Out, Bits<32>>,
    pub cnt_rrq_term: Signal<Out, Bits<32>>,
    pub cnt_rresp: Signal<Out, Bits<32>>,
    pub cnt_rresp_segs: Signal<Out, Bits<32>>,
    pub cnt_rresp_term: Signal<Out, Bits<32>>,
    pub cnt_rresp_drop: Signal<Out, Bits<32>>,
    rx_check: RxCheck,
    rx_fifo: RxFifoN<RXN, RXNP1, PR>,
    rx_parse: RxParse,
    rx_split: RxSplit,
    conn_table: ConnTableN<CTL>,
    exc_queue: ExcQueue,
    /// Received Terminate records into the exception queue (docs/rtl.md
    /// "QP send stop and Terminate receive").
    exc_arb: ExcArb,
    pay_crc: Crc32cX64,
    mpa_rx: MpaRx,
    /// Register cut (board timing): the
    /// segment payload from `rx_parse`'s realigner into `mpa_rx` through a
    /// `Skid`, so `mpa_rx`'s lane logic starts from flip-flops.
    /// {last [73], keep one-hot [72:64] (`mpa_in_oh`), data [63:0]}.
    mpa_in_sk: Skid<Bits<74>>,
    /// The payload beat's octet count one-hot, as `mpa_rx.in_keep_oh`
    /// wants it: decoded before the slice, off mpa_rx's per-beat path.
    mpa_in_oh: Signal<Local, Bits<9>>,
    fpdu_buf: FpduBufferN<FBN, FBNP1, FBRW, FBB, FBBP1, FBSA>,
    ddp_rx: DdpRxN<PR, PN>,
    tpt: Tpt<TN, PN>,
    /// {SeqStart[119:88], MpaRxState[87:0]} per connection.
    mpa_ram: RAM<Bits<120>, 8>,
    /// {pd[71:40], state[39:32], qpn[31:0]} per connection.
    qp_ram: RAM<Bits<72>, 8>,
    /// `MpaRxState::initial()`'s CRC register (`mpa_rx::CRC_INIT`; all else 0).
    mpa_init: Signal<Local, Bits<32>>,
    /// Zero; its complement is `CRC_INIT`.
    zero32: Signal<Local, Bits<32>>,
    /// Segment sequencer: 0 idle, 2 run, 3 wait for `st_out` (write it
    /// back), 4 wait until the segment's pieces have left `mpa_rx`.
    sq_state: DFF<Bits<3>>,
    sq_conn: DFF<Bits<8>>,
    sq_seq: DFF<Bits<32>>,
    sq_mpa: DFF<Bits<4>>,
    /// The segment's end (SEG.SEQ + SEG.LEN): RCV.NXT once it is admitted.
    sq_end: DFF<Bits<32>>,
    /// The segment is refused (no span slot for its connection): `mpa_rx`
    /// discards it (its record loaded as `dead`) and nothing is written back.
    sq_refuse: DFF<Bit>,
    /// RCV.NXT rewind to a refused segment's SEG.SEQ, until `conn_table`
    /// takes it (`rw_*`).
    rw_pend: DFF<Bit>,
    rw_conn: DFF<Bits<8>>,
    rw_seq: DFF<Bits<32>>,
    cnt_no_slot: DFF<Bits<32>>,
    /// The clock after a segment's start: its admission is decided.
    sq_adm: DFF<Bit>,
    /// A segment admitted (the device takes it whole from here: `mpa_rx`
    /// consumes every beat, its span slot is assured, only a protocol
    /// error can still stop it, with a Terminate): the ACK request
    /// {connection, SEG.SEQ + SEG.LEN}.
    cm_valid: Signal<Local, Bit>,
    /// At a segment's start: it has payload and no span slot for it.
    sq_no_room: Signal<Local, Bit>,
    /// The ACK request the TX side gets: the sequencer's commits with the
    /// ULP path on, else `rx_split`'s (every accepted segment).
    ak_valid: Signal<Local, Bit>,
    ak_conn: Signal<Local, Bits<8>>,
    ak_ack: Signal<Local, Bits<32>>,
    /// Per connection, the ACK number the device has committed to (what
    /// `tx_ack` holds), for the firmware port's connection reads.
    rcv_ack_ram: RAM<Bits<32>, 8>,
    pay_take: Signal<Local, Bit>,
    sq_start: Signal<Local, Bit>,
    /// The sequencer starts a segment this clock (`sq_start` with a payload
    /// beat on offer and the ULP path on).
    sq_go: Signal<Local, Bit>,
    pay_ready: Signal<Local, Bit>,
    ddp_term_sel: Signal<Local, Bit>,
    // ---- TX datapath
    doorbell: DoorbellN<PR>,
    tx_sched: TxSchedN<PR>,
    wqe_fetch: WqeFetchN<PR>,
    tx_seg: TxSegN<PR>,
    tx_framer: TxFramerN<PR>,
    rd_arb: DmaRdArb,
    /// Answers `tx_seg`'s reads of inline messages from the held WQE.
    inl_rd: InlineRd,
    /// Connection index of each TX QP.
    tx_qpconn: QpRam<Bits<8>, PR>,
    /// Connection index of each TX QP, read with the head WQE's QP (the
    /// connection of a QP being parked: its window wakeups).
    tx_pkconn: QpRam<Bits<8>, PR>,
    /// Per connection, for the QP write: {crc[81], mk[80], mulpdu[79:64],
    /// tx_marker_ref[63:32], snd_nxt[31:0]}.
    tx_cfg: RAM<Bits<82>, 8>,
    /// Per connection, for the framer: {window[207:192], peer_port[191:176],
    /// local_port[175:160], peer_ip[159:128], local_ip[127:96],
    /// local_mac[95:48], peer_mac[47:0]}.
    tx_ctx: RAM<Bits<209>, 8>,
    /// Per connection: the ACK number to send (rcv_nxt).
    tx_ack: RAM<Bits<32>, 8>,
    /// QP write, second clock: TxSeg's configuration with the connection's fields.
    tq_v: DFF<Bit>,
    tq_qp: DFF<Bits<6>>,
    tq_msn_send: DFF<Bits<32>>,
    tq_msn_rreq: DFF<Bits<32>>,
    /// Per TX QP: the MSNs of its last QP write {read[63:32], send[31:0]}.
    tx_msn: QpRam<Bits<64>, PR>,
    /// A firmware connection write entering RDMA mode, bound to QP
    /// `ConnContext.qpn` < 64: TxSeg's stream state of that QP is loaded
    /// again one clock later from the connection's fields (`tc_*`) and the
    /// QP's MSNs (`tx_msn`), so the firmware's order "QP first, then the
    /// connection" works as well as the other.
    tc_go: Signal<Local, Bit>,
    tc_v: DFF<Bit>,
    tc_qp: DFF<Bits<6>>,
    tc_seq: DFF<Bits<32>>,
    tc_ref: DFF<Bits<32>>,
    tc_mulpdu: DFF<Bits<16>>,
    tc_mk: DFF<Bit>,
    tc_crc: DFF<Bit>,
    /// Clocks the descriptor on offer has been looked up (0..=2).
    tx_dw: DFF<Bits<2>>,
    /// The framer's descriptor fields, registered from the selected
    /// source (`tx_seg`, `read_resp` or the TX log's replay). A descriptor
    /// is taken at `tx_dw == 2`, so these hold it from the clock before,
    /// unchanged (a source keeps its descriptor until taken, and the
    /// stream changes hands only between descriptors): the source select
    /// (`rt_tx`/`rr_tx`) and the sources' logic are off the framer's
    /// accept path (board timing).
    fd_seq: DFF<Bits<32>>,
    fd_crc_en: DFF<Bit>,
    fd_mk_en: DFF<Bit>,
    fd_seq_start: DFF<Bits<32>>,
    fd_opcode: DFF<Bits<4>>,
    fd_last: DFF<Bit>,
    fd_stag: DFF<Bits<32>>,
    fd_to: DFF<Bits<64>>,
    fd_qn: DFF<Bits<32>>,
    fd_msn: DFF<Bits<32>>,
    fd_mo: DFF<Bits<32>>,
    fd_pay_len: DFF<Bits<16>>,
    /// MAC TX merge: `mx_lock` holds source `mx_own` until its last beat
    /// (1 data, 2 firmware, 3 ACK); `mx_prev` the source of the last frame.
    mx_lock: DFF<Bit>,
    mx_own: DFF<Bits<2>>,
    mx_prev: DFF<Bits<2>>,
    mx_sel: Signal<Local, Bits<2>>,
    tx_wsc: Signal<Local, Bits<4>>,
    tx_wnd: Signal<Local, Bits<32>>,
    tx_win16: Signal<Local, Bits<16>>,
    tx_desc_ok: Signal<Local, Bit>,
    /// Pure ACK frames for `ack_req_*`.
    tx_ackgen: TxAckN<PR>,
    /// Per connection: the sequence number after the last data frame that
    /// left on `mac_tx` (the `seq` of a pure ACK).
    tx_wnxt: RAM<Bits<32>, 8>,
    /// Connection of each descriptor handed to the framer, in frame order.
    /// {replayed frame (tx_log), connection} per descriptor taken.
    tx_cfifo: Fifo<Bits<9>, 5, 6>,
    /// `tx_cfifo`'s write a clock after the framer takes the descriptor
    /// (`tx_take`): the take is the end of the TX handshake chain between
    /// the sources, the framer and the TX log, and the FIFO's write logic
    /// and read-during-write bypass are not added to it (board timing).
    /// The entry is popped at the frame's end on `mac_tx`,
    /// many clocks later.
    cw_v: DFF<Bit>,
    cw_d: DFF<Bits<9>>,
    /// The framer takes a descriptor this clock.
    tx_take: Signal<Local, Bit>,
    /// `tx_cfifo` has room for one more entry, counting the one in `cw_*`.
    cf_room: Signal<Local, Bit>,
    /// Data-frame beat count on `mac_tx` and the fields read from it.
    mx_beat: DFF<Bits<8>>,
    mx_tlen: DFF<Bits<16>>,
    mx_seqhi: DFF<Bits<16>>,
    mx_seqlo: DFF<Bits<16>>,
    mx_data_end: Signal<Local, Bit>,
    mx_block: Signal<Local, Bit>,
    mx_data: Signal<Local, Bit>,
    host_regs: HostRegsN<PR>,
    fw_port: FwPortN<PR>,
    /// Device reset sequencer and datapath gate (BAR0 `CTRL_RESET`,
    /// `CTRL_ENABLE`; docs/rtl.md "Device reset and enable").
    dev_rst: DevReset,
    /// Reset of every datapath block: the `reset` pin or the sequencer's.
    dp_rst: Signal<Local, Bit>,
    /// `mac_tx_ready` as the MAC merge sees it, and its valid's gate
    /// (`dev_rst.tx_hold`: no frame starts during a reset).
    mtx_rdy: Signal<Local, Bit>,
    mtx_open: Signal<Local, Bit>,
    /// The fast path's connection update in the clock before a firmware
    /// connection write: {hit, rcv_nxt, snd_una} (forwarded into the write).
    fwc_up_hit: DFF<Bit>,
    fwc_up_rcv: DFF<Bits<32>>,
    /// A rewind taken in the clock the firmware port read the entry.
    fwc_rw_hit: DFF<Bit>,
    fwc_rw_rcv: DFF<Bits<32>>,
    fwc_up_una: DFF<Bits<32>>,
    fwc_conn: Signal<Local, Bit>,
    fwc_keep: Signal<Local, Bit>,
    fwc_mpa: Signal<Local, Bit>,
    fwq_v: Signal<Local, Bit>,
    // ---- Effective table writes: the firmware port's `tw_*` decode wins,
    // else the direct `ct_wr_*`/`qp_wr_*` pins. EVERY consumer (RX tables
    // and TX tables) reads these, so one write reaches both directions.
    ew_ct_valid: Signal<Local, Bit>,
    ew_ct_idx: Signal<Local, Bits<8>>,
    ew_ct_used: Signal<Local, Bit>,
    ew_ct_local_ip: Signal<Local, Bits<32>>,
    ew_ct_peer_ip: Signal<Local, Bits<32>>,
    ew_ct_local_port: Signal<Local, Bits<16>>,
    ew_ct_peer_port: Signal<Local, Bits<16>>,
    ew_ct_mode: Signal<Local, Bits<2>>,
    ew_ct_mpa: Signal<Local, Bits<4>>,
    ew_ct_rcv_nxt: Signal<Local, Bits<32>>,
    ew_ct_rcv_wnd: Signal<Local, Bits<32>>,
    ew_ct_snd_una: Signal<Local, Bits<32>>,
    ew_ct_snd_nxt: Signal<Local, Bits<32>>,
    ew_ct_local_mac: Signal<Local, Bits<48>>,
    ew_ct_peer_mac: Signal<Local, Bits<48>>,
    ew_ct_mulpdu: Signal<Local, Bits<16>>,
    ew_ct_rcv_wscale: Signal<Local, Bits<8>>,
    ew_ct_tx_marker_ref: Signal<Local, Bits<32>>,
    /// QP write: `ew_qp_valid` for TX; `ew_qp_rx` = also write `qp_ram`
    /// (the pins always; the firmware when `conn` is a connection index).
    ew_qp_valid: Signal<Local, Bit>,
    ew_qp_rx: Signal<Local, Bit>,
    ew_qp_idx: Signal<Local, Bits<8>>,
    /// A QP write's connection (and qp_ram index) beyond the profile's
    /// connections (board profile; never in co-simulation): refused.
    qp_conn_chk: crate::receive::conn_table::ConnInProfile<PR>,
    ew_qp_qpn: Signal<Local, Bits<32>>,
    ew_qp_state: Signal<Local, Bits<8>>,
    ew_qp_pd: Signal<Local, Bits<32>>,
    ew_qp_sq_ring: Signal<Local, Bits<64>>,
    ew_qp_sq_log2: Signal<Local, Bits<8>>,
    ew_qp_conn: Signal<Local, Bits<32>>,
    ew_qp_tx_send_msn: Signal<Local, Bits<32>>,
    ew_qp_tx_read_msn: Signal<Local, Bits<32>>,
    /// Firmware frame source of the MAC merge: the port's raw frames
    /// (`fw_raw_to_mac`) or the `fw_tx_*` pins, held from a frame's first
    /// beat on offer to its last beat taken (`fx_lock`, `fx_port`).
    fx_lock: DFF<Bit>,
    fx_port: DFF<Bit>,
    fm_port: Signal<Local, Bit>,
    fm_valid: Signal<Local, Bit>,
    fm_ready: Signal<Local, Bit>,
    fm_data: Signal<Local, Bits<64>>,
    fm_keep: Signal<Local, Bits<4>>,
    fm_last: Signal<Local, Bit>,
    // ---- Receive-side Send path
    rx_send: RxSendN<RQA>,
    /// ddp_rx's tagged placement (a) and rx_send's writes (b) → dma_wr_*.
    wr_arb: DmaWrArb,
    /// Register slice between `wr_arb` and the `dma_wr_*` ports (FPGA
    /// timing: the board's `ready` ran combinationally through both write
    /// arbiters and `ddp_rx` into the FPDU buffer's pop). After the arbiter,
    /// so the order of writes (CQEs after their data) is kept.
    wr_sk: DmaWrSkid,
    /// Register slice on `wr_arb`'s `b` input (`rx_send`).
    wr_b_sk: DmaWrSkid,
    /// Register slice on `wr_arb`'s `a` input (`ddp_rx`'s placement); why
    /// the write order survives it: at its connection below.
    wr_a_sk: DmaWrSkid,
    /// `wr_a_sk` holds no beat.
    wr_a_idle: Signal<Local, Bit>,
    /// Register slice between `fpdu_buf` and `ddp_rx` (FPGA timing: the
    /// buffer's read state reached `ddp_rx`'s placement enable, the routed
    /// critical path before this slice). One beat with the QP
    /// table's answer for its connection, which the buffer's head record
    /// addresses: {pd 164:133, qp_state 132:125, qpn 124:93, conn 92:85,
    /// len 84:69, last 68, keep 67:64, data 63:0}.
    fb_sk: Skid<Bits<165>>,
    fb_in: Signal<Local, Bits<165>>,
    /// tx_framer → this slice → the MAC TX merge (FPGA timing).
    fr_sk: Skid<Bits<69>>,
    /// Register cut (docs/fpga.md, "Why the core clock is 62.5 MHz"): a
    /// `Skid` on the payload stream between the sources' mux (tx_seg,
    /// read_resp, tx_log) and `tx_framer`, so the framer's `pay_ready` no
    /// longer runs into the mux and tx_seg's payload buffer read address.
    /// {last [68], keep [67:64], data [63:0]}.
    pay_sk: Skid<Bits<69>>,
    pm_data: Signal<Local, Bits<64>>,
    pm_keep: Signal<Local, Bits<4>>,
    pm_last: Signal<Local, Bit>,
    pm_valid: Signal<Local, Bit>,
    fr_in: Signal<Local, Bits<69>>,
    fr_valid: Signal<Local, Bit>,
    fr_last: Signal<Local, Bit>,
    /// Queues in front of rx_send's configuration and doorbell ports (their
    /// `ready` is low while a WQE fetch or a CQE write is under way):
    /// RQ configuration {on 111, cq 110:107, msn 106:75, log2 74:70,
    /// base 69:6, qp 5:0}; CQ configuration {cons 138:107, prod 106:75,
    /// log2 74:70, base 69:6, state 5:4, cq 3:0, armed 140:139}; RQ
    /// doorbell {prod 37:6,
    /// qp 5:0}; CQ doorbell {value 36:5, arm 4, cq 3:0}.
    rq_cfg_q: Fifo<Bits<112>, 2, 3>,
    cq_cfg_q: Fifo<Bits<141>, 2, 3>,
    /// 64 deep (one RQ doorbell per QP, `abi::csr::MAX_QP`): `recv_wqe`
    /// takes one every 2-3 clocks and BAR0 writes may come every clock, so
    /// 64 QPs posting back to back overflowed the 8 it had (measured: 25 of
    /// 64 lost, sim/tests/driver_many_qps.rs). In block RAM (2 DP16KD
    /// instead of 40 TRELLIS_DPR16X4, docs/fpga.md "Measured size and Fmax").
    rq_db_q: Fifo<Bits<38>, 6, 7, true>,
    cq_db_q: Fifo<Bits<37>, 3, 4>,
    rxs_lost: DFF<Bits<32>>,
    rxs_lost_now: Signal<Local, Bit>,
    rxs_term_sel: Signal<Local, Bit>,
    cq_db_ok: Signal<Local, Bit>,
    rq_on: Signal<Local, Bits<1>>,
    /// Send-side completions: TxSeg's records and the Read requester's into
    /// the QP's send CQ, through rx_send's completion writer.
    send_cpl: SendCplN<PR>,
    /// RDMA Read completions at the requester, one per completed signaled
    /// Read WQE (`rd_track`'s `cpl_*`). `rd_cpl_ready` takes the record
    /// (SendCpl's round robin with TxSeg's records).
    rd_cpl_valid: Signal<Local, Bit>,
    rd_cpl_qp: Signal<Local, Bits<6>>,
    rd_cpl_wr_id: Signal<Local, Bits<64>>,
    rd_cpl_status: Signal<Local, Bits<8>>,
    rd_cpl_len: Signal<Local, Bits<32>>,
    rd_cpl_ready: Signal<Local, Bit>,
    cq_armed: Signal<Local, Bits<2>>,
    // ---- TX send state
    ew_ct_snd_wnd: Signal<Local, Bits<32>>,
    ew_ct_snd_wscale: Signal<Local, Bits<8>>,
    /// A data frame's last beat left (registered): the connection's SND.NXT
    /// on the wire, for `conn_table` and `tx_wnxt`.
    se_v: DFF<Bit>,
    se_idx: DFF<Bits<8>>,
    se_val: DFF<Bits<32>>,
    /// That update held for one clock because a table write had the port.
    sh_v: DFF<Bit>,
    sh_idx: DFF<Bits<8>>,
    sh_val: DFF<Bits<32>>,
    sn_cand_v: Signal<Local, Bit>,
    sn_cand_idx: Signal<Local, Bits<8>>,
    sn_cand_val: Signal<Local, Bits<32>>,
    sn_out_v: Signal<Local, Bit>,
    sn_out_idx: Signal<Local, Bits<8>>,
    sn_out_val: Signal<Local, Bits<32>>,
    /// The TX / window updates in the clock before a firmware connection
    /// write (forwarded into a write that keeps RDMA mode).
    fwc_sn_hit: DFF<Bit>,
    fwc_sn_val: DFF<Bits<32>>,
    fwc_up_wv: DFF<Bit>,
    fwc_up_wnd: DFF<Bits<32>>,
    /// Per connection: SND.UNA + SND.WND, the end of the peer's window.
    tx_wend: RAM<Bits<32>, 8>,
    fast_retx: crate::transmit::fast_retx::FastRetxN<PR>,
    /// Register cut (docs/fpga.md, "Why the core clock is 62.5 MHz"): the
    /// `tx_wend` write (enable, connection, SND.UNA and SND.WND) registered
    /// and done one clock after the update, so the sum starts from flops,
    /// not from `conn_table`'s block RAM through `rx_split`.
    wend_v: DFF<Bit>,
    wend_idx: DFF<Bits<8>>,
    wend_una: DFF<Bits<32>>,
    wend_wnd: DFF<Bits<32>>,
    /// Per connection: the ACK number of the last frame (data or pure ACK)
    /// built for it; a pure ACK whose number a data frame already carried is
    /// not sent (piggyback).
    tx_acked: RAM<Bits<32>, 8>,
    // ---- RDMA Read requester
    /// Outstanding Reads per QP; completes them from the placed records.
    rd_track: RdTrackN<PR>,
    /// A placed record is taken this clock (by `placed_pop`, while
    /// `rd_track` is not busy): `rd_track` sees it in the same clock.
    rdt_take: Signal<Local, Bit>,
    rdt_term_sel: Signal<Local, Bit>,
    /// The QP write's ORD (firmware: `QpContext.ord`; the pins carry none:
    /// `rd_track::ORD_MAX`).
    ew_qp_ord: Signal<Local, Bits<16>>,
    // ---- RDMA Read responder
    rreq_q: RreqQueueN<PR>,
    read_resp: ReadRespN<PR>,
    /// The QP write's IRD and expected QN 1 MSN (firmware: `QpContext.ird`,
    /// `rx_read_msn`; the pins carry none: `rreq_queue::IRD_MAX`, 1).
    ew_qp_ird: Signal<Local, Bits<16>>,
    ew_qp_rx_read_msn: Signal<Local, Bits<32>>,
    /// The TPT check unit's four clients (registered grant).
    tp_arb: TptArb,
    /// A QP context write sets a send side on/off this clock (`tx_seg`'s
    /// off request waits).
    tx_en_ew: Signal<Local, Bit>,
    /// A send side turned off for a refused SGE waits here until the
    /// exception queue takes its `SendQueueError` record (`exc_arb.sq_*`),
    /// so the firmware terminates the stream (RFC 5040 §5.3, §7); the next
    /// off request waits meanwhile.
    sqe_v: DFF<Bit>,
    sqe_qp: DFF<Bits<6>>,
    /// `tx_seg` has handed the QP's stream to `read_resp` (`xs_gnt`): the
    /// framer's descriptors and payload come from `read_resp`.
    rr_tx: Signal<Local, Bit>,
    td_valid: Signal<Local, Bit>,
    td_qp: Signal<Local, Bits<6>>,
    /// Terminate source: 0 ddp_rx, 1 rx_send, 2 rd_track, 3 rreq_queue,
    /// 4 read_resp, 7 the MPA one.
    term_src: Signal<Local, Bits<3>>,
    /// `term_pop` pin OR the firmware port's `TERM_POP`.
    term_pop_any: Signal<Local, Bit>,
    // ---- TX FPDU log and go-back-N replay (`tx_log`, docs/rtl.md
    // "Retransmission of RDMA-mode data")
    tx_log: TxLog512,
    /// The replay has the stream: descriptors and payload from `tx_log`.
    rt_tx: Signal<Local, Bit>,
    // ---- the parser's two inputs: `rx_fifo` (the MAC) and the firmware's
    // `RX_INJECT` frame (`fw_port.inj_*`), switched at frame boundaries
    /// A frame from `rx_fifo` is half taken (its next beat must follow).
    rxi_fifo_mid: DFF<Bit>,
    /// An injected frame is half taken.
    rxi_inj_mid: DFF<Bit>,
    /// The parser takes from `fw_port.inj_*` this clock.
    rxi_sel: Signal<Local, Bit>,
}

impl<
        const PR: usize,
        const CTL: usize,
        const TN: usize,
        const PN: usize,
        const FBN: usize,
        const FBNP1: usize,
        const FBRW: usize,
        const FBB: usize,
        const FBBP1: usize,
        const FBSA: usize,
        const RXN: usize,
        const RXNP1: usize,
        const RQA: usize,
    > Logic for RnicCoreP<PR, CTL, TN, PN, FBN, FBNP1, FBRW, FBB, FBBP1, FBSA, RXN, RXNP1, RQA>
{
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, rx_check, rx_fifo, rx_parse, rx_split, conn_table, exc_queue, pay_crc,
            mpa_rx, fpdu_buf, ddp_rx, tpt, doorbell, tx_sched, wqe_fetch, tx_seg, tx_framer,
            rd_arb, inl_rd, tx_ackgen, tx_cfifo, rx_send, wr_arb, tp_arb, rq_cfg_q, cq_cfg_q,
            rq_db_q, cq_db_q, send_cpl, rd_track, rreq_q, read_resp, tx_log, fast_retx
        );
        dff_setup!(
            self,
            clock,
            rxs_lost,
            sq_state,
            sq_conn,
            sq_seq,
            sq_mpa,
            sq_end,
            sq_adm,
            sq_refuse,
            rw_pend,
            rw_conn,
            rw_seq,
            cnt_no_slot,
            fwc_rw_hit,
            fwc_rw_rcv,
            tq_v,
            tq_qp,
            tq_msn_send,
            tq_msn_rreq,
            tx_dw,
            cw_v,
            cw_d,
            fd_seq,
            fd_crc_en,
            fd_mk_en,
            fd_seq_start,
            fd_opcode,
            fd_last,
            fd_stag,
            fd_to,
            fd_qn,
            fd_msn,
            fd_mo,
            fd_pay_len,
            mx_lock,
            mx_own,
            mx_prev,
            mx_beat,
            mx_tlen,
            mx_seqhi,
            mx_seqlo,
            fx_lock,
            fx_port,
            tc_v,
            tc_qp,
            tc_seq,
            tc_ref,
            tc_mulpdu,
            tc_mk,
            tc_crc,
            se_v,
            se_idx,
            se_val,
            sh_v,
            sh_idx,
            sh_val,
            fwc_sn_hit,
            fwc_sn_val,
            fwc_up_wv,
            fwc_up_wnd,
            rxi_fifo_mid,
            rxi_inj_mid,
            sqe_v,
            sqe_qp
        );
        // every datapath block's reset: the pin or the reset sequencer's
        self.dp_rst.next = self.reset.val() | self.dev_rst.dp_rst.val();
        self.mpa_rx.reset.next = self.dp_rst.val();
        self.fpdu_buf.reset.next = self.dp_rst.val();
        self.ddp_rx.reset.next = self.dp_rst.val();
        self.tpt.reset.next = self.dp_rst.val();
        self.rx_check.reset.next = self.dp_rst.val();
        self.rx_fifo.reset.next = self.dp_rst.val();
        self.rx_parse.reset.next = self.dp_rst.val();
        self.rx_split.reset.next = self.dp_rst.val();
        self.conn_table.reset.next = self.dp_rst.val();
        self.exc_queue.reset.next = self.dp_rst.val();
        self.pay_crc.reset.next = self.dp_rst.val();

        // MAC → rx_check → rx_fifo
        self.rx_check.in_data.next = self.mac_rx_data.val();
        self.rx_check.in_keep.next = self.mac_rx_keep.val();
        self.rx_check.in_last.next = self.mac_rx_last.val();
        self.rx_check.in_valid.next = self.mac_rx_valid.val() & self.dev_rst.rx_pass.val();
        self.rx_check.in_fcs_bad.next = self.mac_rx_fcs_bad.val();
        self.rx_fifo.in_data.next = self.rx_check.out_data.val();
        self.rx_fifo.in_keep.next = self.rx_check.out_keep.val();
        self.rx_fifo.in_last.next = self.rx_check.out_last.val();
        self.rx_fifo.in_valid.next = self.rx_check.out_valid.val();
        self.rx_fifo.in_fcs_bad.next = self.rx_check.out_fcs_bad.val();
        self.rx_fifo.in_tag.next = self.rx_check.out_tag.val();

        // rx_fifo → rx_parse, or the firmware's RX_INJECT frame: it goes
        // in between two frames of rx_fifo (a frame is never cut), and
        // first when both wait (it is rare: an FPDU that arrived just before
        // its connection entered RDMA mode). Its verdict is 0 (TAG_OK): the
        // firmware built it with correct checksums. rx_fifo's beat is only
        // taken when selected, so switching before it is taken loses nothing.
        self.rxi_sel.next =
            self.rxi_inj_mid.q.val() | (!self.rxi_fifo_mid.q.val() & self.fw_port.inj_valid.val());
        self.rx_parse.in_data.next = self.rx_fifo.out_data.val();
        self.rx_parse.in_keep.next = self.rx_fifo.out_keep.val();
        self.rx_parse.in_last.next = self.rx_fifo.out_last.val();
        self.rx_parse.in_valid.next = self.rx_fifo.out_valid.val();
        self.rx_parse.in_tag.next = self.rx_fifo.out_tag.val();
        self.rx_fifo.out_ready.next = self.rx_parse.in_ready.val() & !self.rxi_sel.val();
        self.fw_port.inj_ready.next = self.rx_parse.in_ready.val() & self.rxi_sel.val();
        if self.rxi_sel.val() {
            self.rx_parse.in_data.next = self.fw_port.inj_data.val();
            self.rx_parse.in_keep.next = self.fw_port.inj_keep.val();
            self.rx_parse.in_last.next = self.fw_port.inj_last.val();
            self.rx_parse.in_valid.next = self.fw_port.inj_valid.val();
            self.rx_parse.in_tag.next = 0.into();
        }
        if self.rx_parse.in_ready.val() & !self.rxi_sel.val() & self.rx_fifo.out_valid.val() {
            self.rxi_fifo_mid.d.next = !self.rx_fifo.out_last.val();
        }
        if self.rx_parse.in_ready.val() & self.rxi_sel.val() & self.fw_port.inj_valid.val() {
            self.rxi_inj_mid.d.next = !self.fw_port.inj_last.val();
        }
        if self.dp_rst.val() {
            self.rxi_fifo_mid.d.next = false;
            self.rxi_inj_mid.d.next = false;
        }

        // rx_parse ↔ rx_split
        self.rx_split.ip_src.next = self.rx_parse.ip_src.val();
        self.rx_split.ip_dst.next = self.rx_parse.ip_dst.val();
        self.rx_split.sport.next = self.rx_parse.sport.val();
        self.rx_split.dport.next = self.rx_parse.dport.val();
        self.rx_split.tuple_valid.next = self.rx_parse.tuple_valid.val();
        self.rx_split.seq.next = self.rx_parse.seq.val();
        self.rx_split.ack.next = self.rx_parse.ack.val();
        // TCP flags byte: FIN bit 0, SYN 1, RST 2, ACK 4 (RFC 9293 §3.1)
        self.rx_split.fin.next = self.rx_parse.flags.val().get_bit(0);
        self.rx_split.syn.next = self.rx_parse.flags.val().get_bit(1);
        self.rx_split.rst.next = self.rx_parse.flags.val().get_bit(2);
        self.rx_split.ack_flag.next = self.rx_parse.flags.val().get_bit(4);
        self.rx_split.pay_len.next = self.rx_parse.pay_len.val();
        self.rx_split.hdr_valid.next = self.rx_parse.hdr_valid.val();
        self.rx_split.done.next = self.rx_parse.done.val();
        self.rx_split.window.next = self.rx_parse.window.val();
        self.rx_parse.dec_valid.next = self.rx_split.dec_valid.val();
        self.rx_parse.dec_fast.next = self.rx_split.dec_fast.val();
        self.rx_parse.dec_reason.next = self.rx_split.dec_reason.val();
        self.rx_parse.dec_conn.next = self.rx_split.dec_conn.val();

        // rx_split ↔ conn_table
        self.conn_table.lk_valid.next = self.rx_split.lk_valid.val();
        self.conn_table.lk_local_ip.next = self.rx_split.lk_local_ip.val();
        self.conn_table.lk_peer_ip.next = self.rx_split.lk_peer_ip.val();
        self.conn_table.lk_local_port.next = self.rx_split.lk_local_port.val();
        self.conn_table.lk_peer_port.next = self.rx_split.lk_peer_port.val();
        self.rx_split.res_valid.next = self.conn_table.res_valid.val();
        self.rx_split.res_hit.next = self.conn_table.res_hit.val();
        self.rx_split.res_idx.next = self.conn_table.res_idx.val();
        self.rx_split.res_mode.next = self.conn_table.res_mode.val();
        self.rx_split.res_mpa.next = self.conn_table.res_mpa.val();
        self.rx_split.res_rcv_nxt.next = self.conn_table.res_rcv_nxt.val();
        self.rx_split.res_rcv_wnd.next = self.conn_table.res_rcv_wnd.val();
        self.rx_split.res_snd_una.next = self.conn_table.res_snd_una.val();
        self.rx_split.res_snd_nxt.next = self.conn_table.res_snd_nxt.val();
        self.conn_table.up_valid.next = self.rx_split.up_valid.val();
        self.conn_table.up_idx.next = self.rx_split.up_idx.val();
        self.conn_table.up_rcv_nxt.next = self.rx_split.up_rcv_nxt.val();
        self.conn_table.up_snd_una.next = self.rx_split.up_snd_una.val();
        self.rx_split.up_ready.next = self.conn_table.up_ready.val();
        // The sequencer's rewind of a refused segment (`rw_*`).
        self.conn_table.rw_valid.next = self.rw_pend.q.val();
        self.conn_table.rw_idx.next = self.rw_conn.q.val();
        self.conn_table.rw_rcv_nxt.next = self.rw_seq.q.val();
        self.rx_split.res_snd_wscale.next = self.conn_table.res_snd_wscale.val();
        self.conn_table.up_wnd_valid.next = self.rx_split.up_wnd_valid.val();
        self.conn_table.up_snd_wnd.next = self.rx_split.up_snd_wnd.val();

        // ---- Effective table writes (one set for RX and TX). The pins
        // first; a firmware table write (`fw_port` `tw_*`, the 64-octet
        // entry in rnic_wire::abi::context layout, octet i = bits 8i+7..8i,
        // integers little-endian) wins in the same clock.
        self.ew_ct_valid.next = self.ct_wr_valid.val();
        self.ew_ct_idx.next = self.ct_wr_idx.val();
        self.ew_ct_used.next = self.ct_wr_used.val();
        self.ew_ct_local_ip.next = self.ct_wr_local_ip.val();
        self.ew_ct_peer_ip.next = self.ct_wr_peer_ip.val();
        self.ew_ct_local_port.next = self.ct_wr_local_port.val();
        self.ew_ct_peer_port.next = self.ct_wr_peer_port.val();
        self.ew_ct_mode.next = self.ct_wr_mode.val();
        self.ew_ct_mpa.next = self.ct_wr_mpa.val();
        self.ew_ct_rcv_nxt.next = self.ct_wr_rcv_nxt.val();
        self.ew_ct_rcv_wnd.next = self.ct_wr_rcv_wnd.val();
        self.ew_ct_snd_una.next = self.ct_wr_snd_una.val();
        self.ew_ct_snd_nxt.next = self.ct_wr_snd_nxt.val();
        self.ew_ct_local_mac.next = self.ct_wr_local_mac.val();
        self.ew_ct_peer_mac.next = self.ct_wr_peer_mac.val();
        self.ew_ct_mulpdu.next = self.ct_wr_mulpdu.val();
        self.ew_ct_rcv_wscale.next = self.ct_wr_rcv_wscale.val();
        self.ew_ct_tx_marker_ref.next = self.ct_wr_tx_marker_ref.val();
        self.ew_ct_snd_wnd.next = self.ct_wr_snd_wnd.val();
        self.ew_ct_snd_wscale.next = self.ct_wr_snd_wscale.val();
        // Connection (TableId 0).
        self.fwc_conn.next = self.fw_port.tw_valid.val() & (self.fw_port.tw_table.val() == 0);
        // RDMA mode before and after: the device keeps rcv_nxt and snd_una
        // (read one clock before, plus an update in that clock).
        self.fwc_keep.next = self.conn_table.rd_used.val()
            & (self.conn_table.rd_mode.val() == 2)
            & (self.fw_port.tw_data.val().get_bits::<8>(0) == 2);
        // entering RDMA mode: the MPA receive context starts at SeqStart =
        // rx_marker_ref (RFC 5044 section 4.3), MpaRxState initial
        self.fwc_mpa.next =
            (self.fw_port.tw_data.val().get_bits::<8>(0) == 2) & !self.fwc_keep.val();
        if self.fwc_conn.val() {
            self.ew_ct_valid.next = true;
            self.ew_ct_idx.next = self.fw_port.tw_index.val().get_bits::<8>(0);
            // mode (octet 0), mpa_flags (1), rcv_wscale (3), local_ip (4),
            // peer_ip (8), local_port (12), peer_port (14), local_mac (16..22),
            // peer_mac (22..28), mulpdu (30), rcv_nxt (32), snd_nxt (36),
            // snd_una (40), rcv_wnd (48), tx_marker_ref (52)
            self.ew_ct_used.next = self.fw_port.tw_data.val().get_bits::<8>(0) != 0;
            self.ew_ct_mode.next = self.fw_port.tw_data.val().get_bits::<2>(0);
            self.ew_ct_mpa.next = self.fw_port.tw_data.val().get_bits::<4>(8);
            self.ew_ct_rcv_wscale.next = self.fw_port.tw_data.val().get_bits::<8>(24);
            self.ew_ct_local_ip.next = self.fw_port.tw_data.val().get_bits::<32>(32);
            self.ew_ct_peer_ip.next = self.fw_port.tw_data.val().get_bits::<32>(64);
            self.ew_ct_local_port.next = self.fw_port.tw_data.val().get_bits::<16>(96);
            self.ew_ct_peer_port.next = self.fw_port.tw_data.val().get_bits::<16>(112);
            // MACs: the first octet on the wire goes to bits 47:40
            self.ew_ct_local_mac.next =
                (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(128)) << 40)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(136)) << 32)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(144)) << 24)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(152)) << 16)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(160)) << 8)
                    | bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(168));
            self.ew_ct_peer_mac.next =
                (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(176)) << 40)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(184)) << 32)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(192)) << 24)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(200)) << 16)
                    | (bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(208)) << 8)
                    | bit_cast::<48, 8>(self.fw_port.tw_data.val().get_bits::<8>(216));
            self.ew_ct_mulpdu.next = self.fw_port.tw_data.val().get_bits::<16>(240);
            self.ew_ct_rcv_nxt.next = self.fw_port.tw_data.val().get_bits::<32>(256);
            self.ew_ct_snd_nxt.next = self.fw_port.tw_data.val().get_bits::<32>(288);
            self.ew_ct_snd_una.next = self.fw_port.tw_data.val().get_bits::<32>(320);
            self.ew_ct_rcv_wnd.next = self.fw_port.tw_data.val().get_bits::<32>(384);
            self.ew_ct_tx_marker_ref.next = self.fw_port.tw_data.val().get_bits::<32>(416);
            // snd_wscale (octet 2), snd_wnd (44)
            self.ew_ct_snd_wscale.next = self.fw_port.tw_data.val().get_bits::<8>(16);
            self.ew_ct_snd_wnd.next = self.fw_port.tw_data.val().get_bits::<32>(352);
            if self.fwc_keep.val() {
                self.ew_ct_rcv_nxt.next = self.conn_table.rd_rcv_nxt.val();
                self.ew_ct_snd_una.next = self.conn_table.rd_snd_una.val();
                if self.fwc_up_hit.q.val() {
                    self.ew_ct_rcv_nxt.next = self.fwc_up_rcv.q.val();
                    self.ew_ct_snd_una.next = self.fwc_up_una.q.val();
                }
                if self.fwc_rw_hit.q.val() {
                    self.ew_ct_rcv_nxt.next = self.fwc_rw_rcv.q.val();
                }
            }
        }
        // QP (TableId 1). The pins: qp_ram entry qp_wr_idx. The firmware:
        // qp_ram is per connection, so the entry goes to the QP's `conn`
        // (octets 36..40) when that is a connection index (< 256; NO_CONN:
        // no RX write); TX checks its own limits below.
        self.ew_qp_valid.next = self.qp_wr_valid.val();
        self.ew_qp_rx.next = self.qp_wr_valid.val();
        self.ew_qp_idx.next = self.qp_wr_idx.val();
        self.ew_qp_qpn.next = self.qp_wr_qpn.val();
        self.ew_qp_state.next = self.qp_wr_state.val();
        self.ew_qp_pd.next = self.qp_wr_pd.val();
        self.ew_qp_sq_ring.next = self.qp_wr_sq_ring.val();
        self.ew_qp_sq_log2.next = self.qp_wr_sq_log2.val();
        self.ew_qp_conn.next = self.qp_wr_conn.val();
        self.ew_qp_tx_send_msn.next = self.qp_wr_tx_send_msn.val();
        self.ew_qp_tx_read_msn.next = self.qp_wr_tx_read_msn.val();
        self.ew_qp_ord.next = 8.into(); // rd_track::ORD_MAX
        self.ew_qp_ird.next = 16.into(); // rreq_queue::IRD_MAX
        self.ew_qp_rx_read_msn.next = 1.into();
        self.fwq_v.next = self.fw_port.tw_valid.val() & (self.fw_port.tw_table.val() == 1);
        if self.fwq_v.val() {
            // state (octet 0), sq_log2 (3), pd (4), sq_ring (16), conn (36),
            // tx_send_msn (44), tx_read_msn (48); qpn = the entry index
            self.ew_qp_valid.next = true;
            self.ew_qp_rx.next = self.fw_port.tw_data.val().get_bits::<24>(296) == 0;
            self.ew_qp_idx.next = self.fw_port.tw_data.val().get_bits::<8>(288);
            self.ew_qp_qpn.next = bit_cast::<32, 24>(self.fw_port.tw_index.val());
            self.ew_qp_state.next = self.fw_port.tw_data.val().get_bits::<8>(0);
            self.ew_qp_pd.next = self.fw_port.tw_data.val().get_bits::<32>(32);
            self.ew_qp_sq_ring.next = self.fw_port.tw_data.val().get_bits::<64>(128);
            self.ew_qp_sq_log2.next = self.fw_port.tw_data.val().get_bits::<8>(24);
            self.ew_qp_conn.next = self.fw_port.tw_data.val().get_bits::<32>(288);
            self.ew_qp_tx_send_msn.next = self.fw_port.tw_data.val().get_bits::<32>(352);
            self.ew_qp_tx_read_msn.next = self.fw_port.tw_data.val().get_bits::<32>(384);
            // ord (octet 42)
            self.ew_qp_ord.next = self.fw_port.tw_data.val().get_bits::<16>(336);
            // ird (octet 40), rx_read_msn (56)
            self.ew_qp_ird.next = self.fw_port.tw_data.val().get_bits::<16>(320);
            self.ew_qp_rx_read_msn.next = self.fw_port.tw_data.val().get_bits::<32>(448);
        }
        // Board profile (docs/fpga.md, conn16): a QP bound to a connection
        // beyond the profile's table is refused where it enters: no qp_ram
        // write, and its connection becomes NO_CONN, which the TX checks
        // below refuse. The co-simulation profile takes every 8-bit index.
        self.qp_conn_chk.idx.next =
            self.qp_wr_conn.val().get_bits::<8>(0) | self.qp_wr_idx.val().get_bits::<8>(0);
        if self.fwq_v.val() {
            self.qp_conn_chk.idx.next = self.fw_port.tw_data.val().get_bits::<8>(288);
        }
        if self.qp_conn_chk.beyond.val() {
            self.ew_qp_rx.next = false;
            self.ew_qp_conn.next = 0xFFFF_FFFF_u64.into();
        }
        // ---- TX's SND.NXT into the connection table (and tx_wnxt): the
        // data frame's end (se_*, registered) or the one held from the
        // clock before. A table write has the port: the update is held one
        // clock, unless it is for the entry being written (the firmware's
        // entry wins; a write that keeps RDMA mode took the device's value,
        // forwarded below). Frames end at least 7 clocks apart, so one held
        // update is enough unless table writes come 7 clocks in a row.
        self.sn_cand_v.next = self.se_v.q.val() | self.sh_v.q.val();
        self.sn_cand_idx.next = self.sh_idx.q.val();
        self.sn_cand_val.next = self.sh_val.q.val();
        if self.se_v.q.val() {
            self.sn_cand_idx.next = self.se_idx.q.val();
            self.sn_cand_val.next = self.se_val.q.val();
        }
        self.sn_out_v.next = false;
        self.sn_out_idx.next = self.sh_idx.q.val();
        self.sn_out_val.next = self.sh_val.q.val();
        self.sh_v.d.next = false;
        if self.ew_ct_valid.val() {
            if self.sn_cand_v.val() & (self.sn_cand_idx.val() != self.ew_ct_idx.val()) {
                self.sh_v.d.next = true;
                self.sh_idx.d.next = self.sn_cand_idx.val();
                self.sh_val.d.next = self.sn_cand_val.val();
            }
        } else if self.sh_v.q.val() {
            self.sn_out_v.next = true;
            if self.se_v.q.val() {
                if self.se_idx.q.val() == self.sh_idx.q.val() {
                    self.sn_out_val.next = self.se_val.q.val();
                } else {
                    self.sh_v.d.next = true;
                    self.sh_idx.d.next = self.se_idx.q.val();
                    self.sh_val.d.next = self.se_val.q.val();
                }
            }
        } else if self.se_v.q.val() {
            self.sn_out_v.next = true;
            self.sn_out_idx.next = self.se_idx.q.val();
            self.sn_out_val.next = self.se_val.q.val();
        }
        // A firmware write that keeps RDMA mode keeps the device's SND.NXT
        // and SND.WND too (as rcv_nxt and snd_una above): the read port's
        // value, an update the read missed (clock before), this clock's.
        if self.fwc_conn.val() & self.fwc_keep.val() {
            self.ew_ct_snd_nxt.next = self.conn_table.rd_snd_nxt.val();
            if self.fwc_sn_hit.q.val() {
                self.ew_ct_snd_nxt.next = self.fwc_sn_val.q.val();
            }
            if self.sn_cand_v.val() & (self.sn_cand_idx.val() == self.ew_ct_idx.val()) {
                self.ew_ct_snd_nxt.next = self.sn_cand_val.val();
            }
            self.ew_ct_snd_wnd.next = self.conn_table.rd_snd_wnd.val();
            if self.fwc_up_wv.q.val() {
                self.ew_ct_snd_wnd.next = self.fwc_up_wnd.q.val();
            }
        }
        self.fwc_sn_hit.d.next = self.fw_port.ct_rd_sel.val()
            & self.sn_out_v.val()
            & (self.sn_out_idx.val() == self.fw_port.ct_rd_idx.val());
        self.fwc_sn_val.d.next = self.sn_out_val.val();
        self.fwc_up_wv.d.next = self.fw_port.ct_rd_sel.val()
            & self.rx_split.up_valid.val()
            & self.rx_split.up_wnd_valid.val()
            & self.conn_table.up_ready.val()
            & (self.rx_split.up_idx.val() == self.fw_port.ct_rd_idx.val());
        self.fwc_up_wnd.d.next = self.rx_split.up_snd_wnd.val();
        self.conn_table.sn_valid.next = self.sn_out_v.val();
        self.conn_table.sn_idx.next = self.sn_out_idx.val();
        self.conn_table.sn_snd_nxt.next = self.sn_out_val.val();
        self.conn_table.wr_snd_wnd.next = self.ew_ct_snd_wnd.val();
        self.conn_table.wr_snd_wscale.next = self.ew_ct_snd_wscale.val().get_bits::<4>(0);
        if self.ew_ct_snd_wscale.val() > 14 {
            // RFC 7323 §2.3: at most 14
            self.conn_table.wr_snd_wscale.next = 14.into();
        }
        self.ct_rd_snd_nxt.next = self.conn_table.rd_snd_nxt.val();
        self.ct_rd_snd_wnd.next = self.conn_table.rd_snd_wnd.val();
        // The end of the peer's window per connection, for TxSeg and
        // read_resp: SND.UNA + SND.WND (RFC 9293 §3.8.6), the operands
        // registered in `wend_*`, summed and written one clock later.
        //
        // Why the extra clock cannot let an FPDU pass the window: the
        // readers see a window end one clock older than before, and every
        // value tx_wend holds is an edge the peer offered (a window update
        // of a segment rx_split accepted, or the firmware's connection
        // state). Reading the previous edge one clock longer is exactly what
        // the readers would see had the peer's ACK arrived one clock later,
        // and it can only be larger than the new one if the peer shrank its
        // window, which RFC 9293 §3.8.6 strongly discourages and a sender
        // must tolerate anyway (data sent within the edge it last saw).
        // Writes keep their order (one register, one write per clock, the
        // firmware's write winning a clash as before), so the table never
        // goes back to an older edge, and tx_wend's read port is registered
        // anyway, so a read at the written address already lagged a clock.
        dff_setup!(self, clock, wend_v, wend_idx, wend_una, wend_wnd);
        self.tx_wend.read_clock.next = self.clock.val();
        self.tx_wend.write_clock.next = self.clock.val();
        self.wend_v.d.next = self.ew_ct_valid.val()
            | (self.rx_split.up_valid.val() & self.rx_split.up_wnd_valid.val());
        self.wend_idx.d.next = self.rx_split.up_idx.val();
        self.wend_una.d.next = self.rx_split.up_snd_una.val();
        self.wend_wnd.d.next = self.rx_split.up_snd_wnd.val();
        if self.ew_ct_valid.val() {
            self.wend_idx.d.next = self.ew_ct_idx.val();
            self.wend_una.d.next = self.ew_ct_snd_una.val();
            self.wend_wnd.d.next = self.ew_ct_snd_wnd.val();
        }
        if self.dp_rst.val() {
            self.wend_v.d.next = false;
        }
        self.tx_wend.write_enable.next = self.wend_v.q.val();
        self.tx_wend.write_address.next = self.wend_idx.q.val();
        self.tx_wend.write_data.next = self.wend_una.q.val() + self.wend_wnd.q.val();
        self.conn_table.wr_valid.next = self.ew_ct_valid.val();
        self.conn_table.wr_idx.next = self.ew_ct_idx.val();
        self.conn_table.wr_used.next = self.ew_ct_used.val();
        self.conn_table.wr_local_ip.next = self.ew_ct_local_ip.val();
        self.conn_table.wr_peer_ip.next = self.ew_ct_peer_ip.val();
        self.conn_table.wr_local_port.next = self.ew_ct_local_port.val();
        self.conn_table.wr_peer_port.next = self.ew_ct_peer_port.val();
        self.conn_table.wr_mode.next = self.ew_ct_mode.val();
        self.conn_table.wr_mpa.next = self.ew_ct_mpa.val();
        self.conn_table.wr_rcv_nxt.next = self.ew_ct_rcv_nxt.val();
        self.conn_table.wr_rcv_wnd.next = self.ew_ct_rcv_wnd.val();
        self.conn_table.wr_snd_una.next = self.ew_ct_snd_una.val();
        self.conn_table.wr_snd_nxt.next = self.ew_ct_snd_nxt.val();
        self.conn_table.rd_idx.next = self.ct_rd_idx.val();
        self.ct_rd_used.next = self.conn_table.rd_used.val();
        self.ct_rd_mode.next = self.conn_table.rd_mode.val();
        self.ct_rd_rcv_nxt.next = self.conn_table.rd_rcv_nxt.val();
        self.ct_rd_snd_una.next = self.conn_table.rd_snd_una.val();

        // payload out: to rx_pay_* or (rx_ulp_en) to the ULP path
        self.rx_pay_data.next = self.rx_parse.pay_data.val();
        self.rx_pay_keep.next = self.rx_parse.pay_keep.val();
        self.rx_pay_last.next = self.rx_parse.pay_last.val();
        self.rx_pay_valid.next = self.rx_parse.pay_valid.val() & !self.rx_ulp_en.val();
        self.pay_ready.next = self.rx_pay_ready.val();
        // The segment sequencer (below) may start a segment in idle, or
        // when the previous segment's last piece has left mpa_rx. Its first
        // payload beat enters `mpa_in_sk` in the start clock (at mpa_rx a
        // clock later, with the registered context and mpa_ram's read):
        // a clock per segment, at line rate a clock per frame.
        self.sq_start.next = ((self.sq_state.q.val() == 0)
            | ((self.sq_state.q.val() == 4) & self.mpa_rx.out_drained.val()))
            & !self.rw_pend.q.val();
        self.sq_go.next =
            self.sq_start.val() & self.rx_ulp_en.val() & self.rx_parse.pay_valid.val();
        if self.rx_ulp_en.val() {
            self.pay_ready.next =
                ((self.sq_state.q.val() == 2) | self.sq_go.val()) & self.mpa_in_sk.in_ready.val();
        }
        self.rx_parse.pay_ready.next = self.pay_ready.val();
        self.pay_take.next = self.rx_parse.pay_valid.val() & self.pay_ready.val();
        self.rx_hdr_eth_dst.next = self.rx_parse.eth_dst.val();
        self.rx_hdr_eth_src.next = self.rx_parse.eth_src.val();
        self.rx_hdr_ip_src.next = self.rx_parse.ip_src.val();
        self.rx_hdr_ip_dst.next = self.rx_parse.ip_dst.val();
        self.rx_hdr_sport.next = self.rx_parse.sport.val();
        self.rx_hdr_dport.next = self.rx_parse.dport.val();
        self.rx_hdr_seq.next = self.rx_parse.seq.val();
        self.rx_hdr_ack.next = self.rx_parse.ack.val();
        self.rx_hdr_flags.next = self.rx_parse.flags.val();
        self.rx_hdr_window.next = self.rx_parse.window.val();
        self.rx_hdr_pay_len.next = self.rx_parse.pay_len.val();
        self.rx_hdr_hdr_len.next = self.rx_parse.hdr_len.val();
        self.rx_seg_conn.next = self.rx_split.seg_conn.val();
        self.rx_seg_mpa.next = self.rx_split.seg_mpa.val();

        self.pay_crc.data.next = self.rx_parse.pay_data.val();
        self.pay_crc.keep.next = self.rx_parse.pay_keep.val();
        self.pay_crc.last.next = self.rx_parse.pay_last.val();
        self.pay_crc.valid.next = self.pay_take.val();
        self.rx_pay_crc.next = self.pay_crc.crc.val();
        self.rx_pay_crc_valid.next = self.pay_crc.crc_valid.val();

        // exceptions
        // rx_parse's frames and received Terminate records (ExcArb) into
        // the exception queue.
        self.exc_arb.clock.next = self.clock.val();
        self.exc_arb.reset.next = self.dp_rst.val();
        self.exc_arb.raw_data.next = self.rx_parse.raw_data.val();
        self.exc_arb.raw_keep.next = self.rx_parse.raw_keep.val();
        self.exc_arb.raw_last.next = self.rx_parse.raw_last.val();
        self.exc_arb.raw_valid.next = self.rx_parse.raw_valid.val();
        self.exc_arb.raw_commit.next = self.rx_parse.raw_commit.val();
        self.exc_arb.raw_reason.next = self.rx_parse.raw_reason.val();
        self.exc_arb.raw_conn.next = self.rx_parse.raw_conn.val();
        self.exc_arb.q_count.next = self.exc_queue.count.val();
        self.exc_queue.in_data.next = self.exc_arb.out_data.val();
        self.exc_queue.in_keep.next = self.exc_arb.out_keep.val();
        self.exc_queue.in_last.next = self.exc_arb.out_last.val();
        self.exc_queue.in_valid.next = self.exc_arb.out_valid.val();
        self.exc_queue.in_commit.next = self.exc_arb.out_commit.val();
        self.exc_queue.in_reason.next = self.exc_arb.out_reason.val();
        self.exc_queue.in_conn.next = self.exc_arb.out_conn.val();
        self.exc_valid.next = self.exc_queue.head_valid.val();
        self.exc_reason.next = self.exc_queue.head_reason.val();
        self.exc_len.next = self.exc_queue.head_len.val();
        self.exc_conn.next = self.exc_queue.head_conn.val();
        self.exc_queue.rd_word.next = self.exc_rd_word.val();
        self.exc_count.next = self.exc_queue.count.val();
        self.exc_rd_data.next = self.exc_queue.rd_data.val();
        self.exc_queue.pop.next = self.exc_pop.val();

        // ---- segment sequencer and per-connection MPA context
        self.mpa_ram.read_clock.next = self.clock.val();
        self.mpa_ram.write_clock.next = self.clock.val();
        self.qp_ram.read_clock.next = self.clock.val();
        self.qp_ram.write_clock.next = self.clock.val();
        self.mpa_ram.read_address.next = self.sq_conn.q.val();
        self.mpa_ram.write_enable.next = false;
        self.mpa_ram.write_address.next = self.sq_conn.q.val();
        self.sq_adm.d.next = false;
        // (a pure ACK's empty beat asks for no ACK)
        self.cm_valid.next = self.sq_adm.q.val()
            & !self.sq_refuse.q.val()
            & (self.sq_end.q.val() != self.sq_seq.q.val());
        // st_out written back with the connection's SeqStart.
        self.mpa_ram.write_data.next = (self.mpa_ram.read_data.val() >> 88) << 88
            | bit_cast::<120, 88>(self.mpa_rx.st_out.val());
        // A segment may start in idle, or when the previous segment's last
        // piece has left mpa_rx; mpa_ram is read at the segment's connection
        // in that clock, so its record is there with the first beat.
        // A pending rewind is taken first (in a clock or two), so a refusal
        // never overwrites another.
        //
        // Admission (fpdu_buffer "Admission"): a segment whose connection
        // holds no span slot while none is free is refused here, before
        // anything of it is placed or acknowledged. `mpa_rx` consumes it as
        // a dead connection's (no output), its MPA record is not written
        // back, no ACK request is raised, and RCV.NXT goes back to its
        // SEG.SEQ, so the peer's TCP retransmits it (RFC 9293 §3.10.7.4:
        // only segment text actually taken advances RCV.NXT). The next
        // segment of the connection cannot have been accepted yet:
        // `rx_parse` offers it only after this one's payload, which waits
        // for this start, and the rewind lands in the clocks right after.
        self.fpdu_buf.adm_conn.next = self.rx_split.seg_conn.val();
        self.sq_no_room.next = !self.fpdu_buf.adm_ok.val() & self.rx_parse.pay_len.val().any();
        if self.sq_start.val() {
            self.mpa_ram.read_address.next = self.rx_split.seg_conn.val();
            self.sq_state.d.next = 0.into();
            if self.rx_ulp_en.val() & self.rx_parse.pay_valid.val() {
                self.sq_state.d.next = 2.into();
                self.sq_conn.d.next = self.rx_split.seg_conn.val();
                self.sq_seq.d.next = self.rx_parse.seq.val();
                self.sq_end.d.next =
                    self.rx_parse.seq.val() + bit_cast::<32, 16>(self.rx_parse.pay_len.val());
                self.sq_mpa.d.next = self.rx_split.seg_mpa.val();
                self.sq_adm.d.next = true;
                // (a segment without payload needs no slot: never refused)
                self.sq_refuse.d.next = self.sq_no_room.val();
                if self.sq_no_room.val() {
                    self.rw_pend.d.next = true;
                    self.rw_conn.d.next = self.rx_split.seg_conn.val();
                    self.rw_seq.d.next = self.rx_parse.seq.val();
                    self.cnt_no_slot.d.next = self.cnt_no_slot.q.val() + 1;
                }
                // (a one-beat segment taken in its start clock)
                if self.pay_take.val() & self.rx_parse.pay_last.val() {
                    self.sq_state.d.next = 3.into();
                }
            }
        } else if (self.sq_state.q.val() == 2) & self.pay_take.val() & self.rx_parse.pay_last.val()
        {
            self.sq_state.d.next = 3.into();
        } else if (self.sq_state.q.val() == 3) & self.mpa_rx.st_out_valid.val() {
            // Taken: the record written back (not for a refused segment).
            self.mpa_ram.write_enable.next = !self.sq_refuse.q.val();
            self.sq_state.d.next = 4.into();
        }
        if self.rw_pend.q.val() & self.conn_table.rw_ready.val() {
            self.rw_pend.d.next = false;
        }
        // A firmware write that gives the entry a new RCV.NXT (not keeping
        // the device's) supersedes a rewind still waiting for it.
        if self.ew_ct_valid.val()
            & (self.ew_ct_idx.val() == self.rw_conn.q.val())
            & !(self.fwc_conn.val() & self.fwc_keep.val())
        {
            self.rw_pend.d.next = false;
        }
        self.cnt_rx_no_slot.next = self.cnt_no_slot.q.val();
        // The ACK request for the TX side (`tx_ack`, `tx_ackgen`, the
        // `ack_req_*` pins): with the ULP path, a segment is acknowledged
        // once it is admitted (a clock after it starts, not after its last
        // octet: nothing after admission refuses it for want of room);
        // without the ULP path (`rx_pay_*` out), when accepted.
        self.ak_valid.next = self.rx_split.ack_req_valid.val();
        self.ak_conn.next = self.rx_split.ack_req_conn.val();
        self.ak_ack.next = self.rx_split.ack_req_ack.val();
        if self.rx_ulp_en.val() {
            self.ak_valid.next = self.cm_valid.val();
            self.ak_conn.next = self.sq_conn.q.val();
            self.ak_ack.next = self.sq_end.q.val();
        }
        self.ack_req_valid.next = self.ak_valid.val();
        self.ack_req_conn.next = self.ak_conn.val();
        self.ack_req_ack.next = self.ak_ack.val();
        self.zero32.next = 0.into();
        self.mpa_init.next = !self.zero32.val(); // CRC_INIT
        if self.mpa_wr_valid.val() {
            // firmware write: takes priority (a write-back in the same clock
            // is lost; the firmware writes a connection before it carries data)
            self.mpa_ram.write_enable.next = true;
            self.mpa_ram.write_address.next = self.mpa_wr_idx.val();
            self.mpa_ram.write_data.next = bit_cast::<120, 32>(self.mpa_init.val())
                | (bit_cast::<120, 32>(self.mpa_wr_seq_start.val()) << 88);
        }
        // The segment's beats reach mpa_rx through `mpa_in_sk`; the context
        // below stays valid until the sequencer's next start (state 3 waits
        // for `st_out_valid`, after mpa_rx took the last beat).
        self.mpa_in_sk.clock.next = self.clock.val();
        self.mpa_in_sk.reset.next = self.dp_rst.val();
        self.mpa_in_sk.in_valid.next =
            self.rx_parse.pay_valid.val() & ((self.sq_state.q.val() == 2) | self.sq_go.val());
        // keep is 8 on every beat without last (docs/rtl.md conventions).
        self.mpa_in_oh.next = bits::<9>(0x100);
        if self.rx_parse.pay_last.val() {
            self.mpa_in_oh.next = bits::<9>(1) << self.rx_parse.pay_keep.val();
        }
        self.mpa_in_sk.in_data.next = (bit_cast::<74, 1>(self.rx_parse.pay_last.val().into())
            << 73)
            | (bit_cast::<74, 9>(self.mpa_in_oh.val()) << 64)
            | bit_cast::<74, 64>(self.rx_parse.pay_data.val());
        self.mpa_rx.in_data.next = self.mpa_in_sk.out_data.val().get_bits::<64>(0);
        self.mpa_rx.in_keep_oh.next = self.mpa_in_sk.out_data.val().get_bits::<9>(64);
        self.mpa_rx.in_last.next = self.mpa_in_sk.out_data.val().get_bit(73);
        self.mpa_rx.in_valid.next = self.mpa_in_sk.out_valid.val();
        self.mpa_in_sk.out_ready.next = self.mpa_rx.in_ready.val();
        // mpa_flags bit 1 MPA_CRC_RX, bit 3 MPA_MARKERS_RX (rnic_wire::abi::context)
        self.mpa_rx.ctx_crc_en.next = self.sq_mpa.q.val().get_bit(1);
        self.mpa_rx.ctx_mk_en.next = self.sq_mpa.q.val().get_bit(3);
        self.mpa_rx.ctx_seq.next = self.sq_seq.q.val();
        self.mpa_rx.ctx_seq_start.next = self.mpa_ram.read_data.val().get_bits::<32>(88);
        // A refused segment runs as a dead connection's (`MpaRxState` bit 87).
        self.mpa_rx.ctx_state.next = self.mpa_ram.read_data.val().get_bits::<88>(0)
            | (bit_cast::<88, 1>(self.sq_refuse.q.val().into()) << 87);
        // largest ULPDU_LENGTH: the field's range (a piece must also fit the FPDU buffer)
        self.mpa_rx.cfg_max_ulpdu.next = 0xFFFF.into();

        // mpa_rx → fpdu_buf
        self.fpdu_buf.in_data.next = self.mpa_rx.out_data.val();
        self.fpdu_buf.in_keep.next = self.mpa_rx.out_keep.val();
        self.fpdu_buf.in_last.next = self.mpa_rx.out_last.val();
        self.fpdu_buf.in_valid.next = self.mpa_rx.out_valid.val();
        self.mpa_rx.out_ready.next = self.fpdu_buf.in_ready.val();
        self.fpdu_buf.in_ulpdu_start.next = self.mpa_rx.out_ulpdu_start.val();
        self.fpdu_buf.in_fpdu_end.next = self.mpa_rx.out_fpdu_end.val();
        self.fpdu_buf.in_crc_ok.next = self.mpa_rx.out_crc_ok.val();
        self.fpdu_buf.in_marker_bad.next = self.mpa_rx.out_marker_bad.val();
        self.fpdu_buf.in_length_bad.next = self.mpa_rx.out_length_bad.val();
        self.fpdu_buf.in_conn.next = self.sq_conn.q.val();

        // QP table, looked up by the buffer's head record
        self.qp_ram.read_address.next = self.fpdu_buf.out_conn.val();
        self.qp_ram.write_address.next = self.ew_qp_idx.val();
        self.qp_ram.write_enable.next = self.ew_qp_valid.val() & self.ew_qp_rx.val();
        self.qp_ram.write_data.next = bit_cast::<72, 32>(self.ew_qp_qpn.val())
            | (bit_cast::<72, 8>(self.ew_qp_state.val()) << 32)
            | (bit_cast::<72, 32>(self.ew_qp_pd.val()) << 40);
        self.fpdu_buf.in_qpn.next = self.qp_ram.read_data.val().get_bits::<32>(0);

        // fpdu_buf → fb_sk → ddp_rx. The QP fields go through the slice
        // with each beat: the table is addressed by the buffer's head
        // record, which moves on to the next piece while this piece's last
        // beat may still wait in the slice. The buffer holds a piece back
        // until the lookup has answered (its LOAD clock), so every beat
        // carries its own connection's QP; ddp_rx takes them on the first.
        self.fb_sk.clock.next = self.clock.val();
        self.fb_sk.reset.next = self.dp_rst.val();
        self.fb_sk.in_valid.next = self.fpdu_buf.out_valid.val();
        self.fpdu_buf.out_ready.next = self.fb_sk.in_ready.val();
        self.fb_in.next = bit_cast::<165, 64>(self.fpdu_buf.out_data.val())
            | (bit_cast::<165, 4>(self.fpdu_buf.out_keep.val()) << 64)
            | (bit_cast::<165, 1>(self.fpdu_buf.out_last.val().into()) << 68)
            | (bit_cast::<165, 16>(self.fpdu_buf.out_len.val()) << 69)
            | (bit_cast::<165, 8>(self.fpdu_buf.out_conn.val()) << 85)
            | (bit_cast::<165, 72>(self.qp_ram.read_data.val()) << 93);
        self.fb_sk.in_data.next = self.fb_in.val();
        self.ddp_rx.in_valid.next = self.fb_sk.out_valid.val();
        self.fb_sk.out_ready.next = self.ddp_rx.in_ready.val();
        self.ddp_rx.in_data.next = self.fb_sk.out_data.val().get_bits::<64>(0);
        self.ddp_rx.in_keep.next = self.fb_sk.out_data.val().get_bits::<4>(64);
        self.ddp_rx.in_last.next = self.fb_sk.out_data.val().get_bit(68);
        self.ddp_rx.in_len.next = self.fb_sk.out_data.val().get_bits::<16>(69);
        self.ddp_rx.in_conn.next = bit_cast::<32, 8>(self.fb_sk.out_data.val().get_bits::<8>(85));
        self.ddp_rx.in_qpn.next = self.fb_sk.out_data.val().get_bits::<32>(93);
        self.ddp_rx.in_qp_state.next = self.fb_sk.out_data.val().get_bits::<8>(125);
        self.ddp_rx.in_pd.next = self.fb_sk.out_data.val().get_bits::<32>(133);
        // A Read Response is placed only for a QP with a Read outstanding.
        self.rd_track.rx_qp.next = self.ddp_rx.rd_qpn.val();
        self.ddp_rx.rd_any.next = self.rd_track.rx_any.val();
        self.ddp_rx.rd_busy.next = self.rd_track.busy.val();

        // ddp_rx ↔ tpt
        self.tpt.tpt_wr_en.next = self.tpt_wr_en.val();
        self.tpt.tpt_wr_index.next = self.tpt_wr_index.val();
        self.tpt.tpt_wr_data.next = self.tpt_wr_data.val();
        self.tpt.pbl_wr_en.next = self.pbl_wr_en.val();
        self.tpt.pbl_wr_index.next = self.pbl_wr_index.val();
        self.tpt.pbl_wr_data.next = self.pbl_wr_data.val();
        // The check unit is shared by ddp_rx, rx_send, read_resp and tx_seg
        // through TptArb (registered grant; its rules: docs/rtl.md, "TPT
        // check-port arbiter"). The result fields fan out to all four.
        self.tp_arb.reset.next = self.dp_rst.val();
        self.tp_arb.placing.next = self.ddp_rx.placing.val();
        self.tp_arb.inv_hold.next = self.rx_send.inv_hold.val();
        self.tp_arb.dv_valid.next = self.ddp_rx.chk_valid.val();
        self.ddp_rx.chk_ready.next = self.tp_arb.dv_ready.val();
        self.tp_arb.dv_stag.next = self.ddp_rx.chk_stag.val();
        self.tp_arb.dv_pd.next = self.ddp_rx.chk_pd.val();
        self.tp_arb.dv_need.next = self.ddp_rx.chk_need.val();
        self.tp_arb.dv_to.next = self.ddp_rx.chk_to.val();
        self.tp_arb.dv_len.next = self.ddp_rx.chk_len.val();
        self.ddp_rx.res_valid.next = self.tp_arb.dv_res_valid.val();
        self.tp_arb.dv_res_ready.next = self.ddp_rx.res_ready.val();
        self.tp_arb.rs_valid.next = self.rx_send.chk_valid.val();
        self.rx_send.chk_ready.next = self.tp_arb.rs_ready.val();
        self.tp_arb.rs_stag.next = self.rx_send.chk_stag.val();
        self.tp_arb.rs_pd.next = self.rx_send.chk_pd.val();
        self.tp_arb.rs_need.next = self.rx_send.chk_need.val();
        self.tp_arb.rs_to.next = self.rx_send.chk_to.val();
        self.tp_arb.rs_len.next = self.rx_send.chk_len.val();
        self.tp_arb.rs_inv.next = self.rx_send.chk_inv.val();
        self.rx_send.res_valid.next = self.tp_arb.rs_res_valid.val();
        self.tp_arb.rs_res_ready.next = self.rx_send.res_ready.val();
        self.tp_arb.rr_valid.next = self.read_resp.chk_valid.val();
        self.read_resp.chk_ready.next = self.tp_arb.rr_ready.val();
        self.tp_arb.rr_stag.next = self.read_resp.chk_stag.val();
        self.tp_arb.rr_pd.next = self.read_resp.chk_pd.val();
        self.tp_arb.rr_need.next = self.read_resp.chk_need.val();
        self.tp_arb.rr_to.next = self.read_resp.chk_to.val();
        self.tp_arb.rr_len.next = self.read_resp.chk_len.val();
        self.read_resp.res_valid.next = self.tp_arb.rr_res_valid.val();
        self.tp_arb.rr_res_ready.next = self.read_resp.res_ready.val();
        self.tp_arb.ts_valid.next = self.tx_seg.chk_valid.val();
        self.tx_seg.chk_ready.next = self.tp_arb.ts_ready.val();
        self.tp_arb.ts_stag.next = self.tx_seg.chk_stag.val();
        self.tp_arb.ts_pd.next = self.tx_seg.chk_pd.val();
        self.tp_arb.ts_need.next = self.tx_seg.chk_need.val();
        self.tp_arb.ts_to.next = self.tx_seg.chk_to.val();
        self.tp_arb.ts_len.next = self.tx_seg.chk_len.val();
        self.tx_seg.res_valid.next = self.tp_arb.ts_res_valid.val();
        self.tp_arb.ts_res_ready.next = self.tx_seg.res_ready.val();
        self.tpt.chk_valid.next = self.tp_arb.chk_valid.val();
        self.tp_arb.chk_ready.next = self.tpt.chk_ready.val();
        self.tpt.chk_stag.next = self.tp_arb.chk_stag.val();
        self.tpt.chk_pd.next = self.tp_arb.chk_pd.val();
        self.tpt.chk_need.next = self.tp_arb.chk_need.val();
        self.tpt.chk_to.next = self.tp_arb.chk_to.val();
        self.tpt.chk_len.next = self.tp_arb.chk_len.val();
        self.tpt.chk_inv.next = self.tp_arb.chk_inv.val();
        self.tp_arb.res_valid.next = self.tpt.res_valid.val();
        self.tpt.res_ready.next = self.tp_arb.res_ready.val();
        self.ddp_rx.res_fault.next = self.tpt.res_fault.val();
        self.ddp_rx.res_addr.next = self.tpt.res_addr.val();
        self.ddp_rx.res_page_left.next = self.tpt.res_page_left.val();
        self.ddp_rx.res_pbl_idx.next = self.tpt.res_pbl_idx.val();
        self.ddp_rx.res_page_shift.next = self.tpt.res_page_shift.val();
        self.tpt.walk_idx.next = self.ddp_rx.walk_idx.val();
        self.ddp_rx.walk_addr.next = self.tpt.walk_addr.val();
        self.rx_send.res_fault.next = self.tpt.res_fault.val();
        self.rx_send.res_addr.next = self.tpt.res_addr.val();
        self.rx_send.res_page_left.next = self.tpt.res_page_left.val();
        self.read_resp.res_fault.next = self.tpt.res_fault.val();
        self.read_resp.res_addr.next = self.tpt.res_addr.val();
        self.read_resp.res_page_left.next = self.tpt.res_page_left.val();
        self.tx_seg.res_fault.next = self.tpt.res_fault.val();
        self.tx_seg.res_addr.next = self.tpt.res_addr.val();
        self.tx_seg.res_page_left.next = self.tpt.res_page_left.val();

        // DMA write
        // DMA write: ddp_rx's tagged placement and rx_send's Send data,
        // CQEs and events, merged at request boundaries (DmaWrArb)
        self.wr_arb.reset.next = self.dp_rst.val();
        // ddp_rx → wr_a_sk → wr_arb.a (FPGA timing: the FPDU buffer's read
        // state reached wr_sk's load enable through ddp_rx and wr_arb, the
        // routed critical path before this slice). The order of
        // writes is kept by holding the placed-segment record until the
        // slice is empty (`wr_a_idle`, below): only then is the segment's
        // last beat past wr_arb's input, as it was without the slice. That
        // record is what completes a Read (rd_track) and what lets ddp_rx
        // go on to the next segment (a Send after RDMA Writes), so nothing
        // that reports `a`'s data is made before the data are in wr_arb.
        self.wr_a_sk.clock.next = self.clock.val();
        self.wr_a_sk.reset.next = self.dp_rst.val();
        self.wr_a_sk.in_valid.next = self.ddp_rx.dma_wr_valid.val();
        self.ddp_rx.dma_wr_ready.next = self.wr_a_sk.in_ready.val();
        self.wr_a_sk.in_hdr.next = self.ddp_rx.dma_wr_hdr.val();
        self.wr_a_sk.in_len.next = self.ddp_rx.dma_wr_len.val();
        self.wr_a_sk.in_data.next = self.ddp_rx.dma_wr_data.val();
        self.wr_a_sk.in_keep.next = self.ddp_rx.dma_wr_keep.val();
        self.wr_a_sk.in_last.next = self.ddp_rx.dma_wr_last.val();
        self.wr_arb.a_valid.next = self.wr_a_sk.out_valid.val();
        self.wr_a_sk.out_ready.next = self.wr_arb.a_ready.val();
        self.wr_arb.a_hdr.next = self.wr_a_sk.out_hdr.val();
        self.wr_arb.a_len.next = self.wr_a_sk.out_len.val();
        self.wr_arb.a_data.next = self.wr_a_sk.out_data.val();
        self.wr_arb.a_keep.next = self.wr_a_sk.out_keep.val();
        self.wr_arb.a_last.next = self.wr_a_sk.out_last.val();
        // rx_send → wr_b_sk → wr_arb.b (FPGA timing: wr_arb's grant no
        // longer reaches send_place's realigner). Safe for the write order:
        // `b` carries rx_send's data and all CQEs; holding them back never
        // lets a CQE pass the data it reports (`a` has no CQEs).
        self.wr_b_sk.clock.next = self.clock.val();
        self.wr_b_sk.reset.next = self.dp_rst.val();
        self.wr_b_sk.in_valid.next = self.rx_send.dma_wr_valid.val();
        self.rx_send.dma_wr_ready.next = self.wr_b_sk.in_ready.val();
        self.wr_b_sk.in_hdr.next = self.rx_send.dma_wr_hdr.val();
        self.wr_b_sk.in_len.next = self.rx_send.dma_wr_len.val();
        self.wr_b_sk.in_data.next = self.rx_send.dma_wr_data.val();
        self.wr_b_sk.in_keep.next = self.rx_send.dma_wr_keep.val();
        self.wr_b_sk.in_last.next = self.rx_send.dma_wr_last.val();
        self.wr_arb.b_valid.next = self.wr_b_sk.out_valid.val();
        self.wr_b_sk.out_ready.next = self.wr_arb.b_ready.val();
        self.wr_arb.b_hdr.next = self.wr_b_sk.out_hdr.val();
        self.wr_arb.b_len.next = self.wr_b_sk.out_len.val();
        self.wr_arb.b_data.next = self.wr_b_sk.out_data.val();
        self.wr_arb.b_keep.next = self.wr_b_sk.out_keep.val();
        self.wr_arb.b_last.next = self.wr_b_sk.out_last.val();
        self.wr_sk.clock.next = self.clock.val();
        self.wr_sk.reset.next = self.dp_rst.val();
        self.wr_sk.in_valid.next = self.wr_arb.dma_wr_valid.val();
        self.wr_arb.dma_wr_ready.next = self.wr_sk.in_ready.val();
        self.wr_sk.in_hdr.next = self.wr_arb.dma_wr_hdr.val();
        self.wr_sk.in_len.next = self.wr_arb.dma_wr_len.val();
        self.wr_sk.in_data.next = self.wr_arb.dma_wr_data.val();
        self.wr_sk.in_keep.next = self.wr_arb.dma_wr_keep.val();
        self.wr_sk.in_last.next = self.wr_arb.dma_wr_last.val();
        self.dma_wr_valid.next = self.wr_sk.out_valid.val() & !self.dev_rst.wr_hold.val();
        self.wr_sk.out_ready.next = self.dma_wr_ready.val() & !self.dev_rst.wr_hold.val();
        self.dma_wr_hdr.next = self.wr_sk.out_hdr.val();
        self.dma_wr_len.next = self.wr_sk.out_len.val();
        self.dma_wr_data.next = self.wr_sk.out_data.val();
        self.dma_wr_keep.next = self.wr_sk.out_keep.val();
        self.dma_wr_last.next = self.wr_sk.out_last.val();

        // placed-segment records: shown (and taken by placed_pop) only
        // while the Read requester can see the record in the same clock
        // (and only once wr_a_sk is empty: the segment's data are past it)
        self.wr_a_idle.next = !self.wr_a_sk.out_valid.val() & self.wr_a_sk.in_ready.val();
        self.placed_valid.next =
            self.ddp_rx.tag_valid.val() & !self.rd_track.busy.val() & self.wr_a_idle.val();
        self.rdt_take.next =
            self.placed_pop.val() & !self.rd_track.busy.val() & self.wr_a_idle.val();
        self.ddp_rx.tag_ready.next = self.rdt_take.val();
        self.placed_opcode.next = self.ddp_rx.tag_opcode.val();
        self.placed_last.next = self.ddp_rx.tag_ddp_last.val();
        self.placed_stag.next = self.ddp_rx.tag_stag.val();
        self.placed_to.next = self.ddp_rx.tag_to.val();
        self.placed_len.next = self.ddp_rx.tag_len.val();
        self.placed_conn.next = self.ddp_rx.tag_conn.val();
        self.placed_qpn.next = self.ddp_rx.tag_qpn.val();

        // untagged messages
        self.ut_data.next = self.ddp_rx.ut_data.val();
        self.ut_keep.next = self.ddp_rx.ut_keep.val();
        self.ut_last.next = self.ddp_rx.ut_last.val();
        self.ut_valid.next = self.ddp_rx.ut_valid.val();
        // the untagged stream goes to rx_send; the ut_* outputs only
        // observe it (a beat is taken when ut_valid and rx_send is ready)
        // rreq_queue observes the same beats (Read Requests on QN 1): a
        // beat is shown to each consumer only when the other takes it too
        // (rreq_queue's ut_ready depends on its registered state only)
        self.ddp_rx.ut_ready.next = self.rx_send.ut_ready.val() & self.rreq_q.ut_ready.val();
        self.rx_send.ut_data.next = self.ddp_rx.ut_data.val();
        self.rx_send.ut_keep.next = self.ddp_rx.ut_keep.val();
        self.rx_send.ut_last.next = self.ddp_rx.ut_last.val();
        self.rx_send.ut_valid.next = self.ddp_rx.ut_valid.val() & self.rreq_q.ut_ready.val();
        self.rreq_q.ut_valid.next = self.ddp_rx.ut_valid.val() & self.rx_send.ut_ready.val();
        self.rreq_q.ut_data.next = self.ddp_rx.ut_data.val();
        self.rreq_q.ut_keep.next = self.ddp_rx.ut_keep.val();
        self.rreq_q.ut_last.next = self.ddp_rx.ut_last.val();
        self.rreq_q.ut_ddp_last.next = self.ddp_rx.ut_ddp_last.val();
        self.rreq_q.ut_qn.next = self.ddp_rx.ut_qn.val();
        self.rreq_q.ut_msn.next = self.ddp_rx.ut_msn.val();
        self.rreq_q.ut_mo.next = self.ddp_rx.ut_mo.val();
        self.rreq_q.ut_len.next = self.ddp_rx.ut_len.val();
        self.rreq_q.ut_conn.next = self.ddp_rx.ut_conn.val();
        self.rreq_q.ut_qpn.next = self.ddp_rx.ut_qpn.val();
        self.rx_send.ut_opcode.next = self.ddp_rx.ut_opcode.val();
        self.rx_send.ut_ddp_last.next = self.ddp_rx.ut_ddp_last.val();
        self.rx_send.ut_qn.next = self.ddp_rx.ut_qn.val();
        self.rx_send.ut_msn.next = self.ddp_rx.ut_msn.val();
        self.rx_send.ut_mo.next = self.ddp_rx.ut_mo.val();
        self.rx_send.ut_inv_stag.next = self.ddp_rx.ut_inv_stag.val();
        self.rx_send.ut_len.next = self.ddp_rx.ut_len.val();
        self.rx_send.ut_conn.next = self.ddp_rx.ut_conn.val();
        self.rx_send.ut_qpn.next = self.ddp_rx.ut_qpn.val();
        self.rx_send.ut_pd.next = self.ddp_rx.ut_pd.val();
        self.ut_opcode.next = self.ddp_rx.ut_opcode.val();
        self.ut_ddp_last.next = self.ddp_rx.ut_ddp_last.val();
        self.ut_qn.next = self.ddp_rx.ut_qn.val();
        self.ut_msn.next = self.ddp_rx.ut_msn.val();
        self.ut_mo.next = self.ddp_rx.ut_mo.val();
        self.ut_inv_stag.next = self.ddp_rx.ut_inv_stag.val();
        self.ut_len.next = self.ddp_rx.ut_len.val();
        self.ut_conn.next = self.ddp_rx.ut_conn.val();
        self.ut_qpn.next = self.ddp_rx.ut_qpn.val();

        // Terminate requests, in this priority: ddp_rx, rx_send, the Read
        // requester (rd_track), the Read Request queue, the Read responder,
        // then the MPA one; each source holds its record until popped, none
        // is lost
        self.term_src.next = 7.into();
        if self.ddp_rx.term_valid.val() {
            self.term_src.next = 0.into();
        } else if self.rx_send.term_valid.val() {
            self.term_src.next = 1.into();
        } else if self.rd_track.term_valid.val() {
            self.term_src.next = 2.into();
        } else if self.rreq_q.term_valid.val() {
            self.term_src.next = 3.into();
        } else if self.read_resp.term_valid.val() {
            self.term_src.next = 4.into();
        }
        self.ddp_term_sel.next = self.term_src.val() == 0;
        self.rxs_term_sel.next = self.term_src.val() == 1;
        self.rdt_term_sel.next = self.term_src.val() == 2;
        self.term_valid.next = self.ddp_rx.term_valid.val()
            | self.rx_send.term_valid.val()
            | self.rd_track.term_valid.val()
            | self.rreq_q.term_valid.val()
            | self.read_resp.term_valid.val()
            | self.fpdu_buf.mterm_valid.val();
        // the Terminate request is popped by the pin (test rigs) or by the
        // firmware through its port (docs/rtl.md "Terminate transmit")
        self.term_pop_any.next = self.term_pop.val() | self.fw_port.term_pop.val();
        self.ddp_rx.term_ready.next = self.term_pop_any.val() & self.ddp_term_sel.val();
        self.rx_send.term_ready.next = self.term_pop_any.val() & self.rxs_term_sel.val();
        self.rd_track.term_ready.next = self.term_pop_any.val() & self.rdt_term_sel.val();
        self.rreq_q.term_ready.next = self.term_pop_any.val() & (self.term_src.val() == 3);
        self.read_resp.term_ready.next = self.term_pop_any.val() & (self.term_src.val() == 4);
        self.fpdu_buf.mterm_pop.next = self.term_pop_any.val() & (self.term_src.val() == 7);
        if self.ddp_term_sel.val() {
            self.term_cause.next = self.ddp_rx.term_cause.val();
            self.term_conn.next = self.ddp_rx.term_conn.val();
            self.term_qpn.next = self.ddp_rx.term_qpn.val();
            self.term_hdr.next = self.ddp_rx.term_hdr.val();
            self.term_seg_len.next = self.ddp_rx.term_seg_len.val();
        } else if self.rxs_term_sel.val() {
            self.term_cause.next = self.rx_send.term_cause.val();
            self.term_conn.next = self.rx_send.term_conn.val();
            self.term_qpn.next = self.rx_send.term_qpn.val();
            self.term_hdr.next = self.rx_send.term_hdr.val();
            self.term_seg_len.next = self.rx_send.term_seg_len.val();
        } else if self.rdt_term_sel.val() {
            self.term_cause.next = self.rd_track.term_cause.val();
            self.term_conn.next = self.rd_track.term_conn.val();
            self.term_qpn.next = self.rd_track.term_qpn.val();
            self.term_hdr.next = self.rd_track.term_hdr.val();
            self.term_seg_len.next = self.rd_track.term_seg_len.val();
        } else if self.term_src.val() == 3 {
            self.term_cause.next = self.rreq_q.term_cause.val();
            self.term_conn.next = self.rreq_q.term_conn.val();
            self.term_qpn.next = self.rreq_q.term_qpn.val();
            self.term_hdr.next = self.rreq_q.term_hdr.val();
            self.term_seg_len.next = self.rreq_q.term_seg_len.val();
        } else if self.term_src.val() == 4 {
            self.term_cause.next = self.read_resp.term_cause.val();
            self.term_conn.next = self.read_resp.term_conn.val();
            self.term_qpn.next = self.read_resp.term_qpn.val();
            self.term_hdr.next = self.read_resp.term_hdr.val();
            self.term_seg_len.next = self.read_resp.term_seg_len.val();
        } else {
            // an LLP error: no DDP header to echo (RFC 5040 §4.8)
            self.term_cause.next = self.fpdu_buf.mterm_cause.val();
            self.term_conn.next = bit_cast::<32, 8>(self.fpdu_buf.mterm_conn.val());
            self.term_qpn.next = self.fpdu_buf.mterm_qpn.val();
            self.term_hdr.next = 0.into();
            self.term_seg_len.next = 0.into();
        }
        self.cnt_mpa_pass.next = self.fpdu_buf.cnt_pass.val();
        self.cnt_mpa_span.next = self.fpdu_buf.cnt_span.val();
        self.cnt_mpa_err.next = self.fpdu_buf.cnt_err.val();
        self.cnt_ddp_tagged.next = self.ddp_rx.cnt_tagged.val();
        self.cnt_ddp_untagged.next = self.ddp_rx.cnt_untagged.val();
        self.cnt_ddp_term.next = self.ddp_rx.cnt_term.val();
        self.cnt_ddp_drop_state.next = self.ddp_rx.cnt_drop_state.val();
        self.cnt_ddp_len_err.next = self.ddp_rx.cnt_len_err.val();
        self.ulp_buf_beats.next = self.fpdu_buf.level_beats.val();
        self.ulp_buf_recs.next = self.fpdu_buf.level_recs.val();
        self.ulp_span_used.next = self.fpdu_buf.span_used.val();

        // ---- Host registers (BAR0) and firmware port
        self.host_regs.clock.next = self.clock.val();
        self.fw_port.clock.next = self.clock.val();
        self.fwc_up_hit.clock.next = self.clock.val();
        self.fwc_up_rcv.clock.next = self.clock.val();
        self.fwc_up_una.clock.next = self.clock.val();
        self.host_regs.reset.next = self.reset.val();
        self.fw_port.reset.next = self.reset.val();
        self.host_regs.csr_valid.next = self.csr_valid.val();
        self.host_regs.csr_write.next = self.csr_write.val();
        self.host_regs.csr_addr.next = self.csr_addr.val();
        self.host_regs.csr_wdata.next = self.csr_wdata.val();
        self.csr_rdata.next = self.host_regs.csr_rdata.val();
        self.csr_rvalid.next = self.host_regs.csr_rvalid.val();
        self.irq.next = self.host_regs.irq.val();
        self.host_regs.link_up.next = self.link_up.val();
        self.host_regs.fw_ready.next = self.fw_port.fw_ready.val();
        // INT_EVENT: an EQ entry was written (a CQ's or the firmware's, by
        // rx_send's completion writer)
        self.host_regs.int_event.next = self.rx_send.irq_event.val();
        // INT_EQ_OVERFLOW: rx_send's event writer (cpl_write) found the EQ full or off
        self.host_regs.int_eq_overflow.next = self.rx_send.irq_eq_overflow.val();
        self.db_qp_valid.next = self.host_regs.db_qp_valid.val();
        self.db_qp_num.next = self.host_regs.db_qp_num.val();
        self.db_qp_off.next = self.host_regs.db_qp_off.val();
        self.db_qp_value.next = self.host_regs.db_qp_value.val();
        self.db_cq_valid.next = self.host_regs.db_cq_valid.val();
        self.db_cq_num.next = self.host_regs.db_cq_num.val();
        self.db_cq_off.next = self.host_regs.db_cq_off.val();
        self.db_cq_value.next = self.host_regs.db_cq_value.val();
        self.eq_base.next = self.host_regs.eq_base.val();
        self.eq_entries.next = self.host_regs.eq_entries.val();
        self.eq_consumer.next = self.host_regs.eq_consumer.val();
        // mailbox between the two sides, configuration mirror, time
        // Terminate requests, readable by the firmware (TERM_* registers)
        self.fw_port.term_valid.next = self.term_valid.val();
        self.fw_port.term_cause.next = self.term_cause.val();
        self.fw_port.term_conn.next = self.term_conn.val();
        self.fw_port.term_qpn.next = self.term_qpn.val();
        self.fw_port.term_seg_len.next = self.term_seg_len.val();
        self.fw_port.term_hdr.next = self.term_hdr.val();
        self.fw_port.mb_busy.next = self.host_regs.mb_busy.val();
        self.fw_port.mb_opcode.next = self.host_regs.mb_opcode.val();
        self.fw_port.mb_len.next = self.host_regs.mb_len.val();
        self.host_regs.mb_done.next = self.fw_port.mb_done.val();
        self.host_regs.mb_done_status.next = self.fw_port.mb_done_status.val();
        self.host_regs.mb_done_len.next = self.fw_port.mb_done_len.val();
        self.host_regs.mb_fw_addr.next = self.fw_port.mb_fw_addr.val();
        self.host_regs.mb_fw_write.next = self.fw_port.mb_fw_write.val();
        self.host_regs.mb_fw_wdata.next = self.fw_port.mb_fw_wdata.val();
        self.fw_port.mb_fw_rdata.next = self.host_regs.mb_fw_rdata.val();
        self.fw_port.cfg_mac.next = self.host_regs.cfg_mac.val();
        self.fw_port.cfg_ipv4.next = self.host_regs.cfg_ipv4.val();
        self.fw_port.cfg_netmask.next = self.host_regs.cfg_netmask.val();
        self.fw_port.cfg_gateway.next = self.host_regs.cfg_gateway.val();
        self.fw_port.cfg_mtu.next = self.host_regs.cfg_mtu.val();
        self.fw_port.cycles.next = self.host_regs.cycles.val();
        // firmware port pins
        self.fw_port.fw_valid.next = self.fw_valid.val();
        self.fw_port.fw_write.next = self.fw_write.val();
        self.fw_port.fw_addr.next = self.fw_addr.val();
        self.fw_port.fw_wdata.next = self.fw_wdata.val();
        self.fw_rdata.next = self.fw_port.fw_rdata.val();
        self.fw_rvalid.next = self.fw_port.fw_rvalid.val();
        self.raw_tx_data.next = self.fw_port.raw_tx_data.val();
        self.raw_tx_keep.next = self.fw_port.raw_tx_keep.val();
        self.raw_tx_last.next = self.fw_port.raw_tx_last.val();
        self.raw_tx_valid.next = self.fw_port.raw_tx_valid.val();
        self.fw_port.raw_tx_ready.next = self.raw_tx_ready.val();
        self.ev_valid.next = self.fw_port.ev_valid.val();
        self.ev_data.next = self.fw_port.ev_data.val();
        // the firmware's events go into the EQ through rx_send's completion
        // writer (one producer index with the CQ events); ev_* observe them
        self.fw_port.ev_ready.next = self.rx_send.fev_ready.val();
        self.rx_send.fev_valid.next = self.fw_port.ev_valid.val();
        self.rx_send.fev_data.next = self.fw_port.ev_data.val();
        self.flush_valid.next = self.fw_port.flush_valid.val();
        self.flush_qpn.next = self.fw_port.flush_qpn.val();
        // exception queue: the firmware port's reads and pops join the pins'
        self.fw_port.exc_valid.next = self.exc_queue.head_valid.val();
        self.fw_port.exc_reason.next = self.exc_queue.head_reason.val();
        self.fw_port.exc_len.next = self.exc_queue.head_len.val();
        self.fw_port.exc_conn.next = self.exc_queue.head_conn.val();
        self.fw_port.exc_rd_data.next = self.exc_queue.rd_data.val();
        if self.fw_port.exc_rd_sel.val() {
            self.exc_queue.rd_word.next = self.fw_port.exc_rd_word.val();
        }
        self.exc_queue.pop.next = self.exc_pop.val() | self.fw_port.exc_pop.val();
        // connection table read port: the firmware port's reads win
        // RCV.NXT as acknowledged: a segment accepted but not yet taken
        // (or refused, and about to be rewound) is not in it, so the
        // firmware never acknowledges it either.
        self.fw_port.ct_rd_rcv_nxt.next = self.rcv_ack_ram.read_data.val();
        self.fw_port.ct_rd_snd_una.next = self.conn_table.rd_snd_una.val();
        self.fw_port.ct_rd_snd_nxt.next = self.conn_table.rd_snd_nxt.val();
        self.fw_port.ct_rd_snd_wnd.next = self.conn_table.rd_snd_wnd.val();
        if self.fw_port.ct_rd_sel.val() {
            self.conn_table.rd_idx.next = self.fw_port.ct_rd_idx.val();
        }
        // The fast path's update in the clock the firmware port addresses
        // the entry it is about to write (its read port misses it).
        self.fwc_up_hit.d.next = self.fw_port.ct_rd_sel.val()
            & self.rx_split.up_valid.val()
            & self.conn_table.up_ready.val()
            & (self.rx_split.up_idx.val() == self.fw_port.ct_rd_idx.val());
        self.fwc_up_rcv.d.next = self.rx_split.up_rcv_nxt.val();
        self.fwc_rw_hit.d.next = self.fw_port.ct_rd_sel.val()
            & self.rw_pend.q.val()
            & self.conn_table.rw_ready.val()
            & (self.rw_conn.q.val() == self.fw_port.ct_rd_idx.val());
        self.fwc_rw_rcv.d.next = self.rw_seq.q.val();
        self.fwc_up_una.d.next = self.rx_split.up_snd_una.val();

        // Firmware connection write entering RDMA mode (decoded above with
        // the effective table writes): reset the MPA receive record.
        if self.fwc_conn.val() & self.fwc_mpa.val() {
            self.mpa_ram.write_enable.next = true;
            self.mpa_ram.write_address.next = self.fw_port.tw_index.val().get_bits::<8>(0);
            self.mpa_ram.write_data.next = bit_cast::<120, 32>(self.mpa_init.val())
                | (bit_cast::<120, 32>(self.fw_port.tw_data.val().get_bits::<32>(448)) << 88);
        }
        // TPT (TableId 3): the 32-octet entry; page list (TableId 4): a u64.
        if self.fw_port.tw_valid.val() & (self.fw_port.tw_table.val() == 3) {
            self.tpt.tpt_wr_en.next = true;
            self.tpt.tpt_wr_index.next = self.fw_port.tw_index.val();
            self.tpt.tpt_wr_data.next = self.fw_port.tw_data.val().get_bits::<256>(0);
        }
        if self.fw_port.tw_valid.val() & (self.fw_port.tw_table.val() == 4) {
            self.tpt.pbl_wr_en.next = true;
            self.tpt.pbl_wr_index.next = self.fw_port.tw_index.val();
            self.tpt.pbl_wr_data.next = self.fw_port.tw_data.val().get_bits::<64>(0);
        }
        // CQ (TableId 2): no CQ table in the RTL yet; kept in the port's shadow.
        if self.dp_rst.val() {
            self.fwc_up_hit.d.next = false;
            self.fwc_rw_hit.d.next = false;
        }
        if self.dp_rst.val() {
            self.sq_state.d.next = 0.into();
            self.sq_adm.d.next = false;
            self.sq_refuse.d.next = false;
            self.rw_pend.d.next = false;
            self.cnt_no_slot.d.next = 0.into();
        }

        self.cnt_rx_ok.next = self.rx_fifo.cnt_ok.val();
        self.cnt_rx_bad_fcs.next = self.rx_fifo.cnt_bad_fcs.val();
        self.cnt_rx_overflow.next = self.rx_fifo.cnt_overflow.val();
        self.rx_fifo_hwm.next = bit_cast::<16, RXNP1>(self.rx_fifo.hwm.val());
        self.cnt_rx_oversize.next = self.rx_fifo.cnt_oversize.val();
        self.cnt_rx_bad_len.next = self.rx_parse.cnt_bad_len.val();
        self.cnt_rx_bad_ip_csum.next = self.rx_parse.cnt_bad_ip_csum.val();
        self.cnt_rx_bad_tcp_csum.next = self.rx_parse.cnt_bad_tcp_csum.val();
        self.cnt_rx_fast.next = self.rx_split.cnt_fast.val();
        self.cnt_rx_exc.next = self.exc_queue.cnt_queued.val();
        self.cnt_rx_exc_full.next = self.exc_queue.cnt_full.val();

        // ---- TX datapath ------------------------------------------------
        self.doorbell.reset.next = self.dp_rst.val();
        self.tx_sched.reset.next = self.dp_rst.val();
        self.wqe_fetch.reset.next = self.dp_rst.val();
        self.tx_seg.reset.next = self.dp_rst.val();
        self.tx_framer.reset.next = self.dp_rst.val();
        self.rd_arb.reset.next = self.dp_rst.val();
        self.inl_rd.reset.next = self.dp_rst.val();
        self.tx_qpconn.read_clock.next = self.clock.val();
        self.tx_qpconn.write_clock.next = self.clock.val();
        self.tx_cfg.read_clock.next = self.clock.val();
        self.tx_cfg.write_clock.next = self.clock.val();
        self.tx_ctx.read_clock.next = self.clock.val();
        self.tx_ctx.write_clock.next = self.clock.val();
        self.tx_ack.read_clock.next = self.clock.val();
        self.tx_ack.write_clock.next = self.clock.val();

        // Doorbell: the write to QP page n's QP_SQ_PRODUCER register, i.e.
        // QP_DOORBELL_BASE (0x1_0000) + n * DOORBELL_PAGE_SIZE (0x1000) + 0.
        self.doorbell.csr_valid.next = self.db_wr_valid.val() | self.host_regs.db_qp_valid.val();
        self.doorbell.csr_write.next = true;
        self.doorbell.csr_addr.next = (bit_cast::<24, 10>(self.db_wr_qpn.val()) << 12) + 0x1_0000;
        self.doorbell.csr_wdata.next = self.db_wr_value.val();
        // The host's doorbell page writes through BAR0 (`host_regs`): page
        // n, offset `db_qp_off` (Doorbell keeps QP_SQ_PRODUCER, passes
        // QP_RQ_PRODUCER on as `rq_*`, counts any other offset in
        // cnt_db_bad). They win over the db_wr_* pins in the same clock (the
        // pins' write is then lost: the pins are for tests only).
        if self.host_regs.db_qp_valid.val() {
            self.doorbell.csr_addr.next = (bit_cast::<24, 10>(self.host_regs.db_qp_num.val())
                << 12)
                + 0x1_0000
                + bit_cast::<24, 12>(self.host_regs.db_qp_off.val());
            self.doorbell.csr_wdata.next = self.host_regs.db_qp_value.val();
        }
        self.doorbell.take_valid.next = self.wqe_fetch.take_valid.val();
        self.doorbell.take_qp.next = self.wqe_fetch.take_qp.val();
        self.wqe_fetch.take_prod.next = self.doorbell.take_prod.val();
        self.doorbell.rearm_valid.next = self.wqe_fetch.rearm_valid.val();
        self.doorbell.rearm_qp.next = self.wqe_fetch.rearm_qp.val();

        // Scheduler → WQE fetch. Priority work (ACKs) is merged at the MAC
        // (below), so the scheduler's priority input is unused here.
        self.tx_sched.pending.next = self.doorbell.pending.val();
        self.tx_sched.blocked.next = self.wqe_fetch.busy.val();
        self.tx_sched.prio_valid.next = false;
        self.wqe_fetch.grant_valid.next = self.tx_sched.grant_valid.val();
        self.wqe_fetch.grant_qp.next = self.tx_sched.grant_qp.val();
        self.tx_sched.grant_ready.next = self.wqe_fetch.grant_ready.val();
        // Parking (docs/rtl.md "Parked QPs"): TxSeg hands a window- or
        // ORD-stalled WQE back to WqeFetch; TxSched holds the QP until a
        // window update of its connection (the tx_wend write: ACK or
        // context) or an ORD decrement of the QP (rd_track).
        self.wqe_fetch.park_valid.next = self.tx_seg.park_valid.val();
        self.wqe_fetch.park_qp.next = self.tx_seg.park_qp.val();
        self.wqe_fetch.park_idx.next = self.tx_seg.park_idx.val();
        // Doorbell page → the WQE push buffer (wqe_fetch, "Pushed WQEs").
        self.wqe_fetch.push_valid.next = self.doorbell.push_valid.val();
        self.wqe_fetch.push_qp.next = self.doorbell.wr_qp.val();
        self.wqe_fetch.push_dw.next = self.doorbell.push_dw.val();
        self.wqe_fetch.push_data.next = self.doorbell.wr_value.val();
        self.wqe_fetch.sq_valid.next = self.doorbell.sq_valid.val();
        self.wqe_fetch.sq_qp.next = self.doorbell.wr_qp.val();
        self.wqe_fetch.sq_prod.next = self.doorbell.wr_value.val();
        self.tx_seg.park_ready.next = self.wqe_fetch.park_ready.val();
        self.tx_sched.park_valid.next = self.tx_seg.park_valid.val();
        self.tx_sched.park_fire.next =
            self.tx_seg.park_valid.val() & self.wqe_fetch.park_ready.val();
        self.tx_sched.park_qp.next = self.tx_seg.park_qp.val();
        self.tx_pkconn.read_clock.next = self.clock.val();
        self.tx_pkconn.write_clock.next = self.clock.val();
        self.tx_pkconn.write_enable.next = self.wqe_fetch.cfg_valid.val();
        self.tx_pkconn.write_address.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.tx_pkconn.write_data.next = self.ew_qp_conn.val().get_bits::<8>(0);
        self.tx_pkconn.read_address.next = self.wqe_fetch.wqe_qp.val();
        self.tx_sched.park_conn.next = self.tx_pkconn.read_data.val();
        self.tx_sched.wake_conn_valid.next = self.tx_wend.write_enable.val();
        self.tx_sched.wake_conn.next = self.tx_wend.write_address.val();
        self.tx_sched.wake_qp_valid.next = self.rd_track.dec_valid.val();
        self.tx_sched.wake_qp.next = self.rd_track.dec_qp.val();
        // Park only when another QP waits (docs/rtl.md, "Parked QPs").
        self.tx_sched.cur_qp.next = self.wqe_fetch.wqe_qp.val();
        self.tx_sched.fifo_others.next = self.wqe_fetch.others.val();
        self.tx_seg.contend.next = self.tx_sched.contend.val();
        self.cnt_tx_park.next = self.tx_sched.cnt_park.val();
        self.cnt_tx_park_retry.next = self.tx_sched.cnt_park_retry.val();

        // QP write (TX part): ring configuration now, TxSeg's stream state
        // one clock later with the connection's fields from tx_cfg.
        // Defined answer for a QP >= 64, a connection index beyond the
        // table (or NO_CONN) or sq_log2 > 31: the TX side is not configured.
        self.wqe_fetch.cfg_valid.next = self.ew_qp_valid.val()
            & !self.ew_qp_qpn.val().get_bits::<26>(6).any()
            & !self.ew_qp_conn.val().get_bits::<24>(8).any()
            & !self.ew_qp_sq_log2.val().get_bits::<3>(5).any();
        self.wqe_fetch.cfg_qp.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.wqe_fetch.cfg_base.next = self.ew_qp_sq_ring.val();
        self.wqe_fetch.cfg_log2.next = self.ew_qp_sq_log2.val().get_bits::<5>(0);
        self.wqe_fetch.cfg_ci.next = 0.into();
        self.wqe_fetch.cfg_ci_load.next = false;
        // Send side on/off from every QP write (qpn < 64): on in RTS (1) and
        // Closing (2) (abi::mailbox::QpState) with a configured ring.
        self.wqe_fetch.en_valid.next =
            self.ew_qp_valid.val() & !self.ew_qp_qpn.val().get_bits::<26>(6).any();
        self.wqe_fetch.en_qp.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.wqe_fetch.en_on.next = self.wqe_fetch.cfg_valid.val()
            & ((self.ew_qp_state.val() == 1) | (self.ew_qp_state.val() == 2));
        self.tx_seg.stop.next = self.wqe_fetch.wqe_off.val();
        // A refused send SGE turns its QP's send side off when no QP context
        // write sets one this clock (docs/rtl.md, "Send-side SGE checks and
        // translation").
        self.tx_en_ew.next = self.wqe_fetch.en_valid.val();
        self.tx_seg.off_ready.next = !self.tx_en_ew.val() & !self.sqe_v.q.val();
        if self.tx_seg.off_valid.val() & !self.tx_en_ew.val() & !self.sqe_v.q.val() {
            self.sqe_v.d.next = true;
            self.sqe_qp.d.next = self.tx_seg.off_qp.val();
            self.wqe_fetch.en_valid.next = true;
            self.wqe_fetch.en_qp.next = self.tx_seg.off_qp.val();
            self.wqe_fetch.en_on.next = false;
        }
        // The QP's PD for the send SGE checks (as read_resp's).
        self.tx_seg.pd_wr_valid.next =
            self.ew_qp_valid.val() & !self.ew_qp_qpn.val().get_bits::<26>(6).any();
        self.tx_seg.pd_wr_qp.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.tx_seg.pd_wr_pd.next = self.ew_qp_pd.val();
        // ORD hold: an RDMA Read WQE waits while its QP has ORD Read
        // Requests outstanding (RFC 5040 §6.2, RFC 6581).
        self.rd_track.hq_qp.next = self.wqe_fetch.wqe_qp.val();
        self.tx_seg.rd_full.next = self.rd_track.hq_full.val();
        self.tx_seg.rd_any.next = self.rd_track.hq_any.val();
        self.wqe_fetch.wqe_hold.next = !self.tx_seg.idle.val();
        self.tx_qpconn.write_enable.next = self.wqe_fetch.cfg_valid.val();
        self.tx_qpconn.write_address.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.tx_qpconn.write_data.next = self.ew_qp_conn.val().get_bits::<8>(0);
        self.tx_cfg.read_address.next = self.ew_qp_conn.val().get_bits::<8>(0);
        self.tq_v.d.next = self.wqe_fetch.cfg_valid.val();
        self.tq_qp.d.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.tq_msn_send.d.next = self.ew_qp_tx_send_msn.val();
        self.tq_msn_rreq.d.next = self.ew_qp_tx_read_msn.val();
        self.tx_seg.cfg_valid.next = self.tq_v.q.val();
        self.tx_seg.cfg_qp.next = self.tq_qp.q.val();
        self.tx_seg.cfg_seq.next = self.tx_cfg.read_data.val().get_bits::<32>(0);
        self.tx_seg.cfg_seq_start.next = self.tx_cfg.read_data.val().get_bits::<32>(32);
        self.tx_seg.cfg_mulpdu.next = self.tx_cfg.read_data.val().get_bits::<16>(64);
        self.tx_seg.cfg_mk_en.next = self.tx_cfg.read_data.val().get_bit(80);
        self.tx_seg.cfg_crc_en.next = self.tx_cfg.read_data.val().get_bit(81);
        self.tx_seg.cfg_msn_send.next = self.tq_msn_send.q.val();
        self.tx_seg.cfg_msn_rreq.next = self.tq_msn_rreq.q.val();
        // The QP's MSNs, for a later connection write entering RDMA mode.
        self.tx_msn.read_clock.next = self.clock.val();
        self.tx_msn.write_clock.next = self.clock.val();
        self.tx_msn.write_enable.next = self.wqe_fetch.cfg_valid.val();
        self.tx_msn.write_address.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.tx_msn.write_data.next = bit_cast::<64, 32>(self.ew_qp_tx_send_msn.val())
            | (bit_cast::<64, 32>(self.ew_qp_tx_read_msn.val()) << 32);
        // Connection write entering RDMA mode (firmware), QP = octets 60..64
        // of the ConnContext when < 64: reload that QP's stream state
        // (SeqStart = tx_marker_ref, RFC 5044 §4.3) one clock later, unless
        // a QP write's load is in that clock (it wins; it read tx_cfg).
        self.tc_go.next = self.fwc_conn.val()
            & self.fwc_mpa.val()
            & !self.fw_port.tw_data.val().get_bits::<26>(486).any();
        self.tx_msn.read_address.next = self.fw_port.tw_data.val().get_bits::<6>(480);
        self.tc_v.d.next = self.tc_go.val();
        self.tc_qp.d.next = self.fw_port.tw_data.val().get_bits::<6>(480);
        self.tc_seq.d.next = self.ew_ct_snd_nxt.val();
        self.tc_ref.d.next = self.ew_ct_tx_marker_ref.val();
        self.tc_mulpdu.d.next = self.ew_ct_mulpdu.val();
        self.tc_mk.d.next = self.ew_ct_mpa.val().get_bit(2);
        self.tc_crc.d.next = self.ew_ct_mpa.val().get_bit(0);
        if self.tc_v.q.val() & !self.tq_v.q.val() {
            self.tx_seg.cfg_valid.next = true;
            self.tx_seg.cfg_qp.next = self.tc_qp.q.val();
            self.tx_seg.cfg_seq.next = self.tc_seq.q.val();
            self.tx_seg.cfg_seq_start.next = self.tc_ref.q.val();
            self.tx_seg.cfg_mulpdu.next = self.tc_mulpdu.q.val();
            self.tx_seg.cfg_mk_en.next = self.tc_mk.q.val();
            self.tx_seg.cfg_crc_en.next = self.tc_crc.q.val();
            self.tx_seg.cfg_msn_send.next = self.tx_msn.read_data.val().get_bits::<32>(0);
            self.tx_seg.cfg_msn_rreq.next = self.tx_msn.read_data.val().get_bits::<32>(32);
        }

        // Connection write (TX part). mpa_flags bit 0 MPA_CRC_TX, bit 2
        // MPA_MARKERS_TX. The window field is rcv_wnd >> rcv_wscale (at most
        // 14, RFC 7323 §2.3), clamped to 16 bits.
        self.tx_cfg.write_enable.next = self.ew_ct_valid.val();
        self.tx_cfg.write_address.next = self.ew_ct_idx.val();
        self.tx_cfg.write_data.next = bit_cast::<82, 32>(self.ew_ct_snd_nxt.val())
            | (bit_cast::<82, 32>(self.ew_ct_tx_marker_ref.val()) << 32)
            | (bit_cast::<82, 16>(self.ew_ct_mulpdu.val()) << 64)
            | (bit_cast::<82, 1>(self.ew_ct_mpa.val().get_bits::<1>(2)) << 80)
            | (bit_cast::<82, 1>(self.ew_ct_mpa.val().get_bits::<1>(0)) << 81);
        self.tx_wsc.next = self.ew_ct_rcv_wscale.val().get_bits::<4>(0);
        if self.ew_ct_rcv_wscale.val() > 14 {
            self.tx_wsc.next = 14.into();
        }
        self.tx_wnd.next = self.ew_ct_rcv_wnd.val() >> self.tx_wsc.val();
        self.tx_win16.next = self.tx_wnd.val().get_bits::<16>(0);
        if self.tx_wnd.val().get_bits::<16>(16).any() {
            self.tx_win16.next = 0xFFFF.into();
        }
        self.tx_ctx.write_enable.next = self.ew_ct_valid.val();
        self.tx_ctx.write_address.next = self.ew_ct_idx.val();
        // Bit 208: the device owns the stream (ConnMode::Rdma = 2).
        self.tx_ctx.write_data.next = bit_cast::<209, 48>(self.ew_ct_peer_mac.val())
            | (bit_cast::<209, 48>(self.ew_ct_local_mac.val()) << 48)
            | (bit_cast::<209, 32>(self.ew_ct_local_ip.val()) << 96)
            | (bit_cast::<209, 32>(self.ew_ct_peer_ip.val()) << 128)
            | (bit_cast::<209, 16>(self.ew_ct_local_port.val()) << 160)
            | (bit_cast::<209, 16>(self.ew_ct_peer_port.val()) << 176)
            | (bit_cast::<209, 16>(self.tx_win16.val()) << 192)
            | (bit_cast::<209, 1>((self.ew_ct_mode.val() == 2).into()) << 208);
        // rcv_nxt to acknowledge: the firmware's write when it sets one
        // (not when it keeps the device's, which may count a segment not
        // yet taken), else the ACK request's (a taken segment's end).
        self.tx_ack.write_enable.next = self.ak_valid.val();
        self.tx_ack.write_address.next = self.ak_conn.val();
        self.tx_ack.write_data.next = self.ak_ack.val();
        if self.ew_ct_valid.val() & !(self.fwc_conn.val() & self.fwc_keep.val()) {
            self.tx_ack.write_enable.next = true;
            self.tx_ack.write_address.next = self.ew_ct_idx.val();
            self.tx_ack.write_data.next = self.ew_ct_rcv_nxt.val();
        }
        // Its copy for the firmware port's reads (`rcv_nxt` of a
        // connection read is the committed one).
        self.rcv_ack_ram.read_clock.next = self.clock.val();
        self.rcv_ack_ram.write_clock.next = self.clock.val();
        self.rcv_ack_ram.write_enable.next = self.tx_ack.write_enable.val();
        self.rcv_ack_ram.write_address.next = self.tx_ack.write_address.val();
        self.rcv_ack_ram.write_data.next = self.tx_ack.write_data.val();
        self.rcv_ack_ram.read_address.next = self.fw_port.ct_rd_idx.val();

        // WQE fetch → TxSeg.
        self.tx_seg.wqe_valid.next = self.wqe_fetch.wqe_valid.val();
        self.wqe_fetch.wqe_ready.next = self.tx_seg.wqe_ready.val();
        self.tx_seg.wqe_qp.next = self.wqe_fetch.wqe_qp.val();
        self.tx_seg.wqe_idx.next = self.wqe_fetch.wqe_idx.val();
        self.tx_seg.wqe_wr_id.next = self.wqe_fetch.wqe_wr_id.val();
        self.tx_seg.wqe_opcode.next = self.wqe_fetch.wqe_opcode.val();
        self.tx_seg.wqe_flags.next = self.wqe_fetch.wqe_flags.val();
        self.tx_seg.wqe_num_sge.next = self.wqe_fetch.wqe_num_sge.val();
        self.tx_seg.wqe_imm.next = self.wqe_fetch.wqe_imm.val();
        self.tx_seg.wqe_roff.next = self.wqe_fetch.wqe_roff.val();
        self.tx_seg.wqe_rstag.next = self.wqe_fetch.wqe_rstag.val();
        self.tx_seg.wqe_len.next = self.wqe_fetch.wqe_len.val();
        self.wqe_fetch.sge_sel.next = self.tx_seg.sge_sel.val();
        self.tx_seg.wqe_sge_addr.next = self.wqe_fetch.wqe_sge_addr.val();
        self.tx_seg.wqe_sge_len.next = self.wqe_fetch.wqe_sge_len.val();
        self.tx_seg.wqe_sge_lkey.next = self.wqe_fetch.wqe_sge_lkey.val();
        self.tx_seg.wqe_bad.next = self.wqe_fetch.wqe_bad.val();
        self.tx_seg.wqe_inl.next = self.wqe_fetch.wqe_inl.val();
        // Read responder hook: read_resp takes the QP's TX stream from
        // TxSeg between its messages (xs_gnt) and hands snd_nxt back.
        self.tx_seg.xs_req.next = self.read_resp.xs_req.val();
        self.tx_seg.xs_qp.next = self.read_resp.xs_qp.val();
        self.tx_seg.xs_done.next = self.read_resp.xs_done.val();
        self.tx_seg.xs_seq_new.next = self.read_resp.xs_seq_new.val();
        self.read_resp.xs_gnt.next = self.tx_seg.xs_gnt.val();
        self.read_resp.xs_seq.next = self.tx_seg.xs_seq.val();
        self.read_resp.xs_seq_start.next = self.tx_seg.xs_seq_start.val();
        self.read_resp.xs_mulpdu.next = self.tx_seg.xs_mulpdu.val();
        self.read_resp.xs_mk_en.next = self.tx_seg.xs_mk_en.val();
        self.read_resp.xs_crc_en.next = self.tx_seg.xs_crc_en.val();
        // The TX log's replay holds both sources at a segment boundary and
        // has the framer's input once both are quiet (rt_tx; it stays so
        // while held: nothing new starts).
        self.tx_seg.hold.next = self.tx_log.xs_req.val();
        self.read_resp.hold.next = self.tx_log.xs_req.val();
        self.rt_tx.next =
            self.tx_log.xs_req.val() & self.tx_seg.quiet.val() & self.read_resp.quiet.val();
        self.tx_log.xs_gnt.next = self.rt_tx.val();
        self.rr_tx.next = self.tx_seg.xs_gnt.val() & !self.rt_tx.val();

        // DMA read arbiter: client 0 WQE fetch, 1 receive-queue fetch (not
        // yet built: idle), 2 payload.
        self.rd_arb.c0_req_valid.next = self.wqe_fetch.dma_rd_req_valid.val();
        self.wqe_fetch.dma_rd_req_ready.next = self.rd_arb.c0_req_ready.val();
        self.rd_arb.c0_req_addr.next = self.wqe_fetch.dma_rd_req_addr.val();
        self.rd_arb.c0_req_len.next = self.wqe_fetch.dma_rd_req_len.val();
        self.rd_arb.c0_req_tag.next = self.wqe_fetch.dma_rd_req_tag.val();
        self.wqe_fetch.dma_rd_cpl_valid.next = self.rd_arb.c0_cpl_valid.val();
        self.rd_arb.c0_cpl_ready.next = self.wqe_fetch.dma_rd_cpl_ready.val();
        self.wqe_fetch.dma_rd_cpl_data.next = self.dma_rd_cpl_data.val();
        self.wqe_fetch.dma_rd_cpl_last.next = self.dma_rd_cpl_last.val();
        self.wqe_fetch.dma_rd_cpl_tag.next = self.dma_rd_cpl_tag.val();
        // client 1: rx_send's receive WQE fetch (tag 0x40)
        self.rd_arb.c1_req_valid.next = self.rx_send.dma_rd_req_valid.val();
        self.rx_send.dma_rd_req_ready.next = self.rd_arb.c1_req_ready.val();
        self.rd_arb.c1_req_addr.next = self.rx_send.dma_rd_req_addr.val();
        self.rd_arb.c1_req_len.next = self.rx_send.dma_rd_req_len.val();
        self.rd_arb.c1_req_tag.next = self.rx_send.dma_rd_req_tag.val();
        self.rx_send.dma_rd_cpl_valid.next = self.rd_arb.c1_cpl_valid.val();
        self.rd_arb.c1_cpl_ready.next = self.rx_send.dma_rd_cpl_ready.val();
        self.rx_send.dma_rd_cpl_data.next = self.dma_rd_cpl_data.val();
        self.rx_send.dma_rd_cpl_keep.next = self.dma_rd_cpl_keep.val();
        self.rx_send.dma_rd_cpl_last.next = self.dma_rd_cpl_last.val();
        self.rx_send.dma_rd_cpl_tag.next = self.dma_rd_cpl_tag.val();
        // (through `inl_rd`, which answers the reads of inline messages
        // from the WQE that `wqe_fetch` holds)
        self.inl_rd.up_req_valid.next = self.tx_seg.dma_rd_req_valid.val();
        self.inl_rd.up_req_inl.next = self.tx_seg.dma_rd_req_inl.val();
        self.inl_rd.up_req_lo.next = self.tx_seg.dma_rd_req_addr.val().get_bits::<7>(0);
        self.inl_rd.up_req_len.next = self.tx_seg.dma_rd_req_len.val();
        self.inl_rd.up_req_tag.next = self.tx_seg.dma_rd_req_tag.val();
        self.tx_seg.dma_rd_req_ready.next = self.inl_rd.up_req_ready.val();
        self.inl_rd.inl_lo.next = self.wqe_fetch.wqe_inl_lo.val();
        self.inl_rd.inl_data.next = self.wqe_fetch.wqe_inl_data.val();
        self.rd_arb.c2_req_valid.next = self.inl_rd.dn_req_valid.val();
        self.inl_rd.dn_req_ready.next = self.rd_arb.c2_req_ready.val();
        self.rd_arb.c2_req_addr.next = self.tx_seg.dma_rd_req_addr.val();
        self.rd_arb.c2_req_len.next = self.tx_seg.dma_rd_req_len.val();
        self.rd_arb.c2_req_tag.next = self.tx_seg.dma_rd_req_tag.val();
        self.inl_rd.dn_cpl_valid.next = self.rd_arb.c2_cpl_valid.val();
        self.inl_rd.dn_cpl_data.next = self.dma_rd_cpl_data.val();
        self.inl_rd.dn_cpl_keep.next = self.dma_rd_cpl_keep.val();
        self.inl_rd.dn_cpl_last.next = self.dma_rd_cpl_last.val();
        self.inl_rd.dn_cpl_tag.next = self.dma_rd_cpl_tag.val();
        self.rd_arb.c2_cpl_ready.next = self.tx_seg.dma_rd_cpl_ready.val();
        self.tx_seg.dma_rd_cpl_valid.next = self.inl_rd.up_cpl_valid.val();
        self.tx_seg.dma_rd_cpl_data.next = self.inl_rd.up_cpl_data.val();
        self.tx_seg.dma_rd_cpl_keep.next = self.inl_rd.up_cpl_keep.val();
        self.tx_seg.dma_rd_cpl_last.next = self.inl_rd.up_cpl_last.val();
        self.tx_seg.dma_rd_cpl_tag.next = self.inl_rd.up_cpl_tag.val();
        // client 3: read_resp's Read Response payload (tags 0xC0..)
        // shared with the TX log's replay while it has the framer's input
        // (read_resp is quiet then: no read in flight)
        self.rd_arb.c3_req_valid.next = self.read_resp.dma_rd_req_valid.val();
        self.read_resp.dma_rd_req_ready.next = self.rd_arb.c3_req_ready.val() & !self.rt_tx.val();
        self.rd_arb.c3_req_addr.next = self.read_resp.dma_rd_req_addr.val();
        self.rd_arb.c3_req_len.next = self.read_resp.dma_rd_req_len.val();
        self.rd_arb.c3_req_tag.next = self.read_resp.dma_rd_req_tag.val();
        self.read_resp.dma_rd_cpl_valid.next = self.rd_arb.c3_cpl_valid.val() & !self.rt_tx.val();
        self.rd_arb.c3_cpl_ready.next = self.read_resp.dma_rd_cpl_ready.val();
        self.tx_log.dma_rd_req_ready.next = self.rd_arb.c3_req_ready.val() & self.rt_tx.val();
        self.tx_log.dma_rd_cpl_valid.next = self.rd_arb.c3_cpl_valid.val() & self.rt_tx.val();
        self.tx_log.dma_rd_cpl_data.next = self.dma_rd_cpl_data.val();
        self.tx_log.dma_rd_cpl_keep.next = self.dma_rd_cpl_keep.val();
        self.tx_log.dma_rd_cpl_last.next = self.dma_rd_cpl_last.val();
        if self.rt_tx.val() {
            self.rd_arb.c3_req_valid.next = self.tx_log.dma_rd_req_valid.val();
            self.rd_arb.c3_req_addr.next = self.tx_log.dma_rd_req_addr.val();
            self.rd_arb.c3_req_len.next = self.tx_log.dma_rd_req_len.val();
            self.rd_arb.c3_req_tag.next = self.tx_log.dma_rd_req_tag.val();
            self.rd_arb.c3_cpl_ready.next = self.tx_log.dma_rd_cpl_ready.val();
        }
        self.read_resp.dma_rd_cpl_data.next = self.dma_rd_cpl_data.val();
        self.read_resp.dma_rd_cpl_keep.next = self.dma_rd_cpl_keep.val();
        self.read_resp.dma_rd_cpl_last.next = self.dma_rd_cpl_last.val();
        self.read_resp.dma_rd_cpl_tag.next = self.dma_rd_cpl_tag.val();
        self.dma_rd_req_valid.next =
            self.rd_arb.dma_rd_req_valid.val() & !self.dev_rst.rd_hold.val();
        self.rd_arb.dma_rd_req_ready.next =
            self.dma_rd_req_ready.val() & !self.dev_rst.rd_hold.val();
        self.dma_rd_req_addr.next = self.rd_arb.dma_rd_req_addr.val();
        self.dma_rd_req_len.next = self.rd_arb.dma_rd_req_len.val();
        self.dma_rd_req_tag.next = self.rd_arb.dma_rd_req_tag.val();
        // during the reset, completions still due are taken and dropped
        self.rd_arb.dma_rd_cpl_valid.next =
            self.dma_rd_cpl_valid.val() & !self.dev_rst.cpl_sink.val();
        self.dma_rd_cpl_ready.next =
            self.rd_arb.dma_rd_cpl_ready.val() | self.dev_rst.cpl_sink.val();
        self.rd_arb.dma_rd_cpl_tag.next = self.dma_rd_cpl_tag.val();

        // Descriptor lookup: QP → connection (tx_qpconn) → its addresses,
        // ports, window and ACK number (tx_ctx, tx_ack); registered reads,
        // so the descriptor goes to the framer 2 clocks after it appears.
        // (TxSeg's descriptors, or read_resp's while it has the stream)
        self.td_valid.next = self.tx_seg.desc_valid.val();
        self.td_qp.next = self.tx_seg.desc_qp.val();
        if self.rr_tx.val() {
            self.td_valid.next = self.read_resp.desc_valid.val();
            self.td_qp.next = self.read_resp.desc_qp.val();
        }
        if self.rt_tx.val() {
            self.td_valid.next = self.tx_log.desc_valid.val();
            self.td_qp.next = self.tx_log.desc_qp.val();
        }
        self.tx_qpconn.read_address.next = self.td_qp.val();
        self.tx_ctx.read_address.next = self.tx_qpconn.read_data.val();
        self.tx_ack.read_address.next = self.tx_qpconn.read_data.val();
        // the current WQE's connection's window end (TxSeg's desc_qp is the
        // WQE's QP, so this read follows the same lookup)
        self.tx_wend.read_address.next = self.tx_qpconn.read_data.val();
        self.tx_seg.win_en.next = self.tx_wnd_en.val();
        self.tx_seg.win_end.next = self.tx_wend.read_data.val();
        // read_resp's segments wait for the same window (td_qp is its QP
        // while it has the stream, so tx_wend follows its connection)
        self.read_resp.win_en.next = self.tx_wnd_en.val();
        self.read_resp.win_end.next = self.tx_wend.read_data.val();
        self.cnt_tx_wnd_wait.next = self.tx_seg.cnt_wnd_wait.val();
        self.cnt_tx_mulpdu_bad.next = self.tx_seg.cnt_mulpdu_bad.val();
        // a source's descriptor also needs room in the TX log (it waits)
        // (a write waiting in `cw_*` takes the FIFO's last free entry; the
        // framer's record FIFO holds 8 frames, so the 32 entries are not
        // reached in practice, but an entry lost here would shift every
        // later SND.NXT update onto the wrong frame)
        self.cf_room.next =
            !self.tx_cfifo.full.val() & !(self.cw_v.q.val() & (self.tx_cfifo.count.val() == 31));
        self.tx_desc_ok.next = self.td_valid.val()
            & (self.tx_dw.q.val() == 2)
            & self.cf_room.val()
            & (self.tx_log.room.val() | self.rt_tx.val());
        if self.td_valid.val() & (self.tx_dw.q.val() != 2) {
            self.tx_dw.d.next = self.tx_dw.q.val() + 1;
        }
        if self.tx_desc_ok.val() & self.tx_framer.desc_ready.val() {
            self.tx_dw.d.next = 0.into();
        }
        // a descriptor withdrawn (a source held by the replay before its
        // descriptor was taken): the lookup starts again with the next one
        if !self.td_valid.val() {
            self.tx_dw.d.next = 0.into();
        }
        // The ACK builder reads the same tables (priority): the lookup
        // starts again after its read.
        if self.tx_ackgen.rd_valid.val() {
            self.tx_ctx.read_address.next = self.tx_ackgen.rd_conn.val();
            self.tx_ack.read_address.next = self.tx_ackgen.rd_conn.val();
            self.tx_dw.d.next = 0.into();
        }
        self.tx_take.next = self.tx_desc_ok.val() & self.tx_framer.desc_ready.val();
        self.cw_v.d.next = self.tx_take.val();
        self.cw_d.d.next = (bit_cast::<9, 1>(self.rt_tx.val().into()) << 8)
            | bit_cast::<9, 8>(self.tx_qpconn.read_data.val());
        self.tx_cfifo.write.next = self.cw_v.q.val();
        self.tx_cfifo.data_in.next = self.cw_d.q.val();
        self.tx_framer.desc_valid.next = self.tx_desc_ok.val();
        self.tx_seg.desc_ready.next = self.tx_desc_ok.val()
            & self.tx_framer.desc_ready.val()
            & !self.rr_tx.val()
            & !self.rt_tx.val();
        self.tx_log.desc_ready.next =
            self.tx_desc_ok.val() & self.tx_framer.desc_ready.val() & self.rt_tx.val();
        self.read_resp.desc_ready.next =
            self.tx_desc_ok.val() & self.tx_framer.desc_ready.val() & self.rr_tx.val();
        self.tx_framer.desc_dst_mac.next = self.tx_ctx.read_data.val().get_bits::<48>(0);
        self.tx_framer.desc_src_mac.next = self.tx_ctx.read_data.val().get_bits::<48>(48);
        self.tx_framer.desc_src_ip.next = self.tx_ctx.read_data.val().get_bits::<32>(96);
        self.tx_framer.desc_dst_ip.next = self.tx_ctx.read_data.val().get_bits::<32>(128);
        self.tx_framer.desc_src_port.next = self.tx_ctx.read_data.val().get_bits::<16>(160);
        self.tx_framer.desc_dst_port.next = self.tx_ctx.read_data.val().get_bits::<16>(176);
        self.tx_framer.desc_window.next = self.tx_ctx.read_data.val().get_bits::<16>(192);
        self.tx_framer.desc_ack.next = self.tx_ack.read_data.val();
        self.fd_seq.d.next = self.tx_seg.desc_seq.val();
        self.fd_crc_en.d.next = self.tx_seg.desc_crc_en.val();
        self.fd_mk_en.d.next = self.tx_seg.desc_mk_en.val();
        self.fd_seq_start.d.next = self.tx_seg.desc_seq_start.val();
        self.fd_opcode.d.next = self.tx_seg.desc_opcode.val();
        self.fd_last.d.next = self.tx_seg.desc_last.val();
        self.fd_stag.d.next = self.tx_seg.desc_stag.val();
        self.fd_to.d.next = self.tx_seg.desc_to.val();
        self.fd_qn.d.next = self.tx_seg.desc_qn.val();
        self.fd_msn.d.next = self.tx_seg.desc_msn.val();
        self.fd_mo.d.next = self.tx_seg.desc_mo.val();
        self.fd_pay_len.d.next = self.tx_seg.desc_pay_len.val();
        self.pm_data.next = self.tx_seg.pay_data.val();
        self.pm_keep.next = self.tx_seg.pay_keep.val();
        self.pm_last.next = self.tx_seg.pay_last.val();
        self.pm_valid.next = self.tx_seg.pay_valid.val();
        self.tx_seg.pay_ready.next =
            self.pay_sk.in_ready.val() & !self.rr_tx.val() & !self.rt_tx.val();
        self.tx_log.pay_ready.next = self.pay_sk.in_ready.val() & self.rt_tx.val();
        self.read_resp.pay_ready.next = self.pay_sk.in_ready.val() & self.rr_tx.val();
        // read_resp's Read Responses (tagged, RFC 5040 §4.5) while it has
        // the stream: TxSeg then has no payload outstanding and sends no
        // descriptor, so the framer sees each source's descriptors and
        // payloads in order
        if self.rr_tx.val() {
            self.fd_seq.d.next = self.read_resp.desc_seq.val();
            self.fd_crc_en.d.next = self.read_resp.desc_crc_en.val();
            self.fd_mk_en.d.next = self.read_resp.desc_mk_en.val();
            self.fd_seq_start.d.next = self.read_resp.desc_seq_start.val();
            self.fd_opcode.d.next = self.read_resp.desc_opcode.val();
            self.fd_last.d.next = self.read_resp.desc_last.val();
            self.fd_stag.d.next = self.read_resp.desc_stag.val();
            self.fd_to.d.next = self.read_resp.desc_to.val();
            self.fd_qn.d.next = 0.into();
            self.fd_msn.d.next = 0.into();
            self.fd_mo.d.next = 0.into();
            self.fd_pay_len.d.next = self.read_resp.desc_pay_len.val();
            self.pm_data.next = self.read_resp.pay_data.val();
            self.pm_keep.next = self.read_resp.pay_keep.val();
            self.pm_last.next = self.read_resp.pay_last.val();
            self.pm_valid.next = self.read_resp.pay_valid.val();
        }
        // the TX log's replayed FPDUs while it has the stream (tx_seg and
        // read_resp are held: nothing interleaves)
        if self.rt_tx.val() {
            self.fd_seq.d.next = self.tx_log.desc_seq.val();
            self.fd_crc_en.d.next = self.tx_log.desc_crc_en.val();
            self.fd_mk_en.d.next = self.tx_log.desc_mk_en.val();
            self.fd_seq_start.d.next = self.tx_log.desc_seq_start.val();
            self.fd_opcode.d.next = self.tx_log.desc_opcode.val();
            self.fd_last.d.next = self.tx_log.desc_last.val();
            self.fd_stag.d.next = self.tx_log.desc_stag.val();
            self.fd_to.d.next = self.tx_log.desc_to.val();
            self.fd_qn.d.next = self.tx_log.desc_qn.val();
            self.fd_msn.d.next = self.tx_log.desc_msn.val();
            self.fd_mo.d.next = self.tx_log.desc_mo.val();
            self.fd_pay_len.d.next = self.tx_log.desc_pay_len.val();
            self.pm_data.next = self.tx_log.pay_data.val();
            self.pm_keep.next = self.tx_log.pay_keep.val();
            self.pm_last.next = self.tx_log.pay_last.val();
            self.pm_valid.next = self.tx_log.pay_valid.val();
        }
        self.tx_framer.desc_seq.next = self.fd_seq.q.val();
        self.tx_framer.desc_crc_en.next = self.fd_crc_en.q.val();
        self.tx_framer.desc_mk_en.next = self.fd_mk_en.q.val();
        self.tx_framer.desc_seq_start.next = self.fd_seq_start.q.val();
        self.tx_framer.desc_opcode.next = self.fd_opcode.q.val();
        self.tx_framer.desc_last.next = self.fd_last.q.val();
        self.tx_framer.desc_stag.next = self.fd_stag.q.val();
        self.tx_framer.desc_to.next = self.fd_to.q.val();
        self.tx_framer.desc_qn.next = self.fd_qn.q.val();
        self.tx_framer.desc_msn.next = self.fd_msn.q.val();
        self.tx_framer.desc_mo.next = self.fd_mo.q.val();
        self.tx_framer.desc_pay_len.next = self.fd_pay_len.q.val();
        // The selected source's payload into `pay_sk`, its output to the
        // framer. The skid keeps the beats' order and each source's
        // `pay_done`/`quiet` still means "its last beat was handed over"
        // (now into the skid): the stream changes hands only after that, so
        // the next source's beats queue behind it and the framer sees every
        // payload in its descriptor's order, as before.
        self.pay_sk.clock.next = self.clock.val();
        self.pay_sk.reset.next = self.dp_rst.val();
        self.pay_sk.in_valid.next = self.pm_valid.val();
        self.pay_sk.in_data.next = (bit_cast::<69, 1>(self.pm_last.val().into()) << 68)
            | (bit_cast::<69, 4>(self.pm_keep.val()) << 64)
            | bit_cast::<69, 64>(self.pm_data.val());
        self.tx_framer.pay_data.next = self.pay_sk.out_data.val().get_bits::<64>(0);
        self.tx_framer.pay_keep.next = self.pay_sk.out_data.val().get_bits::<4>(64);
        self.tx_framer.pay_last.next = self.pay_sk.out_data.val().get_bit(68);
        self.tx_framer.pay_valid.next = self.pay_sk.out_valid.val();
        self.pay_sk.out_ready.next = self.tx_framer.pay_ready.val();
        // ---- TX log: every descriptor a source hands to the framer, with
        // its payload source (tx_seg: SGE address + offset or the Read
        // Request octets; read_resp: the translated address)
        self.tx_log.reset.next = self.dp_rst.val();
        // without window enforcement (tests whose peer never ACKs) a full
        // log drops its oldest entry rather than holding TX forever
        self.tx_log.evict.next = !self.tx_wnd_en.val();
        self.tx_log.in_valid.next =
            self.tx_desc_ok.val() & self.tx_framer.desc_ready.val() & !self.rt_tx.val();
        self.tx_log.in_conn.next = self.tx_qpconn.read_data.val();
        self.tx_log.in_qp.next = self.tx_seg.desc_qp.val();
        // The descriptor fields the framer takes in this clock (`fd_*`, the
        // same source selection; the log takes a descriptor exactly when the
        // framer does, never while the replay has the stream).
        self.tx_log.in_seq.next = self.fd_seq.q.val();
        self.tx_log.in_crc_en.next = self.fd_crc_en.q.val();
        self.tx_log.in_mk_en.next = self.fd_mk_en.q.val();
        self.tx_log.in_seq_start.next = self.fd_seq_start.q.val();
        self.tx_log.in_opcode.next = self.fd_opcode.q.val();
        self.tx_log.in_last.next = self.fd_last.q.val();
        self.tx_log.in_stag.next = self.fd_stag.q.val();
        self.tx_log.in_to.next = self.fd_to.q.val();
        self.tx_log.in_qn.next = self.fd_qn.q.val();
        self.tx_log.in_msn.next = self.fd_msn.q.val();
        self.tx_log.in_mo.next = self.fd_mo.q.val();
        self.tx_log.in_pay_len.next = self.fd_pay_len.q.val();
        self.tx_log.in_adv.next = self.tx_seg.desc_adv.val();
        self.tx_log.in_addr.next = self.tx_seg.desc_addr.val();
        self.tx_log.in_rr.next = self.tx_seg.desc_rr.val();
        if self.rr_tx.val() {
            self.tx_log.in_qp.next = self.read_resp.desc_qp.val();
            self.tx_log.in_adv.next = self.read_resp.desc_adv.val();
            self.tx_log.in_addr.next = self.read_resp.desc_addr.val();
        }
        // retire / replay checks: mode and SND.UNA of a connection
        self.conn_table.r2_idx.next = self.tx_log.una_conn.val();
        self.tx_log.una_mode.next = self.conn_table.r2_mode.val();
        self.tx_log.una_snd_una.next = self.conn_table.r2_snd_una.val();
        // RETX_CONN and the RETX_* registers
        // Fast retransmit (RFC 5681 §3.2) asks like the firmware; the
        // firmware's request wins a shared clock (the fast one is counted
        // as skipped: the replay under way covers it, else the timer).
        self.fast_retx.reset.next = self.dp_rst.val();
        self.fast_retx.en.next = self.fast_retx_en.val();
        self.fast_retx.ev_valid.next = self.rx_split.dup_valid.val();
        self.fast_retx.ev_conn.next = self.rx_split.dup_conn.val();
        self.fast_retx.ev_dup.next = self.rx_split.dup_ack.val();
        self.fast_retx.ev_wnd.next = self.rx_split.dup_wnd.val();
        self.fast_retx.busy.next = self.tx_log.busy.val() | self.fw_port.retx_valid.val();
        self.cnt_fretx_dup.next = self.fast_retx.cnt_dup.val();
        self.cnt_fretx_req.next = self.fast_retx.cnt_req.val();
        self.cnt_fretx_skip.next = self.fast_retx.cnt_skip.val();
        self.cnt_fretx_defer.next = self.fast_retx.cnt_defer.val();
        self.tx_log.rq_valid.next = self.fw_port.retx_valid.val() | self.fast_retx.rq_valid.val();
        self.tx_log.rq_conn.next = self.fw_port.retx_conn.val();
        if !self.fw_port.retx_valid.val() {
            self.tx_log.rq_conn.next = self.fast_retx.rq_conn.val();
        }
        self.fw_port.retx_status.next = (bit_cast::<32, 16>(self.tx_log.used.val()) << 16)
            | bit_cast::<32, 1>(self.tx_log.busy.val().into());
        self.fw_port.retx_count.next = self.tx_log.cnt_sent.val();
        self.fw_port.retx_full.next = self.tx_log.cnt_full.val();
        self.fw_port.retx_empty.next = self.tx_log.cnt_empty.val();
        self.fw_port.retx_busy.next = self.tx_log.cnt_busy.val();
        self.fw_port.retx_lost.next = self.tx_log.cnt_lost.val();

        // Send completions.
        // TxSeg's completion records go to SendCpl (the QP's send CQ);
        // tx_cq_* observe them: tx_cq_valid pulses when one is taken (the
        // tx_cq_pop input is not used)
        self.tx_cq_valid.next = self.tx_seg.cq_valid.val() & self.send_cpl.tx_ready.val();
        self.tx_seg.cq_ready.next = self.send_cpl.tx_ready.val();
        self.tx_cq_qp.next = self.tx_seg.cq_qp.val();
        self.tx_cq_idx.next = self.tx_seg.cq_idx.val();
        self.tx_cq_wr_id.next = self.tx_seg.cq_wr_id.val();
        self.tx_cq_status.next = self.tx_seg.cq_status.val();
        self.tx_cq_opcode.next = self.tx_seg.cq_opcode.val();

        // Pure ACK frames: requested by the RX fast path, coalesced per
        // connection in TxAck; seq = the connection's sequence number on the
        // wire (tx_wnxt), so the ACK is in order behind its data frames.
        self.tx_ackgen.reset.next = self.dp_rst.val();
        self.tx_cfifo.reset.next = self.dp_rst.val();
        self.tx_wnxt.read_clock.next = self.clock.val();
        self.tx_wnxt.write_clock.next = self.clock.val();
        self.tx_ackgen.req_valid.next = self.ak_valid.val();
        self.tx_ackgen.req_conn.next = self.ak_conn.val();
        self.tx_wnxt.read_address.next = self.tx_ackgen.rd_conn.val();
        self.tx_ackgen.ctx_dst_mac.next = self.tx_ctx.read_data.val().get_bits::<48>(0);
        self.tx_ackgen.ctx_src_mac.next = self.tx_ctx.read_data.val().get_bits::<48>(48);
        self.tx_ackgen.ctx_src_ip.next = self.tx_ctx.read_data.val().get_bits::<32>(96);
        self.tx_ackgen.ctx_dst_ip.next = self.tx_ctx.read_data.val().get_bits::<32>(128);
        self.tx_ackgen.ctx_src_port.next = self.tx_ctx.read_data.val().get_bits::<16>(160);
        self.tx_ackgen.ctx_dst_port.next = self.tx_ctx.read_data.val().get_bits::<16>(176);
        self.tx_ackgen.ctx_window.next = self.tx_ctx.read_data.val().get_bits::<16>(192);
        self.tx_ackgen.ctx_owned.next = self.tx_ctx.read_data.val().get_bit(208);
        self.tx_ackgen.ctx_ack.next = self.tx_ack.read_data.val();
        self.tx_ackgen.ctx_seq.next = self.tx_wnxt.read_data.val();
        self.cnt_tx_acks.next = self.tx_ackgen.cnt_acks.val();
        // The ACK number of the last frame built per connection: a data
        // descriptor taken (its ACK number is tx_ack's, read with it) or a
        // pure ACK built (they never fall in one clock: the ACK builder's
        // read restarts the descriptor lookup). A connection write that
        // does not keep RDMA mode sets it half the sequence space away
        // from rcv_nxt (no ACK due soon equals it). A hint only: a write
        // lost to a table write in the same clock costs at most one
        // redundant pure ACK.
        self.tx_acked.read_clock.next = self.clock.val();
        self.tx_acked.write_clock.next = self.clock.val();
        self.tx_acked.read_address.next = self.tx_ackgen.rd_conn.val();
        self.tx_ackgen.ctx_acked.next = self.tx_acked.read_data.val();
        self.tx_acked.write_enable.next = self.tx_take.val();
        self.tx_acked.write_address.next = self.tx_qpconn.read_data.val();
        self.tx_acked.write_data.next = self.tx_ack.read_data.val();
        if self.tx_ackgen.sent_valid.val() {
            self.tx_acked.write_enable.next = true;
            self.tx_acked.write_address.next = self.tx_ackgen.sent_conn.val();
            self.tx_acked.write_data.next = self.tx_ackgen.sent_ack.val();
        }
        if self.ew_ct_valid.val() & !(self.fwc_conn.val() & self.fwc_keep.val()) {
            self.tx_acked.write_enable.next = true;
            self.tx_acked.write_address.next = self.ew_ct_idx.val();
            self.tx_acked.write_data.next = self.ew_ct_rcv_nxt.val() ^ (bits::<32>(1) << 31);
        }
        self.cnt_tx_ack_piggy.next = self.tx_ackgen.cnt_piggy.val();

        // MAC TX merge at frame boundaries: ACKs first unless the previous
        // frame was an ACK, then firmware and data alternating, so none of
        // the three waits for more than two frames of the others. The choice
        // is held from the first beat on offer to the last beat taken. While
        // an ACK is pending (and the last frame was not one) no new data
        // frame starts: the ACK's seq must not be passed by data.
        // Firmware source: the port's raw frames (when fw_raw_to_mac) before
        // the fw_tx_* pins, whole frames.
        self.fm_port.next = self.fw_raw_to_mac.val() & self.fw_port.raw_tx_valid.val();
        if self.fx_lock.q.val() {
            self.fm_port.next = self.fx_port.q.val();
        }
        self.fm_valid.next = self.fw_tx_valid.val();
        self.fm_data.next = self.fw_tx_data.val();
        self.fm_keep.next = self.fw_tx_keep.val();
        self.fm_last.next = self.fw_tx_last.val();
        if self.fm_port.val() {
            self.fm_valid.next = self.fw_port.raw_tx_valid.val();
            self.fm_data.next = self.fw_port.raw_tx_data.val();
            self.fm_keep.next = self.fw_port.raw_tx_keep.val();
            self.fm_last.next = self.fw_port.raw_tx_last.val();
        }
        // tx_framer → fr_sk → the merge (FPGA timing: the merge's choice,
        // which follows the ACK FIFO's block RAM output, does not run into
        // the framer's FIFO pops; +1 clock per data frame).
        self.fr_sk.clock.next = self.clock.val();
        self.fr_sk.reset.next = self.dp_rst.val();
        self.fr_sk.in_valid.next = self.tx_framer.tx_valid.val();
        self.tx_framer.tx_ready.next = self.fr_sk.in_ready.val();
        self.fr_in.next = (bit_cast::<69, 1>(self.tx_framer.tx_last.val().into()) << 68)
            | (bit_cast::<69, 4>(self.tx_framer.tx_keep.val()) << 64)
            | bit_cast::<69, 64>(self.tx_framer.tx_data.val());
        self.fr_sk.in_data.next = self.fr_in.val();
        self.fr_valid.next = self.fr_sk.out_valid.val();
        self.fr_last.next = self.fr_sk.out_data.val().get_bit(68);
        self.fr_sk.out_ready.next = false;
        self.mx_block.next =
            self.tx_ackgen.pend.val() & (self.mx_prev.q.val() != 3) & !self.mx_lock.q.val();
        self.mx_data.next = self.fr_valid.val() & !self.mx_block.val();
        self.mx_sel.next = 1.into();
        if self.tx_ackgen.tx_valid.val() & (self.mx_prev.q.val() != 3) {
            self.mx_sel.next = 3.into();
        } else if self.fm_valid.val() & (!self.mx_data.val() | (self.mx_prev.q.val() != 2)) {
            self.mx_sel.next = 2.into();
        } else if self.mx_data.val() {
            self.mx_sel.next = 1.into();
        } else if self.tx_ackgen.tx_valid.val() {
            self.mx_sel.next = 3.into();
        }
        if self.mx_lock.q.val() {
            self.mx_sel.next = self.mx_own.q.val();
        }
        self.fm_ready.next = false;
        self.tx_ackgen.tx_ready.next = false;
        self.mac_tx_data.next = self.fr_sk.out_data.val().get_bits::<64>(0);
        self.mac_tx_keep.next = self.fr_sk.out_data.val().get_bits::<4>(64);
        self.mac_tx_last.next = self.fr_last.val();
        self.mtx_open.next = !self.dev_rst.tx_hold.val();
        self.mtx_rdy.next = self.mac_tx_ready.val() & self.mtx_open.val();
        self.mac_tx_valid.next = self.mx_data.val() & self.mtx_open.val();
        if self.mx_sel.val() == 1 {
            self.fr_sk.out_ready.next = self.mtx_rdy.val() & !self.mx_block.val();
        } else if self.mx_sel.val() == 2 {
            self.mac_tx_data.next = self.fm_data.val();
            self.mac_tx_keep.next = self.fm_keep.val();
            self.mac_tx_last.next = self.fm_last.val();
            self.mac_tx_valid.next = self.fm_valid.val() & self.mtx_open.val();
            self.fm_ready.next = self.mtx_rdy.val();
        } else {
            self.mac_tx_data.next = self.tx_ackgen.tx_data.val();
            self.mac_tx_keep.next = self.tx_ackgen.tx_keep.val();
            self.mac_tx_last.next = self.tx_ackgen.tx_last.val();
            self.mac_tx_valid.next = self.tx_ackgen.tx_valid.val() & self.mtx_open.val();
            self.tx_ackgen.tx_ready.next = self.mtx_rdy.val();
        }
        if self.mac_tx_valid.val() {
            if self.mtx_rdy.val() & self.mac_tx_last.val() {
                self.mx_lock.d.next = false;
                self.mx_prev.d.next = self.mx_sel.val();
            } else {
                self.mx_lock.d.next = true;
                self.mx_own.d.next = self.mx_sel.val();
            }
        }

        // firmware source lock, and the handshakes of its two inputs
        if self.fm_valid.val() {
            if self.fm_ready.val() & self.fm_last.val() {
                self.fx_lock.d.next = false;
            } else {
                self.fx_lock.d.next = true;
                self.fx_port.d.next = self.fm_port.val();
            }
        }
        self.fw_tx_ready.next = self.fm_ready.val() & !self.fm_port.val();
        if self.fw_raw_to_mac.val() {
            self.fw_port.raw_tx_ready.next = self.fm_ready.val() & self.fm_port.val();
            // observation: exactly the beats the merge took
            self.raw_tx_valid.next =
                self.fw_port.raw_tx_valid.val() & self.fm_ready.val() & self.fm_port.val();
        }

        // no data frame on the MAC, locked or on offer
        // and no data frame's SND.NXT still on its way into tx_wnxt (se_*,
        // or held in sh_*), so the ACK's seq is the one on the wire
        // (a frame entering `fr_sk` counts as on offer, unless the pending
        // ACK holds it anyway)
        self.tx_ackgen.go.next = !(self.mx_lock.q.val() & (self.mx_own.q.val() == 1))
            & !((self.mx_sel.val() == 1) & self.mac_tx_valid.val())
            & !(self.tx_framer.tx_valid.val() & !self.mx_block.val())
            & !self.se_v.q.val()
            & !self.sh_v.q.val();
        // Data frames leaving: IPv4 total length (octets 16-17, beat 2) and
        // TCP sequence number (octets 38-41, beats 4-5), network order; at
        // the last beat tx_wnxt[conn] = seq + total length - 40 (the IPv4 and
        // TCP headers without options).
        self.mx_data_end.next = false;
        if (self.mx_sel.val() == 1) & self.mac_tx_valid.val() & self.mtx_rdy.val() {
            // Saturating: a frame of more than 256 beats (over 2 KiB, MTU
            // above 2 KiB) must not wrap it back to beats 2..5 and take
            // payload octets for the length and sequence number.
            if self.mx_beat.q.val() != 255 {
                self.mx_beat.d.next = self.mx_beat.q.val() + 1;
            }
            if self.mx_beat.q.val() == 2 {
                self.mx_tlen.d.next = (bit_cast::<16, 8>(self.mac_tx_data.val().get_bits::<8>(0))
                    << 8)
                    | bit_cast::<16, 8>(self.mac_tx_data.val().get_bits::<8>(8));
            }
            if self.mx_beat.q.val() == 4 {
                self.mx_seqhi.d.next =
                    (bit_cast::<16, 8>(self.mac_tx_data.val().get_bits::<8>(48)) << 8)
                        | bit_cast::<16, 8>(self.mac_tx_data.val().get_bits::<8>(56));
            }
            if self.mx_beat.q.val() == 5 {
                self.mx_seqlo.d.next = (bit_cast::<16, 8>(self.mac_tx_data.val().get_bits::<8>(0))
                    << 8)
                    | bit_cast::<16, 8>(self.mac_tx_data.val().get_bits::<8>(8));
            }
            if self.mac_tx_last.val() {
                self.mx_beat.d.next = 0.into();
                self.mx_data_end.next = true;
            }
        }
        // (an empty FIFO here would be a framer that dropped a descriptor,
        // which TxSeg never makes: then nothing is recorded)
        self.mx_data_end.next = self.mx_data_end.val() & !self.tx_cfifo.empty.val();
        self.tx_cfifo.read.next = self.mx_data_end.val();
        // A replayed frame (tx_log) re-sends sequence space below SND.NXT:
        // it updates neither SND.NXT nor tx_wnxt (RFC 9293 §3.8.1: a
        // retransmission does not move SND.NXT; conn_table also takes only
        // advancing values).
        self.se_v.d.next = self.mx_data_end.val() & !self.tx_cfifo.data_out.val().get_bit(8);
        self.se_idx.d.next = self.tx_cfifo.data_out.val().get_bits::<8>(0);
        self.se_val.d.next = ((bit_cast::<32, 16>(self.mx_seqhi.q.val()) << 16)
            | bit_cast::<32, 16>(self.mx_seqlo.q.val()))
            + bit_cast::<32, 16>(self.mx_tlen.q.val())
            - 40;
        // tx_wnxt follows the same (held) updates as conn_table's snd_nxt.
        self.tx_wnxt.write_enable.next = self.ew_ct_valid.val() | self.sn_out_v.val();
        self.tx_wnxt.write_address.next = self.sn_out_idx.val();
        self.tx_wnxt.write_data.next = self.sn_out_val.val();
        if self.ew_ct_valid.val() {
            self.tx_wnxt.write_address.next = self.ew_ct_idx.val();
            self.tx_wnxt.write_data.next = self.ew_ct_snd_nxt.val();
        }
        self.cnt_tx_frames.next = self.tx_framer.cnt_tx_frames.val();
        self.cnt_tx_desc_drop.next = self.tx_framer.cnt_desc_drop.val();
        self.cnt_tx_pay_err.next = self.tx_framer.cnt_pay_err.val();
        self.cnt_tx_segs.next = self.tx_seg.cnt_segs.val();
        self.cnt_tx_bad_wqe.next = self.tx_seg.cnt_bad_wqe.val();
        self.cnt_tx_fetch.next = self.wqe_fetch.cnt_fetch.val();
        self.cnt_tx_push.next = self.wqe_fetch.cnt_push.val();
        self.cnt_db.next = self.doorbell.cnt_db.val();
        self.cnt_db_bad.next = self.doorbell.cnt_db_bad.val();

        // ---- Receive-side Send path (rx_send): configuration from the
        // firmware's table writes, doorbells from BAR0, each through a
        // queue (rx_send's ports are not ready while it serves a WQE fetch
        // or a CQE); a write into a full queue is counted in cnt_rxs_lost.
        self.rx_send.reset.next = self.dp_rst.val();
        self.rq_cfg_q.reset.next = self.dp_rst.val();
        self.cq_cfg_q.reset.next = self.dp_rst.val();
        self.rq_db_q.reset.next = self.dp_rst.val();
        self.cq_db_q.reset.next = self.dp_rst.val();
        self.rxs_lost_now.next = false;
        // QpContext (TableId 1) write for qpn < 64: the RQ ring (octet 24),
        // rq_log2 (32), recv_cqn (12), rx_send_msn (52), on in Rts (1) or
        // Closing (2); recv_wqe keeps the host's producer index (receives
        // posted before RTS count) and, for a QP that stays on, its consumer
        // index and MSN
        self.rq_cfg_q.write.next = self.fwq_v.val() & (self.fw_port.tw_index.val() < 64);
        self.rq_on.next = 0.into();
        if (self.fw_port.tw_data.val().get_bits::<8>(0) == 1)
            | (self.fw_port.tw_data.val().get_bits::<8>(0) == 2)
        {
            self.rq_on.next = 1.into();
        }
        self.rq_cfg_q.data_in.next =
            bit_cast::<112, 6>(self.fw_port.tw_index.val().get_bits::<6>(0))
                | (bit_cast::<112, 64>(self.fw_port.tw_data.val().get_bits::<64>(192)) << 6)
                | (bit_cast::<112, 5>(self.fw_port.tw_data.val().get_bits::<5>(256)) << 70)
                | (bit_cast::<112, 32>(self.fw_port.tw_data.val().get_bits::<32>(416)) << 75)
                | (bit_cast::<112, 4>(self.fw_port.tw_data.val().get_bits::<4>(96)) << 107)
                | (bit_cast::<112, 1>(self.rq_on.val()) << 111);
        if self.rq_cfg_q.write.val() & self.rq_cfg_q.full.val() {
            self.rxs_lost_now.next = true;
        }
        self.rx_send.rq_cfg_valid.next = !self.rq_cfg_q.empty.val();
        self.rq_cfg_q.read.next = self.rx_send.rq_cfg_ready.val();
        self.rx_send.rq_cfg_qp.next = self.rq_cfg_q.data_out.val().get_bits::<6>(0);
        self.rx_send.rq_cfg_base.next = self.rq_cfg_q.data_out.val().get_bits::<64>(6);
        self.rx_send.rq_cfg_log2.next = self.rq_cfg_q.data_out.val().get_bits::<5>(70);
        self.rx_send.rq_cfg_ci.next = 0.into();
        self.rx_send.rq_cfg_msn.next = self.rq_cfg_q.data_out.val().get_bits::<32>(75);
        self.rx_send.rq_cfg_cq.next = self.rq_cfg_q.data_out.val().get_bits::<4>(107);
        self.rx_send.rq_cfg_on.next = self.rq_cfg_q.data_out.val().get_bit(111);
        // CqContext (TableId 2): state (octet 0), log2_entries (1), ring
        // (8), producer (16), consumer (20); CQ numbers >= 16 refused
        self.cq_cfg_q.write.next = self.fw_port.tw_valid.val()
            & (self.fw_port.tw_table.val() == 2)
            & (self.fw_port.tw_index.val() < 16);
        if self.fw_port.tw_valid.val()
            & (self.fw_port.tw_table.val() == 2)
            & (self.fw_port.tw_index.val() >= 16)
        {
            self.rxs_lost_now.next = true;
        }
        // armed (octet 24): a CqArm value (1, 2) arms the CQ, anything else
        // leaves it unarmed
        self.cq_armed.next = 0.into();
        if (self.fw_port.tw_data.val().get_bits::<32>(192) == 1)
            | (self.fw_port.tw_data.val().get_bits::<32>(192) == 2)
        {
            self.cq_armed.next = self.fw_port.tw_data.val().get_bits::<2>(192);
        }
        self.cq_cfg_q.data_in.next =
            bit_cast::<141, 4>(self.fw_port.tw_index.val().get_bits::<4>(0))
                | (bit_cast::<141, 2>(self.fw_port.tw_data.val().get_bits::<2>(0)) << 4)
                | (bit_cast::<141, 64>(self.fw_port.tw_data.val().get_bits::<64>(64)) << 6)
                | (bit_cast::<141, 5>(self.fw_port.tw_data.val().get_bits::<5>(8)) << 70)
                | (bit_cast::<141, 32>(self.fw_port.tw_data.val().get_bits::<32>(128)) << 75)
                | (bit_cast::<141, 32>(self.fw_port.tw_data.val().get_bits::<32>(160)) << 107)
                | (bit_cast::<141, 2>(self.cq_armed.val()) << 139);
        if self.cq_cfg_q.write.val() & self.cq_cfg_q.full.val() {
            self.rxs_lost_now.next = true;
        }
        self.rx_send.cq_cfg_valid.next = !self.cq_cfg_q.empty.val();
        self.cq_cfg_q.read.next = self.rx_send.cq_cfg_ready.val();
        self.rx_send.cq_cfg_cq.next = self.cq_cfg_q.data_out.val().get_bits::<4>(0);
        self.rx_send.cq_cfg_state.next = self.cq_cfg_q.data_out.val().get_bits::<2>(4);
        self.rx_send.cq_cfg_base.next = self.cq_cfg_q.data_out.val().get_bits::<64>(6);
        self.rx_send.cq_cfg_log2.next = self.cq_cfg_q.data_out.val().get_bits::<5>(70);
        self.rx_send.cq_cfg_prod.next = self.cq_cfg_q.data_out.val().get_bits::<32>(75);
        self.rx_send.cq_cfg_cons.next = self.cq_cfg_q.data_out.val().get_bits::<32>(107);
        self.rx_send.cq_cfg_armed.next = self.cq_cfg_q.data_out.val().get_bits::<2>(139);
        // RQ producer doorbell: BAR0 QP page at QP_RQ_PRODUCER (Doorbell's rq_*)
        self.rq_db_q.write.next = self.doorbell.rq_valid.val();
        self.rq_db_q.data_in.next = bit_cast::<38, 6>(self.doorbell.wr_qp.val())
            | (bit_cast::<38, 32>(self.doorbell.wr_value.val()) << 6);
        if self.doorbell.rq_valid.val() & self.rq_db_q.full.val() {
            self.rxs_lost_now.next = true;
        }
        self.rx_send.rq_db_valid.next = !self.rq_db_q.empty.val();
        self.rq_db_q.read.next = self.rx_send.rq_db_ready.val();
        self.rx_send.rq_db_qp.next = self.rq_db_q.data_out.val().get_bits::<6>(0);
        self.rx_send.rq_db_prod.next = self.rq_db_q.data_out.val().get_bits::<32>(6);
        // CQ doorbell: BAR0 CQ page < 16 (abi::csr::MAX_CQ), offset
        // CQ_CONSUMER (0, consumer index) or CQ_ARM (4, arm value)
        self.cq_db_ok.next = (self.host_regs.db_cq_num.val() < 16)
            & ((self.host_regs.db_cq_off.val() == 0) | (self.host_regs.db_cq_off.val() == 4));
        self.cq_db_q.write.next = self.host_regs.db_cq_valid.val() & self.cq_db_ok.val();
        if self.host_regs.db_cq_valid.val() & !self.cq_db_ok.val() {
            self.rxs_lost_now.next = true;
        }
        self.cq_db_q.data_in.next =
            bit_cast::<37, 4>(self.host_regs.db_cq_num.val().get_bits::<4>(0))
                | (bit_cast::<37, 1>(self.host_regs.db_cq_off.val().get_bits::<1>(2)) << 4)
                | (bit_cast::<37, 32>(self.host_regs.db_cq_value.val()) << 5);
        if self.cq_db_q.write.val() & self.cq_db_q.full.val() {
            self.rxs_lost_now.next = true;
        }
        self.rx_send.cq_db_valid.next = !self.cq_db_q.empty.val();
        self.cq_db_q.read.next = self.rx_send.cq_db_ready.val();
        self.rx_send.cq_db_cq.next = self.cq_db_q.data_out.val().get_bits::<4>(0);
        self.rx_send.cq_db_arm.next = self.cq_db_q.data_out.val().get_bit(4);
        self.rx_send.cq_db_value.next = self.cq_db_q.data_out.val().get_bits::<32>(5);
        if self.rxs_lost_now.val() {
            self.rxs_lost.d.next = self.rxs_lost.q.val() + 1;
        }
        if self.dp_rst.val() {
            self.rxs_lost.d.next = 0.into();
        }
        self.cnt_rxs_lost.next = self.rxs_lost.q.val();
        // event queue from BAR0
        self.rx_send.eq_base.next = self.host_regs.eq_base.val();
        self.rx_send.eq_entries.next = self.host_regs.eq_entries.val();
        self.rx_send.eq_cons.next = self.host_regs.eq_consumer.val();
        self.rxs_eq_prod.next = self.rx_send.eq_prod.val();
        // incoming Terminates: into the exception queue (ExcArb, held
        // until taken); observed here in the clock they are taken
        self.exc_arb.rt_valid.next = self.rx_send.rterm_valid.val();
        self.exc_arb.rt_conn.next = self.rx_send.rterm_conn.val();
        self.exc_arb.rt_len.next = self.rx_send.rterm_len.val();
        self.exc_arb.rt_data.next = self.rx_send.rterm_data.val();
        self.rx_send.rterm_ready.next = self.exc_arb.rt_ready.val();
        // refused send SGEs (`sqe_*`, above): a SendQueueError record each
        // CQ overruns (cpl_write): the firmware moves the CQ's QPs to Error.
        self.exc_arb.co_valid.next = self.rx_send.cq_ovf_valid.val();
        self.exc_arb.co_cq.next = bit_cast::<32, 4>(self.rx_send.cq_ovf_cq.val());
        self.rx_send.cq_ovf_ready.next = self.exc_arb.co_ready.val();
        self.exc_arb.sq_valid.next = self.sqe_v.q.val();
        self.exc_arb.sq_qpn.next = bit_cast::<32, 6>(self.sqe_qp.q.val());
        if self.exc_arb.sq_ready.val() {
            self.sqe_v.d.next = false;
        }
        self.rterm_valid.next = self.rx_send.rterm_valid.val() & self.exc_arb.rt_ready.val();
        // (the record on the observation outputs; the firmware takes it
        // from the exception queue only)
        self.rterm_conn.next = self.rx_send.rterm_conn.val();
        self.rterm_qpn.next = self.rx_send.rterm_qpn.val();
        self.rterm_len.next = self.rx_send.rterm_len.val();
        self.rterm_data.next = self.rx_send.rterm_data.val();
        self.qp_err_valid.next = self.rx_send.qp_err_valid.val();
        self.qp_err_qpn.next = self.rx_send.qp_err_qpn.val();
        self.qp_err_conn.next = self.rx_send.qp_err_conn.val();
        self.cnt_rxs_send.next = self.rx_send.cnt_send.val();
        self.cnt_rxs_term_tx.next = self.rx_send.cnt_term_tx.val();
        self.cnt_rxs_term_rx.next = self.rx_send.cnt_term_rx.val();
        self.cnt_rxs_drop_qp.next = self.rx_send.cnt_drop_qp.val();
        self.cnt_rxs_rreq.next = self.rx_send.cnt_rreq.val();
        self.cnt_rxs_fetch.next = self.rx_send.cnt_fetch.val();
        self.cnt_rxs_bad_wqe.next = self.rx_send.cnt_bad_wqe.val();
        self.cnt_rxs_cqe.next = self.rx_send.cnt_cqe.val();
        self.cnt_rxs_event.next = self.rx_send.cnt_event.val();
        self.cnt_rxs_cpl_drop.next = self.rx_send.cnt_cpl_drop.val();
        self.cnt_rxs_cq_overflow.next = self.rx_send.cnt_cq_overflow.val();
        self.cnt_rxs_eq_overflow.next = self.rx_send.cnt_eq_overflow.val();
        self.cnt_rxs_db_bad.next = self.rx_send.cnt_db_bad.val();
        self.cnt_rxs_prot.next = self.rx_send.cnt_prot.val();
        self.cnt_rxs_inv.next = self.rx_send.cnt_inv.val();
        self.cnt_rxs_inv_err.next = self.rx_send.cnt_inv_err.val();
        // ---- Send-side completions (SendCpl → rx_send's cpl_write cp2_*):
        // the QP's send CQ from the firmware's QpContext write (send_cqn,
        // octet 8) for qpn < 64
        self.send_cpl.reset.next = self.dp_rst.val();
        self.send_cpl.cfg_valid.next = self.fwq_v.val() & (self.fw_port.tw_index.val() < 64);
        self.send_cpl.cfg_qp.next = self.fw_port.tw_index.val().get_bits::<6>(0);
        self.send_cpl.cfg_cq.next = self.fw_port.tw_data.val().get_bits::<32>(64);
        self.send_cpl.cfg_conn.next = self.fw_port.tw_data.val().get_bits::<8>(288);
        // send side on in RTS (1) and Closing (2) (abi::mailbox::QpState)
        self.send_cpl.cfg_on.next = (self.ew_qp_state.val() == 1) | (self.ew_qp_state.val() == 2);
        self.send_cpl.tx_valid.next = self.tx_seg.cq_valid.val();
        self.send_cpl.tx_qp.next = self.tx_seg.cq_qp.val();
        self.send_cpl.tx_wr_id.next = self.tx_seg.cq_wr_id.val();
        self.send_cpl.tx_status.next = self.tx_seg.cq_status.val();
        self.send_cpl.tx_opcode.next = self.tx_seg.cq_opcode.val();
        self.send_cpl.tx_end_seq.next = self.tx_seg.cq_end_seq.val();
        // A Send / Write completes once the peer acknowledged it (its source
        // buffer may then be reused: retransmission re-reads it); without
        // window enforcement (a test mode whose peer never ACKs) at once.
        self.send_cpl.ack_wait.next = self.tx_wnd_en.val();
        self.tx_seg.cq_room.next = self.send_cpl.room.val();
        self.conn_table.r3_idx.next = self.send_cpl.una_conn.val();
        self.send_cpl.una_snd_una.next = self.conn_table.r3_snd_una.val();
        // the WQE is still on offer to TxSeg while its record is (TxSeg pops
        // it after the record): its length, the sum of its SGEs'
        self.send_cpl.tx_len.next = self.wqe_fetch.wqe_len.val();
        // ---- RDMA Read requester (RdTrack): a Read Request sent (TxSeg's
        // rd_sent_* pulse) is recorded for its QP; the placed record of a
        // Read Response with L = 1 completes the QP's oldest Read (RFC 5040
        // §5.3: Read Responses come back in request order) → rd_cpl_* →
        // SendCpl → the QP's send CQ. ORD from the QP write (qpn < 64).
        self.rd_track.reset.next = self.dp_rst.val();
        self.rd_track.sent_valid.next = self.tx_seg.rd_sent_valid.val();
        self.rd_track.sent_qp.next = self.tx_seg.rd_sent_qp.val();
        self.rd_track.sent_wr_id.next = self.tx_seg.rd_sent_wr_id.val();
        self.rd_track.sent_signaled.next = self.tx_seg.rd_sent_signaled.val();
        self.rd_track.sent_len.next = self.tx_seg.rd_sent_len.val();
        self.rd_track.cfg_valid.next =
            self.ew_qp_valid.val() & !self.ew_qp_qpn.val().get_bits::<26>(6).any();
        self.rd_track.cfg_qp.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.rd_track.cfg_ord.next = self.ew_qp_ord.val();
        self.rd_track.tag_valid.next = self.ddp_rx.tag_valid.val() & self.rdt_take.val();
        self.rd_track.tag_opcode.next = self.ddp_rx.tag_opcode.val();
        self.rd_track.tag_ddp_last.next = self.ddp_rx.tag_ddp_last.val();
        self.rd_track.tag_stag.next = self.ddp_rx.tag_stag.val();
        self.rd_track.tag_to.next = self.ddp_rx.tag_to.val();
        self.rd_track.tag_len.next = self.ddp_rx.tag_len.val();
        self.rd_track.tag_conn.next = self.ddp_rx.tag_conn.val();
        self.rd_track.tag_qpn.next = self.ddp_rx.tag_qpn.val();
        self.rd_cpl_valid.next = self.rd_track.cpl_valid.val();
        self.rd_cpl_qp.next = self.rd_track.cpl_qp.val();
        self.rd_cpl_wr_id.next = self.rd_track.cpl_wr_id.val();
        self.rd_cpl_status.next = self.rd_track.cpl_status.val();
        self.rd_cpl_len.next = self.rd_track.cpl_len.val();
        self.cnt_rd_cpl.next = self.rd_track.cnt_cpl.val();
        self.cnt_rd_ord_over.next = self.rd_track.cnt_ord_over.val();
        self.cnt_rd_term.next = self.rd_track.cnt_term.val();
        // ---- RDMA Read responder: RreqQueue (IRD, expected QN 1 MSN) and
        // ReadResp (PD) from the QP write (qpn < 64); requests in arrival
        // order (RFC 5040 §5.3), done_* frees the IRD slot.
        self.rreq_q.reset.next = self.dp_rst.val();
        self.read_resp.reset.next = self.dp_rst.val();
        self.rreq_q.cfg_valid.next =
            self.ew_qp_valid.val() & !self.ew_qp_qpn.val().get_bits::<26>(6).any();
        self.rreq_q.cfg_qp.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.rreq_q.cfg_ird.next = self.ew_qp_ird.val();
        self.rreq_q.cfg_msn.next = self.ew_qp_rx_read_msn.val();
        self.read_resp.cfg_valid.next =
            self.ew_qp_valid.val() & !self.ew_qp_qpn.val().get_bits::<26>(6).any();
        self.read_resp.cfg_qp.next = self.ew_qp_qpn.val().get_bits::<6>(0);
        self.read_resp.cfg_pd.next = self.ew_qp_pd.val();
        self.read_resp.q_valid.next = self.rreq_q.q_valid.val();
        self.rreq_q.q_ready.next = self.read_resp.q_ready.val();
        self.read_resp.q_qp.next = self.rreq_q.q_qp.val();
        self.read_resp.q_conn.next = self.rreq_q.q_conn.val();
        self.read_resp.q_msn.next = self.rreq_q.q_msn.val();
        self.read_resp.q_sink_stag.next = self.rreq_q.q_sink_stag.val();
        self.read_resp.q_sink_to.next = self.rreq_q.q_sink_to.val();
        self.read_resp.q_len.next = self.rreq_q.q_len.val();
        self.read_resp.q_src_stag.next = self.rreq_q.q_src_stag.val();
        self.read_resp.q_src_to.next = self.rreq_q.q_src_to.val();
        self.rreq_q.done_valid.next = self.read_resp.done_valid.val();
        self.rreq_q.done_qp.next = self.read_resp.done_qp.val();
        self.cnt_rrq_req.next = self.rreq_q.cnt_rreq.val();
        self.cnt_rrq_drop.next = self.rreq_q.cnt_drop.val();
        self.cnt_rrq_term.next = self.rreq_q.cnt_term.val();
        self.cnt_rresp.next = self.read_resp.cnt_resp.val();
        self.cnt_rresp_segs.next = self.read_resp.cnt_segs.val();
        self.cnt_rresp_term.next = self.read_resp.cnt_term.val();
        self.cnt_rresp_drop.next = self.read_resp.cnt_drop.val();
        self.send_cpl.rd_valid.next = self.rd_cpl_valid.val();
        self.send_cpl.rd_qp.next = self.rd_cpl_qp.val();
        self.send_cpl.rd_wr_id.next = self.rd_cpl_wr_id.val();
        self.send_cpl.rd_status.next = self.rd_cpl_status.val();
        self.send_cpl.rd_len.next = self.rd_cpl_len.val();
        self.rd_cpl_ready.next = self.send_cpl.rd_ready.val();
        self.rd_track.cpl_ready.next = self.rd_cpl_ready.val();
        self.rx_send.cp2_valid.next = self.send_cpl.cpl_valid.val();
        self.send_cpl.cpl_ready.next = self.rx_send.cp2_ready.val();
        self.rx_send.cp2_cq.next = self.send_cpl.cpl_cq.val();
        self.rx_send.cp2_wr_id.next = self.send_cpl.cpl_wr_id.val();
        self.rx_send.cp2_byte_len.next = self.send_cpl.cpl_byte_len.val();
        self.rx_send.cp2_qpn.next = self.send_cpl.cpl_qpn.val();
        self.rx_send.cp2_opcode.next = self.send_cpl.cpl_opcode.val();
        self.rx_send.cp2_status.next = self.send_cpl.cpl_status.val();
        self.cnt_scq_no_cq.next = self.send_cpl.cnt_no_cq.val();
        self.cnt_dma_rd_cpl_bad.next = self.rd_arb.cnt_cpl_bad.val();
        if self.dp_rst.val() {
            self.tq_v.d.next = false;
            self.tx_dw.d.next = 0.into();
            self.cw_v.d.next = false;
            self.mx_lock.d.next = false;
            self.mx_prev.d.next = 0.into();
            self.mx_beat.d.next = 0.into();
            self.fx_lock.d.next = false;
            self.tc_v.d.next = false;
            self.se_v.d.next = false;
            self.sh_v.d.next = false;
            self.fwc_sn_hit.d.next = false;
            self.fwc_up_wv.d.next = false;
            self.sqe_v.d.next = false;
        }
        // ---- device reset and enable (dev_reset), last: it watches the
        // core's DMA, MAC TX and raw TX ports as assigned above
        self.dev_rst.clock.next = self.clock.val();
        self.dev_rst.reset.next = self.reset.val();
        self.dev_rst.go.next = self.host_regs.cfg_soft_reset.val();
        self.dev_rst.en.next = self.host_regs.cfg_enable.val() | !self.ctrl_en_gate.val();
        self.dev_rst.wr_valid.next = self.dma_wr_valid.val();
        self.dev_rst.wr_ready.next = self.dma_wr_ready.val();
        self.dev_rst.wr_hdr.next = self.dma_wr_hdr.val();
        self.dev_rst.wr_last.next = self.dma_wr_last.val();
        self.dev_rst.rd_req_valid.next = self.dma_rd_req_valid.val();
        self.dev_rst.rd_req_ready.next = self.dma_rd_req_ready.val();
        self.dev_rst.rd_cpl_valid.next = self.dma_rd_cpl_valid.val();
        self.dev_rst.rd_cpl_ready.next = self.dma_rd_cpl_ready.val();
        self.dev_rst.rd_cpl_last.next = self.dma_rd_cpl_last.val();
        self.dev_rst.tx_valid.next = self.mac_tx_valid.val();
        self.dev_rst.tx_ready.next = self.mac_tx_ready.val();
        self.dev_rst.tx_last.next = self.mac_tx_last.val();
        self.dev_rst.raw_valid.next = self.raw_tx_valid.val();
        self.dev_rst.raw_ready.next = self.raw_tx_ready.val() | self.fw_raw_to_mac.val();
        self.dev_rst.raw_last.next = self.raw_tx_last.val();
        self.dev_rst.mac_rx_valid.next = self.mac_rx_valid.val();
        self.dev_rst.mac_rx_last.next = self.mac_rx_last.val();
        self.dev_rst.clr_busy.next = self.fw_port.clr_busy.val();
        self.host_regs.rst_busy.next = self.dev_rst.busy.val();
        self.host_regs.db_open.next = self.dev_rst.db_open.val();
        self.fw_port.srst.next = self.dev_rst.dp_rst.val();
        self.fw_port.note_set.next = self.dev_rst.started.val();
        self.fw_port.seq_busy.next = self.dev_rst.busy.val();
        self.fw_port.clr_go.next = self.dev_rst.clr_go.val();
        self.fw_port.clr_room.next = self.rq_cfg_q.empty.val() & self.cq_cfg_q.empty.val();
    }
}
