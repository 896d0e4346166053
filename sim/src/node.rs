//! Nodes and the world they live in: each [`Node`] is a Verilated
//! `rnic_core` ([`FwNode`], with its host memory and DMA server) and its own
//! real firmware: compiled for the host (`rnic_fw::Firmware` over
//! [`CoSimHal`]) or the firmware image on a Verilated RISC-V core
//! ([`FwKind::Cpu`], `crate::cpu_fw`); a [`World`] holds one or two nodes
//! and, for two, the [`Link`] between their MACs.
//!
//! Time: the native firmware's register accesses clock only its own node, so the
//! nodes' clocks drift apart within a [`World::round`]; at the end of each
//! round the lagging nodes are clocked idle up to the leader, and the link is
//! stepped to the same cycle. Frames a node's firmware sends (`raw_tx_*`)
//! enter the link at the round's end and are fed into the peer's `mac_rx_*`
//! when they arrive; the timing is exact to a round (one firmware poll).

use std::cell::RefCell;
use std::rc::Rc;

use rnic_fw::fw::{Config, Firmware};
use rnic_fw::retx::{RetxConfig, RDMA_MAX_RETRIES};

use crate::clock::Timing;
use crate::cpu_fw::CpuFw;
use crate::external::ExternalPort;
use crate::fw_hal::{CoSimHal, FwNode, HostCsr};
use crate::link::{Link, Side};

/// Connections the co-simulated firmware holds: as many as the core's
/// connection table (`conn_table::DEFAULT_LOG2_CONNS` = 6) and QP table
/// (`abi::csr::MAX_QP` = 64), so the driver can run 64 QPs concurrently
/// (`sim/tests/driver_many_qps.rs`). The board image (`firmware/src/bin`)
/// keeps fewer: its connection state lives in 64 KiB of data memory.
pub const FW_CONNS: usize = 64;
/// QPs the co-simulated firmware tracks (the core's `qp_ram` has 64).
pub const FW_QPS: usize = 64;

/// The RDMA-mode retransmission timer of the co-simulated firmware
/// (`rnic_fw::retx`): the same estimator, doubling and retries as the
/// board, from an initial and minimum RTO scaled to what a co-simulation
/// runs (a few ms of simulated time per test). Loss-free runs must never reach it: see `RetxStats::longest_stall`
/// (fw_two_node checks it).
pub const COSIM_RDMA_RETX: RetxConfig = RetxConfig {
    rto: 50,
    rto_min: 50,
    rto_max: 2_000,
    max_retries: RDMA_MAX_RETRIES,
};

/// The firmware configuration of a co-simulated node.
pub fn fw_config() -> Config {
    Config {
        rdma_retx: COSIM_RDMA_RETX,
        ..Config::default()
    }
}

/// The firmware type of a node (capacities [`FW_CONNS`], [`FW_QPS`], the
/// rest `Firmware`'s defaults).
pub type NodeFw = Firmware<CoSimHal, FW_CONNS, FW_QPS>;

/// Where a node's firmware runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FwKind {
    /// Compiled for the host and polled between clocks over [`CoSimHal`]
    /// (each register access one clock): its state can be inspected.
    #[default]
    Native,
    /// The firmware image on the RISC-V core (`crate::cpu_fw`), clocked
    /// with the node, as on the board.
    Cpu,
}

/// A node's firmware. A native one dereferences to its [`NodeFw`] (tests
/// read its state and set its configuration); one on the RISC-V core holds
/// its state in the core's data memory, and dereferencing it panics.
pub enum NodeFirmware {
    Native(Box<NodeFw>),
    /// The core is in [`FwNode::cpu`].
    Cpu,
}

impl NodeFirmware {
    /// The native firmware, if it is one.
    pub fn native(&mut self) -> Option<&mut NodeFw> {
        match self {
            NodeFirmware::Native(f) => Some(f),
            NodeFirmware::Cpu => None,
        }
    }
}

impl std::ops::Deref for NodeFirmware {
    type Target = NodeFw;
    fn deref(&self) -> &NodeFw {
        match self {
            NodeFirmware::Native(f) => f,
            NodeFirmware::Cpu => panic!("the node's firmware runs on its RISC-V core"),
        }
    }
}

impl std::ops::DerefMut for NodeFirmware {
    fn deref_mut(&mut self) -> &mut NodeFw {
        match self {
            NodeFirmware::Native(f) => f,
            NodeFirmware::Cpu => panic!("the node's firmware runs on its RISC-V core"),
        }
    }
}

/// The image a node of `kind` runs on its RISC-V core: built for
/// [`FwKind::Cpu`], none for the native firmware.
fn firmware_image(kind: FwKind) -> Result<Option<Vec<u32>>, String> {
    match kind {
        FwKind::Native => Ok(None),
        FwKind::Cpu => CpuFw::build_image().map(Some),
    }
}

