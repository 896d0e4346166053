//! What a clock of the co-simulation stands for (`rnic_sim::clock::Timing`).
//!
//! * The default timing is the RTL's own clock: its `CLOCK_KHZ` parameter
//!   is `Timing::DATAPATH`'s, and the override answers the firmware's read.
//! * At the board's timing (62.5 MHz behind 1 Gb/s) a session connects,
//!   moves data byte-exact and closes, and a 64 KiB Write's goodput is
//!   bounded by the 1 Gb/s port (the link is paced at 2 octets a clock; at
//!   the datapath's 8 the same clocks would give 4 Gb/s).

use rnic_sim::clock::Timing;
use rnic_sim::fw_hal::FwNode;
use rnic_sim::rtl_run::{self, RtlConfig, RtlOp};
use rnic_wire::abi::context::port;

#[test]
fn the_rtl_clock_is_the_datapath_timing_and_the_override_answers() {
    let mut n = FwNode::new();
    assert_eq!(n.fw_read(port::CLOCK_KHZ), Timing::DATAPATH.clock_khz);
    n.set_clock_khz(Some(Timing::BOARD.clock_khz));
    assert_eq!(n.fw_read(port::CLOCK_KHZ), 62_500);
    // other registers still come from the RTL
    assert_ne!(n.fw_read(port::CLOCK_KHZ + 4), 62_500);
    n.set_clock_khz(None);
    assert_eq!(n.fw_read(port::CLOCK_KHZ), Timing::DATAPATH.clock_khz);
}

#[test]
fn a_board_session_is_bounded_by_its_1_gbps_port() {
    let t = Timing::BOARD;
    let report = rtl_run::run(&RtlConfig {
        timing: t,
        max_size: 64 << 10,
        ops: 1,
        delay_cycles: t.cycles_per_us(),
        ..RtlConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    print!("{}", report.render());
    assert_eq!(report.disconnect_note, None);
    assert_eq!(report.terminates, 0);
    assert!(report.read_note.is_none(), "{:?}", report.read_note);
    assert_eq!(report.rows.len(), 3 * 17);
    let json: serde_json::Value = serde_json::from_str(&report.json()).unwrap();
    assert_eq!(json["clock_mhz"], 62.5);
    assert_eq!(json["cycle_ns"], 16.0);
    for op in [RtlOp::Write, RtlOp::Send, RtlOp::Read] {
        let row = report
            .rows
            .iter()
            .find(|r| r.op == op && r.size == 64 << 10)
            .expect("a 64 KiB row");
        let clocks: u64 = row.latencies.iter().sum();
        let gbps = t.gbps(row.size as u64, clocks);
        // below the port's 1 Gb/s (framing takes about 6 % at MTU 1500),
        // and near it: the datapath at 62.5 MHz moves 4 Gb/s
        assert!(gbps < 0.95 && gbps > 0.85, "{}: {gbps:.3} Gb/s", op.name());
    }
}
