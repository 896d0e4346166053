//! Completion queues: a ring of CQEs in host memory that the device writes
//! by DMA and the host polls without any register read (`abi::cqe`). The
//! only MMIO of [`Cq::poll`] is one write of the consumer index to the CQ's
//! own doorbell page; [`Cq::req_notify`] writes the arm word on the same page.
//!
//! Every CQE is checked before it is believed: it must parse (`rnic_wire`'s
//! strict parser), name a QP that uses this CQ, and match the next
//! outstanding work request of that QP's queue (its wr_id, and for a
//! success its operation; completions of a queue come in posting order,
//! RFC 5040 §5 / RFC 5041 §5). A CQE that fails is consumed and reported as
//! a [`DeviceError`]; the driver's rings are indexed modulo their size only,
//! so no device value can make it read or write outside them.

use crate::bus::{Bus, DmaMem};
use crate::context::{lock, Context};
use crate::error::{DeviceError, InputError, Result};
use crate::qp::QpShared;
use crate::ring::CompletionRing;
use core::time::Duration;
use rnic_wire::abi::cqe::{
    decode_term_cause, Cqe, WcOpcode, WcStatus, CQE_FLAG_SOLICITED, CQE_FLAG_WITH_IMM,
    CQE_FLAG_WITH_INV, CQE_SIZE, OFF_OWNER,
};
use rnic_wire::abi::csr::{cq_doorbell_page, CQ_DOORBELL_PAGES};
use rnic_wire::abi::doorbell::{CqArm, CQ_ARM, CQ_CONSUMER};
use rnic_wire::abi::mailbox::{Command, Opcode};
use rnic_wire::terminate::TerminateCause;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A completion as the application sees it (libibverbs' `ibv_wc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkCompletion {
    /// The work request's cookie.
    pub wr_id: u64,
    /// How it ended.
    pub status: WcStatus,
    /// What completed.
    pub opcode: WcOpcode,
    /// Octets transferred (receive: octets placed).
    pub byte_len: u32,
    /// The QP.
    pub qp_num: u32,
    /// Immediate data (RFC 7306), if any.
    pub imm: Option<u32>,
    /// The STag the peer invalidated (Send with Invalidate, RFC 5040 §5.2).
    pub invalidated_rkey: Option<u32>,
    /// The received Send asked for a solicited event (RFC 5040 §5.1).
    pub solicited: bool,
    /// The Terminate that caused an error, if one did (RFC 5040 §4.8).
    pub term_cause: Option<TerminateCause>,
}

impl Default for WorkCompletion {
    fn default() -> Self {
        WorkCompletion {
            wr_id: 0,
            status: WcStatus::Success,
            opcode: WcOpcode::Send,
            byte_len: 0,
            qp_num: 0,
            imm: None,
            invalidated_rkey: None,
            solicited: false,
            term_cause: None,
        }
    }
}

/// QPs of this CQ in Error whose outstanding WRs the driver completes.
#[derive(Debug, Default)]
struct FlushBook {
    /// QPs waiting for the ring to be drained, in the order the driver
    /// learnt of their error.
    waiting: Vec<Arc<QpShared>>,
    /// Flush completions made, not yet returned by `poll`.
    ready: VecDeque<WorkCompletion>,
    /// QP numbers flushed lately (destroyed ones included), so that a late
    /// device CQE naming one is dropped rather than reported as an error.
    recent: VecDeque<u32>,
}

/// How many flushed QP numbers a CQ remembers for late CQEs.
const RECENT_FLUSHED: usize = 64;

/// The part of a CQ the event queue reaches.
#[derive(Debug)]
pub(crate) struct CqShared {
    notified: AtomicBool,
    overflow: AtomicBool,
    /// `flush.waiting` is not empty (checked without the lock on every poll).
    flush_waiting: AtomicBool,
    flush: Mutex<FlushBook>,
    late: AtomicU64,
}

impl CqShared {
    fn new() -> Self {
        CqShared {
            notified: AtomicBool::new(false),
            overflow: AtomicBool::new(false),
            flush_waiting: AtomicBool::new(false),
            flush: Mutex::new(FlushBook::default()),
            late: AtomicU64::new(0),
        }
    }

    /// `qp` is in Error: flush its queues that use this CQ at the next poll
    /// that finds the ring drained.
    pub(crate) fn add_flush(&self, qp: &Arc<QpShared>) {
        let mut f = lock(&self.flush);
        if !f.waiting.iter().any(|q| Arc::ptr_eq(q, qp)) {
            f.waiting.push(qp.clone());
        }
        self.flush_waiting.store(true, Ordering::Release);
    }

    /// Called with the ring drained: makes the flush completions of every
    /// waiting QP (its queues on CQ `cqn`), in the order the QPs went to
    /// Error and each queue in posting order. Returns whether any QP waited.
    fn make_flushes(&self, cqn: u32) -> bool {
        if !self.flush_waiting.load(Ordering::Acquire) {
            return false;
        }
        let mut f = lock(&self.flush);
        self.flush_waiting.store(false, Ordering::Release);
        let waiting = core::mem::take(&mut f.waiting);
        for qp in &waiting {
            if qp.send_cqn == cqn {
                qp.take_send_flush(&mut f.ready);
            }
            if qp.recv_cqn == cqn {
                qp.take_recv_flush(&mut f.ready);
            }
            if !f.recent.contains(&qp.qpn) {
                if f.recent.len() == RECENT_FLUSHED {
                    f.recent.pop_front();
                }
                f.recent.push_back(qp.qpn);
            }
        }
        !waiting.is_empty()
    }

