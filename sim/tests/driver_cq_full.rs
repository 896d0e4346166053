//! CQ full through the driver (issue 6: "errors … CQ full"): A's send CQ
//! has 4 entries and A posts 8 signaled RDMA Writes without polling. The
//! core's completion writer writes the 4 CQEs the ring holds, then moves
//! the CQ to `Overflow`, writes no further CQE and raises a `CqOverflow`
//! event (handle = CQ) whether armed or not (docs/rtl.md, `cpl_write`;
//! verbs: IBV_EVENT_CQ_ERR). What the user sees, checked here:
//! * the async event `CqOverflow` naming the CQ from `get_cm_event`, and
//!   `Cq::overflowed()`;
//! * the ring holds exactly the first 4 completions (parsed with
//!   `rnic_wire::abi::cqe::Cqe`, not the driver) and not one octet of host
//!   memory around the ring changed (a page before and after, compared with
//!   a snapshot);
//! * `poll` returns those 4 in order, then the 4 WRs whose CQEs were lost
//!   to the overrun with `WrFlushError` (the QP is in Error), then nothing;
//! * verbs: the QPs completing into the CQ are in Error (the driver moves
//!   them on the event), `post_send` is refused with `WrongState(Error)`;
//!   the device's firmware has moved the QP out of RTS by itself (exception
//!   `CqOverflow`: a Terminate to the peer), and `modify(Error)` completes
//!   it; a QP on other CQs is untouched.

use std::time::Duration;

use rnic_driver::{
    AccessFlags, Bus, DmaMem, Error, EventKind, MpaOptions, QpState, RemoteAddr, SendOp, SendWr,
    WcOpcode, WcStatus, WorkCompletion,
};
use rnic_fw::hal::Hal;
use rnic_sim::link::LinkConfig;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair};
use rnic_wire::abi::context::{CqContext, CqState, QpContext, TableId};
use rnic_wire::abi::cqe::{Cqe, CQE_SIZE};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};

/// Entries in A's send CQ.
const CQ_ENTRIES: usize = 4;
/// Signaled Writes A posts.
const WRITES: usize = 8;
/// Octets each.
const LEN: usize = 64;
/// Host memory checked on each side of the ring.
const AROUND: u64 = 4096;

