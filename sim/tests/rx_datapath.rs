//! RX datapath of `rnic_core` in Verilator: RDMA Write frames in on
//! `mac_rx_*`, octets out by DMA into host memory through the co-sim's DMA
//! server.
//!
//! The reference is independent of the RTL: messages are framed by
//! `rnic_wire::model::TxStream` (DDP/RDMAP segmentation, MPA markers and
//! CRC) and `rnic_wire::model::net::data_frame` (Ethernet/IPv4/TCP); the
//! expected host image is built with `TptEntry::page_of` (the ABI's page
//! translation); Terminate causes come from `rnic_wire::terminate`.

mod rx_rig;
use rx_rig::*;

/// Sizes 1 B … 64 KiB at random offsets into a multi-page region with a
/// shuffled, non-contiguous page list, for CRC and markers on and off.
#[test]
fn writes_land_byte_exact() {
    for (k, (crc, markers)) in [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .enumerate()
    {
        let mut rig = Rig::new(100 + k as u64, crc, markers, 1460);
        let va = 0x7f00_0000_0000 + rig.rng.below(PAGE);
        let len = 80 * 1024;
        let pd = rig.pd;
        let r = rig.region(5, 0x3C, pd, ACCESS_REMOTE_WRITE, va, len);
        let mut sizes = vec![1, 2, 7, 8, 9, 15, 16, 17, 100, 1000, 1425, 1426, 1427, 4096];
        sizes.extend([5000, 16384, 65536]);
        for _ in 0..6 {
            sizes.push(1 + rig.rng.below(20000) as usize);
        }
        let mut msgs = Vec::new();
        for &n in &sizes {
            let to = va + rig.rng.below(len - n as u64 + 1);
            let data = rig.rng.bytes(n);
            rig.write_ok(&r, to, &data);
            msgs.push((to, n));
            // run in batches so the MAC queue does not outrun the model
            rig.run(2_000_000);
        }
        rig.check_memory();
        assert!(rig.terms.is_empty(), "{:?}", rig.terms);
        check_placed(&rig.placed, r.stag, &msgs);
        assert_eq!(rig.core.get_cnt_mpa_span(), 0);
        assert_eq!(rig.core.get_cnt_mpa_err(), 0);
        assert_eq!(rig.core.get_cnt_mpa_pass(), rig.placed.len() as u64);
    }
}

/// One 1 MiB Write (CRC and markers on) into a 257-page region.
#[test]
fn one_mib_write() {
    let mut rig = Rig::new(77, true, true, 1460);
    let pd = rig.pd;
    let n = 1 << 20;
    let va = 0x5555_0000_0000 + 0x9ab;
    let r = rig.region(3, 0x81, pd, ACCESS_REMOTE_WRITE, va, n as u64);
    let data = rig.rng.bytes(n);
    rig.write_ok(&r, va, &data);
    rig.run(4_000_000);
    rig.check_memory();
    assert!(rig.terms.is_empty());
    check_placed(&rig.placed, r.stag, &[(va, n)]);
}

/// Every TPT violation: the right Terminate cause (RFC 5040 §7 / RFC 5041
/// §7.2 via `rnic_wire::terminate`) and zero octets written anywhere; a
/// good Write afterwards is still placed.
#[test]
fn tpt_violations_terminate_and_write_nothing() {
    let mut rig = Rig::new(7, true, false, 1460);
    let pd = rig.pd;
    let va = 0x1000_0000 + 0x123;
    let len = 5 * PAGE;
    let good = rig.region(9, 0x44, pd, ACCESS_REMOTE_WRITE, va, len);
    let ro = rig.region(10, 0x45, pd, ACCESS_LOCAL_WRITE, va, len);
    let other_pd = rig.region(11, 0x46, pd ^ 1, ACCESS_REMOTE_WRITE, va, len);
    // registered, then invalidated (RFC 5040 §5.2 Send with Invalidate, or a
    // local invalidate): the entry's state is Invalid
    let invalidated = rig.region(12, 0x47, pd, ACCESS_REMOTE_WRITE, va, len);
    let mut e = invalidated.entry;
    e.state = TptState::Invalid;
    rig.write_tpt(12, &e);
    let data = rig.rng.bytes(700);
    let cases: Vec<(u32, u64, TerminateCause)> = vec![
        // no entry at index 200
        (
            Stag::new(200, 0x44).unwrap().0,
            va,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag)),
        ),
        // wrong key
        (
            Stag::new(9, 0x99).unwrap().0,
            va,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag)),
        ),
        // invalidated STag (RFC 5041 §7.2: invalid STag)
        (
            invalidated.stag,
            va,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag)),
        ),
        // region of another protection domain
        (
            other_pd.stag,
            va,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::StagNotAssociated)),
        ),
        // no remote write right
        (
            ro.stag,
            va,
            TerminateCause::Rdmap(RdmapError::RemoteProtection(
                RemoteProtectionError::AccessRightsViolation,
            )),
        ),
        // before the region, past its end, straddling its end
        (
            good.stag,
            va - 1,
            TerminateCause::Ddp(DdpError::TaggedBuffer(
                TaggedBufferError::BaseOrBoundsViolation,
            )),
        ),
        (
            good.stag,
            va + len,
            TerminateCause::Ddp(DdpError::TaggedBuffer(
                TaggedBufferError::BaseOrBoundsViolation,
            )),
        ),
        (
            good.stag,
            va + len - 699,
            TerminateCause::Ddp(DdpError::TaggedBuffer(
                TaggedBufferError::BaseOrBoundsViolation,
            )),
        ),
    ];
    for (stag, to, cause) in &cases {
        let f = rig.write_frames(*stag, *to, &data);
        assert_eq!(f.len(), 1);
        rig.send(f);
        rig.run(200_000);
        assert_eq!(rig.terms.last(), Some(&rig.term(*cause)), "{cause:?}");
        assert!(rig.placed.is_empty());
    }
    assert_eq!(rig.terms.len(), cases.len());
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );
    // the stream goes on: a good write is placed exactly
    let to = va + len - 700;
    rig.write_ok(&good, to, &data);
    rig.run(200_000);
    rig.check_memory();
    assert_eq!(rig.placed.len(), 1);
    assert_eq!(rig.core.get_cnt_ddp_term(), cases.len() as u64);
}

