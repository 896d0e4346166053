//! MAC port adapters through the Verilated `rnic_core`: frames of 0..=100
//! octets go in on `mac_rx_*` (some with a bad FCS) and must come out of the
//! `rx_pay_*` stream (store-and-forward of good frames, today) exactly as
//! sent, with the sink's `ready` toggling at random.

use std::ops::{Deref, DerefMut};

use rnic_sim::mac_port::{MacRxPort, MacTxPort};
use rnic_sim::rng::Rng;
use verilator_sys::rnic_core::Model;

/// `rnic_core` with its `rx_pay` stream tapped as a MAC-TX-shaped output.
struct PayTap(Model);
impl Deref for PayTap {
    type Target = Model;
    fn deref(&self) -> &Model {
        &self.0
    }
}
impl DerefMut for PayTap {
    fn deref_mut(&mut self) -> &mut Model {
        &mut self.0
    }
}
rnic_sim::impl_mac_tx_pins!(PayTap; get_rx_pay_data, get_rx_pay_keep, get_rx_pay_last,
    get_rx_pay_valid, set_rx_pay_ready);
rnic_sim::impl_mac_rx_pins!(PayTap);

fn run(gap: u64, ready_pct: u64, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut m = PayTap(Model::new());
    m.reset(4);
    let mut rx = MacRxPort::new(gap);
    let mut tx = MacTxPort::new();
    let mut sent = Vec::new();
    for round in 0..4 {
        for len in 0..=100usize {
            let f = rng.bytes(len);
            let bad = round > 0 && rng.chance(0.1);
            rx.push(f.clone(), bad);
            sent.push((f, bad));
        }
    }
    let want: Vec<&Vec<u8>> = sent.iter().filter(|(_, b)| !b).map(|(f, _)| f).collect();
    let mut got = Vec::new();
    let mut idle = 0;
    while idle < 500 {
        rx.drive(&mut m);
        let ready = rng.below(100) < ready_pct;
        tx.drive_ready(&mut m, ready);
        m.eval();
        if let Some(f) = tx.sample(&m) {
            got.push(f);
            idle = 0;
        }
        m.tick();
        if rx.pending() == 0 {
            idle += 1;
        }
    }
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, *w, "frame {i}");
    }
    assert_eq!(m.get_cnt_rx_ok(), want.len() as u64);
    assert_eq!(m.get_cnt_rx_bad_fcs(), (sent.len() - want.len()) as u64);
    assert_eq!(m.get_cnt_rx_overflow(), 0);
    assert_eq!(tx.errors(), 0);
    assert_eq!(rx.frames_sent, sent.len() as u64);
}

#[test]
fn frames_0_to_100_octets_round_trip_back_to_back() {
    run(0, 100, 1);
}

#[test]
fn frames_round_trip_with_gaps_and_a_slow_sink() {
    // Slow enough to stall every frame, not so slow that the core's frame
    // FIFO overflows (that drops whole frames by design, counted apart).
    run(8, 60, 2);
}

#[test]
fn hold_only_between_frames() {
    // `drive(.., hold)` keeps ready high inside a frame.
    let mut m = PayTap(Model::new());
    m.reset(4);
    let mut rx = MacRxPort::new(0);
    let mut tx = MacTxPort::new();
    let f: Vec<u8> = (0..50).collect();
    rx.push(f.clone(), false);
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
    assert_eq!(got.unwrap(), f);
    // 7 beats; once the first is taken the rest go at one per cycle.
    let first = readies.iter().position(|&r| r == 1).unwrap();
    assert!(readies[first..].iter().all(|&r| r == 1), "{readies:?}");
}
