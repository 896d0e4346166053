//! Interop on the receive side: real Linux siw RDMA Write traffic
//! (`testdata/captures/siw-ib_write_bw-64k.pcap`, `ib_write_bw -R` with
//! 64 KiB messages, TCP with timestamps, MPA rev 2 with CRC off) replayed
//! frame by frame into the Verilated `rnic_core`'s `mac_rx_*`.
//!
//! The expected result is computed without the RTL: the write connection's
//! byte stream is reassembled from the capture with smoltcp, cut into FPDUs
//! by the MPA length field (RFC 5044 §4.1), and each ULPDU is parsed with
//! `rnic_wire::rdmap::RdmapRepr`; its payload must land at the region's page
//! for its tagged offset, and nothing else in host memory may change.
//!
//! The only edit to the captured frames: siw's STag 0x483b3000 names TPT
//! index 0x483b30, beyond this core's 256-entry TPT, so every segment's STag
//! is rewritten to one of ours and the TCP checksum is recomputed (with
//! smoltcp). Everything else (Ethernet/IP/TCP headers with their options,
//! sequence numbers, DDP/RDMAP headers, tagged offsets, payload) is siw's.

mod rx_rig;
use rx_rig::*;
#[path = "../../testdata/support.rs"]
mod support;

use pcap_file::pcapng::{Block, PcapNgReader};
use rnic_wire::mpa::frame::MpaRequestReply;
use rnic_wire::net::{
    EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Packet, TcpPacket,
};
use rnic_wire::rdmap::RdmapRepr;

const CAPTURE: &str = "siw-ib_write_bw-64k.pcap";
/// The perftest data connection (the first one on 18515 carries only the
/// Send-based parameter exchange).
const WRITER: ([u8; 4], u16) = ([10, 0, 0, 2], 58614);
const SINK: ([u8; 4], u16) = ([10, 0, 0, 1], 18515);
/// Our STag for siw's region: TPT index 0x30 (siw's index modulo 256), key 0.
const OUR_INDEX: u32 = 0x30;
/// MPA ULPDU_Length field (RFC 5044 §4.1).
const MPA_LEN_FIELD: usize = 2;
/// MPA CRC field, present even when CRC is not in use (RFC 5044 §4.1).
const MPA_CRC_FIELD: usize = 4;
/// Offset of the STag in a tagged ULPDU: DDP control, RDMAP control
/// (RFC 5041 §4.2).
const STAG_OFFSET: usize = 2;

fn capture() -> Vec<Vec<u8>> {
    let path = support::capture(CAPTURE);
    // The capture is pcapng (see its README).
    let mut r = PcapNgReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut frames = Vec::new();
    while let Some(block) = r.next_block() {
        match block.unwrap() {
            Block::EnhancedPacket(p) => frames.push(p.data.into_owned()),
            Block::SimplePacket(p) => frames.push(p.data.into_owned()),
            _ => {}
        }
    }
    frames
}

/// (frame, sequence number, offset of the TCP payload in the frame, payload
/// length) of every segment writer → sink that carries data.
fn writer_segments(frames: &[Vec<u8>]) -> Vec<(usize, u32, usize, usize)> {
    let mut out = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let Ok(eth) = EthernetFrame::new_checked(&f[..]) else {
            continue;
        };
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            continue;
        }
        let ip = Ipv4Packet::new_checked(eth.payload()).unwrap();
        if ip.next_header() != IpProtocol::Tcp
            || ip.src_addr().octets() != WRITER.0
            || ip.dst_addr().octets() != SINK.0
        {
            continue;
        }
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        if (tcp.src_port(), tcp.dst_port()) != (WRITER.1, SINK.1) || tcp.payload().is_empty() {
            continue;
        }
        let off = 14 + usize::from(ip.header_len()) + usize::from(tcp.header_len());
        out.push((i, tcp.seq_number().0 as u32, off, tcp.payload().len()));
    }
    out
}

/// Rewrites the STag of the FPDU at the start of the frame's TCP payload and
/// recomputes the TCP checksum.
fn rewrite_stag(frame: &mut [u8], pay_off: usize, stag: u32) {
    let s = pay_off + MPA_LEN_FIELD + STAG_OFFSET;
    frame[s..s + 4].copy_from_slice(&stag.to_be_bytes());
    let mut eth = EthernetFrame::new_unchecked(&mut frame[..]);
    let mut ip = Ipv4Packet::new_unchecked(eth.payload_mut());
    let (src, dst) = (ip.src_addr(), ip.dst_addr());
    let mut tcp = TcpPacket::new_unchecked(ip.payload_mut());
    tcp.fill_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst));
}

