//! Measures model speed: `cargo run --release -p verilator-sys --example speed [cycles]`.
//! Drives back-to-back random frames into `mac_rx_*` with the sink always
//! ready (every block toggling), without and then with a VCD trace.

use std::time::Instant;
use verilator_sys::rnic_core::Model;

fn run(cycles: u64, vcd: Option<&std::path::Path>) -> f64 {
    let mut m = Model::new();
    if let Some(p) = vcd {
        m.trace_vcd(p).expect("open vcd");
    }
    m.reset(4);
    m.set_rx_pay_ready(1);
    let mut x = 0x1234_5678_9abc_def0u64;
    let mut beat = 0u64;
    let t = Instant::now();
    for _ in 0..cycles {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        beat += 1;
        let last = beat % 24 == 23;
        m.set_mac_rx_data(x);
        m.set_mac_rx_keep(if last { 1 + (x >> 60) % 8 } else { 8 });
        m.set_mac_rx_last(last as u64);
        m.set_mac_rx_fcs_bad((last && x & 15 == 0) as u64);
        m.set_mac_rx_valid(1);
        m.tick();
        std::hint::black_box(m.get_rx_pay_data());
    }
    let dt = t.elapsed().as_secs_f64();
    assert!(m.get_cnt_rx_ok() > 0);
    cycles as f64 / dt
}

fn main() {
    let cycles: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5_000_000);
    let r = run(cycles, None);
    println!("no trace : {:>10.0} cycles/s ({cycles} cycles)", r);
    let path = std::env::temp_dir().join("verilator-sys-speed.vcd");
    let n = cycles / 20;
    let r = run(n, Some(&path));
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "VCD on   : {:>10.0} cycles/s ({n} cycles, {} MB)",
        r,
        size / 1_000_000
    );
    let _ = std::fs::remove_file(&path);
}
