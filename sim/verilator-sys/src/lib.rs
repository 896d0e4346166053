//! `verilator-sys`: the Verilated rnic core, driven from Rust.
//!
//! `build.rs` runs Verilator on `hw/generated/rnic_core.v` and generates one
//! typed accessor per top-level port from `hw/generated/rnic_core.ports`:
//! `set_<input>(u64)` and `get_<output>() -> u64` (bits above a port's width
//! are ignored on input and zero on output; ports wider than 64 bits would be
//! `[u32; N]`). The clock is driven only by [`Model::tick`].
//!
//! ```no_run
//! let mut m = verilator_sys::Model::new();
//! m.reset(4);
//! m.set_rx_pay_ready(1);
//! m.tick();
//! assert_eq!(m.get_cnt_rx_ok(), 0);
//! ```

use std::ffi::CString;
use std::path::Path;
use std::ptr::NonNull;

/// Opaque C++ model handle (`struct VrnicModel` in `csrc/vrnic_model.h`).
#[repr(C)]
pub struct VrnicModel {
    _private: [u8; 0],
}

extern "C" {
    fn vrnic_new() -> *mut VrnicModel;
    fn vrnic_free(m: *mut VrnicModel);
    fn vrnic_eval(m: *mut VrnicModel);
    fn vrnic_tick(m: *mut VrnicModel);
    fn vrnic_ticks(m: *mut VrnicModel, n: u64);
    fn vrnic_cycle(m: *const VrnicModel) -> u64;
    fn vrnic_vcd_open(m: *mut VrnicModel, path: *const std::os::raw::c_char) -> i32;
    fn vrnic_vcd_flush(m: *mut VrnicModel);
    fn vrnic_vcd_close(m: *mut VrnicModel);
}

/// One instance of the `rnic_core` model. Each has its own Verilator
/// context, so several can run in one process (one per co-simulated node);
/// a model is not shared between threads (it is `Send`, not `Sync`).
pub struct Model {
    raw: NonNull<VrnicModel>,
}

// SAFETY: a model is only touched through `&self`/`&mut self`, owns its own
// VerilatedContext and has no thread affinity, so moving it to another thread
// is sound. It is not `Sync`: the C++ model must not be used concurrently.
unsafe impl Send for Model {}

include!(concat!(env!("OUT_DIR"), "/ports.rs"));

impl Model {
    /// A new model; all inputs 0, the clock low, no trace. Call
    /// [`Model::reset`] before use.
    pub fn new() -> Self {
        // SAFETY: `vrnic_new` has no preconditions; it returns a heap object
        // (or aborts on allocation failure, never returns null in practice).
        let raw = unsafe { vrnic_new() };
        Model {
            raw: NonNull::new(raw).expect("vrnic_new returned null"),
        }
    }

    /// Evaluates combinational logic after inputs changed, without a clock
    /// edge (outputs that depend combinationally on inputs update).
    pub fn eval(&mut self) {
        // SAFETY: `self.raw` is live (created in `new`, freed only in `drop`).
        unsafe { vrnic_eval(self.raw.as_ptr()) }
    }

    /// One clock cycle: clock low, eval, clock high, eval. Inputs set before
    /// the call are sampled at the rising edge; outputs read after it are the
    /// values after that edge. Writes the VCD (when open) once per half cycle.
    #[inline]
    pub fn tick(&mut self) {
        // SAFETY: `self.raw` is live.
        unsafe { vrnic_tick(self.raw.as_ptr()) }
    }

    /// `n` clock cycles with the inputs unchanged.
    pub fn ticks(&mut self, n: u64) {
        // SAFETY: `self.raw` is live.
        unsafe { vrnic_ticks(self.raw.as_ptr(), n) }
    }

    /// Holds `reset` high for `cycles` clocks (at least 2), then low.
    pub fn reset(&mut self, cycles: u64) {
        self.set_reset(1);
        self.ticks(cycles.max(2));
        self.set_reset(0);
    }

    /// Clock cycles run so far.
    pub fn cycle(&self) -> u64 {
        // SAFETY: `self.raw` is live.
        unsafe { vrnic_cycle(self.raw.as_ptr()) }
    }

    /// Starts writing a VCD of every signal to `path` (replacing a trace
    /// already open). Time unit: 10 per clock cycle.
    pub fn trace_vcd(&mut self, path: &Path) -> std::io::Result<()> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: `self.raw` is live and `c` is a NUL-terminated string that
        // outlives the call (Verilator copies the name).
        let rc = unsafe { vrnic_vcd_open(self.raw.as_ptr(), c.as_ptr()) };
        if rc == 0 {
            Ok(())
        } else {
            Err(std::io::Error::other(format!(
                "cannot open VCD file {}",
                path.display()
            )))
        }
    }

    /// Flushes the VCD file, if one is open.
    pub fn flush_vcd(&mut self) {
        // SAFETY: `self.raw` is live.
        unsafe { vrnic_vcd_flush(self.raw.as_ptr()) }
    }

    /// Closes the VCD file, if one is open (also done on drop).
    pub fn close_vcd(&mut self) {
        // SAFETY: `self.raw` is live.
        unsafe { vrnic_vcd_close(self.raw.as_ptr()) }
    }
}

impl Default for Model {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: `self.raw` came from `vrnic_new` and is freed exactly once,
        // here; nothing can use it afterwards.
        unsafe { vrnic_free(self.raw.as_ptr()) }
    }
}
