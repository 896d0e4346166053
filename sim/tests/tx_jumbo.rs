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
