//! Terminate message and its error codes (RFC 5040 §4.8, §7; RFC 5041 §7.2;
//! RFC 5044 §8; IANA registries of RFC 6580 §3.1-§3.3).
//!
//! A Terminate is an untagged RDMAP message on QN 2 whose payload is the
//! Terminate header (RFC 5040 §4.8 Figures 7 and 8):
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | Layer | EType |  Error Code   |M|D|R|       Reserved (13)     |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  DDP Segment Length (if D)    |  Terminated DDP Header (if D) |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+   14 octets tagged, 18 untagged
//! |  ...  Terminated RDMA Header (if R): a Read Request, 28 octets  |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! M: the DDP Segment Length is valid; D: the DDP Segment Length and the
//! terminated DDP header are present; R: the terminated RDMA header is
//! present. M without D is rejected ([`Error::BadField`]): there would be no
//! length field for M to vouch for.
//!
//! The (Layer, EType, Error Code) triple is a [`TerminateCause`]: nested
//! enums, so only combinations the RFCs define can be built.

use crate::ddp::{
    read_u16, write_u16, DdpRepr, DdpSegment, TaggedSegment, UntaggedSegment, TAGGED_HEADER_LEN,
    UNTAGGED_HEADER_LEN,
};
use crate::rdmap::{ReadRequestHeader, ReadRequestRepr, READ_REQUEST_HEADER_LEN};
use crate::{Error, Result};

/// Length of the Terminate Control field plus its reserved bits (32 bits).
pub const TERMINATE_CONTROL_LEN: usize = 4;
/// Length of the DDP Segment Length field (16 bits).
pub const DDP_SEGMENT_LENGTH_LEN: usize = 2;
/// Length of the Terminated RDMA Header (224 bits, a Read Request header).
pub const TERMINATED_RDMA_HEADER_LEN: usize = READ_REQUEST_HEADER_LEN;
/// Longest Terminate header: control, length, untagged DDP header, RDMA
/// header.
pub const MAX_TERMINATE_HEADER_LEN: usize = TERMINATE_CONTROL_LEN
    + DDP_SEGMENT_LENGTH_LEN
    + UNTAGGED_HEADER_LEN
    + TERMINATED_RDMA_HEADER_LEN;

/// Header control bits (HdrCt, header bits 16-18), in octet 2.
pub mod hdrct {
    /// M (bit 16): DDP Segment Length valid.
    pub const M: u8 = 0x80;
    /// D (bit 17): DDP Segment Length and DDP header included.
    pub const D: u8 = 0x40;
    /// R (bit 18): RDMA header included.
    pub const R: u8 = 0x20;
    /// The first 5 of the 13 reserved bits (zero on send, ignored on receive).
    pub const RSVD_MASK: u8 = 0x1f;
}

mod field {
    /// Layer (high nibble) and EType (low nibble).
    pub const LAYER_ETYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const HDRCT: usize = 2;
    pub const SEGMENT_LENGTH: usize = 4;
    pub const DDP_HEADER: usize = 6;
}

/// Defines a `u8`-coded enum with `value`, `from_value` (unknown values are
/// [`Error::BadOpcode`]) and `ALL`.
macro_rules! code_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $val:expr,)+ }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum $name {
            $($(#[$vm])* $var = $val,)+
        }

        impl $name {
            /// Every value, in wire order.
            pub const ALL: &'static [$name] = &[$($name::$var,)+];

            /// The wire value.
            pub const fn value(self) -> u8 {
                self as u8
            }

            /// The variant with wire value `v`; [`Error::BadOpcode`] if none.
            pub const fn from_value(v: u8) -> Result<Self> {
                match v {
                    $(x if x == $val => Ok($name::$var),)+
                    _ => Err(Error::BadOpcode),
                }
            }
        }

        impl From<$name> for u8 {
            fn from(v: $name) -> u8 {
                v.value()
            }
        }

        impl TryFrom<u8> for $name {
            type Error = Error;
            fn try_from(v: u8) -> Result<Self> {
                $name::from_value(v)
            }
        }
    };
}

