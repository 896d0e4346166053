//! TX datapath of `rnic_core` in Verilator: WQEs in host memory, a doorbell,
//! WQE and payload reads through the co-sim's DMA server, frames out on
//! `mac_tx_*`.
//!
//! The reference is independent of the RTL: WQEs are written with
//! `rnic_wire::abi::wqe::SendWqe::emit`; every frame must pass smoltcp's
//! parsers with IPv4 and TCP checksums checked (`rnic_wire::model::parse_frame`)
//! and its TCP payload must equal, segment for segment, what
//! `rnic_wire::model::TxStream` sends for the same work requests (DDP/RDMAP
//! segmentation, MPA markers and CRC32c, sequence numbers).

mod core_rig;
mod tx_rig;

use std::time::Instant;

use rnic_wire::model::MpaSettings;
use tx_rig::*;

/// The ORD the core's test pins give a QP (`rd_track::ORD_MAX`).
const TEST_PIN_ORD: usize = 8;

/// Random Writes, Sends (SE, Invalidate), Reads and zero-length messages on
/// one QP, for CRC on/off × markers on/off, SeqStart just below 2^32 so the
/// stream wraps, a ring of 16 that wraps, random MAC back-pressure: every
/// frame equals the reference's segment.
#[test]
fn frames_match_txstream() {
    for (i, &(crc, markers)) in [(true, false), (false, false), (true, true), (false, true)]
        .iter()
        .enumerate()
    {
        let mut rig = Rig::new(100 + i as u64, dma_cfg(7 + i as u64, 40));
        rig.ready_p = 0.7;
        let seq_start = 0u32.wrapping_sub(1 + rig.rng.below(6000) as u32);
        let emss = [1460, 536, 1460, 900][i];
        let mpa = MpaSettings {
            crc,
            markers,
            seq_start,
        };
        rig.add_qp(5, 9, mpa, emss, 4);
        let (mut posted, mut reads) = (0, 0);
        for _ in 0..4 {
            // At most a ring's worth (16) outstanding.
            let n = 1 + rig.rng.below(16) as usize;
            for _ in 0..n {
                // The rig answers no Read Request, so at most the QP's ORD
                // (8, what the core's test pins set) Reads may be posted:
                // a ninth would wait for a Read Response forever (RFC 5040
                // §6.2). (The random stream depends on the run's timing:
                // the MAC back-pressure draws from the same generator.)
                let wr = loop {
                    let wr = random_wr(&mut rig.rng, 5000);
                    if matches!(wr, Wr::Read { .. }) {
                        if reads == TEST_PIN_ORD {
                            continue;
                        }
                        reads += 1;
                    }
                    break wr;
                };
                let sig = rig.rng.chance(0.6);
                rig.post(0, &wr, sig);
                posted += 1;
            }
            rig.doorbell(0);
            rig.run(2_000_000);
        }
        eprintln!(
            "crc {crc} markers {markers} emss {emss}: {posted} WRs, {} frames, snd_nxt {:#x}",
            rig.frames,
            rig.qps[0].tx.seq()
        );
        assert!(rig.frames > posted as u64);
    }
}

/// 64 QPs on 64 connections, 3 messages each, every doorbell in 64
/// consecutive clocks: all work completes, every stream matches its
/// reference.
#[test]
fn doorbell_storm_64_qps() {
    let mut rig = Rig::new(5, dma_cfg(3, 60));
    rig.ready_p = 0.9;
    for q in 0..64 {
        let mpa = MpaSettings {
            crc: q % 2 == 0,
            markers: q % 3 == 0,
            seq_start: rig.rng.next_u32(),
        };
        rig.add_qp(q, 63 - q, mpa, 1460, 3);
    }
    for qi in 0..64 {
        for _ in 0..3 {
            let wr = random_wr(&mut rig.rng, 3000);
            rig.post(qi, &wr, true);
        }
    }
    for qi in 0..64 {
        rig.doorbell(qi);
    }
    let t = rig.run(3_000_000);
    eprintln!("storm: 64 QPs x 3 WRs, {} frames in {t} clocks", rig.frames);
}

