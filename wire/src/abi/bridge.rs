//! The board's host bridge ("RB" version 1, `docs/bridge.md`): BAR0 MMIO,
//! the device's DMA and its interrupt carried in UDP between a host program
//! and the board's second Ethernet port.
//!
//! ```text
//!  0  magic     u16  0x5242
//!  2  version   u8   1
//!  3  opcode    u8   [`Opcode`]
//!  4  seq       u32  host request number, or the board's device sequence
//!  8  addr      u64  BAR0 offset (MMIO) or bus address (DMA)
//! 16  len       u16  payload octets after the header (DMA_RD_REQ: the
//!                    read length; no payload)
//! 18  tag       u8   DMA read tag; in a NAK the refused opcode
//! 19  flags     u8   FLAG_LAST, FLAG_IRQ
//! 20  status    u8   [`NakReason`] in a NAK, else 0
//! 21  reserved  u8   0
//! 22  payload
//! ```
//!
//! Like smoltcp's wire types: [`Packet`] is a checked view over a buffer
//! with field accessors, [`Repr`] the parsed message with `parse`/`emit`.
//! All fields little-endian, as the rest of the ABI.

use super::le::*;
use crate::{Error, Result};

/// `magic`: octets `42 52` on the wire.
pub const MAGIC: u16 = 0x5242;
/// The protocol version this module speaks.
pub const VERSION: u8 = 1;
/// The board's UDP port.
pub const BRIDGE_PORT: u16 = 0x5242;
/// Octets of the header.
pub const HEADER_LEN: usize = 22;
/// Most payload octets in one message (a frame fits a 1500-octet MTU).
pub const MAX_PAYLOAD: usize = 1024;
/// Longest DMA request of the core (docs/rtl.md "Core interfaces").
pub const MAX_DMA_LEN: usize = 4096;
/// Frame offset of the header: Ethernet (14) + IPv4 without options (20) +
/// UDP (8).
pub const FRAME_HEADER_OFFSET: usize = 42;
/// Frame offset of the payload: a multiple of 8, so payload beats are DMA
/// beats unchanged.
pub const FRAME_PAYLOAD_OFFSET: usize = FRAME_HEADER_OFFSET + HEADER_LEN;
const _: () = assert!(FRAME_PAYLOAD_OFFSET & 7 == 0);
/// Board clocks after which an incomplete DMA read is requested again.
pub const RD_RETRY_CLOCKS: u64 = 1 << 20;
/// BAR0 offsets must be below this (the core's `csr_addr` is 24 bits).
pub const MMIO_LIMIT: u64 = 1 << 24;
/// Firmware-port offsets (`FW_READ`/`FW_WRITE`) must be below this: the
/// port's register map, `context::port::SIZE`.
pub const FW_LIMIT: u64 = super::context::port::SIZE as u64;

/// `flags` bit 0: the last chunk of a DMA request.
pub const FLAG_LAST: u8 = 1 << 0;
/// `flags` bit 1: the interrupt level in an `IRQ` message.
pub const FLAG_IRQ: u8 = 1 << 1;
const FLAGS_DEFINED: u8 = FLAG_LAST | FLAG_IRQ;

const OFF_MAGIC: usize = 0;
const OFF_VERSION: usize = 2;
const OFF_OPCODE: usize = 3;
const OFF_SEQ: usize = 4;
const OFF_ADDR: usize = 8;
const OFF_LEN: usize = 16;
const OFF_TAG: usize = 18;
const OFF_FLAGS: usize = 19;
const OFF_STATUS: usize = 20;
const OFF_RESERVED: usize = 21;
const _: () = assert!(OFF_RESERVED + 1 == HEADER_LEN);

