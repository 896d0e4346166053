//! The QP state machine (RDMAC verbs: Idle, RTS, Closing, Terminate, Error).
//!
//! ```text
//!   Idle ──connected──► Rts ──close (ours or the peer's FIN)──► Closing ──closed──► Idle
//!    ▲                   │ └─Terminate in/out──► Terminate ──stream closed──► Error
//!    │                   └──RST, timeout, host Error──────────────────────────► Error
//!    └────────────────────── host ModifyQp(Idle) from Error (no connection) ◄──┘
//! ```
//! Every entry into Error writes the QP context (the device stops the QP:
//! no receive WQE fetch, no placement) and then strobes
//! [`crate::hal::Hal::flush_qp`] (`FLUSH_QP`, no consumer in the RTL). The
//! outstanding send and receive WRs are completed with
//! `WcStatus::WrFlushError` by the host driver when it learns of the error
//! (the mailbox answer to ModifyQp/DestroyQp, or the QpError /
//! ConnectionLost event): docs/driver.md "QP error flush". The transition
//! function is pure ([`next_state`]); [`QpTable`] applies it and keeps the
//! device's QP context in step.

use crate::hal::{Hal, HalExt};
use rnic_wire::abi::context::{QpContext, RtrKind, NO_CONN, QP_FLAG_RTR_RX, QP_FLAG_RTR_TX};
use rnic_wire::abi::mailbox::QpState;

/// What happens to a QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpEvent {
    /// The host asks for a state (ModifyQp).
    Modify(QpState),
    /// The connection reached RDMA mode.
    Connected,
    /// A graceful close started (our Disconnect or the peer's FIN).
    CloseStarted,
    /// The TCP stream closed gracefully.
    Closed,
    /// A Terminate was received or sent.
    Terminate,
    /// The connection was reset, timed out or failed.
    Lost,
}

/// The state after `ev` in `cur`, or `None` if the event is not allowed
/// (the host gets `BadState`). Events from the network are always allowed
/// and at worst leave the state as it is.
pub fn next_state(cur: QpState, ev: QpEvent) -> Option<QpState> {
    use QpEvent as E;
    use QpState as S;
    Some(match (cur, ev) {
        (_, E::Modify(S::Error)) => S::Error,
        (S::Idle, E::Modify(S::Idle)) => S::Idle,
        (S::Idle, E::Connected) => S::Rts,
        (S::Idle, E::Lost | E::Closed | E::CloseStarted | E::Terminate) => S::Idle,
        (S::Rts, E::Modify(S::Rts)) => S::Rts,
        (S::Rts, E::Modify(S::Closing) | E::CloseStarted) => S::Closing,
        (S::Rts, E::Modify(S::Terminate) | E::Terminate) => S::Terminate,
        (S::Rts, E::Lost) => S::Error,
        (S::Rts, E::Closed) => S::Idle,
        (S::Closing, E::Modify(S::Closing) | E::CloseStarted) => S::Closing,
        (S::Closing, E::Closed) => S::Idle,
        (S::Closing, E::Lost | E::Terminate) => S::Error,
        (S::Terminate, E::Modify(S::Terminate)) => S::Terminate,
        (S::Terminate, E::Terminate | E::CloseStarted) => S::Terminate,
        (S::Terminate, E::Closed | E::Lost) => S::Error,
        (S::Error, E::Modify(S::Idle)) => S::Idle,
        (S::Error, E::Modify(_)) => return None,
        (S::Error, _) => S::Error,
        (_, E::Modify(_)) => return None,
        (_, E::Connected) => return None,
    })
}

/// A QP as the firmware keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qp {
    /// State.
    pub state: QpState,
    /// Protection domain.
    pub pd: u32,
    /// Send CQ.
    pub send_cqn: u32,
    /// Receive CQ.
    pub recv_cqn: u32,
    /// Send ring.
    pub sq_ring: u64,
    /// log2 of send ring entries.
    pub sq_log2: u8,
    /// Receive ring.
    pub rq_ring: u64,
    /// log2 of receive ring entries.
    pub rq_log2: u8,
    /// Connection slot, if bound.
    pub conn: Option<u32>,
    /// Agreed IRD.
    pub ird: u16,
    /// Agreed ORD.
    pub ord: u16,
    /// RTR message and direction flags (`QP_FLAG_*`).
    pub rtr: RtrKind,
    /// `QP_FLAG_*`.
    pub flags: u8,
}

