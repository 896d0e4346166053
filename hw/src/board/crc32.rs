//! CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) over one byte per
//! clock, as a combinational block: `crc_out` = `crc_in` advanced by `din`.
//! The register is kept un-inverted (init `0xFFFF_FFFF`, the FCS is its
//! complement, sent least significant byte first); running it over a frame
//! *including* a correct FCS leaves [`RESIDUE`].

use rust_hdl::prelude::*;

/// Register value after a frame followed by its correct FCS.
pub const RESIDUE: u32 = 0xDEBB_20E3;
/// Reflected IEEE 802.3 polynomial.
pub const POLY: u32 = 0xEDB8_8320;

/// Plain-Rust reference of one byte step (used by tests and documentation).
pub fn step(mut crc: u32, byte: u8) -> u32 {
    crc ^= byte as u32;
    for _ in 0..8 {
        crc = if crc & 1 != 0 {
            (crc >> 1) ^ POLY
        } else {
            crc >> 1
        };
    }
    crc
}

#[derive(LogicBlock)]
pub struct Crc32Byte {
    pub crc_in: Signal<In, Bits<32>>,
    pub din: Signal<In, Bits<8>>,
    pub crc_out: Signal<Out, Bits<32>>,
    poly: Constant<Bits<32>>,
    c: Signal<Local, Bits<32>>,
}

impl Default for Crc32Byte {
    fn default() -> Self {
        Self {
            crc_in: Default::default(),
            din: Default::default(),
            crc_out: Default::default(),
            poly: Constant::new((POLY as u64).into()),
            c: Default::default(),
        }
    }
}

impl Logic for Crc32Byte {
    #[hdl_gen]
    fn update(&mut self) {
        // Eight unrolled shift/XOR steps; synthesis flattens them to one
        // XOR function of (crc_in, byte) per output bit.
        self.c.next = self.crc_in.val() ^ bit_cast::<32, 8>(self.din.val());
        for _i in 0..8 {
            if self.c.val().get_bit(0) {
                self.c.next = (self.c.val() >> 1) ^ self.poly.val();
            } else {
                self.c.next = self.c.val() >> 1;
            }
        }
        self.crc_out.next = self.c.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_matches_crc32fast_style_vectors() {
        // "123456789" -> 0xCBF43926 (the standard CRC-32 check value).
        let c = b"123456789".iter().fold(0xFFFF_FFFF, |c, &b| step(c, b));
        assert_eq!(!c, 0xCBF4_3926);
        // Appending the FCS (LSB first) leaves the residue.
        let fcs = (!c).to_le_bytes();
        let r = fcs.iter().fold(c, |c, &b| step(c, b));
        assert_eq!(r, RESIDUE);
    }

    #[test]
    fn block_matches_reference() {
        let mut uut = Crc32Byte::default();
        uut.crc_in.connect();
        uut.din.connect();
        uut.connect_all();
        let mut x = 0x1234_5678u32;
        for b in 0..=255u8 {
            uut.crc_in.next = (x as u64).into();
            uut.din.next = (b as u64).into();
            assert!(simulate(&mut uut, 100));
            assert_eq!(uut.crc_out.val().to_u64() as u32, step(x, b));
            x = x.rotate_left(7) ^ (b as u32 * 0x0101_0101);
        }
    }
}
