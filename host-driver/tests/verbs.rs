//! Every verb through the driver against the fake device of `common`, which
//! checks what the driver wrote with `rnic_wire`'s parsers.

mod common;

use common::{cqe, FakeBus};
use core::time::Duration;
use rnic_driver::*;
use rnic_wire::abi::cqe::{CQE_FLAG_SOLICITED, CQE_FLAG_WITH_IMM, CQE_FLAG_WITH_INV};
use rnic_wire::abi::csr::*;
use rnic_wire::abi::doorbell::{CqArm, CQ_CONSUMER, QP_RQ_PRODUCER, QP_SQ_PRODUCER};
use rnic_wire::abi::mailbox::{Command, Event, Opcode};
use rnic_wire::abi::tpt::{ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE};
use rnic_wire::abi::wqe::{
    RecvWqe, SendOpcode, SendWqe, SgeList, WQE_FLAG_FENCE, WQE_FLAG_SIGNALED, WQE_FLAG_SOLICITED,
};
use std::net::Ipv4Addr;

const MS: Duration = Duration::from_millis(1);

/// Binds `$mr`, `$cq` and `$qp` in the caller's block: a 4 KiB buffer
/// registered with `$access` in a new PD, one CQ of `$depth` entries for
/// both queues, and a QP of `$depth` on it in RTS (its Established event
/// processed); what most data-path tests start from. A macro, as the
/// objects borrow one another.
macro_rules! rts_qp {
    ($bus:expr, $ctx:expr, $depth:expr, $access:expr => $mr:ident, $cq:ident, $qp:ident) => {
        let pd = $ctx.alloc_pd().unwrap();
        let buf = $ctx.alloc_dma(4096).unwrap();
        let $mr = pd.reg_mr(&buf, 0, 4096, $access).unwrap();
        let $cq = $ctx.create_cq($depth).unwrap();
        let $qp = pd.create_qp(&$cq, &$cq, $depth, $depth).unwrap();
        $bus.push_event(event(EventKind::Established, $qp.qpn()));
        $ctx.process_events().unwrap();
    };
}

pub fn event(kind: EventKind, handle: u32) -> Event {
    Event {
        kind,
        handle,
        status: 0,
        peer_ip: 0x0A00_0002,
        peer_port: 5000,
        local_port: 4791,
        ird: 4,
        ord: 4,
        private_data_len: 0,
        mpa_revision: 2,
        crc: true,
        markers: false,
        listen_id: 0,
        phase: true,
    }
}

#[test]
fn open_checks_identity_and_sets_up_the_event_queue() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let c = ctx.caps();
    assert_eq!(
        (c.max_qp, c.max_cq, c.max_sge, c.max_read_sge),
        (128, 64, 6, 1)
    );
    assert!(c.immediate());
    let d = bus.dev();
    let base = d.regs[&EQ_BASE_LO] as u64 | (d.regs[&EQ_BASE_HI] as u64) << 32;
    assert_eq!(base % 4096, 0);
    assert_eq!(d.regs[&EQ_ENTRIES], 256);
    assert_eq!(d.regs[&INT_MASK] & INT_EVENT, INT_EVENT);
    drop(d);
    ctx.nop().unwrap();
    assert_eq!(bus.dev().cmds.len(), 1);
    assert_eq!(bus.dev().cmds[0].opcode, Opcode::Nop);
}

#[test]
fn configure_writes_the_global_csrs() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    ctx.configure(&NetConfig {
        mac: [0x02, 0x11, 0x22, 0x33, 0x44, 0x55],
        ip: Ipv4Addr::new(10, 0, 0, 1),
        netmask: Ipv4Addr::new(255, 255, 255, 0),
        gateway: None,
        mtu: 1500,
    })
    .unwrap();
    let d = bus.dev();
    // csr.rs: MAC octet 0 in bits 7:0; IPv4 as the u32 of the big-endian address.
    assert_eq!(d.regs[&MAC_LO], 0x3322_1102);
    assert_eq!(d.regs[&MAC_HI], 0x5544);
    assert_eq!(d.regs[&IPV4_ADDR], 0x0A00_0001);
    assert_eq!(d.regs[&IPV4_NETMASK], 0xFFFF_FF00);
    assert_eq!(d.regs[&IPV4_GATEWAY], 0);
    assert_eq!(d.regs[&MTU], 1500);
    assert_eq!(d.regs[&CTRL] & CTRL_ENABLE, CTRL_ENABLE);
}

