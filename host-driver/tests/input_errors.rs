//! Bad input from the caller: each call refuses with a typed error and posts
//! nothing (the fake device sees no WQE and no doorbell).

mod common;

use common::FakeBus;
use rnic_driver::*;
use rnic_wire::abi::mailbox::{Event, PRIVATE_DATA_MAX};
use std::net::Ipv4Addr;

fn established(bus: &FakeBus, ctx: &Context<FakeBus>, qpn: u32) {
    bus.push_event(Event {
        kind: EventKind::Established,
        handle: qpn,
        status: 0,
        peer_ip: 0,
        peer_port: 0,
        local_port: 0,
        ird: 0,
        ord: 0,
        private_data_len: 0,
        mpa_revision: 2,
        crc: false,
        markers: false,
        listen_id: 0,
        phase: true,
    });
    ctx.process_events().unwrap();
}

fn send(wr_id: u64, op: SendOp, sges: &[Sge]) -> SendWr<'_> {
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

#[test]
fn bad_access_flags_are_refused() {
    assert_eq!(
        AccessFlags::from_bits(0x08),
        Err(Error::InvalidInput(InputError::AccessFlags(0x08)))
    );
    // Remote write without local write (verbs rule).
    assert_eq!(
        AccessFlags::from_bits(0x02),
        Err(Error::InvalidInput(InputError::AccessFlags(0x02)))
    );
    assert!(AccessFlags::from_bits(0x03).is_ok());
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    let n = bus.ncmds();
    assert_eq!(
        pd.reg_mr(&buf, 0, 4096, AccessFlags::REMOTE_WRITE)
            .unwrap_err(),
        Error::InvalidInput(InputError::AccessFlags(0x02))
    );
    // Ranges: empty, past the end, overflowing.
    for (off, len) in [(0, 0), (1, 4096), (usize::MAX, 2)] {
        assert_eq!(
            pd.reg_mr(&buf, off, len, AccessFlags::LOCAL_WRITE)
                .unwrap_err(),
            Error::InvalidInput(InputError::RegionRange)
        );
    }
    assert_eq!(bus.ncmds(), n, "nothing reached the device");
}

#[test]
fn queue_sizes_are_checked() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    assert_eq!(
        ctx.create_cq(0).unwrap_err(),
        Error::InvalidInput(InputError::QueueSize(0))
    );
    assert_eq!(
        ctx.create_cq(4097).unwrap_err(),
        Error::InvalidInput(InputError::QueueSize(4097))
    );
    let cq = ctx.create_cq(4).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    assert_eq!(
        pd.create_qp(&cq, &cq, 0, 4).unwrap_err(),
        Error::InvalidInput(InputError::QueueSize(0))
    );
    assert_eq!(
        pd.create_qp(&cq, &cq, 4, u32::MAX).unwrap_err(),
        Error::InvalidInput(InputError::QueueSize(u32::MAX))
    );
}

#[test]
fn posting_to_a_full_queue_posts_nothing() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq, 4, 2).unwrap();
    established(&bus, &ctx, qp.qpn());
    let wrs: Vec<SendWr> = (0..3).map(|k| send(k, SendOp::Send, &[])).collect();
    qp.post_send(&wrs).unwrap();
    let mark = bus.mark();
    assert_eq!(
        qp.post_send(&wrs),
        Err(Error::QueueFull { free: 1, needed: 3 })
    );
    let r = [RecvWr {
        wr_id: 1,
        sges: &[],
    }; 3];
    assert_eq!(
        qp.post_recv(&r),
        Err(Error::QueueFull { free: 2, needed: 3 })
    );
    assert!(bus.mmio_since(mark).is_empty(), "no doorbell rung");
    assert_eq!(bus.dev().qps[&qp.qpn()].send_wqes.len(), 3);
    assert_eq!(qp.sq_free(), 1);
}

