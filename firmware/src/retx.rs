//! The retransmission timer of a connection whose data the device sends
//! (RDMA mode, and the device's octets of a closing stream), with the RTO
//! computed from measured round-trip times (RFC 6298 §2–§5).
//!
//! The device keeps a log of the FPDUs it sent and replays them on request
//! (`port::RETX_CONN`, [`crate::hal::Hal::retransmit`]: go-back-N from
//! SND.UNA); deciding *when* is the firmware's job. The device gives no RTT
//! sample and no per-segment send time: the firmware only sees SND.UNA and
//! SND.NXT, which the timer samples (one connection-context read in RDMA
//! mode) at most once per [`RetxTimer::period`], a quarter of the current
//! RTO estimate, and otherwise keeps its deadline, so a check costs nothing
//! between samples.
//!
//! **RTT measurement**, one sequence number at a time (the traditional
//! way RFC 6298 §3 describes): at a sample where nothing is being timed,
//! data is outstanding and SND.NXT moved since the previous sample (so the
//! octet just below it left within the last period), the timer remembers
//! (SND.NXT, now); the first later sample that finds SND.UNA at or past
//! that mark gives the measurement R = the time between the two samples.
//! R is rounded *up* to the sampling grid: it can exceed the RTT by up to
//! one period, and fall short of it (by less than a period) only if the
//! octet left before the starting sample. The period is the clock
//! granularity G of RFC 6298 §2 (the RTO is at least SRTT + G). §3 asks
//! for at least one measurement per RTT; the samples give one per RTT when
//! the RTT is longer than the period, and one per period on a faster link
//! (the most the firmware can see). Karn's rule (RFC 6298 §3): a
//! retransmission while a mark is being timed discards it, and no timing
//! starts until SND.NXT has passed everything that was outstanding when the
//! device was asked to replay (SND.NXT at that sample and at the next one,
//! which covers data the device sent between the context read and the
//! replay's start), so no measurement comes from retransmitted data. The
//! device's own fast retransmit (RFC 5681 §3.2 in the RTL) is not visible
//! here: a measurement that spans one includes the recovery, an
//! overestimate.
//!
//! **RTO** (RFC 6298 §2.2, §2.3): the first R sets SRTT = R, RTTVAR = R/2;
//! later ones RTTVAR = 3/4·RTTVAR + 1/4·|SRTT − R|, then SRTT = 7/8·SRTT +
//! 1/8·R (alpha = 1/8, beta = 1/4); RTO = SRTT + max(G, K·RTTVAR) with
//! K = 4, bounded by [`RetxConfig::rto_min`] (§2.4) and
//! [`RetxConfig::rto_max`] (§2.5). Before the first measurement the RTO is
//! [`RetxConfig::rto`] (§2.1).
//!
//! **Timer** (RFC 6298 §5), at each sample:
//! * SND.UNA == SND.NXT: nothing outstanding, the timer is off (§5.2) and
//!   the retry count is reset;
//! * SND.UNA moved since the last sample (new data acknowledged): the timer
//!   restarts (§5.3) with the current RTO. A backed-off RTO stays until a
//!   new measurement recomputes it (the note after §5.7: Karn's algorithm;
//!   progress on retransmitted data is no measurement);
//! * SND.UNA has not moved for RTO: retransmit (§5.4, here: the device's
//!   go-back-N replay), double the RTO up to the maximum (§5.5, §2.5) and
//!   restart the timer (§5.6);
//! * when `max_retries` retransmissions did not move SND.UNA, the next
//!   expiry gives up: the connection is aborted (RFC 9293 §3.8.3, R2).
//!
//! The sampling period follows the RTO estimate, not the backed-off RTO: a
//! stalled connection is sampled no more often than a healthy one, progress
//! after a backoff is seen within a period, and the measurement that ends
//! the backoff is not coarsened by it. It is bounded below by
//! `rto_min / 4` (the estimate never goes below `rto_min`): on a fast link
//! the RTO converges to `rto_min` and the granularity to a quarter of it
//! (50 ms, one context read per connection per 50 ms, with the board's
//! defaults).
//!
//! A sample happens at the first poll at or after
//! `min(last sample + period, last progress + RTO)`, so a retransmission
//! fires between RTO and RTO + period after the ACK that last moved
//! SND.UNA (the progress itself is seen up to a period late).

