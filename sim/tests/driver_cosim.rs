//! The driver (`rnic_driver`) on the Verilated `rnic_core` with the real
//! firmware, through [`SimBus`] (one node).
//!
//! References, independent of the RTL and the driver: the ABI parsers of
//! `rnic_wire::abi` (TPT entries, page-list entries, QP contexts, events) on
//! what the firmware wrote into the RTL tables, read back through the
//! firmware port (`fw_*`, `TABLE_CMD` read), and the sim's host memory.

use std::time::Duration;

use rnic_driver::{AccessFlags, Bus, Context, DeviceError, Error, NetConfig, QpState};
use rnic_driver::{DmaMem, Qp};
use rnic_fw::hal::Hal;
use rnic_sim::node::World;
use rnic_sim::sim_bus::{driver_options, SimBus, MAILBOX_TIMEOUT};
use rnic_wire::abi::context::{ConnContext, ConnMode, QpContext, TableId, MPA_CRC_RX, MPA_CRC_TX};
use rnic_wire::abi::mailbox::Opcode;
use rnic_wire::model::net::{data_frame, Endpoint};
use rnic_wire::model::{Message, MpaSettings, TxStream};
use rnic_wire::net::{EthernetFrame, EthernetProtocol, Ipv4Packet, TcpPacket};

/// The connection index the tests bind by hand.
const CONN: u32 = 5;
const LOCAL: Endpoint = Endpoint {
    mac: [0x02, 0, 0, 0, 0, 0x01],
    ip: [10, 0, 0, 1],
    port: 7174,
};
const PEER: Endpoint = Endpoint {
    mac: [0x02, 0, 0, 0, 0, 0x02],
    ip: [10, 0, 0, 2],
    port: 40001,
};

fn net() -> NetConfig {
    NetConfig {
        mac: [0x02, 0, 0, 0, 0, 0x01],
        ip: [10, 0, 0, 1].into(),
        netmask: [255, 255, 255, 0].into(),
        gateway: Some([10, 0, 0, 254].into()),
        mtu: 1500,
    }
}

fn read_table(bus: &SimBus, t: TableId, index: u32) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    let mut w = bus.world().borrow_mut();
    w.nodes[0].fw.hal.read_table(t, index, &mut b).unwrap();
    b.truncate(t.entry_size());
    b
}

fn qpn_of(qp: &Qp<'_, SimBus>) -> u32 {
    qp.qpn()
}

/// A connection in RDMA mode at [`CONN`] (CRC on, no markers) whose
/// receive stream starts at `seq_start`, and QP `qpn` bound to it in Rts.
fn hand_connect(bus: &SimBus, qpn: u32, pd: u32, seq_start: u32) {
    let c = ConnContext {
        mode: ConnMode::Rdma,
        mpa_flags: MPA_CRC_RX | MPA_CRC_TX,
        local_ip: u32::from_be_bytes(LOCAL.ip),
        peer_ip: u32::from_be_bytes(PEER.ip),
        local_port: LOCAL.port,
        peer_port: PEER.port,
        local_mac: LOCAL.mac,
        peer_mac: PEER.mac,
        mss: 1460,
        mulpdu: 1400,
        rcv_nxt: seq_start,
        snd_nxt: 1000,
        snd_una: 1000,
        snd_wnd: 1 << 20,
        rcv_wnd: 1 << 20,
        tx_marker_ref: 1000,
        rx_marker_ref: seq_start,
        qpn,
        ..ConnContext::FREE
    };
    let mut b = [0u8; 64];
    c.emit(&mut b).unwrap();
    let mut w = bus.world().borrow_mut();
    w.nodes[0]
        .fw
        .hal
        .write_table(TableId::Conn, CONN, &b[..TableId::Conn.entry_size()])
        .unwrap();
    drop(w);
    hand_bind(bus, qpn, pd);
    bus.hw().borrow_mut().set_ulp(true);
}

