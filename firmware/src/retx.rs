//! The retransmission timer of a connection whose data the device sends
//! (RDMA mode, and the device's octets of a closing stream).
//!
//! The device keeps a log of the FPDUs it sent and replays them on request
//! (`port::RETX_CONN`, [`crate::hal::Hal::retransmit`]: go-back-N from
//! SND.UNA); deciding *when* is the firmware's job. There is no RTT sample
//! from the device, so the RTO is a configured value ([`RetxConfig`]) and
//! not RFC 6298 §2's SRTT/RTTVAR estimate.
//!
//! The timer samples SND.UNA and SND.NXT (one connection-context read in
//! RDMA mode) at most once per [`RetxTimer::period`] (a quarter of the
//! configured RTO) and otherwise keeps its deadline, so a check costs
//! nothing between samples:
//! * SND.UNA == SND.NXT: nothing outstanding, the timer is off (RFC 6298
//!   §5.2) and the backoff is reset;
//! * SND.UNA moved since the last sample (new data acknowledged): the
//!   timer restarts (§5.3) with the configured RTO: the backoff is dropped
//!   at once (there is no RTT measurement to recompute it from, cf. the
//!   note after §5.7);
//! * SND.UNA has not moved for RTO: retransmit (§5.4, here: the device's
//!   go-back-N replay), double the RTO up to the configured maximum (§5.5,
//!   §2.5) and restart the timer (§5.6);
//! * when `max_retries` retransmissions did not move SND.UNA, the next
//!   expiry gives up: the connection is aborted (RFC 9293 §3.8.3, R2).
//!
//! A sample happens at the first poll at or after
//! `min(last sample + period, last progress + RTO)`, so a retransmission
//! fires between RTO and RTO + period after the ACK that last moved
//! SND.UNA (the progress itself is seen up to a period late).

use crate::tcp::seq_lt;
use crate::{Micros, MS};

/// RFC 6298 §2.4 rounds the RTO up to 1 s but allows a lower minimum; Linux
/// uses 200 ms (`TCP_RTO_MIN`). The board's default (a LAN).
pub const RDMA_RTO_MIN: Micros = 200 * MS;
/// Upper bound of the backoff (RFC 6298 §2.5: at least 60 s).
pub const RDMA_RTO_MAX: Micros = 60_000 * MS;
/// Retransmissions before giving up. With [`RDMA_RTO_MIN`] doubling up to
/// [`RDMA_RTO_MAX`], the 9th expiry (the one after the 8th retransmission)
/// comes 0.2 × (2^9 − 1) = 102.2 s after the data stopped moving: RFC 9293
/// §3.8.3 asks R2 for data to be at least 100 s.
pub const RDMA_MAX_RETRIES: u8 = 8;

/// The timer's tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetxConfig {
    /// Initial (and, after progress, the restart) RTO.
    pub rto: Micros,
    /// Largest RTO the backoff reaches.
    pub rto_max: Micros,
    /// Retransmissions without progress before the connection is aborted.
    pub max_retries: u8,
}

impl Default for RetxConfig {
    fn default() -> Self {
        RetxConfig {
            rto: RDMA_RTO_MIN,
            rto_max: RDMA_RTO_MAX,
            max_retries: RDMA_MAX_RETRIES,
        }
    }
}