/// Message kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// Host → board: read the BAR0 register at `addr`.
    MmioRead = 0x01,
    /// Host → board: write the 4-octet payload to BAR0 at `addr`.
    MmioWrite = 0x02,
    /// Host → board: learn the host's address; answered with the next
    /// device sequence number in `addr`.
    Hello = 0x03,
    /// Host → board: octets answering a `DmaRdReq`.
    DmaRdCpl = 0x13,
    /// Board → host: the core reads `len` octets at `addr`.
    DmaRdReq = 0x10,
    /// Board → host: store the payload at `addr`.
    DmaWr = 0x11,
    /// Board → host: the interrupt level changed (`FLAG_IRQ`).
    Irq = 0x12,
    /// Board → host: a request was refused (`status`).
    Nak = 0x7F,
    /// Answer to `MmioRead`: the value in the payload.
    MmioReadRsp = 0x81,
    /// Answer to `MmioWrite`.
    MmioWriteAck = 0x82,
    /// Answer to `Hello`.
    HelloAck = 0x83,
    /// Host → board: read the firmware-port register at `addr`
    /// (`context::port`; the firmware runs on the host, docs/bridge.md
    /// "Firmware window").
    FwRead = 0x05,
    /// Host → board: write the 4-octet payload to the firmware port at `addr`.
    FwWrite = 0x06,
    /// Answer to `FwRead`: the value in the payload.
    FwReadRsp = 0x85,
    /// Answer to `FwWrite`.
    FwWriteAck = 0x86,
}

impl Opcode {
    /// The opcode for a raw value, `Err(BadOpcode)` for others.
    pub fn from_u8(v: u8) -> Result<Opcode> {
        Ok(match v {
            0x01 => Opcode::MmioRead,
            0x02 => Opcode::MmioWrite,
            0x03 => Opcode::Hello,
            0x13 => Opcode::DmaRdCpl,
            0x10 => Opcode::DmaRdReq,
            0x11 => Opcode::DmaWr,
            0x12 => Opcode::Irq,
            0x7F => Opcode::Nak,
            0x81 => Opcode::MmioReadRsp,
            0x82 => Opcode::MmioWriteAck,
            0x83 => Opcode::HelloAck,
            0x05 => Opcode::FwRead,
            0x06 => Opcode::FwWrite,
            0x85 => Opcode::FwReadRsp,
            0x86 => Opcode::FwWriteAck,
            _ => return Err(Error::BadOpcode),
        })
    }
}

/// Why the board refused a request (`status` of a NAK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NakReason {
    /// An opcode the board does not take.
    BadOpcode = 1,
    /// `len` is not what the opcode requires, or the datagram is short.
    BadLength = 2,
    /// MMIO offset not 4-aligned or at/above [`MMIO_LIMIT`] (firmware port:
    /// [`FW_LIMIT`]).
    BadAddress = 3,
    /// `reserved` not zero or undefined `flags` bits set.
    BadField = 4,
}

impl NakReason {
    /// The reason for a raw value.
    pub fn from_u8(v: u8) -> Result<NakReason> {
        Ok(match v {
            1 => NakReason::BadOpcode,
            2 => NakReason::BadLength,
            3 => NakReason::BadAddress,
            4 => NakReason::BadField,
            _ => return Err(Error::BadField),
        })
    }
}

