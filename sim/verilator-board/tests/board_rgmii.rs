//! The board top `rnic_versa5g` in Verilator, driven at its RGMII pins by
//! the PHY model of `verilator_board::Phy` (4 bits on each edge of a
//! 125 MHz `rxc` that is not locked to the board's core clock: ±100 ppm and
//! an arbitrary phase).
//!
//! * Port 0 (PHY 0 → IDDR → MAC RX → CDC → the core's `mac_rx_*`): every
//!   frame arrives octet for octet in the stream the core receives, with
//!   `fcs_bad` exactly on the frames that had a bit flipped on `rxd`; the
//!   core's own counters (`cnt_rx_ok`, `cnt_rx_bad_fcs`) stay 0 until a host
//!   enables the device (BAR0 `CTRL_ENABLE`, written through the bridge),
//!   then agree; LEDs 3 and 4.
//! * Port 1 (the UDP host bridge): ARP requests built by smoltcp, short and
//!   padded to 1514 octets, are each answered by one ARP reply that the PHY
//!   model decodes from `txd`/`tx_ctl` (preamble, SFD, FCS checked with the
//!   test side's own bitwise CRC-32) and smoltcp parses; a request with a
//!   flipped bit gets no answer. The replies leave through the transmit
//!   FIFO (62.5 MHz core clock → 125 MHz transmit clock): back-to-back
//!   minimum-size replies each arrive as one unbroken `tx_ctl` burst with at
//!   least the 12-octet inter-frame gap between them.
//!
//! References: frames and their FCS are made by the test (`eth_fcs`, a
//! bitwise CRC-32 independent of the RTL's byte-wide one); ARP by smoltcp.

use rnic_wire::abi::bridge::Repr;
use rnic_wire::abi::csr;
use rnic_wire::rng::{Rng, XorShift64Star};
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, Ipv4Address,
};
use verilator_board::{Rig, Sig, CLK_HALF_FS, IPG, PREAMBLE_LEN};

mod bridge_rig;
use bridge_rig::{from_board, to_board, BOARD_IP, BOARD_MAC, HOST_IP, HOST_MAC};

/// BAR0 `CTRL_ENABLE` written through the UDP host bridge on port 1 (a
/// datagram built by smoltcp), as a host does before the core takes
/// frames; waits for the bridge's acknowledgement.
fn enable_through_the_bridge(rig: &mut Rig) {
    let req = Repr::MmioWrite {
        seq: 1,
        offset: csr::CTRL,
        value: csr::CTRL_ENABLE,
    };
    let mut b = vec![0u8; req.buffer_len()];
    req.emit(&mut b).unwrap();
    rig.phy[1].send(&to_board(&b));
    let acked = rig.run_until(100_000, |r| {
        r.phy[1].received.iter().any(|f| {
            from_board(&f.data)
                .is_ok_and(|p| matches!(Repr::parse(&p), Ok(Repr::MmioWriteAck { seq: 1 })))
        })
    });
    assert!(acked, "the bridge acknowledged the CTRL_ENABLE write");
    rig.phy[1].received.clear();
}

/// Core clock cycles to put `octets` wire octets through RGMII (one octet
/// per 8 ns = half a 62.5 MHz core cycle), with 10 % and a fixed margin for
/// latency.
fn budget(octets: usize) -> u64 {
    (octets as u64) * 11 / 20 + 2_000
}

