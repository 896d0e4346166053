//! DMA server: serves the "Core interfaces" DMA write and DMA read contracts
//! of `docs/rtl.md` from a node's [`HostMemory`], one clock at a time.
//!
//! The server sees the device only through [`DmaPins`] (port values, read
//! and written per cycle), so it runs against a Verilated model
//! ([`impl_dma_pins!`]) or a plain Rust test double alike. Per cycle:
//!
//! 1. [`DmaServer::drive`] (before `eval`): sets `dma_wr_ready`,
//!    `dma_rd_req_ready` and the completion beat (`dma_rd_cpl_*`). None of
//!    them depends combinationally on the device's outputs of this cycle.
//! 2. the model is evaluated;
//! 3. [`DmaServer::sample`] (before the clock edge): every handshake with
//!    `valid && ready` is a transfer of this cycle; the server's clock
//!    advances.
//!
//! [`DmaServer::step`] does all three for a lone server.
//!
//! Timing model (all in core clock cycles, 156.25 MHz notional):
//! * **read latency** `L`: a request accepted in cycle `t` has its first
//!   completion beat valid in cycle `t + L` (if the completion engine is free
//!   and bandwidth allows). Default 78 = 500 ns round trip, as on PCIe Gen3.
//! * **write latency** `W`: a write whose last beat is accepted in cycle `t`
//!   is in host memory after cycle `t + W` (visible to the driver polling
//!   between cycles). Default 39 (one way). Writes land in order. A read
//!   never passes an earlier write (PCIe ordering): writes accepted before a
//!   read request are applied before that read's data is taken.
//! * **bandwidth** in octets per cycle, per direction (writes in, completions
//!   out), as a credit bucket: a data beat needs 8 credits (a completion's
//!   last beat: its `keep`), each transfer spends its `keep`. Default 8.0 =
//!   the 64-bit port at full rate. Header beats and requests cost no credit.
//! * **completion order**: completions of different tags may come back in
//!   any order (as on PCIe): when several requests are due, the next one is
//!   drawn with the seeded generator (or the oldest, with
//!   `reorder = false`); `read_jitter` adds 0..=jitter cycles to each
//!   request's latency. The octets of one request are contiguous and in order.
//!
//! Every access is checked against the memory's DMA-able ranges
//! ([`HostMemory::dma_ok`]): a write outside is not performed, a read outside
//! is answered with zeros (so the device does not hang on the tag) and never
//! with host data; both are recorded as [`DmaFault`]s, as are protocol
//! errors (bad length, data beat without header, length mismatch, tag
//! already outstanding, malformed `keep`).

use std::collections::VecDeque;

use crate::host_mem::HostMemory;
use crate::rng::Rng;

/// Largest request, octets (`docs/rtl.md`: `len` 1..=4096).
pub const MAX_DMA_LEN: usize = 4096;

/// One beat on the DMA write stream, as the device presents it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WrBeat {
    pub valid: bool,
    /// Header beat: `data` = bus address, `len` = octets.
    pub hdr: bool,
    pub len: u16,
    pub data: u64,
    pub keep: u8,
    pub last: bool,
}

/// A read request, as the device presents it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RdReq {
    pub valid: bool,
    pub addr: u64,
    pub len: u16,
    pub tag: u8,
}

/// A completion beat, as the server presents it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CplBeat {
    pub valid: bool,
    pub data: u64,
    pub keep: u8,
    pub last: bool,
    pub tag: u8,
}

