//! The real firmware on the host, over the bridge's firmware window,
//! against the Verilated board top (docs/bridge.md "Firmware window").
//!
//! ```text
//!  worker thread: UdpBus ─┬─ firmware thread: rnic_fw::Firmware over
//!                         │    PortHal<BridgeRegs> (FW_READ/FW_WRITE)
//!                         └─ driver: Context over SharedBus (MMIO, DMA)
//!        ──UDP──► test thread: adapter socket ──► PHY 1 pins ──► rnic_versa5g
//!                 port 0 peer (PHY 0 pins): answers ARP, checks the SYN
//! ```
//!
//! Checked: the firmware comes up (BAR0 `STATUS_READY`, raised by its
//! first `MBOX_CMD` read, seen by the driver's `Context::open`); driver
//! commands round-trip through the mailbox (Nop, CreateCq, CreateQp); a
//! connect makes the firmware resolve the peer with ARP and send a SYN out
//! of port 0's RGMII TX pins, both parsed with smoltcp (addresses, ports,
//! MSS option, IPv4 and TCP checksums). Reported: bridge round trips in
//! board clocks and the firmware's port accesses per idle poll.

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rnic_board_host::{run_firmware, write_net_cfg, FwStats, NetCfg, SharedBus};
use rnic_driver::udp_bus::{UdpBus, UdpBusConfig};
use rnic_driver::{ConnectParams, Context, MpaOptions, Options};
use rnic_wire::abi::bridge::Repr;
use rnic_wire::abi::csr;
use rnic_wire::mpa::{MpaKey, MpaRequestReply, MPA_REQ_REP_HEADER_LEN};
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    ArpOperation, ArpPacket, ArpRepr, EthernetAddress, EthernetFrame, EthernetProtocol,
    EthernetRepr, IpAddress, IpProtocol, Ipv4Address, Ipv4Packet, Ipv4Repr, TcpControl, TcpPacket,
    TcpRepr, TcpSeqNumber,
};
use verilator_board::{Rig, Sig};

mod bridge_rig;
use bridge_rig::{from_board, to_board};

/// The firmware's interface on port 0, and the scripted peer.
const FW_MAC: [u8; 6] = [0x02, 0x52, 0x42, 0x00, 0x01, 0x02];
const FW_IP: [u8; 4] = [192, 168, 1, 2];
const PEER_MAC: [u8; 6] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x99];
const PEER_IP: [u8; 4] = [192, 168, 1, 1];
const PEER_PORT: u16 = 5000;
/// MTU 1500 - IPv4 20 - TCP 20 (RFC 9293 §3.7.1).
const EXPECTED_MSS: u16 = 1460;

/// What the worker reports.
struct Report {
    /// Firmware polls and port accesses while idle (after open, before
    /// any command).
    idle_polls: u64,
    idle_accesses: u64,
    polls: u64,
    accesses: u64,
    failed: u64,
    wall_open: Duration,
    wall_cmds: Duration,
    wall_connect: Duration,
    /// Firmware-port accesses from the Connect command to the MPA Request
    /// seen (the SYN-ACK's turnaround in the test thread included).
    connect_accesses: u64,
}

