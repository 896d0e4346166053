//! The `Bus`: the driver's only window to the device and to DMA-able memory.
//!
//! A backend provides 32-bit MMIO at BAR0 offsets (`rnic_wire::abi::csr`),
//! memory the device can reach by DMA (a CPU-side view plus its bus
//! address), an interrupt wait and a clock. The co-simulator implements it
//! over a Verilator node and its sparse host memory; a VFIO backend would map
//! BAR0 and pin IOMMU-mapped pages. Callers never see which.
//!
//! Everything that needs `unsafe` (volatile MMIO, raw pointers into mapped
//! memory, memory barriers) lives inside a backend; the driver itself has
//! none. The methods take `&self` so verbs objects can share one bus; a
//! backend uses interior mutability (or is inherently shared, like MMIO).
//!
//! Ordering contract (what a backend must guarantee):
//! * [`Bus::write32`] is ordered after every earlier [`DmaMem::write`] from the
//!   same thread (a release barrier before the MMIO store, e.g. `wmb()`), so a
//!   doorbell never overtakes the WQE it announces.
//! * Each [`DmaMem::read`] is a fresh read of memory the device may be
//!   writing (volatile, followed by an acquire barrier), so reading a CQE's
//!   owner octet in one call and its body in a later call sees the body the
//!   device wrote before the owner octet.

use core::time::Duration;

/// Why the bus could not do something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BusError {
    /// No DMA-able memory left (or the size/alignment cannot be served).
    OutOfMemory,
    /// An access outside a DMA buffer (the driver checks first; a backend
    /// still refuses rather than touching other memory).
    OutOfBounds,
    /// The device is gone (surprise removal, simulator stopped).
    Gone,
}

impl core::fmt::Display for BusError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            BusError::OutOfMemory => "no DMA-able memory",
            BusError::OutOfBounds => "access outside a DMA buffer",
            BusError::Gone => "device gone",
        })
    }
}

impl std::error::Error for BusError {}

/// A buffer of DMA-able memory: contiguous in bus address space, with a
/// CPU-side view reached through `read`/`write`. Dropping it returns the
/// memory to the backend (the driver drops rings only after the device has
/// been told to forget them).
pub trait DmaMem {
    /// Bus address of the first octet (what the device is given).
    fn bus_addr(&self) -> u64;
    /// The address the CPU uses for the first octet. It is the virtual
    /// address a memory region registered over this buffer starts at
    /// (SGEs and tagged offsets are virtual addresses, `abi::tpt`). A backend
    /// without a CPU mapping (the co-simulator) returns the bus address.
    fn cpu_addr(&self) -> u64;
    /// Length in octets.
    fn len(&self) -> usize;
    /// Whether the buffer is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `buf.len()` octets at `offset` out of the buffer.
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), BusError>;
    /// Copies `data` into the buffer at `offset`.
    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BusError>;
}

/// MMIO, DMA memory, interrupts and time.
pub trait Bus {
    /// The backend's DMA buffer.
    type Dma: DmaMem;

    /// Reads the 32-bit register at BAR0 octet offset `offset` (4-aligned).
    fn read32(&self, offset: u32) -> u32;
    /// Writes the 32-bit register at `offset` (ordered after earlier DMA
    /// memory writes, see the module docs).
    fn write32(&self, offset: u32, value: u32);
    /// Allocates `len` octets of zeroed DMA-able memory whose bus address is
    /// a multiple of `align` (a power of two).
    fn alloc_dma(&self, len: usize, align: usize) -> Result<Self::Dma, BusError>;
    /// Waits until the device raises an interrupt or `timeout` passes;
    /// returns whether an interrupt came. Spurious wake-ups are allowed (the
    /// driver re-checks its rings). In co-simulation this is where simulated
    /// time advances.
    fn wait_interrupt(&self, timeout: Duration) -> bool;
    /// A monotonic clock (simulated time in co-simulation) for timeouts.
    fn now(&self) -> Duration;
}