/// A checked view of a bridge message (header + payload) in a buffer.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it.
    pub fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer and checks that the header and `len` payload octets
    /// fit.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// `Err(Truncated)` if the buffer is shorter than the header or than
    /// header + `len`.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN || b.len() < HEADER_LEN + self.payload_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// The buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }
    pub fn magic(&self) -> u16 {
        u16_at(self.buffer.as_ref(), OFF_MAGIC)
    }
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[OFF_VERSION]
    }
    pub fn opcode_raw(&self) -> u8 {
        self.buffer.as_ref()[OFF_OPCODE]
    }
    pub fn seq(&self) -> u32 {
        u32_at(self.buffer.as_ref(), OFF_SEQ)
    }
    pub fn addr(&self) -> u64 {
        u64_at(self.buffer.as_ref(), OFF_ADDR)
    }
    pub fn len(&self) -> u16 {
        u16_at(self.buffer.as_ref(), OFF_LEN)
    }
    /// Whether `len` is zero.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn tag(&self) -> u8 {
        self.buffer.as_ref()[OFF_TAG]
    }
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[OFF_FLAGS]
    }
    pub fn status(&self) -> u8 {
        self.buffer.as_ref()[OFF_STATUS]
    }
    pub fn reserved(&self) -> u8 {
        self.buffer.as_ref()[OFF_RESERVED]
    }
    /// Payload octets after the header: `len`, except in a `DMA_RD_REQ`,
    /// whose `len` is the read length and which has no payload.
    pub fn payload_len(&self) -> usize {
        if self.opcode_raw() == Opcode::DmaRdReq as u8 {
            0
        } else {
            self.len() as usize
        }
    }
    /// The payload octets (call after [`Packet::check_len`]).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + self.payload_len()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn b(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    pub fn set_magic(&mut self, v: u16) {
        put_u16(self.b(), OFF_MAGIC, v)
    }
    pub fn set_version(&mut self, v: u8) {
        self.b()[OFF_VERSION] = v
    }
    pub fn set_opcode_raw(&mut self, v: u8) {
        self.b()[OFF_OPCODE] = v
    }
    pub fn set_seq(&mut self, v: u32) {
        put_u32(self.b(), OFF_SEQ, v)
    }
    pub fn set_addr(&mut self, v: u64) {
        put_u64(self.b(), OFF_ADDR, v)
    }
    pub fn set_len(&mut self, v: u16) {
        put_u16(self.b(), OFF_LEN, v)
    }
    pub fn set_tag(&mut self, v: u8) {
        self.b()[OFF_TAG] = v
    }
    pub fn set_flags(&mut self, v: u8) {
        self.b()[OFF_FLAGS] = v
    }
    pub fn set_status(&mut self, v: u8) {
        self.b()[OFF_STATUS] = v
    }
    pub fn set_reserved(&mut self, v: u8) {
        self.b()[OFF_RESERVED] = v
    }
    /// The payload octets, writable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = self.payload_len();
        &mut self.b()[HEADER_LEN..HEADER_LEN + n]
    }
}

/// A parsed bridge message. The payload is borrowed from the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr<'a> {
    MmioRead {
        seq: u32,
        offset: u32,
    },
    MmioWrite {
        seq: u32,
        offset: u32,
        value: u32,
    },
    Hello {
        seq: u32,
    },
    DmaRdCpl {
        seq: u32,
        tag: u8,
        addr: u64,
        last: bool,
        data: &'a [u8],
    },
    DmaRdReq {
        seq: u32,
        tag: u8,
        addr: u64,
        len: u16,
    },
    DmaWr {
        seq: u32,
        addr: u64,
        last: bool,
        data: &'a [u8],
    },
    Irq {
        seq: u32,
        level: bool,
    },
    Nak {
        seq: u32,
        opcode: u8,
        addr: u64,
        reason: NakReason,
    },
    MmioReadRsp {
        seq: u32,
        value: u32,
    },
    MmioWriteAck {
        seq: u32,
    },
    /// `next_dev_seq`: the sequence number of the board's next `DmaRdReq`,
    /// `DmaWr` or `Irq`.
    HelloAck {
        seq: u32,
        next_dev_seq: u32,
    },
    FwRead {
        seq: u32,
        offset: u32,
    },
    FwWrite {
        seq: u32,
        offset: u32,
        value: u32,
    },
    FwReadRsp {
        seq: u32,
        value: u32,
    },
    FwWriteAck {
        seq: u32,
    },
}

/// The chunk length of a DMA request of `len` octets at request offset
/// `off` (docs/bridge.md: chunks of [`MAX_PAYLOAD`] from offset 0).
pub fn chunk_len(len: usize, off: usize) -> usize {
    (len - off).min(MAX_PAYLOAD)
}

fn data_len(d: &[u8]) -> Result<u16> {
    if d.is_empty() || d.len() > MAX_PAYLOAD {
        Err(Error::BadLength)
    } else {
        Ok(d.len() as u16)
    }
}

/// Why a buffer is not a message the board executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Refusal {
    /// Not this protocol (short header, wrong magic or version): dropped
    /// without an answer.
    NotOurs,
    /// This protocol, but refused: answered with a NAK with this reason.
    Nak(NakReason),
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Error {
        match r {
            Refusal::NotOurs => Error::BadVersion,
            Refusal::Nak(NakReason::BadOpcode) => Error::BadOpcode,
            Refusal::Nak(NakReason::BadLength) => Error::BadLength,
            Refusal::Nak(NakReason::BadAddress) | Refusal::Nak(NakReason::BadField) => {
                Error::BadField
            }
        }
    }
}

