//! `PRam<D, N>`: rust-hdl's `RAM<D, N>` (registered read, one write port)
//! whose storage holds only the entries a core profile uses, so one block
//! type serves both profiles without a type parameter per size.
//!
//! The address ports stay `N` bits wide (the sim profile's layout); the
//! storage index keeps the top `hi` bits and the low `lo` bits of the
//! address and drops the ones between: `2^(hi + lo)` entries. With
//! `hi + lo == N` it is exactly `RAM<D, N>`. Yosys does not shrink a memory
//! whose upper address bits are constant zero (measured: a 2048 x 65 RAM
//! addressed `& 0x1FF` still maps to 8 DP16KD), so the depth has to be in
//! the declaration, which is what this block's Verilog does.
//!
//! Defined answers for addresses the profile does not hold (dropped bits not
//! zero): a write is ignored (never lands on another entry); a read returns
//! the entry with the dropped bits cleared (callers never read there: the
//! write side refused it).

use rust_hdl::prelude::*;
use std::collections::BTreeMap;

#[derive(LogicBlock)]
pub struct PRam<D: Synth, const N: usize> {
    pub read_address: Signal<In, Bits<N>>,
    pub read_clock: Signal<In, Clock>,
    pub read_data: Signal<Out, D>,
    pub write_address: Signal<In, Bits<N>>,
    pub write_clock: Signal<In, Clock>,
    pub write_data: Signal<In, D>,
    pub write_enable: Signal<In, Bit>,
    _hi: usize,
    _lo: usize,
    /// Yosys `ram_style` of the storage ("" = Yosys chooses; see [`Self::block`]).
    _style: &'static str,
    /// `$readmemh` file of the contents at configuration, for synthesis
    /// only (see [`Self::synthesis_init`]).
    _init: Option<&'static str>,
    _sim: BTreeMap<u64, D>,
}

impl<D: Synth, const N: usize> Default for PRam<D, N> {
    /// All `2^N` entries (`RAM<D, N>`).
    fn default() -> Self {
        Self::new(0, N)
    }
}

impl<D: Synth, const N: usize> PRam<D, N> {
    /// Storage for the address bits `[N-1 : N-hi]` and `[lo-1 : 0]`.
    pub fn new(hi: usize, lo: usize) -> Self {
        assert!(hi + lo <= N && lo > 0, "PRam<{N}>: hi {hi} + lo {lo}");
        Self {
            read_address: Default::default(),
            read_clock: Default::default(),
            read_data: Default::default(),
            write_address: Default::default(),
            write_clock: Default::default(),
            write_data: Default::default(),
            write_enable: Default::default(),
            _hi: hi,
            _lo: lo,
            _style: "",
            _init: None,
            _sim: Default::default(),
        }
    }

    /// A RAM of `2^lo` entries addressed by the low bits (a FIFO's).
    pub fn low(lo: usize) -> Self {
        Self::new(0, lo)
    }

    /// The same RAM mapped to block RAM: the declaration carries
    /// `(* ram_style = "block" *)`, which Yosys' `memory_libmap` honours
    /// (an ECP5 DP16KD even where LUTRAM would be chosen by cost;
    /// Verilator ignores the attribute). For memories whose LUTRAM
    /// (TRELLIS_DPR16X4, ~8 TRELLIS_COMB each) costs more logic than the
    /// block RAM it takes is worth: deep and narrow ones.
    pub fn block(mut self) -> Self {
        self._style = "block";
        self
    }

    /// Contents at FPGA configuration: the Verilog reads `path` (hex, one
    /// entry per line, `$readmemh`, relative to where Yosys runs) under
    /// `ifdef SYNTHESIS`. Yosys defines `SYNTHESIS`; Verilator does not, so
    /// simulation starts from zeros as before and needs no file. The board
    /// flow fills the file with a random pattern and replaces it in the
    /// placed design with `ecpbram` (scripts/bitstream.sh).
    pub fn synthesis_init(mut self, path: &'static str) -> Self {
        self._init = Some(path);
        self
    }

