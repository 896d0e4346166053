//! Ethernet/ARP/IPv4/TCP frames, parsed and built with `rnic_wire::net`
//! (smoltcp's wire formats).

use rnic_wire::net::ChecksumCapabilities;
use rnic_wire::net::{
    ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpAddress,
    IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket, TcpRepr,
};

/// Largest frame the firmware builds or takes (Ethernet header + 1500).
pub const MAX_FRAME: usize = 1514;
/// Frames shorter than this are padded (Ethernet minimum without FCS).
pub const MIN_FRAME: usize = 60;
/// Ethernet + IPv4 + TCP header octets without options.
pub const HEADERS: usize = 14 + 20 + 20;

/// Converts our u32 address encoding to smoltcp's.
pub fn ip4(v: u32) -> Ipv4Address {
    Ipv4Address::from(v)
}

/// Converts smoltcp's address to our u32 encoding.
pub fn ipu32(a: Ipv4Address) -> u32 {
    u32::from(a)
}

/// A TCP segment and its addressing.
#[derive(Debug)]
pub struct TcpRx<'a> {
    /// Ethernet source (the previous hop).
    pub src_mac: [u8; 6],
    /// IPv4 source.
    pub src_ip: u32,
    /// IPv4 destination.
    pub dst_ip: u32,
    /// The segment.
    pub tcp: TcpRepr<'a>,
    /// The frame was longer than the octets the firmware has of it
    /// ([`parse_exception`]): `tcp.payload` is only its first octets.
    pub cut: bool,
}

/// What a received frame is.
#[derive(Debug)]
pub enum Rx<'a> {
    /// An ARP packet.
    Arp(ArpRepr),
    /// A TCP segment with a valid checksum.
    Tcp(TcpRx<'a>),
    /// Anything else (or malformed).
    Other,
}

/// Parses a frame; never panics on malformed input.
pub fn parse(frame: &[u8]) -> Rx<'_> {
    let Ok(eth) = EthernetFrame::new_checked(frame) else {
        return Rx::Other;
    };
    let src_mac = eth.src_addr().0;
    match eth.ethertype() {
        EthernetProtocol::Arp => {
            let Ok(p) = ArpPacket::new_checked(eth.payload()) else {
                return Rx::Other;
            };
            match ArpRepr::parse(&p) {
                Ok(r) => Rx::Arp(r),
                Err(_) => Rx::Other,
            }
        }
        EthernetProtocol::Ipv4 => {
            let payload: &[u8] = &frame[14..];
            let Ok(ip) = Ipv4Packet::new_checked(payload) else {
                return Rx::Other;
            };
            let caps = ChecksumCapabilities::default();
            let Ok(ipr) = Ipv4Repr::parse(&ip, &caps) else {
                return Rx::Other;
            };
            if ipr.next_header != IpProtocol::Tcp {
                return Rx::Other;
            }
            let hl = ip.header_len() as usize;
            let tl = ip.total_len() as usize;
            let Some(tcp_bytes) = payload.get(hl..tl) else {
                return Rx::Other;
            };
            let Ok(tp) = TcpPacket::new_checked(tcp_bytes) else {
                return Rx::Other;
            };
            let src = IpAddress::Ipv4(ipr.src_addr);
            let dst = IpAddress::Ipv4(ipr.dst_addr);
            match TcpRepr::parse(&tp, &src, &dst, &caps) {
                Ok(tcp) => Rx::Tcp(TcpRx {
                    src_mac,
                    src_ip: ipu32(ipr.src_addr),
                    dst_ip: ipu32(ipr.dst_addr),
                    tcp,
                    cut: false,
                }),
                Err(_) => Rx::Other,
            }
        }
        _ => Rx::Other,
    }
}

