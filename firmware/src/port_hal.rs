//! The register-level [`Hal`]: the firmware port's protocol
//! (`rnic_wire::abi::context::port`, docs/rtl.md "Host registers and
//! firmware port") over any 32-bit register access, [`FwRegs`].
//!
//! One implementation for every place the firmware runs: the RISC-V image
//! (`src/bin/rnic-fw.rs`, MMIO at `FW_PORT`) and the host program that runs
//! the firmware over the board's UDP bridge (`rnic_driver::udp_bus`,
//! docs/bridge.md "Firmware window"). Each method is a fixed sequence of
//! register accesses; busy bits are polled at most [`BUSY_POLLS`] times.

use crate::hal::{Exception, Hal, HalError, IfConfig, TermRequest};
use rnic_wire::abi::context::{port, ExceptionReason, TableId};
use rnic_wire::abi::csr;
use rnic_wire::abi::mailbox::{Event, MboxStatus, EVENT_SIZE};

/// 32-bit access to the firmware port's registers (octet offsets).
pub trait FwRegs {
    /// Reads the register at octet offset `off`.
    fn read32(&mut self, off: u32) -> u32;
    /// Writes `v` to the register at octet offset `off`.
    fn write32(&mut self, off: u32, v: u32);
}

/// Polls of a busy bit (`TABLE_CMD`, `TX_SEND`/`RX_INJECT`) before an
/// access gives up with [`HalError::Full`].
pub const BUSY_POLLS: u32 = 100_000;

/// [`Hal`] over a [`FwRegs`].
pub struct PortHal<R: FwRegs> {
    /// The register access.
    pub regs: R,
    khz: Option<u64>,
    lim_mtu: Option<u32>,
}

/// The device's limits (`port::LIM_*`): the table sizes and largest MTU of
/// the core profile it was built with (the board's core is smaller than
/// the co-simulation core, `hw/src/profile.rs`). A register reading 0 (a
/// device without it) means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Connection-table entries.
    pub conns: u32,
    /// QP-table entries.
    pub qps: u32,
    /// CQ-table entries.
    pub cqs: u32,
    /// TPT entries.
    pub tpt: u32,
    /// Page-list entries.
    pub pbl: u32,
    /// Largest MTU (IPv4 packet octets).
    pub mtu: u32,
}

/// The firmware's capacities (its const parameters) that the device must
/// have room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FwCapacities {
    /// Connections (`C`).
    pub conns: usize,
    /// QPs (`Q`).
    pub qps: usize,
    /// CQs (`NCQ`).
    pub cqs: usize,
    /// TPT entries (`NTPT`).
    pub tpt: usize,
}

fn no_limit(v: u32) -> u32 {
    if v == 0 {
        u32::MAX
    } else {
        v
    }
}

impl DeviceLimits {
    /// Fits `config` to the device: the page list the firmware allocates
    /// from shrinks to the device's; an error names the first capacity of
    /// the firmware build the device cannot hold (a firmware built for a
    /// larger core).
    pub fn fit(&self, caps: &FwCapacities, config: &mut crate::Config) -> Result<(), &'static str> {
        let over = |have: usize, lim: u32| have as u64 > no_limit(lim) as u64;
        if over(caps.conns, self.conns) {
            return Err("more connections than the device's table");
        }
        if over(caps.qps, self.qps) {
            return Err("more QPs than the device's table");
        }
        if over(caps.cqs, self.cqs) {
            return Err("more CQs than the device's table");
        }
        if over(caps.tpt, self.tpt) {
            return Err("more TPT entries than the device's table");
        }
        config.pbl_size = config.pbl_size.min(no_limit(self.pbl));
        Ok(())
    }
}

impl<R: FwRegs> PortHal<R> {
    /// The port protocol over `regs`.
    pub fn new(regs: R) -> Self {
        PortHal {
            regs,
            khz: None,
            lim_mtu: None,
        }
    }

    /// Reads the device's limits (6 accesses).
    pub fn limits(&mut self) -> DeviceLimits {
        DeviceLimits {
            conns: self.regs.read32(port::LIM_CONN),
            qps: self.regs.read32(port::LIM_QP),
            cqs: self.regs.read32(port::LIM_CQ),
            tpt: self.regs.read32(port::LIM_TPT),
            pbl: self.regs.read32(port::LIM_PBL),
            mtu: self.regs.read32(port::LIM_MTU),
        }
    }

    fn write_bytes(&mut self, base: u32, b: &[u8]) {
        for (i, c) in b.chunks(4).enumerate() {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            self.regs
                .write32(base + 4 * i as u32, u32::from_le_bytes(w));
        }
    }

