//! A send completion means the source buffer may be reused (as every verbs
//! program assumes): the device completes a Send or RDMA Write only when
//! the peer's cumulative ACK covers its last FPDU, because a retransmission
//! re-reads host memory (DESIGN §4: no retransmit buffer).
//!
//! Two co-simulated nodes (RTL + firmware + driver) over a link that loses
//! and reorders frames. A keeps up to [`SLOTS`] signaled RDMA Writes and
//! Sends in flight, each from its own slot of one source buffer, and the
//! moment it polls a message's CQE it overwrites that slot with other
//! octets and reuses it for the next message. Whatever the link did, B's
//! memory must hold every message's original octets: a CQE raised before
//! the ACK lets a retransmission carry the new octets (with a valid CRC)
//! into B's memory.
//!
//! References, independent of the RTL: the octets the test wrote (and a
//! shadow of B's buffers), the driver's completions, and the link's own
//! count of the frames it dropped.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use rnic_driver::{
    AccessFlags, Cq, DmaMem, MpaOptions, RecvWr, RemoteAddr, SendOp, SendWr, WcOpcode, WcStatus,
    WorkCompletion,
};
use rnic_sim::link::{LinkConfig, Side};
use rnic_sim::node::World;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair};
use rnic_sim::sim_bus::SimBus;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};

/// Source slots (= messages in flight at most).
const SLOTS: usize = 6;
/// Octets per slot (and per message at most).
const SLOT: usize = 6000;
/// Messages per run.
const MESSAGES: usize = 96;
/// Clocks a run may take before it is a stall.
const BUDGET: u64 = 40_000_000;

/// Runs the world until `cq` gives completions (up to 8), and returns
/// them; a stall panics with `what` and the clocks waited.
fn poll_some(
    world: &Rc<RefCell<World>>,
    cq: &Cq<'_, SimBus>,
    what: impl Fn() -> String,
) -> Vec<WorkCompletion> {
    let mut wc = [WorkCompletion::default(); 8];
    let mut n = 0;
    run_until(world, BUDGET, |_| {
        n = cq.poll(&mut wc).unwrap();
        n > 0
    })
    .unwrap_or_else(|c| panic!("{}, stalled {c} clocks", what()));
    wc[..n].to_vec()
}

