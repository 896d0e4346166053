//! MPA (RFC 5044, RFC 6581): FPDU framing, markers, MULPDU, request/reply frames.
//!
//! MPA sits between DDP and TCP. In Full Operation phase the TCP stream is a
//! sequence of FPDUs ([`fpdu`]), optionally with a 4-octet marker every 512
//! octets of TCP sequence space ([`marker`]); before that each side sends one
//! MPA Request or Reply frame ([`frame`]).
//!
//! | item | where | RFC |
//! |---|---|---|
//! | [`Fpdu`], [`FpduRepr`], [`fpdu_len`], [`fpdu_pad_len`] | [`fpdu`] | RFC 5044 §4.1 |
//! | [`Marker`], [`MarkerInserter`], [`MarkerStripper`] | [`marker`] | RFC 5044 §4.2, §4.3 |
//! | [`emit_fpdu_with_markers`], [`strip_fpdu_with_markers`] (CRC over the wire octets) | [`marker`] | RFC 5044 §4.3, §4.4 |
//! | [`mulpdu`] | here | RFC 5044 §4.5 (FPDU size) |
//! | [`MpaRequestReply`], [`MpaRequestReplyRepr`], [`IrdOrd`] | [`frame`] | RFC 5044 §7.1, RFC 6581 |
//!
//! Facts this module relies on (and that the tests pin down):
//!
//! * The CRC field is always present. When CRC was not negotiated it is sent as
//!   zero and not checked (RFC 5044 §7.1, "C" flag; Linux siw does the same).
//!   The CRC32c value goes on the wire least significant octet first (the
//!   iSCSI convention of RFC 3720 §12.1, confirmed by the siw captures).
//! * The CRC covers the FPDU as it appears in the TCP stream: ULPDU_LENGTH,
//!   ULPDU, pad *and every marker inside the FPDU* (including a marker that
//!   immediately precedes the ULPDU_LENGTH field, whose FPDU pointer is 0)
//!   (RFC 5044 §4.4).
//! * Markers sit at every TCP sequence number `s` with
//!   `(s - SeqStart) mod 512 == 0`, where `SeqStart` is the sequence number of
//!   the first octet of the first FPDU of Full Operation phase (the octet right
//!   after the MPA Request/Reply exchange); the first FPDU therefore starts
//!   with a marker whose pointer is 0 (RFC 5044 §4.3, with the RFC's own
//!   example: a connection started at sequence 11 has markers at 11, 523,
//!   1035, ...). The arithmetic is modulo 2^32, which 512 divides, so it is
//!   unaffected by sequence number wrap.
//!
//! # Example
//!
//! ```
//! use rnic_wire::mpa::*;
//!
//! // An FPDU with CRC, markers off: the wire form is the marker-free form.
//! let ddp = [0x41u8, 0x43, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
//! let repr = FpduRepr { ulpdu: &ddp };
//! let mut buf = [0u8; 64];
//! repr.emit(&mut Fpdu::new_unchecked(&mut buf[..]), true).unwrap();
//! let fpdu = Fpdu::new_checked(&buf[..repr.buffer_len()]).unwrap();
//! assert_eq!(FpduRepr::parse(&fpdu, true).unwrap().ulpdu, &ddp);
//!
//! // The same ULPDU with markers, for a connection whose first FPDU started
//! // at TCP sequence 1000, sent at sequence 1500: the CRC covers the marker.
//! let mut wire = [0u8; 64];
//! let n = emit_fpdu_with_markers(&ddp, true, 1000, 1500, &mut wire).unwrap();
//! assert_eq!(n, 12 + 4 + 12); // 12 octets, the marker at 1512, 12 more
//! assert_eq!(&wire[12..16], &[0, 0, 0, 12]); // FPDUPTR 12
//! let mut plain = [0u8; 64];
//! let (used, len) = strip_fpdu_with_markers(&wire, true, 1000, 1500, &mut plain).unwrap();
//! assert_eq!((used, len), (n, 24));
//! // Same FPDU but for the CRC field, which here covers the marker too.
//! assert_eq!(&plain[..20], &buf[..20]);
//! assert_ne!(&plain[20..24], &buf[20..24]);
//! # let _ = mulpdu(1448, false);
//! ```

pub mod fpdu;
pub mod frame;
pub mod marker;

