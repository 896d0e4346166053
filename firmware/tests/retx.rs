//! The RDMA-mode retransmission timer against the scripted Hal: when the
//! device's SND.UNA is stuck the firmware asks the device to replay
//! (`Hal::retransmit`), backs off, and gives up after its retries; a
//! closing stream's acknowledged device octets reach the context; the RTO
//! follows the round-trip time measured from those samples (RFC 6298); and
//! the receive side answers out-of-order and old segments with an ACK only.
mod common;
use common::*;
use rnic_fw::retx::{RetxConfig, RDMA_RTO_INIT, RDMA_RTO_MIN};
use rnic_fw::Config;
use rnic_wire::abi::context::{ConnContext, ConnMode, ExceptionReason, TableId};
use rnic_wire::abi::mailbox::{Command, EventKind, MboxStatus, QpState};
use rnic_wire::net::TcpControl;

/// RTO 1 ms (initial and minimum), cap 4 ms, 4 retries: expiries 1, 2, 4,
/// 4 ms after the last progress, then the 5th gives up.
const RETX: RetxConfig = RetxConfig {
    rto: 1000,
    rto_min: 1000,
    rto_max: 4000,
    max_retries: 4,
};

fn fw_with_timer() -> Fw {
    Fw::new(
        MockHal::new(),
        Config {
            rdma_retx: RETX,
            ..Config::default()
        },
    )
}

/// Sets the device's send state in the mock's connection context 0.
fn device_sent(fw: &mut Fw, snd_una: u32, snd_nxt: u32) {
    let mut c = fw.hal.conn(0).unwrap();
    c.snd_una = snd_una;
    c.snd_nxt = snd_nxt;
    let mut b = [0u8; ConnContext::SIZE];
    c.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
}

/// Polls every `step` µs until `until` (absolute); returns the times of the
/// retransmission requests made meanwhile.
fn run_until(fw: &mut Fw, until: u64, step: u64) -> Vec<u64> {
    let before = fw.hal.retx.len();
    while fw.hal.now < until {
        fw.hal.now += step;
        fw.poll();
    }
    fw.hal.retx[before..]
        .iter()
        .map(|&(c, t)| {
            assert_eq!(c, 0, "connection 0 only");
            t
        })
        .collect()
}

/// A scripted link for connection 0: from `t0` the device sends
/// [`Link::RATE`] octets per µs, and the peer acknowledges each octet
/// `rtt(t)` after it left: at `t`, SND.NXT is `snd + RATE·(t − t0)` and
/// SND.UNA what SND.NXT was `rtt(t)` earlier (never moving back). After
/// `stop` nothing is sent or acknowledged any more.
struct Link {
    t0: u64,
    snd: u32,
    rtt: fn(u64) -> u64,
    stop: Option<u64>,
    acked: u64,
}

impl Link {
    const RATE: u64 = 10;

    fn new(t0: u64, snd: u32, rtt: fn(u64) -> u64) -> Link {
        Link {
            t0,
            snd,
            rtt,
            stop: None,
            acked: 0,
        }
    }

    /// The device's (SND.UNA, SND.NXT) at `t`.
    fn at(&mut self, t: u64) -> (u32, u32) {
        let t = self.stop.map_or(t, |s| t.min(s));
        let sent = |t: u64| t.saturating_sub(self.t0) * Self::RATE;
        let acked = sent(t.saturating_sub((self.rtt)(t)));
        self.acked = self.acked.max(acked);
        (
            self.snd.wrapping_add(self.acked as u32),
            self.snd.wrapping_add(sent(t) as u32),
        )
    }
}

/// Runs `link` until `until`: polls at each of the firmware's deadlines
/// (nothing changes for the firmware in between), at most `max_step`
/// apart, with the device's send state of that moment. Returns the
/// retransmissions asked for, each with the RTO in force just before.
fn run_link(fw: &mut Fw, link: &mut Link, until: u64, max_step: u64) -> Vec<(u64, u64)> {
    let mut fires = vec![];
    while fw.hal.now < until {
        let now = fw.hal.now;
        let next = fw.next_deadline().unwrap_or(u64::MAX);
        fw.hal.now = next.clamp(now + 1, now + max_step).min(until);
        let (una, nxt) = link.at(fw.hal.now);
        device_sent(fw, una, nxt);
        let rto = fw.conn(0).map(|c| c.retx.rto());
        let n = fw.hal.retx.len();
        fw.poll();
        if fw.hal.retx.len() > n {
            fires.push((fw.hal.now, rto.unwrap()));
        }
    }
    fires
}

