//! `rnic-board-host`: the rnic firmware (`rnic_fw::Firmware`) run on the
//! host against a Versa-5G board, over the UDP bridge's firmware window
//! (`FW_READ`/`FW_WRITE`, docs/bridge.md "Firmware window").
//!
//! The board has no soft CPU (docs/firmware.md "Departure from DESIGN"):
//! the firmware's register-level [`Hal`](rnic_fw::Hal) is
//! [`rnic_fw::port_hal::PortHal`] — the same one the RISC-V image uses —
//! over [`BridgeRegs`], one bridge request per register access. The
//! driver shares the same [`UdpBus`] ([`SharedBus`]): the board knows one
//! host, the one `UdpBus` serves the device's DMA from its memory, and its
//! stop-and-wait request lock interleaves the driver's BAR0 accesses with
//! the firmware's port accesses.
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

#[cfg(test)]
mod tests {
    use super::*;

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