/// The board core's profile (hw/src/profile.rs `BOARD`) as the firmware
/// reads it through the bridge's firmware window: the `LIM_*` registers and
/// the 62.5 MHz core clock; BAR0's MTU 9000 reaches the firmware capped at
/// the board's 1500 (MSS 1460); the host firmware's tables fit the device
/// and its page list shrinks to the board's 512 entries.
fn board_profile_limits_reach_the_firmware(bus: &Arc<UdpBus>) {
    use rnic_fw::port_hal::PortHal;
    use rnic_fw::Hal;
    use rnic_wire::abi::context::port;
    for (off, want) in [
        (port::LIM_CONN, 8),
        (port::LIM_QP, 16),
        (port::LIM_CQ, 64),
        (port::LIM_TPT, 256),
        (port::LIM_PBL, 512),
        (port::LIM_MTU, 1500),
        (port::CLOCK_KHZ, 62_500),
    ] {
        assert_eq!(bus.fw_read32(off).unwrap(), want, "register {off:#x}");
    }
    let jumbo = NetCfg {
        mac: FW_MAC,
        ip: Ipv4Addr::from(FW_IP),
        netmask: Ipv4Addr::new(255, 255, 255, 0),
        gateway: None,
        mtu: 9000,
    };
    write_net_cfg(bus, &jumbo).expect("BAR0 configuration");
    assert_eq!(bus.fw_read32(port::CFG_MTU).unwrap(), 9000);
    let stats = Arc::new(FwStats::default());
    let mut hal = PortHal::new(rnic_board_host::BridgeRegs::new(bus.clone(), stats.clone()));
    let ifc = hal.config();
    assert_eq!((ifc.mtu, ifc.mss()), (1500, EXPECTED_MSS));
    let mut config = rnic_fw::Config::default();
    hal.limits()
        .fit(&rnic_board_host::HOST_FW_CAPS, &mut config)
        .expect("the host firmware fits the board profile");
    assert_eq!(config.pbl_size, 512);
    assert_eq!(
        stats.failed.load(Ordering::Relaxed),
        0,
        "every access answered"
    );
}

fn worker(board: SocketAddr, syn_seen: mpsc::Receiver<()>) -> Report {
    let mut cfg = UdpBusConfig::new(board);
    cfg.local = "127.0.0.1:0".parse().unwrap();
    // A round trip is ~200 board clocks, a few ms of wall time at the
    // model's speed (more on a loaded machine); a resend is answered from
    // the board's cache, so a late answer cannot act twice.
    cfg.timeout = Duration::from_millis(500);
    cfg.tries = 8;
    let bus = Arc::new(UdpBus::connect(cfg).expect("HELLO answered by the simulated board"));
    board_profile_limits_reach_the_firmware(&bus);
    write_net_cfg(
        &bus,
        &NetCfg {
            mac: FW_MAC,
            ip: Ipv4Addr::from(FW_IP),
            netmask: Ipv4Addr::new(255, 255, 255, 0),
            gateway: None,
            mtu: 1500,
        },
    )
    .expect("BAR0 configuration");
    assert_eq!(
        bus.mmio_read(csr::STATUS).unwrap() & csr::STATUS_READY,
        0,
        "STATUS_READY before the firmware ran"
    );
    let stats = Arc::new(FwStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let fw = {
        let (bus, stats, stop) = (bus.clone(), stats.clone(), stop.clone());
        std::thread::spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_firmware(
                    bus,
                    rnic_fw::Config::default(),
                    stats,
                    Duration::ZERO,
                    &stop,
                )
            }));
            eprintln!(
                "board_fw: firmware thread ends (stop = {})",
                stop.load(Ordering::Relaxed)
            );
            if let Err(p) = r {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
                eprintln!("firmware thread panicked: {msg:?}");
                std::process::abort();
            }
        })
    };
    let t0 = Instant::now();
    // Every mailbox command is tens of port accesses, each a simulated
    // round trip of milliseconds: generous timeouts.
    let opts = Options {
        mailbox_timeout: Duration::from_secs(120),
        ready_timeout: Duration::from_secs(120),
        ..Options::default()
    };
    let ctx = Context::open_with(SharedBus(bus.clone()), opts)
        .expect("Context::open: STATUS_READY from the host-side firmware");
    let wall_open = t0.elapsed();
    eprintln!("board_fw: Context::open after {wall_open:?}");
    // Idle: the firmware polls with nothing to do.
    let (p0, a0) = (
        stats.polls.load(Ordering::Relaxed),
        stats.accesses.load(Ordering::Relaxed),
    );
    while stats.polls.load(Ordering::Relaxed) < p0 + 4 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let (p1, a1) = (
        stats.polls.load(Ordering::Relaxed),
        stats.accesses.load(Ordering::Relaxed),
    );

    let t1 = Instant::now();
    ctx.nop().expect("Nop through the mailbox");
    let cq = ctx.create_cq(16).expect("CreateCq");
    let pd = ctx.alloc_pd().expect("PD");
    let qp = pd.create_qp(&cq, &cq, 4, 4).expect("CreateQp");
    let wall_cmds = t1.elapsed();
    eprintln!("board_fw: Nop, CreateCq, CreateQp after {wall_cmds:?}");
    assert!(ctx.mailbox_commands() >= 3);

    let t2 = Instant::now();
    let a2 = stats.accesses.load(Ordering::Relaxed);
    let conn = qp
        .connect(
            &ConnectParams {
                peer_ip: Ipv4Addr::from(PEER_IP),
                peer_port: PEER_PORT,
                local_port: 0,
                ird: 1,
                ord: 1,
                mpa: MpaOptions {
                    revision: 1,
                    crc: true,
                    markers: false,
                },
            },
            &[],
        )
        .expect("Connect");
    let _ = conn;
    syn_seen
        .recv_timeout(Duration::from_secs(300))
        .expect("no SYN, handshake and MPA Request on port 0 after the connect");
    let wall_connect = t2.elapsed();
    let connect_accesses = stats.accesses.load(Ordering::Relaxed) - a2;
    // Tear down while the firmware still runs (DestroyQp aborts the
    // half-open connection: an RST to the peer, which the peer accepts).
    drop(qp);
    drop(cq);
    drop(ctx);
    stop.store(true, Ordering::Relaxed);
    fw.join().expect("firmware thread");
    let errors = bus.take_errors();
    assert!(errors.is_empty(), "UdpBus errors: {errors:?}");
    Report {
        idle_polls: p1 - p0,
        idle_accesses: a1 - a0,
        polls: stats.polls.load(Ordering::Relaxed),
        accesses: stats.accesses.load(Ordering::Relaxed),
        failed: stats.failed.load(Ordering::Relaxed),
        wall_open,
        wall_cmds,
        wall_connect,
        connect_accesses,
    }
}

