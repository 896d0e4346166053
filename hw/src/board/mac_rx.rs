//! MAC receive: GMII (one byte per clock of the PHY's receive clock) to the
//! core's 64-bit stream convention (`docs/rtl.md`): `data[63:0]` with byte 0
//! in `data[7:0]`, `keep` = byte count of a `last` beat, `valid`, and
//! `fcs_bad` on the `last` beat. No `ready`: a receiver cannot be stalled.
//!
//! * The preamble (any number of 0x55) and the SFD (0xD5) are stripped; a
//!   frame whose first non-preamble byte is not the SFD is ignored.
//! * The CRC-32 runs over every byte after the SFD, FCS included, and must
//!   end at [`RESIDUE`](super::crc32::RESIDUE); the FCS is held back four
//!   bytes and not forwarded.
//! * `fcs_bad` is set on the last beat when the CRC is wrong, when the PHY
//!   flagged an error (`rx_er` during the frame), or when the frame had fewer
//!   than 4 bytes after the SFD (then the beat has `keep == 0`).
//! * A beat is emitted when its 9th byte arrives or at the end of the frame,
//!   so the last beat always carries `last`.
//! * `cnt_frames` / `cnt_bad` count frames seen and frames flagged bad.

use super::crc32::{Crc32Byte, RESIDUE};
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum RxState {
    Idle,
    Preamble,
    Data,
    Drop,
}

#[derive(LogicBlock)]
pub struct MacRx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // GMII side.
    pub rx_dv: Signal<In, Bit>,
    pub rx_er: Signal<In, Bit>,
    pub rxd: Signal<In, Bits<8>>,
    // Stream side.
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_fcs_bad: Signal<Out, Bit>,
    pub cnt_frames: Signal<Out, Bits<32>>,
    pub cnt_bad: Signal<Out, Bits<32>>,
    state: DFF<RxState>,
    crc: DFF<Bits<32>>,
    /// The last four bytes received (the FCS candidate), newest in [31:24].
    hold: DFF<Bits<32>>,
    /// Bytes in `hold` (saturates at 4).
    nheld: DFF<Bits<3>>,
    /// Packer: byte `k` of the beat is written into lane `k` (`n` of them
    /// are valid, the lanes above are zero), so a beat leaves as it is,
    /// without a realigning shift (ECP5: a clock enable per lane instead of
    /// an 8-way multiplexer per output bit).
    acc: DFF<Bits<64>>,
    n: DFF<Bits<4>>,
    err: DFF<Bit>,
    o_data: DFF<Bits<64>>,
    o_keep: DFF<Bits<4>>,
    o_last: DFF<Bit>,
    o_valid: DFF<Bit>,
    o_bad: DFF<Bit>,
    frames: DFF<Bits<32>>,
    bad: DFF<Bits<32>>,
    step: Crc32Byte,
    residue: Constant<Bits<32>>,
    push: Signal<Local, Bit>,
    pbyte: Signal<Local, Bits<8>>,
    fcs_bad: Signal<Local, Bit>,
}

impl Default for MacRx {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            rx_dv: Default::default(),
            rx_er: Default::default(),
            rxd: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            out_valid: Default::default(),
            out_fcs_bad: Default::default(),
            cnt_frames: Default::default(),
            cnt_bad: Default::default(),
            state: Default::default(),
            crc: Default::default(),
            hold: Default::default(),
            nheld: Default::default(),
            acc: Default::default(),
            n: Default::default(),
            err: Default::default(),
            o_data: Default::default(),
            o_keep: Default::default(),
            o_last: Default::default(),
            o_valid: Default::default(),
            o_bad: Default::default(),
            frames: Default::default(),
            bad: Default::default(),
            step: Default::default(),
            residue: Constant::new((RESIDUE as u64).into()),
            push: Default::default(),
            pbyte: Default::default(),
            fcs_bad: Default::default(),
        }
    }
}

