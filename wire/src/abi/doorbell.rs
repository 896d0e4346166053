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
