//! Direct Data Placement (RFC 5041): tagged and untagged headers.
//!
//! Every DDP segment starts with the one-octet DDP Control Field
//! (RFC 5041 §4.1) followed by the first octet reserved for the ULP, which
//! RDMAP uses as its control field (RFC 5040 §4.1):
//!
//! ```text
//!  octet 0            octet 1
//! +-+-+-+-+-+-+-+-+  +-+-+-+-+-+-+-+-+
//! |T|L| Rsvd  |DV |  |   RsvdULP     |
//! +-+-+-+-+-+-+-+-+  +-+-+-+-+-+-+-+-+
//! ```
//!
//! Tagged header (T = 1, RFC 5041 §4.2), 14 octets: control, RsvdULP (8 bits),
//! STag (32), TO (64). Untagged header (T = 0, RFC 5041 §4.3), 18 octets:
//! control, RsvdULP (40 bits: octet 1 and octets 2..6), QN (32), MSN (32),
//! MO (32). All fields are big-endian. The MPA header in front of DDP
//! (RFC 5044 §4.1) is not part of these views.
//!
//! [`DdpSegment`] is a zero-copy view that dispatches on the T bit into
//! [`TaggedSegment`] or [`UntaggedSegment`]; [`DdpRepr`] is the parsed header.

use crate::{Error, Result};

/// The DDP version this implementation speaks: RFC 5041 §4.1, DV "MUST be set
/// to one".
pub const DDP_VERSION: u8 = 1;
/// Length of the tagged buffer model header (RFC 5041 §4.2): 112 bits.
pub const TAGGED_HEADER_LEN: usize = 14;
/// Length of the untagged buffer model header (RFC 5041 §4.3): 144 bits.
pub const UNTAGGED_HEADER_LEN: usize = 18;

/// Bits of the DDP Control Field, octet 0 of every DDP header (RFC 5041 §4.1).
pub mod control {
    /// T: tagged buffer model.
    pub const TAGGED: u8 = 0x80;
    /// L: last segment of a DDP message.
    pub const LAST: u8 = 0x40;
    /// Rsvd: 4 bits, zero on transmit, not checked on receive.
    pub const RSVD_MASK: u8 = 0x3c;
    /// Shift of the Rsvd field.
    pub const RSVD_SHIFT: u32 = 2;
    /// DV: 2-bit DDP version.
    pub const VERSION_MASK: u8 = 0x03;
}

/// Byte offsets inside a DDP header.
mod field {
    use core::ops::Range;

    pub const CONTROL: usize = 0;
    /// RsvdULP (tagged) / `RsvdULP[0:7]` (untagged): the RDMAP control field.
    pub const RSVD_ULP: usize = 1;
    // Tagged (RFC 5041 §4.2).
    pub const STAG: Range<usize> = 2..6;
    pub const TO: Range<usize> = 6..14;
    // Untagged (RFC 5041 §4.3).
    /// `RsvdULP[8:39]`: RDMAP's Invalidate STag.
    pub const RSVD_ULP_EXT: Range<usize> = 2..6;
    pub const QN: Range<usize> = 6..10;
    pub const MSN: Range<usize> = 10..14;
    pub const MO: Range<usize> = 14..18;
}

pub(crate) fn read_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

pub(crate) fn read_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

pub(crate) fn read_u64(b: &[u8], at: usize) -> u64 {
    (u64::from(read_u32(b, at)) << 32) | u64::from(read_u32(b, at + 4))
}

pub(crate) fn write_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

pub(crate) fn write_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

pub(crate) fn write_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// The untagged queues RDMAP uses (RFC 5040 §4.1 Figure 4, §5.2.1, §5.3,
/// §5.4; RFC 7306 §4.1 Figure 2). DDP itself carries any 32-bit QN (the
/// `qn` of [`DdpRepr::Untagged`]); these are the ones with a meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum QueueNumber {
    /// QN 0: Send, Send with Invalidate/SE (and RFC 7306 Immediate Data).
    Send = 0,
    /// QN 1: RDMA Read Request (and RFC 7306 Atomic Request).
    ReadRequest = 1,
    /// QN 2: Terminate.
    Terminate = 2,
    /// QN 3: RFC 7306 Atomic Response.
    AtomicResponse = 3,
}

impl QueueNumber {
    /// The wire value.
    pub const fn value(self) -> u32 {
        self as u32
    }

    /// The queue with wire value `qn`; [`Error::BadField`] for any other.
    pub const fn from_u32(qn: u32) -> Result<Self> {
        match qn {
            0 => Ok(QueueNumber::Send),
            1 => Ok(QueueNumber::ReadRequest),
            2 => Ok(QueueNumber::Terminate),
            3 => Ok(QueueNumber::AtomicResponse),
            _ => Err(Error::BadField),
        }
    }
}