#[test]
fn reg_mr_builds_the_page_list_and_tpt_entry() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(3 * 4096 + 100).unwrap();
    let acc = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ;
    let mr = pd.reg_mr(&buf, 100, 2 * 4096 + 50, acc).unwrap();
    {
        let d = bus.dev();
        let m = &d.mrs[&mr.lkey()];
        assert!(m.valid);
        assert_eq!(m.pd, pd.pdn());
        assert_eq!(
            m.access,
            ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ
        );
        assert_eq!(m.va, buf.bus_addr() + 100);
        assert_eq!(m.length, 2 * 4096 + 50);
        // The buffer is contiguous on the bus: the largest page size that
        // keeps the fewest pages (mr.rs `best_page_shift`), and every octet
        // translates (rnic_wire's `TptEntry::page_of`) to its bus address.
        assert!(m.page_shift >= 12 && m.page_shift <= 30);
        assert!(m.pbl.len() <= 3);
        translates_contiguously(m.va, m.length, m.page_shift, &m.pbl, buf.bus_addr() + 100);
    }
    assert_eq!(mr.rkey(), mr.lkey());
    assert_eq!(mr.va(), buf.cpu_addr() + 100);

    // A contiguous region of 200 4 KiB pages: one or two large pages, one
    // WritePbl chunk (it took 120 + 80 entries with 4 KiB pages).
    let big = ctx.alloc_dma(200 * 4096).unwrap();
    let n0 = bus.ncmds();
    let mr2 = pd
        .reg_mr(&big, 0, 200 * 4096, AccessFlags::LOCAL_READ)
        .unwrap();
    let cmds = bus.cmds_since(n0);
    let ops: Vec<Opcode> = cmds.iter().map(|c| c.opcode).collect();
    assert_eq!(ops, [Opcode::AllocStag, Opcode::WritePbl, Opcode::RegMr]);
    {
        let d = bus.dev();
        let m = &d.mrs[&mr2.lkey()];
        assert!(
            m.page_shift > 12 && m.pbl.len() <= 2,
            "{} {:?}",
            m.page_shift,
            m.pbl
        );
        translates_contiguously(m.va, m.length, m.page_shift, &m.pbl, big.bus_addr());
    }

    let stag = mr.lkey();
    mr.dereg().unwrap();
    assert!(!bus.dev().mrs.contains_key(&stag));
    drop(mr2); // dropping deregisters too
    assert!(bus.dev().mrs.is_empty());
}

