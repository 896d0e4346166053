//! The TCP state machine on its own, driven segment by segment.
use rnic_fw::tcp::*;
use rnic_wire::net::{TcpControl, TcpRepr, TcpSeqNumber, TcpTimestampRepr};

#[derive(Debug, Clone, PartialEq)]
struct S {
    ctl: TcpControl,
    seq: u32,
    ack: Option<u32>,
    win: u16,
    mss: Option<u16>,
    ws: Option<u8>,
    sack: bool,
    ts: bool,
    payload: Vec<u8>,
}

#[derive(Default)]
struct Sink(Vec<S>);
impl SegSink for Sink {
    fn send(&mut self, r: &TcpRepr) {
        self.0.push(S {
            ctl: r.control,
            seq: r.seq_number.0 as u32,
            ack: r.ack_number.map(|a| a.0 as u32),
            win: r.window_len,
            mss: r.max_seg_size,
            ws: r.window_scale,
            sack: r.sack_permitted,
            ts: r.timestamp.is_some(),
            payload: r.payload.to_vec(),
        });
    }
}
impl Sink {
    fn take(&mut self) -> Vec<S> {
        std::mem::take(&mut self.0)
    }
}

const S: u64 = 1_000_000;
const TUPLE: Tuple = Tuple {
    local_ip: 1,
    local_port: 5000,
    peer_ip: 2,
    peer_port: 6000,
};
const P: Params = Params {
    iss: 1000,
    mss: 1460,
    wscale: 7,
    rcv_wnd: 1 << 20,
    max_retries: 3,
};

fn seg(ctl: TcpControl, seq: u32, ack: Option<u32>, payload: &[u8]) -> TcpRepr<'_> {
    TcpRepr {
        src_port: 6000,
        dst_port: 5000,
        control: ctl,
        seq_number: TcpSeqNumber(seq as i32),
        ack_number: ack.map(|a| TcpSeqNumber(a as i32)),
        window_len: 1000,
        window_scale: None,
        max_seg_size: None,
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload,
    }
}

fn established() -> (Tcb<600>, Sink) {
    let mut k = Sink::default();
    let mut t = Tcb::<600>::connect(TUPLE, &P, 0, &mut k);
    let mut sa = seg(TcpControl::Syn, 5000, Some(1001), &[]);
    sa.window_scale = Some(2);
    sa.max_seg_size = Some(1000);
    let rx = t.on_segment(&sa, 10, &mut k);
    assert_eq!(rx.event, Some(TcpEvent::Established));
    k.take();
    (t, k)
}

#[test]
fn active_open_offers_mss_and_wscale_only() {
    let mut k = Sink::default();
    let mut t = Tcb::<600>::connect(TUPLE, &P, 0, &mut k);
    let syn = k.take();
    assert_eq!(syn.len(), 1);
    assert_eq!(syn[0].ctl, TcpControl::Syn);
    assert_eq!(syn[0].seq, 1000);
    assert_eq!(syn[0].ack, None);
    assert_eq!(syn[0].mss, Some(1460));
    assert_eq!(syn[0].ws, Some(7));
    assert!(!syn[0].sack && !syn[0].ts);
    // The peer offers everything (like Linux): we take MSS and scaling, ignore the rest.
    let mut sa = seg(TcpControl::Syn, 7000, Some(1001), &[]);
    sa.max_seg_size = Some(1448);
    sa.window_scale = Some(7);
    sa.sack_permitted = true;
    sa.timestamp = Some(TcpTimestampRepr::new(1, 2));
    let rx = t.on_segment(&sa, 5, &mut k);
    assert_eq!(rx.event, Some(TcpEvent::Established));
    assert_eq!(t.state, TcpState::Established);
    assert_eq!((t.snd_wscale, t.rcv_wscale, t.peer_mss), (7, 7, 1448));
    let ack = k.take();
    assert_eq!(ack.len(), 1);
    assert_eq!(
        (ack[0].ctl, ack[0].seq, ack[0].ack),
        (TcpControl::None, 1001, Some(7001))
    );
    assert!(!ack[0].ts && !ack[0].sack);
    assert_eq!(ack[0].win as u32, (1 << 20) >> 7);
}

