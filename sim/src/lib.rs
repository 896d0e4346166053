//! `rnic-sim`: the co-simulator (DESIGN.md §7). A node is the Verilated
//! `rnic_core`, its firmware, its host memory and its driver; nodes are joined
//! by a link model.
//!
//! The backbone, independent of what the core's ports grow into:
//! * [`host_mem`]: sparse host memory, bump allocator, DMA-able ranges;
//! * [`dma`]: the DMA server (DMA write/read contracts of `docs/rtl.md`);
//! * [`stream`]: beats of the stream convention and frame assembly;
//! * [`mac_port`]: a model's MAC stream ports ↔ frames;
//! * [`link`]: a link between two MAC ports (delay, rate, seeded faults, pcap);
//! * [`external`]: a MAC port carried over a socket (QEMU stream framing);
//! * [`fw_hal`]: the firmware's `Hal` over the model's firmware port, and BAR0 access;
//! * [`cpu_fw`]: the firmware image on a Verilated RISC-V core, on the firmware port;
//! * [`fw_log`]: the firmware's log: the image's defmt frames decoded, the host build's `log` records printed;
//! * [`jtag`]: a JTAG adapter on that core's debug pins, for a debugger in another thread;
//! * [`node`]: a node (model + memory + DMA + firmware) and the world of one or two;
//! * [`sim_bus`]: the driver's `Bus` over a node;
//! * [`sched`]: the single-threaded cycle scheduler over [`sched::Node`]s;
//! * [`rng`]: the seeded generator behind every random choice;
//! * [`pcap`]: pcap files of frames;
//! * [`rtl_run`]: the default scenario over the RTL (two nodes, drivers);
//! * [`msg_rate`]: the message-rate benchmark over the RTL (small Writes and Sends, many outstanding);
//! * [`apps`]: rping on the driver, against a Linux host or a scripted peer;
//! * [`model_run`]: the same scenario on the reference model alone.

// The JSON report (`rtl_run`) is one `serde_json::json!` literal.
#![recursion_limit = "256"]

pub mod apps;
pub mod clock;
pub mod cpu_fw;
pub mod dma;
pub mod external;
pub mod fw_hal;
pub mod fw_log;
pub mod host_mem;
pub mod jtag;
pub mod latency;
pub mod link;
pub mod mac_port;
pub mod model_run;
pub mod msg_rate;
pub mod node;
pub mod pcap;
pub mod rng;
pub mod rtl_run;
pub mod sched;
pub mod sim_bus;
pub mod stream;
