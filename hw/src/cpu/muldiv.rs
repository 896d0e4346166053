//! `MulDiv`: the M extension's eight operations, one bit per clock.
//!
//! * `start` (one clock) latches `op` (the instruction's funct3: 0 MUL,
//!   1 MULH, 2 MULHSU, 3 MULHU, 4 DIV, 5 DIVU, 6 REM, 7 REMU), `a` (rs1) and
//!   `b` (rs2).
//! * `done` is high for one clock, 33 clocks after `start`, with `result`.
//! * Signed operands are made positive first and the result negated after
//!   (sign of a product: sa ^ sb; of a quotient: sa ^ sb unless b = 0; of a
//!   remainder: sa). Multiply is shift-and-add on {hi, lo} (lo holds the
//!   multiplier), divide is restoring division (hi = remainder, lo =
//!   quotient). Division by zero gives quotient all ones and remainder a,
//!   and -2^31 / -1 gives -2^31 remainder 0, as the ISA defines, with no
//!   special case beyond the b = 0 sign rule.

use rust_hdl::prelude::*;

#[derive(LogicBlock, Default)]
pub struct MulDiv {
    pub clock: Signal<In, Clock>,
    /// Synchronous, active high: abandons an operation.
    pub reset: Signal<In, Bit>,
    pub start: Signal<In, Bit>,
    pub op: Signal<In, Bits<3>>,
    pub a: Signal<In, Bits<32>>,
    pub b: Signal<In, Bits<32>>,
    pub done: Signal<Out, Bit>,
    pub result: Signal<Out, Bits<32>>,
    active: DFF<Bit>,
    cnt: DFF<Bits<6>>,
    is_div: DFF<Bit>,
    /// Result selection: 0 low word, 1 high word, 2 quotient, 3 remainder.
    sel: DFF<Bits<2>>,
    neg: DFF<Bit>,
    hi: DFF<Bits<32>>,
    lo: DFF<Bits<32>>,
    /// The (positive) multiplicand or divisor.
    m: DFF<Bits<32>>,
    sa: Signal<Local, Bit>,
    sb: Signal<Local, Bit>,
    ua: Signal<Local, Bits<32>>,
    ub: Signal<Local, Bits<32>>,
    sum: Signal<Local, Bits<33>>,
    rem2: Signal<Local, Bits<33>>,
    diff: Signal<Local, Bits<33>>,
    raw: Signal<Local, Bits<32>>,
}

