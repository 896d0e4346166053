//! `Context`: an open device. Checks identification and ABI version, reads
//! capabilities and limits, sets up the event queue, and owns the mailbox
//! and the driver's tables of the objects it created (which the data path
//! consults in host memory instead of asking the device).

use crate::bus::{Bus, DmaMem};
use crate::cm::CmQueue;
use crate::cq::CqShared;
use crate::error::{DeviceError, Error, InputError, Result};
use crate::mailbox::{self, Mailbox};
use crate::pd::Pd;
use crate::qp::QpShared;
use crate::ring::CompletionRing;
use core::time::Duration;
use rnic_wire::abi::cqe::decode_term_cause;
use rnic_wire::abi::csr::*;
use rnic_wire::abi::mailbox::{Command, CommandResult, Event, EventKind, QpState, EVENT_SIZE};
use rnic_wire::abi::wqe::{MAX_INLINE_DATA, MAX_SGE_PER_WQE};
use rnic_wire::abi::{abi_major, ABI_VERSION as DRIVER_ABI};
use rnic_wire::terminate::TerminateCause;
use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Locks a mutex; a panic elsewhere while it was held does not poison the
/// driver (its tables stay consistent: every update is a single step).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How to open a device.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Event queue entries (a power of two).
    pub eq_entries: u32,
    /// Mailbox command timeout.
    pub mailbox_timeout: Duration,
    /// How long to wait for `STATUS_READY` at open.
    pub ready_timeout: Duration,
    /// How long to wait for the device reset (`CTRL_RESET`) at open.
    pub reset_timeout: Duration,
    /// Reset the device at open (`CTRL_RESET`: everything an earlier user
    /// left is gone; the interface configuration in BAR0 stays). Off only
    /// to look at a device without disturbing the context that uses it.
    pub reset: bool,
    /// Push a send WQE through its QP's doorbell page when one work
    /// request is posted and the device has `CAP_WQE_PUSH`
    /// (`abi::doorbell::QP_SQ_PUSH`): the device then need not read it
    /// from the ring, one DMA round trip less on the message's latency.
    pub wqe_push: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            eq_entries: 256,
            mailbox_timeout: mailbox::DEFAULT_TIMEOUT,
            ready_timeout: Duration::from_millis(100),
            reset_timeout: Duration::from_millis(100),
            reset: true,
            wqe_push: true,
        }
    }
}

/// What the device offers (from the identification CSRs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceCaps {
    /// `ABI_VERSION` as read.
    pub abi_version: u32,
    /// `CAPS` bits (`CAP_*`).
    pub caps: u32,
    /// QPs (clamped to the doorbell pages BAR0 has).
    pub max_qp: u32,
    /// CQs (clamped likewise).
    pub max_cq: u32,
    /// TPT entries.
    pub max_tpt: u32,
    /// Page-list entries.
    pub max_pbl: u32,
    /// Largest ring in entries.
    pub max_queue_entries: u32,
    /// SGEs per work request (`CAPS[15:8]`, at most the WQE's six).
    pub max_sge: usize,
    /// Sink SGEs of an RDMA Read (`CAPS[23:16]`, at most `max_sge`).
    pub max_read_sge: usize,
}

impl DeviceCaps {
    /// Send WQEs may be pushed through the doorbell page (`CAP_WQE_PUSH`).
    pub fn wqe_push(&self) -> bool {
        self.caps & CAP_WQE_PUSH != 0
    }
    /// RFC 7306 immediate data supported.
    pub fn immediate(&self) -> bool {
        self.caps & CAP_IMMEDIATE != 0
    }
    /// The largest inline message (`CAPS[31:24]`, at most
    /// `abi::wqe::MAX_INLINE_DATA`; 0: the device takes no inline WQEs),
    /// the verbs `max_inline_data`.
    pub fn max_inline_data(&self) -> usize {
        (((self.caps >> CAP_MAX_INLINE_SHIFT) & CAP_MAX_INLINE_MASK) as usize).min(MAX_INLINE_DATA)
    }
}

