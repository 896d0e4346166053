//! The reference model (`rnic_wire::model`) against itself and against
//! independent checks: TX → RX round trips of RDMA Write, Send and Read over
//! every MPA setting (CRC on/off × markers on/off), EMSS 1448 and 8948,
//! sequence numbers across the 2^32 wrap and random re-chunking of the TCP
//! stream; every TX segment checked on its own (≤ EMSS, markers stripped by
//! a naive loop, CRC by the `crc32c` crate); every TPT and protocol
//! violation gives its Terminate cause and changes no byte anywhere; random
//! input never panics.

use proptest::prelude::*;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use rnic_wire::ddp::DdpSegment;
use rnic_wire::model::*;
use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};
use rnic_wire::terminate::*;

/// xorshift64*, seeded with the state as given: a small deterministic
/// generator, so failures replay.
type Rng = rnic_wire::rng::Rng<rnic_wire::rng::XorShift64Star>;

const PD: u32 = 7;
/// STags: index << 8 | key.
const WRITE_STAG: u32 = 0x0001_2305;
const READ_STAG: u32 = 0x0002_3406;
const SINK_STAG: u32 = 0x0003_4507;
const OTHER_PD_STAG: u32 = 0x0004_5608;
const LOCAL_ONLY_STAG: u32 = 0x0005_6709;
const VA: u64 = 0x7f00_0000_1000;

fn settings(crc: bool, markers: bool, seq_start: u32) -> MpaSettings {
    MpaSettings {
        crc,
        markers,
        seq_start,
    }
}

/// Checks one TX segment without the model's MPA code: length ≤ EMSS,
/// markers found by walking the octets (each pointing back to the segment's
/// start, since a segment is one FPDU), pad zero, CRC by `crc32c`. Returns
/// the ULPDU.
fn check_segment(seg: &Segment, mpa: &MpaSettings, emss: u16) -> Vec<u8> {
    let p = &seg.payload;
    assert!(
        p.len() <= emss as usize,
        "segment {} > EMSS {emss}",
        p.len()
    );
    assert_eq!(p.len() % 4, 0);
    let mut plain = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        let s = seg.seq.wrapping_add(i as u32);
        if mpa.markers && s.wrapping_sub(mpa.seq_start).is_multiple_of(512) {
            let m = &p[i..i + 4];
            assert_eq!(&m[..2], &[0, 0], "marker reserved");
            let ptr = u16::from_be_bytes([m[2], m[3]]) as u32;
            assert_eq!(ptr, s.wrapping_sub(seg.seq), "FPDUPTR at {s}");
            i += 4;
        } else {
            plain.push(p[i]);
            i += 1;
        }
    }
    let ulen = u16::from_be_bytes([plain[0], plain[1]]) as usize;
    let pad = (4 - (2 + ulen) % 4) % 4;
    assert_eq!(plain.len(), 2 + ulen + pad + 4);
    assert!(plain[2 + ulen..2 + ulen + pad].iter().all(|&b| b == 0));
    let n = p.len();
    let field = &p[n - 4..];
    if mpa.crc {
        assert_eq!(field, crc32c::crc32c(&p[..n - 4]).to_le_bytes());
    } else {
        assert_eq!(field, [0, 0, 0, 0]);
    }
    let ulpdu = plain[2..2 + ulen].to_vec();
    assert!(ulpdu.len() <= rnic_wire::mpa::mulpdu(emss, mpa.markers) as usize);
    ulpdu
}

/// Checks the segments of one message: contiguous from `seq`, each valid,
/// DDP/RDMAP parse, L only on the last. Returns the end sequence number.
fn check_message(segs: &[Segment], mpa: &MpaSettings, emss: u16, mut seq: u32) -> u32 {
    assert!(!segs.is_empty());
    for (i, seg) in segs.iter().enumerate() {
        assert_eq!(seg.seq, seq);
        let ulpdu = check_segment(seg, mpa, emss);
        let repr = RdmapRepr::from_bytes(&ulpdu).expect("segment parses");
        let last = repr.ddp_repr().last();
        // A Write with Immediate ends with its Immediate Data: L on the
        // last segment of each message.
        if i + 1 == segs.len() {
            assert!(last);
        }
        seq = seq.wrapping_add(seg.payload.len() as u32);
    }
    seq
}

