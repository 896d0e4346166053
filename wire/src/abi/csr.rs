//! BAR0 register map. Every register is 32 bits wide and 4-octet aligned;
//! 64-bit values are split into `_LO`/`_HI` pairs (write `_LO` first, the
//! device latches the pair on the `_HI` write).
//!
//! ```text
//! 0x0000_0000  identification, capabilities, limits          (RO)
//! 0x0000_0020  global configuration: control, MAC, IPv4, MTU  (RW)
//! 0x0000_0040  interrupt status/mask, cycle counter
//! 0x0000_0060  event queue (EQ) in host memory
//! 0x0000_0100  command mailbox control
//! 0x0000_0400  command mailbox data (1 KiB)
//! 0x0001_0000  QP doorbell pages, 4 KiB each         (see doorbell)
//! 0x0080_0000  CQ doorbell pages, 4 KiB each         (see doorbell)
//! 0x00FF_F000  a board's own registers (never the core's)
//! ```

/// Identification register, reads [`ID_VALUE`].
pub const ID: u32 = 0x0000;
/// "RNIC" in ASCII.
pub const ID_VALUE: u32 = 0x524E_4943;
/// ABI version (see [`super::ABI_VERSION`]).
pub const ABI_VERSION: u32 = 0x0004;
/// Capability bits, `CAP_*`.
pub const CAPS: u32 = 0x0008;
/// Number of QPs (QP numbers are `0..MAX_QP`).
pub const MAX_QP: u32 = 0x000C;
/// Number of CQs.
pub const MAX_CQ: u32 = 0x0010;
/// Number of TPT entries (STag indices are `0..MAX_TPT`; index 0 is never valid).
pub const MAX_TPT: u32 = 0x0014;
/// Number of page-list entries in the device's page-list table.
pub const MAX_PBL: u32 = 0x0018;
/// Largest ring (entries) for a send, receive or completion queue.
pub const MAX_QUEUE_ENTRIES: u32 = 0x001C;

/// Device control, `CTRL_*` bits.
pub const CTRL: u32 = 0x0020;
/// Device status, `STATUS_*` bits.
pub const STATUS: u32 = 0x0024;
/// Station MAC address octets 0..4 (octet 0 in bits 7:0).
pub const MAC_LO: u32 = 0x0028;
/// Station MAC address octets 4..6 in bits 15:0.
pub const MAC_HI: u32 = 0x002C;
/// Our IPv4 address, as the u32 whose big-endian octets are the address
/// (10.0.0.1 is 0x0A00_0001).
pub const IPV4_ADDR: u32 = 0x0030;
/// IPv4 netmask, same encoding.
pub const IPV4_NETMASK: u32 = 0x0034;
/// IPv4 default gateway, same encoding (0: none).
pub const IPV4_GATEWAY: u32 = 0x0038;
/// Interface MTU in octets (IP packet size, without Ethernet header).
pub const MTU: u32 = 0x003C;

/// Interrupt status, `INT_*` bits; write 1 to clear.
pub const INT_STATUS: u32 = 0x0040;
/// Interrupt enable mask, `INT_*` bits.
pub const INT_MASK: u32 = 0x0044;
/// Free-running core-clock cycle counter, low half (reading it latches `CYCLES_HI`).
pub const CYCLES_LO: u32 = 0x0048;
/// Cycle counter, high half.
pub const CYCLES_HI: u32 = 0x004C;

/// Event queue base bus address, low half (the ring must be 64-octet aligned).
pub const EQ_BASE_LO: u32 = 0x0060;
/// Event queue base, high half.
pub const EQ_BASE_HI: u32 = 0x0064;
/// Event queue size in entries (a power of two; 0 disables the queue).
pub const EQ_ENTRIES: u32 = 0x0068;
/// Event queue consumer index, written by the host after it has consumed entries.
pub const EQ_CONSUMER: u32 = 0x006C;

/// Mailbox control: the host writes the command opcode here to start a
/// command once `MBOX_DATA` and `MBOX_LEN` are written; reads show `MBOX_BUSY`
/// while the firmware works on it.
pub const MBOX_CTRL: u32 = 0x0100;
/// Mailbox status of the last finished command, a [`super::mailbox::MboxStatus`].
pub const MBOX_STATUS: u32 = 0x0104;
/// Length in octets of the parameters in `MBOX_DATA` (in), then of the result (out).
pub const MBOX_LEN: u32 = 0x0108;
/// Sequence number of the last finished command (increments by one per command).
pub const MBOX_SEQ: u32 = 0x010C;
/// `MBOX_CTRL` bit set while a command is running.
pub const MBOX_BUSY: u32 = 1 << 31;
/// Mailbox data window: parameters in, results out.
pub const MBOX_DATA: u32 = 0x0400;
/// Size of the mailbox data window in octets.
pub const MBOX_DATA_SIZE: u32 = 0x400;

