//! Message rate over the RTL: two co-simulated nodes ([`world_pair`], each a
//! Verilated `rnic_core` with its firmware, host memory and DMA server),
//! driven only through `rnic_driver`. A opens `qps` RC connections to B
//! (MPA rev 2, CRC on, markers off), then keeps every send queue full of
//! small RDMA Writes or Sends (`sq_depth` outstanding per QP, all signaled;
//! each completion polled at A frees its slot, and every QP's freed slots
//! are filled again with one `post_send`, one doorbell). For Sends, B keeps
//! `rq_depth` receives posted per QP and reposts as its receive CQEs come.
//! The host side of both nodes polls between rounds of the world (a round
//! is one firmware poll of each node, a few clocks).
//!
//! Every message has its own slot in A's source and in B's buffer (the
//! Write target, or the receive buffers), so the run ends with B's whole buffer checked
//! against A's source (and the guards around it unchanged), and every
//! completion is checked for status, opcode and posting order per QP.
//!
//! What is measured, in core clocks (156.25 MHz, 6.4 ns): from the first
//! `post_send` to the last message placed at B (Write: the placement
//! record covering its last octet; Send: B's receive CQE polled) and to
//! the last send CQE polled at A (which waits for B's ACK), the span of A's
//! data frames on the link, and, from both nodes' DMA logs, where the
//! clocks go (A: WQE fetches, payload reads, CQE writes; B: receive WQE
//! reads, data and CQE writes). The rate is
//! set against the wire limit for one message per frame
//! ([`message_wire_octets`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;

use rnic_driver::{
    AccessFlags, Cq, DmaMem, EventKind, Qp, RecvWr, RemoteAddr, SendOp, SendWr, WorkCompletion,
};
use rnic_wire::abi::cqe::{WcOpcode, WcStatus};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::ddp::{TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN};

use crate::clock::Timing;
use crate::dma::DmaEvent;
use crate::link::{LinkConfig, Side};
use crate::node::World;
use crate::rng::Rng;
use crate::rtl_run::{
    connect_params, expect_event, open_node, tcp_of, wire_limit, world_pair, GUARD, MPA_REV2_CRC,
    PORT, READ_DEPTH,
};

/// DMA read tags (docs/rtl.md "Transmit", "Completions"): `wqe_fetch`
/// uses 0..=3, `tx_seg`'s payload reads `0x80 | slot` (slot 0..=7 in the
/// sim profile; the DMA read arbiter gives it 0x80..=0x8F), `recv_wqe`
/// 0x40..=0x4F.
pub(crate) const WQE_TAGS: std::ops::RangeInclusive<u8> = 0x00..=0x03;
pub const PAY_TAGS: std::ops::RangeInclusive<u8> = 0x80..=0x8F;
const RECV_WQE_TAGS: std::ops::RangeInclusive<u8> = 0x40..=0x4F;

/// The message kinds measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MsgOp {
    Write,
    Send,
}

impl MsgOp {
    pub fn name(self) -> &'static str {
        match self {
            MsgOp::Write => "RDMA Write",
            MsgOp::Send => "Send",
        }
    }

    /// DDP + RDMAP header octets (RFC 5041 §4.2, §4.3): tagged 14,
    /// untagged 18.
    pub fn ddp_header(self) -> usize {
        match self {
            MsgOp::Write => TAGGED_HEADER_LEN,
            MsgOp::Send => UNTAGGED_HEADER_LEN,
        }
    }

    fn wc_opcode(self) -> WcOpcode {
        match self {
            MsgOp::Write => WcOpcode::RdmaWrite,
            MsgOp::Send => WcOpcode::Send,
        }
    }
}

/// Wire octets of one `size`-octet message sent as one FPDU in one frame
/// (what the device does with a message below MULPDU): preamble + SFD 8,
/// Ethernet 14, IPv4 20, TCP 20 (no options: the device sends no
/// timestamps), MPA length 2 + DDP/RDMAP header + payload padded to 4 +
/// CRC 4, FCS 4, inter-frame gap 12 ([`wire_limit`] for a MULPDU of
/// exactly header + `size`). With markers, the average share of the
/// stream (4 octets per 512) is added. B's ACKs go the other way and are
/// not counted.
pub fn message_wire_octets(op: MsgOp, size: usize, markers: bool) -> f64 {
    let hdr = op.ddp_header();
    let ulpdu = u16::try_from(size + hdr).expect("a message of one FPDU");
    wire_limit(ulpdu, markers, hdr).1
}

