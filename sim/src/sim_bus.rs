//! [`SimBus`]: the driver's [`Bus`] over a co-simulated node (docs/sim.md).
//!
//! * `write32`: one clock with `csr_valid`/`csr_write` on the node's BAR0;
//! * `read32`: `csr_valid` for one clock, then clocks the node until
//!   `csr_rvalid`, at most [`SimBus::read_limit`] clocks; `0xFFFF_FFFF` when
//!   it runs out (the driver turns that into a typed error); the value is
//!   returned once every DMA write the device made before the answer has
//!   landed (PCIe: a read completion does not pass posted writes);
//! * `alloc_dma`: from the node's [`crate::host_mem::HostMemory`], made
//!   DMA-able (bus address = CPU view); buffer reads and writes take no clock;
//!   dropping a buffer revokes its DMA range;
//! * `wait_interrupt(t)`: runs the whole [`World`] (every node's firmware
//!   polled between clocks, DMA servers, the link) round by round until this
//!   node's `irq` is high or `t` of simulated time passed (at least one round);
//! * `now()`: this node's clock × the world's clock period (6.4 ns at
//!   156.25 MHz, `crate::clock::Timing`).
//!
//! The firmware reads the interface configuration once at start; a write of
//! `CTRL` (the driver's `configure` ends with it) makes it re-read it
//! (`Firmware::reload_config`), standing in for a config-change notice the
//! firmware port does not have; the image on the RISC-V core re-reads it
//! after every poll by itself.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use rnic_driver::bus::{Bus, BusError, DmaMem};
use rnic_driver::context::Options;
use rnic_wire::abi::csr;

use crate::fw_hal::FwNode;
use crate::node::World;

/// Default [`SimBus::read_limit`], clocks.
pub const READ_LIMIT: u64 = 64;
/// Mailbox timeout for the driver in co-simulation: about 1 ms simulated.
pub const MAILBOX_TIMEOUT: Duration = Duration::from_millis(1);

/// Driver options for co-simulation ([`MAILBOX_TIMEOUT`]).
pub fn driver_options() -> Options {
    Options {
        mailbox_timeout: MAILBOX_TIMEOUT,
        ..Options::default()
    }
}

/// The driver's bus on node `idx` of a shared [`World`].
pub struct SimBus {
    world: Rc<RefCell<World>>,
    hw: Rc<RefCell<FwNode>>,
    idx: usize,
    /// Clocks a BAR0 read may wait for `csr_rvalid`.
    pub read_limit: u64,
}

impl SimBus {
    pub fn new(world: Rc<RefCell<World>>, idx: usize) -> Self {
        let hw = world.borrow().nodes[idx].hw.clone();
        SimBus {
            world,
            hw,
            idx,
            read_limit: READ_LIMIT,
        }
    }

    /// The world this bus runs.
    pub fn world(&self) -> &Rc<RefCell<World>> {
        &self.world
    }

    /// The node's model and memory.
    pub fn hw(&self) -> &Rc<RefCell<FwNode>> {
        &self.hw
    }

    /// The node's clock.
    pub fn cycle(&self) -> u64 {
        self.hw.borrow().core.cycle()
    }
}

impl Bus for SimBus {
    type Dma = SimDma;

    fn read32(&self, offset: u32) -> u32 {
        let mut n = self.hw.borrow_mut();
        n.core.set_csr_valid(1);
        n.core.set_csr_write(0);
        n.core.set_csr_addr(offset as u64);
        n.tick();
        n.core.set_csr_valid(0);
        for _ in 0..self.read_limit {
            if n.core.get_csr_rvalid() != 0 {
                let v = n.core.get_csr_rdata() as u32;
                // PCIe ordering: a read completion does not pass the
                // device's posted writes sent before it, so the host sees
                // the answer only once those writes are in its memory (a
                // CTRL_RESET read as 0 means the reset's last write landed).
                let taken = n.dma.writes_taken();
                while n.dma.writes_landed() < taken {
                    n.tick();
                }
                return v;
            }
            n.tick();
        }
        u32::MAX
    }

    fn write32(&self, offset: u32, value: u32) {
        self.hw.borrow_mut().csr_write(offset, value);
        if offset == csr::CTRL {
            if let Some(fw) = self.world.borrow_mut().nodes[self.idx].fw.native() {
                fw.reload_config();
            }
        }
    }

    fn alloc_dma(&self, len: usize, align: usize) -> Result<SimDma, BusError> {
        let addr = self
            .hw
            .borrow_mut()
            .mem
            .alloc_dma(len as u64, align as u64)
            .map_err(|_| BusError::OutOfMemory)?;
        Ok(SimDma {
            hw: self.hw.clone(),
            addr,
            len,
        })
    }

    fn wait_interrupt(&self, timeout: Duration) -> bool {
        let end = self.now().saturating_add(timeout);
        loop {
            self.world.borrow_mut().round();
            if self.hw.borrow().core.get_irq() != 0 {
                // An interrupt is a posted write ordered behind the device's
                // earlier DMA writes (PCIe ordering), so the host never sees
                // it before the EQ entry or CQE that caused it: let those
                // land (the DMA server's write latency) before returning.
                while self.hw.borrow().dma.writes_pending() {
                    self.world.borrow_mut().round();
                }
                return true;
            }
            if self.now() >= end {
                return false;
            }
        }
    }

    fn now(&self) -> Duration {
        let timing = self.world.borrow().timing;
        timing.time(self.cycle())
    }
}

/// A DMA-able buffer in a node's host memory.
pub struct SimDma {
    hw: Rc<RefCell<FwNode>>,
    addr: u64,
    len: usize,
}

impl DmaMem for SimDma {
    fn bus_addr(&self) -> u64 {
        self.addr
    }
    fn cpu_addr(&self) -> u64 {
        self.addr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), BusError> {
        if offset.checked_add(buf.len()).is_none_or(|e| e > self.len) {
            return Err(BusError::OutOfBounds);
        }
        self.hw
            .borrow()
            .mem
            .read(self.addr + offset as u64, buf)
            .map_err(|_| BusError::OutOfBounds)
    }
    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BusError> {
        if offset.checked_add(data.len()).is_none_or(|e| e > self.len) {
            return Err(BusError::OutOfBounds);
        }
        self.hw
            .borrow_mut()
            .mem
            .write(self.addr + offset as u64, data)
            .map_err(|_| BusError::OutOfBounds)
    }
}

impl Drop for SimDma {
    fn drop(&mut self) {
        if let Ok(mut n) = self.hw.try_borrow_mut() {
            let _ = n.mem.revoke_dma(self.addr, self.len as u64);
        }
    }
}
