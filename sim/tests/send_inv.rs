//! Send with Invalidate in the Verilated `rnic_core` (issue 3; RFC 5040
//! §5.3, §6.10): the Data Sink invalidates the Invalidate STag in the TPT
//! before the receive completion is written, and before any later FPDU of
//! the stream is checked.
//!
//! Rig: `rxs_rig` (firmware HAL writes the TPT and page lists, the host its
//! receive WQEs, the peer's messages come from `rnic_wire::model::TxStream`
//! framed into `mac_rx_*`). References: `rnic_wire::abi::cqe::Cqe::parse`,
//! `rnic_wire::terminate::TerminateCause::from_bits`, `TptEntry::check`,
//! and the whole sparse host memory compared before/after.

mod rxs_rig;
use rnic_sim::dma::{DmaConfig, DmaServer};
use rnic_wire::abi::cqe::{
    decode_term_cause, WcStatus, CQE_FLAG_SOLICITED, CQE_FLAG_WITH_INV, CQE_SIZE,
};
use rnic_wire::abi::csr::cq_doorbell_page;
use rnic_wire::abi::doorbell::CQ_CONSUMER;
use rnic_wire::abi::tpt::{
    Stag, TptState, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE,
};
use rnic_wire::model::net::data_frame;
use rnic_wire::model::Message;
use rnic_wire::terminate::{RemoteProtectionError, TaggedBufferError, TerminateCause};
use rxs_rig::*;
use std::collections::BTreeMap;

/// Every non-zero octet of host memory.
fn image(r: &Rig) -> BTreeMap<u64, u8> {
    r.mem.nonzero_outside(&[]).into_iter().collect()
}

/// Addresses whose octet differs between two images.
fn changed(a: &BTreeMap<u64, u8>, b: &BTreeMap<u64, u8>) -> Vec<u64> {
    let mut c: Vec<u64> = a
        .iter()
        .filter(|(k, v)| b.get(k) != Some(v))
        .map(|(k, _)| *k)
        .collect();
    c.extend(b.keys().filter(|k| !a.contains_key(k)));
    c.sort();
    c.dedup();
    c
}

/// The peer sends `m` (any message of the reference model) into mac_rx.
fn peer(r: &mut Rig, m: &Message) {
    let segs = r.tx.send(m).unwrap();
    let mut n = r.node.borrow_mut();
    for s in segs {
        let f = data_frame(&r.peer, &r.local, s.seq, 1000, &s.payload);
        n.mac_rx.push(f, false);
    }
}

const RW: u8 = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;

/// (a) + (c): a Write through region A lands; a Send with SE and
/// Invalidate of region B and a Send with Invalidate of A complete with
/// WITH_INV + the STag (B, A); an RDMA Write to A right behind the second
/// Send (same TCP stream, no gap) is refused with DDP "Invalid STag" and
/// not one octet of host memory changes but the receive buffers and CQEs.
#[test]
fn send_with_invalidate_then_write_through_it_is_refused() {
    let mut r = Rig::new(0x51);
    let va = 0x7777_0000_0100;
    let a = r.sparse_region(0x40, 0x9a, RW, va, 3 * 4096, |_| {});
    let b = r.sparse_region(0x41, 0x9b, RW, va, 4096, |_| {});
    r.post(&[500]);
    r.post(&[1500]);
    r.ring_rq();
    r.run(100_000);
    // The Write through A before anything: accepted and placed.
    let w1 = r.rng.bytes(3000);
    peer(
        &mut r,
        &Message::Write {
            stag: a.lkey,
            to: va + 100,
            data: &w1,
        },
    );
    r.run(200_000);
    for (i, &x) in w1.iter().enumerate() {
        assert_eq!(r.rd(a.bus(va + 100 + i as u64), 1)[0], x, "Write octet {i}");
    }
    assert_eq!(r.terms, 0);
    let before = image(&r);
    let d0 = r.rng.bytes(300);
    // A 1400-octet Send with Invalidate and a 16-octet Write right behind
    // it: the Write's FPDU is in the FPDU buffer when the Send's last
    // beat leaves ddp_rx, so its TPT check would race the invalidation
    // without `inv_hold`.
    let d1 = r.rng.bytes(1400);
    let w2 = r.rng.bytes(16);
    peer(
        &mut r,
        &Message::Send {
            data: &d0,
            solicited: true,
            invalidate: Some(b.lkey),
        },
    );
    peer(
        &mut r,
        &Message::Send {
            data: &d1,
            solicited: false,
            invalidate: Some(a.lkey),
        },
    );
    peer(
        &mut r,
        &Message::Write {
            stag: a.lkey,
            to: va + 100,
            data: &w2,
        },
    );
    r.run(400_000);
    let after = image(&r);
    r.check(0, 0, &d0, true);
    r.check(1, 1, &d1, false);
    let c0 = r.cqe(0);
    assert_eq!(
        (c0.flags, c0.imm_or_inv, c0.status),
        (
            CQE_FLAG_SOLICITED | CQE_FLAG_WITH_INV,
            b.lkey,
            WcStatus::Success
        )
    );
    let c1 = r.cqe(1);
    assert_eq!(
        (c1.flags, c1.imm_or_inv, c1.status),
        (CQE_FLAG_WITH_INV, a.lkey, WcStatus::Success)
    );
    // The Write: refused with DDP Tagged Buffer "Invalid STag" (RFC 5041
    // §7.2), one Terminate request.
    let inv: TerminateCause = TaggedBufferError::InvalidStag.into();
    assert_eq!(r.term_causes.len(), 1, "one Terminate");
    assert_eq!(TerminateCause::from_bits(r.term_causes[0]).unwrap(), inv);
    // Only the two receive buffers and two CQEs changed.
    let bufs: Vec<(u64, u32)> = r.posted.iter().flat_map(|p| p.bufs.clone()).collect();
    for x in changed(&before, &after) {
        let in_buf = bufs.iter().any(|&(s, l)| x >= s && x < s + l as u64);
        let in_cq = x >= r.cq && x < r.cq + 2 * CQE_SIZE as u64;
        assert!(in_buf || in_cq, "write at {x:#x}");
    }
    assert!(r.dma.faults().is_empty(), "{:?}", r.dma.faults());
    let n = r.node.borrow();
    let m = &n.core.0;
    assert_eq!(m.get_cnt_rxs_inv(), 2);
    assert_eq!(m.get_cnt_rxs_inv_err(), 0);
    assert_eq!(m.get_cnt_rxs_cqe(), 2);
}

