//! FPDUs that span TCP segments (issue 3) through `rnic_core` in Verilator.
//!
//! A peer's TCP may cut FPDUs anywhere (RFC 5044 §5 only recommends one
//! FPDU per segment; retransmission or a smaller path MTU resegments): the
//! TCP byte stream of RDMA Writes framed by `rnic_wire::model::TxStream` (its
//! MPA CRC and markers) is re-cut at seeded random octets — many cuts fall
//! inside the MPA header, the DDP/RDMAP header, the CRC, the markers and
//! the pad — and sent as `rnic_wire::model::net::data_frame`s, interleaved
//! with a second connection's traffic (whole or re-cut too). The expected
//! host image comes from `TptEntry::page_of`; the whole host memory is
//! checked (nothing outside the regions), and each connection's placed
//! records tile its messages in order.

mod rx_rig;
use rnic_wire::model::parse_frame;
use rx_rig::*;

/// Second connection (index, peer port).
const CONN2: u64 = 7;
const PORT2: u16 = 40002;

/// Adds a connection in RDMA mode at `idx` for `peer` and returns its
/// `TxStream` (same QP number and PD as the rig's, another connection).
fn add_conn(rig: &mut Rig, idx: u64, peer: &Endpoint, crc: bool, markers: bool) -> TxStream {
    let seq_start = rig.rng.next_u64() as u32;
    let mut mpa = 0u64;
    if crc {
        mpa |= MPA_CRC_RX as u64;
    }
    if markers {
        mpa |= MPA_MARKERS_RX as u64;
    }
    let local = rig.local;
    let c = &mut rig.core;
    c.set_ct_wr_valid(1);
    c.set_ct_wr_idx(idx);
    c.set_ct_wr_used(1);
    c.set_ct_wr_local_ip(u32::from_be_bytes(local.ip) as u64);
    c.set_ct_wr_peer_ip(u32::from_be_bytes(peer.ip) as u64);
    c.set_ct_wr_local_port(local.port as u64);
    c.set_ct_wr_peer_port(peer.port as u64);
    c.set_ct_wr_mode(MODE_RDMA);
    c.set_ct_wr_mpa(mpa);
    c.set_ct_wr_rcv_nxt(seq_start as u64);
    c.set_ct_wr_rcv_wnd(1 << 30);
    c.set_ct_wr_snd_una(1000);
    c.set_ct_wr_snd_nxt(1000);
    c.set_mpa_wr_valid(1);
    c.set_mpa_wr_idx(idx);
    c.set_mpa_wr_seq_start(seq_start as u64);
    c.set_qp_wr_valid(1);
    c.set_qp_wr_idx(idx);
    c.set_qp_wr_qpn(rig.qpn as u64 + idx);
    c.set_qp_wr_state(QpState::Rts as u64);
    c.set_qp_wr_pd(rig.pd as u64);
    c.tick();
    c.set_ct_wr_valid(0);
    c.set_mpa_wr_valid(0);
    c.set_qp_wr_valid(0);
    c.tick();
    TxStream::new(
        MpaSettings {
            crc,
            markers,
            seq_start,
        },
        1460,
    )
}

/// A cut length: often tiny (1–8 octets, so that cuts land on every octet
/// of headers, CRC and markers), sometimes a full segment.
fn cut_len(rng: &mut Rng) -> usize {
    match rng.below(4) {
        0 => 1 + rng.below(8) as usize,
        1 => 9 + rng.below(60) as usize,
        2 => 69 + rng.below(400) as usize,
        _ => 469 + rng.below(992) as usize,
    }
}

/// The TCP payload of `segs` (contiguous) re-cut at random octets:
/// `(seq, payload)` per new segment.
fn recut(rng: &mut Rng, segs: &[(u32, Vec<u8>)], whole: bool) -> Vec<(u32, Vec<u8>)> {
    if whole || segs.is_empty() {
        return segs.to_vec();
    }
    let seq0 = segs[0].0;
    let mut stream = Vec::new();
    for (s, p) in segs {
        assert_eq!(s.wrapping_sub(seq0) as usize, stream.len(), "contiguous");
        stream.extend_from_slice(p);
    }
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let n = cut_len(rng).min(stream.len() - at);
        out.push((seq0.wrapping_add(at as u32), stream[at..at + n].to_vec()));
        at += n;
    }
    out
}

