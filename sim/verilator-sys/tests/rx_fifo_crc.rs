//! System tests of the MAC RX FIFO and the CRC32c unit through Verilator,
//! against the independent `crc32c` crate.

mod common;
use common::{run_frames, Rng, Sink};
use verilator_sys::Model;

fn new_model() -> Model {
    let mut m = Model::new();
    m.reset(4);
    m
}

/// 3000 random frames of 0..200 bytes (partial last beats, the empty frame)
/// plus a few oversize ones, 10 % with a bad FCS, random gaps, a sink that is
/// always ready: exactly the good frames come out, each with its CRC32c.
#[test]
fn good_frames_delivered_with_crc32c() {
    let mut rng = Rng::new(0xC0FFEE);
    let mut m = new_model();
    let mut frames: Vec<(Vec<u8>, bool)> = Vec::new();
    for i in 0..3000 {
        let len = if i % 500 == 499 {
            1537 + rng.below(200) // > 192 beats: oversize
        } else {
            rng.below(201)
        };
        frames.push((rng.bytes(len), rng.percent(10)));
    }
    let mut sink = Sink::default();
    run_frames(&mut m, &mut rng, &frames, 20, 100, &mut sink);

    let good: Vec<&Vec<u8>> = frames
        .iter()
        .filter(|(f, bad)| !bad && f.len() <= 1536)
        .map(|(f, _)| f)
        .collect();
    let bad = frames.iter().filter(|(f, b)| *b && f.len() <= 1536).count() as u64;
    let oversize = frames.iter().filter(|(f, _)| f.len() > 1536).count() as u64;
    assert_eq!(sink.frames.len(), good.len());
    for (i, (got, want)) in sink.frames.iter().zip(&good).enumerate() {
        assert_eq!(got, *want, "frame {i}");
    }
    assert_eq!(sink.crcs.len(), good.len());
    for (i, (crc, want)) in sink.crcs.iter().zip(&good).enumerate() {
        assert_eq!(
            *crc,
            crc32c::crc32c(want),
            "crc of frame {i} ({} bytes)",
            want.len()
        );
    }
    assert_eq!(m.get_cnt_rx_ok(), good.len() as u64);
    assert_eq!(m.get_cnt_rx_bad_fcs(), bad);
    assert_eq!(m.get_cnt_rx_oversize(), oversize);
    assert_eq!(m.get_cnt_rx_overflow(), 0);
}

/// Every length 0..=64 once, back to back, no gaps: partial-beat corner
/// cases of the CRC's un-padding matrices.
#[test]
fn every_short_length_back_to_back() {
    let mut rng = Rng::new(5);
    let mut m = new_model();
    let frames: Vec<(Vec<u8>, bool)> = (0..=64).map(|l| (rng.bytes(l), false)).collect();
    let mut sink = Sink::default();
    run_frames(&mut m, &mut rng, &frames, 0, 100, &mut sink);
    let want: Vec<u32> = frames.iter().map(|(f, _)| crc32c::crc32c(f)).collect();
    assert_eq!(sink.crcs, want);
}

/// A slow sink: the FIFO fills and refuses whole frames; what is delivered
/// is an in-order subsequence of the good frames, never a partial frame, and
/// every frame sent is counted exactly once.
#[test]
fn overflow_refuses_whole_frames() {
    let mut rng = Rng::new(77);
    let mut m = new_model();
    let frames: Vec<(Vec<u8>, bool)> = (0..1500)
        .map(|_| {
            let len = 60 + rng.below(1400);
            (rng.bytes(len), rng.percent(5))
        })
        .collect();
    let mut sink = Sink::default();
    run_frames(&mut m, &mut rng, &frames, 5, 30, &mut sink);
    let mut it = frames.iter();
    for (i, g) in sink.frames.iter().enumerate() {
        loop {
            let (f, bad) = it.next().unwrap_or_else(|| panic!("frame {i} not sent"));
            if f == g {
                assert!(!bad);
                break;
            }
        }
    }
    let counted = m.get_cnt_rx_ok()
        + m.get_cnt_rx_bad_fcs()
        + m.get_cnt_rx_overflow()
        + m.get_cnt_rx_oversize();
    assert_eq!(counted, frames.len() as u64);
    assert_eq!(m.get_cnt_rx_ok(), sink.frames.len() as u64);
    assert!(m.get_cnt_rx_overflow() > 0);
    for (crc, f) in sink.crcs.iter().zip(&sink.frames) {
        assert_eq!(*crc, crc32c::crc32c(f));
    }
}

/// Reset in the middle of traffic clears the counters and the FIFO.
#[test]
fn reset_clears_state() {
    let mut rng = Rng::new(9);
    let mut m = new_model();
    let frames: Vec<(Vec<u8>, bool)> = (0..20).map(|_| (rng.bytes(100), false)).collect();
    let mut sink = Sink::default();
    run_frames(&mut m, &mut rng, &frames, 0, 0, &mut sink);
    assert!(m.get_cnt_rx_ok() > 0);
    m.reset(2);
    m.ticks(4);
    assert_eq!(m.get_cnt_rx_ok(), 0);
    assert_eq!(m.get_rx_pay_valid(), 0);
}

/// A VCD can be switched on at run time and is written.
#[test]
fn vcd_trace_is_written() {
    let dir = std::env::temp_dir().join(format!("vsys-vcd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.vcd");
    let mut m = new_model();
    m.trace_vcd(&path).unwrap();
    m.set_mac_rx_valid(1);
    m.set_mac_rx_last(1);
    m.set_mac_rx_keep(3);
    m.ticks(20);
    m.close_vcd();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("$enddefinitions"));
    assert!(text.contains("mac_rx_keep"));
    assert!(text.contains("#195"), "20 cycles at 10 per cycle");
    std::fs::remove_dir_all(&dir).unwrap();
}
