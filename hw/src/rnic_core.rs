//! `rnic_core`: the top of the RTL, composing the blocks that exist so far.
//! Its port list is the contract with `verilator-sys`, `sim` and the FPGA
//! wrapper; it is listed in `hw/generated/rnic_core.ports` and described in
//! `docs/rtl.md`. Add ports at the end of a group; do not rename.
//!
//! Current RX data path:
//! ```text
//! mac_rx_* → RxCheck (header/checksum verdict, 2-clock delay)
//!          → RxFifo (store and forward; drops bad FCS; verdict in the frame record)
//!          → RxParse ──── header record (rx_hdr_*) + realigned TCP payload → rx_pay_*
//!               │  ↕ RxSplit ↔ ConnTable (ct_wr_*, ct_rd_*)  → ack_req_*
//!               └─ whole frames → ExcQueue → exc_*
//! ```
//! A [`Crc32cX64`] computes the CRC32c of every payload leaving on `rx_pay_*`.

use crate::conn_table::ConnTable;
use crate::crc32c_x64::Crc32cX64;
use crate::exc_queue::ExcQueue;
use crate::rx_check::RxCheck;
use crate::rx_fifo::RxFifo;
use crate::rx_parse::RxParse;
use crate::rx_split::RxSplit;
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
    rx_check: RxCheck,
    rx_fifo: RxFifo,
    rx_parse: RxParse,
    rx_split: RxSplit,
    conn_table: ConnTable,
    exc_queue: ExcQueue,
    pay_crc: Crc32cX64,
}

impl Logic for RnicCore {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, rx_check, rx_fifo, rx_parse, rx_split, conn_table, exc_queue, pay_crc);
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

        // payload out
        self.rx_pay_data.next = self.rx_parse.pay_data.val();
        self.rx_pay_keep.next = self.rx_parse.pay_keep.val();
        self.rx_pay_last.next = self.rx_parse.pay_last.val();
        self.rx_pay_valid.next = self.rx_parse.pay_valid.val();
        self.rx_parse.pay_ready.next = self.rx_pay_ready.val();
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
        self.pay_crc.valid.next = self.rx_parse.pay_valid.val() & self.rx_pay_ready.val();
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
