//! [`UdpBus`]: the driver's [`Bus`] over the board's UDP host bridge
//! (docs/bridge.md, `rnic_wire::abi::bridge`). Feature `udp`.
//!
//! * BAR0: each [`Bus::read32`]/[`Bus::write32`] is one request, stop and
//!   wait, resent with the same sequence number after
//!   [`UdpBusConfig::timeout`] up to [`UdpBusConfig::tries`] times (the
//!   board answers a repeat from its cache, so a resend never acts twice).
//!   A request that fails returns `0xFFFF_FFFF` (reads; as a PCIe read of a
//!   gone device) and records the typed error ([`UdpBus::take_errors`]);
//!   [`UdpBus::mmio_read`]/[`UdpBus::mmio_write`] return it directly.
//! * DMA: a background thread answers the device. `DMA_RD_REQ` is served
//!   from the memory [`Bus::alloc_dma`] handed out, in 1024-octet
//!   `DMA_RD_CPL` chunks; `DMA_WR` is stored there. Accesses outside every
//!   buffer are refused and recorded ([`UdpBusError::DmaOutOfRange`]; a
//!   read is answered with zeros so the device does not hang).
//! * The device sequence (`DMA_RD_REQ`, `DMA_WR`, `IRQ`) is checked: a gap
//!   is recorded as [`UdpBusError::DeviceMessageLost`]; a repeated
//!   `DMA_RD_REQ` (the board's retry) is served again, other repeats are
//!   ignored.
//! * `IRQ` with level 1 wakes [`Bus::wait_interrupt`].
//! * Bus addresses: buffers are placed from [`UdpBusConfig::dma_base`] up,
//!   never reused while allocated; `cpu_addr` = `bus_addr` (no CPU mapping).

use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rnic_wire::abi::bridge::{NakReason, Repr, MAX_PAYLOAD};

use crate::bus::{Bus, BusError, DmaMem};

/// What went wrong on the bridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UdpBusError {
    /// The socket failed.
    Io(io::ErrorKind),
    /// No answer after every try.
    Timeout { seq: u32, tries: u32 },
    /// The board refused the request.
    Nak {
        seq: u32,
        opcode: u8,
        reason: NakReason,
    },
    /// A device message (DMA write, read request, interrupt) is missing:
    /// the device sequence jumped from `expected` to `got`.
    DeviceMessageLost { expected: u32, got: u32 },
    /// The device accessed memory outside every DMA buffer.
    DmaOutOfRange { addr: u64, len: usize, write: bool },
    /// A datagram from the board that is not a valid message, or a message
    /// a host does not take.
    Malformed,
    /// An answer of the wrong kind for the request in flight.
    UnexpectedAnswer { seq: u32 },
}

impl core::fmt::Display for UdpBusError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            UdpBusError::Io(k) => write!(f, "bridge socket: {k}"),
            UdpBusError::Timeout { seq, tries } => {
                write!(f, "bridge request {seq}: no answer after {tries} tries")
            }
            UdpBusError::Nak {
                seq,
                opcode,
                reason,
            } => write!(
                f,
                "bridge request {seq} (opcode {opcode:#x}) refused: {reason:?}"
            ),
            UdpBusError::DeviceMessageLost { expected, got } => {
                write!(f, "device messages lost: expected {expected}, got {got}")
            }
            UdpBusError::DmaOutOfRange { addr, len, write } => write!(
                f,
                "device DMA {} of {len} octets at {addr:#x} outside every buffer",
                if *write { "write" } else { "read" }
            ),
            UdpBusError::Malformed => f.write_str("malformed datagram from the board"),
            UdpBusError::UnexpectedAnswer { seq } => {
                write!(f, "answer of the wrong kind for request {seq}")
            }
        }
    }
}

impl std::error::Error for UdpBusError {}

impl From<io::Error> for UdpBusError {
    fn from(e: io::Error) -> Self {
        UdpBusError::Io(e.kind())
    }
}

