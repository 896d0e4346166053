//! Work queue entries: rings of fixed-size 128-octet WQEs in host memory.
//!
//! Send WQE layout:
//! ```text
//!  0  wr_id          u64   returned in the completion
//!  8  opcode         u8    [`SendOpcode`]
//!  9  flags          u8    `WQE_FLAG_*`
//! 10  num_sge        u8    0..=MAX_SGE_PER_WQE (0 with WQE_FLAG_INLINE)
//! 11  inline_len     u8    with WQE_FLAG_INLINE: 0..=MAX_INLINE_DATA; else zero
//! 12  imm_or_inv     u32   immediate data, or the STag to invalidate
//! 16  remote_offset  u64   remote tagged offset (RDMA Write / Read)
//! 24  remote_stag    u32   remote STag (RDMA Write / Read)
//! 28  reserved       u32   zero
//! 32  sge[6]         16 octets each: addr u64, length u32, lkey u32
//!     or inline data  with WQE_FLAG_INLINE: the message itself, inline_len
//!                     octets (the rest of the 96 octets zero)
//! ```
//! An inline WQE (`WQE_FLAG_INLINE`, the verbs `IBV_SEND_INLINE`) carries
//! its message in the WQE: the device reads no SGE and checks no lkey, so
//! a small message costs no DMA read beyond the WQE's own. Only RDMA Write
//! and the Send family may be inline (an RDMA Read's SGE is its sink).
//! A receive WQE has the same size: `wr_id` at 0, `num_sge` at 10, SGEs at 32;
//! the other fields are reserved (zero). SGE slots at and beyond `num_sge`
//! are ignored (the emitters write zeros there).
//!
//! Six SGEs as Linux siw (`SIW_MAX_SGE`); the message of a WQE is the
//! concatenation of its SGEs in order, and its length (the sum of the SGE
//! lengths) must fit in 32 bits (RDMAP lengths and `byte_len` are 32-bit):
//! a WQE whose SGEs add up to more is refused like one with too many SGEs.

use super::le::*;
use super::{check_len, check_out};
use crate::{Error, Result};

/// Size of every WQE in octets.
pub const WQE_SIZE: usize = 128;
/// Largest number of SGEs a WQE holds (the device may support fewer: `CAPS`).
pub const MAX_SGE_PER_WQE: usize = 6;
/// Size of one SGE.
pub const SGE_SIZE: usize = 16;

const OFF_WR_ID: usize = 0;
const OFF_OPCODE: usize = 8;
const OFF_FLAGS: usize = 9;
const OFF_NUM_SGE: usize = 10;
const OFF_INLINE_LEN: usize = 11;
const OFF_IMM_OR_INV: usize = 12;
const OFF_REMOTE_OFFSET: usize = 16;
const OFF_REMOTE_STAG: usize = 24;
const OFF_RSVD1: usize = 28;
const OFF_SGE: usize = 32;
const _: () = assert!(OFF_SGE + MAX_SGE_PER_WQE * SGE_SIZE == WQE_SIZE);

/// Completion requested (signaled WR); without it only errors complete.
pub const WQE_FLAG_SIGNALED: u8 = 1 << 0;
/// Send with Solicited Event (RFC 5040 §5.1); only for Send opcodes.
pub const WQE_FLAG_SOLICITED: u8 = 1 << 1;
/// Fence: wait for every earlier RDMA Read on this QP to complete first.
pub const WQE_FLAG_FENCE: u8 = 1 << 2;
/// Inline: the message is the `inline_len` octets at offset 32 (module doc).
pub const WQE_FLAG_INLINE: u8 = 1 << 3;
const WQE_FLAGS_ALL: u8 = WQE_FLAG_SIGNALED | WQE_FLAG_SOLICITED | WQE_FLAG_FENCE | WQE_FLAG_INLINE;
/// Largest inline message: the WQE's SGE area.
pub const MAX_INLINE_DATA: usize = MAX_SGE_PER_WQE * SGE_SIZE;
/// Offset of an inline message in its WQE.
pub const INLINE_DATA_OFFSET: usize = OFF_SGE;

/// The operation a send WQE asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SendOpcode {
    /// RDMA Write (RFC 5040 §4.3).
    RdmaWrite = 0,
    /// RDMA Write followed by Immediate Data (RFC 7306 §4).
    RdmaWriteWithImm = 1,
    /// Send.
    Send = 2,
    /// Send with Invalidate of `imm_or_inv` at the peer (RFC 5040 §5.2).
    SendWithInv = 3,
    /// RDMA Read: Read Request out, Read Response placed into the local SGEs.
    RdmaRead = 4,
    /// Send followed by Immediate Data (RFC 7306 §4).
    SendWithImm = 5,
}