/// The segments as one TCP byte stream, fed to `rx` in random chunks.
fn feed(rx: &mut Receiver, rng: &mut Rng, segs: &[Segment]) -> Vec<Event> {
    let Some(first) = segs.first() else {
        return Vec::new();
    };
    let stream: Vec<u8> = segs.iter().flat_map(|s| s.payload.clone()).collect();
    let mut events = Vec::new();
    let mut at = 0usize;
    while at < stream.len() {
        let n = match rng.below(4) {
            0 => 1 + rng.below(8) as usize,
            1 => 1 + rng.below(600) as usize,
            _ => 1 + rng.below(12000) as usize,
        }
        .min(stream.len() - at);
        let seq = first.seq.wrapping_add(at as u32);
        events.extend(rx.receive(seq, &stream[at..at + n]).unwrap());
        if rx.is_dead() {
            return events;
        }
        // Sometimes repeat what was sent (a retransmission): ignored.
        if rng.below(8) == 0 {
            assert!(rx.receive(seq, &stream[at..at + n]).unwrap().is_empty());
        }
        at += n;
    }
    assert_eq!(rx.pending_len(), 0);
    events
}

fn no_terminate(events: &[Event]) {
    for e in events {
        assert!(
            !matches!(e, Event::SendTerminate(_)),
            "unexpected Terminate: {e:?}"
        );
    }
}

struct Case {
    crc: bool,
    markers: bool,
    emss: u16,
    seq_a: u32,
    seq_b: u32,
    seed: u64,
    sizes: Vec<usize>,
}

/// A → B: Writes of each size at random offsets, a Send of each size
/// (up to 64 KiB) into posted buffers, and a Read by A of each size from
/// B, answered B → A; byte-exact at the end.
fn round_trip(c: &Case) -> usize {
    let mut rng = Rng::from_state(c.seed);
    let max = c.sizes.iter().copied().max().unwrap_or(0);
    let region_len = max + 3 * 4096 + 123;
    let a_mpa = settings(c.crc, c.markers, c.seq_a);
    let b_mpa = settings(c.crc, !c.markers, c.seq_b); // markers differ per direction
    let mut a_tx = TxStream::new(a_mpa, c.emss);
    let mut b_tx = TxStream::new(b_mpa, c.emss);
    let mut b_tpt = Tpt::new();
    let write_init = rng.bytes(region_len);
    let read_src = rng.bytes(region_len);
    b_tpt.register(
        WRITE_STAG,
        PD,
        ACCESS_REMOTE_WRITE | ACCESS_LOCAL_WRITE,
        VA,
        write_init.clone(),
    );
    b_tpt.register(READ_STAG, PD, ACCESS_REMOTE_READ, VA, read_src.clone());
    let mut a_tpt = Tpt::new();
    a_tpt.register(SINK_STAG, PD, ACCESS_LOCAL_WRITE, VA, vec![0; region_len]);
    let cfg = |mpa| RxConfig {
        mpa,
        pd: PD,
        ird: 4,
    };
    let mut b_rx = Receiver::new(cfg(a_mpa), b_tpt);
    let mut a_rx = Receiver::new(cfg(b_mpa), a_tpt);
    let mut expect_b = write_init;
    let mut expect_a = vec![0u8; region_len];
    let mut segments = 0;
    let (mut a_seq, mut b_seq) = (c.seq_a, c.seq_b);
    let mut send_msn = 0u32;

    for (i, &len) in c.sizes.iter().enumerate() {
        // RDMA Write.
        let off = rng.below((region_len - len + 1) as u64) as usize;
        let data = rng.bytes(len);
        let to = VA + off as u64;
        let segs = a_tx
            .send(&Message::Write {
                stag: WRITE_STAG,
                to,
                data: &data,
            })
            .unwrap();
        let room = a_tx.mulpdu() as usize - 14;
        assert_eq!(segs.len(), len.div_ceil(room).max(1));
        a_seq = check_message(&segs, &a_mpa, c.emss, a_seq);
        segments += segs.len();
        let ev = feed(&mut b_rx, &mut rng, &segs);
        no_terminate(&ev);
        expect_b[off..off + len].copy_from_slice(&data);
        let placed: u64 = ev
            .iter()
            .map(|e| match e {
                Event::Placed { len, .. } => *len as u64,
                _ => 0,
            })
            .sum();
        assert_eq!(placed, len as u64);
        assert_eq!(
            ev.last(),
            Some(&Event::WriteCompleted {
                stag: WRITE_STAG,
                len: len as u64
            })
        );

        // Send (sizes up to 64 KiB), sometimes with SE.
        if len <= 65536 {
            let wr_id = 100 + i as u64;
            send_msn += 1;
            b_rx.post_recv(wr_id, len + rng.below(100) as usize);
            let data = rng.bytes(len);
            let solicited = rng.below(2) == 0;
            let segs = a_tx
                .send(&Message::Send {
                    data: &data,
                    solicited,
                    invalidate: None,
                })
                .unwrap();
            a_seq = check_message(&segs, &a_mpa, c.emss, a_seq);
            segments += segs.len();
            let ev = feed(&mut b_rx, &mut rng, &segs);
            assert_eq!(
                ev,
                vec![Event::RecvCompleted {
                    wr_id,
                    msn: send_msn,
                    len: len as u32,
                    solicited,
                    invalidated: None
                }]
            );
            assert_eq!(&b_rx.completed_recv(wr_id).unwrap().bytes[..len], &data[..]);
        }

        // RDMA Read by A of B's READ region.
        let off = rng.below((region_len - len + 1) as u64) as usize;
        let req = ReadRequestRepr {
            sink_stag: SINK_STAG,
            sink_to: VA + off as u64,
            size: len as u32,
            src_stag: READ_STAG,
            src_to: VA + off as u64,
        };
        a_rx.expect_read_response(req);
        let segs = a_tx.send(&Message::ReadRequest(req)).unwrap();
        assert_eq!(segs.len(), 1);
        a_seq = check_message(&segs, &a_mpa, c.emss, a_seq);
        let ev = feed(&mut b_rx, &mut rng, &segs);
        assert_eq!(ev, vec![Event::ReadRequest(req)]);
        let data = b_rx
            .tpt()
            .read(req.src_stag, PD, req.src_to, req.size as u64)
            .unwrap()
            .to_vec();
        let segs = b_tx
            .send(&Message::ReadResponse {
                stag: req.sink_stag,
                to: req.sink_to,
                data: &data,
            })
            .unwrap();
        b_rx.read_response_sent();
        b_seq = check_message(&segs, &b_mpa, c.emss, b_seq);
        segments += segs.len() + 1;
        let ev = feed(&mut a_rx, &mut rng, &segs);
        no_terminate(&ev);
        assert_eq!(
            ev.last(),
            Some(&Event::ReadResponseCompleted {
                stag: SINK_STAG,
                len: len as u64,
                request: req
            })
        );
        expect_a[off..off + len].copy_from_slice(&read_src[off..off + len]);
    }
    assert_eq!(a_tx.seq(), a_seq);
    assert_eq!(b_tx.seq(), b_seq);
    assert!(b_rx.tpt().region(WRITE_STAG).unwrap().bytes == expect_b);
    assert!(a_rx.tpt().region(SINK_STAG).unwrap().bytes == expect_a);
    segments
}

