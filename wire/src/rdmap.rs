//! RDMAP (RFC 5040, RFC 7306): control field, opcodes, Read Request.
//!
//! RDMAP has no header of its own in front of DDP's: its control field is
//! DDP's first ULP-reserved octet (`RsvdULP[0:7]`, octet 1 of every DDP
//! header), and for Send with Invalidate the Invalidate STag is the untagged
//! header's `RsvdULP[8:39]` (octets 2..6). RFC 5040 §4.1 Figure 3:
//!
//! ```text
//!  octet 0 (DDP)       octet 1 (RDMAP control)
//! +-+-+-+-+-+-+-+-+   +-+-+-+-+-+-+-+-+
//! |T|L| Resrv | DV|   | RV|Rsv| Opcode|
//! +-+-+-+-+-+-+-+-+   +-+-+-+-+-+-+-+-+
//! ```
//!
//! RV is 2 bits (01b for RFC 5040), Rsv 2 bits (zero on send, ignored on
//! receive), Opcode 4 bits (RFC 5040 §4.1 Figure 4, RFC 7306 §4.1 Figure 2).
//! Messages with an RDMAP header of their own put it right after the DDP
//! header: Read Request (§4.4), Terminate (§4.8, in [`crate::terminate`]),
//! and RFC 7306's Immediate Data (§6.2) and Atomic Request/Response (§5.2).
//!
//! [`RdmapRepr`] parses and emits a whole DDP segment (DDP header, RDMAP
//! header and payload) and checks that opcode, buffer model and queue agree.

use crate::ddp::{
    read_u32, read_u64, write_u32, write_u64, DdpRepr, DdpSegment, QueueNumber, TAGGED_HEADER_LEN,
    UNTAGGED_HEADER_LEN,
};
use crate::terminate::{TerminateHeader, TerminateRepr};
use crate::{Error, Result};

/// The RDMAP version this implementation speaks: RV = 01b (RFC 5040 §4.1;
/// 00b is the pre-IETF RDMA Consortium protocol, which rnic does not speak).
pub const RDMAP_VERSION: u8 = 1;

/// Bits of the RDMAP control field (DDP `RsvdULP[0:7]`, RFC 5040 §4.1).
pub mod control {
    /// RV: 2-bit RDMAP version (header bits 24-25).
    pub const VERSION_MASK: u8 = 0xc0;
    /// Shift of RV.
    pub const VERSION_SHIFT: u32 = 6;
    /// Rsv: 2 bits (header bits 26-27), zero on send, ignored on receive.
    pub const RSVD_MASK: u8 = 0x30;
    /// Opcode: 4 bits (header bits 28-31).
    pub const OPCODE_MASK: u8 = 0x0f;
}

/// The RDMA Read Request header (RFC 5040 §4.4 Figure 6): 224 bits.
pub const READ_REQUEST_HEADER_LEN: usize = 28;
/// The Immediate Data header (RFC 7306 §6.2 Figure 7): 64 bits.
pub const IMMEDIATE_DATA_LEN: usize = 8;
/// The Atomic Operation Request header (RFC 7306 §5.2.1 Figure 4).
pub const ATOMIC_REQUEST_HEADER_LEN: usize = 52;
/// The Atomic Operation Response header (RFC 7306 §5.2.2 Figure 6: 32 + 64
/// bits; the "32 bytes" of RFC 7306 §4 contradicts its own figure).
pub const ATOMIC_RESPONSE_HEADER_LEN: usize = 12;
/// Opcode 1111b, reserved for experiments (RFC 6580 §3.4); rejected.
pub const OPCODE_EXPERIMENTAL: u8 = 0xf;

/// The RDMAP version (RV) of a control octet.
pub const fn control_version(control: u8) -> u8 {
    (control & control::VERSION_MASK) >> control::VERSION_SHIFT
}

/// RDMA message opcodes (RFC 5040 §4.1 Figure 4, RFC 7306 §4.1 Figure 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Opcode {
    /// 0000b, tagged.
    RdmaWrite = 0x0,
    /// 0001b, untagged QN 1.
    ReadRequest = 0x1,
    /// 0010b, tagged.
    ReadResponse = 0x2,
    /// 0011b, untagged QN 0.
    Send = 0x3,
    /// 0100b, untagged QN 0, Invalidate STag valid.
    SendInvalidate = 0x4,
    /// 0101b, untagged QN 0.
    SendSe = 0x5,
    /// 0110b, untagged QN 0, Invalidate STag valid.
    SendSeInvalidate = 0x6,
    /// 0111b, untagged QN 2.
    Terminate = 0x7,
    /// 1000b, untagged QN 0 (RFC 7306).
    ImmediateData = 0x8,
    /// 1001b, untagged QN 0 (RFC 7306).
    ImmediateDataSe = 0x9,
    /// 1010b, untagged QN 1 (RFC 7306).
    AtomicRequest = 0xa,
    /// 1011b, untagged QN 3 (RFC 7306).
    AtomicResponse = 0xb,
}