    fn read_bytes(&mut self, base: u32, out: &mut [u8]) {
        for (i, c) in out.chunks_mut(4).enumerate() {
            let w = self.regs.read32(base + 4 * i as u32).to_le_bytes();
            c.copy_from_slice(&w[..c.len()]);
        }
    }

    /// Waits while `TABLE_CMD` is busy; `Err(BadIndex)` if the command
    /// failed (bit 1: unknown table, index out of range, no read-back).
    fn table_wait(&mut self) -> Result<(), HalError> {
        for _ in 0..BUSY_POLLS {
            let s = self.regs.read32(port::TABLE_CMD);
            if s & 1 == 0 {
                return if s & 2 != 0 {
                    Err(HalError::BadIndex)
                } else {
                    Ok(())
                };
            }
        }
        Err(HalError::Full)
    }

    /// `TX_DATA[..len]` then `len` into `reg` (`TX_SEND` or `RX_INJECT`),
    /// after its busy bit (31) cleared.
    fn send_via(&mut self, reg: u32, frame: &[u8]) -> Result<(), HalError> {
        if frame.is_empty() || frame.len() > port::FRAME_WINDOW as usize {
            return Err(HalError::BadLength);
        }
        let mut polls = 0;
        while self.regs.read32(reg) & 1 << 31 != 0 {
            polls += 1;
            if polls == BUSY_POLLS {
                return Err(HalError::Full);
            }
        }
        self.write_bytes(port::TX_DATA, frame);
        self.regs.write32(reg, frame.len() as u32);
        Ok(())
    }
}