impl<'a> Repr<'a> {
    /// Parses and validates a message: magic, version, known opcode, the
    /// length each opcode requires, reserved octet 0, defined flags only,
    /// MMIO offsets 4-aligned and below [`MMIO_LIMIT`]. Octets after the
    /// payload are ignored.
    pub fn parse(buf: &'a [u8]) -> Result<Repr<'a>> {
        Ok(Repr::classify(buf)?)
    }

    /// [`Repr::parse`] with the board's answer for a refused message
    /// (docs/bridge.md "Errors: NAK"). The order of the checks is the
    /// board's: header length, magic, version, opcode, reserved/flags,
    /// length, MMIO address.
    pub fn classify(buf: &'a [u8]) -> core::result::Result<Repr<'a>, Refusal> {
        use NakReason::*;
        if buf.len() < HEADER_LEN {
            return Err(Refusal::NotOurs);
        }
        let p = Packet::new_unchecked(buf);
        if p.magic() != MAGIC || p.version() != VERSION {
            return Err(Refusal::NotOurs);
        }
        let nak = Refusal::Nak;
        let op = Opcode::from_u8(p.opcode_raw()).map_err(|_| nak(BadOpcode))?;
        if p.reserved() != 0 || p.flags() & !FLAGS_DEFINED != 0 {
            return Err(nak(BadField));
        }
        if p.check_len().is_err() {
            return Err(nak(BadLength));
        }
        let seq = p.seq();
        let len = p.len() as usize;
        let need = |n: usize| {
            if len == n {
                Ok(())
            } else {
                Err(nak(BadLength))
            }
        };
        let data_ok = || {
            if (1..=MAX_PAYLOAD).contains(&len) {
                Ok(())
            } else {
                Err(nak(BadLength))
            }
        };
        let mmio = || {
            let a = p.addr();
            if a & 3 != 0 || a >= MMIO_LIMIT {
                Err(nak(BadAddress))
            } else {
                Ok(a as u32)
            }
        };
        let fw = || {
            let a = p.addr();
            if a & 3 != 0 || a >= FW_LIMIT {
                Err(nak(BadAddress))
            } else {
                Ok(a as u32)
            }
        };
        let last = p.flags() & FLAG_LAST != 0;
        let data = &buf[HEADER_LEN..HEADER_LEN + p.payload_len()];
        Ok(match op {
            Opcode::MmioRead => {
                need(0)?;
                Repr::MmioRead {
                    seq,
                    offset: mmio()?,
                }
            }
            Opcode::MmioWrite => {
                need(4)?;
                Repr::MmioWrite {
                    seq,
                    offset: mmio()?,
                    value: u32_at(data, 0),
                }
            }
            Opcode::Hello => {
                need(0)?;
                Repr::Hello { seq }
            }
            Opcode::DmaRdCpl => {
                data_ok()?;
                Repr::DmaRdCpl {
                    seq,
                    tag: p.tag(),
                    addr: p.addr(),
                    last,
                    data,
                }
            }
            Opcode::DmaRdReq => {
                if !(1..=MAX_DMA_LEN).contains(&len) {
                    return Err(nak(BadLength));
                }
                Repr::DmaRdReq {
                    seq,
                    tag: p.tag(),
                    addr: p.addr(),
                    len: len as u16,
                }
            }
            Opcode::DmaWr => {
                data_ok()?;
                Repr::DmaWr {
                    seq,
                    addr: p.addr(),
                    last,
                    data,
                }
            }
            Opcode::Irq => {
                need(0)?;
                Repr::Irq {
                    seq,
                    level: p.flags() & FLAG_IRQ != 0,
                }
            }
            Opcode::Nak => {
                need(0)?;
                Repr::Nak {
                    seq,
                    opcode: p.tag(),
                    addr: p.addr(),
                    reason: NakReason::from_u8(p.status()).map_err(|_| nak(BadField))?,
                }
            }
            Opcode::MmioReadRsp => {
                need(4)?;
                Repr::MmioReadRsp {
                    seq,
                    value: u32_at(data, 0),
                }
            }
            Opcode::MmioWriteAck => {
                need(0)?;
                Repr::MmioWriteAck { seq }
            }
            Opcode::HelloAck => {
                need(0)?;
                Repr::HelloAck {
                    seq,
                    next_dev_seq: p.addr() as u32,
                }
            }
            Opcode::FwRead => {
                need(0)?;
                Repr::FwRead { seq, offset: fw()? }
            }
            Opcode::FwWrite => {
                need(4)?;
                Repr::FwWrite {
                    seq,
                    offset: fw()?,
                    value: u32_at(data, 0),
                }
            }
            Opcode::FwReadRsp => {
                need(4)?;
                Repr::FwReadRsp {
                    seq,
                    value: u32_at(data, 0),
                }
            }
            Opcode::FwWriteAck => {
                need(0)?;
                Repr::FwWriteAck { seq }
            }
        })
    }

    /// The message's sequence number.
    pub fn seq(&self) -> u32 {
        match *self {
            Repr::MmioRead { seq, .. }
            | Repr::MmioWrite { seq, .. }
            | Repr::Hello { seq }
            | Repr::DmaRdCpl { seq, .. }
            | Repr::DmaRdReq { seq, .. }
            | Repr::DmaWr { seq, .. }
            | Repr::Irq { seq, .. }
            | Repr::Nak { seq, .. }
            | Repr::MmioReadRsp { seq, .. }
            | Repr::MmioWriteAck { seq }
            | Repr::HelloAck { seq, .. }
            | Repr::FwRead { seq, .. }
            | Repr::FwWrite { seq, .. }
            | Repr::FwReadRsp { seq, .. }
            | Repr::FwWriteAck { seq } => seq,
        }
    }

    /// Octets [`Repr::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN
            + match self {
                Repr::MmioWrite { .. }
                | Repr::MmioReadRsp { .. }
                | Repr::FwWrite { .. }
                | Repr::FwReadRsp { .. } => 4,
                Repr::DmaRdCpl { data, .. } | Repr::DmaWr { data, .. } => data.len(),
                _ => 0,
            }
    }

    /// Writes the message into `buf` (at least [`Repr::buffer_len`]
    /// octets); returns the octets written. `Err(BadLength)` for a DMA
    /// payload of 0 or more than [`MAX_PAYLOAD`] octets or a read length
    /// of 0 or more than [`MAX_DMA_LEN`]; `Err(BadField)` for an MMIO
    /// offset the board would refuse.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let n = self.buffer_len();
        super::check_out(buf, n)?;
        let mmio_ok = |o: u32| {
            if o & 3 != 0 || o as u64 >= MMIO_LIMIT {
                Err(Error::BadField)
            } else {
                Ok(())
            }
        };
        let fw_ok = |o: u32| {
            if o & 3 != 0 || o as u64 >= FW_LIMIT {
                Err(Error::BadField)
            } else {
                Ok(())
            }
        };
        let (op, addr, len, tag, flags, status): (Opcode, u64, u16, u8, u8, u8) = match *self {
            Repr::MmioRead { offset, .. } => {
                mmio_ok(offset)?;
                (Opcode::MmioRead, offset as u64, 0, 0, 0, 0)
            }
            Repr::MmioWrite { offset, .. } => {
                mmio_ok(offset)?;
                (Opcode::MmioWrite, offset as u64, 4, 0, 0, 0)
            }
            Repr::Hello { .. } => (Opcode::Hello, 0, 0, 0, 0, 0),
            Repr::DmaRdCpl {
                tag,
                addr,
                last,
                data,
                ..
            } => (
                Opcode::DmaRdCpl,
                addr,
                data_len(data)?,
                tag,
                if last { FLAG_LAST } else { 0 },
                0,
            ),
            Repr::DmaRdReq { tag, addr, len, .. } => {
                if len == 0 || len as usize > MAX_DMA_LEN {
                    return Err(Error::BadLength);
                }
                (Opcode::DmaRdReq, addr, len, tag, 0, 0)
            }
            Repr::DmaWr {
                addr, last, data, ..
            } => (
                Opcode::DmaWr,
                addr,
                data_len(data)?,
                0,
                if last { FLAG_LAST } else { 0 },
                0,
            ),
            Repr::Irq { level, .. } => (Opcode::Irq, 0, 0, 0, if level { FLAG_IRQ } else { 0 }, 0),
            Repr::Nak {
                opcode,
                addr,
                reason,
                ..
            } => (Opcode::Nak, addr, 0, opcode, 0, reason as u8),
            Repr::MmioReadRsp { .. } => (Opcode::MmioReadRsp, 0, 4, 0, 0, 0),
            Repr::MmioWriteAck { .. } => (Opcode::MmioWriteAck, 0, 0, 0, 0, 0),
            Repr::HelloAck { next_dev_seq, .. } => {
                (Opcode::HelloAck, next_dev_seq as u64, 0, 0, 0, 0)
            }
            Repr::FwRead { offset, .. } => {
                fw_ok(offset)?;
                (Opcode::FwRead, offset as u64, 0, 0, 0, 0)
            }
            Repr::FwWrite { offset, .. } => {
                fw_ok(offset)?;
                (Opcode::FwWrite, offset as u64, 4, 0, 0, 0)
            }
            Repr::FwReadRsp { .. } => (Opcode::FwReadRsp, 0, 4, 0, 0, 0),
            Repr::FwWriteAck { .. } => (Opcode::FwWriteAck, 0, 0, 0, 0, 0),
        };
        let mut p = Packet::new_unchecked(&mut buf[..n]);
        p.set_magic(MAGIC);
        p.set_version(VERSION);
        p.set_opcode_raw(op as u8);
        p.set_seq(self.seq());
        p.set_addr(addr);
        p.set_len(len);
        p.set_tag(tag);
        p.set_flags(flags);
        p.set_status(status);
        p.set_reserved(0);
        match *self {
            Repr::MmioWrite { value, .. }
            | Repr::MmioReadRsp { value, .. }
            | Repr::FwWrite { value, .. }
            | Repr::FwReadRsp { value, .. } => put_u32(p.payload_mut(), 0, value),
            Repr::DmaRdCpl { data, .. } | Repr::DmaWr { data, .. } => {
                p.payload_mut().copy_from_slice(data)
            }
            _ => {}
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn emit_vec(r: &Repr) -> std::vec::Vec<u8> {
        let mut b = std::vec![0u8; r.buffer_len()];
        assert_eq!(r.emit(&mut b), Ok(b.len()));
        b
    }

    /// The layout of docs/bridge.md, written out octet by octet.
    #[test]
    fn mmio_write_octets() {
        let b = emit_vec(&Repr::MmioWrite {
            seq: 0x0403_0201,
            offset: 0x01_0004,
            value: 0xDDCC_BBAA,
        });
        assert_eq!(
            b,
            [
                0x42, 0x52, 1, 0x02, 1, 2, 3, 4, 0x04, 0x00, 0x01, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0,
                0xAA, 0xBB, 0xCC, 0xDD
            ]
        );
    }

    #[test]
    fn dma_rd_req_has_no_payload_and_carries_the_read_length() {
        let r = Repr::DmaRdReq {
            seq: 7,
            tag: 0x41,
            addr: 0x1234_5678_9ABC,
            len: 4096,
        };
        let b = emit_vec(&r);
        assert_eq!(b.len(), HEADER_LEN);
        assert_eq!(&b[16..19], &[0x00, 0x10, 0x41]);
        assert_eq!(Repr::parse(&b), Ok(r));
    }

    fn nak(b: &[u8]) -> core::result::Result<Repr<'_>, Refusal> {
        Repr::classify(b)
    }

    #[test]
    fn malformed_input_gets_its_defined_answer() {
        let good = emit_vec(&Repr::MmioWrite {
            seq: 1,
            offset: 8,
            value: 5,
        });
        // Short header, wrong magic, wrong version: not ours.
        assert_eq!(nak(&good[..HEADER_LEN - 1]), Err(Refusal::NotOurs));
        assert_eq!(nak(&[]), Err(Refusal::NotOurs));
        let mut b = good.clone();
        b[0] = 0x43;
        assert_eq!(nak(&b), Err(Refusal::NotOurs));
        let mut b = good.clone();
        b[2] = 2;
        assert_eq!(nak(&b), Err(Refusal::NotOurs));
        // Unknown opcodes.
        for op in [0x00u8, 0x04, 0x14, 0x80, 0x84, 0xFF] {
            let mut b = good.clone();
            b[3] = op;
            assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadOpcode)), "{op:#x}");
        }
        // Reserved octet, undefined flags.
        let mut b = good.clone();
        b[21] = 1;
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadField)));
        let mut b = good.clone();
        b[19] = 0x04;
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadField)));
        // Payload shorter than len; wrong len for the opcode.
        assert_eq!(nak(&good[..25]), Err(Refusal::Nak(NakReason::BadLength)));
        let mut b = good.clone();
        b[16] = 3;
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadLength)));
        let mut b = good.clone();
        b[3] = Opcode::MmioRead as u8; // MMIO_READ with 4 payload octets
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadLength)));
        // MMIO address misaligned or out of BAR0.
        for a in [2u64, 0x100_0000, u64::MAX - 3] {
            let mut b = good.clone();
            b[8..16].copy_from_slice(&a.to_le_bytes());
            assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadAddress)), "{a:#x}");
        }
        // DMA lengths.
        let mut b = std::vec![0u8; HEADER_LEN + 1100];
        let r = Repr::DmaWr {
            seq: 0,
            addr: 0,
            last: true,
            data: &[1; 1024],
        };
        r.emit(&mut b).unwrap();
        b[16..18].copy_from_slice(&1025u16.to_le_bytes());
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadLength)));
        b[16..18].copy_from_slice(&0u16.to_le_bytes());
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadLength)));
        b[3] = Opcode::DmaRdReq as u8;
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadLength)));
        b[16..18].copy_from_slice(&4097u16.to_le_bytes());
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadLength)));
        // A NAK with an undefined reason.
        let mut b = emit_vec(&Repr::Nak {
            seq: 1,
            opcode: 9,
            addr: 0,
            reason: NakReason::BadOpcode,
        });
        b[20] = 0;
        assert_eq!(nak(&b), Err(Refusal::Nak(NakReason::BadField)));
        // The mapping to the crate's error type.
        assert_eq!(Repr::parse(&good[..3]), Err(Error::BadVersion));
        // Trailing octets (Ethernet padding) are ignored.
        let mut b = good.clone();
        b.extend_from_slice(&[0xEE; 9]);
        assert_eq!(Repr::parse(&b), Repr::parse(&good));
    }

    #[test]
    fn emit_refuses_what_the_board_would_refuse() {
        let mut b = [0u8; 2048];
        let e = |r: Repr| r.emit(&mut b.clone());
        assert_eq!(
            e(Repr::MmioRead { seq: 0, offset: 3 }),
            Err(Error::BadField)
        );
        assert_eq!(
            e(Repr::DmaWr {
                seq: 0,
                addr: 0,
                last: false,
                data: &[]
            }),
            Err(Error::BadLength)
        );
        assert_eq!(
            e(Repr::DmaRdCpl {
                seq: 0,
                tag: 0,
                addr: 0,
                last: false,
                data: &[0; 1025]
            }),
            Err(Error::BadLength)
        );
        assert_eq!(
            e(Repr::DmaRdReq {
                seq: 0,
                tag: 0,
                addr: 0,
                len: 0
            }),
            Err(Error::BadLength)
        );
        assert_eq!(
            Repr::Hello { seq: 0 }.emit(&mut b[..HEADER_LEN - 1]),
            Err(Error::BufferTooSmall)
        );
    }

    /// The firmware window: octets, and the refusals of its own address
    /// range (docs/bridge.md "Firmware window").
    #[test]
    fn firmware_window() {
        let b = emit_vec(&Repr::FwWrite {
            seq: 0x0403_0201,
            offset: 0x1004,
            value: 0xDDCC_BBAA,
        });
        assert_eq!(
            b,
            [
                0x42, 0x52, 1, 0x06, 1, 2, 3, 4, 0x04, 0x10, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0,
                0xAA, 0xBB, 0xCC, 0xDD
            ]
        );
        let rd = emit_vec(&Repr::FwRead {
            seq: 9,
            offset: 0x30,
        });
        assert_eq!(rd[3], 0x05);
        assert_eq!(rd.len(), HEADER_LEN);
        // Misaligned, at the end of the port, far beyond it.
        for a in [2u64, FW_LIMIT, FW_LIMIT + 4, 0x100_0000] {
            for base in [&b, &rd] {
                let mut x = base.clone();
                x[8..16].copy_from_slice(&a.to_le_bytes());
                assert_eq!(nak(&x), Err(Refusal::Nak(NakReason::BadAddress)), "{a:#x}");
            }
        }
        // Lengths: a read carries nothing, a write exactly 4.
        let mut x = rd.clone();
        x[16] = 4;
        x.extend_from_slice(&[0; 4]);
        assert_eq!(nak(&x), Err(Refusal::Nak(NakReason::BadLength)));
        let mut x = b.clone();
        x[16] = 2;
        assert_eq!(nak(&x), Err(Refusal::Nak(NakReason::BadLength)));
        let mut buf = [0u8; 64];
        assert_eq!(
            Repr::FwRead {
                seq: 0,
                offset: FW_LIMIT as u32
            }
            .emit(&mut buf),
            Err(Error::BadField)
        );
        assert_eq!(
            Repr::FwWrite {
                seq: 0,
                offset: 1,
                value: 0
            }
            .emit(&mut buf),
            Err(Error::BadField)
        );
    }

    #[test]
    fn chunking() {
        assert_eq!(chunk_len(4096, 3072), 1024);
        assert_eq!(chunk_len(1500, 1024), 476);
        assert_eq!(chunk_len(1, 0), 1);
    }

    /// Builds one message of kind `k % 15` from random fields.
    #[allow(clippy::too_many_arguments)]
    fn make(k: u8, seq: u32, v: u32, addr: u64, tag: u8, b: bool, l: u16, data: &[u8]) -> Repr<'_> {
        let reasons = [
            NakReason::BadOpcode,
            NakReason::BadLength,
            NakReason::BadAddress,
            NakReason::BadField,
        ];
        let offset = (v % (1 << 22)) * 4;
        let n = 1 + l as usize % data.len();
        let fw_offset = (v % (FW_LIMIT as u32 / 4)) * 4;
        match k % 15 {
            0 => Repr::MmioRead { seq, offset },
            1 => Repr::MmioWrite {
                seq,
                offset,
                value: v.rotate_left(7),
            },
            2 => Repr::Hello { seq },
            3 => Repr::DmaRdCpl {
                seq,
                tag,
                addr,
                last: b,
                data: &data[..n],
            },
            4 => Repr::DmaRdReq {
                seq,
                tag,
                addr,
                len: 1 + l % 4096,
            },
            5 => Repr::DmaWr {
                seq,
                addr,
                last: b,
                data: &data[..n],
            },
            6 => Repr::Irq { seq, level: b },
            7 => Repr::Nak {
                seq,
                opcode: tag,
                addr,
                reason: reasons[l as usize % 4],
            },
            8 => Repr::MmioReadRsp { seq, value: v },
            9 => Repr::MmioWriteAck { seq },
            10 => Repr::HelloAck {
                seq,
                next_dev_seq: v,
            },
            11 => Repr::FwRead {
                seq,
                offset: fw_offset,
            },
            12 => Repr::FwWrite {
                seq,
                offset: fw_offset,
                value: v.rotate_left(3),
            },
            13 => Repr::FwReadRsp { seq, value: v },
            _ => Repr::FwWriteAck { seq },
        }
    }

    proptest! {
        #[test]
        fn round_trip(data in proptest::collection::vec(any::<u8>(), MAX_PAYLOAD),
                      k in any::<u8>(), seq in any::<u32>(), v in any::<u32>(),
                      addr in any::<u64>(), tag in any::<u8>(), b in any::<bool>(),
                      l in any::<u16>()) {
            let r = make(k, seq, v, addr, tag, b, l, &data);
            let e = emit_vec(&r);
            prop_assert_eq!(Repr::parse(&e), Ok(r));
            let p = Packet::new_checked(&e[..]).unwrap();
            prop_assert_eq!(p.seq(), r.seq());
            prop_assert_eq!(p.payload().len() + HEADER_LEN, e.len());
        }

        #[test]
        fn random_octets_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64),
                                     hdr in any::<bool>()) {
            let mut b = b;
            if hdr && b.len() >= 3 {
                b[0] = 0x42; b[1] = 0x52; b[2] = VERSION;
            }
            if let Ok(r) = Repr::parse(&b) {
                // Whatever parses emits back to the same header fields.
                let e = emit_vec(&r);
                prop_assert_eq!(Repr::parse(&e), Ok(r));
            }
        }
    }
}