#[test]
fn passive_open_scales_only_if_offered() {
    for offered in [None, Some(3u8)] {
        let mut k = Sink::default();
        let mut syn = seg(TcpControl::Syn, 100, None, &[]);
        syn.window_scale = offered;
        syn.timestamp = Some(TcpTimestampRepr::new(9, 0));
        syn.sack_permitted = true;
        let mut t = Tcb::<0>::accept(TUPLE, &syn, &P, 0, &mut k);
        let sa = k.take();
        assert_eq!(sa.len(), 1);
        assert_eq!(
            (sa[0].ctl, sa[0].seq, sa[0].ack),
            (TcpControl::Syn, 1000, Some(101))
        );
        assert_eq!(sa[0].ws, offered.map(|_| 7));
        assert_eq!(sa[0].mss, Some(1460));
        assert!(!sa[0].ts && !sa[0].sack);
        let rx = t.on_segment(&seg(TcpControl::None, 101, Some(1001), &[]), 1, &mut k);
        assert_eq!(rx.event, Some(TcpEvent::Established));
        assert_eq!(t.snd_wscale, offered.unwrap_or(0));
        assert_eq!(t.snd_wnd, 1000u32 << offered.unwrap_or(0));
    }
}

#[test]
fn syn_retransmits_with_backoff_then_times_out() {
    let mut k = Sink::default();
    let mut t = Tcb::<600>::connect(TUPLE, &P, 0, &mut k);
    k.take();
    let mut times = vec![];
    let mut now;
    loop {
        now = t.deadline().expect("a timer runs until the end");
        let ev = t.poll(now, &mut k);
        if ev == Some(TcpEvent::TimedOut) {
            break;
        }
        let s = k.take();
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].ctl, s[0].seq), (TcpControl::Syn, 1000));
        times.push(now);
    }
    assert_eq!(times, vec![S, 3 * S, 7 * S]);
    assert_eq!(now, 15 * S);
    assert_eq!(t.state, TcpState::Closed);
}

#[test]
fn synack_retransmits_on_duplicate_syn() {
    let mut k = Sink::default();
    let syn = seg(TcpControl::Syn, 100, None, &[]);
    let mut t = Tcb::<0>::accept(TUPLE, &syn, &P, 0, &mut k);
    k.take();
    t.on_segment(&syn, 1, &mut k);
    let s = k.take();
    assert_eq!((s[0].ctl, s[0].ack), (TcpControl::Syn, Some(101)));
    // A bad ACK in SYN-RECEIVED gets a RST.
    t.on_segment(&seg(TcpControl::None, 101, Some(5000), &[]), 2, &mut k);
    let s = k.take();
    assert_eq!((s[0].ctl, s[0].seq), (TcpControl::Rst, 5000));
}

#[test]
fn rfc5961_rst_and_syn() {
    let (mut t, mut k) = established();
    // In window, not exact: challenge ACK, no reset.
    let rx = t.on_segment(&seg(TcpControl::Rst, 5001 + 10, None, &[]), 20, &mut k);
    assert_eq!(rx.event, None);
    let s = k.take();
    assert_eq!(s.len(), 1);
    assert_eq!(
        (s[0].ctl, s[0].seq, s[0].ack),
        (TcpControl::None, 1001, Some(5001))
    );
    assert_eq!(t.state, TcpState::Established);
    // Outside the window: silently dropped.
    t.on_segment(
        &seg(TcpControl::Rst, 5001u32.wrapping_sub(10), None, &[]),
        21,
        &mut k,
    );
    t.on_segment(
        &seg(TcpControl::Rst, 5001 + (1 << 21), None, &[]),
        21,
        &mut k,
    );
    assert!(k.take().is_empty());
    // SYN, in or out of window: challenge ACK.
    t.on_segment(&seg(TcpControl::Syn, 5001, None, &[]), 22, &mut k);
    t.on_segment(&seg(TcpControl::Syn, 1, None, &[]), 22, &mut k);
    assert_eq!(k.take().len(), 2);
    assert_eq!(t.state, TcpState::Established);
    // Challenge ACKs are rate limited.
    for _ in 0..100 {
        t.on_segment(&seg(TcpControl::Syn, 1, None, &[]), 23, &mut k);
    }
    assert!(k.take().len() <= CHALLENGE_ACK_LIMIT as usize);
    // ACK of data never sent: ACK back, dropped.
    t.on_segment(&seg(TcpControl::None, 5001, Some(9999), &[]), 24, &mut k);
    assert_eq!(t.snd_una, 1001);
    // Exact RST: reset.
    let rx = t.on_segment(&seg(TcpControl::Rst, 5001, None, &[]), 25, &mut k);
    assert_eq!(rx.event, Some(TcpEvent::Reset));
    assert_eq!(t.state, TcpState::Closed);
}

