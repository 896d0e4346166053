//! MPA markers (RFC 5044 §4.2, §4.3).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |           RESERVED            |            FPDUPTR            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Placement (RFC 5044 §4.3): with `SeqStart` the TCP sequence number of the
//! first octet of the first FPDU of Full Operation phase, a marker begins at
//! every sequence number `s` with `(s - SeqStart) mod 512 == 0` (sequence
//! numbers wrap; 512 divides 2^32, so the rule holds across the wrap). The
//! first FPDU therefore begins with a marker. Example from the RFC: a
//! connection whose Full Operation phase starts at sequence 11 has markers at
//! 11, 523, 1035, ...
//!
//! FPDUPTR counts octets of TCP stream back from the marker to the start of
//! the FPDU it belongs to, markers included; it always points at an FPDU.
//! Every marker inside one FPDU points at the same octet. A marker that falls
//! exactly between two FPDUs is sent immediately before the second one's
//! ULPDU_LENGTH field and belongs to it: its FPDUPTR is 0, and it is part of
//! that FPDU for the CRC. Hence a marker is only ever sent right before an
//! octet of FPDU; a stream (or a segment) that ends on a marker position does
//! not end with a marker. The reserved field is sent as zero and not checked.
//!
//! In this module "marker-free" octets are FPDUs as [`Fpdu`](super::Fpdu)
//! sees them; "wire" octets are the TCP payload with the markers in it.
//! [`MarkerInserter`] and [`MarkerStripper`] turn one into the other,
//! incrementally (chunks may end anywhere, also inside a marker), and find the
//! FPDU boundaries themselves from the ULPDU_LENGTH fields. For one FPDU at a
//! time with the CRC computed over the wire octets, see
//! [`emit_fpdu_with_markers`] and [`strip_fpdu_with_markers`].

use super::fpdu::fpdu_len;
use super::{MPA_ALIGNMENT, MPA_CRC_LEN, MPA_MARKER_INTERVAL, MPA_MARKER_LEN};
use crate::crc::crc32c;
use crate::{Error, Result};

/// Data octets between two markers.
const DATA_PER_INTERVAL: usize = MPA_MARKER_INTERVAL - MPA_MARKER_LEN;

mod field {
    use core::ops::Range;
    pub const RESERVED: Range<usize> = 0..2;
    pub const FPDUPTR: Range<usize> = 2..4;
}

/// A read/write view of a 4-octet marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Marker<T> {
    /// Wraps a buffer without checking its length.
    pub const fn new_unchecked(buffer: T) -> Marker<T> {
        Marker { buffer }
    }

    /// Wraps a buffer of at least 4 octets (`Err(Truncated)` otherwise).
    pub fn new_checked(buffer: T) -> Result<Marker<T>> {
        let m = Self::new_unchecked(buffer);
        m.check_len()?;
        Ok(m)
    }

    /// `Err(Truncated)` if the buffer is shorter than a marker.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < MPA_MARKER_LEN {
            Err(Error::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The reserved field (sent as zero, ignored on receive).
    pub fn reserved(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[field::RESERVED.start], b[field::RESERVED.start + 1]])
    }

    /// FPDUPTR: octets back from this marker to the start of its FPDU.
    pub fn fpdu_ptr(&self) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[field::FPDUPTR.start], b[field::FPDUPTR.start + 1]])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Marker<T> {
    /// Sets the reserved field.
    pub fn set_reserved(&mut self, value: u16) {
        self.buffer.as_mut()[field::RESERVED].copy_from_slice(&value.to_be_bytes());
    }

    /// Sets FPDUPTR.
    pub fn set_fpdu_ptr(&mut self, value: u16) {
        self.buffer.as_mut()[field::FPDUPTR].copy_from_slice(&value.to_be_bytes());
    }
}

/// A parsed marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MarkerRepr {
    /// Octets back from the marker to the start of its FPDU.
    pub fpdu_ptr: u16,
}

impl MarkerRepr {
    /// Parses a marker; the reserved field is ignored (RFC 5044 §4.2).
    pub fn parse<T: AsRef<[u8]>>(marker: &Marker<T>) -> Result<MarkerRepr> {
        marker.check_len()?;
        Ok(MarkerRepr {
            fpdu_ptr: marker.fpdu_ptr(),
        })
    }

    /// Length of an emitted marker.
    pub const fn buffer_len(&self) -> usize {
        MPA_MARKER_LEN
    }