fn fw_with(rdma_retx: RetxConfig) -> Fw {
    Fw::new(
        MockHal::new(),
        Config {
            rdma_retx,
            ..Config::default()
        },
    )
}

/// RFC 6298 §2 on a fast link (ACKs back within 20 µs) with the board's
/// defaults: the RTO starts at 1 s (§2.1) and converges to the 200 ms
/// minimum (§2.4), sampled every 50 ms (the measurement granularity G:
/// every measurement reads one period, and so does SRTT), with no
/// retransmission. Fails on a timer
/// without an RTT estimate: its RTO stays the configured 1 s.
#[test]
fn rto_converges_to_the_minimum_on_a_fast_link() {
    let mut fw = fw_with(RetxConfig::default());
    let (_qpn, _rcv, snd) = passive_rdma(&mut fw);
    let t0 = fw.hal.now;
    let timer = |fw: &Fw| fw.conn(0).unwrap().retx;
    assert_eq!(timer(&fw).rto(), RDMA_RTO_INIT);
    assert_eq!(timer(&fw).srtt(), None);
    let mut link = Link::new(t0, snd, |_| 20);
    let mut trace = vec![];
    for s in 1..=10 {
        assert!(run_link(&mut fw, &mut link, t0 + s * 1_000_000, 1000).is_empty());
        trace.push((timer(&fw).rto(), timer(&fw).srtt().unwrap()));
    }
    println!("(RTO, SRTT) each second: {trace:?}");
    assert!(
        trace[0].0 < RDMA_RTO_INIT,
        "measured within the first second"
    );
    assert!(
        trace[5..].iter().all(|&(rto, _)| rto == RDMA_RTO_MIN),
        "at the minimum after 6 s"
    );
    let t = timer(&fw);
    assert_eq!((t.base_rto(), t.period()), (RDMA_RTO_MIN, RDMA_RTO_MIN / 4));
    // (SRTT's 1/8 steps are rounded to the µs: within 8 µs of R.)
    assert!(t.srtt().unwrap().abs_diff(t.period()) < 8, "{:?}", t.srtt());
    assert!(fw.stats().retx.rtt_samples >= 50, "{:?}", fw.stats().retx);
    assert_eq!(fw.stats().retx.retransmits, 0);
    // The cost at the minimum: one context read per 50 ms.
    let samples = fw.stats().retx.samples;
    run_link(&mut fw, &mut link, t0 + 11_000_000, 1000);
    let per_s = fw.stats().retx.samples - samples;
    assert!((19..=21).contains(&per_s), "{per_s} samples in 1 s");
}

/// About 10 ms (± 1 ms) of round trip.
fn rtt_10ms(t: u64) -> u64 {
    9_000 + (t / 3_000).wrapping_mul(2_654_435_761) % 2_001
}

