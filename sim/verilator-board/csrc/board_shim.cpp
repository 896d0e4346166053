// extern "C" shim over the Verilated board top `rnic_versa5g`
// (hw/generated/rnic_versa5g.v). Unlike verilator-sys's one-clock models,
// the board has three independent clocks (clk100 → PLL → core clock, and
// the two PHY receive clocks; the PLL model derives the 125 MHz transmit
// clock and the 62.5 MHz core clock from clk100), so the caller drives every input, including
// the clocks, and calls `eval` after each change; there is no `tick`.
// Ports are addressed by number (`enum Port` below; the Rust side in
// src/lib.rs uses the same numbers). Internal signals made public by
// csrc/public.vlt are read through the root class.
#include <cstdint>

#include "Vrnic_versa5g.h"
#include "Vrnic_versa5g___024root.h"
#include "vtop.h"

using VBoard = VTop<Vrnic_versa5g>;

// Inputs (set/get) and outputs (get).
enum Port : uint32_t {
    P_CLK100 = 0,
    P_RST_N,
    P_SW,
    P_RGMII0_RXC,
    P_RGMII0_RX_CTL,
    P_RGMII0_RXD,
    P_RGMII1_RXC,
    P_RGMII1_RX_CTL,
    P_RGMII1_RXD,
    // outputs
    P_LED = 32,
    P_RGMII0_TXC,
    P_RGMII0_TX_CTL,
    P_RGMII0_TXD,
    P_RGMII1_TXC,
    P_RGMII1_TX_CTL,
    P_RGMII1_TXD,
    P_PHY0_RST_N,
    P_PHY1_RST_N,
    P_PHY0_MDC,
    P_PHY1_MDC,
    // internal (csrc/public.vlt)
    I_RX0_DATA = 64,
    I_RX0_KEEP,
    I_RX0_LAST,
    I_RX0_VALID,
    I_RX0_FCS_BAD,
    I_RX1_DATA,
    I_RX1_KEEP,
    I_RX1_LAST,
    I_RX1_VALID,
    I_RX1_FCS_BAD,
    I_CORE_CNT_RX_OK,
    I_CORE_CNT_RX_BAD_FCS,
    I_CORE_CNT_RX_OVERFLOW,
    I_CORE_CNT_RX_OVERSIZE,
    I_BR_CNT_RX_OK,
    I_BR_CNT_RX_DROP,
    I_BR_CNT_NAK,
    I_BR_CNT_DUP,
    I_BR_CNT_CPL_DROP,
    I_BR_CNT_RD_RETRY,
    I_BR_CNT_TRUNC,
    I_BR_CNT_TX_FRAMES,
    I_BR_HOST_KNOWN,
    I_TX0_CNT_FRAMES,
    I_TX0_CNT_UNDERRUN,
    I_TX1_CNT_FRAMES,
    I_TX1_CNT_UNDERRUN,
    I_FW_RDATA,
    I_FW_RVALID,
    I_CORE_CLK,
};

