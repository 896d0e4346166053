//! The Verilated ECPIX-5 top `rnic_ecpix5` (`hw/generated/rnic_ecpix5.v`:
//! PLL, reset, the one RGMII port shared by the core and the UDP host
//! bridge, MDIO, LEDs and the whole core), driven at its pins: the raw
//! model [`Ecpix5`] and [`Ecpix5Rig`], the board with its clocks and one
//! RGMII PHY ([`Phy`]), run by the same event loop as [`crate::Rig`].

use std::collections::VecDeque;

use crate::{Phy, CLK_HALF_FS};

/// Inputs of the ECPIX-5 top (numbers as in `csrc/ecpix5_shim.cpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EIn {
    Clk100 = 0,
    RstN,
    RgmiiRxc,
    RgmiiRxCtl,
    RgmiiRxd,
}

/// Outputs and internal signals (numbers as in `csrc/ecpix5_shim.cpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ESig {
    LedR = 32,
    LedG,
    LedB,
    RgmiiTxc,
    RgmiiTxCtl,
    RgmiiTxd,
    PhyRstN,
    PhyMdc,
    /// The port's receive stream after the CDC FIFO (before the split).
    RxData = 64,
    RxKeep,
    RxLast,
    RxValid,
    RxFcsBad,
    /// The split's output to the core (`mac_rx_*`).
    CoreData,
    CoreKeep,
    CoreLast,
    CoreValid,
    CoreFcsBad,
    /// The split's output to the bridge (`rx_*`).
    BridgeData,
    BridgeKeep,
    BridgeLast,
    BridgeValid,
    BridgeFcsBad,
    SplitOverflow,
    CoreCntRxOk,
    CoreCntRxBadFcs,
    BridgeCntRxOk,
    BridgeCntRxDrop,
    BridgeCntNak,
    BridgeCntTxFrames,
    BridgeHostKnown,
    TxCntFrames,
    TxCntUnderrun,
    CoreClk,
}

crate::verilated_top! {
    /// One Verilated `rnic_ecpix5` (own Verilator context; `Send`, not
    /// `Sync`).
    Ecpix5(RawEcpix5, EIn, ESig): vecpix5_new, vecpix5_free, vecpix5_eval, vecpix5_set,
        vecpix5_get, vecpix5_vcd_open, vecpix5_vcd_dump
}

/// The ECPIX-5 top, its clock and its PHY, run by an event loop (time in
/// fs), as [`crate::Rig`] runs the Versa-5G: `clk100` driven at 125 MHz
/// (the PLL model passes it through as the transmit clock and halves it
/// for the core clock), the PHY's `rxc` with its own period and phase.
pub struct Ecpix5Rig {
    pub board: Ecpix5,
    pub phy: Phy,
    /// Simulated time, fs.
    pub now: u64,
    /// Core clock (62.5 MHz) rising edges so far.
    pub core_cycles: u64,
    /// Model evaluations so far.
    pub evals: u64,
    /// Frames the receive split gave the core / the bridge, in order:
    /// (octets, fcs_bad), collected on the core clock.
    pub to_core: VecDeque<(Vec<u8>, bool)>,
    pub to_bridge: VecDeque<(Vec<u8>, bool)>,
    bufs: [Vec<u8>; 2],
    vcd: bool,
    vcd_last: Option<u64>,
    core_q: u8,
    core_next: u64,
    phy_q: u8,
    phy_next: u64,
}

impl Ecpix5Rig {
    /// The board with the PHY's receive clock `ppm` off nominal, the reset
    /// button released, run until out of reset.
    pub fn new(ppm: i64) -> Self {
        let mut board = Ecpix5::new();
        board.set(EIn::RstN, 1);
        board.eval();
        let mut r = Ecpix5Rig {
            board,
            phy: Phy::new(ppm),
            now: 0,
            core_cycles: 0,
            evals: 1,
            to_core: VecDeque::new(),
            to_bridge: VecDeque::new(),
            bufs: [Vec::new(), Vec::new()],
            vcd: false,
            vcd_last: None,
            core_q: 0,
            core_next: CLK_HALF_FS / 2,
            phy_q: 0,
            phy_next: CLK_HALF_FS * 3 / 8 + 1_234,
        };
        r.run_core_cycles(64);
        r
    }