/// The full life of a connection on the passive side, then the active side.
#[test]
fn every_verb() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(64 * 1024).unwrap();
    let mr = pd
        .reg_mr(
            &buf,
            0,
            64 * 1024,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_WRITE,
        )
        .unwrap();
    let scq = ctx.create_cq(16).unwrap();
    let rcq = ctx.create_cq(10).unwrap();
    assert_eq!(rcq.entries(), 16, "rounded up to a power of two");
    let qp = pd.create_qp(&scq, &rcq, 8, 8).unwrap();
    let qpn = qp.qpn();
    {
        let d = bus.dev();
        let q = &d.qps[&qpn];
        assert_eq!(
            (q.pd, q.send_cqn, q.recv_cqn),
            (pd.pdn(), scq.cqn(), rcq.cqn())
        );
        assert_eq!((q.sq_entries, q.rq_entries), (8, 8));
        assert_eq!(q.sq_ring % 64, 0);
    }

    // Receive buffers may be posted while Idle (before the connection).
    let r0 = mr.sge(0, 1000).unwrap();
    let r1 = mr.sge(4096, 24).unwrap();
    qp.post_recv(&[
        RecvWr {
            wr_id: 10,
            sges: &[r0, r1],
        },
        RecvWr {
            wr_id: 11,
            sges: &[],
        },
    ])
    .unwrap();
    assert_eq!(
        bus.dev().qps[&qpn].recv_wqes,
        vec![
            RecvWqe {
                wr_id: 10,
                sges: SgeList::new(&[r0, r1]).unwrap()
            },
            RecvWqe {
                wr_id: 11,
                sges: SgeList::new(&[]).unwrap()
            },
        ]
    );

    // Passive side: listen, a request with private data, accept.
    let l = ctx.listen(4791, 8).unwrap();
    match bus.cmds_since(bus.ncmds() - 1)[0].command() {
        Command::Listen { port, backlog } => assert_eq!((port, backlog), (4791, 8)),
        c => panic!("{c:?}"),
    }
    bus.dev().event_data.insert(77, b"hello".to_vec());
    let mut ev = event(EventKind::ConnectRequest, 77);
    ev.private_data_len = 5;
    ev.listen_id = l.id();
    bus.push_event(ev);
    let e = ctx.get_cm_event(MS).unwrap();
    assert_eq!(e.kind, EventKind::ConnectRequest);
    assert_eq!((e.handle, e.listen_id), (77, l.id()));
    assert_eq!(e.peer_ip, Ipv4Addr::new(10, 0, 0, 2));
    assert_eq!(e.private_data, b"hello");
    assert_eq!(qp.post_send(&[]), Err(Error::WrongState(QpState::Idle)));
    ctx.accept(77, &qp, 4, 8, b"welcome").unwrap();
    match bus.cmds_since(bus.ncmds() - 1)[0].command() {
        Command::Accept {
            conn_id,
            qpn: q,
            ird,
            ord,
            private_data,
        } => {
            assert_eq!((conn_id, q, ird, ord), (77, qpn, 4, 8));
            assert_eq!(private_data, b"welcome");
        }
        c => panic!("{c:?}"),
    }
    bus.push_event(event(EventKind::Established, qpn));
    assert_eq!(ctx.get_cm_event(MS).unwrap().kind, EventKind::Established);
    assert_eq!(qp.state(), QpState::Rts);

    // Every send operation, signaled or not.
    let s0 = mr.sge(100, 200).unwrap();
    let s1 = mr.sge(8192, 300).unwrap();
    let remote = RemoteAddr {
        addr: 0x7000_0000,
        rkey: 0x0102_0304,
    };
    let wrs = [
        SendWr {
            wr_id: 1,
            op: SendOp::RdmaWrite(remote),
            sges: &[s0, s1],
            signaled: false,
            solicited: false,
            fence: false,
            inline_data: None,
        },
        SendWr {
            wr_id: 2,
            op: SendOp::RdmaRead(remote),
            sges: &[s1],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        },
        SendWr {
            wr_id: 3,
            op: SendOp::Send,
            sges: &[s0],
            signaled: true,
            solicited: true,
            fence: true,
            inline_data: None,
        },
        SendWr {
            wr_id: 4,
            op: SendOp::SendWithInv(0xAABB_CC01),
            sges: &[],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        },
        SendWr {
            wr_id: 5,
            op: SendOp::SendWithImm(0x1234),
            sges: &[s0],
            signaled: false,
            solicited: false,
            fence: false,
            inline_data: None,
        },
        SendWr {
            wr_id: 6,
            op: SendOp::RdmaWriteWithImm(remote, 0x5678),
            sges: &[s1],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        },
    ];
    qp.post_send(&wrs).unwrap();
    assert_eq!(qp.sq_free(), 2);
    let w = |wr_id, opcode, flags, imm_or_inv, remote: Option<RemoteAddr>, s: &[Sge]| SendWqe {
        wr_id,
        opcode,
        flags,
        imm_or_inv,
        remote_offset: remote.map_or(0, |r| r.addr),
        remote_stag: remote.map_or(0, |r| r.rkey),
        sges: SgeList::new(s).unwrap(),
        inline: None,
    };
    let want = vec![
        w(1, SendOpcode::RdmaWrite, 0, 0, Some(remote), &[s0, s1]),
        w(
            2,
            SendOpcode::RdmaRead,
            WQE_FLAG_SIGNALED,
            0,
            Some(remote),
            &[s1],
        ),
        w(
            3,
            SendOpcode::Send,
            WQE_FLAG_SIGNALED | WQE_FLAG_SOLICITED | WQE_FLAG_FENCE,
            0,
            None,
            &[s0],
        ),
        w(
            4,
            SendOpcode::SendWithInv,
            WQE_FLAG_SIGNALED,
            0xAABB_CC01,
            None,
            &[],
        ),
        w(5, SendOpcode::SendWithImm, 0, 0x1234, None, &[s0]),
        w(
            6,
            SendOpcode::RdmaWriteWithImm,
            WQE_FLAG_SIGNALED,
            0x5678,
            Some(remote),
            &[s1],
        ),
    ];
    assert_eq!(bus.dev().qps[&qpn].send_wqes, want);
    assert_eq!(bus.dev().bad_wqes, 0);

    // Completions: the signaled ones; unsignaled ones before them retire silently.
    let sc = scq.cqn();
    bus.push_cqe(sc, cqe(2, qpn, WcOpcode::RdmaRead, WcStatus::Success, 300));
    bus.push_cqe(sc, cqe(3, qpn, WcOpcode::Send, WcStatus::Success, 200));
    bus.push_cqe(sc, cqe(4, qpn, WcOpcode::Send, WcStatus::Success, 0));
    bus.push_cqe(sc, cqe(6, qpn, WcOpcode::RdmaWrite, WcStatus::Success, 300));
    let mut wc = [WorkCompletion::default(); 3];
    assert_eq!(scq.poll(&mut wc).unwrap(), 3);
    assert_eq!(
        wc.map(|w| (w.wr_id, w.opcode, w.byte_len)),
        [
            (2, WcOpcode::RdmaRead, 300),
            (3, WcOpcode::Send, 200),
            (4, WcOpcode::Send, 0)
        ]
    );
    assert_eq!(bus.dev().cqs[&sc].consumer, 3);
    assert_eq!(scq.poll(&mut wc).unwrap(), 1);
    assert_eq!(wc[0].wr_id, 6);
    assert_eq!(scq.poll(&mut wc).unwrap(), 0);
    assert_eq!(qp.sq_free(), 8, "every send WR retired");

    // Receive completions with flags.
    let rc = rcq.cqn();
    let mut c = cqe(10, qpn, WcOpcode::Recv, WcStatus::Success, 1024);
    c.flags = CQE_FLAG_SOLICITED | CQE_FLAG_WITH_INV;
    c.imm_or_inv = 0x99;
    bus.push_cqe(rc, c);
    let mut c = cqe(11, qpn, WcOpcode::RecvRdmaWithImm, WcStatus::Success, 0);
    c.flags = CQE_FLAG_WITH_IMM;
    c.imm_or_inv = 0x42;
    bus.push_cqe(rc, c);
    let mut wc = [WorkCompletion::default(); 4];
    assert_eq!(rcq.poll(&mut wc).unwrap(), 2);
    assert_eq!(wc[0].invalidated_rkey, Some(0x99));
    assert!(wc[0].solicited && wc[0].imm.is_none());
    assert_eq!((wc[1].imm, wc[1].invalidated_rkey), (Some(0x42), None));
    assert_eq!(qp.rq_free(), 8);

    // Notification: arm, the device raises the event, wait returns once.
    rcq.req_notify(true);
    assert_eq!(bus.dev().cqs[&rc].armed, CqArm::Solicited as u32);
    scq.req_notify(false);
    assert_eq!(bus.dev().cqs[&sc].armed, CqArm::NextCompletion as u32);
    bus.push_event(event(EventKind::CqCompletion, sc));
    scq.wait(MS).unwrap();
    assert_eq!(scq.wait(MS), Err(Error::Timeout));
    assert_eq!(rcq.wait(MS), Err(Error::Timeout));

    // Query / modify.
    bus.dev().qps.get_mut(&qpn).unwrap().state = QpState::Closing;
    assert_eq!(qp.query().unwrap(), QpState::Closing);
    assert_eq!(qp.state(), QpState::Closing);
    qp.modify(QpState::Error).unwrap();
    assert_eq!(bus.dev().qps[&qpn].state, QpState::Error);
    assert_eq!(
        qp.post_recv(&[RecvWr {
            wr_id: 1,
            sges: &[]
        }]),
        Err(Error::WrongState(QpState::Error))
    );

    // Active side on a second QP: connect with private data, rejected.
    let qp2 = pd.create_qp(&scq, &rcq, 4, 4).unwrap();
    let p = ConnectParams {
        peer_ip: Ipv4Addr::new(10, 0, 0, 9),
        peer_port: 4791,
        local_port: 0,
        ird: 2,
        ord: 3,
        mpa: MpaOptions {
            revision: 2,
            crc: true,
            markers: false,
        },
    };
    let conn = qp2.connect(&p, b"ping").unwrap();
    match bus.cmds_since(bus.ncmds() - 1)[0].command() {
        Command::Connect {
            qpn: q,
            peer_ip,
            peer_port,
            ird,
            ord,
            mpa,
            private_data,
            ..
        } => {
            assert_eq!(
                (q, peer_ip, peer_port, ird, ord),
                (qp2.qpn(), 0x0A00_0009, 4791, 2, 3)
            );
            assert_eq!(mpa, p.mpa);
            assert_eq!(private_data, b"ping");
        }
        c => panic!("{c:?}"),
    }
    bus.dev().event_data.insert(conn, b"go away".to_vec());
    let mut ev = event(EventKind::Rejected, qp2.qpn());
    ev.status = conn;
    ev.private_data_len = 7;
    bus.push_event(ev);
    let e = ctx.get_cm_event(MS).unwrap();
    assert_eq!(
        (e.kind, e.private_data.as_slice()),
        (EventKind::Rejected, &b"go away"[..])
    );

    ctx.reject(78, b"no").unwrap();
    match bus.cmds_since(bus.ncmds() - 1)[0].command() {
        Command::Reject {
            conn_id,
            private_data,
        } => assert_eq!((conn_id, private_data), (78, &b"no"[..])),
        c => panic!("{c:?}"),
    }
    qp2.disconnect(true).unwrap();
    assert_eq!(
        bus.cmds_since(bus.ncmds() - 1)[0].command(),
        Command::Disconnect {
            qpn: qp2.qpn(),
            abortive: true
        }
    );
    // Connection loss moves the QP to Error.
    bus.push_event(event(EventKind::ConnectionLost, qp2.qpn()));
    assert_eq!(
        ctx.get_cm_event(MS).unwrap().kind,
        EventKind::ConnectionLost
    );
    assert_eq!(qp2.state(), QpState::Error);
    // A refused connect (RST in SYN-SENT) leaves the QP Idle, as the device
    // does, so it can connect again.
    let qp3 = pd.create_qp(&scq, &rcq, 4, 4).unwrap();
    bus.push_event(event(EventKind::Refused, qp3.qpn()));
    assert_eq!(ctx.get_cm_event(MS).unwrap().kind, EventKind::Refused);
    assert_eq!(qp3.state(), QpState::Idle);

    // Filter rules and route updates.
    let rule = FilterRule {
        peer_prefix: 0x0A00_0000,
        prefix_len: 8,
        local_ports: (4791, 4791),
        peer_ports: (0, 65535),
        action: FilterAction::DenyReset,
    };
    ctx.filter_set(3, rule).unwrap();
    assert_eq!(
        bus.cmds_since(bus.ncmds() - 1)[0].command(),
        Command::FilterSet { index: 3, rule }
    );
    ctx.filter_default(FilterAction::DenyDrop).unwrap();
    ctx.filter_clear().unwrap();
    assert_eq!(ctx.filter_stats(3).unwrap(), (1 << 32) | 5);
    let mac = [0x02, 0, 0, 0, 0, 7];
    assert_eq!(
        ctx.route_update(Ipv4Addr::new(10, 0, 0, 254), mac).unwrap(),
        3
    );
    assert_eq!(
        bus.cmds_since(bus.ncmds() - 1)[0].command(),
        Command::RouteUpdate {
            ip: 0x0A00_00FE,
            mac
        }
    );

    // Tear down: every object gives its device resource back.
    drop(l);
    assert_eq!(bus.cmds_since(bus.ncmds() - 1)[0].opcode, Opcode::Unlisten);
    qp.destroy().unwrap();
    qp2.destroy().unwrap();
    qp3.destroy().unwrap();
    mr.dereg().unwrap();
    scq.destroy().unwrap();
    rcq.destroy().unwrap();
    let d = bus.dev();
    assert!(d.qps.is_empty() && d.cqs.is_empty() && d.mrs.is_empty());
    assert_eq!(d.bad_cmds, 0, "every command parsed");
}

