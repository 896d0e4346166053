//! FPDU framing (RFC 5044 §4.1), without markers.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          ULPDU_LENGTH         |                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//! ~                             ULPDU                             ~
//! |                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                               |       PAD (0-3 octets)        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                              CRC                              |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! ULPDU_LENGTH counts the ULPDU only (not pad, markers or CRC). The pad makes
//! `2 + ULPDU + PAD` a multiple of 4; it is sent as zero and not checked. The
//! CRC field is always there: CRC32c of everything before it when CRC was
//! negotiated, zero (and unchecked) otherwise.
//!
//! [`Fpdu`] views an FPDU *without markers*, which is also its wire form when
//! markers are off. With markers on, the CRC covers the marker octets too;
//! use [`emit_fpdu_with_markers`](super::emit_fpdu_with_markers) and
//! [`strip_fpdu_with_markers`](super::strip_fpdu_with_markers), which compute
//! it over the octets as they go on the wire.

use super::{MPA_ALIGNMENT, MPA_CRC_LEN, MPA_ULPDU_LENGTH_LEN};
use crate::crc::crc32c;
use crate::{Error, Result};

/// Octets of pad after a ULPDU of `ulpdu_len` octets (0..=3), so that the
/// ULPDU_LENGTH field, ULPDU and pad end on a 4-octet boundary.
pub const fn fpdu_pad_len(ulpdu_len: usize) -> usize {
    (MPA_ALIGNMENT - (MPA_ULPDU_LENGTH_LEN + ulpdu_len) % MPA_ALIGNMENT) % MPA_ALIGNMENT
}

/// Length of a marker-free FPDU carrying a ULPDU of `ulpdu_len` octets:
/// ULPDU_LENGTH + ULPDU + pad + CRC. Always a multiple of 4, at least 8.
pub const fn fpdu_len(ulpdu_len: usize) -> usize {
    MPA_ULPDU_LENGTH_LEN + ulpdu_len + fpdu_pad_len(ulpdu_len) + MPA_CRC_LEN
}

mod field {
    use core::ops::Range;
    pub const ULPDU_LENGTH: Range<usize> = 0..2;
    pub const ULPDU: usize = 2;
}

