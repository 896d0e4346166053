//! The default scenario over the RTL (DESIGN.md §7): two co-simulated nodes
//! ([`World::pair`]: each a Verilated `rnic_core` with its real firmware,
//! host memory and DMA server, joined by the link model), each driven only
//! through the host driver (`rnic_driver` over [`SimBus`]). B listens, A
//! connects (TCP + MPA rev 2, private data both ways), both register
//! memory, then over a size sweep A does RDMA Writes into B's region and
//! Sends into receives B posted; each one is verified byte-exact in B's host
//! memory with every octet around the target (the rest of the buffer the
//! region lies in) unchanged, and A reads B's Write region back into its
//! own with RDMA Read. Then A closes gracefully; the report says whether B
//! saw Closed.
//!
//! What is timed per message:
//! * Write: post → B's placement records cover the whole message and B's
//!   DMA is idle; then A polls its send CQ for the Write's CQE (it comes
//!   once B's ACK covers the message);
//! * Send: post → B's receive CQE polled; then A's send CQE, as for Write;
//! * Read (responder `rreq_queue`/`read_resp`, requester `rd_track`): post →
//!   A's `RdmaRead` CQE polled, then A's memory checked.
//!
//! Every wait has a cycle budget: a stall ends the run with an error that
//! names the operation and what was last seen, never a hang.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rnic_driver::{
    AccessFlags, Bus, CmEvent, ConnectParams, Context, Cq, DmaMem, EventKind, MpaOptions, Mr,
    NetConfig, Qp, RecvWr, RemoteAddr, RetxTimer, SendOp, SendWr, WorkCompletion,
};
use rnic_wire::abi::context::{
    port, ConnContext, ConnMode, MPA_CRC_TX, MPA_MARKERS_RX, MPA_MARKERS_TX,
};
use rnic_wire::abi::cqe::{WcOpcode, WcStatus};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use rnic_wire::ddp::{TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN};
use rnic_wire::mpa::{
    MPA_ALIGNMENT, MPA_CRC_LEN, MPA_MARKER_INTERVAL, MPA_MARKER_LEN, MPA_ULPDU_LENGTH_LEN,
};

use crate::clock::Timing;
use crate::cpu_fw::CpuStats;
use crate::link::{Link, LinkConfig, Side};
use crate::model_run::{ETHERNET_WIRE_OVERHEAD, IPV4_TCP_HEADERS};
use crate::node::{FwKind, World};
use crate::rng::Rng;
use crate::sim_bus::{driver_options, SimBus};

/// Whether the RTL answers RDMA Read Requests (responder + requester
/// completion): it does; with `false` the scenario leaves Read out.
pub const READ_IN_RTL: bool = true;
/// Whether the RTL writes send-side CQEs: it does; with `false` Writes and
/// Sends are posted unsignaled and the send queue must hold every WR.
pub const SEND_CQE_IN_RTL: bool = true;

/// Ethernet II header (no VLAN), octets.
pub const ETHERNET_HEADER: usize = 14;
/// Guard octets around every target region, checked unchanged.
pub const GUARD: usize = 4096;
/// The port B listens on.
pub const PORT: u16 = 7174;
/// IRD/ORD both sides offer (RFC 6581).
pub const READ_DEPTH: u16 = 4;
/// How long a CM event may take (simulated).
pub const CM_WAIT: Duration = Duration::from_millis(20);
/// The driver's wait per call while waiting for a CM event.
pub const CM_SLICE: Duration = Duration::from_micros(20);
/// How long B may take to see the graceful close (simulated): the FIN
/// exchange takes a few µs with the native firmware.
pub const CLOSE_WAIT: Duration = Duration::from_micros(200);
/// The same with the firmware on the RISC-V cores: each step of the FIN
/// exchange waits for a poll of the firmware (tens of µs each).
pub const CLOSE_WAIT_CPU: Duration = Duration::from_millis(2);
/// Smallest RTO [`run`] sets for the firmware on the RISC-V cores, µs.
pub const CPU_FW_RTO_US: u64 = 200;
/// Smallest cycle budget per operation ([`RtlConfig::budget_base`]) with
/// the firmware on the cores and link faults on: room for the RTO's
/// backoff (200 µs doubling to 2 ms is 31,250 to 312,500 clocks).
pub const CPU_FW_FAULT_BUDGET: u64 = 3_000_000;

/// The node's interface configuration: MAC 02:00:00:00:00:0i, IP 10.0.0.i.
pub fn net_config(i: u8, mtu: u16) -> NetConfig {
    NetConfig {
        mac: [0x02, 0, 0, 0, 0, i],
        ip: Ipv4Addr::new(10, 0, 0, i),
        netmask: Ipv4Addr::new(255, 255, 255, 0),
        gateway: None,
        mtu,
    }
}

/// Two nodes over a link (optionally captured to `pcap`).
pub fn world_pair(link: LinkConfig, pcap: Option<&Path>) -> Result<Rc<RefCell<World>>, String> {
    world_pair_with(link, pcap, FwKind::Native)
}

/// [`world_pair`] with both nodes' firmware on `fw`.
pub fn world_pair_with(
    link: LinkConfig,
    pcap: Option<&Path>,
    fw: FwKind,
) -> Result<Rc<RefCell<World>>, String> {
    let mut link = Link::new(link);
    if let Some(p) = pcap {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        link.pcap_to(p)
            .map_err(|e| format!("pcap {}: {e}", p.display()))?;
    }
    Ok(World::pair_with(link, fw)?.shared())
}

/// A's next hop changed from `old` to `new` during the run captured in
/// `pcap` (the world's link pcap, flushed here): A's IPv4 frames go to `old`
/// up to one frame and to `new` from it on, never back. Returns how many
/// went to each; `Err` says what broke the rule.
pub fn route_switch(
    world: &Rc<RefCell<World>>,
    pcap: &Path,
    old: [u8; 6],
    new: [u8; 6],
) -> Result<(usize, usize), String> {
    if let Some(link) = world.borrow_mut().link.as_mut() {
        link.flush_pcap()
            .map_err(|e| format!("pcap {}: {e}", pcap.display()))?;
    }
    let frames =
        crate::pcap::read_frames(pcap).map_err(|e| format!("pcap {}: {e}", pcap.display()))?;
    let a_mac = net_config(1, 1500).mac;
    let dsts: Vec<[u8; 6]> = frames
        .iter()
        .filter_map(|(_, f)| rnic_wire::net::EthernetFrame::new_checked(&f[..]).ok())
        .filter(|e| {
            e.src_addr().0 == a_mac && e.ethertype() == rnic_wire::net::EthernetProtocol::Ipv4
        })
        .map(|e| e.dst_addr().0)
        .collect();
    let first_new = dsts
        .iter()
        .position(|d| *d == new)
        .ok_or("no frame to the new next hop")?;
    if let Some(d) = dsts[..first_new].iter().find(|d| **d != old) {
        return Err(format!("before the switch a frame went to {d:02x?}"));
    }
    if let Some(d) = dsts[first_new..].iter().find(|d| **d != new) {
        return Err(format!("after the switch a frame went to {d:02x?}"));
    }
    Ok((first_new, dsts.len() - first_new))
}

/// Node A's connection context bound to its QP `qpn` (RDMA mode), read
/// through its firmware port ([`crate::fw_hal::FwNode::with_port`]): the
/// negotiated MSS, MULPDU and MPA flags, wherever the firmware runs.
pub fn a_conn_context(world: &Rc<RefCell<World>>, qpn: u32) -> Result<ConnContext, String> {
    let hw = world.borrow().nodes[0].hw.clone();
    let mut hw = hw.borrow_mut();
    hw.with_port(|n| {
        let limit = n.fw_read(port::LIM_CONN);
        for i in 0..limit {
            let c = n
                .read_conn(i)
                .map_err(|e| format!("read A's connection {i}: {e:?}"))?;
            if c.mode == ConnMode::Rdma && c.qpn == qpn {
                return Ok(c);
            }
        }
        Err(format!("A has no RDMA-mode connection for QP {qpn}"))
    })
}

/// Opens the driver on node `idx` and configures it as
/// [`net_config`]`(idx + 1, mtu)`.
pub fn open_node(
    world: &Rc<RefCell<World>>,
    idx: usize,
    mtu: u16,
) -> Result<Context<SimBus>, String> {
    let ctx = Context::open_with(SimBus::new(world.clone(), idx), driver_options())
        .map_err(|e| format!("node {idx}: open: {e:?}"))?;
    ctx.configure(&net_config(idx as u8 + 1, mtu))
        .map_err(|e| format!("node {idx}: configure: {e:?}"))?;
    Ok(ctx)
}

/// Waits for the next CM event of `kind` on `ctx` (completion notices are
/// skipped; any other kind is an error).
pub fn expect_event(ctx: &Context<SimBus>, kind: EventKind, who: &str) -> Result<CmEvent, String> {
    let start = ctx.bus().now();
    loop {
        // short slices: an event whose interrupt does not come is still
        // found on the next slice, not after the whole CM_WAIT
        let ev = match ctx.get_cm_event(CM_SLICE) {
            Ok(ev) => ev,
            Err(rnic_driver::Error::Timeout) if ctx.bus().now() - start < CM_WAIT => continue,
            Err(e) => return Err(format!("{who}: no {kind:?} event: {e:?}")),
        };
        if ev.kind == kind {
            return Ok(ev);
        }
        if ev.kind != EventKind::CqCompletion {
            return Err(format!(
                "{who}: {:?} (status {:#x}) while waiting for {kind:?}",
                ev.kind, ev.status
            ));
        }
    }
}

