//! Property tests: random interleavings of network events, host commands
//! and time against the firmware; no panic, no stuck state, invariants hold.
mod common;
use common::*;
use proptest::prelude::*;
use rnic_fw::fw::Phase;
use rnic_wire::abi::context::{ConnContext, ConnMode, ExceptionReason, TableId};
use rnic_wire::abi::mailbox::{Command, EventKind, FilterAction, FilterRule, MboxStatus};
use rnic_wire::net::TcpControl;
use std::collections::HashMap;

const S: u64 = 1_000_000;
const PEERS: u32 = 6;
const DENIED: [u32; 2] = [4, 5]; // peers 10.0.0.14 and .15 are always denied

fn peer_ip(p: u32) -> u32 {
    if p == 3 {
        0x0808_0808
    } else {
        0x0A00_000A + p
    } // peer 3 is off-link (via the gateway)
}

#[derive(Debug, Clone)]
enum Op {
    Syn(u32, u16),
    Ack(u32, u16),
    Rst(u32, u16, bool),
    Request(u32, u16),
    Fin(u32, u16),
    Accept,
    Reject,
    Advance(u64),
    Route(u32, u8),
    Connect(u32),
    Disconnect(bool),
    Garbage(Vec<u8>),
    Mailbox(u16, Vec<u8>),
}

fn op() -> impl Strategy<Value = Op> {
    let peer = 0..PEERS;
    let port = 1000u16..1006;
    prop_oneof![
        4 => (peer.clone(), port.clone()).prop_map(|(a, b)| Op::Syn(a, b)),
        3 => (peer.clone(), port.clone()).prop_map(|(a, b)| Op::Ack(a, b)),
        1 => (peer.clone(), port.clone(), any::<bool>()).prop_map(|(a, b, c)| Op::Rst(a, b, c)),
        3 => (peer.clone(), port.clone()).prop_map(|(a, b)| Op::Request(a, b)),
        1 => (peer.clone(), port.clone()).prop_map(|(a, b)| Op::Fin(a, b)),
        2 => Just(Op::Accept),
        1 => Just(Op::Reject),
        3 => (1u64..20_000).prop_map(|ms| Op::Advance(ms * 1000)),
        1 => (peer.clone(), any::<u8>()).prop_map(|(a, m)| Op::Route(a, m)),
        1 => peer.clone().prop_map(Op::Connect),
        1 => any::<bool>().prop_map(Op::Disconnect),
        1 => proptest::collection::vec(any::<u8>(), 0..80).prop_map(Op::Garbage),
        1 => (0u16..0x40, proptest::collection::vec(any::<u8>(), 0..40)).prop_map(|(o, d)| Op::Mailbox(o, d)),
    ]
}

struct World {
    fw: Fw,
    synack: HashMap<(u32, u16), u32>,
    qps: Vec<u32>,
    routes: HashMap<u32, [u8; 6]>,
}

impl World {
    fn new() -> World {
        let mut fw = new_fw();
        cmd(
            &mut fw,
            Command::Listen {
                port: LPORT,
                backlog: 2,
            },
        );
        for (k, p) in DENIED.iter().enumerate() {
            let rule = FilterRule {
                peer_prefix: peer_ip(*p),
                prefix_len: 32,
                local_ports: (0, 65535),
                peer_ports: (0, 65535),
                action: if k == 0 {
                    FilterAction::DenyReset
                } else {
                    FilterAction::DenyDrop
                },
            };
            assert_eq!(
                cmd(
                    &mut fw,
                    Command::FilterSet {
                        index: k as u16,
                        rule
                    }
                )
                .0,
                MboxStatus::Ok
            );
        }
        let qps = (0..3).map(|_| make_qp(&mut fw)).collect();
        World {
            fw,
            synack: HashMap::new(),
            qps,
            routes: HashMap::new(),
        }
    }

    fn seg(p: u32, port: u16, ctl: TcpControl, seq: u32, ack: Option<u32>) -> Vec<u8> {
        let mut s = Seg::new(port, LPORT, ctl, seq, ack);
        s.src_ip = peer_ip(p);
        s.frame()
    }

    fn sniff(&mut self) {
        for o in sent_tcp(&mut self.fw.hal) {
            if o.ctl == TcpControl::Syn && o.ack.is_some() {
                self.synack.insert((o.dst_ip, o.dst_port), o.seq);
            }
        }
        self.fw.hal.sent.clear();
    }

