//! The bare-metal firmware image: `cargo build -p rnic-fw --target
//! riscv32imc-unknown-none-elf --release`. It runs [`rnic_fw::Firmware`] over
//! the firmware port's MMIO registers
//! ([`rnic_wire::abi::context::port`], mapped at `FW_PORT` by `rnic-fw.x`).
//! On the host this builds as an empty program, so that workspace-wide
//! `cargo test` and `clippy` work.
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(target_os = "none")]
mod image {
    use core::ptr::{read_volatile, write_volatile};
    use rnic_fw::hal::{Exception, Hal, HalError, IfConfig};
    use rnic_fw::{Config, Firmware};
    use rnic_wire::abi::context::{port, ExceptionReason, TableId};
    use rnic_wire::abi::mailbox::{Event, MboxStatus};

    core::arch::global_asm!(
        ".section .text.start, \"ax\"",
        ".global _start",
        "_start:",
        ".option push",
        ".option norelax",
        "    la gp, __global_pointer$",
        ".option pop",
        "    la sp, _stack_top",
        "    la t0, _sidata",
        "    la t1, _sdata",
        "    la t2, _edata",
        "1:  bgeu t1, t2, 2f",
        "    lw t3, 0(t0)",
        "    sw t3, 0(t1)",
        "    addi t0, t0, 4",
        "    addi t1, t1, 4",
        "    j 1b",
        "2:  la t0, _sbss",
        "    la t1, _ebss",
        "3:  bgeu t0, t1, 4f",
        "    sw zero, 0(t0)",
        "    addi t0, t0, 4",
        "    j 3b",
        "4:  call fw_main",
        "5:  j 5b",
    );

    extern "C" {
        static FW_PORT: u8;
    }

    /// The firmware port over MMIO.
    struct Mmio {
        base: usize,
        khz: u32,
    }

    impl Mmio {
        fn rd(&self, off: u32) -> u32 {
            // SAFETY: `base + off` is a register of the firmware port.
            unsafe { read_volatile((self.base + off as usize) as *const u32) }
        }
        fn wr(&self, off: u32, v: u32) {
            // SAFETY: as above.
            unsafe { write_volatile((self.base + off as usize) as *mut u32, v) }
        }
        fn copy_in(&self, off: u32, buf: &mut [u8]) {
            for (k, chunk) in buf.chunks_mut(4).enumerate() {
                let w = self.rd(off + 4 * k as u32).to_le_bytes();
                chunk.copy_from_slice(&w[..chunk.len()]);
            }
        }
        fn copy_out(&self, off: u32, data: &[u8]) {
            for (k, chunk) in data.chunks(4).enumerate() {
                let mut w = [0u8; 4];
                w[..chunk.len()].copy_from_slice(chunk);
                self.wr(off + 4 * k as u32, u32::from_le_bytes(w));
            }
        }
    }

