//! QP error flush in the driver (docs/driver.md "QP error flush"), against
//! the fake device of `common` (which writes CQEs and events with
//! `rnic_wire`'s emitters at the ABI's ring positions): the device's own
//! CQEs come first, then every outstanding WR completes with
//! `WrFlushError` in posting order (send and receive queue, signaled or
//! not), exactly once; a CQ shared by several QPs keeps the others'
//! completions; a QpError event with an RDMAP remote protection/operation
//! cause fails the first outstanding RDMA Read (RFC 5040 §7.2).

mod common;

use common::{cqe, FakeBus};
use rnic_driver::*;
use rnic_wire::abi::cqe::encode_term_cause;
use rnic_wire::abi::mailbox::Event;
use rnic_wire::terminate::{
    DdpError, RdmapError, RemoteOperationError, RemoteProtectionError, TaggedBufferError,
    TerminateCause,
};

fn event(kind: EventKind, handle: u32, status: u32) -> Event {
    Event {
        kind,
        handle,
        status,
        peer_ip: 0x0A00_0002,
        peer_port: 5000,
        local_port: 4791,
        ird: 4,
        ord: 4,
        private_data_len: 0,
        mpa_revision: 2,
        crc: true,
        markers: false,
        listen_id: 0,
        phase: true,
    }
}

fn send(wr_id: u64, op: SendOp, signaled: bool) -> SendWr<'static> {
    SendWr {
        wr_id,
        op,
        sges: &[],
        signaled,
        solicited: false,
        fence: false,
        inline_data: None,
    }
}

fn recv(wr_id: u64) -> RecvWr<'static> {
    RecvWr { wr_id, sges: &[] }
}

const WRITE: SendOp = SendOp::RdmaWrite(RemoteAddr {
    addr: 0x1000,
    rkey: 0x100,
});
const READ: SendOp = SendOp::RdmaRead(RemoteAddr {
    addr: 0x1000,
    rkey: 0xbad,
});

fn poll_all<B: Bus>(cq: &Cq<'_, B>) -> Vec<WorkCompletion> {
    let mut all = Vec::new();
    let mut wc = [WorkCompletion::default(); 3];
    loop {
        let n = cq.poll(&mut wc).unwrap();
        if n == 0 {
            return all;
        }
        all.extend_from_slice(&wc[..n]);
    }
}

fn ids(w: &[WorkCompletion]) -> Vec<(u32, u64, WcStatus)> {
    w.iter().map(|c| (c.qp_num, c.wr_id, c.status)).collect()
}

use WcStatus::{Success as OK, WrFlushError as FL};

/// A fake device, a context, a PD, one CQ of 8 and an 8/8 QP on it, the
/// QP connected (Established processed). A macro, not a function: `Pd`
/// borrows the context and `Qp` the PD.
macro_rules! connected_qp {
    ($bus:ident, $ctx:ident, $pd:ident, $cq:ident, $qp:ident) => {
        let $bus = FakeBus::new();
        let $ctx = Context::open($bus.clone()).unwrap();
        let $pd = $ctx.alloc_pd().unwrap();
        let $cq = $ctx.create_cq(8).unwrap();
        let $qp = $pd.create_qp(&$cq, &$cq, 8, 8).unwrap();
        $bus.push_event(event(EventKind::Established, $qp.qpn(), 0));
        $ctx.process_events().unwrap();
    };
}

