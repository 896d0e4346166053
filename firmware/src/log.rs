//! Logging: `log!(level, "format {}", args)` with a level of `error`,
//! `warn`, `info` or `debug`.
//!
//! * The bare-metal image (`target_os = "none"`) logs through `defmt`: the
//!   format string stays in the ELF, the arguments go out in binary to the
//!   RTT up channel (`src/rtt.rs` in the image).
//! * Built for the host with the `log` feature, it goes to the `log` crate's
//!   facade (target `rnic_fw`): whatever logger the program installed prints
//!   it (the co-simulator's `--fw-log`).
//! * Otherwise it compiles away (the arguments are type-checked, never
//!   evaluated).
//!
//! One format string serves both: only `{}`, with arguments that implement
//! both `defmt::Format` and `core::fmt::Display` (integers, `bool`, `&str`).

#[cfg(target_os = "none")]
macro_rules! log {
    (error, $($arg:tt)*) => { defmt::error!($($arg)*) };
    (warn, $($arg:tt)*) => { defmt::warn!($($arg)*) };
    (info, $($arg:tt)*) => { defmt::info!($($arg)*) };
    (debug, $($arg:tt)*) => { defmt::debug!($($arg)*) };
}

#[cfg(all(not(target_os = "none"), feature = "log"))]
macro_rules! log {
    (error, $($arg:tt)*) => { ::log::error!(target: "rnic_fw", $($arg)*) };
    (warn, $($arg:tt)*) => { ::log::warn!(target: "rnic_fw", $($arg)*) };
    (info, $($arg:tt)*) => { ::log::info!(target: "rnic_fw", $($arg)*) };
    (debug, $($arg:tt)*) => { ::log::debug!(target: "rnic_fw", $($arg)*) };
}

#[cfg(all(not(target_os = "none"), not(feature = "log")))]
macro_rules! log {
    ($lvl:ident, $($arg:tt)*) => {{
        if false {
            let _ = core::format_args!($($arg)*);
        }
    }};
}
