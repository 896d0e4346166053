//! `QpRam<D, PR>`: a QP-indexed RAM with the ports of rust-hdl's
//! `RAM<D, 6>` (6-bit addresses, registered read) whose depth is the QP
//! count of profile `PR` (`PROFILES[PR].fw.n_qp`: 64 in the sim core, 16 on
//! the board). rust-hdl has no `generic_const_exprs`, so the address ports
//! keep 6 bits and the RAM uses their low `log2(n_qp)` bits: on the board a
//! 16-deep memory (one TRELLIS_DPR16X4 per 4 data bits instead of four plus
//! a read mux; Yosys does not shrink a 64-deep memory whose upper address
//! bits are constant). Callers refuse QP indices beyond the profile before
//! they reach the RAM (the address wraps, as in any RAM). With 64 QPs the
//! Verilog is exactly `RAM<D, 6>`'s.

use rust_hdl::prelude::*;
use std::collections::BTreeMap;

#[derive(LogicBlock, Default)]
pub struct QpRam<D: Synth, const PR: usize> {
    pub read_address: Signal<In, Bits<6>>,
    pub read_clock: Signal<In, Clock>,
    pub read_data: Signal<Out, D>,
    pub write_address: Signal<In, Bits<6>>,
    pub write_clock: Signal<In, Clock>,
    pub write_data: Signal<In, D>,
    pub write_enable: Signal<In, bool>,
    _sim: BTreeMap<u64, D>,
}

impl<D: Synth, const PR: usize> QpRam<D, PR> {
    /// log2 of the depth.
    pub fn abits() -> usize {
        crate::transmit::doorbell::profile_qps(PR).trailing_zeros() as usize
    }
}

impl<D: Synth, const PR: usize> Logic for QpRam<D, PR> {
    fn update(&mut self) {
        let m = (1u64 << Self::abits()) - 1;
        if self.read_clock.pos_edge() {
            self.read_data.next = *self
                ._sim
                .get(&(self.read_address.val().to_u64() & m))
                .unwrap_or(&D::default());
        }
        if self.write_clock.pos_edge() && self.write_enable.val() {
            self._sim
                .insert(self.write_address.val().to_u64() & m, self.write_data.val());
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let a = Self::abits();
        let (ra, wa, waiver) = if a == 6 {
            (
                "read_address".to_string(),
                "write_address".to_string(),
                String::new(),
            )
        } else {
            (
                format!("read_address[{}:0]", a - 1),
                format!("write_address[{}:0]", a - 1),
                // The upper address bits are unused by design (module doc);
                // Verilator's default unused-regexp waives `*unused*`.
                format!(
                    "wire _unused_qp_ram = &{{1'b0, read_address[5:{a}], write_address[5:{a}]}};\n"
                ),
            )
        };
        Verilog::Custom(format!(
            "\
reg[{d}:0] mem[{n}:0];
{waiver}
always @(posedge read_clock) begin
   read_data <= mem[{ra}];
end

always @(posedge write_clock) begin
   if (write_enable) begin
      mem[{wa}] <= write_data;
   end
end
",
            d = D::BITS - 1,
            n = (1usize << a) - 1,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{PR_BOARD, PR_SIM};

    fn uut<const PR: usize>() -> QpRam<Bits<8>, PR> {
        let mut u = QpRam::<Bits<8>, PR>::default();
        u.read_address.connect();
        u.read_clock.connect();
        u.write_address.connect();
        u.write_clock.connect();
        u.write_data.connect();
        u.write_enable.connect();
        u.connect_all();
        u
    }

    fn wr<const PR: usize>(u: &mut QpRam<Bits<8>, PR>, a: u64, v: u64) {
        u.write_address.next = a.into();
        u.write_data.next = v.into();
        u.write_enable.next = true;
        u.read_clock.next = false.into();
        u.write_clock.next = false.into();
        assert!(simulate(u, 100));
        u.read_clock.next = true.into();
        u.write_clock.next = true.into();
        assert!(simulate(u, 100));
        u.write_enable.next = false;
    }

    fn rd<const PR: usize>(u: &mut QpRam<Bits<8>, PR>, a: u64) -> u64 {
        u.read_address.next = a.into();
        u.read_clock.next = false.into();
        u.write_clock.next = false.into();
        assert!(simulate(u, 100));
        u.read_clock.next = true.into();
        u.write_clock.next = true.into();
        assert!(simulate(u, 100));
        u.read_data.val().to_u64()
    }

    /// 64 entries in the sim profile, 16 on the board (the Verilog's depth
    /// too).
    #[test]
    fn depth_follows_profile() {
        let mut s = uut::<PR_SIM>();
        let mut b = uut::<PR_BOARD>();
        for a in 0..64 {
            wr(&mut s, a, a + 1);
            wr(&mut b, a, a + 1);
        }
        for a in 0..64 {
            assert_eq!(rd(&mut s, a), a + 1);
            assert_eq!(rd(&mut b, a & 15), 48 + (a & 15) + 1);
        }
        match b.hdl() {
            Verilog::Custom(v) => assert!(v.contains("mem[15:0]") && v.contains("[3:0]]")),
            _ => panic!(),
        }
        match s.hdl() {
            Verilog::Custom(v) => assert!(v.contains("mem[63:0]")),
            _ => panic!(),
        }
    }
}
