//! The command mailbox (host → firmware) and the event queue (device → host).
//!
//! A command: the host writes its parameters into `MBOX_DATA`, their length
//! into `MBOX_LEN`, then the [`Opcode`] into `MBOX_CTRL`; the firmware sets
//! `MBOX_BUSY` while it works, then writes the result into `MBOX_DATA`/
//! `MBOX_LEN`, the [`MboxStatus`] into `MBOX_STATUS`, bumps `MBOX_SEQ` and
//! clears `MBOX_BUSY` (and raises `INT_MBOX_DONE`). The mailbox is the
//! control path only: posting work and polling completions never use it.
//!
//! Parameters are packed little-endian fields in the order of each
//! [`Command`] variant's fields (see [`Command::emit`]); private data comes
//! last, preceded by its u16 length. Results are a [`CommandResult`].
//!
//! Events ([`Event`]) are 64-octet entries of the event queue (`EQ_*` CSRs) in
//! host memory, with an owner/phase bit in the last octet like CQEs.

use super::le::*;
use super::{check_len, check_out};
use crate::{Error, Result};

/// MPA private data limit (RFC 5044 §7.1: at most 512 octets).
pub const PRIVATE_DATA_MAX: usize = 512;
/// Page-list entries one `WritePbl` command carries (fits `MBOX_DATA`).
pub const PBL_CHUNK_MAX: usize = 120;
/// Size of an event queue entry.
pub const EVENT_SIZE: usize = 64;

/// Command opcodes (written to `MBOX_CTRL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum Opcode {
    /// No operation (checks the mailbox works).
    Nop = 0x00,
    /// Create a completion queue.
    CreateCq = 0x01,
    /// Destroy a completion queue.
    DestroyCq = 0x02,
    /// Reserve a TPT entry and `npages` page-list entries for a new region.
    AllocStag = 0x03,
    /// Write a chunk of a region's page list.
    WritePbl = 0x04,
    /// Make a region valid (after its page list is written).
    RegMr = 0x05,
    /// Invalidate and free a region.
    DeregMr = 0x06,
    /// Create a QP.
    CreateQp = 0x07,
    /// Change a QP's state.
    ModifyQp = 0x08,
    /// Read a QP's state.
    QueryQp = 0x09,
    /// Destroy a QP.
    DestroyQp = 0x0A,
    /// Listen for connections on a TCP port.
    Listen = 0x10,
    /// Stop listening.
    Unlisten = 0x11,
    /// Open a connection (active side) for a QP.
    Connect = 0x12,
    /// Accept a pending connection request onto a QP.
    Accept = 0x13,
    /// Reject a pending connection request.
    Reject = 0x14,
    /// Close a QP's connection (gracefully, or abortively with RST).
    Disconnect = 0x15,
    /// Read the private data that came with a connection event.
    GetEventData = 0x16,
    /// Set one connection filter rule.
    FilterSet = 0x20,
    /// Remove every filter rule.
    FilterClear = 0x21,
    /// Set the action for connections no rule matches.
    FilterDefault = 0x22,
    /// Read a filter rule's hit counter.
    FilterStats = 0x23,
    /// A next hop changed its MAC address (or is reached through another).
    RouteUpdate = 0x30,
    /// Set the retransmission timer of RDMA-mode connections.
    SetRetx = 0x31,
}

impl Opcode {
    /// Decodes an opcode.
    pub fn from_u16(v: u16) -> Result<Self> {
        use Opcode::*;
        Ok(match v {
            0x00 => Nop,
            0x01 => CreateCq,
            0x02 => DestroyCq,
            0x03 => AllocStag,
            0x04 => WritePbl,
            0x05 => RegMr,
            0x06 => DeregMr,
            0x07 => CreateQp,
            0x08 => ModifyQp,
            0x09 => QueryQp,
            0x0A => DestroyQp,
            0x10 => Listen,
            0x11 => Unlisten,
            0x12 => Connect,
            0x13 => Accept,
            0x14 => Reject,
            0x15 => Disconnect,
            0x16 => GetEventData,
            0x20 => FilterSet,
            0x21 => FilterClear,
            0x22 => FilterDefault,
            0x23 => FilterStats,
            0x30 => RouteUpdate,
            0x31 => SetRetx,
            _ => return Err(Error::BadOpcode),
        })
    }
}

