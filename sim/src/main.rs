//! `rnic-sim`: the co-simulator's command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rnic_sim::model_run::{self, RunConfig};

#[derive(Parser)]
#[command(
    name = "rnic-sim",
    about = "rnic co-simulation: two nodes doing RDMA over iWARP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The default scenario: connect, register memory, RDMA Write / Read /
    /// Send over a size sweep, verify byte-exact, report.
    Run {
        /// IP MTU of the link (1500 or jumbo up to 9000).
        #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u16).range(576..=9000))]
        mtu: u16,
        /// MPA CRC32c on (`--crc false` for off, as Linux siw defaults to).
        #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
        crc: bool,
        /// MPA markers in both directions.
        #[arg(long, default_value_t = false, action = clap::ArgAction::Set)]
        markers: bool,
        /// Seed of data, offsets and initial sequence numbers.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Operations of each kind per size.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=1000))]
        ops: u64,
        /// Largest message in octets; sizes double from 1 up to it.
        #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..=(16 << 20)))]
        max_size: u64,
        /// Where to write the packet capture.
        #[arg(long, default_value = "target/sim/rnic-sim.pcap")]
        pcap: PathBuf,
    },
}

fn main() -> ExitCode {
    let Command::Run {
        mtu,
        crc,
        markers,
        seed,
        ops,
        max_size,
        pcap,
    } = Cli::parse().command;
    println!("rnic-sim run: two endpoints, TCP + MPA rev 2 (RFC 6581) setup, then RDMA Write, RDMA Read and Send/Recv");
    println!(
        "NOTE: the RTL co-simulation is not assembled yet: this run exercises rnic-wire's software reference model \
         (the protocol behaviour the RTL, firmware and driver are checked against), not the RTL, firmware or driver, \
         and so reports protocol efficiency, not cycles or latency.\n"
    );
    let cfg = RunConfig {
        mtu,
        crc,
        markers,
        seed,
        ops: ops as usize,
        max_size: max_size as usize,
        pcap: Some(pcap.clone()),
    };
    match model_run::run(&cfg) {
        Ok(report) => {
            print!("{}", report.render());
            println!(
                "pcap: {} (tshark -r {} --disable-protocol rpcordma)",
                pcap.display(),
                pcap.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rnic-sim: FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
