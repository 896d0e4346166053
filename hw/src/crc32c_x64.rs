//! CRC32c (Castagnoli, as used by MPA, RFC 5044 §4.2) over one 64-bit beat
//! per clock, as a flat XOR matrix.
//!
//! # How it works
//! The CRC register update over eight bytes is linear over GF(2) in
//! (state, data), so every next-state bit is the XOR of a fixed subset of the
//! 32 state bits and the 64 data bits. Those subsets are computed here in Rust
//! at elaboration time from the polynomial ([`step_masks`]) and emitted as
//! explicit XOR terms ([`Crc32cStep`]); a loop-form description synthesises
//! about 4x slower on ECP5 (TOOLCHAIN-NOTES).
//!
//! A last beat with `k < 8` valid bytes is processed as a full beat whose
//! bytes `k..8` are forced to zero. Appending `8-k` zero bytes multiplies the
//! state by `A^(8-k)`, where `A` is the (invertible) zero-byte advance, so the
//! true state is recovered with one of nine constant 32x32 matrices
//! `A^-(8-k)` ([`Crc32cUnpad`]). That correction sits behind a register, so the
//! per-beat critical path is a single 96-input XOR tree.
//!
//! # Interface and timing
//! Stream sidecar (no `ready`: it accepts every beat with `valid`). `keep` is
//! the number of valid bytes of a `last` beat (0..=8, 0 only for an empty
//! frame); on other beats it is ignored and taken as 8. `crc` holds the
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

/// The raw (no init, no final XOR) register update over the eight bytes of
/// one beat; byte 0 of the beat is `data[7:0]`.
pub fn beat_update(state: u32, data: u64) -> u32 {
    let mut s = state;
    for i in 0..8 {
        s ^= ((data >> (8 * i)) & 0xFF) as u32;
        for _ in 0..8 {
            s = step_bit(s);
        }
    }
    s
}

/// Undoes `zero_bytes` zero-byte updates.
pub fn unpad(state: u32, zero_bytes: usize) -> u32 {
    let mut s = state;
    for _ in 0..8 * zero_bytes {
        s = unstep_bit(s);
    }
    s
}

/// For each next-state bit `o`: `(state_mask, data_mask)`, the state and data
/// bits whose XOR is bit `o` of `beat_update(state, data)`.
pub fn step_masks() -> [(u32, u64); 32] {
    let mut m = [(0u32, 0u64); 32];
    for k in 0..32 {
        let col = beat_update(1 << k, 0);
        for (o, row) in m.iter_mut().enumerate() {
            if col >> o & 1 != 0 {
                row.0 |= 1 << k;
            }
        }
    }
    for k in 0..64 {
        let col = beat_update(0, 1 << k);
        for (o, row) in m.iter_mut().enumerate() {
            if col >> o & 1 != 0 {
                row.1 |= 1 << k;
            }
        }
    }
    m
}

