//! The device says something the ABI does not allow: a typed error, never a
//! panic, and never an access outside the driver's rings.

mod common;

use common::{cqe, FakeBus, MboxMode};
use core::time::Duration;
use proptest::prelude::*;
use rnic_driver::*;
use rnic_wire::abi::cqe::CQE_SIZE;
use rnic_wire::abi::csr::*;
use rnic_wire::abi::mailbox::{Event, MboxStatus, Opcode};

fn event(kind: EventKind, handle: u32) -> Event {
    Event {
        kind,
        handle,
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
    }
}

/// `Context::open` resets the device first and enables it last; a reset
/// that does not finish is a typed error after the reset timeout, with no
/// event queue set up and the datapath left off.
#[test]
fn open_resets_the_device_and_times_out_on_a_stuck_reset() {
    let bus = FakeBus::new();
    let m = bus.mark();
    let ctx = Context::open(bus.clone()).unwrap();
    let log = bus.mmio_since(m);
    let writes: Vec<_> = log.iter().filter(|a| a.1).map(|a| (a.0, a.2)).collect();
    assert_eq!(writes.first(), Some(&(CTRL, CTRL_RESET)), "reset first");
    assert_eq!(writes.last(), Some(&(CTRL, CTRL_ENABLE)), "enable last");
    assert_eq!(bus.dev().resets, 1);
    drop(ctx);
    let bus = FakeBus::new();
    bus.dev().reset_stuck = true;
    let m = bus.mark();
    assert_eq!(
        Context::open(bus.clone()).err(),
        Some(Error::Device(DeviceError::ResetTimeout(CTRL_RESET)))
    );
    assert!(
        bus.dev().now >= Duration::from_millis(100),
        "waited the reset timeout"
    );
    assert!(
        bus.mmio_since(m).iter().all(|a| !a.1 || a.0 == CTRL),
        "nothing but the reset written"
    );
}

#[test]
fn open_refuses_a_device_that_is_not_ours() {
    let bus = FakeBus::new();
    bus.set_reg(ID, 0x1234_5678);
    assert_eq!(
        Context::open(bus).err(),
        Some(Error::Device(DeviceError::BadId(0x1234_5678)))
    );
    // Another major: 1.x had 64-octet WQEs with two SGEs, 3.x is unknown.
    for v in [
        rnic_wire::abi::abi_version(1, 0),
        rnic_wire::abi::abi_version(3, 0),
    ] {
        let bus = FakeBus::new();
        bus.set_reg(ABI_VERSION, v);
        assert_eq!(
            Context::open(bus).err(),
            Some(Error::Device(DeviceError::AbiVersion(v)))
        );
    }
    // A newer minor version is compatible.
    let bus = FakeBus::new();
    bus.set_reg(ABI_VERSION, rnic_wire::abi::abi_version(2, 7));
    assert!(Context::open(bus).is_ok());
    let bus = FakeBus::new();
    bus.set_reg(STATUS, 0);
    assert_eq!(
        Context::open(bus.clone()).err(),
        Some(Error::Device(DeviceError::NotReady))
    );
    assert!(
        bus.dev().now >= Duration::from_millis(100),
        "waited the ready timeout"
    );
    let bus = FakeBus::new();
    bus.set_reg(MAX_QP, 0);
    assert_eq!(
        Context::open(bus).err(),
        Some(Error::Device(DeviceError::BadLimit {
            csr: MAX_QP,
            value: 0
        }))
    );
    // Limits beyond what BAR0 can address are clamped.
    let bus = FakeBus::new();
    bus.set_reg(MAX_QP, u32::MAX);
    bus.set_reg(CAPS, 0xFF << CAP_MAX_SGE_SHIFT);
    let ctx = Context::open(bus).unwrap();
    assert_eq!(ctx.caps().max_qp, QP_DOORBELL_PAGES);
    assert_eq!(ctx.caps().max_sge, 6);
    assert_eq!(ctx.caps().max_read_sge, 0, "CAPS[23:16] reads 0");
}

