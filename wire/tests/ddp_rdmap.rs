//! DDP, RDMAP and Terminate formats: hand-built RFC vectors, the full error
//! code table, validation errors, and property tests (round trips, random
//! and truncated input).

use proptest::prelude::*;
use rnic_wire::ddp::{DdpRepr, DdpSegment, QueueNumber, TaggedSegment, UntaggedSegment};
use rnic_wire::rdmap::{
    AtomicOperation, AtomicRequestRepr, AtomicResponseRepr, Opcode, RdmapRepr, ReadRequestRepr,
};
use rnic_wire::terminate::{
    DdpError, EchoedDdpHeader, Layer, MpaError, RdmapError, RemoteOperationError,
    RemoteProtectionError, TaggedBufferError, TerminateCause, TerminateHeader, TerminateRepr,
    TerminatedDdp, UntaggedBufferError,
};
use rnic_wire::Error;

fn emit(repr: &RdmapRepr) -> Vec<u8> {
    let mut buf = vec![0xa5; repr.buffer_len()];
    assert_eq!(repr.emit(&mut buf), Ok(buf.len()));
    buf
}

// ---------------------------------------------------------------------------
// Hand-built vectors. The expected octets are written out from the figures
// of RFC 5041 §4.1-§4.3, RFC 5040 §4.1, §4.4, §4.8, not from the emitter.
// ---------------------------------------------------------------------------

#[test]
fn rdma_write_by_hand() {
    let payload = [0xde, 0xad, 0xbe, 0xef, 0x01];
    let expected = [
        0xc1, // T=1 L=1 Rsvd=0 DV=01
        0x40, // RV=01 Rsv=00 Opcode=0000 (RDMA Write)
        0x12, 0x34, 0x56, 0x78, // STag
        0x00, 0x00, 0x7f, 0x00, 0x11, 0x22, 0x33, 0x40, // TO
        0xde, 0xad, 0xbe, 0xef, 0x01,
    ];
    let repr = RdmapRepr::RdmaWrite {
        last: true,
        stag: 0x1234_5678,
        to: 0x0000_7f00_1122_3340,
        payload: &payload,
    };
    assert_eq!(emit(&repr), expected);
    assert_eq!(RdmapRepr::from_bytes(&expected), Ok(repr));

    let seg = DdpSegment::new_checked(&expected[..]).unwrap();
    let DdpSegment::Tagged(t) = seg else {
        panic!("not tagged")
    };
    assert!(t.last());
    assert_eq!(t.version(), 1);
    assert_eq!(t.reserved(), 0);
    assert_eq!(t.rsvd_ulp(), 0x40);
    assert_eq!(t.stag(), 0x1234_5678);
    assert_eq!(t.tagged_offset(), 0x0000_7f00_1122_3340);
    assert_eq!(t.payload(), &payload);
}

#[test]
fn rdma_write_middle_segment_by_hand() {
    // L = 0: an intermediate segment of a multi-segment Write.
    let expected = [0x81, 0x40, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0x10, 0x00, 0xaa];
    let repr = RdmapRepr::RdmaWrite {
        last: false,
        stag: 7,
        to: 0x1000,
        payload: &[0xaa],
    };
    assert_eq!(emit(&repr), expected);
    assert_eq!(RdmapRepr::from_bytes(&expected), Ok(repr));
}

#[test]
fn read_request_by_hand() {
    let expected = [
        0x41, // T=0 L=1 DV=01
        0x41, // RV=01 Opcode=0001 (Read Request)
        0x00, 0x00, 0x00, 0x00, // RsvdULP[8:39]: Invalidate STag unused
        0x00, 0x00, 0x00, 0x01, // QN 1
        0x00, 0x00, 0x00, 0x09, // MSN 9
        0x00, 0x00, 0x00, 0x00, // MO 0
        0xaa, 0xbb, 0xcc, 0xdd, // Data Sink STag
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x20, 0x00, // Data Sink TO
        0x00, 0x01, 0x00, 0x00, // RDMA Read Message Size
        0x11, 0x22, 0x33, 0x44, // Data Source STag
        0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, // Data Source TO
    ];
    let request = ReadRequestRepr {
        sink_stag: 0xaabb_ccdd,
        sink_to: 0x1_0000_2000,
        size: 0x1_0000,
        src_stag: 0x1122_3344,
        src_to: 0x8000_0000_0000_0008,
    };
    let repr = RdmapRepr::ReadRequest { msn: 9, request };
    assert_eq!(emit(&repr), expected);
    assert_eq!(RdmapRepr::from_bytes(&expected), Ok(repr));

    let DdpSegment::Untagged(u) = DdpSegment::new_checked(&expected[..]).unwrap() else {
        panic!("not untagged")
    };
    assert_eq!(u.queue_number(), QueueNumber::ReadRequest.value());
    assert_eq!(u.msn(), 9);
    assert_eq!(u.message_offset(), 0);
    assert_eq!(u.payload().len(), 28);
}

#[test]
fn read_response_by_hand() {
    let expected = [
        0xc1, 0x42, // T L DV=1; RV=1 Opcode=0010
        0xaa, 0xbb, 0xcc, 0xdd, // Data Sink STag copied from the request
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x20, 0x00, // Data Sink TO
        b'h', b'i',
    ];
    let repr = RdmapRepr::ReadResponse {
        last: true,
        stag: 0xaabb_ccdd,
        to: 0x1_0000_2000,
        payload: b"hi",
    };
    assert_eq!(emit(&repr), expected);
    assert_eq!(RdmapRepr::from_bytes(&expected), Ok(repr));
}

