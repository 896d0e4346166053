//! Test helpers shared by the block tests (rust-hdl's simulator).

/// The block tests' generator: xorshift64* from `rnic-wire`, so failures
/// reproduce.
pub type Rng = rnic_wire::rng::Rng<rnic_wire::rng::XorShift64Star>;

/// Splits a frame into beats `(data, keep)`: byte 0 in `data[7:0]`, `keep` the
/// number of valid bytes (8 except on the last beat). An empty frame is one
/// beat with `keep == 0`.
pub fn beats(frame: &[u8]) -> Vec<(u64, u8)> {
    if frame.is_empty() {
        return vec![(0, 0)];
    }
    frame
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            (u64::from_le_bytes(b), c.len() as u8)
        })
        .collect()
}

/// One clock cycle of a block with a `clock` input: inputs set before the
/// call are sampled at the rising edge; outputs read after it are the values
/// after that edge.
macro_rules! tick {
    ($uut:expr) => {{
        $uut.clock.next = false.into();
        assert!(
            rust_hdl::prelude::simulate(&mut $uut, 1000),
            "did not settle"
        );
        $uut.clock.next = true.into();
        assert!(
            rust_hdl::prelude::simulate(&mut $uut, 1000),
            "did not settle"
        );
    }};
}
pub(crate) use tick;