/// (b): each Invalidate STag that is not a valid STag of the QP's PD — bad
/// index, bad key, wrong PD, already invalid — gives RDMAP Remote
/// Protection "STag cannot be Invalidated" (0/1/9) and the error CQE
/// `RemoteInvalidRequestError` with that cause; the Send's data is placed
/// (before the check), nothing else is written, the QP is in error (a
/// later Send is dropped). Each on a fresh core; also a Send with SE and
/// Invalidate.
#[test]
fn invalidate_stag_failures_terminate_and_complete_in_error() {
    let cause: TerminateCause = RemoteProtectionError::StagCannotBeInvalidated.into();
    let kinds = [
        "bad index",
        "bad key",
        "wrong PD",
        "already invalid",
        "SE, wrong PD",
    ];
    for (k, what) in kinds.into_iter().enumerate() {
        let mut r = Rig::new(0x1d0 + k as u64);
        let va = 0x4444_0000_0000;
        let good = r.sparse_region(0x40, 0x9a, RW, va, 4096, |_| {});
        let other = r.sparse_region(0x41, 0x9b, RW, va, 4096, |e| e.pd = PD + 1);
        let inval = r.sparse_region(0x42, 0x9c, RW, va, 4096, |e| e.state = TptState::Invalid);
        let stag = match what {
            "bad index" => Stag::new(0x300, 0x9a).unwrap().0,
            "bad key" => good.lkey ^ 0x01,
            "already invalid" => inval.lkey,
            _ => other.lkey,
        };
        // The reference refuses it too (TPT index 0x300 is outside the 256
        // entries; the others fail `TptEntry::check` for this PD).
        let refused = [&good, &other, &inval]
            .iter()
            .find(|g| Stag(g.lkey).index() == Stag(stag).index())
            .is_none_or(|g| g.entry.check(Stag(stag), PD, 0, 0, 0).is_err());
        assert!(refused, "{what}");
        r.post(&[256]);
        r.post(&[256]);
        r.ring_rq();
        r.run(100_000);
        let before = image(&r);
        let d = r.rng.bytes(200);
        let se = what.starts_with("SE");
        peer(
            &mut r,
            &Message::Send {
                data: &d,
                solicited: se,
                invalidate: Some(stag),
            },
        );
        r.run(200_000);
        let later = r.rng.bytes(40);
        r.send(&later, false);
        r.run(200_000);
        let after = image(&r);
        let c = r.cqe(0);
        assert_eq!(
            (c.wr_id, c.qpn, c.status, c.flags, c.imm_or_inv),
            (
                r.posted[0].wr_id,
                QPN,
                WcStatus::RemoteInvalidRequestError,
                0,
                0
            ),
            "{what}"
        );
        assert_eq!(
            decode_term_cause(c.term_cause).unwrap(),
            Some(cause),
            "{what}"
        );
        assert_eq!(r.term_causes.len(), 1, "{what}: one Terminate");
        assert_eq!(
            TerminateCause::from_bits(r.term_causes[0]).unwrap(),
            cause,
            "{what}"
        );
        // The data is placed; the second buffer untouched; nothing else.
        let (b0, _) = r.posted[0].bufs[0];
        assert_eq!(r.rd(b0, 200), d, "{what}: data placed");
        for x in changed(&before, &after) {
            let in_buf = x >= b0 && x < b0 + 200;
            let in_cq = x >= r.cq && x < r.cq + CQE_SIZE as u64;
            assert!(in_buf || in_cq, "{what}: write at {x:#x}");
        }
        assert!(r.dma.faults().is_empty(), "{what}");
        let n = r.node.borrow();
        let m = &n.core.0;
        assert_eq!(m.get_cnt_rxs_inv(), 0, "{what}");
        assert_eq!(m.get_cnt_rxs_inv_err(), 1, "{what}");
        assert_eq!(m.get_cnt_rxs_cqe(), 1, "{what}");
        assert!(m.get_cnt_rxs_drop_qp() >= 1, "{what}: later Send dropped");
    }
}