/// How a command ended (`MBOX_STATUS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum MboxStatus {
    /// Done.
    Ok = 0,
    /// Unknown opcode.
    BadOpcode = 1,
    /// A parameter is malformed or out of range.
    BadParam = 2,
    /// No free QP, CQ, TPT, page-list, listener or connection slot.
    NoResources = 3,
    /// The object is not in a state that allows this.
    BadState = 4,
    /// No such object.
    NotFound = 5,
    /// A connection filter rule denies this connection.
    Denied = 6,
    /// The next hop did not answer ARP.
    Unreachable = 7,
    /// The object is in use (e.g. a CQ with QPs, a port already listened on).
    Busy = 8,
}

impl MboxStatus {
    /// Decodes a status.
    pub fn from_u32(v: u32) -> Result<Self> {
        Ok(match v {
            0 => MboxStatus::Ok,
            1 => MboxStatus::BadOpcode,
            2 => MboxStatus::BadParam,
            3 => MboxStatus::NoResources,
            4 => MboxStatus::BadState,
            5 => MboxStatus::NotFound,
            6 => MboxStatus::Denied,
            7 => MboxStatus::Unreachable,
            8 => MboxStatus::Busy,
            _ => return Err(Error::BadField),
        })
    }
}

/// iWARP QP states (RDMAC verbs §6: Idle, RTS, Closing, Terminate, Error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum QpState {
    /// Created, not connected; receive WRs may be posted.
    Idle = 0,
    /// Ready to send: the connection is in RDMA mode.
    Rts = 1,
    /// Graceful close in progress.
    Closing = 2,
    /// A Terminate was sent or received; waiting for the stream to close.
    Terminate = 3,
    /// Error: outstanding WRs are flushed.
    Error = 4,
}

impl QpState {
    /// Decodes a state.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => QpState::Idle,
            1 => QpState::Rts,
            2 => QpState::Closing,
            3 => QpState::Terminate,
            4 => QpState::Error,
            _ => return Err(Error::BadField),
        })
    }
}

/// What a filter rule does with a matching connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum FilterAction {
    /// Set the connection up.
    Allow = 0,
    /// Answer the SYN with RST; no connection context is created.
    DenyReset = 1,
    /// Drop the SYN silently; no connection context is created.
    DenyDrop = 2,
}

impl FilterAction {
    /// Decodes an action.
    pub fn from_u8(v: u8) -> Result<Self> {
        Ok(match v {
            0 => FilterAction::Allow,
            1 => FilterAction::DenyReset,
            2 => FilterAction::DenyDrop,
            _ => return Err(Error::BadField),
        })
    }
}

/// A connection filter rule: matches a connection (either direction) whose
/// peer address is in `peer_prefix/prefix_len` and whose ports are in the ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FilterRule {
    /// Peer IPv4 prefix (u32 of the big-endian address).
    pub peer_prefix: u32,
    /// Prefix length, 0..=32.
    pub prefix_len: u8,
    /// Local port range, inclusive.
    pub local_ports: (u16, u16),
    /// Peer port range, inclusive.
    pub peer_ports: (u16, u16),
    /// What to do.
    pub action: FilterAction,
}

impl FilterRule {
    /// Whether the rule matches a connection.
    pub fn matches(&self, peer_ip: u32, local_port: u16, peer_port: u16) -> bool {
        let mask = if self.prefix_len == 0 {
            0
        } else {
            u32::MAX << (32 - self.prefix_len as u32)
        };
        (peer_ip & mask) == (self.peer_prefix & mask)
            && (self.local_ports.0..=self.local_ports.1).contains(&local_port)
            && (self.peer_ports.0..=self.peer_ports.1).contains(&peer_port)
    }
}

