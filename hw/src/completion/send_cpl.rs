//! Send-side completions: turns `TxSeg`'s completion records (one per
//! signaled WQE, one per refused WQE) and the RDMA Read requester's records
//! (one per completed RDMA Read WQE) into completion records for the QP's
//! SEND CQ, in the shape of `CplWrite`'s second record input (`cp2_*`), so
//! that every CQE of every CQ goes through the one `CplWrite` (one producer
//! index per ring).
//!
//! * Per QP (64) the send CQ from the firmware's `QpContext` write
//!   (`cfg_*`: `send_cqn`, octet 8); a CQ number the core has no context for
//!   (>= 2^[`CQ_BITS`]) marks the QP as having none.
//! * The two inputs are served round robin (the one not served last wins
//!   when both wait); each record is held by its source until `*_ready`.
//! * Work-completion opcode (`rnic_wire::abi::cqe::WcOpcode`) from the WQE
//!   opcode (`abi::wqe::SendOpcode`): RDMA Write (with or without
//!   immediate) → `RdmaWrite`, the Send family → `Send`, RDMA Read →
//!   `RdmaRead`; `byte_len` = the WQE's length on success, 0 on error.
//!   Read-requester records are `RdmaRead` with their own length and status.
//! * An RDMA Read WQE is complete only when its Read Response data have been
//!   placed (RFC 5040 §4.4, §5.2: the Read is a request/response pair), so
//!   TxSeg's successful record for it (the Read Request was sent) writes no
//!   CQE: the Read requester's record completes it. A refused Read WQE
//!   (status not 0) completes here.
//!
//! * A record of a QP whose send side is off (its last `QpContext` write
//!   was not RTS or Closing: `cfg_on` low) writes no CQE: taken and dropped,
//!   `cnt_off` + 1. The host flushes that QP's work requests itself
//!   (docs/driver.md "QP error flush"), so a late device CQE would be a
//!   second completion of one WR.
//!
//! Defined answers: a record for a QP without a send CQ (never configured, or
//! a `send_cqn` >= 16) is taken and dropped, `cnt_no_cq` + 1. A CQ that is
//! not valid, full or overflowed is `CplWrite`'s (dropped and counted /
//! `CqOverflow` event).

use crate::common::k;
use crate::completion::cpl_write::CQ_BITS;
use rnic_wire::abi::cqe::WcOpcode;
use rnic_wire::abi::wqe::SendOpcode;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum SendCplState {
    Idle,
    Look,
}

/// The completion router of the sim profile (64 QPs).
pub type SendCpl = SendCplN<{ crate::profile::PR_SIM }>;

/// `SendCplN<PR>`: the per-QP table is `PROFILES[PR].fw.n_qp` deep
/// (`QpRam`: 16 on the board); a configuration write of a QP beyond the
/// profile is ignored.
#[derive(LogicBlock)]
pub struct SendCplN<const PR: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- QP's send CQ (firmware QpContext write)
    pub cfg_valid: Signal<In, Bit>,
    pub cfg_qp: Signal<In, Bits<6>>,
    pub cfg_cq: Signal<In, Bits<32>>,
    /// The QP's send side is on (state RTS or Closing).
    pub cfg_on: Signal<In, Bit>,
    // ---- TxSeg completion records (cq_*) + the WQE's length
    pub tx_valid: Signal<In, Bit>,
    pub tx_ready: Signal<Out, Bit>,
    pub tx_qp: Signal<In, Bits<6>>,
    pub tx_wr_id: Signal<In, Bits<64>>,
    pub tx_status: Signal<In, Bits<8>>,
    /// The WQE's `SendOpcode`.
    pub tx_opcode: Signal<In, Bits<8>>,
    pub tx_len: Signal<In, Bits<32>>,
    // ---- RDMA Read requester records (one per completed Read WQE)
    pub rd_valid: Signal<In, Bit>,
    pub rd_ready: Signal<Out, Bit>,
    pub rd_qp: Signal<In, Bits<6>>,
    pub rd_wr_id: Signal<In, Bits<64>>,
    pub rd_status: Signal<In, Bits<8>>,
    pub rd_len: Signal<In, Bits<32>>,
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
    /// Records dropped because their QP was off.
    pub cnt_off: Signal<Out, Bits<32>>,
    // ---- constants
    k_op_write: Constant<Bits<8>>,
    k_op_write_imm: Constant<Bits<8>>,
    k_op_read: Constant<Bits<8>>,
    k_wc_send: Constant<Bits<8>>,
    k_wc_write: Constant<Bits<8>>,
    k_wc_read: Constant<Bits<8>>,
    k_ncq: Constant<Bits<32>>,
    // ---- state
    /// Per QP: {off, has a send CQ, CQ number} (all 0 after power-up: on).
    tab: crate::common::qp_ram::QpRam<Bits<6>, PR>,
    qm: Constant<Bits<6>>,
    state: DFF<SendCplState>,
    /// The source being served: 1 = Read requester, 0 = TxSeg.
    src: DFF<Bit>,
    /// The source served last (round robin).
    last: DFF<Bit>,
    c_no_cq: DFF<Bits<32>>,
    c_off: DFF<Bits<32>>,
    // ---- temporaries
    skip: Signal<Local, Bit>,
    tw: Signal<Local, Bits<6>>,
}