impl Opcode {
    /// Every defined opcode, in wire order.
    pub const ALL: [Opcode; 12] = [
        Opcode::RdmaWrite,
        Opcode::ReadRequest,
        Opcode::ReadResponse,
        Opcode::Send,
        Opcode::SendInvalidate,
        Opcode::SendSe,
        Opcode::SendSeInvalidate,
        Opcode::Terminate,
        Opcode::ImmediateData,
        Opcode::ImmediateDataSe,
        Opcode::AtomicRequest,
        Opcode::AtomicResponse,
    ];

    /// The 4-bit wire value.
    pub const fn value(self) -> u8 {
        self as u8
    }

    /// The opcode with 4-bit value `v`; [`Error::BadOpcode`] for 1100b to
    /// 1111b (unassigned, or experimental) and anything wider than 4 bits.
    pub const fn from_value(v: u8) -> Result<Self> {
        Ok(match v {
            0x0 => Opcode::RdmaWrite,
            0x1 => Opcode::ReadRequest,
            0x2 => Opcode::ReadResponse,
            0x3 => Opcode::Send,
            0x4 => Opcode::SendInvalidate,
            0x5 => Opcode::SendSe,
            0x6 => Opcode::SendSeInvalidate,
            0x7 => Opcode::Terminate,
            0x8 => Opcode::ImmediateData,
            0x9 => Opcode::ImmediateDataSe,
            0xa => Opcode::AtomicRequest,
            0xb => Opcode::AtomicResponse,
            _ => return Err(Error::BadOpcode),
        })
    }

    /// Decodes an RDMAP control octet: [`Error::BadVersion`] unless RV is
    /// [`RDMAP_VERSION`], then [`Error::BadOpcode`] for an unknown opcode.
    /// The Rsv bits are ignored (RFC 5040 §4.1).
    pub const fn from_control(control: u8) -> Result<Self> {
        if control_version(control) != RDMAP_VERSION {
            return Err(Error::BadVersion);
        }
        Opcode::from_value(control & control::OPCODE_MASK)
    }

    /// The RDMAP control octet for this opcode: RV = 1, Rsv = 0.
    pub const fn control(self) -> u8 {
        (RDMAP_VERSION << control::VERSION_SHIFT) | self as u8
    }

    /// Whether DDP carries this message in the tagged buffer model (RDMA
    /// Write and Read Response) or the untagged one (all others).
    pub const fn is_tagged(self) -> bool {
        matches!(self, Opcode::RdmaWrite | Opcode::ReadResponse)
    }

    /// The untagged queue this message targets; `None` for tagged ones.
    pub const fn queue(self) -> Option<QueueNumber> {
        match self {
            Opcode::RdmaWrite | Opcode::ReadResponse => None,
            Opcode::Send
            | Opcode::SendInvalidate
            | Opcode::SendSe
            | Opcode::SendSeInvalidate
            | Opcode::ImmediateData
            | Opcode::ImmediateDataSe => Some(QueueNumber::Send),
            Opcode::ReadRequest | Opcode::AtomicRequest => Some(QueueNumber::ReadRequest),
            Opcode::Terminate => Some(QueueNumber::Terminate),
            Opcode::AtomicResponse => Some(QueueNumber::AtomicResponse),
        }
    }

    /// Whether `RsvdULP[8:39]` carries a valid Invalidate STag (RFC 5040 §4.1:
    /// Send with Invalidate and Send with SE and Invalidate only).
    pub const fn has_invalidate_stag(self) -> bool {
        matches!(self, Opcode::SendInvalidate | Opcode::SendSeInvalidate)
    }

    /// Whether delivery may raise a Solicited Event.
    pub const fn solicited_event(self) -> bool {
        matches!(
            self,
            Opcode::SendSe | Opcode::SendSeInvalidate | Opcode::ImmediateDataSe
        )
    }