#[test]
fn send_by_hand() {
    let expected = [
        0x41, 0x43, // untagged, last; RV=1 Opcode=0011 (Send)
        0, 0, 0, 0, // no Invalidate STag
        0, 0, 0, 0, // QN 0
        0, 0, 0, 1, // MSN 1 (the initial MSN, RFC 5041 §4.3)
        0, 0, 0, 0, // MO 0
        b'p', b'i', b'n', b'g',
    ];
    let repr = RdmapRepr::Send {
        solicited: false,
        invalidate_stag: None,
        last: true,
        msn: 1,
        mo: 0,
        payload: b"ping",
    };
    assert_eq!(emit(&repr), expected);
    assert_eq!(RdmapRepr::from_bytes(&expected), Ok(repr));
}

#[test]
fn send_with_se_and_invalidate_by_hand() {
    let expected = [
        0x01, 0x46, // untagged, not last; Opcode=0110
        0xfe, 0xdc, 0xba, 0x98, // Invalidate STag
        0, 0, 0, 0, // QN 0
        0, 0, 0, 3, // MSN
        0, 0, 0x05, 0xb4, // MO 1460
        0x55,
    ];
    let repr = RdmapRepr::Send {
        solicited: true,
        invalidate_stag: Some(0xfedc_ba98),
        last: false,
        msn: 3,
        mo: 1460,
        payload: &[0x55],
    };
    assert_eq!(repr.opcode(), Opcode::SendSeInvalidate);
    assert_eq!(emit(&repr), expected);
    assert_eq!(RdmapRepr::from_bytes(&expected), Ok(repr));
}

#[test]
fn send_ignores_invalidate_field_without_invalidate_opcode() {
    // RFC 5040 §4.1: for Send the Invalidate STag field is ignored on receive.
    let bytes = [0x41, 0x45, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0];
    let repr = RdmapRepr::from_bytes(&bytes).unwrap();
    assert_eq!(
        repr,
        RdmapRepr::Send {
            solicited: true,
            invalidate_stag: None,
            last: true,
            msn: 1,
            mo: 0,
            payload: &[],
        }
    );
    // Re-emitted with the field zeroed.
    assert_eq!(&emit(&repr)[2..6], &[0, 0, 0, 0]);
}

#[test]
fn terminate_with_ddp_header_by_hand() {
    // A Send segment whose MSN had no buffer: DDP layer, Untagged Buffer
    // Error, Invalid MSN - no buffer available (RFC 5041 §7.2: 0x1/0x2/0x02).
    let offending: [u8; 18] = [0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0];
    let mut expected = vec![
        0x41, 0x47, // untagged, last; RV=1 Opcode=0111 (Terminate)
        0, 0, 0, 0, // Invalidate STag unused
        0, 0, 0, 2, // QN 2
        0, 0, 0, 1, // MSN 1
        0, 0, 0, 0,    // MO 0
        0x12, // Layer=0001 (DDP) EType=0010 (Untagged Buffer)
        0x02, // Error Code
        0xc0, // M=1 D=1 R=0, reserved 0
        0x00, 0x00, 0x22, // DDP Segment Length 34
    ];
    expected.extend_from_slice(&offending);
    assert_eq!(expected.len(), 18 + 4 + 2 + 18);

    let terminate = TerminateRepr {
        cause: TerminateCause::Ddp(DdpError::UntaggedBuffer(
            UntaggedBufferError::InvalidMsnNoBuffer,
        )),
        ddp: Some(TerminatedDdp {
            segment_length_valid: true,
            segment_length: 34,
            header: EchoedDdpHeader::from_bytes(&offending).unwrap(),
        }),
        rdma: None,
    };
    let repr = RdmapRepr::Terminate { msn: 1, terminate };
    assert_eq!(emit(&repr), expected);
    assert_eq!(RdmapRepr::from_bytes(&expected), Ok(repr));

    let h = TerminateHeader::new_checked(&expected[18..]).unwrap();
    assert_eq!((h.layer(), h.error_type(), h.error_code()), (1, 2, 2));
    assert!(h.flag_m() && h.flag_d() && !h.flag_r());
    assert_eq!(h.ddp_segment_length(), Some(34));
    assert_eq!(h.terminated_ddp_header(), Some(&offending[..]));
    assert!(h.terminated_rdma_header().is_none());
    assert_eq!(h.header_len(), 24);
    // The echoed header parses as the Send it was.
    assert_eq!(
        terminate.ddp.unwrap().header.to_repr(),
        Ok(DdpRepr::Untagged {
            last: true,
            rsvd_ulp: 0x43,
            rsvd_ulp_ext: 0,
            qn: 0,
            msn: 5,
            mo: 0,
        })
    );
}

#[test]
fn terminate_with_ddp_and_rdma_headers_by_hand() {
    // A Read Request whose Data Source STag was invalid: RDMAP layer, Remote
    // Protection Error, Invalid STag (RFC 5040 §4.8 Figure 9: 0x0/0x1/0x00),
    // echoing the DDP header and the Read Request header (Figure 10).
    let ddp_hdr: [u8; 18] = [0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0];
    let rr: [u8; 28] = [
        0, 0, 0, 0x10, // sink STag
        0, 0, 0, 0, 0, 0, 0, 0x40, // sink TO
        0, 0, 0x10, 0, // size 4096
        0xde, 0xad, 0x00, 0x01, // src STag
        0, 0, 0, 0, 0, 0, 0x10, 0, // src TO
    ];
    let mut hdr = vec![
        0x01, // Layer 0 (RDMAP), EType 1 (Remote Protection)
        0x00, // Invalid STag
        0x60, // M=0 D=1 R=1
        0x00, 0x00, 0x2e, // DDP Segment Length (not valid: M clear)
    ];
    hdr.extend_from_slice(&ddp_hdr);
    hdr.extend_from_slice(&rr);
    assert_eq!(hdr.len(), 4 + 2 + 18 + 28);

    let repr = TerminateRepr {
        cause: RemoteProtectionError::InvalidStag.into(),
        ddp: Some(TerminatedDdp {
            segment_length_valid: false,
            segment_length: 0x2e,
            header: EchoedDdpHeader::from_bytes(&ddp_hdr).unwrap(),
        }),
        rdma: Some(ReadRequestRepr {
            sink_stag: 0x10,
            sink_to: 0x40,
            size: 4096,
            src_stag: 0xdead_0001,
            src_to: 0x1000,
        }),
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf).unwrap();
    assert_eq!(buf, hdr);
    assert_eq!(TerminateRepr::parse_bytes(&hdr), Ok(repr));
    let h = TerminateHeader::new_checked(&hdr[..]).unwrap();
    assert_eq!(h.terminated_rdma_header().unwrap().src_stag(), 0xdead_0001);
    assert_eq!(h.terminated_rdma_header().unwrap().size(), 4096);
}

