//! QP error flush and the requester's remote-access error completion,
//! through the driver only, over two co-simulated nodes (Verilated
//! `rnic_core` + firmware + `rnic_driver` on `SimBus`; B listens, A
//! connects through the CM). docs/driver.md "QP error flush".
//!
//! References, independent of the RTL and the driver's flush code: the
//! work requests the test posted (ids, signaled or not, posting order) and
//! the verbs rules (every WR completes exactly once or is implied by a
//! later signaled success; after the first flushed WR all later ones are
//! flushed; posting order per queue); `rnic_wire::terminate` for the
//! Terminate causes and the Terminate FPDU injected into A
//! (`rnic_wire::model::TxStream` + `data_frame`, smoltcp), with sequence
//! numbers from B's connection context (`rnic_wire::abi::context`).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use rnic_driver::{
    AccessFlags, Bus, Context, Cq, Error, EventKind, MpaOptions, Mr, Qp, QpState, RecvWr,
    RemoteAddr, SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_fw::hal::Hal;
use rnic_sim::link::LinkConfig;
use rnic_sim::node::World;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair, GUARD};
use rnic_sim::sim_bus::{SimBus, SimDma};
use rnic_wire::abi::context::{ConnContext, ConnMode, TableId};
use rnic_wire::abi::cqe::encode_term_cause;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use rnic_wire::model::net::{data_frame, Endpoint};
use rnic_wire::model::{Message, MpaSettings, TxStream};
use rnic_wire::rdmap::ReadRequestRepr;
use rnic_wire::terminate::{RdmapError, TerminateCause, TerminateRepr};

/// Region size on each side.
const REGION: usize = 8192;
const MPA: MpaOptions = MpaOptions {
    revision: 2,
    crc: true,
    markers: false,
};

fn acc(bits: u8) -> AccessFlags {
    AccessFlags::from_bits(bits).unwrap()
}

/// Polls `cq` while the simulation runs (`wait_interrupt` advances it)
/// until it has returned nothing for `quiet` polls in a row.
fn drain(ctx: &Context<SimBus>, cq: &Cq<'_, SimBus>, quiet: u32) -> Vec<WorkCompletion> {
    let mut all = Vec::new();
    let mut wc = [WorkCompletion::default(); 8];
    let mut idle = 0;
    while idle < quiet {
        let n = cq.poll(&mut wc).unwrap();
        all.extend_from_slice(&wc[..n]);
        idle = if n == 0 { idle + 1 } else { 0 };
        ctx.bus().wait_interrupt(Duration::from_micros(2));
    }
    all
}

/// The send queue's completions against what was posted (`posted` = (wr_id,
/// signaled) in posting order): ids strictly increasing; successes first,
/// then only `WrFlushError`; every signaled WR exactly once; an unsignaled
/// WR appears only if flushed, and every WR after the last success does.
/// Returns (successes, flushed).
fn check_send_queue(posted: &[(u64, bool)], got: &[WorkCompletion]) -> (usize, usize) {
    let ids: Vec<u64> = got.iter().map(|w| w.wr_id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "posting order, no duplicate: {ids:?}"
    );
    let first_flush = got
        .iter()
        .position(|w| w.status == WcStatus::WrFlushError)
        .unwrap_or(got.len());
    assert!(
        got[..first_flush]
            .iter()
            .all(|w| w.status == WcStatus::Success),
        "{got:?}"
    );
    assert!(
        got[first_flush..]
            .iter()
            .all(|w| w.status == WcStatus::WrFlushError),
        "nothing succeeds after a flush: {got:?}"
    );
    let last_ok = got[..first_flush].last().map(|w| w.wr_id);
    for &(id, signaled) in posted {
        let n = ids.iter().filter(|&&i| i == id).count();
        let after_last_ok = last_ok.is_none_or(|l| id > l);
        let want = if signaled || after_last_ok { 1 } else { 0 };
        assert_eq!(
            n, want,
            "WR {id} (signaled {signaled}) completions: {got:?}"
        );
    }
    (first_flush, got.len() - first_flush)
}

/// (1) A connected QP with receives B never answers and a burst of Writes
/// (signaled and not) is moved to Error right after posting: the device's
/// CQEs come first, then every other WR flushed in order, exactly once; a
/// second connected QP sharing A's CQ is not touched and keeps working;
/// posting to the QP in Error is a typed error (`WrongState`), not a
/// flush completion.
#[test]
fn modify_error_flushes_every_outstanding_wr() {
    flush_scenario("driver_flush", false);
}