/// RFC 6298 §2.2–§2.4 on a 10 ms link. With a 1 ms minimum the RTO comes
/// from the measurements: SRTT near 10 ms (samples are rounded up to the
/// sampling grid, G = RTO/4) and RTO = SRTT + max(G, 4·RTTVAR), well above
/// the minimum. With the board's 200 ms minimum the same link stays at
/// 200 ms. Fails on a timer without an RTT estimate (its RTO stays the
/// configured initial 1 s; it has no SRTT).
#[test]
fn rto_follows_a_10ms_round_trip_above_the_minimum() {
    let cfg = RetxConfig {
        rto_min: 1000,
        ..RetxConfig::default()
    };
    let mut fw = fw_with(cfg);
    let (_qpn, _rcv, snd) = passive_rdma(&mut fw);
    let t0 = fw.hal.now;
    let mut link = Link::new(t0, snd, rtt_10ms);
    let mut trace = vec![];
    for s in 1..=10 {
        assert!(run_link(&mut fw, &mut link, t0 + s * 1_000_000, 1000).is_empty());
        let t = fw.conn(0).unwrap().retx;
        trace.push((t.rto(), t.srtt().unwrap(), t.rttvar().unwrap()));
    }
    println!("(RTO, SRTT, RTTVAR) each second: {trace:?}");
    for &(rto, srtt, rttvar) in &trace[6..] {
        assert!((9_500..=13_000).contains(&srtt), "SRTT {srtt} µs");
        assert!(rttvar <= 4_000, "RTTVAR {rttvar} µs");
        // RTO = SRTT + max(G, 4·RTTVAR), G the sampling period (RTO/4)
        let k = srtt + 4 * rttvar;
        assert!(rto >= k && rto <= k.max(srtt + rto / 3), "RTO {rto} µs");
        assert!((11_000..=30_000).contains(&rto), "RTO {rto} µs");
    }
    assert_eq!(fw.stats().retx.retransmits, 0);

    // The same link with the 200 ms minimum: the RTO is the minimum.
    let mut fw = fw_with(RetxConfig::default());
    let (_qpn, _rcv, snd) = passive_rdma(&mut fw);
    let t0 = fw.hal.now;
    let mut link = Link::new(t0, snd, rtt_10ms);
    run_link(&mut fw, &mut link, t0 + 10_000_000, 1000);
    let t = fw.conn(0).unwrap().retx;
    assert_eq!(t.rto(), RDMA_RTO_MIN);
    // Every measurement is one 50 ms sampling period (the ACK comes back
    // before the next sample).
    let srtt = t.srtt().unwrap();
    assert!(srtt.abs_diff(RDMA_RTO_MIN / 4) < 8, "SRTT {srtt} µs");
    assert_eq!(fw.stats().retx.retransmits, 0);
}

/// RFC 6298 §5.5 from a measured RTO: on the 10 ms link (1 ms minimum) the
/// peer stops acknowledging; the first expiry comes one measured RTO after
/// the last progress was seen, each later one twice the RTO before, and
/// after `max_retries` the next gives up as the device's RetransmitTimeout
/// would. Fails on a timer without an RTT estimate (the first expiry
/// would come after the configured 1 s).
#[test]
fn backoff_doubles_from_the_measured_rto_then_gives_up() {
    let cfg = RetxConfig {
        rto_min: 1000,
        max_retries: 4,
        ..RetxConfig::default()
    };
    let mut fw = fw_with(cfg);
    let (qpn, _rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let t0 = fw.hal.now;
    let mut link = Link::new(t0, snd, rtt_10ms);
    assert!(run_link(&mut fw, &mut link, t0 + 5_000_000, 1000).is_empty());
    let rto0 = fw.conn(0).unwrap().retx.rto();
    let period = fw.conn(0).unwrap().retx.period();
    assert!((11_000..=30_000).contains(&rto0), "{rto0}");
    let stop = fw.hal.now;
    link.stop = Some(stop);
    let fires = run_link(&mut fw, &mut link, stop + 60 * rto0, 1000);
    let rel: Vec<(u64, u64)> = fires.iter().map(|&(t, r)| (t - stop, r)).collect();
    println!("RTO {rto0} µs, period {period} µs; expiries: {rel:?}");
    assert_eq!(fires.len(), 4, "max_retries");
    // One RTO after the sample that saw the last progress (within a period
    // after the stop); no measurement after that (the RTO only doubles).
    assert!(rel[0].0 > rto0 && rel[0].0 <= rto0 + period, "{rel:?}");
    for (i, w) in fires.windows(2).enumerate() {
        let want = rto0 << (i + 1);
        assert_eq!((w[1].0 - w[0].0, w[1].1), (want, want), "expiry {}", i + 2);
    }
    assert_eq!(fw.stats().retx.retransmits, 4);
    assert_eq!(fw.stats().retx.give_ups, 1);
    assert_eq!(fw.conn_count(), 0);
    let ev = fw.hal.events.pop().expect("an event");
    assert_eq!((ev.kind, ev.handle), (EventKind::ConnectionLost, qpn));
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Error);
}

