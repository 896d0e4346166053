//! ICMP Echo (RFC 792, RFC 1122 §3.2.2.6) against the scripted Hal: the
//! peer's requests are built with smoltcp, the firmware's replies checked
//! against frames written out by hand here, with a ones'-complement sum of
//! this file's own (RFC 1071), independent of both.
mod common;
use common::*;
use rnic_fw::icmp::{EchoLimit, ECHO_BURST};
use rnic_fw::Config;
use rnic_wire::abi::context::ExceptionReason;
use rnic_wire::net::{
    ChecksumCapabilities, EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr,
    Icmpv4Packet, Icmpv4Repr, IpProtocol, Ipv4Packet, Ipv4Repr,
};

/// RFC 1071: the ones'-complement of the ones'-complement sum of 16-bit
/// words (an odd last octet padded with zero). A header with its checksum
/// in place sums to 0.
fn csum(data: &[u8]) -> u16 {
    let mut s: u32 = data
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    !(s as u16)
}

/// An Echo Request as the peer sends it (smoltcp), from `smac`/`src` to
/// `dmac`/`dst`.
fn echo_from(smac: [u8; 6], src: u32, dmac: [u8; 6], dst: u32, seq: u16, data: &[u8]) -> Vec<u8> {
    let icmp = Icmpv4Repr::EchoRequest {
        ident: 0x4A17,
        seq_no: seq,
        data,
    };
    let ipr = Ipv4Repr {
        src_addr: ip(src),
        dst_addr: ip(dst),
        next_header: IpProtocol::Icmp,
        payload_len: icmp.buffer_len(),
        hop_limit: 61,
    };
    let mut b = vec![0u8; (14 + 20 + icmp.buffer_len()).max(60)];
    EthernetRepr {
        src_addr: EthernetAddress(smac),
        dst_addr: EthernetAddress(dmac),
        ethertype: EthernetProtocol::Ipv4,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut b[..]));
    let caps = ChecksumCapabilities::default();
    ipr.emit(&mut Ipv4Packet::new_unchecked(&mut b[14..]), &caps);
    icmp.emit(
        &mut Icmpv4Packet::new_unchecked(&mut b[34..34 + icmp.buffer_len()]),
        &caps,
    );
    b
}

/// A ping from the peer to us.
fn echo(seq: u16, data: &[u8]) -> Vec<u8> {
    echo_from(PEER_MAC, PEER_IP, OUR_MAC, OUR_IP, seq, data)
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 37 + 5) as u8).collect()
}

/// The reply the firmware must send to [`echo`]`(seq, data)`, written out
/// octet by octet (RFC 791 §3.1, RFC 792).
fn expected_reply(seq: u16, data: &[u8]) -> Vec<u8> {
    let total = 20 + 8 + data.len();
    let mut f = vec![];
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&OUR_MAC);
    f.extend_from_slice(&[0x08, 0x00]);
    let mut iph = vec![
        0x45, // version 4, IHL 5: no options
        0x00, // DSCP/ECN
        (total >> 8) as u8,
        total as u8,
        0x00, // identification 0
        0x00,
        0x40, // DF, offset 0
        0x00,
        64, // TTL
        1,  // ICMP
        0x00,
        0x00, // checksum, below
    ];
    iph.extend_from_slice(&OUR_IP.to_be_bytes());
    iph.extend_from_slice(&PEER_IP.to_be_bytes());
    let c = csum(&iph);
    iph[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&iph);
    let mut icmp = vec![0, 0, 0, 0, 0x4A, 0x17];
    icmp.extend_from_slice(&seq.to_be_bytes());
    icmp.extend_from_slice(data);
    let c = csum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&icmp);
    f.resize(f.len().max(60), 0);
    f
}

/// Delivers `f` as the device does (exception queue, `NoMatch`), then
/// polls; returns what the firmware sent.
fn ping(fw: &mut Fw, f: Vec<u8>) -> Vec<Vec<u8>> {
    fw.hal.push_rx(ExceptionReason::NoMatch, None, f);
    fw.poll();
    fw.hal.take_sent()
}