/// QP `qpn` bound to [`CONN`], Rts, in PD `pd` (the RTL's `qp_ram`).
fn hand_bind(bus: &SimBus, qpn: u32, pd: u32) {
    let mut b = [0u8; 64];
    read_table_into(bus, TableId::Qp, qpn, &mut b);
    let mut q = QpContext::parse(&b[..TableId::Qp.entry_size()]).unwrap();
    q.state = QpState::Rts;
    q.pd = pd;
    q.conn = CONN;
    q.emit(&mut b).unwrap();
    let mut w = bus.world().borrow_mut();
    w.nodes[0]
        .fw
        .hal
        .write_table(TableId::Qp, qpn, &b[..TableId::Qp.entry_size()])
        .unwrap();
}

fn read_table_into(bus: &SimBus, t: TableId, index: u32, b: &mut [u8]) {
    let mut w = bus.world().borrow_mut();
    w.nodes[0].fw.hal.read_table(t, index, b).unwrap();
}

/// Sends an RDMA Write from the peer into `mac_rx_*` and clocks until it is
/// placed and the DMA writes landed.
fn rdma_write(bus: &SimBus, tx: &mut TxStream, stag: u32, to: u64, data: &[u8]) -> u32 {
    let segs = tx.send(&Message::Write { stag, to, data }).unwrap();
    let octets: usize = segs.iter().map(|s| s.payload.len()).sum();
    let mut hw = bus.hw().borrow_mut();
    for s in &segs {
        hw.mac_rx
            .push(data_frame(&PEER, &LOCAL, s.seq, 1000, &s.payload), false);
    }
    hw.drain_rx(3000);
    let mut n = 0;
    while !hw.dma.idle() {
        assert!(n < 100_000, "DMA never idle");
        hw.tick();
        n += 1;
    }
    octets as u32
}

/// The highest ACK number (relative to `base`) of the TCP segments the node
/// sent, parsed with smoltcp, and whether every one was addressed LOCAL →
/// PEER; `None` if there were none.
fn last_ack(bus: &SimBus, base: u32) -> Option<(u32, bool)> {
    let mut hw = bus.hw().borrow_mut();
    let mut best: Option<(u32, bool)> = None;
    while let Some(f) = hw.tx_frames.pop_front() {
        let Ok(eth) = EthernetFrame::new_checked(&f[..]) else {
            continue;
        };
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            continue;
        }
        let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else {
            continue;
        };
        let Ok(tcp) = TcpPacket::new_checked(ip.payload()) else {
            continue;
        };
        if !tcp.ack() {
            continue;
        }
        let addressed = tcp.src_port() == LOCAL.port
            && tcp.dst_port() == PEER.port
            && ip.src_addr().octets() == LOCAL.ip
            && ip.dst_addr().octets() == PEER.ip
            && eth.dst_addr().0 == PEER.mac;
        let rel = (tcp.ack_number().0 as u32).wrapping_sub(base);
        best = Some(match best {
            None => (rel, addressed),
            Some((b, ok)) => (b.max(rel), ok && addressed),
        });
    }
    best
}