#[test]
fn terminate_local_catastrophic_by_hand() {
    // RDMAP Local Catastrophic Error: no echoed headers; the error code
    // octet may hold anything and is echoed back unchanged.
    let bytes = [0x00, 0x5a, 0x00, 0x00];
    let repr = TerminateRepr::parse_bytes(&bytes).unwrap();
    assert_eq!(
        repr,
        TerminateRepr::new(TerminateCause::Rdmap(RdmapError::LocalCatastrophic {
            code: 0x5a
        }))
    );
    let mut buf = [0u8; 4];
    repr.emit(&mut buf).unwrap();
    assert_eq!(buf, bytes);
}

#[test]
fn terminate_mpa_crc_by_hand() {
    // LLP layer, MPA error type 0, CRC error (RFC 5044 §8 code 2).
    let bytes = [0x20, 0x02, 0x00, 0x00];
    assert_eq!(
        TerminateRepr::parse_bytes(&bytes).unwrap().cause,
        TerminateCause::Mpa(MpaError::CrcError)
    );
}

#[test]
fn terminate_echoes_malformed_header_verbatim() {
    // "Invalid DDP version": the echoed header has DV = 2 and must survive
    // the round trip octet for octet even though it does not parse.
    let bad: [u8; 14] = [0xc2, 0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    let repr = TerminateRepr {
        cause: TaggedBufferError::InvalidDdpVersion.into(),
        ddp: Some(TerminatedDdp {
            segment_length_valid: true,
            segment_length: 14,
            header: EchoedDdpHeader::from_bytes(&bad).unwrap(),
        }),
        rdma: None,
    };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut buf).unwrap();
    assert_eq!(&buf[..6], &[0x11, 0x04, 0xc0, 0x00, 0x00, 0x0e]);
    assert_eq!(&buf[6..], &bad);
    let back = TerminateRepr::parse_bytes(&buf).unwrap();
    assert_eq!(back, repr);
    assert_eq!(back.ddp.unwrap().header.to_repr(), Err(Error::BadVersion));
}

#[test]
fn terminate_trailing_octets() {
    let t = RdmapRepr::Terminate {
        msn: 1,
        terminate: TerminateRepr::new(RemoteOperationError::UnexpectedOpcode.into()),
    };
    let mut bytes = emit(&t);
    // Zeros after the header (RFC 5040 §7.1: absent fields "set to zero").
    bytes.extend_from_slice(&[0; 8]);
    assert_eq!(RdmapRepr::from_bytes(&bytes), Ok(t));
    // Anything else there is not a Terminate header.
    *bytes.last_mut().unwrap() = 1;
    assert_eq!(RdmapRepr::from_bytes(&bytes), Err(Error::BadLength));
}

#[test]
fn immediate_and_atomics_by_hand() {
    // RFC 7306 §6.2: 8 octets of Immediate Data after the untagged header.
    let imm = [
        0x41, 0x49, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8,
    ];
    let repr = RdmapRepr::ImmediateData {
        solicited: true,
        msn: 4,
        data: [1, 2, 3, 4, 5, 6, 7, 8],
    };
    assert_eq!(emit(&repr), imm);
    assert_eq!(RdmapRepr::from_bytes(&imm), Ok(repr));

    // RFC 7306 §5.2.1 Figure 4, FetchAdd on QN 1.
    let mut fa = vec![0x41, 0x4a, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 0];
    fa.extend_from_slice(&[0, 0, 0, 0x00]); // reserved, AOpCode 0000
    fa.extend_from_slice(&[0, 0, 0, 0x2a]); // Request Identifier
    fa.extend_from_slice(&[0x00, 0x00, 0x01, 0x00]); // Remote STag
    fa.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x10, 0x08]); // Remote TO
    fa.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]); // Add Data
    fa.extend_from_slice(&[0; 8]); // Add Mask
    fa.extend_from_slice(&[0; 8]); // Compare Data: zero on transmit
    fa.extend_from_slice(&[0xff; 8]); // Compare Mask: all ones on transmit
    let repr = RdmapRepr::AtomicRequest {
        msn: 7,
        request: AtomicRequestRepr {
            request_id: 42,
            stag: 0x100,
            to: 0x1008,
            op: AtomicOperation::FetchAdd {
                add_data: 1,
                add_mask: 0,
            },
        },
    };
    assert_eq!(emit(&repr), fa);
    assert_eq!(RdmapRepr::from_bytes(&fa), Ok(repr));

    // RFC 7306 §5.2.2 Figure 6, on QN 3.
    let mut resp = vec![0x41, 0x4b, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 7, 0, 0, 0, 0];
    resp.extend_from_slice(&[0, 0, 0, 0x2a, 1, 2, 3, 4, 5, 6, 7, 8]);
    let repr = RdmapRepr::AtomicResponse {
        msn: 7,
        response: AtomicResponseRepr {
            request_id: 42,
            original_value: 0x0102_0304_0506_0708,
        },
    };
    assert_eq!(emit(&repr), resp);
    assert_eq!(RdmapRepr::from_bytes(&resp), Ok(repr));
}

// ---------------------------------------------------------------------------
// Opcodes (RFC 5040 §4.1 Figure 4, RFC 7306 §4.1 Figure 2).
// ---------------------------------------------------------------------------

