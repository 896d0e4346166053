//! TCP for the slow path: the per-connection handshake and teardown state
//! machine ([`Tcb`]) and the bounded backlog of half-open passive
//! connections ([`Backlog`]).
//!
//! The firmware owns a connection's TCP while the connection is in firmware
//! mode (handshake, MPA negotiation, teardown); in RDMA mode the fast path
//! owns it and the firmware only sees RST, SYN, FIN and out-of-window
//! segments, after re-reading the sequence numbers from the connection
//! context ([`Tcb::sync`]).
//!
//! What a [`Tcb`] does:
//! * active open: SYN with MSS and window scale; passive open: SYN-ACK with
//!   MSS, and window scale only if the SYN offered it (RFC 7323 §2.2).
//!   Timestamps and SACK are never offered; a peer that offers them is
//!   answered without them, which turns them off (RFC 7323 §3.2, RFC 2018).
//! * SYN, SYN-ACK, data and FIN retransmission with exponential backoff
//!   from [`RTO_INITIAL`] up to [`RTO_MAX`], at most `max_retries` times,
//!   then [`TcpEvent::TimedOut`].
//! * RFC 5961: a RST whose sequence number is exactly `rcv_nxt` resets the
//!   connection; one elsewhere in the window gets a challenge ACK, one
//!   outside is dropped (§3). A SYN on a synchronized connection always gets
//!   a challenge ACK (§4). ACKs outside `[snd_una - max_snd_wnd, snd_nxt]`
//!   are dropped with an ACK (§5). Challenge ACKs are limited to
//!   [`CHALLENGE_ACK_LIMIT`] per second per connection (§7).
//! * graceful close (FIN both ways, TIME-WAIT of [`TIME_WAIT`], a bounded
//!   FIN-WAIT-2) and abortive close (RST).
//!
//! Received data is not consumed by [`Tcb::on_segment`]: it reports the
//! in-order part of the payload and the caller consumes as much as it takes
//! ([`Tcb::consume`]), so that octets after an MPA Reply can be left to
//! the fast path.

use crate::{Micros, MS};
use rnic_wire::net::{TcpControl, TcpRepr, TcpSeqNumber};

/// Initial retransmission timeout (RFC 6298 §2.1).
pub const RTO_INITIAL: Micros = 1000 * MS;
/// Largest retransmission timeout.
pub const RTO_MAX: Micros = 60_000 * MS;
/// Default retransmissions before giving up.
pub const MAX_RETRIES: u8 = 5;
/// TIME-WAIT duration (2 MSL; short, the peers are on a LAN).
pub const TIME_WAIT: Micros = 2000 * MS;
/// Longest FIN-WAIT-2 before the connection is dropped.
pub const FIN_WAIT2_TIMEOUT: Micros = 30_000 * MS;
/// Challenge ACKs per second per connection (RFC 5961 §7).
pub const CHALLENGE_ACK_LIMIT: u8 = 10;
/// Default MSS when the peer sends none (RFC 9293 §3.7.1).
pub const DEFAULT_MSS: u16 = 536;

/// `a < b` in sequence space.
pub fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
/// `a <= b` in sequence space.
pub fn seq_le(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) <= 0
}

fn sn(v: u32) -> TcpSeqNumber {
    TcpSeqNumber(v as i32)
}
fn un(v: TcpSeqNumber) -> u32 {
    v.0 as u32
}

/// TCP states (RFC 9293 §3.3.2; LISTEN is the listener table's job).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpState {
    /// No connection.
    Closed,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    /// SYN received, SYN-ACK sent.
    SynRcvd,
    /// Open.
    Established,
    /// We closed; our FIN is out.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's.
    FinWait2,
    /// Both closed at once; waiting for the ACK of our FIN.
    Closing,
    /// Both closed; lingering.
    TimeWait,
    /// The peer closed; we have not.
    CloseWait,
    /// The peer closed, then we did; waiting for the ACK of our FIN.
    LastAck,
}

impl TcpState {
    /// SYN-RECEIVED and every state after it.
    pub fn synchronized(self) -> bool {
        !matches!(
            self,
            TcpState::Closed | TcpState::SynSent | TcpState::SynRcvd
        )
    }
}