#[test]
fn posting_in_the_wrong_state_is_refused() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq, 4, 4).unwrap();
    let w = [send(1, SendOp::Send, &[])];
    assert_eq!(qp.post_send(&w), Err(Error::WrongState(QpState::Idle)));
    established(&bus, &ctx, qp.qpn());
    qp.post_send(&w).unwrap();
    qp.modify(QpState::Closing).unwrap();
    assert_eq!(qp.post_send(&w), Err(Error::WrongState(QpState::Closing)));
    assert_eq!(
        qp.post_recv(&[RecvWr {
            wr_id: 1,
            sges: &[]
        }]),
        Err(Error::WrongState(QpState::Closing))
    );
    // connect and accept need Idle.
    let p = ConnectParams {
        peer_ip: Ipv4Addr::new(10, 0, 0, 2),
        peer_port: 1,
        local_port: 0,
        ird: 1,
        ord: 1,
        mpa: MpaOptions {
            revision: 2,
            crc: true,
            markers: false,
        },
    };
    assert_eq!(
        qp.connect(&p, &[]),
        Err(Error::WrongState(QpState::Closing))
    );
    assert_eq!(
        ctx.accept(5, &qp, 1, 1, &[]),
        Err(Error::WrongState(QpState::Closing))
    );
}

#[test]
fn sges_are_checked_against_their_regions() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let pd2 = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(8192).unwrap();
    let ro = pd.reg_mr(&buf, 0, 4096, AccessFlags::LOCAL_READ).unwrap();
    let rw = pd
        .reg_mr(&buf, 4096, 4096, AccessFlags::LOCAL_WRITE)
        .unwrap();
    let other = pd2.reg_mr(&buf, 0, 100, AccessFlags::LOCAL_WRITE).unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq, 8, 8).unwrap();
    established(&bus, &ctx, qp.qpn());
    let remote = RemoteAddr { addr: 0, rkey: 1 };
    let s = |addr: u64, length: u32, lkey: u32| Sge { addr, length, lkey };
    let mark = bus.mark();

    let cases: Vec<(SendOp, Vec<Sge>, WrError)> = vec![
        // One octet past the end.
        (
            SendOp::Send,
            vec![s(ro.va() + 1, 4096, ro.lkey())],
            WrError::SgeOutOfBounds { sge: 0 },
        ),
        // Before the start.
        (
            SendOp::Send,
            vec![s(ro.va() - 1, 1, ro.lkey())],
            WrError::SgeOutOfBounds { sge: 0 },
        ),
        // Wrapping 2^64.
        (
            SendOp::Send,
            vec![s(u64::MAX, 2, ro.lkey())],
            WrError::SgeOutOfBounds { sge: 0 },
        ),
        // Second SGE bad.
        (
            SendOp::Send,
            vec![s(ro.va(), 1, ro.lkey()), s(rw.va(), 4097, rw.lkey())],
            WrError::SgeOutOfBounds { sge: 1 },
        ),
        (
            SendOp::Send,
            vec![s(0, 1, 0xdead_0001)],
            WrError::UnknownLkey { sge: 0 },
        ),
        (
            SendOp::Send,
            vec![s(other.va(), 1, other.lkey())],
            WrError::WrongPd { sge: 0 },
        ),
        // An RDMA Read sink must be locally writable.
        (
            SendOp::RdmaRead(remote),
            vec![s(ro.va(), 1, ro.lkey())],
            WrError::NoLocalWrite { sge: 0 },
        ),
        (
            SendOp::Send,
            vec![s(ro.va(), 1, ro.lkey()); 7],
            WrError::TooManySges { given: 7, max: 6 },
        ),
        // An RDMA Read's sink is one SGE on this device (`CAPS[23:16]`):
        // refused here, not completed with an error by the device.
        (
            SendOp::RdmaRead(remote),
            vec![s(rw.va(), 1, rw.lkey()); 2],
            WrError::TooManySges { given: 2, max: 1 },
        ),
    ];
    for (op, sges, want) in &cases {
        let wrs = [send(1, SendOp::Send, &[]), send(2, *op, sges)];
        assert_eq!(
            qp.post_send(&wrs),
            Err(Error::BadWr {
                index: 1,
                reason: *want
            }),
            "{op:?} {sges:?}"
        );
    }
    // Solicited Event only on Sends (RFC 5040 §5.1).
    let mut w = send(3, SendOp::RdmaWrite(remote), &[]);
    w.solicited = true;
    assert_eq!(
        qp.post_send(&[w]),
        Err(Error::BadWr {
            index: 0,
            reason: WrError::SolicitedNotSend
        })
    );
    // Receive buffers must be locally writable.
    let r = [s(ro.va(), 10, ro.lkey())];
    assert_eq!(
        qp.post_recv(&[RecvWr { wr_id: 1, sges: &r }]),
        Err(Error::BadWr {
            index: 0,
            reason: WrError::NoLocalWrite { sge: 0 }
        })
    );
    assert!(bus.mmio_since(mark).is_empty(), "nothing was posted");
    assert!(bus.dev().qps[&qp.qpn()].send_wqes.is_empty());

    // A deregistered region's lkey is refused at once (host-side check).
    let lkey = rw.lkey();
    rw.dereg().unwrap();
    let r = [s(buf.cpu_addr() + 4096, 10, lkey)];
    assert_eq!(
        qp.post_recv(&[RecvWr { wr_id: 1, sges: &r }]),
        Err(Error::BadWr {
            index: 0,
            reason: WrError::UnknownLkey { sge: 0 }
        })
    );
}

