//! rping, the ping-pong test of rdma-core (`librdmacm/examples/rping.c`),
//! on the driver's verbs API: a co-simulated node plays rping's server or
//! client against the real tool (a Linux siw host on the external port) or
//! against a scripted peer.
//!
//! One ping, as rping does it (every message one Send of a 16-octet
//! advertisement, [`Info`]):
//!
//! 1. the client fills its *start* buffer ([`ping_data`]) and advertises it;
//! 2. the server RDMA Reads it into its own buffer and Sends "go ahead";
//! 3. the client advertises its *rdma* (sink) buffer;
//! 4. the server RDMA Writes what it read into that buffer (rping writes
//!    `strlen + 1` octets: the whole buffer, whose last octet is the only
//!    NUL) and, once the Write completed, Sends "go ahead" again;
//! 5. the client checks that the sink now equals the start buffer.
//!
//! rping's connection parameters are IRD = ORD = 1 ([`DEPTH`]) and no
//! private data; its server's "go ahead" Sends carry a buffer it never
//! fills (16 zero octets), and so do ours. The client ends with a
//! disconnect, and the server then sees the connection close.
//!
//! Waiting: every step waits until its completion or event arrives, at
//! most [`Config::step_wall`] of wall-clock time and, when set,
//! [`Config::step_clocks`] of simulated time.

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
use crate::sim_bus::{SimBus, SimDma};

/// rping's TCP port.
pub const PORT: u16 = 7174;
/// `struct rping_rdma_info { be64 buf; be32 rkey; be32 size; }`.
pub const INFO_LEN: usize = 16;
/// rping's default `-S`.
pub const DEFAULT_SIZE: usize = 64;
/// rping's smallest `-S`: `sizeof "2147483647"` + `sizeof "rdma-ping-%d: "`.
pub const MIN_SIZE: usize = 11 + 15;
/// rping's largest `-S` (`RPING_BUFSIZE - 1`).
pub const MAX_SIZE: usize = 64 * 1024 - 1;
/// rping's IRD and ORD (`responder_resources = initiator_depth = 1`).
pub const DEPTH: u16 = 1;
/// The node's RDMA-mode retransmission timeout (initial and minimum), in
/// microseconds of simulated time, against a live peer that runs in wall
/// time (a QEMU guest): 10 ms simulated is 7 to 24 s of wall-clock time at
/// the simulator's 65 to 240 k clocks per second, beyond any stall of the
/// guest seen (a guest stopped for 1 s looked 750 us late), yet a real loss
/// is still repaired within a case. docs/sim.md, "A live Linux peer".
pub const LIVE_PEER_RTO_US: u64 = 10_000;
/// Receive slots posted (rping's QP has room for 2 receives).
const RECV_SLOTS: u64 = 2;

/// rping's buffer advertisement (all fields big-endian on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Info {
    pub buf: u64,
    pub rkey: u32,
    pub size: u32,
}

impl Info {
    /// Parses an advertisement; `None` unless `b` is [`INFO_LEN`] octets.
    pub fn parse(b: &[u8]) -> Option<Info> {
        (b.len() == INFO_LEN).then(|| Info {
            buf: u64::from_be_bytes(b[0..8].try_into().unwrap()),
            rkey: u32::from_be_bytes(b[8..12].try_into().unwrap()),
            size: u32::from_be_bytes(b[12..16].try_into().unwrap()),
        })
    }

    pub fn emit(&self) -> [u8; INFO_LEN] {
        let mut b = [0u8; INFO_LEN];
        b[0..8].copy_from_slice(&self.buf.to_be_bytes());
        b[8..12].copy_from_slice(&self.rkey.to_be_bytes());
        b[12..16].copy_from_slice(&self.size.to_be_bytes());
        b
    }
}

/// What rping's client puts in its start buffer for ping number `ping`:
/// `"rdma-ping-<ping>: "`, then letters from `'A' + ping % 58` counting up
/// and wrapping from `'z'` to `'A'`, the last octet NUL.
pub fn ping_data(ping: usize, size: usize) -> Vec<u8> {
    let mut b = format!("rdma-ping-{ping}: ").into_bytes();
    b.truncate(size.saturating_sub(1));
    let mut c = b'A' + (ping % 58) as u8;
    while b.len() < size {
        b.push(c);
        c = if c >= b'z' { b'A' } else { c + 1 };
    }
    if let Some(last) = b.last_mut() {
        *last = 0;
    }
    b
}

