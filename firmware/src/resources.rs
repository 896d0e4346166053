//! Device resources the host allocates through the mailbox: CQs, TPT
//! entries (STags) and page-list extents.

use crate::hal::{Hal, HalError, HalExt};
use rnic_wire::abi::context::{CqContext, CqState, TableId, PBL_ENTRY_SIZE};
use rnic_wire::abi::mailbox::MboxStatus;
use rnic_wire::abi::tpt::{Stag, TptEntry, TptState, ACCESS_ALL, PAGE_SHIFT_MAX, PAGE_SHIFT_MIN};

/// A memory region being set up or registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// The STag's key.
    pub key: u8,
    /// Protection domain.
    pub pd: u32,
    /// First page-list entry.
    pub pbl_base: u32,
    /// Page-list entries.
    pub npages: u32,
    /// Registered (valid in the TPT).
    pub valid: bool,
}

/// CQs (`C`), TPT entries (`T`, index 0 never used) and page-list extents
/// (`E` free extents over `pbl_size` entries).
#[derive(Debug)]
pub struct Resources<const C: usize, const T: usize, const E: usize> {
    cqs: [Option<u32>; C],
    regions: [Option<Region>; T],
    free: heapless::Vec<(u32, u32), E>,
    next_key: u8,
}

fn hal_err(_: HalError) -> MboxStatus {
    MboxStatus::NoResources
}

impl<const C: usize, const T: usize, const E: usize> Resources<C, T, E> {
    /// Back to [`Self::new`]`(pbl_size)`'s state, in place (see
    /// `Filter::reset`).
    pub fn clear(&mut self, pbl_size: u32) {
        self.cqs.iter_mut().for_each(|c| *c = None);
        self.regions.iter_mut().for_each(|r| *r = None);
        self.free.clear();
        if pbl_size > 0 {
            let _ = self.free.push((0, pbl_size));
        }
        self.next_key = 1;
    }

    /// Everything free; the page list has `pbl_size` entries.
    pub fn new(pbl_size: u32) -> Self {
        let mut free = heapless::Vec::new();
        if pbl_size > 0 {
            let _ = free.push((0, pbl_size));
        }
        Resources {
            cqs: [None; C],
            regions: [None; T],
            free,
            next_key: 1,
        }
    }

    /// Whether CQ `cqn` exists.
    pub fn cq_exists(&self, cqn: u32) -> bool {
        self.cqs.get(cqn as usize).is_some_and(Option::is_some)
    }

    /// Creates a CQ.
    pub fn create_cq<H: Hal>(
        &mut self,
        hal: &mut H,
        ring: u64,
        entries: u32,
    ) -> Result<u32, MboxStatus> {
        if !entries.is_power_of_two() || ring == 0 || ring & 63 != 0 {
            return Err(MboxStatus::BadParam);
        }
        let i = self
            .cqs
            .iter()
            .position(Option::is_none)
            .ok_or(MboxStatus::NoResources)?;
        let ctx = CqContext {
            state: CqState::Valid,
            log2_entries: entries.trailing_zeros() as u8,
            ring,
            producer: 0,
            consumer: 0,
            armed: 0,
        };
        hal.write_cq(i as u32, &ctx).map_err(hal_err)?;
        self.cqs[i] = Some(entries);
        Ok(i as u32)
    }

    /// Destroys a CQ (the caller checked no QP uses it).
    pub fn destroy_cq<H: Hal>(&mut self, hal: &mut H, cqn: u32) -> Result<(), MboxStatus> {
        let slot = self.cqs.get_mut(cqn as usize).ok_or(MboxStatus::NotFound)?;
        slot.take().ok_or(MboxStatus::NotFound)?;
        let ctx = CqContext {
            state: CqState::Free,
            log2_entries: 0,
            ring: 0,
            producer: 0,
            consumer: 0,
            armed: 0,
        };
        let _ = hal.write_cq(cqn, &ctx);
        Ok(())
    }

    fn alloc_pbl(&mut self, n: u32) -> Option<u32> {
        if n == 0 {
            return Some(0);
        }
        let i = self.free.iter().position(|&(_, len)| len >= n)?;
        let (start, len) = self.free[i];
        if len == n {
            self.free.swap_remove(i);
        } else {
            self.free[i] = (start + n, len - n);
        }
        Some(start)
    }

    fn free_pbl(&mut self, start: u32, n: u32) {
        if n == 0 {
            return;
        }
        // Merge with neighbours, else add an extent (if there is room; a
        // lost extent only costs capacity).
        let mut s = start;
        let mut l = n;
        let mut i = 0;
        while i < self.free.len() {
            let (fs, fl) = self.free[i];
            if fs + fl == s || s + l == fs {
                s = s.min(fs);
                l += fl;
                self.free.swap_remove(i);
                continue;
            }
            i += 1;
        }
        let _ = self.free.push((s, l));
    }

