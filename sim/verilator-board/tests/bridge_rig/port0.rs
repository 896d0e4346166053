//! The scripted peer on the board's port 0 (PHY 0's pins): the firmware's
//! interface and the peer's addresses, the peer's frames built and parsed
//! with smoltcp (the independent reference): ARP, TCP segments; and
//! [`Peer`], which answers the firmware's ARP requests and SYNs.

use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket,
    TcpRepr, TcpSeqNumber,
};
use verilator_board::Rig;

/// The firmware's interface on port 0, and the scripted peer.
pub const FW_MAC: [u8; 6] = [0x02, 0x52, 0x42, 0x00, 0x01, 0x02];
pub const FW_IP: [u8; 4] = [192, 168, 1, 2];
pub const PEER_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x99];
pub const PEER_IP: [u8; 4] = [192, 168, 1, 1];
pub const PEER_PORT: u16 = 5000;
/// MTU 1500 - IPv4 20 - TCP 20 (RFC 9293 §3.7.1).
pub const EXPECTED_MSS: u16 = 1460;
/// The scripted peer's ISS.
pub const PEER_ISS: u32 = 0x1234_5678;
/// The window the peer advertises.
pub const PEER_WINDOW: u16 = 64_000;

/// An ARP reply from the peer to the firmware (smoltcp), padded to 60.
pub fn arp_reply() -> Vec<u8> {
    let mut f = vec![0u8; 60];
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    EthernetRepr {
        src_addr: EthernetAddress(PEER_MAC),
        dst_addr: EthernetAddress(FW_MAC),
        ethertype: EthernetProtocol::Arp,
    }
    .emit(&mut e);
    ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Reply,
        source_hardware_addr: EthernetAddress(PEER_MAC),
        source_protocol_addr: Ipv4Address::from(PEER_IP),
        target_hardware_addr: EthernetAddress(FW_MAC),
        target_protocol_addr: Ipv4Address::from(FW_IP),
    }
    .emit(&mut ArpPacket::new_unchecked(e.payload_mut()));
    f
}

/// A TCP segment from the peer to the firmware as an Ethernet frame
/// (smoltcp: IPv4 and TCP checksums), padded to 60.
pub fn tcp_frame(t: &TcpRepr) -> Vec<u8> {
    let caps = ChecksumCapabilities::default();
    let (src, dst) = (Ipv4Address::from(PEER_IP), Ipv4Address::from(FW_IP));
    let ip = Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IpProtocol::Tcp,
        payload_len: t.buffer_len(),
        hop_limit: 64,
    };
    let mut f = vec![0u8; (14 + 20 + t.buffer_len()).max(60)];
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    EthernetRepr {
        src_addr: EthernetAddress(PEER_MAC),
        dst_addr: EthernetAddress(FW_MAC),
        ethertype: EthernetProtocol::Ipv4,
    }
    .emit(&mut e);
    let mut i = Ipv4Packet::new_unchecked(e.payload_mut());
    ip.emit(&mut i, &caps);
    t.emit(
        &mut TcpPacket::new_unchecked(i.payload_mut()),
        &IpAddress::Ipv4(src),
        &IpAddress::Ipv4(dst),
        &caps,
    );
    f
}

/// The peer's SYN-ACK to the firmware's SYN (smoltcp; RFC 9293 §3.5).
pub fn syn_ack(fw_port: u16, fw_iss: u32) -> Vec<u8> {
    tcp_frame(&TcpRepr {
        src_port: PEER_PORT,
        dst_port: fw_port,
        control: TcpControl::Syn,
        seq_number: TcpSeqNumber(PEER_ISS as i32),
        ack_number: Some(TcpSeqNumber(fw_iss.wrapping_add(1) as i32)),
        window_len: PEER_WINDOW,
        window_scale: None,
        max_seg_size: Some(1460),
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload: &[],
    })
}

