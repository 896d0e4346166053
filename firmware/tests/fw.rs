//! The firmware end to end against the scripted Hal: passive and active
//! opens through MPA into RDMA mode, filter, route updates, RDMA-mode
//! exceptions, teardown, timeouts.
mod common;
use common::*;
use rnic_wire::abi::context::{
    ConnMode, ExceptionReason, RtrKind, TableId, QP_FLAG_RTR_RX, QP_FLAG_RTR_TX,
};
use rnic_wire::abi::mailbox::{Command, EventKind, FilterAction, FilterRule, MboxStatus, QpState};
use rnic_wire::net::{ArpOperation, TcpControl};

const S: u64 = 1_000_000;

#[test]
fn passive_open_mpa_responder_into_rdma_mode() {
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(ctx.mode, ConnMode::Rdma);
    assert_eq!((ctx.rcv_nxt, ctx.snd_nxt, ctx.snd_una), (rcv, snd, snd));
    assert_eq!((ctx.rx_marker_ref, ctx.tx_marker_ref), (rcv, snd));
    assert_eq!(ctx.mpa_flags & 3, 3, "CRC both ways");
    assert_eq!((ctx.snd_wscale, ctx.rcv_wscale), (7, 7));
    assert_eq!((ctx.peer_mac, ctx.local_mac), (PEER_MAC, OUR_MAC));
    assert_eq!(
        (ctx.local_port, ctx.peer_port, ctx.peer_ip),
        (LPORT, PPORT, PEER_IP)
    );
    assert_eq!(ctx.mss, 1460);
    assert_eq!(ctx.mulpdu, 1460 - 6, "RFC 5044 §4.5 without markers");
    assert_eq!(ctx.qpn, qpn);
    let q = fw.hal.qp(qpn).unwrap();
    assert_eq!(q.state, QpState::Rts);
    assert_eq!((q.rtr, q.flags), (RtrKind::Write, QP_FLAG_RTR_RX));
    assert_eq!((q.ird, q.ord, q.conn), (1, 1, 0));
    // The Write RTR that came with the ACK was taken by the firmware (RFC
    // 6581 §3.2), not handed to the fast path; the MSNs start at 1.
    assert!(fw.hal.injected.is_empty());
    assert_eq!(
        (q.tx_send_msn, q.tx_read_msn, q.rx_send_msn, q.rx_read_msn),
        (1, 1, 1, 1)
    );
    // QP context written before the connection context went to RDMA mode.
    let qp_w = fw
        .hal
        .writes
        .iter()
        .rposition(|w| w.0 == TableId::Qp && w.2[0] == QpState::Rts as u8)
        .unwrap();
    let conn_w = fw
        .hal
        .writes
        .iter()
        .rposition(|w| w.0 == TableId::Conn && w.2[0] == ConnMode::Rdma as u8)
        .unwrap();
    assert!(qp_w < conn_w);
    let ev = fw.hal.events.pop().unwrap();
    assert_eq!(
        (ev.kind, ev.handle, ev.mpa_revision, ev.crc),
        (EventKind::Established, qpn, 2, true)
    );
    assert_eq!((ev.ird, ev.ord), (1, 1));
    // The firmware sent no ACK for the FPDU itself (the fast path does).
    assert!(sent_tcp(&mut fw.hal).is_empty());
}

