//! Device limits the firmware and the driver must respect (what the RTL can
//! transmit). `docs/rtl.md`, "MTU 9000 on the transmit side".

use crate::ddp::TAGGED_HEADER_LEN;
use crate::mpa::mulpdu;

/// IPv4 header without options (RFC 791 §3.1), as the TX framer sends it.
pub const IPV4_HDR_LEN: u16 = 20;
/// TCP header without options (RFC 9293 §3.1): the device's data segments
/// carry no TCP options.
pub const TCP_HDR_LEN: u16 = 20;
/// Largest IP MTU of a frame the TX framer builds (jumbo frames; the RX side
/// takes 9018-octet Ethernet frames, `docs/rtl.md` "rx_fifo").
pub const TX_MAX_MTU: u16 = 9000;
/// Largest TCP payload of a device frame: 9000 − 20 − 20 = 8960 octets (the
/// EMSS of a 9000-octet MTU without TCP options).
pub const TX_MAX_TCP_PAYLOAD: u16 = TX_MAX_MTU - IPV4_HDR_LEN - TCP_HDR_LEN;
/// Largest payload of one TX DMA read (the DMA read contract, 1..=4096
/// octets, and `tx_seg`'s 512-beat reorder slot).
pub const TX_MAX_SEG_READ: u16 = 4096;
/// Reads (reorder slots) `tx_seg` may use for one segment's payload: a
/// longer payload is read with several ≤ 4096-octet reads into consecutive
/// slots of its 4-slot reorder buffer, drained as one payload stream
/// (`docs/rtl.md` "Full 9000-octet frames").
pub const TX_SEG_MAX_READS: u16 = 3;
/// Largest MULPDU the framer alone could send with markers on (RFC 5044
/// §4.5 formula on the 8960-octet EMSS): 8960 − 6 − 4·18 = 8882; with
/// markers off it is 8954.
pub const FRAMER_MAX_MULPDU: u16 = mulpdu(TX_MAX_TCP_PAYLOAD, true);
/// Largest MULPDU the device transmits: min(framer 8882, `tx_seg`'s 3 reads
/// of 4096 octets after a 14-octet tagged DDP header = 12302) = 8882, the
/// MULPDU of a 9000-octet MTU's EMSS with markers (RFC 5044 §8). The
/// firmware configures at most this (RFC 5044 §4.5/§8: MULPDU is the
/// sender's choice bounded by EMSS, so a smaller one is always legal); `tx_seg`
/// refuses WQEs of a QP whose MULPDU is larger.
pub const MAX_MULPDU: u16 = min(
    FRAMER_MAX_MULPDU,
    TX_SEG_MAX_READS * TX_MAX_SEG_READ + TAGGED_HEADER_LEN as u16,
);

const fn min(a: u16, b: u16) -> u16 {
    if a < b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(TX_MAX_TCP_PAYLOAD, 8960);
        assert_eq!(FRAMER_MAX_MULPDU, 8882);
        assert_eq!(MAX_MULPDU, 8882);
        // A MULPDU at the limit fits a 9000 MTU frame with markers on.
        let fpdu = crate::mpa::fpdu_len(MAX_MULPDU as usize);
        assert!(fpdu + 4 * fpdu.div_ceil(508) <= TX_MAX_TCP_PAYLOAD as usize);
    }
}
