//! perftest's `ib_write_bw -R` and `ib_read_bw -R` (linux-rdma/perftest,
//! rdma_cm mode) on the driver's verbs API, server and client, as perftest
//! 4.5 (version string "6.06") runs them.
//!
//! Two connections to the same port: the first carries perftest's
//! parameter exchange, the second the test traffic. Every exchange on the
//! first is one Send each way of the same length, the client's first:
//!
//! | # | what | octets |
//! |---|---|---|
//! | 1 | version string, NUL-padded | 16 |
//! | 2, 3 | cycle buffer and cache line size, big-endian | 4, 4 |
//! | 4 | MTU as a decimal string ("3" for 1024) | 2 |
//! | 5 | handshake (a [`Dest`], zero at this point) | 56 |
//! | — | the client opens the second connection | |
//! | 6–9 | handshakes: each side's [`Dest`] (its buffer's rkey and address) | 56 |
//! | — | the client RDMA Writes `iters` × `size` octets to the server's buffer (`ib_write_bw`) or RDMA Reads them from it (`ib_read_bw`) | |
//! | 10 | handshake: the client is done | 56 |
//! | 11–15 | bandwidth report: size, iterations, peak, average (MB/s), message rate, big-endian | 8 each |
//! | 16 | handshake: close | 56 |
//!
//! `ib_send_bw` differs after exchange 9: the server posts its receives,
//! exchange 10 says so, the client Sends `iters` messages paced by credits
//! ([`send_depths`]), and exchange 11 closes; no bandwidth reports are
//! traded.
//!
//! Then the client closes the test connection and the server the first.
//! For `ib_read_bw` both connections ask for IRD = ORD = perftest's
//! `out_reads` (RFC 6581 §2); for `ib_write_bw` for none.

use std::cell::RefCell;
use std::net::Ipv4Addr;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rnic_driver::{
    AccessFlags, CmEvent, ConnectParams, Context, Cq, DmaMem, EventKind, MpaOptions, Mr, Qp,
    RecvWr, RemoteAddr, SendOp, SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};

use crate::node::World;
use crate::rtl_run::CLOCKS_PER_US;
use crate::sim_bus::{SimBus, SimDma};

/// perftest's port.
pub const PORT: u16 = 18515;
/// The version this exchange follows (perftest 4.5-0.17 sends "6.06").
pub const VERSION: &str = "6.06";
/// perftest refuses a peer older than this (`check_version_compatibility`).
const MIN_PEER_VERSION: f64 = 5.70;
/// `struct pingpong_dest` on the wire (x86-64 layout, fields big-endian).
pub const DEST_LEN: usize = 56;
/// Our cycle buffer and cache line size (what a 4 KiB-page x86 host sends).
const CYCLE_BUFFER: u32 = 4096;
const CACHE_LINE: u32 = 64;
/// The MTU exchange: `ibv_mtu` 3 (1024 octets) as text, NUL-terminated.
const MTU: [u8; 2] = *b"3\0";
/// Writes in flight at once (perftest's `-t` default is 128).
const TX_DEPTH: usize = 16;
/// The node's Read depths: its Read Request queue holds 16 (IRD), and the
/// core keeps at most 8 Reads outstanding per QP (ORD): docs/rtl.md.
const NODE_IRD: u16 = 16;
const NODE_ORD: u16 = 8;

/// Which test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `ib_write_bw`: the client RDMA Writes into the server's buffer.
    Write,
    /// `ib_read_bw`: the client RDMA Reads the server's buffer.
    Read,
    /// `ib_send_bw`: the client Sends into the server's posted receives.
    Send,
}

/// `ib_send_bw`'s receive depth for `iters` messages (perftest: 512, at
/// most `iters`, made even) and how often the server grants credit.
///
/// Over iWARP perftest paces Sends with credits: the client sends only
/// while `sent + 1 - credit < rx_depth`, where `credit` is a 32-bit count
/// in its own memory (host order, little-endian on x86-64) that the server
/// RDMA Writes after every `rx_depth / 3`-th receive (`run_iter_bw_server`,
/// `ctx_alloc_credit`); the handshake's rkey and vaddr name that counter.
pub fn send_depths(iters: usize) -> (usize, usize) {
    let mut rx = iters.min(512);
    if !rx.is_multiple_of(2) {
        rx += 1;
    }
    (rx, (rx / 3).max(1))
}