/// An ACK-bearing segment from the peer (no SYN): `payload` at `seq`,
/// acknowledging `ack`; PSH when it carries data.
pub fn data_segment(fw_port: u16, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
    tcp_frame(&TcpRepr {
        src_port: PEER_PORT,
        dst_port: fw_port,
        control: if payload.is_empty() {
            TcpControl::None
        } else {
            TcpControl::Psh
        },
        seq_number: TcpSeqNumber(seq as i32),
        ack_number: Some(TcpSeqNumber(ack as i32)),
        window_len: PEER_WINDOW,
        window_scale: None,
        max_seg_size: None,
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload,
    })
}

/// What the peer on port 0 saw.
pub enum Port0 {
    ArpRequest,
    /// The SYN (checked), the firmware's port and ISS.
    Syn {
        port: u16,
        iss: u32,
    },
    /// Another TCP segment to the peer: control, SEQ, ACK, payload.
    OtherTcp {
        control: TcpControl,
        seq: u32,
        ack: Option<u32>,
        payload: Vec<u8>,
    },
}

/// A frame from port 0, read with smoltcp: an ARP request for the peer, or
/// a TCP segment from the firmware to the peer (IPv4 and TCP checksums
/// verified); a SYN has its MSS option checked.
pub fn port0_frame(f: &[u8]) -> Result<Port0, String> {
    let e = EthernetFrame::new_checked(f).map_err(|e| format!("ethernet: {e}"))?;
    if e.src_addr().0 != FW_MAC {
        return Err(format!("source MAC {}", e.src_addr()));
    }
    match e.ethertype() {
        EthernetProtocol::Arp => {
            let a =
                ArpRepr::parse(&ArpPacket::new_checked(e.payload()).map_err(|e| e.to_string())?)
                    .map_err(|e| format!("arp: {e}"))?;
            match a {
                ArpRepr::EthernetIpv4 {
                    operation: ArpOperation::Request,
                    source_hardware_addr,
                    source_protocol_addr,
                    target_protocol_addr,
                    ..
                } if target_protocol_addr == Ipv4Address::from(PEER_IP)
                    && source_protocol_addr == Ipv4Address::from(FW_IP)
                    && source_hardware_addr.0 == FW_MAC =>
                {
                    Ok(Port0::ArpRequest)
                }
                a => Err(format!("ARP {a:?}")),
            }
        }
        EthernetProtocol::Ipv4 => {
            if e.dst_addr().0 != PEER_MAC {
                return Err(format!("IPv4 to {}", e.dst_addr()));
            }
            let caps = ChecksumCapabilities::default();
            let i = Ipv4Packet::new_checked(e.payload()).map_err(|e| format!("ipv4: {e}"))?;
            let ir = Ipv4Repr::parse(&i, &caps).map_err(|e| format!("ipv4 header: {e}"))?;
            if ir.src_addr != Ipv4Address::from(FW_IP)
                || ir.dst_addr != Ipv4Address::from(PEER_IP)
                || ir.next_header != IpProtocol::Tcp
            {
                return Err(format!("ipv4 {ir:?}"));
            }
            let t = TcpPacket::new_checked(i.payload()).map_err(|e| format!("tcp: {e}"))?;
            let tr = TcpRepr::parse(
                &t,
                &IpAddress::Ipv4(ir.src_addr),
                &IpAddress::Ipv4(ir.dst_addr),
                &caps,
            )
            .map_err(|e| format!("tcp header/checksum: {e}"))?;
            if tr.dst_port != PEER_PORT {
                return Err(format!("to port {}", tr.dst_port));
            }
            if tr.control != TcpControl::Syn {
                return Ok(Port0::OtherTcp {
                    control: tr.control,
                    seq: tr.seq_number.0 as u32,
                    ack: tr.ack_number.map(|a| a.0 as u32),
                    payload: tr.payload.to_vec(),
                });
            }
            if tr.ack_number.is_some() {
                return Err(format!("SYN with ACK: {tr:?}"));
            }
            if tr.dst_port != PEER_PORT || tr.src_port == 0 {
                return Err(format!("ports {} -> {}", tr.src_port, tr.dst_port));
            }
            if tr.max_seg_size != Some(EXPECTED_MSS) {
                return Err(format!("MSS option {:?}", tr.max_seg_size));
            }
            if !tr.payload.is_empty() {
                return Err("SYN with payload".into());
            }
            Ok(Port0::Syn {
                port: tr.src_port,
                iss: tr.seq_number.0 as u32,
            })
        }
        t => Err(format!("ethertype {t}")),
    }
}