    /// [`Ecpix5::trace_vcd`] to `$BOARD_VCD/<name>.vcd` when `BOARD_VCD`
    /// names a directory; nothing otherwise.
    pub fn trace_from_env(&mut self, name: &str) {
        if let Some(dir) = std::env::var_os("BOARD_VCD") {
            let path = std::path::Path::new(&dir).join(format!("{name}.vcd"));
            match self.board.trace_vcd(&path) {
                Ok(()) => {
                    self.vcd = true;
                    eprintln!("VCD: {}", path.display())
                }
                Err(e) => eprintln!("VCD not written: {e}"),
            }
        }
    }

    fn eval(&mut self) {
        self.board.eval();
        self.evals += 1;
        if self.vcd {
            let t = match self.vcd_last {
                Some(l) if self.now / 1000 <= l => l + 1,
                _ => self.now / 1000,
            };
            self.vcd_last = Some(t);
            self.board.dump(t);
        }
    }

    /// Runs `n` core clock cycles.
    pub fn run_core_cycles(&mut self, n: u64) {
        let end = self.core_cycles + n;
        while self.core_cycles < end {
            self.step();
        }
    }

    /// Runs until `done(self)` or `max_cycles` core cycles; returns whether
    /// `done` became true.
    pub fn run_until(
        &mut self,
        max_cycles: u64,
        mut done: impl FnMut(&mut Ecpix5Rig) -> bool,
    ) -> bool {
        let end = self.core_cycles + max_cycles;
        while self.core_cycles < end {
            if done(self) {
                return true;
            }
            let c = self.core_cycles;
            while self.core_cycles == c {
                self.step();
            }
        }
        done(self)
    }

    /// One event (the earliest one).
    pub fn step(&mut self) {
        if !self.phy.running() && self.phy.idle() {
            while self.phy_next < self.core_next {
                self.phy_next += self.phy.half_fs / 2;
                self.phy_q = (self.phy_q + 1) % 4;
            }
        } else if self.phy_next < self.core_next {
            self.now = self.phy_next;
            self.phy_event();
            return;
        }
        self.now = self.core_next;
        self.core_event();
    }

    fn core_event(&mut self) {
        let q = self.core_q;
        self.core_q = (q + 1) % 4;
        self.core_next += CLK_HALF_FS / 2;
        match q {
            0 => {
                let core_was = self.board.get(ESig::CoreClk);
                self.board.set(EIn::Clk100, 1);
                self.eval();
                if core_was == 0 && self.board.get(ESig::CoreClk) != 0 {
                    self.core_cycles += 1;
                    self.collect_streams();
                }
            }
            1 => {
                let (d, c) = self.tx_pins();
                self.phy.sample_lo(d, c);
            }
            2 => {
                self.board.set(EIn::Clk100, 0);
                self.eval();
            }
            _ => {
                let (d, c) = self.tx_pins();
                let now = self.now;
                self.phy.sample_hi(d, c, now);
            }
        }
    }

    fn tx_pins(&self) -> (u64, u64) {
        (
            self.board.get(ESig::RgmiiTxd),
            self.board.get(ESig::RgmiiTxCtl),
        )
    }

    fn collect_streams(&mut self) {
        let sigs = [
            (
                ESig::CoreValid,
                ESig::CoreData,
                ESig::CoreKeep,
                ESig::CoreLast,
                ESig::CoreFcsBad,
            ),
            (
                ESig::BridgeValid,
                ESig::BridgeData,
                ESig::BridgeKeep,
                ESig::BridgeLast,
                ESig::BridgeFcsBad,
            ),
        ];
        for (p, sig) in sigs.into_iter().enumerate() {
            if let Some(frame) = crate::take_beat(|x| self.board.get(x), sig, &mut self.bufs[p]) {
                if p == 0 {
                    self.to_core.push_back(frame);
                } else {
                    self.to_bridge.push_back(frame);
                }
            }
        }
    }

    fn phy_event(&mut self) {
        let q = self.phy_q;
        self.phy_q = (q + 1) % 4;
        self.phy_next += self.phy.half_fs / 2;
        match q {
            0 => {
                let (d, c) = self.phy.next_rise();
                self.set_if_changed(d, c);
            }
            1 => {
                self.board.set(EIn::RgmiiRxc, 1);
                self.eval();
            }
            2 => {
                let (d, c) = self.phy.next_fall();
                self.set_if_changed(d, c);
            }
            _ => {
                self.board.set(EIn::RgmiiRxc, 0);
                self.eval();
            }
        }
    }

    fn set_if_changed(&mut self, d: u64, c: u64) {
        if self.board.get_in(EIn::RgmiiRxd) != d || self.board.get_in(EIn::RgmiiRxCtl) != c {
            self.board.set(EIn::RgmiiRxd, d);
            self.board.set(EIn::RgmiiRxCtl, c);
            self.eval();
        }
    }
}
