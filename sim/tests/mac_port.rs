//! MAC port adapters through the Verilated `rnic_core`: payloads of 0..=100
//! octets go in on `mac_rx_*` as in-order TCP segments of a programmed
//! fast-path connection (frames built by `rnic_wire::model::net`, i.e.
//! smoltcp), mixed with frames of an unknown connection and frames with a
//! bad FCS. Exactly the payloads of the good segments must come out of the
//! `rx_pay_*` stream, in order, with the sink's `ready` toggling at random;
//! the bad-FCS frames are dropped and counted; the unknown-connection
//! frames are queued whole for the firmware (reason `NoMatch`).

mod common;
use common::{program, seg_frame, ExcReader, PayTap, EP_A, EP_B, HDR_LEN, R_NO_MATCH};

use rnic_sim::mac_port::{MacRxPort, MacTxPort};
use rnic_sim::rng::Rng;
use rnic_wire::model::net::Endpoint;
use verilator_sys::rnic_core::Model;

/// No connection is programmed for this peer port.
const STRANGER: Endpoint = Endpoint {
    port: 40001,
    ..EP_B
};

fn run(gap: u64, ready_pct: u64, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut m = PayTap(Model::new());
    m.reset(4);
    let iss = 0xFFFF_FF80; // crosses the sequence-number wrap
    program(&mut m, 0, &EP_A, &EP_B, iss);
    let mut rx = MacRxPort::new(gap);
    let mut tx = MacTxPort::tap(); // the payload stream, not a MAC
    let mut seq = iss;
    let (mut want, mut strangers) = (Vec::new(), Vec::new());
    let (mut bad, mut sent) = (0u64, 0u64);
    for round in 0..4 {
        for len in 0..=100usize {
            let p = rng.bytes(len);
            if round > 0 && rng.chance(0.1) {
                // Bad FCS at the MAC: dropped, so the sequence number is
                // not consumed.
                rx.push(seg_frame(&EP_B, &EP_A, seq, &p), true);
                bad += 1;
            } else if round > 0 && rng.chance(0.05) {
                let f = seg_frame(&STRANGER, &EP_A, seq, &p);
                strangers.push(f.len());
                rx.push(f, false);
            } else {
                rx.push(seg_frame(&EP_B, &EP_A, seq, &p), false);
                seq = seq.wrapping_add(len as u32);
                want.push(p);
            }
            sent += 1;
        }
    }
    let mut exc = ExcReader::new(false);
    let mut excs = Vec::new();
    let mut got = Vec::new();
    let mut idle = 0;
    while idle < 500 {
        rx.drive(&mut m);
        let ready = rng.below(100) < ready_pct;
        tx.drive_ready(&mut m, ready);
        exc.drive(&mut m);
        m.eval();
        if let Some(f) = tx.sample(&m) {
            got.push(f);
            idle = 0;
        }
        m.tick();
        if let Some(f) = exc.after_tick(&m) {
            excs.push(f);
        }
        if rx.pending() == 0 {
            idle += 1;
        }
    }
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "payload {i}");
    }
    // Every stranger frame queued whole, in order, as NoMatch with no
    // connection.
    let lens: Vec<usize> = excs.iter().map(|e| e.bytes.len()).collect();
    assert_eq!(lens, strangers);
    assert!(excs
        .iter()
        .all(|e| e.reason == R_NO_MATCH && e.conn == 0xFFFF_FFFF));
    assert!(strangers.iter().all(|&l| l >= HDR_LEN));
    assert_eq!(m.get_cnt_rx_ok(), (want.len() + strangers.len()) as u64);
    assert_eq!(m.get_cnt_rx_fast(), want.len() as u64);
    assert_eq!(m.get_cnt_rx_exc(), strangers.len() as u64);
    assert_eq!(m.get_cnt_rx_exc_full(), 0);
    assert_eq!(m.get_cnt_rx_bad_fcs(), bad);
    assert_eq!(m.get_cnt_rx_overflow(), 0);
    assert_eq!(tx.errors(), 0);
    assert_eq!(rx.frames_sent, sent);
}

/// Idle beats between frames on a 10GbE wire: FCS (4 octets), preamble and
/// SFD (8) and the minimum inter-frame gap (12 octets), IEEE 802.3 §4.4.2.
const LINE_RATE_GAP: u64 = 3;

#[test]
fn payloads_0_to_100_octets_back_to_back_at_line_rate() {
    // The core's RX path keeps up with line rate, not with frames that
    // have no gap at all (docs/rtl.md "RX throughput"): its frame FIFO
    // would overflow by design.
    run(LINE_RATE_GAP, 100, 1);
}

#[test]
fn payloads_with_gaps_and_a_slow_sink() {
    // Slow enough to stall every payload, not so slow that the core's frame
    // FIFO overflows (that drops whole frames by design, counted apart).
    run(8, 60, 2);
}

#[test]
fn hold_only_between_frames() {
    // `drive(.., hold)` keeps ready high inside a frame.
    let mut m = PayTap(Model::new());
    m.reset(4);
    program(&mut m, 0, &EP_A, &EP_B, 1000);
    let mut rx = MacRxPort::new(0);
    let mut tx = MacTxPort::tap(); // the payload stream, not a MAC
    let p: Vec<u8> = (0..50).collect();
    rx.push(seg_frame(&EP_B, &EP_A, 1000, &p), false);
    let mut got = None;
    let mut readies = Vec::new();
    for c in 0..200 {
        rx.drive(&mut m);
        // Hold every other cycle.
        tx.drive(&mut m, c % 2 == 1);
        m.eval();
        if m.get_rx_pay_valid() != 0 {
            readies.push(m.get_rx_pay_ready());
        }
        if let Some(x) = tx.sample(&m) {
            got = Some(x);
        }
        m.tick();
    }
    assert_eq!(got.unwrap(), p);
    // 7 beats; once the first is taken the rest go at one per cycle.
    assert_eq!(readies.iter().filter(|&&r| r == 1).count(), 7);
    let first = readies.iter().position(|&r| r == 1).unwrap();
    assert!(readies[first..].iter().all(|&r| r == 1), "{readies:?}");
}
