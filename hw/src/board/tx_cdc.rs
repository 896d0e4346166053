//! Clock-domain crossing of a MAC transmit stream (`data`, `keep`, `last`,
//! `valid`, `ready`; docs/rtl.md) from the core clock (62.5 MHz) into the
//! RGMII transmit clock (125 MHz), in front of [`super::mac_tx::MacTx`].
//!
//! The MAC must never run dry inside a frame: it sends one octet per
//! transmit clock and cannot pause, and an underrun mid-frame ends the frame
//! with a bad FCS (`MacTx`). The core's stream can pause inside a frame
//! (`valid` low: the UDP bridge and the TX datapath wait for DMA reads), so
//! a fixed start threshold of a few beats is not enough. The FIFO therefore
//! forwards a frame to the MAC only once it holds
//! * the whole frame (store-and-forward: every frame of up to
//!   [`START_BEATS`] × 8 = 3072 octets, so every standard frame), or
//! * its first [`START_BEATS`] beats (a jumbo frame, up to 9000 octets, that
//!   does not fit): from then on the MAC drains one beat per 64 ns (8
//!   transmit clocks) while the source refills at up to 8 octets per core
//!   clock (4 Gb/s); the 384 stored beats let the source pause for up to
//!   384 × 64 ns = 24.6 µs in total inside the rest of the frame.
//!
//! Mechanism: the write side counts "frame ready" tokens (one per frame, at
//! its last beat or at its [`START_BEATS`]-th beat, whichever comes first);
//! the count crosses into the transmit clock through a handshake
//! synchroniser (rust-hdl `VectorSynchronizer`); the read side offers a
//! frame's first beat to the MAC only while it has seen more tokens than
//! frames it started. Beats inside a started frame pass as soon as they are
//! in the FIFO. The FIFO is rust-hdl's `AsynchronousFIFO` of 512 entries ×
//! {last, keep, data} (69 bits: two DP16KD block RAMs on the ECP5).
//!
//! Reset, per domain: `wr_reset` (core clock) stops writes and clears the
//! token count; `rd_reset` (transmit clock) clears the read side and drains
//! the FIFO (a frame cut off by a reset never reaches the MAC, which would
//! otherwise glue its head to the next frame under a good FCS). The write
//! side stays stopped until the read side has finished draining (`draining`,
//! synchronised back into the core clock), so no beat of a new frame is
//! drained. rust-hdl's asynchronous FIFO has no reset port of its own (its
//! pointers start from their `initial` values, which the ECP5 bitstream
//! sets).

use rust_hdl::prelude::*;

/// Beats a frame that does not end earlier must have in the FIFO before
/// the MAC may start it (3072 octets; at most the FIFO's 512 entries minus
/// room for the pointer synchronisers' lag).
pub const START_BEATS: u64 = 384;

#[derive(LogicBlock, Default)]
pub struct TxCdc {
    // Write side: core clock.
    pub wr_clock: Signal<In, Clock>,
    pub wr_reset: Signal<In, Bit>,
    pub in_data: Signal<In, Bits<64>>,
    pub in_keep: Signal<In, Bits<4>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    // Read side: transmit clock.
    pub rd_clock: Signal<In, Clock>,
    pub rd_reset: Signal<In, Bit>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    fifo: AsynchronousFIFO<Bits<69>, 9, 10, 1>,
    // Write side state.
    /// Frame-ready tokens issued (mod 2^16).
    tokens: DFF<Bits<16>>,
    /// Beats of the current frame written so far (saturates at START_BEATS).
    wbeats: DFF<Bits<10>>,
    /// The current frame's token has been issued.
    wtok: DFF<Bit>,
    /// The read side is draining after its reset (synchronised).
    drain_seen: BitSynchronizer,
    tok_sync: VectorSynchronizer<Bits<16>>,
    // Read side state.
    /// Frames started (first beat handed to the MAC), mod 2^16.
    started: DFF<Bits<16>>,
    /// Inside a frame: its first beat was handed over, its last not yet.
    in_frame: DFF<Bit>,
    draining: DFF<Bit>,
    word: Signal<Local, Bits<69>>,
    wr_ok: Signal<Local, Bit>,
    push: Signal<Local, Bit>,
    pop: Signal<Local, Bit>,
    may_start: Signal<Local, Bit>,
}

