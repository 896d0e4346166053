//! The ECPIX-5 top `rnic_ecpix5` at its one RGMII port: host-bridge
//! requests and answers interleaved with core traffic in both directions,
//! every octet checked.
//!
//! ```text
//!  test thread ──PHY pins──► rnic_ecpix5: RxSplit ─┬─► UdpBridge ─┐
//!   (bridge requests,                              └─► rnic_core ─┤
//!    core-bound frames)  ◄──PHY pins── TxArb ◄────────────────────┘
//! ```
//!
//! The test plays host and firmware at once, over the bridge (the top's
//! CPU held in reset, so the bridge's firmware window owns the core's
//! firmware port): BAR0 writes
//! and reads (`MMIO_*`), firmware-port reads and writes (`FW_*`) that load
//! raw frames into the core's `TX_DATA` window and send them (`TX_SEND`, as
//! the firmware sends ARP and TCP control frames). Between the requests
//! the wire carries a stream of core-bound frames (TCP segments to the
//! firmware's address, UDP to other ports, ARP for the RDMA address, a
//! bridge-port datagram to another MAC), queued on the PHY before each
//! request, so requests arrive among them and answers leave among the
//! core's raw frames. Checked: the split gives the core exactly the
//! core-bound frames and the bridge exactly the bridge datagrams and the
//! ARP request for its address, byte for byte and in order; every bridge
//! request is answered once, with the right value (BAR0 registers read
//! back as written, through the firmware port's mirror too, and constant
//! registers); every raw frame the core sends leaves the pins byte-exact;
//! the bridge answers ARP for 10.0.0.2 and nothing else; no frame is bad,
//! no FIFO overflows, no MAC underruns.

use rnic_wire::abi::bridge::Repr;
use rnic_wire::abi::context::port;
use rnic_wire::abi::csr;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, Ipv4Address,
};
use verilator_board::{ESig, Ecpix5Rig};

mod bridge_rig;
use bridge_rig::port0::{data_segment, FW_IP, FW_MAC, PEER_IP, PEER_MAC};
use bridge_rig::{from_board, to_board, BOARD_IP, BOARD_MAC, HOST_IP, HOST_MAC};

/// Core clocks a bridge answer may take under load (a few core frames
/// ahead of it on the wire, one core frame ahead of it at the arbiter).
const ANSWER_CYCLES: u64 = 40_000;

fn emit(r: &Repr) -> Vec<u8> {
    let mut b = vec![0u8; r.buffer_len()];
    r.emit(&mut b).unwrap();
    b
}

/// An ARP request from `sender` (MAC, IP) for `target`.
fn arp_request(smac: [u8; 6], sip: [u8; 4], target: [u8; 4]) -> Vec<u8> {
    let arp = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Request,
        source_hardware_addr: EthernetAddress(smac),
        source_protocol_addr: Ipv4Address::from(sip),
        target_hardware_addr: EthernetAddress([0; 6]),
        target_protocol_addr: Ipv4Address::from(target),
    };
    let mut f = vec![0u8; 14 + arp.buffer_len()];
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    EthernetRepr {
        src_addr: EthernetAddress(smac),
        dst_addr: EthernetAddress::BROADCAST,
        ethertype: EthernetProtocol::Arp,
    }
    .emit(&mut e);
    arp.emit(&mut ArpPacket::new_unchecked(e.payload_mut()));
    f.resize(60, 0);
    f
}

/// A UDP datagram from the peer to the firmware's address, to `dport`.
fn udp_to_fw(dport: u16, len: usize, salt: u8) -> Vec<u8> {
    let payload: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(3) ^ salt).collect();
    let mut f = Vec::new();
    f.extend_from_slice(&FW_MAC);
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&[0x08, 0x00]);
    let tot = (20 + 8 + len) as u16;
    let mut ip = vec![
        0x45,
        0,
        (tot >> 8) as u8,
        tot as u8,
        0,
        0,
        0x40,
        0,
        64,
        17,
        0,
        0,
    ];
    ip.extend_from_slice(&PEER_IP);
    ip.extend_from_slice(&FW_IP);
    let mut sum: u32 = ip
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(c[1]))
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    let sum = !(sum as u16);
    ip[10] = (sum >> 8) as u8;
    ip[11] = sum as u8;
    f.extend_from_slice(&ip);
    let ulen = (8 + len) as u16;
    f.extend_from_slice(&[0x9C, 0x40, (dport >> 8) as u8, dport as u8]);
    f.extend_from_slice(&[(ulen >> 8) as u8, ulen as u8, 0, 0]);
    f.extend_from_slice(&payload);
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