/// MPA options a connection asks for (RFC 5044 §7.1, RFC 6581).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MpaOptions {
    /// MPA revision to request: 1 or 2 (2 implies RFC 6581 enhanced setup).
    pub revision: u8,
    /// Ask for CRC32c (used if either side asks, RFC 5044 §7.1).
    pub crc: bool,
    /// Ask for markers toward us.
    pub markers: bool,
}

/// A command, as the host sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command<'a> {
    /// See [`Opcode::Nop`].
    Nop,
    /// A CQ ring of `entries` (power of two) CQEs at bus address `ring`.
    CreateCq { ring: u64, entries: u32 },
    /// See [`Opcode::DestroyCq`].
    DestroyCq { cqn: u32 },
    /// See [`Opcode::AllocStag`]; result: STag and first page-list index.
    AllocStag { pd: u32, npages: u32 },
    /// Page-list entries `offset..offset + addrs.len()` of the region `stag`
    /// (page bus addresses as little-endian u64s).
    WritePbl {
        stag: u32,
        offset: u32,
        addrs: &'a [u8],
    },
    /// See [`Opcode::RegMr`].
    RegMr {
        stag: u32,
        pd: u32,
        access: u8,
        page_shift: u8,
        va: u64,
        length: u64,
    },
    /// See [`Opcode::DeregMr`].
    DeregMr { stag: u32 },
    /// A QP on `pd` with its rings (power-of-two entries) and CQs.
    CreateQp {
        pd: u32,
        send_cqn: u32,
        recv_cqn: u32,
        sq_ring: u64,
        sq_entries: u32,
        rq_ring: u64,
        rq_entries: u32,
    },
    /// See [`Opcode::ModifyQp`].
    ModifyQp { qpn: u32, state: QpState },
    /// See [`Opcode::QueryQp`].
    QueryQp { qpn: u32 },
    /// See [`Opcode::DestroyQp`].
    DestroyQp { qpn: u32 },
    /// Listen on `port` with at most `backlog` pending requests.
    Listen { port: u16, backlog: u16 },
    /// See [`Opcode::Unlisten`].
    Unlisten { listen_id: u32 },
    /// Connect `qpn` to `peer_ip:peer_port` (local port 0: any).
    Connect {
        qpn: u32,
        peer_ip: u32,
        peer_port: u16,
        local_port: u16,
        ird: u16,
        ord: u16,
        mpa: MpaOptions,
        private_data: &'a [u8],
    },
    /// Accept the request `conn_id` onto `qpn`.
    Accept {
        conn_id: u32,
        qpn: u32,
        ird: u16,
        ord: u16,
        private_data: &'a [u8],
    },
    /// Reject the request `conn_id` (MPA reply with the R bit, RFC 5044 §7.1.1).
    Reject {
        conn_id: u32,
        private_data: &'a [u8],
    },
    /// Close `qpn`'s connection; `abortive`: with RST at once.
    Disconnect { qpn: u32, abortive: bool },
    /// Private data of the event about `conn_id`.
    GetEventData { conn_id: u32 },
    /// Set rule `index` (rules are tried in index order).
    FilterSet { index: u16, rule: FilterRule },
    /// See [`Opcode::FilterClear`].
    FilterClear,
    /// See [`Opcode::FilterDefault`].
    FilterDefault { action: FilterAction },
    /// See [`Opcode::FilterStats`].
    FilterStats { index: u16 },
    /// Next hop `ip` is now at `mac`.
    RouteUpdate { ip: u32, mac: [u8; 6] },
    /// The retransmission timer of RDMA-mode connections (RFC 6298): the
    /// RTO before the first round-trip measurement (§2.1), its floor (§2.4)
    /// and ceiling (§2.5), in µs, and the retransmissions without progress
    /// before a connection is lost. Needs `0 < rto_min_us <= rto_init_us
    /// <= rto_max_us` and `max_retries >= 1`.
    SetRetx {
        rto_init_us: u32,
        rto_min_us: u32,
        rto_max_us: u32,
        max_retries: u8,
    },
}

