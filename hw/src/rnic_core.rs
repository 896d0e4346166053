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

use crate::conn_table::ConnTable;
use crate::crc32c_x64::Crc32cX64;
use crate::ddp_rx::DdpRx;
use crate::exc_queue::ExcQueue;
use crate::fpdu_buffer::FpduBuffer;
use crate::fw_port::FwPort;
use crate::host_regs::HostRegs;
use crate::mpa_rx::MpaRx;
use crate::rx_check::RxCheck;
use crate::rx_fifo::RxFifo;
use crate::rx_parse::RxParse;
use crate::rx_split::RxSplit;
use crate::tpt::{Tpt, PBL_INDEX_BITS, TPT_INDEX_BITS};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RnicCore {
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
    pub cnt_mpa_err: Signal<Out, Bits<32>>,
    pub cnt_ddp_tagged: Signal<Out, Bits<32>>,
    pub cnt_ddp_untagged: Signal<Out, Bits<32>>,
    pub cnt_ddp_term: Signal<Out, Bits<32>>,
    pub cnt_ddp_drop_state: Signal<Out, Bits<32>>,
    pub cnt_ddp_len_err: Signal<Out, Bits<32>>,
    /// FPDU buffer occupancy (beats, records).
    pub ulp_buf_beats: Signal<Out, Bits<10>>,
    pub ulp_buf_recs: Signal<Out, Bits<5>>,
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
    /// Event records (`EVENT_PUSH`, 64 octets) for the host's event queue at
    /// `eq_base`; `ev_pop` takes one and raises `INT_EVENT`.
    pub ev_valid: Signal<Out, Bit>,
    pub ev_data: Signal<Out, Bits<512>>,
    pub ev_pop: Signal<In, Bit>,
    pub eq_base: Signal<Out, Bits<64>>,
    pub eq_entries: Signal<Out, Bits<32>>,
    pub eq_consumer: Signal<Out, Bits<32>>,
    /// `FLUSH_QP`: one-clock strobe with the QP number.
    pub flush_valid: Signal<Out, Bit>,
    pub flush_qpn: Signal<Out, Bits<32>>,
    rx_check: RxCheck,
    rx_fifo: RxFifo,
    rx_parse: RxParse,
    rx_split: RxSplit,
    conn_table: ConnTable,
    exc_queue: ExcQueue,
    pay_crc: Crc32cX64,
    mpa_rx: MpaRx,
    fpdu_buf: FpduBuffer,
    ddp_rx: DdpRx<PBL_INDEX_BITS>,
    tpt: Tpt<TPT_INDEX_BITS, PBL_INDEX_BITS>,
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
    pay_take: Signal<Local, Bit>,
    sq_start: Signal<Local, Bit>,
    pay_ready: Signal<Local, Bit>,
    ddp_term_sel: Signal<Local, Bit>,
    host_regs: HostRegs,
    fw_port: FwPort,
    /// The fast path's connection update in the clock before a firmware
    /// connection write: {hit, rcv_nxt, snd_una} (forwarded into the write).
    fwc_up_hit: DFF<Bit>,
    fwc_up_rcv: DFF<Bits<32>>,
    fwc_up_una: DFF<Bits<32>>,
    fwc_conn: Signal<Local, Bit>,
    fwc_keep: Signal<Local, Bit>,
    fwc_mpa: Signal<Local, Bit>,
    fwq_v: Signal<Local, Bit>,
}

