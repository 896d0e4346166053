//! Width-exact rewriting of the expressions rust-hdl writes.
//!
//! rust-hdl prints every integer literal as `32'hN` (or `64'hN`), `bit_cast`
//! as `((e) & N'hMASK)` and `replace_bit` as
//! `(x & ~(1 << (k)) | ((v) << (k)))`, and leaves the widths to Verilog's
//! context rules. The design's meaning is rust-hdl's: every value is a
//! `Bits<N>` of a definite width, arithmetic wraps at that width, `bit_cast`
//! zero-extends or truncates, `replace_bit` replaces one bit. This module
//! parses one statement's expression (Verilog precedence, the subset rust-hdl
//! prints), infers each node's rust-hdl width ([`rust_width`]) and re-emits
//! it so that every operand of every context-determined Verilog operator has
//! exactly the operator's width ([`emit`]). Then Verilog evaluates each
//! operator at the rust-hdl width: no implicit extension or truncation is
//! left, so Verilog computes what rust-hdl's simulator computes, and
//! Verilator has nothing to report.
//!
//! A node that is already width-exact ([`clean`]) is copied byte for byte,
//! so statements that were clean come out unchanged. Anything this module
//! does not understand makes [`fit_statement`] return `None`: the statement
//! is left as it was (and lint reports it), never guessed at.
//!
//! Relation to the original Verilog's value: for the operators whose low
//! result bits depend only on the low operand bits (`+ - * & | ^ ~ <<`, unary
//! `-`) evaluating at a narrower width and truncating commute, so an
//! assignment built from them keeps its Verilog value exactly. Where the
//! original Verilog evaluated a wrapping operation inside a comparison, a
//! shift right or a `bit_cast` at a wider context width than rust-hdl's
//! type (e.g. `(c + 32'h1) == d` with an 8-bit `c`), the original Verilog
//! differed from rust-hdl's simulator when the operation wrapped; the
//! rewrite makes Verilog agree with the simulator. The tests evaluate both
//! forms under Verilog's rules and under rust-hdl's (see `tests`).

use std::collections::HashMap;

/// Declared widths of one module: signals and sized localparams (`fixed`),
/// unsized localparams (rust-hdl's enum variants, `flex`).
#[derive(Default, Debug, Clone)]
pub struct Decls {
    pub fixed: HashMap<String, usize>,
    pub flex: HashMap<String, u128>,
}

impl Decls {
    pub fn parse(module: &str) -> Decls {
        let decl = regex::Regex::new(
            r"^\s*(?:input wire|output reg|output wire|inout wire|reg|wire)\s+(?:\[(\d+):0\]\s+)?([A-Za-z_][A-Za-z0-9_$]*);",
        )
        .unwrap();
        let sized =
            regex::Regex::new(r"^\s*localparam\s+([A-Za-z_][A-Za-z0-9_$]*) = (\d+)'").unwrap();
        let plain =
            regex::Regex::new(r"^\s*localparam\s+([A-Za-z_][A-Za-z0-9_$]*) = (\d+);").unwrap();
        let mut d = Decls::default();
        for line in module.lines() {
            if let Some(c) = decl.captures(line) {
                let w = c
                    .get(1)
                    .map_or(1, |m| m.as_str().parse::<usize>().unwrap() + 1);
                d.fixed.insert(c[2].to_string(), w);
            } else if let Some(c) = sized.captures(line) {
                d.fixed.insert(c[1].to_string(), c[2].parse().unwrap());
            } else if let Some(c) = plain.captures(line) {
                if let Ok(v) = c[2].parse() {
                    d.flex.insert(c[1].to_string(), v);
                }
            }
        }
        d
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// `size'<base><digits>` (size `None`: a plain decimal), value in hex
    /// digits (lower case, as written for base h).
    Num(Option<usize>, String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "+:", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "&", "|", "^", "~", "!",
    "<", ">", "(", ")", "[", "]", "{", "}", ",", ":",
];

/// Tokens with their byte spans.
pub fn lex(s: &str) -> Option<Vec<(Tok, usize, usize)>> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    'outer: while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == '_' {
            while i < b.len()
                && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
            {
                i += 1;
            }
            out.push((Tok::Ident(s[start..i].to_string()), start, i));
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && (b[i] as char).is_ascii_digit() {
                i += 1;
            }
            let digits = &s[start..i];
            if i + 1 < b.len() && b[i] == b'\'' {
                let size: usize = digits.parse().ok()?;
                let base = b[i + 1] as char;
                i += 2;
                let ds = i;
                while i < b.len() && ((b[i] as char).is_ascii_hexdigit() || b[i] == b'_') {
                    i += 1;
                }
                let raw: String = s[ds..i].chars().filter(|&c| c != '_').collect();
                let hex = match base {
                    'h' => raw.to_ascii_lowercase(),
                    'b' => to_hex(&raw, 2)?,
                    'd' => to_hex(&raw, 10)?,
                    _ => return None,
                };
                out.push((Tok::Num(Some(size), hex), start, i));
            } else {
                out.push((Tok::Num(None, to_hex(digits, 10)?), start, i));
            }
            continue;
        }
        for op in OPS {
            if s[i..].starts_with(op) {
                i += op.len();
                out.push((Tok::Op(op), start, i));
                continue 'outer;
            }
        }
        return None;
    }
    Some(out)
}

fn to_hex(digits: &str, radix: u32) -> Option<String> {
    if radix == 16 {
        return Some(digits.to_string());
    }
    // Binary literals can be wider than 128 bits: convert 4 bits at a time.
    if radix == 2 {
        let pad = (4 - digits.len() % 4) % 4;
        let padded = format!("{}{}", "0".repeat(pad), digits);
        let mut h = String::new();
        for chunk in padded.as_bytes().chunks(4) {
            let v = u8::from_str_radix(std::str::from_utf8(chunk).ok()?, 2).ok()?;
            h.push(char::from_digit(v as u32, 16)?);
        }
        let h = h.trim_start_matches('0');
        return Some(if h.is_empty() { "0".into() } else { h.into() });
    }
    let v = u128::from_str_radix(digits, radix).ok()?;
    Some(format!("{v:x}"))
}

/// Whether the hex value fits in `width` bits.
pub fn hex_fits(hex: &str, width: usize) -> bool {
    let h = hex.trim_start_matches('0');
    let bits = match h.chars().next() {
        None => 0,
        Some(c) => (h.len() - 1) * 4 + (32 - c.to_digit(16).unwrap().leading_zeros()) as usize,
    };
    bits <= width
}

fn hex_value(hex: &str) -> Option<u128> {
    u128::from_str_radix(hex, 16).ok()
}