/// Sequential little-endian reader over mailbox data.
struct Rd<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).ok_or(Error::Truncated)?;
        let s = self.b.get(self.at..end).ok_or(Error::Truncated)?;
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16_at(self.take(2)?, 0))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32_at(self.take(4)?, 0))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64_at(self.take(8)?, 0))
    }
    fn bool(&mut self) -> Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(Error::BadField),
        }
    }
    fn private_data(&mut self) -> Result<&'a [u8]> {
        let n = self.u16()? as usize;
        if n > PRIVATE_DATA_MAX {
            return Err(Error::BadLength);
        }
        self.take(n)
    }
    fn mpa(&mut self) -> Result<MpaOptions> {
        let revision = self.u8()?;
        if !(1..=2).contains(&revision) {
            return Err(Error::BadVersion);
        }
        Ok(MpaOptions {
            revision,
            crc: self.bool()?,
            markers: self.bool()?,
        })
    }
    /// All of the data must have been read: trailing octets are an error.
    fn end(&self) -> Result<()> {
        if self.at == self.b.len() {
            Ok(())
        } else {
            Err(Error::BadLength)
        }
    }
}

/// Sequential little-endian writer into mailbox data.
struct Wr<'a> {
    b: &'a mut [u8],
    at: usize,
}

impl Wr<'_> {
    fn put(&mut self, s: &[u8]) -> Result<()> {
        let end = self.at + s.len();
        self.b
            .get_mut(self.at..end)
            .ok_or(Error::BufferTooSmall)?
            .copy_from_slice(s);
        self.at = end;
        Ok(())
    }
    fn u8(&mut self, v: u8) -> Result<()> {
        self.put(&[v])
    }
    fn u16(&mut self, v: u16) -> Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn u32(&mut self, v: u32) -> Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) -> Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn private_data(&mut self, d: &[u8]) -> Result<()> {
        if d.len() > PRIVATE_DATA_MAX {
            return Err(Error::BadLength);
        }
        self.u16(d.len() as u16)?;
        self.put(d)
    }
    fn mpa(&mut self, m: &MpaOptions) -> Result<()> {
        self.u8(m.revision)?;
        self.u8(m.crc as u8)?;
        self.u8(m.markers as u8)
    }
}

impl<'a> Command<'a> {
    /// The command's opcode.
    pub fn opcode(&self) -> Opcode {
        use Command::*;
        match self {
            Nop => Opcode::Nop,
            CreateCq { .. } => Opcode::CreateCq,
            DestroyCq { .. } => Opcode::DestroyCq,
            AllocStag { .. } => Opcode::AllocStag,
            WritePbl { .. } => Opcode::WritePbl,
            RegMr { .. } => Opcode::RegMr,
            DeregMr { .. } => Opcode::DeregMr,
            CreateQp { .. } => Opcode::CreateQp,
            ModifyQp { .. } => Opcode::ModifyQp,
            QueryQp { .. } => Opcode::QueryQp,
            DestroyQp { .. } => Opcode::DestroyQp,
            Listen { .. } => Opcode::Listen,
            Unlisten { .. } => Opcode::Unlisten,
            Connect { .. } => Opcode::Connect,
            Accept { .. } => Opcode::Accept,
            Reject { .. } => Opcode::Reject,
            Disconnect { .. } => Opcode::Disconnect,
            GetEventData { .. } => Opcode::GetEventData,
            FilterSet { .. } => Opcode::FilterSet,
            FilterClear => Opcode::FilterClear,
            FilterDefault { .. } => Opcode::FilterDefault,
            FilterStats { .. } => Opcode::FilterStats,
            RouteUpdate { .. } => Opcode::RouteUpdate,
            SetRetx { .. } => Opcode::SetRetx,
        }
    }

