//! Send-side completions, in posting order, each only when its work request
//! is really done: the ordered completion queue between `TxSeg` (and the
//! RDMA Read requester) and the one `CplWrite` (its second record input,
//! `cp2_*`, so every CQE of every CQ goes through one producer index per
//! ring).
//!
//! **What a send CQE means** (docs/driver.md "What a completion means"): the
//! work request's source buffer may be reused. Retransmission re-reads host
//! memory (DESIGN §4: no retransmit buffer), so a Send or RDMA Write is
//! complete only when the peer's cumulative ACK covers the last octet of
//! its final FPDU: SND.UNA >= the QP's SND.NXT after the message (RFC 9293
//! §3.4 sequence comparison, §3.10.7.4: SND.UNA moves on acceptable ACKs).
//! An RDMA Read is complete when its last Read Response is placed (RFC 5040
//! §5.3; `rd_track`'s record). Completions of one QP leave in posting order
//! (RFC 5040 §5 / RFC 5041 §5, and what `rnic-driver` checks).
//!
//! * **Pending queue**: one entry per `TxSeg` record (a signaled WQE after
//!   its last descriptor, or a refused WQE), appended in hand-off order (=
//!   posting order per QP) in a circular RAM of [`DEPTH`] entries:
//!   - a refused WQE (status not 0) is ready at once (nothing was sent, or
//!     the QP stops: its error completion needs no acknowledgement);
//!   - a Send / RDMA Write waits for SND.UNA >= its end sequence number
//!     (`tx_end_seq`), when `ack_wait` (the core: `tx_wnd_en`; without it,
//!     a test mode whose peer never acknowledges, it is ready at once);
//!   - a signaled RDMA Read is a placeholder, done when `rd_track`'s record
//!     for it (same QP and wr_id; `rd_*`) arrives, with that record's
//!     status and length. Finding it scans from the head, one entry per
//!     clock (a QP's Reads complete in order, so it is that QP's oldest
//!     unfinished placeholder).
//! * **Release** at the head only: the head entry's QP (send CQ, on/off,
//!   connection: the `cfg_*` table) and its connection's SND.UNA
//!   (`una_snd_una`, a registered read one clock after `una_conn`) are looked up
//!   and the entry is written as a CQE record once ready, or re-checked
//!   later. The head of the queue blocks the later entries of every QP
//!   (one queue for the device): completions of a QP whose data is being
//!   retransmitted delay those of the others by as long.
//! * **Room**: `room` = fewer than [`DEPTH`] entries. `TxSeg` starts a WQE
//!   only with room, and pushes at most one record per WQE, so its record is
//!   always taken, and a Read placeholder is always in the queue before its
//!   Read Request can be answered. A `rd_*` record is therefore never held
//!   waiting for the queue (holding it would stall `rd_track`, the receive
//!   path behind it, and with it the ACKs the queue waits for). A record
//!   that finds no placeholder while `TxSeg` has none on offer is dropped
//!   and counted (`cnt_orphan`): its QP was stopped and its entries
//!   dropped.
//!
//! * A QP whose send side is off (its last `QpContext` write was not RTS or
//!   Closing: `cfg_on` low) gets no CQE: its entries are dropped at the
//!   head, `cnt_off` + 1 each. The host flushes that QP's work requests
//!   itself (docs/driver.md "QP error flush"), so a late device CQE would be
//!   a second completion of one WR. Every context write that turns a QP off
//!   moves the QP's epoch on (4 bits per QP); an entry carries the epoch of
//!   its push, so entries left from before a QP was stopped and set up
//!   again are dropped too, never completed as the new QP's.
//! * Work-completion opcode (`rnic_wire::abi::cqe::WcOpcode`) from the WQE
//!   opcode (`abi::wqe::SendOpcode`): RDMA Write (with or without
//!   immediate) → `RdmaWrite`, RDMA Read → `RdmaRead`, the Send family →
//!   `Send`; `byte_len` = the WQE's length on success, 0 on error (a Read:
//!   the requester's length).
//!
//! Defined answers: an entry of a QP without a send CQ (never configured,
//! or a `send_cqn` >= 16) is dropped at the head, `cnt_no_cq` + 1. A CQ
//! that is not valid, full or overflowed is `CplWrite`'s (dropped and
//! counted / `CqOverflow` event).

use crate::common::k;
use crate::completion::cpl_write::CQ_BITS;
use rnic_wire::abi::cqe::WcOpcode;
use rnic_wire::abi::wqe::SendOpcode;
use rust_hdl::prelude::*;

/// log2 of the pending queue's depth.
pub const DEPTH_LOG2: usize = 8;
/// Pending completions the device holds (signaled WQEs handed to the
/// framer and not yet acknowledged, Reads not yet answered).
pub const DEPTH: usize = 1 << DEPTH_LOG2;
// `update` tests the entry count's top bit as `cnt[8]` (full).
const _: () = assert!(DEPTH_LOG2 == 8);
/// Width of a pending entry: wr_id 0..64, byte_len 64..96, end_seq 96..128,
/// status 128..136, WC opcode 136..144, qp 144..150, epoch 150..154, kind
/// 154..156 ([`KIND_READY`], [`KIND_ACK`], [`KIND_READ`]), done 156.
pub const ENTRY_W: usize = 157;
/// Entry kind: written as soon as it is at the head.
pub const KIND_READY: u64 = 0;
/// Entry kind: waits for SND.UNA >= its end sequence number.
pub const KIND_ACK: u64 = 1;
/// Entry kind: an RDMA Read, waits for the requester's record.
pub const KIND_READ: u64 = 2;