struct Flow {
    tx: TxStream,
    peer: Endpoint,
    region: Region,
    msgs: Vec<(u64, usize)>,
    whole: bool,
}

/// Frames of one Write on `f`, re-cut unless `f.whole`; records the
/// expected octets.
fn write_frames(rig: &mut Rig, f: &mut Flow, len: u64) -> Vec<Vec<u8>> {
    let segs = write_segs(rig, f, len);
    let segs = recut(&mut rig.rng, &segs, f.whole);
    let local = rig.local;
    segs.iter()
        .map(|(seq, p)| frame(&f.peer, &local, *seq, p))
        .collect()
}

/// The segments `f.tx` frames for one Write of 1..=`len` octets at a random
/// offset of `f.region`; records the expected octets.
fn write_segs(rig: &mut Rig, f: &mut Flow, len: u64) -> Vec<(u32, Vec<u8>)> {
    let n = 1 + rig.rng.below(len) as usize;
    let to = f.region.entry.va + rig.rng.below(f.region.entry.length - n as u64 + 1);
    let data = rig.rng.bytes(n);
    let segs: Vec<(u32, Vec<u8>)> =
        f.tx.send(&Message::Write {
            stag: f.region.stag,
            to,
            data: &data,
        })
        .unwrap()
        .into_iter()
        .map(|s| (s.seq, s.payload))
        .collect();
    for (i, &b) in data.iter().enumerate() {
        let a = f.region.addr(to + i as u64);
        rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
    }
    f.msgs.push((to, n));
    segs
}

/// A data frame padded to the Ethernet minimum of 60 octets (without FCS)
/// as on the wire; the padding is not TCP payload (RFC 894).
fn frame(src: &Endpoint, dst: &Endpoint, seq: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = data_frame(src, dst, seq, 1000, payload);
    f.resize(f.len().max(60), 0);
    f
}

/// Two connections, Writes of 1 B … 6 KiB; connection A's stream re-cut at
/// random octets, B's whole or re-cut (`b_whole`); frames interleaved.
fn interleaved(seed: u64, crc: bool, markers: bool, b_whole: bool, writes: usize) {
    let mut rig = Rig::new(seed, crc, markers, 1460);
    let pd = rig.pd;
    let len = 24 * 1024;
    let va_a = 0x7f00_0000_0000 + rig.rng.below(PAGE);
    let ra = rig.region(5, 0x3C, pd, ACCESS_REMOTE_WRITE, va_a, len);
    let va_b = 0x3300_0000_0000 + rig.rng.below(PAGE);
    let rb = rig.region(6, 0x3D, pd, ACCESS_REMOTE_WRITE, va_b, len);
    let peer_b = Endpoint {
        mac: [2, 0, 0, 0, 0, 3],
        ip: [10, 0, 0, 3],
        port: PORT2,
    };
    let tx_b = add_conn(&mut rig, CONN2, &peer_b, crc, markers);
    let tx_a = std::mem::replace(
        &mut rig.tx,
        TxStream::new(
            MpaSettings {
                crc,
                markers,
                seq_start: 0,
            },
            1460,
        ),
    );
    let mut fa = Flow {
        tx: tx_a,
        peer: rig.peer,
        region: ra,
        msgs: Vec::new(),
        whole: false,
    };
    let mut fb = Flow {
        tx: tx_b,
        peer: peer_b,
        region: rb,
        msgs: Vec::new(),
        whole: b_whole,
    };
    let mut frames_a = 0;
    for _ in 0..writes {
        let mut qa = write_frames(&mut rig, &mut fa, 6000);
        let mut qb = write_frames(&mut rig, &mut fb, 3000);
        frames_a += qa.len();
        qa.reverse();
        qb.reverse();
        while !qa.is_empty() || !qb.is_empty() {
            let pick_a = qb.is_empty() || (!qa.is_empty() && rig.rng.below(2) == 0);
            let f = if pick_a { qa.pop() } else { qb.pop() }.unwrap();
            rig.send(vec![f]);
        }
        rig.run(2_000_000);
    }
    rig.check_memory();
    assert!(rig.terms.is_empty(), "{:?}", rig.terms);
    let (sa, sb) = (fa.region.stag, fb.region.stag);
    let pa: Vec<_> = rig.placed.iter().copied().filter(|p| p.0 == sa).collect();
    let pb: Vec<_> = rig.placed.iter().copied().filter(|p| p.0 == sb).collect();
    assert_eq!(pa.len() + pb.len(), rig.placed.len());
    check_placed(&pa, sa, &fa.msgs);
    check_placed(&pb, sb, &fb.msgs);
    let c = &rig.core;
    assert_eq!(c.get_cnt_mpa_span(), 0, "nothing refused");
    assert_eq!(c.get_cnt_mpa_err(), 0);
    assert_eq!(c.get_cnt_mpa_pass(), rig.placed.len() as u64);
    assert_eq!(c.get_cnt_rx_exc(), 0, "every segment on the fast path");
    eprintln!(
        "crc {crc} markers {markers}: {} segments of A, {} FPDUs placed, {} cycles",
        frames_a,
        rig.placed.len(),
        c.cycle()
    );
}

