//! Ethernet/ARP/IPv4/TCP frames, parsed and built with `rnic_wire::net`
//! (smoltcp's wire formats).

use rnic_wire::net::ChecksumCapabilities;
use rnic_wire::net::{
    ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpAddress,
    IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, TcpPacket, TcpRepr,
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
                }),
                Err(_) => Rx::Other,
            }
        }
        _ => Rx::Other,
    }
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
    use rnic_wire::net::{TcpControl, TcpSeqNumber};

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
}