/// Data-path calls touch only host memory and the QP's/CQ's own doorbell
/// page: the MMIO log between the marks holds nothing else, and no command
/// went through the mailbox.
#[test]
fn data_path_touches_only_its_own_doorbell_pages() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(8192).unwrap();
    let mr = pd.reg_mr(&buf, 0, 8192, AccessFlags::LOCAL_WRITE).unwrap();
    let cq = ctx.create_cq(64).unwrap();
    let other_cq = ctx.create_cq(64).unwrap();
    let _other_qp = pd.create_qp(&other_cq, &other_cq, 16, 16).unwrap();
    let qp = pd.create_qp(&cq, &cq, 16, 16).unwrap();
    bus.push_event(event(EventKind::Established, qp.qpn()));
    ctx.process_events().unwrap();
    let (qpn, cqn) = (qp.qpn(), cq.cqn());

    let mark = bus.mark();
    let cmds = bus.ncmds();
    let sge = [mr.sge(0, 4096).unwrap()];
    let mut wc = [WorkCompletion::default(); 8];
    for round in 0..5u64 {
        qp.post_recv(&[RecvWr {
            wr_id: round,
            sges: &sge,
        }])
        .unwrap();
        let wrs: Vec<SendWr> = (0..3)
            .map(|k| SendWr {
                wr_id: 100 * round + k,
                op: SendOp::Send,
                sges: &sge,
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            })
            .collect();
        qp.post_send(&wrs).unwrap();
        for k in 0..3 {
            bus.push_cqe(
                cqn,
                cqe(
                    100 * round + k,
                    qpn,
                    WcOpcode::Send,
                    WcStatus::Success,
                    4096,
                ),
            );
        }
        bus.push_cqe(cqn, cqe(round, qpn, WcOpcode::Recv, WcStatus::Success, 10));
        assert_eq!(cq.poll(&mut wc).unwrap(), 4);
        assert_eq!(cq.poll(&mut wc).unwrap(), 0);
    }
    let log = bus.mmio_since(mark);
    let allowed = [
        qp_doorbell_page(qpn) + QP_SQ_PRODUCER,
        qp_doorbell_page(qpn) + QP_RQ_PRODUCER,
        cq_doorbell_page(cqn) + CQ_CONSUMER,
    ];
    for &(off, write, _) in &log {
        assert!(write, "data path read a register at {off:#x}");
        assert!(allowed.contains(&off), "data path touched {off:#x}");
    }
    // One doorbell per post, one consumer write per poll that consumed.
    assert_eq!(log.len(), 5 * 3);
    assert_eq!(bus.ncmds(), cmds, "no mailbox command on the data path");
}

