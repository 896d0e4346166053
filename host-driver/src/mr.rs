//! Memory regions: `reg_mr` turns a range of a DMA buffer into a TPT entry
//! the device checks every access against (RFC 5040 §7, RFC 5041 §7).
//!
//! Registration is three mailbox commands (`abi::mailbox`): `AllocStag`
//! reserves a TPT entry and page-list entries, `WritePbl` writes the bus
//! addresses of the region's pages (in chunks of `PBL_CHUNK_MAX`), `RegMr`
//! makes the entry valid with the access rights and the page size.
//!
//! Page size: the largest power of two from 4 KiB to 1 GiB
//! (`abi::tpt::PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX`) for which the region's
//! 4 KiB pages are contiguous and aligned on the bus ([`best_page_shift`],
//! as Linux's `ib_umem_find_best_pgsz`), but no larger than needed to cover
//! the region with the fewest pages: a physically contiguous buffer becomes
//! one or a few TPT pages, so the device's TX cuts no FPDU at a 4 KiB page
//! end (`docs/rtl.md` "Full 9000-octet frames").
//! The STag is both the lkey (local SGEs) and the rkey (what the peer puts
//! in an RDMA Write/Read).

use crate::bus::{Bus, DmaMem};
use crate::context::{lock, MrInfo};
use crate::error::{DeviceError, InputError, Result};
use crate::pd::Pd;
use rnic_wire::abi::mailbox::{Command, Opcode, PBL_CHUNK_MAX};
use rnic_wire::abi::tpt::{
    Stag, ACCESS_ALL, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE, PAGE_SHIFT_MAX,
    PAGE_SHIFT_MIN,
};
use rnic_wire::abi::wqe::Sge;

/// log2 of the smallest page size the driver registers with (the unit in
/// which a region's bus pages are described; [`best_page_shift`] picks the
/// size actually registered).
pub const MR_PAGE_SHIFT: u8 = PAGE_SHIFT_MIN;
const MR_PAGE: u64 = 1 << MR_PAGE_SHIFT;

/// The largest page shift (`PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX`) that maps the
/// region `[va, va + len)` whose 4 KiB pages (from `va`'s 4 KiB page on) are
/// at the bus addresses `page4k(0)`, `page4k(1)`, ... (4 KiB aligned): every
/// 4 KiB page must sit at the same offset in its large page on the bus as in
/// VA space, and inside one large page the 4 KiB pages must be contiguous.
/// Among the valid shifts, the smallest that gives the fewest pages (a
/// larger one would only cover memory outside the region).
pub fn best_page_shift(va: u64, len: u64, page4k: impl Fn(u64) -> u64) -> u8 {
    let first = va & !(MR_PAGE - 1);
    let n = (va + len - first).div_ceil(MR_PAGE);
    // Bits that must be 0 within a page: the VA/bus offset mismatch of every
    // 4 KiB page, and the VA of every discontinuity (it must start a page).
    let mut mask = 0u64;
    for k in 0..n {
        let v = first + k * MR_PAGE;
        let b = page4k(k);
        mask |= v ^ b;
        if k > 0 && b != page4k(k - 1).wrapping_add(MR_PAGE) {
            mask |= v;
        }
    }
    let valid_max = if mask == 0 {
        PAGE_SHIFT_MAX
    } else {
        (mask.trailing_zeros() as u8).clamp(PAGE_SHIFT_MIN, PAGE_SHIFT_MAX)
    };
    let pages = |s: u8| (va + len - (va & !((1u64 << s) - 1))).div_ceil(1 << s);
    let mut s = MR_PAGE_SHIFT;
    while s < valid_max && pages(s + 1) < pages(s) {
        s += 1;
    }
    s
}

/// The page list for `shift` (from [`best_page_shift`]): the bus address of
/// each `2^shift` page of the region, i.e. of the page's first octet (which
/// may lie before the region's first 4 KiB page: only octets of the region
/// are ever accessed through it).
pub fn page_list(va: u64, len: u64, shift: u8, page4k: impl Fn(u64) -> u64) -> Vec<u64> {
    let p = 1u64 << shift;
    let first4k = va & !(MR_PAGE - 1);
    let firstp = va & !(p - 1);
    let n = (va + len - firstp).div_ceil(p);
    (0..n)
        .map(|j| {
            // The page's first 4 KiB page of the region, and its offset.
            let v = (firstp + j * p).max(first4k);
            page4k((v - first4k) / MR_PAGE) - (v & (p - 1))
        })
        .collect()
}

/// Access rights of a region (`abi::tpt::ACCESS_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AccessFlags(u8);