#[test]
fn opcode_table() {
    // (value, opcode, tagged, queue, invalidate STag valid)
    let table: [(u8, Opcode, bool, Option<u32>, bool); 12] = [
        (0b0000, Opcode::RdmaWrite, true, None, false),
        (0b0001, Opcode::ReadRequest, false, Some(1), false),
        (0b0010, Opcode::ReadResponse, true, None, false),
        (0b0011, Opcode::Send, false, Some(0), false),
        (0b0100, Opcode::SendInvalidate, false, Some(0), true),
        (0b0101, Opcode::SendSe, false, Some(0), false),
        (0b0110, Opcode::SendSeInvalidate, false, Some(0), true),
        (0b0111, Opcode::Terminate, false, Some(2), false),
        (0b1000, Opcode::ImmediateData, false, Some(0), false),
        (0b1001, Opcode::ImmediateDataSe, false, Some(0), false),
        (0b1010, Opcode::AtomicRequest, false, Some(1), false),
        (0b1011, Opcode::AtomicResponse, false, Some(3), false),
    ];
    for (v, op, tagged, qn, inv) in table {
        assert_eq!(Opcode::from_value(v), Ok(op));
        assert_eq!(op.value(), v);
        assert_eq!(op.is_tagged(), tagged, "{op:?}");
        assert_eq!(op.queue().map(QueueNumber::value), qn, "{op:?}");
        assert_eq!(op.has_invalidate_stag(), inv, "{op:?}");
        // RV = 01b in the two high bits, Rsv = 00b, opcode in the low four.
        assert_eq!(op.control(), 0x40 | v);
        assert_eq!(Opcode::from_control(0x40 | v), Ok(op));
        // Rsv bits are ignored on receive.
        assert_eq!(Opcode::from_control(0x70 | v), Ok(op));
    }
    assert_eq!(Opcode::ALL.len(), 12);
    for v in 0xc..=0xf {
        assert_eq!(Opcode::from_value(v), Err(Error::BadOpcode));
        assert_eq!(Opcode::from_control(0x40 | v), Err(Error::BadOpcode));
    }
    for rv in [0u8, 2, 3] {
        assert_eq!(Opcode::from_control(rv << 6), Err(Error::BadVersion));
    }
    assert!(Opcode::SendSe.solicited_event());
    assert!(Opcode::ImmediateDataSe.solicited_event());
    assert!(!Opcode::Send.solicited_event());
    assert!(Opcode::ReadResponse.carries_ulp_payload());
    assert!(!Opcode::ReadRequest.carries_ulp_payload());
    assert!(!Opcode::ImmediateData.carries_ulp_payload());
}

// ---------------------------------------------------------------------------
// Validation.
// ---------------------------------------------------------------------------

fn untagged(ctrl: u8, rdmap: u8, qn: u32, msn: u32, mo: u32, body: &[u8]) -> Vec<u8> {
    let mut v = vec![ctrl, rdmap, 0, 0, 0, 0];
    v.extend_from_slice(&qn.to_be_bytes());
    v.extend_from_slice(&msn.to_be_bytes());
    v.extend_from_slice(&mo.to_be_bytes());
    v.extend_from_slice(body);
    v
}

#[test]
fn validation_errors() {
    let rr = [0u8; 28];
    // DDP version 0, 2, 3.
    for dv in [0u8, 2, 3] {
        let b = untagged(0x40 | dv, 0x43, 0, 1, 0, &[]);
        assert_eq!(RdmapRepr::from_bytes(&b), Err(Error::BadVersion));
        assert_eq!(DdpRepr::parse_bytes(&b), Err(Error::BadVersion));
    }
    // DDP reserved bits are ignored on receive.
    let b = untagged(0x41 | 0x3c, 0x43, 0, 1, 0, b"x");
    assert!(matches!(
        RdmapRepr::from_bytes(&b),
        Ok(RdmapRepr::Send { .. })
    ));
    // RDMAP version 0 (RDMA Consortium).
    let b = untagged(0x41, 0x03, 0, 1, 0, &[]);
    assert_eq!(RdmapRepr::from_bytes(&b), Err(Error::BadVersion));
    // Reserved opcodes.
    for op in 0xc..=0xf {
        let b = untagged(0x41, 0x40 | op, 0, 1, 0, &[]);
        assert_eq!(RdmapRepr::from_bytes(&b), Err(Error::BadOpcode));
    }
    // Untagged opcodes in a tagged segment and the reverse.
    let tagged_send = [0xc1, 0x43, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(RdmapRepr::from_bytes(&tagged_send), Err(Error::BadOpcode));
    let untagged_write = untagged(0x41, 0x40, 0, 1, 0, b"x");
    assert_eq!(
        RdmapRepr::from_bytes(&untagged_write),
        Err(Error::BadOpcode)
    );
    // Wrong queue for the opcode.
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x43, 1, 1, 0, &[])),
        Err(Error::BadField)
    );
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x41, 0, 1, 0, &rr)),
        Err(Error::BadField)
    );
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x47, 3, 1, 0, &[0; 4])),
        Err(Error::BadField)
    );
    // A Read Request split over segments.
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x01, 0x41, 1, 1, 0, &rr)),
        Err(Error::BadField)
    );
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x41, 1, 1, 28, &rr)),
        Err(Error::BadField)
    );
    // Read Request header too short, too long.
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x41, 1, 1, 0, &rr[..27])),
        Err(Error::Truncated)
    );
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x41, 1, 1, 0, &[0; 29])),
        Err(Error::BadLength)
    );
    // Immediate Data must be exactly 8 octets (RFC 7306 §6.3).
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x48, 0, 1, 0, &[0; 9])),
        Err(Error::BadLength)
    );
    // Reserved AOpCode 0001b.
    let mut atomic = [0u8; 52];
    atomic[3] = 1;
    assert_eq!(
        RdmapRepr::from_bytes(&untagged(0x41, 0x4a, 1, 1, 0, &atomic)),
        Err(Error::BadOpcode)
    );
    // Terminate: M without D; undefined triple; bits 4-7 of octet 0 = layer 3.
    assert_eq!(
        TerminateRepr::parse_bytes(&[0x12, 0x02, 0x80, 0]),
        Err(Error::BadField)
    );
    assert_eq!(
        TerminateRepr::parse_bytes(&[0x12, 0x07, 0x00, 0]),
        Err(Error::BadOpcode)
    );
    assert_eq!(
        TerminateRepr::parse_bytes(&[0x30, 0x00, 0x00, 0]),
        Err(Error::BadOpcode)
    );
    // Terminate reserved bits are ignored on receive.
    assert_eq!(
        TerminateRepr::parse_bytes(&[0x20, 0x01, 0x1f, 0xff]),
        Ok(TerminateRepr::new(MpaError::ConnectionLost.into()))
    );
    // D set but the echoed header is cut short.
    assert_eq!(
        TerminateRepr::parse_bytes(&[0x12, 0x02, 0x40, 0, 0, 18, 0x41]),
        Err(Error::Truncated)
    );
    // The typed views refuse the other buffer model.
    assert_eq!(
        TaggedSegment::new_checked(&untagged_write[..]).err(),
        Some(Error::BadField)
    );
    let long_tagged = [&tagged_send[..], &[0; 4]].concat();
    assert_eq!(
        UntaggedSegment::new_checked(&long_tagged[..]).err(),
        Some(Error::BadField)
    );
    assert_eq!(
        DdpSegment::new_checked(&[][..]).err(),
        Some(Error::Truncated)
    );
    assert_eq!(
        DdpSegment::new_checked(&tagged_send[..13]).err(),
        Some(Error::Truncated)
    );
    assert_eq!(
        DdpSegment::new_checked(&untagged_write[..17]).err(),
        Some(Error::Truncated)
    );
    // Echoed headers must be exactly one header long.
    assert_eq!(
        EchoedDdpHeader::from_bytes(&tagged_send[..13]),
        Err(Error::Truncated)
    );
    assert_eq!(
        EchoedDdpHeader::from_bytes(&untagged_write),
        Err(Error::BadLength)
    );
    assert_eq!(QueueNumber::from_u32(4), Err(Error::BadField));
}

