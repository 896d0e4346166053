//! Rig code shared by the board co-sim tests that talk to the board's UDP
//! host bridge through PHY 1's pins (`board_udp_bus.rs`, `board_fw.rs`):
//! the addresses, and the host-side framing of bridge datagrams built and
//! parsed by smoltcp (the independent reference).
#![allow(dead_code)]

use rnic_wire::abi::bridge::BRIDGE_PORT;
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpAddress, IpProtocol,
    Ipv4Address, Ipv4Packet, Ipv4Repr, UdpPacket, UdpRepr,
};

pub const BOARD_MAC: [u8; 6] = [0x02, 0x52, 0x42, 0x00, 0x00, 0x02];
pub const BOARD_IP: [u8; 4] = [10, 0, 0, 2];
pub const HOST_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
pub const HOST_IP: [u8; 4] = [10, 0, 0, 1];
/// The simulated host's UDP port (the real socket's port is not used on
/// the simulated wire).
pub const HOST_PORT: u16 = 40_000;

/// A datagram from the host to the board as an Ethernet frame (smoltcp).
pub fn to_board(payload: &[u8]) -> Vec<u8> {
    let caps = ChecksumCapabilities::default();
    let (s, d) = (Ipv4Address::from(HOST_IP), Ipv4Address::from(BOARD_IP));
    let mut f = vec![0u8; 14 + 20 + 8 + payload.len()];
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    EthernetRepr {
        src_addr: EthernetAddress(HOST_MAC),
        dst_addr: EthernetAddress(BOARD_MAC),
        ethertype: EthernetProtocol::Ipv4,
    }
    .emit(&mut e);
    let mut i = Ipv4Packet::new_unchecked(e.payload_mut());
    Ipv4Repr {
        src_addr: s,
        dst_addr: d,
        next_header: IpProtocol::Udp,
        payload_len: 8 + payload.len(),
        hop_limit: 64,
    }
    .emit(&mut i, &caps);
    let mut u = UdpPacket::new_unchecked(i.payload_mut());
    UdpRepr {
        src_port: HOST_PORT,
        dst_port: BRIDGE_PORT,
    }
    .emit(
        &mut u,
        &IpAddress::Ipv4(s),
        &IpAddress::Ipv4(d),
        payload.len(),
        |p| p.copy_from_slice(payload),
        &caps,
    );
    f
}

/// A frame from the board, read by smoltcp: Ethernet board → host, IPv4
/// (header checksum verified), UDP from `BRIDGE_PORT` to the host's port.
/// Returns the UDP payload.
pub fn from_board(f: &[u8]) -> Result<Vec<u8>, String> {
    let e = EthernetFrame::new_checked(f).map_err(|e| format!("ethernet: {e}"))?;
    if e.dst_addr().0 != HOST_MAC || e.src_addr().0 != BOARD_MAC {
        return Err(format!("addresses {} -> {}", e.src_addr(), e.dst_addr()));
    }
    if e.ethertype() != EthernetProtocol::Ipv4 {
        return Err(format!("ethertype {}", e.ethertype()));
    }
    let caps = ChecksumCapabilities::default();
    let i = Ipv4Packet::new_checked(e.payload()).map_err(|e| format!("ipv4: {e}"))?;
    let ir = Ipv4Repr::parse(&i, &caps).map_err(|e| format!("ipv4 header: {e}"))?;
    if ir.src_addr != Ipv4Address::from(BOARD_IP)
        || ir.dst_addr != Ipv4Address::from(HOST_IP)
        || ir.next_header != IpProtocol::Udp
    {
        return Err(format!("ipv4 {ir:?}"));
    }
    let u = UdpPacket::new_checked(i.payload()).map_err(|e| format!("udp: {e}"))?;
    let ur = UdpRepr::parse(
        &u,
        &IpAddress::Ipv4(ir.src_addr),
        &IpAddress::Ipv4(ir.dst_addr),
        &caps,
    )
    .map_err(|e| format!("udp header: {e}"))?;
    if ur.src_port != BRIDGE_PORT || ur.dst_port != HOST_PORT {
        return Err(format!("udp ports {ur:?}"));
    }
    Ok(u.payload().to_vec())
}
