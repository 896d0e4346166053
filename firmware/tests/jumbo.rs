//! MULPDU against the firmware's limit (`mpa::FW_MAX_MULPDU` = the
//! device's `abi::caps::MAX_MULPDU` = 8882, the MULPDU of a 9000-octet
//! MTU's EMSS with markers, RFC 5044 §8; not 4110, one DMA read's payload:
//! the device reads a longer FPDU's payload in pieces) and the
//! receive-window policy (`mpa::Agreement::mulpdu_in_window`), through the
//! scripted Hal: a jumbo peer's MSS gives a capped MULPDU in the connection
//! context, a normal MSS gives the RFC 5044 §4.5 value untouched, a small
//! peer window gives FPDUs of which 3 fit it.
//!
//! | our MTU | peer MSS | peer window | context MSS | MULPDU | why |
//! |---|---|---|---|---|---|
//! | 9000 | 8960 | large | 8960 | 8882 | formula 8954, capped at `FW_MAX_MULPDU` |
//! | 1500 | 8960 | large | 1460 | 1454 | our EMSS |
//! | 9000 | 1460 | large | 1460 | 1454 | the peer's EMSS |
//! | 9000 | 8888 / 8892 / 8884 | large | same | 8882 / 8882 / 8878 | at the cap |
//! | 9000 | 4116 / 4120 / 4112 | large | same | 4110 / 4114 / 4106 | one DMA read's payload (4110) is no cap |
//! | 9000 | 8960 | 256 KiB (`DEVICE_RX_WINDOW`) | 8960 | 8882 | the cap: the default window holds many |
//! | 9000 | 8960 | 12 KiB | 8960 | 4090 | 3 FPDUs of 4096 octets in the window |
//! | 9000 | 8960 | 12 KiB, markers | 8960 | 4058 | 4096 − 6 − 8 × 4 |
//! | 9000 | 8960 | 0 | 8960 | 1454 | floor `MULPDU_WINDOW_FLOOR` |
//! | 1500 | 1460 | 3000 | 1460 | 1454 | floor (no window lowers below it) |
mod common;
use common::*;
use rnic_fw::fw::DEVICE_RX_WINDOW;
use rnic_fw::mpa::{Agreement, FPDUS_IN_WINDOW, FW_MAX_MULPDU, MULPDU_WINDOW_FLOOR};
use rnic_fw::Config;
use rnic_wire::abi::caps::{MAX_MULPDU, TX_MAX_MTU};
use rnic_wire::abi::context::{ConnMode, RtrKind};

fn fw_with_mtu(mtu: u16) -> Fw {
    let mut hal = MockHal::new();
    hal.cfg.mtu = mtu;
    Fw::new(hal, Config::default())
}

/// Our MTU 9000 and a jumbo peer (Linux siw on a 9000-MTU link, MSS 8960,
/// a large window): EMSS 8960 would give MULPDU 8954 (RFC 5044 §4.5
/// without markers), above what the device sends; the context carries the
/// firmware's limit 8882 instead (`FW_MAX_MULPDU` = the device's
/// `MAX_MULPDU`: full 9000-octet frames), and the MSS itself is kept.
#[test]
fn jumbo_peer_mulpdu_capped_at_device_limit() {
    let mut fw = fw_with_mtu(TX_MAX_MTU);
    passive_rdma_mss(&mut fw, 8960);
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(ctx.mode, ConnMode::Rdma);
    assert_eq!(ctx.mss, 8960);
    assert_eq!(rnic_wire::mpa::mulpdu(8960, false), 8954);
    assert_eq!(ctx.mulpdu, FW_MAX_MULPDU);
    assert_eq!(ctx.mulpdu, 8882);
    const { assert!(FW_MAX_MULPDU == MAX_MULPDU) };
}

/// A jumbo peer on our 1500 link: EMSS is ours (1460), nothing to cap.
#[test]
fn jumbo_peer_on_normal_link_untouched() {
    let mut fw = fw_with_mtu(1500);
    passive_rdma_mss(&mut fw, 8960);
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!((ctx.mss, ctx.mulpdu), (1460, 1454));
}

/// Normal MSS on a jumbo link: EMSS 1460, MULPDU 1454 as the formula says.
#[test]
fn normal_peer_on_jumbo_link_untouched() {
    let mut fw = fw_with_mtu(TX_MAX_MTU);
    passive_rdma_mss(&mut fw, 1460);
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!((ctx.mss, ctx.mulpdu), (1460, 1454));
}

/// Just below and above the limit: EMSS 8888 gives exactly 8882 (kept),
/// EMSS 8892 gives 8886 (capped to 8882), 8884 gives 8878; around 4110,
/// one DMA read's payload, the formula's values are kept (4120 gives 4114).
#[test]
fn mulpdu_at_the_limit() {
    for (mss, want) in [
        (8888u16, 8882u16),
        (8892, 8882),
        (8884, 8878),
        (4116, 4110),
        (4120, 4114),
        (4112, 4106),
    ] {
        let mut fw = fw_with_mtu(TX_MAX_MTU);
        passive_rdma_mss(&mut fw, mss);
        let ctx = fw.hal.conn(0).unwrap();
        assert_eq!((ctx.mss, ctx.mulpdu), (mss, want), "MSS {mss}");
    }
}

fn agreement(markers: bool) -> Agreement {
    Agreement {
        revision: 2,
        crc: true,
        markers_tx: markers,
        markers_rx: markers,
        ird: 1,
        ord: 1,
        peer_ird: 1,
        peer_ord: 1,
        rtr: RtrKind::Write,
        rtr_tx: false,
        rtr_rx: true,
    }
}

/// The window policy: a peer offering a 12 KiB receive window gets
/// FPDUs of which `FPDUS_IN_WINDOW` (3) fit it (each FPDU, markers
/// included, at most 4096 octets of sequence space, checked with
/// `rnic_wire::mpa::fpdu_len` and the marker count); a large window leaves
/// the EMSS value; a tiny or closed one stops at the floor.
#[test]
fn mulpdu_window_policy() {
    assert_eq!(FPDUS_IN_WINDOW, 3);
    for markers in [false, true] {
        let a = agreement(markers);
        let small = 12 << 10;
        let m = a.mulpdu_in_window(8960, small);
        assert_eq!(m, if markers { 4058 } else { 4090 });
        let fpdu = rnic_wire::mpa::fpdu_len(m as usize);
        let wire = fpdu + if markers { 4 * fpdu.div_ceil(508) } else { 0 };
        assert!(3 * wire <= small as usize, "{wire}");
        // our own default window takes full jumbo FPDUs
        assert_eq!(a.mulpdu_in_window(8960, DEVICE_RX_WINDOW), a.mulpdu(8960));
        assert_eq!(a.mulpdu_in_window(8960, 1 << 20), a.mulpdu(8960));
        assert_eq!(a.mulpdu_in_window(8960, 0), MULPDU_WINDOW_FLOOR);
        assert_eq!(a.mulpdu_in_window(1460, 3000), 1454.min(a.mulpdu(1460)));
        assert_eq!(a.mulpdu_in_window(600, 0), a.mulpdu(600));
    }
}