#[test]
fn round_trips_all_settings() {
    let mut total = 0;
    let mut seed = 1u64;
    for crc in [false, true] {
        for markers in [false, true] {
            for emss in [1448u16, 8948] {
                for (seq_a, seq_b) in [(u32::MAX - 2999, u32::MAX - 700), (1000, 0x8000_0001)] {
                    seed += 1;
                    let mut rng = Rng::from_state(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    let mut sizes = vec![0, 1, 2, 3, 4, 5, 13, 1429, 1430, 1431, 4096 + 7];
                    sizes.push(1 + rng.below(70_000) as usize);
                    sizes.push(1 + rng.below(200_000) as usize);
                    total += round_trip(&Case {
                        crc,
                        markers,
                        emss,
                        seq_a,
                        seq_b,
                        seed,
                        sizes,
                    });
                }
            }
        }
    }
    println!("{total} segments checked");
}

#[test]
fn one_mebibyte() {
    let mut total = 0;
    for (crc, markers, emss) in [(true, false, 1448u16), (true, true, 8948)] {
        total += round_trip(&Case {
            crc,
            markers,
            emss,
            seq_a: u32::MAX - 100_000,
            seq_b: 77,
            seed: 42,
            sizes: vec![1 << 20],
        });
    }
    println!("{total} segments checked");
}

#[test]
fn zero_length_messages_are_one_segment() {
    for markers in [false, true] {
        let mpa = settings(true, markers, 5);
        let mut tx = TxStream::new(mpa, 1448);
        let w = tx
            .send(&Message::Write {
                stag: 1,
                to: 0,
                data: &[],
            })
            .unwrap();
        let s = tx
            .send(&Message::Send {
                data: &[],
                solicited: false,
                invalidate: None,
            })
            .unwrap();
        let r = tx
            .send(&Message::ReadRequest(ReadRequestRepr::default()))
            .unwrap();
        for segs in [&w, &s, &r] {
            assert_eq!(segs.len(), 1);
            check_segment(&segs[0], &mpa, 1448);
        }
        // The zero-length Write is the siw RTR FPDU (STag 1, TO 0), with a
        // leading marker when markers are on.
        let rtr = [
            0x00, 0x0e, 0xc1, 0x40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xeb, 0xd3, 0x4c, 0x5f,
        ];
        if !markers {
            assert_eq!(w[0].payload, rtr);
        } else {
            assert_eq!(&w[0].payload[..4], &[0, 0, 0, 0]);
            assert_eq!(&w[0].payload[4..20], &rtr[..16]);
        }
    }
}

#[test]
fn msns_per_queue_and_terminate() {
    let mpa = settings(false, false, 0);
    let mut tx = TxStream::new(mpa, 1448);
    let mut rx = Receiver::new(
        RxConfig {
            mpa,
            pd: PD,
            ird: 8,
        },
        tpt(),
    );
    let mut all = Vec::new();
    for i in 0..3u32 {
        rx.post_recv(i as u64, 16);
        all.extend(
            tx.send(&Message::Send {
                data: b"x",
                solicited: false,
                invalidate: None,
            })
            .unwrap(),
        );
        all.extend(
            tx.send(&Message::ReadRequest(ReadRequestRepr {
                src_stag: READ_STAG,
                src_to: VA,
                size: 1,
                ..Default::default()
            }))
            .unwrap(),
        );
    }
    rx.post_recv(9, 8);
    all.extend(
        tx.send(&Message::WriteWithImmediate {
            stag: WRITE_STAG,
            to: VA,
            data: b"imm",
            immediate: *b"12345678",
            solicited: true,
        })
        .unwrap(),
    );
    let term = TerminateRepr::new(TerminateCause::Mpa(MpaError::ConnectionLost));
    all.extend(tx.send(&Message::Terminate(term)).unwrap());
    let mut msns = Vec::new();
    for s in &all {
        let u = check_segment(s, &mpa, 1448);
        if let Ok(DdpSegment::Untagged(d)) = DdpSegment::new_checked(&u[..]) {
            msns.push((d.queue_number(), d.msn()));
        }
    }
    assert_eq!(
        msns,
        [
            (0, 1),
            (1, 1),
            (0, 2),
            (1, 2),
            (0, 3),
            (1, 3),
            (0, 4),
            (2, 1)
        ]
    );
    let mut rng = Rng::from_state(5);
    let ev = feed(&mut rx, &mut rng, &all);
    assert_eq!(ev.len(), 3 + 3 + 3 + 1);
    assert_eq!(
        ev[8],
        Event::ImmediateReceived {
            wr_id: 9,
            msn: 4,
            data: *b"12345678",
            solicited: true
        }
    );
    assert_eq!(ev[9], Event::TerminateReceived(term));
    assert!(rx.is_dead());
    assert_eq!(rx.receive(rx.next_seq(), &[0; 8]), Err(RxError::Dead));
}

/// B's TPT for the violation tests.
fn tpt() -> Tpt {
    let mut t = Tpt::new();
    t.register(
        WRITE_STAG,
        PD,
        ACCESS_REMOTE_WRITE | ACCESS_LOCAL_WRITE,
        VA,
        vec![0x11; 3 * 4096],
    );
    t.register(READ_STAG, PD, ACCESS_REMOTE_READ, VA, vec![0x22; 4096]);
    t.register(
        OTHER_PD_STAG,
        PD + 1,
        ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ,
        VA,
        vec![0x33; 4096],
    );
    t.register(
        LOCAL_ONLY_STAG,
        PD,
        ACCESS_LOCAL_WRITE,
        VA,
        vec![0x44; 4096],
    );
    t
}

/// Snapshot of every octet the receiver may write.
fn memory(rx: &Receiver) -> Vec<Vec<u8>> {
    let mut m: Vec<Vec<u8>> = rx.tpt().regions().map(|(_, r)| r.bytes.clone()).collect();
    m.extend(rx.posted().map(|b| b.bytes.clone()));
    m.extend(rx.completed().iter().map(|b| b.bytes.clone()));
    m
}

/// Emits one DDP segment as an FPDU at `seq`.
fn raw(mpa: &MpaSettings, seq: u32, ulpdu: &[u8]) -> Segment {
    Segment {
        seq,
        payload: frame_ulpdu(mpa, seq, ulpdu).unwrap(),
    }
}

fn ulpdu(repr: &RdmapRepr) -> Vec<u8> {
    let mut u = vec![0; repr.buffer_len()];
    repr.emit(&mut u).unwrap();
    u
}

/// Feeds `segs` after `setup` into a fresh receiver (ird 1, one 64-octet
/// buffer posted unless `no_buffer`), and checks that the last event is
/// the Terminate for `cause`, that no octet changed anywhere, and that the
/// stream is dead. Returns the Terminate.
fn violation(
    markers: bool,
    no_buffer: bool,
    build: impl FnOnce(&mut TxStream, &MpaSettings) -> Vec<Segment>,
    cause: TerminateCause,
) -> TerminateRepr {
    let mpa = settings(true, markers, 0xffff_ff00);
    let mut tx = TxStream::new(mpa, 1448);
    let mut rx = Receiver::new(
        RxConfig {
            mpa,
            pd: PD,
            ird: 1,
        },
        tpt(),
    );
    if !no_buffer {
        rx.post_recv(1, 64);
    }
    let segs = build(&mut tx, &mpa);
    let before = memory(&rx);
    let ev = feed(&mut rx, &mut Rng::from_state(3), &segs);
    let Some(Event::SendTerminate(t)) = ev.last() else {
        panic!("no Terminate for {cause:?}: {ev:?}");
    };
    assert_eq!(t.cause, cause);
    assert_eq!(memory(&rx), before, "octets changed for {cause:?}");
    assert!(rx.is_dead());
    assert_eq!(rx.receive(rx.next_seq(), &[0; 4]), Err(RxError::Dead));
    // The Terminate itself goes back through the model: it round-trips.
    let back = TxStream::new(mpa, 1448)
        .send(&Message::Terminate(*t))
        .unwrap();
    let u = check_segment(&back[0], &mpa, 1448);
    assert!(
        matches!(RdmapRepr::from_bytes(&u), Ok(RdmapRepr::Terminate { terminate, .. }) if terminate == *t)
    );
    *t
}

fn write(
    stag: u32,
    to: u64,
    len: usize,
) -> impl FnOnce(&mut TxStream, &MpaSettings) -> Vec<Segment> {
    move |tx, _| {
        tx.send(&Message::Write {
            stag,
            to,
            data: &vec![0xee; len],
        })
        .unwrap()
    }
}

/// A segment built by hand (for what the TX model refuses to send),
/// optionally with its ULPDU octets changed by `patch`.
fn hand(
    repr: RdmapRepr<'static>,
    patch: impl FnOnce(&mut Vec<u8>),
) -> impl FnOnce(&mut TxStream, &MpaSettings) -> Vec<Segment> {
    move |tx, mpa| {
        let mut u = ulpdu(&repr);
        patch(&mut u);
        vec![raw(mpa, tx.seq(), &u)]
    }
}

fn send(msn: u32, mo: u32, len: usize) -> RdmapRepr<'static> {
    RdmapRepr::Send {
        solicited: false,
        invalidate_stag: None,
        last: true,
        msn,
        mo,
        payload: &[0xee; 100][..len],
    }
}

