//! Terminate transmit for the device's requests (`Hal::pop_terminate`),
//! against the scripted Hal: the frame the firmware sends is decoded by
//! smoltcp (checksums) and rnic-wire (MPA CRC, RDMAP, Terminate header),
//! never by the firmware's own code.
mod common;
use common::*;
use rnic_fw::hal::TermRequest;
use rnic_wire::abi::context::port::TERM_HDR_LEN;
use rnic_wire::abi::context::{ConnMode, ExceptionReason, TableId, MPA_CRC_RX, MPA_CRC_TX};
use rnic_wire::abi::mailbox::{EventKind, QpState};
use rnic_wire::ddp::DdpRepr;
use rnic_wire::net::TcpControl;
use rnic_wire::rdmap::RdmapRepr;
use rnic_wire::terminate::{TaggedBufferError, TerminateCause, TerminateRepr, UntaggedBufferError};

const S: u64 = 1_000_000;

/// The device's send state in connection context 0, with MPA CRC on.
fn device_sent(fw: &mut Fw, snd_una: u32, snd_nxt: u32) {
    let mut c = fw.hal.conn(0).unwrap();
    c.snd_una = snd_una;
    c.snd_nxt = snd_nxt;
    c.mpa_flags = MPA_CRC_TX | MPA_CRC_RX;
    let mut b = [0u8; 64];
    c.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
}

fn request(cause: TerminateCause, qpn: u32, ddp: &DdpRepr, seg_len: u16) -> TermRequest {
    let mut hdr = [0u8; TERM_HDR_LEN];
    ddp.emit(&mut hdr).unwrap();
    TermRequest {
        cause: cause.to_bits(),
        conn: 0,
        qpn,
        seg_len,
        hdr,
    }
}

/// The host's QpError event for `qpn` carries `cause`.
fn assert_qp_error(fw: &mut Fw, qpn: u32, cause: TerminateCause) {
    let ev = fw.hal.events.pop().expect("QpError event");
    assert_eq!(
        (ev.kind, ev.handle, ev.status),
        (
            EventKind::QpError,
            qpn,
            rnic_wire::abi::cqe::encode_term_cause(Some(cause))
        )
    );
}

/// The Terminate message in a TCP payload, decoded by rnic-wire (MPA CRC
/// checked): MSN 1 on QN 2 (RFC 5040 §5.1) and its header.
fn sent_terminate(payload: &[u8]) -> TerminateRepr {
    let f = rnic_wire::mpa::Fpdu::new_checked(payload).unwrap();
    assert_eq!(f.total_len(), payload.len());
    let ulpdu = rnic_wire::mpa::FpduRepr::parse(&f, true)
        .expect("MPA CRC")
        .ulpdu;
    match RdmapRepr::from_bytes(ulpdu).unwrap() {
        RdmapRepr::Terminate { msn, terminate } => {
            assert_eq!(msn, 1);
            terminate
        }
        o => panic!("not a Terminate: {o:?}"),
    }
}

/// What the firmware sent after a Terminate was started: exactly the
/// Terminate segment at `seq` acknowledging `rcv`, then the FIN right after
/// it (RFC 5040 §5.3: the Terminate is the last message on the stream).
/// Returns the decoded Terminate and the FIN's sequence number.
fn terminate_then_fin(fw: &mut Fw, seq: u32, rcv: u32) -> (TerminateRepr, u32) {
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(
        out.len(),
        2,
        "{:?}",
        out.iter().map(|o| o.ctl).collect::<Vec<_>>()
    );
    assert_eq!((out[0].seq, out[0].ack), (seq, Some(rcv)));
    let terminate = sent_terminate(&out[0].payload);
    let fin_seq = seq + out[0].payload.len() as u32;
    assert_eq!((out[1].ctl, out[1].seq), (TcpControl::Fin, fin_seq));
    (terminate, fin_seq)
}