impl AccessFlags {
    /// Local reads only (a Send or RDMA Write source).
    pub const LOCAL_READ: AccessFlags = AccessFlags(0);
    /// The local device may write (receive buffers, RDMA Read sinks).
    pub const LOCAL_WRITE: AccessFlags = AccessFlags(ACCESS_LOCAL_WRITE);
    /// The peer may RDMA Write (needs `LOCAL_WRITE` too).
    pub const REMOTE_WRITE: AccessFlags = AccessFlags(ACCESS_REMOTE_WRITE);
    /// The peer may RDMA Read.
    pub const REMOTE_READ: AccessFlags = AccessFlags(ACCESS_REMOTE_READ);

    /// Flags from raw bits; unknown bits, or remote write without local
    /// write (the verbs rule: a region the peer writes is written locally by
    /// the device), are refused.
    pub fn from_bits(bits: u8) -> Result<Self> {
        if bits & !ACCESS_ALL != 0
            || (bits & ACCESS_REMOTE_WRITE != 0 && bits & ACCESS_LOCAL_WRITE == 0)
        {
            return Err(InputError::AccessFlags(bits).into());
        }
        Ok(AccessFlags(bits))
    }
    /// The raw bits.
    pub fn bits(self) -> u8 {
        self.0
    }
    /// Whether every bit of `other` is set.
    pub fn contains(self, other: AccessFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for AccessFlags {
    type Output = AccessFlags;
    fn bitor(self, rhs: AccessFlags) -> AccessFlags {
        AccessFlags(self.0 | rhs.0)
    }
}

/// A registered memory region over part of a DMA buffer.
pub struct Mr<'a, B: Bus> {
    pd: &'a Pd<'a, B>,
    mem: &'a B::Dma,
    offset: usize,
    stag: Stag,
    va: u64,
    len: u64,
    access: AccessFlags,
    live: bool,
}

impl<'a, B: Bus> Pd<'a, B> {
    /// Registers `len` octets of `mem` from `offset` with `access`. The
    /// region's virtual address is the buffer's CPU address plus `offset`.
    pub fn reg_mr(
        &'a self,
        mem: &'a B::Dma,
        offset: usize,
        len: usize,
        access: AccessFlags,
    ) -> Result<Mr<'a, B>> {
        let access = AccessFlags::from_bits(access.bits())?;
        let end = offset.checked_add(len).ok_or(InputError::RegionRange)?;
        if len == 0 || end > mem.len() {
            return Err(InputError::RegionRange.into());
        }
        let bus = mem.bus_addr().checked_add(offset as u64);
        let va = mem.cpu_addr().checked_add(offset as u64);
        let (Some(bus), Some(va)) = (bus, va) else {
            return Err(InputError::RegionRange.into());
        };
        // The TPT translates by the VA's offset in its page: the CPU and bus
        // views must agree on it (they do for page-aligned mappings).
        if (bus ^ va) & (MR_PAGE - 1) != 0 || va.checked_add(len as u64).is_none() {
            return Err(InputError::RegionRange.into());
        }
        // A DMA buffer is contiguous on the bus: its 4 KiB pages follow
        // each other from the region's first one.
        let first = bus & !(MR_PAGE - 1);
        let page4k = |k: u64| first + k * MR_PAGE;
        let shift = best_page_shift(va, len as u64, page4k);
        let pbl = page_list(va, len as u64, shift, page4k);
        let npages = u32::try_from(pbl.len()).map_err(|_| InputError::RegionRange)?;
        let ctx = self.ctx;

        let r = ctx.command_words(
            &Command::AllocStag {
                pd: self.pdn,
                npages,
            },
            2,
        )?;
        let stag = Stag(r.words[0]);
        let taken = lock(&ctx.reg).mrs.contains_key(&stag.0);
        if stag.index() == 0 || stag.index() >= ctx.caps().max_tpt || taken {
            return Err(DeviceError::MailboxResult(Opcode::AllocStag).into());
        }
        let mut mr = Mr {
            pd: self,
            mem,
            offset,
            stag,
            va,
            len: len as u64,
            access,
            live: true,
        };
        // From here on, dropping `mr` on an error frees the STag (DeregMr).
        let mut chunk = [0u8; PBL_CHUNK_MAX * 8];
        let mut done = 0u32;
        while done < npages {
            let n = (npages - done).min(PBL_CHUNK_MAX as u32);
            for k in 0..n {
                let a = pbl[(done + k) as usize];
                chunk[k as usize * 8..k as usize * 8 + 8].copy_from_slice(&a.to_le_bytes());
            }
            ctx.command(
                &Command::WritePbl {
                    stag: stag.0,
                    offset: done,
                    addrs: &chunk[..n as usize * 8],
                },
                &mut [],
            )?;
            done += n;
        }
        ctx.command(
            &Command::RegMr {
                stag: stag.0,
                pd: self.pdn,
                access: access.bits(),
                page_shift: shift,
                va,
                length: len as u64,
            },
            &mut [],
        )?;
        lock(&ctx.reg).mrs.insert(
            stag.0,
            MrInfo {
                pdn: self.pdn,
                va,
                len: len as u64,
                access: access.bits(),
            },
        );
        mr.live = true;
        Ok(mr)
    }
}

