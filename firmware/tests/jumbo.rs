//! MULPDU against the device limit (`abi::caps::MAX_MULPDU`), through the
//! scripted Hal: a jumbo peer's MSS gives a capped MULPDU in the connection
//! context, a normal MSS gives the RFC 5044 §4.5 value untouched.
mod common;
use common::*;
use rnic_fw::Config;
use rnic_wire::abi::caps::{MAX_MULPDU, TX_MAX_MTU};
use rnic_wire::abi::context::ConnMode;

fn fw_with_mtu(mtu: u16) -> Fw {
    let mut hal = MockHal::new();
    hal.cfg.mtu = mtu;
    Fw::new(hal, Config::default())
}

/// Our MTU 9000 and a jumbo peer (Linux siw on a 9000-MTU link, MSS 8960):
/// EMSS 8960 would give MULPDU 8954 (RFC 5044 §4.5 without markers), which
/// the device cannot send; the context carries the device limit instead,
/// and the MSS itself is kept.
#[test]
fn jumbo_peer_mulpdu_capped_at_device_limit() {
    let mut fw = fw_with_mtu(TX_MAX_MTU);
    passive_rdma_mss(&mut fw, 8960);
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(ctx.mode, ConnMode::Rdma);
    assert_eq!(ctx.mss, 8960);
    assert_eq!(rnic_wire::mpa::mulpdu(8960, false), 8954);
    assert_eq!(ctx.mulpdu, MAX_MULPDU);
    assert_eq!(ctx.mulpdu, 4110);
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

/// Just below and above the limit: EMSS 4116 gives exactly 4110 (kept),
/// EMSS 4120 gives 4114 (capped to 4110).
#[test]
fn mulpdu_at_the_limit() {
    for (mss, want) in [(4116u16, 4110u16), (4120, 4110), (4112, 4106)] {
        let mut fw = fw_with_mtu(TX_MAX_MTU);
        passive_rdma_mss(&mut fw, mss);
        let ctx = fw.hal.conn(0).unwrap();
        assert_eq!((ctx.mss, ctx.mulpdu), (mss, want), "MSS {mss}");
    }
}
