//! The board places an incoming RDMA Write: the RX ULP path (MPA
//! deframing, DDP/RDMAP, placement by DMA through the bridge into host
//! memory) of the Verilated board top, with the real firmware on the host.
//!
//! ```text
//!  worker thread: UdpBus ─┬─ firmware thread (rnic_fw over the firmware window)
//!                         └─ driver: Context, CQ, PD, MR (remote write), QP, connect
//!        ──UDP──► test thread: Pump ──► PHY 1 pins ──► rnic_versa5g
//!                 port 0 peer (PHY 0 pins): ARP, SYN-ACK, MPA Reply,
//!                 RDMA Write FPDUs; checks the board's ACKs
//! ```
//!
//! The scripted peer completes the connection the firmware starts (SYN-ACK,
//! the ACK of the MPA Request and an MPA Reply, revision 1 with CRC as the
//! firmware asked, built with `rnic_wire::mpa`), the driver sees
//! `Established` and the QP in RTS; the peer then sends RDMA Write FPDUs
//! (`rnic_wire` RDMAP/DDP/MPA emitters with CRC, smoltcp TCP/IPv4) into the
//! driver's MR at offsets in it, one of them across a 4 KiB page. Checked:
//! the board ACKs every FPDU (a TCP ACK from port 0 covering them), the
//! written octets land byte-exact in the MR's host memory (served by the
//! `UdpBus` DMA) and every octet around them — in the region and in the
//! buffer outside it — is unchanged. Then a Write with an STag that names
//! no region: a Terminate comes back on the stream (RFC 5040 §4.8, DDP
//! Tagged Buffer "Invalid STag", RFC 5041 §7.2, through
//! `rnic_wire::terminate`'s tables), the driver gets `QpError`, and nothing
//! is placed.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rnic_board_host::SharedBus;
use rnic_driver::{AccessFlags, Context, DmaMem, EventKind, QpState};
use rnic_fw::terminate::TERMINATE_MSN;
use rnic_wire::ddp::{DdpSegment, TAGGED_HEADER_LEN};
use rnic_wire::mpa::{
    Fpdu, FpduRepr, MpaFrameKind, MpaKey, MpaRequestReply, MpaRequestReplyRepr, Revision,
    MPA_REQ_REP_HEADER_LEN,
};
use rnic_wire::rdmap::RdmapRepr;
use rnic_wire::terminate::{DdpError, EchoedDdpHeader, TaggedBufferError, TerminateCause};
use smoltcp::wire::TcpControl;
use verilator_board::{Rig, Sig};

mod bridge_rig;
use bridge_rig::fw::{configure_port0, connect_bus, connect_params, driver_options, FwThread};
use bridge_rig::port0::{data_segment, Peer, PEER_ISS};
use bridge_rig::Pump;

/// The DMA buffer, and the MR in it: from `MR_OFF`, `MR_LEN` octets.
const BUF_LEN: usize = 3 * 4096;
const MR_OFF: usize = 0x100;
const MR_LEN: usize = 2 * 4096;
/// The RDMA Writes: (offset in the MR, length). The third crosses the
/// buffer's first 4 KiB page boundary; the last one ends at the MR's end.
const WRITES: [(usize, usize); 4] = [
    (0x10, 64),
    (1000, 333),
    (4096 - MR_OFF - 50, 200),
    (MR_LEN - 1201, 1201),
];

/// The buffer's contents before the Writes.
fn background(i: usize) -> u8 {
    (i as u8).wrapping_mul(13) ^ 0x5a
}

/// Write `k`'s payload.
fn payload(k: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(31 * k as u8 + 1))
        .collect()
}

/// The buffer as it must be after the Writes.
fn expected() -> Vec<u8> {
    let mut b: Vec<u8> = (0..BUF_LEN).map(background).collect();
    for (k, &(off, len)) in WRITES.iter().enumerate() {
        b[MR_OFF + off..MR_OFF + off + len].copy_from_slice(&payload(k, len));
    }
    b
}