/// Million messages per second `t`'s port carries (one message per
/// frame).
pub fn wire_limit_mmsg(t: Timing, op: MsgOp, size: usize, markers: bool) -> f64 {
    t.port_gbps() * 1e3 / 8.0 / message_wire_octets(op, size, markers)
}

/// Million messages per second for `messages` in `clocks` of `t`'s clock.
pub fn mmsg(t: Timing, messages: u64, clocks: u64) -> f64 {
    if clocks == 0 {
        0.0
    } else {
        messages as f64 * t.mhz() / clocks as f64
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct MsgRateConfig {
    pub op: MsgOp,
    /// Connections (one QP each on A and on B).
    pub qps: usize,
    /// Messages per QP.
    pub messages: usize,
    /// Octets per message.
    pub size: usize,
    /// Send queue depth per QP: the outstanding messages kept posted.
    pub sq_depth: u32,
    /// Receives kept posted per QP at B (Send).
    pub rq_depth: u32,
    /// Seed of the data.
    pub seed: u64,
    /// Clocks the data phase may take before it is called a stall.
    pub budget: u64,
    /// Keep both nodes' DMA logs for the breakdown.
    pub dma_log: bool,
    /// A Verilator VCD trace over the data phase of node 0 (A, the
    /// sender) or 1 (B).
    pub vcd: Option<(usize, std::path::PathBuf)>,
    /// Both DMA servers' read round trip, clocks (`None`: the default
    /// 78 = 500 ns): how much of the rate the read latency decides. At
    /// least the write latency (39): with 8 or 30 the two-node run did not
    /// get through (so shorter ones are refused here; not looked into).
    pub read_latency: Option<u64>,
    /// What a clock stands for (`World::set_timing`; `read_latency` is in
    /// its clocks).
    pub timing: Timing,
    /// Post every message inline (`SendWr::inline_data`: its octets in the
    /// WQE, no payload read at A); `size` at most 96.
    pub inline: bool,
}

impl Default for MsgRateConfig {
    fn default() -> Self {
        MsgRateConfig {
            op: MsgOp::Write,
            qps: 1,
            messages: 64,
            size: 64,
            sq_depth: 64,
            rq_depth: 128,
            seed: 1,
            budget: 2_000_000,
            dma_log: false,
            vcd: None,
            read_latency: None,
            timing: Timing::DATAPATH,
            inline: false,
        }
    }
}

/// One kind of DMA read, from a node's DMA log.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadClass {
    pub reads: u64,
    pub octets: u64,
    /// Clocks from the first to the last request.
    pub span: u64,
    /// Sum over the reads of request → last completion beat.
    pub busy: u64,
    first: Option<u64>,
}

impl ReadClass {
    fn request(&mut self, cycle: u64, len: usize) {
        self.reads += 1;
        self.octets += len as u64;
        let first = *self.first.get_or_insert(cycle);
        self.span = cycle - first;
    }

    /// Mean clocks between requests.
    pub fn interval(&self) -> f64 {
        self.span as f64 / self.reads.saturating_sub(1).max(1) as f64
    }

    /// Mean clocks from request to last beat.
    pub fn latency(&self) -> f64 {
        self.busy as f64 / self.reads.max(1) as f64
    }

    /// Mean reads in flight over the span.
    pub fn in_flight(&self) -> f64 {
        self.busy as f64 / self.span.max(1) as f64
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "reads": self.reads,
            "octets": self.octets,
            "span": self.span,
            "busy": self.busy,
        })
    }

    fn describe(&self, what: &str, n: f64) -> String {
        format!(
            "{what} {} ({:.2}/msg, {:.0} octets/msg), one every {:.1} clocks, {:.1} clocks each \
             (request → last beat), {:.2} in flight",
            self.reads,
            self.reads as f64 / n,
            self.octets as f64 / n,
            self.interval(),
            self.latency(),
            self.in_flight()
        )
    }
}

/// A node's DMA over the data phase, from its log.
#[derive(Debug, Clone, Default)]
pub struct DmaBreakdown {
    /// Send WQE fetches (`wqe_fetch`: one read of up to 8 WQEs).
    pub wqe: ReadClass,
    /// Payload reads (`tx_seg`: one per segment).
    pub payload: ReadClass,
    /// Receive WQE reads (`recv_wqe`).
    pub recv_wqe: ReadClass,
    /// Every read, and the writes (placement, CQEs) and their octets.
    pub all_reads: ReadClass,
    pub writes: u64,
    pub write_octets: u64,
}