#[test]
fn tpt_and_protocol_violations() {
    use RemoteOperationError as Op;
    use RemoteProtectionError as Prot;
    use TaggedBufferError as Tg;
    use UntaggedBufferError as Ut;
    for markers in [false, true] {
        let m = markers;
        let c = |e: TaggedBufferError| TerminateCause::from(e);
        violation(m, false, write(0x0009_9905, VA, 8), c(Tg::InvalidStag));
        violation(m, false, write(WRITE_STAG ^ 1, VA, 8), c(Tg::InvalidStag));
        violation(
            m,
            false,
            write(OTHER_PD_STAG, VA, 8),
            c(Tg::StagNotAssociated),
        );
        violation(
            m,
            false,
            write(WRITE_STAG, VA - 1, 8),
            c(Tg::BaseOrBoundsViolation),
        );
        violation(
            m,
            false,
            write(WRITE_STAG, VA + 3 * 4096 - 7, 8),
            c(Tg::BaseOrBoundsViolation),
        );
        // A multi-segment Write that leaves the region in its 2nd segment:
        // the 1st is placed, the 2nd not (checked separately below).
        violation(
            m,
            false,
            write(READ_STAG, VA, 8),
            Prot::AccessRightsViolation.into(),
        );
        violation(
            m,
            false,
            write(LOCAL_ONLY_STAG, VA, 0),
            Prot::AccessRightsViolation.into(),
        );
        let wrap = RdmapRepr::RdmaWrite {
            last: true,
            stag: WRITE_STAG,
            to: u64::MAX - 3,
            payload: &[1; 8],
        };
        violation(m, false, hand(wrap, |_| ()), c(Tg::ToWrap));
        // DDP version 2, tagged and untagged.
        violation(
            m,
            false,
            hand(wrap, |u| u[0] ^= 3),
            c(Tg::InvalidDdpVersion),
        );
        violation(
            m,
            false,
            hand(send(1, 0, 4), |u| u[0] ^= 3),
            Ut::InvalidDdpVersion.into(),
        );
        // RDMAP version 0, reserved opcode, Send opcode in a tagged segment.
        let good_write = RdmapRepr::RdmaWrite {
            last: true,
            stag: WRITE_STAG,
            to: VA,
            payload: &[1; 8],
        };
        violation(
            m,
            false,
            hand(good_write, |u| u[1] &= 0x3f),
            Op::InvalidRdmapVersion.into(),
        );
        violation(
            m,
            false,
            hand(good_write, |u| u[1] |= 0x0c),
            Op::UnexpectedOpcode.into(),
        );
        violation(
            m,
            false,
            hand(good_write, |u| u[1] = 0x43),
            Op::UnexpectedOpcode.into(),
        );
        // Read Response with no Read outstanding.
        let resp = RdmapRepr::ReadResponse {
            last: true,
            stag: WRITE_STAG,
            to: VA,
            payload: &[1; 8],
        };
        violation(m, false, hand(resp, |_| ()), Op::UnexpectedOpcode.into());
        // Untagged: QN, MSN, MO, length.
        violation(
            m,
            false,
            hand(send(1, 0, 4), |u| u[9] = 5),
            Ut::InvalidQn.into(),
        );
        violation(
            m,
            true,
            hand(send(1, 0, 4), |_| ()),
            Ut::InvalidMsnNoBuffer.into(),
        );
        // One buffer posted, for MSN 1: MSN 2 has none; MSN 0 is behind,
        // 2^31 + 1 too far ahead.
        violation(
            m,
            false,
            hand(send(2, 0, 4), |_| ()),
            Ut::InvalidMsnNoBuffer.into(),
        );
        violation(
            m,
            false,
            hand(send(0, 0, 4), |_| ()),
            Ut::InvalidMsnRange.into(),
        );
        violation(
            m,
            false,
            hand(send(1 << 31 | 2, 0, 4), |_| ()),
            Ut::InvalidMsnRange.into(),
        );
        violation(m, false, hand(send(1, 4, 4), |_| ()), Ut::InvalidMo.into());
        violation(
            m,
            false,
            |tx: &mut TxStream, _: &MpaSettings| {
                tx.send(&Message::Send {
                    data: &[5; 65],
                    solicited: false,
                    invalidate: None,
                })
                .unwrap()
            },
            Ut::MessageTooLong.into(),
        );
        // Send with Invalidate of an STag that cannot be invalidated.
        for stag in [0x0009_9905, WRITE_STAG ^ 1, OTHER_PD_STAG] {
            violation(
                m,
                false,
                move |tx: &mut TxStream, _: &MpaSettings| {
                    tx.send(&Message::Send {
                        data: &[5; 6],
                        solicited: true,
                        invalidate: Some(stag),
                    })
                    .unwrap()
                },
                Prot::StagCannotBeInvalidated.into(),
            );
        }
        // Read Requests: over IRD (1), and Data Source errors (echo R).
        let rr = |src_stag: u32, src_to: u64, size: u32| ReadRequestRepr {
            sink_stag: SINK_STAG,
            sink_to: 0,
            size,
            src_stag,
            src_to,
        };
        let two = rr(READ_STAG, VA, 16);
        violation(
            m,
            false,
            move |tx: &mut TxStream, _: &MpaSettings| {
                let mut s = tx.send(&Message::ReadRequest(two)).unwrap();
                s.extend(tx.send(&Message::ReadRequest(two)).unwrap());
                s
            },
            Ut::InvalidMsnNoBuffer.into(),
        );
        for (req, cause) in [
            (rr(0x0009_9905, VA, 1), Prot::InvalidStag),
            (rr(OTHER_PD_STAG, VA, 1), Prot::StagNotAssociated),
            (rr(WRITE_STAG, VA, 1), Prot::AccessRightsViolation),
            (rr(READ_STAG, VA, 4097), Prot::BaseOrBoundsViolation),
            (rr(READ_STAG, u64::MAX - 2, 8), Prot::ToWrap),
        ] {
            let t = violation(
                m,
                false,
                move |tx: &mut TxStream, _: &MpaSettings| {
                    tx.send(&Message::ReadRequest(req)).unwrap()
                },
                cause.into(),
            );
            assert_eq!(t.rdma, Some(req), "Read Request echoed (R)");
            let d = t.ddp.expect("DDP header echoed (D)");
            assert!(d.segment_length_valid);
            assert_eq!(d.segment_length, 18 + 28);
            assert_eq!(
                d.header.to_repr().unwrap(),
                RdmapRepr::ReadRequest {
                    msn: 1,
                    request: req
                }
                .ddp_repr()
            );
        }
        // ULPDU too short for a DDP header.
        violation(
            m,
            false,
            |tx: &mut TxStream, mpa: &MpaSettings| vec![raw(mpa, tx.seq(), &[0x41, 0x43, 0])],
            DdpError::LocalCatastrophic.into(),
        );
    }
}