#[test]
fn port0_frames_from_the_pins_reach_the_core_and_bad_fcs_is_flagged() {
    let t0 = std::time::Instant::now();
    // PHY 0 100 ppm slower than nominal, PHY 1 100 ppm faster.
    let mut rig = Rig::new(0, [100, -100]);
    rig.trace_from_env("port0_rgmii");
    // Test data: xorshift64*, reproducible.
    let mut rng = Rng::<XorShift64Star>::from_state(0x5eed_1234_5678_9abc);
    // Frame lengths without FCS: the minimum (60), around beat boundaries,
    // and the maximum untagged frame (1514).
    let sizes = [
        60usize, 61, 63, 64, 65, 71, 72, 100, 257, 512, 1000, 1513, 1514,
    ];
    // (frame, bit flipped on rxd or None)
    let mut sent: Vec<(Vec<u8>, Option<usize>)> = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let mut f = rng.bytes(n);
        f[0] &= 0xFE; // unicast destination, as a real frame
        sent.push((f.clone(), None));
        // Every third size also once with a bit flipped: first octet,
        // middle, last octet before the FCS.
        if i % 3 == 0 {
            let bit = match i % 9 {
                0 => 3,
                3 => n * 4 + 5,
                _ => n * 8 - 1,
            };
            sent.push((f, Some(bit)));
        }
    }
    let n = sent.len();
    let send_all = |rig: &mut Rig| {
        let mut octets = 0;
        for (f, flip) in &sent {
            match flip {
                None => rig.phy[0].send(f),
                Some(b) => rig.phy[0].send_flipped(f, *b),
            }
            octets += f.len() + PREAMBLE_LEN + 1 + 4 + IPG;
        }
        let ok = rig.run_until(budget(octets), |r| r.rx_stream[0].len() >= n);
        assert!(
            ok,
            "only {} of {n} frames reached the core within {} core cycles",
            rig.rx_stream[0].len(),
            budget(octets)
        );
        rig.run_core_cycles(200);
        assert_eq!(rig.rx_stream[0].len(), n, "extra frames delivered");
        octets
    };
    // Before a host enables the device (BAR0 CTRL_ENABLE) the frames reach
    // the core's MAC input but not its datapath.
    let octets = send_all(&mut rig);
    assert_eq!(rig.board.get(Sig::CoreCntRxOk), 0, "taken while disabled");
    assert_eq!(rig.board.get(Sig::CoreCntRxBadFcs), 0);
    rig.rx_stream[0].clear();
    enable_through_the_bridge(&mut rig);
    let octets = octets + send_all(&mut rig);
    let mut bad = 0;
    for (i, ((f, flip), (got, fcs_bad))) in sent.iter().zip(&rig.rx_stream[0]).enumerate() {
        if flip.is_some() {
            bad += 1;
            assert!(
                *fcs_bad,
                "frame {i} ({} octets) with a flipped bit not flagged",
                f.len()
            );
            assert_eq!(got.len(), f.len(), "frame {i}: length");
        } else {
            assert!(!fcs_bad, "frame {i} ({} octets) flagged bad", f.len());
            assert_eq!(got, f, "frame {i} ({} octets) differs", f.len());
        }
    }
    // The core's MAC-level counters (its rx_fifo) agree.
    assert_eq!(rig.board.get(Sig::CoreCntRxOk), (n - bad) as u64);
    assert_eq!(rig.board.get(Sig::CoreCntRxBadFcs), bad as u64);
    assert_eq!(rig.board.get(Sig::CoreCntRxOverflow), 0);
    // LEDs (active low): 3 = port 0 activity, 4 = port 0 bad frame, 7 = no
    // error latch (no CDC overflow).
    let led = rig.board.get(Sig::Led);
    assert_eq!(led & (1 << 3), 0, "activity LED off");
    assert_eq!(led & (1 << 4), 0, "bad-frame LED off");
    assert_ne!(led & (1 << 7), 0, "error LED on");
    // Nothing was sent on port 0 (the echo is off) or port 1 (its one
    // answer, the bridge's acknowledgement, was taken above).
    assert!(rig.phy[0].received.is_empty() && rig.phy[1].received.is_empty());
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "port 0: {n} frames, {octets} wire octets, {} core cycles, {} evaluations, {:.1} s: {:.0} core cycles/s",
        rig.core_cycles,
        rig.evals,
        secs,
        rig.core_cycles as f64 / secs
    );
}

fn arp_request(target: [u8; 4], pad_to: usize) -> Vec<u8> {
    let r = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Request,
        source_hardware_addr: EthernetAddress(HOST_MAC),
        source_protocol_addr: Ipv4Address::from(HOST_IP),
        target_hardware_addr: EthernetAddress([0; 6]),
        target_protocol_addr: Ipv4Address::from(target),
    };
    let mut f = vec![0u8; (14 + r.buffer_len()).max(pad_to)];
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    EthernetRepr {
        src_addr: EthernetAddress(HOST_MAC),
        dst_addr: EthernetAddress::BROADCAST,
        ethertype: EthernetProtocol::Arp,
    }
    .emit(&mut e);
    r.emit(&mut ArpPacket::new_unchecked(e.payload_mut()));
    f
}

