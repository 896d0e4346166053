//! RFC 6581 §3.2, the ready-to-receive (RTR) message, against the scripted
//! Hal: as responder the firmware takes the peer's RTR of each type before
//! RDMA mode (answering a Read RTR with a zero-length Read Response),
//! refuses a first FPDU that is not the negotiated RTR, and starts the
//! device's MSNs after the RTR. The peer's FPDUs are built with rnic-wire
//! (the reference model) and ours are decoded with it, CRC checked.
mod common;
use common::*;
use rnic_wire::abi::context::{ConnMode, RtrKind, QP_FLAG_RTR_RX};
use rnic_wire::abi::mailbox::{EventKind, QpState};
use rnic_wire::ddp::DdpSegment;
use rnic_wire::mpa::{Fpdu, FpduRepr};
use rnic_wire::net::TcpControl;
use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};
use rnic_wire::terminate::{MpaError, TerminateCause};

/// The peer's RFC 6581 IRD/ORD words: P2P with IRD 1, ORD 1, and the RTR
/// types offered (Send in the IRD word, Write and Read in the ORD word).
fn request(send: bool, write: bool, read: bool) -> Vec<u8> {
    let ird: u16 = 0x8001 | if send { 0x4000 } else { 0 };
    let ord: u16 = 0x0001 | if write { 0x8000 } else { 0 } | if read { 0x4000 } else { 0 };
    let [i0, i1] = ird.to_be_bytes();
    let [o0, o1] = ord.to_be_bytes();
    // flags 0x50: CRC (C) and Rev 2's enhanced bit, as siw sends them
    mpa_frame(false, 0x50, 2, &[i0, i1, o0, o1])
}

/// Passive open with `req`, Accept, the peer's pure ACK of our Reply.
/// Returns (qpn, rcv_nxt, snd_nxt, the Reply's IRD/ORD words).
fn accepted(fw: &mut Fw, req: &[u8]) -> (u32, u32, u32, [u8; 4]) {
    let (qpn, iss, _, out) = accept_request(fw, req, 1460, &[]);
    let reply = &out.last().expect("MPA Reply").payload;
    let words: [u8; 4] = reply[20..24].try_into().unwrap();
    let rcv = 101 + req.len() as u32;
    let snd = iss + 1 + reply.len() as u32;
    rx(
        fw,
        Seg::new(PPORT, LPORT, TcpControl::None, rcv, Some(snd)).frame(),
    );
    // With an RTR chosen (P in the Reply), RDMA mode waits for it.
    let p2p = words[0] & 0x80 != 0;
    let mode = fw.hal.conn(0).unwrap().mode;
    assert_eq!(mode == ConnMode::Firmware, p2p, "{mode:?}");
    (qpn, rcv, snd, words)
}

/// `msg` framed as an FPDU with the CRC.
fn fpdu(msg: &RdmapRepr) -> Vec<u8> {
    let mut ulpdu = vec![0u8; msg.buffer_len()];
    msg.emit(&mut ulpdu).unwrap();
    let repr = FpduRepr { ulpdu: &ulpdu };
    let mut f = vec![0u8; repr.buffer_len()];
    repr.emit(&mut Fpdu::new_unchecked(&mut f[..]), true)
        .unwrap();
    f
}

fn send_rtr(msn: u32) -> Vec<u8> {
    fpdu(&RdmapRepr::Send {
        solicited: false,
        invalidate_stag: None,
        last: true,
        msn,
        mo: 0,
        payload: &[],
    })
}

fn data(fw: &mut Fw, seq: u32, ack: u32, payload: &[u8]) {
    let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, seq, Some(ack));
    d.payload = payload.to_vec();
    rx(fw, d.frame());
}

/// The MSNs the firmware wrote into QP `qpn`'s device context.
fn msns(fw: &Fw, qpn: u32) -> (u32, u32, u32, u32) {
    let q = fw.hal.qp(qpn).unwrap();
    (q.tx_send_msn, q.tx_read_msn, q.rx_send_msn, q.rx_read_msn)
}