#[test]
fn mailbox_timeout_then_recovery() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    bus.dev().mode = MboxMode::Hang;
    let t0 = bus.dev().now;
    assert_eq!(ctx.nop(), Err(Error::Timeout));
    let waited = bus.dev().now - t0;
    assert!(waited >= Duration::from_millis(100) && waited < Duration::from_millis(101));
    // Still busy: the next command waits for it and times out without writing.
    let n = bus.ncmds();
    assert_eq!(ctx.create_cq(4).err(), Some(Error::Timeout));
    assert_eq!(bus.ncmds(), n);
    // The firmware finishes the old command; the mailbox works again.
    bus.finish_hung();
    bus.dev().mode = MboxMode::Normal;
    ctx.nop().unwrap();
    assert!(ctx.create_cq(4).is_ok());
}

#[test]
fn mailbox_garbage_is_a_typed_error() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    bus.dev().mode = MboxMode::Status(0xDEAD);
    assert_eq!(ctx.nop(), Err(DeviceError::MailboxStatus(0xDEAD).into()));
    bus.dev().mode = MboxMode::Status(MboxStatus::NoResources as u32);
    assert_eq!(
        ctx.create_cq(4).err(),
        Some(Error::Refused(Opcode::CreateCq, MboxStatus::NoResources))
    );
    // A result longer than the data window or than the command returns.
    bus.dev().mode = MboxMode::Len(0xFFFF_FFFF);
    assert_eq!(
        ctx.nop(),
        Err(DeviceError::MailboxLength(0xFFFF_FFFF).into())
    );
    bus.dev().mode = MboxMode::Len(12);
    assert_eq!(
        ctx.create_cq(4).err(),
        Some(DeviceError::MailboxLength(12).into())
    );
    bus.dev().mode = MboxMode::Len(3);
    assert_eq!(
        ctx.listen(1, 1).err(),
        Some(DeviceError::MailboxLength(3).into())
    );
    bus.dev().mode = MboxMode::SeqJump;
    let seq = bus.dev().regs.get(&MBOX_SEQ).copied().unwrap_or(0);
    assert_eq!(
        ctx.nop(),
        Err(DeviceError::MailboxSequence {
            expected: seq + 1,
            found: seq + 2
        }
        .into())
    );
    // Out-of-range object numbers in results.
    bus.dev().mode = MboxMode::Words(1, [64, 0, 0, 0]);
    assert_eq!(
        ctx.create_cq(4).err(),
        Some(DeviceError::MailboxResult(Opcode::CreateCq).into())
    );
    bus.dev().mode = MboxMode::Words(2, [0x0000_00AA, 0, 0, 0]);
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    assert_eq!(
        pd.reg_mr(&buf, 0, 10, AccessFlags::LOCAL_WRITE).err(),
        Some(DeviceError::MailboxResult(Opcode::AllocStag).into()),
        "STag index 0 is never valid"
    );
    bus.dev().mode = MboxMode::Normal;
    let cq = ctx.create_cq(4).unwrap();
    bus.dev().mode = MboxMode::Words(1, [9, 0, 0, 0]);
    assert_eq!(
        pd.create_qp(&cq, &cq, 4, 4).err().map(|e| e.to_string()),
        None::<String>,
        "qpn 9 is in range"
    );
    bus.dev().mode = MboxMode::Words(1, [1000, 0, 0, 0]);
    assert_eq!(
        pd.create_qp(&cq, &cq, 4, 4).err(),
        Some(DeviceError::MailboxResult(Opcode::CreateQp).into())
    );
    bus.dev().mode = MboxMode::Normal;
    let qp = pd.create_qp(&cq, &cq, 4, 4).unwrap();
    bus.dev().mode = MboxMode::Words(1, [7, 0, 0, 0]);
    assert_eq!(
        qp.query().err(),
        Some(DeviceError::MailboxResult(Opcode::QueryQp).into())
    );
}