#[test]
fn active_open_arp_syn_mpa_initiator_into_rdma_mode() {
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    let (s, r) = cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: PEER_IP,
            peer_port: LPORT,
            local_port: 0,
            ird: 4,
            ord: 8,
            mpa: mpa_opts(2, false),
            private_data: b"x",
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    let conn_id = word(&r, 0);
    let sent = fw.hal.take_sent();
    assert_eq!(sent.len(), 1);
    assert!(parse_arp(&sent[0]).is_some(), "ARP request first");
    rx(
        &mut fw,
        arp_frame(
            ArpOperation::Reply,
            PEER_MAC,
            PEER_IP,
            OUR_MAC,
            OUR_IP,
            OUR_MAC,
        ),
    );
    fw.poll();
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out.len(), 1);
    let syn = &out[0];
    assert_eq!(
        (syn.ctl, syn.dst_mac, syn.dst_port),
        (TcpControl::Syn, PEER_MAC, LPORT)
    );
    assert!(syn.src_port >= 49152);
    assert_eq!(
        (syn.mss, syn.ws, syn.ts, syn.sack),
        (Some(1460), Some(7), false, false)
    );
    let lp = syn.src_port;
    let iss = syn.seq;
    let mut sa = Seg::new(LPORT, lp, TcpControl::Syn, 5000, Some(iss + 1));
    sa.mss = Some(1448);
    sa.ws = Some(7);
    sa.ts = true;
    rx(&mut fw, sa.frame());
    let out = sent_tcp(&mut fw.hal);
    let req = out
        .iter()
        .find(|o| !o.payload.is_empty())
        .expect("MPA request");
    assert_eq!(
        req.payload,
        mpa_frame(false, 0x10, 2, &[0xc0, 0x04, 0xc0, 0x08, b'x'])
    );
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Firmware);
    // Reply (P2P, Write RTR, IRD 2, ORD 4): our first FPDU is the
    // zero-length RDMA Write RTR (RFC 6581 §3.2): siw's octets of the p2p
    // capture with the CRC field zero (CRC is off here).
    let reply = mpa_frame(true, 0x10, 2, &[0x80, 0x02, 0x80, 0x04, b'y', b'z']);
    let snd = iss + 1 + req.payload.len() as u32;
    let mut d = Seg::new(LPORT, lp, TcpControl::Psh, 5001, Some(snd));
    d.payload = reply.clone();
    rx(&mut fw, d.frame());
    let out = sent_tcp(&mut fw.hal);
    let rtr = out.iter().find(|o| !o.payload.is_empty()).expect("the RTR");
    let mut want = SIW_WRITE_RTR.to_vec();
    want[16..].fill(0);
    assert_eq!((rtr.seq, rtr.payload.as_slice()), (snd, want.as_slice()));
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Firmware);
    // The responder acknowledges it and sends its first FPDU.
    let rcv = 5001 + reply.len() as u32;
    let mut d = Seg::new(LPORT, lp, TcpControl::Psh, rcv, Some(snd + 20));
    d.payload = vec![0u8; 12];
    rx(&mut fw, d.frame());
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(ctx.mode, ConnMode::Rdma);
    assert_eq!((ctx.rcv_nxt, ctx.snd_nxt), (rcv, snd + 20));
    assert_eq!(ctx.mss, 1448);
    let q = fw.hal.qp(qpn).unwrap();
    assert_eq!(
        (q.state, q.rtr, q.flags),
        (QpState::Rts, RtrKind::Write, QP_FLAG_RTR_TX)
    );
    assert_eq!((q.ird, q.ord), (4, 2), "ORD limited by the responder's IRD");
    let inj = parse_tcp(&fw.hal.injected[0]).unwrap();
    assert_eq!((inj.seq, inj.payload.len()), (ctx.rcv_nxt, 12));
    let ev = fw.hal.events.pop().unwrap();
    assert_eq!(
        (ev.kind, ev.handle, ev.status),
        (EventKind::Established, qpn, conn_id)
    );
    let (s, pd) = cmd(&mut fw, Command::GetEventData { conn_id });
    assert_eq!((s, pd.as_slice()), (MboxStatus::Ok, &b"yz"[..]));
}

#[test]
fn filter_denies_without_state() {
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    cmd(
        &mut fw,
        Command::Listen {
            port: LPORT,
            backlog: 4,
        },
    );
    let rule = FilterRule {
        peer_prefix: PEER_IP,
        prefix_len: 32,
        local_ports: (0, 65535),
        peer_ports: (0, 65535),
        action: FilterAction::DenyReset,
    };
    assert_eq!(
        cmd(&mut fw, Command::FilterSet { index: 0, rule }).0,
        MboxStatus::Ok
    );
    let writes = fw.hal.writes.len();
    let mut syn = Seg::new(PPORT, LPORT, TcpControl::Syn, 100, None);
    syn.mss = Some(1460);
    rx(&mut fw, syn.frame());
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].ctl, out[0].ack), (TcpControl::Rst, Some(101)));
    assert!(fw.backlog().is_empty());
    // DenyDrop: silence.
    let rule = FilterRule {
        action: FilterAction::DenyDrop,
        ..rule
    };
    cmd(&mut fw, Command::FilterSet { index: 0, rule });
    rx(&mut fw, syn.frame());
    assert!(fw.hal.take_sent().is_empty());
    assert!(fw.backlog().is_empty());
    assert_eq!(
        fw.hal.writes.len(),
        writes,
        "no table write for a denied peer"
    );
    // Active connect to the denied peer.
    let (s, _) = cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: PEER_IP,
            peer_port: 1,
            local_port: 0,
            ird: 1,
            ord: 1,
            mpa: mpa_opts(2, false),
            private_data: &[],
        },
    );
    assert_eq!(s, MboxStatus::Denied);
    assert_eq!(fw.conn_count(), 0);
    assert!(fw.hal.take_sent().is_empty(), "not even ARP");
    let (s, r) = cmd(&mut fw, Command::FilterStats { index: 0 });
    assert_eq!((s, word(&r, 0)), (MboxStatus::Ok, 2));
    // Another peer is allowed by the default.
    let mut other = syn.clone();
    other.src_ip = 0x0A00_0003;
    rx(&mut fw, other.frame());
    assert_eq!(fw.backlog().len(), 1);
    // Default deny.
    cmd(&mut fw, Command::FilterClear);
    cmd(
        &mut fw,
        Command::FilterDefault {
            action: FilterAction::DenyDrop,
        },
    );
    other.src_ip = 0x0A00_0004;
    rx(&mut fw, other.frame());
    assert_eq!(fw.backlog().len(), 1);
}

