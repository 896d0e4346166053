//! Software reference model of the iWARP protocol stack (MPA, DDP, RDMAP).
//!
//! This is what the RTL, the firmware and the co-simulation are checked
//! against, so it favours plain, obviously right code over speed. It is built
//! from the crate's wire formats and adds the *behaviour*: how a message is
//! cut into segments, what a receiver does with each one, and which
//! Terminate it answers a bad one with.
//!
//! | module | what |
//! |---|---|
//! | [`tx`] | [`TxStream`]: messages → one FPDU per TCP segment |
//! | [`rx`] | [`Receiver`]: TCP payload → MPA deframing, DDP/RDMAP checks, placement, events, Terminate |
//! | [`net`] | Ethernet/IPv4/TCP frames around TCP payload (smoltcp), and back |
//!
//! Both ends of one direction of an RDMAP stream share its MPA settings,
//! [`MpaSettings`]: after the MPA Request/Reply exchange (RFC 5044 §7.1)
//! CRC is used in both directions if either side set C, and markers are
//! sent *towards* a peer that set M (M says "I want to receive markers").
//! `seq_start` is SeqStart of RFC 5044 §4.3: the TCP sequence number of the
//! first octet after the MPA Request/Reply frame in that direction, where
//! the first FPDU (and, with markers, the first marker) begins.

pub mod net;
pub mod rx;
pub mod tx;

pub use net::{parse_frame, Endpoint, FourTuple, FrameError, TcpPair, TcpSegmentView};
pub use rx::{terminate_for, Event, Receiver, RecvBuffer, Region, RxConfig, RxError, Tpt};
pub use tx::{frame_ulpdu, Message, Segment, TxError, TxStream};

/// The MPA settings of one direction of a stream (RFC 5044 §7.1, §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MpaSettings {
    /// CRC32c in every FPDU (RFC 5044 §4.4). When off, the CRC field is
    /// still sent, as zero, and not checked.
    pub crc: bool,
    /// Markers every 512 octets of sequence space (RFC 5044 §4.3).
    pub markers: bool,
    /// SeqStart: sequence number of the first FPDU octet of this direction.
    pub seq_start: u32,
}

/// MSN of the first message on every untagged queue (QN 0, 1 and 2): RFC
/// 5041 §4.3 (MSN field) sets it to one, incremented per message and
/// wrapping modulo 2^32.
pub const INITIAL_MSN: u32 = 1;
