//! `rnic-board-host`: connects to a board over the UDP bridge, writes the
//! interface configuration, opens the driver on the same bus (its DMA
//! memory served by this process) and checks the control path with a `Nop`
//! command round trip through the mailbox. Then it keeps serving the board
//! and prints its counters every 10 s (until killed), or exits with `--once`.
//!
//! ```text
//! rnic-board-host [--board 10.0.0.2:21058] [--local 0.0.0.0:0]
//!                 [--ip 192.168.1.2] [--netmask 255.255.255.0]
//!                 [--gateway 192.168.1.1] [--mac 02:52:42:00:01:02] [--once]
//!                 [--fw chip|host] [--fw-load FIRMWARE.elf] [--top ecpix5|versa5g]
//! ```
//!
//! Where the firmware runs:
//! * `--fw chip` (the default, ECPIX-5): on the top's RISC-V core, which
//!   boots the image the bitstream carries. `--fw-load ELF` first loads
//!   another image into it over the bridge (`CPU_CTL.HOLD`, `CPU_LOAD_*`;
//!   about 21,000 register writes for the 85 KB image), without a new
//!   bitstream.
//! * `--fw host`: on this host, over the bridge's firmware window (each
//!   register access a bridge round trip; a debugging aid). On the ECPIX-5
//!   the top's CPU is held in reset first (`CPU_CTL.HOLD`).
//! * `--top versa5g`: the Versa-5G top has no CPU and no `CPU_*` registers;
//!   the firmware runs here (`--fw host` implied, `--fw chip` refused).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rnic_board_host::{
    cpu_image, load_cpu_image, run_firmware, write_net_cfg, FwStats, NetCfg, SharedBus,
};
use rnic_driver::udp_bus::{UdpBus, UdpBusConfig};
use rnic_driver::{Context, Options};
use rnic_wire::abi::bridge::BRIDGE_PORT;
use rnic_wire::abi::csr;

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
    let mut fw_host = None;
    let mut fw_load = None;
    let mut versa = false;
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
            "--fw" => match val().as_str() {
                "chip" => fw_host = Some(false),
                "host" => fw_host = Some(true),
                v => die(&format!("--fw chip|host, not {v}")),
            },
            "--fw-load" => fw_load = Some(val()),
            "--top" => match val().as_str() {
                "ecpix5" => versa = false,
                "versa5g" => versa = true,
                v => die(&format!("--top ecpix5|versa5g, not {v}")),
            },
            _ => die(&format!("unknown argument {a}")),
        }
    }
    let fw_host = match (versa, fw_host) {
        (true, Some(false)) => die("--top versa5g has no CPU: the firmware runs here (--fw host)"),
        (true, _) => true,
        (false, h) => h.unwrap_or(false),
    };
    if fw_host && fw_load.is_some() {
        die("--fw-load loads the on-chip CPU: not with --fw host");
    }
    // The image is checked before the board is touched.
    let image = fw_load.as_ref().map(|path| {
        let d = std::fs::read(path).unwrap_or_else(|e| die(&format!("{path}: {e}")));
        cpu_image(&d).unwrap_or_else(|e| die(&format!("{path}: {e}")))
    });
    let mut cfg = UdpBusConfig::new(board);
    cfg.local = local;
    let bus = Arc::new(UdpBus::connect(cfg).unwrap_or_else(|e| die(&format!("{board}: {e}"))));
    if fw_host && !versa {
        bus.mmio_write(csr::CPU_CTL, csr::CPU_CTL_HOLD)
            .unwrap_or_else(|e| die(&format!("CPU_CTL.HOLD: {e}")));
    }
    write_net_cfg(&bus, &net).unwrap_or_else(|e| die(&format!("BAR0 config: {e}")));
    if let (Some(words), Some(path)) = (&image, &fw_load) {
        let t = std::time::Instant::now();
        load_cpu_image(|o, v| bus.mmio_write(o, v), words)
            .unwrap_or_else(|e| die(&format!("{path}: {e}")));
        println!(
            "loaded {path} ({} octets) into the CPU in {:.1} s; it is booting",
            words.len() * 4,
            t.elapsed().as_secs_f64()
        );
    }
    let stats = Arc::new(FwStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let fw = fw_host.then(|| {
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
    });
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
        "board {board}: {:?}; firmware running {}",
        ctx.caps(),
        if fw_host {
            "on this host"
        } else {
            "on the board's CPU"
        }
    );
    loop {
        if fw_host {
            let p = stats.polls.load(Ordering::Relaxed);
            let a = stats.accesses.load(Ordering::Relaxed);
            let f = stats.failed.load(Ordering::Relaxed);
            println!(
                "firmware: {p} polls, {a} port accesses ({:.1} per poll), {f} failed",
                a as f64 / p.max(1) as f64
            );
        }
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
    if let Some(fw) = fw {
        let _ = fw.join();
    }
}

fn die(msg: &str) -> ! {
    eprintln!("rnic-board-host: {msg}");
    std::process::exit(1)
}
