//! Size profiles of `rnic_core`: one build of rnic-hw emits the full core
//! co-simulation uses (`hw/generated/rnic_core.v`, [`SIM`]) and the smaller
//! core inside the Versa-5G board top (`rnic_versa5g`, [`BOARD`]), sized for
//! the LFE5UM5G-45F (43848 LUT4 slots, 108 DP16KD). It does not fit that part
//! (127 % of its TRELLIS_COMB); it fits the LFE5UM5G-85F (docs/README.md,
//! "Departures from DESIGN.md"; docs/fpga.md has the budget).
//!
//! rust-hdl derives widths from const generics only (no
//! `generic_const_exprs`), so the sizes that set a RAM's address width are
//! also spelled as the type parameters of [`crate::rnic_core::RnicCoreP`]
//! (see [`crate::rnic_core::RnicCoreBoard`]); the values here are the single
//! place they are named, and `profile_tests` checks the type parameters
//! against them. The firmware learns the profile through `fw_port`'s limit
//! registers (`rnic_wire::abi::context::port::LIM_*`).
//!
//! ECP5 RAM arithmetic behind the choices: a DP16KD holds 18 Kbit as
//! 512 x 36, 1 K x 18, 2 K x 9 or 4 K x 4, so a table of at most 512 entries
//! costs ceil(width / 36) blocks whatever its depth; shallower or narrower
//! memories may become LUTRAM (DPR16X4, about 8 TRELLIS_COMB each), which is
//! what the 45F is shortest of. Cuts therefore go after depth where depth
//! sets the block count (FIFOs of 2 K beats, the page list of 4 K entries)
//! and after flip-flop tables (the connection table's 4-tuple CAM).

use crate::firmware_port::fw_port::FwPortParams;

/// The sizes of one core profile.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// Name (for reports).
    pub name: &'static str,
    /// log2 of the connection table's entries (4-tuple CAM in flip-flops:
    /// its LUTs and FFs grow linearly with the entries).
    pub conn_log2: usize,
    /// log2 of the TPT's entries (256-bit entries: 8 DP16KD up to 512).
    pub tpt_log2: usize,
    /// log2 of the page list's entries (64 bits each).
    pub pbl_log2: usize,
    /// log2 of `fpdu_buffer`'s data FIFO in 8-octet beats (holds the
    /// payload of the longest accepted segment, with room to spare).
    pub fpdu_fifo_log2: usize,
    /// log2 of one span slot of `fpdu_buffer` in beats: the longest FPDU
    /// that may span TCP segments (longer ones get a DDP Local
    /// Catastrophic Terminate, RFC 5041 §7.2).
    pub span_beat_log2: usize,
    /// log2 of `rx_fifo`'s data FIFO in beats (at least one whole frame).
    pub rx_fifo_log2: usize,
    /// Longest accepted Ethernet frame in octets (without FCS; MTU + 14
    /// octets of header + 4 of VLAN-tag allowance, as `rx_fifo`'s default);
    /// longer ones are dropped and counted in `cnt_rx_oversize`.
    pub max_frame: u64,
    /// The firmware port's parameters (table sizes it checks and reports,
    /// and the core clock for the firmware's timers).
    pub fw: FwPortParams,
    /// log2 of `tx_framer`'s data FIFO in beats: one whole FPDU of the
    /// profile's MTU (store-and-forward per segment).
    pub tx_fifo_log2: usize,
    /// log2 of `tx_framer`'s segment descriptor queue (0: none). With a
    /// queue the segmenter hands over the next descriptors while the framer
    /// still waits for a payload, so several payload reads are in flight
    /// (up to `tx_seg`'s reorder slots) instead of at most two.
    pub tx_desc_q_log2: usize,
    /// `wqe_fetch` loads the WQE behind the head into a second 1024-bit
    /// buffer while the head is in use, so a pop shows the next WQE 3
    /// clocks later instead of after its 9-clock load.
    pub tx_wqe_next_buf: bool,
    /// `wqe_fetch` takes a WQE pushed through the doorbell page
    /// (`abi::doorbell::QP_SQ_PUSH`, `CAP_WQE_PUSH`) instead of reading it
    /// from the ring: a 128-octet push buffer and its copy into the WQE
    /// RAMs. Off on the board, whose host is behind the UDP bridge (a push
    /// would be 8 to 32 bridge writes instead of one read).
    pub tx_wqe_push: bool,
    /// Largest TCP payload a TX frame carries (octets): the EMSS of the
    /// profile's MTU without TCP options, MTU − 20 (IPv4) − 20 (TCP).
    /// `tx_mpa` drops a longer FPDU (`cnt_desc_drop`) rather than cut it.
    pub tx_max_tcp_payload: u16,
    /// Largest MULPDU `tx_seg` segments for, markers off and on:
    /// `mpa::mulpdu(tx_max_tcp_payload, markers)` (RFC 5044 §8), bounded by
    /// its reads. WQEs of a QP with a larger one complete with
    /// `LocalQpOperationError`, nothing sent.
    pub tx_max_mulpdu: u16,
    pub tx_max_mulpdu_mk: u16,
    /// Read Responses of a QP whose MULPDU is above those limits are cut at
    /// the limit (`tx_seg`'s `xs_mulpdu`); false: not capped (the sim
    /// profile, as before: `tx_mpa` drops what it cannot frame).
    pub tx_rresp_cap: bool,
    /// log2 of `tx_seg`'s payload reorder slots (2 or 3: 4 or 8 slots), one
    /// payload DMA read in flight per slot.
    pub tx_slots_log2: usize,
    /// log2 of one of `tx_seg`'s payload reorder slots in beats; a
    /// payload DMA read is at most `8 << tx_slot_log2` octets.
    pub tx_slot_log2: usize,
    /// log2 of the receive WQEs `recv_wqe` holds per QP, read ahead of the
    /// Sends that consume them (16 beats each, for every QP; 0: none, each
    /// Send's WQE is read when the Send arrives).
    pub rq_prefetch_log2: usize,
}

