//! Doorbell pages. Each QP and each CQ has its own 4 KiB page in BAR0
//! ([`super::csr::qp_doorbell_page`], [`super::csr::cq_doorbell_page`]), so a
//! user process can be given exactly its own doorbells (kernel bypass).
//!
//! Producer and consumer indices are free-running 32-bit counters; the device
//! takes them modulo the ring size. A doorbell write is the only MMIO a data
//! path call makes.

/// QP page: send queue producer index. Writing it tells the device that the
/// WQEs before this index are valid in host memory.
pub const QP_SQ_PRODUCER: u32 = 0x000;
/// QP page: receive queue producer index.
pub const QP_RQ_PRODUCER: u32 = 0x004;

/// QP page: the send WQE push window, [`QP_SQ_PUSH_SIZE`] octets (one
/// WQE), on a device with [`super::csr::CAP_WQE_PUSH`].
///
/// A push hands the device a copy of the WQE it is about to post, so the
/// device need not read it from the ring (one DMA round trip less on a
/// small message's latency). The rules:
///
/// * the WQE is first written into its ring slot as always: the ring copy
///   is the WQE (the device may read it instead, and retransmission reads
///   the ring);
/// * the push is the WQE's first `n` dwords (1 ≤ `n` ≤ 32), written in
///   order through this window, dword `k` at `QP_SQ_PUSH + 4 k`, dword 0
///   first; the device reads the WQE's other dwords as zero, so `n` must
///   cover its last non-zero octet;
/// * the [`QP_SQ_PRODUCER`] write that follows makes the pushed WQE the
///   last one posted (index `producer - 1`).
///
/// The device has one push buffer. It uses the push only when that WQE is
/// the one WQE its next fetch for the QP would read; a push that another
/// QP's push interrupts, that comes out of order, or that arrives while
/// the previous one is still being taken is dropped, and the device reads
/// the ring. A push is never required for correctness.
pub const QP_SQ_PUSH: u32 = 0x800;
/// Size of the push window: one WQE.
pub const QP_SQ_PUSH_SIZE: u32 = crate::abi::wqe::WQE_SIZE as u32;

/// How many dwords of `wqe` a push writes ([`QP_SQ_PUSH`]): up to its last
/// non-zero one, at least one.
pub fn push_dwords(wqe: &[u8]) -> usize {
    wqe.chunks(4)
        .rposition(|d| d.iter().any(|&x| x != 0))
        .map_or(1, |k| k + 1)
}

/// CQ page: consumer index. The device never overwrites an entry the host has
/// not consumed; a CQ that would overflow moves its QPs to error.
pub const CQ_CONSUMER: u32 = 0x000;
/// CQ page: arm for notification; the value is a [`CqArm`].
pub const CQ_ARM: u32 = 0x004;

/// How a CQ is armed: the next completion, or the next solicited one
/// (Send with Solicited Event, RFC 5040 §5.1), raises one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum CqArm {
    /// Event on the next completion of any kind.
    NextCompletion = 1,
    /// Event on the next solicited completion or error completion.
    Solicited = 2,
}

impl CqArm {
    /// Decodes the value written to [`CQ_ARM`].
    pub fn from_u32(v: u32) -> Option<Self> {
        match v {
            1 => Some(CqArm::NextCompletion),
            2 => Some(CqArm::Solicited),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A push covers the WQE up to its last non-zero octet's dword, and
    /// always dword 0.
    #[test]
    fn push_covers_the_last_non_zero_dword() {
        let mut w = [0u8; 128];
        assert_eq!(push_dwords(&w), 1);
        w[0] = 1;
        assert_eq!(push_dwords(&w), 1);
        w[32] = 7;
        assert_eq!(push_dwords(&w), 9);
        w[35] = 7;
        assert_eq!(push_dwords(&w), 9);
        w[127] = 1;
        assert_eq!(push_dwords(&w), 32);
    }
}
