//! MPA Request and Reply frames (RFC 5044 §7.1) with the enhanced connection
//! setup of RFC 6581.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                                                               |
//! +        Key: "MPA ID Req Frame" or "MPA ID Rep Frame"          +
//! |                        (16 octets)                            |
//! +                                                               +
//! |                                                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |M|C|R|E|  Res  |      Rev      |           PD_Length           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ~             Private Data (PD_Length octets, <= 512)           ~
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! * M: the sender wants to *receive* markers; C: CRC wanted (CRC is used
//!   if either side sets C); R: in a Reply, the connection is rejected — in a
//!   Request it is sent as zero and not checked (RFC 5044 §7.1).
//! * E (called "enhanced" here): one of RFC 5044's reserved bits, taken by
//!   RFC 6581 for Rev 2 to say that private data begins with the 4-octet
//!   IRD/ORD block ([`IrdOrd`]). The other reserved bits are sent as zero and
//!   not checked; in a Rev 1 frame E is reserved too.
//! * Rev: 1 (RFC 5044) or 2 (RFC 6581); anything else is `Err(BadVersion)`.
//!
//! The IRD/ORD block (RFC 6581, two 16-bit words, network order):
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |P|S|            IRD            |W|R|            ORD            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! (The letters E, P, S, W and R are this module's names for the bits.)
//! P: peer-to-peer connection model (the initiator will send, and the
//! responder wait for, a ready-to-receive (RTR) message before normal
//! traffic); S, W, R: zero-length Send, zero-length RDMA Write, zero-length
//! RDMA Read as RTR message type — offered (any number) in the Request,
//! chosen (one) in the Reply. IRD and ORD: inbound and outbound RDMA Read
//! queue depths, 14 bits each. Checked against siw's frames: `00010001` is
//! client-server with IRD 1 / ORD 1; `8001c001` is P2P, IRD 1, ORD 1, Write
//! and Read RTR offered; `80018001` is P2P with Write RTR chosen.

use super::MPA_PRIVATE_DATA_MAX;
use crate::{Error, Result};

/// Key of an MPA Request frame (RFC 5044 §7.1).
pub const MPA_REQUEST_KEY: [u8; 16] = *b"MPA ID Req Frame";
/// Key of an MPA Reply frame (RFC 5044 §7.1).
pub const MPA_REPLY_KEY: [u8; 16] = *b"MPA ID Rep Frame";
/// Length of a Request/Reply frame before its private data.
pub const MPA_REQ_REP_HEADER_LEN: usize = 20;
/// Length of the RFC 6581 IRD/ORD block at the start of private data.
pub const MPA_IRD_ORD_LEN: usize = 4;

mod field {
    use core::ops::Range;
    pub const KEY: Range<usize> = 0..16;
    pub const FLAGS: usize = 16;
    pub const REV: usize = 17;
    pub const PD_LENGTH: Range<usize> = 18..20;
    pub const PRIVATE_DATA: usize = 20;
}

const FLAG_MARKERS: u8 = 0x80;
const FLAG_CRC: u8 = 0x40;
const FLAG_REJECT: u8 = 0x20;
const FLAG_ENHANCED: u8 = 0x10;
const FLAG_RESERVED: u8 = 0x0f;

const IRD_PEER_TO_PEER: u16 = 0x8000;
const IRD_SEND_RTR: u16 = 0x4000;
const ORD_WRITE_RTR: u16 = 0x8000;
const ORD_READ_RTR: u16 = 0x4000;
const DEPTH_MASK: u16 = 0x3fff;

/// Which frame a key names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MpaKey {
    /// "MPA ID Req Frame", sent by the initiator.
    Request,
    /// "MPA ID Rep Frame", sent by the responder.
    Reply,
}

impl MpaKey {
    /// The 16 key octets.
    pub const fn bytes(self) -> &'static [u8; 16] {
        match self {
            MpaKey::Request => &MPA_REQUEST_KEY,
            MpaKey::Reply => &MPA_REPLY_KEY,
        }
    }

    /// The key named by 16 octets (`Err(BadKey)` for any other text).
    pub fn from_bytes(key: &[u8]) -> Result<MpaKey> {
        if key == MPA_REQUEST_KEY {
            Ok(MpaKey::Request)
        } else if key == MPA_REPLY_KEY {
            Ok(MpaKey::Reply)
        } else {
            Err(Error::BadKey)
        }
    }
}

