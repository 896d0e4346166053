//! The real firmware (`rnic_fw::Firmware`) on the Verilated `rnic_core`,
//! through the firmware port (`fw_*`) and BAR0 (`csr_*`), polled between
//! clocks (`rnic_sim::fw_hal`).
//!
//! References, independent of the RTL: the ABI encoders and decoders of
//! `rnic_wire::abi` (mailbox commands and results, contexts), frames built
//! and parsed with smoltcp (`rnic_wire::net` is `smoltcp::wire`) and
//! `rnic_wire::model::net`.

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::fw::{Config, Firmware};
use rnic_fw::hal::{Hal, HalExt};
use rnic_sim::fw_hal::{CoSimHal, FwNode, HostCsr};
use rnic_wire::abi::context::{
    ConnContext, ConnMode, CqContext, CqState, ExceptionReason, TableId,
};
use rnic_wire::abi::csr;
use rnic_wire::abi::mailbox::{Command, MboxStatus, Opcode};
use rnic_wire::model::net::{data_frame, Endpoint};
use rnic_wire::net::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, Ipv4Address,
};

const MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
const IP: [u8; 4] = [10, 0, 0, 1];
const PEER_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x02];
const PEER_IP: [u8; 4] = [10, 0, 0, 2];

type Fw = Firmware<CoSimHal>;

/// A node with the host's configuration written over BAR0, and the firmware
/// started on it.
fn setup() -> (Rc<RefCell<FwNode>>, HostCsr, Fw) {
    let node = FwNode::shared();
    let host = HostCsr { node: node.clone() };
    assert_eq!(host.read(csr::ID), csr::ID_VALUE);
    assert_eq!(host.read(csr::ABI_VERSION), rnic_wire::abi::ABI_VERSION);
    host.write(
        csr::MAC_LO,
        u32::from_le_bytes([MAC[0], MAC[1], MAC[2], MAC[3]]),
    );
    host.write(csr::MAC_HI, u16::from_le_bytes([MAC[4], MAC[5]]) as u32);
    host.write(csr::IPV4_ADDR, u32::from_be_bytes(IP));
    host.write(csr::IPV4_NETMASK, 0xFFFF_FF00);
    host.write(csr::IPV4_GATEWAY, u32::from_be_bytes([10, 0, 0, 254]));
    host.write(csr::MTU, 1500);
    host.write(csr::CTRL, csr::CTRL_ENABLE);
    let fw = Firmware::new(CoSimHal::new(node.clone()), Config::default());
    (node, host, fw)
}

/// Runs a mailbox command: host writes it, the firmware polls until the
/// host sees it finished. Returns (status, result, clocks).
fn command(host: &HostCsr, fw: &mut Fw, cmd: &Command) -> (u32, Vec<u8>, u64) {
    let mut p = [0u8; csr::MBOX_DATA_SIZE as usize];
    let n = cmd.emit(&mut p).unwrap();
    let t0 = host.node.borrow().core.cycle();
    host.mbox_start(cmd.opcode() as u16, &p[..n]);
    for _ in 0..100 {
        fw.poll();
        if let Some((s, r)) = host.mbox_result() {
            let t1 = host.node.borrow().core.cycle();
            return (s, r, t1 - t0);
        }
    }
    panic!("mailbox command {:?} did not finish", cmd.opcode());
}