#[test]
fn emit_into_small_buffer_fails() {
    let repr = RdmapRepr::ReadRequest {
        msn: 1,
        request: ReadRequestRepr::default(),
    };
    let mut buf = [0u8; 45];
    assert_eq!(repr.emit(&mut buf), Err(Error::BufferTooSmall));
    let ddp = repr.ddp_repr();
    assert_eq!(ddp.emit(&mut buf[..17]), Err(Error::BufferTooSmall));
    let t = TerminateRepr::new(MpaError::CrcError.into());
    assert_eq!(t.emit(&mut buf[..3]), Err(Error::BufferTooSmall));
}

// ---------------------------------------------------------------------------
// Terminate error codes: every triple RFC 5040 §4.8 Figure 9, RFC 5041
// §7.2, RFC 5044 §8 (as registered by RFC 6580 §3.1-§3.3) define.
// ---------------------------------------------------------------------------

#[test]
fn terminate_code_table() {
    use TerminateCause as C;
    let listed: Vec<(u8, u8, u8, TerminateCause)> = vec![
        // RDMAP, Remote Protection Error.
        (0x0, 0x1, 0x00, RemoteProtectionError::InvalidStag.into()),
        (
            0x0,
            0x1,
            0x01,
            RemoteProtectionError::BaseOrBoundsViolation.into(),
        ),
        (
            0x0,
            0x1,
            0x02,
            RemoteProtectionError::AccessRightsViolation.into(),
        ),
        (
            0x0,
            0x1,
            0x03,
            RemoteProtectionError::StagNotAssociated.into(),
        ),
        (0x0, 0x1, 0x04, RemoteProtectionError::ToWrap.into()),
        (
            0x0,
            0x1,
            0x09,
            RemoteProtectionError::StagCannotBeInvalidated.into(),
        ),
        (0x0, 0x1, 0xff, RemoteProtectionError::Unspecified.into()),
        // RDMAP, Remote Operation Error.
        (
            0x0,
            0x2,
            0x05,
            RemoteOperationError::InvalidRdmapVersion.into(),
        ),
        (
            0x0,
            0x2,
            0x06,
            RemoteOperationError::UnexpectedOpcode.into(),
        ),
        (
            0x0,
            0x2,
            0x07,
            RemoteOperationError::CatastrophicLocal.into(),
        ),
        (
            0x0,
            0x2,
            0x08,
            RemoteOperationError::CatastrophicGlobal.into(),
        ),
        (
            0x0,
            0x2,
            0x09,
            RemoteOperationError::StagCannotBeInvalidated.into(),
        ),
        (0x0, 0x2, 0xff, RemoteOperationError::Unspecified.into()),
        // DDP.
        (0x1, 0x0, 0x00, C::Ddp(DdpError::LocalCatastrophic)),
        (0x1, 0x1, 0x00, TaggedBufferError::InvalidStag.into()),
        (
            0x1,
            0x1,
            0x01,
            TaggedBufferError::BaseOrBoundsViolation.into(),
        ),
        (0x1, 0x1, 0x02, TaggedBufferError::StagNotAssociated.into()),
        (0x1, 0x1, 0x03, TaggedBufferError::ToWrap.into()),
        (0x1, 0x1, 0x04, TaggedBufferError::InvalidDdpVersion.into()),
        (0x1, 0x2, 0x01, UntaggedBufferError::InvalidQn.into()),
        (
            0x1,
            0x2,
            0x02,
            UntaggedBufferError::InvalidMsnNoBuffer.into(),
        ),
        (0x1, 0x2, 0x03, UntaggedBufferError::InvalidMsnRange.into()),
        (0x1, 0x2, 0x04, UntaggedBufferError::InvalidMo.into()),
        (0x1, 0x2, 0x05, UntaggedBufferError::MessageTooLong.into()),
        (
            0x1,
            0x2,
            0x06,
            UntaggedBufferError::InvalidDdpVersion.into(),
        ),
        // LLP (MPA).
        (0x2, 0x0, 0x01, MpaError::ConnectionLost.into()),
        (0x2, 0x0, 0x02, MpaError::CrcError.into()),
        (0x2, 0x0, 0x03, MpaError::MarkerMismatch.into()),
        (0x2, 0x0, 0x04, MpaError::InvalidRequestReply.into()),
        // RFC 6581 §9: the enhanced connection setup's MPA errors.
        (0x2, 0x0, 0x05, MpaError::LocalCatastrophic.into()),
        (0x2, 0x0, 0x06, MpaError::InsufficientIrd.into()),
        (0x2, 0x0, 0x07, MpaError::NoMatchingRtr.into()),
    ];
    for &(l, t, c, cause) in &listed {
        assert_eq!(
            TerminateCause::from_raw(l, t, c),
            Ok(cause),
            "{l}/{t}/{c:#x}"
        );
        assert_eq!(cause.to_raw(), (l, t, c));
        assert_eq!(
            cause.to_bits(),
            u16::from(l) << 12 | u16::from(t) << 8 | u16::from(c)
        );
        assert_eq!(TerminateCause::from_bits(cause.to_bits()), Ok(cause));
        assert_eq!(cause.layer().value(), l);
    }
    // Error types with any code: RDMAP Local Catastrophic (0x0/0x0/ALL) and
    // DDP's type reserved for the LLP (0x1/0x3/ALL).
    for c in 0..=255u8 {
        assert_eq!(
            TerminateCause::from_raw(0, 0, c),
            Ok(C::Rdmap(RdmapError::LocalCatastrophic { code: c }))
        );
        assert_eq!(
            TerminateCause::from_raw(1, 3, c),
            Ok(C::Ddp(DdpError::Llp { code: c }))
        );
    }
    // Everything else is undefined; every defined triple round-trips.
    let mut defined = 0;
    for l in 0..16u8 {
        for t in 0..16u8 {
            for c in 0..=255u8 {
                match TerminateCause::from_raw(l, t, c) {
                    Ok(cause) => {
                        defined += 1;
                        assert_eq!(cause.to_raw(), (l, t, c));
                    }
                    Err(e) => assert_eq!(e, Error::BadOpcode),
                }
            }
        }
    }
    assert_eq!(defined, listed.len() + 2 * 256);
    assert_eq!(TerminateCause::from_raw(16, 0, 0), Err(Error::BadField));
    assert_eq!(TerminateCause::from_raw(0, 16, 0), Err(Error::BadField));
    assert_eq!(Layer::from_value(2), Ok(Layer::Llp));
    // Figure 10.
    assert!(!TerminateCause::from(MpaError::CrcError).echoes_ddp_header());
    assert!(TerminateCause::from(TaggedBufferError::ToWrap).echoes_ddp_header());
    assert!(TerminateCause::from(RemoteProtectionError::ToWrap).echoes_rdma_header());
    assert!(!TerminateCause::from(RemoteOperationError::Unspecified).echoes_rdma_header());
}

