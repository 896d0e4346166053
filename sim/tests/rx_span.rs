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
    let segs = recut(&mut rig.rng, &segs, f.whole);
    for (i, &b) in data.iter().enumerate() {
        let a = f.region.addr(to + i as u64);
        rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
    }
    f.msgs.push((to, n));
    let local = rig.local;
    segs.iter()
        .map(|(seq, p)| frame(&f.peer, &local, *seq, p))
        .collect()
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
/// the third is refused with a Terminate DDP Local Catastrophic (RFC 5041
/// §7.2, layer 1 / type 0 / code 0) on its connection and QP, its
/// continuation is dropped and counted, nothing of it is written; the two
/// others complete and land byte-exact.
#[test]
fn third_open_fpdu_is_refused_with_a_terminate() {
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
        if f.peer.port != 40009 {
            for (i, &b) in data.iter().enumerate() {
                let a = f.region.addr(to + i as u64);
                rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
            }
        }
    }
    for h in &halves {
        rig.send(vec![h.0.clone()]);
    }
    for h in &halves {
        rig.send(vec![h.1.clone()]);
    }
    rig.run(1_000_000);
    rig.check_memory();
    assert_eq!(
        rig.terms,
        vec![Term {
            cause: TerminateCause::Ddp(DdpError::LocalCatastrophic).to_bits(),
            conn: 9,
            qpn: rig.qpn + 9,
        }]
    );
    for f in &flows[..2] {
        let p: Vec<_> = rig
            .placed
            .iter()
            .copied()
            .filter(|p| p.0 == f.region.stag)
            .collect();
        check_placed(&p, f.region.stag, &f.msgs);
    }
    assert!(rig.placed.iter().all(|p| p.0 != flows[2].region.stag));
    assert_eq!(
        rig.core.get_cnt_mpa_span(),
        2,
        "refused first piece and its continuation"
    );
}