/// The device's DMA ports, seen from the server.
pub trait DmaPins {
    /// `dma_wr_*` outputs of the device.
    fn wr(&self) -> WrBeat;
    /// Drives `dma_wr_ready`.
    fn set_wr_ready(&mut self, ready: bool);
    /// `dma_rd_req_*` outputs of the device.
    fn rd_req(&self) -> RdReq;
    /// Drives `dma_rd_req_ready`.
    fn set_rd_req_ready(&mut self, ready: bool);
    /// Drives `dma_rd_cpl_*` (valid, data, keep, last, tag).
    fn set_cpl(&mut self, beat: CplBeat);
    /// `dma_rd_cpl_ready` output of the device.
    fn cpl_ready(&self) -> bool;
    /// Evaluates combinational logic (for [`DmaServer::step`]); a Verilated
    /// model calls its `eval`.
    fn eval(&mut self) {}
}

/// Implements [`DmaPins`] for a Verilated model type with the contract's
/// port names (`dma_wr_valid`, ..., `dma_rd_cpl_ready`), e.g.
/// `impl_dma_pins!(verilator_sys::rnic_core::Model);` once the core has them.
#[macro_export]
macro_rules! impl_dma_pins {
    ($t:ty) => {
        impl $crate::dma::DmaPins for $t {
            fn wr(&self) -> $crate::dma::WrBeat {
                $crate::dma::WrBeat {
                    valid: self.get_dma_wr_valid() != 0,
                    hdr: self.get_dma_wr_hdr() != 0,
                    len: self.get_dma_wr_len() as u16,
                    data: self.get_dma_wr_data(),
                    keep: self.get_dma_wr_keep() as u8,
                    last: self.get_dma_wr_last() != 0,
                }
            }
            fn set_wr_ready(&mut self, ready: bool) {
                self.set_dma_wr_ready(ready as u64)
            }
            fn rd_req(&self) -> $crate::dma::RdReq {
                $crate::dma::RdReq {
                    valid: self.get_dma_rd_req_valid() != 0,
                    addr: self.get_dma_rd_req_addr(),
                    len: self.get_dma_rd_req_len() as u16,
                    tag: self.get_dma_rd_req_tag() as u8,
                }
            }
            fn set_rd_req_ready(&mut self, ready: bool) {
                self.set_dma_rd_req_ready(ready as u64)
            }
            fn set_cpl(&mut self, b: $crate::dma::CplBeat) {
                self.set_dma_rd_cpl_valid(b.valid as u64);
                self.set_dma_rd_cpl_data(b.data);
                self.set_dma_rd_cpl_keep(b.keep as u64);
                self.set_dma_rd_cpl_last(b.last as u64);
                self.set_dma_rd_cpl_tag(b.tag as u64);
            }
            fn cpl_ready(&self) -> bool {
                self.get_dma_rd_cpl_ready() != 0
            }
            fn eval(&mut self) {
                self.eval()
            }
        }
    };
}

/// Server parameters.
#[derive(Debug, Clone)]
pub struct DmaConfig {
    /// Cycles from a read request's handshake to its first completion beat.
    pub read_latency: u64,
    /// Extra 0..=`read_jitter` cycles per read request (seeded).
    pub read_jitter: u64,
    /// Cycles from a write's last beat to its data being in host memory.
    pub write_latency: u64,
    /// Octets per cycle accepted on the write stream.
    pub write_bw: f64,
    /// Octets per cycle sent on the completion stream.
    pub read_bw: f64,
    /// Draw the next due completion at random (else oldest first).
    pub reorder: bool,
    /// Read requests outstanding before `dma_rd_req_ready` drops.
    pub max_outstanding: usize,
    /// Seed of the completion-order generator.
    pub seed: u64,
    /// Keep a log of every request and completion ([`DmaServer::log`]).
    pub log: bool,
}

/// The default host-memory read round trip, ns (PCIe-like).
pub const READ_ROUND_TRIP_NS: u64 = 500;
/// The default time from a write's last beat to its octets in host memory, ns.
pub const WRITE_LATENCY_NS: u64 = 250;

/// Cycles of the notional core clock in `ns` nanoseconds (156.25 MHz:
/// 6.4 ns per cycle), rounded down.
pub const fn ns_to_cycles(ns: u64) -> u64 {
    crate::clock::Timing::DATAPATH.cycles_ns(ns)
}