    /// Whether the message may carry ULP payload (RFC 5040 §4.2 Figure 5,
    /// RFC 7306 §4.2 Figure 3).
    pub const fn carries_ulp_payload(self) -> bool {
        matches!(
            self,
            Opcode::RdmaWrite
                | Opcode::ReadResponse
                | Opcode::Send
                | Opcode::SendInvalidate
                | Opcode::SendSe
                | Opcode::SendSeInvalidate
        )
    }

    /// Checks that a DDP header is the right one for this opcode: the wrong
    /// buffer model is [`Error::BadOpcode`] (an "unexpected opcode" for the
    /// segment), a queue number other than the opcode's is
    /// [`Error::BadField`].
    pub fn check_ddp(self, ddp: &DdpRepr) -> Result<()> {
        match (*ddp, self.queue()) {
            (DdpRepr::Tagged { .. }, None) => Ok(()),
            (DdpRepr::Untagged { qn, .. }, Some(q)) if qn == q.value() => Ok(()),
            (DdpRepr::Untagged { .. }, Some(_)) => Err(Error::BadField),
            _ => Err(Error::BadOpcode),
        }
    }
}

impl TryFrom<u8> for Opcode {
    type Error = Error;
    fn try_from(v: u8) -> Result<Self> {
        Opcode::from_value(v)
    }
}

/// Constructors of a view over a fixed-length header.
macro_rules! fixed_view {
    ($ty:ident, $len:expr) => {
        impl<T: AsRef<[u8]>> $ty<T> {
            /// Wraps `buffer` without checking its length; getters may panic
            /// on a short buffer. Use `new_checked` on untrusted input.
            pub const fn new_unchecked(buffer: T) -> Self {
                $ty { buffer }
            }

            /// Wraps `buffer` after [`check_len`](Self::check_len).
            pub fn new_checked(buffer: T) -> Result<Self> {
                let v = Self::new_unchecked(buffer);
                v.check_len()?;
                Ok(v)
            }

            /// [`Error::Truncated`] if the buffer is shorter than the header.
            pub fn check_len(&self) -> Result<()> {
                if self.buffer.as_ref().len() < $len {
                    Err(Error::Truncated)
                } else {
                    Ok(())
                }
            }

            /// Consumes the view, returning the buffer.
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The header length.
            pub const fn header_len(&self) -> usize {
                $len
            }
        }
    };
}

mod rr_field {
    pub const SINK_STAG: usize = 0;
    pub const SINK_TO: usize = 4;
    pub const SIZE: usize = 12;
    pub const SRC_STAG: usize = 16;
    pub const SRC_TO: usize = 20;
}

/// A view of the RDMA Read Request header (RFC 5040 §4.4 Figure 6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRequestHeader<T: AsRef<[u8]>> {
    buffer: T,
}

fixed_view!(ReadRequestHeader, READ_REQUEST_HEADER_LEN);

impl<T: AsRef<[u8]>> ReadRequestHeader<T> {
    /// Data Sink STag (SinkSTag).
    pub fn sink_stag(&self) -> u32 {
        read_u32(self.buffer.as_ref(), rr_field::SINK_STAG)
    }
    /// Data Sink Tagged Offset (SinkTO).
    pub fn sink_to(&self) -> u64 {
        read_u64(self.buffer.as_ref(), rr_field::SINK_TO)
    }
    /// RDMA Read Message Size (RDMARDSZ), in octets.
    pub fn size(&self) -> u32 {
        read_u32(self.buffer.as_ref(), rr_field::SIZE)
    }
    /// Data Source STag (SrcSTag).
    pub fn src_stag(&self) -> u32 {
        read_u32(self.buffer.as_ref(), rr_field::SRC_STAG)
    }
    /// Data Source Tagged Offset (SrcTO).
    pub fn src_to(&self) -> u64 {
        read_u64(self.buffer.as_ref(), rr_field::SRC_TO)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ReadRequestHeader<T> {
    /// Sets SinkSTag.
    pub fn set_sink_stag(&mut self, v: u32) {
        write_u32(self.buffer.as_mut(), rr_field::SINK_STAG, v);
    }
    /// Sets SinkTO.
    pub fn set_sink_to(&mut self, v: u64) {
        write_u64(self.buffer.as_mut(), rr_field::SINK_TO, v);
    }
    /// Sets RDMARDSZ.
    pub fn set_size(&mut self, v: u32) {
        write_u32(self.buffer.as_mut(), rr_field::SIZE, v);
    }
    /// Sets SrcSTag.
    pub fn set_src_stag(&mut self, v: u32) {
        write_u32(self.buffer.as_mut(), rr_field::SRC_STAG, v);
    }
    /// Sets SrcTO.
    pub fn set_src_to(&mut self, v: u64) {
        write_u64(self.buffer.as_mut(), rr_field::SRC_TO, v);
    }
}

/// A parsed RDMA Read Request header. Also the "Terminated RDMA Header" of
/// a Terminate (RFC 5040 §4.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ReadRequestRepr {
    /// Data Sink STag: where the Read Response is placed.
    pub sink_stag: u32,
    /// Data Sink Tagged Offset.
    pub sink_to: u64,
    /// RDMA Read Message Size (0 to 2^32-1 octets).
    pub size: u32,
    /// Data Source STag: what is read.
    pub src_stag: u32,
    /// Data Source Tagged Offset.
    pub src_to: u64,
}

impl ReadRequestRepr {
    /// Parses a checked header (every value is legal).
    pub fn parse<T: AsRef<[u8]>>(h: &ReadRequestHeader<T>) -> Result<Self> {
        Ok(ReadRequestRepr {
            sink_stag: h.sink_stag(),
            sink_to: h.sink_to(),
            size: h.size(),
            src_stag: h.src_stag(),
            src_to: h.src_to(),
        })
    }