/// The most receives the node posts at once for `ib_send_bw`.
const NODE_RX_DEPTH: usize = 128;

/// perftest's `struct pingpong_dest`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dest {
    pub lid: u32,
    pub out_reads: u32,
    pub qpn: u32,
    pub psn: u32,
    pub rkey: u32,
    pub vaddr: u64,
    pub gid: [u8; 16],
    pub srqn: u32,
    pub gid_index: u32,
}

impl Dest {
    pub fn emit(&self) -> [u8; DEST_LEN] {
        let mut b = [0u8; DEST_LEN];
        for (i, v) in [self.lid, self.out_reads, self.qpn, self.psn, self.rkey]
            .iter()
            .enumerate()
        {
            b[4 * i..4 * i + 4].copy_from_slice(&v.to_be_bytes());
        }
        // 4 octets of padding before the 8-aligned vaddr
        b[24..32].copy_from_slice(&self.vaddr.to_be_bytes());
        b[32..48].copy_from_slice(&self.gid);
        b[48..52].copy_from_slice(&self.srqn.to_be_bytes());
        b[52..56].copy_from_slice(&self.gid_index.to_be_bytes());
        b
    }

    pub fn parse(b: &[u8]) -> Option<Dest> {
        if b.len() != DEST_LEN {
            return None;
        }
        let u = |o: usize| u32::from_be_bytes(b[o..o + 4].try_into().unwrap());
        Some(Dest {
            lid: u(0),
            out_reads: u(4),
            qpn: u(8),
            psn: u(12),
            rkey: u(16),
            vaddr: u64::from_be_bytes(b[24..32].try_into().unwrap()),
            gid: b[32..48].try_into().unwrap(),
            srqn: u(48),
            gid_index: u(52),
        })
    }
}

/// A bandwidth report (`struct bw_report_data`'s exchanged fields).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BwReport {
    pub size: u64,
    pub iters: u64,
    /// MB/s, perftest's MB being 2^20 octets.
    pub bw_peak: f64,
    pub bw_avg: f64,
    /// Million messages per second.
    pub msg_rate: f64,
}

impl BwReport {
    fn fields(&self) -> [[u8; 8]; 5] {
        [
            self.size.to_be_bytes(),
            self.iters.to_be_bytes(),
            self.bw_peak.to_bits().to_be_bytes(),
            self.bw_avg.to_bits().to_be_bytes(),
            self.msg_rate.to_bits().to_be_bytes(),
        ]
    }

    fn from_fields(f: &[[u8; 8]; 5]) -> BwReport {
        let d = |b: &[u8; 8]| f64::from_bits(u64::from_be_bytes(*b));
        BwReport {
            size: u64::from_be_bytes(f[0]),
            iters: u64::from_be_bytes(f[1]),
            bw_peak: d(&f[2]),
            bw_avg: d(&f[3]),
            msg_rate: d(&f[4]),
        }
    }
}

/// How to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub verb: Verb,
    /// `-s`: message size.
    pub size: usize,
    /// `-n`: iterations.
    pub iters: usize,
    pub port: u16,
    /// Client: ask for MPA CRC.
    pub crc: bool,
    pub step_wall: Duration,
    pub connect_wall: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            verb: Verb::Write,
            size: 65536,
            iters: 20,
            port: PORT,
            crc: false,
            step_wall: Duration::from_secs(300),
            connect_wall: Duration::from_secs(300),
        }
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// The peer's perftest version.
    pub peer_version: String,
    /// What this node measured in wall-clock time: the client its Writes,
    /// Reads or Sends, the `ib_send_bw` server its receives; a Write or Read
    /// server nothing, as perftest's.
    pub mine: BwReport,
    /// What the peer reported (nothing for `ib_send_bw`).
    pub peer: BwReport,
    /// `mine` in simulated time: octets per simulated second / 2^20 (the
    /// core's own bandwidth), and the clocks it took.
    pub sim_mb_s: f64,
    pub clocks: u64,
    /// The test connection's event.
    pub connection: CmEvent,
}

struct Waiter<'a> {
    world: &'a Rc<RefCell<World>>,
    limit: Duration,
}