    /// Parses the parameters of `opcode` from `data` (exactly `MBOX_LEN` octets).
    pub fn parse(opcode: Opcode, data: &'a [u8]) -> Result<Self> {
        let mut r = Rd { b: data, at: 0 };
        use Command::*;
        let cmd = match opcode {
            Opcode::Nop => Nop,
            Opcode::CreateCq => CreateCq {
                ring: r.u64()?,
                entries: r.u32()?,
            },
            Opcode::DestroyCq => DestroyCq { cqn: r.u32()? },
            Opcode::AllocStag => AllocStag {
                pd: r.u32()?,
                npages: r.u32()?,
            },
            Opcode::WritePbl => {
                let stag = r.u32()?;
                let offset = r.u32()?;
                let n = r.u16()? as usize;
                if n > PBL_CHUNK_MAX {
                    return Err(Error::BadLength);
                }
                WritePbl {
                    stag,
                    offset,
                    addrs: r.take(n * 8)?,
                }
            }
            Opcode::RegMr => RegMr {
                stag: r.u32()?,
                pd: r.u32()?,
                access: r.u8()?,
                page_shift: r.u8()?,
                va: r.u64()?,
                length: r.u64()?,
            },
            Opcode::DeregMr => DeregMr { stag: r.u32()? },
            Opcode::CreateQp => CreateQp {
                pd: r.u32()?,
                send_cqn: r.u32()?,
                recv_cqn: r.u32()?,
                sq_ring: r.u64()?,
                sq_entries: r.u32()?,
                rq_ring: r.u64()?,
                rq_entries: r.u32()?,
            },
            Opcode::ModifyQp => ModifyQp {
                qpn: r.u32()?,
                state: QpState::from_u8(r.u8()?)?,
            },
            Opcode::QueryQp => QueryQp { qpn: r.u32()? },
            Opcode::DestroyQp => DestroyQp { qpn: r.u32()? },
            Opcode::Listen => Listen {
                port: r.u16()?,
                backlog: r.u16()?,
            },
            Opcode::Unlisten => Unlisten {
                listen_id: r.u32()?,
            },
            Opcode::Connect => Connect {
                qpn: r.u32()?,
                peer_ip: r.u32()?,
                peer_port: r.u16()?,
                local_port: r.u16()?,
                ird: r.u16()?,
                ord: r.u16()?,
                mpa: r.mpa()?,
                private_data: r.private_data()?,
            },
            Opcode::Accept => Accept {
                conn_id: r.u32()?,
                qpn: r.u32()?,
                ird: r.u16()?,
                ord: r.u16()?,
                private_data: r.private_data()?,
            },
            Opcode::Reject => Reject {
                conn_id: r.u32()?,
                private_data: r.private_data()?,
            },
            Opcode::Disconnect => Disconnect {
                qpn: r.u32()?,
                abortive: r.bool()?,
            },
            Opcode::GetEventData => GetEventData { conn_id: r.u32()? },
            Opcode::FilterSet => {
                let index = r.u16()?;
                let peer_prefix = r.u32()?;
                let prefix_len = r.u8()?;
                if prefix_len > 32 {
                    return Err(Error::BadField);
                }
                let local_ports = (r.u16()?, r.u16()?);
                let peer_ports = (r.u16()?, r.u16()?);
                let action = FilterAction::from_u8(r.u8()?)?;
                FilterSet {
                    index,
                    rule: FilterRule {
                        peer_prefix,
                        prefix_len,
                        local_ports,
                        peer_ports,
                        action,
                    },
                }
            }
            Opcode::FilterClear => FilterClear,
            Opcode::FilterDefault => FilterDefault {
                action: FilterAction::from_u8(r.u8()?)?,
            },
            Opcode::FilterStats => FilterStats { index: r.u16()? },
            Opcode::RouteUpdate => {
                let ip = r.u32()?;
                let mut mac = [0u8; 6];
                mac.copy_from_slice(r.take(6)?);
                RouteUpdate { ip, mac }
            }
            Opcode::SetRetx => SetRetx {
                rto_init_us: r.u32()?,
                rto_min_us: r.u32()?,
                rto_max_us: r.u32()?,
                max_retries: r.u8()?,
            },
        };
        r.end()?;
        Ok(cmd)
    }