pub use fpdu::{fpdu_len, fpdu_pad_len, Fpdu, FpduRepr};
pub use frame::{
    IrdOrd, MpaFrameKind, MpaKey, MpaRequestReply, MpaRequestReplyRepr, ReadDepth, Revision,
    RtrTypes, MPA_IRD_ORD_LEN, MPA_REPLY_KEY, MPA_REQUEST_KEY, MPA_REQ_REP_HEADER_LEN,
};
pub use marker::{
    emit_fpdu_with_markers, marked_len, marker_phase, strip_fpdu_with_markers, Marker,
    MarkerInserter, MarkerRepr, MarkerStripper,
};

/// Octets of TCP sequence space from one marker to the next (RFC 5044 §4.3).
pub const MPA_MARKER_INTERVAL: usize = 512;
/// Length of a marker: 16-bit reserved field and 16-bit FPDU pointer (RFC 5044 §4.2).
pub const MPA_MARKER_LEN: usize = 4;
/// Length of the ULPDU_LENGTH field that starts every FPDU (RFC 5044 §4.1).
pub const MPA_ULPDU_LENGTH_LEN: usize = 2;
/// Length of the CRC field that ends every FPDU, present even when CRC was
/// not negotiated (RFC 5044 §4.1).
pub const MPA_CRC_LEN: usize = 4;
/// FPDUs are padded to a multiple of this many octets (RFC 5044 §4.1).
pub const MPA_ALIGNMENT: usize = 4;
/// Maximum private data in an MPA Request or Reply frame (RFC 5044 §7.1).
pub const MPA_PRIVATE_DATA_MAX: usize = 512;
/// Octets of an FPDU that are not ULPDU when the ULPDU needs no pad:
/// ULPDU_LENGTH plus CRC.
pub const MPA_FPDU_OVERHEAD: usize = MPA_ULPDU_LENGTH_LEN + MPA_CRC_LEN;

/// The maximum ULPDU size (MULPDU) for an effective MSS, RFC 5044 §4.5:
///
/// * with markers: `MULPDU = EMSS - (6 + 4 * Ceiling(EMSS / 512) + EMSS mod 4)`
/// * without:      `MULPDU = EMSS - (6 + EMSS mod 4)`
///
/// 6 is the ULPDU_LENGTH field plus the CRC field (always 4 octets, whether or
/// not CRC is checked); `EMSS mod 4` keeps the padded FPDU inside the segment;
/// `4 * Ceiling(EMSS / 512)` is room for the most markers a segment of EMSS
/// octets can hold. An FPDU carrying a MULPDU-sized ULPDU therefore fills at
/// most one TCP segment, wherever it starts relative to the markers.
///
/// EMSS is the MSS less the TCP options carried in every segment: with the
/// 12-octet timestamp option an MSS of 1460 gives EMSS 1448 and, without
/// markers, `mulpdu(1448, false) == 1442` — exactly the ULPDU length Linux
/// siw sends (one 1448-octet FPDU per segment in `siw-ib_write_bw-64k.pcap`).
///
/// Returns 0 if `emss` is too small to carry any ULPDU.
pub const fn mulpdu(emss: u16, markers: bool) -> u16 {
    let emss = emss as u32;
    let marker_room = if markers {
        MPA_MARKER_LEN as u32 * emss.div_ceil(MPA_MARKER_INTERVAL as u32)
    } else {
        0
    };
    let overhead = MPA_FPDU_OVERHEAD as u32 + marker_room + emss % MPA_ALIGNMENT as u32;
    emss.saturating_sub(overhead) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mulpdu_formula_values() {
        // Without markers: EMSS - 6 - EMSS mod 4.
        assert_eq!(mulpdu(1448, false), 1442);
        assert_eq!(mulpdu(1460, false), 1454);
        assert_eq!(mulpdu(1461, false), 1454);
        assert_eq!(mulpdu(1463, false), 1454);
        // With markers: 1460 / 512 rounds up to 3 markers.
        assert_eq!(mulpdu(1460, true), 1460 - 6 - 12);
        assert_eq!(mulpdu(1448, true), 1448 - 6 - 12);
        assert_eq!(mulpdu(512, true), 512 - 6 - 4);
        assert_eq!(mulpdu(513, true), 513 - 6 - 8 - 1);
        assert_eq!(mulpdu(0, true), 0);
        assert_eq!(mulpdu(5, false), 0);
        assert_eq!(mulpdu(u16::MAX, false), 65535 - 6 - 3);
    }

    #[test]
    fn siw_fpdu_fills_its_segment() {
        // ib_write_bw capture: MSS 1448 (1460 less timestamps), ULPDU 1442.
        let m = mulpdu(1448, false) as usize;
        assert_eq!(m, 1442);
        assert_eq!(fpdu_len(m), 1448);
    }
}
