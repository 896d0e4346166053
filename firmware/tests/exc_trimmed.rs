//! Exception frames longer than the firmware's buffer (issue 4, MTU 9000
//! with loss): the device's exception queue keeps the first 2 KiB of a frame
//! (`port::FRAME_WINDOW`) and reports its whole length, and the firmware
//! reads at most `frame::MAX_FRAME` octets of it. A 4150-octet segment of a
//! connection in RDMA mode that is out of order or an old duplicate must
//! still be answered with an ACK of RCV.NXT (RFC 9293 §3.10.7.4) — before
//! the fix the firmware's parser refused the cut frame (IPv4 total length
//! beyond the octets read) and answered nothing, so a peer whose ACKs were
//! lost retransmitted into silence until its retries ran out.
mod common;
use common::*;
use rnic_wire::abi::context::{ConnContext, ConnMode, ExceptionReason, TableId};
use rnic_wire::net::TcpControl;

/// TCP payload of the segments (the rnic peer's MULPDU 4090 FPDU: 4096).
const PAYLOAD: usize = 4096;

#[test]
fn long_out_of_order_and_old_segments_get_an_ack() {
    let mut fw = new_fw();
    let (_qpn, rcv, snd) = passive_rdma_mss(&mut fw, 8960);
    let _ = sent_tcp(&mut fw.hal);
    // The fast path took three segments meanwhile.
    let rn = rcv.wrapping_add(3 * PAYLOAD as u32);
    let mut c = fw.hal.conn(0).unwrap();
    c.rcv_nxt = rn;
    let mut b = [0u8; ConnContext::SIZE];
    c.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
    let injected = fw.hal.injected.len();
    let writes = fw.hal.writes.len();
    for (seq, ctl, what) in [
        (
            rn.wrapping_sub(PAYLOAD as u32),
            TcpControl::Psh,
            "old duplicate",
        ),
        (
            rn.wrapping_sub(3 * PAYLOAD as u32),
            TcpControl::Psh,
            "older duplicate",
        ),
        (
            rn.wrapping_add(PAYLOAD as u32),
            TcpControl::Psh,
            "out of order",
        ),
        (
            rn.wrapping_add(2 * PAYLOAD as u32),
            TcpControl::Fin,
            "out of order with FIN",
        ),
    ] {
        let mut d = Seg::new(PPORT, LPORT, ctl, seq, Some(snd));
        d.payload = (0..PAYLOAD).map(|i| i as u8).collect();
        let f = d.frame();
        assert_eq!(f.len(), 54 + PAYLOAD);
        // through the Hal, as the device queues it: the whole frame's
        // length, the firmware reads what fits its buffer
        fw.hal
            .push_rx(ExceptionReason::OutOfWindow, Some(0), f.clone());
        fw.poll();
        let out = sent_tcp(&mut fw.hal);
        assert_eq!(out.len(), 1, "{what}: one ACK, got {out:?}");
        assert_eq!(
            (out[0].ctl, out[0].seq, out[0].ack, out[0].payload.len()),
            (TcpControl::None, snd, Some(rn), 0),
            "{what}: ACK of RCV.NXT"
        );
        // the same cut at the 2 KiB EXC_DATA window
        fw.on_exception_of(ExceptionReason::OutOfWindow, Some(0), &f[..2048], f.len());
        let out = sent_tcp(&mut fw.hal);
        assert_eq!(out.len(), 1, "{what} (2 KiB): one ACK, got {out:?}");
        assert_eq!(out[0].ack, Some(rn), "{what} (2 KiB)");
    }
    assert_eq!(fw.hal.injected.len(), injected, "nothing placed");
    assert_eq!(fw.hal.writes.len(), writes, "no context write");
    assert_eq!(fw.hal.conn(0).unwrap().rcv_nxt, rn);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Rdma);
}

/// A cut frame whose headers are damaged or not all there is still
/// refused: nothing is sent.
#[test]
fn cut_frames_with_bad_headers_are_ignored() {
    let mut fw = new_fw();
    let (_qpn, rcv, snd) = passive_rdma_mss(&mut fw, 8960);
    let _ = sent_tcp(&mut fw.hal);
    let mut d = Seg::new(
        PPORT,
        LPORT,
        TcpControl::Psh,
        rcv.wrapping_sub(4096),
        Some(snd),
    );
    d.payload = vec![0xA5; PAYLOAD];
    let f = d.frame();
    // control: the good cut frame is answered
    fw.on_exception_of(ExceptionReason::OutOfWindow, Some(0), &f[..1514], f.len());
    assert_eq!(sent_tcp(&mut fw.hal).len(), 1, "good cut frame answered");
    // IPv4 header checksum wrong (octet 24 is in it)
    let mut bad = f.clone();
    bad[24] ^= 0x40;
    fw.on_exception_of(ExceptionReason::OutOfWindow, Some(0), &bad[..1514], f.len());
    // TCP header not whole (54 octets of headers needed)
    fw.on_exception_of(ExceptionReason::OutOfWindow, Some(0), &f[..50], f.len());
    // IPv4 header longer than the total length
    let mut bad = f.clone();
    bad[14] = 0x4F;
    fw.on_exception_of(ExceptionReason::OutOfWindow, Some(0), &bad[..1514], f.len());
    assert!(sent_tcp(&mut fw.hal).is_empty(), "bad cut frames ignored");
}

/// The peer's first FPDU right behind its ACK of the MPA Reply, classified
/// before the switch to RDMA mode (`FirmwareMode`), in a segment longer than
/// the firmware's buffer: it is not handed back to the fast path (only its
/// first octets are here; a go-back-N peer resends the whole FPDU, which the
/// fast path could not take once a prefix moved RCV.NXT) and nothing past
/// its start is acknowledged: the peer resends it and the fast path takes it.
#[test]
fn cut_first_fpdu_is_left_to_the_peer() {
    let mut fw = new_fw();
    let (rcv, snd) = accept_then_ack_reply(&mut fw, 8960);
    let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, rcv, Some(snd));
    d.payload = vec![0x33; PAYLOAD];
    fw.hal
        .push_rx(ExceptionReason::FirmwareMode, Some(0), d.frame());
    fw.poll();
    let out = sent_tcp(&mut fw.hal);
    assert!(
        out.iter().all(|o| o.ack.is_none_or(|a| a == rcv)),
        "nothing past the FPDU's start acknowledged: {out:?}"
    );
    assert!(fw.hal.injected.is_empty(), "not handed back cut");
    assert_eq!(fw.hal.conn(0).unwrap().rcv_nxt, rcv);
}
