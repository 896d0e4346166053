//! `rnic_ecpix5`: the board top for the LambdaConcept ECPIX-5 (85F variant,
//! LFE5UM5G-85F-8BG554I). Port names match `constraints/ecpix5.lpf`.
//!
//! The same blocks as the Versa-5G top (`versa5g_top.rs`) on the board's
//! one Gigabit Ethernet port, which carries both the RDMA traffic and the
//! UDP host bridge:
//!
//! * PLL: `clk100` (the board's 100 MHz oscillator, as on the Versa-5G)
//!   → 62.5 MHz core clock (core, UDP bridge, MDIO, LEDs) and the 125 MHz
//!   transmit clock with its 90° copy for `txc`: the same EHXPLLL
//!   parameters (`ecp5::Pll`, 100 MHz in).
//! * Reset: power-on (16 clocks), the `rst_n` button and PLL lock, combined
//!   and synchronised into each clock domain.
//! * Receive: RGMII → MAC RX (in `rgmii_rxc`) → CDC FIFO → `RxSplit`
//!   (`eth_share.rs`): UDP datagrams to the bridge's port (0x5242) and ARP
//!   requests for the bridge's IPv4 address go to the `UdpBridge`,
//!   everything else to `rnic_core` `mac_rx_*`. ARP: the bridge answers
//!   for its address (10.0.0.2) as on the Versa's port 1; the core's
//!   firmware answers for the RDMA address (BAR0's network configuration,
//!   as on the Versa's port 0). If the host gives the RDMA side the
//!   bridge's address, only the bridge answers ARP requests for it (they
//!   never reach the core), so exactly one reply goes out; replies to the
//!   firmware's own ARP requests always reach the core.
//! * Transmit: the core's `mac_tx_*` (the firmware's raw frames through the
//!   core's MAC merge, and the TX datapath) and the bridge's frames →
//!   `TxArb` (frame by frame, round robin, never two frames' beats
//!   interleaved) → `TxCdc` (store-and-forward per frame) → `MacTx` in the
//!   transmit clock → `RgmiiTx`.
//! * The bridge drives the core's BAR0 (`csr_*`), serves its DMA
//!   (`dma_rd_*`, `dma_wr_*`) and reports `irq`, as on the Versa-5G.
//! * The firmware: `Rv32Fw` (hw/src/cpu, 128 KiB instruction and 64 KiB
//!   data memory) with its JTAG debug module (`Rv32FwDebug`, the TAP on
//!   PMOD P0: `jtag_*`, docs/cpu.md "Debug module") on the core clock, its peripheral bus on the core's
//!   firmware port (`fw_*`) through `CpuPort` (`cpu_port.rs`). The port has
//!   one owner at a time (`FwPortOwner`): the CPU after reset, or, while
//!   `CPU_CTL.HOLD` (BAR0 offset 0xFF_F000, `csr::BOARD_REGS`: the top's
//!   page, never the core's) is set, the bridge's firmware window (the firmware on a
//!   host, docs/bridge.md) with the CPU held in reset. Instruction memory
//!   is loaded through BAR0 too (`CPU_LOAD_ADDR`, `CPU_LOAD_DATA`) while
//!   held; it is empty after configuration.
//!   Board MAC 02:52:42:00:00:02, IPv4 10.0.0.2: fixed (the ECPIX-5 has
//!   no DIP switches; on the Versa-5G these are the defaults with all
//!   switches off).
//! * RGMII delays as on the Versa-5G: the FPGA shifts `txc` by 90° (2 ns,
//!   the PLL's CLKOS), the PHY delays the receive clock. On the ECPIX-5 the
//!   PHY's delays come from its board straps (the LiteX ECPIX-5 target runs
//!   its RGMII PHY with no FPGA receive delay and a 2 ns FPGA transmit
//!   delay), so MDIO writes nothing: `PhyManager::basic` resets the PHY and
//!   polls the standard status register for link (PHY address 0).
//! * LEDs: four RGB LEDs, active low (1 below = lit). LED 0: green
//!   heartbeat (~0.9 Hz; PLL locked, out of reset), red error latch (RX
//!   FIFO overflow or TX underrun since reset). LED 1: green PHY link,
//!   blue bridge host known. LED 2: green core RX activity, blue bridge RX
//!   activity. LED 3: green TX activity, red bad frame seen (recently).

