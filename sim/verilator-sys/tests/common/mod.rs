//! Helpers shared by the Verilator tests: a deterministic generator, a MAC
//! RX driver and an `rx_pay` sink.
#![allow(dead_code)]

use verilator_sys::Model;

pub mod net;

/// xorshift64* from `rnic-wire`: deterministic, so failures reproduce.
pub type Rng = rnic_wire::rng::Rng<rnic_wire::rng::XorShift64Star>;

/// Beats `(data, keep, last)` of a frame: byte 0 in `data[7:0]`, `keep` the
/// valid bytes of the last beat (8 elsewhere); an empty frame is one beat
/// with `keep == 0`.
pub fn beats(frame: &[u8]) -> Vec<(u64, u64, bool)> {
    if frame.is_empty() {
        return vec![(0, 0, true)];
    }
    let n = frame.len().div_ceil(8);
    frame
        .chunks(8)
        .enumerate()
        .map(|(i, c)| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            (u64::from_le_bytes(b), c.len() as u64, i + 1 == n)
        })
        .collect()
}

/// Collects `rx_pay` frames and CRC pulses; call [`Sink::sample`] right
/// before each `tick`, after setting `rx_pay_ready`.
#[derive(Default)]
pub struct Sink {
    cur: Vec<u8>,
    pub frames: Vec<Vec<u8>>,
    pub crcs: Vec<u32>,
}

impl Sink {
    pub fn sample(&mut self, m: &Model) {
        if m.get_rx_pay_crc_valid() != 0 {
            self.crcs.push(m.get_rx_pay_crc() as u32);
        }
        if m.get_rx_pay_valid() != 0 && m.get_rx_pay_ready() != 0 {
            let d = m.get_rx_pay_data().to_le_bytes();
            let last = m.get_rx_pay_last() != 0;
            let k = if last {
                m.get_rx_pay_keep() as usize
            } else {
                8
            };
            assert!(k <= 8, "keep {k} out of range");
            self.cur.extend_from_slice(&d[..k]);
            if last {
                self.frames.push(std::mem::take(&mut self.cur));
            }
        }
    }
}

/// Sends frames on `mac_rx_*` (optionally with idle gaps and garbage in
/// unused lanes), with the sink's `ready` drawn per cycle, then drains.
pub fn run_frames(
    m: &mut Model,
    rng: &mut Rng,
    frames: &[(Vec<u8>, bool)],
    gap_pct: usize,
    ready_pct: usize,
    sink: &mut Sink,
) {
    let cycle = |m: &mut Model, rng: &mut Rng, sink: &mut Sink, ready_pct: usize| {
        m.set_rx_pay_ready(rng.percent(ready_pct) as u64);
        m.eval();
        sink.sample(m);
        m.tick();
    };
    for (frame, fcs_bad) in frames {
        for (d, k, last) in beats(frame) {
            while rng.percent(gap_pct) {
                m.set_mac_rx_valid(0);
                m.set_mac_rx_data(rng.next_u64());
                m.set_mac_rx_fcs_bad(rng.below(2) as u64);
                cycle(m, rng, sink, ready_pct);
            }
            let garbage = if k == 8 { 0 } else { rng.next_u64() << (8 * k) };
            m.set_mac_rx_data(d | garbage);
            m.set_mac_rx_keep(if last { k } else { 8 });
            m.set_mac_rx_last(last as u64);
            m.set_mac_rx_fcs_bad((last && *fcs_bad) as u64);
            m.set_mac_rx_valid(1);
            cycle(m, rng, sink, ready_pct);
        }
    }
    m.set_mac_rx_valid(0);
    for _ in 0..4096 {
        cycle(m, rng, sink, 100);
    }
}
