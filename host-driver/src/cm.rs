//! Connection manager: listen, connect, accept, reject (with MPA private
//! data, RFC 5044 §7.1, at most 512 octets), disconnect, and the events
//! that report how it went; connection filter rules and route updates.
//! All of it goes through the mailbox and the event queue (control path).
//!
//! Private data does not fit an event entry: the entry gives its length and
//! [`Context::get_cm_event`] reads it with `GetEventData` (for a connect
//! request by its `conn_id`; for the active side's `Established`/`Rejected`
//! by the connection id the firmware puts in the event's `status`).

use crate::bus::Bus;
use crate::context::{lock, Context};
use crate::error::{DeviceError, Error, InputError, Result};
use crate::qp::Qp;
use core::time::Duration;
use rnic_wire::abi::mailbox::{
    Command, Event, EventKind, FilterAction, FilterRule, MpaOptions, Opcode, QpState,
    PRIVATE_DATA_MAX,
};
use std::collections::VecDeque;
use std::net::Ipv4Addr;

/// Connection events kept for the application at most; older ones are
/// dropped (and counted) when it does not collect them.
pub const CM_QUEUE_MAX: usize = 1024;

/// Events waiting for [`Context::get_cm_event`].
#[derive(Debug, Default)]
pub(crate) struct CmQueue {
    q: VecDeque<Event>,
    dropped: u64,
}

impl CmQueue {
    pub(crate) fn push(&mut self, ev: Event) {
        if self.q.len() == CM_QUEUE_MAX {
            self.q.pop_front();
            self.dropped += 1;
        }
        self.q.push_back(ev);
    }
}

/// A connection manager event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmEvent {
    /// What happened.
    pub kind: EventKind,
    /// conn_id (`ConnectRequest`), cqn (`CqOverflow`) or qpn (the rest).
    pub handle: u32,
    /// Kind-specific status: the Terminate cause for `QpError`, the
    /// connection id for the active side's events.
    pub status: u32,
    /// Peer address.
    pub peer_ip: Ipv4Addr,
    /// Peer TCP port.
    pub peer_port: u16,
    /// Local TCP port.
    pub local_port: u16,
    /// The peer's IRD (RFC 6581).
    pub ird: u16,
    /// The peer's ORD (RFC 6581).
    pub ord: u16,
    /// MPA revision.
    pub mpa_revision: u8,
    /// CRC in use.
    pub crc: bool,
    /// Markers requested.
    pub markers: bool,
    /// The listener (`ConnectRequest`).
    pub listen_id: u32,
    /// The peer's private data.
    pub private_data: Vec<u8>,
}

/// What `connect` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectParams {
    /// Peer address.
    pub peer_ip: Ipv4Addr,
    /// Peer port (not 0).
    pub peer_port: u16,
    /// Local port (0: any).
    pub local_port: u16,
    /// Inbound RDMA Read Requests we accept at once (RFC 6581 IRD).
    pub ird: u16,
    /// Outbound RDMA Read Requests we may have outstanding (RFC 6581 ORD).
    pub ord: u16,
    /// MPA options (RFC 5044 §7.1).
    pub mpa: MpaOptions,
}

/// A listening TCP port; dropping it stops listening.
pub struct Listener<'a, B: Bus> {
    ctx: &'a Context<B>,
    id: u32,
    port: u16,
}

fn check_private_data(pd: &[u8]) -> Result<()> {
    if pd.len() > PRIVATE_DATA_MAX {
        return Err(InputError::PrivateDataTooLong(pd.len()).into());
    }
    Ok(())
}

