//! System tests of the MAC RX FIFO and the CRC32c unit through Verilator,
//! against the independent `crc32c` crate. Since `rx_parse` landed, `rx_pay`
//! carries TCP payloads, so the test data travels as in-order fast-path TCP
//! segments (tests/common/net.rs).

mod common;
use common::net::{Conn, Rx, Seg};
use common::{run_frames, Rng, Sink};
use verilator_sys::Model;

fn new_model() -> Model {
    let mut m = Model::new();
    m.reset(4);
    m
}

/// One fast-path connection (index 0) for carrying test payloads: every
/// payload is sent as an in-order TCP segment (smoltcp's emitter), so it
/// comes out on `rx_pay` realigned, with its CRC32c.
struct Carrier {
    rx: Rx,
    conn: Conn,
}

impl Carrier {
    fn new(seed: u64) -> Carrier {
        let mut rx = Rx::new(seed);
        let conn = Conn {
            used: true,
            local_ip: 0x0A00_0001,
            peer_ip: 0x0A00_0002,
            local_port: 7174,
            peer_port: 40000,
            mode: 2,
            mpa: 0,
            rcv_nxt: 1000,
            rcv_wnd: 1 << 20,
            snd_una: 0,
            snd_nxt: 0,
        };
        rx.write_conn(0, &conn);
        Carrier { rx, conn }
    }

    /// The frame carrying `payload` at the connection's current `rcv_nxt`.
    fn frame(&self, payload: &[u8]) -> Vec<u8> {
        let c = &self.conn;
        let mut s = Seg::new(
            c.peer_ip.to_be_bytes(),
            c.local_ip.to_be_bytes(),
            c.peer_port,
            c.local_port,
        );
        s.seq = c.rcv_nxt;
        s.payload = payload.to_vec();
        s.build(0)
    }

    /// Sends `payload`; `fcs_bad` marks the frame bad at the MAC. Waits
    /// until rx_fifo has counted the frame and returns whether it was
    /// accepted (a good frame that was neither oversize nor refused).
    fn send(&mut self, payload: &[u8], fcs_bad: bool) -> bool {
        let f = self.frame(payload);
        let m = &self.rx.m;
        let before = m.get_cnt_rx_ok()
            + m.get_cnt_rx_bad_fcs()
            + m.get_cnt_rx_overflow()
            + m.get_cnt_rx_oversize();
        let ok_before = m.get_cnt_rx_ok();
        self.rx.send_fcs(&f, fcs_bad);
        loop {
            let m = &self.rx.m;
            let now = m.get_cnt_rx_ok()
                + m.get_cnt_rx_bad_fcs()
                + m.get_cnt_rx_overflow()
                + m.get_cnt_rx_oversize();
            if now > before {
                break;
            }
            self.rx.step();
        }
        let ok = self.rx.m.get_cnt_rx_ok() > ok_before;
        if ok {
            self.conn.rcv_nxt = self.conn.rcv_nxt.wrapping_add(payload.len() as u32);
        }
        ok
    }
}

/// 3000 random payloads of 0..200 bytes (partial last beats, the empty
/// segment) plus a few in oversize frames, 10 % with a bad FCS, random MAC
/// gaps, a sink that is always ready: exactly the payloads of the good
/// frames come out, each with its CRC32c (`crc32c` crate), and rx_fifo's
/// counters account for every frame.
#[test]
fn good_frames_delivered_with_crc32c() {
    let mut rng = Rng::new(0xC0FFEE);
    let mut c = Carrier::new(1);
    c.rx.gap_pct = 20;
    let mut good = Vec::new();
    let (mut bad, mut oversize) = (0u64, 0u64);
    for i in 0..3000 {
        let len = if i % 500 == 499 {
            // frame (payload + 54 octets of headers) > 9018 octets, rx_fifo's
            // default maximum (jumbo, MTU 9000): oversize
            9000 + rng.below(200)
        } else {
            rng.below(201)
        };
        let p = rng.bytes(len);
        let fcs_bad = rng.percent(10);
        let accepted = c.send(&p, fcs_bad);
        match (len >= 9000, fcs_bad) {
            (true, _) => oversize += 1,
            (false, true) => bad += 1,
            (false, false) => good.push(p),
        }
        assert_eq!(accepted, len < 9000 && !fcs_bad, "frame {i}");
    }
    c.rx.drain(4096);
    let got: Vec<&Vec<u8>> = c.rx.delivered.iter().map(|d| &d.payload).collect();
    assert_eq!(got.len(), good.len());
    for (i, (g, w)) in got.iter().zip(&good).enumerate() {
        assert_eq!(*g, w, "payload {i}");
    }
    let want: Vec<u32> = good.iter().map(|p| crc32c::crc32c(p)).collect();
    assert_eq!(c.rx.crcs, want);
    let m = &c.rx.m;
    assert_eq!(m.get_cnt_rx_ok(), good.len() as u64);
    assert_eq!(m.get_cnt_rx_bad_fcs(), bad);
    assert_eq!(m.get_cnt_rx_oversize(), oversize);
    assert_eq!(m.get_cnt_rx_overflow(), 0);
}

/// Every payload length 0..=64 once, back to back, no gaps: partial-beat
/// corner cases of the CRC's un-padding matrices.
#[test]
fn every_short_length_back_to_back() {
    let mut rng = Rng::new(5);
    let mut c = Carrier::new(5);
    let pays: Vec<Vec<u8>> = (0..=64).map(|l| rng.bytes(l)).collect();
    for p in &pays {
        let f = c.frame(p);
        c.rx.send(&f);
        c.conn.rcv_nxt = c.conn.rcv_nxt.wrapping_add(p.len() as u32);
    }
    c.rx.drain(2000);
    let want: Vec<u32> = pays.iter().map(|p| crc32c::crc32c(p)).collect();
    assert_eq!(c.rx.crcs, want);
}

/// A slow sink: rx_fifo fills and refuses whole frames; what is delivered
/// is exactly the accepted frames' payloads, in order, never a partial one,
/// and every frame sent is counted exactly once.
#[test]
fn overflow_refuses_whole_frames() {
    let mut rng = Rng::new(77);
    let mut c = Carrier::new(77);
    c.rx.ready_pct = 30;
    let mut accepted = Vec::new();
    for _ in 0..1500 {
        let len = 6 + rng.below(1400);
        let p = rng.bytes(len);
        let fcs_bad = rng.percent(5);
        // back to back: no waiting for the sink
        if c.send(&p, fcs_bad) {
            accepted.push(p);
        }
    }
    c.rx.ready_pct = 100;
    c.rx.drain(20_000);
    let got: Vec<&Vec<u8>> = c.rx.delivered.iter().map(|d| &d.payload).collect();
    assert_eq!(got.len(), accepted.len());
    for (i, (g, w)) in got.iter().zip(&accepted).enumerate() {
        assert_eq!(*g, w, "payload {i}");
    }
    let m = &c.rx.m;
    let counted = m.get_cnt_rx_ok()
        + m.get_cnt_rx_bad_fcs()
        + m.get_cnt_rx_overflow()
        + m.get_cnt_rx_oversize();
    assert_eq!(counted, 1500);
    assert_eq!(m.get_cnt_rx_ok(), accepted.len() as u64);
    assert!(m.get_cnt_rx_overflow() > 0);
    for (crc, p) in c.rx.crcs.iter().zip(&accepted) {
        assert_eq!(*crc, crc32c::crc32c(p));
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
