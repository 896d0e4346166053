//! Fast/slow split, exception queue and throughput of the RX front end
//! through `rnic_core` (Verilator). Frames from smoltcp's emitters.

mod common;
use common::net::*;

fn rdma_conn(i: u8, rcv_nxt: u32) -> Conn {
    Conn {
        used: true,
        local_ip: 0x0A00_0001,
        peer_ip: 0x0A00_0100 + i as u32,
        local_port: 7174,
        peer_port: 40000 + i as u16,
        mode: 2,
        mpa: 0b1010,
        rcv_nxt,
        rcv_wnd: 1 << 20,
        snd_una: 5000,
        snd_nxt: 9000,
    }
}

fn seg(c: &Conn) -> Seg {
    let mut s = Seg::new(
        c.peer_ip.to_be_bytes(),
        c.local_ip.to_be_bytes(),
        c.peer_port,
        c.local_port,
    );
    s.seq = c.rcv_nxt;
    s.ack = c.snd_una;
    s
}

/// Sends `n` in-order segments with `plen`-byte payloads and `opts` bytes of
/// TCP options back to back (no MAC gaps, sink always ready) and returns the
/// steady-state clocks per frame, measured between the first beats of the
/// first and last payloads on `rx_pay`, and the frame length.
fn back_to_back(n: usize, plen: usize, opts: usize) -> (f64, usize) {
    let mut rx = Rx::new(plen as u64);
    let mut c = rdma_conn(0, 1);
    rx.write_conn(0, &c);
    let mut len = 0;
    for i in 0..n {
        let mut s = seg(&c);
        s.tcp_opts = vec![1; opts];
        s.payload = vec![i as u8; plen];
        let f = s.build(0);
        len = f.len();
        rx.send(&f);
        c.rcv_nxt += plen as u32;
    }
    rx.drain(3 * 200 * n);
    assert_eq!(rx.delivered.len(), n, "every segment delivered");
    assert_eq!(rx.m.get_cnt_rx_overflow(), 0);
    let t = &rx.pay_start;
    ((t[n - 1] - t[0]) as f64 / (n - 1) as f64, len)
}

/// Throughput at full MAC rate (one beat per clock, no inter-frame gap).
/// The parser takes one beat per clock; the clocks above that are the
/// segment's wait for the connection decision (it comes 3 clocks after the
/// 4-tuple, which is complete in the beat TCP starts in when it starts at
/// byte 2 of that beat, as after a 20-octet IPv4 header) when the payload or
/// the last beat comes earlier, plus one clock when the payload ends past the
/// realignment point of the last beat (`tail`). Pinned exactly, so a change
/// shows; docs/rtl.md explains and compares with 10GbE line rate.
#[test]
fn throughput_back_to_back() {
    let (c64, l64) = back_to_back(40, 6, 0);
    let (c64o, l64o) = back_to_back(40, 6, 12);
    let (c1518, l1518) = back_to_back(30, 1460, 0);
    let (c1518o, l1518o) = back_to_back(30, 1448, 12);
    eprintln!("{l64} B frames, no options: {c64:.2} clocks/frame (beats: 8)");
    eprintln!("{l64o} B frames, 12 B options: {c64o:.2} clocks/frame (beats: 9)");
    eprintln!("{l1518} B frames, no options: {c1518:.2} clocks/frame (beats: 190)");
    eprintln!("{l1518o} B frames, 12 B options: {c1518o:.2} clocks/frame (beats: 190)");
    assert_eq!((l64, l64o, l1518, l1518o), (60, 72, 1514, 1514));
    // 1 decision clock
    assert_eq!(c64, 9.0);
    // 1 tail clock (the 6-byte payload lies in the last beat)
    assert_eq!(c64o, 10.0);
    // 1 decision clock
    assert_eq!(c1518, 191.0);
    // one beat per clock
    assert_eq!(c1518o, 190.0);
}