/// Host config reaches the firmware through the port's mirror; mailbox
/// commands go host → firmware → host with status, result, sequence and
/// interrupt; the CQ context the firmware wrote reads back through the port.
#[test]
fn mailbox_round_trip() {
    let (node, host, mut fw) = setup();
    let ifc = *fw.if_config();
    assert_eq!(ifc.mac, MAC);
    assert_eq!(ifc.ip, u32::from_be_bytes(IP));
    assert_eq!(ifc.netmask, 0xFFFF_FF00);
    assert_eq!(ifc.gateway, 0x0A00_00FE);
    assert_eq!(ifc.mtu, 1500);
    assert_eq!(
        host.read(csr::STATUS) & csr::STATUS_READY,
        0,
        "firmware has not polled yet"
    );
    host.write(csr::INT_MASK, csr::INT_MBOX_DONE);

    // Nop: measured round trip
    let (s, r, nop_clocks) = command(&host, &mut fw, &Command::Nop);
    assert_eq!(s, MboxStatus::Ok as u32);
    assert!(r.is_empty());
    assert_eq!(
        host.read(csr::STATUS) & csr::STATUS_READY,
        csr::STATUS_READY
    );
    assert_eq!(node.borrow().core.get_irq(), 1);
    assert_eq!(host.read(csr::INT_STATUS), csr::INT_MBOX_DONE);
    host.write(csr::INT_STATUS, csr::INT_MBOX_DONE);
    assert_eq!(node.borrow().core.get_irq(), 0);
    assert_eq!(host.read(csr::MBOX_SEQ), 1);

    // CreateCq: the result is the CQ number, the context is in the table
    let cmd = Command::CreateCq {
        ring: 0x1234_5000,
        entries: 256,
    };
    let (s, r, cq_clocks) = command(&host, &mut fw, &cmd);
    assert_eq!(s, MboxStatus::Ok as u32);
    assert_eq!(r.len(), 4);
    let cqn = u32::from_le_bytes(r[..4].try_into().unwrap());
    assert_eq!(host.read(csr::MBOX_SEQ), 2);
    let mut b = [0u8; 64];
    fw.hal.read_table(TableId::Cq, cqn, &mut b).unwrap();
    let cq = CqContext::parse(&b).unwrap();
    assert_eq!(
        (cq.state, cq.ring, cq.log2_entries),
        (CqState::Valid, 0x1234_5000, 8)
    );

    // an unknown opcode gets BadOpcode; bad parameters BadParam
    host.mbox_start(0x7F, &[]);
    let mut res = None;
    for _ in 0..10 {
        fw.poll();
        res = host.mbox_result();
        if res.is_some() {
            break;
        }
    }
    assert_eq!(res.unwrap().0, MboxStatus::BadOpcode as u32);
    host.mbox_start(Opcode::CreateCq as u16, &[1, 2, 3]);
    fw.poll();
    assert_eq!(host.mbox_result().unwrap().0, MboxStatus::BadParam as u32);
    assert_eq!(host.read(csr::MBOX_SEQ), 4);

    // measured: clocks per firmware register access, per poll and per round trip
    let n = node.borrow();
    let accesses = n.fw_reads + n.fw_writes;
    println!(
        "fw port: {} reads + {} writes in {} clocks ({:.2} clocks/access); \
         mailbox round trip: Nop {} clocks, CreateCq {} clocks",
        n.fw_reads,
        n.fw_writes,
        n.fw_cycles,
        n.fw_cycles as f64 / accesses as f64,
        nop_clocks,
        cq_clocks
    );
    assert_eq!(n.fw_cycles, accesses, "one clock per access");
    drop(n);

    // an idle poll: how many accesses the main loop costs
    let (a0, c0) = {
        let n = node.borrow();
        (n.fw_reads + n.fw_writes, n.core.cycle())
    };
    fw.poll();
    let n = node.borrow();
    println!(
        "idle Firmware::poll: {} accesses, {} clocks",
        n.fw_reads + n.fw_writes - a0,
        n.core.cycle() - c0
    );
    let c1 = n.core.cycle();
    drop(n);
    // speed: the firmware's idle main loop on the model, 20000 polls
    let t = std::time::Instant::now();
    for _ in 0..20_000 {
        fw.poll();
    }
    let secs = t.elapsed().as_secs_f64();
    let clocks = node.borrow().core.cycle() - c1;
    println!(
        "Verilator with the firmware polled between clocks: {clocks} clocks in {secs:.3} s \
         ({:.0} clocks/s)",
        clocks as f64 / secs
    );
}