impl Logic for RnicCore {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, rx_check, rx_fifo, rx_parse, rx_split, conn_table, exc_queue, pay_crc,
            mpa_rx, fpdu_buf, ddp_rx, tpt
        );
        dff_setup!(self, clock, sq_state, sq_conn, sq_seq, sq_mpa);
        self.mpa_rx.reset.next = self.reset.val();
        self.fpdu_buf.reset.next = self.reset.val();
        self.ddp_rx.reset.next = self.reset.val();
        self.tpt.reset.next = self.reset.val();
        self.rx_check.reset.next = self.reset.val();
        self.rx_fifo.reset.next = self.reset.val();
        self.rx_parse.reset.next = self.reset.val();
        self.rx_split.reset.next = self.reset.val();
        self.conn_table.reset.next = self.reset.val();
        self.exc_queue.reset.next = self.reset.val();
        self.pay_crc.reset.next = self.reset.val();

        // MAC → rx_check → rx_fifo
        self.rx_check.in_data.next = self.mac_rx_data.val();
        self.rx_check.in_keep.next = self.mac_rx_keep.val();
        self.rx_check.in_last.next = self.mac_rx_last.val();
        self.rx_check.in_valid.next = self.mac_rx_valid.val();
        self.rx_check.in_fcs_bad.next = self.mac_rx_fcs_bad.val();
        self.rx_fifo.in_data.next = self.rx_check.out_data.val();
        self.rx_fifo.in_keep.next = self.rx_check.out_keep.val();
        self.rx_fifo.in_last.next = self.rx_check.out_last.val();
        self.rx_fifo.in_valid.next = self.rx_check.out_valid.val();
        self.rx_fifo.in_fcs_bad.next = self.rx_check.out_fcs_bad.val();
        self.rx_fifo.in_tag.next = self.rx_check.out_tag.val();

        // rx_fifo → rx_parse
        self.rx_parse.in_data.next = self.rx_fifo.out_data.val();
        self.rx_parse.in_keep.next = self.rx_fifo.out_keep.val();
        self.rx_parse.in_last.next = self.rx_fifo.out_last.val();
        self.rx_parse.in_valid.next = self.rx_fifo.out_valid.val();
        self.rx_parse.in_tag.next = self.rx_fifo.out_tag.val();
        self.rx_fifo.out_ready.next = self.rx_parse.in_ready.val();

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
        self.conn_table.wr_valid.next = self.ct_wr_valid.val();
        self.conn_table.wr_idx.next = self.ct_wr_idx.val();
        self.conn_table.wr_used.next = self.ct_wr_used.val();
        self.conn_table.wr_local_ip.next = self.ct_wr_local_ip.val();
        self.conn_table.wr_peer_ip.next = self.ct_wr_peer_ip.val();
        self.conn_table.wr_local_port.next = self.ct_wr_local_port.val();
        self.conn_table.wr_peer_port.next = self.ct_wr_peer_port.val();
        self.conn_table.wr_mode.next = self.ct_wr_mode.val();
        self.conn_table.wr_mpa.next = self.ct_wr_mpa.val();
        self.conn_table.wr_rcv_nxt.next = self.ct_wr_rcv_nxt.val();
        self.conn_table.wr_rcv_wnd.next = self.ct_wr_rcv_wnd.val();
        self.conn_table.wr_snd_una.next = self.ct_wr_snd_una.val();
        self.conn_table.wr_snd_nxt.next = self.ct_wr_snd_nxt.val();
        self.conn_table.rd_idx.next = self.ct_rd_idx.val();
        self.ct_rd_used.next = self.conn_table.rd_used.val();
        self.ct_rd_mode.next = self.conn_table.rd_mode.val();
        self.ct_rd_rcv_nxt.next = self.conn_table.rd_rcv_nxt.val();
        self.ct_rd_snd_una.next = self.conn_table.rd_snd_una.val();
        self.ack_req_valid.next = self.rx_split.ack_req_valid.val();
        self.ack_req_conn.next = self.rx_split.ack_req_conn.val();
        self.ack_req_ack.next = self.rx_split.ack_req_ack.val();

        // payload out: to rx_pay_* or (rx_ulp_en) to the ULP path
        self.rx_pay_data.next = self.rx_parse.pay_data.val();
        self.rx_pay_keep.next = self.rx_parse.pay_keep.val();
        self.rx_pay_last.next = self.rx_parse.pay_last.val();
        self.rx_pay_valid.next = self.rx_parse.pay_valid.val() & !self.rx_ulp_en.val();
        self.pay_ready.next = self.rx_pay_ready.val();
        if self.rx_ulp_en.val() {
            self.pay_ready.next = (self.sq_state.q.val() == 2) & self.mpa_rx.in_ready.val();
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
        self.exc_queue.in_data.next = self.rx_parse.raw_data.val();
        self.exc_queue.in_keep.next = self.rx_parse.raw_keep.val();
        self.exc_queue.in_last.next = self.rx_parse.raw_last.val();
        self.exc_queue.in_valid.next = self.rx_parse.raw_valid.val();
        self.exc_queue.in_commit.next = self.rx_parse.raw_commit.val();
        self.exc_queue.in_reason.next = self.rx_parse.raw_reason.val();
        self.exc_queue.in_conn.next = self.rx_parse.raw_conn.val();
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
        // st_out written back with the connection's SeqStart.
        self.mpa_ram.write_data.next = (self.mpa_ram.read_data.val() >> 88) << 88
            | bit_cast::<120, 88>(self.mpa_rx.st_out.val());
        // A segment may start in idle, or when the previous segment's last
        // piece has left mpa_rx; mpa_ram is read at the segment's connection
        // in that clock, so its record is there with the first beat.
        self.sq_start.next = (self.sq_state.q.val() == 0)
            | ((self.sq_state.q.val() == 4) & !self.mpa_rx.out_valid.val());
        if self.sq_start.val() {
            self.mpa_ram.read_address.next = self.rx_split.seg_conn.val();
            self.sq_state.d.next = 0.into();
            if self.rx_ulp_en.val() & self.rx_parse.pay_valid.val() {
                self.sq_state.d.next = 2.into();
                self.sq_conn.d.next = self.rx_split.seg_conn.val();
                self.sq_seq.d.next = self.rx_parse.seq.val();
                self.sq_mpa.d.next = self.rx_split.seg_mpa.val();
            }
        } else if (self.sq_state.q.val() == 2) & self.pay_take.val() & self.rx_parse.pay_last.val()
        {
            self.sq_state.d.next = 3.into();
        } else if (self.sq_state.q.val() == 3) & self.mpa_rx.st_out_valid.val() {
            self.mpa_ram.write_enable.next = true;
            self.sq_state.d.next = 4.into();
        }
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
        self.mpa_rx.in_data.next = self.rx_parse.pay_data.val();
        self.mpa_rx.in_keep.next = self.rx_parse.pay_keep.val();
        self.mpa_rx.in_last.next = self.rx_parse.pay_last.val();
        self.mpa_rx.in_valid.next = self.rx_parse.pay_valid.val() & (self.sq_state.q.val() == 2);
        // mpa_flags bit 1 MPA_CRC_RX, bit 3 MPA_MARKERS_RX (rnic_wire::abi::context)
        self.mpa_rx.ctx_crc_en.next = self.sq_mpa.q.val().get_bit(1);
        self.mpa_rx.ctx_mk_en.next = self.sq_mpa.q.val().get_bit(3);
        self.mpa_rx.ctx_seq.next = self.sq_seq.q.val();
        self.mpa_rx.ctx_seq_start.next = self.mpa_ram.read_data.val().get_bits::<32>(88);
        self.mpa_rx.ctx_state.next = self.mpa_ram.read_data.val().get_bits::<88>(0);
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
        self.qp_ram.write_address.next = self.qp_wr_idx.val();
        self.qp_ram.write_enable.next = self.qp_wr_valid.val();
        self.qp_ram.write_data.next = bit_cast::<72, 32>(self.qp_wr_qpn.val())
            | (bit_cast::<72, 8>(self.qp_wr_state.val()) << 32)
            | (bit_cast::<72, 32>(self.qp_wr_pd.val()) << 40);
        self.fpdu_buf.in_qpn.next = self.qp_ram.read_data.val().get_bits::<32>(0);

        // fpdu_buf → ddp_rx
        self.ddp_rx.in_data.next = self.fpdu_buf.out_data.val();
        self.ddp_rx.in_keep.next = self.fpdu_buf.out_keep.val();
        self.ddp_rx.in_last.next = self.fpdu_buf.out_last.val();
        self.ddp_rx.in_valid.next = self.fpdu_buf.out_valid.val();
        self.fpdu_buf.out_ready.next = self.ddp_rx.in_ready.val();
        self.ddp_rx.in_len.next = self.fpdu_buf.out_len.val();
        self.ddp_rx.in_conn.next = bit_cast::<32, 8>(self.fpdu_buf.out_conn.val());
        self.ddp_rx.in_qpn.next = self.qp_ram.read_data.val().get_bits::<32>(0);
        self.ddp_rx.in_qp_state.next = self.qp_ram.read_data.val().get_bits::<8>(32);
        self.ddp_rx.in_pd.next = self.qp_ram.read_data.val().get_bits::<32>(40);

        // ddp_rx ↔ tpt
        self.tpt.tpt_wr_en.next = self.tpt_wr_en.val();
        self.tpt.tpt_wr_index.next = self.tpt_wr_index.val();
        self.tpt.tpt_wr_data.next = self.tpt_wr_data.val();
        self.tpt.pbl_wr_en.next = self.pbl_wr_en.val();
        self.tpt.pbl_wr_index.next = self.pbl_wr_index.val();
        self.tpt.pbl_wr_data.next = self.pbl_wr_data.val();
        self.tpt.chk_valid.next = self.ddp_rx.chk_valid.val();
        self.ddp_rx.chk_ready.next = self.tpt.chk_ready.val();
        self.tpt.chk_stag.next = self.ddp_rx.chk_stag.val();
        self.tpt.chk_pd.next = self.ddp_rx.chk_pd.val();
        self.tpt.chk_need.next = self.ddp_rx.chk_need.val();
        self.tpt.chk_to.next = self.ddp_rx.chk_to.val();
        self.tpt.chk_len.next = self.ddp_rx.chk_len.val();
        self.ddp_rx.res_valid.next = self.tpt.res_valid.val();
        self.tpt.res_ready.next = self.ddp_rx.res_ready.val();
        self.ddp_rx.res_fault.next = self.tpt.res_fault.val();
        self.ddp_rx.res_addr.next = self.tpt.res_addr.val();
        self.ddp_rx.res_page_left.next = self.tpt.res_page_left.val();
        self.ddp_rx.res_pbl_idx.next = self.tpt.res_pbl_idx.val();
        self.ddp_rx.res_page_shift.next = self.tpt.res_page_shift.val();
        self.tpt.walk_idx.next = self.ddp_rx.walk_idx.val();
        self.ddp_rx.walk_addr.next = self.tpt.walk_addr.val();

        // DMA write
        self.dma_wr_valid.next = self.ddp_rx.dma_wr_valid.val();
        self.ddp_rx.dma_wr_ready.next = self.dma_wr_ready.val();
        self.dma_wr_hdr.next = self.ddp_rx.dma_wr_hdr.val();
        self.dma_wr_len.next = self.ddp_rx.dma_wr_len.val();
        self.dma_wr_data.next = self.ddp_rx.dma_wr_data.val();
        self.dma_wr_keep.next = self.ddp_rx.dma_wr_keep.val();
        self.dma_wr_last.next = self.ddp_rx.dma_wr_last.val();

        // placed-segment records
        self.placed_valid.next = self.ddp_rx.tag_valid.val();
        self.ddp_rx.tag_ready.next = self.placed_pop.val();
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
        self.ddp_rx.ut_ready.next = self.ut_ready.val();
        self.ut_opcode.next = self.ddp_rx.ut_opcode.val();
        self.ut_ddp_last.next = self.ddp_rx.ut_ddp_last.val();
        self.ut_qn.next = self.ddp_rx.ut_qn.val();
        self.ut_msn.next = self.ddp_rx.ut_msn.val();
        self.ut_mo.next = self.ddp_rx.ut_mo.val();
        self.ut_inv_stag.next = self.ddp_rx.ut_inv_stag.val();
        self.ut_len.next = self.ddp_rx.ut_len.val();
        self.ut_conn.next = self.ddp_rx.ut_conn.val();
        self.ut_qpn.next = self.ddp_rx.ut_qpn.val();

        // Terminate requests: ddp_rx's first, then the MPA one
        self.ddp_term_sel.next = self.ddp_rx.term_valid.val();
        self.term_valid.next = self.ddp_rx.term_valid.val() | self.fpdu_buf.mterm_valid.val();
        self.ddp_rx.term_ready.next = self.term_pop.val() & self.ddp_term_sel.val();
        self.fpdu_buf.mterm_pop.next = self.term_pop.val() & !self.ddp_term_sel.val();
        if self.ddp_term_sel.val() {
            self.term_cause.next = self.ddp_rx.term_cause.val();
            self.term_conn.next = self.ddp_rx.term_conn.val();
            self.term_qpn.next = self.ddp_rx.term_qpn.val();
            self.term_hdr.next = self.ddp_rx.term_hdr.val();
            self.term_seg_len.next = self.ddp_rx.term_seg_len.val();
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
        self.host_regs.int_event.next = self.fw_port.ev_valid.val() & self.ev_pop.val();
        // INT_EQ_OVERFLOW belongs to the event queue writer (not built yet)
        self.host_regs.int_eq_overflow.next = false;
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
        self.fw_port.ev_ready.next = self.ev_pop.val();
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
        self.fw_port.ct_rd_rcv_nxt.next = self.conn_table.rd_rcv_nxt.val();
        self.fw_port.ct_rd_snd_una.next = self.conn_table.rd_snd_una.val();
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
        self.fwc_up_una.d.next = self.rx_split.up_snd_una.val();

        // Table writes of the firmware port, decoded into the tables'
        // write ports (they win over the direct `*_wr_*` pins in the same
        // clock). Layouts: rnic_wire::abi::context (octet i = bits 8i+7..8i).
        // Connection (TableId 0): the key, mode, MPA flags and sequence state.
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
            self.conn_table.wr_valid.next = true;
            self.conn_table.wr_idx.next = self.fw_port.tw_index.val().get_bits::<8>(0);
            self.conn_table.wr_used.next = self.fw_port.tw_data.val().get_bits::<8>(0) != 0;
            self.conn_table.wr_mode.next = self.fw_port.tw_data.val().get_bits::<2>(0);
            self.conn_table.wr_mpa.next = self.fw_port.tw_data.val().get_bits::<4>(8);
            self.conn_table.wr_local_ip.next = self.fw_port.tw_data.val().get_bits::<32>(32);
            self.conn_table.wr_peer_ip.next = self.fw_port.tw_data.val().get_bits::<32>(64);
            self.conn_table.wr_local_port.next = self.fw_port.tw_data.val().get_bits::<16>(96);
            self.conn_table.wr_peer_port.next = self.fw_port.tw_data.val().get_bits::<16>(112);
            self.conn_table.wr_rcv_nxt.next = self.fw_port.tw_data.val().get_bits::<32>(256);
            self.conn_table.wr_snd_nxt.next = self.fw_port.tw_data.val().get_bits::<32>(288);
            self.conn_table.wr_snd_una.next = self.fw_port.tw_data.val().get_bits::<32>(320);
            self.conn_table.wr_rcv_wnd.next = self.fw_port.tw_data.val().get_bits::<32>(384);
            if self.fwc_keep.val() {
                self.conn_table.wr_rcv_nxt.next = self.conn_table.rd_rcv_nxt.val();
                self.conn_table.wr_snd_una.next = self.conn_table.rd_snd_una.val();
                if self.fwc_up_hit.q.val() {
                    self.conn_table.wr_rcv_nxt.next = self.fwc_up_rcv.q.val();
                    self.conn_table.wr_snd_una.next = self.fwc_up_una.q.val();
                }
            }
            if self.fwc_mpa.val() {
                self.mpa_ram.write_enable.next = true;
                self.mpa_ram.write_address.next = self.fw_port.tw_index.val().get_bits::<8>(0);
                self.mpa_ram.write_data.next = bit_cast::<120, 32>(self.mpa_init.val())
                    | (bit_cast::<120, 32>(self.fw_port.tw_data.val().get_bits::<32>(448)) << 88);
            }
        }
        // QP (TableId 1): qp_ram is per connection, so the entry goes to the
        // QP's `conn` (octets 36..40) when that is a connection index.
        self.fwq_v.next = self.fw_port.tw_valid.val()
            & (self.fw_port.tw_table.val() == 1)
            & (self.fw_port.tw_data.val().get_bits::<24>(296) == 0);
        if self.fwq_v.val() {
            self.qp_ram.write_enable.next = true;
            self.qp_ram.write_address.next = self.fw_port.tw_data.val().get_bits::<8>(288);
            self.qp_ram.write_data.next = bit_cast::<72, 24>(self.fw_port.tw_index.val())
                | (bit_cast::<72, 8>(self.fw_port.tw_data.val().get_bits::<8>(0)) << 32)
                | (bit_cast::<72, 32>(self.fw_port.tw_data.val().get_bits::<32>(32)) << 40);
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
        if self.reset.val() {
            self.fwc_up_hit.d.next = false;
        }
        if self.reset.val() {
            self.sq_state.d.next = 0.into();
        }

        self.cnt_rx_ok.next = self.rx_fifo.cnt_ok.val();
        self.cnt_rx_bad_fcs.next = self.rx_fifo.cnt_bad_fcs.val();
        self.cnt_rx_overflow.next = self.rx_fifo.cnt_overflow.val();
        self.cnt_rx_oversize.next = self.rx_fifo.cnt_oversize.val();
        self.cnt_rx_bad_len.next = self.rx_parse.cnt_bad_len.val();
        self.cnt_rx_bad_ip_csum.next = self.rx_parse.cnt_bad_ip_csum.val();
        self.cnt_rx_bad_tcp_csum.next = self.rx_parse.cnt_bad_tcp_csum.val();
        self.cnt_rx_fast.next = self.rx_split.cnt_fast.val();
        self.cnt_rx_exc.next = self.exc_queue.cnt_queued.val();
        self.cnt_rx_exc_full.next = self.exc_queue.cnt_full.val();
    }
}
