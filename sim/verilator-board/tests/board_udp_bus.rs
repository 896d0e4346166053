//! The acceptance test of docs/bridge.md: the driver's `UdpBus` against the
//! Verilated board top, through port 1's RGMII pins.
//!
//! ```text
//!  worker thread                 test thread (owns the model)
//!  Context::open(UdpBus) ──UDP──► adapter socket ──smoltcp: Eth/IPv4/UDP──►
//!   (localhost socket)                 PHY 1 model ──RGMII pins──► rnic_versa5g
//!                         ◄──UDP── adapter ◄──smoltcp parse── PHY 1 model ◄──
//! ```
//!
//! The test thread steps the model and polls the adapter's non-blocking
//! socket between steps, so the simulation advances while `UdpBus` waits;
//! every wait has a budget in board clocks and fails with a message.
//!
//! Firmware: `STATUS_READY` is the firmware's (it rises on its first read
//! of `MBOX_CMD`); the test plays firmware itself through the bridge's
//! firmware window (`UdpBus::fw_read32`/`fw_write32`, docs/bridge.md
//! "Firmware window"; the real firmware over it is `board_fw.rs`). It
//! pushes one event, which the core writes into the driver's event queue
//! by DMA (a `DMA_WR` served by `UdpBus` into its host memory) and signals
//! with `irq` (an `IRQ` message), and programs one QP context.

use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rnic_driver::bus::{Bus, BusError, DmaMem};
use rnic_driver::udp_bus::{UdpBus, UdpBusConfig, UdpDma};
use rnic_driver::{Context, DeviceError, Error};
use rnic_wire::abi::bridge::Repr;
use rnic_wire::abi::context::{port, QpContext, TableId, QP_CTX_SIZE};
use rnic_wire::abi::csr;
use rnic_wire::abi::doorbell::QP_SQ_PRODUCER;
use rnic_wire::abi::mailbox::QpState;
use rnic_wire::abi::mailbox::{Event, EventKind, EVENT_SIZE};
use rnic_wire::abi::wqe::WQE_SIZE;
use verilator_board::{Rig, Sig};

mod bridge_rig;
use bridge_rig::{from_board, to_board};

/// Requests from the worker to the test thread.
enum Fw {
    /// Answer once the board asked for a DMA read at this bus address and
    /// the simulated host's completion went back to the board.
    AwaitRead(u64, ReadReply),
}

/// The answer to [`Fw::AwaitRead`]: the request's length and the octets the
/// host sent back.
type ReadReply = mpsc::Sender<(u16, Vec<u8>)>;

/// A bus that reports a different ABI major version: `Context::open` must
/// refuse the board through it (the check can fail).
struct WrongAbi<'a>(&'a UdpBus);

impl Bus for WrongAbi<'_> {
    type Dma = UdpDma;
    fn read32(&self, offset: u32) -> u32 {
        let v = self.0.read32(offset);
        if offset == csr::ABI_VERSION {
            v.wrapping_add(1 << 16)
        } else {
            v
        }
    }
    fn write32(&self, offset: u32, value: u32) {
        self.0.write32(offset, value)
    }
    fn alloc_dma(&self, len: usize, align: usize) -> Result<UdpDma, BusError> {
        self.0.alloc_dma(len, align)
    }
    fn wait_interrupt(&self, timeout: Duration) -> bool {
        self.0.wait_interrupt(timeout)
    }
    fn now(&self) -> Duration {
        self.0.now()
    }
}

/// What the worker reports.
struct Report {
    caps: String,
}

