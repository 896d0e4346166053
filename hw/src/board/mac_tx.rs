//! MAC transmit: the core's 64-bit stream (`data`, `keep`, `last`, `valid`,
//! `ready`; `docs/rtl.md`) to GMII, one byte per clock.
//!
//! Per frame: 7 × 0x55 preamble and the SFD 0xD5, the frame's bytes, zero
//! padding up to 60 bytes, the FCS (complement of the CRC-32, least
//! significant byte first), then at least 12 idle clocks (the inter-frame
//! gap) before the next preamble.
//!
//! The stream must deliver each next beat of a frame by the time the
//! current one is sent (one beat per 8 clocks); if it does not (underrun),
//! the frame is ended at once with an inverted FCS, so the receiver drops it,
//! the rest of the frame is discarded from the stream, and `cnt_underrun`
//! counts it. `cnt_frames` counts frames started.

use super::crc32::Crc32Byte;
use rust_hdl::prelude::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq, LogicState)]
pub enum TxState {
    Idle,
    Preamble,
    Data,
    Pad,
    Fcs,
    Gap,
    Discard,
}

#[derive(LogicBlock, Default)]
pub struct MacTx {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Stream side.
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    // GMII side (registered).
    pub tx_en: Signal<Out, Bit>,
    pub txd: Signal<Out, Bits<8>>,
    pub cnt_frames: Signal<Out, Bits<32>>,
    pub cnt_underrun: Signal<Out, Bits<32>>,
    state: DFF<TxState>,
    /// Bytes of the current beat still to send, byte 0 in [7:0].
    sh: DFF<Bits<64>>,
    left: DFF<Bits<4>>,
    is_last: DFF<Bit>,
    /// Preamble, gap and FCS byte counter.
    cnt: DFF<Bits<4>>,
    /// Frame bytes sent (data + pad), saturating well above 60 is not needed:
    /// only `< 60` is tested, so 11 bits wrap harmlessly for long frames.
    len: DFF<Bits<16>>,
    crc: DFF<Bits<32>>,
    fcs: DFF<Bits<32>>,
    en_q: DFF<Bit>,
    txd_q: DFF<Bits<8>>,
    frames: DFF<Bits<32>>,
    underruns: DFF<Bits<32>>,
    step: Crc32Byte,
    emit: Signal<Local, Bit>,
    bval: Signal<Local, Bits<8>>,
    len1: Signal<Local, Bits<16>>,
    new_left: Signal<Local, Bits<4>>,
}

