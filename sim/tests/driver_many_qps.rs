//! 64 QPs concurrently through the driver only (issue 6: "many QPs (≥ 64)
//! concurrently"): two co-simulated nodes (Verilated `rnic_core` + real
//! firmware + `rnic_driver` over `SimBus`), 64 connections set up through
//! the CM (B listens, A connects each QP), then every QP of A posts a burst
//! of signaled RDMA Writes and Sends in one `post_send` call each before the
//! simulation moves on (a doorbell storm over all 64 send queues).
//!
//! Checked against the test's own data, independent of the RTL and driver:
//! every octet of B's Write target and receive buffers (guards included)
//! equals a shadow; every WR completes once, with Success, in posting order
//! per QP, at A's send CQs and B's receive CQs; nothing is lost.
//!
//! Limits this runs into (docs/driver.md, "Many QPs"): the core has 64 QPs
//! (`abi::csr::MAX_QP`), 64 connections (`conn_table`) and 16 CQs
//! (`cpl_write::CQ_BITS`); the co-simulated firmware is built with 64
//! connections and 64 QPs (`rnic_sim::node::FW_CONNS`).

use std::collections::BTreeMap;
use std::time::Instant;

use rnic_driver::{
    AccessFlags, Cq, DmaMem, EventKind, Qp, RecvWr, RemoteAddr, SendOp, SendWr, WcOpcode, WcStatus,
    WorkCompletion,
};
use rnic_sim::link::LinkConfig;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{
    connect_params, expect_event, open_node, run_until, world_pair, GUARD, MPA_REV2_CRC, PORT,
    READ_DEPTH,
};
use rnic_sim::sim_bus::SimBus;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};

/// CQs per side; QP `i` uses CQ `i % CQS` (the core has 16).
const CQS: usize = 4;

/// One run: `nqp` connections, each QP posting `writes` Writes and `sends`
/// Sends (interleaved, lengths 1..=`slot`).
struct Plan {
    nqp: usize,
    writes: usize,
    sends: usize,
    slot: usize,
    seed: u64,
}

/// What one WR of A should produce.
#[derive(Debug, Clone, Copy)]
struct Expect {
    wr_id: u64,
    op: WcOpcode,
}

fn acc(bits: u8) -> AccessFlags {
    AccessFlags::from_bits(bits).unwrap()
}

fn drain(cq: &Cq<'_, SimBus>, into: &mut BTreeMap<u32, Vec<WorkCompletion>>) -> usize {
    let mut wc = [WorkCompletion::default(); 32];
    let n = cq.poll(&mut wc).expect("poll");
    for w in &wc[..n] {
        into.entry(w.qp_num).or_default().push(*w);
    }
    n
}

/// B's receive-side counters, for a failure message.
fn counters(world: &std::rc::Rc<std::cell::RefCell<rnic_sim::node::World>>, i: usize) -> String {
    let w = world.borrow();
    let hw = w.nodes[i].hw.borrow();
    let c = &hw.core;
    format!(
        "rx_ok {} rx_overflow {} rx_exc {} rx_exc_full {} mpa_pass {} mpa_span {} mpa_err {} \
         ddp_tagged {} ddp_untagged {} ddp_drop_state {} rxs_send {} rxs_drop_qp {} rxs_fetch {} \
         rxs_bad_wqe {} rxs_cqe {} rxs_cpl_drop {} rxs_cq_overflow {} rxs_lost {} tx_frames {}",
        c.get_cnt_rx_ok(),
        c.get_cnt_rx_overflow(),
        c.get_cnt_rx_exc(),
        c.get_cnt_rx_exc_full(),
        c.get_cnt_mpa_pass(),
        c.get_cnt_mpa_span(),
        c.get_cnt_mpa_err(),
        c.get_cnt_ddp_tagged(),
        c.get_cnt_ddp_untagged(),
        c.get_cnt_ddp_drop_state(),
        c.get_cnt_rxs_send(),
        c.get_cnt_rxs_drop_qp(),
        c.get_cnt_rxs_fetch(),
        c.get_cnt_rxs_bad_wqe(),
        c.get_cnt_rxs_cqe(),
        c.get_cnt_rxs_cpl_drop(),
        c.get_cnt_rxs_cq_overflow(),
        c.get_cnt_rxs_lost(),
        c.get_cnt_tx_frames(),
    )
}

