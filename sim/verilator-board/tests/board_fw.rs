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

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use rnic_board_host::{write_net_cfg, FwStats, SharedBus};
use rnic_driver::udp_bus::UdpBus;
use rnic_driver::Context;
use rnic_wire::abi::csr;
use rnic_wire::mpa::{MpaKey, MpaRequestReply, MPA_REQ_REP_HEADER_LEN};
use smoltcp::wire::TcpControl;
use verilator_board::{Rig, Sig};

mod bridge_rig;
use bridge_rig::fw::{
    configure_port0, connect_bus, connect_params, driver_options, port0_net_cfg, FwThread,
};
use bridge_rig::port0::{Peer, EXPECTED_MSS, PEER_ISS};
use bridge_rig::Pump;

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
    write_net_cfg(bus, &port0_net_cfg(9000)).expect("BAR0 configuration");
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
    let bus = connect_bus(board);
    board_profile_limits_reach_the_firmware(&bus);
    configure_port0(&bus);
    assert_eq!(
        bus.mmio_read(csr::STATUS).unwrap() & csr::STATUS_READY,
        0,
        "STATUS_READY before the firmware ran"
    );
    let fw = FwThread::spawn(bus.clone());
    let stats = fw.stats.clone();
    let t0 = Instant::now();
    let ctx = Context::open_with(SharedBus(bus.clone()), driver_options())
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
    let conn = qp.connect(&connect_params(), &[]).expect("Connect");
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
    fw.stop();
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

#[test]
fn host_side_firmware_comes_up_serves_the_mailbox_and_sends_a_syn_on_port_0() {
    let t_start = Instant::now();
    let mut rig = Rig::new(0, [50, 100]);
    rig.trace_from_env("board_fw");
    rig.phy[0].idle_stop = Some(256);
    rig.phy[1].idle_stop = Some(256);

    let mut pump = Pump::new();
    let board = pump.addr();
    let (syn_tx, syn_rx) = mpsc::channel();
    let w = std::thread::spawn(move || worker(board, syn_rx));

    // Budget in board clocks (the test needs a few hundred thousand).
    const BUDGET: u64 = 20_000_000;
    // ARP and SYN answered, the firmware's (port, ISS) and its first SYN's
    // time; its stream from ISS + 1; progress.
    let mut peer = Peer::default();
    let mut stream: Vec<u8> = Vec::new();
    let (mut acked, mut mpa_seen) = (false, false);
    let mut mpa_at: Option<u64> = None;
    let sim_start = rig.core_cycles;
    loop {
        pump.run(&mut rig);
        while let Some(tcp) = peer.next_segment(&mut rig) {
            if tcp.control == TcpControl::Rst {
                continue;
            }
            // RFC 9293 §3.5: the third segment acknowledges our SYN.
            assert_eq!(
                tcp.ack,
                Some(PEER_ISS.wrapping_add(1)),
                "ACK of the SYN-ACK"
            );
            acked = true;
            // The MPA Request (RFC 5044 §7.1) follows from ISS + 1.
            tcp.extend_stream(&mut stream);
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
        if w.is_finished() {
            break;
        }
        rig.run_core_cycles(16);
        assert!(
            rig.core_cycles - sim_start < BUDGET,
            "no end within {BUDGET} board clocks; bridge rx ok {} drop {} nak {}; \
             {} ARP requests, {} SYNs on port 0",
            rig.board.get(Sig::BridgeCntRxOk),
            rig.board.get(Sig::BridgeCntRxDrop),
            rig.board.get(Sig::BridgeCntNak),
            peer.arp_requests,
            peer.syns,
        );
    }
    let r = match w.join() {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    };
    assert!(
        peer.arp_requests >= 1,
        "the firmware resolved the peer with ARP"
    );
    assert!(peer.syns >= 1);
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
        let mut v: Vec<u64> = pump
            .rtts
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
         ({} samples); {} ARP, {} SYN, {} other TCP; SYN -> MPA Request {} \
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
        peer.arp_requests,
        peer.syns,
        peer.other_segments,
        mpa_at.unwrap_or(0) - peer.first_syn_at.unwrap_or(0),
        r.wall_open.as_secs_f64(),
        r.wall_cmds.as_secs_f64(),
        r.wall_connect.as_secs_f64(),
        r.connect_accesses,
    );
}