extern "C" {

VBoard* vboard_new() { return vtop_new<Vrnic_versa5g>(); }

void vboard_vcd_close(VBoard* m) { vtop_vcd_close(m); }

void vboard_free(VBoard* m) { vtop_free(m); }

void vboard_eval(VBoard* m) { m->top->eval(); }

int vboard_vcd_open(VBoard* m, const char* path) { return vtop_vcd_open(m, path); }

void vboard_vcd_dump(VBoard* m, uint64_t time) { vtop_vcd_dump(m, time); }

void vboard_vcd_flush(VBoard* m) {
    if (m->vcd != nullptr) m->vcd->flush();
}

// Returns 0 if `port` is not a settable input.
int vboard_set(VBoard* m, uint32_t port, uint64_t v) {
    Vrnic_versa5g* t = m->top;
    switch (port) {
        case P_CLK100: t->clk100 = v & 1; break;
        case P_RST_N: t->rst_n = v & 1; break;
        case P_SW: t->sw = v & 0xFF; break;
        case P_RGMII0_RXC: t->rgmii0_rxc = v & 1; break;
        case P_RGMII0_RX_CTL: t->rgmii0_rx_ctl = v & 1; break;
        case P_RGMII0_RXD: t->rgmii0_rxd = v & 0xF; break;
        case P_RGMII1_RXC: t->rgmii1_rxc = v & 1; break;
        case P_RGMII1_RX_CTL: t->rgmii1_rx_ctl = v & 1; break;
        case P_RGMII1_RXD: t->rgmii1_rxd = v & 0xF; break;
        default: return 0;
    }
    return 1;
}

// Unknown ports read as all ones (never a plausible value of these ports).
uint64_t vboard_get(const VBoard* m, uint32_t port) {
    const Vrnic_versa5g* t = m->top;
    const Vrnic_versa5g___024root* r = t->rootp;
    switch (port) {
        case P_CLK100: return t->clk100;
        case P_RST_N: return t->rst_n;
        case P_SW: return t->sw;
        case P_RGMII0_RXC: return t->rgmii0_rxc;
        case P_RGMII0_RX_CTL: return t->rgmii0_rx_ctl;
        case P_RGMII0_RXD: return t->rgmii0_rxd;
        case P_RGMII1_RXC: return t->rgmii1_rxc;
        case P_RGMII1_RX_CTL: return t->rgmii1_rx_ctl;
        case P_RGMII1_RXD: return t->rgmii1_rxd;
        case P_LED: return t->led;
        case P_RGMII0_TXC: return t->rgmii0_txc;
        case P_RGMII0_TX_CTL: return t->rgmii0_tx_ctl;
        case P_RGMII0_TXD: return t->rgmii0_txd;
        case P_RGMII1_TXC: return t->rgmii1_txc;
        case P_RGMII1_TX_CTL: return t->rgmii1_tx_ctl;
        case P_RGMII1_TXD: return t->rgmii1_txd;
        case P_PHY0_RST_N: return t->phy0_rst_n;
        case P_PHY1_RST_N: return t->phy1_rst_n;
        case P_PHY0_MDC: return t->phy0_mdc;
        case P_PHY1_MDC: return t->phy1_mdc;
#define R(x) r->rnic_versa5g__DOT__##x
        case I_RX0_DATA: return R(rx0__DOT__out_data);
        case I_RX0_KEEP: return R(rx0__DOT__out_keep);
        case I_RX0_LAST: return R(rx0__DOT__out_last);
        case I_RX0_VALID: return R(rx0__DOT__out_valid);
        case I_RX0_FCS_BAD: return R(rx0__DOT__out_fcs_bad);
        case I_RX1_DATA: return R(rx1__DOT__out_data);
        case I_RX1_KEEP: return R(rx1__DOT__out_keep);
        case I_RX1_LAST: return R(rx1__DOT__out_last);
        case I_RX1_VALID: return R(rx1__DOT__out_valid);
        case I_RX1_FCS_BAD: return R(rx1__DOT__out_fcs_bad);
        case I_CORE_CNT_RX_OK: return R(core__DOT__cnt_rx_ok);
        case I_CORE_CNT_RX_BAD_FCS: return R(core__DOT__cnt_rx_bad_fcs);
        case I_CORE_CNT_RX_OVERFLOW: return R(core__DOT__cnt_rx_overflow);
        case I_CORE_CNT_RX_OVERSIZE: return R(core__DOT__cnt_rx_oversize);
        case I_BR_CNT_RX_OK: return R(bridge__DOT__cnt_rx_ok);
        case I_BR_CNT_RX_DROP: return R(bridge__DOT__cnt_rx_drop);
        case I_BR_CNT_NAK: return R(bridge__DOT__cnt_nak);
        case I_BR_CNT_DUP: return R(bridge__DOT__cnt_dup);
        case I_BR_CNT_CPL_DROP: return R(bridge__DOT__cnt_cpl_drop);
        case I_BR_CNT_RD_RETRY: return R(bridge__DOT__cnt_rd_retry);
        case I_BR_CNT_TRUNC: return R(bridge__DOT__cnt_trunc);
        case I_BR_CNT_TX_FRAMES: return R(bridge__DOT__cnt_tx_frames);
        case I_BR_HOST_KNOWN: return R(bridge__DOT__host_known);
        case I_TX0_CNT_FRAMES: return R(tx0__DOT__cnt_frames);
        case I_TX0_CNT_UNDERRUN: return R(tx0__DOT__cnt_underrun);
        case I_TX1_CNT_FRAMES: return R(tx1__DOT__cnt_frames);
        case I_TX1_CNT_UNDERRUN: return R(tx1__DOT__cnt_underrun);
        case I_FW_RDATA: return R(core__DOT__fw_rdata);
        case I_FW_RVALID: return R(core__DOT__fw_rvalid);
        case I_CORE_CLK: return r->rnic_versa5g__DOT__clock;
#undef R
        default: return ~0ULL;
    }
}

// Simulation-only firmware port (csrc/public.vlt): `on` != 0 forces the
// board top's tie-offs of the core's `fw_valid/write/addr/wdata` to the
// given values until a call with `on` == 0 releases them.
//
// Verilator computes a forced signal's value as `VforceEn & VforceVal |
// ~VforceEn & driver` where the core's logic reads it, so the core sees a
// new value at its next evaluation after a core clock edge: a request set
// between edges k-1 and k is sampled by the core's registers at edge k+1.
void vboard_fw_force(VBoard* m, int on, uint32_t valid, uint32_t write, uint32_t addr,
                     uint32_t wdata) {
    Vrnic_versa5g___024root* r = m->top->rootp;
#define F(x, en, val)                                                         \
    r->rnic_versa5g__DOT__core__024##x##__VforceEn = on ? (en) : 0;           \
    r->rnic_versa5g__DOT__core__024##x##__VforceVal = (val) & (en);
    F(fw_valid, 1u, valid)
    F(fw_write, 1u, write)
    F(fw_addr, 0xFFFFFFu, addr)
    F(fw_wdata, 0xFFFFFFFFu, wdata)
#undef F
}

}  // extern "C"
