//! Replays the MPA exchanges of the Linux siw captures
//! (`testdata/captures/`) against the firmware, as responder and as
//! initiator.
mod common;
#[path = "../../testdata/support.rs"]
mod support;
use common::*;
use pcap_file::pcap::PcapReader;
use rnic_wire::abi::context::{ConnMode, RtrKind, MPA_CRC_RX, MPA_CRC_TX};
use rnic_wire::abi::mailbox::{Command, EventKind, MboxStatus, MpaOptions, QpState};
use rnic_wire::net::*;
use smoltcp::phy::ChecksumCapabilities;

struct CapSeg {
    src_ip: u32,
    src_port: u16,
    dst_port: u16,
    syn: bool,
    seq: u32,
    frame: Vec<u8>,
    payload: Vec<u8>,
}

fn read(name: &str) -> Vec<CapSeg> {
    let f = std::fs::File::open(support::capture(name)).expect("open capture");
    let mut r = PcapReader::new(f).expect("pcap header");
    let mut v = vec![];
    while let Some(p) = r.next_packet() {
        let p = p.expect("pcap record");
        let d = p.data.to_vec();
        let Ok(eth) = EthernetFrame::new_checked(&d[..]) else {
            continue;
        };
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            continue;
        }
        let Ok(ip) = Ipv4Packet::new_checked(eth.payload()) else {
            continue;
        };
        if ip.next_header() != IpProtocol::Tcp {
            continue;
        }
        let caps = ChecksumCapabilities::ignored();
        let ipr = Ipv4Repr::parse(&ip, &caps).unwrap();
        let tp = TcpPacket::new_checked(ip.payload()).unwrap();
        let t = TcpRepr::parse(
            &tp,
            &IpAddress::Ipv4(ipr.src_addr),
            &IpAddress::Ipv4(ipr.dst_addr),
            &caps,
        )
        .unwrap();
        v.push(CapSeg {
            src_ip: u32::from(ipr.src_addr),
            src_port: t.src_port,
            dst_port: t.dst_port,
            syn: t.control == TcpControl::Syn && t.ack_number.is_none(),
            seq: t.seq_number.0 as u32,
            frame: d.clone(),
            payload: t.payload.to_vec(),
        });
    }
    v
}

struct Exchange {
    syn: CapSeg,
    request: CapSeg,
    reply: Vec<u8>,
    /// The client's first FPDU octets after its Request (siw sends one
    /// FPDU per segment): the RTR in the peer-to-peer capture.
    client_first: Vec<u8>,
}

fn exchange(name: &str) -> Exchange {
    let mut segs = read(name);
    let qi = segs
        .iter()
        .position(|s| s.payload.starts_with(b"MPA ID Req Frame"))
        .expect("request in capture");
    let rep = segs
        .iter()
        .find(|s| s.payload.starts_with(b"MPA ID Rep Frame"))
        .expect("reply in capture")
        .payload
        .clone();
    let request = segs.remove(qi);
    let client_first = segs[qi..]
        .iter()
        .find(|s| s.src_port == request.src_port && !s.payload.is_empty())
        .expect("the client's first FPDU")
        .payload
        .clone();
    let si = segs
        .iter()
        .position(|s| s.syn && s.src_port == request.src_port && s.dst_port == request.dst_port)
        .expect("SYN in capture");
    let syn = segs.remove(si);
    Exchange {
        syn,
        request,
        reply: rep,
        client_first,
    }
}