/// Ethernet II header (destination, source, EtherType), IEEE 802.3 §3.2,
/// plus a 802.1Q tag's 4 octets: a frame's length above its MTU.
pub const ETH_FRAME_OVERHEAD: u64 = 14 + 4;

/// The full core used by co-simulation: 64 connections, jumbo frames
/// (MTU 9000), a 4096-entry page list.
pub const SIM: Profile = Profile {
    name: "sim",
    conn_log2: crate::receive::conn_table::DEFAULT_LOG2_CONNS,
    tpt_log2: crate::protection::tpt::TPT_INDEX_BITS,
    pbl_log2: crate::protection::tpt::PBL_INDEX_BITS,
    fpdu_fifo_log2: crate::receive::fpdu_buffer::FPDU_BUF_N,
    span_beat_log2: crate::receive::fpdu_buffer::SPAN_BEAT_BITS,
    rx_fifo_log2: 11,
    max_frame: crate::receive::rx_fifo::DEFAULT_MAX_FRAME,
    fw: crate::firmware_port::fw_port::CORE_PARAMS,
    tx_fifo_log2: 11,
    tx_desc_q_log2: 3,
    tx_wqe_next_buf: true,
    tx_wqe_push: true,
    tx_max_tcp_payload: rnic_wire::abi::caps::TX_MAX_TCP_PAYLOAD,
    tx_max_mulpdu: rnic_wire::abi::caps::MAX_MULPDU,
    tx_max_mulpdu_mk: rnic_wire::abi::caps::MAX_MULPDU,
    tx_rresp_cap: false,
    tx_slots_log2: 3,
    tx_slot_log2: 9,
    rq_prefetch_log2: 4,
};

/// Board: one 1000BASE-T port at MTU 1500 (the Versa-5G's RGMII PHYs).
pub const BOARD_MAX_MTU: u32 = 1500;
/// The board's longest frame (1518 octets).
pub const BOARD_MAX_FRAME: u64 = BOARD_MAX_MTU as u64 + ETH_FRAME_OVERHEAD;

