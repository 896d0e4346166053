//! Completions: receive WQEs consumed and CQEs written. `rx_send` composes
//! the receive side of Sends: `recv_wqe` fetches the receive WQE, and
//! `send_place` places `ddp_rx`'s untagged Sends into its buffers and hands
//! a completion record to `cpl_write`. On the send side `rd_track` keeps the
//! outstanding RDMA Reads of each QP and completes a Read when its last
//! Read Response is placed, and `send_cpl` turns `tx_seg`'s and `rd_track`'s
//! records into records for the QP's send CQ. `cpl_write`, the one writer of
//! every CQ ring, writes the CQE by DMA and, when the CQ is armed, an
//! event-queue entry and an interrupt.

pub mod cpl_write;
pub mod rd_track;
pub mod recv_wqe;
pub mod recv_wqe_fill;
pub mod rx_send;
pub mod send_cpl;
pub mod send_place;