impl Waiter<'_> {
    fn clock(&self) -> u64 {
        self.world.borrow().cycle()
    }

    fn until(&self, what: &str, mut done: impl FnMut() -> bool) -> Result<(), String> {
        let t0 = Instant::now();
        while !done() {
            if t0.elapsed() > self.limit {
                return Err(format!(
                    "no {what} after {:.0} s",
                    t0.elapsed().as_secs_f64()
                ));
            }
            self.world.borrow_mut().round();
        }
        Ok(())
    }

    fn cqe(&self, cq: &Cq<'_, SimBus>, opcode: WcOpcode) -> Result<WorkCompletion, String> {
        let mut wc = [WorkCompletion::default()];
        self.until(&format!("{opcode:?} completion"), || {
            cq.poll(&mut wc).is_ok_and(|n| n == 1)
        })?;
        if wc[0].status != WcStatus::Success || wc[0].opcode != opcode {
            return Err(format!("{opcode:?} completion expected, got {:?}", wc[0]));
        }
        Ok(wc[0])
    }

    fn event(&self, ctx: &Context<SimBus>, kind: EventKind) -> Result<CmEvent, String> {
        let t0 = Instant::now();
        loop {
            match ctx.get_cm_event(Duration::from_micros(20)) {
                Ok(ev) if ev.kind == kind => return Ok(ev),
                Ok(ev) if ev.kind == EventKind::CqCompletion => {}
                Ok(ev) => return Err(format!("{:?} while waiting for {kind:?}: {ev:?}", ev.kind)),
                Err(rnic_driver::Error::Timeout) => {}
                Err(e) => return Err(format!("waiting for {kind:?}: {e:?}")),
            }
            if t0.elapsed() > self.limit {
                return Err(format!("no {kind:?} event"));
            }
        }
    }
}

fn access(bits: u8) -> AccessFlags {
    AccessFlags::from_bits(bits).expect("valid access bits")
}

/// Where each side's credit counter (ib_send_bw) and the count it Writes
/// live: 8 octets in the first page.
const CREDIT_OFF: usize = 512;
const SLOT: usize = 64;
const SLOTS: u64 = 2;
const SEND_OFF: usize = SLOT * SLOTS as usize;

/// The first connection: one Send each way per exchange.
struct Comm<'c> {
    w: Waiter<'c>,
    mem: &'c SimDma,
    mr: Mr<'c, SimBus>,
    qp: Qp<'c, SimBus>,
    scq: &'c Cq<'c, SimBus>,
    rcq: &'c Cq<'c, SimBus>,
    client: bool,
    exchanges: usize,
}

