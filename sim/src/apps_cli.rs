//! `rnic-sim rping` and `rnic-sim perftest`: one co-simulated node on an
//! external socket plays rdma-core's rping (`rnic_sim::apps::rping`) or
//! perftest's `ib_write_bw -R` / `ib_read_bw -R` (`rnic_sim::apps::perftest`)
//! against whatever is on the other end — a QEMU guest with Linux siw
//! (`make interop`, `scripts/interop.sh`).

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use rnic_driver::{Context, NetConfig};
use rnic_fw::retx::RetxConfig;
use rnic_sim::apps::{perftest, rping};
use rnic_sim::external::ExternalPort;
use rnic_sim::node::{World, COSIM_RDMA_RETX};
use rnic_sim::rtl_run::CLOCKS_PER_US;
use rnic_sim::sim_bus::{driver_options, SimBus};

/// The node and its socket, for every application.
#[derive(Args)]
pub struct NodeArgs {
    /// The node's MAC is this Unix socket, listening (QEMU connects:
    /// `-netdev stream,server=off,addr.type=unix,addr.path=PATH`).
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "connect",
        required_unless_present = "connect"
    )]
    listen: Option<PathBuf>,
    /// The node's MAC is this Unix socket, connecting (QEMU listens).
    #[arg(long, value_name = "PATH")]
    connect: Option<PathBuf>,
    /// The node's IPv4 address (/24).
    #[arg(long, default_value = "10.0.0.1")]
    ip: Ipv4Addr,
    /// MPA CRC: asked for as initiator and as responder (RFC 5044 §7.1;
    /// it is used when either side asks).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    crc: bool,
    /// RFC 6581 peer-to-peer mode (RTR) offered as initiator and accepted
    /// as responder.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    p2p: bool,
    /// The node's RDMA-mode retransmission timeout, initial and minimum, in
    /// microseconds of SIMULATED time (the firmware's clock is the core's);
    /// see docs/sim.md "A live Linux peer".
    #[arg(long, default_value_t = rping::LIVE_PEER_RTO_US)]
    rto_us: u64,
    /// Longest wall-clock wait for one step (a completion or event), s.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Write every frame through the socket to this pcap (wall-clock
    /// timestamps).
    #[arg(long)]
    pcap: Option<PathBuf>,
}

#[derive(Args)]
pub struct RpingArgs {
    /// Play rping's server (`rping -s`): listen on --port.
    #[arg(
        short = 's',
        long,
        conflicts_with = "client",
        required_unless_present = "client"
    )]
    server: bool,
    /// Play rping's client (`rping -c -a ADDR`): connect to ADDR.
    #[arg(short = 'c', long, value_name = "ADDR")]
    client: Option<Ipv4Addr>,
    #[command(flatten)]
    node: NodeArgs,
    /// `-S`: ping buffer size (rping's range: 26 to 65535).
    #[arg(short = 'S', long, default_value_t = rping::DEFAULT_SIZE)]
    size: usize,
    /// `-C`: pings.
    #[arg(short = 'C', long, default_value_t = 5)]
    count: usize,
    /// `-p`: TCP port.
    #[arg(short = 'p', long, default_value_t = rping::PORT)]
    port: u16,
    /// `-v`: print each ping's data.
    #[arg(short = 'v', long)]
    verbose: bool,
}

/// The perftest tests the node plays.
#[derive(Clone, Copy, clap::ValueEnum)]
enum PerfTest {
    #[value(name = "ib_write_bw")]
    Write,
    #[value(name = "ib_read_bw")]
    Read,
    #[value(name = "ib_send_bw")]
    Send,
}

