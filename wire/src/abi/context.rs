//! Device tables the firmware writes and the RTL fast path reads (and partly
//! updates): connection contexts, QP contexts, CQ contexts, the TPT (layout in
//! [`super::tpt`]) and the page list. Also the firmware port: the exception
//! queue reason codes and the port's register map (DESIGN.md §1, §5).
//!
//! A table is addressed by a [`TableId`] and an entry index; the firmware
//! reads and writes whole entries, and the device applies an entry write
//! atomically (the fast path never sees half of one). Fields the device
//! updates itself are kept by the device across a firmware write that does
//! not change the entry's mode/state class: a connection context in
//! [`ConnMode::Rdma`] before and after the write keeps the device's
//! `rcv_nxt`, `snd_nxt`, `snd_una` and `snd_wnd`; a QP context written while
//! not `Idle` (and not to `Idle`) keeps the device's MSNs and `term_cause`.
//! So the firmware's read-modify-write (route update, state change) cannot
//! undo the fast path's progress.
//!
//! Connection context (`TableId::Conn`, [`CONN_CTX_SIZE`] octets):
//! ```text
//!  0  mode         u8   [`ConnMode`]
//!  1  mpa_flags    u8   `MPA_*` (CRC and markers per direction)
//!  2  snd_wscale   u8   shift applied to the peer's advertised window
//!  3  rcv_wscale   u8   shift the peer applies to ours
//!  4  local_ip     u32  (u32 of the big-endian address, like the CSRs)
//!  8  peer_ip      u32
//! 12  local_port   u16
//! 14  peer_port    u16
//! 16  local_mac    [u8; 6]
//! 22  peer_mac     [u8; 6]  next hop's MAC (the peer or the gateway)
//! 28  mss          u16  largest TCP payload we send
//! 30  mulpdu       u16  largest ULPDU per FPDU we send (RFC 5044 §8)
//! 32  rcv_nxt      u32  device-updated in RDMA mode
//! 36  snd_nxt      u32  device-updated in RDMA mode
//! 40  snd_una      u32  device-updated in RDMA mode
//! 44  snd_wnd      u32  the peer's window in octets (already scaled)
//! 48  rcv_wnd      u32  the window we offer, octets (the device shifts it by rcv_wscale)
//! 52  tx_marker_ref u32 sequence number of the first octet of our FPDU stream
//! 56  rx_marker_ref u32 sequence number of the first octet of the peer's FPDU stream
//! 60  qpn          u32  the QP bound to the connection ([`NO_QP`]: none)
//! ```
//! Markers (RFC 5044 §5) sit every 512 octets of TCP sequence space counted
//! from the `*_marker_ref` of that direction.
//!
//! QP context (`TableId::Qp`, [`QP_CTX_SIZE`] octets):
//! ```text
//!  0  state        u8   [`super::mailbox::QpState`]
//!  1  flags        u8   `QP_FLAG_*`
//!  2  rtr          u8   [`RtrKind`] of the RFC 6581 ready-to-receive message
//!  3  sq_log2      u8   log2 of the send ring's entries
//!  4  pd           u32
//!  8  send_cqn     u32
//! 12  recv_cqn     u32
//! 16  sq_ring      u64  bus address
//! 24  rq_ring      u64  bus address
//! 32  rq_log2      u8
//! 33  reserved     u8, u16
//! 36  conn         u32  connection context index ([`NO_CONN`]: none)
//! 40  ird          u16  inbound Read Requests we accept at once
//! 42  ord          u16  outbound Read Requests we may have outstanding
//! 44  tx_send_msn  u32  MSN of our next Send (queue 0); starts at 1
//! 48  tx_read_msn  u32  MSN of our next Read Request (queue 1); starts at 1
//! 52  rx_send_msn  u32  MSN expected on the next incoming Send; starts at 1
//! 56  rx_read_msn  u32  MSN expected on the next incoming Read Request; starts at 1
//! 60  term_cause   u32  as `cqe::encode_term_cause`: TERM_CAUSE_PRESENT | 16-bit cause, 0 if none
//! ```
//!
//! CQ context (`TableId::Cq`, [`CQ_CTX_SIZE`] octets):
//! ```text
//!  0  state        u8   [`CqState`]
//!  1  log2_entries u8
//!  2  reserved     u16
//!  4  reserved     u32
//!  8  ring         u64  bus address
//! 16  producer     u32  device-owned
//! 20  consumer     u32  host-written through the CQ doorbell
//! 24  armed        u32  [`super::doorbell::CqArm`] value, 0 when not armed
//! 28  reserved     u32
//! ```
//!
//! Page list (`TableId::Pbl`): [`PBL_ENTRY_SIZE`]-octet entries, one u64 bus
//! address per page.

use super::le::*;
use super::{check_len, check_out};
use crate::{Error, Result};