/// A valid request gets exactly one reply, equal octet for octet to the
/// one written out above (checksums by this file's own sum, and smoltcp
/// agrees): same identifier, sequence number and data, TTL 64, to the
/// request's Ethernet source. Small (padded to 60 octets), odd-length, and
/// the largest a 1500-octet MTU carries. Fails on a firmware without an
/// Echo responder (nothing is sent).
#[test]
fn echo_request_gets_one_byte_exact_reply() {
    let mut fw = new_fw();
    for (seq, n) in [(1u16, 0usize), (2, 56), (3, 57), (4, 1472)] {
        let data = pattern(n);
        let out = ping(&mut fw, echo(seq, &data));
        assert_eq!(out.len(), 1, "one reply to {n} octets");
        let want = expected_reply(seq, &data);
        assert_eq!(out[0].len(), want.len());
        assert_eq!(out[0], want, "{n} octets of data");
        // The checksums sum to zero, and smoltcp parses the reply.
        assert_eq!(csum(&out[0][14..34]), 0);
        assert_eq!(csum(&out[0][34..34 + 8 + n]), 0);
        let ipp = Ipv4Packet::new_checked(&out[0][14..]).unwrap();
        let caps = ChecksumCapabilities::default();
        let ipr = Ipv4Repr::parse(&ipp, &caps).unwrap();
        assert_eq!(
            (
                u32::from(ipr.src_addr),
                u32::from(ipr.dst_addr),
                ipr.hop_limit
            ),
            (OUR_IP, PEER_IP, 64)
        );
        let icmp = Icmpv4Repr::parse(&Icmpv4Packet::new_checked(ipp.payload()).unwrap(), &caps);
        assert_eq!(
            icmp.unwrap(),
            Icmpv4Repr::EchoReply {
                ident: 0x4A17,
                seq_no: seq,
                data: &data
            }
        );
    }
    assert_eq!(fw.stats().icmp.echo_replies, 4);
    assert_eq!(fw.stats().icmp.dropped, 0);
    // Through a gateway: the reply goes back to the frame's source MAC,
    // with no ARP request.
    let far = 0xC0A8_0107; // 192.168.1.7, off the subnet
    let out = ping(
        &mut fw,
        echo_from(GW_MAC, far, OUR_MAC, OUR_IP, 9, &pattern(8)),
    );
    assert_eq!(out.len(), 1);
    assert_eq!(&out[0][..6], &GW_MAC);
    assert_eq!(&out[0][30..34], &far.to_be_bytes());
    assert_eq!(fw.arp().len(), 0, "no ARP entry needed");
}

/// Recomputes the IPv4 header checksum of frame `f` after an edit.
fn fix_ip_csum(f: &mut [u8]) {
    f[24..26].fill(0);
    let c = csum(&f[14..34]);
    f[24..26].copy_from_slice(&c.to_be_bytes());
}

/// Sets the ICMP type and code of frame `f` (data as emitted) and
/// recomputes the ICMP checksum.
fn retype(mut f: Vec<u8>, ty: u8, code: u8) -> Vec<u8> {
    let total = u16::from_be_bytes([f[16], f[17]]) as usize;
    f[34] = ty;
    f[35] = code;
    f[36..38].fill(0);
    let c = csum(&f[34..14 + total]);
    f[36..38].copy_from_slice(&c.to_be_bytes());
    f
}