impl SendOpcode {
    /// Decodes the opcode octet.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => SendOpcode::RdmaWrite,
            1 => SendOpcode::RdmaWriteWithImm,
            2 => SendOpcode::Send,
            3 => SendOpcode::SendWithInv,
            4 => SendOpcode::RdmaRead,
            5 => SendOpcode::SendWithImm,
            _ => return Err(Error::BadOpcode),
        })
    }

    /// True for operations that name a remote buffer (STag + offset).
    pub fn is_tagged(self) -> bool {
        matches!(
            self,
            SendOpcode::RdmaWrite | SendOpcode::RdmaWriteWithImm | SendOpcode::RdmaRead
        )
    }

    /// True for the Send family (consumes a receive WQE at the peer).
    pub fn is_send(self) -> bool {
        matches!(
            self,
            SendOpcode::Send | SendOpcode::SendWithInv | SendOpcode::SendWithImm
        )
    }
}

/// A scatter/gather element: `length` octets at virtual address `addr` in the
/// local memory region named by `lkey` (checked against the TPT like any access).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Sge {
    /// Virtual address inside the region.
    pub addr: u64,
    /// Length in octets.
    pub length: u32,
    /// The local STag of the region.
    pub lkey: u32,
}

impl Sge {
    fn parse_at(b: &[u8], off: usize) -> Sge {
        Sge {
            addr: u64_at(b, off),
            length: u32_at(b, off + 8),
            lkey: u32_at(b, off + 12),
        }
    }
    fn emit_at(&self, b: &mut [u8], off: usize) {
        put_u64(b, off, self.addr);
        put_u32(b, off + 8, self.length);
        put_u32(b, off + 12, self.lkey);
    }
}

/// A fixed-capacity SGE list (no allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SgeList {
    sges: [Sge; MAX_SGE_PER_WQE],
    len: u8,
}

impl SgeList {
    /// A list of the given SGEs; `Err(BadLength)` for more than
    /// [`MAX_SGE_PER_WQE`], or SGEs adding up to more than 2^32 - 1 octets.
    pub fn new(sges: &[Sge]) -> Result<Self> {
        if sges.len() > MAX_SGE_PER_WQE
            || sges.iter().map(|s| s.length as u64).sum::<u64>() > u32::MAX as u64
        {
            return Err(Error::BadLength);
        }
        let mut l = SgeList::default();
        l.sges[..sges.len()].copy_from_slice(sges);
        l.len = sges.len() as u8;
        Ok(l)
    }
    /// The SGEs.
    pub fn as_slice(&self) -> &[Sge] {
        &self.sges[..self.len as usize]
    }
    /// Total length in octets (u64: cannot overflow).
    pub fn total_len(&self) -> u64 {
        self.as_slice().iter().map(|s| s.length as u64).sum()
    }
}

/// An inline message (at most [`MAX_INLINE_DATA`] octets, no allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineData {
    data: [u8; MAX_INLINE_DATA],
    len: u8,
}

impl InlineData {
    /// The message `data`; `Err(BadLength)` above [`MAX_INLINE_DATA`] octets.
    pub fn new(data: &[u8]) -> Result<Self> {
        if data.len() > MAX_INLINE_DATA {
            return Err(Error::BadLength);
        }
        let mut d = InlineData {
            data: [0; MAX_INLINE_DATA],
            len: data.len() as u8,
        };
        d.data[..data.len()].copy_from_slice(data);
        Ok(d)
    }
    /// The message's octets.
    pub fn as_slice(&self) -> &[u8] {
        &self.data[..self.len as usize]
    }
}

fn parse_sges(b: &[u8]) -> Result<SgeList> {
    let n = b[OFF_NUM_SGE] as usize;
    if n > MAX_SGE_PER_WQE {
        return Err(Error::BadLength);
    }
    let mut l = SgeList::default();
    for i in 0..n {
        l.sges[i] = Sge::parse_at(b, OFF_SGE + i * SGE_SIZE);
    }
    l.len = n as u8;
    if l.total_len() > u32::MAX as u64 {
        return Err(Error::BadLength);
    }
    Ok(l)
}

fn emit_sges(l: &SgeList, b: &mut [u8]) {
    b[OFF_NUM_SGE] = l.len;
    for i in 0..MAX_SGE_PER_WQE {
        let s = l
            .sges
            .get(i)
            .filter(|_| i < l.len as usize)
            .copied()
            .unwrap_or_default();
        s.emit_at(b, OFF_SGE + i * SGE_SIZE);
    }
}

/// A send queue WQE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SendWqe {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// The operation.
    pub opcode: SendOpcode,
    /// `WQE_FLAG_*`.
    pub flags: u8,
    /// Immediate data or the STag to invalidate (0 otherwise).
    pub imm_or_inv: u32,
    /// Remote tagged offset for RDMA Write/Read.
    pub remote_offset: u64,
    /// Remote STag for RDMA Write/Read.
    pub remote_stag: u32,
    /// Local buffers: the source (Write, Send) or the sink (Read); empty
    /// when the message is `inline`.
    pub sges: SgeList,
    /// The message itself, carried in the WQE (`WQE_FLAG_INLINE`, set by
    /// `emit` from this field): RDMA Write and the Send family only.
    pub inline: Option<InlineData>,
}

