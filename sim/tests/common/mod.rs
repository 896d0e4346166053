//! Shared pieces of the `rnic_core` system tests and measurements.
//!
//! Since `rx_parse`/`rx_split` landed, `rnic_core`'s `rx_pay_*` carries only
//! the TCP payload of fast-path segments (a connection programmed through
//! `ct_wr_*` in RDMA mode, in-order sequence number); every other good frame
//! goes whole to the exception queue (`exc_*`). So test data travels as the
//! payload of real TCP segments built by `rnic_wire::model::net` (smoltcp's
//! emitters), and a small firmware stand-in ([`ExcReader`]) drains the
//! exception queue.
//!
//! [`Reflector`] is a scheduler node: the Verilated `rnic_core` whose
//! fast-path payloads are re-wrapped as segments to its peer and sent back
//! out of its MAC port. Payloads carry an id and a hop count, and the rest
//! is derived from the id, so every hop can be checked.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::ops::{Deref, DerefMut};

use rnic_sim::mac_port::{MacRxPort, MacTxPort};
use rnic_sim::rng::Rng;
use rnic_sim::sched::{MacIo, Node};
use rnic_wire::model::net::{data_frame, parse_frame, Endpoint};
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

/// Ethernet minimum frame without FCS (IEEE 802.3 §3.2.8: shorter frames
/// are padded).
pub const ETH_MIN: usize = 60;
/// Ethernet (14) + IPv4 (20) + TCP (20) header octets of the frames here.
pub const HDR_LEN: usize = 54;
/// `ExceptionReason::OutOfWindow` (rnic_wire::abi::context).
pub const R_OUT_OF_WINDOW: u8 = 5;
/// `ExceptionReason::NoMatch`.
pub const R_NO_MATCH: u8 = 0;
/// `ConnMode::Rdma`: the fast path is on.
pub const MODE_RDMA: u64 = 2;

pub const EP_A: Endpoint = Endpoint {
    mac: [2, 0, 0, 0, 0, 0xA],
    ip: [10, 0, 0, 1],
    port: 7174,
};
pub const EP_B: Endpoint = Endpoint {
    mac: [2, 0, 0, 0, 0, 0xB],
    ip: [10, 0, 0, 2],
    port: 40000,
};

/// The frame carrying `payload` from `src` to `dst` at `seq` (ACK 0),
/// padded to the Ethernet minimum.
pub fn seg_frame(src: &Endpoint, dst: &Endpoint, seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = data_frame(src, dst, seq, 0, payload);
    f.resize(f.len().max(ETH_MIN), 0);
    f
}

/// Drives `ct_wr_*` for the next clock: connection-table entry `idx`
/// (used, RDMA mode, no MPA flags) for segments from `peer` to `local`,
/// expecting `rcv_nxt` next. The caller clocks the model, then calls
/// [`ct_wr_idle`].
pub fn ct_wr(m: &mut Model, idx: u8, local: &Endpoint, peer: &Endpoint, rcv_nxt: u32) {
    m.set_ct_wr_valid(1);
    m.set_ct_wr_idx(idx as u64);
    m.set_ct_wr_used(1);
    m.set_ct_wr_local_ip(u32::from_be_bytes(local.ip) as u64);
    m.set_ct_wr_peer_ip(u32::from_be_bytes(peer.ip) as u64);
    m.set_ct_wr_local_port(local.port as u64);
    m.set_ct_wr_peer_port(peer.port as u64);
    m.set_ct_wr_mode(MODE_RDMA);
    m.set_ct_wr_mpa(0);
    m.set_ct_wr_rcv_nxt(rcv_nxt as u64);
    m.set_ct_wr_rcv_wnd(1 << 20);
    m.set_ct_wr_snd_una(0);
    m.set_ct_wr_snd_nxt(0);
}

pub fn ct_wr_idle(m: &mut Model) {
    m.set_ct_wr_valid(0);
}

/// Programs entry `idx` (one clock).
pub fn program(m: &mut Model, idx: u8, local: &Endpoint, peer: &Endpoint, rcv_nxt: u32) {
    ct_wr(m, idx, local, peer, rcv_nxt);
    m.tick();
    ct_wr_idle(m);
}

