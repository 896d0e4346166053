//! Completion writer: one completion record in, one CQE
//! (`rnic_wire::abi::cqe`, 32 octets, owner/phase bit in octet 31) out by
//! DMA write into the CQ's ring, then, when the CQ is armed for it, one
//! event-queue entry (`rnic_wire::abi::mailbox::Event`, 64 octets, kind
//! `CqCompletion`) and an interrupt pulse.
//!
//! * Per-CQ context ([`CQ_BITS`] = 4: 16 CQs, `abi::csr::MAX_CQ`) in one
//!   RAM, `{state[2], armed[2], cons[32], prod[32], log2[5], base[64]}`:
//!   written whole by the firmware (`cfg_*`, CQ create/destroy), consumer
//!   index and arm by the host's CQ doorbell (`db_*`). Every access goes
//!   through one state machine (priority cfg, doorbell, completion), so no
//!   update is ever lost; each port has its own `ready`.
//! * Phase: the owner bit of entry `prod` is 1 on the first pass of the ring
//!   and flips on every wrap, i.e. `!bit(prod, log2)` (abi::cqe).
//! * Order: the CQE request goes out on `dma_wr_*` after the request that
//!   the record came after; with one ordered DMA write stream (the
//!   contract in `docs/rtl.md`) a CQE never lands before the message's
//!   data, and the event never before its CQE.
//! * Arm (`abi::doorbell::CqArm`): 1 = next completion, 2 = next solicited
//!   (`CQE_FLAG_SOLICITED`) or error completion; one event disarms.
//!
//! Defined answers:
//! * CQ not `Valid` (free, or overflowed): the record is dropped,
//!   `cnt_cpl_drop` + 1, nothing written.
//! * CQ full (`prod - cons >= 2^log2`: the next entry is one the host has
//!   not consumed): no CQE is written, the CQ moves to `Overflow` (it writes
//!   nothing more until the firmware configures it again), an event
//!   `CqOverflow` (handle = CQ) is written whether armed or not, and
//!   `cnt_cq_overflow` + 1. The CQ number is also offered to the firmware
//!   (`ovf_*`, exception `CqOverflow`), which moves the QPs completing into
//!   the CQ to Error; until it is taken no further completion record is
//!   accepted.
//! * Event queue full (`eq_prod - eq_cons >= eq_entries`) or disabled
//!   (`eq_entries = 0`): the event is not written, `irq_eq_overflow` pulses
//!   (`abi::csr::INT_EQ_OVERFLOW`), `cnt_eq_overflow` + 1.
//! * Arm values other than 1 and 2 are ignored (`cnt_db_bad`).

use crate::common::k;
use rnic_wire::abi::context::CqState;
use rnic_wire::abi::cqe::{CQE_FLAG_SOLICITED, CQE_SIZE};
use rnic_wire::abi::doorbell::CqArm;
use rnic_wire::abi::mailbox::{EventKind, EVENT_SIZE};
use rust_hdl::prelude::*;

/// CQ index bits (16 CQs).
pub const CQ_BITS: usize = 4;
/// Width of a CQ context record in the RAM.
pub const CTX_BITS: usize = 137;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum CplState {
    Idle,
    DbLoad,
    Load,
    CqeHdr,
    CqeData,
    EvHdr,
    EvData,
}