#[derive(Debug, Clone)]
pub enum Kind {
    Ident(String),
    Num(Option<usize>, String),
    Index(Box<Node>, Box<Node>),
    /// `base[(offset)+:(width)]`
    Slice(Box<Node>, Box<Node>, usize),
    /// `base[msb:lsb]`
    Range(Box<Node>, usize, usize),
    Concat(Vec<Node>),
    /// `{count{items}}`
    Repl(usize, Vec<Node>),
    Unary(&'static str, Box<Node>),
    Binary(&'static str, Box<Node>, Box<Node>),
    Paren(Box<Node>),
}

#[derive(Debug, Clone)]
pub struct Node {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

struct Parser<'a> {
    toks: &'a [(Tok, usize, usize)],
    pos: usize,
}

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "*" => 10,
        "+" | "-" => 9,
        "<<" | ">>" => 8,
        "<" | "<=" | ">" | ">=" => 7,
        "==" | "!=" => 6,
        "&" => 5,
        "^" => 4,
        "|" => 3,
        "&&" => 2,
        "||" => 1,
        _ => return None,
    })
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.0)
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }
    fn expect(&mut self, op: &str) -> Option<usize> {
        if self.is_op(op) {
            self.pos += 1;
            Some(self.toks[self.pos - 1].2)
        } else {
            None
        }
    }
    fn start(&self) -> usize {
        self.toks.get(self.pos).map_or(usize::MAX, |t| t.1)
    }

    fn expr(&mut self, min: u8) -> Option<Node> {
        let mut lhs = self.unary()?;
        while let Some(Tok::Op(op)) = self.peek() {
            let op = *op;
            let p = match prec(op) {
                Some(p) if p >= min => p,
                _ => break,
            };
            self.pos += 1;
            let rhs = self.expr(p + 1)?;
            let (start, end) = (lhs.start, rhs.end);
            lhs = Node {
                kind: Kind::Binary(op, Box::new(lhs), Box::new(rhs)),
                start,
                end,
            };
        }
        Some(lhs)
    }

    fn unary(&mut self) -> Option<Node> {
        let start = self.start();
        if let Some(Tok::Op(op)) = self.peek() {
            let op = *op;
            if matches!(op, "~" | "!" | "-" | "&" | "|" | "^") {
                self.pos += 1;
                let e = self.unary()?;
                let end = e.end;
                return Some(Node {
                    kind: Kind::Unary(op, Box::new(e)),
                    start,
                    end,
                });
            }
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Option<Node> {
        let mut n = self.primary()?;
        while self.is_op("[") {
            self.pos += 1;
            let first = self.expr(0)?;
            if self.expect("+:").is_some() {
                let w = self.expr(0)?;
                let width = match &w.kind {
                    Kind::Paren(inner) => match &inner.kind {
                        Kind::Num(None, h) => hex_value(h)? as usize,
                        _ => return None,
                    },
                    Kind::Num(None, h) => hex_value(h)? as usize,
                    _ => return None,
                };
                let end = self.expect("]")?;
                let start = n.start;
                n = Node {
                    kind: Kind::Slice(Box::new(n), Box::new(first), width),
                    start,
                    end,
                };
            } else if self.expect(":").is_some() {
                let lo = self.expr(0)?;
                let (msb, lsb) = match (&first.kind, &lo.kind) {
                    (Kind::Num(None, a), Kind::Num(None, b)) => {
                        (hex_value(a)? as usize, hex_value(b)? as usize)
                    }
                    _ => return None,
                };
                let end = self.expect("]")?;
                let start = n.start;
                n = Node {
                    kind: Kind::Range(Box::new(n), msb, lsb),
                    start,
                    end,
                };
            } else {
                let end = self.expect("]")?;
                let start = n.start;
                n = Node {
                    kind: Kind::Index(Box::new(n), Box::new(first)),
                    start,
                    end,
                };
            }
        }
        Some(n)
    }

    fn primary(&mut self) -> Option<Node> {
        let (tok, start, end) = self.toks.get(self.pos)?.clone();
        self.pos += 1;
        match tok {
            Tok::Ident(name) => Some(Node {
                kind: Kind::Ident(name),
                start,
                end,
            }),
            Tok::Num(size, hex) => Some(Node {
                kind: Kind::Num(size, hex),
                start,
                end,
            }),
            Tok::Op("(") => {
                let e = self.expr(0)?;
                let end = self.expect(")")?;
                Some(Node {
                    kind: Kind::Paren(Box::new(e)),
                    start,
                    end,
                })
            }
            Tok::Op("{") => {
                // `{N{...}}` replication or `{a, b, ...}` concatenation.
                if let (Some(Tok::Num(None, h)), Some((Tok::Op("{"), _, _))) =
                    (self.peek().cloned(), self.toks.get(self.pos + 1))
                {
                    let count = hex_value(&h)? as usize;
                    self.pos += 2;
                    let items = self.list("}")?;
                    let end = self.expect("}")?;
                    return Some(Node {
                        kind: Kind::Repl(count, items),
                        start,
                        end,
                    });
                }
                let items = self.list("}")?;
                let end = self.toks[self.pos - 1].2;
                Some(Node {
                    kind: Kind::Concat(items),
                    start,
                    end,
                })
            }
            _ => None,
        }
    }

    /// Comma-separated expressions up to and including `close`.
    fn list(&mut self, close: &str) -> Option<Vec<Node>> {
        let mut items = vec![self.expr(0)?];
        while self.expect(",").is_some() {
            items.push(self.expr(0)?);
        }
        self.expect(close)?;
        Some(items)
    }
}

pub fn parse(s: &str) -> Option<Node> {
    let toks = lex(s)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
    };
    let n = p.expr(0)?;
    (p.pos == toks.len()).then_some(n)
}

fn is_cmp(op: &str) -> bool {
    matches!(op, "==" | "!=" | "<" | "<=" | ">" | ">=")
}
fn is_arith(op: &str) -> bool {
    matches!(op, "+" | "-" | "*" | "&" | "|" | "^")
}

/// `((e) & N'hMASK)`, rust-hdl's `bit_cast`/`bits` (MASK = 2^N - 1).
pub fn as_cast(n: &Node) -> Option<(&Node, usize)> {
    let Kind::Paren(inner) = &n.kind else {
        return None;
    };
    let Kind::Binary("&", e, m) = &inner.kind else {
        return None;
    };
    let Kind::Paren(e) = &e.kind else { return None };
    let Kind::Num(Some(w), hex) = &m.kind else {
        return None;
    };
    let ones: u32 = hex
        .chars()
        .map(|c| c.to_digit(16).unwrap().count_ones())
        .sum();
    let all_ones = *w > 0 && ones as usize == *w && hex_fits(hex, *w);
    all_ones.then_some((e, *w))
}

