//! A scripted `Hal` for host tests: tables in maps, queues in vectors, and
//! helpers that build peer frames with smoltcp (independently of the
//! firmware's own frame code).
#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::vec::Vec;

use rnic_fw::hal::{Exception, Hal, HalError, IfConfig, TermRequest};
use rnic_wire::abi::context::{ConnContext, ExceptionReason, QpContext, TableId};
use rnic_wire::abi::mailbox::{Event, MboxStatus};
use rnic_wire::net::*;
use smoltcp::phy::ChecksumCapabilities;

pub const OUR_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
pub const PEER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
pub const GW_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xFE];
pub const OUR_IP: u32 = 0x0A00_0001; // 10.0.0.1
pub const PEER_IP: u32 = 0x0A00_0002; // 10.0.0.2
pub const GW_IP: u32 = 0x0A00_00FE; // 10.0.0.254

pub fn cfg() -> IfConfig {
    IfConfig {
        mac: OUR_MAC,
        ip: OUR_IP,
        netmask: 0xFFFF_FF00,
        gateway: GW_IP,
        mtu: 1500,
    }
}

#[derive(Default)]
pub struct MockHal {
    pub cfg: IfConfig,
    pub now: u64,
    pub tables: HashMap<(u8, u32), Vec<u8>>,
    pub writes: Vec<(TableId, u32, Vec<u8>)>,
    pub table_len: u32,
    pub exceptions: VecDeque<(ExceptionReason, Option<u32>, Vec<u8>)>,
    pub sent: Vec<Vec<u8>>,
    pub injected: Vec<Vec<u8>>,
    /// `inject_rx` answers `Full` (a device without RX_INJECT).
    pub inject_full: bool,
    pub mbox: Option<(u16, Vec<u8>)>,
    pub done: Vec<(MboxStatus, Vec<u8>)>,
    pub events: Vec<Event>,
    pub flushed: Vec<u32>,
    /// The device's Terminate requests, taken by `pop_terminate`.
    pub terms: VecDeque<TermRequest>,
    /// Connections `retransmit` was asked to replay, with the time.
    pub retx: Vec<(u32, u64)>,
    /// `retransmit` answers `Unsupported` (a device without `RETX_CONN`).
    pub retx_unsupported: bool,
    /// `retransmit` answers `Full` (a replay running) this many more times.
    pub retx_busy: u32,
}

impl MockHal {
    pub fn new() -> Self {
        MockHal {
            cfg: cfg(),
            now: 1_000_000,
            table_len: 64,
            ..Default::default()
        }
    }
    pub fn take_sent(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.sent)
    }
    pub fn conn(&self, i: u32) -> Option<ConnContext> {
        self.tables
            .get(&(TableId::Conn as u8, i))
            .map(|b| ConnContext::parse(b).unwrap())
    }
    pub fn qp(&self, i: u32) -> Option<QpContext> {
        self.tables
            .get(&(TableId::Qp as u8, i))
            .map(|b| QpContext::parse(b).unwrap())
    }
    pub fn push_rx(&mut self, reason: ExceptionReason, conn: Option<u32>, frame: Vec<u8>) {
        self.exceptions.push_back((reason, conn, frame));
    }
}

