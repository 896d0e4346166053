//! The firmware image on the RISC-V core (`rnic-sim run --fw cpu`): each
//! node is a Verilated `rnic_core` and a Verilated `rv32_core` running the
//! ELF that `make firmware-elf` builds (the one the board's block RAM
//! holds), its peripheral bus on the core's firmware port. The same
//! scenarios as with the firmware built for the host: connect (ARP, TCP,
//! MPA), transfer byte-exact, graceful close, the connection filter, a
//! route change under load, a lost segment replayed on the firmware's
//! retransmission timer. Checked through the driver, the host memory,
//! the connection contexts read from the device, and the frames on the
//! link. The core takes no trap and makes no stray bus access.
//!
//! The image is built by the test (quick when current); without the
//! RISC-V target the tests fail.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use rnic_driver::{EventKind, FilterAction, FilterRule, QpState, RetxTimer};
use rnic_sim::cpu_fw::CpuStats;
use rnic_sim::link::LinkConfig;
use rnic_sim::node::{FwKind, World};
use rnic_sim::rtl_run::{
    self, a_conn_context, connect_pair, connect_params, connected_pair, net_config, open_node,
    route_switch, run_until, tcp_of, world_pair_with, write_a_to_b, RtlConfig, MPA_REV2_CRC, PORT,
};

type Shared = Rc<RefCell<World>>;

/// How long an answer through the cores' firmware may take (simulated):
/// each step of a handshake waits for a poll of the peer's firmware.
const WAIT: Duration = Duration::from_millis(5);

fn cpu_pair(pcap: &str) -> Shared {
    let pcap = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(pcap);
    world_pair_with(LinkConfig::default(), Some(&pcap), FwKind::Cpu)
        .unwrap_or_else(|e| panic!("the firmware image on the RISC-V core: {e}"))
}

fn cpu_stats(world: &Shared, n: usize) -> CpuStats {
    let w = world.borrow();
    let hw = w.nodes[n].hw.borrow();
    hw.cpu
        .as_ref()
        .expect("the node has its firmware on the core")
        .stats
}

/// The core ran the firmware's poll loop, took no trap and kept to the
/// firmware port.
fn check_cores(world: &Shared) {
    for n in 0..2 {
        let s = cpu_stats(world, n);
        println!("node {n}: {s:?}");
        assert_eq!(s.first_trap, None, "node {n}'s core trapped");
        assert_eq!(s.stray, 0, "node {n}'s core left the firmware port");
        assert!(s.polls > 10 && s.retired > 10_000, "node {n} polled: {s:?}");
    }
}

/// Next CM event on `ctx` that is not a completion notice.
fn cm_event(
    ctx: &rnic_driver::Context<rnic_sim::sim_bus::SimBus>,
    who: &str,
) -> rnic_driver::CmEvent {
    loop {
        let ev = ctx
            .get_cm_event(WAIT)
            .unwrap_or_else(|e| panic!("{who}: no CM event: {e:?}"));
        if ev.kind != EventKind::CqCompletion {
            return ev;
        }
    }
}

