//! Parked QPs in Verilator (docs/rtl.md "Parked QPs"): a QP stalled on its
//! peer's window hands its WQE back instead of holding the TX segmenter, so
//! the other QPs keep sending; a window update (the peer's ACK) wakes it
//! and it resumes mid-message.
//!
//! Independent references (the `tx_rig` rig): WQEs written with
//! `SendWqe::emit`; every frame parsed with smoltcp
//! (`rnic_wire::model::parse_frame`, checksums checked) and equal, per
//! connection, to `rnic_wire::model::TxStream`'s segments byte for byte;
//! completions in order per QP. The peer's ACK is built with smoltcp
//! (`tcp_frame`); the window rule (RFC 9293 §3.8.6: a frame ends at or
//! before SND.UNA + SND.WND) is checked after every clock.

mod core_rig;
mod tx_rig;

use rnic_wire::model::net::tcp_frame;
use rnic_wire::model::MpaSettings;
use rnic_wire::net::{TcpControl, TcpRepr, TcpSeqNumber};
use tx_rig::{dma_cfg, Rig, Wr};

/// Octets of each RDMA Write.
const LEN: usize = 65536;
/// A's peer window at the start: two 1460-octet FPDUs fit, not three.
const A_WND: u32 = 3000;

fn seq_le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) >= 0
}

/// The rig with the peer window enforced (`tx_wnd_en`) and QPs 1 (A,
/// connection 1, window `a_wnd`) and 2 (B, connection 2, window 1 MiB),
/// the window written into each connection context.
fn rig(seed: u64, a_wnd: u32) -> (Rig, [u32; 2]) {
    let mut rig = Rig::new(seed, dma_cfg(seed, 0));
    rig.core.set_tx_wnd_en(1);
    rig.core.set_rx_pay_ready(1);
    let mut starts = [0u32; 2];
    for (i, wnd) in [a_wnd, 1 << 20].into_iter().enumerate() {
        let seq_start = rig.rng.next_u32();
        starts[i] = seq_start;
        // `write_ct_qp` leaves `ct_wr_snd_wnd` alone: set it first.
        rig.core.set_ct_wr_snd_wnd(wnd as u64);
        rig.core.set_ct_wr_snd_wscale(0);
        let mpa = MpaSettings {
            crc: true,
            markers: false,
            seq_start,
        };
        rig.add_qp(1 + i as u32, 1 + i as u32, mpa, 1460, 6);
    }
    (rig, starts)
}

fn post_write(rig: &mut Rig, qi: usize) {
    let data = rig.rng.bytes(LEN);
    let (stag, to) = (rig.rng.next_u32(), rig.rng.next_u64() >> 1);
    rig.post(qi, &Wr::Write { stag, to, data }, true);
}

/// The peer of QP `qi` acknowledges everything sent with window `wnd` (a
/// pure ACK, smoltcp); returns the new right edge.
fn peer_ack(rig: &mut Rig, qi: usize, wnd: u16) -> u32 {
    let q = &rig.qps[qi];
    let ack = q.wire_nxt;
    let tcp = TcpRepr {
        src_port: q.peer.port,
        dst_port: q.local.port,
        control: TcpControl::None,
        seq_number: TcpSeqNumber(q.ack as i32),
        ack_number: Some(TcpSeqNumber(ack as i32)),
        window_len: wnd,
        window_scale: None,
        max_seg_size: None,
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload: &[],
    };
    let f = tcp_frame(&q.peer, &q.local, &tcp);
    rig.macrx.push(f, false);
    ack.wrapping_add(wnd as u32)
}

fn done(rig: &Rig, qi: usize) -> bool {
    rig.qps[qi].expect.is_empty() && rig.qps[qi].cq_expect.is_empty()
}

/// B alone (A posts nothing): clocks from B's first to its last data frame.
fn b_alone() -> (u64, u32) {
    let (mut rig, starts) = rig(21, A_WND);
    post_write(&mut rig, 1);
    rig.doorbell(1);
    let (mut first, mut last) = (None, 0);
    let mut prev = rig.qps[1].wire_nxt;
    for _ in 0..200_000 {
        rig.cycle();
        if rig.qps[1].wire_nxt != prev {
            prev = rig.qps[1].wire_nxt;
            first.get_or_insert(rig.core.cycle());
            last = rig.core.cycle();
        }
        if done(&rig, 1) {
            break;
        }
    }
    assert!(done(&rig, 1), "B alone finishes");
    (
        last - first.unwrap(),
        rig.qps[1].wire_nxt.wrapping_sub(starts[1]),
    )
}

