//! RGMII ↔ GMII at 1000 Mb/s with the ECP5 DDR registers.
//!
//! * [`RgmiiRx`]: `rxd[3:0]`/`rx_ctl` sampled on both edges of the PHY's
//!   `rxc` (IDDRX1F): rising edge = bits 3:0 and RX_DV, falling edge = bits
//!   7:4 and RX_DV xor RX_ER (RGMII v2.0). Output registered in `rxc`.
//!   The PHY must center the data on `rxc` (its internal RX delay on, which
//!   `mdio::PhyManager` sets on the 88E1512).
//! * [`RgmiiTx`]: GMII in the core clock → `txd[3:0]`/`tx_ctl` through
//!   ODDRX1F on the core clock; `txc` is an ODDRX1F (1, 0) on the PLL's 90°
//!   clock, so `txc` edges fall in the middle of the data (the PHY's TX
//!   delay must be off, also set by `mdio::PhyManager`).

use super::ecp5::{IddrBus, OddrBus};
use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct RgmiiRx {
    pub rxc: Signal<In, Clock>,
    pub rxd: Signal<In, Bits<4>>,
    pub rx_ctl: Signal<In, Bit>,
    /// GMII, registered in `rxc`.
    pub rx_dv: Signal<Out, Bit>,
    pub rx_er: Signal<Out, Bit>,
    pub data: Signal<Out, Bits<8>>,
    iddr: IddrBus<5>,
    // Not `pins` or `d`: a signal named like the instance that holds it
    // (`RxPort::pins`) or like a port of its own module (`DFF::d`) draws
    // Verilator's VARHIDDEN.
    ddr_in: Signal<Local, Bits<5>>,
    dv: DFF<Bit>,
    er: DFF<Bit>,
    octet: DFF<Bits<8>>,
}

impl Logic for RgmiiRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, rxc, dv, er, octet);
        self.iddr.sclk.next = self.rxc.val();
        self.ddr_in.next = bit_cast::<5, 4>(self.rxd.val());
        self.ddr_in.next = self.ddr_in.val().replace_bit(4, self.rx_ctl.val());
        self.iddr.d.next = self.ddr_in.val();
        self.dv.d.next = self.iddr.q0.val().get_bit(4);
        self.er.d.next = self.iddr.q0.val().get_bit(4) ^ self.iddr.q1.val().get_bit(4);
        self.octet.d.next = bit_cast::<8, 4>(self.iddr.q0.val().get_bits::<4>(0))
            | (bit_cast::<8, 4>(self.iddr.q1.val().get_bits::<4>(0)) << 4);
        self.rx_dv.next = self.dv.q.val();
        self.rx_er.next = self.er.q.val();
        self.data.next = self.octet.q.val();
    }
}

#[derive(LogicBlock, Default)]
pub struct RgmiiTx {
    /// Core clock (GMII side).
    pub clock: Signal<In, Clock>,
    /// The core clock shifted by 90° (PLL), for `txc` only.
    pub clock90: Signal<In, Clock>,
    pub tx_en: Signal<In, Bit>,
    pub tx_er: Signal<In, Bit>,
    pub data: Signal<In, Bits<8>>,
    pub txc: Signal<Out, Bit>,
    pub txd: Signal<Out, Bits<4>>,
    pub tx_ctl: Signal<Out, Bit>,
    oddr: OddrBus<5>,
    oclk: OddrBus<1>,
    rise: Signal<Local, Bits<5>>,
    fall: Signal<Local, Bits<5>>,
}