/// `(x & ~(1 << (k)) | ((v) << (k)))`, rust-hdl's `replace_bit(k, v)`.
pub fn as_replace_bit(n: &Node) -> Option<(&Node, &Node, &Node)> {
    let Kind::Paren(inner) = &n.kind else {
        return None;
    };
    let Kind::Binary("|", a, b) = &inner.kind else {
        return None;
    };
    let Kind::Binary("&", x, notm) = &a.kind else {
        return None;
    };
    let Kind::Unary("~", m) = &notm.kind else {
        return None;
    };
    let Kind::Paren(m) = &m.kind else { return None };
    let Kind::Binary("<<", one, k1) = &m.kind else {
        return None;
    };
    if !matches!(&one.kind, Kind::Num(None, h) if h == "1") {
        return None;
    }
    let Kind::Paren(b) = &b.kind else { return None };
    let Kind::Binary("<<", v, k2) = &b.kind else {
        return None;
    };
    let Kind::Paren(v) = &v.kind else { return None };
    let (Kind::Paren(k1), Kind::Paren(k2)) = (&k1.kind, &k2.kind) else {
        return None;
    };
    (same_shape(k1, k2)).then_some((x, k1, v))
}

fn same_shape(a: &Node, b: &Node) -> bool {
    format!("{:?}", strip(a)) == format!("{:?}", strip(b))
}

/// The node's kind with spans removed (for comparing two subtrees).
fn strip(n: &Node) -> String {
    match &n.kind {
        Kind::Ident(s) => s.clone(),
        Kind::Num(w, h) => format!("{w:?}'{h}"),
        Kind::Index(a, b) => format!("{}[{}]", strip(a), strip(b)),
        Kind::Slice(a, o, w) => format!("{}[{}+:{w}]", strip(a), strip(o)),
        Kind::Range(a, m, l) => format!("{}[{m}:{l}]", strip(a)),
        Kind::Concat(v) => format!("{{{}}}", v.iter().map(strip).collect::<Vec<_>>().join(",")),
        Kind::Repl(c, v) => format!(
            "{{{c}{{{}}}}}",
            v.iter().map(strip).collect::<Vec<_>>().join(",")
        ),
        Kind::Unary(o, e) => format!("{o}{}", strip(e)),
        Kind::Binary(o, a, b) => format!("({} {o} {})", strip(a), strip(b)),
        Kind::Paren(e) => format!("({})", strip(e)),
    }
}

/// Verilog's self-determined width (unsized numbers are 32 bits).
pub fn self_width(n: &Node, d: &Decls) -> Option<usize> {
    Some(match &n.kind {
        Kind::Ident(s) => match d.fixed.get(s) {
            Some(w) => *w,
            None => {
                d.flex.get(s)?;
                32
            }
        },
        Kind::Num(w, _) => w.unwrap_or(32),
        Kind::Index(..) => 1,
        Kind::Slice(_, _, w) => *w,
        Kind::Range(_, m, l) => m.checked_sub(*l)? + 1,
        Kind::Concat(v) => v.iter().map(|e| self_width(e, d)).sum::<Option<usize>>()?,
        Kind::Repl(c, v) => c * v.iter().map(|e| self_width(e, d)).sum::<Option<usize>>()?,
        Kind::Unary("~" | "-", e) => self_width(e, d)?,
        Kind::Unary(..) => 1,
        Kind::Binary(op, a, b) if is_arith(op) => self_width(a, d)?.max(self_width(b, d)?),
        Kind::Binary("<<" | ">>", a, _) => self_width(a, d)?,
        Kind::Binary(..) => 1,
        Kind::Paren(e) => self_width(e, d)?,
    })
}

/// An unsized constant (plain decimal or enum localparam): Verilator does
/// not ask it to match the context width.
fn is_unsized(n: &Node, d: &Decls) -> bool {
    match &n.kind {
        Kind::Num(None, _) => true,
        Kind::Ident(s) => !d.fixed.contains_key(s) && d.flex.contains_key(s),
        _ => false,
    }
}

/// Whether `n`, evaluated in a context of `want` bits, is width-exact in
/// Verilator's sense: every context-determined operand is exactly as wide as
/// its context (unsized constants excepted), and `n` itself is `want` wide.
pub fn clean(n: &Node, want: usize, d: &Decls) -> bool {
    match &n.kind {
        Kind::Num(None, _) => true,
        Kind::Ident(_) if is_unsized(n, d) => true,
        Kind::Ident(_) | Kind::Num(..) | Kind::Index(..) | Kind::Slice(..) | Kind::Range(..) => {
            self_width(n, d) == Some(want)
        }
        Kind::Concat(_) | Kind::Repl(..) => self_width(n, d) == Some(want),
        Kind::Unary("~" | "-", e) => clean(e, want, d),
        Kind::Unary(_, e) => want == 1 && self_width(e, d).is_some_and(|w| clean(e, w, d)),
        Kind::Binary(op, a, b) if is_arith(op) => clean(a, want, d) && clean(b, want, d),
        Kind::Binary("<<" | ">>", a, b) => {
            clean(a, want, d) && self_width(b, d).is_some_and(|w| clean(b, w, d))
        }
        Kind::Binary(op, a, b) if is_cmp(op) => {
            let sized = [a, b]
                .iter()
                .filter(|e| !is_unsized(e, d))
                .map(|e| self_width(e, d))
                .collect::<Option<Vec<_>>>();
            match sized {
                Some(ws) if !ws.is_empty() => {
                    let c = *ws.iter().max().unwrap();
                    want == 1 && clean(a, c, d) && clean(b, c, d)
                }
                _ => false,
            }
        }
        Kind::Binary(_, a, b) => {
            want == 1
                && self_width(a, d) == Some(1)
                && self_width(b, d) == Some(1)
                && clean(a, 1, d)
                && clean(b, 1, d)
        }
        Kind::Paren(e) => clean(e, want, d),
    }
}

