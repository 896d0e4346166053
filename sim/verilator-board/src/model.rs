//! The raw FFI wrapper shared by the Verilated board tops: each top's shim
//! (`csrc/*_shim.cpp`) exports `new`, `free`, `eval`, `set`, `get`,
//! `vcd_open` and `vcd_dump` under its own prefix, and
//! [`verilated_top!`](crate::verilated_top) turns them into an owning Rust
//! type with the same methods.

/// Declares the owning wrapper `$name` of one Verilated top: its opaque
/// model type `$raw`, the shim's functions, `new`, `set` (inputs `$in`),
/// `get` (outputs and public internal signals `$sig`), `get_in`, `eval`,
/// `trace_vcd`, `dump`, and `Drop`.
#[macro_export]
#[doc(hidden)]
macro_rules! verilated_top {
    (
        $(#[$doc:meta])*
        $name:ident ($raw:ident, $in:ty, $sig:ty):
        $new:ident, $free:ident, $eval:ident, $set:ident, $get:ident,
        $vcd_open:ident, $vcd_dump:ident
    ) => {
        #[repr(C)]
        struct $raw {
            _private: [u8; 0],
        }

        extern "C" {
            fn $new() -> *mut $raw;
            fn $free(m: *mut $raw);
            fn $eval(m: *mut $raw);
            fn $set(m: *mut $raw, port: u32, v: u64) -> i32;
            fn $get(m: *const $raw, port: u32) -> u64;
            fn $vcd_open(m: *mut $raw, path: *const std::os::raw::c_char) -> i32;
            fn $vcd_dump(m: *mut $raw, time: u64);
        }

        $(#[$doc])*
        pub struct $name {
            raw: std::ptr::NonNull<$raw>,
        }

        // SAFETY: the model is only used through `&self`/`&mut self`, owns
        // its own VerilatedContext and has no thread affinity; it is not
        // `Sync`.
        unsafe impl Send for $name {}

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl $name {
            /// A new model, all inputs 0, evaluated once.
            pub fn new() -> Self {
                // SAFETY: no preconditions; returns a heap object.
                let raw = unsafe { $new() };
                $name {
                    raw: std::ptr::NonNull::new(raw)
                        .expect(concat!(stringify!($name), " model constructor returned null")),
                }
            }

            /// Sets an input (bits above its width are ignored). Takes
            /// effect at the next evaluation.
            #[inline]
            pub fn set(&mut self, port: $in, v: u64) {
                // SAFETY: `self.raw` is live (freed only in drop).
                let ok = unsafe { $set(self.raw.as_ptr(), port as u32, v) };
                debug_assert_eq!(ok, 1);
            }

            /// Reads an output or a public internal signal.
            #[inline]
            pub fn get(&self, s: $sig) -> u64 {
                // SAFETY: `self.raw` is live.
                unsafe { $get(self.raw.as_ptr(), s as u32) }
            }

            /// Reads an input back.
            pub fn get_in(&self, port: $in) -> u64 {
                // SAFETY: `self.raw` is live.
                unsafe { $get(self.raw.as_ptr(), port as u32) }
            }

            /// Evaluates the model after inputs changed (edges included).
            #[inline]
            pub fn eval(&mut self) {
                // SAFETY: `self.raw` is live.
                unsafe { $eval(self.raw.as_ptr()) }
            }

            /// Starts a VCD of every signal; `dump` writes a time step.
            pub fn trace_vcd(&mut self, path: &std::path::Path) -> std::io::Result<()> {
                let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
                // SAFETY: live model; `c` outlives the call.
                let rc = unsafe { $vcd_open(self.raw.as_ptr(), c.as_ptr()) };
                if rc == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::other(format!(
                        "cannot open VCD file {}",
                        path.display()
                    )))
                }
            }

            /// Writes the current values to the VCD (if open) at `time`,
            /// which must increase from call to call.
            pub fn dump(&mut self, time: u64) {
                // SAFETY: live model.
                unsafe { $vcd_dump(self.raw.as_ptr(), time) }
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: `raw` came from the shim's constructor and is
                // freed once, here.
                unsafe { $free(self.raw.as_ptr()) }
            }
        }
    };
}
