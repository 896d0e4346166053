//! Queue pairs: create/modify/query/destroy through the mailbox; the data
//! path (`post_send`, `post_recv`) writes WQEs (encoded by `rnic_wire`'s
//! `SendWqe`/`RecvWqe::emit`) into the QP's rings in host memory and then
//! writes the new producer index to the QP's own doorbell page. That write is
//! the only MMIO a post makes; no mailbox, no firmware.
//!
//! A post call is all or nothing: every work request is checked first (SGE
//! count, each SGE against the registered region it names — same PD, inside
//! the region, local write where the device writes — message length,
//! Solicited Event only on Sends), and the queue must have room for all of
//! them; then all are written and one doorbell rings. Zero-length operations
//! (no SGEs, or SGEs of length 0) are valid (RFC 5040 §4.4, §5.1).

use crate::bus::{Bus, DmaMem};
use crate::context::{lock, Context};
use crate::cq::{Cq, WorkCompletion};
use crate::error::{DeviceError, Error, InputError, Result, WrError};
use crate::pd::Pd;
use crate::ring::WorkRing;
use rnic_wire::abi::cqe::{WcOpcode, WcStatus};
use rnic_wire::abi::csr::{qp_doorbell_page, QP_DOORBELL_PAGES};
use rnic_wire::abi::doorbell::{push_dwords, QP_RQ_PRODUCER, QP_SQ_PRODUCER, QP_SQ_PUSH};
use rnic_wire::abi::mailbox::{Command, Opcode, QpState};
use rnic_wire::abi::tpt::ACCESS_LOCAL_WRITE;
use rnic_wire::abi::wqe::{
    InlineData, RecvWqe, SendOpcode, SendWqe, Sge, SgeList, WQE_FLAG_FENCE, WQE_FLAG_SIGNALED,
    WQE_FLAG_SOLICITED, WQE_SIZE,
};
use rnic_wire::terminate::{RdmapError, TerminateCause};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A remote buffer: tagged offset and STag (the peer's rkey).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RemoteAddr {
    /// Tagged offset (the peer region's virtual address).
    pub addr: u64,
    /// The peer's STag.
    pub rkey: u32,
}

/// What a send work request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendOp {
    /// Send (RFC 5040 §5.1).
    Send,
    /// Send with Immediate Data (RFC 7306).
    SendWithImm(u32),
    /// Send with Invalidate of the peer's STag (RFC 5040 §5.2).
    SendWithInv(u32),
    /// RDMA Write (RFC 5040 §4.3).
    RdmaWrite(RemoteAddr),
    /// RDMA Write with Immediate Data (RFC 7306).
    RdmaWriteWithImm(RemoteAddr, u32),
    /// RDMA Read: the remote buffer into the local SGEs (RFC 5040 §4.4).
    RdmaRead(RemoteAddr),
}

/// A send queue work request (`ibv_send_wr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendWr<'s> {
    /// Cookie returned in the completion.
    pub wr_id: u64,
    /// The operation.
    pub op: SendOp,
    /// Local buffers: the source (Send, Write) or the sink (Read).
    pub sges: &'s [Sge],
    /// Ask for a completion on success (errors always complete).
    pub signaled: bool,
    /// Solicited Event (Send family only, RFC 5040 §5.1).
    pub solicited: bool,
    /// Wait for earlier RDMA Reads of this QP to finish first.
    pub fence: bool,
    /// The message itself, copied into the WQE when it is posted
    /// (`IBV_SEND_INLINE`, given as `ibv_wr_set_inline_data` gives it: the
    /// octets, not SGEs; the driver has no CPU view of registered memory in
    /// general). `sges` must then be empty; RDMA Write and the Send family
    /// only; at most `max_inline_data` octets (96). The device reads no
    /// buffer and checks no lkey for it, and the caller's bytes may be
    /// reused as soon as `post_send` returns.
    pub inline_data: Option<&'s [u8]>,
}

