//! Loss at MTU 9000 (issue 4: `rnic-sim run --mtu 9000 --loss 0.02
//! --max-size 65536 --seed 1` stalled with the 64 KiB Write at 32608 of
//! 65536 octets). Two Verilated cores with their firmware and drivers at
//! MTU 9000, one signaled 16 KiB RDMA Write A → B (FPDUs of 4096 octets of
//! TCP payload, 4150-octet frames: MULPDU 4090 against B's 12 KiB window),
//! and the link drops chosen frames.
//!
//! The cause: a segment of an RDMA-mode connection that is out of order or
//! an old duplicate goes to the firmware (`OutOfWindow`), which answers it
//! with an ACK of RCV.NXT (RFC 9293 §3.10.7.4). The exception queue keeps
//! the first 2 KiB of a longer frame (`port::FRAME_WINDOW`) and the
//! firmware reads at most 1514 octets of it; its parser refused the cut
//! 4150-octet frame (IPv4 total length beyond the octets read) and the
//! firmware answered nothing. In the stalled run B's two ACKs of the last
//! three segments were lost; A's timer resent them (go-back-N) and backed
//! off while B, already past them, stayed silent.
//!
//! * `lost_acks_of_the_last_flight_are_answered`: the run's sequence. Every
//!   pure ACK of B is dropped until A resends a segment; B must answer the
//!   resent (duplicate) segments with an ACK of its RCV.NXT, and A's Write
//!   completes. Before the fix A's retries ran out (ConnectionLost).
//! * `out_of_order_segments_draw_duplicate_acks`: A's 2nd data segment is
//!   dropped; every later segment B receives before the hole is filled
//!   must draw a duplicate ACK of the hole (RFC 5681 §3.2's signal). Before
//!   the fix there were none.
use std::cell::RefCell;
use std::rc::Rc;

use rnic_driver::{
    AccessFlags, DmaMem, MpaOptions, RemoteAddr, SendOp, SendWr, WcStatus, WorkCompletion,
};
use rnic_fw::retx::RetxConfig;
use rnic_sim::link::{LinkConfig, Side};
use rnic_sim::node::{World, COSIM_RDMA_RETX};
use rnic_sim::rtl_run::{connect_pair, open_node, world_pair, GUARD};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::net::{EthernetFrame, EthernetProtocol, Ipv4Packet, TcpPacket};

const MTU: u16 = 9000;
const LEN: usize = 16 << 10;
/// TCP payload of a full segment of this run (MULPDU 4090 + 6).
const SEG: usize = 4096;
/// Clocks per µs (`port::CLOCK_KHZ` = 156 250).
const CLOCKS_PER_US: u64 = 156;

/// A frame's TCP (seq, ack, payload length), if it is a TCP segment.
fn tcp_of(f: &[u8]) -> Option<(u32, u32, usize)> {
    let eth = EthernetFrame::new_checked(f).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(eth.payload()).ok()?;
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    Some((
        tcp.seq_number().0 as u32,
        tcp.ack_number().0 as u32,
        tcp.payload().len(),
    ))
}

/// What the link saw of the Write.
#[derive(Default)]
struct Seen {
    /// A's data segments (clock, seq, payload length), dropped ones too.
    a_data: Vec<(u64, u32, usize)>,
    /// B's frames (clock, seq, ack, payload length) and whether dropped.
    b_frames: Vec<(u64, u32, u32, usize, bool)>,
    /// The first resent segment of A (clock, seq).
    resent: Option<(u64, u32)>,
    /// The dropped data segment (clock, seq).
    hole: Option<(u64, u32)>,
}

enum Drop {
    /// B's pure ACKs until A resends something.
    AcksUntilResend,
    /// A's 2nd data segment.
    SecondData,
}

struct Outcome {
    seen: Seen,
    /// A's completion of the Write, if any.
    wc: Option<WorkCompletion>,
    /// B's memory around the target, and what A wrote.
    got: Vec<u8>,
    data: Vec<u8>,
    /// Clocks from posting the Write to its completion (or the budget).
    clocks: u64,
    /// B's exceptions during the Write.
    b_exc: u64,
}