/// MPA revision (the Rev field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Revision {
    /// Rev 1, RFC 5044.
    V1,
    /// Rev 2, RFC 6581; with the IRD/ORD block when the enhanced bit is set.
    V2 {
        /// The IRD/ORD block, present iff the enhanced bit is set.
        enhanced: Option<IrdOrd>,
    },
}

impl Revision {
    /// The value of the Rev field.
    pub const fn number(&self) -> u8 {
        match self {
            Revision::V1 => 1,
            Revision::V2 { .. } => 2,
        }
    }

    /// The IRD/ORD block, if any.
    pub const fn enhanced(&self) -> Option<IrdOrd> {
        match self {
            Revision::V1 => None,
            Revision::V2 { enhanced } => *enhanced,
        }
    }
}

/// An RDMA Read queue depth: 14 bits (0..=0x3fff), as carried in the
/// RFC 6581 IRD/ORD block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ReadDepth(u16);

impl ReadDepth {
    /// The largest depth the block can carry.
    pub const MAX: ReadDepth = ReadDepth(DEPTH_MASK);

    /// `Err(BadField)` for a value over 0x3fff.
    pub const fn new(value: u16) -> Result<ReadDepth> {
        if value > DEPTH_MASK {
            Err(Error::BadField)
        } else {
            Ok(ReadDepth(value))
        }
    }

    /// The depth as a number.
    pub const fn get(self) -> u16 {
        self.0
    }
}

/// Ready-to-receive (RTR) message types of RFC 6581: offered by the
/// initiator, one chosen by the responder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RtrTypes {
    /// Zero-length Send.
    pub send: bool,
    /// Zero-length RDMA Write.
    pub write: bool,
    /// Zero-length RDMA Read.
    pub read: bool,
}

impl RtrTypes {
    /// No RTR type.
    pub const NONE: RtrTypes = RtrTypes {
        send: false,
        write: false,
        read: false,
    };
}

/// The RFC 6581 IRD/ORD block at the start of Rev 2 private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IrdOrd {
    /// Inbound RDMA Read queue depth.
    pub ird: ReadDepth,
    /// Outbound RDMA Read queue depth.
    pub ord: ReadDepth,
    /// Peer-to-peer connection model: an RTR message opens the connection.
    pub peer_to_peer: bool,
    /// RTR message types offered (Request) or chosen (Reply).
    pub rtr: RtrTypes,
}

impl IrdOrd {
    /// Decodes the 4-octet block; every bit pattern is valid.
    pub fn from_bytes(b: [u8; MPA_IRD_ORD_LEN]) -> IrdOrd {
        let ird = u16::from_be_bytes([b[0], b[1]]);
        let ord = u16::from_be_bytes([b[2], b[3]]);
        IrdOrd {
            ird: ReadDepth(ird & DEPTH_MASK),
            ord: ReadDepth(ord & DEPTH_MASK),
            peer_to_peer: ird & IRD_PEER_TO_PEER != 0,
            rtr: RtrTypes {
                send: ird & IRD_SEND_RTR != 0,
                write: ord & ORD_WRITE_RTR != 0,
                read: ord & ORD_READ_RTR != 0,
            },
        }
    }