/// A Send RTR (the only type offered): taken, acknowledged, RDMA mode with
/// the receive Send MSN at 2 (MSN 1 was the RTR, which consumed no
/// receive WQE); the FPDU behind it in the segment goes to the fast path.
#[test]
fn send_rtr_is_taken_and_the_receive_msn_starts_at_2() {
    let mut fw = new_fw();
    let (qpn, rcv, snd, words) = accepted(&mut fw, &request(true, false, false));
    assert_eq!(words, [0x40 | 0x80, 0x01, 0x00, 0x01], "Reply chooses Send");
    let rtr = send_rtr(1);
    let next = send_rtr(2); // any FPDU behind it
    data(&mut fw, rcv, snd, &[rtr.clone(), next.clone()].concat());
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(ctx.mode, ConnMode::Rdma);
    let rcv2 = rcv + rtr.len() as u32;
    assert_eq!(ctx.rcv_nxt, rcv2);
    let inj = parse_tcp(&fw.hal.injected[0]).unwrap();
    assert_eq!((inj.seq, inj.payload), (rcv2, next));
    let q = fw.hal.qp(qpn).unwrap();
    assert_eq!(
        (q.state, q.rtr, q.flags),
        (QpState::Rts, RtrKind::Send, QP_FLAG_RTR_RX)
    );
    assert_eq!(msns(&fw, qpn), (1, 1, 2, 1));
}

/// A Read RTR (only Read offered): answered first with a zero-length Read
/// Response for its sink STag and TO (RFC 5040 §4.5), CRC checked; RDMA
/// mode once that is acknowledged, the receive Read MSN at 2.
#[test]
fn read_rtr_gets_a_zero_length_read_response_before_rdma_mode() {
    let mut fw = new_fw();
    let (qpn, rcv, snd, words) = accepted(&mut fw, &request(false, false, true));
    assert_eq!(words, [0x80, 0x01, 0x40, 0x01], "Reply chooses Read");
    let req = ReadRequestRepr {
        sink_stag: 0x1234_5678,
        sink_to: 0x9abc,
        size: 0,
        src_stag: 7,
        src_to: 0,
    };
    let rtr = fpdu(&RdmapRepr::ReadRequest {
        msn: 1,
        request: req,
    });
    data(&mut fw, rcv, snd, &rtr);
    let rcv2 = rcv + rtr.len() as u32;
    let out = sent_tcp(&mut fw.hal);
    let resp = out
        .iter()
        .find(|o| !o.payload.is_empty())
        .expect("a Read Response");
    assert_eq!((resp.seq, resp.ack), (snd, Some(rcv2)));
    let f = Fpdu::new_checked(&resp.payload[..]).unwrap();
    assert_eq!(f.total_len(), resp.payload.len());
    let repr = FpduRepr::parse(&f, true).expect("CRC");
    let seg = DdpSegment::new_checked(repr.ulpdu).unwrap();
    assert_eq!(
        RdmapRepr::parse(&seg).unwrap(),
        RdmapRepr::ReadResponse {
            last: true,
            stag: 0x1234_5678,
            to: 0x9abc,
            payload: &[],
        }
    );
    assert_eq!(
        fw.hal.conn(0).unwrap().mode,
        ConnMode::Firmware,
        "until acknowledged"
    );
    let end = snd + resp.payload.len() as u32;
    rx(
        &mut fw,
        Seg::new(PPORT, LPORT, TcpControl::None, rcv2, Some(end)).frame(),
    );
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(
        (ctx.mode, ctx.rcv_nxt, ctx.snd_nxt),
        (ConnMode::Rdma, rcv2, end)
    );
    assert_eq!(msns(&fw, qpn), (1, 1, 1, 2));
}

/// siw's Write RTR split over two segments (8 + 12 octets): the first part
/// is kept and acknowledged, RDMA mode after the second.
#[test]
fn write_rtr_split_over_two_segments() {
    let mut fw = new_fw();
    let (qpn, rcv, snd, _) = accepted(&mut fw, &request(true, true, true));
    data(&mut fw, rcv, snd, &SIW_WRITE_RTR[..8]);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Firmware);
    let out = sent_tcp(&mut fw.hal);
    assert!(out.iter().any(|o| o.ack == Some(rcv + 8)), "{out:?}");
    data(&mut fw, rcv + 8, snd, &SIW_WRITE_RTR[8..]);
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!((ctx.mode, ctx.rcv_nxt), (ConnMode::Rdma, rcv + 20));
    assert!(fw.hal.injected.is_empty());
    assert_eq!(msns(&fw, qpn), (1, 1, 1, 1));
}