/// A constant entry with bit i set where `f(i)`.
fn entry_mask(f: impl Fn(usize) -> bool) -> Constant<Bits<ENTRY_W>> {
    Constant::new((0..ENTRY_W).fold(Bits::<ENTRY_W>::default(), |m, i| m.replace_bit(i, f(i))))
}

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum SendCplState {
    Idle,
    /// The head entry is on the RAM's output: look up its QP.
    HeadQp,
    /// The QP's entry is out: look up its connection.
    HeadConn,
    /// SND.UNA is out: decide.
    HeadCheck,
    /// The head's CQE record is on offer.
    Emit,
    /// A Read record looks for its placeholder.
    Scan,
}

/// The completion queue of the sim profile (64 QPs).
pub type SendCpl = SendCplN<{ crate::profile::PR_SIM }>;

/// `SendCplN<PR>`: the per-QP table is `PROFILES[PR].fw.n_qp` deep
/// (`QpRam`: 16 on the board); a configuration write of a QP beyond the
/// profile is ignored.
#[derive(LogicBlock)]
pub struct SendCplN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- QP's send CQ and connection (firmware QpContext write)
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_qp: Signal<In, Bits<6>>,
    pub cfg_cq: Signal<In, Bits<32>>,
    /// The QP's connection index.
    pub cfg_conn: Signal<In, Bits<8>>,
    /// The QP's send side is on (state RTS or Closing).
    pub cfg_on: Signal<In, Bit>,
    /// Sends and Writes wait for their acknowledgement (module doc).
    pub ack_wait: Signal<In, Bit>,
    /// Fewer than [`DEPTH`] entries: `TxSeg` may start a WQE.
    pub room: Signal<Out, Bit>,
    // ---- TxSeg completion records (cq_*) + the WQE's length
    pub tx_valid: Signal<In, Bit>,
    pub tx_ready: Signal<Out, Bit>,
    pub tx_qp: Signal<In, Bits<6>>,
    pub tx_wr_id: Signal<In, Bits<64>>,
    pub tx_status: Signal<In, Bits<8>>,
    /// The WQE's `SendOpcode`.
    pub tx_opcode: Signal<In, Bits<8>>,
    pub tx_len: Signal<In, Bits<32>>,
    /// The QP's SND.NXT after the message's last FPDU.
    pub tx_end_seq: Signal<In, Bits<32>>,
    // ---- RDMA Read requester records (one per completed signaled Read)
    pub rd_valid: Signal<In, Bit>,
    pub rd_ready: Signal<Out, Bit>,
    pub rd_qp: Signal<In, Bits<6>>,
    pub rd_wr_id: Signal<In, Bits<64>>,
    pub rd_status: Signal<In, Bits<8>>,
    pub rd_len: Signal<In, Bits<32>>,
    // ---- SND.UNA of connection `una_conn`, one clock later
    pub una_conn: Signal<Out, Bits<8>>,
    pub una_snd_una: Signal<In, Bits<32>>,
    // ---- completion record out (CplWrite cp2_*)
    pub cpl_valid: Signal<Out, Bit>,
    pub cpl_ready: Signal<In, Bit>,
    pub cpl_cq: Signal<Out, Bits<CQ_BITS>>,
    pub cpl_wr_id: Signal<Out, Bits<64>>,
    pub cpl_byte_len: Signal<Out, Bits<32>>,
    pub cpl_qpn: Signal<Out, Bits<32>>,
    pub cpl_opcode: Signal<Out, Bits<8>>,
    pub cpl_status: Signal<Out, Bits<8>>,
    pub cnt_no_cq: Signal<Out, Bits<32>>,
    /// Entries dropped because their QP was off (or stopped since).
    pub cnt_off: Signal<Out, Bits<32>>,
    /// Read records that found no placeholder.
    pub cnt_orphan: Signal<Out, Bits<32>>,
    /// Entries in the queue.
    pub used: Signal<Out, Bits<16>>,
    // ---- constants
    k_op_write: Constant<Bits<8>>,
    k_op_write_imm: Constant<Bits<8>>,
    k_op_read: Constant<Bits<8>>,
    k_wc_send: Constant<Bits<8>>,
    k_wc_write: Constant<Bits<8>>,
    k_wc_read: Constant<Bits<8>>,
    k_ncq: Constant<Bits<32>>,
    k_ep: Constant<Bits<256>>,
    k_ready: Constant<Bits<2>>,
    k_ack: Constant<Bits<2>>,
    k_read: Constant<Bits<2>>,
    /// An entry's bits but byte_len, status and done.
    k_keep: Constant<Bits<ENTRY_W>>,
    /// The done bit.
    k_done: Constant<Bits<ENTRY_W>>,
    // ---- state
    /// Per QP: {connection 6..14, off 5, has a send CQ 4, CQ number 0..4}
    /// (all 0 after power-up: on).
    tab: crate::common::qp_ram::QpRam<Bits<14>, PR>,
    qm: Constant<Bits<6>>,
    ram: RAM<Bits<ENTRY_W>, DEPTH_LOG2>,
    state: DFF<SendCplState>,
    head: DFF<Bits<DEPTH_LOG2>>,
    tail: DFF<Bits<DEPTH_LOG2>>,
    cnt: DFF<Bits<9>>,
    /// Scan position and entries left to look at.
    sp: DFF<Bits<DEPTH_LOG2>>,
    sn: DFF<Bits<9>>,
    /// Per QP a 4-bit epoch (QP q at bits 4q..4q+4).
    ep: DFF<Bits<256>>,
    c_no_cq: DFF<Bits<32>>,
    c_off: DFF<Bits<32>>,
    c_orphan: DFF<Bits<32>>,
    // ---- temporaries
    tw: Signal<Local, Bits<14>>,
    cfg_sh: Signal<Local, Bits<8>>,
    tx_sh: Signal<Local, Bits<8>>,
    e_sh: Signal<Local, Bits<8>>,
    tx_eps: Signal<Local, Bits<256>>,
    tx_ep: Signal<Local, Bits<4>>,
    e_eps: Signal<Local, Bits<256>>,
    una_diff: Signal<Local, Bits<32>>,
    e_cur_ep: Signal<Local, Bits<4>>,
    push_kind: Signal<Local, Bits<2>>,
    push_op: Signal<Local, Bits<8>>,
    push_len: Signal<Local, Bits<32>>,
    e_wr_id: Signal<Local, Bits<64>>,
    e_qp: Signal<Local, Bits<6>>,
    e_ep: Signal<Local, Bits<4>>,
    e_kind: Signal<Local, Bits<2>>,
    e_done: Signal<Local, Bit>,
    e_end: Signal<Local, Bits<32>>,
    acked: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
}