impl From<QueueNumber> for u32 {
    fn from(q: QueueNumber) -> u32 {
        q.value()
    }
}

impl TryFrom<u32> for QueueNumber {
    type Error = Error;
    fn try_from(qn: u32) -> Result<Self> {
        QueueNumber::from_u32(qn)
    }
}

/// Getters and setters of the octets both header formats share.
macro_rules! common_fields {
    ($ty:ident) => {
        impl<T: AsRef<[u8]>> $ty<T> {
            /// Wraps `buffer` without checking its length; getters may panic
            /// on a buffer shorter than the header. Use `new_checked` on
            /// untrusted input.
            pub const fn new_unchecked(buffer: T) -> Self {
                $ty { buffer }
            }

            /// Consumes the view, returning the buffer.
            pub fn into_inner(self) -> T {
                self.buffer
            }

            /// The raw DDP Control Field.
            pub fn control(&self) -> u8 {
                self.buffer.as_ref()[field::CONTROL]
            }

            /// L: this is the last segment of its DDP message.
            pub fn last(&self) -> bool {
                self.control() & control::LAST != 0
            }

            /// The 4 reserved control bits (not checked on receive).
            pub fn reserved(&self) -> u8 {
                (self.control() & control::RSVD_MASK) >> control::RSVD_SHIFT
            }

            /// DV: the DDP version.
            pub fn version(&self) -> u8 {
                self.control() & control::VERSION_MASK
            }

            /// RsvdULP (tagged) or `RsvdULP[0:7]` (untagged): the octet RDMAP
            /// uses as its control field (RFC 5040 §4.1).
            pub fn rsvd_ulp(&self) -> u8 {
                self.buffer.as_ref()[field::RSVD_ULP]
            }
        }

        impl<T: AsRef<[u8]> + AsMut<[u8]>> $ty<T> {
            /// Sets the raw DDP Control Field.
            pub fn set_control(&mut self, value: u8) {
                self.buffer.as_mut()[field::CONTROL] = value;
            }

            /// Sets L.
            pub fn set_last(&mut self, last: bool) {
                let c = self.control() & !control::LAST;
                self.set_control(if last { c | control::LAST } else { c });
            }

            /// Sets DV (low two bits of `version`).
            pub fn set_version(&mut self, version: u8) {
                let c = self.control() & !control::VERSION_MASK;
                self.set_control(c | (version & control::VERSION_MASK));
            }

            /// Sets the reserved control bits (low four bits of `rsvd`).
            pub fn set_reserved(&mut self, rsvd: u8) {
                let c = self.control() & !control::RSVD_MASK;
                self.set_control(c | ((rsvd << control::RSVD_SHIFT) & control::RSVD_MASK));
            }

            /// Sets `RsvdULP[0:7]` (the RDMAP control field).
            pub fn set_rsvd_ulp(&mut self, value: u8) {
                self.buffer.as_mut()[field::RSVD_ULP] = value;
            }
        }
    };
}

/// A DDP segment in the tagged buffer model (RFC 5041 §4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaggedSegment<T: AsRef<[u8]>> {
    buffer: T,
}

common_fields!(TaggedSegment);

impl<T: AsRef<[u8]>> TaggedSegment<T> {
    /// Wraps `buffer` after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let s = Self::new_unchecked(buffer);
        s.check_len()?;
        Ok(s)
    }

    /// [`Error::Truncated`] if the buffer is shorter than the tagged header,
    /// [`Error::BadField`] if its T bit is clear.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < TAGGED_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if b[field::CONTROL] & control::TAGGED == 0 {
            return Err(Error::BadField);
        }
        Ok(())
    }

    /// Header length, 14.
    pub const fn header_len(&self) -> usize {
        TAGGED_HEADER_LEN
    }

    /// STag: the Data Sink's tagged buffer.
    pub fn stag(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::STAG.start)
    }

    /// TO: offset of this segment's payload in the tagged buffer.
    pub fn tagged_offset(&self) -> u64 {
        read_u64(self.buffer.as_ref(), field::TO.start)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> TaggedSegment<&'a T> {
    /// The ULP payload after the header.
    pub fn payload(&self) -> &'a [u8] {
        let data: &'a T = self.buffer;
        &data.as_ref()[TAGGED_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TaggedSegment<T> {
    /// Sets the STag.
    pub fn set_stag(&mut self, stag: u32) {
        write_u32(self.buffer.as_mut(), field::STAG.start, stag);
    }

    /// Sets the TO.
    pub fn set_tagged_offset(&mut self, to: u64) {
        write_u64(self.buffer.as_mut(), field::TO.start, to);
    }

    /// The ULP payload after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[TAGGED_HEADER_LEN..]
    }
}

/// A DDP segment in the untagged buffer model (RFC 5041 §4.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UntaggedSegment<T: AsRef<[u8]>> {
    buffer: T,
}