impl<'a, B: Bus> Mr<'a, B> {
    /// The local key (for SGEs).
    pub fn lkey(&self) -> u32 {
        self.stag.0
    }
    /// The remote key (for the peer's RDMA Write/Read).
    pub fn rkey(&self) -> u32 {
        self.stag.0
    }
    /// Virtual address of the first octet.
    pub fn va(&self) -> u64 {
        self.va
    }
    /// Length in octets.
    pub fn len(&self) -> u64 {
        self.len
    }
    /// Whether the region is empty (never: registration refuses that).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Access rights.
    pub fn access(&self) -> AccessFlags {
        self.access
    }
    /// The buffer and the offset in it where the region starts.
    pub fn buffer(&self) -> (&'a B::Dma, usize) {
        (self.mem, self.offset)
    }
    /// The PD.
    pub fn pd(&self) -> &'a Pd<'a, B> {
        self.pd
    }
    /// An SGE for `len` octets at `offset` into the region.
    pub fn sge(&self, offset: u64, len: u32) -> Result<Sge> {
        let end = offset
            .checked_add(len as u64)
            .ok_or(InputError::RegionRange)?;
        if end > self.len {
            return Err(InputError::RegionRange.into());
        }
        Ok(Sge {
            addr: self.va + offset,
            length: len,
            lkey: self.lkey(),
        })
    }

    /// Invalidates and frees the region (`DeregMr`).
    pub fn dereg(mut self) -> Result<()> {
        self.release()
    }

    fn release(&mut self) -> Result<()> {
        if !self.live {
            return Ok(());
        }
        self.live = false;
        let ctx = self.pd.ctx;
        lock(&ctx.reg).mrs.remove(&self.stag.0);
        ctx.command(&Command::DeregMr { stag: self.stag.0 }, &mut [])
            .map(|_| ())
    }
}

impl<B: Bus> Drop for Mr<'_, B> {
    fn drop(&mut self) {
        let _ = self.release();
    }
}