#[test]
fn siw_rdma_writes_are_placed_byte_exact() {
    let mut frames = capture();
    let segs = writer_segments(&frames);
    // The MPA Request opens the stream (RFC 5044 §7.1): rev 2, CRC and
    // markers off, as the capture's README says.
    let (_, req_seq, req_off, req_len) = segs[0];
    let req = MpaRequestReply::new_checked(&frames[segs[0].0][req_off..req_off + req_len])
        .expect("MPA Request first");
    assert_eq!(
        (req.revision(), req.crc(), req.markers()),
        (2, false, false)
    );
    let fpdu_seq = req_seq.wrapping_add(req_len as u32);

    // The reference: the byte stream after the Request, cut into FPDUs.
    let mut stream = Vec::new();
    let mut next = fpdu_seq;
    let mut starts = Vec::new(); // (segment index, offset in the stream)
    for (k, &(f, seq, off, len)) in segs.iter().enumerate().skip(1) {
        assert_eq!(
            seq, next,
            "frame {f}: the capture has no gaps or retransmissions"
        );
        starts.push((k, stream.len()));
        stream.extend_from_slice(&frames[f][off..off + len]);
        next = seq.wrapping_add(len as u32);
    }
    let mut writes = Vec::new(); // (stream offset, stag, to, payload)
    let mut at = 0;
    while at + MPA_LEN_FIELD <= stream.len() {
        let ulpdu_len = usize::from(u16::from_be_bytes([stream[at], stream[at + 1]]));
        let pad = (4 - (MPA_LEN_FIELD + ulpdu_len) % 4) % 4;
        let fpdu_len = MPA_LEN_FIELD + ulpdu_len + pad + MPA_CRC_FIELD;
        if at + fpdu_len > stream.len() {
            break; // cut off by the end of the capture
        }
        let ulpdu = &stream[at + MPA_LEN_FIELD..at + MPA_LEN_FIELD + ulpdu_len];
        match RdmapRepr::from_bytes(ulpdu).expect("siw ULPDU parses") {
            RdmapRepr::RdmaWrite {
                stag, to, payload, ..
            } => writes.push((at, stag, to, payload.to_vec())),
            other => panic!("only RDMA Writes expected on this connection: {other:?}"),
        }
        at += fpdu_len;
    }
    // One FPDU per TCP segment (RFC 5044 §8.1.1 / the README): every FPDU
    // starts a segment, so the STag rewrite finds it there.
    let seg_at: Vec<usize> = starts.iter().map(|&(_, o)| o).collect();
    for &(o, ..) in &writes {
        assert!(
            seg_at.contains(&o),
            "FPDU at stream offset {o} starts a segment"
        );
    }
    let siw_stag = writes[0].1;
    assert!(writes.iter().all(|w| w.1 == siw_stag), "one region");
    let lo = writes.iter().map(|w| w.2).min().unwrap();
    let hi = writes.iter().map(|w| w.2 + w.3.len() as u64).max().unwrap();
    println!(
        "{} siw RDMA Write segments, {} octets, TO {lo:#x}..{hi:#x}, siw STag {siw_stag:#x}",
        writes.len(),
        writes.iter().map(|w| w.3.len()).sum::<usize>()
    );

    // The core: our connection is siw's 4-tuple at the sequence number after
    // the MPA Request, CRC and markers off, as negotiated.
    let mut rig = Rig::new(5, false, false, 1460);
    let c = &mut rig.core;
    c.set_ct_wr_valid(1);
    c.set_ct_wr_idx(CONN);
    c.set_ct_wr_used(1);
    c.set_ct_wr_local_ip(u32::from_be_bytes(SINK.0) as u64);
    c.set_ct_wr_peer_ip(u32::from_be_bytes(WRITER.0) as u64);
    c.set_ct_wr_local_port(SINK.1 as u64);
    c.set_ct_wr_peer_port(WRITER.1 as u64);
    c.set_ct_wr_mode(MODE_RDMA);
    c.set_ct_wr_mpa(0);
    c.set_ct_wr_rcv_nxt(fpdu_seq as u64);
    c.set_ct_wr_rcv_wnd(1 << 30);
    c.set_mpa_wr_valid(1);
    c.set_mpa_wr_idx(CONN);
    c.set_mpa_wr_seq_start(fpdu_seq as u64);
    c.tick();
    c.set_ct_wr_valid(0);
    c.set_mpa_wr_valid(0);
    c.tick();
    let pd = rig.pd;
    let r = rig.region(OUR_INDEX, 0, pd, ACCESS_REMOTE_WRITE, lo, hi - lo);
    for &(k, o) in &starts {
        if writes.iter().any(|w| w.0 == o) {
            let (f, _, off, _) = segs[k];
            rewrite_stag(&mut frames[f], off, r.stag);
        }
    }
    for &(k, _) in &starts {
        rig.mac.push(frames[segs[k].0].clone(), false);
    }
    for (_, _, to, data) in &writes {
        for (i, &b) in data.iter().enumerate() {
            let a = r.addr(to + i as u64);
            rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
        }
    }
    rig.run(5_000_000);

    rig.check_memory();
    assert!(rig.terms.is_empty(), "{:?}", rig.terms);
    assert_eq!(rig.core.get_cnt_rx_bad_tcp_csum(), 0);
    assert_eq!(rig.core.get_cnt_rx_bad_ip_csum(), 0);
    assert_eq!(
        rig.core.get_cnt_rx_exc(),
        0,
        "every segment on the fast path"
    );
    // The trailing partial FPDU (the capture ends mid-message) is buffered,
    // never placed; every whole one is, in order.
    let want: Vec<(u32, u64, u16)> = writes
        .iter()
        .map(|w| (r.stag, w.2, w.3.len() as u16))
        .collect();
    assert_eq!(rig.placed, want);
    println!(
        "placed {} segments byte-exact; {} frames on the fast path",
        rig.placed.len(),
        rig.core.get_cnt_rx_fast()
    );
}