/// Size of a connection context.
pub const CONN_CTX_SIZE: usize = 64;
/// Size of a QP context.
pub const QP_CTX_SIZE: usize = 64;
/// Size of a CQ context.
pub const CQ_CTX_SIZE: usize = 32;
/// Size of a page-list entry.
pub const PBL_ENTRY_SIZE: usize = 8;
/// The largest entry of any table.
pub const MAX_ENTRY_SIZE: usize = 64;

/// `qpn` of a connection without a QP.
pub const NO_QP: u32 = u32::MAX;
/// `conn` of a QP without a connection.
pub const NO_CONN: u32 = u32::MAX;

/// The device tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TableId {
    /// Connection contexts.
    Conn = 0,
    /// QP contexts.
    Qp = 1,
    /// CQ contexts.
    Cq = 2,
    /// TPT entries ([`super::tpt::TptEntry`]).
    Tpt = 3,
    /// Page list.
    Pbl = 4,
}

impl TableId {
    /// Size of one entry.
    pub const fn entry_size(self) -> usize {
        match self {
            TableId::Conn => CONN_CTX_SIZE,
            TableId::Qp => QP_CTX_SIZE,
            TableId::Cq => CQ_CTX_SIZE,
            TableId::Tpt => super::tpt::TPT_ENTRY_SIZE,
            TableId::Pbl => PBL_ENTRY_SIZE,
        }
    }
    /// Decodes a table id.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => TableId::Conn,
            1 => TableId::Qp,
            2 => TableId::Cq,
            3 => TableId::Tpt,
            4 => TableId::Pbl,
            _ => return Err(Error::BadField),
        })
    }
}

/// Who handles a connection's segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ConnMode {
    /// Unused entry; the lookup never matches it.
    Free = 0,
    /// TCP only: every segment goes to the firmware's exception queue
    /// (handshake, MPA negotiation, teardown).
    Firmware = 1,
    /// RDMA mode: the fast path owns the stream. From the first octet at
    /// `rcv_nxt` on, incoming octets are FPDUs; the device updates
    /// `rcv_nxt`, `snd_nxt`, `snd_una` and `snd_wnd` in place.
    Rdma = 2,
}

impl ConnMode {
    /// Decodes a mode.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => ConnMode::Free,
            1 => ConnMode::Firmware,
            2 => ConnMode::Rdma,
            _ => return Err(Error::BadField),
        })
    }
}

/// `mpa_flags`: we send CRC32c in our FPDUs.
pub const MPA_CRC_TX: u8 = 1 << 0;
/// `mpa_flags`: the peer's FPDUs carry a CRC32c that we check.
pub const MPA_CRC_RX: u8 = 1 << 1;
/// `mpa_flags`: we insert markers into our stream.
pub const MPA_MARKERS_TX: u8 = 1 << 2;
/// `mpa_flags`: the peer's stream carries markers we strip.
pub const MPA_MARKERS_RX: u8 = 1 << 3;
const MPA_FLAGS_ALL: u8 = MPA_CRC_TX | MPA_CRC_RX | MPA_MARKERS_TX | MPA_MARKERS_RX;

const C_MODE: usize = 0;
const C_MPA_FLAGS: usize = 1;
const C_SND_WSCALE: usize = 2;
const C_RCV_WSCALE: usize = 3;
const C_LOCAL_IP: usize = 4;
const C_PEER_IP: usize = 8;
const C_LOCAL_PORT: usize = 12;
const C_PEER_PORT: usize = 14;
const C_LOCAL_MAC: usize = 16;
const C_PEER_MAC: usize = 22;
const C_MSS: usize = 28;
const C_MULPDU: usize = 30;
const C_RCV_NXT: usize = 32;
const C_SND_NXT: usize = 36;
const C_SND_UNA: usize = 40;
const C_SND_WND: usize = 44;
const C_RCV_WND: usize = 48;
const C_TX_MARKER_REF: usize = 52;
const C_RX_MARKER_REF: usize = 56;
const C_QPN: usize = 60;
const _: () = assert!(C_QPN + 4 == CONN_CTX_SIZE);
const _: () = assert!(C_PEER_MAC + 6 == C_MSS);