impl RetxConfig {
    /// How often SND.UNA is sampled: a quarter of the RTO (at least 1 µs).
    pub fn period(&self) -> Micros {
        (self.rto / 4).max(1)
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

/// The timer state of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetxTimer {
    /// SND.UNA at the last sample.
    una: u32,
    /// Data was outstanding at the last sample.
    armed: bool,
    /// When SND.UNA was last seen to move (or the timer restarted).
    since: Micros,
    /// The next sample.
    next: Micros,
    /// The current (backed-off) RTO.
    rto: Micros,
    /// Retransmissions since SND.UNA last moved.
    retries: u8,
}

impl RetxTimer {
    /// A stopped timer whose first sample is due at `now`.
    pub fn new(now: Micros, cfg: &RetxConfig) -> Self {
        RetxTimer {
            una: 0,
            armed: false,
            since: now,
            next: now,
            rto: cfg.rto,
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

    /// The current RTO (doubled by each retransmission).
    pub fn rto(&self) -> Micros {
        self.rto
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

    fn schedule(&mut self, now: Micros, cfg: &RetxConfig) {
        let tick = now + cfg.period();
        self.next = if self.armed {
            tick.min(self.since + self.rto)
        } else {
            tick
        };
    }

    /// Takes a sample of the sequence state at `now` and says what to do.
    pub fn sample(
        &mut self,
        now: Micros,
        snd_una: u32,
        snd_nxt: u32,
        cfg: &RetxConfig,
    ) -> RetxAction {
        if snd_una == snd_nxt {
            // RFC 6298 §5.2: all acknowledged, the timer is off.
            self.armed = false;
            self.una = snd_una;
            self.rto = cfg.rto;
            self.retries = 0;
            self.schedule(now, cfg);
            return RetxAction::None;
        }
        if !self.armed || snd_una != self.una {
            // Data became outstanding (RFC 6298 §5.1) or new data was
            // acknowledged (§5.3): restart with the configured RTO.
            if self.armed && seq_lt(snd_una, self.una) {
                // SND.UNA never goes back; a stale read changes nothing.
                self.schedule(now, cfg);
                return RetxAction::None;
            }
            self.armed = true;
            self.una = snd_una;
            self.since = now;
            self.rto = cfg.rto;
            self.retries = 0;
            self.schedule(now, cfg);
            return RetxAction::None;
        }
        if now < self.since + self.rto {
            self.schedule(now, cfg);
            return RetxAction::None;
        }
        if self.retries >= cfg.max_retries {
            return RetxAction::GiveUp;
        }
        // Until the caller says the device took it, sample again next period.
        self.next = now + cfg.period();
        RetxAction::Retransmit
    }

    /// The device took the retransmission asked for at `now`: back off
    /// (RFC 6298 §5.5, capped by §2.5) and restart the timer (§5.6).
    pub fn fired(&mut self, now: Micros, cfg: &RetxConfig) {
        self.retries = self.retries.saturating_add(1);
        self.rto = (self.rto.saturating_mul(2)).min(cfg.rto_max.max(cfg.rto));
        self.since = now;
        self.schedule(now, cfg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    const CFG: RetxConfig = RetxConfig {
        rto: 100,
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
        // SND.UNA moves: the backoff is reset, the timer restarts when the
        // progress is sampled (at most a period, 25 µs, late).
        let (fires, _) = run(&mut t, 1250, 1400, 7, 9);
        assert_eq!(fires.len(), 1);
        assert!((1350..1350 + 25).contains(&fires[0]), "{fires:?}");
        assert_eq!(t.rto(), 200);
    }

    #[test]
    fn stale_smaller_una_is_ignored() {
        let mut t = RetxTimer::new(0, &CFG);
        assert_eq!(t.sample(0, 100, 200, &CFG), RetxAction::None);
        assert_eq!(t.sample(50, 90, 200, &CFG), RetxAction::None);
        assert_eq!(t.sample(100, 100, 200, &CFG), RetxAction::Retransmit);
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
    /// the connection sends (MULPDU + [`FPDU_OVERHEAD`]). Returns whether to
    /// send a probe now.
    pub fn sample(
        &mut self,
        now: Micros,
        una: u32,
        nxt: u32,
        wnd: u32,
        fpdu: u32,
        cfg: &RetxConfig,
    ) -> bool {
        if una != nxt || wnd >= fpdu {
            *self = PersistTimer::default();
            return false;
        }
        if self.backoff == 0 {
            self.backoff = cfg.rto;
        }
        match self.deadline {
            None => {
                self.deadline = Some(now + self.backoff);
                false
            }
            Some(d) if now >= d => {
                self.backoff = (self.backoff * 2).min(cfg.rto_max);
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
        rto_max: 400,
        max_retries: 3,
    };

    #[test]
    fn probes_back_off_while_closed_and_stop_when_open() {
        let mut p = PersistTimer::default();
        let probe_times: std::vec::Vec<u64> = (0..=1500)
            .step_by(10)
            .filter(|&t| p.sample(t, 5, 5, 0, 1462, &CFG))
            .collect();
        // armed at 0: 100, then 200, 400, 400 (capped) apart
        assert_eq!(probe_times, [100, 300, 700, 1100, 1500]);
        // a window of a full FPDU: no probe, timer reset
        assert!(!p.sample(1600, 5, 5, 1462, 1462, &CFG));
        assert_eq!(p.deadline(), None);
        // data in flight: the retransmission timer's case, not a probe
        assert!(!p.sample(1700, 5, 9, 0, 1462, &CFG));
        assert_eq!(p.deadline(), None);
    }
}
