//! `rnic_versa5g`: the board top for the ECP5 Versa-5G. Port names match
//! `constraints/versa5g.lpf`.
//!
//! * PLL: `clk100` → 62.5 MHz core clock (core, UDP bridge, MDIO, LEDs) and
//!   the 125 MHz transmit clock (both MAC transmitters and the RGMII output
//!   registers) with a 90° copy for the RGMII `txc` (docs/fpga.md "Clock
//!   domains").
//! * Reset: power-on (16 clocks), the `rst_n` button and PLL lock, combined
//!   and synchronised into each clock domain.
//! * Transmit, per port: the core-clock stream → `TxCdc` (asynchronous FIFO,
//!   store-and-forward per frame up to 3 KiB, `tx_cdc.rs`) → `MacTx` in the
//!   125 MHz transmit clock → `RgmiiTx`.
//! * Port 0 (PHY 0): RGMII → MAC RX (in `rgmii0_rxc`) → CDC FIFO →
//!   `rnic_core` `mac_rx_*`. Port 0's MAC TX sends the core's `mac_tx_*`
//!   stream (the firmware's raw frames through the core's MAC merge, and
//!   the TX datapath); with DIP switch 0 on it echoes the core's `rx_pay_*`
//!   output instead (bring-up; `mac_tx_*` is then dropped).
//! * The core's firmware port (`fw_*`) is driven by the host bridge: the
//!   firmware runs on the host (docs/bridge.md "Firmware window"). The
//!   direct firmware-side pins (`ct_wr_*`, `exc_pop`, ...) stay tied off.
//! * Port 1 (PHY 1): the UDP host bridge (`udp_bridge`, docs/bridge.md):
//!   RGMII → MAC RX → CDC → `UdpBridge` → MAC TX. The bridge drives the
//!   core's BAR0 (`csr_*`), serves its DMA reads and writes (`dma_rd_*`,
//!   `dma_wr_*`) from the host program's memory and reports `irq`. Board
//!   MAC 02:52:42:00:00:xx and IPv4 10.0.0.xx with xx = 2 + DIP switches
//!   7..4.
//! * MDIO: one `PhyManager` per PHY (address 0), which sets the RGMII delays
//!   and polls link status.
//! * LEDs (active low on the board; 1 below = lit): 0 heartbeat (~0.9 Hz; PLL locked,
//!   out of reset), 1 PHY 0 link, 2 PHY 0 at 1000 Mb/s, 3 port 0 RX
//!   activity, 4 port 0 bad frame seen (recently), 5 PHY 1 link, 6 port 1 RX
//!   activity, 7 error latch (CDC overflow or TX underrun since reset).

use super::ecp5::Pll;
use super::mac_rx::MacRx;
use super::mac_tx::MacTx;
use super::mdio::PhyManager;
use super::rgmii::{RgmiiRx, RgmiiTx};
use super::rx_cdc::RxCdc;
use super::tx_cdc::TxCdc;
use super::udp_bridge::UdpBridge;
use crate::rnic_core::RnicCoreBoard;
use rust_hdl::prelude::*;

/// Holds `active` for 2^22 clocks (67 ms at 62.5 MHz) after each `trig`.
#[derive(LogicBlock, Default)]
pub struct Stretch {
    pub clock: Signal<In, Clock>,
    pub trig: Signal<In, Bit>,
    pub active: Signal<Out, Bit>,
    cnt: DFF<Bits<22>>,
}

impl Logic for Stretch {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, cnt);
        if self.trig.val() {
            self.cnt.d.next = 0x3F_FFFF.into();
        } else if self.cnt.q.val() != 0 {
            self.cnt.d.next = self.cnt.q.val() - 1;
        }
        self.active.next = self.cnt.q.val() != 0;
    }
}