/// A connection context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConnContext {
    /// Who handles the connection's segments.
    pub mode: ConnMode,
    /// `MPA_*` flags.
    pub mpa_flags: u8,
    /// Shift applied to the peer's advertised window (0 without window scaling).
    pub snd_wscale: u8,
    /// Shift the peer applies to our advertised window.
    pub rcv_wscale: u8,
    /// Our IPv4 address.
    pub local_ip: u32,
    /// The peer's IPv4 address.
    pub peer_ip: u32,
    /// Our TCP port.
    pub local_port: u16,
    /// The peer's TCP port.
    pub peer_port: u16,
    /// Our MAC address.
    pub local_mac: [u8; 6],
    /// The next hop's MAC address.
    pub peer_mac: [u8; 6],
    /// Largest TCP payload we send.
    pub mss: u16,
    /// Largest ULPDU per FPDU we send.
    pub mulpdu: u16,
    /// Next sequence number expected from the peer.
    pub rcv_nxt: u32,
    /// Next sequence number we send.
    pub snd_nxt: u32,
    /// Oldest unacknowledged sequence number.
    pub snd_una: u32,
    /// The peer's window in octets.
    pub snd_wnd: u32,
    /// The window we offer, in octets.
    pub rcv_wnd: u32,
    /// Marker reference of our FPDU stream.
    pub tx_marker_ref: u32,
    /// Marker reference of the peer's FPDU stream.
    pub rx_marker_ref: u32,
    /// The bound QP, or [`NO_QP`].
    pub qpn: u32,
}

impl ConnContext {
    /// Size in octets.
    pub const SIZE: usize = CONN_CTX_SIZE;

    /// An unused entry.
    pub const FREE: ConnContext = ConnContext {
        mode: ConnMode::Free,
        mpa_flags: 0,
        snd_wscale: 0,
        rcv_wscale: 0,
        local_ip: 0,
        peer_ip: 0,
        local_port: 0,
        peer_port: 0,
        local_mac: [0; 6],
        peer_mac: [0; 6],
        mss: 0,
        mulpdu: 0,
        rcv_nxt: 0,
        snd_nxt: 0,
        snd_una: 0,
        snd_wnd: 0,
        rcv_wnd: 0,
        tx_marker_ref: 0,
        rx_marker_ref: 0,
        qpn: NO_QP,
    };

    /// Parses a context.
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, CONN_CTX_SIZE)?;
        let mpa_flags = b[C_MPA_FLAGS];
        if mpa_flags & !MPA_FLAGS_ALL != 0 || b[C_SND_WSCALE] > 14 || b[C_RCV_WSCALE] > 14 {
            return Err(Error::BadField);
        }
        let mut local_mac = [0u8; 6];
        local_mac.copy_from_slice(&b[C_LOCAL_MAC..C_LOCAL_MAC + 6]);
        let mut peer_mac = [0u8; 6];
        peer_mac.copy_from_slice(&b[C_PEER_MAC..C_PEER_MAC + 6]);
        Ok(ConnContext {
            mode: ConnMode::from_u8(b[C_MODE])?,
            mpa_flags,
            snd_wscale: b[C_SND_WSCALE],
            rcv_wscale: b[C_RCV_WSCALE],
            local_ip: u32_at(b, C_LOCAL_IP),
            peer_ip: u32_at(b, C_PEER_IP),
            local_port: u16_at(b, C_LOCAL_PORT),
            peer_port: u16_at(b, C_PEER_PORT),
            local_mac,
            peer_mac,
            mss: u16_at(b, C_MSS),
            mulpdu: u16_at(b, C_MULPDU),
            rcv_nxt: u32_at(b, C_RCV_NXT),
            snd_nxt: u32_at(b, C_SND_NXT),
            snd_una: u32_at(b, C_SND_UNA),
            snd_wnd: u32_at(b, C_SND_WND),
            rcv_wnd: u32_at(b, C_RCV_WND),
            tx_marker_ref: u32_at(b, C_TX_MARKER_REF),
            rx_marker_ref: u32_at(b, C_RX_MARKER_REF),
            qpn: u32_at(b, C_QPN),
        })
    }

    /// Writes the context into `b[..CONN_CTX_SIZE]`.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, CONN_CTX_SIZE)?;
        b[C_MODE] = self.mode as u8;
        b[C_MPA_FLAGS] = self.mpa_flags;
        b[C_SND_WSCALE] = self.snd_wscale;
        b[C_RCV_WSCALE] = self.rcv_wscale;
        put_u32(b, C_LOCAL_IP, self.local_ip);
        put_u32(b, C_PEER_IP, self.peer_ip);
        put_u16(b, C_LOCAL_PORT, self.local_port);
        put_u16(b, C_PEER_PORT, self.peer_port);
        b[C_LOCAL_MAC..C_LOCAL_MAC + 6].copy_from_slice(&self.local_mac);
        b[C_PEER_MAC..C_PEER_MAC + 6].copy_from_slice(&self.peer_mac);
        put_u16(b, C_MSS, self.mss);
        put_u16(b, C_MULPDU, self.mulpdu);
        put_u32(b, C_RCV_NXT, self.rcv_nxt);
        put_u32(b, C_SND_NXT, self.snd_nxt);
        put_u32(b, C_SND_UNA, self.snd_una);
        put_u32(b, C_SND_WND, self.snd_wnd);
        put_u32(b, C_RCV_WND, self.rcv_wnd);
        put_u32(b, C_TX_MARKER_REF, self.tx_marker_ref);
        put_u32(b, C_RX_MARKER_REF, self.rx_marker_ref);
        put_u32(b, C_QPN, self.qpn);
        Ok(())
    }
}

