//! The MPA module against real Linux siw captures (`testdata/captures/`): every
//! MPA Request/Reply parses and re-emits to identical octets, every FPDU
//! frames exactly, CRCs match the reference `crc32c` crate, and the ULPDU
//! size siw picks is our MULPDU.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{capture, Flow, Key};
use rnic_wire::mpa::*;

fn flows(path: &PathBuf) -> BTreeMap<Key, Flow> {
    common::flows(&common::tcp_segments(path))
}

struct MpaFlow {
    frame: Vec<u8>,
    fpdus: Vec<Vec<u8>>,
    max_segment: usize,
}

/// Splits each MPA flow into its Request/Reply frame and its FPDUs (as
/// marker-free FPDU octets: markers are off in every capture).
fn mpa_flows(path: &PathBuf) -> Vec<MpaFlow> {
    let mut out = Vec::new();
    for flow in flows(path).values() {
        let stream = flow.stream();
        if !stream.starts_with(b"MPA ID ") {
            continue;
        }
        let frame = MpaRequestReply::new_checked(&stream[..]).expect("MPA frame");
        let mut at = frame.frame_len();
        let frame = stream[..at].to_vec();
        let mut fpdus = Vec::new();
        while at < stream.len() {
            match Fpdu::new_checked(&stream[at..]) {
                Ok(f) => {
                    fpdus.push(stream[at..at + f.total_len()].to_vec());
                    at += f.total_len();
                }
                Err(_) => break, // cut short at the end of the capture
            }
        }
        // Whatever is left must be a cut-off FPDU.
        assert!(stream.len() - at < 70_000);
        out.push(MpaFlow {
            frame,
            fpdus,
            max_segment: flow.max_segment,
        });
    }
    out
}

fn reemit(frame: &[u8]) -> MpaRequestReplyRepr<'_> {
    let view = MpaRequestReply::new_checked(frame).unwrap();
    let repr = MpaRequestReplyRepr::parse(&view).unwrap();
    let mut out = vec![0u8; repr.buffer_len()];
    repr.emit(&mut MpaRequestReply::new_unchecked(&mut out[..]))
        .unwrap();
    assert_eq!(out, frame, "re-emitted MPA frame differs");
    repr
}

/// Checks every FPDU of a flow; returns (FPDUs, FPDUs with non-zero pad).
fn check_fpdus(flow: &MpaFlow, crc: bool) -> (usize, usize) {
    let mut nonzero_pad = 0;
    for f in &flow.fpdus {
        let view = Fpdu::new_checked(&f[..]).unwrap();
        let repr = FpduRepr::parse(&view, crc).unwrap();
        let n = f.len();
        if crc {
            assert_eq!(&f[n - 4..], &crc32c::crc32c(&f[..n - 4]).to_le_bytes());
        } else {
            assert_eq!(&f[n - 4..], &[0, 0, 0, 0], "CRC off: field is zero");
        }
        // Re-emission is identical except for the pad, which we send as zero
        // and siw sometimes does not (the receiver ignores it, RFC 5044 §4.1;
        // with CRC on, the CRC covers the pad as sent).
        let mut out = vec![0u8; n];
        repr.emit(&mut Fpdu::new_unchecked(&mut out[..]), crc)
            .unwrap();
        let pad = 2 + repr.ulpdu.len()..n - 4;
        assert!(out[pad.clone()].iter().all(|&b| b == 0));
        if view.pad().iter().all(|&b| b == 0) {
            assert_eq!(&out, f, "re-emitted FPDU differs");
        } else {
            nonzero_pad += 1;
            let mut expect = f.clone();
            expect[pad].fill(0);
            if crc {
                let c = crc32c::crc32c(&expect[..n - 4]).to_le_bytes();
                expect[n - 4..].copy_from_slice(&c);
            }
            assert_eq!(out, expect, "re-emitted FPDU differs");
        }
    }
    (flow.fpdus.len(), nonzero_pad)
}