/// First QP doorbell page; QP `n`'s page is at `QP_DOORBELL_BASE + n * DOORBELL_PAGE_SIZE`.
pub const QP_DOORBELL_BASE: u32 = 0x0001_0000;
/// First CQ doorbell page; CQ `n`'s page is at `CQ_DOORBELL_BASE + n * DOORBELL_PAGE_SIZE`.
pub const CQ_DOORBELL_BASE: u32 = 0x0080_0000;
/// The last 4 KiB of BAR0's 16 MiB: registers of a board top around the
/// core (the ECPIX-5's CPU control, `hw/src/board/cpu_port.rs`), which
/// never reach the core. Below every doorbell page of up to 2,047 CQs.
pub const BOARD_REGS: u32 = 0x00FF_F000;
/// ECPIX-5 top: the CPU control register, bit 0 [`CPU_CTL_HOLD`] (0 after
/// reset: the on-chip CPU runs and owns the firmware port).
pub const CPU_CTL: u32 = BOARD_REGS;
/// `CPU_CTL` bit 0: the CPU is held in reset, the bridge's firmware window
/// owns the firmware port, and the load port writes.
pub const CPU_CTL_HOLD: u32 = 1;
/// ECPIX-5 top: the instruction-memory octet address of the next load word.
pub const CPU_LOAD_ADDR: u32 = BOARD_REGS + 4;
/// ECPIX-5 top (write only): one instruction-memory word at
/// `CPU_LOAD_ADDR`, which then advances by 4.
pub const CPU_LOAD_DATA: u32 = BOARD_REGS + 8;
/// Doorbell pages are one 4 KiB page apart, so one can be mapped into one
/// user process (kernel bypass) without exposing another QP's doorbell.
pub const DOORBELL_PAGE_SIZE: u32 = 0x1000;
/// Most QP doorbell pages BAR0 has room for (so at most this many QPs).
pub const QP_DOORBELL_PAGES: u32 = 1024;
/// Most CQ doorbell pages BAR0 has room for.
pub const CQ_DOORBELL_PAGES: u32 = 1024;
/// Size of BAR0.
pub const BAR0_SIZE: u32 = 0x0100_0000;

/// `CAPS`: MPA markers supported (RFC 5044 §4.3).
pub const CAP_MARKERS: u32 = 1 << 0;
/// `CAPS`: MPA CRC32c supported (RFC 5044 §4.4).
pub const CAP_CRC: u32 = 1 << 1;
/// `CAPS`: MPA revision 1 peers supported.
pub const CAP_MPA_REV1: u32 = 1 << 2;
/// `CAPS`: RFC 6581 enhanced connection setup (IRD/ORD, ready-to-receive).
pub const CAP_ENHANCED: u32 = 1 << 3;
/// `CAPS`: RFC 7306 Write with Immediate / Immediate Data.
pub const CAP_IMMEDIATE: u32 = 1 << 4;
/// `CAPS`: send WQEs may be pushed through the QP's doorbell page
/// ([`super::doorbell::QP_SQ_PUSH`]).
pub const CAP_WQE_PUSH: u32 = 1 << 5;
/// `CAPS` bits 15:8: the largest number of SGEs in one WQE.
pub const CAP_MAX_SGE_SHIFT: u32 = 8;
/// Mask of the max-SGE field after shifting.
pub const CAP_MAX_SGE_MASK: u32 = 0xFF;
/// `CAPS` bits 23:16: the largest number of sink SGEs of an RDMA Read WQE
/// (at most `CAPS[15:8]`; the device places a Read's response into one).
pub const CAP_MAX_READ_SGE_SHIFT: u32 = 16;
/// Mask of the max-Read-SGE field after shifting.
pub const CAP_MAX_READ_SGE_MASK: u32 = 0xFF;
/// `CAPS` bits 31:24: the largest inline message in octets
/// (`abi::wqe::MAX_INLINE_DATA` at most; 0: no inline WQEs).
pub const CAP_MAX_INLINE_SHIFT: u32 = 24;
/// Mask of the max-inline field after shifting.
pub const CAP_MAX_INLINE_MASK: u32 = 0xFF;

/// `CTRL`: enable the datapath.
pub const CTRL_ENABLE: u32 = 1 << 0;
/// `CTRL`: reset the device (self-clearing): tables, queues and BAR0 back
/// to power-on, but the interface configuration (`MAC_*`, `IPV4_*`, `MTU`).
pub const CTRL_RESET: u32 = 1 << 1;
/// `STATUS`: firmware is up and takes mailbox commands.
pub const STATUS_READY: u32 = 1 << 0;
/// `STATUS`: Ethernet link is up.
pub const STATUS_LINK_UP: u32 = 1 << 1;

/// `INT_*`: an event queue entry was written.
pub const INT_EVENT: u32 = 1 << 0;
/// `INT_*`: a mailbox command finished.
pub const INT_MBOX_DONE: u32 = 1 << 1;
/// `INT_*`: the event queue overflowed (events were lost; the host must resync).
pub const INT_EQ_OVERFLOW: u32 = 1 << 2;

/// Offset of QP `qpn`'s doorbell page.
pub const fn qp_doorbell_page(qpn: u32) -> u32 {
    QP_DOORBELL_BASE + qpn * DOORBELL_PAGE_SIZE
}

/// Offset of CQ `cqn`'s doorbell page.
pub const fn cq_doorbell_page(cqn: u32) -> u32 {
    CQ_DOORBELL_BASE + cqn * DOORBELL_PAGE_SIZE
}

// The register blocks must not overlap.
const _: () = assert!(MBOX_DATA + MBOX_DATA_SIZE <= QP_DOORBELL_BASE);
const _: () =
    assert!(QP_DOORBELL_BASE + QP_DOORBELL_PAGES * DOORBELL_PAGE_SIZE <= CQ_DOORBELL_BASE);
const _: () = assert!(CQ_DOORBELL_BASE + CQ_DOORBELL_PAGES * DOORBELL_PAGE_SIZE <= BAR0_SIZE);
