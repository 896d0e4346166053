//! Typed errors. Three families: the caller's input was refused
//! ([`Error::InvalidInput`], [`Error::BadWr`], [`Error::QueueFull`],
//! [`Error::WrongState`]); the firmware refused a command
//! ([`Error::Refused`]); or the device said something that is not in the ABI
//! ([`Error::Device`], [`Error::Timeout`]). None of them is a panic.

use crate::bus::BusError;
use rnic_wire::abi::mailbox::{MboxStatus, Opcode, QpState};

/// What the caller got wrong in an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputError {
    /// Access flag bits outside `ACCESS_*`, or remote write without local
    /// write (a remotely writable region must be locally writable, as in verbs).
    AccessFlags(u8),
    /// A memory region of zero octets, or a range outside its buffer.
    RegionRange,
    /// A queue size of zero or over the device's `MAX_QUEUE_ENTRIES`.
    QueueSize(u32),
    /// Private data over RFC 5044 §7.1's 512 octets.
    PrivateDataTooLong(usize),
    /// A port of zero.
    Port,
    /// A filter rule's prefix length over 32 or an empty port range.
    FilterRule,
    /// A next hop of 0.0.0.0 or a multicast MAC.
    Route,
    /// A retransmission timer whose RTOs are out of order (`0 < min <=
    /// initial <= max`), over `u32::MAX` µs, or with no retries.
    RetxTimer,
    /// A station MAC that is multicast, or an MTU under IPv4's 576 (RFC 791).
    NetConfig,
    /// An object from another context, PD or CQ than the call needs.
    Mismatch,
    /// A command's parameters do not encode (`rnic_wire` refused them).
    Encoding,
}

/// Why one work request was refused (nothing of the list was posted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WrError {
    /// More SGEs than the device takes (`CAPS[15:8]`, at most six; for an
    /// RDMA Read's sink `CAPS[23:16]`, one on this device).
    TooManySges {
        /// SGEs given.
        given: usize,
        /// The limit.
        max: usize,
    },
    /// The SGE's lkey names no memory region of this context.
    UnknownLkey {
        /// Which SGE.
        sge: usize,
    },
    /// The SGE's region belongs to another protection domain than the QP.
    WrongPd {
        /// Which SGE.
        sge: usize,
    },
    /// The SGE lies (partly) outside its region.
    SgeOutOfBounds {
        /// Which SGE.
        sge: usize,
    },
    /// The region lacks local write, which a receive buffer or an RDMA Read
    /// sink needs.
    NoLocalWrite {
        /// Which SGE.
        sge: usize,
    },
    /// The message is longer than 2^32 - 1 octets (RFC 5040 §4: lengths are 32 bits).
    MessageTooLong,
    /// Solicited Event asked for an operation other than a Send (RFC 5040 §5.1).
    SolicitedNotSend,
    /// Immediate data asked of a device without `CAP_IMMEDIATE` (RFC 7306).
    NoImmediate,
    /// Inline data longer than the device takes (`max_inline_data`).
    InlineTooLong {
        /// Octets given.
        given: usize,
        /// The limit.
        max: usize,
    },
    /// Inline data given with SGEs, or for an RDMA Read (whose SGE is its
    /// sink): an inline message has no buffers.
    InlineNotAllowed,
}

/// Something the device wrote or answered that the ABI does not allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceError {
    /// `ID` is not "RNIC".
    BadId(u32),
    /// `ABI_VERSION` has another major version.
    AbiVersion(u32),
    /// `STATUS` does not show the firmware ready.
    NotReady,
    /// `CTRL_RESET` still reads 1 when the open's reset timeout ran out
    /// (the `CTRL` value last read).
    ResetTimeout(u32),
    /// A limit register is zero (the device offers nothing of that kind).
    BadLimit {
        /// The CSR offset.
        csr: u32,
        /// What it read.
        value: u32,
    },
    /// `MBOX_STATUS` is not an `MboxStatus`.
    MailboxStatus(u32),
    /// `MBOX_LEN` of a result is over the data window or what the command returns.
    MailboxLength(u32),
    /// `MBOX_SEQ` moved by other than one.
    MailboxSequence {
        /// Expected.
        expected: u32,
        /// Read.
        found: u32,
    },
    /// A command result's words are malformed (e.g. a CQ number out of range).
    MailboxResult(Opcode),
    /// A CQE could not be parsed (unknown opcode, status, flags or Terminate cause).
    CqeFormat,
    /// A CQE names a QP that does not use this CQ.
    CqeQp(u32),
    /// A CQE's wr_id/opcode does not match the next outstanding work request
    /// of its queue, or the queue has none outstanding.
    CqeOrder {
        /// The QP.
        qpn: u32,
        /// The wr_id the CQE carries.
        wr_id: u64,
    },
    /// A successful receive completion longer than the posted buffers.
    CqeLength {
        /// The QP.
        qpn: u32,
    },
    /// An event queue entry could not be parsed.
    EventFormat,
    /// The device reports that the event queue overflowed (events were lost).
    EventOverflow,
}

/// The driver's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// A bad argument.
    InvalidInput(InputError),
    /// Work request `index` of a post call was refused; nothing was posted.
    BadWr {
        /// Position in the list.
        index: usize,
        /// Why.
        reason: WrError,
    },
    /// The queue has fewer free slots than the post call needs; nothing was posted.
    QueueFull {
        /// Free slots.
        free: u32,
        /// Slots asked for.
        needed: usize,
    },
    /// The QP's state does not allow the call (post_send needs RTS,
    /// post_recv Idle or RTS, connect/accept Idle).
    WrongState(QpState),
    /// The firmware refused a mailbox command.
    Refused(Opcode, MboxStatus),
    /// The device broke the ABI.
    Device(DeviceError),
    /// The device did not answer in time (mailbox, wait).
    Timeout,
    /// The bus failed.
    Bus(BusError),
    /// The driver's own numbering ran out (2^32 PDs allocated).
    Exhausted,
}

impl From<BusError> for Error {
    fn from(e: BusError) -> Self {
        Error::Bus(e)
    }
}

impl From<DeviceError> for Error {
    fn from(e: DeviceError) -> Self {
        Error::Device(e)
    }
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::InvalidInput(e)
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::InvalidInput(e) => write!(f, "invalid input: {e:?}"),
            Error::BadWr { index, reason } => write!(f, "work request {index}: {reason:?}"),
            Error::QueueFull { free, needed } => {
                write!(f, "queue full: {free} free, {needed} needed")
            }
            Error::WrongState(s) => write!(f, "QP state {s:?} does not allow this"),
            Error::Refused(op, s) => write!(f, "firmware refused {op:?}: {s:?}"),
            Error::Device(e) => write!(f, "device broke the ABI: {e:?}"),
            Error::Timeout => f.write_str("device did not answer in time"),
            Error::Bus(e) => write!(f, "bus: {e}"),
            Error::Exhausted => f.write_str("driver numbering exhausted"),
        }
    }
}

impl std::error::Error for Error {}

/// Result with the driver's [`Error`].
pub type Result<T> = core::result::Result<T, Error>;
