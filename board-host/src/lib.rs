//! `rnic-board-host`: the host side of a board over the UDP bridge — the
//! board's host memory and driver, and the firmware's two homes.
//!
//! * On the ECPIX-5 the firmware runs on the top's RISC-V core (the image
//!   the bitstream carries, or one loaded over the bridge with
//!   [`load_cpu_image`] through the top's `CPU_CTL`/`CPU_LOAD_*` registers).
//! * As a debugging aid, and on the Versa-5G (no CPU), the firmware
//!   (`rnic_fw::Firmware`) runs here, over the bridge's firmware window
//!   (`FW_READ`/`FW_WRITE`, docs/bridge.md "Firmware window"): the
//!   register-level [`Hal`](rnic_fw::Hal) is [`rnic_fw::port_hal::PortHal`]
//!   — the same one the RISC-V image uses — over [`BridgeRegs`], one bridge
//!   request per register access ([`run_firmware`]).
//!
//! The driver shares the same [`UdpBus`] ([`SharedBus`]): the board knows
//! one host, the one `UdpBus` serves the device's DMA from its memory, and
//! its stop-and-wait request lock interleaves the driver's BAR0 accesses
//! with the firmware's port accesses.
//!
//! A separate crate (not a bin of the driver) so that the driver does not
//! depend on the firmware.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rnic_driver::bus::{Bus, BusError};
use rnic_driver::udp_bus::{UdpBus, UdpBusError, UdpDma};
use rnic_fw::port_hal::{FwCapacities, FwRegs, PortHal};
use rnic_fw::{Config, Firmware};
use rnic_wire::abi::csr;

/// The firmware's capacities, as in the RISC-V image (`rnic-fw.rs`): 8
/// connections, 16 QPs, 4 listeners, 8 pending, 8 ARP entries, 8 filter
/// rules, 16 CQs, 64 TPT entries, 8 queued events, 8 event records.
pub type HostFirmware = Firmware<PortHal<BridgeRegs>, 8, 16, 4, 8, 8, 8, 16, 64, 8, 8>;

/// [`HostFirmware`]'s capacities that the device's tables must hold
/// (checked against its `LIM_*` registers by [`run_firmware`]).
pub const HOST_FW_CAPS: FwCapacities = FwCapacities {
    conns: 8,
    qps: 16,
    cqs: 16,
    tpt: 64,
};

/// Counts shared between the firmware thread and whoever watches it.
#[derive(Debug, Default)]
pub struct FwStats {
    /// `Firmware::poll` calls.
    pub polls: AtomicU64,
    /// Firmware-port accesses (bridge requests).
    pub accesses: AtomicU64,
    /// Accesses that failed (timeout, NAK): a read answered 0 instead.
    pub failed: AtomicU64,
}

/// [`FwRegs`] over the bridge: each access is one stop-and-wait
/// `FW_READ`/`FW_WRITE`. A failed access (after every resend) is counted
/// and recorded; a failed read returns 0 — for every status register of
/// the port that is "nothing there" (no exception, no command, not busy),
/// never a spurious pop.
pub struct BridgeRegs {
    bus: Arc<UdpBus>,
    stats: Arc<FwStats>,
    /// The last failure.
    pub last_error: Arc<Mutex<Option<UdpBusError>>>,
}

impl BridgeRegs {
    pub fn new(bus: Arc<UdpBus>, stats: Arc<FwStats>) -> Self {
        BridgeRegs {
            bus,
            stats,
            last_error: Arc::new(Mutex::new(None)),
        }
    }

    fn failed(&self, e: UdpBusError) {
        self.stats.failed.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock().unwrap() = Some(e);
    }
}

impl FwRegs for BridgeRegs {
    fn read32(&mut self, off: u32) -> u32 {
        self.stats.accesses.fetch_add(1, Ordering::Relaxed);
        match self.bus.fw_read32(off) {
            Ok(v) => v,
            Err(e) => {
                self.failed(e);
                0
            }
        }
    }
    fn write32(&mut self, off: u32, v: u32) {
        self.stats.accesses.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = self.bus.fw_write32(off, v) {
            self.failed(e);
        }
    }
}

/// The driver's [`Bus`] on a [`UdpBus`] shared with the firmware.
#[derive(Clone)]
pub struct SharedBus(pub Arc<UdpBus>);