/// An ARP reply from the peer to the firmware (smoltcp), padded to 60.
fn arp_reply() -> Vec<u8> {
    let mut f = vec![0u8; 60];
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    EthernetRepr {
        src_addr: EthernetAddress(PEER_MAC),
        dst_addr: EthernetAddress(FW_MAC),
        ethertype: EthernetProtocol::Arp,
    }
    .emit(&mut e);
    ArpRepr::EthernetIpv4 {
        operation: ArpOperation::Reply,
        source_hardware_addr: EthernetAddress(PEER_MAC),
        source_protocol_addr: Ipv4Address::from(PEER_IP),
        target_hardware_addr: EthernetAddress(FW_MAC),
        target_protocol_addr: Ipv4Address::from(FW_IP),
    }
    .emit(&mut ArpPacket::new_unchecked(e.payload_mut()));
    f
}

/// The scripted peer's ISS.
const PEER_ISS: u32 = 0x1234_5678;

/// The peer's SYN-ACK to the firmware's SYN (smoltcp; RFC 9293 §3.5).
fn syn_ack(fw_port: u16, fw_iss: u32) -> Vec<u8> {
    let caps = ChecksumCapabilities::default();
    let (src, dst) = (Ipv4Address::from(PEER_IP), Ipv4Address::from(FW_IP));
    let t = TcpRepr {
        src_port: PEER_PORT,
        dst_port: fw_port,
        control: TcpControl::Syn,
        seq_number: TcpSeqNumber(PEER_ISS as i32),
        ack_number: Some(TcpSeqNumber(fw_iss.wrapping_add(1) as i32)),
        window_len: 64_000,
        window_scale: None,
        max_seg_size: Some(1460),
        sack_permitted: false,
        sack_ranges: [None; 3],
        timestamp: None,
        payload: &[],
    };
    let ip = Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IpProtocol::Tcp,
        payload_len: t.buffer_len(),
        hop_limit: 64,
    };
    let mut f = vec![0u8; (14 + 20 + t.buffer_len()).max(60)];
    let mut e = EthernetFrame::new_unchecked(&mut f[..]);
    EthernetRepr {
        src_addr: EthernetAddress(PEER_MAC),
        dst_addr: EthernetAddress(FW_MAC),
        ethertype: EthernetProtocol::Ipv4,
    }
    .emit(&mut e);
    let mut i = Ipv4Packet::new_unchecked(e.payload_mut());
    ip.emit(&mut i, &caps);
    t.emit(
        &mut TcpPacket::new_unchecked(i.payload_mut()),
        &IpAddress::Ipv4(src),
        &IpAddress::Ipv4(dst),
        &caps,
    );
    f
}