use super::cpu_port::{CpuPort, FwPortOwner};
use super::ecp5::Pll;
use super::eth_share::{RxSplit, TxArb};
use super::mac_tx::MacTx;
use super::mdio::PhyManager;
use super::rgmii::RgmiiTx;
use super::tx_cdc::TxCdc;
use super::udp_bridge::UdpBridge;
use super::versa5g_top::{RxPort, Stretch};
use crate::cpu::{Rv32Fw, Rv32FwDebug};

/// The instruction memory's contents in synthesis: a random pattern that
/// `scripts/bitstream.sh` writes (`ecpbram --generate`, fixed seed) and,
/// after place and route, replaces with the firmware image (`ecpbram`
/// finds each 512-word bit slice of the pattern in the placed block RAMs).
/// Relative to the repository root, where Yosys runs.
pub const IMEM_SEED_HEX: &str = "target/fpga/imem-seed.hex";
use crate::rnic_core::RnicCoreBoard;
use rust_hdl::prelude::*;

/// The bridge's MAC and IPv4 address on the ECPIX-5 (fixed; written out as
/// literals in `update`, which rust-hdl cannot take a Rust constant into).
pub const BOARD_MAC: u64 = 0x0252_4200_0002;
pub const BOARD_IP: u64 = 0x0A00_0002;

#[derive(LogicBlock)]
pub struct Ecpix5Top {
    pub clk100: Signal<In, Clock>,
    pub rst_n: Signal<In, Bit>,
    /// RGB LEDs 0..3, active low.
    pub led_r: Signal<Out, Bits<4>>,
    pub led_g: Signal<Out, Bits<4>>,
    pub led_b: Signal<Out, Bits<4>>,
    pub rgmii_rxc: Signal<In, Clock>,
    pub rgmii_rx_ctl: Signal<In, Bit>,
    pub rgmii_rxd: Signal<In, Bits<4>>,
    pub rgmii_txc: Signal<Out, Bit>,
    pub rgmii_tx_ctl: Signal<Out, Bit>,
    pub rgmii_txd: Signal<Out, Bits<4>>,
    pub phy_mdc: Signal<Out, Bit>,
    pub phy_mdio: Signal<InOut, Bit>,
    pub phy_rst_n: Signal<Out, Bit>,
    /// The CPU's JTAG debug port on PMOD P0 (`cpu::debug`; TCK at most
    /// 7.8 MHz, no TRST).
    pub jtag_tck: Signal<In, Bit>,
    pub jtag_tms: Signal<In, Bit>,
    pub jtag_tdi: Signal<In, Bit>,
    pub jtag_tdo: Signal<Out, Bit>,
    pll: Pll,
    /// The core clock (the PLL's 62.5 MHz output).
    clock: Signal<Local, Clock>,
    /// The transmit clock (the PLL's 125 MHz 0° output): MAC TX and RGMII.
    tx_clock: Signal<Local, Clock>,
    tx_rst: BitSynchronizer,
    txq0: TxCdc,
    tx_err: DFF<Bit>,
    tx_err_sync: BitSynchronizer,
    button: BitSynchronizer,
    por: DFF<Bits<4>>,
    reset: DFF<Bit>,
    heartbeat: DFF<Bits<26>>,
    core: RnicCoreBoard,
    rx0: RxPort,
    split: RxSplit,
    arb: TxArb,
    tx0: MacTx,
    pins: RgmiiTx,
    mdio0: PhyManager,
    mdio0_buf: TristateBuffer<Bit>,
    bridge: UdpBridge,
    cpu: Rv32FwDebug,
    cpu_port: CpuPort,
    fw_owner: FwPortOwner,
    act_core: Stretch,
    act_br: Stretch,
    act_tx: Stretch,
    bad: Stretch,
    err: DFF<Bit>,
    r: Signal<Local, Bits<4>>,
    g: Signal<Local, Bits<4>>,
    b: Signal<Local, Bits<4>>,
}

