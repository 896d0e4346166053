//! Host memory of one simulated node: sparse, byte-addressable, 64-bit bus
//! addresses. Pages are created on first write (reads of untouched memory
//! return zeros, like fresh DMA-able memory); a bump allocator hands out
//! aligned buffers; every write is recorded page-wise so a test can prove that
//! nothing outside a region was touched.
//!
//! The memory also keeps the list of **DMA-able ranges**: what the driver
//! allocated for the device ([`HostMemory::alloc_dma`], or marked with
//! [`HostMemory::allow_dma`]). The DMA server (`dma.rs`) serves only accesses
//! that lie wholly inside these ranges and records every other one as a fault.

use std::collections::{BTreeMap, BTreeSet};

/// Page size of the sparse store (not the host's MMU page size).
pub const PAGE: u64 = 4096;

/// Why an access was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemError {
    /// The access runs past the end of the 64-bit bus address space.
    AddressWrap,
    /// The allocator has no room left below `limit`.
    OutOfMemory,
    /// Alignment is not a power of two.
    BadAlignment,
}

/// Sparse host memory.
#[derive(Debug)]
pub struct HostMemory {
    pages: BTreeMap<u64, Box<[u8; PAGE as usize]>>,
    written: BTreeSet<u64>,
    next_alloc: u64,
    limit: u64,
    /// DMA-able ranges as `start -> end` (exclusive), merged: disjoint and
    /// never adjacent.
    dma: BTreeMap<u64, u64>,
}

impl HostMemory {
    /// Memory whose allocator hands out addresses in `[base, limit)`.
    pub fn new(base: u64, limit: u64) -> Self {
        HostMemory {
            pages: BTreeMap::new(),
            written: BTreeSet::new(),
            next_alloc: base,
            limit,
            dma: BTreeMap::new(),
        }
    }

    fn check(addr: u64, len: usize) -> Result<(), MemError> {
        addr.checked_add(len as u64)
            .map(|_| ())
            .ok_or(MemError::AddressWrap)
    }

