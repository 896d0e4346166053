//! Connection management between two co-simulated nodes (Verilated core +
//! firmware + driver each), the issue-5 cases the other co-sim tests do not
//! cover: MPA Rev 1, markers in one direction only, a rejected request with
//! private data, an abortive close, and a route change in the middle of a
//! transfer. Checked through the driver's events, the connection contexts
//! read back from the RTL (`rnic_wire::abi::context`), the host memory the
//! RTL wrote, and the frames on the link (parsed with smoltcp).

use std::cell::RefCell;
use std::rc::Rc;

use rnic_driver::{
    AccessFlags, DmaMem, EventKind, MpaOptions, Mr, Qp, QpState, RemoteAddr, SendOp, SendWr,
};
use rnic_fw::hal::HalExt;
use rnic_sim::link::LinkConfig;
use rnic_sim::node::World;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{
    connect_pair, expect_event, net_config, open_node, route_switch, run_until, world_pair, PORT,
    READ_DEPTH,
};
use rnic_sim::sim_bus::{SimBus, SimDma};
use rnic_wire::abi::context::{ConnContext, ConnMode, MPA_MARKERS_RX, MPA_MARKERS_TX};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};

type Shared = Rc<RefCell<World>>;

fn mpa(revision: u8, markers: bool) -> MpaOptions {
    MpaOptions {
        revision,
        crc: true,
        markers,
    }
}

/// Two nodes (A = 10.0.0.1, B = 10.0.0.2), each with a PD, a CQ and a QP:
/// `pair!(world, a, b, pd_a, pd_b, qp_a, qp_b)`.
macro_rules! pair {
    ($pcap:expr, $world:ident, $a:ident, $b:ident, $pd_a:ident, $pd_b:ident, $qp_a:ident, $qp_b:ident) => {
        let pcap = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join($pcap);
        let $world: Shared = world_pair(LinkConfig::default(), Some(&pcap)).unwrap();
        let $a = open_node(&$world, 0, 1500).unwrap();
        let $b = open_node(&$world, 1, 1500).unwrap();
        let ($pd_a, $pd_b) = ($a.alloc_pd().unwrap(), $b.alloc_pd().unwrap());
        let (cq_a, cq_b) = ($a.create_cq(16).unwrap(), $b.create_cq(16).unwrap());
        let $qp_a = $pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
        let $qp_b = $pd_b.create_qp(&cq_b, &cq_b, 8, 8).unwrap();
    };
}

/// Whether node `n`'s firmware holds no connection.
fn no_conns(w: &World, n: usize) -> bool {
    (0..64).all(|i| w.nodes[n].fw.conn(i).is_none())
}

/// The RTL connection context of node `n`'s one live connection.
fn live_conn(world: &Shared, n: usize) -> Option<ConnContext> {
    let mut w = world.borrow_mut();
    let fw = &mut w.nodes[n].fw;
    let slot = (0..64).find(|&i| fw.conn(i).is_some())?;
    fw.hal.read_conn(slot as u32).ok()
}

/// Octets node `n`'s RTL placed so far (`settled`: counted only once its
/// DMA writes have all reached host memory, else 0).
fn placed(world: &Shared, n: usize, settled: bool) -> usize {
    let w = world.borrow();
    let hw = w.nodes[n].hw.borrow();
    if settled && !hw.dma.idle() {
        return 0;
    }
    hw.placed.iter().map(|p| p.2 as usize).sum()
}

/// A `len`-octet source region on `ctx` (random octets) and a target region
/// on `to`, each in the given PD.
struct Regions<'a> {
    src: &'a SimDma,
    mr_src: Mr<'a, SimBus>,
    dst: &'a SimDma,
    mr_dst: Mr<'a, SimBus>,
    data: Vec<u8>,
}

fn regions<'a>(
    src: &'a SimDma,
    pd_src: &'a rnic_driver::Pd<'a, SimBus>,
    dst: &'a SimDma,
    pd_dst: &'a rnic_driver::Pd<'a, SimBus>,
    seed: u64,
) -> Regions<'a> {
    let acc = |x| AccessFlags::from_bits(x).unwrap();
    let len = src.len();
    let data = Rng::new(seed).bytes(len);
    src.write(0, &data).unwrap();
    Regions {
        src,
        mr_src: pd_src.reg_mr(src, 0, len, acc(ACCESS_LOCAL_WRITE)).unwrap(),
        dst,
        mr_dst: pd_dst
            .reg_mr(dst, 0, len, acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE))
            .unwrap(),
        data,
    }
}