common_fields!(UntaggedSegment);

impl<T: AsRef<[u8]>> UntaggedSegment<T> {
    /// Wraps `buffer` after [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let s = Self::new_unchecked(buffer);
        s.check_len()?;
        Ok(s)
    }

    /// [`Error::Truncated`] if the buffer is shorter than the untagged
    /// header, [`Error::BadField`] if its T bit is set.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < UNTAGGED_HEADER_LEN {
            return Err(Error::Truncated);
        }
        if b[field::CONTROL] & control::TAGGED != 0 {
            return Err(Error::BadField);
        }
        Ok(())
    }

    /// Header length, 18.
    pub const fn header_len(&self) -> usize {
        UNTAGGED_HEADER_LEN
    }

    /// `RsvdULP[8:39]`: RDMAP's Invalidate STag field (RFC 5040 §4.1).
    pub fn rsvd_ulp_ext(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::RSVD_ULP_EXT.start)
    }

    /// QN: the Data Sink's untagged buffer queue.
    pub fn queue_number(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::QN.start)
    }

    /// MSN: message sequence number on this queue.
    pub fn msn(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::MSN.start)
    }

    /// MO: offset of this segment's payload in its message.
    pub fn message_offset(&self) -> u32 {
        read_u32(self.buffer.as_ref(), field::MO.start)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> UntaggedSegment<&'a T> {
    /// The ULP payload after the header.
    pub fn payload(&self) -> &'a [u8] {
        let data: &'a T = self.buffer;
        &data.as_ref()[UNTAGGED_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UntaggedSegment<T> {
    /// Sets `RsvdULP[8:39]`.
    pub fn set_rsvd_ulp_ext(&mut self, value: u32) {
        write_u32(self.buffer.as_mut(), field::RSVD_ULP_EXT.start, value);
    }

    /// Sets QN.
    pub fn set_queue_number(&mut self, qn: u32) {
        write_u32(self.buffer.as_mut(), field::QN.start, qn);
    }

    /// Sets MSN.
    pub fn set_msn(&mut self, msn: u32) {
        write_u32(self.buffer.as_mut(), field::MSN.start, msn);
    }

    /// Sets MO.
    pub fn set_message_offset(&mut self, mo: u32) {
        write_u32(self.buffer.as_mut(), field::MO.start, mo);
    }

    /// The ULP payload after the header, mutable.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[UNTAGGED_HEADER_LEN..]
    }
}

/// A DDP segment of either model: the T bit of the control field chooses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DdpSegment<T: AsRef<[u8]>> {
    /// T = 1.
    Tagged(TaggedSegment<T>),
    /// T = 0.
    Untagged(UntaggedSegment<T>),
}

impl<T: AsRef<[u8]>> DdpSegment<T> {
    /// Reads the T bit and checks that `buffer` holds the whole header of
    /// that model ([`Error::Truncated`] otherwise).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let c = *buffer.as_ref().first().ok_or(Error::Truncated)?;
        if c & control::TAGGED != 0 {
            Ok(DdpSegment::Tagged(TaggedSegment::new_checked(buffer)?))
        } else {
            Ok(DdpSegment::Untagged(UntaggedSegment::new_checked(buffer)?))
        }
    }

    /// Consumes the view, returning the buffer.
    pub fn into_inner(self) -> T {
        match self {
            DdpSegment::Tagged(s) => s.into_inner(),
            DdpSegment::Untagged(s) => s.into_inner(),
        }
    }

    /// T: tagged buffer model.
    pub fn is_tagged(&self) -> bool {
        matches!(self, DdpSegment::Tagged(_))
    }

    /// The raw DDP Control Field.
    pub fn control(&self) -> u8 {
        match self {
            DdpSegment::Tagged(s) => s.control(),
            DdpSegment::Untagged(s) => s.control(),
        }
    }

    /// L: last segment of its message.
    pub fn last(&self) -> bool {
        self.control() & control::LAST != 0
    }

    /// DV.
    pub fn version(&self) -> u8 {
        self.control() & control::VERSION_MASK
    }

    /// The 4 reserved control bits.
    pub fn reserved(&self) -> u8 {
        (self.control() & control::RSVD_MASK) >> control::RSVD_SHIFT
    }

    /// `RsvdULP[0:7]`: the RDMAP control field.
    pub fn rsvd_ulp(&self) -> u8 {
        match self {
            DdpSegment::Tagged(s) => s.rsvd_ulp(),
            DdpSegment::Untagged(s) => s.rsvd_ulp(),
        }
    }

    /// Header length of this model (14 or 18).
    pub fn header_len(&self) -> usize {
        match self {
            DdpSegment::Tagged(_) => TAGGED_HEADER_LEN,
            DdpSegment::Untagged(_) => UNTAGGED_HEADER_LEN,
        }
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> DdpSegment<&'a T> {
    /// The ULP payload after the header.
    pub fn payload(&self) -> &'a [u8] {
        match self {
            DdpSegment::Tagged(s) => s.payload(),
            DdpSegment::Untagged(s) => s.payload(),
        }
    }
}