impl<const PR: usize> Default for SendCplN<PR> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cfg_valid: Default::default(),
            cfg_qp: Default::default(),
            cfg_cq: Default::default(),
            cfg_on: Default::default(),
            tx_valid: Default::default(),
            tx_ready: Default::default(),
            tx_qp: Default::default(),
            tx_wr_id: Default::default(),
            tx_status: Default::default(),
            tx_opcode: Default::default(),
            tx_len: Default::default(),
            rd_valid: Default::default(),
            rd_ready: Default::default(),
            rd_qp: Default::default(),
            rd_wr_id: Default::default(),
            rd_status: Default::default(),
            rd_len: Default::default(),
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
            k_op_write: k(SendOpcode::RdmaWrite as u64),
            k_op_write_imm: k(SendOpcode::RdmaWriteWithImm as u64),
            k_op_read: k(SendOpcode::RdmaRead as u64),
            k_wc_send: k(WcOpcode::Send as u64),
            k_wc_write: k(WcOpcode::RdmaWrite as u64),
            k_wc_read: k(WcOpcode::RdmaRead as u64),
            k_ncq: k(1 << CQ_BITS),
            tab: Default::default(),
            qm: crate::transmit::doorbell::qp_mask(PR),
            state: Default::default(),
            src: Default::default(),
            last: Default::default(),
            c_no_cq: Default::default(),
            c_off: Default::default(),
            skip: Default::default(),
            tw: Default::default(),
        }
    }
}