/// Write negotiated, but the peer's first FPDU is a Send (or data, or a
/// bad CRC): a Terminate with layer LLP, MPA error "No Matching RTR
/// Option" (RFC 6581 §9), CRC checked, then the FIN; the host's QP gets
/// ConnectionLost and stays out of RTS; nothing reaches the fast path.
#[test]
fn a_first_fpdu_other_than_the_rtr_is_refused() {
    let mut bad_crc = SIW_WRITE_RTR;
    bad_crc[19] ^= 1;
    for first in [send_rtr(1), bad_crc.to_vec(), vec![0xAB; 300]] {
        let mut fw = new_fw();
        let (qpn, rcv, snd, words) = accepted(&mut fw, &request(true, true, true));
        assert_eq!(words, [0x80, 0x01, 0x80, 0x01], "Reply chooses Write");
        fw.hal.events.clear();
        data(&mut fw, rcv, snd, &first);
        let out = sent_tcp(&mut fw.hal);
        let term = out
            .iter()
            .find(|o| !o.payload.is_empty())
            .expect("a Terminate");
        assert_eq!(term.seq, snd);
        let f = Fpdu::new_checked(&term.payload[..]).unwrap();
        let repr = FpduRepr::parse(&f, true).expect("CRC");
        let seg = DdpSegment::new_checked(repr.ulpdu).unwrap();
        let RdmapRepr::Terminate { terminate, .. } = RdmapRepr::parse(&seg).unwrap() else {
            panic!("not a Terminate");
        };
        assert_eq!(
            terminate.cause,
            TerminateCause::Mpa(MpaError::NoMatchingRtr)
        );
        assert!(out.iter().any(|o| o.ctl == TcpControl::Fin), "then the FIN");
        assert_ne!(fw.hal.conn(0).map(|c| c.mode), Some(ConnMode::Rdma));
        assert!(fw.hal.injected.is_empty());
        let ev = fw.hal.events.pop().expect("an event");
        assert_eq!((ev.kind, ev.handle), (EventKind::ConnectionLost, qpn));
        assert_ne!(fw.hal.qp(qpn).unwrap().state, QpState::Rts);
    }
}

/// Offered nothing we accept (our Config takes only Write; the peer offers
/// Read): the Reply clears P and chooses no RTR (RFC 6581 §3.1), and the
/// connection enters RDMA mode on the acknowledgement of the Reply.
#[test]
fn no_common_rtr_type_means_no_rtr() {
    let mut fw = new_fw();
    fw.config.rtr_types = rnic_wire::mpa::RtrTypes {
        send: false,
        write: true,
        read: false,
    };
    let (qpn, _, _, words) = accepted(&mut fw, &request(false, false, true));
    assert_eq!(words, [0x00, 0x01, 0x00, 0x01], "no P, no RTR");
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Rdma);
    assert_eq!(fw.hal.qp(qpn).unwrap().rtr, RtrKind::None);
    assert_eq!(msns(&fw, qpn), (1, 1, 1, 1));
}

/// The peer never sends its RTR: after `Config::mpa_timeout` the
/// connection is aborted (RST) and the host's QP gets ConnectionLost; it
/// never reaches RDMA mode.
#[test]
fn a_missing_rtr_times_out() {
    let mut fw = new_fw();
    let (qpn, rcv, snd, _) = accepted(&mut fw, &request(true, true, true));
    // an empty segment (a window update) starts the wait
    data(&mut fw, rcv, snd, &[]);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    let t0 = fw.hal.now;
    let timeout = fw.config.mpa_timeout;
    fw.hal.now = t0 + timeout - 1;
    fw.poll();
    assert!(fw.hal.events.is_empty(), "not before the timeout");
    fw.hal.now = t0 + timeout + 1;
    fw.poll();
    let ev = fw.hal.events.pop().expect("ConnectionLost");
    assert_eq!((ev.kind, ev.handle), (EventKind::ConnectionLost, qpn));
    assert!(sent_tcp(&mut fw.hal)
        .iter()
        .any(|o| o.ctl == TcpControl::Rst));
    assert_ne!(fw.hal.conn(0).map(|c| c.mode), Some(ConnMode::Rdma));
}