/// One device: model + host memory + DMA server + firmware.
pub struct Node {
    pub hw: Rc<RefCell<FwNode>>,
    pub fw: NodeFirmware,
    /// Firmware polls run so far.
    pub polls: u64,
    /// Whether [`World::round`] polls this node's firmware (a test can stop
    /// it to see the driver's mailbox timeout).
    pub fw_running: bool,
}

impl Node {
    /// A reset model with the RX ULP path on (`rx_ulp_en`: RDMA-mode
    /// payload is placed into host memory), the peer's window enforced on
    /// TX (`tx_wnd_en`), `CTRL_ENABLE` honoured (`ctrl_en_gate`) and set,
    /// and its firmware started.
    pub fn new() -> Self {
        Self::with_image(None)
    }

    /// A node as [`Node::new`], with its firmware on a RISC-V core running
    /// `image` (instruction memory words) when there is one, else native.
    pub fn with_image(image: Option<&[u32]>) -> Self {
        let cpu = image.map(CpuFw::new);
        let hw = FwNode::shared();
        hw.borrow_mut().set_ulp(true);
        // TX respects the peer's window (RFC 9293 §3.8.6), as the board does.
        hw.borrow_mut().core.set_tx_wnd_en(1);
        // Fast retransmit on the third duplicate ACK (RFC 5681 §3.2), as
        // the board does.
        hw.borrow_mut().core.set_fast_retx_en(1);
        // BAR0 CTRL_ENABLE gates the datapath, as on the boards; the node
        // comes up enabled, as a host's platform code leaves it (the
        // driver's Context::open resets the device and enables it again).
        hw.borrow_mut().core.set_ctrl_en_gate(1);
        hw.borrow_mut()
            .csr_write(rnic_wire::abi::csr::CTRL, rnic_wire::abi::csr::CTRL_ENABLE);
        let fw = match cpu {
            None => NodeFirmware::Native(Box::new(NodeFw::new(
                CoSimHal::new(hw.clone()),
                fw_config(),
            ))),
            Some(cpu) => {
                hw.borrow_mut().attach_cpu(cpu);
                NodeFirmware::Cpu
            }
        };
        Node {
            hw,
            fw,
            polls: 0,
            fw_running: true,
        }
    }

    /// The host's BAR0 on this node.
    pub fn host(&self) -> HostCsr {
        HostCsr {
            node: self.hw.clone(),
        }
    }

    /// The model's clock.
    pub fn cycle(&self) -> u64 {
        self.hw.borrow().core.cycle()
    }
}

impl Default for Node {
    fn default() -> Self {
        Self::new()
    }
}

/// One or two nodes and the link between them.
pub struct World {
    pub nodes: Vec<Node>,
    pub link: Option<Link>,
    /// Node 0's MAC on a socket instead of a link ([`World::external`]):
    /// a VM or another process (a Linux siw host, a test's scripted peer)
    /// is its peer.
    pub external: Option<ExternalPort>,
    /// A test's look at every frame a node hands to the link, before it
    /// goes: `(side, cycle, frame)`; `false` drops it (a chosen loss).
    #[allow(clippy::type_complexity)]
    pub tx_hook: Option<Box<dyn FnMut(Side, u64, &[u8]) -> bool>>,
    /// A test's look at every frame the link delivers: `(side it arrives
    /// at, the clock its last octet arrived, frame)`.
    #[allow(clippy::type_complexity)]
    pub rx_hook: Option<Box<dyn FnMut(Side, u64, &[u8])>>,
    /// Rounds run.
    pub rounds: u64,
    /// Print the log of firmware on the RISC-V cores that read it
    /// (`CpuFw::rtt_snoop`) at this level and above, after each round
    /// (`rnic-sim run --fw cpu --fw-log`).
    pub fw_log: Option<log::LevelFilter>,
    /// What a clock stands for (set with [`World::set_timing`]).
    pub timing: Timing,
}

impl World {
    /// One node, no link.
    pub fn single() -> Self {
        World {
            nodes: vec![Node::new()],
            link: None,
            external: None,
            tx_hook: None,
            rx_hook: None,
            rounds: 0,
            fw_log: None,
            timing: Timing::DATAPATH,
        }
    }

    /// One node whose MAC is the external port `port` (QEMU stream
    /// framing, `crate::external`): every frame the node sends goes to the
    /// socket, every frame from the socket enters its `mac_rx`.
    pub fn external(port: ExternalPort) -> Self {
        World {
            nodes: vec![Node::new()],
            link: None,
            external: Some(port),
            tx_hook: None,
            rx_hook: None,
            rounds: 0,
            fw_log: None,
            timing: Timing::DATAPATH,
        }
    }

    /// Two nodes (index 0 = link side A, 1 = side B) joined by `link`.
    pub fn pair(link: Link) -> Self {
        Self::pair_with(link, FwKind::Native).expect("the native firmware needs no image")
    }