/// A connection's addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Tuple {
    /// Our IPv4 address.
    pub local_ip: u32,
    /// Our port.
    pub local_port: u16,
    /// Peer IPv4 address.
    pub peer_ip: u32,
    /// Peer port.
    pub peer_port: u16,
}

/// Where a [`Tcb`] sends its segments (the caller adds IP and Ethernet).
pub trait SegSink {
    /// Sends one segment.
    fn send(&mut self, seg: &TcpRepr);
}

/// What happened to a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpEvent {
    /// The handshake completed.
    Established,
    /// The peer reset the connection (or refused it).
    Reset,
    /// The peer's FIN was consumed.
    PeerFin,
    /// Both directions are closed (the TCB may be dropped).
    Closed,
    /// Retransmissions ran out.
    TimedOut,
}

/// The in-order data of a segment and what came with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rx {
    /// Offset of the first new in-order octet in the segment's payload.
    pub off: usize,
    /// Number of new in-order octets.
    pub len: usize,
    /// A FIN follows those octets.
    pub fin: bool,
    /// A state event the segment caused.
    pub event: Option<TcpEvent>,
}

/// Parameters of a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Our initial sequence number.
    pub iss: u32,
    /// The MSS we offer.
    pub mss: u16,
    /// The window scale shift we offer (0..=14).
    pub wscale: u8,
    /// The receive window we offer, in octets.
    pub rcv_wnd: u32,
    /// Retransmissions before giving up.
    pub max_retries: u8,
}

/// A transmission control block. `TX` is the send buffer for the data the
/// firmware itself sends (MPA Request/Reply, at most 20 + 512 octets).
#[derive(Debug, Clone)]
pub struct Tcb<const TX: usize> {
    /// Addresses.
    pub tuple: Tuple,
    /// State.
    pub state: TcpState,
    /// Our initial sequence number.
    pub iss: u32,
    /// The peer's initial sequence number.
    pub irs: u32,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u32,
    /// Next sequence number to send.
    pub snd_nxt: u32,
    /// Next sequence number expected.
    pub rcv_nxt: u32,
    /// The peer's window, octets.
    pub snd_wnd: u32,
    /// Largest window the peer has offered (RFC 5961 §5).
    pub max_snd_wnd: u32,
    /// Shift for the peer's window (0 without window scaling).
    pub snd_wscale: u8,
    /// Shift of our window (0 without window scaling).
    pub rcv_wscale: u8,
    /// Our receive window, octets.
    pub rcv_wnd: u32,
    /// The MSS the peer offered.
    pub peer_mss: u16,
    /// The MSS we offered.
    pub our_mss: u16,
    offered_wscale: u8,
    ws_ok: bool,
    /// Octets `[snd_una, snd_una + dev)` that the device's fast path sent
    /// (RDMA mode, see [`Tcb::sync`]): the firmware cannot resend them (they
    /// live in host memory), so its own data (`tx`) starts after them.
    dev: u32,
    /// The firmware's unacknowledged and unsent data, from `snd_una + dev`.
    tx: heapless::Vec<u8, TX>,
    fin_pending: bool,
    fin_sent: bool,
    rto: Micros,
    retries: u8,
    max_retries: u8,
    deadline: Option<Micros>,
    chal_start: Micros,
    chal_count: u8,
}

impl<const TX: usize> Tcb<TX> {
    fn blank(tuple: Tuple, p: &Params) -> Self {
        Tcb {
            tuple,
            state: TcpState::Closed,
            iss: p.iss,
            irs: 0,
            snd_una: p.iss,
            snd_nxt: p.iss,
            rcv_nxt: 0,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_wscale: 0,
            rcv_wscale: 0,
            rcv_wnd: p.rcv_wnd,
            peer_mss: DEFAULT_MSS,
            our_mss: p.mss,
            offered_wscale: p.wscale.min(14),
            ws_ok: false,
            dev: 0,
            tx: heapless::Vec::new(),
            fin_pending: false,
            fin_sent: false,
            rto: RTO_INITIAL,
            retries: 0,
            max_retries: p.max_retries,
            deadline: None,
            chal_start: 0,
            chal_count: 0,
        }
    }