/// What the peer on port 0 saw.
enum Port0 {
    ArpRequest,
    /// The SYN (checked), the firmware's port and ISS.
    Syn {
        port: u16,
        iss: u32,
    },
    /// Another TCP segment to the peer: control, SEQ, ACK, payload.
    OtherTcp {
        control: TcpControl,
        seq: u32,
        ack: Option<u32>,
        payload: Vec<u8>,
    },
}

/// A frame from port 0, read with smoltcp: an ARP request for the peer, or
/// the firmware's SYN to the peer (checksums verified, MSS option checked).
fn port0_frame(f: &[u8]) -> Result<Port0, String> {
    let e = EthernetFrame::new_checked(f).map_err(|e| format!("ethernet: {e}"))?;
    if e.src_addr().0 != FW_MAC {
        return Err(format!("source MAC {}", e.src_addr()));
    }
    match e.ethertype() {
        EthernetProtocol::Arp => {
            let a =
                ArpRepr::parse(&ArpPacket::new_checked(e.payload()).map_err(|e| e.to_string())?)
                    .map_err(|e| format!("arp: {e}"))?;
            match a {
                ArpRepr::EthernetIpv4 {
                    operation: ArpOperation::Request,
                    source_hardware_addr,
                    source_protocol_addr,
                    target_protocol_addr,
                    ..
                } if target_protocol_addr == Ipv4Address::from(PEER_IP)
                    && source_protocol_addr == Ipv4Address::from(FW_IP)
                    && source_hardware_addr.0 == FW_MAC =>
                {
                    Ok(Port0::ArpRequest)
                }
                a => Err(format!("ARP {a:?}")),
            }
        }
        EthernetProtocol::Ipv4 => {
            if e.dst_addr().0 != PEER_MAC {
                return Err(format!("IPv4 to {}", e.dst_addr()));
            }
            let caps = ChecksumCapabilities::default();
            let i = Ipv4Packet::new_checked(e.payload()).map_err(|e| format!("ipv4: {e}"))?;
            let ir = Ipv4Repr::parse(&i, &caps).map_err(|e| format!("ipv4 header: {e}"))?;
            if ir.src_addr != Ipv4Address::from(FW_IP)
                || ir.dst_addr != Ipv4Address::from(PEER_IP)
                || ir.next_header != IpProtocol::Tcp
            {
                return Err(format!("ipv4 {ir:?}"));
            }
            let t = TcpPacket::new_checked(i.payload()).map_err(|e| format!("tcp: {e}"))?;
            let tr = TcpRepr::parse(
                &t,
                &IpAddress::Ipv4(ir.src_addr),
                &IpAddress::Ipv4(ir.dst_addr),
                &caps,
            )
            .map_err(|e| format!("tcp header/checksum: {e}"))?;
            if tr.dst_port != PEER_PORT {
                return Err(format!("to port {}", tr.dst_port));
            }
            if tr.control != TcpControl::Syn {
                return Ok(Port0::OtherTcp {
                    control: tr.control,
                    seq: tr.seq_number.0 as u32,
                    ack: tr.ack_number.map(|a| a.0 as u32),
                    payload: tr.payload.to_vec(),
                });
            }
            if tr.ack_number.is_some() {
                return Err(format!("SYN with ACK: {tr:?}"));
            }
            if tr.dst_port != PEER_PORT || tr.src_port == 0 {
                return Err(format!("ports {} -> {}", tr.src_port, tr.dst_port));
            }
            if tr.max_seg_size != Some(EXPECTED_MSS) {
                return Err(format!("MSS option {:?}", tr.max_seg_size));
            }
            if !tr.payload.is_empty() {
                return Err("SYN with payload".into());
            }
            Ok(Port0::Syn {
                port: tr.src_port,
                iss: tr.seq_number.0 as u32,
            })
        }
        t => Err(format!("ethertype {t}")),
    }
}