impl DmaBreakdown {
    fn from_log(log: &[DmaEvent]) -> Self {
        let mut b = DmaBreakdown::default();
        // request cycle per tag, for the completion's end
        let mut open: HashMap<u8, u64> = HashMap::new();
        for e in log {
            match *e {
                DmaEvent::ReadReq {
                    cycle, tag, len, ..
                } => {
                    open.insert(tag, cycle);
                    b.all_reads.request(cycle, len);
                    if let Some(c) = b.class(tag) {
                        c.request(cycle, len);
                    }
                }
                DmaEvent::CplEnd { cycle, tag } => {
                    if let Some(t0) = open.remove(&tag) {
                        b.all_reads.busy += cycle - t0;
                        if let Some(c) = b.class(tag) {
                            c.busy += cycle - t0;
                        }
                    }
                }
                DmaEvent::Write { len, .. } => {
                    b.writes += 1;
                    b.write_octets += len as u64;
                }
                DmaEvent::CplStart { .. } => {}
            }
        }
        b
    }

    fn class(&mut self, tag: u8) -> Option<&mut ReadClass> {
        if WQE_TAGS.contains(&tag) {
            Some(&mut self.wqe)
        } else if PAY_TAGS.contains(&tag) {
            Some(&mut self.payload)
        } else if RECV_WQE_TAGS.contains(&tag) {
            Some(&mut self.recv_wqe)
        } else {
            None
        }
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "wqe_fetch": self.wqe.json(),
            "payload": self.payload.json(),
            "recv_wqe": self.recv_wqe.json(),
            "all_reads": self.all_reads.json(),
            "writes": self.writes,
            "write_octets": self.write_octets,
        })
    }
}

/// The outcome of one run.
#[derive(Debug, Clone)]
pub struct MsgRateReport {
    pub config: MsgRateConfig,
    /// Messages in all (`qps × messages`).
    pub messages: u64,
    /// Clocks from the first post to the last message placed at B.
    pub post_to_placed: u64,
    /// Clocks from the first post to the last send CQE polled at A.
    pub post_to_cqe: u64,
    /// A's data frames on the link (TCP payload > 0) and the clocks from
    /// the first post to the first and to the last of them.
    pub data_frames: u64,
    pub first_frame: u64,
    pub last_frame: u64,
    /// A → B wire octets over the data phase (frames + 24 each).
    pub wire_octets: u64,
    /// A's doorbells (`cnt_db`), WQE fetches (`cnt_tx_fetch`), TX parks
    /// (`cnt_tx_park`) and window waits (`cnt_tx_wnd_wait`), data phase.
    pub doorbells: u64,
    pub fetches: u64,
    pub parks: u64,
    pub wnd_waits: u64,
    /// `post_send` calls at A.
    pub posts: u64,
    /// World rounds in the data phase.
    pub rounds: u64,
    /// B's frames dropped unacknowledged (`cnt_rx_overflow` +
    /// `cnt_rx_no_slot`), A's fast retransmits (`cnt_fretx_req`) and the
    /// firmware's replays (`RETX_CONN` writes), data phase.
    pub b_drops: u64,
    pub fast_retx: u64,
    pub replays: u64,
    /// A's and B's DMA (with `dma_log`).
    pub dma: Option<[DmaBreakdown; 2]>,
}

impl MsgRateReport {
    /// The measured rate (first post → last placed at B), million
    /// messages per second.
    pub fn mmsg(&self) -> f64 {
        mmsg(self.config.timing, self.messages, self.post_to_placed)
    }

    /// The rate between A's first and last data frame (the steady state,
    /// without the first message's latency).
    pub fn mmsg_frames(&self) -> f64 {
        mmsg(
            self.config.timing,
            self.data_frames.saturating_sub(1),
            self.last_frame - self.first_frame,
        )
    }

    /// The wire limit for this message.
    pub fn limit_mmsg(&self) -> f64 {
        wire_limit_mmsg(self.config.timing, self.config.op, self.config.size, false)
    }

    /// Clocks per message measured, and at the wire limit.
    pub fn clocks_per_msg(&self) -> f64 {
        self.post_to_placed as f64 / self.messages as f64
    }

    pub fn wire_clocks_per_msg(&self) -> f64 {
        message_wire_octets(self.config.op, self.config.size, false)
            / self.config.timing.port_octets_per_cycle()
    }