/// modify(Error): the ring's device CQEs first (QP 1's success and QP 2's),
/// then QP 1's outstanding WRs flushed in posting order, send queue then
/// receive queue; QP 2 on the same CQ keeps its WRs and completes later.
#[test]
fn modify_error_flushes_after_device_cqes_and_spares_other_qps() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq, 8, 8).unwrap();
    let other = pd.create_qp(&cq, &cq, 8, 8).unwrap();
    for q in [&qp, &other] {
        bus.push_event(event(EventKind::Established, q.qpn(), 0));
    }
    ctx.process_events().unwrap();
    let (q1, q2) = (qp.qpn(), other.qpn());
    qp.post_recv(&[recv(10), recv(11), recv(12)]).unwrap();
    qp.post_send(&[
        send(1, WRITE, false),
        send(2, WRITE, true),
        send(3, WRITE, false),
        send(4, SendOp::Send, true),
        send(5, WRITE, false),
    ])
    .unwrap();
    other.post_send(&[send(100, WRITE, true)]).unwrap();
    other.post_recv(&[recv(200)]).unwrap();
    // The device completed WR 2 (implies 1) and receive 10 before the stop.
    bus.push_cqe(cq.cqn(), cqe(2, q1, WcOpcode::RdmaWrite, OK, 0));
    bus.push_cqe(cq.cqn(), cqe(100, q2, WcOpcode::RdmaWrite, OK, 0));
    bus.push_cqe(cq.cqn(), cqe(10, q1, WcOpcode::Recv, OK, 0));
    qp.modify(QpState::Error).unwrap();
    assert_eq!(qp.state(), QpState::Error);
    assert_eq!(
        qp.post_send(&[send(6, WRITE, true)]),
        Err(Error::WrongState(QpState::Error)),
        "posting to a QP in Error is a typed error, not a completion"
    );
    assert_eq!(
        qp.post_recv(&[recv(13)]),
        Err(Error::WrongState(QpState::Error))
    );
    let got = poll_all(&cq);
    assert_eq!(
        ids(&got),
        vec![
            (q1, 2, OK),
            (q2, 100, OK),
            (q1, 10, OK),
            (q1, 3, FL),
            (q1, 4, FL),
            (q1, 5, FL),
            (q1, 11, FL),
            (q1, 12, FL),
        ]
    );
    assert_eq!(got[3].opcode, WcOpcode::RdmaWrite);
    assert_eq!(got[4].opcode, WcOpcode::Send);
    assert_eq!(got[6].opcode, WcOpcode::Recv);
    assert_eq!((qp.sq_free(), qp.rq_free()), (8, 8), "every slot retired");
    assert!(poll_all(&cq).is_empty(), "nothing completes twice");
    // The other QP still works on the same CQ.
    assert_eq!(other.state(), QpState::Rts);
    other.post_send(&[send(101, WRITE, true)]).unwrap();
    bus.push_cqe(cq.cqn(), cqe(200, q2, WcOpcode::Recv, OK, 0));
    bus.push_cqe(cq.cqn(), cqe(101, q2, WcOpcode::RdmaWrite, OK, 0));
    assert_eq!(ids(&poll_all(&cq)), vec![(q2, 200, OK), (q2, 101, OK)]);
    // A device CQE of a flushed WR written after the stop: dropped, counted.
    bus.push_cqe(cq.cqn(), cqe(5, q1, WcOpcode::RdmaWrite, OK, 0));
    assert!(poll_all(&cq).is_empty());
    assert_eq!(cq.late_cqes(), 1);
}

/// The send and receive queues on different CQs each flush into their own.
/// A poll into a short slice keeps the rest for the next poll.
#[test]
fn separate_cqs_and_short_polls() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let scq = ctx.create_cq(8).unwrap();
    let rcq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&scq, &rcq, 8, 8).unwrap();
    bus.push_event(event(EventKind::Established, qp.qpn(), 0));
    ctx.process_events().unwrap();
    qp.post_recv(&[recv(10), recv(11)]).unwrap();
    qp.post_send(&[
        send(1, WRITE, false),
        send(2, WRITE, false),
        send(3, WRITE, false),
    ])
    .unwrap();
    qp.modify(QpState::Error).unwrap();
    let mut one = [WorkCompletion::default(); 1];
    let mut got = Vec::new();
    while scq.poll(&mut one).unwrap() == 1 {
        got.push(one[0]);
    }
    let q = qp.qpn();
    assert_eq!(ids(&got), vec![(q, 1, FL), (q, 2, FL), (q, 3, FL)]);
    assert_eq!(ids(&poll_all(&rcq)), vec![(q, 10, FL), (q, 11, FL)]);
}