fn run(drop: Drop) -> Outcome {
    let rto = COSIM_RDMA_RETX.rto;
    let world: Rc<RefCell<World>> = world_pair(LinkConfig::default(), None).unwrap();
    let a = open_node(&world, 0, MTU).unwrap();
    let b = open_node(&world, 1, MTU).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (cq_a, cq_b) = (a.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 4).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 4, 8).unwrap();
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"A", b"B").unwrap();
    let acc = |b| AccessFlags::from_bits(b).unwrap();
    let buf_a = a.alloc_dma(LEN + 2 * GUARD).unwrap();
    let buf_b = b.alloc_dma(LEN + 2 * GUARD).unwrap();
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, LEN, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_b = pd_b
        .reg_mr(
            &buf_b,
            GUARD,
            LEN,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let data: Vec<u8> = (0..LEN).map(|i| (i * 13 + 5) as u8).collect();
    buf_a.write(GUARD, &data).unwrap();
    buf_b.write(0, &vec![0xEE; LEN + 2 * GUARD]).unwrap();
    // A gives up after 3 retries (RTO 50, 100, 200 µs, then abort): a
    // Write that B never answers ends in well under a millisecond.
    world.borrow_mut().nodes[0].fw.config.rdma_retx = RetxConfig {
        rto,
        rto_max: 4 * rto,
        max_retries: 3,
    };

    let seen = Rc::new(RefCell::new(Seen::default()));
    let hook_seen = seen.clone();
    let mut a_seqs = std::collections::BTreeSet::new();
    world.borrow_mut().tx_hook = Some(Box::new(move |side, now, f| {
        let mut s = hook_seen.borrow_mut();
        let Some((seq, ack, n)) = tcp_of(f) else {
            return true;
        };
        if side == Side::B {
            let lose = matches!(drop, Drop::AcksUntilResend) && n == 0 && s.resent.is_none();
            s.b_frames.push((now, seq, ack, n, lose));
            return !lose;
        }
        if n == 0 {
            return true;
        }
        s.a_data.push((now, seq, n));
        if !a_seqs.insert(seq) && s.resent.is_none() {
            s.resent = Some((now, seq));
        }
        if matches!(drop, Drop::SecondData) && s.a_data.len() == 2 {
            s.hole = Some((now, seq));
            return false;
        }
        true
    }));

    let b_exc0 = world.borrow().nodes[1].hw.borrow().core.get_cnt_rx_exc();
    let sges = [mr_a.sge(0, LEN as u32).unwrap()];
    qp_a.post_send(&[SendWr {
        wr_id: 7,
        op: SendOp::RdmaWrite(RemoteAddr {
            addr: mr_b.va(),
            rkey: mr_b.rkey(),
        }),
        sges: &sges,
        signaled: true,
        solicited: false,
        fence: false,
    }])
    .unwrap();
    let start = world.borrow().cycle();
    // longer than A's whole retry schedule (50 + 100 + 200 + 200 µs)
    let budget = 12 * rto * CLOCKS_PER_US;
    let mut wc = None;
    let mut out = [WorkCompletion::default(); 4];
    while world.borrow().cycle() - start < budget {
        for _ in 0..64 {
            world.borrow_mut().round();
        }
        if cq_a.poll(&mut out).unwrap() > 0 {
            wc = Some(out[0]);
            break;
        }
    }
    let clocks = world.borrow().cycle() - start;
    // A's completion says B acknowledged the octets; B's placement DMA
    // writes may still be on their way to its memory.
    let settle = world.borrow().cycle();
    while world.borrow().cycle() - settle < 20 * CLOCKS_PER_US {
        world.borrow_mut().round();
        let w = world.borrow();
        let b = w.nodes[1].hw.borrow();
        if b.dma.idle() && b.placed.iter().map(|p| p.2 as usize).sum::<usize>() >= LEN {
            break;
        }
    }
    world.borrow_mut().tx_hook = None;
    let b_exc = world.borrow().nodes[1].hw.borrow().core.get_cnt_rx_exc() - b_exc0;
    let mut got = vec![0u8; LEN + 2 * GUARD];
    buf_b.read(0, &mut got).unwrap();
    let seen = std::mem::take(&mut *seen.borrow_mut());
    Outcome {
        seen,
        wc,
        got,
        data,
        clocks,
        b_exc,
    }
}

