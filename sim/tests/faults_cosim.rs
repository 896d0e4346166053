//! The default scenario (`rnic-sim run`) over a faulty link, short and
//! seeded: two Verilated cores with firmware and driver; frames lost,
//! corrupted (bad FCS), duplicated and reordered in both directions during
//! the data phase. Every message must still arrive byte-exact with the octets
//! around it unchanged (the scenario checks each one against the source),
//! with no Terminate and a clean disconnect — the lost RDMA-mode data is
//! recovered by the firmware's retransmission timer (rnic_fw::retx) asking
//! the RTL to replay (tx_log, `RETX_CONN`). Longer sweeps: `make soak`.

use rnic_sim::rtl_run::{run, RtlConfig};

fn faulty(seed: u64, loss: f64, corrupt: f64, duplicate: f64, reorder: f64) {
    faulty_cfg(RtlConfig {
        max_size: 32 << 10,
        ops: 2,
        seed,
        loss,
        corrupt,
        duplicate,
        reorder,
        ..Default::default()
    });
}

fn faulty_cfg(cfg: RtlConfig) {
    let seed = cfg.seed;
    let r = run(&cfg).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let [lost, corrupted, duplicated, reordered] = r.faults;
    println!(
        "seed {seed}: {lost} lost, {corrupted} corrupted, {duplicated} duplicated, {reordered} \
         reordered; {} timer replays and {} fast retransmits re-sent {} FPDUs; data phase {} \
         clocks",
        r.retx_requests, r.fast_retx, r.retx_fpdus, r.data_cycles
    );
    assert_eq!(r.terminates, 0, "no Terminate");
    assert_eq!(r.disconnect_note, None, "clean disconnect");
    // the faults really happened and the device really resent
    assert!(lost + corrupted + reordered > 0, "faults injected");
    assert!(
        r.retx_requests + r.fast_retx > 0 && r.retx_fpdus > 0,
        "data was replayed"
    );
}

#[test]
fn lossy_link_session_is_byte_exact() {
    faulty(3, 0.03, 0.0, 0.0, 0.0);
}

/// Every Write and Send inline (sizes 1..64, the message in the WQE):
/// a lost inline FPDU is replayed from its WQE's octets in the send ring
/// (`tx_log` records the ring address), byte-exact.
#[test]
fn lossy_link_inline_session_is_byte_exact() {
    faulty_cfg(RtlConfig {
        max_size: 64,
        ops: 12,
        inline: 96,
        seed: 4,
        loss: 0.05,
        ..Default::default()
    });
}

#[test]
fn all_faults_session_is_byte_exact() {
    faulty(5, 0.02, 0.01, 0.02, 0.02);
}

/// The default 256 KiB window under loss: a go-back-N replay of a large
/// flight runs for many round trips of this link, and a segment lost
/// inside it must be replayed again as soon as that replay ends (the RTL's
/// fast retransmit defers the third duplicate ACK that arrives during the
/// replay, `fast_retx`). Without the deferral only the firmware's backed-off
/// timer resent, one hole per RTO, and large messages ran past their budget.
/// Sizes up to this: 1 MiB messages keep the whole 256 KiB window in
/// flight, so a replay is long (with 256 KiB messages none was deferred).
const LARGE_WINDOW_MAX: usize = 1 << 20;
/// A seed whose losses include some inside a replay (8 deferred).
const LARGE_WINDOW_SEED: u64 = 1;

#[test]
fn large_window_loss_inside_a_replay_is_replayed_again() {
    let cfg = RtlConfig {
        max_size: LARGE_WINDOW_MAX,
        ops: 1,
        seed: LARGE_WINDOW_SEED,
        loss: 0.02,
        ..Default::default()
    };
    let r = run(&cfg).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "{} lost; {} timer replays, {} fast retransmits ({} deferred to the end of a replay), \
         {} FPDUs re-sent; data phase {} clocks",
        r.faults[0],
        r.retx_requests,
        r.fast_retx,
        r.fast_retx_deferred,
        r.retx_fpdus,
        r.data_cycles
    );
    assert_eq!(r.terminates, 0, "no Terminate");
    assert_eq!(r.disconnect_note, None, "clean disconnect");
    assert!(
        r.fast_retx_deferred > 0,
        "a loss inside a replay happened and was replayed at its end"
    );
}