/// Parses an exception-queue frame of which `buf` holds the first octets
/// and the device received `frame_len` in all.
///
/// A whole frame is parsed (and its checksums checked) by [`parse`]. A
/// longer one is a TCP segment above the 2 KiB `EXC_DATA` window
/// (`port::FRAME_WINDOW`; every segment of a 9000-octet MTU that is out of
/// order or a duplicate): its Ethernet, IPv4 and TCP headers must be whole
/// in `buf`, and it is taken as the segment trimmed to the payload octets
/// that are there. The trimmed segment is what the firmware needs to answer
/// it (RFC 9293 §3.10.7.4: an unacceptable or out-of-order segment is
/// answered with an ACK of RCV.NXT), and a receiver may keep only the first
/// octets of a segment (§3.10.7.4: "only the portion ... that lies within
/// the window"; the rest counts as not received and is sent again). Its
/// FIN, if any, is dropped: it follows the octets that are not here.
/// The TCP checksum covers octets that are not here, so it is the
/// device's: `rx_check` already drops a frame with a bad one (`TAG_BAD_*`),
/// and only `TAG_OK` frames reach the exception queue. The IPv4 header
/// checksum is checked here as for any frame.
pub fn parse_exception(buf: &[u8], frame_len: usize) -> Rx<'_> {
    if frame_len <= buf.len() {
        return parse(&buf[..frame_len]);
    }
    parse_trimmed(buf).map_or(Rx::Other, Rx::Tcp)
}

/// The headers of an IPv4/TCP frame cut short, and the payload that is there.
fn parse_trimmed(frame: &[u8]) -> Option<TcpRx<'_>> {
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let payload: &[u8] = &frame[14..];
    // Fixed IPv4 header (20 octets) first, then the fields that say more.
    if payload.len() < 20 {
        return None;
    }
    let ip = Ipv4Packet::new_unchecked(payload);
    let hl = ip.header_len() as usize;
    let tl = ip.total_len() as usize;
    if ip.version() != 4
        || hl < 20
        || hl > tl
        || payload.len() < hl
        || !ip.verify_checksum()
        || ip.more_frags()
        || ip.frag_offset() != 0
        || ip.next_header() != IpProtocol::Tcp
    {
        return None;
    }
    // Whatever of the TCP segment is here (its header must be whole).
    let tcp_bytes = payload.get(hl..tl.min(payload.len()))?;
    let tp = TcpPacket::new_checked(tcp_bytes).ok()?;
    let src = IpAddress::Ipv4(ip.src_addr());
    let dst = IpAddress::Ipv4(ip.dst_addr());
    let mut tcp = TcpRepr::parse(&tp, &src, &dst, &ChecksumCapabilities::ignored()).ok()?;
    if tcp.control == TcpControl::Fin {
        tcp.control = TcpControl::None;
    }
    Some(TcpRx {
        src_mac: eth.src_addr().0,
        src_ip: ipu32(ip.src_addr()),
        dst_ip: ipu32(ip.dst_addr()),
        tcp,
        cut: true,
    })
}

/// Builds Ethernet + IPv4 + `tcp` into `buf`; returns the frame length, or
/// `None` if `buf` is too small.
pub fn build_tcp(
    buf: &mut [u8],
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    src_ip: u32,
    dst_ip: u32,
    tcp: &TcpRepr,
) -> Option<usize> {
    let ipr = Ipv4Repr {
        src_addr: ip4(src_ip),
        dst_addr: ip4(dst_ip),
        next_header: IpProtocol::Tcp,
        payload_len: tcp.buffer_len(),
        hop_limit: 64,
    };
    let len = 14 + ipr.buffer_len() + tcp.buffer_len();
    let total = len.max(MIN_FRAME);
    let buf = buf.get_mut(..total)?;
    buf.fill(0);
    let eth = EthernetRepr {
        src_addr: EthernetAddress(src_mac),
        dst_addr: EthernetAddress(dst_mac),
        ethertype: EthernetProtocol::Ipv4,
    };
    let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
    eth.emit(&mut f);
    let caps = ChecksumCapabilities::default();
    let mut ip = Ipv4Packet::new_unchecked(&mut buf[14..len]);
    ipr.emit(&mut ip, &caps);
    let mut tp = TcpPacket::new_unchecked(&mut buf[34..len]);
    tcp.emit(
        &mut tp,
        &IpAddress::Ipv4(ip4(src_ip)),
        &IpAddress::Ipv4(ip4(dst_ip)),
        &caps,
    );
    Some(total)
}

