//! TX: the first 16 or 20 octets of an FPDU — MPA's ULPDU_LENGTH and the
//! DDP/RDMAP header (RFC 5044 §4.1, RFC 5041 §4, RFC 5040 §4.1) — from a
//! segment descriptor's fields. Combinational.
//!
//! | FPDU octets | tagged (RDMA Write, Read Response) | untagged (all others) |
//! |---|---|---|
//! | 0..2 | ULPDU_LENGTH = 14 + `pay_len` | ULPDU_LENGTH = 18 + `pay_len` |
//! | 2 | `T=1, L, DV=01` | `T=0, L, DV=01` |
//! | 3 | RDMAP control: `RV=01`, opcode | same |
//! | 4..8 | STag | RsvdULP ext.: Invalidate STag for opcodes 0100b/0110b, else 0 |
//! | 8..16 | TO | 8..12 QN, 12..16 MSN |
//! | 16..20 | (not part of the header: 4 words) | MO (5 words) |
//!
//! `hdr` carries those octets in little-endian lanes (octet 0 in
//! `hdr[7:0]`), i.e. 4 or 5 4-octet words for the framer (which takes the
//! count from the descriptor, registered: `tx_mpa`'s `hwords`). Both header
//! lengths plus ULPDU_LENGTH are multiples of 4, which is why the payload
//! (and the pad after it) of every FPDU starts word-aligned (see `tx_mpa`).
//!
//! Also here: [`ByteRev`], a byte-order reversal used to turn fields
//! assembled in network order (first octet most significant) into
//! little-endian lanes; `tx_tcp_hdr` uses it too.

#[cfg(doc)]
use rnic_wire::ddp::{TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN};
use rust_hdl::prelude::*;

/// Combinational byte reversal of a `W`-bit value (`W` a multiple of 8):
/// octet `k` of `din` becomes octet `W/8 - 1 - k` of `dout`. Custom Verilog
/// (a concatenation, no logic).
#[derive(LogicBlock, Default)]
pub struct ByteRev<const W: usize> {
    pub din: Signal<In, Bits<W>>,
    pub dout: Signal<Out, Bits<W>>,
}

impl<const W: usize> Logic for ByteRev<W> {
    fn update(&mut self) {
        let x = self.din.val();
        let n = W / 8;
        if W <= 64 {
            let v = x.to_u64().swap_bytes() >> (64 - W);
            self.dout.next = v.into();
        } else {
            let mut y: Bits<W> = 0.into();
            for k in 0..n {
                y.set_bits::<8>(8 * (n - 1 - k), x.get_bits::<8>(8 * k));
            }
            self.dout.next = y;
        }
    }

    fn connect(&mut self) {
        self.dout.connect();
    }

    fn hdl(&self) -> Verilog {
        assert_eq!(W % 8, 0);
        let parts: Vec<String> = (0..W / 8)
            .map(|k| format!("din[{}:{}]", 8 * k + 7, 8 * k))
            .collect();
        Verilog::Custom(format!("assign dout = {{{}}};\n", parts.join(", ")))
    }
}

/// The FPDU's leading octets (see the module docs). `pay_len` is the length
/// of what follows the DDP header (payload, or the RDMAP header of a Read
/// Request / Terminate / Immediate Data message).
#[derive(LogicBlock, Default)]
pub struct TxDdpHdr {
    pub opcode: Signal<In, Bits<4>>,
    /// DDP L flag (RFC 5041 §4.1).
    pub last: Signal<In, Bit>,
    /// Tagged: the Data Sink STag. Untagged: the Invalidate STag, used only
    /// for Send with Invalidate (with or without SE), RFC 5040 §4.3.
    pub stag: Signal<In, Bits<32>>,
    pub to: Signal<In, Bits<64>>,
    pub qn: Signal<In, Bits<32>>,
    pub msn: Signal<In, Bits<32>>,
    pub mo: Signal<In, Bits<32>>,
    pub pay_len: Signal<In, Bits<16>>,
    /// Octets 0..20 in little-endian lanes (16..20 zero when tagged).
    pub hdr: Signal<Out, Bits<160>>,
    is_tagged: Signal<Local, Bit>,
    ulen: Signal<Local, Bits<16>>,
    ctl: Signal<Local, Bits<8>>,
    inv: Signal<Local, Bits<32>>,
    rev: ByteRev<160>,
}

impl Logic for TxDdpHdr {
    // Literals (rust-hdl cannot name Rust constants in HDL): opcodes 0 RDMA
    // Write, 2 Read Response, 4/6 Send with Invalidate (SE) (RFC 5040 §4.1
    // Figure 4); DDP control 0x80 T, L << 6, DV = 1 (RFC 5041 §4.1); RDMAP
    // RV = 01 in bits 7:6 (0x40); header lengths 14/18 ([`TAGGED_HEADER_LEN`],
    // [`UNTAGGED_HEADER_LEN`]; checked by `literals_match_rfc_constants`).
    #[hdl_gen]
    fn update(&mut self) {
        self.is_tagged.next = (self.opcode.val() == 0) | (self.opcode.val() == 2);
        self.inv.next = 0.into();
        if (self.opcode.val() == 4) | (self.opcode.val() == 6) {
            self.inv.next = self.stag.val();
        }
        self.ctl.next = (bit_cast::<8, 1>(self.last.val().into()) << 6) | 1;
        self.ulen.next = self.pay_len.val() + 18;
        // Network order: octet 0 in bits 159:152.
        self.rev.din.next = (bit_cast::<160, 16>(self.ulen.val()) << 144)
            | (bit_cast::<160, 8>(self.ctl.val()) << 136)
            | ((bit_cast::<160, 4>(self.opcode.val()) | 0x40) << 128)
            | (bit_cast::<160, 32>(self.inv.val()) << 96)
            | (bit_cast::<160, 32>(self.qn.val()) << 64)
            | (bit_cast::<160, 32>(self.msn.val()) << 32)
            | bit_cast::<160, 32>(self.mo.val());
        if self.is_tagged.val() {
            self.ctl.next = (bit_cast::<8, 1>(self.last.val().into()) << 6) | 0x81;
            self.ulen.next = self.pay_len.val() + 14;
            self.rev.din.next = (bit_cast::<160, 16>(self.ulen.val()) << 144)
                | (bit_cast::<160, 8>(self.ctl.val()) << 136)
                | ((bit_cast::<160, 4>(self.opcode.val()) | 0x40) << 128)
                | (bit_cast::<160, 32>(self.stag.val()) << 96)
                | (bit_cast::<160, 64>(self.to.val()) << 32);
        }
        self.hdr.next = self.rev.dout.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::Rng;
    use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};