#[test]
fn route_update_rewrites_affected_contexts() {
    let mut fw = new_fw();
    // Conn 0: on-link peer, in RDMA mode.
    passive_rdma(&mut fw);
    // Conn 1: an off-link peer (through the gateway), established in firmware mode.
    let far = 0x0808_0808;
    let mut syn = Seg::new(PPORT, LPORT, TcpControl::Syn, 100, None);
    syn.src_ip = far;
    rx(&mut fw, syn.frame_from(GW_MAC));
    let sa = sent_tcp(&mut fw.hal).pop().unwrap();
    assert_eq!(sa.dst_mac, GW_MAC);
    let mut ack = Seg::new(PPORT, LPORT, TcpControl::None, 101, Some(sa.seq + 1));
    ack.src_ip = far;
    rx(&mut fw, ack.frame_from(GW_MAC));
    assert_eq!(fw.hal.conn(1).unwrap().peer_mac, GW_MAC);
    // The device moved on meanwhile.
    let mut c0 = fw.hal.conn(0).unwrap();
    c0.rcv_nxt += 5000;
    let mut b = [0u8; 64];
    c0.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
    let new_gw = [2, 0, 0, 0, 0, 0x77];
    let (s, r) = cmd(
        &mut fw,
        Command::RouteUpdate {
            ip: GW_IP,
            mac: new_gw,
        },
    );
    assert_eq!((s, word(&r, 0)), (MboxStatus::Ok, 1));
    assert_eq!(fw.hal.conn(1).unwrap().peer_mac, new_gw);
    assert_eq!(fw.hal.conn(0).unwrap().peer_mac, PEER_MAC);
    let new_peer = [2, 0, 0, 0, 0, 0x99];
    cmd(
        &mut fw,
        Command::RouteUpdate {
            ip: PEER_IP,
            mac: new_peer,
        },
    );
    let c0b = fw.hal.conn(0).unwrap();
    assert_eq!(c0b.peer_mac, new_peer);
    assert_eq!(c0b.rcv_nxt, c0.rcv_nxt, "device progress kept");
    assert_eq!(c0b.mode, ConnMode::Rdma);
    // Frames the firmware sends later use the new MAC.
    cmd(
        &mut fw,
        Command::Disconnect {
            qpn: 0,
            abortive: true,
        },
    );
    let rst = sent_tcp(&mut fw.hal).pop().unwrap();
    assert_eq!((rst.ctl, rst.dst_mac), (TcpControl::Rst, new_peer));
}

#[test]
fn rdma_mode_rst_rfc5961_and_error_flush() {
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    // The fast path took 1000 more octets.
    let mut c = fw.hal.conn(0).unwrap();
    c.rcv_nxt = rcv + 1000;
    let mut b = [0u8; 64];
    c.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
    rx_as(
        &mut fw,
        ExceptionReason::Rst,
        0,
        Seg::new(PPORT, LPORT, TcpControl::Rst, rcv + 1100, None).frame(),
    );
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out.len(), 1, "challenge ACK");
    assert_eq!(
        (out[0].ctl, out[0].seq, out[0].ack),
        (TcpControl::None, snd, Some(rcv + 1000))
    );
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Rts);
    rx_as(
        &mut fw,
        ExceptionReason::Syn,
        0,
        Seg::new(PPORT, LPORT, TcpControl::Syn, 1, None).frame(),
    );
    assert_eq!(sent_tcp(&mut fw.hal).len(), 1, "challenge ACK for SYN");
    rx_as(
        &mut fw,
        ExceptionReason::Rst,
        0,
        Seg::new(PPORT, LPORT, TcpControl::Rst, rcv + 1000, None).frame(),
    );
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Error);
    assert_eq!(fw.hal.flushed, vec![qpn]);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Free);
    assert_eq!(fw.hal.events.pop().unwrap().kind, EventKind::ConnectionLost);
    // Error → Idle by the host.
    assert_eq!(
        cmd(
            &mut fw,
            Command::ModifyQp {
                qpn,
                state: QpState::Idle
            }
        )
        .0,
        MboxStatus::Ok
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::ModifyQp {
                qpn,
                state: QpState::Rts
            }
        )
        .0,
        MboxStatus::BadState
    );
}

#[test]
fn peer_fin_in_rdma_mode_closes_gracefully() {
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let mut fin = Seg::new(PPORT, LPORT, TcpControl::Fin, rcv, Some(snd));
    fin.payload = vec![];
    rx_as(&mut fw, ExceptionReason::Fin, 0, fin.frame());
    let out = sent_tcp(&mut fw.hal);
    assert!(out
        .iter()
        .any(|o| o.ctl == TcpControl::None && o.ack == Some(rcv + 1)));
    let our_fin = out
        .iter()
        .find(|o| o.ctl == TcpControl::Fin)
        .expect("our FIN");
    assert_eq!(our_fin.seq, snd);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Firmware);
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Closing);
    rx_as(
        &mut fw,
        ExceptionReason::FirmwareMode,
        0,
        Seg::new(PPORT, LPORT, TcpControl::None, rcv + 1, Some(snd + 1)).frame(),
    );
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Idle);
    assert_eq!(fw.hal.events.pop().unwrap().kind, EventKind::Closed);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Free);
    assert!(fw.hal.flushed.is_empty());
    assert_eq!(fw.conn_count(), 0);
}