code_enum! {
    /// The layer that found the error (RFC 5040 §4.8 Figure 9).
    Layer {
        /// 0000b: RDMAP.
        Rdmap = 0x0,
        /// 0001b: DDP.
        Ddp = 0x1,
        /// 0010b: the LLP (MPA).
        Llp = 0x2,
    }
}

code_enum! {
    /// RDMAP error types (RFC 5040 §4.8 Figure 9).
    RdmapErrorType {
        /// 0000b: Local Catastrophic Error (any error code).
        LocalCatastrophic = 0x0,
        /// 0001b: Remote Protection Error.
        RemoteProtection = 0x1,
        /// 0010b: Remote Operation Error.
        RemoteOperation = 0x2,
    }
}

code_enum! {
    /// DDP error types (RFC 5041 §7.2).
    DdpErrorType {
        /// 0x0: Local Catastrophic (error code 0x00).
        LocalCatastrophic = 0x0,
        /// 0x1: Tagged Buffer Error.
        TaggedBuffer = 0x1,
        /// 0x2: Untagged Buffer Error.
        UntaggedBuffer = 0x2,
        /// 0x3: reserved for use by the LLP (any error code).
        Llp = 0x3,
    }
}

code_enum! {
    /// LLP error types (RFC 6580 §3.3: only MPA's, type 0x0).
    LlpErrorType {
        /// 0x0: MPA Error (RFC 5044 §8).
        Mpa = 0x0,
    }
}

code_enum! {
    /// RDMAP Remote Protection Error codes (RFC 5040 §4.8 Figure 9).
    RemoteProtectionError {
        /// 0x00: Invalid STag.
        InvalidStag = 0x00,
        /// 0x01: Base or bounds violation.
        BaseOrBoundsViolation = 0x01,
        /// 0x02: Access rights violation.
        AccessRightsViolation = 0x02,
        /// 0x03: STag not associated with RDMAP Stream.
        StagNotAssociated = 0x03,
        /// 0x04: TO wrap.
        ToWrap = 0x04,
        /// 0x09: STag cannot be Invalidated.
        StagCannotBeInvalidated = 0x09,
        /// 0xFF: Unspecified Error.
        Unspecified = 0xff,
    }
}

code_enum! {
    /// RDMAP Remote Operation Error codes (RFC 5040 §4.8 Figure 9).
    RemoteOperationError {
        /// 0x05: Invalid RDMAP version.
        InvalidRdmapVersion = 0x05,
        /// 0x06: Unexpected OpCode.
        UnexpectedOpcode = 0x06,
        /// 0x07: Catastrophic error, localized to RDMAP Stream (also the
        /// misaligned Atomic error of RFC 7306 §8.2).
        CatastrophicLocal = 0x07,
        /// 0x08: Catastrophic error, global.
        CatastrophicGlobal = 0x08,
        /// 0x09: STag cannot be Invalidated.
        StagCannotBeInvalidated = 0x09,
        /// 0xFF: Unspecified Error.
        Unspecified = 0xff,
    }
}

code_enum! {
    /// DDP Tagged Buffer Error codes (RFC 5041 §7.2).
    TaggedBufferError {
        /// 0x00: Invalid STag.
        InvalidStag = 0x00,
        /// 0x01: Base or bounds violation.
        BaseOrBoundsViolation = 0x01,
        /// 0x02: STag not associated with DDP Stream.
        StagNotAssociated = 0x02,
        /// 0x03: TO wrap.
        ToWrap = 0x03,
        /// 0x04: Invalid DDP version.
        InvalidDdpVersion = 0x04,
    }
}