/// A frame read out of the exception queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExcFrame {
    pub reason: u8,
    pub conn: u32,
    pub bytes: Vec<u8>,
}

/// The firmware's side of the exception queue (docs/rtl.md `exc_queue`):
/// when the head is valid, reads its status and connection, then (if
/// `read_bytes`) its words through `exc_rd_word` → `exc_rd_data` (one clock
/// each), then pops it. Per cycle: [`ExcReader::drive`] before `eval`,
/// [`ExcReader::after_tick`] after the clock edge.
#[derive(Default)]
pub struct ExcReader {
    pub read_bytes: bool,
    cur: Option<(ExcFrame, usize, usize)>,
    pop: bool,
}

impl ExcReader {
    pub fn new(read_bytes: bool) -> Self {
        ExcReader {
            read_bytes,
            ..Self::default()
        }
    }

    pub fn drive(&self, m: &mut Model) {
        m.set_exc_pop(self.pop as u64);
        if let Some((_, _, w)) = &self.cur {
            m.set_exc_rd_word(*w as u64);
        }
    }

    /// Returns a frame once it has been read (it is popped next clock).
    pub fn after_tick(&mut self, m: &Model) -> Option<ExcFrame> {
        if self.pop {
            self.pop = false;
            return None;
        }
        if let Some((f, len, w)) = &mut self.cur {
            let d = (m.get_exc_rd_data() as u32).to_le_bytes();
            for (i, b) in d.iter().enumerate() {
                if 4 * *w + i < *len {
                    f.bytes.push(*b);
                }
            }
            *w += 1;
            if 4 * *w < *len {
                return None;
            }
            let (f, _, _) = self.cur.take().unwrap();
            self.pop = true;
            return Some(f);
        }
        if m.get_exc_valid() != 0 {
            let f = ExcFrame {
                reason: m.get_exc_reason() as u8,
                conn: m.get_exc_conn() as u32,
                bytes: Vec::new(),
            };
            let len = m.get_exc_len() as usize;
            if self.read_bytes && len > 0 {
                self.cur = Some((f, len, 0));
            } else {
                self.pop = true;
                return Some(ExcFrame {
                    bytes: vec![0; len],
                    ..f
                });
            }
        }
        None
    }
}

/// A payload of `len` octets (>= 12): id (8), hop (4), then octets from
/// the id.
pub fn make_frame(id: u64, hop: u32, len: usize) -> Vec<u8> {
    let mut f = id.to_le_bytes().to_vec();
    f.extend_from_slice(&hop.to_le_bytes());
    f.extend(Rng::new(id).bytes(len - 12));
    f
}

pub fn parse_payload(f: &[u8]) -> (u64, u32) {
    (
        u64::from_le_bytes(f[..8].try_into().unwrap()),
        u32::from_le_bytes(f[8..12].try_into().unwrap()),
    )
}

/// Initial sequence numbers of the two ends (near the wrap, so it is
/// crossed).
pub const ISS_A: u32 = 0xFFFF_F000;
pub const ISS_B: u32 = 0x7FFF_FF00;

pub struct Reflector {
    pub m: PayTap,
    pub rx: MacRxPort,
    pub tx: MacTxPort,
    pub exc: ExcReader,
    pub me: Endpoint,
    pub peer: Endpoint,
    /// Sequence number of the next segment sent.
    pub snd_nxt: u32,
    /// A connection-table rewrite (the new `rcv_nxt`) for the next clock.
    resync: Option<u32>,
    /// Payloads to send first (before echoing anything).
    pub inject: VecDeque<Vec<u8>>,
    /// Cycles between injected payloads (0: whenever the wire is free).
    pub inject_every: u64,
    last_inject: Option<u64>,
    /// Payloads to echo, waiting for the wire.
    pub echo: VecDeque<Vec<u8>>,
    /// Stop echoing a payload once its hop count reaches this.
    pub max_hops: u32,
    /// Payloads that reached `max_hops` here: (id, cycle).
    pub finished: Vec<(u64, u64)>,
    /// Payloads whose content did not match their id.
    pub damaged: u64,
    /// Segments taken from the exception queue (out of order after a loss).
    pub from_exc: u64,
    /// Exception frames that were not an out-of-order segment of ours.
    pub bad_exc: u64,
    pub expect_finished: usize,
}

