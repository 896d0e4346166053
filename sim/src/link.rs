//! A full-duplex link between two MAC ports, side A and side B. Frames are
//! Ethernet frames without FCS (`Vec<u8>`, as on `mac_tx_*`/`mac_rx_*`).
//!
//! Per direction:
//! * **rate** in octets per cycle of the core clock, counting the wire
//!   overhead of every frame: preamble + SFD (8), FCS (4) and the minimum
//!   inter-frame gap (12) = [`WIRE_OVERHEAD`] = 24 octets (IEEE 802.3
//!   clause 4.4.2), and frames shorter than [`MIN_FRAME`] padded to it on the
//!   wire (timing only: the octets delivered are the ones sent). 10 Gb/s at
//!   156.25 MHz is 8 octets/cycle; 1 Gb/s at the board's 62.5 MHz is 2
//!   ([`crate::clock::Timing`]). Frames sent while the
//!   transmitter is busy queue behind (see [`Link::busy`] for backpressure).
//! * **propagation delay** in cycles, added after the last octet is sent.
//! * **faults**, each a probability per frame, drawn from a seeded
//!   generator per direction: loss; single-bit corruption (the receiving
//!   MAC's FCS check catches it, so the frame arrives with `fcs_bad` — unless
//!   `corrupt_undetected`, which models a frame whose FCS was recomputed
//!   after the damage); duplication (a second copy arrives right after the
//!   first); reordering (the frame is held back and delivered right after the
//!   next frame of its direction, or after `reorder_hold` cycles if none
//!   comes).
//! * statistics, and optionally a pcap (LINKTYPE_ETHERNET, nanosecond
//!   timestamps from the cycle count: 6.4 ns per cycle at 156.25 MHz,
//!   [`LinkConfig::cycle_ps`]) of
//!   every frame as it arrives — both directions in one file, in arrival
//!   order; corrupted frames as corrupted, lost frames not at all,
//!   duplicates twice.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use pcap_file::TsResolution;

use crate::clock::Timing;
use crate::pcap::PcapSink;
use crate::rng::Rng;

/// Preamble and SFD (8), FCS (4), minimum inter-frame gap (12) per frame
/// (IEEE 802.3 clause 4.4.2 / 3.1.1).
pub const WIRE_OVERHEAD: u64 = 8 + 4 + 12;
/// Minimum frame length without FCS (64 octets with FCS); shorter frames are
/// padded by the MAC.
pub const MIN_FRAME: usize = 60;
/// Picoseconds per cycle of the notional 156.25 MHz core clock.
pub const CYCLE_PS: u64 = Timing::DATAPATH.cycle_ps();

/// The time of `cycle` at 156.25 MHz.
pub fn cycle_time(cycle: u64) -> Duration {
    Timing::DATAPATH.time(cycle)
}

/// One end of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn peer(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
    fn idx(self) -> usize {
        self as usize
    }
}

/// Link parameters (the same for both directions).
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// Propagation delay, cycles.
    pub delay: u64,
    /// Octets per cycle including [`WIRE_OVERHEAD`]; `f64::INFINITY` for no
    /// serialization time.
    pub rate: f64,
    pub loss: f64,
    pub corrupt: f64,
    pub duplicate: f64,
    pub reorder: f64,
    /// Corrupted frames arrive with a good FCS (undetectable at the MAC).
    pub corrupt_undetected: bool,
    /// Longest a reordered frame waits for a frame to overtake it, cycles.
    pub reorder_hold: u64,
    pub seed: u64,
    /// Picoseconds a cycle, for the pcap's timestamps ([`CYCLE_PS`] at
    /// 156.25 MHz).
    pub cycle_ps: u64,
}

impl Default for LinkConfig {
    /// 10 GbE (8 octets/cycle), 1 µs of fiber-ish delay, no faults.
    fn default() -> Self {
        LinkConfig {
            delay: 156,
            rate: 8.0,
            loss: 0.0,
            corrupt: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            corrupt_undetected: false,
            reorder_hold: 10_000,
            seed: 1,
            cycle_ps: CYCLE_PS,
        }
    }
}