code_enum! {
    /// DDP Untagged Buffer Error codes (RFC 5041 §7.2).
    UntaggedBufferError {
        /// 0x01: Invalid QN.
        InvalidQn = 0x01,
        /// 0x02: Invalid MSN - no buffer available.
        InvalidMsnNoBuffer = 0x02,
        /// 0x03: Invalid MSN - MSN range is not valid.
        InvalidMsnRange = 0x03,
        /// 0x04: Invalid MO.
        InvalidMo = 0x04,
        /// 0x05: DDP Message too long for available buffer.
        MessageTooLong = 0x05,
        /// 0x06: Invalid DDP version.
        InvalidDdpVersion = 0x06,
    }
}

code_enum! {
    /// MPA error codes (RFC 5044 §8; Layer 2, EType 0 per RFC 6580 §3.3).
    MpaError {
        /// 1: TCP connection closed, terminated, or lost.
        ConnectionLost = 0x01,
        /// 2: received MPA CRC does not match.
        CrcError = 0x02,
        /// 3: MPA Marker and ULPDU Length field disagree.
        MarkerMismatch = 0x03,
        /// 4: invalid MPA Request or Reply frame.
        InvalidRequestReply = 0x04,
        /// 5: local catastrophic error (RFC 6581 §9).
        LocalCatastrophic = 0x05,
        /// 6: insufficient IRD resources (RFC 6581 §9).
        InsufficientIrd = 0x06,
        /// 7: no matching RTR option (RFC 6581 §9): the peer-to-peer
        /// connection's first message is not the negotiated RTR.
        NoMatchingRtr = 0x07,
    }
}

/// The DDP Local Catastrophic error's only code (RFC 5041 §7.2).
pub const DDP_LOCAL_CATASTROPHIC_CODE: u8 = 0x00;

/// An RDMAP-layer error (Layer 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RdmapError {
    /// Local Catastrophic Error: no error code is defined and "any value in
    /// this field is acceptable"; the octet is kept for byte-exact echo.
    LocalCatastrophic {
        /// The (meaningless) error code octet.
        code: u8,
    },
    /// Remote Protection Error.
    RemoteProtection(RemoteProtectionError),
    /// Remote Operation Error.
    RemoteOperation(RemoteOperationError),
}

/// A DDP-layer error (Layer 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DdpError {
    /// Local Catastrophic (code 0x00).
    LocalCatastrophic,
    /// Tagged Buffer Error.
    TaggedBuffer(TaggedBufferError),
    /// Untagged Buffer Error.
    UntaggedBuffer(UntaggedBufferError),
    /// Error type 0x3, reserved for the LLP: any code.
    Llp {
        /// The LLP-defined code.
        code: u8,
    },
}

/// Why a stream was terminated: Layer, Error Type and Error Code together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TerminateCause {
    /// Layer 0, RDMAP.
    Rdmap(RdmapError),
    /// Layer 1, DDP.
    Ddp(DdpError),
    /// Layer 2, LLP, error type 0: MPA.
    Mpa(MpaError),
}

impl TerminateCause {
    /// Decodes a raw triple. [`Error::BadField`] if `layer` or `etype` does
    /// not fit 4 bits; [`Error::BadOpcode`] for any triple the RFCs do not
    /// define.
    pub fn from_raw(layer: u8, etype: u8, code: u8) -> Result<Self> {
        if layer > 0xf || etype > 0xf {
            return Err(Error::BadField);
        }
        Ok(match Layer::from_value(layer)? {
            Layer::Rdmap => TerminateCause::Rdmap(match RdmapErrorType::from_value(etype)? {
                RdmapErrorType::LocalCatastrophic => RdmapError::LocalCatastrophic { code },
                RdmapErrorType::RemoteProtection => {
                    RdmapError::RemoteProtection(RemoteProtectionError::from_value(code)?)
                }
                RdmapErrorType::RemoteOperation => {
                    RdmapError::RemoteOperation(RemoteOperationError::from_value(code)?)
                }
            }),
            Layer::Ddp => TerminateCause::Ddp(match DdpErrorType::from_value(etype)? {
                DdpErrorType::LocalCatastrophic if code == DDP_LOCAL_CATASTROPHIC_CODE => {
                    DdpError::LocalCatastrophic
                }
                DdpErrorType::LocalCatastrophic => return Err(Error::BadOpcode),
                DdpErrorType::TaggedBuffer => {
                    DdpError::TaggedBuffer(TaggedBufferError::from_value(code)?)
                }
                DdpErrorType::UntaggedBuffer => {
                    DdpError::UntaggedBuffer(UntaggedBufferError::from_value(code)?)
                }
                DdpErrorType::Llp => DdpError::Llp { code },
            }),
            Layer::Llp => match LlpErrorType::from_value(etype)? {
                LlpErrorType::Mpa => TerminateCause::Mpa(MpaError::from_value(code)?),
            },
        })
    }

