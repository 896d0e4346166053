//! The bare-metal firmware image: `cargo build -p rnic-fw --target
//! riscv32im-unknown-none-elf --release`. It runs [`rnic_fw::Firmware`] over
//! the firmware port's MMIO registers
//! ([`rnic_wire::abi::context::port`], mapped at `FW_PORT` by `rnic-fw.x`).
//! On the host this builds as an empty program, so that workspace-wide
//! `cargo test` and `clippy` work.
#![cfg_attr(target_os = "none", no_std, no_main)]

#[cfg(target_os = "none")]
mod image {
    use core::ptr::{read_volatile, write_volatile};
    use rnic_fw::port_hal::{FwCapacities, FwRegs, PortHal};
    use rnic_fw::{Config, Firmware};

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

    /// The firmware port over MMIO; the port protocol is
    /// [`rnic_fw::port_hal::PortHal`]'s.
    struct Mmio {
        base: usize,
    }

    impl FwRegs for Mmio {
        fn read32(&mut self, off: u32) -> u32 {
            // SAFETY: `base + off` is a register of the firmware port.
            unsafe { read_volatile((self.base + off as usize) as *const u32) }
        }
        fn write32(&mut self, off: u32, v: u32) {
            // SAFETY: as above.
            unsafe { write_volatile((self.base + off as usize) as *mut u32, v) }
        }
    }

    #[no_mangle]
    extern "C" fn fw_main() -> ! {
        // Only the address of the linker symbol is taken.
        let base = core::ptr::addr_of!(FW_PORT) as usize;
        let mut hal = PortHal::new(Mmio { base });
        // The device's core profile (`port::LIM_*`): the page list shrinks
        // to the device's; a build with larger tables than it stops here.
        let mut config = Config::default();
        let caps = FwCapacities {
            conns: 8,
            qps: 16,
            cqs: 16,
            tpt: 64,
        };
        if hal.limits().fit(&caps, &mut config).is_err() {
            panic!();
        }
        let mut fw: Firmware<PortHal<Mmio>, 8, 16, 4, 8, 8, 8, 16, 64, 8, 8> =
            Firmware::new(hal, config);
        loop {
            fw.poll();
            // The port has no config-change notice: the host may set the
            // interface (MAC, address, netmask, gateway, MTU) at any time,
            // so it is read again after every poll (five register reads
            // against the thousands of instructions of a poll).
            fw.reload_config();
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
