//! The bare-metal firmware image: `cargo build -p rnic-fw --target
//! riscv32im-unknown-none-elf --release`. It runs [`rnic_fw::Firmware`] over
//! the firmware port's MMIO registers
//! ([`rnic_wire::abi::context::port`], mapped at `FW_PORT` by `rnic-fw.x`).
//! It logs with defmt to an RTT up channel ([`rtt`]). On the host this
//! builds as an empty program, so that workspace-wide `cargo test` and
//! `clippy` work.
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
    fn panic(info: &core::panic::PanicInfo) -> ! {
        match info.location() {
            Some(l) => defmt::error!("panic at {}:{}", l.file(), l.line()),
            None => defmt::error!("panic"),
        }
        loop {
            core::hint::spin_loop();
        }
    }
}

/// The defmt global logger over a SEGGER RTT control block
/// (`_SEGGER_RTT`, one up channel "defmt" of [`rnic_fw::rtt::BUF_SIZE`]
/// octets, mode NoBlockSkip: see [`rnic_fw::rtt`]), in data memory, where
/// probe-rs finds it from the ELF's symbol. Timestamps are the core's
/// `mtime` (core clocks since reset).
#[cfg(target_os = "none")]
mod rtt {
    use core::cell::UnsafeCell;
    use core::ptr::read_volatile;
    use core::sync::atomic::{AtomicU32, Ordering};
    use rnic_fw::rtt::{Staging, BUF_SIZE, MODE_NO_BLOCK_SKIP};

    /// `mtime` low and high (docs/cpu.md, memory map).
    const MTIME_LO: usize = 0x0200_BFF8;
    const MTIME_HI: usize = 0x0200_BFFC;

    fn mtime() -> u64 {
        // SAFETY: the core's timer registers, read-only.
        unsafe {
            loop {
                let hi = read_volatile(MTIME_HI as *const u32);
                let lo = read_volatile(MTIME_LO as *const u32);
                if read_volatile(MTIME_HI as *const u32) == hi {
                    return (hi as u64) << 32 | lo as u64;
                }
            }
        }
    }

    defmt::timestamp!("{=u64}", mtime());

    /// An RTT channel descriptor (SEGGER's layout).
    #[repr(C)]
    struct Channel {
        name: *const u8,
        buffer: *mut u8,
        size: u32,
        /// Written by the target.
        write: AtomicU32,
        /// Written by the reader.
        read: AtomicU32,
        flags: AtomicU32,
    }

    /// The RTT control block (SEGGER's layout), one up channel.
    #[repr(C)]
    struct Header {
        id: [u8; 16],
        max_up: u32,
        max_down: u32,
        up: Channel,
    }

    // SAFETY: the pointers are to statics; the indices are atomics.
    unsafe impl Sync for Header {}

    struct Buffer(UnsafeCell<[u8; BUF_SIZE]>);
    // SAFETY: written only by the logger, inside its critical section.
    unsafe impl Sync for Buffer {}

    static BUFFER: Buffer = Buffer(UnsafeCell::new([0; BUF_SIZE]));

    /// In data memory, so that the whole control block is in RAM.
    #[link_section = ".data.rtt.name"]
    static NAME: [u8; 6] = *b"defmt\0";

    #[no_mangle]
    #[used]
    static _SEGGER_RTT: Header = Header {
        id: *b"SEGGER RTT\0\0\0\0\0\0",
        max_up: 1,
        max_down: 0,
        up: Channel {
            name: NAME.as_ptr(),
            buffer: BUFFER.0.get() as *mut u8,
            size: BUF_SIZE as u32,
            write: AtomicU32::new(0),
            read: AtomicU32::new(0),
            flags: AtomicU32::new(MODE_NO_BLOCK_SKIP),
        },
    };

    /// Frames dropped because the reader had not made room (a debugger
    /// reads it by name).
    #[no_mangle]
    #[used]
    static RTT_DROPPED: AtomicU32 = AtomicU32::new(0);

    /// The frame in progress.
    struct State {
        encoder: defmt::Encoder,
        staging: Staging,
        /// Nesting of `acquire` (only 1 writes; a nested frame is dropped).
        depth: u32,
        /// mstatus.MIE was set when the frame started.
        mie: bool,
    }

    struct Cell(UnsafeCell<State>);
    // SAFETY: one hart, used with interrupts masked.
    unsafe impl Sync for Cell {}

    static STATE: Cell = Cell(UnsafeCell::new(State {
        encoder: defmt::Encoder::new(),
        staging: Staging::new(0),
        depth: 0,
        mie: false,
    }));

    /// Copies encoded octets into the ring (the frame's staging).
    fn stage(staging: &mut Staging, bytes: &[u8]) {
        let up = &_SEGGER_RTT.up;
        // SAFETY: only the logger writes the buffer, inside its critical
        // section; a reader reads octets before the published position.
        let buf = unsafe { &mut *BUFFER.0.get() };
        staging.stage(buf, up.read.load(Ordering::Relaxed) as usize, bytes);
    }

    #[defmt::global_logger]
    struct Logger;

    // SAFETY: acquire and release bracket every frame (defmt's contract);
    // the state is touched only between them, with interrupts masked on
    // the one hart.
    unsafe impl defmt::Logger for Logger {
        fn acquire() {
            // Mask machine interrupts (mstatus.MIE, bit 3) and keep the
            // old value: the critical section of a single hart.
            let old: usize;
            // SAFETY: a CSR read-and-clear of MIE.
            unsafe { core::arch::asm!("csrrci {0}, mstatus, 8", out(reg) old) };
            // SAFETY: interrupts are masked; nothing else runs.
            let s = unsafe { &mut *STATE.0.get() };
            s.depth += 1;
            if s.depth > 1 {
                return;
            }
            s.mie = old & 8 != 0;
            s.staging = Staging::new(_SEGGER_RTT.up.write.load(Ordering::Relaxed) as usize);
            let st = &mut s.staging;
            s.encoder.start_frame(|b| stage(st, b));
        }

        unsafe fn write(bytes: &[u8]) {
            // SAFETY: between acquire and release.
            let s = unsafe { &mut *STATE.0.get() };
            if s.depth == 1 {
                let st = &mut s.staging;
                s.encoder.write(bytes, |b| stage(st, b));
            }
        }

        unsafe fn flush() {
            // NoBlockSkip: never waits for the reader.
        }

        unsafe fn release() {
            // SAFETY: between acquire and release.
            let s = unsafe { &mut *STATE.0.get() };
            s.depth -= 1;
            if s.depth > 0 {
                return;
            }
            let st = &mut s.staging;
            s.encoder.end_frame(|b| stage(st, b));
            match s.staging.finish() {
                Some(w) => _SEGGER_RTT.up.write.store(w as u32, Ordering::Release),
                None => {
                    let n = RTT_DROPPED.load(Ordering::Relaxed);
                    RTT_DROPPED.store(n.wrapping_add(1), Ordering::Relaxed);
                }
            }
            if s.mie {
                // SAFETY: sets MIE again, as it was before the frame.
                unsafe { core::arch::asm!("csrsi mstatus, 8") };
            }
        }
    }
}

#[cfg(not(target_os = "none"))]
fn main() {}
