//! The firmware's only window to the device (DESIGN.md §5).
//!
//! In co-simulation [`Hal`] is implemented over the CSR port of the Verilator
//! model; on the FPGA over the firmware port's MMIO registers
//! ([`rnic_wire::abi::context::port`]); in tests by a scripted mock.
//!
//! Contract the firmware relies on:
//! * table writes are atomic per entry: the fast path sees the old or the new
//!   entry, never a mix;
//! * the device fills in the event queue entry's phase bit;
//! * [`Hal::flush_qp`] completes every outstanding WR of the QP (send and
//!   receive) with `WcStatus::WrFlushError`; the firmware calls it each time
//!   a QP enters `Error`, after it has written the QP context;
//! * [`Hal::inject_rx`] feeds a frame into the receive pipeline (in front
//!   of the parser), as if it had just arrived; the firmware uses it to hand
//!   the fast path the FPDUs that came in the same segment as the MPA
//!   Request or Reply (see [`crate::mpa`]);
//! * [`Hal::retransmit`] makes the device replay a connection's
//!   unacknowledged FPDUs from its log (the firmware's retransmission timer
//!   for RDMA mode, [`crate::retx`]); the data lives in host memory, so only
//!   the device can resend it;
//! * [`Hal::pop_terminate`] hands over the Terminate requests the device
//!   built: by then the device has stopped the QP and places nothing more
//!   for it; sending the Terminate is the firmware's job
//!   ([`crate::terminate`]).

use rnic_wire::abi::context::{
    port, ConnContext, CqContext, ExceptionReason, QpContext, TableId, MAX_ENTRY_SIZE,
};
use rnic_wire::abi::mailbox::{Event, MboxStatus};

/// The interface configuration the host wrote into BAR0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IfConfig {
    /// Our MAC address.
    pub mac: [u8; 6],
    /// Our IPv4 address (u32 of the big-endian octets).
    pub ip: u32,
    /// Netmask, same encoding.
    pub netmask: u32,
    /// Default gateway, 0 if none.
    pub gateway: u32,
    /// MTU (IP packet size).
    pub mtu: u16,
}

impl IfConfig {
    /// Whether `ip` is on our subnet.
    pub fn on_link(&self, ip: u32) -> bool {
        (ip & self.netmask) == (self.ip & self.netmask)
    }

    /// The next hop toward `ip`: `ip` itself on our subnet, else the
    /// gateway; `None` when off-subnet without a gateway.
    pub fn next_hop(&self, ip: u32) -> Option<u32> {
        if self.on_link(ip) {
            Some(ip)
        } else if self.gateway != 0 {
            Some(self.gateway)
        } else {
            None
        }
    }

    /// The TCP MSS we offer: MTU less IPv4 and TCP headers.
    pub fn mss(&self) -> u16 {
        self.mtu.saturating_sub(40).max(536)
    }
}

/// The head of the exception queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exception {
    /// Why the frame is here.
    pub reason: ExceptionReason,
    /// The connection context the device matched, if any.
    pub conn: Option<u32>,
    /// Octets of the frame copied into the caller's buffer.
    pub len: usize,
    /// Octets of the whole frame as the device received it (`EXC_STATUS`).
    /// More than `len` when the frame did not fit the caller's buffer or the
    /// `EXC_DATA` window (`port::FRAME_WINDOW`: the exception queue keeps
    /// the first 2 KiB of a longer frame): then only its headers and the
    /// first payload octets are there ([`crate::frame::parse_exception`]).
    pub frame_len: usize,
}

/// A Terminate request from the device (`port::TERM_*`): the RX path found
/// a DDP/RDMAP/MPA error on a connection in RDMA mode, stopped the QP and
/// recorded what the Terminate must say (RFC 5040 §4.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermRequest {
    /// Layer, error type and code (`rnic_wire::terminate::TerminateCause::to_bits`).
    pub cause: u16,
    /// The connection context index.
    pub conn: u32,
    /// The QP.
    pub qpn: u32,
    /// The erroneous DDP segment's length (DDP header included); 0 when
    /// there is nothing to echo (an LLP error).
    pub seg_len: u16,
    /// The segment's first octets: its DDP header, then (for an RDMA Read
    /// Request) the RDMAP header; zero for an LLP error.
    pub hdr: [u8; port::TERM_HDR_LEN],
}

/// Why a device access failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HalError {
    /// No such table entry.
    BadIndex,
    /// A buffer is the wrong size for the entry or frame.
    BadLength,
    /// A queue is full (raw TX, inject, event queue) or the device is busy
    /// (a retransmission running); try later.
    Full,
    /// The device has no such function (e.g. no `RETX_CONN` register).
    Unsupported,
}