/// The device side of (1): after ModifyQp(Error) A's RTL starts no more
/// RDMA segments of the QP and writes no CQE for it (segments already
/// issued to the framer still leave, after the RST).
#[test]
fn modify_error_stops_the_device_tx() {
    flush_scenario("driver_flush_strict", true);
}

/// RDMA segments (MPA-framed, no markers: octet 2 is the DDP control with
/// DV = 1, RFC 5041 §4.2) A sent in `[from, ..)` after its last RST.
fn a_rdma_after_rst(world: &Rc<RefCell<World>>, pcap: &std::path::Path, from: u64) -> usize {
    world
        .borrow_mut()
        .link
        .as_mut()
        .unwrap()
        .flush_pcap()
        .unwrap();
    let t0 = rnic_sim::link::cycle_time(from);
    let f = std::fs::File::open(pcap).unwrap();
    let mut r = pcap_file::pcap::PcapReader::new(f).unwrap();
    let (mut rst_seen, mut after) = (false, 0);
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let Ok(seg) = rnic_wire::model::parse_frame(&p.data) else {
            continue;
        };
        if p.timestamp < t0 || seg.src_mac != [2, 0, 0, 0, 0, 1] {
            continue;
        }
        rst_seen |= seg.rst;
        if rst_seen && seg.payload.len() > 2 && seg.payload[2] & 0x03 == 1 {
            after += 1;
        }
    }
    after
}

