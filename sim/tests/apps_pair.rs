//! The applications `rnic-sim rping` and `rnic-sim perftest` play
//! (`rnic_sim::apps`), one co-simulated node on each side: two worlds in
//! two threads, each node's MAC on the external port, joined by a Unix
//! socket in QEMU's stream framing, as a node meets a Linux guest in
//! `make interop`. Every role pair must finish: rping's pings checked by
//! both sides; perftest's parameter exchange, both connections, the test
//! traffic (ib_send_bw's credit pacing included) and the close. The live
//! Linux peer (`linux_peer`, `make interop`) is the independent reference;
//! this keeps the applications' both roles working without QEMU, and checks
//! the pair's capture with tshark (no malformed frame).

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[path = "../../testdata/support.rs"]
mod support;

use rnic_driver::{Context, NetConfig};
use rnic_fw::retx::RetxConfig;
use rnic_sim::apps::{perftest, rping};
use rnic_sim::external::ExternalPort;
use rnic_sim::node::{World, COSIM_RDMA_RETX};
use rnic_sim::sim_bus::{driver_options, SimBus};

const SERVER: [u8; 4] = [10, 0, 0, 1];
const CLIENT: [u8; 4] = [10, 0, 0, 2];
const LIMIT: Duration = Duration::from_secs(600);

type Shared = std::rc::Rc<std::cell::RefCell<World>>;

/// A node whose MAC is `port`, configured as `ip`. Each node's RTO is
/// against a peer in another thread, whose clock runs apart: as against a
/// live peer (`rping::LIVE_PEER_RTO_US`).
fn node(port: ExternalPort, ip: [u8; 4]) -> (Shared, Context<SimBus>) {
    let world = World::external(port).shared();
    world.borrow_mut().nodes[0].fw.config.rdma_retx = RetxConfig {
        rto: rping::LIVE_PEER_RTO_US,
        rto_min: rping::LIVE_PEER_RTO_US,
        rto_max: 8 * rping::LIVE_PEER_RTO_US,
        ..COSIM_RDMA_RETX
    };
    let ctx = Context::open_with(SimBus::new(world.clone(), 0), driver_options()).unwrap();
    ctx.configure(&NetConfig {
        mac: [0x02, 0, 0, 0, 0, ip[3]],
        ip: ip.into(),
        netmask: [255, 255, 255, 0].into(),
        gateway: None,
        mtu: 1500,
    })
    .unwrap();
    (world, ctx)
}

/// Runs `server` on a node listening on a fresh socket and `client` on a
/// node connected to it, each in its own thread; both must succeed. The
/// server's side of the traffic is captured to `pcap`.
fn pair<S, C>(name: &str, server: S, client: C) -> PathBuf
where
    S: FnOnce(&Shared, &Context<SimBus>) -> Result<String, String> + Send + 'static,
    C: FnOnce(&Shared, &Context<SimBus>) -> Result<String, String> + Send + 'static,
{
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let sock = dir.join(format!("{name}.sock"));
    let pcap = dir.join(format!("{name}.pcap"));
    let _ = std::fs::remove_file(&sock);
    let mut port = ExternalPort::listen_unix(&sock).unwrap();
    port.pcap_to(&pcap).unwrap();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let s = std::thread::spawn(move || {
        let (world, ctx) = node(port, SERVER);
        ready_tx.send(()).unwrap();
        let r = server(&world, &ctx);
        world
            .borrow_mut()
            .external
            .as_mut()
            .unwrap()
            .flush_pcap()
            .unwrap();
        r
    });
    ready_rx.recv().unwrap();
    let c = std::thread::spawn(move || {
        let (world, ctx) = node(ExternalPort::connect_unix(&sock).unwrap(), CLIENT);
        client(&world, &ctx)
    });
    let (cr, sr) = (c.join().unwrap(), s.join().unwrap());
    println!("{name}: server {sr:?}\n{name}: client {cr:?}");
    sr.unwrap();
    cr.unwrap();
    pcap
}

/// tshark finds no malformed frame and at least `fpdus` iWARP frames.
fn tshark_clean(pcap: &Path, fpdus: usize) {
    if !support::have_tool("tshark") {
        return;
    }
    let count = |filter: &str| support::tshark_count(pcap, filter);
    assert_eq!(
        count("_ws.malformed || _ws.expert.severity == error"),
        0,
        "{}",
        pcap.display()
    );
    let n = count("iwarp_ddp_rdmap");
    assert!(n >= fpdus, "{n} FPDUs < {fpdus} in {}", pcap.display());
}

#[test]
fn rping_node_against_node() {
    let cfg = rping::Config {
        size: 4096,
        count: 3,
        step_wall: LIMIT,
        connect_wall: LIMIT,
        ..rping::Config::default()
    };
    let (sc, cc) = (cfg.clone(), cfg.clone());
    let pcap = pair(
        "apps_rping",
        move |w, ctx| rping::server(w, ctx, &sc, || {}).map(|r| format!("{} pings", r.data.len())),
        move |w, ctx| {
            let r = rping::client(w, ctx, Ipv4Addr::from(SERVER), 0, &cc)?;
            // the echo is rping's pattern, ping by ping
            for (i, d) in r.data.iter().enumerate() {
                if *d != rping::ping_data(i, cc.size) {
                    return Err(format!("ping {i}: not rping's data"));
                }
            }
            Ok(format!("{} pings", r.data.len()))
        },
    );
    // per ping: 4 Sends, a Read Request, its Responses, the Write's FPDUs
    tshark_clean(&pcap, 7 * cfg.count);
}

fn perftest_pair(verb: perftest::Verb, name: &str) {
    let cfg = perftest::Config {
        verb,
        size: 8192,
        iters: 8,
        step_wall: LIMIT,
        connect_wall: LIMIT,
        ..perftest::Config::default()
    };
    let (sc, cc) = (cfg.clone(), cfg.clone());
    let pcap = pair(
        name,
        move |w, ctx| {
            let r = perftest::server(w, ctx, &sc)?;
            if r.peer_version != perftest::VERSION {
                return Err(format!("peer version {:?}", r.peer_version));
            }
            // Write and Read: the client's report reached the server
            match sc.verb {
                perftest::Verb::Send => Ok(format!("{:?}", r.mine)),
                _ if r.peer.iters == sc.iters as u64
                    && r.peer.size == sc.size as u64
                    && r.peer.bw_avg > 0.0 =>
                {
                    Ok(format!("{:?}", r.peer))
                }
                _ => Err(format!("the client's report: {:?}", r.peer)),
            }
        },
        move |w, ctx| {
            let r = perftest::client(w, ctx, Ipv4Addr::from(SERVER), &cc)?;
            Ok(format!("{:?}, {:.0} MB/s simulated", r.mine, r.sim_mb_s))
        },
    );
    // 16 exchanges (11 for Send) each way, and the test's FPDUs
    tshark_clean(&pcap, 2 * 11 + cfg.iters);
}

#[test]
fn ib_write_bw_node_against_node() {
    perftest_pair(perftest::Verb::Write, "apps_write_bw");
}

#[test]
fn ib_read_bw_node_against_node() {
    perftest_pair(perftest::Verb::Read, "apps_read_bw");
}

#[test]
fn ib_send_bw_node_against_node() {
    perftest_pair(perftest::Verb::Send, "apps_send_bw");
}