#[derive(Args)]
pub struct PerftestArgs {
    /// The test: ib_write_bw, ib_read_bw or ib_send_bw (always with -R,
    /// rdma_cm).
    #[arg(value_enum)]
    test: PerfTest,
    /// Play the server (`ib_X_bw -R`): listen on --port.
    #[arg(long, conflicts_with = "client", required_unless_present = "client")]
    server: bool,
    /// Play the client (`ib_X_bw -R ADDR`): connect to ADDR.
    #[arg(long, value_name = "ADDR")]
    client: Option<Ipv4Addr>,
    #[command(flatten)]
    node: NodeArgs,
    /// `-s`: message size.
    #[arg(short = 's', long, default_value_t = 65536)]
    size: usize,
    /// `-n`: iterations.
    #[arg(short = 'n', long, default_value_t = 20)]
    iters: usize,
    /// `-p`: TCP port.
    #[arg(short = 'p', long, default_value_t = perftest::PORT)]
    port: u16,
}

/// The node's MAC for address `ip`: locally administered, ending in the
/// address's last two octets.
fn mac_of(ip: Ipv4Addr) -> [u8; 6] {
    let o = ip.octets();
    [0x02, 0, 0, 0, o[2], o[3]]
}

pub fn rping(a: RpingArgs) -> ExitCode {
    match session(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rnic-sim rping: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

type Shared = std::rc::Rc<std::cell::RefCell<World>>;

/// The node on its socket, configured: its world and its driver.
fn open_node(a: &NodeArgs) -> Result<(Shared, Context<SimBus>), String> {
    let mut port = match (&a.listen, &a.connect) {
        (Some(p), _) => {
            let _ = std::fs::remove_file(p);
            ExternalPort::listen_unix(p).map_err(|e| format!("listen {}: {e}", p.display()))?
        }
        (None, Some(p)) => {
            ExternalPort::connect_unix(p).map_err(|e| format!("connect {}: {e}", p.display()))?
        }
        (None, None) => unreachable!("clap requires one"),
    };
    if let Some(p) = &a.pcap {
        port.pcap_to(p)
            .map_err(|e| format!("pcap {}: {e}", p.display()))?;
    }
    let world = World::external(port).shared();
    {
        let mut w = world.borrow_mut();
        let fw = &mut w.nodes[0].fw.config;
        fw.rdma_retx = RetxConfig {
            rto: a.rto_us,
            rto_min: a.rto_us,
            rto_max: COSIM_RDMA_RETX.rto_max.max(8 * a.rto_us),
            ..COSIM_RDMA_RETX
        };
        fw.crc = a.crc;
        fw.p2p = a.p2p;
    }
    let ctx = Context::open_with(SimBus::new(world.clone(), 0), driver_options())
        .map_err(|e| format!("driver: {e:?}"))?;
    ctx.configure(&NetConfig {
        mac: mac_of(a.ip),
        ip: a.ip,
        netmask: Ipv4Addr::new(255, 255, 255, 0),
        gateway: None,
        mtu: 1500,
    })
    .map_err(|e| format!("configure: {e:?}"))?;
    Ok((world, ctx))
}

/// Runs the world until the peer's first frame: its interface is up. The
/// node's ARP request would otherwise go unanswered, and the firmware
/// repeats it only after a second of simulated time.
fn wait_for_peer(world: &Shared, limit: Duration) -> Result<(), String> {
    let t = Instant::now();
    while world.borrow().external.as_ref().unwrap().stats().frames_in == 0 {
        if t.elapsed() > limit {
            return Err("no frame from the peer".into());
        }
        world.borrow_mut().round();
    }
    Ok(())
}

/// The port's and the firmware's counters, and the simulator's speed.
fn print_stats(world: &Shared, t0: Instant) {
    let stats = {
        let mut w = world.borrow_mut();
        let ext = w.external.as_mut().unwrap();
        let _ = ext.flush_pcap();
        ext.stats()
    };
    let fw = world.borrow().nodes[0].fw.stats().retx;
    let clocks = world.borrow().cycle();
    println!(
        "external port: {} frames in, {} out, {} dropped; node: {} clocks ({:.3} ms simulated) in {:.1} s, {:.0} clocks/s",
        stats.frames_in,
        stats.frames_out,
        stats.frames_dropped,
        clocks,
        clocks as f64 / CLOCKS_PER_US as f64 / 1000.0,
        t0.elapsed().as_secs_f64(),
        clocks as f64 / t0.elapsed().as_secs_f64()
    );
    println!("node RDMA retransmission: {fw:?}");
}

fn session(a: &RpingArgs) -> Result<(), String> {
    let (world, ctx) = open_node(&a.node)?;
    let n = &a.node;
    let cfg = rping::Config {
        size: a.size,
        count: a.count,
        port: a.port,
        crc: n.crc,
        step_wall: Duration::from_secs(n.timeout),
        step_clocks: None,
        connect_wall: Duration::from_secs(n.timeout),
        verbose: a.verbose,
    };
    let role = if a.server { "server" } else { "client" };
    println!(
        "rnic-sim rping: node {} ({role}), -S {} -C {}, MPA CRC {}, P2P {}, RDMA RTO {} us simulated",
        n.ip, a.size, a.count, n.crc, n.p2p, n.rto_us
    );
    let t0 = Instant::now();
    let report = match a.client {
        None => rping::server(&world, &ctx, &cfg, || {}),
        Some(peer) => wait_for_peer(&world, cfg.connect_wall)
            .and_then(|()| rping::client(&world, &ctx, peer, 0, &cfg)),
    };
    print_stats(&world, t0);
    let r = report?;
    let c = &r.connection;
    println!(
        "rnic-sim rping: {role} done: {} pings of {} octets checked, peer {}:{} (MPA rev {}, CRC {}, IRD/ORD {}/{}), {} attempt(s), pings took {:.2} s wall, {} clocks",
        r.data.len(),
        a.size,
        c.peer_ip,
        c.peer_port,
        c.mpa_revision,
        c.crc,
        c.ird,
        c.ord,
        r.attempts,
        r.wall.as_secs_f64(),
        r.clocks
    );
    Ok(())
}

pub fn perftest(a: PerftestArgs) -> ExitCode {
    match perftest_session(&a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rnic-sim perftest: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn perftest_session(a: &PerftestArgs) -> Result<(), String> {
    let (world, ctx) = open_node(&a.node)?;
    let n = &a.node;
    let (verb, name) = match a.test {
        PerfTest::Write => (perftest::Verb::Write, "ib_write_bw"),
        PerfTest::Read => (perftest::Verb::Read, "ib_read_bw"),
        PerfTest::Send => (perftest::Verb::Send, "ib_send_bw"),
    };
    let cfg = perftest::Config {
        verb,
        size: a.size,
        iters: a.iters,
        port: a.port,
        crc: n.crc,
        step_wall: Duration::from_secs(n.timeout),
        connect_wall: Duration::from_secs(n.timeout),
    };
    let role = if a.server { "server" } else { "client" };
    println!(
        "rnic-sim perftest: {name} -R, node {} ({role}), -s {} -n {}, MPA CRC {}, P2P {}, RDMA RTO {} us simulated",
        n.ip, a.size, a.iters, n.crc, n.p2p, n.rto_us
    );
    let t0 = Instant::now();
    let report = match a.client {
        None => perftest::server(&world, &ctx, &cfg),
        Some(peer) => wait_for_peer(&world, cfg.connect_wall)
            .and_then(|()| perftest::client(&world, &ctx, peer, &cfg)),
    };
    print_stats(&world, t0);
    let r = report?;
    let show = |who: &str, b: &perftest::BwReport| {
        println!(
            "{who}: {} x {} octets, BW peak {:.2} MB/s, average {:.2} MB/s, {:.6} Mpps",
            b.iters, b.size, b.bw_peak, b.bw_avg, b.msg_rate
        )
    };
    println!(
        "rnic-sim perftest: {name} {role} done, peer perftest {}",
        r.peer_version
    );
    // perftest's client measures, and sends its report to the server;
    // ib_send_bw trades none, and each side measures its own
    if a.server && verb != perftest::Verb::Send {
        show("the client (Linux) measured", &r.peer);
    } else {
        show("the node measured (wall clock)", &r.mine);
        println!(
            "the node's bandwidth in simulated time: {:.1} MB/s ({} clocks)",
            r.sim_mb_s, r.clocks
        );
    }
    Ok(())
}