/// Two QPs on two connections, both posting a 64 KiB RDMA Write, A's
/// doorbell first. A's peer window admits two FPDUs: A sends them and
/// stops at its window; B's frames all go out and B completes while A is
/// stalled (on a segmenter that waits holding A's WQE, B starves here).
/// Then A's peer acknowledges with a 64 KiB window, again whenever A has
/// stopped, until A completes. Byte streams equal `TxStream`'s, no frame
/// passes the window, and the parks are counted.
#[test]
fn window_stalled_qp_does_not_hold_the_segmenter() {
    let (b_clocks, b_octets) = b_alone();
    let (mut rig, starts) = rig(21, A_WND);
    post_write(&mut rig, 0);
    post_write(&mut rig, 1);
    rig.doorbell(0);
    rig.doorbell(1);
    let mut edge = starts[0].wrapping_add(A_WND);
    let check_edge = |rig: &Rig, edge: u32| {
        assert!(
            seq_le(rig.qps[0].wire_nxt, edge),
            "A: data up to {:#x}, past the window edge {edge:#x}",
            rig.qps[0].wire_nxt
        );
    };
    // Phase 1: B runs while A is stalled.
    let (mut b_first, mut b_last) = (None, 0u64);
    let mut b_prev = rig.qps[1].wire_nxt;
    let t0 = rig.core.cycle();
    while !done(&rig, 1) {
        assert!(
            rig.core.cycle() - t0 < 100_000,
            "B starved behind window-stalled A: B sent {} of {} octets in {} clocks, A {} octets",
            rig.qps[1].wire_nxt.wrapping_sub(starts[1]),
            b_octets,
            rig.core.cycle() - t0,
            rig.qps[0].wire_nxt.wrapping_sub(starts[0])
        );
        rig.cycle();
        check_edge(&rig, edge);
        if rig.qps[1].wire_nxt != b_prev {
            b_prev = rig.qps[1].wire_nxt;
            b_first.get_or_insert(rig.core.cycle());
            b_last = rig.core.cycle();
        }
    }
    let a_sent = rig.qps[0].wire_nxt.wrapping_sub(starts[0]);
    assert!(
        a_sent > 0 && a_sent <= A_WND && !rig.qps[0].expect.is_empty(),
        "A's first frames stop at its window ({a_sent} octets)"
    );
    let parks = rig.core.get_cnt_tx_park();
    assert!(parks >= 1, "A parked");
    let b_span = b_last - b_first.unwrap();
    // Phase 2: A's peer opens the window whenever A has stopped.
    let mut wake_lat = vec![];
    let mut a_prev = rig.qps[0].wire_nxt;
    let mut still = 0u64;
    let mut acked_at: Option<u64> = None;
    let t1 = rig.core.cycle();
    while !done(&rig, 0) {
        assert!(rig.core.cycle() - t1 < 400_000, "A never finished");
        if still > 300 {
            edge = peer_ack(&mut rig, 0, 65535);
            acked_at = Some(rig.core.cycle());
            still = 0;
        }
        rig.cycle();
        check_edge(&rig, edge);
        // (B is done and A's peer sends no data: every beat is A's)
        if let Some(t) = acked_at {
            if rig.last_beat > t {
                wake_lat.push(rig.last_beat - t);
                acked_at = None;
            }
        }
        if rig.qps[0].wire_nxt != a_prev {
            a_prev = rig.qps[0].wire_nxt;
            still = 0;
        } else {
            still += 1;
        }
    }
    let clocks = rig.run(200_000);
    let (parks, retries) = (rig.core.get_cnt_tx_park(), rig.core.get_cnt_tx_park_retry());
    let rate = |o: u32, c: u64| o as f64 / c as f64;
    eprintln!(
        "B while A parked: {b_octets} octets in {b_span} clocks = {:.3} octets/clock; B alone: {b_clocks} clocks = {:.3} octets/clock",
        rate(b_octets, b_span),
        rate(b_octets, b_clocks)
    );
    eprintln!(
        "A: {a_sent} octets before its window stopped it; {parks} parks, {retries} retry sweeps; peer ACK pushed to mac_rx -> A's next first beat at the MAC: {wake_lat:?} clocks; {clocks} clocks to quiet"
    );
    assert!(!wake_lat.is_empty(), "A was woken by its peer's ACK");
    // B is not slowed by more than a few percent by A's parked QP.
    assert!(
        rate(b_octets, b_span) > 0.9 * rate(b_octets, b_clocks),
        "B's rate while A is parked"
    );
}