use crate::tcp::{seq_le, seq_lt};
use crate::{Micros, MS};

/// RFC 6298 §2.1: until a round-trip time has been measured the RTO is 1 s.
pub const RDMA_RTO_INIT: Micros = 1000 * MS;
/// RFC 6298 §2.4 rounds the RTO up to 1 s but allows a lower minimum; Linux
/// uses 200 ms (`TCP_RTO_MIN`). The board's default (a LAN).
pub const RDMA_RTO_MIN: Micros = 200 * MS;
/// Upper bound of the RTO and its backoff (RFC 6298 §2.5: at least 60 s).
pub const RDMA_RTO_MAX: Micros = 60_000 * MS;
/// Retransmissions before giving up. The RTO is never below
/// [`RDMA_RTO_MIN`], so, doubling up to [`RDMA_RTO_MAX`], the 9th expiry
/// (the one after the 8th retransmission) comes at least 0.2 × (2^9 − 1) =
/// 102.2 s after the data stopped moving: RFC 9293 §3.8.3 asks R2 for data
/// to be at least 100 s.
pub const RDMA_MAX_RETRIES: u8 = 8;

/// RFC 6298 §2.3: alpha = 1/8, as a shift.
pub const RTT_ALPHA_SHIFT: u32 = 3;
/// RFC 6298 §2.3: beta = 1/4, as a shift.
pub const RTT_BETA_SHIFT: u32 = 2;
/// RFC 6298 §2.2, §2.3: K = 4.
pub const RTO_K: Micros = 4;
/// Samples of SND.UNA per RTO: the sampling period is a quarter of the
/// RTO estimate.
pub const SAMPLES_PER_RTO: Micros = 4;

/// The timer's tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetxConfig {
    /// The initial RTO: the RTO before the first RTT measurement (RFC 6298
    /// §2.1).
    pub rto: Micros,
    /// Smallest RTO (RFC 6298 §2.4); also bounds the sampling period below
    /// (`rto_min / 4`).
    pub rto_min: Micros,
    /// Largest RTO, and the cap of the backoff (RFC 6298 §2.5, §5.5).
    pub rto_max: Micros,
    /// Retransmissions without progress before the connection is aborted.
    pub max_retries: u8,
}

impl Default for RetxConfig {
    fn default() -> Self {
        RetxConfig {
            rto: RDMA_RTO_INIT,
            rto_min: RDMA_RTO_MIN,
            rto_max: RDMA_RTO_MAX,
            max_retries: RDMA_MAX_RETRIES,
        }
    }
}

impl RetxConfig {
    /// `rto` within `[rto_min, rto_max]` (RFC 6298 §2.4, §2.5; at least
    /// 1 µs, and `rto_min` wins if the two cross).
    pub fn bound(&self, rto: Micros) -> Micros {
        let lo = self.rto_min.max(1);
        rto.clamp(lo, self.rto_max.max(lo))
    }
}

/// What a sample asks the caller to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetxAction {
    /// Nothing.
    None,
    /// The RTO expired: ask the device to retransmit, then call
    /// [`RetxTimer::fired`] if it took the request.
    Retransmit,
    /// The retries ran out: abort the connection.
    GiveUp,
}

/// Counters of the timer, over every connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RetxStats {
    /// Samples of SND.UNA taken (in RDMA mode each is one context read).
    pub samples: u64,
    /// Samples that found data outstanding (SND.UNA != SND.NXT).
    pub outstanding: u64,
    /// RTT measurements taken (RFC 6298 §2.2, §2.3).
    pub rtt_samples: u64,
    /// Retransmissions the device took (`RETX_CONN` writes).
    pub retransmits: u64,
    /// Retransmission requests the device could not take yet (`Full`).
    pub busy: u64,
    /// Expiries on a device without `RETX_CONN` (`Unsupported`): from the
    /// first one on the firmware stops timing RDMA-mode connections.
    pub unsupported: u64,
    /// Connections aborted because the retries ran out.
    pub give_ups: u64,
    /// Connection-context writes of SND.UNA in a closing stream.
    pub una_writes: u64,
    /// The longest time a sample found SND.UNA standing still with data
    /// outstanding (since the last progress or retransmission), µs: how
    /// close a loss-free run came to the RTO.
    pub longest_stall: Micros,
    /// Zero-window probes sent ([`PersistTimer`]).
    pub probes: u64,
}