impl<const PR: usize> Logic for SendCplN<PR> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, src, last, c_no_cq, c_off);
        self.tab.read_clock.next = self.clock.val();
        self.tab.write_clock.next = self.clock.val();
        self.tab.write_enable.next =
            self.cfg_valid.val() & !(self.cfg_qp.val() & !self.qm.val()).any();
        self.tab.write_address.next = self.cfg_qp.val();
        self.tw.next = bit_cast::<6, 4>(self.cfg_cq.val().get_bits::<4>(0));
        if self.cfg_valid.val() & (self.cfg_cq.val() < self.k_ncq.val()) {
            self.tw.next = self.tw.val() | 16;
        }
        if !self.cfg_on.val() {
            self.tw.next = self.tw.val() | 32;
        }
        self.tab.write_data.next = self.tw.val();
        self.tab.read_address.next = self.tx_qp.val();

        // The record of the source being served (held by it until ready).
        self.cpl_cq.next = self.tab.read_data.val().get_bits::<CQ_BITS>(0);
        self.cpl_wr_id.next = self.tx_wr_id.val();
        self.cpl_qpn.next = bit_cast::<32, 6>(self.tx_qp.val());
        self.cpl_status.next = self.tx_status.val();
        self.cpl_byte_len.next = 0.into();
        if self.tx_status.val() == 0 {
            self.cpl_byte_len.next = self.tx_len.val();
        }
        self.cpl_opcode.next = self.k_wc_send.val();
        if (self.tx_opcode.val() == self.k_op_write.val())
            | (self.tx_opcode.val() == self.k_op_write_imm.val())
        {
            self.cpl_opcode.next = self.k_wc_write.val();
        } else if self.tx_opcode.val() == self.k_op_read.val() {
            self.cpl_opcode.next = self.k_wc_read.val();
        }
        // A Read Request sent is not a completed Read (module comment).
        self.skip.next =
            (self.tx_opcode.val() == self.k_op_read.val()) & (self.tx_status.val() == 0);
        if self.src.q.val() {
            self.cpl_wr_id.next = self.rd_wr_id.val();
            self.cpl_qpn.next = bit_cast::<32, 6>(self.rd_qp.val());
            self.cpl_status.next = self.rd_status.val();
            self.cpl_byte_len.next = self.rd_len.val();
            self.cpl_opcode.next = self.k_wc_read.val();
            self.skip.next = false;
        }

        self.tx_ready.next = false;
        self.rd_ready.next = false;
        self.cpl_valid.next = false;
        match self.state.q.val() {
            SendCplState::Idle => {
                // Round robin: the source not served last first.
                if self.rd_valid.val() & (!self.tx_valid.val() | !self.last.q.val()) {
                    self.tab.read_address.next = self.rd_qp.val();
                    self.src.d.next = true;
                    self.state.d.next = SendCplState::Look;
                } else if self.tx_valid.val() {
                    self.src.d.next = false;
                    self.state.d.next = SendCplState::Look;
                }
            }
            SendCplState::Look => {
                // tab.read_data is the QP's entry (read at the Idle edge)
                if self.src.q.val() {
                    self.tab.read_address.next = self.rd_qp.val();
                }
                if self.skip.val() {
                    self.tx_ready.next = true;
                    self.last.d.next = false;
                    self.state.d.next = SendCplState::Idle;
                } else if self.tab.read_data.val().get_bit(5) {
                    // QP off: the host flushes its WRs (module doc).
                    self.tx_ready.next = !self.src.q.val();
                    self.rd_ready.next = self.src.q.val();
                    self.last.d.next = self.src.q.val();
                    self.c_off.d.next = self.c_off.q.val() + 1;
                    self.state.d.next = SendCplState::Idle;
                } else if !self.tab.read_data.val().get_bit(4) {
                    self.tx_ready.next = !self.src.q.val();
                    self.rd_ready.next = self.src.q.val();
                    self.last.d.next = self.src.q.val();
                    self.c_no_cq.d.next = self.c_no_cq.q.val() + 1;
                    self.state.d.next = SendCplState::Idle;
                } else {
                    self.cpl_valid.next = true;
                    if self.cpl_ready.val() {
                        self.tx_ready.next = !self.src.q.val();
                        self.rd_ready.next = self.src.q.val();
                        self.last.d.next = self.src.q.val();
                        self.state.d.next = SendCplState::Idle;
                    }
                }
            }
            _ => {
                self.state.d.next = SendCplState::Idle;
            }
        }
        self.cnt_no_cq.next = self.c_no_cq.q.val();
        self.cnt_off.next = self.c_off.q.val();
        if self.reset.val() {
            self.state.d.next = SendCplState::Idle;
            self.last.d.next = false;
            self.c_no_cq.d.next = 0.into();
            self.c_off.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use rnic_wire::abi::cqe::WcStatus;
    use std::collections::VecDeque;

    /// (qp, wr_id, status, opcode, len) as offered.
    type Rec = (u64, u64, u64, u64, u64);

    fn bench() -> SendCpl {
        let mut u = SendCpl::default();
        u.clock.connect();
        u.reset.connect();
        u.cfg_valid.connect();
        u.cfg_qp.connect();
        u.cfg_cq.connect();
        u.cfg_on.connect();
        u.tx_valid.connect();
        u.tx_qp.connect();
        u.tx_wr_id.connect();
        u.tx_status.connect();
        u.tx_opcode.connect();
        u.tx_len.connect();
        u.rd_valid.connect();
        u.rd_qp.connect();
        u.rd_wr_id.connect();
        u.rd_status.connect();
        u.rd_len.connect();
        u.cpl_ready.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        u
    }

    /// The ABI work-completion opcode of a WQE opcode (independent table).
    fn wc_of(op: u64) -> u64 {
        match SendOpcode::from_u8(op as u8) {
            Ok(SendOpcode::RdmaWrite | SendOpcode::RdmaWriteWithImm) => WcOpcode::RdmaWrite as u64,
            Ok(SendOpcode::RdmaRead) => WcOpcode::RdmaRead as u64,
            _ => WcOpcode::Send as u64,
        }
    }

    #[test]
    fn records_map_to_the_send_cq_round_robin() {
        let mut rng = Rng::new(7);
        let mut u = bench();
        // QP q's send CQ: q % 5 for q < 40 (CQ 16 + q for q % 7 == 0: none).
        let cq_of = |q: u64| -> Option<u64> {
            if q >= 40 {
                None
            } else if q.is_multiple_of(7) {
                Some(16 + q)
            } else {
                Some(q % 5)
            }
        };
        for q in 0..40u64 {
            u.cfg_valid.next = true;
            u.cfg_qp.next = q.into();
            u.cfg_cq.next = cq_of(q).unwrap().into();
            u.cfg_on.next = true;
            tick!(u);
        }
        u.cfg_valid.next = false;
        let mut txq: VecDeque<Rec> = VecDeque::new();
        let mut rdq: VecDeque<Rec> = VecDeque::new();
        for i in 0..300u64 {
            let st = [0u64, 0, 0, WcStatus::LocalQpOperationError as u64][rng.below(4)];
            txq.push_back((
                rng.below(64) as u64,
                i,
                st,
                rng.below(7) as u64,
                rng.next() >> 40,
            ));
            if i % 2 == 0 {
                let st = [0u64, 0, WcStatus::RemoteAccessError as u64][rng.below(3)];
                rdq.push_back((rng.below(64) as u64, 1000 + i, st, 4, rng.next() >> 40));
            }
        }
        // Expected output, per source, in order.
        let want = |r: &Rec, rd: bool| -> Option<(u64, u64, u64, u64, u64, u64)> {
            let (q, id, st, op, len) = *r;
            if !rd && op == SendOpcode::RdmaRead as u64 && st == 0 {
                return None;
            }
            let cq = cq_of(q).filter(|&c| c < 16)?;
            let len = if rd || st == 0 { len } else { 0 };
            let op = if rd {
                WcOpcode::RdmaRead as u64
            } else {
                wc_of(op)
            };
            Some((cq, id, len, q, op, st))
        };
        let mut want_tx: VecDeque<_> = txq.iter().filter_map(|r| want(r, false)).collect();
        let mut want_rd: VecDeque<_> = rdq.iter().filter_map(|r| want(r, true)).collect();
        let n_drop = txq.iter().filter(|r| want(r, false).is_none()).count()
            - txq
                .iter()
                .filter(|r| r.3 == SendOpcode::RdmaRead as u64 && r.2 == 0)
                .count()
            + rdq.iter().filter(|r| want(r, true).is_none()).count();
        let (mut tx_gap, mut rd_gap) = (0u64, 0u64);
        let (mut pass_tx, mut pass_rd) = (0u32, 0u32);
        for _ in 0..20000 {
            if txq.is_empty() && rdq.is_empty() {
                break;
            }
            // sources: a record stays on offer until taken; gaps at random
            let tx_on = tx_gap == 0 && !txq.is_empty();
            let rd_on = rd_gap == 0 && !rdq.is_empty();
            u.tx_valid.next = tx_on;
            if let Some(&(q, id, st, op, len)) = txq.front() {
                u.tx_qp.next = q.into();
                u.tx_wr_id.next = id.into();
                u.tx_status.next = st.into();
                u.tx_opcode.next = op.into();
                u.tx_len.next = len.into();
            }
            u.rd_valid.next = rd_on;
            if let Some(&(q, id, st, _, len)) = rdq.front() {
                u.rd_qp.next = q.into();
                u.rd_wr_id.next = id.into();
                u.rd_status.next = st.into();
                u.rd_len.next = len.into();
            }
            let ready = rng.below(100) < 60;
            u.cpl_ready.next = ready;
            assert!(simulate(&mut u, 1000));
            if u.cpl_valid.val() && ready {
                let got = (
                    u.cpl_cq.val().to_u64(),
                    u.cpl_wr_id.val().to_u64(),
                    u.cpl_byte_len.val().to_u64(),
                    u.cpl_qpn.val().to_u64(),
                    u.cpl_opcode.val().to_u64(),
                    u.cpl_status.val().to_u64(),
                );
                let w = if got.1 >= 1000 {
                    want_rd.pop_front()
                } else {
                    want_tx.pop_front()
                };
                assert_eq!(Some(got), w, "record out");
            }
            let (tt, rt) = (u.tx_ready.val(), u.rd_ready.val());
            assert!(!(tt && rt));
            assert!(!tt || tx_on, "tx_ready without a record");
            assert!(!rt || rd_on, "rd_ready without a record");
            // fairness: while both wait, neither is taken twice in a row
            if tt {
                txq.pop_front();
                tx_gap = rng.below(3) as u64;
                pass_tx = 0;
                if rd_on {
                    pass_rd += 1;
                }
            } else {
                tx_gap = tx_gap.saturating_sub(1);
            }
            if rt {
                rdq.pop_front();
                rd_gap = rng.below(3) as u64;
                pass_rd = 0;
                if tx_on {
                    pass_tx += 1;
                }
            } else {
                rd_gap = rd_gap.saturating_sub(1);
            }
            assert!(pass_tx <= 1 && pass_rd <= 1, "a source passed over twice");
            tick!(u);
        }
        assert!(txq.is_empty() && rdq.is_empty(), "records left");
        assert!(
            want_tx.is_empty() && want_rd.is_empty(),
            "records not written"
        );
        assert_eq!(u.cnt_no_cq.val().to_u64(), n_drop as u64);
        assert!(n_drop > 20);
    }

    /// A QP whose last context write was not RTS/Closing gets no CQE from
    /// either source (counted in `cnt_off`); on again, it does.
    #[test]
    fn off_qp_writes_no_cqe() {
        let mut u = bench();
        let cfg = |u: &mut SendCpl, q: u64, on: bool| {
            u.cfg_valid.next = true;
            u.cfg_qp.next = q.into();
            u.cfg_cq.next = 3.into();
            u.cfg_on.next = on;
            tick!(*u);
            u.cfg_valid.next = false;
        };
        for q in 0..8 {
            cfg(&mut u, q, true);
        }
        cfg(&mut u, 2, false);
        cfg(&mut u, 5, false);
        // (qp, from the Read requester) → the wr_ids written, in order.
        let run = |u: &mut SendCpl, recs: &[(u64, bool)]| -> Vec<u64> {
            let mut out = Vec::new();
            for (i, &(q, rd)) in recs.iter().enumerate() {
                let id = 100 * q + i as u64;
                u.tx_valid.next = !rd;
                u.rd_valid.next = rd;
                u.tx_qp.next = q.into();
                u.rd_qp.next = q.into();
                u.tx_wr_id.next = id.into();
                u.rd_wr_id.next = id.into();
                u.tx_status.next = 0.into();
                u.rd_status.next = 0.into();
                u.tx_opcode.next = (SendOpcode::RdmaWrite as u64).into();
                u.cpl_ready.next = true;
                let mut taken = false;
                for _ in 0..10 {
                    assert!(simulate(u, 1000));
                    if u.cpl_valid.val() {
                        assert_eq!(u.cpl_cq.val().to_u64(), 3);
                        out.push(u.cpl_wr_id.val().to_u64());
                    }
                    taken = u.tx_ready.val() || u.rd_ready.val();
                    tick!(*u);
                    if taken {
                        break;
                    }
                }
                assert!(taken, "record {i} not taken");
                u.tx_valid.next = false;
                u.rd_valid.next = false;
                tick!(*u);
            }
            out
        };
        let recs: Vec<(u64, bool)> = (0..8).flat_map(|q| [(q, false), (q, true)]).collect();
        let want: Vec<u64> = recs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.0 != 2 && r.0 != 5)
            .map(|(i, r)| 100 * r.0 + i as u64)
            .collect();
        assert_eq!(run(&mut u, &recs), want);
        assert_eq!(u.cnt_off.val().to_u64(), 4);
        assert_eq!(u.cnt_no_cq.val().to_u64(), 0);
        cfg(&mut u, 2, true);
        assert_eq!(run(&mut u, &[(2, false), (5, true)]), vec![200]);
        assert_eq!(u.cnt_off.val().to_u64(), 5);
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