/// The RFC 6581 ready-to-receive message of a connection: a zero-length
/// operation the initiator sends as its first FPDU and the responder waits
/// for before it sends anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RtrKind {
    /// No RTR message (MPA revision 1, or not enhanced).
    None = 0,
    /// A zero-length Send.
    Send = 1,
    /// A zero-length RDMA Write.
    Write = 2,
    /// A zero-length RDMA Read Request (answered by a zero-length Read Response).
    Read = 3,
}

impl RtrKind {
    /// Decodes a kind.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => RtrKind::None,
            1 => RtrKind::Send,
            2 => RtrKind::Write,
            3 => RtrKind::Read,
            _ => return Err(Error::BadField),
        })
    }
}

/// `QP_FLAG_*`: the device sends the RTR message before anything else.
pub const QP_FLAG_RTR_TX: u8 = 1 << 0;
/// `QP_FLAG_*`: the device waits for the peer's RTR message before it sends,
/// and consumes it (no completion).
pub const QP_FLAG_RTR_RX: u8 = 1 << 1;
const QP_FLAGS_ALL: u8 = QP_FLAG_RTR_TX | QP_FLAG_RTR_RX;

const Q_STATE: usize = 0;
const Q_FLAGS: usize = 1;
const Q_RTR: usize = 2;
const Q_SQ_LOG2: usize = 3;
const Q_PD: usize = 4;
const Q_SEND_CQN: usize = 8;
const Q_RECV_CQN: usize = 12;
const Q_SQ_RING: usize = 16;
const Q_RQ_RING: usize = 24;
const Q_RQ_LOG2: usize = 32;
const Q_CONN: usize = 36;
const Q_IRD: usize = 40;
const Q_ORD: usize = 42;
const Q_TX_SEND_MSN: usize = 44;
const Q_TX_READ_MSN: usize = 48;
const Q_RX_SEND_MSN: usize = 52;
const Q_RX_READ_MSN: usize = 56;
const Q_TERM_CAUSE: usize = 60;
const _: () = assert!(Q_TERM_CAUSE + 4 == QP_CTX_SIZE);

/// A QP context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QpContext {
    /// State; the fast path processes WQEs only in `Rts`.
    pub state: super::mailbox::QpState,
    /// `QP_FLAG_*`.
    pub flags: u8,
    /// The ready-to-receive message agreed.
    pub rtr: RtrKind,
    /// log2 of the send ring's entries.
    pub sq_log2: u8,
    /// Protection domain.
    pub pd: u32,
    /// CQ of send completions.
    pub send_cqn: u32,
    /// CQ of receive completions.
    pub recv_cqn: u32,
    /// Send ring bus address.
    pub sq_ring: u64,
    /// Receive ring bus address.
    pub rq_ring: u64,
    /// log2 of the receive ring's entries.
    pub rq_log2: u8,
    /// Connection context index, or [`NO_CONN`].
    pub conn: u32,
    /// Inbound RDMA Read Requests accepted at once.
    pub ird: u16,
    /// Outbound RDMA Read Requests outstanding at most.
    pub ord: u16,
    /// MSN of our next Send.
    pub tx_send_msn: u32,
    /// MSN of our next Read Request.
    pub tx_read_msn: u32,
    /// MSN expected on the next incoming Send.
    pub rx_send_msn: u32,
    /// MSN expected on the next incoming Read Request.
    pub rx_read_msn: u32,
    /// Terminate cause as [`super::cqe::encode_term_cause`] writes it (0: none).
    pub term_cause: u32,
}

impl QpContext {
    /// Size in octets.
    pub const SIZE: usize = QP_CTX_SIZE;

