//! System tests of the RX front end through `rnic_core` (Verilator):
//! rx_check → rx_fifo → rx_parse → rx_split/conn_table → rx_pay / exc_queue.
//! Frames are built with smoltcp's emitters; every expected outcome comes
//! from smoltcp's parsers and checksum routines plus a plain-Rust model of
//! the connection split (tests/common/net.rs), never from the RTL.

mod common;
use common::net::*;
use common::Rng;
use smoltcp::wire::EthernetProtocol;

const LOCAL_IP: [u8; 4] = [10, 0, 0, 1];

fn ip32(b: [u8; 4]) -> u32 {
    u32::from_be_bytes(b)
}

/// The connection table used by the random tests: 0..=5 Rdma (5 with a
/// small window), 6 Firmware, 7 used but Free, 9 not used.
fn conns(rng: &mut Rng) -> Vec<Conn> {
    let mut v = vec![Conn::default(); 10];
    for (i, c) in v.iter_mut().enumerate() {
        let una = rng.next_u64() as u32;
        *c = Conn {
            used: i != 8 && i != 9,
            local_ip: ip32(LOCAL_IP),
            peer_ip: ip32([10, 0, 1, i as u8]),
            local_port: 7174,
            peer_port: 40000 + i as u16,
            mode: match i {
                0..=5 => 2,
                6 => 1,
                _ => 0,
            },
            mpa: (i % 16) as u8,
            rcv_nxt: rng.next_u64() as u32,
            rcv_wnd: if i == 5 { 300 } else { 1 << 20 },
            snd_una: una,
            snd_nxt: una.wrapping_add(100_000),
        };
    }
    v[9].used = false;
    v
}

fn seg_for(c: &Conn) -> Seg {
    Seg::new(
        c.peer_ip.to_be_bytes(),
        c.local_ip.to_be_bytes(),
        c.peer_port,
        c.local_port,
    )
}

/// A random frame of a random kind; returns it with a short label.
fn random_frame(rng: &mut Rng, model: &[Conn]) -> (Vec<u8>, &'static str) {
    let k = rng.below(100);
    let ci = rng.below(8);
    let c = &model[ci];
    let mut s = seg_for(c);
    s.seq = c.rcv_nxt;
    s.ack = c.snd_una.wrapping_add(rng.below(2000) as u32);
    s.flags = FLAG_ACK | if rng.percent(30) { FLAG_PSH } else { 0 };
    s.window = rng.next_u64() as u16;
    if rng.percent(30) {
        let n = 4 * (1 + rng.below(10));
        s.ip_opts = rng.bytes(n);
    }
    if rng.percent(40) {
        let n = 4 * (1 + rng.below(10));
        s.tcp_opts = rng.bytes(n);
    }
    let room = 1514 - 14 - 40 - s.ip_opts.len() - s.tcp_opts.len();
    let plen = match rng.below(10) {
        0..=1 => rng.below(7), // short: the frame is padded
        2..=4 => rng.below(65),
        _ => rng.below(room + 1),
    };
    s.payload = rng.bytes(plen);
    let pad = rng.next_u64() as u8;
    let label;
    let mut f;
    match k {
        0..=49 => {
            label = "in-order";
            f = s.build(pad);
        }
        50..=57 => {
            label = "out-of-order";
            s.seq = s.seq.wrapping_add(1 + rng.below(100000) as u32);
            f = s.build(pad);
        }
        58..=62 => {
            label = "rst/syn/fin";
            s.flags |= [FLAG_RST, FLAG_SYN, FLAG_FIN][rng.below(3)];
            f = s.build(pad);
        }
        63..=66 => {
            label = "no-match";
            match rng.below(3) {
                0 => s.sport ^= 1 + rng.below(1000) as u16,
                1 => s = seg_for(&model[7 + rng.below(3)]),
                _ => s.src_ip[3] ^= 0x80,
            }
            f = s.build(pad);
        }
        67..=71 => {
            label = "bad-ip-csum";
            f = s.build(pad);
            f[ETH_LEN + 10] ^= 1 << rng.below(8);
        }
        72..=76 => {
            label = "bad-tcp-csum";
            f = s.build(pad);
            // one bit flipped inside the segment (not in the padding)
            let t = ETH_LEN + 20 + s.ip_opts.len();
            let seg = 20 + s.tcp_opts.len() + s.payload.len();
            f[t + rng.below(seg)] ^= 1 << rng.below(8);
        }
        77..=82 => {
            label = "bad-len";
            f = s.build(pad);
            match rng.below(4) {
                0 => {
                    // total length past the frame
                    let n = (f.len() - ETH_LEN + 1 + rng.below(100)) as u16;
                    f[16..18].copy_from_slice(&n.to_be_bytes());
                    refill_ip_checksum(&mut f);
                }
                1 => {
                    f[ETH_LEN] = 0x40 | rng.below(5) as u8; // IHL < 5
                    refill_ip_checksum(&mut f);
                }
                2 => {
                    f[ETH_LEN] = 0x65; // version 6
                    refill_ip_checksum(&mut f);
                }
                _ => {
                    // data offset < 5 (checksum made right again)
                    let t = ETH_LEN + 20 + s.ip_opts.len();
                    s.tcp_opts.clear();
                    let mut g = s.build(pad);
                    g[t + 12] = (rng.below(5) as u8) << 4;
                    fix_tcp_checksum(&mut g, t);
                    f = g;
                }
            }
        }
        83..=87 => {
            label = "arp/other";
            let ty = if rng.percent(70) {
                EthernetProtocol::Arp
            } else {
                EthernetProtocol::Ipv6
            };
            let n = 28 + rng.below(80);
            let body = rng.bytes(n);
            f = eth_frame([0xff; 6], [2, 0, 0, 0, 0, 9], ty, &body, pad);
        }
        88..=92 => {
            label = "udp";
            s.proto = 17;
            f = s.build(pad);
        }
        93..=96 => {
            label = "fragment";
            if rng.percent(50) {
                s.more_frags = true;
            } else {
                s.frag_off = 8 * (1 + rng.below(100) as u16);
            }
            f = s.build(pad);
        }
        _ => {
            label = "runt";
            let n = 1 + rng.below(13);
            f = rng.bytes(n);
        }
    }
    (f, label)
}