#[test]
fn cq_overrun_gives_event_and_keeps_ring() {
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let scq_a = a.create_cq(CQ_ENTRIES as u32).unwrap();
    let rcq_a = a.create_cq(16).unwrap();
    let cq_b = b.create_cq(16).unwrap();
    let qp_a = pd_a.create_qp(&scq_a, &rcq_a, 16, 1).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 1, 1).unwrap();
    let other = pd_a.create_qp(&rcq_a, &rcq_a, 1, 1).unwrap();
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"", b"").unwrap();
    let acc = |x| AccessFlags::from_bits(x).unwrap();
    let src = a.alloc_dma(4096).unwrap();
    let dst = b.alloc_dma(4096).unwrap();
    let mr_a = pd_a.reg_mr(&src, 0, 4096, acc(ACCESS_LOCAL_WRITE)).unwrap();
    let mr_b = pd_b
        .reg_mr(&dst, 0, 4096, acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE))
        .unwrap();
    src.write(0, &[0x5A; 4096]).unwrap();

    // The ring's place, from the CQ context the firmware wrote into the
    // core (read back through the firmware port and parsed by rnic_wire).
    let mut b64 = [0u8; 64];
    world.borrow_mut().nodes[0]
        .fw
        .hal
        .read_table(TableId::Cq, scq_a.cqn(), &mut b64)
        .unwrap();
    let ctx = CqContext::parse(&b64[..TableId::Cq.entry_size()]).unwrap();
    assert_eq!(ctx.state, CqState::Valid);
    assert_eq!(1usize << ctx.log2_entries, CQ_ENTRIES);
    let ring_len = (CQ_ENTRIES * CQE_SIZE) as u64;
    let lo = ctx.ring - AROUND;
    let mut before = vec![0u8; (ring_len + 2 * AROUND) as usize];
    let mem_a = || world.borrow().nodes[0].hw.clone();
    mem_a().borrow().mem.read(lo, &mut before).unwrap();

    let sges: Vec<_> = (0..WRITES)
        .map(|i| [mr_a.sge((i * LEN) as u64, LEN as u32).unwrap()])
        .collect();
    let wrs: Vec<SendWr> = (0..WRITES)
        .map(|i| SendWr {
            wr_id: 100 + i as u64,
            op: SendOp::RdmaWrite(RemoteAddr {
                addr: mr_b.va() + (i * LEN) as u64,
                rkey: mr_b.rkey(),
            }),
            sges: &sges[i],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        })
        .collect();
    qp_a.post_send(&wrs).unwrap();

    // The async event, without polling the CQ.
    let start = a.bus().now();
    let ev = loop {
        match a.get_cm_event(Duration::from_micros(20)) {
            Ok(ev) if ev.kind == EventKind::CqOverflow => break ev,
            Ok(ev) if ev.kind == EventKind::CqCompletion => {}
            Ok(ev) => panic!("{ev:?} before CqOverflow"),
            Err(Error::Timeout) if a.bus().now() - start < Duration::from_millis(2) => {}
            Err(e) => panic!("no CqOverflow event: {e:?}"),
        }
    };
    println!(
        "CqOverflow event after {:?} simulated: {ev:?}",
        a.bus().now() - start
    );
    assert_eq!(ev.handle, scq_a.cqn(), "the event names the CQ");
    assert!(scq_a.overflowed());
    // let every Write land at B and anything late arrive
    let _ = run_until(&world, 20_000, |_| false);
    let placed: usize = world.borrow().nodes[1]
        .hw
        .borrow()
        .placed
        .iter()
        .map(|p| p.2 as usize)
        .sum();
    let mut got = vec![0u8; WRITES * LEN];
    dst.read(0, &mut got).unwrap();
    println!(
        "B: {placed} of {} octets placed; bytes match: {}",
        WRITES * LEN,
        got.iter().all(|&x| x == 0x5A)
    );

    // Ring integrity: around the ring nothing changed; inside, exactly the
    // first CQ_ENTRIES completions, in order, first pass (owner bit 1).
    let mut after = vec![0u8; before.len()];
    mem_a().borrow().mem.read(lo, &mut after).unwrap();
    let a_ = AROUND as usize;
    let r_ = a_ + ring_len as usize;
    assert_eq!(
        &after[..a_],
        &before[..a_],
        "page before the ring unchanged"
    );
    assert_eq!(&after[r_..], &before[r_..], "page after the ring unchanged");
    for (i, e) in after[a_..r_].chunks(CQE_SIZE).enumerate() {
        let c = Cqe::parse(e).unwrap_or_else(|e| panic!("slot {i}: {e:?}"));
        assert_eq!(c.wr_id, 100 + i as u64, "slot {i}");
        assert_eq!(c.opcode, WcOpcode::RdmaWrite);
        assert_eq!(c.status, WcStatus::Success);
        assert_eq!(e[CQE_SIZE - 1] & 1, 1, "slot {i}: first-pass owner bit");
    }
    let mut b64 = [0u8; 64];
    world.borrow_mut().nodes[0]
        .fw
        .hal
        .read_table(TableId::Cq, scq_a.cqn(), &mut b64)
        .unwrap();
    let ctx2 = CqContext::parse(&b64[..TableId::Cq.entry_size()]).unwrap();
    println!("A's CQ context in the firmware shadow after the overrun: {ctx2:?}");

    // The driver returns the 4 device completions in order, then (the QP is
    // in Error since the overrun) the 4 WRs whose CQEs the overrun lost,
    // flushed, in posting order; then nothing.
    let mut all = Vec::new();
    let mut wc = [WorkCompletion::default(); WRITES];
    for _ in 0..4 {
        let n = scq_a.poll(&mut wc).unwrap();
        all.extend(wc[..n].iter().map(|w| (w.wr_id, w.status)));
        let _ = run_until(&world, 1_000, |_| false);
    }
    let want: Vec<(u64, WcStatus)> = (0..WRITES as u64)
        .map(|i| {
            let st = if i < CQ_ENTRIES as u64 {
                WcStatus::Success
            } else {
                WcStatus::WrFlushError
            };
            (100 + i, st)
        })
        .collect();
    assert_eq!(all, want, "4 device CQEs, then 4 flushed WRs, each once");
    let _ = run_until(&world, 5_000, |_| false);
    assert_eq!(scq_a.poll(&mut wc).unwrap(), 0, "nothing after the flush");
    mem_a().borrow().mem.read(lo, &mut after).unwrap();
    assert_eq!(&after[..a_], &before[..a_]);
    assert_eq!(&after[r_..], &before[r_..]);
    // Verbs: the QPs completing into the overrun CQ are in Error (the
    // driver's answer to the event); a QP on other CQs is not.
    assert_eq!(qp_a.state(), QpState::Error, "QP of the overrun CQ");
    assert_eq!(other.state(), QpState::Idle, "QP on other CQs untouched");
    let r = qp_a.post_send(&wrs[..1]);
    assert_eq!(r, Err(Error::WrongState(QpState::Error)));
    // The device did not wait for the host: its firmware took the overrun
    // CQ's QP out of RTS on its own (exception CqOverflow: a Terminate to B
    // and the stream closed), and left the QP on other CQs alone.
    let qp_ctx = |qpn: u32| {
        let mut b64 = [0u8; 64];
        world.borrow_mut().nodes[0]
            .fw
            .hal
            .read_table(TableId::Qp, qpn, &mut b64)
            .unwrap();
        QpContext::parse(&b64[..TableId::Qp.entry_size()]).unwrap()
    };
    let q = qp_ctx(qp_a.qpn());
    assert!(
        matches!(q.state, QpState::Terminate | QpState::Error),
        "the device moved the overrun CQ's QP: {:?}",
        q.state
    );
    assert_eq!(qp_ctx(other.qpn()).state, QpState::Idle);
    // the host's ModifyQp(Error) completes it
    qp_a.modify(QpState::Error).unwrap();
    let q = qp_ctx(qp_a.qpn());
    assert_eq!(q.state, QpState::Error, "QP context in the core");
    println!(
        "after the overrun: QP Error in the driver, post_send refused, ModifyQp(Error) in the core"
    );
}
