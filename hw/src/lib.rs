//! `rnic-hw`: the rnic RTL, written as rust-hdl blocks.
//!
//! Conventions for every block (see `docs/rtl.md`):
//! * one clock `clock`, an explicit synchronous active-high `reset`;
//! * streams are `data[64]`, `keep[4]`, `last`, `valid`, `ready`; byte 0 of a
//!   frame is `data[7:0]` (little-endian lanes); `keep` is the number of valid
//!   bytes of a `last` beat, 1..=8 (0 only for an empty frame), and 8 on
//!   every other beat.
//!
//! The Verilog of [`rnic_core::RnicCore`] is checked in under
//! `hw/generated/`; [`gen`] produces it and `rnic-hw-gen` writes it.

pub mod board;
pub mod conn_table;
pub mod cpl_write;
pub mod crc32c_beat;
pub mod ddp_rx;
pub mod dma_rd_arb;
pub mod dma_wr_arb;
pub mod doorbell;
pub mod exc_arb;
pub mod exc_queue;
pub mod fast_retx;
pub mod fifo;
pub mod fifo_p;
pub mod fpdu_buffer;
pub mod fw_port;
pub mod gen;
pub mod host_regs;
pub mod mpa_rx;
pub mod mpa_rx_outq;
pub mod placement;
pub mod pram;
pub mod profile;
pub mod qp_ram;
pub mod rd_track;
pub mod read_resp;
pub mod recv_wqe;
pub mod rnic_core;
pub mod rreq_queue;
pub mod rx_check;
pub mod rx_fifo;
pub mod rx_parse;
pub mod rx_send;
pub mod rx_split;
pub mod send_cpl;
pub mod send_place;
pub mod skid;
pub mod tpt;
pub mod tpt_arb;
pub mod tx_ack;
pub mod tx_ddp_hdr;
pub mod tx_framer;
pub mod tx_log;
pub mod tx_mpa;
pub mod tx_sched;
pub mod tx_seg;
pub mod tx_tcp_hdr;
pub mod wqe_fetch;

#[cfg(test)]
mod testutil;

/// A width-`N` constant for a block's named constant fields (rust-hdl wants
/// constants as fields, built in the block's constructor).
pub(crate) fn k<const N: usize>(v: u64) -> rust_hdl::prelude::Constant<rust_hdl::prelude::Bits<N>> {
    rust_hdl::prelude::Constant::new(v.into())
}