#[test]
fn port1_arp_through_the_pins_is_answered_once_per_good_request() {
    let t0 = std::time::Instant::now();
    let mut rig = Rig::new(0, [-100, 100]);
    rig.trace_from_env("port1_arp");
    // (pad to, flipped bit)
    let reqs: [(usize, Option<usize>); 6] = [
        (60, None),
        (1514, None),
        (60, Some(8 * 30 + 2)), // in the ARP sender IP: FCS error
        (64, None),
        (1514, Some(8 * 1000)), // in the padding: FCS error
        (1000, None),
    ];
    let good = reqs.iter().filter(|r| r.1.is_none()).count();
    let mut octets = 0;
    for (pad, flip) in reqs {
        let f = arp_request(BOARD_IP, pad);
        octets += f.len() + 24;
        match flip {
            None => rig.phy[1].send(&f),
            Some(b) => rig.phy[1].send_flipped(&f, b),
        }
    }
    let ok = rig.run_until(budget(octets + good * 90), |r| {
        r.phy[1].received.len() >= good && r.phy[1].idle()
    });
    rig.run_core_cycles(500);
    assert!(ok, "{} of {good} ARP replies", rig.phy[1].received.len());
    assert_eq!(
        rig.phy[1].received.len(),
        good,
        "one reply per good request"
    );
    for r in &rig.phy[1].received {
        assert!(r.ok, "reply with a bad preamble/SFD/FCS: {:02x?}", r.data);
        assert!(!r.er, "TX_ER set");
        assert_eq!(r.data.len(), 60, "padded to the minimum frame");
        let e = EthernetFrame::new_checked(&r.data[..]).unwrap();
        assert_eq!(e.dst_addr().0, HOST_MAC);
        assert_eq!(e.src_addr().0, BOARD_MAC);
        assert_eq!(e.ethertype(), EthernetProtocol::Arp);
        let a = ArpRepr::parse(&ArpPacket::new_checked(e.payload()).unwrap()).unwrap();
        assert_eq!(
            a,
            ArpRepr::EthernetIpv4 {
                operation: ArpOperation::Reply,
                source_hardware_addr: EthernetAddress(BOARD_MAC),
                source_protocol_addr: Ipv4Address::from(BOARD_IP),
                target_hardware_addr: EthernetAddress(HOST_MAC),
                target_protocol_addr: Ipv4Address::from(HOST_IP),
            }
        );
    }
    // Port 1's receive stream (into the bridge) flagged exactly the two
    // corrupted requests; the MAC TX sent exactly the replies.
    let flagged: Vec<bool> = rig.rx_stream[1].iter().map(|f| f.1).collect();
    assert_eq!(flagged, [false, false, true, false, true, false]);
    assert_eq!(rig.board.get(Sig::Tx1CntFrames), good as u64);
    assert_eq!(rig.board.get(Sig::Tx1CntUnderrun), 0);
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "port 1: {} requests, {} core cycles, {} evaluations, {:.1} s: {:.0} core cycles/s",
        reqs.len(),
        rig.core_cycles,
        rig.evals,
        secs,
        rig.core_cycles as f64 / secs
    );
}

/// Back-to-back minimum-size ARP requests make back-to-back minimum-size
/// replies: each crosses the transmit FIFO whole (one `tx_ctl` burst, good
/// FCS, no TX_ER), none underruns, and consecutive replies are at least the
/// inter-frame gap apart on the pins.
#[test]
fn port1_back_to_back_replies_cross_the_tx_fifo_whole() {
    let t0 = std::time::Instant::now();
    let mut rig = Rig::new(0, [0, 250]);
    rig.trace_from_env("port1_b2b");
    let n = 24;
    let mut octets = 0;
    for _ in 0..n {
        let f = arp_request(BOARD_IP, 60);
        octets += f.len() + 24;
        rig.phy[1].send(&f);
    }
    let ok = rig.run_until(budget(octets + n * 90), |r| {
        r.phy[1].received.len() >= n && r.phy[1].idle()
    });
    rig.run_core_cycles(500);
    assert!(ok, "{} of {n} ARP replies", rig.phy[1].received.len());
    assert_eq!(rig.phy[1].received.len(), n, "one reply per request");
    // One octet per transmit clock period (8 ns = 2 × CLK_HALF_FS).
    let octet_fs = 2 * CLK_HALF_FS;
    let wire = (PREAMBLE_LEN + 1 + 60 + 4) as u64;
    let mut min_gap = u64::MAX;
    let replies: Vec<_> = rig.phy[1].received.iter().cloned().collect();
    for (i, r) in replies.iter().enumerate() {
        assert!(
            r.ok,
            "reply {i}: bad preamble/SFD/FCS or split: {:02x?}",
            r.data
        );
        assert!(!r.er, "reply {i}: TX_ER");
        assert_eq!(r.data.len(), 60, "reply {i}: length");
        if i > 0 {
            let dt = (r.time - replies[i - 1].time) / octet_fs;
            assert!(
                dt >= wire + IPG as u64,
                "reply {i}: {dt} octet times after the previous one"
            );
            min_gap = min_gap.min(dt - wire);
        }
    }
    assert_eq!(rig.board.get(Sig::Tx1CntFrames), n as u64);
    assert_eq!(rig.board.get(Sig::Tx1CntUnderrun), 0);
    // Error LED (7, active low) off: no underrun, no CDC overflow.
    assert_ne!(rig.board.get(Sig::Led) & (1 << 7), 0, "error LED on");
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "port 1 back to back: {n} replies, smallest gap {min_gap} octets, {} core cycles, {} transmit cycles, {:.1} s: {:.0} core cycles/s",
        rig.core_cycles,
        rig.tx_cycles,
        secs,
        rig.core_cycles as f64 / secs
    );
}
