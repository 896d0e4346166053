mod common;
use common::*;
use rnic_fw::arp::{ArpCache, Resolve, RETRY, TRIES};
use rnic_wire::net::{ArpOperation, ArpRepr};
const T0: u64 = 1_000_000;

#[test]
fn answers_requests_for_our_ip_only() {
    let mut h = MockHal::new();
    let c = cfg();
    let mut arp = ArpCache::<4>::new();
    let req = arp_frame(
        ArpOperation::Request,
        PEER_MAC,
        PEER_IP,
        [0; 6],
        OUR_IP,
        [0xFF; 6],
    );
    let Some((_, r)) = parse_arp(&req) else {
        panic!()
    };
    arp.on_arp(&mut h, &c, &r, T0);
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1);
    let (dst, rep) = parse_arp(&sent[0]).unwrap();
    assert_eq!(dst.0, PEER_MAC);
    match rep {
        ArpRepr::EthernetIpv4 {
            operation,
            source_hardware_addr,
            source_protocol_addr,
            target_hardware_addr,
            target_protocol_addr,
        } => {
            assert_eq!(operation, ArpOperation::Reply);
            assert_eq!(source_hardware_addr.0, OUR_MAC);
            assert_eq!(u32::from(source_protocol_addr), OUR_IP);
            assert_eq!(target_hardware_addr.0, PEER_MAC);
            assert_eq!(u32::from(target_protocol_addr), PEER_IP);
        }
        _ => panic!(),
    }
    // The requester was learned.
    assert_eq!(arp.lookup(PEER_IP), Some(PEER_MAC));
    // A request for someone else: no answer.
    let other = arp_frame(
        ArpOperation::Request,
        PEER_MAC,
        PEER_IP,
        [0; 6],
        0x0A00_0009,
        [0xFF; 6],
    );
    let (_, r) = parse_arp(&other).unwrap();
    arp.on_arp(&mut h, &c, &r, T0);
    assert!(h.take_sent().is_empty());
}

#[test]
fn resolves_with_retries_then_unreachable() {
    let mut h = MockHal::new();
    let c = cfg();
    let mut arp = ArpCache::<4>::new();
    let t0 = T0;
    assert_eq!(arp.resolve(&mut h, &c, PEER_IP, t0), Resolve::Pending);
    let sent = h.take_sent();
    assert_eq!(sent.len(), 1);
    let (dst, req) = parse_arp(&sent[0]).unwrap();
    assert_eq!(dst.0, [0xFF; 6]);
    assert!(matches!(
        req,
        ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Request,
            ..
        }
    ));
    // Asking again does not send again.
    assert_eq!(arp.resolve(&mut h, &c, PEER_IP, t0 + 1), Resolve::Pending);
    assert!(h.take_sent().is_empty());
    let mut requests = 1;
    for k in 1..=(TRIES as u64 + 1) {
        arp.poll(&mut h, &c, t0 + k * RETRY);
        requests += h.take_sent().len();
    }
    assert_eq!(requests, TRIES as usize);
    assert_eq!(
        arp.resolve(&mut h, &c, PEER_IP, t0 + 10 * RETRY),
        Resolve::Unreachable
    );
}

#[test]
fn reply_resolves_and_offsubnet_goes_via_gateway() {
    let mut h = MockHal::new();
    let c = cfg();
    let mut arp = ArpCache::<4>::new();
    let (nh, r) = arp.resolve_dst(&mut h, &c, 0x0808_0808, T0);
    assert_eq!((nh, r), (Some(GW_IP), Resolve::Pending));
    let (_, req) = parse_arp(&h.take_sent()[0]).unwrap();
    let ArpRepr::EthernetIpv4 {
        target_protocol_addr,
        ..
    } = req
    else {
        panic!()
    };
    assert_eq!(u32::from(target_protocol_addr), GW_IP);
    let rep = arp_frame(ArpOperation::Reply, GW_MAC, GW_IP, OUR_MAC, OUR_IP, OUR_MAC);
    let (_, r) = parse_arp(&rep).unwrap();
    assert_eq!(arp.on_arp(&mut h, &c, &r, T0), Some(GW_IP));
    assert_eq!(
        arp.resolve_dst(&mut h, &c, 0x0808_0808, T0),
        (Some(GW_IP), Resolve::Mac(GW_MAC))
    );
    // No gateway: off-subnet is unreachable at once.
    let mut c2 = c;
    c2.gateway = 0;
    assert_eq!(
        arp.resolve_dst(&mut h, &c2, 0x0808_0808, T0),
        (None, Resolve::Unreachable)
    );
}

#[test]
fn request_flood_does_not_evict() {
    let mut h = MockHal::new();
    let c = cfg();
    let mut arp = ArpCache::<2>::new();
    arp.set(GW_IP, GW_MAC, T0);
    for i in 0..50u32 {
        let f = arp_frame(
            ArpOperation::Request,
            [2, 0, 0, 1, 0, i as u8],
            0x0A00_0010 + i,
            [0; 6],
            OUR_IP,
            [0xFF; 6],
        );
        let (_, r) = parse_arp(&f).unwrap();
        arp.on_arp(&mut h, &c, &r, T0);
    }
    assert_eq!(arp.lookup(GW_IP), Some(GW_MAC));
    assert!(arp.len() <= 2);
}