/// A receive queue work request (`ibv_recv_wr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvWr<'s> {
    /// Cookie returned in the completion.
    pub wr_id: u64,
    /// Buffers, filled in order.
    pub sges: &'s [Sge],
}

/// A WR on the send queue, waiting for its completion (or for a later
/// signaled WR's completion, which retires it too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SqEntry {
    pub wr_id: u64,
    pub kind: WcOpcode,
    pub signaled: bool,
}

/// A queue's flush bookkeeping (the driver completes the WRs the device
/// will not: docs/driver.md "QP error flush").
#[derive(Debug, Clone, Copy, Default)]
struct Flush {
    /// The driver learnt the QP is in Error; the queue's outstanding WRs
    /// complete once the CQ ring has been drained up to that point.
    requested: bool,
    /// A flush ran: a later device CQE for a WR no longer outstanding is
    /// one the device wrote after the stop was asked for, and is dropped.
    done: bool,
    /// The Terminate the QpError event carried (send queue only).
    cause: Option<TerminateCause>,
}

#[derive(Debug)]
struct SqBook {
    ring: WorkRing,
    pending: VecDeque<SqEntry>,
    flush: Flush,
}

#[derive(Debug)]
struct RqBook {
    ring: WorkRing,
    /// (wr_id, octets the buffers hold).
    pending: VecDeque<(u64, u64)>,
    flush: Flush,
}

/// The status an RDMA Read WR completes with when the peer answered its
/// Read Request with this Terminate (RFC 5040 §7.2, layer 0 RDMAP: error
/// type 1 Remote Protection, 2 Remote Operation), or `None` when the cause
/// does not name the requester's Read.
pub(crate) fn read_error_status(cause: Option<TerminateCause>) -> Option<WcStatus> {
    match cause? {
        TerminateCause::Rdmap(RdmapError::RemoteProtection(_)) => Some(WcStatus::RemoteAccessError),
        TerminateCause::Rdmap(RdmapError::RemoteOperation(_)) => {
            Some(WcStatus::RemoteOperationError)
        }
        _ => None,
    }
}

/// What the send queue's outstanding WRs complete with when the QP went to
/// Error (pure, in posting order): every WR is flushed (`WrFlushError`,
/// signaled or not: verbs completes flushed WRs always), except when the
/// QpError event carried an RDMAP remote protection/operation Terminate
/// (the responder's answer to a bad Read Request, RFC 5040 §7.2): then the
/// first outstanding RDMA Read completes with [`read_error_status`] and the
/// cause, unsignaled WRs before it are retired silently (a later
/// completion implies them, as on success), signaled ones before it are
/// flushed (no device completion says they succeeded).
pub(crate) fn send_flush_plan(
    pending: &[SqEntry],
    cause: Option<TerminateCause>,
) -> Vec<(SqEntry, WcStatus, Option<TerminateCause>)> {
    let read_err = read_error_status(cause).and_then(|st| {
        pending
            .iter()
            .position(|e| e.kind == WcOpcode::RdmaRead)
            .map(|i| (i, st))
    });
    let mut out = Vec::with_capacity(pending.len());
    for (i, e) in pending.iter().enumerate() {
        match read_err {
            Some((r, st)) if i == r => out.push((*e, st, cause)),
            Some((r, _)) if i < r && !e.signaled => {}
            _ => out.push((*e, WcStatus::WrFlushError, None)),
        }
    }
    out
}

fn flush_wc(qpn: u32, wr_id: u64, opcode: WcOpcode, status: WcStatus) -> WorkCompletion {
    WorkCompletion {
        wr_id,
        status,
        opcode,
        qp_num: qpn,
        ..WorkCompletion::default()
    }
}

/// The part of a QP that CQ polling and the event queue reach.
#[derive(Debug)]
pub(crate) struct QpShared {
    pub qpn: u32,
    pub pdn: u32,
    pub send_cqn: u32,
    pub recv_cqn: u32,
    state: Mutex<QpState>,
    sq: Mutex<SqBook>,
    rq: Mutex<RqBook>,
}

