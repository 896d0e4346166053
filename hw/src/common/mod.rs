//! Primitives the stages share: `fifo` (synchronous FIFO with reset and
//! occupancy) and `fifo_p` (its depth from the core profile), `pram` (a RAM
//! declaring only the profile's entries) and `qp_ram` (a QP-indexed RAM of
//! the profile's QP count), `skid` (register slice for a valid/ready
//! stream), `slot_drain` (the read side of `tx_seg`'s and `read_resp`'s
//! payload reorder buffers), `crc32c_beat` (the MPA CRC32c over one beat,
//! used by `mpa_rx`, `tx_mpa` and the core), the DMA arbiters `dma_rd_arb`
//! (the core's four read clients) and `dma_wr_arb` (two write streams
//! merged at request boundaries), [`k`] for blocks' constant fields, and
//! `testutil` for the blocks' tests.

pub mod crc32c_beat;
pub mod dma_rd_arb;
pub mod dma_wr_arb;
pub mod fifo;
pub mod fifo_p;
pub mod pram;
pub mod qp_ram;
pub mod skid;
pub mod slot_drain;
#[cfg(test)]
pub(crate) mod testutil;

/// A width-`N` constant for a block's named constant fields (rust-hdl wants
/// constants as fields, built in the block's constructor).
pub(crate) fn k<const N: usize>(v: u64) -> rust_hdl::prelude::Constant<rust_hdl::prelude::Bits<N>> {
    rust_hdl::prelude::Constant::new(v.into())
}
