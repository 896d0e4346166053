//! Wide field packing as concatenation, for simulation speed.
//!
//! rust-hdl packs a `LogicStruct` (and code that assembles a wide word from
//! fields) as an OR of shifted, zero-extended fields:
//! `x = {{56{1'b0}}, a} | ({{71{1'b0}}, b} << 32'h20) | (74'h3 << 32'h44);`
//! and a byte swap as `((w >> 32'h8) & byte192) << 32'hb0 | ...`. Above 64
//! bits Verilator evaluates every such shift with a call into its wide-word
//! library (`VL_SHIFTL_WWI`, `_vl_insert_WW`, a zeroing loop that becomes
//! `memset`) on a temporary, once per term, on every `eval`: in `rnic_core`
//! these calls were more than half of the model's run time.
//!
//! [`pack_fields`] rewrites such an assignment, when its left side is wider
//! than 64 bits and every OR term is a field at a constant position (the
//! fields not overlapping), as one concatenation of the fields and zero
//! gaps: `x = {{2{1'b0}}, 2'h3, b, {15{1'b0}}, a};` — the same value (each
//! field's bits land where the shift put them; OR of disjoint fields is their
//! concatenation), which Verilator assigns word by word without temporaries.
//! Anything it does not recognise is left as it is.

use super::expr::{self, Decls, Kind, Node};
use std::collections::HashMap;

/// One field of a packed word: `text` (a Verilog expression with a
/// self-determined width of `width` bits) at bit `pos`.
#[derive(Debug, Clone, PartialEq)]
struct Field {
    text: String,
    width: usize,
    pos: usize,
}

/// Values of the module's sized localparams (`localparam x = N'hV;`).
fn params(module: &str) -> HashMap<String, u128> {
    let re = regex::Regex::new(r"^\s*localparam\s+([A-Za-z_][A-Za-z0-9_$]*) = \d+'h([0-9a-f]+);")
        .unwrap();
    module
        .lines()
        .filter_map(|l| {
            let c = re.captures(l)?;
            Some((c[1].to_string(), u128::from_str_radix(&c[2], 16).ok()?))
        })
        .collect()
}

struct Ctx<'a> {
    src: &'a str,
    d: &'a Decls,
    params: &'a HashMap<String, u128>,
}