    /// Moves ready flush completions into `out`; returns how many.
    fn take_ready(&self, out: &mut [WorkCompletion]) -> usize {
        let mut f = lock(&self.flush);
        let n = f.ready.len().min(out.len());
        for (o, wc) in out.iter_mut().zip(f.ready.drain(..n)) {
            *o = wc;
        }
        n
    }

    /// A QP waiting for its flush on this CQ (a destroyed one is only here).
    fn waiting_qp(&self, qpn: u32) -> Option<Arc<QpShared>> {
        lock(&self.flush)
            .waiting
            .iter()
            .find(|q| q.qpn == qpn)
            .cloned()
    }

    fn recently_flushed(&self, qpn: u32) -> bool {
        lock(&self.flush).recent.contains(&qpn)
    }

    pub(crate) fn notify(&self) {
        self.notified.store(true, Ordering::Release);
    }
    pub(crate) fn set_overflow(&self) {
        self.overflow.store(true, Ordering::Release);
    }
}

/// A completion queue.
pub struct Cq<'a, B: Bus> {
    ctx: &'a Context<B>,
    cqn: u32,
    shared: Arc<CqShared>,
    mem: B::Dma,
    ring: Mutex<CompletionRing>,
    live: bool,
}

impl<B: Bus> Context<B> {
    /// Creates a CQ of at least `entries` CQEs (rounded up to a power of two).
    pub fn create_cq(&self, entries: u32) -> Result<Cq<'_, B>> {
        let n = entries
            .checked_next_power_of_two()
            .filter(|&n| entries > 0 && n <= self.caps().max_queue_entries)
            .ok_or(InputError::QueueSize(entries))?;
        let mem = self.bus().alloc_dma(n as usize * CQE_SIZE, 4096)?;
        let ring = CompletionRing::new(n).ok_or(InputError::QueueSize(entries))?;
        let r = self.command_words(
            &Command::CreateCq {
                ring: mem.bus_addr(),
                entries: n,
            },
            1,
        )?;
        let cqn = r.words[0];
        let taken = lock(&self.reg).cqs.contains_key(&cqn);
        if cqn >= self.caps().max_cq || cqn >= CQ_DOORBELL_PAGES || taken {
            // We cannot address its doorbell (or it is another CQ's number):
            // give an unknown one back, never touch a live one.
            if !taken {
                let _ = self.command(&Command::DestroyCq { cqn }, &mut []);
            }
            return Err(DeviceError::MailboxResult(Opcode::CreateCq).into());
        }
        let shared = Arc::new(CqShared::new());
        lock(&self.reg).cqs.insert(cqn, shared.clone());
        Ok(Cq {
            ctx: self,
            cqn,
            shared,
            mem,
            ring: Mutex::new(ring),
            live: true,
        })
    }
}

impl<'a, B: Bus> Cq<'a, B> {
    /// The CQ number.
    pub fn cqn(&self) -> u32 {
        self.cqn
    }

    /// Ring size in entries.
    pub fn entries(&self) -> u32 {
        (self.mem.len() / CQE_SIZE) as u32
    }

    /// Whether the device reported that this CQ overflowed.
    pub fn overflowed(&self) -> bool {
        self.shared.overflow.load(Ordering::Acquire)
    }