    /// Writes the parameters into `data`; returns their length (for `MBOX_LEN`).
    pub fn emit(&self, data: &mut [u8]) -> Result<usize> {
        let mut w = Wr { b: data, at: 0 };
        use Command::*;
        match *self {
            Nop | FilterClear => {}
            CreateCq { ring, entries } => {
                w.u64(ring)?;
                w.u32(entries)?;
            }
            DestroyCq { cqn: x }
            | DeregMr { stag: x }
            | QueryQp { qpn: x }
            | DestroyQp { qpn: x }
            | Unlisten { listen_id: x }
            | GetEventData { conn_id: x } => w.u32(x)?,
            AllocStag { pd, npages } => {
                w.u32(pd)?;
                w.u32(npages)?;
            }
            WritePbl {
                stag,
                offset,
                addrs,
            } => {
                if addrs.len() % 8 != 0 || addrs.len() / 8 > PBL_CHUNK_MAX {
                    return Err(Error::BadLength);
                }
                w.u32(stag)?;
                w.u32(offset)?;
                w.u16((addrs.len() / 8) as u16)?;
                w.put(addrs)?;
            }
            RegMr {
                stag,
                pd,
                access,
                page_shift,
                va,
                length,
            } => {
                w.u32(stag)?;
                w.u32(pd)?;
                w.u8(access)?;
                w.u8(page_shift)?;
                w.u64(va)?;
                w.u64(length)?;
            }
            CreateQp {
                pd,
                send_cqn,
                recv_cqn,
                sq_ring,
                sq_entries,
                rq_ring,
                rq_entries,
            } => {
                w.u32(pd)?;
                w.u32(send_cqn)?;
                w.u32(recv_cqn)?;
                w.u64(sq_ring)?;
                w.u32(sq_entries)?;
                w.u64(rq_ring)?;
                w.u32(rq_entries)?;
            }
            ModifyQp { qpn, state } => {
                w.u32(qpn)?;
                w.u8(state as u8)?;
            }
            Listen { port, backlog } => {
                w.u16(port)?;
                w.u16(backlog)?;
            }
            Connect {
                qpn,
                peer_ip,
                peer_port,
                local_port,
                ird,
                ord,
                ref mpa,
                private_data,
            } => {
                w.u32(qpn)?;
                w.u32(peer_ip)?;
                w.u16(peer_port)?;
                w.u16(local_port)?;
                w.u16(ird)?;
                w.u16(ord)?;
                w.mpa(mpa)?;
                w.private_data(private_data)?;
            }
            Accept {
                conn_id,
                qpn,
                ird,
                ord,
                private_data,
            } => {
                w.u32(conn_id)?;
                w.u32(qpn)?;
                w.u16(ird)?;
                w.u16(ord)?;
                w.private_data(private_data)?;
            }
            Reject {
                conn_id,
                private_data,
            } => {
                w.u32(conn_id)?;
                w.private_data(private_data)?;
            }
            Disconnect { qpn, abortive } => {
                w.u32(qpn)?;
                w.u8(abortive as u8)?;
            }
            FilterSet { index, rule } => {
                w.u16(index)?;
                w.u32(rule.peer_prefix)?;
                w.u8(rule.prefix_len)?;
                w.u16(rule.local_ports.0)?;
                w.u16(rule.local_ports.1)?;
                w.u16(rule.peer_ports.0)?;
                w.u16(rule.peer_ports.1)?;
                w.u8(rule.action as u8)?;
            }
            FilterDefault { action } => w.u8(action as u8)?,
            FilterStats { index } => w.u16(index)?,
            RouteUpdate { ip, mac } => {
                w.u32(ip)?;
                w.put(&mac)?;
            }
            SetRetx {
                rto_init_us,
                rto_min_us,
                rto_max_us,
                max_retries,
            } => {
                w.u32(rto_init_us)?;
                w.u32(rto_min_us)?;
                w.u32(rto_max_us)?;
                w.u8(max_retries)?;
            }
        }
        Ok(w.at)
    }
}