/// The entry invalidated is exactly the one named: a Write through a
/// second region of the same PD after the Send with Invalidate still
/// lands; and the cost: clocks from the last MAC beat to the CQE write,
/// a Send vs a Send with Invalidate of the same size.
#[test]
fn only_the_named_stag_is_invalidated_and_the_cost() {
    let mut r = Rig::new(0x52);
    // No DMA read jitter: the receive WQE is fetched when the Send comes,
    // so jitter would be in the latency.
    r.dma = DmaServer::new(DmaConfig {
        read_jitter: 0,
        seed: 1,
        ..DmaConfig::default()
    });
    let va = 0x6666_0000_0000;
    let a = r.sparse_region(0x40, 0x9a, RW, va, 4096, |_| {});
    let a2 = r.sparse_region(0x42, 0x9c, RW, va, 4096, |_| {});
    let b = r.sparse_region(0x41, 0x9b, RW, va, 4096, |_| {});
    let mut lat = Vec::new();
    // A first Send, not measured: it also pays the TPT arbiter's one clock
    // to turn its grant to `rx_send` after reset (docs/rtl.md, "TPT
    // check-port arbiter"); the four measured messages keep the grant.
    let order = [None, None, Some(a.lkey), None, Some(a2.lkey)];
    for (i, inv) in order.into_iter().enumerate() {
        r.post(&[2048]);
        r.ring_rq();
        r.run(50_000);
        let d = r.rng.bytes(16);
        peer(
            &mut r,
            &Message::Send {
                data: &d,
                solicited: false,
                invalidate: inv,
            },
        );
        r.run(50_000);
        r.check(i, i as u32, &d, false);
        if i > 0 {
            lat.push(r.last_wr - r.last_mac);
        } else {
            // Its CQE is consumed: the CQ holds four.
            r.csr(cq_doorbell_page(CQN) + CQ_CONSUMER, 1);
        }
    }
    let wb = r.rng.bytes(1000);
    peer(
        &mut r,
        &Message::Write {
            stag: b.lkey,
            to: va + 8,
            data: &wb,
        },
    );
    r.run(100_000);
    for (i, &x) in wb.iter().enumerate() {
        assert_eq!(r.rd(b.bus(va + 8 + i as u64), 1)[0], x, "Write octet {i}");
    }
    assert_eq!(r.terms, 0);
    let n = r.node.borrow();
    assert_eq!(n.core.0.get_cnt_rxs_inv(), 2);
    // The invalidation (IChk, the TPT's 4 clocks, IRes) runs while the
    // data stage still writes the segment: it adds at most its own 6
    // clocks, and the DMA write slot of the CQE may round that up.
    assert!(lat[1] + 2 >= lat[0] && lat[1] <= lat[0] + 12, "{lat:?}");
    assert!(lat[3] + 2 >= lat[2] && lat[3] <= lat[2] + 12, "{lat:?}");
    println!(
        "send_inv: last MAC beat -> CQE written, 16-octet Send / Send with Invalidate \
         (twice): {lat:?} clocks, Invalidate adds {} and {}",
        lat[1] as i64 - lat[0] as i64,
        lat[3] as i64 - lat[2] as i64
    );
}