#[test]
fn echoed_ddp_header_is_the_segment_header() {
    let wr = RdmapRepr::RdmaWrite {
        last: true,
        stag: WRITE_STAG,
        to: VA + 3 * 4096,
        payload: &[9; 10],
    };
    let t = violation(
        false,
        false,
        hand(wr, |_| ()),
        TaggedBufferError::BaseOrBoundsViolation.into(),
    );
    let d = t.ddp.unwrap();
    assert_eq!(d.header.as_bytes(), &ulpdu(&wr)[..14]);
    assert_eq!(d.segment_length, 24);
    assert_eq!(t.rdma, None);
}

#[test]
fn failing_segment_places_nothing_earlier_ones_stay() {
    // A 3000-octet Write whose last octets leave the region: the segments
    // inside are placed, the failing one not at all.
    let mpa = settings(false, false, 0);
    let mut tx = TxStream::new(mpa, 1448);
    let mut rx = Receiver::new(
        RxConfig {
            mpa,
            pd: PD,
            ird: 1,
        },
        tpt(),
    );
    let end = VA + 3 * 4096;
    let to = end - 2900;
    let segs = tx
        .send(&Message::Write {
            stag: WRITE_STAG,
            to,
            data: &[0xab; 3000],
        })
        .unwrap();
    assert_eq!(segs.len(), 3);
    let ev = feed(&mut rx, &mut Rng::from_state(9), &segs);
    assert_eq!(ev.len(), 3);
    assert!(
        matches!(ev[2], Event::SendTerminate(t) if t.cause == TaggedBufferError::BaseOrBoundsViolation.into())
    );
    let bytes = &rx.tpt().region(WRITE_STAG).unwrap().bytes;
    let placed = 2 * 1428;
    let off = (to - VA) as usize;
    assert!(bytes[off..off + placed].iter().all(|&b| b == 0xab));
    assert!(bytes[off + placed..].iter().all(|&b| b == 0x11));
    assert!(bytes[..off].iter().all(|&b| b == 0x11));
}