fn worker(board: SocketAddr, fw: mpsc::Sender<Fw>) -> Report {
    let mut cfg = UdpBusConfig::new(board);
    cfg.local = "127.0.0.1:0".parse().unwrap();
    // A round trip takes ~210 board clocks, 2-4 ms at the model's speed
    // (tens of ms on a heavily loaded machine): 300 ms per try leaves a wide
    // margin, and a resend is answered from the board's cache anyway, so a
    // late answer cannot make a request act twice. The test drops one
    // request and one answer, so two tries are needed there.
    cfg.timeout = Duration::from_millis(300);
    cfg.tries = 5;
    let bus = UdpBus::connect(cfg).expect("HELLO answered by the simulated board");
    // Play firmware: the first MBOX_CMD read raises STATUS_READY.
    assert_eq!(bus.mmio_read(csr::STATUS).unwrap() & csr::STATUS_READY, 0);
    let _ = bus.fw_read32(port::MBOX_CMD).expect("FW_READ of MBOX_CMD");

    // A wrong ABI version is refused (before anything is written).
    match Context::open(WrongAbi(&bus)) {
        Err(Error::Device(DeviceError::AbiVersion(v))) => {
            assert_eq!(v, rnic_wire::abi::ABI_VERSION.wrapping_add(1 << 16))
        }
        Err(e) => panic!("wrong ABI refused with the wrong error: {e:?}"),
        Ok(_) => panic!("a wrong ABI major version was accepted"),
    }
    // The raw registers, read over the bridge.
    assert_eq!(bus.mmio_read(csr::ID).unwrap(), csr::ID_VALUE);
    assert_eq!(
        bus.mmio_read(csr::ABI_VERSION).unwrap(),
        rnic_wire::abi::ABI_VERSION
    );
    assert_ne!(bus.mmio_read(csr::STATUS).unwrap() & csr::STATUS_READY, 0);

    // No firmware runs here to come back up after a reset (the test made
    // STATUS_READY itself): open without one.
    let ctx = Context::open_with(
        bus,
        rnic_driver::Options {
            reset: false,
            ..rnic_driver::Options::default()
        },
    )
    .expect("Context::open over UdpBus");
    let caps = format!("{:?}", ctx.caps());
    let c = ctx.caps();
    assert_eq!(c.abi_version, rnic_wire::abi::ABI_VERSION);
    assert!(c.max_qp > 0 && c.max_cq > 0 && c.max_tpt > 0 && c.max_queue_entries > 0);

    // A BAR0 write/read round trip: INT_MASK (RW) as Context::open set it,
    // then another value, then back.
    let bus = ctx.bus();
    let mask = csr::INT_EVENT | csr::INT_MBOX_DONE | csr::INT_EQ_OVERFLOW;
    assert_eq!(bus.mmio_read(csr::INT_MASK).unwrap(), mask);
    bus.mmio_write(csr::INT_MASK, csr::INT_EVENT).unwrap();
    assert_eq!(bus.mmio_read(csr::INT_MASK).unwrap(), csr::INT_EVENT);
    bus.mmio_write(csr::INT_MASK, mask).unwrap();
    assert_eq!(bus.mmio_read(csr::INT_MASK).unwrap(), mask);

    // Device DMA write + interrupt: the firmware pushes an event for a CQ
    // the driver does not know; the core writes it into the event queue
    // (host memory served by UdpBus) and raises irq.
    let mut ev = [0u8; EVENT_SIZE];
    Event {
        kind: EventKind::CqCompletion,
        handle: 0x77,
        status: 0,
        peer_ip: 0,
        peer_port: 0,
        local_port: 0,
        ird: 0,
        ord: 0,
        private_data_len: 0,
        mpa_revision: 0,
        crc: false,
        markers: false,
        listen_id: 0,
        phase: false,
    }
    .emit(&mut ev)
    .unwrap();
    // EVENT_DATA + EVENT_PUSH through the firmware window.
    for (i, w) in ev.chunks(4).enumerate() {
        let v = u32::from_le_bytes(w.try_into().unwrap());
        ctx.bus()
            .fw_write32(port::EVENT_DATA + 4 * i as u32, v)
            .unwrap();
    }
    ctx.bus().fw_write32(port::EVENT_PUSH, 1).unwrap();
    let t0 = Instant::now();
    let mut n = 0;
    while n == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the pushed event never reached the event queue"
        );
        ctx.bus().wait_interrupt(Duration::from_millis(200));
        n = ctx.process_events().expect("event queue");
    }
    assert_eq!(n, 1, "one event");
    assert_eq!(
        ctx.spurious_events(),
        1,
        "for a CQ the driver does not know"
    );

    // Device DMA read: the firmware programs QP 1's send ring (a DMA
    // buffer of UdpBus) in the QP table, the driver rings QP 1's doorbell
    // over the bridge, and the core fetches the WQE: a DMA_RD_REQ for the
    // ring's first entry, served by UdpBus from its host memory.
    const QPN: u32 = 1;
    let sq = ctx.alloc_dma(16 * WQE_SIZE).unwrap();
    let wqe: Vec<u8> = (0..WQE_SIZE).map(|i| (i * 7 + 3) as u8).collect();
    sq.write(0, &wqe).unwrap();
    let mut qp = [0u8; QP_CTX_SIZE];
    QpContext {
        state: QpState::Rts,
        flags: 0,
        rtr: rnic_wire::abi::context::RtrKind::None,
        sq_log2: 4,
        pd: 1,
        send_cqn: 0,
        recv_cqn: 0,
        sq_ring: sq.bus_addr(),
        rq_ring: 0,
        rq_log2: 0,
        conn: 0,
        ird: 1,
        ord: 1,
        tx_send_msn: 1,
        tx_read_msn: 1,
        rx_send_msn: 1,
        rx_read_msn: 1,
        term_cause: 0,
    }
    .emit(&mut qp)
    .unwrap();
    // TABLE_DATA, TABLE_SEL, TABLE_CMD through the firmware window.
    let b = ctx.bus();
    for (i, w) in qp.chunks(4).enumerate() {
        let v = u32::from_le_bytes(w.try_into().unwrap());
        b.fw_write32(port::TABLE_DATA + 4 * i as u32, v).unwrap();
    }
    b.fw_write32(port::TABLE_SEL, (TableId::Qp as u32) << 24 | QPN)
        .unwrap();
    b.fw_write32(port::TABLE_CMD, port::TABLE_WRITE).unwrap();
    let mut busy = 16;
    while b.fw_read32(port::TABLE_CMD).unwrap() & 1 != 0 {
        busy -= 1;
        assert!(busy > 0, "TABLE_CMD stays busy");
    }
    assert_eq!(
        b.fw_read32(port::TABLE_CMD).unwrap() & 2,
        0,
        "table write error"
    );
    let (rd_tx, rd_rx) = mpsc::channel();
    fw.send(Fw::AwaitRead(sq.bus_addr(), rd_tx)).unwrap();
    ctx.bus()
        .mmio_write(csr::qp_doorbell_page(QPN) + QP_SQ_PRODUCER, 1)
        .unwrap();
    let (len, served) = rd_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("no DMA read of the send ring after the doorbell");
    assert!(
        len as usize >= WQE_SIZE && (len as usize).is_multiple_of(WQE_SIZE),
        "WQE fetch of {len} octets"
    );
    assert_eq!(&served[..WQE_SIZE], &wqe[..], "the WQE as UdpBus served it");

    let errors = ctx.bus().take_errors();
    assert!(errors.is_empty(), "UdpBus errors: {errors:?}");
    Report { caps }
}

