//! Completion queue entries: a ring of 32-octet CQEs in host memory, written
//! by the device. The host polls memory, not registers: an entry is new when
//! its owner bit equals the ring's current phase, which starts at 1 and
//! flips each time the producer wraps.
//!
//! ```text
//!  0  wr_id        u64   from the WQE (receive: from the receive WQE)
//!  8  byte_len     u32   octets transferred (receive side: octets placed)
//! 12  qpn          u32   the QP
//! 16  opcode       u8    [`WcOpcode`]
//! 17  status       u8    [`WcStatus`]
//! 18  flags        u8    `CQE_FLAG_*`
//! 19  reserved     u8
//! 20  imm_or_inv   u32   immediate data, or the STag the peer invalidated
//! 24  term_cause   u32   [`TERM_CAUSE_PRESENT`] | the Terminate's 16-bit
//!                        layer/type/code (RFC 5040 §4.8) when a Terminate
//!                        caused the error; else 0
//! 28  reserved     u16, u8
//! 31  owner        u8    bit 0: phase; written last
//! ```

use super::le::*;
use super::{check_len, check_out};
use crate::{Error, Result};

/// Size of a CQE in octets.
pub const CQE_SIZE: usize = 32;

const OFF_WR_ID: usize = 0;
const OFF_BYTE_LEN: usize = 8;
const OFF_QPN: usize = 12;
const OFF_OPCODE: usize = 16;
const OFF_STATUS: usize = 17;
const OFF_FLAGS: usize = 18;
const OFF_IMM_OR_INV: usize = 20;
const OFF_TERM_CAUSE: usize = 24;
/// Offset of the owner (phase) octet; the device writes it last.
pub const OFF_OWNER: usize = 31;
const _: () = assert!(OFF_OWNER + 1 == CQE_SIZE);

/// Bit 31 of `term_cause`: the low 16 bits hold a Terminate's layer (4 bits),
/// error type (4) and code (8) as on the wire (RFC 5040 §4.8). Without it
/// there was no Terminate (0/0/0 is a real cause: RDMAP local catastrophic).
pub const TERM_CAUSE_PRESENT: u32 = 1 << 31;

/// Encodes an optional Terminate cause for [`Cqe::term_cause`].
pub fn encode_term_cause(cause: Option<crate::terminate::TerminateCause>) -> u32 {
    cause.map_or(0, |c| TERM_CAUSE_PRESENT | c.to_bits() as u32)
}

/// Decodes [`Cqe::term_cause`]; `Err` if the present bit is set over an
/// undefined cause, or stray bits are set.
pub fn decode_term_cause(raw: u32) -> Result<Option<crate::terminate::TerminateCause>> {
    if raw & TERM_CAUSE_PRESENT == 0 {
        return if raw == 0 {
            Ok(None)
        } else {
            Err(Error::BadField)
        };
    }
    if raw & !(TERM_CAUSE_PRESENT | 0xFFFF) != 0 {
        return Err(Error::BadField);
    }
    crate::terminate::TerminateCause::from_bits(raw as u16).map(Some)
}

/// `imm_or_inv` holds immediate data (RFC 7306).
pub const CQE_FLAG_WITH_IMM: u8 = 1 << 0;
/// `imm_or_inv` holds the STag the peer invalidated (Send with Invalidate).
pub const CQE_FLAG_WITH_INV: u8 = 1 << 1;
/// The completed receive was solicited (Send with Solicited Event).
pub const CQE_FLAG_SOLICITED: u8 = 1 << 2;
const CQE_FLAGS_ALL: u8 = CQE_FLAG_WITH_IMM | CQE_FLAG_WITH_INV | CQE_FLAG_SOLICITED;

/// What completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WcOpcode {
    /// A Send (any Send variant) from this side.
    Send = 0,
    /// An RDMA Write (with or without immediate) from this side.
    RdmaWrite = 1,
    /// An RDMA Read from this side.
    RdmaRead = 2,
    /// A Send received into a receive WQE.
    Recv = 0x80,
    /// An RDMA Write with Immediate received (consumes a receive WQE, RFC 7306).
    RecvRdmaWithImm = 0x81,
}

impl WcOpcode {
    /// Decodes the opcode octet.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => WcOpcode::Send,
            1 => WcOpcode::RdmaWrite,
            2 => WcOpcode::RdmaRead,
            0x80 => WcOpcode::Recv,
            0x81 => WcOpcode::RecvRdmaWithImm,
            _ => return Err(Error::BadOpcode),
        })
    }
}