/// A context with one connected QP on one CQ; runs `f`.
fn with_qp<R>(
    f: impl FnOnce(&FakeBus, &Context<FakeBus>, &Qp<'_, FakeBus>, &Cq<'_, FakeBus>) -> R,
) -> R {
    let bus = &FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq, 8, 8).unwrap();
    bus.push_event(event(EventKind::Established, qp.qpn()));
    let e = ctx.get_cm_event(Duration::from_millis(1)).unwrap();
    assert_eq!(e.kind, EventKind::Established);
    f(bus, &ctx, &qp, &cq)
}

fn post_one(qp: &Qp<'_, FakeBus>, wr_id: u64) {
    qp.post_send(&[SendWr {
        wr_id,
        op: SendOp::Send,
        sges: &[],
        signaled: true,
        solicited: false,
        fence: false,
        inline_data: None,
    }])
    .unwrap();
}

#[test]
fn corrupt_cqes_are_consumed_and_reported() {
    with_qp(|bus, _ctx, qp, cq| {
        let qpn = qp.qpn();
        let cqn = cq.cqn();
        post_one(qp, 1);
        let mut wc = [WorkCompletion::default(); 4];

        // Unknown opcode.
        let mut b = [0u8; CQE_SIZE];
        cqe(1, qpn, WcOpcode::Send, WcStatus::Success, 0)
            .emit(&mut b)
            .unwrap();
        b[16] = 0x55;
        bus.push_raw_cqe(cqn, b, true);
        assert_eq!(cq.poll(&mut wc), Err(DeviceError::CqeFormat.into()));
        // Unknown status.
        b[16] = 0;
        b[17] = 99;
        bus.push_raw_cqe(cqn, b, true);
        assert_eq!(cq.poll(&mut wc), Err(DeviceError::CqeFormat.into()));
        // A Terminate cause with stray bits.
        let mut c = cqe(1, qpn, WcOpcode::Send, WcStatus::RemoteAccessError, 0);
        c.term_cause = 0x0001_0000;
        bus.push_cqe(cqn, c);
        assert_eq!(cq.poll(&mut wc), Err(DeviceError::CqeFormat.into()));
        // A QP that does not exist / does not use this CQ.
        bus.push_cqe(cqn, cqe(1, 999, WcOpcode::Send, WcStatus::Success, 0));
        assert_eq!(cq.poll(&mut wc), Err(DeviceError::CqeQp(999).into()));
        // Wrong wr_id, wrong operation, nothing outstanding on the RQ.
        bus.push_cqe(cqn, cqe(2, qpn, WcOpcode::Send, WcStatus::Success, 0));
        assert_eq!(
            cq.poll(&mut wc),
            Err(DeviceError::CqeOrder { qpn, wr_id: 2 }.into())
        );
        bus.push_cqe(cqn, cqe(1, qpn, WcOpcode::RdmaRead, WcStatus::Success, 0));
        assert_eq!(
            cq.poll(&mut wc),
            Err(DeviceError::CqeOrder { qpn, wr_id: 1 }.into())
        );
        bus.push_cqe(cqn, cqe(1, qpn, WcOpcode::Recv, WcStatus::Success, 0));
        assert_eq!(
            cq.poll(&mut wc),
            Err(DeviceError::CqeOrder { qpn, wr_id: 1 }.into())
        );
        // The real completion still comes through, then the ring is empty.
        bus.push_cqe(cqn, cqe(1, qpn, WcOpcode::Send, WcStatus::Success, 0));
        assert_eq!(cq.poll(&mut wc), Ok(1));
        assert_eq!(wc[0].wr_id, 1);
        assert_eq!(cq.poll(&mut wc), Ok(0));
        assert_eq!(bus.dev().cqs[&cqn].consumer, 8, "every entry consumed once");
        // The ring wrapped: a stale entry of the previous lap is not new.
        assert_eq!(cq.poll(&mut wc), Ok(0));
    });
}