/// A parsed DDP header. The ULP-reserved fields are carried opaquely, as
/// RFC 5041 requires; [`crate::rdmap`] gives them their RDMAP meaning.
/// The reserved control bits are not kept (zero on emit, ignored on parse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DdpRepr {
    /// Tagged buffer model (RFC 5041 §4.2).
    Tagged {
        /// L flag.
        last: bool,
        /// RsvdULP: the RDMAP control field.
        rsvd_ulp: u8,
        /// Steering tag.
        stag: u32,
        /// Tagged offset.
        to: u64,
    },
    /// Untagged buffer model (RFC 5041 §4.3).
    Untagged {
        /// L flag.
        last: bool,
        /// `RsvdULP[0:7]`: the RDMAP control field.
        rsvd_ulp: u8,
        /// `RsvdULP[8:39]`: RDMAP's Invalidate STag (or zero).
        rsvd_ulp_ext: u32,
        /// Queue number.
        qn: u32,
        /// Message sequence number.
        msn: u32,
        /// Message offset.
        mo: u32,
    },
}

impl DdpRepr {
    /// Parses the header of a checked segment. [`Error::BadVersion`] if DV
    /// is not [`DDP_VERSION`].
    pub fn parse<T: AsRef<[u8]>>(segment: &DdpSegment<T>) -> Result<Self> {
        if segment.version() != DDP_VERSION {
            return Err(Error::BadVersion);
        }
        Ok(match segment {
            DdpSegment::Tagged(s) => DdpRepr::Tagged {
                last: s.last(),
                rsvd_ulp: s.rsvd_ulp(),
                stag: s.stag(),
                to: s.tagged_offset(),
            },
            DdpSegment::Untagged(s) => DdpRepr::Untagged {
                last: s.last(),
                rsvd_ulp: s.rsvd_ulp(),
                rsvd_ulp_ext: s.rsvd_ulp_ext(),
                qn: s.queue_number(),
                msn: s.msn(),
                mo: s.message_offset(),
            },
        })
    }

    /// Checks and parses the header at the start of `bytes`.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self> {
        DdpRepr::parse(&DdpSegment::new_checked(bytes)?)
    }

    /// Tagged buffer model?
    pub const fn is_tagged(&self) -> bool {
        matches!(self, DdpRepr::Tagged { .. })
    }

    /// The L flag.
    pub const fn last(&self) -> bool {
        match *self {
            DdpRepr::Tagged { last, .. } | DdpRepr::Untagged { last, .. } => last,
        }
    }

    /// `RsvdULP[0:7]`, the RDMAP control field.
    pub const fn rsvd_ulp(&self) -> u8 {
        match *self {
            DdpRepr::Tagged { rsvd_ulp, .. } | DdpRepr::Untagged { rsvd_ulp, .. } => rsvd_ulp,
        }
    }

    /// Length of the emitted header (14 or 18).
    pub const fn header_len(&self) -> usize {
        match self {
            DdpRepr::Tagged { .. } => TAGGED_HEADER_LEN,
            DdpRepr::Untagged { .. } => UNTAGGED_HEADER_LEN,
        }
    }

    /// Same as [`header_len`](Self::header_len): the repr is the header.
    pub const fn buffer_len(&self) -> usize {
        self.header_len()
    }

    /// Writes the header into `buf[..header_len()]` (reserved bits zero,
    /// DV = 1). [`Error::BufferTooSmall`] if it does not fit.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let len = self.header_len();
        let buf = buf.get_mut(..len).ok_or(Error::BufferTooSmall)?;
        let last = if self.last() { control::LAST } else { 0 };
        match *self {
            DdpRepr::Tagged {
                rsvd_ulp, stag, to, ..
            } => {
                let mut s = TaggedSegment::new_unchecked(buf);
                s.set_control(control::TAGGED | last | DDP_VERSION);
                s.set_rsvd_ulp(rsvd_ulp);
                s.set_stag(stag);
                s.set_tagged_offset(to);
            }
            DdpRepr::Untagged {
                rsvd_ulp,
                rsvd_ulp_ext,
                qn,
                msn,
                mo,
                ..
            } => {
                let mut s = UntaggedSegment::new_unchecked(buf);
                s.set_control(last | DDP_VERSION);
                s.set_rsvd_ulp(rsvd_ulp);
                s.set_rsvd_ulp_ext(rsvd_ulp_ext);
                s.set_queue_number(qn);
                s.set_msn(msn);
                s.set_message_offset(mo);
            }
        }
        Ok(())
    }
}
