//! Reading the real siw captures of `testdata/captures/` for the capture
//! tests: frames of pcap or pcapng files, their TCP segments, and
//! per-direction byte streams.
#![allow(dead_code)] // each test binary uses its own subset

#[path = "../../../testdata/support.rs"]
pub mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use rnic_wire::net::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};

pub use support::capture;

/// One captured frame.
pub struct Frame {
    /// 1-based frame number, as Wireshark counts.
    pub number: usize,
    /// Length on the wire.
    pub orig_len: usize,
    /// The captured octets (shorter than `orig_len` if the snap length cut it).
    pub data: Vec<u8>,
}

/// The frames of a pcap or pcapng file (one `.pcap` capture is pcapng).
pub fn frames(path: &PathBuf) -> Vec<Frame> {
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut push = |orig_len: usize, data: Vec<u8>| {
        out.push(Frame {
            number: out.len() + 1,
            orig_len,
            data,
        });
    };
    if bytes.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        let mut r = PcapNgReader::new(&bytes[..]).unwrap();
        while let Some(block) = r.next_block() {
            match block.unwrap() {
                Block::EnhancedPacket(p) => push(p.original_len as usize, p.data.into_owned()),
                Block::SimplePacket(p) => push(p.original_len as usize, p.data.into_owned()),
                _ => {}
            }
        }
    } else {
        let mut r = PcapReader::new(&bytes[..]).unwrap();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            push(p.orig_len as usize, p.data.into_owned());
        }
    }
    out
}

/// (source IP, source port, destination IP, destination port).
pub type Key = ([u8; 4], u16, [u8; 4], u16);

/// A TCP segment of a capture (IPv4 over Ethernet), parsed with smoltcp.
pub struct TcpSeg {
    /// The frame it came in.
    pub frame: Frame,
    /// Its direction.
    pub key: Key,
    /// Sequence number of the first payload octet.
    pub seq: u32,
    /// The TCP payload (may be empty).
    pub payload: Vec<u8>,
}

impl TcpSeg {
    /// Whether the snap length cut the frame short.
    pub fn truncated(&self) -> bool {
        self.frame.orig_len != self.frame.data.len()
    }
}

/// Every TCP segment of the capture, in frame order.
pub fn tcp_segments(path: &PathBuf) -> Vec<TcpSeg> {
    let mut out = Vec::new();
    for frame in frames(path) {
        let Ok(eth) = EthernetFrame::new_checked(&frame.data[..]) else {
            continue;
        };
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            continue;
        }
        let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else {
            continue;
        };
        if ip.next_header() != IpProtocol::Tcp {
            continue;
        }
        let Ok(tcp) = TcpPacket::new_checked(ip.payload()) else {
            continue;
        };
        let key = (
            ip.src_addr().octets(),
            tcp.src_port(),
            ip.dst_addr().octets(),
            tcp.dst_port(),
        );
        let (seq, payload) = (tcp.seq_number().0 as u32, tcp.payload().to_vec());
        out.push(TcpSeg {
            frame,
            key,
            seq,
            payload,
        });
    }
    out
}

/// One direction of a TCP connection: its payload segments keyed by offset
/// from the first payload octet seen (so sequence wrap does not matter).
#[derive(Default)]
pub struct Flow {
    base: Option<u32>,
    segments: BTreeMap<u32, Vec<u8>>,
    /// The largest segment payload seen.
    pub max_segment: usize,
}

impl Flow {
    /// Adds a segment (a retransmitted offset keeps the first copy).
    pub fn add(&mut self, seq: u32, payload: &[u8]) {
        let base = *self.base.get_or_insert(seq);
        self.max_segment = self.max_segment.max(payload.len());
        self.segments
            .entry(seq.wrapping_sub(base))
            .or_insert_with(|| payload.to_vec());
    }

    /// Sequence number of the first payload octet seen (`None`: no payload).
    pub fn base(&self) -> Option<u32> {
        self.base
    }

    /// The contiguous stream from the first octet as (offset, chunk) in
    /// captured segments; stops at a hole, skips retransmitted octets.
    pub fn chunks(&self) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        let mut next = 0u32;
        for (&off, data) in &self.segments {
            if off > next {
                break; // hole
            }
            let skip = (next - off) as usize;
            if skip < data.len() {
                out.push((next, data[skip..].to_vec()));
                next = off + data.len() as u32;
            }
        }
        out
    }

    /// The contiguous stream from the first octet (stops at a hole).
    pub fn stream(&self) -> Vec<u8> {
        self.chunks().into_iter().flat_map(|(_, c)| c).collect()
    }
}

/// The payload-carrying segments of `segs`, per direction.
pub fn flows(segs: &[TcpSeg]) -> BTreeMap<Key, Flow> {
    let mut flows: BTreeMap<Key, Flow> = BTreeMap::new();
    for s in segs {
        let flow = flows.entry(s.key).or_default();
        if !s.payload.is_empty() {
            flow.add(s.seq, &s.payload);
        }
    }
    flows
}