/// A corrupted FPDU: the MPA CRC Terminate (RFC 5044 §8: layer LLP, MPA
/// error, code 2) and no octet of it placed; FPDUs of the same Write before
/// it are placed, nothing after it (the connection is dead).
#[test]
fn corrupted_crc_terminates_and_places_nothing() {
    // a single-segment Write with one bit flipped: nothing at all is written
    let mut rig = Rig::new(21, true, false, 1460);
    let pd = rig.pd;
    let va = 0x4000_0000;
    let r = rig.region(1, 1, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(1000);
    let segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to: va + 10,
            data: &data,
        })
        .unwrap();
    assert_eq!(segs.len(), 1);
    let mut p = segs[0].payload.clone();
    p[500] ^= 0x10;
    let f = data_frame(&rig.peer, &rig.local, segs[0].seq, 1000, &p);
    rig.send(vec![f]);
    rig.run(200_000);
    assert_eq!(
        rig.terms,
        vec![rig.term(TerminateCause::Mpa(MpaError::CrcError))]
    );
    assert!(rig.placed.is_empty());
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );
    assert_eq!(rig.core.get_cnt_mpa_err(), 1);

    // a 3-segment Write with the second FPDU corrupted
    let mut rig = Rig::new(22, true, true, 1460);
    let r = rig.region(1, 1, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(4000);
    let to = va + 77;
    let segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to,
            data: &data,
        })
        .unwrap();
    assert_eq!(segs.len(), 3);
    let mut frames = Vec::new();
    for (i, s) in segs.iter().enumerate() {
        let mut p = s.payload.clone();
        if i == 1 {
            p[100] ^= 1;
        }
        frames.push(data_frame(&rig.peer, &rig.local, s.seq, 1000, &p));
    }
    rig.send(frames);
    rig.run(200_000);
    assert_eq!(
        rig.terms,
        vec![rig.term(TerminateCause::Mpa(MpaError::CrcError))]
    );
    assert_eq!(rig.placed.len(), 1, "only the first FPDU is placed");
    let n = rig.placed[0].2 as usize;
    for (i, &b) in data[..n].iter().enumerate() {
        let a = r.addr(to + i as u64);
        rig.expect.get_mut(&(a & !(PAGE - 1))).unwrap()[(a % PAGE) as usize] = b;
    }
    rig.check_memory();
}