impl Hal for MockHal {
    fn config(&mut self) -> IfConfig {
        self.cfg
    }
    fn now_us(&mut self) -> u64 {
        self.now
    }
    fn read_table(
        &mut self,
        t: TableId,
        index: u32,
        buf: &mut [u8],
    ) -> core::result::Result<(), HalError> {
        if index >= self.table_len {
            return Err(HalError::BadIndex);
        }
        if buf.len() != t.entry_size() {
            return Err(HalError::BadLength);
        }
        match self.tables.get(&(t as u8, index)) {
            Some(b) => buf.copy_from_slice(b),
            None => {
                buf.fill(0);
                if t == TableId::Conn {
                    ConnContext::FREE.emit(buf).unwrap();
                }
            }
        }
        Ok(())
    }
    fn write_table(
        &mut self,
        t: TableId,
        index: u32,
        data: &[u8],
    ) -> core::result::Result<(), HalError> {
        if index >= self.table_len {
            return Err(HalError::BadIndex);
        }
        if data.len() != t.entry_size() {
            return Err(HalError::BadLength);
        }
        self.tables.insert((t as u8, index), data.to_vec());
        self.writes.push((t, index, data.to_vec()));
        Ok(())
    }
    fn recv_exception(&mut self, buf: &mut [u8]) -> Option<Exception> {
        let (reason, conn, f) = self.exceptions.pop_front()?;
        let n = f.len().min(buf.len());
        buf[..n].copy_from_slice(&f[..n]);
        Some(Exception {
            reason,
            conn,
            len: n,
            frame_len: f.len(),
        })
    }
    fn send_frame(&mut self, frame: &[u8]) -> core::result::Result<(), HalError> {
        self.sent.push(frame.to_vec());
        Ok(())
    }
    fn inject_rx(&mut self, frame: &[u8]) -> core::result::Result<(), HalError> {
        if self.inject_full {
            return Err(HalError::Full);
        }
        self.injected.push(frame.to_vec());
        Ok(())
    }
    fn mailbox_poll(&mut self, buf: &mut [u8]) -> Option<(u16, usize)> {
        let (op, d) = self.mbox.take()?;
        let n = d.len().min(buf.len());
        buf[..n].copy_from_slice(&d[..n]);
        Some((op, n))
    }
    fn mailbox_done(&mut self, status: MboxStatus, result: &[u8]) {
        self.done.push((status, result.to_vec()));
    }
    fn post_event(&mut self, event: &Event) -> core::result::Result<(), HalError> {
        self.events.push(*event);
        Ok(())
    }
    fn flush_qp(&mut self, qpn: u32) -> core::result::Result<(), HalError> {
        self.flushed.push(qpn);
        Ok(())
    }
    fn pop_terminate(&mut self) -> Option<TermRequest> {
        self.terms.pop_front()
    }
    fn retransmit(&mut self, conn: u32) -> core::result::Result<(), HalError> {
        if self.retx_unsupported {
            return Err(HalError::Unsupported);
        }
        if self.retx_busy > 0 {
            self.retx_busy -= 1;
            return Err(HalError::Full);
        }
        self.retx.push((conn, self.now));
        Ok(())
    }
}

// ---- peer-side frame helpers (smoltcp directly) ----

pub fn ip(v: u32) -> Ipv4Address {
    Ipv4Address::from(v)
}

pub fn arp_frame(
    op: ArpOperation,
    smac: [u8; 6],
    sip: u32,
    tmac: [u8; 6],
    tip: u32,
    dst: [u8; 6],
) -> Vec<u8> {
    let repr = ArpRepr::EthernetIpv4 {
        operation: op,
        source_hardware_addr: EthernetAddress(smac),
        source_protocol_addr: ip(sip),
        target_hardware_addr: EthernetAddress(tmac),
        target_protocol_addr: ip(tip),
    };
    let mut b = vec![0u8; 14 + repr.buffer_len()];
    EthernetRepr {
        src_addr: EthernetAddress(smac),
        dst_addr: EthernetAddress(dst),
        ethertype: EthernetProtocol::Arp,
    }
    .emit(&mut EthernetFrame::new_unchecked(&mut b[..]));
    repr.emit(&mut ArpPacket::new_unchecked(&mut b[14..]));
    b
}

pub fn parse_arp(f: &[u8]) -> Option<(EthernetAddress, ArpRepr)> {
    let eth = EthernetFrame::new_checked(f).ok()?;
    if eth.ethertype() != EthernetProtocol::Arp {
        return None;
    }
    let r = ArpRepr::parse(&ArpPacket::new_checked(eth.payload()).ok()?).ok()?;
    Some((eth.dst_addr(), r))
}