/// Completion status. The values are libibverbs' `ibv_wc_status`, so an RDMA
/// programmer reads them as they are used to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WcStatus {
    /// Success.
    Success = 0,
    /// Local length error: a receive buffer too small, or a WR too long.
    LocalLengthError = 1,
    /// Local QP operation error: a malformed WQE.
    LocalQpOperationError = 2,
    /// Local protection error: an SGE failed its TPT check.
    LocalProtectionError = 4,
    /// The WR was flushed because the QP moved to error.
    WrFlushError = 5,
    /// Bad response from the peer (e.g. an unexpected Read Response).
    BadResponseError = 7,
    /// Local access error detected on an incoming operation.
    LocalAccessError = 8,
    /// Remote invalid request (the peer reported an invalid opcode or length).
    RemoteInvalidRequestError = 9,
    /// Remote access error: the peer's TPT check failed (Terminate, RFC 5040 §7).
    RemoteAccessError = 10,
    /// Remote operation error: the peer could not complete the operation.
    RemoteOperationError = 11,
    /// Retransmissions exhausted: the connection was lost.
    RetryExceededError = 12,
    /// A fatal device error.
    FatalError = 19,
    /// Any other error.
    GeneralError = 21,
}

impl WcStatus {
    /// Decodes the status octet.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => WcStatus::Success,
            1 => WcStatus::LocalLengthError,
            2 => WcStatus::LocalQpOperationError,
            4 => WcStatus::LocalProtectionError,
            5 => WcStatus::WrFlushError,
            7 => WcStatus::BadResponseError,
            8 => WcStatus::LocalAccessError,
            9 => WcStatus::RemoteInvalidRequestError,
            10 => WcStatus::RemoteAccessError,
            11 => WcStatus::RemoteOperationError,
            12 => WcStatus::RetryExceededError,
            19 => WcStatus::FatalError,
            21 => WcStatus::GeneralError,
            _ => return Err(Error::BadField),
        })
    }
}

/// A completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cqe {
    /// The WR's cookie.
    pub wr_id: u64,
    /// Octets transferred.
    pub byte_len: u32,
    /// The QP.
    pub qpn: u32,
    /// What completed.
    pub opcode: WcOpcode,
    /// How it ended.
    pub status: WcStatus,
    /// `CQE_FLAG_*`.
    pub flags: u8,
    /// Immediate data or invalidated STag, per `flags`.
    pub imm_or_inv: u32,
    /// Terminate cause, see [`encode_term_cause`] / [`decode_term_cause`].
    pub term_cause: u32,
    /// The owner (phase) bit.
    pub phase: bool,
}

impl Cqe {
    /// Size in octets.
    pub const SIZE: usize = CQE_SIZE;

    /// The phase bit of a raw entry, without parsing the rest: the host reads
    /// this first and parses only entries it owns.
    pub fn phase_of(b: &[u8]) -> Result<bool> {
        check_len(b, CQE_SIZE)?;
        Ok(b[OFF_OWNER] & 1 != 0)
    }

    /// Parses a CQE.
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, CQE_SIZE)?;
        let flags = b[OFF_FLAGS];
        if flags & !CQE_FLAGS_ALL != 0 {
            return Err(Error::BadField);
        }
        Ok(Cqe {
            wr_id: u64_at(b, OFF_WR_ID),
            byte_len: u32_at(b, OFF_BYTE_LEN),
            qpn: u32_at(b, OFF_QPN),
            opcode: WcOpcode::from_u8(b[OFF_OPCODE])?,
            status: WcStatus::from_u8(b[OFF_STATUS])?,
            flags,
            imm_or_inv: u32_at(b, OFF_IMM_OR_INV),
            term_cause: u32_at(b, OFF_TERM_CAUSE),
            phase: b[OFF_OWNER] & 1 != 0,
        })
    }

    /// Writes the CQE into `b[..CQE_SIZE]`.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, CQE_SIZE)?;
        let b = &mut b[..CQE_SIZE];
        b.fill(0);
        put_u64(b, OFF_WR_ID, self.wr_id);
        put_u32(b, OFF_BYTE_LEN, self.byte_len);
        put_u32(b, OFF_QPN, self.qpn);
        b[OFF_OPCODE] = self.opcode as u8;
        b[OFF_STATUS] = self.status as u8;
        b[OFF_FLAGS] = self.flags;
        put_u32(b, OFF_IMM_OR_INV, self.imm_or_inv);
        put_u32(b, OFF_TERM_CAUSE, self.term_cause);
        b[OFF_OWNER] = self.phase as u8;
        Ok(())
    }
}