/// An ARP request for our address, fed into `mac_rx_*`, reaches the
/// firmware through the exception queue; its reply leaves on `raw_tx_*`
/// and parses with smoltcp.
#[test]
fn arp_request_answered() {
    let (node, _host, mut fw) = setup();
    let req = ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Request,
        source_hardware_addr: EthernetAddress(PEER_MAC),
        source_protocol_addr: Ipv4Address::from(PEER_IP),
        target_hardware_addr: EthernetAddress([0; 6]),
        target_protocol_addr: Ipv4Address::from(IP),
    };
    let eth = EthernetRepr {
        src_addr: EthernetAddress(PEER_MAC),
        dst_addr: EthernetAddress::BROADCAST,
        ethertype: EthernetProtocol::Arp,
    };
    let mut f = vec![0u8; eth.buffer_len() + req.buffer_len()];
    let mut ef = EthernetFrame::new_unchecked(&mut f[..]);
    eth.emit(&mut ef);
    req.emit(&mut ArpPacket::new_unchecked(ef.payload_mut()));
    f.resize(60, 0); // minimum frame, as a MAC delivers it
    node.borrow_mut().mac_rx.push(f, false);
    node.borrow_mut().drain_rx(64);
    assert_eq!(node.borrow().core.get_exc_count(), 1);
    assert_eq!(
        node.borrow().core.get_exc_reason(),
        ExceptionReason::NoMatch as u64
    );

    let c0 = node.borrow().core.cycle();
    fw.poll();
    node.borrow_mut().ticks(64);
    let reply = node
        .borrow_mut()
        .tx_frames
        .pop_front()
        .expect("no ARP reply");
    println!(
        "ARP request → reply: {} clocks of firmware poll and raw TX",
        node.borrow().core.cycle() - c0
    );
    assert!(node.borrow().tx_frames.is_empty());
    assert_eq!(node.borrow().core.get_exc_count(), 0, "popped");
    let ef = EthernetFrame::new_checked(&reply[..]).unwrap();
    assert_eq!(ef.dst_addr(), EthernetAddress(PEER_MAC));
    assert_eq!(ef.src_addr(), EthernetAddress(MAC));
    assert_eq!(ef.ethertype(), EthernetProtocol::Arp);
    let rep = ArpRepr::parse(&ArpPacket::new_checked(ef.payload()).unwrap()).unwrap();
    assert_eq!(
        rep,
        ArpRepr::EthernetIpv4 {
            operation: ArpOperation::Reply,
            source_hardware_addr: EthernetAddress(MAC),
            source_protocol_addr: Ipv4Address::from(IP),
            target_hardware_addr: EthernetAddress(PEER_MAC),
            target_protocol_addr: Ipv4Address::from(PEER_IP),
        }
    );
}

