//! Two co-simulated nodes, each a Verilated `rnic_core` with its own real
//! firmware and its own driver (`rnic_driver` over [`SimBus`]), joined by the
//! sim's link model (with a pcap). Every frame a node's firmware sends
//! (`raw_tx_*`) is carried into the other node's `mac_rx_*`; the TCP
//! handshake and MPA negotiation run through the RTL exception path.
//!
//! References, independent of the RTL and the firmware: the ABI parsers
//! (`ConnContext` read back through the firmware port, events through the
//! driver), and tshark decoding the pcap's MPA frames (without tshark:
//! skipped outside CI, a failure under CI).

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[path = "../../testdata/support.rs"]
mod support;

use rnic_driver::{
    Bus, CmEvent, ConnectParams, Context, Error, EventKind, FilterAction, FilterRule, MpaOptions,
    NetConfig, QpState,
};
use rnic_fw::hal::HalExt;
use rnic_sim::link::{cycle_time, Link, LinkConfig};
use rnic_sim::node::World;
use rnic_sim::sim_bus::{driver_options, SimBus};
use rnic_wire::abi::context::{ConnContext, ConnMode};

const IP_A: [u8; 4] = [10, 0, 0, 1];
const IP_B: [u8; 4] = [10, 0, 0, 2];
const PORT: u16 = 5000;
const DENIED_PORT: u16 = 5001;
const WAIT: Duration = Duration::from_millis(20);

fn net(last: u8, ip: [u8; 4]) -> NetConfig {
    NetConfig {
        mac: [0x02, 0, 0, 0, 0, last],
        ip: ip.into(),
        netmask: [255, 255, 255, 0].into(),
        gateway: None,
        mtu: 1500,
    }
}

fn pair(pcap: &str) -> (std::rc::Rc<std::cell::RefCell<World>>, PathBuf) {
    let mut link = Link::new(LinkConfig::default());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(pcap);
    link.pcap_to(&path).unwrap();
    (World::pair(link).shared(), path)
}

/// Waits for the next event of `kind` (other kinds are printed and skipped).
fn expect_event(ctx: &Context<SimBus>, kind: EventKind, who: &str) -> CmEvent {
    loop {
        let ev = ctx
            .get_cm_event(WAIT)
            .unwrap_or_else(|e| panic!("{who}: no {kind:?} event: {e:?}"));
        println!(
            "{who} @ {:?}: {:?} handle {:#x} status {} peer {}:{} ird/ord {}/{} rev {} crc {} pd {:?}",
            ctx.bus().now(),
            ev.kind,
            ev.handle,
            ev.status,
            ev.peer_ip,
            ev.peer_port,
            ev.ird,
            ev.ord,
            ev.mpa_revision,
            ev.crc,
            String::from_utf8_lossy(&ev.private_data)
        );
        if ev.kind == kind {
            return ev;
        }
    }
}

/// The live connection contexts of node `n`, read back through its
/// firmware port.
fn conn_contexts(world: &std::cell::RefCell<World>, n: usize) -> Vec<(usize, ConnContext)> {
    let mut w = world.borrow_mut();
    let node = &mut w.nodes[n];
    let slots: Vec<usize> = (0..64).filter(|&i| node.fw.conn(i).is_some()).collect();
    slots
        .into_iter()
        .map(|i| (i, node.fw.hal.read_conn(i as u32).unwrap()))
        .collect()
}

fn tshark(path: &PathBuf) {
    if !support::have_tool("tshark") {
        return;
    }
    let out = std::process::Command::new("tshark")
        .args(["-r"])
        .arg(path)
        .args([
            "--disable-protocol",
            "rpcordma",
            "-Y",
            "iwarp_mpa",
            "-V",
            "-O",
            "iwarp_mpa",
        ])
        .output()
        .expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.starts_with("Frame ")
                || l.contains("frame header")
                || l.contains("flag")
                || l.contains("Reserved")
                || l.contains("Revision")
                || l.contains("Private data")
        })
        .collect();
    println!("tshark on {}:\n{}", path.display(), lines.join("\n"));
    // RFC 5044 §7.1 Request/Reply, revision 2; RFC 6581 §9.1: the
    // private data starts with IRD and ORD (14 bits each, after the
    // two control bits), then the ULP's own octets.
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    assert!(text.contains("Request frame header"), "no MPA Request");
    assert!(text.contains("Reply frame header"), "no MPA Reply");
    assert_eq!(text.matches("Revision: 2").count(), 2);
    assert_eq!(text.matches("CRC flag: True").count(), 2);
    let find = |tail: &str| -> (u16, u16) {
        let line = text
            .lines()
            .find(|l| l.contains("Private data: ") && l.trim_end().ends_with(tail))
            .unwrap_or_else(|| panic!("no private data ending in {tail}"));
        let h = line.trim().trim_start_matches("Private data: ");
        let w = |k: usize| u16::from_str_radix(&h[4 * k..4 * k + 4], 16).unwrap() & 0x3FFF;
        (w(0), w(1))
    };
    let (ird, ord) = find(&hex(b"hello from A"));
    assert_eq!((ird, ord), (4, 2), "MPA Request IRD/ORD");
    let (ird, ord) = find(&hex(b"welcome, A"));
    assert_eq!((ird, ord), (2, 4), "MPA Reply IRD/ORD");
    println!("tshark: Request IRD 4 ORD 2 'hello from A'; Reply IRD 2 ORD 4 'welcome, A'");
}