impl Ctx<'_> {
    fn text(&self, n: &Node) -> &str {
        &self.src[n.start..n.end]
    }

    /// A constant's value (sized or plain number, or a localparam).
    fn konst(&self, n: &Node) -> Option<u128> {
        match &n.kind {
            Kind::Num(_, h) => u128::from_str_radix(h, 16).ok(),
            Kind::Ident(s) => self
                .params
                .get(s)
                .copied()
                .or_else(|| self.d.flex.get(s).copied()),
            Kind::Paren(e) => self.konst(e),
            _ => None,
        }
    }

    /// A plain signal (not a constant) and its width.
    fn signal<'n>(&self, n: &'n Node) -> Option<(&'n str, usize)> {
        match &n.kind {
            Kind::Ident(s) if !self.params.contains_key(s) => Some((s, *self.d.fixed.get(s)?)),
            Kind::Paren(e) => self.signal(e),
            _ => None,
        }
    }

    /// Bits `lo..lo+len` of signal `s` (`w` wide) as a field at `pos`, or
    /// nothing when the range lies above `w` (those bits are zero).
    fn bits_of(s: &str, w: usize, lo: usize, len: usize, pos: usize, out: &mut Vec<Field>) {
        let hi = (lo + len).min(w);
        if lo >= hi {
            return;
        }
        let text = if lo == 0 && hi == w {
            s.to_string()
        } else if hi - lo == 1 {
            format!("{s}[{lo}]")
        } else {
            format!("{s}[{}:{lo}]", hi - 1)
        };
        out.push(Field {
            text,
            width: hi - lo,
            pos,
        });
    }

    fn constant(v: u128, pos: usize, out: &mut Vec<Field>) {
        if v != 0 {
            let width = 128 - v.leading_zeros() as usize;
            out.push(Field {
                text: format!("{width}'h{v:x}"),
                width,
                pos,
            });
        }
    }

    /// The fields of `n`, an OR term evaluated in a context of `w` bits, or
    /// `None` if `n` is not a recognised field form.
    fn fields(&self, n: &Node, w: usize, out: &mut Vec<Field>) -> Option<()> {
        if let Some(v) = self.konst(n) {
            Self::constant(v, 0, out);
            return Some(());
        }
        match &n.kind {
            Kind::Paren(e) => self.fields(e, w, out),
            Kind::Binary("|", a, b) => {
                self.fields(a, w, out)?;
                self.fields(b, w, out)
            }
            Kind::Binary("<<", a, k) => {
                let k = usize::try_from(self.konst(k)?).ok()?;
                let mut inner = Vec::new();
                self.fields(a, w, &mut inner)?;
                for mut f in inner {
                    f.pos += k;
                    if f.pos >= w {
                        continue; // shifted out entirely
                    }
                    if f.pos + f.width > w {
                        // Only a plain signal can be cut to what stays.
                        let t = expr::parse(&f.text)?;
                        let (s, sw) = self.signal(&t)?;
                        if sw != f.width {
                            return None;
                        }
                        Self::bits_of(s, sw, 0, w - f.pos, f.pos, out);
                    } else {
                        out.push(f);
                    }
                }
                Some(())
            }
            Kind::Binary(">>", x, k) => {
                let k = usize::try_from(self.konst(k)?).ok()?;
                let (s, sw) = self.signal(x)?;
                if sw > w {
                    return None;
                }
                Self::bits_of(s, sw, k, sw.saturating_sub(k), 0, out);
                Some(())
            }
            Kind::Binary("&", a, m) => {
                // `(x >> k) & (2^len - 1)` or `x & (2^len - 1)`: a bit range.
                let mask = self.konst(m)?;
                if mask == 0 || mask & (mask + 1) != 0 {
                    return None;
                }
                let len = 128 - mask.leading_zeros() as usize;
                let (x, k) = match &strip_paren(a).kind {
                    Kind::Binary(">>", x, k) => (&**x, usize::try_from(self.konst(k)?).ok()?),
                    _ => (a.as_ref(), 0),
                };
                let (s, sw) = self.signal(x)?;
                if sw > w {
                    return None;
                }
                Self::bits_of(s, sw, k, len.min(w), 0, out);
                Some(())
            }
            Kind::Concat(items) => {
                // `{{K{1'b0}}, rest...}`: the zero extension of `rest`.
                let rest = match items.first().map(|i| &i.kind) {
                    Some(Kind::Repl(_, z)) if is_zero_bit(z) => &items[1..],
                    _ => &items[..],
                };
                let width = rest
                    .iter()
                    .map(|e| expr::self_width(e, self.d))
                    .sum::<Option<usize>>()?;
                if width == 0 || width > w {
                    return None;
                }
                let text = if rest.len() == 1 && is_primary(&rest[0]) {
                    self.text(&rest[0]).to_string()
                } else {
                    let parts: Vec<&str> = rest.iter().map(|e| self.text(e)).collect();
                    format!("{{{}}}", parts.join(", "))
                };
                out.push(Field {
                    text,
                    width,
                    pos: 0,
                });
                Some(())
            }
            Kind::Ident(_) | Kind::Slice(..) | Kind::Range(..) | Kind::Index(..) => {
                let width = expr::self_width(n, self.d)?;
                if width > w {
                    return None;
                }
                out.push(Field {
                    text: self.text(n).to_string(),
                    width,
                    pos: 0,
                });
                Some(())
            }
            _ => None,
        }
    }
}

fn strip_paren(n: &Node) -> &Node {
    match &n.kind {
        Kind::Paren(e) => strip_paren(e),
        _ => n,
    }
}

fn is_zero_bit(items: &[Node]) -> bool {
    matches!(items, [Node { kind: Kind::Num(Some(1), h), .. }] if h == "0")
}

fn is_primary(n: &Node) -> bool {
    matches!(
        n.kind,
        Kind::Ident(_)
            | Kind::Num(..)
            | Kind::Slice(..)
            | Kind::Range(..)
            | Kind::Index(..)
            | Kind::Concat(_)
            | Kind::Repl(..)
            | Kind::Paren(_)
    )
}

