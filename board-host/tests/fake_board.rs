//! `run_firmware` against a software board on localhost that answers every
//! bridge request (registers read 0, writes are acknowledged): the firmware
//! keeps polling until told to stop, and its idle poll is a fixed, small
//! number of firmware-port accesses.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rnic_board_host::{run_firmware, FwStats};
use rnic_driver::udp_bus::{UdpBus, UdpBusConfig};
use rnic_wire::abi::bridge::Repr;

#[test]
fn firmware_polls_until_stopped() {
    let board = UdpSocket::bind("127.0.0.1:0").unwrap();
    board
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let addr = board.local_addr().unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    let fw_ops = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let ops = fw_ops.clone();
    let b = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        while !d.load(Ordering::Relaxed) {
            let Ok((n, from)) = board.recv_from(&mut buf) else {
                continue;
            };
            let a = match Repr::parse(&buf[..n]).expect("a valid request") {
                Repr::Hello { seq } => Repr::HelloAck {
                    seq,
                    next_dev_seq: 0,
                },
                Repr::FwRead { seq, .. } => {
                    ops.fetch_add(1, Ordering::Relaxed);
                    Repr::FwReadRsp { seq, value: 0 }
                }
                Repr::FwWrite { seq, .. } => {
                    ops.fetch_add(1, Ordering::Relaxed);
                    Repr::FwWriteAck { seq }
                }
                Repr::MmioRead { seq, .. } => Repr::MmioReadRsp { seq, value: 0 },
                Repr::MmioWrite { seq, .. } => Repr::MmioWriteAck { seq },
                r => panic!("unexpected {r:?}"),
            };
            let mut out = [0u8; 64];
            let k = a.emit(&mut out).unwrap();
            board.send_to(&out[..k], from).unwrap();
        }
    });
    let mut cfg = UdpBusConfig::new(addr);
    cfg.local = "127.0.0.1:0".parse().unwrap();
    let bus = Arc::new(UdpBus::connect(cfg).unwrap());
    let stats = Arc::new(FwStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    let fw = {
        let (bus, stats, stop) = (bus.clone(), stats.clone(), stop.clone());
        std::thread::spawn(move || {
            run_firmware(
                bus,
                rnic_fw::Config::default(),
                stats,
                Duration::ZERO,
                &stop,
            )
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    assert!(!fw.is_finished(), "the firmware thread ended by itself");
    stop.store(true, Ordering::Relaxed);
    fw.join().unwrap();
    let p = stats.polls.load(Ordering::Relaxed);
    let a = stats.accesses.load(Ordering::Relaxed);
    assert!(p > 10, "{p} polls");
    done.store(true, Ordering::Relaxed);
    b.join().unwrap();
    assert_eq!(stats.failed.load(Ordering::Relaxed), 0);
    assert_eq!(fw_ops.load(Ordering::Relaxed), a);
    eprintln!(
        "{p} polls, {a} accesses: {:.2} per poll",
        a as f64 / p as f64
    );
}