/// A Send without a posted receive at this node: the device asks for a
/// Terminate (DDP untagged, Invalid MSN - no buffer, RFC 5041 §7.2). The
/// firmware sends it at the device's SND.NXT, CRC checked, echoing the
/// Send's DDP header and segment length (RFC 5040 §4.8), then the FIN;
/// the QP goes to Terminate and the host gets QpError with the cause; a
/// second request on the same stream sends nothing (a Terminate is the
/// last message, RFC 5040 §5.3).
#[test]
fn device_request_sends_terminate_then_fin() {
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    device_sent(&mut fw, snd + 100, snd + 2000);
    let send = DdpRepr::Untagged {
        last: true,
        rsvd_ulp: 0x43,
        rsvd_ulp_ext: 0,
        qn: 0,
        msn: 1,
        mo: 0,
    };
    let cause = TerminateCause::from(UntaggedBufferError::InvalidMsnNoBuffer);
    fw.hal.terms.push_back(request(cause, qpn, &send, 18 + 64));
    fw.poll();
    assert!(fw.hal.terms.is_empty(), "taken");
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Terminate);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Firmware);
    assert_qp_error(&mut fw, qpn, cause);
    let (terminate, fin_seq) = terminate_then_fin(&mut fw, snd + 2000, rcv);
    assert_eq!(terminate.cause, cause);
    let d = terminate.ddp.expect("DDP header echoed");
    assert!(d.segment_length_valid);
    assert_eq!(d.segment_length, 18 + 64);
    assert_eq!(d.header.to_repr().unwrap(), send);
    assert!(terminate.rdma.is_none());
    // one Terminate per stream
    let tag = DdpRepr::Tagged {
        last: true,
        rsvd_ulp: 0x40,
        stag: 5,
        to: 0,
    };
    let c2 = TerminateCause::from(TaggedBufferError::InvalidStag);
    fw.hal.terms.push_back(request(c2, qpn, &tag, 14 + 8));
    fw.poll();
    assert!(
        sent_tcp(&mut fw.hal).is_empty(),
        "nothing after the Terminate"
    );
    assert!(fw.hal.events.is_empty());
    // The peer acks and closes: the QP ends in Error.
    let mut f = Seg::new(PPORT, LPORT, TcpControl::Fin, rcv, Some(fin_seq + 1));
    f.payload = vec![];
    rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, f.frame());
    fw.hal.now += 10 * S;
    fw.poll();
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Error);
}

/// Requests for a connection the firmware does not have are dropped with
/// nothing sent.
#[test]
fn request_for_unknown_connection_is_dropped() {
    let mut fw = new_fw();
    let tag = DdpRepr::Tagged {
        last: true,
        rsvd_ulp: 0x40,
        stag: 5,
        to: 0,
    };
    let cause = TerminateCause::from(TaggedBufferError::InvalidStag);
    for conn in [0, 7, 1000, u32::MAX] {
        let mut t = request(cause, 0, &tag, 22);
        t.conn = conn;
        fw.hal.terms.push_back(t);
    }
    fw.poll();
    assert!(fw.hal.terms.is_empty());
    assert!(fw.hal.take_sent().is_empty());
    assert!(fw.hal.events.is_empty());
}

/// The peer's Terminate (the device queued it as exception `TerminateRx`,
/// frame = the Terminate message's first 8 octets): QP → Terminate,
/// QpError with the peer's cause, FIN at the device's SND.NXT and no
/// Terminate of ours (RFC 5040 §5.3). A second copy changes nothing.
#[test]
fn incoming_terminate_closes_without_answering() {
    let mut fw = new_fw();
    let (qpn, _rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    device_sent(&mut fw, snd, snd + 500);
    let cause = TerminateCause::from(TaggedBufferError::InvalidStag);
    let mut tb = [0u8; 8];
    TerminateRepr::new(cause).emit(&mut tb).unwrap();
    rx_as(&mut fw, ExceptionReason::TerminateRx, 0, tb.to_vec());
    fw.poll();
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Terminate);
    let ev = fw.hal.events.pop().expect("QpError");
    assert_eq!(
        (ev.kind, ev.status),
        (
            EventKind::QpError,
            rnic_wire::abi::cqe::encode_term_cause(Some(cause))
        )
    );
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out.len(), 1, "only the FIN");
    assert_eq!((out[0].ctl, out[0].seq), (TcpControl::Fin, snd + 500));
    assert!(out[0].payload.is_empty());
    rx_as(&mut fw, ExceptionReason::TerminateRx, 0, tb.to_vec());
    fw.poll();
    assert!(fw.hal.events.is_empty(), "{:?}", fw.hal.events);
    assert!(sent_tcp(&mut fw.hal).is_empty());
}

