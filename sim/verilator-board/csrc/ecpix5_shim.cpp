// extern "C" shim over the Verilated ECPIX-5 top `rnic_ecpix5`
// (hw/generated/rnic_ecpix5.v): the same scheme as board_shim.cpp (the
// caller drives every input, the clocks included, and calls `eval` after
// each change), with the ECPIX-5's pins: one RGMII port, RGB LEDs. Ports
// are addressed by number (`enum Port` below; src/ecpix5.rs uses the same
// numbers). Internal signals made public by csrc/ecpix5.vlt are read
// through the root class.
#include <cstdint>

#include "Vrnic_ecpix5.h"
#include "Vrnic_ecpix5___024root.h"
#include "vtop.h"

using VEcpix5 = VTop<Vrnic_ecpix5>;

enum Port : uint32_t {
    P_CLK100 = 0,
    P_RST_N,
    P_RGMII_RXC,
    P_RGMII_RX_CTL,
    P_RGMII_RXD,
    // outputs
    P_LED_R = 32,
    P_LED_G,
    P_LED_B,
    P_RGMII_TXC,
    P_RGMII_TX_CTL,
    P_RGMII_TXD,
    P_PHY_RST_N,
    P_PHY_MDC,
    // internal (csrc/ecpix5.vlt)
    I_RX_DATA = 64,
    I_RX_KEEP,
    I_RX_LAST,
    I_RX_VALID,
    I_RX_FCS_BAD,
    I_CORE_DATA,
    I_CORE_KEEP,
    I_CORE_LAST,
    I_CORE_VALID,
    I_CORE_FCS_BAD,
    I_BR_DATA,
    I_BR_KEEP,
    I_BR_LAST,
    I_BR_VALID,
    I_BR_FCS_BAD,
    I_SPLIT_OVERFLOW,
    I_CORE_CNT_RX_OK,
    I_CORE_CNT_RX_BAD_FCS,
    I_BR_CNT_RX_OK,
    I_BR_CNT_RX_DROP,
    I_BR_CNT_NAK,
    I_BR_CNT_TX_FRAMES,
    I_BR_HOST_KNOWN,
    I_TX_CNT_FRAMES,
    I_TX_CNT_UNDERRUN,
    I_CORE_CLK,
};

extern "C" {

VEcpix5* vecpix5_new() { return vtop_new<Vrnic_ecpix5>(); }

void vecpix5_free(VEcpix5* m) { vtop_free(m); }

void vecpix5_eval(VEcpix5* m) { m->top->eval(); }

int vecpix5_vcd_open(VEcpix5* m, const char* path) { return vtop_vcd_open(m, path); }

void vecpix5_vcd_dump(VEcpix5* m, uint64_t time) { vtop_vcd_dump(m, time); }

// Returns 0 if `port` is not a settable input.
int vecpix5_set(VEcpix5* m, uint32_t port, uint64_t v) {
    Vrnic_ecpix5* t = m->top;
    switch (port) {
        case P_CLK100: t->clk100 = v & 1; break;
        case P_RST_N: t->rst_n = v & 1; break;
        case P_RGMII_RXC: t->rgmii_rxc = v & 1; break;
        case P_RGMII_RX_CTL: t->rgmii_rx_ctl = v & 1; break;
        case P_RGMII_RXD: t->rgmii_rxd = v & 0xF; break;
        default: return 0;
    }
    return 1;
}

// Unknown ports read as all ones.
uint64_t vecpix5_get(const VEcpix5* m, uint32_t port) {
    const Vrnic_ecpix5* t = m->top;
    const Vrnic_ecpix5___024root* r = t->rootp;
    switch (port) {
        case P_CLK100: return t->clk100;
        case P_RST_N: return t->rst_n;
        case P_RGMII_RXC: return t->rgmii_rxc;
        case P_RGMII_RX_CTL: return t->rgmii_rx_ctl;
        case P_RGMII_RXD: return t->rgmii_rxd;
        case P_LED_R: return t->led_r;
        case P_LED_G: return t->led_g;
        case P_LED_B: return t->led_b;
        case P_RGMII_TXC: return t->rgmii_txc;
        case P_RGMII_TX_CTL: return t->rgmii_tx_ctl;
        case P_RGMII_TXD: return t->rgmii_txd;
        case P_PHY_RST_N: return t->phy_rst_n;
        case P_PHY_MDC: return t->phy_mdc;
#define R(x) r->rnic_ecpix5__DOT__##x
        case I_RX_DATA: return R(rx0__DOT__out_data);
        case I_RX_KEEP: return R(rx0__DOT__out_keep);
        case I_RX_LAST: return R(rx0__DOT__out_last);
        case I_RX_VALID: return R(rx0__DOT__out_valid);
        case I_RX_FCS_BAD: return R(rx0__DOT__out_fcs_bad);
        case I_CORE_DATA: return R(split__DOT__core_data);
        case I_CORE_KEEP: return R(split__DOT__core_keep);
        case I_CORE_LAST: return R(split__DOT__core_last);
        case I_CORE_VALID: return R(split__DOT__core_valid);
        case I_CORE_FCS_BAD: return R(split__DOT__core_fcs_bad);
        case I_BR_DATA: return R(split__DOT__br_data);
        case I_BR_KEEP: return R(split__DOT__br_keep);
        case I_BR_LAST: return R(split__DOT__br_last);
        case I_BR_VALID: return R(split__DOT__br_valid);
        case I_BR_FCS_BAD: return R(split__DOT__br_fcs_bad);
        case I_SPLIT_OVERFLOW: return R(split__DOT__overflow);
        case I_CORE_CNT_RX_OK: return R(core__DOT__cnt_rx_ok);
        case I_CORE_CNT_RX_BAD_FCS: return R(core__DOT__cnt_rx_bad_fcs);
        case I_BR_CNT_RX_OK: return R(bridge__DOT__cnt_rx_ok);
        case I_BR_CNT_RX_DROP: return R(bridge__DOT__cnt_rx_drop);
        case I_BR_CNT_NAK: return R(bridge__DOT__cnt_nak);
        case I_BR_CNT_TX_FRAMES: return R(bridge__DOT__cnt_tx_frames);
        case I_BR_HOST_KNOWN: return R(bridge__DOT__host_known);
        case I_TX_CNT_FRAMES: return R(tx0__DOT__cnt_frames);
        case I_TX_CNT_UNDERRUN: return R(tx0__DOT__cnt_underrun);
        case I_CORE_CLK: return r->rnic_ecpix5__DOT__clock;
#undef R
        default: return ~0ULL;
    }
}

}  // extern "C"
