//! `rnic_core`: the top of the RTL, composing the blocks that exist so far.
//! Its port list is the contract with `verilator-sys`, `sim` and the FPGA
//! wrapper; it is listed in `hw/generated/rnic_core.ports` and described in
//! `docs/rtl.md`. Add ports at the end of a group; do not rename.
//!
//! Current data path:
//! `mac_rx_*` → [`RxFifo`] (drops bad-FCS frames) → `rx_pay_*`, with a
//! [`Crc32cX64`] computing the CRC32c of every frame leaving on `rx_pay_*`.

use crate::crc32c_x64::Crc32cX64;
use crate::rx_fifo::RxFifo;
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RnicCore {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high; hold for at least 2 clocks.
    pub reset: Signal<In, Bit>,
    // MAC RX stream (no backpressure: the MAC cannot be stalled).
    pub mac_rx_data: Signal<In, Bits<64>>,
    pub mac_rx_keep: Signal<In, Bits<4>>,
    pub mac_rx_last: Signal<In, Bit>,
    pub mac_rx_valid: Signal<In, Bit>,
    pub mac_rx_fcs_bad: Signal<In, Bit>,
    // RX payload stream out.
    pub rx_pay_data: Signal<Out, Bits<64>>,
    pub rx_pay_keep: Signal<Out, Bits<4>>,
    pub rx_pay_last: Signal<Out, Bit>,
    pub rx_pay_valid: Signal<Out, Bit>,
    pub rx_pay_ready: Signal<In, Bit>,
    // CRC32c of each frame on rx_pay (pulse 2 clocks after its last beat).
    pub rx_pay_crc: Signal<Out, Bits<32>>,
    pub rx_pay_crc_valid: Signal<Out, Bit>,
    // Counters (32 bits, wrapping, cleared by reset).
    pub cnt_rx_ok: Signal<Out, Bits<32>>,
    pub cnt_rx_bad_fcs: Signal<Out, Bits<32>>,
    pub cnt_rx_overflow: Signal<Out, Bits<32>>,
    pub cnt_rx_oversize: Signal<Out, Bits<32>>,
    rx_fifo: RxFifo,
    pay_crc: Crc32cX64,
}

impl Logic for RnicCore {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, rx_fifo, pay_crc);
        self.rx_fifo.reset.next = self.reset.val();
        self.pay_crc.reset.next = self.reset.val();

        self.rx_fifo.in_data.next = self.mac_rx_data.val();
        self.rx_fifo.in_keep.next = self.mac_rx_keep.val();
        self.rx_fifo.in_last.next = self.mac_rx_last.val();
        self.rx_fifo.in_valid.next = self.mac_rx_valid.val();
        self.rx_fifo.in_fcs_bad.next = self.mac_rx_fcs_bad.val();

        self.rx_pay_data.next = self.rx_fifo.out_data.val();
        self.rx_pay_keep.next = self.rx_fifo.out_keep.val();
        self.rx_pay_last.next = self.rx_fifo.out_last.val();
        self.rx_pay_valid.next = self.rx_fifo.out_valid.val();
        self.rx_fifo.out_ready.next = self.rx_pay_ready.val();

        self.pay_crc.data.next = self.rx_fifo.out_data.val();
        self.pay_crc.keep.next = self.rx_fifo.out_keep.val();
        self.pay_crc.last.next = self.rx_fifo.out_last.val();
        self.pay_crc.valid.next = self.rx_fifo.out_valid.val() & self.rx_pay_ready.val();
        self.rx_pay_crc.next = self.pay_crc.crc.val();
        self.rx_pay_crc_valid.next = self.pay_crc.crc_valid.val();

        self.cnt_rx_ok.next = self.rx_fifo.cnt_ok.val();
        self.cnt_rx_bad_fcs.next = self.rx_fifo.cnt_bad_fcs.val();
        self.cnt_rx_overflow.next = self.rx_fifo.cnt_overflow.val();
        self.cnt_rx_oversize.next = self.rx_fifo.cnt_oversize.val();
    }
}