/// A frame as it arrives at a MAC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RxFrame {
    pub data: Vec<u8>,
    /// The receiving MAC's FCS check failed (deliver with `mac_rx_fcs_bad`).
    pub fcs_bad: bool,
    /// A bit was flipped on the way (whether or not the FCS shows it).
    pub corrupted: bool,
    /// Cycle of arrival.
    pub cycle: u64,
}

/// Counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Frames handed to the link.
    pub sent: u64,
    /// Frames that arrived (duplicates count twice).
    pub delivered: u64,
    pub lost: u64,
    pub corrupted: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Octets handed to the link (frames only).
    pub octets_sent: u64,
    /// Octets of wire time used: padded frames plus overhead.
    pub wire_octets: u64,
}

#[derive(Debug, Clone)]
struct Flight {
    arrive: u64,
    data: Vec<u8>,
    corrupted: bool,
    reorder: bool,
}

#[derive(Debug)]
struct Dir {
    rng: Rng,
    /// Time (cycles, fractional) the transmitter is free again.
    tx_free: f64,
    flight: VecDeque<Flight>,
    held: Option<(u64, Flight)>,
    rx: VecDeque<RxFrame>,
    stats: LinkStats,
}

/// A link between two MAC ports.
pub struct Link {
    cfg: LinkConfig,
    dirs: [Dir; 2],
    now: u64,
    pcap: Option<PcapSink>,
    pcap_error: Option<String>,
}

impl Link {
    pub fn new(cfg: LinkConfig) -> Self {
        assert!(cfg.rate > 0.0, "link rate must be positive");
        let dir = |k: u64| Dir {
            rng: Rng::new(cfg.seed ^ k.wrapping_mul(0xA076_1D64_78BD_642F)),
            tx_free: 0.0,
            flight: VecDeque::new(),
            held: None,
            rx: VecDeque::new(),
            stats: LinkStats::default(),
        };
        Link {
            dirs: [dir(1), dir(2)],
            cfg,
            now: 0,
            pcap: None,
            pcap_error: None,
        }
    }

    /// Writes every arriving frame to a new pcap file at `path` (its
    /// folder created), nanosecond timestamps = arrival cycle x 6.4 ns.
    pub fn pcap_to(&mut self, path: &Path) -> std::io::Result<()> {
        self.pcap = Some(PcapSink::create_with(path, TsResolution::NanoSecond)?);
        Ok(())
    }

    /// Flushes the pcap; reports the first write error, if any happened.
    pub fn flush_pcap(&mut self) -> std::io::Result<()> {
        if let Some(e) = &self.pcap_error {
            return Err(std::io::Error::other(e.clone()));
        }
        match &mut self.pcap {
            Some(p) => p.flush(),
            None => Ok(()),
        }
    }

    pub fn config(&self) -> &LinkConfig {
        &self.cfg
    }

    /// Changes the fault rates from now on (frames already on the link keep
    /// their fate): a run can set up its connections on a clean link and
    /// then turn the faults on for the data phase.
    pub fn set_faults(&mut self, loss: f64, corrupt: f64, duplicate: f64, reorder: f64) {
        self.cfg.loss = loss;
        self.cfg.corrupt = corrupt;
        self.cfg.duplicate = duplicate;
        self.cfg.reorder = reorder;
    }

    /// Makes a cycle stand for `t`: the rate becomes `t`'s port rate and
    /// the pcap's timestamps `t`'s clock. The delay stays in cycles (the
    /// caller sets it from `t.cycles_per_us()`).
    pub fn set_timing(&mut self, t: Timing) {
        self.cfg.rate = t.port_octets_per_cycle();
        self.cfg.cycle_ps = t.cycle_ps();
    }

    /// The link's cycle count.
    pub fn cycle(&self) -> u64 {
        self.now
    }

    /// Counters of the direction `from` → `from.peer()`.
    pub fn stats(&self, from: Side) -> LinkStats {
        self.dirs[from.idx()].stats
    }

    /// Whether `from`'s transmitter is still sending an earlier frame this
    /// cycle (a MAC honoring the rate holds its next frame while busy).
    pub fn busy(&self, from: Side) -> bool {
        self.dirs[from.idx()].tx_free > self.now as f64
    }

    /// Sends `frame` from `from`, starting in the current cycle.
    pub fn send(&mut self, from: Side, frame: Vec<u8>) {
        self.send_at(from, frame, self.now);
    }