    /// Parses a context.
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, QP_CTX_SIZE)?;
        let flags = b[Q_FLAGS];
        if flags & !QP_FLAGS_ALL != 0 || b[Q_SQ_LOG2] > 31 || b[Q_RQ_LOG2] > 31 {
            return Err(Error::BadField);
        }
        Ok(QpContext {
            state: super::mailbox::QpState::from_u8(b[Q_STATE])?,
            flags,
            rtr: RtrKind::from_u8(b[Q_RTR])?,
            sq_log2: b[Q_SQ_LOG2],
            pd: u32_at(b, Q_PD),
            send_cqn: u32_at(b, Q_SEND_CQN),
            recv_cqn: u32_at(b, Q_RECV_CQN),
            sq_ring: u64_at(b, Q_SQ_RING),
            rq_ring: u64_at(b, Q_RQ_RING),
            rq_log2: b[Q_RQ_LOG2],
            conn: u32_at(b, Q_CONN),
            ird: u16_at(b, Q_IRD),
            ord: u16_at(b, Q_ORD),
            tx_send_msn: u32_at(b, Q_TX_SEND_MSN),
            tx_read_msn: u32_at(b, Q_TX_READ_MSN),
            rx_send_msn: u32_at(b, Q_RX_SEND_MSN),
            rx_read_msn: u32_at(b, Q_RX_READ_MSN),
            term_cause: u32_at(b, Q_TERM_CAUSE),
        })
    }

    /// Writes the context into `b[..QP_CTX_SIZE]`.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, QP_CTX_SIZE)?;
        let b = &mut b[..QP_CTX_SIZE];
        b.fill(0);
        b[Q_STATE] = self.state as u8;
        b[Q_FLAGS] = self.flags;
        b[Q_RTR] = self.rtr as u8;
        b[Q_SQ_LOG2] = self.sq_log2;
        put_u32(b, Q_PD, self.pd);
        put_u32(b, Q_SEND_CQN, self.send_cqn);
        put_u32(b, Q_RECV_CQN, self.recv_cqn);
        put_u64(b, Q_SQ_RING, self.sq_ring);
        put_u64(b, Q_RQ_RING, self.rq_ring);
        b[Q_RQ_LOG2] = self.rq_log2;
        put_u32(b, Q_CONN, self.conn);
        put_u16(b, Q_IRD, self.ird);
        put_u16(b, Q_ORD, self.ord);
        put_u32(b, Q_TX_SEND_MSN, self.tx_send_msn);
        put_u32(b, Q_TX_READ_MSN, self.tx_read_msn);
        put_u32(b, Q_RX_SEND_MSN, self.rx_send_msn);
        put_u32(b, Q_RX_READ_MSN, self.rx_read_msn);
        put_u32(b, Q_TERM_CAUSE, self.term_cause);
        Ok(())
    }
}

/// The state of a CQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CqState {
    /// Unused.
    Free = 0,
    /// In use.
    Valid = 1,
    /// Overflowed; the device writes no more entries.
    Overflow = 2,
}

const Q2_STATE: usize = 0;
const Q2_LOG2: usize = 1;
const Q2_RING: usize = 8;
const Q2_PRODUCER: usize = 16;
const Q2_CONSUMER: usize = 20;
const Q2_ARMED: usize = 24;
const Q2_RSVD: usize = 28;
const _: () = assert!(Q2_RSVD + 4 == CQ_CTX_SIZE);

/// A CQ context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CqContext {
    /// State.
    pub state: CqState,
    /// log2 of the ring's entries.
    pub log2_entries: u8,
    /// Ring bus address.
    pub ring: u64,
    /// Producer index (device).
    pub producer: u32,
    /// Consumer index (host doorbell).
    pub consumer: u32,
    /// Arm state (a `CqArm` value, 0: not armed).
    pub armed: u32,
}

impl CqContext {
    /// Size in octets.
    pub const SIZE: usize = CQ_CTX_SIZE;

    /// Parses a context.
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, CQ_CTX_SIZE)?;
        let state = match b[Q2_STATE] {
            0 => CqState::Free,
            1 => CqState::Valid,
            2 => CqState::Overflow,
            _ => return Err(Error::BadField),
        };
        if b[Q2_LOG2] > 31 {
            return Err(Error::BadField);
        }
        Ok(CqContext {
            state,
            log2_entries: b[Q2_LOG2],
            ring: u64_at(b, Q2_RING),
            producer: u32_at(b, Q2_PRODUCER),
            consumer: u32_at(b, Q2_CONSUMER),
            armed: u32_at(b, Q2_ARMED),
        })
    }

    /// Writes the context into `b[..CQ_CTX_SIZE]`.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, CQ_CTX_SIZE)?;
        let b = &mut b[..CQ_CTX_SIZE];
        b.fill(0);
        b[Q2_STATE] = self.state as u8;
        b[Q2_LOG2] = self.log2_entries;
        put_u64(b, Q2_RING, self.ring);
        put_u32(b, Q2_PRODUCER, self.producer);
        put_u32(b, Q2_CONSUMER, self.consumer);
        put_u32(b, Q2_ARMED, self.armed);
        Ok(())
    }
}

