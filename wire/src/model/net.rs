//! Ethernet/IPv4/TCP frames around TCP payload, built and checked with
//! smoltcp's `wire` reprs (checksums included), so tests and the
//! co-simulation can make and read real frames.
//!
//! Frames are Ethernet II without FCS (LINKTYPE_ETHERNET in a pcap). IPv4:
//! 20-octet header, DF set, TTL 64. TCP: no options except MSS in a SYN;
//! the window is fixed at 65535 (no scaling): this is framing, not a TCP
//! implementation.

use std::vec::Vec;

use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpAddress, IpProtocol,
    Ipv4Address, Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket, TcpRepr, TcpSeqNumber,
};

/// IPv4 TTL of the frames built here.
pub const TTL: u8 = 64;
/// TCP window advertised in every frame built here.
pub const WINDOW: u16 = 65535;

/// One end of a TCP connection on Ethernet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: [u8; 4],
    /// TCP port.
    pub port: u16,
}

/// The addresses and ports of a TCP segment, as sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FourTuple {
    /// Source IPv4 address.
    pub src_ip: [u8; 4],
    /// Source port.
    pub src_port: u16,
    /// Destination IPv4 address.
    pub dst_ip: [u8; 4],
    /// Destination port.
    pub dst_port: u16,
}

impl FourTuple {
    /// The other direction of the connection.
    pub fn reversed(&self) -> FourTuple {
        FourTuple {
            src_ip: self.dst_ip,
            src_port: self.dst_port,
            dst_ip: self.src_ip,
            dst_port: self.src_port,
        }
    }
}

/// A TCP segment read out of an Ethernet frame by [`parse_frame`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSegmentView<'a> {
    /// Source MAC.
    pub src_mac: [u8; 6],
    /// Destination MAC.
    pub dst_mac: [u8; 6],
    /// Addresses and ports.
    pub tuple: FourTuple,
    /// Sequence number.
    pub seq: u32,
    /// Acknowledgment number, if ACK is set.
    pub ack: Option<u32>,
    /// SYN flag.
    pub syn: bool,
    /// FIN flag.
    pub fin: bool,
    /// RST flag.
    pub rst: bool,
    /// Window field (unscaled).
    pub window: u16,
    /// MSS option, if present.
    pub mss: Option<u16>,
    /// The payload.
    pub payload: &'a [u8],
}

/// Why [`parse_frame`] refused a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameError {
    /// Shorter than an Ethernet header.
    Ethernet,
    /// Not IPv4 (ARP, IPv6, ...).
    NotIpv4,
    /// Malformed IPv4 header, or bad header checksum.
    Ipv4,
    /// IPv4 but not TCP.
    NotTcp,
    /// Malformed TCP header, or bad checksum.
    Tcp,
}

/// Builds the frame carrying `tcp` from `src` to `dst` (the ports of `tcp`
/// are used as given), with IPv4 and TCP checksums filled in.
pub fn tcp_frame(src: &Endpoint, dst: &Endpoint, tcp: &TcpRepr<'_>) -> Vec<u8> {
    let caps = ChecksumCapabilities::default();
    let (src_ip, dst_ip) = (Ipv4Address::from(src.ip), Ipv4Address::from(dst.ip));
    let eth = EthernetRepr {
        src_addr: EthernetAddress(src.mac),
        dst_addr: EthernetAddress(dst.mac),
        ethertype: EthernetProtocol::Ipv4,
    };
    let ip = Ipv4Repr {
        src_addr: src_ip,
        dst_addr: dst_ip,
        next_header: IpProtocol::Tcp,
        payload_len: tcp.buffer_len(),
        hop_limit: TTL,
    };
    let mut frame = std::vec![0u8; eth.buffer_len() + ip.buffer_len() + tcp.buffer_len()];
    let mut eth_frame = EthernetFrame::new_unchecked(&mut frame[..]);
    eth.emit(&mut eth_frame);
    let mut ip_packet = Ipv4Packet::new_unchecked(eth_frame.payload_mut());
    ip.emit(&mut ip_packet, &caps);
    let mut tcp_packet = TcpPacket::new_unchecked(ip_packet.payload_mut());
    tcp.emit(
        &mut tcp_packet,
        &IpAddress::Ipv4(src_ip),
        &IpAddress::Ipv4(dst_ip),
        &caps,
    );
    frame
}

/// A TCP header description with the fields that vary here.
fn repr<'a>(
    src: &Endpoint,
    dst: &Endpoint,
    control: TcpControl,
    seq: u32,
    ack: Option<u32>,
    mss: Option<u16>,
    payload: &'a [u8],
) -> TcpRepr<'a> {
    TcpRepr {
        src_port: src.port,
        dst_port: dst.port,
        control,
        seq_number: TcpSeqNumber(seq as i32),
        ack_number: ack.map(|a| TcpSeqNumber(a as i32)),
        window_len: WINDOW,
        window_scale: None,
        max_seg_size: mss,
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload,
    }
}

/// A segment with payload, ACK and PSH set.
pub fn data_frame(src: &Endpoint, dst: &Endpoint, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    let control = if payload.is_empty() {
        TcpControl::None
    } else {
        TcpControl::Psh
    };
    tcp_frame(
        src,
        dst,
        &repr(src, dst, control, seq, Some(ack), None, payload),
    )
}

/// A pure ACK.
pub fn ack_frame(src: &Endpoint, dst: &Endpoint, seq: u32, ack: u32) -> Vec<u8> {
    data_frame(src, dst, seq, ack, &[])
}