    pub(crate) fn context(&self) -> &'a Context<B> {
        self.ctx
    }

    /// Device CQEs dropped because they named a WR the driver had already
    /// flushed (written by the device after the driver learnt of the error).
    pub fn late_cqes(&self) -> u64 {
        self.shared.late.load(Ordering::Relaxed)
    }

    /// Polls up to `out.len()` completions into `out`; returns how many.
    /// Touches host memory and (if it consumed any) the CQ's doorbell page.
    /// A bad entry is consumed and returned as an error when it is the
    /// first one looked at; otherwise the good entries before it are
    /// returned and the next call reports it.
    ///
    /// Flush completions (QP in Error, docs/driver.md "QP error flush") are
    /// made when the ring is found drained, so each QP's device CQEs come
    /// before its flush completions; flush completions made by an earlier
    /// call come before the ring's newer entries.
    pub fn poll(&self, out: &mut [WorkCompletion]) -> Result<usize> {
        let mut ring = lock(&self.ring);
        let mut n = self.shared.take_ready(out);
        let mut consumed = 0u32;
        let mut err = None;
        while n < out.len() {
            let off = ring.slot() as usize * CQE_SIZE;
            let mut owner = [0u8; 1];
            self.mem.read(off + OFF_OWNER, &mut owner)?;
            if !ring.is_new(owner[0] & 1 != 0) {
                if self.shared.make_flushes(self.cqn) {
                    n += self.shared.take_ready(&mut out[n..]);
                    continue;
                }
                break;
            }
            let mut b = [0u8; CQE_SIZE];
            self.mem.read(off, &mut b)?;
            match self.complete(&b) {
                Ok(Some(wc)) => {
                    out[n] = wc;
                    n += 1;
                    ring.advance();
                    consumed += 1;
                }
                Ok(None) => {
                    self.shared.late.fetch_add(1, Ordering::Relaxed);
                    ring.advance();
                    consumed += 1;
                }
                Err(e) => {
                    if n == 0 {
                        ring.advance();
                        consumed += 1;
                        err = Some(e);
                    }
                    break;
                }
            }
        }
        if consumed > 0 {
            self.ctx
                .bus()
                .write32(cq_doorbell_page(self.cqn) + CQ_CONSUMER, ring.consumer());
        }
        match err {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }

    /// Checks one CQE against the driver's records and retires the work
    /// requests it completes; `None`: a late CQE of a flushed WR (dropped).
    fn complete(&self, b: &[u8]) -> Result<Option<WorkCompletion>> {
        let c = Cqe::parse(b).map_err(|_| DeviceError::CqeFormat)?;
        let term_cause = decode_term_cause(c.term_cause).map_err(|_| DeviceError::CqeFormat)?;
        let found = lock(&self.ctx.reg).qps.get(&c.qpn).cloned();
        let qp = match found.or_else(|| self.shared.waiting_qp(c.qpn)) {
            Some(qp) => qp,
            None if self.shared.recently_flushed(c.qpn) => return Ok(None),
            None => return Err(DeviceError::CqeQp(c.qpn).into()),
        };
        let recv = matches!(c.opcode, WcOpcode::Recv | WcOpcode::RecvRdmaWithImm);
        let my_cq = if recv { qp.recv_cqn } else { qp.send_cqn };
        if my_cq != self.cqn {
            return Err(DeviceError::CqeQp(c.qpn).into());
        }
        let ok = c.status == WcStatus::Success;
        let order = DeviceError::CqeOrder {
            qpn: c.qpn,
            wr_id: c.wr_id,
        };
        let retired = if recv {
            qp.retire_recv(c.wr_id, ok.then_some(c.byte_len))
                .map_err(|len_bad| {
                    if len_bad {
                        DeviceError::CqeLength { qpn: c.qpn }
                    } else {
                        order
                    }
                })
        } else {
            qp.retire_send(c.wr_id, c.opcode, ok).map_err(|_| order)
        };
        if let Err(e) = retired {
            if matches!(e, DeviceError::CqeOrder { .. }) && qp.flushed(recv) {
                // The WR was flushed already: the device wrote this CQE
                // after the driver learnt of the error (modify(Error) does
                // not wait for CQE records still inside the device).
                return Ok(None);
            }
            return Err(e.into());
        }
        if !ok {
            // An error completion means the QP is in Error (verbs): posting
            // stops and the WRs the device does not complete are flushed.
            self.ctx.flush_qp(&qp, None);
        }
        Ok(Some(WorkCompletion {
            wr_id: c.wr_id,
            status: c.status,
            opcode: c.opcode,
            byte_len: c.byte_len,
            qp_num: c.qpn,
            imm: (c.flags & CQE_FLAG_WITH_IMM != 0).then_some(c.imm_or_inv),
            invalidated_rkey: (c.flags & CQE_FLAG_WITH_INV != 0).then_some(c.imm_or_inv),
            solicited: c.flags & CQE_FLAG_SOLICITED != 0,
            term_cause,
        }))
    }

    /// Arms the CQ: the next completion (or, with `solicited_only`, the next
    /// solicited or error completion, RFC 5040 §5.1) raises one event.
    pub fn req_notify(&self, solicited_only: bool) {
        let arm = if solicited_only {
            CqArm::Solicited
        } else {
            CqArm::NextCompletion
        };
        self.ctx
            .bus()
            .write32(cq_doorbell_page(self.cqn) + CQ_ARM, arm as u32);
    }

    /// Waits for the event of an armed CQ (then poll it and re-arm).
    pub fn wait(&self, timeout: Duration) -> Result<()> {
        let deadline = self.ctx.deadline(timeout);
        loop {
            self.ctx.process_events()?;
            if self.shared.notified.swap(false, Ordering::AcqRel) {
                return Ok(());
            }
            self.ctx.wait_until(deadline)?;
        }
    }

    /// Destroys the CQ (`DestroyCq`); the firmware refuses while a QP uses it.
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.ctx
            .command(&Command::DestroyCq { cqn: self.cqn }, &mut [])?;
        self.live = false;
        lock(&self.ctx.reg).cqs.remove(&self.cqn);
        Ok(())
    }
}

impl<B: Bus> Drop for Cq<'_, B> {
    fn drop(&mut self) {
        if self.release().is_err() {
            lock(&self.ctx.reg).cqs.remove(&self.cqn);
        }
    }
}

impl<B: Bus> core::fmt::Debug for Cq<'_, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cq").field("cqn", &self.cqn).finish()
    }
}