/// A command's result, written back into `MBOX_DATA` (as up to four u32
/// words, little-endian; which words mean what depends on the command):
/// `CreateCq` → cqn; `AllocStag` → stag, pbl_base; `CreateQp` → qpn;
/// `QueryQp` → state; `Listen` → listen_id; `FilterStats` → hits (u64 in
/// words 0–1); `GetEventData` → private data (length in `MBOX_LEN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommandResult {
    /// Result words.
    pub words: [u32; 4],
}

impl CommandResult {
    /// Largest result in words.
    pub const MAX_WORDS: usize = 4;

    /// Parses a result of `data.len()` octets (`MBOX_LEN`): a whole number
    /// of u32 words, at most [`Self::MAX_WORDS`]; missing words read as 0.
    pub fn parse(data: &[u8]) -> Result<Self> {
        if !data.len().is_multiple_of(4) || data.len() > 4 * Self::MAX_WORDS {
            return Err(Error::BadLength);
        }
        let mut words = [0u32; 4];
        for (k, w) in data.chunks_exact(4).enumerate() {
            words[k] = u32_at(w, 0);
        }
        Ok(CommandResult { words })
    }

    /// Writes the first `n` words into `out`; returns their length in octets
    /// (for `MBOX_LEN`).
    pub fn emit(&self, n: usize, out: &mut [u8]) -> Result<usize> {
        if n > Self::MAX_WORDS {
            return Err(Error::BadLength);
        }
        check_out(out, 4 * n)?;
        for k in 0..n {
            put_u32(out, 4 * k, self.words[k]);
        }
        Ok(4 * n)
    }
}

/// Event queue entry kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum EventKind {
    /// An armed CQ (`handle` = cqn) got a completion.
    CqCompletion = 1,
    /// A peer asks to connect (`handle` = conn_id for Accept/Reject).
    ConnectRequest = 2,
    /// A QP's connection is in RDMA mode (`handle` = qpn).
    Established = 3,
    /// The peer rejected our MPA request (`handle` = qpn).
    Rejected = 4,
    /// A QP's connection closed gracefully (`handle` = qpn).
    Closed = 5,
    /// The connection was reset or timed out (`handle` = qpn).
    ConnectionLost = 6,
    /// The peer could not be reached: ARP or SYN retries ran out (`handle` = qpn).
    Unreachable = 7,
    /// A QP moved to Terminate or Error (`handle` = qpn; `status` = terminate cause).
    QpError = 8,
    /// A CQ overflowed (`handle` = cqn).
    CqOverflow = 9,
    /// The peer refused our connection: it answered our SYN with a RST
    /// (RFC 9293 §3.10.7.3, SYN-SENT: "connection reset"), e.g. nothing
    /// listens on the port or a filter denies it (`handle` = qpn).
    Refused = 10,
}

impl EventKind {
    /// Decodes an event kind.
    pub fn from_u8(v: u8) -> Result<Self> {
        use EventKind::*;
        Ok(match v {
            1 => CqCompletion,
            2 => ConnectRequest,
            3 => Established,
            4 => Rejected,
            5 => Closed,
            6 => ConnectionLost,
            7 => Unreachable,
            8 => QpError,
            9 => CqOverflow,
            10 => Refused,
            _ => return Err(Error::BadOpcode),
        })
    }
}

