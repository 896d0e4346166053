//! Terminate transmit: the Terminate message the firmware sends for a
//! request of the device ([`TermRequest`]) or of the host (Modify QP →
//! Terminate).
//!
//! The device detects the error, stops the QP and builds the record
//! (cause, connection, QP, the echoed DDP segment length and headers). The
//! firmware sends it, because a Terminate is the last message on the
//! stream (RFC 5040 §5.3, §6.1): it takes the connection back from the
//! fast path at the device's SND.NXT, writes the Terminate FPDU into its
//! TCB (retransmitted like any firmware data), closes the stream and tells
//! the host ([`crate::fw`]).

use crate::hal::TermRequest;
use rnic_wire::abi::context::{ConnContext, MPA_CRC_TX, MPA_MARKERS_TX};
use rnic_wire::ddp::{TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN};
use rnic_wire::mpa::{emit_fpdu_with_markers, Fpdu, FpduRepr};
use rnic_wire::rdmap::{
    Opcode, RdmapRepr, ReadRequestHeader, ReadRequestRepr, READ_REQUEST_HEADER_LEN,
};
use rnic_wire::terminate::{
    EchoedDdpHeader, RdmapError, TerminateCause, TerminateRepr, TerminatedDdp,
};

/// Room for a Terminate FPDU: MPA length (2), untagged DDP header (18),
/// Terminate control (4), echoed segment length (2), DDP header (18) and
/// Read Request header (28), pad, CRC (4), and the markers that can fall
/// in it (RFC 5044 §4.3: one per 512 octets of stream, so at most one).
pub const TERMINATE_FPDU_MAX: usize = 96;

/// RDMAP Local Catastrophic Error code (RFC 5040 §7.2: "any value
/// acceptable"): we send 0xFF, as Linux siw does for a consumer-requested
/// termination, and for a device request whose cause we cannot read.
pub const LOCAL_CATASTROPHIC_CODE: u8 = 0xFF;

/// The cause of every Terminate the firmware starts itself (a host request,
/// a refused send WQE, an unreadable device cause): RDMAP Local
/// Catastrophic with [`LOCAL_CATASTROPHIC_CODE`] (RFC 5040 §7.2).
pub const LOCAL_CATASTROPHIC: TerminateCause =
    TerminateCause::Rdmap(RdmapError::LocalCatastrophic {
        code: LOCAL_CATASTROPHIC_CODE,
    });

/// The MSN of our Terminate: the only message ever sent on QN 2 (RFC 5040
/// §5.1, §5.3), so 1.
pub const TERMINATE_MSN: u32 = 1;

/// DDP control octet: T (tagged) bit (RFC 5041 §4.2).
const DDP_TAGGED: u8 = 0x80;
/// Queue number of RDMA Read Requests (RFC 5040 §5.1).
const QN_READ_REQUEST: u32 = 1;

/// The Terminate header for a device request (RFC 5040 §4.8): the cause;
/// with D (and M: the length is valid) the DDP segment length and the DDP
/// header of the segment when the cause calls for it and the device echoed
/// one; with R the RDMA Read Request header for a Remote Protection Error
/// on a Read Request (RFC 5040 §4.8 Figure 10). An undefined cause
/// becomes RDMAP Local Catastrophic (nothing echoed).
pub fn terminate_repr(t: &TermRequest) -> TerminateRepr {
    let Ok(cause) = TerminateCause::from_bits(t.cause) else {
        return TerminateRepr::new(LOCAL_CATASTROPHIC);
    };
    let mut repr = TerminateRepr::new(cause);
    if !cause.echoes_ddp_header() || t.seg_len == 0 {
        return repr;
    }
    let tagged = t.hdr[0] & DDP_TAGGED != 0;
    let hlen = if tagged {
        TAGGED_HEADER_LEN
    } else {
        UNTAGGED_HEADER_LEN
    };
    let Ok(header) = EchoedDdpHeader::from_bytes(&t.hdr[..hlen]) else {
        return repr;
    };
    repr.ddp = Some(TerminatedDdp {
        segment_length_valid: true,
        segment_length: t.seg_len,
        header,
    });
    if cause.echoes_rdma_header() && !tagged {
        // QN 1 and RDMAP opcode Read Request: the 28 octets after the header
        let is_rreq = header.to_repr().is_ok_and(|d| match d {
            rnic_wire::ddp::DdpRepr::Untagged { qn, rsvd_ulp, .. } => {
                qn == QN_READ_REQUEST
                    && Opcode::from_control(rsvd_ulp).is_ok_and(|o| o == Opcode::ReadRequest)
            }
            _ => false,
        });
        let rr = &t.hdr[hlen..hlen + READ_REQUEST_HEADER_LEN];
        if is_rreq {
            if let Ok(r) =
                ReadRequestHeader::new_checked(rr).and_then(|h| ReadRequestRepr::parse(&h))
            {
                repr.rdma = Some(r);
            }
        }
    }
    repr
}