#[derive(LogicBlock)]
pub struct CplWrite {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- CQ context (firmware)
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_ready: Signal<Out, Bit>,
    pub cfg_cq: Signal<In, Bits<CQ_BITS>>,
    pub cfg_state: Signal<In, Bits<2>>,
    pub cfg_base: Signal<In, Bits<64>>,
    pub cfg_log2: Signal<In, Bits<5>>,
    pub cfg_prod: Signal<In, Bits<32>>,
    pub cfg_cons: Signal<In, Bits<32>>,
    // ---- CQ doorbell (host): consumer index or arm
    pub db_valid: Signal<In, Bit>,
    pub db_ready: Signal<Out, Bit>,
    pub db_cq: Signal<In, Bits<CQ_BITS>>,
    /// 0: `CQ_CONSUMER` write, 1: `CQ_ARM` write.
    pub db_arm: Signal<In, Bit>,
    pub db_value: Signal<In, Bits<32>>,
    // ---- event queue (CSRs EQ_BASE, EQ_ENTRIES, EQ_CONSUMER)
    pub eq_base: Signal<In, Bits<64>>,
    pub eq_entries: Signal<In, Bits<32>>,
    pub eq_cons: Signal<In, Bits<32>>,
    pub eq_prod: Signal<Out, Bits<32>>,
    // ---- completion records
    pub cpl_valid: Signal<In, Bit>,
    pub cpl_ready: Signal<Out, Bit>,
    pub cpl_cq: Signal<In, Bits<CQ_BITS>>,
    pub cpl_wr_id: Signal<In, Bits<64>>,
    pub cpl_byte_len: Signal<In, Bits<32>>,
    pub cpl_qpn: Signal<In, Bits<32>>,
    pub cpl_opcode: Signal<In, Bits<8>>,
    pub cpl_status: Signal<In, Bits<8>>,
    pub cpl_flags: Signal<In, Bits<8>>,
    pub cpl_imm: Signal<In, Bits<32>>,
    pub cpl_term: Signal<In, Bits<32>>,
    // ---- second completion record input (send side: `SendCpl`, i.e.
    // TxSeg's and the Read requester's records); flags, imm and term_cause
    // are 0 for these
    pub cp2_valid: Signal<In, Bit>,
    pub cp2_ready: Signal<Out, Bit>,
    pub cp2_cq: Signal<In, Bits<CQ_BITS>>,
    pub cp2_wr_id: Signal<In, Bits<64>>,
    pub cp2_byte_len: Signal<In, Bits<32>>,
    pub cp2_qpn: Signal<In, Bits<32>>,
    pub cp2_opcode: Signal<In, Bits<8>>,
    pub cp2_status: Signal<In, Bits<8>>,
    // ---- firmware event records (fw_port ev_*): the 64-octet entry as the
    // firmware emitted it, held until `fev_ready` (one clock: written or
    // dropped on an EQ overflow)
    pub fev_valid: Signal<In, Bit>,
    pub fev_ready: Signal<Out, Bit>,
    pub fev_data: Signal<In, Bits<512>>,
    /// `CqContext.armed` of a `cfg_*` write (1, 2; 0 and 3: not armed).
    pub cfg_armed: Signal<In, Bits<2>>,
    // ---- DMA write
    pub dma_wr_valid: Signal<Out, Bit>,
    pub dma_wr_ready: Signal<In, Bit>,
    pub dma_wr_hdr: Signal<Out, Bit>,
    pub dma_wr_len: Signal<Out, Bits<16>>,
    pub dma_wr_data: Signal<Out, Bits<64>>,
    pub dma_wr_keep: Signal<Out, Bits<4>>,
    pub dma_wr_last: Signal<Out, Bit>,
    // ---- CQ overrun record for the firmware (exception `CqOverflow`):
    // held until `ovf_ready`; no completion record is taken meanwhile, so
    // none is lost
    pub ovf_valid: Signal<Out, Bit>,
    pub ovf_ready: Signal<In, Bit>,
    pub ovf_cq: Signal<Out, Bits<CQ_BITS>>,
    // ---- interrupts (one-clock pulses) and counters
    pub irq_event: Signal<Out, Bit>,
    pub irq_eq_overflow: Signal<Out, Bit>,
    pub cnt_cqe: Signal<Out, Bits<32>>,
    pub cnt_event: Signal<Out, Bits<32>>,
    pub cnt_cpl_drop: Signal<Out, Bits<32>>,
    pub cnt_cq_overflow: Signal<Out, Bits<32>>,
    pub cnt_eq_overflow: Signal<Out, Bits<32>>,
    pub cnt_db_bad: Signal<Out, Bits<32>>,
    // ---- constants
    k_valid: Constant<Bits<2>>,
    k_ovf: Constant<Bits<2>>,
    k_arm_next: Constant<Bits<32>>,
    k_arm_sol: Constant<Bits<32>>,
    k_sol: Constant<Bits<8>>,
    k_ev_cpl: Constant<Bits<64>>,
    k_ev_ovf: Constant<Bits<64>>,
    k_cqe_len: Constant<Bits<16>>,
    k_ev_len: Constant<Bits<16>>,
    k_owner: Constant<Bits<64>>,
    k_low56: Constant<Bits<64>>,
    // ---- state
    ram: RAM<Bits<CTX_BITS>, CQ_BITS>,
    state: DFF<CplState>,
    beat: DFF<Bits<3>>,
    cq: DFF<Bits<CQ_BITS>>,
    arm: DFF<Bit>,
    dval: DFF<Bits<32>>,
    r_wr_id: DFF<Bits<64>>,
    r_byte_len: DFF<Bits<32>>,
    r_qpn: DFF<Bits<32>>,
    r_opcode: DFF<Bits<8>>,
    r_status: DFF<Bits<8>>,
    r_flags: DFF<Bits<8>>,
    r_imm: DFF<Bits<32>>,
    r_term: DFF<Bits<32>>,
    addr: DFF<Bits<64>>,
    phase: DFF<Bit>,
    ev: DFF<Bit>,
    ev_kind: DFF<Bits<64>>,
    eqp: DFF<Bits<32>>,
    c_cqe: DFF<Bits<32>>,
    c_event: DFF<Bits<32>>,
    c_drop: DFF<Bits<32>>,
    c_cq_ovf: DFF<Bits<32>>,
    c_eq_ovf: DFF<Bits<32>>,
    c_db_bad: DFF<Bits<32>>,
    /// A CQ overrun waits for the firmware (`ovf_*`), for CQ `ovf_q`.
    ovf_pend: DFF<Bit>,
    ovf_q: DFF<Bits<CQ_BITS>>,
    /// Round robin over the three sources (0: receive records, 1: send-side
    /// records, 2: firmware events): the one to look at first.
    turn: DFF<Bits<2>>,
    /// The event being written is the firmware's (`fev_data`), not a CQ's.
    fw: DFF<Bit>,
    // ---- temporaries
    x_state: Signal<Local, Bits<2>>,
    x_armed: Signal<Local, Bits<2>>,
    x_cons: Signal<Local, Bits<32>>,
    x_prod: Signal<Local, Bits<32>>,
    x_log2: Signal<Local, Bits<5>>,
    x_base: Signal<Local, Bits<64>>,
    n_state: Signal<Local, Bits<2>>,
    n_armed: Signal<Local, Bits<2>>,
    n_cons: Signal<Local, Bits<32>>,
    n_prod: Signal<Local, Bits<32>>,
    n_log2: Signal<Local, Bits<5>>,
    n_base: Signal<Local, Bits<64>>,
    mask: Signal<Local, Bits<32>>,
    used: Signal<Local, Bits<32>>,
    size: Signal<Local, Bits<32>>,
    slot: Signal<Local, Bits<32>>,
    wrapped: Signal<Local, Bit>,
    eq_mask: Signal<Local, Bits<32>>,
    eq_used: Signal<Local, Bits<32>>,
    fire: Signal<Local, Bit>,
    pick_a: Signal<Local, Bit>,
    pick_b: Signal<Local, Bit>,
    pick_e: Signal<Local, Bit>,
}