/// The whole control path through the driver, checked in the RTL tables.
#[test]
fn driver_verbs_on_rtl() {
    let world = World::single().shared();
    let bus = SimBus::new(world.clone(), 0);
    let c0 = bus.cycle();
    let ctx = Context::open_with(bus, driver_options()).expect("open");
    let bus = ctx.bus();
    println!(
        "Context::open: {} clocks ({:?} simulated)",
        bus.cycle() - c0,
        rnic_sim::link::cycle_time(bus.cycle() - c0)
    );
    assert_eq!(ctx.caps().abi_version, rnic_wire::abi::ABI_VERSION);
    ctx.configure(&net()).unwrap();
    // the firmware re-read the configuration the driver wrote into BAR0
    let ifc = *world.borrow().nodes[0].fw.if_config();
    assert_eq!(ifc.mac, net().mac);
    assert_eq!(ifc.ip, u32::from_be_bytes([10, 0, 0, 1]));
    assert_eq!(ifc.mtu, 1500);

    // measured: clocks per mailbox command through the driver
    let t = bus.cycle();
    let n = 20;
    for _ in 0..n {
        ctx.nop().unwrap();
    }
    let nop = (bus.cycle() - t) as f64 / n as f64;

    let pd = ctx.alloc_pd().unwrap();
    let t = bus.cycle();
    let cq = ctx.create_cq(64).unwrap();
    let cq_clocks = bus.cycle() - t;
    let t = bus.cycle();
    let qp = pd.create_qp(&cq, &cq, 16, 16).unwrap();
    let qp_clocks = bus.cycle() - t;
    assert_eq!(qp.state(), QpState::Idle);
    assert_eq!(qp.query().unwrap(), QpState::Idle);
    let qctx = QpContext::parse(&read_table(bus, TableId::Qp, qp.qpn())).unwrap();
    assert_eq!(qctx.state, QpState::Idle);
    assert_eq!(qctx.pd, pd.pdn());

    // a region over 3 pages, starting mid-page: TPT + PBL land in the RTL
    let buf = ctx.alloc_dma(4 * 4096).unwrap();
    let (off, len) = (0x234usize, 2 * 4096 + 100);
    let access = AccessFlags::from_bits(
        rnic_wire::abi::tpt::ACCESS_LOCAL_WRITE | rnic_wire::abi::tpt::ACCESS_REMOTE_WRITE,
    )
    .unwrap();
    let t = bus.cycle();
    let mr = pd.reg_mr(&buf, off, len, access).unwrap();
    let mr_clocks = bus.cycle() - t;
    let va = mr.va();
    // The TPT/PBL tables cannot be read back (docs/rtl.md, "Tables"): check
    // them by behaviour. A connection and the QP's binding to it are set up
    // by hand through the firmware port; RDMA Write frames, framed by
    // rnic_wire's model, go into mac_rx_* and must be placed into the buffer
    // through the page list the driver had the firmware write.
    let seq_start = 0x1234_0000u32;
    hand_connect(bus, qp.qpn(), pd.pdn(), seq_start);
    let mut tx = TxStream::new(
        MpaSettings {
            crc: true,
            markers: false,
            seq_start,
        },
        1460,
    );
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    let stag = mr.rkey();
    let sent = rdma_write(bus, &mut tx, stag, mr.va(), &data);
    // The fast path acknowledges every octet with pure ACKs on mac_tx_*
    // (RFC 9293 §3.10.7.4). Their addresses come from the TX side's
    // per-connection context (tx_ctx), which the firmware-port table write
    // of hand_connect loads like the direct pins do: the ACK number and the
    // addressing are both checked.
    let (ack, addressed) = last_ack(bus, seq_start).expect("pure ACKs on mac_tx_*");
    assert_eq!(ack, sent, "ACK of every stream octet of the write");
    assert!(addressed, "every pure ACK addressed LOCAL → PEER");
    println!(
        "{sent} stream octets acked on mac_tx_* ({} frames, cnt_tx_acks {}); \
         addressed LOCAL → PEER: {addressed}",
        bus.hw().borrow().mac_tx_frames,
        bus.hw().borrow().core.get_cnt_tx_acks()
    );
    let mut got = vec![0u8; 4 * 4096];
    buf.read(0, &mut got).unwrap();
    assert_eq!(&got[off..off + len], &data[..], "placed through the PBL");
    assert!(
        got[..off].iter().all(|&b| b == 0),
        "nothing before the region"
    );
    assert!(got[off + len..].iter().all(|&b| b == 0), "nothing after it");
    {
        let hw = bus.hw().borrow();
        assert!(hw.terms.is_empty(), "{:?}", hw.terms);
        let placed: usize = hw.placed.iter().map(|p| p.2 as usize).sum();
        assert_eq!(placed, len);
        assert!(hw.placed.iter().all(|p| p.0 == stag));
        println!(
            "RDMA Write of {len} octets into the driver's region: {} placement records",
            hw.placed.len()
        );
    }
    // a wrong key: a Terminate, nothing placed (RFC 5040 §7.1, invalid STag)
    rdma_write(bus, &mut tx, stag ^ 0xFF, mr.va(), &[0xEE; 64]);
    buf.read(0, &mut got).unwrap();
    assert_eq!(&got[off..off + len], &data[..]);
    assert_eq!(bus.hw().borrow().terms.len(), 1);

    // firmware refusals are typed errors: Rts needs a connection (only the
    // CM moves a QP there)
    let r = qp.modify(QpState::Rts);
    println!("modify Idle → Rts without a connection: {r:?}");
    assert!(
        matches!(r, Err(Error::Refused(Opcode::ModifyQp, _))),
        "{r:?}"
    );
    let _l = ctx.listen(4000, 1).unwrap();
    let r = ctx.listen(4000, 1).err();
    println!("listen twice on one port: {r:?}");
    assert!(
        matches!(r, Some(Error::Refused(Opcode::Listen, _))),
        "{r:?}"
    );
    let r = ctx.reject(0x00FF_0042, b"no").err();
    println!("reject of an unknown connection: {r:?}");
    assert!(
        matches!(r, Some(Error::Refused(Opcode::Reject, _))),
        "{r:?}"
    );
    qp.modify(QpState::Error).unwrap();
    assert_eq!(qp.query().unwrap(), QpState::Error);
    let qctx = QpContext::parse(&read_table(bus, TableId::Qp, qp.qpn())).unwrap();
    assert_eq!(qctx.state, QpState::Error);

    mr.dereg().unwrap();
    // the STag is gone from the RTL's TPT: a write with it is refused
    // (ModifyQp to Error left the QP binding alone in the RTL's qp_ram? the
    // QP context the firmware wrote has no connection, so rebind by hand)
    hand_bind(bus, qpn_of(&qp), pd.pdn());
    let terms0 = bus.hw().borrow().terms.len();
    rdma_write(bus, &mut tx, stag, va, &[0x55; 64]);
    buf.read(0, &mut got).unwrap();
    assert_eq!(
        &got[off..off + len],
        &data[..],
        "nothing placed after dereg"
    );
    assert_eq!(bus.hw().borrow().terms.len(), terms0 + 1);
    let qpn = qp.qpn();
    qp.destroy().unwrap();
    let qctx = QpContext::parse(&read_table(bus, TableId::Qp, qpn)).unwrap();
    // the firmware forgot the QP (its table shadow keeps the last context:
    // DestroyQp does not rewrite it)
    assert!(world.borrow().nodes[0].fw.qps().get(qpn).is_none());
    println!(
        "QP context in the RTL shadow after destroy: {:?}",
        qctx.state
    );

    println!(
        "mailbox through the driver: Nop {nop:.0} clocks ({:.2} µs), CreateCq {cq_clocks}, \
         CreateQp {qp_clocks}, reg_mr (3 pages: AllocStag+WritePbl+RegMr) {mr_clocks} clocks",
        nop * 6.4 / 1000.0
    );
}