/// An RDMA Write FPDU with CRC (RFC 5040 §4.3, RFC 5041 §4.2, RFC 5044 §4).
fn write_fpdu(stag: u32, to: u64, data: &[u8]) -> Vec<u8> {
    let m = RdmapRepr::RdmaWrite {
        last: true,
        stag,
        to,
        payload: data,
    };
    let mut ulpdu = vec![0u8; m.buffer_len()];
    m.emit(&mut ulpdu).unwrap();
    let repr = FpduRepr { ulpdu: &ulpdu };
    let mut buf = vec![0u8; repr.buffer_len()];
    repr.emit(&mut Fpdu::new_unchecked(&mut buf[..]), true)
        .unwrap();
    buf
}

/// The MPA Reply to a revision 1 Request with CRC (RFC 5044 §7.1).
fn mpa_reply() -> Vec<u8> {
    let r = MpaRequestReplyRepr {
        kind: MpaFrameKind::Reply { rejected: false },
        markers: false,
        crc: true,
        revision: Revision::V1,
        private_data: &[],
    };
    let mut b = vec![0u8; r.buffer_len()];
    r.emit(&mut MpaRequestReply::new_unchecked(&mut b[..]))
        .unwrap();
    b
}

/// Worker → test thread.
enum ToPeer {
    /// The QP is in RTS: the MR's STag and the TO of its first octet.
    Established { stag: u32, va: u64 },
    /// The Writes are in host memory and the QP is still in RTS.
    Placed,
}

/// Test thread → worker.
enum ToWorker {
    /// The board ACKed the good Writes.
    WritesAcked,
    /// A Terminate for the bad Write came back on the stream.
    Terminated,
}