/// Builds the Terminate FPDU carrying `term` (QN 2, MSN 1, RFC 5040 §5.1)
/// at stream position `seq`, with the connection's transmit CRC and
/// markers (RFC 5044 §4.3, §4.4). Returns its wire length.
pub fn terminate_fpdu(
    ctx: &ConnContext,
    seq: u32,
    term: &TerminateRepr,
    out: &mut [u8],
) -> rnic_wire::Result<usize> {
    let msg = RdmapRepr::Terminate {
        msn: TERMINATE_MSN,
        terminate: *term,
    };
    let mut ulpdu = [0u8; TERMINATE_FPDU_MAX];
    let n = msg.emit(&mut ulpdu)?;
    let crc = ctx.mpa_flags & MPA_CRC_TX != 0;
    if ctx.mpa_flags & MPA_MARKERS_TX != 0 {
        emit_fpdu_with_markers(&ulpdu[..n], crc, ctx.tx_marker_ref, seq, out)
    } else {
        let repr = FpduRepr { ulpdu: &ulpdu[..n] };
        let len = repr.buffer_len();
        let buf = out.get_mut(..len).ok_or(rnic_wire::Error::BufferTooSmall)?;
        repr.emit(&mut Fpdu::new_unchecked(buf), crc)?;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_wire::abi::context::port::TERM_HDR_LEN;
    use rnic_wire::ddp::DdpRepr;
    use rnic_wire::mpa::strip_fpdu_with_markers;
    use rnic_wire::terminate::{
        MpaError, RemoteProtectionError, TaggedBufferError, UntaggedBufferError,
    };

    fn req(cause: TerminateCause, ddp: Option<DdpRepr>, tail: &[u8], seg_len: u16) -> TermRequest {
        let mut hdr = [0u8; TERM_HDR_LEN];
        if let Some(d) = ddp {
            let n = d.header_len();
            d.emit(&mut hdr).unwrap();
            hdr[n..n + tail.len()].copy_from_slice(tail);
        }
        TermRequest {
            cause: cause.to_bits(),
            conn: 3,
            qpn: 9,
            seg_len,
            hdr,
        }
    }

    fn ctx(flags: u8, marker_ref: u32) -> ConnContext {
        let mut c = ConnContext::FREE;
        c.mpa_flags = flags;
        c.tx_marker_ref = marker_ref;
        c
    }

    /// Emits, then parses back with rnic-wire's MPA and RDMAP parsers.
    fn round_trip(term: &TerminateRepr, flags: u8, marker_ref: u32, seq: u32) -> TerminateRepr {
        let mut out = [0u8; TERMINATE_FPDU_MAX];
        let n = terminate_fpdu(&ctx(flags, marker_ref), seq, term, &mut out).unwrap();
        let crc = flags & MPA_CRC_TX != 0;
        let mut plain = [0u8; TERMINATE_FPDU_MAX];
        let (fpdu, check_crc) = if flags & MPA_MARKERS_TX != 0 {
            // markers out, CRC checked over the wire octets (RFC 5044 §4.4)
            let (used, m) =
                strip_fpdu_with_markers(&out[..n], crc, marker_ref, seq, &mut plain).unwrap();
            assert_eq!(used, n);
            (&plain[..m], false)
        } else {
            (&out[..n], crc)
        };
        let f = Fpdu::new_checked(fpdu).unwrap();
        assert_eq!(f.total_len(), fpdu.len(), "one whole FPDU");
        let ulpdu = FpduRepr::parse(&f, check_crc).unwrap().ulpdu;
        match RdmapRepr::from_bytes(ulpdu).unwrap() {
            RdmapRepr::Terminate { msn, terminate } => {
                assert_eq!(msn, TERMINATE_MSN);
                terminate
            }
            o => panic!("not a Terminate: {o:?}"),
        }
    }

    /// Untagged Invalid MSN (no buffer): D and M set, the 18-octet header
    /// and the segment length echoed; nothing else.
    #[test]
    fn untagged_error_echoes_the_ddp_header() {
        let ddp = DdpRepr::Untagged {
            last: true,
            rsvd_ulp: 0x43,
            rsvd_ulp_ext: 0,
            qn: 0,
            msn: 5,
            mo: 0,
        };
        let cause = TerminateCause::from(UntaggedBufferError::InvalidMsnNoBuffer);
        let r = terminate_repr(&req(cause, Some(ddp), &[0xAA; 30], 18 + 256));
        assert_eq!(r.cause, cause);
        let d = r.ddp.unwrap();
        assert!(d.segment_length_valid);
        assert_eq!(d.segment_length, 274);
        assert_eq!(d.header.to_repr().unwrap(), ddp);
        assert!(r.rdma.is_none());
        for flags in [0, MPA_CRC_TX, MPA_CRC_TX | MPA_MARKERS_TX, MPA_MARKERS_TX] {
            assert_eq!(round_trip(&r, flags, 1000, 1000 + 500), r, "flags {flags}");
        }
    }

    /// Tagged Invalid STag: the 14-octet header.
    #[test]
    fn tagged_error_echoes_14_octets() {
        let ddp = DdpRepr::Tagged {
            last: false,
            rsvd_ulp: 0x40,
            stag: 0x1234_5678,
            to: 0x1_0000_0040,
        };
        let cause = TerminateCause::from(TaggedBufferError::InvalidStag);
        let r = terminate_repr(&req(cause, Some(ddp), &[0xAA; 34], 14 + 1440));
        let d = r.ddp.unwrap();
        assert_eq!(d.header.as_bytes().len(), TAGGED_HEADER_LEN);
        assert_eq!(d.header.to_repr().unwrap(), ddp);
        assert_eq!(round_trip(&r, MPA_CRC_TX, 0, 0xFFFF_FFF0), r);
    }

    /// A Remote Protection Error on a Read Request also echoes the Read
    /// Request header (R bit); on a Write it does not.
    #[test]
    fn read_request_protection_error_echoes_the_rdma_header() {
        let rr = ReadRequestRepr {
            sink_stag: 0x0100_0002,
            sink_to: 0x2000,
            size: 4096,
            src_stag: 0x0300_0004,
            src_to: 0x4000,
        };
        let mut rrb = [0u8; READ_REQUEST_HEADER_LEN];
        rr.emit(&mut rrb).unwrap();
        let ddp = DdpRepr::Untagged {
            last: true,
            rsvd_ulp: 0x41,
            rsvd_ulp_ext: 0,
            qn: QN_READ_REQUEST,
            msn: 1,
            mo: 0,
        };
        let cause = TerminateCause::from(RemoteProtectionError::InvalidStag);
        let r = terminate_repr(&req(cause, Some(ddp), &rrb, 18 + 28));
        assert_eq!(r.rdma, Some(rr));
        assert_eq!(round_trip(&r, MPA_CRC_TX, 0, 7), r);
        let w = DdpRepr::Tagged {
            last: true,
            rsvd_ulp: 0x40,
            stag: 1,
            to: 0,
        };
        let r = terminate_repr(&req(cause, Some(w), &rrb, 14 + 8));
        assert!(r.ddp.is_some() && r.rdma.is_none());
    }

    /// LLP (MPA) errors echo nothing; an undefined cause becomes Local
    /// Catastrophic.
    #[test]
    fn llp_and_undefined_causes() {
        let cause = TerminateCause::Mpa(MpaError::CrcError);
        let r = terminate_repr(&req(cause, None, &[], 0));
        assert_eq!(r, TerminateRepr::new(cause));
        let mut t = req(cause, None, &[], 0);
        t.cause = 0xFFFF;
        assert_eq!(
            terminate_repr(&t).cause,
            TerminateCause::Rdmap(RdmapError::LocalCatastrophic {
                code: LOCAL_CATASTROPHIC_CODE
            })
        );
    }
}