/// The RTT estimate of a connection (RFC 6298 §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rtt {
    srtt: Micros,
    rttvar: Micros,
}

/// The timer state of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetxTimer {
    /// SND.UNA at the last sample.
    una: u32,
    /// SND.NXT at the last sample.
    nxt: u32,
    /// Data was outstanding at the last sample.
    armed: bool,
    /// When SND.UNA was last seen to move (or the timer restarted).
    since: Micros,
    /// The next sample.
    next: Micros,
    /// The current RTO: `base` doubled by each retransmission.
    rto: Micros,
    /// The RTO from the estimate (or the initial RTO), without backoff.
    base: Micros,
    /// SRTT and RTTVAR, once a round trip has been measured.
    rtt: Option<Rtt>,
    /// The sequence number being timed (SND.NXT when the timing started)
    /// and the time of that sample.
    timing: Option<(u32, Micros)>,
    /// Karn's rule: SND.NXT at the last retransmission; no timing starts
    /// until SND.NXT is past it, and it is dropped once SND.UNA reaches it.
    karn: Option<u32>,
    /// The last retransmission was asked for at the last sample: the next
    /// sample raises `karn` to its SND.NXT.
    karn_open: bool,
    /// RTT measurements taken.
    rtts: u32,
    /// Retransmissions since SND.UNA last moved.
    retries: u8,
}

impl RetxTimer {
    /// A stopped timer whose first sample is due at `now`, with the initial
    /// RTO (RFC 6298 §2.1) and no RTT estimate.
    pub fn new(now: Micros, cfg: &RetxConfig) -> Self {
        let rto = cfg.bound(cfg.rto);
        RetxTimer {
            una: 0,
            nxt: 0,
            armed: false,
            since: now,
            next: now,
            rto,
            base: rto,
            rtt: None,
            timing: None,
            karn: None,
            karn_open: false,
            rtts: 0,
            retries: 0,
        }
    }

    /// When the next sample is due.
    pub fn deadline(&self) -> Micros {
        self.next
    }

    /// Whether a sample is due at `now`.
    pub fn due(&self, now: Micros) -> bool {
        now >= self.next
    }

    /// The current RTO: the estimate, doubled by each retransmission since
    /// the last measurement (RFC 6298 §5.5).
    pub fn rto(&self) -> Micros {
        self.rto
    }

    /// The RTO the estimate gives, without backoff: SRTT + max(G,
    /// K·RTTVAR) bounded (RFC 6298 §2.2–§2.5), or the initial RTO before the
    /// first measurement.
    pub fn base_rto(&self) -> Micros {
        self.base
    }

    /// The smoothed round-trip time (RFC 6298 §2), once measured.
    pub fn srtt(&self) -> Option<Micros> {
        self.rtt.map(|r| r.srtt)
    }

    /// The round-trip time variation (RFC 6298 §2), once measured.
    pub fn rttvar(&self) -> Option<Micros> {
        self.rtt.map(|r| r.rttvar)
    }

    /// RTT measurements taken so far.
    pub fn rtt_samples(&self) -> u32 {
        self.rtts
    }

    /// Whether a sequence number is being timed.
    pub fn timing(&self) -> bool {
        self.timing.is_some()
    }

    /// How often SND.UNA is sampled, and so the clock granularity G of the
    /// RTT measurement: a quarter of the RTO estimate (not of the backed-off
    /// RTO), at least `rto_min / 4` and 1 µs.
    pub fn period(&self) -> Micros {
        (self.base / SAMPLES_PER_RTO).max(1)
    }

    /// Retransmissions since SND.UNA last moved.
    pub fn retries(&self) -> u8 {
        self.retries
    }

    /// How long SND.UNA has stood still with data outstanding, as of the
    /// last sample (0 when nothing is outstanding).
    pub fn stalled(&self, now: Micros) -> Micros {
        if self.armed {
            now.saturating_sub(self.since)
        } else {
            0
        }
    }