impl Logic for RgmiiTx {
    #[hdl_gen]
    fn update(&mut self) {
        self.oddr.sclk.next = self.clock.val();
        self.oclk.sclk.next = self.clock90.val();
        self.rise.next = bit_cast::<5, 4>(self.data.val().get_bits::<4>(0));
        self.rise.next = self.rise.val().replace_bit(4, self.tx_en.val());
        self.fall.next = bit_cast::<5, 4>(self.data.val().get_bits::<4>(4));
        self.fall.next = self
            .fall
            .val()
            .replace_bit(4, self.tx_en.val() ^ self.tx_er.val());
        self.oddr.d0.next = self.rise.val();
        self.oddr.d1.next = self.fall.val();
        self.oclk.d0.next = 1.into();
        self.oclk.d1.next = 0.into();
        self.txd.next = self.oddr.q.val().get_bits::<4>(0);
        self.tx_ctl.next = self.oddr.q.val().get_bit(4);
        self.txc.next = self.oclk.q.val().any();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::mac_rx::tests::Collector;
    use crate::board::mac_rx::MacRx;
    use crate::board::mac_tx::MacTx;
    use crate::testutil::{beats, Rng};

    /// RGMII loopback at the pins: MacTx → RgmiiTx → pins → RgmiiRx → MacRx,
    /// with the transmit clock looped back as the receive clock (the 90°
    /// clock, as a PHY with RX delay would present it). Four simulation
    /// steps per 8 ns clock: clk0 rises, clk90 rises, clk0 falls, clk90 falls.
    /// `flip` = (frame index, pin-level bit flips at byte offsets) corrupts
    /// the wire so the receiver must flag a bad FCS.
    #[test]
    fn loopback_at_the_pins() {
        let mut rng = Rng::new(21);
        let frames: Vec<Vec<u8>> = (0..24)
            .map(|i| {
                let len = match i {
                    0 => 60,
                    1 => 14,
                    2 => 61,
                    3 => 1514,
                    _ => 60 + rng.below(300),
                };
                rng.bytes(len)
            })
            .collect();
        let corrupt: Vec<usize> = vec![5, 9, 17];

        let mut tx = MacTx::default();
        let mut ptx = RgmiiTx::default();
        let mut prx = RgmiiRx::default();
        let mut rx = MacRx::default();
        tx.clock.connect();
        tx.reset.connect();
        tx.in_data.connect();
        tx.in_keep.connect();
        tx.in_last.connect();
        tx.in_valid.connect();
        tx.connect_all();
        ptx.clock.connect();
        ptx.clock90.connect();
        ptx.tx_en.connect();
        ptx.tx_er.connect();
        ptx.data.connect();
        ptx.connect_all();
        prx.rxc.connect();
        prx.rxd.connect();
        prx.rx_ctl.connect();
        prx.connect_all();
        rx.clock.connect();
        rx.reset.connect();
        rx.rx_dv.connect();
        rx.rx_er.connect();
        rx.rxd.connect();
        rx.connect_all();

        let mut queue: std::collections::VecDeque<(u64, u8, bool)> = Default::default();
        for f in &frames {
            let b = beats(f);
            let n = b.len();
            for (i, (d, k)) in b.into_iter().enumerate() {
                queue.push_back((d, k, i + 1 == n));
            }
        }
        let mut col = Collector::new();
        let mut tx_frame = 0usize; // frames whose preamble the wire has seen
        let mut was_ctl = false;
        let mut wire_byte = 0usize;
        let total: usize = frames.iter().map(|f| f.len() + 30).sum::<usize>() + 200;
        tx.reset.next = true;
        rx.reset.next = true;
        for cycle in 0..total {
            if cycle == 3 {
                tx.reset.next = false;
                rx.reset.next = false;
            }
            // Stream source into MacTx (sampled at the clk0 rising edge).
            let offer = !queue.is_empty();
            if let Some(&(d, k, l)) = queue.front() {
                tx.in_data.next = d.into();
                tx.in_keep.next = (k as u64).into();
                tx.in_last.next = l;
            }
            tx.in_valid.next = offer;
            assert!(simulate(&mut tx, 1000));
            let take = offer && tx.in_ready.val();
            ptx.tx_en.next = tx.tx_en.val();
            ptx.tx_er.next = false;
            ptx.data.next = tx.txd.val();
            for phase in 0..4 {
                let c0 = phase < 2; // high in phases 0, 1
                let c90 = phase == 1 || phase == 2; // high in phases 1, 2
                tx.clock.next = c0.into();
                ptx.clock.next = c0.into();
                ptx.clock90.next = c90.into();
                assert!(simulate(&mut tx, 1000));
                assert!(simulate(&mut ptx, 1000));
                // The pins, looped back (possibly corrupted).
                let mut rxd = ptx.txd.val().to_u64();
                let ctl = ptx.tx_ctl.val();
                if phase == 0 {
                    if ctl && !was_ctl {
                        tx_frame += 1;
                        wire_byte = 0;
                    }
                    was_ctl = ctl;
                    if ctl {
                        wire_byte += 1;
                    }
                }
                if ctl && corrupt.contains(&(tx_frame - 1)) && wire_byte == 20 && phase < 2 {
                    rxd ^= 0b0100;
                }
                // MacRx samples what the RGMII receiver held before this
                // edge, so copy its outputs before clocking it.
                rx.rx_dv.next = prx.rx_dv.val();
                rx.rx_er.next = prx.rx_er.val();
                rx.rxd.next = prx.data.val();
                prx.rxd.next = rxd.into();
                prx.rx_ctl.next = ctl;
                prx.rxc.next = ptx.txc.val().into();
                rx.clock.next = ptx.txc.val().into();
                assert!(simulate(&mut prx, 1000));
                assert!(simulate(&mut rx, 1000));
                if phase == 1 && rx.out_valid.val() {
                    col.beat(
                        rx.out_data.val().to_u64(),
                        rx.out_keep.val().to_u64(),
                        rx.out_last.val(),
                        rx.out_fcs_bad.val(),
                    );
                }
            }
            if take {
                queue.pop_front();
            }
        }
        assert!(queue.is_empty());
        assert_eq!(col.frames.len(), frames.len(), "frames out");
        for (i, ((got, bad), sent)) in col.frames.iter().zip(&frames).enumerate() {
            let mut want = sent.clone();
            if want.len() < 60 {
                want.resize(60, 0);
            }
            assert_eq!(*bad, corrupt.contains(&i), "frame {i}: fcs_bad");
            if !*bad {
                assert_eq!(got, &want, "frame {i}: bytes");
            }
        }
        assert_eq!(rx.cnt_bad.val().to_u64(), corrupt.len() as u64);
        assert_eq!(tx.cnt_frames.val().to_u64(), frames.len() as u64);
    }
}