impl Default for Ecpix5Top {
    fn default() -> Self {
        Self {
            clk100: Default::default(),
            rst_n: Default::default(),
            led_r: Default::default(),
            led_g: Default::default(),
            led_b: Default::default(),
            rgmii_rxc: Default::default(),
            rgmii_rx_ctl: Default::default(),
            rgmii_rxd: Default::default(),
            rgmii_txc: Default::default(),
            rgmii_tx_ctl: Default::default(),
            rgmii_txd: Default::default(),
            phy_mdc: Default::default(),
            phy_mdio: Default::default(),
            phy_rst_n: Default::default(),
            jtag_tck: Default::default(),
            jtag_tms: Default::default(),
            jtag_tdi: Default::default(),
            jtag_tdo: Default::default(),
            pll: Default::default(),
            clock: Default::default(),
            tx_clock: Default::default(),
            tx_rst: Default::default(),
            txq0: Default::default(),
            tx_err: Default::default(),
            tx_err_sync: Default::default(),
            button: Default::default(),
            por: Default::default(),
            reset: Default::default(),
            heartbeat: Default::default(),
            core: Default::default(),
            rx0: Default::default(),
            split: Default::default(),
            arb: Default::default(),
            tx0: Default::default(),
            pins: Default::default(),
            // PHY address 0; 2^20 clocks (16.8 ms at 62.5 MHz) of reset and
            // between polls; MDC = 62.5 MHz / 32 ≈ 1.95 MHz.
            mdio0: PhyManager::basic(0, (1 << 20) - 1, 16),
            mdio0_buf: Default::default(),
            bridge: Default::default(),
            cpu: Rv32FwDebug::with_core(Rv32Fw::default().imem_synthesis_init(IMEM_SEED_HEX)),
            cpu_port: Default::default(),
            fw_owner: Default::default(),
            act_core: Default::default(),
            act_br: Default::default(),
            act_tx: Default::default(),
            bad: Default::default(),
            err: Default::default(),
            r: Default::default(),
            g: Default::default(),
            b: Default::default(),
        }
    }
}