/// A TCP segment as the peer sends it.
#[derive(Clone, Debug)]
pub struct Seg {
    pub src_ip: u32,
    pub dst_ip: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub ctl: TcpControl,
    pub seq: u32,
    pub ack: Option<u32>,
    pub win: u16,
    pub mss: Option<u16>,
    pub ws: Option<u8>,
    pub sack: bool,
    pub ts: bool,
    pub payload: Vec<u8>,
}

impl Seg {
    pub fn new(src_port: u16, dst_port: u16, ctl: TcpControl, seq: u32, ack: Option<u32>) -> Seg {
        Seg {
            src_ip: PEER_IP,
            dst_ip: OUR_IP,
            src_port,
            dst_port,
            ctl,
            seq,
            ack,
            win: 64000,
            mss: None,
            ws: None,
            sack: false,
            ts: false,
            payload: Vec::new(),
        }
    }
    pub fn frame(&self) -> Vec<u8> {
        self.frame_from(PEER_MAC)
    }
    pub fn frame_from(&self, smac: [u8; 6]) -> Vec<u8> {
        let tcp = TcpRepr {
            src_port: self.src_port,
            dst_port: self.dst_port,
            control: self.ctl,
            seq_number: TcpSeqNumber(self.seq as i32),
            ack_number: self.ack.map(|a| TcpSeqNumber(a as i32)),
            window_len: self.win,
            window_scale: self.ws,
            max_seg_size: self.mss,
            sack_permitted: self.sack,
            sack_ranges: [None; 3],
            timestamp: if self.ts {
                Some(TcpTimestampRepr::new(1234, 0))
            } else {
                None
            },
            payload: &self.payload,
        };
        let ipr = Ipv4Repr {
            src_addr: ip(self.src_ip),
            dst_addr: ip(self.dst_ip),
            next_header: IpProtocol::Tcp,
            payload_len: tcp.buffer_len(),
            hop_limit: 64,
        };
        let mut b = vec![0u8; 14 + 20 + tcp.buffer_len()];
        EthernetRepr {
            src_addr: EthernetAddress(smac),
            dst_addr: EthernetAddress(OUR_MAC),
            ethertype: EthernetProtocol::Ipv4,
        }
        .emit(&mut EthernetFrame::new_unchecked(&mut b[..]));
        let caps = ChecksumCapabilities::default();
        ipr.emit(&mut Ipv4Packet::new_unchecked(&mut b[14..]), &caps);
        tcp.emit(
            &mut TcpPacket::new_unchecked(&mut b[34..]),
            &IpAddress::Ipv4(ip(self.src_ip)),
            &IpAddress::Ipv4(ip(self.dst_ip)),
            &caps,
        );
        b
    }
}

/// A segment the firmware sent, decoded by smoltcp (checksums verified).
#[derive(Clone, Debug, PartialEq)]
pub struct Out {
    pub dst_mac: [u8; 6],
    pub src_ip: u32,
    pub dst_ip: u32,
    pub src_port: u16,
    pub dst_port: u16,
    pub ctl: TcpControl,
    pub seq: u32,
    pub ack: Option<u32>,
    pub win: u16,
    pub mss: Option<u16>,
    pub ws: Option<u8>,
    pub sack: bool,
    pub ts: bool,
    pub payload: Vec<u8>,
}

