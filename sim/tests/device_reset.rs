//! Device reset and enable (BAR0 `CTRL_RESET`, `CTRL_ENABLE`) between two
//! co-simulated nodes, through the driver: a context on node B is killed in
//! the middle of two large RDMA Writes (A → B and B → A, so B has DMA
//! writes and DMA reads in flight), B's device is reset and, after the
//! reset, no DMA write lands in host memory that existed before it, the
//! disabled device takes no frame and no doorbell, and a fresh
//! `Context::open` on B connects again and moves data byte-exact.
//!
//! References: the octets the test wrote (B's old buffers are filled with
//! a pattern once the reset is done and must keep it), the DMA server's log
//! of every write after the reset (each must be in memory allocated after
//! it), the core's counters.

use std::time::Instant;

use rnic_driver::{
    AccessFlags, Bus, Context, DmaMem, MpaOptions, Mr, Qp, RemoteAddr, SendOp, SendWr, WcStatus,
    WorkCompletion,
};
use rnic_sim::dma::DmaEvent;
use rnic_sim::link::LinkConfig;
use rnic_sim::rtl_run::{connect_pair, expect_event, net_config, open_node, run_until, world_pair};
use rnic_sim::sim_bus::{driver_options, SimBus};
use rnic_wire::abi::csr;
use rnic_wire::abi::mailbox::EventKind;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::abi::wqe::Sge;

/// Each direction's transfer.
const LEN: usize = 256 * 1024;
/// B's context is killed once this much of A's Write is placed at B.
const KILL_AT: usize = 48 * 1024;
const BUDGET: u64 = 2_000_000;
const PATTERN: u8 = 0xA5;

fn data(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ (i >> 8) as u8 ^ seed)
        .collect()
}