/// B listens, A connects with private data, B accepts: TCP + MPA rev 2
/// (enhanced, IRD/ORD) through the RTL exception path on both nodes; both
/// contexts end in RDMA mode with matching sequence numbers; a graceful
/// disconnect closes both.
#[test]
fn connect_accept_disconnect() {
    let (world, pcap) = pair("fw_two_node_connect.pcap");
    let a = Context::open_with(SimBus::new(world.clone(), 0), driver_options()).unwrap();
    // B's event queue has 2 entries: its 3 events (request, established,
    // closed) wrap it, so the RTL EQ writer's phase rule is exercised
    let b_opts = rnic_driver::Options {
        eq_entries: 2,
        ..driver_options()
    };
    let b = Context::open_with(SimBus::new(world.clone(), 1), b_opts).unwrap();
    a.configure(&net(1, IP_A)).unwrap();
    b.configure(&net(2, IP_B)).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (cq_a, cq_b) = (a.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 8, 8).unwrap();
    let _l = b.listen(PORT, 4).unwrap();

    let wall = Instant::now();
    let c0 = world.borrow().cycle();
    let params = ConnectParams {
        peer_ip: Ipv4Addr::from(IP_B),
        peer_port: PORT,
        local_port: 0,
        ird: 4,
        ord: 2,
        mpa: MpaOptions {
            revision: 2,
            crc: true,
            markers: false,
        },
    };
    let pd_req = b"hello from A";
    qp_a.connect(&params, pd_req).unwrap();
    let req = expect_event(&b, EventKind::ConnectRequest, "B");
    assert_eq!(req.private_data, pd_req, "B sees A's private data");
    assert_eq!(req.peer_ip, Ipv4Addr::from(IP_A));
    assert_eq!(req.mpa_revision, 2);
    assert_eq!((req.ird, req.ord), (4, 2), "A's IRD/ORD (RFC 6581 §3)");
    b.accept(req.handle, &qp_b, 2, 4, b"welcome, A").unwrap();
    let est_b = expect_event(&b, EventKind::Established, "B");
    let est_a = expect_event(&a, EventKind::Established, "A");
    let c1 = world.borrow().cycle();
    assert_eq!(est_a.private_data, b"welcome, A", "A sees B's reply data");
    assert!(est_a.crc && est_b.crc, "CRC negotiated (RFC 5044 §7.1)");
    assert_eq!(qp_a.query().unwrap(), QpState::Rts);
    assert_eq!(qp_b.query().unwrap(), QpState::Rts);

    // both connection contexts in the RTL: RDMA mode, sequence numbers match
    let ca = conn_contexts(&world, 0);
    let cb = conn_contexts(&world, 1);
    assert_eq!((ca.len(), cb.len()), (1, 1), "{ca:?} {cb:?}");
    let (ia, ka) = &ca[0];
    let (ib, kb) = &cb[0];
    println!("A conn[{ia}]: {ka:?}\nB conn[{ib}]: {kb:?}");
    assert_eq!((ka.mode, kb.mode), (ConnMode::Rdma, ConnMode::Rdma));
    assert_eq!(ka.snd_nxt, kb.rcv_nxt, "A → B stream");
    assert_eq!(kb.snd_nxt, ka.rcv_nxt, "B → A stream");
    assert_eq!(
        (ka.snd_una, kb.snd_una),
        (ka.snd_nxt, kb.snd_nxt),
        "all acked"
    );
    assert_eq!(ka.tx_marker_ref, kb.rx_marker_ref, "SeqStart A → B");
    assert_eq!(kb.tx_marker_ref, ka.rx_marker_ref, "SeqStart B → A");
    assert_eq!((ka.local_port, ka.peer_port), (kb.peer_port, kb.local_port));
    assert_eq!(kb.local_port, PORT);

    // graceful disconnect from A
    qp_a.disconnect(false).unwrap();
    // B (passive close) gets Closed once its FIN is acked; A (active close)
    // gets Closed when it enters TIME-WAIT, whose 2 s (RFC 9293 §3.6: 2 MSL)
    // then keep only the 4-tuple in A's firmware.
    expect_event(&b, EventKind::Closed, "B");
    expect_event(&a, EventKind::Closed, "A");
    assert_eq!(qp_a.query().unwrap(), QpState::Idle);
    let mut rounds = 0;
    loop {
        let state = {
            let w = world.borrow();
            let c = w.nodes[0]
                .fw
                .conn(*ia)
                .expect("A's connection in TIME-WAIT");
            c.tcb.state
        };
        if state == rnic_fw::tcp::TcpState::TimeWait {
            break;
        }
        assert!(rounds < 10_000, "A never reached TIME-WAIT: {state:?}");
        world.borrow_mut().round();
        rounds += 1;
    }
    assert!(
        conn_contexts(&world, 1).is_empty(),
        "B freed its connection"
    );
    let ka = world.borrow_mut().nodes[0]
        .fw
        .hal
        .read_conn(*ia as u32)
        .unwrap();
    println!(
        "A after close: TIME-WAIT, RTL context mode {:?}; B: no connection",
        ka.mode
    );
    assert_ne!(
        ka.mode,
        ConnMode::Rdma,
        "A's fast path is off after the close"
    );
    let c2 = world.borrow().cycle();
    // written by the RTL's one EQ writer (cpl_write), none lost
    let (written, lost) = {
        let w = world.borrow();
        let hw = w.nodes[1].hw.borrow();
        (
            hw.core.get_cnt_rxs_event(),
            hw.core.get_cnt_rxs_eq_overflow(),
        )
    };
    assert_eq!(
        (written, lost),
        (3, 0),
        "B's events through a 2-entry queue"
    );
    assert_eq!(b.spurious_events(), 0);
    let secs = wall.elapsed().as_secs_f64();
    let rounds = world.borrow().rounds;
    println!(
        "connect → established: {} clocks ({:?} simulated); disconnect → closed: {} clocks; \
         two nodes + firmware + drivers: {} clocks per node in {secs:.2} s ({:.0} clocks/s per node, \
         {rounds} rounds)",
        c1 - c0,
        cycle_time(c1 - c0),
        c2 - c1,
        c2 - c0,
        (c2 - c0) as f64 / secs
    );
    {
        let mut w = world.borrow_mut();
        let link = w.link.as_mut().unwrap();
        link.flush_pcap().unwrap();
        println!(
            "link: A→B {:?}\n      B→A {:?}",
            link.stats(rnic_sim::link::Side::A),
            link.stats(rnic_sim::link::Side::B)
        );
    }
    tshark(&pcap);

    // speed: the world idling (both firmwares polled, two models, the link)
    let (c, t) = (world.borrow().cycle(), Instant::now());
    for _ in 0..5000 {
        world.borrow_mut().round();
    }
    let clocks = world.borrow().cycle() - c;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "two nodes + firmware idle: {clocks} clocks per node in {secs:.3} s: {:.0} clocks/s per node, \
         {:.0} model clocks/s in all ({:.1} clocks per round)",
        clocks as f64 / secs,
        2.0 * clocks as f64 / secs,
        clocks as f64 / 5000.0
    );
}