impl QpShared {
    pub(crate) fn set_state(&self, s: QpState) {
        *lock(&self.state) = s;
    }

    pub(crate) fn state(&self) -> QpState {
        *lock(&self.state)
    }

    /// Records that the QP is in Error: both queues' outstanding WRs are to
    /// be flushed (by [`Cq::poll`], after the ring's device CQEs). `cause`:
    /// the Terminate the QpError event carried, if any (the first one wins).
    pub(crate) fn request_flush(&self, cause: Option<TerminateCause>) {
        self.set_state(QpState::Error);
        let mut sq = lock(&self.sq);
        sq.flush.requested = true;
        if sq.flush.cause.is_none() {
            sq.flush.cause = cause;
        }
        drop(sq);
        lock(&self.rq).flush.requested = true;
    }

    /// If a flush of the send queue is requested: appends its completions
    /// ([`send_flush_plan`]) to `out` and retires every outstanding WR.
    pub(crate) fn take_send_flush(&self, out: &mut VecDeque<WorkCompletion>) {
        let mut sq = lock(&self.sq);
        if !sq.flush.requested {
            return;
        }
        let pending: Vec<SqEntry> = sq.pending.drain(..).collect();
        for (e, st, cause) in send_flush_plan(&pending, sq.flush.cause.take()) {
            let mut wc = flush_wc(self.qpn, e.wr_id, e.kind, st);
            wc.term_cause = cause;
            out.push_back(wc);
        }
        sq.ring.retire(pending.len() as u32);
        sq.flush.requested = false;
        sq.flush.done = true;
    }

    /// Like [`Self::take_send_flush`] for the receive queue (every WR flushed).
    pub(crate) fn take_recv_flush(&self, out: &mut VecDeque<WorkCompletion>) {
        let mut rq = lock(&self.rq);
        if !rq.flush.requested {
            return;
        }
        let n = rq.pending.len() as u32;
        for (wr_id, _) in rq.pending.drain(..) {
            out.push_back(flush_wc(
                self.qpn,
                wr_id,
                WcOpcode::Recv,
                WcStatus::WrFlushError,
            ));
        }
        rq.ring.retire(n);
        rq.flush.requested = false;
        rq.flush.done = true;
    }

    /// Whether a device CQE that matches no outstanding WR of the queue is
    /// a late one for a flushed WR (dropped) rather than a broken device.
    pub(crate) fn flushed(&self, recv: bool) -> bool {
        if recv {
            lock(&self.rq).flush.done
        } else {
            lock(&self.sq).flush.done
        }
    }

    /// Retires send WRs up to the one this CQE completes. A success must be
    /// the first signaled WR outstanding (the unsignaled ones before it
    /// completed silently) with the same operation; an error may be any WR
    /// up to it (errors complete unsignaled WRs too; flushes come one by one).
    pub(crate) fn retire_send(
        &self,
        wr_id: u64,
        opcode: WcOpcode,
        ok: bool,
    ) -> core::result::Result<(), ()> {
        let mut sq = lock(&self.sq);
        let first_signaled = sq.pending.iter().position(|e| e.signaled);
        let i = if ok {
            let i = first_signaled.ok_or(())?;
            let e = sq.pending[i];
            if e.wr_id != wr_id || e.kind != opcode {
                return Err(());
            }
            i
        } else {
            let end = first_signaled.map_or(sq.pending.len(), |i| i + 1);
            sq.pending
                .iter()
                .take(end)
                .position(|e| e.wr_id == wr_id)
                .ok_or(())?
        };
        sq.pending.drain(..=i);
        sq.ring.retire(i as u32 + 1);
        Ok(())
    }