#[test]
fn stuck_una_fires_once_per_rto_backs_off_to_the_cap_then_aborts() {
    let mut fw = fw_with_timer();
    let (qpn, _rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    let t0 = fw.hal.now;
    device_sent(&mut fw, snd, snd + 3000);
    fw.poll(); // the sample that sees the data outstanding
    let fires = run_until(&mut fw, t0 + 10_990, 10);
    let rel: Vec<u64> = fires.iter().map(|t| t - t0).collect();
    // Exactly once per period: 1, 1+2, 3+4, 7+4 (capped) ms.
    assert_eq!(rel, vec![1000, 3000, 7000]);
    assert_eq!(fw.stats().retx.retransmits, 3);
    let fires = run_until(&mut fw, t0 + 11_000, 10);
    assert_eq!(fires, vec![t0 + 11_000]);
    assert_eq!(fw.stats().retx.retransmits, 4);
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Rts, "not yet");
    assert!(fw.hal.events.is_empty());
    let _ = sent_tcp(&mut fw.hal);
    // The 5th expiry (4 ms later) gives up: RST, ConnectionLost, QP Error
    // and flushed, the slot freed (as the device's RetransmitTimeout).
    let fires = run_until(&mut fw, t0 + 14_990, 10);
    assert!(fires.is_empty());
    assert_eq!(fw.conn_count(), 1);
    run_until(&mut fw, t0 + 15_000, 10);
    assert_eq!(fw.stats().retx.give_ups, 1);
    assert_eq!(fw.conn_count(), 0);
    let ev = fw.hal.events.pop().expect("an event");
    assert_eq!((ev.kind, ev.handle), (EventKind::ConnectionLost, qpn));
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Error);
    assert_eq!(fw.hal.flushed, vec![qpn]);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Free);
    let rst = sent_tcp(&mut fw.hal);
    assert_eq!(rst.len(), 1);
    assert_eq!(
        (rst[0].ctl, rst[0].seq),
        (TcpControl::Rst, snd + 3000),
        "RST at the device's SND.NXT"
    );
    // Cost: one context read per sample, a sample per RTO/4 (250 µs) at
    // most, and one at each expiry.
    let samples = fw.stats().retx.samples;
    assert!((60..=66).contains(&samples), "{samples} samples in 15 ms");
}

/// Karn's rule (RFC 6298 §3) and the note after §5.7: a retransmission
/// discards the timing in progress, so the late ACK of the retransmitted
/// data is no RTT measurement; progress on it resets the retries but keeps
/// the backed-off RTO; the next measurement (of data sent after the
/// replay) recomputes the RTO and ends the backoff. Fails on a timer that
/// drops the backoff on any progress (the partial ACK would bring the next
/// expiry 1 ms after it, not 4 ms), or that times retransmitted data (the
/// late ACK would be a 4.5 ms sample).
#[test]
fn karn_retransmission_discards_the_timing_and_keeps_the_backoff() {
    let mut fw = fw_with_timer();
    let (_qpn, _rcv, snd) = passive_rdma(&mut fw);
    let t0 = fw.hal.now;
    device_sent(&mut fw, snd, snd + 3000);
    fw.poll();
    let timer = |fw: &Fw| fw.conn(0).unwrap().retx;
    assert!(timer(&fw).timing(), "SND.NXT timed from the first sample");
    // Two expiries: the RTO is 4 ms now, and nothing is being timed.
    assert_eq!(
        run_until(&mut fw, t0 + 3000, 10),
        vec![t0 + 1000, t0 + 3000]
    );
    assert!(!timer(&fw).timing(), "the retransmission discarded it");
    // The peer acknowledges part of it at t0 + 3500: retransmitted octets,
    // so no measurement and no timing either (SND.NXT did not move past
    // what was replayed).
    run_until(&mut fw, t0 + 3500, 10);
    device_sent(&mut fw, snd + 1000, snd + 3000);
    // Seen at the next sample (within RTO/4), then the backed-off 4 ms.
    let fires = run_until(&mut fw, t0 + 8000, 10);
    assert_eq!(fires.len(), 1, "{fires:?}");
    assert!(
        (t0 + 7500..=t0 + 7750).contains(&fires[0]),
        "{}",
        fires[0] - t0
    );
    assert_eq!(timer(&fw).retries(), 1, "progress reset the retries");
    assert_eq!(timer(&fw).rto(), 4000);
    // The rest is acknowledged, late: still no RTT sample.
    device_sent(&mut fw, snd + 3000, snd + 3000);
    run_until(&mut fw, t0 + 9000, 10);
    assert_eq!(fw.stats().retx.rtt_samples, 0);
    assert_eq!(timer(&fw).srtt(), None);
    assert_eq!(timer(&fw).rto(), 4000, "no measurement, the backoff stays");
    // New data, acknowledged 300 µs later: timed from the next sample,
    // measured at the first sample that sees the ACK (samples every
    // 250 µs: R is 250 or 500 µs), and the RTO is recomputed: SRTT +
    // max(G, 4 RTTVAR) = R + 2R, at least the 1 ms minimum.
    device_sent(&mut fw, snd + 3000, snd + 5000);
    let t1 = fw.hal.now;
    run_until(&mut fw, t1 + 300, 10);
    device_sent(&mut fw, snd + 5000, snd + 5000);
    run_until(&mut fw, t1 + 1000, 10);
    assert_eq!(fw.stats().retx.rtt_samples, 1);
    let r = timer(&fw).srtt().expect("a measurement");
    assert!([250, 500].contains(&r), "R = {r} µs");
    assert_eq!(timer(&fw).rttvar(), Some(r / 2));
    assert_eq!(timer(&fw).rto(), RETX.bound(3 * r), "the backoff ended");
    assert!(timer(&fw).rto() < 4000);
    // Everything acknowledged: the timer stops (RFC 6298 §5.2).
    assert!(run_until(&mut fw, t0 + 100_000, 50).is_empty());
    assert_eq!(fw.conn_count(), 1);
}