/// A read/write view of a marker-free FPDU.
///
/// `new_checked` makes sure the buffer holds the whole FPDU its ULPDU_LENGTH
/// announces; after that no accessor panics. The buffer may be longer than
/// the FPDU (the next FPDU may follow): [`Fpdu::total_len`] says where it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fpdu<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Fpdu<T> {
    /// Wraps a buffer without checking it; accessors may panic on a short
    /// buffer. Use [`Fpdu::new_checked`] for untrusted input.
    pub const fn new_unchecked(buffer: T) -> Fpdu<T> {
        Fpdu { buffer }
    }

    /// Wraps a buffer after [`Fpdu::check_len`].
    pub fn new_checked(buffer: T) -> Result<Fpdu<T>> {
        let fpdu = Self::new_unchecked(buffer);
        fpdu.check_len()?;
        Ok(fpdu)
    }

    /// `Err(Truncated)` unless the buffer holds the ULPDU_LENGTH field and the
    /// whole FPDU it announces (ULPDU, pad and CRC).
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < field::ULPDU_LENGTH.end || len < self.total_len() {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The ULPDU_LENGTH field.
    pub fn ulpdu_len(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([
            b[field::ULPDU_LENGTH.start],
            b[field::ULPDU_LENGTH.start + 1],
        ])
    }

    /// Octets of pad after the ULPDU.
    pub fn pad_len(&self) -> usize {
        fpdu_pad_len(self.ulpdu_len() as usize)
    }

    /// Offset of the CRC field.
    pub fn crc_offset(&self) -> usize {
        field::ULPDU + self.ulpdu_len() as usize + self.pad_len()
    }

    /// Length of the whole FPDU, CRC included.
    pub fn total_len(&self) -> usize {
        fpdu_len(self.ulpdu_len() as usize)
    }

    /// The CRC field, as the CRC32c value it carries (the field holds the
    /// value least significant octet first, RFC 3720 §12.1 convention).
    pub fn crc(&self) -> u32 {
        let at = self.crc_offset();
        let b = self.buffer.as_ref();
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// CRC32c of ULPDU_LENGTH, ULPDU and pad: what the CRC field must hold
    /// when CRC is on (and markers are off).
    pub fn compute_crc(&self) -> u32 {
        crc32c(&self.buffer.as_ref()[..self.crc_offset()])
    }

    /// Whether the CRC field matches [`Fpdu::compute_crc`]. Only meaningful
    /// when CRC was negotiated: otherwise the field is zero and must not be
    /// checked (RFC 5044 §7.1).
    pub fn check_crc(&self) -> bool {
        self.crc() == self.compute_crc()
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Fpdu<&'a T> {
    /// The ULPDU (for DDP).
    pub fn ulpdu(&self) -> &'a [u8] {
        let end = field::ULPDU + self.ulpdu_len() as usize;
        &self.buffer.as_ref()[field::ULPDU..end]
    }

    /// The pad octets (sent as zero, not checked on receive).
    pub fn pad(&self) -> &'a [u8] {
        let start = field::ULPDU + self.ulpdu_len() as usize;
        &self.buffer.as_ref()[start..start + self.pad_len()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Fpdu<T> {
    /// Sets the ULPDU_LENGTH field.
    pub fn set_ulpdu_len(&mut self, len: u16) {
        self.buffer.as_mut()[field::ULPDU_LENGTH].copy_from_slice(&len.to_be_bytes());
    }

    /// The ULPDU, for writing (its length is taken from ULPDU_LENGTH).
    pub fn ulpdu_mut(&mut self) -> &mut [u8] {
        let end = field::ULPDU + self.ulpdu_len() as usize;
        &mut self.buffer.as_mut()[field::ULPDU..end]
    }

    /// Zeroes the pad octets.
    pub fn clear_pad(&mut self) {
        let start = field::ULPDU + self.ulpdu_len() as usize;
        let end = start + self.pad_len();
        self.buffer.as_mut()[start..end].fill(0);
    }

    /// Writes a CRC32c value into the CRC field.
    pub fn set_crc(&mut self, crc: u32) {
        let at = self.crc_offset();
        self.buffer.as_mut()[at..at + MPA_CRC_LEN].copy_from_slice(&crc.to_le_bytes());
    }

    /// Fills the CRC field: the CRC32c of the FPDU when `crc` is on, zero
    /// when it is off.
    pub fn fill_crc(&mut self, crc: bool) {
        let value = if crc { self.compute_crc() } else { 0 };
        self.set_crc(value);
    }
}

/// A parsed marker-free FPDU: just its ULPDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FpduRepr<'a> {
    /// The ULPDU (a DDP segment), at most 65535 octets.
    pub ulpdu: &'a [u8],
}

impl<'a> FpduRepr<'a> {
    /// Parses an FPDU, checking the CRC when `crc` was negotiated
    /// (`Err(BadCrc)` on mismatch) and ignoring the field otherwise.
    /// Pad octets are not checked.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(fpdu: &Fpdu<&'a T>, crc: bool) -> Result<FpduRepr<'a>> {
        fpdu.check_len()?;
        if crc && !fpdu.check_crc() {
            return Err(Error::BadCrc);
        }
        Ok(FpduRepr {
            ulpdu: fpdu.ulpdu(),
        })
    }

    /// Length of the emitted FPDU.
    pub fn buffer_len(&self) -> usize {
        fpdu_len(self.ulpdu.len())
    }

    /// Writes the FPDU: ULPDU_LENGTH, ULPDU, zero pad, and the CRC field
    /// (CRC32c when `crc` is on, zero when off). `Err(BadLength)` for a ULPDU
    /// over 65535 octets, `Err(BufferTooSmall)` if the buffer cannot hold
    /// [`FpduRepr::buffer_len`] octets.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, fpdu: &mut Fpdu<T>, crc: bool) -> Result<()> {
        let len = u16::try_from(self.ulpdu.len()).map_err(|_| Error::BadLength)?;
        if fpdu.buffer.as_ref().len() < self.buffer_len() {
            return Err(Error::BufferTooSmall);
        }
        fpdu.set_ulpdu_len(len);
        fpdu.ulpdu_mut().copy_from_slice(self.ulpdu);
        fpdu.clear_pad();
        fpdu.fill_crc(crc);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_and_lengths() {
        assert_eq!(fpdu_pad_len(0), 2);
        assert_eq!(fpdu_pad_len(1), 1);
        assert_eq!(fpdu_pad_len(2), 0);
        assert_eq!(fpdu_pad_len(3), 3);
        assert_eq!(fpdu_pad_len(14), 0);
        assert_eq!(fpdu_len(0), 8);
        assert_eq!(fpdu_len(14), 20);
        assert_eq!(fpdu_len(1442), 1448);
        assert_eq!(fpdu_len(65535), 2 + 65535 + 3 + 4);
    }

    /// The first FPDU of `siw-rping-crc-p2p.pcap`: the zero-length RDMA
    /// Write RTR (tagged, STag 1, TO 0) with CRC on.
    const SIW_RTR: [u8; 20] = [
        0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0xeb, 0xd3, 0x4c, 0x5f,
    ];

    #[test]
    fn siw_rtr_fpdu() {
        let f = Fpdu::new_checked(&SIW_RTR[..]).unwrap();
        assert_eq!(f.ulpdu_len(), 14);
        assert_eq!(f.pad_len(), 0);
        assert_eq!(f.total_len(), 20);
        assert_eq!(f.crc(), 0x5f4c_d3eb);
        assert!(f.check_crc());
        let repr = FpduRepr::parse(&f, true).unwrap();
        assert_eq!(repr.ulpdu, &SIW_RTR[2..16]);
        let mut out = [0u8; 20];
        repr.emit(&mut Fpdu::new_unchecked(&mut out[..]), true)
            .unwrap();
        assert_eq!(out, SIW_RTR);
    }

    #[test]
    fn crc_off_field_is_zero_and_ignored() {
        let mut bad = SIW_RTR;
        bad[19] ^= 1;
        let f = Fpdu::new_checked(&bad[..]).unwrap();
        assert_eq!(FpduRepr::parse(&f, true), Err(Error::BadCrc));
        assert!(FpduRepr::parse(&f, false).is_ok());
        let mut out = [0xaau8; 20];
        let repr = FpduRepr::parse(&f, false).unwrap();
        repr.emit(&mut Fpdu::new_unchecked(&mut out[..]), false)
            .unwrap();
        assert_eq!(&out[16..], &[0, 0, 0, 0]);
    }

    #[test]
    fn truncation() {
        for n in 0..SIW_RTR.len() {
            assert_eq!(
                Fpdu::new_checked(&SIW_RTR[..n]).unwrap_err(),
                Error::Truncated
            );
        }
        let mut small = [0u8; 19];
        let repr = FpduRepr {
            ulpdu: &SIW_RTR[2..16],
        };
        assert_eq!(
            repr.emit(&mut Fpdu::new_unchecked(&mut small[..]), true),
            Err(Error::BufferTooSmall)
        );
    }
}