    /// The initial block for [`Self::synthesis_init`], or "".
    fn init(&self) -> String {
        match self._init {
            None => String::new(),
            Some(path) => format!(
                "`ifdef SYNTHESIS
initial $readmemh(\"{path}\", mem);
`endif
"
            ),
        }
    }

    /// The `ram_style` chosen ("" = Yosys chooses).
    pub fn style(&self) -> &'static str {
        self._style
    }

    /// The attribute line in front of the memory declaration.
    fn attr(&self) -> String {
        if self._style.is_empty() {
            String::new()
        } else {
            format!("(* ram_style = \"{}\" *)\n", self._style)
        }
    }

    /// Entries the storage holds.
    pub fn entries(&self) -> usize {
        1 << (self._hi + self._lo)
    }

    /// Mask of the dropped address bits.
    fn dropped(&self) -> u64 {
        let all = (1u64 << N) - 1;
        let top = all & !((1u64 << (N - self._hi)) - 1);
        let low = (1u64 << self._lo) - 1;
        all & !top & !low
    }

    /// The storage index of an address (dropped bits removed).
    fn index(&self, a: u64) -> u64 {
        let low = a & ((1u64 << self._lo) - 1);
        let top = a >> (N - self._hi);
        (top << self._lo) | low
    }
}

impl<D: Synth, const N: usize> Logic for PRam<D, N> {
    fn update(&mut self) {
        if self.read_clock.pos_edge() {
            let i = self.index(self.read_address.val().to_u64());
            self.read_data.next = *self._sim.get(&i).unwrap_or(&D::default());
        }
        if self.write_clock.pos_edge()
            && self.write_enable.val()
            && self.write_address.val().to_u64() & self.dropped() == 0
        {
            let i = self.index(self.write_address.val().to_u64());
            self._sim.insert(i, self.write_data.val());
        }
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        let (hi, lo) = (self._hi, self._lo);
        let d = D::BITS - 1;
        let last = self.entries() - 1;
        let attr = self.attr();
        let init = self.init();
        if hi + lo == N {
            return Verilog::Custom(format!(
                "\
{attr}reg[{d}:0] mem[{last}:0];
{init}
always @(posedge read_clock) begin
   read_data <= mem[read_address];
end

always @(posedge write_clock) begin
   if (write_enable) begin
      mem[write_address] <= write_data;
   end
end
"
            ));
        }
        // The storage index: {top hi bits, low lo bits}.
        let idx = |s: &str| {
            if hi == 0 {
                format!("{s}[{}:0]", lo - 1)
            } else {
                format!("{{{s}[{}:{}], {s}[{}:0]}}", N - 1, N - hi, lo - 1)
            }
        };
        let mid = format!("[{}:{}]", N - hi - 1, lo);
        Verilog::Custom(format!(
            "\
// {e} of {full} entries (the profile's); dropped address bits {mid}.
{attr}reg[{d}:0] mem[{last}:0];
{init}// A read ignores the dropped bits (the write side refuses such addresses).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_read_hi = ^read_address{mid};
/* verilator lint_on UNUSEDSIGNAL */

always @(posedge read_clock) begin
   read_data <= mem[{ridx}];
end

always @(posedge write_clock) begin
   if (write_enable && write_address{mid} == 0) begin
      mem[{widx}] <= write_data;
   end
end
",
            e = last + 1,
            full = 1u64 << N,
            ridx = idx("read_address"),
            widx = idx("write_address"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ram(hi: usize, lo: usize) -> PRam<Bits<16>, 6> {
        let mut uut: PRam<Bits<16>, 6> = PRam::new(hi, lo);
        uut.read_address.connect();
        uut.read_clock.connect();
        uut.write_address.connect();
        uut.write_clock.connect();
        uut.write_data.connect();
        uut.write_enable.connect();
        uut.connect_all();
        uut
    }

    fn clk(uut: &mut PRam<Bits<16>, 6>) {
        uut.read_clock.next = false.into();
        uut.write_clock.next = false.into();
        assert!(simulate(uut, 100));
        uut.read_clock.next = true.into();
        uut.write_clock.next = true.into();
        assert!(simulate(uut, 100));
    }

    /// Every kept address stores its own word, against a map model; a write
    /// to a dropped address is refused and changes no kept entry.
    #[test]
    fn kept_addresses_store_and_dropped_ones_are_refused() {
        for (hi, lo) in [(0, 6), (0, 3), (2, 2), (1, 4)] {
            let mut uut = ram(hi, lo);
            let dropped = uut.dropped();
            let mut model = std::collections::BTreeMap::new();
            for a in 0..64u64 {
                uut.write_enable.next = true;
                uut.write_address.next = a.into();
                uut.write_data.next = (a * 7 + 1).into();
                clk(&mut uut);
                if a & dropped == 0 {
                    model.insert(a, a * 7 + 1);
                }
            }
            uut.write_enable.next = false;
            assert_eq!(model.len(), 1 << (hi + lo), "hi {hi} lo {lo}");
            for (&a, &v) in &model {
                uut.read_address.next = a.into();
                clk(&mut uut);
                assert_eq!(uut.read_data.val().to_u64(), v, "hi {hi} lo {lo} a {a}");
            }
            let v = uut.hdl();
            let Verilog::Custom(s) = v else {
                panic!("custom Verilog")
            };
            let decl = format!("mem[{}:0]", (1 << (hi + lo)) - 1);
            assert!(s.contains(&decl), "{s}");
            assert!(!s.contains("ram_style"), "{s}");
            let Verilog::Custom(b) = PRam::<Bits<16>, 6>::new(hi, lo).block().hdl() else {
                panic!("custom Verilog")
            };
            let decl = format!("(* ram_style = \"block\" *)\nreg[15:0] {decl};");
            assert!(b.contains(&decl), "{b}");
        }
    }

    /// The configuration contents are for synthesis only: the `$readmemh`
    /// sits under `ifdef SYNTHESIS` (Yosys defines it, Verilator does not),
    /// after the declaration, for both storage layouts; without
    /// `synthesis_init` there is no initial block.
    #[test]
    fn synthesis_init_is_for_synthesis_only() {
        for (hi, lo) in [(0, 6), (1, 3)] {
            let Verilog::Custom(s) = PRam::<Bits<16>, 6>::new(hi, lo)
                .block()
                .synthesis_init("target/x.hex")
                .hdl()
            else {
                panic!("custom Verilog")
            };
            let decl = s.find("reg[15:0] mem[").expect("declaration");
            let init = s
                .find("`ifdef SYNTHESIS\ninitial $readmemh(\"target/x.hex\", mem);\n`endif\n")
                .unwrap_or_else(|| panic!("{s}"));
            assert!(decl < init, "{s}");
            let Verilog::Custom(plain) = PRam::<Bits<16>, 6>::new(hi, lo).hdl() else {
                panic!("custom Verilog")
            };
            assert!(!plain.contains("initial"), "{plain}");
        }
    }
}