/// How to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// `-S`: the ping buffer's size.
    pub size: usize,
    /// `-C`: pings (the server stops after this many, then waits for the
    /// client's close).
    pub count: usize,
    pub port: u16,
    /// Client: ask for MPA CRC (RFC 5044 §7.1).
    pub crc: bool,
    /// Longest wall-clock wait for any one step.
    pub step_wall: Duration,
    /// Longest simulated wait for any one step, in clocks (`None`: only the
    /// wall-clock limit).
    pub step_clocks: Option<u64>,
    /// Client: how long to keep trying to connect while the peer refuses
    /// (a server that does not listen yet answers the SYN with a RST).
    pub connect_wall: Duration,
    /// Print each ping's data as rping `-v` does.
    pub verbose: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            size: DEFAULT_SIZE,
            count: 5,
            port: PORT,
            crc: false,
            step_wall: Duration::from_secs(120),
            step_clocks: None,
            connect_wall: Duration::from_secs(120),
            verbose: false,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Report {
    /// The connection's event: the server's ConnectRequest, the client's
    /// Established.
    pub connection: CmEvent,
    /// Each ping's data: what the server read, what the client got back.
    pub data: Vec<Vec<u8>>,
    /// Connection attempts (client).
    pub attempts: u32,
    /// From connected to the last ping done.
    pub wall: Duration,
    pub clocks: u64,
}

/// Waits on one node's world.
struct Waiter<'a> {
    world: &'a Rc<RefCell<World>>,
    cfg: &'a Config,
}

impl Waiter<'_> {
    fn clock(&self) -> u64 {
        self.world.borrow().cycle()
    }

    /// Runs the world until `done`, within the step limits.
    fn until(&self, what: &str, mut done: impl FnMut() -> bool) -> Result<(), String> {
        let (t0, c0) = (Instant::now(), self.clock());
        loop {
            if done() {
                return Ok(());
            }
            self.check(what, t0, c0)?;
            self.world.borrow_mut().round();
        }
    }

    fn check(&self, what: &str, t0: Instant, c0: u64) -> Result<(), String> {
        let clocks = self.clock() - c0;
        if t0.elapsed() > self.cfg.step_wall || self.cfg.step_clocks.is_some_and(|m| clocks > m) {
            return Err(format!(
                "no {what} after {:.1} s ({clocks} clocks)",
                t0.elapsed().as_secs_f64()
            ));
        }
        Ok(())
    }

    /// The next completion on `cq`; it must be a success of `opcode`.
    fn cqe(&self, cq: &Cq<'_, SimBus>, opcode: WcOpcode) -> Result<WorkCompletion, String> {
        let mut wc = [WorkCompletion::default()];
        let what = format!("{opcode:?} completion");
        self.until(&what, || cq.poll(&mut wc).is_ok_and(|n| n == 1))?;
        if wc[0].status != WcStatus::Success || wc[0].opcode != opcode {
            return Err(format!("{what} expected, got {:?}", wc[0]));
        }
        Ok(wc[0])
    }

    /// The next connection event; completion notices are skipped, and any
    /// kind other than `kind` is returned as an error.
    fn event(&self, ctx: &Context<SimBus>, kind: EventKind) -> Result<CmEvent, String> {
        let (t0, c0) = (Instant::now(), self.clock());
        loop {
            match ctx.get_cm_event(Duration::from_micros(20)) {
                Ok(ev) if ev.kind == kind => return Ok(ev),
                Ok(ev) if ev.kind == EventKind::CqCompletion => {}
                Ok(ev) => return Err(format!("{:?} while waiting for {kind:?}: {ev:?}", ev.kind)),
                Err(rnic_driver::Error::Timeout) => {}
                Err(e) => return Err(format!("waiting for {kind:?}: {e:?}")),
            }
            self.check(&format!("{kind:?} event"), t0, c0)?;
        }
    }
}

fn access(bits: u8) -> AccessFlags {
    AccessFlags::from_bits(bits).expect("valid access bits")
}

fn send_wr(wr_id: u64, op: SendOp, sges: &[rnic_driver::Sge]) -> SendWr<'_> {
    SendWr {
        wr_id,
        op,
        sges,
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }
}