    /// The raw (layer, error type, error code) triple.
    pub const fn to_raw(self) -> (u8, u8, u8) {
        match self {
            TerminateCause::Rdmap(e) => match e {
                RdmapError::LocalCatastrophic { code } => (0x0, 0x0, code),
                RdmapError::RemoteProtection(c) => (0x0, 0x1, c as u8),
                RdmapError::RemoteOperation(c) => (0x0, 0x2, c as u8),
            },
            TerminateCause::Ddp(e) => match e {
                DdpError::LocalCatastrophic => (0x1, 0x0, DDP_LOCAL_CATASTROPHIC_CODE),
                DdpError::TaggedBuffer(c) => (0x1, 0x1, c as u8),
                DdpError::UntaggedBuffer(c) => (0x1, 0x2, c as u8),
                DdpError::Llp { code } => (0x1, 0x3, code),
            },
            TerminateCause::Mpa(c) => (0x2, 0x0, c as u8),
        }
    }

    /// The first 16 bits of Terminate Control: Layer, EType, Error Code.
    pub const fn to_bits(self) -> u16 {
        let (l, t, c) = self.to_raw();
        ((l as u16) << 12) | ((t as u16) << 8) | c as u16
    }

    /// Decodes the first 16 bits of Terminate Control.
    pub fn from_bits(bits: u16) -> Result<Self> {
        TerminateCause::from_raw(
            (bits >> 12) as u8,
            ((bits >> 8) & 0xf) as u8,
            (bits & 0xff) as u8,
        )
    }

    /// The layer that found the error.
    pub const fn layer(self) -> Layer {
        match self {
            TerminateCause::Rdmap(_) => Layer::Rdmap,
            TerminateCause::Ddp(_) => Layer::Ddp,
            TerminateCause::Mpa(_) => Layer::Llp,
        }
    }

    /// Whether the Terminate should echo the DDP segment length and header
    /// (RFC 5040 §4.8 Figure 10: "Yes" or "Yes, if possible" for RDMAP
    /// remote errors and every DDP error; no for Local Catastrophic RDMAP
    /// errors and LLP errors).
    pub const fn echoes_ddp_header(self) -> bool {
        !matches!(
            self,
            TerminateCause::Rdmap(RdmapError::LocalCatastrophic { .. }) | TerminateCause::Mpa(_)
        )
    }

    /// Whether the Terminate should echo the RDMA (Read Request) header
    /// (RFC 5040 §4.8 Figure 10: Remote Protection Errors only, and then
    /// only for an RDMA Read Request).
    pub const fn echoes_rdma_header(self) -> bool {
        matches!(self, TerminateCause::Rdmap(RdmapError::RemoteProtection(_)))
    }
}

impl From<RdmapError> for TerminateCause {
    fn from(e: RdmapError) -> Self {
        TerminateCause::Rdmap(e)
    }
}

impl From<DdpError> for TerminateCause {
    fn from(e: DdpError) -> Self {
        TerminateCause::Ddp(e)
    }
}

impl From<MpaError> for TerminateCause {
    fn from(e: MpaError) -> Self {
        TerminateCause::Mpa(e)
    }
}

impl From<RemoteProtectionError> for TerminateCause {
    fn from(e: RemoteProtectionError) -> Self {
        TerminateCause::Rdmap(RdmapError::RemoteProtection(e))
    }
}

