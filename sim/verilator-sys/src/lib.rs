//! `verilator-sys`: the Verilated rnic RTL, driven from Rust.
//!
//! `build.rs` runs Verilator on every `hw/generated/<top>.v` that has a port
//! manifest `hw/generated/<top>.ports` and makes each a module
//! `verilator_sys::<top>` with its own `Model` type and one typed accessor per
//! top-level port: `set_<input>(u64)` and `get_<port>() -> u64` (bits above a
//! port's width are ignored on input and zero on output; ports wider than 64
//! bits are `[u32; N]`, little-endian words). The clock is driven only by
//! `tick`. All models share one compiled Verilator runtime.
//!
//! ```no_run
//! let mut m = verilator_sys::rnic_core::Model::new();
//! m.reset(4);
//! m.set_rx_pay_ready(1);
//! m.tick();
//! assert_eq!(m.get_cnt_rx_ok(), 0);
//! ```
//!
//! [`Verilated`] is the part every model has in common (for code generic
//! over models); `vsys_fixture` is a tiny self-test model from this crate's
//! `fixtures/`, not NIC RTL.

/// Opaque C++ model handle (`VModel<V<top>>` in `csrc/vmodel.h`); each
/// model's functions take only their own kind.
#[repr(C)]
pub struct RawModel {
    _private: [u8; 0],
}

/// What every Verilated model offers, whatever its ports.
pub trait Verilated {
    /// The top module's name (`rnic_core`, ...).
    const TOP: &'static str;
    /// Every top-level port: (name, is_output, width), in manifest order.
    const PORTS: &'static [(&'static str, bool, usize)];
    /// Evaluates combinational logic after inputs changed, without an edge.
    fn eval(&mut self);
    /// One clock cycle (see the model's `tick`).
    fn tick(&mut self);
    /// `n` clock cycles with the inputs unchanged.
    fn ticks(&mut self, n: u64);
    /// Holds `reset` high for `cycles` clocks (at least 2), then low.
    fn reset(&mut self, cycles: u64);
    /// Clock cycles run so far.
    fn cycle(&self) -> u64;
    /// A port of at most 64 bits by name.
    fn get(&self, port: &str) -> Option<u64>;
    /// Sets an input of at most 64 bits by name; `false` if there is none.
    fn set(&mut self, port: &str, v: u64) -> bool;
}

/// The part of `Model` that is the same for every top; expanded inside each
/// generated `mod <top>` next to its `mod ffi`.
#[doc(hidden)]
#[macro_export]
macro_rules! define_model {
    ($top:literal) => {
        /// One instance of the model. Each has its own Verilator context, so
        /// several (of this and other types) can run in one process; a model
        /// is `Send`, not `Sync`.
        pub struct Model {
            raw: ::std::ptr::NonNull<$crate::RawModel>,
        }

        // SAFETY: a model is only touched through `&self`/`&mut self`, owns
        // its own VerilatedContext and has no thread affinity, so moving it to
        // another thread is sound. It is not `Sync`: the C++ model must not be
        // used concurrently.
        unsafe impl Send for Model {}

        /// The top module's name.
        pub const TOP: &str = $top;

        impl Model {
            /// A new model; all inputs 0, the clock low, no trace. Call
            /// [`Model::reset`] before use.
            pub fn new() -> Self {
                // SAFETY: no preconditions; returns a heap object (aborts on
                // allocation failure, never returns null in practice).
                let raw = unsafe { ffi::new() };
                Model {
                    raw: ::std::ptr::NonNull::new(raw).expect("model constructor returned null"),
                }
            }

            /// Evaluates combinational logic after inputs changed, without a
            /// clock edge (outputs that depend combinationally on inputs
            /// update).
            pub fn eval(&mut self) {
                // SAFETY: `self.raw` is live (created in `new`, freed only in `drop`).
                unsafe { ffi::eval(self.raw.as_ptr()) }
            }

            /// One clock cycle: clock low, eval, clock high, eval. Inputs set
            /// before the call are sampled at the rising edge; outputs read
            /// after it are the values after that edge. Writes the VCD (when
            /// open) once per half cycle. The clock-low eval is skipped when
            /// [`Self::eval`] ran since the last tick (it was that eval; see
            /// `csrc/vmodel.h`), so "set inputs, eval, read, tick" costs two
            /// evaluations per cycle, not three.
            #[inline]
            pub fn tick(&mut self) {
                // SAFETY: `self.raw` is live.
                unsafe { ffi::tick(self.raw.as_ptr()) }
            }

            /// `n` clock cycles with the inputs unchanged.
            pub fn ticks(&mut self, n: u64) {
                // SAFETY: `self.raw` is live.
                unsafe { ffi::ticks(self.raw.as_ptr(), n) }
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
                unsafe { ffi::cycle(self.raw.as_ptr()) }
            }

            /// Starts writing a VCD of every signal to `path` (replacing a
            /// trace already open). Time unit: 10 per clock cycle.
            pub fn trace_vcd(&mut self, path: &::std::path::Path) -> ::std::io::Result<()> {
                let c = ::std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                    .map_err(|e| ::std::io::Error::new(::std::io::ErrorKind::InvalidInput, e))?;
                // SAFETY: `self.raw` is live and `c` is a NUL-terminated
                // string that outlives the call (Verilator copies the name).
                let rc = unsafe { ffi::vcd_open(self.raw.as_ptr(), c.as_ptr()) };
                if rc == 0 {
                    Ok(())
                } else {
                    Err(::std::io::Error::other(format!(
                        "cannot open VCD file {}",
                        path.display()
                    )))
                }
            }

            /// Flushes the VCD file, if one is open.
            pub fn flush_vcd(&mut self) {
                // SAFETY: `self.raw` is live.
                unsafe { ffi::vcd_flush(self.raw.as_ptr()) }
            }

            /// Closes the VCD file, if one is open (also done on drop).
            pub fn close_vcd(&mut self) {
                // SAFETY: `self.raw` is live.
                unsafe { ffi::vcd_close(self.raw.as_ptr()) }
            }
        }

        impl Default for Model {
            fn default() -> Self {
                Self::new()
            }
        }

        impl Drop for Model {
            fn drop(&mut self) {
                // SAFETY: `self.raw` came from `ffi::new` and is freed exactly
                // once, here; nothing can use it afterwards.
                unsafe { ffi::free(self.raw.as_ptr()) }
            }
        }

        impl $crate::Verilated for Model {
            const TOP: &'static str = $top;
            const PORTS: &'static [(&'static str, bool, usize)] = PORTS;
            fn eval(&mut self) {
                Model::eval(self)
            }
            #[inline]
            fn tick(&mut self) {
                Model::tick(self)
            }
            fn ticks(&mut self, n: u64) {
                Model::ticks(self, n)
            }
            fn reset(&mut self, cycles: u64) {
                Model::reset(self, cycles)
            }
            fn cycle(&self) -> u64 {
                Model::cycle(self)
            }
            fn get(&self, port: &str) -> Option<u64> {
                Model::get(self, port)
            }
            fn set(&mut self, port: &str, v: u64) -> bool {
                Model::set(self, port, v)
            }
        }
    };
}

include!(concat!(env!("OUT_DIR"), "/models.rs"));

/// The `rnic_core` model under its original names (`verilator_sys::Model`),
/// so code written before there were several models keeps building.
pub use rnic_core::{Model, PORTS};