/// CRC on, markers off; B whole.
#[test]
fn split_fpdus_land_byte_exact_crc() {
    interleaved(301, true, false, true, 6);
}

/// CRC and markers on (cuts inside markers); both connections re-cut, so
/// both span slots are in use at once.
#[test]
fn split_fpdus_land_byte_exact_crc_markers_both_split() {
    interleaved(302, true, true, false, 6);
}

/// CRC off, markers on; CRC off and markers off.
#[test]
fn split_fpdus_land_byte_exact_no_crc() {
    interleaved(303, false, true, true, 4);
    interleaved(304, false, false, false, 4);
}

/// A spanning FPDU whose CRC is wrong: its first pieces are held, the bad
/// last piece places nothing of it and raises the MPA CRC Terminate (RFC
/// 5044 §8: layer LLP, MPA, code 2).
#[test]
fn split_fpdu_with_bad_crc_places_nothing() {
    let mut rig = Rig::new(305, true, false, 1460);
    let pd = rig.pd;
    let va = 0x1000_0000 + 0x321;
    let r = rig.region(9, 0x44, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    // a good split Write first
    let data = rig.rng.bytes(3000);
    let segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to: va,
            data: &data,
        })
        .unwrap();
    let segs: Vec<(u32, Vec<u8>)> = segs.into_iter().map(|s| (s.seq, s.payload)).collect();
    let segs = recut(&mut rig.rng, &segs, false);
    for (seq, p) in &segs {
        let f = frame(&rig.peer, &rig.local, *seq, p);
        rig.send(vec![f]);
    }
    for (i, &b) in data.iter().enumerate() {
        let a = r.addr(va + i as u64);
        rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
    }
    rig.run(1_000_000);
    check_placed(&rig.placed, r.stag, &[(va, 3000)]);
    // then one FPDU cut in three with its CRC (last 4 octets) flipped
    let bad = rig.rng.bytes(700);
    let mut segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to: va + 5000,
            data: &bad,
        })
        .unwrap();
    assert_eq!(segs.len(), 1);
    let s = segs.pop().unwrap();
    let mut p = s.payload.clone();
    let n = p.len();
    p[n - 1] ^= 0x5A;
    let cuts = [0, 100, 101, n - 2, n];
    for w in cuts.windows(2) {
        let f = frame(
            &rig.peer,
            &rig.local,
            s.seq.wrapping_add(w[0] as u32),
            &p[w[0]..w[1]],
        );
        rig.send(vec![f]);
    }
    rig.run(1_000_000);
    rig.check_memory();
    assert_eq!(rig.terms, vec![rig.term(MpaError::CrcError.into())]);
    check_placed(&rig.placed, r.stag, &[(va, 3000)]);
    assert_eq!(rig.core.get_cnt_mpa_err(), 1);
}