/// The default scenario with both firmwares on their cores: connect with
/// private data both ways, RDMA Write, Send/Recv and RDMA Read from 1 B to
/// 64 KiB, each byte-exact with the octets around it unchanged, then a
/// graceful close seen by B.
#[test]
fn session_connects_transfers_and_closes() {
    let report = rtl_run::run(&RtlConfig {
        fw: FwKind::Cpu,
        max_size: 64 << 10,
        ops: 1,
        pcap: Some(
            std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cpu_fw_session.pcap"),
        ),
        ..RtlConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    print!("{}", report.render());
    assert_eq!(report.disconnect_note, None, "B saw the graceful close");
    assert_eq!(report.terminates, 0);
    assert!(report.read_note.is_none(), "{:?}", report.read_note);
    assert_eq!(report.rows.len(), 3 * 17, "every operation at every size");
    // what A's context says the handshake agreed, read through the port
    // while A's core waited at its next poll
    assert_eq!(report.mss, 1460);
    assert_eq!(report.mulpdu, rnic_wire::mpa::mulpdu(1460, false));
    let cpu = report.cpu_fw.expect("both firmwares on their cores");
    for s in cpu {
        assert_eq!((s.traps, s.stray), (0, 0), "{s:?}");
        assert!(s.boot_cycles().is_some_and(|b| b > 0));
    }
}

/// B's filter refuses a port with a RST (the rule counts the SYN; A sees
/// the refusal); once the rules are cleared the same connect succeeds.
#[test]
fn filter_refuses_then_admits() {
    let world = cpu_pair("cpu_fw_filter.pcap");
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let _l = b.listen(PORT, 4).unwrap();
    b.filter_set(
        0,
        FilterRule {
            peer_prefix: 0,
            prefix_len: 0,
            local_ports: (PORT, PORT),
            peer_ports: (0, u16::MAX),
            action: FilterAction::DenyReset,
        },
    )
    .unwrap();
    let pd_a = a.alloc_pd().unwrap();
    let pd_b = b.alloc_pd().unwrap();
    let cq_a = a.create_cq(16).unwrap();
    let cq_b = b.create_cq(16).unwrap();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    qp_a.connect(&connect_params(MPA_REV2_CRC), b"let me in")
        .unwrap();
    let ev = cm_event(&a, "A");
    assert_eq!(ev.kind, EventKind::Refused, "{ev:?}");
    assert_ne!(qp_a.query().unwrap(), QpState::Rts);
    assert!(b.filter_stats(0).unwrap() >= 1, "the rule counted the SYN");
    assert!(
        matches!(
            b.get_cm_event(Duration::from_micros(200)),
            Err(rnic_driver::Error::Timeout)
        ),
        "B never saw a request"
    );
    drop(_l);
    b.filter_clear().unwrap();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 8, 8).unwrap();
    connect_pair(&a, &qp_a, &b, &qp_b, MPA_REV2_CRC, b"again", b"welcome").unwrap();
    assert_eq!(qp_a.query().unwrap(), QpState::Rts);
    check_cores(&world);
}

type Ctx = rnic_driver::Context<rnic_sim::sim_bus::SimBus>;
type Pd<'a> = rnic_driver::Pd<'a, rnic_sim::sim_bus::SimBus>;
type Qp<'a> = rnic_driver::Qp<'a, rnic_sim::sim_bus::SimBus>;

/// Two nodes with their firmware on the cores, opened and configured;
/// `before` runs on A's and B's contexts before A connects a QP to B's;
/// then `body` gets the world, both contexts and PDs, and A's QP.
fn connected(
    pcap: &str,
    before: impl FnOnce(&Shared, &Ctx, &Ctx),
    body: impl FnOnce(&Shared, &Pd<'_>, &Pd<'_>, &Qp<'_>),
) {
    let world = cpu_pair(pcap);
    connected_pair(
        &world,
        |a, b| before(&world, a, b),
        |pd_a, pd_b, qp_a| body(&world, pd_a, pd_b, qp_a),
    );
    check_cores(&world);
}

/// A route change in the middle of a 2 MiB RDMA Write (the mailbox command
/// takes a few of the firmware's polls, so the Write must outlast them):
/// from one frame on, A's frames to B carry the new next hop's MAC and
/// never the old one, the connection's context holds it, and the Write
/// completes byte-exact with no replay.
#[test]
fn route_change_mid_transfer() {
    const NEW_HOP: [u8; 6] = [0x02, 0, 0, 0, 0, 0x42];
    connected(
        "cpu_fw_route.pcap",
        |_, _, _| {},
        |world, pd_a, pd_b, qp_a| {
            let a = pd_a.context();
            write_a_to_b(world, pd_a, pd_b, qp_a, 2 << 20, || {
                let switched = a.route_update(net_config(2, 1500).ip, NEW_HOP).unwrap();
                assert_eq!(switched, 1, "one live connection used that next hop");
            });
            assert_eq!(a_conn_context(world, qp_a.qpn()).unwrap().peer_mac, NEW_HOP);
            assert!(
                world.borrow().nodes[0].hw.borrow().retx_writes.is_empty(),
                "nothing lost: no replay"
            );
            let pcap =
                std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cpu_fw_route.pcap");
            let (old, new) = route_switch(world, &pcap, net_config(2, 1500).mac, NEW_HOP)
                .unwrap_or_else(|e| panic!("{e}"));
            println!("A's IPv4 frames: {old} to the old next hop, then {new} to the new one");
            assert!(old > 0 && new > 10, "the switch was mid-transfer");
        },
    );
}

/// A's firmware's retransmission timer (RFC 6298, `rnic_fw::retx`) on its
/// core: the host sets a 200 µs RTO (`set_retx_timer`; the image's own is
/// 1 s), fast retransmit is off at A, and the link drops the second data
/// segment of an 8 KiB RDMA Write. A's firmware must write the connection
/// into `RETX_CONN` after the RTO, the RTL replays, and the Write lands
/// byte-exact.
#[test]
fn lost_segment_replayed_on_the_firmware_timer() {
    let timer = RetxTimer {
        initial: Duration::from_micros(200),
        min: Duration::from_micros(200),
        max: Duration::from_millis(2),
        max_retries: 8,
    };
    let before = |world: &Shared, a: &Ctx, b: &Ctx| {
        a.set_retx_timer(&timer).unwrap();
        b.set_retx_timer(&timer).unwrap();
        // the driver refuses a timer out of order without asking the device
        let bad = RetxTimer {
            min: Duration::from_millis(1),
            ..timer
        };
        assert!(matches!(
            a.set_retx_timer(&bad),
            Err(rnic_driver::Error::InvalidInput(
                rnic_driver::InputError::RetxTimer
            ))
        ));
        world.borrow().nodes[0]
            .hw
            .borrow_mut()
            .core
            .set_fast_retx_en(0);
    };
    connected("cpu_fw_retx.pcap", before, |world, pd_a, pd_b, qp_a| {
        let data_segs = Rc::new(RefCell::new(0u32));
        let seen = data_segs.clone();
        world.borrow_mut().tx_hook = Some(Box::new(move |side, _, f| {
            if side == rnic_sim::link::Side::A && tcp_of(f).is_some_and(|(_, _, n)| n > 0) {
                *seen.borrow_mut() += 1;
                return *seen.borrow() != 2;
            }
            true
        }));
        write_a_to_b(world, pd_a, pd_b, qp_a, 8192, || {});
        world.borrow_mut().tx_hook = None;
        let retx = world.borrow().nodes[0].hw.borrow().retx_writes.clone();
        println!(
            "A's data segments sent: {}; RETX_CONN writes {retx:?}",
            data_segs.borrow()
        );
        assert!(!retx.is_empty(), "A's firmware asked for the replay");
        assert!(*data_segs.borrow() > 6, "the replay re-sent the hole");
    });
}

/// The image's log, read as a probe would: each core's stores into the
/// RTT control block and up buffer of the ELF it runs (`CpuFw::rtt_snoop`),
/// decoded with the ELF's defmt table (`rnic_sim::fw_log`). A connect
/// logs the MPA negotiation's result and the connection established on
/// both nodes, each with the peer, within the 4 KiB buffer (nothing
/// dropped, nothing undecodable).
#[test]
fn connect_is_logged_over_rtt() {
    let path = rnic_fw::image::build_elf().unwrap_or_else(|e| panic!("{e}"));
    let elf = std::fs::read(&path).unwrap();
    let layout = rnic_sim::fw_log::RttLayout::from_elf(&elf).unwrap();
    assert_eq!(layout.size, 4096, "{layout:x?}");
    let dmem = rnic_sim::cpu_fw::DMEM..rnic_sim::cpu_fw::DMEM + rnic_sim::cpu_fw::DMEM_BYTES;
    assert!(dmem.contains(&layout.control) && dmem.contains(&layout.buffer));

    let world = cpu_pair("cpu_fw_log.pcap");
    for n in &world.borrow().nodes {
        let mut hw = n.hw.borrow_mut();
        hw.cpu.as_mut().unwrap().rtt_snoop(&elf).unwrap();
    }
    connected_pair(&world, |_, _| {}, |_, _, _| {});
    // the last messages leave the core within a poll or two
    run_until(&world, 50_000, |_| false).ok();
    let ip = |i| net_config(i, 1500).ip.to_string();
    for (n, peer) in [(0, ip(2)), (1, ip(1))] {
        let w = world.borrow();
        let mut hw = w.nodes[n].hw.borrow_mut();
        let cpu = hw.cpu.as_mut().unwrap();
        let lines = cpu.rtt_lines();
        for l in &lines {
            println!("node {n}: {l}");
        }
        let octets = cpu.rtt_octets().unwrap();
        println!("node {n}: {octets} octets of log");
        assert!(octets < 1024, "boot and a connect fit the buffer with room");
        assert_eq!(cpu.rtt_losses(), Some((0, 0)), "node {n}");
        let has = |level: &str, parts: &[&str]| {
            lines.iter().any(|l| {
                l.level == Some(level)
                    && l.timestamp.is_some()
                    && parts.iter().all(|p| l.message.contains(p))
            })
        };
        assert!(
            has("INFO", &["conn 0: MPA rev 2, CRC on", "RTR"]),
            "node {n}: the MPA result is logged"
        );
        assert!(
            has("INFO", &["conn 0: established with", &peer]),
            "node {n}: established with {peer} is logged"
        );
    }
    check_cores(&world);
}
