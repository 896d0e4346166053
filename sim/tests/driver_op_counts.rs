//! What the host driver does per MiB moved by RDMA Write (issue 6,
//! "Measure": driver work on the target host per MiB received — the point
//! is zero data copies). Both nodes run the driver over a counting [`Bus`]
//! wrapper around `SimBus` that counts every MMIO read and write and every
//! touch of DMA memory through the driver (calls and octets). After the
//! connection and the registrations, the counters are zeroed; A posts one
//! signaled 1 MiB RDMA Write into B's region and polls its send CQ.
//!
//! The design says (docs/driver.md, "Driver work per MiB"), and the test
//! asserts:
//! * target host (B): nothing at all — no driver call, no MMIO, no DMA
//!   memory touched by the driver; the octets are placed by the device.
//!   With an application polling its (empty) CQ, each poll is one 1-octet
//!   read of the next CQE's owner octet and nothing else;
//! * sending host (A): one `post_send` = one 128-octet WQE write + the
//!   WQE's push (`abi::doorbell::QP_SQ_PUSH`: its dwords up to the last
//!   non-zero one, 12 for one SGE) + one doorbell write; one completion = one CQE read (owner octet, then the
//!   32-octet entry) + one consumer-index write; each empty poll one
//!   1-octet read; no MMIO read anywhere.
//!
//! Reference: B's region is compared with the source octets (read from the
//! sim's host memory, not through the driver); the counts are compared with
//! the ABI's sizes (`WQE_SIZE`, `CQE_SIZE`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rnic_driver::{
    AccessFlags, Bus, BusError, CmEvent, Context, DmaMem, Error, EventKind, RemoteAddr, SendOp,
    SendWr, WcOpcode, WcStatus, WorkCompletion,
};
use rnic_sim::link::LinkConfig;
use rnic_sim::node::World;
use rnic_sim::rng::Rng;
use rnic_sim::rtl_run::{
    connect_params, net_config, run_until, world_pair, GUARD, MPA_REV2_CRC, PORT, READ_DEPTH,
};
use rnic_sim::sim_bus::{driver_options, SimBus, SimDma};
use rnic_wire::abi::cqe::CQE_SIZE;
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_WRITE};
use rnic_wire::abi::wqe::WQE_SIZE;

const MIB: usize = 1 << 20;

/// What the driver did through its bus.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    mmio_reads: u64,
    mmio_writes: u64,
    dma_reads: u64,
    dma_read_octets: u64,
    dma_writes: u64,
    dma_write_octets: u64,
    waits: u64,
}

type Shared = Rc<Cell<Counts>>;

fn bump(c: &Shared, f: impl FnOnce(&mut Counts)) {
    let mut v = c.get();
    f(&mut v);
    c.set(v);
}

/// A [`Bus`] that counts what passes through it.
struct CountingBus {
    inner: SimBus,
    counts: Shared,
}

struct CountingDma {
    inner: SimDma,
    counts: Shared,
}

impl Bus for CountingBus {
    type Dma = CountingDma;
    fn read32(&self, offset: u32) -> u32 {
        bump(&self.counts, |c| c.mmio_reads += 1);
        self.inner.read32(offset)
    }
    fn write32(&self, offset: u32, value: u32) {
        bump(&self.counts, |c| c.mmio_writes += 1);
        self.inner.write32(offset, value)
    }
    fn alloc_dma(&self, len: usize, align: usize) -> Result<CountingDma, BusError> {
        Ok(CountingDma {
            inner: self.inner.alloc_dma(len, align)?,
            counts: self.counts.clone(),
        })
    }
    fn wait_interrupt(&self, timeout: Duration) -> bool {
        bump(&self.counts, |c| c.waits += 1);
        self.inner.wait_interrupt(timeout)
    }
    fn now(&self) -> Duration {
        self.inner.now()
    }
}