#[test]
fn siw_rping_default() {
    let path = capture("siw-rping-default.pcap");
    let flows = mpa_flows(&path);
    assert_eq!(flows.len(), 2);
    let mut kinds = Vec::new();
    for flow in &flows {
        let repr = reemit(&flow.frame);
        assert_eq!(
            &flow.frame[16..24],
            &[0x10, 0x02, 0x00, 0x04, 0x00, 0x01, 0x00, 0x01]
        );
        assert!(!repr.markers && !repr.crc);
        let block = repr.revision.enhanced().expect("rev 2 enhanced");
        assert_eq!((block.ird.get(), block.ord.get()), (1, 1));
        assert!(!block.peer_to_peer);
        assert_eq!(block.rtr, RtrTypes::NONE);
        assert!(repr.private_data.is_empty());
        kinds.push(repr.kind);
        assert!(check_fpdus(flow, false).0 > 10);
    }
    kinds.sort_by_key(|k| matches!(k, MpaFrameKind::Reply { .. }));
    assert_eq!(
        kinds,
        [
            MpaFrameKind::Request,
            MpaFrameKind::Reply { rejected: false }
        ]
    );
}

#[test]
fn siw_rping_crc_p2p() {
    let path = capture("siw-rping-crc-p2p.pcap");
    let flows = mpa_flows(&path);
    assert_eq!(flows.len(), 2);
    for flow in &flows {
        let repr = reemit(&flow.frame);
        assert!(repr.crc && !repr.markers);
        let block = repr.revision.enhanced().expect("rev 2 enhanced");
        assert!(block.peer_to_peer);
        assert_eq!((block.ird.get(), block.ord.get()), (1, 1));
        match repr.kind {
            MpaFrameKind::Request => {
                assert_eq!(&flow.frame[20..24], &[0x80, 0x01, 0xc0, 0x01]);
                assert_eq!(
                    block.rtr,
                    RtrTypes {
                        send: false,
                        write: true,
                        read: true
                    }
                );
                // The initiator's first FPDU is the zero-length RDMA Write
                // RTR: tagged, last, RDMAP opcode Write, STag 1, TO 0.
                let first = &flow.fpdus[0];
                assert_eq!(
                    first,
                    &[
                        0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xeb, 0xd3,
                        0x4c, 0x5f
                    ]
                );
            }
            MpaFrameKind::Reply { rejected } => {
                assert!(!rejected);
                assert_eq!(&flow.frame[20..24], &[0x80, 0x01, 0x80, 0x01]);
                assert_eq!(
                    block.rtr,
                    RtrTypes {
                        send: false,
                        write: true,
                        read: false
                    }
                );
            }
        }
        assert!(check_fpdus(flow, true).0 > 10);
    }
}

#[test]
fn siw_ib_write_bw_ulpdu_is_mulpdu() {
    let path = capture("siw-ib_write_bw-64k.pcap");
    let flows = mpa_flows(&path);
    assert!(!flows.is_empty());
    // MSS 1460 offered, timestamps on: 1448 octets of payload per segment.
    let emss = 1460 - 12;
    let mut big = 0;
    for flow in &flows {
        reemit(&flow.frame);
        let (_, pads) = check_fpdus(flow, false);
        println!("{} FPDUs, {pads} with non-zero pad", flow.fpdus.len());
        assert!(flow.max_segment <= emss);
        let max_ulpdu = flow
            .fpdus
            .iter()
            .map(|f| Fpdu::new_checked(&f[..]).unwrap().ulpdu_len())
            .max()
            .unwrap_or(0);
        assert!(max_ulpdu <= mulpdu(emss as u16, false));
        if max_ulpdu == mulpdu(emss as u16, false) {
            big += flow.fpdus.iter().filter(|f| f.len() == emss).count();
        }
    }
    // The data direction sends full 1442-octet ULPDUs, each FPDU filling a
    // 1448-octet segment.
    assert_eq!(mulpdu(emss as u16, false), 1442);
    assert!(big > 100, "only {big} full-size FPDUs");
}
