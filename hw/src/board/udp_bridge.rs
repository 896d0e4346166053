//! `UdpBridge`: the core's host interface (BAR0 `csr_*`, DMA `dma_rd_*` /
//! `dma_wr_*`, `irq`) over UDP on an Ethernet port — the "RB" protocol of
//! `docs/bridge.md` (`rnic_wire::abi::bridge`).
//!
//! ```text
//! MAC RX ─► RxFifo (store-and-forward, bad FCS dropped) ─► RX FSM ─┬─► csr_*
//!                                                                 ├─► dma_rd_cpl_*
//!                                     ARP / answer slots ◄────────┘
//! dma_rd_req_*, dma_wr_*, irq ─► TX FSM (frame builder) ─► frame FIFO ─► MAC TX
//! ```
//!
//! * **RX.** The first 8 beats (64 octets: Ethernet, IPv4, UDP and the
//!   22-octet bridge header) are shifted into `hdr` (frames that end earlier
//!   are padded with zero beats). Two check clocks then decide, in the order
//!   of `rnic_wire::abi::bridge::Repr::classify`: an ARP request for the
//!   board's IPv4 address (RFC 826) → the ARP slot; a datagram that is not
//!   for the board (MAC, EtherType, IPv4 version/IHL, fragment, protocol 17,
//!   address, header checksum RFC 791 §3.1, UDP port, lengths, magic,
//!   version) → dropped and counted (`cnt_rx_drop`); a refused request → a
//!   NAK in the answer slot; `MMIO_READ`/`MMIO_WRITE`/`HELLO` → executed once
//!   (a repeated `seq` + opcode is answered from the one-entry cache without
//!   a second access); `DMA_RD_CPL` → its payload beats go to
//!   `dma_rd_cpl_*` if it is the next expected chunk of the outstanding
//!   read, else it is dropped (`cnt_cpl_drop`). The UDP checksum is not
//!   checked (the FCS and the IPv4 header checksum are).
//! * **TX.** One message at a time, in priority order ARP reply, answer,
//!   `IRQ`, `DMA_RD_REQ`, `DMA_WR`: two clocks of IPv4 checksum (RFC 1071,
//!   computed on little-endian lanes: the one's-complement sum is byte-order
//!   independent, RFC 1071 §2(B)), the 8 header beats, then the payload (the
//!   4-octet value, or the core's DMA write beats, which need no realignment
//!   because the payload starts at frame offset 64). Frames go into a
//!   512-beat FIFO and leave only when whole (a frame counter gates the
//!   read side), so a slow DMA source never underruns the MAC.
//! * **DMA reads.** One outstanding (`dma_rd_req_ready` low meanwhile);
//!   re-requested after `retry` clocks without progress (`cnt_rd_retry`).
//! * Nothing is sent before a host is known (the first valid request);
//!   until then DMA requests wait and `irq` changes are not sent.

use super::super::fifo::Fifo;
use super::super::rx_fifo::RxFifoN;
use crate::tx_ddp_hdr::ByteRev;
use rust_hdl::prelude::*;

/// Longest frame the bridge accepts (1500-octet MTU + 14 + 4).
pub const MAX_FRAME: u64 = 1518;

/// The bridge's receive FIFO: the board profile's (`profile::BOARD`, 512
/// beats = 4 KiB, 2 DP16KD instead of 8 for 2048 beats): 2.7 frames of
/// [`MAX_FRAME`], which is the board's frame limit too.
type BridgeRxFifo = RxFifoN<
    { crate::profile::BOARD.rx_fifo_log2 },
    { crate::profile::BOARD.rx_fifo_log2 + 1 },
    { crate::profile::PR_BOARD },