    /// Emitted length, 28.
    pub const fn buffer_len(&self) -> usize {
        READ_REQUEST_HEADER_LEN
    }

    /// Writes the header into `buf[..28]`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let buf = buf
            .get_mut(..READ_REQUEST_HEADER_LEN)
            .ok_or(Error::BufferTooSmall)?;
        let mut h = ReadRequestHeader::new_unchecked(buf);
        h.set_sink_stag(self.sink_stag);
        h.set_sink_to(self.sink_to);
        h.set_size(self.size);
        h.set_src_stag(self.src_stag);
        h.set_src_to(self.src_to);
        Ok(())
    }
}

/// Atomic Operation Codes (RFC 7306 §5.2.1 Figure 5, §10.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AtomicOpcode {
    /// 0000b.
    FetchAdd = 0x0,
    /// 0010b (0001b is reserved).
    CmpSwap = 0x2,
}

impl AtomicOpcode {
    /// The opcode with 4-bit value `v`; [`Error::BadOpcode`] otherwise.
    pub const fn from_value(v: u8) -> Result<Self> {
        match v {
            0x0 => Ok(AtomicOpcode::FetchAdd),
            0x2 => Ok(AtomicOpcode::CmpSwap),
            _ => Err(Error::BadOpcode),
        }
    }
}

mod atomic_field {
    /// Reserved (28 bits) then AOpCode (low 4 bits of octet 3).
    pub const AOPCODE: usize = 3;
    pub const REQUEST_ID: usize = 4;
    pub const STAG: usize = 8;
    pub const TO: usize = 12;
    pub const ADD_SWAP_DATA: usize = 20;
    pub const ADD_SWAP_MASK: usize = 28;
    pub const COMPARE_DATA: usize = 36;
    pub const COMPARE_MASK: usize = 44;
    pub const ORIG_REQUEST_ID: usize = 0;
    pub const ORIG_VALUE: usize = 4;
}

/// A view of the Atomic Operation Request header (RFC 7306 §5.2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtomicRequestHeader<T: AsRef<[u8]>> {
    buffer: T,
}

fixed_view!(AtomicRequestHeader, ATOMIC_REQUEST_HEADER_LEN);

impl<T: AsRef<[u8]>> AtomicRequestHeader<T> {
    /// The raw 4-bit AOpCode.
    pub fn aopcode(&self) -> u8 {
        self.buffer.as_ref()[atomic_field::AOPCODE] & 0x0f
    }
    /// The 28 reserved bits (ignored on receive).
    pub fn reserved(&self) -> u32 {
        read_u32(self.buffer.as_ref(), 0) >> 4
    }
    /// Request Identifier.
    pub fn request_id(&self) -> u32 {
        read_u32(self.buffer.as_ref(), atomic_field::REQUEST_ID)
    }
    /// Remote STag.
    pub fn stag(&self) -> u32 {
        read_u32(self.buffer.as_ref(), atomic_field::STAG)
    }
    /// Remote Tagged Offset.
    pub fn tagged_offset(&self) -> u64 {
        read_u64(self.buffer.as_ref(), atomic_field::TO)
    }
    /// Add or Swap Data.
    pub fn add_swap_data(&self) -> u64 {
        read_u64(self.buffer.as_ref(), atomic_field::ADD_SWAP_DATA)
    }
    /// Add or Swap Mask.
    pub fn add_swap_mask(&self) -> u64 {
        read_u64(self.buffer.as_ref(), atomic_field::ADD_SWAP_MASK)
    }
    /// Compare Data.
    pub fn compare_data(&self) -> u64 {
        read_u64(self.buffer.as_ref(), atomic_field::COMPARE_DATA)
    }
    /// Compare Mask.
    pub fn compare_mask(&self) -> u64 {
        read_u64(self.buffer.as_ref(), atomic_field::COMPARE_MASK)
    }
}

