//! A live Linux kernel as the peer: a Debian 6.1 guest in QEMU with
//! Soft-iWARP (siw) and rdma-core's rping (`scripts/linux-peer/`), its NIC
//! on the node's external port. The node (RTL + firmware + driver) runs
//! `rnic_sim::apps::rping`, the application `rnic-sim rping` runs, at 64
//! octets, -C 5, both directions: node server / Linux client (which
//! validates the echo, `rping -V`) and node client / Linux server. Each
//! side must finish cleanly (the node's checks, the guest's exit status)
//! and tshark must find every FPDU and no malformed frame in the capture.
//! `make interop` runs the full matrix (sizes, CRC and RTR).
//!
//! The guest image is built by `scripts/linux-peer/build.sh` into
//! `target/interop/linux-peer/` (about a minute once its host packages are
//! installed; `make interop` runs it). When it is not built, this test
//! prints that it skipped, except under CI, where it builds it first (and
//! fails if it cannot).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

#[path = "../../testdata/support.rs"]
mod support;

use rnic_driver::{Context, NetConfig};
use rnic_fw::retx::RetxConfig;
use rnic_sim::apps::rping;
use rnic_sim::external::ExternalPort;
use rnic_sim::node::{World, COSIM_RDMA_RETX};
use rnic_sim::sim_bus::{driver_options, SimBus};

const NODE_IP: [u8; 4] = [10, 0, 0, 1];
const NODE_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const LINUX_IP: &str = "10.0.0.2";
const COUNT: usize = 5;
const SIZE: usize = 64;
/// The node's RDMA-mode RTO against the wall-clock guest, simulated µs:
/// `rnic-sim rping`'s ([`rping::LIVE_PEER_RTO_US`]).
const NODE_RTO_US: u64 = rping::LIVE_PEER_RTO_US;

/// One guest at a time (two QEMU guests and two simulations on a small
/// machine slow each other down for nothing), and one build, within this
/// process; across processes the `linux-peer` test group of
/// `.config/nextest.toml` and the build script's lock do the same.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// Whether the guest image is there; under CI it is built first.
fn peer_ready() -> bool {
    let work = repo().join("target/interop/linux-peer");
    let built =
        || work.join("kernel/vmlinuz").is_file() && work.join("initramfs.cpio.zst").is_file();
    if built() {
        return true;
    }
    if !support::in_ci() {
        println!(
            "skipped: the Linux peer is not built ({} is missing); `make interop` or \
             scripts/linux-peer/build.sh builds it",
            work.join("initramfs.cpio.zst").display()
        );
        return false;
    }
    println!("CI: building the Linux peer (scripts/linux-peer/build.sh)");
    let st = Command::new(repo().join("scripts/linux-peer/build.sh"))
        .status()
        .expect("run scripts/linux-peer/build.sh");
    assert!(
        st.success() && built(),
        "CI: building the Linux peer failed: {st}"
    );
    true
}

/// The guest (run-guest.sh and its QEMU), stopped when dropped.
struct Guest {
    child: Child,
    log: PathBuf,
}

impl Guest {
    fn boot(role: &str, sock: &Path, cmd: &str, log: PathBuf) -> Guest {
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(repo().join("scripts/linux-peer/run-guest.sh"))
            .args([role, LINUX_IP, "10.0.0.1"])
            .arg(sock)
            .arg(cmd)
            .env("ATTEMPT_TIMEOUT", "300")
            // one attempt: the node listens before the guest boots, so a
            // failure is not hidden by the guest's retries
            .env("EXTRA_APPEND", "siwh_tries=1")
            .env("GUEST_TIMEOUT", "600")
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("run scripts/linux-peer/run-guest.sh");
        Guest { child, log }
    }

    /// The guest command's exit status (run-guest.sh's), within `limit`.
    fn wait(&mut self, limit: Duration) -> Option<i32> {
        let t = std::time::Instant::now();
        while t.elapsed() < limit {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        None
    }

    fn console(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        // run-guest.sh stops its QEMU on TERM
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill")
                .arg(self.child.id().to_string())
                .status();
            let _ = self.child.wait();
        }
    }
}