impl Comm<'_> {
    fn post_recv(&self, slot: u64) -> Result<(), String> {
        let sge = [self.mr.sge(slot * SLOT as u64, SLOT as u32).unwrap()];
        self.qp
            .post_recv(&[RecvWr {
                wr_id: slot,
                sges: &sge,
            }])
            .map_err(|e| format!("post_recv: {e:?}"))
    }

    fn send(&self, msg: &[u8]) -> Result<(), String> {
        self.mem.write(SEND_OFF, msg).unwrap();
        let sge = [self.mr.sge(SEND_OFF as u64, msg.len() as u32).unwrap()];
        let wr = SendWr {
            wr_id: 9,
            op: SendOp::Send,
            sges: &sge,
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        };
        self.qp
            .post_send(&[wr])
            .map_err(|e| format!("post_send: {e:?}"))?;
        self.w.cqe(self.scq, WcOpcode::Send).map(|_| ())
    }

    fn recv(&self, len: usize) -> Result<Vec<u8>, String> {
        let wc = self.w.cqe(self.rcq, WcOpcode::Recv)?;
        let mut b = vec![0u8; wc.byte_len as usize];
        self.mem.read(wc.wr_id as usize * SLOT, &mut b).unwrap();
        self.post_recv(wc.wr_id)?;
        if b.len() != len {
            return Err(format!(
                "exchange {}: {} octets, expected {len}",
                self.exchanges + 1,
                b.len()
            ));
        }
        Ok(b)
    }

    /// One exchange of `msg.len()` octets: the client sends first.
    fn xchg(&mut self, msg: &[u8]) -> Result<Vec<u8>, String> {
        let got = if self.client {
            self.send(msg)?;
            self.recv(msg.len())?
        } else {
            let got = self.recv(msg.len())?;
            self.send(msg)?;
            got
        };
        self.exchanges += 1;
        Ok(got)
    }

    /// The exchanges before the test connection (1–5); the peer's version.
    fn preamble(&mut self) -> Result<String, String> {
        let mut v = [0u8; 16];
        v[..VERSION.len()].copy_from_slice(VERSION.as_bytes());
        let peer = self.xchg(&v)?;
        let peer = String::from_utf8_lossy(&peer)
            .trim_end_matches('\0')
            .to_string();
        if peer.parse::<f64>().map_or(true, |x| x < MIN_PEER_VERSION) {
            return Err(format!(
                "peer perftest version {peer:?} is older than {MIN_PEER_VERSION}"
            ));
        }
        self.xchg(&CYCLE_BUFFER.to_be_bytes())?;
        self.xchg(&CACHE_LINE.to_be_bytes())?;
        self.xchg(&MTU)?;
        self.xchg(&Dest::default().emit())?;
        Ok(peer)
    }

    /// Waits until both connections closed: the test connection (closed
    /// by the client), then the first, which perftest's server closes; a
    /// server node closes it once the test connection is closed, a client
    /// node if the server has not within a few seconds.
    fn close(&self, ctx: &Context<SimBus>, data: &Qp<'_, SimBus>) -> Result<(), String> {
        let (mut data_open, mut comm_open) = (true, true);
        let mut closed_at: Option<Instant> = None;
        let t0 = Instant::now();
        while data_open || comm_open {
            match ctx.get_cm_event(Duration::from_micros(20)) {
                Ok(ev) if ev.kind == EventKind::Closed => {
                    if ev.handle == data.qpn() {
                        data_open = false;
                        closed_at = Some(Instant::now());
                    } else if ev.handle == self.qp.qpn() {
                        comm_open = false;
                    }
                }
                Ok(ev) if ev.kind == EventKind::CqCompletion => {}
                Ok(ev) => return Err(format!("{:?} while closing: {ev:?}", ev.kind)),
                Err(rnic_driver::Error::Timeout) => {}
                Err(e) => return Err(format!("closing: {e:?}")),
            }
            let wait = if self.client {
                Duration::from_secs(5)
            } else {
                Duration::ZERO
            };
            if comm_open && closed_at.is_some_and(|t| t.elapsed() >= wait) {
                // the peer may have begun closing it already (a FIN in
                // flight): a refusal here is not an error
                let _ = self.qp.disconnect(false);
                closed_at = None;
            }
            if t0.elapsed() > self.w.limit {
                return Err(format!(
                    "connections still open (test {data_open}, first {comm_open})"
                ));
            }
        }
        Ok(())
    }

    fn bw_reports(&mut self, mine: &BwReport) -> Result<BwReport, String> {
        let mut f = [[0u8; 8]; 5];
        for (i, m) in mine.fields().iter().enumerate() {
            f[i].copy_from_slice(&self.xchg(m)?);
        }
        Ok(BwReport::from_fields(&f))
    }
}

/// The buffers of one side: the first connection's slots, and the test
/// buffer (written by the client's Writes on the server; their source on
/// the client).
fn test_len(size: usize) -> usize {
    2 * size.max(CYCLE_BUFFER as usize)
}

