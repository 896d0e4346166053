//! The scheduler with two Verilated `rnic_core` reflectors joined by a
//! link: payloads bounce between them a fixed number of hops, each hop a
//! TCP segment of the A-B connection programmed in both cores (the fast
//! path delivers the payload, the reflector re-wraps it); every hop is
//! checked against the payload's id-derived content, and the time taken
//! against the link's delay and rate.

mod common;
use common::{make_frame, Reflector};

use rnic_sim::external::ExternalPort;
use rnic_sim::link::{Link, LinkConfig, Side};
use rnic_sim::sched::{MacIo, Node, Scheduler};

#[test]
fn frames_bounce_between_two_models_over_a_link() {
    const HOPS: u32 = 20;
    let mut a = Reflector::new(HOPS);
    let b = Reflector::b(HOPS);
    for id in 0..8 {
        a.inject.push_back(make_frame(id, 0, 64 + 50 * id as usize));
    }
    let mut s = Scheduler::new();
    let na = s.add_node(Box::new(a));
    let nb = s.add_node(Box::new(b));
    let delay = 300;
    let l = s.connect(
        (na, 0),
        (nb, 0),
        Link::new(LinkConfig {
            delay,
            ..LinkConfig::default()
        }),
    );
    // HOPS even: every frame ends at A (injected by A, hop 0 arrives at B).
    s.node_as_mut::<Reflector>(na).unwrap().expect_finished = 8;
    s.node_as_mut::<Reflector>(nb).unwrap().expect_finished = 0;
    assert!(s.run_until_done(200_000), "frames did not finish");
    let ra = s.node_as::<Reflector>(na).unwrap();
    let rb = s.node_as::<Reflector>(nb).unwrap();
    assert_eq!(ra.damaged + rb.damaged, 0);
    let mut ids: Vec<u64> = ra.finished.iter().map(|f| f.0).collect();
    ids.sort();
    assert_eq!(ids, (0..8).collect::<Vec<_>>());
    // Every hop crossed the link once: at least HOPS x delay cycles.
    let first = ra.finished.iter().map(|f| f.1).min().unwrap();
    assert!(first >= HOPS as u64 * delay, "{first}");
    let st = (s.link(l).stats(Side::A), s.link(l).stats(Side::B));
    assert_eq!(st.0.sent + st.1.sent, 8 * HOPS as u64);
    assert_eq!(ra.m.get_cnt_rx_ok() + rb.m.get_cnt_rx_ok(), 8 * HOPS as u64);
    // A clean link: every hop took the fast path.
    assert_eq!(
        ra.m.get_cnt_rx_fast() + rb.m.get_cnt_rx_fast(),
        8 * HOPS as u64
    );
    assert_eq!(ra.m.get_cnt_rx_exc() + rb.m.get_cnt_rx_exc(), 0);
    assert_eq!(ra.from_exc + rb.from_exc + ra.bad_exc + rb.bad_exc, 0);
}

/// A lossy, corrupting link. The cores drop corrupted frames on their bad
/// FCS; after a lost frame the following segments are out of order, so they
/// go to the exception queue, where the reflector (standing in for the
/// firmware) takes them and resynchronises the connection.
#[test]
fn lossy_link_drops_and_the_core_drops_corrupted_frames() {
    let mut a = Reflector::new(2);
    for id in 0..2000 {
        a.inject.push_back(make_frame(id, 0, 80));
    }
    // The firmware stand-in reads a 134-octet frame out of the exception
    // queue in ~36 clocks: inject slower than that, so that after a loss
    // the slow path catches up instead of overflowing the queue.
    a.inject_every = 60;
    let mut s = Scheduler::new();
    let na = s.add_node(Box::new(a));
    let nb = s.add_node(Box::new(Reflector::b(2)));
    let l = s.connect(
        (na, 0),
        (nb, 0),
        Link::new(LinkConfig {
            delay: 5,
            loss: 0.1,
            corrupt: 0.1,
            seed: 3,
            ..LinkConfig::default()
        }),
    );
    s.run(2000 * 60 + 1000);
    let st = s.link(l).stats(Side::A);
    let rb = s.node_as::<Reflector>(nb).unwrap();
    // B's core took exactly the uncorrupted frames that arrived, and
    // dropped the corrupted ones on their bad FCS.
    assert_eq!(rb.m.get_cnt_rx_ok(), st.delivered - st.corrupted);
    assert_eq!(rb.m.get_cnt_rx_bad_fcs(), st.corrupted);
    // Each good frame went either the fast path or to the firmware, and
    // every one the firmware got was an out-of-order segment of ours.
    let b_fast = rb.m.get_cnt_rx_fast();
    let b_exc = rb.m.get_cnt_rx_exc();
    assert_eq!(
        b_fast + b_exc + rb.m.get_cnt_rx_exc_full(),
        rb.m.get_cnt_rx_ok()
    );
    assert_eq!(rb.m.get_cnt_rx_exc_full(), 0);
    assert_eq!((rb.from_exc, rb.bad_exc), (b_exc, 0));
    assert!(b_exc > 100 && b_fast > 100, "{b_exc} {b_fast}");
    // B echoed every good frame; A finished those that came back intact.
    let back = s.link(l).stats(Side::B);
    assert_eq!(back.sent, st.delivered - st.corrupted);
    let ra = s.node_as::<Reflector>(na).unwrap();
    assert_eq!(ra.finished.len() as u64, back.delivered - back.corrupted);
    assert_eq!(ra.m.get_cnt_rx_exc_full(), 0);
    assert_eq!(ra.bad_exc, 0);
    assert_eq!(ra.m.get_cnt_rx_overflow() + rb.m.get_cnt_rx_overflow(), 0);
    assert_eq!(rb.damaged + ra.damaged, 0);
    assert!(st.lost > 100 && st.corrupted > 100);
}

/// A node that counts hook calls and echoes frames from its port in
/// software (no model): checks the scheduler's plumbing to an external
/// socket port.
#[derive(Default)]
struct Echo {
    polls: u64,
    echoed: u64,
}
impl Node for Echo {
    fn clock(&mut self, _c: u64, macs: &mut [MacIo]) {
        while let Some(f) = macs[0].rx.pop_front() {
            let mut d = f.data;
            d.reverse();
            macs[0].tx.push((d, 0));
            self.echoed += 1;
        }
    }
    fn poll(&mut self, _c: u64) {
        self.polls += 1;
    }
}

#[test]
fn external_peer_through_the_scheduler_and_hooks() {
    use std::io::{Read, Write};
    let port = ExternalPort::listen_tcp("127.0.0.1:0").unwrap();
    let addr = port.local_addr().unwrap();
    let mut s = Scheduler::new();
    s.hook_every = 10;
    s.ext_poll_every = 1;
    let n = s.add_node(Box::<Echo>::default());
    s.attach_external((n, 0), port);
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.write_all(&[0, 0, 0, 3, 1, 2, 3]).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let t = std::time::Instant::now();
    while s.node_as::<Echo>(n).unwrap().echoed == 0 {
        s.run(100);
        assert!(t.elapsed().as_secs() < 10);
    }
    s.run(100);
    // The echoed 3-octet frame leaves padded to the Ethernet minimum (60).
    let mut b = [0u8; 64];
    c.read_exact(&mut b).unwrap();
    assert_eq!(b[..7], [0, 0, 0, 60, 3, 2, 1]);
    assert!(b[7..].iter().all(|&x| x == 0));
    assert_eq!(s.node_as::<Echo>(n).unwrap().polls, s.cycle() / 10);
}