/// Recomputes the TCP checksum of the segment at frame offset `t` (RFC 9293
/// §3.1 pseudo-header), independently of smoltcp.
fn fix_tcp_checksum(f: &mut [u8], t: usize) {
    let tl = u16::from_be_bytes([f[16], f[17]]) as usize;
    let end = ETH_LEN + tl;
    f[t + 16] = 0;
    f[t + 17] = 0;
    let mut sum: u32 = 0;
    for i in (26..34).step_by(2) {
        sum += u16::from_be_bytes([f[i], f[i + 1]]) as u32;
    }
    sum += 6 + (end - t) as u32;
    let mut i = t;
    while i < end {
        let hi = f[i] as u32;
        let lo = if i + 1 < end { f[i + 1] as u32 } else { 0 };
        sum += hi << 8 | lo;
        i += 2;
    }
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    let c = !(sum as u16);
    f[t + 16..t + 18].copy_from_slice(&c.to_be_bytes());
}

#[derive(Default, Debug, PartialEq)]
struct Counts {
    bad_len: u64,
    bad_ip: u64,
    bad_tcp: u64,
    fast: u64,
    exc: u64,
}

/// Thousands of random frames of every kind. Every delivered payload and its
/// header fields, connection, MPA flags and CRC32c, every ACK request, every
/// exception frame (bytes, reason, connection) and every counter is checked
/// against the reference; so are `rcv_nxt` and `snd_una` at the end.
///
/// Pacing (the test's, not the RTL's): a new frame starts only while fewer
/// than `max_inflight` frames may still occupy rx_fifo (not yet classified,
/// or fast-path segments not yet fully out on `rx_pay`) — with a slow sink,
/// more than two 1514-byte frames would overflow rx_fifo's 512 beats, which
/// is rx_fifo's tested behaviour, not this test's subject — and while at most
/// 4 frames that may become exceptions are in flight or queued.
fn random_mix(seed: u64, frames: usize, ready_pct: usize, gap_pct: usize, max_inflight: u64) {
    let mut rx = Rx::new(seed);
    rx.ready_pct = ready_pct;
    rx.gap_pct = gap_pct;
    let mut rng = Rng::new(seed ^ 0xABCD);
    let mut model = conns(&mut rng);
    for (i, c) in model.clone().iter().enumerate() {
        rx.write_conn(i as u8, c);
    }
    let mut want_pay: Vec<Delivered> = Vec::new();
    let mut want_acks: Vec<(u8, u32)> = Vec::new();
    let mut want_exc: Vec<ExcFrame> = Vec::new();
    let mut want = Counts::default();
    let mut labels = std::collections::BTreeMap::new();
    for sent in 0..frames as u64 {
        let (f, label) = random_frame(&mut rng, &model);
        *labels.entry(label).or_insert(0) += 1;
        match classify(&f) {
            Class::BadLen => want.bad_len += 1,
            Class::BadIpCsum => want.bad_ip += 1,
            Class::BadTcpCsum => want.bad_tcp += 1,
            Class::ExcNoMatch => {
                want.exc += 1;
                want_exc.push(ExcFrame {
                    reason: R_NO_MATCH,
                    conn: CONN_NONE,
                    len: f.len(),
                    bytes: f.clone(),
                });
            }
            Class::Tcp(h, pay) => match split(&mut model, &h) {
                Ok(ci) => {
                    want.fast += 1;
                    if !pay.is_empty() {
                        want_acks.push((ci as u8, model[ci].rcv_nxt));
                    }
                    want_pay.push(Delivered {
                        hdr: h,
                        conn: ci as u8,
                        mpa: model[ci].mpa,
                        payload: pay,
                    });
                }
                Err((reason, conn)) => {
                    want.exc += 1;
                    want_exc.push(ExcFrame {
                        reason,
                        conn,
                        len: f.len(),
                        bytes: f.clone(),
                    });
                }
            },
        }
        loop {
            let unresolved = sent - rx.resolved();
            let undelivered = rx.m.get_cnt_rx_fast() - rx.delivered.len() as u64;
            if rx.idle()
                && unresolved + undelivered < max_inflight
                && unresolved + rx.m.get_exc_count() < 4
            {
                break;
            }
            rx.step();
        }
        rx.send(&f);
    }
    rx.drain(20_000);
    eprintln!("frame kinds: {labels:?}");
    eprintln!("expected: {want:?}, {} cycles", rx.cycle);

    let m = &rx.m;
    let got = Counts {
        bad_len: m.get_cnt_rx_bad_len(),
        bad_ip: m.get_cnt_rx_bad_ip_csum(),
        bad_tcp: m.get_cnt_rx_bad_tcp_csum(),
        fast: m.get_cnt_rx_fast(),
        exc: m.get_cnt_rx_exc(),
    };
    assert_eq!(
        m.get_cnt_rx_ok(),
        frames as u64,
        "rx_fifo delivered every frame"
    );
    assert_eq!(m.get_cnt_rx_exc_full(), 0);
    assert!(want.bad_len > 0 && want.bad_ip > 0 && want.bad_tcp > 0 && want.exc > 0);
    for (i, (g, w)) in rx.delivered.iter().zip(&want_pay).enumerate() {
        assert_eq!(g.hdr, w.hdr, "header of segment {i}");
        assert_eq!(g.conn, w.conn, "conn of segment {i}");
        assert_eq!(g.mpa, w.mpa, "mpa flags of segment {i}");
        assert_eq!(g.payload, w.payload, "payload of segment {i} ({:?})", w.hdr);
    }
    assert_eq!(rx.delivered.len(), want_pay.len(), "fast-path segments");
    let want_crcs: Vec<u32> = want_pay
        .iter()
        .map(|d| crc32c::crc32c(&d.payload))
        .collect();
    assert_eq!(rx.crcs, want_crcs, "CRC32c of the payloads");
    assert_eq!(rx.acks, want_acks, "ACK requests");
    for (i, (g, w)) in rx.excs.iter().zip(&want_exc).enumerate() {
        assert_eq!(
            (g.reason, g.conn, g.len),
            (w.reason, w.conn, w.len),
            "exception {i}"
        );
        assert_eq!(g.bytes, w.bytes, "bytes of exception {i}");
    }
    assert_eq!(rx.excs.len(), want_exc.len(), "exception frames");
    assert_eq!(got, want);
    for (i, c) in model.iter().enumerate() {
        let (used, mode, rcv_nxt, snd_una) = rx.read_conn(i as u8);
        assert_eq!(
            (used, mode, rcv_nxt, snd_una),
            (c.used, c.mode, c.rcv_nxt, c.snd_una),
            "conn {i}"
        );
    }
}

