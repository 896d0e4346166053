//! `rnic-hw`: the rnic RTL, written as rust-hdl blocks.