    /// One line for the table.
    pub fn line(&self) -> String {
        format!(
            "{:<17} {:>2} QP{} {:>6} × {} B: {:>9} clocks post → placed ({:.1} clocks/msg) \
             {:.3} Mmsg/s = {:.1} % of the wire limit {:.3} Mmsg/s ({:.2} clocks/msg); \
             frames first → last {:.3} Mmsg/s; → last send CQE {} clocks ({:.3} Mmsg/s)",
            format!(
                "{}{}",
                self.config.op.name(),
                if self.config.inline { " inline" } else { "" }
            ),
            self.config.qps,
            if self.config.qps == 1 { " " } else { "s" },
            self.messages,
            self.config.size,
            self.post_to_placed,
            self.clocks_per_msg(),
            self.mmsg(),
            100.0 * self.mmsg() / self.limit_mmsg(),
            self.limit_mmsg(),
            self.wire_clocks_per_msg(),
            self.mmsg_frames(),
            self.post_to_cqe,
            mmsg(self.config.timing, self.messages, self.post_to_cqe),
        )
    }

    /// Where the clocks go, per message.
    pub fn breakdown(&self) -> String {
        let n = self.messages as f64;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "  A: {} data frames, {} doorbells ({} post_send), {} WQE fetches, {} parks, {} window \
             waits, {} fast retransmits, {} replays; B: {} frames dropped unacknowledged; {} \
             rounds ({:.1} clocks each); link A → B busy {:.1} % from first to last data frame",
            self.data_frames,
            self.doorbells,
            self.posts,
            self.fetches,
            self.parks,
            self.wnd_waits,
            self.fast_retx,
            self.replays,
            self.b_drops,
            self.rounds,
            self.post_to_cqe as f64 / self.rounds.max(1) as f64,
            100.0 * self.wire_octets as f64
                / (self.config.timing.port_octets_per_cycle() * (self.last_frame - self.first_frame).max(1) as f64),
        );
        if let Some([a, b]) = &self.dma {
            let _ = writeln!(s, "  A's DMA: {}", a.payload.describe("payload reads", n));
            let _ = writeln!(
                s,
                "  A's DMA: {}; {:.0} read octets/msg in all; {} writes, {:.0} octets/msg (CQEs)",
                a.wqe.describe("WQE fetches", n),
                a.all_reads.octets as f64 / n,
                a.writes,
                a.write_octets as f64 / n,
            );
            if b.recv_wqe.reads > 0 {
                let _ = writeln!(
                    s,
                    "  B's DMA: {}",
                    b.recv_wqe.describe("receive WQE reads", n)
                );
            }
            let _ = writeln!(
                s,
                "  B's DMA: {} writes, {:.0} octets/msg (data, CQEs)",
                b.writes,
                b.write_octets as f64 / n,
            );
        }
        s
    }

    /// The report as JSON.
    pub fn json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "op": self.config.op.name(),
            "inline": self.config.inline,
            "qps": self.config.qps,
            "size": self.config.size,
            "messages": self.messages,
            "sq_depth": self.config.sq_depth,
            "rq_depth": self.config.rq_depth,
            "seed": self.config.seed,
            "dma_read_latency": self
                .config
                .read_latency
                .unwrap_or(self.config.timing.cycles_ns(crate::dma::READ_ROUND_TRIP_NS)),
            "post_to_placed_clocks": self.post_to_placed,
            "post_to_cqe_clocks": self.post_to_cqe,
            "clocks_per_msg": self.clocks_per_msg(),
            "mmsg_per_s": self.mmsg(),
            "mmsg_per_s_frames": self.mmsg_frames(),
            "mmsg_per_s_to_cqe": mmsg(self.config.timing, self.messages, self.post_to_cqe),
            "clock_mhz": self.config.timing.mhz(),
            "port_gbps": self.config.timing.port_gbps(),
            "wire_octets_per_msg": message_wire_octets(self.config.op, self.config.size, false),
            "wire_limit_mmsg_per_s": self.limit_mmsg(),
            "pct_of_wire_limit": 100.0 * self.mmsg() / self.limit_mmsg(),
            "data_frames": self.data_frames,
            "doorbells": self.doorbells,
            "posts": self.posts,
            "wqe_fetches": self.fetches,
            "parks": self.parks,
            "wnd_waits": self.wnd_waits,
            "rounds": self.rounds,
            "b_drops": self.b_drops,
            "fast_retx": self.fast_retx,
            "replays": self.replays,
        });
        if let Some([a, b]) = &self.dma {
            v["dma_a"] = a.json();
            v["dma_b"] = b.json();
        }
        v
    }
}

fn acc(bits: u8) -> AccessFlags {
    AccessFlags::from_bits(bits).expect("known access bits")
}

fn e<E: std::fmt::Debug>(who: &'static str) -> impl Fn(E) -> String {
    move |err| format!("{who}: {err:?}")
}

/// A's data frames seen by the link's hook: count, first and last clock,
/// wire octets.
#[derive(Debug, Default)]
struct FrameLog {
    frames: u64,
    first: Option<u64>,
    last: u64,
    wire: u64,
}

