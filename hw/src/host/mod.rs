//! Host interface: `host_regs`, BAR0 as the host sees it (device
//! registers, interrupts, the mailbox to the firmware, and the decode of
//! the QP and CQ doorbell pages that it passes on to `transmit::doorbell`
//! and `completion`).

pub mod dev_reset;
pub mod host_regs;