/// Settings of a [`UdpBus`].
#[derive(Debug, Clone)]
pub struct UdpBusConfig {
    /// The board: its IPv4 address and `BRIDGE_PORT`.
    pub board: SocketAddr,
    /// The local address to bind (port 0: any).
    pub local: SocketAddr,
    /// Wait for an answer before resending.
    pub timeout: Duration,
    /// Sends of one request before [`UdpBusError::Timeout`].
    pub tries: u32,
    /// Bus address of the first DMA buffer.
    pub dma_base: u64,
    /// Octets of bus address space handed out.
    pub dma_size: u64,
}

impl UdpBusConfig {
    /// Defaults for a board at `board`: 20 ms, 5 tries, DMA buffers from
    /// 4 GiB up (so 32-bit truncation bugs show), 256 MiB.
    pub fn new(board: SocketAddr) -> Self {
        UdpBusConfig {
            board,
            local: SocketAddr::from(([0, 0, 0, 0], 0)),
            timeout: Duration::from_millis(20),
            tries: 5,
            dma_base: 1 << 32,
            dma_size: 256 << 20,
        }
    }
}

/// An answer to a host request.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Value(u32),
    Ack,
    Hello(u32),
    Nak(u8, NakReason),
    /// `FW_READ_RSP`.
    FwValue(u32),
    /// `FW_WRITE_ACK`.
    FwAck,
}

#[derive(Default)]
struct State {
    /// Answers by request sequence number (only the one in flight is kept).
    answer: Option<(u32, Answer)>,
    /// An interrupt (level 1) came since `wait_interrupt` last returned.
    irq_pending: bool,
    errors: Vec<UdpBusError>,
    /// The next device sequence number, once known.
    dev_next: Option<u32>,
    /// The last `DMA_RD_REQ` served (its seq), so a retry is served again.
    last_rd_seq: Option<u32>,
}

struct Shared {
    /// Buffers by bus address.
    mem: Mutex<BTreeMap<u64, Vec<u8>>>,
    state: Mutex<State>,
    cv: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn error(&self, e: UdpBusError) {
        self.state.lock().unwrap().errors.push(e);
    }
}

/// The driver's bus over the UDP host bridge.
pub struct UdpBus {
    shared: Arc<Shared>,
    sock: UdpSocket,
    cfg: UdpBusConfig,
    seq: Mutex<u32>,
    /// FIFO turns for requests (next ticket, ticket being served): threads
    /// sharing the bus (the driver's BAR0 accesses, the host-side
    /// firmware's port accesses) take turns in arrival order, so a thread
    /// that requests back to back cannot starve the others.
    turn: Mutex<(u64, u64)>,
    turn_cv: Condvar,
    next_dma: Mutex<u64>,
    start: Instant,
    thread: Option<JoinHandle<()>>,
}