#[test]
fn immediate_needs_the_capability() {
    let bus = FakeBus::new();
    bus.set_reg(rnic_wire::abi::csr::CAPS, 1 << 8);
    let ctx = Context::open(bus.clone()).unwrap();
    assert_eq!(ctx.caps().max_sge, 1);
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq, 8, 8).unwrap();
    established(&bus, &ctx, qp.qpn());
    assert_eq!(
        qp.post_send(&[send(1, SendOp::SendWithImm(5), &[])]),
        Err(Error::BadWr {
            index: 0,
            reason: WrError::NoImmediate
        })
    );
}

#[test]
fn connection_manager_input_is_checked() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let n = bus.ncmds();
    let long = vec![0u8; PRIVATE_DATA_MAX + 1];
    assert_eq!(
        ctx.reject(1, &long),
        Err(Error::InvalidInput(InputError::PrivateDataTooLong(513)))
    );
    assert!(
        ctx.reject(1, &long[..PRIVATE_DATA_MAX]).is_ok(),
        "512 is allowed"
    );
    assert_eq!(
        ctx.listen(0, 1).err(),
        Some(Error::InvalidInput(InputError::Port))
    );
    let rule = FilterRule {
        peer_prefix: 0,
        prefix_len: 33,
        local_ports: (1, 2),
        peer_ports: (1, 2),
        action: FilterAction::Allow,
    };
    assert_eq!(ctx.filter_set(0, rule), Err(InputError::FilterRule.into()));
    let rule = FilterRule {
        prefix_len: 8,
        local_ports: (5, 4),
        ..rule
    };
    assert_eq!(ctx.filter_set(0, rule), Err(InputError::FilterRule.into()));
    assert_eq!(
        ctx.route_update(Ipv4Addr::UNSPECIFIED, [2, 0, 0, 0, 0, 1]),
        Err(InputError::Route.into())
    );
    assert_eq!(
        ctx.route_update(Ipv4Addr::new(10, 0, 0, 1), [1, 0, 0, 0, 0, 1]),
        Err(InputError::Route.into())
    );
    let ms = std::time::Duration::from_millis;
    let timer = |initial, min, max, max_retries| RetxTimer {
        initial: ms(initial),
        min: ms(min),
        max: ms(max),
        max_retries,
    };
    for bad in [
        timer(100, 200, 1000, 3),
        timer(300, 200, 250, 3),
        timer(100, 0, 1000, 3),
        timer(300, 200, 1000, 0),
        timer(300, 200, 5_000_000, 3),
    ] {
        assert_eq!(
            ctx.set_retx_timer(&bad),
            Err(InputError::RetxTimer.into()),
            "{bad:?}"
        );
    }
    assert_eq!(
        bus.ncmds(),
        n + 1,
        "only the valid reject reached the device"
    );
}

#[test]
fn objects_of_another_context_are_refused() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let bus2 = FakeBus::new();
    let ctx2 = Context::open(bus2.clone()).unwrap();
    let cq2 = ctx2.create_cq(4).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    assert_eq!(
        pd.create_qp(&cq2, &cq2, 4, 4).unwrap_err(),
        Error::InvalidInput(InputError::Mismatch)
    );
}
