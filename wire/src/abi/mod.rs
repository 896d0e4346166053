//! The rnic host/device ABI (DESIGN.md §3). All little-endian.