    /// Whether data was outstanding at the last sample.
    pub fn armed(&self) -> bool {
        self.armed
    }

    fn schedule(&mut self, now: Micros) {
        let tick = now + self.period();
        self.next = if self.armed {
            tick.min(self.since + self.rto)
        } else {
            tick
        };
    }

    /// One RTT measurement `r` (RFC 6298 §2.2, §2.3), with the sampling
    /// period as the clock granularity G. A new measurement recomputes the
    /// RTO and so ends a backoff (the note after RFC 6298 §5.7).
    fn measured(&mut self, r: Micros, cfg: &RetxConfig) {
        let g = self.period();
        let r = r.max(1);
        let rtt = match self.rtt {
            // §2.2: the first measurement.
            None => Rtt {
                srtt: r,
                rttvar: r / 2,
            },
            // §2.3: RTTVAR first, from the old SRTT.
            Some(Rtt { srtt, rttvar }) => Rtt {
                rttvar: rttvar - (rttvar >> RTT_BETA_SHIFT) + (srtt.abs_diff(r) >> RTT_BETA_SHIFT),
                srtt: srtt - (srtt >> RTT_ALPHA_SHIFT) + (r >> RTT_ALPHA_SHIFT),
            },
        };
        self.rtt = Some(rtt);
        self.rtts = self.rtts.wrapping_add(1);
        self.base = cfg.bound(
            rtt.srtt
                .saturating_add(g.max(rtt.rttvar.saturating_mul(RTO_K))),
        );
        self.rto = self.base;
    }

    /// The RTT bookkeeping of a sample: Karn's guard, a measurement if
    /// SND.UNA reached the timed mark, and a new timing if none is running.
    fn time(&mut self, now: Micros, snd_una: u32, snd_nxt: u32, cfg: &RetxConfig) {
        if let Some(k) = self.karn {
            if self.karn_open {
                // The replay covers what the device had sent when it started.
                self.karn = Some(if seq_lt(k, snd_nxt) { snd_nxt } else { k });
                self.karn_open = false;
            } else if seq_le(k, snd_una) {
                // Everything retransmitted is acknowledged.
                self.karn = None;
            }
        }
        if let Some((mark, t)) = self.timing {
            if seq_le(mark, snd_una) {
                self.timing = None;
                self.measured(now.saturating_sub(t), cfg);
            }
        }
        let fresh = self.karn.is_none_or(|k| seq_lt(k, snd_nxt));
        if self.timing.is_none() && snd_una != snd_nxt && snd_nxt != self.nxt && fresh {
            self.timing = Some((snd_nxt, now));
        }
    }

    /// Takes a sample of the sequence state at `now` and says what to do.
    pub fn sample(
        &mut self,
        now: Micros,
        snd_una: u32,
        snd_nxt: u32,
        cfg: &RetxConfig,
    ) -> RetxAction {
        if self.armed && seq_lt(snd_una, self.una) {
            // SND.UNA never goes back; a stale read changes nothing.
            self.schedule(now);
            return RetxAction::None;
        }
        self.time(now, snd_una, snd_nxt, cfg);
        self.nxt = snd_nxt;
        if snd_una == snd_nxt {
            // RFC 6298 §5.2: all acknowledged, the timer is off.
            self.armed = false;
            self.una = snd_una;
            self.retries = 0;
            self.schedule(now);
            return RetxAction::None;
        }
        if !self.armed || snd_una != self.una {
            // Data became outstanding (RFC 6298 §5.1) or new data was
            // acknowledged (§5.3): restart with the current RTO.
            self.armed = true;
            self.una = snd_una;
            self.since = now;
            self.retries = 0;
            self.schedule(now);
            return RetxAction::None;
        }
        if now < self.since + self.rto {
            self.schedule(now);
            return RetxAction::None;
        }
        if self.retries >= cfg.max_retries {
            return RetxAction::GiveUp;
        }
        // Until the caller says the device took it, sample again next period.
        self.next = now + self.period();
        RetxAction::Retransmit
    }