    fn apply(&mut self, op: Op) {
        let fw = &mut self.fw;
        match op {
            Op::Syn(p, port) => rx(fw, Self::seg(p, port, TcpControl::Syn, 100, None)),
            Op::Ack(p, port) => {
                let a = self.synack.get(&(peer_ip(p), port)).map_or(1, |s| s + 1);
                let f = Self::seg(p, port, TcpControl::None, 101, Some(a));
                rx(&mut self.fw, f);
            }
            Op::Rst(p, port, exact) => {
                let f = Self::seg(
                    p,
                    port,
                    TcpControl::Rst,
                    if exact { 101 } else { 150 },
                    None,
                );
                rx(&mut self.fw, f);
            }
            Op::Request(p, port) => {
                let a = self.synack.get(&(peer_ip(p), port)).map_or(1, |s| s + 1);
                let mut s = Seg::new(port, LPORT, TcpControl::Psh, 101, Some(a));
                s.src_ip = peer_ip(p);
                s.payload = mpa_frame(false, 0x10, 2, &[0, 1, 0, 1]);
                rx(&mut self.fw, s.frame());
            }
            Op::Fin(p, port) => {
                let a = self.synack.get(&(peer_ip(p), port)).map_or(1, |s| s + 1);
                let f = Self::seg(p, port, TcpControl::Fin, 101, Some(a));
                rx(&mut self.fw, f);
            }
            Op::Accept | Op::Reject => {
                let req = fw
                    .hal
                    .events
                    .iter()
                    .rev()
                    .find(|e| e.kind == EventKind::ConnectRequest)
                    .copied();
                if let Some(ev) = req {
                    if matches!(op, Op::Accept) {
                        let qpn = self.qps[ev.handle as usize % 3];
                        cmd(
                            fw,
                            Command::Accept {
                                conn_id: ev.handle,
                                qpn,
                                ird: 1,
                                ord: 1,
                                private_data: &[],
                            },
                        );
                    } else {
                        cmd(
                            fw,
                            Command::Reject {
                                conn_id: ev.handle,
                                private_data: &[],
                            },
                        );
                    }
                }
            }
            Op::Advance(us) => {
                fw.hal.now += us;
                fw.poll();
            }
            Op::Route(p, m) => {
                let mac = [2, 0, 0, 0, 1, m];
                let ip = if p == 3 { GW_IP } else { peer_ip(p) };
                cmd(fw, Command::RouteUpdate { ip, mac });
                self.routes.insert(ip, mac);
                // Every live connection through that next hop has the MAC.
                for i in 0..8 {
                    if let Some(c) = fw.conn(i) {
                        if c.next_hop == ip && c.ctx {
                            assert_eq!(fw.hal.conn(i as u32).unwrap().peer_mac, mac);
                        }
                    }
                }
            }
            Op::Connect(p) => {
                let qpn = self.qps[p as usize % 3];
                let (s, _) = cmd(
                    fw,
                    Command::Connect {
                        qpn,
                        peer_ip: peer_ip(p),
                        peer_port: LPORT,
                        local_port: 0,
                        ird: 1,
                        ord: 1,
                        mpa: mpa_opts(2, false),
                        private_data: &[],
                    },
                );
                if DENIED.contains(&p) {
                    assert!(
                        matches!(s, MboxStatus::Denied | MboxStatus::BadState),
                        "{s:?}"
                    );
                }
            }
            Op::Disconnect(abortive) => {
                let qpn = self.qps[0];
                cmd(fw, Command::Disconnect { qpn, abortive });
            }
            Op::Garbage(mut g) => {
                // Random octets behind a valid Ethernet/IPv4 start, and bare.
                rx_as(fw, ExceptionReason::Rst, 3, g.clone());
                let mut f = Seg::new(1000, LPORT, TcpControl::Psh, 101, Some(1)).frame();
                f.truncate(34);
                f.append(&mut g);
                rx(fw, f);
            }
            Op::Mailbox(o, d) => {
                fw.hal.mbox = Some((o, d));
                fw.poll_mailbox();
                assert!(fw.hal.done.pop().is_some());
            }
        }
        self.sniff();
        self.check();
    }

    fn check(&self) {
        let fw = &self.fw;
        assert!(fw.backlog().len() <= 8);
        for l in fw.listeners() {
            assert!(fw.backlog().count(l.id) <= l.backlog.max(1) as usize);
        }
        // Denied peers never get any state.
        for (t, _, data) in &fw.hal.writes {
            if *t == TableId::Conn {
                let c = ConnContext::parse(data).unwrap();
                if c.mode != ConnMode::Free {
                    assert!(
                        !DENIED.iter().any(|p| peer_ip(*p) == c.peer_ip),
                        "context for a denied peer"
                    );
                }
            }
        }
        for i in 0..8 {
            if let Some(c) = fw.conn(i) {
                assert!(!DENIED.iter().any(|p| peer_ip(*p) == c.tcb.tuple.peer_ip));
                // A live context matches the slot.
                if c.ctx {
                    let ctx = fw.hal.conn(i as u32).unwrap();
                    assert_ne!(ctx.mode, ConnMode::Free);
                    assert_eq!(ctx.peer_port, c.tcb.tuple.peer_port);
                }
            }
        }
        // QPs and connections agree.
        for (qpn, q) in fw.qps().iter() {
            if let Some(ci) = q.conn {
                let c = fw.conn(ci as usize).expect("QP bound to a live slot");
                assert_eq!(c.qpn, Some(qpn));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn random_interleavings(ops in proptest::collection::vec(op(), 1..60)) {
        let mut w = World::new();
        for o in ops {
            w.apply(o);
        }
        // No stuck state: with time, everything not in RDMA mode goes away.
        for _ in 0..100 {
            w.fw.hal.now += 10 * S;
            w.fw.poll();
            w.sniff();
        }
        w.check();
        for i in 0..8 {
            if let Some(c) = w.fw.conn(i) {
                prop_assert_eq!(c.phase, Phase::Rdma, "slot {} stuck in {:?}", i, c.phase);
            }
        }
        prop_assert!(w.fw.backlog().is_empty());
        // Every slot that is gone has a free device context.
        for i in 0..8u32 {
            if w.fw.conn(i as usize).is_none() {
                if let Some(ctx) = w.fw.hal.conn(i) {
                    prop_assert_eq!(ctx.mode, ConnMode::Free);
                }
            }
        }
    }
}
