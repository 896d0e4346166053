//! TX at the device's MULPDU limit (`abi::caps::MAX_MULPDU` = 8882, issue 4
//! "full 9000-octet frames"), through the whole `rnic_core` in Verilator: WQEs in host memory,
//! a doorbell, WQE and payload reads through the co-sim's DMA server, frames
//! out on `mac_tx_*`. The rig (`tx_rig`) is shared with `tx_datapath.rs`.
//!
//! The reference is independent of the RTL: WQEs are written with
//! `rnic_wire::abi::wqe::SendWqe::emit`; every frame must pass smoltcp's
//! parsers with IPv4 and TCP checksums checked (`rnic_wire::model::parse_frame`)
//! and its TCP payload must equal, segment for segment, what
//! `rnic_wire::model::TxStream` sends for the same work requests (DDP/RDMAP
//! segmentation, MPA markers and CRC32c, sequence numbers).

mod core_rig;
mod tx_rig;

use rnic_wire::model::MpaSettings;
use tx_rig::*;

/// The largest FPDUs the device sends: EMSS chosen so that
/// `mpa::mulpdu(emss, markers)` is exactly `caps::MAX_MULPDU` (8882: EMSS
/// 8960 of a 9000-octet MTU with markers, 8888 without), CRC on/off ×
/// markers on/off, the start sequence number within 6000 octets before the
/// 2^32 wrap, payload in the rig's identity region (1 GiB TPT pages, so no
/// page end cuts a segment): two full tagged segments first (8868 octets
/// each: `tx_seg` reads each as 4096 + 4096 + 676 octets into consecutive
/// reorder slots, the co-sim DMA server refuses reads over 4096), then
/// random Writes, Sends, Reads and zero-length messages up to 3 segments,
/// MAC back-pressure: every frame equals `TxStream`'s segment (smoltcp
/// parses it with both checksums good, MPA CRC32c and markers in the
/// reference), every completion has status 0, and the longest frame is the
/// full 9000-octet IP MTU (9014 octets with markers: 54 + 8888 + 18 × 4;
/// 8942 without).
#[test]
fn max_mulpdu_frames_match_txstream() {
    use rnic_wire::abi::caps::{MAX_MULPDU, TX_MAX_MTU};
    for (i, &(crc, markers)) in [(true, false), (false, false), (true, true), (false, true)]
        .iter()
        .enumerate()
    {
        let mut rig = Rig::new(300 + i as u64, dma_cfg(17 + i as u64, 40));
        rig.ready_p = 0.8;
        let seq_start = 0u32.wrapping_sub(1 + rig.rng.below(6000) as u32);
        let emss = if markers { 8960 } else { 8888 };
        assert_eq!(rnic_wire::mpa::mulpdu(emss, markers), MAX_MULPDU);
        assert_eq!(MAX_MULPDU, 8882);
        let mpa = MpaSettings {
            crc,
            markers,
            seq_start,
        };
        rig.add_qp(5, 9, mpa, emss, 4);
        assert_eq!(rig.qps[0].tx.mulpdu(), MAX_MULPDU);
        let mut posted = 0;
        // Two full-size tagged segments first, then random work.
        let data = rig.rng.bytes(2 * (MAX_MULPDU as usize - 14));
        let wr = Wr::Write {
            stag: 0x77,
            to: 0x1000,
            data,
        };
        rig.post(0, &wr, true);
        posted += 1;
        rig.doorbell(0);
        let cycles = rig.run(2_000_000);
        let beats = rig.last_beat - rig.first_beat.unwrap() + 1;
        eprintln!(
            "crc {crc} markers {markers}: 2 x {} octets of Write payload: {cycles} clocks to quiet, {beats} clocks first to last beat",
            MAX_MULPDU - 14
        );
        let full = 54 + 8888 + if markers { 18 * 4 } else { 0 };
        assert_eq!(rig.longest, full, "a full segment's frame");
        if markers {
            assert_eq!(
                rig.longest,
                14 + TX_MAX_MTU as usize,
                "a full 9000-MTU frame"
            );
        }
        for _ in 0..3 {
            let n = 1 + rig.rng.below(12) as usize;
            for _ in 0..n {
                let wr = random_wr(&mut rig.rng, 3 * MAX_MULPDU as u64);
                let sig = rig.rng.chance(0.6);
                rig.post(0, &wr, sig);
                posted += 1;
            }
            rig.doorbell(0);
            rig.run(4_000_000);
        }
        eprintln!(
            "crc {crc} markers {markers} emss {emss}: {posted} WRs, {} frames, longest frame {}",
            rig.frames, rig.longest
        );
        assert!(rig.frames > posted as u64);
        assert_eq!(rig.longest, full);
        assert!(rig.qps[0].expect.is_empty(), "every reference segment seen");
    }
}

/// Firmware-port write through the core pins (one clock).
fn fw_write(rig: &mut Rig, addr: u32, v: u32) {
    rig.core.set_fw_valid(1);
    rig.core.set_fw_write(1);
    rig.core.set_fw_addr(addr as u64);
    rig.core.set_fw_wdata(v as u64);
    rig.cycle();
    rig.core.set_fw_valid(0);
    rig.core.set_fw_write(0);
}

/// Firmware-port read through the core pins (one clock, registered answer).
fn fw_read(rig: &mut Rig, addr: u32) -> u32 {
    rig.core.set_fw_valid(1);
    rig.core.set_fw_write(0);
    rig.core.set_fw_addr(addr as u64);
    rig.cycle();
    rig.core.set_fw_valid(0);
    assert_eq!(rig.core.get_fw_rvalid(), 1);
    rig.core.get_fw_rdata() as u32
}