    /// Writes the marker with a zero reserved field.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, marker: &mut Marker<T>) -> Result<()> {
        if marker.buffer.as_ref().len() < MPA_MARKER_LEN {
            return Err(Error::BufferTooSmall);
        }
        marker.set_reserved(0);
        marker.set_fpdu_ptr(self.fpdu_ptr);
        Ok(())
    }

    /// The marker's four wire octets.
    pub const fn to_bytes(&self) -> [u8; MPA_MARKER_LEN] {
        let p = self.fpdu_ptr.to_be_bytes();
        [0, 0, p[0], p[1]]
    }
}

/// Where `seq` falls in its 512-octet marker interval: 0 when a marker
/// begins at `seq`, 1..=3 inside a marker, 4..=511 on a data octet.
/// `marker_ref` is `SeqStart` of RFC 5044 §4.3.
pub const fn marker_phase(marker_ref: u32, seq: u32) -> usize {
    (seq.wrapping_sub(marker_ref) % MPA_MARKER_INTERVAL as u32) as usize
}

/// Wire octets taken by `data_len` marker-free octets sent from phase
/// `phase` on (markers are only sent before a data octet).
const fn marked_len_from(phase: usize, data_len: usize) -> usize {
    if data_len == 0 {
        return 0;
    }
    let (lead, phase) = if phase < MPA_MARKER_LEN {
        (MPA_MARKER_LEN - phase, MPA_MARKER_LEN)
    } else {
        (0, phase)
    };
    let room = MPA_MARKER_INTERVAL - phase;
    if data_len <= room {
        lead + data_len
    } else {
        let rest = data_len - room;
        lead + data_len + MPA_MARKER_LEN * rest.div_ceil(DATA_PER_INTERVAL)
    }
}

/// Wire octets taken by `data_len` marker-free octets whose first octet (or
/// the marker before it) is at TCP sequence number `seq`.
///
/// For one whole FPDU starting at `seq` this is its length in the TCP stream.
pub const fn marked_len(marker_ref: u32, seq: u32, data_len: usize) -> usize {
    marked_len_from(marker_phase(marker_ref, seq), data_len)
}

/// Marker octets inside `wire_len` wire octets starting at phase `phase`.
fn marker_octets_in(phase: usize, wire_len: usize) -> usize {
    let full = wire_len / MPA_MARKER_INTERVAL * MPA_MARKER_LEN;
    let rem = wire_len % MPA_MARKER_INTERVAL;
    let end = phase + rem;
    let this = if phase < MPA_MARKER_LEN {
        end.min(MPA_MARKER_LEN) - phase
    } else {
        0
    };
    let next = end
        .min(MPA_MARKER_INTERVAL + MPA_MARKER_LEN)
        .saturating_sub(MPA_MARKER_INTERVAL);
    full + this + next
}

/// Follows FPDU boundaries through a marker-free stream by reading the
/// ULPDU_LENGTH fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FpduTracker {
    /// Sequence number where the current FPDU starts (at its leading marker
    /// if it has one); when between FPDUs, where the next one will start.
    start: u32,
    /// ULPDU_LENGTH octets seen so far of the current FPDU.
    header: [u8; 2],
    header_seen: u8,
    /// Marker-free octets of the current FPDU still to come once its header
    /// is complete.
    remaining: usize,
}

impl FpduTracker {
    const fn new(start: u32) -> FpduTracker {
        FpduTracker {
            start,
            header: [0; 2],
            header_seen: 0,
            remaining: 0,
        }
    }

    /// Accounts for marker-free octets that contain no marker between them,
    /// the first at sequence number `seq`.
    fn advance(&mut self, mut data: &[u8], mut seq: u32) {
        while !data.is_empty() {
            if self.header_seen < 2 {
                self.header[self.header_seen as usize] = data[0];
                self.header_seen += 1;
                if self.header_seen == 2 {
                    let ulpdu_len = u16::from_be_bytes(self.header) as usize;
                    self.remaining = fpdu_len(ulpdu_len) - 2;
                }
                data = &data[1..];
                seq = seq.wrapping_add(1);
                continue;
            }
            let take = self.remaining.min(data.len());
            self.remaining -= take;
            data = &data[take..];
            seq = seq.wrapping_add(take as u32);
            if self.remaining == 0 {
                // The next FPDU starts right here, with a marker if `seq` is
                // a marker position.
                self.header_seen = 0;
                self.start = seq;
            }
        }
    }