#[test]
fn receive_longer_than_its_buffers_is_refused() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    let mr = pd.reg_mr(&buf, 0, 4096, AccessFlags::LOCAL_WRITE).unwrap();
    let cq = ctx.create_cq(8).unwrap();
    let qp = pd.create_qp(&cq, &cq, 8, 8).unwrap();
    let s = [mr.sge(0, 100).unwrap()];
    qp.post_recv(&[RecvWr { wr_id: 4, sges: &s }]).unwrap();
    bus.push_cqe(
        cq.cqn(),
        cqe(4, qp.qpn(), WcOpcode::Recv, WcStatus::Success, 101),
    );
    let mut wc = [WorkCompletion::default(); 2];
    assert_eq!(
        cq.poll(&mut wc),
        Err(DeviceError::CqeLength { qpn: qp.qpn() }.into())
    );
    assert_eq!(qp.rq_free(), 7, "the WR stays outstanding");
}

#[test]
fn wrong_phase_is_not_a_completion() {
    with_qp(|bus, _ctx, qp, cq| {
        post_one(qp, 1);
        let mut b = [0u8; CQE_SIZE];
        cqe(1, qp.qpn(), WcOpcode::Send, WcStatus::Success, 0)
            .emit(&mut b)
            .unwrap();
        bus.push_raw_cqe(cq.cqn(), b, false);
        let mut wc = [WorkCompletion::default(); 2];
        let mark = bus.mark();
        assert_eq!(cq.poll(&mut wc), Ok(0));
        assert!(
            bus.mmio_since(mark).is_empty(),
            "nothing consumed, no doorbell"
        );
        bus.push_raw_cqe(cq.cqn(), b, true);
        assert_eq!(cq.poll(&mut wc), Ok(1));
    });
}

#[test]
fn good_entries_before_a_bad_one_are_returned_first() {
    with_qp(|bus, _ctx, qp, cq| {
        post_one(qp, 1);
        post_one(qp, 2);
        bus.push_cqe(
            cq.cqn(),
            cqe(1, qp.qpn(), WcOpcode::Send, WcStatus::Success, 0),
        );
        bus.push_cqe(
            cq.cqn(),
            cqe(7, qp.qpn(), WcOpcode::Send, WcStatus::Success, 0),
        );
        let mut wc = [WorkCompletion::default(); 4];
        assert_eq!(cq.poll(&mut wc), Ok(1));
        assert!(cq.poll(&mut wc).is_err());
        assert_eq!(cq.poll(&mut wc), Ok(0));
    });
}

#[test]
fn bad_events_are_typed_errors() {
    with_qp(|bus, ctx, qp, cq| {
        // Unknown kind.
        let mut b = [0u8; Event::SIZE];
        b[0] = 0x77;
        bus.push_raw_event(b);
        assert_eq!(ctx.process_events(), Err(DeviceError::EventFormat.into()));
        // Events for unknown objects are dropped and counted.
        bus.push_event(event(EventKind::CqCompletion, 55));
        bus.push_event(event(EventKind::Established, 55));
        assert_eq!(ctx.process_events(), Ok(2));
        assert_eq!(ctx.spurious_events(), 2);
        // Private data length beyond RFC 5044's 512.
        let mut e = event(EventKind::ConnectRequest, 3);
        e.private_data_len = 600;
        bus.push_event(e);
        assert_eq!(
            ctx.get_cm_event(Duration::from_millis(1)).err(),
            Some(DeviceError::EventFormat.into())
        );
        // A length that GetEventData does not deliver.
        bus.dev().event_data.insert(3, vec![1, 2]);
        let mut e = event(EventKind::ConnectRequest, 3);
        e.private_data_len = 5;
        bus.push_event(e);
        assert_eq!(
            ctx.get_cm_event(Duration::from_millis(1)).err(),
            Some(DeviceError::MailboxLength(2).into())
        );
        // Overflow reported by the device.
        bus.set_reg(INT_STATUS, INT_EQ_OVERFLOW);
        assert_eq!(ctx.process_events(), Err(DeviceError::EventOverflow.into()));
        assert_eq!(ctx.process_events(), Ok(0), "cleared");
        // A QP error event moves the QP to Error; the CQ wait is unaffected.
        bus.push_event(event(EventKind::QpError, qp.qpn()));
        assert_eq!(
            ctx.get_cm_event(Duration::from_millis(1)).unwrap().kind,
            EventKind::QpError
        );
        assert_eq!(qp.state(), QpState::Error);
        assert_eq!(cq.wait(Duration::from_millis(1)), Err(Error::Timeout));
    });
}

