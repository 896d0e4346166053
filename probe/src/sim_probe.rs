//! A probe-rs probe on the co-simulated core's JTAG pins.
//!
//! [`SimProbe`] is a bit-banging JTAG probe (`RawJtagIo`; probe-rs builds
//! JTAG register access, the scan-chain walk and the RISC-V DTM on top of
//! it) whose pins are a [`JtagCable`] into a node's [`rnic_sim::jtag`]
//! port. probe-rs takes it as any probe (`Probe::new`), so a program or a
//! test attaches to the firmware's core with probe-rs's own RISC-V support
//! and the target description of [`crate::target`].
//!
//! Bits are collected until probe-rs reads the captured TDO bits; then the
//! batch goes down the cable and this thread waits while the simulation
//! plays it (8 node clocks per TCK cycle). The world must be stepped by
//! another thread meanwhile.

use bitvec::vec::BitVec;
use probe_rs::architecture::riscv::communication_interface::{RiscvError, RiscvInterfaceBuilder};
use probe_rs::architecture::riscv::dtm::jtag_dtm::JtagDtmBuilder;
use probe_rs::probe::{
    AutoImplementJtagAccess, DebugProbe, DebugProbeError, JtagAccess, JtagDriverState, RawJtagIo,
    WireProtocol,
};
use rnic_sim::jtag::{JtagBit, JtagCable};

/// The probe: a cable into a node's JTAG port, and the state probe-rs
/// keeps of the TAP.
pub struct SimProbe {
    cable: JtagCable,
    jtag: JtagDriverState,
    /// TCK cycles not yet played.
    pending: Vec<JtagBit>,
    /// TDO bits played and not yet read by probe-rs.
    captured: BitVec,
    speed_khz: u32,
}

impl SimProbe {
    pub fn new(cable: JtagCable) -> Self {
        SimProbe {
            cable,
            jtag: JtagDriverState::default(),
            pending: Vec::new(),
            captured: BitVec::new(),
            // 1/8 of the 156.25 MHz co-simulation clock; informational.
            speed_khz: 19_531,
        }
    }

    fn flush(&mut self) -> Result<(), DebugProbeError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let bits = std::mem::take(&mut self.pending);
        let tdo = self
            .cable
            .shift(bits)
            .map_err(|e| DebugProbeError::Other(e.to_string()))?;
        self.captured.extend(tdo);
        Ok(())
    }
}

impl std::fmt::Debug for SimProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimProbe")
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl RawJtagIo for SimProbe {
    fn shift_bit(&mut self, tms: bool, tdi: bool, capture: bool) -> Result<(), DebugProbeError> {
        self.jtag.state.update(tms);
        self.pending.push(JtagBit { tms, tdi, capture });
        Ok(())
    }

    fn read_captured_bits(&mut self) -> Result<BitVec, DebugProbeError> {
        self.flush()?;
        Ok(std::mem::take(&mut self.captured))
    }

    fn state_mut(&mut self) -> &mut JtagDriverState {
        &mut self.jtag
    }

    fn state(&self) -> &JtagDriverState {
        &self.jtag
    }
}

impl AutoImplementJtagAccess for SimProbe {}

impl DebugProbe for SimProbe {
    fn get_name(&self) -> &str {
        "rnic co-simulation JTAG"
    }

    fn speed_khz(&self) -> u32 {
        self.speed_khz
    }

    fn set_speed(&mut self, _speed_khz: u32) -> Result<u32, DebugProbeError> {
        // TCK is tied to the node's clock (1/8 of it).
        Ok(self.speed_khz)
    }

    fn attach(&mut self) -> Result<(), DebugProbeError> {
        Ok(())
    }

    fn detach(&mut self) -> Result<(), probe_rs::Error> {
        self.flush()?;
        Ok(())
    }

    fn target_reset(&mut self) -> Result<(), DebugProbeError> {
        // No system reset pin on the cable: resets go through the debug
        // module (`ndmreset`).
        Err(DebugProbeError::NotImplemented {
            function_name: "target_reset",
        })
    }

    fn target_reset_assert(&mut self) -> Result<(), DebugProbeError> {
        Err(DebugProbeError::NotImplemented {
            function_name: "target_reset_assert",
        })
    }

    fn target_reset_deassert(&mut self) -> Result<(), DebugProbeError> {
        Err(DebugProbeError::NotImplemented {
            function_name: "target_reset_deassert",
        })
    }

    fn select_protocol(&mut self, protocol: WireProtocol) -> Result<(), DebugProbeError> {
        match protocol {
            WireProtocol::Jtag => Ok(()),
            p => Err(DebugProbeError::UnsupportedProtocol(p)),
        }
    }

    fn active_protocol(&self) -> Option<WireProtocol> {
        Some(WireProtocol::Jtag)
    }

    fn into_probe(self: Box<Self>) -> Box<dyn DebugProbe> {
        self
    }

    fn try_as_jtag_probe(&mut self) -> Option<&mut dyn JtagAccess> {
        Some(self)
    }

    fn has_riscv_interface(&self) -> bool {
        true
    }

    fn try_get_riscv_interface_builder<'probe>(
        &'probe mut self,
    ) -> Result<Box<dyn RiscvInterfaceBuilder<'probe> + 'probe>, RiscvError> {
        Ok(Box::new(JtagDtmBuilder::new(self)))
    }
}