impl Logic for Ecpix5Top {
    #[hdl_gen]
    fn update(&mut self) {
        Signal::<InOut, Bit>::link(&mut self.phy_mdio, &mut self.mdio0_buf.bus);
        self.pll.clkin.next = self.clk100.val();
        self.clock.next = self.pll.clk62.val();
        self.tx_clock.next = self.pll.clk0.val();
        clock!(
            self, clock, core, mdio0, bridge, cpu, cpu_port, fw_owner, split, arb, act_core,
            act_br, act_tx, bad
        );
        clock!(self, tx_clock, tx0);
        dff_setup!(self, clock, por, reset, heartbeat, err);
        dff_setup!(self, tx_clock, tx_err);

        // Reset: power-on counter, button, PLL lock.
        self.button.clock.next = self.pll.clk62.val();
        self.button.sig_in.next = !self.rst_n.val() | !self.pll.locked.val();
        if self.por.q.val() != 15 {
            self.por.d.next = self.por.q.val() + 1;
        }
        self.reset.d.next = (self.por.q.val() != 15) | self.button.sig_out.val();
        self.heartbeat.d.next = self.heartbeat.q.val() + 1;

        self.core.reset.next = self.reset.q.val();
        self.tx_rst.clock.next = self.pll.clk0.val();
        self.tx_rst.sig_in.next = self.reset.q.val();
        self.tx0.reset.next = self.tx_rst.sig_out.val();
        self.txq0.wr_clock.next = self.pll.clk62.val();
        self.txq0.wr_reset.next = self.reset.q.val();
        self.txq0.rd_clock.next = self.pll.clk0.val();
        self.txq0.rd_reset.next = self.tx_rst.sig_out.val();
        self.mdio0.reset.next = self.reset.q.val();
        self.bridge.reset.next = self.reset.q.val();
        self.split.reset.next = self.reset.q.val();
        self.arb.reset.next = self.reset.q.val();

        // Receive: pins → MAC → CDC → split between the bridge and the core.
        self.rx0.rxc.next = self.rgmii_rxc.val();
        self.rx0.rxd.next = self.rgmii_rxd.val();
        self.rx0.rx_ctl.next = self.rgmii_rx_ctl.val();
        self.rx0.core_clock.next = self.pll.clk62.val();
        self.rx0.core_reset.next = self.reset.q.val();
        self.split.board_ip.next = bits::<32>(0x0A00_0002);
        self.split.in_data.next = self.rx0.out_data.val();
        self.split.in_keep.next = self.rx0.out_keep.val();
        self.split.in_last.next = self.rx0.out_last.val();
        self.split.in_valid.next = self.rx0.out_valid.val();
        self.split.in_fcs_bad.next = self.rx0.out_fcs_bad.val();
        self.core.mac_rx_data.next = self.split.core_data.val();
        self.core.mac_rx_keep.next = self.split.core_keep.val();
        self.core.mac_rx_last.next = self.split.core_last.val();
        self.core.mac_rx_valid.next = self.split.core_valid.val();
        self.core.mac_rx_fcs_bad.next = self.split.core_fcs_bad.val();
        self.bridge.rx_data.next = self.split.br_data.val();
        self.bridge.rx_keep.next = self.split.br_keep.val();
        self.bridge.rx_last.next = self.split.br_last.val();
        self.bridge.rx_valid.next = self.split.br_valid.val();
        self.bridge.rx_fcs_bad.next = self.split.br_fcs_bad.val();

        // The direct firmware-side pins are tied off as on the Versa-5G:
        // the firmware reaches the tables, queues and records through the
        // firmware port (`fw_*`, driven by the CPU or the bridge below).
        self.core.ct_wr_valid.next = false;
        self.core.ct_wr_idx.next = 0.into();
        self.core.ct_wr_used.next = false;
        self.core.ct_wr_local_ip.next = 0.into();
        self.core.ct_wr_peer_ip.next = 0.into();
        self.core.ct_wr_local_port.next = 0.into();
        self.core.ct_wr_peer_port.next = 0.into();
        self.core.ct_wr_mode.next = 0.into();
        self.core.ct_wr_mpa.next = 0.into();
        self.core.ct_wr_rcv_nxt.next = 0.into();
        self.core.ct_wr_rcv_wnd.next = 0.into();
        self.core.ct_wr_snd_una.next = 0.into();
        self.core.ct_wr_snd_nxt.next = 0.into();
        self.core.ct_rd_idx.next = 0.into();
        self.core.exc_rd_word.next = 0.into();
        self.core.exc_pop.next = false;
        // The RX ULP path (MPA/DDP/RDMAP placement) is on, as in the
        // co-simulated node (`sim::node`): RDMA-mode payload is placed into
        // host memory through the bridge's DMA (no bring-up echo on this
        // board: it has no DIP switch to select it).
        self.core.rx_ulp_en.next = true;
        self.core.mpa_wr_valid.next = false;
        self.core.mpa_wr_idx.next = 0.into();
        self.core.mpa_wr_seq_start.next = 0.into();
        self.core.qp_wr_valid.next = false;
        self.core.qp_wr_idx.next = 0.into();
        self.core.qp_wr_qpn.next = 0.into();
        self.core.qp_wr_state.next = 0.into();
        self.core.qp_wr_pd.next = 0.into();
        self.core.tpt_wr_en.next = false;
        self.core.tpt_wr_index.next = 0.into();
        self.core.tpt_wr_data.next = 0.into();
        self.core.pbl_wr_en.next = false;
        self.core.pbl_wr_index.next = 0.into();
        self.core.pbl_wr_data.next = 0.into();
        // Placed-segment records are taken as they come, as the co-simulated
        // node does (`sim::fw_hal`): the RDMA Read requester sees each one as
        // it is taken, and a record left untaken stalls the DDP receive path
        // after its first tagged segment.
        self.core.placed_pop.next = self.core.placed_valid.val();
        self.core.ut_ready.next = false;
        self.core.term_pop.next = false;
        // BAR0 is driven by the host bridge, the firmware port by the CPU
        // or the bridge (below).
        // BAR0 STATUS_LINK_UP: the PHY's link, as its MDIO poll reports it.
        self.core.link_up.next = self.mdio0.link.val();
        self.core.raw_tx_ready.next = false;
        self.core.ev_pop.next = false;
        // the firmware's raw frames go into the MAC TX merge (the intended use)
        self.core.fw_raw_to_mac.next = true;
        // BAR0 CTRL_ENABLE gates the datapath (`dev_reset`): no doorbell and
        // no received frame is taken before a host enables the device (the
        // bridge host does as it writes the interface configuration).
        self.core.ctrl_en_gate.next = true;

        // The TX datapath's direct pins (doorbells, raw frames, QP TX
        // context from test rigs) are tied off: doorbells come through
        // BAR0 (the bridge), QP and connection TX contexts through the
        // firmware port, and the MAC TX stream goes to the arbiter (below).
        self.core.db_wr_valid.next = false;
        self.core.db_wr_qpn.next = 0.into();
        self.core.db_wr_value.next = 0.into();
        self.core.fw_tx_data.next = 0.into();
        self.core.fw_tx_keep.next = 0.into();
        self.core.fw_tx_last.next = false;
        self.core.fw_tx_valid.next = false;
        self.core.qp_wr_sq_ring.next = 0.into();
        self.core.qp_wr_sq_log2.next = 0.into();
        self.core.qp_wr_conn.next = 0.into();
        self.core.qp_wr_tx_send_msn.next = 0.into();
        self.core.qp_wr_tx_read_msn.next = 0.into();
        self.core.ct_wr_local_mac.next = 0.into();
        self.core.ct_wr_peer_mac.next = 0.into();
        self.core.ct_wr_mulpdu.next = 0.into();
        self.core.ct_wr_rcv_wscale.next = 0.into();
        self.core.ct_wr_tx_marker_ref.next = 0.into();
        self.core.tx_cq_pop.next = false;
        // TX send state: the peer's window is enforced (the intended use);
        // no connection context from the pins
        self.core.tx_wnd_en.next = true;
        self.core.fast_retx_en.next = true;
        self.core.ct_wr_snd_wnd.next = 0.into();
        self.core.ct_wr_snd_wscale.next = 0.into();

        // Transmit: the core's MAC TX stream and the bridge's frames share
        // the transmitter frame by frame, through the FIFO into the
        // transmit clock.
        self.core.rx_pay_ready.next = true;
        self.arb.a_data.next = self.core.mac_tx_data.val();
        self.arb.a_keep.next = self.core.mac_tx_keep.val();
        self.arb.a_last.next = self.core.mac_tx_last.val();
        self.arb.a_valid.next = self.core.mac_tx_valid.val();
        self.core.mac_tx_ready.next = self.arb.a_ready.val();
        self.arb.b_data.next = self.bridge.tx_data.val();
        self.arb.b_keep.next = self.bridge.tx_keep.val();
        self.arb.b_last.next = self.bridge.tx_last.val();
        self.arb.b_valid.next = self.bridge.tx_valid.val();
        self.bridge.tx_ready.next = self.arb.b_ready.val();
        self.txq0.in_data.next = self.arb.out_data.val();
        self.txq0.in_keep.next = self.arb.out_keep.val();
        self.txq0.in_last.next = self.arb.out_last.val();
        self.txq0.in_valid.next = self.arb.out_valid.val();
        self.arb.out_ready.next = self.txq0.in_ready.val();
        self.tx0.in_data.next = self.txq0.out_data.val();
        self.tx0.in_keep.next = self.txq0.out_keep.val();
        self.tx0.in_last.next = self.txq0.out_last.val();
        self.tx0.in_valid.next = self.txq0.out_valid.val();
        self.txq0.out_ready.next = self.tx0.in_ready.val();
        self.pins.clock.next = self.pll.clk0.val();
        self.pins.clock90.next = self.pll.clk90.val();
        self.pins.tx_en.next = self.tx0.tx_en.val();
        self.pins.tx_er.next = false;
        self.pins.data.next = self.tx0.txd.val();
        self.rgmii_txc.next = self.pins.txc.val();
        self.rgmii_tx_ctl.next = self.pins.tx_ctl.val();
        self.rgmii_txd.next = self.pins.txd.val();

        // The host bridge between the port and the core's host interface.
        self.bridge.board_mac.next = bits::<48>(0x0252_4200_0002_u64);
        self.bridge.board_ip.next = bits::<32>(0x0A00_0002);
        // BAR0: the core's, but for the CPU registers at offsets with bit
        // 23 set (`cpu_port.rs`).
        self.fw_owner.br_csr_valid.next = self.bridge.csr_valid.val();
        self.fw_owner.br_csr_write.next = self.bridge.csr_write.val();
        self.fw_owner.br_csr_addr.next = self.bridge.csr_addr.val();
        self.fw_owner.br_csr_wdata.next = self.bridge.csr_wdata.val();
        self.bridge.csr_rdata.next = self.fw_owner.br_csr_rdata.val();
        self.bridge.csr_rvalid.next = self.fw_owner.br_csr_rvalid.val();
        self.core.csr_valid.next = self.fw_owner.csr_valid.val();
        self.core.csr_write.next = self.fw_owner.csr_write.val();
        self.core.csr_addr.next = self.fw_owner.csr_addr.val();
        self.core.csr_wdata.next = self.fw_owner.csr_wdata.val();
        self.fw_owner.csr_rdata.next = self.core.csr_rdata.val();
        self.fw_owner.csr_rvalid.next = self.core.csr_rvalid.val();
        // The firmware port: the CPU's (after reset) or the bridge's
        // firmware window's while CPU_CTL.HOLD (BAR0) holds the CPU in
        // reset (`cpu_port.rs`).
        self.fw_owner.reset.next = self.reset.q.val();
        self.fw_owner.br_valid.next = self.bridge.fw_valid.val();
        self.fw_owner.br_write.next = self.bridge.fw_write.val();
        self.fw_owner.br_addr.next = self.bridge.fw_addr.val();
        self.fw_owner.br_wdata.next = self.bridge.fw_wdata.val();
        self.bridge.fw_rdata.next = self.fw_owner.br_rdata.val();
        self.bridge.fw_rvalid.next = self.fw_owner.br_rvalid.val();
        self.fw_owner.cpu_valid.next = self.cpu_port.fw_valid.val();
        self.fw_owner.cpu_write.next = self.cpu_port.fw_write.val();
        self.fw_owner.cpu_addr.next = self.cpu_port.fw_addr.val();
        self.fw_owner.cpu_wdata.next = self.cpu_port.fw_wdata.val();
        self.cpu_port.fw_rdata.next = self.fw_owner.cpu_rdata.val();
        self.cpu_port.fw_rvalid.next = self.fw_owner.cpu_rvalid.val();
        self.core.fw_valid.next = self.fw_owner.fw_valid.val();
        self.core.fw_write.next = self.fw_owner.fw_write.val();
        self.core.fw_addr.next = self.fw_owner.fw_addr.val();
        self.core.fw_wdata.next = self.fw_owner.fw_wdata.val();
        self.fw_owner.fw_rdata.next = self.core.fw_rdata.val();
        self.fw_owner.fw_rvalid.next = self.core.fw_rvalid.val();
        // The CPU: the firmware image (loaded through BAR0 CPU_LOAD_*), polling
        // the port with interrupts off.
        self.cpu.reset.next = self.fw_owner.cpu_reset.val();
        // Its debug module (the TAP on the PMOD pins) is reset with the
        // board, not with the CPU: a debugger stays attached while the
        // host holds the CPU, and its ndmreset resets only the CPU.
        self.cpu.dm_reset.next = self.reset.q.val();
        self.cpu.tck.next = self.jtag_tck.val();
        self.cpu.tms.next = self.jtag_tms.val();
        self.cpu.tdi.next = self.jtag_tdi.val();
        self.jtag_tdo.next = self.cpu.tdo.val();
        self.cpu_port.reset.next = self.fw_owner.cpu_reset.val();
        self.cpu.ext_irq.next = false;
        self.cpu.load_we.next = self.fw_owner.load_we.val();
        self.cpu.load_addr.next = self.fw_owner.load_addr.val();
        self.cpu.load_data.next = self.fw_owner.load_data.val();
        self.cpu_port.bus_valid.next = self.cpu.bus_valid.val();
        self.cpu_port.bus_we.next = self.cpu.bus_we.val();
        self.cpu_port.bus_addr.next = self.cpu.bus_addr.val();
        self.cpu_port.bus_wdata.next = self.cpu.bus_wdata.val();
        self.cpu.bus_ready.next = self.cpu_port.bus_ready.val();
        self.cpu.bus_rdata.next = self.cpu_port.bus_rdata.val();
        self.bridge.dma_rd_req_valid.next = self.core.dma_rd_req_valid.val();
        self.core.dma_rd_req_ready.next = self.bridge.dma_rd_req_ready.val();
        self.bridge.dma_rd_req_addr.next = self.core.dma_rd_req_addr.val();
        self.bridge.dma_rd_req_len.next = self.core.dma_rd_req_len.val();
        self.bridge.dma_rd_req_tag.next = self.core.dma_rd_req_tag.val();
        self.core.dma_rd_cpl_valid.next = self.bridge.dma_rd_cpl_valid.val();
        self.bridge.dma_rd_cpl_ready.next = self.core.dma_rd_cpl_ready.val();
        self.core.dma_rd_cpl_data.next = self.bridge.dma_rd_cpl_data.val();
        self.core.dma_rd_cpl_keep.next = self.bridge.dma_rd_cpl_keep.val();
        self.core.dma_rd_cpl_last.next = self.bridge.dma_rd_cpl_last.val();
        self.core.dma_rd_cpl_tag.next = self.bridge.dma_rd_cpl_tag.val();
        self.bridge.dma_wr_valid.next = self.core.dma_wr_valid.val();
        self.core.dma_wr_ready.next = self.bridge.dma_wr_ready.val();
        self.bridge.dma_wr_hdr.next = self.core.dma_wr_hdr.val();
        self.bridge.dma_wr_len.next = self.core.dma_wr_len.val();
        self.bridge.dma_wr_data.next = self.core.dma_wr_data.val();
        self.bridge.dma_wr_keep.next = self.core.dma_wr_keep.val();
        self.bridge.dma_wr_last.next = self.core.dma_wr_last.val();
        self.bridge.irq.next = self.core.irq.val();

        // MDIO.
        self.mdio0.mdio_in.next = self.mdio0_buf.read_data.val();
        self.mdio0_buf.write_enable.next = self.mdio0.mdio_oe.val();
        self.mdio0_buf.write_data.next = self.mdio0.mdio_out.val();
        self.phy_mdc.next = self.mdio0.mdc.val();
        self.phy_rst_n.next = self.mdio0.phy_rst_n.val();

        // Status LEDs.
        self.act_core.trig.next = self.split.core_valid.val() & self.split.core_last.val();
        self.act_br.trig.next = self.split.br_valid.val() & self.split.br_last.val();
        self.act_tx.trig.next =
            self.arb.out_valid.val() & self.arb.out_ready.val() & self.arb.out_last.val();
        self.bad.trig.next =
            self.rx0.out_valid.val() & self.rx0.out_last.val() & self.rx0.out_fcs_bad.val();
        // A MAC TX underrun latched in the transmit clock and synchronised
        // into the core clock.
        if self.tx0.cnt_underrun.val() != 0 {
            self.tx_err.d.next = true;
        }
        if self.tx_rst.sig_out.val() {
            self.tx_err.d.next = false;
        }
        self.tx_err_sync.clock.next = self.pll.clk62.val();
        self.tx_err_sync.sig_in.next = self.tx_err.q.val();
        if self.rx0.overflow.val() | self.split.overflow.val() | self.tx_err_sync.sig_out.val() {
            self.err.d.next = true;
        }
        if self.reset.q.val() {
            self.err.d.next = false;
        }
        self.r.next = 0.into();
        self.g.next = 0.into();
        self.b.next = 0.into();
        self.g.next = self
            .g
            .val()
            .replace_bit(0, self.heartbeat.q.val().get_bit(25) & !self.reset.q.val());
        self.r.next = self.r.val().replace_bit(0, self.err.q.val());
        self.g.next = self.g.val().replace_bit(1, self.mdio0.link.val());
        self.b.next = self.b.val().replace_bit(1, self.bridge.host_known.val());
        self.g.next = self.g.val().replace_bit(2, self.act_core.active.val());
        self.b.next = self.b.val().replace_bit(2, self.act_br.active.val());
        self.g.next = self.g.val().replace_bit(3, self.act_tx.active.val());
        self.r.next = self.r.val().replace_bit(3, self.bad.active.val());
        self.led_r.next = !self.r.val();
        self.led_g.next = !self.g.val();
        self.led_b.next = !self.b.val();
    }
}