/// Throughput and latency of 64 KiB Writes at MTU 1500 (one 1460-octet
/// FPDU per 1514-octet frame, frames back to back), printed for
/// docs/rtl.md: octets placed per clock, clocks from the last MAC beat to
/// the last DMA data beat, and Verilator clocks per second.
#[test]
fn throughput_64k_mtu1500() {
    let mut rig = Rig::new(5, true, false, 1460);
    let pd = rig.pd;
    let va = 0x10_0000;
    let n = 64 * 1024;
    let r = rig.region(2, 2, pd, ACCESS_REMOTE_WRITE, va, 4 * n as u64);
    let mut total_clk = 0;
    let mut lat = Vec::new();
    let t0 = Instant::now();
    let c0 = rig.core.cycle();
    let reps = 4;
    for i in 0..reps {
        let data = rig.rng.bytes(n);
        rig.first_mac = None;
        rig.write_ok(&r, va + (i * n) as u64, &data);
        rig.run(2_000_000);
        let first = rig.first_mac.unwrap();
        total_clk += rig.last_dma - first + 1;
        lat.push(rig.last_dma - rig.last_mac);
    }
    let secs = t0.elapsed().as_secs_f64();
    let cyc = rig.core.cycle() - c0;
    rig.check_memory();
    let per_clk = (reps * n) as f64 / total_clk as f64;
    let frames = rig.mac.frames_sent;
    println!(
        "64 KiB Write, MTU 1500: {per_clk:.2} octets/clock placed ({frames} frames), \
         last MAC beat -> last DMA beat {lat:?} clocks, Verilator {:.0} clocks/s",
        cyc as f64 / secs
    );
    // the model alone (no harness), idle inputs, clock loop in C++
    let t1 = Instant::now();
    rig.core.ticks(200_000);
    println!(
        "model alone, idle: {:.0} clocks/s",
        200_000.0 / t1.elapsed().as_secs_f64()
    );
    assert!(per_clk > 6.0, "{per_clk}");
}

/// Debugging aid: one Write of `RXDP_N` octets (default 700) with a VCD of
/// the whole core in /tmp/rxdp.vcd (`RXDP_DEBUG=1` also prints counters).
#[test]
#[ignore]
fn debug_trace() {
    let mut rig = Rig::new(7, true, false, 1460);
    rig.core
        .trace_vcd(std::path::Path::new("/tmp/rxdp.vcd"))
        .unwrap();
    let pd = rig.pd;
    let va = 0x1000_0000 + 0x123;
    let good = rig.region(9, 0x44, pd, ACCESS_REMOTE_WRITE, va, 5 * PAGE);
    let n: usize = std::env::var("RXDP_N")
        .map(|v| v.parse().unwrap())
        .unwrap_or(700);
    let data = rig.rng.bytes(n);
    rig.write_ok(&good, va, &data);
    rig.run(20_000);
}

