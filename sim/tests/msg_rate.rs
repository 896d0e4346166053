//! Message rate (`rnic_sim::msg_rate`): many outstanding 64-octet RDMA
//! Writes and Sends through the driver between two co-simulated nodes.
//!
//! * `msg_rate_smoke` (in the test suite): 1 and 2 QPs, 64 messages each,
//!   a send queue of 16 so the queues are refilled from completions; every
//!   message completes in order and lands byte-exact in its own slot at B.
//!   No rate is asserted.
//! * `msg_rate_64b` (ignored; `make bench`): 1 and 8 QPs, Writes and Sends,
//!   `MSG_RATE_MESSAGES` in all per run (default 4096), `MSG_RATE_DEPTH`
//!   outstanding per QP (default 64); million messages per second against
//!   the wire limit, with both nodes' DMA breakdown, printed and written to
//!   `target/bench/msg-rate.json`; then 8 QPs of Writes again with half the
//!   DMA read round trip; then the four runs at the board's timing (62.5 MHz
//!   behind 1 Gb/s, `Timing::BOARD`).

use rnic_sim::clock::Timing;
use rnic_sim::msg_rate::{run, MsgOp, MsgRateConfig};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn msg_rate_smoke() {
    // (the 2-QP runs post every message inline)
    for (op, qps, seed, inline) in [
        (MsgOp::Write, 1, 11, false),
        (MsgOp::Send, 1, 12, false),
        (MsgOp::Write, 2, 13, true),
        (MsgOp::Send, 2, 14, true),
    ] {
        let r = run(&MsgRateConfig {
            op,
            qps,
            messages: 64,
            size: 64,
            sq_depth: 16,
            rq_depth: 16,
            seed,
            budget: 400_000,
            dma_log: false,
            vcd: None,
            read_latency: None,
            timing: Timing::DATAPATH,
            inline,
        })
        .unwrap_or_else(|err| panic!("{} × {qps} QPs: {err}", op.name()));
        println!("{}", r.line());
        assert_eq!(r.messages, 64 * qps as u64);
        assert_eq!(r.data_frames, r.messages, "one frame per message");
    }
}

/// 8 QPs of inline 64-octet Sends, 64 outstanding each: A sends at about
/// the wire's pace, and B's receive path (`send_place` about 21 clocks a
/// Send, `recv_wqe` reading receive WQEs ahead with two reads in flight)
/// keeps up: no frame is dropped, so nothing is replayed. (A B that places
/// Sends more slowly than A sends them, as with one receive-WQE read in
/// flight, overflows its RX FIFO within these 512 Sends.) Counts, not
/// rates: the run is the same cycle for cycle on any machine.
#[test]
fn inline_sends_over_8_qps_drop_nothing() {
    let r = run(&MsgRateConfig {
        op: MsgOp::Send,
        qps: 8,
        messages: 64,
        size: 64,
        sq_depth: 64,
        rq_depth: 128,
        seed: 1,
        budget: 400_000,
        dma_log: false,
        vcd: None,
        read_latency: None,
        timing: Timing::DATAPATH,
        inline: true,
    })
    .unwrap_or_else(|err| panic!("inline Sends × 8 QPs: {err}"));
    println!("{}", r.line());
    assert_eq!(r.messages, 512);
    assert_eq!(
        (r.b_drops, r.fast_retx, r.replays),
        (0, 0, 0),
        "B dropped frames (RX FIFO overflow) and A replayed them"
    );
    assert_eq!(r.data_frames, r.messages, "one frame per message");
}

#[test]
#[ignore]
fn msg_rate_64b() {
    let total = env_usize("MSG_RATE_MESSAGES", 4096);
    let depth = env_usize("MSG_RATE_DEPTH", 64) as u32;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    // (libtest's "test msg_rate_64b ... " has no newline)
    println!("\nmessage rate: 64-octet messages, {total} per run, {depth} outstanding per QP");
    let mut rows = Vec::new();
    // The four measured runs, then Writes over 8 QPs with half the DMA
    // read round trip (39 clocks = 250 ns): what the read latency decides.
    let (d, b) = (Timing::DATAPATH, Timing::BOARD);
    let runs = [
        (MsgOp::Write, 1, None, d),
        (MsgOp::Write, 8, None, d),
        (MsgOp::Send, 1, None, d),
        (MsgOp::Send, 8, None, d),
        (MsgOp::Write, 8, Some(39), d),
        (MsgOp::Write, 1, None, b),
        (MsgOp::Write, 8, None, b),
        (MsgOp::Send, 1, None, b),
        (MsgOp::Send, 8, None, b),
    ];
    // Then the datapath's four runs again with every message inline.
    let runs = runs
        .iter()
        .map(|&(op, q, l, t)| (op, q, l, t, false))
        .chain(runs[..4].iter().map(|&(op, q, l, t)| (op, q, l, t, true)));
    for (op, qps, read_latency, timing, inline) in runs {
        let cfg = MsgRateConfig {
            op,
            qps,
            messages: total / qps,
            size: 64,
            sq_depth: depth,
            rq_depth: 2 * depth,
            seed: 1,
            budget: 200_000 + 400 * total as u64,
            dma_log: true,
            vcd: None,
            read_latency,
            timing,
            inline,
        };
        let wall = std::time::Instant::now();
        let r = run(&cfg).unwrap_or_else(|err| panic!("{} × {qps} QPs: {err}", op.name()));
        if let Some(l) = read_latency {
            println!("with a DMA read round trip of {l} clocks:");
        }
        if timing != d {
            println!(
                "at {} MHz behind {} Gb/s (the board):",
                timing.mhz(),
                timing.port_gbps()
            );
        }
        println!("{}", r.line());
        print!("{}", r.breakdown());
        println!("  (wall {:.1} s)", wall.elapsed().as_secs_f64());
        rows.push(r.json());
    }
    let json = serde_json::json!({ "bench": "msg-rate", "runs": rows });
    std::fs::write(
        dir.join("msg-rate.json"),
        serde_json::to_string_pretty(&json).unwrap() + "\n",
    )
    .unwrap();
}