/// The server (`ib_write_bw -R` / `ib_read_bw -R`): the peer Writes into
/// our buffer or Reads it. For Writes, the buffer must have changed: it is
/// filled with a pattern first, and perftest's client sends its own
/// (random) octets.
pub fn server(
    world: &Rc<RefCell<World>>,
    ctx: &Context<SimBus>,
    cfg: &Config,
) -> Result<Report, String> {
    let e = |what: &'static str| move |e: rnic_driver::Error| format!("{what}: {e:?}");
    let w = Waiter {
        world,
        limit: cfg.step_wall,
    };
    let _l = ctx.listen(cfg.port, 2).map_err(e("listen"))?;
    let pd = ctx.alloc_pd().map_err(e("alloc_pd"))?;
    let (scq, rcq) = (
        ctx.create_cq(16).map_err(e("cq"))?,
        ctx.create_cq(16).map_err(e("cq"))?,
    );
    let (dscq, drcq) = (
        ctx.create_cq(64).map_err(e("cq"))?,
        ctx.create_cq(16).map_err(e("cq"))?,
    );
    let mem = ctx
        .alloc_dma(4096 + test_len(cfg.size))
        .map_err(e("alloc_dma"))?;
    let mr = pd
        .reg_mr(&mem, 0, 4096, access(ACCESS_LOCAL_WRITE))
        .map_err(e("reg_mr"))?;
    let remote = access(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
    let buf = pd
        .reg_mr(&mem, 4096, test_len(cfg.size), remote)
        .map_err(e("reg_mr"))?;
    let qp = pd
        .create_qp(&scq, &rcq, 8, SLOTS as u32)
        .map_err(e("create_qp"))?;
    let (rx_depth, credit_every) = send_depths(cfg.iters);
    if cfg.verb == Verb::Send && rx_depth > NODE_RX_DEPTH {
        return Err(format!(
            "ib_send_bw -n {}: the node posts at most {NODE_RX_DEPTH} receives",
            cfg.iters
        ));
    }
    let credit = pd
        .reg_mr(&mem, CREDIT_OFF, 8, remote)
        .map_err(e("reg_mr"))?;
    let dqp = pd
        .create_qp(&dscq, &drcq, 8, NODE_RX_DEPTH as u32)
        .map_err(e("create_qp"))?;
    let mut c = Comm {
        w,
        mem: &mem,
        mr,
        qp,
        scq: &scq,
        rcq: &rcq,
        client: false,
        exchanges: 0,
    };
    for s in 0..SLOTS {
        c.post_recv(s)?;
    }
    const FILL: u8 = 0x5a;
    mem.write(4096, &vec![FILL; cfg.size]).unwrap();
    // our IRD answers the peer's ORD, our ORD its IRD (RFC 6581 §2)
    let depths = |r: &CmEvent| (r.ord.min(NODE_IRD), r.ird.min(NODE_ORD));
    let req = c.w.event(ctx, EventKind::ConnectRequest)?;
    let (ird, ord) = depths(&req);
    ctx.accept(req.handle, &c.qp, ird, ord, b"")
        .map_err(e("accept"))?;
    c.w.event(ctx, EventKind::Established)?;
    let peer_version = c.preamble()?;
    // the test connection
    let req2 = c.w.event(ctx, EventKind::ConnectRequest)?;
    let (ird, ord) = depths(&req2);
    ctx.accept(req2.handle, &dqp, ird, ord, b"")
        .map_err(e("accept"))?;
    c.w.event(ctx, EventKind::Established)?;
    let mut me = Dest {
        out_reads: ird as u32,
        qpn: dqp.qpn(),
        rkey: buf.rkey(),
        vaddr: buf.va(),
        ..Dest::default()
    };
    if cfg.verb == Verb::Send {
        (me.rkey, me.vaddr) = (credit.rkey(), credit.va());
    }
    let mut them = Dest::default();
    for _ in 6..=9 {
        them = Dest::parse(&c.xchg(&me.emit())?).unwrap();
    }
    if cfg.verb == Verb::Send {
        let (t0, c0) = (Instant::now(), c.w.clock());
        let got = send_server(
            &mut c,
            &dqp,
            &dscq,
            &drcq,
            &buf,
            &credit,
            &them,
            cfg,
            rx_depth,
            credit_every,
            &me,
        )?;
        let (wall, clocks) = (t0.elapsed().as_secs_f64(), c.w.clock() - c0);
        c.xchg(&me.emit())?;
        check_placed(&got, FILL)?;
        c.close(ctx, &dqp)?;
        let mine = bw(cfg, wall);
        return Ok(Report {
            peer_version,
            mine,
            peer: BwReport::default(),
            sim_mb_s: sim_mb_s(cfg, clocks),
            clocks,
            connection: req2,
        });
    }
    let c0 = c.w.clock();
    // the client Writes or Reads; then it says it is done
    c.xchg(&me.emit())?;
    let clocks = c.w.clock() - c0;
    let peer = c.bw_reports(&BwReport::default())?;
    c.xchg(&me.emit())?;
    if cfg.verb == Verb::Write {
        let mut got = vec![0u8; cfg.size];
        mem.read(4096, &mut got).unwrap();
        check_placed(&got, FILL)?;
    }
    // the client closes the test connection, we the first
    c.close(ctx, &dqp)?;
    Ok(Report {
        peer_version,
        mine: BwReport::default(),
        peer,
        sim_mb_s: 0.0,
        clocks,
        connection: req2,
    })
}

/// The client: Writes `cfg.iters` × `cfg.size` octets into the server's
/// buffer, at most [`TX_DEPTH`] in flight, or Reads them, at most the
/// negotiated ORD in flight.
pub fn client(
    world: &Rc<RefCell<World>>,
    ctx: &Context<SimBus>,
    peer: Ipv4Addr,
    cfg: &Config,
) -> Result<Report, String> {
    let e = |what: &'static str| move |e: rnic_driver::Error| format!("{what}: {e:?}");
    let w = Waiter {
        world,
        limit: cfg.step_wall,
    };
    let pd = ctx.alloc_pd().map_err(e("alloc_pd"))?;
    let (scq, rcq) = (
        ctx.create_cq(16).map_err(e("cq"))?,
        ctx.create_cq(16).map_err(e("cq"))?,
    );
    let (dscq, drcq) = (
        ctx.create_cq(64).map_err(e("cq"))?,
        ctx.create_cq(16).map_err(e("cq"))?,
    );
    let mem = ctx
        .alloc_dma(4096 + test_len(cfg.size))
        .map_err(e("alloc_dma"))?;
    let mr = pd
        .reg_mr(&mem, 0, 4096, access(ACCESS_LOCAL_WRITE))
        .map_err(e("reg_mr"))?;
    let remote = access(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ);
    let buf = pd
        .reg_mr(&mem, 4096, test_len(cfg.size), remote)
        .map_err(e("reg_mr"))?;
    let data: Vec<u8> = (0..cfg.size).map(|i| (i * 7 + 1) as u8).collect();
    mem.write(4096, &data).unwrap();
    let params = |port| ConnectParams {
        peer_ip: peer,
        peer_port: port,
        local_port: 0,
        ird: if cfg.verb == Verb::Read { NODE_IRD } else { 0 },
        ord: if cfg.verb == Verb::Read { NODE_ORD } else { 0 },
        mpa: MpaOptions {
            revision: 2,
            crc: cfg.crc,
            markers: false,
        },
    };
    // the first connection, tried again while the server is not listening
    let t = Instant::now();
    let qp = loop {
        let qp = pd
            .create_qp(&scq, &rcq, 8, SLOTS as u32)
            .map_err(e("create_qp"))?;
        qp.connect(&params(cfg.port), b"").map_err(e("connect"))?;
        match w.event(ctx, EventKind::Established) {
            Ok(_) => break qp,
            Err(why) if why.starts_with("Refused") && t.elapsed() < cfg.connect_wall => {
                qp.destroy().map_err(e("destroy_qp"))?;
                let t1 = Instant::now();
                w.until("nothing", || t1.elapsed() > Duration::from_secs(1))
                    .ok();
            }
            Err(why) => return Err(format!("connect: {why}")),
        }
    };
    let mut c = Comm {
        w,
        mem: &mem,
        mr,
        qp,
        scq: &scq,
        rcq: &rcq,
        client: true,
        exchanges: 0,
    };
    for s in 0..SLOTS {
        c.post_recv(s)?;
    }
    let peer_version = c.preamble()?;
    let credit = pd
        .reg_mr(&mem, CREDIT_OFF, 8, remote)
        .map_err(e("reg_mr"))?;
    mem.write(CREDIT_OFF, &[0u8; 8]).unwrap();
    let dqp = pd
        .create_qp(&dscq, &drcq, (TX_DEPTH + 1) as u32, 1)
        .map_err(e("create_qp"))?;
    dqp.connect(&params(cfg.port), b"").map_err(e("connect"))?;
    let est = c.w.event(ctx, EventKind::Established)?;
    // Reads in flight: the ORD agreed (RFC 6581 §2: ours, at most the
    // peer's IRD)
    let depth = match cfg.verb {
        Verb::Write | Verb::Send => TX_DEPTH,
        Verb::Read => (est.ird.min(NODE_ORD) as usize).max(1),
    };
    let mut me = Dest {
        out_reads: NODE_ORD as u32,
        qpn: dqp.qpn(),
        rkey: buf.rkey(),
        vaddr: buf.va(),
        ..Dest::default()
    };
    if cfg.verb == Verb::Send {
        (me.rkey, me.vaddr) = (credit.rkey(), credit.va());
    }
    let (rx_depth, _) = send_depths(cfg.iters);
    let mut them = Dest::default();
    for _ in 6..=9 {
        them = Dest::parse(&c.xchg(&me.emit())?).unwrap();
    }
    // the test: iters Writes to the server's buffer, or Reads of it
    let sge = [buf.sge(0, cfg.size as u32).unwrap()];
    let dst = RemoteAddr {
        addr: them.vaddr,
        rkey: them.rkey,
    };
    let (t0, c0) = (Instant::now(), c.w.clock());
    let (mut posted, mut done) = (0, 0);
    let mut wc = [WorkCompletion::default(); 16];
    if cfg.verb == Verb::Send {
        // the server has posted its receives
        c.xchg(&me.emit())?;
    }
    // the credit the server granted (ib_send_bw)
    let granted = || {
        let mut b = [0u8; 4];
        mem.read(CREDIT_OFF, &mut b).unwrap();
        u32::from_le_bytes(b) as usize
    };
    while done < cfg.iters {
        while posted < cfg.iters
            && posted - done < depth
            && (cfg.verb != Verb::Send || posted + 1 - granted().min(posted + 1) < rx_depth)
        {
            let op = match cfg.verb {
                Verb::Write => SendOp::RdmaWrite(dst),
                Verb::Read => SendOp::RdmaRead(dst),
                Verb::Send => SendOp::Send,
            };
            let wr = SendWr {
                wr_id: posted as u64,
                op,
                sges: &sge,
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            };
            dqp.post_send(&[wr]).map_err(e("post_send"))?;
            posted += 1;
        }
        let mut n = 0;
        let before = granted();
        c.w.until("completion or credit", || {
            n = dscq.poll(&mut wc).unwrap_or(0);
            n > 0 || (posted < cfg.iters && posted - done < depth && granted() != before)
        })?;
        let want = match cfg.verb {
            Verb::Write => WcOpcode::RdmaWrite,
            Verb::Read => WcOpcode::RdmaRead,
            Verb::Send => WcOpcode::Send,
        };
        for x in &wc[..n] {
            if x.status != WcStatus::Success || x.opcode != want {
                return Err(format!("{want:?} completion expected: {x:?}"));
            }
        }
        done += n;
    }
    let (wall, clocks) = (t0.elapsed().as_secs_f64(), c.w.clock() - c0);
    let mine = bw(cfg, wall);
    let peer = if cfg.verb == Verb::Send {
        // ib_send_bw trades no reports: the close handshake follows
        c.xchg(&me.emit())?;
        BwReport::default()
    } else {
        c.xchg(&me.emit())?;
        let peer = c.bw_reports(&mine)?;
        c.xchg(&me.emit())?;
        peer
    };
    dqp.disconnect(false).map_err(e("disconnect"))?;
    c.close(ctx, &dqp)?;
    Ok(Report {
        peer_version,
        mine,
        peer,
        sim_mb_s: sim_mb_s(cfg, clocks),
        clocks,
        connection: est,
    })
}

/// A bandwidth report of `cfg.iters` × `cfg.size` octets in `wall` s
/// (perftest's MB: 2^20 octets).
fn bw(cfg: &Config, wall: f64) -> BwReport {
    let octets = (cfg.size * cfg.iters) as f64;
    BwReport {
        size: cfg.size as u64,
        iters: cfg.iters as u64,
        bw_peak: octets / wall / MB,
        bw_avg: octets / wall / MB,
        msg_rate: cfg.iters as f64 / wall / 1e6,
    }
}

/// The same in simulated time: the core's own rate.
fn sim_mb_s(cfg: &Config, clocks: u64) -> f64 {
    let sim_s = clocks as f64 / (CLOCKS_PER_US as f64 * 1e6);
    (cfg.size * cfg.iters) as f64 / sim_s / MB
}

const MB: f64 = 1024.0 * 1024.0;

/// The peer's octets replaced our fill: random octets equal it 1 time in
/// 256, so more than 1 in 64 left means nothing was placed.
fn check_placed(got: &[u8], fill: u8) -> Result<(), String> {
    let same = got.iter().filter(|&&b| b == fill).count();
    if same > got.len() / 64 {
        return Err(format!(
            "{same} of {} octets still hold the fill: the peer's data was not placed",
            got.len()
        ));
    }
    Ok(())
}

/// `ib_send_bw`'s server side of the test: `rx_depth` receives posted,
/// exchange 10, then every receive posted again and credit granted after
/// every `credit_every`-th; returns the last message received.
#[allow(clippy::too_many_arguments)]
fn send_server(
    c: &mut Comm<'_>,
    dqp: &Qp<'_, SimBus>,
    dscq: &Cq<'_, SimBus>,
    drcq: &Cq<'_, SimBus>,
    buf: &Mr<'_, SimBus>,
    credit: &Mr<'_, SimBus>,
    them: &Dest,
    cfg: &Config,
    rx_depth: usize,
    credit_every: usize,
    me: &Dest,
) -> Result<Vec<u8>, String> {
    let e = |what: &'static str| move |e: rnic_driver::Error| format!("{what}: {e:?}");
    let rsge = [buf.sge(0, cfg.size as u32).unwrap()];
    let post = |n: usize| -> Result<(), String> {
        for _ in 0..n {
            dqp.post_recv(&[RecvWr {
                wr_id: 0,
                sges: &rsge,
            }])
            .map_err(e("post_recv"))?;
        }
        Ok(())
    };
    post(rx_depth)?;
    // exchange 10: our receives are posted
    c.xchg(&me.emit())?;
    let csge = [credit.sge(4, 4).unwrap()];
    let to = RemoteAddr {
        addr: them.vaddr,
        rkey: them.rkey,
    };
    let (mut rcnt, mut credits_out) = (0usize, 0usize);
    let mut wc = [WorkCompletion::default(); 16];
    while rcnt < cfg.iters {
        let mut n = 0;
        c.w.until("receive", || {
            n = drcq.poll(&mut wc).unwrap_or(0);
            n > 0
        })?;
        for x in &wc[..n] {
            if x.status != WcStatus::Success
                || x.opcode != WcOpcode::Recv
                || x.byte_len as usize != cfg.size
            {
                return Err(format!("receive {rcnt}: {x:?}"));
            }
            rcnt += 1;
            post(1)?;
            if (rcnt % rx_depth).is_multiple_of(credit_every) {
                // the count, in the peer's order (x86-64: little-endian)
                c.mem
                    .write(CREDIT_OFF + 4, &(rcnt as u32).to_le_bytes())
                    .unwrap();
                let wr = SendWr {
                    wr_id: rcnt as u64,
                    op: SendOp::RdmaWrite(to),
                    sges: &csge,
                    signaled: true,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                };
                dqp.post_send(&[wr]).map_err(e("post_send credit"))?;
                credits_out += 1;
            }
        }
        // the credit Writes' completions
        let mut sw = [WorkCompletion::default(); 16];
        while credits_out > 0 {
            let k = dscq.poll(&mut sw).unwrap_or(0);
            if k == 0 {
                break;
            }
            for x in &sw[..k] {
                if x.status != WcStatus::Success {
                    return Err(format!("credit Write: {x:?}"));
                }
            }
            credits_out -= k;
        }
    }
    let mut got = vec![0u8; cfg.size];
    c.mem.read(4096, &mut got).unwrap();
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dest_layout_is_perftests() {
        // a handshake siw's ib_write_bw sent (perftest 4.5): lid 0,
        // out_reads 1, qpn 2, psn 0x13ce57, rkey 0x31f0a500, 4 octets of
        // padding, vaddr 0x7f08c0554000, gid 5254005e0002.., srqn 0, index 0
        let hex = "0000000000000001000000020013ce5731f0a500087f000000007f08c05540005254005e0002000000000000000000000000000000000000";
        let b: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        let d = Dest::parse(&b).unwrap();
        assert_eq!(
            (d.out_reads, d.qpn, d.psn, d.rkey, d.vaddr),
            (1, 2, 0x13ce57, 0x31f0a500, 0x7f08c0554000)
        );
        assert_eq!(&d.gid[..6], &[0x52, 0x54, 0, 0x5e, 0, 2]);
        let mut again = d.emit();
        again[20..24].copy_from_slice(&b[20..24]); // the padding is not ours
        assert_eq!(&again[..], &b[..]);
    }

    #[test]
    fn send_depths_follow_perftest() {
        // rx_depth: 512 unless -n is smaller, made even; credit every third
        assert_eq!(send_depths(20), (20, 6));
        assert_eq!(send_depths(5), (6, 2));
        assert_eq!(send_depths(1000), (512, 170));
        assert_eq!(send_depths(1), (2, 1));
    }

    #[test]
    fn bw_report_fields_are_big_endian() {
        // siw's client reported 9.28 MB/s peak as 0x4022914c29358653
        let r = BwReport {
            size: 65536,
            iters: 5,
            bw_peak: f64::from_bits(0x4022914c29358653),
            ..BwReport::default()
        };
        let f = r.fields();
        assert_eq!(f[0], [0, 0, 0, 0, 0, 1, 0, 0]);
        assert_eq!(f[2], 0x4022914c29358653u64.to_be_bytes());
        assert!((BwReport::from_fields(&f).bw_peak - 9.28).abs() < 0.005);
    }
}