impl Logic for TxCdc {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, wr_clock, tokens, wbeats, wtok);
        dff_setup!(self, rd_clock, started, in_frame, draining);
        self.fifo.write_clock.next = self.wr_clock.val();
        self.fifo.read_clock.next = self.rd_clock.val();
        self.drain_seen.clock.next = self.wr_clock.val();
        self.tok_sync.clock_in.next = self.wr_clock.val();
        self.tok_sync.clock_out.next = self.rd_clock.val();

        // Write side.
        self.word.next =
            bit_cast::<69, 64>(self.in_data.val()) | (bit_cast::<69, 4>(self.in_keep.val()) << 64);
        self.word.next = self.word.val().replace_bit(68, self.in_last.val());
        self.fifo.data_in.next = self.word.val();
        self.drain_seen.sig_in.next = self.draining.q.val();
        self.wr_ok.next = !self.wr_reset.val() & !self.drain_seen.sig_out.val();
        self.in_ready.next = self.wr_ok.val() & !self.fifo.full.val();
        self.push.next = self.in_valid.val() & self.in_ready.val();
        self.fifo.write.next = self.push.val();
        if self.push.val() {
            if self.in_last.val() {
                self.wbeats.d.next = 0.into();
                self.wtok.d.next = false;
                if !self.wtok.q.val() {
                    self.tokens.d.next = self.tokens.q.val() + 1;
                }
            } else {
                // 384 = START_BEATS (hdl_gen takes literals, not constants).
                if self.wbeats.q.val() != 384 {
                    self.wbeats.d.next = self.wbeats.q.val() + 1;
                }
                if (self.wbeats.q.val() == 383) & !self.wtok.q.val() {
                    self.tokens.d.next = self.tokens.q.val() + 1;
                    self.wtok.d.next = true;
                }
            }
        }
        if self.wr_reset.val() {
            self.tokens.d.next = 0.into();
            self.wbeats.d.next = 0.into();
            self.wtok.d.next = false;
        }
        self.tok_sync.sig_in.next = self.tokens.q.val();
        self.tok_sync.send.next = !self.tok_sync.busy.val();

        // Read side.
        self.out_data.next = self.fifo.data_out.val().get_bits::<64>(0);
        self.out_keep.next = self.fifo.data_out.val().get_bits::<4>(64);
        self.out_last.next = self.fifo.data_out.val().get_bit(68);
        self.may_start.next = self.tok_sync.sig_out.val() != self.started.q.val();
        self.out_valid.next = !self.fifo.empty.val()
            & (self.in_frame.q.val() | self.may_start.val())
            & !self.draining.q.val();
        self.pop.next = self.out_valid.val() & self.out_ready.val();
        if self.pop.val() {
            if !self.in_frame.q.val() {
                self.started.d.next = self.started.q.val() + 1;
            }
            self.in_frame.d.next = !self.fifo.data_out.val().get_bit(68);
        }
        if self.draining.q.val() {
            // Pop whatever is left; done once empty and out of reset.
            self.pop.next = !self.fifo.empty.val();
            if !self.rd_reset.val() & self.fifo.empty.val() {
                self.draining.d.next = false;
            }
        }
        self.fifo.read.next = self.pop.val();
        if self.rd_reset.val() {
            self.draining.d.next = true;
            self.started.d.next = 0.into();
            self.in_frame.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::mac_rx::tests::crc32_table;
    use crate::board::mac_tx::MacTx;
    use crate::testutil::{beats, Rng};

    /// TxCdc → MacTx with the write (core) clock at 16 ns and the read
    /// (transmit) clock at 8 ns × (1 + ppm/1e6), independent phases; the
    /// source offers the frames' beats back to back, pausing inside frames
    /// at random when `pauses` (after 1 in 32 beats, for 50–299 core
    /// clocks: far longer than the 4 core clocks the MAC takes per beat, so
    /// a FIFO that let the MAC start early would underrun). Returns the GMII bursts (one per `tx_en`
    /// run), the idle clocks before each and the MAC's underrun count.
    fn run(
        frames: &[Vec<u8>],
        ppm: i64,
        pauses: bool,
        rng: &mut Rng,
    ) -> (Vec<Vec<u8>>, Vec<usize>, u64) {
        let mut cdc = TxCdc::default();
        let mut mac = MacTx::default();
        cdc.wr_clock.connect();
        cdc.wr_reset.connect();
        cdc.in_data.connect();
        cdc.in_keep.connect();
        cdc.in_last.connect();
        cdc.in_valid.connect();
        cdc.rd_clock.connect();
        cdc.rd_reset.connect();
        cdc.out_ready.connect();
        cdc.connect_all();
        mac.clock.connect();
        mac.reset.connect();
        mac.in_data.connect();
        mac.in_keep.connect();
        mac.in_last.connect();
        mac.in_valid.connect();
        mac.connect_all();

        let mut queue: std::collections::VecDeque<(u64, u8, bool)> = Default::default();
        for f in frames {
            let b = beats(f);
            let n = b.len();
            for (i, (d, k)) in b.into_iter().enumerate() {
                queue.push_back((d, k, i + 1 == n));
            }
        }
        // Time in ps; half periods.
        let wr_half: i64 = 8_000;
        let rd_half: i64 = 4_000 + 4_000 * ppm / 1_000_000;
        let (mut t_wr, mut t_rd) = (wr_half / 3, 1_234);
        let (mut wr_clk, mut rd_clk) = (false, false);
        let mut wr_cycles = 0u64;
        let mut rd_cycles = 0u64;
        let mut bursts = vec![];
        let mut gaps = vec![];
        let mut cur: Option<Vec<u8>> = None;
        let mut idle = 0usize;
        let mut in_frame_src = false;
        let mut pause_left = 0usize;
        let mut total_rd: u64 = frames
            .iter()
            .map(|f| f.len().max(60) as u64 + 24)
            .sum::<u64>()
            * 3
            / 2
            + 2_000;
        if pauses {
            // At most one pause per 32 beats, each under 300 core clocks =
            // 600 transmit clocks.
            total_rd += frames
                .iter()
                .map(|f| f.len() as u64 / 256 * 600 + 600)
                .sum::<u64>();
        }
        cdc.wr_reset.next = true;
        cdc.rd_reset.next = true;
        mac.reset.next = true;
        while rd_cycles < total_rd {
            if t_wr <= t_rd {
                wr_clk = !wr_clk;
                cdc.wr_clock.next = wr_clk.into();
                t_wr += wr_half;
                if wr_clk {
                    // Rising edge: the offer set before it is sampled now.
                    let take = cdc.in_valid.val() && cdc.in_ready.val();
                    assert!(simulate(&mut cdc, 1000));
                    wr_cycles += 1;
                    if take {
                        let (_, _, l) = queue.pop_front().unwrap();
                        in_frame_src = !l;
                    }
                    if wr_cycles == 8 {
                        cdc.wr_reset.next = false;
                    }
                    // Next offer (after the edge).
                    if pause_left == 0 && pauses && in_frame_src && rng.below(32) == 0 {
                        pause_left = 50 + rng.below(250);
                    }
                    let pause = pause_left > 0;
                    pause_left = pause_left.saturating_sub(1);
                    match queue.front() {
                        Some(&(d, k, l)) if !pause => {
                            cdc.in_data.next = d.into();
                            cdc.in_keep.next = (k as u64).into();
                            cdc.in_last.next = l;
                            cdc.in_valid.next = true;
                        }
                        _ => cdc.in_valid.next = false,
                    }
                }
                assert!(simulate(&mut cdc, 1000));
            } else {
                rd_clk = !rd_clk;
                cdc.rd_clock.next = rd_clk.into();
                mac.clock.next = rd_clk.into();
                t_rd += rd_half;
                assert!(simulate(&mut cdc, 1000));
                assert!(simulate(&mut mac, 1000));
                if rd_clk {
                    rd_cycles += 1;
                    if rd_cycles == 12 {
                        cdc.rd_reset.next = false;
                        mac.reset.next = false;
                    }
                    if mac.tx_en.val() {
                        if cur.is_none() {
                            gaps.push(idle);
                        }
                        cur.get_or_insert_with(Vec::new)
                            .push(mac.txd.val().to_u64() as u8);
                        idle = 0;
                    } else {
                        if let Some(c) = cur.take() {
                            bursts.push(c);
                        }
                        idle += 1;
                    }
                }
                // The stream between the two: combinational, so settle
                // both after each change.
                for _ in 0..2 {
                    mac.in_data.next = cdc.out_data.val();
                    mac.in_keep.next = cdc.out_keep.val();
                    mac.in_last.next = cdc.out_last.val();
                    mac.in_valid.next = cdc.out_valid.val();
                    assert!(simulate(&mut mac, 1000));
                    cdc.out_ready.next = mac.in_ready.val();
                    assert!(simulate(&mut cdc, 1000));
                }
            }
        }
        assert!(queue.is_empty(), "{} beats never accepted", queue.len());
        (bursts, gaps, mac.cnt_underrun.val().to_u64())
    }

    /// What the wire must carry for `frame` (independent reference: a
    /// table CRC-32, not the RTL's byte step).
    fn expected_wire(frame: &[u8]) -> Vec<u8> {
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

    fn check(frames: &[Vec<u8>], ppm: i64, pauses: bool, seed: u64) {
        let mut rng = Rng::new(seed);
        let (bursts, gaps, underruns) = run(frames, ppm, pauses, &mut rng);
        assert_eq!(underruns, 0, "MAC underruns (ppm {ppm})");
        // One burst per frame: tx_en never dropped inside a frame.
        assert_eq!(bursts.len(), frames.len(), "frames out (ppm {ppm})");
        for (i, (b, f)) in bursts.iter().zip(frames).enumerate() {
            assert!(
                b == &expected_wire(f),
                "frame {i} ({} octets) differs (ppm {ppm})",
                f.len()
            );
        }
        for g in &gaps[1..] {
            assert!(*g >= 12, "inter-frame gap {g} < 12 (ppm {ppm})");
        }
        if !pauses {
            // Min-size frames back to back leave the MAC no idle time
            // beyond the minimum gap.
            assert_eq!(*gaps[1..].iter().min().unwrap(), 12, "ppm {ppm}");
        }
    }

    fn mixed(rng: &mut Rng) -> Vec<Vec<u8>> {
        // Back-to-back maximum-size frames, then minimum-size ones (and a
        // runt the MAC pads), then maximum-size again.
        let mut v: Vec<Vec<u8>> = Vec::new();
        for _ in 0..3 {
            v.push(rng.bytes(1514));
        }
        for i in 0..12 {
            v.push(rng.bytes(if i == 5 { 14 } else { 60 }));
        }
        v.push(rng.bytes(1514));
        v.push(rng.bytes(61));
        v
    }

    #[test]
    fn frames_cross_at_the_real_clock_ratio() {
        let mut rng = Rng::new(62);
        let frames = mixed(&mut rng);
        check(&frames, 0, false, 1);
    }

    #[test]
    fn frames_cross_with_the_tx_clock_300ppm_off() {
        let mut rng = Rng::new(63);
        let frames = mixed(&mut rng);
        check(&frames, 300, false, 2);
        check(&frames, -300, false, 3);
    }

    #[test]
    fn a_source_pausing_inside_frames_never_underruns() {
        let mut rng = Rng::new(64);
        let frames = mixed(&mut rng);
        check(&frames, 0, true, 4);
    }

    #[test]
    fn a_jumbo_frame_starts_at_the_threshold_and_does_not_underrun() {
        let mut rng = Rng::new(65);
        // 9000 octets = 1125 beats, more than the FIFO holds.
        let frames = vec![rng.bytes(9000), rng.bytes(60), rng.bytes(9000)];
        check(&frames, 100, false, 5);
    }
}