fn check_write(o: &Outcome) {
    let wc =
        o.wc.expect("A's Write completed (no completion: the stall)");
    assert_eq!((wc.wr_id, wc.status), (7, WcStatus::Success));
    let bad = (0..LEN).find(|&i| o.got[GUARD + i] != o.data[i]);
    assert_eq!(bad, None, "Write placed: first wrong octet");
    assert!(
        o.got[..GUARD]
            .iter()
            .chain(&o.got[GUARD + LEN..])
            .all(|&x| x == 0xEE),
        "nothing written around the target"
    );
}

#[test]
fn lost_acks_of_the_last_flight_are_answered() {
    let o = run(Drop::AcksUntilResend);
    let s = &o.seen;
    let segs: std::collections::BTreeSet<u32> = s.a_data.iter().map(|d| d.1).collect();
    let (t_resend, _) = s.resent.expect("A resent a segment");
    // the end of the flight sent before the resend: B's RCV.NXT then
    let end = s
        .a_data
        .iter()
        .filter(|d| d.0 < t_resend)
        .map(|&(_, seq, n)| seq.wrapping_add(n as u32))
        .max_by_key(|&e| e.wrapping_sub(s.a_data[0].1))
        .unwrap();
    let dropped = s.b_frames.iter().filter(|f| f.4).count();
    println!(
        "A's data segments (clock, seq, octets): {:?} ({} distinct); B's ACKs dropped: \
         {dropped}; first resend {:?}; B's exceptions {}; {} clocks to A's completion ({:?})",
        s.a_data,
        segs.len(),
        s.resent,
        o.b_exc,
        o.clocks,
        o.wc.map(|w| w.status)
    );
    assert!(
        s.a_data.iter().any(|d| d.2 == SEG),
        "full-size jumbo segments"
    );
    assert!(dropped >= 2, "B's ACKs of the Write were dropped");
    // B answers A's resent segments (OutOfWindow exceptions: it has them
    // all) with an ACK of its RCV.NXT = the end of the Write.
    let answers: Vec<u64> = s
        .b_frames
        .iter()
        .filter(|&&(t, _, ack, n, lost)| t > t_resend && n == 0 && !lost && ack == end)
        .map(|f| f.0 - t_resend)
        .collect();
    println!("B's ACKs of {end} after the first resend: {answers:?} clocks after it");
    assert!(!answers.is_empty(), "B answered the resent segments");
    assert!(o.b_exc >= 1, "the resent segments reached B's firmware");
    check_write(&o);
}

#[test]
fn out_of_order_segments_draw_duplicate_acks() {
    let o = run(Drop::SecondData);
    let s = &o.seen;
    let (t_hole, hole) = s.hole.expect("a data segment was dropped");
    // A's segments after the hole, sent before it was resent
    let refill = s
        .a_data
        .iter()
        .find(|&&(t, seq, _)| t > t_hole && seq == hole)
        .map(|d| d.0)
        .expect("the hole was resent");
    let after = s
        .a_data
        .iter()
        .filter(|&&(t, seq, _)| t > t_hole && t < refill && seq != hole)
        .count();
    // B's ACKs of the hole after A's first segment: the first of them
    // acknowledges that segment (moves A's SND.UNA to the hole), the others
    // are duplicates (RFC 5681 §2).
    let t_first = s.a_data[0].0;
    let dup_acks = s
        .b_frames
        .iter()
        .filter(|&&(t, _, ack, n, _)| t > t_first && n == 0 && ack == hole)
        .count()
        .saturating_sub(1);
    println!(
        "dropped {hole}; {after} segments after it before the resend; B's ACKs of the hole: \
         {dup_acks}; B's exceptions {}; {} clocks to A's completion",
        o.b_exc, o.clocks
    );
    assert!(after >= 1, "segments behind the hole");
    assert!(
        dup_acks >= after,
        "a duplicate ACK per out-of-order segment: {dup_acks} for {after}"
    );
    check_write(&o);
}