/// rust-hdl's width of a node: `Some(Some(n))` a `Bits<n>`, `Some(None)` an
/// integer literal or enum constant that takes its width from the context.
pub fn rust_width(n: &Node, d: &Decls) -> Option<Option<usize>> {
    if let Some((_, w)) = as_cast(n) {
        return Some(Some(w));
    }
    if let Some((x, _, _)) = as_replace_bit(n) {
        return rust_width(x, d);
    }
    Some(match &n.kind {
        Kind::Ident(s) => match d.fixed.get(s) {
            Some(w) => Some(*w),
            None => {
                d.flex.get(s)?;
                None
            }
        },
        // rust-hdl prints integer literals as 32- or 64-bit constants and
        // `Bits<N>` constants with their own width.
        Kind::Num(None | Some(32) | Some(64), _) => None,
        Kind::Num(w, _) => *w,
        Kind::Index(..) => Some(1),
        Kind::Slice(..) | Kind::Range(..) | Kind::Concat(_) | Kind::Repl(..) => {
            Some(self_width(n, d)?)
        }
        Kind::Unary("~" | "-", e) => rust_width(e, d)?,
        Kind::Unary(..) => Some(1),
        Kind::Binary(op, a, b) if is_arith(op) => match (rust_width(a, d)?, rust_width(b, d)?) {
            (Some(x), Some(y)) if x != y => return None,
            (Some(x), _) | (_, Some(x)) => Some(x),
            (None, None) => None,
        },
        Kind::Binary("<<" | ">>", a, _) => rust_width(a, d)?,
        Kind::Binary(..) => Some(1),
        Kind::Paren(e) => rust_width(e, d)?,
    })
}

/// Emitted text and whether it is a primary (needs no parentheses as an
/// operand).
struct Out {
    text: String,
    primary: bool,
}

fn is_primary_node(n: &Node) -> bool {
    !matches!(n.kind, Kind::Binary(..) | Kind::Unary(..))
}

fn zext(text: String, primary: bool, from: usize, to: usize) -> Out {
    let inner = if primary { text } else { format!("({text})") };
    Out {
        text: format!("{{{{{}{{1'b0}}}}, {inner}}}", to - from),
        primary: true,
    }
}

/// Operand text for an operator, parenthesised when the original operand
/// was a primary and its replacement is not.
fn operand(orig: &Node, o: Out) -> String {
    if !o.primary && is_primary_node(orig) {
        format!("({})", o.text)
    } else {
        o.text
    }
}

/// Re-emits `n` as an expression exactly `w` bits wide whose value is
/// rust-hdl's value of `n`, zero-extended or truncated to `w` bits. Copies
/// width-exact subtrees verbatim; `None` for anything not understood.
fn emit(n: &Node, w: usize, src: &str, d: &Decls) -> Option<Out> {
    let text = &src[n.start..n.end];
    let keep = if is_unsized(n, d) {
        unsized_value(n, d).is_some_and(|h| hex_fits(&h, w))
    } else {
        self_width(n, d) == Some(w) && clean(n, w, d)
    };
    if keep {
        return Some(Out {
            text: text.to_string(),
            primary: is_primary_node(n),
        });
    }
    if let Some((e, cw)) = as_cast(n) {
        if w <= cw {
            let o = emit(e, w, src, d)?;
            return Some(Out {
                text: operand(n, o),
                primary: true,
            });
        }
        let o = emit_sized(e, cw, src, d)?;
        return Some(zext(o.text, o.primary, cw, w));
    }
    if let Some((x, k, v)) = as_replace_bit(n) {
        return emit_replace_bit(x, k, v, w, src, d);
    }
    let rw = rust_width(n, d)?;
    match &n.kind {
        Kind::Paren(e) => {
            let o = emit(e, w, src, d)?;
            Some(Out {
                text: format!("({})", o.text),
                primary: true,
            })
        }
        Kind::Num(_, hex) => hex_fits(hex, w).then(|| Out {
            text: format!("{w}'h{hex}"),
            primary: true,
        }),
        Kind::Ident(name) if rw.is_none() => {
            // An enum constant: write its value at the context width.
            let v = d.flex.get(name)?;
            let hex = format!("{v:x}");
            hex_fits(&hex, w).then(|| Out {
                text: format!("{w}'h{hex}"),
                primary: true,
            })
        }
        Kind::Ident(_) | Kind::Index(..) | Kind::Range(..) | Kind::Concat(_) | Kind::Repl(..) => {
            let t = rw?;
            if w > t {
                Some(zext(text.to_string(), true, t, w))
            } else if let Kind::Ident(name) = &n.kind {
                Some(Out {
                    text: if w == 1 {
                        format!("{name}[0]")
                    } else {
                        format!("{name}[{}:0]", w - 1)
                    },
                    primary: true,
                })
            } else {
                None
            }
        }
        Kind::Slice(base, off, t) => {
            if w > *t {
                Some(zext(text.to_string(), true, *t, w))
            } else {
                Some(Out {
                    text: format!(
                        "{}[{}+:({w})]",
                        &src[base.start..base.end],
                        &src[off.start..off.end]
                    ),
                    primary: true,
                })
            }
        }
        Kind::Unary(op @ ("~" | "-"), e) => {
            let t = rw?;
            if w <= t {
                let o = emit(e, w, src, d)?;
                Some(Out {
                    text: format!("{op}{}", operand(e, o)),
                    primary: false,
                })
            } else {
                let o = emit(e, t, src, d)?;
                let inner = format!("{op}{}", operand(e, o));
                Some(zext(inner, false, t, w))
            }
        }
        Kind::Unary(op, e) => {
            let t = rust_width(e, d)??;
            let o = emit(e, t, src, d)?;
            let inner = format!("{op}{}", operand(e, o));
            Some(if w == 1 {
                Out {
                    text: inner,
                    primary: false,
                }
            } else {
                zext(inner, false, 1, w)
            })
        }
        Kind::Binary(op, a, b) if is_arith(op) || matches!(*op, "<<" | ">>") => {
            let t = rw?;
            let shift = matches!(*op, "<<" | ">>");
            // Truncating commutes with + - * & | ^ <<, not with >>.
            let at = if w <= t && *op != ">>" { w } else { t };
            let la = operand(a, emit(a, at, src, d)?);
            let rb = if shift {
                // The shift amount is self-determined: at its own width.
                match rust_width(b, d)? {
                    Some(bw) => operand(b, emit(b, bw, src, d)?),
                    None => src[b.start..b.end].to_string(),
                }
            } else {
                operand(b, emit(b, at, src, d)?)
            };
            let inner = format!("{la} {op} {rb}");
            if at == w {
                Some(Out {
                    text: inner,
                    primary: false,
                })
            } else if w > at {
                Some(zext(inner, false, at, w))
            } else {
                None
            }
        }
        Kind::Binary(op, a, b) => {
            // Comparisons at their operands' common rust-hdl width; logical
            // operators on 1-bit operands.
            let c = if is_cmp(op) {
                match (rust_width(a, d)?, rust_width(b, d)?) {
                    (Some(x), Some(y)) => x.max(y),
                    (Some(x), None) | (None, Some(x)) => x,
                    (None, None) => return None,
                }
            } else {
                1
            };
            let la = operand(a, emit(a, c, src, d)?);
            let rb = operand(b, emit(b, c, src, d)?);
            let inner = format!("{la} {op} {rb}");
            Some(if w == 1 {
                Out {
                    text: inner,
                    primary: false,
                }
            } else {
                zext(inner, false, 1, w)
            })
        }
    }
}