#[test]
fn crc_and_marker_corruption() {
    for markers in [false, true] {
        // A flipped bit anywhere in the CRC field or in the payload.
        for flip in [0usize, 1, 2, 3, 40, 700, 1000] {
            let t = violation(
                markers,
                false,
                move |tx: &mut TxStream, mpa: &MpaSettings| {
                    let mut s = tx
                        .send(&Message::Write {
                            stag: WRITE_STAG,
                            to: VA,
                            data: &[7; 1200],
                        })
                        .unwrap();
                    let seg_seq = s[0].seq;
                    let p = &mut s[0].payload;
                    let n = p.len();
                    let mut at = if flip < 4 { n - 1 - flip } else { flip };
                    // Keep clear of markers: that is the next test.
                    while mpa.markers
                        && seg_seq.wrapping_add(at as u32).wrapping_sub(mpa.seq_start) % 512 < 4
                    {
                        at += 4;
                    }
                    p[at] ^= 0x10;
                    s
                },
                MpaError::CrcError.into(),
            );
            assert_eq!((t.ddp, t.rdma), (None, None), "LLP errors echo nothing");
        }
    }
    // A marker whose FPDUPTR is off.
    violation(
        true,
        false,
        |tx: &mut TxStream, mpa: &MpaSettings| {
            let mut s = tx
                .send(&Message::Write {
                    stag: WRITE_STAG,
                    to: VA,
                    data: &[7; 1200],
                })
                .unwrap();
            let at = (mpa.seq_start.wrapping_add(512).wrapping_sub(s[0].seq) % 512) as usize;
            s[0].payload[at + 3] ^= 4;
            s
        },
        MpaError::MarkerMismatch.into(),
    );
}