/// Runs one case: the node (`server` or client) against the guest.
fn case(node_server: bool) {
    // held from the build check on: under CI the first case builds the
    // peer, and the other must wait for it
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !peer_ready() || !support::have_tool("tshark") {
        return;
    }
    let name = if node_server {
        "node-server"
    } else {
        "node-client"
    };
    let dir = repo().join("target/interop/test");
    std::fs::create_dir_all(&dir).unwrap();
    let sock = dir.join(format!("{name}.sock"));
    let pcap = dir.join(format!("{name}.pcap"));
    let _ = std::fs::remove_file(&sock);
    let mut port = ExternalPort::listen_unix(&sock).unwrap();
    port.pcap_to(&pcap).unwrap();
    let world = World::external(port).shared();
    world.borrow_mut().nodes[0].fw.config.rdma_retx = RetxConfig {
        rto: NODE_RTO_US,
        rto_min: NODE_RTO_US,
        rto_max: 8 * NODE_RTO_US,
        ..COSIM_RDMA_RETX
    };
    let ctx = Context::open_with(SimBus::new(world.clone(), 0), driver_options()).unwrap();
    ctx.configure(&NetConfig {
        mac: NODE_MAC,
        ip: NODE_IP.into(),
        netmask: [255, 255, 255, 0].into(),
        gateway: None,
        mtu: 1500,
    })
    .unwrap();
    let cfg = rping::Config {
        size: SIZE,
        count: COUNT,
        step_wall: Duration::from_secs(300),
        connect_wall: Duration::from_secs(300),
        ..rping::Config::default()
    };
    let log = dir.join(format!("{name}-linux.log"));
    let (role, cmd) = if node_server {
        (
            "client",
            format!("rping -c -a 10.0.0.1 -v -V -C {COUNT} -S {SIZE}"),
        )
    } else {
        (
            "server",
            format!("rping -s -a {LINUX_IP} -v -C {COUNT} -S {SIZE}"),
        )
    };
    let mut guest = Guest::boot(role, &sock, &cmd, log);
    let t0 = std::time::Instant::now();
    let report = if node_server {
        rping::server(&world, &ctx, &cfg, || {})
    } else {
        // the guest's first frame: its interface is up and answers ARP
        while world.borrow().external.as_ref().unwrap().stats().frames_in == 0 {
            assert!(t0.elapsed() < cfg.connect_wall, "no frame from the guest");
            world.borrow_mut().round();
        }
        rping::client(&world, &ctx, LINUX_IP.parse().unwrap(), 0, &cfg)
    };
    world
        .borrow_mut()
        .external
        .as_mut()
        .unwrap()
        .flush_pcap()
        .unwrap();
    let report =
        report.unwrap_or_else(|e| panic!("node: {e}\n--- guest console:\n{}", guest.console()));
    let rc = guest.wait(Duration::from_secs(120));
    let console = guest.console();
    println!(
        "{name}: {} pings of {SIZE} octets in {:.2} s wall ({} clocks), whole case {:.1} s; peer {:?}",
        report.data.len(),
        report.wall.as_secs_f64(),
        report.clocks,
        t0.elapsed().as_secs_f64(),
        report.connection
    );
    assert_eq!(
        rc,
        Some(0),
        "Linux rping's exit status; console:\n{console}"
    );
    let pings = console
        .lines()
        .filter(|l| l.contains("ping data: rdma-ping-"))
        .count();
    assert_eq!(
        pings, COUNT,
        "Linux printed every ping; console:\n{console}"
    );
    assert_eq!(report.data.len(), COUNT);

    let tshark = |filter: &str| support::tshark_count(&pcap, filter);
    assert_eq!(
        tshark("_ws.malformed || _ws.expert.severity == error"),
        0,
        "{}",
        pcap.display()
    );
    let fpdus = tshark("iwarp_ddp_rdmap");
    // per ping: 4 Sends, a Read Request, its Response and a Write
    assert!(
        fpdus >= 7 * COUNT,
        "tshark sees {fpdus} FPDUs in {}",
        pcap.display()
    );
    println!(
        "{name}: tshark: {fpdus} FPDUs, {} retransmissions, {} duplicate ACKs ({})",
        tshark("tcp.analysis.retransmission"),
        tshark("tcp.analysis.duplicate_ack"),
        pcap.display()
    );
}

#[test]
fn rping_node_server_linux_client() {
    case(true);
}

#[test]
fn rping_node_client_linux_server() {
    case(false);
}
