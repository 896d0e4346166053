//! Memory regions: `reg_mr` turns a range of a DMA buffer into a TPT entry
//! the device checks every access against (RFC 5040 §7, RFC 5041 §7).
//!
//! Registration is three mailbox commands (`abi::mailbox`): `AllocStag`
//! reserves a TPT entry and page-list entries, `WritePbl` writes the bus
//! addresses of the region's pages (4 KiB pages, in chunks of
//! `PBL_CHUNK_MAX`), `RegMr` makes the entry valid with the access rights.
//! The STag is both the lkey (local SGEs) and the rkey (what the peer puts
//! in an RDMA Write/Read).

use crate::bus::{Bus, DmaMem};
use crate::context::{lock, MrInfo};
use crate::error::{DeviceError, InputError, Result};
use crate::pd::Pd;
use rnic_wire::abi::mailbox::{Command, Opcode, PBL_CHUNK_MAX};
use rnic_wire::abi::tpt::{
    Stag, ACCESS_ALL, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE,
};
use rnic_wire::abi::wqe::Sge;

/// log2 of the page size the driver registers with.
pub const MR_PAGE_SHIFT: u8 = 12;
const MR_PAGE: u64 = 1 << MR_PAGE_SHIFT;

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
        let first = bus & !(MR_PAGE - 1);
        let npages = (bus + len as u64 - first).div_ceil(MR_PAGE);
        let npages = u32::try_from(npages).map_err(|_| InputError::RegionRange)?;
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
                let a = first + (done + k) as u64 * MR_PAGE;
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
                page_shift: MR_PAGE_SHIFT,
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