impl Default for CplWrite {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cfg_valid: Default::default(),
            cfg_ready: Default::default(),
            cfg_cq: Default::default(),
            cfg_state: Default::default(),
            cfg_base: Default::default(),
            cfg_log2: Default::default(),
            cfg_prod: Default::default(),
            cfg_cons: Default::default(),
            db_valid: Default::default(),
            db_ready: Default::default(),
            db_cq: Default::default(),
            db_arm: Default::default(),
            db_value: Default::default(),
            eq_base: Default::default(),
            eq_entries: Default::default(),
            eq_cons: Default::default(),
            eq_prod: Default::default(),
            cpl_valid: Default::default(),
            cpl_ready: Default::default(),
            cpl_cq: Default::default(),
            cpl_wr_id: Default::default(),
            cpl_byte_len: Default::default(),
            cpl_qpn: Default::default(),
            cpl_opcode: Default::default(),
            cpl_status: Default::default(),
            cpl_flags: Default::default(),
            cpl_imm: Default::default(),
            cpl_term: Default::default(),
            cp2_valid: Default::default(),
            cp2_ready: Default::default(),
            cp2_cq: Default::default(),
            cp2_wr_id: Default::default(),
            cp2_byte_len: Default::default(),
            cp2_qpn: Default::default(),
            cp2_opcode: Default::default(),
            cp2_status: Default::default(),
            fev_valid: Default::default(),
            fev_ready: Default::default(),
            fev_data: Default::default(),
            cfg_armed: Default::default(),
            dma_wr_valid: Default::default(),
            dma_wr_ready: Default::default(),
            dma_wr_hdr: Default::default(),
            dma_wr_len: Default::default(),
            dma_wr_data: Default::default(),
            dma_wr_keep: Default::default(),
            dma_wr_last: Default::default(),
            irq_event: Default::default(),
            irq_eq_overflow: Default::default(),
            ovf_valid: Default::default(),
            ovf_ready: Default::default(),
            ovf_cq: Default::default(),
            cnt_cqe: Default::default(),
            cnt_event: Default::default(),
            cnt_cpl_drop: Default::default(),
            cnt_cq_overflow: Default::default(),
            cnt_eq_overflow: Default::default(),
            cnt_db_bad: Default::default(),
            k_valid: k(CqState::Valid as u64),
            k_ovf: k(CqState::Overflow as u64),
            k_arm_next: k(CqArm::NextCompletion as u64),
            k_arm_sol: k(CqArm::Solicited as u64),
            k_sol: k(CQE_FLAG_SOLICITED as u64),
            k_ev_cpl: k(EventKind::CqCompletion as u64),
            k_ev_ovf: k(EventKind::CqOverflow as u64),
            k_cqe_len: k(CQE_SIZE as u64),
            k_ev_len: k(EVENT_SIZE as u64),
            // Bit 0 of the last octet (CQE octet 31, event octet 63).
            k_owner: k(1 << 56),
            // The event's octets 56..62 (beat 7 without the owner octet).
            k_low56: k((1 << 56) - 1),
            ram: Default::default(),
            state: Default::default(),
            beat: Default::default(),
            cq: Default::default(),
            arm: Default::default(),
            dval: Default::default(),
            r_wr_id: Default::default(),
            r_byte_len: Default::default(),
            r_qpn: Default::default(),
            r_opcode: Default::default(),
            r_status: Default::default(),
            r_flags: Default::default(),
            r_imm: Default::default(),
            r_term: Default::default(),
            addr: Default::default(),
            phase: Default::default(),
            ev: Default::default(),
            ev_kind: Default::default(),
            eqp: Default::default(),
            c_cqe: Default::default(),
            c_event: Default::default(),
            c_drop: Default::default(),
            c_cq_ovf: Default::default(),
            c_eq_ovf: Default::default(),
            c_db_bad: Default::default(),
            ovf_pend: Default::default(),
            ovf_q: Default::default(),
            turn: Default::default(),
            fw: Default::default(),
            x_state: Default::default(),
            x_armed: Default::default(),
            x_cons: Default::default(),
            x_prod: Default::default(),
            x_log2: Default::default(),
            x_base: Default::default(),
            n_state: Default::default(),
            n_armed: Default::default(),
            n_cons: Default::default(),
            n_prod: Default::default(),
            n_log2: Default::default(),
            n_base: Default::default(),
            mask: Default::default(),
            used: Default::default(),
            size: Default::default(),
            slot: Default::default(),
            wrapped: Default::default(),
            eq_mask: Default::default(),
            eq_used: Default::default(),
            fire: Default::default(),
            pick_a: Default::default(),
            pick_b: Default::default(),
            pick_e: Default::default(),
        }
    }
}

