//! A node for scheduler tests and measurements: the Verilated `rnic_core`
//! whose `rx_pay` output (good frames, store-and-forward) is sent back out
//! of its MAC port — a reflector. Frames carry an id and a hop count; the
//! payload is derived from the id, so every hop can be checked.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

use rnic_sim::mac_port::{MacRxPort, MacTxPort};
use rnic_sim::rng::Rng;
use rnic_sim::sched::{MacIo, Node};
use verilator_sys::rnic_core::Model;

pub struct PayTap(pub Model);
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

/// A frame of `len` octets (>= 16): id (8), hop (4), then octets from the id.
pub fn make_frame(id: u64, hop: u32, len: usize) -> Vec<u8> {
    let mut f = id.to_le_bytes().to_vec();
    f.extend_from_slice(&hop.to_le_bytes());
    f.extend(Rng::new(id).bytes(len - 12));
    f
}

pub fn parse_frame(f: &[u8]) -> (u64, u32) {
    (
        u64::from_le_bytes(f[..8].try_into().unwrap()),
        u32::from_le_bytes(f[8..12].try_into().unwrap()),
    )
}

pub struct Reflector {
    pub m: PayTap,
    pub rx: MacRxPort,
    pub tx: MacTxPort,
    /// Frames to send first (before echoing anything).
    pub inject: VecDeque<Vec<u8>>,
    /// Frames to echo, waiting for the wire.
    pub echo: VecDeque<Vec<u8>>,
    /// Stop echoing a frame once its hop count reaches this.
    pub max_hops: u32,
    /// Frames that reached `max_hops` here: (id, cycle).
    pub finished: Vec<(u64, u64)>,
    /// Frames whose payload did not match their id.
    pub damaged: u64,
    pub expect_finished: usize,
}

impl Reflector {
    pub fn new(max_hops: u32) -> Self {
        let mut m = PayTap(Model::new());
        m.reset(4);
        Reflector {
            m,
            rx: MacRxPort::new(0),
            tx: MacTxPort::new(),
            inject: VecDeque::new(),
            echo: VecDeque::new(),
            max_hops,
            finished: Vec::new(),
            damaged: 0,
            expect_finished: usize::MAX,
        }
    }
}

impl Node for Reflector {
    fn clock(&mut self, cycle: u64, macs: &mut [MacIo]) {
        let io = &mut macs[0];
        while let Some(f) = io.rx.pop_front() {
            self.rx.push(f.data, f.fcs_bad);
        }
        // One frame onto the wire when it is free: injected ones first.
        if !io.hold {
            if let Some(f) = self.inject.pop_front().or_else(|| self.echo.pop_front()) {
                io.tx.push((f, cycle));
            }
        }
        self.rx.drive(&mut self.m);
        // The core's output is always taken (echoes queue in software), so
        // its receive FIFO never fills because of the wire.
        self.tx.drive_ready(&mut self.m, true);
        self.m.eval();
        if let Some(f) = self.tx.sample(&self.m) {
            let (id, hop) = parse_frame(&f);
            if f != make_frame(id, hop, f.len()) {
                self.damaged += 1;
            } else if hop + 1 >= self.max_hops {
                self.finished.push((id, cycle));
            } else {
                self.echo.push_back(make_frame(id, hop + 1, f.len()));
            }
        }
        self.m.tick();
    }

    fn done(&self) -> bool {
        self.finished.len() >= self.expect_finished
    }
}
