//! `ping` of a Verilated node: an ICMP Echo Request fed into `mac_rx_*`
//! goes through `rx_check` (IPv4 header checked, not TCP: to the firmware)
//! and the exception queue to the real firmware (`rnic_fw::icmp`), whose
//! Echo Reply leaves on `raw_tx_*`. Frames are built and checked with
//! smoltcp (`rnic_wire::net` is `smoltcp::wire`), independently of the
//! firmware's code.

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::fw::{Config, Firmware};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_wire::abi::context::ExceptionReason;
use rnic_wire::abi::csr;
use rnic_wire::net::{
    ChecksumCapabilities, EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr,
    Icmpv4Packet, Icmpv4Repr, IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr,
};

const MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
const IP: [u8; 4] = [10, 0, 0, 1];
const PEER_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];
const PEER_IP: [u8; 4] = [10, 0, 0, 2];

type Fw = Firmware<CoSimHal>;

/// A node with the host's configuration written over BAR0, and the firmware
/// started on it.
fn setup() -> (Rc<RefCell<FwNode>>, Fw) {
    let node = FwNode::shared();
    let host = HostCsr { node: node.clone() };
    host.write(
        csr::MAC_LO,
        u32::from_le_bytes([MAC[0], MAC[1], MAC[2], MAC[3]]),
    );
    host.write(csr::MAC_HI, u16::from_le_bytes([MAC[4], MAC[5]]) as u32);
    host.write(csr::IPV4_ADDR, u32::from_be_bytes(IP));
    host.write(csr::IPV4_NETMASK, 0xFFFF_FF00);
    host.write(csr::IPV4_GATEWAY, u32::from_be_bytes([10, 0, 0, 254]));
    host.write(csr::MTU, 1500);
    host.write(csr::CTRL, csr::CTRL_ENABLE);
    let fw = Firmware::new(CoSimHal::new(node.clone()), Config::default());
    (node, fw)
}

/// The Echo Request `ping` sends: identifier, sequence number, `n` octets
/// of data, padded to the Ethernet minimum as a MAC delivers it.
fn echo_request(seq: u16, data: &[u8]) -> Vec<u8> {
    let icmp = Icmpv4Repr::EchoRequest {
        ident: 0x0BAD,
        seq_no: seq,
        data,
    };
    let ipr = Ipv4Repr {
        src_addr: Ipv4Address::from(PEER_IP),
        dst_addr: Ipv4Address::from(IP),
        next_header: IpProtocol::Icmp,
        payload_len: icmp.buffer_len(),
        hop_limit: 64,
    };
    let mut f = vec![0u8; 14 + 20 + icmp.buffer_len()];
    EthernetRepr {
        src_addr: EthernetAddress(PEER_MAC),
        dst_addr: EthernetAddress(MAC),
        ethertype: EthernetProtocol::Ipv4,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut f[..]));
    let caps = ChecksumCapabilities::default();
    ipr.emit(&mut Ipv4Packet::new_unchecked(&mut f[14..]), &caps);
    icmp.emit(&mut Icmpv4Packet::new_unchecked(&mut f[34..]), &caps);
    f.resize(f.len().max(60), 0);
    f
}

/// Feeds `f` into the core's MAC RX and returns the exception-queue depth.
fn receive(node: &Rc<RefCell<FwNode>>, f: Vec<u8>) -> u64 {
    node.borrow_mut().mac_rx.push(f, false);
    node.borrow_mut().drain_rx(300);
    node.borrow().core.get_exc_count()
}

/// Polls the firmware and runs the core until the raw TX is out; returns
/// the frames the node sent.
fn answer(node: &Rc<RefCell<FwNode>>, fw: &mut Fw) -> Vec<Vec<u8>> {
    fw.poll();
    node.borrow_mut().ticks(400);
    node.borrow_mut()
        .tx_frames
        .drain(..)
        .map(|f| f.data)
        .collect()
}

/// A standard ping (56 octets of data) and the largest a 1500-octet MTU
/// carries (1472) reach the firmware as `NoMatch` exceptions and are
/// answered with one Echo Reply each: same identifier, sequence number and
/// data, valid checksums (smoltcp verifies both), TTL 64, to the sender's
/// MAC. A request with a bad IPv4 header checksum is dropped by the RTL
/// (never reaches the firmware); one with a bad ICMP checksum reaches it
/// and gets no reply.
#[test]
fn ping_is_answered_by_the_firmware() {
    let (node, mut fw) = setup();
    let caps = ChecksumCapabilities::default();
    for (seq, n) in [(1u16, 56usize), (2, 1472)] {
        let data: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
        assert_eq!(receive(&node, echo_request(seq, &data)), 1);
        assert_eq!(
            node.borrow().core.get_exc_reason(),
            ExceptionReason::NoMatch as u64
        );
        let c0 = node.borrow().core.cycle();
        let out = answer(&node, &mut fw);
        println!(
            "Echo Request with {n} octets → reply: {} clocks of firmware poll and raw TX",
            node.borrow().core.cycle() - c0
        );
        assert_eq!(out.len(), 1, "one reply");
        assert_eq!(node.borrow().core.get_exc_count(), 0, "popped");
        let ef = EthernetFrame::new_checked(&out[0][..]).unwrap();
        assert_eq!(ef.dst_addr(), EthernetAddress(PEER_MAC));
        assert_eq!(ef.src_addr(), EthernetAddress(MAC));
        assert_eq!(ef.ethertype(), EthernetProtocol::Ipv4);
        let ipp = Ipv4Packet::new_checked(ef.payload()).unwrap();
        let ipr = Ipv4Repr::parse(&ipp, &caps).expect("valid IPv4 header");
        assert_eq!(
            ipr,
            Ipv4Repr {
                src_addr: Ipv4Address::from(IP),
                dst_addr: Ipv4Address::from(PEER_IP),
                next_header: IpProtocol::Icmp,
                payload_len: 8 + n,
                hop_limit: 64,
            }
        );
        let icmp = Icmpv4Repr::parse(&Icmpv4Packet::new_checked(ipp.payload()).unwrap(), &caps)
            .expect("valid ICMP checksum");
        assert_eq!(
            icmp,
            Icmpv4Repr::EchoReply {
                ident: 0x0BAD,
                seq_no: seq,
                data: &data,
            }
        );
    }
    assert_eq!(fw.stats().icmp.echo_replies, 2);

    let mut bad_ip = echo_request(3, &[0x55; 56]);
    bad_ip[24] ^= 0x01;
    assert_eq!(receive(&node, bad_ip), 0, "dropped by rx_check");
    assert!(answer(&node, &mut fw).is_empty());
    let mut bad_icmp = echo_request(4, &[0x55; 56]);
    bad_icmp[50] ^= 0x01;
    assert_eq!(receive(&node, bad_icmp), 1, "reaches the firmware");
    assert!(answer(&node, &mut fw).is_empty(), "no reply");
    assert_eq!(node.borrow().core.get_exc_count(), 0, "popped");
    assert_eq!(fw.stats().icmp.dropped, 1);
    assert_eq!(fw.stats().icmp.echo_replies, 2);
}