#[test]
fn zero_length_operations_are_valid() {
    // RFC 5040 §4.3/§4.4/§5.1: zero-length RDMA Write, Read and Send are allowed.
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    rts_qp!(bus, ctx, 8, AccessFlags::LOCAL_READ => mr, cq, qp);
    let remote = RemoteAddr { addr: 0, rkey: 7 };
    // A zero-length SGE at the very end of the region is not out of bounds.
    let empty_at_end = [Sge {
        addr: mr.va() + 4096,
        length: 0,
        lkey: mr.lkey(),
    }];
    let ops = [
        SendOp::RdmaWrite(remote),
        SendOp::RdmaRead(remote),
        SendOp::Send,
    ];
    let wrs: Vec<SendWr> = ops
        .iter()
        .map(|&op| SendWr {
            wr_id: 9,
            op,
            sges: &[],
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        })
        .chain(std::iter::once(SendWr {
            wr_id: 10,
            op: SendOp::Send,
            sges: &empty_at_end,
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: None,
        }))
        .collect();
    qp.post_send(&wrs).unwrap();
    let d = bus.dev();
    let got = &d.qps[&qp.qpn()].send_wqes;
    assert_eq!(got.len(), 4);
    assert!(got.iter().all(|w| w.sges.total_len() == 0));
}