/// The board core (LFE5UM5G-45F).
/// * TPT 256 entries: 8 DP16KD either way (width-bound), kept.
/// * Page list 512 entries (2 DP16KD instead of 16): 2 MiB of 4 KiB pages,
///   more with larger pages (`PAGE_SHIFT_MAX`).
/// * FPDU data FIFO 512 beats (4 KiB, 2 DP16KD instead of 8): 2.7 payloads
///   of a 1500-octet-MTU segment (1460 octets, 183 beats).
/// * Span slots of 256 beats (2 KiB, 2 DP16KD for both slots instead of
///   16): an FPDU of a 1500-MTU peer (MULPDU ≤ 1460 octets) fits one slot.
/// * RX FIFO 512 beats (2 DP16KD instead of 8): 2.7 maximum frames.
/// * Frames up to 1518 octets (MTU 1500), jumbo frames dropped and counted.
/// * 16 QPs (`fw.n_qp`): the per-QP state of `doorbell`, `tx_sched`,
///   `wqe_fetch`, `rd_track`, `rreq_queue` is cut to 16 entries (QP index
///   ANDed with 15 at every point of use); doorbells of QPs 16..63 are
///   refused and counted (`cnt_db_bad`), QP context writes refused by
///   `fw_port` (TABLE_CMD error), docs/fpga.md "Why the 45F does not fit".
/// * 8 connections (`conn_log2` 3): the 4-tuple CAM in flip-flops halves
///   again (measured 2455 -> 1496 COMB, docs/fpga.md conn16); both
///   firmware builds that run the board (`rnic_board_host::HOST_FW_CAPS`,
///   the RISC-V `rnic-fw`) have 8 connections.
/// * The firmware port reports these sizes and the 62.5 MHz core clock.
/// * TX at MTU 1500: `tx_framer`'s FIFO 512 beats (2 DP16KD instead of 8),
///   `tx_seg`'s reorder slots 4 of 256 beats (4 DP16KD instead of 16: the
///   sim profile has 8 of 512), MULPDU at
///   most 1454 (1442 with markers; WQEs of a QP with more get an error
///   completion, its Read Responses are cut at the limit).
/// * No receive-WQE buffer (`rq_prefetch_log2` 0): 2 WQEs for each of
///   the 16 QPs would take 2 DP16KD more, 16 WQEs 16 (the 85F has one
///   left, docs/fpga.md); each Send's receive WQE is read when the Send
///   arrives, which at 1 Gb/s costs about 5 % of the 64-octet Send rate
///   (docs/sim.md, "Message rate").
pub const BOARD: Profile = Profile {
    name: "board",
    conn_log2: 3,
    tpt_log2: 8,
    pbl_log2: 9,
    fpdu_fifo_log2: 9,
    span_beat_log2: 8,
    rx_fifo_log2: 9,
    max_frame: BOARD_MAX_FRAME,
    fw: FwPortParams {
        n_conn: 8,
        n_qp: 16,
        n_cq: 64,
        n_tpt: 256,
        n_pbl: 512,
        clock_khz: 62_500,
        max_mtu: BOARD_MAX_MTU,
    },
    tx_fifo_log2: 9,
    // The board's 1 Gb/s port is full without it (docs/sim.md, "At the
    // board's timing"): no descriptor queue, no 519-bit LUT RAM.
    tx_desc_q_log2: 0,
    tx_wqe_next_buf: false,
    tx_wqe_push: false,
    tx_max_tcp_payload: BOARD_MAX_TCP_PAYLOAD,
    tx_max_mulpdu: BOARD_MAX_MULPDU,
    tx_max_mulpdu_mk: BOARD_MAX_MULPDU_MK,
    tx_rresp_cap: true,
    tx_slots_log2: 2,
    tx_slot_log2: 8,
    rq_prefetch_log2: 0,
};

/// The board's largest TCP payload: 1500 − 20 − 20 = 1460 octets (EMSS).
pub const BOARD_MAX_TCP_PAYLOAD: u16 =
    BOARD_MAX_MTU as u16 - rnic_wire::abi::caps::IPV4_HDR_LEN - rnic_wire::abi::caps::TCP_HDR_LEN;
/// The board's largest MULPDU, RFC 5044 §8, markers off: 1460 − 6 = 1454
/// (an FPDU of 1460 octets).
pub const BOARD_MAX_MULPDU: u16 = rnic_wire::mpa::mulpdu(BOARD_MAX_TCP_PAYLOAD, false);
/// Markers on: 1460 − 6 − 4·ceil(1460 / 512) = 1442 (an FPDU of 1448
/// octets + 3 markers = 1460).
pub const BOARD_MAX_MULPDU_MK: u16 = rnic_wire::mpa::mulpdu(BOARD_MAX_TCP_PAYLOAD, true);
// The board's TX sizes (BOARD's doc): 512 beats hold 2.8 frames of 1460
// octets (183 beats); a 256-beat slot (2048 octets) holds one segment's
// payload, so it is always one read.
const _: () = assert!(BOARD_MAX_MULPDU == 1454 && BOARD_MAX_MULPDU_MK == 1442);
const _: () = assert!((BOARD_MAX_TCP_PAYLOAD as usize).div_ceil(8) <= 1 << 9);
const _: () = assert!((BOARD_MAX_MULPDU as usize) <= 8 << 8);

/// The profiles by index: the `PR` const parameter of the blocks that take
/// run-time sizes (`ConnTableN`, `FwPortN`, `RxFifoN`) selects one.
pub const PROFILES: [Profile; 2] = [SIM, BOARD];
/// Index of [`SIM`] in [`PROFILES`].
pub const PR_SIM: usize = 0;
/// Index of [`BOARD`] in [`PROFILES`].
pub const PR_BOARD: usize = 1;
