//! `rnic-sim`: the co-simulator's command line.
//!
//! * `rnic-sim run`: the default scenario over the RTL — two Verilated
//!   cores with their firmware and drivers (`rnic_sim::rtl_run`);
//! * `rnic-sim run --model` or `rnic-sim model`: the same scenario on
//!   rnic-wire's software reference model alone (`rnic_sim::model_run`);
//! * `rnic-sim rping`: one node on an external socket (QEMU's stream
//!   framing) plays rdma-core's rping, server or client
//!   (`rnic_sim::apps::rping`), against a real Linux host (`make interop`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use rnic_sim::clock::Timing;
use rnic_sim::model_run::{self, RunConfig};
use rnic_sim::node::FwKind;
use rnic_sim::rtl_run::{self, RtlConfig};

/// Largest message of `rnic-sim run` unless `--max-size` says otherwise.
const RTL_DEFAULT_MAX_SIZE: u64 = 1 << 20;
/// Largest MTU the RTL carries: the TX framer takes a whole FPDU of a
/// 9000-octet IP MTU frame and the RX side 9018-octet Ethernet frames; the
/// firmware caps MULPDU at the device limit (`abi::caps::MAX_MULPDU` =
/// 8882, a full 9000-octet frame) and to 3 FPDUs per peer window
/// (`rnic_fw::mpa::Agreement::mulpdu_in_window`), so every MTU up to this
/// one is safe.
const RTL_MAX_MTU: u16 = rnic_wire::abi::caps::TX_MAX_MTU;

/// What a clock of the co-simulation stands for (`rnic_sim::clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TimingArg {
    /// The 64-bit datapath at 156.25 MHz behind a 10 Gb/s port.
    Datapath,
    /// The ECPIX-5 board: 62.5 MHz behind its 1 Gb/s port.
    Board,
}

impl TimingArg {
    fn timing(self) -> Timing {
        match self {
            TimingArg::Datapath => Timing::DATAPATH,
            TimingArg::Board => Timing::BOARD,
        }
    }
}

#[derive(Parser)]
#[command(
    name = "rnic-sim",
    about = "rnic co-simulation: two nodes doing RDMA over iWARP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// IP MTU of the link (1500 or jumbo up to 9000).
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u16).range(576..=9000))]
    mtu: u16,
    /// MPA CRC32c on (`--crc false` for off, as Linux siw defaults to).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    crc: bool,
    /// MPA markers asked for by node A (the initiator): B inserts them on
    /// B → A; B's firmware does not ask, so A → B stays unmarked.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
    markers: bool,
    /// Seed of data, offsets and initial sequence numbers.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Operations of each kind per size.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1000))]
    ops: u64,
    /// Largest message in octets; sizes double from 1 up to it (default
    /// 1 MiB).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(16 << 20)))]
    max_size: Option<u64>,
    /// Where to write the packet capture.
    #[arg(long, default_value = "target/sim/rnic-sim.pcap")]
    pcap: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// The default scenario over the RTL: two nodes connect through the
    /// driver's CM, register memory, RDMA Write / Send (/ Read) over a size
    /// sweep, verify byte-exact, report.
    Run {
        #[command(flatten)]
        common: Common,
        /// Run the software reference model instead of the RTL.
        #[arg(long)]
        model: bool,
        /// Verilator VCD trace of node A (slow: about 5× fewer clocks/s).
        #[arg(long)]
        vcd: Option<PathBuf>,
        /// Where to write the JSON report.
        #[arg(long, default_value = "target/sim/rnic-sim-report.json")]
        json: PathBuf,
        /// Link frame loss rate (0..1).
        #[arg(long, default_value_t = 0.0)]
        loss: f64,
        /// Link frame corruption rate (0..1).
        #[arg(long, default_value_t = 0.0)]
        corrupt: f64,
        /// Link frame duplication rate (0..1).
        #[arg(long, default_value_t = 0.0)]
        duplicate: f64,
        /// Link frame reordering rate (0..1).
        #[arg(long, default_value_t = 0.0)]
        reorder: f64,
        /// Cycle budget per operation: this + 1 clock per octet.
        #[arg(long, default_value_t = 200_000)]
        budget: u64,
        /// One-way link delay in µs; 50 gives a 100 µs round trip.
        #[arg(long, default_value_t = 1.0)]
        delay_us: f64,
        /// What a clock stands for: `datapath` (156.25 MHz, 10 Gb/s port)
        /// or `board` (the ECPIX-5's 62.5 MHz core clock behind its 1 Gb/s
        /// port; the DMA round trip stays 500 ns). The RTL is the same.
        #[arg(long, value_enum, default_value_t = TimingArg::Datapath)]
        timing: TimingArg,
        /// TCP receive window both nodes offer, octets (window scale 7, RFC
        /// 7323); default the firmware's `DEVICE_RX_WINDOW`.
        #[arg(long)]
        rcv_window: Option<u32>,
        /// Post Writes and Sends of at most this many octets inline (the
        /// message in the WQE, `IBV_SEND_INLINE`; up to the device's 96),
        /// as perftest's `-I`; 0: none.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=96))]
        inline: u64,
        /// Where the firmware runs: `native` (built for this host, polled
        /// between clocks) or `cpu` (the RISC-V image, `make firmware-elf`,
        /// on a Verilated RV32IM core beside each node, as on the board).
        #[arg(long, value_enum, default_value_t = FwKind::Native)]
        fw: FwKind,
        /// With `--fw cpu`: write node A's core's clocks per instruction
        /// address and call site to this file (`<pc> <call site> <clocks>`
        /// lines; `nm -n` on the image maps them to functions).
        #[arg(long)]
        cpu_profile: Option<PathBuf>,
        /// Print both nodes' firmware log on stderr, at this level and
        /// above (error, warn, info, debug; `--fw-log` alone: info), each
        /// line with its node (A, B). Native firmware: its `log` records;
        /// `--fw cpu`: the image's defmt frames, read from each core's RTT
        /// buffer through its stores and decoded with the ELF.
        #[arg(long, value_name = "LEVEL", num_args = 0..=1, default_missing_value = "info")]
        fw_log: Option<log::LevelFilter>,
        /// No progress lines.
        #[arg(long)]
        quiet: bool,
    },
    /// The scenario on rnic-wire's software reference model alone (protocol
    /// efficiency, no cycles).
    Model {
        #[command(flatten)]
        common: Common,
    },
    /// One node (RTL + firmware + driver) on an external socket plays
    /// rdma-core's rping, server (`rping -s`) or client (`rping -c`);
    /// exits 0 when every ping came back byte-exact and the connection
    /// closed.
    Rping(apps_cli::RpingArgs),
    /// One node on an external socket plays perftest's `ib_write_bw -R` or
    /// `ib_read_bw -R` (rdma_cm), server or client; prints the bandwidth
    /// measured.
    Perftest(apps_cli::PerftestArgs),
}