/// Interface configuration (global CSRs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetConfig {
    /// Station MAC address.
    pub mac: [u8; 6],
    /// Our IPv4 address.
    pub ip: Ipv4Addr,
    /// Netmask.
    pub netmask: Ipv4Addr,
    /// Default gateway, if any.
    pub gateway: Option<Ipv4Addr>,
    /// MTU (IP packet size).
    pub mtu: u16,
}

/// A registered memory region as the data path checks SGEs against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MrInfo {
    pub pdn: u32,
    pub va: u64,
    pub len: u64,
    pub access: u8,
}

/// The driver's tables (host memory only).
#[derive(Default)]
pub(crate) struct Registry {
    pub mrs: HashMap<u32, MrInfo>,
    pub qps: HashMap<u32, Arc<QpShared>>,
    pub cqs: HashMap<u32, Arc<CqShared>>,
}

struct EventQueue<D> {
    mem: D,
    ring: CompletionRing,
    /// Events that carried a handle the driver does not know (late events
    /// for destroyed objects); dropped.
    spurious: u64,
}

/// An open device.
pub struct Context<B: Bus> {
    bus: B,
    caps: DeviceCaps,
    mbox: Mutex<Mailbox>,
    eq: Mutex<EventQueue<B::Dma>>,
    pub(crate) reg: Mutex<Registry>,
    pub(crate) cm: Mutex<CmQueue>,
    next_pd: AtomicU32,
    /// Single-WR posts push their WQE ([`Options::wqe_push`],
    /// [`Context::set_wqe_push`]; only with the device's `CAP_WQE_PUSH`).
    wqe_push: AtomicBool,
}

impl<B: Bus> Context<B> {
    /// Opens the device with default [`Options`].
    pub fn open(bus: B) -> Result<Self> {
        Self::open_with(bus, Options::default())
    }