#[test]
fn host_disconnect_and_terminate() {
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    assert_eq!(
        cmd(
            &mut fw,
            Command::Disconnect {
                qpn,
                abortive: false
            }
        )
        .0,
        MboxStatus::Ok
    );
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Closing);
    let fin = sent_tcp(&mut fw.hal).pop().unwrap();
    assert_eq!((fin.ctl, fin.seq), (TcpControl::Fin, snd));
    // The peer acks and closes too.
    let mut f = Seg::new(PPORT, LPORT, TcpControl::Fin, rcv, Some(snd + 1));
    f.payload = vec![];
    rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, f.frame());
    // Closed for the host at once; TIME-WAIT keeps only the 4-tuple.
    fw.poll();
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Idle);
    assert_eq!(fw.hal.events.pop().unwrap().kind, EventKind::Closed);
    assert_eq!(fw.qps().get(qpn).unwrap().conn, None);
    assert_eq!(fw.conn_count(), 1, "in TIME-WAIT");
    sent_tcp(&mut fw.hal);
    // A retransmitted FIN is still acknowledged (RFC 9293 §3.10.7.4).
    rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, f.frame());
    let ack = sent_tcp(&mut fw.hal).pop().expect("ACK of the FIN");
    assert_eq!((ack.ctl, ack.ack), (TcpControl::None, Some(rcv + 1)));
    fw.hal.now += 10 * S;
    fw.poll();
    assert_eq!(fw.conn_count(), 0, "TIME-WAIT over");
    assert!(
        fw.hal.events.is_empty(),
        "one Closed only: {:?}",
        fw.hal.events
    );
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Idle);

    // Terminate: a new connection, then the device reports a received
    // Terminate (exception TerminateRx, frame = the Terminate message's
    // first 8 octets, as the RTL's ExcArb queues it): the cause comes from
    // the frame (RFC 5040 §7.1), not from the QP context.
    use rnic_wire::abi::cqe::encode_term_cause;
    use rnic_wire::rdmap::ReadRequestRepr;
    use rnic_wire::terminate::{RdmapError, RemoteProtectionError, TerminateCause, TerminateRepr};
    let mut fw = new_fw();
    let (qpn, _, _) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let mut q = fw.hal.qp(qpn).unwrap();
    q.term_cause = 0x0001_0203;
    let mut b = [0u8; 64];
    q.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Qp as u8, qpn), b.to_vec());
    let cause = TerminateCause::Rdmap(RdmapError::RemoteProtection(
        RemoteProtectionError::from_value(1).unwrap(),
    ));
    let t = TerminateRepr {
        cause,
        ddp: None,
        rdma: Some(ReadRequestRepr {
            sink_stag: 1,
            sink_to: 2,
            size: 3,
            src_stag: 4,
            src_to: 5,
        }),
    };
    let mut tb = vec![0u8; t.buffer_len()];
    t.emit(&mut tb).unwrap();
    rx_as(&mut fw, ExceptionReason::TerminateRx, 0, tb[..8].to_vec());
    let ev = fw.hal.events.pop().unwrap();
    assert_eq!(
        (ev.kind, ev.status),
        (EventKind::QpError, encode_term_cause(Some(cause)))
    );
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Terminate);
    assert_eq!(sent_tcp(&mut fw.hal).pop().unwrap().ctl, TcpControl::Fin);
    // The peer never answers: the close times out, the QP goes to Error and is flushed.
    for _ in 0..200 {
        fw.hal.now += 5 * S;
        fw.poll();
    }
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Error);
    assert_eq!(fw.hal.flushed, vec![qpn]);
    assert_eq!(fw.conn_count(), 0);
}

#[test]
fn reject_and_rejected() {
    // Responder rejects.
    let mut fw = new_fw();
    let req = mpa_frame(false, 0x00, 1, b"hello");
    let (iss, conn_id) = passive_to_request(&mut fw, &req);
    let (s, pd) = cmd(&mut fw, Command::GetEventData { conn_id });
    assert_eq!((s, pd.as_slice()), (MboxStatus::Ok, &b"hello"[..]));
    assert_eq!(
        cmd(
            &mut fw,
            Command::Reject {
                conn_id,
                private_data: b"no"
            }
        )
        .0,
        MboxStatus::Ok
    );
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out[0].payload, mpa_frame(true, 0x20, 1, b"no"));
    assert_eq!((out[1].ctl, out[1].seq), (TcpControl::Fin, iss + 1 + 22));
    // Initiator gets a reject.
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    fw.hal.now = 5;
    cmd(
        &mut fw,
        Command::RouteUpdate {
            ip: PEER_IP,
            mac: PEER_MAC,
        },
    );
    cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: PEER_IP,
            peer_port: LPORT,
            local_port: 3333,
            ird: 1,
            ord: 1,
            mpa: mpa_opts(1, true),
            private_data: &[],
        },
    );
    let syn = sent_tcp(&mut fw.hal).pop().unwrap();
    assert_eq!(
        syn.ctl,
        TcpControl::Syn,
        "ARP known from the route update: SYN at once"
    );
    rx(
        &mut fw,
        Seg::new(LPORT, 3333, TcpControl::Syn, 9, Some(syn.seq + 1)).frame(),
    );
    let req = sent_tcp(&mut fw.hal)
        .into_iter()
        .find(|o| !o.payload.is_empty())
        .unwrap();
    assert_eq!(req.payload, mpa_frame(false, 0x40, 1, &[]));
    let mut r = Seg::new(LPORT, 3333, TcpControl::Psh, 10, Some(syn.seq + 21));
    r.payload = mpa_frame(true, 0x60, 1, b"busy");
    rx(&mut fw, r.frame());
    let ev = fw.hal.events.pop().unwrap();
    assert_eq!(
        (ev.kind, ev.handle, ev.private_data_len),
        (EventKind::Rejected, qpn, 4)
    );
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Idle);
    assert!(sent_tcp(&mut fw.hal)
        .iter()
        .any(|o| o.ctl == TcpControl::Fin));
}