/// MPA revision 2 with CRC, no markers: what the two-node rigs negotiate.
pub const MPA_REV2_CRC: MpaOptions = MpaOptions {
    revision: 2,
    crc: true,
    markers: false,
};

/// A's connect to node B (10.0.0.2) on [`PORT`] with IRD = ORD =
/// [`READ_DEPTH`].
pub fn connect_params(mpa: MpaOptions) -> ConnectParams {
    ConnectParams {
        peer_ip: net_config(2, 1500).ip,
        peer_port: PORT,
        local_port: 0,
        ird: READ_DEPTH,
        ord: READ_DEPTH,
        mpa,
    }
}

/// Opens both nodes of `world` (MTU 1500); runs `before` with their
/// contexts; makes a PD, a CQ of 16 and a QP of 8 × 8 on each; connects A
/// to B (MPA rev 2 with CRC, no private data); then runs `body` with A's
/// and B's PDs and A's QP. Panics on failure (for tests).
pub fn connected_pair<R>(
    world: &Rc<RefCell<World>>,
    before: impl FnOnce(&Context<SimBus>, &Context<SimBus>),
    body: impl FnOnce(&rnic_driver::Pd<'_, SimBus>, &rnic_driver::Pd<'_, SimBus>, &Qp<'_, SimBus>) -> R,
) -> R {
    let a = open_node(world, 0, 1500).unwrap_or_else(|e| panic!("{e}"));
    let b = open_node(world, 1, 1500).unwrap_or_else(|e| panic!("{e}"));
    before(&a, &b);
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (cq_a, cq_b) = (a.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 8, 8).unwrap();
    connect_pair(&a, &qp_a, &b, &qp_b, MPA_REV2_CRC, b"", b"").unwrap_or_else(|e| panic!("{e}"));
    body(&pd_a, &pd_b, &qp_a)
}

/// An RDMA Write of `len` seeded octets from node 0 (`pd_a`, `qp_a`) to
/// node 1 (`pd_b`) of `world`, checked byte-exact in B's memory; `mid`
/// runs once `len / 8` is placed. Panics on failure (for tests).
pub fn write_a_to_b(
    world: &Rc<RefCell<World>>,
    pd_a: &rnic_driver::Pd<'_, SimBus>,
    pd_b: &rnic_driver::Pd<'_, SimBus>,
    qp_a: &Qp<'_, SimBus>,
    len: usize,
    mid: impl FnOnce(),
) {
    let ctx_a = pd_a.context();
    let ctx_b = pd_b.context();
    let acc = |x| AccessFlags::from_bits(x).unwrap();
    let (src, dst) = (ctx_a.alloc_dma(len).unwrap(), ctx_b.alloc_dma(len).unwrap());
    let data = Rng::new(len as u64).bytes(len);
    src.write(0, &data).unwrap();
    let mr_src = pd_a.reg_mr(&src, 0, len, acc(ACCESS_LOCAL_WRITE)).unwrap();
    let mr_dst = pd_b
        .reg_mr(&dst, 0, len, acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE))
        .unwrap();
    let placed = |settled: bool| {
        let w = world.borrow();
        let hw = w.nodes[1].hw.borrow();
        if settled && !hw.dma.idle() {
            return 0;
        }
        hw.placed.iter().map(|p| p.2 as usize).sum::<usize>()
    };
    let sge = [mr_src.sge(0, len as u32).unwrap()];
    qp_a.post_send(&[SendWr {
        wr_id: 1,
        op: SendOp::RdmaWrite(RemoteAddr {
            addr: mr_dst.va(),
            rkey: mr_dst.rkey(),
        }),
        sges: &sge,
        signaled: false,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .unwrap();
    // room for a few of the cores' RTOs (200 µs = 31,250 clocks)
    let budget = 1_000_000 + 4 * len as u64;
    run_until(world, budget, |_| placed(false) >= len / 8)
        .unwrap_or_else(|c| panic!("an eighth of the Write not placed after {c} clocks"));
    mid();
    run_until(world, budget, |_| placed(true) >= len)
        .unwrap_or_else(|c| panic!("Write not placed after {c} clocks"));
    let mut got = vec![0u8; len];
    dst.read(0, &mut got).unwrap();
    assert_eq!(
        (0..len).find(|&i| got[i] != data[i]),
        None,
        "first wrong octet"
    );
}

/// B listens on [`PORT`], A's `qp_a` connects with `req` as private data,
/// B accepts onto `qp_b` with `rep`; both Established. Returns (B's
/// ConnectRequest, A's Established).
pub fn connect_pair(
    a: &Context<SimBus>,
    qp_a: &Qp<'_, SimBus>,
    b: &Context<SimBus>,
    qp_b: &Qp<'_, SimBus>,
    mpa: MpaOptions,
    req: &[u8],
    rep: &[u8],
) -> Result<(CmEvent, CmEvent), String> {
    let _l = b.listen(PORT, 4).map_err(|e| format!("B: listen: {e:?}"))?;
    qp_a.connect(&connect_params(mpa), req)
        .map_err(|e| format!("A: connect: {e:?}"))?;
    let creq = expect_event(b, EventKind::ConnectRequest, "B")?;
    b.accept(creq.handle, qp_b, READ_DEPTH, READ_DEPTH, rep)
        .map_err(|e| format!("B: accept: {e:?}"))?;
    expect_event(b, EventKind::Established, "B")?;
    let est = expect_event(a, EventKind::Established, "A")?;
    Ok((creq, est))
}

/// Runs `world` round by round until `done` or `budget` clocks passed;
/// `Err(last seen)` on a stall.
pub fn run_until(
    world: &Rc<RefCell<World>>,
    budget: u64,
    mut done: impl FnMut(&World) -> bool,
) -> Result<u64, u64> {
    let start = world.borrow().cycle();
    loop {
        if done(&world.borrow()) {
            return Ok(world.borrow().cycle() - start);
        }
        let now = world.borrow().cycle();
        if now - start > budget {
            return Err(now - start);
        }
        world.borrow_mut().round();
    }
}

/// Core clocks per µs at the co-simulated core's 156.25 MHz
/// (`port::CLOCK_KHZ` = 156 250), rounded down.
pub const CLOCKS_PER_US: u64 = Timing::DATAPATH.cycles_per_us();

/// A frame's TCP (sequence number, acknowledgment number, payload length),
/// if it is an Ethernet II / IPv4 / TCP segment (smoltcp's parsers).
pub fn tcp_of(frame: &[u8]) -> Option<(u32, u32, usize)> {
    use rnic_wire::net::{EthernetFrame, EthernetProtocol, Ipv4Packet, TcpPacket};
    let eth = EthernetFrame::new_checked(frame).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ip = Ipv4Packet::new_checked(eth.payload()).ok()?;
    let tcp = TcpPacket::new_checked(ip.payload()).ok()?;
    Some((
        tcp.seq_number().0 as u32,
        tcp.ack_number().0 as u32,
        tcp.payload().len(),
    ))
}

/// The two-node rig of the loss tests: nodes A and B over a link (captured
/// to `pcap`), one RC QP pair connected with MPA rev 2 and CRC, a source
/// region on A and a remotely writable target region on B, each `len`
/// octets between [`GUARD`]s. A's source holds `data`; B's whole buffer is
/// 0xEE. A's firmware gives up after 3 retransmissions (RTO, 2 RTO, 4 RTO,
/// 4 RTO, then the connection is lost), so a Write B never answers ends
/// well under a millisecond.
pub struct WriteRig<'r> {
    pub world: &'r Rc<RefCell<World>>,
    pub a: &'r Context<SimBus>,
    pub b: &'r Context<SimBus>,
    pub cq_a: &'r Cq<'r, SimBus>,
    pub qp_a: &'r Qp<'r, SimBus>,
    pub mr_a: &'r Mr<'r, SimBus>,
    pub mr_b: &'r Mr<'r, SimBus>,
    pub buf_b: &'r <SimBus as Bus>::Dma,
    pub data: Vec<u8>,
}

impl WriteRig<'_> {
    /// Posts one RDMA Write of the whole source into the whole target.
    pub fn post_write(&self, wr_id: u64, signaled: bool) -> Result<(), String> {
        self.post_write_as(wr_id, signaled, false)
    }

    /// [`Self::post_write`], the source's octets given inline
    /// (`SendWr::inline_data`) when `inline`: the device reads no buffer.
    pub fn post_write_as(&self, wr_id: u64, signaled: bool, inline: bool) -> Result<(), String> {
        let sges = [self
            .mr_a
            .sge(0, self.data.len() as u32)
            .map_err(|e| format!("A: sge: {e:?}"))?];
        self.qp_a
            .post_send(&[SendWr {
                wr_id,
                op: SendOp::RdmaWrite(RemoteAddr {
                    addr: self.mr_b.va(),
                    rkey: self.mr_b.rkey(),
                }),
                sges: if inline { &[] } else { &sges },
                signaled,
                solicited: false,
                fence: false,
                inline_data: inline.then_some(&self.data[..]),
            }])
            .map_err(|e| format!("A: post Write: {e:?}"))
    }

    /// Runs the world until A's send CQ has a completion or `budget` clocks
    /// passed: the first completion (if any) and the clocks it took.
    pub fn await_completion(&self, budget: u64) -> (Option<WorkCompletion>, u64) {
        let start = self.world.borrow().cycle();
        let mut out = [WorkCompletion::default(); 4];
        while self.world.borrow().cycle() - start < budget {
            for _ in 0..64 {
                self.world.borrow_mut().round();
            }
            if self.cq_a.poll(&mut out).unwrap_or(0) > 0 {
                return (Some(out[0]), self.world.borrow().cycle() - start);
            }
        }
        (None, self.world.borrow().cycle() - start)
    }

    /// B's whole buffer: guard, target, guard.
    pub fn target_buffer(&self) -> Vec<u8> {
        let mut got = vec![0u8; self.data.len() + 2 * GUARD];
        self.buf_b.read(0, &mut got).expect("B's buffer reads");
        got
    }

    /// `None` if B's target holds `data` and both guards are untouched,
    /// else the first wrong octet's offset in B's buffer.
    pub fn first_wrong_octet(&self) -> Option<usize> {
        let got = self.target_buffer();
        let len = self.data.len();
        (0..got.len()).find(|&i| {
            let want = if (GUARD..GUARD + len).contains(&i) {
                self.data[i - GUARD]
            } else {
                0xEE
            };
            got[i] != want
        })
    }
}

/// Builds the [`WriteRig`] (MTU `mtu`, a `len`-octet region whose octet
/// `i` is `pattern(i)`) and runs `f` on it.
pub fn with_write_rig<R>(
    pcap: Option<&Path>,
    mtu: u16,
    len: usize,
    pattern: impl Fn(usize) -> u8,
    f: impl FnOnce(&WriteRig<'_>) -> R,
) -> Result<R, String> {
    with_write_rig_link(LinkConfig::default(), pcap, mtu, len, None, pattern, f)
}

/// [`with_write_rig`] over `link`, with both firmwares offering the
/// receive window `rcv_wnd` (octets, scaled by 7; `None`:
/// `DEVICE_RX_WINDOW`).
pub fn with_write_rig_link<R>(
    link: LinkConfig,
    pcap: Option<&Path>,
    mtu: u16,
    len: usize,
    rcv_wnd: Option<u32>,
    pattern: impl Fn(usize) -> u8,
    f: impl FnOnce(&WriteRig<'_>) -> R,
) -> Result<R, String> {
    let world = world_pair(link, pcap)?;
    if let Some(w) = rcv_wnd {
        for n in &mut world.borrow_mut().nodes {
            n.fw.config.rcv_wnd = w;
        }
    }
    let a = open_node(&world, 0, mtu)?;
    let b = open_node(&world, 1, mtu)?;
    fn e<E: std::fmt::Debug>(who: &'static str) -> impl Fn(E) -> String {
        move |err| format!("{who}: {err:?}")
    }
    let pd_a = a.alloc_pd().map_err(e("A: pd"))?;
    let pd_b = b.alloc_pd().map_err(e("B: pd"))?;
    let cq_a = a.create_cq(16).map_err(e("A: cq"))?;
    let cq_b = b.create_cq(16).map_err(e("B: cq"))?;
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 4).map_err(e("A: qp"))?;
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 4, 8).map_err(e("B: qp"))?;
    connect_pair(&a, &qp_a, &b, &qp_b, MPA_REV2_CRC, b"A", b"B")?;
    let acc = |bits| AccessFlags::from_bits(bits).expect("known access bits");
    let buf_a = a.alloc_dma(len + 2 * GUARD).map_err(e("A: dma"))?;
    let buf_b = b.alloc_dma(len + 2 * GUARD).map_err(e("B: dma"))?;
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, len, acc(ACCESS_LOCAL_WRITE))
        .map_err(e("A: mr"))?;
    let mr_b = pd_b
        .reg_mr(
            &buf_b,
            GUARD,
            len,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .map_err(e("B: mr"))?;
    let data: Vec<u8> = (0..len).map(pattern).collect();
    buf_a.write(GUARD, &data).map_err(e("A: write"))?;
    buf_b
        .write(0, &vec![0xEE; len + 2 * GUARD])
        .map_err(e("B: write"))?;
    let rto = crate::node::COSIM_RDMA_RETX.rto;
    world.borrow_mut().nodes[0].fw.config.rdma_retx = rnic_fw::retx::RetxConfig {
        rto,
        rto_min: rto,
        rto_max: 4 * rto,
        max_retries: 3,
    };
    let rig = WriteRig {
        world: &world,
        a: &a,
        b: &b,
        cq_a: &cq_a,
        qp_a: &qp_a,
        mr_a: &mr_a,
        mr_b: &mr_b,
        buf_b: &buf_b,
        data,
    };
    Ok(f(&rig))
}

/// What to run.
#[derive(Debug, Clone)]
pub struct RtlConfig {
    /// IP MTU of both interfaces.
    pub mtu: u16,
    /// Ask for MPA CRC32c.
    pub crc: bool,
    /// Ask for MPA markers.
    pub markers: bool,
    /// Seed of data, offsets and the link's faults.
    pub seed: u64,
    /// Operations of each kind per size.
    pub ops: usize,
    /// Largest message; sizes double from 1.
    pub max_size: usize,
    /// Writes and Sends of at most this many octets are posted inline
    /// (`SendWr::inline_data`, as perftest's `-I`); 0: none.
    pub inline: usize,
    /// Packet capture of the link.
    pub pcap: Option<PathBuf>,
    /// Verilator VCD trace of node A.
    pub vcd: Option<PathBuf>,
    /// Progress lines on stderr.
    pub progress: bool,
    /// Cycle budget per operation: `budget_base + size` clocks (the link
    /// carries at most 8 octets per clock).
    pub budget_base: u64,
    /// Link faults during the data phase (per frame, each direction):
    /// loss, corruption (bad FCS: dropped at the MAC), duplication,
    /// reordering. The connection is set up on a clean link (the firmware's
    /// SYN/MPA retransmission starts at 1 s, RFC 6298 §2); lost RDMA-mode
    /// data is recovered by the firmware's RTO and the RTL's replay.
    pub loss: f64,
    pub corrupt: f64,
    pub duplicate: f64,
    pub reorder: f64,
    /// One-way link delay, clocks.
    pub delay_cycles: u64,
    /// Receive window both firmwares offer (`None`: their default).
    pub rcv_window: Option<u32>,
    /// Where both nodes' firmware runs.
    pub fw: FwKind,
    /// With [`FwKind::Cpu`]: write node A's core's clocks per instruction
    /// address and call site here (`<pc> <call site> <clocks>` per line, hex
    /// addresses, most clocks first; map the addresses to functions with
    /// the image's symbols, `nm -n`).
    pub cpu_profile: Option<PathBuf>,
    /// Print both nodes' firmware log at this level and above on stderr
    /// (`crate::fw_log`): the native firmware's `log` records, or the
    /// image's defmt frames read from each core's RTT buffer.
    pub fw_log: Option<log::LevelFilter>,
    /// What a clock stands for: its period, the port's rate behind it
    /// (the link's rate and the wire limit), the DMA latencies in ns
    /// (`World::set_timing`). `delay_cycles` is in its clocks.
    pub timing: Timing,
}

impl RtlConfig {
    /// Whether any link fault is on.
    pub fn faults(&self) -> bool {
        self.loss > 0.0 || self.corrupt > 0.0 || self.duplicate > 0.0 || self.reorder > 0.0
    }
}

impl Default for RtlConfig {
    fn default() -> Self {
        RtlConfig {
            mtu: 1500,
            crc: true,
            markers: false,
            seed: 1,
            ops: 2,
            max_size: 1 << 20,
            inline: 0,
            pcap: None,
            vcd: None,
            progress: false,
            budget_base: 200_000,
            loss: 0.0,
            corrupt: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            delay_cycles: LinkConfig::default().delay,
            rcv_window: None,
            fw: FwKind::Native,
            cpu_profile: None,
            fw_log: None,
            timing: Timing::DATAPATH,
        }
    }
}

/// The scenario's operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtlOp {
    Write,
    Send,
    Read,
}