    impl Hal for Mmio {
        fn config(&mut self) -> IfConfig {
            let lo = self.rd(port::CFG_MAC_LO).to_le_bytes();
            let hi = self.rd(port::CFG_MAC_HI).to_le_bytes();
            IfConfig {
                mac: [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1]],
                ip: self.rd(port::CFG_IPV4),
                netmask: self.rd(port::CFG_NETMASK),
                gateway: self.rd(port::CFG_GATEWAY),
                mtu: self.rd(port::CFG_MTU) as u16,
            }
        }
        fn now_us(&mut self) -> u64 {
            let lo = self.rd(port::CYCLES_LO) as u64;
            let hi = self.rd(port::CYCLES_HI) as u64;
            // cycles / (kHz / 1000) = microseconds
            ((hi << 32) | lo) * 1000 / self.khz.max(1) as u64
        }
        fn read_table(&mut self, t: TableId, index: u32, buf: &mut [u8]) -> Result<(), HalError> {
            if buf.len() != t.entry_size() || index >= 1 << 24 {
                return Err(HalError::BadLength);
            }
            self.wr(port::TABLE_SEL, (t as u32) << 24 | index);
            self.wr(port::TABLE_CMD, port::TABLE_READ);
            while self.rd(port::TABLE_CMD) & 1 != 0 {}
            self.copy_in(port::TABLE_DATA, buf);
            Ok(())
        }
        fn write_table(&mut self, t: TableId, index: u32, data: &[u8]) -> Result<(), HalError> {
            if data.len() != t.entry_size() || index >= 1 << 24 {
                return Err(HalError::BadLength);
            }
            self.copy_out(port::TABLE_DATA, data);
            self.wr(port::TABLE_SEL, (t as u32) << 24 | index);
            self.wr(port::TABLE_CMD, port::TABLE_WRITE);
            while self.rd(port::TABLE_CMD) & 1 != 0 {}
            Ok(())
        }
        fn recv_exception(&mut self, buf: &mut [u8]) -> Option<Exception> {
            let s = self.rd(port::EXC_STATUS);
            if s & (1 << 31) == 0 {
                return None;
            }
            let len = ((s & 0xFFFF) as usize)
                .min(buf.len())
                .min(port::FRAME_WINDOW as usize);
            let reason =
                ExceptionReason::from_u8((s >> 16) as u8).unwrap_or(ExceptionReason::NoMatch);
            let conn = self.rd(port::EXC_CONN);
            self.copy_in(port::EXC_DATA, &mut buf[..len]);
            self.wr(port::EXC_POP, 1);
            Some(Exception {
                reason,
                conn: (conn != u32::MAX).then_some(conn),
                len,
            })
        }
        fn send_frame(&mut self, frame: &[u8]) -> Result<(), HalError> {
            if frame.len() > port::FRAME_WINDOW as usize {
                return Err(HalError::BadLength);
            }
            self.copy_out(port::TX_DATA, frame);
            self.wr(port::TX_SEND, frame.len() as u32);
            Ok(())
        }
        fn inject_rx(&mut self, frame: &[u8]) -> Result<(), HalError> {
            if frame.len() > port::FRAME_WINDOW as usize {
                return Err(HalError::BadLength);
            }
            self.copy_out(port::TX_DATA, frame);
            self.wr(port::RX_INJECT, frame.len() as u32);
            Ok(())
        }
        fn mailbox_poll(&mut self, buf: &mut [u8]) -> Option<(u16, usize)> {
            let c = self.rd(port::MBOX_CMD);
            if c & (1 << 31) == 0 {
                return None;
            }
            let len = (self.rd(port::MBOX_LEN) as usize).min(buf.len());
            self.copy_in(port::MBOX_DATA, &mut buf[..len]);
            Some((c as u16, len))
        }
        fn mailbox_done(&mut self, status: MboxStatus, result: &[u8]) {
            self.copy_out(port::MBOX_DATA, result);
            self.wr(port::MBOX_LEN, result.len() as u32);
            self.wr(port::MBOX_DONE, status as u32);
        }
        fn post_event(&mut self, event: &Event) -> Result<(), HalError> {
            if self.rd(port::EVENT_PUSH) & 1 != 0 {
                return Err(HalError::Full);
            }
            let mut b = [0u8; Event::SIZE];
            event.emit(&mut b).map_err(|_| HalError::BadLength)?;
            self.copy_out(port::EVENT_DATA, &b);
            self.wr(port::EVENT_PUSH, 1);
            Ok(())
        }
        fn flush_qp(&mut self, qpn: u32) -> Result<(), HalError> {
            self.wr(port::FLUSH_QP, qpn);
            Ok(())
        }
    }

    #[no_mangle]
    extern "C" fn fw_main() -> ! {
        // Only the address of the linker symbol is taken.
        let base = core::ptr::addr_of!(FW_PORT) as usize;
        let mut hal = Mmio { base, khz: 0 };
        hal.khz = hal.rd(port::CLOCK_KHZ);
        let mut fw: Firmware<Mmio, 8, 16, 4, 8, 8, 8, 16, 64, 8, 8> =
            Firmware::new(hal, Config::default());
        loop {
            fw.poll();
        }
    }

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        loop {
            core::hint::spin_loop();
        }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {}