/// The QpError event with an RDMAP Remote Protection cause (the responder
/// refused our Read Request, RFC 5040 §7.2): the first outstanding Read
/// fails with RemoteAccessError and the cause, the unsignaled Write before
/// it is retired silently, the WRs after it flush; device CQEs written
/// before the event come first.
#[test]
fn qp_error_event_fails_the_read_with_remote_access_error() {
    connected_qp!(bus, ctx, pd, cq, qp);
    let q = qp.qpn();
    qp.post_recv(&[recv(10)]).unwrap();
    qp.post_send(&[
        send(1, WRITE, true),
        send(2, WRITE, false),
        send(3, READ, true),
        send(4, WRITE, false),
    ])
    .unwrap();
    bus.push_cqe(cq.cqn(), cqe(1, q, WcOpcode::RdmaWrite, OK, 0));
    let cause = TerminateCause::Rdmap(RdmapError::RemoteProtection(
        RemoteProtectionError::InvalidStag,
    ));
    bus.push_event(event(EventKind::QpError, q, encode_term_cause(Some(cause))));
    ctx.process_events().unwrap();
    assert_eq!(qp.state(), QpState::Error);
    let ev = loop {
        let ev = ctx
            .get_cm_event(core::time::Duration::from_millis(1))
            .expect("the QpError event reaches the application");
        if ev.kind != EventKind::Established {
            break ev;
        }
    };
    assert_eq!(ev.kind, EventKind::QpError);
    assert_eq!(ev.status, encode_term_cause(Some(cause)));
    let got = poll_all(&cq);
    assert_eq!(
        ids(&got),
        vec![
            (q, 1, OK),
            (q, 3, WcStatus::RemoteAccessError),
            (q, 4, FL),
            (q, 10, FL)
        ]
    );
    assert_eq!(got[1].opcode, WcOpcode::RdmaRead);
    assert_eq!(got[1].term_cause, Some(cause));
    assert_eq!(qp.sq_free(), 8);
}

/// Remote Operation → RemoteOperationError; a DDP tagged-buffer cause (a
/// Write's bad STag at the peer: the Write completed locally already,
/// RFC 5040 §5.3/§7) blames no WR: all flush. ConnectionLost flushes too.
#[test]
fn other_causes() {
    let cases = [
        (
            Some(TerminateCause::Rdmap(RdmapError::RemoteOperation(
                RemoteOperationError::CatastrophicLocal,
            ))),
            EventKind::QpError,
            WcStatus::RemoteOperationError,
        ),
        (
            Some(TerminateCause::Ddp(DdpError::TaggedBuffer(
                TaggedBufferError::InvalidStag,
            ))),
            EventKind::QpError,
            FL,
        ),
        (None, EventKind::ConnectionLost, FL),
    ];
    for (cause, kind, read_status) in cases {
        connected_qp!(bus, ctx, pd, cq, qp);
        qp.post_send(&[send(1, READ, true), send(2, WRITE, false)])
            .unwrap();
        bus.push_event(event(kind, qp.qpn(), encode_term_cause(cause)));
        ctx.process_events().unwrap();
        let q = qp.qpn();
        assert_eq!(
            ids(&poll_all(&cq)),
            vec![(q, 1, read_status), (q, 2, FL)],
            "{kind:?} {cause:?}"
        );
    }
}

/// Destroy flushes: the CQ still completes the destroyed QP's WRs (after
/// its device CQEs) and drops late CQEs naming it.
#[test]
fn destroy_flushes() {
    connected_qp!(bus, ctx, pd, cq, qp);
    let q = qp.qpn();
    qp.post_send(&[send(1, WRITE, true), send(2, WRITE, true)])
        .unwrap();
    qp.post_recv(&[recv(10)]).unwrap();
    bus.push_cqe(cq.cqn(), cqe(1, q, WcOpcode::RdmaWrite, OK, 0));
    qp.destroy().unwrap();
    assert_eq!(
        ids(&poll_all(&cq)),
        vec![(q, 1, OK), (q, 2, FL), (q, 10, FL)]
    );
    bus.push_cqe(cq.cqn(), cqe(2, q, WcOpcode::RdmaWrite, OK, 0));
    assert!(poll_all(&cq).is_empty());
    assert_eq!(cq.late_cqes(), 1);
}

/// A device error completion puts the QP in Error: the WRs the device does
/// not complete are flushed by the driver.
#[test]
fn error_cqe_flushes_the_rest() {
    connected_qp!(bus, ctx, pd, cq, qp);
    let q = qp.qpn();
    qp.post_recv(&[recv(10), recv(11)]).unwrap();
    qp.post_send(&[send(1, WRITE, true)]).unwrap();
    bus.push_cqe(
        cq.cqn(),
        cqe(10, q, WcOpcode::Recv, WcStatus::LocalLengthError, 0),
    );
    assert_eq!(
        ids(&poll_all(&cq)),
        vec![(q, 10, WcStatus::LocalLengthError), (q, 1, FL), (q, 11, FL)]
    );
    assert_eq!(qp.state(), QpState::Error);
}