// ---------------------------------------------------------------------------
// Property tests.
// ---------------------------------------------------------------------------

fn ddp_repr() -> impl Strategy<Value = DdpRepr> {
    prop_oneof![
        (any::<bool>(), any::<u8>(), any::<u32>(), any::<u64>()).prop_map(
            |(last, rsvd_ulp, stag, to)| DdpRepr::Tagged {
                last,
                rsvd_ulp,
                stag,
                to
            }
        ),
        (
            any::<bool>(),
            any::<u8>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>()
        )
            .prop_map(|(last, rsvd_ulp, rsvd_ulp_ext, qn, msn, mo)| {
                DdpRepr::Untagged {
                    last,
                    rsvd_ulp,
                    rsvd_ulp_ext,
                    qn,
                    msn,
                    mo,
                }
            }),
    ]
}

fn read_request() -> impl Strategy<Value = ReadRequestRepr> {
    (
        any::<u32>(),
        any::<u64>(),
        any::<u32>(),
        any::<u32>(),
        any::<u64>(),
    )
        .prop_map(
            |(sink_stag, sink_to, size, src_stag, src_to)| ReadRequestRepr {
                sink_stag,
                sink_to,
                size,
                src_stag,
                src_to,
            },
        )
}

fn atomic_request() -> impl Strategy<Value = AtomicRequestRepr> {
    let op = prop_oneof![
        (any::<u64>(), any::<u64>())
            .prop_map(|(add_data, add_mask)| AtomicOperation::FetchAdd { add_data, add_mask }),
        (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()).prop_map(
            |(swap_data, swap_mask, compare_data, compare_mask)| AtomicOperation::CmpSwap {
                swap_data,
                swap_mask,
                compare_data,
                compare_mask
            }
        ),
    ];
    (any::<u32>(), any::<u32>(), any::<u64>(), op).prop_map(|(request_id, stag, to, op)| {
        AtomicRequestRepr {
            request_id,
            stag,
            to,
            op,
        }
    })
}

fn cause() -> impl Strategy<Value = TerminateCause> {
    use prop::sample::select;
    prop_oneof![
        any::<u8>().prop_map(|code| TerminateCause::Rdmap(RdmapError::LocalCatastrophic { code })),
        select(RemoteProtectionError::ALL).prop_map(TerminateCause::from),
        select(RemoteOperationError::ALL).prop_map(TerminateCause::from),
        Just(TerminateCause::Ddp(DdpError::LocalCatastrophic)),
        select(TaggedBufferError::ALL).prop_map(TerminateCause::from),
        select(UntaggedBufferError::ALL).prop_map(TerminateCause::from),
        any::<u8>().prop_map(|code| TerminateCause::Ddp(DdpError::Llp { code })),
        select(MpaError::ALL).prop_map(TerminateCause::from),
    ]
}