/// One RGMII receive path: pins → GMII → MAC RX → CDC into the core clock.
#[derive(LogicBlock, Default)]
pub struct RxPort {
    pub rxc: Signal<In, Clock>,
    pub rxd: Signal<In, Bits<4>>,
    pub rx_ctl: Signal<In, Bit>,
    pub core_clock: Signal<In, Clock>,
    pub core_reset: Signal<In, Bit>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_fcs_bad: Signal<Out, Bit>,
    pub overflow: Signal<Out, Bit>,
    pins: RgmiiRx,
    mac: MacRx,
    rx_reset: BitSynchronizer,
    cdc: RxCdc,
}

impl Logic for RxPort {
    #[hdl_gen]
    fn update(&mut self) {
        self.pins.rxc.next = self.rxc.val();
        self.pins.rxd.next = self.rxd.val();
        self.pins.rx_ctl.next = self.rx_ctl.val();
        self.rx_reset.clock.next = self.rxc.val();
        self.rx_reset.sig_in.next = self.core_reset.val();
        self.mac.clock.next = self.rxc.val();
        self.mac.reset.next = self.rx_reset.sig_out.val();
        self.mac.rx_dv.next = self.pins.rx_dv.val();
        self.mac.rx_er.next = self.pins.rx_er.val();
        self.mac.rxd.next = self.pins.data.val();
        self.cdc.wr_clock.next = self.rxc.val();
        self.cdc.rd_clock.next = self.core_clock.val();
        self.cdc.rd_reset.next = self.core_reset.val();
        self.cdc.in_data.next = self.mac.out_data.val();
        self.cdc.in_keep.next = self.mac.out_keep.val();
        self.cdc.in_last.next = self.mac.out_last.val();
        self.cdc.in_valid.next = self.mac.out_valid.val();
        self.cdc.in_fcs_bad.next = self.mac.out_fcs_bad.val();
        self.out_data.next = self.cdc.out_data.val();
        self.out_keep.next = self.cdc.out_keep.val();
        self.out_last.next = self.cdc.out_last.val();
        self.out_valid.next = self.cdc.out_valid.val();
        self.out_fcs_bad.next = self.cdc.out_fcs_bad.val();
        self.overflow.next = self.cdc.overflow.val();
    }
}

#[derive(LogicBlock)]
pub struct VersaTop {
    pub clk100: Signal<In, Clock>,
    pub rst_n: Signal<In, Bit>,
    pub led: Signal<Out, Bits<8>>,
    pub sw: Signal<In, Bits<8>>,
    pub rgmii0_rxc: Signal<In, Clock>,
    pub rgmii0_rx_ctl: Signal<In, Bit>,
    pub rgmii0_rxd: Signal<In, Bits<4>>,
    pub rgmii0_txc: Signal<Out, Bit>,
    pub rgmii0_tx_ctl: Signal<Out, Bit>,
    pub rgmii0_txd: Signal<Out, Bits<4>>,
    pub phy0_mdc: Signal<Out, Bit>,
    pub phy0_mdio: Signal<InOut, Bit>,
    pub phy0_rst_n: Signal<Out, Bit>,
    pub rgmii1_rxc: Signal<In, Clock>,
    pub rgmii1_rx_ctl: Signal<In, Bit>,
    pub rgmii1_rxd: Signal<In, Bits<4>>,
    pub rgmii1_txc: Signal<Out, Bit>,
    pub rgmii1_tx_ctl: Signal<Out, Bit>,
    pub rgmii1_txd: Signal<Out, Bits<4>>,
    pub phy1_mdc: Signal<Out, Bit>,
    pub phy1_mdio: Signal<InOut, Bit>,
    pub phy1_rst_n: Signal<Out, Bit>,
    pll: Pll,
    /// The core clock (the PLL's 62.5 MHz output).
    clock: Signal<Local, Clock>,
    /// The transmit clock (the PLL's 125 MHz 0° output): MAC TX and RGMII.
    tx_clock: Signal<Local, Clock>,
    /// The core reset synchronised into the transmit clock.
    tx_rst: BitSynchronizer,
    /// Core clock → transmit clock FIFOs in front of each MAC TX.
    txq0: TxCdc,
    txq1: TxCdc,
    /// Sticky: a MAC TX underran since reset (transmit clock) ...
    tx_err: DFF<Bit>,
    /// ... and synchronised into the core clock for the error LED.
    tx_err_sync: BitSynchronizer,
    button: BitSynchronizer,
    por: DFF<Bits<4>>,
    reset: DFF<Bit>,
    sw_sync: DFF<Bits<8>>,
    sw_q: DFF<Bits<8>>,
    heartbeat: DFF<Bits<26>>,
    core: RnicCoreBoard,
    rx0: RxPort,
    rx1: RxPort,
    tx0: MacTx,
    tx1: MacTx,
    pins0: RgmiiTx,
    pins1: RgmiiTx,
    mdio0: PhyManager,
    mdio1: PhyManager,
    mdio0_buf: TristateBuffer<Bit>,
    mdio1_buf: TristateBuffer<Bit>,
    bridge: UdpBridge,
    act0: Stretch,
    bad0: Stretch,
    act1: Stretch,
    err: DFF<Bit>,
    leds: Signal<Local, Bits<8>>,
}