/// The device refused a send WQE's SGE and turned the QP's send side off
/// (exception `SendQueueError`, frame {QPN LE, status, 0, 0, 0}): the QP
/// goes to Terminate, the host gets QpError with RDMAP Local Catastrophic,
/// and a Terminate with that cause (no echoed header: RFC 5040 §7.1) goes
/// out at the device's SND.NXT, CRC checked, then the FIN. A record for a
/// QP without a connection sends nothing; a second record changes nothing.
#[test]
fn refused_send_wqe_terminates_the_stream() {
    use rnic_wire::terminate::RdmapError;
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    device_sent(&mut fw, snd, snd + 300);
    let status = rnic_wire::abi::cqe::WcStatus::LocalProtectionError as u8;
    let mut rec = qpn.to_le_bytes().to_vec();
    rec.extend_from_slice(&[status, 0, 0, 0]);
    rx_as(&mut fw, ExceptionReason::SendQueueError, qpn, rec.clone());
    fw.poll();
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Terminate);
    let cause = TerminateCause::Rdmap(RdmapError::LocalCatastrophic { code: 0xFF });
    assert_qp_error(&mut fw, qpn, cause);
    let (terminate, _) = terminate_then_fin(&mut fw, snd + 300, rcv);
    assert_eq!(terminate.cause, cause);
    assert!(terminate.ddp.is_none() && terminate.rdma.is_none());
    // again, and for a QP number nobody has: nothing
    rx_as(&mut fw, ExceptionReason::SendQueueError, qpn, rec);
    let mut other = 63u32.to_le_bytes().to_vec();
    other.extend_from_slice(&[status, 0, 0, 0]);
    rx_as(&mut fw, ExceptionReason::SendQueueError, 63, other);
    fw.poll();
    assert!(sent_tcp(&mut fw.hal).is_empty());
    assert!(fw.hal.events.is_empty(), "{:?}", fw.hal.events);
}

/// A CQ overran (exception `CqOverflow`, frame {CQN LE, 0, 0, 0, 0}):
/// every QP that completes into it fails, as `IBV_EVENT_CQ_ERR` implies.
/// The connected QP (the CQ is its send and receive CQ) goes to Terminate:
/// the host gets QpError with RDMAP Local Catastrophic, and that Terminate
/// goes out at the device's SND.NXT, then the FIN. An unconnected QP whose
/// receive CQ it is moves to Error with a QpError event. A QP on other CQs
/// is untouched, and a second record changes nothing.
#[test]
fn cq_overflow_fails_the_cqs_qps() {
    use rnic_wire::abi::mailbox::{Command, MboxStatus};
    use rnic_wire::terminate::RdmapError;
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    let cq = fw.qps().get(qpn).unwrap().send_cqn;
    let bystander = make_qp(&mut fw);
    let other_cq = fw.qps().get(bystander).unwrap().send_cqn;
    assert_ne!(other_cq, cq);
    let (s, r) = cmd(
        &mut fw,
        Command::CreateQp {
            pd: 1,
            send_cqn: other_cq,
            recv_cqn: cq,
            sq_ring: 0x40000,
            sq_entries: 64,
            rq_ring: 0x50000,
            rq_entries: 64,
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    let idle = word(&r, 0);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    device_sent(&mut fw, snd, snd + 200);
    let mut rec = cq.to_le_bytes().to_vec();
    rec.extend_from_slice(&[0; 4]);
    rx_as(&mut fw, ExceptionReason::CqOverflow, cq, rec.clone());
    fw.poll();
    let cause = TerminateCause::Rdmap(RdmapError::LocalCatastrophic { code: 0xFF });
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Terminate);
    assert_eq!(fw.hal.qp(idle).unwrap().state, QpState::Error);
    assert_eq!(fw.hal.qp(bystander).unwrap().state, QpState::Idle);
    let mut evs: Vec<(EventKind, u32)> = fw.hal.events.iter().map(|e| (e.kind, e.handle)).collect();
    evs.sort_by_key(|e| e.1);
    let mut want = vec![(EventKind::QpError, qpn), (EventKind::QpError, idle)];
    want.sort_by_key(|e| e.1);
    assert_eq!(evs, want);
    while let Some(ev) = fw.hal.events.pop() {
        assert_eq!(
            ev.status,
            rnic_wire::abi::cqe::encode_term_cause(Some(cause))
        );
    }
    let (terminate, _) = terminate_then_fin(&mut fw, snd + 200, rcv);
    assert_eq!(terminate.cause, cause);
    // again: nothing more
    rx_as(&mut fw, ExceptionReason::CqOverflow, cq, rec);
    fw.poll();
    assert!(sent_tcp(&mut fw.hal).is_empty());
    assert!(fw.hal.events.is_empty(), "{:?}", fw.hal.events);
}