    /// Opens the device: checks `ID` and `ABI_VERSION` (same major), resets
    /// the device (`CTRL_RESET`, then waits until it reads 0: whatever an
    /// earlier user left — connections, QPs, regions, DMA in flight — is
    /// gone and nothing more is written into host memory for it), waits for
    /// `STATUS_READY` (the firmware has forgotten its state), reads the
    /// limits, sets up the event queue and enables the datapath
    /// (`CTRL_ENABLE`).
    pub fn open_with(bus: B, opts: Options) -> Result<Self> {
        if !opts.eq_entries.is_power_of_two() {
            return Err(InputError::QueueSize(opts.eq_entries).into());
        }
        let id = bus.read32(ID);
        if id != ID_VALUE {
            return Err(DeviceError::BadId(id).into());
        }
        let v = bus.read32(ABI_VERSION);
        if abi_major(v) != abi_major(DRIVER_ABI) {
            return Err(DeviceError::AbiVersion(v).into());
        }
        if opts.reset {
            bus.write32(CTRL, CTRL_RESET);
            let deadline = bus.now().saturating_add(opts.reset_timeout);
            loop {
                let ctrl = bus.read32(CTRL);
                if ctrl & CTRL_RESET == 0 {
                    break;
                }
                let now = bus.now();
                if now >= deadline {
                    return Err(DeviceError::ResetTimeout(ctrl).into());
                }
                bus.wait_interrupt((deadline - now).min(mailbox::POLL_INTERVAL));
            }
        }
        let deadline = bus.now().saturating_add(opts.ready_timeout);
        while bus.read32(STATUS) & STATUS_READY == 0 {
            let now = bus.now();
            if now >= deadline {
                return Err(DeviceError::NotReady.into());
            }
            bus.wait_interrupt((deadline - now).min(mailbox::POLL_INTERVAL));
        }
        let limit = |csr: u32, cap: u32| -> Result<u32> {
            let value = bus.read32(csr);
            if value == 0 {
                return Err(DeviceError::BadLimit { csr, value }.into());
            }
            Ok(value.min(cap))
        };
        let caps_raw = bus.read32(CAPS);
        let caps = DeviceCaps {
            abi_version: v,
            caps: caps_raw,
            max_qp: limit(MAX_QP, QP_DOORBELL_PAGES)?,
            max_cq: limit(MAX_CQ, CQ_DOORBELL_PAGES)?,
            max_tpt: limit(MAX_TPT, 1 << rnic_wire::abi::tpt::STAG_INDEX_BITS)?,
            max_pbl: limit(MAX_PBL, u32::MAX)?,
            // Rings are allocated whole: keep them to 2^20 entries (64 MiB of WQEs).
            max_queue_entries: limit(MAX_QUEUE_ENTRIES, 1 << 20)?,
            max_sge: (((caps_raw >> CAP_MAX_SGE_SHIFT) & CAP_MAX_SGE_MASK) as usize)
                .min(MAX_SGE_PER_WQE),
            max_read_sge: (((caps_raw >> CAP_MAX_READ_SGE_SHIFT) & CAP_MAX_READ_SGE_MASK) as usize)
                .min((caps_raw >> CAP_MAX_SGE_SHIFT & CAP_MAX_SGE_MASK) as usize)
                .min(MAX_SGE_PER_WQE),
        };
        let entries = opts.eq_entries;
        let mem = bus.alloc_dma(entries as usize * EVENT_SIZE, 4096)?;
        let ring = CompletionRing::new(entries).ok_or(InputError::QueueSize(entries))?;
        let base = mem.bus_addr();
        bus.write32(EQ_BASE_LO, base as u32);
        bus.write32(EQ_BASE_HI, (base >> 32) as u32);
        bus.write32(EQ_ENTRIES, entries);
        bus.write32(EQ_CONSUMER, 0);
        bus.write32(INT_MASK, INT_EVENT | INT_MBOX_DONE | INT_EQ_OVERFLOW);
        bus.write32(CTRL, CTRL_ENABLE);
        Ok(Context {
            bus,
            caps,
            mbox: Mutex::new(Mailbox::new(opts.mailbox_timeout)),
            eq: Mutex::new(EventQueue {
                mem,
                ring,
                spurious: 0,
            }),
            reg: Mutex::new(Registry::default()),
            cm: Mutex::new(CmQueue::default()),
            next_pd: AtomicU32::new(1),
            wqe_push: AtomicBool::new(opts.wqe_push && caps.wqe_push()),
        })
    }

    /// The device's capabilities and limits.
    pub fn caps(&self) -> &DeviceCaps {
        &self.caps
    }

    /// Turns WQE push ([`Options::wqe_push`]) on or off for the posts that
    /// follow; on takes effect only on a device with `CAP_WQE_PUSH`.
    pub fn set_wqe_push(&self, on: bool) {
        self.wqe_push
            .store(on && self.caps.wqe_push(), Ordering::Relaxed);
    }

    /// Whether a post of one work request pushes its WQE.
    pub fn wqe_push(&self) -> bool {
        self.wqe_push.load(Ordering::Relaxed)
    }

    /// The bus (for the application's own DMA buffers and for tests).
    pub fn bus(&self) -> &B {
        &self.bus
    }

    /// Allocates `len` octets of DMA-able memory (page aligned) for buffers
    /// the application registers as memory regions.
    pub fn alloc_dma(&self, len: usize) -> Result<B::Dma> {
        if len == 0 {
            return Err(InputError::RegionRange.into());
        }
        Ok(self.bus.alloc_dma(len, 4096)?)
    }

    /// Writes the interface configuration and enables the datapath.
    pub fn configure(&self, cfg: &NetConfig) -> Result<()> {
        if cfg.mac[0] & 1 != 0 || cfg.mtu < 576 {
            return Err(InputError::NetConfig.into());
        }
        let m = cfg.mac;
        self.bus
            .write32(MAC_LO, u32::from_le_bytes([m[0], m[1], m[2], m[3]]));
        self.bus
            .write32(MAC_HI, u32::from_le_bytes([m[4], m[5], 0, 0]));
        self.bus.write32(IPV4_ADDR, u32::from(cfg.ip));
        self.bus.write32(IPV4_NETMASK, u32::from(cfg.netmask));
        self.bus
            .write32(IPV4_GATEWAY, cfg.gateway.map_or(0, u32::from));
        self.bus.write32(MTU, cfg.mtu as u32);
        self.bus.write32(CTRL, self.bus.read32(CTRL) | CTRL_ENABLE);
        Ok(())
    }

