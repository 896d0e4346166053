//! The reference model against the Linux siw captures (`testdata/captures/`):
//! every TCP payload after the MPA exchange, per direction, goes through the
//! model's [`Receiver`] (with the CRC setting the MPA exchange negotiated)
//! in the captured segments, and must decode and place every FPDU without a
//! Terminate; then each FPDU is re-emitted by the model (RDMAP repr → DDP
//! segment → [`frame_ulpdu`]) and compared to the captured octets — exactly,
//! except that siw sometimes sends non-zero pad octets, which we send as
//! zero (RFC 5044 §4.1: pad is not checked). Those are compared without the
//! pad (and, with CRC on, without the CRC that covers it) and counted.
//!
//! The receiver needs a TPT and receive buffers; they are set up from a
//! first pass over the captured FPDUs: a region per STag written covering
//! every TO used, one posted buffer per Send, every Read Request of the
//! other direction expected (ORD), IRD slots freed as requests arrive.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{capture, Flow, Key};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use rnic_wire::model::*;
use rnic_wire::mpa::{fpdu_len, MpaRequestReply, MpaRequestReplyRepr};
use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};

const PD: u32 = 1;

/// Flows of a capture; also counts its TCP frames and those the model's
/// `parse_frame` (checksums verified) accepts.
fn flows(path: &PathBuf) -> (BTreeMap<Key, Flow>, usize, usize) {
    let segs = common::tcp_segments(path);
    let mut model_ok = 0;
    for s in &segs {
        if let Ok(v) = parse_frame(&s.frame.data) {
            assert_eq!(v.payload, &s.payload[..]);
            model_ok += 1;
        }
    }
    (common::flows(&segs), segs.len(), model_ok)
}

/// A direction after its MPA frame.
struct Direction {
    key: Key,
    mpa_markers: bool,
    mpa_crc: bool,
    seq_start: u32,
    chunks: Vec<(u32, Vec<u8>)>,
}

/// Marker-free FPDUs of a stream (markers are off in every capture):
/// (sequence number, FPDU octets).
fn fpdus(d: &Direction) -> Vec<(u32, Vec<u8>)> {
    let stream: Vec<u8> = d.chunks.iter().flat_map(|(_, c)| c.clone()).collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at + 2 <= stream.len() {
        let n = fpdu_len(u16::from_be_bytes([stream[at], stream[at + 1]]) as usize);
        if at + n > stream.len() {
            break; // cut off at the end of the capture
        }
        out.push((
            d.seq_start.wrapping_add(at as u32),
            stream[at..at + n].to_vec(),
        ));
        at += n;
    }
    out
}