impl DmaMem for CountingDma {
    fn bus_addr(&self) -> u64 {
        self.inner.bus_addr()
    }
    fn cpu_addr(&self) -> u64 {
        self.inner.cpu_addr()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), BusError> {
        bump(&self.counts, |c| {
            c.dma_reads += 1;
            c.dma_read_octets += buf.len() as u64
        });
        self.inner.read(offset, buf)
    }
    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BusError> {
        bump(&self.counts, |c| {
            c.dma_writes += 1;
            c.dma_write_octets += data.len() as u64
        });
        self.inner.write(offset, data)
    }
}

type Ctx = Context<CountingBus>;

fn open(world: &Rc<RefCell<World>>, idx: usize) -> (Ctx, Shared) {
    let counts = Shared::default();
    let bus = CountingBus {
        inner: SimBus::new(world.clone(), idx),
        counts: counts.clone(),
    };
    let ctx = Context::open_with(bus, driver_options()).unwrap();
    ctx.configure(&net_config(idx as u8 + 1, 1500)).unwrap();
    (ctx, counts)
}

fn expect(ctx: &Ctx, kind: EventKind) -> CmEvent {
    let end = ctx.bus().now() + Duration::from_millis(20);
    loop {
        match ctx.get_cm_event(Duration::from_micros(20)) {
            Ok(ev) if ev.kind == kind => return ev,
            Ok(ev) if ev.kind == EventKind::CqCompletion => {}
            Ok(ev) => panic!("{ev:?} while waiting for {kind:?}"),
            Err(Error::Timeout) if ctx.bus().now() < end => {}
            Err(e) => panic!("no {kind:?}: {e:?}"),
        }
    }
}

/// B's behaviour while the Write arrives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    /// The application makes no driver call.
    Idle,
    /// The application polls its receive CQ once per world round.
    Polls,
}