fn worker(board: std::net::SocketAddr, tx: mpsc::Sender<ToPeer>, rx: mpsc::Receiver<ToWorker>) {
    let bus = connect_bus(board);
    configure_port0(&bus);
    let fw = FwThread::spawn(bus.clone());
    let ctx = Context::open_with(SharedBus(bus.clone()), driver_options())
        .expect("Context::open: STATUS_READY from the host-side firmware");
    let cq = ctx.create_cq(16).expect("CreateCq");
    let pd = ctx.alloc_pd().expect("PD");
    let mem = ctx.alloc_dma(BUF_LEN).expect("DMA buffer");
    let init: Vec<u8> = (0..BUF_LEN).map(background).collect();
    mem.write(0, &init).unwrap();
    let mr = pd
        .reg_mr(
            &mem,
            MR_OFF,
            MR_LEN,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .expect("RegMr");
    let qp = pd.create_qp(&cq, &cq, 4, 4).expect("CreateQp");

    let t0 = Instant::now();
    qp.connect(&connect_params(), &[]).expect("Connect");
    let ev = ctx
        .get_cm_event(Duration::from_secs(300))
        .expect("a connection event after the MPA Reply");
    assert_eq!(ev.kind, EventKind::Established, "{ev:?}");
    assert_eq!(ev.handle, qp.qpn());
    assert_eq!((ev.mpa_revision, ev.crc, ev.markers), (1, true, false));
    assert_eq!(qp.query().expect("QueryQp"), QpState::Rts);
    let wall_connect = t0.elapsed();
    eprintln!("board_rdma: Established, QP in RTS after {wall_connect:?}");
    tx.send(ToPeer::Established {
        stag: mr.rkey(),
        va: mr.va(),
    })
    .unwrap();

    // The board's ACK comes from its TCP receive state; the DMA writes
    // through the bridge may still be on their way: give them time.
    let t1 = Instant::now();
    match rx.recv_timeout(Duration::from_secs(300)) {
        Ok(ToWorker::WritesAcked) => {}
        _ => panic!("the board did not ACK the RDMA Writes"),
    }
    let want = expected();
    let mut got = vec![0u8; BUF_LEN];
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        mem.read(0, &mut got).unwrap();
        if got == want || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let wall_placed = t1.elapsed();
    let diff: Vec<usize> = (0..BUF_LEN).filter(|&i| got[i] != want[i]).collect();
    assert!(
        diff.is_empty(),
        "{} octets differ from what the Writes should leave (first at buffer offset {:#x}: \
         {:#04x}, want {:#04x}; MR at {MR_OFF:#x}; untouched: {})",
        diff.len(),
        diff[0],
        got[diff[0]],
        want[diff[0]],
        diff.iter().all(|&i| got[i] == init[i]),
    );
    eprintln!("board_rdma: Writes placed byte-exact {wall_placed:?} after they were sent");
    assert_eq!(qp.query().expect("QueryQp"), QpState::Rts);
    tx.send(ToPeer::Placed).unwrap();

    // The bad Write: a Terminate, QpError, and nothing placed.
    match rx.recv_timeout(Duration::from_secs(300)) {
        Ok(ToWorker::Terminated) => {}
        _ => panic!("no Terminate for the Write with a bad STag"),
    }
    let ev = ctx
        .get_cm_event(Duration::from_secs(120))
        .expect("an event after the Terminate");
    assert_eq!(ev.kind, EventKind::QpError, "{ev:?}");
    assert_eq!(ev.handle, qp.qpn());
    // Any stray DMA write from the bad Write would have gone out before
    // its Terminate; read once more.
    std::thread::sleep(Duration::from_millis(200));
    mem.read(0, &mut got).unwrap();
    assert!(got == want, "the Write with a bad STag changed host memory");

    drop(qp);
    drop(mr);
    drop(cq);
    drop(ctx);
    fw.stop();
    let errors = bus.take_errors();
    assert!(errors.is_empty(), "UdpBus errors: {errors:?}");
    eprintln!("board_rdma: worker done (connect {wall_connect:?}, placement {wall_placed:?})");
}

/// The ULPDUs of the complete FPDUs in `stream` (the board's octets after
/// its MPA Request), CRC checked.
fn board_fpdus(mut stream: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Ok(f) = Fpdu::new_checked(stream) {
        let len = f.total_len();
        let r = FpduRepr::parse(&f, true)
            .unwrap_or_else(|e| panic!("FPDU from the board: {e:?}: {stream:02x?}"));
        out.push(r.ulpdu.to_vec());
        stream = &stream[len..];
    }
    out
}

/// The board's receive and bridge counters.
fn counters(rig: &Rig) -> String {
    let c = |s| rig.board.get(s);
    format!(
        "port 0 rx ok {} bad FCS {} overflow {} oversize {}; bridge rx ok {} drop {} NAK {} \
         dup {} completion drop {} read retry {} trunc {} tx {}",
        c(Sig::CoreCntRxOk),
        c(Sig::CoreCntRxBadFcs),
        c(Sig::CoreCntRxOverflow),
        c(Sig::CoreCntRxOversize),
        c(Sig::BridgeCntRxOk),
        c(Sig::BridgeCntRxDrop),
        c(Sig::BridgeCntNak),
        c(Sig::BridgeCntDup),
        c(Sig::BridgeCntCplDrop),
        c(Sig::BridgeCntRdRetry),
        c(Sig::BridgeCntTrunc),
        c(Sig::BridgeCntTxFrames),
    )
}

#[test]
fn board_places_an_incoming_rdma_write_and_terminates_a_bad_stag() {
    let t_start = Instant::now();
    let mut rig = Rig::new(0, [50, 100]);
    rig.trace_from_env("board_rdma");
    rig.phy[0].idle_stop = Some(256);
    rig.phy[1].idle_stop = Some(256);
    let mut pump = Pump::new();
    let board = pump.addr();
    let (to_peer, from_worker) = mpsc::channel();
    let (to_worker, from_peer) = mpsc::channel();
    let w = std::thread::spawn(move || worker(board, to_peer, from_peer));

    const BUDGET: u64 = 20_000_000;
    let sim_start = rig.core_cycles;
    // ARP and SYN answered, the firmware's (port, ISS); its stream from
    // ISS + 1.
    let mut peer = Peer::default();
    let mut stream: Vec<u8> = Vec::new();
    let mut req_len: Option<usize> = None;
    // The peer's next sequence number, relative to PEER_ISS + 1, and the
    // highest ACK from the board, relative to the same.
    let mut peer_nxt = 0u32;
    let mut board_ack = 0u32;
    // Where the good Writes end and where the bad one ends.
    let mut writes_end: Option<u32> = None;
    let mut bad_end: Option<u32> = None;
    let mut bad_stag = 0u32;
    let mut bad_fpdu: Vec<u8> = Vec::new();
    let (mut acked, mut terminated, mut rst_early) = (false, false, false);
    let mut acks_at: Option<u64> = None;
    let mut sent_at = 0u64;
    loop {
        pump.run(&mut rig);
        while let Some(tcp) = peer.next_segment(&mut rig) {
            if tcp.control == TcpControl::Rst {
                // DestroyQp at the end aborts the connection.
                rst_early |= !terminated;
                continue;
            }
            let a = tcp.ack.expect("every segment after the SYN has ACK");
            let rel = a.wrapping_sub(PEER_ISS.wrapping_add(1));
            assert!(
                rel <= peer_nxt,
                "the board ACKs {rel} octets, the peer sent {peer_nxt}"
            );
            board_ack = board_ack.max(rel);
            tcp.extend_stream(&mut stream);
            if req_len.is_none() && stream.len() >= MPA_REQ_REP_HEADER_LEN {
                let m = MpaRequestReply::new_checked(&stream[..])
                    .unwrap_or_else(|e| panic!("MPA Request: {e:?}: {stream:02x?}"));
                assert_eq!(m.key_kind(), Ok(MpaKey::Request));
                assert_eq!(m.revision(), 1, "MPA revision asked for");
                assert!(m.crc() && !m.markers() && !m.reject());
                assert_eq!(m.pd_len(), 0, "no private data");
                req_len = Some(m.frame_len());
                // ACK the Request with the Reply (RFC 5044 §7.1).
                let r = mpa_reply();
                let fw_nxt = tcp.fw_iss.wrapping_add(1).wrapping_add(stream.len() as u32);
                rig.phy[0].send(&data_segment(
                    tcp.fw_port,
                    PEER_ISS.wrapping_add(1),
                    fw_nxt,
                    &r,
                ));
                peer_nxt = r.len() as u32;
            }
            // In RDMA mode the board sends FPDUs only for the Terminate.
            if let (Some(n), Some(end)) = (req_len, bad_end) {
                let ulpdus = board_fpdus(&stream[n..]);
                if let Some(u) = ulpdus.first() {
                    let seg = DdpSegment::new_checked(&u[..])
                        .unwrap_or_else(|e| panic!("DDP from the board: {e:?}"));
                    let m = RdmapRepr::parse(&seg)
                        .unwrap_or_else(|e| panic!("RDMAP from the board: {e:?}"));
                    let RdmapRepr::Terminate { msn, terminate } = m else {
                        panic!("not a Terminate from the board: {m:?}");
                    };
                    assert_eq!(msn, TERMINATE_MSN, "the Terminate's MSN on QN 2");
                    let want: TerminateCause =
                        TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag));
                    assert_eq!(terminate.cause, want, "{terminate:?}");
                    // RFC 5040 §4.8: the DDP header of the offending
                    // segment comes back.
                    let d = terminate.ddp.expect("the echoed DDP header");
                    assert_eq!(
                        d.header,
                        EchoedDdpHeader::from_bytes(&bad_fpdu[2..2 + TAGGED_HEADER_LEN]).unwrap(),
                        "{terminate:?}"
                    );
                    assert_eq!(ulpdus.len(), 1, "one Terminate");
                    if !terminated {
                        terminated = true;
                        eprintln!(
                            "board_rdma: Terminate ({} octets of stream), ACK {} of {end}",
                            stream.len() - n,
                            board_ack
                        );
                        to_worker.send(ToWorker::Terminated).unwrap();
                    }
                }
            } else if let Some(n) = req_len {
                assert_eq!(
                    stream.len(),
                    n,
                    "the board sent after its MPA Request before any error: {:02x?}",
                    &stream[n..]
                );
            }
        }
        let msg = from_worker.try_recv().ok();
        if let Some(ToPeer::Established { stag, va }) = msg {
            let (port, iss) = peer.fw_tcp.expect("Established before the SYN");
            let fw_nxt = iss
                .wrapping_add(1)
                .wrapping_add(req_len.expect("an MPA Request") as u32);
            for (k, &(off, len)) in WRITES.iter().enumerate() {
                let f = write_fpdu(stag, va + off as u64, &payload(k, len));
                rig.phy[0].send(&data_segment(
                    port,
                    PEER_ISS.wrapping_add(1).wrapping_add(peer_nxt),
                    fw_nxt,
                    &f,
                ));
                peer_nxt += f.len() as u32;
            }
            writes_end = Some(peer_nxt);
            sent_at = rig.core_cycles;
            // The bad STag: another index, the same key.
            bad_stag = stag.wrapping_add(0x100);
        }
        if let Some(end) = writes_end {
            if !acked && board_ack >= end {
                acked = true;
                acks_at = Some(rig.core_cycles);
                to_worker.send(ToWorker::WritesAcked).unwrap();
            }
        }
        if let Some(ToPeer::Placed) = msg {
            // Now the Write with a bad STag (to the same offset as
            // the first good one), once the worker saw the good ones
            // placed.
            let (port, iss) = peer.fw_tcp.unwrap();
            let fw_nxt = iss.wrapping_add(1).wrapping_add(stream.len() as u32);
            bad_fpdu = write_fpdu(bad_stag, 0x10, &[0xee; 64]);
            rig.phy[0].send(&data_segment(
                port,
                PEER_ISS.wrapping_add(1).wrapping_add(peer_nxt),
                fw_nxt,
                &bad_fpdu,
            ));
            peer_nxt += bad_fpdu.len() as u32;
            bad_end = Some(peer_nxt);
        }
        if w.is_finished() {
            break;
        }
        rig.run_core_cycles(16);
        assert!(
            rig.core_cycles - sim_start < BUDGET,
            "no end within {BUDGET} board clocks; {} ARP requests, {} SYNs, {} other \
             segments on port 0; MPA Request {req_len:?}; peer sent {peer_nxt}, board ACKed \
             {board_ack}; Writes end at {writes_end:?}; {}",
            peer.arp_requests,
            peer.syns,
            peer.other_segments,
            counters(&rig),
        );
    }
    let counters = counters(&rig);
    eprintln!("board_rdma: {counters}");
    if let Err(p) = w.join() {
        std::panic::resume_unwind(p);
    }
    assert!(!rst_early, "RST from the board before the end");
    assert!(acked && terminated);
    assert_eq!(rig.board.get(Sig::BridgeCntNak), 0);
    assert_eq!(rig.board.get(Sig::BridgeCntRxDrop), 0);
    let cycles = rig.core_cycles - sim_start;
    let secs = t_start.elapsed().as_secs_f64();
    eprintln!(
        "board_rdma: {cycles} board clocks in {secs:.1} s ({:.0} clocks/s); {} ARP, {} SYN, {} \
         other TCP segments from port 0; {} Writes ({} octets of stream) ACKed {} board clocks \
         after they were sent",
        cycles as f64 / secs,
        peer.arp_requests,
        peer.syns,
        peer.other_segments,
        WRITES.len(),
        writes_end.unwrap_or(0) - mpa_reply().len() as u32,
        acks_at.unwrap_or(0) - sent_at,
    );
}
