//! Exception queue input arbiter: puts received Terminate records (RFC 5040
//! §5.1, §7: `rx_send`'s `rterm_*`) into the firmware's exception queue
//! (`ExcQueue`) next to `rx_parse`'s frames, so that the firmware learns of
//! every incoming Terminate (reason `ExceptionReason::TerminateRx`).
//!
//! * `raw_*` (from `rx_parse`, no backpressure) pass through unchanged and
//!   always win: a frame is never cut or delayed.
//! * A Terminate record (`rt_valid`, held by its source until `rt_ready`)
//!   is taken in a clock with no raw beat that is not inside a raw frame,
//!   and only while the queue has a free slot (`q_count` < [`SLOTS`]), so no
//!   record is ever lost (the source waits; `rx_send` stops its receive
//!   path meanwhile). It becomes a one-beat frame: the Terminate message's
//!   first octets (`rt_data`, octet 0 in bits 7:0: Terminate Control and the
//!   start of the echoed header, RFC 5040 §7.1), `min(rt_len, 8)` of them,
//!   reason `TerminateRx`, connection `rt_conn`, committed.
//! * A send-queue error record (`sq_valid`, held until `sq_ready`; from the
//!   core when `tx_seg` turned a QP's send side off for a refused SGE) is
//!   taken under the same conditions, after a waiting Terminate record. It
//!   becomes a one-beat, 8-octet frame {QPN as u32 LE, the completion's
//!   status (`WcStatus::LocalProtectionError`, the only reason `tx_seg`
//!   turns a send side off), 3 zero octets}, reason `SendQueueError`,
//!   connection field = the QPN (the core does not look the connection
//!   up; the firmware maps QP to connection).
//! * A CQ overrun record (`co_valid`, held until `co_ready`; from
//!   `cpl_write`) is taken under the same conditions, after waiting
//!   Terminate and send-queue error records. It becomes a one-beat, 8-octet
//!   frame {CQ number as u32 LE, 4 zero octets}, reason `CqOverflow`,
//!   connection field = the CQ number.

use crate::common::k;
use crate::firmware_port::exc_queue::SLOTS;
use rnic_wire::abi::context::ExceptionReason;
use rust_hdl::prelude::*;

/// Octets of a Terminate record in its exception frame (one beat).
pub const RT_OCTETS: u64 = 8;

#[derive(LogicBlock)]
pub struct ExcArb {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- rx_parse's frames
    pub raw_data: Signal<In, Bits<64>>,
    pub raw_keep: Signal<In, Bits<4>>,
    pub raw_last: Signal<In, Bit>,
    pub raw_valid: Signal<In, Bit>,
    pub raw_commit: Signal<In, Bit>,
    pub raw_reason: Signal<In, Bits<8>>,
    pub raw_conn: Signal<In, Bits<32>>,
    // ---- received Terminate records
    pub rt_valid: Signal<In, Bit>,
    pub rt_ready: Signal<Out, Bit>,
    pub rt_conn: Signal<In, Bits<32>>,
    pub rt_len: Signal<In, Bits<16>>,
    pub rt_data: Signal<In, Bits<64>>,
    // ---- send-queue error records
    pub sq_valid: Signal<In, Bit>,
    pub sq_ready: Signal<Out, Bit>,
    pub sq_qpn: Signal<In, Bits<32>>,
    // ---- CQ overrun records (`cpl_write`'s `ovf_*`)
    pub co_valid: Signal<In, Bit>,
    pub co_ready: Signal<Out, Bit>,
    pub co_cq: Signal<In, Bits<32>>,
    // ---- exception queue
    pub q_count: Signal<In, Bits<3>>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_commit: Signal<Out, Bit>,
    pub out_reason: Signal<Out, Bits<8>>,
    pub out_conn: Signal<Out, Bits<32>>,
    /// Terminate records queued.
    pub cnt_term: Signal<Out, Bits<32>>,
    k_reason: Constant<Bits<8>>,
    k_reason_sq: Constant<Bits<8>>,
    k_reason_co: Constant<Bits<8>>,
    k_sq_status: Constant<Bits<8>>,
    k_slots: Constant<Bits<3>>,
    k_oct: Constant<Bits<16>>,
    /// Inside a raw frame (a beat without `last` was seen).
    mid: DFF<Bit>,
    n_term: DFF<Bits<32>>,
    take: Signal<Local, Bit>,
    take_sq: Signal<Local, Bit>,
    take_co: Signal<Local, Bit>,
}