impl<B: Bus> Context<B> {
    /// Listens on `port` with at most `backlog` pending requests.
    pub fn listen(&self, port: u16, backlog: u16) -> Result<Listener<'_, B>> {
        if port == 0 {
            return Err(InputError::Port.into());
        }
        let r = self.command_words(&Command::Listen { port, backlog }, 1)?;
        Ok(Listener {
            ctx: self,
            id: r.words[0],
            port,
        })
    }

    /// Waits up to `timeout` for the next connection event.
    pub fn get_cm_event(&self, timeout: Duration) -> Result<CmEvent> {
        let deadline = self.deadline(timeout);
        loop {
            self.process_events()?;
            let next = lock(&self.cm).q.pop_front();
            if let Some(ev) = next {
                return self.cm_event(ev);
            }
            self.wait_until(deadline)?;
        }
    }

    /// Connection events dropped because the queue was full.
    pub fn cm_events_dropped(&self) -> u64 {
        lock(&self.cm).dropped
    }

    fn cm_event(&self, ev: Event) -> Result<CmEvent> {
        let conn_id = match ev.kind {
            EventKind::ConnectRequest => Some(ev.handle),
            EventKind::Established | EventKind::Rejected => Some(ev.status),
            _ => None,
        };
        let mut private_data = Vec::new();
        if let (Some(conn_id), n @ 1..) = (conn_id, ev.private_data_len as usize) {
            if n > PRIVATE_DATA_MAX {
                return Err(DeviceError::EventFormat.into());
            }
            let mut buf = [0u8; PRIVATE_DATA_MAX];
            let got = self.command(&Command::GetEventData { conn_id }, &mut buf[..n])?;
            if got != n {
                return Err(DeviceError::MailboxLength(got as u32).into());
            }
            private_data.extend_from_slice(&buf[..n]);
        }
        Ok(CmEvent {
            kind: ev.kind,
            handle: ev.handle,
            status: ev.status,
            peer_ip: Ipv4Addr::from(ev.peer_ip),
            peer_port: ev.peer_port,
            local_port: ev.local_port,
            ird: ev.ird,
            ord: ev.ord,
            mpa_revision: ev.mpa_revision,
            crc: ev.crc,
            markers: ev.markers,
            listen_id: ev.listen_id,
            private_data,
        })
    }

    /// Accepts connect request `conn_id` onto `qp` (Idle), answering with
    /// `private_data`; `Established` follows for the QP.
    pub fn accept(
        &self,
        conn_id: u32,
        qp: &Qp<'_, B>,
        ird: u16,
        ord: u16,
        private_data: &[u8],
    ) -> Result<()> {
        check_private_data(private_data)?;
        if !core::ptr::eq(qp.ctx(), self) {
            return Err(InputError::Mismatch.into());
        }
        if qp.state() != QpState::Idle {
            return Err(Error::WrongState(qp.state()));
        }
        self.command(
            &Command::Accept {
                conn_id,
                qpn: qp.qpn(),
                ird,
                ord,
                private_data,
            },
            &mut [],
        )
        .map(|_| ())
    }

    /// Rejects connect request `conn_id` (MPA reply with the Rejected bit,
    /// RFC 5044 §7.1.1) with `private_data`.
    pub fn reject(&self, conn_id: u32, private_data: &[u8]) -> Result<()> {
        check_private_data(private_data)?;
        self.command(
            &Command::Reject {
                conn_id,
                private_data,
            },
            &mut [],
        )
        .map(|_| ())
    }

    /// Sets connection filter rule `index` (tried in index order).
    pub fn filter_set(&self, index: u16, rule: FilterRule) -> Result<()> {
        if rule.prefix_len > 32
            || rule.local_ports.0 > rule.local_ports.1
            || rule.peer_ports.0 > rule.peer_ports.1
        {
            return Err(InputError::FilterRule.into());
        }
        self.command(&Command::FilterSet { index, rule }, &mut [])
            .map(|_| ())
    }

    /// Removes every filter rule.
    pub fn filter_clear(&self) -> Result<()> {
        self.command(&Command::FilterClear, &mut []).map(|_| ())
    }

    /// Sets what happens to connections no rule matches.
    pub fn filter_default(&self, action: FilterAction) -> Result<()> {
        self.command(&Command::FilterDefault { action }, &mut [])
            .map(|_| ())
    }

    /// Hits of filter rule `index`.
    pub fn filter_stats(&self, index: u16) -> Result<u64> {
        let r = self.command_words(&Command::FilterStats { index }, 2)?;
        Ok(r.words[0] as u64 | (r.words[1] as u64) << 32)
    }

    /// Tells the device that next hop `ip` is now at `mac`; returns how many
    /// connections were moved.
    pub fn route_update(&self, ip: Ipv4Addr, mac: [u8; 6]) -> Result<u32> {
        if ip.is_unspecified() || mac[0] & 1 != 0 {
            return Err(InputError::Route.into());
        }
        let r = self.command_words(
            &Command::RouteUpdate {
                ip: u32::from(ip),
                mac,
            },
            1,
        )?;
        Ok(r.words[0])
    }

    /// Sets the device's retransmission timer of RDMA-mode connections
    /// (RFC 6298; the firmware's default is 1 s initial, 200 ms floor, 60 s
    /// ceiling, 8 retries). New connections start from `timer.initial`;
    /// live ones take the bounds and the retry limit at their next sample.
    /// Each duration is carried in whole µs up to `u32::MAX` µs; they must
    /// satisfy `0 < min <= initial <= max`, and `max_retries >= 1`.
    pub fn set_retx_timer(&self, timer: &RetxTimer) -> Result<()> {
        let us = |d: Duration| u32::try_from(d.as_micros()).ok();
        let (Some(init), Some(min), Some(max)) = (us(timer.initial), us(timer.min), us(timer.max))
        else {
            return Err(InputError::RetxTimer.into());
        };
        if min == 0 || min > init || init > max || timer.max_retries == 0 {
            return Err(InputError::RetxTimer.into());
        }
        self.command(
            &Command::SetRetx {
                rto_init_us: init,
                rto_min_us: min,
                rto_max_us: max,
                max_retries: timer.max_retries,
            },
            &mut [],
        )
        .map(|_| ())
    }
}