/// The device as the firmware sees it.
pub trait Hal {
    /// The interface configuration (BAR0 `MAC_*`, `IPV4_*`, `MTU`).
    fn config(&mut self) -> IfConfig;
    /// Monotonic time in microseconds (from the cycle counter).
    fn now_us(&mut self) -> u64;
    /// Reads entry `index` of `table` into `buf[..table.entry_size()]`.
    fn read_table(&mut self, table: TableId, index: u32, buf: &mut [u8]) -> Result<(), HalError>;
    /// Writes `data` (exactly `table.entry_size()` octets) into entry `index`,
    /// atomically.
    fn write_table(&mut self, table: TableId, index: u32, data: &[u8]) -> Result<(), HalError>;
    /// Takes the head of the exception queue, copying its frame into `buf`
    /// (truncated to `buf.len()`).
    fn recv_exception(&mut self, buf: &mut [u8]) -> Option<Exception>;
    /// Whether the exception queue may hold an entry: a cheap look before
    /// [`Hal::recv_exception`], so that an idle poll does not prepare a
    /// frame buffer (on the RISC-V core, zeroing 1.5 KiB is thousands of
    /// clocks). The default answers "maybe".
    fn exception_waiting(&mut self) -> bool {
        true
    }
    /// Sends a raw Ethernet frame (without FCS).
    fn send_frame(&mut self, frame: &[u8]) -> Result<(), HalError>;
    /// Puts a frame into the receive pipeline in front of the parser (`RX_INJECT`).
    fn inject_rx(&mut self, frame: &[u8]) -> Result<(), HalError>;
    /// The waiting host command, if any: its opcode, with its parameters
    /// copied into `buf`; returns the parameter length.
    fn mailbox_poll(&mut self, buf: &mut [u8]) -> Option<(u16, usize)>;
    /// Whether a host command may be waiting: a cheap look before
    /// [`Hal::mailbox_poll`] (whose parameter buffer is 1 KiB). The default
    /// answers "maybe".
    fn mailbox_waiting(&mut self) -> bool {
        true
    }
    /// Finishes the current host command with `status` and `result`.
    fn mailbox_done(&mut self, status: MboxStatus, result: &[u8]);
    /// Writes an event queue entry for the host (and raises its interrupt).
    fn post_event(&mut self, event: &Event) -> Result<(), HalError>;
    /// Asks the device to complete every outstanding WR of `qpn` with
    /// `WrFlushError`.
    fn flush_qp(&mut self, qpn: u32) -> Result<(), HalError>;
    /// Takes the head of the device's Terminate request queue (`TERM_*`
    /// registers, then `TERM_POP`). The default is for a device without
    /// one: nothing, ever.
    fn pop_terminate(&mut self) -> Option<TermRequest> {
        None
    }
    /// Asks the device to re-send, in order, every FPDU of connection
    /// `conn` that is not yet wholly acknowledged (go-back-N from SND.UNA;
    /// `port::RETX_CONN`). `Full` while a replay is still running
    /// (`port::RETX_STATUS` bit 0). The default is for a device without the
    /// register: [`HalError::Unsupported`], always.
    fn retransmit(&mut self, conn: u32) -> Result<(), HalError> {
        let _ = conn;
        Err(HalError::Unsupported)
    }
}

/// Typed table access over any [`Hal`].
pub trait HalExt: Hal {
    /// Reads a connection context.
    fn read_conn(&mut self, index: u32) -> Result<ConnContext, HalError> {
        let mut b = [0u8; MAX_ENTRY_SIZE];
        self.read_table(TableId::Conn, index, &mut b[..ConnContext::SIZE])?;
        ConnContext::parse(&b).map_err(|_| HalError::BadLength)
    }
    /// Writes a connection context.
    fn write_conn(&mut self, index: u32, c: &ConnContext) -> Result<(), HalError> {
        let mut b = [0u8; ConnContext::SIZE];
        c.emit(&mut b).map_err(|_| HalError::BadLength)?;
        self.write_table(TableId::Conn, index, &b)
    }
    /// Reads a QP context.
    fn read_qp(&mut self, qpn: u32) -> Result<QpContext, HalError> {
        let mut b = [0u8; MAX_ENTRY_SIZE];
        self.read_table(TableId::Qp, qpn, &mut b[..QpContext::SIZE])?;
        QpContext::parse(&b).map_err(|_| HalError::BadLength)
    }
    /// Writes a QP context.
    fn write_qp(&mut self, qpn: u32, q: &QpContext) -> Result<(), HalError> {
        let mut b = [0u8; QpContext::SIZE];
        q.emit(&mut b).map_err(|_| HalError::BadLength)?;
        self.write_table(TableId::Qp, qpn, &b)
    }
    /// Writes a CQ context.
    fn write_cq(&mut self, cqn: u32, c: &CqContext) -> Result<(), HalError> {
        let mut b = [0u8; CqContext::SIZE];
        c.emit(&mut b).map_err(|_| HalError::BadLength)?;
        self.write_table(TableId::Cq, cqn, &b)
    }
}

impl<H: Hal + ?Sized> HalExt for H {}