impl Logic for MulDiv {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, active, cnt, is_div, sel, neg, hi, lo, m);
        // Operand signs and magnitudes at `start`.
        self.sa.next = false;
        self.sb.next = false;
        if self.op.val().get_bit(2) {
            self.sa.next = !self.op.val().get_bit(0) & self.a.val().get_bit(31);
            self.sb.next = !self.op.val().get_bit(0) & self.b.val().get_bit(31);
        } else {
            self.sa.next = ((self.op.val() == 1) | (self.op.val() == 2)) & self.a.val().get_bit(31);
            self.sb.next = (self.op.val() == 1) & self.b.val().get_bit(31);
        }
        self.ua.next = self.a.val();
        if self.sa.val() {
            self.ua.next = !self.a.val() + 1;
        }
        self.ub.next = self.b.val();
        if self.sb.val() {
            self.ub.next = !self.b.val() + 1;
        }
        // One multiply step and one divide step.
        self.sum.next = bit_cast::<33, 32>(self.hi.q.val());
        if self.lo.q.val().get_bit(0) {
            self.sum.next =
                bit_cast::<33, 32>(self.hi.q.val()) + bit_cast::<33, 32>(self.m.q.val());
        }
        self.rem2.next = bit_cast::<33, 32>(self.hi.q.val()) << 1;
        if self.lo.q.val().get_bit(31) {
            self.rem2.next = self.rem2.val() | 1;
        }
        self.diff.next = self.rem2.val() - bit_cast::<33, 32>(self.m.q.val());
        // The result, from the registers after the 32nd step.
        self.raw.next = self.lo.q.val();
        if self.sel.q.val() == 1 {
            self.raw.next = self.hi.q.val();
            if self.neg.q.val() {
                self.raw.next = !self.hi.q.val();
                if self.lo.q.val() == 0 {
                    self.raw.next = !self.hi.q.val() + 1;
                }
            }
        } else if self.sel.q.val() == 3 {
            self.raw.next = self.hi.q.val();
            if self.neg.q.val() {
                self.raw.next = !self.hi.q.val() + 1;
            }
        } else if self.neg.q.val() {
            self.raw.next = !self.lo.q.val() + 1;
        }
        self.result.next = self.raw.val();
        self.done.next = self.active.q.val() & (self.cnt.q.val() == 32);

        if self.active.q.val() {
            if self.cnt.q.val() == 32 {
                self.active.d.next = false;
            } else {
                self.cnt.d.next = self.cnt.q.val() + 1;
                if self.is_div.q.val() {
                    if self.diff.val().get_bit(32) {
                        self.hi.d.next = self.rem2.val().get_bits::<32>(0);
                        self.lo.d.next = self.lo.q.val() << 1;
                    } else {
                        self.hi.d.next = self.diff.val().get_bits::<32>(0);
                        self.lo.d.next = (self.lo.q.val() << 1) | 1;
                    }
                } else {
                    self.hi.d.next = self.sum.val().get_bits::<32>(1);
                    self.lo.d.next = self.lo.q.val() >> 1;
                    if self.sum.val().get_bit(0) {
                        self.lo.d.next = (self.lo.q.val() >> 1) | 0x8000_0000_u64;
                    }
                }
            }
        }
        if self.start.val() {
            self.active.d.next = true;
            self.cnt.d.next = 0.into();
            self.is_div.d.next = self.op.val().get_bit(2);
            self.hi.d.next = 0.into();
            if self.op.val().get_bit(2) {
                self.lo.d.next = self.ua.val();
                self.m.d.next = self.ub.val();
                if self.op.val().get_bit(1) {
                    self.sel.d.next = 3.into();
                    self.neg.d.next = self.sa.val();
                } else {
                    self.sel.d.next = 2.into();
                    self.neg.d.next = (self.sa.val() ^ self.sb.val()) & (self.b.val() != 0);
                }
            } else {
                self.lo.d.next = self.ub.val();
                self.m.d.next = self.ua.val();
                self.neg.d.next = self.sa.val() ^ self.sb.val();
                if self.op.val() == 0 {
                    self.sel.d.next = 0.into();
                } else {
                    self.sel.d.next = 1.into();
                }
            }
        }
        if self.reset.val() {
            self.active.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};

    /// The ISA's definition of each operation, written from the spec's
    /// table (M extension, "Division by zero and overflow").
    fn reference(op: u32, a: u32, b: u32) -> u32 {
        let (sa, sb) = (a as i32 as i64, b as i32 as i64);
        let (ua, ub) = (a as u64, b as u64);
        match op {
            0 => (ua * ub) as u32,
            1 => ((sa * sb) >> 32) as u32,
            2 => ((sa * ub as i64) >> 32) as u32,
            3 => ((ua * ub) >> 32) as u32,
            4 => match (a as i32, b as i32) {
                (_, 0) => u32::MAX,
                (i32::MIN, -1) => a,
                (x, y) => (x / y) as u32,
            },
            5 => a.checked_div(b).unwrap_or(u32::MAX),
            6 => match (a as i32, b as i32) {
                (_, 0) => a,
                (i32::MIN, -1) => 0,
                (x, y) => (x % y) as u32,
            },
            _ => a.checked_rem(b).unwrap_or(a),
        }
    }

    fn run(uut: &mut MulDiv, op: u32, a: u32, b: u32) -> (u32, u32) {
        uut.start.next = true;
        uut.op.next = (op as u64).into();
        uut.a.next = (a as u64).into();
        uut.b.next = (b as u64).into();
        tick!(*uut);
        uut.start.next = false;
        let mut clocks = 1;
        while !uut.done.val() {
            tick!(*uut);
            clocks += 1;
            assert!(clocks < 100);
        }
        (uut.result.val().to_u64() as u32, clocks)
    }

    /// Every operation on the corner operands (0, ±1, ±2^31, all ones…)
    /// and on random ones, against [`reference`]; 33 clocks each.
    #[test]
    fn muldiv_matches_the_isa() {
        let mut uut = MulDiv::default();
        uut.clock.connect();
        uut.reset.connect();
        uut.start.connect();
        uut.op.connect();
        uut.a.connect();
        uut.b.connect();
        uut.connect_all();
        let corners = [
            0u32,
            1,
            2,
            3,
            0x7FFF_FFFF,
            0x8000_0000,
            0x8000_0001,
            0xFFFF_FFFF,
            0xFFFF_FFFE,
            7,
            0xFFFF_FFF9,
        ];
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for &a in &corners {
            for &b in &corners {
                pairs.push((a, b));
            }
        }
        let mut rng = Rng::new(0x6d64);
        for _ in 0..60 {
            let small = rng.below(2) == 0;
            let v = |r: &mut Rng| {
                if small {
                    (r.next_u64() as u32) >> r.below(32)
                } else {
                    r.next_u64() as u32
                }
            };
            pairs.push((v(&mut rng), v(&mut rng)));
        }
        let mut n = 0;
        for (i, &(a, b)) in pairs.iter().enumerate() {
            let op = if i < corners.len() * corners.len() {
                (i % 8) as u32
            } else {
                rng.below(8) as u32
            };
            for op in [op, (op + 3) % 8] {
                let (got, clocks) = run(&mut uut, op, a, b);
                assert_eq!(got, reference(op, a, b), "op {op} a {a:#x} b {b:#x}");
                assert_eq!(clocks, 33);
                n += 1;
            }
        }
        assert!(n > 300);
    }
}