/// The retransmission timer of RDMA-mode connections
/// ([`Context::set_retx_timer`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetxTimer {
    /// RTO before the first round-trip measurement (RFC 6298 §2.1).
    pub initial: Duration,
    /// Smallest RTO (RFC 6298 §2.4).
    pub min: Duration,
    /// Largest RTO and backoff (RFC 6298 §2.5).
    pub max: Duration,
    /// Retransmissions without progress before the connection is lost.
    pub max_retries: u8,
}

impl<B: Bus> Qp<'_, B> {
    /// Connects this Idle QP (active side) with `private_data`; returns the
    /// connection id. `Established` or `Rejected`/`Refused`/`Unreachable` follows.
    pub fn connect(&self, p: &ConnectParams, private_data: &[u8]) -> Result<u32> {
        check_private_data(private_data)?;
        if p.peer_port == 0 || p.peer_ip.is_unspecified() {
            return Err(InputError::Port.into());
        }
        if !(1..=2).contains(&p.mpa.revision) {
            return Err(InputError::Encoding.into());
        }
        if self.state() != QpState::Idle {
            return Err(Error::WrongState(self.state()));
        }
        let r = self.ctx().command_words(
            &Command::Connect {
                qpn: self.qpn(),
                peer_ip: u32::from(p.peer_ip),
                peer_port: p.peer_port,
                local_port: p.local_port,
                ird: p.ird,
                ord: p.ord,
                mpa: p.mpa,
                private_data,
            },
            1,
        )?;
        Ok(r.words[0])
    }

    /// Closes the connection: gracefully (FIN after outstanding work) or,
    /// with `abortive`, at once with RST.
    pub fn disconnect(&self, abortive: bool) -> Result<()> {
        self.ctx()
            .command(
                &Command::Disconnect {
                    qpn: self.qpn(),
                    abortive,
                },
                &mut [],
            )
            .map(|_| ())
    }
}

impl<B: Bus> Listener<'_, B> {
    /// The listener id (in `ConnectRequest` events).
    pub fn id(&self) -> u32 {
        self.id
    }
    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl<B: Bus> Drop for Listener<'_, B> {
    fn drop(&mut self) {
        let _ = self
            .ctx
            .command(&Command::Unlisten { listen_id: self.id }, &mut []);
    }
}

/// `Opcode` is part of the error type callers match on.
pub type CmOpcode = Opcode;