    /// Allocates a protection domain. PDs are the driver's numbers (the
    /// device only compares them), so this needs no command.
    pub fn alloc_pd(&self) -> Result<Pd<'_, B>> {
        let pdn = self.next_pd.fetch_add(1, Ordering::Relaxed);
        if pdn == 0 {
            return Err(Error::Exhausted);
        }
        Ok(Pd::new(self, pdn))
    }

    /// Runs a mailbox command (control path only).
    pub(crate) fn command(&self, cmd: &Command, out: &mut [u8]) -> Result<usize> {
        lock(&self.mbox).execute(&self.bus, cmd, out)
    }

    /// Runs a mailbox command returning `want` result words.
    pub(crate) fn command_words(&self, cmd: &Command, want: usize) -> Result<CommandResult> {
        lock(&self.mbox).execute_words(&self.bus, cmd, want)
    }

    /// A no-op command round trip (checks the mailbox and firmware).
    pub fn nop(&self) -> Result<()> {
        self.command(&Command::Nop, &mut []).map(|_| ())
    }

    /// Mailbox commands completed.
    pub fn mailbox_commands(&self) -> u64 {
        lock(&self.mbox).commands()
    }

    /// Events dropped because they named an unknown CQ or QP.
    pub fn spurious_events(&self) -> u64 {
        lock(&self.eq).spurious
    }

    /// Reads every new event queue entry: CQ notifications set their CQ's
    /// flag; QP events update the driver's copy of the QP state; connection
    /// events are queued for [`Context::get_cm_event`]. A malformed entry is
    /// consumed and reported as [`DeviceError::EventFormat`] after the entries
    /// before it were handled.
    pub fn process_events(&self) -> Result<usize> {
        let mut eq = lock(&self.eq);
        let entries = eq.mem.len() / EVENT_SIZE;
        let mut n = 0;
        let mut bad = false;
        while n < entries {
            let off = eq.ring.slot() as usize * EVENT_SIZE;
            let mut owner = [0u8; 1];
            eq.mem.read(off + Event::OFF_OWNER, &mut owner)?;
            if !eq.ring.is_new(owner[0] & 1 != 0) {
                break;
            }
            let mut b = [0u8; EVENT_SIZE];
            eq.mem.read(off, &mut b)?;
            eq.ring.advance();
            n += 1;
            match Event::parse(&b) {
                Ok(ev) => {
                    if !self.dispatch(&ev) {
                        eq.spurious += 1;
                    }
                }
                Err(_) => {
                    bad = true;
                    break;
                }
            }
        }
        if n > 0 {
            self.bus.write32(EQ_CONSUMER, eq.ring.consumer());
        }
        drop(eq);
        let st = self.bus.read32(INT_STATUS);
        if st & INT_EQ_OVERFLOW != 0 {
            self.bus.write32(INT_STATUS, INT_EQ_OVERFLOW);
            return Err(DeviceError::EventOverflow.into());
        }
        if bad {
            return Err(DeviceError::EventFormat.into());
        }
        Ok(n)
    }

    /// Handles one event; false if it names nothing the driver knows.
    fn dispatch(&self, ev: &Event) -> bool {
        let reg = lock(&self.reg);
        match ev.kind {
            EventKind::CqCompletion => match reg.cqs.get(&ev.handle) {
                Some(cq) => {
                    cq.notify();
                    true
                }
                None => false,
            },
            EventKind::CqOverflow => {
                if let Some(cq) = reg.cqs.get(&ev.handle) {
                    cq.set_overflow();
                }
                cq_overrun_fails_qps(&reg, ev.handle);
                drop(reg);
                lock(&self.cm).push(*ev);
                true
            }
            EventKind::ConnectRequest => {
                drop(reg);
                lock(&self.cm).push(*ev);
                true
            }
            k => {
                let new_state = match k {
                    EventKind::Established => Some(QpState::Rts),
                    EventKind::Closed => Some(QpState::Idle),
                    // Raised only before Established: the device leaves the
                    // QP Idle, so the host may connect it again.
                    EventKind::Unreachable | EventKind::Refused => Some(QpState::Idle),
                    EventKind::ConnectionLost | EventKind::QpError => Some(QpState::Error),
                    _ => None,
                };
                let known = match reg.qps.get(&ev.handle) {
                    Some(qp) => {
                        if new_state == Some(QpState::Error) {
                            // The firmware raises this event after the device
                            // stopped the QP's receive side, and the event goes
                            // through the same completion writer as every CQE
                            // (`cpl_write`, one ordered DMA write stream), so
                            // each CQE it took before the event is already in
                            // its CQ ring: `Cq::poll` returns those first and
                            // flushes after. The device stops the QP's send
                            // side too, but a CQE it might still write for a
                            // flushed WR is dropped as late (docs/driver.md
                            // "QP error flush").
                            let cause = match k {
                                EventKind::QpError => decode_term_cause(ev.status).ok().flatten(),
                                _ => None,
                            };
                            flush_qp_in(&reg, qp, cause);
                        } else if let Some(s) = new_state {
                            // Error is left only by the user's modify (verbs);
                            // the stream's Closed after a Terminate keeps it.
                            if qp.state() != QpState::Error {
                                qp.set_state(s);
                            }
                        }
                        true
                    }
                    None => false,
                };
                drop(reg);
                if known {
                    lock(&self.cm).push(*ev);
                }
                known
            }
        }
    }

    /// The driver learnt that `qp` is in Error: its outstanding WRs are to be
    /// flushed by the CQs it uses (after their rings' device CQEs).
    pub(crate) fn flush_qp(&self, qp: &Arc<QpShared>, cause: Option<TerminateCause>) {
        flush_qp_in(&lock(&self.reg), qp, cause);
    }

    /// Waits for an interrupt until `deadline`; `Err(Timeout)` once it passed.
    pub(crate) fn wait_until(&self, deadline: Duration) -> Result<()> {
        let now = self.bus.now();
        if now >= deadline {
            return Err(Error::Timeout);
        }
        if self.bus.wait_interrupt(deadline - now) {
            self.bus.write32(INT_STATUS, INT_EVENT);
        }
        Ok(())
    }

    /// The deadline `timeout` from now.
    pub(crate) fn deadline(&self, timeout: Duration) -> Duration {
        self.bus.now().saturating_add(timeout)
    }
}

