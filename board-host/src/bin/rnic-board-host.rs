//! `rnic-board-host`: connects to a board over the UDP bridge,
//! writes the interface configuration, runs the firmware host-side over the
//! firmware window, opens the driver on the same bus (its DMA memory served
//! by this process) and checks the control path with a `Nop` command round
//! trip through the mailbox. Then it keeps the firmware running and prints
//! its counters every 10 s (until killed), or exits with `--once`.
//!
//! ```text
//! rnic-board-host [--board 10.0.0.2:21058] [--local 0.0.0.0:0]
//!                 [--ip 192.168.1.2] [--netmask 255.255.255.0]
//!                 [--gateway 192.168.1.1] [--mac 02:52:42:00:01:02] [--once]
//!                 [--hold-cpu]
//! ```
//!
//! `--hold-cpu` (ECPIX-5): holds the top's RISC-V core in reset
//! (`CPU_CTL.HOLD`, BAR0 `csr::BOARD_REGS`) so that the firmware window,
//! and so this program's firmware, owns the firmware port. The Versa-5G top
//! has no CPU and no such register: do not give it there.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rnic_board_host::{run_firmware, write_net_cfg, FwStats, NetCfg, SharedBus};
use rnic_driver::udp_bus::{UdpBus, UdpBusConfig};
use rnic_driver::{Context, Options};
use rnic_wire::abi::bridge::BRIDGE_PORT;

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .map(|o| u8::from_str_radix(o, 16).ok())
        .collect::<Option<_>>()?;
    v.try_into().ok()
}

fn main() {
    let mut board: SocketAddr = SocketAddr::from(([10, 0, 0, 2], BRIDGE_PORT));
    let mut local: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let mut net = NetCfg {
        mac: [0x02, 0x52, 0x42, 0x00, 0x01, 0x02],
        ip: Ipv4Addr::new(192, 168, 1, 2),
        netmask: Ipv4Addr::new(255, 255, 255, 0),
        gateway: None,
        mtu: 1500,
    };
    let mut once = false;
    let mut hold_cpu = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || {
            args.next()
                .unwrap_or_else(|| die(&format!("{a}: value missing")))
        };
        match a.as_str() {
            "--board" => board = val().parse().unwrap_or_else(|_| die("--board ip:port")),
            "--local" => local = val().parse().unwrap_or_else(|_| die("--local ip:port")),
            "--ip" => net.ip = val().parse().unwrap_or_else(|_| die("--ip")),
            "--netmask" => net.netmask = val().parse().unwrap_or_else(|_| die("--netmask")),
            "--gateway" => net.gateway = Some(val().parse().unwrap_or_else(|_| die("--gateway"))),
            "--mac" => net.mac = parse_mac(&val()).unwrap_or_else(|| die("--mac xx:..:xx")),
            "--once" => once = true,
            "--hold-cpu" => hold_cpu = true,
            _ => die(&format!("unknown argument {a}")),
        }
    }
    let mut cfg = UdpBusConfig::new(board);
    cfg.local = local;
    let bus = Arc::new(UdpBus::connect(cfg).unwrap_or_else(|e| die(&format!("{board}: {e}"))));
    if hold_cpu {
        bus.mmio_write(rnic_wire::abi::csr::BOARD_REGS, 1)
            .unwrap_or_else(|e| die(&format!("CPU_CTL.HOLD: {e}")));
    }
    write_net_cfg(&bus, &net).unwrap_or_else(|e| die(&format!("BAR0 config: {e}")));
    let stats = Arc::new(FwStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let fw = {
        let (bus, stats, stop) = (bus.clone(), stats.clone(), stop.clone());
        std::thread::spawn(move || {
            run_firmware(
                bus,
                rnic_fw::Config::default(),
                stats,
                Duration::from_millis(1),
                &stop,
            )
        })
    };
    // A mailbox command is ~50 firmware-port accesses, each a bridge round
    // trip: allow for that (docs/bridge.md "Firmware window").
    let opts = Options {
        mailbox_timeout: Duration::from_secs(2),
        ready_timeout: Duration::from_secs(2),
        ..Options::default()
    };
    let ctx =
        Context::open_with(SharedBus(bus.clone()), opts).unwrap_or_else(|e| die(&format!("{e}")));
    ctx.nop()
        .unwrap_or_else(|e| die(&format!("Nop through the mailbox: {e}")));
    println!(
        "board {board}: {:?}; firmware running on the host",
        ctx.caps()
    );
    loop {
        let p = stats.polls.load(Ordering::Relaxed);
        let a = stats.accesses.load(Ordering::Relaxed);
        let f = stats.failed.load(Ordering::Relaxed);
        println!(
            "firmware: {p} polls, {a} port accesses ({:.1} per poll), {f} failed",
            a as f64 / p.max(1) as f64
        );
        for e in bus.take_errors() {
            println!("bridge: {e}");
        }
        if once {
            break;
        }
        std::thread::sleep(Duration::from_secs(10));
    }
    stop.store(true, Ordering::Relaxed);
    drop(ctx);
    let _ = fw.join();
}

fn die(msg: &str) -> ! {
    eprintln!("rnic-board-host: {msg}");
    std::process::exit(1)
}