impl From<RemoteOperationError> for TerminateCause {
    fn from(e: RemoteOperationError) -> Self {
        TerminateCause::Rdmap(RdmapError::RemoteOperation(e))
    }
}

impl From<TaggedBufferError> for TerminateCause {
    fn from(e: TaggedBufferError) -> Self {
        TerminateCause::Ddp(DdpError::TaggedBuffer(e))
    }
}

impl From<UntaggedBufferError> for TerminateCause {
    fn from(e: UntaggedBufferError) -> Self {
        TerminateCause::Ddp(DdpError::UntaggedBuffer(e))
    }
}

/// Length of the DDP header whose control octet is `control`.
const fn ddp_header_len(control: u8) -> usize {
    if control & crate::ddp::control::TAGGED != 0 {
        TAGGED_HEADER_LEN
    } else {
        UNTAGGED_HEADER_LEN
    }
}

/// A view of a Terminate header (the payload of a Terminate message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminateHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TerminateHeader<T> {
    /// Wraps `buffer` without checking it; getters may panic on a buffer
    /// shorter than the header. Use `new_checked` on untrusted input.
    pub const fn new_unchecked(buffer: T) -> Self {
        TerminateHeader { buffer }
    }

    /// Wraps `buffer` after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let h = Self::new_unchecked(buffer);
        h.check_len()?;
        Ok(h)
    }

    /// Checks that every part the header control bits announce is present
    /// ([`Error::Truncated`]) and that M is not set without D
    /// ([`Error::BadField`]). The error triple is not checked here; see
    /// [`cause`](Self::cause).
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < TERMINATE_CONTROL_LEN {
            return Err(Error::Truncated);
        }
        let f = b[field::HDRCT];
        if f & hdrct::M != 0 && f & hdrct::D == 0 {
            return Err(Error::BadField);
        }
        let mut need = TERMINATE_CONTROL_LEN;
        if f & hdrct::D != 0 {
            let c = *b.get(field::DDP_HEADER).ok_or(Error::Truncated)?;
            need += DDP_SEGMENT_LENGTH_LEN + ddp_header_len(c);
        }
        if f & hdrct::R != 0 {
            need += TERMINATED_RDMA_HEADER_LEN;
        }
        if b.len() < need {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Consumes the view, returning the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The raw 4-bit Layer.
    pub fn layer(&self) -> u8 {
        self.buffer.as_ref()[field::LAYER_ETYPE] >> 4
    }

    /// The raw 4-bit EType.
    pub fn error_type(&self) -> u8 {
        self.buffer.as_ref()[field::LAYER_ETYPE] & 0x0f
    }

    /// The raw 8-bit Error Code.
    pub fn error_code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// The typed cause ([`TerminateCause::from_raw`]).
    pub fn cause(&self) -> Result<TerminateCause> {
        TerminateCause::from_raw(self.layer(), self.error_type(), self.error_code())
    }

    /// M: DDP Segment Length valid.
    pub fn flag_m(&self) -> bool {
        self.buffer.as_ref()[field::HDRCT] & hdrct::M != 0
    }

    /// D: DDP Segment Length and DDP header included.
    pub fn flag_d(&self) -> bool {
        self.buffer.as_ref()[field::HDRCT] & hdrct::D != 0
    }

    /// R: RDMA header included.
    pub fn flag_r(&self) -> bool {
        self.buffer.as_ref()[field::HDRCT] & hdrct::R != 0
    }

    /// The 13 reserved bits (ignored on receive).
    pub fn reserved(&self) -> u16 {
        read_u16(self.buffer.as_ref(), field::HDRCT) & 0x1fff
    }

    /// The DDP Segment Length field, present when D is set (valid only if
    /// M is set too).
    pub fn ddp_segment_length(&self) -> Option<u16> {
        self.flag_d()
            .then(|| read_u16(self.buffer.as_ref(), field::SEGMENT_LENGTH))
    }

    /// The terminated DDP header, when D is set: 14 or 18 octets as its own
    /// T bit says. It is echoed as received and may itself be malformed.
    pub fn terminated_ddp_header(&self) -> Option<&[u8]> {
        if !self.flag_d() {
            return None;
        }
        let b = self.buffer.as_ref();
        let len = ddp_header_len(b[field::DDP_HEADER]);
        Some(&b[field::DDP_HEADER..field::DDP_HEADER + len])
    }

    fn rdma_header_offset(&self) -> usize {
        match self.terminated_ddp_header() {
            Some(h) => field::DDP_HEADER + h.len(),
            None => TERMINATE_CONTROL_LEN,
        }
    }

    /// The terminated RDMA header (a Read Request header), when R is set.
    pub fn terminated_rdma_header(&self) -> Option<ReadRequestHeader<&[u8]>> {
        if !self.flag_r() {
            return None;
        }
        let at = self.rdma_header_offset();
        Some(ReadRequestHeader::new_unchecked(
            &self.buffer.as_ref()[at..at + TERMINATED_RDMA_HEADER_LEN],
        ))
    }

    /// Length of the whole Terminate header as its control bits announce.
    pub fn header_len(&self) -> usize {
        self.rdma_header_offset()
            + if self.flag_r() {
                TERMINATED_RDMA_HEADER_LEN
            } else {
                0
            }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TerminateHeader<T> {
    /// Writes Layer, EType and Error Code.
    pub fn set_cause(&mut self, cause: TerminateCause) {
        let (l, t, c) = cause.to_raw();
        let b = self.buffer.as_mut();
        b[field::LAYER_ETYPE] = (l << 4) | t;
        b[field::CODE] = c;
    }

    /// Writes the header control bits and clears the reserved bits.
    pub fn set_flags(&mut self, m: bool, d: bool, r: bool) {
        let mut f = 0;
        if m {
            f |= hdrct::M;
        }
        if d {
            f |= hdrct::D;
        }
        if r {
            f |= hdrct::R;
        }
        write_u16(self.buffer.as_mut(), field::HDRCT, u16::from(f) << 8);
    }

    /// Writes the DDP Segment Length field (present when D is set).
    pub fn set_ddp_segment_length(&mut self, len: u16) {
        write_u16(self.buffer.as_mut(), field::SEGMENT_LENGTH, len);
    }
}

/// A DDP header echoed in a Terminate, kept as the octets received: a
/// Terminate often reports exactly that the header was malformed (bad DDP
/// or RDMAP version, unexpected opcode), so it is not required to parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EchoedDdpHeader {
    /// Octets beyond the header length are zero.
    bytes: [u8; UNTAGGED_HEADER_LEN],
}

impl EchoedDdpHeader {
    /// Takes the header octets; `bytes` must be exactly one header, 14 or
    /// 18 octets by its T bit ([`Error::Truncated`] if shorter,
    /// [`Error::BadLength`] if longer).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let c = *bytes.first().ok_or(Error::Truncated)?;
        let len = ddp_header_len(c);
        match bytes.len() {
            n if n < len => return Err(Error::Truncated),
            n if n > len => return Err(Error::BadLength),
            _ => {}
        }
        let mut h = EchoedDdpHeader {
            bytes: [0; UNTAGGED_HEADER_LEN],
        };
        h.bytes[..len].copy_from_slice(bytes);
        Ok(h)
    }

    /// The header `repr` would emit.
    pub fn from_repr(repr: &DdpRepr) -> Self {
        let mut h = EchoedDdpHeader {
            bytes: [0; UNTAGGED_HEADER_LEN],
        };
        // Cannot fail: the array holds the longer (untagged) header.
        let _ = repr.emit(&mut h.bytes);
        h
    }

    /// Tagged (T bit set)?
    pub const fn is_tagged(&self) -> bool {
        self.bytes[0] & crate::ddp::control::TAGGED != 0
    }

    /// 14 or 18.
    pub const fn header_len(&self) -> usize {
        ddp_header_len(self.bytes[0])
    }

    /// The header octets.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.header_len()]
    }

    /// A view of the echoed header (valid whatever its contents).
    pub fn segment(&self) -> DdpSegment<&[u8]> {
        let b = self.as_bytes();
        if self.is_tagged() {
            DdpSegment::Tagged(TaggedSegment::new_unchecked(b))
        } else {
            DdpSegment::Untagged(UntaggedSegment::new_unchecked(b))
        }
    }

    /// Parses the echoed header ([`Error::BadVersion`] if its DV is wrong).
    pub fn to_repr(&self) -> Result<DdpRepr> {
        DdpRepr::parse(&self.segment())
    }
}

