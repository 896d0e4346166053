//! The host side of the board tests that run the real firmware over the
//! bridge (`board_fw.rs`, `board_rdma.rs`): the `UdpBus` to the simulated
//! board, port 0's interface configuration, the firmware thread and the
//! driver's options.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use rnic_board_host::{run_firmware, write_net_cfg, FwStats, NetCfg};
use rnic_driver::udp_bus::{UdpBus, UdpBusConfig};
use rnic_driver::{ConnectParams, MpaOptions, Options};

use super::port0::{FW_IP, FW_MAC, PEER_IP, PEER_PORT};

/// A `UdpBus` to the board behind the test thread's socket `board`.
pub fn connect_bus(board: SocketAddr) -> Arc<UdpBus> {
    let mut cfg = UdpBusConfig::new(board);
    cfg.local = "127.0.0.1:0".parse().unwrap();
    // A round trip is ~200 board clocks, a few ms of wall time at the
    // model's speed (more on a loaded machine); a resend is answered from
    // the board's cache, so a late answer cannot act twice.
    cfg.timeout = Duration::from_millis(500);
    cfg.tries = 8;
    Arc::new(UdpBus::connect(cfg).expect("HELLO answered by the simulated board"))
}

/// Port 0's interface: the firmware's MAC and IPv4 address, MTU `mtu`.
pub fn port0_net_cfg(mtu: u16) -> NetCfg {
    NetCfg {
        mac: FW_MAC,
        ip: Ipv4Addr::from(FW_IP),
        netmask: Ipv4Addr::new(255, 255, 255, 0),
        gateway: None,
        mtu,
    }
}

/// Writes port 0's interface configuration (MTU 1500) into BAR0.
pub fn configure_port0(bus: &Arc<UdpBus>) {
    write_net_cfg(bus, &port0_net_cfg(1500)).expect("BAR0 configuration");
}

/// `rnic_fw::Firmware` on its own thread over the bridge's firmware window.
pub struct FwThread {
    pub stats: Arc<FwStats>,
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<()>>,
}

impl FwThread {
    /// Starts the firmware (default configuration); a panic in it aborts
    /// the process (the driver would only time out).
    pub fn spawn(bus: Arc<UdpBus>) -> FwThread {
        let stats = Arc::new(FwStats::default());
        let stop = Arc::new(AtomicBool::new(false));
        let join = {
            let (stats, stop) = (stats.clone(), stop.clone());
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
                    "firmware thread ends (stop = {})",
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
        FwThread {
            stats,
            stop,
            join: Some(join),
        }
    }

    /// Stops the firmware and waits for its thread.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(j) = self.join.take() {
            j.join().expect("firmware thread");
        }
    }
}

/// The driver's options: every mailbox command is tens of port accesses,
/// each a simulated round trip of milliseconds, so generous timeouts.
pub fn driver_options() -> Options {
    Options {
        mailbox_timeout: Duration::from_secs(120),
        ready_timeout: Duration::from_secs(120),
        reset_timeout: Duration::from_secs(120),
        ..Options::default()
    }
}

/// The active open both tests make to the scripted port-0 peer: MPA rev 1
/// with CRC, no markers (what the peer's MPA Reply accepts), IRD = ORD = 1.
pub fn connect_params() -> ConnectParams {
    ConnectParams {
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
    }
}