    /// Encodes the 4-octet block.
    pub fn to_bytes(&self) -> [u8; MPA_IRD_ORD_LEN] {
        let bit = |on: bool, mask: u16| if on { mask } else { 0 };
        let ird = self.ird.0
            | bit(self.peer_to_peer, IRD_PEER_TO_PEER)
            | bit(self.rtr.send, IRD_SEND_RTR);
        let ord =
            self.ord.0 | bit(self.rtr.write, ORD_WRITE_RTR) | bit(self.rtr.read, ORD_READ_RTR);
        let i = ird.to_be_bytes();
        let o = ord.to_be_bytes();
        [i[0], i[1], o[0], o[1]]
    }
}

/// A read/write view of an MPA Request or Reply frame.
///
/// `new_checked` makes sure the header and all PD_Length octets of private
/// data are there and PD_Length is at most 512; after that no accessor
/// panics. The buffer may go on past the frame ([`MpaRequestReply::frame_len`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpaRequestReply<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MpaRequestReply<T> {
    /// Wraps a buffer without checking it; accessors may panic on a short
    /// buffer.
    pub const fn new_unchecked(buffer: T) -> MpaRequestReply<T> {
        MpaRequestReply { buffer }
    }

    /// Wraps a buffer after [`MpaRequestReply::check_len`].
    pub fn new_checked(buffer: T) -> Result<MpaRequestReply<T>> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// `Err(Truncated)` if the header or the private data is cut short,
    /// `Err(BadLength)` if PD_Length is over 512 (RFC 5044 §7.1).
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < MPA_REQ_REP_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let pd = self.pd_len() as usize;
        if pd > MPA_PRIVATE_DATA_MAX {
            return Err(Error::BadLength);
        }
        if len < MPA_REQ_REP_HEADER_LEN + pd {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The 16 key octets.
    pub fn key(&self) -> &[u8] {
        &self.buffer.as_ref()[field::KEY]
    }

    /// Which frame the key names (`Err(BadKey)` for any other key).
    pub fn key_kind(&self) -> Result<MpaKey> {
        MpaKey::from_bytes(self.key())
    }

    fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }

    /// M: the sender requires markers on what it receives.
    pub fn markers(&self) -> bool {
        self.flags() & FLAG_MARKERS != 0
    }

    /// C: the sender wants CRC.
    pub fn crc(&self) -> bool {
        self.flags() & FLAG_CRC != 0
    }

    /// R: connection rejected (meaningful in a Reply only).
    pub fn reject(&self) -> bool {
        self.flags() & FLAG_REJECT != 0
    }

    /// The RFC 6581 enhanced bit (meaningful with Rev 2 only).
    pub fn enhanced(&self) -> bool {
        self.flags() & FLAG_ENHANCED != 0
    }

    /// The four reserved bits.
    pub fn reserved(&self) -> u8 {
        self.flags() & FLAG_RESERVED
    }

    /// The Rev field.
    pub fn revision(&self) -> u8 {
        self.buffer.as_ref()[field::REV]
    }

    /// PD_Length: octets of private data.
    pub fn pd_len(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[field::PD_LENGTH.start], b[field::PD_LENGTH.start + 1]])
    }

    /// Length of the whole frame, private data included.
    pub fn frame_len(&self) -> usize {
        MPA_REQ_REP_HEADER_LEN + self.pd_len() as usize
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> MpaRequestReply<&'a T> {
    /// All PD_Length octets of private data (with the IRD/ORD block, if any).
    pub fn private_data(&self) -> &'a [u8] {
        let end = field::PRIVATE_DATA + self.pd_len() as usize;
        &self.buffer.as_ref()[field::PRIVATE_DATA..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> MpaRequestReply<T> {
    /// Writes the key.
    pub fn set_key(&mut self, key: MpaKey) {
        self.buffer.as_mut()[field::KEY].copy_from_slice(key.bytes());
    }

    fn set_flag(&mut self, mask: u8, on: bool) {
        let b = &mut self.buffer.as_mut()[field::FLAGS];
        *b = if on { *b | mask } else { *b & !mask };
    }

    /// Sets M.
    pub fn set_markers(&mut self, on: bool) {
        self.set_flag(FLAG_MARKERS, on);
    }

    /// Sets C.
    pub fn set_crc(&mut self, on: bool) {
        self.set_flag(FLAG_CRC, on);
    }

    /// Sets R.
    pub fn set_reject(&mut self, on: bool) {
        self.set_flag(FLAG_REJECT, on);
    }

    /// Sets the RFC 6581 enhanced bit.
    pub fn set_enhanced(&mut self, on: bool) {
        self.set_flag(FLAG_ENHANCED, on);
    }

    /// Sets the four reserved bits (only the low four bits of `value`).
    pub fn set_reserved(&mut self, value: u8) {
        let b = &mut self.buffer.as_mut()[field::FLAGS];
        *b = (*b & !FLAG_RESERVED) | (value & FLAG_RESERVED);
    }

    /// Sets the Rev field.
    pub fn set_revision(&mut self, rev: u8) {
        self.buffer.as_mut()[field::REV] = rev;
    }

    /// Sets PD_Length.
    pub fn set_pd_len(&mut self, len: u16) {
        self.buffer.as_mut()[field::PD_LENGTH].copy_from_slice(&len.to_be_bytes());
    }

    /// The private data, for writing (length from PD_Length).
    pub fn private_data_mut(&mut self) -> &mut [u8] {
        let end = field::PRIVATE_DATA + self.pd_len() as usize;
        &mut self.buffer.as_mut()[field::PRIVATE_DATA..end]
    }
}

/// Request or Reply, with the Reply's reject bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MpaFrameKind {
    /// MPA Request (its R bit is sent as zero and not checked).
    Request,
    /// MPA Reply.
    Reply {
        /// R: the responder rejects the connection.
        rejected: bool,
    },
}

impl MpaFrameKind {
    /// The key for this kind.
    pub const fn key(&self) -> MpaKey {
        match self {
            MpaFrameKind::Request => MpaKey::Request,
            MpaFrameKind::Reply { .. } => MpaKey::Reply,
        }
    }
}

/// A parsed MPA Request or Reply frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MpaRequestReplyRepr<'a> {
    /// Request or Reply (with reject).
    pub kind: MpaFrameKind,
    /// M: the sender requires markers on what it receives.
    pub markers: bool,
    /// C: the sender wants CRC.
    pub crc: bool,
    /// Rev, with the RFC 6581 IRD/ORD block for Rev 2.
    pub revision: Revision,
    /// Private data for the ULP: after the IRD/ORD block, if there is one.
    /// With the block at most 508 octets, else at most 512.
    pub private_data: &'a [u8],
}