impl RtlOp {
    pub fn name(self) -> &'static str {
        match self {
            RtlOp::Write => "RDMA Write",
            RtlOp::Send => "Send/Recv",
            RtlOp::Read => "RDMA Read",
        }
    }
}

/// One operation kind at one size.
#[derive(Debug, Clone)]
pub struct Row {
    pub op: RtlOp,
    pub size: usize,
    /// Per message: clocks from post to completion (Write: last octet
    /// placed at B; Send: receive completion polled at B; Read: Read
    /// completion polled at A).
    pub latencies: Vec<u64>,
    /// Write and Send, per message: clocks from post to A's send CQE
    /// polled (it waits for B's ACK of the message).
    pub send_cqe: Vec<u64>,
    /// TX parks (`cnt_tx_park`, A + B) during these messages: a QP that
    /// gave its WQE back at a window or ORD stall (docs/rtl.md "Parked QPs").
    pub parks: u64,
}

impl Row {
    fn octets(&self) -> u64 {
        (self.size * self.latencies.len()) as u64
    }
    fn cycles(&self) -> u64 {
        self.latencies.iter().sum()
    }
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct RtlReport {
    pub config: RtlConfig,
    /// MSS, MULPDU and MPA flags (`MPA_CRC_TX`, `MPA_MARKERS_TX`, …) of
    /// A's connection, read back from A's RTL context: what A → B uses.
    pub mss: u16,
    pub mulpdu: u16,
    pub mpa_flags: u8,
    pub rows: Vec<Row>,
    /// Clocks: connect (listen → Established at A), data phase, disconnect.
    pub connect_cycles: u64,
    pub data_cycles: u64,
    pub disconnect_cycles: u64,
    /// Whole run, clocks of the leading node.
    pub total_cycles: u64,
    /// Frames A → B and B → A, and their octets (without FCS), whole run.
    pub frames: [u64; 2],
    /// Frames A → B and B → A up to the end of the data phase.
    pub data_frames: [u64; 2],
    pub frame_octets: [u64; 2],
    /// Wall time and model clocks per second (both nodes counted once:
    /// clocks of the pair per second).
    pub wall: Duration,
    /// CPU time of this process (user + system, from `/proc/self/stat`),
    /// if readable: on a loaded machine the honest speed measure.
    pub cpu: Option<Duration>,
    /// Terminates B asked for (should be none).
    pub terminates: usize,
    /// Why Read did not run, if it did not.
    pub read_note: Option<String>,
    /// Why the disconnect did not end in B's Closed, if it did not.
    pub disconnect_note: Option<String>,
    /// Link faults injected in the data phase (A→B + B→A): lost,
    /// corrupted, duplicated, reordered frames.
    pub faults: [u64; 4],
    /// Recovery: replays the firmwares asked for (`RETX_CONN` writes, A +
    /// B) and FPDUs the RTL re-sent (`RETX_COUNT`, A + B).
    pub retx_requests: u64,
    pub retx_fpdus: u64,
    /// Replays the RTL's fast retransmit asked for (third duplicate ACK,
    /// RFC 5681 §3.2; `cnt_fretx_req`, A + B).
    pub fast_retx: u64,
    /// Of those, the ones deferred until a replay under way ended (a
    /// segment lost inside a replay; `cnt_fretx_defer`, A + B).
    pub fast_retx_deferred: u64,
    /// Frames the receivers dropped before acknowledging them, A + B:
    /// `rx_fifo` full (`cnt_rx_overflow`) and no span slot for a segment
    /// (`cnt_rx_no_slot`). The peer's TCP recovers them.
    pub rx_overflow: u64,
    pub rx_no_slot: u64,
    /// `rx_fifo`'s high-water mark of A and B, in beats.
    pub rx_fifo_hwm: [u64; 2],
    /// With the firmware on the RISC-V cores ([`FwKind::Cpu`]): what each
    /// core did, A and B.
    pub cpu_fw: Option<[CpuStats; 2]>,
}

/// Payload octets per frame and wire octets per frame of a full FPDU with a
/// DDP header of `ddp_header` octets (tagged 14, untagged 18).
pub fn wire_limit(mulpdu: u16, markers: bool, ddp_header: usize) -> (f64, f64) {
    let mulpdu = mulpdu as usize;
    let payload = mulpdu - ddp_header;
    // RFC 5044 §4.1: ULPDU length (2) + ULPDU, padded to a multiple of 4,
    // + CRC (4, present also when CRC is not negotiated: zero then).
    let unpadded = MPA_ULPDU_LENGTH_LEN + mulpdu;
    let fpdu = unpadded + (MPA_ALIGNMENT - unpadded % MPA_ALIGNMENT) % MPA_ALIGNMENT + MPA_CRC_LEN;
    // RFC 5044 §4.3: a marker every 512 octets of the TCP stream
    let seg = if markers {
        let s = fpdu as f64;
        s + s * MPA_MARKER_LEN as f64 / (MPA_MARKER_INTERVAL - MPA_MARKER_LEN) as f64
    } else {
        fpdu as f64
    };
    let frame = ETHERNET_HEADER as f64 + IPV4_TCP_HEADERS as f64 + seg;
    (payload as f64, frame + ETHERNET_WIRE_OVERHEAD as f64)
}

/// User + system CPU time of this process (Linux `/proc/self/stat`,
/// fields 14 and 15 in clock ticks of 100 Hz).
fn cpu_time() -> Option<Duration> {
    const TICKS_PER_SEC: u64 = 100;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // the command name (field 2) is in parentheses and may hold spaces
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let (u, s): (u64, u64) = (f.get(11)?.parse().ok()?, f.get(12)?.parse().ok()?);
    Some(Duration::from_millis((u + s) * 1000 / TICKS_PER_SEC))
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

impl RtlReport {
    fn limit(&self, op: RtlOp) -> f64 {
        let hdr = match op {
            RtlOp::Write | RtlOp::Read => TAGGED_HEADER_LEN,
            RtlOp::Send => UNTAGGED_HEADER_LEN,
        };
        let (p, w) = wire_limit(self.mulpdu, self.markers_tx(), hdr);
        self.config.timing.port_gbps() * p / w
    }

    fn totals(&self, op: RtlOp) -> (u64, u64, u64) {
        let rows = self.rows.iter().filter(|r| r.op == op);
        let (mut n, mut o, mut c) = (0, 0, 0);
        for r in rows {
            n += r.latencies.len() as u64;
            o += r.octets();
            c += r.cycles();
        }
        (n, o, c)
    }

    /// Markers on A → B (as negotiated, RFC 5044 §7.1.2: each side asks
    /// for markers on what it receives).
    pub fn markers_tx(&self) -> bool {
        self.mpa_flags & MPA_MARKERS_TX != 0
    }

    /// Clocks per second of the pair (wall).
    pub fn cycles_per_sec(&self) -> f64 {
        self.total_cycles as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// The human-readable report.
    pub fn render(&self) -> String {
        let c = &self.config;
        let t = c.timing;
        let us = |cycles| t.us(cycles);
        let gbps = |octets, cycles| t.gbps(octets, cycles);
        let mut o = String::new();
        let _ = writeln!(
            o,
            "MTU {} (MSS {}), MPA CRC {} (A→B {}), markers asked {} (A→B {}, B→A {}), MULPDU {}, seed {}, {} op(s) per size, sizes 1 B .. {}",
            c.mtu,
            self.mss,
            on_off(c.crc),
            on_off(self.mpa_flags & MPA_CRC_TX != 0),
            on_off(c.markers),
            on_off(self.markers_tx()),
            on_off(self.mpa_flags & MPA_MARKERS_RX != 0),
            self.mulpdu,
            c.seed,
            c.ops,
            human(c.max_size)
        );
        let _ = writeln!(
            o,
            "\n{:<11} {:>9} {:>5} {:>10} {:>9} {:>9} {:>8} {:>6}",
            "operation", "size", "msgs", "clocks/op", "µs/op", "Gb/s", "% limit", "parks"
        );
        for r in &self.rows {
            let n = r.latencies.len() as u64;
            let g = gbps(r.octets(), r.cycles());
            let _ = writeln!(
                o,
                "{:<11} {:>9} {:>5} {:>10} {:>9.2} {:>9.3} {:>7.1}% {:>6}",
                r.op.name(),
                human(r.size),
                n,
                r.cycles() / n.max(1),
                us(r.cycles()) / n.max(1) as f64,
                g,
                100.0 * g / self.limit(r.op),
                r.parks
            );
        }
        let _ = writeln!(o);
        let ops: &[RtlOp] = if self.read_note.is_none() {
            &[RtlOp::Write, RtlOp::Send, RtlOp::Read]
        } else {
            &[RtlOp::Write, RtlOp::Send]
        };
        for &op in ops {
            let (n, octets, cycles) = self.totals(op);
            // one of a row's per-message times over messages ≤ 64 B, sorted
            let small = |times: fn(&Row) -> &[u64]| {
                let mut v: Vec<u64> = self
                    .rows
                    .iter()
                    .filter(|r| r.op == op && r.size <= 64)
                    .flat_map(|r| times(r).iter().copied())
                    .collect();
                v.sort_unstable();
                v
            };
            let lat = small(|r| &r.latencies);
            let big = self
                .rows
                .iter()
                .filter(|r| r.op == op)
                .max_by_key(|r| r.size);
            let _ = writeln!(
                o,
                "{}: {n} messages, {octets} octets, {cycles} clocks ({:.1} µs); goodput {:.3} Gb/s over the sweep",
                op.name(),
                us(cycles),
                gbps(octets, cycles)
            );
            if let Some(b) = big {
                let g = gbps(b.octets(), b.cycles());
                let _ = writeln!(
                    o,
                    "  largest ({}): {:.3} Gb/s = {:.1}% of the wire limit {:.3} Gb/s ({} Gb/s × payload/wire octets per full frame)",
                    human(b.size),
                    g,
                    100.0 * g / self.limit(op),
                    self.limit(op),
                    t.port_gbps()
                );
            }
            let _ = writeln!(
                o,
                "  latency of messages ≤ 64 B, {} ({} samples): p50 {} clk ({:.2} µs), p90 {} clk ({:.2} µs), p99 {} clk ({:.2} µs), max {} clk",
                match op {
                    RtlOp::Write => "post → last octet placed in B's memory",
                    RtlOp::Send => "post → receive completion polled at B",
                    RtlOp::Read => "post → Read completion polled at A",
                },
                lat.len(),
                percentile(&lat, 0.5),
                us(percentile(&lat, 0.5)),
                percentile(&lat, 0.9),
                us(percentile(&lat, 0.9)),
                percentile(&lat, 0.99),
                us(percentile(&lat, 0.99)),
                lat.last().copied().unwrap_or(0)
            );
            let cqe = small(|r| &r.send_cqe);
            if !cqe.is_empty() {
                let _ = writeln!(
                    o,
                    "  post → send CQE polled at A (once B's ACK covers the message), ≤ 64 B: p50 {} clk ({:.2} µs), p99 {} clk ({:.2} µs)",
                    percentile(&cqe, 0.5),
                    us(percentile(&cqe, 0.5)),
                    percentile(&cqe, 0.99),
                    us(percentile(&cqe, 0.99)),
                );
            }
        }
        if let Some(n) = &self.read_note {
            let _ = writeln!(o, "RDMA Read: NOT RUN — {n}");
        }
        // the recovery counts, printed once: with the faults when the link
        // injected any, else with the receivers' drops
        let recovery = format!(
            "{} timer replays (RETX_CONN) and {} fast retransmits ({} of them deferred to the \
             end of a replay), re-sending {} FPDUs",
            self.retx_requests, self.fast_retx, self.fast_retx_deferred, self.retx_fpdus
        );
        let faults = self.config.faults();
        if faults {
            let _ = writeln!(
                o,
                "link faults in the data phase (loss {}, corrupt {}, duplicate {}, reorder {}): \
                 {} lost, {} corrupted, {} duplicated, {} reordered frames; recovered by {recovery}",
                self.config.loss,
                self.config.corrupt,
                self.config.duplicate,
                self.config.reorder,
                self.faults[0],
                self.faults[1],
                self.faults[2],
                self.faults[3],
            );
        }
        if self.rx_overflow + self.rx_no_slot > 0 || (!faults && self.retx_fpdus > 0) {
            let _ = write!(
                o,
                "receivers dropped {} frames (rx_fifo full) and {} segments (no span slot) \
                 unacknowledged",
                self.rx_overflow, self.rx_no_slot
            );
            if !faults {
                let _ = write!(o, "; senders recovered by {recovery}");
            }
            let _ = writeln!(o);
        }
        let _ = writeln!(
            o,
            "rx_fifo high-water mark: A {} beats, B {} beats",
            self.rx_fifo_hwm[0], self.rx_fifo_hwm[1]
        );
        match &self.disconnect_note {
            None => {
                let _ = writeln!(o, "disconnect: A closed gracefully, B got Closed");
            }
            Some(n) => {
                let _ = writeln!(o, "disconnect: NOT CLEAN — {n}");
            }
        }
        let _ = writeln!(
            o,
            "\nconnect (ARP + TCP + MPA rev 2) {} clk ({:.2} µs); data phase {} clk ({:.1} µs); disconnect {} clk",
            self.connect_cycles,
            us(self.connect_cycles),
            self.data_cycles,
            us(self.data_cycles),
            self.disconnect_cycles
        );
        let _ = writeln!(
            o,
            "simulated: {} clocks = {:.3} ms at {} MHz ({} ns) behind a {} Gb/s port; frames up to the end of the data phase A→B {}, B→A {}; \
             whole run A→B {} ({} octets), B→A {} ({} octets); B Terminates {}",
            self.total_cycles,
            t.time(self.total_cycles).as_secs_f64() * 1e3,
            t.mhz(),
            t.cycle_ps() as f64 / 1e3,
            t.port_gbps(),
            self.data_frames[0],
            self.data_frames[1],
            self.frames[0],
            self.frame_octets[0],
            self.frames[1],
            self.frame_octets[1],
            self.terminates
        );
        if let Some(cpu) = &self.cpu_fw {
            for (who, s) in ["A", "B"].iter().zip(cpu) {
                let _ = writeln!(
                    o,
                    "firmware on {who}'s RISC-V core: booted in {} clk ({:.1} µs) to its first poll; \
                     {} instructions, {} polls (one per {} clk), {} port reads, {} port writes, {} traps; \
                     stack peak {} octets",
                    s.boot_cycles().unwrap_or(0),
                    us(s.boot_cycles().unwrap_or(0)),
                    s.retired,
                    s.polls,
                    self.total_cycles / s.polls.max(1),
                    s.port_reads,
                    s.port_writes,
                    s.traps,
                    s.stack_peak()
                );
            }
        }
        let _ = writeln!(
            o,
            "wall {:.1} s: {:.0} clocks/s of the two-node world (each clock = both Verilated cores + firmware polls + link)",
            self.wall.as_secs_f64(),
            self.cycles_per_sec()
        );
        if let Some(cpu) = self.cpu {
            let _ = writeln!(
                o,
                "CPU {:.1} s: {:.0} clocks per CPU-second (the wall rate is lower when other jobs share the cores)",
                cpu.as_secs_f64(),
                self.total_cycles as f64 / cpu.as_secs_f64().max(1e-9)
            );
        }
        o
    }

    /// The report as JSON (one line): the configuration, the phases'
    /// clocks, frames and faults, the speed, and a row per operation and
    /// size. Rates are rounded (Gb/s to 4 decimals, percentages to 2).
    pub fn json(&self) -> String {
        let c = &self.config;
        let gbps = |octets, cycles| c.timing.gbps(octets, cycles);
        let round = |x: f64, places: i32| {
            let k = 10f64.powi(places);
            (x * k).round() / k
        };
        let rows: Vec<serde_json::Value> = self
            .rows
            .iter()
            .map(|r| {
                let mut lat = r.latencies.clone();
                lat.sort_unstable();
                let g = gbps(r.octets(), r.cycles());
                serde_json::json!({
                    "op": r.op.name(),
                    "size": r.size,
                    "messages": r.latencies.len(),
                    "octets": r.octets(),
                    "cycles": r.cycles(),
                    "gbps": round(g, 4),
                    "pct_of_limit": round(100.0 * g / self.limit(r.op), 2),
                    "lat_p50": percentile(&lat, 0.5),
                    "lat_max": lat.last().copied().unwrap_or(0),
                    "parks": r.parks,
                })
            })
            .collect();
        let cpu_firmware = self.cpu_fw.as_ref().map(|s| {
            s.iter()
                .map(|s| {
                    serde_json::json!({
                        "boot_cycles": s.boot_cycles(),
                        "instructions": s.retired,
                        "polls": s.polls,
                        "port_reads": s.port_reads,
                        "port_writes": s.port_writes,
                        "traps": s.traps,
                        "stack_peak": s.stack_peak(),
                    })
                })
                .collect::<Vec<_>>()
        });
        let report = serde_json::json!({
            "backend": "rtl",
            "mtu": c.mtu,
            "crc": c.crc,
            "markers": c.markers,
            "seed": c.seed,
            "ops": c.ops,
            "max_size": c.max_size,
            "mss": self.mss,
            "mulpdu": self.mulpdu,
            "markers_a_to_b": self.markers_tx(),
            "cycle_ns": c.timing.cycle_ps() as f64 / 1e3,
            "clock_mhz": c.timing.mhz(),
            "port_gbps": c.timing.port_gbps(),
            "write_limit_gbps": round(self.limit(RtlOp::Write), 4),
            "send_limit_gbps": round(self.limit(RtlOp::Send), 4),
            "connect_cycles": self.connect_cycles,
            "data_cycles": self.data_cycles,
            "disconnect_cycles": self.disconnect_cycles,
            "total_cycles": self.total_cycles,
            "data_frames_a_to_b": self.data_frames[0],
            "data_frames_b_to_a": self.data_frames[1],
            "frames_a_to_b": self.frames[0],
            "frames_b_to_a": self.frames[1],
            "octets_a_to_b": self.frame_octets[0],
            "octets_b_to_a": self.frame_octets[1],
            "terminates": self.terminates,
            "firmware": match c.fw {
                FwKind::Native => "native",
                FwKind::Cpu => "cpu",
            },
            "cpu_firmware": cpu_firmware,
            "faults": {
                "loss": c.loss,
                "corrupt": c.corrupt,
                "duplicate": c.duplicate,
                "reorder": c.reorder,
                "lost": self.faults[0],
                "corrupted": self.faults[1],
                "duplicated": self.faults[2],
                "reordered": self.faults[3],
                "retx_requests": self.retx_requests,
                "fast_retx": self.fast_retx,
                "fast_retx_deferred": self.fast_retx_deferred,
                "retx_fpdus": self.retx_fpdus,
                "rx_overflow": self.rx_overflow,
                "rx_no_slot": self.rx_no_slot,
                "rx_fifo_hwm": self.rx_fifo_hwm,
            },
            "wall_s": round(self.wall.as_secs_f64(), 3),
            "cycles_per_s": self.cycles_per_sec().round(),
            "cpu_s": self.cpu.map(|c| round(c.as_secs_f64(), 2)),
            "read": match &self.read_note {
                None => "run".to_string(),
                Some(n) => format!("not run: {n}"),
            },
            "disconnect": match &self.disconnect_note {
                None => "clean".to_string(),
                Some(n) => format!("not clean: {n}"),
            },
            "pcap": c.pcap.as_ref().map(|p| p.display().to_string()),
            "rows": rows,
        });
        format!("{report}\n")
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// `n` octets with a binary unit when exact.
pub fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

/// The progress bar on stderr (indicatif: drawn on a terminal, hidden
/// when stderr is not one): share of the sweep's octets moved, the
/// current operation, simulated clocks and clocks per second.
struct Progress {
    bar: indicatif::ProgressBar,
    start: Instant,
}

impl Progress {
    fn new(on: bool, total: u64) -> Self {
        let bar = if on {
            indicatif::ProgressBar::new(total)
        } else {
            indicatif::ProgressBar::hidden()
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template("[{bar:30}] {percent:>3}% {msg} {elapsed}")
                .expect("a valid template")
                .progress_chars("#> "),
        );
        Progress {
            bar,
            start: Instant::now(),
        }
    }

    fn tick(&mut self, done: u64, what: &str, cycles: u64) {
        let rate = cycles as f64 / self.start.elapsed().as_secs_f64().max(1e-9);
        self.bar.set_position(done);
        self.bar.set_message(format!(
            "{what}: {cycles} clocks simulated, {rate:.0} clocks/s,"
        ));
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// TX parks of both nodes so far (`cnt_tx_park`).
fn parks(world: &World) -> u64 {
    world
        .nodes
        .iter()
        .map(|n| n.hw.borrow_mut().core.get_cnt_tx_park())
        .sum()
}

/// What A's and B's cores show, for a stall message.
fn last_seen(world: &World, stag: u32, placed_from: usize) -> String {
    let a = world.nodes[0].hw.borrow();
    let b = world.nodes[1].hw.borrow();
    let placed: u64 = b.placed[placed_from.min(b.placed.len())..]
        .iter()
        .filter(|p| p.0 == stag)
        .map(|p| p.2 as u64)
        .sum();
    format!(
        "A: {} frames on mac_tx, cnt_tx_frames {}, cnt_tx_bad_wqe {}, DMA faults {}; \
         B: {placed} octets placed for STag {stag:#x} ({} records), Terminates {:?}, \
         cnt_rxs_send {}, cnt_rxs_cqe {}, cnt_rxs_drop_qp {}, DMA faults {}, \
         cnt_rx_fast {}, cnt_rx_exc {}, cnt_rx_overflow {}, cnt_rx_exc_full {}",
        a.mac_tx_frames,
        a.core.get_cnt_tx_frames(),
        a.core.get_cnt_tx_bad_wqe(),
        a.dma.faults().len(),
        b.placed.len() - placed_from.min(b.placed.len()),
        b.terms,
        b.core.get_cnt_rxs_send(),
        b.core.get_cnt_rxs_cqe(),
        b.core.get_cnt_rxs_drop_qp(),
        b.dma.faults().len(),
        b.core.get_cnt_rx_fast(),
        b.core.get_cnt_rx_exc(),
        b.core.get_cnt_rx_overflow(),
        b.core.get_cnt_rx_exc_full()
    )
}

/// The first octet where `got` and `want` differ, described.
fn diff(got: &[u8], want: &[u8], region: (usize, usize)) -> Option<String> {
    let i = got.iter().zip(want).position(|(g, w)| g != w)?;
    let n = got.iter().zip(want).filter(|(g, w)| g != w).count();
    let place = if i < region.0 || i >= region.1 {
        "OUTSIDE the target"
    } else {
        "inside the target"
    };
    Some(format!(
        "{n} octet(s) differ, first at buffer offset {i} ({place} {}..{}): got {:#04x}, want {:#04x}",
        region.0, region.1, got[i], want[i]
    ))
}

/// Waits for the next completion on A's send CQ, which must be `wr_id`'s:
/// `opcode`, Success.
fn wait_send_cqe(
    world: &Rc<RefCell<World>>,
    cq: &Cq<'_, SimBus>,
    budget: u64,
    wr_id: u64,
    opcode: WcOpcode,
    what: &str,
) -> Result<(), String> {
    let mut wc = [WorkCompletion::default()];
    let mut polled: Result<usize, rnic_driver::Error> = Ok(0);
    run_until(world, budget, |_| {
        polled = cq.poll(&mut wc);
        !matches!(polled, Ok(0))
    })
    .map_err(|c| {
        format!(
            "STALL: {what} wr_id {wr_id}: no completion on A's send CQ within {c} clocks; last seen: {}",
            last_seen(&world.borrow(), 0, 0)
        )
    })?;
    polled.map_err(|e| format!("A: poll send CQ: {e:?}"))?;
    let c = wc[0];
    if c.wr_id != wr_id || c.status != WcStatus::Success || c.opcode != opcode {
        return Err(format!(
            "{what}: send completion {c:?} (want wr_id {wr_id}, Success, {opcode:?})"
        ));
    }
    Ok(())
}

/// Runs the scenario.
pub fn run(cfg: &RtlConfig) -> Result<RtlReport, String> {
    let wall = Instant::now();
    let mut rng = Rng::new(cfg.seed);
    if cfg.fw == FwKind::Cpu {
        // The image offers its default window; its retransmission timer is
        // set through the driver below.
        if cfg.rcv_window.is_some() {
            return Err(
                "--rcv-window needs the native firmware: the image offers its default".into(),
            );
        }
    }
    let world = world_pair_with(
        LinkConfig {
            seed: cfg.seed,
            delay: cfg.delay_cycles,
            ..LinkConfig::default()
        },
        cfg.pcap.as_deref(),
        cfg.fw,
    )?;
    world.borrow_mut().set_timing(cfg.timing);
    for n in world.borrow_mut().nodes.iter_mut() {
        let Some(fw) = n.fw.native() else { continue };
        if let Some(w) = cfg.rcv_window {
            fw.config.rcv_wnd = w;
        }
        // RTO (RFC 6298): the co-simulation's 50 µs floor, but never below
        // twice the link's round trip (an RTO under the real round trip
        // replays data that was never lost), and room above it for a full
        // window's queueing.
        let rtt_us = 2 * cfg.delay_cycles / cfg.timing.cycles_per_us();
        let r = &mut fw.config.rdma_retx;
        r.rto = r.rto.max(2 * rtt_us);
        r.rto_min = r.rto_min.max(2 * rtt_us);
        r.rto_max = r.rto_max.max(8 * rtt_us);
    }
    if let Some(level) = cfg.fw_log {
        crate::fw_log::init_host(level);
        if cfg.fw == FwKind::Cpu {
            let path = rnic_fw::image::build_elf()?;
            let elf = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            for n in &world.borrow().nodes {
                if let Some(cpu) = n.hw.borrow_mut().cpu.as_mut() {
                    cpu.rtt_snoop(&elf)?;
                }
            }
        }
        world.borrow_mut().fw_log = Some(level);
    }
    if cfg.cpu_profile.is_some() {
        match world.borrow().nodes[0].hw.borrow_mut().cpu.as_mut() {
            Some(cpu) => cpu.profile_on(),
            None => return Err("a CPU profile needs the firmware on the CPU (--fw cpu)".into()),
        }
    }
    if let Some(v) = &cfg.vcd {
        world.borrow().nodes[0]
            .hw
            .borrow_mut()
            .core
            .trace_vcd(v)
            .map_err(|e| format!("vcd {}: {e}", v.display()))?;
    }
    let a = open_node(&world, 0, cfg.mtu)?;
    let b = open_node(&world, 1, cfg.mtu)?;
    if cfg.fw == FwKind::Cpu {
        // The image's RTO is RFC 6298's (1 s initial, 200 ms floor), which a
        // co-simulation of a few ms never reaches: the host sets one scaled
        // to the run, as for the native firmware, but above the image's
        // poll period (tens of µs) and its sampling of a quarter RTO.
        let rtt_us = 2 * cfg.delay_cycles / cfg.timing.cycles_per_us();
        let rto = Duration::from_micros(CPU_FW_RTO_US.max(2 * rtt_us));
        let timer = RetxTimer {
            initial: rto,
            min: rto,
            max: (8 * rto).max(Duration::from_millis(2)),
            max_retries: rnic_fw::retx::RDMA_MAX_RETRIES,
        };
        for (ctx, who) in [(&a, "A"), (&b, "B")] {
            ctx.set_retx_timer(&timer)
                .map_err(|e| format!("{who}: set_retx_timer: {e:?}"))?;
        }
    }
    // A loss the firmware's timer repairs costs an RTO and its backoff:
    // on the cores, whose RTO is 200 µs, more than the default budget.
    let budget_base = match cfg.fw {
        FwKind::Cpu if cfg.faults() => cfg.budget_base.max(CPU_FW_FAULT_BUDGET),
        _ => cfg.budget_base,
    };
    let sizes: Vec<usize> = std::iter::successors(Some(1usize), |s| s.checked_mul(2))
        .take_while(|&s| s <= cfg.max_size)
        .collect();
    // A's send CQEs retire its send queue as the sweep goes; without them
    // (SEND_CQE_IN_RTL false) nothing would, and the queue must hold every WR
    let kinds = if READ_IN_RTL { 3 } else { 2 };
    let wrs = kinds * sizes.len() * cfg.ops;
    let max_q = a.caps().max_queue_entries;
    let sq = if SEND_CQE_IN_RTL {
        64
    } else {
        wrs.next_power_of_two() as u32
    };
    if sq > max_q {
        return Err(format!(
            "{wrs} work requests need a send queue of {sq} entries (no send CQEs retire it), \
             the device allows {max_q}: lower --ops or --max-size"
        ));
    }
    let err = |who: &str| {
        let who = who.to_string();
        move |e: rnic_driver::Error| format!("{who}: {e:?}")
    };
    let (pd_a, pd_b) = (
        a.alloc_pd().map_err(err("A: alloc_pd"))?,
        b.alloc_pd().map_err(err("B: alloc_pd"))?,
    );
    let scq_a = a.create_cq(64).map_err(err("A: create_cq"))?;
    let rcq_a = a.create_cq(16).map_err(err("A: create_cq"))?;
    let scq_b = b.create_cq(16).map_err(err("B: create_cq"))?;
    let rcq_b = b.create_cq(64).map_err(err("B: create_cq"))?;
    let qp_a = pd_a
        .create_qp(&scq_a, &rcq_a, sq, 4)
        .map_err(err("A: create_qp"))?;
    let qp_b = pd_b
        .create_qp(&scq_b, &rcq_b, 4, 16)
        .map_err(err("B: create_qp"))?;

    let c0 = world.borrow().cycle();
    let mpa = MpaOptions {
        revision: 2,
        crc: cfg.crc,
        markers: cfg.markers,
    };
    let (creq, est) = connect_pair(
        &a,
        &qp_a,
        &b,
        &qp_b,
        mpa,
        b"rnic-sim: hello from A",
        b"rnic-sim: welcome, A",
    )?;
    if creq.private_data != b"rnic-sim: hello from A" || est.private_data != b"rnic-sim: welcome, A"
    {
        return Err(format!(
            "private data: B saw {:?}, A saw {:?}",
            String::from_utf8_lossy(&creq.private_data),
            String::from_utf8_lossy(&est.private_data)
        ));
    }
    if est.crc != cfg.crc {
        return Err(format!("CRC negotiated {} (asked {})", est.crc, cfg.crc));
    }
    let connect_cycles = world.borrow().cycle() - c0;
    if cfg.faults() {
        let mut w = world.borrow_mut();
        let link = w.link.as_mut().expect("a pair has a link");
        link.set_faults(cfg.loss, cfg.corrupt, cfg.duplicate, cfg.reorder);
    }
    let (mss, mulpdu, mpa_flags) = {
        let c = a_conn_context(&world, qp_a.qpn())?;
        (c.mss, c.mulpdu, c.mpa_flags)
    };

    // memory: A's source (also a Read sink: local write), B's Write target
    // (remote write) and receive buffers (local write), each with guards
    let max = cfg.max_size;
    let dma = |ctx: &Context<SimBus>, len: usize, who: &str| {
        ctx.alloc_dma(len)
            .map_err(|e| format!("{who}: alloc_dma: {e:?}"))
    };
    let buf_a = dma(&a, max + 2 * GUARD, "A")?;
    let buf_bw = dma(&b, max + 2 * GUARD, "B")?;
    let buf_br = dma(&b, max + 2 * GUARD, "B")?;
    let acc = |bits| AccessFlags::from_bits(bits).expect("valid access bits");
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, max, acc(ACCESS_LOCAL_WRITE))
        .map_err(err("A: reg_mr"))?;
    let mr_bw = pd_b
        .reg_mr(
            &buf_bw,
            GUARD,
            max,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ),
        )
        .map_err(err("B: reg_mr"))?;
    let mr_br = pd_b
        .reg_mr(&buf_br, GUARD, max, acc(ACCESS_LOCAL_WRITE))
        .map_err(err("B: reg_mr"))?;
    // shadows of B's buffers: what they must hold
    let mut shadow_w = rng.bytes(max + 2 * GUARD);
    let mut shadow_r = rng.bytes(max + 2 * GUARD);
    let mut shadow_a = rng.bytes(max + 2 * GUARD);
    buf_a.write(0, &shadow_a).map_err(|e| format!("{e:?}"))?;
    buf_bw.write(0, &shadow_w).map_err(|e| format!("{e:?}"))?;
    buf_br.write(0, &shadow_r).map_err(|e| format!("{e:?}"))?;
    let mut got = vec![0u8; max + 2 * GUARD];

    let mut progress = Progress::new(
        cfg.progress,
        sizes
            .iter()
            .map(|&s| s as u64 * cfg.ops as u64 * kinds as u64)
            .sum(),
    );
    let mut moved = 0u64;
    let mut rows = Vec::new();
    let d0 = world.borrow().cycle();
    let mut wr_id = 0u64;
    for &size in &sizes {
        let budget = budget_base + size as u64;
        let mut wl = Vec::new();
        let mut sl = Vec::new();
        let mut rl = Vec::new();
        let (mut wc_l, mut sc_l) = (Vec::new(), Vec::new());
        let mut pk = [0u64; 3];
        for k in 0..cfg.ops {
            // --- RDMA Write A → B
            let data = rng.bytes(size);
            let src = rng.below((max - size + 1) as u64) as usize;
            let dst = rng.below((max - size + 1) as u64) as usize;
            buf_a
                .write(GUARD + src, &data)
                .map_err(|e| format!("{e:?}"))?;
            shadow_a[GUARD + src..GUARD + src + size].copy_from_slice(&data);
            let sge = [mr_a.sge(src as u64, size as u32).map_err(err("A: sge"))?];
            wr_id += 1;
            let placed_from = world.borrow().nodes[1].hw.borrow().placed.len();
            let t0 = world.borrow().cycle();
            let p0 = parks(&world.borrow());
            let inl = size <= cfg.inline;
            qp_a.post_send(&[SendWr {
                wr_id,
                op: SendOp::RdmaWrite(RemoteAddr {
                    addr: mr_bw.va() + dst as u64,
                    rkey: mr_bw.rkey(),
                }),
                sges: if inl { &[] } else { &sge },
                signaled: SEND_CQE_IN_RTL,
                solicited: false,
                fence: false,
                inline_data: inl.then_some(&data[..]),
            }])
            .map_err(err("A: post_send Write"))?;
            let stag = mr_bw.rkey();
            run_until(&world, budget, |w| {
                let b = w.nodes[1].hw.borrow();
                let placed: usize = b.placed[placed_from..]
                    .iter()
                    .filter(|p| p.0 == stag)
                    .map(|p| p.2 as usize)
                    .sum();
                (placed >= size && b.dma.idle()) || !b.terms.is_empty()
            })
            .map_err(|c| {
                format!(
                    "STALL: RDMA Write #{k} of {size} octets not placed within {c} clocks; last seen: {}",
                    last_seen(&world.borrow(), stag, placed_from)
                )
            })?;
            {
                let w = world.borrow();
                let b = w.nodes[1].hw.borrow();
                if !b.terms.is_empty() {
                    return Err(format!(
                        "RDMA Write #{k} of {size} octets: B asked for Terminate(s) {:?}",
                        b.terms
                    ));
                }
            }
            shadow_w[GUARD + dst..GUARD + dst + size].copy_from_slice(&data);
            buf_bw.read(0, &mut got).map_err(|e| format!("{e:?}"))?;
            if let Some(d) = diff(&got, &shadow_w, (GUARD + dst, GUARD + dst + size)) {
                return Err(format!(
                    "MISMATCH after RDMA Write #{k} of {size} octets: {d}"
                ));
            }
            wl.push(world.borrow().cycle() - t0);
            if SEND_CQE_IN_RTL {
                wait_send_cqe(
                    &world,
                    &scq_a,
                    budget,
                    wr_id,
                    WcOpcode::RdmaWrite,
                    "RDMA Write",
                )?;
                wc_l.push(world.borrow().cycle() - t0);
            }
            pk[0] += parks(&world.borrow()) - p0;
            moved += size as u64;
            progress.tick(
                moved,
                &format!("Write {}", human(size)),
                world.borrow().cycle(),
            );

            // --- Send A → B into a receive B posted
            let data = rng.bytes(size);
            let dst = rng.below((max - size + 1) as u64) as usize;
            buf_a
                .write(GUARD + src, &data)
                .map_err(|e| format!("{e:?}"))?;
            shadow_a[GUARD + src..GUARD + src + size].copy_from_slice(&data);
            let rsge = [mr_br.sge(dst as u64, size as u32).map_err(err("B: sge"))?];
            wr_id += 1;
            let rid = wr_id;
            qp_b.post_recv(&[RecvWr {
                wr_id: rid,
                sges: &rsge,
            }])
            .map_err(err("B: post_recv"))?;
            wr_id += 1;
            let t0s = world.borrow().cycle();
            let p0 = parks(&world.borrow());
            qp_a.post_send(&[SendWr {
                wr_id,
                op: SendOp::Send,
                sges: if inl { &[] } else { &sge },
                signaled: SEND_CQE_IN_RTL,
                solicited: false,
                fence: false,
                inline_data: inl.then_some(&data[..]),
            }])
            .map_err(err("A: post_send Send"))?;
            let mut wc = [WorkCompletion::default(); 1];
            let mut polled: Result<usize, rnic_driver::Error> = Ok(0);
            run_until(&world, budget, |w| {
                if !w.nodes[1].hw.borrow().terms.is_empty() {
                    return true;
                }
                polled = rcq_b.poll(&mut wc);
                !matches!(polled, Ok(0))
            })
            .map_err(|c| {
                format!(
                    "STALL: Send #{k} of {size} octets: no receive completion at B within {c} clocks; last seen: {}",
                    last_seen(&world.borrow(), 0, 0)
                )
            })?;
            let n = polled.map_err(err("B: poll receive CQ"))?;
            if n == 0 {
                return Err(format!(
                    "Send #{k} of {size} octets: B asked for Terminate(s) {:?}",
                    world.borrow().nodes[1].hw.borrow().terms
                ));
            }
            let c = wc[0];
            if c.wr_id != rid
                || c.status != WcStatus::Success
                || c.opcode != WcOpcode::Recv
                || c.byte_len as usize != size
                || c.qp_num != qp_b.qpn()
            {
                return Err(format!(
                    "Send #{k} of {size} octets: receive completion {c:?} (want wr_id {rid}, Success, Recv, byte_len {size}, qp {})",
                    qp_b.qpn()
                ));
            }
            shadow_r[GUARD + dst..GUARD + dst + size].copy_from_slice(&data);
            buf_br.read(0, &mut got).map_err(|e| format!("{e:?}"))?;
            if let Some(d) = diff(&got, &shadow_r, (GUARD + dst, GUARD + dst + size)) {
                return Err(format!("MISMATCH after Send #{k} of {size} octets: {d}"));
            }
            sl.push(world.borrow().cycle() - t0s);
            if SEND_CQE_IN_RTL {
                wait_send_cqe(&world, &scq_a, budget, wr_id, WcOpcode::Send, "Send")?;
                sc_l.push(world.borrow().cycle() - t0s);
            }
            pk[1] += parks(&world.borrow()) - p0;
            moved += size as u64;
            progress.tick(
                moved,
                &format!("Send {}", human(size)),
                world.borrow().cycle(),
            );

            // --- RDMA Read by A of B's Write region (remote read granted)
            if READ_IN_RTL {
                let from = rng.below((max - size + 1) as u64) as usize;
                let into = rng.below((max - size + 1) as u64) as usize;
                let sge = [mr_a.sge(into as u64, size as u32).map_err(err("A: sge"))?];
                wr_id += 1;
                let t0r = world.borrow().cycle();
                let p0 = parks(&world.borrow());
                qp_a.post_send(&[SendWr {
                    wr_id,
                    op: SendOp::RdmaRead(RemoteAddr {
                        addr: mr_bw.va() + from as u64,
                        rkey: mr_bw.rkey(),
                    }),
                    sges: &sge,
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                }])
                .map_err(err("A: post_send Read"))?;
                wait_send_cqe(
                    &world,
                    &scq_a,
                    budget,
                    wr_id,
                    WcOpcode::RdmaRead,
                    "RDMA Read",
                )?;
                rl.push(world.borrow().cycle() - t0r);
                pk[2] += parks(&world.borrow()) - p0;
                shadow_a[GUARD + into..GUARD + into + size]
                    .copy_from_slice(&shadow_w[GUARD + from..GUARD + from + size]);
                buf_a.read(0, &mut got).map_err(|e| format!("{e:?}"))?;
                if let Some(d) = diff(&got, &shadow_a, (GUARD + into, GUARD + into + size)) {
                    return Err(format!(
                        "MISMATCH in A's memory after RDMA Read #{k} of {size} octets: {d}"
                    ));
                }
                moved += size as u64;
                progress.tick(
                    moved,
                    &format!("Read {}", human(size)),
                    world.borrow().cycle(),
                );
            }
        }
        rows.push(Row {
            op: RtlOp::Write,
            size,
            latencies: wl,
            send_cqe: wc_l,
            parks: pk[0],
        });
        rows.push(Row {
            op: RtlOp::Send,
            size,
            latencies: sl,
            send_cqe: sc_l,
            parks: pk[1],
        });
        if READ_IN_RTL {
            rows.push(Row {
                op: RtlOp::Read,
                size,
                latencies: rl,
                send_cqe: Vec::new(),
                parks: pk[2],
            });
        }
    }
    let data_cycles = world.borrow().cycle() - d0;
    let faults = {
        let mut w = world.borrow_mut();
        let link = w.link.as_mut().expect("a pair has a link");
        let (sa, sb) = (link.stats(Side::A), link.stats(Side::B));
        link.set_faults(0.0, 0.0, 0.0, 0.0);
        [
            sa.lost + sb.lost,
            sa.corrupted + sb.corrupted,
            sa.duplicated + sb.duplicated,
            sa.reordered + sb.reordered,
        ]
    };
    // the nodes' recovery and receive-drop counters, A + B, and each
    // rx_fifo's high-water mark
    let (
        retx_requests,
        retx_fpdus,
        fast_retx,
        fast_retx_deferred,
        rx_overflow,
        rx_no_slot,
        rx_fifo_hwm,
    ) = {
        let w = world.borrow();
        let (mut req, mut fpdus, mut fast, mut deferred, mut ovf, mut slot) = (0, 0, 0, 0, 0, 0);
        let mut hwm = [0; 2];
        for (i, n) in w.nodes.iter().enumerate() {
            let mut hw = n.hw.borrow_mut();
            req += hw.retx_writes.len() as u64;
            fpdus += hw.with_port(|n| n.fw_read(port::RETX_COUNT)) as u64;
            fast += hw.core.get_cnt_fretx_req();
            deferred += hw.core.get_cnt_fretx_defer();
            ovf += hw.core.get_cnt_rx_overflow();
            slot += hw.core.get_cnt_rx_no_slot();
            hwm[i] = hw.core.get_rx_fifo_hwm();
        }
        (req, fpdus, fast, deferred, ovf, slot, hwm)
    };
    let data_frames = {
        let w = world.borrow();
        let link = w.link.as_ref().expect("a pair has a link");
        [link.stats(Side::A).sent, link.stats(Side::B).sent]
    };
    let read_note = (!READ_IN_RTL)
        .then(|| "READ_IN_RTL is false: the scenario leaves RDMA Read out".to_string());

    // graceful disconnect from A: B sees Closed
    let x0 = world.borrow().cycle();
    qp_a.disconnect(false).map_err(err("A: disconnect"))?;
    let close_wait = match cfg.fw {
        FwKind::Native => CLOSE_WAIT,
        FwKind::Cpu => CLOSE_WAIT_CPU,
    };
    let disconnect_note = match b.get_cm_event(close_wait) {
        Ok(ev) if ev.kind == EventKind::Closed => None,
        other => Some(format!(
            "B saw {:?} within {close_wait:?} instead of Closed",
            other.map(|e| e.kind)
        )),
    };
    let disconnect_cycles = world.borrow().cycle() - x0;
    let terminates = world.borrow().nodes[1].hw.borrow().terms.len();
    let (frames, frame_octets) = {
        let mut w = world.borrow_mut();
        let link = w.link.as_mut().expect("a pair has a link");
        link.flush_pcap().map_err(|e| format!("pcap: {e}"))?;
        let (sa, sb) = (link.stats(Side::A), link.stats(Side::B));
        ([sa.sent, sb.sent], [sa.octets_sent, sb.octets_sent])
    };
    if cfg.vcd.is_some() {
        world.borrow().nodes[0].hw.borrow_mut().core.close_vcd();
    }
    let total_cycles = world.borrow().cycle();
    if let Some(path) = &cfg.cpu_profile {
        let w = world.borrow();
        let hw = w.nodes[0].hw.borrow();
        let prof = hw.cpu.as_ref().and_then(|c| c.profile.as_ref());
        let mut rows: Vec<((u32, u32), u64)> = prof
            .map(|p| p.iter().map(|(&a, &c)| (a, c)).collect())
            .unwrap_or_default();
        rows.sort_by_key(|&(a, c)| (std::cmp::Reverse(c), a));
        let text: String = rows
            .iter()
            .map(|((pc, site), c)| format!("{pc:08x} {site:08x} {c}\n"))
            .collect();
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let cpu_fw = {
        let w = world.borrow();
        let stats = |i: usize| w.nodes[i].hw.borrow().cpu.as_ref().map(|c| c.stats);
        stats(0).zip(stats(1)).map(|(a, b)| [a, b])
    };
    if let Some(s) = &cpu_fw {
        if let Some((i, t)) = s
            .iter()
            .enumerate()
            .find_map(|(i, s)| Some((i, s.first_trap?)))
        {
            return Err(format!(
                "the firmware on node {}'s RISC-V core trapped: mcause {:#x} at pc {:#x}",
                ["A", "B"][i],
                t.0,
                t.1
            ));
        }
    }
    Ok(RtlReport {
        config: cfg.clone(),
        mss,
        mulpdu,
        mpa_flags,
        rows,
        connect_cycles,
        data_cycles,
        disconnect_cycles,
        total_cycles,
        frames,
        data_frames,
        frame_octets,
        wall: wall.elapsed(),
        cpu: cpu_time(),
        terminates,
        read_note,
        disconnect_note,
        faults,
        retx_requests,
        fast_retx,
        fast_retx_deferred,
        retx_fpdus,
        rx_overflow,
        rx_no_slot,
        rx_fifo_hwm,
        cpu_fw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MTU 1500, no markers: a 1538-octet wire frame (1500 IP + 14
    /// Ethernet + 24 preamble/FCS/gap) carries MULPDU 1454 less the DDP
    /// header (the reference model's efficiency test has the same figures).
    #[test]
    fn wire_limit_mtu_1500() {
        let m = rnic_wire::mpa::mulpdu(1460, false);
        assert_eq!(m, 1454);
        assert_eq!(wire_limit(m, false, 14), (1440.0, 1538.0));
        assert_eq!(wire_limit(m, false, 18), (1436.0, 1538.0));
        // markers: MULPDU shrinks by 3 markers' room; the segment stays
        // within the MSS
        let m = rnic_wire::mpa::mulpdu(1460, true);
        let (_, w) = wire_limit(m, true, 14);
        assert!(w <= 1538.0 && w > 1530.0, "{w}");
    }

    #[test]
    fn percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), 51);
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&[], 0.5), 0);
    }
}