/// What an Atomic Request asks for (RFC 7306 §5.1, Figure 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOperation {
    /// FetchAdd: masked add. Compare Data/Mask go out as 0 / all ones and
    /// are ignored on receive.
    FetchAdd {
        /// Add Data.
        add_data: u64,
        /// Add Mask (field boundaries; 0 is a plain 64-bit add).
        add_mask: u64,
    },
    /// CmpSwap: masked compare and swap.
    CmpSwap {
        /// Swap Data.
        swap_data: u64,
        /// Swap Mask.
        swap_mask: u64,
        /// Compare Data.
        compare_data: u64,
        /// Compare Mask.
        compare_mask: u64,
    },
}

/// A parsed Atomic Operation Request header (RFC 7306 §5.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AtomicRequestRepr {
    /// Request Identifier, echoed in the response.
    pub request_id: u32,
    /// Remote STag.
    pub stag: u32,
    /// Remote Tagged Offset (must be 8-aligned; checked by the responder,
    /// not here).
    pub to: u64,
    /// The operation and its operands.
    pub op: AtomicOperation,
}

impl AtomicRequestRepr {
    /// Parses a checked header; [`Error::BadOpcode`] for a reserved AOpCode.
    pub fn parse<T: AsRef<[u8]>>(h: &AtomicRequestHeader<T>) -> Result<Self> {
        let op = match AtomicOpcode::from_value(h.aopcode())? {
            AtomicOpcode::FetchAdd => AtomicOperation::FetchAdd {
                add_data: h.add_swap_data(),
                add_mask: h.add_swap_mask(),
            },
            AtomicOpcode::CmpSwap => AtomicOperation::CmpSwap {
                swap_data: h.add_swap_data(),
                swap_mask: h.add_swap_mask(),
                compare_data: h.compare_data(),
                compare_mask: h.compare_mask(),
            },
        };
        Ok(AtomicRequestRepr {
            request_id: h.request_id(),
            stag: h.stag(),
            to: h.tagged_offset(),
            op,
        })
    }

    /// Emitted length, 52.
    pub const fn buffer_len(&self) -> usize {
        ATOMIC_REQUEST_HEADER_LEN
    }

    /// Writes the header into `buf[..52]`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let buf = buf
            .get_mut(..ATOMIC_REQUEST_HEADER_LEN)
            .ok_or(Error::BufferTooSmall)?;
        let (code, data, mask, cdata, cmask) = match self.op {
            AtomicOperation::FetchAdd { add_data, add_mask } => {
                (AtomicOpcode::FetchAdd, add_data, add_mask, 0, u64::MAX)
            }
            AtomicOperation::CmpSwap {
                swap_data,
                swap_mask,
                compare_data,
                compare_mask,
            } => (
                AtomicOpcode::CmpSwap,
                swap_data,
                swap_mask,
                compare_data,
                compare_mask,
            ),
        };
        write_u32(buf, 0, code as u32);
        write_u32(buf, atomic_field::REQUEST_ID, self.request_id);
        write_u32(buf, atomic_field::STAG, self.stag);
        write_u64(buf, atomic_field::TO, self.to);
        write_u64(buf, atomic_field::ADD_SWAP_DATA, data);
        write_u64(buf, atomic_field::ADD_SWAP_MASK, mask);
        write_u64(buf, atomic_field::COMPARE_DATA, cdata);
        write_u64(buf, atomic_field::COMPARE_MASK, cmask);
        Ok(())
    }
}

/// A view of the Atomic Operation Response header (RFC 7306 §5.2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtomicResponseHeader<T: AsRef<[u8]>> {
    buffer: T,
}

fixed_view!(AtomicResponseHeader, ATOMIC_RESPONSE_HEADER_LEN);

impl<T: AsRef<[u8]>> AtomicResponseHeader<T> {
    /// Original Request Identifier.
    pub fn request_id(&self) -> u32 {
        read_u32(self.buffer.as_ref(), atomic_field::ORIG_REQUEST_ID)
    }
    /// Original Remote Data Value.
    pub fn original_value(&self) -> u64 {
        read_u64(self.buffer.as_ref(), atomic_field::ORIG_VALUE)
    }
}