/// [`emit`], but an unsized constant is written with its width (for use
/// inside a concatenation, where operands are self-determined).
fn emit_sized(n: &Node, w: usize, src: &str, d: &Decls) -> Option<Out> {
    match unsized_value(n, d) {
        Some(h) => hex_fits(&h, w).then(|| Out {
            text: format!("{w}'h{h}"),
            primary: true,
        }),
        None => emit(n, w, src, d),
    }
}

fn unsized_value(n: &Node, d: &Decls) -> Option<String> {
    match &n.kind {
        Kind::Num(None, h) => Some(h.clone()),
        Kind::Ident(s) if is_unsized(n, d) => Some(format!("{:x}", d.flex[s])),
        _ => None,
    }
}

/// `replace_bit`: a constant bit `k` of a signal `x` becomes a
/// concatenation `{x[t-1:k+1], v, x[k-1:0]}`; otherwise the mask-and-shift
/// form with every operand `t` bits wide.
fn emit_replace_bit(x: &Node, k: &Node, v: &Node, w: usize, src: &str, d: &Decls) -> Option<Out> {
    let t = rust_width(x, d)??;
    let v1 = emit_sized(v, 1, src, d)?.text;
    let konst = match &k.kind {
        Kind::Num(_, h) => hex_value(h).map(|k| k as usize),
        _ => None,
    };
    let out = match (&x.kind, konst) {
        (_, _) if t == 1 => return None,
        (Kind::Ident(name), Some(k)) if k < t => {
            let mut parts = Vec::new();
            if k + 1 < t {
                parts.push(if k + 1 == t - 1 {
                    format!("{name}[{}]", t - 1)
                } else {
                    format!("{name}[{}:{}]", t - 1, k + 1)
                });
            }
            parts.push(v1);
            if k > 0 {
                parts.push(if k == 1 {
                    format!("{name}[0]")
                } else {
                    format!("{name}[{}:0]", k - 1)
                });
            }
            Out {
                text: format!("{{{}}}", parts.join(", ")),
                primary: true,
            }
        }
        _ => {
            let xs = operand(x, emit(x, t, src, d)?);
            let ks = &src[k.start..k.end];
            Out {
                text: format!(
                    "({xs} & ~({{{{{z}{{1'b0}}}}, 1'b1}} << ({ks})) | ({{{{{z}{{1'b0}}}}, {v1}}} << ({ks})))",
                    z = t - 1
                ),
                primary: true,
            }
        }
    };
    match w.cmp(&t) {
        std::cmp::Ordering::Equal => Some(out),
        std::cmp::Ordering::Greater => Some(zext(out.text, out.primary, t, w)),
        std::cmp::Ordering::Less => None,
    }
}

/// Rewrites the expression `expr` to be exactly `w` bits wide (see the
/// module documentation). `None` when it is not understood.
pub fn fit(expr: &str, w: usize, d: &Decls) -> Option<String> {
    let n = parse(expr)?;
    Some(emit(&n, w, expr, d)?.text)
}

/// One statement line of rust-hdl's `always @(*)` block, width-fixed:
/// `lhs = rhs;`, `if (c) begin`, `else if (c) begin`. Lines that are
/// already width-exact, or not understood, are returned unchanged.
pub fn fit_statement(line: &str, d: &Decls) -> String {
    thread_local! {
        static RES: (regex::Regex, regex::Regex) = (
            regex::Regex::new(r"^(\s*)([A-Za-z_][A-Za-z0-9_$]*(?:\[[^\]]*\])?) = (.*);$").unwrap(),
            regex::Regex::new(r"^(\s*(?:else )?if )\((.*)\) begin$").unwrap(),
        );
    }
    RES.with(|(assign, cond)| {
        if let Some(c) = assign.captures(line) {
            let w = parse(&c[2]).and_then(|l| self_width(&l, d));
            if let Some(w) = w {
                if let Some(rhs) = fit(&c[3], w, d) {
                    return format!("{}{} = {};", &c[1], &c[2], rhs);
                }
            }
        } else if let Some(c) = cond.captures(line) {
            let n = parse(&c[2]);
            if let Some(Some(w)) = n.as_ref().and_then(|n| rust_width(n, d)) {
                if let Some(e) = fit(&c[2], w, d) {
                    return format!("{}({}) begin", &c[1], e);
                }
            }
        }
        line.to_string()
    })
}

/// Verilog's value of an expression, for the tests: bit vectors (LSB first)
/// evaluated under the IEEE 1364 width rules (context-determined operands
/// evaluated at the context width, unsized numbers 32 bits).
#[cfg(test)]
pub mod eval {
    use super::*;

    pub type Bv = Vec<bool>;

    pub fn from_u128(v: u128, w: usize) -> Bv {
        (0..w).map(|i| i < 128 && (v >> i) & 1 == 1).collect()
    }
    pub fn from_hex(hex: &str, w: usize) -> Bv {
        let mut bits = Vec::new();
        for c in hex.chars().rev() {
            let d = c.to_digit(16).unwrap();
            for i in 0..4 {
                bits.push((d >> i) & 1 == 1);
            }
        }
        bits.resize(w.max(bits.len()), false);
        bits.truncate(w);
        bits
    }
    fn resize(mut v: Bv, w: usize) -> Bv {
        v.resize(w, false);
        v
    }
    fn to_usize(v: &Bv) -> usize {
        if v.iter().skip(40).any(|&b| b) {
            return usize::MAX;
        }
        v.iter()
            .take(40)
            .enumerate()
            .fold(0, |a, (i, &b)| a | ((b as usize) << i))
    }
    fn add(a: &Bv, b: &Bv, carry_in: bool) -> Bv {
        let mut c = carry_in;
        a.iter()
            .zip(b)
            .map(|(&x, &y)| {
                let s = x ^ y ^ c;
                c = (x & y) | (c & (x ^ y));
                s
            })
            .collect()
    }
    fn cmp(a: &Bv, b: &Bv) -> std::cmp::Ordering {
        for i in (0..a.len()).rev() {
            if a[i] != b[i] {
                return a[i].cmp(&b[i]);
            }
        }
        std::cmp::Ordering::Equal
    }