/// An event queue entry.
///
/// ```text
///  0 kind u8 | 1 mpa_revision u8 | 2 flags u8 (bit0 crc, bit1 markers) | 3 reserved
///  4 handle u32 | 8 status u32 | 12 peer_ip u32 | 16 peer_port u16 | 18 local_port u16
/// 20 ird u16 | 22 ord u16 | 24 private_data_len u16 | 26 reserved u16 | 28 listen_id u32
/// 32..63 reserved | 63 owner (bit 0: phase)
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Event {
    /// What happened.
    pub kind: EventKind,
    /// cqn, conn_id or qpn, per `kind`.
    pub handle: u32,
    /// Kind-specific status (terminate cause for `QpError`).
    pub status: u32,
    /// Peer IPv4 address (connection events).
    pub peer_ip: u32,
    /// Peer TCP port.
    pub peer_port: u16,
    /// Local TCP port.
    pub local_port: u16,
    /// The peer's IRD (RFC 6581), connection events.
    pub ird: u16,
    /// The peer's ORD.
    pub ord: u16,
    /// Octets of private data, read with `GetEventData`.
    pub private_data_len: u16,
    /// MPA revision negotiated or requested.
    pub mpa_revision: u8,
    /// CRC in use.
    pub crc: bool,
    /// Markers requested.
    pub markers: bool,
    /// The listener that got a `ConnectRequest`.
    pub listen_id: u32,
    /// Owner/phase bit.
    pub phase: bool,
}

impl Event {
    /// Size in octets.
    pub const SIZE: usize = EVENT_SIZE;
    /// Offset of the owner octet (written last).
    pub const OFF_OWNER: usize = EVENT_SIZE - 1;

    /// Parses an entry.
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, EVENT_SIZE)?;
        if b[2] & !3 != 0 {
            return Err(Error::BadField);
        }
        Ok(Event {
            kind: EventKind::from_u8(b[0])?,
            mpa_revision: b[1],
            crc: b[2] & 1 != 0,
            markers: b[2] & 2 != 0,
            handle: u32_at(b, 4),
            status: u32_at(b, 8),
            peer_ip: u32_at(b, 12),
            peer_port: u16_at(b, 16),
            local_port: u16_at(b, 18),
            ird: u16_at(b, 20),
            ord: u16_at(b, 22),
            private_data_len: u16_at(b, 24),
            listen_id: u32_at(b, 28),
            phase: b[Self::OFF_OWNER] & 1 != 0,
        })
    }

    /// Writes the entry into `b[..EVENT_SIZE]`.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, EVENT_SIZE)?;
        let b = &mut b[..EVENT_SIZE];
        b.fill(0);
        b[0] = self.kind as u8;
        b[1] = self.mpa_revision;
        b[2] = self.crc as u8 | (self.markers as u8) << 1;
        put_u32(b, 4, self.handle);
        put_u32(b, 8, self.status);
        put_u32(b, 12, self.peer_ip);
        put_u16(b, 16, self.peer_port);
        put_u16(b, 18, self.local_port);
        put_u16(b, 20, self.ird);
        put_u16(b, 22, self.ord);
        put_u16(b, 24, self.private_data_len);
        put_u32(b, 28, self.listen_id);
        b[Self::OFF_OWNER] = self.phase as u8;
        Ok(())
    }
}

#[cfg(test)]
mod command_result_tests {
    use super::*;

    #[test]
    fn result_words_round_trip_and_refuse_bad_lengths() {
        let r = CommandResult {
            words: [7, 0xDEAD_BEEF, 0, 0],
        };
        let mut b = [0u8; 16];
        assert_eq!(r.emit(2, &mut b), Ok(8));
        assert_eq!(&b[..8], &[7, 0, 0, 0, 0xEF, 0xBE, 0xAD, 0xDE]);
        assert_eq!(CommandResult::parse(&b[..8]), Ok(r));
        assert_eq!(CommandResult::parse(&[]), Ok(CommandResult::default()));
        assert_eq!(CommandResult::parse(&b[..7]), Err(Error::BadLength));
        assert_eq!(CommandResult::parse(&[0; 20]), Err(Error::BadLength));
        assert_eq!(r.emit(5, &mut b), Err(Error::BadLength));
        assert_eq!(r.emit(4, &mut b[..15]), Err(Error::BufferTooSmall));
    }
}