/// The DDP part a Terminate echoes (D bit set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TerminatedDdp {
    /// M bit: `segment_length` is valid.
    pub segment_length_valid: bool,
    /// DDP Segment Length: the length DDP handed up for the segment.
    pub segment_length: u16,
    /// The DDP header of the segment that caused the Terminate.
    pub header: EchoedDdpHeader,
}

/// A parsed Terminate header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TerminateRepr {
    /// Layer, error type and error code.
    pub cause: TerminateCause,
    /// Echoed DDP segment length and header (D bit; M bit inside).
    pub ddp: Option<TerminatedDdp>,
    /// Echoed Read Request header (R bit).
    pub rdma: Option<ReadRequestRepr>,
}

impl TerminateRepr {
    /// Parses a checked header; [`Error::BadOpcode`] or [`Error::BadField`]
    /// for an undefined error triple.
    pub fn parse<T: AsRef<[u8]>>(h: &TerminateHeader<T>) -> Result<Self> {
        let cause = h.cause()?;
        let ddp = match (h.ddp_segment_length(), h.terminated_ddp_header()) {
            (Some(segment_length), Some(header)) => Some(TerminatedDdp {
                segment_length_valid: h.flag_m(),
                segment_length,
                header: EchoedDdpHeader::from_bytes(header)?,
            }),
            _ => None,
        };
        let rdma = match h.terminated_rdma_header() {
            Some(r) => Some(ReadRequestRepr::parse(&r)?),
            None => None,
        };
        Ok(TerminateRepr { cause, ddp, rdma })
    }