    /// Retires the oldest receive WR, which must be `wr_id`; on success
    /// (`Some(len)`) the octets placed must fit its buffers. `Err(true)`:
    /// length, `Err(false)`: order.
    pub(crate) fn retire_recv(
        &self,
        wr_id: u64,
        placed: Option<u32>,
    ) -> core::result::Result<(), bool> {
        let mut rq = lock(&self.rq);
        let &(id, cap) = rq.pending.front().ok_or(false)?;
        if id != wr_id {
            return Err(false);
        }
        if placed.is_some_and(|n| n as u64 > cap) {
            return Err(true);
        }
        rq.pending.pop_front();
        rq.ring.retire(1);
        Ok(())
    }
}

/// A queue pair.
pub struct Qp<'a, B: Bus> {
    pd: &'a Pd<'a, B>,
    shared: Arc<QpShared>,
    sq_mem: B::Dma,
    rq_mem: B::Dma,
    live: bool,
}

fn ring_size<B: Bus>(ctx: &Context<B>, want: u32) -> Result<u32> {
    want.checked_next_power_of_two()
        .filter(|&n| want > 0 && n <= ctx.caps().max_queue_entries)
        .ok_or(InputError::QueueSize(want).into())
}

impl<'a, B: Bus> Pd<'a, B> {
    /// Creates a QP in this PD with room for `max_send_wr` and `max_recv_wr`
    /// outstanding work requests (rounded up to powers of two). The QP
    /// starts Idle; receive WRs may be posted before it connects.
    pub fn create_qp(
        &'a self,
        send_cq: &'a Cq<'a, B>,
        recv_cq: &'a Cq<'a, B>,
        max_send_wr: u32,
        max_recv_wr: u32,
    ) -> Result<Qp<'a, B>> {
        let ctx = self.ctx;
        if !core::ptr::eq(send_cq.context(), ctx) || !core::ptr::eq(recv_cq.context(), ctx) {
            return Err(InputError::Mismatch.into());
        }
        let sq_n = ring_size(ctx, max_send_wr)?;
        let rq_n = ring_size(ctx, max_recv_wr)?;
        let sq_mem = ctx.bus().alloc_dma(sq_n as usize * WQE_SIZE, 4096)?;
        let rq_mem = ctx.bus().alloc_dma(rq_n as usize * WQE_SIZE, 4096)?;
        let r = ctx.command_words(
            &Command::CreateQp {
                pd: self.pdn,
                send_cqn: send_cq.cqn(),
                recv_cqn: recv_cq.cqn(),
                sq_ring: sq_mem.bus_addr(),
                sq_entries: sq_n,
                rq_ring: rq_mem.bus_addr(),
                rq_entries: rq_n,
            },
            1,
        )?;
        let qpn = r.words[0];
        let taken = lock(&ctx.reg).qps.contains_key(&qpn);
        if qpn >= ctx.caps().max_qp || qpn >= QP_DOORBELL_PAGES || taken {
            if !taken {
                let _ = ctx.command(&Command::DestroyQp { qpn }, &mut []);
            }
            return Err(DeviceError::MailboxResult(Opcode::CreateQp).into());
        }
        let ring = |n| WorkRing::new(n).ok_or(Error::InvalidInput(InputError::QueueSize(n)));
        let shared = Arc::new(QpShared {
            qpn,
            pdn: self.pdn,
            send_cqn: send_cq.cqn(),
            recv_cqn: recv_cq.cqn(),
            state: Mutex::new(QpState::Idle),
            sq: Mutex::new(SqBook {
                ring: ring(sq_n)?,
                pending: VecDeque::with_capacity(sq_n as usize),
                flush: Flush::default(),
            }),
            rq: Mutex::new(RqBook {
                ring: ring(rq_n)?,
                pending: VecDeque::with_capacity(rq_n as usize),
                flush: Flush::default(),
            }),
        });
        lock(&ctx.reg).qps.insert(qpn, shared.clone());
        // A new send ring starts at producer index 0: tell the device, whose
        // fetch index follows the doorbell while the QP is not RTS (docs/rtl.md
        // "QP send stop and Terminate receive"; a QP number may be reused).
        ctx.bus().write32(qp_doorbell_page(qpn) + QP_SQ_PRODUCER, 0);
        // The receive ring too: the device keeps the RQ producer index
        // across QP-context writes (receives may be posted before RTS), so
        // a reused QP number must not inherit the old one.
        ctx.bus().write32(qp_doorbell_page(qpn) + QP_RQ_PRODUCER, 0);
        Ok(Qp {
            pd: self,
            shared,
            sq_mem,
            rq_mem,
            live: true,
        })
    }
}