/// The buffers of one side: receive slots, the advertisement to send, and
/// the ping buffers (the server's one, the client's start and sink).
struct Buffers<'c> {
    mem: &'c SimDma,
    recv: Mr<'c, SimBus>,
    send: Mr<'c, SimBus>,
    /// The server's buffer, the client's sink ("rdma_buf").
    rdma: Mr<'c, SimBus>,
    /// The client's start buffer.
    start: Option<Mr<'c, SimBus>>,
}

const RECV_OFF: usize = 0;
const SEND_OFF: usize = RECV_OFF + RECV_SLOTS as usize * INFO_LEN;
const RDMA_OFF: usize = 4096;

/// Where the client's start buffer is (after the rdma buffer, page aligned).
fn start_off(size: usize) -> usize {
    RDMA_OFF + size.next_multiple_of(4096)
}

impl<'c> Buffers<'c> {
    /// The octets of host memory [`Buffers::new`] needs.
    fn len(size: usize) -> usize {
        start_off(size) + size
    }

    fn new(
        pd: &'c rnic_driver::Pd<'c, SimBus>,
        mem: &'c SimDma,
        size: usize,
        client: bool,
    ) -> Result<Buffers<'c>, String> {
        let e = |e: rnic_driver::Error| format!("buffers: {e:?}");
        let start_off = start_off(size);
        let local = access(ACCESS_LOCAL_WRITE);
        let remote = access(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_READ | ACCESS_REMOTE_WRITE);
        let recv = pd.reg_mr(mem, RECV_OFF, SEND_OFF, local).map_err(e)?;
        let send = pd.reg_mr(mem, SEND_OFF, INFO_LEN, local).map_err(e)?;
        let rdma = pd.reg_mr(mem, RDMA_OFF, size, remote).map_err(e)?;
        let start = match client {
            true => Some(pd.reg_mr(mem, start_off, size, remote).map_err(e)?),
            false => None,
        };
        Ok(Buffers {
            mem,
            recv,
            send,
            rdma,
            start,
        })
    }

    fn post_recv(&self, qp: &Qp<'_, SimBus>, slot: u64) -> Result<(), String> {
        let sge = [self
            .recv
            .sge(slot * INFO_LEN as u64, INFO_LEN as u32)
            .unwrap()];
        qp.post_recv(&[RecvWr {
            wr_id: slot,
            sges: &sge,
        }])
        .map_err(|e| format!("post_recv: {e:?}"))
    }

    /// Sends `info` (signaled) and waits for its completion.
    fn send_info(
        &self,
        w: &Waiter,
        qp: &Qp<'_, SimBus>,
        scq: &Cq<'_, SimBus>,
        info: Info,
    ) -> Result<(), String> {
        self.mem.write(SEND_OFF, &info.emit()).unwrap();
        let sge = [self.send.sge(0, INFO_LEN as u32).unwrap()];
        qp.post_send(&[send_wr(1, SendOp::Send, &sge)])
            .map_err(|e| format!("post_send Send: {e:?}"))?;
        w.cqe(scq, WcOpcode::Send).map(|_| ())
    }

    /// The next advertisement received (its slot posted again, as rping's
    /// completion handler does).
    fn recv_info(
        &self,
        w: &Waiter,
        qp: &Qp<'_, SimBus>,
        rcq: &Cq<'_, SimBus>,
    ) -> Result<Info, String> {
        let wc = w.cqe(rcq, WcOpcode::Recv)?;
        let mut b = [0u8; INFO_LEN];
        self.mem
            .read(RECV_OFF + wc.wr_id as usize * INFO_LEN, &mut b)
            .unwrap();
        self.post_recv(qp, wc.wr_id)?;
        Info::parse(&b[..wc.byte_len.min(INFO_LEN as u32) as usize])
            .ok_or_else(|| format!("received bogus data, size {}", wc.byte_len))
    }

    fn read(&self, off: usize, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        self.mem.read(off, &mut v).unwrap();
        v
    }
}

fn check_size(size: usize) -> Result<(), String> {
    if !(MIN_SIZE..=MAX_SIZE).contains(&size) {
        return Err(format!(
            "invalid size {size} (valid range is {MIN_SIZE} to {MAX_SIZE})"
        ));
    }
    Ok(())
}