/// `rhs` (assigned to a `w`-bit signal) as one concatenation of disjoint
/// fields, or `None` when it is not such a packing (or gains nothing: no
/// shift or mask in it).
fn pack_rhs(rhs: &str, w: usize, d: &Decls, params: &HashMap<String, u128>) -> Option<String> {
    if !(rhs.contains("<<") || rhs.contains(">>") || rhs.contains(" & ")) {
        return None;
    }
    let n = expr::parse(rhs)?;
    let cx = Ctx {
        src: rhs,
        d,
        params,
    };
    let mut fs = Vec::new();
    cx.fields(&n, w, &mut fs)?;
    fs.sort_by_key(|f| f.pos);
    let mut next = 0;
    for f in &fs {
        if f.pos < next || f.pos + f.width > w {
            return None; // overlapping fields: an OR, not a concatenation
        }
        next = f.pos + f.width;
    }
    // MSB first, zero gaps between.
    let mut parts = Vec::new();
    let mut top = w;
    for f in fs.iter().rev() {
        let gap = top - (f.pos + f.width);
        if gap > 0 {
            parts.push(format!("{{{gap}{{1'b0}}}}"));
        }
        parts.push(f.text.clone());
        top = f.pos;
    }
    if top > 0 {
        parts.push(format!("{{{top}{{1'b0}}}}"));
    }
    Some(format!("{{{}}}", parts.join(", ")))
}

/// Rewrites, in rust-hdl's `always @(*)` blocks, every `lhs = rhs;` with a
/// `lhs` wider than 64 bits whose `rhs` packs disjoint fields (see the
/// module documentation). Other lines are copied unchanged.
pub fn pack_fields(src: &str) -> String {
    let assign = regex::Regex::new(r"^(\s*)([A-Za-z_][A-Za-z0-9_$]*) = (.*);$").unwrap();
    let mut out = String::with_capacity(src.len());
    for module in src.split_inclusive("endmodule") {
        let decls = Decls::parse(module);
        let ps = params(module);
        let mut m = String::with_capacity(module.len());
        let mut in_comb = false;
        for line in module.split_inclusive('\n') {
            let t = line.trim();
            if t == "// Update code" {
                in_comb = true;
            } else if t.starts_with("endmodule") || t.starts_with("// Update code (") {
                in_comb = false;
            }
            let body = line.trim_end_matches('\n');
            let nl = &line[body.len()..];
            let packed = in_comb
                .then(|| assign.captures(body))
                .flatten()
                .and_then(|c| {
                    let w = *decls.fixed.get(&c[2])?;
                    (w > 64)
                        .then(|| pack_rhs(&c[3], w, &decls, &ps))
                        .flatten()
                        .map(|r| format!("{}{} = {r};", &c[1], &c[2]))
                });
            m.push_str(packed.as_deref().unwrap_or(body));
            m.push_str(nl);
        }
        out.push_str(&drop_unused_params(&m, &ps));
    }
    out
}

