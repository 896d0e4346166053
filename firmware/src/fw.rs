//! The firmware: connections from SYN to RDMA mode and back to closed.
//!
//! A connection goes through these phases ([`Phase`]):
//! ```text
//! active:  ArpWait → Handshake → MpaAwaitReply ─┐
//! passive: (backlog) → MpaAwaitRequest → MpaAwaitAccept ─┤→ MpaDone → Rdma → Closing → (freed)
//! ```
//! * A passive connection lives only in the [`Backlog`] until the handshake
//!   completes: no slot, no device context. Then it gets a slot whose index
//!   is its device connection context, written in [`ConnMode::Firmware`].
//! * `MpaDone`: the MPA exchange is over but our Request/Reply may not be
//!   acknowledged yet. As soon as it is, the firmware writes the QP context
//!   (Rts) and then the connection context in [`ConnMode::Rdma`], with
//!   `rcv_nxt` at the first octet after the peer's MPA frame and both marker
//!   references at the stream positions where the FPDUs begin. Octets that
//!   came after the MPA frame in the same segment (an FPDU, e.g. the RTR)
//!   are not consumed by the firmware: it puts a copy of the segment, cut
//!   down to those octets and starting at `rcv_nxt`, back into the receive
//!   pipeline with [`Hal::inject_rx`], so the fast path takes them as the
//!   next in-order segment (and acknowledges them).
//! * In RDMA mode the firmware sees only exceptions; it re-reads the
//!   sequence state from the context before it acts ([`Tcb::sync`]). To
//!   close (our Disconnect, the peer's FIN, a Terminate) it takes the
//!   connection back into firmware mode and runs the TCP teardown itself.
//!
//! Connection ids given to the host are `generation << 16 | slot`.

use crate::arp::{ArpCache, Resolve};
use crate::filter::Filter;
use crate::frame::{self, TcpRx};
use crate::hal::{Hal, HalError, HalExt, IfConfig};
use crate::icmp::{Echo, EchoLimit, IcmpStats};
use crate::log::{OnOff, Peer};
use crate::mpa::{self, Agreement, Assembler, MpaError, Offer};
use crate::qp::{QpEvent, QpTable};
use crate::resources::Resources;
use crate::retx::{PersistTimer, RetxAction, RetxConfig, RetxStats, RetxTimer, FPDU_OVERHEAD};
use crate::rtr;
use crate::tcp::{Backlog, Params, Pending, SegSink, Tcb, TcpEvent, TcpState, Tuple};
use crate::terminate::{terminate_fpdu, terminate_repr, LOCAL_CATASTROPHIC, TERMINATE_FPDU_MAX};
use crate::{Micros, MS};
use rnic_wire::abi::context::{
    ConnContext, ConnMode, ExceptionReason, RtrKind, QP_FLAG_RTR_RX, QP_FLAG_RTR_TX,
};
use rnic_wire::abi::mailbox::{Event, EventKind, FilterAction, QpState};
use rnic_wire::net::{TcpControl, TcpRepr};

/// Send buffer of a connection: the largest MPA Request/Reply.
pub const TXBUF: usize = mpa::MAX_FRAME;
/// First ephemeral port.
pub const EPHEMERAL_FIRST: u16 = 49152;

/// The receive window offered by default: 256 KiB (window scale 7,
/// RFC 7323 §2), what a 10 Gb/s link with a 100 µs round trip needs to
/// stay near the wire limit (a 16 MiB Write reaches 98.7 % there,
/// docs/sim.md). It is safe because the receive path places at line rate
/// (MTU 1500 and 9000) and a frame it cannot take is dropped before it is
/// acknowledged (RFC 9293 §3.8.6), so TCP resends it. Loss recovery with a
/// window of many segments relies on the device's fast retransmit going on
/// inside a replay (`fast_retx` defers a third duplicate ACK that arrives
/// while a replay runs): `rnic-sim run --loss 0.02` is byte-exact.
/// `Config::rcv_wnd` sets another.
pub const DEVICE_RX_WINDOW: u32 = 256 << 10;

/// Tunables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Receive window we offer (octets; scaled by `wscale`, RFC 7323 §2).
    /// In RDMA mode the device acknowledges a segment once it has admitted
    /// it; a frame that finds `rx_fifo` full is dropped before that,
    /// so it is not acknowledged (RFC 9293 §3.8.6). See
    /// [`DEVICE_RX_WINDOW`] for the default.
    pub rcv_wnd: u32,
    /// Window scale shift we offer.
    pub wscale: u8,
    /// SYN / SYN-ACK / data retransmissions.
    pub tcp_retries: u8,
    /// How long an initiator waits for the MPA Reply, and a responder for the Request.
    pub mpa_timeout: Micros,
    /// How long a connection request waits for the host's Accept/Reject.
    pub accept_timeout: Micros,
    /// Longest wait for ARP before a connect fails.
    pub arp_wait: Micros,
    /// Highest MPA revision we speak as responder.
    pub mpa_revision: u8,
    /// Responder: ask for CRC.
    pub crc: bool,
    /// Responder: ask for markers.
    pub markers: bool,
    /// Use RFC 6581's peer-to-peer model (RTR) with Rev 2.
    pub p2p: bool,
    /// The RTR types offered as initiator and accepted as responder (the
    /// responder picks Write, then Read, then Send: [`crate::mpa`]).
    pub rtr_types: rnic_wire::mpa::RtrTypes,
    /// Page-list entries of the device.
    pub pbl_size: u32,
    /// The retransmission timer of the device's data (RDMA mode, and a
    /// closing stream's device octets): [`crate::retx`].
    pub rdma_retx: RetxConfig,
    /// The rate limit of Echo Replies ([`crate::icmp`]).
    pub icmp_echo: EchoLimit,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            rcv_wnd: DEVICE_RX_WINDOW,
            wscale: 7,
            tcp_retries: 5,
            mpa_timeout: 10_000 * MS,
            accept_timeout: 30_000 * MS,
            arp_wait: 5_000 * MS,
            mpa_revision: 2,
            crc: false,
            markers: false,
            p2p: true,
            rtr_types: rnic_wire::mpa::RtrTypes {
                send: true,
                write: true,
                read: true,
            },
            pbl_size: 4096,
            rdma_retx: RetxConfig::default(),
            icmp_echo: EchoLimit::default(),
        }
    }
}

/// Where a connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Active: waiting for ARP (since then).
    ArpWait(Micros),
    /// Active: SYN sent.
    Handshake,
    /// Passive: waiting for the MPA Request (until then).
    MpaAwaitRequest(Micros),
    /// Passive: the host was told; waiting for Accept/Reject (until then).
    MpaAwaitAccept(Micros),
    /// Active: MPA Request sent, waiting for the Reply (until then).
    MpaAwaitReply(Micros),
    /// Negotiated; waiting for our MPA frame to be acknowledged.
    MpaDone,
    /// The fast path owns the connection.
    Rdma,
    /// TCP teardown under firmware control.
    Closing,
}

/// A connection slot.
#[derive(Debug, Clone)]
pub struct Conn {
    /// TCP state.
    pub tcb: Tcb<TXBUF>,
    /// Phase.
    pub phase: Phase,
    /// We opened it.
    pub active: bool,
    /// Next hop IPv4 address (the peer, or the gateway).
    pub next_hop: u32,
    /// The next hop's MAC.
    pub peer_mac: [u8; 6],
    /// The bound QP.
    pub qpn: Option<u32>,
    /// The listener (passive).
    pub listener: Option<u32>,
    /// Our MPA offer (active: from Connect).
    pub offer: Offer,
    /// The peer's MPA frame.
    pub mpa_rx: Assembler,
    /// The outcome of the negotiation.
    pub agreement: Option<Agreement>,
    /// Private data to send (active side, until the Request is sent).
    pub private_data: heapless::Vec<u8, 512>,
    /// A device context is written for this slot.
    pub ctx: bool,
    /// The host rejected the request: just close.
    pub rejected: bool,
    /// Retransmission timer of the device's data ([`crate::retx`]).
    pub retx: RetxTimer,
    /// Zero-window probing of the device's data ([`PersistTimer`]).
    pub persist: PersistTimer,
    /// RFC 6581's RTR exchange before RDMA mode ([`crate::rtr`]).
    pub rtr: RtrProgress,
}

/// Where a connection in `MpaDone` is in the RTR exchange ([`crate::rtr`]).
#[derive(Debug, Clone, Default)]
pub struct RtrProgress {
    /// Initiator: our RTR message is written to the stream.
    pub sent: bool,
    /// The exchange is over: RDMA mode may start.
    pub done: bool,
    /// The peer's first FPDU octets taken so far.
    pub buf: heapless::Vec<u8, { crate::rtr::RTR_FPDU_MAX }>,
    /// The exchange must be over by then (`Config::mpa_timeout` after it
    /// began), or the connection is given up.
    pub deadline: Option<Micros>,
}

/// One step of the RTR exchange ([`Firmware::rtr_step`]).
enum RtrStep {
    /// Not over: wait for the next segment or acknowledgement.
    Wait,
    /// Over; this many octets of the segment's data were the peer's RTR
    /// message (or Read Response), the rest are FPDUs for the fast path.
    Done(usize),
    /// The peer did not keep the negotiated model: the connection is
    /// being closed.
    Failed,
}

/// The firmware's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// The RDMA-mode retransmission timer.
    pub retx: RetxStats,
    /// The ICMP Echo responder.
    pub icmp: IcmpStats,
    /// Device resets seen (exception `DeviceReset`).
    pub device_resets: u32,
}

/// A listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    /// Host-visible id.
    pub id: u32,
    /// TCP port.
    pub port: u16,
    /// Backlog.
    pub backlog: u16,
}

/// What [`Firmware::poll`]'s pass over the exception queue ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Taken {
    /// The entries waiting were handled.
    Handled,
    /// The device was reset: the rest of the poll is skipped.
    DeviceReset,
}