/// A BAR0 read that never answers becomes 0xFFFF_FFFF, which the driver
/// reports as a wrong device ID; a stopped firmware gives the mailbox
/// timeout after about 1 ms of simulated time.
#[test]
fn driver_typed_errors() {
    let world = World::single().shared();
    let mut bus = SimBus::new(world.clone(), 0);
    bus.read_limit = 0;
    // read_limit 0: csr_rvalid is never waited for
    let r = Context::open_with(bus, driver_options());
    assert!(
        matches!(r, Err(Error::Device(DeviceError::BadId(0xFFFF_FFFF)))),
        "{:?}",
        r.err()
    );

    let ctx = Context::open_with(SimBus::new(world.clone(), 0), driver_options()).unwrap();
    world.borrow_mut().nodes[0].fw_running = false;
    let t0 = ctx.bus().now();
    let r = ctx.nop();
    let took = ctx.bus().now() - t0;
    println!("Nop with the firmware stopped: {r:?} after {took:?} simulated");
    assert!(matches!(r, Err(Error::Timeout)), "{r:?}");
    assert!(took >= MAILBOX_TIMEOUT && took < MAILBOX_TIMEOUT + Duration::from_micros(50));
    // running again: the command left pending finishes, the next one works
    world.borrow_mut().nodes[0].fw_running = true;
    ctx.nop().unwrap();
}