    /// FPDUPTR of a marker at `seq`: distance back to the current FPDU (0 if
    /// between FPDUs: the marker then leads the next one).
    fn pointer_at(&self, seq: u32) -> u32 {
        seq.wrapping_sub(self.start)
    }
}

/// Inserts markers into a marker-free stream of FPDUs (transmit side).
///
/// Created at an FPDU boundary; FPDU boundaries after that are read from the
/// ULPDU_LENGTH fields of the stream. Feed it the stream in chunks of any
/// size: the output of several [`MarkerInserter::insert`] calls is the same
/// as that of one call on their concatenation.
///
/// It does not touch the CRC field: with markers on, the CRC covers the
/// markers, so compute it over the output (as [`emit_fpdu_with_markers`]
/// does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerInserter {
    marker_ref: u32,
    seq: u32,
    fpdu: FpduTracker,
}

impl MarkerInserter {
    /// Starts inserting at TCP sequence number `seq`, where an FPDU begins.
    /// `marker_ref` is `SeqStart` (RFC 5044 §4.3). `Err(BadField)` if `seq`
    /// is inside a marker, where no FPDU can begin.
    pub fn new(marker_ref: u32, seq: u32) -> Result<MarkerInserter> {
        if (1..MPA_MARKER_LEN).contains(&marker_phase(marker_ref, seq)) {
            return Err(Error::BadField);
        }
        Ok(MarkerInserter {
            marker_ref,
            seq,
            fpdu: FpduTracker::new(seq),
        })
    }

    /// TCP sequence number of the next wire octet.
    pub fn seq(&self) -> u32 {
        self.seq
    }

    /// Wire octets that [`MarkerInserter::insert`] will write for the next
    /// `data_len` marker-free octets.
    pub fn wire_len(&self, data_len: usize) -> usize {
        marked_len(self.marker_ref, self.seq, data_len)
    }

    /// Copies `data` to `out` with the markers that fall in it, returning the
    /// octets written ([`MarkerInserter::wire_len`]).
    ///
    /// `Err(BufferTooSmall)` (nothing written, state unchanged) if `out` is
    /// too short. `Err(BadLength)` if an FPDU is so long that a marker inside
    /// it would be more than 65535 octets from its start; the inserter's
    /// state is then unspecified.
    pub fn insert(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize> {
        let total = self.wire_len(data.len());
        if out.len() < total {
            return Err(Error::BufferTooSmall);
        }
        let mut i = 0;
        let mut o = 0;
        while i < data.len() {
            let phase = marker_phase(self.marker_ref, self.seq);
            if phase == 0 {
                let ptr =
                    u16::try_from(self.fpdu.pointer_at(self.seq)).map_err(|_| Error::BadLength)?;
                out[o..o + MPA_MARKER_LEN]
                    .copy_from_slice(&MarkerRepr { fpdu_ptr: ptr }.to_bytes());
                o += MPA_MARKER_LEN;
                self.seq = self.seq.wrapping_add(MPA_MARKER_LEN as u32);
                continue;
            }
            // `new` never starts inside a marker and markers are written
            // whole, so here phase >= 4.
            let run = (MPA_MARKER_INTERVAL - phase).min(data.len() - i);
            out[o..o + run].copy_from_slice(&data[i..i + run]);
            self.fpdu.advance(&data[i..i + run], self.seq);
            i += run;
            o += run;
            self.seq = self.seq.wrapping_add(run as u32);
        }
        debug_assert_eq!(o, total);
        Ok(o)
    }
}

/// Removes and checks the markers of a received stream (receive side).
///
/// Created at an FPDU boundary; it then follows the FPDUs through their
/// ULPDU_LENGTH fields and checks that every marker's FPDUPTR points at the
/// start of the FPDU it is in (`Err(BadMarker)` otherwise). Chunks may end
/// anywhere, also in the middle of a marker. Exact inverse of
/// [`MarkerInserter`] started at the same sequence number (reserved marker
/// fields are not checked and so not preserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerStripper {
    marker_ref: u32,
    seq: u32,
    fpdu: FpduTracker,
    marker: [u8; MPA_MARKER_LEN],
    failed: Option<Error>,
}

impl MarkerStripper {
    /// Starts at TCP sequence number `seq`, where an FPDU begins.
    /// `marker_ref` is `SeqStart` (RFC 5044 §4.3). `Err(BadField)` if `seq`
    /// is inside a marker.
    pub fn new(marker_ref: u32, seq: u32) -> Result<MarkerStripper> {
        if (1..MPA_MARKER_LEN).contains(&marker_phase(marker_ref, seq)) {
            return Err(Error::BadField);
        }
        Ok(MarkerStripper {
            marker_ref,
            seq,
            fpdu: FpduTracker::new(seq),
            marker: [0; MPA_MARKER_LEN],
            failed: None,
        })
    }