/// A marker whose FPDUPTR is wrong (CRC off, so only the marker check can
/// see it): MPA Terminate code 3 (RFC 5044 §8, "Marker and ULPDU Length
/// field disagree") and nothing placed. Then a QP not in RTS: its segments
/// are dropped with no Terminate and no write (`cnt_ddp_drop_state`).
#[test]
fn marker_error_and_qp_state() {
    let mut rig = Rig::new(31, false, true, 1460);
    let pd = rig.pd;
    let va = 0x6000_0000;
    let r = rig.region(4, 4, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(1200);
    let segs = rig
        .tx
        .send(&Message::Write {
            stag: r.stag,
            to: va,
            data: &data,
        })
        .unwrap();
    assert_eq!(segs.len(), 1);
    let s = &segs[0];
    // first marker in the segment: at stream offset ≡ 0 (mod 512) from SeqStart
    let seq_start = rig.tx.settings().seq_start;
    let m = (512 - s.seq.wrapping_sub(seq_start) % 512) % 512;
    assert!(
        (m as usize) + 4 <= s.payload.len(),
        "segment holds a marker"
    );
    let mut p = s.payload.clone();
    p[m as usize + 3] ^= 0x04; // FPDUPTR low octet (RFC 5044 §4.3)
    let f = data_frame(&rig.peer, &rig.local, s.seq, 1000, &p);
    rig.send(vec![f]);
    rig.run(200_000);
    assert_eq!(
        rig.terms,
        vec![rig.term(TerminateCause::Mpa(MpaError::MarkerMismatch))]
    );
    assert!(rig.placed.is_empty());
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );

    // a fresh connection whose QP is in Idle
    let mut rig = Rig::new(32, true, false, 1460);
    rig.core.set_qp_wr_valid(1);
    rig.core.set_qp_wr_idx(CONN);
    rig.core.set_qp_wr_qpn(rig.qpn as u64);
    rig.core.set_qp_wr_state(QpState::Idle as u64);
    rig.core.set_qp_wr_pd(pd as u64);
    rig.core.tick();
    rig.core.set_qp_wr_valid(0);
    let r = rig.region(4, 4, pd, ACCESS_REMOTE_WRITE, va, 4 * PAGE);
    let data = rig.rng.bytes(3000);
    let frames = rig.write_frames(r.stag, va, &data);
    rig.send(frames);
    rig.run(200_000);
    assert!(rig.terms.is_empty());
    assert!(rig.placed.is_empty());
    assert_eq!(rig.core.get_cnt_ddp_drop_state(), 3);
    assert!(
        rig.mem.nonzero_outside(&[]).is_empty(),
        "zero octets written"
    );
}

/// Line rate, sustained: a 4 MiB Write in 2,913 back-to-back 1514-octet
/// frames (10GbE: 192.25 clocks each). The receive path keeps up, so
/// `rx_fifo` never holds more than the frame arriving and the one leaving
/// (store-and-forward), however long the burst. A path slower than the
/// wire by a clock per frame fills its 2,048 beats after about 2 MiB
/// (`Rig::run` fails on any overflow).
#[test]
fn four_mib_write_at_line_rate_keeps_rx_fifo_at_two_frames() {
    let mut rig = Rig::new(78, true, false, 1460);
    let pd = rig.pd;
    let n = 4 << 20;
    let va = 0x4444_0000_0000;
    let r = rig.region(3, 0x82, pd, ACCESS_REMOTE_WRITE, va, n as u64);
    let data = rig.rng.bytes(n);
    rig.write_ok(&r, va, &data);
    rig.run(40_000_000);
    rig.check_memory();
    assert!(rig.terms.is_empty());
    let frames = rig.mac.frames_sent;
    let hwm = rig.core.get_rx_fifo_hwm();
    println!(
        "4 MiB Write at line rate: {frames} frames, rx_fifo high-water mark {hwm} beats, \
         FPDU buffer {} beats",
        rig.max_buf_beats
    );
    assert!(hwm <= 2 * 190, "rx_fifo backlog {hwm} beats");
}