/// Why a frame is in the firmware's exception queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ExceptionReason {
    /// No connection context matched (ARP, ICMP, a SYN to a listener, a
    /// segment of a connection the device does not know).
    NoMatch = 0,
    /// The connection is in [`ConnMode::Firmware`].
    FirmwareMode = 1,
    /// A FIN on an RDMA-mode connection (the device has not consumed it).
    Fin = 2,
    /// A RST on an RDMA-mode connection.
    Rst = 3,
    /// A SYN on an RDMA-mode connection.
    Syn = 4,
    /// A segment outside the receive window, or out of order and not placeable.
    OutOfWindow = 5,
    /// A Terminate message arrived (the QP is already stopped by the device).
    TerminateRx = 6,
    /// The device sent a Terminate (frame: the Terminate segment it sent).
    TerminateTx = 7,
    /// The fast path's retransmissions ran out (frame empty).
    RetransmitTimeout = 8,
    /// The device refused a send WQE's SGE (completion
    /// `LocalProtectionError`) and turned the QP's send side off; the
    /// firmware terminates the stream. Frame: 8 octets, the QPN (u32 LE),
    /// the completion status (a `WcStatus`), 3 zero octets; the connection
    /// field carries the QPN too.
    SendQueueError = 9,
    /// A CQ overran (the completion writer found it full; it wrote the
    /// host's `CqOverflow` event and writes nothing more to it). The
    /// firmware moves every QP that completes into the CQ to Error and
    /// terminates their streams (verbs: `IBV_EVENT_CQ_ERR` is fatal to
    /// those QPs). Frame: 8 octets, the CQ number (u32 LE), 4 zero octets;
    /// the connection field carries the CQ number too.
    CqOverflow = 10,
    /// The device was reset (BAR0 `CTRL_RESET`): its tables are cleared,
    /// its queues empty, and the port ignored the firmware's writes from
    /// the reset's start until this entry is popped. The firmware forgets
    /// its connections, QPs, CQs and regions. Frame empty, no connection;
    /// shown by the port itself, not queued.
    DeviceReset = 11,
}

impl ExceptionReason {
    /// Decodes a reason.
    pub fn from_u8(v: u8) -> Result<Self> {
        use ExceptionReason::*;
        Ok(match v {
            0 => NoMatch,
            1 => FirmwareMode,
            2 => Fin,
            3 => Rst,
            4 => Syn,
            5 => OutOfWindow,
            6 => TerminateRx,
            7 => TerminateTx,
            8 => RetransmitTimeout,
            9 => SendQueueError,
            10 => CqOverflow,
            11 => DeviceReset,
            _ => return Err(Error::BadOpcode),
        })
    }
}

/// The firmware port's register map (offsets in the firmware's MMIO window;
/// every register 32 bits). The soft CPU reaches the tables, the exception
/// and raw TX queues, the host mailbox and the event queue through it.
pub mod port {
    /// Table access: `table id << 24 | index` (index < 2^24).
    pub const TABLE_SEL: u32 = 0x000;
    /// Write [`TABLE_READ`] or [`TABLE_WRITE`]; reads 1 while busy. A write
    /// takes `TableId::entry_size` octets from `TABLE_DATA` atomically.
    pub const TABLE_CMD: u32 = 0x004;
    /// `TABLE_CMD` value: read the entry into `TABLE_DATA`.
    pub const TABLE_READ: u32 = 1;
    /// `TABLE_CMD` value: write `TABLE_DATA` into the entry.
    pub const TABLE_WRITE: u32 = 2;
    /// Exception queue head: bit 31 valid, bits 23:16 reason, 15:0 length.
    pub const EXC_STATUS: u32 = 0x008;
    /// Exception queue head: connection index (0xFFFF_FFFF: none).
    pub const EXC_CONN: u32 = 0x00C;
    /// Write 1: pop the exception queue head.
    pub const EXC_POP: u32 = 0x010;
    /// Write a length: send `TX_DATA[..len]` as a raw frame.
    pub const TX_SEND: u32 = 0x014;
    /// Write a length (1..=[`FRAME_WINDOW`]): put `TX_DATA[..len]`, a whole
    /// Ethernet frame with correct checksums, into the receive pipeline in
    /// front of the parser, as if it had arrived (e.g. an FPDU that came
    /// just before its connection entered [`super::ConnMode::Rdma`]). Shares
    /// `TX_DATA` and the busy bit (read: bit 31) with [`TX_SEND`].
    pub const RX_INJECT: u32 = 0x018;
    /// Free-running cycle counter, low half (latches the high half).
    pub const CYCLES_LO: u32 = 0x020;
    /// Cycle counter, high half.
    pub const CYCLES_HI: u32 = 0x024;
    /// Core clock in kHz (RO).
    pub const CLOCK_KHZ: u32 = 0x028;
    /// Host mailbox: the opcode (bit 31: a command is waiting).
    pub const MBOX_CMD: u32 = 0x030;
    /// Host mailbox: parameter length in, result length out.
    pub const MBOX_LEN: u32 = 0x034;
    /// Host mailbox: write the status to finish the command.
    pub const MBOX_DONE: u32 = 0x038;
    /// Write 1: push `EVENT_DATA` to the host event queue; reads bit 0 = queue full.
    pub const EVENT_PUSH: u32 = 0x03C;
    /// Write a QP number: the device completes every outstanding WR of
    /// that QP with `WrFlushError` (the QP must be in Error).
    pub const FLUSH_QP: u32 = 0x040;
    /// Global configuration, as the host wrote it into BAR0 (RO mirror):
    /// MAC low, MAC high, IPv4, netmask, gateway, MTU.
    pub const CFG_MAC_LO: u32 = 0x050;
    /// See [`CFG_MAC_LO`].
    pub const CFG_MAC_HI: u32 = 0x054;
    /// See [`CFG_MAC_LO`].
    pub const CFG_IPV4: u32 = 0x058;
    /// See [`CFG_MAC_LO`].
    pub const CFG_NETMASK: u32 = 0x05C;
    /// See [`CFG_MAC_LO`].
    pub const CFG_GATEWAY: u32 = 0x060;
    /// See [`CFG_MAC_LO`].
    pub const CFG_MTU: u32 = 0x064;
    /// Table entry data window (64 octets).
    pub const TABLE_DATA: u32 = 0x100;
    /// Event entry staging window (64 octets).
    pub const EVENT_DATA: u32 = 0x140;
    /// Mailbox data window (1 KiB; the host's `MBOX_DATA`).
    pub const MBOX_DATA: u32 = 0x400;
    /// Exception frame window (2 KiB).
    pub const EXC_DATA: u32 = 0x800;
    /// Raw TX / inject frame window (2 KiB).
    pub const TX_DATA: u32 = 0x1000;
    /// Size of the frame windows.
    pub const FRAME_WINDOW: u32 = 0x800;
    /// Size of the port's MMIO window.
    pub const SIZE: u32 = 0x2000;