impl<R: FwRegs> Hal for PortHal<R> {
    /// BAR0's configuration; the MTU capped at the device's `LIM_MTU`
    /// (read once), so the MSS the firmware advertises (RFC 9293 §3.7.1)
    /// never asks the peer for frames the core drops as oversize.
    fn config(&mut self) -> IfConfig {
        let lim_mtu = match self.lim_mtu {
            Some(m) => m,
            None => {
                let m = no_limit(self.regs.read32(port::LIM_MTU));
                self.lim_mtu = Some(m);
                m
            }
        };
        let lo = self.regs.read32(port::CFG_MAC_LO).to_le_bytes();
        let hi = self.regs.read32(port::CFG_MAC_HI).to_le_bytes();
        IfConfig {
            mac: [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1]],
            ip: self.regs.read32(port::CFG_IPV4),
            netmask: self.regs.read32(port::CFG_NETMASK),
            gateway: self.regs.read32(port::CFG_GATEWAY),
            mtu: self
                .regs
                .read32(port::CFG_MTU)
                .min(lim_mtu)
                .min(u16::MAX as u32) as u16,
        }
    }

    /// `CYCLES_LO` (latches `_HI`), `CYCLES_HI`: 2 accesses (the first call
    /// also reads `CLOCK_KHZ`).
    fn now_us(&mut self) -> u64 {
        let khz = match self.khz {
            Some(k) => k,
            None => {
                let k = self.regs.read32(port::CLOCK_KHZ).max(1) as u64;
                self.khz = Some(k);
                k
            }
        };
        let lo = self.regs.read32(port::CYCLES_LO) as u64;
        let hi = self.regs.read32(port::CYCLES_HI) as u64;
        // cycles / (kHz / 1000) = microseconds
        (hi << 32 | lo) * 1000 / khz
    }

    fn read_table(&mut self, table: TableId, index: u32, buf: &mut [u8]) -> Result<(), HalError> {
        let size = table.entry_size();
        if buf.len() < size {
            return Err(HalError::BadLength);
        }
        if index >= 1 << 24 {
            return Err(HalError::BadIndex);
        }
        self.regs
            .write32(port::TABLE_SEL, (table as u32) << 24 | index);
        self.regs.write32(port::TABLE_CMD, port::TABLE_READ);
        self.table_wait()?;
        self.read_bytes(port::TABLE_DATA, &mut buf[..size]);
        Ok(())
    }

    fn write_table(&mut self, table: TableId, index: u32, data: &[u8]) -> Result<(), HalError> {
        if data.len() != table.entry_size() {
            return Err(HalError::BadLength);
        }
        if index >= 1 << 24 {
            return Err(HalError::BadIndex);
        }
        self.write_bytes(port::TABLE_DATA, data);
        self.regs
            .write32(port::TABLE_SEL, (table as u32) << 24 | index);
        self.regs.write32(port::TABLE_CMD, port::TABLE_WRITE);
        self.table_wait()
    }

    /// `EXC_STATUS`; if valid, `EXC_CONN`, the frame words, `EXC_POP`. An
    /// entry with a reason this firmware does not know is popped and
    /// skipped.
    fn recv_exception(&mut self, buf: &mut [u8]) -> Option<Exception> {
        loop {
            let st = self.regs.read32(port::EXC_STATUS);
            if st & 1 << 31 == 0 {
                return None;
            }
            let len = (st & 0xFFFF) as usize;
            let Ok(reason) = ExceptionReason::from_u8((st >> 16) as u8) else {
                self.regs.write32(port::EXC_POP, 1);
                continue;
            };
            let conn = self.regs.read32(port::EXC_CONN);
            let take = len.min(buf.len()).min(port::FRAME_WINDOW as usize);
            self.read_bytes(port::EXC_DATA, &mut buf[..take]);
            self.regs.write32(port::EXC_POP, 1);
            return Some(Exception {
                reason,
                conn: (conn != u32::MAX).then_some(conn),
                len: take,
                frame_len: len,
            });
        }
    }

    fn send_frame(&mut self, frame: &[u8]) -> Result<(), HalError> {
        self.send_via(port::TX_SEND, frame)
    }

    fn inject_rx(&mut self, frame: &[u8]) -> Result<(), HalError> {
        self.send_via(port::RX_INJECT, frame)
    }

    /// `MBOX_CMD` (1 access when no command waits).
    fn exception_waiting(&mut self) -> bool {
        self.regs.read32(port::EXC_STATUS) & 1 << 31 != 0
    }

    fn mailbox_waiting(&mut self) -> bool {
        self.regs.read32(port::MBOX_CMD) & 1 << 31 != 0
    }

    fn mailbox_poll(&mut self, buf: &mut [u8]) -> Option<(u16, usize)> {
        let cmd = self.regs.read32(port::MBOX_CMD);
        if cmd & 1 << 31 == 0 {
            return None;
        }
        let len = (self.regs.read32(port::MBOX_LEN) as usize).min(csr::MBOX_DATA_SIZE as usize);
        let take = len.min(buf.len());
        self.read_bytes(port::MBOX_DATA, &mut buf[..take]);
        Some((cmd as u16, take))
    }

    fn mailbox_done(&mut self, status: MboxStatus, result: &[u8]) {
        let r = &result[..result.len().min(csr::MBOX_DATA_SIZE as usize)];
        self.write_bytes(port::MBOX_DATA, r);
        self.regs.write32(port::MBOX_LEN, r.len() as u32);
        self.regs.write32(port::MBOX_DONE, status as u32);
    }

    fn post_event(&mut self, event: &Event) -> Result<(), HalError> {
        let mut b = [0u8; EVENT_SIZE];
        event.emit(&mut b).map_err(|_| HalError::BadLength)?;
        if self.regs.read32(port::EVENT_PUSH) & 1 != 0 {
            return Err(HalError::Full);
        }
        self.write_bytes(port::EVENT_DATA, &b);
        self.regs.write32(port::EVENT_PUSH, 1);
        Ok(())
    }

    fn flush_qp(&mut self, qpn: u32) -> Result<(), HalError> {
        self.regs.write32(port::FLUSH_QP, qpn);
        Ok(())
    }

    /// `TERM_STATUS` (1 access when there is none); if valid,
    /// `TERM_CONN`/`QPN`/`SEG_LEN`, the 48-octet `TERM_HDR`, `TERM_POP`.
    fn pop_terminate(&mut self) -> Option<TermRequest> {
        let st = self.regs.read32(port::TERM_STATUS);
        if st & 1 << 31 == 0 {
            return None;
        }
        let conn = self.regs.read32(port::TERM_CONN);
        let qpn = self.regs.read32(port::TERM_QPN);
        let seg_len = self.regs.read32(port::TERM_SEG_LEN) as u16;
        let mut hdr = [0u8; port::TERM_HDR_LEN];
        self.read_bytes(port::TERM_HDR, &mut hdr);
        self.regs.write32(port::TERM_POP, 1);
        Some(TermRequest {
            cause: st as u16,
            conn,
            qpn,
            seg_len,
            hdr,
        })
    }

    /// `RETX_STATUS` (bit 0 busy: `Full`), then `RETX_CONN`.
    fn retransmit(&mut self, conn: u32) -> Result<(), HalError> {
        if self.regs.read32(port::RETX_STATUS) & 1 != 0 {
            return Err(HalError::Full);
        }
        self.regs.write32(port::RETX_CONN, conn);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    /// A register file that logs every access and answers from fixed
    /// values: the access sequences are the port protocol of docs/rtl.md.
    #[derive(Default)]
    struct Log {
        acc: Vec<(bool, u32, u32)>,
        regs: std::collections::BTreeMap<u32, u32>,
    }
    impl FwRegs for Log {
        fn read32(&mut self, off: u32) -> u32 {
            let v = *self.regs.get(&off).unwrap_or(&0);
            self.acc.push((false, off, v));
            v
        }
        fn write32(&mut self, off: u32, v: u32) {
            self.acc.push((true, off, v));
        }
    }

    #[test]
    fn idle_polls_are_one_access_each_and_a_frame_is_words_then_send() {
        let mut h = PortHal::new(Log::default());
        let mut buf = [0u8; 64];
        assert!(h.mailbox_poll(&mut buf).is_none());
        assert!(h.recv_exception(&mut buf).is_none());
        assert!(h.pop_terminate().is_none());
        assert_eq!(
            h.regs.acc,
            [
                (false, port::MBOX_CMD, 0),
                (false, port::EXC_STATUS, 0),
                (false, port::TERM_STATUS, 0)
            ]
        );
        h.regs.acc.clear();
        h.send_frame(&[1, 2, 3, 4, 5]).unwrap();
        assert_eq!(
            h.regs.acc,
            [
                (false, port::TX_SEND, 0),
                (true, port::TX_DATA, 0x0403_0201),
                (true, port::TX_DATA + 4, 5),
                (true, port::TX_SEND, 5)
            ]
        );
        assert_eq!(h.send_frame(&[]), Err(HalError::BadLength));
        // A busy TX_SEND that never clears: Full, no write.
        h.regs.regs.insert(port::TX_SEND, 1 << 31);
        h.regs.acc.clear();
        assert_eq!(h.send_frame(&[1]), Err(HalError::Full));
        assert!(h.regs.acc.iter().all(|a| !a.0));
    }

    #[test]
    fn exception_is_read_then_popped_once() {
        let mut h = PortHal::new(Log::default());
        h.regs.regs.insert(
            port::EXC_STATUS,
            1 << 31 | (ExceptionReason::NoMatch as u32) << 16 | 6,
        );
        h.regs.regs.insert(port::EXC_CONN, u32::MAX);
        h.regs.regs.insert(port::EXC_DATA, 0x4433_2211);
        h.regs.regs.insert(port::EXC_DATA + 4, 0x6655);
        let mut buf = [0u8; 16];
        let e = h.recv_exception(&mut buf).unwrap();
        assert_eq!((e.len, e.conn), (6, None));
        assert_eq!(&buf[..6], &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66]);
        let pops = h.regs.acc.iter().filter(|a| a.0).collect::<Vec<_>>();
        assert_eq!(pops, [&(true, port::EXC_POP, 1)]);
    }

    /// The limits of a board-profile device (hw/src/profile.rs `BOARD`: 16
    /// connections, 64 QPs and CQs, 256 TPT and 512 page-list entries, MTU
    /// 1500) reach the firmware: BAR0's MTU 9000 is capped at 1500 (so the
    /// MSS is 1460), the page list shrinks to 512, and a firmware build with
    /// more connections than the device is refused. A device without the
    /// registers (reads 0) limits nothing.
    #[test]
    fn device_limits_cap_the_mtu_and_the_page_list() {
        let mut h = PortHal::new(Log::default());
        for (off, v) in [
            (port::LIM_CONN, 16),
            (port::LIM_QP, 64),
            (port::LIM_CQ, 64),
            (port::LIM_TPT, 256),
            (port::LIM_PBL, 512),
            (port::LIM_MTU, 1500),
            (port::CFG_MTU, 9000),
        ] {
            h.regs.regs.insert(off, v);
        }
        let ifc = h.config();
        assert_eq!(ifc.mtu, 1500);
        assert_eq!(ifc.mss(), 1460);
        h.regs.acc.clear();
        let _ = h.config();
        assert!(
            h.regs.acc.iter().all(|a| a.1 != port::LIM_MTU),
            "LIM_MTU is read once"
        );
        let lim = h.limits();
        assert_eq!(
            lim,
            DeviceLimits {
                conns: 16,
                qps: 64,
                cqs: 64,
                tpt: 256,
                pbl: 512,
                mtu: 1500
            }
        );
        let caps = FwCapacities {
            conns: 8,
            qps: 16,
            cqs: 16,
            tpt: 64,
        };
        let mut config = crate::Config::default();
        assert_eq!(config.pbl_size, 4096);
        assert_eq!(lim.fit(&caps, &mut config), Ok(()));
        assert_eq!(config.pbl_size, 512);
        let big = FwCapacities { conns: 32, ..caps };
        assert!(lim.fit(&big, &mut config).is_err());
        // A device without the registers.
        let mut h = PortHal::new(Log::default());
        h.regs.regs.insert(port::CFG_MTU, 9000);
        assert_eq!(h.config().mtu, 9000);
        let mut config = crate::Config::default();
        assert_eq!(h.limits().fit(&big, &mut config), Ok(()));
        assert_eq!(config.pbl_size, 4096);
    }
}