    /// The device took the retransmission asked for at `now`: back off
    /// (RFC 6298 §5.5, capped by §2.5), restart the timer (§5.6), and drop
    /// the timing in progress (Karn's rule, RFC 6298 §3).
    pub fn fired(&mut self, now: Micros, cfg: &RetxConfig) {
        self.retries = self.retries.saturating_add(1);
        self.rto = self.rto.saturating_mul(2).min(cfg.rto_max.max(cfg.rto_min));
        self.since = now;
        self.timing = None;
        self.karn = Some(match self.karn {
            Some(k) if seq_lt(self.nxt, k) => k,
            _ => self.nxt,
        });
        self.karn_open = true;
        self.schedule(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const CFG: RetxConfig = RetxConfig {
        rto: 100,
        rto_min: 100,
        rto_max: 400,
        max_retries: 3,
    };

    /// Samples every µs from `from` to `to` with fixed (una, nxt), firing
    /// whenever asked; returns the times of the retransmissions and whether
    /// it gave up (and when).
    fn run(t: &mut RetxTimer, from: u64, to: u64, una: u32, nxt: u32) -> (Vec<u64>, Option<u64>) {
        let mut fires = Vec::new();
        for now in from..to {
            if !t.due(now) {
                continue;
            }
            match t.sample(now, una, nxt, &CFG) {
                RetxAction::Retransmit => {
                    t.fired(now, &CFG);
                    fires.push(now);
                }
                RetxAction::GiveUp => return (fires, Some(now)),
                RetxAction::None => {}
            }
        }
        (fires, None)
    }

    #[test]
    fn backoff_doubles_to_the_cap_then_gives_up() {
        let mut t = RetxTimer::new(0, &CFG);
        let (fires, gave_up) = run(&mut t, 0, 10_000, 10, 20);
        // Armed at 0; expiries after 100, 200, 400 (cap), then give up
        // after 400 more.
        assert_eq!(fires, vec![100, 300, 700]);
        assert_eq!(gave_up, Some(1100));
    }

    #[test]
    fn idle_never_fires_and_progress_restarts() {
        let mut t = RetxTimer::new(0, &CFG);
        assert_eq!(run(&mut t, 0, 1000, 5, 5), (vec![], None));
        let (fires, _) = run(&mut t, 1000, 1250, 5, 9);
        assert_eq!(fires, vec![1100]);
        assert_eq!(t.rto(), 200);
        // SND.UNA moves (on retransmitted data: no measurement): the timer
        // restarts when the progress is sampled (at most a period, 25 µs,
        // late), with the backed-off RTO (Karn).
        let (fires, _) = run(&mut t, 1250, 1500, 7, 9);
        assert_eq!(fires.len(), 1);
        assert!((1450..1450 + 25).contains(&fires[0]), "{fires:?}");
        assert_eq!((t.rto(), t.retries()), (400, 1));
        assert_eq!(t.rtt_samples(), 0);
    }

    #[test]
    fn stale_smaller_una_is_ignored() {
        let mut t = RetxTimer::new(0, &CFG);
        assert_eq!(t.sample(0, 100, 200, &CFG), RetxAction::None);
        assert_eq!(t.sample(50, 90, 200, &CFG), RetxAction::None);
        assert_eq!(t.sample(100, 100, 200, &CFG), RetxAction::Retransmit);
    }

    /// RFC 6298 §2.2/§2.3 by hand: R = 80 then 40 µs, G = 25 µs.
    #[test]
    fn estimate_follows_rfc6298_formulas() {
        let cfg = RetxConfig { rto_min: 1, ..CFG };
        let mut t = RetxTimer::new(0, &cfg);
        assert_eq!((t.rto(), t.period(), t.srtt()), (100, 25, None));
        t.sample(0, 0, 0, &cfg);
        // Data sent: timed from 10; acknowledged, seen at 90.
        t.sample(10, 0, 1000, &cfg);
        assert!(t.timing());
        t.sample(90, 1000, 1000, &cfg);
        // SRTT = 80, RTTVAR = 40, RTO = 80 + max(25, 160) = 240
        assert_eq!((t.srtt(), t.rttvar(), t.rto()), (Some(80), Some(40), 240));
        assert_eq!(t.period(), 60);
        t.sample(100, 1000, 2000, &cfg);
        t.sample(140, 2000, 2000, &cfg);
        // RTTVAR = 3/4·40 + 1/4·|80 − 40| = 40, SRTT = 7/8·80 + 40/8 = 75,
        // RTO = 75 + 160
        assert_eq!((t.srtt(), t.rttvar(), t.rto()), (Some(75), Some(40), 235));
        assert_eq!(t.rtt_samples(), 2);
    }
}

/// Octets an FPDU adds to its ULPDU on the wire at most, markers aside:
/// ULPDU_LENGTH (2), pad (up to 3) and CRC (4) (RFC 5044 §4.1).
pub const FPDU_OVERHEAD: u32 = 2 + 3 + 4;

/// Zero-window probing (the persist timer, RFC 9293 §3.8.6.1, RFC 1122
/// §4.2.2.17) of a connection whose data the device sends. The device
/// starts no FPDU that does not fit the peer's window and never splits one
/// (docs/rtl.md, "The peer's window"); with nothing in flight no ACK will
/// come to reopen the window if the peer's window update was lost. So
/// while nothing is outstanding (SND.UNA = SND.NXT) and the window is
/// smaller than the connection's largest FPDU, the firmware sends a probe
/// every RTO, backing off to the cap like the retransmission timer: a
/// segment with no data and SEG.SEQ = SND.UNA − 1, which the peer must
/// answer with an ACK carrying its current window (RFC 9293 §3.10.7.4,
/// "not acceptable"; Linux probes the same way). The ACK reaches the fast
/// path, which updates SND.WND. Probing goes on as long as the window stays
/// closed (§3.8.6.1: the connection is kept while the peer answers). The
/// firmware does not see whether the send queue has work, so an idle
/// connection whose peer offers a window below one FPDU is probed too (one
/// small segment per backed-off RTO).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PersistTimer {
    deadline: Option<Micros>,
    backoff: Micros,
}

impl PersistTimer {
    /// One sample: `wnd` the peer's window (octets), `fpdu` the largest FPDU
    /// the connection sends (MULPDU + [`FPDU_OVERHEAD`]), `rto` the
    /// connection's RTO estimate ([`RetxTimer::base_rto`]: the first probe
    /// comes one RTO after the window closed, RFC 1122 §4.2.2.17), doubled
    /// after each probe up to `cfg.rto_max`. Returns whether to send a
    /// probe now.
    #[allow(clippy::too_many_arguments)]
    pub fn sample(
        &mut self,
        now: Micros,
        una: u32,
        nxt: u32,
        wnd: u32,
        fpdu: u32,
        rto: Micros,
        cfg: &RetxConfig,
    ) -> bool {
        if una != nxt || wnd >= fpdu {
            *self = PersistTimer::default();
            return false;
        }
        if self.backoff == 0 {
            self.backoff = rto.max(1);
        }
        match self.deadline {
            None => {
                self.deadline = Some(now + self.backoff);
                false
            }
            Some(d) if now >= d => {
                self.backoff = (self.backoff * 2).min(cfg.rto_max.max(rto));
                self.deadline = Some(now + self.backoff);
                true
            }
            Some(_) => false,
        }
    }

    /// When the next probe is due, if the window is closed.
    pub fn deadline(&self) -> Option<Micros> {
        self.deadline
    }
}

#[cfg(test)]
mod persist_tests {
    use super::*;

    const CFG: RetxConfig = RetxConfig {
        rto: 100,
        rto_min: 100,
        rto_max: 400,
        max_retries: 3,
    };

    #[test]
    fn probes_back_off_while_closed_and_stop_when_open() {
        let mut p = PersistTimer::default();
        let probe_times: std::vec::Vec<u64> = (0..=1500)
            .step_by(10)
            .filter(|&t| p.sample(t, 5, 5, 0, 1462, 100, &CFG))
            .collect();
        // armed at 0: 100, then 200, 400, 400 (capped) apart
        assert_eq!(probe_times, [100, 300, 700, 1100, 1500]);
        // a window of a full FPDU: no probe, timer reset
        assert!(!p.sample(1600, 5, 5, 1462, 1462, 100, &CFG));
        assert_eq!(p.deadline(), None);
        // data in flight: the retransmission timer's case, not a probe
        assert!(!p.sample(1700, 5, 9, 0, 1462, 100, &CFG));
        assert_eq!(p.deadline(), None);
    }
}