/// A's connect to B's filtered port (MPA rev 2, CRC, IRD/ORD 1).
fn to_denied_port() -> ConnectParams {
    ConnectParams {
        peer_ip: Ipv4Addr::from(IP_B),
        peer_port: DENIED_PORT,
        local_port: 0,
        ird: 1,
        ord: 1,
        mpa: MpaOptions {
            revision: 2,
            crc: true,
            markers: false,
        },
    }
}

/// A filter rule on B denies a port: no context on B, A's connect fails
/// with a clear error.
#[test]
fn filtered_port_refused() {
    let (world, _) = pair("fw_two_node_filter.pcap");
    let a = Context::open_with(SimBus::new(world.clone(), 0), driver_options()).unwrap();
    let b = Context::open_with(SimBus::new(world.clone(), 1), driver_options()).unwrap();
    a.configure(&net(1, IP_A)).unwrap();
    b.configure(&net(2, IP_B)).unwrap();
    let _l = b.listen(DENIED_PORT, 4).unwrap();
    b.filter_set(
        0,
        FilterRule {
            peer_prefix: 0,
            prefix_len: 0,
            local_ports: (DENIED_PORT, DENIED_PORT),
            peer_ports: (0, u16::MAX),
            action: FilterAction::DenyReset,
        },
    )
    .unwrap();
    let pd_a = a.alloc_pd().unwrap();
    let cq_a = a.create_cq(16).unwrap();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    qp_a.connect(&to_denied_port(), b"let me in").unwrap();
    let ev = loop {
        let ev = a.get_cm_event(WAIT).expect("A gets an answer");
        println!("A: {:?} status {}", ev.kind, ev.status);
        if ev.kind != EventKind::CqCompletion {
            break ev;
        }
    };
    // B answered the SYN with a RST (DenyReset): a refusal (RFC 9293
    // §3.10.7.3, RST in SYN-SENT), not a lost connection
    assert_eq!(ev.kind, EventKind::Refused, "{ev:?}");
    assert_ne!(qp_a.query().unwrap(), QpState::Rts);
    assert!(conn_contexts(&world, 1).is_empty(), "no context on B");
    assert!(b.filter_stats(0).unwrap() >= 1, "the rule counted the SYN");
    // B never saw a request
    assert!(matches!(
        b.get_cm_event(Duration::from_micros(100)),
        Err(Error::Timeout)
    ));
    println!("filter rule 0 hits on B: {}", b.filter_stats(0).unwrap());
}