    /// Value of `n` in a context of `ctx` bits (`ctx` >= self width).
    pub fn eval(n: &Node, ctx: usize, d: &Decls, env: &HashMap<String, Bv>) -> Bv {
        let sw = |e: &Node| self_width(e, d).unwrap();
        match &n.kind {
            Kind::Ident(s) => match env.get(s) {
                Some(v) => resize(v.clone(), ctx),
                None => from_u128(d.flex[s], ctx),
            },
            Kind::Num(_, h) => from_hex(h, ctx),
            Kind::Index(a, i) => {
                let a = eval(a, sw(a), d, env);
                let i = to_usize(&eval(i, sw(i), d, env));
                resize(vec![i < a.len() && a[i]], ctx)
            }
            Kind::Slice(a, o, w) => {
                let a = eval(a, sw(a), d, env);
                let o = to_usize(&eval(o, sw(o), d, env));
                let bits = (0..*w)
                    .map(|i| o.saturating_add(i) < a.len() && a[o + i])
                    .collect();
                resize(bits, ctx)
            }
            Kind::Range(a, m, l) => {
                let a = eval(a, sw(a), d, env);
                resize(a[*l..=*m].to_vec(), ctx)
            }
            Kind::Concat(items) => {
                let mut bits = Vec::new();
                for e in items.iter().rev() {
                    bits.extend(eval(e, sw(e), d, env));
                }
                resize(bits, ctx)
            }
            Kind::Repl(c, items) => {
                let mut one = Vec::new();
                for e in items.iter().rev() {
                    one.extend(eval(e, sw(e), d, env));
                }
                resize(one.repeat(*c), ctx)
            }
            Kind::Unary("~", e) => eval(e, ctx, d, env).into_iter().map(|b| !b).collect(),
            Kind::Unary("-", e) => {
                let v: Bv = eval(e, ctx, d, env).into_iter().map(|b| !b).collect();
                add(&v, &vec![false; ctx], true)
            }
            Kind::Unary(op, e) => {
                let v = eval(e, sw(e), d, env);
                let r = match *op {
                    "!" => !v.iter().any(|&b| b),
                    "&" => v.iter().all(|&b| b),
                    "|" => v.iter().any(|&b| b),
                    "^" => v.iter().fold(false, |a, &b| a ^ b),
                    _ => unreachable!(),
                };
                resize(vec![r], ctx)
            }
            Kind::Binary(op, a, b) if is_arith(op) => {
                let x = eval(a, ctx, d, env);
                let y = eval(b, ctx, d, env);
                match *op {
                    "+" => add(&x, &y, false),
                    "-" => add(&x, &y.iter().map(|b| !b).collect(), true),
                    "&" => x.iter().zip(&y).map(|(a, b)| a & b).collect(),
                    "|" => x.iter().zip(&y).map(|(a, b)| a | b).collect(),
                    "^" => x.iter().zip(&y).map(|(a, b)| a ^ b).collect(),
                    "*" => {
                        let mut acc = vec![false; ctx];
                        for i in 0..ctx {
                            if y[i] {
                                let mut sh = vec![false; i];
                                sh.extend_from_slice(&x[..ctx - i]);
                                acc = add(&acc, &sh, false);
                            }
                        }
                        acc
                    }
                    _ => unreachable!(),
                }
            }
            Kind::Binary(op @ ("<<" | ">>"), a, b) => {
                let x = eval(a, ctx, d, env);
                let k = to_usize(&eval(b, sw(b), d, env));
                (0..ctx)
                    .map(|i| {
                        if *op == "<<" {
                            i >= k && x[i - k]
                        } else {
                            k < ctx && i + k < ctx && x[i + k]
                        }
                    })
                    .collect()
            }
            Kind::Binary(op, a, b) if is_cmp(op) => {
                let c = sw(a).max(sw(b));
                let o = cmp(&eval(a, c, d, env), &eval(b, c, d, env));
                use std::cmp::Ordering::*;
                let r = match *op {
                    "==" => o == Equal,
                    "!=" => o != Equal,
                    "<" => o == Less,
                    "<=" => o != Greater,
                    ">" => o == Greater,
                    ">=" => o != Less,
                    _ => unreachable!(),
                };
                resize(vec![r], ctx)
            }
            Kind::Binary(op, a, b) => {
                let x = eval(a, sw(a), d, env).iter().any(|&b| b);
                let y = eval(b, sw(b), d, env).iter().any(|&b| b);
                resize(vec![if *op == "&&" { x && y } else { x || y }], ctx)
            }
            Kind::Paren(e) => eval(e, ctx, d, env),
        }
    }

    /// Verilog's value of `lhs = rhs;` for an `w`-bit `lhs`.
    pub fn assign(rhs: &Node, w: usize, d: &Decls, env: &HashMap<String, Bv>) -> Bv {
        let ctx = w.max(self_width(rhs, d).unwrap());
        resize(eval(rhs, ctx, d, env), w)
    }