/// An RDMA Write of the whole source region into the target (node `n_to`),
/// checked byte-exact; `mid` runs once about half of it is placed.
fn write_and_check(
    world: &Shared,
    qp: &Qp<'_, SimBus>,
    r: &Regions,
    n_to: usize,
    mut mid: impl FnMut(),
) {
    let len = r.data.len();
    let sge = [r.mr_src.sge(0, len as u32).unwrap()];
    let before = placed(world, n_to, false);
    qp.post_send(&[SendWr {
        wr_id: 1,
        op: SendOp::RdmaWrite(RemoteAddr {
            addr: r.mr_dst.va(),
            rkey: r.mr_dst.rkey(),
        }),
        sges: &sge,
        signaled: false,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .unwrap();
    let budget = 200_000 + 4 * len as u64;
    run_until(world, budget, |_| {
        placed(world, n_to, false) >= before + len / 2
    })
    .unwrap_or_else(|c| panic!("half of the Write not placed after {c} clocks"));
    mid();
    run_until(world, budget, |_| placed(world, n_to, true) >= before + len)
        .unwrap_or_else(|c| panic!("Write not placed after {c} clocks"));
    let mut got = vec![0u8; len];
    r.dst.read(0, &mut got).unwrap();
    let bad = (0..len).find(|&i| got[i] != r.data[i]);
    assert_eq!(bad, None, "first wrong octet of the Write");
    let _ = r.src;
}

/// MPA Rev 1 (RFC 5044 §7.1; no IRD/ORD block): both sides see Rev 1 and
/// data flows.
#[test]
fn mpa_rev1_connects_and_carries_data() {
    pair!("cm_rev1.pcap", world, a, b, pd_a, pd_b, qp_a, qp_b);
    let (_creq, est) =
        connect_pair(&a, &qp_a, &b, &qp_b, mpa(1, false), b"rev1?", b"rev1!").unwrap();
    assert_eq!((est.mpa_revision, est.crc), (1, true));
    let (src, dst) = (a.alloc_dma(40_000).unwrap(), b.alloc_dma(40_000).unwrap());
    let r = regions(&src, &pd_a, &dst, &pd_b, 1);
    write_and_check(&world, &qp_a, &r, 1, || {});
}

/// Markers per direction (RFC 5044 §7.1: M asks for markers on what the
/// sender of the frame receives): A asks, B does not, so B → A carries
/// markers and A → B does not; Writes both ways land byte-exact.
#[test]
fn markers_in_one_direction_only() {
    pair!("cm_markers.pcap", world, a, b, pd_a, pd_b, qp_a, qp_b);
    let (_creq, est) = connect_pair(&a, &qp_a, &b, &qp_b, mpa(2, true), b"", b"").unwrap();
    assert!(est.markers, "A's Established reports markers in use");
    let (ca, cb) = (live_conn(&world, 0).unwrap(), live_conn(&world, 1).unwrap());
    assert_eq!(
        (
            ca.mpa_flags & (MPA_MARKERS_TX | MPA_MARKERS_RX),
            cb.mpa_flags & (MPA_MARKERS_TX | MPA_MARKERS_RX)
        ),
        (MPA_MARKERS_RX, MPA_MARKERS_TX),
        "A receives markers, B sends them"
    );
    let (src, dst) = (a.alloc_dma(30_000).unwrap(), b.alloc_dma(30_000).unwrap());
    let r = regions(&src, &pd_a, &dst, &pd_b, 2);
    write_and_check(&world, &qp_a, &r, 1, || {});
    let (src, dst) = (b.alloc_dma(30_000).unwrap(), a.alloc_dma(30_000).unwrap());
    let r = regions(&src, &pd_b, &dst, &pd_a, 3);
    write_and_check(&world, &qp_b, &r, 0, || {});
}

/// B rejects (RFC 5044 §7.1.1: the Reply with R set) with private data: A
/// gets Rejected with it, its QP stays out of RTS, and neither side keeps a
/// connection context.
#[test]
fn rejected_request_returns_private_data() {
    pair!("cm_reject.pcap", world, a, b, pd_a, pd_b, qp_a, qp_b);
    let _ = (&pd_a, &pd_b, &qp_b);
    let _l = b.listen(PORT, 4).unwrap();
    let params = rnic_driver::ConnectParams {
        peer_ip: net_config(2, 1500).ip,
        peer_port: PORT,
        local_port: 0,
        ird: READ_DEPTH,
        ord: READ_DEPTH,
        mpa: mpa(2, false),
    };
    qp_a.connect(&params, b"may I?").unwrap();
    let req = expect_event(&b, EventKind::ConnectRequest, "B").unwrap();
    assert_eq!(req.private_data, b"may I?");
    b.reject(req.handle, b"no, thanks").unwrap();
    let rej = expect_event(&a, EventKind::Rejected, "A").unwrap();
    assert_eq!(rej.private_data, b"no, thanks");
    assert_ne!(qp_a.query().unwrap(), QpState::Rts);
    // The stream closes behind the reject (FIN both ways; the side that
    // closed first then sits in TIME-WAIT, RFC 9293 §3.6): neither device
    // context ever reaches RDMA mode.
    let _ = run_until(&world, 50_000, |_| false);
    for n in 0..2 {
        if let Some(c) = live_conn(&world, n) {
            assert_ne!(c.mode, ConnMode::Rdma, "node {n}");
        }
    }
}

/// An abortive close (RST, RFC 9293 §3.10.7): B's host hears the
/// connection is gone, B's QP leaves RTS, no context stays on either side.
#[test]
fn abortive_close_reaches_the_peer() {
    pair!("cm_abort.pcap", world, a, b, pd_a, pd_b, qp_a, qp_b);
    let _ = (&pd_a, &pd_b);
    connect_pair(&a, &qp_a, &b, &qp_b, mpa(2, false), b"", b"").unwrap();
    qp_a.disconnect(true).unwrap();
    let ev = expect_event(&b, EventKind::ConnectionLost, "B").unwrap();
    println!("B: {:?} status {:#x}", ev.kind, ev.status);
    assert_ne!(qp_b.query().unwrap(), QpState::Rts);
    run_until(&world, 200_000, |w| no_conns(w, 0) && no_conns(w, 1))
        .unwrap_or_else(|c| panic!("contexts still live after {c} clocks"));
}

/// A route change in the middle of a transfer (the host tells A's device
/// that B's next hop is now another MAC): from one frame on, every frame A
/// sends to B carries the new destination MAC, never the old one again (the
/// switch is atomic for the connection), and the Write completes byte-exact
/// with nothing lost (no replay). The link delivers by port, not by MAC,
/// like a switch that learned both; B's RTL does not filter on the
/// destination MAC.
#[test]
fn route_change_mid_transfer_loses_nothing() {
    const NEW_HOP: [u8; 6] = [0x02, 0, 0, 0, 0, 0x42];
    pair!("cm_route.pcap", world, a, b, pd_a, pd_b, qp_a, qp_b);
    connect_pair(&a, &qp_a, &b, &qp_b, mpa(2, false), b"", b"").unwrap();
    let len = 256 << 10;
    let (src, dst) = (a.alloc_dma(len).unwrap(), b.alloc_dma(len).unwrap());
    let r = regions(&src, &pd_a, &dst, &pd_b, 4);
    let mut switched = 0;
    write_and_check(&world, &qp_a, &r, 1, || {
        switched = a.route_update(net_config(2, 1500).ip, NEW_HOP).unwrap();
    });
    assert_eq!(switched, 1, "one live connection used that next hop");
    assert_eq!(live_conn(&world, 0).unwrap().peer_mac, NEW_HOP);
    let replays = world.borrow().nodes[0].hw.borrow().retx_writes.len();
    assert_eq!(replays, 0, "nothing lost: no replay");
    // A's frames on the link: old MAC, then only the new one
    let pcap = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cm_route.pcap");
    let (old, new) = route_switch(&world, &pcap, net_config(2, 1500).mac, NEW_HOP)
        .unwrap_or_else(|e| panic!("{e}"));
    println!("A's IPv4 frames: {old} to the old next hop, then {new} to the new one");
    assert!(old > 0 && new > 10, "the switch was mid-transfer");
}