#[test]
fn data_is_sent_retransmitted_and_acked() {
    let (mut t, mut k) = established();
    let data: Vec<u8> = (0..2500u32).map(|i| i as u8).collect();
    assert!(!t.write(&data, 30, &mut k), "larger than the buffer");
    assert!(t.write(&data[..600], 30, &mut k));
    let s = k.take();
    // MSS is min(1460, 1000) = 1000 but the window is 1000 << 2: one segment.
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].payload, data[..600]);
    assert_eq!(s[0].ctl, TcpControl::Psh);
    // Lost: retransmitted after the RTO.
    let d = t.deadline().unwrap();
    assert_eq!(d, 30 + S);
    t.poll(d, &mut k);
    let s = k.take();
    assert_eq!((s[0].seq, s[0].payload.len()), (1001, 600));
    // Partial ACK, then full.
    t.on_segment(&seg(TcpControl::None, 5001, Some(1101), &[]), d + 1, &mut k);
    assert_eq!(t.tx_pending(), 500);
    t.on_segment(&seg(TcpControl::None, 5001, Some(1601), &[]), d + 2, &mut k);
    assert_eq!(t.tx_pending(), 0);
    assert_eq!(t.deadline(), None);
}

#[test]
fn receive_in_order_out_of_order_and_overlap() {
    let (mut t, mut k) = established();
    let rx = t.on_segment(&seg(TcpControl::Psh, 5001, Some(1001), b"hello"), 1, &mut k);
    assert_eq!((rx.off, rx.len, rx.fin), (0, 5, false));
    t.consume_all(&rx, 1, &mut k);
    assert_eq!(k.take()[0].ack, Some(5006));
    // Overlapping retransmission: only the new part.
    let rx = t.on_segment(
        &seg(TcpControl::Psh, 5003, Some(1001), b"llo world"),
        2,
        &mut k,
    );
    assert_eq!((rx.off, rx.len), (3, 6));
    t.consume(rx.len);
    // Out of order: duplicate ACK, nothing taken.
    let rx = t.on_segment(&seg(TcpControl::Psh, 6000, Some(1001), b"x"), 3, &mut k);
    assert_eq!(rx.len, 0);
    assert_eq!(k.take().last().unwrap().ack, Some(5012));
}

#[test]
fn graceful_close_active_side() {
    let (mut t, mut k) = established();
    t.close(1, &mut k);
    let s = k.take();
    assert_eq!((s[0].ctl, s[0].seq), (TcpControl::Fin, 1001));
    assert_eq!(t.state, TcpState::FinWait1);
    t.on_segment(&seg(TcpControl::None, 5001, Some(1002), &[]), 2, &mut k);
    assert_eq!(t.state, TcpState::FinWait2);
    let rx = t.on_segment(&seg(TcpControl::Fin, 5001, Some(1002), &[]), 3, &mut k);
    assert!(rx.fin);
    assert_eq!(t.consume_all(&rx, 3, &mut k), Some(TcpEvent::PeerFin));
    assert_eq!(k.take()[0].ack, Some(5002));
    assert_eq!(t.state, TcpState::TimeWait);
    assert_eq!(t.poll(3 + TIME_WAIT, &mut k), Some(TcpEvent::Closed));
    assert_eq!(t.state, TcpState::Closed);
}