mod apps_cli;

fn model(c: Common) -> ExitCode {
    println!("rnic-sim: SOFTWARE REFERENCE MODEL run (rnic-wire), not the RTL: two endpoints, TCP + MPA rev 2 (RFC 6581) setup, then RDMA Write, RDMA Read and Send/Recv");
    println!(
        "NOTE: this exercises rnic-wire's protocol model (what the RTL, firmware and driver are \
         checked against) and reports protocol efficiency, not cycles or latency.\n"
    );
    let cfg = RunConfig {
        mtu: c.mtu,
        crc: c.crc,
        markers: c.markers,
        seed: c.seed,
        ops: c.ops as usize,
        max_size: c.max_size.unwrap_or(1 << 20) as usize,
        pcap: Some(c.pcap.clone()),
    };
    match model_run::run(&cfg) {
        Ok(report) => {
            print!("{}", report.render());
            println!(
                "pcap: {} (tshark -r {} --disable-protocol rpcordma)",
                c.pcap.display(),
                c.pcap.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rnic-sim: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Rping(a) => apps_cli::rping(a),
        Command::Perftest(a) => apps_cli::perftest(a),
        Command::Model { common } => model(common),
        Command::Run {
            common,
            model: true,
            ..
        } => model(common),
        Command::Run {
            common: c,
            model: false,
            vcd,
            json,
            loss,
            corrupt,
            duplicate,
            reorder,
            budget,
            delay_us,
            timing,
            rcv_window,
            inline,
            fw,
            cpu_profile,
            fw_log,
            quiet,
        } => {
            if c.mtu > RTL_MAX_MTU {
                eprintln!(
                    "rnic-sim: REFUSED: --mtu {} is larger than the RTL's frames carry (TX framer \
                     and RX FIFO: IP MTU {RTL_MAX_MTU}). Use --mtu {RTL_MAX_MTU} or less.",
                    c.mtu
                );
                return ExitCode::from(2);
            }
            let max_size = c.max_size.unwrap_or(RTL_DEFAULT_MAX_SIZE);
            println!(
                "rnic-sim run: RTL CO-SIMULATION — two Verilated rnic_core models, each with its \
                 firmware (rnic-fw) and driver (rnic-driver), over the link model"
            );
            println!(
                "scenario: B listens, A connects (TCP + MPA rev 2, private data both ways), \
                 reg_mr on both, RDMA Write, Send/Recv and RDMA Read over sizes 1 B .. {} B × {} each, \
                 every message checked byte-exact in B's memory with the octets around it \
                 unchanged; then disconnect\n",
                max_size, c.ops
            );
            let cfg = RtlConfig {
                mtu: c.mtu,
                crc: c.crc,
                markers: c.markers,
                seed: c.seed,
                ops: c.ops as usize,
                max_size: max_size as usize,
                inline: inline as usize,
                pcap: Some(c.pcap.clone()),
                vcd: vcd.clone(),
                progress: !quiet,
                budget_base: budget,
                loss,
                corrupt,
                duplicate,
                reorder,
                delay_cycles: (delay_us * timing.timing().clock_khz as f64 / 1e3).round() as u64,
                timing: timing.timing(),
                rcv_window,
                fw,
                cpu_profile,
                fw_log,
            };
            match rtl_run::run(&cfg) {
                Ok(report) => {
                    print!("{}", report.render());
                    println!(
                        "pcap: {} (tshark -r {} --disable-protocol rpcordma)",
                        c.pcap.display(),
                        c.pcap.display()
                    );
                    if let Some(v) = &vcd {
                        println!("vcd (node A): {}", v.display());
                    }
                    if let Some(dir) = json.parent() {
                        let _ = std::fs::create_dir_all(dir);
                    }
                    match std::fs::write(&json, report.json()) {
                        Ok(()) => println!("json: {}", json.display()),
                        Err(e) => {
                            eprintln!("rnic-sim: json {}: {e}", json.display());
                            return ExitCode::FAILURE;
                        }
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("rnic-sim: FAILED: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