#[test]
fn host_side_firmware_comes_up_serves_the_mailbox_and_sends_a_syn_on_port_0() {
    let t_start = Instant::now();
    let mut rig = Rig::new(0, [50, 100]);
    rig.trace_from_env("board_fw");
    rig.phy[0].idle_stop = Some(256);
    rig.phy[1].idle_stop = Some(256);

    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_nonblocking(true).unwrap();
    let board = sock.local_addr().unwrap();
    let (syn_tx, syn_rx) = mpsc::channel();
    let w = std::thread::spawn(move || worker(board, syn_rx));

    // Budget in board clocks (the test needs a few hundred thousand).
    const BUDGET: u64 = 20_000_000;
    let mut host: Option<SocketAddr> = None;
    let mut buf = [0u8; 2048];
    let mut pending: Option<(u64, u8)> = None;
    // Round trips in board clocks: (opcode, clocks).
    let mut rtts: Vec<(u8, u64)> = Vec::new();
    let (mut arps, mut syns, mut others) = (0u32, 0u32, 0u32);
    // The firmware's (port, ISS); its stream from ISS + 1; progress.
    let mut fw_tcp: Option<(u16, u32)> = None;
    let mut stream: Vec<u8> = Vec::new();
    let (mut acked, mut mpa_seen) = (false, false);
    let (mut syn_at, mut mpa_at): (Option<u64>, Option<u64>) = (None, None);
    let sim_start = rig.core_cycles;
    loop {
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            host = Some(from);
            rig.phy[1].send(&to_board(&buf[..n]));
            // Host requests (BAR0 and firmware window), not DMA completions.
            if n > 3 && matches!(buf[3], 0x01 | 0x02 | 0x05 | 0x06) {
                pending.get_or_insert((rig.core_cycles, buf[3]));
            }
        }
        while let Some(f) = rig.phy[1].received.pop_front() {
            assert!(f.ok, "bad FCS/preamble from the board: {:02x?}", f.data);
            let p = from_board(&f.data).unwrap_or_else(|e| panic!("frame from the board: {e}"));
            assert!(
                !matches!(Repr::parse(&p), Ok(Repr::Nak { .. })),
                "NAK from the board: {:?}",
                Repr::parse(&p)
            );
            let answer = matches!(
                Repr::parse(&p),
                Ok(Repr::MmioReadRsp { .. }
                    | Repr::MmioWriteAck { .. }
                    | Repr::FwReadRsp { .. }
                    | Repr::FwWriteAck { .. })
            );
            sock.send_to(&p, host.expect("a host")).unwrap();
            if answer {
                if let Some((t, op)) = pending.take() {
                    rtts.push((op, rig.core_cycles - t));
                }
            }
        }
        while let Some(f) = rig.phy[0].received.pop_front() {
            assert!(f.ok, "bad FCS/preamble on port 0: {:02x?}", f.data);
            match port0_frame(&f.data) {
                Ok(Port0::ArpRequest) => {
                    arps += 1;
                    rig.phy[0].send(&arp_reply());
                }
                Ok(Port0::Syn { port, iss }) => {
                    syns += 1;
                    if let Some((p, i)) = fw_tcp {
                        assert_eq!((p, i), (port, iss), "a retransmitted SYN differs");
                    }
                    fw_tcp = Some((port, iss));
                    syn_at.get_or_insert(rig.core_cycles);
                    // The peer answers every SYN (a retransmission too).
                    rig.phy[0].send(&syn_ack(port, iss));
                }
                Ok(Port0::OtherTcp {
                    control,
                    seq,
                    ack,
                    payload,
                }) => {
                    let (_, iss) = fw_tcp.expect("a TCP segment before the SYN");
                    others += 1;
                    if control == TcpControl::Rst {
                        continue;
                    }
                    // RFC 9293 §3.5: the third segment acknowledges our SYN.
                    assert_eq!(ack, Some(PEER_ISS.wrapping_add(1)), "ACK of the SYN-ACK");
                    acked = true;
                    // The MPA Request (RFC 5044 §7.1) follows from ISS + 1.
                    let off = seq.wrapping_sub(iss.wrapping_add(1)) as usize;
                    if !payload.is_empty() && off == stream.len() {
                        stream.extend_from_slice(&payload);
                    }
                    if !mpa_seen && stream.len() >= MPA_REQ_REP_HEADER_LEN {
                        let m = MpaRequestReply::new_checked(&stream[..])
                            .unwrap_or_else(|e| panic!("MPA Request: {e:?}: {stream:02x?}"));
                        assert_eq!(m.key_kind(), Ok(MpaKey::Request));
                        assert_eq!(m.revision(), 1, "MPA revision asked for");
                        assert!(m.crc(), "CRC asked for");
                        assert!(!m.markers() && !m.reject());
                        assert_eq!(m.pd_len(), 0, "no private data");
                        mpa_seen = true;
                        mpa_at = Some(rig.core_cycles);
                        let _ = syn_tx.send(());
                    }
                }
                Err(e) => panic!("frame on port 0: {e}: {:02x?}", f.data),
            }
        }
        if w.is_finished() {
            break;
        }
        rig.run_core_cycles(16);
        assert!(
            rig.core_cycles - sim_start < BUDGET,
            "no end within {BUDGET} board clocks; bridge rx ok {} drop {} nak {}; \
             {arps} ARP requests, {syns} SYNs on port 0",
            rig.board.get(Sig::BridgeCntRxOk),
            rig.board.get(Sig::BridgeCntRxDrop),
            rig.board.get(Sig::BridgeCntNak),
        );
    }
    let r = match w.join() {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    };
    assert!(arps >= 1, "the firmware resolved the peer with ARP");
    assert!(syns >= 1);
    assert!(
        acked && mpa_seen,
        "handshake completed and MPA Request seen"
    );
    assert_eq!(r.failed, 0, "failed firmware-port accesses");
    assert_eq!(rig.board.get(Sig::BridgeCntNak), 0);
    assert_eq!(rig.board.get(Sig::BridgeCntRxDrop), 0);
    let secs = t_start.elapsed().as_secs_f64();
    let cycles = rig.core_cycles - sim_start;
    let fw: Vec<u64> = {
        let mut v: Vec<u64> = rtts
            .iter()
            .filter(|r| r.0 == 0x05 || r.0 == 0x06)
            .map(|r| r.1)
            .collect();
        v.sort_unstable();
        v
    };
    let pct = |v: &[u64], q: usize| v.get(v.len() * q / 100).copied().unwrap_or(0);
    eprintln!(
        "board_fw: {cycles} board clocks in {secs:.1} s ({:.0} clocks/s); firmware: {} polls, \
         {} port accesses, idle {} accesses in {} polls ({:.1} per poll); \
         FW_READ/FW_WRITE request -> answer: min {} median {} p90 {} max {} board clocks \
         ({} samples); {arps} ARP, {syns} SYN, {others} other TCP; SYN -> MPA Request {} \
         board clocks; wall: open {:.1} s, Nop+CreateCq+CreateQp {:.1} s, connect -> \
         MPA Request {:.1} s, {} port accesses",
        cycles as f64 / secs,
        r.polls,
        r.accesses,
        r.idle_accesses,
        r.idle_polls,
        r.idle_accesses as f64 / r.idle_polls.max(1) as f64,
        pct(&fw, 0),
        pct(&fw, 50),
        pct(&fw, 90),
        fw.last().copied().unwrap_or(0),
        fw.len(),
        mpa_at.unwrap_or(0) - syn_at.unwrap_or(0),
        r.wall_open.as_secs_f64(),
        r.wall_cmds.as_secs_f64(),
        r.wall_connect.as_secs_f64(),
        r.connect_accesses,
    );
}