impl Bus for SharedBus {
    type Dma = UdpDma;
    fn read32(&self, offset: u32) -> u32 {
        self.0.read32(offset)
    }
    fn write32(&self, offset: u32, value: u32) {
        self.0.write32(offset, value)
    }
    fn alloc_dma(&self, len: usize, align: usize) -> Result<UdpDma, BusError> {
        self.0.alloc_dma(len, align)
    }
    fn wait_interrupt(&self, timeout: Duration) -> bool {
        self.0.wait_interrupt(timeout)
    }
    fn now(&self) -> Duration {
        self.0.now()
    }
}

/// The board's interface configuration, written into BAR0 before the
/// firmware starts (the firmware reads it once at start, and again every
/// [`RELOAD_EVERY`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetCfg {
    pub mac: [u8; 6],
    pub ip: Ipv4Addr,
    pub netmask: Ipv4Addr,
    pub gateway: Option<Ipv4Addr>,
    pub mtu: u16,
}

/// How often the running firmware re-reads BAR0's interface configuration
/// (6 accesses), so a driver's `Context::configure` takes effect.
pub const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// Writes `cfg` into BAR0 (`MAC_*`, `IPV4_*`, `MTU`) over the bridge and
/// enables the datapath (`CTRL_ENABLE`), so the firmware answers ARP and
/// ping before any driver opens the device (a driver's `Context::open`
/// resets it and configures it again).
pub fn write_net_cfg(bus: &UdpBus, cfg: &NetCfg) -> Result<(), UdpBusError> {
    let m = cfg.mac;
    bus.mmio_write(csr::MAC_LO, u32::from_le_bytes([m[0], m[1], m[2], m[3]]))?;
    bus.mmio_write(csr::MAC_HI, u32::from_le_bytes([m[4], m[5], 0, 0]))?;
    bus.mmio_write(csr::IPV4_ADDR, u32::from(cfg.ip))?;
    bus.mmio_write(csr::IPV4_NETMASK, u32::from(cfg.netmask))?;
    bus.mmio_write(csr::IPV4_GATEWAY, cfg.gateway.map_or(0, u32::from))?;
    bus.mmio_write(csr::MTU, cfg.mtu as u32)?;
    bus.mmio_write(csr::CTRL, csr::CTRL_ENABLE)?;
    Ok(())
}

/// Runs the firmware over `bus` until `stop`: `Firmware::new` (reads the
/// interface configuration and the clock), then `poll` in a loop with
/// `gap` between polls (the bridge is stop and wait: the gap leaves the
/// link to the driver and lowers the idle load; 0 is allowed, the bus's
/// turns are FIFO anyway), and `reload_config` every [`RELOAD_EVERY`]. The
/// first poll reads `MBOX_CMD`, which raises BAR0 `STATUS_READY` for the
/// driver.
pub fn run_firmware(
    bus: Arc<UdpBus>,
    config: Config,
    stats: Arc<FwStats>,
    gap: Duration,
    stop: &AtomicBool,
) {
    let regs = BridgeRegs::new(bus, stats.clone());
    let mut hal = PortHal::new(regs);
    // The board's core profile is smaller than the co-simulation core's
    // (hw/src/profile.rs): the page list shrinks to the device's, and a
    // firmware build with more table entries than the device is an error.
    let mut config = config;
    if let Err(e) = hal.limits().fit(&HOST_FW_CAPS, &mut config) {
        panic!("the firmware does not fit the device: {e}");
    }
    let mut fw: Box<HostFirmware> = Box::new(Firmware::new(hal, config));
    let mut reloaded = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        fw.poll();
        stats.polls.fetch_add(1, Ordering::Relaxed);
        if !gap.is_zero() {
            std::thread::sleep(gap);
        }
        if reloaded.elapsed() >= RELOAD_EVERY {
            fw.reload_config();
            reloaded = Instant::now();
        }
    }
}

/// Instruction memory of the ECPIX-5 top's CPU (`Rv32Fw`, `firmware/rnic-fw.x`).
pub const CPU_IMEM_BYTES: usize = 128 << 10;

/// Why an image was not loaded.
#[derive(Debug)]
pub enum LoadError<E> {
    /// The ELF is not an image the core runs (`rnic_fw::image::load_elf`).
    Image(String),
    /// A BAR0 write failed.
    Bus(E),
}