impl Default for ExcArb {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            raw_data: Default::default(),
            raw_keep: Default::default(),
            raw_last: Default::default(),
            raw_valid: Default::default(),
            raw_commit: Default::default(),
            raw_reason: Default::default(),
            raw_conn: Default::default(),
            rt_valid: Default::default(),
            rt_ready: Default::default(),
            rt_conn: Default::default(),
            rt_len: Default::default(),
            rt_data: Default::default(),
            sq_valid: Default::default(),
            sq_ready: Default::default(),
            sq_qpn: Default::default(),
            co_valid: Default::default(),
            co_ready: Default::default(),
            co_cq: Default::default(),
            q_count: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_valid: Default::default(),
            out_commit: Default::default(),
            out_reason: Default::default(),
            out_conn: Default::default(),
            cnt_term: Default::default(),
            k_reason: k(ExceptionReason::TerminateRx as u64),
            k_reason_sq: k(ExceptionReason::SendQueueError as u64),
            k_reason_co: k(ExceptionReason::CqOverflow as u64),
            k_sq_status: k(crate::transmit::tx_seg::STATUS_LOCAL_PROT_ERR),
            k_slots: k(SLOTS),
            k_oct: k(RT_OCTETS),
            mid: Default::default(),
            n_term: Default::default(),
            take: Default::default(),
            take_sq: Default::default(),
            take_co: Default::default(),
        }
    }
}