impl Default for VersaTop {
    fn default() -> Self {
        // PHY address 0; 2^20 clocks (16.8 ms at 62.5 MHz) of reset and
        // between polls; MDC = 62.5 MHz / 32 ≈ 1.95 MHz.
        let mdio = || PhyManager::new(0, (1 << 20) - 1, 16);
        Self {
            clk100: Default::default(),
            rst_n: Default::default(),
            led: Default::default(),
            sw: Default::default(),
            rgmii0_rxc: Default::default(),
            rgmii0_rx_ctl: Default::default(),
            rgmii0_rxd: Default::default(),
            rgmii0_txc: Default::default(),
            rgmii0_tx_ctl: Default::default(),
            rgmii0_txd: Default::default(),
            phy0_mdc: Default::default(),
            phy0_mdio: Default::default(),
            phy0_rst_n: Default::default(),
            rgmii1_rxc: Default::default(),
            rgmii1_rx_ctl: Default::default(),
            rgmii1_rxd: Default::default(),
            rgmii1_txc: Default::default(),
            rgmii1_tx_ctl: Default::default(),
            rgmii1_txd: Default::default(),
            phy1_mdc: Default::default(),
            phy1_mdio: Default::default(),
            phy1_rst_n: Default::default(),
            pll: Default::default(),
            clock: Default::default(),
            tx_clock: Default::default(),
            tx_rst: Default::default(),
            txq0: Default::default(),
            txq1: Default::default(),
            tx_err: Default::default(),
            tx_err_sync: Default::default(),
            button: Default::default(),
            por: Default::default(),
            reset: Default::default(),
            sw_sync: Default::default(),
            sw_q: Default::default(),
            heartbeat: Default::default(),
            core: Default::default(),
            rx0: Default::default(),
            rx1: Default::default(),
            tx0: Default::default(),
            tx1: Default::default(),
            pins0: Default::default(),
            pins1: Default::default(),
            mdio0: mdio(),
            mdio1: mdio(),
            mdio0_buf: Default::default(),
            mdio1_buf: Default::default(),
            bridge: Default::default(),
            act0: Default::default(),
            bad0: Default::default(),
            act1: Default::default(),
            err: Default::default(),
            leds: Default::default(),
        }
    }
}

