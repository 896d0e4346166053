//! Rig code shared by the board co-sim tests that talk to the board's UDP
//! host bridge through PHY 1's pins (`board_udp_bus.rs`, `board_fw.rs`,
//! `board_rdma.rs`): the addresses, the host-side framing of bridge
//! datagrams built and parsed by smoltcp (the independent reference), and
//! the pump between a host socket and PHY 1; the scripted peer on port 0
//! ([`port0`]) and the firmware over the bridge ([`fw`]).
#![allow(dead_code)]

pub mod fw;
pub mod port0;

use std::net::{SocketAddr, UdpSocket};

use rnic_wire::abi::bridge::Repr;
use verilator_board::Rig;

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

/// Carries bridge datagrams between a host-side UDP socket (the `UdpBus`
/// connects to [`Pump::addr`]) and PHY 1's pins, and times the host's
/// requests (BAR0 and firmware window) to their answers in board clocks.
pub struct Pump {
    sock: UdpSocket,
    host: Option<SocketAddr>,
    pending: Option<(u64, u8)>,
    /// Round trips: (request opcode, board clocks).
    pub rtts: Vec<(u8, u64)>,
    buf: Vec<u8>,
}

impl Default for Pump {
    fn default() -> Self {
        Self::new()
    }
}

impl Pump {
    pub fn new() -> Pump {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_nonblocking(true).unwrap();
        Pump {
            sock,
            host: None,
            pending: None,
            rtts: Vec::new(),
            buf: vec![0u8; 2048],
        }
    }

    /// The address the host's `UdpBus` sends to.
    pub fn addr(&self) -> SocketAddr {
        self.sock.local_addr().unwrap()
    }

    /// Moves what the host sent onto PHY 1 and what the board sent on PHY
    /// 1 to the host. Panics on a bad FCS, a frame that is not a bridge
    /// datagram to the host, or a NAK.
    pub fn run(&mut self, rig: &mut Rig) {
        while let Ok((n, from)) = self.sock.recv_from(&mut self.buf) {
            self.host = Some(from);
            rig.phy[1].send(&to_board(&self.buf[..n]));
            // Host requests (BAR0 and firmware window), not DMA completions.
            if n > 3 && matches!(self.buf[3], 0x01 | 0x02 | 0x05 | 0x06) {
                self.pending.get_or_insert((rig.core_cycles, self.buf[3]));
            }
        }
        while let Some(f) = rig.phy[1].received.pop_front() {
            assert!(f.ok, "bad FCS/preamble from the board: {:02x?}", f.data);
            let p = from_board(&f.data).unwrap_or_else(|e| panic!("frame from the board: {e}"));
            let r = Repr::parse(&p);
            assert!(
                !matches!(r, Ok(Repr::Nak { .. })),
                "NAK from the board: {r:?}"
            );
            let answer = matches!(
                r,
                Ok(Repr::MmioReadRsp { .. }
                    | Repr::MmioWriteAck { .. }
                    | Repr::FwReadRsp { .. }
                    | Repr::FwWriteAck { .. })
            );
            self.sock.send_to(&p, self.host.expect("a host")).unwrap();
            if answer {
                if let Some((t, op)) = self.pending.take() {
                    self.rtts.push((op, rig.core_cycles - t));
                }
            }
        }
    }
}
