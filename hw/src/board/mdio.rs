//! MDIO (IEEE 802.3 clause 22) management of one Marvell 88E1512 PHY, in the
//! core clock. After `reset` the block:
//! 1. holds the PHY in hardware reset (`phy_rst_n` low) for `wait` clocks,
//!    releases it and waits `wait` clocks more;
//! 2. selects register page 2 (reg 22 = 2), reads reg 21 (MAC specific
//!    control 2) and writes it back with bit 5 set (RGMII receive clock
//!    delay on) and bit 4 cleared (transmit clock delay off: the FPGA
//!    shifts `txc` by 90°), selects page 0, and sets reg 0 bit 15 (software
//!    reset, which applies the change) keeping its other bits;
//! 3. then polls reg 17 (copper specific status 1) every `wait` clocks:
//!    `link` = bit 10 (real-time link), `speed` = bits 15:14 (2 = 1000).
//!
//! [`PhyManager::basic`] skips step 2 and polls the clause-22 basic status
//! register (reg 1) instead: `link` = bit 2 (link status), `speed` = 0
//! (not known from the standard registers). It writes nothing, so it suits
//! a PHY whose RGMII delays are set by its board straps and whose vendor
//! registers are not those of the 88E1512 (the ECPIX-5 top).
//!
//! Register meanings are those of the 88E1512 datasheet (Marvell, "88E1512
//! Integrated 10/100/1000 Mbps Energy Efficient Ethernet Transceiver",
//! register descriptions of pages 0 and 2). MDC = core clock / (2 × `half`).
//! Each transaction is one 64-bit clause-22 frame: 32 preamble ones, start
//! 01, opcode (01 write, 10 read), PHY address, register, turnaround, data;
//! the output changes after MDC falls, the input is sampled just before
//! MDC rises.

use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum MdioState {
    HoldReset,
    WaitPhy,
    Start,
    Shift,
    Next,
    Poll,
}

#[derive(LogicBlock)]
pub struct PhyManager {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub mdc: Signal<Out, Bit>,
    pub mdio_out: Signal<Out, Bit>,
    pub mdio_oe: Signal<Out, Bit>,
    pub mdio_in: Signal<In, Bit>,
    pub phy_rst_n: Signal<Out, Bit>,
    pub init_done: Signal<Out, Bit>,
    pub link: Signal<Out, Bit>,
    pub speed: Signal<Out, Bits<2>>,
    phy_addr: Constant<Bits<5>>,
    interval: Constant<Bits<24>>,
    half: Constant<Bits<8>>,
    /// The program step after reset: 0 (delays, then poll) or 6 (poll only).
    first_op: Constant<Bits<3>>,
    /// The polled register, and where `link` and `speed` are in it.
    status_reg: Constant<Bits<5>>,
    link_mask: Constant<Bits<16>>,
    speed_mask: Constant<Bits<2>>,
    state: DFF<MdioState>,
    timer: DFF<Bits<24>>,
    div: DFF<Bits<8>>,
    mdc_q: DFF<Bit>,
    /// Step of the init/poll program (0..=6).
    op: DFF<Bits<3>>,
    sh: DFF<Bits<64>>,
    /// Bits of `sh` still to shift; `drive` = how many of them we drive.
    nbits: DFF<Bits<7>>,
    drive: DFF<Bits<7>>,
    rd: DFF<Bits<16>>,
    value: DFF<Bits<16>>,
    done: DFF<Bit>,
    link_q: DFF<Bit>,
    speed_q: DFF<Bits<2>>,
    rst_q: DFF<Bit>,
    is_read: Signal<Local, Bit>,
    regad: Signal<Local, Bits<5>>,
    wdata: Signal<Local, Bits<16>>,
    frame: Signal<Local, Bits<64>>,
}

impl PhyManager {
    /// `phy_addr`: the PHY's MDIO address; `wait`: reset/poll interval in
    /// clocks; `half`: half an MDC period in clocks.
    pub fn new(phy_addr: u64, wait: u64, half: u64) -> Self {
        Self::program(phy_addr, wait, half, 0, 17, 1 << 10, 3)
    }