impl Logic for MacTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, sh, left, is_last, cnt, len, crc, fcs, en_q, txd_q, frames,
            underruns
        );
        self.tx_en.next = self.en_q.q.val();
        self.txd.next = self.txd_q.q.val();
        self.cnt_frames.next = self.frames.q.val();
        self.cnt_underrun.next = self.underruns.q.val();

        self.in_ready.next = false;
        self.en_q.d.next = false;
        self.txd_q.d.next = 0.into();
        // A frame byte (data or pad) this clock: counted and CRC'd.
        self.emit.next = false;
        self.bval.next = self.sh.q.val().get_bits::<8>(0);
        self.len1.next = self.len.q.val() + 1;
        self.new_left.next = 8.into();
        if self.in_last.val() {
            self.new_left.next = self.in_keep.val();
        }

        match self.state.q.val() {
            TxState::Idle => {
                self.in_ready.next = true;
                if self.in_valid.val() {
                    self.sh.d.next = self.in_data.val();
                    self.left.d.next = self.new_left.val();
                    self.is_last.d.next = self.in_last.val();
                    self.cnt.d.next = 0.into();
                    self.len.d.next = 0.into();
                    self.crc.d.next = 0xFFFF_FFFF_u64.into();
                    self.frames.d.next = self.frames.q.val() + 1;
                    self.state.d.next = TxState::Preamble;
                }
            }
            TxState::Preamble => {
                self.en_q.d.next = true;
                self.txd_q.d.next = 0x55.into();
                self.cnt.d.next = self.cnt.q.val() + 1;
                if self.cnt.q.val() == 7 {
                    self.txd_q.d.next = 0xD5.into();
                    if self.left.q.val() == 0 {
                        self.state.d.next = TxState::Pad;
                    } else {
                        self.state.d.next = TxState::Data;
                    }
                }
            }
            TxState::Data => {
                self.emit.next = true;
                self.sh.d.next = self.sh.q.val() >> 8;
                self.left.d.next = self.left.q.val() - 1;
                if self.left.q.val() == 1 {
                    if self.is_last.q.val() {
                        if self.len1.val() < 60 {
                            self.state.d.next = TxState::Pad;
                        } else {
                            self.state.d.next = TxState::Fcs;
                        }
                    } else {
                        self.in_ready.next = true;
                        if self.in_valid.val() {
                            self.sh.d.next = self.in_data.val();
                            self.left.d.next = self.new_left.val();
                            self.is_last.d.next = self.in_last.val();
                            if self.in_last.val() & (self.in_keep.val() == 0) {
                                if self.len1.val() < 60 {
                                    self.state.d.next = TxState::Pad;
                                } else {
                                    self.state.d.next = TxState::Fcs;
                                }
                            }
                        } else {
                            // Underrun: end the frame with a bad FCS.
                            self.underruns.d.next = self.underruns.q.val() + 1;
                            self.state.d.next = TxState::Fcs;
                        }
                    }
                }
            }
            TxState::Pad => {
                self.emit.next = true;
                self.bval.next = 0.into();
                if self.len1.val() >= 60 {
                    self.state.d.next = TxState::Fcs;
                }
            }
            TxState::Fcs => {
                self.en_q.d.next = true;
                self.txd_q.d.next = self.fcs.q.val().get_bits::<8>(0);
                self.fcs.d.next = self.fcs.q.val() >> 8;
                self.cnt.d.next = self.cnt.q.val() + 1;
                if self.cnt.q.val() == 3 {
                    self.cnt.d.next = 0.into();
                    self.state.d.next = TxState::Gap;
                }
            }
            TxState::Gap => {
                self.cnt.d.next = self.cnt.q.val() + 1;
                // The GMII output is registered, so 11 clocks here plus the
                // Idle clock that loads the next beat make 12 idle bytes.
                if self.cnt.q.val() == 10 {
                    if self.is_last.q.val() {
                        self.state.d.next = TxState::Idle;
                    } else {
                        self.state.d.next = TxState::Discard;
                    }
                }
            }
            _ => {
                // Discard the rest of an underrun frame.
                self.in_ready.next = true;
                if self.in_valid.val() & self.in_last.val() {
                    self.state.d.next = TxState::Idle;
                }
            }
        }
        self.step.crc_in.next = self.crc.q.val();
        self.step.din.next = self.bval.val();
        if self.emit.val() {
            self.en_q.d.next = true;
            self.txd_q.d.next = self.bval.val();
            self.len.d.next = self.len1.val();
            self.crc.d.next = self.step.crc_out.val();
            // The FCS of the bytes so far; the last byte's write wins.
            self.fcs.d.next = !self.step.crc_out.val();
            self.cnt.d.next = 0.into();
        }
        if (self.state.q.val() == TxState::Data)
            & (self.left.q.val() == 1)
            & !self.is_last.q.val()
            & !self.in_valid.val()
        {
            // Underrun: the complement of the good FCS is never correct.
            self.fcs.d.next = self.step.crc_out.val();
        }
        if self.reset.val() {
            self.in_ready.next = false;
            self.state.d.next = TxState::Idle;
            self.en_q.d.next = false;
            self.frames.d.next = 0.into();
            self.underruns.d.next = 0.into();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::board::mac_rx::tests::crc32_table;
    use crate::testutil::{beats, tick, Rng};

    /// Sends `frames` with random gaps; returns the GMII byte bursts seen
    /// (one Vec per tx_en burst) and the idle clocks before each burst.
    fn run(frames: &[Vec<u8>], rng: &mut Rng, starve: bool) -> (Vec<Vec<u8>>, Vec<usize>) {
        let mut uut = MacTx::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.in_data.connect();
        uut.in_keep.connect();
        uut.in_last.connect();
        uut.in_valid.connect();
        uut.connect_all();
        uut.reset.next = true;
        tick!(uut);
        tick!(uut);
        uut.reset.next = false;
        let mut queue: std::collections::VecDeque<(u64, u8, bool)> = Default::default();
        for f in frames {
            let b = beats(f);
            let n = b.len();
            for (i, (d, k)) in b.into_iter().enumerate() {
                queue.push_back((d, k, i + 1 == n));
            }
        }
        let mut bursts = vec![];
        let mut gaps = vec![];
        let mut cur: Option<Vec<u8>> = None;
        let mut idle = 0usize;
        for _ in 0..(frames.iter().map(|f| f.len().max(60) + 40).sum::<usize>() * 2) {
            let hold_back = starve && rng.below(3) == 0;
            let offer = !queue.is_empty() && !hold_back;
            if offer {
                let (d, k, l) = queue[0];
                uut.in_data.next = d.into();
                uut.in_keep.next = (k as u64).into();
                uut.in_last.next = l;
            }
            uut.in_valid.next = offer;
            assert!(simulate(&mut uut, 1000));
            let take = offer && uut.in_ready.val();
            tick!(uut);
            if take {
                queue.pop_front();
            }
            if uut.tx_en.val() {
                if cur.is_none() {
                    gaps.push(idle);
                }
                cur.get_or_insert_with(Vec::new)
                    .push(uut.txd.val().to_u64() as u8);
                idle = 0;
            } else {
                if let Some(c) = cur.take() {
                    bursts.push(c);
                }
                idle += 1;
            }
        }
        (bursts, gaps)
    }

    /// What the wire must carry for `frame`.
    pub fn expected_wire(frame: &[u8]) -> Vec<u8> {
        let mut f = frame.to_vec();
        if f.len() < 60 {
            f.resize(60, 0);
        }
        let mut v = vec![0x55; 7];
        v.push(0xD5);
        v.extend_from_slice(&f);
        v.extend_from_slice(&crc32_table(&f).to_le_bytes());
        v
    }

    #[test]
    fn preamble_pad_fcs_and_gap() {
        let mut rng = Rng::new(11);
        let frames: Vec<Vec<u8>> = (0..40)
            .map(|i| {
                let len = match i {
                    0 => 1,
                    1 => 59,
                    2 => 60,
                    3 => 61,
                    4 => 64,
                    _ => 1 + rng.below(300),
                };
                rng.bytes(len)
            })
            .collect();
        let (bursts, gaps) = run(&frames, &mut rng, false);
        assert_eq!(bursts.len(), frames.len());
        for (i, (b, f)) in bursts.iter().zip(&frames).enumerate() {
            assert_eq!(b, &expected_wire(f), "frame {i}");
        }
        for g in &gaps[1..] {
            assert!(*g >= 12, "inter-frame gap {g} < 12");
        }
        // Back to back the gap is exactly the minimum.
        assert_eq!(*gaps[1..].iter().min().unwrap(), 12);
    }

    #[test]
    fn underrun_spoils_the_fcs() {
        let mut rng = Rng::new(5);
        let frames: Vec<Vec<u8>> = (0..30)
            .map(|_| {
                let n = 20 + rng.below(200);
                rng.bytes(n)
            })
            .collect();
        let (bursts, _) = run(&frames, &mut rng, true);
        let mut good = 0;
        for b in &bursts {
            assert_eq!(&b[..8], &[0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xD5]);
            let body = &b[8..b.len() - 4];
            let fcs = u32::from_le_bytes(b[b.len() - 4..].try_into().unwrap());
            let ok = crc32_table(body) == fcs;
            if ok {
                // A good burst is exactly one whole frame (maybe padded).
                assert!(frames.iter().any(|f| expected_wire(f) == *b));
                good += 1;
            }
        }
        assert!(
            good > 0 && good < bursts.len(),
            "good {good} of {}",
            bursts.len()
        );
    }
}