/// A DenyDrop rule on B: A's SYN is dropped in silence. B creates no
/// context, answers nothing (no SYN-ACK, no RST), raises no connection
/// request, and the rule counts the SYN; A hears nothing back (its SYN
/// retransmissions run out only after seconds of simulated time — that part
/// is covered by the firmware's host tests, `firmware/tests/fw.rs`).
#[test]
fn filtered_peer_dropped_in_silence() {
    use rnic_sim::link::Side;
    let (world, _) = pair("fw_two_node_filter_drop.pcap");
    let a = Context::open_with(SimBus::new(world.clone(), 0), driver_options()).unwrap();
    let b = Context::open_with(SimBus::new(world.clone(), 1), driver_options()).unwrap();
    a.configure(&net(1, IP_A)).unwrap();
    b.configure(&net(2, IP_B)).unwrap();
    let _l = b.listen(DENIED_PORT, 4).unwrap();
    b.filter_set(
        0,
        FilterRule {
            peer_prefix: u32::from_be_bytes(IP_A),
            prefix_len: 32,
            local_ports: (0, u16::MAX),
            peer_ports: (0, u16::MAX),
            action: FilterAction::DenyDrop,
        },
    )
    .unwrap();
    let sent_by_b = |w: &std::rc::Rc<std::cell::RefCell<World>>| {
        w.borrow().link.as_ref().unwrap().stats(Side::B).sent
    };
    let b_before = sent_by_b(&world);
    let pd_a = a.alloc_pd().unwrap();
    let cq_a = a.create_cq(16).unwrap();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    qp_a.connect(&to_denied_port(), b"let me in").unwrap();
    // 300 us of simulated time: ARP (about 2 us over this link) and the SYN
    // are long done; a SYN-ACK or RST would have arrived within 20 us.
    loop {
        match a.get_cm_event(Duration::from_micros(300)) {
            Err(Error::Timeout) => break,
            Ok(ev) if ev.kind == EventKind::CqCompletion => continue,
            other => panic!("A must hear nothing back, got {other:?}"),
        }
    }
    let a_sent = world.borrow().link.as_ref().unwrap().stats(Side::A).sent;
    let b_sent = sent_by_b(&world) - b_before;
    println!("A sent {a_sent} frames, B sent {b_sent} since the rule");
    assert!(a_sent >= 2, "A sent its ARP request and SYN ({a_sent})");
    // B's only frame is its ARP reply: ARP is below the TCP filter
    assert!(b_sent <= 1, "B answered the SYN ({b_sent} frames)");
    assert!(conn_contexts(&world, 1).is_empty(), "no context on B");
    assert!(b.filter_stats(0).unwrap() >= 1, "the rule counted the SYN");
    assert!(matches!(
        b.get_cm_event(Duration::from_micros(50)),
        Err(Error::Timeout)
    ));
    assert_ne!(qp_a.query().unwrap(), QpState::Rts);
}