    /// Terminate request head (the device detected an error, stopped the
    /// QP and built the record; the firmware sends the Terminate): bit 31
    /// valid, bits 15:0 the cause (`terminate::TerminateCause::to_bits`).
    pub const TERM_STATUS: u32 = 0x070;
    /// Terminate request head: connection index.
    pub const TERM_CONN: u32 = 0x074;
    /// Terminate request head: QP number.
    pub const TERM_QPN: u32 = 0x078;
    /// Terminate request head: the echoed DDP segment length (RFC 5040
    /// §4.8; 0 when nothing is echoed, e.g. an LLP error).
    pub const TERM_SEG_LEN: u32 = 0x07C;
    /// Write 1: pop the Terminate request head.
    pub const TERM_POP: u32 = 0x080;
    // 0x084..=0x090: reserved. They held a one-deep latch of incoming
    // Terminates, a second copy of what the exception queue's `TerminateRx`
    // entry carries losslessly; the firmware takes it from there only.
    /// Terminate request head: the erroneous segment's first
    /// [`TERM_HDR_LEN`] octets (DDP header, then an RDMAP Read Request
    /// header if any), little-endian words; zero for an LLP error.
    pub const TERM_HDR: u32 = 0x0C0;
    /// Octets in the `TERM_HDR` window.
    pub const TERM_HDR_LEN: usize = 48;

    /// Write a connection index (< 256): the device re-sends, in order,
    /// every data FPDU of that connection it has logged and not seen
    /// wholly acknowledged (go-back-N from SND.UNA, RFC 9293 §3.8.1 / RFC
    /// 6298 §5), re-reading the payload from host memory. A write while a
    /// replay is pending or running is ignored and counted in
    /// [`RETX_BUSY`]; one with nothing logged sends nothing
    /// ([`RETX_EMPTY`]). Only RDMA-mode data FPDUs are logged: the firmware
    /// retransmits its own frames (Terminate, FIN) itself.
    pub const RETX_CONN: u32 = 0x094;
    /// Replay status (RO): bit 0 busy (a `RETX_CONN` replay pending or
    /// running), bits 31:16 FPDU log entries in use.
    pub const RETX_STATUS: u32 = 0x098;
    /// FPDUs re-sent by replays (RO, wraps).
    pub const RETX_COUNT: u32 = 0x09C;
    /// Clocks the FPDU log was full, TX held (RO, wraps).
    pub const RETX_FULL: u32 = 0x0A0;
    /// `RETX_CONN` writes that found nothing to re-send (RO, wraps).
    pub const RETX_EMPTY: u32 = 0x0A4;
    /// `RETX_CONN` writes ignored while busy (RO, wraps).
    pub const RETX_BUSY: u32 = 0x0A8;
    /// FPDUs dropped from a full log (RO, wraps): only when the device
    /// does not enforce the peer's window (core input `tx_wnd_en` = 0, a
    /// test mode for peers that never ACK); otherwise a full log holds TX
    /// and this stays 0.
    pub const RETX_LOST: u32 = 0x0AC;
    /// `RETX_STATUS` bit 0: a replay is pending or running.
    pub const RETX_STATUS_BUSY: u32 = 1;