    /// Reads `buf.len()` octets at `addr`.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), MemError> {
        Self::check(addr, buf.len())?;
        let mut done = 0;
        while done < buf.len() {
            let a = addr + done as u64;
            let (page, off) = (a / PAGE, (a % PAGE) as usize);
            let n = (PAGE as usize - off).min(buf.len() - done);
            match self.pages.get(&page) {
                Some(p) => buf[done..done + n].copy_from_slice(&p[off..off + n]),
                None => buf[done..done + n].fill(0),
            }
            done += n;
        }
        Ok(())
    }

    /// Writes `data` at `addr`.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        Self::check(addr, data.len())?;
        let mut done = 0;
        while done < data.len() {
            let a = addr + done as u64;
            let (page, off) = (a / PAGE, (a % PAGE) as usize);
            let n = (PAGE as usize - off).min(data.len() - done);
            let p = self
                .pages
                .entry(page)
                .or_insert_with(|| Box::new([0; PAGE as usize]));
            p[off..off + n].copy_from_slice(&data[done..done + n]);
            self.written.insert(page);
            done += n;
        }
        Ok(())
    }

    /// Allocates `len` octets aligned to `align` (a power of two), zeroed.
    pub fn alloc(&mut self, len: u64, align: u64) -> Result<u64, MemError> {
        if !align.is_power_of_two() {
            return Err(MemError::BadAlignment);
        }
        let start = self
            .next_alloc
            .checked_add(align - 1)
            .ok_or(MemError::OutOfMemory)?
            & !(align - 1);
        let end = start.checked_add(len).ok_or(MemError::OutOfMemory)?;
        if end > self.limit {
            return Err(MemError::OutOfMemory);
        }
        self.next_alloc = end;
        Ok(start)
    }

    /// Allocates like [`HostMemory::alloc`] and makes the buffer DMA-able.
    pub fn alloc_dma(&mut self, len: u64, align: u64) -> Result<u64, MemError> {
        let a = self.alloc(len, align)?;
        self.allow_dma(a, len)?;
        Ok(a)
    }

    /// Makes `[addr, addr + len)` DMA-able (merging with ranges it touches).
    pub fn allow_dma(&mut self, addr: u64, len: u64) -> Result<(), MemError> {
        let mut end = addr.checked_add(len).ok_or(MemError::AddressWrap)?;
        if len == 0 {
            return Ok(());
        }
        let mut start = addr;
        // A range starting at or before `addr` that reaches it.
        if let Some((&s, &e)) = self.dma.range(..=addr).next_back() {
            if e >= addr {
                start = s;
                end = end.max(e);
            }
        }
        // Ranges starting inside `[start, end]` are absorbed.
        let inside: Vec<(u64, u64)> = self.dma.range(start..=end).map(|(&s, &e)| (s, e)).collect();
        for (s, e) in inside {
            self.dma.remove(&s);
            end = end.max(e);
        }
        self.dma.insert(start, end);
        Ok(())
    }

    /// Makes `[addr, addr + len)` no longer DMA-able (splitting ranges).
    pub fn revoke_dma(&mut self, addr: u64, len: u64) -> Result<(), MemError> {
        let end = addr.checked_add(len).ok_or(MemError::AddressWrap)?;
        if len == 0 {
            return Ok(());
        }
        let first = self
            .dma
            .range(..addr)
            .next_back()
            .map(|(&s, _)| s)
            .unwrap_or(addr);
        let hit: Vec<(u64, u64)> = self
            .dma
            .range(first..end)
            .map(|(&s, &e)| (s, e))
            .filter(|&(_, e)| e > addr)
            .collect();
        for (s, e) in hit {
            self.dma.remove(&s);
            if s < addr {
                self.dma.insert(s, addr);
            }
            if e > end {
                self.dma.insert(end, e);
            }
        }
        Ok(())
    }

    /// Whether every octet of `[addr, addr + len)` is DMA-able (`len > 0`;
    /// an empty or wrapping access is not).
    pub fn dma_ok(&self, addr: u64, len: u64) -> bool {
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        len > 0
            && self
                .dma
                .range(..=addr)
                .next_back()
                .is_some_and(|(_, &e)| e >= end)
    }

    /// The DMA-able ranges as `(start, len)`, ascending, merged.
    pub fn dma_ranges(&self) -> Vec<(u64, u64)> {
        self.dma.iter().map(|(&s, &e)| (s, e - s)).collect()
    }

    /// Pages (by page number) that were ever written.
    pub fn written_pages(&self) -> impl Iterator<Item = u64> + '_ {
        self.written.iter().copied()
    }

    /// A snapshot of every non-zero octet outside the given address ranges,
    /// as `(address, value)`: compare two snapshots to prove a DMA engine
    /// wrote nowhere else.
    pub fn nonzero_outside(&self, ranges: &[(u64, u64)]) -> Vec<(u64, u8)> {
        let inside = |a: u64| ranges.iter().any(|&(s, len)| a >= s && a - s < len);
        let mut out = Vec::new();
        for (&page, data) in &self.pages {
            for (i, &b) in data.iter().enumerate() {
                let a = page * PAGE + i as u64;
                if b != 0 && !inside(a) {
                    out.push((a, b));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_across_pages() {
        let mut m = HostMemory::new(0x1000, 1 << 40);
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 + 3) as u8).collect();
        m.write(PAGE - 5, &data).unwrap();
        let mut back = vec![0u8; data.len()];
        m.read(PAGE - 5, &mut back).unwrap();
        assert_eq!(back, data);
        // Untouched memory reads as zero, also straddling a written page.
        let mut z = [0xffu8; 16];
        m.read(PAGE - 21, &mut z).unwrap();
        assert_eq!(&z[..16], &[0u8; 16]);
        assert_eq!(m.written_pages().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn wrap_is_refused() {
        let mut m = HostMemory::new(0, u64::MAX);
        assert_eq!(
            m.write(u64::MAX - 1, &[1, 2, 3]),
            Err(MemError::AddressWrap)
        );
        let mut b = [0u8; 3];
        assert_eq!(m.read(u64::MAX - 1, &mut b), Err(MemError::AddressWrap));
    }

    #[test]
    fn alloc_aligns_and_runs_out() {
        let mut m = HostMemory::new(0x1001, 0x4000);
        let a = m.alloc(100, 64).unwrap();
        assert_eq!(a % 64, 0);
        assert!(a >= 0x1001);
        let b = m.alloc(10, 4096).unwrap();
        assert_eq!(b, 0x2000);
        assert_eq!(m.alloc(0x2001, 1), Err(MemError::OutOfMemory));
        assert_eq!(m.alloc(1, 3), Err(MemError::BadAlignment));
    }

    #[test]
    fn dma_ranges_merge_split_and_check() {
        let mut m = HostMemory::new(0x1000, 1 << 20);
        let a = m.alloc_dma(100, 64).unwrap();
        assert!(m.dma_ok(a, 100));
        assert!(!m.dma_ok(a, 101));
        assert!(!m.dma_ok(a - 1, 2));
        assert!(!m.dma_ok(a, 0));
        // Adjacent and overlapping ranges merge; a covering access across
        // two allocations is fine once they touch.
        m.allow_dma(a + 100, 50).unwrap();
        m.allow_dma(a + 120, 100).unwrap();
        assert_eq!(m.dma_ranges(), vec![(a, 220)]);
        assert!(m.dma_ok(a + 10, 200));
        m.allow_dma(a + 300, 10).unwrap();
        assert!(!m.dma_ok(a + 200, 110), "gap 220..300");
        m.allow_dma(a - 16, 400).unwrap();
        assert_eq!(m.dma_ranges(), vec![(a - 16, 400)]);
        // Revoke splits.
        m.revoke_dma(a + 50, 10).unwrap();
        assert_eq!(m.dma_ranges(), vec![(a - 16, 66), (a + 60, 324)]);
        assert!(!m.dma_ok(a + 49, 2));
        assert!(m.dma_ok(a + 60, 1));
        m.revoke_dma(0, u64::MAX).unwrap();
        assert!(m.dma_ranges().is_empty());
        assert!(!m.dma_ok(u64::MAX, 2));
    }

    #[test]
    fn nonzero_outside_finds_stray_writes() {
        let mut m = HostMemory::new(0, 1 << 20);
        m.write(0x1000, &[1; 64]).unwrap();
        assert!(m.nonzero_outside(&[(0x1000, 64)]).is_empty());
        m.write(0x1040, &[9]).unwrap();
        assert_eq!(m.nonzero_outside(&[(0x1000, 64)]), vec![(0x1040, 9)]);
    }
}