    /// Sends `frame` from `from` whose transmission began in cycle `start`
    /// (at most the current cycle: a MAC that streams a frame out beat by
    /// beat hands it over whole at its last beat). It arrives no earlier
    /// than `delay` after the current cycle.
    pub fn send_at(&mut self, from: Side, frame: Vec<u8>, start: u64) {
        let cfg = &self.cfg;
        let now = self.now;
        let start = start.min(now);
        let d = &mut self.dirs[from.idx()];
        let wire = frame.len().max(MIN_FRAME) as u64 + WIRE_OVERHEAD;
        d.stats.sent += 1;
        d.stats.octets_sent += frame.len() as u64;
        d.stats.wire_octets += wire;
        let start = d.tx_free.max(start as f64);
        let end = if cfg.rate.is_finite() {
            start + wire as f64 / cfg.rate
        } else {
            start
        };
        d.tx_free = end;
        // The last octet is on the wire at `end`; it arrives `delay` later.
        let arrive = (end.ceil() as u64).max(now) + cfg.delay;
        // Every draw is made for every frame, so one fault's probability does
        // not shift the others' sequences.
        let lose = d.rng.chance(cfg.loss);
        let corrupt = d.rng.chance(cfg.corrupt);
        let bit = d.rng.next_u64();
        let dup = d.rng.chance(cfg.duplicate);
        let reorder = d.rng.chance(cfg.reorder);
        if lose {
            d.stats.lost += 1;
            return;
        }
        let mut data = frame;
        let corrupted = corrupt && !data.is_empty();
        if corrupted {
            let b = (bit % (8 * data.len() as u64)) as usize;
            data[b / 8] ^= 1 << (b % 8);
            d.stats.corrupted += 1;
        }
        if reorder {
            d.stats.reordered += 1;
        }
        let f = Flight {
            arrive,
            data,
            corrupted,
            reorder,
        };
        if dup {
            d.stats.duplicated += 1;
            let mut copy = f.clone();
            copy.reorder = false;
            d.flight.push_back(f);
            d.flight.push_back(copy);
        } else {
            d.flight.push_back(f);
        }
    }

    /// Ends the current cycle: frames due by now arrive (into the receive
    /// queues and the pcap), then the link's clock advances.
    pub fn step(&mut self) {
        for i in 0..2 {
            loop {
                let d = &mut self.dirs[i];
                let Some(f) = d.flight.front() else { break };
                if f.arrive > self.now {
                    break;
                }
                let f = d.flight.pop_front().unwrap();
                if f.reorder && d.held.is_none() {
                    d.held = Some((self.now + self.cfg.reorder_hold, f));
                    continue;
                }
                self.arrive(i, f);
                // The held frame comes right after the one that overtook it.
                if let Some((_, h)) = self.dirs[i].held.take() {
                    self.arrive(i, h);
                }
            }
            if self.dirs[i]
                .held
                .as_ref()
                .is_some_and(|(t, _)| *t <= self.now)
            {
                let (_, h) = self.dirs[i].held.take().unwrap();
                self.arrive(i, h);
            }
        }
        self.now += 1;
    }

    fn arrive(&mut self, i: usize, f: Flight) {
        if let Some(p) = &mut self.pcap {
            if let Err(e) = p.write_at(
                &f.data,
                Duration::from_nanos(self.now * self.cfg.cycle_ps / 1000),
            ) {
                self.pcap_error.get_or_insert_with(|| e.to_string());
            }
        }
        let d = &mut self.dirs[i];
        d.stats.delivered += 1;
        d.rx.push_back(RxFrame {
            data: f.data,
            fcs_bad: f.corrupted && !self.cfg.corrupt_undetected,
            corrupted: f.corrupted,
            cycle: self.now,
        });
    }

    /// The next frame that arrived at `at`, if any.
    pub fn recv(&mut self, at: Side) -> Option<RxFrame> {
        self.dirs[at.peer().idx()].rx.pop_front()
    }

    /// Frames in flight or waiting to be received, both directions.
    pub fn pending(&self) -> usize {
        self.dirs
            .iter()
            .map(|d| d.flight.len() + d.rx.len() + d.held.is_some() as usize)
            .sum()
    }
}