/// A connection context written through the firmware port: in firmware
/// mode its segments are exceptions with its index; in RDMA mode an
/// in-order segment takes the fast path (no exception) and `rcv_nxt`
/// advances, which a later RDMA → RDMA write keeps and a read shows.
#[test]
fn conn_context_through_the_port() {
    let (node, _host, mut fw) = setup();
    let local = Endpoint {
        mac: MAC,
        ip: IP,
        port: 7174,
    };
    let peer = Endpoint {
        mac: PEER_MAC,
        ip: PEER_IP,
        port: 40001,
    };
    let rcv_nxt = 0x1000_0000u32;
    let mut ctx = ConnContext {
        mode: ConnMode::Firmware,
        mpa_flags: 0,
        snd_wscale: 0,
        rcv_wscale: 0,
        local_ip: u32::from_be_bytes(IP),
        peer_ip: u32::from_be_bytes(PEER_IP),
        local_port: local.port,
        peer_port: peer.port,
        local_mac: MAC,
        peer_mac: PEER_MAC,
        mss: 1460,
        mulpdu: 1420,
        rcv_nxt,
        snd_nxt: 500,
        snd_una: 500,
        snd_wnd: 65535,
        rcv_wnd: 1 << 20,
        tx_marker_ref: 500,
        rx_marker_ref: rcv_nxt,
        qpn: 3,
    };
    let idx = 5;
    let hal = &mut fw.hal;
    hal.write_conn(idx, &ctx).unwrap();
    assert_eq!(hal.read_conn(idx).unwrap(), ctx);
    // the connection table's own read port
    {
        let mut n = node.borrow_mut();
        n.core.set_ct_rd_idx(idx as u64);
        n.tick();
        assert_eq!(n.core.get_ct_rd_used(), 1);
        assert_eq!(n.core.get_ct_rd_mode(), ConnMode::Firmware as u64);
        assert_eq!(n.core.get_ct_rd_rcv_nxt(), rcv_nxt as u64);
    }
    // firmware mode: the segment is an exception for this connection
    let pay: Vec<u8> = (0..100u8).collect();
    node.borrow_mut()
        .mac_rx
        .push(data_frame(&peer, &local, rcv_nxt, 500, &pay), false);
    node.borrow_mut().drain_rx(64);
    let mut buf = [0u8; 2048];
    let e = hal.recv_exception(&mut buf).expect("an exception");
    assert_eq!(e.reason, ExceptionReason::FirmwareMode);
    assert_eq!(e.conn, Some(idx));
    assert!(hal.recv_exception(&mut buf).is_none());

    // RDMA mode: the same segment is fast path now
    ctx.mode = ConnMode::Rdma;
    hal.write_conn(idx, &ctx).unwrap();
    let fast0 = node.borrow().core.get_cnt_rx_fast();
    node.borrow_mut()
        .mac_rx
        .push(data_frame(&peer, &local, rcv_nxt, 500, &pay), false);
    node.borrow_mut().drain_rx(64);
    assert_eq!(node.borrow().core.get_cnt_rx_fast(), fast0 + 1);
    assert_eq!(node.borrow().core.get_exc_count(), 0);
    assert!(hal.recv_exception(&mut buf).is_none());
    let got = hal.read_conn(idx).unwrap();
    assert_eq!(got.rcv_nxt, rcv_nxt + pay.len() as u32);
    // RDMA → RDMA with the stale rcv_nxt: the device keeps its own
    let mut routed = ctx;
    routed.peer_mac = [0x02, 0, 0, 0, 0, 0x99];
    hal.write_conn(idx, &routed).unwrap();
    let got = hal.read_conn(idx).unwrap();
    assert_eq!(got.rcv_nxt, rcv_nxt + pay.len() as u32);
    assert_eq!(got.peer_mac, routed.peer_mac);
    // a segment that is not in order is an exception again (OutOfWindow)
    node.borrow_mut()
        .mac_rx
        .push(data_frame(&peer, &local, rcv_nxt, 500, &pay), false);
    node.borrow_mut().drain_rx(64);
    let e = hal.recv_exception(&mut buf).expect("an exception");
    assert_eq!(e.reason, ExceptionReason::OutOfWindow);
    assert_eq!(e.conn, Some(idx));
    // freeing the entry: no match any more
    hal.write_conn(idx, &ConnContext::FREE).unwrap();
    node.borrow_mut()
        .mac_rx
        .push(data_frame(&peer, &local, rcv_nxt, 500, &pay), false);
    node.borrow_mut().drain_rx(64);
    let e = hal.recv_exception(&mut buf).expect("an exception");
    assert_eq!(e.reason, ExceptionReason::NoMatch);
    assert_eq!(e.conn, None);
    // bad table accesses get an error and change nothing
    assert!(hal.write_conn(64, &ctx).is_err());
    assert!(hal.read_table(TableId::Tpt, 0, &mut buf[..32]).is_err());
}