    /// The literals in `update` are the RFC values `rnic-wire` names.
    #[test]
    fn literals_match_rfc_constants() {
        use rnic_wire::ddp::{control, DDP_VERSION, TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN};
        use rnic_wire::rdmap::{Opcode, RDMAP_VERSION};
        assert_eq!(TAGGED_HEADER_LEN, 14);
        assert_eq!(UNTAGGED_HEADER_LEN, 18);
        assert_eq!(control::TAGGED | DDP_VERSION, 0x81);
        assert_eq!(control::LAST, 1 << 6);
        assert_eq!(RDMAP_VERSION << 6, 0x40);
        assert_eq!(Opcode::RdmaWrite.value(), 0);
        assert_eq!(Opcode::ReadResponse.value(), 2);
        assert_eq!(Opcode::SendInvalidate.value(), 4);
        assert_eq!(Opcode::SendSeInvalidate.value(), 6);
        for op in Opcode::ALL {
            assert_eq!(op.is_tagged(), op.value() == 0 || op.value() == 2);
        }
    }

    fn settle(u: &mut TxDdpHdr) {
        assert!(simulate(u, 100), "did not settle");
    }

    /// Against `RdmapRepr::emit` (the independent reference): every opcode
    /// the TX path sends, random fields, L both ways.
    #[test]
    fn header_matches_rdmap_emit() {
        let mut uut = TxDdpHdr::default();
        uut.opcode.connect();
        uut.last.connect();
        uut.stag.connect();
        uut.to.connect();
        uut.qn.connect();
        uut.msn.connect();
        uut.mo.connect();
        uut.pay_len.connect();
        uut.connect_all();
        let mut rng = Rng::new(11);
        for i in 0..400 {
            let last = rng.below(2) == 1;
            let stag = rng.next_u64() as u32;
            let to = rng.next_u64();
            let msn = rng.next_u64() as u32;
            let mo = rng.next_u64() as u32;
            let plen = rng.below(40);
            let payload = rng.bytes(plen);
            let req = ReadRequestRepr {
                sink_stag: rng.next_u64() as u32,
                sink_to: rng.next_u64(),
                size: rng.next_u64() as u32,
                src_stag: rng.next_u64() as u32,
                src_to: rng.next_u64(),
            };
            let inv = if rng.below(2) == 1 { Some(stag) } else { None };
            let repr = match i % 5 {
                0 => RdmapRepr::RdmaWrite {
                    last,
                    stag,
                    to,
                    payload: &payload,
                },
                1 => RdmapRepr::ReadResponse {
                    last,
                    stag,
                    to,
                    payload: &payload,
                },
                2 => RdmapRepr::Send {
                    solicited: rng.below(2) == 1,
                    invalidate_stag: inv,
                    last,
                    msn,
                    mo,
                    payload: &payload,
                },
                3 => RdmapRepr::ReadRequest { msn, request: req },
                _ => RdmapRepr::ImmediateData {
                    solicited: rng.below(2) == 1,
                    msn,
                    data: [1, 2, 3, 4, 5, 6, 7, 8],
                },
            };
            let mut seg = vec![0u8; repr.buffer_len()];
            repr.emit(&mut seg).unwrap();
            let ddp = repr.ddp_repr();
            let hlen = ddp.header_len();
            let mut expect = (seg.len() as u16).to_be_bytes().to_vec();
            expect.extend_from_slice(&seg[..hlen]);
            expect.resize(20, 0);
            let (qn, m, o, l) = match ddp {
                rnic_wire::ddp::DdpRepr::Untagged {
                    qn, msn, mo, last, ..
                } => (qn, msn, mo, last),
                rnic_wire::ddp::DdpRepr::Tagged { last, .. } => (rng.next_u64() as u32, 0, 0, last),
            };
            uut.opcode.next = (repr.opcode().value() as u64).into();
            uut.last.next = l;
            // Garbage in the STag input of opcodes without an Invalidate
            // STag: the block must not send it.
            uut.stag.next =
                (inv.unwrap_or(if ddp.is_tagged() { stag } else { !stag }) as u64).into();
            uut.to.next = to.into();
            uut.qn.next = (qn as u64).into();
            uut.msn.next = (m as u64).into();
            uut.mo.next = (o as u64).into();
            uut.pay_len.next = ((seg.len() - hlen) as u64).into();
            settle(&mut uut);
            let h = uut.hdr.val();
            let got: Vec<u8> = (0..20).map(|k| h.get_bits::<8>(8 * k).to_u8()).collect();
            assert_eq!(got, expect, "case {i}: {repr:?}");
        }
    }
}