pub fn parse_tcp(f: &[u8]) -> Option<Out> {
    let eth = EthernetFrame::new_checked(f).ok()?;
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return None;
    }
    let ipp = Ipv4Packet::new_checked(eth.payload()).ok()?;
    let caps = ChecksumCapabilities::default();
    let ipr = Ipv4Repr::parse(&ipp, &caps).expect("bad IPv4 from firmware");
    let tp = TcpPacket::new_checked(ipp.payload()).ok()?;
    let t = TcpRepr::parse(
        &tp,
        &IpAddress::Ipv4(ipr.src_addr),
        &IpAddress::Ipv4(ipr.dst_addr),
        &caps,
    )
    .expect("bad TCP from firmware");
    Some(Out {
        dst_mac: eth.dst_addr().0,
        src_ip: u32::from(ipr.src_addr),
        dst_ip: u32::from(ipr.dst_addr),
        src_port: t.src_port,
        dst_port: t.dst_port,
        ctl: t.control,
        seq: t.seq_number.0 as u32,
        ack: t.ack_number.map(|a| a.0 as u32),
        win: t.window_len,
        mss: t.max_seg_size,
        ws: t.window_scale,
        sack: t.sack_permitted,
        ts: t.timestamp.is_some(),
        payload: t.payload.to_vec(),
    })
}

pub fn sent_tcp(h: &mut MockHal) -> Vec<Out> {
    h.take_sent().iter().filter_map(|f| parse_tcp(f)).collect()
}

// ---- firmware-level helpers ----

use rnic_fw::{Config, Firmware};
use rnic_wire::abi::mailbox::{Command, MpaOptions};

pub type Fw = Firmware<MockHal, 8, 8, 4, 8, 8, 8, 8, 16, 8, 16>;

pub fn new_fw() -> Fw {
    Fw::new(MockHal::new(), Config::default())
}

pub fn cmd(fw: &mut Fw, c: Command) -> (MboxStatus, Vec<u8>) {
    let mut b = [0u8; 1024];
    let n = c.emit(&mut b).unwrap();
    fw.hal.mbox = Some((c.opcode() as u16, b[..n].to_vec()));
    fw.poll_mailbox();
    fw.hal.done.pop().expect("the command was answered")
}

pub fn word(r: &[u8], k: usize) -> u32 {
    u32::from_le_bytes(r[4 * k..4 * k + 4].try_into().unwrap())
}