/// rping's server (`rping -s`): listens on `cfg.port`, accepts one client,
/// serves `cfg.count` pings, then waits for the client to close.
/// `listening` is called once the node listens with its receives posted.
pub fn server(
    world: &Rc<RefCell<World>>,
    ctx: &Context<SimBus>,
    cfg: &Config,
    listening: impl FnOnce(),
) -> Result<Report, String> {
    check_size(cfg.size)?;
    let w = Waiter { world, cfg };
    let e = |what: &'static str| move |e: rnic_driver::Error| format!("{what}: {e:?}");
    let _listener = ctx.listen(cfg.port, 3).map_err(e("listen"))?;
    let pd = ctx.alloc_pd().map_err(e("alloc_pd"))?;
    let (scq, rcq) = (
        ctx.create_cq(32).map_err(e("cq"))?,
        ctx.create_cq(32).map_err(e("cq"))?,
    );
    let qp = pd
        .create_qp(&scq, &rcq, 16, RECV_SLOTS as u32)
        .map_err(e("create_qp"))?;
    let mem = ctx
        .alloc_dma(Buffers::len(cfg.size))
        .map_err(e("alloc_dma"))?;
    let b = Buffers::new(&pd, &mem, cfg.size, false)?;
    for slot in 0..RECV_SLOTS {
        b.post_recv(&qp, slot)?;
    }
    listening();
    let req = w.event(ctx, EventKind::ConnectRequest)?;
    ctx.accept(req.handle, &qp, DEPTH, DEPTH, b"")
        .map_err(e("accept"))?;
    w.event(ctx, EventKind::Established)?;
    let (t0, c0) = (Instant::now(), w.clock());

    let mut data = vec![];
    for ping in 0..cfg.count {
        // the client's start buffer: Read it
        let start = b.recv_info(&w, &qp, &rcq)?;
        let len = start.size as usize;
        if len > cfg.size {
            return Err(format!(
                "ping {ping}: the client advertises {len} octets, our buffer has {}",
                cfg.size
            ));
        }
        let sge = [b.rdma.sge(0, start.size).unwrap()];
        let src = RemoteAddr {
            addr: start.buf,
            rkey: start.rkey,
        };
        qp.post_send(&[send_wr(2, SendOp::RdmaRead(src), &sge)])
            .map_err(e("post_send Read"))?;
        w.cqe(&scq, WcOpcode::RdmaRead)?;
        let got = b.read(RDMA_OFF, len);
        if got != ping_data(ping, len) {
            return Err(format!(
                "ping {ping}: read data is not rping's: {:?}",
                String::from_utf8_lossy(&got)
            ));
        }
        if cfg.verbose {
            println!(
                "server ping data: {}",
                String::from_utf8_lossy(&got[..len - 1])
            );
        }
        b.send_info(&w, &qp, &scq, Info::default())?;
        // the client's sink: Write back what was read (strlen + 1), then go
        let sink = b.recv_info(&w, &qp, &rcq)?;
        let wlen = got.iter().position(|&c| c == 0).map_or(len, |n| n + 1);
        if wlen > sink.size as usize {
            return Err(format!(
                "ping {ping}: sink of {} octets for {wlen}",
                sink.size
            ));
        }
        let sge = [b.rdma.sge(0, wlen as u32).unwrap()];
        let dst = RemoteAddr {
            addr: sink.buf,
            rkey: sink.rkey,
        };
        qp.post_send(&[send_wr(3, SendOp::RdmaWrite(dst), &sge)])
            .map_err(e("post_send Write"))?;
        w.cqe(&scq, WcOpcode::RdmaWrite)?;
        b.send_info(&w, &qp, &scq, Info::default())?;
        data.push(got);
    }
    let (wall, clocks) = (t0.elapsed(), w.clock() - c0);
    w.event(ctx, EventKind::Closed)?;
    Ok(Report {
        connection: req,
        data,
        attempts: 1,
        wall,
        clocks,
    })
}