    /// As [`PhyManager::new`], without the 88E1512 delay setup: reset, then
    /// poll reg 1 (module doc).
    pub fn basic(phy_addr: u64, wait: u64, half: u64) -> Self {
        Self::program(phy_addr, wait, half, 6, 1, 1 << 2, 0)
    }

    fn program(
        phy_addr: u64,
        wait: u64,
        half: u64,
        first_op: u64,
        status_reg: u64,
        link_mask: u64,
        speed_mask: u64,
    ) -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            mdc: Default::default(),
            mdio_out: Default::default(),
            mdio_oe: Default::default(),
            mdio_in: Default::default(),
            phy_rst_n: Default::default(),
            init_done: Default::default(),
            link: Default::default(),
            speed: Default::default(),
            phy_addr: Constant::new(phy_addr.into()),
            interval: Constant::new(wait.into()),
            half: Constant::new(half.into()),
            first_op: Constant::new(first_op.into()),
            status_reg: Constant::new(status_reg.into()),
            link_mask: Constant::new(link_mask.into()),
            speed_mask: Constant::new(speed_mask.into()),
            state: Default::default(),
            timer: Default::default(),
            div: Default::default(),
            mdc_q: Default::default(),
            op: Default::default(),
            sh: Default::default(),
            nbits: Default::default(),
            drive: Default::default(),
            rd: Default::default(),
            value: Default::default(),
            done: Default::default(),
            link_q: Default::default(),
            speed_q: Default::default(),
            rst_q: Default::default(),
            is_read: Default::default(),
            regad: Default::default(),
            wdata: Default::default(),
            frame: Default::default(),
        }
    }
}

