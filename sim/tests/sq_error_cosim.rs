//! A send WQE whose SGE the device refuses, between two co-simulated nodes:
//! A posts an RDMA Write and a Send through the driver, then rewrites the
//! Write's WQE in its mapped send ring with a wrong lkey (the driver checks
//! what it posts; user space writing the ring directly is not checked by
//! it). A's device completes the Write with
//! `LocalProtectionError` without reading or sending an octet of it, turns
//! the QP's send side off and tells A's firmware (exception
//! `SendQueueError`), which terminates the stream: B receives a Terminate
//! with the cause RDMAP Local Catastrophic (RFC 5040 §7.2, §5.3), both hosts
//! get `QpError`, the Send behind the Write is flushed (`WrFlushError`),
//! and not one octet of B's memory changes.
//!
//! References: the driver's completions and events, `rnic_wire::terminate`
//! for the cause, `rnic_wire::abi::cqe::decode_term_cause`, and B's memory
//! compared octet by octet with what the test wrote.

use rnic_driver::{
    AccessFlags, DmaMem, MpaOptions, RecvWr, RemoteAddr, SendOp, SendWr, WcStatus, WorkCompletion,
};
use rnic_sim::link::LinkConfig;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair, GUARD};
use rnic_wire::abi::cqe::decode_term_cause;
use rnic_wire::abi::mailbox::{Event, EventKind};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::abi::wqe::{SendWqe, SgeList};
use rnic_wire::terminate::{RdmapError, TerminateCause};
use std::path::PathBuf;

const REGION: usize = 8192;
const BUDGET: u64 = 60_000;

/// The Terminate cause of node `n`'s first QpError event, if it has one.
fn qp_error_cause(w: &rnic_sim::node::World, n: usize) -> Option<Option<TerminateCause>> {
    w.nodes[n]
        .hw
        .borrow()
        .events
        .iter()
        .map(|e| Event::parse(e).unwrap())
        .find(|e| e.kind == EventKind::QpError)
        .map(|e| decode_term_cause(e.status).unwrap())
}

#[test]
fn refused_send_sge_terminates_the_stream() {
    let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sq_error_cosim.pcap");
    let world = world_pair(LinkConfig::default(), Some(&pcap)).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (scq_a, rcq_a) = (a.create_cq(16).unwrap(), a.create_cq(16).unwrap());
    let (scq_b, rcq_b) = (b.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&scq_a, &rcq_a, 16, 4).unwrap();
    let qp_b = pd_b.create_qp(&scq_b, &rcq_b, 4, 16).unwrap();
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"A", b"B").unwrap();
    let acc = |x| AccessFlags::from_bits(x).unwrap();
    let buf_a = a.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_b = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_br = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_b = pd_b
        .reg_mr(
            &buf_b,
            GUARD,
            REGION,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let mr_br = pd_b
        .reg_mr(&buf_br, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mut rng = Rng::new(0x5e4e);
    let shadow_b = rng.bytes(REGION + 2 * GUARD);
    buf_b.write(0, &shadow_b).unwrap();
    let shadow_br = rng.bytes(REGION + 2 * GUARD);
    buf_br.write(0, &shadow_br).unwrap();
    buf_a.write(GUARD, &rng.bytes(REGION)).unwrap();
    qp_b.post_recv(&[RecvWr {
        wr_id: 90,
        sges: &[mr_br.sge(0, 1000).unwrap()],
    }])
    .unwrap();

    // A posts a Write and a Send through the driver (which checks their
    // SGEs), then, before the device runs, rewrites the Write's WQE in the
    // mapped send ring as a buggy or hostile user-space process could: its
    // SGE now names A's region with a wrong key (the low 8 bits of the
    // STag, RFC 5040 §2.1).
    qp_a.post_send(&[
        SendWr {
            wr_id: 1,
            op: SendOp::RdmaWrite(RemoteAddr {
                addr: mr_b.va(),
                rkey: mr_b.rkey(),
            }),
            sges: &[mr_a.sge(0, 512).unwrap()],
            signaled: true,
            solicited: false,
            fence: false,
        },
        SendWr {
            wr_id: 2,
            op: SendOp::Send,
            sges: &[mr_a.sge(0, 200).unwrap()],
            signaled: true,
            solicited: false,
            fence: false,
        },
    ])
    .unwrap();
    let mut slot = [0u8; SendWqe::SIZE];
    qp_a.sq_ring().read(0, &mut slot).unwrap();
    let mut wqe = SendWqe::parse(&slot).unwrap();
    assert_eq!((wqe.wr_id, wqe.sges.as_slice()[0].lkey), (1, mr_a.lkey()));
    let mut sges = wqe.sges.as_slice().to_vec();
    sges[0].lkey ^= 0x5a;
    wqe.sges = SgeList::new(&sges).unwrap();
    wqe.emit(&mut slot).unwrap();
    qp_a.sq_ring().write(0, &slot).unwrap();

    let mut wcs = Vec::new();
    let c = run_until(&world, BUDGET, |_| {
        let mut wc = [WorkCompletion::default(); 4];
        let n = scq_a.poll(&mut wc).unwrap();
        wcs.extend_from_slice(&wc[..n]);
        wcs.len() >= 2
    })
    .unwrap_or_else(|c| panic!("A's two send completions not there in {c} clocks: {wcs:?}"));
    println!("A's send completions after {c} clocks: {wcs:?}");
    assert_eq!(
        (wcs[0].wr_id, wcs[0].status),
        (1, WcStatus::LocalProtectionError)
    );
    assert_eq!((wcs[1].wr_id, wcs[1].status), (2, WcStatus::WrFlushError));

    // Both hosts learn of it, with our Terminate's cause.
    let cause = TerminateCause::Rdmap(RdmapError::LocalCatastrophic { code: 0xFF });
    let both = |w: &rnic_sim::node::World| {
        qp_error_cause(w, 0).is_some() && qp_error_cause(w, 1).is_some()
    };
    let c = run_until(&world, BUDGET, both).expect("QpError at both nodes");
    println!("QpError at both nodes after {c} more clocks");
    {
        let w = world.borrow();
        assert_eq!(qp_error_cause(&w, 0), Some(Some(cause)), "A's event");
        assert_eq!(
            qp_error_cause(&w, 1),
            Some(Some(cause)),
            "B's event: the Terminate it received"
        );
    }
    // Nothing of either WR reached B: its regions are unchanged, and its
    // receive is flushed, not completed with data.
    // (B's driver flushes its receive when it processes the QpError event.)
    let mut wc = [WorkCompletion::default()];
    run_until(&world, BUDGET, |_| {
        b.process_events().unwrap();
        rcq_b.poll(&mut wc).unwrap() == 1
    })
    .expect("B's receive flushed");
    assert_eq!((wc[0].wr_id, wc[0].status), (90, WcStatus::WrFlushError));
    let mut now = vec![0u8; REGION + 2 * GUARD];
    buf_b.read(0, &mut now).unwrap();
    assert!(now == shadow_b, "B's Write target changed");
    buf_br.read(0, &mut now).unwrap();
    assert!(now == shadow_br, "B's receive buffer changed");
    assert!(world.borrow().nodes[1].hw.borrow().placed.is_empty());
}