#[test]
fn timeouts_syn_arp_and_mpa() {
    // No ARP answer.
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: PEER_IP,
            peer_port: LPORT,
            local_port: 0,
            ird: 1,
            ord: 1,
            mpa: mpa_opts(2, false),
            private_data: &[],
        },
    );
    for _ in 0..20 {
        fw.hal.now += S;
        fw.poll();
    }
    assert_eq!(fw.hal.events.pop().unwrap().kind, EventKind::Unreachable);
    assert_eq!(fw.conn_count(), 0);
    assert_eq!(fw.qps().get(qpn).unwrap().conn, None);
    // Off-subnet without gateway: at once.
    fw.hal.cfg.gateway = 0;
    fw.reload_config();
    let (s, _) = cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: 0x0808_0808,
            peer_port: 1,
            local_port: 0,
            ird: 1,
            ord: 1,
            mpa: mpa_opts(2, false),
            private_data: &[],
        },
    );
    assert_eq!(s, MboxStatus::Unreachable);

    // SYN never answered.
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    cmd(
        &mut fw,
        Command::RouteUpdate {
            ip: PEER_IP,
            mac: PEER_MAC,
        },
    );
    cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: PEER_IP,
            peer_port: LPORT,
            local_port: 0,
            ird: 1,
            ord: 1,
            mpa: mpa_opts(2, false),
            private_data: &[],
        },
    );
    let mut syns = 0;
    for _ in 0..200 {
        fw.hal.now += S;
        fw.poll();
        syns += sent_tcp(&mut fw.hal)
            .iter()
            .filter(|o| o.ctl == TcpControl::Syn)
            .count();
    }
    assert_eq!(syns, 1 + 5);
    assert_eq!(fw.hal.events.pop().unwrap().kind, EventKind::Unreachable);
    assert_eq!(fw.conn_count(), 0);

    // No MPA request from the peer: the responder gives up with a RST.
    let mut fw = new_fw();
    cmd(
        &mut fw,
        Command::Listen {
            port: LPORT,
            backlog: 1,
        },
    );
    rx(
        &mut fw,
        Seg::new(PPORT, LPORT, TcpControl::Syn, 1, None).frame(),
    );
    let sa = sent_tcp(&mut fw.hal).pop().unwrap();
    rx(
        &mut fw,
        Seg::new(PPORT, LPORT, TcpControl::None, 2, Some(sa.seq + 1)).frame(),
    );
    assert_eq!(fw.conn_count(), 1);
    fw.hal.now += 11 * S;
    fw.poll();
    assert_eq!(sent_tcp(&mut fw.hal).pop().unwrap().ctl, TcpControl::Rst);
    assert_eq!(fw.conn_count(), 0);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Free);
}

#[test]
fn mailbox_rejects_bad_input() {
    let mut fw = new_fw();
    let mut out = [0u8; 512];
    assert_eq!(fw.execute(0x7777, &[], &mut out).0, MboxStatus::BadOpcode);
    assert_eq!(
        fw.execute(0x07, &[1, 2, 3], &mut out).0,
        MboxStatus::BadParam
    );
    assert_eq!(
        cmd(&mut fw, Command::QueryQp { qpn: 99 }).0,
        MboxStatus::NotFound
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::CreateCq {
                ring: 0x1000,
                entries: 3
            }
        )
        .0,
        MboxStatus::BadParam
    );
    let qpn = make_qp(&mut fw);
    assert_eq!(
        cmd(&mut fw, Command::DestroyCq { cqn: 0 }).0,
        MboxStatus::Busy
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::Listen {
                port: 80,
                backlog: 1
            }
        )
        .0,
        MboxStatus::Ok
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::Listen {
                port: 80,
                backlog: 1
            }
        )
        .0,
        MboxStatus::Busy
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::Accept {
                conn_id: 12345,
                qpn,
                ird: 1,
                ord: 1,
                private_data: &[]
            }
        )
        .0,
        MboxStatus::NotFound
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::Disconnect {
                qpn,
                abortive: false
            }
        )
        .0,
        MboxStatus::BadState
    );
    // Memory registration round.
    let (s, r) = cmd(&mut fw, Command::AllocStag { pd: 1, npages: 2 });
    assert_eq!(s, MboxStatus::Ok);
    let stag = word(&r, 0);
    let addrs: Vec<u8> = [0x1000u64, 0x5000]
        .iter()
        .flat_map(|a| a.to_le_bytes())
        .collect();
    assert_eq!(
        cmd(
            &mut fw,
            Command::WritePbl {
                stag,
                offset: 1,
                addrs: &addrs
            }
        )
        .0,
        MboxStatus::BadParam
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::WritePbl {
                stag,
                offset: 0,
                addrs: &addrs
            }
        )
        .0,
        MboxStatus::Ok
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::RegMr {
                stag,
                pd: 1,
                access: 7,
                page_shift: 12,
                va: 0x100,
                length: 8192 - 0x100
            }
        )
        .0,
        MboxStatus::Ok
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::RegMr {
                stag,
                pd: 1,
                access: 7,
                page_shift: 12,
                va: 0x100,
                length: 8192 - 0x100
            }
        )
        .0,
        MboxStatus::BadState
    );
    assert_eq!(cmd(&mut fw, Command::DeregMr { stag }).0, MboxStatus::Ok);
    assert_eq!(
        cmd(&mut fw, Command::DeregMr { stag }).0,
        MboxStatus::NotFound
    );
    assert_eq!(cmd(&mut fw, Command::DestroyQp { qpn }).0, MboxStatus::Ok);
    assert_eq!(
        cmd(&mut fw, Command::DestroyCq { cqn: 0 }).0,
        MboxStatus::Ok
    );
}