fn replay_responder(name: &str, p2p_rtr: Option<RtrKind>) {
    let x = exchange(name);
    assert_eq!(x.request.src_ip, PEER_IP, "capture client is 10.0.0.2");
    let mut fw = new_fw();
    let qpn = make_qp(&mut fw);
    cmd(
        &mut fw,
        Command::Listen {
            port: x.request.dst_port,
            backlog: 4,
        },
    );
    // Linux's real SYN: MSS, SACK, timestamps, window scale 7.
    rx(&mut fw, x.syn.frame.clone());
    let sa = sent_tcp(&mut fw.hal).pop().expect("SYN-ACK to siw's SYN");
    assert_eq!(
        (sa.ctl, sa.ack, sa.ws, sa.ts, sa.sack),
        (TcpControl::Syn, Some(x.syn.seq + 1), Some(7), false, false)
    );
    let mut ack = Seg::new(
        x.syn.src_port,
        x.syn.dst_port,
        TcpControl::None,
        x.syn.seq + 1,
        Some(sa.seq + 1),
    );
    rx(&mut fw, ack.frame());
    ack.ctl = TcpControl::Psh;
    ack.payload = x.request.payload.clone();
    rx(&mut fw, ack.frame());
    let ev = fw.hal.events.pop().expect("ConnectRequest");
    assert_eq!(
        (ev.kind, ev.mpa_revision, ev.ird, ev.ord),
        (EventKind::ConnectRequest, 2, 1, 1)
    );
    let (s, _) = cmd(
        &mut fw,
        Command::Accept {
            conn_id: ev.handle,
            qpn,
            ird: 1,
            ord: 1,
            private_data: &[],
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    let reply = sent_tcp(&mut fw.hal).pop().unwrap();
    assert_eq!(
        reply.payload, x.reply,
        "our Reply is siw's Reply, octet for octet"
    );
    let mut fp = Seg::new(
        x.syn.src_port,
        x.syn.dst_port,
        TcpControl::Psh,
        x.syn.seq + 1 + x.request.payload.len() as u32,
        Some(sa.seq + 1 + reply.payload.len() as u32),
    );
    fp.payload = x.client_first.clone();
    rx(&mut fw, fp.frame());
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(ctx.mode, ConnMode::Rdma);
    if p2p_rtr.is_some() {
        // siw's RTR is taken by the firmware (RFC 6581 §3.2)...
        assert!(fw.hal.injected.is_empty(), "the RTR is not handed on");
        assert_eq!(ctx.rcv_nxt, fp.seq + x.client_first.len() as u32);
    } else {
        // ...any other first FPDU goes to the fast path.
        assert_eq!(fw.hal.injected.len(), 1);
        assert_eq!(ctx.rcv_nxt, fp.seq);
    }
    let q = fw.hal.qp(qpn).unwrap();
    assert_eq!(q.state, QpState::Rts);
    assert_eq!(q.rtr, p2p_rtr.unwrap_or(RtrKind::None));
    assert_eq!(
        ctx.mpa_flags & (MPA_CRC_TX | MPA_CRC_RX) != 0,
        x.request.payload[16] & 0x40 != 0
    );
}

fn replay_initiator(name: &str, crc: bool, rtr: RtrKind) {
    let x = exchange(name);
    let mut fw = new_fw();
    // We are the capture's client, 10.0.0.2, talking to 10.0.0.1.
    fw.hal.cfg.ip = PEER_IP;
    fw.reload_config();
    let qpn = make_qp(&mut fw);
    cmd(
        &mut fw,
        Command::RouteUpdate {
            ip: OUR_IP,
            mac: PEER_MAC,
        },
    );
    let (s, _) = cmd(
        &mut fw,
        Command::Connect {
            qpn,
            peer_ip: OUR_IP,
            peer_port: x.request.dst_port,
            local_port: x.request.src_port,
            ird: 1,
            ord: 1,
            mpa: MpaOptions {
                revision: 2,
                crc,
                markers: false,
            },
            private_data: &[],
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    let syn = sent_tcp(&mut fw.hal).pop().unwrap();
    let server_isn = 777;
    let mut sa = Seg::new(
        x.request.dst_port,
        x.request.src_port,
        TcpControl::Syn,
        server_isn,
        Some(syn.seq + 1),
    );
    sa.src_ip = OUR_IP;
    sa.dst_ip = PEER_IP;
    sa.mss = Some(1460);
    sa.ws = Some(7);
    sa.sack = true;
    sa.ts = true;
    rx(&mut fw, sa.frame());
    let req = sent_tcp(&mut fw.hal)
        .into_iter()
        .find(|o| !o.payload.is_empty())
        .expect("our Request");
    // Same header as siw's Request: key, flags, revision.
    assert_eq!(req.payload[..18], x.request.payload[..18]);
    let mut rep = Seg::new(
        x.request.dst_port,
        x.request.src_port,
        TcpControl::Psh,
        server_isn + 1,
        Some(syn.seq + 1 + req.payload.len() as u32),
    );
    rep.src_ip = OUR_IP;
    rep.dst_ip = PEER_IP;
    rep.payload = x.reply.clone();
    rx(&mut fw, rep.frame());
    if rtr != RtrKind::None {
        // Our first FPDU is the RTR, octet for octet siw's in the capture.
        let ours = sent_tcp(&mut fw.hal)
            .into_iter()
            .find(|o| !o.payload.is_empty())
            .expect("our RTR");
        assert_eq!(ours.payload, x.client_first, "our RTR is siw's RTR");
        assert_eq!(fw.hal.conn(0).unwrap().mode, ConnMode::Firmware);
        let mut ack = Seg::new(
            x.request.dst_port,
            x.request.src_port,
            TcpControl::None,
            server_isn + 1 + x.reply.len() as u32,
            Some(ours.seq + ours.payload.len() as u32),
        );
        ack.src_ip = OUR_IP;
        ack.dst_ip = PEER_IP;
        rx(&mut fw, ack.frame());
    }
    let ev = fw.hal.events.pop().expect("Established");
    assert_eq!(
        (ev.kind, ev.crc, ev.ird, ev.ord),
        (EventKind::Established, crc, 1, 1)
    );
    let q = fw.hal.qp(qpn).unwrap();
    assert_eq!((q.state, q.rtr), (QpState::Rts, rtr));
    let ctx = fw.hal.conn(0).unwrap();
    assert_eq!(
        (ctx.mode, ctx.rcv_nxt),
        (ConnMode::Rdma, server_isn + 1 + x.reply.len() as u32)
    );
}

#[test]
fn siw_default_as_responder() {
    replay_responder("siw-rping-default.pcap", None);
}

#[test]
fn siw_crc_p2p_as_responder() {
    replay_responder("siw-rping-crc-p2p.pcap", Some(RtrKind::Write));
}

#[test]
fn siw_default_as_initiator() {
    replay_initiator("siw-rping-default.pcap", false, RtrKind::None);
}

#[test]
fn siw_crc_p2p_as_initiator() {
    replay_initiator("siw-rping-crc-p2p.pcap", true, RtrKind::Write);
}