fn flush_scenario(name: &str, strict_device_stop: bool) {
    let pcap = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.pcap"));
    let world = world_pair(LinkConfig::default(), Some(&pcap)).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let cq_a = a.create_cq(64).unwrap();
    let cq_b = b.create_cq(64).unwrap();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 32, 8).unwrap();
    let qp_a2 = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 8, 8).unwrap();
    let qp_b2 = pd_b.create_qp(&cq_b, &cq_b, 8, 8).unwrap();
    connect_pair(&a, &qp_a, &b, &qp_b, MPA, b"A", b"B").unwrap();
    connect_pair(&a, &qp_a2, &b, &qp_b2, MPA, b"A2", b"B2").unwrap();
    let buf_a = a.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_b = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_b = pd_b
        .reg_mr(
            &buf_b,
            GUARD,
            REGION,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let c0 = world.borrow().cycle();

    // Receives B never sends to; one on the other QP too.
    let rs = [mr_a.sge(0, 256).unwrap()];
    let recvs: Vec<RecvWr> = (100..106)
        .map(|wr_id| RecvWr { wr_id, sges: &rs })
        .collect();
    qp_a.post_recv(&recvs).unwrap();
    qp_a2
        .post_recv(&[RecvWr {
            wr_id: 900,
            sges: &rs,
        }])
        .unwrap();
    // 24 Writes of 8 KiB, every third signaled: more than the link moves
    // while the ModifyQp command runs.
    let ws = [mr_a.sge(0, REGION as u32).unwrap()];
    let target = RemoteAddr {
        addr: mr_b.va(),
        rkey: mr_b.rkey(),
    };
    let posted: Vec<(u64, bool)> = (0..24).map(|i| (i, i % 3 == 1)).collect();
    let wrs: Vec<SendWr> = posted
        .iter()
        .map(|&(wr_id, signaled)| SendWr {
            wr_id,
            op: SendOp::RdmaWrite(target),
            sges: &ws,
            signaled,
            solicited: false,
            fence: false,
            inline_data: None,
        })
        .collect();
    qp_a.post_send(&wrs).unwrap();
    // Part of the burst goes out (and completes) before the stop.
    run_until(&world, 8_000, |_| false).ok();
    let c1 = world.borrow().cycle();
    let tx0 = world.borrow().nodes[0].hw.borrow().mac_tx_frames;
    let segs = |w: &World| w.nodes[0].hw.borrow().core.get_cnt_tx_segs();
    let s0 = segs(&world.borrow());
    qp_a.modify(QpState::Error).unwrap();
    let c2 = world.borrow().cycle();
    let s1 = segs(&world.borrow());
    let tx1 = world.borrow().nodes[0].hw.borrow().mac_tx_frames;
    assert_eq!(qp_a.state(), QpState::Error);
    let flushes = world.borrow().nodes[0].hw.borrow().flushes.clone();
    assert_eq!(flushes, vec![qp_a.qpn()], "the firmware strobed FLUSH_QP");

    // (3) Posting to a QP in Error: a typed error, nothing posted.
    let db0 = world.borrow().nodes[0].hw.borrow().core.get_cnt_db();
    assert_eq!(
        qp_a.post_send(&wrs[..1]),
        Err(Error::WrongState(QpState::Error))
    );
    assert_eq!(
        qp_a.post_recv(&recvs[..1]),
        Err(Error::WrongState(QpState::Error))
    );
    assert_eq!(world.borrow().nodes[0].hw.borrow().core.get_cnt_db(), db0);

    let got = drain(&a, &cq_a, 200);
    let c3 = world.borrow().cycle();
    let tx2 = world.borrow().nodes[0].hw.borrow().mac_tx_frames;
    assert!(
        got.iter().all(|w| w.qp_num == qp_a.qpn()),
        "only the QP in Error completes: {got:?}"
    );
    let sq: Vec<WorkCompletion> = got
        .iter()
        .copied()
        .filter(|w| w.opcode == WcOpcode::RdmaWrite)
        .collect();
    let rq: Vec<WorkCompletion> = got
        .iter()
        .copied()
        .filter(|w| w.opcode == WcOpcode::Recv)
        .collect();
    assert_eq!(sq.len() + rq.len(), got.len(), "{got:?}");
    let (ok, flushed) = check_send_queue(&posted, &sq);
    assert!(flushed > 0, "the scenario must leave Writes outstanding");
    assert!(ok > 0, "the scenario must complete Writes before the stop");
    assert_eq!(
        got.iter().position(|w| w.status == WcStatus::WrFlushError),
        Some(ok),
        "the device's CQEs come before every flush completion"
    );
    assert_eq!(
        rq.iter().map(|w| (w.wr_id, w.status)).collect::<Vec<_>>(),
        (100..106)
            .map(|i| (i, WcStatus::WrFlushError))
            .collect::<Vec<_>>(),
        "every receive flushed, in order"
    );
    assert_eq!((qp_a.sq_free(), qp_a.rq_free()), (32, 8));
    println!(
        "post 24 Writes + 8000 clocks: {} clocks; ModifyQp(Error): {} clocks; device CQEs \
         {ok} (signaled Writes), flushed {flushed} Writes and {} receives; drained in {} \
         clocks; late device CQEs dropped {}; A's TX frames during ModifyQp {}, after it {}",
        c1 - c0,
        c2 - c1,
        rq.len(),
        c3 - c2,
        cq_a.late_cqes(),
        tx1 - tx0,
        tx2 - tx1
    );
    let rdma_after = a_rdma_after_rst(&world, &pcap, c1);
    let s2 = segs(&world.borrow());
    println!(
        "A's RDMA segments after its RST: {rdma_after}; TxSeg segments issued during \
         ModifyQp(Error) {}, after it {} (A's QP 2 included)",
        s1 - s0,
        s2 - s1
    );
    if strict_device_stop {
        assert_eq!(
            cq_a.late_cqes(),
            0,
            "the device wrote no CQE after the stop"
        );
        // TxSeg starts no segment once the QP is off (the firmware writes
        // the QP as Error before its RST). The counter counts a segment when
        // both its descriptor and its payload read are issued; TxSeg works
        // on one segment at a time, and one whose descriptor went before the
        // stop must finish (the framer holds its descriptor): its read may
        // wait for a reorder slot for hundreds of clocks (8 slots of up to
        // 4 KiB draining at 8 octets per clock), past ModifyQp's return
        // (seen: 125 clocks after the write, 1 segment). So at most that one.
        assert!(
            s2 - s1 <= 1,
            "TxSeg issued RDMA segments after the stop: {}",
            s2 - s1
        );
        // Segments TxSeg issued before the stop are still in the payload
        // DMA / framer pipeline and leave after the firmware's RST, which
        // the MAC merge puts between data frames (docs/rtl.md "QP send stop
        // and Terminate receive"): at most its 8 payload reads not yet
        // drained into the framer (one per reorder slot, their descriptors
        // in `tx_mpa` or its queue) and the 8 frames the framer's record
        // FIFO holds (seen: 6).
        assert!(
            rdma_after <= 16,
            "A sent {rdma_after} RDMA segments after its RST (more than in flight)"
        );
    }

    // The other QP on the same CQ: its receive is still posted, it works.
    assert_eq!(qp_a2.state(), QpState::Rts);
    assert_eq!(qp_a2.rq_free(), 7);
    qp_a2
        .post_send(&[SendWr {
            wr_id: 901,
            op: SendOp::RdmaWrite(target),
            sges: &[mr_a.sge(0, 64).unwrap()],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        }])
        .unwrap();
    qp_b2
        .post_send(&[SendWr {
            wr_id: 902,
            op: SendOp::Send,
            sges: &[],
            signaled: false,
            solicited: false,
            fence: false,
            inline_data: None,
        }])
        .unwrap();
    let mut got2 = Vec::new();
    run_until(&world, 50_000, |_| false).ok();
    got2.extend(drain(&a, &cq_a, 50));
    let mut ids: Vec<(u64, WcStatus)> = got2.iter().map(|w| (w.wr_id, w.status)).collect();
    ids.sort_by_key(|x| x.0);
    assert_eq!(
        ids,
        vec![(900, WcStatus::Success), (901, WcStatus::Success)],
        "{got2:?}"
    );
}