/// [`Context::flush_qp`] with the registry already locked.
fn flush_qp_in(reg: &Registry, qp: &Arc<QpShared>, cause: Option<TerminateCause>) {
    qp.request_flush(cause);
    for cqn in [qp.send_cqn, qp.recv_cqn] {
        if let Some(cq) = reg.cqs.get(&cqn) {
            cq.add_flush(qp);
        }
    }
}

impl<B: Bus> Drop for Context<B> {
    fn drop(&mut self) {
        // Stop the device writing events into memory about to be freed.
        self.bus.write32(EQ_ENTRIES, 0);
    }
}

/// Verbs: a CQ overrun (IBV_EVENT_CQ_ERR) is an error of every QP that
/// completes into the CQ — their completions can no longer be delivered —
/// so they move to Error and post calls fail with `WrongState(Error)`.
/// This is the driver's side only: the firmware takes the device's QP out of
/// RTS on the overflow by itself, and `Qp::modify` moves it to Error.
fn cq_overrun_fails_qps(reg: &Registry, cqn: u32) {
    for qp in reg.qps.values() {
        if qp.send_cqn == cqn || qp.recv_cqn == cqn {
            // Error, and its outstanding WRs flushed (the device's CQEs
            // for them were lost to the overrun; verbs: CQ overrun is a
            // QP error, every outstanding WR completes with a flush status).
            flush_qp_in(reg, qp, None);
        }
    }
}
