//! The ECP5 boards: an RGMII Ethernet MAC, MDIO, the ECP5 primitives they
//! need, and the board tops `rnic_versa5g` (ECP5 Versa-5G: `rnic_core` + two
//! MACs + status LEDs) and `rnic_ecpix5` (LambdaConcept ECPIX-5: the core
//! and the host bridge sharing one MAC, `eth_share`). `rnic-board-gen`
//! writes `hw/generated/rnic_versa5g.v` and `hw/generated/rnic_ecpix5.v`;
//! `scripts/bitstream.sh` turns one into a bitstream (see `docs/fpga.md`).
//!
//! Clock domains of the Versa-5G top (the ECPIX-5 top has the same with
//! one port):
//! * `core` — 62.5 MHz from the PLL (CLKOS2): `rnic_core`, the UDP bridge,
//!   MDIO, LEDs.
//! * `tx` — 125 MHz from the PLL (CLKOP): both MAC transmitters and the RGMII
//!   output registers, behind an asynchronous FIFO per port from the core
//!   clock (`tx_cdc`).
//! * `rgmii0_rxc`, `rgmii1_rxc` — each PHY's 125 MHz receive clock: the
//!   RGMII input registers and the MAC receivers, up to an asynchronous FIFO
//!   per port into the core clock (`rx_cdc`).
//! * the PLL's 90° copy of the transmit clock (CLKOS), used only to clock
//!   the `TXC` pin.

pub mod cpu_port;
pub mod crc32;
pub mod ecp5;
pub mod ecpix5_top;
pub mod eth_share;
pub mod gen;
pub mod mac_rx;
pub mod mac_tx;
pub mod mdio;
pub mod rgmii;
pub mod rx_cdc;
pub mod tx_cdc;
pub mod udp_bridge;
pub mod versa5g_top;
