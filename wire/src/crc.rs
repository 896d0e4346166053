//! CRC32c (Castagnoli), as used by MPA (RFC 5044 §6) and iSCSI (RFC 3720 §12.1).

/// Reflected CRC32c polynomial (RFC 3720 §12.1: 0x1EDC6F41, bit-reversed).
pub const CRC32C_POLY_REFLECTED: u32 = 0x82F6_3B78;

const fn make_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut crc = n as u32;
        let mut k = 0;
        while k < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ CRC32C_POLY_REFLECTED
            } else {
                crc >> 1
            };
            k += 1;
        }
        table[n] = crc;
        n += 1;
    }
    table
}

static TABLE: [u32; 256] = make_table();

/// CRC32c of `data`, continuing from a previous `crc` (0 to start).
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    #[cfg(feature = "std")]
    {
        crc32c::crc32c_append(crc, data)
    }
    #[cfg(not(feature = "std"))]
    {
        crc32c_append_table(crc, data)
    }
}

/// CRC32c of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c_append(0, data)
}

/// The table-driven CRC32c used where `std` (and so the `crc32c` crate) is absent.
pub fn crc32c_append_table(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c = TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3720 §B.4 CRC examples.
    #[test]
    fn rfc3720_b4_vectors() {
        let zeros = [0u8; 32];
        let ones = [0xffu8; 32];
        let mut inc = [0u8; 32];
        let mut dec = [0u8; 32];
        for i in 0..32 {
            inc[i] = i as u8;
            dec[i] = 31 - i as u8;
        }
        for f in [crc32c, |d: &[u8]| crc32c_append_table(0, d)] {
            assert_eq!(f(&zeros), 0x8a91_36aa);
            assert_eq!(f(&ones), 0x62a8_ab43);
            assert_eq!(f(&inc), 0x46dd_794e);
            assert_eq!(f(&dec), 0x113f_db5c);
        }
    }
}