#[test]
fn send_queue_wraps_many_times() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    rts_qp!(bus, ctx, 4, AccessFlags::LOCAL_READ => mr, cq, qp);
    let sge = [mr.sge(0, 64).unwrap()];
    let mut wc = [WorkCompletion::default(); 4];
    for i in 0..50u64 {
        // Three unsignaled and one signaled fill the ring; one CQE retires all four.
        let wrs: Vec<SendWr> = (0..4)
            .map(|k| SendWr {
                wr_id: 4 * i + k,
                op: SendOp::Send,
                sges: &sge,
                signaled: k == 3,
                solicited: false,
                fence: false,
                inline_data: None,
            })
            .collect();
        qp.post_send(&wrs).unwrap();
        assert_eq!(qp.sq_free(), 0);
        bus.push_cqe(
            cq.cqn(),
            cqe(4 * i + 3, qp.qpn(), WcOpcode::Send, WcStatus::Success, 64),
        );
        assert_eq!(cq.poll(&mut wc).unwrap(), 1);
        assert_eq!(wc[0].wr_id, 4 * i + 3);
    }
    let d = bus.dev();
    let ids: Vec<u64> = d.qps[&qp.qpn()].send_wqes.iter().map(|w| w.wr_id).collect();
    assert_eq!(ids, (0..200).collect::<Vec<_>>());
}

#[test]
fn error_flushes_complete_unsignaled_work_requests() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let cq = ctx.create_cq(16).unwrap();
    let qp = pd.create_qp(&cq, &cq, 8, 8).unwrap();
    bus.push_event(event(EventKind::Established, qp.qpn()));
    ctx.process_events().unwrap();
    let wrs: Vec<SendWr> = (0..4)
        .map(|k| SendWr {
            wr_id: k,
            op: SendOp::Send,
            sges: &[],
            signaled: k == 1,
            solicited: false,
            fence: false,
            inline_data: None,
        })
        .collect();
    qp.post_send(&wrs).unwrap();
    qp.post_recv(&[RecvWr {
        wr_id: 50,
        sges: &[],
    }])
    .unwrap();
    // WR 0 fails with a remote access error (Terminate cause present), the rest flush.
    let mut c = cqe(0, qp.qpn(), WcOpcode::Send, WcStatus::RemoteAccessError, 0);
    let cause = rnic_wire::terminate::TerminateCause::from_raw(0, 1, 0).unwrap();
    c.term_cause = rnic_wire::abi::cqe::encode_term_cause(Some(cause));
    bus.push_cqe(cq.cqn(), c);
    for k in 1..4 {
        bus.push_cqe(
            cq.cqn(),
            cqe(k, qp.qpn(), WcOpcode::Send, WcStatus::WrFlushError, 0),
        );
    }
    bus.push_cqe(
        cq.cqn(),
        cqe(50, qp.qpn(), WcOpcode::Recv, WcStatus::WrFlushError, 0),
    );
    let mut wc = [WorkCompletion::default(); 8];
    assert_eq!(cq.poll(&mut wc).unwrap(), 5);
    assert_eq!(wc[0].status, WcStatus::RemoteAccessError);
    assert_eq!(wc[0].term_cause, Some(cause));
    assert!(wc[1..5].iter().all(|w| w.status == WcStatus::WrFlushError));
    assert_eq!(qp.state(), QpState::Error);
    assert_eq!((qp.sq_free(), qp.rq_free()), (8, 8));
}

/// 64 QPs on two CQs, completions interleaved across QPs in a random order
/// per QP-stream: each is matched to its own QP's work requests.
#[test]
fn many_qps_share_cqs() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let pd = ctx.alloc_pd().unwrap();
    let buf = ctx.alloc_dma(4096).unwrap();
    let mr = pd.reg_mr(&buf, 0, 4096, AccessFlags::LOCAL_WRITE).unwrap();
    let scq = ctx.create_cq(1024).unwrap();
    let rcq = ctx.create_cq(1024).unwrap();
    let qps: Vec<_> = (0..64)
        .map(|_| pd.create_qp(&scq, &rcq, 4, 4).unwrap())
        .collect();
    for qp in &qps {
        bus.push_event(event(EventKind::Established, qp.qpn()));
    }
    ctx.process_events().unwrap();
    let sge = [mr.sge(0, 16).unwrap()];
    for (i, qp) in qps.iter().enumerate() {
        let wrs: Vec<SendWr> = (0..4)
            .map(|k| SendWr {
                wr_id: (i as u64) << 8 | k,
                op: SendOp::Send,
                sges: &sge,
                signaled: true,
                solicited: false,
                fence: false,
                inline_data: None,
            })
            .collect();
        qp.post_send(&wrs).unwrap();
        qp.post_recv(&[RecvWr {
            wr_id: (i as u64) << 8 | 0x80,
            sges: &sge,
        }])
        .unwrap();
    }
    // Interleave: round k completes WR k of every QP, QPs in a shuffled order.
    let mut order: Vec<usize> = (0..64).collect();
    let mut seed = 12345u32;
    for k in 0..4u64 {
        for i in (1..order.len()).rev() {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            order.swap(i, (seed >> 8) as usize % (i + 1));
        }
        for &i in &order {
            let q = qps[i].qpn();
            bus.push_cqe(
                scq.cqn(),
                cqe(
                    (i as u64) << 8 | k,
                    q,
                    WcOpcode::Send,
                    WcStatus::Success,
                    16,
                ),
            );
        }
    }
    for &i in &order {
        let q = qps[i].qpn();
        bus.push_cqe(
            rcq.cqn(),
            cqe(
                (i as u64) << 8 | 0x80,
                q,
                WcOpcode::Recv,
                WcStatus::Success,
                16,
            ),
        );
    }
    let mut wc = vec![WorkCompletion::default(); 100];
    let mut got = 0;
    loop {
        let n = scq.poll(&mut wc).unwrap();
        if n == 0 {
            break;
        }
        for w in &wc[..n] {
            let i = (w.wr_id >> 8) as usize;
            assert_eq!(w.qp_num, qps[i].qpn());
        }
        got += n;
    }
    assert_eq!(got, 256);
    assert_eq!(rcq.poll(&mut wc).unwrap(), 64);
    assert!(qps.iter().all(|q| q.sq_free() == 4 && q.rq_free() == 4));
    assert_eq!(bus.dev().bad_wqes, 0);
}

