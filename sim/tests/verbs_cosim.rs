//! Verbs between two co-simulated nodes, through the driver only: each node
//! is a Verilated `rnic_core` with its firmware and host memory, driven by
//! `rnic_driver` over `SimBus`; B listens, A connects through the CM.
//!
//! References, independent of the RTL: the data the test wrote (and a
//! shadow of every octet of B's buffers), the driver's typed errors and
//! completions, `rnic_wire::terminate` for Terminate causes and frames, and
//! `rnic_wire::model::parse_frame` (smoltcp) for the pcap.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

#[path = "../../testdata/support.rs"]
mod support;

use rnic_driver::{
    AccessFlags, Context, Cq, DmaMem, Error, MpaOptions, Mr, Pd, Qp, QpState, RecvWr, RemoteAddr,
    SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion, WrError,
};
use rnic_sim::dma::DmaEvent;
use rnic_sim::link::LinkConfig;
use rnic_sim::node::World;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{connect_pair, open_node, run_until, world_pair, GUARD};
use rnic_sim::sim_bus::{SimBus, SimDma};
use rnic_wire::abi::cqe::decode_term_cause;
use rnic_wire::abi::mailbox::{Event, EventKind};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::abi::wqe::{SendWqe, SgeList};
use rnic_wire::terminate::{
    DdpError, RdmapError, RemoteProtectionError, TaggedBufferError, TerminateCause, TerminateRepr,
    UntaggedBufferError,
};

/// Node B's MAC (`world_pair`).
const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 2];
/// Node A's MAC.
const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 1];

