//! `rnic-fw`: the rnic firmware (slow path), `#![no_std]`, no allocation.
#![no_std]
#![deny(unsafe_code)]