/// What one post and one poll cost on the host, measured against the fake
/// device (whose own bookkeeping is included, so this is an upper bound).
#[test]
fn data_path_cost() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    rts_qp!(bus, ctx, 64, AccessFlags::LOCAL_WRITE => mr, cq, qp);
    let sge = [mr.sge(0, 4096).unwrap()];
    let rounds = 2000u64;
    let batch = 16u64;
    let mut wc = [WorkCompletion::default(); 16];
    let mark = bus.mark();
    let t = std::time::Instant::now();
    for r in 0..rounds {
        let wrs: Vec<SendWr> = (0..batch)
            .map(|k| SendWr {
                wr_id: r * batch + k,
                op: SendOp::RdmaWrite(RemoteAddr { addr: 0, rkey: 1 }),
                sges: &sge,
                signaled: k == batch - 1,
                solicited: false,
                fence: false,
                inline_data: None,
            })
            .collect();
        qp.post_send(&wrs).unwrap();
        bus.push_cqe(
            cq.cqn(),
            cqe(
                r * batch + batch - 1,
                qp.qpn(),
                WcOpcode::RdmaWrite,
                WcStatus::Success,
                4096,
            ),
        );
        assert_eq!(cq.poll(&mut wc).unwrap(), 1);
    }
    let dt = t.elapsed();
    let ops = rounds * batch;
    let mmio = bus.mmio_since(mark).len() as u64;
    eprintln!(
        "data path: {ops} RDMA Writes in batches of {batch}: {:.0} ns/WR (fake device included), \
         {mmio} MMIO writes = {:.3} per WR, 0 MMIO reads",
        dt.as_nanos() as f64 / ops as f64,
        mmio as f64 / ops as f64
    );
    assert_eq!(
        mmio,
        2 * rounds,
        "one doorbell per post call, one per poll call"
    );
}

#[test]
fn cq_overflow_is_reported() {
    let bus = FakeBus::new();
    let ctx = Context::open(bus.clone()).unwrap();
    let cq = ctx.create_cq(4).unwrap();
    assert!(!cq.overflowed());
    bus.push_event(event(EventKind::CqOverflow, cq.cqn()));
    let e = ctx.get_cm_event(MS).unwrap();
    assert_eq!((e.kind, e.handle), (EventKind::CqOverflow, cq.cqn()));
    assert!(cq.overflowed());
}

/// Every sampled octet of the region `[va, va + len)` registered with
/// `shift` and `pbl` translates, through `rnic_wire::abi::tpt::TptEntry::
/// page_of` (the device's reference), to `bus + (octet - va)`.
fn translates_contiguously(va: u64, len: u64, shift: u8, pbl: &[u64], bus: u64) {
    use rnic_wire::abi::tpt::{TptEntry, TptState};
    let e = TptEntry {
        state: TptState::Valid,
        key: 0,
        access: 0,
        page_shift: shift,
        pd: 0,
        va,
        length: len,
        pbl_base: 0,
        npages: pbl.len() as u32,
    };
    let mut o = 0;
    while o < len {
        let (i, off) = e.page_of(va + o).expect("inside the page list");
        assert_eq!(pbl[i as usize] + off, bus + o, "octet {o}");
        o += 1 + (o * 7 + 13) % 997;
    }
    let (i, off) = e.page_of(va + len - 1).unwrap();
    assert_eq!(pbl[i as usize] + off, bus + len - 1);
}