impl Qp {
    /// The device context for this QP. MSNs start at 1 (RFC 5040 §5.1),
    /// but on the queue an RTR message used (RFC 6581 §3.2, taken or sent
    /// by the firmware before RDMA mode: [`crate::rtr`]): a Send RTR was
    /// message 1 on QN 0, a Read RTR message 1 on QN 1.
    pub fn context(&self) -> QpContext {
        let tx = self.flags & QP_FLAG_RTR_TX != 0;
        let rx = self.flags & QP_FLAG_RTR_RX != 0;
        let after = |dir: bool, kind: RtrKind| 1 + (dir && self.rtr == kind) as u32;
        QpContext {
            state: self.state,
            flags: self.flags,
            rtr: self.rtr,
            sq_log2: self.sq_log2,
            pd: self.pd,
            send_cqn: self.send_cqn,
            recv_cqn: self.recv_cqn,
            sq_ring: self.sq_ring,
            rq_ring: self.rq_ring,
            rq_log2: self.rq_log2,
            conn: self.conn.unwrap_or(NO_CONN),
            ird: self.ird,
            ord: self.ord,
            tx_send_msn: after(tx, RtrKind::Send),
            tx_read_msn: after(tx, RtrKind::Read),
            rx_send_msn: after(rx, RtrKind::Send),
            rx_read_msn: after(rx, RtrKind::Read),
            term_cause: 0,
        }
    }
}

/// The QPs, `N` of them (QP numbers `0..N`).
#[derive(Debug)]
pub struct QpTable<const N: usize> {
    qps: [Option<Qp>; N],
}

impl<const N: usize> Default for QpTable<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> QpTable<N> {
    /// No QPs.
    pub const fn new() -> Self {
        QpTable { qps: [None; N] }
    }

    /// No QP, in place (see `Filter::reset`).
    pub fn clear(&mut self) {
        self.qps.iter_mut().for_each(|q| *q = None);
    }

    /// QP `qpn`.
    pub fn get(&self, qpn: u32) -> Option<&Qp> {
        self.qps.get(qpn as usize)?.as_ref()
    }

    /// QP `qpn`, mutable.
    pub fn get_mut(&mut self, qpn: u32) -> Option<&mut Qp> {
        self.qps.get_mut(qpn as usize)?.as_mut()
    }

    /// Every QP with its number.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &Qp)> {
        self.qps
            .iter()
            .enumerate()
            .filter_map(|(i, q)| q.as_ref().map(|q| (i as u32, q)))
    }

    /// Adds a QP in Idle; returns its number.
    pub fn create<H: Hal>(&mut self, hal: &mut H, qp: Qp) -> Option<u32> {
        let i = self.qps.iter().position(Option::is_none)?;
        let q = Qp {
            state: QpState::Idle,
            conn: None,
            ..qp
        };
        hal.write_qp(i as u32, &q.context()).ok()?;
        self.qps[i] = Some(q);
        Some(i as u32)
    }

    /// Removes a QP (the caller has closed its connection); flushes it.
    pub fn destroy<H: Hal>(&mut self, hal: &mut H, qpn: u32) -> bool {
        let Some(slot) = self.qps.get_mut(qpn as usize) else {
            return false;
        };
        let Some(mut q) = slot.take() else {
            return false;
        };
        q.state = QpState::Error;
        q.conn = None;
        let _ = hal.write_qp(qpn, &q.context());
        let _ = hal.flush_qp(qpn);
        true
    }

    /// Applies `ev` to QP `qpn`: writes the context if the state changed and
    /// flushes on entry into Error. Returns the new state, or `None` if the
    /// QP does not exist or the event is not allowed.
    pub fn apply<H: Hal>(&mut self, hal: &mut H, qpn: u32, ev: QpEvent) -> Option<QpState> {
        let q = self.qps.get_mut(qpn as usize)?.as_mut()?;
        let new = next_state(q.state, ev)?;
        let old = q.state;
        q.state = new;
        if new == QpState::Idle && old != QpState::Idle {
            q.conn = None;
            q.flags = 0;
            q.rtr = RtrKind::None;
        }
        if matches!(ev, QpEvent::Connected) || old == QpState::Idle || new == QpState::Idle {
            // A fresh context (MSNs from 1).
            let _ = hal.write_qp(qpn, &q.context());
        } else if new != old {
            // Keep what the device maintains (MSNs, Terminate cause).
            let mut ctx = hal.read_qp(qpn).unwrap_or_else(|_| q.context());
            ctx.state = new;
            let _ = hal.write_qp(qpn, &ctx);
        }
        if new == QpState::Error && old != QpState::Error {
            let _ = hal.flush_qp(qpn);
        }
        Some(new)
    }
}
