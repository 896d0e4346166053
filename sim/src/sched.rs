//! The single-threaded cycle scheduler (DESIGN.md §7): clocks N nodes and
//! the links between their MAC ports, forwards frames to and from external
//! ports, and polls per-node hooks (firmware, driver) between cycles.
//!
//! It knows nodes only through [`Node`], so it does not change as the RTL
//! core's ports grow: a node does its own pin work (MAC adapters, DMA
//! server, ...) in [`Node::clock`] and exchanges frames with the scheduler
//! through one [`MacIo`] per MAC port.
//!
//! One cycle, in order:
//! 1. every MAC port's `hold` is set from its link (`busy` transmitter);
//! 2. every node is clocked (`Node::clock`: drive, eval, sample, edge),
//!    putting the frames its MACs finished into `MacIo::tx`;
//! 3. frames go onto their links (or external ports), the links advance one
//!    cycle, and frames that arrived are queued in the peer's `MacIo::rx`
//!    (the node feeds them to its MAC from the next cycle on);
//! 4. every `ext_poll_every` cycles the external sockets are polled;
//! 5. every `hook_every` cycles each node's [`Node::poll`] runs.

use std::any::Any;
use std::collections::VecDeque;

use crate::external::ExternalPort;
use crate::link::{Link, RxFrame, Side};

/// Frames between the scheduler and one MAC port of a node.
#[derive(Debug, Default)]
pub struct MacIo {
    /// Frames that arrived for this port, oldest first (the node takes them).
    pub rx: VecDeque<RxFrame>,
    /// Frames this port transmitted this cycle, each with the cycle its
    /// first beat went out (the scheduler takes them).
    pub tx: Vec<(Vec<u8>, u64)>,
    /// The medium is busy: do not start a new frame this cycle.
    pub hold: bool,
}

/// A simulated node: a model plus whatever runs around it.
pub trait Node: Any {
    /// Number of MAC ports (fixed).
    fn mac_ports(&self) -> usize {
        1
    }
    /// One clock cycle of the node. `macs` has [`Node::mac_ports`] entries.
    fn clock(&mut self, cycle: u64, macs: &mut [MacIo]);
    /// Between cycles, every `hook_every` cycles: firmware, driver, checks.
    fn poll(&mut self, _cycle: u64) {}
    /// The node has finished its work ([`Scheduler::run_until_done`]).
    fn done(&self) -> bool {
        false
    }
}

/// A MAC port: (node index, port index).
pub type PortRef = (usize, usize);

struct LinkSlot {
    link: Link,
    a: PortRef,
    b: PortRef,
}

struct ExtSlot {
    port: ExternalPort,
    at: PortRef,
}

/// The scheduler.
pub struct Scheduler {
    nodes: Vec<Box<dyn Node>>,
    macs: Vec<Vec<MacIo>>,
    links: Vec<LinkSlot>,
    exts: Vec<ExtSlot>,
    cycle: u64,
    /// Cycles between node hooks (`Node::poll`); 1 = every cycle.
    pub hook_every: u64,
    /// Cycles between external socket polls (syscalls are costly).
    pub ext_poll_every: u64,
}

impl Default for Scheduler {
    fn default() -> Self {
        Self::new()
    }
}

impl Scheduler {
    pub fn new() -> Self {
        Scheduler {
            nodes: Vec::new(),
            macs: Vec::new(),
            links: Vec::new(),
            exts: Vec::new(),
            cycle: 0,
            hook_every: 1,
            ext_poll_every: 64,
        }
    }

    /// Adds a node; returns its index.
    pub fn add_node(&mut self, node: Box<dyn Node>) -> usize {
        let n = node.mac_ports();
        self.nodes.push(node);
        self.macs.push((0..n).map(|_| MacIo::default()).collect());
        self.nodes.len() - 1
    }

    fn check_free(&self, p: PortRef) {
        assert!(
            p.0 < self.nodes.len() && p.1 < self.macs[p.0].len(),
            "no MAC port {p:?}"
        );
        let used =
            self.links.iter().any(|l| l.a == p || l.b == p) || self.exts.iter().any(|e| e.at == p);
        assert!(!used, "MAC port {p:?} is already attached");
    }