/// Sets the fast path's send state (and optionally the MPA flags) in the
/// mock's connection context 0, as the device would have left it.
fn device_sent(fw: &mut Fw, snd_una: u32, snd_nxt: u32, mpa_flags: Option<u8>, marker_ref: u32) {
    let mut c = fw.hal.conn(0).unwrap();
    c.snd_una = snd_una;
    c.snd_nxt = snd_nxt;
    if let Some(f) = mpa_flags {
        c.mpa_flags = f;
    }
    c.tx_marker_ref = marker_ref;
    let mut b = [0u8; 64];
    c.emit(&mut b).unwrap();
    fw.hal.tables.insert((TableId::Conn as u8, 0), b.to_vec());
}

/// The Terminate a host-requested Modify QP → Terminate must put on the
/// wire, parsed with rnic-wire (MPA CRC checked when `crc`).
fn parse_terminate(fpdu: &[u8], crc: bool) -> rnic_wire::rdmap::RdmapRepr<'_> {
    use rnic_wire::mpa::{Fpdu, FpduRepr};
    let f = Fpdu::new_checked(fpdu).expect("an FPDU");
    assert_eq!(f.total_len(), fpdu.len(), "one whole FPDU in the segment");
    let repr = FpduRepr::parse(&f, crc).expect("good MPA CRC");
    rnic_wire::rdmap::RdmapRepr::from_bytes(repr.ulpdu).expect("an RDMAP message")
}

#[test]
fn host_terminate_sends_terminate_then_fin_after_device_data() {
    use rnic_wire::abi::context::{MPA_CRC_RX, MPA_CRC_TX};
    use rnic_wire::rdmap::RdmapRepr;
    use rnic_wire::terminate::{RdmapError, TerminateCause};
    let mut fw = new_fw();
    let (qpn, rcv, snd) = passive_rdma(&mut fw);
    fw.hal.events.clear();
    let _ = sent_tcp(&mut fw.hal);
    // The device has sent 3000 octets, 1000 of them acknowledged.
    device_sent(
        &mut fw,
        snd + 1000,
        snd + 3000,
        Some(MPA_CRC_TX | MPA_CRC_RX),
        snd,
    );
    let st = cmd(
        &mut fw,
        Command::ModifyQp {
            qpn,
            state: QpState::Terminate,
        },
    )
    .0;
    assert_eq!(st, MboxStatus::Ok);
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Terminate);
    assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Firmware);
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(
        out.len(),
        2,
        "the Terminate, then the FIN: {:?}",
        out.iter().map(|o| o.ctl).collect::<Vec<_>>()
    );
    // After the device's octets, never over them.
    assert_eq!(out[0].seq, snd + 3000);
    assert_eq!(out[0].ack, Some(rcv));
    match parse_terminate(&out[0].payload, true) {
        RdmapRepr::Terminate { msn, terminate } => {
            assert_eq!(msn, 1);
            assert_eq!(
                terminate.cause,
                TerminateCause::Rdmap(RdmapError::LocalCatastrophic { code: 0xFF })
            );
            assert!(terminate.ddp.is_none() && terminate.rdma.is_none());
        }
        other => panic!("not a Terminate: {other:?}"),
    }
    let fin_seq = snd + 3000 + out[0].payload.len() as u32;
    assert_eq!((out[1].ctl, out[1].seq), (TcpControl::Fin, fin_seq));
    // A retransmission timeout resends the Terminate, not the device's octets.
    fw.hal.now += 2 * S;
    fw.poll();
    let again = sent_tcp(&mut fw.hal);
    assert!(!again.is_empty(), "retransmitted");
    assert!(
        again.iter().all(|o| o.seq >= snd + 3000),
        "nothing resent from the device's range"
    );
    assert_eq!(again[0].payload, out[0].payload);
    // The peer acknowledges everything, FIN included, and closes too.
    let mut f = Seg::new(PPORT, LPORT, TcpControl::Fin, rcv, Some(fin_seq + 1));
    f.payload = vec![];
    rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, f.frame());
    let acks = sent_tcp(&mut fw.hal);
    assert!(
        acks.iter().any(|o| o.ack == Some(rcv + 1)),
        "FIN acknowledged"
    );
    fw.hal.now += 10 * S;
    fw.poll();
    assert_eq!(fw.hal.qp(qpn).unwrap().state, QpState::Error);
}