/// Builds an ARP frame to `dst_mac`; returns its length.
pub fn build_arp(
    buf: &mut [u8],
    src_mac: [u8; 6],
    dst_mac: [u8; 6],
    arp: &ArpRepr,
) -> Option<usize> {
    let buf = buf.get_mut(..MIN_FRAME)?;
    buf.fill(0);
    let eth = EthernetRepr {
        src_addr: EthernetAddress(src_mac),
        dst_addr: EthernetAddress(dst_mac),
        ethertype: EthernetProtocol::Arp,
    };
    eth.emit(&mut EthernetFrame::new_unchecked(&mut buf[..]));
    let mut p = ArpPacket::new_unchecked(&mut buf[14..14 + arp.buffer_len()]);
    arp.emit(&mut p);
    Some(MIN_FRAME)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_wire::net::TcpSeqNumber;

    #[test]
    fn tcp_round_trip_with_padding() {
        let tcp = TcpRepr {
            src_port: 1,
            dst_port: 2,
            control: TcpControl::Syn,
            seq_number: TcpSeqNumber(7),
            ack_number: None,
            window_len: 100,
            window_scale: Some(7),
            max_seg_size: Some(1460),
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload: &[],
        };
        let mut b = [0u8; MAX_FRAME];
        let n = build_tcp(&mut b, [2; 6], [4; 6], 0x0A00_0001, 0x0A00_0002, &tcp).unwrap();
        assert_eq!(n, 14 + 20 + 28);
        match parse(&b[..n]) {
            Rx::Tcp(t) => {
                assert_eq!(t.tcp, tcp);
                assert_eq!(t.src_ip, 0x0A00_0001);
                assert_eq!(t.src_mac, [2; 6]);
            }
            other => panic!("{other:?}"),
        }
        // A corrupted checksum is refused.
        b[40] ^= 1;
        assert!(matches!(parse(&b[..n]), Rx::Other));
        assert!(matches!(parse(&b[..10]), Rx::Other));
    }

    /// A segment longer than the buffer (the exception queue's 2 KiB
    /// window, or `MAX_FRAME`): the headers as smoltcp emitted them, the
    /// payload cut to the octets there, no FIN; a whole frame as `parse`.
    #[test]
    fn cut_segment_keeps_headers_and_its_first_octets() {
        let mut payload = [0u8; 4096];
        for (i, p) in payload.iter_mut().enumerate() {
            *p = (i * 7) as u8;
        }
        let tcp = TcpRepr {
            src_port: 40000,
            dst_port: 7174,
            control: TcpControl::Fin,
            seq_number: TcpSeqNumber(-5),
            ack_number: Some(TcpSeqNumber(99)),
            window_len: 96,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload: &payload,
        };
        let mut b = [0u8; 9018];
        let n = build_tcp(&mut b, [2; 6], [4; 6], 0x0A00_0002, 0x0A00_0001, &tcp).unwrap();
        assert_eq!(n, 54 + 4096);
        assert!(matches!(parse(&b[..MAX_FRAME]), Rx::Other), "parse refuses");
        for cut in [54, 55, MAX_FRAME, 2048, n - 1] {
            match parse_exception(&b[..cut], n) {
                Rx::Tcp(t) => {
                    let want = TcpRepr {
                        control: TcpControl::None,
                        payload: &payload[..cut - 54],
                        ..tcp
                    };
                    assert_eq!(t.tcp, want, "cut at {cut}");
                    assert!(t.cut);
                    assert_eq!(
                        (t.src_ip, t.dst_ip, t.src_mac),
                        (0x0A00_0002, 0x0A00_0001, [2; 6])
                    );
                }
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        // headers not whole, or a frame with no IPv4 in it
        assert!(matches!(parse_exception(&b[..53], n), Rx::Other));
        assert!(matches!(parse_exception(&b[..20], n), Rx::Other));
        // whole: parse, FIN kept, checksum checked
        match parse_exception(&b[..n], n) {
            Rx::Tcp(t) => assert_eq!((t.tcp, t.cut), (tcp, false)),
            other => panic!("{other:?}"),
        }
        b[n - 1] ^= 1;
        assert!(matches!(parse_exception(&b[..n], n), Rx::Other));
    }
}
