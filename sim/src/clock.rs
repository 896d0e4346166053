//! What a clock of the co-simulation stands for.
//!
//! The RTL counts clocks; the seconds a clock lasts, the octets the link
//! carries in one and the clocks a host-memory round trip takes are the
//! co-simulation's to choose. Two settings:
//!
//! * [`Timing::DATAPATH`]: the 64-bit datapath at 156.25 MHz behind a
//!   10 Gb/s port (DESIGN.md §4; 8 octets a clock), the default of every
//!   run and test;
//! * [`Timing::BOARD`]: the ECPIX-5 board, its core clock 62.5 MHz
//!   (`rnic_hw::profile::BOARD`) behind its 1 Gb/s RGMII port (2 octets a
//!   clock).
//!
//! The RTL is the same in both (the co-simulation's profile); only what
//! the link, the DMA server, the firmware's time and the reports make of a
//! clock changes. The firmware reads the core clock from the port's
//! `CLOCK_KHZ`, which the RTL bakes in (156,250 in the co-simulation's
//! profile), so under another timing the node answers that read with this
//! timing's clock ([`crate::fw_hal::FwNode::set_clock_khz`]).

use std::time::Duration;

/// A core clock and the port rate behind it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Core clock, kHz.
    pub clock_khz: u32,
    /// The Ethernet port's bit rate, Mb/s.
    pub port_mbps: u32,
}

impl Timing {
    /// 156.25 MHz behind 10 Gb/s.
    pub const DATAPATH: Timing = Timing {
        clock_khz: 156_250,
        port_mbps: 10_000,
    };
    /// The ECPIX-5 board: 62.5 MHz behind 1 Gb/s.
    pub const BOARD: Timing = Timing {
        clock_khz: 62_500,
        port_mbps: 1_000,
    };

    /// The clock in MHz.
    pub fn mhz(&self) -> f64 {
        self.clock_khz as f64 / 1e3
    }

    /// Picoseconds a clock (6,400 at 156.25 MHz, 16,000 at 62.5 MHz).
    pub const fn cycle_ps(&self) -> u64 {
        1_000_000_000 / self.clock_khz as u64
    }

    /// The time of `cycles` clocks.
    pub const fn time(&self, cycles: u64) -> Duration {
        Duration::from_nanos(cycles * self.cycle_ps() / 1000)
    }

    /// Microseconds of `cycles` clocks.
    pub fn us(&self, cycles: u64) -> f64 {
        cycles as f64 * 1e3 / self.clock_khz as f64
    }

    /// Clocks in `ns` nanoseconds, rounded down.
    pub const fn cycles_ns(&self, ns: u64) -> u64 {
        ns * self.clock_khz as u64 / 1_000_000
    }

    /// Clocks in a microsecond, rounded down (156 at 156.25 MHz).
    pub const fn cycles_per_us(&self) -> u64 {
        self.clock_khz as u64 / 1000
    }

    /// The port's rate in Gb/s.
    pub fn port_gbps(&self) -> f64 {
        self.port_mbps as f64 / 1e3
    }

    /// Octets the port moves in a clock (8 at 10 Gb/s and 156.25 MHz, 2 at
    /// 1 Gb/s and 62.5 MHz): the link model's rate.
    pub fn port_octets_per_cycle(&self) -> f64 {
        self.port_mbps as f64 * 1e3 / 8.0 / self.clock_khz as f64
    }

    /// Gb/s of `octets` moved in `cycles` clocks.
    pub fn gbps(&self, octets: u64, cycles: u64) -> f64 {
        if cycles == 0 {
            0.0
        } else {
            octets as f64 * 8.0 / (cycles as f64 * self.cycle_ps() as f64 / 1000.0)
        }
    }
}

impl Default for Timing {
    fn default() -> Self {
        Timing::DATAPATH
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datapath_is_156_25_mhz_behind_10_gbps() {
        let t = Timing::DATAPATH;
        assert_eq!(t.cycle_ps(), 6400);
        assert_eq!(t.port_octets_per_cycle(), 8.0);
        // 500 ns = 78.125 clocks, 250 ns = 39.06
        assert_eq!(t.cycles_ns(500), 78);
        assert_eq!(t.cycles_ns(250), 39);
        assert_eq!(t.cycles_per_us(), 156);
        assert_eq!(t.time(156_250), Duration::from_millis(1));
    }

    #[test]
    fn board_is_62_5_mhz_behind_1_gbps() {
        let t = Timing::BOARD;
        assert_eq!(t.cycle_ps(), 16_000);
        assert_eq!(t.port_octets_per_cycle(), 2.0);
        assert_eq!(t.cycles_ns(500), 31);
        assert_eq!(t.cycles_per_us(), 62);
        assert!((t.us(625) - 10.0).abs() < 1e-9);
        // 1,500 octets in 750 clocks (12 µs) is 1 Gb/s
        assert!((t.gbps(1500, 750) - 1.0).abs() < 1e-9);
    }
}