    /// Active open: sends a SYN.
    pub fn connect(tuple: Tuple, p: &Params, now: Micros, sink: &mut impl SegSink) -> Self {
        let mut t = Self::blank(tuple, p);
        t.state = TcpState::SynSent;
        t.snd_nxt = p.iss.wrapping_add(1);
        t.send_syn(sink);
        t.deadline = Some(now + t.rto);
        t
    }

    /// Passive open: answers `syn` with a SYN-ACK.
    pub fn accept(
        tuple: Tuple,
        syn: &TcpRepr,
        p: &Params,
        now: Micros,
        sink: &mut impl SegSink,
    ) -> Self {
        let mut t = Self::blank(tuple, p);
        t.state = TcpState::SynRcvd;
        t.irs = un(syn.seq_number);
        t.rcv_nxt = t.irs.wrapping_add(1);
        t.snd_nxt = p.iss.wrapping_add(1);
        t.take_syn_options(syn);
        t.snd_wnd = syn.window_len as u32;
        t.max_snd_wnd = t.snd_wnd;
        t.send_syn(sink);
        t.deadline = Some(now + t.rto);
        t
    }

    /// The same connection with another send buffer size (a half-open
    /// backlog entry has none; it gets one when it is promoted).
    pub fn rebuffer<const M: usize>(&self) -> Tcb<M> {
        let mut tx = heapless::Vec::new();
        let _ = tx.extend_from_slice(&self.tx[..self.tx.len().min(M)]);
        Tcb {
            tuple: self.tuple,
            state: self.state,
            iss: self.iss,
            irs: self.irs,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            rcv_nxt: self.rcv_nxt,
            snd_wnd: self.snd_wnd,
            max_snd_wnd: self.max_snd_wnd,
            snd_wscale: self.snd_wscale,
            rcv_wscale: self.rcv_wscale,
            rcv_wnd: self.rcv_wnd,
            peer_mss: self.peer_mss,
            our_mss: self.our_mss,
            offered_wscale: self.offered_wscale,
            ws_ok: self.ws_ok,
            dev: self.dev,
            tx,
            fin_pending: self.fin_pending,
            fin_sent: self.fin_sent,
            rto: self.rto,
            retries: self.retries,
            max_retries: self.max_retries,
            deadline: self.deadline,
            chal_start: self.chal_start,
            chal_count: self.chal_count,
        }
    }

    fn take_syn_options(&mut self, syn: &TcpRepr) {
        self.peer_mss = syn.max_seg_size.unwrap_or(DEFAULT_MSS).max(64);
        // Window scaling only if both sides offered it (RFC 7323 §2.2).
        match syn.window_scale {
            Some(s) => {
                self.ws_ok = true;
                self.snd_wscale = s.min(14);
                self.rcv_wscale = self.offered_wscale;
            }
            None => {
                self.ws_ok = false;
                self.snd_wscale = 0;
                self.rcv_wscale = 0;
            }
        }
    }

    /// When [`Tcb::poll`] has work.
    pub fn deadline(&self) -> Option<Micros> {
        self.deadline
    }

    /// The device's octets not yet acknowledged: `[snd_una, snd_una + dev)`
    /// (set by [`Tcb::sync`], shrunk by ACKs).
    pub fn dev_pending(&self) -> u32 {
        self.dev
    }

    /// Octets waiting in the send buffer (unacknowledged or unsent).
    pub fn tx_pending(&self) -> usize {
        self.tx.len()
    }

    /// The window field we advertise.
    fn wnd_field(&self, syn: bool) -> u16 {
        let w = if syn {
            self.rcv_wnd
        } else {
            self.rcv_wnd >> self.rcv_wscale
        };
        w.min(u16::MAX as u32) as u16
    }