fn echoed_header() -> impl Strategy<Value = EchoedDdpHeader> {
    prop_oneof![
        // A well-formed header.
        ddp_repr().prop_map(|r| EchoedDdpHeader::from_repr(&r)),
        // Anything at all, as long as its length matches its T bit.
        prop::collection::vec(any::<u8>(), 18).prop_map(|b| {
            let len = if b[0] & 0x80 != 0 { 14 } else { 18 };
            EchoedDdpHeader::from_bytes(&b[..len]).unwrap()
        }),
    ]
}

fn terminate() -> impl Strategy<Value = TerminateRepr> {
    let ddp = (any::<bool>(), any::<u16>(), echoed_header()).prop_map(
        |(segment_length_valid, segment_length, header)| TerminatedDdp {
            segment_length_valid,
            segment_length,
            header,
        },
    );
    (
        cause(),
        prop::option::of(ddp),
        prop::option::of(read_request()),
    )
        .prop_map(|(cause, ddp, rdma)| TerminateRepr { cause, ddp, rdma })
}

/// An [`RdmapRepr`] with owned payload.
#[derive(Debug, Clone)]
enum Spec {
    Write(bool, u32, u64, Vec<u8>),
    ReadResponse(bool, u32, u64, Vec<u8>),
    Send(bool, Option<u32>, bool, u32, u32, Vec<u8>),
    ReadRequest(u32, ReadRequestRepr),
    Terminate(u32, TerminateRepr),
    Immediate(bool, u32, [u8; 8]),
    AtomicRequest(u32, AtomicRequestRepr),
    AtomicResponse(u32, AtomicResponseRepr),
}

impl Spec {
    fn repr(&self) -> RdmapRepr<'_> {
        match self {
            Spec::Write(last, stag, to, p) => RdmapRepr::RdmaWrite {
                last: *last,
                stag: *stag,
                to: *to,
                payload: p,
            },
            Spec::ReadResponse(last, stag, to, p) => RdmapRepr::ReadResponse {
                last: *last,
                stag: *stag,
                to: *to,
                payload: p,
            },
            Spec::Send(solicited, inv, last, msn, mo, p) => RdmapRepr::Send {
                solicited: *solicited,
                invalidate_stag: *inv,
                last: *last,
                msn: *msn,
                mo: *mo,
                payload: p,
            },
            Spec::ReadRequest(msn, request) => RdmapRepr::ReadRequest {
                msn: *msn,
                request: *request,
            },
            Spec::Terminate(msn, terminate) => RdmapRepr::Terminate {
                msn: *msn,
                terminate: *terminate,
            },
            Spec::Immediate(solicited, msn, data) => RdmapRepr::ImmediateData {
                solicited: *solicited,
                msn: *msn,
                data: *data,
            },
            Spec::AtomicRequest(msn, request) => RdmapRepr::AtomicRequest {
                msn: *msn,
                request: *request,
            },
            Spec::AtomicResponse(msn, response) => RdmapRepr::AtomicResponse {
                msn: *msn,
                response: *response,
            },
        }
    }
}

fn spec() -> impl Strategy<Value = Spec> {
    let payload = || prop::collection::vec(any::<u8>(), 0..64);
    prop_oneof![
        (any::<bool>(), any::<u32>(), any::<u64>(), payload())
            .prop_map(|(l, s, t, p)| Spec::Write(l, s, t, p)),
        (any::<bool>(), any::<u32>(), any::<u64>(), payload())
            .prop_map(|(l, s, t, p)| Spec::ReadResponse(l, s, t, p)),
        (
            any::<bool>(),
            prop::option::of(any::<u32>()),
            any::<bool>(),
            any::<u32>(),
            any::<u32>(),
            payload()
        )
            .prop_map(|(se, inv, l, msn, mo, p)| Spec::Send(se, inv, l, msn, mo, p)),
        (any::<u32>(), read_request()).prop_map(|(m, r)| Spec::ReadRequest(m, r)),
        (any::<u32>(), terminate()).prop_map(|(m, t)| Spec::Terminate(m, t)),
        (any::<bool>(), any::<u32>(), any::<[u8; 8]>())
            .prop_map(|(se, m, d)| Spec::Immediate(se, m, d)),
        (any::<u32>(), atomic_request()).prop_map(|(m, r)| Spec::AtomicRequest(m, r)),
        (any::<u32>(), any::<u32>(), any::<u64>()).prop_map(|(m, request_id, original_value)| {
            Spec::AtomicResponse(
                m,
                AtomicResponseRepr {
                    request_id,
                    original_value,
                },
            )
        }),
    ]
}

