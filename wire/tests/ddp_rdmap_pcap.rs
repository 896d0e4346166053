//! DDP/RDMAP against real traffic: the Linux siw captures in
//! `testdata/captures/` (see its README). Every ULPDU of every MPA stream must
//! parse, and re-emit octet for octet. tshark's iWARP dissector's reading of
//! each segment must agree with ours (without tshark: skipped outside CI, a
//! failure under CI).
//!
//! Ethernet/IPv4/TCP come off with `smoltcp::wire`; the MPA framing (the
//! request/reply frames and each FPDU's 2-octet ULPDU length, pad and CRC)
//! is undone by hand here, markers being off in these captures.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use common::{capture, support};
use rnic_wire::ddp::{DdpRepr, DdpSegment};
use rnic_wire::rdmap::{Opcode, RdmapRepr};

const MPA_REQ_KEY: &[u8; 16] = b"MPA ID Req Frame";
const MPA_REP_KEY: &[u8; 16] = b"MPA ID Rep Frame";

/// One ULPDU (a DDP segment) and the number of the frame that completed it.
struct Ulpdu {
    frame: usize,
    bytes: Vec<u8>,
}

#[derive(Default)]
struct Stream {
    next_seq: Option<u32>,
    buf: Vec<u8>,
    is_mpa: Option<bool>,
    broken: bool,
}

impl Stream {
    /// Consumes whole MPA frames and FPDUs from the front of the buffer.
    fn drain(&mut self, frame: usize, out: &mut Vec<Ulpdu>) {
        loop {
            let b = &self.buf;
            if b.len() >= 16 && (&b[..16] == MPA_REQ_KEY || &b[..16] == MPA_REP_KEY) {
                // RFC 5044 §7.1.1: key, flags/rev (2), private data length (2).
                if b.len() < 20 {
                    return;
                }
                let len = 20 + usize::from(u16::from_be_bytes([b[18], b[19]]));
                if b.len() < len {
                    return;
                }
                self.buf.drain(..len);
                continue;
            }
            if b.len() < 2 {
                return;
            }
            // RFC 5044 §4.1: ULPDU_Length, ULPDU, PAD to 4 octets, CRC.
            let ulpdu_len = usize::from(u16::from_be_bytes([b[0], b[1]]));
            let pad = (4 - (2 + ulpdu_len) % 4) % 4;
            let fpdu_len = 2 + ulpdu_len + pad + 4;
            if b.len() < fpdu_len {
                return;
            }
            out.push(Ulpdu {
                frame,
                bytes: b[2..2 + ulpdu_len].to_vec(),
            });
            self.buf.drain(..fpdu_len);
        }
    }
}

/// The ULPDUs of every MPA stream in a capture, in frame order.
fn ulpdus(path: &PathBuf) -> Vec<Ulpdu> {
    let mut streams: HashMap<common::Key, Stream> = HashMap::new();
    let mut out = Vec::new();
    for seg in common::tcp_segments(path) {
        let (frame, key, payload) = (seg.frame.number, seg.key, &seg.payload[..]);
        if payload.is_empty() {
            continue;
        }
        let s = streams.entry(key).or_default();
        if s.broken {
            continue;
        }
        if seg.truncated() {
            // Cut short by the snap length: the stream cannot be followed.
            s.broken = true;
            continue;
        }
        let seq = seg.seq;
        match s.next_seq {
            Some(n) if n == seq => {}
            Some(n) if seq.wrapping_sub(n) > u32::MAX / 2 => continue, // retransmission
            Some(_) => {
                s.broken = true; // a gap
                continue;
            }
            None => {
                let mpa = payload.len() >= 16
                    && (&payload[..16] == MPA_REQ_KEY || &payload[..16] == MPA_REP_KEY);
                s.is_mpa = Some(mpa);
            }
        }
        s.next_seq = Some(seq.wrapping_add(payload.len() as u32));
        if s.is_mpa != Some(true) {
            continue;
        }
        s.buf.extend_from_slice(payload);
        s.drain(frame, &mut out);
    }
    out
}

/// Parses and re-emits every ULPDU; returns how many of each opcode.
fn check_capture(name: &str) -> (Vec<Ulpdu>, HashMap<Opcode, usize>) {
    let path = capture(name);
    let pdus = ulpdus(&path);
    assert!(!pdus.is_empty(), "{name}: no FPDUs found");
    let mut counts = HashMap::new();
    for (i, u) in pdus.iter().enumerate() {
        let repr = RdmapRepr::from_bytes(&u.bytes)
            .unwrap_or_else(|e| panic!("{name}: ULPDU {i} (frame {}): {e}", u.frame));
        let mut again = vec![0u8; repr.buffer_len()];
        assert_eq!(
            repr.emit(&mut again),
            Ok(u.bytes.len()),
            "{name}: ULPDU {i}"
        );
        assert_eq!(
            again, u.bytes,
            "{name}: ULPDU {i} (frame {}) re-emitted",
            u.frame
        );
        // The DDP layer alone round-trips too.
        let ddp = DdpRepr::parse_bytes(&u.bytes).unwrap();
        assert_eq!(ddp, repr.ddp_repr());
        let mut hdr = vec![0u8; ddp.header_len()];
        ddp.emit(&mut hdr).unwrap();
        assert_eq!(hdr, u.bytes[..ddp.header_len()]);
        assert_eq!(
            DdpSegment::new_checked(&u.bytes[..])
                .unwrap()
                .payload()
                .len(),
            u.bytes.len() - ddp.header_len()
        );
        *counts.entry(repr.opcode()).or_insert(0) += 1;
    }
    println!("{name}: {} ULPDUs {counts:?}", pdus.len());
    (pdus, counts)
}