    fn repr<'a>(&self, control: TcpControl, seq: u32, ack: bool, payload: &'a [u8]) -> TcpRepr<'a> {
        TcpRepr {
            src_port: self.tuple.local_port,
            dst_port: self.tuple.peer_port,
            control,
            seq_number: sn(seq),
            ack_number: ack.then_some(sn(self.rcv_nxt)),
            window_len: self.wnd_field(false),
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload,
        }
    }

    fn send_syn(&self, sink: &mut impl SegSink) {
        let synack = self.state == TcpState::SynRcvd;
        let mut r = self.repr(TcpControl::Syn, self.iss, synack, &[]);
        r.window_len = self.wnd_field(true);
        r.max_seg_size = Some(self.our_mss);
        // Active: always offer; passive: only when the peer did.
        r.window_scale = if !synack || self.ws_ok {
            Some(self.offered_wscale)
        } else {
            None
        };
        sink.send(&r);
    }

    /// Sends an ACK for `rcv_nxt`.
    pub fn send_ack(&self, sink: &mut impl SegSink) {
        sink.send(&self.repr(TcpControl::None, self.snd_nxt, true, &[]));
    }

    /// A zero-window probe: no data, SEG.SEQ = SND.UNA − 1, so the peer
    /// answers with an ACK of its current window (RFC 9293 §3.10.7.4).
    pub fn send_window_probe(&self, sink: &mut impl SegSink) {
        sink.send(&self.repr(TcpControl::None, self.snd_una.wrapping_sub(1), true, &[]));
    }

    fn challenge_ack(&mut self, now: Micros, sink: &mut impl SegSink) {
        if now.saturating_sub(self.chal_start) >= 1000 * MS {
            self.chal_start = now;
            self.chal_count = 0;
        }
        if self.chal_count < CHALLENGE_ACK_LIMIT {
            self.chal_count += 1;
            self.send_ack(sink);
        }
    }

    /// Sends a RST for a segment that belongs to no connection (RFC 9293 §3.10.7.1).
    pub fn reset_for(seg: &TcpRepr, sink: &mut impl SegSink) {
        if seg.control == TcpControl::Rst {
            return;
        }
        let mut r = TcpRepr {
            src_port: seg.dst_port,
            dst_port: seg.src_port,
            control: TcpControl::Rst,
            seq_number: sn(0),
            ack_number: None,
            window_len: 0,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload: &[],
        };
        match seg.ack_number {
            Some(a) => r.seq_number = a,
            None => r.ack_number = Some(seg.seq_number + seg.segment_len()),
        }
        sink.send(&r);
    }

    /// Queues `data` for sending and sends what the window allows. Returns
    /// false (and queues nothing) if it does not fit or the connection
    /// cannot send.
    pub fn write(&mut self, data: &[u8], now: Micros, sink: &mut impl SegSink) -> bool {
        if !matches!(self.state, TcpState::Established | TcpState::CloseWait) || self.fin_pending {
            return false;
        }
        if self.tx.extend_from_slice(data).is_err() {
            return false;
        }
        self.output(now, sink);
        true
    }

    fn data_end(&self) -> u32 {
        self.tx_start().wrapping_add(self.tx.len() as u32)
    }

    /// Sequence number of `tx[0]`: after the device's octets.
    fn tx_start(&self) -> u32 {
        self.snd_una.wrapping_add(self.dev)
    }

    /// Where the next octet queued with [`Tcb::write`] goes on the stream.
    pub fn write_seq(&self) -> u32 {
        self.data_end()
    }

    /// Sends new data and the FIN as far as the peer's window allows.
    fn output(&mut self, now: Micros, sink: &mut impl SegSink) {
        let end = self.data_end();
        let wnd_end = self.snd_una.wrapping_add(self.snd_wnd.max(1));
        let mss = self.peer_mss.min(self.our_mss).max(1) as u32;
        // Going back over the device's octets (a retransmission) skips them:
        // only the device could resend them.
        if seq_lt(self.snd_nxt, self.tx_start()) {
            self.snd_nxt = self.tx_start();
        }
        while seq_lt(self.snd_nxt, end) && seq_lt(self.snd_nxt, wnd_end) {
            let off = self.snd_nxt.wrapping_sub(self.tx_start()) as usize;
            let room = wnd_end.wrapping_sub(self.snd_nxt);
            let n = (end.wrapping_sub(self.snd_nxt)).min(mss).min(room) as usize;
            let seq = self.snd_nxt;
            let payload = &self.tx[off..off + n];
            let ctl = if off + n == self.tx.len() {
                TcpControl::Psh
            } else {
                TcpControl::None
            };
            sink.send(&self.repr(ctl, seq, true, payload));
            self.snd_nxt = self.snd_nxt.wrapping_add(n as u32);
        }
        if self.fin_pending && !self.fin_sent && self.snd_nxt == end {
            sink.send(&self.repr(TcpControl::Fin, end, true, &[]));
            self.fin_sent = true;
            self.snd_nxt = end.wrapping_add(1);
        }
        if self.snd_nxt != self.snd_una && self.deadline.is_none() {
            self.deadline = Some(now + self.rto);
        }
    }

    /// Processes a segment of this connection.
    pub fn on_segment(&mut self, seg: &TcpRepr, now: Micros, sink: &mut impl SegSink) -> Rx {
        let seq = un(seg.seq_number);
        let ack = seg.ack_number.map(un);
        let mut rx = Rx::default();
        match self.state {
            TcpState::Closed => {}
            TcpState::SynSent => {
                let ack_ok = ack.map(|a| seq_lt(self.iss, a) && seq_le(a, self.snd_nxt));
                if ack_ok == Some(false) {
                    Self::reset_for(seg, sink);
                    return rx;
                }
                if seg.control == TcpControl::Rst {
                    if ack_ok == Some(true) {
                        self.state = TcpState::Closed;
                        self.deadline = None;
                        rx.event = Some(TcpEvent::Reset);
                    }
                    return rx;
                }
                if seg.control != TcpControl::Syn {
                    return rx;
                }
                self.irs = seq;
                self.rcv_nxt = seq.wrapping_add(1);
                self.take_syn_options(seg);
                self.snd_wnd = seg.window_len as u32;
                self.max_snd_wnd = self.snd_wnd;
                if let Some(a) = ack {
                    self.snd_una = a;
                    self.state = TcpState::Established;
                    self.retries = 0;
                    self.rto = RTO_INITIAL;
                    self.deadline = None;
                    self.send_ack(sink);
                    rx.event = Some(TcpEvent::Established);
                } else {
                    // Simultaneous open.
                    self.state = TcpState::SynRcvd;
                    self.send_syn(sink);
                }
                return rx;
            }
            _ => {}
        }
        if self.state == TcpState::Closed {
            return rx;
        }

        // Synchronized states and SYN-RECEIVED.
        let seg_len = seg.segment_len() as u32;
        let wnd = self.rcv_wnd;
        let in_wnd = |s: u32| seq_le(self.rcv_nxt, s) && seq_lt(s, self.rcv_nxt.wrapping_add(wnd));
        let acceptable = if seg_len == 0 {
            if wnd == 0 {
                seq == self.rcv_nxt
            } else {
                in_wnd(seq)
            }
        } else {
            wnd > 0 && (in_wnd(seq) || in_wnd(seq.wrapping_add(seg_len - 1)))
        };

        if seg.control == TcpControl::Rst {
            // RFC 5961 §3.2.
            if seq == self.rcv_nxt {
                self.state = TcpState::Closed;
                self.deadline = None;
                rx.event = Some(TcpEvent::Reset);
            } else if in_wnd(seq) {
                self.challenge_ack(now, sink);
            }
            return rx;
        }
        if seg.control == TcpControl::Syn {
            if self.state == TcpState::SynRcvd && seq == self.irs {
                // The peer did not see our SYN-ACK: send it again.
                self.send_syn(sink);
            } else {
                // RFC 5961 §4.2: whatever the sequence number.
                self.challenge_ack(now, sink);
            }
            return rx;
        }
        if !acceptable {
            self.send_ack(sink);
            return rx;
        }
        let Some(a) = ack else {
            return rx;
        };

        if self.state == TcpState::SynRcvd {
            if seq_lt(self.snd_una, a) && seq_le(a, self.snd_nxt) {
                self.state = TcpState::Established;
                self.snd_una = a;
                self.snd_wnd = (seg.window_len as u32) << self.snd_wscale;
                self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
                self.retries = 0;
                self.rto = RTO_INITIAL;
                self.deadline = None;
                rx.event = Some(TcpEvent::Established);
            } else {
                Self::reset_for(seg, sink);
                return rx;
            }
        } else {
            // RFC 5961 §5.2.
            let lowest = self.snd_una.wrapping_sub(self.max_snd_wnd);
            if seq_lt(self.snd_nxt, a) || seq_lt(a, lowest) {
                self.send_ack(sink);
                return rx;
            }
            if seq_lt(self.snd_una, a) {
                // The device's octets are acknowledged first, then ours.
                let advance = a.wrapping_sub(self.snd_una);
                let from_dev = advance.min(self.dev);
                self.dev -= from_dev;
                let acked_data = ((advance - from_dev) as usize).min(self.tx.len());
                let rest = self.tx.len() - acked_data;
                self.tx.copy_within(acked_data.., 0);
                self.tx.truncate(rest);
                self.snd_una = a;
                self.retries = 0;
                self.rto = RTO_INITIAL;
                self.deadline = (self.snd_una != self.snd_nxt).then_some(now + self.rto);
                let fin_acked = self.fin_sent && a == self.snd_nxt;
                if fin_acked {
                    match self.state {
                        TcpState::FinWait1 => {
                            self.state = TcpState::FinWait2;
                            self.deadline = Some(now + FIN_WAIT2_TIMEOUT);
                        }
                        TcpState::Closing => {
                            self.state = TcpState::TimeWait;
                            self.deadline = Some(now + TIME_WAIT);
                        }
                        TcpState::LastAck => {
                            self.state = TcpState::Closed;
                            self.deadline = None;
                            rx.event = Some(TcpEvent::Closed);
                            return rx;
                        }
                        _ => {}
                    }
                }
            }
            self.snd_wnd = (seg.window_len as u32) << self.snd_wscale;
            self.max_snd_wnd = self.max_snd_wnd.max(self.snd_wnd);
            self.output(now, sink);
        }

        // Data and FIN.
        match self.state {
            TcpState::Established | TcpState::FinWait1 | TcpState::FinWait2 => {
                let plen = seg.payload.len() as u32;
                let fin = seg.control == TcpControl::Fin;
                if seq_le(seq, self.rcv_nxt) {
                    let off = self.rcv_nxt.wrapping_sub(seq);
                    if off <= plen {
                        let room = self.rcv_wnd;
                        let len = (plen - off).min(room);
                        rx.off = off as usize;
                        rx.len = len as usize;
                        rx.fin = fin && off + len == plen;
                    }
                } else if plen > 0 || fin {
                    // Out of order: ask for what is missing.
                    self.send_ack(sink);
                }
            }
            TcpState::TimeWait if seg.control == TcpControl::Fin => {
                self.send_ack(sink);
                self.deadline = Some(now + TIME_WAIT);
            }
            _ => {}
        }
        rx
    }

    /// Consumes `n` in-order octets the caller took.
    pub fn consume(&mut self, n: usize) {
        self.rcv_nxt = self.rcv_nxt.wrapping_add(n as u32);
    }

    /// Consumes the peer's FIN (after every octet before it).
    pub fn consume_fin(&mut self, now: Micros) -> TcpEvent {
        self.rcv_nxt = self.rcv_nxt.wrapping_add(1);
        match self.state {
            TcpState::Established => self.state = TcpState::CloseWait,
            TcpState::FinWait1 => self.state = TcpState::Closing,
            TcpState::FinWait2 => {
                self.state = TcpState::TimeWait;
                self.deadline = Some(now + TIME_WAIT);
            }
            _ => {}
        }
        TcpEvent::PeerFin
    }

    /// Consumes all of `rx` (data and FIN) and acknowledges it. Returns the
    /// FIN event if there was one.
    pub fn consume_all(
        &mut self,
        rx: &Rx,
        now: Micros,
        sink: &mut impl SegSink,
    ) -> Option<TcpEvent> {
        self.consume(rx.len);
        let ev = rx.fin.then(|| self.consume_fin(now));
        if rx.len > 0 || rx.fin {
            self.send_ack(sink);
        }
        ev
    }

    /// Starts a graceful close: our FIN goes out after the queued data.
    pub fn close(&mut self, now: Micros, sink: &mut impl SegSink) {
        match self.state {
            TcpState::SynSent | TcpState::Closed => {
                self.state = TcpState::Closed;
                self.deadline = None;
            }
            TcpState::SynRcvd | TcpState::Established => {
                self.state = TcpState::FinWait1;
                self.fin_pending = true;
                self.output(now, sink);
            }
            TcpState::CloseWait => {
                self.state = TcpState::LastAck;
                self.fin_pending = true;
                self.output(now, sink);
            }
            _ => {}
        }
    }

    /// Abortive close: sends a RST (if synchronized) and forgets the connection.
    pub fn abort(&mut self, sink: &mut impl SegSink) {
        if self.state.synchronized() || self.state == TcpState::SynRcvd {
            let mut r = self.repr(TcpControl::Rst, self.snd_nxt, true, &[]);
            r.window_len = 0;
            sink.send(&r);
        }
        self.state = TcpState::Closed;
        self.deadline = None;
        self.tx.clear();
    }

    /// Runs the timers: retransmission, TIME-WAIT, FIN-WAIT-2.
    pub fn poll(&mut self, now: Micros, sink: &mut impl SegSink) -> Option<TcpEvent> {
        let d = self.deadline?;
        if now < d {
            return None;
        }
        match self.state {
            TcpState::TimeWait | TcpState::FinWait2 => {
                self.state = TcpState::Closed;
                self.deadline = None;
                return Some(TcpEvent::Closed);
            }
            TcpState::Closed => {
                self.deadline = None;
                return None;
            }
            _ => {}
        }
        if self.retries >= self.max_retries {
            self.state = TcpState::Closed;
            self.deadline = None;
            return Some(TcpEvent::TimedOut);
        }
        self.retries += 1;
        self.rto = (self.rto * 2).min(RTO_MAX);
        self.deadline = Some(now + self.rto);
        match self.state {
            TcpState::SynSent | TcpState::SynRcvd => self.send_syn(sink),
            _ => {
                // Go back to snd_una and send again.
                self.snd_nxt = self.snd_una;
                self.fin_sent = false;
                self.output(now, sink);
                if self.snd_nxt == self.snd_una {
                    // Nothing to resend (e.g. a zero window probe was acked).
                    self.deadline = None;
                }
            }
        }
        None
    }

    /// Takes the sequence state the fast path kept in the connection
    /// context (RDMA mode). The send buffer is the device's from then on.
    pub fn sync(&mut self, rcv_nxt: u32, snd_nxt: u32, snd_una: u32, snd_wnd: u32) {
        self.rcv_nxt = rcv_nxt;
        self.snd_nxt = snd_nxt;
        self.snd_una = snd_una;
        self.snd_wnd = snd_wnd;
        self.max_snd_wnd = self.max_snd_wnd.max(snd_wnd);
        self.dev = snd_nxt.wrapping_sub(snd_una);
        self.tx.clear();
        self.deadline = None;
        self.retries = 0;
        self.rto = RTO_INITIAL;
    }
}