/// The core-bound frames queued before request `k`: TCP data to the
/// firmware's address (the RDMA stream's shape), UDP to other ports (the
/// RoCE port among them), ARP for the RDMA address, and a datagram to the
/// bridge's UDP port for another host's MAC... which the split must still
/// give the bridge (it routes by UDP port; the bridge drops it), so that
/// one is returned separately.
fn core_frames(k: usize) -> (Vec<Vec<u8>>, Option<Vec<u8>>) {
    let mut v = Vec::new();
    let len = 40 + (k * 97) % 1400;
    let payload: Vec<u8> = (0..len).map(|i| (i as u8) ^ (k as u8)).collect();
    v.push(data_segment(49_152, 1000 + k as u32, 7, &payload));
    v.push(udp_to_fw(4791, 16 + k % 200, k as u8));
    if k.is_multiple_of(3) {
        v.push(arp_request(PEER_MAC, PEER_IP, FW_IP));
    }
    v.push(udp_to_fw(0x5243, 30 + k % 50, !(k as u8)));
    let stray = (k % 4 == 1).then(|| {
        let mut f = to_board(&emit(&Repr::Hello {
            seq: 0xDEAD_0000 + k as u32,
        }));
        f[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x77]);
        f
    });
    (v, stray)
}

/// A raw frame the core sends (as the firmware's `TX_SEND`): to the peer,
/// EtherType 0x88B5 (local experimental), `len` octets in all.
fn raw_frame(k: usize, len: usize) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&PEER_MAC);
    f.extend_from_slice(&FW_MAC);
    f.extend_from_slice(&[0x88, 0xB5]);
    f.extend((0..len - 14).map(|i| (i as u8).wrapping_mul(5).wrapping_add(k as u8)));
    f
}

struct Host {
    rig: Ecpix5Rig,
    seq: u32,
    /// Every bridge frame the test put on the wire, in order.
    bridge_sent: Vec<Vec<u8>>,
    /// Every core-bound frame the test put on the wire, in order.
    core_sent: Vec<Vec<u8>>,
    /// Raw frames the core was told to send, in order.
    raw_sent: Vec<Vec<u8>>,
    /// Raw frames seen at the pins, in order.
    raw_seen: Vec<Vec<u8>>,
    /// Bridge answers taken, and ARP replies seen.
    answers: u64,
    arp_replies: Vec<Vec<u8>>,
    irqs: u64,
    k: usize,
}