/// Checks a capture; returns (FPDUs decoded, FPDUs re-emitted with a
/// non-zero captured pad).
fn check(name: &str) -> (usize, usize) {
    let path = capture(name);
    let (flows, tcp_frames, model_ok) = flows(&path);
    println!("{name}: {model_ok} of {tcp_frames} TCP frames pass parse_frame's checksums");
    let mut dirs = Vec::new();
    for (key, flow) in &flows {
        let mut chunks = flow.chunks();
        let stream: Vec<u8> = chunks.iter().flat_map(|(_, c)| c.clone()).collect();
        if !stream.starts_with(b"MPA ID ") {
            continue;
        }
        let view = MpaRequestReply::new_checked(&stream[..]).unwrap();
        let repr = MpaRequestReplyRepr::parse(&view).unwrap();
        let frame_len = view.frame_len() as u32;
        // Drop the MPA frame from the chunks.
        chunks = chunks
            .into_iter()
            .filter_map(|(off, c)| {
                let end = off + c.len() as u32;
                (end > frame_len).then(|| {
                    let skip = frame_len.saturating_sub(off) as usize;
                    (off.max(frame_len), c[skip..].to_vec())
                })
            })
            .collect();
        let base = flow.base().unwrap();
        dirs.push(Direction {
            key: *key,
            mpa_markers: repr.markers,
            mpa_crc: repr.crc,
            seq_start: base.wrapping_add(frame_len),
            chunks: chunks
                .into_iter()
                .map(|(off, c)| (base.wrapping_add(off), c))
                .collect(),
        });
    }
    assert!(!dirs.is_empty());
    let (mut decoded, mut pad_exceptions) = (0, 0);
    for d in &dirs {
        let reverse = (d.key.2, d.key.3, d.key.0, d.key.1);
        let peer = dirs
            .iter()
            .find(|p| p.key == reverse)
            .expect("both MPA frames");
        // RFC 5044 §7.1: CRC if either side asked; markers towards a peer
        // that asked for them (M: "I want to receive markers").
        let mpa = MpaSettings {
            crc: d.mpa_crc || peer.mpa_crc,
            markers: peer.mpa_markers,
            seq_start: d.seq_start,
        };
        assert!(!mpa.markers, "captures have markers off");
        let ours = fpdus(d);
        let theirs = fpdus(peer);

        // First pass: TPT, receive buffers, expected Read Responses.
        let mut spans: BTreeMap<u32, (u64, u64, u8)> = BTreeMap::new();
        let mut sends = 0;
        let mut reads = 0;
        for (_, f) in &ours {
            let ulpdu = &f[2..2 + ulen(f)];
            match RdmapRepr::from_bytes(ulpdu).expect("FPDU parses") {
                RdmapRepr::RdmaWrite {
                    stag, to, payload, ..
                }
                | RdmapRepr::ReadResponse {
                    stag, to, payload, ..
                } => {
                    let e = spans.entry(stag).or_insert((to, to, 0));
                    e.0 = e.0.min(to);
                    e.1 = e.1.max(to + payload.len() as u64);
                    e.2 |= ACCESS_REMOTE_WRITE | ACCESS_LOCAL_WRITE;
                }
                RdmapRepr::Send { last: true, .. } => sends += 1,
                RdmapRepr::ReadRequest { request, .. } => {
                    reads += 1;
                    let (to, end) = (request.src_to, request.src_to + request.size as u64);
                    let e = spans.entry(request.src_stag).or_insert((to, end, 0));
                    e.0 = e.0.min(to);
                    e.1 = e.1.max(end);
                    e.2 |= ACCESS_REMOTE_READ;
                }
                _ => {}
            }
        }
        let mut tpt = Tpt::new();
        for (&stag, &(lo, hi, access)) in &spans {
            let len = (hi - lo) as usize;
            assert!(len < 64 << 20, "region too large");
            tpt.register(stag, PD, access, lo, vec![0; len]);
        }
        let mut rx = Receiver::new(
            RxConfig {
                mpa,
                pd: PD,
                ird: reads.max(1),
            },
            tpt,
        );
        for i in 0..sends {
            rx.post_recv(i, 1 << 16);
        }
        for (_, f) in &theirs {
            if let Ok(RdmapRepr::ReadRequest { request, .. }) =
                RdmapRepr::from_bytes(&f[2..2 + ulen(f)])
            {
                rx.expect_read_response(request);
            }
        }

        // Second pass: the model receiver, in the captured segments.
        let mut completed_reads: Vec<ReadRequestRepr> = Vec::new();
        for (seq, chunk) in &d.chunks {
            for e in rx.receive(*seq, chunk).expect("in order") {
                match e {
                    Event::SendTerminate(t) => panic!("{name}: model says Terminate {t:?}"),
                    Event::ReadRequest(_) => rx.read_response_sent(),
                    Event::ReadResponseCompleted { request, len, .. } => {
                        assert_eq!(len, request.size as u64);
                        completed_reads.push(request);
                    }
                    _ => {}
                }
            }
        }
        assert_eq!(rx.fpdus() as usize, ours.len());
        decoded += ours.len();

        // Re-emission by the model's emitters.
        for (seq, f) in &ours {
            let u = &f[2..2 + ulen(f)];
            let repr = RdmapRepr::from_bytes(u).unwrap();
            let mut ulpdu = vec![0; repr.buffer_len()];
            repr.emit(&mut ulpdu).unwrap();
            assert_eq!(ulpdu, u, "DDP segment re-emits");
            let out = frame_ulpdu(&mpa, *seq, &ulpdu).unwrap();
            let pad = 2 + u.len()..f.len() - 4;
            if f[pad.clone()].iter().all(|&b| b == 0) {
                assert_eq!(&out, f, "FPDU at {seq} re-emits");
            } else {
                pad_exceptions += 1;
                assert_eq!(&out[..pad.start], &f[..pad.start]);
                if !mpa.crc {
                    assert_eq!(&out[pad.end..], &f[pad.end..]);
                }
            }
        }
    }
    println!("{name}: {decoded} FPDUs decoded and re-emitted, {pad_exceptions} with non-zero pad");
    (decoded, pad_exceptions)
}

/// ULPDU_LENGTH of a marker-free FPDU.
fn ulen(f: &[u8]) -> usize {
    u16::from_be_bytes([f[0], f[1]]) as usize
}

#[test]
fn siw_rping_default() {
    let (n, _) = check("siw-rping-default.pcap");
    assert!(n > 20);
}

#[test]
fn siw_rping_crc_p2p() {
    let (n, _) = check("siw-rping-crc-p2p.pcap");
    assert!(n > 20);
}

#[test]
fn siw_ib_write_bw() {
    let (n, _) = check("siw-ib_write_bw-64k.pcap");
    assert!(n > 100);
}