/// Runs one measurement.
pub fn run(cfg: &MsgRateConfig) -> Result<MsgRateReport, String> {
    if cfg.qps == 0 || cfg.messages == 0 || cfg.sq_depth == 0 {
        return Err("nothing to run".into());
    }
    // the default link: 1 µs one way
    let link = LinkConfig {
        delay: cfg.timing.cycles_per_us(),
        ..LinkConfig::default()
    };
    let world = world_pair(link, None)?;
    world.borrow_mut().set_timing(cfg.timing);
    if let Some(l) = cfg.read_latency {
        let w = cfg.timing.cycles_ns(crate::dma::WRITE_LATENCY_NS);
        if l < w {
            return Err(format!(
                "a read round trip of {l} clocks is below the write latency ({w})"
            ));
        }
        for n in &world.borrow().nodes {
            let mut hw = n.hw.borrow_mut();
            let dma = hw.dma.config().clone();
            hw.dma = crate::dma::DmaServer::new(crate::dma::DmaConfig {
                read_latency: l,
                ..dma
            });
        }
    }
    let a = open_node(&world, 0, 1500)?;
    let b = open_node(&world, 1, 1500)?;
    if (a.caps().max_qp as usize) < cfg.qps {
        return Err(format!(
            "{} QPs asked, the device has {}",
            cfg.qps,
            a.caps().max_qp
        ));
    }
    let (pd_a, pd_b) = (
        a.alloc_pd().map_err(e("A: pd"))?,
        b.alloc_pd().map_err(e("B: pd"))?,
    );
    let rq_depth = if cfg.op == MsgOp::Send {
        cfg.rq_depth.min(cfg.messages as u32).max(1)
    } else {
        1
    };
    // One CQ per side for all QPs, room for everything outstanding.
    let cq_a: Cq<'_, _> = a
        .create_cq(cfg.qps as u32 * cfg.sq_depth)
        .map_err(e("A: cq"))?;
    let cq_b: Cq<'_, _> = b.create_cq(cfg.qps as u32 * rq_depth).map_err(e("B: cq"))?;
    let qp_a: Vec<Qp<'_, _>> = (0..cfg.qps)
        .map(|_| pd_a.create_qp(&cq_a, &cq_a, cfg.sq_depth, 1))
        .collect::<Result<_, _>>()
        .map_err(e("A: qp"))?;
    let qp_b: Vec<Qp<'_, _>> = (0..cfg.qps)
        .map(|_| pd_b.create_qp(&cq_b, &cq_b, 1, rq_depth))
        .collect::<Result<_, _>>()
        .map_err(e("B: qp"))?;

    // The connections, one after the other through the CM.
    let _l = b.listen(PORT, 4).map_err(e("B: listen"))?;
    for (i, (qa, qb)) in qp_a.iter().zip(&qp_b).enumerate() {
        qa.connect(&connect_params(MPA_REV2_CRC), &[i as u8])
            .map_err(|err| format!("A: QP {i}: connect: {err:?}"))?;
        let creq = expect_event(&b, EventKind::ConnectRequest, "B")?;
        b.accept(creq.handle, qb, READ_DEPTH, READ_DEPTH, b"ok")
            .map_err(|err| format!("B: QP {i}: accept: {err:?}"))?;
        expect_event(&b, EventKind::Established, "B")?;
        expect_event(&a, EventKind::Established, "A")?;
    }

    // Memory: every message its own slot in A's source and in B's target
    // (the Write target, or the receive buffers), B's between guards.
    let (size, per_qp) = (cfg.size, cfg.messages);
    let total = cfg.qps * per_qp;
    let octets = total * size;
    let slot = |q: usize, k: usize| (q * per_qp + k) * size;
    let buf_a = a.alloc_dma(octets.max(1)).map_err(e("A: dma"))?;
    let buf_b = b.alloc_dma(octets + 2 * GUARD).map_err(e("B: dma"))?;
    let mr_a = pd_a
        .reg_mr(&buf_a, 0, octets.max(1), acc(ACCESS_LOCAL_WRITE))
        .map_err(e("A: mr"))?;
    let b_access = match cfg.op {
        MsgOp::Write => ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE,
        MsgOp::Send => ACCESS_LOCAL_WRITE,
    };
    let mr_b = pd_b
        .reg_mr(&buf_b, GUARD, octets.max(1), acc(b_access))
        .map_err(e("B: mr"))?;
    let mut rng = Rng::new(cfg.seed);
    let src = rng.bytes(octets);
    buf_a.write(0, &src).map_err(e("A: write"))?;
    buf_b
        .write(0, &vec![0xEE; octets + 2 * GUARD])
        .map_err(e("B: write"))?;

    // B's receives (Send): the first rq_depth per QP now, the rest as the
    // receive CQEs come.
    let mut recv_posted = vec![0usize; cfg.qps];
    let post_recvs = |q: usize, n: usize, posted: &mut [usize]| -> Result<(), String> {
        let from = posted[q];
        let n = n.min(per_qp - from);
        if n == 0 {
            return Ok(());
        }
        let sges = (from..from + n)
            .map(|k| Ok([mr_b.sge(slot(q, k) as u64, size as u32)?]))
            .collect::<Result<Vec<_>, rnic_driver::Error>>()
            .map_err(e("B: sge"))?;
        let wrs: Vec<RecvWr> = sges
            .iter()
            .enumerate()
            .map(|(i, s)| RecvWr {
                wr_id: (from + i) as u64,
                sges: s,
            })
            .collect();
        qp_b[q].post_recv(&wrs).map_err(e("B: post_recv"))?;
        posted[q] += n;
        Ok(())
    };
    if cfg.op == MsgOp::Send {
        for q in 0..cfg.qps {
            post_recvs(q, rq_depth as usize, &mut recv_posted)?;
        }
    }

    // A's posts: up to `n` more messages of QP q in one post_send.
    let mut posted = vec![0usize; cfg.qps];
    let mut posts = 0u64;
    let post_sends =
        |q: usize, n: usize, posted: &mut [usize], posts: &mut u64| -> Result<(), String> {
            let from = posted[q];
            let n = n.min(per_qp - from);
            if n == 0 {
                return Ok(());
            }
            let sges = (from..from + n)
                .map(|k| Ok([mr_a.sge(slot(q, k) as u64, size as u32)?]))
                .collect::<Result<Vec<_>, rnic_driver::Error>>()
                .map_err(e("A: sge"))?;
            let wrs: Vec<SendWr> = sges
                .iter()
                .enumerate()
                .map(|(i, s)| SendWr {
                    wr_id: (from + i) as u64,
                    op: match cfg.op {
                        MsgOp::Write => SendOp::RdmaWrite(RemoteAddr {
                            addr: mr_b.va() + slot(q, from + i) as u64,
                            rkey: mr_b.rkey(),
                        }),
                        MsgOp::Send => SendOp::Send,
                    },
                    sges: if cfg.inline { &[] } else { s },
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: cfg.inline.then(|| {
                        let at = slot(q, from + i);
                        &src[at..at + size]
                    }),
                })
                .collect();
            qp_a[q]
                .post_send(&wrs)
                .map_err(|err| format!("A: QP {q}: post_send: {err:?}"))?;
            posted[q] += n;
            *posts += 1;
            Ok(())
        };

    let qpn_a: HashMap<u32, usize> = qp_a.iter().enumerate().map(|(i, q)| (q.qpn(), i)).collect();
    let qpn_b: HashMap<u32, usize> = qp_b.iter().enumerate().map(|(i, q)| (q.qpn(), i)).collect();
    let frames = Rc::new(RefCell::new(FrameLog::default()));
    {
        let frames = frames.clone();
        let mut w = world.borrow_mut();
        w.tx_hook = Some(Box::new(move |side, t, f| {
            if side == Side::A && tcp_of(f).is_some_and(|(_, _, len)| len > 0) {
                let mut l = frames.borrow_mut();
                l.frames += 1;
                l.first.get_or_insert(t);
                l.last = t;
                l.wire += (f.len() + crate::model_run::ETHERNET_WIRE_OVERHEAD) as u64;
            }
            true
        }));
        if cfg.dma_log {
            for n in &w.nodes {
                n.hw.borrow_mut().dma.set_log(true);
            }
        }
        if let Some((i, v)) = &cfg.vcd {
            w.nodes[*i]
                .hw
                .borrow_mut()
                .core
                .trace_vcd(v)
                .map_err(|err| format!("vcd {}: {err}", v.display()))?;
        }
    }
    let counters = |w: &World| {
        let hw = w.nodes[0].hw.borrow();
        let c = &hw.core;
        let hb = w.nodes[1].hw.borrow();
        [
            c.get_cnt_db(),
            c.get_cnt_tx_fetch(),
            c.get_cnt_tx_park(),
            c.get_cnt_tx_wnd_wait(),
            c.get_cnt_fretx_req(),
            hw.retx_writes.len() as u64,
            hb.core.get_cnt_rx_overflow() + hb.core.get_cnt_rx_no_slot(),
        ]
    };
    let c0 = counters(&world.borrow());
    let placed0 = world.borrow().nodes[1].hw.borrow().placed.len();
    let rounds0 = world.borrow().rounds;
    let dma_log0 = world
        .borrow()
        .nodes
        .iter()
        .map(|n| n.hw.borrow().dma.log().len())
        .collect::<Vec<_>>();

    // The data phase.
    let t0 = world.borrow().cycle();
    for q in 0..cfg.qps {
        post_sends(q, cfg.sq_depth as usize, &mut posted, &mut posts)?;
    }
    let mut done_a = vec![0usize; cfg.qps];
    let mut done_b = vec![0usize; cfg.qps];
    let (mut n_a, mut n_b) = (0usize, 0usize);
    let mut placed_octets = 0usize;
    let mut placed_idx = placed0;
    let (mut t_placed, mut t_cqe) = (None, None);
    let mut wc = vec![WorkCompletion::default(); 256];
    let stall = |what: &str, w: &World, n_a: usize, n_b: usize, placed_octets: usize| {
        let hw = w.nodes[0].hw.borrow();
        format!(
            "{what} after {} clocks: {n_a} of {total} send CQEs at A, {n_b} receive CQEs and \
             {placed_octets} octets placed at B; A tx_frames {} tx_park {} wnd_wait {}; B terms {:?}",
            w.cycle() - t0,
            hw.core.get_cnt_tx_frames(),
            hw.core.get_cnt_tx_park(),
            hw.core.get_cnt_tx_wnd_wait(),
            w.nodes[1].hw.borrow().terms,
        )
    };
    while t_placed.is_none() || t_cqe.is_none() {
        world.borrow_mut().round();
        let now = world.borrow().cycle();
        if now - t0 > cfg.budget {
            return Err(stall("stall", &world.borrow(), n_a, n_b, placed_octets));
        }
        // A: send completions, in posting order per QP; refill.
        let mut freed = vec![0usize; cfg.qps];
        loop {
            let n = cq_a.poll(&mut wc).map_err(e("A: poll"))?;
            for w in &wc[..n] {
                let q = *qpn_a
                    .get(&w.qp_num)
                    .ok_or_else(|| format!("A: CQE of unknown QP {}", w.qp_num))?;
                if w.status != WcStatus::Success
                    || w.opcode != cfg.op.wc_opcode()
                    || w.wr_id != done_a[q] as u64
                {
                    return Err(format!(
                        "A: QP {q}: {w:?}, want message {} ({:?}, Success)",
                        done_a[q],
                        cfg.op.wc_opcode()
                    ));
                }
                done_a[q] += 1;
                freed[q] += 1;
            }
            n_a += n;
            if n < wc.len() {
                break;
            }
        }
        for (q, &f) in freed.iter().enumerate() {
            if f > 0 {
                post_sends(q, f, &mut posted, &mut posts)?;
            }
        }
        // B: what was placed.
        match cfg.op {
            MsgOp::Write => {
                let w = world.borrow();
                let hw = w.nodes[1].hw.borrow();
                for p in &hw.placed[placed_idx..] {
                    placed_octets += p.2 as usize;
                }
                placed_idx = hw.placed.len();
            }
            MsgOp::Send => {
                let mut freed = vec![0usize; cfg.qps];
                loop {
                    let n = cq_b.poll(&mut wc).map_err(e("B: poll"))?;
                    for w in &wc[..n] {
                        let q = *qpn_b
                            .get(&w.qp_num)
                            .ok_or_else(|| format!("B: CQE of unknown QP {}", w.qp_num))?;
                        if w.status != WcStatus::Success
                            || w.opcode != WcOpcode::Recv
                            || w.wr_id != done_b[q] as u64
                            || w.byte_len as usize != size
                        {
                            return Err(format!(
                                "B: QP {q}: {w:?}, want receive {} of {size} octets",
                                done_b[q]
                            ));
                        }
                        done_b[q] += 1;
                        freed[q] += 1;
                        placed_octets += size;
                    }
                    n_b += n;
                    if n < wc.len() {
                        break;
                    }
                }
                for (q, &f) in freed.iter().enumerate() {
                    if f > 0 {
                        post_recvs(q, f, &mut recv_posted)?;
                    }
                }
            }
        }
        let now = world.borrow().cycle();
        if t_placed.is_none() && placed_octets >= octets {
            t_placed = Some(now - t0);
        }
        if t_cqe.is_none() && n_a >= total {
            t_cqe = Some(now - t0);
        }
    }
    let c1 = counters(&world.borrow());
    let rounds = world.borrow().rounds - rounds0;
    let dma = cfg.dma_log.then(|| {
        let w = world.borrow();
        let of =
            |i: usize| DmaBreakdown::from_log(&w.nodes[i].hw.borrow().dma.log()[dma_log0[i]..]);
        [of(0), of(1)]
    });
    world.borrow_mut().tx_hook = None;
    if let Some((i, _)) = &cfg.vcd {
        world.borrow().nodes[*i].hw.borrow_mut().core.close_vcd();
    }

    // A little more: nothing extra may complete, nothing may be refused.
    for _ in 0..2_000 {
        world.borrow_mut().round();
    }
    if cq_a.poll(&mut wc).map_err(e("A: poll"))? != 0 {
        return Err("A: a send CQE beyond the messages posted".into());
    }
    if cfg.op == MsgOp::Send && cq_b.poll(&mut wc).map_err(e("B: poll"))? != 0 {
        return Err("B: a receive CQE beyond the Sends".into());
    }
    if !world.borrow().nodes[1].hw.borrow().terms.is_empty() {
        return Err(stall(
            "Terminate at B",
            &world.borrow(),
            n_a,
            n_b,
            placed_octets,
        ));
    }
    if placed_octets != octets {
        return Err(format!("B: {placed_octets} octets placed, {octets} sent"));
    }
    // B's whole buffer: guards, then every message in its slot.
    let mut got = vec![0u8; octets + 2 * GUARD];
    buf_b.read(0, &mut got).map_err(e("B: read"))?;
    for (i, &g) in got.iter().enumerate() {
        let want = if (GUARD..GUARD + octets).contains(&i) {
            src[i - GUARD]
        } else {
            0xEE
        };
        if g != want {
            let k = i.saturating_sub(GUARD) / size.max(1);
            return Err(format!(
                "B's buffer differs at octet {i} (QP {}, message {}): {g:#04x}, want {want:#04x}",
                k / per_qp,
                k % per_qp
            ));
        }
    }

    let f = frames.borrow();
    Ok(MsgRateReport {
        config: cfg.clone(),
        messages: total as u64,
        post_to_placed: t_placed.unwrap_or(0),
        post_to_cqe: t_cqe.unwrap_or(0),
        data_frames: f.frames,
        first_frame: f.first.map_or(0, |c| c - t0),
        last_frame: f.last - t0,
        wire_octets: f.wire,
        doorbells: c1[0] - c0[0],
        fetches: c1[1] - c0[1],
        parks: c1[2] - c0[2],
        wnd_waits: c1[3] - c0[3],
        fast_retx: c1[4] - c0[4],
        replays: c1[5] - c0[5],
        b_drops: c1[6] - c0[6],
        posts,
        rounds,
        dma,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-octet RDMA Write by hand: MPA length 2 + DDP/RDMAP 14 + 64 =
    /// 80 (a multiple of 4: no pad) + CRC 4 = 84; + TCP 20 + IPv4 20 +
    /// Ethernet 14 = 138; + FCS 4 + preamble/SFD 8 + gap 12 = 162 octets.
    /// A Send: 2 + 18 + 64 = 84 + 4 = 88 → 166. A 1-octet Write: 2 + 14 +
    /// 1 = 17, padded to 20, + 4 = 24 → 102.
    #[test]
    fn wire_octets_by_hand() {
        assert_eq!(message_wire_octets(MsgOp::Write, 64, false), 162.0);
        assert_eq!(message_wire_octets(MsgOp::Send, 64, false), 166.0);
        assert_eq!(message_wire_octets(MsgOp::Write, 1, false), 102.0);
        // 10 Gb/s = 1,250 M octets/s
        let t = Timing::DATAPATH;
        assert!((wire_limit_mmsg(t, MsgOp::Write, 64, false) - 1250.0 / 162.0).abs() < 1e-9);
        assert!((wire_limit_mmsg(t, MsgOp::Send, 64, false) - 1250.0 / 166.0).abs() < 1e-9);
        // 162 octets at 8 a clock: 20.25 clocks a message
        assert!((mmsg(t, 400, 8100) - wire_limit_mmsg(t, MsgOp::Write, 64, false)).abs() < 1e-9);
        // the board: 1 Gb/s = 125 M octets/s; 162 octets at 2 a clock of
        // 62.5 MHz, 81 clocks a message
        let b = Timing::BOARD;
        assert!((wire_limit_mmsg(b, MsgOp::Write, 64, false) - 125.0 / 162.0).abs() < 1e-9);
        assert!((mmsg(b, 400, 32_400) - wire_limit_mmsg(b, MsgOp::Write, 64, false)).abs() < 1e-9);
    }
}