impl Reflector {
    /// End A of the pair A-B (use [`Reflector::b`] for the other end).
    pub fn new(max_hops: u32) -> Self {
        Self::with(max_hops, EP_A, ISS_A, EP_B, ISS_B)
    }

    pub fn b(max_hops: u32) -> Self {
        Self::with(max_hops, EP_B, ISS_B, EP_A, ISS_A)
    }

    fn with(max_hops: u32, me: Endpoint, iss: u32, peer: Endpoint, peer_iss: u32) -> Self {
        let mut m = PayTap(Model::new());
        m.reset(4);
        program(&mut m, 0, &me, &peer, peer_iss);
        Reflector {
            m,
            rx: MacRxPort::new(0),
            tx: MacTxPort::tap(), // the payload stream, not a MAC
            exc: ExcReader::new(true),
            me,
            peer,
            snd_nxt: iss,
            resync: None,
            inject: VecDeque::new(),
            inject_every: 0,
            last_inject: None,
            echo: VecDeque::new(),
            max_hops,
            finished: Vec::new(),
            damaged: 0,
            from_exc: 0,
            bad_exc: 0,
            expect_finished: usize::MAX,
        }
    }

    fn take(&mut self, p: &[u8], cycle: u64) {
        let (id, hop) = parse_payload(p);
        if p != make_frame(id, hop, p.len()) {
            self.damaged += 1;
        } else if hop + 1 >= self.max_hops {
            self.finished.push((id, cycle));
        } else {
            self.echo.push_back(make_frame(id, hop + 1, p.len()));
        }
    }
}

impl Node for Reflector {
    fn clock(&mut self, cycle: u64, macs: &mut [MacIo]) {
        let io = &mut macs[0];
        while let Some(f) = io.rx.pop_front() {
            self.rx.push(f.data, f.fcs_bad);
        }
        // One segment onto the wire when it is free: injected ones first.
        if !io.hold {
            let due = self
                .last_inject
                .is_none_or(|t| cycle >= t + self.inject_every);
            let next = match self.inject.pop_front() {
                Some(p) if due => {
                    self.last_inject = Some(cycle);
                    Some(p)
                }
                Some(p) => {
                    self.inject.push_front(p);
                    self.echo.pop_front()
                }
                None => self.echo.pop_front(),
            };
            if let Some(p) = next {
                io.tx
                    .push((seg_frame(&self.me, &self.peer, self.snd_nxt, &p), cycle));
                self.snd_nxt = self.snd_nxt.wrapping_add(p.len() as u32);
            }
        }
        self.rx.drive(&mut self.m);
        // The core's output is always taken (echoes queue in software), so
        // its receive FIFO never fills because of the wire.
        self.tx.drive_ready(&mut self.m, true);
        self.exc.drive(&mut self.m);
        if let Some(rcv_nxt) = self.resync.take() {
            ct_wr(&mut self.m, 0, &self.me, &self.peer, rcv_nxt);
        }
        self.m.eval();
        if let Some(p) = self.tx.sample(&self.m) {
            self.take(&p, cycle);
        }
        self.m.tick();
        ct_wr_idle(&mut self.m);
        // The firmware's slow path: a segment that missed the fast path
        // because one before it was lost is taken from the exception queue,
        // and the connection resynchronised past it (`rcv_nxt` = its end).
        // No reordering on the link, so no later segment can have gone
        // fast while this one waited in the queue.
        if let Some(f) = self.exc.after_tick(&self.m) {
            match parse_frame(&f.bytes) {
                Ok(s) if f.reason == R_OUT_OF_WINDOW && f.conn == 0 && s.payload.len() >= 12 => {
                    self.from_exc += 1;
                    self.resync = Some(s.seq.wrapping_add(s.payload.len() as u32));
                    let p = s.payload.to_vec();
                    self.take(&p, cycle);
                }
                _ => self.bad_exc += 1,
            }
        }
    }

    fn done(&self) -> bool {
        self.finished.len() >= self.expect_finished
    }
}
