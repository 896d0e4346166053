//! The rnic host/device ABI (DESIGN.md §3): what the host driver, the
//! firmware and the RTL agree on. All multi-octet fields are little-endian.
//!
//! | module | what |
//! |---|---|
//! | [`bridge`] | the board's UDP host bridge (MMIO, DMA and interrupts over Ethernet, `docs/bridge.md`) |
//! | [`csr`] | BAR0 register map: identification, configuration, interrupts, event queue, mailbox, doorbell pages |
//! | [`doorbell`] | the per-QP and per-CQ doorbell pages (4 KiB apart, mappable into one process) |
//! | [`wqe`] | send and receive work queue entries (rings in host memory) |
//! | [`cqe`] | completion queue entries and the verbs status codes |
//! | [`tpt`] | STags and Translation and Protection Table entries |
//! | [`mailbox`] | firmware commands, their parameters and results, and event queue entries |
//! | [`caps`] | device limits: the largest MTU and MULPDU the device transmits |
//!
//! Fixed-size records are plain structs with `SIZE`, `parse(&[u8])` and
//! `emit(&mut [u8])`; their field offsets are named constants, and each
//! record asserts at compile time that its last field ends at `SIZE`.

pub mod bridge;
pub mod caps;
pub mod context;
pub mod cqe;
pub mod csr;
pub mod doorbell;
pub mod mailbox;
pub mod tpt;
pub mod wqe;

/// The ABI version the device reports in [`csr::ABI_VERSION`]:
/// major in bits 31:16, minor in 15:0. The driver refuses another major.
pub const ABI_VERSION: u32 = abi_version(2, 0);

/// Packs an ABI version.
pub const fn abi_version(major: u16, minor: u16) -> u32 {
    ((major as u32) << 16) | minor as u32
}

/// Major part of a packed ABI version.
pub const fn abi_major(v: u32) -> u16 {
    (v >> 16) as u16
}

/// Little-endian field access on byte slices; callers check the length first.
pub(crate) mod le {
    pub fn u16_at(b: &[u8], off: usize) -> u16 {
        u16::from_le_bytes([b[off], b[off + 1]])
    }
    pub fn u32_at(b: &[u8], off: usize) -> u32 {
        u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
    }
    pub fn u64_at(b: &[u8], off: usize) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[off..off + 8]);
        u64::from_le_bytes(a)
    }
    pub fn put_u16(b: &mut [u8], off: usize, v: u16) {
        b[off..off + 2].copy_from_slice(&v.to_le_bytes());
    }
    pub fn put_u32(b: &mut [u8], off: usize, v: u32) {
        b[off..off + 4].copy_from_slice(&v.to_le_bytes());
    }
    pub fn put_u64(b: &mut [u8], off: usize, v: u64) {
        b[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// Checks that `buf` holds at least `size` octets.
pub(crate) fn check_len(buf: &[u8], size: usize) -> crate::Result<()> {
    if buf.len() < size {
        Err(crate::Error::Truncated)
    } else {
        Ok(())
    }
}

/// Checks that an output buffer holds at least `size` octets.
pub(crate) fn check_out(buf: &[u8], size: usize) -> crate::Result<()> {
    if buf.len() < size {
        Err(crate::Error::BufferTooSmall)
    } else {
        Ok(())
    }
}