/// A half-open passive connection: SYN received, SYN-ACK sent, no device
/// context and no send buffer.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The listener it came to.
    pub listener: u32,
    /// The handshake state.
    pub tcb: Tcb<0>,
    /// The MAC the SYN came from (the next hop back, if ARP has none).
    pub peer_mac: [u8; 6],
    /// When the SYN came.
    pub born: Micros,
}

/// The fixed-size table of half-open passive connections, shared by all
/// listeners. A listener holds at most its backlog of entries and the table
/// at most `P`; a SYN that finds either full evicts the oldest half-open
/// entry (of that listener if its backlog is full, else of the table), so a
/// SYN flood only ever displaces half-open entries, never an established
/// connection, and a genuine client whose ACK comes back within the flood's
/// turnover time still completes.
#[derive(Debug)]
pub struct Backlog<const P: usize> {
    slots: [Option<Pending>; P],
}

impl<const P: usize> Default for Backlog<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const P: usize> Backlog<P> {
    /// An empty table.
    pub fn new() -> Self {
        Backlog {
            slots: core::array::from_fn(|_| None),
        }
    }

    /// Empty, in place (see `Filter::reset`).
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
    }

    /// Entries of `listener`.
    pub fn count(&self, listener: u32) -> usize {
        self.slots
            .iter()
            .flatten()
            .filter(|p| p.listener == listener)
            .count()
    }

    /// All entries.
    pub fn len(&self) -> usize {
        self.slots.iter().flatten().count()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry of `tuple`.
    pub fn find(&mut self, tuple: &Tuple) -> Option<&mut Pending> {
        self.slots
            .iter_mut()
            .flatten()
            .find(|p| p.tcb.tuple == *tuple)
    }

    /// Removes and returns the entry of `tuple`.
    pub fn take(&mut self, tuple: &Tuple) -> Option<Pending> {
        self.slots
            .iter_mut()
            .find(|s| s.as_ref().is_some_and(|p| p.tcb.tuple == *tuple))
            .and_then(Option::take)
    }

    /// Calls `f` on every entry.
    pub fn for_each(&mut self, mut f: impl FnMut(&mut Pending)) {
        self.slots.iter_mut().flatten().for_each(&mut f);
    }

    /// Removes every entry of `listener`.
    pub fn drop_listener(&mut self, listener: u32) {
        for s in self.slots.iter_mut() {
            if s.as_ref().is_some_and(|p| p.listener == listener) {
                *s = None;
            }
        }
    }

    fn evict_oldest(&mut self, listener: Option<u32>) -> bool {
        let victim = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|p| (i, p)))
            .filter(|(_, p)| listener.is_none_or(|l| p.listener == l))
            .min_by_key(|(_, p)| p.born)
            .map(|(i, _)| i);
        match victim {
            Some(i) => {
                log!(debug, "backlog: evicted a half-open entry");
                self.slots[i] = None;
                true
            }
            None => false,
        }
    }

    /// Adds an entry, evicting as described on [`Backlog`]. `backlog` is
    /// the listener's limit (clamped to `1..=P`). Returns false only if
    /// `P` is zero.
    pub fn insert(&mut self, backlog: u16, entry: Pending) -> bool {
        let limit = (backlog as usize).clamp(1, P.max(1));
        if self.count(entry.listener) >= limit {
            self.evict_oldest(Some(entry.listener));
        }
        if !self.slots.iter().any(Option::is_none) {
            self.evict_oldest(None);
        }
        match self.slots.iter_mut().find(|s| s.is_none()) {
            Some(s) => {
                *s = Some(entry);
                true
            }
            None => false,
        }
    }

    /// Runs the SYN-ACK retransmission timers; entries whose retries ran
    /// out are dropped.
    pub fn poll(&mut self, now: Micros, mut sink: impl FnMut(&Tuple, &[u8; 6], &TcpRepr)) {
        for s in self.slots.iter_mut() {
            let Some(p) = s else { continue };
            let mut out = Collect::default();
            let ev = p.tcb.poll(now, &mut out);
            if let Some(seg) = out.seg {
                sink(&p.tcb.tuple, &p.peer_mac, &seg);
            }
            if ev.is_some() || p.tcb.state == TcpState::Closed {
                *s = None;
            }
        }
    }

    /// The earliest timer.
    pub fn next_deadline(&self) -> Option<Micros> {
        self.slots
            .iter()
            .flatten()
            .filter_map(|p| p.tcb.deadline())
            .min()
    }
}

/// A sink that keeps the last payload-less segment (SYN-ACK retransmission).
#[derive(Default)]
struct Collect {
    seg: Option<TcpRepr<'static>>,
}

impl SegSink for Collect {
    fn send(&mut self, seg: &TcpRepr) {
        if seg.payload.is_empty() {
            self.seg = Some(TcpRepr {
                src_port: seg.src_port,
                dst_port: seg.dst_port,
                control: seg.control,
                seq_number: seg.seq_number,
                ack_number: seg.ack_number,
                window_len: seg.window_len,
                window_scale: seg.window_scale,
                max_seg_size: seg.max_seg_size,
                sack_permitted: seg.sack_permitted,
                sack_ranges: seg.sack_ranges,
                timestamp: seg.timestamp,
                payload: &[],
            });
        }
    }
}