impl<'a> MpaRequestReplyRepr<'a> {
    /// Parses a frame.
    ///
    /// Errors: `Truncated`, `BadLength` (PD_Length over 512, or under 4 with
    /// the enhanced bit on Rev 2), `BadKey`, `BadVersion` (Rev not 1 or 2).
    /// Reserved bits, R in a Request and the enhanced bit in Rev 1 are
    /// ignored, as RFC 5044 §7.1 says.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        frame: &MpaRequestReply<&'a T>,
    ) -> Result<MpaRequestReplyRepr<'a>> {
        frame.check_len()?;
        let kind = match frame.key_kind()? {
            MpaKey::Request => MpaFrameKind::Request,
            MpaKey::Reply => MpaFrameKind::Reply {
                rejected: frame.reject(),
            },
        };
        let pd = frame.private_data();
        let (revision, private_data) = match frame.revision() {
            1 => (Revision::V1, pd),
            2 if frame.enhanced() => {
                if pd.len() < MPA_IRD_ORD_LEN {
                    return Err(Error::BadLength);
                }
                let block = IrdOrd::from_bytes([pd[0], pd[1], pd[2], pd[3]]);
                (
                    Revision::V2 {
                        enhanced: Some(block),
                    },
                    &pd[MPA_IRD_ORD_LEN..],
                )
            }
            2 => (Revision::V2 { enhanced: None }, pd),
            _ => return Err(Error::BadVersion),
        };
        Ok(MpaRequestReplyRepr {
            kind,
            markers: frame.markers(),
            crc: frame.crc(),
            revision,
            private_data,
        })
    }

    /// PD_Length of the emitted frame: private data plus the IRD/ORD block.
    pub fn pd_len(&self) -> usize {
        let block = if self.revision.enhanced().is_some() {
            MPA_IRD_ORD_LEN
        } else {
            0
        };
        block + self.private_data.len()
    }

    /// Length of the emitted frame.
    pub fn buffer_len(&self) -> usize {
        MPA_REQ_REP_HEADER_LEN + self.pd_len()
    }

    /// Writes the frame (reserved bits zero). `Err(BadLength)` if the
    /// private data (with the IRD/ORD block) is over 512 octets,
    /// `Err(BufferTooSmall)` if the buffer cannot hold
    /// [`MpaRequestReplyRepr::buffer_len`] octets.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut MpaRequestReply<T>) -> Result<()> {
        let pd_len = self.pd_len();
        if pd_len > MPA_PRIVATE_DATA_MAX {
            return Err(Error::BadLength);
        }
        if frame.buffer.as_ref().len() < self.buffer_len() {
            return Err(Error::BufferTooSmall);
        }
        frame.set_key(self.kind.key());
        frame.buffer.as_mut()[field::FLAGS] = 0;
        frame.set_markers(self.markers);
        frame.set_crc(self.crc);
        frame.set_reject(matches!(self.kind, MpaFrameKind::Reply { rejected: true }));
        frame.set_revision(self.revision.number());
        // pd_len <= 512 fits.
        frame.set_pd_len(pd_len as u16);
        let pd = frame.private_data_mut();
        let rest = match self.revision.enhanced() {
            Some(block) => {
                pd[..MPA_IRD_ORD_LEN].copy_from_slice(&block.to_bytes());
                &mut pd[MPA_IRD_ORD_LEN..]
            }
            None => pd,
        };
        rest.copy_from_slice(self.private_data);
        frame.set_enhanced(self.revision.enhanced().is_some());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// siw's MPA Request in `siw-rping-crc-p2p.pcap`.
    const SIW_P2P_REQUEST: [u8; 24] = *b"MPA ID Req Frame\x50\x02\x00\x04\x80\x01\xc0\x01";
    /// siw's MPA Reply in `siw-rping-crc-p2p.pcap`.
    const SIW_P2P_REPLY: [u8; 24] = *b"MPA ID Rep Frame\x50\x02\x00\x04\x80\x01\x80\x01";
    /// siw's MPA Request in `siw-rping-default.pcap`.
    const SIW_DEFAULT_REQUEST: [u8; 24] = *b"MPA ID Req Frame\x10\x02\x00\x04\x00\x01\x00\x01";

    fn depth(v: u16) -> ReadDepth {
        ReadDepth::new(v).unwrap()
    }

    #[test]
    fn siw_p2p_request() {
        let f = MpaRequestReply::new_checked(&SIW_P2P_REQUEST[..]).unwrap();
        let r = MpaRequestReplyRepr::parse(&f).unwrap();
        assert_eq!(
            r,
            MpaRequestReplyRepr {
                kind: MpaFrameKind::Request,
                markers: false,
                crc: true,
                revision: Revision::V2 {
                    enhanced: Some(IrdOrd {
                        ird: depth(1),
                        ord: depth(1),
                        peer_to_peer: true,
                        rtr: RtrTypes {
                            send: false,
                            write: true,
                            read: true
                        },
                    })
                },
                private_data: &[],
            }
        );
        let mut out = [0u8; 24];
        r.emit(&mut MpaRequestReply::new_unchecked(&mut out[..]))
            .unwrap();
        assert_eq!(out, SIW_P2P_REQUEST);
    }

    #[test]
    fn siw_p2p_reply_and_default_request() {
        let f = MpaRequestReply::new_checked(&SIW_P2P_REPLY[..]).unwrap();
        let r = MpaRequestReplyRepr::parse(&f).unwrap();
        assert_eq!(r.kind, MpaFrameKind::Reply { rejected: false });
        let e = r.revision.enhanced().unwrap();
        assert!(e.peer_to_peer);
        assert_eq!(
            e.rtr,
            RtrTypes {
                send: false,
                write: true,
                read: false
            }
        );

        let f = MpaRequestReply::new_checked(&SIW_DEFAULT_REQUEST[..]).unwrap();
        let r = MpaRequestReplyRepr::parse(&f).unwrap();
        assert!(!r.crc && !r.markers);
        let e = r.revision.enhanced().unwrap();
        assert_eq!((e.ird.get(), e.ord.get(), e.peer_to_peer), (1, 1, false));
        assert_eq!(e.rtr, RtrTypes::NONE);
    }

    #[test]
    fn errors() {
        let mut b = SIW_P2P_REQUEST;
        b[3] = b'x';
        let f = MpaRequestReply::new_checked(&b[..]).unwrap();
        assert_eq!(MpaRequestReplyRepr::parse(&f), Err(Error::BadKey));
        let mut b = SIW_P2P_REQUEST;
        b[17] = 3;
        let f = MpaRequestReply::new_checked(&b[..]).unwrap();
        assert_eq!(MpaRequestReplyRepr::parse(&f), Err(Error::BadVersion));
        let mut b = SIW_P2P_REQUEST;
        b[19] = 2; // PD_Length 2 with the enhanced bit
        let f = MpaRequestReply::new_checked(&b[..]).unwrap();
        assert_eq!(MpaRequestReplyRepr::parse(&f), Err(Error::BadLength));
        let mut b = [0u8; 600];
        b[..24].copy_from_slice(&SIW_P2P_REQUEST);
        b[18..20].copy_from_slice(&513u16.to_be_bytes());
        assert_eq!(
            MpaRequestReply::new_checked(&b[..]).unwrap_err(),
            Error::BadLength
        );
        for n in 0..24 {
            assert_eq!(
                MpaRequestReply::new_checked(&SIW_P2P_REQUEST[..n]).unwrap_err(),
                Error::Truncated
            );
        }
        assert_eq!(ReadDepth::new(0x4000), Err(Error::BadField));
        assert_eq!(ReadDepth::new(0x3fff), Ok(ReadDepth::MAX));
    }

    #[test]
    fn private_data_limit() {
        let pd = [7u8; 512];
        let mut buf = [0u8; 20 + 512];
        let mut r = MpaRequestReplyRepr {
            kind: MpaFrameKind::Reply { rejected: true },
            markers: true,
            crc: false,
            revision: Revision::V1,
            private_data: &pd,
        };
        r.emit(&mut MpaRequestReply::new_unchecked(&mut buf[..]))
            .unwrap();
        assert_eq!(buf[16], 0xa0);
        r.revision = Revision::V2 {
            enhanced: Some(IrdOrd::default()),
        };
        assert_eq!(
            r.emit(&mut MpaRequestReply::new_unchecked(&mut buf[..])),
            Err(Error::BadLength)
        );
        r.private_data = &pd[..508];
        r.emit(&mut MpaRequestReply::new_unchecked(&mut buf[..]))
            .unwrap();
        assert_eq!(&buf[16..24], &[0xb0, 2, 2, 0, 0, 0, 0, 0]);
        assert_eq!(
            r.emit(&mut MpaRequestReply::new_unchecked(&mut buf[..531])),
            Err(Error::BufferTooSmall)
        );
    }
}