impl Default for DmaConfig {
    fn default() -> Self {
        DmaConfig {
            read_latency: ns_to_cycles(READ_ROUND_TRIP_NS),
            read_jitter: 0,
            write_latency: ns_to_cycles(WRITE_LATENCY_NS),
            write_bw: 8.0,
            read_bw: 8.0,
            reorder: true,
            max_outstanding: 32,
            seed: 1,
            log: true,
        }
    }
}

/// What was wrong with an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmaFaultKind {
    /// Some octet of the access is outside every DMA-able range.
    OutOfRange,
    /// `len` is 0 or above [`MAX_DMA_LEN`].
    BadLength,
    /// A write data beat with no header before it.
    DataWithoutHeader,
    /// A header beat while a write's data was still expected.
    HeaderInData,
    /// The data beats of a write carried more or fewer octets than `len`.
    LengthMismatch,
    /// `keep` above 8, or below 8 on a beat that is not the last.
    BadKeep,
    /// A read request with a tag whose completion is still outstanding.
    TagInUse,
}

/// A recorded fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaFault {
    pub cycle: u64,
    pub kind: DmaFaultKind,
    /// `true` for the read side.
    pub read: bool,
    pub addr: u64,
    pub len: usize,
    pub tag: Option<u8>,
}

/// A logged event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmaEvent {
    /// A write's last beat was accepted (`cycle`), it lands at `lands`.
    Write {
        cycle: u64,
        lands: u64,
        addr: u64,
        len: usize,
    },
    /// A read request was accepted.
    ReadReq {
        cycle: u64,
        tag: u8,
        addr: u64,
        len: usize,
    },
    /// The first beat of a completion was presented (valid).
    CplStart { cycle: u64, tag: u8 },
    /// The last beat of a completion was taken.
    CplEnd { cycle: u64, tag: u8 },
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DmaStats {
    pub writes: u64,
    pub write_octets: u64,
    pub reads: u64,
    pub read_octets: u64,
    pub faults: u64,
    /// Cycles the write stream had a beat valid but not ready (backpressure).
    pub wr_stall_cycles: u64,
}

#[derive(Debug)]
enum WrState {
    Idle,
    Data {
        addr: u64,
        len: usize,
        buf: Vec<u8>,
        /// A fault was already recorded; consume to `last` and drop.
        bad: bool,
    },
}

#[derive(Debug)]
struct PendingWrite {
    lands: u64,
    seq: u64,
    addr: u64,
    data: Vec<u8>,
}

#[derive(Debug)]
struct PendingRead {
    due: u64,
    tag: u8,
    addr: u64,
    len: usize,
    /// Writes with `seq` below this were accepted before the request.
    writes_before: u64,
    /// Answer with zeros (out-of-range request).
    zero: bool,
}

#[derive(Debug)]
struct Active {
    tag: u8,
    data: Vec<u8>,
    pos: usize,
    /// The first beat was presented (and logged).
    started: bool,
}

/// The DMA server of one node.
#[derive(Debug)]
pub struct DmaServer {
    cfg: DmaConfig,
    rng: Rng,
    now: u64,
    wr: WrState,
    wr_credit: f64,
    wr_ready: bool,
    writes: VecDeque<PendingWrite>,
    write_seq: u64,
    landed: u64,
    rd_ready: bool,
    reads: Vec<PendingRead>,
    active: Option<Active>,
    cpl: CplBeat,
    rd_credit: f64,
    faults: Vec<DmaFault>,
    log: Vec<DmaEvent>,
    stats: DmaStats,
}

