//! The receive-side Send path inside `rnic_core` (Verilator): the firmware
//! programs a connection in RDMA mode, a QP with a receive ring and a CQ
//! through `fw_*` (`rnic_fw::hal::Hal::write_conn`/`write_qp`/`write_cq`
//! on `CoSimHal`); the host writes receive WQEs into host memory
//! (`RecvWqe::emit`) and rings the RQ producer doorbell and the CQ consumer
//! doorbell through BAR0 (`csr_*`); the peer's Sends are built with
//! `rnic_wire::model::TxStream` (MPA/DDP/RDMAP) and framed with
//! `rnic_wire::model::net::data_frame` into `mac_rx_*`. Checked against
//! those references: the payload lands octet for octet in the WQE's SGEs
//! (nothing around them touched), and each completion in the CQ ring parses
//! with `rnic_wire::abi::cqe::Cqe::parse` with the WQE's wr_id, the message
//! length, opcode `Recv`, the solicited flag, the QP and the phase bit of
//! its pass over the ring.

mod rxs_rig;
use rnic_wire::abi::csr::{cq_doorbell_page, qp_doorbell_page};
use rnic_wire::abi::doorbell::{CQ_CONSUMER, QP_RQ_PRODUCER};
use rxs_rig::*;

#[test]
fn sends_land_in_posted_wqes_with_cqes() {
    let mut r = Rig::new(0x5e4d);
    let msgs: Vec<(Vec<u8>, bool)> = vec![
        (r.rng.bytes(100), false),
        (r.rng.bytes(3000), true),
        (r.rng.bytes(777), false),
        (r.rng.bytes(1), true),
        (r.rng.bytes(2100), false),
    ];
    // WQEs 0..3: one SGE; the second splits 3000 octets over two SGEs
    r.post(&[128]);
    r.post(&[1000, 2500]);
    r.post(&[800]);
    let prod = r.rq_prod;
    r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    let t0 = r.node.borrow().core.0.cycle();
    for (d, se) in &msgs[..3] {
        r.send(d, *se);
    }
    let clocks = r.run(200_000);
    for (i, (d, se)) in msgs[..3].iter().enumerate() {
        r.check(i, i as u32, d, *se);
    }
    // CQ of 4: the host consumes 3, so entries 3 and 4 (the second pass,
    // phase 0) fit; without the consumer doorbell entry 4 would overflow
    r.csr(cq_doorbell_page(CQN) + CQ_CONSUMER, 3);
    r.post(&[1]);
    r.post(&[4096]);
    let prod = r.rq_prod;
    r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    for (d, se) in &msgs[3..] {
        r.send(d, *se);
    }
    r.run(200_000);
    for (i, (d, se)) in msgs.iter().enumerate().skip(3) {
        r.check(i, i as u32, d, *se);
    }
    assert!(r.dma.faults().is_empty(), "DMA faults {:?}", r.dma.faults());
    assert_eq!(r.terms, 0, "no Terminate");
    let n = r.node.borrow();
    let m = &n.core.0;
    assert_eq!(m.get_cnt_rxs_cqe(), 5, "CQEs written");
    // Receive WQEs are read ahead: the 3 posted first in one read, the 2
    // posted later in another.
    assert_eq!(
        m.get_cnt_rxs_fetch(),
        2,
        "one WQE read per doorbell's batch"
    );
    assert_eq!(m.get_cnt_rxs_cq_overflow(), 0);
    assert_eq!(m.get_cnt_rxs_lost(), 0);
    assert_eq!(m.get_cnt_rxs_drop_qp(), 0);
    assert_eq!(m.get_cnt_rxs_db_bad(), 0);
    assert_eq!(m.get_cnt_dma_rd_cpl_bad(), 0);
    println!(
        "rx_send_core: 3 Sends (3877 octets) placed with CQEs: {clocks} clocks from the RQ doorbell (clock {t0}) to quiet"
    );
}

#[test]
fn send_without_cq_room_overflows_the_cq() {
    // the same rig, no consumer doorbell: the fifth completion finds the CQ
    // of 4 full → no write, CqState::Overflow, counted (docs/rtl.md cpl_write)
    let mut r = Rig::new(77);
    for _ in 0..5 {
        r.post(&[64]);
    }
    let prod = r.rq_prod;
    r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    let msgs: Vec<Vec<u8>> = (0..5).map(|_| r.rng.bytes(50)).collect();
    for d in &msgs {
        r.send(d, false);
    }
    r.run(200_000);
    for (i, d) in msgs.iter().enumerate().take(4) {
        r.check(i, i as u32, d, false);
    }
    let n = r.node.borrow();
    assert_eq!(n.core.0.get_cnt_rxs_cqe(), 4);
    assert_eq!(n.core.0.get_cnt_rxs_cq_overflow(), 1);
}

/// Issue 3's figure: clocks from the last beat of a Send's frame on
/// `mac_rx_*` to the last DMA beat of its CQE, with the WQE already fetched
/// (posted and rung before the frame arrives). Includes the store-and-forward
/// of `rx_fifo` and the FPDU buffer, so it grows with the frame length.
#[test]
fn cqe_latency_after_the_last_beat() {
    let mut r = Rig::new(0x1a7e);
    let mut lat = Vec::new();
    for (i, n) in [16usize, 1024, 1400].into_iter().enumerate() {
        r.post(&[2048]);
        let prod = r.rq_prod;
        r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
        r.run(50_000); // the WQE fetch is done before the frame comes
        let d = r.rng.bytes(n);
        r.send(&d, false);
        r.run(50_000);
        r.check(i, i as u32, &d, false);
        assert!(r.last_wr > r.last_mac, "CQE written after the frame");
        lat.push((n, r.last_wr - r.last_mac));
    }
    assert_eq!(r.terms, 0);
    println!("rx_send_core: last MAC beat -> CQE written (Send payload octets, clocks): {lat:?}");
    // Measured 140 + about 2 clocks per 8-octet beat (two store-and-forward
    // stages: rx_fifo for the FCS, the FPDU buffer for the CRC); a loose
    // regression bound in clocks.
    for &(n, c) in &lat {
        assert!(c < 300 + 3 * n as u64 / 8, "{n} octets: {c} clocks");
    }
}

/// Measurement: one 64 KiB Send (45 segments of 1460 octets) into one
/// contiguous buffer; clocks from the first MAC beat to the last DMA write.
#[test]
fn throughput_64k_send() {
    let mut r = Rig::new(0x64c);
    r.post(&[65536]);
    let prod = r.rq_prod;
    r.csr(qp_doorbell_page(QPN) + QP_RQ_PRODUCER, prod);
    r.run(100_000);
    let d = r.rng.bytes(65536);
    let t0 = r.node.borrow().core.0.cycle();
    r.send(&d, false);
    r.run(2_000_000);
    r.check(0, 0, &d, false);
    let clocks = r.last_wr - t0;
    println!(
        "rx_send_core: 64 KiB Send (45 segments) into one buffer: {clocks} clocks first MAC \
         beat -> last DMA write, {:.1} clocks/segment, {:.2} octets/clock",
        clocks as f64 / 45.0,
        65536.0 / clocks as f64
    );
}