impl<B: Bus> core::fmt::Debug for Mr<'_, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Mr")
            .field("stag", &self.stag)
            .field("va", &self.va)
            .field("len", &self.len)
            .field("access", &self.access)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rnic_wire::abi::tpt::{TptEntry, TptState};
    use rnic_wire::rng::{Rng, XorShift64};

    /// Translation of `va` through a TPT entry of `shift` with `pbl`, by
    /// `rnic_wire`'s own `TptEntry::page_of` (the device's reference).
    fn translate(va0: u64, len: u64, shift: u8, pbl: &[u64], va: u64) -> u64 {
        let e = TptEntry {
            state: TptState::Valid,
            key: 0,
            access: 0,
            page_shift: shift,
            pd: 0,
            va: va0,
            length: len,
            pbl_base: 0,
            npages: pbl.len() as u32,
        };
        let (i, off) = e.page_of(va).expect("VA inside the page list");
        pbl[i as usize] + off
    }

    /// Checks `best_page_shift`'s choice against the 4 KiB registration:
    /// every octet (sampled: each 4 KiB page's first, last and a middle
    /// octet, and the region's ends) translates to the same bus address.
    fn check(va: u64, len: u64, pages: &[u64]) -> u8 {
        let p4 = |k: u64| pages[k as usize];
        let s = best_page_shift(va, len, p4);
        assert!((PAGE_SHIFT_MIN..=PAGE_SHIFT_MAX).contains(&s));
        let pbl = page_list(va, len, s, p4);
        let pbl4 = page_list(va, len, MR_PAGE_SHIFT, p4);
        assert_eq!(pbl4, pages, "the 4 KiB list is the pages themselves");
        let first = va & !(MR_PAGE - 1);
        let mut vas = vec![va, va + len - 1];
        for k in 0..pages.len() as u64 {
            for o in [0, 0x7FF, MR_PAGE - 1] {
                let v = first + k * MR_PAGE + o;
                if v >= va && v < va + len {
                    vas.push(v);
                }
            }
        }
        for v in vas {
            assert_eq!(
                translate(va, len, s, &pbl, v),
                translate(va, len, MR_PAGE_SHIFT, &pbl4, v),
                "VA {v:#x} with page shift {s}"
            );
        }
        s
    }

    #[test]
    fn scattered_pages_stay_4k() {
        // Shuffled 4 KiB pages with gaps: no larger page maps them.
        let pages = [0x7_3000u64, 0x2_1000, 0x9_8000, 0x2_2000, 0x10_0000];
        let s = check(0x4000_0123, 5 * 4096 - 0x123 - 9, &pages);
        assert_eq!(s, 12);
        // Contiguous pairs but at the wrong offset of an 8 KiB page.
        let pages = [0x10_1000u64, 0x10_2000, 0x30_1000, 0x30_2000];
        assert_eq!(check(0x2000_0000, 4 * 4096, &pages), 12);
    }

    #[test]
    fn contiguous_pages_become_large_pages() {
        // 8 KiB-aligned pairs: 8 KiB pages.
        let pages = [0x10_0000u64, 0x10_1000, 0x30_0000, 0x30_1000];
        assert_eq!(check(0x2000_0000, 4 * 4096, &pages), 13);
        // A 1 MiB buffer contiguous at a 2 MiB-aligned bus address, VA with
        // the same offset: one page covers it (the smallest such: 1 MiB).
        let pages: Vec<u64> = (0..256).map(|k| 0x8020_0000 + k * 4096).collect();
        assert_eq!(check(0x7f00_0020_0000, 1 << 20, &pages), 20);
        // Unaligned start and end inside a 2 MiB-aligned contiguous run:
        // 0x1_0000 + 100 .. 3 MiB later spans two 2 MiB pages.
        let va = 0x5555_0001_0064u64;
        let len = 3 << 20;
        let first = va & !0xFFF;
        let pages: Vec<u64> = (0..=(len + 0x64) / 4096)
            .map(|k| 0x1_2320_0000 + (first & 0x1F_FFFF) + k * 4096)
            .collect();
        let s = check(va, len, &pages);
        assert_eq!(s, 21);
        assert_eq!(page_list(va, len, s, |k| pages[k as usize]).len(), 2);
        // Bus offset ≠ VA offset beyond 4 KiB: limited to where they agree.
        let pages: Vec<u64> = (0..64).map(|k| 0x40_6000 + k * 4096).collect();
        assert_eq!(check(0x1000_0000 + 0x7000, 64 * 4096, &pages), 12);
        let pages: Vec<u64> = (0..64).map(|k| 0x40_8000 + k * 4096).collect();
        assert_eq!(check(0x1000_0000 + 0x18000, 64 * 4096, &pages), 16);
        // A contiguous run of 1 GiB-aligned 2 GiB: capped at 1 GiB pages.
        let va = 0x40_0000_0000u64;
        let len = 2u64 << 30;
        let s = best_page_shift(va, len, |k| 0x80_0000_0000 + k * 4096);
        assert_eq!(s, PAGE_SHIFT_MAX);
        assert_eq!(
            page_list(va, len, s, |k| 0x80_0000_0000 + k * 4096),
            [0x80_0000_0000, 0x80_4000_0000]
        );
    }

    #[test]
    fn random_page_lists_translate_like_4k() {
        let mut rng = Rng::<XorShift64>::new(0x9E37_79B9_7F4A_7C15);
        let mut rnd = move || rng.next_u64();
        for _ in 0..300 {
            let va = (rnd() & 0xFFFF_FFFF_FFFF) | 0x1_0000_0000;
            let len = 1 + rnd() % (64 * 4096);
            let n = ((va & 0xFFF) + len).div_ceil(4096) as usize;
            // Runs of contiguous pages at random (often aligned) bus bases.
            let mut pages = Vec::with_capacity(n);
            let mut k = 0;
            while k < n {
                let run = 1 + (rnd() % 40) as usize;
                let align = 12 + rnd() % 12;
                let v = (va & !0xFFF) + k as u64 * 4096;
                let mut b = (rnd() & 0xFF_FFFF_F000) & !((1u64 << align) - 1);
                if rnd() % 2 == 0 {
                    b |= v & ((1u64 << align) - 1) & !0xFFF;
                }
                for j in 0..run.min(n - k) {
                    pages.push(b + j as u64 * 4096);
                }
                k += run;
            }
            check(va, len, &pages);
        }
    }
}