/// tshark decodes the pcap: `n` RDMAP Terminates, no malformed packet (see
/// [`support::have_tool`] for a missing tshark).
fn tshark_terminate(pcap: &PathBuf, n: usize) {
    if !support::have_tool("tshark") {
        return;
    }
    let run = |filter: &str| {
        let o = std::process::Command::new("tshark")
            .arg("-r")
            .arg(pcap)
            .args(["--disable-protocol", "rpcordma", "-Y", filter])
            .output()
            .expect("run tshark");
        assert!(
            o.status.success(),
            "tshark failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let bad = run("_ws.malformed || _ws.expert.severity >= error");
    assert!(bad.trim().is_empty(), "tshark: malformed packets:\n{bad}");
    let t = run("iwarp_rdma.terminate");
    println!("tshark: Terminate frames:\n{t}");
    assert_eq!(t.lines().count(), n, "tshark decodes the Terminates");
}

/// Region size on each side.
const REGION: usize = 8192;
/// Clocks any one small operation may take.
const BUDGET: u64 = 50_000;

/// Octets of placement records.
fn placed_in(p: &[(u32, u64, u16)]) -> usize {
    p.iter().map(|p| p.2 as usize).sum()
}

/// The two connected nodes and what the tests use of them.
struct S<'a> {
    world: &'a Rc<RefCell<World>>,
    pcap: &'a PathBuf,
    qp_a: &'a Qp<'a, SimBus>,
    qp_b: &'a Qp<'a, SimBus>,
    /// B's driver context (its event processing) and protection domain.
    b: &'a Context<SimBus>,
    pd_b: &'a Pd<'a, SimBus>,
    scq_a: &'a Cq<'a, SimBus>,
    rcq_b: &'a Cq<'a, SimBus>,
    mr_a: &'a Mr<'a, SimBus>,
    buf_a: &'a SimDma,
    /// B's Write target (remote write) and receive buffer (local write).
    mr_bw: &'a Mr<'a, SimBus>,
    buf_bw: &'a SimDma,
    mr_br: &'a Mr<'a, SimBus>,
    buf_br: &'a SimDma,
    /// What B's two buffers must hold.
    shadow_w: RefCell<Vec<u8>>,
    shadow_r: RefCell<Vec<u8>>,
    rng: RefCell<Rng>,
}

/// Connects two nodes (pcap `name`), registers memory, runs `f`; prints
/// the simulated clocks and wall time.
fn with_pair(name: &str, f: impl FnOnce(&S)) {
    let wall = Instant::now();
    let pcap = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.pcap"));
    let world = world_pair(LinkConfig::default(), Some(&pcap)).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let b = open_node(&world, 1, 1500).unwrap();
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (scq_a, rcq_a) = (a.create_cq(16).unwrap(), a.create_cq(16).unwrap());
    let (scq_b, rcq_b) = (b.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&scq_a, &rcq_a, 32, 4).unwrap();
    let qp_b = pd_b.create_qp(&scq_b, &rcq_b, 4, 16).unwrap();
    let mpa = MpaOptions {
        revision: 2,
        crc: true,
        markers: false,
    };
    connect_pair(&a, &qp_a, &b, &qp_b, mpa, b"A", b"B").unwrap();
    let acc = |b| AccessFlags::from_bits(b).unwrap();
    let buf_a = a.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_bw = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let buf_br = b.alloc_dma(REGION + 2 * GUARD).unwrap();
    let mr_a = pd_a
        .reg_mr(&buf_a, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mr_bw = pd_b
        .reg_mr(
            &buf_bw,
            GUARD,
            REGION,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let mr_br = pd_b
        .reg_mr(&buf_br, GUARD, REGION, acc(ACCESS_LOCAL_WRITE))
        .unwrap();
    let mut rng = Rng::new(0x5eed);
    let shadow_w = rng.bytes(REGION + 2 * GUARD);
    let shadow_r = rng.bytes(REGION + 2 * GUARD);
    buf_bw.write(0, &shadow_w).unwrap();
    buf_br.write(0, &shadow_r).unwrap();
    let c0 = world.borrow().cycle();
    let s = S {
        world: &world,
        pcap: &pcap,
        qp_a: &qp_a,
        qp_b: &qp_b,
        b: &b,
        pd_b: &pd_b,
        scq_a: &scq_a,
        rcq_b: &rcq_b,
        mr_a: &mr_a,
        buf_a: &buf_a,
        mr_bw: &mr_bw,
        buf_bw: &buf_bw,
        mr_br: &mr_br,
        buf_br: &buf_br,
        shadow_w: RefCell::new(shadow_w),
        shadow_r: RefCell::new(shadow_r),
        rng: RefCell::new(rng),
    };
    f(&s);
    let c1 = world.borrow().cycle();
    // No loss on this link: the firmware's RDMA-mode retransmission timer
    // (rnic_fw::retx) must never fire.
    for (n, who) in [(0, "A"), (1, "B")] {
        let st = world.borrow().nodes[n].fw.stats().retx;
        println!("{name}: {who}'s retransmission timer: {st:?}");
        assert_eq!(st.retransmits, 0, "{who} retransmitted without loss");
    }
    println!(
        "{name}: setup + connect {c0} clocks, test body {} clocks, wall {:.2} s",
        c1 - c0,
        wall.elapsed().as_secs_f64()
    );
}

impl S<'_> {
    /// B's buffers equal their shadows (every octet, guards included).
    fn check_b(&self, what: &str) {
        for (buf, shadow, name) in [
            (self.buf_bw, &self.shadow_w, "Write target"),
            (self.buf_br, &self.shadow_r, "receive buffer"),
        ] {
            let mut got = vec![0u8; REGION + 2 * GUARD];
            buf.read(0, &mut got).unwrap();
            let want = shadow.borrow();
            if let Some(i) = got.iter().zip(want.iter()).position(|(g, w)| g != w) {
                panic!(
                    "{what}: B's {name} differs at offset {i} (region {GUARD}..{}): got {:#04x} want {:#04x}",
                    GUARD + REGION,
                    got[i],
                    want[i]
                );
            }
        }
    }

    /// A's source octets at region offset `off`.
    fn source(&self, off: usize, len: usize) -> Vec<u8> {
        let data = self.rng.borrow_mut().bytes(len);
        self.buf_a.write(GUARD + off, &data).unwrap();
        data
    }

    fn placed_bytes(&self, from: usize) -> usize {
        let w = self.world.borrow();
        let b = w.nodes[1].hw.borrow();
        placed_in(&b.placed[from..])
    }

    fn terms_b(&self) -> Vec<(u16, u32)> {
        self.world.borrow().nodes[1].hw.borrow().terms.clone()
    }

    /// Runs until B's RTL asks for a Terminate, then `idle` clocks more:
    /// the clocks it took and the first request's cause.
    fn b_terminate(&self, idle: u64) -> (u64, TerminateCause) {
        let c = run_until(self.world, BUDGET, |w| {
            !w.nodes[1].hw.borrow().terms.is_empty()
        })
        .expect("B asks for a Terminate");
        if idle > 0 {
            self.idle(idle);
        }
        (c, TerminateCause::from_bits(self.terms_b()[0].0).unwrap())
    }

    /// RDMA Write of `len` octets to B's region offset `dst` (unsignaled:
    /// the RTL has no send CQEs yet); waits until B placed them.
    fn write(&self, dst: usize, len: usize) {
        let data = self.source(0, len);
        let sges = [self.mr_a.sge(0, len as u32).unwrap()];
        let from = self.world.borrow().nodes[1].hw.borrow().placed.len();
        self.qp_a
            .post_send(&[SendWr {
                wr_id: len as u64,
                op: SendOp::RdmaWrite(RemoteAddr {
                    addr: self.mr_bw.va() + dst as u64,
                    rkey: self.mr_bw.rkey(),
                }),
                sges: if len == 0 { &[] } else { &sges },
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        if len == 0 {
            // nothing to place: let the frame cross and be taken
            self.idle(3000);
        } else {
            let c = run_until(self.world, BUDGET, |w| {
                let b = w.nodes[1].hw.borrow();
                placed_in(&b.placed[from..]) >= len && b.dma.idle()
            })
            .unwrap_or_else(|c| {
                panic!(
                    "Write of {len}: {} of {len} octets placed after {c} clocks",
                    self.placed_bytes(from)
                )
            });
            println!("RDMA Write {len:>5} octets: placed in {c} clocks");
        }
        self.shadow_w.borrow_mut()[GUARD + dst..GUARD + dst + len].copy_from_slice(&data);
        self.check_b(&format!("after a Write of {len}"));
        assert!(self.terms_b().is_empty(), "{:?}", self.terms_b());
    }

    /// B posts a receive of `cap` octets at `dst`, A sends `len`; B's
    /// receive CQ gives the completion.
    fn send(&self, dst: usize, cap: usize, len: usize) -> WorkCompletion {
        let rsge = [self.mr_br.sge(dst as u64, cap as u32).unwrap()];
        let rid = 1000 + len as u64;
        self.qp_b
            .post_recv(&[RecvWr {
                wr_id: rid,
                sges: if cap == 0 { &[] } else { &rsge },
            }])
            .unwrap();
        let data = self.source(0, len);
        let sges = [self.mr_a.sge(0, len as u32).unwrap()];
        self.qp_a
            .post_send(&[SendWr {
                wr_id: 2000 + len as u64,
                op: SendOp::Send,
                sges: if len == 0 { &[] } else { &sges },
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        let mut wc = [WorkCompletion::default()];
        let c = run_until(self.world, BUDGET, |_| {
            self.rcq_b.poll(&mut wc).unwrap() == 1
        })
        .unwrap_or_else(|c| panic!("Send of {len}: no receive completion in {c} clocks"));
        println!("Send {len:>5} octets: receive completion in {c} clocks");
        let wc = wc[0];
        assert_eq!(wc.wr_id, rid);
        assert_eq!(wc.status, WcStatus::Success, "{wc:?}");
        assert_eq!(wc.opcode, WcOpcode::Recv);
        assert_eq!(wc.byte_len as usize, len);
        assert_eq!(wc.qp_num, self.qp_b.qpn());
        self.shadow_r.borrow_mut()[GUARD + dst..GUARD + dst + len].copy_from_slice(&data);
        self.check_b(&format!("after a Send of {len}"));
        wc
    }

    /// Runs the world `n` clocks.
    fn idle(&self, n: u64) {
        let _ = run_until(self.world, n, |_| false);
    }

    /// The QpError event records node `node`'s firmware pushed for its host.
    fn qp_error_events(&self, node: usize) -> Vec<Event> {
        self.world.borrow().nodes[node]
            .hw
            .borrow()
            .events
            .iter()
            .map(|e| Event::parse(e).unwrap())
            .filter(|e| e.kind == EventKind::QpError)
            .collect()
    }

    /// After B's Terminate: B's host has a QpError event with `cause`,
    /// A's core counted the incoming Terminate and A's firmware took it
    /// (QpError with the same cause for A's host), both firmware
    /// connections left RDMA mode, and a good Write and Send from A place
    /// nothing at B.
    fn after_terminate(&self, cause: TerminateCause) {
        {
            let w = self.world.borrow();
            let a = w.nodes[0].hw.borrow();
            assert_eq!(
                a.core.get_cnt_rxs_term_rx(),
                1,
                "A's core took one Terminate"
            );
            assert_eq!(
                w.nodes[1]
                    .hw
                    .borrow()
                    .terms
                    .iter()
                    .map(|t| t.0)
                    .collect::<Vec<_>>(),
                vec![cause.to_bits()],
                "B's one Terminate request, taken by its firmware"
            );
            let rdma = (0..64).any(|i| {
                w.nodes[1]
                    .fw
                    .conn(i)
                    .is_some_and(|c| c.phase == rnic_fw::fw::Phase::Rdma)
            });
            assert!(!rdma, "B's connection left RDMA mode");
        }
        // the event record B's firmware pushed for its host (`ev_*`)
        let evs = self.qp_error_events(1);
        assert_eq!(evs.len(), 1, "{evs:?}");
        assert_eq!(
            (evs[0].handle, evs[0].status),
            (
                self.qp_b.qpn(),
                rnic_wire::abi::cqe::encode_term_cause(Some(cause))
            )
        );
        // A's firmware took the incoming Terminate (exception queue): QpError with
        // B's cause for A's host, and A's connection left RDMA mode
        let evs = self.qp_error_events(0);
        assert_eq!(evs.len(), 1, "A: {evs:?}");
        assert_eq!(
            (evs[0].handle, evs[0].status),
            (
                self.qp_a.qpn(),
                rnic_wire::abi::cqe::encode_term_cause(Some(cause))
            )
        );
        let w = self.world.borrow();
        let rdma_a = (0..64).any(|i| {
            w.nodes[0]
                .fw
                .conn(i)
                .is_some_and(|c| c.phase == rnic_fw::fw::Phase::Rdma)
        });
        assert!(!rdma_a, "A's connection left RDMA mode");
        drop(w);
        let placed = self.world.borrow().nodes[1].hw.borrow().placed.len();
        self.source(0, 128);
        let sges = [self.mr_a.sge(0, 128).unwrap()];
        for op in [
            SendOp::RdmaWrite(RemoteAddr {
                addr: self.mr_bw.va(),
                rkey: self.mr_bw.rkey(),
            }),
            SendOp::Send,
        ] {
            // A's QP may already refuse (its core stopped it on the
            // Terminate); either way nothing may reach B's memory
            let _ = self.qp_a.post_send(&[SendWr {
                wr_id: 99,
                op,
                sges: &sges,
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }]);
        }
        self.idle(20_000);
        assert_eq!(
            self.world.borrow().nodes[1].hw.borrow().placed.len(),
            placed,
            "nothing placed at B after the Terminate"
        );
        self.check_b("after the Terminate");
    }

    /// Every TCP segment in the pcap from `src_mac`: (seq, FIN, payload),
    /// parsed by `rnic_wire::model::parse_frame` (smoltcp, checksums).
    fn pcap_segments(&self, src_mac: [u8; 6]) -> Vec<(u32, bool, Vec<u8>)> {
        self.world
            .borrow_mut()
            .link
            .as_mut()
            .unwrap()
            .flush_pcap()
            .unwrap();
        let f = std::fs::File::open(self.pcap).unwrap();
        let mut r = pcap_file::pcap::PcapReader::new(f).unwrap();
        let mut out = Vec::new();
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            if let Ok(seg) = rnic_wire::model::parse_frame(&p.data) {
                if seg.src_mac == src_mac {
                    out.push((seg.seq, seg.fin, seg.payload.to_vec()));
                }
            }
        }
        out
    }

    /// B's Terminate on the wire: exactly one, at B's SND.NXT (after every
    /// octet B sent before), followed by B's FIN right after it; tshark
    /// (when installed) decodes it as an iWARP Terminate with nothing
    /// malformed. Returns it parsed.
    fn b_terminate_on_the_wire(&self) -> TerminateRepr {
        let t = self.terminate_frames_b_to_a();
        assert!(!t.is_empty(), "no Terminate B → A");
        assert!(
            t.iter().all(|x| *x == t[0]),
            "one Terminate (or its retransmissions): {t:?}"
        );
        let segs = self.pcap_segments(MAC_B);
        let at = segs
            .iter()
            .position(|(_, _, p)| p.len() >= 20 && p[2] & 0x80 == 0 && p[3] & 0x0F == 0x7)
            .unwrap();
        let (seq, _, ref pl) = segs[at];
        // before it, B sent only the MPA Reply and ACKs: the Terminate
        // starts where they end (one-octet SYN accounted by the ACKs' seq)
        let end_before = segs[..at]
            .iter()
            .map(|(s, _, p)| s.wrapping_add(p.len() as u32))
            .max()
            .unwrap();
        assert_eq!(seq, end_before, "Terminate at B's SND.NXT");
        let fin = segs[at + 1..]
            .iter()
            .find(|(_, f, _)| *f)
            .expect("B's FIN after the Terminate");
        assert_eq!(
            fin.0,
            seq.wrapping_add(pl.len() as u32),
            "FIN right after it"
        );
        assert!(
            segs[at + 1..]
                .iter()
                .all(|(_, _, p)| p.is_empty() || p == pl),
            "nothing but retransmissions of the Terminate after it"
        );
        tshark_terminate(self.pcap, t.len());
        t[0]
    }

    /// Every Terminate FPDU B sent to A, from the pcap: MPA (RFC 5044 §4.1,
    /// no markers) → untagged DDP header (RFC 5041 §4.3, 18 octets) with
    /// RDMAP opcode Terminate (RFC 5040 §4.8, 0x7) → the Terminate header
    /// parsed by `rnic_wire::terminate`.
    fn terminate_frames_b_to_a(&self) -> Vec<TerminateRepr> {
        const MPA_LEN: usize = 2;
        const DDP_UNTAGGED: usize = 18;
        const RDMAP_TERMINATE: u8 = 0x7;
        self.pcap_segments(MAC_B)
            .into_iter()
            .filter_map(|(_, _, pl)| {
                if pl.len() < MPA_LEN + DDP_UNTAGGED {
                    return None;
                }
                let (ddp_ctrl, rdmap_ctrl) = (pl[MPA_LEN], pl[MPA_LEN + 1]);
                let tagged = ddp_ctrl & 0x80 != 0;
                (!tagged && rdmap_ctrl & 0x0F == RDMAP_TERMINATE)
                    .then(|| TerminateRepr::parse_bytes(&pl[MPA_LEN + DDP_UNTAGGED..]).unwrap())
            })
            .collect()
    }
}

/// Writes and Sends of small sizes land byte-exact, nothing around them
/// changes.
#[test]
fn write_and_send_small_sizes() {
    with_pair("verbs_small", |s| {
        for (i, len) in [1usize, 3, 8, 100, 1000, 1460, 3000, 8192]
            .into_iter()
            .enumerate()
        {
            let dst = (i * 37) % (REGION - len + 1);
            s.write(dst, len);
            s.send(dst, len, len);
        }
        assert!(s.terms_b().is_empty());
    });
}

/// Zero-length RDMA Write and Send are legal (RFC 5040 §4.3, §5.1: a
/// zero-length message is one DDP segment with no payload): no Terminate,
/// nothing placed, and the Send completes at B with byte_len 0; data after
/// them still lands.
#[test]
fn zero_length_write_and_send() {
    with_pair("verbs_zero", |s| {
        s.write(100, 0);
        let wc = s.send(200, 0, 0);
        assert_eq!(wc.byte_len, 0);
        // a zero-length Send into a receive with a buffer: byte_len 0 too
        let wc = s.send(300, 64, 0);
        assert_eq!(wc.byte_len, 0);
        s.write(400, 5);
        s.send(500, 5, 5);
    });
}

/// Posting to a QP in the wrong state is the driver's typed error, and
/// nothing reaches the device.
#[test]
fn wrong_state_posts_are_typed_errors() {
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let a = open_node(&world, 0, 1500).unwrap();
    let pd = a.alloc_pd().unwrap();
    let cq = a.create_cq(16).unwrap();
    let qp = pd.create_qp(&cq, &cq, 4, 4).unwrap();
    let buf = a.alloc_dma(4096).unwrap();
    let mr = pd
        .reg_mr(
            &buf,
            0,
            4096,
            AccessFlags::from_bits(ACCESS_LOCAL_WRITE).unwrap(),
        )
        .unwrap();
    let sges = [mr.sge(0, 16).unwrap()];
    let wr = SendWr {
        wr_id: 1,
        op: SendOp::Send,
        sges: &sges,
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    };
    let db0 = world.borrow().nodes[0].hw.borrow().core.get_cnt_db();
    // Idle: post_send needs RTS
    assert_eq!(qp.post_send(&[wr]), Err(Error::WrongState(QpState::Idle)));
    // Error: neither send nor receive
    qp.modify(QpState::Error).unwrap();
    assert_eq!(qp.post_send(&[wr]), Err(Error::WrongState(QpState::Error)));
    let r = qp.post_recv(&[RecvWr {
        wr_id: 2,
        sges: &sges,
    }]);
    assert_eq!(r, Err(Error::WrongState(QpState::Error)));
    let db1 = world.borrow().nodes[0].hw.borrow().core.get_cnt_db();
    assert_eq!(db0, db1, "no doorbell rang");
    println!("post_send in Idle / Error, post_recv in Error: WrongState; no doorbell");
}

/// A Send with no receive posted at B: B's RTL asks for a Terminate with
/// DDP Untagged Buffer Error "Invalid MSN - no buffer available" (RFC 5041
/// §7.2, 0x02) and writes nothing into B's memory.
#[test]
fn send_without_receive_terminates_at_b() {
    with_pair("verbs_norecv", |s| {
        s.source(0, 256);
        let sges = [s.mr_a.sge(0, 256).unwrap()];
        s.qp_a
            .post_send(&[SendWr {
                wr_id: 9,
                op: SendOp::Send,
                sges: &sges,
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        let (c, cause) = s.b_terminate(0);
        let terms = s.terms_b();
        println!(
            "B: Terminate request after {c} clocks: {cause:?} (conn {})",
            terms[0].1
        );
        assert_eq!(
            cause,
            TerminateCause::Ddp(DdpError::UntaggedBuffer(
                UntaggedBufferError::InvalidMsnNoBuffer
            ))
        );
        s.idle(2000);
        s.check_b("after a Send with no receive");
        let mut wc = [WorkCompletion::default()];
        assert_eq!(s.rcq_b.poll(&mut wc).unwrap(), 0, "no receive completion");
    });
}

/// A Write with a wrong key: B's RTL asks for a Terminate for an invalid
/// STag (RFC 5041 §7.2 tagged buffer error / RFC 5040 §7 remote protection
/// error) and not one octet of B's memory changes.
#[test]
fn write_to_bad_stag_terminates_at_b() {
    with_pair("verbs_badstag", |s| {
        s.source(0, 512);
        let sges = [s.mr_a.sge(0, 512).unwrap()];
        s.qp_a
            .post_send(&[SendWr {
                wr_id: 7,
                op: SendOp::RdmaWrite(RemoteAddr {
                    addr: s.mr_bw.va(),
                    rkey: s.mr_bw.rkey() ^ 0x5A,
                }),
                sges: &sges,
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        let (c, cause) = s.b_terminate(2000);
        println!("B: Terminate request after {c} clocks: {cause:?}");
        assert!(
            matches!(
                cause,
                TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag))
                    | TerminateCause::Rdmap(RdmapError::RemoteProtection(
                        RemoteProtectionError::InvalidStag
                    ))
            ),
            "{cause:?}"
        );
        s.check_b("after a Write with a bad STag");
        assert_eq!(s.placed_bytes(0), 0, "no placement record");
    });
}

/// The Terminate goes on the wire to A (RFC 5040 §5.3: the Terminate is
/// sent to the peer before the stream is closed): B's firmware takes the
/// request from the core's port, sends it at B's SND.NXT with the echoed
/// DDP header of A's Send (RFC 5040 §4.8: D and M, the segment length) and
/// closes. A's core counts the incoming Terminate, B's host gets QpError
/// with the cause, and nothing more of the QP's data lands at B.
#[test]
fn terminate_frame_on_the_wire() {
    with_pair("verbs_term_wire", |s| {
        s.source(0, 64);
        let sges = [s.mr_a.sge(0, 64).unwrap()];
        s.qp_a
            .post_send(&[SendWr {
                wr_id: 1,
                op: SendOp::Send,
                sges: &sges,
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        // measured: Send posted → B's core raised the request → A's core
        // took the Terminate (B's firmware sent it in between)
        let c1 = run_until(s.world, BUDGET, |w| {
            !w.nodes[1].hw.borrow().terms.is_empty()
        })
        .expect("B's core raises a Terminate request");
        let c2 = run_until(s.world, BUDGET, |w| {
            w.nodes[0].hw.borrow().core.get_cnt_rxs_term_rx() == 1
        })
        .expect("the Terminate reaches A's core");
        println!(
            "Send posted → B's core raised the request: {c1} clocks; → A's core took the \
             Terminate: {c2} clocks more"
        );
        s.idle(20_000);
        let t = s.b_terminate_on_the_wire();
        let cause = TerminateCause::Ddp(DdpError::UntaggedBuffer(
            UntaggedBufferError::InvalidMsnNoBuffer,
        ));
        assert_eq!(t.cause, cause);
        // the echo: A's Send segment as it crossed the wire
        let send = s
            .pcap_segments(MAC_A)
            .into_iter()
            .find(|(_, _, p)| p.len() >= 20 && p[2] & 0x80 == 0 && p[3] & 0x0F == 0x3)
            .expect("A's Send on the wire")
            .2;
        let d = t.ddp.expect("DDP header echoed");
        assert_eq!(
            d.header.as_bytes(),
            &send[2..20],
            "echoed untagged DDP header"
        );
        assert!(d.segment_length_valid);
        assert_eq!(
            d.segment_length as usize,
            u16::from_be_bytes([send[0], send[1]]) as usize,
            "DDP segment length = the FPDU's ULPDU length"
        );
        assert!(t.rdma.is_none());
        s.after_terminate(cause);
    });
}

/// A Write with a bad STag: B's Terminate on the wire says DDP tagged
/// buffer error Invalid STag (RFC 5041 §7.2, 0x00) and echoes the
/// offending tagged segment's 14-octet DDP header; nothing lands at B.
#[test]
fn bad_stag_terminate_frame_on_the_wire() {
    with_pair("verbs_badstag_wire", |s| {
        s.source(0, 512);
        let sges = [s.mr_a.sge(0, 512).unwrap()];
        let bad = s.mr_bw.rkey() ^ 0x5A;
        s.qp_a
            .post_send(&[SendWr {
                wr_id: 7,
                op: SendOp::RdmaWrite(RemoteAddr {
                    addr: s.mr_bw.va() + 64,
                    rkey: bad,
                }),
                sges: &sges,
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        s.idle(20_000);
        let t = s.b_terminate_on_the_wire();
        let cause = TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag));
        assert_eq!(t.cause, cause);
        let write = s
            .pcap_segments(MAC_A)
            .into_iter()
            // tagged, with payload: not A's zero-length Write RTR (RFC 6581)
            .find(|(_, _, p)| {
                p.len() >= 16 && p[2] & 0x80 != 0 && u16::from_be_bytes([p[0], p[1]]) > 14
            })
            .expect("A's Write on the wire")
            .2;
        assert_eq!(
            u32::from_be_bytes(write[4..8].try_into().unwrap()),
            bad,
            "the offending segment"
        );
        let d = t.ddp.expect("DDP header echoed");
        assert_eq!(
            d.header.as_bytes(),
            &write[2..16],
            "echoed tagged DDP header"
        );
        assert_eq!(
            d.segment_length as usize,
            u16::from_be_bytes([write[0], write[1]]) as usize
        );
        s.after_terminate(cause);
    });
}

/// A graceful disconnect after data: B gets Closed. (It failed while the
/// TX fast path did not write SND.NXT back: A's FIN then carried the
/// sequence number of Established and B dropped it as out of window.)
#[test]
fn disconnect_after_data() {
    with_pair("verbs_disconnect", |s| {
        s.write(0, 100);
        s.qp_a.disconnect(false).unwrap();
        let closed = run_until(s.world, 100_000, |w| {
            w.nodes[1].fw.conn(0).is_none() && (0..64).all(|i| w.nodes[1].fw.conn(i).is_none())
        });
        assert!(closed.is_ok(), "B's connection still open");
    });
}

/// B closes right after A's RDMA Write reached it, while B's RTL may
/// still hold the delayed ACK for it: after B's FIN, nothing B sends has a
/// sequence number below the FIN's end (RFC 9293 §3.6: the FIN is the
/// stream's last octet; a pure ACK at the FIN's own sequence number after
/// it is answered by Linux with a RST). Only a retransmitted FIN may
/// repeat it.
#[test]
fn nothing_below_the_fin_after_it() {
    with_pair("verbs_fin_last", |s| {
        s.write(0, 100);
        s.qp_b.disconnect(false).unwrap();
        // B closes actively (TIME-WAIT follows); A's side ends on B's
        // last ACK.
        let closed = run_until(s.world, 100_000, |w| {
            (0..64).all(|i| w.nodes[0].fw.conn(i).is_none())
        });
        assert!(closed.is_ok(), "A's connection still open");
        // past the RTL's longest ACK delay (tx_ack::ACK_DELAY_CLOCKS)
        s.idle(10_000);
        let segs = s.pcap_segments(MAC_B);
        let at = segs.iter().position(|x| x.1).expect("B's FIN");
        let (fin_seq, _, ref p) = segs[at];
        let fin_end = fin_seq.wrapping_add(p.len() as u32 + 1);
        for (k, (seq, fin, p)) in segs[at + 1..].iter().enumerate() {
            let again = *fin && *seq == fin_seq;
            assert!(
                again || (seq.wrapping_sub(fin_end) as i32) >= 0,
                "B's segment {} after its FIN (seq {fin_seq:#x}): seq {seq:#x}, \
                 FIN {fin}, {} payload octets",
                k + 1,
                p.len()
            );
        }
    });
}

/// The default scenario with 1 MiB messages (seed 1, 2 ops per size) must
/// run through.
#[test]
#[ignore = "long (about 2.2 M clocks, 40 s wall in release): `make sim` runs this scenario"]
fn default_scenario_up_to_1_mib() {
    let cfg = rnic_sim::rtl_run::RtlConfig {
        max_size: 1 << 20,
        ops: 2,
        seed: 1,
        ..Default::default()
    };
    match rnic_sim::rtl_run::run(&cfg) {
        Ok(r) => print!("{}", r.render()),
        Err(e) => panic!("{e}"),
    }
}

/// Back-to-back RDMA Writes (A's SQ full, window-limited at line rate, no
/// loss): SND.UNA keeps moving, so the firmware's RDMA-mode retransmission
/// timer (rnic_fw::retx, co-sim RTO `COSIM_RDMA_RETX`) never fires; the
/// longest stall a sample saw is printed and must stay under half the RTO.
#[test]
fn back_to_back_writes_never_fire_the_retransmission_timer() {
    use rnic_sim::node::COSIM_RDMA_RETX;
    with_pair("verbs_retx_quiet", |s| {
        const N: usize = 24;
        let len = REGION;
        let data = s.source(0, len);
        let sges = [s.mr_a.sge(0, len as u32).unwrap()];
        let from = s.world.borrow().nodes[1].hw.borrow().placed.len();
        let c0 = s.world.borrow().cycle();
        for k in 0..N {
            s.qp_a
                .post_send(&[SendWr {
                    wr_id: k as u64,
                    op: SendOp::RdmaWrite(RemoteAddr {
                        addr: s.mr_bw.va(),
                        rkey: s.mr_bw.rkey(),
                    }),
                    sges: &sges,
                    signaled: false,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                }])
                .unwrap();
        }
        let c = run_until(s.world, 40 * BUDGET, |w| {
            let b = w.nodes[1].hw.borrow();
            placed_in(&b.placed[from..]) >= N * len && b.dma.idle()
        })
        .unwrap_or_else(|c| panic!("{N} Writes of {len}: not placed after {c} clocks"));
        s.idle(20_000);
        println!(
            "{N} × {len}-octet Writes placed in {c} clocks ({} clocks since the first post)",
            s.world.borrow().cycle() - c0
        );
        s.shadow_w.borrow_mut()[GUARD..GUARD + len].copy_from_slice(&data);
        s.check_b("after back-to-back Writes");
        let st = s.world.borrow().nodes[0].fw.stats().retx;
        println!("A's retransmission timer: {st:?}, RTO {COSIM_RDMA_RETX:?}");
        assert!(
            st.outstanding > 0,
            "the timer sampled A's connection with data in flight"
        );
        assert_eq!((st.retransmits, st.give_ups), (0, 0));
        assert!(
            st.longest_stall < COSIM_RDMA_RETX.rto / 2,
            "SND.UNA stood still {} µs without loss",
            st.longest_stall
        );
    });
}

/// A send WQE whose SGE the device refuses (RFC 5040 §5.3, §7.2): A posts
/// an RDMA Write and a Send through the driver (which checks their SGEs),
/// then rewrites the Write's WQE in its mapped send ring with a wrong lkey,
/// as user space writing the ring directly could. A's device completes the
/// Write with `LocalProtectionError` without reading or sending an octet of
/// it, turns the send side off and queues exception `SendQueueError`; A's
/// firmware terminates the stream: B receives a Terminate with RDMAP Local
/// Catastrophic, both hosts get `QpError` with that cause, the Send and
/// B's receive are flushed, and no octet of B's buffers changes.
#[test]
fn refused_send_sge_terminates_the_stream() {
    with_pair("verbs_sq_error", |s| {
        s.qp_b
            .post_recv(&[RecvWr {
                wr_id: 90,
                sges: &[s.mr_br.sge(0, 1000).unwrap()],
            }])
            .unwrap();
        // A posts a Write and a Send through the driver (which checks their
        // SGEs), then, before the device runs, rewrites the Write's WQE in the
        // mapped send ring as a buggy or hostile user-space process could: its
        // SGE now names A's region with a wrong key (the low 8 bits of the
        // STag, RFC 5040 §2.1).
        s.qp_a
            .post_send(&[
                SendWr {
                    wr_id: 1,
                    op: SendOp::RdmaWrite(RemoteAddr {
                        addr: s.mr_bw.va(),
                        rkey: s.mr_bw.rkey(),
                    }),
                    sges: &[s.mr_a.sge(0, 512).unwrap()],
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                },
                SendWr {
                    wr_id: 2,
                    op: SendOp::Send,
                    sges: &[s.mr_a.sge(0, 200).unwrap()],
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                },
            ])
            .unwrap();
        let mut slot = [0u8; SendWqe::SIZE];
        s.qp_a.sq_ring().read(0, &mut slot).unwrap();
        let mut wqe = SendWqe::parse(&slot).unwrap();
        assert_eq!((wqe.wr_id, wqe.sges.as_slice()[0].lkey), (1, s.mr_a.lkey()));
        let mut sges = wqe.sges.as_slice().to_vec();
        sges[0].lkey ^= 0x5a;
        wqe.sges = SgeList::new(&sges).unwrap();
        wqe.emit(&mut slot).unwrap();
        s.qp_a.sq_ring().write(0, &slot).unwrap();

        let mut wcs = Vec::new();
        let c = run_until(s.world, BUDGET, |_| {
            let mut wc = [WorkCompletion::default(); 4];
            let n = s.scq_a.poll(&mut wc).unwrap();
            wcs.extend_from_slice(&wc[..n]);
            wcs.len() >= 2
        })
        .unwrap_or_else(|c| panic!("A's two send completions not there in {c} clocks: {wcs:?}"));
        println!("A's send completions after {c} clocks: {wcs:?}");
        assert_eq!(
            (wcs[0].wr_id, wcs[0].status),
            (1, WcStatus::LocalProtectionError)
        );
        assert_eq!((wcs[1].wr_id, wcs[1].status), (2, WcStatus::WrFlushError));

        // Both hosts learn of it, with our Terminate's cause.
        let cause = TerminateCause::Rdmap(RdmapError::LocalCatastrophic { code: 0xFF });
        let both = |w: &World| qp_error_cause(w, 0).is_some() && qp_error_cause(w, 1).is_some();
        let c = run_until(s.world, BUDGET, both).expect("QpError at both nodes");
        println!("QpError at both nodes after {c} more clocks");
        {
            let w = s.world.borrow();
            assert_eq!(qp_error_cause(&w, 0), Some(Some(cause)), "A's event");
            assert_eq!(
                qp_error_cause(&w, 1),
                Some(Some(cause)),
                "B's event: the Terminate it received"
            );
        }
        // Nothing of either WR reached B: its regions are unchanged, and its
        // receive is flushed (by B's driver when it processes the QpError
        // event), not completed with data.
        let mut wc = [WorkCompletion::default()];
        run_until(s.world, BUDGET, |_| {
            s.b.process_events().unwrap();
            s.rcq_b.poll(&mut wc).unwrap() == 1
        })
        .expect("B's receive flushed");
        assert_eq!((wc[0].wr_id, wc[0].status), (90, WcStatus::WrFlushError));
        s.check_b("after the refused Write");
        assert!(s.world.borrow().nodes[1].hw.borrow().placed.is_empty());
    });
}

/// The Terminate cause of node `n`'s first QpError event, if it has one.
fn qp_error_cause(w: &World, n: usize) -> Option<Option<TerminateCause>> {
    w.nodes[n]
        .hw
        .borrow()
        .events
        .iter()
        .map(|e| Event::parse(e).unwrap())
        .find(|e| e.kind == EventKind::QpError)
        .map(|e| decode_term_cause(e.status).unwrap())
}
/// Send with Invalidate through the driver only (RFC 5040 §5.3, §6.10): A's `SendOp::SendWithInv` names B's
/// region; B's receive completes with `invalidated_rkey`; an RDMA Write
/// from A through that STag afterwards is refused at B with a Terminate
/// (DDP "Invalid STag") and not one octet of B's region changes; B's QP
/// goes to error; B deregisters the remotely invalidated region cleanly.
///
/// References: the driver's completions, `rnic_wire::terminate` for the
/// Terminate cause, `rnic_wire::abi::mailbox::Event` for B's QpError, and
/// the data the test wrote (B's buffers compared octet by octet).
#[test]
fn send_with_invalidate_then_write_fails_through_the_driver() {
    with_pair("verbs_send_inv", |s| {
        // B's region to invalidate, registered here so it can be
        // deregistered at the end (`Mr::dereg` consumes it).
        let acc = |x| AccessFlags::from_bits(x).unwrap();
        let buf_inv = s.b.alloc_dma(REGION + 2 * GUARD).unwrap();
        let mr_inv = s
            .pd_b
            .reg_mr(
                &buf_inv,
                GUARD,
                REGION,
                acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
            )
            .unwrap();
        let rng = &s.rng;
        let shadow_inv = rng.borrow_mut().bytes(REGION + 2 * GUARD);
        buf_inv.write(0, &shadow_inv).unwrap();
        let rkey = mr_inv.rkey();

        // B posts a receive; A sends 300 octets with Invalidate of B's rkey.
        let data = rng.borrow_mut().bytes(300);
        s.buf_a.write(GUARD, &data).unwrap();
        s.qp_b
            .post_recv(&[RecvWr {
                wr_id: 77,
                sges: &[s.mr_br.sge(0, 1000).unwrap()],
            }])
            .unwrap();
        s.qp_a
            .post_send(&[SendWr {
                wr_id: 1,
                op: SendOp::SendWithInv(rkey),
                sges: &[s.mr_a.sge(0, 300).unwrap()],
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        let mut wc = [WorkCompletion::default()];
        let c = run_until(s.world, BUDGET, |_| s.rcq_b.poll(&mut wc).unwrap() == 1)
            .unwrap_or_else(|c| panic!("no receive completion at B in {c} clocks"));
        let wc = wc[0];
        println!("Send with Invalidate: B's completion after {c} clocks: {wc:?}");
        assert_eq!(
            (wc.wr_id, wc.status, wc.opcode, wc.byte_len as usize),
            (77, WcStatus::Success, WcOpcode::Recv, data.len())
        );
        assert_eq!(wc.invalidated_rkey, Some(rkey));
        let mut got = vec![0u8; 300];
        s.buf_br.read(GUARD, &mut got).unwrap();
        assert_eq!(got, data);

        // A Writes through the invalidated STag: refused at B, nothing lands.
        let w = rng.borrow_mut().bytes(512);
        s.buf_a.write(GUARD, &w).unwrap();
        s.qp_a
            .post_send(&[SendWr {
                wr_id: 2,
                op: SendOp::RdmaWrite(RemoteAddr {
                    addr: mr_inv.va(),
                    rkey,
                }),
                sges: &[s.mr_a.sge(0, 512).unwrap()],
                signaled: false,
                solicited: false,
                fence: false,
                inline_data: None,
            }])
            .unwrap();
        let (c, cause) = s.b_terminate(3000);
        println!("Write through the invalidated STag: B's Terminate after {c} clocks: {cause:?}");
        assert_eq!(
            cause,
            TerminateCause::Ddp(DdpError::TaggedBuffer(TaggedBufferError::InvalidStag))
        );
        let mut now = vec![0u8; REGION + 2 * GUARD];
        buf_inv.read(0, &mut now).unwrap();
        assert!(now == shadow_inv, "B's region changed");
        assert!(s.world.borrow().nodes[1].hw.borrow().placed.is_empty());
        {
            let w = s.world.borrow();
            let b = w.nodes[1].hw.borrow();
            assert_eq!(b.core.get_cnt_rxs_inv(), 1);
            assert_eq!(b.core.get_cnt_rxs_inv_err(), 0);
        }

        // B's QP goes to error (its firmware took the Terminate request).
        let qp_err = |w: &World| qp_error_cause(w, 1).is_some();
        run_until(s.world, BUDGET, qp_err).expect("B's host gets QpError");

        // The remotely invalidated region deregisters cleanly.
        mr_inv
            .dereg()
            .expect("dereg of a remotely invalidated region");
        println!("B deregistered the invalidated region");
    });
}

/// The clocks of A's payload DMA reads (`msg_rate::PAY_TAGS`) in its DMA log
/// from entry `from` on, and the log's length now.
fn a_payload_reads(s: &S, from: usize) -> (usize, usize) {
    let w = s.world.borrow();
    let a = w.nodes[0].hw.borrow();
    let n = a.dma.log()[from..]
        .iter()
        .filter(|e| matches!(e, DmaEvent::ReadReq { tag, .. } if rnic_sim::msg_rate::PAY_TAGS.contains(tag)))
        .count();
    (n, a.dma.log().len())
}

/// Inline Writes and Sends (`SendWr::inline_data`, `IBV_SEND_INLINE`):
/// every length from 0 to the device's `max_inline_data` (96) lands
/// byte-exact at B, each Send completes there with its length, and A reads
/// no payload from host memory for any of them (its DMA log), while one
/// Write from a buffer afterwards does (so the check can fail). An
/// over-long message, one with SGEs as well, and an inline RDMA Read are
/// the driver's typed errors, and nothing is posted for them.
#[test]
fn inline_writes_and_sends() {
    with_pair("verbs_inline", |s| {
        let max = s.b.caps().max_inline_data();
        assert_eq!(max, rnic_wire::abi::wqe::MAX_INLINE_DATA, "CAPS[31:24]");
        let log0 = {
            let w = s.world.borrow();
            let mut a = w.nodes[0].hw.borrow_mut();
            a.dma.set_log(true);
            a.dma.log().len()
        };
        let remote = |dst: usize| RemoteAddr {
            addr: s.mr_bw.va() + dst as u64,
            rkey: s.mr_bw.rkey(),
        };
        let wr = |wr_id, op, data: &[u8]| {
            s.qp_a.post_send(&[SendWr {
                wr_id,
                op,
                sges: &[],
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: Some(data),
            }])
        };
        let poll_a = |what: &str| {
            let mut wc = [WorkCompletion::default()];
            run_until(s.world, BUDGET, |_| s.scq_a.poll(&mut wc).unwrap() == 1)
                .unwrap_or_else(|c| panic!("{what}: no send completion in {c} clocks"));
            assert_eq!(wc[0].status, WcStatus::Success, "{what}: {:?}", wc[0]);
            wc[0]
        };
        for len in (0..=max).step_by(7).chain([8, 63, 64, 65, 95, max]) {
            // Write: the bytes come from the WR, not from A's buffer.
            let data = s.rng.borrow_mut().bytes(len);
            let dst = (len * 53) % (REGION - max);
            wr(len as u64, SendOp::RdmaWrite(remote(dst)), &data).unwrap();
            let wc = poll_a(&format!("inline Write of {len}"));
            assert_eq!((wc.wr_id, wc.opcode), (len as u64, WcOpcode::RdmaWrite));
            s.idle(300);
            s.shadow_w.borrow_mut()[GUARD + dst..GUARD + dst + len].copy_from_slice(&data);
            s.check_b(&format!("after an inline Write of {len}"));
            // Send into a receive B posted.
            let data = s.rng.borrow_mut().bytes(len);
            let rsge = [s.mr_br.sge(dst as u64, max as u32).unwrap()];
            s.qp_b
                .post_recv(&[RecvWr {
                    wr_id: 7000 + len as u64,
                    sges: &rsge,
                }])
                .unwrap();
            wr(5000 + len as u64, SendOp::Send, &data).unwrap();
            let mut rwc = [WorkCompletion::default()];
            run_until(s.world, BUDGET, |_| s.rcq_b.poll(&mut rwc).unwrap() == 1)
                .unwrap_or_else(|c| panic!("inline Send of {len}: no receive CQE in {c}"));
            assert_eq!(rwc[0].status, WcStatus::Success, "{:?}", rwc[0]);
            assert_eq!(
                (rwc[0].wr_id, rwc[0].byte_len as usize),
                (7000 + len as u64, len)
            );
            poll_a(&format!("inline Send of {len}"));
            s.shadow_r.borrow_mut()[GUARD + dst..GUARD + dst + len].copy_from_slice(&data);
            s.check_b(&format!("after an inline Send of {len}"));
        }
        let (n, log1) = a_payload_reads(s, log0);
        assert_eq!(n, 0, "A read payload for inline WRs");
        // A Write from a buffer reads its payload.
        s.write(0, 64);
        assert!(a_payload_reads(s, log1).0 > 0, "a buffered Write reads");
        // Refusals, nothing posted.
        let long = vec![0u8; max + 1];
        assert!(matches!(
            wr(1, SendOp::RdmaWrite(remote(0)), &long),
            Err(Error::BadWr {
                index: 0,
                reason: WrError::InlineTooLong { given, max: m }
            }) if given == max + 1 && m == max
        ));
        assert!(matches!(
            wr(2, SendOp::RdmaRead(remote(0)), &[1, 2, 3]),
            Err(Error::BadWr {
                reason: WrError::InlineNotAllowed,
                ..
            })
        ));
        let sge = [s.mr_a.sge(0, 8).unwrap()];
        let with_sges = s.qp_a.post_send(&[SendWr {
            wr_id: 3,
            op: SendOp::Send,
            sges: &sge,
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: Some(&[1, 2, 3]),
        }]);
        assert!(matches!(
            with_sges,
            Err(Error::BadWr {
                reason: WrError::InlineNotAllowed,
                ..
            })
        ));
        s.idle(2000);
        let mut wc = [WorkCompletion::default()];
        assert_eq!(s.scq_a.poll(&mut wc).unwrap(), 0, "a refused WR completed");
        assert!(s.terms_b().is_empty(), "{:?}", s.terms_b());
    });
}