#[test]
fn rping_default() {
    let (pdus, counts) = check_capture("siw-rping-default.pcap");
    for op in [
        Opcode::RdmaWrite,
        Opcode::Send,
        Opcode::ReadRequest,
        Opcode::ReadResponse,
    ] {
        assert!(
            counts.get(&op).copied().unwrap_or(0) >= 5,
            "{op:?}: {counts:?}"
        );
    }
    // Every Read Response answers a Read Request: same sink STag and TO,
    // and carries the size asked for (rping reads whole buffers at once).
    let mut requests = Vec::new();
    for u in &pdus {
        match RdmapRepr::from_bytes(&u.bytes).unwrap() {
            RdmapRepr::ReadRequest { request, .. } => requests.push(request),
            RdmapRepr::ReadResponse {
                stag, to, payload, ..
            } => {
                let r = requests.remove(0);
                assert_eq!((stag, to), (r.sink_stag, r.sink_to));
                assert_eq!(payload.len(), r.size as usize);
            }
            _ => {}
        }
    }
    assert!(requests.is_empty());
    compare_with_tshark("siw-rping-default.pcap", &pdus);
}

#[test]
fn rping_crc_p2p() {
    let (pdus, _) = check_capture("siw-rping-crc-p2p.pcap");
    // RFC 6581 RTR: the first FPDU is a zero-length RDMA Write to STag 1, TO 0.
    assert_eq!(
        RdmapRepr::from_bytes(&pdus[0].bytes),
        Ok(RdmapRepr::RdmaWrite {
            last: true,
            stag: 1,
            to: 0,
            payload: &[],
        })
    );
    compare_with_tshark("siw-rping-crc-p2p.pcap", &pdus);
}

#[test]
fn ib_write_bw() {
    let (pdus, counts) = check_capture("siw-ib_write_bw-64k.pcap");
    assert!(counts.get(&Opcode::RdmaWrite).copied().unwrap_or(0) > 100);
    // 64 KiB Writes: ULPDUs of 1442 octets, 1428 of payload (README).
    let full = pdus
        .iter()
        .filter(|u| u.bytes.len() == 1442 && u.bytes[1] == Opcode::RdmaWrite.control())
        .count();
    assert!(full > 100, "{full}");
    compare_with_tshark("siw-ib_write_bw-64k.pcap", &pdus);
}

/// Our reading of each segment as a line like tshark's fields.
fn describe(repr: &RdmapRepr) -> String {
    let op = format!("0x{:02x}", repr.opcode().value());
    match repr.ddp_repr() {
        DdpRepr::Tagged { stag, to, .. } => format!("{op} 0x{stag:08x} 0x{to:016x}"),
        DdpRepr::Untagged { qn, msn, mo, .. } => format!("{op} {qn} {msn} {mo}"),
    }
}

/// Compares opcode, STag/TO or QN/MSN/MO of every segment with tshark's
/// iWARP dissector, frame by frame (see [`support::have_tool`] for a
/// missing tshark).
fn compare_with_tshark(name: &str, pdus: &[Ulpdu]) {
    if !support::have_tool("tshark") {
        return;
    }
    let path = capture(name);
    let out = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["--disable-protocol", "rpcordma", "-Y", "iwarp_ddp_rdmap"])
        .args(["-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"])
        .args(["-e", "frame.number", "-e", "iwarp_rdma.opcode"])
        .args(["-e", "iwarp_ddp.stag", "-e", "iwarp_ddp.tagged_offset"])
        .args([
            "-e",
            "iwarp_ddp.qn",
            "-e",
            "iwarp_ddp.msn",
            "-e",
            "iwarp_ddp.mo",
        ])
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed on {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut theirs: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        let f: Vec<Vec<&str>> = line.split('\t').map(|c| c.split(',').collect()).collect();
        let frame: usize = f[0][0].parse().unwrap();
        for (i, op) in f[1].iter().enumerate() {
            let at = |col: usize| f.get(col).and_then(|c| c.get(i)).copied().unwrap_or("");
            let s = if at(2).is_empty() {
                format!("{op} {} {} {}", at(4), at(5), at(6))
            } else {
                format!("{op} {} {}", at(2), at(3))
            };
            theirs.push((frame, s));
        }
    }
    let ours: Vec<(usize, String)> = pdus
        .iter()
        .map(|u| (u.frame, describe(&RdmapRepr::from_bytes(&u.bytes).unwrap())))
        .collect();
    assert!(!theirs.is_empty(), "tshark decoded nothing in {name}");
    // tshark may stop decoding where the capture ends mid-stream; every
    // segment it did decode must match ours.
    let mut ours_by_frame: HashMap<usize, Vec<&String>> = HashMap::new();
    for (f, s) in &ours {
        ours_by_frame.entry(*f).or_default().push(s);
    }
    for (f, s) in &theirs {
        let mine = ours_by_frame.get(f).map(Vec::as_slice).unwrap_or(&[]);
        assert!(
            mine.contains(&s),
            "{name} frame {f}: tshark says {s}, we say {mine:?}"
        );
    }
    println!("{name}: {} segments agree with tshark", theirs.len());
}