    /// Checks and parses the Terminate header at the start of `bytes`.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self> {
        TerminateRepr::parse(&TerminateHeader::new_checked(bytes)?)
    }

    /// A Terminate with nothing echoed.
    pub const fn new(cause: TerminateCause) -> Self {
        TerminateRepr {
            cause,
            ddp: None,
            rdma: None,
        }
    }

    /// Emitted length: 4, plus 2 and 14 or 18 with D, plus 28 with R.
    pub fn buffer_len(&self) -> usize {
        TERMINATE_CONTROL_LEN
            + self
                .ddp
                .map_or(0, |d| DDP_SEGMENT_LENGTH_LEN + d.header.header_len())
            + self.rdma.map_or(0, |_| TERMINATED_RDMA_HEADER_LEN)
    }

    /// Writes the header into `buf[..buffer_len()]` (reserved bits zero).
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.buffer_len();
        let buf = buf.get_mut(..len).ok_or(Error::BufferTooSmall)?;
        let mut at = TERMINATE_CONTROL_LEN;
        {
            let mut h = TerminateHeader::new_unchecked(&mut *buf);
            h.set_cause(self.cause);
            h.set_flags(
                self.ddp.is_some_and(|d| d.segment_length_valid),
                self.ddp.is_some(),
                self.rdma.is_some(),
            );
        }
        if let Some(d) = &self.ddp {
            write_u16(buf, field::SEGMENT_LENGTH, d.segment_length);
            let hdr = d.header.as_bytes();
            buf[field::DDP_HEADER..field::DDP_HEADER + hdr.len()].copy_from_slice(hdr);
            at = field::DDP_HEADER + hdr.len();
        }
        if let Some(r) = &self.rdma {
            r.emit(&mut buf[at..])?;
        }
        Ok(())
    }
}