#[test]
fn tx_refuses_without_changing_state() {
    let mpa = settings(true, true, 0);
    let mut tx = TxStream::new(mpa, 1448);
    assert_eq!(
        tx.send(&Message::Write {
            stag: 1,
            to: u64::MAX - 1,
            data: &[0; 4]
        }),
        Err(TxError::ToWrap)
    );
    assert_eq!(tx.seq(), 0);
    let mut tiny = TxStream::new(mpa, 30);
    assert_eq!(
        tiny.send(&Message::ReadRequest(ReadRequestRepr::default())),
        Err(TxError::MulpduTooSmall)
    );
    assert_eq!(
        tiny.next_msn(rnic_wire::ddp::QueueNumber::ReadRequest),
        Some(1)
    );
}

#[test]
fn out_of_order_input_is_refused() {
    let mpa = settings(false, false, 100);
    let mut rx = Receiver::new(
        RxConfig {
            mpa,
            pd: PD,
            ird: 1,
        },
        tpt(),
    );
    assert_eq!(
        rx.receive(104, &[0; 4]),
        Err(RxError::OutOfOrder {
            expected: 100,
            got: 104
        })
    );
    assert_eq!(rx.receive(96, &[0, 0, 0, 0, 0]), Ok(vec![]));
    assert_eq!(rx.next_seq(), 101);
}