impl DmaServer {
    pub fn new(cfg: DmaConfig) -> Self {
        assert!(
            cfg.write_bw > 0.0 && cfg.read_bw > 0.0,
            "DMA bandwidth must be positive"
        );
        DmaServer {
            rng: Rng::new(cfg.seed),
            wr_credit: 8.0,
            rd_credit: 8.0,
            cfg,
            now: 0,
            wr: WrState::Idle,
            wr_ready: false,
            writes: VecDeque::new(),
            write_seq: 0,
            landed: 0,
            rd_ready: false,
            reads: Vec::new(),
            active: None,
            cpl: CplBeat::default(),
            faults: Vec::new(),
            log: Vec::new(),
            stats: DmaStats::default(),
        }
    }

    pub fn config(&self) -> &DmaConfig {
        &self.cfg
    }

    /// The server's cycle count (cycles sampled so far).
    pub fn cycle(&self) -> u64 {
        self.now
    }

    /// Faults recorded so far.
    pub fn faults(&self) -> &[DmaFault] {
        &self.faults
    }

    /// Events so far (empty with `log = false`).
    pub fn log(&self) -> &[DmaEvent] {
        &self.log
    }

    /// Starts (or stops) keeping the log from this cycle on: a test that
    /// wants the order of one phase's requests, on a node built without it.
    pub fn set_log(&mut self, on: bool) {
        self.cfg.log = on;
    }

    /// Changes the octets per cycle the write stream accepts from this
    /// cycle on (a test that throttles the device's writes for one phase).
    pub fn set_write_bw(&mut self, octets_per_cycle: f64) -> Result<(), String> {
        if !(octets_per_cycle > 0.0 && octets_per_cycle.is_finite()) {
            return Err(format!("write_bw must be above 0, not {octets_per_cycle}"));
        }
        self.cfg.write_bw = octets_per_cycle;
        Ok(())
    }

    pub fn stats(&self) -> DmaStats {
        self.stats
    }

    /// Writes taken whole so far (landed or waiting to land).
    pub fn writes_taken(&self) -> u64 {
        self.write_seq
    }

    /// Writes in host memory so far.
    pub fn writes_landed(&self) -> u64 {
        self.landed
    }

    /// A write is being received or waits to land in host memory.
    pub fn writes_pending(&self) -> bool {
        !matches!(self.wr, WrState::Idle) || !self.writes.is_empty()
    }

    /// Nothing in flight: no write being received or waiting to land, no
    /// read outstanding.
    pub fn idle(&self) -> bool {
        matches!(self.wr, WrState::Idle)
            && self.writes.is_empty()
            && self.reads.is_empty()
            && self.active.is_none()
    }

    /// Sets the server's outputs for this cycle (call before `eval`).
    pub fn drive<P: DmaPins + ?Sized>(&mut self, pins: &mut P, mem: &mut HostMemory) {
        self.wr_ready = matches!(self.wr, WrState::Idle) || self.wr_credit >= 8.0;
        pins.set_wr_ready(self.wr_ready);
        let outstanding = self.reads.len() + usize::from(self.active.is_some());
        self.rd_ready = outstanding < self.cfg.max_outstanding;
        pins.set_rd_req_ready(self.rd_ready);
        if self.active.is_none() {
            self.start_completion_if_due(mem);
        }
        self.cpl = match &mut self.active {
            Some(a) => {
                let n = (a.data.len() - a.pos).min(8);
                if self.rd_credit >= n as f64 {
                    let mut b = [0u8; 8];
                    b[..n].copy_from_slice(&a.data[a.pos..a.pos + n]);
                    if !a.started {
                        a.started = true;
                        if self.cfg.log {
                            self.log.push(DmaEvent::CplStart {
                                cycle: self.now,
                                tag: a.tag,
                            });
                        }
                    }
                    CplBeat {
                        valid: true,
                        data: u64::from_le_bytes(b),
                        keep: n as u8,
                        last: a.pos + n == a.data.len(),
                        tag: a.tag,
                    }
                } else {
                    CplBeat::default()
                }
            }
            None => CplBeat::default(),
        };
        pins.set_cpl(self.cpl);
    }