#[test]
fn idle_connection_never_fires() {
    let mut fw = fw_with_timer();
    let (qpn, _rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let t0 = fw.hal.now;
    // Data flows: SND.UNA moves at every sample, the timer never expires.
    for k in 1..200u32 {
        device_sent(&mut fw, snd + 100 * k, snd + 100 * k + 1000);
        fw.hal.now += 500;
        fw.poll();
    }
    // Then idle for 10 s.
    device_sent(&mut fw, snd + 50_000, snd + 50_000);
    assert!(run_until(&mut fw, t0 + 10_000_000, 1000).is_empty());
    assert!(fw.hal.retx.is_empty());
    assert_eq!(fw.stats().retx.retransmits, 0);
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Rts);
    assert!(fw.hal.events.is_empty());
}

#[test]
fn device_without_retx_keeps_the_old_behaviour() {
    let mut fw = fw_with_timer();
    fw.hal.retx_unsupported = true;
    let (qpn, _rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let t0 = fw.hal.now;
    device_sent(&mut fw, snd, snd + 3000);
    run_until(&mut fw, t0 + 1100, 10);
    assert_eq!(fw.stats().retx.unsupported, 1);
    let samples = fw.stats().retx.samples;
    // Stuck for a minute: no abort, no further context reads.
    run_until(&mut fw, t0 + 60_000_000, 10_000);
    assert_eq!(fw.stats().retx.samples, samples);
    assert_eq!(fw.stats().retx.unsupported, 1);
    assert_eq!(fw.conn_count(), 1);
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Rts);
    assert!(fw.hal.events.is_empty());
    // The device's own timeout still ends it.
    rx_as(&mut fw, ExceptionReason::RetransmitTimeout, 0, vec![]);
    assert_eq!(fw.hal.events.pop().unwrap().kind, EventKind::ConnectionLost);
    assert_eq!(fw.conn_count(), 0);
}

#[test]
fn busy_device_is_asked_again_without_backoff() {
    let mut fw = fw_with_timer();
    let (_qpn, _rcv, snd) = passive_rdma(&mut fw);
    let t0 = fw.hal.now;
    device_sent(&mut fw, snd, snd + 3000);
    fw.poll();
    fw.hal.retx_busy = 2;
    // Busy at 1000 and 1250, taken at the next sample (RTO/4 later).
    let fires = run_until(&mut fw, t0 + 2000, 10);
    assert_eq!(fires, vec![t0 + 1500]);
    assert_eq!(fw.stats().retx.busy, 2);
    // Backed off once only: the next expiry 2 ms after the one taken.
    assert_eq!(run_until(&mut fw, t0 + 3500, 10), vec![t0 + 3500]);
}