/// rping's client (`rping -c -a peer`): connects (trying again while the
/// peer refuses, up to `cfg.connect_wall`), runs `cfg.count` pings checking
/// each echo, then disconnects.
pub fn client(
    world: &Rc<RefCell<World>>,
    ctx: &Context<SimBus>,
    peer: Ipv4Addr,
    local_port: u16,
    cfg: &Config,
) -> Result<Report, String> {
    check_size(cfg.size)?;
    let w = Waiter { world, cfg };
    let e = |what: &'static str| move |e: rnic_driver::Error| format!("{what}: {e:?}");
    let pd = ctx.alloc_pd().map_err(e("alloc_pd"))?;
    let (scq, rcq) = (
        ctx.create_cq(32).map_err(e("cq"))?,
        ctx.create_cq(32).map_err(e("cq"))?,
    );
    let mem = ctx
        .alloc_dma(Buffers::len(cfg.size))
        .map_err(e("alloc_dma"))?;
    let b = Buffers::new(&pd, &mem, cfg.size, true)?;
    let params = ConnectParams {
        peer_ip: peer,
        peer_port: cfg.port,
        local_port,
        ird: DEPTH,
        ord: DEPTH,
        mpa: MpaOptions {
            revision: 2,
            crc: cfg.crc,
            markers: false,
        },
    };
    let t_connect = Instant::now();
    let mut attempts = 0;
    let (qp, est) = loop {
        attempts += 1;
        let qp = pd
            .create_qp(&scq, &rcq, 16, RECV_SLOTS as u32)
            .map_err(e("create_qp"))?;
        for slot in 0..RECV_SLOTS {
            b.post_recv(&qp, slot)?;
        }
        qp.connect(&params, b"").map_err(e("connect"))?;
        match w.event(ctx, EventKind::Established) {
            Ok(est) => break (qp, est),
            Err(why) if t_connect.elapsed() < cfg.connect_wall && why.starts_with("Refused") => {
                qp.destroy().map_err(e("destroy_qp"))?;
                // rping's retries come from the caller; ours wait a second
                let t = Instant::now();
                w.until("nothing", || t.elapsed() > Duration::from_secs(1))
                    .ok();
                // drain what the failed attempt left (its flushed receives)
                let mut wc = [WorkCompletion::default(); 4];
                while rcq.poll(&mut wc).is_ok_and(|n| n > 0) {}
            }
            Err(why) => return Err(format!("connect (attempt {attempts}): {why}")),
        }
    };
    let (t0, c0) = (Instant::now(), w.clock());
    let start_mr = b.start.as_ref().expect("client has a start buffer");
    let start_off = start_off(cfg.size);
    let mut data = vec![];
    for ping in 0..cfg.count {
        let want = ping_data(ping, cfg.size);
        b.mem.write(start_off, &want).unwrap();
        let adv = |mr: &Mr<'_, SimBus>| Info {
            buf: mr.va(),
            rkey: mr.rkey(),
            size: cfg.size as u32,
        };
        b.send_info(&w, &qp, &scq, adv(start_mr))?;
        b.recv_info(&w, &qp, &rcq)?; // the server read it: go
        b.send_info(&w, &qp, &scq, adv(&b.rdma))?;
        b.recv_info(&w, &qp, &rcq)?; // the server wrote it: go
        let got = b.read(RDMA_OFF, cfg.size);
        if got != want {
            return Err(format!(
                "ping {ping}: data mismatch: {:?}",
                String::from_utf8_lossy(&got)
            ));
        }
        if cfg.verbose {
            println!(
                "ping data: {}",
                String::from_utf8_lossy(&got[..cfg.size - 1])
            );
        }
        data.push(got);
    }
    let (wall, clocks) = (t0.elapsed(), w.clock() - c0);
    qp.disconnect(false).map_err(e("disconnect"))?;
    w.event(ctx, EventKind::Closed)?;
    Ok(Report {
        connection: est,
        data,
        attempts,
        wall,
        clocks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_data_is_rpings_pattern() {
        // rping -S 30, ping 0 and ping 1: the format, then letters from 'A'
        // (ping 0) or 'B' (ping 1), NUL last
        assert_eq!(ping_data(0, 30), b"rdma-ping-0: ABCDEFGHIJKLMNOP\0");
        assert_eq!(ping_data(1, 30), b"rdma-ping-1: BCDEFGHIJKLMNOPQ\0");
        // letters wrap from 'z' to 'A', and the start letter from ping 58 on
        let d = ping_data(57, 80);
        assert_eq!(&d[14..17], b"zAB");
        assert_eq!(ping_data(58, 30)[14], b'A');
    }

    #[test]
    fn info_round_trips() {
        let i = Info {
            buf: 0x0102_0304_0506_0708,
            rkey: 0x1122_3344,
            size: 64,
        };
        let b = i.emit();
        assert_eq!(&b[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(Info::parse(&b), Some(i));
        assert_eq!(Info::parse(&b[..15]), None);
    }
}