/// Parses `bytes` every way this crate can, checking only that nothing
/// panics and that whatever parses re-emits to something that parses the
/// same.
fn parse_everything(bytes: &[u8]) {
    if let Ok(seg) = DdpSegment::new_checked(bytes) {
        let _ = (seg.last(), seg.version(), seg.reserved(), seg.rsvd_ulp());
        let _ = seg.payload();
        match &seg {
            DdpSegment::Tagged(t) => {
                let _ = (t.stag(), t.tagged_offset());
            }
            DdpSegment::Untagged(u) => {
                let _ = (
                    u.rsvd_ulp_ext(),
                    u.queue_number(),
                    u.msn(),
                    u.message_offset(),
                );
            }
        }
        if let Ok(ddp) = DdpRepr::parse(&seg) {
            let mut buf = [0u8; 18];
            ddp.emit(&mut buf).unwrap();
            assert_eq!(DdpRepr::parse_bytes(&buf), Ok(ddp));
        }
    }
    if let Ok(repr) = RdmapRepr::from_bytes(bytes) {
        let out = emit(&repr);
        assert_eq!(RdmapRepr::from_bytes(&out), Ok(repr));
    }
    if let Ok(h) = TerminateHeader::new_checked(bytes) {
        let _ = (h.layer(), h.error_type(), h.error_code(), h.reserved());
        let _ = (h.ddp_segment_length(), h.terminated_ddp_header());
        if let Some(r) = h.terminated_rdma_header() {
            let _ = (
                r.sink_stag(),
                r.sink_to(),
                r.size(),
                r.src_stag(),
                r.src_to(),
            );
        }
        assert!(h.header_len() <= bytes.len());
        if let Ok(t) = TerminateRepr::parse(&h) {
            let mut buf = vec![0u8; t.buffer_len()];
            t.emit(&mut buf).unwrap();
            assert_eq!(TerminateRepr::parse_bytes(&buf), Ok(t));
        }
    }
    let _ = EchoedDdpHeader::from_bytes(bytes).map(|h| h.to_repr());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn ddp_round_trip(repr in ddp_repr(), payload in prop::collection::vec(any::<u8>(), 0..32)) {
        let mut buf = vec![0xff; repr.buffer_len() + payload.len()];
        repr.emit(&mut buf).unwrap();
        buf[repr.header_len()..].copy_from_slice(&payload);
        let seg = DdpSegment::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(seg.is_tagged(), repr.is_tagged());
        prop_assert_eq!(seg.reserved(), 0);
        prop_assert_eq!(seg.version(), 1);
        prop_assert_eq!(seg.payload(), &payload[..]);
        let back = DdpRepr::parse(&seg).unwrap();
        prop_assert_eq!(back, repr);
        let mut again = vec![0u8; buf.len()];
        back.emit(&mut again).unwrap();
        again[repr.header_len()..].copy_from_slice(&payload);
        prop_assert_eq!(again, buf);
    }

    #[test]
    fn read_request_round_trip(repr in read_request()) {
        let mut buf = [0u8; 28];
        repr.emit(&mut buf).unwrap();
        let back = ReadRequestRepr::parse(
            &rnic_wire::rdmap::ReadRequestHeader::new_checked(&buf[..]).unwrap(),
        ).unwrap();
        prop_assert_eq!(back, repr);
        let mut again = [0u8; 28];
        back.emit(&mut again).unwrap();
        prop_assert_eq!(again, buf);
    }

    #[test]
    fn terminate_round_trip(repr in terminate()) {
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut buf).unwrap();
        let h = TerminateHeader::new_checked(&buf[..]).unwrap();
        prop_assert_eq!(h.header_len(), buf.len());
        prop_assert_eq!(h.flag_d(), repr.ddp.is_some());
        prop_assert_eq!(h.flag_r(), repr.rdma.is_some());
        let back = TerminateRepr::parse(&h).unwrap();
        prop_assert_eq!(back, repr);
        let mut again = vec![0u8; back.buffer_len()];
        back.emit(&mut again).unwrap();
        prop_assert_eq!(again, buf);
    }

    #[test]
    fn cause_raw_round_trip(c in cause()) {
        let (l, t, code) = c.to_raw();
        prop_assert_eq!(TerminateCause::from_raw(l, t, code), Ok(c));
    }

    #[test]
    fn rdmap_round_trip(spec in spec()) {
        let repr = spec.repr();
        let buf = emit(&repr);
        prop_assert_eq!(buf.len(), repr.buffer_len());
        // Control octets as RFC 5040 §4.1 lays them out.
        let op = repr.opcode();
        prop_assert_eq!(buf[0] & 0x80 != 0, op.is_tagged());
        prop_assert_eq!(buf[0] & 0x03, 1);
        prop_assert_eq!(buf[1], 0x40 | op.value());
        if let Some(q) = op.queue() {
            prop_assert_eq!(&buf[6..10], &q.value().to_be_bytes());
        }
        let back = RdmapRepr::from_bytes(&buf).unwrap();
        prop_assert_eq!(back, repr);
        prop_assert_eq!(back.ddp_repr(), DdpRepr::parse_bytes(&buf).unwrap());
        prop_assert_eq!(emit(&back), buf);
    }

    #[test]
    fn rdmap_truncated(spec in spec()) {
        let repr = spec.repr();
        let buf = emit(&repr);
        let header = repr.ddp_repr().header_len();
        for cut in 0..buf.len() {
            let r = RdmapRepr::from_bytes(&buf[..cut]);
            if cut < header || !repr.opcode().carries_ulp_payload() {
                prop_assert_eq!(r, Err(Error::Truncated), "cut at {}", cut);
            } else {
                // Payload-carrying segments are still valid, just shorter.
                prop_assert_eq!(r.unwrap().payload(), &repr.payload()[..cut - header]);
            }
        }
    }

    #[test]
    fn rdmap_extended(spec in spec(), extra in 1u8..=255) {
        let repr = spec.repr();
        let mut buf = emit(&repr);
        buf.push(extra);
        let r = RdmapRepr::from_bytes(&buf);
        if repr.opcode().carries_ulp_payload() {
            prop_assert_eq!(r.unwrap().payload().last(), Some(&extra));
        } else {
            prop_assert_eq!(r, Err(Error::BadLength));
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..96)) {
        parse_everything(&bytes);
    }

    #[test]
    fn plausible_bytes_never_panic(
        ctrl in prop::sample::select(vec![0x41u8, 0x01, 0xc1, 0x81, 0x40, 0xc3]),
        rdmap in 0x40u8..0x50,
        qn in 0u32..5,
        hdrct in any::<u8>(),
        tail in prop::collection::vec(any::<u8>(), 0..80),
    ) {
        // Valid-looking DDP/RDMAP control octets in front of random bodies,
        // so the deeper parsers (Terminate, Read Request, Atomics) are hit.
        let mut b = untagged(ctrl, rdmap, qn, 1, 0, &[]);
        let mut body = tail.clone();
        if body.len() > 2 {
            body[2] = hdrct & 0xe0;
        }
        b.extend_from_slice(&body);
        parse_everything(&b);
        parse_everything(&body);
    }

    #[test]
    fn mutated_messages_never_panic(spec in spec(), at in any::<prop::sample::Index>(), v in any::<u8>()) {
        let mut buf = emit(&spec.repr());
        let i = at.index(buf.len());
        buf[i] = v;
        parse_everything(&buf);
    }
}