#[test]
fn context_opens_over_udp_bus_against_the_simulated_board() {
    let t_start = Instant::now();
    let mut rig = Rig::new(0, [0, 100]);
    rig.trace_from_env("udp_bus");
    // Port 0 is unused here: its receive clock stays stopped. Port 1's
    // stops after 256 idle periods (the CDC has long drained by then).
    rig.phy[0].idle_stop = Some(0);
    rig.phy[1].idle_stop = Some(256);

    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_nonblocking(true).unwrap();
    let board = sock.local_addr().unwrap();
    let (fw_tx, fw_rx) = mpsc::channel();
    let w = std::thread::spawn(move || worker(board, fw_tx));

    // Budget: 3 M board clocks (24 ms of board time; the test needs ~7 k).
    // With the idle throttle below that is at least ~3 minutes of wall time
    // while nothing happens.
    const BUDGET: u64 = 3_000_000;
    let mut host: Option<SocketAddr> = None;
    let mut buf = [0u8; 2048];
    // Round trips: core clock when a request entered the PHY queue.
    let mut pending: Option<u64> = None;
    let mut rtts: Vec<u64> = Vec::new();
    let (mut to_board_n, mut to_host_n) = (0u32, 0u32);
    let sim_start = rig.core_cycles;
    // DMA reads the board asked for: addr -> (len, octets served so far).
    let mut reads: Vec<(u64, u16, Vec<u8>)> = Vec::new();
    let mut await_read: Option<(u64, ReadReply)> = None;
    let (mut dropped_req, mut dropped_ack) = (false, false);
    // Board clock of the last datagram or firmware request: after 20 k
    // quiet clocks the loop sleeps 1 ms per 16 clocks, so a worker that is
    // slow to be scheduled (a loaded machine) does not use up the budget
    // while the board idles.
    let mut last_activity = rig.core_cycles;
    loop {
        let before = (to_board_n, to_host_n);
        while let Ok((n, from)) = sock.recv_from(&mut buf) {
            if let Ok(Repr::DmaRdCpl { addr, data, .. }) = Repr::parse(&buf[..n]) {
                if let Some(r) = reads.iter_mut().find(|r| addr == r.0 + r.2.len() as u64) {
                    r.2.extend_from_slice(data);
                }
            }
            host = Some(from);
            // Loss: the fourth datagram to the board is dropped; UdpBus
            // sends it again after its timeout (same seq).
            if to_board_n == 3 && !dropped_req {
                dropped_req = true;
                to_board_n += 1;
                continue;
            }
            rig.phy[1].send(&to_board(&buf[..n]));
            to_board_n += 1;
            pending.get_or_insert(rig.core_cycles);
        }
        while let Some(f) = rig.phy[1].received.pop_front() {
            assert!(f.ok, "bad FCS/preamble from the board: {:02x?}", f.data);
            let p = from_board(&f.data).unwrap_or_else(|e| panic!("frame from the board: {e}"));
            if let Ok(Repr::DmaRdReq { addr, len, .. }) = Repr::parse(&p) {
                reads.push((addr, len, Vec::new()));
            }
            // Loss: the first MMIO write acknowledgement is dropped; UdpBus
            // resends the write with the same seq and the board answers it
            // from its answer cache without writing again (cnt_dup).
            if !dropped_ack && matches!(Repr::parse(&p), Ok(Repr::MmioWriteAck { .. })) {
                dropped_ack = true;
                pending = None;
                continue;
            }
            sock.send_to(&p, host.expect("a host")).unwrap();
            to_host_n += 1;
            if let Some(t) = pending.take() {
                rtts.push(rig.core_cycles - t);
            }
        }
        while let Ok(req) = fw_rx.try_recv() {
            match req {
                Fw::AwaitRead(addr, reply) => await_read = Some((addr, reply)),
            }
        }
        if let Some((addr, _)) = &await_read {
            if let Some(r) = reads
                .iter()
                .find(|r| r.0 == *addr && r.2.len() >= r.1 as usize)
            {
                let (len, data) = (r.1, r.2.clone());
                await_read.take().unwrap().1.send((len, data)).unwrap();
            }
        }
        if w.is_finished() {
            break;
        }
        if (to_board_n, to_host_n) != before || await_read.is_some() {
            last_activity = rig.core_cycles;
        }
        if rig.core_cycles - last_activity > 20_000 {
            std::thread::sleep(Duration::from_millis(1));
        }
        rig.run_core_cycles(16);
        assert!(
            rig.core_cycles - sim_start < BUDGET,
            "no end within {BUDGET} board clocks: {to_board_n} datagrams to the board, \
             {to_host_n} back; bridge rx ok {} drop {} nak {}",
            rig.board.get(Sig::BridgeCntRxOk),
            rig.board.get(Sig::BridgeCntRxDrop),
            rig.board.get(Sig::BridgeCntNak),
        );
    }
    let report = match w.join() {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    };
    assert!(dropped_req && dropped_ack);
    assert!(
        rig.board.get(Sig::BridgeCntDup) >= 1,
        "the resent write was answered from the cache"
    );
    assert_eq!(rig.board.get(Sig::BridgeCntNak), 0);
    assert_eq!(
        rig.board.get(Sig::BridgeCntCplDrop),
        0,
        "every DMA_RD_CPL taken"
    );
    assert_eq!(rig.board.get(Sig::BridgeCntRxDrop), 0);
    assert_eq!(rig.board.get(Sig::BridgeHostKnown), 1);
    let secs = t_start.elapsed().as_secs_f64();
    let cycles = rig.core_cycles - sim_start;
    rtts.sort_unstable();
    eprintln!(
        "UdpBus co-sim: caps {}; {to_board_n} datagrams from UdpBus (1 dropped), \
         {to_host_n} forwarded back (+1 dropped), {} answered from the cache; \
         {cycles} board clocks in {secs:.1} s ({:.0} clocks/s, {} evaluations); \
         request → first answer: min {} median {} max {} board clocks",
        report.caps,
        rig.board.get(Sig::BridgeCntDup),
        cycles as f64 / secs,
        rig.evals,
        rtts.first().copied().unwrap_or(0),
        rtts.get(rtts.len() / 2).copied().unwrap_or(0),
        rtts.last().copied().unwrap_or(0),
    );
}