#[test]
fn the_event_queue_wraps() {
    with_qp(|bus, ctx, _qp, cq| {
        for _ in 0..1000 {
            bus.push_event(event(EventKind::CqCompletion, cq.cqn()));
            cq.wait(Duration::from_millis(1)).unwrap();
        }
        let d = bus.dev();
        assert_eq!(d.regs[&EQ_CONSUMER], 1001, "Established + 1000");
        drop(d);
        assert_eq!(ctx.spurious_events(), 0);
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// Random octets in the CQ ring never panic the poller, and whatever it
    /// returns as a completion matches work the driver posted.
    #[test]
    fn random_cqe_bytes_never_panic(entries in proptest::collection::vec(
        (proptest::array::uniform32(any::<u8>()), any::<bool>(), 0u8..4), 1..24)) {
        with_qp(|bus, _ctx, qp, cq| {
            let qpn = qp.qpn();
            // Unsignaled WRs between signaled ones: a success retires two.
            let wrs: Vec<SendWr> = (0..4)
                .map(|k| SendWr {
                    wr_id: k,
                    op: SendOp::Send,
                    sges: &[],
                    signaled: k % 2 == 1,
                    solicited: false,
                    fence: false,
                    inline_data: None,
                })
                .collect();
            qp.post_send(&wrs).unwrap();
            let mut wc = [WorkCompletion::default(); 3];
            for (mut b, phase_ok, tweak) in entries {
                // Steer some entries toward valid-looking ones so deeper checks run.
                if tweak >= 1 {
                    b[12..16].copy_from_slice(&qpn.to_le_bytes());
                }
                if tweak >= 2 {
                    b[16] = 0;
                    b[17] = b[17] % 2 * 5; // success or flush
                    b[18] = 0;
                    b[24..28].fill(0);
                }
                if tweak == 3 {
                    let id = u64::from(b[0] % 4);
                    b[..8].copy_from_slice(&id.to_le_bytes());
                }
                let free = {
                    let d = bus.dev();
                    let c = &d.cqs[&cq.cqn()];
                    c.entries - c.producer.wrapping_sub(c.consumer)
                };
                if free > 0 {
                    bus.push_raw_cqe(cq.cqn(), b, phase_ok);
                }
                if let Ok(n) = cq.poll(&mut wc) {
                    for w in &wc[..n] {
                        prop_assert_eq!(w.qp_num, qpn);
                        prop_assert!(w.wr_id < 4);
                    }
                }
            }
            prop_assert!(qp.sq_free() <= 8);
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]
    /// Random octets in the event queue never panic event processing or the
    /// CM/CQ waits, and the queue keeps moving.
    #[test]
    fn random_event_bytes_never_panic(entries in proptest::collection::vec(
        (proptest::collection::vec(any::<u8>(), Event::SIZE), 0u8..3), 1..12)) {
        with_qp(|bus, ctx, qp, cq| {
            for (v, tweak) in entries {
                let mut b = [0u8; Event::SIZE];
                b.copy_from_slice(&v);
                if tweak >= 1 {
                    b[0] = 1 + b[0] % 9; // a defined kind
                    b[2] &= 3;
                }
                if tweak == 2 {
                    b[4..8].copy_from_slice(&qp.qpn().to_le_bytes());
                }
                bus.push_raw_event(b);
                let _ = ctx.process_events();
                let _ = ctx.get_cm_event(Duration::from_micros(20));
                let _ = cq.wait(Duration::from_micros(20));
            }
            let d = bus.dev();
            prop_assert!(d.regs.get(&EQ_CONSUMER).copied().unwrap_or(0) >= 1);
            Ok(())
        })?;
    }

    /// Random mailbox answers (status, length, words) never panic any
    /// control-path call; every call returns Ok or a typed error.
    #[test]
    fn random_mailbox_answers_never_panic(
        status in prop_oneof![Just(0u32), 0u32..10, any::<u32>()],
        len in prop_oneof![Just(None), (0u32..24).prop_map(Some), any::<u32>().prop_map(Some)],
        words in proptest::array::uniform4(prop_oneof![0u32..4, any::<u32>()]),
        nwords in 0usize..=4,
    ) {
        let bus = FakeBus::new();
        let ctx = Context::open(bus.clone()).unwrap();
        let pd = ctx.alloc_pd().unwrap();
        let buf = ctx.alloc_dma(3 * 4096).unwrap();
        let good_cq = ctx.create_cq(4).unwrap();
        bus.dev().mode = MboxMode::Words(nwords, words);
        let _ = ctx.nop();
        let cq = ctx.create_cq(4);
        let _ = pd.reg_mr(&buf, 10, 9000, AccessFlags::LOCAL_WRITE);
        let qp = pd.create_qp(&good_cq, &good_cq, 4, 4);
        if let Ok(qp) = &qp {
            let _ = qp.query();
            let _ = qp.modify(QpState::Error);
        }
        let _ = ctx.listen(7, 1);
        let _ = ctx.filter_stats(1);
        bus.dev().mode = MboxMode::Status(status);
        let _ = ctx.nop();
        let _ = ctx.route_update(std::net::Ipv4Addr::new(1, 2, 3, 4), [2, 0, 0, 0, 0, 0]);
        if let Some(l) = len {
            bus.dev().mode = MboxMode::Len(l);
            let _ = ctx.nop();
            let _ = ctx.create_cq(4);
        }
        bus.dev().mode = MboxMode::Normal;
        drop(cq);
        drop(qp);
        prop_assert!(ctx.nop().is_ok(), "the mailbox still works");
    }
}

#[test]
fn a_number_already_in_use_is_refused() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(4).unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    let mr = pd.reg_mr(&buf, 0, 10, AccessFlags::LOCAL_WRITE).unwrap();
    let qp = pd.create_qp(&cq, &cq, 4, 4).unwrap();
    let n = bus.ncmds();
    bus.dev().mode = MboxMode::Words(1, [cq.cqn(), 0, 0, 0]);
    assert_eq!(
        ctx.create_cq(4).err(),
        Some(DeviceError::MailboxResult(Opcode::CreateCq).into())
    );
    bus.dev().mode = MboxMode::Words(1, [qp.qpn(), 0, 0, 0]);
    assert_eq!(
        pd.create_qp(&cq, &cq, 4, 4).err(),
        Some(DeviceError::MailboxResult(Opcode::CreateQp).into())
    );
    bus.dev().mode = MboxMode::Words(2, [mr.lkey(), 0, 0, 0]);
    assert_eq!(
        pd.reg_mr(&buf, 0, 10, AccessFlags::LOCAL_WRITE).err(),
        Some(DeviceError::MailboxResult(Opcode::AllocStag).into())
    );
    bus.dev().mode = MboxMode::Normal;
    // No destroy of the live objects was sent.
    let destroyed = bus
        .cmds_since(n)
        .iter()
        .filter(|c| {
            matches!(
                c.opcode,
                Opcode::DestroyCq | Opcode::DestroyQp | Opcode::DeregMr
            )
        })
        .count();
    assert_eq!(destroyed, 0);
    // The originals still work: an event for the CQ reaches it.
    bus.push_event(event(EventKind::CqCompletion, cq.cqn()));
    cq.wait(Duration::from_millis(1)).unwrap();
}