impl<const PR: usize> Default for SendCplN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cfg_valid: Default::default(),
            cfg_qp: Default::default(),
            cfg_cq: Default::default(),
            cfg_conn: Default::default(),
            cfg_on: Default::default(),
            ack_wait: Default::default(),
            room: Default::default(),
            tx_valid: Default::default(),
            tx_ready: Default::default(),
            tx_qp: Default::default(),
            tx_wr_id: Default::default(),
            tx_status: Default::default(),
            tx_opcode: Default::default(),
            tx_len: Default::default(),
            tx_end_seq: Default::default(),
            rd_valid: Default::default(),
            rd_ready: Default::default(),
            rd_qp: Default::default(),
            rd_wr_id: Default::default(),
            rd_status: Default::default(),
            rd_len: Default::default(),
            una_conn: Default::default(),
            una_snd_una: Default::default(),
            cpl_valid: Default::default(),
            cpl_ready: Default::default(),
            cpl_cq: Default::default(),
            cpl_wr_id: Default::default(),
            cpl_byte_len: Default::default(),
            cpl_qpn: Default::default(),
            cpl_opcode: Default::default(),
            cpl_status: Default::default(),
            cnt_no_cq: Default::default(),
            cnt_off: Default::default(),
            cnt_orphan: Default::default(),
            used: Default::default(),
            k_op_write: k(SendOpcode::RdmaWrite as u64),
            k_op_write_imm: k(SendOpcode::RdmaWriteWithImm as u64),
            k_op_read: k(SendOpcode::RdmaRead as u64),
            k_wc_send: k(WcOpcode::Send as u64),
            k_wc_write: k(WcOpcode::RdmaWrite as u64),
            k_wc_read: k(WcOpcode::RdmaRead as u64),
            k_ncq: k(1 << CQ_BITS),
            k_ep: k(0xF),
            k_ready: k(KIND_READY),
            k_ack: k(KIND_ACK),
            k_read: k(KIND_READ),
            k_keep: entry_mask(|i| !((64..96).contains(&i) || (128..136).contains(&i) || i == 156)),
            k_done: entry_mask(|i| i == 156),
            tab: Default::default(),
            qm: crate::transmit::doorbell::qp_mask(PR),
            ram: Default::default(),
            state: Default::default(),
            head: Default::default(),
            tail: Default::default(),
            cnt: Default::default(),
            sp: Default::default(),
            sn: Default::default(),
            ep: Default::default(),
            c_no_cq: Default::default(),
            c_off: Default::default(),
            c_orphan: Default::default(),
            tw: Default::default(),
            cfg_sh: Default::default(),
            tx_sh: Default::default(),
            e_sh: Default::default(),
            tx_eps: Default::default(),
            tx_ep: Default::default(),
            e_eps: Default::default(),
            una_diff: Default::default(),
            e_cur_ep: Default::default(),
            push_kind: Default::default(),
            push_op: Default::default(),
            push_len: Default::default(),
            e_wr_id: Default::default(),
            e_qp: Default::default(),
            e_ep: Default::default(),
            e_kind: Default::default(),
            e_done: Default::default(),
            e_end: Default::default(),
            acked: Default::default(),
            pop: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for SendCplN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, head, tail, cnt, sp, sn, ep, c_no_cq, c_off, c_orphan);
        self.tab.read_clock.next = self.clock.val();
        self.tab.write_clock.next = self.clock.val();
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();

        // ---- per-QP table and epochs (QpContext writes)
        self.tab.write_enable.next =
            self.cfg_valid.val() & !(self.cfg_qp.val() & !self.qm.val()).any();
        self.tab.write_address.next = self.cfg_qp.val();
        self.tw.next = (bit_cast::<14, 8>(self.cfg_conn.val()) << 6)
            | bit_cast::<14, 4>(self.cfg_cq.val().get_bits::<4>(0));
        if self.cfg_cq.val() < self.k_ncq.val() {
            self.tw.next = self.tw.val() | 16;
        }
        if !self.cfg_on.val() {
            self.tw.next = self.tw.val() | 32;
        }
        self.tab.write_data.next = self.tw.val();
        self.cfg_sh.next = bit_cast::<8, 6>(self.cfg_qp.val() & self.qm.val()) << 2;
        if self.tab.write_enable.val() & !self.cfg_on.val() {
            // the QP stops: its queued entries are stale from now on
            self.ep.d.next = (self.ep.q.val() & !(self.k_ep.val() << self.cfg_sh.val()))
                | ((((self.ep.q.val() >> self.cfg_sh.val()) + 1) & self.k_ep.val())
                    << self.cfg_sh.val());
        }

        // ---- the entry a TxSeg record makes
        self.tx_sh.next = bit_cast::<8, 6>(self.tx_qp.val() & self.qm.val()) << 2;
        self.tx_eps.next = self.ep.q.val() >> self.tx_sh.val();
        self.tx_ep.next = self.tx_eps.val().get_bits::<4>(0);
        self.push_op.next = self.k_wc_send.val();
        if (self.tx_opcode.val() == self.k_op_write.val())
            | (self.tx_opcode.val() == self.k_op_write_imm.val())
        {
            self.push_op.next = self.k_wc_write.val();
        } else if self.tx_opcode.val() == self.k_op_read.val() {
            self.push_op.next = self.k_wc_read.val();
        }
        self.push_len.next = 0.into();
        self.push_kind.next = self.k_ready.val();
        if self.tx_status.val() == 0 {
            self.push_len.next = self.tx_len.val();
            if self.tx_opcode.val() == self.k_op_read.val() {
                self.push_kind.next = self.k_read.val();
            } else if self.ack_wait.val() {
                self.push_kind.next = self.k_ack.val();
            }
        }
        self.ram.write_address.next = self.tail.q.val();
        self.ram.write_data.next = bit_cast::<ENTRY_W, 64>(self.tx_wr_id.val())
            | (bit_cast::<ENTRY_W, 32>(self.push_len.val()) << 64)
            | (bit_cast::<ENTRY_W, 32>(self.tx_end_seq.val()) << 96)
            | (bit_cast::<ENTRY_W, 8>(self.tx_status.val()) << 128)
            | (bit_cast::<ENTRY_W, 8>(self.push_op.val()) << 136)
            | (bit_cast::<ENTRY_W, 6>(self.tx_qp.val()) << 144)
            | (bit_cast::<ENTRY_W, 4>(self.tx_ep.val()) << 150)
            | (bit_cast::<ENTRY_W, 2>(self.push_kind.val()) << 154);
        self.ram.write_enable.next = false;

        // ---- the entry on the RAM's output (head, or the scan position)
        self.ram.read_address.next = self.head.q.val();
        self.e_wr_id.next = self.ram.read_data.val().get_bits::<64>(0);
        self.e_end.next = self.ram.read_data.val().get_bits::<32>(96);
        self.e_qp.next = self.ram.read_data.val().get_bits::<6>(144);
        self.e_ep.next = self.ram.read_data.val().get_bits::<4>(150);
        self.e_kind.next = self.ram.read_data.val().get_bits::<2>(154);
        self.e_done.next = self.ram.read_data.val().get_bit(156);
        self.e_sh.next = bit_cast::<8, 6>(self.e_qp.val() & self.qm.val()) << 2;
        self.e_eps.next = self.ep.q.val() >> self.e_sh.val();
        self.e_cur_ep.next = self.e_eps.val().get_bits::<4>(0);
        self.tab.read_address.next = self.e_qp.val();
        self.una_conn.next = self.tab.read_data.val().get_bits::<8>(6);
        // SND.UNA >= end in sequence space (RFC 9293 §3.4)
        self.una_diff.next = self.una_snd_una.val() - self.e_end.val();
        self.acked.next = !self.una_diff.val().get_bit(31);

        self.cpl_cq.next = self.tab.read_data.val().get_bits::<CQ_BITS>(0);
        self.cpl_wr_id.next = self.e_wr_id.val();
        self.cpl_byte_len.next = self.ram.read_data.val().get_bits::<32>(64);
        self.cpl_qpn.next = bit_cast::<32, 6>(self.e_qp.val());
        self.cpl_status.next = self.ram.read_data.val().get_bits::<8>(128);
        self.cpl_opcode.next = self.ram.read_data.val().get_bits::<8>(136);

        self.tx_ready.next = false;
        self.rd_ready.next = false;
        self.cpl_valid.next = false;
        self.pop.next = false;
        match self.state.q.val() {
            SendCplState::Idle => {
                if self.tx_valid.val() & !self.cnt.q.val().get_bit(8) {
                    self.ram.write_enable.next = true;
                    self.tx_ready.next = true;
                    self.tail.d.next = self.tail.q.val() + 1;
                    self.cnt.d.next = self.cnt.q.val() + 1;
                } else if self.rd_valid.val() & self.cnt.q.val().any() {
                    // the head is on the RAM's output in the next clock
                    self.sp.d.next = self.head.q.val();
                    self.sn.d.next = self.cnt.q.val();
                    self.state.d.next = SendCplState::Scan;
                } else if self.rd_valid.val() & !self.tx_valid.val() {
                    // nothing queued and nothing coming: no placeholder
                    self.rd_ready.next = true;
                    self.c_orphan.d.next = self.c_orphan.q.val() + 1;
                } else if self.cnt.q.val().any() {
                    self.state.d.next = SendCplState::HeadQp;
                }
            }
            SendCplState::HeadQp => {
                self.state.d.next = SendCplState::HeadConn;
            }
            SendCplState::HeadConn => {
                self.state.d.next = SendCplState::HeadCheck;
            }
            SendCplState::HeadCheck => {
                self.state.d.next = SendCplState::Idle;
                if self.tab.read_data.val().get_bit(5) | (self.e_cur_ep.val() != self.e_ep.val()) {
                    // QP off, or stopped since the push: the host flushes
                    self.c_off.d.next = self.c_off.q.val() + 1;
                    self.pop.next = true;
                } else if !self.tab.read_data.val().get_bit(4) {
                    self.c_no_cq.d.next = self.c_no_cq.q.val() + 1;
                    self.pop.next = true;
                } else if (self.e_kind.val() == self.k_ready.val())
                    | ((self.e_kind.val() == self.k_read.val()) & self.e_done.val())
                    | ((self.e_kind.val() == self.k_ack.val())
                        & (self.acked.val() | !self.ack_wait.val()))
                {
                    self.state.d.next = SendCplState::Emit;
                }
            }
            SendCplState::Emit => {
                self.cpl_valid.next = true;
                if self.cpl_ready.val() {
                    self.pop.next = true;
                    self.state.d.next = SendCplState::Idle;
                }
            }
            SendCplState::Scan => {
                // the entry at `sp` is on the RAM's output
                self.ram.read_address.next = self.sp.q.val();
                if (self.e_kind.val() == self.k_read.val())
                    & !self.e_done.val()
                    & (self.e_qp.val() == self.rd_qp.val())
                    & (self.e_wr_id.val() == self.rd_wr_id.val())
                {
                    // done, with the requester's status and length
                    self.ram.write_enable.next = true;
                    self.ram.write_address.next = self.sp.q.val();
                    self.ram.write_data.next = (self.ram.read_data.val() & self.k_keep.val())
                        | (bit_cast::<ENTRY_W, 32>(self.rd_len.val()) << 64)
                        | (bit_cast::<ENTRY_W, 8>(self.rd_status.val()) << 128)
                        | self.k_done.val();
                    self.rd_ready.next = true;
                    self.state.d.next = SendCplState::Idle;
                } else if self.sn.q.val() == 1 {
                    // not queued: a record still on offer from TxSeg may be
                    // its placeholder (pushed first); else none will come
                    self.state.d.next = SendCplState::Idle;
                    if !self.tx_valid.val() {
                        self.rd_ready.next = true;
                        self.c_orphan.d.next = self.c_orphan.q.val() + 1;
                    }
                } else {
                    self.sp.d.next = self.sp.q.val() + 1;
                    self.sn.d.next = self.sn.q.val() - 1;
                    self.ram.read_address.next = self.sp.q.val() + 1;
                }
            }
            _ => {
                self.state.d.next = SendCplState::Idle;
            }
        }
        if self.pop.val() {
            self.head.d.next = self.head.q.val() + 1;
            self.cnt.d.next = self.cnt.q.val() - 1;
        }
        self.room.next = !self.cnt.q.val().get_bit(8);
        self.used.next = bit_cast::<16, 9>(self.cnt.q.val());
        self.cnt_no_cq.next = self.c_no_cq.q.val();
        self.cnt_off.next = self.c_off.q.val();
        self.cnt_orphan.next = self.c_orphan.q.val();
        if self.reset.val() {
            self.state.d.next = SendCplState::Idle;
            self.head.d.next = 0.into();
            self.tail.d.next = 0.into();
            self.cnt.d.next = 0.into();
            self.ep.d.next = 0.into();
            self.c_no_cq.d.next = 0.into();
            self.c_off.d.next = 0.into();
            self.c_orphan.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use rnic_wire::abi::cqe::WcStatus;
    use std::collections::{HashMap, VecDeque};

    fn bench() -> SendCpl {
        let mut u = SendCpl::default();
        u.clock.connect();
        u.reset.connect();
        u.cfg_valid.connect();
        u.cfg_qp.connect();
        u.cfg_cq.connect();
        u.cfg_conn.connect();
        u.cfg_on.connect();
        u.ack_wait.connect();
        u.tx_valid.connect();
        u.tx_qp.connect();
        u.tx_wr_id.connect();
        u.tx_status.connect();
        u.tx_opcode.connect();
        u.tx_len.connect();
        u.tx_end_seq.connect();
        u.rd_valid.connect();
        u.rd_qp.connect();
        u.rd_wr_id.connect();
        u.rd_status.connect();
        u.rd_len.connect();
        u.una_snd_una.connect();
        u.cpl_ready.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        u
    }

    fn cfg(u: &mut SendCpl, q: u64, cq: u64, conn: u64, on: bool) {
        u.cfg_valid.next = true;
        u.cfg_qp.next = q.into();
        u.cfg_cq.next = cq.into();
        u.cfg_conn.next = conn.into();
        u.cfg_on.next = on;
        tick!(*u);
        u.cfg_valid.next = false;
    }

    /// The ABI work-completion opcode of a WQE opcode (independent table).
    fn wc_of(op: u64) -> u64 {
        match SendOpcode::from_u8(op as u8) {
            Ok(SendOpcode::RdmaWrite | SendOpcode::RdmaWriteWithImm) => WcOpcode::RdmaWrite as u64,
            Ok(SendOpcode::RdmaRead) => WcOpcode::RdmaRead as u64,
            _ => WcOpcode::Send as u64,
        }
    }

    /// a >= b in 32-bit sequence space (RFC 9293 §3.4).
    fn seq_ge(a: u64, b: u64) -> bool {
        (a.wrapping_sub(b) as u32) < 0x8000_0000
    }

    /// A TxSeg record: (qp, wr_id, status, WQE opcode, len, end seq).
    #[derive(Clone, Copy, Debug)]
    struct Rec {
        qp: u64,
        id: u64,
        st: u64,
        op: u64,
        len: u64,
        end: u64,
    }

    /// The test's connection table: SND.UNA per connection, answered one
    /// clock after `una_conn` as the core's registered read port does.
    struct Una {
        snd_una: HashMap<u64, u64>,
    }

    impl Una {
        fn drive(&self, u: &mut SendCpl) {
            let c = u.una_conn.val().to_u64();
            u.una_snd_una.next = (*self.snd_una.get(&c).unwrap_or(&0)).into();
        }
    }

    fn offer_tx(u: &mut SendCpl, r: &Rec) {
        u.tx_qp.next = r.qp.into();
        u.tx_wr_id.next = r.id.into();
        u.tx_status.next = r.st.into();
        u.tx_opcode.next = r.op.into();
        u.tx_len.next = r.len.into();
        u.tx_end_seq.next = r.end.into();
    }

    /// Random records of 8 QPs (QP q on connection 10 + q, send CQ q % 4)
    /// through a random ready pattern: every CQE comes in push order, a
    /// Send/Write only once its connection's SND.UNA covers its end (with
    /// ACKs far behind the records, sequence numbers wrapping), a Read only
    /// after the requester's record for it, with that record's length; a
    /// refused WQE at once.
    #[test]
    fn completions_wait_for_the_ack_in_posting_order() {
        let mut rng = Rng::new(29);
        let mut u = bench();
        for q in 0..8 {
            cfg(&mut u, q, q % 4, 10 + q, true);
        }
        u.ack_wait.next = true;
        let conn_of = |q: u64| 10 + q;
        let mut end = [0xFFFF_F000u64; 8];
        let mut recs: VecDeque<Rec> = VecDeque::new();
        for i in 0..400u64 {
            let qp = rng.below(8) as u64;
            let op = [0u64, 1, 2, 4, 0, 1][rng.below(6)];
            let st = if rng.below(10) == 0 {
                WcStatus::LocalQpOperationError as u64
            } else {
                0
            };
            if st == 0 && op != SendOpcode::RdmaRead as u64 {
                end[qp as usize] = (end[qp as usize] + 1 + rng.below(3000) as u64) & 0xFFFF_FFFF;
            } else if st == 0 {
                end[qp as usize] = (end[qp as usize] + 48) & 0xFFFF_FFFF;
            }
            recs.push_back(Rec {
                qp,
                id: 1000 + i,
                st,
                op,
                len: rng.next_u64() >> 44,
                end: end[qp as usize],
            });
        }
        let want: Vec<Rec> = recs.iter().copied().collect();
        let mut una = Una {
            snd_una: (0..8).map(|q| (conn_of(q), 0xFFFF_F000u64)).collect(),
        };
        // per QP: the highest end pushed (the peer cannot ACK beyond it)
        let mut sent = [None::<u64>; 8];
        // Reads pushed, per QP, not yet answered: (wr_id, its length)
        let mut reads: Vec<VecDeque<(u64, u64)>> = vec![VecDeque::new(); 8];
        let mut answered: HashMap<u64, u64> = HashMap::new();
        let mut rd_offer: Option<(u64, u64, u64)> = None;
        let mut out = 0usize;
        for _ in 0..200_000 {
            if out == want.len() {
                break;
            }
            una.drive(&mut u);
            let tx_on = !recs.is_empty() && rng.below(3) != 0;
            u.tx_valid.next = tx_on;
            if let Some(r) = recs.front() {
                offer_tx(&mut u, r);
            }
            if rd_offer.is_none() && rng.below(40) == 0 {
                let q = rng.below(8);
                if let Some((id, _)) = reads[q].pop_front() {
                    rd_offer = Some((q as u64, id, rng.next_u64() >> 40));
                }
            }
            u.rd_valid.next = rd_offer.is_some();
            if let Some((q, id, len)) = rd_offer {
                u.rd_qp.next = q.into();
                u.rd_wr_id.next = id.into();
                u.rd_status.next = 0.into();
                u.rd_len.next = len.into();
            }
            // the peer acknowledges part of what was sent, now and then
            if rng.below(60) == 0 {
                let q = rng.below(8);
                if let Some(top) = sent[q] {
                    let cur = una.snd_una[&conn_of(q as u64)];
                    let gap = top.wrapping_sub(cur) & 0xFFFF_FFFF;
                    let step = if gap == 0 {
                        0
                    } else {
                        1 + rng.next_u64() % gap
                    };
                    una.snd_una
                        .insert(conn_of(q as u64), (cur + step) & 0xFFFF_FFFF);
                }
            }
            let ready = rng.below(100) < 70;
            u.cpl_ready.next = ready;
            assert!(simulate(&mut u, 1000));
            if u.cpl_valid.val() && ready {
                let w = want[out];
                out += 1;
                let got = (
                    u.cpl_cq.val().to_u64(),
                    u.cpl_wr_id.val().to_u64(),
                    u.cpl_qpn.val().to_u64(),
                    u.cpl_opcode.val().to_u64(),
                    u.cpl_status.val().to_u64(),
                );
                assert_eq!(got, (w.qp % 4, w.id, w.qp, wc_of(w.op), w.st), "CQE {out}");
                let len = u.cpl_byte_len.val().to_u64();
                if w.st != 0 {
                    assert_eq!(len, 0);
                } else if w.op == SendOpcode::RdmaRead as u64 {
                    let l = answered
                        .get(&w.id)
                        .expect("a Read completed before its response");
                    assert_eq!(len, *l);
                } else {
                    assert_eq!(len, w.len);
                    let now = una.snd_una[&conn_of(w.qp)];
                    assert!(
                        seq_ge(now, w.end),
                        "wr {} completed with SND.UNA {now:#x} below its end {:#x}",
                        w.id,
                        w.end
                    );
                }
            }
            if u.tx_ready.val() {
                assert!(tx_on, "tx_ready without a record");
                let r = recs.pop_front().unwrap();
                if r.st == 0 && r.op == SendOpcode::RdmaRead as u64 {
                    reads[r.qp as usize].push_back((r.id, r.len));
                }
                if r.st == 0 {
                    sent[r.qp as usize] = Some(r.end);
                }
            }
            if u.rd_ready.val() {
                let (_, id, len) = rd_offer.take().expect("rd_ready without a record");
                answered.insert(id, len);
            }
            tick!(u);
        }
        assert_eq!(out, want.len(), "CQEs missing");
        assert_eq!(u.cnt_orphan.val().to_u64(), 0);
        assert_eq!(u.cnt_off.val().to_u64(), 0);
        assert_eq!(u.used.val().to_u64(), 0);
    }

    /// Runs `u` until no CQE for `n` clocks, with SND.UNA from `una`;
    /// returns the wr_ids written.
    fn drain(u: &mut SendCpl, una: &Una, n: usize) -> Vec<u64> {
        let mut ids = Vec::new();
        let mut idle = 0;
        u.tx_valid.next = false;
        u.rd_valid.next = false;
        u.cpl_ready.next = true;
        while idle < n {
            una.drive(u);
            assert!(simulate(u, 1000));
            if u.cpl_valid.val() {
                ids.push(u.cpl_wr_id.val().to_u64());
                idle = 0;
            } else {
                idle += 1;
            }
            tick!(*u);
        }
        ids
    }

    fn push(u: &mut SendCpl, r: Rec) {
        offer_tx(u, &r);
        u.tx_valid.next = true;
        for _ in 0..20 {
            assert!(simulate(u, 1000));
            let took = u.tx_ready.val();
            tick!(*u);
            if took {
                u.tx_valid.next = false;
                return;
            }
        }
        panic!("record {} not taken", r.id);
    }

    fn write_rec(qp: u64, id: u64, end: u64) -> Rec {
        Rec {
            qp,
            id,
            st: 0,
            op: SendOpcode::RdmaWrite as u64,
            len: 64,
            end,
        }
    }

    /// Without `ack_wait` (the core's test mode without a window) a Send or
    /// Write completes at once; with it, not before its ACK.
    #[test]
    fn ack_wait_off_completes_at_once() {
        let mut u = bench();
        cfg(&mut u, 3, 1, 7, true);
        let una = Una {
            snd_una: [(7u64, 100u64)].into(),
        };
        u.ack_wait.next = true;
        push(&mut u, write_rec(3, 1, 200));
        assert_eq!(drain(&mut u, &una, 50), Vec::<u64>::new());
        u.ack_wait.next = false;
        assert_eq!(drain(&mut u, &una, 50), vec![1]);
        push(&mut u, write_rec(3, 2, 300));
        assert_eq!(drain(&mut u, &una, 50), vec![2]);
    }

    /// Entries of a QP that was stopped are dropped, also when the QP was
    /// set up again (with another connection) before they reached the head;
    /// the head blocks the other QPs' entries until then.
    #[test]
    fn a_stopped_qp_never_completes_its_old_entries() {
        let mut u = bench();
        cfg(&mut u, 1, 2, 5, true);
        cfg(&mut u, 2, 2, 6, true);
        u.ack_wait.next = true;
        let mut una = Una {
            snd_una: [(5u64, 0u64), (6, 0)].into(),
        };
        push(&mut u, write_rec(1, 10, 100));
        push(&mut u, write_rec(1, 11, 200));
        push(&mut u, write_rec(2, 20, 100));
        una.snd_una.insert(6, 100);
        assert_eq!(
            drain(&mut u, &una, 50),
            Vec::<u64>::new(),
            "QP 1 at the head"
        );
        // QP 1 stops and is set up again on connection 9
        cfg(&mut u, 1, 2, 9, false);
        cfg(&mut u, 1, 2, 9, true);
        push(&mut u, write_rec(1, 12, 50));
        una.snd_una.insert(9, 50);
        assert_eq!(drain(&mut u, &una, 50), vec![20, 12]);
        assert_eq!(u.cnt_off.val().to_u64(), 2);
        // a QP that is off drops its entries too
        push(&mut u, write_rec(2, 21, 150));
        cfg(&mut u, 2, 2, 6, false);
        una.snd_una.insert(6, 150);
        assert_eq!(drain(&mut u, &una, 50), Vec::<u64>::new());
        assert_eq!(u.cnt_off.val().to_u64(), 3);
        assert_eq!(u.used.val().to_u64(), 0);
    }

    /// A QP without a send CQ: dropped and counted. A Read record without a
    /// placeholder: dropped and counted, never waited for; one whose
    /// placeholder is on offer in the same clock finds it.
    #[test]
    fn no_cq_and_orphan_records() {
        let mut u = bench();
        cfg(&mut u, 4, 20, 1, true); // CQ 20: none
        cfg(&mut u, 5, 3, 2, true);
        u.ack_wait.next = false;
        let una = Una {
            snd_una: HashMap::new(),
        };
        push(&mut u, write_rec(4, 40, 0));
        assert_eq!(drain(&mut u, &una, 20), Vec::<u64>::new());
        assert_eq!(u.cnt_no_cq.val().to_u64(), 1);
        // an orphan Read record
        u.rd_valid.next = true;
        u.rd_qp.next = 5.into();
        u.rd_wr_id.next = 77.into();
        let mut taken = false;
        for _ in 0..10 {
            assert!(simulate(&mut u, 1000));
            taken |= u.rd_ready.val();
            tick!(u);
            if taken {
                break;
            }
        }
        assert!(taken, "orphan record held");
        u.rd_valid.next = false;
        assert_eq!(u.cnt_orphan.val().to_u64(), 1);
        // a Read placeholder and its record offered together
        let rd = Rec {
            qp: 5,
            id: 78,
            st: 0,
            op: SendOpcode::RdmaRead as u64,
            len: 4096,
            end: 0,
        };
        offer_tx(&mut u, &rd);
        u.tx_valid.next = true;
        u.rd_valid.next = true;
        u.rd_wr_id.next = 78.into();
        u.rd_len.next = 4000.into();
        u.rd_status.next = 0.into();
        u.cpl_ready.next = true;
        let mut got = None;
        for _ in 0..30 {
            assert!(simulate(&mut u, 1000));
            let (tt, rt) = (u.tx_ready.val(), u.rd_ready.val());
            if u.cpl_valid.val() {
                got = Some((u.cpl_wr_id.val().to_u64(), u.cpl_byte_len.val().to_u64()));
            }
            tick!(u);
            if tt {
                u.tx_valid.next = false;
            }
            if rt {
                u.rd_valid.next = false;
            }
        }
        assert_eq!(got, Some((78, 4000)));
        assert_eq!(u.cnt_orphan.val().to_u64(), 1);
    }

    /// `room` falls when DEPTH entries wait, and a record offered then is
    /// not taken (TxSeg never offers one: it starts WQEs only with room).
    #[test]
    fn room_bounds_the_queue() {
        let mut u = bench();
        cfg(&mut u, 0, 0, 0, true);
        u.ack_wait.next = true;
        let mut una = Una {
            snd_una: [(0u64, 0u64)].into(),
        };
        for i in 0..DEPTH as u64 {
            assert!(u.room.val(), "room at {i}");
            push(&mut u, write_rec(0, i, i + 1));
        }
        assert!(!u.room.val());
        offer_tx(&mut u, &write_rec(0, 999, 999));
        u.tx_valid.next = true;
        for _ in 0..20 {
            una.drive(&mut u);
            assert!(simulate(&mut u, 1000));
            assert!(!u.tx_ready.val());
            tick!(u);
        }
        u.tx_valid.next = false;
        una.snd_una.insert(0, 10);
        assert_eq!(drain(&mut u, &una, 50), (0..10).collect::<Vec<_>>());
        assert!(u.room.val());
        assert_eq!(u.used.val().to_u64(), DEPTH as u64 - 10);
    }

    #[test]
    fn generates_verilog() {
        let mut u = SendCpl::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "send_cpl");
        assert!(v.contains("module send_cpl("));
        if let Ok(dir) = std::env::var("RX_SEND_VERILOG_DIR") {
            std::fs::write(format!("{dir}/send_cpl.v"), &v).unwrap();
        }
    }
}