#[test]
fn host_terminate_with_markers_places_them_from_the_stream_reference() {
    use rnic_wire::abi::context::{MPA_CRC_RX, MPA_CRC_TX, MPA_MARKERS_TX};
    use rnic_wire::mpa::strip_fpdu_with_markers;
    use rnic_wire::rdmap::RdmapRepr;
    let mut fw = new_fw();
    let (qpn, _rcv, snd) = passive_rdma(&mut fw);
    let _ = sent_tcp(&mut fw.hal);
    // Marker reference 500 octets before the next send position: a marker
    // falls 12 octets into the Terminate FPDU (RFC 5044 §4.3).
    let at = snd + 4000;
    device_sent(
        &mut fw,
        at,
        at,
        Some(MPA_CRC_TX | MPA_CRC_RX | MPA_MARKERS_TX),
        at - 500,
    );
    assert_eq!(
        cmd(
            &mut fw,
            Command::ModifyQp {
                qpn,
                state: QpState::Terminate
            }
        )
        .0,
        MboxStatus::Ok
    );
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out[0].seq, at);
    let mut plain = [0u8; 128];
    let (used, n) = strip_fpdu_with_markers(&out[0].payload, true, at - 500, at, &mut plain)
        .expect("markers and CRC check");
    assert_eq!(used, out[0].payload.len());
    assert_eq!(out[0].payload.len(), n + 4, "one marker inside");
    // The CRC covers the markers (RFC 5044 §4.4) and was checked by the strip.
    assert!(matches!(
        parse_terminate(&plain[..n], false),
        RdmapRepr::Terminate { .. }
    ));
}

#[test]
fn host_terminate_before_rdma_mode_aborts() {
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    let req = mpa_frame(false, 0x50, 2, &[0x80, 0x01, 0xc0, 0x01]);
    let (_iss, conn_id) = passive_to_request(&mut fw, &req);
    let st = cmd(
        &mut fw,
        Command::Accept {
            conn_id,
            qpn,
            ird: 1,
            ord: 1,
            private_data: b"",
        },
    )
    .0;
    assert_eq!(st, MboxStatus::Ok);
    let _ = sent_tcp(&mut fw.hal);
    // The Reply is not acknowledged yet: the QP is not in RTS, so Terminate
    // is a plain state change request the QP table refuses or takes; no
    // Terminate FPDU may appear on a stream that is not in RDMA mode.
    let _ = cmd(
        &mut fw,
        Command::ModifyQp {
            qpn,
            state: QpState::Terminate,
        },
    );
    for o in sent_tcp(&mut fw.hal) {
        assert!(
            o.payload.is_empty(),
            "no FPDU before RDMA mode: {:?}",
            o.payload
        );
    }
}

/// A RST answering our SYN (nothing listens there, or a filter denies it) is
/// a refusal, told apart from a lost connection (RFC 9293 §3.10.7.3).
#[test]
fn rst_in_syn_sent_is_refused() {
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    cmd(
        &mut fw,
        Command::RouteUpdate {
            ip: PEER_IP,
            mac: PEER_MAC,
        },
    );
    let (s, _) = cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: PEER_IP,
            peer_port: LPORT,
            local_port: 0,
            ird: 1,
            ord: 1,
            mpa: mpa_opts(2, false),
            private_data: &[],
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    fw.poll();
    let syn = sent_tcp(&mut fw.hal).pop().expect("SYN sent");
    assert_eq!(syn.ctl, TcpControl::Syn);
    // A RST whose ACK does not acknowledge our SYN is not acceptable in
    // SYN-SENT and is ignored.
    rx(
        &mut fw,
        Seg::new(LPORT, syn.src_port, TcpControl::Rst, 0, Some(syn.seq)).frame(),
    );
    assert!(fw.hal.events.is_empty(), "{:?}", fw.hal.events);
    rx(
        &mut fw,
        Seg::new(
            LPORT,
            syn.src_port,
            TcpControl::Rst,
            0,
            Some(syn.seq.wrapping_add(1)),
        )
        .frame(),
    );
    assert_eq!(fw.hal.events.pop().unwrap().kind, EventKind::Refused);
    assert_eq!(fw.conn_count(), 0);
    // Never connected: the QP stays Idle and may connect again.
    assert_eq!(fw.qps().get(qpn).unwrap().state, QpState::Idle);
    assert_eq!(fw.qps().get(qpn).unwrap().conn, None);
}

