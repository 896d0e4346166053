//! The order of the device's DMA writes on one node: a CQE is written only
//! after every data write it reports, whichever of the core's two write
//! sources (`ddp_rx`'s tagged placement, `rx_send`'s Send data and CQEs)
//! made them. The host may read a buffer as soon as it sees the CQE, so a
//! CQE ahead of its data would hand out stale octets (RFC 5040 §5.5: a
//! message is completed only after it, and every message before it on the
//! stream, is placed).
//!
//! Two co-simulated nodes through the driver. A posts signaled RDMA Reads
//! of B's region (their Read Responses are placed through `ddp_rx`, their
//! CQEs come from the Read requester through `rx_send`), while B sends RDMA
//! Writes into A and then a Send that A receives (the Send's CQE must come
//! after the Writes placed before it). The reference is A's DMA server log
//! (`DmaServer::log`: every write request, in the order the device handed
//! them over) and the CQEs as `rnic_wire::abi::cqe::Cqe` parses them in A's
//! memory; the data must also equal what was read or written.

use rnic_driver::{
    AccessFlags, DmaMem, MpaOptions, RecvWr, RemoteAddr, SendOp, SendWr, Sge, WcOpcode, WcStatus,
    WorkCompletion,
};
use rnic_sim::dma::DmaEvent;
use rnic_sim::link::LinkConfig;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair};
use rnic_wire::abi::cqe::{Cqe, CQE_SIZE};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};

/// A's Read sinks: (offset in A's region, length). Each crosses at least one
/// 4 KiB page, so a Read Response segment is placed as several DMA requests.
const READS: [(usize, usize); 3] = [(100, 5000), (8192 + 3000, 3000), (16384 + 7, 9000)];
/// B's RDMA Writes into A: (offset in A's region, length).
const WRITES: [(usize, usize); 2] = [(32768 + 50, 6000), (45056 + 4000, 2000)];
/// A's receive buffer for B's Send: (offset, buffer length), and the Send.
const RECV: (usize, usize) = (53248, 512);
const SEND_LEN: usize = 300;
const REGION: usize = 65536;
/// wr_id of A's receive; A's Reads are 1..=3.
const RECV_WR: u64 = 0x5e4d;
const BUDGET: u64 = 3_000_000;

/// A work request without the solicited and fence flags.
fn wr(wr_id: u64, op: SendOp, sges: &[Sge], signaled: bool) -> SendWr<'_> {
    SendWr {
        wr_id,
        op,
        sges,
        signaled,
        solicited: false,
        fence: false,
        inline_data: None,
    }
}

/// Index in `log` of the last write overlapping `[addr, addr + len)`.
fn last_write(log: &[DmaEvent], addr: u64, len: usize) -> Option<usize> {
    log.iter().rposition(|e| match *e {
        DmaEvent::Write {
            addr: a, len: l, ..
        } => a < addr + len as u64 && addr < a + l as u64,
        _ => false,
    })
}

