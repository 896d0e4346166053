//! Send with Invalidate between two co-simulated nodes, through the driver
//! only (RFC 5040 §5.3, §6.10): A's `SendOp::SendWithInv` names B's
//! region; B's receive completes with `invalidated_rkey`; an RDMA Write
//! from A through that STag afterwards is refused at B with a Terminate
//! (DDP "Invalid STag") and not one octet of B's region changes; B's QP
//! goes to error; B deregisters the remotely invalidated region cleanly.
//!
//! References: the driver's completions, `rnic_wire::terminate` for the
//! Terminate cause, `rnic_wire::abi::mailbox::Event` for B's QpError, and
//! the data the test wrote (B's buffers compared octet by octet).

use rnic_driver::{
    AccessFlags, DmaMem, MpaOptions, RecvWr, RemoteAddr, SendOp, SendWr, WcOpcode, WcStatus,
    WorkCompletion,
};
use rnic_sim::link::LinkConfig;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair, GUARD};
use rnic_wire::abi::mailbox::{Event, EventKind};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::terminate::{DdpError, TaggedBufferError, TerminateCause};
use std::path::PathBuf;

const REGION: usize = 8192;
const BUDGET: u64 = 50_000;

#[test]
fn send_with_invalidate_then_write_fails_through_the_driver() {
    let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("send_inv_cosim.pcap");
    let world = world_pair(LinkConfig::default(), Some(&pcap)).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (scq_a, rcq_a) = (a.create_cq(16).unwrap(), a.create_cq(16).unwrap());
    let (scq_b, rcq_b) = (b.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&scq_a, &rcq_a, 32, 4).unwrap();
    let qp_b = pd_b.create_qp(&scq_b, &rcq_b, 4, 16).unwrap();
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"A", b"B").unwrap();
    let acc = |x| AccessFlags::from_bits(x).unwrap();
    let buf_a = a.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_bw = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_br = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_bw = pd_b
        .reg_mr(
            &buf_bw,
            GUARD,
            REGION,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let mr_br = pd_b
        .reg_mr(&buf_br, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mut rng = Rng::new(0x1417);
    let shadow_w = rng.bytes(REGION + 2 * GUARD);
    buf_bw.write(0, &shadow_w).unwrap();
    let rkey = mr_bw.rkey();

    // B posts a receive; A sends 300 octets with Invalidate of B's rkey.
    let data = rng.bytes(300);
    buf_a.write(GUARD, &data).unwrap();
    qp_b.post_recv(&[RecvWr {
        wr_id: 77,
        sges: &[mr_br.sge(0, 1000).unwrap()],
    }])
    .unwrap();
    qp_a.post_send(&[SendWr {
        wr_id: 1,
        op: SendOp::SendWithInv(rkey),
        sges: &[mr_a.sge(0, 300).unwrap()],
        signaled: false,
        solicited: false,
        fence: false,
    }])
    .unwrap();
    let mut wc = [WorkCompletion::default()];
    let c = run_until(&world, BUDGET, |_| rcq_b.poll(&mut wc).unwrap() == 1)
        .unwrap_or_else(|c| panic!("no receive completion at B in {c} clocks"));
    let wc = wc[0];
    println!("Send with Invalidate: B's completion after {c} clocks: {wc:?}");
    assert_eq!(
        (wc.wr_id, wc.status, wc.opcode, wc.byte_len as usize),
        (77, WcStatus::Success, WcOpcode::Recv, data.len())
    );
    assert_eq!(wc.invalidated_rkey, Some(rkey));
    let mut got = vec![0u8; 300];
    buf_br.read(GUARD, &mut got).unwrap();
    assert_eq!(got, data);

    // A Writes through the invalidated STag: refused at B, nothing lands.
    let w = rng.bytes(512);
    buf_a.write(GUARD, &w).unwrap();
    qp_a.post_send(&[SendWr {
        wr_id: 2,
        op: SendOp::RdmaWrite(RemoteAddr {
            addr: mr_bw.va(),
            rkey,
        }),
        sges: &[mr_a.sge(0, 512).unwrap()],
        signaled: false,
        solicited: false,
        fence: false,
    }])
    .unwrap();
    let c = run_until(&world, BUDGET, |w| !w.nodes[1].hw.borrow().terms.is_empty())
        .expect("B asks for a Terminate");
    let _ = run_until(&world, 3000, |_| false);
    let terms = world.borrow().nodes[1].hw.borrow().terms.clone();
    let cause = TerminateCause::from_bits(terms[0].0).unwrap();
    println!("Write through the invalidated STag: B's Terminate after {c} clocks: {cause:?}");
    assert_eq!(
        cause,
        TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag))
    );
    let mut now = vec![0u8; REGION + 2 * GUARD];
    buf_bw.read(0, &mut now).unwrap();
    assert!(now == shadow_w, "B's region changed");
    assert!(world.borrow().nodes[1].hw.borrow().placed.is_empty());
    {
        let w = world.borrow();
        let b = w.nodes[1].hw.borrow();
        assert_eq!(b.core.get_cnt_rxs_inv(), 1);
        assert_eq!(b.core.get_cnt_rxs_inv_err(), 0);
    }

    // B's QP goes to error (its firmware took the Terminate request).
    let qp_err = |w: &rnic_sim::node::World| {
        w.nodes[1]
            .hw
            .borrow()
            .events
            .iter()
            .map(|e| Event::parse(e).unwrap())
            .any(|e| e.kind == EventKind::QpError)
    };
    run_until(&world, BUDGET, qp_err).expect("B's host gets QpError");

    // The remotely invalidated region deregisters cleanly.
    mr_bw
        .dereg()
        .expect("dereg of a remotely invalidated region");
    println!("B deregistered the invalidated region");
}