    /// rust-hdl's value of `n` (each node at its own rust-hdl width, literals
    /// at the width the context gives them), resized to `w` bits. An
    /// independent model of the simulator's `Bits<N>` semantics.
    pub fn rust(n: &Node, w: usize, d: &Decls, env: &HashMap<String, Bv>) -> Bv {
        let rw = |e: &Node| rust_width(e, d).unwrap();
        if let Some((e, cw)) = as_cast(n) {
            let t = rw(e).unwrap_or(cw);
            return resize(resize(rust(e, t, d, env), cw), w);
        }
        if let Some((x, k, v)) = as_replace_bit(n) {
            let t = rw(x).unwrap();
            let mut xv = rust(x, t, d, env);
            let k = to_usize(&eval(k, self_width(k, d).unwrap(), d, env));
            let bit = rust(v, 1, d, env)[0];
            if k < t {
                xv[k] = bit;
            }
            return resize(xv, w);
        }
        let own = rw(n).unwrap_or(w);
        let v = match &n.kind {
            Kind::Paren(e) => return rust(e, w, d, env),
            Kind::Ident(_) | Kind::Num(..) | Kind::Index(..) | Kind::Slice(..) => {
                eval(n, own.max(self_width(n, d).unwrap()), d, env)
            }
            Kind::Range(..) | Kind::Concat(_) | Kind::Repl(..) => eval(n, own, d, env),
            Kind::Unary("~", e) => rust(e, own, d, env).into_iter().map(|b| !b).collect(),
            Kind::Unary("-", e) => {
                let v: Bv = rust(e, own, d, env).into_iter().map(|b| !b).collect();
                add(&v, &vec![false; own], true)
            }
            Kind::Unary(op, e) => {
                let v = rust(e, rw(e).unwrap(), d, env);
                vec![match *op {
                    "!" => !v.iter().any(|&b| b),
                    "&" => v.iter().all(|&b| b),
                    "|" => v.iter().any(|&b| b),
                    _ => v.iter().fold(false, |a, &b| a ^ b),
                }]
            }
            Kind::Binary(op, a, b) if is_arith(op) || matches!(*op, "<<" | ">>") => {
                let x = rust(a, own, d, env);
                let y = if matches!(*op, "<<" | ">>") {
                    let bw = rw(b).unwrap_or_else(|| self_width(b, d).unwrap());
                    rust(b, bw, d, env)
                } else {
                    rust(b, own, d, env)
                };
                let mut env2 = HashMap::new();
                env2.insert("a".to_string(), x);
                env2.insert("b".to_string(), y.clone());
                let mut d2 = Decls::default();
                d2.fixed.insert("a".into(), own);
                d2.fixed.insert("b".into(), y.len());
                let e = parse(&format!("a {op} b")).unwrap();
                eval(&e, own, &d2, &env2)
            }
            Kind::Binary(op, a, b) => {
                let c = if is_cmp(op) {
                    match (rw(a), rw(b)) {
                        (Some(x), Some(y)) => x.max(y),
                        (Some(x), None) | (None, Some(x)) => x,
                        (None, None) => 32,
                    }
                } else {
                    1
                };
                let x = rust(a, c, d, env);
                let y = rust(b, c, d, env);
                let mut env2 = HashMap::new();
                env2.insert("a".to_string(), x);
                env2.insert("b".to_string(), y);
                let mut d2 = Decls::default();
                d2.fixed.insert("a".into(), c);
                d2.fixed.insert("b".into(), c);
                let e = parse(&format!("a {op} b")).unwrap();
                eval(&e, 1, &d2, &env2)
            }
        };
        resize(v, w)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::eval::{self, Bv};
    use super::*;

    fn decls(list: &[(&str, usize)]) -> Decls {
        let mut d = Decls::default();
        for (n, w) in list {
            d.fixed.insert(n.to_string(), *w);
        }
        d.flex.insert("S$A".into(), 0);
        d.flex.insert("S$B".into(), 5);
        d
    }

    /// The generator of the equivalence checks: xorshift64 from `rnic-wire`.
    pub type Rng = rnic_wire::rng::Rng<rnic_wire::rng::XorShift64>;

    /// A random `w`-bit test vector: 0, all-ones, small and random values,
    /// so that wrap-around cases are hit.
    pub fn value(rng: &mut Rng, w: usize) -> Bv {
        match rng.next_u64() % 5 {
            0 => vec![false; w],
            1 => vec![true; w],
            2 => eval::from_u128((rng.next_u64() % 4) as u128, w),
            3 => {
                let mut v = vec![true; w];
                v[w - 1] = false;
                v
            }
            _ => (0..w).map(|_| rng.next_u64() & 1 == 1).collect(),
        }
    }

    /// Checks a rewritten statement against its original on random inputs:
    /// the rewrite's Verilog value must equal rust-hdl's value of the
    /// original. Returns whether the original's Verilog value ever
    /// differed (a place where the old Verilog disagreed with rust-hdl).
    pub fn check_equivalent(orig: &str, new: &str, d: &Decls, rng: &mut Rng) -> bool {
        let assign =
            regex::Regex::new(r"^\s*([A-Za-z_][A-Za-z0-9_$]*(?:\[[^\]]*\])?) = (.*);$").unwrap();
        let cond = regex::Regex::new(r"^\s*(?:else )?if \((.*)\) begin$").unwrap();
        let (w, o, n) = if let (Some(a), Some(b)) = (assign.captures(orig), assign.captures(new)) {
            let w = self_width(&parse(&a[1]).unwrap(), d).unwrap();
            (w, parse(&a[2]).unwrap(), parse(&b[2]).unwrap())
        } else {
            let (a, b) = (cond.captures(orig).unwrap(), cond.captures(new).unwrap());
            let o = parse(&a[1]).unwrap();
            let w = rust_width(&o, d).unwrap().unwrap();
            (w, o, parse(&b[1]).unwrap())
        };
        // Values only for the signals the two lines can read (a name in
        // neither line's text is not read), in name order so a seed gives
        // one run: a module of the core declares thousands of signals, and
        // drawing all of them 300 times for every line made the check of
        // the real designs take minutes.
        let mut used: Vec<(&str, usize)> = d
            .fixed
            .iter()
            .filter(|(k, _)| orig.contains(k.as_str()) || new.contains(k.as_str()))
            .map(|(k, &w)| (k.as_str(), w))
            .collect();
        used.sort_unstable();
        let mut differed = false;
        for _ in 0..300 {
            let env: HashMap<String, Bv> = used
                .iter()
                .map(|&(k, w)| (k.to_string(), value(rng, w)))
                .collect();
            let new_v = eval::assign(&n, w, d, &env);
            let rust_v = eval::rust(&o, w, d, &env);
            assert_eq!(
                new_v, rust_v,
                "rewrite differs from rust-hdl's value:\n  {orig}\n  {new}"
            );
            differed |= eval::assign(&o, w, d, &env) != new_v;
        }
        differed
    }

    fn fixes(line: &str, d: &Decls) -> String {
        let out = fit_statement(line, d);
        if out != line {
            let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
            check_equivalent(line, &out, d, &mut rng);
        }
        out
    }

    #[test]
    fn lexes_and_parses_with_verilog_precedence() {
        let e = parse("a + b << 2'h1 | c & d == 4'b1010").unwrap();
        assert_eq!(
            strip(&e),
            "(((a + b) << Some(2)'1) | (c & (d == Some(4)'a)))"
        );
        let e = parse("{{13{1'b0}}, x[(32'h0)+:(4)]} - y[7:4]").unwrap();
        assert_eq!(strip(&e), "({{13{Some(1)'0}},x[(Some(32)'0)+:4]} - y[7:4])");
        assert!(parse("$signed(a)").is_none());
        assert!(parse("a +").is_none());
    }

    #[test]
    fn literal_in_nested_arithmetic_takes_the_operation_width() {
        let d = decls(&[("c_tail", 17), ("c_pad", 2), ("c_need", 17), ("pcnt", 4)]);
        assert_eq!(
            fixes("    c_tail = {{15{1'b0}}, c_pad} + 32'h4;", &d),
            "    c_tail = {{15{1'b0}}, c_pad} + 17'h4;"
        );
        // Inside a comparison: at the width of the other operand.
        assert_eq!(
            fixes("    if (c_need == {{13{1'b0}}, pcnt} + 32'h1) begin", &d),
            "    if (c_need == {{13{1'b0}}, pcnt} + 17'h1) begin"
        );
        let d = decls(&[("wdata", 16), ("value$q", 16)]);
        assert_eq!(
            fixes("wdata = (value$q | 16'h20) & 32'hffef;", &d),
            "wdata = (value$q | 16'h20) & 16'hffef;"
        );
        // A value that does not fit is left alone (and lint reports it).
        let d = decls(&[("x", 4), ("y", 4)]);
        assert_eq!(fixes("x = y + 32'h10;", &d), "x = y + 32'h10;");
    }

    #[test]
    fn comparison_with_wrapping_arithmetic_follows_rust_hdl() {
        // rust-hdl computes `(half << 1) - 1` in 8 bits; the original Verilog
        // computed it in 32 bits, so half = 0 compared 0xffffffff with div.
        let d = decls(&[("div$q", 8), ("half", 8)]);
        let orig = "if (div$q == (half << 32'h1) - 32'h1) begin";
        let new = fit_statement(orig, &d);
        assert_eq!(new, "if (div$q == (half << 32'h1) - 8'h1) begin");
        let differed = check_equivalent(orig, &new, &d, &mut Rng::new(7));
        assert!(differed, "the wrap case is exercised");
    }

    #[test]
    fn replace_bit_becomes_a_concatenation() {
        let d = decls(&[("x", 8), ("w", 70), ("v", 1), ("u", 1), ("i", 3)]);
        assert_eq!(
            fixes("x = (x & ~(1 << (0)) | ((1'b1) << (0)));", &d),
            "x = {x[7:1], 1'b1};"
        );
        assert_eq!(
            fixes("x = (x & ~(1 << (32'h1)) | ((v) << (32'h1)));", &d),
            "x = {x[7:2], v, x[0]};"
        );
        assert_eq!(
            fixes("x = (x & ~(1 << (32'h6)) | ((v ^ u) << (32'h6)));", &d),
            "x = {x[7], v ^ u, x[5:0]};"
        );
        assert_eq!(
            fixes("x = (x & ~(1 << (32'h7)) | ((v & ~u) << (32'h7)));", &d),
            "x = {v & ~u, x[6:0]};"
        );
        assert_eq!(
            fixes("w = (w & ~(1 << (32'h44)) | ((v) << (32'h44)));", &d),
            "w = {w[69], v, w[67:0]};"
        );
        // A run-time bit index: mask and shift, every operand 8 bits.
        assert_eq!(
            fixes("x = (x & ~(1 << (i)) | ((v) << (i)));", &d),
            "x = (x & ~({{7{1'b0}}, 1'b1} << (i)) | ({{7{1'b0}}, v} << (i)));"
        );
    }

    /// The check reads the signals it draws: a rewrite that changes a value
    /// is caught, also among signals the lines do not name.
    #[test]
    #[should_panic(expected = "rewrite differs from rust-hdl's value")]
    fn a_wrong_rewrite_is_caught() {
        let d = decls(&[("x", 8), ("y", 8), ("unrelated", 64)]);
        check_equivalent("x = y + 8'h1;", "x = y + 8'h2;", &d, &mut Rng::new(5));
    }

    #[test]
    fn replace_bit_with_a_wide_value_differs_from_old_verilog() {
        // `~v` in the old form was evaluated at the context width and set
        // every bit above k; rust-hdl replaces one bit.
        let d = decls(&[("x", 8), ("v", 1)]);
        let orig = "x = (x & ~(1 << (32'h2)) | ((~v) << (32'h2)));";
        let new = fit_statement(orig, &d);
        assert_eq!(new, "x = {x[7:3], ~v, x[1:0]};");
        assert!(check_equivalent(orig, &new, &d, &mut Rng::new(3)));
    }

    #[test]
    fn bit_cast_of_a_slice_or_an_expression() {
        let d = decls(&[
            ("rise", 5),
            ("data", 8),
            ("d$d", 8),
            ("q0", 5),
            ("ram", 5),
            ("ra", 6),
            ("mask", 6),
            ("rsel", 256),
            ("rc", 256),
            ("e", 4),
            ("n", 17),
            ("k", 4),
            ("s", 4),
        ]);
        assert_eq!(
            fixes("rise = ((data[(32'h0)+:(4)]) & 5'h1f);", &d),
            "rise = {{1{1'b0}}, data[(32'h0)+:(4)]};"
        );
        assert_eq!(
            fixes(
                "d$d = ((q0[(32'h0)+:(4)]) & 8'hff) | (((q0[(32'h0)+:(4)]) & 8'hff) << 32'h4);",
                &d
            ),
            "d$d = {{4{1'b0}}, q0[(32'h0)+:(4)]} | ({{4{1'b0}}, q0[(32'h0)+:(4)]} << 32'h4);"
        );
        // Narrowing an expression: the truncation is pushed down to the
        // signals (exact for + - * & | ^ ~ <<).
        assert_eq!(
            fixes("ram = ((ra & mask) & 5'h1f);", &d),
            "ram = (ra[4:0] & mask[4:0]);"
        );
        assert_eq!(
            fixes("ram = (((ra + 6'h1) & mask) & 5'h1f);", &d),
            "ram = ((ra[4:0] + 5'h1) & mask[4:0]);"
        );
        // Widening an expression: computed at its own width, then extended
        // (also in a self-determined shift amount).
        assert_eq!(
            fixes("rsel = rc >> (((4'h7 - e) & 8'hff) << 32'h5);", &d),
            "rsel = rc >> ({{4{1'b0}}, (4'h7 - e)} << 32'h5);"
        );
        assert_eq!(
            fixes("n = ((k - s) & 17'h1ffff);", &d),
            "n = {{13{1'b0}}, (k - s)};"
        );
        // `>>` does not commute with truncation: left alone.
        assert_eq!(
            fixes("ram = ((ra >> 32'h1) & 5'h1f);", &d),
            "ram = ((ra >> 32'h1) & 5'h1f);"
        );
    }

    #[test]
    fn clean_and_unknown_statements_are_left_byte_for_byte() {
        let d = decls(&[("s$d", 3), ("x", 8), ("y", 8), ("b", 1)]);
        for l in [
            "        s$d = S$B;",
            "        x = y + 8'h1;",
            "        b = x[32'h3] & (y != 8'h0);",
            "        if (s$d == S$A) begin",
            "        else if (x >= y) begin",
            "        x = $signed(y);",
            "        x = unknown + 32'h1;",
            "        case (s$d)",
        ] {
            assert_eq!(fit_statement(l, &d), l);
        }
    }
}