impl Logic for MacRx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, crc, hold, nheld, acc, n, err, o_data, o_keep, o_last, o_valid,
            o_bad, frames, bad
        );
        self.out_data.next = self.o_data.q.val();
        self.out_keep.next = self.o_keep.q.val();
        self.out_last.next = self.o_last.q.val();
        self.out_valid.next = self.o_valid.q.val();
        self.out_fcs_bad.next = self.o_bad.q.val();
        self.cnt_frames.next = self.frames.q.val();
        self.cnt_bad.next = self.bad.q.val();

        self.step.crc_in.next = self.crc.q.val();
        self.step.din.next = self.rxd.val();
        self.o_valid.d.next = false;
        self.o_last.d.next = false;
        self.o_bad.d.next = false;
        self.push.next = false;
        self.pbyte.next = self.hold.q.val().get_bits::<8>(0);
        self.fcs_bad.next =
            (self.crc.q.val() != self.residue.val()) | self.err.q.val() | (self.nheld.q.val() != 4);

        match self.state.q.val() {
            RxState::Idle => {
                self.crc.d.next = 0xFFFF_FFFF_u64.into();
                self.nheld.d.next = 0.into();
                self.n.d.next = 0.into();
                self.err.d.next = false;
                self.acc.d.next = 0.into();
                if self.rx_dv.val() {
                    if self.rxd.val() == 0x55 {
                        self.state.d.next = RxState::Preamble;
                    } else if self.rxd.val() == 0xD5 {
                        self.state.d.next = RxState::Data;
                    } else {
                        self.state.d.next = RxState::Drop;
                    }
                }
            }
            RxState::Preamble => {
                if !self.rx_dv.val() {
                    self.state.d.next = RxState::Idle;
                } else if self.rxd.val() == 0xD5 {
                    self.state.d.next = RxState::Data;
                } else if self.rxd.val() != 0x55 {
                    self.state.d.next = RxState::Drop;
                }
            }
            RxState::Data => {
                if self.rx_dv.val() {
                    self.crc.d.next = self.step.crc_out.val();
                    self.hold.d.next =
                        (self.hold.q.val() >> 8) | (bit_cast::<32, 8>(self.rxd.val()) << 24);
                    if self.nheld.q.val() == 4 {
                        self.push.next = true;
                    } else {
                        self.nheld.d.next = self.nheld.q.val() + 1;
                    }
                    if self.rx_er.val() {
                        self.err.d.next = true;
                    }
                } else {
                    // End of frame: flush the packer as the last beat.
                    self.o_valid.d.next = true;
                    self.o_last.d.next = true;
                    self.o_data.d.next = self.acc.q.val();
                    self.o_keep.d.next = self.n.q.val();
                    self.o_bad.d.next = self.fcs_bad.val();
                    self.frames.d.next = self.frames.q.val() + 1;
                    if self.fcs_bad.val() {
                        self.bad.d.next = self.bad.q.val() + 1;
                    }
                    self.state.d.next = RxState::Idle;
                }
            }
            _ => {
                if !self.rx_dv.val() {
                    self.state.d.next = RxState::Idle;
                }
            }
        }
        if self.push.val() {
            if self.n.q.val() == 8 {
                // A 9th byte: the full beat leaves (not last: more follows).
                self.o_valid.d.next = true;
                self.o_data.d.next = self.acc.q.val();
                self.o_keep.d.next = 8.into();
                self.n.d.next = 1.into();
                self.acc.d.next = bit_cast::<64, 8>(self.pbyte.val());
            } else {
                self.n.d.next = self.n.q.val() + 1;
                for i in 0..8 {
                    if self.n.q.val() == i {
                        self.acc.d.next =
                            self.acc.q.val() | (bit_cast::<64, 8>(self.pbyte.val()) << (8 * i));
                    }
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = RxState::Idle;
            self.o_valid.d.next = false;
            self.frames.d.next = 0.into();
            self.bad.d.next = 0.into();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::board::crc32::step;
    use crate::testutil::{tick, Rng};

    /// A table-driven CRC-32 (independent of `crc32::step`'s bit loop).
    pub fn crc32_table(data: &[u8]) -> u32 {
        let mut table = [0u32; 256];
        for (i, t) in table.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *t = c;
        }
        !data.iter().fold(!0u32, |c, &b| {
            table[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8)
        })
    }

    /// Preamble + SFD + frame + FCS, as the bytes a PHY delivers.
    pub fn wire_bytes(frame: &[u8]) -> Vec<u8> {
        let mut v = vec![0x55; 7];
        v.push(0xD5);
        v.extend_from_slice(frame);
        v.extend_from_slice(&crc32_table(frame).to_le_bytes());
        v
    }

    #[test]
    fn table_crc_agrees_with_step() {
        let d = b"The quick brown fox jumps over the lazy dog";
        assert_eq!(crc32_table(d), 0x414F_A339);
        assert_eq!(!d.iter().fold(!0u32, |c, &b| step(c, b)), 0x414F_A339);
    }

    /// Collects frames from the stream side: (bytes, fcs_bad).
    pub struct Collector {
        cur: Vec<u8>,
        pub frames: Vec<(Vec<u8>, bool)>,
    }
    impl Collector {
        pub fn new() -> Self {
            Collector {
                cur: vec![],
                frames: vec![],
            }
        }
        pub fn beat(&mut self, data: u64, keep: u64, last: bool, bad: bool) {
            let b = data.to_le_bytes();
            if last {
                assert!(keep <= 8);
                // The octets past `keep` are zero (the packer's lanes above
                // `n` are cleared), as the realigning shift left them.
                assert!(
                    b[keep as usize..].iter().all(|&x| x == 0),
                    "last beat {data:#018x}: octets past keep {keep} not zero"
                );
                self.cur.extend_from_slice(&b[..keep as usize]);
                self.frames.push((std::mem::take(&mut self.cur), bad));
            } else {
                assert_eq!(keep, 8, "non-last beat with keep != 8");
                self.cur.extend_from_slice(&b);
            }
        }
    }

    #[test]
    fn frames_fcs_and_errors() {
        let mut uut = MacRx::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.rx_dv.connect();
        uut.rx_er.connect();
        uut.rxd.connect();
        uut.connect_all();
        let mut rng = Rng::new(3);
        uut.reset.next = true;
        tick!(uut);
        tick!(uut);
        uut.reset.next = false;
        let mut col = Collector::new();
        let mut expect = vec![];
        for i in 0..120 {
            let len = match i {
                0 => 0,
                1..=9 => i,
                _ => 10 + rng.below(200),
            };
            let frame = rng.bytes(len);
            let mut wire = wire_bytes(&frame);
            // Every 5th frame corrupted in one byte after the SFD, every 7th
            // with rx_er on one byte.
            let corrupt = i % 5 == 3;
            let er_at = if i % 7 == 4 {
                Some(8 + rng.below(len + 4))
            } else {
                None
            };
            if corrupt {
                let k = 8 + rng.below(len + 4);
                wire[k] ^= 1 << rng.below(8);
            }
            // A shorter preamble sometimes (PHYs may eat preamble bytes).
            let skip = if i % 3 == 0 { 2 } else { 0 };
            let bad = corrupt || er_at.is_some();
            expect.push((frame.clone(), bad));
            for (k, &b) in wire.iter().enumerate().skip(skip) {
                uut.rx_dv.next = true;
                uut.rx_er.next = Some(k) == er_at;
                uut.rxd.next = (b as u64).into();
                tick!(uut);
                if uut.out_valid.val() {
                    col.beat(
                        uut.out_data.val().to_u64(),
                        uut.out_keep.val().to_u64(),
                        uut.out_last.val(),
                        uut.out_fcs_bad.val(),
                    );
                }
            }
            uut.rx_dv.next = false;
            uut.rx_er.next = false;
            for _ in 0..(1 + rng.below(12)) {
                tick!(uut);
                if uut.out_valid.val() {
                    col.beat(
                        uut.out_data.val().to_u64(),
                        uut.out_keep.val().to_u64(),
                        uut.out_last.val(),
                        uut.out_fcs_bad.val(),
                    );
                }
            }
        }
        assert_eq!(col.frames.len(), expect.len());
        for (i, (got, want)) in col.frames.iter().zip(&expect).enumerate() {
            assert_eq!(got.1, want.1, "frame {i}: fcs_bad");
            if !want.1 {
                assert_eq!(got.0, want.0, "frame {i}: bytes");
            }
        }
        assert_eq!(uut.cnt_frames.val().to_u64(), 120);
        let nbad = expect.iter().filter(|e| e.1).count() as u64;
        assert_eq!(uut.cnt_bad.val().to_u64(), nbad);
    }

    #[test]
    fn runt_is_flagged() {
        let mut uut = MacRx::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.rx_dv.connect();
        uut.rx_er.connect();
        uut.rxd.connect();
        uut.connect_all();
        for &b in &[0x55u8, 0x55, 0xD5, 0x01, 0x02] {
            uut.rx_dv.next = true;
            uut.rxd.next = (b as u64).into();
            tick!(uut);
        }
        uut.rx_dv.next = false;
        tick!(uut);
        assert!(uut.out_valid.val() && uut.out_last.val() && uut.out_fcs_bad.val());
        assert_eq!(uut.out_keep.val().to_u64(), 0);
    }
}