    const _: () = assert!(RETX_LOST < TERM_HDR);

    const _: () = assert!(TERM_HDR + TERM_HDR_LEN as u32 <= TABLE_DATA);
    const _: () = assert!(TABLE_DATA + super::MAX_ENTRY_SIZE as u32 <= EVENT_DATA);
    const _: () = assert!(EVENT_DATA + 64 <= MBOX_DATA);
    const _: () = assert!(MBOX_DATA + 0x400 <= EXC_DATA);
    const _: () = assert!(EXC_DATA + FRAME_WINDOW <= TX_DATA);
    const _: () = assert!(TX_DATA + FRAME_WINDOW <= SIZE);

    /// The core profile's limits (RO): connection-table entries. The
    /// firmware must not use more connections, QPs, CQs, TPT or page-list
    /// entries than these, nor an MTU above [`LIM_MTU`] (a board core is
    /// smaller than the co-simulation core).
    pub const LIM_CONN: u32 = 0x0B0;
    /// QP-table entries (RO).
    pub const LIM_QP: u32 = 0x0B4;
    /// CQ-table entries (RO).
    pub const LIM_CQ: u32 = 0x0B8;
    /// TPT entries (RO).
    pub const LIM_TPT: u32 = 0x0BC;
    /// Page-list entries (RO).
    pub const LIM_PBL: u32 = 0x02C;
    /// The largest MTU (IPv4 packet octets) the core's frame buffers take
    /// (RO); longer received frames are dropped as oversize.
    pub const LIM_MTU: u32 = 0x048;

    const _: () = assert!(RETX_LOST < LIM_CONN && LIM_TPT < TERM_HDR);
    const _: () = assert!(CLOCK_KHZ < LIM_PBL && LIM_PBL < MBOX_CMD);
    const _: () = assert!(FLUSH_QP < LIM_MTU && LIM_MTU < CFG_MAC_LO);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::mailbox::QpState;

    #[test]
    fn conn_round_trip() {
        let c = ConnContext {
            mode: ConnMode::Rdma,
            mpa_flags: MPA_CRC_TX | MPA_MARKERS_RX,
            snd_wscale: 7,
            rcv_wscale: 7,
            local_ip: 0x0A00_0001,
            peer_ip: 0x0A00_0002,
            local_port: 7174,
            peer_port: 40000,
            local_mac: [2, 0, 0, 0, 0, 1],
            peer_mac: [2, 0, 0, 0, 0, 2],
            mss: 1460,
            mulpdu: 1440,
            rcv_nxt: 1,
            snd_nxt: 2,
            snd_una: 3,
            snd_wnd: 65535 << 7,
            rcv_wnd: 1 << 20,
            tx_marker_ref: 4,
            rx_marker_ref: 5,
            qpn: 9,
        };
        let mut b = [0u8; CONN_CTX_SIZE];
        c.emit(&mut b).unwrap();
        assert_eq!(ConnContext::parse(&b).unwrap(), c);
        assert_eq!(b[C_PEER_MAC + 5], 2);
        b[C_MODE] = 9;
        assert_eq!(ConnContext::parse(&b), Err(Error::BadField));
        assert_eq!(ConnContext::parse(&b[..63]), Err(Error::Truncated));
    }

    #[test]
    fn qp_and_cq_round_trip() {
        let q = QpContext {
            state: QpState::Rts,
            flags: QP_FLAG_RTR_RX,
            rtr: RtrKind::Write,
            sq_log2: 6,
            pd: 3,
            send_cqn: 1,
            recv_cqn: 2,
            sq_ring: 0x1000,
            rq_ring: 0x2000,
            rq_log2: 7,
            conn: 4,
            ird: 16,
            ord: 8,
            tx_send_msn: 1,
            tx_read_msn: 1,
            rx_send_msn: 1,
            rx_read_msn: 1,
            term_cause: super::super::cqe::TERM_CAUSE_PRESENT | 0x1203,
        };
        let mut b = [0xAAu8; QP_CTX_SIZE];
        q.emit(&mut b).unwrap();
        assert_eq!(QpContext::parse(&b).unwrap(), q);
        let c = CqContext {
            state: CqState::Valid,
            log2_entries: 8,
            ring: 0xDEAD_0000,
            producer: 5,
            consumer: 3,
            armed: 1,
        };
        let mut b = [0u8; CQ_CTX_SIZE];
        c.emit(&mut b).unwrap();
        assert_eq!(CqContext::parse(&b).unwrap(), c);
        for t in 0..5u8 {
            let id = TableId::from_u8(t).unwrap();
            assert!(id.entry_size() <= MAX_ENTRY_SIZE);
        }
    }
}
