//! Logging: through `defmt` with the `defmt` feature, otherwise compiled
//! away (the arguments are still type-checked, never evaluated).

#[cfg(feature = "defmt")]
macro_rules! log {
    (error, $($arg:tt)*) => { defmt::error!($($arg)*) };
    (warn, $($arg:tt)*) => { defmt::warn!($($arg)*) };
    (info, $($arg:tt)*) => { defmt::info!($($arg)*) };
    (debug, $($arg:tt)*) => { defmt::debug!($($arg)*) };
}

#[cfg(not(feature = "defmt"))]
macro_rules! log {
    ($lvl:ident, $($arg:tt)*) => {{
        if false {
            let _ = core::format_args!($($arg)*);
        }
    }};
}