#[test]
fn closing_stream_writes_acknowledged_device_una_and_replays() {
    let mut fw = fw_with_timer();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    // The device sent 3000 octets, 1000 acknowledged; the host disconnects.
    device_sent(&mut fw, snd + 1000, snd + 3000);
    assert_eq!(
        cmd(
            &mut fw,
            Command::Disconnect {
                qpn,
                abortive: false
            }
        )
        .0,
        MboxStatus::Ok
    );
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(ctx.mode, ConnMode::Firmware);
    let fin = sent_tcp(&mut fw.hal).pop().unwrap();
    assert_eq!((fin.ctl, fin.seq), (TcpControl::Fin, snd + 3000));
    // The peer acknowledges 1000 more device octets (a firmware-mode segment
    // now): the context's SND.UNA follows.
    let ack = Seg::new(PPORT, LPORT, TcpControl::None, rcv, Some(snd + 2000));
    let writes = fw.hal.writes.len();
    rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, ack.frame());
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!((ctx.snd_una, ctx.snd_nxt), (snd + 2000, snd + 3000));
    assert_eq!(ctx.mode, ConnMode::Firmware);
    assert_eq!(fw.hal.writes.len(), writes + 1, "one context write");
    assert_eq!(fw.stats().retx.una_writes, 1);
    // A duplicate ACK moves nothing and writes nothing.
    rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, ack.frame());
    assert_eq!(fw.hal.writes.len(), writes + 1);
    // The rest stays unacknowledged: the device replays it (same RETX_CONN).
    let t1 = fw.hal.now;
    let fires = run_until(&mut fw, t1 + 1250, 10);
    assert_eq!(fires.len(), 1, "{fires:?}");
    assert!((t1 + 1000..=t1 + 1250).contains(&fires[0]));
    // Everything acknowledged, our FIN too (clamped to the device's
    // SND.NXT in the context), and the peer closes.
    let mut f = Seg::new(PPORT, LPORT, TcpControl::Fin, rcv, Some(snd + 3001));
    f.payload = vec![];
    rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, f.frame());
    assert_eq!(fw.stats().retx.una_writes, 2);
    let mut b = fw
        .hal
        .writes
        .iter()
        .rev()
        .filter(|w| w.0 == TableId::Conn && w.1 == 0)
        .map(|w| ConnContext::parse(&w.2).unwrap());
    // The last write frees the slot; the one before it moved SND.UNA.
    let last = b.next().unwrap();
    let una = if last.mode == ConnMode::Free {
        b.next().unwrap()
    } else {
        last
    };
    assert_eq!((una.snd_una, una.snd_nxt), (snd + 3000, snd + 3000));
    // No more replays once the device's octets are acknowledged.
    let n = fw.hal.retx.len();
    let until = fw.hal.now + 20_000;
    run_until(&mut fw, until, 100);
    assert_eq!(fw.hal.retx.len(), n);
}

#[test]
fn closing_stream_gives_up_after_retries() {
    let mut fw = fw_with_timer();
    let (qpn, _rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    device_sent(&mut fw, snd, snd + 3000);
    assert_eq!(
        cmd(
            &mut fw,
            Command::Disconnect {
                qpn,
                abortive: false
            }
        )
        .0,
        MboxStatus::Ok
    );
    let t0 = fw.hal.now;
    run_until(&mut fw, t0 + 20_000, 10);
    assert_eq!(fw.stats().retx.retransmits, 4);
    assert_eq!(fw.stats().retx.give_ups, 1);
    assert_eq!(fw.conn_count(), 0);
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Error);
    assert!(fw
        .hal
        .events
        .iter()
        .any(|e| e.kind == EventKind::ConnectionLost && e.handle == qpn));
}