/// A's world for the bad-Read tests: B's region without Remote Read, A's
/// Read of it.
struct ReadPair<'a> {
    world: &'a Rc<RefCell<World>>,
    a: &'a Context<SimBus>,
    cq_a: &'a Cq<'a, SimBus>,
    qp_a: &'a Qp<'a, SimBus>,
    qp_b: &'a Qp<'a, SimBus>,
    mr_a: &'a Mr<'a, SimBus>,
    mr_b: &'a Mr<'a, SimBus>,
}

fn with_read_pair(f: impl FnOnce(&ReadPair)) {
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let cq_a = a.create_cq(16).unwrap();
    let cq_b = b.create_cq(16).unwrap();
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 8, 8).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 8, 8).unwrap();
    connect_pair(&a, &qp_a, &b, &qp_b, MPA, b"A", b"B").unwrap();
    let buf_a: SimDma = a.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_b: SimDma = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_b = pd_b
        .reg_mr(&buf_b, GUARD, REGION, acc(ACCESS_REMOTE_READ))
        .unwrap();
    f(&ReadPair {
        world: &world,
        a: &a,
        cq_a: &cq_a,
        qp_a: &qp_a,
        qp_b: &qp_b,
        mr_a: &mr_a,
        mr_b: &mr_b,
    });
}

/// B's connection context of `qp_b` (the one in RDMA mode naming it).
fn conn_of(world: &Rc<RefCell<World>>, qpn: u32) -> ConnContext {
    let mut w = world.borrow_mut();
    for i in 0..256 {
        let mut b = [0u8; 64];
        if w.nodes[1]
            .fw
            .hal
            .read_table(TableId::Conn, i, &mut b)
            .is_err()
        {
            break;
        }
        let Ok(c) = ConnContext::parse(&b[..TableId::Conn.entry_size()]) else {
            continue;
        };
        if c.mode == ConnMode::Rdma && c.qpn == qpn {
            return c;
        }
    }
    panic!("B has no RDMA connection for QP {qpn}");
}

impl ReadPair<'_> {
    /// Posts an unsignaled Write, then a signaled RDMA Read with a bad
    /// remote STag, then an unsignaled Write; waits until B's RTL asks for
    /// the Terminate (RFC 5040 §7.2: RDMAP Remote Protection for the Read
    /// Request) and puts it into A's MAC unless B's firmware sent it
    /// already (it does once Terminate TX is in: then A's RTL counted it).
    /// Returns the cause and the Read's request.
    fn bad_read(&self) -> (TerminateCause, ReadRequestRepr) {
        let sink = self.mr_a.sge(0, 512).unwrap();
        let bad = RemoteAddr {
            addr: self.mr_b.va(),
            rkey: self.mr_b.rkey() ^ 0x100,
        };
        let w = |wr_id| SendWr {
            wr_id,
            op: SendOp::RdmaWrite(RemoteAddr {
                addr: self.mr_b.va(),
                rkey: self.mr_b.rkey(),
            }),
            sges: &[],
            signaled: false,
            solicited: false,
            fence: false,
            inline_data: None,
        };
        self.qp_a
            .post_send(&[
                w(1),
                SendWr {
                    wr_id: 2,
                    op: SendOp::RdmaRead(bad),
                    sges: &[sink],
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                },
                w(3),
            ])
            .unwrap();
        let term_rx = |w: &World| w.nodes[0].hw.borrow().core.get_cnt_rxs_term_rx();
        let t0 = term_rx(&self.world.borrow());
        let c = run_until(self.world, 50_000, |w| {
            !w.nodes[1].hw.borrow().terms.is_empty()
        })
        .expect("B's RTL asks for a Terminate");
        let (bits, _conn) = self.world.borrow().nodes[1].hw.borrow().terms[0];
        let cause = TerminateCause::from_bits(bits).unwrap();
        println!("B: Terminate request {cause:?} after {c} clocks");
        assert!(
            matches!(
                cause,
                TerminateCause::Rdmap(RdmapError::RemoteProtection(_))
            ),
            "{cause:?}"
        );
        let req = ReadRequestRepr {
            sink_stag: self.mr_a.lkey(),
            sink_to: sink.addr,
            size: sink.length,
            src_stag: bad.rkey,
            src_to: bad.addr,
        };
        // Let B's firmware send its own Terminate if it can.
        run_until(self.world, 5_000, |_| false).ok();
        if term_rx(&self.world.borrow()) == t0 {
            self.inject_terminate(cause, req);
        }
        run_until(self.world, 20_000, |w| term_rx(w) > t0)
            .expect("A's RTL takes the Terminate (cnt_rxs_term_rx)");
        (cause, req)
    }

    /// The Terminate B would send (RFC 5040 §4.8: RDMAP layer, the Read
    /// Request header echoed, R bit), framed by `rnic_wire`'s model at B's
    /// SND.NXT with B's RCV.NXT as ACK, into A's MAC.
    fn inject_terminate(&self, cause: TerminateCause, req: ReadRequestRepr) {
        let c = conn_of(self.world, self.qp_b.qpn());
        let mut tx = TxStream::new(
            MpaSettings {
                crc: MPA.crc,
                markers: false,
                seq_start: c.snd_nxt,
            },
            c.mss,
        );
        let segs = tx
            .send(&Message::Terminate(TerminateRepr {
                cause,
                ddp: None,
                rdma: Some(req),
            }))
            .unwrap();
        let src = Endpoint {
            mac: c.local_mac,
            ip: c.local_ip.to_be_bytes(),
            port: c.local_port,
        };
        let dst = Endpoint {
            mac: c.peer_mac,
            ip: c.peer_ip.to_be_bytes(),
            port: c.peer_port,
        };
        let w = self.world.borrow();
        let mut hw = w.nodes[0].hw.borrow_mut();
        for s in &segs {
            hw.mac_rx
                .push(data_frame(&src, &dst, s.seq, c.rcv_nxt, &s.payload), false);
        }
        println!(
            "injected B's Terminate into A: {} segment(s) at seq {:#x}",
            segs.len(),
            c.snd_nxt
        );
    }
}