    /// [`World::pair`] with both nodes' firmware on `kind` (for
    /// [`FwKind::Cpu`], one image built and loaded into both cores).
    pub fn pair_with(link: Link, kind: FwKind) -> Result<Self, String> {
        let image = firmware_image(kind)?;
        Ok(World {
            nodes: vec![
                Node::with_image(image.as_deref()),
                Node::with_image(image.as_deref()),
            ],
            link: Some(link),
            external: None,
            tx_hook: None,
            rx_hook: None,
            rounds: 0,
            fw_log: None,
            timing: Timing::DATAPATH,
        })
    }

    /// Makes a clock stand for `t` (`crate::clock`): the link's rate and
    /// pcap timestamps, the DMA servers' latencies (500 ns read round trip,
    /// 250 ns write, as [`crate::dma::DmaConfig::default`] at 156.25 MHz)
    /// and the core clock the firmware reads. Before the nodes are opened:
    /// the firmware reads its clock once.
    pub fn set_timing(&mut self, t: Timing) {
        self.timing = t;
        if let Some(link) = self.link.as_mut() {
            link.set_timing(t);
        }
        for n in &self.nodes {
            let mut hw = n.hw.borrow_mut();
            let dma = hw.dma.config().clone();
            hw.dma = crate::dma::DmaServer::new(crate::dma::DmaConfig {
                read_latency: t.cycles_ns(crate::dma::READ_ROUND_TRIP_NS),
                write_latency: t.cycles_ns(crate::dma::WRITE_LATENCY_NS),
                ..dma
            });
            // DATAPATH's clock is the RTL's own `CLOCK_KHZ`
            // (`sim/tests/timing.rs` reads it)
            hw.set_clock_khz((t != Timing::DATAPATH).then_some(t.clock_khz));
        }
    }

    /// A shared handle (what [`crate::sim_bus::SimBus`] holds).
    pub fn shared(self) -> Rc<RefCell<World>> {
        Rc::new(RefCell::new(self))
    }

    /// The leading node's clock.
    pub fn cycle(&self) -> u64 {
        self.nodes.iter().map(Node::cycle).max().unwrap_or(0)
    }

    /// One round: every node's firmware polls once (its register accesses
    /// clock its model), at least one clock passes, the lagging nodes are
    /// clocked up to the leader, and the link carries frames up to that
    /// cycle.
    pub fn round(&mut self) {
        for (k, n) in self.nodes.iter_mut().enumerate() {
            if !n.fw_running {
                continue;
            }
            // A firmware on the RISC-V core runs with its node's clock.
            if let Some(fw) = n.fw.native() {
                // its log lines (`fw_log::init_host`) name the node
                crate::fw_log::set_node(Some(k));
                fw.poll();
                crate::fw_log::set_node(None);
                n.polls += 1;
            }
        }
        self.nodes[0].hw.borrow_mut().tick();
        let t = self.cycle();
        for n in &self.nodes {
            let mut hw = n.hw.borrow_mut();
            while hw.core.cycle() < t {
                hw.tick();
            }
        }
        if let Some(link) = &mut self.link {
            for (n, side) in self.nodes.iter().zip([Side::A, Side::B]) {
                let mut hw = n.hw.borrow_mut();
                while let Some(f) = hw.tx_frames.pop_front() {
                    if let Some(hook) = &mut self.tx_hook {
                        if !hook(side, t, &f) {
                            continue;
                        }
                    }
                    // On the wire from its first beat: the MAC streamed it
                    // at line rate, so the link's serialisation overlaps it.
                    link.send_at(side, f.data, f.start);
                }
            }
            while link.cycle() < t {
                link.step();
            }
            for (n, side) in self.nodes.iter().zip([Side::A, Side::B]) {
                let mut hw = n.hw.borrow_mut();
                while let Some(f) = link.recv(side) {
                    if let Some(hook) = &mut self.rx_hook {
                        hook(side, f.cycle, &f.data);
                    }
                    hw.mac_rx.push(f.data, f.fcs_bad);
                }
            }
        }
        if let Some(ext) = &mut self.external {
            let mut hw = self.nodes[0].hw.borrow_mut();
            while let Some(f) = hw.tx_frames.pop_front() {
                ext.send(&f);
            }
            // A socket error leaves the port unplugged (counted there);
            // the node sees a silent cable, as on real hardware.
            let _ = ext.poll();
            while let Some(f) = ext.recv() {
                hw.mac_rx.push(f, false);
            }
        }
        if let Some(level) = self.fw_log {
            for (k, n) in self.nodes.iter().enumerate() {
                let lines = match n.hw.borrow_mut().cpu.as_mut() {
                    Some(cpu) => cpu.rtt_lines(),
                    None => continue,
                };
                for l in lines {
                    let lvl = l.level.and_then(|s| s.parse::<log::Level>().ok());
                    if lvl.is_none_or(|v| v <= level) {
                        crate::fw_log::print_line(k, &l);
                    }
                }
            }
        }
        self.rounds += 1;
    }
}