/// A signaled RDMA Write of the whole `sge` to the start of `to`.
fn write(qp: &Qp<'_, SimBus>, sge: Sge, to: &Mr<'_, SimBus>) {
    qp.post_send(&[SendWr {
        wr_id: 1,
        op: SendOp::RdmaWrite(RemoteAddr {
            addr: to.va(),
            rkey: to.rkey(),
        }),
        sges: &[sge],
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .unwrap();
}

fn mpa() -> MpaOptions {
    MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    }
}

#[test]
fn reset_mid_transfer_then_a_fresh_context_works() {
    let wall = Instant::now();
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let acc = |b| AccessFlags::from_bits(b).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let pd_a = a.alloc_pd().unwrap();
    let cq_a = a.create_cq(16).unwrap();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 16, 4).unwrap();
    let src_a = a.alloc_dma(LEN).unwrap();
    let dst_a = a.alloc_dma(LEN).unwrap();
    src_a.write(0, &data(1, LEN)).unwrap();
    let mr_src_a = pd_a
        .reg_mr(&src_a, 0, LEN, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_dst_a = pd_a
        .reg_mr(
            &dst_a,
            0,
            LEN,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();

    // ---- the first user of B: connects, starts a large Write each way
    let b = open_node(&world, 1, 1500).unwrap();
    let pd_b = b.alloc_pd().unwrap();
    let cq_b = b.create_cq(16).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 16, 4).unwrap();
    let src_b = b.alloc_dma(LEN).unwrap();
    let dst_b = b.alloc_dma(LEN).unwrap();
    src_b.write(0, &data(2, LEN)).unwrap();
    let mr_src_b = pd_b
        .reg_mr(&src_b, 0, LEN, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_dst_b = pd_b
        .reg_mr(
            &dst_b,
            0,
            LEN,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    connect_pair(&a, &qp_a, &b, &qp_b, mpa(), b"", b"").unwrap();
    write(&qp_a, mr_src_a.sge(0, LEN as u32).unwrap(), &mr_dst_b);
    write(&qp_b, mr_src_b.sge(0, LEN as u32).unwrap(), &mr_dst_a);
    let placed = |w: &rnic_sim::node::World, i: usize| -> usize {
        w.nodes[i]
            .hw
            .borrow()
            .placed
            .iter()
            .map(|p| p.2 as usize)
            .sum()
    };
    run_until(&world, BUDGET, |w| placed(w, 1) >= KILL_AT).expect("A's Write reaches B");
    let (at_b, at_a) = {
        let w = world.borrow();
        (placed(&w, 1), placed(&w, 0))
    };
    assert!(at_b < LEN && at_a < LEN, "both transfers are under way");
    println!("killing B's context: {at_b} octets placed at B, {at_a} at A");

    // ---- kill: the process is gone, nothing is cleaned up (its memory
    // stays where it was, as pinned pages do until the device lets go)
    std::mem::forget(mr_src_b);
    std::mem::forget(mr_dst_b);
    std::mem::forget(qp_b);
    std::mem::forget(cq_b);
    std::mem::forget(b);

    // ---- the reset, as the next Context::open does it
    let bus = SimBus::new(world.clone(), 1);
    let hw = bus.hw().clone();
    let t0 = bus.cycle();
    bus.write32(csr::CTRL, csr::CTRL_RESET);
    let first = bus.read32(csr::CTRL);
    assert_eq!(
        first & csr::CTRL_RESET,
        csr::CTRL_RESET,
        "CTRL_RESET reads 1 while the reset runs"
    );
    let mut reads = 1;
    while bus.read32(csr::CTRL) & csr::CTRL_RESET != 0 {
        reads += 1;
        assert!(bus.cycle() - t0 < 100_000, "the reset never ended");
        world.borrow_mut().round();
    }
    let took = bus.cycle() - t0;
    println!("reset done {took} clocks after the CTRL_RESET write ({reads} CTRL reads)");
    assert_eq!(bus.read32(csr::CTRL), 0, "CTRL_ENABLE is 0 after the reset");
    assert_eq!(bus.read32(csr::EQ_ENTRIES), 0, "the event queue is off");
    // the port's identity stays (BAR0's interface configuration)
    let ip = net_config(2, 1500).ip;
    assert_eq!(bus.read32(csr::IPV4_ADDR), u32::from(ip), "IPv4 kept");
    assert_eq!(bus.read32(csr::MTU), 1500, "MTU kept");
    // From here on: B's old buffers hold the pattern, and every DMA write
    // must land in memory allocated after this point.
    src_b.write(0, &vec![PATTERN; LEN]).unwrap();
    dst_b.write(0, &vec![PATTERN; LEN]).unwrap();
    let mark = hw.borrow_mut().mem.alloc(1, 1).unwrap();
    let faults0 = hw.borrow().dma.faults().len();
    hw.borrow_mut().dma.set_log(true);

    // ---- disabled: A's frames keep coming (its connection does not know),
    // none is taken; a doorbell goes nowhere
    let (rx0, db0) = {
        let n = hw.borrow();
        (n.core.get_cnt_rx_ok(), n.core.get_cnt_db())
    };
    bus.write32(csr::qp_doorbell_page(0), 5);
    let f0 = world.borrow().nodes[0].hw.borrow().mac_tx_frames;
    run_until(&world, 30_000, |_| false).ok();
    let sent = world.borrow().nodes[0].hw.borrow().mac_tx_frames - f0;
    {
        let n = hw.borrow();
        assert_eq!(
            n.core.get_cnt_rx_ok(),
            rx0,
            "no frame enters while disabled"
        );
        assert_eq!(
            n.core.get_cnt_db(),
            db0,
            "no doorbell is taken while disabled"
        );
    }
    assert!(sent > 0, "A kept sending while B was disabled");
    println!("disabled: {sent} frames from A dropped, no doorbell taken");

    // ---- a fresh context on B: reset (again), firmware ready, enabled
    let b2 = Context::open_with(bus, driver_options()).expect("fresh Context::open on B");
    b2.configure(&net_config(2, 1500)).unwrap();
    assert_eq!(b2.bus().read32(csr::CTRL), csr::CTRL_ENABLE);
    let pd_b2 = b2.alloc_pd().unwrap();
    let cq_b2 = b2.create_cq(16).unwrap();
    let qp_b2 = pd_b2.create_qp(&cq_b2, &cq_b2, 16, 4).unwrap();
    let src_b2 = b2.alloc_dma(LEN).unwrap();
    let dst_b2 = b2.alloc_dma(LEN).unwrap();
    let want_b2 = data(3, LEN);
    src_b2.write(0, &want_b2).unwrap();
    let mr_src_b2 = pd_b2
        .reg_mr(&src_b2, 0, LEN, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_dst_b2 = pd_b2
        .reg_mr(
            &dst_b2,
            0,
            LEN,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    // A's old stream dies: the fresh B answers its next segment with a RST
    // (RFC 9293 §3.10.7.1: no connection), and A's host hears of it.
    let lost = expect_event(&a, EventKind::ConnectionLost, "A").unwrap();
    assert_eq!(
        lost.handle,
        qp_a.qpn(),
        "the old QP's stream is the one lost"
    );
    // A: a new QP on its same context
    let cq_a2 = a.create_cq(16).unwrap();
    let qp_a2 = pd_a.create_qp(&cq_a2, &cq_a2, 16, 4).unwrap();
    let dst_a2 = a.alloc_dma(LEN).unwrap();
    let mr_dst_a2 = pd_a
        .reg_mr(
            &dst_a2,
            0,
            LEN,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    connect_pair(&a, &qp_a2, &b2, &qp_b2, mpa(), b"again", b"").unwrap();
    write(&qp_a2, mr_src_a.sge(0, LEN as u32).unwrap(), &mr_dst_b2);
    write(&qp_b2, mr_src_b2.sge(0, LEN as u32).unwrap(), &mr_dst_a2);
    let mut wc = [WorkCompletion::default(); 4];
    let (mut done_a, mut done_b) = (false, false);
    let start = b2.bus().cycle();
    while !(done_a && done_b) {
        assert!(
            b2.bus().cycle() - start < BUDGET,
            "the new transfers did not complete"
        );
        let n = cq_a2.poll(&mut wc).unwrap();
        for c in &wc[..n] {
            assert_eq!(c.status, WcStatus::Success, "{c:?}");
            done_a = true;
        }
        let n = cq_b2.poll(&mut wc).unwrap();
        for c in &wc[..n] {
            assert_eq!(c.status, WcStatus::Success, "{c:?}");
            done_b = true;
        }
        world.borrow_mut().round();
    }
    // both Writes placed whole (the peer's CQE comes after its ACK, so the
    // data is there)
    let mut got = vec![0u8; LEN];
    dst_b2.read(0, &mut got).unwrap();
    assert!(got == data(1, LEN), "A → B after the reset is byte-exact");
    dst_a2.read(0, &mut got).unwrap();
    assert!(got == want_b2, "B → A after the reset is byte-exact");

    // ---- nothing of the old transfers reached B's memory after the reset
    src_b.read(0, &mut got).unwrap();
    assert!(
        got.iter().all(|&x| x == PATTERN),
        "B's old source untouched"
    );
    dst_b.read(0, &mut got).unwrap();
    assert!(
        got.iter().all(|&x| x == PATTERN),
        "B's old Write target untouched: first changed octet at {:?}",
        got.iter().position(|&x| x != PATTERN)
    );
    let n = hw.borrow();
    let writes: Vec<_> = n
        .dma
        .log()
        .iter()
        .filter_map(|e| match e {
            DmaEvent::Write { addr, len, .. } => Some((*addr, *len)),
            _ => None,
        })
        .collect();
    assert!(!writes.is_empty());
    for &(addr, len) in &writes {
        assert!(
            addr >= mark,
            "a DMA write of {len} octets at {addr:#x} after the reset, into memory from before it"
        );
    }
    assert_eq!(
        n.dma.faults().len(),
        faults0,
        "{:?}",
        &n.dma.faults()[faults0..]
    );
    println!(
        "after the reset: {} DMA writes, all into new memory; new transfers byte-exact; wall {:?}",
        writes.len(),
        wall.elapsed()
    );
    drop(n);
    let _ = (&mr_dst_a, &mr_dst_a2, &mr_src_b2, &dst_a);
}