/// Removes the declarations of localparams in `ps` that nothing in the
/// module uses any more (a mask constant only the packed lines read).
fn drop_unused_params(module: &str, ps: &HashMap<String, u128>) -> String {
    let toks: Vec<&str> = module
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'))
        .collect();
    let unused: Vec<&String> = ps
        .keys()
        .filter(|p| toks.iter().filter(|t| *t == p).count() == 1)
        .collect();
    if unused.is_empty() {
        return module.to_string();
    }
    module
        .split_inclusive('\n')
        .filter(|l| {
            !unused.iter().any(|p| {
                l.trim_start()
                    .strip_prefix("localparam")
                    .is_some_and(|r| r.trim_start().starts_with(&format!("{p} = ")))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::expr::eval;
    use crate::gen::expr::tests::{value, Rng};

    /// Checks `new` against `orig` (both `lhs = rhs;` lines of `module`) on
    /// random inputs under Verilog's rules, localparams at their values.
    pub(crate) fn check(module: &str, orig: &str, new: &str, rng: &mut Rng) {
        let d = Decls::parse(module);
        let ps = params(module);
        let assign = regex::Regex::new(r"^\s*([A-Za-z_][A-Za-z0-9_$]*) = (.*);$").unwrap();
        let (a, b) = (
            assign.captures(orig).unwrap(),
            assign.captures(new).unwrap(),
        );
        assert_eq!(&a[1], &b[1]);
        let w = d.fixed[&a[1]];
        let (o, n) = (expr::parse(&a[2]).unwrap(), expr::parse(&b[2]).unwrap());
        for _ in 0..200 {
            let env: HashMap<String, eval::Bv> = d
                .fixed
                .iter()
                .map(|(k, &w)| match ps.get(k) {
                    Some(&v) => (k.clone(), eval::from_u128(v, w)),
                    None => (k.clone(), value(rng, w)),
                })
                .collect();
            assert_eq!(
                eval::assign(&o, w, &d, &env),
                eval::assign(&n, w, &d, &env),
                "packing changed the value:\n  {orig}\n  {new}"
            );
        }
    }

    const M: &str = "module m(a);\n    localparam  byte192 = 192'hff;\n    reg  [73:0] x;\n    reg  [63:0] a;\n    reg  [2:0] b;\n    reg  [1:0] c;\n    reg  [191:0] h;\n    reg  [191:0] w0;\n    reg  [87:0] s;\n    reg  [87:0] q;\n    reg  [31:0] u;\n    // Update code\n    always @(*) begin\n";

    fn packs(line: &str) -> String {
        let m = format!("{M}        {line}\n    end\nendmodule\n");
        let out = pack_fields(&m);
        let new = out
            .lines()
            .find(|l| {
                let lhs = line.split(" = ").next().unwrap();
                l.trim_start().starts_with(&format!("{lhs} = "))
            })
            .unwrap()
            .trim()
            .to_string();
        if new != line {
            check(&m, line, &new, &mut Rng::new(0x9e37_79b9_7f4a_7c15));
        }
        new
    }

    #[test]
    fn struct_packing_becomes_a_concatenation() {
        assert_eq!(
            packs("x = {{10{1'b0}}, a} | ({{71{1'b0}}, b} << 32'h40) | (74'h3 << 32'h44) | ({{72{1'b0}}, c} << 32'h46);"),
            "x = {{2{1'b0}}, c, 2'h3, {1{1'b0}}, b, a};"
        );
        assert_eq!(
            packs("s = (q >> 32'h20) << 32'h20 | {{56{1'b0}}, u};"),
            "s = {q[87:32], u};"
        );
        assert_eq!(
            packs("h = (((w0 >> 32'h0) & byte192) << 32'hb8) | (((w0 >> 32'h8) & byte192) << 32'hb0);"),
            "h = {w0[7:0], w0[15:8], {176{1'b0}}};"
        );
        let m = format!("{M}        h = (w0 >> 32'h8) & byte192;\n    end\nendmodule\n");
        assert!(
            !pack_fields(&m).contains("byte192"),
            "the mask is no longer used"
        );
        // A left shift of a full-width signal keeps its low bits.
        assert_eq!(packs("s = q << 32'h8;"), "s = {q[79:0], {8{1'b0}}};");
    }

    /// Every line packed in the real core, checked on random inputs.
    #[test]
    fn every_packing_in_rnic_core_keeps_its_value() {
        use rust_hdl::prelude::*;
        let mut core = crate::rnic_core::RnicCore::default();
        core.connect_all();
        let fixed = crate::gen::fix_widths(&generate_verilog(&core));
        let packed = pack_fields(&fixed);
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
        let mut n = 0;
        for (m0, m1) in fixed
            .split_inclusive("endmodule")
            .zip(packed.split_inclusive("endmodule"))
        {
            // Statements only (a localparam nothing uses any more is dropped).
            fn stmts(m: &str) -> Vec<&str> {
                m.lines()
                    .filter(|l| !l.trim_start().starts_with("localparam"))
                    .collect()
            }
            let (s0, s1) = (stmts(m0), stmts(m1));
            assert_eq!(s0.len(), s1.len());
            for (&l0, &l1) in s0.iter().zip(&s1) {
                if l0 != l1 {
                    check(m0, l0, l1, &mut rng);
                    n += 1;
                }
            }
        }
        println!("{n} packed lines checked");
        assert!(n > 10, "{n}");
    }

    #[test]
    fn what_is_not_a_packing_is_left_alone() {
        // Overlapping fields are an OR.
        let l = "x = {{10{1'b0}}, a} | ({{71{1'b0}}, b} << 32'h3e);";
        assert_eq!(packs(l), l);
        // A variable shift.
        let l = "x = {{10{1'b0}}, a} << c;";
        assert_eq!(packs(l), l);
        // Not wider than 64 bits.
        let l = "a = (a >> 32'h8) << 32'h8;";
        assert_eq!(packs(l), l);
        // Arithmetic.
        let l = "s = q + (q << 32'h1);";
        assert_eq!(packs(l), l);
    }
}