impl<'a, B: Bus> Qp<'a, B> {
    /// The QP number.
    pub fn qpn(&self) -> u32 {
        self.shared.qpn
    }

    /// The driver's view of the state (updated by modify, events and error
    /// completions; [`Qp::query`] asks the device).
    pub fn state(&self) -> QpState {
        self.shared.state()
    }

    /// The send queue's ring in host memory (`WQE_SIZE`-octet slots, slot
    /// = WQE index mod ring size), as user space maps it to post without a
    /// system call. Whatever is written here directly bypasses this
    /// driver's checks of [`Qp::post_send`]; the device checks every SGE
    /// again (docs/rtl.md, "Send-side SGE checks and translation").
    pub fn sq_ring(&self) -> &B::Dma {
        &self.sq_mem
    }

    /// Free send queue slots.
    pub fn sq_free(&self) -> u32 {
        lock(&self.shared.sq).ring.free()
    }

    /// Free receive queue slots.
    pub fn rq_free(&self) -> u32 {
        lock(&self.shared.rq).ring.free()
    }

    pub(crate) fn ctx(&self) -> &'a Context<B> {
        self.pd.ctx
    }

    /// Moves the QP to `state` (`ModifyQp`): Error flushes its work requests
    /// (each outstanding WR, send and receive, signaled or not, completes
    /// with `WrFlushError` from [`Cq::poll`], in posting order, after the
    /// device's own CQEs), Closing starts a graceful close, Idle recycles an
    /// Error QP.
    pub fn modify(&self, state: QpState) -> Result<()> {
        self.ctx().command(
            &Command::ModifyQp {
                qpn: self.qpn(),
                state,
            },
            &mut [],
        )?;
        if state == QpState::Error {
            // The firmware wrote the device's QP context as Error before it
            // answered: the device fetches no more WQEs and writes no more
            // CQEs for this QP (docs/driver.md "QP error flush").
            self.ctx().flush_qp(&self.shared, None);
        } else {
            self.shared.set_state(state);
        }
        Ok(())
    }

    /// Reads the state from the device (`QueryQp`) and updates the driver's copy.
    pub fn query(&self) -> Result<QpState> {
        let r = self
            .ctx()
            .command_words(&Command::QueryQp { qpn: self.qpn() }, 1)?;
        let s = u8::try_from(r.words[0])
            .ok()
            .and_then(|v| QpState::from_u8(v).ok())
            .ok_or(DeviceError::MailboxResult(Opcode::QueryQp))?;
        self.shared.set_state(s);
        Ok(s)
    }

    /// Checks SGEs against the registered regions (host memory only).
    fn check_sges(
        &self,
        sges: &[Sge],
        need_write: bool,
        max: usize,
    ) -> core::result::Result<u64, WrError> {
        if sges.len() > max {
            return Err(WrError::TooManySges {
                given: sges.len(),
                max,
            });
        }
        let reg = lock(&self.ctx().reg);
        let mut total = 0u64;
        for (i, s) in sges.iter().enumerate() {
            let mr = reg
                .mrs
                .get(&s.lkey)
                .ok_or(WrError::UnknownLkey { sge: i })?;
            if mr.pdn != self.shared.pdn {
                return Err(WrError::WrongPd { sge: i });
            }
            if need_write && mr.access & ACCESS_LOCAL_WRITE == 0 {
                return Err(WrError::NoLocalWrite { sge: i });
            }
            if s.length > 0 {
                let end = s.addr.checked_add(s.length as u64);
                if s.addr < mr.va || end.is_none_or(|e| e > mr.va + mr.len) {
                    return Err(WrError::SgeOutOfBounds { sge: i });
                }
            }
            total += s.length as u64;
        }
        if total > u32::MAX as u64 {
            return Err(WrError::MessageTooLong);
        }
        Ok(total)
    }

    fn build_send(&self, wr: &SendWr) -> core::result::Result<SendWqe, WrError> {
        let (opcode, remote, imm_or_inv) = match wr.op {
            SendOp::Send => (SendOpcode::Send, None, 0),
            SendOp::SendWithImm(i) => (SendOpcode::SendWithImm, None, i),
            SendOp::SendWithInv(k) => (SendOpcode::SendWithInv, None, k),
            SendOp::RdmaWrite(r) => (SendOpcode::RdmaWrite, Some(r), 0),
            SendOp::RdmaWriteWithImm(r, i) => (SendOpcode::RdmaWriteWithImm, Some(r), i),
            SendOp::RdmaRead(r) => (SendOpcode::RdmaRead, Some(r), 0),
        };
        if wr.solicited && !opcode.is_send() {
            return Err(WrError::SolicitedNotSend);
        }
        if matches!(
            opcode,
            SendOpcode::SendWithImm | SendOpcode::RdmaWriteWithImm
        ) && !self.ctx().caps().immediate()
        {
            return Err(WrError::NoImmediate);
        }
        // RDMA Read places into the local buffers: they need local write.
        // Its sink SGEs are limited apart (`CAPS[23:16]`).
        let caps = self.ctx().caps();
        let is_read = opcode == SendOpcode::RdmaRead;
        let max = if is_read {
            caps.max_read_sge
        } else {
            caps.max_sge
        };
        let inline = match wr.inline_data {
            Some(_) if is_read || !wr.sges.is_empty() => return Err(WrError::InlineNotAllowed),
            // The device's limit (`CAPS[31:24]`), at most the ABI's.
            Some(d) => Some(
                InlineData::new(d)
                    .ok()
                    .filter(|_| d.len() <= caps.max_inline_data())
                    .ok_or(WrError::InlineTooLong {
                        given: d.len(),
                        max: caps.max_inline_data(),
                    })?,
            ),
            None => None,
        };
        self.check_sges(wr.sges, is_read, max)?;
        let sges = SgeList::new(wr.sges).map_err(|_| WrError::TooManySges {
            given: wr.sges.len(),
            max: self.ctx().caps().max_sge,
        })?;
        let flags = (wr.signaled as u8 * WQE_FLAG_SIGNALED)
            | (wr.solicited as u8 * WQE_FLAG_SOLICITED)
            | (wr.fence as u8 * WQE_FLAG_FENCE);
        let remote = remote.unwrap_or(RemoteAddr { addr: 0, rkey: 0 });
        Ok(SendWqe {
            wr_id: wr.wr_id,
            opcode,
            flags,
            imm_or_inv,
            remote_offset: remote.addr,
            remote_stag: remote.rkey,
            sges,
            inline,
        })
    }

    /// Posts send work requests (the QP must be RTS). All or nothing: the
    /// WQEs are checked and written into free slots past the producer index
    /// (which the device does not read), and only when all are good are the
    /// slots claimed and the doorbell rung.
    pub fn post_send(&self, wrs: &[SendWr]) -> Result<()> {
        let state = self.state();
        if state != QpState::Rts {
            return Err(Error::WrongState(state));
        }
        if wrs.is_empty() {
            return Ok(());
        }
        let mut sq = lock(&self.shared.sq);
        let free = sq.ring.free();
        if (free as usize) < wrs.len() {
            return Err(Error::QueueFull {
                free,
                needed: wrs.len(),
            });
        }
        let mark = sq.pending.len();
        let mut buf = [0u8; WQE_SIZE];
        for (index, wr) in wrs.iter().enumerate() {
            let written = self.build_send(wr).and_then(|wqe| {
                wqe.emit(&mut buf).map_err(|_| WrError::MessageTooLong)?;
                Ok(wqe)
            });
            let slot = sq.ring.peek(index as u32);
            let (wqe, slot) = match (written, slot) {
                (Ok(w), Some(s)) => (w, s),
                (Err(reason), _) => {
                    sq.pending.truncate(mark);
                    return Err(Error::BadWr { index, reason });
                }
                (_, None) => {
                    sq.pending.truncate(mark);
                    return Err(Error::QueueFull {
                        free,
                        needed: wrs.len(),
                    });
                }
            };
            if let Err(e) = self.sq_mem.write(slot as usize * WQE_SIZE, &buf) {
                sq.pending.truncate(mark);
                return Err(e.into());
            }
            let kind = match wqe.opcode {
                SendOpcode::RdmaWrite | SendOpcode::RdmaWriteWithImm => WcOpcode::RdmaWrite,
                SendOpcode::RdmaRead => WcOpcode::RdmaRead,
                _ => WcOpcode::Send,
            };
            sq.pending.push_back(SqEntry {
                wr_id: wr.wr_id,
                kind,
                signaled: wr.signaled,
            });
        }
        for _ in wrs {
            sq.ring.claim();
        }
        let page = qp_doorbell_page(self.qpn());
        if wrs.len() == 1 && self.ctx().wqe_push() {
            // The WQE again through the push window, up to its last
            // non-zero dword (the device reads the rest as zero), then the
            // doorbell binds it (`abi::doorbell::QP_SQ_PUSH`).
            for (k, d) in buf.chunks(4).take(push_dwords(&buf)).enumerate() {
                let v = u32::from_le_bytes([d[0], d[1], d[2], d[3]]);
                self.ctx()
                    .bus()
                    .write32(page + QP_SQ_PUSH + 4 * k as u32, v);
            }
        }
        self.ctx()
            .bus()
            .write32(page + QP_SQ_PRODUCER, sq.ring.producer());
        Ok(())
    }

    /// Posts receive work requests (the QP must be Idle or RTS). All or
    /// nothing, like [`Qp::post_send`].
    pub fn post_recv(&self, wrs: &[RecvWr]) -> Result<()> {
        let state = self.state();
        if !matches!(state, QpState::Idle | QpState::Rts) {
            return Err(Error::WrongState(state));
        }
        if wrs.is_empty() {
            return Ok(());
        }
        let mut rq = lock(&self.shared.rq);
        let free = rq.ring.free();
        if (free as usize) < wrs.len() {
            return Err(Error::QueueFull {
                free,
                needed: wrs.len(),
            });
        }
        let mark = rq.pending.len();
        let mut buf = [0u8; WQE_SIZE];
        for (index, wr) in wrs.iter().enumerate() {
            let built = self
                .check_sges(wr.sges, true, self.ctx().caps().max_sge)
                .and_then(|total| {
                    let sges = SgeList::new(wr.sges).map_err(|_| WrError::TooManySges {
                        given: wr.sges.len(),
                        max: self.ctx().caps().max_sge,
                    })?;
                    RecvWqe {
                        wr_id: wr.wr_id,
                        sges,
                    }
                    .emit(&mut buf)
                    .map_err(|_| WrError::MessageTooLong)?;
                    Ok(total)
                });
            let slot = rq.ring.peek(index as u32);
            let (total, slot) = match (built, slot) {
                (Ok(t), Some(s)) => (t, s),
                (Err(reason), _) => {
                    rq.pending.truncate(mark);
                    return Err(Error::BadWr { index, reason });
                }
                (_, None) => {
                    rq.pending.truncate(mark);
                    return Err(Error::QueueFull {
                        free,
                        needed: wrs.len(),
                    });
                }
            };
            if let Err(e) = self.rq_mem.write(slot as usize * WQE_SIZE, &buf) {
                rq.pending.truncate(mark);
                return Err(e.into());
            }
            rq.pending.push_back((wr.wr_id, total));
        }
        for _ in wrs {
            rq.ring.claim();
        }
        self.ctx().bus().write32(
            qp_doorbell_page(self.qpn()) + QP_RQ_PRODUCER,
            rq.ring.producer(),
        );
        Ok(())
    }

    /// Destroys the QP (`DestroyQp`; an open connection is reset).
    pub fn destroy(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.live = false;
        let ctx = self.ctx();
        let r = ctx
            .command(&Command::DestroyQp { qpn: self.qpn() }, &mut [])
            .map(|_| ());
        // Destroy flushes too: the CQs keep the QP's books until its
        // outstanding WRs have been completed (after the device's CQEs).
        ctx.flush_qp(&self.shared, None);
        lock(&ctx.reg).qps.remove(&self.qpn());
        r
    }
}