#[test]
fn graceful_close_passive_side_and_fin_retransmission() {
    let (mut t, mut k) = established();
    let rx = t.on_segment(&seg(TcpControl::Fin, 5001, Some(1001), &[]), 1, &mut k);
    assert_eq!(t.consume_all(&rx, 1, &mut k), Some(TcpEvent::PeerFin));
    assert_eq!(t.state, TcpState::CloseWait);
    k.take();
    t.close(2, &mut k);
    assert_eq!(t.state, TcpState::LastAck);
    assert_eq!(k.take()[0].ctl, TcpControl::Fin);
    // The FIN is lost and sent again.
    let d = t.deadline().unwrap();
    t.poll(d, &mut k);
    let s = k.take();
    assert_eq!((s[0].ctl, s[0].seq), (TcpControl::Fin, 1001));
    let rx = t.on_segment(&seg(TcpControl::None, 5002, Some(1002), &[]), d + 1, &mut k);
    assert_eq!(rx.event, Some(TcpEvent::Closed));
}

#[test]
fn simultaneous_close_and_abort() {
    let (mut t, mut k) = established();
    t.close(1, &mut k);
    let rx = t.on_segment(&seg(TcpControl::Fin, 5001, Some(1001), &[]), 2, &mut k);
    t.consume_all(&rx, 2, &mut k);
    assert_eq!(t.state, TcpState::Closing);
    t.on_segment(&seg(TcpControl::None, 5002, Some(1002), &[]), 3, &mut k);
    assert_eq!(t.state, TcpState::TimeWait);

    let (mut t, mut k) = established();
    t.abort(&mut k);
    let s = k.take();
    assert_eq!((s[0].ctl, s[0].seq), (TcpControl::Rst, 1001));
    assert_eq!(t.state, TcpState::Closed);
}

#[test]
fn refused_connect_and_stray_segments() {
    let mut k = Sink::default();
    let mut t = Tcb::<600>::connect(TUPLE, &P, 0, &mut k);
    k.take();
    // A RST with a bad ACK is ignored; with the right ACK it refuses.
    assert_eq!(
        t.on_segment(&seg(TcpControl::Rst, 0, Some(5), &[]), 1, &mut k)
            .event,
        None
    );
    assert_eq!(
        t.on_segment(&seg(TcpControl::Rst, 0, Some(1001), &[]), 1, &mut k)
            .event,
        Some(TcpEvent::Reset)
    );
    // reset_for answers a stray segment.
    Tcb::<0>::reset_for(&seg(TcpControl::None, 77, Some(88), b"x"), &mut k);
    Tcb::<0>::reset_for(&seg(TcpControl::Syn, 77, None, &[]), &mut k);
    Tcb::<0>::reset_for(&seg(TcpControl::Rst, 77, None, &[]), &mut k);
    let s = k.take();
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].ctl, s[0].seq), (TcpControl::Rst, 88));
    assert_eq!((s[1].ctl, s[1].ack), (TcpControl::Rst, Some(78)));
}

fn pending(listener: u32, port: u16, born: u64) -> Pending {
    let mut k = Sink::default();
    let tuple = Tuple {
        peer_port: port,
        ..TUPLE
    };
    let tcb = Tcb::<0>::accept(tuple, &seg(TcpControl::Syn, 1, None, &[]), &P, born, &mut k);
    Pending {
        listener,
        tcb,
        peer_mac: [0; 6],
        born,
    }
}

#[test]
fn backlog_evicts_oldest_half_open_and_stays_bounded() {
    let mut b = Backlog::<8>::new();
    // Listener 1 (backlog 3) is flooded; listener 2 (backlog 4) has one real client.
    assert!(b.insert(4, pending(2, 9, 0)));
    for i in 0..1000u16 {
        assert!(b.insert(3, pending(1, 10_000 + i, 1 + i as u64)));
        assert!(b.count(1) <= 3);
        assert!(b.len() <= 8);
    }
    // The flood displaced only its own entries.
    assert!(b
        .find(&Tuple {
            peer_port: 9,
            ..TUPLE
        })
        .is_some());
    assert!(b
        .find(&Tuple {
            peer_port: 10_999,
            ..TUPLE
        })
        .is_some());
    assert!(b
        .find(&Tuple {
            peer_port: 10_000,
            ..TUPLE
        })
        .is_none());
    // SYN-ACK retransmission, then expiry.
    let mut n = 0;
    let mut now = 0;
    while !b.is_empty() {
        now = b.next_deadline().unwrap();
        b.poll(now, |_, _, r| {
            assert_eq!(r.control, TcpControl::Syn);
            n += 1;
        });
    }
    assert!(n >= 3 * 4);
    assert!(now < 100 * S);
}
