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
//! both `defmt::Format` and `core::fmt::Display` (integers, `bool`, `&str`,
//! and the wrappers below).

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

/// An IPv4 address (host order, as the firmware keeps them) shown dotted.
#[derive(Clone, Copy)]
pub(crate) struct Ip(pub u32);

impl core::fmt::Display for Ip {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let [a, b, c, d] = self.0.to_be_bytes();
        write!(f, "{a}.{b}.{c}.{d}")
    }
}

#[cfg(target_os = "none")]
impl defmt::Format for Ip {
    fn format(&self, f: defmt::Formatter<'_>) {
        let [a, b, c, d] = self.0.to_be_bytes();
        defmt::write!(f, "{}.{}.{}.{}", a, b, c, d)
    }
}

/// A peer, `address:port`.
#[derive(Clone, Copy)]
pub(crate) struct Peer(pub u32, pub u16);

impl core::fmt::Display for Peer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}:{}", Ip(self.0), self.1)
    }
}

#[cfg(target_os = "none")]
impl defmt::Format for Peer {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{}:{}", Ip(self.0), self.1)
    }
}

/// On or off.
#[derive(Clone, Copy)]
pub(crate) struct OnOff(pub bool);

impl core::fmt::Display for OnOff {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(if self.0 { "on" } else { "off" })
    }
}

#[cfg(target_os = "none")]
impl defmt::Format for OnOff {
    fn format(&self, f: defmt::Formatter<'_>) {
        let s: &str = if self.0 { "on" } else { "off" };
        defmt::write!(f, "{=str}", s)
    }
}