/// Requests that must not be answered: bad checksums, a fragment, not
/// addressed to the interface (another IP, the subnet or limited broadcast,
/// a link-layer broadcast, another station's MAC), from a source a host
/// does not answer, messages other than Echo Request (code 0), and a frame
/// cut short by the exception window. None is answered; the ones refused
/// by a check are counted as dropped, the other types as `other`.
#[test]
fn invalid_or_foreign_requests_get_no_reply() {
    let mut fw = new_fw();
    let data = pattern(56);
    let good = echo(1, &data);
    let mut dropped: Vec<(&str, Vec<u8>)> = vec![];
    let mut bad_ip = good.clone();
    bad_ip[24] ^= 0x01;
    dropped.push(("bad IPv4 checksum", bad_ip));
    let mut bad_icmp = good.clone();
    bad_icmp[40] ^= 0x80; // the sequence number
    dropped.push(("bad ICMP checksum", bad_icmp));
    let mut bad_data = good.clone();
    bad_data[60] ^= 0x01;
    dropped.push(("data changed, checksum not", bad_data));
    let mut frag = good.clone();
    frag[20] |= 0x20; // MF
    fix_ip_csum(&mut frag);
    dropped.push(("first fragment", frag));
    let mut frag2 = good.clone();
    frag2[21] = 0x10; // offset 16 × 8
    fix_ip_csum(&mut frag2);
    dropped.push(("later fragment", frag2));
    for (what, dmac, dst) in [
        ("another address", OUR_MAC, 0x0A00_0009),
        ("the subnet broadcast", OUR_MAC, 0x0A00_00FF),
        ("the limited broadcast", OUR_MAC, 0xFFFF_FFFF),
        ("a multicast group", OUR_MAC, 0xE000_0001),
        ("a link-layer broadcast", [0xFF; 6], OUR_IP),
        ("another station's MAC", [0x02, 0, 0, 0, 0, 0x77], OUR_IP),
    ] {
        dropped.push((what, echo_from(PEER_MAC, PEER_IP, dmac, dst, 1, &data)));
    }
    for (what, smac, src) in [
        ("from 0.0.0.0", PEER_MAC, 0),
        ("from loopback", PEER_MAC, 0x7F00_0001),
        ("from the subnet broadcast", PEER_MAC, 0x0A00_00FF),
        ("from a multicast address", PEER_MAC, 0xE000_00FB),
        ("from a group MAC", [0x03, 0, 0, 0, 0, 2], PEER_IP),
    ] {
        dropped.push((what, echo_from(smac, src, OUR_MAC, OUR_IP, 1, &data)));
    }
    for (what, f) in &dropped {
        assert!(ping(&mut fw, f.clone()).is_empty(), "{what}: no reply");
    }
    assert_eq!(fw.stats().icmp.dropped, dropped.len() as u64);
    let other = [
        ("Echo Reply", retype(good.clone(), 0, 0)),
        ("Destination Unreachable", retype(good.clone(), 3, 3)),
        ("Echo Request, code 1", retype(good.clone(), 8, 1)),
        ("Timestamp", retype(good.clone(), 13, 0)),
    ];
    for (what, f) in &other {
        assert!(ping(&mut fw, f.clone()).is_empty(), "{what}: no reply");
    }
    assert_eq!(fw.stats().icmp.other, other.len() as u64);
    // Cut short: the firmware has 100 of the frame's 98 + 1000 octets
    // (as when a frame is longer than the exception window), and a frame
    // longer than the firmware's 1514-octet buffer through the queue.
    let long = echo(1, &pattern(1056));
    fw.on_exception_of(ExceptionReason::NoMatch, None, &long[..100], long.len());
    assert!(fw.hal.take_sent().is_empty(), "cut short: no reply");
    let mut jumbo = echo(1, &pattern(2000));
    jumbo.truncate(1600); // what it would be under a 9000-octet MTU
    let total = (jumbo.len() - 14) as u16;
    jumbo[16..18].copy_from_slice(&total.to_be_bytes());
    fix_ip_csum(&mut jumbo);
    assert!(ping(&mut fw, jumbo).is_empty(), "longer than the buffer");
    assert_eq!(fw.stats().icmp.dropped, dropped.len() as u64 + 2);
    // Not ICMP (UDP): not the responder's, not counted.
    let mut udp = good.clone();
    udp[23] = 17;
    fix_ip_csum(&mut udp);
    assert!(ping(&mut fw, udp).is_empty());
    assert_eq!(fw.stats().icmp.dropped, dropped.len() as u64 + 2);
    assert_eq!(fw.stats().icmp.echo_replies, 0);
    // The same request, valid, is answered.
    assert_eq!(ping(&mut fw, good).len(), 1);
}

/// The token bucket: 50 requests in one instant get exactly the burst
/// (10) of replies, in order; one more per 10 ms after that, and a full
/// burst again after a pause; a configured limit replaces the default.
#[test]
fn burst_of_requests_is_rate_limited() {
    let mut fw = new_fw();
    let burst = |fw: &mut Fw, n: u16| -> Vec<u16> {
        for seq in 0..n {
            fw.hal
                .push_rx(ExceptionReason::NoMatch, None, echo(seq, &pattern(32)));
        }
        // The poll takes 32 exceptions at most: poll until the queue is empty.
        while !fw.hal.exceptions.is_empty() {
            fw.poll();
        }
        fw.hal
            .take_sent()
            .iter()
            .map(|f| u16::from_be_bytes([f[40], f[41]]))
            .collect()
    };
    let seqs = burst(&mut fw, 50);
    assert_eq!(seqs, (0..ECHO_BURST as u16).collect::<Vec<_>>());
    assert_eq!(fw.stats().icmp.rate_limited, 40);
    // 30 ms later: 3 tokens.
    fw.hal.now += 30_000;
    assert_eq!(burst(&mut fw, 50).len(), 3);
    // A second later: a full bucket, no more.
    fw.hal.now += 1_000_000;
    assert_eq!(burst(&mut fw, 50).len(), ECHO_BURST as usize);
    assert_eq!(fw.stats().icmp.echo_replies, 23);
    assert_eq!(fw.stats().icmp.rate_limited, 40 + 47 + 40);
    // Configured: 1000/s with a burst of 50.
    let mut fw = Fw::new(
        MockHal::new(),
        Config {
            icmp_echo: EchoLimit {
                per_second: 1000,
                burst: 50,
            },
            ..Config::default()
        },
    );
    assert_eq!(burst(&mut fw, 60).len(), 50);
    fw.hal.now += 5_000;
    assert_eq!(burst(&mut fw, 60).len(), 5);
    // Off.
    fw.config.icmp_echo.per_second = 0;
    fw.hal.now += 1_000_000;
    assert!(burst(&mut fw, 5).is_empty());
}