    /// Takes this cycle's transfers (call after `eval`, before the clock
    /// edge) and advances the server by one cycle.
    pub fn sample<P: DmaPins + ?Sized>(&mut self, pins: &P, mem: &mut HostMemory) {
        // Completion beat taken?
        if self.cpl.valid && pins.cpl_ready() {
            let a = self.active.as_mut().expect("cpl valid without active");
            let n = self.cpl.keep as usize;
            a.pos += n;
            self.rd_credit -= n as f64;
            if self.cpl.last {
                if self.cfg.log {
                    self.log.push(DmaEvent::CplEnd {
                        cycle: self.now,
                        tag: a.tag,
                    });
                }
                self.active = None;
            }
        }
        // Read request.
        let req = pins.rd_req();
        if req.valid && self.rd_ready {
            self.accept_read(req, mem);
        }
        // Write beat.
        let b = pins.wr();
        if b.valid {
            if self.wr_ready {
                self.accept_write_beat(b, mem);
            } else {
                self.stats.wr_stall_cycles += 1;
            }
        }
        // End of cycle: land due writes, refill credits.
        while self.writes.front().is_some_and(|w| w.lands <= self.now) {
            let w = self.writes.pop_front().unwrap();
            Self::land(mem, &w);
            self.landed += 1;
        }
        // Capped at one beat plus one cycle's worth: idle time does not
        // bank a burst, and no fraction is lost while the stream is busy.
        self.wr_credit = (self.wr_credit + self.cfg.write_bw).min(8.0 + self.cfg.write_bw);
        self.rd_credit = (self.rd_credit + self.cfg.read_bw).min(8.0 + self.cfg.read_bw);
        self.now += 1;
    }

    /// `drive`, `pins.eval()`, `sample`: one cycle for a lone server (the
    /// caller ticks the clock afterwards).
    pub fn step<P: DmaPins + ?Sized>(&mut self, pins: &mut P, mem: &mut HostMemory) {
        self.drive(pins, mem);
        pins.eval();
        self.sample(pins, mem);
    }

    fn fault(&mut self, kind: DmaFaultKind, read: bool, addr: u64, len: usize, tag: Option<u8>) {
        self.stats.faults += 1;
        self.faults.push(DmaFault {
            cycle: self.now,
            kind,
            read,
            addr,
            len,
            tag,
        });
    }

    fn land(mem: &mut HostMemory, w: &PendingWrite) {
        // Checked against the DMA ranges when accepted; a wrap is impossible
        // then (dma_ok refuses it).
        mem.write(w.addr, &w.data)
            .expect("range-checked DMA write failed");
    }

    fn accept_write_beat(&mut self, b: WrBeat, mem: &HostMemory) {
        if b.hdr {
            if let WrState::Data { addr, len, .. } = self.wr {
                self.fault(DmaFaultKind::HeaderInData, false, addr, len, None);
            }
            let len = b.len as usize;
            let bad = !(1..=MAX_DMA_LEN).contains(&len);
            if bad {
                self.fault(DmaFaultKind::BadLength, false, b.data, len, None);
            }
            self.wr = WrState::Data {
                addr: b.data,
                len,
                buf: Vec::with_capacity(len.min(MAX_DMA_LEN)),
                bad,
            };
            return;
        }
        let WrState::Data {
            addr,
            len,
            ref mut buf,
            ref mut bad,
        } = self.wr
        else {
            self.fault(DmaFaultKind::DataWithoutHeader, false, 0, 0, None);
            return;
        };
        let keep_ok = b.keep <= 8 && (b.last || b.keep == 8);
        let mut fault = None;
        if !keep_ok {
            if !*bad {
                fault = Some(DmaFaultKind::BadKeep);
            }
            *bad = true;
        } else {
            let k = b.keep as usize;
            self.wr_credit -= k as f64;
            if !*bad {
                if buf.len() + k > len {
                    fault = Some(DmaFaultKind::LengthMismatch);
                    *bad = true;
                } else {
                    buf.extend_from_slice(&b.data.to_le_bytes()[..k]);
                }
            }
        }
        if b.last && !*bad && buf.len() != len {
            fault = Some(DmaFaultKind::LengthMismatch);
            *bad = true;
        }
        if let Some(k) = fault {
            self.fault(k, false, addr, len, None);
        }
        if !b.last {
            return;
        }
        let WrState::Data { buf, bad, .. } = std::mem::replace(&mut self.wr, WrState::Idle) else {
            unreachable!()
        };
        if bad {
            return;
        }
        if !mem.dma_ok(addr, len as u64) {
            self.fault(DmaFaultKind::OutOfRange, false, addr, len, None);
            return;
        }
        let lands = self.now + self.cfg.write_latency;
        if self.cfg.log {
            self.log.push(DmaEvent::Write {
                cycle: self.now,
                lands,
                addr,
                len,
            });
        }
        self.stats.writes += 1;
        self.stats.write_octets += len as u64;
        self.writes.push_back(PendingWrite {
            lands,
            seq: self.write_seq,
            addr,
            data: buf,
        });
        self.write_seq += 1;
    }

