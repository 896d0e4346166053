//! The firmware on the ECPIX-5's core, through probe-rs and a JTAG adapter
//! (FT2232H or FT232H) on PMOD0 (J5) pins 1-4: TCK T25, TMS U25, TDI U24,
//! TDO V24 (`constraints/ecpix5.lpf`; docs/cpu.md, "Debug module").
//!
//! * `rnic-probe load [ELF]`: halts the running core, loads the ELF into its
//!   instruction and data memory, resets into it and runs it; the
//!   bitstream is not rebuilt (`make fw-load`).
//! * `rnic-probe log [ELF]`: prints the firmware's defmt log from its RTT
//!   buffer, decoded with the ELF's symbols, until interrupted
//!   (`make fw-log`).
//!
//! The ELF defaults to the one `make firmware-elf` builds.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use probe_rs::probe::list::Lister;
use probe_rs::probe::{DebugProbeSelector, Probe, WireProtocol};
use probe_rs::{Permissions, Session};
use rnic_probe::{ops, target};

/// TCK, with margin under the debug module's 7.8 MHz.
const TCK_KHZ: u32 = 4_000;

const DEFAULT_ELF: &str = "target/riscv32im-unknown-none-elf/release/rnic-fw";

#[derive(Parser)]
#[command(about = "Load and log the firmware on the ECPIX-5's RISC-V core over JTAG")]
struct Cli {
    /// The probe, as VID:PID or VID:PID:SERIAL (default: the only one
    /// connected).
    #[arg(long, global = true)]
    probe: Option<String>,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Load an ELF into the core's memories and run it.
    Load {
        #[arg(default_value = DEFAULT_ELF)]
        elf: PathBuf,
    },
    /// Show the firmware's defmt log (RTT), decoded.
    Log {
        #[arg(default_value = DEFAULT_ELF)]
        elf: PathBuf,
    },
}

/// What to plug in when no probe is found.
const WIRING: &str = "connect an FT2232H or FT232H JTAG adapter to the ECPIX-5's PMOD0 (J5): \
     pin 1 TCK, pin 2 TMS, pin 3 TDI, pin 4 TDO, and a ground pin (docs/cpu.md, \"Debug module\")";

fn open_probe(sel: Option<&str>) -> Result<Probe, String> {
    let lister = Lister::new();
    let mut probe = match sel {
        Some(s) => {
            let sel: DebugProbeSelector = s
                .parse()
                .map_err(|e| format!("--probe {s}: {e} (expected VID:PID[:SERIAL])"))?;
            lister
                .open(sel)
                .map_err(|e| format!("JTAG probe {s}: {e}; {WIRING}"))?
        }
        None => {
            let found = lister.list_all();
            match found.as_slice() {
                [] => return Err(format!("no JTAG probe found: {WIRING}")),
                [one] => one
                    .open()
                    .map_err(|e| format!("JTAG probe {}: {e}", one.identifier))?,
                many => {
                    let names: Vec<String> = many
                        .iter()
                        .map(|p| {
                            format!("{:04x}:{:04x} {}", p.vendor_id, p.product_id, p.identifier)
                        })
                        .collect();
                    return Err(format!(
                        "{} probes found, choose one with --probe VID:PID[:SERIAL]: {}",
                        many.len(),
                        names.join(", ")
                    ));
                }
            }
        }
    };
    probe
        .select_protocol(WireProtocol::Jtag)
        .map_err(|e| format!("the probe cannot speak JTAG: {e}"))?;
    // The debug module samples TCK in the core clock: at most 1/8 of it,
    // 7.8 MHz at the ECPIX-5's 62.5 MHz (docs/cpu.md, "Debug module").
    probe
        .set_speed(TCK_KHZ)
        .map_err(|e| format!("TCK at {TCK_KHZ} kHz: {e}"))?;
    Ok(probe)
}

fn attach(sel: Option<&str>) -> Result<Session, String> {
    let probe = open_probe(sel)?;
    let registry = target::registry().map_err(|e| format!("probe/rnic.yaml: {e}"))?;
    probe
        .attach_with_registry(target::CHIP, Permissions::default(), &registry)
        .map_err(|e| {
            format!(
                "no rnic debug module behind the probe ({e}): is the ECPIX-5 powered and \
                 configured with the rnic bitstream (`make flash`), and the adapter wired \
                 as documented? {WIRING}"
            )
        })
}

fn read_elf(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| {
        format!(
            "firmware ELF {}: {e} (`make firmware-elf` builds it)",
            path.display()
        )
    })
}

fn log(sel: Option<&str>, elf_path: &Path) -> Result<(), String> {
    let elf = read_elf(elf_path)?;
    let mut decoder = rnic_sim::fw_log::FwLog::from_elf(&elf)
        .map_err(|e| format!("{}: {e}", elf_path.display()))?;
    let mut session = attach(sel)?;
    let mut core = session.core(0).map_err(|e| e.to_string())?;
    let mut rtt = ops::RttReader::attach(&mut core, &elf).map_err(|e| e.to_string())?;
    loop {
        let bytes = rtt.read(&mut core).map_err(|e| e.to_string())?;
        for line in decoder.push(&bytes) {
            println!("{line}");
        }
        if bytes.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let sel = cli.probe.as_deref();
    let r = match &cli.cmd {
        Cmd::Load { elf } => read_elf(elf).and_then(|_| {
            let mut session = attach(sel)?;
            ops::load_and_run(&mut session, elf).map_err(|e| e.to_string())?;
            println!("{} loaded and running", elf.display());
            Ok(())
        }),
        Cmd::Log { elf } => log(sel, elf),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rnic-probe: {e}");
            ExitCode::FAILURE
        }
    }
}