impl SendWqe {
    /// Size in octets.
    pub const SIZE: usize = WQE_SIZE;

    /// Parses a WQE; unknown opcodes, unknown flags, non-zero reserved fields,
    /// too many SGEs and SGEs adding up to more than 2^32 - 1 octets are
    /// errors, and so is an inline WQE with SGEs, more than
    /// [`MAX_INLINE_DATA`] octets, or an RDMA Read opcode (the device
    /// completes such a WQE with
    /// [`super::cqe::WcStatus::LocalQpOperationError`]).
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, WQE_SIZE)?;
        let flags = b[OFF_FLAGS];
        let is_inline = flags & WQE_FLAG_INLINE != 0;
        if flags & !WQE_FLAGS_ALL != 0
            || (!is_inline && b[OFF_INLINE_LEN] != 0)
            || u32_at(b, OFF_RSVD1) != 0
        {
            return Err(Error::BadField);
        }
        let opcode = SendOpcode::from_u8(b[OFF_OPCODE])?;
        if flags & WQE_FLAG_SOLICITED != 0 && !opcode.is_send() {
            return Err(Error::BadField);
        }
        let inline = if is_inline {
            let len = b[OFF_INLINE_LEN] as usize;
            if b[OFF_NUM_SGE] != 0 || opcode == SendOpcode::RdmaRead {
                return Err(Error::BadField);
            }
            if len > MAX_INLINE_DATA {
                return Err(Error::BadLength);
            }
            Some(InlineData::new(&b[OFF_SGE..OFF_SGE + len])?)
        } else {
            None
        };
        Ok(SendWqe {
            wr_id: u64_at(b, OFF_WR_ID),
            opcode,
            flags,
            imm_or_inv: u32_at(b, OFF_IMM_OR_INV),
            remote_offset: u64_at(b, OFF_REMOTE_OFFSET),
            remote_stag: u32_at(b, OFF_REMOTE_STAG),
            sges: if is_inline {
                SgeList::default()
            } else {
                parse_sges(b)?
            },
            inline,
        })
    }

    /// Writes the WQE into `b[..WQE_SIZE]`. `WQE_FLAG_INLINE` follows
    /// `inline`; an inline WQE with SGEs, or an inline RDMA Read, is
    /// `Err(BadField)` (the device would refuse it).
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, WQE_SIZE)?;
        if self.inline.is_some()
            && (!self.sges.as_slice().is_empty() || self.opcode == SendOpcode::RdmaRead)
        {
            return Err(Error::BadField);
        }
        let b = &mut b[..WQE_SIZE];
        b.fill(0);
        put_u64(b, OFF_WR_ID, self.wr_id);
        b[OFF_OPCODE] = self.opcode as u8;
        b[OFF_FLAGS] = self.flags & !WQE_FLAG_INLINE;
        put_u32(b, OFF_IMM_OR_INV, self.imm_or_inv);
        put_u64(b, OFF_REMOTE_OFFSET, self.remote_offset);
        put_u32(b, OFF_REMOTE_STAG, self.remote_stag);
        match &self.inline {
            Some(d) => {
                b[OFF_FLAGS] |= WQE_FLAG_INLINE;
                b[OFF_INLINE_LEN] = d.len;
                b[OFF_SGE..OFF_SGE + d.as_slice().len()].copy_from_slice(d.as_slice());
            }
            None => emit_sges(&self.sges, b),
        }
        Ok(())
    }

    /// The message length in octets (inline or the SGEs' sum).
    pub fn message_len(&self) -> u64 {
        match &self.inline {
            Some(d) => d.as_slice().len() as u64,
            None => self.sges.total_len(),
        }
    }
}

/// A receive queue WQE: where the next incoming Send is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecvWqe {
    /// Caller's cookie, returned in the completion.
    pub wr_id: u64,
    /// The buffers, filled in order.
    pub sges: SgeList,
}

impl RecvWqe {
    /// Size in octets.
    pub const SIZE: usize = WQE_SIZE;

    /// Parses a receive WQE; reserved fields must be zero.
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, WQE_SIZE)?;
        let reserved_zero = b[OFF_OPCODE..OFF_NUM_SGE]
            .iter()
            .chain(&b[OFF_INLINE_LEN..OFF_SGE])
            .all(|&x| x == 0);
        if !reserved_zero {
            return Err(Error::BadField);
        }
        Ok(RecvWqe {
            wr_id: u64_at(b, OFF_WR_ID),
            sges: parse_sges(b)?,
        })
    }

    /// Writes the WQE into `b[..WQE_SIZE]`.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, WQE_SIZE)?;
        let b = &mut b[..WQE_SIZE];
        b.fill(0);
        put_u64(b, OFF_WR_ID, self.wr_id);
        emit_sges(&self.sges, b);
        Ok(())
    }
}