pub fn make_qp(fw: &mut Fw) -> u32 {
    let (s, r) = cmd(
        fw,
        Command::CreateCq {
            ring: 0x10000,
            entries: 64,
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    let cq = word(&r, 0);
    let (s, r) = cmd(
        fw,
        Command::CreateQp {
            pd: 1,
            send_cqn: cq,
            recv_cqn: cq,
            sq_ring: 0x20000,
            sq_entries: 64,
            rq_ring: 0x30000,
            rq_entries: 64,
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    word(&r, 0)
}

pub fn rx(fw: &mut Fw, f: Vec<u8>) {
    fw.on_exception(ExceptionReason::NoMatch, None, &f);
}

pub fn rx_as(fw: &mut Fw, reason: ExceptionReason, conn: u32, f: Vec<u8>) {
    fw.on_exception(reason, Some(conn), &f);
}

pub fn mpa_opts(revision: u8, crc: bool) -> MpaOptions {
    MpaOptions {
        revision,
        crc,
        markers: false,
    }
}

/// MPA Request/Reply bytes written by hand (independent of rnic_wire::mpa).
pub fn mpa_frame(reply: bool, flags: u8, rev: u8, pd: &[u8]) -> Vec<u8> {
    let mut v = if reply {
        b"MPA ID Rep Frame".to_vec()
    } else {
        b"MPA ID Req Frame".to_vec()
    };
    v.push(flags);
    v.push(rev);
    v.extend_from_slice(&(pd.len() as u16).to_be_bytes());
    v.extend_from_slice(pd);
    v
}

pub const LPORT: u16 = 7174;
pub const PPORT: u16 = 40000;

/// Runs a passive open up to the ConnectRequest event; returns (our ISS, conn_id).
pub fn passive_to_request(fw: &mut Fw, request: &[u8]) -> (u32, u32) {
    passive_to_request_mss(fw, request, 1460)
}

/// [`passive_to_request`] with the peer's SYN carrying MSS `mss`; our
/// SYN-ACK must carry the MSS of our MTU.
pub fn passive_to_request_mss(fw: &mut Fw, request: &[u8], mss: u16) -> (u32, u32) {
    let (s, _) = cmd(
        fw,
        Command::Listen {
            port: LPORT,
            backlog: 4,
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    let mut syn = Seg::new(PPORT, LPORT, TcpControl::Syn, 100, None);
    syn.mss = Some(mss);
    syn.ws = Some(7);
    syn.sack = true;
    syn.ts = true;
    rx(fw, syn.frame());
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out.len(), 1, "one SYN-ACK");
    let sa = &out[0];
    assert_eq!(sa.ctl, TcpControl::Syn);
    assert_eq!(sa.ack, Some(101));
    assert_eq!(sa.ws, Some(7));
    assert_eq!(sa.mss, Some(fw.hal.cfg.mtu - 40));
    assert!(!sa.ts && !sa.sack);
    assert_eq!(sa.dst_mac, PEER_MAC);
    let iss = sa.seq;
    assert!(
        fw.hal.conn(0).is_none(),
        "no context before the handshake completes"
    );
    rx(
        fw,
        Seg::new(PPORT, LPORT, TcpControl::None, 101, Some(iss + 1)).frame(),
    );
    let ctx = fw.hal.conn(0).expect("context written at ESTABLISHED");
    assert_eq!(ctx.mode, rnic_wire::abi::context::ConnMode::Firmware);
    let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, 101, Some(iss + 1));
    d.payload = request.to_vec();
    rx(fw, d.frame());
    let out = sent_tcp(&mut fw.hal);
    assert_eq!(out.last().unwrap().ack, Some(101 + request.len() as u32));
    let ev = fw.hal.events.pop().expect("ConnectRequest");
    assert_eq!(ev.kind, rnic_wire::abi::mailbox::EventKind::ConnectRequest);
    (iss, ev.handle)
}

/// A QP, then a passive open with siw's P2P request (CRC, IRD 1, ORD 1,
/// Write+Read RTR; peer MSS `mss`) accepted onto it with `private_data`.
/// Returns (qpn, our ISS, the request's length, the segments sent since the
/// ConnectRequest: the MPA Reply).
pub fn accept_siw_request(
    fw: &mut Fw,
    mss: u16,
    private_data: &[u8],
) -> (u32, u32, usize, Vec<Out>) {
    let req = mpa_frame(false, 0x50, 2, &[0x80, 0x01, 0xc0, 0x01]);
    accept_request(fw, &req, mss, private_data)
}

/// A QP, then a passive open with the MPA Request `req` (peer MSS `mss`)
/// accepted onto it with `private_data` (IRD 1, ORD 1). Returns as
/// [`accept_siw_request`].
pub fn accept_request(
    fw: &mut Fw,
    req: &[u8],
    mss: u16,
    private_data: &[u8],
) -> (u32, u32, usize, Vec<Out>) {
    let qpn = make_qp(fw);
    let (iss, conn_id) = passive_to_request_mss(fw, req, mss);
    let (s, _) = cmd(
        fw,
        Command::Accept {
            conn_id,
            qpn,
            ird: 1,
            ord: 1,
            private_data,
        },
    );
    assert_eq!(s, MboxStatus::Ok);
    (qpn, iss, req.len(), sent_tcp(&mut fw.hal))
}

/// Passive open with siw's P2P request (CRC, IRD 1, ORD 1, Write+Read RTR),
/// then an FPDU in the segment that acknowledges our Reply: connection 0 in
/// RDMA mode; returns (qpn, rcv_nxt, snd_nxt).
pub fn passive_rdma(fw: &mut Fw) -> (u32, u32, u32) {
    passive_rdma_mss(fw, 1460)
}

/// [`passive_rdma`] with the peer's SYN carrying MSS `mss`.
pub fn passive_rdma_mss(fw: &mut Fw, mss: u16) -> (u32, u32, u32) {
    let (qpn, iss, req_len, out) = accept_siw_request(fw, mss, b"ok");
    assert_eq!(out.len(), 1);
    let reply = mpa_frame(true, 0x50, 2, &[0x80, 0x01, 0x80, 0x01, b'o', b'k']);
    assert_eq!(
        out[0].payload, reply,
        "siw's reply: P2P, IRD 1, ORD 1, Write RTR"
    );
    assert_eq!(out[0].seq, iss + 1);
    // Not in RDMA mode until the Reply is acknowledged.
    assert_eq!(
        fw.hal.conn(0).unwrap().mode,
        rnic_wire::abi::context::ConnMode::Firmware
    );
    let rcv = 101 + req_len as u32;
    let snd = iss + 1 + reply.len() as u32;
    let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, rcv, Some(snd));
    d.payload = SIW_WRITE_RTR.to_vec();
    rx(fw, d.frame());
    // The firmware took the RTR itself (RFC 6581 §3.2) and acknowledged it.
    assert_eq!(
        fw.hal.conn(0).unwrap().mode,
        rnic_wire::abi::context::ConnMode::Rdma
    );
    assert!(fw.hal.injected.is_empty(), "the RTR is not handed on");
    let rcv = rcv + SIW_WRITE_RTR.len() as u32;
    assert_eq!(fw.hal.conn(0).unwrap().rcv_nxt, rcv);
    let out = sent_tcp(&mut fw.hal);
    assert!(
        out.iter()
            .any(|o| o.ack == Some(rcv) && o.payload.is_empty()),
        "the RTR acknowledged: {out:?}"
    );
    (qpn, rcv, snd)
}

/// The first FPDU of `siw-rping-crc-p2p.pcap` (testdata/captures): Linux
/// siw's zero-length RDMA Write RTR (tagged, STag 1, TO 0), CRC on.
pub const SIW_WRITE_RTR: [u8; 20] = [
    0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0xeb, 0xd3, 0x4c, 0x5f,
];

/// Passive open with siw's P2P request (peer MSS `mss`), Accept without
/// private data, then the peer's pure ACK of our Reply (the connection
/// stays in firmware mode: the RTR has not come), then siw's Write RTR
/// alone in a segment, both classified before the switch (exception
/// `FirmwareMode`): connection 0 is in RDMA mode and nothing was handed
/// back to the fast path. Returns (rcv_nxt, snd_nxt).
pub fn accept_then_ack_reply(fw: &mut Fw, mss: u16) -> (u32, u32) {
    let (_, iss, req_len, mut out) = accept_siw_request(fw, mss, b"");
    let reply = out.pop().expect("MPA Reply");
    let rcv = 101 + req_len as u32;
    let snd = iss + 1 + reply.payload.len() as u32;
    rx_as(
        fw,
        ExceptionReason::FirmwareMode,
        0,
        Seg::new(PPORT, LPORT, TcpControl::None, rcv, Some(snd)).frame(),
    );
    assert_eq!(
        fw.hal.conn(0).unwrap().mode,
        rnic_wire::abi::context::ConnMode::Firmware,
        "RDMA mode waits for the RTR"
    );
    let mut d = Seg::new(PPORT, LPORT, TcpControl::Psh, rcv, Some(snd));
    d.payload = SIW_WRITE_RTR.to_vec();
    rx_as(fw, ExceptionReason::FirmwareMode, 0, d.frame());
    assert_eq!(
        fw.hal.conn(0).unwrap().mode,
        rnic_wire::abi::context::ConnMode::Rdma
    );
    assert!(fw.hal.injected.is_empty());
    let rcv = rcv + SIW_WRITE_RTR.len() as u32;
    let out = sent_tcp(&mut fw.hal);
    assert!(out.iter().any(|o| o.ack == Some(rcv)), "RTR acknowledged");
    (rcv, snd)
}