/// Measurements (printed): doorbell → first MAC beat; 64 KiB RDMA Writes
/// (goodput against the wire limit); 64-octet RDMA Writes (message rate);
/// Verilator clocks per second. Always-ready MAC, default DMA (500 ns).
#[test]
fn measure_latency_goodput_rate() {
    let mpa = MpaSettings {
        crc: true,
        markers: false,
        seq_start: 0x1000,
    };
    // Doorbell → first beat.
    let mut rig = Rig::new(1, dma_cfg(1, 0));
    rig.add_qp(0, 0, mpa, 1460, 8);
    let data = rig.rng.bytes(64);
    rig.post(
        0,
        &Wr::Write {
            stag: 1,
            to: 0,
            data,
        },
        false,
    );
    let t0 = rig.core.cycle();
    rig.doorbell(0);
    rig.run(100_000);
    let lat = rig.first_beat.unwrap() - t0;
    eprintln!(
        "doorbell -> first MAC beat: {lat} clocks (DMA read latency {})",
        rig.dma.config().read_latency
    );

    // 64 KiB Writes.
    let mut rig = Rig::new(2, dma_cfg(2, 0));
    rig.add_qp(0, 0, mpa, 1460, 8);
    let n = 16;
    for i in 0..n {
        let data = rig.rng.bytes(65536);
        rig.post(
            0,
            &Wr::Write {
                stag: 1,
                to: i * 65536,
                data,
            },
            false,
        );
    }
    let wall = Instant::now();
    let c0 = rig.core.cycle();
    rig.doorbell(0);
    rig.run(10_000_000);
    let secs = wall.elapsed().as_secs_f64();
    let cyc = rig.last_beat + 1 - rig.first_beat.unwrap();
    let octets = n * 65536;
    // Wire limit: 1440 payload octets per 1514-octet frame, + FCS 4,
    // preamble 8, IFG 12 = 1538 octet times at 8 octets per clock.
    let frames = rig.frames;
    let wire = 8.0 * octets as f64 / (frames as f64 * 1538.0);
    eprintln!(
        "64 KiB Writes: {octets} octets in {frames} frames, {cyc} clocks first->last beat: \
         {:.3} octets/clock ({:.2} Gb/s at 156.25 MHz); wire limit {:.3} octets/clock; \
         Verilator {:.0} clocks/s",
        octets as f64 / cyc as f64,
        octets as f64 / cyc as f64 * 8.0 * 0.15625,
        wire,
        (rig.core.cycle() - c0) as f64 / secs
    );

    // 64-octet Writes.
    let mut rig = Rig::new(3, dma_cfg(3, 0));
    rig.add_qp(0, 0, mpa, 1460, 9);
    let n = 400;
    for i in 0..n {
        let data = rig.rng.bytes(64);
        rig.post(
            0,
            &Wr::Write {
                stag: 1,
                to: i * 64,
                data,
            },
            false,
        );
    }
    rig.doorbell(0);
    rig.run(1_000_000);
    let cyc = rig.last_beat + 1 - rig.first_beat.unwrap();
    // Frame: 54 + FPDU (2 + 14 + 64 + 4) = 138 octets, + 24 on the wire.
    eprintln!(
        "64 B Writes: {n} in {cyc} clocks: {:.1} clocks/message ({:.2} M msg/s at 156.25 MHz); \
         wire limit {:.2} clocks/message",
        cyc as f64 / n as f64,
        156.25 / (cyc as f64 / n as f64),
        162.0 / 8.0
    );
}

/// The peer sends 60 data segments on `mac_rx` while the QP sends Writes:
/// pure ACK frames come out, each byte-equal to `ack_frame` with the
/// connection's sequence number on the wire at that point and a rising ACK
/// number; they are coalesced (fewer ACKs than segments) and the last frame
/// (a pure ACK, or a data frame carrying it) acknowledges everything (RFC
/// 9293 §3.10.7.4).
#[test]
fn acks_for_received_segments() {
    let mut rig = Rig::new(9, dma_cfg(9, 20));
    rig.core.set_rx_pay_ready(1);
    let mpa = MpaSettings {
        crc: true,
        markers: false,
        seq_start: 0xFFFF_F000,
    };
    rig.add_qp(3, 7, mpa, 1460, 4);
    rig.peer_sends(0, 60);
    for _ in 0..8 {
        let wr = random_wr(&mut rig.rng, 6000);
        rig.post(0, &wr, false);
    }
    rig.doorbell(0);
    rig.run(2_000_000);
    let q = &rig.qps[0];
    let acks = q.acks.len();
    eprintln!(
        "60 segments in, {} data frames out, {acks} pure ACKs (last ack {:#x}, rcv_nxt {:#x})",
        rig.frames,
        q.acks.last().map_or(0, |a| a.1),
        q.ack
    );
    assert!(acks > 0 && acks < 60, "coalesced ACKs");
    assert_eq!(q.last_ack, q.ack, "everything acknowledged");
    assert_eq!(rig.core.get_cnt_tx_acks() as usize, acks);
    assert_eq!(rig.core.get_cnt_rx_fast(), 60);
}
