//! `rnic-hw`: the rnic RTL, written as rust-hdl blocks.
//!
//! Conventions for every block (see `docs/rtl.md`):
//! * one clock `clock`, an explicit synchronous active-high `reset`;
//! * streams are `data[64]`, `keep[4]`, `last`, `valid`, `ready`; byte 0 of a
//!   frame is `data[7:0]` (little-endian lanes); `keep` is the number of valid
//!   bytes of a `last` beat, 1..=8 (0 only for an empty frame), and 8 on
//!   every other beat.
//!
//! The blocks are grouped by pipeline stage: [`receive`], [`transmit`],
//! [`completion`], [`protection`], [`host`], [`firmware_port`], with the
//! shared primitives in [`common`]; [`rnic_core`] composes them, sized by a
//! [`profile`], and [`board`] holds the FPGA board tops around it.
//!
//! The Verilog of [`rnic_core::RnicCore`] is checked in under
//! `hw/generated/`; [`gen`] produces it and `rnic-hw-gen` writes it.

pub mod board;
pub mod common;
pub mod completion;
pub mod cpu;
pub mod firmware_port;
pub mod gen;
pub mod host;
pub mod profile;
pub mod protection;
pub mod receive;
pub mod rnic_core;
pub mod transmit;

// The board tops (`board/`) name these modules from the crate root
// (`crate::fifo`, `crate::pram`, `crate::rx_fifo`, `crate::tx_ddp_hdr`,
// `crate::testutil`); everything else uses the stage paths.
#[cfg(test)]
use common::testutil;
pub(crate) use common::{fifo, pram};
pub(crate) use receive::rx_fifo;
pub(crate) use transmit::tx_ddp_hdr;

// hw/tests/: the checks of the checked-in Verilog (Verilator lint) and of
// the FPGA flow's scripts, built into the library's test harness
// (`autotests = false` in Cargo.toml says why); they name the crate
// `rnic_hw` as an outside user would.
#[cfg(test)]
extern crate self as rnic_hw;
#[cfg(test)]
#[path = "../tests"]
mod integration {
    mod fpga_part;
    mod fpga_report;
    mod lint;
}