fn run(p: &Plan) {
    let wall = Instant::now();
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    assert!(
        a.caps().max_qp as usize >= p.nqp,
        "MAX_QP {} < {}",
        a.caps().max_qp,
        p.nqp
    );
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let per_cq = (p.nqp.div_ceil(CQS) * (p.writes + p.sends)) as u32;
    let cq_a: Vec<Cq<'_, SimBus>> = (0..CQS).map(|_| a.create_cq(per_cq).unwrap()).collect();
    let cq_b: Vec<Cq<'_, SimBus>> = (0..CQS).map(|_| b.create_cq(per_cq).unwrap()).collect();
    let depth = (p.writes + p.sends) as u32;
    let qp_a: Vec<Qp<'_, SimBus>> = (0..p.nqp)
        .map(|i| {
            let cq = &cq_a[i % CQS];
            pd_a.create_qp(cq, cq, depth, 1).unwrap()
        })
        .collect();
    let qp_b: Vec<Qp<'_, SimBus>> = (0..p.nqp)
        .map(|i| {
            let cq = &cq_b[i % CQS];
            pd_b.create_qp(cq, cq, 1, p.sends.max(1) as u32).unwrap()
        })
        .collect();

    // 64 connections through the CM, one after the other.
    let c0 = world.borrow().cycle();
    let _l = b.listen(PORT, 4).unwrap();
    for (i, (qa, qb)) in qp_a.iter().zip(&qp_b).enumerate() {
        qa.connect(&connect_params(MPA_REV2_CRC), &[i as u8])
            .unwrap_or_else(|e| panic!("QP {i}: connect: {e:?}"));
        let creq = expect_event(&b, EventKind::ConnectRequest, "B").unwrap();
        b.accept(creq.handle, qb, READ_DEPTH, READ_DEPTH, b"ok")
            .unwrap_or_else(|e| panic!("QP {i}: accept: {e:?}"));
        expect_event(&b, EventKind::Established, "B").unwrap();
        let est = expect_event(&a, EventKind::Established, "A")
            .unwrap_or_else(|e| panic!("connection {i}: {e}"));
        assert_eq!(est.handle, qa.qpn(), "A's Established names QP {i}");
    }
    let connect_clocks = world.borrow().cycle() - c0;
    let conns_b = (0..rnic_sim::node::FW_CONNS)
        .filter(|&c| world.borrow().nodes[1].fw.conn(c).is_some())
        .count();
    assert_eq!(conns_b, p.nqp, "B's firmware holds every connection");

    // Memory: A's sources, B's Write target and receive buffers, each WR
    // its own `slot` octets; guards around B's buffers.
    let n_w = p.nqp * p.writes * p.slot;
    let n_r = p.nqp * p.sends * p.slot;
    let n_src = p.nqp * (p.writes + p.sends) * p.slot;
    let buf_a = a.alloc_dma(n_src).unwrap();
    let buf_bw = b.alloc_dma(n_w + 2 * GUARD).unwrap();
    let buf_br = b.alloc_dma(n_r + 2 * GUARD).unwrap();
    let mr_a = pd_a
        .reg_mr(&buf_a, 0, n_src, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_bw = pd_b
        .reg_mr(
            &buf_bw,
            GUARD,
            n_w,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let mr_br = pd_b
        .reg_mr(&buf_br, GUARD, n_r, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mut rng = Rng::new(p.seed);
    let mut shadow_w = rng.bytes(n_w + 2 * GUARD);
    let mut shadow_r = rng.bytes(n_r + 2 * GUARD);
    buf_bw.write(0, &shadow_w).unwrap();
    buf_br.write(0, &shadow_r).unwrap();
    let src = rng.bytes(n_src);
    buf_a.write(0, &src).unwrap();

    // B's receives, one per Send, in order.
    let mut want_b: Vec<Vec<(u64, usize)>> = vec![Vec::new(); p.nqp];
    for (i, qb) in qp_b.iter().enumerate() {
        for k in 0..p.sends {
            let off = (i * p.sends + k) * p.slot;
            let sge = [mr_br.sge(off as u64, p.slot as u32).unwrap()];
            let wr_id = ((i as u64) << 16) | k as u64;
            qb.post_recv(&[RecvWr { wr_id, sges: &sge }]).unwrap();
            want_b[i].push((wr_id, off));
        }
    }
    let rq_lost = world.borrow().nodes[1].hw.borrow().core.get_cnt_rxs_lost();
    assert_eq!(
        rq_lost, 0,
        "B's RQ doorbells lost in rq_db_q (cnt_rxs_lost)"
    );

    // The storm: every QP's whole burst in one post_send, all 64 before the
    // world runs another clock.
    let mut want_a: Vec<Vec<Expect>> = vec![Vec::new(); p.nqp];
    let mut recv_len: Vec<Vec<usize>> = vec![Vec::new(); p.nqp];
    let mut total = 0usize;
    for (i, qa) in qp_a.iter().enumerate() {
        let n = p.writes + p.sends;
        let mut sges = Vec::with_capacity(n);
        let mut ops = Vec::with_capacity(n);
        let (mut w, mut s) = (0, 0);
        for k in 0..n {
            let len = 1 + rng.below(p.slot as u64) as usize;
            let soff = (i * n + k) * p.slot;
            sges.push([mr_a.sge(soff as u64, len as u32).unwrap()]);
            let is_write = (k % 2 == 0 && w < p.writes) || s >= p.sends;
            if is_write {
                let doff = (i * p.writes + w) * p.slot;
                ops.push(SendOp::RdmaWrite(RemoteAddr {
                    addr: mr_bw.va() + doff as u64,
                    rkey: mr_bw.rkey(),
                }));
                shadow_w[GUARD + doff..GUARD + doff + len].copy_from_slice(&src[soff..soff + len]);
                want_a[i].push(Expect {
                    wr_id: ((i as u64) << 16) | k as u64,
                    op: WcOpcode::RdmaWrite,
                });
                w += 1;
            } else {
                let roff = want_b[i][s].1;
                ops.push(SendOp::Send);
                shadow_r[GUARD + roff..GUARD + roff + len].copy_from_slice(&src[soff..soff + len]);
                recv_len[i].push(len);
                want_a[i].push(Expect {
                    wr_id: ((i as u64) << 16) | k as u64,
                    op: WcOpcode::Send,
                });
                s += 1;
            }
            total += len;
        }
        let wrs: Vec<SendWr> = (0..n)
            .map(|k| SendWr {
                wr_id: want_a[i][k].wr_id,
                op: ops[k],
                sges: &sges[k],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            })
            .collect();
        qa.post_send(&wrs)
            .unwrap_or_else(|e| panic!("QP {i}: post_send: {e:?}"));
    }

    // Run until every WR completed on both sides.
    let mut got_a: BTreeMap<u32, Vec<WorkCompletion>> = BTreeMap::new();
    let mut got_b: BTreeMap<u32, Vec<WorkCompletion>> = BTreeMap::new();
    let (mut n_a, mut n_b) = (0usize, 0usize);
    let want_na = p.nqp * (p.writes + p.sends);
    let want_nb = p.nqp * p.sends;
    let budget = 200_000 + 4 * (total as u64 / 8) + 20_000 * p.nqp as u64;
    let r = run_until(&world, budget, |_| {
        for cq in &cq_a {
            n_a += drain(cq, &mut got_a);
        }
        for cq in &cq_b {
            n_b += drain(cq, &mut got_b);
        }
        n_a >= want_na && n_b >= want_nb
    });
    let clocks = r.unwrap_or_else(|c| {
        let short: Vec<(usize, usize)> = qp_b
            .iter()
            .enumerate()
            .map(|(i, q)| (i, got_b.get(&q.qpn()).map_or(0, Vec::len)))
            .filter(|&(_, n)| n < p.sends)
            .collect();
        panic!(
            "after {c} clocks: {n_a} of {want_na} send completions at A, \
             {n_b} of {want_nb} receive completions at B (B's QPs short: {short:?}); \
             terms at B {:?}; B: {}; A: {}",
            world.borrow().nodes[1].hw.borrow().terms,
            counters(&world, 1),
            counters(&world, 0)
        )
    });
    // a little more: nothing extra may arrive
    let _ = run_until(&world, 5_000, |_| false);
    for cq in &cq_a {
        n_a += drain(cq, &mut got_a);
    }
    for cq in &cq_b {
        n_b += drain(cq, &mut got_b);
    }
    assert_eq!((n_a, n_b), (want_na, want_nb), "no extra completion");

    // Per QP, in posting order, each once, Success.
    for (i, qa) in qp_a.iter().enumerate() {
        let got = got_a.get(&qa.qpn()).map(Vec::as_slice).unwrap_or(&[]);
        let ids: Vec<u64> = got.iter().map(|w| w.wr_id).collect();
        let want: Vec<u64> = want_a[i].iter().map(|e| e.wr_id).collect();
        assert_eq!(ids, want, "A's QP {i} (qpn {}): completion order", qa.qpn());
        for (w, e) in got.iter().zip(&want_a[i]) {
            assert_eq!(w.status, WcStatus::Success, "QP {i}: {w:?}");
            assert_eq!(w.opcode, e.op, "QP {i}: {w:?}");
        }
    }
    for (i, qb) in qp_b.iter().enumerate() {
        let got = got_b.get(&qb.qpn()).map(Vec::as_slice).unwrap_or(&[]);
        let ids: Vec<u64> = got.iter().map(|w| w.wr_id).collect();
        let want: Vec<u64> = want_b[i].iter().map(|e| e.0).collect();
        assert_eq!(ids, want, "B's QP {i} (qpn {}): receive order", qb.qpn());
        for (w, len) in got.iter().zip(&recv_len[i]) {
            assert_eq!(w.status, WcStatus::Success, "B's QP {i}: {w:?}");
            assert_eq!(w.opcode, WcOpcode::Recv);
            assert_eq!(w.byte_len as usize, *len, "B's QP {i}: {w:?}");
        }
    }
    // Every octet of B's buffers, guards included.
    for (buf, shadow, what) in [
        (&buf_bw, &shadow_w, "Write target"),
        (&buf_br, &shadow_r, "receive buffers"),
    ] {
        let mut got = vec![0u8; shadow.len()];
        buf.read(0, &mut got).unwrap();
        if let Some(k) = got.iter().zip(shadow.iter()).position(|(g, w)| g != w) {
            panic!(
                "B's {what} differ at octet {k} (slot {}): got {:#04x} want {:#04x}",
                k.saturating_sub(GUARD) / p.slot,
                got[k],
                shadow[k]
            );
        }
    }
    assert!(world.borrow().nodes[1].hw.borrow().terms.is_empty());
    let db = world.borrow().nodes[0].hw.borrow().core.get_cnt_db();
    let secs = wall.elapsed().as_secs_f64();
    let all = world.borrow().cycle();
    println!(
        "{} QPs × ({} Writes + {} Sends), {} octets: connect {} clocks ({} per connection), \
         {} doorbells, all completions {} clocks after the storm ({:.2} Gb/s goodput at \
         156.25 MHz); {} clocks in all, wall {secs:.1} s ({:.0} clocks/s for 2 nodes)",
        p.nqp,
        p.writes,
        p.sends,
        total,
        connect_clocks,
        connect_clocks / p.nqp as u64,
        db,
        clocks,
        total as f64 * 8.0 / (clocks as f64 * 6.4),
        all,
        all as f64 / secs
    );
    let (overflow, replays) = {
        let w = world.borrow();
        let over = w.nodes[1].hw.borrow().core.get_cnt_rx_overflow();
        let replays = w.nodes[0].hw.borrow().retx_writes.len();
        (over, replays)
    };
    println!("B's rx_fifo overflows {overflow}, A's replays (RETX_CONN) {replays}");
}

/// 64 QPs, each 2 Writes + 2 Sends of up to 256 octets (256 WRs, about
/// 32 KiB), all posted at once. B rings its 64 RQ doorbells back to back
/// too (one `post_recv` per QP, one clock apart): the core queues RQ
/// doorbells in `rq_db_q` in front of `recv_wqe`, which takes one every 2-3
/// clocks, and a doorbell meeting a full queue is dropped and counted
/// (`cnt_rxs_lost`; that QP's Send then gets a Terminate "no buffer", RFC
/// 5041 §7.2). With the 8 entries the queue had, 25 of 64 were lost; it is
/// 64 deep now (one per QP).
#[test]
fn many_qps_doorbell_storm() {
    run(&Plan {
        nqp: 64,
        writes: 2,
        sends: 2,
        slot: 256,
        seed: 64,
    });
}

/// The heavier storm: 64 QPs × (2 Writes + 2 Sends) of up to 1 KiB, about
/// 128 KiB, all of it inside the windows (`rnic_fw::fw::DEVICE_RX_WINDOW`
/// per connection) at once. Whatever B cannot take (a full `rx_fifo`, a
/// segment without a span slot) is dropped unacknowledged and resent by A's
/// fast retransmit or firmware RTO + RTL replay; every WR completes
/// byte-exact.
#[test]
fn many_qps_storm_1k() {
    run(&Plan {
        nqp: 64,
        writes: 2,
        sends: 2,
        slot: 1024,
        seed: 64,
    });
}