impl<B: Bus> Drop for Qp<'_, B> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

impl<B: Bus> core::fmt::Debug for Qp<'_, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Qp")
            .field("qpn", &self.qpn())
            .field("state", &self.state())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_wire::terminate::{
        DdpError, RemoteOperationError, RemoteProtectionError, TaggedBufferError,
    };

    fn e(wr_id: u64, kind: WcOpcode, signaled: bool) -> SqEntry {
        SqEntry {
            wr_id,
            kind,
            signaled,
        }
    }

    fn plan(p: &[SqEntry], cause: Option<TerminateCause>) -> Vec<(u64, WcStatus)> {
        send_flush_plan(p, cause)
            .into_iter()
            .map(|(e, s, _)| (e.wr_id, s))
            .collect()
    }

    const W: WcOpcode = WcOpcode::RdmaWrite;
    const R: WcOpcode = WcOpcode::RdmaRead;
    const F: WcStatus = WcStatus::WrFlushError;

    #[test]
    fn plain_flush_completes_every_wr_in_order() {
        let p = [e(1, W, false), e(2, R, true), e(3, WcOpcode::Send, false)];
        assert_eq!(plan(&p, None), vec![(1, F), (2, F), (3, F)]);
        // A DDP tagged-buffer Terminate (a Write's bad STag) names no Read.
        let ddp = TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag));
        assert_eq!(plan(&p, Some(ddp)), vec![(1, F), (2, F), (3, F)]);
        assert!(plan(&[], None).is_empty());
    }

    #[test]
    fn remote_protection_terminate_fails_the_first_read() {
        let cause = TerminateCause::Rdmap(RdmapError::RemoteProtection(
            RemoteProtectionError::InvalidStag,
        ));
        let p = [
            e(1, W, false),
            e(2, W, true),
            e(3, R, false),
            e(4, R, true),
            e(5, W, false),
        ];
        let got = send_flush_plan(&p, Some(cause));
        let ids: Vec<(u64, WcStatus)> = got.iter().map(|(e, s, _)| (e.wr_id, *s)).collect();
        assert_eq!(
            ids,
            vec![(2, F), (3, WcStatus::RemoteAccessError), (4, F), (5, F)],
            "unsignaled 1 retired silently, signaled 2 flushed, Read 3 fails, the rest flush"
        );
        assert_eq!(got[1].2, Some(cause));
        assert!(got.iter().filter(|g| g.0.wr_id != 3).all(|g| g.2.is_none()));
    }

    #[test]
    fn remote_operation_terminate_and_no_read_outstanding() {
        let cause = TerminateCause::Rdmap(RdmapError::RemoteOperation(
            RemoteOperationError::InvalidRdmapVersion,
        ));
        assert_eq!(
            plan(&[e(7, R, true)], Some(cause)),
            vec![(7, WcStatus::RemoteOperationError)]
        );
        // No Read outstanding: nothing to blame, all flushed.
        assert_eq!(
            plan(&[e(8, W, false), e(9, W, true)], Some(cause)),
            vec![(8, F), (9, F)]
        );
    }
}