/// A SYN (`ack` None) or SYN-ACK, with the MSS option.
pub fn syn_frame(src: &Endpoint, dst: &Endpoint, iss: u32, ack: Option<u32>, mss: u16) -> Vec<u8> {
    tcp_frame(
        src,
        dst,
        &repr(src, dst, TcpControl::Syn, iss, ack, Some(mss), &[]),
    )
}

/// A FIN with ACK.
pub fn fin_frame(src: &Endpoint, dst: &Endpoint, seq: u32, ack: u32) -> Vec<u8> {
    tcp_frame(
        src,
        dst,
        &repr(src, dst, TcpControl::Fin, seq, Some(ack), None, &[]),
    )
}

/// Reads a frame: Ethernet II, IPv4 (header checksum checked), TCP
/// (checksum over the pseudo-header checked).
pub fn parse_frame(frame: &[u8]) -> Result<TcpSegmentView<'_>, FrameError> {
    let eth = EthernetFrame::new_checked(frame).map_err(|_| FrameError::Ethernet)?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return Err(FrameError::NotIpv4);
    }
    let (src_mac, dst_mac) = (eth.src_addr().0, eth.dst_addr().0);
    let ip = Ipv4Packet::new_checked(&frame[EthernetFrame::<&[u8]>::header_len()..])
        .map_err(|_| FrameError::Ipv4)?;
    let caps = ChecksumCapabilities::default();
    let ip_repr = Ipv4Repr::parse(&ip, &caps).map_err(|_| FrameError::Ipv4)?;
    if ip_repr.next_header != IpProtocol::Tcp {
        return Err(FrameError::NotTcp);
    }
    let ip_payload = ip.payload();
    let tcp = TcpPacket::new_checked(ip_payload).map_err(|_| FrameError::Tcp)?;
    let (src, dst) = (
        IpAddress::Ipv4(ip_repr.src_addr),
        IpAddress::Ipv4(ip_repr.dst_addr),
    );
    let tcp_repr = TcpRepr::parse(&tcp, &src, &dst, &caps).map_err(|_| FrameError::Tcp)?;
    Ok(TcpSegmentView {
        src_mac,
        dst_mac,
        tuple: FourTuple {
            src_ip: ip_repr.src_addr.octets(),
            src_port: tcp_repr.src_port,
            dst_ip: ip_repr.dst_addr.octets(),
            dst_port: tcp_repr.dst_port,
        },
        seq: tcp_repr.seq_number.0 as u32,
        ack: tcp_repr.ack_number.map(|a| a.0 as u32),
        syn: tcp_repr.control == TcpControl::Syn,
        fin: tcp_repr.control == TcpControl::Fin,
        rst: tcp_repr.control == TcpControl::Rst,
        window: tcp_repr.window_len,
        mss: tcp_repr.max_seg_size,
        payload: tcp_repr.payload,
    })
}

/// Both ends of a TCP connection and their next sequence numbers: builds
/// the frames of a scripted exchange (handshake, data, ACKs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpPair {
    /// The active opener.
    pub a: Endpoint,
    /// The passive opener.
    pub b: Endpoint,
    /// Next sequence number `a` sends.
    pub a_next: u32,
    /// Next sequence number `b` sends.
    pub b_next: u32,
}

impl TcpPair {
    /// A connection not yet opened, with initial sequence numbers.
    pub fn new(a: Endpoint, a_iss: u32, b: Endpoint, b_iss: u32) -> TcpPair {
        TcpPair {
            a,
            b,
            a_next: a_iss,
            b_next: b_iss,
        }
    }

    /// SYN, SYN-ACK, ACK, both offering `mss`. Afterwards `a_next` and
    /// `b_next` are the first data sequence numbers.
    pub fn handshake(&mut self, mss: u16) -> [Vec<u8>; 3] {
        let syn = syn_frame(&self.a, &self.b, self.a_next, None, mss);
        self.a_next = self.a_next.wrapping_add(1);
        let syn_ack = syn_frame(&self.b, &self.a, self.b_next, Some(self.a_next), mss);
        self.b_next = self.b_next.wrapping_add(1);
        let ack = ack_frame(&self.a, &self.b, self.a_next, self.b_next);
        [syn, syn_ack, ack]
    }

    /// A data frame from `a` (if `from_a`) or `b` at sequence number `seq`
    /// (the sender's next sequence number becomes `seq + len`), ACKing all
    /// the other side sent.
    pub fn segment(&mut self, from_a: bool, seq: u32, payload: &[u8]) -> Vec<u8> {
        let end = seq.wrapping_add(payload.len() as u32);
        if from_a {
            self.a_next = end;
            data_frame(&self.a, &self.b, seq, self.b_next, payload)
        } else {
            self.b_next = end;
            data_frame(&self.b, &self.a, seq, self.a_next, payload)
        }
    }

    /// A data frame at the sender's next sequence number.
    pub fn send(&mut self, from_a: bool, payload: &[u8]) -> Vec<u8> {
        let seq = if from_a { self.a_next } else { self.b_next };
        self.segment(from_a, seq, payload)
    }

    /// A pure ACK from `a` (if `from_a`) or `b` of all the other sent.
    pub fn ack(&self, from_a: bool) -> Vec<u8> {
        if from_a {
            ack_frame(&self.a, &self.b, self.a_next, self.b_next)
        } else {
            ack_frame(&self.b, &self.a, self.b_next, self.a_next)
        }
    }
}