/// Measured cost of a split FPDU: one 1400-octet Write (one FPDU) sent
/// whole, then the same size cut in two segments in the middle; clocks
/// from the last MAC beat to the last DMA data beat. Asserts only that both
/// land and that the split one is not more than 2 x its beats + 40 slower.
#[test]
fn split_fpdu_latency() {
    let mut rig = Rig::new(306, true, false, 1460);
    let pd = rig.pd;
    let va = 0x2000_0000;
    let r = rig.region(4, 0x21, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let mut lat = Vec::new();
    for (k, cut) in [None, Some(700usize)].into_iter().enumerate() {
        let to = va + 2000 * k as u64;
        let data = rig.rng.bytes(1400);
        let mut segs = rig
            .tx
            .send(&Message::Write {
                stag: r.stag,
                to,
                data: &data,
            })
            .unwrap();
        assert_eq!(segs.len(), 1);
        let s = segs.pop().unwrap();
        let cuts = match cut {
            None => vec![0, s.payload.len()],
            Some(c) => vec![0, c, s.payload.len()],
        };
        for w in cuts.windows(2) {
            let f = frame(
                &rig.peer,
                &rig.local,
                s.seq.wrapping_add(w[0] as u32),
                &s.payload[w[0]..w[1]],
            );
            rig.send(vec![f]);
        }
        for (i, &b) in data.iter().enumerate() {
            let a = r.addr(to + i as u64);
            rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
        }
        rig.run(1_000_000);
        lat.push(rig.last_dma - rig.last_mac);
    }
    rig.check_memory();
    assert!(rig.terms.is_empty());
    eprintln!(
        "1400-octet Write, last MAC beat -> last DMA beat: whole {} clocks, split in two {} clocks",
        lat[0], lat[1]
    );
    assert!(lat[1] <= lat[0] + 2 * 1400 / 8 + 40, "{lat:?}");
}

/// Three connections each leave an FPDU open at once with two span slots:
/// the third's segment is refused before anything of it is taken (no
/// Terminate: the stream is healthy, RFC 5041 §7.2), its RCV.NXT goes back
/// to the segment's SEG.SEQ so its continuation is out of order, and
/// nothing of it is written; the two others land byte-exact. When its peer
/// sends the FPDU again (TCP's retransmission), it lands too.
#[test]
fn third_open_fpdu_waits_for_a_slot_unacknowledged() {
    let mut rig = Rig::new(307, true, false, 1460);
    let pd = rig.pd;
    let mut flows = Vec::new();
    let mut tx_a = Some(std::mem::replace(
        &mut rig.tx,
        TxStream::new(
            MpaSettings {
                crc: true,
                markers: false,
                seq_start: 0,
            },
            1460,
        ),
    ));
    for (i, (idx, port)) in [(CONN, 0u16), (CONN2, PORT2), (9, 40009)]
        .into_iter()
        .enumerate()
    {
        let va = 0x4400_0000 + 0x10_0000 * i as u64;
        let region = rig.region(
            20 + i as u32,
            0x10 + i as u8,
            pd,
            ACCESS_REMOTE_WRITE,
            va,
            PAGE,
        );
        let (tx, peer) = if idx == CONN {
            (tx_a.take().unwrap(), rig.peer)
        } else {
            let peer = Endpoint {
                mac: [2, 0, 0, 0, 0, 3 + i as u8],
                ip: [10, 0, 0, 3 + i as u8],
                port,
            };
            (add_conn(&mut rig, idx, &peer, true, false), peer)
        };
        flows.push(Flow {
            tx,
            peer,
            region,
            msgs: Vec::new(),
            whole: false,
        });
    }
    // one 1000-octet Write per connection, each cut in two at octet 500
    let mut halves = Vec::new();
    for f in flows.iter_mut() {
        let data = rig.rng.bytes(1000);
        let to = f.region.entry.va;
        let s =
            f.tx.send(&Message::Write {
                stag: f.region.stag,
                to,
                data: &data,
            })
            .unwrap()
            .pop()
            .unwrap();
        let local = rig.local;
        halves.push((
            frame(&f.peer, &local, s.seq, &s.payload[..500]),
            frame(&f.peer, &local, s.seq.wrapping_add(500), &s.payload[500..]),
        ));
        f.msgs.push((to, data.len()));
        for (i, &b) in data.iter().enumerate() {
            let a = f.region.addr(to + i as u64);
            rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
        }
    }
    for h in &halves {
        rig.send(vec![h.0.clone()]);
    }
    for h in &halves {
        rig.send(vec![h.1.clone()]);
    }
    rig.run(1_000_000);
    assert!(rig.terms.is_empty(), "no Terminate: {:?}", rig.terms);
    assert_eq!(
        rig.core.get_cnt_rx_no_slot(),
        1,
        "the third's first half refused"
    );
    assert_eq!(rig.core.get_cnt_mpa_span(), 0, "no piece found no slot");
    assert!(rig.placed.iter().all(|p| p.0 != flows[2].region.stag));
    // RCV.NXT of the third is back at its segment's start.
    let seq3 = rnic_wire::model::parse_frame(&halves[2].0).unwrap().seq;
    rig.core.set_ct_rd_idx(9);
    rig.core.tick();
    rig.core.tick();
    assert_eq!(rig.core.get_ct_rd_rcv_nxt() as u32, seq3, "RCV.NXT rewound");
    // The peer's retransmission of both halves.
    rig.send(vec![halves[2].0.clone(), halves[2].1.clone()]);
    rig.run(1_000_000);
    assert!(rig.terms.is_empty(), "no Terminate: {:?}", rig.terms);
    for f in &flows {
        let p: Vec<_> = rig
            .placed
            .iter()
            .copied()
            .filter(|p| p.0 == f.region.stag)
            .collect();
        check_placed(&p, f.region.stag, &f.msgs);
    }
    rig.check_memory();
}

/// One peer's TCP sender for [`sixteen_splitting_connections_under_loss`]:
/// its whole byte stream, cut into segments at random octets as it goes,
/// go-back-N from the last ACK after `RTO` clocks without progress.
struct Sender {
    flow: Flow,
    seq0: u32,
    stream: Vec<u8>,
    una: usize,
    nxt: usize,
    /// The highest octet offset ever sent.
    hi: usize,
    progress: u64,
    resent: usize,
}

/// No stream is terminated for the device's own lack of resources (RFC
/// 5041 §7.2 reserves Local Catastrophic for real errors): sixteen
/// connections at once, each a sender that cuts its stream at random
/// octets (FPDUs span segments on every connection, against two span
/// slots) and loses 1 % of its frames. The device refuses segments it has
/// no slot for, acknowledges only what it took (the senders trust its pure
/// ACKs, read off `mac_tx`, and never resend below them), and every Write
/// lands byte-exact with no Terminate. Before the admission check the
/// third connection to split an FPDU was terminated.
#[test]
fn sixteen_splitting_connections_under_loss() {
    const CONNS: usize = 16;
    const WINDOW: usize = 6 * 1024;
    const RTO: u64 = 30_000;
    let mut rig = Rig::new(311, true, false, 1460);
    let pd = rig.pd;
    let local = rig.local;
    let mut senders = Vec::new();
    for i in 0..CONNS {
        let peer = Endpoint {
            mac: [2, 0, 0, 0, 1, i as u8],
            ip: [10, 0, 1, i as u8],
            port: 41000 + i as u16,
        };
        let tx = add_conn(&mut rig, 8 + i as u64, &peer, true, false);
        let va = 0x5500_0000_0000 + ((i as u64) << 24) + rig.rng.below(PAGE);
        let region = rig.region(
            20 + i as u32,
            0x50 + i as u8,
            pd,
            ACCESS_REMOTE_WRITE,
            va,
            8192,
        );
        let mut flow = Flow {
            tx,
            peer,
            region,
            msgs: Vec::new(),
            whole: false,
        };
        let mut stream = Vec::new();
        let mut seq0 = None;
        for _ in 0..5 {
            for (seq, p) in write_segs(&mut rig, &mut flow, 4000) {
                let s0 = *seq0.get_or_insert(seq);
                assert_eq!(seq.wrapping_sub(s0) as usize, stream.len(), "contiguous");
                stream.extend_from_slice(&p);
            }
        }
        senders.push(Sender {
            flow,
            seq0: seq0.unwrap(),
            stream,
            una: 0,
            nxt: 0,
            hi: 0,
            progress: 0,
            resent: 0,
        });
    }
    let mut mac_tx = MacTxPort::new();
    let (mut lost, mut sent) = (0, 0);
    let start = rig.core.cycle();
    loop {
        let now = rig.core.cycle();
        assert!(now - start < 20_000_000, "no progress: hung");
        if senders.iter().all(|s| s.una == s.stream.len()) {
            break;
        }
        // Go-back-N after a quiet RTO.
        for s in senders.iter_mut() {
            if s.una < s.nxt && now - s.progress > RTO {
                s.nxt = s.una;
                s.progress = now;
                s.resent += 1;
            }
        }
        if rig.mac.pending() < 2 {
            let ready: Vec<usize> = (0..CONNS)
                .filter(|&i| {
                    let s = &senders[i];
                    s.nxt < s.stream.len() && s.nxt - s.una < WINDOW
                })
                .collect();
            if !ready.is_empty() {
                let i = ready[rig.rng.below(ready.len() as u64) as usize];
                let n = cut_len(&mut rig.rng);
                let s = &mut senders[i];
                if s.una == s.nxt {
                    s.progress = now;
                }
                let n = n.min(s.stream.len() - s.nxt);
                let seq = s.seq0.wrapping_add(s.nxt as u32);
                let f = frame(&s.flow.peer, &local, seq, &s.stream[s.nxt..s.nxt + n]);
                s.nxt += n;
                s.hi = s.hi.max(s.nxt);
                sent += 1;
                if rig.rng.below(100) == 0 {
                    lost += 1;
                } else {
                    rig.mac.push(f, false);
                }
            }
        }
        rig.mac.drive(&mut rig.core);
        mac_tx.drive_ready(&mut rig.core.0, true);
        rig.dma.drive(&mut rig.core, &mut rig.mem);
        rig.core.eval();
        rig.pop_records();
        // Out-of-order segments (behind a loss or a refusal) go to the
        // firmware path; there is no firmware here, so they are dropped.
        let ev = rig.core.get_exc_valid() != 0;
        rig.core.set_exc_pop(ev as u64);
        rig.core.eval();
        if let Some(f) = mac_tx.sample(&rig.core.0) {
            let v = parse_frame(&f).expect("the device's frame parses");
            let s = senders
                .iter_mut()
                .find(|s| s.flow.peer.port == v.tuple.dst_port)
                .expect("a connection's peer");
            let acked = v.ack.expect("ACK set").wrapping_sub(s.seq0) as usize;
            assert!(
                acked <= s.hi,
                "port {}: ACK beyond what was sent",
                s.flow.peer.port
            );
            if acked > s.una {
                s.una = acked;
                s.progress = now;
                s.nxt = s.nxt.max(acked);
            }
        }
        rig.dma.sample(&rig.core, &mut rig.mem);
        rig.core.tick();
    }
    rig.run(2_000_000);
    assert!(rig.terms.is_empty(), "no Terminate: {:?}", rig.terms);
    rig.check_memory();
    for s in &senders {
        let st = s.flow.region.stag;
        let p: Vec<_> = rig.placed.iter().copied().filter(|p| p.0 == st).collect();
        check_placed(&p, st, &s.flow.msgs);
    }
    let c = &rig.core;
    let refused = c.get_cnt_rx_no_slot();
    eprintln!(
        "{CONNS} connections: {sent} frames sent, {lost} lost, {refused} refused for want of a \
         span slot, {} timeouts, {} cycles",
        senders.iter().map(|s| s.resent).sum::<usize>(),
        c.cycle() - start
    );
    assert!(lost > 0, "the 1 % loss happened");
    assert!(refused > 0, "segments were refused for want of a slot");
    assert_eq!(c.get_cnt_mpa_span(), 0, "no piece found no slot");
    assert_eq!(c.get_ulp_span_used(), 0, "every slot free at the end");
}