#[test]
fn cqes_are_written_after_the_data_they_report() {
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (scq_a, rcq_a) = (a.create_cq(16).unwrap(), a.create_cq(16).unwrap());
    let (scq_b, rcq_b) = (b.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&scq_a, &rcq_a, 8, 4).unwrap();
    let qp_b = pd_b.create_qp(&scq_b, &rcq_b, 8, 4).unwrap();
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"A", b"B").unwrap();
    let acc = |f| AccessFlags::from_bits(f).unwrap();
    let buf_a = a.alloc_dma(REGION).unwrap();
    let buf_b = b.alloc_dma(REGION).unwrap();
    let mr_a = pd_a
        .reg_mr(
            &buf_a,
            0,
            REGION,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let mr_b = pd_b
        .reg_mr(
            &buf_b,
            0,
            REGION,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ),
        )
        .unwrap();
    let mut rng = Rng::new(0x0d3e);
    let src_b = rng.bytes(REGION);
    buf_b.write(0, &src_b).unwrap();
    buf_a.write(0, &vec![0u8; REGION]).unwrap();

    // A's DMA writes from here on, in the order the device made them.
    world.borrow().nodes[0].hw.borrow_mut().dma.set_log(true);
    qp_a.post_recv(&[RecvWr {
        wr_id: RECV_WR,
        sges: &[mr_a.sge(RECV.0 as u64, RECV.1 as u32).unwrap()],
    }])
    .unwrap();
    // B's sources: the Writes take B's octets at A's offsets, the Send those
    // at the receive buffer's offset (distinct regions of B's buffer).
    let read_sges: Vec<_> = READS
        .iter()
        .map(|&(off, len)| [mr_a.sge(off as u64, len as u32).unwrap()])
        .collect();
    let read_wrs: Vec<SendWr> = READS
        .iter()
        .zip(&read_sges)
        .enumerate()
        .map(|(i, (&(off, _), sge))| {
            // Read B's octets at the same offset as the sink's.
            let at = RemoteAddr {
                addr: mr_b.va() + off as u64,
                rkey: mr_b.rkey(),
            };
            wr(i as u64 + 1, SendOp::RdmaRead(at), sge, true)
        })
        .collect();
    qp_a.post_send(&read_wrs).unwrap();
    let write_sges: Vec<_> = WRITES
        .iter()
        .map(|&(off, len)| [mr_b.sge(off as u64, len as u32).unwrap()])
        .collect();
    let mut b_wrs: Vec<SendWr> = WRITES
        .iter()
        .zip(&write_sges)
        .map(|(&(off, _), sge)| {
            let at = RemoteAddr {
                addr: mr_a.va() + off as u64,
                rkey: mr_a.rkey(),
            };
            wr(0, SendOp::RdmaWrite(at), sge, false)
        })
        .collect();
    let send_sge = [mr_b.sge(RECV.0 as u64, SEND_LEN as u32).unwrap()];
    b_wrs.push(wr(9, SendOp::Send, &send_sge, true));
    qp_b.post_send(&b_wrs).unwrap();

    // Every completion, through the driver.
    let mut wcs: Vec<WorkCompletion> = Vec::new();
    let mut out = [WorkCompletion::default(); 8];
    run_until(&world, BUDGET, |_| {
        for cq in [&scq_a, &rcq_a] {
            let n = cq.poll(&mut out).unwrap();
            wcs.extend_from_slice(&out[..n]);
        }
        wcs.len() == READS.len() + 1
    })
    .expect("A completes its Reads and B's Send");
    for wc in &wcs {
        assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
    }
    let mut n = [0usize; 2];
    for wc in &wcs {
        match wc.opcode {
            WcOpcode::RdmaRead => n[0] += 1,
            WcOpcode::Recv => n[1] += 1,
            o => panic!("unexpected completion {o:?}"),
        }
    }
    assert_eq!(n, [READS.len(), 1], "{wcs:?}");
    let mut got = vec![0u8; REGION];
    buf_a.read(0, &mut got).unwrap();
    for &(off, len) in READS.iter().chain(&WRITES) {
        assert!(
            got[off..off + len] == src_b[off..off + len],
            "A at {off}+{len}"
        );
    }
    assert!(got[RECV.0..RECV.0 + SEND_LEN] == src_b[RECV.0..RECV.0 + SEND_LEN]);

    // The order of A's DMA writes.
    let w = world.borrow();
    let node = w.nodes[0].hw.borrow();
    let log = node.dma.log();
    let base = buf_a.bus_addr();
    // Where each of our CQEs was written: the log's CQE-sized writes outside
    // the data region, parsed in A's memory (the CQ rings hold 16 entries,
    // so none is overwritten here).
    let cqe_at = |wr_id: u64, opcode: WcOpcode| -> usize {
        let hits: Vec<usize> = log
            .iter()
            .enumerate()
            .filter_map(|(i, e)| match *e {
                DmaEvent::Write { addr, len, .. }
                    if len == CQE_SIZE && !(base..base + REGION as u64).contains(&addr) =>
                {
                    let mut raw = [0u8; CQE_SIZE];
                    node.mem.read(addr, &mut raw).ok()?;
                    let c = Cqe::parse(&raw).ok()?;
                    (c.wr_id == wr_id && c.opcode == opcode && c.qpn == qp_a.qpn()).then_some(i)
                }
                _ => None,
            })
            .collect();
        assert_eq!(hits.len(), 1, "one CQE write for wr_id {wr_id:#x}");
        hits[0]
    };
    let mut report = Vec::new();
    for (i, &(off, len)) in READS.iter().enumerate() {
        let cqe = cqe_at(i as u64 + 1, WcOpcode::RdmaRead);
        let data = last_write(log, base + off as u64, len).expect("Read data written");
        let at = |k: usize| match log[k] {
            DmaEvent::Write { cycle, .. } => cycle,
            _ => unreachable!(),
        };
        report.push(format!(
            "Read {}: data ..{data}, CQE {cqe}, {} clocks later",
            i + 1,
            at(cqe) - at(data)
        ));
        assert!(
            data < cqe,
            "RDMA Read {}: its CQE (log entry {cqe}) went before its data (last write {data})",
            i + 1
        );
    }
    let cqe = cqe_at(RECV_WR, WcOpcode::Recv);
    for &(off, len) in WRITES.iter().chain([&(RECV.0, SEND_LEN)]) {
        let data = last_write(log, base + off as u64, len).expect("data written");
        report.push(format!("data at {off}: ..{data}, Recv CQE {cqe}"));
        assert!(
            data < cqe,
            "the Send's CQE (log entry {cqe}) went before data at {off}+{len} (last write {data})"
        );
    }
    println!("write order: {}", report.join("; "));
}
