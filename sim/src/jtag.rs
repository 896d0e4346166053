//! A JTAG adapter on the CPU's debug pins (`tck`, `tms`, `tdi`, `tdo` of
//! `rv32_core`, hw/src/cpu/debug): what an FT2232H on the board's PMOD is
//! to the board, for a debugger in another thread (`rnic-probe`'s
//! co-simulation probe drives probe-rs through it).
//!
//! The debugger holds a [`JtagCable`] and sends batches of TCK cycles
//! ([`JtagBit`]: TMS and TDI for the cycle, and whether to keep TDO); the
//! node's [`JtagPort`] plays them on the pins inside the node's clock and
//! sends back the kept TDO bits when the batch is done. One TCK cycle is
//! [`CLOCKS_PER_TCK`] node clocks: TCK low for half of them with TMS and TDI
//! set, TDO read just before the rising edge, TCK high for the other half
//! (the debug module's limit is TCK at most 1/8 of its clock; docs/cpu.md,
//! "Debug module"). Between batches the pins hold still, so the debugger
//! may be as slow as it likes; the simulation does not wait for it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use verilator_sys::rv32_core::Model as Rv32;

/// Node clocks per TCK cycle: the debug module's synchronisers need TCK
/// high and low for at least 4 clocks each.
pub const CLOCKS_PER_TCK: u8 = 8;

/// One TCK cycle as the debugger asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JtagBit {
    pub tms: bool,
    pub tdi: bool,
    /// Keep TDO as sampled at this cycle's rising edge.
    pub capture: bool,
}

/// Why a [`JtagCable::shift`] got no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CableError {
    /// The node (and its port) is gone.
    Unplugged,
    /// The port played no TCK cycle for [`JtagCable::timeout`]: nothing
    /// is stepping the world. The cable is unusable afterwards (the late
    /// answer would be taken for the next one).
    Timeout,
}

impl std::fmt::Display for CableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CableError::Unplugged => write!(f, "the simulated node's JTAG port is gone"),
            CableError::Timeout => write!(f, "the simulation did not clock the JTAG port"),
        }
    }
}

impl std::error::Error for CableError {}

/// The debugger's end: [`Send`], so a debugger can run in its own thread
/// while the world is stepped in the test's.
pub struct JtagCable {
    to_port: Sender<Vec<JtagBit>>,
    from_port: Receiver<Vec<bool>>,
    /// TCK cycles the port has played: progress, however slow the
    /// simulation.
    played: Arc<AtomicU64>,
    /// How long the port may play nothing while a batch waits (wall
    /// clock).
    pub timeout: Duration,
    broken: bool,
}

impl JtagCable {
    /// Plays `bits` on the pins; returns the TDO bits kept, in order.
    /// Waits as long as the port makes progress.
    pub fn shift(&mut self, bits: Vec<JtagBit>) -> Result<Vec<bool>, CableError> {
        if self.broken {
            return Err(CableError::Timeout);
        }
        self.to_port.send(bits).map_err(|_| CableError::Unplugged)?;
        let mut seen = self.played.load(Ordering::Relaxed);
        let mut since = Instant::now();
        loop {
            match self.from_port.recv_timeout(Duration::from_millis(200)) {
                Ok(tdo) => return Ok(tdo),
                Err(RecvTimeoutError::Disconnected) => return Err(CableError::Unplugged),
                Err(RecvTimeoutError::Timeout) => {
                    let now = self.played.load(Ordering::Relaxed);
                    if now != seen {
                        seen = now;
                        since = Instant::now();
                    } else if since.elapsed() > self.timeout {
                        self.broken = true;
                        return Err(CableError::Timeout);
                    }
                }
            }
        }
    }
}

/// The node's end, clocked by `CpuFw` before each edge of the CPU.
pub struct JtagPort {
    from_cable: Receiver<Vec<JtagBit>>,
    to_cable: Sender<Vec<bool>>,
    /// The batch being played and the TDO bits kept so far.
    batch: VecDeque<JtagBit>,
    kept: Vec<bool>,
    playing: bool,
    /// Clock within the current TCK cycle.
    phase: u8,
    /// TCK cycles played.
    pub tck_cycles: u64,
    played: Arc<AtomicU64>,
}

/// A port and the cable plugged into it.
pub fn cable() -> (JtagPort, JtagCable) {
    let (to_port, from_cable) = channel();
    let (to_cable, from_port) = channel();
    let played = Arc::new(AtomicU64::new(0));
    (
        JtagPort {
            from_cable,
            to_cable,
            batch: VecDeque::new(),
            kept: Vec::new(),
            playing: false,
            phase: 0,
            tck_cycles: 0,
            played: played.clone(),
        },
        JtagCable {
            to_port,
            from_port,
            played,
            timeout: Duration::from_secs(30),
            broken: false,
        },
    )
}

impl JtagPort {
    /// Before the CPU's clock edge: drives the pins for this clock.
    pub fn clock(&mut self, cpu: &mut Rv32) {
        if self.phase == 0 {
            while self.batch.is_empty() {
                if self.playing {
                    // The batch is done: its TDO bits go back. A cable that
                    // is gone wants no answer.
                    let _ = self.to_cable.send(std::mem::take(&mut self.kept));
                    self.playing = false;
                }
                match self.from_cable.try_recv() {
                    Ok(b) => {
                        self.batch = b.into();
                        self.playing = true;
                    }
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
                }
            }
            let b = self.batch[0];
            cpu.set_tck(0);
            cpu.set_tms(b.tms as u64);
            cpu.set_tdi(b.tdi as u64);
        } else if self.phase == CLOCKS_PER_TCK / 2 {
            if self.batch[0].capture {
                self.kept.push(cpu.get_tdo() != 0);
            }
            cpu.set_tck(1);
        }
        self.phase += 1;
        if self.phase == CLOCKS_PER_TCK {
            self.phase = 0;
            self.batch.pop_front();
            self.tck_cycles += 1;
            if self.tck_cycles.is_multiple_of(1024) {
                self.played.store(self.tck_cycles, Ordering::Relaxed);
            }
        }
    }

    /// Whether a batch is being played.
    pub fn busy(&self) -> bool {
        self.playing
    }
}