fn reuse_on_completion(seed: u64, loss: f64, reorder: f64) {
    let pcap =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cpl_after_ack_{seed}.pcap"));
    let link = LinkConfig {
        seed,
        ..LinkConfig::default()
    };
    let world = world_pair(link, Some(&pcap)).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (scq_a, rcq_a) = (a.create_cq(64).unwrap(), a.create_cq(16).unwrap());
    let (scq_b, rcq_b) = (b.create_cq(16).unwrap(), b.create_cq(64).unwrap());
    let qp_a = pd_a.create_qp(&scq_a, &rcq_a, 32, 4).unwrap();
    let qp_b = pd_b.create_qp(&scq_b, &rcq_b, 4, 32).unwrap();
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"A", b"B").unwrap();
    // the faults from the data phase on (connection setup stays clean)
    world
        .borrow_mut()
        .link
        .as_mut()
        .expect("a pair has a link")
        .set_faults(loss, 0.0, 0.0, reorder);
    let acc = |f| AccessFlags::from_bits(f).unwrap();
    let src = a.alloc_dma(SLOTS * SLOT).unwrap();
    let mr_src = pd_a
        .reg_mr(&src, 0, SLOTS * SLOT, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let dst_len = MESSAGES * SLOT;
    let wdst = b.alloc_dma(dst_len).unwrap();
    let rdst = b.alloc_dma(dst_len).unwrap();
    let mr_w = pd_b
        .reg_mr(
            &wdst,
            0,
            dst_len,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let mr_r = pd_b
        .reg_mr(&rdst, 0, dst_len, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mut rng = Rng::new(seed);
    // B's memory as it must end: zero where nothing was written.
    let mut shadow_w = vec![0u8; dst_len];
    let mut shadow_r = vec![0u8; dst_len];
    wdst.write(0, &shadow_w).unwrap();
    rdst.write(0, &shadow_r).unwrap();

    // message i: (slot, is a Send, length)
    let plan: Vec<(usize, bool, usize)> = (0..MESSAGES)
        .map(|i| (i % SLOTS, i % 3 == 2, 1 + rng.below(SLOT as u64) as usize))
        .collect();
    for (i, &(_, send, _)) in plan.iter().enumerate() {
        if send {
            let sge = [mr_r.sge((i * SLOT) as u64, SLOT as u32).unwrap()];
            qp_b.post_recv(&[RecvWr {
                wr_id: i as u64,
                sges: &sge,
            }])
            .unwrap();
        }
    }
    let mut busy = [None::<usize>; SLOTS];
    let (mut next, mut done, mut recvs) = (0usize, 0usize, 0usize);
    let mut overwritten = 0usize;
    while done < MESSAGES {
        // post into every free slot
        while next < MESSAGES && busy[plan[next].0].is_none() {
            let (slot, send, len) = plan[next];
            let data = rng.bytes(len);
            src.write(slot * SLOT, &data).unwrap();
            let shadow = if send { &mut shadow_r } else { &mut shadow_w };
            shadow[next * SLOT..next * SLOT + len].copy_from_slice(&data);
            let sge = [mr_src.sge((slot * SLOT) as u64, len as u32).unwrap()];
            let op = if send {
                SendOp::Send
            } else {
                SendOp::RdmaWrite(RemoteAddr {
                    addr: mr_w.va() + (next * SLOT) as u64,
                    rkey: mr_w.rkey(),
                })
            };
            qp_a.post_send(&[SendWr {
                wr_id: next as u64,
                op,
                sges: &sge,
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
            busy[slot] = Some(next);
            next += 1;
        }
        for w in &poll_some(&world, &scq_a, || {
            format!("seed {seed}: {done} of {MESSAGES} completed")
        }) {
            let i = w.wr_id as usize;
            let (slot, send, len) = plan[i];
            assert_eq!(w.status, WcStatus::Success, "{w:?}");
            let op = if send {
                WcOpcode::Send
            } else {
                WcOpcode::RdmaWrite
            };
            assert_eq!((w.opcode, w.byte_len as usize), (op, len), "{w:?}");
            assert_eq!(busy[slot], Some(i), "completions in posting order");
            // the buffer is the application's again: reuse it at once
            src.write(slot * SLOT, &vec![0xEE; SLOT]).unwrap();
            overwritten += 1;
            busy[slot] = None;
            done += 1;
        }
    }
    let sends = plan.iter().filter(|p| p.1).count();
    while recvs < sends {
        for w in &poll_some(&world, &rcq_b, || {
            format!("seed {seed}: {recvs} of {sends} received")
        }) {
            assert_eq!(w.status, WcStatus::Success, "{w:?}");
            assert_eq!(w.byte_len as usize, plan[w.wr_id as usize].2, "{w:?}");
            recvs += 1;
        }
    }
    // let any retransmission still under way land
    let _ = run_until(&world, 200_000, |_| false);
    let (lost, retx) = {
        let w = world.borrow();
        let st = w.nodes[0].fw.stats().retx;
        let link = w.link.as_ref().expect("a pair has a link");
        (
            link.stats(Side::A).lost + link.stats(Side::B).lost,
            st.retransmits,
        )
    };
    println!(
        "seed {seed}: {MESSAGES} messages, {overwritten} sources overwritten at their CQE; \
         link lost {lost} frames, A's timer retransmitted {retx} times"
    );
    assert!(lost > 0, "the link lost nothing: the test shows nothing");
    for (buf, shadow, what) in [(&wdst, &shadow_w, "Write"), (&rdst, &shadow_r, "Send")] {
        let mut got = vec![0u8; dst_len];
        buf.read(0, &mut got).unwrap();
        if let Some(o) = got.iter().zip(shadow.iter()).position(|(g, w)| g != w) {
            panic!(
                "seed {seed}: B's {what} memory differs at message {} offset {}: got {:#04x} want {:#04x} \
                 (0xee = the source overwritten after its CQE)",
                o / SLOT,
                o % SLOT,
                got[o],
                shadow[o]
            );
        }
    }
}

#[test]
fn reused_sources_under_loss_and_reordering() {
    for seed in [1, 2, 3] {
        reuse_on_completion(seed, 0.05, 0.02);
    }
}