#[test]
fn frames_round_trip_with_checksums() {
    let a = Endpoint {
        mac: [2, 0, 0, 0, 0, 1],
        ip: [10, 0, 0, 2],
        port: 40000,
    };
    let b = Endpoint {
        mac: [2, 0, 0, 0, 0, 2],
        ip: [10, 0, 0, 1],
        port: 7174,
    };
    let mut pair = TcpPair::new(a, u32::MAX, b, 5);
    let [syn, syn_ack, ack] = pair.handshake(1460);
    let s = parse_frame(&syn).unwrap();
    assert!(s.syn && s.ack.is_none() && s.mss == Some(1460));
    assert_eq!(s.seq, u32::MAX);
    let s = parse_frame(&syn_ack).unwrap();
    assert_eq!((s.syn, s.ack, s.seq), (true, Some(0), 5));
    assert_eq!(s.tuple.reversed(), parse_frame(&ack).unwrap().tuple);
    let f = pair.send(true, b"hello");
    let s = parse_frame(&f).unwrap();
    assert_eq!((s.seq, s.ack, s.payload), (0, Some(6), &b"hello"[..]));
    assert_eq!(pair.a_next, 5);
    // Any flipped bit after the Ethernet header is a checksum error.
    for i in 14..f.len() {
        let mut bad = f.clone();
        bad[i] ^= 0x01;
        assert!(parse_frame(&bad).is_err(), "octet {i}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random octets in random chunks never panic the receiver, and once
    /// it has said Terminate it takes nothing more.
    #[test]
    fn random_input_never_panics(
        crc in any::<bool>(),
        markers in any::<bool>(),
        seq_start in any::<u32>(),
        chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..12),
    ) {
        let mpa = settings(crc, markers, seq_start);
        let mut rx = Receiver::new(RxConfig { mpa, pd: PD, ird: 2 }, tpt());
        rx.post_recv(1, 100);
        let mut seq = seq_start;
        for c in &chunks {
            match rx.receive(seq, c) {
                Ok(_) => {}
                Err(RxError::Dead) => prop_assert!(rx.is_dead()),
                Err(e) => prop_assert!(false, "{e:?}"),
            }
            seq = seq.wrapping_add(c.len() as u32);
        }
    }

    /// A valid stream with random octets changed never panics either.
    #[test]
    fn mutated_stream_never_panics(
        crc in any::<bool>(),
        markers in any::<bool>(),
        seq_start in any::<u32>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mpa = settings(crc, markers, seq_start);
        let mut tx = TxStream::new(mpa, 1448);
        let mut segs = tx.send(&Message::Write { stag: WRITE_STAG, to: VA + 5, data: &[3; 2000] }).unwrap();
        segs.extend(tx.send(&Message::Send { data: &[4; 50], solicited: false, invalidate: Some(READ_STAG) }).unwrap());
        segs.extend(tx.send(&Message::ReadRequest(ReadRequestRepr { src_stag: READ_STAG, src_to: VA, size: 10, ..Default::default() })).unwrap());
        let mut stream: Vec<u8> = segs.iter().flat_map(|s| s.payload.clone()).collect();
        for (i, v) in &flips {
            let at = i.index(stream.len());
            stream[at] ^= v | 1;
        }
        let mut rx = Receiver::new(RxConfig { mpa, pd: PD, ird: 2 }, tpt());
        rx.post_recv(1, 100);
        let _ = rx.receive(seq_start, &stream);
        if crc {
            // With CRC on, a corrupted stream never places anything wrong:
            // it ends in a Terminate before the damaged FPDU.
            prop_assert!(rx.is_dead() || rx.pending_len() > 0);
        }
    }
}