    /// TCP sequence number of the next wire octet expected.
    pub fn seq(&self) -> u32 {
        self.seq
    }

    /// Marker-free octets that [`MarkerStripper::strip`] will write for the
    /// next `wire_len` wire octets.
    pub fn stripped_len(&self, wire_len: usize) -> usize {
        wire_len - marker_octets_in(marker_phase(self.marker_ref, self.seq), wire_len)
    }

    /// Copies `wire` to `out` without its markers, checking each marker as
    /// its last octet arrives, and returns the octets written
    /// ([`MarkerStripper::stripped_len`]).
    ///
    /// `Err(BufferTooSmall)` (nothing consumed) if `out` is too short;
    /// `Err(BadMarker)` if a marker does not point at its FPDU, after which
    /// the stripper keeps returning that error.
    pub fn strip(&mut self, wire: &[u8], out: &mut [u8]) -> Result<usize> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if out.len() < self.stripped_len(wire.len()) {
            return Err(Error::BufferTooSmall);
        }
        let mut i = 0;
        let mut o = 0;
        while i < wire.len() {
            let phase = marker_phase(self.marker_ref, self.seq);
            if phase < MPA_MARKER_LEN {
                self.marker[phase] = wire[i];
                i += 1;
                self.seq = self.seq.wrapping_add(1);
                if phase == MPA_MARKER_LEN - 1 {
                    let at = self.seq.wrapping_sub(MPA_MARKER_LEN as u32);
                    let ptr = Marker::new_unchecked(&self.marker[..]).fpdu_ptr();
                    if self.fpdu.pointer_at(at) != u32::from(ptr) {
                        self.failed = Some(Error::BadMarker);
                        return Err(Error::BadMarker);
                    }
                }
                continue;
            }
            let run = (MPA_MARKER_INTERVAL - phase).min(wire.len() - i);
            out[o..o + run].copy_from_slice(&wire[i..i + run]);
            self.fpdu.advance(&wire[i..i + run], self.seq);
            i += run;
            o += run;
            self.seq = self.seq.wrapping_add(run as u32);
        }
        Ok(o)
    }
}

/// `Err(BadField)` unless an FPDU may start at `seq`: FPDUs are multiples of
/// 4 octets and the first starts on a marker, so every FPDU starts 4-aligned
/// to the markers, which keeps markers out of the ULPDU_LENGTH and CRC fields.
fn check_fpdu_alignment(marker_ref: u32, seq: u32) -> Result<()> {
    // MPA_ALIGNMENT is a power of two.
    if marker_phase(marker_ref, seq) & (MPA_ALIGNMENT - 1) != 0 {
        Err(Error::BadField)
    } else {
        Ok(())
    }
}

/// Frames one FPDU for the wire with markers: ULPDU_LENGTH, ULPDU, zero pad,
/// the markers that fall in it, and the CRC field — computed, when `crc` is
/// on, over all the wire octets before it *including the markers*
/// (RFC 5044 §4.3, §4.4); zero when off.
///
/// `seq` is the TCP sequence number where the FPDU starts (with its leading
/// marker if `seq` is a marker position); `marker_ref` is `SeqStart`.
/// Returns the wire length, [`marked_len`]`(marker_ref, seq, fpdu_len(ulpdu.len()))`.
///
/// Errors: `BadLength` for a ULPDU over 65535 octets (or one so long that a
/// marker pointer would overflow), `BadField` if `seq` is not 4-aligned to
/// the markers, `BufferTooSmall` if `out` is too short.
pub fn emit_fpdu_with_markers(
    ulpdu: &[u8],
    crc: bool,
    marker_ref: u32,
    seq: u32,
    out: &mut [u8],
) -> Result<usize> {
    let len = u16::try_from(ulpdu.len()).map_err(|_| Error::BadLength)?;
    check_fpdu_alignment(marker_ref, seq)?;
    let mut inserter = MarkerInserter::new(marker_ref, seq)?;
    let flen = fpdu_len(ulpdu.len());
    let wire_len = inserter.wire_len(flen);
    if out.len() < wire_len {
        return Err(Error::BufferTooSmall);
    }
    let mut o = inserter.insert(&len.to_be_bytes(), out)?;
    o += inserter.insert(ulpdu, &mut out[o..])?;
    // Pad and a placeholder CRC field.
    let tail = [0u8; 3 + MPA_CRC_LEN];
    let tail_len = flen - 2 - ulpdu.len();
    o += inserter.insert(&tail[..tail_len], &mut out[o..])?;
    debug_assert_eq!(o, wire_len);
    // Alignment puts any marker before the CRC field, never inside or after
    // it: the field is the last four wire octets.
    let crc_at = o - MPA_CRC_LEN;
    let value = if crc { crc32c(&out[..crc_at]) } else { 0 };
    out[crc_at..o].copy_from_slice(&value.to_le_bytes());
    Ok(o)
}