/// The firmware with its capacities: `C` connections, `Q` QPs, `L`
/// listeners, `P` half-open entries, `A` ARP entries, `R` filter rules, `NCQ`
/// CQs, `NTPT` TPT entries, `E` free page-list extents, `EV` queued events.
pub struct Firmware<
    H: Hal,
    const C: usize = 16,
    const Q: usize = 16,
    const L: usize = 4,
    const P: usize = 16,
    const A: usize = 8,
    const R: usize = 16,
    const NCQ: usize = 16,
    const NTPT: usize = 64,
    const E: usize = 16,
    const EV: usize = 16,
> {
    /// The device.
    pub hal: H,
    /// Tunables.
    pub config: Config,
    pub(crate) ifc: IfConfig,
    pub(crate) arp: ArpCache<A>,
    pub(crate) filter: Filter<R>,
    pub(crate) listeners: heapless::Vec<Listener, L>,
    pub(crate) backlog: Backlog<P>,
    pub(crate) conns: [Option<Conn>; C],
    pub(crate) gens: [u16; C],
    pub(crate) qps: QpTable<Q>,
    pub(crate) res: Resources<NCQ, NTPT, E>,
    pub(crate) events: heapless::Deque<Event, EV>,
    pub(crate) echo: Echo,
    stats: Stats,
    /// The device has no `RETX_CONN`: RDMA-mode connections are not timed.
    retx_off: bool,
    next_listen_id: u32,
    next_port: u16,
    secret: u32,
}

/// A [`SegSink`] that frames segments and sends them through the Hal.
pub(crate) struct Tx<'a, H: Hal> {
    pub hal: &'a mut H,
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src_ip: u32,
    pub dst_ip: u32,
}

impl<H: Hal> SegSink for Tx<'_, H> {
    fn send(&mut self, seg: &TcpRepr) {
        let mut b = [0u8; frame::MAX_FRAME];
        if let Some(n) = frame::build_tcp(
            &mut b,
            self.src_mac,
            self.dst_mac,
            self.src_ip,
            self.dst_ip,
            seg,
        ) {
            let _ = self.hal.send_frame(&b[..n]);
        }
    }
}

pub(crate) fn event(kind: EventKind, handle: u32) -> Event {
    Event {
        kind,
        handle,
        status: 0,
        peer_ip: 0,
        peer_port: 0,
        local_port: 0,
        ird: 0,
        ord: 0,
        private_data_len: 0,
        mpa_revision: 0,
        crc: false,
        markers: false,
        listen_id: 0,
        phase: false,
    }
}

/// A connection's peer, for the log.
fn peer_of(c: &Conn) -> Peer {
    Peer(c.tcb.tuple.peer_ip, c.tcb.tuple.peer_port)
}

/// An RTR message's name, for the log.
fn rtr_name(k: RtrKind) -> &'static str {
    match k {
        RtrKind::None => "none",
        RtrKind::Send => "Send",
        RtrKind::Write => "Write",
        RtrKind::Read => "Read",
    }
}

/// The MPA negotiation's result of connection `i`, for the log.
pub(crate) fn log_agreement(i: usize, a: &Agreement) {
    let rtr = rtr_name(a.rtr);
    log!(
        info,
        "conn {}: MPA rev {}, CRC {}, markers tx {} rx {}, RTR {}, IRD {} ORD {} (peer's {} {})",
        i,
        a.revision,
        OnOff(a.crc),
        OnOff(a.markers_tx),
        OnOff(a.markers_rx),
        rtr,
        a.ird,
        a.ord,
        a.peer_ird,
        a.peer_ord
    );
}

fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^ (x >> 16)
}