impl Host {
    /// Sends one bridge request among a burst of core-bound frames and
    /// waits for its answer; returns it (opcode checked by the caller).
    fn request(&mut self, mk: impl Fn(u32) -> Repr<'static>) -> Repr<'static> {
        self.seq += 1;
        let seq = self.seq;
        let (frames, stray) = core_frames(self.k);
        self.k += 1;
        // Half of the burst before the request, half after it.
        let mid = frames.len() / 2;
        for f in &frames[..mid] {
            self.rig.phy.send(f);
            self.core_sent.push(f.clone());
        }
        if let Some(s) = stray {
            self.rig.phy.send(&s);
            self.bridge_sent.push(s);
        }
        let req = to_board(&emit(&mk(seq)));
        self.rig.phy.send(&req);
        self.bridge_sent.push(req);
        for f in &frames[mid..] {
            self.rig.phy.send(f);
            self.core_sent.push(f.clone());
        }
        let mut answer: Option<Vec<u8>> = None;
        let t0 = self.rig.core_cycles;
        while answer.is_none() {
            assert!(
                self.rig.core_cycles - t0 < ANSWER_CYCLES,
                "no answer to request {seq} within {ANSWER_CYCLES} core clocks"
            );
            self.rig.run_core_cycles(16);
            while let Some(f) = self.rig.phy.received.pop_front() {
                assert!(f.ok && !f.er, "bad frame from the board: {:02x?}", f.data);
                self.classify_tx(f.data, seq, &mut answer);
            }
        }
        self.answers += 1;
        let p = answer.unwrap();
        let r = Repr::parse(&p).expect("answer parses");
        assert_eq!(r.seq(), seq, "answer to the request just sent");
        // 'static: the answers checked carry no payload borrow.
        match r {
            Repr::MmioReadRsp { seq, value } => Repr::MmioReadRsp { seq, value },
            Repr::MmioWriteAck { seq } => Repr::MmioWriteAck { seq },
            Repr::FwReadRsp { seq, value } => Repr::FwReadRsp { seq, value },
            Repr::FwWriteAck { seq } => Repr::FwWriteAck { seq },
            Repr::HelloAck { seq, next_dev_seq } => Repr::HelloAck { seq, next_dev_seq },
            other => panic!("unexpected answer {other:?}"),
        }
    }

    /// A frame from the pins: a bridge answer, an ARP reply from the
    /// bridge, or one of the core's raw frames.
    fn classify_tx(&mut self, f: Vec<u8>, seq: u32, answer: &mut Option<Vec<u8>>) {
        if f[12..14] == [0x88, 0xB5] {
            self.raw_seen.push(f);
        } else if f[12..14] == [0x08, 0x06] {
            self.arp_replies.push(f);
        } else {
            let p = from_board(&f).unwrap_or_else(|e| panic!("frame from the board: {e}"));
            let r = Repr::parse(&p).expect("bridge message");
            if matches!(r, Repr::Irq { .. }) {
                // The core's interrupt line, reported by the bridge.
                self.irqs += 1;
                return;
            }
            assert_eq!(r.seq(), seq, "one answer per request, in order: {r:?}");
            assert!(answer.is_none(), "two answers to request {seq}");
            *answer = Some(p);
        }
    }

    fn mmio_write(&mut self, offset: u32, value: u32) {
        let r = self.request(|seq| Repr::MmioWrite { seq, offset, value });
        assert!(matches!(r, Repr::MmioWriteAck { .. }), "{r:?}");
    }

    fn mmio_read(&mut self, offset: u32) -> u32 {
        match self.request(|seq| Repr::MmioRead { seq, offset }) {
            Repr::MmioReadRsp { value, .. } => value,
            r => panic!("{r:?}"),
        }
    }

    fn fw_write(&mut self, offset: u32, value: u32) {
        let r = self.request(|seq| Repr::FwWrite { seq, offset, value });
        assert!(matches!(r, Repr::FwWriteAck { .. }), "{r:?}");
    }

    fn fw_read(&mut self, offset: u32) -> u32 {
        match self.request(|seq| Repr::FwRead { seq, offset }) {
            Repr::FwReadRsp { value, .. } => value,
            r => panic!("{r:?}"),
        }
    }

    /// The firmware's raw send: wait for `TX_SEND` not busy, the frame
    /// into `TX_DATA` (little-endian words), its length into `TX_SEND`.
    fn send_raw(&mut self, frame: Vec<u8>) {
        let mut polls = 0;
        while self.fw_read(port::TX_SEND) & (1 << 31) != 0 {
            polls += 1;
            assert!(polls < 20, "TX_SEND stays busy");
        }
        for (i, w) in frame.chunks(4).enumerate() {
            let mut b = [0u8; 4];
            b[..w.len()].copy_from_slice(w);
            self.fw_write(port::TX_DATA + 4 * i as u32, u32::from_le_bytes(b));
        }
        self.fw_write(port::TX_SEND, frame.len() as u32);
        self.raw_sent.push(frame);
    }
}

#[test]
fn bridge_and_core_share_the_port() {
    let mut h = Host {
        rig: Ecpix5Rig::new(60),
        seq: 0,
        bridge_sent: Vec::new(),
        core_sent: Vec::new(),
        raw_sent: Vec::new(),
        raw_seen: Vec::new(),
        answers: 0,
        arp_replies: Vec::new(),
        irqs: 0,
        k: 0,
    };
    h.rig.trace_from_env("board_ecpix5");
    // The test is the firmware: hold the top's CPU in reset, which gives
    // the bridge's firmware window the core's firmware port (BAR0
    // `CPU_CTL.HOLD`, hw/src/board/cpu_port.rs).
    h.mmio_write(
        rnic_wire::abi::csr::CPU_CTL,
        rnic_wire::abi::csr::CPU_CTL_HOLD,
    );

    // Constant registers, BAR0 written and read back, the network
    // configuration through the firmware port's mirror.
    assert_eq!(h.mmio_read(csr::ID), csr::ID_VALUE);
    // ARP for the bridge's address reaches the bridge (which answers), for
    // the RDMA address (among the core-bound frames) the core.
    let arp_br = arp_request(HOST_MAC, HOST_IP, BOARD_IP);
    h.rig.phy.send(&arp_br);
    h.bridge_sent.push(arp_br);
    assert_eq!(h.fw_read(port::CLOCK_KHZ), 62_500);
    assert_eq!(h.fw_read(port::LIM_MTU), 1500);
    let ip = u32::from_be_bytes(FW_IP);
    h.mmio_write(csr::IPV4_ADDR, ip);
    h.mmio_write(csr::IPV4_NETMASK, 0xFFFF_FF00);
    h.mmio_write(csr::MTU, 1500);
    // the datapath takes received frames once enabled (CTRL_ENABLE)
    h.mmio_write(csr::CTRL, csr::CTRL_ENABLE);
    assert_eq!(h.mmio_read(csr::IPV4_ADDR), ip);
    assert_eq!(h.mmio_read(csr::IPV4_NETMASK), 0xFFFF_FF00);
    assert_eq!(h.fw_read(port::CFG_IPV4), ip);

    // Raw frames from the core, sent while the bridge answers.
    for (k, len) in [60usize, 64, 129, 300, 61].into_iter().enumerate() {
        h.send_raw(raw_frame(k, len));
        assert_eq!(h.mmio_read(csr::IPV4_ADDR), ip, "BAR0 under load");
    }

    // Drain: everything sent has arrived and left.
    let done = h.rig.run_until(200_000, |r| {
        r.phy.idle()
            && r.phy.received.is_empty()
            && r.board.get(ESig::CoreValid) == 0
            && r.board.get(ESig::BridgeValid) == 0
    });
    assert!(done, "the wire did not go quiet");
    // The last frame's tail through the MAC, the CDC and the split.
    h.rig.run_core_cycles(2_000);
    while let Some(f) = h.rig.phy.received.pop_front() {
        assert!(f.ok && !f.er);
        let mut none = None;
        h.classify_tx(f.data, 0, &mut none);
        assert!(none.is_none(), "an answer after the last request");
    }

    // The split: byte-exact, in order, each frame to its side only.
    let to_core: Vec<_> = h.rig.to_core.drain(..).collect();
    let to_bridge: Vec<_> = h.rig.to_bridge.drain(..).collect();
    assert!(
        to_core.iter().chain(&to_bridge).all(|(_, bad)| !bad),
        "no bad frame"
    );
    let core: Vec<Vec<u8>> = to_core.into_iter().map(|(f, _)| f).collect();
    let bridge: Vec<Vec<u8>> = to_bridge.into_iter().map(|(f, _)| f).collect();
    assert_eq!(core.len(), h.core_sent.len(), "frames to the core");
    for (i, (got, want)) in core.iter().zip(&h.core_sent).enumerate() {
        assert_eq!(got, want, "core frame {i}");
    }
    assert_eq!(bridge.len(), h.bridge_sent.len(), "frames to the bridge");
    for (i, (got, want)) in bridge.iter().zip(&h.bridge_sent).enumerate() {
        assert_eq!(got, want, "bridge frame {i}");
    }

    // The core's raw frames, byte-exact and in order, among the answers.
    assert_eq!(h.raw_seen, h.raw_sent, "raw frames at the pins");

    // One ARP reply, from the bridge, for 10.0.0.2 to the host.
    assert_eq!(
        h.arp_replies.len(),
        1,
        "ARP replies: {:02x?}",
        h.arp_replies
    );
    let e = EthernetFrame::new_checked(&h.arp_replies[0][..]).unwrap();
    let a = ArpRepr::parse(&ArpPacket::new_checked(e.payload()).unwrap()).unwrap();
    match a {
        ArpRepr::EthernetIpv4 {
            operation,
            source_hardware_addr,
            source_protocol_addr,
            target_protocol_addr,
            ..
        } => {
            assert_eq!(operation, ArpOperation::Reply);
            assert_eq!(source_hardware_addr.0, BOARD_MAC);
            assert_eq!(source_protocol_addr, Ipv4Address::from(BOARD_IP));
            assert_eq!(target_protocol_addr, Ipv4Address::from(HOST_IP));
        }
        _ => panic!("{a:?}"),
    }

    let b = &h.rig.board;
    assert_eq!(b.get(ESig::SplitOverflow), 0, "split FIFO overflow");
    assert_eq!(b.get(ESig::TxCntUnderrun), 0, "MAC TX underrun");
    assert_eq!(b.get(ESig::BridgeCntNak), 0, "NAKs");
    assert_eq!(
        b.get(ESig::TxCntFrames),
        h.answers + h.raw_seen.len() as u64 + 1 + h.irqs,
        "frames sent: answers, raw frames, the ARP reply, IRQ messages"
    );
    eprintln!(
        "board_ecpix5: {} bridge requests answered, {} core-bound and {} bridge frames split, \
         {} raw frames sent by the core, {} core clocks, {} evaluations",
        h.answers,
        core.len(),
        bridge.len(),
        h.raw_seen.len(),
        h.rig.core_cycles,
        h.rig.evals
    );
}