/// `SendWr::inline_data` (`IBV_SEND_INLINE`): the octets go into the WQE
/// with `WQE_FLAG_INLINE` and no SGE, up to the device's
/// `max_inline_data` (`CAPS[31:24]`); more octets, SGEs as well, an RDMA
/// Read, or a device without inline support are typed errors with nothing
/// written and no doorbell.
#[test]
fn inline_data_goes_into_the_wqe() {
    use rnic_wire::abi::wqe::{MAX_INLINE_DATA, WQE_FLAG_INLINE};
    for max in [0usize, 40, MAX_INLINE_DATA] {
        let bus = FakeBus::new();
        bus.set_reg(
            CAPS,
            common::CAPS_DEFAULT | ((max as u32) << CAP_MAX_INLINE_SHIFT),
        );
        let ctx = Context::open(bus.clone()).unwrap();
        assert_eq!(ctx.caps().max_inline_data(), max);
        rts_qp!(bus, ctx, 8, AccessFlags::LOCAL_READ => mr, cq, qp);
        let remote = RemoteAddr {
            addr: 0x1000,
            rkey: 7,
        };
        let msg: Vec<u8> = (0..=max as u8).collect();
        let wr = |op, sges, data| SendWr {
            wr_id: 5,
            op,
            sges,
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: Some(data),
        };
        let sge = [mr.sge(0, 8).unwrap()];
        for (w, want) in [
            (
                wr(SendOp::Send, &[], &msg[..]),
                WrError::InlineTooLong {
                    given: max + 1,
                    max,
                },
            ),
            (
                wr(SendOp::RdmaRead(remote), &[], &msg[..1]),
                WrError::InlineNotAllowed,
            ),
            (wr(SendOp::Send, &sge, &msg[..1]), WrError::InlineNotAllowed),
        ] {
            match qp.post_send(&[w]) {
                Err(Error::BadWr { index: 0, reason }) => assert_eq!(reason, want),
                other => panic!("max {max}: {other:?}, want {want:?}"),
            }
        }
        qp.post_send(&[
            wr(SendOp::RdmaWrite(remote), &[], &msg[..max]),
            wr(SendOp::SendWithInv(9), &[], &msg[..max / 2]),
        ])
        .unwrap();
        let d = bus.dev();
        let got = &d.qps[&qp.qpn()].send_wqes;
        assert_eq!(got.len(), 2, "only the good WRs are written");
        for (w, len) in got.iter().zip([max, max / 2]) {
            assert!(w.flags & WQE_FLAG_INLINE != 0);
            assert_eq!(w.sges.total_len(), 0);
            assert_eq!(w.inline.unwrap().as_slice(), &msg[..len]);
        }
    }
}

/// WQE push (`CAP_WQE_PUSH`, `abi::doorbell::QP_SQ_PUSH`): a post of one
/// work request writes the WQE into its ring slot, then its dwords up to
/// the last non-zero one through the push window, in order, then the
/// doorbell (the fake device checks the pushed copy equals the ring's);
/// a post of several WRs, a device without the capability, or
/// `Options::wqe_push` off push nothing.
#[test]
fn one_wr_posts_push_their_wqe() {
    use rnic_wire::abi::doorbell::QP_SQ_PUSH;
    for (cap, opt) in [(true, true), (false, true), (true, false)] {
        let bus = FakeBus::new();
        let caps = common::CAPS_DEFAULT | (96 << CAP_MAX_INLINE_SHIFT);
        bus.set_reg(CAPS, caps | if cap { CAP_WQE_PUSH } else { 0 });
        let ctx = Context::open_with(
            bus.clone(),
            rnic_driver::Options {
                wqe_push: opt,
                ..rnic_driver::Options::default()
            },
        )
        .unwrap();
        assert_eq!(ctx.caps().wqe_push(), cap);
        assert_eq!(ctx.wqe_push(), cap && opt);
        ctx.set_wqe_push(true);
        assert_eq!(ctx.wqe_push(), cap, "on only with the capability");
        ctx.set_wqe_push(opt);
        rts_qp!(bus, ctx, 8, AccessFlags::LOCAL_READ => mr, cq, qp);
        let remote = RemoteAddr {
            addr: 0x1000,
            rkey: 7,
        };
        let msg: Vec<u8> = (1..=61).collect();
        let sge = [mr.sge(0, 8).unwrap(), mr.sge(64, 8).unwrap()];
        let wr = |sges, data| SendWr {
            wr_id: 5,
            op: SendOp::RdmaWrite(remote),
            sges,
            signaled: true,
            solicited: false,
            fence: false,
            inline_data: data,
        };
        let page = qp_doorbell_page(qp.qpn());
        // 61 inline octets end in dword (32 + 61 - 1) / 4 = 23; two SGEs
        // end at octet 64 (dword 15).
        for (w, dwords) in [(wr(&[], Some(&msg[..])), 24u32), (wr(&sge, None), 16)] {
            let mark = bus.mark();
            qp.post_send(&[w]).unwrap();
            let writes: Vec<u32> = bus
                .mmio_since(mark)
                .iter()
                .filter(|a| a.1)
                .map(|a| a.0 - page)
                .collect();
            let mut want: Vec<u32> = if cap && opt {
                (0..dwords).map(|k| QP_SQ_PUSH + 4 * k).collect()
            } else {
                vec![]
            };
            want.push(QP_SQ_PRODUCER);
            assert_eq!(writes, want, "cap {cap} option {opt}");
        }
        // Several WRs: the ring and one doorbell only.
        let mark = bus.mark();
        qp.post_send(&[wr(&sge, None), wr(&[], Some(&msg[..4]))])
            .unwrap();
        let writes: Vec<(u32, bool, u32)> = bus.mmio_since(mark);
        assert_eq!(writes, [(page + QP_SQ_PRODUCER, true, 4)]);
        let d = bus.dev();
        let dq = &d.qps[&qp.qpn()];
        assert_eq!(dq.send_wqes.len(), 4);
        let pushed: &[u32] = if cap && opt { &[0, 1] } else { &[] };
        assert_eq!(dq.pushed, pushed);
    }
}