/// A device that cannot take the FPDU that came with the MPA frame back
/// into its receive pipeline (`inject_rx` answers `Full`) loses nothing:
/// the firmware does not acknowledge those octets, the fast path waits at
/// their first octet, and an out-of-order segment after them draws a
/// duplicate ACK, so the peer resends them (RFC 9293 §3.10.7.4, RFC 5681
/// §3.2) and the fast path takes the resent copy in order.
#[test]
fn fpdu_with_the_mpa_frame_is_not_acked_when_inject_is_full() {
    let mut fw = new_fw();
    fw.hal.inject_full = true;
    let (_qpn, rcv, snd) = passive_rdma(&mut fw);
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!((ctx.mode, ctx.rcv_nxt), (ConnMode::Rdma, rcv));
    assert!(fw.hal.injected.is_empty());
    assert!(
        sent_tcp(&mut fw.hal)
            .iter()
            .all(|o| o.ack.is_none_or(|a| a == rcv)),
        "nothing past the MPA frame acknowledged"
    );
    // The next FPDU arrives out of order (the fast path hands it over).
    let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, rcv + 20, Some(snd));
    d.payload = vec![0; 20];
    rx_as(&mut fw, ExceptionReason::OutOfWindow, 0, d.frame());
    let out = sent_tcp(&mut fw.hal);
    assert!(
        out.iter()
            .any(|o| o.ctl == TcpControl::None && o.ack == Some(rcv)),
        "duplicate ACK for the missing octets: {out:?}"
    );
    assert_eq!(fw.hal.conn(0).unwrap().rcv_nxt, rcv);
}

/// The peer's first FPDU right behind its pure ACK of the MPA Reply: the
/// ACK moves the connection to RDMA mode, but the FPDU was classified
/// before the context was written (exception `FirmwareMode`). The firmware
/// hands it back to the fast path (`inject_rx`) unchanged instead of
/// dropping it; a device that cannot take it leaves it unacknowledged for
/// the peer to resend.
#[test]
fn fpdu_classified_before_rdma_mode_goes_back_to_the_fast_path() {
    for full in [false, true] {
        let mut fw = new_fw();
        fw.hal.inject_full = full;
        // the pure ACK of the Reply: RDMA mode
        let (rcv, snd) = accept_then_ack_reply(&mut fw, 1460);
        // the FPDU behind it, still classified for the firmware
        let fpdu = vec![
            0, 14, 0xC0, 0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0,
        ];
        let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, rcv, Some(snd));
        d.payload = fpdu.clone();
        rx_as(&mut fw, ExceptionReason::FirmwareMode, 0, d.frame());
        let out = sent_tcp(&mut fw.hal);
        assert!(
            out.iter().all(|o| o.ack.is_none_or(|a| a == rcv)),
            "nothing past the FPDU's start acknowledged by the firmware: {out:?}"
        );
        if full {
            assert!(fw.hal.injected.is_empty());
        } else {
            assert_eq!(fw.hal.injected.len(), 1, "handed back once");
            let back = parse_tcp(&fw.hal.injected[0]).expect("a TCP frame");
            assert_eq!((back.seq, back.payload.clone()), (rcv, fpdu));
            assert_eq!((back.src_port, back.dst_port), (PPORT, LPORT));
        }
        assert_eq!(
            fw.hal.conn(0).unwrap().rcv_nxt,
            rcv,
            "the fast path places it"
        );
    }
}

/// A device reset (exception `DeviceReset`, which the port shows once the
/// device is clean) makes the firmware forget its connections, QPs and
/// listeners: the same QP number and port can be used again, and nothing
/// is sent for the forgotten connection.
#[test]
fn device_reset_forgets_everything() {
    let mut fw = new_fw();
    let (_qpn, _conn, _cq) = passive_rdma(&mut fw);
    assert_eq!(fw.conn_count(), 1);
    assert_eq!(fw.qps().iter().count(), 1);
    fw.hal.take_sent();
    // the device cleared its tables before it showed the notice
    fw.hal.tables.clear();
    fw.hal
        .push_rx(ExceptionReason::DeviceReset, None, Vec::new());
    fw.poll();
    assert_eq!(fw.conn_count(), 0);
    assert_eq!(fw.qps().iter().count(), 0);
    assert!(fw.listeners().is_empty());
    assert_eq!(fw.stats().device_resets, 1);
    assert!(
        fw.hal.take_sent().is_empty(),
        "nothing sent for the old state"
    );
    // a fresh start works: the same connection set up again
    let (_qpn2, _conn2, _cq2) = passive_rdma(&mut fw);
    assert_eq!(fw.conn_count(), 1);
}

/// `SetRetx` sets the RDMA-mode retransmission timer (RFC 6298 §2.1, §2.4,
/// §2.5); out-of-order RTOs, a zero floor and no retries are refused and
/// change nothing.
#[test]
fn set_retx_sets_the_timer_and_refuses_bad_ones() {
    let mut fw = new_fw();
    let before = fw.config.rdma_retx;
    let set = |init, min, max, retries| Command::SetRetx {
        rto_init_us: init,
        rto_min_us: min,
        rto_max_us: max,
        max_retries: retries,
    };
    for bad in [
        set(100, 200, 1000, 3),
        set(300, 200, 250, 3),
        set(100, 0, 1000, 3),
        set(300, 200, 1000, 0),
    ] {
        assert_eq!(cmd(&mut fw, bad).0, MboxStatus::BadParam, "{bad:?}");
        assert_eq!(fw.config.rdma_retx, before);
    }
    assert_eq!(cmd(&mut fw, set(300, 200, 1000, 3)).0, MboxStatus::Ok);
    let r = fw.config.rdma_retx;
    assert_eq!(
        (r.rto, r.rto_min, r.rto_max, r.max_retries),
        (300, 200, 1000, 3)
    );
}
