//! What a developer does to the firmware's core through probe-rs, the same
//! on the board (`rnic-probe load` / `rnic-probe log`) and in co-simulation
//! (the tests, through [`crate::sim_probe::SimProbe`]).

use std::path::Path;
use std::time::Duration;

use probe_rs::flashing::{download_file, ElfLoader, ElfOptions};
use probe_rs::rtt::{Rtt, UpChannel};
use probe_rs::{Core, Session};

/// How long the core may take to halt or reset (wall clock; in
/// co-simulation a debug-module access takes a few hundred node clocks).
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Why an operation failed, naming what is missing.
#[derive(Debug)]
pub enum OpError {
    /// The ELF file cannot be read.
    Elf(String),
    /// A symbol the operation needs is not in the ELF.
    NoSymbol(&'static str),
    /// probe-rs failed at a step (which, and its error).
    Probe(&'static str, String),
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpError::Elf(e) => write!(f, "firmware ELF: {e}"),
            OpError::NoSymbol(s) => write!(f, "the firmware ELF has no symbol {s}"),
            OpError::Probe(step, e) => write!(f, "{step}: {e}"),
        }
    }
}

impl std::error::Error for OpError {}

fn step<T, E: std::fmt::Display>(what: &'static str, r: Result<T, E>) -> Result<T, OpError> {
    r.map_err(|e| OpError::Probe(what, e.to_string()))
}

/// Halts the core, loads the ELF's segments into instruction and data
/// memory (read back and compared by probe-rs), and resets into it with
/// the core halted at its entry; returns the pc there.
pub fn load_halted(session: &mut Session, elf: &Path) -> Result<u64, OpError> {
    if !elf.is_file() {
        return Err(OpError::Elf(format!(
            "{} not found (`make firmware-elf` builds it)",
            elf.display()
        )));
    }
    {
        let mut core = step("core", session.core(0))?;
        step("halt", core.halt(TIMEOUT))?;
    }
    step(
        "load",
        download_file(session, elf, ElfLoader(ElfOptions::default())),
    )?;
    let mut core = step("core", session.core(0))?;
    let at = step("reset and halt", core.reset_and_halt(TIMEOUT))?;
    Ok(at.pc)
}

/// [`load_halted`], then runs the image.
pub fn load_and_run(session: &mut Session, elf: &Path) -> Result<(), OpError> {
    load_halted(session, elf)?;
    let mut core = step("core", session.core(0))?;
    step("run", core.run())
}

/// A symbol's address in an ELF image.
pub fn symbol(elf: &[u8], name: &'static str) -> Result<u64, OpError> {
    use object::{Object, ObjectSymbol};
    let f = object::File::parse(elf).map_err(|e| OpError::Elf(e.to_string()))?;
    f.symbols()
        .find(|s| s.name() == Ok(name))
        .map(|s| s.address())
        .ok_or(OpError::NoSymbol(name))
}

/// The firmware's RTT up channel 0 (defmt's), found at the ELF's
/// `_SEGGER_RTT`.
pub struct RttReader {
    rtt: Rtt,
}

impl RttReader {
    pub fn attach(core: &mut Core, elf: &[u8]) -> Result<Self, OpError> {
        let at = symbol(elf, "_SEGGER_RTT")?;
        let rtt = step("RTT control block", Rtt::attach_at(core, at))?;
        Ok(RttReader { rtt })
    }

    /// The octets the firmware has written since the last call (and
    /// frees their room in its buffer).
    pub fn read(&mut self, core: &mut Core) -> Result<Vec<u8>, OpError> {
        let ch: &mut UpChannel = self
            .rtt
            .up_channel(0)
            .ok_or(OpError::Probe("RTT", "no up channel 0".into()))?;
        let mut out = Vec::new();
        let mut buf = [0u8; 1024];
        loop {
            let n = step("RTT read", ch.read(core, &mut buf))?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
        }
    }
}
