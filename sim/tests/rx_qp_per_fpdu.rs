//! Each received FPDU is placed with its own connection's QP (its QP
//! number, state and protection domain), however the FPDUs of two
//! connections interleave and however long the placement stalls.
//!
//! `rnic_core` looks the QP up by the FPDU buffer's head record and hands
//! the answer to `ddp_rx` through the register slice between the two
//! (docs/rtl.md, "`ddp_rx` and `placement`"). The buffer moves
//! on to the next record as soon as an FPDU's last beat is in the slice, so
//! a short FPDU can still wait there while the table already answers for
//! the next connection. Here node A has two QPs in two protection domains,
//! each with a region only its own PD may write; B sends one-octet RDMA
//! Writes on both connections at once (each a two-beat FPDU: 14 octets of
//! header and one of payload) while A's DMA server takes its writes slowly,
//! so `ddp_rx` stalls with FPDUs queued behind it. An FPDU checked against
//! the other connection's QP would fail the STag's PD check (RFC 5040 §6.4:
//! a tagged buffer is reachable only through a QP of its PD) and terminate
//! the connection; here every Write must land and both QPs stay up.

use rnic_driver::{
    AccessFlags, DmaMem, MpaOptions, QpState, RemoteAddr, SendOp, SendWr, WcStatus, WorkCompletion,
};
use rnic_sim::link::LinkConfig;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};

/// One-octet Writes per connection.
const WRITES: usize = 48;
/// Writes posted per batch on each QP (the send queues hold 16).
const BATCH: usize = 12;
const REGION: usize = 4096;
/// A's DMA write stream: octets per cycle (the default is 8). A one-octet
/// Write then waits ~500 cycles for the stream, longer than B takes to send
/// the next ones, so FPDUs of both connections queue in the FPDU buffer and
/// the slice holds whole FPDUs while the buffer moves on. At 0.25 and 0.02
/// they did not queue, and a core that took the QP fields beside the slice
/// instead of through it passed; at this rate it fails (B's completions
/// stop short).
const SLOW_WRITE_BW: f64 = 0.002;
const BUDGET: u64 = 4_000_000;

#[test]
fn fpdus_of_two_connections_are_placed_with_their_own_qp() {
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let acc = |f| AccessFlags::from_bits(f).unwrap();
    let pds_a = [a.alloc_pd().unwrap(), a.alloc_pd().unwrap()];
    let pd_b = b.alloc_pd().unwrap();
    let cq_a = a.create_cq(16).unwrap();
    let cq_b = b.create_cq(64).unwrap();
    let qps_a = [
        pds_a[0].create_qp(&cq_a, &cq_a, 4, 4).unwrap(),
        pds_a[1].create_qp(&cq_a, &cq_a, 4, 4).unwrap(),
    ];
    let qps_b = [
        pd_b.create_qp(&cq_b, &cq_b, 16, 4).unwrap(),
        pd_b.create_qp(&cq_b, &cq_b, 16, 4).unwrap(),
    ];
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qps_a[0], &b, &qps_b[0], mpa, b"A0", b"B0").unwrap();
    connect_pair(&a, &qps_a[1], &b, &qps_b[1], mpa, b"A1", b"B1").unwrap();
    let bufs_a = [a.alloc_dma(REGION).unwrap(), a.alloc_dma(REGION).unwrap()];
    for buf in &bufs_a {
        buf.write(0, &[0u8; REGION]).unwrap();
    }
    let mrs_a = [0, 1].map(|i| {
        pds_a[i]
            .reg_mr(
                &bufs_a[i],
                0,
                REGION,
                acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
            )
            .unwrap()
    });
    // B's source octets: connection c writes octet 0x40 * (c + 1) + i % 64
    // to offset 7 * i of its region, so a Write in the wrong place shows.
    let octet = |c: usize, i: usize| (0x40 * (c + 1) + i % 64) as u8;
    let buf_b = b.alloc_dma(2 * WRITES).unwrap();
    let src: Vec<u8> = (0..2)
        .flat_map(|c| (0..WRITES).map(move |i| octet(c, i)))
        .collect();
    buf_b.write(0, &src).unwrap();
    let mr_b = pd_b
        .reg_mr(&buf_b, 0, 2 * WRITES, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    world.borrow().nodes[0]
        .hw
        .borrow_mut()
        .dma
        .set_write_bw(SLOW_WRITE_BW)
        .unwrap();

    let mut wcs: Vec<WorkCompletion> = Vec::new();
    let mut out = [WorkCompletion::default(); 16];
    for start in (0..WRITES).step_by(BATCH) {
        for c in 0..2 {
            let sges: Vec<_> = (start..start + BATCH)
                .map(|i| [mr_b.sge((c * WRITES + i) as u64, 1).unwrap()])
                .collect();
            let wrs: Vec<SendWr> = (start..start + BATCH)
                .zip(&sges)
                .map(|(i, sge)| SendWr {
                    wr_id: (c * WRITES + i) as u64,
                    op: SendOp::RdmaWrite(RemoteAddr {
                        addr: mrs_a[c].va() + 7 * i as u64,
                        rkey: mrs_a[c].rkey(),
                    }),
                    sges: sge,
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                })
                .collect();
            qps_b[c].post_send(&wrs).unwrap();
        }
        let want = 2 * (start + BATCH);
        run_until(&world, BUDGET, |_| {
            let n = cq_b.poll(&mut out).unwrap();
            wcs.extend_from_slice(&out[..n]);
            wcs.len() >= want
        })
        .unwrap_or_else(|_| panic!("B completes {want} Writes: {} so far", wcs.len()));
    }
    for wc in &wcs {
        assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
    }
    // B completes a Write when it is sent, maybe before A has placed it:
    // run until A's regions hold every Write (or the budget is spent).
    let regions = || {
        bufs_a.each_ref().map(|buf| {
            let mut got = vec![0u8; REGION];
            buf.read(0, &mut got).unwrap();
            got
        })
    };
    let all_placed = |r: &[Vec<u8>; 2]| (0..2).all(|c| (0..WRITES).all(|i| r[c][7 * i] != 0));
    let mut spent = 0;
    while !all_placed(&regions()) && spent < BUDGET {
        let _ = run_until(&world, 10_000, |_| false);
        spent += 10_000;
    }
    let got = regions();
    for c in 0..2 {
        let got = &got[c];
        for i in 0..WRITES {
            assert_eq!(got[7 * i], octet(c, i), "connection {c}, Write {i}");
        }
        let placed = got.iter().filter(|&&o| o != 0).count();
        assert_eq!(placed, WRITES, "connection {c}: octets outside the Writes");
        assert_eq!(qps_a[c].state(), QpState::Rts, "A's QP {c}");
        assert_eq!(qps_b[c].state(), QpState::Rts, "B's QP {c}");
    }
    // Nothing went wrong on A's side either (no error completions).
    assert_eq!(cq_a.poll(&mut out).unwrap(), 0);
}