/// A parsed Atomic Operation Response header (RFC 7306 §5.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AtomicResponseRepr {
    /// The Request Identifier of the request answered.
    pub request_id: u32,
    /// The value at the target before the operation.
    pub original_value: u64,
}

impl AtomicResponseRepr {
    /// Parses a checked header.
    pub fn parse<T: AsRef<[u8]>>(h: &AtomicResponseHeader<T>) -> Result<Self> {
        Ok(AtomicResponseRepr {
            request_id: h.request_id(),
            original_value: h.original_value(),
        })
    }

    /// Emitted length, 12.
    pub const fn buffer_len(&self) -> usize {
        ATOMIC_RESPONSE_HEADER_LEN
    }

    /// Writes the header into `buf[..12]`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let buf = buf
            .get_mut(..ATOMIC_RESPONSE_HEADER_LEN)
            .ok_or(Error::BufferTooSmall)?;
        write_u32(buf, atomic_field::ORIG_REQUEST_ID, self.request_id);
        write_u64(buf, atomic_field::ORIG_VALUE, self.original_value);
        Ok(())
    }
}

/// One DDP segment of an RDMA message, fully parsed: DDP header, RDMAP
/// control (and Invalidate STag), the RDMAP header if the opcode has one,
/// and the payload. Each variant fixes the buffer model and queue number,
/// so a repr cannot disagree with its opcode.
///
/// Messages with an RDMAP header (Read Request, Terminate, Immediate Data,
/// Atomics) carry no ULP payload and must arrive whole in one segment
/// (L = 1, MO = 0); rnic neither sends nor reassembles them split. A
/// segment of one of these that carries more octets than its header is
/// [`Error::BadLength`], except that a Terminate may be followed by zeros
/// (RFC 5040 §7.1 says absent echoed headers are "set to zero").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RdmapRepr<'a> {
    /// RDMA Write (tagged).
    RdmaWrite {
        /// DDP L flag.
        last: bool,
        /// Data Sink STag.
        stag: u32,
        /// Data Sink Tagged Offset of this segment.
        to: u64,
        /// Data.
        payload: &'a [u8],
    },
    /// RDMA Read Response (tagged).
    ReadResponse {
        /// DDP L flag.
        last: bool,
        /// Data Sink STag from the request.
        stag: u32,
        /// Data Sink Tagged Offset of this segment.
        to: u64,
        /// Data.
        payload: &'a [u8],
    },
    /// Send, Send with SE, Send with Invalidate, Send with SE and
    /// Invalidate (untagged, QN 0).
    Send {
        /// With Solicited Event.
        solicited: bool,
        /// The STag to invalidate, for the "with Invalidate" opcodes.
        invalidate_stag: Option<u32>,
        /// DDP L flag.
        last: bool,
        /// Message sequence number on QN 0.
        msn: u32,
        /// Message offset of this segment.
        mo: u32,
        /// Data.
        payload: &'a [u8],
    },
    /// RDMA Read Request (untagged, QN 1).
    ReadRequest {
        /// Message sequence number on QN 1.
        msn: u32,
        /// The request header.
        request: ReadRequestRepr,
    },
    /// Terminate (untagged, QN 2).
    Terminate {
        /// Message sequence number on QN 2.
        msn: u32,
        /// The Terminate header.
        terminate: TerminateRepr,
    },
    /// Immediate Data or Immediate Data with SE (RFC 7306, untagged, QN 0).
    ImmediateData {
        /// With Solicited Event.
        solicited: bool,
        /// Message sequence number on QN 0.
        msn: u32,
        /// The 8 octets of immediate data.
        data: [u8; IMMEDIATE_DATA_LEN],
    },
    /// Atomic Request (RFC 7306, untagged, QN 1).
    AtomicRequest {
        /// Message sequence number on QN 1.
        msn: u32,
        /// The request header.
        request: AtomicRequestRepr,
    },
    /// Atomic Response (RFC 7306, untagged, QN 3).
    AtomicResponse {
        /// Message sequence number on QN 3.
        msn: u32,
        /// The response header.
        response: AtomicResponseRepr,
    },
}

/// `payload` if it is exactly `len` octets: shorter is
/// [`Error::Truncated`], longer [`Error::BadLength`].
fn exact(payload: &[u8], len: usize) -> Result<&[u8]> {
    match payload.len() {
        n if n < len => Err(Error::Truncated),
        n if n > len => Err(Error::BadLength),
        _ => Ok(payload),
    }
}