    /// Reserves a TPT entry and `npages` page-list entries.
    pub fn alloc_stag(&mut self, pd: u32, npages: u32) -> Result<(Stag, u32), MboxStatus> {
        if npages == 0 || npages > (1 << 20) {
            return Err(MboxStatus::BadParam);
        }
        let i = (1..T)
            .find(|&i| self.regions[i].is_none())
            .ok_or(MboxStatus::NoResources)?;
        let base = self.alloc_pbl(npages).ok_or(MboxStatus::NoResources)?;
        let key = self.next_key;
        self.next_key = self.next_key.wrapping_add(1).max(1);
        self.regions[i] = Some(Region {
            key,
            pd,
            pbl_base: base,
            npages,
            valid: false,
        });
        let stag = Stag::new(i as u32, key).ok_or(MboxStatus::NoResources)?;
        Ok((stag, base))
    }

    fn region(&self, stag: u32) -> Result<(usize, Region), MboxStatus> {
        let s = Stag(stag);
        let i = s.index() as usize;
        match self.regions.get(i) {
            Some(Some(r)) if r.key == s.key() && i != 0 => Ok((i, *r)),
            Some(_) | None => Err(MboxStatus::NotFound),
        }
    }

    /// Writes page-list entries `offset..` of region `stag`.
    pub fn write_pbl<H: Hal>(
        &mut self,
        hal: &mut H,
        stag: u32,
        offset: u32,
        addrs: &[u8],
    ) -> Result<(), MboxStatus> {
        let (_, r) = self.region(stag)?;
        if r.valid {
            return Err(MboxStatus::BadState);
        }
        if addrs.len() & (PBL_ENTRY_SIZE - 1) != 0 {
            return Err(MboxStatus::BadParam);
        }
        let n = (addrs.len() / PBL_ENTRY_SIZE) as u32;
        if offset.checked_add(n).is_none_or(|end| end > r.npages) {
            return Err(MboxStatus::BadParam);
        }
        for (k, a) in addrs.chunks_exact(PBL_ENTRY_SIZE).enumerate() {
            hal.write_table(TableId::Pbl, r.pbl_base + offset + k as u32, a)
                .map_err(hal_err)?;
        }
        Ok(())
    }

    /// Makes region `stag` valid.
    #[allow(clippy::too_many_arguments)]
    pub fn reg_mr<H: Hal>(
        &mut self,
        hal: &mut H,
        stag: u32,
        pd: u32,
        access: u8,
        page_shift: u8,
        va: u64,
        length: u64,
    ) -> Result<(), MboxStatus> {
        let (i, r) = self.region(stag)?;
        if r.valid {
            return Err(MboxStatus::BadState);
        }
        if pd != r.pd
            || access & !ACCESS_ALL != 0
            || !(PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX).contains(&page_shift)
        {
            return Err(MboxStatus::BadParam);
        }
        // The region must fit its pages.
        let first = va & !((1u64 << page_shift) - 1);
        let end = va.checked_add(length).ok_or(MboxStatus::BadParam)?;
        let span = end - first;
        let pages = span.div_ceil(1u64 << page_shift);
        if pages > r.npages as u64 {
            return Err(MboxStatus::BadParam);
        }
        let e = TptEntry {
            state: TptState::Valid,
            key: r.key,
            access,
            page_shift,
            pd,
            va,
            length,
            pbl_base: r.pbl_base,
            npages: r.npages,
        };
        let mut b = [0u8; TptEntry::SIZE];
        e.emit(&mut b).map_err(|_| MboxStatus::BadParam)?;
        hal.write_table(TableId::Tpt, i as u32, &b)
            .map_err(hal_err)?;
        if let Some(r) = self.regions[i].as_mut() {
            r.valid = true;
        }
        Ok(())
    }

    /// Invalidates and frees region `stag`.
    pub fn dereg_mr<H: Hal>(&mut self, hal: &mut H, stag: u32) -> Result<(), MboxStatus> {
        let (i, r) = self.region(stag)?;
        let e = TptEntry {
            state: TptState::Free,
            key: 0,
            access: 0,
            page_shift: PAGE_SHIFT_MIN,
            pd: 0,
            va: 0,
            length: 0,
            pbl_base: 0,
            npages: 0,
        };
        let mut b = [0u8; TptEntry::SIZE];
        let _ = e.emit(&mut b);
        hal.write_table(TableId::Tpt, i as u32, &b)
            .map_err(hal_err)?;
        self.regions[i] = None;
        self.free_pbl(r.pbl_base, r.npages);
        Ok(())
    }
}