impl Logic for ExcArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mid, n_term);
        if self.raw_valid.val() {
            self.mid.d.next = !self.raw_last.val();
        }
        self.take.next = self.rt_valid.val()
            & !self.raw_valid.val()
            & !self.mid.q.val()
            & (self.q_count.val() < self.k_slots.val());
        self.rt_ready.next = self.take.val();
        self.take_sq.next = self.sq_valid.val()
            & !self.rt_valid.val()
            & !self.raw_valid.val()
            & !self.mid.q.val()
            & (self.q_count.val() < self.k_slots.val());
        self.sq_ready.next = self.take_sq.val();
        self.take_co.next = self.co_valid.val()
            & !self.sq_valid.val()
            & !self.rt_valid.val()
            & !self.raw_valid.val()
            & !self.mid.q.val()
            & (self.q_count.val() < self.k_slots.val());
        self.co_ready.next = self.take_co.val();
        self.out_data.next = self.raw_data.val();
        self.out_keep.next = self.raw_keep.val();
        self.out_last.next = self.raw_last.val();
        self.out_valid.next = self.raw_valid.val();
        self.out_commit.next = self.raw_commit.val();
        self.out_reason.next = self.raw_reason.val();
        self.out_conn.next = self.raw_conn.val();
        if self.take.val() {
            self.out_data.next = self.rt_data.val();
            self.out_keep.next = self.k_oct.val().get_bits::<4>(0);
            if self.rt_len.val() < self.k_oct.val() {
                self.out_keep.next = self.rt_len.val().get_bits::<4>(0);
            }
            self.out_last.next = true;
            self.out_valid.next = true;
            self.out_commit.next = true;
            self.out_reason.next = self.k_reason.val();
            self.out_conn.next = self.rt_conn.val();
            self.n_term.d.next = self.n_term.q.val() + 1;
        }
        if self.take_sq.val() {
            self.out_data.next = (bit_cast::<64, 8>(self.k_sq_status.val()) << 32)
                | bit_cast::<64, 32>(self.sq_qpn.val());
            self.out_keep.next = self.k_oct.val().get_bits::<4>(0);
            self.out_last.next = true;
            self.out_valid.next = true;
            self.out_commit.next = true;
            self.out_reason.next = self.k_reason_sq.val();
            self.out_conn.next = self.sq_qpn.val();
        }
        if self.take_co.val() {
            self.out_data.next = bit_cast::<64, 32>(self.co_cq.val());
            self.out_keep.next = self.k_oct.val().get_bits::<4>(0);
            self.out_last.next = true;
            self.out_valid.next = true;
            self.out_commit.next = true;
            self.out_reason.next = self.k_reason_co.val();
            self.out_conn.next = self.co_cq.val();
        }
        self.cnt_term.next = self.n_term.q.val();
        if self.reset.val() {
            self.mid.d.next = false;
            self.n_term.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{beats, tick, Rng};
    use crate::firmware_port::exc_queue::ExcQueue;
    use rnic_wire::rdmap::ReadRequestRepr;
    use rnic_wire::terminate::RdmapError;
    use rnic_wire::terminate::{TerminateCause, TerminateRepr};

    /// The arbiter in front of the real exception queue, as in the core.
    #[derive(LogicBlock, Default)]
    struct Tb {
        clock: Signal<In, Clock>,
        reset: Signal<In, Bit>,
        arb: ExcArb,
        q: ExcQueue,
    }

    impl Logic for Tb {
        #[hdl_gen]
        fn update(&mut self) {
            clock!(self, clock, arb, q);
            self.arb.reset.next = self.reset.val();
            self.q.reset.next = self.reset.val();
            self.arb.q_count.next = self.q.count.val();
            self.q.in_data.next = self.arb.out_data.val();
            self.q.in_keep.next = self.arb.out_keep.val();
            self.q.in_last.next = self.arb.out_last.val();
            self.q.in_valid.next = self.arb.out_valid.val();
            self.q.in_commit.next = self.arb.out_commit.val();
            self.q.in_reason.next = self.arb.out_reason.val();
            self.q.in_conn.next = self.arb.out_conn.val();
        }
    }

    /// Reads the head entry (reason, conn, frame) and pops it.
    fn pop(u: &mut Tb) -> (u64, u64, Vec<u8>) {
        let len = u.q.head_len.val().to_u64() as usize;
        let (reason, conn) = (u.q.head_reason.val().to_u64(), u.q.head_conn.val().to_u64());
        let mut f = Vec::new();
        for w in 0..len.div_ceil(4) {
            u.q.rd_word.next = (w as u64).into();
            tick!(*u);
            f.extend_from_slice(&(u.q.rd_data.val().to_u64() as u32).to_le_bytes());
        }
        f.truncate(len);
        u.q.pop.next = true;
        tick!(*u);
        u.q.pop.next = false;
        (reason, conn, f)
    }

    /// Random raw frames (some not committed, random gaps) and Terminate
    /// records (the octets `rnic_wire` emits for a Terminate, records held
    /// until taken) with a firmware that drains slowly: every committed raw
    /// frame arrives whole and in order, every Terminate record arrives
    /// once, in order, as its first 8 octets with reason TerminateRx; every
    /// send-queue error record (held until taken, competing with the
    /// Terminates) arrives once, in order, as {QPN LE, LocalProtectionError,
    /// 0, 0, 0} with reason SendQueueError and the QPN as connection; a
    /// record is never taken into a full queue (no `cnt_full` from them).
    #[test]
    fn terminates_join_raw_frames_none_lost() {
        let mut u = Tb::default();
        u.clock.connect();
        u.reset.connect();
        u.arb.raw_data.connect();
        u.arb.raw_keep.connect();
        u.arb.raw_last.connect();
        u.arb.raw_valid.connect();
        u.arb.raw_commit.connect();
        u.arb.raw_reason.connect();
        u.arb.raw_conn.connect();
        u.arb.rt_valid.connect();
        u.arb.rt_conn.connect();
        u.arb.rt_len.connect();
        u.arb.rt_data.connect();
        u.arb.sq_valid.connect();
        u.arb.sq_qpn.connect();
        u.arb.co_valid.connect();
        u.arb.co_cq.connect();
        u.q.rd_word.connect();
        u.q.pop.connect();
        u.connect_all();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        let mut rng = Rng::new(11);
        // Terminate messages as rnic_wire emits them (RDMAP layer, the
        // Read Request header echoed).
        let terms: Vec<(u64, Vec<u8>)> = (0..12u64)
            .map(|i| {
                let t = TerminateRepr {
                    cause: TerminateCause::Rdmap(RdmapError::RemoteProtection(
                        rnic_wire::terminate::RemoteProtectionError::from_value(
                            [0u8, 1, 2, 3][i as usize % 4],
                        )
                        .unwrap(),
                    )),
                    ddp: None,
                    rdma: Some(ReadRequestRepr {
                        sink_stag: i as u32,
                        sink_to: 0x1000 * i,
                        size: 64,
                        src_stag: 0x100 + i as u32,
                        src_to: 0x2000,
                    }),
                };
                let mut b = vec![0u8; t.buffer_len()];
                t.emit(&mut b).unwrap();
                (i + 40, b)
            })
            .collect();
        let frames: Vec<(bool, Vec<u8>)> = (0..30)
            .map(|i| (rng.below(4) != 0, rng.bytes(1 + (i * 53) % 300)))
            .collect();
        let mut want_raw: Vec<Vec<u8>> = Vec::new();
        let mut got_raw = Vec::new();
        let mut got_rt = Vec::new();
        let sqs: Vec<u64> = (0..10u64).map(|i| 3 * i + 1).collect();
        let mut got_sq = Vec::new();
        let mut si = 0usize;
        let cos: Vec<u64> = (0..6u64).map(|i| 15 - 2 * i).collect();
        let mut got_co = Vec::new();
        let mut ci = 0usize;
        let (mut fi, mut bi, mut ti) = (0usize, 0usize, 0usize);
        let mut gap = 0usize;
        let mut cycle = 0;
        while (fi < frames.len()
            || ti < terms.len()
            || si < sqs.len()
            || ci < cos.len()
            || u.q.head_valid.val())
            && cycle < 20000
        {
            cycle += 1;
            // raw source
            u.arb.raw_valid.next = false;
            if fi < frames.len() && gap == 0 {
                let (commit, f) = &frames[fi];
                let b = beats(f);
                let (d, k) = b[bi];
                u.arb.raw_data.next = d.into();
                u.arb.raw_keep.next = (k as u64).into();
                u.arb.raw_last.next = bi + 1 == b.len();
                u.arb.raw_valid.next = true;
                u.arb.raw_commit.next = *commit;
                u.arb.raw_reason.next = 5.into();
                u.arb.raw_conn.next = (fi as u64).into();
                // the queue takes a frame when a slot is free at its start
                if bi == 0 && *commit && u.q.count.val().to_u64() < SLOTS {
                    want_raw.push(f.clone());
                }
                bi += 1;
                if bi == b.len() {
                    bi = 0;
                    fi += 1;
                    gap = rng.below(6);
                }
            } else {
                gap = gap.saturating_sub(1);
            }
            // Terminate source: holds its record until taken
            u.arb.rt_valid.next = ti < terms.len();
            if let Some((conn, t)) = terms.get(ti) {
                let mut d = [0u8; 8];
                d.copy_from_slice(&t[..8]);
                u.arb.rt_data.next = u64::from_le_bytes(d).into();
                u.arb.rt_len.next = (t.len() as u64).into();
                u.arb.rt_conn.next = (*conn).into();
            }
            // send-queue error source: holds its record until taken
            u.arb.sq_valid.next = si < sqs.len();
            if let Some(&q) = sqs.get(si) {
                u.arb.sq_qpn.next = q.into();
            }
            // CQ overrun source: holds its record until taken
            u.arb.co_valid.next = ci < cos.len();
            if let Some(&c) = cos.get(ci) {
                u.arb.co_cq.next = c.into();
            }
            assert!(simulate(&mut u, 1000));
            let takes = [
                u.arb.rt_ready.val(),
                u.arb.sq_ready.val(),
                u.arb.co_ready.val(),
            ];
            assert!(
                takes.iter().filter(|&&t| t).count() <= 1,
                "one record a clock"
            );
            if u.arb.co_ready.val() {
                assert!(u.q.count.val().to_u64() < SLOTS);
                ci += 1;
            }
            if u.arb.rt_ready.val() {
                assert!(u.q.count.val().to_u64() < SLOTS);
                ti += 1;
            }
            if u.arb.sq_ready.val() {
                assert!(u.q.count.val().to_u64() < SLOTS);
                si += 1;
            }
            tick!(u);
            // a slow firmware: drains between raw frames now and then
            if bi == 0 && u.q.head_valid.val() && rng.below(8) == 0 {
                u.arb.raw_valid.next = false;
                u.arb.rt_valid.next = false;
                u.arb.sq_valid.next = false;
                u.arb.co_valid.next = false;
                let (reason, conn, f) = pop(&mut u);
                if reason == ExceptionReason::TerminateRx as u64 {
                    got_rt.push((conn, f));
                } else if reason == ExceptionReason::SendQueueError as u64 {
                    got_sq.push((conn, f));
                } else if reason == ExceptionReason::CqOverflow as u64 {
                    got_co.push((conn, f));
                } else {
                    assert_eq!(reason, 5);
                    got_raw.push(f);
                }
            }
        }
        assert_eq!(ti, terms.len(), "records left");
        let want_rt: Vec<(u64, Vec<u8>)> =
            terms.iter().map(|(c, t)| (*c, t[..8].to_vec())).collect();
        assert_eq!(got_rt, want_rt);
        assert_eq!(si, sqs.len(), "send-queue records left");
        let status = rnic_wire::abi::cqe::WcStatus::LocalProtectionError as u8;
        let want_sq: Vec<(u64, Vec<u8>)> = sqs
            .iter()
            .map(|&q| {
                let mut f = (q as u32).to_le_bytes().to_vec();
                f.extend_from_slice(&[status, 0, 0, 0]);
                (q, f)
            })
            .collect();
        assert_eq!(got_sq, want_sq);
        assert_eq!(ci, cos.len(), "CQ overrun records left");
        let want_co: Vec<(u64, Vec<u8>)> = cos
            .iter()
            .map(|&c| {
                let mut f = (c as u32).to_le_bytes().to_vec();
                f.extend_from_slice(&[0; 4]);
                (c, f)
            })
            .collect();
        assert_eq!(got_co, want_co);
        assert_eq!(got_raw, want_raw);
        assert_eq!(u.arb.cnt_term.val().to_u64(), terms.len() as u64);
        // every loss is a raw frame's (started while full)
        let committed = frames.iter().filter(|f| f.0).count() as u64;
        assert_eq!(
            u.q.cnt_full.val().to_u64(),
            committed - want_raw.len() as u64
        );
        assert!(u.q.cnt_full.val().to_u64() > 0, "the queue must fill up");
        eprintln!(
            "exc_arb: {} raw frames, {} Terminates in {cycle} clocks",
            got_raw.len(),
            got_rt.len()
        );
    }

    #[test]
    fn generates_verilog() {
        let mut u = ExcArb::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "exc_arb");
        assert!(v.contains("module exc_arb("));
    }
}