    fn accept_read(&mut self, r: RdReq, mem: &HostMemory) {
        let len = r.len as usize;
        if self.reads.iter().any(|p| p.tag == r.tag)
            || self.active.as_ref().is_some_and(|a| a.tag == r.tag)
        {
            self.fault(DmaFaultKind::TagInUse, true, r.addr, len, Some(r.tag));
            return;
        }
        if !(1..=MAX_DMA_LEN).contains(&len) {
            // No sensible completion exists for it.
            self.fault(DmaFaultKind::BadLength, true, r.addr, len, Some(r.tag));
            return;
        }
        let zero = !mem.dma_ok(r.addr, len as u64);
        if zero {
            self.fault(DmaFaultKind::OutOfRange, true, r.addr, len, Some(r.tag));
        }
        let jitter = if self.cfg.read_jitter > 0 {
            self.rng.below(self.cfg.read_jitter + 1)
        } else {
            0
        };
        if self.cfg.log {
            self.log.push(DmaEvent::ReadReq {
                cycle: self.now,
                tag: r.tag,
                addr: r.addr,
                len,
            });
        }
        self.stats.reads += 1;
        self.stats.read_octets += len as u64;
        self.reads.push(PendingRead {
            due: self.now + self.cfg.read_latency + jitter,
            tag: r.tag,
            addr: r.addr,
            len,
            writes_before: self.write_seq,
            zero,
        });
    }

    fn start_completion_if_due(&mut self, mem: &mut HostMemory) {
        // Without allocating: count the due requests, then find the k-th.
        let now = self.now;
        let n_due = self.reads.iter().filter(|r| r.due <= now).count();
        if n_due == 0 {
            return;
        }
        let k = if self.cfg.reorder && n_due > 1 {
            self.rng.below(n_due as u64) as usize
        } else {
            // Oldest: requests are kept in acceptance order.
            0
        };
        let pick = self
            .reads
            .iter()
            .enumerate()
            .filter(|(_, r)| r.due <= now)
            .nth(k)
            .map(|(i, _)| i)
            .unwrap();
        let r = self.reads.remove(pick);
        let data = if r.zero {
            vec![0u8; r.len]
        } else {
            // A read does not pass a write accepted before it (PCIe
            // ordering): land those first, then take memory as of now.
            while self.writes.front().is_some_and(|w| w.seq < r.writes_before) {
                let w = self.writes.pop_front().unwrap();
                Self::land(mem, &w);
            }
            let mut d = vec![0u8; r.len];
            mem.read(r.addr, &mut d)
                .expect("range-checked DMA read failed");
            d
        };
        self.active = Some(Active {
            tag: r.tag,
            data,
            pos: 0,
            started: false,
        });
    }
}