impl Logic for CplWrite {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, beat, cq, arm, dval, r_wr_id, r_byte_len, r_qpn, r_opcode,
            r_status, r_flags, r_imm, r_term, addr, phase, ev, ev_kind, eqp, c_cqe, c_event,
            c_drop, c_cq_ovf, c_eq_ovf, c_db_bad, ovf_pend, ovf_q, turn, fw
        );
        self.ram.read_clock.next = self.clock.val();
        self.ram.write_clock.next = self.clock.val();

        // ---- context fields as read (valid in DbLoad / Load)
        self.x_base.next = self.ram.read_data.val().get_bits::<64>(0);
        self.x_log2.next = self.ram.read_data.val().get_bits::<5>(64);
        self.x_prod.next = self.ram.read_data.val().get_bits::<32>(69);
        self.x_cons.next = self.ram.read_data.val().get_bits::<32>(101);
        self.x_armed.next = self.ram.read_data.val().get_bits::<2>(133);
        self.x_state.next = self.ram.read_data.val().get_bits::<2>(135);
        self.n_state.next = self.x_state.val();
        self.n_armed.next = self.x_armed.val();
        self.n_cons.next = self.x_cons.val();
        self.n_prod.next = self.x_prod.val();
        self.n_log2.next = self.x_log2.val();
        self.n_base.next = self.x_base.val();
        self.size.next = bits::<32>(1) << self.x_log2.val();
        self.mask.next = self.size.val() - 1;
        self.used.next = self.x_prod.val() - self.x_cons.val();
        self.slot.next = self.x_prod.val() & self.mask.val();
        self.wrapped.next = (self.x_prod.val() & self.size.val()) != 0;
        self.eq_mask.next = self.eq_entries.val() - 1;
        self.eq_used.next = self.eqp.q.val() - self.eq_cons.val();

        // ---- defaults
        self.cfg_ready.next = false;
        self.db_ready.next = false;
        self.cpl_ready.next = false;
        self.cp2_ready.next = false;
        self.fev_ready.next = false;
        self.irq_event.next = false;
        self.irq_eq_overflow.next = false;
        self.ram.read_address.next = self.cq.q.val();
        self.ram.write_enable.next = false;
        self.ram.write_address.next = self.cq.q.val();
        self.dma_wr_valid.next = false;
        self.dma_wr_hdr.next = false;
        self.dma_wr_len.next = self.k_cqe_len.val();
        self.dma_wr_data.next = self.addr.q.val();
        self.dma_wr_keep.next = 8.into();
        self.dma_wr_last.next = false;
        self.fire.next = false;

        self.eq_prod.next = self.eqp.q.val();
        self.cnt_cqe.next = self.c_cqe.q.val();
        self.cnt_event.next = self.c_event.q.val();
        self.cnt_cpl_drop.next = self.c_drop.q.val();
        self.cnt_cq_overflow.next = self.c_cq_ovf.q.val();
        self.cnt_eq_overflow.next = self.c_eq_ovf.q.val();
        self.cnt_db_bad.next = self.c_db_bad.q.val();
        self.ovf_valid.next = self.ovf_pend.q.val();
        self.ovf_cq.next = self.ovf_q.q.val();
        if self.ovf_pend.q.val() & self.ovf_ready.val() {
            self.ovf_pend.d.next = false;
        }

        // Round robin over receive records (a), send-side records (b) and
        // firmware events (e), starting at `turn`.
        self.pick_a.next = false;
        self.pick_b.next = false;
        self.pick_e.next = false;
        if self.turn.q.val() == 0 {
            if self.cpl_valid.val() {
                self.pick_a.next = true;
            } else if self.cp2_valid.val() {
                self.pick_b.next = true;
            } else if self.fev_valid.val() {
                self.pick_e.next = true;
            }
        } else if self.turn.q.val() == 1 {
            if self.cp2_valid.val() {
                self.pick_b.next = true;
            } else if self.fev_valid.val() {
                self.pick_e.next = true;
            } else if self.cpl_valid.val() {
                self.pick_a.next = true;
            }
        } else if self.fev_valid.val() {
            self.pick_e.next = true;
        } else if self.cpl_valid.val() {
            self.pick_a.next = true;
        } else if self.cp2_valid.val() {
            self.pick_b.next = true;
        }

        // The firmware has not taken the last overrun yet: no completion
        // record is taken (a second overrun would have nowhere to go).
        if self.ovf_pend.q.val() {
            self.pick_a.next = false;
            self.pick_b.next = false;
        }

        match self.state.q.val() {
            CplState::Idle => {
                if self.cfg_valid.val() {
                    // A whole context, no read needed.
                    self.cfg_ready.next = true;
                    self.ram.write_enable.next = true;
                    self.ram.write_address.next = self.cfg_cq.val();
                    self.n_state.next = self.cfg_state.val();
                    self.n_armed.next = 0.into();
                    if (self.cfg_armed.val() == self.k_arm_next.val().get_bits::<2>(0))
                        | (self.cfg_armed.val() == self.k_arm_sol.val().get_bits::<2>(0))
                    {
                        self.n_armed.next = self.cfg_armed.val();
                    }
                    self.n_cons.next = self.cfg_cons.val();
                    self.n_prod.next = self.cfg_prod.val();
                    self.n_log2.next = self.cfg_log2.val();
                    self.n_base.next = self.cfg_base.val();
                } else if self.db_valid.val() {
                    self.db_ready.next = true;
                    self.ram.read_address.next = self.db_cq.val();
                    self.cq.d.next = self.db_cq.val();
                    self.arm.d.next = self.db_arm.val();
                    self.dval.d.next = self.db_value.val();
                    self.state.d.next = CplState::DbLoad;
                } else if self.pick_a.val() {
                    self.cpl_ready.next = true;
                    self.turn.d.next = 1.into();
                    self.fw.d.next = false;
                    self.ram.read_address.next = self.cpl_cq.val();
                    self.cq.d.next = self.cpl_cq.val();
                    self.r_wr_id.d.next = self.cpl_wr_id.val();
                    self.r_byte_len.d.next = self.cpl_byte_len.val();
                    self.r_qpn.d.next = self.cpl_qpn.val();
                    self.r_opcode.d.next = self.cpl_opcode.val();
                    self.r_status.d.next = self.cpl_status.val();
                    self.r_flags.d.next = self.cpl_flags.val();
                    self.r_imm.d.next = self.cpl_imm.val();
                    self.r_term.d.next = self.cpl_term.val();
                    self.state.d.next = CplState::Load;
                } else if self.pick_b.val() {
                    self.cp2_ready.next = true;
                    self.turn.d.next = 2.into();
                    self.fw.d.next = false;
                    self.ram.read_address.next = self.cp2_cq.val();
                    self.cq.d.next = self.cp2_cq.val();
                    self.r_wr_id.d.next = self.cp2_wr_id.val();
                    self.r_byte_len.d.next = self.cp2_byte_len.val();
                    self.r_qpn.d.next = self.cp2_qpn.val();
                    self.r_opcode.d.next = self.cp2_opcode.val();
                    self.r_status.d.next = self.cp2_status.val();
                    self.r_flags.d.next = 0.into();
                    self.r_imm.d.next = 0.into();
                    self.r_term.d.next = 0.into();
                    self.state.d.next = CplState::Load;
                } else if self.pick_e.val() {
                    // A firmware event: no CQ involved; popped once written
                    // (or dropped on an EQ overflow).
                    self.turn.d.next = 0.into();
                    self.fw.d.next = true;
                    self.state.d.next = CplState::EvHdr;
                }
            }
            CplState::DbLoad => {
                self.state.d.next = CplState::Idle;
                self.ram.write_enable.next = true;
                if self.arm.q.val() {
                    if (self.dval.q.val() == self.k_arm_next.val())
                        | (self.dval.q.val() == self.k_arm_sol.val())
                    {
                        self.n_armed.next = self.dval.q.val().get_bits::<2>(0);
                    } else {
                        self.c_db_bad.d.next = self.c_db_bad.q.val() + 1;
                    }
                } else {
                    self.n_cons.next = self.dval.q.val();
                }
            }
            CplState::Load => {
                self.ev_kind.d.next = self.k_ev_cpl.val();
                self.ev.d.next = false;
                if self.x_state.val() != self.k_valid.val() {
                    self.c_drop.d.next = self.c_drop.q.val() + 1;
                    self.state.d.next = CplState::Idle;
                } else if self.used.val() >= self.size.val() {
                    // Overrun: never write over an entry the host owns.
                    self.ram.write_enable.next = true;
                    self.n_state.next = self.k_ovf.val();
                    self.c_cq_ovf.d.next = self.c_cq_ovf.q.val() + 1;
                    self.ovf_pend.d.next = true;
                    self.ovf_q.d.next = self.cq.q.val();
                    self.ev_kind.d.next = self.k_ev_ovf.val();
                    self.state.d.next = CplState::EvHdr;
                } else {
                    self.ram.write_enable.next = true;
                    self.n_prod.next = self.x_prod.val() + 1;
                    self.addr.d.next =
                        self.x_base.val() + (bit_cast::<64, 32>(self.slot.val()) << 5);
                    self.phase.d.next = !self.wrapped.val();
                    if (self.x_armed.val() == self.k_arm_next.val().get_bits::<2>(0))
                        | ((self.x_armed.val() == self.k_arm_sol.val().get_bits::<2>(0))
                            & (((self.r_flags.q.val() & self.k_sol.val()) != 0)
                                | (self.r_status.q.val() != 0)))
                    {
                        self.ev.d.next = true;
                        self.n_armed.next = 0.into();
                    }
                    self.state.d.next = CplState::CqeHdr;
                }
            }
            CplState::CqeHdr => {
                self.dma_wr_valid.next = true;
                self.dma_wr_hdr.next = true;
                if self.dma_wr_ready.val() {
                    self.beat.d.next = 0.into();
                    self.state.d.next = CplState::CqeData;
                }
            }
            CplState::CqeData => {
                self.dma_wr_valid.next = true;
                // abi::cqe: wr_id | byte_len, qpn | opcode, status, flags,
                // rsvd, imm_or_inv | term_cause, rsvd, owner.
                if self.beat.q.val() == 0 {
                    self.dma_wr_data.next = self.r_wr_id.q.val();
                } else if self.beat.q.val() == 1 {
                    self.dma_wr_data.next = (bit_cast::<64, 32>(self.r_qpn.q.val()) << 32)
                        | bit_cast::<64, 32>(self.r_byte_len.q.val());
                } else if self.beat.q.val() == 2 {
                    self.dma_wr_data.next = (bit_cast::<64, 32>(self.r_imm.q.val()) << 32)
                        | (bit_cast::<64, 8>(self.r_flags.q.val()) << 16)
                        | (bit_cast::<64, 8>(self.r_status.q.val()) << 8)
                        | bit_cast::<64, 8>(self.r_opcode.q.val());
                } else {
                    self.dma_wr_data.next = bit_cast::<64, 32>(self.r_term.q.val());
                    if self.phase.q.val() {
                        self.dma_wr_data.next =
                            self.k_owner.val() | bit_cast::<64, 32>(self.r_term.q.val());
                    }
                    self.dma_wr_last.next = true;
                }
                if self.dma_wr_ready.val() {
                    self.beat.d.next = self.beat.q.val() + 1;
                    if self.beat.q.val() == 3 {
                        self.c_cqe.d.next = self.c_cqe.q.val() + 1;
                        if self.ev.q.val() {
                            self.state.d.next = CplState::EvHdr;
                        } else {
                            self.state.d.next = CplState::Idle;
                        }
                    }
                }
            }
            CplState::EvHdr => {
                if (self.eq_entries.val() == 0) | (self.eq_used.val() >= self.eq_entries.val()) {
                    self.irq_eq_overflow.next = true;
                    self.c_eq_ovf.d.next = self.c_eq_ovf.q.val() + 1;
                    self.fev_ready.next = self.fw.q.val();
                    self.state.d.next = CplState::Idle;
                } else {
                    self.dma_wr_valid.next = true;
                    self.dma_wr_hdr.next = true;
                    self.dma_wr_len.next = self.k_ev_len.val();
                    self.dma_wr_data.next = self.eq_base.val()
                        + (bit_cast::<64, 32>(self.eqp.q.val() & self.eq_mask.val()) << 6);
                    if self.dma_wr_ready.val() {
                        self.beat.d.next = 0.into();
                        self.state.d.next = CplState::EvData;
                    }
                }
            }
            CplState::EvData => {
                self.dma_wr_valid.next = true;
                // abi::mailbox::Event: kind at 0, handle at 4, owner at 63.
                self.dma_wr_data.next = 0.into();
                if self.fw.q.val() {
                    // The firmware's entry, octet i in bits 8i+7..8i.
                    if self.beat.q.val() == 0 {
                        self.dma_wr_data.next = self.fev_data.val().get_bits::<64>(0);
                    } else if self.beat.q.val() == 1 {
                        self.dma_wr_data.next = self.fev_data.val().get_bits::<64>(64);
                    } else if self.beat.q.val() == 2 {
                        self.dma_wr_data.next = self.fev_data.val().get_bits::<64>(128);
                    } else if self.beat.q.val() == 3 {
                        self.dma_wr_data.next = self.fev_data.val().get_bits::<64>(192);
                    } else if self.beat.q.val() == 4 {
                        self.dma_wr_data.next = self.fev_data.val().get_bits::<64>(256);
                    } else if self.beat.q.val() == 5 {
                        self.dma_wr_data.next = self.fev_data.val().get_bits::<64>(320);
                    } else if self.beat.q.val() == 6 {
                        self.dma_wr_data.next = self.fev_data.val().get_bits::<64>(384);
                    } else {
                        // the owner octet is the device's (below)
                        self.dma_wr_data.next =
                            self.fev_data.val().get_bits::<64>(448) & self.k_low56.val();
                    }
                } else if self.beat.q.val() == 0 {
                    self.dma_wr_data.next =
                        (bit_cast::<64, 4>(self.cq.q.val()) << 32) | self.ev_kind.q.val();
                }
                if self.beat.q.val() == 7 {
                    self.dma_wr_last.next = true;
                    self.fire.next = true;
                }
                if self.dma_wr_ready.val() {
                    self.beat.d.next = self.beat.q.val() + 1;
                    if self.fire.val() {
                        self.eqp.d.next = self.eqp.q.val() + 1;
                        self.c_event.d.next = self.c_event.q.val() + 1;
                        self.irq_event.next = true;
                        self.fev_ready.next = self.fw.q.val();
                        self.state.d.next = CplState::Idle;
                    }
                }
            }
        }
        // The record written (after every update of the n_* fields).
        self.ram.write_data.next = (bit_cast::<137, 2>(self.n_state.val()) << 135)
            | (bit_cast::<137, 2>(self.n_armed.val()) << 133)
            | (bit_cast::<137, 32>(self.n_cons.val()) << 101)
            | (bit_cast::<137, 32>(self.n_prod.val()) << 69)
            | (bit_cast::<137, 5>(self.n_log2.val()) << 64)
            | bit_cast::<137, 64>(self.n_base.val());
        // The owner octet of the event (beat 7): !bit(eq_prod, log2 entries),
        // i.e. 1 on the first pass; computed as (prod & entries) == 0.
        if (self.state.q.val() == CplState::EvData)
            & (self.beat.q.val() == 7)
            & ((self.eqp.q.val() & self.eq_entries.val()) == 0)
        {
            self.dma_wr_data.next = self.dma_wr_data.val() | self.k_owner.val();
        }

        if self.reset.val() {
            self.state.d.next = CplState::Idle;
            self.turn.d.next = 0.into();
            self.fw.d.next = false;
            self.eqp.d.next = 0.into();
            self.c_cqe.d.next = 0.into();
            self.c_event.d.next = 0.into();
            self.c_drop.d.next = 0.into();
            self.c_cq_ovf.d.next = 0.into();
            self.c_eq_ovf.d.next = 0.into();
            self.c_db_bad.d.next = 0.into();
            self.ovf_pend.d.next = false;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use rnic_wire::abi::cqe::{Cqe, WcOpcode, WcStatus, CQE_FLAG_WITH_INV};
    use rnic_wire::abi::mailbox::Event;
    use std::collections::HashMap;

    /// Host memory behind the DMA write contract of `docs/rtl.md`: checks
    /// the request framing and records every octet written, in order.
    #[derive(Default)]
    pub(crate) struct DmaWrSink {
        pub mem: HashMap<u64, u8>,
        /// (address, length) of every request, in order.
        pub reqs: Vec<(u64, usize)>,
        cur: Option<(u64, usize, usize)>,
    }

    impl DmaWrSink {
        pub fn beat(&mut self, hdr: bool, len: u64, data: u64, keep: u64, last: bool) {
            if hdr {
                assert!(self.cur.is_none(), "DMA header inside a request");
                let l = len as usize;
                assert!((1..=4096).contains(&l), "DMA length {l}");
                assert_eq!(data / 4096, (data + l as u64 - 1) / 4096, "crosses 4 KiB");
                self.reqs.push((data, l));
                self.cur = Some((data, l, 0));
                return;
            }
            let (a, l, got) = self.cur.take().expect("DMA data beat without a header");
            let want = (l - got).min(8);
            assert_eq!(keep as usize, want, "keep");
            assert_eq!(last, got + want == l, "last");
            for i in 0..want {
                self.mem
                    .insert(a + (got + i) as u64, (data >> (8 * i)) as u8);
            }
            if !last {
                self.cur = Some((a, l, got + want));
            }
        }
        pub fn read(&self, a: u64, n: usize) -> Vec<u8> {
            (0..n)
                .map(|i| *self.mem.get(&(a + i as u64)).unwrap_or(&0))
                .collect()
        }
        pub fn idle(&self) -> bool {
            self.cur.is_none()
        }
    }

    fn bench() -> CplWrite {
        let mut b = CplWrite::default();
        b.clock.connect();
        b.reset.connect();
        b.cfg_valid.connect();
        b.cfg_cq.connect();
        b.cfg_state.connect();
        b.cfg_base.connect();
        b.cfg_log2.connect();
        b.cfg_prod.connect();
        b.cfg_cons.connect();
        b.db_valid.connect();
        b.db_cq.connect();
        b.db_arm.connect();
        b.db_value.connect();
        b.eq_base.connect();
        b.eq_entries.connect();
        b.eq_cons.connect();
        b.cpl_valid.connect();
        b.cpl_cq.connect();
        b.cpl_wr_id.connect();
        b.cpl_byte_len.connect();
        b.cpl_qpn.connect();
        b.cpl_opcode.connect();
        b.cpl_status.connect();
        b.cpl_flags.connect();
        b.cpl_imm.connect();
        b.cpl_term.connect();
        b.cp2_valid.connect();
        b.cp2_cq.connect();
        b.cp2_wr_id.connect();
        b.cp2_byte_len.connect();
        b.cp2_qpn.connect();
        b.cp2_opcode.connect();
        b.cp2_status.connect();
        b.fev_valid.connect();
        b.fev_data.connect();
        b.cfg_armed.connect();
        b.dma_wr_ready.connect();
        b.ovf_ready.connect();
        b.connect_all();
        b.reset.next = true;
        tick!(b);
        tick!(b);
        b.reset.next = false;
        b
    }

    /// Runs the block for `n` clocks with a random DMA sink; returns the
    /// interrupt pulses seen (event, EQ overflow).
    fn run(b: &mut CplWrite, sink: &mut DmaWrSink, rng: &mut Rng, n: usize) -> (usize, usize) {
        let (mut ev, mut ovf) = (0, 0);
        for _ in 0..n {
            let r = rng.below(100) < 70;
            b.dma_wr_ready.next = r;
            assert!(simulate(b, 1000));
            if b.dma_wr_valid.val() && r {
                sink.beat(
                    b.dma_wr_hdr.val(),
                    b.dma_wr_len.val().to_u64(),
                    b.dma_wr_data.val().to_u64(),
                    b.dma_wr_keep.val().to_u64(),
                    b.dma_wr_last.val(),
                );
            }
            ev += b.irq_event.val() as usize;
            ovf += b.irq_eq_overflow.val() as usize;
            tick!(*b);
            b.cfg_valid.next = false;
            b.db_valid.next = false;
            b.cpl_valid.next = false;
            b.cp2_valid.next = false;
            b.fev_valid.next = false;
        }
        (ev, ovf)
    }

    /// Presents one request (the caller set its fields and `*_valid`) until
    /// the block takes it.
    fn offer(
        b: &mut CplWrite,
        sink: &mut DmaWrSink,
        rng: &mut Rng,
        which: usize,
    ) -> (usize, usize) {
        let (mut ev, mut ovf) = (0, 0);
        for _ in 0..100 {
            assert!(simulate(b, 1000));
            let taken = match which {
                0 => b.cfg_ready.val(),
                1 => b.db_ready.val(),
                2 => b.cpl_ready.val(),
                3 => b.cp2_ready.val(),
                _ => b.fev_ready.val(),
            };
            let r = rng.below(100) < 70;
            b.dma_wr_ready.next = r;
            assert!(simulate(b, 1000));
            if b.dma_wr_valid.val() && r {
                sink.beat(
                    b.dma_wr_hdr.val(),
                    b.dma_wr_len.val().to_u64(),
                    b.dma_wr_data.val().to_u64(),
                    b.dma_wr_keep.val().to_u64(),
                    b.dma_wr_last.val(),
                );
            }
            ev += b.irq_event.val() as usize;
            ovf += b.irq_eq_overflow.val() as usize;
            tick!(*b);
            if taken {
                b.cfg_valid.next = false;
                b.db_valid.next = false;
                b.cpl_valid.next = false;
                b.cp2_valid.next = false;
                b.fev_valid.next = false;
                return (ev, ovf);
            }
        }
        panic!("request {which} not taken");
    }

    #[derive(Clone, Copy, Default)]
    struct CqModel {
        valid: bool,
        overflow: bool,
        base: u64,
        log2: u8,
        prod: u32,
        cons: u32,
        armed: u32,
    }

    #[test]
    fn cqes_events_and_overruns_match_the_abi() {
        let mut rng = Rng::new(31);
        let mut b = bench();
        let mut sink = DmaWrSink::default();
        let eq_base = 0x9000_0000u64;
        let eq_entries = 4u32;
        let mut eq_prod = 0u32;
        let mut eq_cons = 0u32;
        b.eq_base.next = eq_base.into();
        b.eq_entries.next = (eq_entries as u64).into();
        b.eq_cons.next = 0.into();
        let mut cqs = [CqModel::default(); 16];
        // CQs 0, 1, 5 in use (4, 8, 2 entries; CQ 1 starts near the u32
        // wrap of its indices); the others free.
        for (cq, log2, start) in [(0usize, 2u8, 0u32), (1, 3, u32::MAX - 5), (5, 1, 0)] {
            let base = 0x1_0000_0000 + cq as u64 * 0x1000;
            cqs[cq] = CqModel {
                valid: true,
                base,
                log2,
                prod: start,
                cons: start,
                ..Default::default()
            };
            b.cfg_valid.next = true;
            b.cfg_cq.next = (cq as u64).into();
            b.cfg_state.next = (CqState::Valid as u64).into();
            b.cfg_base.next = base.into();
            b.cfg_log2.next = (log2 as u64).into();
            b.cfg_prod.next = (start as u64).into();
            b.cfg_cons.next = (start as u64).into();
            offer(&mut b, &mut sink, &mut rng, 0);
        }
        let (mut n_cqe, mut n_ev, mut n_drop, mut n_ovf, mut n_eq_ovf, mut n_bad) =
            (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
        let mut seen_ovf = false;
        let mut n_fw_ev = 0;
        for step in 0..400 {
            let cq = [0usize, 0, 1, 1, 1, 5, 3][rng.below(7)];
            match rng.below(12) {
                0..=4 => {
                    // Port a (receive records) or b (send side: no flags,
                    // immediate or Terminate cause).
                    let port_b = rng.below(2) == 0;
                    let mut rec = Cqe {
                        wr_id: rng.next_u64(),
                        byte_len: rng.next_u64() as u32,
                        qpn: rng.below(64) as u32,
                        opcode: [WcOpcode::Recv, WcOpcode::Send][rng.below(2)],
                        status: [
                            WcStatus::Success,
                            WcStatus::Success,
                            WcStatus::LocalLengthError,
                        ][rng.below(3)],
                        flags: [0, CQE_FLAG_SOLICITED, CQE_FLAG_WITH_INV][rng.below(3)],
                        imm_or_inv: rng.next_u64() as u32,
                        term_cause: rng.next_u64() as u32 & 0x8000_ffff,
                        phase: false,
                    };
                    if port_b {
                        rec.opcode =
                            [WcOpcode::Send, WcOpcode::RdmaWrite, WcOpcode::RdmaRead][rng.below(3)];
                        rec.flags = 0;
                        rec.imm_or_inv = 0;
                        rec.term_cause = 0;
                        b.cp2_valid.next = true;
                        b.cp2_cq.next = (cq as u64).into();
                        b.cp2_wr_id.next = rec.wr_id.into();
                        b.cp2_byte_len.next = (rec.byte_len as u64).into();
                        b.cp2_qpn.next = (rec.qpn as u64).into();
                        b.cp2_opcode.next = (rec.opcode as u64).into();
                        b.cp2_status.next = (rec.status as u64).into();
                    }
                    b.cpl_valid.next = !port_b;
                    b.cpl_cq.next = (cq as u64).into();
                    b.cpl_wr_id.next = rec.wr_id.into();
                    b.cpl_byte_len.next = (rec.byte_len as u64).into();
                    b.cpl_qpn.next = (rec.qpn as u64).into();
                    b.cpl_opcode.next = (rec.opcode as u64).into();
                    b.cpl_status.next = (rec.status as u64).into();
                    b.cpl_flags.next = (rec.flags as u64).into();
                    b.cpl_imm.next = (rec.imm_or_inv as u64).into();
                    b.cpl_term.next = (rec.term_cause as u64).into();
                    let nreq = sink.reqs.len();
                    let n_drop_before = n_drop;
                    offer(&mut b, &mut sink, &mut rng, 2 + port_b as usize);
                    let (ev, eqo) = run(&mut b, &mut sink, &mut rng, 40);
                    assert!(sink.idle());
                    let m = &mut cqs[cq];
                    let mut event = None;
                    if !m.valid || m.overflow {
                        n_drop += 1;
                        assert_eq!(sink.reqs.len(), nreq, "step {step}: write to a dead CQ");
                    } else if m.prod.wrapping_sub(m.cons) >= 1 << m.log2 {
                        m.overflow = true;
                        seen_ovf = true;
                        n_ovf += 1;
                        event = Some((EventKind::CqOverflow, cq));
                        // The firmware's record: the CQ, offered until
                        // taken; no completion record is taken meanwhile.
                        assert!(b.ovf_valid.val(), "step {step}: overrun record");
                        assert_eq!(b.ovf_cq.val().to_u64(), cq as u64);
                        b.cp2_valid.next = true;
                        b.dma_wr_ready.next = false;
                        assert!(simulate(&mut b, 1000));
                        assert!(!b.cp2_ready.val(), "step {step}: taken while pending");
                        b.cp2_valid.next = false;
                        b.ovf_ready.next = true;
                        tick!(b);
                        b.ovf_ready.next = false;
                        assert!(simulate(&mut b, 1000));
                        assert!(!b.ovf_valid.val(), "step {step}: record taken once");
                    } else {
                        let size = 1u32 << m.log2;
                        let a = m.base + ((m.prod & (size - 1)) as u64) * 32;
                        assert_eq!(sink.reqs[nreq], (a, CQE_SIZE), "step {step}: CQE request");
                        let got = Cqe::parse(&sink.read(a, CQE_SIZE)).expect("CQE parses");
                        let phase = (m.prod >> m.log2) & 1 == 0;
                        assert_eq!(got, Cqe { phase, ..rec }, "step {step}");
                        // The phase the host expects at its consumer index.
                        assert_eq!(Cqe::phase_of(&sink.read(a, CQE_SIZE)).unwrap(), phase);
                        m.prod = m.prod.wrapping_add(1);
                        n_cqe += 1;
                        let fire = m.armed == 1
                            || (m.armed == 2
                                && (rec.flags & CQE_FLAG_SOLICITED != 0
                                    || rec.status != WcStatus::Success));
                        if fire {
                            m.armed = 0;
                            event = Some((EventKind::CqCompletion, cq));
                        }
                    }
                    let want_req = match event {
                        None => 0,
                        Some(_) if eq_prod.wrapping_sub(eq_cons) >= eq_entries => {
                            n_eq_ovf += 1;
                            assert_eq!((ev, eqo), (0, 1), "step {step}: EQ overflow pulse");
                            0
                        }
                        Some((kind, h)) => {
                            let a = eq_base + ((eq_prod % eq_entries) as u64) * 64;
                            let e = Event::parse(&sink.read(a, EVENT_SIZE)).expect("event parses");
                            assert_eq!(e.kind, kind, "step {step}");
                            assert_eq!(e.handle, h as u32);
                            assert_eq!(e.phase, (eq_prod / eq_entries).is_multiple_of(2));
                            assert_eq!(*sink.reqs.last().unwrap(), (a, EVENT_SIZE));
                            eq_prod += 1;
                            n_ev += 1;
                            assert_eq!((ev, eqo), (1, 0), "step {step}: event pulse");
                            1
                        }
                    };
                    let cqe_req = matches!(event, None | Some((EventKind::CqCompletion, _)))
                        && n_drop_before == n_drop;
                    assert_eq!(sink.reqs.len() - nreq, cqe_req as usize + want_req);
                }
                5 | 6 => {
                    // The host consumes some entries; the firmware
                    // re-creates an overflowed CQ (empty, same ring).
                    let m = &mut cqs[cq];
                    if m.valid && m.overflow {
                        m.overflow = false;
                        m.cons = m.prod;
                        // CqContext.armed as written (3 is not a CqArm: 0)
                        let armed = rng.below(4) as u32;
                        m.armed = if armed == 3 { 0 } else { armed };
                        b.cfg_armed.next = (armed as u64).into();
                        b.cfg_valid.next = true;
                        b.cfg_cq.next = (cq as u64).into();
                        b.cfg_state.next = (CqState::Valid as u64).into();
                        b.cfg_base.next = m.base.into();
                        b.cfg_log2.next = (m.log2 as u64).into();
                        b.cfg_prod.next = (m.prod as u64).into();
                        b.cfg_cons.next = (m.prod as u64).into();
                        offer(&mut b, &mut sink, &mut rng, 0);
                        continue;
                    }
                    let avail = m.prod.wrapping_sub(m.cons);
                    let c = m.cons.wrapping_add(rng.below(avail as usize + 1) as u32);
                    m.cons = c;
                    b.db_valid.next = true;
                    b.db_cq.next = (cq as u64).into();
                    b.db_arm.next = false;
                    b.db_value.next = (c as u64).into();
                    offer(&mut b, &mut sink, &mut rng, 1);
                }
                7 | 8 => {
                    let v = [1u32, 2, 2, 7][rng.below(4)];
                    if v == 7 {
                        n_bad += 1;
                    } else {
                        cqs[cq].armed = v;
                    }
                    b.db_valid.next = true;
                    b.db_cq.next = (cq as u64).into();
                    b.db_arm.next = true;
                    b.db_value.next = (v as u64).into();
                    offer(&mut b, &mut sink, &mut rng, 1);
                }
                10 | 11 => {
                    // A firmware event (e.g. a CM event), through the same
                    // EQ producer index.
                    let e = Event {
                        kind: [
                            EventKind::ConnectRequest,
                            EventKind::Established,
                            EventKind::Closed,
                        ][rng.below(3)],
                        handle: rng.next_u64() as u32,
                        status: rng.next_u64() as u32,
                        peer_ip: rng.next_u64() as u32,
                        peer_port: rng.next_u64() as u16,
                        local_port: rng.next_u64() as u16,
                        ird: rng.next_u64() as u16,
                        ord: rng.next_u64() as u16,
                        private_data_len: rng.below(513) as u16,
                        mpa_revision: 1,
                        crc: rng.below(2) == 0,
                        markers: rng.below(2) == 0,
                        listen_id: rng.next_u64() as u32,
                        // the firmware's phase is not the device's: overwritten
                        phase: rng.below(2) == 0,
                    };
                    let mut raw = [0u8; EVENT_SIZE];
                    e.emit(&mut raw).unwrap();
                    // stray bits in the owner octet are cleared too
                    raw[EVENT_SIZE - 1] |= 0xF0;
                    let mut v = Bits::<512>::default();
                    for (i, &o) in raw.iter().enumerate() {
                        v = v | (bit_cast::<512, 8>((o as u64).into()) << (8 * i as u64));
                    }
                    b.fev_valid.next = true;
                    b.fev_data.next = v;
                    let nreq = sink.reqs.len();
                    let (ev, eqo) = offer(&mut b, &mut sink, &mut rng, 4);
                    let (ev2, eqo2) = run(&mut b, &mut sink, &mut rng, 4);
                    assert!(sink.idle());
                    if eq_prod.wrapping_sub(eq_cons) >= eq_entries {
                        n_eq_ovf += 1;
                        assert_eq!((ev + ev2, eqo + eqo2), (0, 1), "step {step}: EQ overflow");
                        assert_eq!(sink.reqs.len(), nreq, "step {step}: dropped event written");
                    } else {
                        let a = eq_base + ((eq_prod % eq_entries) as u64) * 64;
                        assert_eq!(sink.reqs[nreq..], [(a, EVENT_SIZE)], "step {step}");
                        let got = sink.read(a, EVENT_SIZE);
                        let phase = (eq_prod / eq_entries).is_multiple_of(2);
                        assert_eq!(Event::parse(&got).unwrap(), Event { phase, ..e });
                        assert_eq!(got[..63], raw[..63], "step {step}: octets as emitted");
                        assert_eq!(got[63], phase as u8, "step {step}: owner octet");
                        eq_prod += 1;
                        n_ev += 1;
                        n_fw_ev += 1;
                        assert_eq!((ev + ev2, eqo + eqo2), (1, 0), "step {step}: event pulse");
                    }
                }
                _ => {
                    // The host consumes events, now and then.
                    if rng.below(3) == 0 {
                        eq_cons = eq_prod;
                    }
                    b.eq_cons.next = (eq_cons as u64).into();
                }
            }
            run(&mut b, &mut sink, &mut rng, 2);
        }
        assert!(
            seen_ovf && n_ev > 5 && n_eq_ovf > 0 && n_cqe > 50 && n_fw_ev > 5,
            "coverage: {seen_ovf} {n_ev} {n_eq_ovf} {n_cqe} {n_drop} {n_fw_ev}"
        );
        assert_eq!(b.cnt_cqe.val().to_u64(), n_cqe);
        assert_eq!(b.cnt_event.val().to_u64(), n_ev);
        assert_eq!(b.cnt_cpl_drop.val().to_u64(), n_drop);
        assert_eq!(b.cnt_cq_overflow.val().to_u64(), n_ovf);
        assert_eq!(b.cnt_eq_overflow.val().to_u64(), n_eq_ovf);
        assert_eq!(b.cnt_db_bad.val().to_u64(), n_bad);
        assert_eq!(b.eq_prod.val().to_u64(), eq_prod as u64);
        // Nothing outside the rings.
        for &(a, l) in &sink.reqs {
            let in_cq = cqs
                .iter()
                .any(|m| m.valid && a >= m.base && a + l as u64 <= m.base + (32 << m.log2));
            let in_eq = a >= eq_base && a + l as u64 <= eq_base + 64 * eq_entries as u64;
            assert!(in_cq || in_eq, "write at {a:#x}");
        }
    }

    #[test]
    fn generates_verilog() {
        let mut u = CplWrite::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "cpl_write");
        assert!(v.contains("module cpl_write("));
        if let Ok(dir) = std::env::var("RX_SEND_VERILOG_DIR") {
            std::fs::write(format!("{dir}/cpl_write.v"), &v).unwrap();
        }
    }
}