#[test]
fn random_frames_sink_always_ready() {
    random_mix(1, 3000, 100, 0, 4);
}

#[test]
fn random_frames_slow_sink_and_mac_gaps() {
    random_mix(2, 1500, 40, 20, 2);
}

/// Hand-made corner cases: the smallest pure ACK (54 bytes, padded to 60),
/// a 1-byte payload, payload ending at every offset of the last beat with
/// and without TCP options, and Ethernet padding bytes that must not count.
#[test]
fn payload_alignment_corners() {
    let mut rx = Rx::new(3);
    let mut rng = Rng::new(3);
    let mut model = conns(&mut rng);
    for (i, c) in model.clone().iter().enumerate() {
        rx.write_conn(i as u8, c);
    }
    let mut want = Vec::new();
    for opts in [0usize, 4, 8, 12] {
        for ipo in [0usize, 4] {
            for plen in 0..=20 {
                let c = &model[0];
                let mut s = seg_for(c);
                s.seq = c.rcv_nxt;
                s.ack = c.snd_una;
                s.tcp_opts = vec![1; opts];
                s.ip_opts = vec![1; ipo];
                s.payload = rng.bytes(plen);
                let f = s.build(0xEE);
                let Class::Tcp(h, pay) = classify(&f) else {
                    panic!("not tcp")
                };
                split(&mut model, &h).unwrap();
                want.push(pay);
                rx.send(&f);
            }
        }
    }
    rx.drain(5000);
    let got: Vec<Vec<u8>> = rx.delivered.iter().map(|d| d.payload.clone()).collect();
    assert_eq!(got, want);
}
