//! STags and the Translation and Protection Table (TPT).
//!
//! An STag (RFC 5040 §2.1, RFC 5041 §3.2) is 32 bits: a 24-bit index into the
//! device's TPT and an 8-bit key chosen by the consumer, so that a stale STag
//! whose index was reused is refused. Every tagged access is checked against
//! the TPT entry: valid, key, protection domain of the QP, access right, and
//! bounds; a region's virtual addresses are translated through its page list
//! (held in the device's page-list table, `MAX_PBL` entries of host bus
//! addresses) to bus addresses.
//!
//! TPT entry layout (device table, written by the firmware):
//! ```text
//!  0  state       u8   [`TptState`]
//!  1  key         u8   the STag's key
//!  2  access      u8   `ACCESS_*`
//!  3  page_shift  u8   log2 of the page size, 12..=30
//!  4  pd          u32  protection domain
//!  8  va          u64  first virtual address of the region
//! 16  length      u64  octets
//! 24  pbl_base    u32  first entry in the page-list table
//! 28  npages      u32  number of page-list entries
//! ```

use super::le::*;
use super::{check_len, check_out};
use crate::{Error, Result};

/// Size of a TPT entry in octets.
pub const TPT_ENTRY_SIZE: usize = 32;
/// Number of bits in an STag's index.
pub const STAG_INDEX_BITS: u32 = 24;
/// Smallest page size (4 KiB).
pub const PAGE_SHIFT_MIN: u8 = 12;
/// Largest page size (1 GiB).
pub const PAGE_SHIFT_MAX: u8 = 30;

/// The local may write the region (receive buffers, Read sinks).
pub const ACCESS_LOCAL_WRITE: u8 = 1 << 0;
/// The peer may RDMA Write into the region.
pub const ACCESS_REMOTE_WRITE: u8 = 1 << 1;
/// The peer may RDMA Read from the region.
pub const ACCESS_REMOTE_READ: u8 = 1 << 2;
/// Every defined access bit.
pub const ACCESS_ALL: u8 = ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ;

const OFF_STATE: usize = 0;
const OFF_KEY: usize = 1;
const OFF_ACCESS: usize = 2;
const OFF_PAGE_SHIFT: usize = 3;
const OFF_PD: usize = 4;
const OFF_VA: usize = 8;
const OFF_LENGTH: usize = 16;
const OFF_PBL_BASE: usize = 24;
const OFF_NPAGES: usize = 28;
const _: () = assert!(OFF_NPAGES + 4 == TPT_ENTRY_SIZE);

/// A Steering Tag: 24-bit TPT index and 8-bit key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Stag(pub u32);

impl Stag {
    /// The STag for `index` (< 2^24) and `key`; `None` if the index does not fit.
    pub fn new(index: u32, key: u8) -> Option<Stag> {
        (index < (1 << STAG_INDEX_BITS)).then_some(Stag((index << 8) | key as u32))
    }
    /// The TPT index.
    pub fn index(self) -> u32 {
        self.0 >> 8
    }
    /// The consumer key.
    pub fn key(self) -> u8 {
        self.0 as u8
    }
}

/// The state of a TPT entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TptState {
    /// Unused; every access is refused (invalid STag).
    Free = 0,
    /// Registered and usable.
    Valid = 1,
    /// Invalidated (Send with Invalidate, RFC 5040 §5.2, or local); refused
    /// until re-registered.
    Invalid = 2,
}

/// Why a TPT check refused an access. Each maps to an RFC 5041 §7 tagged
/// buffer error (for remote accesses) or a local protection error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TptFault {
    /// No valid entry at the index, or the key differs (RFC 5041: invalid STag).
    InvalidStag,
    /// The QP's protection domain differs (STag not associated with the stream).
    WrongPd,
    /// The access right is not granted.
    AccessRights,
    /// Outside the region (base or bounds violation).
    Bounds,
    /// The offset plus length wraps 2^64 (RFC 5041: tagged offset wrap).
    OffsetWrap,
}