/// A TCP segment from the firmware to the peer that is not a SYN, with the
/// firmware's port and ISS from its SYN.
pub struct FwSegment {
    pub fw_port: u16,
    pub fw_iss: u32,
    pub control: TcpControl,
    pub seq: u32,
    pub ack: Option<u32>,
    pub payload: Vec<u8>,
}

impl FwSegment {
    /// Appends the payload to `stream`, the firmware's octets from its
    /// ISS + 1, when it carries the next ones (not a retransmission).
    pub fn extend_stream(&self, stream: &mut Vec<u8>) {
        let off = self.seq.wrapping_sub(self.fw_iss.wrapping_add(1)) as usize;
        if !self.payload.is_empty() && off == stream.len() {
            stream.extend_from_slice(&self.payload);
        }
    }
}

/// The peer's side of the connection setup on port 0, written once for the
/// tests in which the firmware connects (`board_fw.rs`, `board_rdma.rs`):
/// reads PHY 0's frames (FCS checked, parsed by [`port0_frame`]), answers
/// ARP requests with [`arp_reply`] and every SYN with [`syn_ack`] (a
/// retransmitted SYN must repeat the first one's port and ISS), and hands
/// every other TCP segment to the test, which scripts MPA and data.
#[derive(Default)]
pub struct Peer {
    pub arp_requests: u32,
    pub syns: u32,
    /// TCP segments other than SYNs handed to the test (RSTs included).
    pub other_segments: u32,
    /// The firmware's (port, ISS), from its SYN.
    pub fw_tcp: Option<(u16, u32)>,
    /// The board clock when the first SYN was read.
    pub first_syn_at: Option<u64>,
}

impl Peer {
    /// Pops PHY 0's frames, answering ARP requests and SYNs, up to the
    /// next other TCP segment; `None` when PHY 0 has no frame left. Panics
    /// on a bad FCS or preamble, a frame [`port0_frame`] rejects, a SYN
    /// that differs from the first one, or a segment before any SYN.
    pub fn next_segment(&mut self, rig: &mut Rig) -> Option<FwSegment> {
        while let Some(f) = rig.phy[0].received.pop_front() {
            assert!(f.ok, "bad FCS/preamble on port 0: {:02x?}", f.data);
            match port0_frame(&f.data) {
                Ok(Port0::ArpRequest) => {
                    self.arp_requests += 1;
                    rig.phy[0].send(&arp_reply());
                }
                Ok(Port0::Syn { port, iss }) => {
                    self.syns += 1;
                    if let Some(first) = self.fw_tcp {
                        assert_eq!(first, (port, iss), "a retransmitted SYN differs");
                    }
                    self.fw_tcp = Some((port, iss));
                    self.first_syn_at.get_or_insert(rig.core_cycles);
                    // The peer answers every SYN (a retransmission too).
                    rig.phy[0].send(&syn_ack(port, iss));
                }
                Ok(Port0::OtherTcp {
                    control,
                    seq,
                    ack,
                    payload,
                }) => {
                    self.other_segments += 1;
                    let (fw_port, fw_iss) = self.fw_tcp.expect("a TCP segment before the SYN");
                    return Some(FwSegment {
                        fw_port,
                        fw_iss,
                        control,
                        seq,
                        ack,
                        payload,
                    });
                }
                Err(e) => panic!("frame on port 0: {e}: {:02x?}", f.data),
            }
        }
        None
    }
}