/// A lost long FPDU is retransmitted byte-exact (issue 4: `tx_log`'s replay
/// of an FPDU whose payload takes several DMA reads). MULPDU 8882 (EMSS
/// 8960 with markers, 8888 without), CRC on: a Write of 2 × 8868 + 1000
/// octets, a 5000-octet Send and a 4097-octet Write go out (5 frames, four
/// of them with more than 4096 payload octets, each first transmission
/// equal to `TxStream`'s segment). The peer lost frame 2: it acknowledges
/// frame 1 only (a pure ACK built by `rnic_wire::model::net::ack_frame`, RFC
/// 9293 §3.10.7.4: SND.UNA moves to frame 1's end). The firmware's
/// `RETX_CONN` write then re-sends frames 2..5 (go-back-N, RFC 9293 §3.8.1)
/// and nothing else: every replayed frame must parse with smoltcp (IPv4 and
/// TCP checksums) and carry exactly `TxStream`'s octets for that sequence
/// number — the whole FPDU, MPA CRC32c and markers recomputed (RFC 5044
/// §5/§4) — while the co-sim DMA server refuses any read over 4096 octets
/// (none: the replay reads 4096 + 4096 + 676 for an 8868-octet payload).
/// `RETX_COUNT` = 4, the log is idle afterwards and SND.NXT did not move
/// back.
#[test]
fn lost_long_fpdu_is_replayed_byte_exact() {
    use rnic_wire::abi::caps::{MAX_MULPDU, TX_MAX_SEG_READ};
    use rnic_wire::abi::context::port;
    use rnic_wire::model::net::ack_frame;
    const CONN: u32 = 9;
    for (i, markers) in [false, true].into_iter().enumerate() {
        let mut rig = Rig::new(400 + i as u64, dma_cfg(23 + i as u64, 40));
        rig.ready_p = 0.8;
        let seq_start = 0u32.wrapping_sub(1 + rig.rng.below(20000) as u32);
        let emss = if markers { 8960 } else { 8888 };
        let mpa = MpaSettings {
            crc: true,
            markers,
            seq_start,
        };
        rig.add_qp(5, CONN, mpa, emss, 4);
        assert_eq!(rig.qps[0].tx.mulpdu(), MAX_MULPDU);
        let max_pay = MAX_MULPDU as usize - 14;
        let wrs = [
            Wr::Write {
                stag: 0x77,
                to: 0x1000,
                data: rig.rng.bytes(2 * max_pay + 1000),
            },
            Wr::Send {
                data: rig.rng.bytes(5000),
                se: false,
                inv: None,
            },
            Wr::Write {
                stag: 0x78,
                to: 0x2_0000,
                data: rig.rng.bytes(TX_MAX_SEG_READ as usize + 1),
            },
        ];
        for wr in &wrs {
            rig.post(0, wr, true);
        }
        // the reference's segments, for the replay
        let all: Vec<_> = rig.qps[0].expect.iter().cloned().collect();
        assert_eq!(all.len(), 5);
        let long = all
            .iter()
            .filter(|s| s.payload.len() > TX_MAX_SEG_READ as usize)
            .count();
        assert_eq!(long, 4, "frames with more than 4096 TCP payload octets");
        rig.doorbell(0);
        rig.run(2_000_000);
        assert_eq!(rig.frames, 5);
        let end = rig.qps[0].wire_nxt;

        // frame 2 lost: the peer acknowledges frame 1 only
        let hole = all[1].seq;
        assert_eq!(hole, all[0].seq.wrapping_add(all[0].payload.len() as u32));
        let q = &rig.qps[0];
        let f = ack_frame(&q.peer, &q.local, q.ack, hole);
        rig.macrx.push(f, false);
        rig.run(100_000);
        assert_eq!(
            fw_read(&mut rig, port::RETX_STATUS) >> 16,
            4,
            "log holds frames 2..5 after frame 1 was acknowledged"
        );

        // the firmware's RTO: replay from SND.UNA
        rig.qps[0].expect.extend(all[1..].iter().cloned());
        rig.first_beat = None;
        let t0 = rig.core.cycle();
        fw_write(&mut rig, port::RETX_CONN, CONN);
        rig.run(2_000_000);
        let first = rig.first_beat.expect("replayed frames") - t0;
        let last = rig.last_beat - t0;
        assert_eq!(rig.frames, 9, "frames 2..5 re-sent, nothing else");
        assert_eq!(fw_read(&mut rig, port::RETX_COUNT), 4);
        assert_eq!(
            fw_read(&mut rig, port::RETX_STATUS) & port::RETX_STATUS_BUSY,
            0
        );
        assert_eq!(fw_read(&mut rig, port::RETX_LOST), 0);
        assert_eq!(
            rig.qps[0].wire_nxt, end,
            "the replay ends at the original end"
        );
        rig.core.set_ct_rd_idx(CONN as u64);
        rig.cycle();
        rig.cycle();
        assert_eq!(
            rig.core.get_ct_rd_snd_nxt() as u32,
            end,
            "SND.NXT did not move back"
        );
        let octets: usize = all[1..].iter().map(|s| s.payload.len()).sum();
        eprintln!(
            "markers {markers}: frames 2..5 ({octets} TCP payload octets) re-sent byte-exact: \
             RETX_CONN -> first replayed beat {first} clocks, -> last beat {last} clocks \
             ({:.2} octets/clock at 80 % MAC ready)",
            octets as f64 / (last - first) as f64
        );
    }
}