/// RFC 9293 §3.10.7.4: a segment that is not the next in order is not
/// accepted; an out-of-order one in the window and an old duplicate are
/// both answered with an ACK for RCV.NXT. In RDMA mode the device hands
/// them to the firmware (`OutOfWindow`): neither may move RCV.NXT nor be
/// placed (injected).
#[test]
fn out_of_order_and_old_segments_get_an_ack_only() {
    let mut fw = fw_with_timer();
    let (_qpn, rcv, snd) = passive_rdma(&mut fw);
    let _ = sent_tcp(&mut fw.hal);
    // The fast path took 20 + 2000 octets meanwhile.
    let mut c = fw.hal.conn(0).unwrap();
    c.rcv_nxt = rcv + 2020;
    let mut b = [0u8; ConnContext::SIZE];
    c.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
    let injected = fw.hal.injected.len();
    let writes = fw.hal.writes.len();
    let rn = rcv + 2020;
    for (seq, what) in [(rn + 1460, "out of order"), (rn - 1460, "old duplicate")] {
        let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, seq, Some(snd));
        d.payload = vec![0x5A; 1460];
        rx_as(&mut fw, ExceptionReason::OutOfWindow, 0, d.frame());
        let out = sent_tcp(&mut fw.hal);
        assert_eq!(out.len(), 1, "{what}: one ACK");
        assert_eq!(
            (out[0].ctl, out[0].seq, out[0].ack, out[0].payload.len()),
            (TcpControl::None, snd, Some(rn), 0),
            "{what}: ACK of RCV.NXT"
        );
    }
    assert_eq!(fw.hal.injected.len(), injected, "nothing placed");
    assert_eq!(fw.hal.writes.len(), writes, "no context write");
    assert_eq!(fw.hal.conn(0).unwrap().rcv_nxt, rn);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Rdma);
}

/// The peer's window closed with nothing in flight (RFC 9293 §3.8.6.1): the
/// firmware probes with SEG.SEQ = SND.UNA − 1 and no data, each RTO and
/// backing off to the cap, and stops once the window holds an FPDU again.
#[test]
fn closed_window_is_probed_with_backoff_until_it_opens() {
    let mut fw = fw_with_timer();
    let (_qpn, rcv, snd) = passive_rdma(&mut fw);
    let _ = sent_tcp(&mut fw.hal);
    let set_wnd = |fw: &mut Fw, wnd: u32| {
        let mut c = fw.hal.conn(0).unwrap();
        c.snd_una = snd;
        c.snd_nxt = snd;
        c.snd_wnd = wnd;
        let mut b = [0u8; ConnContext::SIZE];
        c.emit(&mut b).unwrap();
        fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
    };
    let mulpdu = fw.hal.conn(0).unwrap().mulpdu as u32;
    assert!(mulpdu > 0);
    let t0 = fw.hal.now;
    set_wnd(&mut fw, mulpdu - 1);
    fw.poll();
    let mut probes = vec![];
    while fw.hal.now < t0 + 11_000 {
        fw.hal.now += 10;
        fw.poll();
        for o in sent_tcp(&mut fw.hal) {
            assert_eq!(
                (o.ctl, o.seq, o.ack, o.payload.len()),
                (TcpControl::None, snd.wrapping_sub(1), Some(rcv), 0),
                "a probe: SND.UNA - 1, no data, ACK of RCV.NXT"
            );
            probes.push(fw.hal.now - t0);
        }
    }
    // armed at the first sample, then 1, 2, 4, 4 ms (capped) apart; within
    // a sampling period (RTO/4) of each deadline
    assert_eq!(probes.len(), 4, "{probes:?}");
    for (p, want) in probes.iter().zip([1000u64, 3000, 7000, 11000]) {
        assert!(
            (want..=want + 260).contains(p),
            "probe at {p} µs, due {want}"
        );
    }
    assert_eq!(fw.stats().retx.probes, 4);
    assert_eq!(fw.stats().retx.retransmits, 0, "nothing to replay");
    // the window opens: no more probes
    set_wnd(&mut fw, 65535);
    let end = fw.hal.now + 20_000;
    while fw.hal.now < end {
        fw.hal.now += 10;
        fw.poll();
    }
    assert!(sent_tcp(&mut fw.hal).is_empty());
    assert_eq!(fw.stats().retx.probes, 4);
}