impl<E: std::fmt::Display> std::fmt::Display for LoadError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Image(e) => write!(f, "firmware image: {e}"),
            LoadError::Bus(e) => write!(f, "loading the CPU over BAR0: {e}"),
        }
    }
}

/// The instruction-memory words of the firmware ELF `elf` (entry 0, no
/// compressed instructions, within [`CPU_IMEM_BYTES`]).
pub fn cpu_image(elf: &[u8]) -> Result<Vec<u32>, String> {
    let (words, entry) = rnic_fw::image::load_elf(elf, CPU_IMEM_BYTES)?;
    if entry != 0 {
        return Err(format!("entry {entry:#x}, the core starts at 0"));
    }
    Ok(words)
}

/// Loads `words` into the ECPIX-5 top's CPU and starts it, through the
/// top's BAR0 registers written with `mmio_write` (offset, value):
/// `CPU_CTL.HOLD` = 1 (the CPU in reset), `CPU_LOAD_ADDR` = 0, each word to
/// `CPU_LOAD_DATA` (which advances the address), then `CPU_CTL` = 0 (the CPU
/// boots from 0 and takes the firmware port). A failed write stops the load
/// with the CPU still held, so a half-loaded image never runs.
pub fn load_cpu_image<E>(
    mut mmio_write: impl FnMut(u32, u32) -> Result<(), E>,
    words: &[u32],
) -> Result<(), LoadError<E>> {
    if words.len() * 4 > CPU_IMEM_BYTES {
        return Err(LoadError::Image(format!(
            "{} octets, the instruction memory holds {CPU_IMEM_BYTES}",
            words.len() * 4
        )));
    }
    let mut w = |off, v| mmio_write(off, v).map_err(LoadError::Bus);
    w(csr::CPU_CTL, csr::CPU_CTL_HOLD)?;
    w(csr::CPU_LOAD_ADDR, 0)?;
    for &word in words {
        w(csr::CPU_LOAD_DATA, word)?;
    }
    w(csr::CPU_CTL, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The register sequence the top's `FwPortOwner` expects (its own
    /// tests and sim/verilator-board/tests/board_cpu.rs check the RTL side).
    #[test]
    fn load_holds_loads_from_zero_and_releases() {
        let mut log = Vec::new();
        load_cpu_image(
            |o, v| {
                log.push((o, v));
                Ok::<(), ()>(())
            },
            &[0x1111, 0x2222],
        )
        .unwrap();
        assert_eq!(
            log,
            [
                (csr::CPU_CTL, 1),
                (csr::CPU_LOAD_ADDR, 0),
                (csr::CPU_LOAD_DATA, 0x1111),
                (csr::CPU_LOAD_DATA, 0x2222),
                (csr::CPU_CTL, 0)
            ]
        );
    }

    /// A failed write leaves the CPU held: nothing after it is written.
    #[test]
    fn a_failed_write_leaves_the_cpu_held() {
        let mut log = Vec::new();
        let r = load_cpu_image(
            |o, v| {
                log.push((o, v));
                if log.len() == 4 {
                    Err("timeout")
                } else {
                    Ok(())
                }
            },
            &[1, 2, 3],
        );
        assert!(matches!(r, Err(LoadError::Bus("timeout"))));
        assert_eq!(log.len(), 4);
        assert_eq!(log[0], (csr::CPU_CTL, csr::CPU_CTL_HOLD));
        assert!(!log.contains(&(csr::CPU_CTL, 0)));
        let big = vec![0u32; CPU_IMEM_BYTES / 4 + 1];
        assert!(matches!(
            load_cpu_image(|_, _| Ok::<(), ()>(()), &big),
            Err(LoadError::Image(_))
        ));
    }

    /// An image the core cannot start is refused before any write.
    #[test]
    fn cpu_image_refuses_a_foreign_file() {
        assert!(cpu_image(b"not an ELF").is_err());
    }

    /// The firmware's state, as a soft CPU would hold it in data memory
    /// (docs/firmware.md "Departure from DESIGN"): it must fit the RISC-V
    /// image's 64 KiB DMEM (`firmware/rnic-fw.x`) with room for the stack
    /// (on this 64-bit host; the rv32 build is a little smaller).
    #[test]
    fn firmware_state_fits_the_images_data_memory() {
        let n = core::mem::size_of::<HostFirmware>();
        eprintln!("Firmware state: {n} octets");
        assert!(n > 1024 && n < 48 * 1024, "{n} octets");
    }
}