    /// Joins two MAC ports with a link (`a` is its side A); returns the
    /// link's index.
    pub fn connect(&mut self, a: PortRef, b: PortRef, link: Link) -> usize {
        self.check_free(a);
        self.check_free(b);
        assert_ne!(a, b, "a port cannot be linked to itself");
        self.links.push(LinkSlot { link, a, b });
        self.links.len() - 1
    }

    /// Attaches a MAC port to an external socket port.
    pub fn attach_external(&mut self, at: PortRef, port: ExternalPort) -> usize {
        self.check_free(at);
        self.exts.push(ExtSlot { port, at });
        self.exts.len() - 1
    }

    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    pub fn link(&self, i: usize) -> &Link {
        &self.links[i].link
    }

    pub fn link_mut(&mut self, i: usize) -> &mut Link {
        &mut self.links[i].link
    }

    pub fn external(&mut self, i: usize) -> &mut ExternalPort {
        &mut self.exts[i].port
    }

    pub fn node(&self, i: usize) -> &dyn Node {
        &*self.nodes[i]
    }

    pub fn node_mut(&mut self, i: usize) -> &mut dyn Node {
        &mut *self.nodes[i]
    }

    /// Node `i` as its concrete type.
    pub fn node_as<T: Node>(&self, i: usize) -> Option<&T> {
        (&*self.nodes[i] as &dyn Any).downcast_ref()
    }

    /// Node `i` as its concrete type, mutably.
    pub fn node_as_mut<T: Node>(&mut self, i: usize) -> Option<&mut T> {
        (&mut *self.nodes[i] as &mut dyn Any).downcast_mut()
    }

    /// Runs one cycle.
    pub fn step(&mut self) {
        let c = self.cycle;
        for l in &self.links {
            self.macs[l.a.0][l.a.1].hold = l.link.busy(Side::A);
            self.macs[l.b.0][l.b.1].hold = l.link.busy(Side::B);
        }
        for (n, node) in self.nodes.iter_mut().enumerate() {
            node.clock(c, &mut self.macs[n]);
        }
        for l in &mut self.links {
            for (side, p) in [(Side::A, l.a), (Side::B, l.b)] {
                for (f, start) in self.macs[p.0][p.1].tx.drain(..) {
                    l.link.send_at(side, f, start);
                }
            }
            l.link.step();
            for (side, p) in [(Side::A, l.a), (Side::B, l.b)] {
                while let Some(f) = l.link.recv(side) {
                    self.macs[p.0][p.1].rx.push_back(f);
                }
            }
        }
        let poll_ext = self.ext_poll_every <= 1 || c.is_multiple_of(self.ext_poll_every);
        for e in &mut self.exts {
            let io = &mut self.macs[e.at.0][e.at.1];
            for (f, _) in io.tx.drain(..) {
                e.port.send(&f);
            }
            if poll_ext {
                // A failed peer is dropped inside the port (and counted);
                // the simulation goes on, as with an unplugged cable.
                let _ = e.port.poll();
            }
            while let Some(f) = e.port.recv() {
                io.rx.push_back(RxFrame {
                    data: f,
                    fcs_bad: false,
                    corrupted: false,
                    cycle: c,
                });
            }
        }
        // Ports attached to nothing: frames vanish, as on an open port.
        for io in self.macs.iter_mut().flatten() {
            io.tx.clear();
        }
        self.cycle += 1;
        if self.hook_every <= 1 || self.cycle.is_multiple_of(self.hook_every) {
            for node in &mut self.nodes {
                node.poll(self.cycle);
            }
        }
    }

    /// Runs `n` cycles.
    pub fn run(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }

    /// Runs until every node is [`Node::done`] or `max` cycles have run;
    /// returns whether all were done.
    pub fn run_until_done(&mut self, max: u64) -> bool {
        for _ in 0..max {
            if self.nodes.iter().all(|n| n.done()) {
                return true;
            }
            self.step();
        }
        self.nodes.iter().all(|n| n.done())
    }

    /// Runs until `f(self)` holds or `max` cycles have run.
    pub fn run_until(&mut self, max: u64, mut f: impl FnMut(&Scheduler) -> bool) -> bool {
        for _ in 0..max {
            if f(self) {
                return true;
            }
            self.step();
        }
        f(self)
    }
}