/// Each split rule, one segment at a time, with the exception queue read
/// back: reason, connection and the whole frame; `rcv_nxt`/`snd_una` moved
/// only by fast-path segments; ACK requests only for payload.
#[test]
fn split_rules() {
    let mut rx = Rx::new(11);
    let mut c0 = rdma_conn(0, 100);
    let mut fw = rdma_conn(1, 0);
    fw.mode = 1;
    rx.write_conn(0, &c0);
    rx.write_conn(1, &fw);
    let mut expect_exc: Vec<(u8, u32, Vec<u8>)> = Vec::new();
    let mut expect_pay: Vec<Vec<u8>> = Vec::new();
    let mut go = |rx: &mut Rx, f: Vec<u8>, exc: Option<(u8, u32)>| {
        match exc {
            Some((r, c)) => expect_exc.push((r, c, f.clone())),
            None => {
                let Class::Tcp(_, p) = classify(&f) else {
                    panic!()
                };
                expect_pay.push(p)
            }
        }
        rx.send(&f);
        rx.drain(400);
    };
    // in order, with payload and a new ACK
    let mut s = seg(&c0);
    s.payload = vec![7; 100];
    s.ack = 6000;
    go(&mut rx, s.build(0), None);
    c0.rcv_nxt += 100;
    c0.snd_una = 6000;
    // pure ACK, in order, ACK beyond snd_nxt: snd_una unchanged
    let mut s = seg(&c0);
    s.ack = 9001;
    go(&mut rx, s.build(0), None);
    // pure ACK with an old ACK: unchanged
    let mut s = seg(&c0);
    s.ack = 5500;
    go(&mut rx, s.build(0), None);
    // out of order, RST, SYN, FIN
    let mut s = seg(&c0);
    s.seq += 1;
    go(&mut rx, s.build(0), Some((R_OUT_OF_WINDOW, 0)));
    for (fl, r) in [(FLAG_RST, R_RST), (FLAG_SYN, R_SYN), (FLAG_FIN, R_FIN)] {
        let mut s = seg(&c0);
        s.flags |= fl;
        go(&mut rx, s.build(0), Some((r, 0)));
    }
    // firmware mode, no match
    go(&mut rx, seg(&fw).build(0), Some((R_FIRMWARE_MODE, 1)));
    let mut s = seg(&c0);
    s.dport += 1;
    go(&mut rx, s.build(0), Some((R_NO_MATCH, CONN_NONE)));
    // the connection freed: no match
    let mut free = c0.clone();
    free.mode = 0;
    rx.write_conn(0, &free);
    go(&mut rx, seg(&c0).build(0), Some((R_NO_MATCH, CONN_NONE)));

    let got: Vec<(u8, u32, Vec<u8>)> = rx
        .excs
        .iter()
        .map(|e| (e.reason, e.conn, e.bytes.clone()))
        .collect();
    assert_eq!(got, expect_exc);
    let pays: Vec<Vec<u8>> = rx.delivered.iter().map(|d| d.payload.clone()).collect();
    assert_eq!(pays, expect_pay);
    assert!(rx.delivered.iter().all(|d| d.conn == 0 && d.mpa == 0b1010));
    assert_eq!(rx.acks, vec![(0, c0.rcv_nxt)]);
    let (used, mode, rcv_nxt, snd_una) = rx.read_conn(0);
    assert_eq!(
        (used, mode, rcv_nxt, snd_una),
        (true, 0, c0.rcv_nxt, c0.snd_una)
    );
}

/// Nobody reads the exception queue: 4 frames are kept, the rest counted
/// in `cnt_rx_exc_full`; once read, the 4 are the first 4 sent, whole.
#[test]
fn exception_queue_full() {
    let mut rx = Rx::new(12);
    rx.read_exc = false;
    let mut rng = common::Rng::new(12);
    let frames: Vec<Vec<u8>> = (0..10)
        .map(|_| {
            let n = 28 + rng.below(1400);
            eth_frame(
                [0xff; 6],
                [2, 0, 0, 0, 0, 9],
                smoltcp::wire::EthernetProtocol::Arp,
                &rng.bytes(n),
                0,
            )
        })
        .collect();
    for f in &frames {
        rx.send(f);
    }
    rx.drain(2000);
    assert_eq!(rx.m.get_exc_count(), 4);
    assert_eq!(rx.m.get_cnt_rx_exc(), 4);
    assert_eq!(rx.m.get_cnt_rx_exc_full(), 6);
    rx.read_exc = true;
    rx.drain(3000);
    let got: Vec<Vec<u8>> = rx.excs.iter().map(|e| e.bytes.clone()).collect();
    assert_eq!(got, frames[..4].to_vec());
    assert_eq!(rx.m.get_exc_valid(), 0);
}
