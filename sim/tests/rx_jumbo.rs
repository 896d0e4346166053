//! MTU 9000 (issue 3): whole RDMA Writes in 9000-MTU segments through the
//! RX datapath of `rnic_core` in Verilator (FPDUs of up to 8960 octets of
//! TCP payload, one per segment).
//!
//! The rig is `rx_datapath.rs`'s (same independent reference:
//! `rnic_wire::model` framing, `TptEntry::page_of` for the host image)
//! with the frame-size check raised to a 9018-octet jumbo frame.

mod rx_rig;
use rx_rig::*;

/// IPv4 MTU of the link (issue 3).
const MTU: usize = 9000;
/// Ethernet frame of a 9000-octet IP packet: 14 header + 9000 + 4 FCS.
const JUMBO_FRAME: usize = MTU + 14 + 4;
/// TCP payload per segment: MTU - 20 IPv4 - 20 TCP (no options).
const EMSS: u16 = (MTU - 20 - 20) as u16;

/// RDMA Writes of 1 B .. 256 KiB segmented at a 9000 MTU (EMSS 8960), CRC and
/// markers on and off: byte exact in host memory, one placed record per
/// segment, nothing written outside the region, no Terminate.
#[test]
fn jumbo_writes_land_byte_exact() {
    for (k, (crc, markers)) in [(true, false), (true, true), (false, false)]
        .into_iter()
        .enumerate()
    {
        let mut rig = Rig::new(900 + k as u64, crc, markers, EMSS);
        rig.max_frame = JUMBO_FRAME;
        let va = 0x7f00_0000_0000 + rig.rng.below(PAGE);
        let len = 300 * 1024;
        let pd = rig.pd;
        let r = rig.region(5, 0x3C, pd, ACCESS_REMOTE_WRITE, va, len);
        let mut msgs = Vec::new();
        for n in [1usize, 8959, 8960, 8961, 17920, 65536, 256 * 1024] {
            let to = va + rig.rng.below(len - n as u64 + 1);
            let data = rig.rng.bytes(n);
            rig.write_ok(&r, to, &data);
            msgs.push((to, n));
            rig.run(4_000_000);
        }
        rig.check_memory();
        assert!(rig.terms.is_empty(), "{:?}", rig.terms);
        check_placed(&rig.placed, r.stag, &msgs);
        assert_eq!(rig.core.get_cnt_rx_oversize(), 0);
        assert_eq!(rig.core.get_cnt_mpa_span(), 0);
        assert_eq!(rig.core.get_cnt_mpa_pass(), rig.placed.len() as u64);
        // An 8960-octet FPDU (1120 beats) nearly fills the FPDU buffer
        // before its CRC is known (1113 beats at once were measured); the
        // occupancy port, 10 bits before, saturated at 1023.
        assert!(rig.max_buf_beats > 1023, "{}", rig.max_buf_beats);
    }
}