impl<'a> RdmapRepr<'a> {
    /// Parses a checked DDP segment. Checks, in this order: DDP version
    /// ([`Error::BadVersion`]), RDMAP version ([`Error::BadVersion`]),
    /// opcode ([`Error::BadOpcode`]), buffer model against opcode
    /// ([`Error::BadOpcode`]), queue number against opcode
    /// ([`Error::BadField`]), single-segment rule for messages with an RDMAP
    /// header ([`Error::BadField`]), then the RDMAP header itself.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(segment: &DdpSegment<&'a T>) -> Result<Self> {
        let ddp = DdpRepr::parse(segment)?;
        let opcode = Opcode::from_control(ddp.rsvd_ulp())?;
        opcode.check_ddp(&ddp)?;
        let payload = segment.payload();
        match ddp {
            DdpRepr::Tagged { last, stag, to, .. } => match opcode {
                Opcode::RdmaWrite => Ok(RdmapRepr::RdmaWrite {
                    last,
                    stag,
                    to,
                    payload,
                }),
                Opcode::ReadResponse => Ok(RdmapRepr::ReadResponse {
                    last,
                    stag,
                    to,
                    payload,
                }),
                _ => Err(Error::BadOpcode),
            },
            DdpRepr::Untagged {
                last,
                rsvd_ulp_ext,
                msn,
                mo,
                ..
            } => {
                if let Opcode::Send
                | Opcode::SendInvalidate
                | Opcode::SendSe
                | Opcode::SendSeInvalidate = opcode
                {
                    return Ok(RdmapRepr::Send {
                        solicited: opcode.solicited_event(),
                        invalidate_stag: opcode.has_invalidate_stag().then_some(rsvd_ulp_ext),
                        last,
                        msn,
                        mo,
                        payload,
                    });
                }
                if !last || mo != 0 {
                    return Err(Error::BadField);
                }
                match opcode {
                    Opcode::ReadRequest => {
                        let h = ReadRequestHeader::new_checked(exact(
                            payload,
                            READ_REQUEST_HEADER_LEN,
                        )?)?;
                        Ok(RdmapRepr::ReadRequest {
                            msn,
                            request: ReadRequestRepr::parse(&h)?,
                        })
                    }
                    Opcode::Terminate => {
                        let h = TerminateHeader::new_checked(payload)?;
                        let terminate = TerminateRepr::parse(&h)?;
                        let rest = payload.get(h.header_len()..).unwrap_or(&[]);
                        if rest.iter().any(|&b| b != 0) {
                            return Err(Error::BadLength);
                        }
                        Ok(RdmapRepr::Terminate { msn, terminate })
                    }
                    Opcode::ImmediateData | Opcode::ImmediateDataSe => {
                        let d = exact(payload, IMMEDIATE_DATA_LEN)?;
                        let mut data = [0u8; IMMEDIATE_DATA_LEN];
                        data.copy_from_slice(d);
                        Ok(RdmapRepr::ImmediateData {
                            solicited: opcode.solicited_event(),
                            msn,
                            data,
                        })
                    }
                    Opcode::AtomicRequest => {
                        let h = AtomicRequestHeader::new_checked(exact(
                            payload,
                            ATOMIC_REQUEST_HEADER_LEN,
                        )?)?;
                        Ok(RdmapRepr::AtomicRequest {
                            msn,
                            request: AtomicRequestRepr::parse(&h)?,
                        })
                    }
                    Opcode::AtomicResponse => {
                        let h = AtomicResponseHeader::new_checked(exact(
                            payload,
                            ATOMIC_RESPONSE_HEADER_LEN,
                        )?)?;
                        Ok(RdmapRepr::AtomicResponse {
                            msn,
                            response: AtomicResponseRepr::parse(&h)?,
                        })
                    }
                    _ => Err(Error::BadOpcode),
                }
            }
        }
    }

    /// Checks and parses the DDP segment `bytes` (an MPA ULPDU).
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self> {
        RdmapRepr::parse(&DdpSegment::new_checked(bytes)?)
    }

    /// The RDMAP opcode.
    pub const fn opcode(&self) -> Opcode {
        match *self {
            RdmapRepr::RdmaWrite { .. } => Opcode::RdmaWrite,
            RdmapRepr::ReadResponse { .. } => Opcode::ReadResponse,
            RdmapRepr::Send {
                solicited,
                invalidate_stag,
                ..
            } => match (solicited, invalidate_stag.is_some()) {
                (false, false) => Opcode::Send,
                (false, true) => Opcode::SendInvalidate,
                (true, false) => Opcode::SendSe,
                (true, true) => Opcode::SendSeInvalidate,
            },
            RdmapRepr::ReadRequest { .. } => Opcode::ReadRequest,
            RdmapRepr::Terminate { .. } => Opcode::Terminate,
            RdmapRepr::ImmediateData { solicited, .. } => {
                if solicited {
                    Opcode::ImmediateDataSe
                } else {
                    Opcode::ImmediateData
                }
            }
            RdmapRepr::AtomicRequest { .. } => Opcode::AtomicRequest,
            RdmapRepr::AtomicResponse { .. } => Opcode::AtomicResponse,
        }
    }

    /// The DDP header this segment is sent with.
    pub fn ddp_repr(&self) -> DdpRepr {
        let opcode = self.opcode();
        let rsvd_ulp = opcode.control();
        let untagged = |last: bool, rsvd_ulp_ext: u32, msn: u32, mo: u32| DdpRepr::Untagged {
            last,
            rsvd_ulp,
            rsvd_ulp_ext,
            qn: opcode.queue().map_or(0, QueueNumber::value),
            msn,
            mo,
        };
        match *self {
            RdmapRepr::RdmaWrite { last, stag, to, .. }
            | RdmapRepr::ReadResponse { last, stag, to, .. } => DdpRepr::Tagged {
                last,
                rsvd_ulp,
                stag,
                to,
            },
            RdmapRepr::Send {
                invalidate_stag,
                last,
                msn,
                mo,
                ..
            } => untagged(last, invalidate_stag.unwrap_or(0), msn, mo),
            RdmapRepr::ReadRequest { msn, .. }
            | RdmapRepr::Terminate { msn, .. }
            | RdmapRepr::ImmediateData { msn, .. }
            | RdmapRepr::AtomicRequest { msn, .. }
            | RdmapRepr::AtomicResponse { msn, .. } => untagged(true, 0, msn, 0),
        }
    }

    /// The ULP payload (empty for messages with an RDMAP header).
    pub const fn payload(&self) -> &'a [u8] {
        match *self {
            RdmapRepr::RdmaWrite { payload, .. }
            | RdmapRepr::ReadResponse { payload, .. }
            | RdmapRepr::Send { payload, .. } => payload,
            _ => &[],
        }
    }

    /// Length of what follows the DDP header: payload or RDMAP header.
    pub fn body_len(&self) -> usize {
        match self {
            RdmapRepr::RdmaWrite { payload, .. }
            | RdmapRepr::ReadResponse { payload, .. }
            | RdmapRepr::Send { payload, .. } => payload.len(),
            RdmapRepr::ReadRequest { request, .. } => request.buffer_len(),
            RdmapRepr::Terminate { terminate, .. } => terminate.buffer_len(),
            RdmapRepr::ImmediateData { .. } => IMMEDIATE_DATA_LEN,
            RdmapRepr::AtomicRequest { request, .. } => request.buffer_len(),
            RdmapRepr::AtomicResponse { response, .. } => response.buffer_len(),
        }
    }

    /// Length of the whole emitted DDP segment.
    pub fn buffer_len(&self) -> usize {
        let header = if self.opcode().is_tagged() {
            TAGGED_HEADER_LEN
        } else {
            UNTAGGED_HEADER_LEN
        };
        header + self.body_len()
    }

    /// Writes the whole DDP segment into `buf[..buffer_len()]` and returns
    /// its length. [`Error::BufferTooSmall`] (and nothing written) if it
    /// does not fit.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize> {
        let len = self.buffer_len();
        let buf = buf.get_mut(..len).ok_or(Error::BufferTooSmall)?;
        let ddp = self.ddp_repr();
        ddp.emit(buf)?;
        let body = &mut buf[ddp.header_len()..];
        match self {
            RdmapRepr::RdmaWrite { payload, .. }
            | RdmapRepr::ReadResponse { payload, .. }
            | RdmapRepr::Send { payload, .. } => body.copy_from_slice(payload),
            RdmapRepr::ReadRequest { request, .. } => request.emit(body)?,
            RdmapRepr::Terminate { terminate, .. } => terminate.emit(body)?,
            RdmapRepr::ImmediateData { data, .. } => body.copy_from_slice(data),
            RdmapRepr::AtomicRequest { request, .. } => request.emit(body)?,
            RdmapRepr::AtomicResponse { response, .. } => response.emit(body)?,
        }
        Ok(len)
    }
}
