//! `rnic-wire`: the iWARP wire formats, the rnic host/device ABI and the
//! software reference model every other part of rnic is checked against.
//!
//! Formats follow smoltcp's `wire` style: a zero-copy `Packet<T: AsRef<[u8]>>`
//! view that checks lengths once (`new_checked`) and reads fields, plus a plain
//! `Repr` struct with `parse` and `emit`. Ethernet, IPv4, TCP and ARP are
//! smoltcp's own (re-exported as [`net`]), not written again.
//!
//! | module | what | RFC |
//! |---|---|---|
//! | [`crc`] | CRC32c | RFC 3720 §12.1, RFC 5044 §6 |
//! | [`mpa`] | FPDU framing, markers, MULPDU, request/reply frames | RFC 5044, RFC 6581 |
//! | [`ddp`] | tagged and untagged DDP headers | RFC 5041 |
//! | [`rdmap`] | RDMAP control, opcodes, Read Request | RFC 5040, RFC 7306 |
//! | [`terminate`] | Terminate message and error codes | RFC 5040 §4.8, §7; RFC 5041 §7; RFC 5044 §8 |
//! | [`abi`] | host/device ABI: CSRs, doorbells, WQE, CQE, TPT, mailbox | (rnic) |
//! | [`model`] | software reference model of the protocol | |
//! | [`rng`] | seeded generators for tests and the simulator | |
#![no_std]
#![deny(unsafe_code)]

#[cfg(feature = "std")]
extern crate std;

pub mod abi;
pub mod crc;
pub mod ddp;
mod error;
#[cfg(feature = "std")]
pub mod model;
pub mod mpa;
pub mod rdmap;
pub mod rng;
pub mod terminate;

pub use error::{Error, Result};

/// Ethernet, ARP, IPv4 and TCP formats, from smoltcp (DESIGN.md §2).
pub mod net {
    pub use smoltcp::phy::ChecksumCapabilities;
    pub use smoltcp::wire::*;
}