impl Logic for PhyManager {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, timer, div, mdc_q, op, sh, nbits, drive, rd, value, done, link_q,
            speed_q, rst_q
        );
        self.mdc.next = self.mdc_q.q.val();
        self.mdio_out.next = self.sh.q.val().get_bit(63);
        self.mdio_oe.next = (self.state.q.val() == MdioState::Shift) & (self.drive.q.val() != 0);
        self.phy_rst_n.next = self.rst_q.q.val();
        self.init_done.next = self.done.q.val();
        self.link.next = self.link_q.q.val();
        self.speed.next = self.speed_q.q.val();

        // The program: op -> (read?, register, data to write).
        self.is_read.next = false;
        self.regad.next = 0.into();
        self.wdata.next = 0.into();
        if self.op.q.val() == 0 {
            self.regad.next = 22.into();
            self.wdata.next = 2.into();
        } else if self.op.q.val() == 1 {
            self.is_read.next = true;
            self.regad.next = 21.into();
        } else if self.op.q.val() == 2 {
            self.regad.next = 21.into();
            self.wdata.next = (self.value.q.val() | 0x20) & 0xFFEF;
        } else if self.op.q.val() == 3 {
            self.regad.next = 22.into();
        } else if self.op.q.val() == 4 {
            self.is_read.next = true;
        } else if self.op.q.val() == 5 {
            self.wdata.next = self.value.q.val() | 0x8000;
        } else {
            self.is_read.next = true;
            self.regad.next = self.status_reg.val();
        }
        // 32 ones, 01, opcode, PHY address, register, turnaround 10, data.
        self.frame.next = (bit_cast::<64, 16>(0xFFFF.into()) << 48)
            | (bit_cast::<64, 16>(0xFFFF.into()) << 32)
            | (bit_cast::<64, 2>(1.into()) << 30)
            | (bit_cast::<64, 5>(self.phy_addr.val()) << 23)
            | (bit_cast::<64, 5>(self.regad.val()) << 18)
            | (bit_cast::<64, 2>(2.into()) << 16)
            | bit_cast::<64, 16>(self.wdata.val());
        if self.is_read.val() {
            self.frame.next = self.frame.val() | (bit_cast::<64, 2>(2.into()) << 28);
        } else {
            self.frame.next = self.frame.val() | (bit_cast::<64, 2>(1.into()) << 28);
        }

        match self.state.q.val() {
            MdioState::HoldReset => {
                self.rst_q.d.next = false;
                self.timer.d.next = self.timer.q.val() + 1;
                if self.timer.q.val() == self.interval.val() {
                    self.timer.d.next = 0.into();
                    self.rst_q.d.next = true;
                    self.state.d.next = MdioState::WaitPhy;
                }
            }
            MdioState::WaitPhy => {
                self.timer.d.next = self.timer.q.val() + 1;
                if self.timer.q.val() == self.interval.val() {
                    self.timer.d.next = 0.into();
                    self.state.d.next = MdioState::Start;
                }
            }
            MdioState::Start => {
                self.sh.d.next = self.frame.val();
                self.nbits.d.next = 64.into();
                if self.is_read.val() {
                    self.drive.d.next = 46.into();
                } else {
                    self.drive.d.next = 64.into();
                }
                self.div.d.next = 0.into();
                self.mdc_q.d.next = false;
                self.state.d.next = MdioState::Shift;
            }
            MdioState::Shift => {
                self.div.d.next = self.div.q.val() + 1;
                if self.div.q.val() == self.half.val() - 1 {
                    // End of the low half: sample, then raise MDC.
                    self.rd.d.next =
                        (self.rd.q.val() << 1) | bit_cast::<16, 1>(self.mdio_in.val().into());
                    self.mdc_q.d.next = true;
                }
                if self.div.q.val() == (self.half.val() << 1) - 1 {
                    // End of the bit: MDC falls, next bit out.
                    self.div.d.next = 0.into();
                    self.mdc_q.d.next = false;
                    self.sh.d.next = self.sh.q.val() << 1;
                    self.nbits.d.next = self.nbits.q.val() - 1;
                    if self.drive.q.val() != 0 {
                        self.drive.d.next = self.drive.q.val() - 1;
                    }
                    if self.nbits.q.val() == 1 {
                        self.state.d.next = MdioState::Next;
                    }
                }
            }
            MdioState::Next => {
                if self.is_read.val() {
                    self.value.d.next = self.rd.q.val();
                }
                if self.op.q.val() == 6 {
                    self.link_q.d.next = (self.rd.q.val() & self.link_mask.val()) != 0;
                    self.speed_q.d.next = self.rd.q.val().get_bits::<2>(14) & self.speed_mask.val();
                    self.done.d.next = true;
                    self.state.d.next = MdioState::Poll;
                } else {
                    self.op.d.next = self.op.q.val() + 1;
                    self.state.d.next = MdioState::Start;
                }
            }
            _ => {
                self.timer.d.next = self.timer.q.val() + 1;
                if self.timer.q.val() == self.interval.val() {
                    self.timer.d.next = 0.into();
                    self.state.d.next = MdioState::Start;
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = MdioState::HoldReset;
            self.timer.d.next = 0.into();
            self.op.d.next = self.first_op.val();
            self.rst_q.d.next = false;
            self.mdc_q.d.next = false;
            self.done.d.next = false;
            self.link_q.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tick;

    /// A clause-22 PHY model with pages: decodes frames from MDC/MDIO and
    /// answers reads, bit-level, as the 88E1512 would.
    struct PhyModel {
        regs: std::collections::HashMap<(u16, u8), u16>,
        bits: Vec<bool>,
        /// Reading: the value and the rises since the header.
        reply: Option<(u16, usize)>,
        /// Writing: the register whose turnaround + data are being collected.
        collect: Option<u8>,
    }
    impl PhyModel {
        fn page(&self) -> u16 {
            *self.regs.get(&(0, 22)).unwrap_or(&0)
        }
        fn key(&self, reg: u8) -> (u16, u8) {
            (if reg == 22 { 0 } else { self.page() }, reg)
        }
        /// Called at each MDC rising edge with the line value.
        fn rise(&mut self, line: bool) {
            if let Some((v, n)) = self.reply {
                self.reply = if n + 1 == 18 { None } else { Some((v, n + 1)) };
                return;
            }
            self.bits.push(line);
            let n = self.bits.len();
            let val = |s: &[bool]| s.iter().fold(0u16, |a, &b| (a << 1) | b as u16);
            if let Some(reg) = self.collect {
                if n == 18 {
                    let k = self.key(reg);
                    self.regs.insert(k, val(&self.bits[2..]));
                    self.collect = None;
                    self.bits.clear();
                }
                return;
            }
            // 32 ones, then start 01, opcode, address, register.
            if n >= 46
                && self.bits[n - 46..n - 14].iter().all(|&b| b)
                && !self.bits[n - 14]
                && self.bits[n - 13]
            {
                let f = self.bits[n - 14..].to_vec();
                let op = val(&f[2..4]);
                assert_eq!(val(&f[4..9]), 0, "PHY address");
                let reg = val(&f[9..14]) as u8;
                self.bits.clear();
                if op == 2 {
                    let v = *self.regs.get(&self.key(reg)).unwrap_or(&0);
                    self.reply = Some((v, 0));
                } else {
                    assert_eq!(op, 1);
                    self.collect = Some(reg);
                }
            }
        }
        /// The line as driven by the PHY (None = released).
        fn drive(&self) -> Option<bool> {
            match self.reply {
                Some((_, 0)) | None => None,
                Some((_, 1)) => Some(false),
                Some((v, n)) => Some((v >> (15 - (n - 2))) & 1 != 0),
            }
        }
    }

    #[test]
    fn init_sequence_and_link_poll() {
        let mut uut = PhyManager::new(0, 20, 3);
        uut.clock.connect();
        uut.reset.connect();
        uut.mdio_in.connect();
        uut.connect_all();
        let mut phy = PhyModel {
            regs: Default::default(),
            bits: vec![],
            reply: None,
            collect: None,
        };
        phy.regs.insert((2, 21), 0x1056); // TX delay on, RX delay off
        phy.regs.insert((0, 0), 0x1140);
        phy.regs.insert((0, 17), 0x8C00); // 1000 Mb/s, link up
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut mdc = false;
        let mut saw_rst_low = false;
        for _ in 0..20_000 {
            saw_rst_low |= !uut.phy_rst_n.val();
            let line = if uut.mdio_oe.val() {
                uut.mdio_out.val()
            } else {
                phy.drive().unwrap_or(true) // pull-up
            };
            uut.mdio_in.next = line;
            tick!(uut);
            if uut.mdc.val() && !mdc {
                phy.rise(line);
            }
            mdc = uut.mdc.val();
            if uut.init_done.val() {
                break;
            }
        }
        assert!(saw_rst_low);
        assert!(uut.init_done.val(), "init did not finish");
        assert_eq!(phy.regs[&(2, 21)], (0x1056 | 0x20) & !0x10);
        assert_eq!(phy.regs[&(0, 22)], 0);
        assert_eq!(phy.regs[&(0, 0)], 0x1140 | 0x8000);
        assert!(uut.link.val());
        assert_eq!(uut.speed.val().to_u64(), 2);
    }

    /// `basic`: reset, then reg 1 polled (link = bit 2, speed 0); nothing
    /// written.
    #[test]
    fn basic_polls_bmsr_and_writes_nothing() {
        let mut uut = PhyManager::basic(0, 20, 3);
        uut.clock.connect();
        uut.reset.connect();
        uut.mdio_in.connect();
        uut.connect_all();
        let mut phy = PhyModel {
            regs: Default::default(),
            bits: vec![],
            reply: None,
            collect: None,
        };
        phy.regs.insert((0, 1), 0x796D); // link up (bit 2), AN complete
        phy.regs.insert((0, 17), 0x0000); // not read in this mode
        let before = phy.regs.clone();
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut mdc = false;
        for _ in 0..20_000 {
            let line = if uut.mdio_oe.val() {
                uut.mdio_out.val()
            } else {
                phy.drive().unwrap_or(true)
            };
            uut.mdio_in.next = line;
            tick!(uut);
            if uut.mdc.val() && !mdc {
                phy.rise(line);
            }
            mdc = uut.mdc.val();
            if uut.init_done.val() {
                break;
            }
        }
        assert!(uut.init_done.val(), "first poll did not finish");
        assert_eq!(phy.regs, before, "no register written");
        assert!(uut.link.val());
        assert_eq!(uut.speed.val().to_u64(), 0);
    }
}