/// A TPT entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TptEntry {
    /// State.
    pub state: TptState,
    /// Key that the STag must carry.
    pub key: u8,
    /// `ACCESS_*`.
    pub access: u8,
    /// log2 of the page size.
    pub page_shift: u8,
    /// Protection domain.
    pub pd: u32,
    /// First virtual address (the tagged offset of the region's first octet).
    pub va: u64,
    /// Length in octets.
    pub length: u64,
    /// First page-list entry.
    pub pbl_base: u32,
    /// Number of page-list entries.
    pub npages: u32,
}

impl TptEntry {
    /// Size in octets.
    pub const SIZE: usize = TPT_ENTRY_SIZE;

    /// Parses an entry.
    pub fn parse(b: &[u8]) -> Result<Self> {
        check_len(b, TPT_ENTRY_SIZE)?;
        let state = match b[OFF_STATE] {
            0 => TptState::Free,
            1 => TptState::Valid,
            2 => TptState::Invalid,
            _ => return Err(Error::BadField),
        };
        let access = b[OFF_ACCESS];
        let page_shift = b[OFF_PAGE_SHIFT];
        if access & !ACCESS_ALL != 0 || !(PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX).contains(&page_shift) {
            return Err(Error::BadField);
        }
        Ok(TptEntry {
            state,
            key: b[OFF_KEY],
            access,
            page_shift,
            pd: u32_at(b, OFF_PD),
            va: u64_at(b, OFF_VA),
            length: u64_at(b, OFF_LENGTH),
            pbl_base: u32_at(b, OFF_PBL_BASE),
            npages: u32_at(b, OFF_NPAGES),
        })
    }

    /// Writes the entry into `b[..TPT_ENTRY_SIZE]`.
    pub fn emit(&self, b: &mut [u8]) -> Result<()> {
        check_out(b, TPT_ENTRY_SIZE)?;
        b[OFF_STATE] = self.state as u8;
        b[OFF_KEY] = self.key;
        b[OFF_ACCESS] = self.access;
        b[OFF_PAGE_SHIFT] = self.page_shift;
        put_u32(b, OFF_PD, self.pd);
        put_u64(b, OFF_VA, self.va);
        put_u64(b, OFF_LENGTH, self.length);
        put_u32(b, OFF_PBL_BASE, self.pbl_base);
        put_u32(b, OFF_NPAGES, self.npages);
        Ok(())
    }

    /// The check every access makes (RFC 5041 §7, RFC 5040 §7): `stag` must
    /// name this valid entry with the same key, `pd` must match, `need` access
    /// bits must be granted, and `[offset, offset + len)` must lie inside the
    /// region. A zero-length access checks the STag, PD and rights but not the
    /// offset (RFC 5040 §4.4 allows zero-length Reads/Writes).
    pub fn check(
        &self,
        stag: Stag,
        pd: u32,
        need: u8,
        offset: u64,
        len: u64,
    ) -> core::result::Result<(), TptFault> {
        if self.state != TptState::Valid || self.key != stag.key() {
            return Err(TptFault::InvalidStag);
        }
        if self.pd != pd {
            return Err(TptFault::WrongPd);
        }
        if self.access & need != need {
            return Err(TptFault::AccessRights);
        }
        if len == 0 {
            return Ok(());
        }
        let end = offset.checked_add(len).ok_or(TptFault::OffsetWrap)?;
        let region_end = self.va.checked_add(self.length).ok_or(TptFault::Bounds)?;
        if offset < self.va || end > region_end {
            return Err(TptFault::Bounds);
        }
        Ok(())
    }

    /// Index of the page-list entry holding virtual address `va` and the offset
    /// inside that page (the region's first page may start before `va`:
    /// the region's offset in its first page is `va mod page size`).
    pub fn page_of(&self, va: u64) -> Option<(u32, u64)> {
        let first_page_va = self.va & !((1u64 << self.page_shift) - 1);
        let rel = va.checked_sub(first_page_va)?;
        let page = rel >> self.page_shift;
        (page < self.npages as u64).then_some((
            self.pbl_base + page as u32,
            rel & ((1u64 << self.page_shift) - 1),
        ))
    }
}