/// For `zero_bytes` in 0..=8 and each output bit `o`: the state bits whose XOR
/// is bit `o` of `unpad(state, zero_bytes)`.
pub fn unpad_masks() -> [[u32; 32]; 9] {
    let mut m = [[0u32; 32]; 9];
    for (j, rows) in m.iter_mut().enumerate() {
        for k in 0..32 {
            let col = unpad(1 << k, j);
            for (o, row) in rows.iter_mut().enumerate() {
                if col >> o & 1 != 0 {
                    *row |= 1 << k;
                }
            }
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

/// Keeps bytes `0..count` of `data` and zeroes the rest.
fn mask_bytes(data: u64, count: u64) -> u64 {
    if count >= 8 {
        data
    } else {
        data & ((1u64 << (8 * count)) - 1)
    }
}

/// Combinational: `out = beat_update(state, data with bytes >= count zeroed)`.
/// Custom Verilog (flat XOR terms); the Rust `update` evaluates the same
/// matrix so the rust-hdl simulation exercises the masks themselves.
#[derive(LogicBlock)]
pub struct Crc32cStep {
    pub state: Signal<In, Bits<32>>,
    pub data: Signal<In, Bits<64>>,
    /// Valid bytes in `data`, 0..=8 (values above 8 act as 8).
    pub count: Signal<In, Bits<4>>,
    pub out: Signal<Out, Bits<32>>,
    _masks: [(u32, u64); 32],
}

impl Default for Crc32cStep {
    fn default() -> Self {
        Self {
            state: Default::default(),
            data: Default::default(),
            count: Default::default(),
            out: Default::default(),
            _masks: step_masks(),
        }
    }
}

impl Logic for Crc32cStep {
    fn update(&mut self) {
        let s = self.state.val().to_u32();
        let d = mask_bytes(self.data.val().to_u64(), self.count.val().to_u64());
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
        v.push_str("// Data bytes at or above `count` are zero (see crc32c_x64.rs).\n");
        v.push_str("reg [63:0] dm;\n");
        v.push_str("always @(*) begin\n");
        for b in 0..8 {
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
                (0..64)
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

/// Combinational: `out = unpad(state, pad)` for `pad` in 0..=8 (9 constant
/// matrices behind a case).
#[derive(LogicBlock)]
pub struct Crc32cUnpad {
    pub state: Signal<In, Bits<32>>,
    /// Number of zero bytes to undo, 0..=8.
    pub pad: Signal<In, Bits<4>>,
    pub out: Signal<Out, Bits<32>>,
    _masks: [[u32; 32]; 9],
}

impl Default for Crc32cUnpad {
    fn default() -> Self {
        Self {
            state: Default::default(),
            pad: Default::default(),
            out: Default::default(),
            _masks: unpad_masks(),
        }
    }
}

impl Logic for Crc32cUnpad {
    fn update(&mut self) {
        let s = self.state.val().to_u32();
        let j = self.pad.val().to_u64() as usize;
        let mut n = 0u32;
        if j <= 8 {
            for (o, m) in self._masks[j].iter().enumerate() {
                n |= parity32(s & m) << o;
            }
        }
        self.out.next = (n as u64).into();
    }

    fn connect(&mut self) {
        self.out.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        v.push_str("// out = A^-pad * state, A = zero-byte CRC32c advance.\n");
        v.push_str("always @(*) begin\n    case (pad)\n");
        for (j, rows) in self._masks.iter().enumerate() {
            v.push_str(&format!("    4'd{j}: begin\n"));
            for (o, m) in rows.iter().enumerate() {
                let terms: Vec<String> = (0..32)
                    .filter(|k| m >> k & 1 != 0)
                    .map(|k| format!("state[{k}]"))
                    .collect();
                let rhs = if terms.is_empty() {
                    "1'b0".to_string()
                } else {
                    terms.join(" ^ ")
                };
                v.push_str(&format!("        out[{o}] = {rhs};\n"));
            }
            v.push_str("    end\n");
        }
        v.push_str("    default: out = 32'h0;\n    endcase\nend\n");
        Verilog::Custom(v)
    }
}

/// CRC32c of a stream, one 64-bit beat per clock (see the module docs).
#[derive(LogicBlock, Default)]
pub struct Crc32cX64 {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high.
    pub reset: Signal<In, Bit>,
    pub data: Signal<In, Bits<64>>,
    pub keep: Signal<In, Bits<4>>,
    pub last: Signal<In, Bit>,
    pub valid: Signal<In, Bit>,
    pub crc: Signal<Out, Bits<32>>,
    pub crc_valid: Signal<Out, Bit>,
    step: Crc32cStep,
    unpad: Crc32cUnpad,
    state: DFF<Bits<32>>,
    pad_state: DFF<Bits<32>>,
    pad: DFF<Bits<4>>,
    stage2: DFF<Bit>,
    crc_q: DFF<Bits<32>>,
    crc_v: DFF<Bit>,
}

impl Logic for Crc32cX64 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, state, pad_state, pad, stage2, crc_q, crc_v);
        self.step.state.next = self.state.q.val();
        self.step.data.next = self.data.val();
        self.step.count.next = 8.into();
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
                self.pad.d.next = bits::<4>(8) - self.keep.val();
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
    use crate::testutil::{beats, tick, Rng};

    /// The matrix scheme in plain Rust, against the independent `crc32c` crate.
    #[test]
    fn matrix_scheme_matches_crc32c_crate() {
        let mut rng = Rng::new(1);
        let sm = step_masks();
        let um = unpad_masks();
        for len in 0..200usize {
            let frame = rng.bytes(len);
            let mut s = 0xFFFF_FFFFu32;
            let bs = beats(&frame);
            let mut out = 0;
            for (i, (d, k)) in bs.iter().enumerate() {
                let last = i + 1 == bs.len();
                let d = mask_bytes(*d, if last { *k as u64 } else { 8 });
                let mut n = 0u32;
                for (o, (a, b)) in sm.iter().enumerate() {
                    n |= (parity32(s & a) ^ parity64(d & b)) << o;
                }
                if last {
                    let mut u = 0u32;
                    for (o, m) in um[8 - *k as usize].iter().enumerate() {
                        u |= parity32(n & m) << o;
                    }
                    out = !u;
                } else {
                    s = n;
                }
            }
            assert_eq!(out, crc32c::crc32c(&frame), "len {len}");
        }
    }

    #[test]
    fn unstep_inverts_step() {
        let mut rng = Rng::new(2);
        for _ in 0..1000 {
            let s = rng.next() as u32;
            assert_eq!(unstep_bit(step_bit(s)), s);
        }
    }

    /// The block in rust-hdl's simulator: random frames of 0..200 bytes,
    /// back to back and with idle cycles and garbage in unused lanes.
    #[test]
    fn block_matches_crc32c_crate() {
        let mut uut = Crc32cX64::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.data.connect();
        uut.keep.connect();
        uut.last.connect();
        uut.valid.connect();
        uut.connect_all();
        let mut rng = Rng::new(3);
        uut.reset.next = true;
        tick!(uut);
        uut.reset.next = false;
        let mut expected = std::collections::VecDeque::new();
        let mut got = Vec::new();
        let lens: Vec<usize> = (0..200).chain((0..100).map(|_| rng.below(200))).collect();
        let sample = |u: &mut Crc32cX64, got: &mut Vec<u32>| {
            if u.crc_valid.val() {
                got.push(u.crc.val().to_u32());
            }
        };
        for &len in &lens {
            let frame = rng.bytes(len);
            expected.push_back(crc32c::crc32c(&frame));
            let bs = beats(&frame);
            for (i, (d, k)) in bs.iter().enumerate() {
                while rng.below(4) == 0 {
                    uut.valid.next = false;
                    uut.data.next = rng.next().into();
                    tick!(uut);
                    sample(&mut uut, &mut got);
                }
                let last = i + 1 == bs.len();
                // Lanes past `keep` carry garbage: the block must ignore them.
                let garbage = if *k == 8 { 0 } else { rng.next() << (8 * *k) };
                uut.data.next = (d | garbage).into();
                uut.keep.next = (if last { *k as u64 } else { 8 }).into();
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
            assert_eq!(g, e, "frame {i} len {}", lens[i]);
        }
    }
}