>;
const _: () = assert!(MAX_FRAME == crate::profile::BOARD_MAX_FRAME);

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum RxState {
    Hdr,
    Pad,
    Check1,
    Check2,
    Act,
    Value,
    Mmio,
    MmioWait,
    Cpl,
    CplZero,
    Drain,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum TxState {
    Idle,
    Sum,
    Fold,
    Hdr,
    Value,
    WrData,
}

#[derive(LogicBlock)]
pub struct UdpBridge {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// The board's MAC (first octet on the wire in bits 47:40).
    pub board_mac: Signal<In, Bits<48>>,
    /// The board's IPv4 address (first octet in bits 31:24).
    pub board_ip: Signal<In, Bits<32>>,
    // MAC side.
    pub rx_data: Signal<In, Bits<64>>,
    pub rx_keep: Signal<In, Bits<4>>,
    pub rx_last: Signal<In, Bit>,
    pub rx_valid: Signal<In, Bit>,
    pub rx_fcs_bad: Signal<In, Bit>,
    pub tx_data: Signal<Out, Bits<64>>,
    pub tx_keep: Signal<Out, Bits<4>>,
    pub tx_last: Signal<Out, Bit>,
    pub tx_valid: Signal<Out, Bit>,
    pub tx_ready: Signal<In, Bit>,
    // Core side (docs/rtl.md "Core interfaces").
    pub csr_valid: Signal<Out, Bit>,
    pub csr_write: Signal<Out, Bit>,
    pub csr_addr: Signal<Out, Bits<24>>,
    pub csr_wdata: Signal<Out, Bits<32>>,
    pub csr_rdata: Signal<In, Bits<32>>,
    pub csr_rvalid: Signal<In, Bit>,
    /// The firmware port (docs/bridge.md "Firmware window"): the same shape
    /// as `csr_*`, over `rnic_wire::abi::context::port`.
    pub fw_valid: Signal<Out, Bit>,
    pub fw_write: Signal<Out, Bit>,
    pub fw_addr: Signal<Out, Bits<24>>,
    pub fw_wdata: Signal<Out, Bits<32>>,
    pub fw_rdata: Signal<In, Bits<32>>,
    pub fw_rvalid: Signal<In, Bit>,
    pub dma_rd_req_valid: Signal<In, Bit>,
    pub dma_rd_req_ready: Signal<Out, Bit>,
    pub dma_rd_req_addr: Signal<In, Bits<64>>,
    pub dma_rd_req_len: Signal<In, Bits<16>>,
    pub dma_rd_req_tag: Signal<In, Bits<8>>,
    pub dma_rd_cpl_valid: Signal<Out, Bit>,
    pub dma_rd_cpl_ready: Signal<In, Bit>,
    pub dma_rd_cpl_data: Signal<Out, Bits<64>>,
    pub dma_rd_cpl_keep: Signal<Out, Bits<4>>,
    pub dma_rd_cpl_last: Signal<Out, Bit>,
    pub dma_rd_cpl_tag: Signal<Out, Bits<8>>,
    pub dma_wr_valid: Signal<In, Bit>,
    pub dma_wr_ready: Signal<Out, Bit>,
    pub dma_wr_hdr: Signal<In, Bit>,
    pub dma_wr_len: Signal<In, Bits<16>>,
    pub dma_wr_data: Signal<In, Bits<64>>,
    pub dma_wr_keep: Signal<In, Bits<4>>,
    pub dma_wr_last: Signal<In, Bit>,
    pub irq: Signal<In, Bit>,
    // Status.
    pub host_known: Signal<Out, Bit>,
    /// Requests executed (MMIO, HELLO) and completions taken.
    pub cnt_rx_ok: Signal<Out, Bits<32>>,
    /// Frames not for the bridge, or malformed below the bridge header.
    pub cnt_rx_drop: Signal<Out, Bits<32>>,
    pub cnt_nak: Signal<Out, Bits<32>>,
    pub cnt_dup: Signal<Out, Bits<32>>,
    pub cnt_cpl_drop: Signal<Out, Bits<32>>,
    pub cnt_rd_retry: Signal<Out, Bits<32>>,
    /// Frames shorter than their length fields (payload zero-filled or the
    /// request dropped), and BAR0 reads that got no answer (0xFFFF_FFFF).
    pub cnt_trunc: Signal<Out, Bits<32>>,
    pub cnt_tx_frames: Signal<Out, Bits<32>>,
    /// Clocks after which an incomplete DMA read is requested again.
    retry: Constant<Bits<24>>,
    rxq: BridgeRxFifo,
    txq: Fifo<Bits<69>, 9, 10>,
    mac_rev: ByteRev<48>,
    ip_rev: ByteRev<32>,
    // ---- RX
    rs: DFF<RxState>,
    hdr: DFF<Bits<512>>,
    bi: DFF<Bits<4>>,
    /// Beats of a frame that ended within the header.
    nb: DFF<Bits<4>>,
    ended: DFF<Bit>,
    last_keep: DFF<Bits<4>>,
    /// Checks of clock 1.
    c_ip_sum: DFF<Bits<20>>,
    c_eth_us: DFF<Bit>,
    c_eth_bc: DFF<Bit>,
    c_ipv4: DFF<Bit>,
    c_udp_us: DFF<Bit>,
    c_arp: DFF<Bit>,
    c_short: DFF<Bit>,
    /// Decision of clock 2: 0 drop, 1 ARP, 2 NAK, 3 execute, 4 completion,
    /// 5 duplicate, 6 stale completion.
    d_act: DFF<Bits<3>>,
    d_reason: DFF<Bits<8>>,
    rx_value: DFF<Bits<32>>,
    mmio_wait: DFF<Bits<8>>,
    cpl_rem: DFF<Bits<11>>,
    cpl_final: DFF<Bit>,
    // Host address (little-endian lanes as on the wire).
    h_known: DFF<Bit>,
    h_mac: DFF<Bits<48>>,
    h_ip: DFF<Bits<32>>,
    h_port: DFF<Bits<16>>,
    // One-entry answer cache.
    k_valid: DFF<Bit>,
    k_seq: DFF<Bits<32>>,
    k_op: DFF<Bits<8>>,
    k_value: DFF<Bits<32>>,
    // Answer slot (filled by RX, taken by TX).
    a_pend: DFF<Bit>,
    a_op: DFF<Bits<8>>,
    a_seq: DFF<Bits<32>>,
    a_addr: DFF<Bits<64>>,
    a_tag: DFF<Bits<8>>,
    a_status: DFF<Bits<8>>,
    a_value: DFF<Bits<32>>,
    // ARP slot.
    p_pend: DFF<Bit>,
    p_sha: DFF<Bits<48>>,
    p_spa: DFF<Bits<32>>,
    // Outstanding DMA read.
    r_out: DFF<Bit>,
    r_send: DFF<Bit>,
    r_seq_ok: DFF<Bit>,
    r_seq: DFF<Bits<32>>,
    r_addr: DFF<Bits<64>>,
    r_len: DFF<Bits<16>>,
    r_tag: DFF<Bits<8>>,
    r_exp: DFF<Bits<64>>,
    r_rem: DFF<Bits<13>>,
    r_timer: DFF<Bits<24>>,
    // ---- TX
    ts: DFF<TxState>,
    dev_seq: DFF<Bits<32>>,
    irq_q: DFF<Bit>,
    irq_sent: DFF<Bit>,
    t_arp: DFF<Bit>,
    t_mac: DFF<Bits<48>>,
    t_ip: DFF<Bits<32>>,
    t_port: DFF<Bits<16>>,
    t_op: DFF<Bits<8>>,
    t_seq: DFF<Bits<32>>,
    t_addr: DFF<Bits<64>>,
    t_len: DFF<Bits<16>>,
    t_plen: DFF<Bits<11>>,
    t_tag: DFF<Bits<8>>,
    t_flags: DFF<Bits<8>>,
    t_status: DFF<Bits<8>>,
    t_value: DFF<Bits<32>>,
    t_sum: DFF<Bits<20>>,
    t_csum: DFF<Bits<16>>,
    t_bi: DFF<Bits<4>>,
    t_beats: DFF<Bits<8>>,
    w_active: DFF<Bit>,
    w_addr: DFF<Bits<64>>,
    w_rem: DFF<Bits<13>>,
    tq_frames: DFF<Bits<10>>,
    // counters
    n_ok: DFF<Bits<32>>,
    n_drop: DFF<Bits<32>>,
    n_nak: DFF<Bits<32>>,
    n_dup: DFF<Bits<32>>,
    n_cpl_drop: DFF<Bits<32>>,
    n_retry: DFF<Bits<32>>,
    n_trunc: DFF<Bits<32>>,
    n_tx: DFF<Bits<32>>,
    // temporaries
    board_mac_le: Signal<Local, Bits<48>>,
    board_ip_le: Signal<Local, Bits<32>>,
    in_data: Signal<Local, Bits<64>>,
    in_valid: Signal<Local, Bit>,
    in_last: Signal<Local, Bit>,
    h_op: Signal<Local, Bits<8>>,
    /// The request is for the firmware port (`FW_READ`/`FW_WRITE`).
    h_fw: Signal<Local, Bit>,
    /// The request writes (`MMIO_WRITE`/`FW_WRITE`).
    h_wr: Signal<Local, Bit>,
    h_len: Signal<Local, Bits<16>>,
    h_addr: Signal<Local, Bits<64>>,
    ip_tot: Signal<Local, Bits<16>>,
    udp_len: Signal<Local, Bits<16>>,
    plen_need: Signal<Local, Bits<17>>,
    chunk: Signal<Local, Bits<13>>,
    rs1: Signal<Local, Bits<17>>,
    rs2: Signal<Local, Bits<16>>,
    ts1: Signal<Local, Bits<17>>,
    ts2: Signal<Local, Bits<16>>,
    tx_w: Signal<Local, Bit>,
    tx_wd: Signal<Local, Bits<64>>,
    tx_wk: Signal<Local, Bits<4>>,
    tx_wl: Signal<Local, Bit>,
    tot: Signal<Local, Bits<16>>,
    ulen: Signal<Local, Bits<16>>,
    pop_last: Signal<Local, Bit>,
    push_last: Signal<Local, Bit>,
    w_chunk: Signal<Local, Bits<13>>,
}

impl UdpBridge {
    /// `retry`: clocks after which an incomplete DMA read is requested again
    /// (`rnic_wire::abi::bridge::RD_RETRY_CLOCKS` on the board; small in
    /// tests), below 2^24.
    pub fn new(retry: u64) -> Self {
        assert!(retry > 0 && retry < (1 << 24));
        Self {
            clock: Default::default(),
            reset: Default::default(),
            board_mac: Default::default(),
            board_ip: Default::default(),
            rx_data: Default::default(),
            rx_keep: Default::default(),
            rx_last: Default::default(),
            rx_valid: Default::default(),
            rx_fcs_bad: Default::default(),
            tx_data: Default::default(),
            tx_keep: Default::default(),
            tx_last: Default::default(),
            tx_valid: Default::default(),
            tx_ready: Default::default(),
            csr_valid: Default::default(),
            csr_write: Default::default(),
            csr_addr: Default::default(),
            csr_wdata: Default::default(),
            csr_rdata: Default::default(),
            csr_rvalid: Default::default(),
            fw_valid: Default::default(),
            fw_write: Default::default(),
            fw_addr: Default::default(),
            fw_wdata: Default::default(),
            fw_rdata: Default::default(),
            fw_rvalid: Default::default(),
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
            dma_wr_valid: Default::default(),
            dma_wr_ready: Default::default(),
            dma_wr_hdr: Default::default(),
            dma_wr_len: Default::default(),
            dma_wr_data: Default::default(),
            dma_wr_keep: Default::default(),
            dma_wr_last: Default::default(),
            irq: Default::default(),
            host_known: Default::default(),
            cnt_rx_ok: Default::default(),
            cnt_rx_drop: Default::default(),
            cnt_nak: Default::default(),
            cnt_dup: Default::default(),
            cnt_cpl_drop: Default::default(),
            cnt_rd_retry: Default::default(),
            cnt_trunc: Default::default(),
            cnt_tx_frames: Default::default(),
            retry: Constant::new(retry.into()),
            rxq: BridgeRxFifo::new(MAX_FRAME),
            txq: Default::default(),
            mac_rev: Default::default(),
            ip_rev: Default::default(),
            rs: Default::default(),
            hdr: Default::default(),
            bi: Default::default(),
            nb: Default::default(),
            ended: Default::default(),
            last_keep: Default::default(),
            c_ip_sum: Default::default(),
            c_eth_us: Default::default(),
            c_eth_bc: Default::default(),
            c_ipv4: Default::default(),
            c_udp_us: Default::default(),
            c_arp: Default::default(),
            c_short: Default::default(),
            d_act: Default::default(),
            d_reason: Default::default(),
            rx_value: Default::default(),
            mmio_wait: Default::default(),
            cpl_rem: Default::default(),
            cpl_final: Default::default(),
            h_known: Default::default(),
            h_mac: Default::default(),
            h_ip: Default::default(),
            h_port: Default::default(),
            k_valid: Default::default(),
            k_seq: Default::default(),
            k_op: Default::default(),
            k_value: Default::default(),
            a_pend: Default::default(),
            a_op: Default::default(),
            a_seq: Default::default(),
            a_addr: Default::default(),
            a_tag: Default::default(),
            a_status: Default::default(),
            a_value: Default::default(),
            p_pend: Default::default(),
            p_sha: Default::default(),
            p_spa: Default::default(),
            r_out: Default::default(),
            r_send: Default::default(),
            r_seq_ok: Default::default(),
            r_seq: Default::default(),
            r_addr: Default::default(),
            r_len: Default::default(),
            r_tag: Default::default(),
            r_exp: Default::default(),
            r_rem: Default::default(),
            r_timer: Default::default(),
            ts: Default::default(),
            dev_seq: Default::default(),
            irq_q: Default::default(),
            irq_sent: Default::default(),
            t_arp: Default::default(),
            t_mac: Default::default(),
            t_ip: Default::default(),
            t_port: Default::default(),
            t_op: Default::default(),
            t_seq: Default::default(),
            t_addr: Default::default(),
            t_len: Default::default(),
            t_plen: Default::default(),
            t_tag: Default::default(),
            t_flags: Default::default(),
            t_status: Default::default(),
            t_value: Default::default(),
            t_sum: Default::default(),
            t_csum: Default::default(),
            t_bi: Default::default(),
            t_beats: Default::default(),
            w_active: Default::default(),
            w_addr: Default::default(),
            w_rem: Default::default(),
            tq_frames: Default::default(),
            n_ok: Default::default(),
            n_drop: Default::default(),
            n_nak: Default::default(),
            n_dup: Default::default(),
            n_cpl_drop: Default::default(),
            n_retry: Default::default(),
            n_trunc: Default::default(),
            n_tx: Default::default(),
            board_mac_le: Default::default(),
            board_ip_le: Default::default(),
            in_data: Default::default(),
            in_valid: Default::default(),
            in_last: Default::default(),
            h_op: Default::default(),
            h_fw: Default::default(),
            h_wr: Default::default(),
            h_len: Default::default(),
            h_addr: Default::default(),
            ip_tot: Default::default(),
            udp_len: Default::default(),
            plen_need: Default::default(),
            chunk: Default::default(),
            rs1: Default::default(),
            rs2: Default::default(),
            ts1: Default::default(),
            ts2: Default::default(),
            tx_w: Default::default(),
            tx_wd: Default::default(),
            tx_wk: Default::default(),
            tx_wl: Default::default(),
            tot: Default::default(),
            ulen: Default::default(),
            pop_last: Default::default(),
            push_last: Default::default(),
            w_chunk: Default::default(),
        }
    }
}

impl Default for UdpBridge {
    fn default() -> Self {
        Self::new(1 << 20)
    }
}

impl Logic for UdpBridge {
    // Literals (rust-hdl cannot name Rust constants in HDL), all as read
    // from little-endian lanes (octet k of a frame in bits 8k+7..8k):
    // EtherType IPv4 0x0008 (octets 08 00), ARP 0x0608; IPv4 version/IHL
    // 0x45; protocol 17 (UDP); BRIDGE_PORT 0x5242 in network order = 0x4252;
    // MAGIC 0x5242; VERSION 1. Opcodes: 0x01 MMIO_READ, 0x02 MMIO_WRITE,
    // 0x03 HELLO, 0x13 DMA_RD_CPL, 0x10 DMA_RD_REQ, 0x11 DMA_WR, 0x12 IRQ,
    // 0x7F NAK, 0x05 FW_READ, 0x06 FW_WRITE, answers = request | 0x80. NAK reasons: 1 BAD_OPCODE,
    // 2 BAD_LENGTH, 3 BAD_ADDRESS, 4 BAD_FIELD. Flags: 1 LAST, 2 IRQ.
    // MAX_PAYLOAD 1024.
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, rs, hdr, bi, nb, ended, last_keep, c_ip_sum, c_eth_us, c_eth_bc, c_ipv4,
            c_udp_us, c_arp, c_short, d_act, d_reason, rx_value, mmio_wait, cpl_rem, cpl_final,
            h_known, h_mac, h_ip, h_port, k_valid, k_seq, k_op, k_value, a_pend, a_op, a_seq,
            a_addr, a_tag, a_status, a_value, p_pend, p_sha, p_spa, r_out, r_send, r_seq_ok, r_seq,
            r_addr, r_len, r_tag, r_exp, r_rem, r_timer, ts, dev_seq, irq_q, irq_sent, t_arp,
            t_mac, t_ip, t_port, t_op, t_seq, t_addr, t_len, t_plen, t_tag, t_flags, t_status,
            t_value, t_sum, t_csum, t_bi, t_beats, w_active, w_addr, w_rem, tq_frames, n_ok,
            n_drop, n_nak, n_dup, n_cpl_drop, n_retry, n_trunc, n_tx
        );
        clock!(self, clock, rxq, txq);
        self.rxq.reset.next = self.reset.val();
        self.txq.reset.next = self.reset.val();
        self.mac_rev.din.next = self.board_mac.val();
        self.ip_rev.din.next = self.board_ip.val();
        self.board_mac_le.next = self.mac_rev.dout.val();
        self.board_ip_le.next = self.ip_rev.dout.val();

        self.rxq.in_data.next = self.rx_data.val();
        self.rxq.in_keep.next = self.rx_keep.val();
        self.rxq.in_last.next = self.rx_last.val();
        self.rxq.in_valid.next = self.rx_valid.val();
        self.rxq.in_fcs_bad.next = self.rx_fcs_bad.val();
        self.rxq.in_tag.next = 0.into();
        self.in_data.next = self.rxq.out_data.val();
        self.in_valid.next = self.rxq.out_valid.val();
        self.in_last.next = self.rxq.out_last.val();
        self.rxq.out_ready.next = false;

        self.host_known.next = self.h_known.q.val();
        self.cnt_rx_ok.next = self.n_ok.q.val();
        self.cnt_rx_drop.next = self.n_drop.q.val();
        self.cnt_nak.next = self.n_nak.q.val();
        self.cnt_dup.next = self.n_dup.q.val();
        self.cnt_cpl_drop.next = self.n_cpl_drop.q.val();
        self.cnt_rd_retry.next = self.n_retry.q.val();
        self.cnt_trunc.next = self.n_trunc.q.val();
        self.cnt_tx_frames.next = self.n_tx.q.val();

        self.csr_valid.next = false;
        self.csr_write.next = false;
        self.csr_addr.next = self.hdr.q.val().get_bits::<24>(400);
        self.csr_wdata.next = self.rx_value.q.val();
        self.fw_valid.next = false;
        self.fw_write.next = false;
        self.fw_addr.next = self.hdr.q.val().get_bits::<24>(400);
        self.fw_wdata.next = self.rx_value.q.val();
        self.dma_rd_cpl_valid.next = false;
        self.dma_rd_cpl_data.next = self.in_data.val();
        self.dma_rd_cpl_keep.next = 8.into();
        if self.cpl_rem.q.val() < 8 {
            self.dma_rd_cpl_keep.next = self.cpl_rem.q.val().get_bits::<4>(0);
        }
        self.dma_rd_cpl_last.next = self.cpl_final.q.val() & (self.cpl_rem.q.val() <= 8);
        self.dma_rd_cpl_tag.next = self.r_tag.q.val();

        // Header fields of the frame in `hdr`.
        self.h_op.next = self.hdr.q.val().get_bits::<8>(360);
        self.h_fw.next = (self.h_op.val() == 0x05) | (self.h_op.val() == 0x06);
        self.h_wr.next = (self.h_op.val() == 0x02) | (self.h_op.val() == 0x06);
        self.h_len.next = self.hdr.q.val().get_bits::<16>(464);
        self.h_addr.next = self.hdr.q.val().get_bits::<64>(400);
        self.ip_tot.next = (bit_cast::<16, 8>(self.hdr.q.val().get_bits::<8>(128)) << 8)
            | bit_cast::<16, 8>(self.hdr.q.val().get_bits::<8>(136));
        self.udp_len.next = (bit_cast::<16, 8>(self.hdr.q.val().get_bits::<8>(304)) << 8)
            | bit_cast::<16, 8>(self.hdr.q.val().get_bits::<8>(312));
        // Payload octets the opcode carries (DMA_RD_REQ: none) + header + 8.
        self.plen_need.next = bit_cast::<17, 16>(self.h_len.val()) + 30;
        if self.h_op.val() == 0x10 {
            self.plen_need.next = 30.into();
        }
        // The next chunk of the outstanding read.
        self.chunk.next = self.r_rem.q.val();
        if self.r_rem.q.val() > 1024 {
            self.chunk.next = 1024.into();
        }

        // One's-complement folds (RFC 1071) of the two checksum sums.
        self.rs1.next = bit_cast::<17, 16>(self.c_ip_sum.q.val().get_bits::<16>(0))
            + bit_cast::<17, 4>(self.c_ip_sum.q.val().get_bits::<4>(16));
        self.rs2.next =
            self.rs1.val().get_bits::<16>(0) + bit_cast::<16, 1>(self.rs1.val().get_bits::<1>(16));
        self.ts1.next = bit_cast::<17, 16>(self.t_sum.q.val().get_bits::<16>(0))
            + bit_cast::<17, 4>(self.t_sum.q.val().get_bits::<4>(16));
        self.ts2.next =
            self.ts1.val().get_bits::<16>(0) + bit_cast::<16, 1>(self.ts1.val().get_bits::<1>(16));

        // Retry timer of the outstanding DMA read (before the RX state
        // machine, whose progress restarts it).
        if self.r_out.q.val() & !self.r_send.q.val() {
            self.r_timer.d.next = self.r_timer.q.val() + 1;
            if self.r_timer.q.val() == self.retry.val() {
                self.r_send.d.next = true;
                self.r_timer.d.next = 0.into();
                self.n_retry.d.next = self.n_retry.q.val() + 1;
            }
        }

        // ---------------- RX
        match self.rs.q.val() {
            RxState::Hdr => {
                self.rxq.out_ready.next = true;
                if self.in_valid.val() {
                    self.hdr.d.next =
                        (self.hdr.q.val() >> 64) | (bit_cast::<512, 64>(self.in_data.val()) << 448);
                    self.bi.d.next = self.bi.q.val() + 1;
                    self.last_keep.d.next = self.rxq.out_keep.val();
                    if self.in_last.val() {
                        self.ended.d.next = true;
                        self.nb.d.next = self.bi.q.val() + 1;
                        self.rs.d.next = RxState::Pad;
                    } else if self.bi.q.val() == 7 {
                        self.rs.d.next = RxState::Check1;
                    }
                }
            }
            RxState::Pad => {
                if self.bi.q.val() == 8 {
                    self.rs.d.next = RxState::Check1;
                } else {
                    self.hdr.d.next = self.hdr.q.val() >> 64;
                    self.bi.d.next = self.bi.q.val() + 1;
                }
            }
            RxState::Check1 => {
                // IPv4 header checksum over octets 14..34 (lanes 7..16).
                self.c_ip_sum.d.next = bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(112))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(128))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(144))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(160))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(176))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(192))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(208))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(224))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(240))
                    + bit_cast::<20, 16>(self.hdr.q.val().get_bits::<16>(256));
                self.c_eth_us.d.next =
                    self.hdr.q.val().get_bits::<48>(0) == self.board_mac_le.val();
                self.c_eth_bc.d.next = self.hdr.q.val().get_bits::<48>(0) == 0xFFFF_FFFF_FFFF_u64;
                // IPv4, version 4 / IHL 5, not a fragment (MF and offset 0),
                // UDP, to the board's address.
                self.c_ipv4.d.next = (self.hdr.q.val().get_bits::<16>(96) == 0x0008)
                    & (self.hdr.q.val().get_bits::<8>(112) == 0x45)
                    & (self.hdr.q.val().get_bits::<6>(160) == 0)
                    & (self.hdr.q.val().get_bits::<8>(168) == 0)
                    & (self.hdr.q.val().get_bits::<8>(184) == 17)
                    & (self.hdr.q.val().get_bits::<32>(240) == self.board_ip_le.val());
                // UDP to BRIDGE_PORT, UDP length within the IPv4 datagram and
                // holding the bridge header, magic and version.
                self.c_udp_us.d.next = (self.hdr.q.val().get_bits::<16>(288) == 0x4252)
                    & (bit_cast::<17, 16>(self.udp_len.val()) + 20
                        <= bit_cast::<17, 16>(self.ip_tot.val()))
                    & (self.udp_len.val() >= 30)
                    & (self.hdr.q.val().get_bits::<16>(336) == 0x5242)
                    & (self.hdr.q.val().get_bits::<8>(352) == 1);
                // ARP request (RFC 826): Ethernet/IPv4 hardware and protocol,
                // lengths 6 and 4, operation 1, target = the board's address.
                self.c_arp.d.next = (self.hdr.q.val().get_bits::<16>(96) == 0x0608)
                    & (self.hdr.q.val().get_bits::<16>(112) == 0x0100)
                    & (self.hdr.q.val().get_bits::<16>(128) == 0x0008)
                    & (self.hdr.q.val().get_bits::<16>(144) == 0x0406)
                    & (self.hdr.q.val().get_bits::<16>(160) == 0x0100)
                    & (self.hdr.q.val().get_bits::<32>(304) == self.board_ip_le.val());
                // A frame that ended in the header: shorter than 42 octets
                // (no ARP) / 64 (no bridge header).
                self.c_short.d.next =
                    self.ended.q.val() & ((self.nb.q.val() < 8) | (self.last_keep.q.val() != 8));
                self.rs.d.next = RxState::Check2;
            }
            RxState::Check2 => {
                self.d_act.d.next = 0.into();
                self.d_reason.d.next = 0.into();
                if self.c_arp.q.val() & (self.c_eth_us.q.val() | self.c_eth_bc.q.val()) {
                    // ARP needs 42 octets: 6 beats, the 6th with >= 2.
                    if !self.ended.q.val()
                        | (self.nb.q.val() > 6)
                        | ((self.nb.q.val() == 6) & (self.last_keep.q.val() >= 2))
                    {
                        self.d_act.d.next = 1.into();
                    }
                } else if self.c_eth_us.q.val()
                    & self.c_ipv4.q.val()
                    & self.c_udp_us.q.val()
                    & (self.rs2.val() == 0xFFFF)
                    & !self.c_short.q.val()
                {
                    // The bridge's checks, in `Repr::classify`'s order.
                    if (self.h_op.val() != 0x01)
                        & (self.h_op.val() != 0x02)
                        & (self.h_op.val() != 0x03)
                        & (self.h_op.val() != 0x13)
                        & !self.h_fw.val()
                    {
                        self.d_act.d.next = 2.into();
                        self.d_reason.d.next = 1.into();
                    } else if (self.hdr.q.val().get_bits::<8>(504) != 0)
                        | (self.hdr.q.val().get_bits::<6>(490) != 0)
                    {
                        self.d_act.d.next = 2.into();
                        self.d_reason.d.next = 4.into();
                    } else if (bit_cast::<17, 16>(self.udp_len.val()) < self.plen_need.val())
                        | (((self.h_op.val() == 0x01)
                            | (self.h_op.val() == 0x03)
                            | (self.h_op.val() == 0x05))
                            & (self.h_len.val() != 0))
                        | (self.h_wr.val() & (self.h_len.val() != 4))
                        | ((self.h_op.val() == 0x13)
                            & ((self.h_len.val() == 0) | (self.h_len.val() > 1024)))
                    {
                        // Datagram shorter than header + len, or a len the
                        // opcode does not allow.
                        self.d_act.d.next = 2.into();
                        self.d_reason.d.next = 2.into();
                    } else if ((self.h_op.val() == 0x01) | (self.h_op.val() == 0x02))
                        & ((self.h_addr.val().get_bits::<2>(0) != 0)
                            | (self.h_addr.val().get_bits::<40>(24) != 0))
                    {
                        self.d_act.d.next = 2.into();
                        self.d_reason.d.next = 3.into();
                    } else if self.h_fw.val()
                        & ((self.h_addr.val().get_bits::<2>(0) != 0)
                            | (self.h_addr.val().get_bits::<51>(13) != 0))
                    {
                        // Firmware port: 4-aligned, below port::SIZE
                        // (0x2000 = FW_LIMIT).
                        self.d_act.d.next = 2.into();
                        self.d_reason.d.next = 3.into();
                    } else if self.h_op.val() == 0x13 {
                        self.d_act.d.next = 6.into();
                        if self.r_out.q.val()
                            & (self.hdr.q.val().get_bits::<8>(480) == self.r_tag.q.val())
                            & (self.h_addr.val() == self.r_exp.q.val())
                            & (bit_cast::<13, 16>(self.h_len.val()) == self.chunk.val())
                            & (self.hdr.q.val().get_bit(488) == (self.r_rem.q.val() <= 1024))
                        {
                            self.d_act.d.next = 4.into();
                        }
                    } else if self.k_valid.q.val()
                        & (self.k_seq.q.val() == self.hdr.q.val().get_bits::<32>(368))
                        & (self.k_op.q.val() == self.h_op.val())
                    {
                        self.d_act.d.next = 5.into();
                    } else {
                        self.d_act.d.next = 3.into();
                    }
                }
                self.rs.d.next = RxState::Act;
            }
            RxState::Act => {
                // 0 drop, 1 ARP, 2 NAK, 3 execute, 4 completion, 5 duplicate,
                // 6 stale completion.
                if self.d_act.q.val() == 0 {
                    self.n_drop.d.next = self.n_drop.q.val() + 1;
                    self.rs.d.next = RxState::Drain;
                } else if self.d_act.q.val() == 1 {
                    if !self.p_pend.q.val() {
                        self.p_pend.d.next = true;
                        self.p_sha.d.next = self.hdr.q.val().get_bits::<48>(176);
                        self.p_spa.d.next = self.hdr.q.val().get_bits::<32>(224);
                        self.rs.d.next = RxState::Drain;
                    }
                } else if self.d_act.q.val() == 6 {
                    self.n_cpl_drop.d.next = self.n_cpl_drop.q.val() + 1;
                    self.rs.d.next = RxState::Drain;
                } else if self.d_act.q.val() == 4 {
                    self.h_known.d.next = true;
                    self.h_mac.d.next = self.hdr.q.val().get_bits::<48>(48);
                    self.h_ip.d.next = self.hdr.q.val().get_bits::<32>(208);
                    self.h_port.d.next = self.hdr.q.val().get_bits::<16>(272);
                    self.n_ok.d.next = self.n_ok.q.val() + 1;
                    self.cpl_rem.d.next = self.h_len.val().get_bits::<11>(0);
                    self.cpl_final.d.next = self.r_rem.q.val() <= 1024;
                    self.r_exp.d.next = self.r_exp.q.val() + bit_cast::<64, 16>(self.h_len.val());
                    self.r_rem.d.next = self.r_rem.q.val() - self.chunk.val();
                    self.r_timer.d.next = 0.into();
                    if self.ended.q.val() {
                        self.n_trunc.d.next = self.n_trunc.q.val() + 1;
                        self.rs.d.next = RxState::CplZero;
                    } else {
                        self.rs.d.next = RxState::Cpl;
                    }
                } else if !self.a_pend.q.val() {
                    // NAK, duplicate or execute: the answer slot is free.
                    self.h_known.d.next = true;
                    self.h_mac.d.next = self.hdr.q.val().get_bits::<48>(48);
                    self.h_ip.d.next = self.hdr.q.val().get_bits::<32>(208);
                    self.h_port.d.next = self.hdr.q.val().get_bits::<16>(272);
                    self.a_seq.d.next = self.hdr.q.val().get_bits::<32>(368);
                    self.a_addr.d.next = self.h_addr.val();
                    self.a_tag.d.next = 0.into();
                    self.a_status.d.next = 0.into();
                    self.a_op.d.next = self.h_op.val() | 0x80;
                    if self.d_act.q.val() == 2 {
                        self.a_op.d.next = 0x7F.into();
                        self.a_tag.d.next = self.h_op.val();
                        self.a_status.d.next = self.d_reason.q.val();
                        self.a_pend.d.next = true;
                        self.n_nak.d.next = self.n_nak.q.val() + 1;
                        self.rs.d.next = RxState::Drain;
                    } else if self.d_act.q.val() == 5 {
                        self.a_value.d.next = self.k_value.q.val();
                        self.a_pend.d.next = true;
                        self.n_dup.d.next = self.n_dup.q.val() + 1;
                        self.rs.d.next = RxState::Drain;
                    } else if self.h_op.val() == 0x03 {
                        // HELLO: the next device sequence number.
                        self.a_value.d.next = self.dev_seq.q.val();
                        self.k_value.d.next = self.dev_seq.q.val();
                        self.k_valid.d.next = true;
                        self.k_seq.d.next = self.hdr.q.val().get_bits::<32>(368);
                        self.k_op.d.next = self.h_op.val();
                        self.a_pend.d.next = true;
                        self.n_ok.d.next = self.n_ok.q.val() + 1;
                        self.rs.d.next = RxState::Drain;
                    } else if self.h_wr.val() {
                        if self.ended.q.val() {
                            // No value beat: shorter than its lengths.
                            self.n_trunc.d.next = self.n_trunc.q.val() + 1;
                            self.rs.d.next = RxState::Drain;
                        } else {
                            self.rs.d.next = RxState::Value;
                        }
                    } else {
                        self.rs.d.next = RxState::Mmio;
                    }
                }
            }
            RxState::Value => {
                self.rxq.out_ready.next = true;
                if self.in_valid.val() {
                    self.rx_value.d.next = self.in_data.val().get_bits::<32>(0);
                    self.ended.d.next = self.in_last.val();
                    if self.in_last.val() & (self.rxq.out_keep.val() < 4) {
                        self.n_trunc.d.next = self.n_trunc.q.val() + 1;
                        self.rs.d.next = RxState::Hdr;
                        self.bi.d.next = 0.into();
                        self.ended.d.next = false;
                    } else {
                        self.rs.d.next = RxState::Mmio;
                    }
                }
            }
            RxState::Mmio => {
                // One access on BAR0 or on the firmware port.
                self.csr_valid.next = !self.h_fw.val();
                self.csr_write.next = self.h_wr.val();
                self.fw_valid.next = self.h_fw.val();
                self.fw_write.next = self.h_wr.val();
                self.mmio_wait.d.next = 0.into();
                self.k_valid.d.next = true;
                self.k_seq.d.next = self.hdr.q.val().get_bits::<32>(368);
                self.k_op.d.next = self.h_op.val();
                self.n_ok.d.next = self.n_ok.q.val() + 1;
                if self.h_wr.val() {
                    self.k_value.d.next = 0.into();
                    self.a_value.d.next = 0.into();
                    self.a_pend.d.next = true;
                    self.rs.d.next = RxState::Drain;
                } else {
                    self.rs.d.next = RxState::MmioWait;
                }
            }
            RxState::MmioWait => {
                self.mmio_wait.d.next = self.mmio_wait.q.val() + 1;
                if self.csr_rvalid.val() & !self.h_fw.val() {
                    self.k_value.d.next = self.csr_rdata.val();
                    self.a_value.d.next = self.csr_rdata.val();
                    self.a_pend.d.next = true;
                    self.rs.d.next = RxState::Drain;
                } else if self.fw_rvalid.val() & self.h_fw.val() {
                    self.k_value.d.next = self.fw_rdata.val();
                    self.a_value.d.next = self.fw_rdata.val();
                    self.a_pend.d.next = true;
                    self.rs.d.next = RxState::Drain;
                } else if self.mmio_wait.q.val() == 255 {
                    // No answer from BAR0: all ones, as a PCIe read of a
                    // missing device.
                    self.k_value.d.next = 0xFFFF_FFFF_u64.into();
                    self.a_value.d.next = 0xFFFF_FFFF_u64.into();
                    self.a_pend.d.next = true;
                    self.n_trunc.d.next = self.n_trunc.q.val() + 1;
                    self.rs.d.next = RxState::Drain;
                }
            }
            RxState::Cpl => {
                self.dma_rd_cpl_valid.next = self.in_valid.val();
                self.rxq.out_ready.next = self.dma_rd_cpl_ready.val();
                if self.in_valid.val() & self.dma_rd_cpl_ready.val() {
                    if self.cpl_rem.q.val() <= 8 {
                        self.cpl_rem.d.next = 0.into();
                        if self.cpl_final.q.val() {
                            self.r_out.d.next = false;
                        }
                        self.ended.d.next = self.in_last.val();
                        self.rs.d.next = RxState::Drain;
                    } else {
                        self.cpl_rem.d.next = self.cpl_rem.q.val() - 8;
                        if self.in_last.val() {
                            // The frame is shorter than its lengths: the
                            // rest of the chunk is zeros (defined, counted).
                            self.ended.d.next = true;
                            self.n_trunc.d.next = self.n_trunc.q.val() + 1;
                            self.rs.d.next = RxState::CplZero;
                        }
                    }
                }
            }
            RxState::CplZero => {
                self.dma_rd_cpl_valid.next = true;
                self.dma_rd_cpl_data.next = 0.into();
                if self.dma_rd_cpl_ready.val() {
                    if self.cpl_rem.q.val() <= 8 {
                        self.cpl_rem.d.next = 0.into();
                        if self.cpl_final.q.val() {
                            self.r_out.d.next = false;
                        }
                        self.rs.d.next = RxState::Drain;
                    } else {
                        self.cpl_rem.d.next = self.cpl_rem.q.val() - 8;
                    }
                }
            }
            RxState::Drain => {
                if self.ended.q.val() {
                    self.rs.d.next = RxState::Hdr;
                    self.bi.d.next = 0.into();
                    self.ended.d.next = false;
                } else {
                    self.rxq.out_ready.next = true;
                    if self.in_valid.val() & self.in_last.val() {
                        self.rs.d.next = RxState::Hdr;
                        self.bi.d.next = 0.into();
                    }
                }
            }
            _ => {
                self.rs.d.next = RxState::Hdr;
            }
        }

        // ---------------- DMA read requests
        self.dma_rd_req_ready.next = self.h_known.q.val() & !self.r_out.q.val();
        if self.dma_rd_req_valid.val() & self.h_known.q.val() & !self.r_out.q.val() {
            self.r_out.d.next = true;
            self.r_send.d.next = true;
            self.r_seq_ok.d.next = false;
            self.r_addr.d.next = self.dma_rd_req_addr.val();
            self.r_exp.d.next = self.dma_rd_req_addr.val();
            self.r_len.d.next = self.dma_rd_req_len.val();
            self.r_rem.d.next = self.dma_rd_req_len.val().get_bits::<13>(0);
            self.r_tag.d.next = self.dma_rd_req_tag.val();
            self.r_timer.d.next = 0.into();
        }
        self.irq_q.d.next = self.irq.val();

        // ---------------- TX
        self.tx_w.next = false;
        self.tx_wd.next = 0.into();
        self.tx_wk.next = 8.into();
        self.tx_wl.next = false;
        self.dma_wr_ready.next = false;
        self.tot.next = bit_cast::<16, 11>(self.t_plen.q.val()) + 50;
        self.ulen.next = bit_cast::<16, 11>(self.t_plen.q.val()) + 30;
        self.w_chunk.next = self.w_rem.q.val();
        if self.w_rem.q.val() > 1024 {
            self.w_chunk.next = 1024.into();
        }
        match self.ts.q.val() {
            TxState::Idle => {
                self.t_bi.d.next = 0.into();
                self.t_arp.d.next = false;
                self.t_mac.d.next = self.h_mac.q.val();
                self.t_ip.d.next = self.h_ip.q.val();
                self.t_port.d.next = self.h_port.q.val();
                self.t_tag.d.next = 0.into();
                self.t_flags.d.next = 0.into();
                self.t_status.d.next = 0.into();
                self.t_plen.d.next = 0.into();
                self.t_len.d.next = 0.into();
                self.t_addr.d.next = 0.into();
                if self.p_pend.q.val() {
                    self.p_pend.d.next = false;
                    self.t_arp.d.next = true;
                    self.t_mac.d.next = self.p_sha.q.val();
                    self.t_ip.d.next = self.p_spa.q.val();
                    self.ts.d.next = TxState::Sum;
                } else if self.a_pend.q.val() {
                    self.a_pend.d.next = false;
                    self.t_op.d.next = self.a_op.q.val();
                    self.t_seq.d.next = self.a_seq.q.val();
                    self.t_value.d.next = self.a_value.q.val();
                    if self.a_op.q.val() == 0x7F {
                        self.t_addr.d.next = self.a_addr.q.val();
                        self.t_tag.d.next = self.a_tag.q.val();
                        self.t_status.d.next = self.a_status.q.val();
                    } else if (self.a_op.q.val() == 0x81) | (self.a_op.q.val() == 0x85) {
                        self.t_plen.d.next = 4.into();
                        self.t_len.d.next = 4.into();
                    } else if self.a_op.q.val() == 0x83 {
                        self.t_addr.d.next = bit_cast::<64, 32>(self.a_value.q.val());
                    }
                    self.ts.d.next = TxState::Sum;
                } else if self.h_known.q.val() & (self.irq_q.q.val() != self.irq_sent.q.val()) {
                    self.irq_sent.d.next = self.irq_q.q.val();
                    self.t_op.d.next = 0x12.into();
                    self.t_seq.d.next = self.dev_seq.q.val();
                    self.dev_seq.d.next = self.dev_seq.q.val() + 1;
                    if self.irq_q.q.val() {
                        self.t_flags.d.next = 2.into();
                    }
                    self.ts.d.next = TxState::Sum;
                } else if self.r_send.q.val() {
                    self.r_send.d.next = false;
                    self.t_op.d.next = 0x10.into();
                    self.t_seq.d.next = self.r_seq.q.val();
                    if !self.r_seq_ok.q.val() {
                        self.r_seq_ok.d.next = true;
                        self.r_seq.d.next = self.dev_seq.q.val();
                        self.t_seq.d.next = self.dev_seq.q.val();
                        self.dev_seq.d.next = self.dev_seq.q.val() + 1;
                    }
                    self.t_addr.d.next = self.r_addr.q.val();
                    self.t_len.d.next = self.r_len.q.val();
                    self.t_tag.d.next = self.r_tag.q.val();
                    self.r_timer.d.next = 0.into();
                    self.ts.d.next = TxState::Sum;
                } else if self.w_active.q.val() {
                    // The next chunk of a DMA write.
                    self.t_op.d.next = 0x11.into();
                    self.t_seq.d.next = self.dev_seq.q.val();
                    self.dev_seq.d.next = self.dev_seq.q.val() + 1;
                    self.t_addr.d.next = self.w_addr.q.val();
                    self.t_len.d.next = bit_cast::<16, 13>(self.w_chunk.val());
                    self.t_plen.d.next = self.w_chunk.val().get_bits::<11>(0);
                    if self.w_rem.q.val() <= 1024 {
                        self.t_flags.d.next = 1.into();
                    }
                    self.w_addr.d.next =
                        self.w_addr.q.val() + bit_cast::<64, 13>(self.w_chunk.val());
                    self.w_rem.d.next = self.w_rem.q.val() - self.w_chunk.val();
                    self.ts.d.next = TxState::Sum;
                } else if self.h_known.q.val() & self.dma_wr_valid.val() {
                    // A request's header beat (a data beat here breaks the
                    // contract: consumed and ignored).
                    self.dma_wr_ready.next = true;
                    if self.dma_wr_hdr.val()
                        & (self.dma_wr_len.val() != 0)
                        & (self.dma_wr_len.val() <= 4096)
                    {
                        self.w_active.d.next = true;
                        self.w_addr.d.next = self.dma_wr_data.val();
                        self.w_rem.d.next = self.dma_wr_len.val().get_bits::<13>(0);
                    }
                }
            }
            TxState::Sum => {
                // IPv4 header words as read from little-endian lanes
                // (0x0045 version/IHL, 0x0040 DF, 0x1140 TTL 64 / UDP: sum
                // 0x11C5), the total length in network order, addresses.
                self.t_sum.d.next =
                    bit_cast::<20, 16>((self.tot.val() << 8) | (self.tot.val() >> 8))
                        + bit_cast::<20, 16>(self.board_ip_le.val().get_bits::<16>(0))
                        + bit_cast::<20, 16>(self.board_ip_le.val().get_bits::<16>(16))
                        + bit_cast::<20, 16>(self.t_ip.q.val().get_bits::<16>(0))
                        + bit_cast::<20, 16>(self.t_ip.q.val().get_bits::<16>(16))
                        + 0x11C5;
                self.t_beats.d.next = 8.into();
                if self.t_arp.q.val() {
                    self.t_beats.d.next = 6.into();
                }
                self.ts.d.next = TxState::Fold;
            }
            TxState::Fold => {
                self.t_csum.d.next = !self.ts2.val();
                self.ts.d.next = TxState::Hdr;
            }
            TxState::Hdr => {
                self.tx_w.next = !self.txq.full.val();
                if self.t_arp.q.val() {
                    // RFC 826 reply: to the requester, from the board.
                    if self.t_bi.q.val() == 0 {
                        self.tx_wd.next = bit_cast::<64, 48>(self.t_mac.q.val())
                            | (bit_cast::<64, 16>(self.board_mac_le.val().get_bits::<16>(0)) << 48);
                    } else if self.t_bi.q.val() == 1 {
                        self.tx_wd.next =
                            bit_cast::<64, 32>(self.board_mac_le.val().get_bits::<32>(16))
                                | (bits::<64>(0x0608) << 32)
                                | (bits::<64>(0x0100) << 48);
                    } else if self.t_bi.q.val() == 2 {
                        self.tx_wd.next = bits::<64>(0x0200_0406_0008_u64)
                            | (bit_cast::<64, 16>(self.board_mac_le.val().get_bits::<16>(0)) << 48);
                    } else if self.t_bi.q.val() == 3 {
                        self.tx_wd.next =
                            bit_cast::<64, 32>(self.board_mac_le.val().get_bits::<32>(16))
                                | (bit_cast::<64, 32>(self.board_ip_le.val()) << 32);
                    } else if self.t_bi.q.val() == 4 {
                        self.tx_wd.next = bit_cast::<64, 48>(self.t_mac.q.val())
                            | (bit_cast::<64, 16>(self.t_ip.q.val().get_bits::<16>(0)) << 48);
                    } else {
                        self.tx_wd.next = bit_cast::<64, 16>(self.t_ip.q.val().get_bits::<16>(16));
                        self.tx_wk.next = 2.into();
                        self.tx_wl.next = true;
                    }
                } else {
                    if self.t_bi.q.val() == 0 {
                        self.tx_wd.next = bit_cast::<64, 48>(self.t_mac.q.val())
                            | (bit_cast::<64, 16>(self.board_mac_le.val().get_bits::<16>(0)) << 48);
                    } else if self.t_bi.q.val() == 1 {
                        self.tx_wd.next =
                            bit_cast::<64, 32>(self.board_mac_le.val().get_bits::<32>(16))
                                | (bits::<64>(0x0008) << 32)
                                | (bits::<64>(0x0045) << 48);
                    } else if self.t_bi.q.val() == 2 {
                        self.tx_wd.next =
                            bit_cast::<64, 16>((self.tot.val() << 8) | (self.tot.val() >> 8))
                                | (bits::<64>(0x0040) << 32)
                                | (bits::<64>(0x1140) << 48);
                    } else if self.t_bi.q.val() == 3 {
                        self.tx_wd.next = bit_cast::<64, 16>(self.t_csum.q.val())
                            | (bit_cast::<64, 32>(self.board_ip_le.val()) << 16)
                            | (bit_cast::<64, 16>(self.t_ip.q.val().get_bits::<16>(0)) << 48);
                    } else if self.t_bi.q.val() == 4 {
                        self.tx_wd.next = bit_cast::<64, 16>(self.t_ip.q.val().get_bits::<16>(16))
                            | (bits::<64>(0x4252) << 16)
                            | (bit_cast::<64, 16>(self.t_port.q.val()) << 32)
                            | (bit_cast::<64, 16>((self.ulen.val() << 8) | (self.ulen.val() >> 8))
                                << 48);
                    } else if self.t_bi.q.val() == 5 {
                        self.tx_wd.next = (bits::<64>(0x5242) << 16)
                            | (bits::<64>(1) << 32)
                            | (bit_cast::<64, 8>(self.t_op.q.val()) << 40)
                            | (bit_cast::<64, 16>(self.t_seq.q.val().get_bits::<16>(0)) << 48);
                    } else if self.t_bi.q.val() == 6 {
                        self.tx_wd.next = bit_cast::<64, 16>(self.t_seq.q.val().get_bits::<16>(16))
                            | (bit_cast::<64, 48>(self.t_addr.q.val().get_bits::<48>(0)) << 16);
                    } else {
                        self.tx_wd.next =
                            bit_cast::<64, 16>(self.t_addr.q.val().get_bits::<16>(48))
                                | (bit_cast::<64, 16>(self.t_len.q.val()) << 16)
                                | (bit_cast::<64, 8>(self.t_tag.q.val()) << 32)
                                | (bit_cast::<64, 8>(self.t_flags.q.val()) << 40)
                                | (bit_cast::<64, 8>(self.t_status.q.val()) << 48);
                        self.tx_wl.next = self.t_plen.q.val() == 0;
                    }
                }
                if !self.txq.full.val() {
                    self.t_bi.d.next = self.t_bi.q.val() + 1;
                    if bit_cast::<8, 4>(self.t_bi.q.val()) + 1 == self.t_beats.q.val() {
                        self.t_bi.d.next = 0.into();
                        if self.t_arp.q.val() | (self.t_plen.q.val() == 0) {
                            self.ts.d.next = TxState::Idle;
                        } else if self.t_op.q.val() == 0x11 {
                            self.ts.d.next = TxState::WrData;
                        } else {
                            self.ts.d.next = TxState::Value;
                        }
                    }
                }
            }
            TxState::Value => {
                self.tx_w.next = !self.txq.full.val();
                self.tx_wd.next = bit_cast::<64, 32>(self.t_value.q.val());
                self.tx_wk.next = 4.into();
                self.tx_wl.next = true;
                if !self.txq.full.val() {
                    self.ts.d.next = TxState::Idle;
                }
            }
            TxState::WrData => {
                // The core's data beats: lane 0 = the octet at `t_addr`.
                self.dma_wr_ready.next = !self.txq.full.val();
                self.tx_w.next = self.dma_wr_valid.val() & !self.txq.full.val();
                self.tx_wd.next = self.dma_wr_data.val();
                if self.t_plen.q.val() <= 8 {
                    self.tx_wk.next = self.t_plen.q.val().get_bits::<4>(0);
                    self.tx_wl.next = true;
                }
                if self.dma_wr_valid.val() & !self.txq.full.val() {
                    if self.t_plen.q.val() <= 8 {
                        self.t_plen.d.next = 0.into();
                        if self.w_rem.q.val() == 0 {
                            self.w_active.d.next = false;
                        }
                        self.ts.d.next = TxState::Idle;
                    } else {
                        self.t_plen.d.next = self.t_plen.q.val() - 8;
                    }
                }
            }
            _ => {
                self.ts.d.next = TxState::Idle;
            }
        }

        // Frame FIFO: the read side runs only while a whole frame is in.
        self.txq.write.next = self.tx_w.val();
        self.txq.data_in.next = bit_cast::<69, 64>(self.tx_wd.val())
            | (bit_cast::<69, 4>(self.tx_wk.val()) << 64)
            | (bit_cast::<69, 1>(self.tx_wl.val().into()) << 68);
        self.tx_data.next = self.txq.data_out.val().get_bits::<64>(0);
        self.tx_keep.next = self.txq.data_out.val().get_bits::<4>(64);
        self.tx_last.next = self.txq.data_out.val().get_bit(68);
        self.tx_valid.next = !self.txq.empty.val() & (self.tq_frames.q.val() != 0);
        self.txq.read.next = self.tx_ready.val() & self.tx_valid.val();
        self.pop_last.next = self.tx_ready.val() & self.tx_valid.val() & self.tx_last.val();
        self.push_last.next = self.tx_w.val() & self.tx_wl.val();
        if self.push_last.val() & !self.pop_last.val() {
            self.tq_frames.d.next = self.tq_frames.q.val() + 1;
            self.n_tx.d.next = self.n_tx.q.val() + 1;
        } else if !self.push_last.val() & self.pop_last.val() {
            self.tq_frames.d.next = self.tq_frames.q.val() - 1;
        } else if self.push_last.val() {
            self.n_tx.d.next = self.n_tx.q.val() + 1;
        }

        if self.reset.val() {
            self.rs.d.next = RxState::Hdr;
            self.bi.d.next = 0.into();
            self.ended.d.next = false;
            self.h_known.d.next = false;
            self.k_valid.d.next = false;
            self.a_pend.d.next = false;
            self.p_pend.d.next = false;
            self.r_out.d.next = false;
            self.r_send.d.next = false;
            self.ts.d.next = TxState::Idle;
            self.dev_seq.d.next = 0.into();
            self.irq_sent.d.next = false;
            self.w_active.d.next = false;
            self.tq_frames.d.next = 0.into();
            self.n_ok.d.next = 0.into();
            self.n_drop.d.next = 0.into();
            self.n_nak.d.next = 0.into();
            self.n_dup.d.next = 0.into();
            self.n_cpl_drop.d.next = 0.into();
            self.n_retry.d.next = 0.into();
            self.n_trunc.d.next = 0.into();
            self.n_tx.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{beats, tick, Rng};
    use rnic_wire::abi::bridge::{
        NakReason, Packet, Refusal, Repr as Msg, BRIDGE_PORT, FRAME_PAYLOAD_OFFSET, HEADER_LEN,
        MAGIC, MAX_PAYLOAD, VERSION,
    };
    use smoltcp::phy::ChecksumCapabilities;
    use smoltcp::wire::{
        ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
        EthernetRepr, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, UdpPacket, UdpRepr,
    };
    use std::collections::{HashMap, VecDeque};

    const BOARD_MAC: [u8; 6] = [0x02, 0x52, 0x42, 0x00, 0x00, 0x02];
    const BOARD_IP: [u8; 4] = [10, 0, 0, 2];
    const HOST_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
    const HOST_IP: [u8; 4] = [10, 0, 0, 1];
    const HOST_PORT: u16 = 40000;
    const RETRY: u64 = 400;
    // The firmware-port model's queue registers (port::EXC_STATUS,
    // port::EXC_POP, and an offset that pops on read).
    const FW_QUEUE_HEAD: u32 = 0x008;
    const FW_QUEUE_POP: u32 = 0x010;
    const FW_READ_POPS: u32 = 0x1FFC;

    /// A UDP datagram from the host to the board, built by smoltcp.
    fn udp_frame(dst_ip: [u8; 4], dst_port: u16, payload: &[u8]) -> Vec<u8> {
        let caps = ChecksumCapabilities::default();
        let (s, d) = (Ipv4Address::from(HOST_IP), Ipv4Address::from(dst_ip));
        let eth = EthernetRepr {
            src_addr: EthernetAddress(HOST_MAC),
            dst_addr: EthernetAddress(BOARD_MAC),
            ethertype: EthernetProtocol::Ipv4,
        };
        let udp = UdpRepr {
            src_port: HOST_PORT,
            dst_port,
        };
        let ip = Ipv4Repr {
            src_addr: s,
            dst_addr: d,
            next_header: IpProtocol::Udp,
            payload_len: 8 + payload.len(),
            hop_limit: 64,
        };
        let mut f = vec![0u8; 14 + 20 + 8 + payload.len()];
        let mut e = EthernetFrame::new_unchecked(&mut f[..]);
        eth.emit(&mut e);
        let mut i = Ipv4Packet::new_unchecked(e.payload_mut());
        ip.emit(&mut i, &caps);
        let mut u = UdpPacket::new_unchecked(i.payload_mut());
        udp.emit(
            &mut u,
            &IpAddress::Ipv4(s),
            &IpAddress::Ipv4(d),
            payload.len(),
            |p| p.copy_from_slice(payload),
            &caps,
        );
        f
    }

    fn msg_frame(m: &Msg) -> Vec<u8> {
        let mut b = vec![0u8; m.buffer_len()];
        m.emit(&mut b).unwrap();
        udp_frame(BOARD_IP, BRIDGE_PORT, &b)
    }

    /// A sent frame read with smoltcp: Ethernet to the host, IPv4 (header
    /// checksum verified) from the board, UDP from BRIDGE_PORT to the host's
    /// port; returns the UDP payload.
    fn parse_udp(f: &[u8]) -> Vec<u8> {
        let e = EthernetFrame::new_checked(f).expect("ethernet");
        assert_eq!(e.dst_addr().0, HOST_MAC);
        assert_eq!(e.src_addr().0, BOARD_MAC);
        assert_eq!(e.ethertype(), EthernetProtocol::Ipv4);
        let i = Ipv4Packet::new_checked(e.payload()).expect("ipv4");
        let caps = ChecksumCapabilities::default();
        let ir = Ipv4Repr::parse(&i, &caps).expect("ipv4 header / checksum");
        assert_eq!(ir.src_addr, Ipv4Address::from(BOARD_IP));
        assert_eq!(ir.dst_addr, Ipv4Address::from(HOST_IP));
        assert_eq!(ir.next_header, IpProtocol::Udp);
        let u = UdpPacket::new_checked(i.payload()).expect("udp");
        let ur = UdpRepr::parse(
            &u,
            &IpAddress::Ipv4(ir.src_addr),
            &IpAddress::Ipv4(ir.dst_addr),
            &caps,
        )
        .expect("udp");
        assert_eq!(ur.src_port, BRIDGE_PORT);
        assert_eq!(ur.dst_port, HOST_PORT);
        u.payload().to_vec()
    }

    struct Tb {
        u: UdpBridge,
        rng: Rng,
        /// Frames to feed (beats, fcs_bad), one beat per clock.
        rx: VecDeque<(Vec<(u64, u8)>, bool)>,
        rx_pos: usize,
        tx_cur: Vec<u8>,
        tx: VecDeque<Vec<u8>>,
        regs: HashMap<u32, u32>,
        csr_reads: Vec<u32>,
        csr_writes: Vec<(u32, u32)>,
        read_pending: Option<u32>,
        /// A model of the firmware port: registers, plus a queue whose head
        /// `FW_QUEUE_HEAD` shows and a write of `FW_QUEUE_POP` pops (as
        /// `EXC_POP`/`TERM_POP` do), and a read of `FW_READ_POPS` that pops
        /// too (a read with a side effect).
        fw_regs: HashMap<u32, u32>,
        fw_queue: VecDeque<u32>,
        fw_reads: Vec<u32>,
        fw_writes: Vec<(u32, u32)>,
        fw_pending: Option<u32>,
        /// Clocks in which both `csr_valid` and `fw_valid` were high.
        both_valid: u32,
        /// Core DMA read request to offer (addr, len, tag).
        rd_req: Option<(u64, u16, u8)>,
        cpl: Vec<(u64, u8, bool, u8)>,
        /// Core DMA write beats to offer (hdr, len, data, keep, last).
        wr: VecDeque<(bool, u16, u64, u8, bool)>,
        tx_ready_pct: usize,
        cpl_ready_pct: usize,
        cycles: u64,
    }

    impl Tb {
        fn new() -> Tb {
            let mut u = UdpBridge::new(RETRY);
            u.clock.connect();
            u.reset.connect();
            u.board_mac.connect();
            u.board_ip.connect();
            u.rx_data.connect();
            u.rx_keep.connect();
            u.rx_last.connect();
            u.rx_valid.connect();
            u.rx_fcs_bad.connect();
            u.tx_ready.connect();
            u.csr_rdata.connect();
            u.csr_rvalid.connect();
            u.fw_rdata.connect();
            u.fw_rvalid.connect();
            u.dma_rd_req_valid.connect();
            u.dma_rd_req_addr.connect();
            u.dma_rd_req_len.connect();
            u.dma_rd_req_tag.connect();
            u.dma_rd_cpl_ready.connect();
            u.dma_wr_valid.connect();
            u.dma_wr_hdr.connect();
            u.dma_wr_len.connect();
            u.dma_wr_data.connect();
            u.dma_wr_keep.connect();
            u.dma_wr_last.connect();
            u.irq.connect();
            u.connect_all();
            let mac = BOARD_MAC.iter().fold(0u64, |a, &b| a << 8 | b as u64);
            u.board_mac.next = mac.into();
            u.board_ip.next = (u32::from_be_bytes(BOARD_IP) as u64).into();
            u.reset.next = true;
            tick!(u);
            tick!(u);
            u.reset.next = false;
            Tb {
                u,
                rng: Rng::new(5),
                rx: VecDeque::new(),
                rx_pos: 0,
                tx_cur: vec![],
                tx: VecDeque::new(),
                regs: HashMap::new(),
                csr_reads: vec![],
                csr_writes: vec![],
                read_pending: None,
                fw_regs: HashMap::new(),
                fw_queue: VecDeque::new(),
                fw_reads: vec![],
                fw_writes: vec![],
                fw_pending: None,
                both_valid: 0,
                rd_req: None,
                cpl: vec![],
                wr: VecDeque::new(),
                tx_ready_pct: 100,
                cpl_ready_pct: 100,
                cycles: 0,
            }
        }

        fn send(&mut self, f: &[u8]) {
            self.rx.push_back((beats(f), false));
        }

        fn send_bad_fcs(&mut self, f: &[u8]) {
            self.rx.push_back((beats(f), true));
        }

        fn step(&mut self) {
            let u = &mut self.u;
            // MAC RX: one beat per clock.
            u.rx_valid.next = false;
            u.rx_last.next = false;
            u.rx_fcs_bad.next = false;
            if let Some((b, bad)) = self.rx.front() {
                let (d, k) = b[self.rx_pos];
                let last = self.rx_pos + 1 == b.len();
                u.rx_valid.next = true;
                u.rx_data.next = d.into();
                u.rx_keep.next = (k as u64).into();
                u.rx_last.next = last;
                u.rx_fcs_bad.next = last && *bad;
                self.rx_pos += 1;
                if last {
                    self.rx.pop_front();
                    self.rx_pos = 0;
                }
            }
            // BAR0: reads answer one clock after the request.
            u.csr_rvalid.next = false;
            if let Some(a) = self.read_pending.take() {
                u.csr_rvalid.next = true;
                u.csr_rdata.next = (*self.regs.get(&a).unwrap_or(&0) as u64).into();
            }
            // Firmware port: likewise one clock.
            u.fw_rvalid.next = false;
            if let Some(a) = self.fw_pending.take() {
                u.fw_rvalid.next = true;
                let v = match a {
                    FW_QUEUE_HEAD => *self.fw_queue.front().unwrap_or(&0),
                    FW_READ_POPS => self.fw_queue.pop_front().unwrap_or(0),
                    _ => *self.fw_regs.get(&a).unwrap_or(&0),
                };
                u.fw_rdata.next = (v as u64).into();
            }
            let tx_ready = self.rng.below(100) < self.tx_ready_pct;
            u.tx_ready.next = tx_ready;
            let cpl_ready = self.rng.below(100) < self.cpl_ready_pct;
            u.dma_rd_cpl_ready.next = cpl_ready;
            u.dma_rd_req_valid.next = self.rd_req.is_some();
            if let Some((a, l, t)) = self.rd_req {
                u.dma_rd_req_addr.next = a.into();
                u.dma_rd_req_len.next = (l as u64).into();
                u.dma_rd_req_tag.next = (t as u64).into();
            }
            let wr_offer = self.rng.below(4) != 0;
            u.dma_wr_valid.next = false;
            if let (true, Some(&(h, l, d, k, last))) = (wr_offer, self.wr.front()) {
                u.dma_wr_valid.next = true;
                u.dma_wr_hdr.next = h;
                u.dma_wr_len.next = (l as u64).into();
                u.dma_wr_data.next = d.into();
                u.dma_wr_keep.next = (k as u64).into();
                u.dma_wr_last.next = last;
            }
            // Sample the outputs the edge will act on.
            u.clock.next = false.into();
            assert!(simulate(u, 1000));
            let csr_v = u.csr_valid.val();
            let csr_w = u.csr_write.val();
            let csr_a = u.csr_addr.val().to_u64() as u32;
            let csr_d = u.csr_wdata.val().to_u64() as u32;
            let fw_v = u.fw_valid.val();
            let fw_w = u.fw_write.val();
            let fw_a = u.fw_addr.val().to_u64() as u32;
            let fw_d = u.fw_wdata.val().to_u64() as u32;
            let tv = u.tx_valid.val();
            let td = u.tx_data.val().to_u64();
            let tk = u.tx_keep.val().to_u64() as usize;
            let tl = u.tx_last.val();
            let cv = u.dma_rd_cpl_valid.val();
            let cd = u.dma_rd_cpl_data.val().to_u64();
            let ck = u.dma_rd_cpl_keep.val().to_u64() as u8;
            let cl = u.dma_rd_cpl_last.val();
            let ct = u.dma_rd_cpl_tag.val().to_u64() as u8;
            let rq = u.dma_rd_req_ready.val() && u.dma_rd_req_valid.val();
            let wq = u.dma_wr_ready.val() && u.dma_wr_valid.val();
            u.clock.next = true.into();
            assert!(simulate(u, 1000));
            self.cycles += 1;
            if csr_v {
                if csr_w {
                    self.regs.insert(csr_a, csr_d);
                    self.csr_writes.push((csr_a, csr_d));
                } else {
                    self.csr_reads.push(csr_a);
                    self.read_pending = Some(csr_a);
                }
            }
            if csr_v && fw_v {
                self.both_valid += 1;
            }
            if fw_v {
                if fw_w {
                    if fw_a == FW_QUEUE_POP {
                        self.fw_queue.pop_front();
                    } else {
                        self.fw_regs.insert(fw_a, fw_d);
                    }
                    self.fw_writes.push((fw_a, fw_d));
                } else {
                    self.fw_reads.push(fw_a);
                    self.fw_pending = Some(fw_a);
                }
            }
            if tv && tx_ready {
                self.tx_cur.extend_from_slice(&td.to_le_bytes()[..tk]);
                if tl {
                    self.tx.push_back(std::mem::take(&mut self.tx_cur));
                }
            }
            if cv && cpl_ready {
                self.cpl.push((cd, ck, cl, ct));
            }
            if rq {
                self.rd_req = None;
            }
            if wq {
                self.wr.pop_front();
            }
        }

        fn run(&mut self, n: usize) {
            for _ in 0..n {
                self.step();
            }
        }

        /// Runs until a frame was sent (at most `limit` clocks).
        fn next_frame(&mut self, limit: usize) -> Vec<u8> {
            for _ in 0..limit {
                if let Some(f) = self.tx.pop_front() {
                    return f;
                }
                self.step();
            }
            panic!("no frame within {limit} clocks");
        }

        fn answer(&mut self, m: &Msg) -> Vec<u8> {
            let f = msg_frame(m);
            self.send(&f);
            let f = self.next_frame(400 + f.len());
            parse_udp(&f)
        }

        fn quiet(&mut self, n: usize) {
            self.run(n);
            assert!(self.tx.is_empty(), "unexpected frame {:02x?}", self.tx[0]);
        }
    }

    /// The firmware window (`FW_READ`/`FW_WRITE`): executed on `fw_*` only,
    /// once; a resent request (same `seq` and opcode) answered from the
    /// cache, so a pop (by write or by read) happens once; bad addresses and
    /// lengths refused with a NAK and no access. The answers are parsed with
    /// `rnic_wire`'s `Repr` (the independent reference).
    #[test]
    fn firmware_window_once_and_from_the_cache() {
        let mut t = Tb::new();
        t.tx_ready_pct = 70;
        t.answer(&Msg::Hello { seq: 1 });
        t.fw_regs.insert(0x30, 0x8000_0007);
        t.regs.insert(0x30, 0x5555_5555);
        t.fw_queue.extend([0xA1, 0xA2, 0xA3, 0xA4]);
        let a = t.answer(&Msg::FwRead {
            seq: 2,
            offset: 0x30,
        });
        assert_eq!(
            Msg::parse(&a),
            Ok(Msg::FwReadRsp {
                seq: 2,
                value: 0x8000_0007
            })
        );
        let a = t.answer(&Msg::FwWrite {
            seq: 3,
            offset: 0x1FFC - 4,
            value: 0xDEAD_BEEF,
        });
        assert_eq!(Msg::parse(&a), Ok(Msg::FwWriteAck { seq: 3 }));
        assert_eq!(t.fw_writes, vec![(0x1FF8, 0xDEAD_BEEF)]);
        // A pop by write, sent three times: popped once.
        for _ in 0..3 {
            let a = t.answer(&Msg::FwWrite {
                seq: 4,
                offset: FW_QUEUE_POP,
                value: 1,
            });
            assert_eq!(Msg::parse(&a), Ok(Msg::FwWriteAck { seq: 4 }));
        }
        assert_eq!(t.fw_queue, [0xA2, 0xA3, 0xA4]);
        // A read that pops, sent three times: one pop, the same value.
        for _ in 0..3 {
            let a = t.answer(&Msg::FwRead {
                seq: 5,
                offset: FW_READ_POPS,
            });
            assert_eq!(
                Msg::parse(&a),
                Ok(Msg::FwReadRsp {
                    seq: 5,
                    value: 0xA2
                })
            );
        }
        assert_eq!(t.fw_queue, [0xA3, 0xA4]);
        let a = t.answer(&Msg::FwRead {
            seq: 6,
            offset: FW_QUEUE_HEAD,
        });
        assert_eq!(
            Msg::parse(&a),
            Ok(Msg::FwReadRsp {
                seq: 6,
                value: 0xA3
            })
        );
        // Same seq, the BAR0 opcode: a different request, executed on BAR0.
        let a = t.answer(&Msg::MmioRead {
            seq: 6,
            offset: 0x30,
        });
        assert_eq!(
            Msg::parse(&a),
            Ok(Msg::MmioReadRsp {
                seq: 6,
                value: 0x5555_5555
            })
        );
        assert_eq!(t.fw_reads, vec![0x30, FW_READ_POPS, FW_QUEUE_HEAD]);
        assert_eq!(t.csr_reads, vec![0x30]);
        assert!(t.csr_writes.is_empty());
        assert_eq!(t.u.cnt_dup.val().to_u64(), 4);
        // Refused: misaligned, at/after port::SIZE, bad lengths.
        let hdr = |op: u8, addr: u64, len: u16, extra: usize| {
            let mut b = vec![0u8; HEADER_LEN + extra];
            let mut p = Packet::new_unchecked(&mut b[..]);
            p.set_magic(MAGIC);
            p.set_version(VERSION);
            p.set_opcode_raw(op);
            p.set_seq(7);
            p.set_addr(addr);
            p.set_len(len);
            b
        };
        let cases = [
            (hdr(0x05, 0x32, 0, 0), NakReason::BadAddress),
            (hdr(0x06, 0x2000, 4, 4), NakReason::BadAddress),
            (hdr(0x05, 0x1_0000_0000, 0, 0), NakReason::BadAddress),
            (hdr(0x05, 0x30, 4, 4), NakReason::BadLength),
            (hdr(0x06, 0x30, 2, 4), NakReason::BadLength),
            (hdr(0x06, 0x30, 4, 2), NakReason::BadLength),
        ];
        for (b, reason) in cases.iter() {
            // The reference agrees with the board.
            assert_eq!(Msg::classify(b), Err(Refusal::Nak(*reason)));
            t.send(&udp_frame(BOARD_IP, BRIDGE_PORT, b));
            let f = t.next_frame(600);
            assert_eq!(
                Msg::parse(&parse_udp(&f)),
                Ok(Msg::Nak {
                    seq: 7,
                    opcode: b[3],
                    addr: Packet::new_unchecked(&b[..]).addr(),
                    reason: *reason
                })
            );
        }
        t.quiet(200);
        assert_eq!(t.fw_reads.len(), 3);
        assert_eq!(t.fw_writes.len(), 2);
        assert_eq!(t.both_valid, 0);
    }

    #[test]
    fn mmio_hello_and_replay_from_the_cache() {
        let mut t = Tb::new();
        t.tx_ready_pct = 60;
        let a = t.answer(&Msg::Hello { seq: 1 });
        assert_eq!(
            Msg::parse(&a),
            Ok(Msg::HelloAck {
                seq: 1,
                next_dev_seq: 0
            })
        );
        assert!(t.u.host_known.val());
        let a = t.answer(&Msg::MmioWrite {
            seq: 2,
            offset: 0x40,
            value: 0xCAFE_F00D,
        });
        assert_eq!(Msg::parse(&a), Ok(Msg::MmioWriteAck { seq: 2 }));
        assert_eq!(t.csr_writes, vec![(0x40, 0xCAFE_F00D)]);
        t.regs.insert(0xFF_FFFC, 0x1234_5678);
        for seq in [3, 3, 3] {
            let a = t.answer(&Msg::MmioRead {
                seq,
                offset: 0xFF_FFFC,
            });
            assert_eq!(
                Msg::parse(&a),
                Ok(Msg::MmioReadRsp {
                    seq: 3,
                    value: 0x1234_5678
                })
            );
        }
        // The repeats were answered from the cache: one BAR0 read.
        assert_eq!(t.csr_reads, vec![0xFF_FFFC]);
        assert_eq!(t.u.cnt_dup.val().to_u64(), 2);
        // A repeated write: acknowledged, not written again.
        t.answer(&Msg::MmioWrite {
            seq: 4,
            offset: 0x44,
            value: 1,
        });
        let a = t.answer(&Msg::MmioWrite {
            seq: 4,
            offset: 0x44,
            value: 1,
        });
        assert_eq!(Msg::parse(&a), Ok(Msg::MmioWriteAck { seq: 4 }));
        assert_eq!(t.csr_writes.len(), 2);
        // Same seq, other opcode: executed.
        let a = t.answer(&Msg::MmioRead {
            seq: 4,
            offset: 0x44,
        });
        assert_eq!(Msg::parse(&a), Ok(Msg::MmioReadRsp { seq: 4, value: 1 }));
        assert_eq!(t.u.cnt_rx_ok.val().to_u64(), 5);
        assert_eq!(t.u.cnt_nak.val().to_u64(), 0);
    }

    #[test]
    fn arp_request_answered_others_dropped() {
        let mut t = Tb::new();
        let arp = |target: [u8; 4]| {
            let r = ArpRepr::EthernetIpv4 {
                operation: ArpOperation::Request,
                source_hardware_addr: EthernetAddress(HOST_MAC),
                source_protocol_addr: Ipv4Address::from(HOST_IP),
                target_hardware_addr: EthernetAddress([0; 6]),
                target_protocol_addr: Ipv4Address::from(target),
            };
            let mut f = vec![0u8; 14 + r.buffer_len()];
            let mut e = EthernetFrame::new_unchecked(&mut f[..]);
            EthernetRepr {
                src_addr: EthernetAddress(HOST_MAC),
                dst_addr: EthernetAddress::BROADCAST,
                ethertype: EthernetProtocol::Arp,
            }
            .emit(&mut e);
            r.emit(&mut ArpPacket::new_unchecked(e.payload_mut()));
            f
        };
        // Unpadded (42 octets) and padded to 60.
        for pad in [0, 18] {
            let mut f = arp(BOARD_IP);
            f.extend(std::iter::repeat_n(0, pad));
            t.send(&f);
            let r = t.next_frame(300);
            let e = EthernetFrame::new_checked(&r[..]).unwrap();
            assert_eq!(e.dst_addr().0, HOST_MAC);
            assert_eq!(e.src_addr().0, BOARD_MAC);
            assert_eq!(e.ethertype(), EthernetProtocol::Arp);
            let a = ArpRepr::parse(&ArpPacket::new_checked(e.payload()).unwrap()).unwrap();
            assert_eq!(
                a,
                ArpRepr::EthernetIpv4 {
                    operation: ArpOperation::Reply,
                    source_hardware_addr: EthernetAddress(BOARD_MAC),
                    source_protocol_addr: Ipv4Address::from(BOARD_IP),
                    target_hardware_addr: EthernetAddress(HOST_MAC),
                    target_protocol_addr: Ipv4Address::from(HOST_IP),
                }
            );
        }
        // For another address; truncated: no answer, counted.
        t.send(&arp([10, 0, 0, 3]));
        t.send(&arp(BOARD_IP)[..40]);
        t.quiet(300);
        assert_eq!(t.u.cnt_rx_drop.val().to_u64(), 2);
        assert!(!t.u.host_known.val(), "ARP does not teach the host");
    }

    /// Malformed requests: each gets exactly the answer `Repr::classify`
    /// (the reference) gives, with the board's opcode rule; no BAR0 access.
    #[test]
    fn malformed_requests_nak_or_drop() {
        let mut t = Tb::new();
        let good = {
            let mut b = vec![0u8; 26];
            Msg::MmioWrite {
                seq: 9,
                offset: 0x100,
                value: 7,
            }
            .emit(&mut b)
            .unwrap();
            b
        };
        let mut cases: Vec<Vec<u8>> = vec![];
        for op in [0x00u8, 0x10, 0x11, 0x12, 0x7F, 0x81, 0x99] {
            let mut b = good.clone();
            b[3] = op;
            cases.push(b);
        }
        let mut b = good.clone();
        b[21] = 1; // reserved
        cases.push(b);
        let mut b = good.clone();
        b[19] = 0x80; // undefined flag
        cases.push(b);
        let mut b = good.clone();
        b[8] = 2; // misaligned
        cases.push(b);
        let mut b = good.clone();
        b[11] = 1; // offset 2^24 + 0x100
        cases.push(b);
        let mut b = good.clone();
        b[16] = 3; // MMIO_WRITE with len 3
        cases.push(b);
        cases.push(good[..24].to_vec()); // datagram shorter than len
        let mut b = good.clone();
        b[3] = 0x01; // MMIO_READ with len 4
        cases.push(b);
        let mut b = good.clone();
        b[3] = 0x13; // DMA_RD_CPL with 0 octets
        b[16] = 0;
        cases.push(b);
        for (i, c) in cases.iter().enumerate() {
            let want = match Msg::classify(c) {
                Err(Refusal::Nak(r)) => {
                    if matches!(c[3], 0x10 | 0x11 | 0x12 | 0x7F | 0x81 | 0x82 | 0x83) {
                        NakReason::BadOpcode
                    } else {
                        r
                    }
                }
                Ok(_) => NakReason::BadOpcode,
                Err(Refusal::NotOurs) => unreachable!(),
            };
            t.send(&udp_frame(BOARD_IP, BRIDGE_PORT, c));
            let f = t.next_frame(500);
            let a = parse_udp(&f);
            assert_eq!(
                Msg::parse(&a),
                Ok(Msg::Nak {
                    seq: 9,
                    opcode: c[3],
                    addr: u64::from_le_bytes(c[8..16].try_into().unwrap()),
                    reason: want
                }),
                "case {i}"
            );
        }
        assert_eq!(t.u.cnt_nak.val().to_u64() as usize, cases.len());
        // Not ours: no answer, counted.
        let mut bad_magic = good.clone();
        bad_magic[0] = 0;
        let mut bad_version = good.clone();
        bad_version[2] = 2;
        let mut bad_csum = msg_frame(&Msg::Hello { seq: 1 });
        bad_csum[24] ^= 1;
        let drops = [
            udp_frame(BOARD_IP, BRIDGE_PORT, &bad_magic),
            udp_frame(BOARD_IP, BRIDGE_PORT, &bad_version),
            udp_frame(BOARD_IP, BRIDGE_PORT + 1, &good),
            udp_frame([10, 0, 0, 9], BRIDGE_PORT, &good),
            udp_frame(BOARD_IP, BRIDGE_PORT, &good[..21]),
            bad_csum,
        ];
        for f in &drops {
            t.send(f);
        }
        t.send_bad_fcs(&msg_frame(&Msg::Hello { seq: 1 }));
        t.quiet(1200);
        assert_eq!(t.u.cnt_rx_drop.val().to_u64() as usize, drops.len());
        assert!(t.csr_writes.is_empty() && t.csr_reads.is_empty());
    }

    fn hello(t: &mut Tb) {
        let a = t.answer(&Msg::Hello { seq: 100 });
        assert!(matches!(Msg::parse(&a), Ok(Msg::HelloAck { .. })));
    }

    /// Chunk `i` of a read of `mem` (docs/bridge.md), as the host sends it.
    fn cpl_chunk(seq: u32, tag: u8, addr: u64, mem: &[u8], i: usize) -> Vec<u8> {
        let off = i * MAX_PAYLOAD;
        let n = (mem.len() - off).min(MAX_PAYLOAD);
        msg_frame(&Msg::DmaRdCpl {
            seq,
            tag,
            addr: addr + off as u64,
            last: off + n == mem.len(),
            data: &mem[off..off + n],
        })
    }

    #[test]
    fn dma_read_chunks_stale_and_retry() {
        let mut t = Tb::new();
        t.cpl_ready_pct = 70;
        // Before a host is known the request waits.
        t.rd_req = Some((0x1_0000_0003, 2500, 0x41));
        t.quiet(50);
        assert!(t.rd_req.is_some());
        hello(&mut t);
        let f = t.next_frame(300);
        let req_b = parse_udp(&f);
        let req = Msg::parse(&req_b).unwrap();
        assert_eq!(
            req,
            Msg::DmaRdReq {
                seq: 0,
                tag: 0x41,
                addr: 0x1_0000_0003,
                len: 2500
            }
        );
        let mem = t.rng.bytes(2500);
        let addr = 0x1_0000_0003;
        t.send(&cpl_chunk(0, 0x41, addr, &mem, 0));
        t.send(&cpl_chunk(0, 0x41, addr, &mem, 0)); // duplicate: stale
        t.send(&cpl_chunk(0, 0x41, addr, &mem, 2)); // out of order
        t.send(&cpl_chunk(0, 0x42, addr, &mem, 1)); // wrong tag
                                                    // Chunk 1 is "lost": the board asks again after RETRY clocks.
        let f = t.next_frame(3000);
        assert_eq!(Msg::parse(&parse_udp(&f)), Ok(req));
        assert_eq!(t.u.cnt_rd_retry.val().to_u64(), 1);
        // The host answers the repeated request whole; chunk 0 is stale now.
        for i in 0..3 {
            t.send(&cpl_chunk(0, 0x41, addr, &mem, i));
        }
        t.run(1500);
        let mut got = vec![];
        for (i, &(d, k, l, tag)) in t.cpl.iter().enumerate() {
            assert_eq!(tag, 0x41);
            assert_eq!(l, i + 1 == t.cpl.len(), "last only on the final beat");
            got.extend_from_slice(&d.to_le_bytes()[..k as usize]);
        }
        assert_eq!(got.len(), mem.len());
        assert!(got == mem, "completion data differs");
        assert_eq!(t.u.cnt_cpl_drop.val().to_u64(), 4);
        assert!(t.tx.is_empty());
        // The next request goes out with the next device sequence number.
        t.rd_req = Some((0x2000, 8, 0x43));
        let f = t.next_frame(300);
        assert!(matches!(
            Msg::parse(&parse_udp(&f)),
            Ok(Msg::DmaRdReq { seq: 1, len: 8, .. })
        ));
    }

    #[test]
    fn dma_writes_in_chunks_and_irq_levels() {
        let mut t = Tb::new();
        t.tx_ready_pct = 70;
        hello(&mut t);
        let data = t.rng.bytes(1500);
        let addr = 0x7_0000_0005u64;
        let push = |t: &mut Tb, addr: u64, data: &[u8]| {
            t.wr.push_back((true, data.len() as u16, addr, 0, false));
            let n = data.chunks(8).count();
            for (i, c) in data.chunks(8).enumerate() {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                t.wr.push_back((false, 0, u64::from_le_bytes(b), c.len() as u8, i + 1 == n));
            }
        };
        push(&mut t, addr, &data);
        push(&mut t, 0x100, &data[..3]);
        let mut got: Vec<Msg> = vec![];
        let mut frames = vec![];
        for _ in 0..3 {
            frames.push(parse_udp(&t.next_frame(3000)));
        }
        for f in &frames {
            got.push(Msg::parse(f).unwrap());
        }
        assert_eq!(
            got,
            vec![
                Msg::DmaWr {
                    seq: 0,
                    addr,
                    last: false,
                    data: &data[..1024]
                },
                Msg::DmaWr {
                    seq: 1,
                    addr: addr + 1024,
                    last: true,
                    data: &data[1024..]
                },
                Msg::DmaWr {
                    seq: 2,
                    addr: 0x100,
                    last: true,
                    data: &data[..3]
                },
            ]
        );
        // The IPv4 total length covers exactly the message.
        assert_eq!(
            frames[1].len() + FRAME_PAYLOAD_OFFSET - 22 - 42,
            FRAME_PAYLOAD_OFFSET - 42 + 476
        );
        t.u.irq.next = true;
        let f = t.next_frame(300);
        assert_eq!(
            Msg::parse(&parse_udp(&f)),
            Ok(Msg::Irq {
                seq: 3,
                level: true
            })
        );
        t.u.irq.next = false;
        let f = t.next_frame(300);
        assert_eq!(
            Msg::parse(&parse_udp(&f)),
            Ok(Msg::Irq {
                seq: 4,
                level: false
            })
        );
        t.quiet(200);
        // HELLO reports the next device sequence number.
        let a = t.answer(&Msg::Hello { seq: 101 });
        assert_eq!(
            Msg::parse(&a),
            Ok(Msg::HelloAck {
                seq: 101,
                next_dev_seq: 5
            })
        );
    }
}
