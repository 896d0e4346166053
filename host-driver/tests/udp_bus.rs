//! `UdpBus` against a software board on localhost that speaks the bridge
//! protocol through `rnic_wire::abi::bridge` (the reference format, not the
//! bus's code): BAR0 registers, an answer cache, chosen losses, and device
//! messages (DMA read requests, DMA writes, interrupts) injected by the test.
#![cfg(feature = "udp")]

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rnic_driver::bus::{Bus, DmaMem};
use rnic_driver::udp_bus::{UdpBus, UdpBusConfig, UdpBusError};
use rnic_driver::{Context, Options};
use rnic_wire::abi::bridge::{NakReason, Repr, MAX_PAYLOAD};
use rnic_wire::abi::csr;

#[derive(Default)]
struct Board {
    regs: HashMap<u32, u32>,
    /// (seq, offset, value) of every executed write.
    writes: Vec<(u32, u32, u32)>,
    /// Requests received (including repeats).
    received: usize,
    /// Drop every request whose arrival count is a multiple of this (0: none).
    drop_every: usize,
    silent: bool,
    cache: Option<(u32, u8, Vec<u8>)>,
    host: Option<SocketAddr>,
    /// DMA_RD_CPL messages: (seq, tag, addr, last, data).
    cpl: Vec<(u32, u8, u64, bool, Vec<u8>)>,
    next_dev_seq: u32,
}

struct FakeBoard {
    sock: UdpSocket,
    st: Arc<Mutex<Board>>,
}

impl FakeBoard {
    fn start() -> FakeBoard {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let st = Arc::new(Mutex::new(Board::default()));
        {
            let mut b = st.lock().unwrap();
            b.regs.insert(csr::ID, csr::ID_VALUE);
            b.regs.insert(csr::ABI_VERSION, rnic_wire::abi::ABI_VERSION);
            b.regs.insert(csr::STATUS, csr::STATUS_READY);
            b.regs.insert(csr::CAPS, 6 << csr::CAP_MAX_SGE_SHIFT);
            for r in [
                csr::MAX_QP,
                csr::MAX_CQ,
                csr::MAX_TPT,
                csr::MAX_PBL,
                csr::MAX_QUEUE_ENTRIES,
            ] {
                b.regs.insert(r, 64);
            }
        }
        let (s2, st2) = (sock.try_clone().unwrap(), st.clone());
        std::thread::spawn(move || board_loop(s2, st2));
        FakeBoard { sock, st }
    }

    fn addr(&self) -> SocketAddr {
        self.sock.local_addr().unwrap()
    }

    /// Sends a device message with the next device sequence number (or
    /// `seq` if given).
    fn device(&self, seq: Option<u32>, make: impl Fn(u32) -> Repr<'static>) -> u32 {
        let (host, s) = {
            let mut b = self.st.lock().unwrap();
            let s = seq.unwrap_or(b.next_dev_seq);
            b.next_dev_seq = s.wrapping_add(1);
            (b.host.unwrap(), s)
        };
        let m = make(s);
        let mut buf = vec![0u8; m.buffer_len()];
        m.emit(&mut buf).unwrap();
        self.sock.send_to(&buf, host).unwrap();
        s
    }

    fn device_wr(&self, addr: u64, data: &[u8], last: bool) {
        let (host, s) = {
            let mut b = self.st.lock().unwrap();
            let s = b.next_dev_seq;
            b.next_dev_seq += 1;
            (b.host.unwrap(), s)
        };
        let m = Repr::DmaWr {
            seq: s,
            addr,
            last,
            data,
        };
        let mut buf = vec![0u8; m.buffer_len()];
        m.emit(&mut buf).unwrap();
        self.sock.send_to(&buf, host).unwrap();
    }