/// (2, what runs today) A's Read of a region B refuses: B's RTL asks for
/// the RDMAP Remote Protection Terminate, A's RTL takes the Terminate, the
/// device writes no completion for the Read; the host's ModifyQp(Error)
/// then flushes the three WRs in order (the unsignaled Write before the
/// Read too: no completion implies it).
#[test]
fn bad_read_terminate_reaches_a_and_flushes() {
    with_read_pair(|p| {
        p.bad_read();
        let mut wc = [WorkCompletion::default(); 4];
        assert_eq!(
            p.cq_a.poll(&mut wc).unwrap(),
            0,
            "no device CQE for the Read"
        );
        p.qp_a.modify(QpState::Error).unwrap();
        let got = drain(p.a, p.cq_a, 100);
        assert_eq!(
            got.iter()
                .map(|w| (w.wr_id, w.opcode, w.status))
                .collect::<Vec<_>>(),
            vec![
                (1, WcOpcode::RdmaWrite, WcStatus::WrFlushError),
                (2, WcOpcode::RdmaRead, WcStatus::WrFlushError),
                (3, WcOpcode::RdmaWrite, WcStatus::WrFlushError),
            ]
        );
        assert_eq!(p.cq_a.late_cqes(), 0);
    });
}

/// (2) A's Read of a region B refuses completes at A with
/// `RemoteAccessError` and the Terminate's cause (RFC 5040 §7.2); the
/// unsignaled Write before it is implied, the Write after it is flushed.
#[test]
fn bad_read_completes_with_remote_access_error() {
    with_read_pair(|p| {
        let (cause, _) = p.bad_read();
        let ev = loop {
            let ev =
                p.a.get_cm_event(Duration::from_micros(200))
                    .expect("A gets the QpError event");
            if ev.kind == EventKind::QpError {
                break ev;
            }
        };
        assert_eq!(ev.handle, p.qp_a.qpn());
        assert_eq!(ev.status, encode_term_cause(Some(cause)));
        assert_eq!(p.qp_a.state(), QpState::Error);
        let got = drain(p.a, p.cq_a, 100);
        assert_eq!(
            got.iter()
                .map(|w| (w.wr_id, w.opcode, w.status, w.term_cause))
                .collect::<Vec<_>>(),
            vec![
                (
                    2,
                    WcOpcode::RdmaRead,
                    WcStatus::RemoteAccessError,
                    Some(cause)
                ),
                (3, WcOpcode::RdmaWrite, WcStatus::WrFlushError, None),
            ]
        );
    });
}
