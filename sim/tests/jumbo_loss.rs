//! Loss at MTU 9000 (issue 4: `rnic-sim run --mtu 9000 --loss 0.02
//! --max-size 65536 --seed 1` stalled with the 64 KiB Write at 32608 of
//! 65536 octets). Two Verilated cores with their firmware and drivers at
//! MTU 9000, one signaled 16 KiB RDMA Write A → B (FPDUs of 4096 octets of
//! TCP payload, 4150-octet frames: MULPDU 4090 against a 12 KiB window),
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

use rnic_driver::{WcStatus, WorkCompletion};
use rnic_sim::link::LinkConfig;
use rnic_sim::link::Side;
use rnic_sim::node::COSIM_RDMA_RETX;
use rnic_sim::rtl_run::{tcp_of, with_write_rig_link, CLOCKS_PER_US};

const MTU: u16 = 9000;
const LEN: usize = 16 << 10;
/// B's receive window: 12 KiB, which makes A's firmware choose MULPDU 4090
/// (three FPDUs in the window) and so four segments for the Write.
const WINDOW: u32 = 12 << 10;
/// TCP payload of a full segment of this run (MULPDU 4090 + 6).
const SEG: usize = 4096;

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
    /// B's buffer against what A wrote (`WriteRig::first_wrong_octet`).
    first_wrong: Option<usize>,
    /// Clocks from posting the Write to its completion (or the budget).
    clocks: u64,
    /// B's exceptions during the Write.
    b_exc: u64,
}

fn run(drop: Drop) -> Outcome {
    with_write_rig_link(
        LinkConfig::default(),
        None,
        MTU,
        LEN,
        Some(WINDOW),
        |i| (i * 13 + 5) as u8,
        |r| run_on(r, drop),
    )
    .unwrap()
}

fn run_on(r: &rnic_sim::rtl_run::WriteRig<'_>, drop: Drop) -> Outcome {
    let rto = COSIM_RDMA_RETX.rto;
    let world = r.world;

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
    r.post_write(7, true).unwrap();
    // longer than A's whole retry schedule (50 + 100 + 200 + 200 µs)
    let (wc, clocks) = r.await_completion(12 * rto * CLOCKS_PER_US);
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
    let seen = std::mem::take(&mut *seen.borrow_mut());
    Outcome {
        seen,
        wc,
        first_wrong: r.first_wrong_octet(),
        clocks,
        b_exc,
    }
}

fn check_write(o: &Outcome) {
    let wc =
        o.wc.expect("A's Write completed (no completion: the stall)");
    assert_eq!((wc.wr_id, wc.status), (7, WcStatus::Success));
    assert_eq!(
        o.first_wrong, None,
        "Write placed and nothing written around it: first wrong octet"
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