impl UdpBus {
    /// Binds a socket, starts the DMA thread and says `HELLO` (which tells
    /// the board where the host is and gives the device sequence).
    pub fn connect(cfg: UdpBusConfig) -> Result<UdpBus, UdpBusError> {
        let sock = UdpSocket::bind(cfg.local)?;
        sock.connect(cfg.board)?;
        let rx = sock.try_clone()?;
        rx.set_read_timeout(Some(Duration::from_millis(10)))?;
        let shared = Arc::new(Shared {
            mem: Mutex::new(BTreeMap::new()),
            state: Mutex::new(State::default()),
            cv: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let sh = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rnic-udp-bus".into())
            .spawn(move || serve(rx, sh))?;
        let bus = UdpBus {
            shared,
            sock,
            next_dma: Mutex::new(cfg.dma_base),
            cfg,
            seq: Mutex::new(1),
            turn: Mutex::new((0, 0)),
            turn_cv: Condvar::new(),
            start: Instant::now(),
            thread: Some(thread),
        };
        bus.hello()?;
        Ok(bus)
    }

    /// The local socket address (the board answers here).
    pub fn local_addr(&self) -> Result<SocketAddr, UdpBusError> {
        Ok(self.sock.local_addr()?)
    }

    /// Errors recorded since the last call (failed `read32`/`write32`,
    /// device-side problems).
    pub fn take_errors(&self) -> Vec<UdpBusError> {
        std::mem::take(&mut self.shared.state.lock().unwrap().errors)
    }

    /// `HELLO`: returns the board's next device sequence number.
    pub fn hello(&self) -> Result<u32, UdpBusError> {
        match self.request(|seq| Repr::Hello { seq })? {
            (_, Answer::Hello(n)) => {
                self.shared.state.lock().unwrap().dev_next = Some(n);
                Ok(n)
            }
            (seq, _) => Err(UdpBusError::UnexpectedAnswer { seq }),
        }
    }

    /// Reads the BAR0 register at `offset`.
    pub fn mmio_read(&self, offset: u32) -> Result<u32, UdpBusError> {
        match self.request(|seq| Repr::MmioRead { seq, offset })? {
            (_, Answer::Value(v)) => Ok(v),
            (seq, _) => Err(UdpBusError::UnexpectedAnswer { seq }),
        }
    }

    /// Writes the BAR0 register at `offset`; returns once the board
    /// acknowledged it.
    pub fn mmio_write(&self, offset: u32, value: u32) -> Result<(), UdpBusError> {
        match self.request(|seq| Repr::MmioWrite { seq, offset, value })? {
            (_, Answer::Ack) => Ok(()),
            (seq, _) => Err(UdpBusError::UnexpectedAnswer { seq }),
        }
    }

    /// Reads the firmware-port register at `offset`
    /// (`rnic_wire::abi::context::port`; docs/bridge.md "Firmware window").
    /// Stop and wait like BAR0: a resend is answered from the board's cache,
    /// so a read never acts twice.
    pub fn fw_read32(&self, offset: u32) -> Result<u32, UdpBusError> {
        match self.request(|seq| Repr::FwRead { seq, offset })? {
            (_, Answer::FwValue(v)) => Ok(v),
            (seq, _) => Err(UdpBusError::UnexpectedAnswer { seq }),
        }
    }

    /// Writes the firmware-port register at `offset`; returns once the
    /// board acknowledged it (the write took effect).
    pub fn fw_write32(&self, offset: u32, value: u32) -> Result<(), UdpBusError> {
        match self.request(|seq| Repr::FwWrite { seq, offset, value })? {
            (_, Answer::FwAck) => Ok(()),
            (seq, _) => Err(UdpBusError::UnexpectedAnswer { seq }),
        }
    }

    /// Requests sent so far (each stop-and-wait request once, however often
    /// it was resent): the access count for measurements.
    pub fn requests(&self) -> u32 {
        self.seq.lock().unwrap().wrapping_sub(1)
    }

    /// One request, stop and wait, resent with the same `seq`.
    fn request(&self, make: impl Fn(u32) -> Repr<'static>) -> Result<(u32, Answer), UdpBusError> {
        let ticket = {
            let mut t = self.turn.lock().unwrap();
            let ticket = t.0;
            t.0 += 1;
            while t.1 != ticket {
                t = self.turn_cv.wait(t).unwrap();
            }
            ticket
        };
        let r = self.request_in_turn(make);
        let mut t = self.turn.lock().unwrap();
        debug_assert_eq!(t.1, ticket);
        t.1 += 1;
        self.turn_cv.notify_all();
        r
    }

    /// [`UdpBus::request`] once it is this thread's turn.
    fn request_in_turn(
        &self,
        make: impl Fn(u32) -> Repr<'static>,
    ) -> Result<(u32, Answer), UdpBusError> {
        let mut seq_guard = self.seq.lock().unwrap();
        let seq = *seq_guard;
        *seq_guard = seq.wrapping_add(1);
        let msg = make(seq);
        let mut buf = [0u8; 64];
        let n = msg.emit(&mut buf).map_err(|_| UdpBusError::Malformed)?;
        for _ in 0..self.cfg.tries {
            self.sock.send(&buf[..n])?;
            let deadline = Instant::now() + self.cfg.timeout;
            let mut st = self.shared.state.lock().unwrap();
            loop {
                if let Some((s, a)) = st.answer {
                    if s == seq {
                        st.answer = None;
                        return match a {
                            Answer::Nak(opcode, reason) => Err(UdpBusError::Nak {
                                seq,
                                opcode,
                                reason,
                            }),
                            a => Ok((seq, a)),
                        };
                    }
                    st.answer = None; // stale or duplicate answer
                }
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                st = self.shared.cv.wait_timeout(st, deadline - now).unwrap().0;
            }
        }
        Err(UdpBusError::Timeout {
            seq,
            tries: self.cfg.tries,
        })
    }
}

impl Drop for UdpBus {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Finds the buffer holding `[addr, addr + len)`.
fn find(mem: &BTreeMap<u64, Vec<u8>>, addr: u64, len: usize) -> Option<(u64, usize)> {
    let (&base, v) = mem.range(..=addr).next_back()?;
    let off = (addr - base) as usize;
    if off.checked_add(len)? <= v.len() {
        Some((base, off))
    } else {
        None
    }
}

/// The DMA thread: answers the device until the bus is dropped.
fn serve(sock: UdpSocket, sh: Arc<Shared>) {
    let mut buf = vec![0u8; 2048];
    while !sh.stop.load(Ordering::Relaxed) {
        let n = match sock.recv(&mut buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => {
                // ICMP port unreachable etc.: record and go on.
                sh.error(e.into());
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        let msg = match Repr::parse(&buf[..n]) {
            Ok(m) => m,
            Err(_) => {
                sh.error(UdpBusError::Malformed);
                continue;
            }
        };
        let answer = match msg {
            Repr::MmioReadRsp { seq, value } => Some((seq, Answer::Value(value))),
            Repr::MmioWriteAck { seq } => Some((seq, Answer::Ack)),
            Repr::FwReadRsp { seq, value } => Some((seq, Answer::FwValue(value))),
            Repr::FwWriteAck { seq } => Some((seq, Answer::FwAck)),
            Repr::HelloAck { seq, next_dev_seq } => Some((seq, Answer::Hello(next_dev_seq))),
            Repr::Nak {
                seq,
                opcode,
                reason,
                ..
            } => Some((seq, Answer::Nak(opcode, reason))),
            _ => None,
        };
        if let Some(a) = answer {
            sh.state.lock().unwrap().answer = Some(a);
            sh.cv.notify_all();
            continue;
        }
        device_message(&sock, &sh, msg);
    }
}

/// A device-sequenced message: `DMA_RD_REQ`, `DMA_WR`, `IRQ`.
fn device_message(sock: &UdpSocket, sh: &Shared, msg: Repr<'_>) {
    let seq = msg.seq();
    {
        let mut st = sh.state.lock().unwrap();
        let retry = matches!(msg, Repr::DmaRdReq { .. }) && st.last_rd_seq == Some(seq);
        match st.dev_next {
            _ if retry => {}
            Some(next) if seq.wrapping_sub(next) as i32 > 0 => {
                st.errors.push(UdpBusError::DeviceMessageLost {
                    expected: next,
                    got: seq,
                });
                st.dev_next = Some(seq.wrapping_add(1));
            }
            Some(next) if seq != next => return, // duplicate
            _ => st.dev_next = Some(seq.wrapping_add(1)),
        }
        if matches!(msg, Repr::DmaRdReq { .. }) {
            st.last_rd_seq = Some(seq);
        }
    }
    match msg {
        Repr::DmaRdReq {
            seq,
            tag,
            addr,
            len,
        } => {
            let len = len as usize;
            let mut data = vec![0u8; len];
            {
                let mem = sh.mem.lock().unwrap();
                match find(&mem, addr, len) {
                    Some((base, off)) => data.copy_from_slice(&mem[&base][off..off + len]),
                    None => {
                        drop(mem);
                        sh.error(UdpBusError::DmaOutOfRange {
                            addr,
                            len,
                            write: false,
                        })
                    }
                }
            }
            let mut out = [0u8; 22 + MAX_PAYLOAD];
            for (i, c) in data.chunks(MAX_PAYLOAD).enumerate() {
                let off = i * MAX_PAYLOAD;
                let m = Repr::DmaRdCpl {
                    seq,
                    tag,
                    addr: addr.wrapping_add(off as u64),
                    last: off + c.len() == len,
                    data: c,
                };
                if let Ok(n) = m.emit(&mut out) {
                    if let Err(e) = sock.send(&out[..n]) {
                        sh.error(e.into());
                    }
                }
            }
        }
        Repr::DmaWr { addr, data, .. } => {
            let mut mem = sh.mem.lock().unwrap();
            match find(&mem, addr, data.len()) {
                Some((base, off)) => {
                    mem.get_mut(&base).unwrap()[off..off + data.len()].copy_from_slice(data)
                }
                None => {
                    drop(mem);
                    sh.error(UdpBusError::DmaOutOfRange {
                        addr,
                        len: data.len(),
                        write: true,
                    })
                }
            }
        }
        Repr::Irq { level, .. } => {
            if level {
                sh.state.lock().unwrap().irq_pending = true;
                sh.cv.notify_all();
            }
        }
        _ => sh.error(UdpBusError::Malformed),
    }
}

/// A DMA buffer of a [`UdpBus`]: host memory the bridge thread serves.
pub struct UdpDma {
    shared: Arc<Shared>,
    addr: u64,
    len: usize,
}

impl DmaMem for UdpDma {
    fn bus_addr(&self) -> u64 {
        self.addr
    }
    fn cpu_addr(&self) -> u64 {
        self.addr
    }
    fn len(&self) -> usize {
        self.len
    }
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<(), BusError> {
        let end = offset.checked_add(buf.len()).ok_or(BusError::OutOfBounds)?;
        if end > self.len {
            return Err(BusError::OutOfBounds);
        }
        let mem = self.shared.mem.lock().unwrap();
        buf.copy_from_slice(&mem[&self.addr][offset..end]);
        Ok(())
    }
    fn write(&self, offset: usize, data: &[u8]) -> Result<(), BusError> {
        let end = offset
            .checked_add(data.len())
            .ok_or(BusError::OutOfBounds)?;
        if end > self.len {
            return Err(BusError::OutOfBounds);
        }
        let mut mem = self.shared.mem.lock().unwrap();
        mem.get_mut(&self.addr).unwrap()[offset..end].copy_from_slice(data);
        Ok(())
    }
}

impl Drop for UdpDma {
    fn drop(&mut self) {
        self.shared.mem.lock().unwrap().remove(&self.addr);
    }
}

impl Bus for UdpBus {
    type Dma = UdpDma;

    fn read32(&self, offset: u32) -> u32 {
        self.mmio_read(offset).unwrap_or_else(|e| {
            self.shared.error(e);
            0xFFFF_FFFF
        })
    }

    fn write32(&self, offset: u32, value: u32) {
        // Ordered after earlier DmaMem writes: those are in host memory
        // already, which is what the device's reads are served from.
        if let Err(e) = self.mmio_write(offset, value) {
            self.shared.error(e);
        }
    }

    fn alloc_dma(&self, len: usize, align: usize) -> Result<UdpDma, BusError> {
        if !align.is_power_of_two() {
            return Err(BusError::OutOfMemory);
        }
        let mut next = self.next_dma.lock().unwrap();
        let a = align as u64;
        let addr = next.checked_add(a - 1).ok_or(BusError::OutOfMemory)? & !(a - 1);
        let end = addr
            .checked_add(len.max(1) as u64)
            .ok_or(BusError::OutOfMemory)?;
        if end > self.cfg.dma_base + self.cfg.dma_size {
            return Err(BusError::OutOfMemory);
        }
        *next = end;
        self.shared.mem.lock().unwrap().insert(addr, vec![0; len]);
        Ok(UdpDma {
            shared: self.shared.clone(),
            addr,
            len,
        })
    }

    fn wait_interrupt(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state.lock().unwrap();
        while !st.irq_pending {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            st = self.shared.cv.wait_timeout(st, deadline - now).unwrap().0;
        }
        st.irq_pending = false;
        true
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}
