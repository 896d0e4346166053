//! `rnic-fw`: the rnic firmware (slow path), `#![no_std]`, no allocation.
//!
//! The firmware sees the device only through the [`hal::Hal`] trait. It
//! answers ARP ([`arp`]) and `ping` ([`icmp`]), runs the TCP handshake and teardown of every
//! connection ([`tcp`]), applies the connection filter ([`filter`]),
//! negotiates MPA ([`mpa`]), keeps the QP state machine ([`qp`]), rewrites
//! next hops on route updates ([`route`]) and serves the host's command
//! mailbox ([`mailbox`]). [`Firmware`] ties them together; its
//! [`Firmware::poll`] is the main loop's body.
//!
//! Every capacity is a const generic with a default that fits a small soft
//! CPU; state lives in fixed-size arrays and `heapless` containers.
#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(any(test, feature = "image"))]
extern crate std;

#[macro_use]
mod log;

pub mod arp;
pub mod filter;
pub mod frame;
pub mod fw;
pub mod hal;
pub mod icmp;
#[cfg(feature = "image")]
pub mod image;
pub mod mailbox;
pub mod mpa;
pub mod port_hal;
pub mod qp;
pub mod resources;
pub mod retx;
pub mod route;
pub mod rtr;
pub mod rtt;
pub mod tcp;
pub mod terminate;

pub use fw::{Config, Firmware};
pub use hal::{Exception, Hal, HalError, IfConfig, TermRequest};

/// Time in microseconds (from [`Hal::now_us`]).
pub type Micros = u64;

/// One millisecond in [`Micros`].
pub const MS: Micros = 1000;