/// Connects, registers, zeroes the counters, moves one Write of `len`
/// octets A → B; returns (A's counts, B's counts, A's empty polls, B's
/// polls, clocks).
fn one_write(len: usize, target: Target) -> (Counts, Counts, u64, u64, u64) {
    let world = world_pair(LinkConfig::default(), None).unwrap();
    let (a, cnt_a) = open(&world, 0);
    let (b, cnt_b) = open(&world, 1);
    let (pd_a, pd_b) = (a.alloc_pd().unwrap(), b.alloc_pd().unwrap());
    let (cq_a, cq_b) = (a.create_cq(16).unwrap(), b.create_cq(16).unwrap());
    let qp_a = pd_a.create_qp(&cq_a, &cq_a, 4, 1).unwrap();
    let qp_b = pd_b.create_qp(&cq_b, &cq_b, 1, 4).unwrap();
    let _l = b.listen(PORT, 1).unwrap();
    qp_a.connect(&connect_params(MPA_REV2_CRC), b"").unwrap();
    let creq = expect(&b, EventKind::ConnectRequest);
    b.accept(creq.handle, &qp_b, READ_DEPTH, READ_DEPTH, b"")
        .unwrap();
    expect(&b, EventKind::Established);
    expect(&a, EventKind::Established);
    let src = a.alloc_dma(len).unwrap();
    let dst = b.alloc_dma(len + 2 * GUARD).unwrap();
    let acc = |x| AccessFlags::from_bits(x).unwrap();
    let mr_a = pd_a.reg_mr(&src, 0, len, acc(ACCESS_LOCAL_WRITE)).unwrap();
    let mr_b = pd_b
        .reg_mr(
            &dst,
            GUARD,
            len,
            acc(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE),
        )
        .unwrap();
    let data = Rng::new(len as u64).bytes(len);
    src.write(0, &data).unwrap();
    let dst_addr = dst.bus_addr();

    // From here on every driver action is counted.
    cnt_a.set(Counts::default());
    cnt_b.set(Counts::default());
    let sge = [mr_a.sge(0, len as u32).unwrap()];
    qp_a.post_send(&[SendWr {
        wr_id: 1,
        op: SendOp::RdmaWrite(RemoteAddr {
            addr: mr_b.va(),
            rkey: mr_b.rkey(),
        }),
        sges: &sge,
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .unwrap();
    let mut wc = [WorkCompletion::default()];
    let (mut polls_a, mut polls_b) = (0u64, 0u64);
    let mut done = false;
    let budget = 40 * len as u64 + 100_000;
    let r = run_until(&world, budget, |_| {
        if target == Target::Polls {
            polls_b += 1;
            assert_eq!(cq_b.poll(&mut wc).unwrap(), 0, "no CQE at B for a Write");
        }
        if !done {
            polls_a += 1;
            done = cq_a.poll(&mut wc).unwrap() == 1;
        }
        // A's completion can come before B's last octet is placed (the
        // Write's CQE means "sent", docs/rtl.md): wait for both.
        done && {
            let w = world.borrow();
            let hw = w.nodes[1].hw.borrow();
            hw.placed.iter().map(|p| p.2 as usize).sum::<usize>() >= len && hw.dma.idle()
        }
    });
    let clocks = r.unwrap_or_else(|c| panic!("Write of {len} not done after {c} clocks"));
    assert_eq!(wc[0].status, WcStatus::Success);
    assert_eq!(wc[0].opcode, WcOpcode::RdmaWrite);
    let (ca, cb) = (cnt_a.get(), cnt_b.get());

    // Byte-exact, read from the sim's memory (not through the driver).
    let mut got = vec![0u8; len + 2 * GUARD];
    world.borrow().nodes[1]
        .hw
        .borrow()
        .mem
        .read(dst_addr, &mut got)
        .unwrap();
    assert_eq!(&got[GUARD..GUARD + len], &data[..], "placed byte-exact");
    assert!(got[..GUARD]
        .iter()
        .chain(&got[GUARD + len..])
        .all(|&x| x == 0));
    (ca, cb, polls_a - 1, polls_b, clocks)
}

#[test]
fn driver_work_per_mib_received_by_rdma_write() {
    let wall = Instant::now();
    let (a, b, empty_a, _, clocks) = one_write(MIB, Target::Idle);
    println!("1 MiB RDMA Write in {clocks} clocks; A (sender): {a:?}, {empty_a} empty polls; B (target): {b:?}");
    // Target host: zero driver work for a one-sided Write.
    assert_eq!(b, Counts::default(), "target host: no driver work at all");
    // Sending host: one post (WQE + its push + doorbell), one completion
    // (owner octet + CQE + consumer write), one owner-octet read per
    // empty poll. The push: the 32-octet header and one 16-octet SGE.
    assert_eq!(a.mmio_reads, 0, "no register read on the data path");
    assert_eq!(
        a.mmio_writes,
        (32 + 16) / 4 + 2,
        "WQE push + SQ doorbell + CQ consumer index"
    );
    assert_eq!(
        (a.dma_writes, a.dma_write_octets),
        (1, WQE_SIZE as u64),
        "one WQE written"
    );
    assert_eq!(
        a.dma_reads,
        empty_a + 2,
        "owner octet per poll, then the CQE"
    );
    assert_eq!(
        a.dma_read_octets,
        empty_a + 1 + CQE_SIZE as u64,
        "no data octet read by the driver"
    );
    assert_eq!(a.waits, 0);

    // The application polling B's CQ while the Write arrives: one owner
    // octet per poll, nothing else.
    let (_, b, _, polls_b, _) = one_write(64 << 10, Target::Polls);
    println!("64 KiB Write, B polling its CQ {polls_b} times: B {b:?}");
    assert_eq!(
        b,
        Counts {
            dma_reads: polls_b,
            dma_read_octets: polls_b,
            ..Counts::default()
        }
    );
    let line = format!(
        "{{\"bench\":\"driver_op_counts\",\"write_octets\":{MIB},\"clocks\":{clocks},\
         \"target_mmio\":0,\"target_dma_touches\":0,\"sender_mmio_writes\":{},\
         \"sender_mmio_reads\":{},\"sender_dma_write_octets\":{},\"sender_cqe_read_octets\":{},\
         \"sender_empty_polls\":{empty_a}}}\n",
        a.mmio_writes,
        a.mmio_reads,
        a.dma_write_octets,
        a.dma_read_octets - empty_a,
    );
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("driver_op_counts.json");
    std::fs::write(&out, line).unwrap();
    println!(
        "written {}; wall {:.1} s",
        out.display(),
        wall.elapsed().as_secs_f64()
    );
}