/// Takes one FPDU off the wire with markers: `wire` starts at TCP sequence
/// number `seq`, where the FPDU starts, and may go on past its end. Checks
/// every marker's FPDUPTR, and when `crc` is on checks the CRC over the wire
/// octets including the markers. Writes the marker-free FPDU (ready for
/// [`Fpdu`](super::Fpdu)) to `out` and returns `(wire octets consumed,
/// marker-free length)`.
///
/// Errors: `BadField` if `seq` is not 4-aligned to the markers, `Truncated`
/// if `wire` ends before the FPDU does, `BufferTooSmall` if `out` cannot hold
/// it, `BadMarker`, `BadCrc`.
pub fn strip_fpdu_with_markers(
    wire: &[u8],
    crc: bool,
    marker_ref: u32,
    seq: u32,
    out: &mut [u8],
) -> Result<(usize, usize)> {
    check_fpdu_alignment(marker_ref, seq)?;
    // A marker can only lead the FPDU, not split its ULPDU_LENGTH field.
    let header_at = if marker_phase(marker_ref, seq) == 0 {
        MPA_MARKER_LEN
    } else {
        0
    };
    let header = wire.get(header_at..header_at + 2).ok_or(Error::Truncated)?;
    let flen = fpdu_len(u16::from_be_bytes([header[0], header[1]]) as usize);
    let wire_len = marked_len(marker_ref, seq, flen);
    let wire = wire.get(..wire_len).ok_or(Error::Truncated)?;
    if out.len() < flen {
        return Err(Error::BufferTooSmall);
    }
    let n = MarkerStripper::new(marker_ref, seq)?.strip(wire, out)?;
    debug_assert_eq!(n, flen);
    if crc {
        let crc_at = wire_len - MPA_CRC_LEN;
        let field = u32::from_le_bytes([
            wire[crc_at],
            wire[crc_at + 1],
            wire[crc_at + 2],
            wire[crc_at + 3],
        ]);
        if crc32c(&wire[..crc_at]) != field {
            return Err(Error::BadCrc);
        }
    }
    Ok((wire_len, flen))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_wraps() {
        assert_eq!(marker_phase(11, 11), 0);
        assert_eq!(marker_phase(11, 523), 0);
        assert_eq!(marker_phase(11, 15), 4);
        assert_eq!(marker_phase(u32::MAX - 1, 510), 0);
        assert_eq!(marker_phase(u32::MAX - 1, 2), 4);
    }

    #[test]
    fn marked_len_matches_counting() {
        for phase in [0usize, 1, 2, 3, 4, 5, 100, 508, 509, 510, 511] {
            for n in [
                0usize, 1, 2, 3, 4, 7, 8, 100, 503, 504, 507, 508, 509, 1016, 1017, 5000,
            ] {
                // Count by walking the wire.
                let mut p = phase;
                let mut left = n;
                let mut wire = 0;
                while left > 0 {
                    if p % 512 < 4 {
                        wire += 1;
                    } else {
                        left -= 1;
                        wire += 1;
                    }
                    p += 1;
                }
                assert_eq!(marked_len_from(phase, n), wire, "phase {phase} n {n}");
                assert_eq!(
                    marker_octets_in(phase, wire),
                    wire - n,
                    "phase {phase} n {n}"
                );
            }
        }
    }

    #[test]
    fn new_rejects_inside_marker() {
        for p in 1..4u32 {
            assert_eq!(MarkerInserter::new(100, 100 + p), Err(Error::BadField));
            assert_eq!(MarkerStripper::new(100, 100 + p), Err(Error::BadField));
        }
        assert!(MarkerInserter::new(100, 104).is_ok());
        assert!(MarkerStripper::new(100, 611).is_ok());
    }
}