    fn wait_cpl(&self, n: usize) -> Vec<(u32, u8, u64, bool, Vec<u8>)> {
        for _ in 0..500 {
            if self.st.lock().unwrap().cpl.len() >= n {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        std::mem::take(&mut self.st.lock().unwrap().cpl)
    }
}

fn board_loop(sock: UdpSocket, st: Arc<Mutex<Board>>) {
    let mut buf = [0u8; 2048];
    loop {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            return;
        };
        let mut b = st.lock().unwrap();
        b.received += 1;
        if b.silent || (b.drop_every != 0 && b.received.is_multiple_of(b.drop_every)) {
            continue;
        }
        let req = match Repr::classify(&buf[..n]) {
            Ok(r) => r,
            Err(_) => continue,
        };
        b.host = Some(from);
        let seq = req.seq();
        let answer = match req {
            Repr::DmaRdCpl {
                seq,
                tag,
                addr,
                last,
                data,
            } => {
                b.cpl.push((seq, tag, addr, last, data.to_vec()));
                continue;
            }
            _ if b
                .cache
                .as_ref()
                .is_some_and(|c| c.0 == seq && c.1 == buf[3]) =>
            {
                b.cache.as_ref().unwrap().2.clone()
            }
            Repr::MmioRead { offset: 0xFFF0, .. } => emit(Repr::Nak {
                seq,
                opcode: buf[3],
                addr: 0xFFF0,
                reason: NakReason::BadAddress,
            }),
            Repr::MmioRead { offset, .. } => emit(Repr::MmioReadRsp {
                seq,
                value: *b.regs.get(&offset).unwrap_or(&0),
            }),
            Repr::MmioWrite { offset, value, .. } => {
                // CTRL_RESET self-clears: this board's reset is done at once.
                let kept = if offset == csr::CTRL {
                    value & !csr::CTRL_RESET
                } else {
                    value
                };
                b.regs.insert(offset, kept);
                b.writes.push((seq, offset, value));
                emit(Repr::MmioWriteAck { seq })
            }
            Repr::Hello { .. } => emit(Repr::HelloAck {
                seq,
                next_dev_seq: b.next_dev_seq,
            }),
            _ => continue,
        };
        b.cache = Some((seq, buf[3], answer.clone()));
        sock.send_to(&answer, from).unwrap();
    }
}

fn emit(m: Repr) -> Vec<u8> {
    let mut v = vec![0u8; m.buffer_len()];
    m.emit(&mut v).unwrap();
    v
}

fn bus(board: &FakeBoard) -> UdpBus {
    let mut cfg = UdpBusConfig::new(board.addr());
    cfg.local = "127.0.0.1:0".parse().unwrap();
    cfg.timeout = Duration::from_millis(30);
    UdpBus::connect(cfg).unwrap()
}

/// The acceptance on the host side: `Context::open` (ID, ABI
/// version, limits, event queue set-up) over the bridge with every third
/// datagram lost; every BAR0 write acts exactly once.
#[test]
fn context_opens_over_lossy_udp() {
    let board = FakeBoard::start();
    let b = bus(&board);
    board.st.lock().unwrap().drop_every = 3;
    let ctx = Context::open_with(
        b,
        Options {
            eq_entries: 16,
            ..Options::default()
        },
    )
    .expect("Context::open over UdpBus");
    assert_eq!(ctx.caps().max_qp, 64);
    let st = board.st.lock().unwrap();
    let mut seqs: Vec<u32> = st.writes.iter().map(|w| w.0).collect();
    seqs.dedup();
    assert_eq!(seqs.len(), st.writes.len(), "a write acted twice");
    let eq_lo = st.regs[&csr::EQ_BASE_LO] as u64;
    let eq_hi = st.regs[&csr::EQ_BASE_HI] as u64;
    assert!(eq_hi << 32 | eq_lo >= 1 << 32);
    assert_eq!(st.regs[&csr::EQ_ENTRIES], 16);
    assert!(st.received > st.writes.len() + 5, "losses forced resends");
}

#[test]
fn device_dma_is_served_from_host_memory() {
    let board = FakeBoard::start();
    let b = bus(&board);
    let buf = b.alloc_dma(8192, 4096).unwrap();
    let pat: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    buf.write(0, &pat).unwrap();
    let base = buf.bus_addr();
    // A 2500-octet read at an odd address: three chunks.
    let seq = board.device(None, |seq| Repr::DmaRdReq {
        seq,
        tag: 0x41,
        addr: base + 3,
        len: 2500,
    });
    let cpl = board.wait_cpl(3);
    assert_eq!(cpl.len(), 3);
    let mut got = vec![];
    for (i, (s, tag, addr, last, data)) in cpl.iter().enumerate() {
        assert_eq!((*s, *tag), (seq, 0x41));
        assert_eq!(*addr, base + 3 + (i * MAX_PAYLOAD) as u64);
        assert_eq!(*last, i == 2);
        got.extend_from_slice(data);
    }
    assert_eq!(got, pat[3..2503]);
    // The board's retry (same seq) is served again.
    board.device(Some(seq), |seq| Repr::DmaRdReq {
        seq,
        tag: 0x41,
        addr: base + 3,
        len: 2500,
    });
    assert_eq!(board.wait_cpl(3).len(), 3);
    // DMA writes land in the buffer.
    let w: Vec<u8> = (0..1500u32).map(|i| (i ^ 0x5A) as u8).collect();
    board.device_wr(base + 100, &w[..1024], false);
    board.device_wr(base + 1124, &w[1024..], true);
    // An interrupt wakes wait_interrupt (after the writes: in order).
    board.device(None, |seq| Repr::Irq { seq, level: true });
    assert!(b.wait_interrupt(Duration::from_secs(2)));
    let mut r = vec![0u8; 1500];
    buf.read(100, &mut r).unwrap();
    assert_eq!(r, w);
    assert!(!b.wait_interrupt(Duration::from_millis(20)));
    assert!(b.take_errors().is_empty());
    // Outside every buffer: zeros for a read, nothing for a write; errors.
    board.device(None, |seq| Repr::DmaRdReq {
        seq,
        tag: 1,
        addr: 0x10,
        len: 16,
    });
    let cpl = board.wait_cpl(1);
    assert_eq!(cpl[0].4, vec![0u8; 16]);
    board.device_wr(base + 8190, &[1, 2, 3], true);
    // A lost device message is detected.
    let next = board.st.lock().unwrap().next_dev_seq;
    board.device(Some(next + 1), |seq| Repr::Irq { seq, level: false });
    std::thread::sleep(Duration::from_millis(100));
    let errs = b.take_errors();
    assert!(errs.contains(&UdpBusError::DmaOutOfRange {
        addr: 0x10,
        len: 16,
        write: false
    }));
    assert!(errs.contains(&UdpBusError::DmaOutOfRange {
        addr: base + 8190,
        len: 3,
        write: true
    }));
    assert!(errs.contains(&UdpBusError::DeviceMessageLost {
        expected: next,
        got: next + 1
    }));
    let mut tail = [0u8; 2];
    buf.read(8190, &mut tail).unwrap();
    assert_eq!(tail, [pat[8190], pat[8191]]);
}

#[test]
fn nak_and_timeout_are_typed_errors() {
    let board = FakeBoard::start();
    let b = bus(&board);
    assert!(matches!(
        b.mmio_read(0xFFF0),
        Err(UdpBusError::Nak {
            reason: NakReason::BadAddress,
            opcode: 0x01,
            ..
        })
    ));
    assert_eq!(b.read32(0xFFF0), 0xFFFF_FFFF);
    assert!(matches!(b.take_errors()[..], [UdpBusError::Nak { .. }]));
    board.st.lock().unwrap().silent = true;
    assert!(matches!(
        b.mmio_write(0x40, 1),
        Err(UdpBusError::Timeout { tries: 5, .. })
    ));
    // HELLO, two reads (NAKed), five tries of the write.
    assert_eq!(board.st.lock().unwrap().received, 1 + 2 + 5);
}