impl<
        H: Hal,
        const C: usize,
        const Q: usize,
        const L: usize,
        const P: usize,
        const A: usize,
        const R: usize,
        const NCQ: usize,
        const NTPT: usize,
        const E: usize,
        const EV: usize,
    > Firmware<H, C, Q, L, P, A, R, NCQ, NTPT, E, EV>
{
    /// Starts the firmware on `hal`.
    pub fn new(mut hal: H, config: Config) -> Self {
        let ifc = hal.config();
        let t = hal.now_us();
        let secret =
            mix(t as u32 ^ u32::from_le_bytes([ifc.mac[2], ifc.mac[3], ifc.mac[4], ifc.mac[5]]));
        Firmware {
            hal,
            config,
            ifc,
            arp: ArpCache::new(),
            filter: Filter::new(),
            listeners: heapless::Vec::new(),
            backlog: Backlog::new(),
            conns: core::array::from_fn(|_| None),
            gens: [0; C],
            qps: QpTable::new(),
            res: Resources::new(config.pbl_size),
            events: heapless::Deque::new(),
            echo: Echo::new(),
            stats: Stats::default(),
            retx_off: false,
            next_listen_id: 1,
            next_port: EPHEMERAL_FIRST,
            secret,
        }
    }

    /// The interface configuration in use.
    pub fn if_config(&self) -> &IfConfig {
        &self.ifc
    }

    /// Re-reads the interface configuration (after the host changed it).
    pub fn reload_config(&mut self) {
        self.ifc = self.hal.config();
    }

    /// The device was reset (exception `DeviceReset`): its tables are
    /// clear and its queues empty, so every connection, listener, half-open
    /// entry, QP, CQ, region, queued event, ARP entry and filter rule is
    /// forgotten (nothing is sent: the connections' peers learn of the loss
    /// from their own timers or from the RST answering their next segment),
    /// and the interface configuration is read again (the host sets it
    /// after the reset). Connection-id generations go on, so an id from
    /// before the reset never names a new connection; the counters go on.
    pub fn device_reset(&mut self) {
        // Every table is cleared in place: assigning fresh tables would
        // build each on the stack first (measured on the RISC-V image:
        // take_exceptions, which inlines this, had a 21.6 KB frame).
        self.ifc = self.hal.config();
        self.arp.clear();
        self.filter.reset();
        self.listeners.clear();
        self.backlog.clear();
        self.conns.iter_mut().for_each(|c| *c = None);
        for g in self.gens.iter_mut() {
            *g = g.wrapping_add(1);
        }
        self.qps.clear();
        self.res.clear(self.config.pbl_size);
        self.events.clear();
        self.next_listen_id = 1;
        self.stats.device_resets += 1;
        log!(info, "device reset: state forgotten");
    }

    /// Connection slot `i`.
    pub fn conn(&self, i: usize) -> Option<&Conn> {
        self.conns.get(i)?.as_ref()
    }

    /// Number of live connection slots.
    pub fn conn_count(&self) -> usize {
        self.conns.iter().flatten().count()
    }

    /// The half-open table.
    pub fn backlog(&self) -> &Backlog<P> {
        &self.backlog
    }

    /// The filter.
    pub fn filter(&self) -> &Filter<R> {
        &self.filter
    }

    /// The ARP cache.
    pub fn arp(&self) -> &ArpCache<A> {
        &self.arp
    }

    /// The QPs.
    pub fn qps(&self) -> &QpTable<Q> {
        &self.qps
    }

    /// The firmware's counters.
    pub fn stats(&self) -> Stats {
        Stats {
            icmp: self.echo.stats(),
            ..self.stats
        }
    }

    /// The listeners.
    pub fn listeners(&self) -> &[Listener] {
        &self.listeners
    }

    /// The host id of slot `i`.
    pub fn conn_id(&self, i: usize) -> u32 {
        (self.gens[i] as u32) << 16 | i as u32
    }

    /// The slot of a host connection id, if it is live.
    pub fn slot_of(&self, conn_id: u32) -> Option<usize> {
        let i = (conn_id & 0xFFFF) as usize;
        (i < C && self.gens[i] as u32 == conn_id >> 16 && self.conns[i].is_some()).then_some(i)
    }

    /// One pass of the main loop: exceptions, the device's Terminate
    /// requests, one mailbox command, timers.
    pub fn poll(&mut self) {
        if self.hal.exception_waiting() && self.take_exceptions() == Taken::DeviceReset {
            // nothing from before the reset goes on in this pass
            return;
        }
        for _ in 0..8 {
            let Some(t) = self.hal.pop_terminate() else {
                break;
            };
            self.on_terminate_request(&t);
        }
        if self.hal.mailbox_waiting() {
            self.poll_mailbox();
        }
        self.timers();
    }

    /// Handles up to 32 exception-queue entries. Not inlined: its frame
    /// buffer is prepared only when an entry waits ([`Hal::exception_waiting`]).
    #[inline(never)]
    fn take_exceptions(&mut self) -> Taken {
        let mut buf = [0u8; frame::MAX_FRAME];
        for _ in 0..32 {
            let Some(exc) = self.hal.recv_exception(&mut buf) else {
                break;
            };
            if exc.reason == ExceptionReason::DeviceReset {
                self.device_reset();
                return Taken::DeviceReset;
            }
            let n = exc.len.min(buf.len());
            self.on_exception_of(exc.reason, exc.conn, &buf[..n], exc.frame_len);
        }
        Taken::Handled
    }

    pub(crate) fn post(&mut self, ev: Event) {
        // Keep order: queued events go first.
        if self.events.is_empty() && self.hal.post_event(&ev).is_ok() {
            return;
        }
        if self.events.push_back(ev).is_err() {
            log!(warn, "event dropped: queue full");
        }
    }

    fn flush_events(&mut self) {
        while let Some(ev) = self.events.front().copied() {
            if self.hal.post_event(&ev).is_err() {
                break;
            }
            self.events.pop_front();
        }
    }

    /// Handles one exception-queue entry (its whole frame `f`).
    pub fn on_exception(&mut self, reason: ExceptionReason, conn: Option<u32>, f: &[u8]) {
        self.on_exception_of(reason, conn, f, f.len());
    }

    /// Handles one exception-queue entry: `f` is the first octets of a
    /// frame of `frame_len` (a segment over the 2 KiB `EXC_DATA` window is
    /// taken trimmed to the octets in `f`, [`frame::parse_exception`]).
    pub fn on_exception_of(
        &mut self,
        reason: ExceptionReason,
        conn: Option<u32>,
        f: &[u8],
        frame_len: usize,
    ) {
        if reason == ExceptionReason::DeviceReset {
            self.device_reset();
            return;
        }
        let now = self.hal.now_us();
        if reason == ExceptionReason::SendQueueError {
            // Frame: the QPN (u32 LE), the completion status, 3 zero octets.
            if let Some(q) = f.get(..4) {
                let qpn = u32::from_le_bytes([q[0], q[1], q[2], q[3]]);
                self.send_queue_error(qpn, now);
            }
            return;
        }
        if reason == ExceptionReason::CqOverflow {
            // Frame: the CQ number (u32 LE), 4 zero octets.
            if let Some(q) = f.get(..4) {
                let cqn = u32::from_le_bytes([q[0], q[1], q[2], q[3]]);
                self.cq_overflow(cqn, now);
            }
            return;
        }
        if matches!(
            reason,
            ExceptionReason::RetransmitTimeout
                | ExceptionReason::TerminateTx
                | ExceptionReason::TerminateRx
        ) {
            if let Some(i) = conn
                .map(|c| c as usize)
                .filter(|&i| i < C && self.conns[i].is_some())
            {
                if reason == ExceptionReason::TerminateRx {
                    self.terminate_rx(i, f, now);
                    return;
                }
                self.rdma_exception(i, reason, now);
                return;
            }
        }
        match frame::parse_exception(f, frame_len) {
            frame::Rx::Arp(a) => {
                let ifc = self.ifc;
                self.arp.on_arp(&mut self.hal, &ifc, &a, now);
            }
            frame::Rx::Tcp(t) if t.dst_ip == self.ifc.ip => self.on_tcp(&t, reason, now),
            frame::Rx::Other => {
                // Not TCP nor ARP: an ICMP Echo Request is answered.
                let ifc = self.ifc;
                let limit = self.config.icmp_echo;
                self.echo
                    .on_frame(&mut self.hal, &ifc, &limit, f, frame_len, now);
            }
            _ => {}
        }
    }

    fn find(&self, tuple: &Tuple) -> Option<usize> {
        self.conns
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.tcb.tuple == *tuple))
    }

    fn tx_for(&mut self, peer_ip: u32, dst_mac: [u8; 6]) -> Tx<'_, H> {
        Tx {
            src_mac: self.ifc.mac,
            dst_mac,
            src_ip: self.ifc.ip,
            dst_ip: peer_ip,
            hal: &mut self.hal,
        }
    }

    fn params(&mut self, tuple: &Tuple, now: Micros) -> Params {
        let h = mix(tuple.peer_ip ^ self.secret)
            ^ mix((tuple.local_port as u32) << 16 | tuple.peer_port as u32);
        Params {
            iss: ((now / 4) as u32).wrapping_add(h),
            mss: self.ifc.mss(),
            wscale: self.config.wscale,
            rcv_wnd: self.config.rcv_wnd,
            max_retries: self.config.tcp_retries,
        }
    }

    fn on_tcp(&mut self, t: &TcpRx, reason: ExceptionReason, now: Micros) {
        let tuple = Tuple {
            local_ip: t.dst_ip,
            local_port: t.tcp.dst_port,
            peer_ip: t.src_ip,
            peer_port: t.tcp.src_port,
        };
        if let Some(i) = self.find(&tuple) {
            self.conn_segment(i, t, reason, now);
            return;
        }
        if let Some(p) = self.backlog.find(&tuple) {
            let mac = p.peer_mac;
            let mut tx = Tx {
                src_mac: self.ifc.mac,
                dst_mac: mac,
                src_ip: self.ifc.ip,
                dst_ip: tuple.peer_ip,
                hal: &mut self.hal,
            };
            let rx = p.tcb.on_segment(&t.tcp, now, &mut tx);
            match rx.event {
                Some(TcpEvent::Established) => {
                    if let Some(p) = self.backlog.take(&tuple) {
                        self.promote(p, t, rx, now);
                    }
                }
                Some(_) => {
                    self.backlog.take(&tuple);
                }
                None => {}
            }
            return;
        }
        let listener = self
            .listeners
            .iter()
            .find(|l| l.port == tuple.local_port)
            .copied();
        match (t.tcp.control, t.tcp.ack_number, listener) {
            (TcpControl::Syn, None, Some(l)) => {
                match self
                    .filter
                    .check(tuple.peer_ip, tuple.local_port, tuple.peer_port)
                {
                    FilterAction::Allow => {}
                    FilterAction::DenyReset => {
                        log!(
                            info,
                            "filter: SYN from {} refused",
                            Peer(tuple.peer_ip, tuple.peer_port)
                        );
                        let mut tx = self.tx_for(tuple.peer_ip, t.src_mac);
                        Tcb::<0>::reset_for(&t.tcp, &mut tx);
                        return;
                    }
                    FilterAction::DenyDrop => return,
                }
                let mac = self
                    .ifc
                    .next_hop(tuple.peer_ip)
                    .and_then(|nh| self.arp.lookup(nh))
                    .unwrap_or(t.src_mac);
                let params = self.params(&tuple, now);
                let mut tx = self.tx_for(tuple.peer_ip, mac);
                let tcb = Tcb::<0>::accept(tuple, &t.tcp, &params, now, &mut tx);
                self.backlog.insert(
                    l.backlog,
                    Pending {
                        listener: l.id,
                        tcb,
                        peer_mac: mac,
                        born: now,
                    },
                );
            }
            _ => {
                // No connection: RST (RFC 9293 §3.10.7.1).
                let mut tx = self.tx_for(tuple.peer_ip, t.src_mac);
                Tcb::<0>::reset_for(&t.tcp, &mut tx);
            }
        }
    }

    fn free_slot(&self) -> Option<usize> {
        self.conns.iter().position(Option::is_none)
    }

    fn default_offer(&self) -> Offer {
        Offer {
            revision: self.config.mpa_revision,
            crc: self.config.crc,
            markers: self.config.markers,
            ird: 0,
            ord: 0,
            p2p: self.config.p2p,
            rtr: self.config.rtr_types,
        }
    }

    fn promote(&mut self, p: Pending, t: &TcpRx, rx: crate::tcp::Rx, now: Micros) {
        let Some(i) = self.free_slot() else {
            // No room: refuse the connection.
            let peer = p.tcb.tuple.peer_ip;
            log!(
                warn,
                "no free connection slot: {} refused",
                Peer(peer, p.tcb.tuple.peer_port)
            );
            let mut tcb = p.tcb;
            let mut tx = self.tx_for(peer, p.peer_mac);
            tcb.abort(&mut tx);
            return;
        };
        let next_hop = self
            .ifc
            .next_hop(p.tcb.tuple.peer_ip)
            .unwrap_or(p.tcb.tuple.peer_ip);
        let conn = Conn {
            tcb: p.tcb.rebuffer(),
            phase: Phase::MpaAwaitRequest(now + self.config.mpa_timeout),
            active: false,
            next_hop,
            peer_mac: p.peer_mac,
            qpn: None,
            listener: Some(p.listener),
            offer: self.default_offer(),
            mpa_rx: Assembler::new(),
            agreement: None,
            private_data: heapless::Vec::new(),
            ctx: false,
            rejected: false,
            retx: RetxTimer::new(now, &self.config.rdma_retx),
            persist: PersistTimer::default(),
            rtr: RtrProgress::default(),
        };
        log!(
            info,
            "conn {}: accepted {} on port {}",
            i,
            Peer(conn.tcb.tuple.peer_ip, conn.tcb.tuple.peer_port),
            conn.tcb.tuple.local_port
        );
        self.conns[i] = Some(conn);
        self.write_ctx(i, ConnMode::Firmware);
        self.take_data(i, t, rx, now);
    }

    /// Writes slot `i`'s connection context from its TCB.
    fn write_ctx(&mut self, i: usize, mode: ConnMode) {
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        let (flags, mss, mulpdu) = match c.agreement {
            Some(a) => {
                let mss = c.tcb.peer_mss.min(c.tcb.our_mss);
                // (window policy: mpa::Agreement::mulpdu_in_window)
                let wnd = c.tcb.snd_wnd.max(c.tcb.max_snd_wnd);
                (a.ctx_flags(), mss, a.mulpdu_in_window(mss, wnd))
            }
            None => (0, c.tcb.peer_mss.min(c.tcb.our_mss), 0),
        };
        let ctx = ConnContext {
            mode,
            mpa_flags: flags,
            snd_wscale: c.tcb.snd_wscale,
            rcv_wscale: c.tcb.rcv_wscale,
            local_ip: c.tcb.tuple.local_ip,
            peer_ip: c.tcb.tuple.peer_ip,
            local_port: c.tcb.tuple.local_port,
            peer_port: c.tcb.tuple.peer_port,
            local_mac: self.ifc.mac,
            peer_mac: c.peer_mac,
            mss,
            mulpdu,
            rcv_nxt: c.tcb.rcv_nxt,
            snd_nxt: c.tcb.snd_nxt,
            snd_una: c.tcb.snd_una,
            snd_wnd: c.tcb.snd_wnd,
            rcv_wnd: c.tcb.rcv_wnd,
            tx_marker_ref: c.tcb.snd_nxt,
            rx_marker_ref: c.tcb.rcv_nxt,
            qpn: c.qpn.unwrap_or(rnic_wire::abi::context::NO_QP),
        };
        if self.hal.write_conn(i as u32, &ctx).is_ok() {
            c.ctx = true;
        }
    }

    /// Frees slot `i`: clears the device context and unbinds the QP.
    pub(crate) fn release(&mut self, i: usize) {
        let Some(c) = self.conns[i].take() else {
            return;
        };
        if c.ctx {
            let _ = self.hal.write_conn(i as u32, &ConnContext::FREE);
        }
        if let Some(q) = c.qpn.and_then(|n| self.qps.get_mut(n)) {
            if q.conn == Some(i as u32) {
                q.conn = None;
            }
        }
        self.gens[i] = self.gens[i].wrapping_add(1);
    }

    /// Ends slot `i` with a host event about its QP (`kind`) and a QP event.
    pub(crate) fn fail(&mut self, i: usize, kind: Option<EventKind>, qev: QpEvent) {
        let Some(c) = self.conns[i].as_ref() else {
            return;
        };
        let qpn = c.qpn;
        let status = self.conn_id(i);
        if let Some(qpn) = qpn {
            self.qps.apply(&mut self.hal, qpn, qev);
            if let Some(kind) = kind {
                let mut ev = event(kind, qpn);
                ev.status = status;
                self.post(ev);
            }
        }
        self.release(i);
    }

    fn sink(&mut self, i: usize) -> Option<(&mut Conn, Tx<'_, H>)> {
        let c = self.conns[i].as_mut()?;
        let tx = Tx {
            src_mac: self.ifc.mac,
            dst_mac: c.peer_mac,
            src_ip: self.ifc.ip,
            dst_ip: c.tcb.tuple.peer_ip,
            hal: &mut self.hal,
        };
        Some((c, tx))
    }

    fn abort(&mut self, i: usize, kind: Option<EventKind>, qev: QpEvent) {
        if let Some((c, mut tx)) = self.sink(i) {
            c.tcb.abort(&mut tx);
        }
        self.fail(i, kind, qev);
    }

    fn conn_segment(&mut self, i: usize, t: &TcpRx, reason: ExceptionReason, now: Micros) {
        let Some(c) = self.conns[i].as_ref() else {
            return;
        };
        if c.phase == Phase::Rdma {
            self.rdma_segment(i, t, reason, now);
            return;
        }
        let Some((c, mut tx)) = self.sink(i) else {
            return;
        };
        let dev = c.tcb.dev_pending();
        let rx = c.tcb.on_segment(&t.tcp, now, &mut tx);
        if c.phase == Phase::Closing && c.tcb.dev_pending() < dev {
            self.write_dev_una(i);
        }
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        match rx.event {
            Some(TcpEvent::Reset) => {
                // A RST that answers our own SYN is a refusal (RFC 9293
                // §3.10.7.3); the host can tell it from a lost connection.
                let ev = match c.phase {
                    Phase::Closing => None,
                    Phase::Handshake if c.active => Some(EventKind::Refused),
                    _ => Some(EventKind::ConnectionLost),
                };
                log!(info, "conn {}: reset by {}", i, peer_of(c));
                self.fail(i, ev, QpEvent::Lost);
                return;
            }
            Some(TcpEvent::Closed) => {
                self.closed(i);
                return;
            }
            Some(TcpEvent::Established) if c.phase == Phase::Handshake => {
                self.write_ctx(i, ConnMode::Firmware);
                self.send_request(i, now);
            }
            _ => {}
        }
        self.take_data(i, t, rx, now);
    }

    /// The graceful end of slot `i`'s TCP stream.
    fn closed(&mut self, i: usize) {
        let Some(c) = self.conns[i].as_ref() else {
            return;
        };
        log!(info, "conn {}: closed with {}", i, peer_of(c));
        let qpn = c.qpn;
        let report = !c.rejected;
        if let Some(qpn) = qpn {
            let was = self.qps.get(qpn).map(|q| q.state);
            self.qps.apply(&mut self.hal, qpn, QpEvent::Closed);
            if report && was.is_some() {
                self.post(event(EventKind::Closed, qpn));
            }
        }
        self.release(i);
    }

    /// Both FINs are exchanged and ours is acknowledged: the connection is
    /// closed for the host now. TIME-WAIT (RFC 9293 §3.6: 2 MSL, to answer a
    /// retransmitted FIN) only keeps the 4-tuple; the QP leaves it at once,
    /// so the active closer's `Closed` does not wait out 2 MSL.
    fn closed_in_time_wait(&mut self, i: usize) {
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        let Some(qpn) = c.qpn.take() else {
            return;
        };
        log!(info, "conn {}: closed with {} (TIME-WAIT)", i, peer_of(c));
        let report = !c.rejected;
        let was = self.qps.get(qpn).map(|q| q.state);
        self.qps.apply(&mut self.hal, qpn, QpEvent::Closed);
        if report && was.is_some() {
            self.post(event(EventKind::Closed, qpn));
        }
        if let Some(q) = self.qps.get_mut(qpn) {
            if q.conn == Some(i as u32) {
                q.conn = None;
            }
        }
    }

    fn send_request(&mut self, i: usize, now: Micros) {
        let mpa_timeout = self.config.mpa_timeout;
        let Some((c, mut tx)) = self.sink(i) else {
            return;
        };
        let mut b = [0u8; mpa::MAX_FRAME];
        let ok = match mpa::build_request(&c.offer, &c.private_data, &mut b) {
            Ok(n) => c.tcb.write(&b[..n], now, &mut tx),
            Err(_) => false,
        };
        if ok {
            c.phase = Phase::MpaAwaitReply(now + mpa_timeout);
        } else {
            self.abort(i, Some(EventKind::ConnectionLost), QpEvent::Lost);
        }
    }

    /// In-order data (and FIN) of a firmware-mode segment.
    fn take_data(&mut self, i: usize, t: &TcpRx, rx: crate::tcp::Rx, now: Micros) {
        let accept_timeout = self.config.accept_timeout;
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        let data = t.tcp.payload.get(rx.off..rx.off + rx.len).unwrap_or(&[]);
        match c.phase {
            Phase::MpaAwaitRequest(_) | Phase::MpaAwaitReply(_) => {
                let (taken, done) = match c.mpa_rx.feed(data) {
                    Ok(x) => x,
                    Err(_) => {
                        let kind = c.active.then_some(EventKind::ConnectionLost);
                        self.abort(i, kind, QpEvent::Lost);
                        return;
                    }
                };
                c.tcb.consume(taken);
                if !done {
                    if taken > 0 {
                        let Some((c, mut tx)) = self.sink(i) else {
                            return;
                        };
                        c.tcb.send_ack(&mut tx);
                    }
                    if rx.fin {
                        self.peer_fin_early(i, now);
                    }
                    return;
                }
                if c.active {
                    self.on_reply(i, t, rx.off + taken, rx, now);
                } else {
                    self.on_request(i, now + accept_timeout);
                    if let Some((c, mut tx)) = self.sink(i) {
                        c.tcb.send_ack(&mut tx);
                    }
                }
            }
            Phase::MpaDone => {
                // Our frame was just acknowledged, or will be: data here is
                // the peer's first FPDUs.
                self.try_enter_rdma(i, t, rx.off, rx, now);
            }
            Phase::Closing => {
                let Some((c, mut tx)) = self.sink(i) else {
                    return;
                };
                c.tcb.consume_all(&rx, now, &mut tx);
                if c.tcb.state == TcpState::Closed {
                    self.closed(i);
                }
            }
            Phase::MpaAwaitAccept(_) => {
                if rx.fin {
                    self.peer_fin_early(i, now);
                }
            }
            Phase::Handshake | Phase::ArpWait(_) | Phase::Rdma => {}
        }
    }

    /// The peer closed before RDMA mode: close our side too.
    fn peer_fin_early(&mut self, i: usize, now: Micros) {
        let Some((c, mut tx)) = self.sink(i) else {
            return;
        };
        c.tcb.consume_fin(now);
        c.tcb.send_ack(&mut tx);
        c.tcb.close(now, &mut tx);
        let active = c.active;
        c.phase = Phase::Closing;
        if active {
            if let Some(qpn) = c.qpn {
                let mut ev = event(EventKind::ConnectionLost, qpn);
                ev.status = self.conn_id(i);
                self.post(ev);
                self.qps.apply(&mut self.hal, qpn, QpEvent::Lost);
                if let Some(c) = self.conns[i].as_mut() {
                    c.qpn = None;
                }
                if let Some(q) = self.qps.get_mut(qpn) {
                    q.conn = None;
                }
            }
        }
    }

    fn on_request(&mut self, i: usize, deadline: Micros) {
        let conn_id = self.conn_id(i);
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        let req = match mpa::parse(c.mpa_rx.frame()) {
            Ok(r) if r.kind == rnic_wire::mpa::MpaFrameKind::Request => r,
            _ => {
                self.abort(i, None, QpEvent::Lost);
                return;
            }
        };
        let io = req.revision.enhanced();
        let mut ev = event(EventKind::ConnectRequest, conn_id);
        ev.peer_ip = c.tcb.tuple.peer_ip;
        ev.peer_port = c.tcb.tuple.peer_port;
        ev.local_port = c.tcb.tuple.local_port;
        ev.ird = io.map_or(0, |b| b.ird.get());
        ev.ord = io.map_or(0, |b| b.ord.get());
        ev.private_data_len = req.private_data.len() as u16;
        ev.mpa_revision = req.revision.number();
        ev.crc = req.crc;
        ev.markers = req.markers;
        ev.listen_id = c.listener.unwrap_or(0);
        c.phase = Phase::MpaAwaitAccept(deadline);
        self.post(ev);
    }

    fn on_reply(&mut self, i: usize, t: &TcpRx, rest_off: usize, rx: crate::tcp::Rx, now: Micros) {
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        let outcome = mpa::parse(c.mpa_rx.frame()).and_then(|r| mpa::on_reply(&r, &c.offer));
        match outcome {
            Ok(a) => {
                log_agreement(i, &a);
                c.agreement = Some(a);
                c.phase = Phase::MpaDone;
                self.try_enter_rdma(i, t, rest_off, rx, now);
            }
            Err(MpaError::Rejected) => {
                log!(info, "conn {}: MPA request rejected by {}", i, peer_of(c));
                let qpn = c.qpn.take();
                let pdl = c.mpa_rx.private_data().len() as u16;
                c.rejected = true;
                c.phase = Phase::Closing;
                if let Some(qpn) = qpn {
                    let mut ev = event(EventKind::Rejected, qpn);
                    ev.status = self.conn_id(i);
                    ev.private_data_len = pdl;
                    self.post(ev);
                    if let Some(qp) = self.qps.get_mut(qpn) {
                        qp.conn = None;
                    }
                }
                // The QP stays Idle; close the stream.
                let Some((c, mut tx)) = self.sink(i) else {
                    return;
                };
                c.tcb.send_ack(&mut tx);
                c.tcb.close(now, &mut tx);
            }
            Err(_) => {
                log!(warn, "conn {}: MPA reply of {} refused", i, peer_of(c));
                self.abort(i, Some(EventKind::ConnectionLost), QpEvent::Lost)
            }
        }
    }

    /// Switches slot `i` to RDMA mode once everything we sent is
    /// acknowledged; `t.tcp.payload[rest_off..rx.off + rx.len]` are the
    /// peer's first FPDU octets (not consumed), handed to the fast path.
    fn try_enter_rdma(
        &mut self,
        i: usize,
        t: &TcpRx,
        rest_off: usize,
        rx: crate::tcp::Rx,
        now: Micros,
    ) {
        let conn_id = self.conn_id(i);
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        let end = rx.off + rx.len;
        let rest = t.tcp.payload.get(rest_off..end).unwrap_or(&[]);
        let consumed_mpa = rest_off > rx.off;
        if c.tcb.tx_pending() > 0
            || c.tcb.state != TcpState::Established
            || c.phase != Phase::MpaDone
        {
            // Not yet: ACK the MPA octets we took; the rest comes again.
            if consumed_mpa {
                let Some((c, mut tx)) = self.sink(i) else {
                    return;
                };
                c.tcb.send_ack(&mut tx);
            }
            return;
        }
        let (Some(a), Some(qpn)) = (c.agreement, c.qpn) else {
            return;
        };
        let mut rest = rest;
        if a.rtr != RtrKind::None && !c.rtr.done {
            // RFC 6581 §3.2: the RTR exchange comes before RDMA mode.
            match self.rtr_step(i, a, rest, now) {
                RtrStep::Done(n) => rest = &rest[n..],
                RtrStep::Wait | RtrStep::Failed => return,
            }
            let Some(c) = self.conns[i].as_mut() else {
                return;
            };
            if c.tcb.tx_pending() > 0 {
                // Our Read Response to a Read RTR goes first; what came
                // after the RTR is not taken, the peer resends it.
                let Some((c, mut tx)) = self.sink(i) else {
                    return;
                };
                c.tcb.send_ack(&mut tx);
                return;
            }
            if rest.is_empty() {
                let Some((c, mut tx)) = self.sink(i) else {
                    return;
                };
                c.tcb.send_ack(&mut tx);
            }
        }
        if consumed_mpa && rest.is_empty() {
            let Some((c, mut tx)) = self.sink(i) else {
                return;
            };
            c.tcb.send_ack(&mut tx);
        }
        // QP first, then the connection: the fast path must find the QP in
        // Rts when the first FPDU arrives.
        if let Some(q) = self.qps.get_mut(qpn) {
            q.conn = Some(i as u32);
            q.ird = a.ird;
            q.ord = a.ord;
            q.rtr = a.rtr;
            q.flags = if a.rtr_tx { QP_FLAG_RTR_TX } else { 0 }
                | if a.rtr_rx { QP_FLAG_RTR_RX } else { 0 };
        }
        if self.qps.apply(&mut self.hal, qpn, QpEvent::Connected) != Some(QpState::Rts) {
            self.abort(i, Some(EventKind::ConnectionLost), QpEvent::Lost);
            return;
        }
        self.write_ctx(i, ConnMode::Rdma);
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        c.phase = Phase::Rdma;
        c.retx = RetxTimer::new(now, &self.config.rdma_retx);
        c.persist = PersistTimer::default();
        if !rest.is_empty() {
            let seq = c.tcb.rcv_nxt;
            // Not taken: left unacknowledged, the peer resends it.
            let _ = self.reinject(t, seq, rest, rx.fin);
        } else if rx.fin {
            // A FIN right after the MPA frame: the fast path will report it.
        }
        let c = self.conns[i]
            .as_ref()
            .map(|c| (c.tcb.tuple, c.mpa_rx.private_data().len()));
        if let Some((t, _)) = c {
            log!(
                info,
                "conn {}: established with {}, QP {}",
                i,
                Peer(t.peer_ip, t.peer_port),
                qpn
            );
        }
        let mut ev = event(EventKind::Established, qpn);
        ev.status = conn_id;
        if let Some((tuple, pdl)) = c {
            ev.peer_ip = tuple.peer_ip;
            ev.peer_port = tuple.peer_port;
            ev.local_port = tuple.local_port;
            ev.private_data_len = pdl as u16;
        }
        ev.ird = a.peer_ird;
        ev.ord = a.peer_ord;
        ev.mpa_revision = a.revision;
        ev.crc = a.crc;
        ev.markers = a.markers_tx || a.markers_rx;
        self.post(ev);
    }

    /// One step of the RTR exchange of slot `i` (agreement `a`), with
    /// `rest` the in-order data of the current segment (RFC 6581 §3.2,
    /// [`crate::rtr`]):
    /// * initiator: write our RTR message once (then wait for its
    ///   acknowledgement); after a Read RTR, take the responder's
    ///   zero-length Read Response;
    /// * responder: take the peer's first FPDU and check that it is the
    ///   negotiated RTR; answer a Read RTR with a zero-length Read
    ///   Response.
    ///
    /// Octets of an incomplete message are kept and acknowledged; an
    /// unexpected message closes the connection ([`Self::rtr_refused`]).
    fn rtr_step(&mut self, i: usize, a: Agreement, rest: &[u8], now: Micros) -> RtrStep {
        let timeout = self.config.mpa_timeout;
        let Some((c, mut tx)) = self.sink(i) else {
            return RtrStep::Failed;
        };
        c.rtr.deadline.get_or_insert(now + timeout);
        if a.rtr_tx && !c.rtr.sent {
            let mut b = [0u8; rtr::RTR_FPDU_MAX];
            if let Some(n) = rtr::rtr_fpdu(a.rtr, a.crc, &mut b) {
                c.tcb.write(&b[..n], now, &mut tx);
                log!(info, "conn {}: RTR {} sent", i, rtr_name(a.rtr));
            }
            c.rtr.sent = true;
            return RtrStep::Wait;
        }
        if a.rtr_tx && a.rtr != RtrKind::Read {
            c.rtr.done = true;
            return RtrStep::Done(0);
        }
        let mut seen = c.rtr.buf.clone();
        let take = rest.len().min(seen.capacity() - seen.len());
        let _ = seen.extend_from_slice(&rest[..take]);
        let verdict = if a.rtr_tx {
            rtr::check_read_response(a.crc, &seen)
        } else {
            rtr::check_rtr(a.rtr, a.crc, &seen)
        };
        match verdict {
            rtr::Verdict::Incomplete { .. } => {
                c.tcb.consume(take);
                c.rtr.buf = seen;
                if take > 0 {
                    c.tcb.send_ack(&mut tx);
                }
                RtrStep::Wait
            }
            rtr::Verdict::Expected { len, read } => {
                let used = len - c.rtr.buf.len();
                c.tcb.consume(used);
                c.rtr.buf.clear();
                c.rtr.done = true;
                if let Some(req) = read.filter(|_| a.rtr_rx) {
                    let mut b = [0u8; rtr::RTR_FPDU_MAX];
                    if let Some(n) = rtr::frame(&rtr::read_response(&req), a.crc, &mut b) {
                        c.tcb.write(&b[..n], now, &mut tx);
                    }
                }
                log!(info, "conn {}: RTR {} exchange done", i, rtr_name(a.rtr));
                RtrStep::Done(used)
            }
            rtr::Verdict::Unexpected => {
                self.rtr_refused(i, a, now);
                RtrStep::Failed
            }
        }
    }

    /// The peer's first FPDU is not what the negotiated peer-to-peer model
    /// calls for: a Terminate (layer LLP, MPA error "No Matching RTR
    /// Option", RFC 6581 §9) as the stream's last message, the stream
    /// closed, and the host told the connection is lost.
    fn rtr_refused(&mut self, i: usize, a: Agreement, now: Micros) {
        log!(warn, "conn {}: first FPDU is not the negotiated RTR", i);
        let ctx = self.hal.read_conn(i as u32).ok();
        let qpn = self.conns[i].as_mut().and_then(|c| c.qpn.take());
        if let Some((c, mut tx)) = self.sink(i) {
            if let Some(mut ctx) = ctx {
                // Framed as agreed (the context is still the firmware's).
                ctx.mpa_flags = a.ctx_flags();
                let term = rnic_wire::terminate::TerminateRepr::new(
                    rnic_wire::terminate::TerminateCause::Mpa(rtr::MpaError::NoMatchingRtr),
                );
                let mut fpdu = [0u8; TERMINATE_FPDU_MAX];
                if let Ok(n) = terminate_fpdu(&ctx, c.tcb.write_seq(), &term, &mut fpdu) {
                    c.tcb.write(&fpdu[..n], now, &mut tx);
                }
            }
            c.tcb.close(now, &mut tx);
            c.phase = Phase::Closing;
        }
        if let Some(qpn) = qpn {
            let mut ev = event(EventKind::ConnectionLost, qpn);
            ev.status = self.conn_id(i);
            self.post(ev);
            self.qps.apply(&mut self.hal, qpn, QpEvent::Lost);
            if let Some(q) = self.qps.get_mut(qpn) {
                q.conn = None;
            }
        }
    }

    /// Hands `payload` (and a FIN after it) of segment `t`, starting at
    /// sequence number `seq`, to the fast path: the same segment rebuilt
    /// and fed into the device's receive path (`Hal::inject_rx`), to be
    /// checked and placed as if it had just arrived.
    /// Returns whether the device took it (`false`: no room, or a device
    /// without `RX_INJECT`; the octets stay unacknowledged and the peer
    /// resends them).
    /// A cut segment (longer than the firmware's buffer) is never handed
    /// on: its octets past the buffer are not here, and the fast path
    /// cannot take the peer's resent whole segment once a prefix of it
    /// moved RCV.NXT (a go-back-N peer resends whole FPDUs).
    fn reinject(&mut self, t: &TcpRx, seq: u32, payload: &[u8], fin: bool) -> bool {
        if t.cut {
            return false;
        }
        let seg = TcpRepr {
            src_port: t.tcp.src_port,
            dst_port: t.tcp.dst_port,
            control: if fin {
                TcpControl::Fin
            } else {
                TcpControl::Psh
            },
            seq_number: rnic_wire::net::TcpSeqNumber(seq as i32),
            ack_number: t.tcp.ack_number,
            window_len: t.tcp.window_len,
            window_scale: None,
            max_seg_size: None,
            sack_permitted: false,
            sack_ranges: [None; 3],
            timestamp: None,
            payload,
        };
        let mut b = [0u8; frame::MAX_FRAME];
        frame::build_tcp(&mut b, t.src_mac, self.ifc.mac, t.src_ip, t.dst_ip, &seg)
            .is_some_and(|n| self.hal.inject_rx(&b[..n]).is_ok())
    }

    /// Takes slot `i` back from the fast path: syncs the TCB from the
    /// context and puts the context in firmware mode.
    fn take_back(&mut self, i: usize) {
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        if c.phase != Phase::Rdma {
            return;
        }
        if let Ok(ctx) = self.hal.read_conn(i as u32) {
            c.tcb
                .sync(ctx.rcv_nxt, ctx.snd_nxt, ctx.snd_una, ctx.snd_wnd);
            let mut fw = ctx;
            fw.mode = ConnMode::Firmware;
            let _ = self.hal.write_conn(i as u32, &fw);
        }
        c.phase = Phase::Closing;
    }

    fn rdma_segment(&mut self, i: usize, t: &TcpRx, reason: ExceptionReason, now: Micros) {
        // Current sequence state from the fast path.
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        if let Ok(ctx) = self.hal.read_conn(i as u32) {
            c.tcb
                .sync(ctx.rcv_nxt, ctx.snd_nxt, ctx.snd_una, ctx.snd_wnd);
        }
        // A segment classified before the switch to RDMA mode: the peer
        // may send its first FPDUs right behind its ACK of our MPA Reply
        // (RFC 5044 §7.1.2: the initiator may send FPDUs as soon as it has
        // the Reply), and they can be in the device's receive pipeline
        // while the context is written. In-order data goes to the fast
        // path again rather than being lost; older or later segments take
        // the TCP path below (ACK, or duplicate ACK).
        // The device puts the rebuilt segment in front of its parser
        // (`RX_INJECT`, `sim/tests/siw_external.rs`); a device that cannot
        // take it leaves the octets to the peer's retransmission.
        if reason == ExceptionReason::FirmwareMode
            && !t.tcp.payload.is_empty()
            && t.tcp.seq_number.0 as u32 == c.tcb.rcv_nxt
        {
            let fin = t.tcp.control == TcpControl::Fin;
            if self.reinject(t, t.tcp.seq_number.0 as u32, t.tcp.payload, fin) {
                return;
            }
            // Not taken: unacknowledged below, the peer resends it.
        }
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        let mut seg = t.tcp;
        if reason == ExceptionReason::Fin && seg.control == TcpControl::Fin {
            // The fast path placed the payload; the FIN sits at rcv_nxt.
            seg.payload = &[];
            seg.seq_number = rnic_wire::net::TcpSeqNumber(c.tcb.rcv_nxt as i32);
        }
        let Some((c, mut tx)) = self.sink(i) else {
            return;
        };
        let rx = c.tcb.on_segment(&seg, now, &mut tx);
        if rx.event == Some(TcpEvent::Reset) {
            self.fail(i, Some(EventKind::ConnectionLost), QpEvent::Lost);
            return;
        }
        if rx.fin && seg.control == TcpControl::Fin && rx.len == 0 {
            let qpn = c.qpn;
            self.take_back(i);
            let Some((c, mut tx)) = self.sink(i) else {
                return;
            };
            c.tcb.consume_fin(now);
            c.tcb.send_ack(&mut tx);
            c.tcb.close(now, &mut tx);
            if let Some(qpn) = qpn {
                self.qps.apply(&mut self.hal, qpn, QpEvent::CloseStarted);
            }
        }
    }

    fn rdma_exception(&mut self, i: usize, reason: ExceptionReason, now: Micros) {
        let Some(c) = self.conns[i].as_ref() else {
            return;
        };
        let qpn = c.qpn;
        match reason {
            ExceptionReason::RetransmitTimeout => {
                if let Ok(ctx) = self.hal.read_conn(i as u32) {
                    if let Some(c) = self.conns[i].as_mut() {
                        c.tcb
                            .sync(ctx.rcv_nxt, ctx.snd_nxt, ctx.snd_una, ctx.snd_wnd);
                    }
                }
                self.abort(i, Some(EventKind::ConnectionLost), QpEvent::Lost);
            }
            _ => {
                // Terminate sent or received: QP to Terminate, tell the
                // host, close the stream; Error follows when it is closed.
                if let Some(qpn) = qpn {
                    let cause = self.hal.read_qp(qpn).map(|q| q.term_cause).unwrap_or(0);
                    self.qps.apply(&mut self.hal, qpn, QpEvent::Terminate);
                    let mut ev = event(EventKind::QpError, qpn);
                    ev.status = cause;
                    self.post(ev);
                }
                self.take_back(i);
                if let Some((c, mut tx)) = self.sink(i) {
                    c.tcb.close(now, &mut tx);
                }
            }
        }
    }

    /// The device received a Terminate on connection `i` (exception
    /// `TerminateRx`, frame = the Terminate message's first octets, its
    /// Terminate Control first, RFC 5040 §7.1; the device has stopped the
    /// QP's receive side). The cause is 0 if the control is unreadable.
    fn terminate_rx(&mut self, i: usize, f: &[u8], _now: Micros) {
        use rnic_wire::terminate::{TerminateHeader, TERMINATE_CONTROL_LEN};
        let cause = (f.len() >= TERMINATE_CONTROL_LEN)
            .then(|| TerminateHeader::new_unchecked(f).cause().ok())
            .flatten();
        match cause {
            Some(c) => {
                let (layer, etype, code) = c.to_raw();
                log!(
                    warn,
                    "conn {}: Terminate received: layer {} type {} code {}",
                    i,
                    layer,
                    etype,
                    code
                );
            }
            None => log!(warn, "conn {}: Terminate received, cause unreadable", i),
        }
        self.peer_terminated(i, cause);
    }

    /// A Terminate request of the device (its RX path found an error and
    /// stopped the QP): the Terminate goes to the peer as the last message
    /// on the stream (RFC 5040 §5.3, §6.1), after everything the fast path
    /// sent (at its SND.NXT), with the connection's CRC and markers; then
    /// the stream is closed, the QP goes to Terminate (Error once closed)
    /// and the host gets a QpError event with the cause as its status. A
    /// request for a connection not in RDMA mode (already terminating or
    /// closing, or gone) is dropped: only one Terminate per stream.
    pub fn on_terminate_request(&mut self, t: &crate::hal::TermRequest) {
        let i = t.conn as usize;
        let Some(c) = self.conns.get(i).and_then(|c| c.as_ref()) else {
            log!(warn, "Terminate request for unknown connection {}", t.conn);
            return;
        };
        if c.phase != Phase::Rdma {
            log!(
                info,
                "Terminate request on connection {} dropped: not in RDMA mode",
                i
            );
            return;
        }
        let qpn = c.qpn;
        if qpn != Some(t.qpn) {
            log!(
                warn,
                "Terminate request: QP {} is not connection {}'s",
                t.qpn,
                i
            );
        }
        let now = self.hal.now_us();
        if let Some(qpn) = qpn {
            self.qps.apply(&mut self.hal, qpn, QpEvent::Terminate);
            let mut ev = event(EventKind::QpError, qpn);
            ev.status = rnic_wire::abi::cqe::encode_term_cause(
                rnic_wire::terminate::TerminateCause::from_bits(t.cause).ok(),
            );
            self.post(ev);
        }
        self.send_terminate(i, &terminate_repr(t), now);
    }

    /// The peer's Terminate arrived (the device stopped the QP): the QP
    /// goes to Terminate (its send side stops), the host gets QpError with
    /// the peer's cause (`abi::cqe::encode_term_cause`), and the stream is
    /// closed without a Terminate of ours (RFC 5040 §5.3: after a Terminate
    /// nothing more is sent, and a Terminate is never answered with one);
    /// Error follows when the stream is closed.
    fn peer_terminated(&mut self, i: usize, cause: Option<rnic_wire::terminate::TerminateCause>) {
        let Some(c) = self.conns.get(i).and_then(|c| c.as_ref()) else {
            return;
        };
        let (qpn, phase) = (c.qpn, c.phase);
        // The peer's FIN follows its Terminate (RFC 5040 §5.3) and may be
        // taken first (raw frames overtake the Terminate record in the
        // device's exception arbiter): a Closing stream still gets the event.
        if !matches!(phase, Phase::Rdma | Phase::Closing) {
            return;
        }
        let now = self.hal.now_us();
        if let Some(qpn) = qpn {
            // Once per QP: a Terminate for a QP already stopped changes nothing.
            let state = self.qps.get(qpn).map(|q| q.state);
            if matches!(state, None | Some(QpState::Terminate | QpState::Error)) {
                return;
            }
            self.qps.apply(&mut self.hal, qpn, QpEvent::Terminate);
            let mut ev = event(EventKind::QpError, qpn);
            ev.status = rnic_wire::abi::cqe::encode_term_cause(cause);
            self.post(ev);
        }
        if phase == Phase::Rdma {
            self.take_back(i);
            if let Some((c, mut tx)) = self.sink(i) {
                c.tcb.close(now, &mut tx);
            }
        }
    }

    /// Takes connection `i` back from the fast path, sends `term` at the
    /// device's SND.NXT and closes the stream.
    fn send_terminate(
        &mut self,
        i: usize,
        term: &rnic_wire::terminate::TerminateRepr,
        now: Micros,
    ) {
        let (layer, etype, code) = term.cause.to_raw();
        log!(
            warn,
            "conn {}: Terminate sent: layer {} type {} code {}",
            i,
            layer,
            etype,
            code
        );
        let ctx = self.hal.read_conn(i as u32).ok();
        self.take_back(i);
        let Some((c, mut tx)) = self.sink(i) else {
            return;
        };
        if let Some(ctx) = ctx {
            let mut fpdu = [0u8; TERMINATE_FPDU_MAX];
            if let Ok(n) = terminate_fpdu(&ctx, c.tcb.write_seq(), term, &mut fpdu) {
                c.tcb.write(&fpdu[..n], now, &mut tx);
            }
        }
        c.tcb.close(now, &mut tx);
        c.phase = Phase::Closing;
    }

    /// The host moved an RTS QP to Terminate (Modify QP): the QP stops, a
    /// Terminate message goes to the peer on the stream, and the stream is
    /// closed (RFC 5040 §5.1, §7: a Terminate is the last message sent on
    /// the stream). The cause is RDMAP Local Catastrophic, whose code the
    /// RFC leaves free ("any value acceptable"); we send 0xFF, as Linux siw
    /// does for a consumer-requested termination.
    pub(crate) fn host_terminate(&mut self, i: usize, now: Micros) {
        let Some(c) = self.conns[i].as_ref() else {
            return;
        };
        let (qpn, phase) = (c.qpn, c.phase);
        if phase != Phase::Rdma {
            // No RDMA stream yet (still in MPA): nothing to terminate on,
            // close it abortively.
            self.disconnect(i, true, now);
            return;
        }
        // QP first, so the device sends nothing more on it.
        if let Some(qpn) = qpn {
            self.qps.apply(&mut self.hal, qpn, QpEvent::Terminate);
        }
        let term = rnic_wire::terminate::TerminateRepr::new(LOCAL_CATASTROPHIC);
        self.send_terminate(i, &term, now);
    }

    /// The device refused a send WQE of QP `qpn` (an SGE the TPT refused:
    /// completion `LocalProtectionError`, exception `SendQueueError`) and
    /// turned its send side off. The QP cannot go on (the verbs' local
    /// protection error moves it to Error), so, as for a host request to
    /// terminate: a Terminate goes to the peer as the last message on the
    /// stream and the stream is closed (RFC 5040 §5.3, §7.1), with the
    /// cause RDMAP Local Catastrophic (RFC 5040 §7.2: the error is local,
    /// not the peer's; Linux siw sends a Remote Protection cause here
    /// instead). The host gets a `QpError` event with that cause; the
    /// QP's remaining WRs are flushed when it reaches Error. Without a
    /// connection the QP goes to Error at once.
    pub(crate) fn send_queue_error(&mut self, qpn: u32, now: Micros) {
        let mut ev = event(EventKind::QpError, qpn);
        ev.status = rnic_wire::abi::cqe::encode_term_cause(Some(LOCAL_CATASTROPHIC));
        let conn = self
            .conns
            .iter()
            .position(|c| c.as_ref().is_some_and(|c| c.qpn == Some(qpn)));
        match conn {
            // Only a stream in RDMA mode is terminated; one already closing
            // (our or the peer's Terminate, a FIN) is left alone.
            Some(i) => {
                if self.conns[i]
                    .as_ref()
                    .is_some_and(|c| c.phase == Phase::Rdma)
                {
                    log!(warn, "QP {}: send WQE refused, terminating", qpn);
                    self.post(ev);
                    self.host_terminate(i, now);
                }
            }
            None => {
                if self
                    .qps
                    .apply(&mut self.hal, qpn, QpEvent::Modify(QpState::Error))
                    .is_some()
                {
                    self.post(ev);
                }
            }
        }
    }

    /// CQ `cqn` overran (exception `CqOverflow`; the host has the device's
    /// `CqOverflow` event naming it): completions into it can no longer be
    /// delivered, so every QP that completes into it is fatally broken
    /// (verbs: `IBV_EVENT_CQ_ERR` affects the CQ's QPs). Each one not
    /// already in Error ends as a QP whose send WQE was refused
    /// ([`Firmware::send_queue_error`]): a connected stream gets an RDMAP
    /// Local Catastrophic Terminate and closes, the host a `QpError` event
    /// per QP; an unconnected QP moves to Error.
    pub(crate) fn cq_overflow(&mut self, cqn: u32, now: Micros) {
        let qpns: heapless::Vec<u32, Q> = self
            .qps
            .iter()
            .filter(|(_, q)| (q.send_cqn == cqn || q.recv_cqn == cqn) && q.state != QpState::Error)
            .map(|(n, _)| n)
            .collect();
        for qpn in qpns {
            log!(warn, "CQ {} overran: QP {} fails", cqn, qpn);
            self.send_queue_error(qpn, now);
        }
    }

    /// Starts a graceful (`abortive == false`) or abortive close of QP `qpn`'s connection.
    pub(crate) fn disconnect(&mut self, i: usize, abortive: bool, now: Micros) {
        let qpn = self.conns[i].as_ref().and_then(|c| c.qpn);
        if abortive {
            // QP first, so the device starts no more RDMA segments before
            // the RST (RFC 5040 §5.3: nothing follows on a dead stream).
            if let Some(qpn) = qpn {
                self.qps
                    .apply(&mut self.hal, qpn, QpEvent::Modify(QpState::Error));
            }
            if let Some(c) = self.conns[i].as_mut() {
                if c.phase == Phase::Rdma {
                    if let Ok(ctx) = self.hal.read_conn(i as u32) {
                        c.tcb
                            .sync(ctx.rcv_nxt, ctx.snd_nxt, ctx.snd_una, ctx.snd_wnd);
                    }
                }
            }
            self.abort(i, None, QpEvent::Modify(QpState::Error));
            return;
        }
        let phase = self.conns[i].as_ref().map(|c| c.phase);
        match phase {
            Some(Phase::ArpWait(_)) | Some(Phase::Handshake) => {
                self.abort(i, None, QpEvent::Lost);
            }
            Some(_) => {
                self.take_back(i);
                if let Some((c, mut tx)) = self.sink(i) {
                    c.tcb.close(now, &mut tx);
                    c.phase = Phase::Closing;
                }
                if let Some(qpn) = qpn {
                    self.qps.apply(&mut self.hal, qpn, QpEvent::CloseStarted);
                }
            }
            None => {}
        }
    }

    /// Starts an active open for `qpn`; returns the slot.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn connect(
        &mut self,
        qpn: u32,
        peer_ip: u32,
        peer_port: u16,
        local_port: u16,
        offer: Offer,
        private_data: &[u8],
        now: Micros,
    ) -> Result<usize, rnic_wire::abi::mailbox::MboxStatus> {
        use rnic_wire::abi::mailbox::MboxStatus as S;
        let q = self.qps.get(qpn).ok_or(S::NotFound)?;
        if q.state != QpState::Idle || q.conn.is_some() {
            return Err(S::BadState);
        }
        if peer_ip == 0 || peer_ip == u32::MAX || peer_port == 0 || peer_ip == self.ifc.ip {
            return Err(S::BadParam);
        }
        let pd_max = if offer.revision >= 2 {
            512 - mpa::IRD_ORD_LEN
        } else {
            512
        };
        if private_data.len() > pd_max {
            return Err(S::BadParam);
        }
        let local_port = if local_port == 0 {
            self.ephemeral_port().ok_or(S::NoResources)?
        } else {
            local_port
        };
        let tuple = Tuple {
            local_ip: self.ifc.ip,
            local_port,
            peer_ip,
            peer_port,
        };
        if self.find(&tuple).is_some() {
            return Err(S::Busy);
        }
        if self.filter.check(peer_ip, local_port, peer_port) != FilterAction::Allow {
            return Err(S::Denied);
        }
        let i = self.free_slot().ok_or(S::NoResources)?;
        let ifc = self.ifc;
        let (nh, r) = self.arp.resolve_dst(&mut self.hal, &ifc, peer_ip, now);
        let next_hop = match (nh, r) {
            (Some(nh), Resolve::Mac(_) | Resolve::Pending) => nh,
            _ => return Err(S::Unreachable),
        };
        let params = self.params(&tuple, now);
        let mut pd = heapless::Vec::new();
        let _ = pd.extend_from_slice(private_data);
        let mut tx = self.tx_for(peer_ip, [0; 6]);
        let (tcb, phase, mac) = match r {
            Resolve::Mac(mac) => {
                tx.dst_mac = mac;
                (
                    Tcb::connect(tuple, &params, now, &mut tx),
                    Phase::Handshake,
                    mac,
                )
            }
            _ => {
                let mut t = Tcb::connect(tuple, &params, now, &mut NullSink);
                t.abort(&mut NullSink);
                (t, Phase::ArpWait(now), [0; 6])
            }
        };
        self.conns[i] = Some(Conn {
            tcb,
            phase,
            active: true,
            next_hop,
            peer_mac: mac,
            qpn: Some(qpn),
            listener: None,
            offer,
            mpa_rx: Assembler::new(),
            agreement: None,
            private_data: pd,
            ctx: false,
            rejected: false,
            retx: RetxTimer::new(now, &self.config.rdma_retx),
            persist: PersistTimer::default(),
            rtr: RtrProgress::default(),
        });
        if let Some(q) = self.qps.get_mut(qpn) {
            q.conn = Some(i as u32);
        }
        log!(
            info,
            "conn {}: connecting to {} for QP {}",
            i,
            Peer(peer_ip, peer_port),
            qpn
        );
        Ok(i)
    }

    fn ephemeral_port(&mut self) -> Option<u16> {
        for _ in 0..(u16::MAX - EPHEMERAL_FIRST) {
            let p = self.next_port;
            self.next_port = if p == u16::MAX {
                EPHEMERAL_FIRST
            } else {
                p + 1
            };
            let used = self.listeners.iter().any(|l| l.port == p)
                || self
                    .conns
                    .iter()
                    .flatten()
                    .any(|c| c.tcb.tuple.local_port == p);
            if !used {
                return Some(p);
            }
        }
        None
    }

    fn timers(&mut self) {
        let now = self.hal.now_us();
        let ifc = self.ifc;
        self.arp.poll(&mut self.hal, &ifc, now);
        {
            let hal = &mut self.hal;
            self.backlog.poll(now, |tuple, mac, seg| {
                let mut tx = Tx {
                    src_mac: ifc.mac,
                    dst_mac: *mac,
                    src_ip: ifc.ip,
                    dst_ip: tuple.peer_ip,
                    hal: &mut *hal,
                };
                tx.send(seg);
            });
        }
        for i in 0..C {
            let time_wait = self.conns[i]
                .as_ref()
                .is_some_and(|c| c.tcb.state == TcpState::TimeWait && c.qpn.is_some());
            if time_wait {
                self.closed_in_time_wait(i);
            }
            // A closing stream's device octets (RFC 6298 timer, crate::retx).
            let closing = self.conns[i]
                .as_ref()
                .is_some_and(|c| c.phase == Phase::Closing);
            if closing && !self.retx_poll(i, now) {
                continue;
            }
            let Some(c) = self.conns[i].as_mut() else {
                continue;
            };
            match c.phase {
                Phase::ArpWait(since) => {
                    match self.arp.resolve(&mut self.hal, &ifc, c.next_hop, now) {
                        Resolve::Mac(mac) => {
                            c.peer_mac = mac;
                            let tuple = c.tcb.tuple;
                            let params = self.params(&tuple, now);
                            let Some((c, mut tx)) = self.sink(i) else {
                                continue;
                            };
                            c.tcb = Tcb::connect(tuple, &params, now, &mut tx);
                            c.phase = Phase::Handshake;
                        }
                        Resolve::Unreachable => {
                            self.fail(i, Some(EventKind::Unreachable), QpEvent::Lost)
                        }
                        Resolve::Pending if now >= since + self.config.arp_wait => {
                            self.fail(i, Some(EventKind::Unreachable), QpEvent::Lost)
                        }
                        Resolve::Pending => {}
                    }
                    continue;
                }
                Phase::MpaAwaitRequest(d) | Phase::MpaAwaitReply(d) | Phase::MpaAwaitAccept(d)
                    if now >= d =>
                {
                    log!(info, "mpa: timeout on slot {}", i);
                    let kind = c.active.then_some(EventKind::ConnectionLost);
                    self.abort(i, kind, QpEvent::Lost);
                    continue;
                }
                Phase::MpaDone if !c.rtr.done && c.rtr.deadline.is_some_and(|d| now >= d) => {
                    // RFC 6581 §3.2: the RTR (or the Read Response to ours)
                    // never came; both sides' QPs were bound.
                    log!(info, "rtr: timeout on slot {}", i);
                    self.abort(i, Some(EventKind::ConnectionLost), QpEvent::Lost);
                    continue;
                }
                Phase::Rdma => {
                    self.retx_poll(i, now);
                    continue;
                }
                _ => {}
            }
            let Some((c, mut tx)) = self.sink(i) else {
                continue;
            };
            match c.tcb.poll(now, &mut tx) {
                Some(TcpEvent::TimedOut) => {
                    let kind = match (c.phase, c.active) {
                        (Phase::Handshake, true) => Some(EventKind::Unreachable),
                        (Phase::Closing, _) => None,
                        (_, true) => Some(EventKind::ConnectionLost),
                        _ => None,
                    };
                    if kind.is_none() && c.phase == Phase::Closing {
                        // Teardown timed out: the stream is gone.
                        let qpn = c.qpn;
                        if let Some(qpn) = qpn {
                            self.qps.apply(&mut self.hal, qpn, QpEvent::Lost);
                        }
                        self.release(i);
                    } else {
                        self.fail(i, kind, QpEvent::Lost);
                    }
                }
                Some(TcpEvent::Closed) => self.closed(i),
                _ => {}
            }
        }
        self.flush_events();
    }

    /// Runs slot `i`'s retransmission timer of the device's data
    /// ([`crate::retx`]) if a sample is due: in RDMA mode SND.UNA/SND.NXT
    /// come from the connection context (one table read), in `Closing`
    /// from the TCB (`snd_una` and the device's unacknowledged octets, no
    /// device access). Returns whether the slot is still live.
    fn retx_poll(&mut self, i: usize, now: Micros) -> bool {
        let cfg = self.config.rdma_retx;
        let Some(c) = self.conns[i].as_ref() else {
            return false;
        };
        if self.retx_off || !c.retx.due(now) {
            return true;
        }
        let mut rdma_ctx = None;
        let (una, nxt) = match c.phase {
            Phase::Rdma => match self.hal.read_conn(i as u32) {
                Ok(ctx) => {
                    rdma_ctx = Some(ctx);
                    (ctx.snd_una, ctx.snd_nxt)
                }
                Err(_) => return true,
            },
            Phase::Closing => {
                let una = c.tcb.snd_una;
                (una, una.wrapping_add(c.tcb.dev_pending()))
            }
            _ => return true,
        };
        self.stats.retx.samples += 1;
        let Some(c) = self.conns[i].as_mut() else {
            return false;
        };
        if let Some(ctx) = rdma_ctx {
            let fpdu = ctx.mulpdu as u32 + FPDU_OVERHEAD;
            let rto = c.retx.base_rto();
            if c.persist
                .sample(now, una, nxt, ctx.snd_wnd, fpdu, rto, &cfg)
            {
                // The TCB follows the device's state (as for any RDMA-mode
                // segment the firmware handles), then probes.
                c.tcb
                    .sync(ctx.rcv_nxt, ctx.snd_nxt, ctx.snd_una, ctx.snd_wnd);
                self.stats.retx.probes += 1;
                if let Some((c, mut tx)) = self.sink(i) {
                    c.tcb.send_window_probe(&mut tx);
                }
            }
        }
        let Some(c) = self.conns[i].as_mut() else {
            return false;
        };
        let rtts = c.retx.rtt_samples();
        let action = c.retx.sample(now, una, nxt, &cfg);
        self.stats.retx.rtt_samples += c.retx.rtt_samples().wrapping_sub(rtts) as u64;
        if c.retx.armed() {
            self.stats.retx.outstanding += 1;
        }
        let stall = c.retx.stalled(now);
        self.stats.retx.longest_stall = self.stats.retx.longest_stall.max(stall);
        match action {
            RetxAction::None => {}
            RetxAction::Retransmit => match self.hal.retransmit(i as u32) {
                Ok(()) => {
                    c.retx.fired(now, &cfg);
                    self.stats.retx.retransmits += 1;
                    log!(
                        info,
                        "conn {}: retransmit from {} (retry {})",
                        i,
                        una,
                        c.retx.retries()
                    );
                }
                // A replay is still running: sample again next period.
                Err(HalError::Full) => self.stats.retx.busy += 1,
                Err(_) => {
                    // No RETX_CONN: as before, the device's own timeout
                    // (exception RetransmitTimeout) is all there is.
                    self.stats.retx.unsupported += 1;
                    self.retx_off = true;
                    log!(warn, "retx: the device cannot retransmit; timer off");
                }
            },
            RetxAction::GiveUp => {
                // RFC 9293 §3.8.3 (R2): give up on the connection, as on the
                // device's RetransmitTimeout.
                self.stats.retx.give_ups += 1;
                log!(
                    warn,
                    "conn {}: gave up on {} after {} retries",
                    i,
                    peer_of(c),
                    c.retx.retries()
                );
                if c.phase == Phase::Rdma {
                    self.rdma_exception(i, ExceptionReason::RetransmitTimeout, now);
                } else {
                    self.abort(i, Some(EventKind::ConnectionLost), QpEvent::Lost);
                }
                return false;
            }
        }
        true
    }

    /// A closing stream's device octets were acknowledged (the firmware's
    /// TCB took the ACK; the fast path no longer updates the context):
    /// the context's SND.UNA follows, up to the device's SND.NXT, so the
    /// device's FPDU log retires them and a replay starts after them.
    fn write_dev_una(&mut self, i: usize) {
        let Some(c) = self.conns[i].as_ref() else {
            return;
        };
        let una = c.tcb.snd_una;
        let Ok(mut ctx) = self.hal.read_conn(i as u32) else {
            return;
        };
        let una = if crate::tcp::seq_lt(ctx.snd_nxt, una) {
            ctx.snd_nxt
        } else {
            una
        };
        if !crate::tcp::seq_lt(ctx.snd_una, una) {
            return;
        }
        ctx.snd_una = una;
        if self.hal.write_conn(i as u32, &ctx).is_ok() {
            self.stats.retx.una_writes += 1;
        }
    }

    pub(crate) fn next_listen_id(&mut self) -> u32 {
        let id = self.next_listen_id;
        self.next_listen_id = self.next_listen_id.wrapping_add(1).max(1);
        id
    }

    /// The earliest time a timer needs [`Firmware::poll`] (for sleeping).
    pub fn next_deadline(&self) -> Option<Micros> {
        let conns = self.conns.iter().flatten().filter_map(|c| {
            let d = match c.phase {
                Phase::MpaAwaitRequest(d) | Phase::MpaAwaitReply(d) | Phase::MpaAwaitAccept(d) => {
                    Some(d)
                }
                Phase::ArpWait(s) => Some(s + 1000 * MS),
                Phase::MpaDone if !c.rtr.done => c.rtr.deadline,
                _ => None,
            };
            let timed = !self.retx_off
                && (c.phase == Phase::Rdma
                    || (c.phase == Phase::Closing && c.tcb.dev_pending() > 0));
            let d = match (d, timed.then(|| c.retx.deadline())) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            match (d, c.tcb.deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        });
        conns
            .chain(self.backlog.next_deadline())
            .chain(self.arp.next_deadline())
            .min()
    }
}

/// A sink that sends nothing.
struct NullSink;
impl SegSink for NullSink {
    fn send(&mut self, _: &TcpRepr) {}
}
