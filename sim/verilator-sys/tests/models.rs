//! Several model types in one process, sharing the Verilator runtime: the
//! `vsys_fixture` self-test model (ports wider than 64 bits, a combinational
//! output) next to `rnic_core`, each checked against plain Rust arithmetic.

use verilator_sys::{rnic_core, vsys_fixture, Verilated};

#[test]
fn every_model_is_listed() {
    assert!(verilator_sys::MODELS.contains(&"rnic_core"));
    assert!(verilator_sys::MODELS.contains(&"vsys_fixture"));
    assert_eq!(rnic_core::TOP, "rnic_core");
    assert_eq!(<vsys_fixture::Model as Verilated>::TOP, "vsys_fixture");
    assert_eq!(
        vsys_fixture::PORTS.iter().find(|p| p.0 == "wide_in"),
        Some(&("wide_in", false, 100))
    );
}

#[test]
fn fixture_accumulates_and_passes_wide_values() {
    let mut f = vsys_fixture::Model::new();
    let mut core = rnic_core::Model::new();
    f.reset(2);
    core.reset(2);
    let mut acc = 0u64;
    for i in 0..1000u64 {
        let a = (i.wrapping_mul(0x9E37_79B9) >> 3) as u32;
        f.set_a(a as u64);
        f.eval();
        assert_eq!(f.get_a_inv(), (!a) as u64, "combinational after eval");
        // 100-bit input: bits above 100 must be ignored.
        let w = [a, !a, a.rotate_left(7), 0xFFFF_FFFF];
        f.set_wide_in(&w);
        f.tick();
        core.tick();
        acc = acc.wrapping_add(a as u64);
        assert_eq!(f.get_acc(), acc);
        // Reference: 100-bit (w & mask) + 1 in u128.
        let win =
            (w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96)
                & ((1u128 << 100) - 1);
        let want = (win + 1) & ((1u128 << 100) - 1);
        let got = f.get_wide_out();
        let got = got[0] as u128
            | (got[1] as u128) << 32
            | (got[2] as u128) << 64
            | (got[3] as u128) << 96;
        assert_eq!(got, want);
    }
    assert_eq!(f.cycle(), core.cycle());
}

#[test]
fn by_name_access_and_generic_trait() {
    fn run<M: Verilated>(m: &mut M, n: u64) -> u64 {
        m.reset(3);
        m.ticks(n);
        m.cycle()
    }
    let mut f = vsys_fixture::Model::new();
    assert_eq!(run(&mut f, 10), 13);
    assert!(f.set("a", 5));
    assert!(!f.set("acc", 5), "outputs cannot be set");
    assert!(!f.set("nope", 5));
    assert_eq!(f.get("wide_out"), None, "wider than 64 bits");
    f.tick();
    assert_eq!(f.get("acc"), Some(5));
    let mut c = rnic_core::Model::new();
    assert_eq!(run(&mut c, 1), 4);
    assert_eq!(c.get("cnt_rx_ok"), Some(0));
}