impl Logic for VersaTop {
    #[hdl_gen]
    fn update(&mut self) {
        Signal::<InOut, Bit>::link(&mut self.phy0_mdio, &mut self.mdio0_buf.bus);
        Signal::<InOut, Bit>::link(&mut self.phy1_mdio, &mut self.mdio1_buf.bus);
        self.pll.clkin.next = self.clk100.val();
        self.clock.next = self.pll.clk62.val();
        self.tx_clock.next = self.pll.clk0.val();
        clock!(self, clock, core, mdio0, mdio1, bridge, act0, bad0, act1);
        clock!(self, tx_clock, tx0, tx1);
        dff_setup!(self, clock, por, reset, sw_sync, sw_q, heartbeat, err);
        dff_setup!(self, tx_clock, tx_err);

        // Reset: power-on counter, button, PLL lock.
        self.button.clock.next = self.pll.clk62.val();
        self.button.sig_in.next = !self.rst_n.val() | !self.pll.locked.val();
        if self.por.q.val() != 15 {
            self.por.d.next = self.por.q.val() + 1;
        }
        self.reset.d.next = (self.por.q.val() != 15) | self.button.sig_out.val();
        self.sw_sync.d.next = self.sw.val();
        self.sw_q.d.next = self.sw_sync.q.val();
        self.heartbeat.d.next = self.heartbeat.q.val() + 1;

        self.core.reset.next = self.reset.q.val();
        // The transmit clock domain's reset (MAC TX, the FIFOs' read sides).
        self.tx_rst.clock.next = self.pll.clk0.val();
        self.tx_rst.sig_in.next = self.reset.q.val();
        self.tx0.reset.next = self.tx_rst.sig_out.val();
        self.tx1.reset.next = self.tx_rst.sig_out.val();
        self.txq0.wr_clock.next = self.pll.clk62.val();
        self.txq0.wr_reset.next = self.reset.q.val();
        self.txq0.rd_clock.next = self.pll.clk0.val();
        self.txq0.rd_reset.next = self.tx_rst.sig_out.val();
        self.txq1.wr_clock.next = self.pll.clk62.val();
        self.txq1.wr_reset.next = self.reset.q.val();
        self.txq1.rd_clock.next = self.pll.clk0.val();
        self.txq1.rd_reset.next = self.tx_rst.sig_out.val();
        self.mdio0.reset.next = self.reset.q.val();
        self.mdio1.reset.next = self.reset.q.val();
        self.bridge.reset.next = self.reset.q.val();

        // Port 0 receive into the core.
        self.rx0.rxc.next = self.rgmii0_rxc.val();
        self.rx0.rxd.next = self.rgmii0_rxd.val();
        self.rx0.rx_ctl.next = self.rgmii0_rx_ctl.val();
        self.rx0.core_clock.next = self.pll.clk62.val();
        self.rx0.core_reset.next = self.reset.q.val();
        self.core.mac_rx_data.next = self.rx0.out_data.val();
        self.core.mac_rx_keep.next = self.rx0.out_keep.val();
        self.core.mac_rx_last.next = self.rx0.out_last.val();
        self.core.mac_rx_valid.next = self.rx0.out_valid.val();
        self.core.mac_rx_fcs_bad.next = self.rx0.out_fcs_bad.val();

        // The direct firmware-side pins (test rigs drive them in
        // co-simulation) are tied off: on the board the firmware reaches the
        // connection table, the exception queue, the MPA/QP contexts and
        // the Terminate records through the firmware port (`fw_*`, driven
        // by the host bridge below).
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
        // host memory through the bridge's DMA. With DIP switch 0 on
        // (bring-up echo below) the fast-path payload goes to `rx_pay_*`
        // instead. Static while traffic runs (docs/rtl.md `rx_ulp_en`).
        self.core.rx_ulp_en.next = !self.sw_q.q.val().get_bit(0);
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
        // BAR0 and the firmware port are driven by the host bridge on port 1
        // (below): the firmware runs on the host (docs/bridge.md "Firmware
        // window").
        // BAR0 STATUS_LINK_UP: PHY 0's link, as its MDIO poll reports it.
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
        // firmware port, and the MAC TX stream goes to port 0 (below).
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

        // Port 0 transmits the core's MAC TX stream (the firmware's raw
        // frames through the MAC merge: ARP, the TCP handshake, MPA, and
        // the RDMA datapath); with switch 0 on it echoes the received
        // payload instead (bring-up). Either goes through the FIFO into
        // the transmit clock.
        self.txq0.in_data.next = self.core.mac_tx_data.val();
        self.txq0.in_keep.next = self.core.mac_tx_keep.val();
        self.txq0.in_last.next = self.core.mac_tx_last.val();
        self.txq0.in_valid.next = self.core.mac_tx_valid.val();
        self.core.mac_tx_ready.next = self.txq0.in_ready.val();
        self.core.rx_pay_ready.next = true;
        if self.sw_q.q.val().get_bit(0) {
            self.txq0.in_data.next = self.core.rx_pay_data.val();
            self.txq0.in_keep.next = self.core.rx_pay_keep.val();
            self.txq0.in_last.next = self.core.rx_pay_last.val();
            self.txq0.in_valid.next = self.core.rx_pay_valid.val();
            self.core.rx_pay_ready.next = self.txq0.in_ready.val();
            self.core.mac_tx_ready.next = true;
        }
        self.tx0.in_data.next = self.txq0.out_data.val();
        self.tx0.in_keep.next = self.txq0.out_keep.val();
        self.tx0.in_last.next = self.txq0.out_last.val();
        self.tx0.in_valid.next = self.txq0.out_valid.val();
        self.txq0.out_ready.next = self.tx0.in_ready.val();
        self.pins0.clock.next = self.pll.clk0.val();
        self.pins0.clock90.next = self.pll.clk90.val();
        self.pins0.tx_en.next = self.tx0.tx_en.val();
        self.pins0.tx_er.next = false;
        self.pins0.data.next = self.tx0.txd.val();
        self.rgmii0_txc.next = self.pins0.txc.val();
        self.rgmii0_tx_ctl.next = self.pins0.tx_ctl.val();
        self.rgmii0_txd.next = self.pins0.txd.val();

        // Port 1: the UDP host bridge (docs/bridge.md) between the PHY and
        // the core's host interface.
        self.rx1.rxc.next = self.rgmii1_rxc.val();
        self.rx1.rxd.next = self.rgmii1_rxd.val();
        self.rx1.rx_ctl.next = self.rgmii1_rx_ctl.val();
        self.rx1.core_clock.next = self.pll.clk62.val();
        self.rx1.core_reset.next = self.reset.q.val();
        // 02:52:42:00:00:xx / 10.0.0.xx, xx = 2 + DIP switches 7..4.
        self.bridge.board_mac.next = bits::<48>(0x0252_4200_0002_u64)
            + bit_cast::<48, 4>(self.sw_q.q.val().get_bits::<4>(4));
        self.bridge.board_ip.next =
            bits::<32>(0x0A00_0002) + bit_cast::<32, 4>(self.sw_q.q.val().get_bits::<4>(4));
        self.bridge.rx_data.next = self.rx1.out_data.val();
        self.bridge.rx_keep.next = self.rx1.out_keep.val();
        self.bridge.rx_last.next = self.rx1.out_last.val();
        self.bridge.rx_valid.next = self.rx1.out_valid.val();
        self.bridge.rx_fcs_bad.next = self.rx1.out_fcs_bad.val();
        self.txq1.in_data.next = self.bridge.tx_data.val();
        self.txq1.in_keep.next = self.bridge.tx_keep.val();
        self.txq1.in_last.next = self.bridge.tx_last.val();
        self.txq1.in_valid.next = self.bridge.tx_valid.val();
        self.bridge.tx_ready.next = self.txq1.in_ready.val();
        self.tx1.in_data.next = self.txq1.out_data.val();
        self.tx1.in_keep.next = self.txq1.out_keep.val();
        self.tx1.in_last.next = self.txq1.out_last.val();
        self.tx1.in_valid.next = self.txq1.out_valid.val();
        self.txq1.out_ready.next = self.tx1.in_ready.val();
        self.core.csr_valid.next = self.bridge.csr_valid.val();
        self.core.csr_write.next = self.bridge.csr_write.val();
        self.core.csr_addr.next = self.bridge.csr_addr.val();
        self.core.csr_wdata.next = self.bridge.csr_wdata.val();
        self.bridge.csr_rdata.next = self.core.csr_rdata.val();
        self.bridge.csr_rvalid.next = self.core.csr_rvalid.val();
        self.core.fw_valid.next = self.bridge.fw_valid.val();
        self.core.fw_write.next = self.bridge.fw_write.val();
        self.core.fw_addr.next = self.bridge.fw_addr.val();
        self.core.fw_wdata.next = self.bridge.fw_wdata.val();
        self.bridge.fw_rdata.next = self.core.fw_rdata.val();
        self.bridge.fw_rvalid.next = self.core.fw_rvalid.val();
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
        self.pins1.clock.next = self.pll.clk0.val();
        self.pins1.clock90.next = self.pll.clk90.val();
        self.pins1.tx_en.next = self.tx1.tx_en.val();
        self.pins1.tx_er.next = false;
        self.pins1.data.next = self.tx1.txd.val();
        self.rgmii1_txc.next = self.pins1.txc.val();
        self.rgmii1_tx_ctl.next = self.pins1.tx_ctl.val();
        self.rgmii1_txd.next = self.pins1.txd.val();

        // MDIO.
        self.mdio0.mdio_in.next = self.mdio0_buf.read_data.val();
        self.mdio0_buf.write_enable.next = self.mdio0.mdio_oe.val();
        self.mdio0_buf.write_data.next = self.mdio0.mdio_out.val();
        self.phy0_mdc.next = self.mdio0.mdc.val();
        self.phy0_rst_n.next = self.mdio0.phy_rst_n.val();
        self.mdio1.mdio_in.next = self.mdio1_buf.read_data.val();
        self.mdio1_buf.write_enable.next = self.mdio1.mdio_oe.val();
        self.mdio1_buf.write_data.next = self.mdio1.mdio_out.val();
        self.phy1_mdc.next = self.mdio1.mdc.val();
        self.phy1_rst_n.next = self.mdio1.phy_rst_n.val();

        // Status LEDs.
        self.act0.trig.next = self.rx0.out_valid.val() & self.rx0.out_last.val();
        self.bad0.trig.next =
            self.rx0.out_valid.val() & self.rx0.out_last.val() & self.rx0.out_fcs_bad.val();
        self.act1.trig.next = self.rx1.out_valid.val() & self.rx1.out_last.val();
        // A MAC TX underrun (either port) latched in the transmit clock and
        // synchronised into the core clock.
        if (self.tx0.cnt_underrun.val() != 0) | (self.tx1.cnt_underrun.val() != 0) {
            self.tx_err.d.next = true;
        }
        if self.tx_rst.sig_out.val() {
            self.tx_err.d.next = false;
        }
        self.tx_err_sync.clock.next = self.pll.clk62.val();
        self.tx_err_sync.sig_in.next = self.tx_err.q.val();
        if self.rx0.overflow.val() | self.rx1.overflow.val() | self.tx_err_sync.sig_out.val() {
            self.err.d.next = true;
        }
        if self.reset.q.val() {
            self.err.d.next = false;
        }
        self.leds.next = 0.into();
        self.leds.next = self
            .leds
            .val()
            .replace_bit(0, self.heartbeat.q.val().get_bit(25) & !self.reset.q.val());
        self.leds.next = self.leds.val().replace_bit(1, self.mdio0.link.val());
        self.leds.next = self.leds.val().replace_bit(2, self.mdio0.speed.val() == 2);
        self.leds.next = self.leds.val().replace_bit(3, self.act0.active.val());
        self.leds.next = self.leds.val().replace_bit(4, self.bad0.active.val());
        self.leds.next = self.leds.val().replace_bit(5, self.mdio1.link.val());
        self.leds.next = self.leds.val().replace_bit(6, self.act1.active.val());
        self.leds.next = self.leds.val().replace_bit(7, self.err.q.val());
        self.led.next = !self.leds.val();
    }
}
